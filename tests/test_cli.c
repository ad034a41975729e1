/* The kforge command line, run as a program (path in $KFORGE): exit codes
 * 0/1/2/3 for representative cases, diagnostics as file:line:col with the
 * source line and a caret, usage errors that say what was expected, `run`
 * with .npy input and output, dtype and length mismatches naming the
 * parameter, interpreter faults at their .kf location, and `test` output
 * (one line per case and backend, last line "N passed, N failed"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../tools/npy.h"

#include "cli_run.h"

#define SRC KF_SOURCE_DIR

static void write_npy(const char *path, kf_scalar s, const void *data, size_t n)
{
    kf_error err = {0};
    assert_int_equal(kf_npy_write(path, s, data, n, &err), KF_OK);
}

/* The last non-empty line of text. */
static const char *last_line(const char *text, char *buf, size_t size)
{
    size_t len = strlen(text);
    while (len && text[len - 1] == '\n') len--;
    size_t start = len;
    while (start && text[start - 1] != '\n') start--;
    snprintf(buf, size, "%.*s", (int)(len - start), text + start);
    return buf;
}

/* ---- dispatch and usage -------------------------------------------------- */

static void test_no_arguments_is_usage_error_2(void **state)
{
    result r = kforge(NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "usage:"));
    done(&r);
}

static void test_unknown_command_says_what_was_expected(void **state)
{
    result r = kforge("frobnicate", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "unknown command 'frobnicate'"));
    assert_non_null(strstr(r.err, "check, emit, run, test"));
    done(&r);
}

static void test_help_exits_0(void **state)
{
    result r = kforge("--help", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "kforge run FILE"));
    done(&r);
}

/* ---- check ------------------------------------------------------------------ */

static void test_check_library_kernel_exits_0(void **state)
{
    result r = kforge("check", SRC "/kernels/rmsnorm.kf", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "rmsnorm.kf: ok (1 kernel: rmsnorm)"));
    assert_non_null(strstr(r.out, "saxpy.kf: ok (1 kernel: saxpy)"));
    done(&r);
}

static void test_check_every_kernel_file_exits_0(void **state)
{
    result r = kforge("check", SRC "/kernels/reduce_sum.kf", SRC "/kernels/softmax.kf",
                      SRC "/kernels/features/types.kf", SRC "/kernels/features/ops.kf",
                      SRC "/kernels/features/control.kf", SRC "/kernels/features/warp.kf",
                      SRC "/kernels/features/atomics.kf", SRC "/kernels/features/math.kf",
                      SRC "/kernels/features/geometry.kf", NULL);
    if (r.status != 0) fprintf(stderr, "%s", r.err);
    assert_int_equal(r.status, 0);
    done(&r);
}

static void test_check_error_is_file_line_col_with_source_and_caret(void **state)
{
    const char *bad = tmp("bad.kf");
    write_text(bad, "kernel k(y: &mut [u32]) {\n    let a: u32 = 1;\n    let b: i32 = 2;\n    y[0] = a + b;\n}\n");
    result r = kforge("check", bad, NULL);
    assert_int_equal(r.status, 1);
    char want[600];
    snprintf(want, sizeof want, "%s:4:", bad);
    assert_non_null(strstr(r.err, want));
    assert_non_null(strstr(r.err, ": error: "));
    assert_non_null(strstr(r.err, "y[0] = a + b;"));
    assert_non_null(strstr(r.err, "^"));
    assert_string_equal(r.out, "");
    done(&r);
}

/* The caret line puts '^' under column `col` of source_line (given whole, with
 * its own indentation) as rendered above it. */
static void assert_caret_under(const char *text, const char *source_line, unsigned col)
{
    const char *src = strstr(text, source_line);
    assert_non_null(src);
    const char *line_start = src;
    while (line_start > text && line_start[-1] != '\n') line_start--;
    size_t prefix = (size_t)(src - line_start);   /* the renderer's indent */
    const char *caret_line = strchr(src, '\n');
    assert_non_null(caret_line);
    caret_line++;
    const char *caret = strchr(caret_line, '^');
    assert_non_null(caret);
    assert_int_equal((size_t)(caret - caret_line), prefix + col - 1);
}

