/* `kforge bench` (tools/cmd_bench.c, bench_run.c, bench_case.c) in CI,
 * without a GPU: the argument parsing, the bench-file reader and its errors
 * at path:line, the library's bench files (every one compiles and binds,
 * and the issue-8 shapes, byte counts and targets are there), a FILE that
 * is not a kernel refused before any device is opened (the driver path
 * points nowhere, so opening one would be a different error), and, on the
 * stand-in libcuda (tests/mock/mock_cuda.c): the rows of a single kernel
 * and of a two-step sequence sharing buffers, registers from the driver, a
 * spilling kernel, a fault naming its step, variants and sweeps with the
 * best one named, exit statuses (0 met, 1 missed or spills, 3 fault) and
 * the JSON document, checked to be valid JSON with every field, raw CUDA-C
 * and PTX steps (run on their own path, reported skipped on the other). Mock
 * timings mean nothing: no test asserts a time, only what depends on the
 * bytes given (a target missed by a factor of millions, or met by as much). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ctype.h>

#include "cli_run.h"

#define SRC KF_SOURCE_DIR
#define MOCK KF_BINARY_DIR "/tests/libkf_mockcuda.so"

static bool has(const char *text, const char *want)
{
    if (strstr(text, want)) return true;
    fprintf(stderr, "expected '%s' in:\n%s\n", want, text);
    return false;
}

static int count_of(const char *text, const char *want)
{
    int n = 0;
    for (const char *p = strstr(text, want); p; p = strstr(p + 1, want)) n++;
    return n;
}

/* No driver at all: any attempt to open a device is exit 3 "no CUDA driver". */
static void no_driver(void) { setenv("KF_LIBCUDA", "/nonexistent/libcuda.so.1", 1); }

static void mock_driver(void)
{
    assert_int_equal(access(MOCK, R_OK), 0);
    setenv("KF_LIBCUDA", MOCK, 1);
    setenv("KFORGE_CACHE_DIR", tmp("cache"), 1);
}

/* A saxpy whose kernel has another name (the mock computes only `saxpy`,
 * faults after `wild`, and reports local memory for a name with "spill"). */
static const char *named_saxpy(const char *name)
{
    char text[600], file[64];
    snprintf(text, sizeof text,
             "const BLOCK: u32 = 256;\n"
             "@schedule(block = BLOCK, grid = cdiv(n, BLOCK))\n"
             "kernel %s(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
             "    let i = global_id.x;\n"
             "    if i < n { y[i] = a * x[i] + y[i]; }\n"
             "}\n",
             name);
    snprintf(file, sizeof file, "%s.kf", name);
    write_text(tmp(file), text);
    return tmp(file);
}

/* ---- before any device ------------------------------------------------------------------------ */

static void test_file_that_does_not_compile_is_error_1_before_any_device(void **state)
{
    no_driver();
    write_text(tmp("bad.kf"), "kernel broken(x: &[f32]) {\n    let y = ;\n}\n");
    result r = kforge("bench", tmp("bad.kf"), "-k", "broken", NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(r.err, "bad.kf:2:13: error: "));
    assert_null(strstr(r.err, "driver"));
    assert_string_equal(r.out, "");
    done(&r);
    write_text(tmp("notes.txt"), "these are notes, not a kernel\n");
    r = kforge("bench", tmp("notes.txt"), NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(r.err, "notes.txt:1:1: error: "));
    assert_null(strstr(r.err, "driver"));
    done(&r);
}

static void test_file_with_several_kernels_or_missing_arguments_is_error_2_before_any_device(void **state)
{
    no_driver();
    result r = kforge("bench", SRC "/kernels/features/ops.kf", NULL);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "kforge bench: error: " SRC "/kernels/features/ops.kf has 2 kernels; choose one with -k "
                               "KERNEL: ops_i32 ops_widths\n");
    done(&r);
    r = kforge("bench", SRC "/kernels/saxpy.kf", "a=2", "x=rand(64,1)", "n=64", NULL);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "kforge bench: error: kernel 'saxpy': missing argument for parameter 'y' (&mut [f32]): "
                               "give y=@file.npy, zeros(N), rand(N,SEED) or iota(N)\n");
    done(&r);
    r = kforge("bench", SRC "/kernels/saxpy.kf", "a=2", "x=rand(64,1)", "y=zeros(64)", "n=64", "--bytes", "4*m", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "bytes: size expression '4*m', column 4: 'm' is not an integer scalar parameter of any step"));
    done(&r);
}

