/* libFuzzer target for the compiler half: any byte string goes through
 * kf_compile (lexer, parser, sema, lowering), and a module that compiles
 * goes through the IR printer and both emitters (PTX and CUDA-C, the whole
 * module and each kernel). Nothing may crash, hang, leak, read out of
 * bounds or hit undefined behaviour, and the results must keep their
 * contracts:
 *   - a failed compile has at least one error, and every diagnostic points
 *     inside the input (line 1..lines, col 1..len+1) and renders;
 *   - a module that compiles has well-formed IR (kf_ir_link held) and both
 *     emitters either succeed with non-empty text or report an error
 *     diagnostic; emission is deterministic (checked on every 16th input).
 *
 * Options come from the input so that the corpus stays plain .kf files: a
 * first line `//-D NAME=VALUE ...` passes up to 8 defines (as `kforge -D`),
 * and the input's length picks the arch (80/86/89/90) and -g.
 *
 * Built by -DKF_FUZZ=ON (tests/fuzz/CMakeLists.txt); seeds in
 * tests/fuzz/corpus/fuzz_compile, tokens in tests/fuzz/kf.dict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "emit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_DEFINES = 8 };

typedef struct {
    kf_define defs[MAX_DEFINES];
    char text[256];
} fuzz_defines;

/* Reads `//-D A=1 B=2` from the first line into d; returns the count. */
static uint32_t read_defines(const uint8_t *data, size_t size, fuzz_defines *d)
{
    if (size < 4 || memcmp(data, "//-D", 4) != 0) return 0;
    size_t n = 4;
    while (n < size && n - 4 < sizeof d->text - 1 && data[n] != '\n' && data[n] != 0) n++;
    memcpy(d->text, data + 4, n - 4);
    d->text[n - 4] = 0;
    uint32_t count = 0;
    for (char *save = NULL, *t = strtok_r(d->text, " \t\r", &save); t && count < MAX_DEFINES;
         t = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) continue;
        *eq = 0;
        d->defs[count++] = (kf_define){t, eq + 1};
    }
    return count;
}

/* Diagnostics point inside the input, or at "<command line>" (line 0) for
 * a bad define. */
static void check_diags(const kf_module *m, const uint8_t *data, size_t size)
{
    uint32_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    for (size_t i = 0; i < m->diags.items.len; i++) {
        kf_loc l = m->diags.items.data[i].loc;
        if (l.line == 0 && m->opts.ndefines && l.file && strcmp(l.file, "<command line>") == 0) continue;
        if (l.line < 1 || l.line > lines || l.col < 1 || l.col > size + 1) abort();
        if (!m->diags.items.data[i].msg) abort();
    }
    kf_buf out = {0};
    kf_diags_render(&out, &m->diags, m->source, m->source_len);
    kf_buf_free(&out);
}

typedef kf_status (*emit_fn)(const kf_module *, const kf_ir_kernel *, const kf_emit_opts *, kf_buf *,
                             kf_linemap *, kf_diags *);

/* Emits with one emitter; checks the result against the contract and, when
 * `twice`, that a second emission gives the same bytes. */
static void emit_one(emit_fn fn, const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o, bool twice)
{
    kf_buf out = {0};
    kf_linemap lm = {0};
    kf_diags diags = {0};
    kf_status st = fn(m, k, o, &out, &lm, &diags);
    if (st == KF_OK && (!out.len || diags.nerrors)) abort();
    if (st == KF_ERR_SOURCE && !diags.nerrors) abort();
    if (st == KF_OK && twice) {
        kf_buf again = {0};
        kf_diags d2 = {0};
        if (fn(m, k, o, &again, NULL, &d2) != KF_OK || again.len != out.len || memcmp(again.data, out.data, out.len))
            abort();
        kf_buf_free(&again);
        kf_diags_free(&d2);
    }
    kf_buf_free(&out);
    kf_linemap_free(&lm);
    kf_diags_free(&diags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_defines d;
    /* a length bit picks the optimisation level, so the optimiser is fuzzed
     * as well as the IR as lowered */
    kf_compile_opts opts = {d.defs, read_defines(data, size, &d), (size >> 7) & 1 ? KF_OPT_O0 : KF_OPT_DEFAULT};
    kf_module *m = NULL;
    kf_status st = kf_compile("fuzz.kf", (const char *)data, size, &opts, &m);
    if (!m) return 0;   /* out of memory */
    check_diags(m, data, size);
    if (st == KF_ERR_SOURCE && !m->diags.nerrors) abort();
    if (st == KF_OK) {
        static const uint32_t arch[4] = {80, 86, 89, 90};
        kf_emit_opts o = {arch[size % 4], (size >> 2) & 1, false};
        bool twice = (size >> 3) % 16 == 0;   /* one length in 16, whatever the options */
        kf_buf ir = {0};
        for (uint32_t i = 0; i < m->nkernels; i++) {
            kf_ir_print(&ir, &m->kernels[i]);
            kf_buf_reset(&ir);
            if (m->nkernels > 1) {
                emit_one(kf_ptx_emit, m, &m->kernels[i], &o, false);
                emit_one(kf_cuda_emit, m, &m->kernels[i], &o, false);
            }
        }
        kf_buf_free(&ir);
        if (m->ast) {
            kf_buf dump = {0};
            kf_ast_dump(&dump, m->ast, 0);
            kf_buf_free(&dump);
        }
        emit_one(kf_ptx_emit, m, NULL, &o, twice);
        emit_one(kf_cuda_emit, m, NULL, &o, twice);
    }
    kf_module_free(m);
    return 0;
}
