/* kf_emit (include/kforge.h): the text a module's kernels become on each
 * path (kforge's PTX, CUDA-C for NVRTC, the core IR), or the PTX linked
 * into a cubin by nvJitLink: what `kforge emit` prints, for library users.
 * Emission problems (a feature the arch lacks) are diagnostics; they come
 * back in err, the first as the message with its location, all rendered
 * in err->log. */
#include "../emit/emit.h"
#include "../runtime/nvjitlink.h"

#include <string.h>

/* Puts the diagnostics of a failed emission into err. */
static kf_status emit_error(const kf_module *m, const kf_diags *d, kf_status st, kf_error *err)
{
    if (!d->items.len) return kf_error_set(err, st == KF_OK ? KF_ERR_NOMEM : st, "emission failed");
    const kf_diag *first = &d->items.data[0];
    kf_error_set_at(err, st, first->loc, "%s:%u:%u: error: %s", first->loc.file ? first->loc.file : m->file,
                    first->loc.line, first->loc.col, first->msg);
    kf_buf log = {0};
    kf_diags_render(&log, d, m->source, m->source_len);
    if (err && !log.oom) {
        free(err->log);
        err->log = kf_buf_take(&log);
    }
    kf_buf_free(&log);
    return st;
}

static kf_status emit_text(const kf_module *m, const kf_kernel *k, const kf_emit_options *o, kf_buf *out,
                           kf_error *err)
{
    if (o->target == KF_TARGET_IR) {
        for (uint32_t i = 0; i < m->nkernels; i++) {
            if (k && k != &m->kernels[i]) continue;
            if (out->len) kf_buf_puts(out, "\n");
            kf_ir_print(out, &m->kernels[i]);
        }
        return KF_OK;
    }
    kf_emit_opts eo = {o->arch ? o->arch : 90, o->lineinfo, o->pdl_trigger};
    kf_diags d = {0};
    kf_status st = o->target == KF_TARGET_CUDA ? kf_cuda_emit(m, k, &eo, out, NULL, &d)
                                               : kf_ptx_emit(m, k, &eo, out, NULL, &d);
    if (st != KF_OK) emit_error(m, &d, st, err);
    kf_diags_free(&d);
    return st;
}

kf_status kf_emit(const kf_module *m, const kf_kernel *k, const kf_emit_options *o, void **out, size_t *len,
                  kf_error *err)
{
    static const kf_emit_options ptx90 = {KF_TARGET_PTX, 90, false, false};
    KF_NEED(out, err, "out (where the text goes)");
    KF_NEED(len, err, "len");
    *out = NULL;
    *len = 0;
    KF_NEED(m, err, "the module");
    if (!o) o = &ptx90;
    if (o->target > KF_TARGET_CUBIN) return kf_error_set(err, KF_ERR_USAGE, "unknown emit target %d", (int)o->target);
    if (o->arch && o->arch != 80 && o->arch != 86 && o->arch != 89 && o->arch != 90)
        return kf_error_set(err, KF_ERR_USAGE, "unsupported arch sm_%u: expected 80, 86, 89 or 90", o->arch);
    if (m->diags.nerrors)
        return kf_error_set(err, KF_ERR_SOURCE, "%s: the module has %u error%s (kf_module_diagnostics): nothing to emit",
                            m->file, m->diags.nerrors, m->diags.nerrors == 1 ? "" : "s");
    if (k && kf_module_check_kernel(m, k, "kf_emit", err) != KF_OK) return KF_ERR_USAGE;
    if (m->nkernels == 0)
        return kf_error_set_at(err, KF_ERR_SOURCE, (kf_loc){m->file, 1, 1},
                               "%s:1:1: error: no kernel to emit: the module declares no `kernel`", m->file);
    kf_emit_options text = *o;
    if (o->target == KF_TARGET_CUBIN) text.target = KF_TARGET_PTX;
    kf_buf b = {0};
    kf_status st = emit_text(m, k, &text, &b, err);
    if (st == KF_OK && b.oom) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory emitting %s", m->file);
    if (st == KF_OK && o->target == KF_TARGET_CUBIN) {
        st = kf_nvjitlink_ptx(b.data, o->arch ? o->arch : 90, o->lineinfo, out, len, err);
        if (st == KF_ERR_SOURCE) st = kf_error_restatus(err, KF_ERR_DEVICE);   /* emitted PTX: as emit_and_build's */
    } else if (st == KF_OK) {
        *len = b.len;
        *out = kf_buf_take(&b);
        if (!*out) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    }
    kf_buf_free(&b);
    return st;
}