/* Each bad command line is exit 2 with what was expected, before any device. */
static void test_argument_errors_say_what_was_expected(void **state)
{
    no_driver();
    static const struct { const char *args[4]; const char *want; } cases[] = {
        {{"--runs", "0"}, "bad --runs '0': expected an integer from 1 to 100000"},
        {{"--backend", "cpu"}, "unknown backend 'cpu': bench times cuda or ptx"},
        {{"--l2", "hot"}, "bad --l2 'hot': expected cold (flushed) or warm"},
        {{"--budget", "0.5"}, "bad --budget '0.5': expected milliseconds, 1 to 60000"},
        {{"--warmup", "x"}, "bad --warmup 'x': expected an integer from 1 to 100000"},
        {{"--bytes", "n*"}, "bad --bytes: size expression 'n*', column 3: expected a number"},
        {{"--target", "-1"}, "bad --target '-1': expected a ratio to copy, 0 < RATIO <= 100"},
        {{"-k", "saxpy"}, "need a kernel FILE; vary a library bench with --variant '-D NAME=VALUE' or --sweep"},
        {{"--variant", "ROWS"}, "bad --variant: variant 'ROWS': 'ROWS' is neither -D NAME=VALUE nor NAME=SPEC"},
        {{"--sweep", "ROWS=1,,2"}, "bad --sweep 'ROWS=1,,2': expected NAME=V1,V2,..."},
        {{"--grid", "0,1"}, "bad --grid '0,1': expected X[,Y[,Z]] with positive integers"},
        {{"--frobnicate"}, "unknown option '--frobnicate'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = kforge("bench", cases[i].args[0], cases[i].args[1], NULL);
        if (r.status != 2) fprintf(stderr, "%s: status %d\n%s", cases[i].args[0], r.status, r.err);
        assert_int_equal(r.status, 2);
        assert_true(has(r.err, "kforge bench: error: "));
        assert_true(has(r.err, cases[i].want));
        assert_true(has(r.err, "usage: kforge bench FILE"));
        done(&r);
    }
    result r = kforge("bench", SRC "/kernels/saxpy.kf", "--bytes", "1", "--flops", "1", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "give --bytes or --flops, not both"));
    done(&r);
}

static void test_unknown_bench_name_lists_the_benches(void **state)
{
    no_driver();
    result r = kforge("bench", "no_such_bench", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "kforge bench: error: 'no_such_bench' names no bench, kernel or .kf file of the bench files "
                           "read; their benches are: "));
    assert_true(has(r.err, " gemv_f16_14336x4096 "));
    assert_true(has(r.err, " sdpa_decode_b1_l8192 "));
    done(&r);
    r = kforge("bench", "--list", "saxpy.kf", "reduce_sum", NULL);   /* a step's .kf base name, a kernel name */
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "reduce_sum_f32_2^28  default  bytes 1073741824  target 0.90  startup 0.05  steps: reduce_sum\n"
                               "reduce_sum_f32_33MB  default  bytes 33554432  steps: reduce_sum\n"
                               "reduce_sum_f32_117MB  default  bytes 117440512  steps: reduce_sum\n"
                               "saxpy_f32_2^28  default  bytes 3221225472  target 0.90  startup 0.05  steps: saxpy\n"
                               "saxpy_f32_67MB  default  bytes 67108860  steps: saxpy\n"
                               "5 benches\n");
    done(&r);
    r = kforge("bench", "--list", "missing.kf", "-k", "k", NULL);   /* with kernel arguments: a FILE */
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "missing.kf"));
    done(&r);
}

/* tools/probes/read_ceiling.bench, the harness's read ceiling at the KV-cache
 * sizes (issue 8's sdpa rows): its benches compile and bind with no device, the
 * bytes are the bytes its kernel reads, and the kernel runs on the
 * interpreter with every read in bounds in both layouts. */
static void test_read_ceiling_probe_lists_and_runs(void **state)
{
    no_driver();
    result r = kforge("bench", SRC "/tools/probes/read_ceiling.bench", "--list", "--variants", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "read_ceiling_34MB  default  bytes 33554432  steps: read_ceiling\n"));
    assert_true(has(r.out, "read_ceiling_134MB  interleaved=0  bytes 134217728  steps: read_ceiling\n"));
    done(&r);
    for (int layout = 0; layout < 2; layout++) {
        r = kforge("run", SRC "/tools/probes/read_ceiling.kf", "-k", "read_ceiling", "x=rand(131072,1)", "out=zeros(512)",
                   "rows=1024", "nsplit=8", layout ? "interleaved=1" : "interleaved=0", "--backend", "cpu", NULL);
        assert_int_equal(r.status, 0);
        done(&r);
    }
}

