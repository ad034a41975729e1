/* The kforge command line given bad input or losing its output, run as a
 * program (path in $KFORGE). Each test is named for the bad input and
 * asserts the exit status and the message: files that are not regular
 * files (/dev/zero, a FIFO, a directory) or are too large; outputs that
 * cannot be written (a full disk, simulated with RLIMIT_FSIZE; a missing
 * directory; stdout on /dev/full) leave no partial file and exit 3; two
 * outputs to one file; a module with no kernel on every emit target;
 * numbers with a leading zero; malformed .npy and .case files (exit 2,
 * naming the file and the problem); a FIFO or /dev/zero at cache entries
 * and a cache directory that is a file or too long; a failing driver call
 * (mock libcuda); an empty first buffer as the element count; grid
 * expressions that overflow; and the interpreter's work bound. (`bench`
 * is tests/test_cli_bench.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>

#include "cli_run.h"

#define SRC KF_SOURCE_DIR

static bool has(const char *text, const char *want)
{
    if (strstr(text, want)) return true;
    fprintf(stderr, "expected '%s' in:\n%s\n", want, text);
    return false;
}

/* Files in tmpdir whose name starts with prefix. */
static int count_files(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    if (d) closedir(d);
    return n;
}

/* A kernel without a grid (it runs over --count or its first buffer). */
static const char *counted_kf(void)
{
    const char *p = tmp("counted.kf");
    write_text(p, "@schedule(block = 64)\nkernel counted(x: &[f32], y: &mut [f32]) {\n"
                  "    let i = global_id.x;\n    y[i] = x[i] * 2.0;\n}\n");
    return p;
}

/* ---- inputs that are not regular files ------------------------------------ */

static void test_check_dev_zero_is_refused_without_reading(void **state)
{
    result r = kforge("check", "/dev/zero", NULL);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "kforge check: error: '/dev/zero' is a character device; kforge reads only regular files\n");
    done(&r);
}

static void test_check_fifo_and_directory_are_refused_without_blocking(void **state)
{
    assert_int_equal(mkfifo(tmp("pipe.kf"), 0600), 0);
    result r = kforge("check", tmp("pipe.kf"), NULL);   /* no writer: reading it would block for ever */
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "pipe.kf' is a FIFO (named pipe); kforge reads only regular files"));
    done(&r);
    r = kforge("check", tmpdir, NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "' is a directory; kforge reads only regular files"));
    done(&r);
}

static void test_check_source_over_the_size_limit_is_refused(void **state)
{
    int fd = open(tmp("huge.kf"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)65 << 20), 0);   /* sparse: costs no disk */
    close(fd);
    result r = kforge("check", tmp("huge.kf"), NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "huge.kf' is too large: 68157440 bytes (kforge reads at most 67108864 bytes from such a file)"));
    done(&r);
}

static void test_run_npy_argument_from_dev_zero_is_refused(void **state)
{
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=@/dev/zero", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "kforge run: error: parameter 'x': '/dev/zero' is a character device; kforge reads only regular files"));
    done(&r);
}

/* ---- outputs that cannot be written ------------------------------------------ */

static const char *saxpy_big[] = {"run", SRC "/kernels/saxpy.kf", "a=2", "x=iota(10000)", "y=zeros(10000)", "n=10000"};

/* run -o y=out with a 4096-byte file size limit (the 40 KB .npy cannot fit). */
static result run_saxpy_limited(const char *out)
{
    char oa[600];
    snprintf(oa, sizeof oa, "y=%s", out);
    const char *argv[] = {getenv("KFORGE"), saxpy_big[0], saxpy_big[1], saxpy_big[2], saxpy_big[3], saxpy_big[4],
                          saxpy_big[5], "-o", oa, NULL};
    return kforge_argv(&(run_opts){.fsize = 4096}, argv);
}

static void test_run_output_on_a_full_disk_is_error_3_and_keeps_the_old_file(void **state)
{
    const char *out = tmp("y.npy");
    write_text(out, "the previous output\n");
    result r = run_saxpy_limited(out);
    assert_int_equal(r.status, 3);
    char want[700];
    snprintf(want, sizeof want, "kforge run: error: cannot write '%s': File too large\n", out);
    assert_string_equal(r.err, want);
    done(&r);
    char *kept = slurp(out);
    assert_string_equal(kept, "the previous output\n");   /* not replaced by a truncated .npy */
    free(kept);
    assert_int_equal(count_files(".tmp-"), 0);            /* and no partial temporary left */
    unlink(out);
    r = run_saxpy_limited(out);
    assert_int_equal(r.status, 3);
    assert_int_equal(access(out, F_OK), -1);               /* no file at all rather than part of one */
    done(&r);
}

