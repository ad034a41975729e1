/* kforge-decode (tools/decode/) run as a program: the small model's decode
 * steps on the CPU device checked against the independent C reference
 * (f16 and q4k weights, graph and async modes), the three modes giving the
 * same tokens, a check that fails when a kernel is wrong (RoPE's angle
 * reduction broken with -D), the model file saved and loaded back (and a
 * truncated or foreign file refused), the CUDA path on the mock driver
 * (every mode, the bench and its targets, a failing graph instantiation
 * reported naming the driver call), --tp 2 and 4 over CPU devices against
 * one device and the reference, --tp on two mock GPUs through the mock NCCL
 * (its errors, and no NCCL at all), the profile's table (its rows add up
 * to the step, a GEMV's bytes are its matrix's), a batch of sequences
 * (--batch: every sequence of every step against the reference, at its own
 * position; its GEMVs on tc_gemv, the weights counted once; graph mode on
 * the mock driver with no allocation a step), and usage errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cli_run.h"

#define DECODE KF_BINARY_DIR "/kforge-decode"
#define MOCK KF_BINARY_DIR "/tests/libkf_mockcuda.so"
#define MOCKNCCL KF_BINARY_DIR "/tests/libkf_mocknccl.so"

/* Runs kforge-decode ($KFORGE is pointed at it) with the arguments. */
#define decode(...) kforge(__VA_ARGS__)

static bool has(const result *r, const char *want)
{
    if (strstr(r->out, want) || strstr(r->err, want)) return true;
    fprintf(stderr, "expected '%s' in:\n%s\n%s\n", want, r->out, r->err);
    return false;
}

/* The "tokens: ..." line of r. */
static char *tokens_of(const result *r)
{
    const char *t = strstr(r->out, "tokens:");
    if (!t) return strdup("(none)");
    return strndup(t, strcspn(t, "\n"));
}

/* a and b chose the same tokens. */
static void same_tokens(const result *a, const result *b)
{
    char *ta = tokens_of(a), *tb = tokens_of(b);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
}

/* The same, then both results freed. */
static void same_tokens_done(result *a, result *b)
{
    same_tokens(a, b);
    done(a);
    done(b);
}

static void check_against_reference(const char *weights, const char *mode, const char *steps)
{
    result r = decode("--small", "--backend", "cpu", "--weights", weights, "--mode", mode, "--steps", steps, "--check",
                      NULL);
    char want[96];
    snprintf(want, sizeof want, "check against the reference: %s steps, 0 failed", steps);
    if (r.status != 0 || !has(&r, want)) fail_msg("status %d:\n%s%s", r.status, r.out, r.err);
    assert_true(has(&r, "step 0: position 40, token "));
    assert_true(has(&r, "k, v cache rows at position 41"));
    done(&r);
}

static void small_f16_graph_steps_match_the_reference(void **state) { check_against_reference("f16", "graph", "2"); }
static void small_q4k_async_steps_match_the_reference(void **state) { check_against_reference("q4k", "async", "2"); }

/* RoPE's angle reduction broken (-D rope.TWO_PI_HI=6.2): the check fails,
 * naming the logits, exit 1. */
static void a_wrong_kernel_fails_the_check(void **state)
{
    result r = decode("--small", "--backend", "cpu", "--steps", "1", "--check", "-D", "rope.TWO_PI_HI=6.2", NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(&r, "FAIL: logits differ by more than the tolerance"));
    assert_true(has(&r, "check against the reference: 1 steps, 1 failed"));
    done(&r);
}

/* sync, async and graph run the same launches: the same tokens. */
static void every_mode_chooses_the_same_tokens(void **state)
{
    static const char *const modes[3] = {"sync", "async", "graph"};
    char *first = NULL;
    for (int i = 0; i < 3; i++) {
        result r = decode("--small", "--layers", "1", "--backend", "cpu", "--steps", "2", "--mode", modes[i], NULL);
        assert_int_equal(r.status, 0);
        assert_true(has(&r, "2 steps in "));
        assert_true(has(&r, "11 launches each"));   /* 1 + 7 per layer + 3: the norms and silu in the GEMVs */
        char *t = tokens_of(&r);
        if (first && strcmp(first, t)) fail_msg("%s gives '%s', sync '%s'", modes[i], t, first);
        if (!first) first = t;
        else free(t);
        done(&r);
    }
    free(first);
}

/* --fuse off (--unfused) launches the norms and silu·up apart (4 launches
 * more a layer with the final norm: 15) and, as the fused GEMVs make their x
 * with the same formulas and f16 roundings, chooses the same tokens and
 * passes the same check as --fuse on; f16 and q4k. The default (auto) is
 * on for f16, off for q4k. */
