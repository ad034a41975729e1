/* ptxas over emitted PTX (label ptxas; CI has the CUDA toolkit, so a missing
 * ptxas is a failure with a clear message, never a skip):
 *   - the hand-built all-ops kernel (every IR op on every type) assembles
 *     with no warning for sm_80, sm_86, sm_89 and sm_90, with and without -g;
 *   - every the .kf files of kernels/, kernels/features/ and tests/ptx_cases/
 *     compiles, emits and assembles with no warning for sm_80 and sm_90
 *     (every other sm_90 module with pdl_trigger's launch_dependents),
 *     and kernels/gemm.kf's kernels with no stack frame and no spills;
 *   - none of that PTX has an instruction pattern ptxas miscompiles
 *     (emit/ptx_hazards.h);
 *   - kf_ptxas_run maps a ptxas error back to the .kf line through the line
 *     map and parses the -v statistics;
 *   - with cuobjdump (optional: skipped without it), the SASS of packed half
 *     math has the packed instructions (HADD2, HMUL2, HFMA2, HMNMX2 and
 *     their .BF16_V2 forms) and a separate * and + stay two instructions;
 *     and the tensor-core builtins are HMMA/IMMA, LDSM and LDGSTS; the
 *     tensor-core GEMV's weights are 16-byte loads feeding HMMA/IMMA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <unistd.h>

#include "ptx_all_ops.h"
#include "ptx_hazards.h"
#include "ptx_kf_files.h"

static irb AO;

/* Assembles ptx; fails the test on any error or warning, printing the log,
 * and on any instruction pattern ptxas miscompiles (emit/ptx_hazards.h). */
static void assemble_clean(const char *what, const char *ptx, uint32_t arch, const kf_linemap *lm,
                           kf_ptxas_result *res)
{
    char why[320];
    if (ptx_hazard(ptx, why, sizeof why)) fail_msg("%s sm_%u: %s", what, arch, why);
    kf_diags d = {0};
    kf_error err = {0};
    kf_status st = kf_ptxas_run(ptx, arch, lm, what, res, &d, &err);
    if (st == KF_ERR_DEVICE) fail_msg("%s (CI has the CUDA toolkit: ptxas is required)", err.msg);
    if (st != KF_OK || res->nwarnings) {
        kf_buf o = {0};
        kf_diags_render(&o, &d, NULL, 0);
        print_message("%s sm_%u: status %d, %u warnings\n%s\n%s\n", what, arch, st, res->nwarnings,
                      o.data ? o.data : "", res->log ? res->log : "");
        kf_buf_free(&o);
    }
    assert_int_equal(st, KF_OK);
    assert_int_equal(res->nwarnings, 0);
    kf_diags_free(&d);
    kf_error_clear(&err);
}

static void all_ops_for(uint32_t arch, bool g)
{
    allops_build(&AO);
    kf_diags d = {0};
    kf_linemap lm = {0};
    char *ptx = irb_emit(&AO, arch, g, &lm, &d);
    assert_non_null(ptx);
    kf_ptxas_result res;
    assemble_clean("all_ops", ptx, arch, &lm, &res);
    assert_int_equal(res.kernels.len, 1);
    assert_string_equal(res.kernels.data[0].kernel, "all_ops");
    assert_true(res.kernels.data[0].registers > 0);
    assert_true(res.kernels.data[0].shared_bytes >= 1024 + 32 * 16 + 8);
    kf_ptxas_result_free(&res);
    kf_linemap_free(&lm);
    free(ptx);
    kf_diags_free(&d);
}

static void test_all_ops_assemble_sm80(void **st) { all_ops_for(80, false); }
static void test_all_ops_assemble_sm86(void **st) { all_ops_for(86, false); }
static void test_all_ops_assemble_sm89(void **st) { all_ops_for(89, false); }
static void test_all_ops_assemble_sm90(void **st) { all_ops_for(90, false); }
static void test_all_ops_assemble_with_lineinfo(void **st) { all_ops_for(90, true); }

