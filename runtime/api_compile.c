/* The compiler driver: runs the passes in order and owns the result.
 *
 *     parse (grammar/parser.y)  -> AST
 *     sema  (ir/sema.c)         -> typed AST, constants folded, schedules checked
 *     lower (ir/lower.c)        -> core IR per kernel, linked
 *     opt   (ir/opt.c)          -> the same IR, optimised (not at -O0), linked again
 *     opt_exact (ir/opt_exact.c) -> float operations on constants replaced by their
 *                                   exact constants (every level), linked again
 *
 * It sits above grammar/ and ir/ (DESIGN.md's arrows: grammar -> ir -> ...):
 * the parser builds ir's AST, ir's passes never call back into grammar/,
 * and only this file knows both. */
#include "../grammar/parse.h"
#include "../ir/passes.h"

#include <stdlib.h>
#include <string.h>

/* Keeps the options with the module: the runtime's cache keys builds on
 * (file, source, options) without emitting code again. */
static bool copy_opts(kf_module *m, const kf_compile_opts *opts)
{
    if (opts) m->opts.opt = opts->opt;
    if (!opts || !opts->ndefines) return true;
    kf_define *d = kf_arena_calloc(&m->arena, opts->ndefines, sizeof *d);
    if (!d) return false;
    for (uint32_t i = 0; i < opts->ndefines; i++) {
        d[i].name = kf_arena_strdup(&m->arena, opts->defines[i].name ? opts->defines[i].name : "");
        d[i].value = kf_arena_strdup(&m->arena, opts->defines[i].value ? opts->defines[i].value : "");
        if (!d[i].name || !d[i].value) return false;
    }
    m->opts.defines = d;
    m->opts.ndefines = opts->ndefines;
    return true;
}

static kf_status run_passes(const char *file, const char *source, size_t len,
                            const kf_compile_opts *opts, kf_module **out)
{
    static const kf_compile_opts none = {0};
    kf_module *m = calloc(1, sizeof *m);
    *out = m;
    if (!m) return KF_ERR_NOMEM;
    kf_arena_init(&m->arena);
    m->file = kf_arena_strdup(&m->arena, file ? file : "<input>");
    bool no_source = !source && len;   /* a caller's slip: a diagnostic, not a crash */
    if (!source) len = 0;
    m->source = kf_arena_strndup(&m->arena, source ? source : "", len);
    m->source_len = len;
    if (!m->file || !m->source) return KF_ERR_NOMEM;
    if (no_source) {
        kf_diag_error(&m->diags, ((kf_loc){m->file, 1, 1}), "kf_compile was given no source (NULL) of nonzero length");
        return KF_ERR_USAGE;
    }
    if (opts && opts->ndefines && !opts->defines) {
        kf_diag_error(&m->diags, ((kf_loc){m->file, 1, 1}), "kf_compile: opts.defines is NULL with opts.ndefines %u",
                      opts->ndefines);
        return KF_ERR_USAGE;
    }
    if (opts && (unsigned)opts->opt > KF_OPT_O1) {
        kf_diag_error(&m->diags, ((kf_loc){m->file, 1, 1}),
                      "kf_compile: opts.opt is %d, not a kf_opt_level (KF_OPT_DEFAULT, KF_OPT_O0 or KF_OPT_O1)",
                      (int)opts->opt);
        return KF_ERR_USAGE;
    }
    if (!copy_opts(m, opts)) return KF_ERR_NOMEM;

    kf_pass_ctx cx = {&m->arena, &m->diags, m->file, m->source, len};
    m->ast = kf_parse(&cx);
    if (!m->ast || m->diags.nerrors) return KF_ERR_SOURCE;
    if (kf_sema_check(&cx, m->ast, opts ? opts : &none) != KF_OK || m->diags.nerrors)
        return m->diags.nerrors ? KF_ERR_SOURCE : KF_ERR_NOMEM;
    kf_status st = kf_lower(&cx, m->ast, &m->kernels, &m->nkernels);
    if (st == KF_OK && m->diags.nerrors) st = KF_ERR_SOURCE;
    for (uint32_t i = 0; st == KF_OK && i < m->nkernels; i++)
        if (!kf_ir_link(&m->kernels[i])) kf_unreachable("lowering produced unbalanced control markers");
    bool optimise = !opts || opts->opt != KF_OPT_O0;
    for (uint32_t i = 0; st == KF_OK && optimise && i < m->nkernels; i++) st = kf_opt(&cx, &m->kernels[i]);
    for (uint32_t i = 0; st == KF_OK && i < m->nkernels; i++) st = kf_opt_exact(&cx, &m->kernels[i]);
    return st;
}

