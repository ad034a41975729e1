/* Measuring a bench (bench_case.h) on a GPU, for `kforge bench`
 * (tools/cmd_bench.c). Two phases, so that every error in what is asked
 * comes before any device is opened:
 *
 *   kf_bench_prepare   compile each step's module (bench, step and variant
 *                      -D), bind its arguments (generators deferred to the
 *                      device), find the buffers the steps share, evaluate
 *                      the byte and flop counts;
 *   kf_bench_measure   on a device: make the buffers (rand() inputs tiled
 *                      on the device, tools/cmd_common.h), build a plan per
 *                      step, read registers and local bytes, run once with
 *                      a fence per step (faults name the step), warm up,
 *                      then time N passes, each pass the steps launched
 *                      back to back between one pair of events, after an
 *                      L2 flush (a write of 2 x L2 bytes, then a read of
 *                      another 2 x L2, both outside the timed region, so
 *                      no input and no dirty line of earlier work is left
 *                      in the cache). N and the warm-up adapt to the pass's
 *                      time unless given.
 *
 * Also here: the device's copy bandwidth (the reference of every ratio),
 * the cold-build vs warm-start time of a bench's kernels, and the host cost
 * of a launch through a bare cuLaunchKernel, a plan and kf_dispatch. */
#ifndef KF_BENCH_RUN_H
#define KF_BENCH_RUN_H

#include "bench_case.h"

/* One step of a prepared bench. */
typedef struct {
    kf_module *m;               /* a .kf step's module; NULL for a raw one */
    kf_cli_raw *raw;            /* a raw step's source (FILE.cu or FILE.ptx), or NULL */
    const kf_ir_kernel *k;      /* m's kernel, or raw's stand-in */
    kf_cli_inputs in;
    kf_launch launch;           /* overrides + the element count */
    int32_t *slot;              /* per parameter: its buffer in kf_bench_prep.bufs, -1 for values */
} kf_bench_pstep;

/* A distinct buffer of a prepared bench (shared by steps through `set`). */
typedef struct {
    const char *name;
    kf_type elem;
    size_t elems;
    const void *host;           /* its contents (an @file.npy), or NULL: gen */
    const kf_fill_spec *gen;    /* zeros / rand / iota, or NULL */
    bool written;               /* some step binds it to a `&mut` parameter */
    bool shared;                /* bound through `set`: one buffer for every step naming it */
} kf_bench_buf;

typedef struct {
    const kf_bench *bench;
    const kf_bench_variant *variant;   /* NULL: the bench as written */
    uint32_t nsteps, nbufs;
    kf_bench_pstep *steps;
    kf_bench_buf *bufs;
    double bytes, flops;               /* one pass; flops 0: not given */
} kf_bench_prep;

/* Prepares bench b with variant v (NULL: none). Compile errors are
 * printed as `kforge bench` prints them (kf_cli_compile) and return
 * KF_EXIT_FAIL; bad arguments, counts or expressions are printed
 * ("kforge bench: error: BENCH: ...") and return KF_EXIT_USAGE. */
int kf_bench_prepare(const kf_bench *b, const kf_bench_variant *v, kf_bench_prep *out);
void kf_bench_prep_free(kf_bench_prep *p);

/* Why p does not run on backend b (a raw step of the other path; the
 * reason names the step), written into why; false when it runs. */
bool kf_bench_not_applicable(const kf_bench_prep *p, kf_backend b, char *why, size_t size);

/* A GPU device with what timing needs: the L2 flush's scratch and kernels. */
typedef struct {
    kf_device *dev;
    kf_backend backend;
    size_t flush_bytes;         /* written, then as many read, before each timed pass */
    kf_module *flush_m;
    kf_pipeline *flush_p[2];
    kf_buffer *scratch, *half[2], *sink;   /* 2 x flush_bytes: the half written, the half read */
    kf_plan *flush_plan[2];
} kf_bench_dev;

kf_status kf_bench_dev_open(kf_backend backend, kf_bench_dev *d, kf_error *err);
void kf_bench_dev_close(kf_bench_dev *d);

/* Device-to-device copy of 1 GiB, counting bytes read and written, median
 * of `runs` after a warm-up, in GB/s. */
kf_status kf_bench_copy_bandwidth(kf_bench_dev *d, int runs, double *gbps, kf_error *err);

typedef struct {
    int runs, warmup;           /* 0: adaptive */
    double budget_ms;           /* adaptive: device time of the timed passes */
    bool flush;                 /* flush the L2 before each timed pass */
} kf_bench_timing;

typedef struct {
    float median, min, max;     /* ms per pass */
    int runs, warmup;
    kf_resources *res;          /* per step */
    int step_failed;            /* the step a fault was reported at, -1: none */
} kf_bench_result;

/* Measures p on d as the header says. On error the message names the
 * step (and its kernel) it happened at. Free r with kf_bench_result_free. */
kf_status kf_bench_measure(kf_bench_dev *d, const kf_bench_prep *p, const kf_bench_timing *t, kf_bench_result *r,
                           kf_error *err);
void kf_bench_result_free(kf_bench_result *r);

/* Cold build (kforge's cache cleared, the driver's JIT cache off: set
 * CUDA_CACHE_DISABLE=1 before the device is opened) and warm start (only
 * kforge's disk cache: hash, read, load the cubin; median of several) of
 * every step's kernel, summed, in ms. Clears kforge's cache: point
 * KFORGE_CACHE_DIR at a private directory first. */
kf_status kf_bench_startup(kf_bench_dev *d, const kf_bench_prep *p, double *cold, double *warm, kf_error *err);

/* Host microseconds per launch of a tiny kernel: a bare cuLaunchKernel
 * loop, a pre-sorted plan and kf_dispatch (async), interleaved over many
 * rounds, medians. */
typedef struct {
    double bare, plan, async;
} kf_bench_host;
kf_status kf_bench_host_cost(kf_bench_dev *d, kf_bench_host *h, kf_error *err);

#endif