static void test_check_reports_several_errors_each_with_its_caret(void **state)
{
    const char *bad = tmp("two.kf");
    write_text(bad, "kernel k(y: &mut [u32]) {\n    let a: u32 = 1;\n    let b: i32 = 2;\n"
                    "    y[0] = a + b;\n    y[1] = c;\n}\n");
    result r = kforge("check", bad, NULL);
    assert_int_equal(r.status, 1);
    char first[600], second[600];
    snprintf(first, sizeof first, "%s:4:14: error: ", bad);
    snprintf(second, sizeof second, "%s:5:12: error: ", bad);
    assert_non_null(strstr(r.err, first));
    assert_non_null(strstr(r.err, second));
    assert_caret_under(r.err, "    y[0] = a + b;", 14);
    assert_caret_under(r.err, "    y[1] = c;", 12);
    done(&r);
}

static void test_check_syntax_error_exits_1(void **state)
{
    const char *bad = tmp("syntax.kf");
    write_text(bad, "kernel k() {\n    let = 3;\n}\n");
    result r = kforge("check", bad, NULL);
    assert_int_equal(r.status, 1);
    char want[600];
    snprintf(want, sizeof want, "%s:2:", bad);
    assert_non_null(strstr(r.err, want));
    done(&r);
}

static void test_check_missing_file_is_usage_error(void **state)
{
    result r = kforge("check", tmp("does-not-exist.kf"), NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "does-not-exist.kf"));
    done(&r);
    r = kforge("run", tmp("does-not-exist.kf"), NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "kforge run: error: cannot open '"));
    done(&r);
    r = kforge("check", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "expected at least one .kf FILE"));
    done(&r);
}

/* ---- emit ------------------------------------------------------------------- */

static void test_emit_bad_target_and_arch_say_what_was_expected(void **state)
{
    result r = kforge("emit", "--target", "spirv", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "expected ptx, cuda, ir or cubin"));
    done(&r);
    r = kforge("emit", "--arch", "sm_70", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "expected sm_80, sm_86, sm_89 or sm_90"));
    done(&r);
    r = kforge("emit", "--target", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--target needs a value"));
    done(&r);
    r = kforge("emit", "--target", "ir", "--verify", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "need --target ptx"));
    done(&r);
}

static void test_emit_ir_prints_the_kernel(void **state)
{
    result r = kforge("emit", "--target", "ir", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "saxpy"));
    done(&r);
}

/* -O0 shows the IR as lowered (the branch on the constant argument is
 * there), the default level without it; both run to the same output; an
 * unknown level is a usage error. */
static void test_emit_and_run_take_the_optimisation_level(void **state)
{
    const char *kf = tmp("olevel.kf");
    FILE *f = fopen(kf, "w");
    assert_non_null(f);
    fputs("fn put(y: &mut [u32], i: u32, twice: bool) { if twice { y[i] = 2 * i; } else { y[i] = i; } }\n"
          "kernel k(y: &mut [u32]) { put(y, thread_id.x, true); }\n", f);
    fclose(f);
    result r0 = kforge("emit", "--target", "ir", "-O0", kf, NULL), r1 = kforge("emit", "--target", "ir", kf, NULL);
    assert_int_equal(r0.status, 0);
    assert_int_equal(r1.status, 0);
    assert_non_null(strstr(r0.out, "  if %"));
    assert_null(strstr(r1.out, "  if %"));
    assert_non_null(strstr(r1.out, " = shl %"));   /* 2 * i */
    done(&r0), done(&r1);
    r0 = kforge("run", "-O0", kf, "y=zeros(300)", NULL), r1 = kforge("run", "-O1", kf, "y=zeros(300)", NULL);
    assert_int_equal(r0.status, 0);
    assert_string_equal(r0.out, r1.out);
    assert_non_null(strstr(r1.out, "[0, 2, 4, 6, 8, 10, 12, 14, ...]"));
    done(&r0), done(&r1);
    r0 = kforge("emit", "-O3", kf, NULL);
    assert_int_equal(r0.status, 2);
    assert_non_null(strstr(r0.err, "unknown option '-O3'"));
    done(&r0);
}

static void test_emit_ptx_to_file_has_the_entry(void **state)
{
    const char *out = tmp("saxpy.ptx");
    result r = kforge("emit", "--target", "ptx", "--arch", "sm_80", "-o", out, SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 0);
    char *ptx = slurp(out);
    assert_non_null(strstr(ptx, ".entry saxpy"));
    assert_non_null(strstr(ptx, "sm_80"));
    free(ptx);
    done(&r);
}