static void unfused_step_chooses_the_same_tokens(void **state)
{
    static const char *const weights[2] = {"f16", "q4k"};
    for (int w = 0; w < 2; w++) {
        result a = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "3",
                          "--check", "--fuse", "on", NULL);
        result b = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "3",
                          "--check", "--unfused", NULL);
        assert_int_equal(a.status, 0);
        assert_int_equal(b.status, 0);
        assert_true(has(&a, "check against the reference: 3 steps, 0 failed"));
        assert_true(has(&b, "check against the reference: 3 steps, 0 failed"));
        same_tokens_done(&a, &b);
    }
    result r = decode("--small", "--layers", "1", "--backend", "cpu", "--steps", "1", "--unfused", NULL);
    assert_true(has(&r, "15 launches each"));   /* 1 + 10 per layer + 4 */
    done(&r);
    r = decode("--small", "--layers", "1", "--backend", "cpu", "--steps", "1", "--weights", "q4k", NULL);
    assert_true(has(&r, "15 launches each"));   /* auto: q4k unfused */
    done(&r);
    r = decode("--small", "--layers", "1", "--backend", "cpu", "--steps", "1", "--fuse", "on", "--weights", "q4k", NULL);
    assert_true(has(&r, "11 launches each"));   /* 1 + 7 per layer + 3 */
    done(&r);
    for (int w = 0; w < 2; w++) {   /* --attn fused: one launch fewer a layer, the same tokens */
        result a = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "3",
                          "--check", NULL);
        result b = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "3",
                          "--check", "--attn", "fused", NULL);
        assert_true(has(&b, "check against the reference: 3 steps, 0 failed"));
        same_tokens_done(&a, &b);
        r = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "1", "--attn",
                   "fused", NULL);
        assert_true(has(&r, w ? "14 launches each" : "10 launches each"));   /* no combine launch */
        done(&r);
    }
    r = decode("--small", "--attn", "both", NULL);
    assert_int_not_equal(r.status, 0);
    assert_true(has(&r, "--attn 'both': expected fused or split"));
    done(&r);
    r = decode("--small", "--fuse", "maybe", NULL);
    assert_int_not_equal(r.status, 0);
    assert_true(has(&r, "--fuse 'maybe': expected auto, on, off, norm or glu"));
    done(&r);
}

/* --rope fused: rope_table once a step and sdpa_decode_split_rope_neox in
 * place of each layer's rope_qkv_neox + sdpa_decode_split (one launch fewer
 * a layer, one more a step: 17 against 18 at the small shape's 2 layers);
 * the same arithmetic, so the same tokens and a passing check, f16 and q4k,
 * a batch of 3 and over 2 CPU devices; --attn fused keeps rope_qkv_neox. */
static void fused_rope_chooses_the_same_tokens(void **state)
{
    static const char *const weights[2] = {"f16", "q4k"};
    for (int w = 0; w < 2; w++) {
        result a = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "2",
                          "--check", NULL);
        result b = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "2",
                          "--check", "--rope", "fused", NULL);
        assert_int_equal(b.status, 0);
        assert_true(has(&b, "check against the reference: 2 steps, 0 failed"));
        same_tokens_done(&a, &b);
    }
    result r = decode("--small", "--backend", "cpu", "--steps", "1", NULL);
    assert_true(has(&r, "18 launches each"));
    done(&r);
    r = decode("--small", "--backend", "cpu", "--steps", "1", "--rope", "fused", NULL);
    assert_true(has(&r, "17 launches each"));
    done(&r);
    r = decode("--small", "--backend", "cpu", "--steps", "1", "--rope", "fused", "--attn", "fused", NULL);
    assert_true(has(&r, "16 launches each"));   /* rope_qkv_neox and the fused attention: 1 + 6 per layer + 3 */
    done(&r);
    r = decode("--small", "--layers", "1", "--backend", "cpu", "--steps", "2", "--check", "--rope", "fused", "--batch",
               "3", "--context", "40,30,7", NULL);
    assert_true(has(&r, "check against the reference: 2 steps, 0 failed"));
    done(&r);
    r = decode("--small", "--layers", "1", "--backend", "cpu", "--steps", "2", "--check", "--rope", "fused", "--tp", "2",
               NULL);
    assert_true(has(&r, "check --tp 2 against --tp 1 and the reference: 2 steps, 0 failed"));
    done(&r);
    r = decode("--small", "--rope", "inline", NULL);
    assert_int_not_equal(r.status, 0);
    assert_true(has(&r, "--rope 'inline': expected fused or apart"));
    done(&r);
}

/* --fuse norm fuses the norms only (q4k: q4k_q8_gemv_rms_*) and launches
 * silu·up apart: 1 + 8 launches per layer + 3, the same tokens and check as
 * --fuse on, f16 and q4k. */
static void norm_only_fusion_chooses_the_same_tokens(void **state)
{
    static const char *const weights[2] = {"f16", "q4k"};
    for (int w = 0; w < 2; w++) {
        result a = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "3",
                          "--check", "--fuse", "on", NULL);
        result b = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "3",
                          "--check", "--fuse", "norm", NULL);
        assert_int_equal(b.status, 0);
        assert_true(has(&b, "check against the reference: 3 steps, 0 failed"));
        same_tokens_done(&a, &b);
        result r = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--steps", "1",
                          "--fuse", "norm", NULL);
        assert_true(has(&r, "12 launches each"));
        done(&r);
    }
}

