/* Placeholder: CUDA-C emitter. */
#include "emit.h"
kf_status kf_cuda_emit(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o,
                       kf_buf *out, kf_linemap *linemap, kf_diags *diags)
{
    kf_diag_error(diags, ((kf_loc){m->file, 1, 1}), "CUDA-C emitter not built yet");
    return KF_ERR_SOURCE;
}
