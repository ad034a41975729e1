/* --profile (decode.h): where a step's time goes, launch by launch.
 *
 * After `warmup` steps, each of `profile` steps is run in step order with
 * every launch timed alone (dc_launch_alone: on a CUDA device the device's
 * events around it with the busy kernel queued ahead, so the host's launch
 * latency stays out; on the CPU device the interpreter's wall clock), in
 * the cache state the step leaves it (the previous launches ran just
 * before).
 *
 * Per launch the median over the profiled steps; then the launches are
 * summed by kernel and shape label (dc_launch) into rows, largest first:
 * launches per step, microseconds per step and per launch, the row's share
 * of the sum, its bytes per launch (dc_launch_bytes at the step's attention
 * length), GB/s and the ratio to the copy bandwidth measured in the same run.
 * The last row is the whole step: the sum of every launch's time against
 * the floor's bytes. In a graph replay the launches overlap their ramps, so
 * the sum is above a replayed step's time; the difference is what the
 * boundaries between kernels cost when they do not overlap. */
#include "decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *kernel, *shape;
    uint32_t n;                 /* launches per step */
    double us, bytes;           /* per step */
} prof_row;

static int cmp_row(const void *a, const void *b)
{
    const prof_row *x = a, *y = b;
    return (x->us < y->us) - (x->us > y->us);
}

/* us[r·n + i]: launch i of profiled step r, timed alone. */
static kf_status time_launches(dc_model *m, const dc_bench_opts *o, double *us, kf_error *err)
{
    kf_status st = KF_OK;
    for (uint32_t s = 0; s < o->warmup && st == KF_OK; s++) st = dc_model_step(m, s, DC_ASYNC, err);
    if (st == KF_OK) st = kf_device_sync(m->dev, err);
    for (uint32_t r = 0; r < o->profile && st == KF_OK; r++) {
        st = dc_model_retarget(m, o->warmup + r, err);
        for (uint32_t i = 0; i < m->nplan && st == KF_OK; i++)
            st = dc_launch_alone(m, m->plan[i], &us[(size_t)r * m->nplan + i], err);
    }
    return st;
}

/* The rows: launch i's median time added to its (kernel, shape) row. */
static uint32_t make_rows(const dc_model *m, const double *us, uint32_t runs, uint64_t len, prof_row *rows)
{
    uint32_t nrows = 0;
    double *t = malloc(runs * sizeof *t);
    for (uint32_t i = 0; t && i < m->nplan; i++) {
        for (uint32_t r = 0; r < runs; r++) t[r] = us[(size_t)r * m->nplan + i];
        const dc_launch *l = &m->launch[i];
        dc_bytes b = dc_launch_bytes(m, i, len);
        uint32_t k = 0;
        while (k < nrows && (strcmp(rows[k].kernel, l->kernel) || strcmp(rows[k].shape, l->shape))) k++;
        if (k == nrows) rows[nrows++] = (prof_row){l->kernel, l->shape, 0, 0, 0};
        rows[k].n++;
        rows[k].us += dc_median(t, runs);
        rows[k].bytes += b.weights + b.kv + b.act;
    }
    free(t);
    qsort(rows, nrows, sizeof *rows, cmp_row);
    return nrows;
}

static void print_row(const prof_row *r, int width, double total_us, double copy)
{
    double gbps = r->us > 0 ? r->bytes / (r->us * 1e3) : 0;
    printf("%-*s %-24s %5u %11.2f %6.1f%% %10.2f %11.4f %9.1f %7.3f\n", width, r->kernel, r->shape, r->n, r->us,
           total_us > 0 ? 100 * r->us / total_us : 0, r->us / r->n, r->bytes / r->n / 1e6, gbps, gbps / copy);
}

static void print_table(const dc_model *m, const prof_row *rows, uint32_t nrows, uint64_t len, uint32_t runs,
                        double copy, const char *clock)
{
    prof_row all = {"step", "(every launch)", 0, 0, 0};
    int width = 6;                                  /* the kernel column: its longest name */
    for (uint32_t k = 0; k < nrows; k++) {
        all.us += rows[k].us, all.n += rows[k].n, all.bytes += rows[k].bytes;
        int name_len = (int)strlen(rows[k].kernel);
        if (name_len > width) width = name_len;
    }
    printf("profile: the step at attention length %llu, each of its %u launches timed alone in step order (%s), "
           "median of %u steps; copy bandwidth %.0f GB/s\n",
           (unsigned long long)len, m->nplan, clock, runs, copy);
    printf("%-*s %-24s %5s %11s %7s %10s %11s %9s %7s\n", width, "kernel", "shape", "n", "us/step", "share", "us/launch",
           "MB/launch", "GB/s", "x copy");
    for (uint32_t k = 0; k < nrows; k++) print_row(&rows[k], width, all.us, copy);
    print_row(&all, width, all.us, copy);
    printf("profile: the launches sum to %.4f ms; the floor is %.4f ms (%.4f GB at %.0f GB/s)\n", all.us / 1e3,
           all.bytes / (copy * 1e6), all.bytes / 1e9, copy);
}

int dc_profile(const dc_config *c, kf_backend b, const dc_bench_opts *o)
{
    dc_model m = {0};
    kf_error err = {0};
    double copy = 0, *us = NULL;
    kf_device_props dp = {0};
    kf_status st = c->tp > 1 ? kf_error_set(&err, KF_ERR_USAGE, "--profile times one device's launches: drop --tp %u",
                                            c->tp)
                             : dc_model_open(&m, c, b, false, &err);
    if (st == KF_OK) st = dc_copy_bandwidth(m.dev, &copy, &err);
    if (st == KF_OK) {
        kf_device_props_get(m.dev, &dp);
        us = calloc((size_t)o->profile * m.nplan, sizeof *us);
        if (!us) st = kf_error_set(&err, KF_ERR_NOMEM, "out of memory for %u timings", o->profile * m.nplan);
    }
    if (st == KF_OK) st = time_launches(&m, o, us, &err);
    prof_row *rows = st == KF_OK ? calloc(m.nplan, sizeof *rows) : NULL;
    if (st == KF_OK && !rows) st = kf_error_set(&err, KF_ERR_NOMEM, "out of memory for the profile");
    if (st == KF_OK) {
        uint64_t len = c->context + o->warmup + (o->profile + 1) / 2;   /* the profiled steps' middle length */
        uint32_t nrows = make_rows(&m, us, o->profile, len, rows);
        print_table(&m, rows, nrows, len, o->profile, copy,
                    dp.backend == KF_BACKEND_CPU ? "the interpreter's wall clock" : "device events, a busy kernel ahead");
    }
    free(rows);
    free(us);
    dc_model_close(&m);
    if (st != KF_OK) dc_print_error(&err);
    return kf_cli_exit_for(st);
}
