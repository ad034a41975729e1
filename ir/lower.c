/* Placeholder: lowering to core IR. */
#include "kforge.h"
kf_status kf_lower(kf_pass_ctx *cx, kf_node *module, kf_ir_kernel **kernels, uint32_t *nkernels)
{
    *kernels = NULL;
    *nkernels = 0;
    kf_diag_error(cx->diags, ((kf_loc){cx->file, 1, 1}), "lowering not built yet");
    return KF_ERR_SOURCE;
}