static void test_emit_verify_assembles_or_reports_missing_ptxas(void **state)
{
    result r = kforge("emit", "--stats", "--arch", "sm_90", "-o", tmp("rms.ptx"), SRC "/kernels/rmsnorm.kf", NULL);
    if (r.status == 0) {
        assert_non_null(strstr(r.err, "rmsnorm (sm_90): "));
        assert_non_null(strstr(r.err, " registers"));
    } else {
        assert_int_equal(r.status, 3);
        assert_non_null(strstr(r.err, "ptxas"));
    }
    done(&r);
}

static void test_emit_unwritable_output_says_why(void **state)
{
    result r = kforge("emit", "-o", "/nonexistent-dir/x.ptx", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 3);
    assert_string_equal(r.err, "kforge emit: error: cannot write '/nonexistent-dir/x.ptx': No such file or directory\n");
    done(&r);
}

static void test_emit_unknown_kernel_lists_the_kernels(void **state)
{
    result r = kforge("emit", "-k", "nope", SRC "/kernels/softmax.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "softmax_f32"));
    assert_non_null(strstr(r.err, "softmax_f16"));
    done(&r);
}

/* ---- run -------------------------------------------------------------------- */

static void test_run_saxpy_with_npy_in_and_out(void **state)
{
    float x[10], y[10];
    for (int i = 0; i < 10; i++) x[i] = (float)i * 0.5f, y[i] = 100.0f - (float)i;
    write_npy(tmp("x.npy"), KF_S_F32, x, 10);
    write_npy(tmp("y.npy"), KF_S_F32, y, 10);
    char xa[600], ya[600], oa[600];
    snprintf(xa, sizeof xa, "x=@%s", tmp("x.npy"));
    snprintf(ya, sizeof ya, "y=@%s", tmp("y.npy"));
    snprintf(oa, sizeof oa, "y=%s", tmp("out.npy"));
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=2", xa, ya, "n=10", "-o", oa, NULL);
    assert_int_equal(r.status, 0);
    kf_npy n;
    kf_error err = {0};
    assert_int_equal(kf_npy_read(tmp("out.npy"), &n, &err), KF_OK);
    assert_int_equal(n.count, 10);
    assert_int_equal(n.kind, 'f');
    for (int i = 0; i < 10; i++) assert_true(((float *)n.data)[i] == 2.0f * x[i] + y[i]);
    kf_npy_free(&n);
    done(&r);
}

static void test_run_generators_and_printed_outputs(void **state)
{
    char oa[600];
    snprintf(oa, sizeof oa, "x=%s", tmp("gen_x.npy"));
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=iota(8)", "y=zeros(8)", "n=8", "-o", oa, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "y: &mut [f32], 8 elements = [0, 1, 2, 3, 4, 5, 6, 7]"));
    kf_npy n;
    kf_error err = {0};
    assert_int_equal(kf_npy_read(tmp("gen_x.npy"), &n, &err), KF_OK);
    assert_int_equal(n.count, 8);
    assert_true(((float *)n.data)[7] == 7.0f);
    kf_npy_free(&n);
    done(&r);
}

static void test_run_dtype_mismatch_names_the_parameter(void **state)
{
    int32_t v[4] = {1, 2, 3, 4};
    write_npy(tmp("ints.npy"), KF_S_I32, v, 4);
    char xa[600];
    snprintf(xa, sizeof xa, "x=@%s", tmp("ints.npy"));
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", xa, "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "parameter 'x'"));
    assert_non_null(strstr(r.err, "'<f4'"));
    assert_non_null(strstr(r.err, "'<i4'"));
    done(&r);
}

static void test_run_vector_length_mismatch_names_the_parameter(void **state)
{
    float v[6] = {0};
    write_npy(tmp("six.npy"), KF_S_F32, v, 6);
    char xa[600];
    snprintf(xa, sizeof xa, "x=@%s", tmp("six.npy"));
    result r = kforge("run", SRC "/kernels/features/math.kf", "-k", "math_vec", xa, "o=zeros(3)", "n=1", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "parameter 'x'"));
    assert_non_null(strstr(r.err, "multiple of 4"));
    done(&r);
}