/* Issue 11: the library's gemm keeps its accumulators and fragments in
 * registers with its default knobs, on sm_80 and sm_90: no kernel of
 * kernels/gemm.kf has a stack frame or spills (a spill in its K loop costs
 * more than any knob gains). */
static bool no_spills_required(const kf_file_entry *f)
{
    return !strcmp(f->stem, "gemm") && strstr(f->path, "/kernels/gemm.kf") != NULL;
}

static void assert_no_spills(const char *what, uint32_t arch, const kf_ptxas_result *res)
{
    for (size_t i = 0; i < res->kernels.len; i++) {
        const kf_ptxas_kernel_stats *k = &res->kernels.data[i];
        if (k->spill_stores || k->spill_loads || k->stack_bytes)
            fail_msg("%s sm_%u: %s has %u bytes of stack, %u of spill stores, %u of spill loads (%u registers)", what,
                     arch, k->kernel, k->stack_bytes, k->spill_stores, k->spill_loads, k->registers);
        assert_true(k->registers > 0 && k->registers <= 255);
    }
}

/* m's PTX for arch (line info on; with pdl_trigger), its line map checked
 * (one entry per PTX line), assembled clean into res. */
static void emit_assembled(const kf_module *m, const char *what, uint32_t arch, bool pdl_trigger, kf_ptxas_result *res)
{
    kf_emit_opts o = {arch, true, pdl_trigger};
    kf_buf out = {0};
    kf_linemap lm = {0};
    kf_diags d = {0};
    kf_status st = kf_ptx_emit(m, NULL, &o, &out, &lm, &d);
    if (st != KF_OK) {
        kf_buf r = {0};
        kf_diags_render(&r, &d, m->source, m->source_len);
        print_message("%s: PTX emit for sm_%u failed:\n%s\n", what, arch, r.data ? r.data : "");
        kf_buf_free(&r);
    }
    assert_int_equal(st, KF_OK);
    size_t nl = 0;   /* the line map has one entry per PTX line */
    for (size_t i = 0; i < out.len; i++) nl += out.data[i] == '\n';
    assert_int_equal(nl, lm.lines.len);
    assemble_clean(what, out.data, arch, &lm, res);
    kf_linemap_free(&lm);
    kf_buf_free(&out);
    kf_diags_free(&d);
}

static void emit_and_assemble(const kf_file_entry *f, uint32_t arch, bool pdl_trigger)
{
    kf_module *m = kf_compile_entry_ok(f);
    kf_ptxas_result res;
    emit_assembled(m, f->stem, arch, pdl_trigger, &res);
    assert_int_equal(res.kernels.len, m->nkernels);
    if (no_spills_required(f)) assert_no_spills(f->stem, arch, &res);
    kf_ptxas_result_free(&res);
    kf_module_free(m);
}

static void test_kf_kernels_assemble_sm80_and_sm90(void **st)
{
    static kf_file_entry files[512];
    size_t n = kf_list_dir("kernels", files, 0, 512);
    size_t lib = n;
    n = kf_list_dir("kernels/features", files, n, 512);
    n = kf_list_dir("tests/ptx_cases", files, n, 512);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/kernels", KF_SOURCE_DIR);
    DIR *kd = opendir(dir);
    if (kd) {   /* once the library exists it must hold kernels */
        closedir(kd);
        assert_true(lib > 0);
    }
    for (size_t i = 0; i < n; i++) {   /* every other sm_90 module also with griddepcontrol.launch_dependents */
        emit_and_assemble(&files[i], 80, true);
        emit_and_assemble(&files[i], 90, i % 2 == 1);
    }
    print_message("assembled %zu .kf files for sm_80 and sm_90\n", n);
}

/* @schedule(min_blocks = N) is a register budget that ptxas keeps: in
 * kernels/features/schedule.kf every kernel that gives it has registers x
 * block x N <= 65536 (sm_80 and sm_90), and row_cross_min_blocks (N = 12)
 * has no more registers than row_cross, the same body without it. */
