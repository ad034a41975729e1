/* Communicators and collectives (device.h, issue 12): the half of tensor
 * parallelism that joins devices. A communicator is a list of devices of
 * one backend, rank i being devs[i]. Over several CUDA devices it is one
 * NCCL communicator per device (ncclCommInitAll, NCCL loaded with dlopen:
 * runtime/nccl.c) and a collective is one NCCL call per rank inside
 * ncclGroupStart/End on the rank's stream, so it is in stream order and a
 * stream capture records it. Over CPU devices (whose work is done when it
 * is queued) a collective is a host loop: the all-reduce adds in f32 in
 * rank order and rounds once, so every rank holds the same bits.
 *
 * Decided here for every backend: the argument checks and their words, and
 * what a recording does with a collective (each rank's graph gets a
 * collective node; a CPU graph holding one is replayed rank by rank in
 * lockstep by kf_comm_graph_launch, a CUDA graph holds NCCL's captured
 * work and is launched on each device). */
#include "nccl.h"
#include "../ir/numeric.h"

#include <stdio.h>
#include <string.h>

struct kf_comm {
    uint32_t n;
    kf_device **dev;          /* rank i's device */
    ncclComm_t *nccl;         /* one per rank over several CUDA devices, else NULL */
    uint32_t *pos;            /* lockstep replay scratch: each rank's next node */
    kf_buffer **send, **recv; /* lockstep replay scratch: one collective's buffers */
};

static const char *const coll_names[] = {"kf_comm_all_reduce", "kf_comm_all_gather"};

static bool is_cuda(const kf_device *d) { return d->backend != KF_BACKEND_CPU; }

/* ---- create / destroy ------------------------------------------------------------------ */

static kf_status check_devices(kf_device *const *devs, uint32_t n, kf_error *err)
{
    if (!devs) return kf_error_set(err, KF_ERR_USAGE, "kf_comm_create: the device list is NULL");
    if (!n) return kf_error_set(err, KF_ERR_USAGE, "a communicator needs at least one device");
    for (uint32_t i = 0; i < n; i++) {
        if (!devs[i]) return kf_error_set(err, KF_ERR_USAGE, "kf_comm_create: device %u is NULL", i);
        if (devs[i]->backend != devs[0]->backend)
            return kf_error_set(err, KF_ERR_USAGE, "kf_comm_create: device %u (%s) is not of device 0's backend (%s): "
                                "a communicator joins devices of one backend", i, devs[i]->props.name,
                                devs[0]->props.name);
        for (uint32_t j = 0; j < i; j++)
            if (devs[j] == devs[i] || (is_cuda(devs[i]) && devs[j]->props.ordinal == devs[i]->props.ordinal))
                return kf_error_set(err, KF_ERR_USAGE, "kf_comm_create: devices %u and %u are the same %s: each rank "
                                    "needs a device of its own", j, i, is_cuda(devs[i]) ? "GPU" : "device");
    }
    return KF_OK;
}

/* One NCCL communicator per GPU (ncclCommInitAll over their ordinals). */
static kf_status nccl_init(kf_comm *c, kf_error *err)
{
    int ords[64];
    kf_status st = kf_nccl_load(err);
    if (st != KF_OK) return st;
    if (c->n > 64) return kf_error_set(err, KF_ERR_USAGE, "a communicator over %u GPUs: at most 64", c->n);
    c->nccl = kf_rt_alloc(c->n * sizeof *c->nccl);
    if (!c->nccl) return kf_error_set(err, KF_ERR_NOMEM, "out of memory for %u NCCL communicators", c->n);
    for (uint32_t i = 0; i < c->n; i++) ords[i] = c->dev[i]->props.ordinal;
    NCCL_CHECK(CommInitAll(c->nccl, (int)c->n, ords));
cleanup:
    kf_cuda_forget_current();
    if (st != KF_OK) {
        kf_rt_free(c->nccl);
        c->nccl = NULL;
    }
    return st;
}

kf_status kf_comm_create(kf_device *const *devs, uint32_t n, kf_comm **out, kf_error *err)
{
    *out = NULL;
    kf_status st = check_devices(devs, n, err);
    if (st != KF_OK) return st;
    kf_comm *c = kf_rt_alloc(sizeof *c);
    if (c) {
        c->dev = kf_rt_alloc(n * sizeof *c->dev);
        c->pos = kf_rt_alloc(n * sizeof *c->pos);
        c->send = kf_rt_alloc(n * sizeof *c->send);
        c->recv = kf_rt_alloc(n * sizeof *c->recv);
    }
    if (!c || !c->dev || !c->pos || !c->send || !c->recv) {
        kf_comm_destroy(c);
        return kf_error_set(err, KF_ERR_NOMEM, "out of memory for a communicator of %u devices", n);
    }
    c->n = n;
    memcpy(c->dev, devs, n * sizeof *devs);
    if (n > 1 && is_cuda(devs[0])) st = nccl_init(c, err);
    if (st != KF_OK) {
        kf_comm_destroy(c);
        return st;
    }
    *out = c;
    return KF_OK;
}

