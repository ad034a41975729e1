/* --bench (decode.h): the step timed in each mode on one model, against the
 * bandwidth floor measured in the same run, and PyTorch's step in the same
 * call.
 *
 * Per mode (sync, async, graph): `warmup` steps, then `runs` steps back to
 * back between one pair of CUDA events (the CPU device: the wall clock), so
 * ms per step = the span / runs and tokens/s = batch·1000 / that (a step
 * makes a token for each of the batch's sequences). The host's cost
 * per launch is measured apart, on a quiet device: the host time to issue
 * one step (its re-targets and launches; graph: its re-targets, node
 * updates and one graph launch), median of HOST_RUNS, over the step's
 * launches. Allocations (kf_rt_alloc_count) over the timed steps must be 0.
 *
 * The floor is every byte the step's kernels must move (dc_step_bytes, the
 * sum of each launch's bytes: the weights once, quantized bytes for q4k; the
 * KV cache read at the attention length of the timed steps and the new rows
 * written, each sequence's; every activation read and written, each
 * sequence's) divided by the device's copy
 * bandwidth, measured in this run (1 GiB device-to-device, read + written,
 * median of 20).
 *
 * Programmatic dependent launch (kf_device_pdl): the report says whether the
 * device launched the step's kernels as programmatic dependents; when it
 * did, async and graph mode are timed again with it off (the step recorded
 * again), so the gain is measured in the same run.
 *
 * The targets are issue 10's, for one sequence; with --batch B > 1 only the
 * host cost and the allocations are judged (the step's ratio to its floor is
 * reported: its GEMVs are tc_gemv's, its norms and silu·up launches apart).
 *
 * PyTorch (--torch): tools/bench_torch.py --decode runs the same f16 model
 * step (F.linear for the fused QKV, output, gate/up, down and vocabulary
 * matrices, F.rms_norm, F.scaled_dot_product_attention with enable_gqa, RoPE
 * in torch ops) eagerly and replayed as a torch CUDA graph, after this
 * program has freed its model; its ms per step are compared with ours. With
 * --batch B it runs B sequences, all at the longest one's position (torch's
 * SDPA takes one length for the batch without a mask). */
#include "decode.h"
#include "../bench_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HOST_RUNS = 7, ROWS = 5 };

/* The rows: dc_mode's three, then async and graph again with PDL off. */
static const char *const row_names[ROWS] = {"sync", "async", "graph", "async no-PDL", "graph no-PDL"};


/* ---- timing ---------------------------------------------------------------------------------- */

typedef struct {
    double ms, host_us, launches;
    uint64_t allocs;
    bool done;
} mode_result;

/* Host microseconds to issue one step, median over HOST_RUNS quiet starts. */
static kf_status host_cost(dc_model *m, dc_mode mode, uint32_t s0, double *us, kf_error *err)
{
    double t[HOST_RUNS];
    kf_status st = KF_OK;
    for (int r = 0; r < HOST_RUNS && st == KF_OK; r++) {
        st = kf_device_sync(m->dev, err);
        double t0 = dc_now_ms();
        if (st == KF_OK) st = dc_model_step(m, s0 + (uint32_t)r, mode, err);
        t[r] = (dc_now_ms() - t0) * 1e3;
    }
    if (st == KF_OK) st = kf_device_sync(m->dev, err);
    *us = dc_median(t, HOST_RUNS);
    return st;
}

/* Times `runs` steps after `warmup` in mode; events when the device has them. */
static kf_status time_mode(dc_model *m, dc_mode mode, const dc_bench_opts *o, mode_result *r, kf_error *err)
{
    kf_status st = KF_OK;
    for (uint32_t s = 0; s < o->warmup && st == KF_OK; s++) st = dc_model_step(m, s, mode, err);
    if (st == KF_OK) st = kf_device_sync(m->dev, err);
    if (st != KF_OK) return st;
    kf_error probe = {0};
    bool events = kf_device_timer_start(m->dev, &probe) == KF_OK;
    double t0 = dc_now_ms();
    uint64_t a0 = kf_rt_alloc_count();
    for (uint32_t s = o->warmup; s < o->warmup + o->runs && st == KF_OK; s++) st = dc_model_step(m, s, mode, err);
    r->allocs = kf_rt_alloc_count() - a0;
    float ms = 0;
    if (st == KF_OK && events) st = kf_device_timer_stop(m->dev, &ms, err);
    if (st == KF_OK && !events) st = kf_device_sync(m->dev, err);
    r->ms = (events ? ms : dc_now_ms() - t0) / o->runs;
    r->launches = m->nplan;
    if (st == KF_OK) st = host_cost(m, mode, o->warmup + o->runs, &r->host_us, err);
    r->host_us /= m->nplan;
    r->done = st == KF_OK;
    return st;
}