/* --fuse glu (q4k) fuses the norms and makes silu·up's q8 blocks in the
 * gate/up GEMV (q4k_q8_gemv_rms_glu_q8), the down GEMV reading them: 1 + 7
 * launches per layer + 3, the same tokens and check as --fuse on. */
static void glu_fusion_chooses_the_same_tokens(void **state)
{
    result a = decode("--small", "--layers", "1", "--weights", "q4k", "--backend", "cpu", "--steps", "3", "--check",
                      "--fuse", "on", NULL);
    result b = decode("--small", "--layers", "1", "--weights", "q4k", "--backend", "cpu", "--steps", "3", "--check",
                      "--fuse", "glu", NULL);
    assert_int_equal(b.status, 0);
    assert_true(has(&b, "check against the reference: 3 steps, 0 failed"));
    same_tokens_done(&a, &b);
    result r = decode("--small", "--layers", "1", "--weights", "q4k", "--backend", "cpu", "--steps", "1", "--fuse",
                      "glu", "--profile", NULL);
    assert_true(has(&r, "each of its 11 launches"));
    assert_true(has(&r, "q4k_q8_gemv_rms_glu_q8"));
    assert_false(has(&r, "silu_mul_q8"));
    done(&r);
}

static void saved_model_loads_back_with_the_same_tokens(void **state)
{
    const char *path = tmp("model.kfd");
    result a = decode("--small", "--layers", "1", "--weights", "q4k", "--seed", "7", "--backend", "cpu", "--steps", "2",
                      "--save", path, NULL);
    assert_int_equal(a.status, 0);
    result b = decode("--model", path, "--seed", "7", "--backend", "cpu", "--steps", "2", "--context", "40", NULL);
    if (b.status != 0) fail_msg("%s%s", b.out, b.err);
    assert_true(has(&b, "q4k weights (" ));
    same_tokens_done(&a, &b);
    /* a truncated copy and a file of something else are refused, exit 2 */
    char *data;
    size_t len;
    kf_error e = {0};
    assert_int_equal(kf_read_file(path, &data, &len, &e), KF_OK);
    FILE *f = fopen(tmp("short.kfd"), "wb");
    assert_non_null(f);
    fwrite(data, 1, len - 64, f);
    fclose(f);
    free(data);
    result c = decode("--model", tmp("short.kfd"), "--backend", "cpu", NULL);
    assert_int_equal(c.status, 2);
    assert_true(has(&c, "truncated or not written by kforge-decode --save"));
    done(&c);
    write_text(tmp("other.kfd"), "not a model at all, but long enough to hold a header of sixty-four bytes......");
    result d = decode("--model", tmp("other.kfd"), NULL);
    assert_int_equal(d.status, 2);
    assert_true(has(&d, "is not a kforge-decode model file (no 'KFDECOD1' header)"));
    done(&d);
    result g = decode("--model", path, "--small", NULL);
    assert_int_equal(g.status, 2);
    assert_true(has(&g, "gives the shape and the weight type: drop --small"));
    done(&g);
    g = decode("--small", "--save", path, "--check", NULL);
    assert_int_equal(g.status, 2);
    assert_true(has(&g, "--save goes with a plain run"));
    done(&g);
}

/* The CUDA paths' host side on the mock driver (which computes no kernel:
 * the tokens are zeros): every mode runs, the bench measures and judges,
 * and a graph the driver cannot instantiate is an error naming the call.
 * The q4k step on the cuda path takes every module of it, with the step's
 * -D values, through the real NVRTC (where CI has it) and the device's
 * check of its PTX for NVVM's misread merged loads. */
static void mock_driver_runs_the_modes_and_the_bench(void **state)
{
    setenv("KF_LIBCUDA", MOCK, 1);
    result r = decode("--small", "--backend", "ptx", "--mode", "graph", "--steps", "2", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(&r, "tokens: 0 0"));
    done(&r);
    r = decode("--small", "--backend", "cuda", "--weights", "q4k", "--steps", "1", NULL);
    if (r.status != 0) fail_msg("%s%s", r.out, r.err);
    assert_true(has(&r, "tokens: 0"));
    done(&r);
    r = decode("--small", "--backend", "ptx", "--weights", "q4k", "--bench", "--warmup", "1", "--runs", "2", "--json",
               tmp("bench.json"), "--profile", NULL);
    if (r.status != 0) fail_msg("%s%s", r.out, r.err);
    assert_true(has(&r, "device: Mock GPU; backend ptx; copy bandwidth"));
    assert_true(has(&r, "floor: "));
    assert_true(has(&r, "graph mode x floor"));
    assert_true(has(&r, "launches timed alone in step order (device events, a busy kernel ahead), median of 2 steps"));
    /* the kernel column as wide as its longest name, q4k_q8_gemv_f16_acc */
    assert_true(has(&r, "\nstep                (every launch)              25 "));
    assert_true(has(&r, "allocations over the timed steps (re-targets, launches)       0.000 <= 0     met"));
    assert_non_null(strstr(r.out, "       25\n"));   /* launches, q4k unfused (--fuse auto): 1 + 10 per layer + 4 */
    done(&r);
    char *json = slurp(tmp("bench.json"));
    assert_non_null(strstr(json, "\"mode\": \"graph\""));
    assert_non_null(strstr(json, "\"weights\": \"q4k\""));
    free(json);
    setenv("MOCKCUDA_FAIL", "cuGraphInstantiateWithFlags", 1);
    r = decode("--small", "--backend", "ptx", "--steps", "1", NULL);
    unsetenv("MOCKCUDA_FAIL");
    assert_int_equal(r.status, 3);
    assert_true(has(&r, "cuGraphInstantiateWithFlags failed: CUDA_ERROR_UNKNOWN (999): mock: injected fault"));
    done(&r);
    unsetenv("KF_LIBCUDA");
}

