/* The CUDA device (being built): until the driver backend lands, opening a
 * CUDA or PTX device reports that clearly. */
#include "rt_impl.h"

kf_status kf_cuda_open(kf_device *dev, int ordinal, kf_error *err)
{
    return kf_error_set(err, KF_ERR_DEVICE, "the CUDA backend is not built yet");
}

kf_status kf_cuda_device_count(int *count, int *driver_version, kf_error *err)
{
    *count = 0;
    *driver_version = 0;
    return kf_error_set(err, KF_ERR_DEVICE, "the CUDA backend is not built yet");
}
