/* Placeholder: semantic analysis (ir/sema.c) lands with the front end. */
#include "kforge.h"
kf_status kf_sema_check(kf_pass_ctx *cx, kf_node *module, const kf_compile_opts *opts)
{
    kf_diag_error(cx->diags, ((kf_loc){cx->file, 1, 1}), "sema not built yet");
    return KF_ERR_SOURCE;
}
