/* The command line as a user meets it (issue 9, sections 3 and 5), run as
 * a program ($KFORGE): `kforge help CMD` and `CMD --help` print CMD's
 * usage on stdout and exit 0 for every command; `-o -` is stdout and FILE
 * `-` is stdin; `--` ends the options; unknown commands, kernels and
 * parameters get a "did you mean"; `kforge test -k PATTERN` and `-j N`
 * (the same listing, in order) and a summary that counts skipped runs; the
 * raw CUDA-C and PTX paths of `kforge run` (their usage errors, and on the
 * stand-in driver a run that goes through the disk cache); and `kforge
 * emit --target cubin`, which cuobjdump disassembles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_run.h"

#define SRC KF_SOURCE_DIR
#define MOCK KF_BINARY_DIR "/tests/libkf_mockcuda.so"

static bool has(const char *text, const char *what) { return strstr(text, what) != NULL; }

static const char *const commands[] = {"check", "emit", "run", "test", "bench", "cache", "devices"};

/* ---- help -------------------------------------------------------------------------------- */

/* `kforge help CMD` and `kforge CMD --help`: the same usage text, on
 * stdout, exit 0, for every command. */
static void test_help_for_every_command_is_its_usage_on_stdout(void **state)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "usage: kforge %s", commands[i]);
        result h = kforge("help", commands[i], NULL), d = kforge(commands[i], "--help", NULL);
        assert_int_equal(h.status, 0);
        assert_int_equal(d.status, 0);
        assert_memory_equal(h.out, want, strlen(want));
        assert_string_equal(h.out, d.out);
        assert_string_equal(h.err, "");
        assert_string_equal(d.err, "");
        done(&h);
        done(&d);
    }
    result r = kforge("help", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "kforge help [COMMAND]"));
    done(&r);
}

static void test_unknown_command_or_topic_says_did_you_mean(void **state)
{
    result r = kforge("tset", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "unknown command 'tset' (did you mean 'test'?)"));
    done(&r);
    r = kforge("help", "emti", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "unknown help topic 'emti' (did you mean 'emit'?)"));
    done(&r);
    r = kforge("cache", "stat", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "unknown subcommand 'stat' (did you mean 'stats'?)"));
    done(&r);
}

/* ---- stdin, stdout, -- ----------------------------------------------------------------- */

static void test_dash_is_stdin_and_o_dash_is_stdout(void **state)
{
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    result r = kforge_with(&(run_opts){.in = SRC "/kernels/saxpy.kf"}, "emit", "--target", "ir", "-o", "-", "-", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "kernel saxpy("));
    assert_true(has(r.out, "; <stdin>:"));   /* locations name the input */
    assert_int_equal(access("-", F_OK), -1);  /* no file named '-' */
    done(&r);
    r = kforge_with(&(run_opts){.in = SRC "/kernels/saxpy.kf"}, "check", "-", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "<stdin>: ok (1 kernel: saxpy)\n");
    done(&r);
    /* a .npy on stdout: -o NAME=- (and no summary mixed into it) */
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=2", "x=iota(4)", "y=zeros(4)", "n=4", "-o", "y=-", NULL);
    assert_int_equal(r.status, 0);
    assert_memory_equal(r.out, "\x93NUMPY", 6);
    assert_false(has(r.out, "elements ="));
    done(&r);
    assert_int_equal(chdir(cwd), 0);
}

/* After `--` every word is a FILE (or NAME=VALUE), even one that starts with '-'. */
static void test_double_dash_ends_the_options(void **state)
{
    char path[600];
    snprintf(path, sizeof path, "%s/-odd.kf", tmpdir);
    write_text(path, "kernel odd(y: &mut [u32]) { y[0] = 7; }\n");
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    result r = kforge("check", "-odd.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "unknown option '-odd.kf'"));
    done(&r);
    r = kforge("check", "--", "-odd.kf", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "-odd.kf: ok (1 kernel: odd)\n");
    done(&r);
    r = kforge("run", "--count", "1", "--", "-odd.kf", "y=zeros(1)", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "= [7]"));
    done(&r);
    r = kforge("check", "--", "--help", NULL);   /* a file named --help, not the help */
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "--help"));
    done(&r);
    assert_int_equal(chdir(cwd), 0);
}