/* --tp N on N CPU devices: the same tokens as one device and logits within
 * the reference's tolerance of both (the split sums f32 parts in another
 * order, nothing else), eagerly and replayed; TP 4 needs KV heads that split;
 * q4k at TP 2 (8 heads: each rank's 256 query columns whole Q4_K blocks). */
static void tensor_parallel_cpu_steps_match_one_device_and_the_reference(void **state)
{
    static const struct {
        const char *tp, *mode, *heads, *kv, *weights;
    } runs[] = {{"2", "sync", "4", "2", "f16"}, {"4", "graph", "8", "4", "f16"}, {"2", "async", "8", "2", "q4k"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        result r = decode("--small", "--layers", "1", "--heads", runs[i].heads, "--kv-heads", runs[i].kv, "--backend",
                          "cpu", "--tp", runs[i].tp, "--mode", runs[i].mode, "--steps", "2", "--weights",
                          runs[i].weights, "--check", NULL);
        char want[96];
        snprintf(want, sizeof want, "check --tp %s against --tp 1 and the reference: 2 steps, 0 failed", runs[i].tp);
        if (r.status != 0 || !has(&r, want)) fail_msg("run %zu: status %d:\n%s%s", i, r.status, r.out, r.err);
        assert_true(has(&r, "step 1: position 41, token "));
        assert_true(has(&r, "(--tp 1 "));
        assert_true(has(&r, "(reference "));
        done(&r);
    }
    result a = decode("--small", "--backend", "cpu", "--steps", "2", "--mode", "async", NULL);
    result b = decode("--small", "--backend", "cpu", "--steps", "2", "--mode", "async", "--tp", "2", NULL);
    assert_int_equal(a.status, 0);
    assert_int_equal(b.status, 0);
    assert_true(has(&b, "22 launches each and 5 collectives on each of 2 devices"));   /* + 2 adds per layer */
    same_tokens_done(&a, &b);
}

/* --tp on two GPUs of the mock driver with the mock NCCL: every mode runs
 * through NCCL (graph mode captures it on both streams); no NCCL, a failing
 * NCCL call or too few GPUs is an error naming it, exit 3; one GPU needs no NCCL. */
static void tensor_parallel_on_the_mock_driver_uses_nccl(void **state)
{
    setenv("KF_LIBCUDA", MOCK, 1);
    setenv("KF_LIBNCCL", MOCKNCCL, 1);
    setenv("MOCKCUDA_DEVICES", "2", 1);
    static const char *const modes[3] = {"sync", "async", "graph"};
    for (int i = 0; i < 3; i++) {
        result r = decode("--small", "--backend", i == 1 ? "ptx" : "cuda", "--tp", "2", "--mode", modes[i], "--steps",
                          "2", NULL);
        if (r.status != 0) fail_msg("%s: %s%s", modes[i], r.out, r.err);
        assert_true(has(&r, "tokens: 0 0"));
        assert_true(has(&r, "5 collectives on each of 2 devices"));
        done(&r);
    }
    /* the bench: kforge's all-reduce against NCCL's own (kf_comm_bench_bare), the floor, the targets */
    result bn = decode("--small", "--backend", "cuda", "--tp", "2", "--bench", "--warmup", "1", "--runs", "2", "--json",
                       tmp("tp.json"), NULL);
    if (bn.status != 0 && bn.status != 1) fail_msg("bench: %s%s", bn.out, bn.err);
    assert_true(has(&bn, "devices: 2 x Mock GPU; backend cuda; NCCL 22803"));
    assert_true(has(&bn, "all-reduce f16 [8192]                  16384"));
    assert_true(has(&bn, "floor per GPU: "));
    assert_true(has(&bn, "allocations over the timed steps                              0.000 <= 0     met"));
    done(&bn);
    char *json = slurp(tmp("tp.json"));
    assert_non_null(strstr(json, "\"tp\": 2"));
    assert_non_null(strstr(json, "\"nccl_us\": "));
    assert_null(strstr(json, "\"nccl_us\": -1"));
    free(json);
    setenv("MOCKNCCL_FAIL", "ncclAllReduce:3", 1);
    result r = decode("--small", "--backend", "cuda", "--tp", "2", "--mode", "async", "--steps", "1", NULL);
    unsetenv("MOCKNCCL_FAIL");
    assert_int_equal(r.status, 3);
    assert_true(has(&r, "ncclAllReduce failed: ncclSystemError (2): unhandled system error; mock nccl: injected fault"));
    done(&r);
    r = decode("--small", "--heads", "8", "--kv-heads", "4", "--backend", "cuda", "--tp", "4", "--steps", "1", NULL);
    assert_int_equal(r.status, 3);
    assert_true(has(&r, "GPU 2 does not exist"));
    done(&r);
    setenv("KF_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
    r = decode("--small", "--backend", "cuda", "--tp", "2", "--steps", "1", NULL);
    assert_int_equal(r.status, 3);
    assert_true(has(&r, "no NCCL: cannot load libnccl.so.2 (/nonexistent/libnccl.so.2"));
    assert_true(has(&r, "one GPU (--tp 1) and the cpu backend work without"));
    done(&r);
    r = decode("--small", "--backend", "cuda", "--tp", "1", "--steps", "1", NULL);
    assert_int_equal(r.status, 0);
    done(&r);
    unsetenv("KF_LIBNCCL");
    unsetenv("MOCKCUDA_DEVICES");
    unsetenv("KF_LIBCUDA");
}

/* One profile row: kernel, shape, launches, us/step, share %, us/launch,
 * MB/launch; false when the line is not a row. */
typedef struct {
    char kernel[32], shape[64];
    unsigned n;
    double us, share, us_launch, mb;
} prow;

static bool prow_parse(const char *line, prow *p)
{
    char shape[3][16] = {{0}};
    int got = sscanf(line, "%31s %15s %15s %15s", p->kernel, shape[0], shape[1], shape[2]);
    if (got < 2) return false;
    /* the shape label has one to three words; the numbers follow it */
    for (int w = 1; w <= 3; w++) {
        const char *s = line;
        for (int k = 0; k <= w; k++) s += strspn(s, " "), s += strcspn(s, " ");
        if (sscanf(s, "%u %lf %lf%% %lf %lf", &p->n, &p->us, &p->share, &p->us_launch, &p->mb) == 5) {
            snprintf(p->shape, sizeof p->shape, "%s%s%s%s%s", shape[0], w > 1 ? " " : "", w > 1 ? shape[1] : "",
                     w > 2 ? " " : "", w > 2 ? shape[2] : "");
            return true;
        }
    }
    return false;
}

/* --profile on the CPU device: one row per kernel and shape whose launches,
 * times and shares add up to the step's row; the QKV GEMV's bytes are its
 * matrix, the norm's weight, h and y; the norms and silu·up are made by the
 * GEMVs that read them (--fuse on: no rmsnorm, silu_mul or their q8 forms), and the
 * q4k step's attention output comes from its combine in 8 bits (no
 * q8_quantize launch). */
static void profile_rows_add_up_to_the_step(void **state)
{
    static const char *const weights[2] = {"f16", "q4k"};
    static const unsigned launches[2] = {11, 11};   /* 1 + 7 per layer + 3 */
    for (int w = 0; w < 2; w++) {
        result r = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--profile",
                          "--warmup", "0", "--runs", "1", "--fuse", "on", NULL);
        if (r.status != 0) fail_msg("%s%s", r.out, r.err);
        assert_true(has(&r, "(the interpreter's wall clock), median of 1 steps"));
        prow p, step;
        memset(&step, 0, sizeof step);
        unsigned n = 0, rows = 0;
        double us = 0, share = 0, qkv_mb = -1;
        unsigned fused = 0;   /* q4k: sdpa_combine_q8, the one 8-bit GEMV input made apart; no q8_quantize */
        for (const char *line = strstr(r.out, "\nkernel "); line && *line; line += strcspn(line + 1, "\n") + 1) {
            if (!prow_parse(line + 1, &p)) continue;
            if (!strcmp(p.kernel, "step")) {
                step = p;
                continue;
            }
            rows++, n += p.n, us += p.us, share += p.share;
            assert_true(fabs(p.us_launch * p.n - p.us) <= 0.01 * p.n + 1e-9);
            if (!strcmp(p.shape, w ? "512x256 narrow" : "512x256") && strstr(p.kernel, "gemv") && !strstr(p.kernel, "f32"))
                qkv_mb = p.mb;   /* q4k: fewer rows than DC_NARROW_ROWS, the narrow build */
            if (!strcmp(p.kernel, "sdpa_combine_q8")) fused += p.n;
            assert_null(strstr(p.kernel, "q8_quantize"));
            assert_false(!strncmp(p.kernel, "rmsnorm", 7) || !strncmp(p.kernel, "silu_mul", 8));
        }
        assert_int_equal(step.n, launches[w]);
        assert_int_equal(n, launches[w]);
        assert_true(rows >= 10);
        assert_true(fabs(us - step.us) <= 0.01 * rows);
        assert_true(fabs(share - 100.0) <= 0.05 * rows);
        assert_true(fabs(step.share - 100.0) < 1e-9);
        /* QKV: (4 + 2·2)·64 = 512 rows of 256: f16 262144 (q4k 512·144) + the
         * norm's weight 512 + h 512 + y 1024 bytes */
        assert_true(fabs(qkv_mb - (w ? 0.075776 : 0.264192)) < 6e-5);
        assert_int_equal(fused, w ? 1 : 0);
        done(&r);
    }
}

/* --narrow-rows N moves the q4k GEMVs of N rows or more to the default
 * build: at 300 the QKV GEMV (512 rows) leaves q4k_narrow, the output
 * projection (256) stays; the default (16384) has both narrow. The step
 * built with the narrow kernels' defaults off (-D q4k.EARLY=false, the entry
 * waits: decode's EARLY forms are the default) and this one choose the
 * default's tokens and pass the check. */
static void narrow_rows_chooses_the_q4k_build(void **state)
{
    result a = decode("--small", "--layers", "1", "--weights", "q4k", "--backend", "cpu", "--profile", "--warmup", "0",
                      "--runs", "1", NULL);
    result b = decode("--small", "--layers", "1", "--weights", "q4k", "--backend", "cpu", "--profile", "--warmup", "0",
                      "--runs", "1", "--narrow-rows", "300", NULL);
    assert_int_equal(a.status, 0);
    assert_int_equal(b.status, 0);
    assert_true(has(&a, " 512x256 narrow ") && has(&a, " 256x256 narrow "));
    assert_true(has(&b, " 512x256 ") && has(&b, " 256x256 narrow "));
    assert_null(strstr(b.out, " 512x256 narrow "));
    done(&a);
    done(&b);
    a = decode("--small", "--weights", "q4k", "--backend", "cpu", "--steps", "3", "--check", NULL);
    b = decode("--small", "--weights", "q4k", "--backend", "cpu", "--steps", "3", "--check", "--narrow-rows", "300",
               NULL);
    result c = decode("--small", "--weights", "q4k", "--backend", "cpu", "--steps", "3", "--check", "-D",
                      "q4k.EARLY=false", "-D", "decode.EARLY=false", NULL);
    assert_true(has(&b, "check against the reference: 3 steps, 0 failed"));
    assert_true(has(&c, "check against the reference: 3 steps, 0 failed"));
    same_tokens(&a, &c);
    same_tokens_done(&a, &b);
    done(&c);
}

/* kforge-decode's own -D defaults (model.c's step_defaults) are named by
 * the banner where the checkout's file declares the constant, and the
 * step's kernels are built with them: in a copy of the checkout whose
 * rope.kf compiles only with EARLY 2 and TRIGGER 1 (both declared, 0, if
 * the file did not have them), the step builds and passes the check, and
 * with -D rope.EARLY=0 it does not compile. */
static void step_defaults_apply_where_declared(void **state)
{
    char cmd[2048], rope[1024];
    const char *co = tmp("checkout");
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/tools/decode' && cp -r '%s/kernels' '%s/' && cp '%s/tools/decode/decode.kf' '%s/tools/decode/'",
             co, KF_SOURCE_DIR, co, KF_SOURCE_DIR, co);
    assert_int_equal(system(cmd), 0);
    snprintf(rope, sizeof rope, "%s/kernels/rope.kf", co);
    char *src = slurp(rope);
    bool knobs = strstr(src, "\nconst EARLY:") && strstr(src, "\nconst TRIGGER:");
    free(src);
    FILE *f = fopen(rope, "a");
    assert_non_null(f);
    if (!knobs) fputs("\nconst EARLY: u32 = 0;\nconst TRIGGER: u32 = 0;\n", f);
    fputs("\nconst DC_PROBE: u32 = 1 / ((EARLY / 2) * TRIGGER);\n", f);
    fclose(f);
    result r = decode("--small", "--layers", "1", "--backend", "cpu", "--steps", "2", "--check", "--kernels", co, NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(&r, "kernel defaults: gemv.EARLY=true gemv.TRIGGER=2 q4k.EARLY=true q4k.TRIGGER=2"));
    assert_true(has(&r, " decode.EARLY=true rope.EARLY=2 rope.TRIGGER=1"));
    assert_true(has(&r, "check against the reference: 2 steps, 0 failed"));
    done(&r);
    r = decode("--small", "--layers", "1", "--backend", "cpu", "--steps", "1", "--kernels", co, "-D", "rope.EARLY=0",
               NULL);
    assert_int_not_equal(r.status, 0);
    assert_true(has(&r, "division by zero in a constant expression"));
    done(&r);
}

