/* kforge-decode (tools/decode/) run as a program: the small model's decode
 * steps on the CPU device checked against the independent C reference
 * (f16 and q4k weights, graph and async modes), the three modes giving the
 * same tokens, a check that fails when a kernel is wrong (RoPE's angle
 * reduction broken with -D), the model file saved and loaded back (and a
 * truncated or foreign file refused), the CUDA path on the mock driver
 * (every mode, the bench and its targets, a failing graph instantiation
 * reported naming the driver call), the profile's table (its rows add up
 * to the step, a GEMV's bytes are its matrix's), and usage errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cli_run.h"

#define DECODE KF_BINARY_DIR "/kforge-decode"
#define MOCK KF_BINARY_DIR "/tests/libkf_mockcuda.so"

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
        assert_true(has(&r, "15 launches each"));   /* 1 + 10 per layer + 4 */
        char *t = tokens_of(&r);
        if (first && strcmp(first, t)) fail_msg("%s gives '%s', sync '%s'", modes[i], t, first);
        if (!first) first = t;
        else free(t);
        done(&r);
    }
    free(first);
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
    char *ta = tokens_of(&a), *tb = tokens_of(&b);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    done(&a);
    done(&b);
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
 * and a graph the driver cannot instantiate is an error naming the call. */
static void mock_driver_runs_the_modes_and_the_bench(void **state)
{
    setenv("KF_LIBCUDA", MOCK, 1);
    result r = decode("--small", "--backend", "ptx", "--mode", "graph", "--steps", "2", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(&r, "tokens: 0 0"));
    done(&r);
    r = decode("--small", "--backend", "ptx", "--weights", "q4k", "--bench", "--warmup", "1", "--runs", "2", "--json",
               tmp("bench.json"), "--profile", NULL);
    if (r.status != 0) fail_msg("%s%s", r.out, r.err);
    assert_true(has(&r, "device: Mock GPU; backend ptx; copy bandwidth"));
    assert_true(has(&r, "floor: "));
    assert_true(has(&r, "graph mode x floor"));
    assert_true(has(&r, "launches timed alone in step order (device events, a busy kernel ahead), median of 2 steps"));
    assert_true(has(&r, "\nstep                   (every launch)              25 "));
    assert_true(has(&r, "allocations over the timed steps (re-targets, launches)       0.000 <= 0     met"));
    assert_non_null(strstr(r.out, "       25\n"));   /* launches, q4k as f16: 1 + 10 per layer + 4 */
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
 * matrix, x and y; the q4k step's GEMV inputs come from their producers
 * in 8 bits (no q8_quantize launch). */
static void profile_rows_add_up_to_the_step(void **state)
{
    static const char *const weights[2] = {"f16", "q4k"};
    static const unsigned launches[2] = {15, 15};   /* 1 + 10 per layer + 4 */
    for (int w = 0; w < 2; w++) {
        result r = decode("--small", "--layers", "1", "--weights", weights[w], "--backend", "cpu", "--profile",
                          "--warmup", "0", "--runs", "1", NULL);
        if (r.status != 0) fail_msg("%s%s", r.out, r.err);
        assert_true(has(&r, "(the interpreter's wall clock), median of 1 steps"));
        prow p, step;
        memset(&step, 0, sizeof step);
        unsigned n = 0, rows = 0;
        double us = 0, share = 0, qkv_mb = -1;
        unsigned fused = 0;   /* q4k: the 8-bit GEMV inputs' producers, 3 + 1 + 1 launches; no q8_quantize */
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
            if (!strcmp(p.kernel, "rmsnorm_q8") || !strcmp(p.kernel, "sdpa_combine_q8") || !strcmp(p.kernel, "silu_mul_q8"))
                fused += p.n;
            assert_null(strstr(p.kernel, "q8_quantize"));
        }
        assert_int_equal(step.n, launches[w]);
        assert_int_equal(n, launches[w]);
        assert_true(rows >= 10);
        assert_true(fabs(us - step.us) <= 0.01 * rows);
        assert_true(fabs(share - 100.0) <= 0.05 * rows);
        assert_true(fabs(step.share - 100.0) < 1e-9);
        /* QKV: (4 + 2·2)·64 = 512 rows of 256: f16 262144 + x 512 + y 1024 bytes;
         * q4k 512·144 + xq 256 + xds 32 + y 1024 */
        assert_true(fabs(qkv_mb - (w ? 0.07504 : 0.26368)) < 6e-5);
        assert_int_equal(fused, w ? 5 : 0);
        done(&r);
    }
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
        cmocka_unit_test(every_mode_chooses_the_same_tokens),
        cmocka_unit_test(saved_model_loads_back_with_the_same_tokens),
        cmocka_unit_test(mock_driver_runs_the_modes_and_the_bench),
        cmocka_unit_test(profile_rows_add_up_to_the_step),
        cmocka_unit_test(bad_options_are_usage_errors),
    };
    setenv("KFORGE", DECODE, 1);
    return cmocka_run_group_tests(tests, cli_setup, cli_teardown);
}