static void test_run_argument_errors_say_what_was_expected(void **state)
{
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=zeros(4)", "y=zeros(4)", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "missing argument for parameter 'n' (u32): give n=VALUE"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=zeros(4)", "y=zeros(4)", "n=4", "m=3", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no parameter 'm'"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=zeros(3)", "x=zeros(4)", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "parameter 'a' is a f32 value, not a buffer"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=5", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "give x=@file.npy"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=rand(0,1)", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "rand(N,SEED)"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=zeros(4)", "y=@/nonexistent/y.npy", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "parameter 'y': cannot open '/nonexistent/y.npy'"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "--backend", "tpu", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "expected cpu, cuda or ptx"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "--count", "5", "a=1", "x=zeros(4)", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--count 5 has no effect: kernel 'saxpy' has a grid in its @schedule"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "-o", "y", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "expected -o NAME=out.npy"));
    done(&r);
}

/* --shared BYTES gives the launch's dynamic shared memory, overriding the
 * schedule's `shared = 64` (16 u32: too few for n = 20, which faults at the
 * dynamic array's run-time length); over the device limit it is refused
 * with the sizes; a bad value is a usage error. */
static void test_run_shared_option_sizes_the_dynamic_array(void **state)
{
    const char *kf = SRC "/kernels/features/shared.kf";
    result r = kforge("run", kf, "-k", "both", "n=20", "o=zeros(20)", NULL);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "out-of-bounds store of shared array (dyn as f32)[16] (length 16)"));
    done(&r);
    r = kforge("run", kf, "-k", "both", "n=20", "o=zeros(20)", "--shared", "80", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "o: &mut [u32], 20 elements = [1092092004,"));
    done(&r);
    r = kforge("run", kf, "-k", "both", "n=20", "o=zeros(20)", "--shared", "300000", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "kernel 'both': 300000 bytes of dynamic shared memory (the launch's) + 16 static "
                                  "exceed the device limit max_shared_per_block = 232448 bytes"));
    assert_non_null(strstr(r.err, "ask for at most 232432"));
    done(&r);
    r = kforge("run", kf, "-k", "both", "n=20", "o=zeros(20)", "--shared", "-4", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "bad --shared '-4': expected bytes of dynamic shared memory"));
    done(&r);
}

static void test_bad_define_is_a_usage_error_naming_it(void **state)
{
    result r = kforge("run", SRC "/kernels/saxpy.kf", "-D", "NOPE=3", "a=1", "x=zeros(4)", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "kforge run: error: -D NOPE=3: there is no constant 'NOPE' in this module\n");
    done(&r);
    r = kforge("check", "-D", "BLOCK=abc", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "kforge check: error: -D BLOCK=abc: "));
    done(&r);
    /* a valid override that makes the source wrong is a compile error at its line */
    r = kforge("check", "-D", "BLOCK=2048", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "saxpy.kf:10:19: error: block.x = 2048 is out of range"));
    done(&r);
}

static void test_run_compile_error_exits_1(void **state)
{
    const char *bad = tmp("bad_run.kf");
    write_text(bad, "kernel k(y: &mut [u32]) {\n    y[0] = undefined_name;\n}\n");
    result r = kforge("run", bad, "y=zeros(1)", NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, ":2:"));
    done(&r);
}

static void test_run_out_of_bounds_is_runtime_error_3_at_its_line(void **state)
{
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=zeros(4)", "y=zeros(4)", "n=100", NULL);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "saxpy.kf:"));
    assert_non_null(strstr(r.err, "out-of-bounds"));
    done(&r);
}