/* The issue-8 targets (and issue 4's four kernels, issue 10's decode
 * layers, issue 11's tensor-core GEMV) with their shapes, read from
 * kernels/bench and compiled and bound with no device: the byte count each
 * line shows is the bench file's formula evaluated. */
static void test_library_bench_files_hold_the_issue_targets(void **state)
{
    no_driver();
    result r = kforge("bench", "--list", NULL);
    assert_int_equal(r.status, 0);
    static const char *const want[] = {
        "saxpy_f32_2^28  default  bytes 3221225472  target 0.90  startup 0.05  steps: saxpy\n",
        "reduce_sum_f32_2^28  default  bytes 1073741824  target 0.90  startup 0.05  steps: reduce_sum\n",
        "softmax_f16_8192x8192  default  bytes 268435456  target 0.80  startup 0.05  steps: softmax_f16\n",
        "rmsnorm_f16_8192x8192  default  bytes 268451840  target 0.80  startup 0.05  steps: rmsnorm\n",
        "gemv_f16_14336x4096  default  bytes 117477376  target 0.90  steps: gemv_f16_f16_f16\n",
        "q4k_gemv_f32x_128256x4096  default  bytes 296031232  target 0.80  steps: q4k_gemv\n",
        "q4k_q8_gemv_128256x4096  default  bytes 296019456  target 0.85  steps: q4k_q8_gemv_f32\n",
        "q4k_q8_gemv_14336x4096  default  bytes 33092096  steps: q4k_q8_gemv_f32\n",
        "sdpa_decode_b1_l8192  default  bytes 34627588  target 0.70  steps: sdpa_decode_split sdpa_decode_combine\n",
        "sdpa_decode_b4_l8192  default  bytes 135340048  target 0.85  steps: sdpa_decode_split sdpa_decode_combine\n",
        "sdpa_decode_b1_l32768  default  bytes 135290884  target 0.85  steps: sdpa_decode_split sdpa_decode_combine\n",
        "rope_neox_t4096_h32_d128  default  bytes 67125248  target 0.90  steps: rope_neox\n",
        "silu_mul_f16_2^27  default  bytes 805306368  target 0.90  steps: silu_mul\n",
        "add_rmsnorm_f16_8192x8192  default  bytes 536887296  target 0.90  steps: add_rmsnorm\n",
        "decode_layer_f16_l4096  default  bytes 454406156  target 0.80  steps: add_rmsnorm gemv_f16_f16_f16 "
        "rope_qkv_neox sdpa_decode_split sdpa_decode_combine gemv_f16_f16_f16_acc add_rmsnorm gemv_f16_f16_f16 "
        "silu_mul gemv_f16_f16_f16_acc\n",
        "decode_layer_q4k_l4096  default  bytes 140941836  target 0.80  steps: add_rmsnorm q8_quantize_f16 "
        "q4k_q8_gemv_f16 rope_qkv_neox",
        "tc_gemv_f16_b8_14336x4096  default  bytes 117735424  flops 939524096  target 0.85  steps: tc_gemv_f16\n",
        "tc_gemv_f16_b16_14336x4096  default  bytes 118030336  flops 1879048192  target 0.85  steps: tc_gemv_f16\n",
        "wmma_gemm_f16f32_4096^3  default  bytes 134217728  flops 137438953472  steps: wmma_gemm\n",
        "gemm_f16_f32_4096^3  default  bytes 134217728  flops 137438953472  steps: gemm_f16_f32_nn\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) assert_true(has(r.out, want[i]));
    done(&r);
    r = kforge("bench", "--list", "--variants", "sdpa*", NULL);   /* every variant line compiles and binds */
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "sdpa_decode_b4_l8192  -D DIRECT=false -D TWARPS=2 split=512  bytes 136396816"));   /* the split variable, in the bytes too */
    assert_true(has(r.out, "sdpa_split_only_b1_l8192  -D SPEC=true  bytes 34091012  steps: sdpa_decode_split\n"));
    assert_true(has(r.out, "sdpa_split_rope_only_b1_l8192  default  bytes 34095620  steps: sdpa_decode_split_rope_neox\n"));
    assert_true(has(r.out, "sdpa_decode_b4_l8192_simt  default  bytes 138510352  steps: sdpa_decode_split_simt sdpa_decode_combine"));
    assert_int_equal(count_of(r.out, "sdpa_decode_b1_l8192 "), 20);
    done(&r);
    r = kforge("bench", "--list", "--variants", "tc_gemv*", NULL);   /* issue 11: the tensor-core GEMV's knobs */
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "tc_gemv_f16_b16_4096x14336  -D TG_WARPS=16  bytes 118030336  flops 1879048192  steps: "
                           "tc_gemv_f16\n"));
    assert_true(has(r.out, "tc_gemv_q4k_b16_128256x4096  default  bytes 303783936  flops 16810770432  steps: "
                           "tc_gemv_q4k_f32\n"));
    assert_int_equal(count_of(r.out, "tc_gemv_f16_b16_14336x4096 "), 8);
    done(&r);
}