/* --batch 4 (f16, graph mode) and 3 (q4k, async, one layer) at contexts that take 1
 * to 3 sdpa splits: each sequence's logits, token and cache rows against
 * the reference at its own position; --context N puts sequence b at N - b. */
static void small_batch_steps_match_the_reference(void **state)
{
    result r = decode("--small", "--backend", "cpu", "--batch", "4", "--context", "40,9,33,17", "--steps", "2",
                      "--check", NULL);
    if (r.status != 0 || !has(&r, "check against the reference: 2 steps, 0 failed")) fail_msg("%s%s", r.out, r.err);
    assert_true(has(&r, "batch 4 (contexts 40, 9, 33, 17; tc_gemv, unfused)"));
    assert_true(has(&r, "step 0, sequence 1: position 9, token "));
    assert_true(has(&r, "step 1, sequence 3: position 18, token "));
    assert_true(has(&r, "k, v cache rows at positions 41, 10, 34, 18: max |diff|"));
    assert_null(strstr(r.out, "FAIL"));
    done(&r);
    r = decode("--small", "--layers", "1", "--backend", "cpu", "--batch", "3", "--weights", "q4k", "--mode", "async",
               "--steps", "2", "--check", NULL);
    if (r.status != 0 || !has(&r, "check against the reference: 2 steps, 0 failed")) fail_msg("%s%s", r.out, r.err);
    assert_true(has(&r, "step 1, sequence 2: position 39, token "));   /* context 40: 40, 39, 38 */
    assert_true(has(&r, "k, v cache rows at positions 41, 40, 39: max |diff|"));
    done(&r);
}