static unsigned count_of(const char *text, const char *needle)
{
    unsigned n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void test_run_fault_names_its_location_once_with_caret(void **state)
{
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=zeros(4)", "y=zeros(4)", "n=100", NULL);
    assert_int_equal(r.status, 3);
    const char *want = SRC "/kernels/saxpy.kf:18:27: error: kernel saxpy: out-of-bounds load of x[1] through a view of "
                           "16-byte elements (length 1; x holds 4 elements of 4 bytes) in block (0,0,0) thread (1,0,0)\n";
    assert_true(strncmp(r.err, want, strlen(want)) == 0);
    assert_int_equal(count_of(r.err, "saxpy.kf:18:27"), 1);
    assert_caret_under(r.err, "        y4[i] = fma(av, x4[i], y4[i]);", 27);
    done(&r);
}

/* A corrupt disk-cache entry is rebuilt and reported as a warning on
 * stderr. The driver is the stand-in libcuda (tests/mock/mock_cuda.c),
 * which really computes saxpy, so this runs without a GPU. */
static void test_run_reports_a_rebuilt_cache_entry_as_a_warning(void **state)
{
    const char *mock = KF_BINARY_DIR "/tests/libkf_mockcuda.so";
    assert_int_equal(access(mock, R_OK), 0);
    const char *cache = tmp("cache");
    mkdir(cache, 0700);
    setenv("KFORGE_CACHE_DIR", cache, 1);
    setenv("KF_LIBCUDA", mock, 1);
    result r = kforge("run", SRC "/kernels/saxpy.kf", "--backend", "ptx", "a=1", "x=iota(4)", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.err, "warning"));
    done(&r);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "find %s -type f -exec sh -c 'printf garbage > \"$1\"' _ {} \\;", cache);
    assert_int_equal(system(cmd), 0);
    r = kforge("run", SRC "/kernels/saxpy.kf", "--backend", "ptx", "a=1", "x=iota(4)", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 0);
    if (!strstr(r.err, "kforge run: warning: cache entry")) fprintf(stderr, "%s", r.err);
    assert_non_null(strstr(r.err, "kforge run: warning: cache entry "));
    assert_non_null(strstr(r.err, " was unusable ("));
    assert_non_null(strstr(r.out, "[0, 1, 2, 3]"));
    done(&r);
    /* the same through `kforge test` (the entry was rewritten: corrupt it again) */
    assert_int_equal(system(cmd), 0);
    r = kforge("test", "--backend", "ptx", SRC "/kernels/cases/saxpy_3.case", NULL);
    unsetenv("KFORGE_CACHE_DIR");
    unsetenv("KF_LIBCUDA");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "kforge test: warning: cache entry "));
    assert_non_null(strstr(r.out, "PASS saxpy_3 [ptx]"));
    done(&r);
}

static void test_run_cuda_backend_runs_or_reports_a_device_error(void **state)
{
    result r = kforge("run", SRC "/kernels/saxpy.kf", "--backend", "cuda", "a=1", "x=iota(4)", "y=zeros(4)", "n=4", NULL);
    if (r.status == 0) assert_non_null(strstr(r.out, "[0, 1, 2, 3]"));
    else {
        assert_int_equal(r.status, 3);
        assert_non_null(strstr(r.err, "error"));
    }
    done(&r);
}

/* ---- test ------------------------------------------------------------------- */

static void test_test_prints_one_line_per_case_and_a_summary(void **state)
{
    result r = kforge("test", SRC "/kernels/cases/reduce_sum_iota_4099.case", SRC "/kernels/cases/saxpy_3.case", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "PASS reduce_sum_iota_4099 [cpu] max_abs_err="));
    assert_non_null(strstr(r.out, "PASS saxpy_3 [cpu] max_abs_err="));
    char buf[256];
    last_line(r.out, buf, sizeof buf);
    unsigned passed = 0, failed = 99;
    assert_int_equal(sscanf(buf, "%u passed, %u failed", &passed, &failed), 2);
    assert_true(passed >= 2);
    assert_int_equal(failed, 0);
    done(&r);
}

static void test_test_backend_option_restricts_and_is_checked(void **state)
{
    result r = kforge("test", "--backend", "cpu", SRC "/kernels/cases/saxpy_3.case", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "PASS saxpy_3 [cpu]"));
    assert_null(strstr(r.out, "skipped:"));
    char buf[256];
    assert_string_equal(last_line(r.out, buf, sizeof buf), "1 passed, 0 failed, 0 skipped");
    done(&r);
    setenv("KF_LIBCUDA", "/nonexistent/libcuda.so.1", 1);   /* no driver, even on a GPU machine */
    r = kforge("test", "--backend", "ptx", SRC "/kernels/cases/saxpy_3.case", NULL);
    unsetenv("KF_LIBCUDA");
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "kforge test: error: --backend ptx was asked for but is not available: "));
    assert_null(strstr(r.out, "PASS"));
    done(&r);
    r = kforge("test", SRC "/kernels/cases/saxpy_3.case", tmp("missing.case"), NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no such case file or directory"));
    assert_null(strstr(r.out, "PASS"));   /* checked before anything runs */
    done(&r);
    r = kforge("test", "--backend", "gpu", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "expected cpu, cuda or ptx"));
    done(&r);
    r = kforge("test", "--frobnicate", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "unknown option '--frobnicate'"));
    done(&r);
}

