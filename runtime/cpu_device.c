/* The CPU device: the device interface of device.h over the reference
 * interpreter (ir/interp.h). Buffers are host memory; a launch runs the
 * kernel to completion on the calling thread, so async dispatch is simply
 * complete on return and timed dispatch reports wall-clock milliseconds; a
 * graph (runtime/graph.c) is its recorded plans, replayed in order.
 * Validation happened in runtime/device.c before anything here runs. The
 * CPU has no CUDA-C, so raw kernels are refused there. */
#include "rt_impl.h"
#include "../ir/interp.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void cpu_close(kf_device *dev) { (void)dev; }

static kf_status cpu_alloc(kf_device *dev, size_t bytes, uint64_t *addr, kf_error *err)
{
    (void)dev;
    void *p = kf_rt_alloc(bytes);
    if (!p) return kf_error_set(err, KF_ERR_NOMEM, "out of host memory allocating %zu bytes", bytes);
    *addr = (uint64_t)(uintptr_t)p;
    return KF_OK;
}

static void cpu_free(kf_device *dev, uint64_t addr) { (void)dev; kf_rt_free((void *)(uintptr_t)addr); }

static kf_status cpu_upload(kf_device *dev, uint64_t addr, const void *src, size_t bytes, kf_error *err)
{
    (void)err; (void)dev;
    memcpy((void *)(uintptr_t)addr, src, bytes);
    return KF_OK;
}

static kf_status cpu_download(kf_device *dev, uint64_t addr, void *dst, size_t bytes, kf_error *err)
{
    (void)dev; (void)err;
    memcpy(dst, (const void *)(uintptr_t)addr, bytes);
    return KF_OK;
}

/* The interpreter reads core IR directly: nothing to compile. */
static kf_status cpu_pipeline_create(kf_pipeline *p, const kf_module *m, kf_error *err)
{
    (void)m; (void)err;
    uint32_t shared = 0;   /* each static array from a 16-byte boundary, as the interpreter lays them out */
    for (uint32_t i = 0; i < p->k->narrays; i++)
        if (p->k->arrays[i].type.flags & KF_TF_SHARED)
            shared += (p->k->arrays[i].type.len * kf_type_elem_bytes(p->k->arrays[i].type) + 15) & ~15u;
    p->static_shared = shared;
    /* The GPU code carries __launch_bounds__ / .maxntid of the schedule's
     * block: hold CPU launches to the same bound so both agree. */
    const uint32_t *b = p->k->sched.block;
    if (b[0]) p->max_threads = b[0] * (b[1] ? b[1] : 1) * (b[2] ? b[2] : 1);
    p->impl = p;   /* marks "created" */
    p->origin = KF_FROM_BUILD;
    return KF_OK;
}

static void cpu_pipeline_destroy(kf_pipeline *p) { p->impl = NULL; }

static size_t cpu_plan_extra(uint32_t n) { return (size_t)(n ? n : 1) * sizeof(kf_interp_arg); }

