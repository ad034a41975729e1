/* Golden text of the emitters (label golden): the PTX (sm_90, no -g) and the
 * CUDA-C of every library kernel (the .kf files of kernels/), compared byte for byte with
 * tests/golden/<kernel>.sm90.ptx and tests/golden/<kernel>.cu (gemm.kf: a
 * subset of its kernels that takes every form of their one body), the same for
 * the LANGUAGE.md section 8 feature kernels (kernels/features/shared.kf,
 * packed.kf, bits.kf; packed.kf also for sm_80, whose bf16 + - * differ),
 * plus one hand-built IR kernel so the PTX golden holds even without the
 * front end.
 * KFORGE_UPDATE_GOLDEN=1 rewrites the files; a mismatch prints `diff -u`
 * golden -> actual. Every library kernel must emit both texts, and every
 * golden file must belong to one. Each library kernel is compiled and
 * emitted again 20 times and must give the same PTX every time (emission is
 * deterministic); the mean time is printed for information only, since
 * speed is measured in benchmarks, never asserted in a unit test.
 * Programmatic dependent launch: in every library kernel's sm_90 PTX and
 * CUDA-C each entry waits (griddepcontrol.wait) before any memory access,
 * and launch_dependents follows only with pdl_trigger; sm_80 text has no
 * griddepcontrol at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include "ptx_ir_builder.h"
#include "ptx_kf_files.h"

static bool updating(void)
{
    const char *u = getenv("KFORGE_UPDATE_GOLDEN");
    return u && *u && strcmp(u, "0") != 0;
}

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* Prints `diff -u` of the golden file and the actual text. */
static void show_diff(const char *golden, const char *name, const char *actual)
{
    char dir[700], path[1400], cmd[3000];
    snprintf(dir, sizeof dir, "%s/golden-actual", KF_BINARY_DIR);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!write_text(path, actual)) return;
    snprintf(cmd, sizeof cmd, "diff -u '%s' '%s' 2>&1", golden, path);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, p) && n++ < 400) print_message("%s", line);
    pclose(p);
    print_message("(actual text kept in %s; KFORGE_UPDATE_GOLDEN=1 rewrites the golden files)\n", path);
}

/* Compares text with tests/golden/<name>, or rewrites it when updating. */
static void check_golden(const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/golden/%s", KF_SOURCE_DIR, name);
    if (updating()) {
        char dir[700];
        snprintf(dir, sizeof dir, "%s/tests/golden", KF_SOURCE_DIR);
        mkdir(dir, 0755);
        assert_true(write_text(path, text));
        return;
    }
    char *want;
    size_t len;
    if (kf_read_file(path, &want, &len, NULL) != KF_OK)
        fail_msg("missing golden file %s: run the test with KFORGE_UPDATE_GOLDEN=1 and review it", path);
    bool same = strcmp(want, text) == 0;
    if (!same) show_diff(path, name, text);
    free(want);
    assert_true(same);
}

static const char *SAXPY = "// y = a*x + y over n elements\n"
                           "@schedule(block = 256, grid = cdiv(n, 256))\n"
                           "kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
                           "    let i = global_id.x;\n"
                           "    if i < n {\n"
                           "        y[i] = a * x[i] + y[i];\n"
                           "    }\n"
                           "}\n";

/* saxpy as lowering produces it (LANGUAGE.md section 1), built by hand. */
static void build_saxpy(irb *b)
{
    irb_init(b, "saxpy", SAXPY);
    kf_type f32 = kf_type_scalar(KF_S_F32), u32 = kf_type_scalar(KF_S_U32), bt = kf_type_scalar(KF_S_BOOL);
    b->line = 3;
    kf_val a = irb_param(b, "a", f32), x = irb_param(b, "x", irb_buf(KF_S_F32, 1, false));
    kf_val y = irb_param(b, "y", irb_buf(KF_S_F32, 1, true)), n = irb_param(b, "n", u32);
    b->line = 4;
    kf_val c = irb_op(b, KF_IR_SREG, 0, u32, 0, 0, 0, KF_SR_CTAID_X);
    kf_val nt = irb_op(b, KF_IR_SREG, 0, u32, 0, 0, 0, KF_SR_NTID_X);
    kf_val m = irb_op(b, KF_IR_BINOP, KF_OP_MUL, u32, c, nt, 0, 0);
    kf_val t = irb_op(b, KF_IR_SREG, 0, u32, 0, 0, 0, KF_SR_TID_X);
    kf_val i = irb_op(b, KF_IR_BINOP, KF_OP_ADD, u32, m, t, 0, 0);
    b->vals[i].name = "i";
    b->line = 5;
    kf_val p = irb_op(b, KF_IR_CMP, KF_OP_LT, u32, i, n, 0, 0);
    b->vals[p].type = bt;
    irb_ins(b, KF_IR_IF, 0, kf_type_void(), 0, p, 0, 0, 0);
    b->line = 6;
    kf_val xi = irb_op(b, KF_IR_LOAD, 0, f32, x, i, 0, 0);
    kf_val ax = irb_op(b, KF_IR_BINOP, KF_OP_MUL, f32, a, xi, 0, 0);
    kf_val yi = irb_op(b, KF_IR_LOAD, 0, f32, y, i, 0, 0);
    kf_val r = irb_op(b, KF_IR_BINOP, KF_OP_ADD, f32, ax, yi, 0, 0);
    irb_ins(b, KF_IR_STORE, 0, f32, 0, y, i, r, 0);
    b->line = 5;
    irb_ins(b, KF_IR_ENDIF, 0, kf_type_void(), 0, 0, 0, 0, 0);
    b->k.loc.line = 3;
}

