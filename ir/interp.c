/* Placeholder: CPU interpreter. */
#include "interp.h"
kf_status kf_interp_run(const kf_ir_kernel *k, const kf_interp_arg *args, uint32_t nargs,
                        const kf_interp_launch *launch, kf_interp_stats *stats, kf_error *err)
{
    return kf_error_set(err, KF_ERR_RUNTIME, "interpreter not built yet");
}
