/* Placeholder: argument values and host-side schedule evaluation. */
#include "kforge.h"
kf_status kf_value_parse(const char *text, kf_type t, const char *param, kf_value *out, kf_error *err)
{
    return kf_error_set(err, KF_ERR_USAGE, "value parsing not built yet");
}
kf_status kf_schedule_grid(const kf_ir_kernel *k, const kf_value *args, uint64_t count,
                           uint32_t grid[3], kf_error *err)
{
    return kf_error_set(err, KF_ERR_USAGE, "schedules not built yet");
}