static void test_golden_hand_built_saxpy_ptx(void **st)
{
    static irb b;
    build_saxpy(&b);
    kf_diags d = {0};
    char *ptx = irb_emit(&b, 90, false, NULL, &d);
    assert_non_null(ptx);
    check_golden("ir_saxpy.sm90.ptx", ptx);
    free(ptx);
    kf_diags_free(&d);
}

/* CPU time of the process: the machine's other load does not count. */
static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Mean microseconds of compile (parse + check + lower) + PTX emit; every
 * one of the runs must give exactly `want` (emission is deterministic),
 * else -1. */
static double emit_time_us(const char *file, const char *src, size_t len, const char *want)
{
    const int reps = 20;
    double t0 = now_us();
    for (int i = 0; i < reps; i++) {
        kf_module *m = NULL;
        kf_status st = kf_compile(file, src, len, NULL, &m);
        kf_buf out = {0};
        kf_diags d = {0};
        kf_emit_opts o = {90, false, false};
        if (st == KF_OK) st = kf_ptx_emit(m, NULL, &o, &out, NULL, &d);
        bool same = st == KF_OK && out.data && strcmp(out.data, want) == 0;
        kf_buf_free(&out);
        kf_diags_free(&d);
        kf_module_free(m);
        if (!same) return -1;
    }
    return (now_us() - t0) / reps;
}

/* The section-8 feature files whose emitted text is golden too (packed
 * also for sm_80, whose bf16 forms differ), and schedule.kf (@schedule's
 * min_blocks: .minnctapersm, __launch_bounds__(B, N)): name.sm90.ptx +
 * name.cu, and name.sm80.ptx + name.sm80.cu. */
static const struct {
    const char *stem;
    uint32_t arch;
} section8[] = {{"shared", 90}, {"packed", 90}, {"packed", 80}, {"bits", 90}, {"tensor", 90}, {"schedule", 90}};
#define NSECTION8 (sizeof section8 / sizeof section8[0])

/* Library files whose entry points are one body instantiated many times:
 * their golden text is the emission of a subset of kernels that takes
 * every form of the body, one after the other. gemm.kf's sixteen entries
 * are gemm_block with other flags (operand and C types, the B layout,
 * stream-K, split-K), 1.3 MB of PTX and 0.6 MB of CUDA-C each; all sixteen
 * in the goldens made the repository too large to carry to the GPU
 * machine. Every kernel is still assembled by ptxas (test_ptxas_kernels,
 * with gemm's no-spill check) and run by the golden cases. */
static const struct {
    const char *stem;
    const char *kernels[6];
} golden_subset[] = {
    {"gemm", {"gemm_f16_f16_nn", "gemm_bf16_bf16_nn", "gemm_bf16_f32_nt", "gemm_f16_f16_nn_sk", "gemm_f16_f16_nn_splitk",
              NULL}},
};

static const char *const *subset_of(const char *stem)
{
    for (size_t i = 0; i < sizeof golden_subset / sizeof golden_subset[0]; i++)
        if (!strcmp(golden_subset[i].stem, stem)) return golden_subset[i].kernels;
    return NULL;
}

/* m's PTX (cuda: CUDA-C) for arch, of every kernel, or of the kernels of
 * subset (NULL-terminated), each emitted alone, in that order. */