/* --grid, --block and --shared are parsed once for run and bench
 * (kf_cli_kernel_arg): on run (cpu) they set the launch shape, and
 * dynamic shared memory past the device's limit is refused by name. */
static void test_launch_overrides_shared_with_run(void **state)
{
    write_text(tmp("ones.kf"), "@schedule(block = 256)\nkernel ones(y: &mut [u32]) {\n    y[global_id.x] = 1;\n}\n");
    result r = kforge("run", tmp("ones.kf"), "y=zeros(16)", "--grid", "1", "--block", "3", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "y: &mut [u32], 16 elements = [1, 1, 1, 0, 0, 0, 0, 0, ...]\n");
    done(&r);
    r = kforge("run", tmp("ones.kf"), "y=zeros(16)", "--grid=2", "--block=2", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "y: &mut [u32], 16 elements = [1, 1, 1, 1, 0, 0, 0, 0, ...]\n");
    done(&r);
    r = kforge("run", tmp("ones.kf"), "y=zeros(16)", "--grid", "2,1", "--block", "4,2", "--shared", "4294967295", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "exceed the device limit"));
    done(&r);
    r = kforge("run", tmp("ones.kf"), "y=zeros(16)", "--block", "4,x", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "kforge run: error: bad --block '4,x': expected X[,Y[,Z]] with positive integers"));
    done(&r);
    r = kforge("run", SRC "/kernels/saxpy.kf", "a=1", "x=zeros(8)", "y=zeros(8)", "n=8", "--grid", "1", "--count", "8", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "--count 8 has no effect: kernel 'saxpy' has a grid from --grid"));
    done(&r);
}

/* ---- the bench-file reader ---------------------------------------------------------------------- */

static void bench_file_error(const char *name, const char *text, const char *want)
{
    write_text(tmp(name), text);
    result r = kforge("bench", "--list", tmp(name), NULL);
    if (r.status != 2 || !strstr(r.err, want)) fprintf(stderr, "%s:\n%s", name, r.err);
    assert_int_equal(r.status, 2);
    char full[700];
    snprintf(full, sizeof full, "kforge bench: error: %s:%s", tmp(name), want);
    assert_true(has(r.err, full));
    done(&r);
}

static void test_bench_file_errors_name_the_line_and_what_was_expected(void **state)
{
    no_driver();
    bench_file_error("a.bench", "# comment\nkernel x.kf k\n", "2: expected 'bench NAME' before anything else");
    bench_file_error("b.bench", "bench b\narg n=1\n", "2: 'arg' belongs to a step: put it after a 'kernel FILE KERNEL' line");
    bench_file_error("c.bench", "bench c\nkernel x.kf k\nbench c\nkernel x.kf k\n",
                     "3: a second bench named 'c' (the first is at ");
    bench_file_error("d.bench", "bench d\nkernel x.kf k\ntarget fast\n",
                     "3: expected 'target RATIO' with 0 < RATIO <= 100 (e.g. target 0.9)");
    bench_file_error("e.bench", "bench e\nkernel x.kf k\nbytes 2*(m\n", "3: size expression '2*(m', column 5: expected ')'");
    bench_file_error("f.bench", "bench f\nset n=1\n\nbench g\nkernel x.kf k\n", "1: this bench has no 'kernel FILE KERNEL' line");
    bench_file_error("g.bench", "bench g\nkernel x.kf k\nrepeat 3\n", "3: expected one of: bench NAME, define NAME=VALUE...");
    bench_file_error("h.bench", "bench h\nkernel x.kf k\nvariant -D\n", "3: variant '-D': '-D' is neither -D NAME=VALUE nor NAME=SPEC");
    bench_file_error("i.bench", "bench i\nkernel x.kf k\nbytes 1\nbytes 2\n", "4: a second 'bytes' line: a bench has one");
    bench_file_error("j.bench", "bench bad/name\n", "1: expected 'bench NAME' (letters, digits, _ . - ^)");
    bench_file_error("k.bench", "bench k\nkernel x.kf k\ngrid 0\n", "3: expected 'grid X[,Y,Z]' or 'block X[,Y,Z]' with positive integers");
    bench_file_error("l.bench", "bench l\nparams n: u32\n", "2: 'params' belongs to a step: put it after a 'kernel FILE KERNEL' line");
    bench_file_error("m.bench", "bench m\nkernel x.cu k\nparams n: u32\nparams m: u32\n",
                     "4: a second 'params' line: a step has one");
    bench_file_error("n.bench", "bench n\nkernel x.cu k\nparams\n", "3: expected 'params LIST'");
}

