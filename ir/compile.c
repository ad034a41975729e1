/* The compiler driver: runs the passes in order and owns the result.
 *
 *     parse (grammar/parser.y)  -> AST
 *     sema  (ir/sema.c)         -> typed AST, constants folded, schedules checked
 *     lower (ir/lower.c)        -> core IR per kernel, linked
 *     opt   (ir/opt.c)          -> the same IR, optimised (not at -O0), linked again
 */
#include "kforge.h"

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

kf_status kf_compile(const char *file, const char *source, size_t len,
                     const kf_compile_opts *opts, kf_module **out)
{
    static const kf_compile_opts none = {0};
    kf_module *m = calloc(1, sizeof *m);
    *out = m;
    if (!m) return KF_ERR_NOMEM;
    kf_arena_init(&m->arena);
    m->file = kf_arena_strdup(&m->arena, file ? file : "<input>");
    m->source = kf_arena_strndup(&m->arena, source, len);
    m->source_len = len;
    if (!m->file || !m->source) return KF_ERR_NOMEM;
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