static char *emit_text(const kf_module *m, const char *const *subset, bool cuda, const kf_emit_opts *o)
{
    kf_buf all = {0};
    for (size_t i = 0; subset ? subset[i] != NULL : i == 0; i++) {
        const kf_ir_kernel *k = NULL;
        for (uint32_t j = 0; subset && j < m->nkernels; j++)
            if (!strcmp(m->kernels[j].name, subset[i])) k = &m->kernels[j];
        if (subset && !k) fail_msg("%s: the golden subset names '%s', which it does not declare", m->file, subset[i]);
        kf_buf out = {0};
        kf_diags d = {0};
        kf_status st = cuda ? kf_cuda_emit(m, k, o, &out, NULL, &d) : kf_ptx_emit(m, k, o, &out, NULL, &d);
        if (st != KF_OK) {   /* every kernel here has both texts */
            kf_buf msg = {0};
            kf_diags_render(&msg, &d, m->source, m->source_len);
            fail_msg("%s fails for %s:\n%s", cuda ? "kf_cuda_emit" : "kf_ptx_emit", m->file,
                     msg.data ? msg.data : "(no diagnostic)");
        }
        kf_buf_puts(&all, out.data ? out.data : "");
        kf_buf_free(&out);
        kf_diags_free(&d);
    }
    assert_false(all.oom);
    return kf_buf_take(&all);
}

/* Compares f's PTX and CUDA-C for arch with the goldens; timed: also the
 * compile + emit time (library kernels). */
static void golden_kernel(const kf_file_entry *f, uint32_t arch, bool timed)
{
    kf_module *m = kf_compile_entry_ok(f);
    kf_emit_opts o = {arch, false, false};
    kf_buf out = {0};
    kf_diags d = {0};
    char name[300];
    const char *const *subset = subset_of(f->stem);
    char *text = emit_text(m, subset, false, &o);
    snprintf(name, sizeof name, "%s.sm%u.ptx", f->stem, arch);
    check_golden(name, text);
    free(text);
    assert_int_equal(kf_ptx_emit(m, NULL, &o, &out, NULL, &d), KF_OK);   /* the whole module: emit_time_us's */
    char *ptx = kf_buf_take(&out);
    kf_diags_free(&d);
    snprintf(name, sizeof name, arch == 90 ? "%s.cu" : "%s.sm80.cu", f->stem);
    text = emit_text(m, subset, true, &o);
    check_golden(name, text);
    free(text);
    if (timed) {
        double us = emit_time_us(m->file, m->source, m->source_len, ptx);
        print_message("emit time %-14s %8.1f us (check + lower + PTX emit, mean of 20)\n", f->stem, us);
        if (us < 0) fail_msg("%s: a repeated compile + emit gave other PTX than the first: emission is not deterministic", f->path);
    }
    free(ptx);
    kf_buf_free(&out);
    kf_diags_free(&d);
    kf_module_free(m);
}

/* True when tests/golden holds name. */
static bool golden_exists(const char *name)
{
    char path[1024];
    struct stat sb;
    snprintf(path, sizeof path, "%s/tests/golden/%s", KF_SOURCE_DIR, name);
    return stat(path, &sb) == 0;
}

/* Every .kf file of kernels/ (the library: at least the four of the
 * README) is compared, and every golden file belongs to one of them. */
static void test_golden_library_kernels(void **st)
{
    static kf_file_entry files[256];
    static const char *const library[] = {"reduce_sum", "rmsnorm", "saxpy", "softmax"};
    size_t n = kf_list_dir("kernels", files, 0, 256);
    for (size_t l = 0; l < sizeof library / sizeof library[0]; l++) {
        bool found = false;
        for (size_t i = 0; i < n; i++) found |= strcmp(files[i].stem, library[l]) == 0;
        if (!found) fail_msg("kernels/%s.kf is missing: the library kernels were not found", library[l]);
    }
    for (size_t i = 0; i < n; i++) golden_kernel(&files[i], 90, true);
    DIR *d = opendir(KF_SOURCE_DIR "/tests/golden");
    assert_non_null(d);
    struct dirent *de;
    size_t goldens = 0;
    while ((de = readdir(d))) {
        char stem[256];
        if (de->d_name[0] == '.' || !strncmp(de->d_name, "ir_", 3)) continue;   /* ir_*: the hand-built IR kernels */
        snprintf(stem, sizeof stem, "%.*s", (int)strcspn(de->d_name, "."), de->d_name);
        bool owned = false;
        for (size_t i = 0; i < n; i++) owned |= strcmp(files[i].stem, stem) == 0;
        for (size_t i = 0; i < NSECTION8; i++) owned |= strcmp(section8[i].stem, stem) == 0;
        if (!owned) fail_msg("tests/golden/%s belongs to no kernel of kernels/ or section-8 feature", de->d_name);
        goldens++;
    }
    closedir(d);
    assert_true(golden_exists("saxpy.cu") && golden_exists("saxpy.sm90.ptx"));
    assert_int_equal(goldens, 2 * (n + NSECTION8));   /* a .ptx and a .cu each */
    print_message("%zu library kernels compared\n", n);
}

/* The first memory instruction of a PTX body (ld st cp atom red), or NULL. */
static const char *first_memory_op(const char *body)
{
    static const char *const ops[] = {"\tld.", "\tst.", "\tcp.", "\tatom.", "\tred."};
    const char *first = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const char *at = strstr(body, ops[i]);
        if (at && (!first || at < first)) first = at;
    }
    return first;
}