/* Renders the diagnostics once, into the arena (kf_module_diagnostics). */
static kf_status render(kf_module *m)
{
    if (!m->diags.items.len) return KF_OK;
    kf_buf b = {0};
    kf_diags_render(&b, &m->diags, m->source, m->source_len);
    m->rendered = b.oom ? NULL : kf_arena_strndup(&m->arena, b.data ? b.data : "", b.len);
    kf_buf_free(&b);
    return m->rendered ? KF_OK : KF_ERR_NOMEM;
}

kf_status kf_compile(const char *file, const char *source, size_t len,
                     const kf_compile_opts *opts, kf_module **out)
{
    if (!out) return KF_ERR_USAGE;   /* (nowhere to put the module or its diagnostics) */
    kf_status st = run_passes(file, source, len, opts, out);
    if (*out && st != KF_ERR_NOMEM && render(*out) != KF_OK) st = KF_ERR_NOMEM;
    return st;
}

void kf_module_free(kf_module *m)
{
    if (!m) return;
    kf_diags_free(&m->diags);
    kf_arena_free(&m->arena);
    free(m);
}

const kf_ir_kernel *kf_module_kernel(const kf_module *m, const char *name)
{
    if (!name) return m->nkernels == 1 ? &m->kernels[0] : NULL;
    for (uint32_t i = 0; i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, name) == 0) return &m->kernels[i];
    return NULL;
}

/* Most bytes of a .kf source file kf_compile_file reads. */
#define SOURCE_MAX (UINT64_C(64) << 20)

kf_status kf_compile_file(const char *path, const kf_compile_opts *opts, kf_module **out, kf_error *err)
{
    char *src = NULL;
    size_t len = 0;
    KF_NEED(out, err, "out (where the module goes)");
    *out = NULL;
    KF_NEED(path, err, "the path");
    kf_status st = kf_read_file_max(path, SOURCE_MAX, &src, &len, err);
    if (st != KF_OK) return st;
    st = kf_compile(path, src, len, opts, out);
    free(src);
    if (st == KF_ERR_NOMEM) return kf_error_set(err, st, "out of memory compiling %s", path);
    if (st == KF_ERR_SOURCE) {
        const kf_diag *d = (*out)->diags.items.len ? &(*out)->diags.items.data[0] : NULL;
        kf_loc at = d ? d->loc : (kf_loc){(*out)->file, 0, 0};
        kf_error_set_at(err, st, at, "%s:%u:%u: error: %s", at.file ? at.file : path, at.line, at.col,
                        d ? d->msg : "the module has errors");
    }
    return st;
}

/* ---- raw kernels' parameter lists -------------------------------------------- */
#define PARAMS_PREFIX "kernel params("

/* The parameters of a kernel declared as `kernel params(TEXT) {}`, so that
 * a raw kernel's list reads exactly as a .kf kernel's. */
static kf_status params_module(const char *text, kf_module **m, kf_error *err)
{
    kf_buf src = {0};
    kf_buf_printf(&src, PARAMS_PREFIX "%s) {}\n", text);
    kf_compile_opts o = {.opt = KF_OPT_O0};
    kf_status st = src.oom ? KF_ERR_NOMEM : kf_compile("--params", src.data, src.len, &o, m);
    kf_buf_free(&src);
    if (st == KF_ERR_SOURCE) {
        const kf_diag *d = &(*m)->diags.items.data[0];
        uint32_t col = d->loc.line == 1 && d->loc.col > strlen(PARAMS_PREFIX) ? d->loc.col - (uint32_t)strlen(PARAMS_PREFIX)
                                                                              : 1;
        return kf_error_set(err, KF_ERR_USAGE, "parameter list '%s', column %u: %s", text, col, d->msg);
    }
    if (st != KF_OK) return kf_error_set(err, st, "out of memory reading a parameter list");
    return KF_OK;
}

kf_status kf_params_parse(const char *text, kf_param **params, uint32_t *n, kf_error *err)
{
    kf_module *m = NULL;
    *params = NULL;
    *n = 0;
    kf_status st = params_module(text, &m, err);
    if (st != KF_OK) {
        kf_module_free(m);
        return st;
    }
    const kf_ir_kernel *k = &m->kernels[0];
    size_t bytes = (k->nparams ? k->nparams : 1) * sizeof(kf_param);
    for (uint32_t i = 0; i < k->nparams; i++) bytes += strlen(k->params[i].name) + 1;
    kf_param *out = calloc(1, bytes);
    if (!out) {
        kf_module_free(m);
        return kf_error_set(err, KF_ERR_NOMEM, "out of memory reading a parameter list");
    }
    char *names = (char *)(out + (k->nparams ? k->nparams : 1));
    for (uint32_t i = 0; i < k->nparams; i++) {
        out[i] = k->params[i];
        out[i].loc = (kf_loc){0};
        out[i].align = 0;
        out[i].name = strcpy(names, k->params[i].name);
        names += strlen(names) + 1;
    }
    *params = out;
    *n = k->nparams;
    kf_module_free(m);
    return KF_OK;
}