static void test_min_blocks_bounds_registers(void **st)
{
    kf_file_entry f;
    snprintf(f.path, sizeof f.path, "%s/kernels/features/schedule.kf", KF_SOURCE_DIR);
    snprintf(f.stem, sizeof f.stem, "schedule");
    kf_module *m = kf_compile_entry_ok(&f);
    for (uint32_t arch = 80; arch <= 90; arch += 10) {
        kf_ptxas_result res;
        emit_assembled(m, "schedule", arch, false, &res);
        uint32_t capped = 0, plain = 0, budgeted = 0;
        for (size_t i = 0; i < res.kernels.len; i++) {
            const kf_ptxas_kernel_stats *ks = &res.kernels.data[i];
            for (uint32_t j = 0; j < m->nkernels; j++) {
                const kf_schedule *sc = &m->kernels[j].sched;
                if (strcmp(m->kernels[j].name, ks->kernel) != 0 || !sc->min_blocks) continue;
                uint64_t threads = (uint64_t)sc->block[0] * sc->block[1] * sc->block[2];
                if ((uint64_t)ks->registers * threads * sc->min_blocks > 65536)
                    fail_msg("sm_%u: %s has %u registers: %llu threads x min_blocks %u do not fit 65536", arch, ks->kernel,
                             ks->registers, (unsigned long long)threads, sc->min_blocks);
                budgeted++;
            }
            if (!strcmp(ks->kernel, "row_cross_min_blocks")) capped = ks->registers;
            if (!strcmp(ks->kernel, "row_cross")) plain = ks->registers;
        }
        print_message("sm_%u: row_cross %u registers, row_cross_min_blocks %u\n", arch, plain, capped);
        assert_int_equal(budgeted, 2);
        assert_true(capped > 0 && capped <= plain);
        kf_ptxas_result_free(&res);
    }
    kf_module_free(m);
}

/* ptxas rejects any non-ASCII byte, even in a comment, and a trailing
 * backslash continues a comment: source text copied into comments must not
 * break the module. */
static void test_source_comments_with_utf8_and_backslash_assemble(void **st)
{
    static irb b;
    irb_init(&b, "k", "kernel k(y: &mut [f32]) {\n    y[0] = 1.0; // caf\xc3\xa9 \xe2\x9c\x93 \\\n}\n");
    b.m.file = "d\xc3\xa9j\xc3\xa0.kf";
    b.line = 2;
    kf_val y = irb_param(&b, "y", irb_buf(KF_S_F32, 1, true));
    kf_val z = irb_const(&b, KF_S_U32, 0), one = irb_const(&b, KF_S_F32, 0x3F800000);
    irb_ins(&b, KF_IR_STORE, 0, kf_type_scalar(KF_S_F32), 0, y, z, one, 0);
    kf_diags d = {0};
    kf_linemap lm = {0};
    char *ptx = irb_emit(&b, 90, true, &lm, &d);
    assert_non_null(ptx);
    for (const char *p = ptx; *p; p++) assert_true((unsigned char)*p < 0x80);
    kf_ptxas_result res;
    assemble_clean("utf8", ptx, 90, &lm, &res);
    kf_ptxas_result_free(&res);
    kf_linemap_free(&lm);
    free(ptx);
    kf_diags_free(&d);
}

static void test_ptxas_error_maps_to_kf_line(void **st)
{
    const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                      "\t.reg .b32 %r<2>;\n\tbogus.u32 %r1, 1;\n\tret;\n}\n";
    kf_linemap lm = {0};
    for (uint32_t i = 0; i < 9; i++) assert_true(KF_VEC_PUSH(&lm.lines, ((kf_loc){"x.kf", i == 6 ? 42 : 0, 7})));
    kf_diags d = {0};
    kf_error err = {0};
    kf_ptxas_result res;
    kf_status s = kf_ptxas_run(ptx, 90, &lm, "x.kf", &res, &d, &err);
    if (s == KF_ERR_DEVICE) fail_msg("%s", err.msg);
    assert_int_equal(s, KF_ERR_SOURCE);
    assert_true(d.nerrors >= 1);
    assert_string_equal(d.items.data[0].loc.file, "x.kf");
    assert_int_equal(d.items.data[0].loc.line, 42);
    assert_int_equal(d.items.data[0].loc.col, 7);
    assert_non_null(strstr(d.items.data[0].msg, "PTX line 7"));
    kf_ptxas_result_free(&res);
    kf_diags_free(&d);
    kf_linemap_free(&lm);
}