/* A bench file that reads well but does not prepare: exit 2 with want. */
static void bench_prepare_error(const char *name, const char *text, const char *want)
{
    write_text(tmp(name), text);
    result r = kforge("bench", "--list", tmp(name), NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, want));
    done(&r);
}

/* A raw CUDA-C step (kernel FILE.cu ENTRY, as a golden .case takes it):
 * its parameters from a `params` line or the file's `// kforge: params`
 * line, its block and grid from the bench; a missing block or parameter
 * list, a -D and a `params` line on a .kf step are refused before any
 * device. */
static void test_raw_kernel_steps_take_params_block_and_grid(void **state)
{
    no_driver();
    write_text(tmp("k.cu"), "extern \"C\" __global__ void fill(float *y, unsigned n) { y[threadIdx.x] = 1.0f; }\n");
    write_text(tmp("raw.bench"), "bench raw_fill\nkernel k.cu fill\nparams y: &mut [f32], n: u32\nblock 64\ngrid 2\n"
                                 "arg y=zeros(128) n=128\nbytes 4*n\n");
    result r = kforge("bench", "--list", tmp("raw.bench"), NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "raw_fill  default  bytes 512  steps: fill\n1 benches\n");
    done(&r);
    bench_prepare_error("noblock.bench", "bench nb\nkernel k.cu fill\nparams y: &mut [f32], n: u32\narg y=zeros(8) n=8\n",
                        "k.cu is a raw kernel: give its block with a 'block X[,Y,Z]' line");
    bench_prepare_error("noparams.bench", "bench np\nkernel k.cu fill\nblock 64\narg y=zeros(8) n=8\n",
                        "give the kernel's parameters with --params");
    bench_prepare_error("define.bench", "bench df\ndefine BLOCK=64\nkernel k.cu fill\nparams y: &mut [f32], n: u32\n"
                        "block 64\narg y=zeros(8) n=8\n", "-D BLOCK=64 applies to .kf kernels; ");
    char text[600];
    snprintf(text, sizeof text, "bench kp\nkernel %s saxpy\nparams a: f32\narg a=1.0 x=rand(4,1) y=zeros(4) n=4\n",
             SRC "/kernels/saxpy.kf");
    bench_prepare_error("kfparams.bench", text, "'params' (step 1) is for raw kernels (.cu, .ptx); ");
}

/* Two steps sharing `set` buffers: a shared buffer counts once in the
 * default bytes (y: 4 KiB written twice; x and x2 read once), and kernels
 * that disagree on a shared buffer's type are refused. */
static void test_sequence_shares_set_buffers_and_counts_them_once(void **state)
{
    no_driver();
    char text[1200];
    snprintf(text, sizeof text,
             "bench pair\n"
             "set n=1024 y=zeros(1024) a=2.0\n"
             "kernel %s saxpy\n"
             "arg x=rand(1024,1)\n"
             "kernel %s saxpy\n"
             "arg x=rand(1024,2)\n",
             SRC "/kernels/saxpy.kf", SRC "/kernels/saxpy.kf");
    write_text(tmp("pair.bench"), text);
    result r = kforge("bench", "--list", tmp("pair.bench"), NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "pair  default  bytes 16384  steps: saxpy saxpy\n1 benches\n");
    done(&r);
    write_text(tmp("half.kf"), "kernel halves(y: &mut [f16], n: u32) {}\n");
    snprintf(text, sizeof text,
             "bench clash\nset n=1024 y=zeros(1024) a=2.0\nkernel %s saxpy\narg x=rand(1024,1)\nkernel half.kf halves\n",
             SRC "/kernels/saxpy.kf");
    write_text(tmp("clash.bench"), text);
    r = kforge("bench", "--list", tmp("clash.bench"), NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "'set y' is shared by steps whose kernels disagree on it: [f32] of 1024 elements, then "
                           "[f16] of 1024 in kernel 'halves'"));
    done(&r);
    snprintf(text, sizeof text, "bench unused\nset q=1\nkernel %s saxpy\narg a=1.0 x=rand(4,1) y=zeros(4) n=4\n",
             SRC "/kernels/saxpy.kf");
    bench_prepare_error("unused.bench", text, "'set q=...' names no parameter of any step's kernel");
}