/* RoPE broken in a batch: every sequence's logits fail, not only the first. */
static void a_wrong_kernel_fails_every_sequence_of_a_batch(void **state)
{
    result r = decode("--small", "--layers", "1", "--backend", "cpu", "--batch", "2", "--steps", "1", "--check", "-D",
                      "rope.TWO_PI_HI=6.2", NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(&r, "step 0, sequence 0: position 40, token "));
    assert_true(has(&r, "step 0, sequence 1: position 39, token "));
    const char *f = strstr(r.out, "FAIL: logits differ");
    assert_non_null(f);
    assert_non_null(strstr(f + 1, "FAIL: logits differ"));
    assert_true(has(&r, "check against the reference: 1 steps, 1 failed"));
    done(&r);
}

/* A batch's step: 1 + 10 launches a layer + 4 (the norms and silu·up
 * apart, even with --fuse on); the modes choose the same tokens; the
 * profile's rows are tc_gemv's (no CUDA-core GEMV, no fused one), a GEMV's
 * bytes its matrix once and each sequence's input and output; the tokens
 * line holds each sequence's, " | " apart. */
static void batch_step_runs_tc_gemv_and_unfused_kernels(void **state)
{
    static const char *const modes[2] = {"sync", "graph"};
    char *first = NULL;
    for (int i = 0; i < 2; i++) {
        result r = decode("--small", "--layers", "1", "--backend", "cpu", "--batch", "4", "--steps", "2", "--fuse", "on",
                          "--mode", modes[i], NULL);
        assert_int_equal(r.status, 0);
        assert_true(has(&r, "15 launches each"));
        char *t = tokens_of(&r);
        assert_int_equal(strspn(t, "tokens: 0123456789|"), strlen(t));
        if (first && strcmp(first, t)) fail_msg("%s gives '%s', sync '%s'", modes[i], t, first);
        if (!first) first = t;
        else free(t);
        done(&r);
    }
    unsigned bars = 0;
    for (const char *p = first; *p; p++) bars += *p == '|';
    assert_int_equal(bars, 3);
    free(first);
    static const char *const weights[2] = {"f16", "q4k"};
    for (int w = 0; w < 2; w++) {
        result r = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--batch", "4",
                          "--profile", "--warmup", "0", "--runs", "1", NULL);
        if (r.status != 0) fail_msg("%s%s", r.out, r.err);
        prow p;
        double qkv_mb = -1;
        unsigned tc = 0;
        for (const char *line = strstr(r.out, "\nkernel "); line && *line; line += strcspn(line + 1, "\n") + 1) {
            if (!prow_parse(line + 1, &p) || !strcmp(p.kernel, "step")) continue;
            if (strstr(p.kernel, "gemv")) {
                assert_true(!strncmp(p.kernel, "tc_gemv_", 8));
                tc += p.n;
            }
            if (!strcmp(p.shape, "512x256 b4") && !strstr(p.kernel, "f32")) qkv_mb = p.mb;
        }
        assert_int_equal(tc, 5);   /* QKV, output, gate/up, down, vocabulary */
        /* QKV: 512 rows of 256 once (f16 262144 bytes, q4k 512·144) + 4 x (x: 256·2, q8: 256 + 32; y: 512·2) */
        assert_true(fabs(qkv_mb - (w ? 0.078976 : 0.268288)) < 6e-5);
        done(&r);
    }
}

