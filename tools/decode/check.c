/* --check (decode.h): every step is run with a fence after it and its
 * logits compared, either with the independent reference (ref.c: the
 * small shapes, any backend) or between the cuda and ptx paths run in
 * lockstep (any shape). A step passes when
 *   - every logit is within the tolerance of the other side's (absolute,
 *     TOL times the largest logit magnitude, at least TOL),
 *   - the token the step chose is the first index of its own largest logit
 *     (argmax is exact), and
 *   - it is the other side's choice too, unless the other side's best two
 *     logits are within twice the tolerance of each other (a near tie the
 *     roundings may break either way); after such a tie the second side is
 *     given the first side's token, so that both go on from the same input.
 * The reference always takes the device's token. With --batch B every
 * sequence of every step is such a comparison (its own logits row, token,
 * position and cache rows), a line each; a near tie in any sequence gives
 * the second side the first side's tokens for the whole batch.
 *
 * --tp N is checked against the one-device model run in lockstep (the same
 * weights: every logit, its token, as above) and against the reference. The
 * two differ only in the order of f32 sums: a projection split over ranks
 * adds N partial f32 sums (the all-reduce, in rank order on the CPU) where
 * one device adds one, so an f16 residual may round one ulp the other way;
 * that is the reference's own tolerance, which holds it (measured below).
 *
 * With the reference, the k and v rows each step wrote into the caches are
 * compared too (same tolerance), and the reference then takes the device's
 * rows, so every step is checked from the same state.
 *
 * Tolerances, of the logits' scale (the largest magnitude, at least 1),
 * times sqrt(layers / 2), measured on the CPU interpreter at the small
 * shape (2 layers) over 144 steps (24 seeds): f16 weights 4e-3 (largest
 * seen 8.8e-4: f32 sums that round to another f16 than the double ones;
 * 32 layers: 3.3e-3 of the scale, against 1.6e-2); q4k 1e-1 (largest seen
 * 6.9e-2): a one-ulp f16 difference at a GEMV's input may move one 8-bit
 * quantization step of llama.cpp's q8_1, which moves the logits by that
 * much; the q4k steps where no step moved agree to 1e-6. A wrong kernel or
 * wiring moves logits by their scale (RoPE's reduction broken: 2e-2 of it,
 * and the cache rows by 0.9: tests/test_decode.c). */
#include "decode.h"
#include "../reference/ref_num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL_F16 4e-3
#define TOL_Q4K 1e-1

/* The tolerance for values of which the largest magnitude is mx: TOL_* of
 * max(1, mx), times sqrt(layers / 2) (each layer adds its roundings). */
static double tol_for(const dc_config *c, double mx)
{
    double depth = sqrt(fmax(1.0, c->sh.layers / 2.0));
    return (c->wt == DC_Q4K ? TOL_Q4K : TOL_F16) * depth * fmax(1.0, mx);
}

static double tolerance(const dc_config *c, const float *want, uint32_t n)
{
    double mx = 0;
    for (uint32_t i = 0; i < n; i++) mx = fmax(mx, fabs(want[i]));
    return tol_for(c, mx);
}