/* A variant's NAME=SPEC replaces the argument of that name (n: the bytes
 * follow), its -D reaches the compile, and a variant naming nothing bound is refused. */
static void test_variants_replace_arguments_and_defines(void **state)
{
    no_driver();
    result r = kforge("bench", "--list", SRC "/kernels/saxpy.kf", "a=2", "x=rand(1000,1)", "y=zeros(1000)", "n=1000",
                      "--bytes", "12*n", "--variant", "n=500", "--sweep", "BLOCK=64,128", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "saxpy  default  bytes 12000  steps: saxpy\n"
                               "saxpy  n=500  bytes 6000  steps: saxpy\n"
                               "saxpy  -D BLOCK=64  bytes 12000  steps: saxpy\n"
                               "saxpy  -D BLOCK=128  bytes 12000  steps: saxpy\n"
                               "4 benches\n");
    done(&r);
    r = kforge("bench", "--list", SRC "/kernels/saxpy.kf", "a=2", "x=rand(8,1)", "y=zeros(8)", "n=8", "--variant",
               "-D NO_SUCH=1", NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "NO_SUCH"));
    done(&r);
    r = kforge("bench", "--list", SRC "/kernels/saxpy.kf", "a=2", "x=rand(8,1)", "y=zeros(8)", "n=8", "--variant", "m=3",
               NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(r.err, "variant 'm=3' binds 'm', which no 'set' or 'arg' line of the bench binds"));
    done(&r);
}

/* ---- on the stand-in driver -------------------------------------------------------------------- */

static result bench_saxpy(const char *kf, const char *kernel, const char *bytes, const char *extra)
{
    return kforge("bench", kf, "-k", kernel, "a=2", "x=rand(4096,1)", "y=zeros(4096)", "n=4096", "--bytes", bytes,
                  "--target", "0.5", "--runs", "3", "--warmup", "1", extra, NULL);
}

static void test_kernel_rows_on_both_paths_with_registers_and_met_target(void **state)
{
    mock_driver();
    result r = bench_saxpy(SRC "/kernels/saxpy.kf", "saxpy", "1000000000000000", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "device: Mock GPU; copy bandwidth "));
    assert_true(has(r.out, "L2 flushed before each pass"));
    assert_true(has(r.out, "bench      path  median ms"));
    assert_int_equal(count_of(r.out, "\nsaxpy      cuda "), 1);
    assert_int_equal(count_of(r.out, "\nsaxpy      ptx  "), 1);
    assert_int_equal(count_of(r.out, "     3  40             met (>= 0.50)\n"), 2);
    assert_null(strstr(r.out, "host us/launch"));   /* only for the whole library */
    done(&r);
    r = bench_saxpy(SRC "/kernels/saxpy.kf", "saxpy", "1000000000000000", "--no-flush");
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "L2 warm (not flushed: --no-flush)"));
    done(&r);
}

static void test_missed_target_and_spills_exit_1(void **state)
{
    mock_driver();
    result r = bench_saxpy(SRC "/kernels/saxpy.kf", "saxpy", "1", "--backend=ptx");
    assert_int_equal(r.status, 1);
    assert_int_equal(count_of(r.out, "MISSED (>= 0.50)\n"), 1);
    assert_null(strstr(r.out, " cuda "));
    done(&r);
    r = bench_saxpy(named_saxpy("saxpy_spill"), "saxpy_spill", "1000000000000000", "--backend=ptx");
    assert_int_equal(r.status, 1);
    assert_true(has(r.out, "  40(local 48)   SPILLS\n"));
    done(&r);
}