static void test_ptxas_error_without_map_names_ptx_line(void **st)
{
    const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tbogus;\n\tret;\n}\n";
    kf_diags d = {0};
    kf_error err = {0};
    kf_ptxas_result res;
    assert_int_equal(kf_ptxas_run(ptx, 90, NULL, "y.kf", &res, &d, &err), KF_ERR_SOURCE);
    assert_true(d.nerrors >= 1);
    assert_string_equal(d.items.data[0].loc.file, "y.kf");
    assert_non_null(strstr(d.items.data[0].msg, "PTX line 6"));
    kf_ptxas_result_free(&res);
    kf_diags_free(&d);
}

static void test_ptxas_stats_parsed_per_kernel(void **st)
{
    const char *ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                      ".visible .entry a(.param .u64 p)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .f32 %f<2>;\n"
                      "\t.shared .align 4 .b8 s[512];\n\tld.param.u64 %rd1, [p];\n\tld.shared.f32 %f1, [s+4];\n"
                      "\tst.global.f32 [%rd1], %f1;\n\tret;\n}\n"
                      ".visible .entry b()\n{\n\tret;\n}\n";
    kf_diags d = {0};
    kf_error err = {0};
    kf_ptxas_result res;
    assert_int_equal(kf_ptxas_run(ptx, 80, NULL, "z.kf", &res, &d, &err), KF_OK);
    assert_int_equal(res.kernels.len, 2);   /* ptxas reports kernels in its own order */
    const kf_ptxas_kernel_stats *a = &res.kernels.data[0], *b = &res.kernels.data[1];
    if (!strcmp(a->kernel, "b")) a = &res.kernels.data[1], b = &res.kernels.data[0];
    assert_string_equal(a->kernel, "a");
    assert_int_equal(a->shared_bytes, 512);
    assert_true(a->registers >= 2);
    assert_string_equal(b->kernel, "b");
    assert_int_equal(b->shared_bytes, 0);
    assert_int_equal(b->spill_stores, 0);
    assert_non_null(strstr(res.log, "Used"));
    kf_ptxas_result_free(&res);
    kf_diags_free(&d);
}

/* ---- SASS of packed half math (LANGUAGE.md section 8) ----------------------
 * ptxas -arch=sm_XX, then cuobjdump -sass: the packed instructions appear,
 * and a separate * and + stay two instructions (.rn forbids contraction).
 * cuobjdump is optional ($KF_CUOBJDUMP, PATH, /usr/local/cuda/bin; `pip
 * install nvidia-cuda-cuobjdump` provides one): without it these skip. */

static bool find_tool(const char *name, const char *env, char *out, size_t size)
{
    const char *e = env ? getenv(env) : NULL;
    if (e && *e) {
        snprintf(out, size, "%s", e);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *c = strchr(path, ':');
        size_t n = c ? (size_t)(c - path) : strlen(path);
        snprintf(out, size, "%.*s/%s", (int)n, path, name);
        if (n && access(out, X_OK) == 0) return true;
        path = c ? c + 1 : NULL;
    }
    snprintf(out, size, "/usr/local/cuda/bin/%s", name);
    return access(out, X_OK) == 0;
}

/* The SASS of the PTX of .kf source text for arch (heap text), or NULL with
 * the test skipped when there is no cuobjdump. */