void kf_comm_destroy(kf_comm *c)
{
    if (!c) return;
    for (uint32_t i = 0; c->nccl && i < c->n; i++) kf_nccl.CommDestroy(c->nccl[i]);
    if (c->nccl) kf_cuda_forget_current();
    kf_rt_free(c->nccl);
    kf_rt_free(c->dev);
    kf_rt_free(c->pos);
    kf_rt_free(c->send);
    kf_rt_free(c->recv);
    kf_rt_free(c);
}

uint32_t kf_comm_size(const kf_comm *c) { return c->n; }

int kf_comm_nccl_version(const kf_comm *c) { return c->nccl ? kf_nccl_version() : 0; }

/* ---- argument checks ------------------------------------------------------------------- */

static kf_status check_buf(const kf_comm *c, kf_coll_kind k, const char *what, uint32_t rank, const kf_buffer *b,
                           size_t need, bool written, kf_error *err)
{
    const char *call = coll_names[k];
    if (!b) return kf_error_set(err, KF_ERR_USAGE, "%s: %s of rank %u is NULL", call, what, rank);
    if (b->dev != c->dev[rank]) {
        uint32_t j = 0;
        while (j < c->n && c->dev[j] != b->dev) j++;
        if (j < c->n)
            return kf_error_set(err, KF_ERR_USAGE, "%s: %s of rank %u is on rank %u's device: give each rank a buffer "
                                "on its own device", call, what, rank, j);
        return kf_error_set(err, KF_ERR_USAGE, "%s: %s of rank %u is on a device outside the communicator (%s): give "
                            "each rank a buffer on its own device", call, what, rank, b->dev->props.name);
    }
    if (b->count < need)
        return kf_error_set(err, KF_ERR_USAGE, "%s: %s of rank %u holds %zu elements; the call needs %zu", call,
                            what, rank, b->count, need);
    if (written && b->readonly)
        return kf_error_set(err, KF_ERR_USAGE, "%s: %s of rank %u is read-only and the call writes it", call, what,
                            rank);
    return KF_OK;
}

static kf_status check_args(const kf_comm *c, kf_coll_kind k, kf_buffer *const *send, kf_buffer *const *recv,
                            size_t count, kf_error *err)
{
    const char *call = coll_names[k];
    if (!count) return kf_error_set(err, KF_ERR_USAGE, "%s: count is 0", call);
    if (!send || !recv) return kf_error_set(err, KF_ERR_USAGE, "%s: the buffer list is NULL", call);
    for (uint32_t i = 0; i < c->n; i++) {
        bool ar = k == KF_COLL_ALL_REDUCE;
        kf_status st = check_buf(c, k, ar ? "the buffer" : "send", i, send[i], count, ar, err);
        if (st == KF_OK && !ar) st = check_buf(c, k, "recv", i, recv[i], count * c->n, true, err);
        if (st != KF_OK) return st;
        kf_type t = send[i]->elem, t0 = send[0]->elem;
        if (ar && !kf_type_eq(t, kf_type_scalar(KF_S_F32)) && !kf_type_eq(t, kf_type_scalar(KF_S_F16))) {
            char tn[32];
            return kf_error_set(err, KF_ERR_USAGE, "%s: the buffer of rank %u holds %s: an all-reduce sums f32 or f16",
                                call, i, kf_type_str(t, tn, sizeof tn));
        }
        if (!kf_type_eq(t, t0) || !kf_type_eq(recv[i]->elem, t0))
            return kf_error_set(err, KF_ERR_USAGE, "%s: the buffers of rank %u are not of rank 0's element type", call,
                                i);
    }
    return KF_OK;
}

/* ---- the work --------------------------------------------------------------------------- */