/* Async and graph mode again with PDL off (rows 3 and 4; the step
 * recorded again, since a graph keeps the PDL it was recorded with), then
 * PDL back on and the step recorded as it was. */
static kf_status time_without_pdl(dc_model *m, const dc_bench_opts *o, mode_result *r, kf_error *err)
{
    kf_device_set_pdl(m->dev, false);
    kf_status st = time_mode(m, DC_ASYNC, o, &r[3], err);
    if (st == KF_OK) st = dc_model_record(m, err);
    if (st == KF_OK) st = time_mode(m, DC_GRAPH, o, &r[4], err);
    kf_device_set_pdl(m->dev, true);
    return st == KF_OK ? dc_model_record(m, err) : st;
}

/* ---- the PyTorch peer --------------------------------------------------------------------------- */

typedef struct {
    double eager_ms, graph_ms, copy_gbps;
    bool ran;
} peer_result;

static void run_peer(const dc_config *c, const dc_bench_opts *o, peer_result *p)
{
    char cmd[1400];
    const dc_shape *sh = &c->sh;
    snprintf(cmd, sizeof cmd,
             "python3 '%s/tools/bench_torch.py' --decode --hidden %u --heads %u --kv-heads %u --head-dim %u --ffn %u "
             "--layers %u --vocab %u --context %u --steps %u --batch %u 2>&1",
             c->src_dir, sh->hidden, sh->heads, sh->kv_heads, sh->head_dim, sh->ffn, sh->layers, sh->vocab, c->context,
             o->runs, c->batch);
    fflush(stdout);
    FILE *f = popen(cmd, "r");
    char line[1024];
    *p = (peer_result){NAN, NAN, NAN, false};
    while (f && fgets(line, sizeof line, f)) {
        fputs(line, stdout);
        double v;
        if (sscanf(line, "decode-peer: eager %lf ms", &v) == 1) p->eager_ms = v, p->ran = true;
        if (sscanf(line, "decode-peer: graph %lf ms", &v) == 1) p->graph_ms = v;
        if (sscanf(line, "decode-peer: copy %lf GB/s", &v) == 1) p->copy_gbps = v;
    }
    int rc = f ? pclose(f) : -1;
    if (rc != 0 || !p->ran) printf("PyTorch peer: did not run (exit %d); see the lines above\n", rc);
}

/* ---- the report ------------------------------------------------------------------------------------ */

typedef struct {
    const char *what;
    double value, limit;
    bool below;                 /* met when value <= limit (else >=) */
} target;

static int targets(const dc_config *c, const mode_result *r, const peer_result *p, double floor_ms, FILE *json)
{
    target t[6];
    int n = 0, missed = 0;
    bool one = c->batch <= 1;   /* issue 10's step: one sequence */
    if (r[2].done && one) t[n++] = (target){"graph mode x floor", r[2].ms / floor_ms, c->wt == DC_Q4K ? 1.25 : 1.15, true};
    if (r[2].done) t[n++] = (target){"host us per kernel on graph replay", r[2].host_us, 1.0, true};
    if (r[1].done && c->wt == DC_F16 && one) t[n++] = (target){"async mode x floor", r[1].ms / floor_ms, 1.25, true};
    if (r[2].done && p->ran && c->wt == DC_F16 && one)
        t[n++] = (target){"speedup of graph mode over torch eager", p->eager_ms / r[2].ms, 1.5, false};
    uint64_t allocs = 0;
    for (int i = 0; i < ROWS; i++) allocs += r[i].allocs;
    t[n++] = (target){"allocations over the timed steps (re-targets, launches)", (double)allocs, 0, true};
    printf("targets (issue 10%s):\n", one ? "" : "; the floor's for one sequence only");
    for (int i = 0; i < n; i++) {
        bool met = t[i].below ? t[i].value <= t[i].limit : t[i].value >= t[i].limit;
        missed += !met;
        printf("  %-58s %8.3f %s %-5g %s\n", t[i].what, t[i].value, t[i].below ? "<=" : ">=", t[i].limit,
               met ? "met" : "MISSED");
        if (json)
            fprintf(json, "%s{\"target\": \"%s\", \"value\": %.6g, \"limit\": %g, \"met\": %s}", i ? ", " : "", t[i].what,
                    t[i].value, t[i].limit, met ? "true" : "false");
    }
    return missed;
}