static char *sass_of(const char *src, uint32_t arch)
{
    char ptxas[1024], objdump[1024];
    if (!find_tool("cuobjdump", "KF_CUOBJDUMP", objdump, sizeof objdump)) {
        print_message("skipped: no cuobjdump (set KF_CUOBJDUMP, or pip install nvidia-cuda-cuobjdump)\n");
        return NULL;
    }
    if (!find_tool("ptxas", NULL, ptxas, sizeof ptxas)) fail_msg("ptxas not found (CI has the CUDA toolkit)");
    kf_module *m = NULL;
    if (kf_compile("sass.kf", src, strlen(src), NULL, &m) != KF_OK) fail_msg("does not compile");
    kf_emit_opts o = {arch, false, false};
    kf_buf ptx = {0};
    kf_diags d = {0};
    assert_int_equal(kf_ptx_emit(m, NULL, &o, &ptx, NULL, &d), KF_OK);
    char dir[] = "/tmp/kf_sass_XXXXXX", cmd[4096], path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/k.ptx", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(ptx.data, 1, ptx.len, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_%u -o %s/k.cubin %s && '%s' -sass %s/k.cubin > %s/k.sass", ptxas, arch, dir,
             path, objdump, dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/k.sass", dir);
    char *sass;
    size_t len;
    kf_error err = {0};
    assert_int_equal(kf_read_file(path, &sass, &len, &err), KF_OK);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    kf_buf_free(&ptx);
    kf_diags_free(&d);
    kf_module_free(m);
    return sass;
}

static void assert_sass_has(const char *sass, const char *insn, uint32_t arch)
{
    if (!strstr(sass, insn)) fail_msg("sm_%u SASS has no '%s'", arch, insn);
}

/* The SASS of the .kf file at rel (under the source tree) for arch, as
 * sass_of; the test is skipped without cuobjdump. */
static char *sass_of_file(const char *rel, uint32_t arch)
{
    char path[1024], *src;
    size_t len;
    kf_error err = {0};
    snprintf(path, sizeof path, "%s/%s", KF_SOURCE_DIR, rel);
    assert_int_equal(kf_read_file(path, &src, &len, &err), KF_OK);
    char *sass = sass_of(src, arch);
    free(src);
    if (!sass) skip();
    return sass;
}

static void test_packed_half_math_is_packed_in_sass(void **st)
{
    static const char *const sm90[] = {"HADD2 ", "HMUL2 ", "HFMA2.MMA ", "HMNMX2 ", "HADD2.BF16_V2 ",
                                       "HMUL2.BF16_V2 ", "HFMA2.BF16_V2 ", "HMNMX2.BF16_V2 "};
    static const char *const sm80[] = {"HADD2 ", "HMUL2 ", "HFMA2.MMA ", "HMNMX2 ", "HFMA2.BF16_V2 ", "HMNMX2.BF16_V2 "};
    char *src;
    size_t len;
    kf_error err = {0};
    assert_int_equal(kf_read_file(KF_SOURCE_DIR "/kernels/features/packed.kf", &src, &len, &err), KF_OK);
    char *s90 = sass_of(src, 90);
    if (!s90) {
        free(src);
        skip();
    }
    for (size_t i = 0; i < sizeof sm90 / sizeof *sm90; i++) assert_sass_has(s90, sm90[i], 90);
    char *s80 = sass_of(src, 80);
    for (size_t i = 0; i < sizeof sm80 / sizeof *sm80; i++) assert_sass_has(s80, sm80[i], 80);
    assert_null(strstr(s80, "HADD2.BF16_V2"));   /* sm_80 has no add/mul.bf16x2: fma forms */
    assert_null(strstr(s80, "HMUL2.BF16_V2"));
    free(s90);
    free(s80);
    free(src);
}

/* a * b + c on f16x2 and bf16x2: two instructions on both arches (the
 * product, perhaps as an fma with -0, then the sum), never one fma. */