static void test_emit_output_on_a_full_disk_is_error_3_and_keeps_the_old_file(void **state)
{
    const char *out = tmp("k.ptx");
    write_text(out, "old ptx\n");
    const char *argv[] = {getenv("KFORGE"), "emit", "-o", out, SRC "/kernels/softmax.kf", NULL};
    result r = kforge_argv(&(run_opts){.fsize = 1024}, argv);
    assert_int_equal(r.status, 3);
    assert_true(has(r.err, "k.ptx': File too large"));
    done(&r);
    char *kept = slurp(out);
    assert_string_equal(kept, "old ptx\n");
    free(kept);
    assert_int_equal(count_files(".tmp-"), 0);
}

static void test_run_output_into_a_missing_directory_is_error_3(void **state)
{
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=iota(4)", "y=zeros(4)", "n=4", "-o",
                      "y=/nonexistent-dir/y.npy", NULL);
    assert_int_equal(r.status, 3);
    assert_string_equal(r.err, "kforge run: error: cannot write '/nonexistent-dir/y.npy': No such file or directory\n");
    done(&r);
}

static void test_run_two_outputs_to_one_file_are_refused(void **state)
{
    char a[600], b[600];
    snprintf(a, sizeof a, "y=%s", tmp("one.npy"));
    snprintf(b, sizeof b, "x=%s/./one.npy", tmpdir);
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=iota(4)", "y=zeros(4)", "n=4", "-o", a, "-o", b, NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "name the same file: it would keep only one of them; give each output its own file"));
    assert_int_equal(access(tmp("one.npy"), F_OK), -1);   /* refused before anything ran */
    done(&r);
}

static void test_run_and_emit_to_a_full_stdout_are_error_3(void **state)
{
    run_opts full = {.out = "/dev/full"};
    result r = kforge_with(&full, "run", SRC "/kernels/saxpy.kf", "a=1", "x=iota(4)", "y=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 3);
    assert_string_equal(r.err, "kforge run: error: writing to stdout failed: No space left on device\n");
    done(&r);
    r = kforge_with(&full, "emit", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 3);
    assert_true(has(r.err, "kforge emit: error: writing to stdout failed: "));
    done(&r);
    r = kforge_with(&full, "test", SRC "/kernels/cases/saxpy_3.case", NULL);
    assert_int_equal(r.status, 3);
    done(&r);
}

/* ---- emit of a module with no kernel -------------------------------------------- */

static void test_emit_module_without_a_kernel_is_one_error_on_every_target(void **state)
{
    const char *f = tmp("nokernel.kf");
    write_text(f, "const X: u32 = 1;\n");
    static const char *const targets[] = {"cuda", "ptx", "ir"};
    char want[700];
    snprintf(want, sizeof want, "%s:1:1: error: no kernel to emit: the module declares no `kernel`\n", f);
    for (int t = 0; t < 3; t++) {
        result r = kforge("emit", "--target", targets[t], f, NULL);
        assert_int_equal(r.status, 1);
        assert_string_equal(r.out, "");
        if (strncmp(r.err, want, strlen(want)) != 0) fail_msg("--target %s: %s", targets[t], r.err);
        done(&r);
    }
}

/* ---- numbers: one syntax -------------------------------------------------------------- */

static void test_leading_zero_numbers_are_errors_everywhere(void **state)
{
    result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=iota(010)", "y=zeros(10)", "n=10", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "bad generator 'iota(010)'"));
    assert_true(has(r.err, "a leading zero as in 010 is not allowed"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=iota(10)", "y=zeros(10)", "n=010", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "parameter 'n': '010' is not a number, true or false (numbers are decimal, 0x hex or 0b binary"));
    done(&r);
    r = kforge("run", counted_kf(), "--count", "010", "x=iota(10)", "y=zeros(10)", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "bad --count '010'"));
    done(&r);
    r = kforge("check", "-D", "BLOCK=0256", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "-D BLOCK=0256"));
    done(&r);
    /* the same numbers without the leading zero, in every accepted spelling */
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=iota(0x1_0)", "y=zeros(0b10000)", "n=16", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "y: &mut [f32], 16 elements = [0, 1, 2, 3, 4, 5, 6, 7, ...]"));
    done(&r);
}

/* ---- malformed .npy and .case files ------------------------------------------------------ */

/* A v1 .npy file with the given header dict and `data` bytes. */
static void write_raw_npy(const char *path, const char *dict, size_t data)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    size_t hlen = strlen(dict) + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)hlen, (unsigned char)(hlen >> 8)};
    fwrite(pre, 1, 10, f);
    fputs(dict, f);
    fputc('\n', f);
    for (size_t i = 0; i < data; i++) fputc(0, f);
    fclose(f);
}