static float load(const kf_buffer *b, bool f16, size_t i)
{
    const void *p = (const void *)(uintptr_t)b->addr;
    return f16 ? (float)kf_f16_to_double(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* CPU: every rank's elements summed in f32 in rank order, in chunks (no allocation). */
static void cpu_all_reduce(const kf_comm *c, kf_buffer *const *bufs, size_t count)
{
    bool f16 = bufs[0]->elem.scalar == KF_S_F16;
    float acc[512];
    for (size_t base = 0; base < count; base += 512) {
        size_t m = count - base < 512 ? count - base : 512;
        for (size_t j = 0; j < m; j++) acc[j] = load(bufs[0], f16, base + j);
        for (uint32_t r = 1; r < c->n; r++)
            for (size_t j = 0; j < m; j++) acc[j] += load(bufs[r], f16, base + j);
        for (uint32_t r = 0; r < c->n; r++) {
            void *p = (void *)(uintptr_t)bufs[r]->addr;
            for (size_t j = 0; j < m; j++) {
                if (f16) ((uint16_t *)p)[base + j] = kf_f16_from_double(acc[j]);
                else ((float *)p)[base + j] = acc[j];
            }
        }
    }
}

static void cpu_all_gather(const kf_comm *c, kf_buffer *const *send, kf_buffer *const *recv, size_t count)
{
    size_t bytes = count * kf_type_elem_bytes(send[0]->elem);
    for (uint32_t i = 0; i < c->n; i++)
        for (uint32_t r = 0; r < c->n; r++)
            memmove((char *)(uintptr_t)recv[i]->addr + r * bytes, (const void *)(uintptr_t)send[r]->addr, bytes);
}

/* One NCCL call per rank on its stream, in one group. */
static kf_status nccl_coll(kf_comm *c, kf_coll_kind k, kf_buffer *const *send, kf_buffer *const *recv, size_t count,
                           kf_error *err)
{
    kf_status st = KF_OK;
    bool group = false;
    ncclDataType_t t = send[0]->elem.scalar == KF_S_F16 ? ncclFloat16 : ncclFloat32;
    size_t bytes = count * kf_type_elem_bytes(send[0]->elem);
    NCCL_CHECK(GroupStart());
    group = true;
    for (uint32_t i = 0; i < c->n; i++) {
        void *s = (void *)(uintptr_t)send[i]->addr, *r = (void *)(uintptr_t)recv[i]->addr, *stream =
            kf_cuda_stream(c->dev[i]);
        if (k == KF_COLL_ALL_REDUCE) NCCL_CHECK(AllReduce(s, r, count, t, ncclSum, c->nccl[i], stream));
        else NCCL_CHECK(AllGather(s, r, bytes, ncclUint8, c->nccl[i], stream));
    }
    group = false;
    NCCL_CHECK(GroupEnd());
cleanup:
    if (group) kf_nccl.GroupEnd();
    kf_cuda_forget_current();
    return st;
}

/* A communicator of one: an all-reduce is nothing, an all-gather a copy. */
static kf_status solo(kf_comm *c, kf_coll_kind k, kf_buffer *send, kf_buffer *recv, size_t count, kf_error *err)
{
    size_t bytes = count * kf_type_elem_bytes(send->elem);
    if (k == KF_COLL_ALL_REDUCE || send->addr == recv->addr) return KF_OK;
    return c->dev[0]->ops->copy(c->dev[0], recv->addr, send->addr, bytes, KF_DISPATCH_ASYNC, NULL, err);
}

static kf_status run(kf_comm *c, kf_coll_kind k, kf_buffer *const *send, kf_buffer *const *recv, size_t count,
                     kf_error *err)
{
    if (c->n == 1) return solo(c, k, send[0], recv[0], count, err);
    if (c->nccl) return nccl_coll(c, k, send, recv, count, err);
    if (k == KF_COLL_ALL_REDUCE) cpu_all_reduce(c, send, count);
    else cpu_all_gather(c, send, recv, count);
    return KF_OK;
}

kf_status kf_rt_coll_solo(const kf_coll *cl, kf_error *err)
{
    if (cl->comm->n > 1)
        return kf_error_set(err, KF_ERR_USAGE, "a CPU graph holding a collective over %u devices replays with "
                            "kf_comm_graph_launch (every rank's graph at once), not kf_graph_launch", cl->comm->n);
    return solo(cl->comm, cl->kind, cl->send, cl->recv, cl->count, err);
}

/* ---- the calls -------------------------------------------------------------------------- */

/* Every rank's device records, or none does (then *rec is false); some
 * recording is refused, abandoning their recordings. */
static kf_status recording(kf_comm *c, kf_coll_kind k, kf_dispatch_mode mode, bool *rec, kf_error *err)
{
    uint32_t nrec = 0;
    for (uint32_t i = 0; i < c->n; i++) nrec += c->dev[i]->rec != NULL;
    *rec = nrec == c->n;
    if (nrec == 0 || (nrec == c->n && mode == KF_DISPATCH_ASYNC)) return KF_OK;
    char what[200];
    snprintf(what, sizeof what, "%s (%s)", coll_names[k],
             nrec < c->n ? "a collective is recorded only when every rank's device records" : "not KF_DISPATCH_ASYNC");
    kf_status st = KF_OK;
    for (uint32_t i = 0; i < c->n; i++) {
        kf_error e2 = {0};
        kf_status s = kf_rt_rec_refuse(c->dev[i], what, st == KF_OK ? err : &e2);
        if (st == KF_OK) st = s;
        kf_error_clear(&e2);
    }
    return st;
}

static kf_status coll(kf_comm *c, kf_coll_kind k, kf_buffer *const *send, kf_buffer *const *recv, size_t count,
                      kf_dispatch_mode mode, kf_error *err)
{
    bool rec = false;
    if (mode == KF_DISPATCH_TIMED)
        return kf_error_set(err, KF_ERR_USAGE, "%s: KF_DISPATCH_TIMED is not a collective's mode (time a region with "
                            "kf_device_timer_start/stop on a CUDA device)", coll_names[k]);
    kf_status st = check_args(c, k, send, recv, count, err);
    if (st == KF_OK) st = recording(c, k, mode, &rec, err);
    if (st != KF_OK) return st;
    if (rec && !is_cuda(c->dev[0])) {   /* the CPU replays it from the node */
        for (uint32_t i = 0; i < c->n && st == KF_OK; i++)
            st = kf_rt_rec_coll(c->dev[i], &(kf_coll){c, k, i, send[i], recv[i], count}, err);
        return st;
    }
    st = run(c, k, send, recv, count, err);
    if (st != KF_OK && rec)   /* the captures may hold part of it: abandoned, the devices usable */
        for (uint32_t i = 0; i < c->n; i++) kf_rt_rec_abandon(c->dev[i], "a collective failed while recording");
    for (uint32_t i = 0; rec && i < c->n && st == KF_OK; i++)
        st = kf_rt_rec_coll(c->dev[i], &(kf_coll){c, k, i, send[i], recv[i], count}, err);
    for (uint32_t i = 0; mode == KF_DISPATCH_SYNC && i < c->n && st == KF_OK; i++)
        st = c->dev[i]->ops->sync(c->dev[i], err);
    return st;
}

kf_status kf_comm_all_reduce(kf_comm *c, kf_buffer *const *bufs, size_t count, kf_dispatch_mode mode, kf_error *err)
{
    return coll(c, KF_COLL_ALL_REDUCE, bufs, bufs, count, mode, err);
}

kf_status kf_comm_all_gather(kf_comm *c, kf_buffer *const *send, kf_buffer *const *recv, size_t count,
                             kf_dispatch_mode mode, kf_error *err)
{
    return coll(c, KF_COLL_ALL_GATHER, send, recv, count, mode, err);
}

/* ---- graphs ------------------------------------------------------------------------------ */

/* Rank i's next collective node from c->pos[i] (g->n: none). */
static uint32_t next_coll(const kf_graph *g, uint32_t from)
{
    while (from < g->n && g->nodes[from].plan) from++;
    return from;
}

/* The collective every rank stopped at, checked to be one and the same. */
static kf_status lockstep_coll(kf_comm *c, kf_graph *const *gs, bool *done, kf_error *err)
{
    const kf_coll *c0 = c->pos[0] < gs[0]->n ? &gs[0]->nodes[c->pos[0]].coll : NULL;
    *done = !c0;
    for (uint32_t i = 0; i < c->n; i++) {
        const kf_coll *ci = c->pos[i] < gs[i]->n ? &gs[i]->nodes[c->pos[i]].coll : NULL;
        if (!ci != !c0 || (ci && (ci->comm != c || ci->kind != c0->kind || ci->count != c0->count || ci->rank != i))) {
            char at[160] = "its end";
            if (ci) kf_rt_node_name(gs[i], c->pos[i], at, sizeof at);
            return kf_error_set(err, KF_ERR_USAGE, "kf_comm_graph_launch: rank %u's graph is at %s where rank 0's %s: "
                                "the graphs must hold the same collectives of this communicator in the same order",
                                i, at, c0 ? "has a collective" : "ends");
        }
        if (ci) c->send[i] = ci->send, c->recv[i] = ci->recv;
    }
    return *done ? KF_OK : run(c, c0->kind, c->send, c->recv, c0->count, err);
}

/* CPU graphs: each rank's launches up to its next collective, the
 * collective over all, and on until every graph ends. */
static kf_status lockstep(kf_comm *c, kf_graph *const *gs, kf_error *err)
{
    for (uint32_t i = 0; i < c->n; i++) c->pos[i] = 0;
    for (;;) {
        for (uint32_t i = 0; i < c->n; i++) {
            uint32_t to = next_coll(gs[i], c->pos[i]);
            kf_status st = c->dev[i]->ops->graph_run(gs[i], c->pos[i], to, err);
            if (st != KF_OK) return st;
            c->pos[i] = to;
        }
        bool done;
        kf_status st = lockstep_coll(c, gs, &done, err);
        if (st != KF_OK || done) return st;
        for (uint32_t i = 0; i < c->n; i++) c->pos[i]++;
    }
}

kf_status kf_comm_graph_launch(kf_comm *c, kf_graph *const *gs, kf_dispatch_mode mode, kf_error *err)
{
    if (mode == KF_DISPATCH_TIMED)
        return kf_error_set(err, KF_ERR_USAGE, "kf_comm_graph_launch: KF_DISPATCH_TIMED is not its mode (time a "
                            "region with kf_device_timer_start/stop on a CUDA device)");
    for (uint32_t i = 0; i < c->n; i++) {
        if (!gs || !gs[i] || gs[i]->dev != c->dev[i])
            return kf_error_set(err, KF_ERR_USAGE, "kf_comm_graph_launch: graph %u is %s", i,
                                gs && gs[i] ? "not recorded on the rank's device" : "NULL");
        kf_status st = kf_rt_rec_refuse(c->dev[i], "kf_comm_graph_launch", err);
        if (st != KF_OK) return st;
    }
    kf_status st = KF_OK;
    if (c->dev[0]->ops->graph_run) st = lockstep(c, gs, err);
    else
        for (uint32_t i = 0; i < c->n && st == KF_OK; i++) st = kf_graph_launch(gs[i], KF_DISPATCH_ASYNC, NULL, err);
    for (uint32_t i = 0; mode == KF_DISPATCH_SYNC && i < c->n && st == KF_OK; i++)
        st = c->dev[i]->ops->sync(c->dev[i], err);
    return st;
}

/* ---- benchmark reference ---------------------------------------------------------------------- */

/* Starts (stop false) or stops every rank's device timer; stopping gives the slowest rank's ms. */
static kf_status timers(kf_comm *c, bool stop, float *ms, kf_error *err)
{
    kf_status st = KF_OK;
    for (uint32_t i = 0; i < c->n && st == KF_OK; i++) {
        float t = 0;
        st = c->dev[i]->ops->timer(c->dev[i], stop, &t, err);
        if (stop && t > *ms) *ms = t;
    }
    return st;
}

kf_status kf_comm_bench_bare(kf_comm *c, kf_buffer *const *bufs, size_t count, uint32_t n, double *us, kf_error *err)
{
    *us = 0;
    if (!c->nccl)
        return kf_error_set(err, KF_ERR_USAGE, "kf_comm_bench_bare: the communicator has no NCCL to time (%s)",
                            c->n > 1 ? "CPU devices" : "one device");
    kf_status st = check_args(c, KF_COLL_ALL_REDUCE, bufs, bufs, count, err);
    for (uint32_t i = 0; i < c->n && st == KF_OK; i++) st = kf_rt_rec_refuse(c->dev[i], "kf_comm_bench_bare", err);
    if (st == KF_OK) st = timers(c, false, NULL, err);
    ncclDataType_t t = bufs[0]->elem.scalar == KF_S_F16 ? ncclFloat16 : ncclFloat32;
    for (uint32_t k = 0; k < n && st == KF_OK; k++) {
        NCCL_CHECK(GroupStart());
        for (uint32_t i = 0; i < c->n; i++) {
            void *p = (void *)(uintptr_t)bufs[i]->addr;
            ncclResult_t r = kf_nccl.AllReduce(p, p, count, t, ncclSum, c->nccl[i], kf_cuda_stream(c->dev[i]));
            if (r != ncclSuccess) {
                kf_nccl.GroupEnd();
                st = kf_nccl_fail(err, "ncclAllReduce", r, __FILE__, __LINE__);
                goto cleanup;
            }
        }
        NCCL_CHECK(GroupEnd());
    }
    float ms = 0;
    if (st == KF_OK) st = timers(c, true, &ms, err);
    if (st == KF_OK) *us = n ? ms * 1e3 / n : 0;
cleanup:
    kf_cuda_forget_current();
    return st;
}