static void test_separate_mul_add_is_not_contracted_in_sass(void **st)
{
    const char *src = "kernel mad_h(x: &[f16x2], y: &mut [f16x2]) { y[0] = x[0] * x[1] + x[2]; }\n"
                      "kernel mad_b(x: &[bf16x2], y: &mut [bf16x2]) { y[0] = x[0] * x[1] + x[2]; }\n";
    for (uint32_t arch = 80; arch <= 90; arch += 10) {
        char *sass = sass_of(src, arch);
        if (!sass) skip();
        unsigned fns = 0;
        for (const char *fn = strstr(sass, "Function : "); fn; fns++) {
            const char *next = strstr(fn + 1, "Function : ");
            unsigned n = 0;
            for (const char *p = fn; (p = strstr(p, " H")) && (!next || p < next); p++)
                n += !strncmp(p, " HADD2", 6) || !strncmp(p, " HMUL2", 6) || !strncmp(p, " HFMA2", 6);
            if (n != 2) fail_msg("sm_%u %.20s: %u packed arithmetic instructions, want 2 (a*b, then +c)", arch, fn, n);
            fn = next;
        }
        assert_int_equal(fns, 2);
        free(sass);
    }
}

/* kernels/features/tensor.kf on sm_80 and sm_90: mma is HMMA (f16, bf16)
 * and IMMA (every s8/u8 mix), ldmatrix every LDSM form, cp_async LDGSTS
 * (the zero-fill form .ZFILL) with its group barriers. */
static void test_tensor_cores_in_sass(void **st)
{
    static const char *const insns[] = {
        "HMMA.16816.F32 ", "HMMA.16816.F32.BF16 ", "IMMA.16832.S8.S8 ", "IMMA.16832.S8.U8 ", "IMMA.16832.U8.S8 ",
        "IMMA.16832.U8.U8 ", "LDSM.16.M88 ", "LDSM.16.M88.2 ", "LDSM.16.M88.4 ", "LDSM.16.MT88 ", "LDSM.16.MT88.2 ",
        "LDSM.16.MT88.4 ", "LDGSTS.E.BYPASS.128 ", "LDGSTS.E.BYPASS.128.ZFILL ", "LDGDEPBAR", "DEPBAR.LE SB0, 0x1",
    };
    for (uint32_t arch = 80; arch <= 90; arch += 10) {
        char *sass = sass_of_file("kernels/features/tensor.kf", arch);
        for (size_t i = 0; i < sizeof insns / sizeof *insns; i++) assert_sass_has(sass, insns[i], arch);
        free(sass);
    }
}

/* kernels/features/fence.kf on sm_80 and sm_90: each fence() is a
 * device-scope MEMBAR with its L1 invalidation (CCTL.IVALL, so the loads
 * after it miss the stale lines), in program order around the counter's
 * atomic: fence, ATOMG, fence. */
static void test_fence_is_a_gpu_membar_in_sass(void **st)
{
    for (uint32_t arch = 80; arch <= 90; arch += 10) {
        char *sass = sass_of_file("kernels/features/fence.kf", arch);
        const char *f1 = strstr(sass, "MEMBAR.ALL.GPU");
        if (!f1) fail_msg("sm_%u SASS has no MEMBAR.ALL.GPU", arch);
        const char *at = strstr(f1, "ATOMG.E.ADD");
        if (!at) fail_msg("sm_%u SASS: no ATOMG.E.ADD after the first fence", arch);
        const char *f2 = strstr(at, "MEMBAR.ALL.GPU");
        if (!f2) fail_msg("sm_%u SASS: no MEMBAR.ALL.GPU after the counter's atomic", arch);
        if (!strstr(f2, "CCTL.IVALL")) fail_msg("sm_%u SASS: the second fence does not invalidate L1 (CCTL.IVALL)", arch);
        free(sass);
    }
}

/* The text between `Function : name` and the next function of sass. */
static const char *sass_function(const char *sass, const char *name, size_t *len)
{
    char head[160];
    snprintf(head, sizeof head, "Function : %s\n", name);
    const char *f = strstr(sass, head);
    if (!f) fail_msg("SASS has no function %s", name);
    const char *next = strstr(f + 1, "Function : ");
    *len = next ? (size_t)(next - f) : strlen(f);
    return f;
}

/* The offset of insn in the first len bytes of f, or len when absent. */
static size_t sass_at(const char *f, size_t len, const char *insn)
{
    const char *at = strstr(f, insn);
    return at && (size_t)(at - f) < len ? (size_t)(at - f) : len;
}