static void test_run_npy_with_a_malformed_descr_is_usage_error_naming_the_file(void **state)
{
    static const char *const bad[] = {"<f4x", "<f 4"};
    for (int i = 0; i < 2; i++) {
        char dict[200], xa[600];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (4,), }", bad[i]);
        write_raw_npy(tmp("bad.npy"), dict, 16);
        snprintf(xa, sizeof xa, "x=@%s", tmp("bad.npy"));
        result r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", xa, "y=zeros(4)", "n=4", NULL);
        assert_int_equal(r.status, 2);
        char want[700];
        snprintf(want, sizeof want, "kforge run: error: parameter 'x': %s: unsupported .npy dtype '%s'\n", tmp("bad.npy"),
                 bad[i]);
        assert_string_equal(r.err, want);
        done(&r);
    }
}

/* A case of saxpy over 4 elements with `extra` appended. */
static const char *saxpy_case(const char *name, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text, "kernel %s/kernels/saxpy.kf saxpy\nbackends cpu\narg a=1\narg x=iota(4)\n"
                                "arg y=zeros(4)\narg n=4\n%s", SRC, extra);
    write_text(tmp(name), text);
    return tmp(name);
}

/* `kforge test` of the case exits 2 with `want` (after "path:") on stderr. */
static void case_is_usage_error(const char *name, const char *extra, const char *want)
{
    const char *path = saxpy_case(name, extra);
    result r = kforge("test", path, NULL);
    char full[1200];
    snprintf(full, sizeof full, "kforge test: error: %s:%s", path, want);
    if (r.status != 2 || !strstr(r.err, full)) fail_msg("%s: status %d, stderr:\n%s\nwant %s", name, r.status, r.err, full);
    done(&r);
}

static void test_case_count_minus_one_is_an_error_at_its_line(void **state)
{
    case_is_usage_error("count.case", "count -1\nerror x\n", "7: expected 'count N' with N > 0");
    case_is_usage_error("count0.case", "count 010\nerror x\n", "7: expected 'count N' with N > 0");
}

static void test_case_line_with_more_than_16_fields_is_an_error(void **state)
{
    case_is_usage_error("fields.case",
                        "expect y y.npy ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 ulp=1 abs=-5\n",
                        "7: more than 16 fields on one line");
}

static void test_case_negative_tolerance_is_an_error(void **state)
{
    case_is_usage_error("abs.case", "expect y y.npy abs=-5\n", "7: expected a tolerance abs=A, rel=R or ulp=U (non-negative)");
    case_is_usage_error("nan.case", "expect y y.npy rel=nan\n", "7: expected a tolerance");
}

static void test_case_repeated_kernel_line_is_an_error(void **state)
{
    case_is_usage_error("twice.case", "kernel other.kf other\nerror x\n",
                        "7: a second 'kernel' line (the first is line 1): a case has one");
}

static void test_case_with_a_malformed_expected_npy_is_usage_error(void **state)
{
    write_raw_npy(tmp("want.npy"), "{'descr': '<f4x', 'fortran_order': False, 'shape': (4,), }", 16);
    char extra[700];
    snprintf(extra, sizeof extra, "expect y %s\n", tmp("want.npy"));
    const char *path = saxpy_case("badwant.case", extra);
    result r = kforge("test", path, NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "want.npy: unsupported .npy dtype '<f4x'"));
    assert_true(has(r.out, "0 passed, 1 failed"));
    done(&r);
}

/* ---- the disk cache -------------------------------------------------------------------------- */

static const char *mock_driver(const char *cache)
{
    const char *mock = KF_BINARY_DIR "/tests/libkf_mockcuda.so";
    assert_int_equal(access(mock, R_OK), 0);
    mkdir(cache, 0700);
    setenv("KFORGE_CACHE_DIR", cache, 1);
    setenv("KF_LIBCUDA", mock, 1);
    return mock;
}

/* The stand-in libcuda (tests/mock/mock_cuda.c) really computes saxpy, so
 * the ptx path runs here without a GPU. */