static void print_table(const mode_result *r, const peer_result *p, double floor_ms, uint32_t batch)
{
    double tok = 1e3 * batch;   /* tokens a step, per second per ms */
    printf("%-14s %10s %10s %8s %15s %9s\n", "mode", "ms/step", "tokens/s", "x floor", "host us/launch", "launches");
    for (int i = 0; i < ROWS; i++)
        if (r[i].done)
            printf("%-14s %10.4f %10.1f %8.3f %15.3f %9.0f\n", row_names[i], r[i].ms, tok / r[i].ms, r[i].ms / floor_ms,
                   r[i].host_us, r[i].launches);
    for (int i = 3; i < ROWS; i++)
        if (r[i].done && r[i - 2].done)
            printf("%s mode with PDL takes %.3fx the time without\n", row_names[i - 2], r[i - 2].ms / r[i].ms);
    if (p->ran) {
        printf("%-14s %10.4f %10.1f %8.3f %15s %9s\n", "torch eager", p->eager_ms, tok / p->eager_ms,
               p->eager_ms / floor_ms, "-", "-");
        if (!isnan(p->graph_ms))
            printf("%-14s %10.4f %10.1f %8.3f %15s %9s\n", "torch graph", p->graph_ms, tok / p->graph_ms,
                   p->graph_ms / floor_ms, "-", "-");
        if (r[2].done) printf("graph mode is %.2fx faster than torch eager%s\n", p->eager_ms / r[2].ms,
                              isnan(p->graph_ms) ? "" : "");
        if (r[2].done && !isnan(p->graph_ms)) printf("graph mode is %.2fx faster than torch's CUDA graph\n", p->graph_ms / r[2].ms);
    }
}

static void json_write(FILE *f, const dc_config *c, kf_backend b, const kf_device_props *dp, bool pdl, double copy,
                       const dc_bytes *by, double floor_ms, const mode_result *r, const peer_result *p)
{
    const dc_shape *sh = &c->sh;
    fprintf(f, "{\"device\": \"%s\", \"backend\": \"%s\", \"weights\": \"%s\", \"hidden\": %u, \"heads\": %u, "
               "\"kv_heads\": %u, \"head_dim\": %u, \"ffn\": %u, \"layers\": %u, \"vocab\": %u, \"context\": %u, \"batch\": %u, "
               "\"copy_gbps\": %.1f, \"bytes\": {\"weights\": %.0f, \"kv\": %.0f, \"act\": %.0f}, \"floor_ms\": %.6f, "
               "\"pdl\": %s, \"modes\": [",
            dp->name, kf_cli_backend_name(b), c->wt == DC_Q4K ? "q4k" : "f16", sh->hidden, sh->heads, sh->kv_heads,
            sh->head_dim, sh->ffn, sh->layers, sh->vocab, c->context, c->batch, copy, by->weights, by->kv, by->act, floor_ms,
            pdl ? "true" : "false");
    for (int i = 0, k = 0; i < ROWS; i++)
        if (r[i].done)
            fprintf(f, "%s{\"mode\": \"%s\", \"ms_per_step\": %.6f, \"tokens_per_s\": %.2f, \"x_floor\": %.4f, "
                       "\"host_us_per_launch\": %.4f, \"launches\": %.0f, \"allocs\": %llu}",
                    k++ ? ", " : "", row_names[i], r[i].ms, 1e3 * c->batch / r[i].ms, r[i].ms / floor_ms, r[i].host_us,
                    r[i].launches, (unsigned long long)r[i].allocs);
    fprintf(f, "], \"torch\": ");
    if (p->ran)
        fprintf(f, "{\"eager_ms\": %.6f, \"graph_ms\": %.6f, \"copy_gbps\": %.1f}", p->eager_ms,
                isnan(p->graph_ms) ? -1.0 : p->graph_ms, isnan(p->copy_gbps) ? -1.0 : p->copy_gbps);
    else
        fprintf(f, "null");
    fprintf(f, ", \"targets\": [");
}