/* kernels/features/dep.kf: on sm_90 the weight loads before dep_wait()
 * issue before the wait (LDG.E.STRONG.GPU, then ACQBULK), the loads after
 * it are not the non-coherent kind ptxas would move above the wait (no
 * LDG.E.CONSTANT), and dep_trigger() is PREEXIT where the kernel puts it
 * (first in scale_add_early, after the store in dot4_early); sm_80 has
 * neither instruction. */
static void test_dep_wait_keeps_early_loads_before_the_wait_in_sass(void **st)
{
    char *sass = sass_of_file("kernels/features/dep.kf", 90);
    size_t n;
    const char *f = sass_function(sass, "scale_add_early", &n);
    size_t trig = sass_at(f, n, "PREEXIT"), ld = sass_at(f, n, "LDG.E.STRONG.GPU"), wait = sass_at(f, n, "ACQBULK");
    if (!(trig < ld && ld < wait && wait < n)) fail_msg("scale_add_early: want PREEXIT, LDG.E.STRONG.GPU, ACQBULK in order");
    if (sass_at(f, n, "LDG.E.CONSTANT") < n) fail_msg("scale_add_early: a non-coherent load around the wait");
    if (sass_at(f + wait, n - wait, "LDG.E ") >= n - wait) fail_msg("scale_add_early: no load of x after the wait");
    f = sass_function(sass, "dot4_early", &n);
    ld = sass_at(f, n, "LDG.E.128.STRONG.GPU"), wait = sass_at(f, n, "ACQBULK");
    size_t stg = sass_at(f, n, "STG.E"), pre = sass_at(f, n, "PREEXIT");
    if (!(ld < wait && wait < stg && stg < pre && pre < n)) fail_msg("dot4_early: want LDG (w), ACQBULK, STG, PREEXIT");
    free(sass);
    sass = sass_of_file("kernels/features/dep.kf", 80);
    if (strstr(sass, "ACQBULK") || strstr(sass, "PREEXIT")) fail_msg("sm_80 SASS has griddepcontrol");
    free(sass);
}

/* kernels/features/prefetch.kf: on sm_90 each prefetch_l2 is the bulk L2
 * prefetch UBLKPF.L2 (H200 SASS, 2026-12-05), none is a load, and sm_80
 * has none. */
static void test_prefetch_l2_is_a_bulk_prefetch_in_sass(void **st)
{
    char *sass = sass_of_file("kernels/features/prefetch.kf", 90);
    size_t n;
    const char *f = sass_function(sass, "prefetch_next", &n);
    if (sass_at(f, n, "UBLKPF.L2") >= n) fail_msg("prefetch_next: no UBLKPF.L2 on sm_90");
    f = sass_function(sass, "prefetch_past_end", &n);
    if (sass_at(f, n, "UBLKPF.L2") >= n) fail_msg("prefetch_past_end: no UBLKPF.L2 on sm_90");
    free(sass);
    sass = sass_of_file("kernels/features/prefetch.kf", 80);
    if (strstr(sass, "UBLKPF")) fail_msg("sm_80 SASS has a bulk prefetch");
    free(sass);
    (void)st;
}

/* kernels/tc_gemv.kf on sm_90: the weights stream in as 16-byte loads
 * (LDG.E.128) straight into the HMMA (f16, bf16) and IMMA (Q4_K nibbles as
 * u8 times 8-bit X) fragments, and nothing goes through local memory. */
static void test_tc_gemv_is_tensor_cores_fed_by_16_byte_loads(void **st)
{
    static const char *const insns[] = {"HMMA.16816.F32 ", "HMMA.16816.F32.BF16 ", "IMMA.16832.U8.S8 ",
                                        "LDG.E.128.CONSTANT "};
    char *sass = sass_of_file("kernels/tc_gemv.kf", 90);
    for (size_t i = 0; i < sizeof insns / sizeof *insns; i++) assert_sass_has(sass, insns[i], 90);
    if (strstr(sass, "STL") || strstr(sass, "LDL")) fail_msg("tc_gemv.kf uses local memory (STL/LDL in its SASS)");
    free(sass);
}