static void test_fault_is_error_3_naming_its_step(void **state)
{
    mock_driver();
    char text[1200];
    snprintf(text, sizeof text,
             "bench faulty\nset a=1.0 n=64 x=rand(64,1) y=zeros(64)\nkernel %s saxpy\nkernel %s wild\n",
             SRC "/kernels/saxpy.kf", named_saxpy("wild"));
    write_text(tmp("faulty.bench"), text);
    result r = kforge("bench", tmp("faulty.bench"), "--backend", "ptx", "--runs", "2", NULL);
    assert_int_equal(r.status, 3);
    assert_true(has(r.out, "faulty     ptx  ERROR: step 2 (kernel 'wild'): "));
    assert_true(has(r.err, "kforge bench: faulty [ptx]: step 2 (kernel 'wild'): "));
    assert_true(has(r.err, "CUDA_ERROR_ILLEGAL_ADDRESS"));
    done(&r);
}

static void test_sweep_rows_and_the_best_variant(void **state)
{
    mock_driver();
    result r = kforge("bench", SRC "/kernels/saxpy.kf", "a=2", "x=rand(4096,1)", "y=zeros(4096)", "n=4096", "--backend",
                      "ptx", "--runs", "2", "--sweep", "BLOCK=64,128", "--variant", "-DBLOCK=32", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "\nsaxpy      ptx  default    "));
    assert_true(has(r.out, "\nsaxpy      ptx  -DBLOCK=32 "));
    assert_true(has(r.out, "\nsaxpy      ptx  -D BLOCK=64 "));
    assert_true(has(r.out, "\nsaxpy      ptx  -D BLOCK=128 "));
    assert_int_equal(count_of(r.out, "\nbest saxpy [ptx]: "), 1);
    done(&r);
}

/* ---- JSON -------------------------------------------------------------------------------------- */

/* A small JSON syntax checker: true when s holds exactly one value. */
static const char *json_value(const char *s);

static const char *json_ws(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
    return s;
}

static const char *json_string(const char *s)
{
    if (*s++ != '"') return NULL;
    for (; *s && *s != '"'; s++)
        if (*s == '\\' && !*++s) return NULL;
    return *s == '"' ? s + 1 : NULL;
}

static const char *json_list(const char *s, char close, bool object)
{
    s = json_ws(s + 1);
    if (*s == close) return s + 1;
    for (;;) {
        if (object) {
            s = json_string(json_ws(s));
            if (!s || *(s = json_ws(s)) != ':') return NULL;
            s++;
        }
        if (!(s = json_value(s))) return NULL;
        s = json_ws(s);
        if (*s == close) return s + 1;
        if (*s++ != ',') return NULL;
    }
}

static const char *json_value(const char *s)
{
    s = json_ws(s);
    if (*s == '{') return json_list(s, '}', true);
    if (*s == '[') return json_list(s, ']', false);
    if (*s == '"') return json_string(s);
    for (const char *lit = "true\0false\0null\0"; *lit; lit += strlen(lit) + 1)
        if (!strncmp(s, lit, strlen(lit))) return s + strlen(lit);
    char *end;
    strtod(s, &end);
    return end == s ? NULL : end;
}

static bool json_valid(const char *s)
{
    const char *end = json_value(s);
    return end && !*json_ws(end);
}

/* The library's raw wmma GEMM (kernels/raw/wmma_gemm.cu through NVRTC):
 * timed on the cuda path, and on the ptx path a row that says it does not
 * apply (exit 0, in the table and the JSON); a raw PTX kernel the other
 * way round. */
static void test_raw_rows_run_on_their_path_and_skip_the_other(void **state)
{
    mock_driver();
    result r = kforge("bench", "wmma_gemm_f16f32_2048^3", "--runs", "2", "--warmup", "1", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "\nwmma_gemm_f16f32_2048^3 cuda "));
    assert_true(has(r.out, "  40             report\n"));
    assert_true(has(r.out, "\nwmma_gemm_f16f32_2048^3 ptx  skipped, not applicable: raw CUDA-C runs on the cuda "
                           "backend (NVRTC) only\n"));
    done(&r);
    r = kforge("bench", "wmma_gemm_f16f32_2048^3", "--backend", "ptx", "--json", NULL);
    assert_int_equal(r.status, 0);
    assert_true(json_valid(r.out));
    assert_true(has(r.out, "\"backend\": \"ptx\", \"variant\": \"default\", \"status\": \"skipped\""));
    assert_true(has(r.out, "\"reason\": \"raw CUDA-C runs on the cuda backend (NVRTC) only\""));
    assert_null(strstr(r.out, "median_ms"));
    done(&r);
    write_text(tmp("axpy.bench"), "bench raw_axpy\nkernel " SRC "/kernels/raw/axpy.ptx raw_axpy\nblock 256\n"
                                  "arg a=3 x=rand(1000,1) y=rand(1000,2) n=1000\n");
    r = kforge("bench", tmp("axpy.bench"), "--runs", "2", "--warmup", "1", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(r.out, "\nraw_axpy   cuda skipped, not applicable: raw PTX runs on the ptx backend (the driver) only\n"));
    assert_true(has(r.out, "\nraw_axpy   ptx      "));
    done(&r);
}