/* --batch on the mock driver: graph mode re-targets each step's positions
 * and token slots (no allocation a timed step), and the bench counts 4
 * tokens a step. */
static void batch_on_the_mock_driver_replays_and_benches(void **state)
{
    setenv("KF_LIBCUDA", MOCK, 1);
    result r = decode("--small", "--backend", "cuda", "--batch", "4", "--steps", "2", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(&r, "tokens: 0 0 | 0 0 | 0 0 | 0 0"));
    done(&r);
    r = decode("--small", "--backend", "ptx", "--batch", "4", "--weights", "q4k", "--bench", "--warmup", "1", "--runs",
               "2", "--json", tmp("batch.json"), NULL);
    if (r.status != 0) fail_msg("%s%s", r.out, r.err);
    assert_true(has(&r, "attention length of 4 sequences, the longest 42, split "));
    assert_true(has(&r, "allocations over the timed steps (re-targets, launches)       0.000 <= 0     met"));
    assert_null(strstr(r.out, "graph mode x floor"));   /* issue 10's floor targets: one sequence */
    done(&r);
    char *json = slurp(tmp("batch.json"));
    assert_non_null(strstr(json, "\"batch\": 4"));
    /* KV: 2 layers x (4 rows written + 42 + 41 + 40 + 39 rows read) x 512 bytes */
    assert_non_null(strstr(json, "\"kv\": 169984"));
    const char *g = strstr(json, "\"mode\": \"graph\"");
    double ms = 0, tps = 0;
    assert_non_null(g);
    assert_int_equal(sscanf(strstr(g, "\"ms_per_step\": "), "\"ms_per_step\": %lf, \"tokens_per_s\": %lf", &ms, &tps), 2);
    assert_true(fabs(tps - 4e3 / ms) <= 1e-3 * tps);
    free(json);
    unsetenv("KF_LIBCUDA");
}