static void test_unknown_kernel_and_parameter_say_did_you_mean(void **state)
{
    result r = kforge("emit", "-k", "sapxy", SRC "/kernels/saxpy.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "has no kernel 'sapxy' (did you mean 'saxpy'?); its kernels are: saxpy"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=2", "x=iota(4)", "y=zeros(4)", "nn=4", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "has no parameter 'nn' (did you mean 'n'?)"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=2", "x=iota(4)", "y=zeros(4)", "zzzzz=4", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "has no parameter 'zzzzz'; its parameters are (a: f32, x: &[f32], y: &mut [f32], n: u32)"));
    done(&r);
    /* a one-letter name one edit from another is a different name, not a typo of it */
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=2", "x=iota(4)", "y=zeros(4)", "n=4", "m=3", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "has no parameter 'm'; its parameters are"));
    done(&r);
}

/* ---- kforge test -k / -j / skipped ------------------------------------------------------- */

static void test_test_k_selects_cases_and_j_keeps_the_order(void **state)
{
    setenv("KF_LIBCUDA", "/nonexistent/libcuda.so.1", 1);   /* cpu only, here and on a GPU machine */
    result one = kforge("test", "-k", "saxpy_1*", SRC "/kernels/cases", NULL);
    result par = kforge("test", "-j", "3", "-k", "saxpy_1*", SRC "/kernels/cases", NULL);
    result sub = kforge("test", "-k", "rmsnorm", SRC "/kernels/cases", NULL);
    result none = kforge("test", "-k", "no_such_case", SRC "/kernels/cases", NULL);
    unsetenv("KF_LIBCUDA");
    assert_int_equal(one.status, 0);
    assert_true(has(one.out, "PASS saxpy_100000 [cpu]\n") || has(one.out, "PASS saxpy_100000 [cpu] "));
    assert_true(has(one.out, "PASS saxpy_100003 [cpu] "));
    assert_false(has(one.out, "saxpy_3"));
    assert_true(has(one.out, "\n2 passed, 0 failed, 4 skipped\n"));   /* cuda and ptx of two cases */
    assert_int_equal(par.status, 0);
    assert_string_equal(par.out, one.out);
    assert_int_equal(sub.status, 0);
    assert_true(has(sub.out, "PASS rmsnorm"));
    assert_false(has(sub.out, "saxpy"));
    assert_int_equal(none.status, 2);
    assert_true(has(none.err, "no case matches -k 'no_such_case'"));
    done(&one), done(&par), done(&sub), done(&none);
}

/* A raw kernel's case on the CPU: not applicable, by name, and counted. */
static void test_test_raw_case_is_not_applicable_on_the_cpu(void **state)
{
    result r = kforge("test", "--backend", "cpu", SRC "/kernels/cases/raw_wmma_gemm_16.case", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "SKIP raw_wmma_gemm_16 [cpu] not applicable: raw CUDA-C runs on the cuda backend (NVRTC) only\n"));
    assert_true(has(r.out, "\n0 passed, 0 failed, 1 skipped\n"));
    done(&r);
}

/* ---- raw CUDA-C and PTX ------------------------------------------------------------------ */

static const char raw_cu[] = "// kforge: params x: &mut [f32], n: u32\n"
                             "extern \"C\" __global__ void addone(float *x, unsigned n)\n"
                             "{ unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }\n";

static void test_run_raw_usage_errors_say_what_is_missing(void **state)
{
    const char *cu = tmp("addone.cu");
    write_text(cu, raw_cu);
    result r = kforge("run", cu, "--block", "64", "x=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "is raw CUDA-C: name its entry point with -k ENTRY"));
    done(&r);
    r = kforge("run", cu, "-k", "addone", "x=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "give its block with --block X[,Y,Z]"));
    done(&r);
    r = kforge("run", cu, "--backend", "cpu", "-k", "addone", "--block", "64", "x=zeros(4)", "n=4", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "--backend cpu: not applicable:"));
    done(&r);
    const char *bare = tmp("bare.ptx");
    write_text(bare, ".version 7.0\n.target sm_80\n.address_size 64\n");
    r = kforge("run", bare, "-k", "k", "--block", "1", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "give the kernel's parameters with --params"));
    done(&r);
    r = kforge("run", bare, "-k", "k", "--block", "1", "--params", "x: &[f17]", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "column 6: unexpected name 'f17'"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "--params", "x: &[f32]", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "--params gives a raw kernel's parameters"));
    done(&r);
}

/* `kforge devices` names the compiler that turns PTX into machine code: the
 * stand-in driver (99.0) is newer than any toolkit, so its own JIT, unless
 * KFORGE_JIT says otherwise; an unknown KFORGE_JIT is named. */
static void test_devices_name_the_ptx_compiler(void **state)
{
    setenv("KF_LIBCUDA", MOCK, 1);
    result r = kforge("devices", NULL);
    setenv("KFORGE_JIT", "nvjitlink", 1);
    result n = kforge("devices", NULL);
    setenv("KFORGE_JIT", "fast", 1);
    result u = kforge("devices", NULL);
    unsetenv("KFORGE_JIT");
    unsetenv("KF_LIBCUDA");
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "CUDA driver: 99.0"));
    assert_true(has(r.out, "PTX to machine code: the driver's JIT\n"));
    assert_true(has(n.out, "PTX to machine code: nvJitLink "));
    assert_true(has(u.out, "PTX to machine code: unknown (KFORGE_JIT must be driver or nvjitlink)"));
    done(&r), done(&n), done(&u);
}