/* A memory instruction's opcode (the line's text after any predicate):
 * global, shared, local and generic loads and stores, atomics, reductions,
 * async copies (LDC/ULDC read parameters: not memory here). */
static bool sass_memory_op(const char *ins)
{
    static const char *const ops[] = {"LDG", "STG", "LDS", "STS", "LDL", "STL", "LD.", "ST.", "LD ", "ST ", "ATOM",
                                      "RED", "LDGSTS"};
    if (ins[0] == '@') ins += strcspn(ins, " ") + 1;
    if (!strncmp(ins, "LDGDEPBAR", 9)) return false;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strncmp(ins, ops[i], strlen(ops[i]))) return true;
    return false;
}

/* Every library kernel (the .kf files of kernels/, default -D) opens on sm_90 with its
 * PDL wait before any memory instruction. ptxas 13 may move an
 * ld.global.nc above griddepcontrol.wait (seen in a test kernel: s17's
 * dep_wait work), and under PDL that load would read what the kernel before
 * is still writing; only dep_wait() kernels may load before the wait, and
 * they do it with ld.relaxed.gpu (test above). */
static void test_library_kernels_wait_before_any_memory_access_in_sass(void **st)
{
    static kf_file_entry files[128];
    size_t n = kf_list_dir("kernels", files, 0, 128), kernels = 0;
    for (size_t i = 0; i < n; i++) {
        char rel[200];
        snprintf(rel, sizeof rel, "kernels/%s.kf", files[i].stem);
        char *sass = sass_of_file(rel, 90);
        for (const char *f = strstr(sass, "Function : "); f; f = strstr(f + 1, "Function : ")) {
            const char *end = strstr(f + 1, "Function : "), *wait = strstr(f, "ACQBULK"), *name = f + 11;
            int nl = (int)strcspn(name, "\n");
            if (!wait || (end && wait > end)) fail_msg("%s: %.*s has no ACQBULK", rel, nl, name);
            for (const char *l = strstr(f, "*/"); l && l < wait; l = strstr(l + 2, "*/")) {
                l += 2;
                while (*l == ' ') l++;
                if (sass_memory_op(l)) fail_msg("%s: %.*s: '%.*s' before the PDL wait", rel, nl, name, (int)strcspn(l, ";"), l);
            }
            kernels++;
        }
        free(sass);
    }
    print_message("%zu library kernels wait before their first memory access\n", kernels);
    (void)st;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_ops_assemble_sm80),
        cmocka_unit_test(test_all_ops_assemble_sm86),
        cmocka_unit_test(test_all_ops_assemble_sm89),
        cmocka_unit_test(test_all_ops_assemble_sm90),
        cmocka_unit_test(test_all_ops_assemble_with_lineinfo),
        cmocka_unit_test(test_kf_kernels_assemble_sm80_and_sm90),
        cmocka_unit_test(test_min_blocks_bounds_registers),
        cmocka_unit_test(test_source_comments_with_utf8_and_backslash_assemble),
        cmocka_unit_test(test_ptxas_error_maps_to_kf_line),
        cmocka_unit_test(test_ptxas_error_without_map_names_ptx_line),
        cmocka_unit_test(test_ptxas_stats_parsed_per_kernel),
        cmocka_unit_test(test_packed_half_math_is_packed_in_sass),
        cmocka_unit_test(test_separate_mul_add_is_not_contracted_in_sass),
        cmocka_unit_test(test_tensor_cores_in_sass),
        cmocka_unit_test(test_tc_gemv_is_tensor_cores_fed_by_16_byte_loads),
        cmocka_unit_test(test_fence_is_a_gpu_membar_in_sass),
        cmocka_unit_test(test_dep_wait_keeps_early_loads_before_the_wait_in_sass),
        cmocka_unit_test(test_prefetch_l2_is_a_bulk_prefetch_in_sass),
        cmocka_unit_test(test_library_kernels_wait_before_any_memory_access_in_sass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
