/* Placeholder: runtime. */
#include "device.h"
kf_status kf_device_open(kf_backend backend, int ordinal, kf_device **out, kf_error *err)
{
    *out = NULL;
    return kf_error_set(err, KF_ERR_DEVICE, "runtime not built yet");
}