/* The stand-in driver and NVRTC (tests/mock/mock_cuda.c), with the disk
 * cache in the test's folder `cache`; stand_ins_off undoes it. */
static void stand_ins_on(const char *cache)
{
    setenv("KFORGE_CACHE_DIR", tmp(cache), 1);
    setenv("KF_LIBCUDA", MOCK, 1);
    setenv("KF_LIBNVRTC", MOCK, 1);
}

static void stand_ins_off(void)
{
    unsetenv("KF_LIBCUDA");
    unsetenv("KF_LIBNVRTC");
    unsetenv("KFORGE_CACHE_DIR");
}

/* On the stand-in driver and NVRTC: the run binds and launches, and the
 * build lands in the disk cache (kforge cache stats counts it). */
static void test_run_raw_cuda_goes_through_the_disk_cache(void **state)
{
    assert_int_equal(access(MOCK, R_OK), 0);
    const char *cu = tmp("addone.cu");
    write_text(cu, raw_cu);
    stand_ins_on("rawcache");
    result r = kforge("run", cu, "-k", "addone", "--block", "64", "x=iota(5)", "n=5", "--time", NULL);
    result s = kforge("cache", "stats", NULL);
    result p = kforge("run", tmp("addone.cu"), "-k", "addone", "--block", "64", "--grid", "1", "--count", "5",
                      "x=iota(5)", "n=5", NULL);
    stand_ins_off();
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "(raw CUDA-C, Mock GPU)"));
    assert_true(has(r.out, "x: &mut [f32], 5 elements = ["));
    assert_int_equal(s.status, 0);
    assert_true(has(s.out, "entries:   1 "));
    assert_int_equal(p.status, 2);
    assert_true(has(p.err, "--count 5 has no effect: the grid comes from --grid"));
    done(&r), done(&s), done(&p);
}

/* On the stand-in driver and NVRTC (whose "PTX" holds the source): PTX with
 * the marks of NVVM's misread merged loads (here in a comment) is shown by
 * emit with a warning; run runs the raw kernel (nothing else builds it) and
 * warns that its results may be wrong, naming the PTX line. */
static void test_nvrtc_ptx_with_merged_lanes_warns(void **state)
{
    assert_int_equal(access(MOCK, R_OK), 0);
    const char *cu = tmp("merged.cu");
    char src[1024];
    snprintf(src, sizeof src, "/*\n\tld.shared.v4.u8 {%%rs1, %%rs2, %%rs3, %%rs4}, [w];\n%s*/\n%s",
             "\tcvt.s32.s16 %r1, %rs1;\n", raw_cu);
    write_text(cu, src);
    stand_ins_on("mergedcache");
    result e = kforge("emit", "--target", "ptx", cu, NULL);
    result r = kforge("run", cu, "-k", "addone", "--block", "64", "x=iota(5)", "n=5", NULL);
    stand_ins_off();
    assert_int_equal(e.status, 0);
    assert_true(has(e.out, ".entry addone("));
    assert_true(has(e.err, "merged.cu: NVRTC miscompiled it: its PTX line 4:"));
    assert_true(has(e.err, "sign-extended from 16 bits"));
    assert_int_equal(r.status, 0);
    assert_true(has(r.err, "kforge run: warning: NVRTC's PTX of addone.cu line 4:"));
    assert_true(has(r.err, "its results may be wrong"));
    done(&e), done(&r);
}

/* ---- emit --target cubin ----------------------------------------------------------------- */

/* cuobjdump on PATH or in the CUDA home, else NULL. */
static const char *cuobjdump(char *buf, size_t size)
{
    const char *home = getenv("KF_CUDA_HOME");
    snprintf(buf, size, "%s/bin/cuobjdump", home && *home ? home : "/usr/local/cuda");
    if (access(buf, X_OK) == 0) return buf;
    return system("command -v cuobjdump >/dev/null 2>&1") == 0 ? "cuobjdump" : NULL;
}

/* The cubin's SASS from cuobjdump -sass, in a heap string. */
static char *sass_of(const char *tool, const char *cubin)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "'%s' -sass '%s' > '%s' 2>&1", tool, cubin, tmp("sass.txt"));
    assert_int_equal(system(cmd), 0);
    return slurp(tmp("sass.txt"));
}