static result run_ptx_saxpy(void)
{
    return kforge("run", SRC "/kernels/saxpy.kf", "--backend", "ptx", "a=1", "x=iota(4)", "y=zeros(4)", "n=4", NULL);
}

static void test_run_with_a_fifo_or_dev_zero_at_cache_entries_rebuilds_without_hanging(void **state)
{
    const char *cache = tmp("cache");
    mock_driver(cache);
    result r = run_ptx_saxpy();
    assert_int_equal(r.status, 0);
    done(&r);
    for (int round = 0; round < 2; round++) {
        char cmd[800];
        snprintf(cmd, sizeof cmd, "cd %s && for f in *.kfc; do rm \"$f\" && %s \"$f\"; done", cache,
                 round ? "ln -s /dev/zero" : "mkfifo");
        assert_int_equal(system(cmd), 0);
        r = run_ptx_saxpy();   /* would block reading the FIFO, or read /dev/zero without end */
        assert_int_equal(r.status, 0);
        assert_true(has(r.out, "y: &mut [f32], 4 elements = [0, 1, 2, 3]"));
        assert_true(has(r.err, round ? "is a character device; kforge reads only regular files); removed and rebuilt"
                                     : "is a FIFO (named pipe); kforge reads only regular files); removed and rebuilt"));
        done(&r);
    }
    unsetenv("KFORGE_CACHE_DIR");
    unsetenv("KF_LIBCUDA");
}

static void test_run_with_the_cache_directory_a_file_still_builds(void **state)
{
    write_text(tmp("cachefile"), "not a directory\n");
    mock_driver(tmp("unused"));
    setenv("KFORGE_CACHE_DIR", tmp("cachefile"), 1);
    result r = run_ptx_saxpy();
    unsetenv("KFORGE_CACHE_DIR");
    unsetenv("KF_LIBCUDA");
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "[0, 1, 2, 3]"));
    assert_true(has(r.err, "kforge run: warning: cannot create the cache directory "));
    assert_true(has(r.err, "cachefile: Not a directory; the build goes on uncached"));
    done(&r);
}

static void test_run_with_a_failing_driver_call_names_it_and_exits_3(void **state)
{
    mock_driver(tmp("cache-launch"));
    setenv("MOCKCUDA_FAIL", "cuLaunchKernelEx", 1);   /* the mock is sm_90: a programmatic dependent launch */
    result r = run_ptx_saxpy();
    unsetenv("MOCKCUDA_FAIL");
    unsetenv("KFORGE_CACHE_DIR");
    unsetenv("KF_LIBCUDA");
    assert_int_equal(r.status, 3);
    assert_true(has(r.err, "kforge run: error: cuLaunchKernelEx failed: CUDA_ERROR_UNKNOWN (999): mock: injected fault ("));
    assert_string_equal(r.out, "");
    done(&r);
}

static void test_cache_commands_with_an_over_long_cache_dir_are_usage_errors(void **state)
{
    char longdir[5000];
    int n = snprintf(longdir, sizeof longdir, "%s/", tmpdir);
    memset(longdir + n, 'x', sizeof longdir - 1 - (size_t)n);
    longdir[sizeof longdir - 1] = 0;
    setenv("KFORGE_CACHE_DIR", longdir, 1);
    static const char *const sub[] = {"stats", "verify", "clear"};
    for (int i = 0; i < 3; i++) {
        result r = kforge("cache", sub[i], NULL);
        assert_int_equal(r.status, 2);
        assert_string_equal(r.err, "kforge cache: error: the cache directory from KFORGE_CACHE_DIR is longer than the "
                                   "4095 bytes a path may have; set KFORGE_CACHE_DIR to a shorter one\n");
        done(&r);
    }
    unsetenv("KFORGE_CACHE_DIR");
}

/* ---- grids ------------------------------------------------------------------------------------ */

static void test_run_grid_expression_that_wraps_is_an_error_naming_it(void **state)
{
    const char *f = tmp("wrap.kf");
    write_text(f, "@schedule(block = 256, grid = cdiv(n * 2, 256))\nkernel twice(o: &mut [u32], n: u32) {\n"
                  "    if global_id.x == 0 { o[0] = n; }\n}\n");
    result r = kforge("run", f, "o=zeros(1)", "n=2147483649", NULL);   /* n * 2 wraps to 2 in u32 */
    assert_int_equal(r.status, 2);
    char want[700];
    snprintf(want, sizeof want, "%s:1:31: error: kernel 'twice': grid.x = cdiv((n * 2), 256) overflows for these "
                                "arguments: (n * 2) does not fit u32 (a grid expression must not wrap)\n", f);
    if (strncmp(r.err, want, strlen(want)) != 0) fail_msg("got:\n%s", r.err);
    done(&r);
    r = kforge("run", f, "o=zeros(1)", "n=1000", NULL);
    assert_int_equal(r.status, 0);
    done(&r);
}