static void test_test_failing_case_exits_1(void **state)
{
    float want[3] = {1, 2, 3};
    write_npy(tmp("wrong.npy"), KF_S_F32, want, 3);
    write_text(tmp("wrong.case"), "kernel " SRC "/kernels/saxpy.kf saxpy\nbackends cpu\narg a=1\narg x=zeros(3)\n"
                                  "arg y=zeros(3)\narg n=3\nexpect y wrong.npy abs=0.5\n");
    result r = kforge("test", tmp("wrong.case"), NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.out, "FAIL wrong [cpu] y[0]: got 0, want 1"));
    assert_non_null(strstr(r.out, "3 of 3 elements differ"));
    char buf[256];
    assert_string_equal(last_line(r.out, buf, sizeof buf), "0 passed, 1 failed, 0 skipped");
    done(&r);
}

static void test_test_expected_error_case_passes(void **state)
{
    result r = kforge("test", SRC "/kernels/cases/saxpy_out_of_bounds.case", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "PASS saxpy_out_of_bounds [cpu] expected error:"));
    char buf[256];
    assert_string_equal(last_line(r.out, buf, sizeof buf), "1 passed, 0 failed, 0 skipped");
    done(&r);
}

static void test_test_too_small_buffer_is_refused_on_every_backend(void **state)
{
    setenv("KF_LIBCUDA", KF_BINARY_DIR "/tests/libkf_mockcuda.so", 1);   /* cuda and ptx without a GPU */
    result r = kforge("test", SRC "/kernels/cases/saxpy_size_too_small.case", NULL);
    unsetenv("KF_LIBCUDA");
    assert_int_equal(r.status, 0);
    static const char *const backends[] = {"cpu", "cuda", "ptx"};
    for (int b = 0; b < 3; b++) {
        char want[300];
        snprintf(want, sizeof want, "PASS saxpy_size_too_small [%s] expected error: parameter 'x': the buffer holds 64 "
                                    "elements but the kernel indexes 100 (size x = n); nothing was launched\n", backends[b]);
        assert_non_null(strstr(r.out, want));
    }
    char buf[256];
    assert_string_equal(last_line(r.out, buf, sizeof buf), "3 passed, 0 failed, 0 skipped");
    done(&r);
}

/* With `expect` instead of `error`, the refusal is a FAIL and the kernel
 * never runs: the interpreter's out-of-bounds report does not appear. */
static void test_test_declared_size_is_checked_before_launch(void **state)
{
    write_text(tmp("small.case"), "kernel " SRC "/kernels/saxpy.kf saxpy\nbackends cpu\narg a=1\narg x=zeros(10)\n"
                                  "arg y=zeros(12)\narg n=12\nsize x = n\nsize y = n\nexpect y small.npy\n");
    float want[12] = {0};
    write_npy(tmp("small.npy"), KF_S_F32, want, 12);
    result r = kforge("test", tmp("small.case"), NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.out, "FAIL small [cpu] parameter 'x': the buffer holds 10 elements but the kernel indexes 12 "
                                  "(size x = n); nothing was launched\n"));
    assert_null(strstr(r.out, "out-of-bounds"));
    done(&r);
}

static void test_test_bad_size_declarations_name_the_problem(void **state)
{
    static const struct { const char *line, *want; } bad[] = {
        {"size z = n", "small2.case:7: kernel 'saxpy' has no buffer parameter 'z'"},
        {"size a = n", "small2.case:7: kernel 'saxpy' has no buffer parameter 'a'"},
        {"size x = a", "small2.case:7: size expression 'a', column 2: 'a' is not an integer scalar parameter of kernel 'saxpy'"},
        {"size x = m", "'m' is not an integer scalar parameter of kernel 'saxpy'"},
        {"size x = n - 13", "small2.case:7: size expression 'n - 13', column 7: the difference is negative"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "kernel " SRC "/kernels/saxpy.kf saxpy\nbackends cpu\narg a=1\narg x=zeros(12)\n"
                                    "arg y=zeros(12)\narg n=12\n%s\nerror anything\n", bad[i].line);
        write_text(tmp("small2.case"), text);
        result r = kforge("test", tmp("small2.case"), NULL);
        assert_int_equal(r.status, 1);
        if (!strstr(r.out, bad[i].want)) fprintf(stderr, "%s: got %s\n", bad[i].line, r.out);
        assert_non_null(strstr(r.out, bad[i].want));
        done(&r);
    }
}