static void test_emit_cubin_is_machine_code_cuobjdump_reads(void **state)
{
    char buf[600];
    const char *tool = cuobjdump(buf, sizeof buf);
    result r = kforge("emit", "--target", "cubin", "--arch", "sm_90", "-o", tmp("saxpy.cubin"), SRC "/kernels/saxpy.kf", NULL);
    if (r.status == 3 && has(r.err, "nvJitLink is not available")) {
        printf("skipped: %s", r.err);
        done(&r);
        skip();
    }
    assert_int_equal(r.status, 0);
    char *bin = slurp(tmp("saxpy.cubin"));
    assert_memory_equal(bin, "\x7f" "ELF", 4);
    free(bin);
    done(&r);
    if (!tool) {
        printf("skipped: cuobjdump not found (PATH, $KF_CUDA_HOME/bin): the cubin was checked as an ELF only\n");
        skip();
    }
    char *sass = sass_of(tool, tmp("saxpy.cubin"));
    assert_true(has(sass, "Function : saxpy"));
    assert_true(has(sass, "FFMA"));
    free(sass);

    /* the raw WMMA tile through NVRTC: tensor-core instructions */
    r = kforge("emit", "--target", "cubin", "--arch", "sm_80", "-o", tmp("wmma.cubin"), SRC "/kernels/raw/wmma_gemm.cu", NULL);
    if (r.status == 3 && has(r.err, "NVRTC is not available")) {
        printf("skipped: %s", r.err);
        done(&r);
        skip();
    }
    assert_int_equal(r.status, 0);
    done(&r);
    sass = sass_of(tool, tmp("wmma.cubin"));
    assert_true(has(sass, "Function : wmma_gemm"));
    assert_true(has(sass, "HMMA"));
    free(sass);
}

static void test_emit_raw_file_targets(void **state)
{
    result r = kforge("emit", "--target", "ptx", SRC "/kernels/raw/axpy.ptx", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, ".visible .entry raw_axpy("));
    done(&r);
    r = kforge("emit", "--target", "ir", SRC "/kernels/raw/axpy.ptx", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "is raw PTX: it has PTX and a cubin (--target ptx|cubin), not kforge IR"));
    done(&r);
    /* a raw file with no kernel, or one that does not compile, is the file's error (exit 1), named */
    write_text(tmp("none.ptx"), ".version 8.0\n.target sm_90\n.address_size 64\n");
    r = kforge("emit", "--target", "ptx", tmp("none.ptx"), NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(r.err, "none.ptx:1:1: error: no kernel to emit: the PTX declares no .entry"));
    assert_string_equal(r.out, "");
    done(&r);
    write_text(tmp("bad.cu"), "extern \"C\" __global__ void k(float *x) {\n    x[0] = nope;\n}\n");
    r = kforge("emit", "--target", "ptx", tmp("bad.cu"), NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(r.err, "bad.cu(2): error: identifier \"nope\" is undefined"));
    done(&r);
    write_text(tmp("bad.ptx"), ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry e() { bogus; ret; }\n");
    r = kforge("emit", "--target", "cubin", "-o", tmp("bad.cubin"), tmp("bad.ptx"), NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(r.err, "bad.ptx: error: its PTX does not assemble for sm_90"));
    assert_true(has(r.err, "line 4"));
    done(&r);
}

static void test_help_topics_and_bench_flush_options(void **state)
{
    result r = kforge("help", "--help", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "kforge help [COMMAND]"));
    done(&r);
    r = kforge("help", "run", "emit", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "one topic at a time"));
    done(&r);
    r = kforge("bench", "--no-flush", "--l2", "cold", "saxpy_2^28", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "--l2 and --no-flush both given"));
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_for_every_command_is_its_usage_on_stdout),
        cmocka_unit_test(test_unknown_command_or_topic_says_did_you_mean),
        cmocka_unit_test(test_dash_is_stdin_and_o_dash_is_stdout),
        cmocka_unit_test(test_double_dash_ends_the_options),
        cmocka_unit_test(test_unknown_kernel_and_parameter_say_did_you_mean),
        cmocka_unit_test(test_test_k_selects_cases_and_j_keeps_the_order),
        cmocka_unit_test(test_test_raw_case_is_not_applicable_on_the_cpu),
        cmocka_unit_test(test_run_raw_usage_errors_say_what_is_missing),
        cmocka_unit_test(test_devices_name_the_ptx_compiler),
        cmocka_unit_test(test_run_raw_cuda_goes_through_the_disk_cache),
        cmocka_unit_test(test_nvrtc_ptx_with_merged_lanes_warns),
        cmocka_unit_test(test_emit_cubin_is_machine_code_cuobjdump_reads),
        cmocka_unit_test(test_emit_raw_file_targets),
        cmocka_unit_test(test_help_topics_and_bench_flush_options),
    };
    return cmocka_run_group_tests(tests, cli_setup, cli_teardown);
}