/* The first index of the largest logit, and the gap to the second largest. */
static uint32_t best(const float *x, uint32_t n, double *margin)
{
    uint32_t b = 0;
    for (uint32_t i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    double second = -INFINITY;
    for (uint32_t i = 0; i < n; i++)
        if (i != b) second = fmax(second, x[i]);
    *margin = n > 1 ? x[b] - second : INFINITY;
    return b;
}

typedef struct {
    double diff, tol, margin;
    uint32_t want_token;
    bool tie;                   /* the tokens differ within a near tie */
    const char *why;            /* NULL: the step passed */
} verdict;

static verdict compare(const dc_config *c, const float *got, uint32_t got_token, const float *want)
{
    uint32_t n = c->sh.vocab;
    verdict v = {0, tolerance(c, want, n), 0, 0, false, NULL};
    for (uint32_t i = 0; i < n; i++) v.diff = fmax(v.diff, fabs((double)got[i] - want[i]));
    double own;
    uint32_t mine = best(got, n, &own);
    v.want_token = best(want, n, &v.margin);
    if (!(v.diff <= v.tol)) v.why = "logits differ by more than the tolerance";
    else if (mine != got_token) v.why = "the token is not the first index of the largest logit (argmax)";
    else if (got_token != v.want_token && v.margin > 2 * v.tol) v.why = "a different token without a near tie";
    else v.tie = got_token != v.want_token;
    return v;
}

/* Sequence b's position at step s. */
static uint32_t position(const dc_config *c, uint32_t b, uint32_t s) { return c->ctx[b] + s; }

/* "step S" (one sequence) or "step S, sequence B" (a batch). */
static void report(const dc_config *c, uint32_t s, uint32_t b, uint32_t token, const verdict *v, const char *other)
{
    char seq[32] = "";
    if (c->batch > 1) snprintf(seq, sizeof seq, ", sequence %u", b);
    printf("step %u%s: position %u, token %u (%s %u, top-2 margin %.4g), max |logit diff| %.3g (tolerance %.3g): "
           "%s%s\n", s, seq, position(c, b, s), token, other, v->want_token, v->margin, v->diff, v->tol,
           v->why ? "FAIL: " : "ok", v->why ? v->why : v->tie ? " (a near tie: the other side goes on from this token)" : "");
}

/* The tokens ([step][sequence]) and the verdict: a step fails when any of its sequences does. */
static int finish(const dc_config *c, uint32_t steps, uint32_t failed, const uint32_t *tokens, const char *what)
{
    dc_print_tokens(c, tokens, steps);
    printf("check %s: %u steps, %u failed\n", what, steps, failed);
    return failed ? KF_EXIT_FAIL : KF_EXIT_OK;
}

/* The k and v rows step s wrote into every layer's cache (each sequence's
 * at its position) against the reference's (*diff, *tol: the largest
 * difference and tolerance seen); then the reference takes the device's
 * rows, so that a rounding that went the other way (an 8-bit quantization
 * step moved, for q4k) is not carried into the next steps: each step is
 * checked from the same state. */
static kf_status check_rows(const dc_config *c, dc_model *m, dc_ref *r, uint32_t s, double *diff, double *tol,
                            kf_error *err)
{
    size_t row = (size_t)c->sh.kv_heads * c->sh.head_dim, n = kf_buffer_bytes(m->layer[0].kc) / 2;
    uint16_t *cache = malloc(n * 2);
    kf_status st = cache ? KF_OK : kf_error_set(err, KF_ERR_NOMEM, "out of memory for a cache copy");
    *diff = 0, *tol = 0;
    for (uint32_t l = 0; l < c->sh.layers && st == KF_OK; l++)
        for (int v = 0; v < 2 && st == KF_OK; v++) {
            st = kf_buffer_download(v ? m->layer[l].vc : m->layer[l].kc, cache, n * 2, err);
            for (uint32_t b = 0; b < c->batch && st == KF_OK; b++) {
                uint32_t pos = position(c, b, s);
                uint16_t *want = dc_ref_cache_row(r, l, b, pos, v), *got = cache + ((size_t)b * m->cap + pos) * row;
                double mx = 0;
                for (size_t i = 0; i < row; i++) mx = fmax(mx, fabs(kf_ref_f16_value(want[i])));
                *tol = fmax(*tol, tol_for(c, mx));
                for (size_t i = 0; i < row; i++)
                    *diff = fmax(*diff, fabs(kf_ref_f16_value(got[i]) - kf_ref_f16_value(want[i])));
                memcpy(want, got, row * 2);
            }
        }
    free(cache);
    return st;
}

static void report_rows(const dc_config *c, uint32_t s, double rd, double rt)
{
    printf("        k, v cache rows at position%s", c->batch > 1 ? "s" : "");
    for (uint32_t b = 0; b < c->batch; b++) printf("%s%u", b ? ", " : " ", position(c, b, s));
    printf(": max |diff| %.3g (tolerance %.3g)\n", rd, rt);
}

/* Step s's sequences against the reference (its inputs `in`, the device's
 * logits `got` and tokens `tok`): the steps failed (0 or 1). */
static uint32_t reference_verdicts(const dc_config *c, dc_model *m, dc_ref *r, uint32_t s, const uint32_t *in,
                                   const float *got, const uint32_t *tok, float *want, kf_status *st, kf_error *err)
{
    bool failed = false;
    uint32_t n = c->sh.vocab;
    verdict v[DC_BATCH_MAX];
    for (uint32_t b = 0; b < c->batch; b++) {
        dc_ref_step(r, b, in[b], position(c, b, s), want);
        v[b] = compare(c, got + (size_t)b * n, tok[b], want);
    }
    double rd, rt;
    *st = check_rows(c, m, r, s, &rd, &rt, err);
    for (uint32_t b = 0; b < c->batch; b++) {
        if (*st == KF_OK && !(rd <= rt) && !v[b].why) v[b].why = "the k and v rows written to the cache differ by more than the tolerance";
        report(c, s, b, tok[b], &v[b], "reference");
        failed |= v[b].why != NULL;
    }
    if (*st == KF_OK) report_rows(c, s, rd, rt);
    return failed;
}

int dc_check_reference(const dc_config *c, kf_backend b, dc_mode mode)
{
    dc_model m = {0};
    dc_ref *r = NULL;
    kf_error err = {0};
    uint32_t n = c->sh.vocab, nb = c->batch, failed = 0, s = 0, in[DC_BATCH_MAX];
    float *got = malloc((size_t)nb * n * sizeof *got), *want = malloc(n * sizeof *want);
    uint32_t *tokens = calloc((size_t)(c->steps + 1) * nb, sizeof *tokens);
    kf_status st = got && want && tokens ? dc_model_open(&m, c, b, mode == DC_GRAPH, &err)
                                        : kf_error_set(&err, KF_ERR_NOMEM, "out of memory");
    if (st == KF_OK) st = dc_ref_create(&m, &r, &err);
    if (st == KF_OK) st = kf_buffer_download(m.tok[0], in, nb * sizeof *in, &err);   /* the first inputs */
    for (; s < c->steps && st == KF_OK; s++) {
        uint32_t *tok = tokens + (size_t)s * nb;
        st = dc_model_step(&m, s, mode, &err);
        if (st == KF_OK) st = dc_model_sync(&m, &err);
        if (st == KF_OK) st = dc_model_logits(&m, got, &err);
        if (st == KF_OK) st = dc_model_token(&m, s, tok, &err);
        if (st != KF_OK) break;
        failed += reference_verdicts(c, &m, r, s, in, got, tok, want, &st, &err);
        memcpy(in, tok, nb * sizeof *in);
    }
    if (st != KF_OK) dc_print_error(&err);
    dc_ref_destroy(r);
    dc_model_close(&m);
    int rc = st == KF_OK ? finish(c, s, failed, tokens, "against the reference") : kf_cli_exit_for(st);
    free(got);
    free(want);
    free(tokens);
    return rc;
}

/* One lockstep step of two models: the cuda (a) and ptx (b) paths, or one
 * device (a) and --tp N (b). */
static kf_status cross_step(dc_model *a, dc_model *b, uint32_t s, dc_mode mode, float *la, float *lb, uint32_t *ta,
                            uint32_t *tb, kf_error *err)
{
    kf_status st = dc_model_step(a, s, mode, err);
    if (st == KF_OK) st = dc_model_step(b, s, mode, err);
    if (st == KF_OK) st = dc_model_sync(a, err);
    if (st == KF_OK) st = dc_model_sync(b, err);
    if (st == KF_OK) st = dc_model_logits(a, la, err);
    if (st == KF_OK) st = dc_model_logits(b, lb, err);
    if (st == KF_OK) st = dc_model_token(a, s, ta, err);
    return st == KF_OK ? dc_model_token(b, s, tb, err) : st;
}

/* Step s of the ptx path (logits lb, tokens tb) against the cuda path's
 * (la, ta), sequence by sequence: the steps failed (0 or 1); *tie when a
 * sequence's tokens differ within a near tie. */
static uint32_t cross_verdicts(const dc_config *c, uint32_t s, const float *la, const float *lb, const uint32_t *tb,
                               bool *tie)
{
    bool failed = false;
    *tie = false;
    for (uint32_t q = 0; q < c->batch; q++) {
        verdict v = compare(c, lb + (size_t)q * c->sh.vocab, tb[q], la + (size_t)q * c->sh.vocab);
        report(c, s, q, tb[q], &v, "cuda path");
        failed |= v.why != NULL;
        *tie |= v.tie;
    }
    return failed;
}

int dc_check_cross(const dc_config *c, dc_mode mode)
{
    dc_model a = {0}, b = {0};
    kf_error err = {0};
    uint32_t n = c->sh.vocab, nb = c->batch, failed = 0, s = 0, tb[DC_BATCH_MAX];
    float *la = malloc((size_t)nb * n * sizeof *la), *lb = malloc((size_t)nb * n * sizeof *lb);
    uint32_t *tokens = calloc((size_t)(c->steps + 1) * nb, sizeof *tokens);
    kf_status st = la && lb && tokens ? dc_model_open(&a, c, KF_BACKEND_CUDA, mode == DC_GRAPH, &err)
                                      : kf_error_set(&err, KF_ERR_NOMEM, "out of memory");
    dc_config cb = *c;   /* the ptx path at the split the cuda path chose: the same sums */
    cb.split = a.split;
    if (st == KF_OK) st = dc_model_open(&b, &cb, KF_BACKEND_PTX, mode == DC_GRAPH, &err);
    for (; s < c->steps && st == KF_OK; s++) {
        uint32_t *ta = tokens + (size_t)s * nb;
        bool tie;
        st = cross_step(&a, &b, s, mode, la, lb, ta, tb, &err);
        if (st != KF_OK) break;
        failed += cross_verdicts(c, s, la, lb, tb, &tie);
        if (tie) st = dc_model_force_token(&b, s, ta, &err);
    }
    if (st != KF_OK) dc_print_error(&err);
    dc_model_close(&b);
    dc_model_close(&a);
    int rc = st == KF_OK ? finish(c, s, failed, tokens, "ptx path against the cuda path") : kf_cli_exit_for(st);
    free(la);
    free(lb);
    free(tokens);
    return rc;
}

/* Step s (input token `in`) of --tp N (t: lt, tt) against one device (a:
 * la) and, with r, the reference (want), which then takes a's cache rows; a
 * near tie with one device gives a the split model's token. Returns the
 * steps failed. One sequence (--tp takes no --batch). */
static uint32_t tp_verdicts(const dc_config *c, dc_model *a, dc_ref *r, uint32_t s, uint32_t in, const float *la,
                            const float *lt, uint32_t tt, float *want, kf_status *st, kf_error *err)
{
    verdict v = compare(c, lt, tt, la);
    report(c, s, 0, tt, &v, "--tp 1");
    uint32_t failed = v.why != NULL;
    if (r) {
        double rd, rt;
        dc_ref_step(r, 0, in, position(c, 0, s), want);
        verdict w = compare(c, lt, tt, want);
        report(c, s, 0, tt, &w, "reference");
        *st = check_rows(c, a, r, s, &rd, &rt, err);
        failed |= w.why != NULL;
    }
    if (*st == KF_OK && v.tie) *st = dc_model_force_token(a, s, &tt, err);
    return failed;
}

int dc_check_tp(const dc_config *c, kf_backend b, dc_mode mode)
{
    dc_config one = *c;
    one.tp = 1;
    dc_model a = {0}, t = {0};
    dc_ref *r = NULL;
    kf_error err = {0};
    uint32_t n = c->sh.vocab, failed = 0, s = 0, ta = 0;
    float *la = malloc(n * sizeof *la), *lt = malloc(n * sizeof *lt), *want = malloc(n * sizeof *want);
    uint32_t *tokens = calloc(c->steps + 1, sizeof *tokens);
    kf_status st = la && lt && want && tokens ? dc_model_open(&a, &one, b, mode == DC_GRAPH, &err)
                                              : kf_error_set(&err, KF_ERR_NOMEM, "out of memory");
    if (st == KF_OK) st = dc_model_open(&t, c, b, mode == DC_GRAPH, &err);
    if (st == KF_OK && dc_params(&c->sh) <= 100000000ull) st = dc_ref_create(&a, &r, &err);
    for (; s < c->steps && st == KF_OK; s++) {
        st = cross_step(&a, &t, s, mode, la, lt, &ta, &tokens[s], &err);
        if (st == KF_OK) failed += tp_verdicts(c, &a, r, s, s ? tokens[s - 1] : c->token, la, lt, tokens[s], want, &st, &err);
    }
    if (st != KF_OK) dc_print_error(&err);
    dc_ref_destroy(r);
    dc_model_close(&t);
    dc_model_close(&a);
    char what[96];
    snprintf(what, sizeof what, "--tp %u against --tp 1%s", c->tp, dc_params(&c->sh) <= 100000000ull ? " and the reference" : "");
    int rc = st == KF_OK ? finish(c, s, failed, tokens, what) : kf_cli_exit_for(st);
    free(la);
    free(lt);
    free(want);
    free(tokens);
    return rc;
}