static void test_json_is_valid_and_holds_every_field(void **state)
{
    mock_driver();
    result r = kforge("bench", SRC "/kernels/saxpy.kf", "a=2", "x=rand(4096,1)", "y=zeros(4096)", "n=4096", "--flops",
                      "2*n", "--runs", "7", "--warmup", "2", "--json", NULL);
    assert_int_equal(r.status, 0);
    assert_true(json_valid(r.out));
    static const char *const keys[] = {
        "\"device\": \"Mock GPU\"", "\"copy_gbps\": ", "\"l2_flush\": true", "\"l2_flush_bytes\": 4194304",
        "\"bench\": \"saxpy\"", "\"backend\": \"cuda\"", "\"backend\": \"ptx\"", "\"variant\": \"default\"",
        "\"status\": \"report\"", "\"bytes\": 49152", "\"flops\": 8192", "\"target\": null", "\"median_ms\": ",
        "\"min_ms\": ", "\"max_ms\": ", "\"runs\": 7", "\"warmup\": 2", "\"gbps\": ", "\"x_copy\": ", "\"tflops\": ",
        "\"steps\": [{\"kernel\": \"saxpy\", \"file\": \"" SRC "/kernels/saxpy.kf\", \"registers\": 40, "
        "\"local_bytes\": 0, \"static_shared\": 0}]",
        "\"exit\": 0\n}\n",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) assert_true(has(r.out, keys[i]));
    assert_null(strstr(r.out, "median ms"));   /* JSON alone on stdout */
    done(&r);
    r = kforge("bench", SRC "/kernels/saxpy.kf", "a=2", "x=rand(64,1)", "y=zeros(64)", "n=64", "--runs", "2",
               "--bytes", "1", "--target", "0.5", "--backend", "ptx", "--no-flush", "--json=" "", NULL);
    assert_int_equal(r.status, 2);   /* --json= with no path is not an option */
    done(&r);
    char opt[600];
    snprintf(opt, sizeof opt, "--json=%s", tmp("out.json"));
    r = kforge("bench", SRC "/kernels/saxpy.kf", "a=2", "x=rand(64,1)", "y=zeros(64)", "n=64", "--runs", "2", "--bytes",
               "1", "--target", "0.5", "--backend", "ptx", "--no-flush", opt, NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(r.out, "MISSED"));   /* the table on stdout, the JSON in the file */
    char *json = NULL;
    size_t len;
    kf_error e = {0};
    assert_int_equal(kf_read_file(tmp("out.json"), &json, &len, &e), KF_OK);
    assert_true(json_valid(json));
    assert_true(has(json, "\"status\": \"MISSED\""));
    assert_true(has(json, "\"l2_flush\": false"));
    assert_true(has(json, "\"exit\": 1"));
    free(json);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_that_does_not_compile_is_error_1_before_any_device),
        cmocka_unit_test(test_file_with_several_kernels_or_missing_arguments_is_error_2_before_any_device),
        cmocka_unit_test(test_argument_errors_say_what_was_expected),
        cmocka_unit_test(test_unknown_bench_name_lists_the_benches),
        cmocka_unit_test(test_launch_overrides_shared_with_run),
        cmocka_unit_test(test_library_bench_files_hold_the_issue_targets),
        cmocka_unit_test(test_read_ceiling_probe_lists_and_runs),
        cmocka_unit_test(test_bench_file_errors_name_the_line_and_what_was_expected),
        cmocka_unit_test(test_raw_kernel_steps_take_params_block_and_grid),
        cmocka_unit_test(test_sequence_shares_set_buffers_and_counts_them_once),
        cmocka_unit_test(test_variants_replace_arguments_and_defines),
        cmocka_unit_test(test_kernel_rows_on_both_paths_with_registers_and_met_target),
        cmocka_unit_test(test_missed_target_and_spills_exit_1),
        cmocka_unit_test(test_fault_is_error_3_naming_its_step),
        cmocka_unit_test(test_sweep_rows_and_the_best_variant),
        cmocka_unit_test(test_raw_rows_run_on_their_path_and_skip_the_other),
        cmocka_unit_test(test_json_is_valid_and_holds_every_field),
    };
    return cmocka_run_group_tests(tests, cli_setup, cli_teardown);
}