static void bad_options_are_usage_errors(void **state)
{
    static const struct {
        const char *a[6];
        const char *want;
    } cases[] = {
        {{"--weights", "q8"}, "--weights 'q8': expected f16 or q4k"},
        {{"--check=both"}, "--check=both: expected ref or cross"},
        {{"--small", "--weights", "q4k", "--hidden", "128"}, "multiples of 256 (Q4_K blocks)"},
        {{"--small", "--head-dim", "96"}, "the head dimension must be 64 or 128"},
        {{"--small", "--backend", "cpu", "--token", "512"}, "--token 512 is not below the vocabulary (512)"},
        {{"--small", "-D", "gemv.NOPE=1"}, "there is no constant 'NOPE'"},
        {{"-D", "nofile.X=1"}, "'nofile' is not a kernel file of the step"},
        {{"--steps", "0"}, "--steps must be at least 1"},
        {{"--profile", "--check"}, "--bench or --profile and --check are separate runs"},
        {{"--profile", "--runs", "0"}, "--runs must be at least 1"},
        {{"--frobnicate"}, "unknown argument '--frobnicate'"},
        {{"--small", "--tp", "4"}, "--tp 4: the KV heads (2) do not split over 4 devices"},
        {{"--small", "--tp", "3"}, "--tp 3: the heads (4) do not split over 3 devices"},
        {{"--small", "--tp", "2", "--weights", "q4k"}, "--tp 2 with q4k weights: each device's heads x head dim (128)"},
        {{"--small", "--tp", "2", "--save", "x.kfd"}, "--save writes a one-device model: drop --tp"},
        {{"--small", "--tp", "2", "--profile"}, "--profile times one device's launches: drop --tp"},
        {{"--small", "--tp", "2", "--ffn", "40"}, "each device's FFN share (20) must be a multiple of 8"},
        {{"--small", "--batch", "17"}, "--batch 17: expected 1 .. 16 sequences"},
        {{"--small", "--batch", "0"}, "--batch 0: expected 1 .. 16 sequences"},
        {{"--small", "--batch", "4", "--context", "40,3"}, "--context gives 2 contexts for --batch 4"},
        {{"--small", "--batch", "4", "--context", "2"}, "--context 2 is too short for --batch 4"},
        {{"--small", "--context", "4,x"}, "--context '4,x': expected a number, or up to 16 numbers"},
        {{"--small", "--batch", "2", "--tp", "2"}, "--batch 2 runs on one device: drop --tp"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const *a = cases[i].a;
        result r = decode(a[0], a[1], a[2], a[3], a[4], a[5], NULL);
        if (r.status != 2 || !has(&r, cases[i].want)) fail_msg("case %zu: status %d", i, r.status);
        done(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_f16_graph_steps_match_the_reference),
        cmocka_unit_test(small_q4k_async_steps_match_the_reference),
        cmocka_unit_test(a_wrong_kernel_fails_the_check),
        cmocka_unit_test(unfused_step_chooses_the_same_tokens),
        cmocka_unit_test(fused_rope_chooses_the_same_tokens),
        cmocka_unit_test(norm_only_fusion_chooses_the_same_tokens),
        cmocka_unit_test(glu_fusion_chooses_the_same_tokens),
        cmocka_unit_test(every_mode_chooses_the_same_tokens),
        cmocka_unit_test(saved_model_loads_back_with_the_same_tokens),
        cmocka_unit_test(mock_driver_runs_the_modes_and_the_bench),
        cmocka_unit_test(tensor_parallel_cpu_steps_match_one_device_and_the_reference),
        cmocka_unit_test(tensor_parallel_on_the_mock_driver_uses_nccl),
        cmocka_unit_test(profile_rows_add_up_to_the_step),
        cmocka_unit_test(narrow_rows_chooses_the_q4k_build),
        cmocka_unit_test(step_defaults_apply_where_declared),
        cmocka_unit_test(small_batch_steps_match_the_reference),
        cmocka_unit_test(a_wrong_kernel_fails_every_sequence_of_a_batch),
        cmocka_unit_test(batch_step_runs_tc_gemv_and_unfused_kernels),
        cmocka_unit_test(batch_on_the_mock_driver_replays_and_benches),
        cmocka_unit_test(bad_options_are_usage_errors),
    };
    setenv("KFORGE", DECODE, 1);
    return cmocka_run_group_tests(tests, cli_setup, cli_teardown);
}