static void test_run_near_empty_kernel_over_a_huge_grid_stops_at_the_work_limit(void **state)
{
    const char *f = tmp("tiny.kf");
    write_text(f, "@schedule(block = 1024, grid = (g, h))\nkernel tiny(o: &mut [u32], g: u32, h: u32) {\n"
                  "    if thread_id.x == 5000 { o[0] = 1; }\n}\n");
    setenv("KFORGE_INTERP_MAX_STEPS", "1000000", 1);
    result r = kforge("run", f, "o=zeros(1)", "g=65535", "h=65535", NULL);   /* 4.4e12 threads */
    unsetenv("KFORGE_INTERP_MAX_STEPS");
    assert_int_equal(r.status, 3);
    assert_true(has(r.err, "error: kernel tiny: the launch did more work than the interpreter allows (1000000 steps: "
                           "instructions, plus 8 per block and thread started); an endless loop, or a grid too large to "
                           "interpret? (KFORGE_INTERP_MAX_STEPS=N raises the limit), stopped in block ("));
    assert_true(has(r.err, "tiny.kf:2:8: error: "));   /* at the kernel: no instruction was past the limit */
    done(&r);
}

/* ---- element counts ----------------------------------------------------------------------- */

static void test_run_empty_first_buffer_says_so(void **state)
{
    write_raw_npy(tmp("empty.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 0);
    char xa[600];
    snprintf(xa, sizeof xa, "x=@%s", tmp("empty.npy"));
    result r = kforge("run", counted_kf(), xa, "y=zeros(4)", NULL);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "kforge run: error: kernel 'counted' has no grid in its @schedule, so it runs over as many "
                               "elements as its first buffer 'x' holds, and that buffer is empty (0 elements): give a "
                               "non-empty buffer or --count N\n");
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_dev_zero_is_refused_without_reading),
        cmocka_unit_test(test_check_fifo_and_directory_are_refused_without_blocking),
        cmocka_unit_test(test_check_source_over_the_size_limit_is_refused),
        cmocka_unit_test(test_run_npy_argument_from_dev_zero_is_refused),
        cmocka_unit_test(test_run_output_on_a_full_disk_is_error_3_and_keeps_the_old_file),
        cmocka_unit_test(test_emit_output_on_a_full_disk_is_error_3_and_keeps_the_old_file),
        cmocka_unit_test(test_run_output_into_a_missing_directory_is_error_3),
        cmocka_unit_test(test_run_two_outputs_to_one_file_are_refused),
        cmocka_unit_test(test_run_and_emit_to_a_full_stdout_are_error_3),
        cmocka_unit_test(test_emit_module_without_a_kernel_is_one_error_on_every_target),
        cmocka_unit_test(test_leading_zero_numbers_are_errors_everywhere),
        cmocka_unit_test(test_run_npy_with_a_malformed_descr_is_usage_error_naming_the_file),
        cmocka_unit_test(test_case_count_minus_one_is_an_error_at_its_line),
        cmocka_unit_test(test_case_line_with_more_than_16_fields_is_an_error),
        cmocka_unit_test(test_case_negative_tolerance_is_an_error),
        cmocka_unit_test(test_case_repeated_kernel_line_is_an_error),
        cmocka_unit_test(test_case_with_a_malformed_expected_npy_is_usage_error),
        cmocka_unit_test(test_run_with_a_fifo_or_dev_zero_at_cache_entries_rebuilds_without_hanging),
        cmocka_unit_test(test_run_with_the_cache_directory_a_file_still_builds),
        cmocka_unit_test(test_run_with_a_failing_driver_call_names_it_and_exits_3),
        cmocka_unit_test(test_cache_commands_with_an_over_long_cache_dir_are_usage_errors),
        cmocka_unit_test(test_run_empty_first_buffer_says_so),
        cmocka_unit_test(test_run_grid_expression_that_wraps_is_an_error_naming_it),
        cmocka_unit_test(test_run_near_empty_kernel_over_a_huge_grid_stops_at_the_work_limit),
    };
    return cmocka_run_group_tests(tests, cli_setup, cli_teardown);
}
