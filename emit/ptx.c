/* Placeholder: PTX emitter. */
#include "emit.h"
#include <stdlib.h>
kf_status kf_ptx_emit(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o,
                      kf_buf *out, kf_linemap *linemap, kf_diags *diags)
{
    kf_diag_error(diags, ((kf_loc){m->file, 1, 1}), "PTX emitter not built yet");
    return KF_ERR_SOURCE;
}
void kf_linemap_free(kf_linemap *lm) { KF_VEC_FREE(&lm->lines); }