static void cpu_plan_pack(kf_plan *plan, uint32_t i)
{
    kf_interp_arg *ia = plan->extra;
    const kf_arg *a = &plan->args[i];
    ia[i] = (kf_interp_arg){.is_buffer = a->buf != NULL, .value = a->value};
    if (a->buf) {
        ia[i].data = (void *)(uintptr_t)a->buf->addr;
        ia[i].bytes = a->buf->bytes;
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static kf_status cpu_launch(kf_plan *plan, kf_dispatch_mode mode, float *ms, kf_error *err)
{
    (void)mode;
    kf_interp_launch l = {.dyn_shared = plan->dyn_shared};
    memcpy(l.grid, plan->grid, sizeof l.grid);
    memcpy(l.block, plan->block, sizeof l.block);
    double t0 = now_ms();
    kf_status st = kf_interp_run(plan->p->k, plan->extra, plan->nargs, &l, NULL, err);
    if (ms) *ms = (float)(now_ms() - t0);
    return st;
}

static kf_status cpu_sync(kf_device *dev, kf_error *err) { (void)dev; (void)err; return KF_OK; }

/* Nodes [from, to) of a graph, all plan launches, run in order as they are
 * now (so a re-targeted plan needs no update); a fault names the launch. */
static kf_status cpu_graph_run(kf_graph *g, uint32_t from, uint32_t to, kf_error *err)
{
    for (uint32_t i = from; i < to; i++) {
        kf_status st = cpu_launch(g->nodes[i].plan, KF_DISPATCH_ASYNC, NULL, err);
        if (st != KF_OK && !err) return st;
        if (st != KF_OK) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return kf_error_set_at(err, st, err->loc, "graph launch %u (kernel '%s'): %s", i,
                                   g->nodes[i].plan->p->name, msg);
        }
    }
    return KF_OK;
}

/* A graph on the CPU is its recorded plans; a collective over several
 * devices needs the other ranks' graphs (kf_comm_graph_launch), and one
 * over this device alone has nothing to do but an all-gather's copy. */
static kf_status cpu_graph_launch(kf_graph *g, kf_dispatch_mode mode, float *ms, kf_error *err)
{
    (void)mode;
    double t0 = now_ms();
    uint32_t from = 0;
    for (uint32_t i = 0; i < g->n; i++)   /* refused before anything runs */
        if (!g->nodes[i].plan && kf_comm_size(g->nodes[i].coll.comm) > 1) return kf_rt_coll_solo(&g->nodes[i].coll, err);
    for (uint32_t i = 0; i <= g->n; i++) {
        if (i < g->n && g->nodes[i].plan) continue;
        kf_status st = cpu_graph_run(g, from, i, err);
        if (st == KF_OK && i < g->n) st = kf_rt_coll_solo(&g->nodes[i].coll, err);
        if (st != KF_OK) return st;
        from = i + 1;
    }
    if (ms) *ms = (float)(now_ms() - t0);
    return KF_OK;
}

static kf_status cpu_copy(kf_device *dev, uint64_t dst, uint64_t src, size_t bytes, kf_dispatch_mode mode,
                          float *ms, kf_error *err)
{
    (void)mode; (void)dev;
    (void)err;
    double t0 = now_ms();
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    if (ms) *ms = (float)(now_ms() - t0);
    return KF_OK;
}

static const kf_device_ops cpu_ops = {
    .close = cpu_close,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .pipeline_create = cpu_pipeline_create,
    .pipeline_create_raw = NULL,
    .pipeline_destroy = cpu_pipeline_destroy,
    .plan_extra = cpu_plan_extra,
    .plan_pack = cpu_plan_pack,
    .launch = cpu_launch,
    .sync = cpu_sync,
    .copy = cpu_copy,
    .bench_bare = NULL,
    .graph_launch = cpu_graph_launch,
    .graph_run = cpu_graph_run,
};

/* Limits mirror a CUDA device so a launch valid here is valid there: an
 * H200's (sm_90), shared memory included (48 KiB without opt-in, 227 KiB
 * with it: the runtime opts in as it does on a GPU). */
kf_status kf_cpu_open(kf_device *dev, kf_error *err)
{
    (void)err;
    kf_device_props *dp = &dev->props;
    dev->ops = &cpu_ops;
    snprintf(dp->name, sizeof dp->name, "cpu (kforge interpreter)");
    dp->max_threads_per_block = 1024;
    dp->max_block[0] = 1024, dp->max_block[1] = 1024, dp->max_block[2] = 64;
    dp->max_grid[0] = 2147483647u, dp->max_grid[1] = 65535, dp->max_grid[2] = 65535;
    dp->shared_per_block = 48 * 1024;
    dp->shared_per_block_optin = KF_SHARED_LIMIT;
    return KF_OK;
}