static void test_test_count_with_a_grid_is_a_case_error(void **state)
{
    write_text(tmp("count.case"), "kernel " SRC "/kernels/saxpy.kf saxpy\nbackends cpu\narg a=1\narg x=zeros(3)\n"
                                  "arg y=zeros(3)\narg n=3\ncount 3\nerror anything\n");
    result r = kforge("test", tmp("count.case"), NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.out, "FAIL count: 'count' has no effect: kernel 'saxpy' has a grid in its @schedule\n"));
    done(&r);
}

static void test_test_bad_case_file_is_reported(void **state)
{
    write_text(tmp("broken.case"), "kernel x.kf k\nexpect y\n");
    result r = kforge("test", tmp("broken.case"), NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.out, "broken.case:2: expected"));
    assert_non_null(strstr(r.err, "kforge test: error: "));
    done(&r);
    r = kforge("test", tmp("nothing-here"), NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no such case file or directory"));
    done(&r);
    r = kforge("test", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "saxpy.kf' is not a .case file; expected a .case file or a directory of them"));
    done(&r);
    mkdir(tmp("empty"), 0700);
    r = kforge("test", tmp("empty"), NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "kforge test: error: no .case files in directory '"));
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_arguments_is_usage_error_2),
        cmocka_unit_test(test_unknown_command_says_what_was_expected),
        cmocka_unit_test(test_help_exits_0),
        cmocka_unit_test(test_check_library_kernel_exits_0),
        cmocka_unit_test(test_check_every_kernel_file_exits_0),
        cmocka_unit_test(test_check_error_is_file_line_col_with_source_and_caret),
        cmocka_unit_test(test_check_reports_several_errors_each_with_its_caret),
        cmocka_unit_test(test_check_syntax_error_exits_1),
        cmocka_unit_test(test_check_missing_file_is_usage_error),
        cmocka_unit_test(test_emit_bad_target_and_arch_say_what_was_expected),
        cmocka_unit_test(test_emit_ir_prints_the_kernel),
        cmocka_unit_test(test_emit_and_run_take_the_optimisation_level),
        cmocka_unit_test(test_emit_ptx_to_file_has_the_entry),
        cmocka_unit_test(test_emit_verify_assembles_or_reports_missing_ptxas),
        cmocka_unit_test(test_emit_unwritable_output_says_why),
        cmocka_unit_test(test_emit_unknown_kernel_lists_the_kernels),
        cmocka_unit_test(test_run_saxpy_with_npy_in_and_out),
        cmocka_unit_test(test_run_generators_and_printed_outputs),
        cmocka_unit_test(test_run_dtype_mismatch_names_the_parameter),
        cmocka_unit_test(test_run_vector_length_mismatch_names_the_parameter),
        cmocka_unit_test(test_run_argument_errors_say_what_was_expected),
        cmocka_unit_test(test_run_shared_option_sizes_the_dynamic_array),
        cmocka_unit_test(test_bad_define_is_a_usage_error_naming_it),
        cmocka_unit_test(test_run_compile_error_exits_1),
        cmocka_unit_test(test_run_out_of_bounds_is_runtime_error_3_at_its_line),
        cmocka_unit_test(test_run_fault_names_its_location_once_with_caret),
        cmocka_unit_test(test_run_reports_a_rebuilt_cache_entry_as_a_warning),
        cmocka_unit_test(test_run_cuda_backend_runs_or_reports_a_device_error),
        cmocka_unit_test(test_test_prints_one_line_per_case_and_a_summary),
        cmocka_unit_test(test_test_backend_option_restricts_and_is_checked),
        cmocka_unit_test(test_test_failing_case_exits_1),
        cmocka_unit_test(test_test_expected_error_case_passes),
        cmocka_unit_test(test_test_too_small_buffer_is_refused_on_every_backend),
        cmocka_unit_test(test_test_declared_size_is_checked_before_launch),
        cmocka_unit_test(test_test_bad_size_declarations_name_the_problem),
        cmocka_unit_test(test_test_count_with_a_grid_is_a_case_error),
        cmocka_unit_test(test_test_bad_case_file_is_reported),
    };
    return cmocka_run_group_tests(tests, cli_setup, cli_teardown);
}