kf_status dc_copy_bandwidth(kf_device *dev, double *gbps, kf_error *err)
{
    kf_device_props dp;
    kf_device_props_get(dev, &dp);
    size_t l2 = dp.l2_bytes ? dp.l2_bytes : dp.backend == KF_BACKEND_CPU ? 1u << 20 : 32u << 20;   /* CPU: 32 MB copies */
    kf_bench_dev bd = {.dev = dev, .backend = dp.backend, .flush_bytes = 2 * l2};
    return kf_bench_copy_bandwidth(&bd, 20, gbps, err);
}

int dc_bench(const dc_config *c, kf_backend b, const dc_bench_opts *o)
{
    if (c->tp > 1) return dc_bench_tp(c, b, o);
    dc_model m = {0};
    kf_error err = {0};
    mode_result r[ROWS] = {{0}};
    peer_result p = {NAN, NAN, NAN, false};
    double copy = 0;
    kf_device_props dp = {0};
    kf_status st = dc_model_open(&m, c, b, true, &err);
    if (st == KF_OK) st = dc_copy_bandwidth(m.dev, &copy, &err);
    if (st == KF_OK) kf_device_props_get(m.dev, &dp);
    bool pdl = st == KF_OK && kf_device_pdl(m.dev);
    for (int i = 0; i < 3 && st == KF_OK; i++) st = time_mode(&m, (dc_mode)i, o, &r[i], &err);
    if (st == KF_OK && pdl) st = time_without_pdl(&m, o, r, &err);
    uint64_t len = c->context + o->warmup + (o->runs + 1) / 2;   /* the timed steps' mean attention length */
    dc_bytes by = m.launch ? dc_step_bytes(&m, len) : (dc_bytes){0, 0, 0};
    uint32_t split = m.split;
    dc_model_close(&m);
    if (st != KF_OK) {
        dc_print_error(&err);
        return kf_cli_exit_for(st);
    }
    double total = by.weights + by.kv + by.act, floor_ms = total / (copy * 1e6);
    printf("device: %s; backend %s; copy bandwidth %.0f GB/s (1 GiB device-to-device, read + written, median of 20)\n",
           dp.name, kf_cli_backend_name(b), copy);
    char seqs[48] = "";
    if (c->batch > 1) snprintf(seqs, sizeof seqs, " of %u sequences, the longest", c->batch);
    printf("floor: %.4f GB per step = weights %.4f + KV cache %.4f (attention length%s %llu, split %u) + activations "
           "%.4f; %.4f ms at the copy bandwidth\n", total / 1e9, by.weights / 1e9, by.kv / 1e9, seqs,
           (unsigned long long)len, split, by.act / 1e9, floor_ms);
    printf("PDL (programmatic dependent launch): %s\n", pdl ? "on; the no-PDL rows are the same steps with it off"
           : b == KF_BACKEND_CPU ? "off (the CPU device)" : "off (KFORGE_PDL=0, or the device is below sm_90 or its "
           "driver lacks cuLaunchKernelEx)");
    if (o->torch && c->wt == DC_F16) run_peer(c, o, &p);
    if (o->torch && c->wt != DC_F16) printf("PyTorch peer: runs the f16 model only (not run for q4k weights)\n");
    print_table(r, &p, floor_ms, c->batch);
    FILE *json = o->json ? fopen(o->json, "w") : NULL;
    if (o->json && !json) fprintf(stderr, "kforge decode: error: cannot write %s\n", o->json);
    if (json) json_write(json, c, b, &dp, pdl, copy, &by, floor_ms, r, &p);
    int missed = targets(c, r, &p, floor_ms, json);
    if (json) fprintf(json, "]}\n");
    if (json && fclose(json) != 0) fprintf(stderr, "kforge decode: error: cannot write %s\n", o->json);
    return missed ? KF_EXIT_FAIL : KF_EXIT_OK;
}