/* Every PTX entry of text: whether it waits before its first memory access
 * and then triggers; returns the number of entries (0: none had the form). */
static int ptx_entries_wait_first(const char *text, const char *file, bool trigger)
{
    int n = 0;
    for (const char *e = strstr(text, ".entry "); e; e = strstr(e + 1, ".entry ")) {
        const char *body = strstr(e, "\n{\n"), *end = body ? strstr(body, "\n}\n") : NULL;
        const char *wait = body ? strstr(body, "\tgriddepcontrol.wait;") : NULL, *mem = body ? first_memory_op(body) : NULL;
        if (!end || !wait || wait > end || (mem && mem < wait))
            fail_msg("%s: an sm_90 PTX entry does not wait before its first memory access", file);
        const char *next = strchr(wait, '\n') + 1;
        bool triggers = !strncmp(next, "\tgriddepcontrol.launch_dependents;", 34);
        if (triggers != trigger) fail_msg("%s: launch_dependents %s the wait, pdl_trigger %d", file,
                                          triggers ? "follows" : "does not follow", trigger);
        n++;
    }
    return n;
}

/* Every CUDA-C entry of text opens its body with the wait (then the
 * trigger), and the prelude's helpers are griddepcontrol's. */
static int cuda_entries_wait_first(const char *text, const char *file, bool trigger)
{
    int n = 0;
    if (!strstr(text, "asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");") ||
        (trigger && !strstr(text, "asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");")))
        fail_msg("%s: the CUDA-C prelude lacks the griddepcontrol helpers", file);
    for (const char *e = strstr(text, "__global__"); e; e = strstr(e + 1, "__global__")) {
        const char *body = strstr(e, "\n{\n");
        if (!body || strncmp(body + 3, "    kf_pdl_wait();\n", 19) != 0)
            fail_msg("%s: an sm_90 CUDA-C entry does not open with kf_pdl_wait()", file);
        bool triggers = !strncmp(body + 3 + 19, "    kf_pdl_trigger();\n", 22);
        if (triggers != trigger) fail_msg("%s: CUDA-C launch_dependents %d, pdl_trigger %d", file, triggers, trigger);
        n++;
    }
    return n;
}

/* f emitted for arch (with pdl_trigger) on both paths, checked as above;
 * the texts checked (sm_80: a kernel using what sm_80 lacks emits none). */
static int pdl_form(const kf_file_entry *f, uint32_t arch, bool trigger)
{
    kf_status st;
    kf_module *m = kf_compile_entry(f, &st);
    assert_int_equal(st, KF_OK);
    kf_emit_opts o = {arch, false, trigger};
    int texts = 0;
    for (int path = 0; path < 2; path++) {
        kf_buf out = {0};
        kf_diags d = {0};
        st = path ? kf_cuda_emit(m, NULL, &o, &out, NULL, &d) : kf_ptx_emit(m, NULL, &o, &out, NULL, &d);
        if (arch >= 90) assert_int_equal(st, KF_OK);
        if (st == KF_OK && arch < 90 && strstr(out.data, "griddepcontrol"))
            fail_msg("%s: griddepcontrol in sm_%u text", f->path, arch);
        if (st == KF_OK && arch >= 90)
            assert_true((path ? cuda_entries_wait_first : ptx_entries_wait_first)(out.data, f->path, trigger) > 0);
        texts += st == KF_OK;
        kf_buf_free(&out);
        kf_diags_free(&d);
    }
    kf_module_free(m);
    return texts;
}

static void test_sm90_kernels_wait_for_the_previous_grid_first(void **st)
{
    static kf_file_entry files[256];
    size_t n = kf_list_dir("kernels", files, 0, 256);
    assert_true(n >= 4);
    int sm80 = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pdl_form(&files[i], 90, false), 2);
        assert_int_equal(pdl_form(&files[i], 90, true), 2);
        sm80 += pdl_form(&files[i], 80, true);
    }
    assert_true(sm80 >= (int)n);   /* most of the library has sm_80 text, and it was checked */
}

static void test_golden_section8_features(void **st)
{
    for (size_t i = 0; i < NSECTION8; i++) {
        kf_file_entry f;
        snprintf(f.path, sizeof f.path, "%s/kernels/features/%s.kf", KF_SOURCE_DIR, section8[i].stem);
        snprintf(f.stem, sizeof f.stem, "%s", section8[i].stem);
        golden_kernel(&f, section8[i].arch, false);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_hand_built_saxpy_ptx),
        cmocka_unit_test(test_golden_library_kernels),
        cmocka_unit_test(test_golden_section8_features),
        cmocka_unit_test(test_sm90_kernels_wait_for_the_previous_grid_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
