/* Timing single launches on the device (decode.h), for --profile and for
 * choosing sdpa's split; and the timing helpers the benches share (the
 * median, the host clock, the modes' names).
 *
 * A launch timed alone: KF_DISPATCH_TIMED records the device's start event,
 * launches and records the end event. On an idle GPU the start event fires
 * at once and the kernel only when the host's launch call reaches the
 * device, so the time would hold the host's launch latency (a few us, as
 * long as a small kernel). decode.kf's `busy` kernel, queued first without
 * a fence, keeps the device occupied for longer than that: the start event
 * then fires when busy ends, with the kernel already queued behind it, and
 * the time is the kernel's own plus the stream's gap between two commands.
 *
 * The split: sdpa_decode_split's blocks each take `split` positions of one
 * kv head, so the split sets the blocks per SM (how many loads are in flight)
 * against the partials written and merged (more splits, more bytes), and the
 * best one depends on the kernel's tuning and the device. dc_split_tune
 * times the candidates on the device itself, at the first step's length. */
#include "decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    BUSY_ROUNDS = 8192,        /* dependent hash rounds: about 60-90 us on an H200 */
    TUNE_RUNS = 5,             /* timings per candidate split */
};

kf_status dc_busy_create(dc_model *m, kf_error *err)
{
    kf_device_props dp;
    kf_device_props_get(m->dev, &dp);
    if (dp.backend == KF_BACKEND_CPU) return KF_OK;   /* CPU launches are synchronous already */
    kf_pipeline *p = NULL;
    for (uint32_t i = 0; i < m->mod[DC_MOD_OWN]->nkernels; i++)
        if (!strcmp(m->mod[DC_MOD_OWN]->kernels[i].name, "busy")) p = m->pipe[DC_MOD_OWN][i];
    if (!p) return kf_error_set(err, KF_ERR_USAGE, "tools/decode/decode.kf has no kernel 'busy'");
    kf_status st = kf_buffer_create(m->dev, kf_type_scalar(KF_S_U32), 1, &m->sink, err);
    kf_arg a[2] = {{.buf = m->sink}, {.value = {.type = kf_type_scalar(KF_S_U32)}}};
    a[1].value.lane[0] = BUSY_ROUNDS;
    return st == KF_OK ? kf_plan_create(p, a, 2, NULL, &m->busy, err) : st;
}

kf_status dc_launch_alone(dc_model *m, kf_plan *p, double *us, kf_error *err)
{
    float ms = 0;
    kf_status st = m->busy ? kf_plan_launch(m->busy, KF_DISPATCH_ASYNC, NULL, err) : KF_OK;
    if (st == KF_OK) st = kf_plan_launch(p, KF_DISPATCH_TIMED, &ms, err);
    *us = (double)ms * 1e3;
    return st;
}

const char *const dc_mode_names[3] = {"sync", "async", "graph"};

double dc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

uint32_t dc_split_least(uint32_t guess) { return guess / 4 > 16 ? guess / 4 : 16; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dc_median(double *t, uint32_t n)
{
    qsort(t, n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* Median us of the attention at `split`: the fused launch, or split +
 * combine (--attn split), each launch alone. */
static kf_status time_split(dc_model *m, uint32_t split, double *us, kf_error *err)
{
    kf_plan *ps = NULL, *pc = NULL;
    double t[TUNE_RUNS];
    kf_status st = dc_attention_plans(m, split, &ps, &pc, err);
    for (int r = 0; r < TUNE_RUNS && st == KF_OK; r++) {
        double a = 0, b = 0;
        st = dc_launch_alone(m, ps, &a, err);
        if (st == KF_OK && pc) st = dc_launch_alone(m, pc, &b, err);
        t[r] = a + b;
    }
    kf_plan_destroy(ps);
    kf_plan_destroy(pc);
    if (st != KF_OK) return st;
    *us = dc_median(t, TUNE_RUNS);
    return KF_OK;
}

kf_status dc_split_tune(dc_model *m, kf_error *err)
{
    if (!m->busy) return KF_OK;
    uint32_t nb = m->c->batch > 1 ? m->c->batch : 1, pos[2 * DC_BATCH_MAX], guess = m->split, best = guess;
    for (uint32_t b = 0; b < nb; b++) pos[b] = m->c->ctx[b], pos[nb + b] = m->c->ctx[b] + 1;   /* as decode_pos's step 0 */
    double best_us = INFINITY;
    kf_status st = kf_buffer_upload(m->pos, pos, 2 * nb * sizeof *pos, err);
    for (uint32_t split = dc_split_least(guess); split <= 4 * guess && st == KF_OK; split *= 2) {
        double us = 0;
        st = time_split(m, split, &us, err);
        if (st == KF_OK && us < best_us) best = split, best_us = us;
    }
    m->split = best;
    return st;
}
