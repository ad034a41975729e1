/* --tp N (decode.h): the decode step split over N devices of one backend,
 * Megatron-style. This file is the driver: it opens one rank model per
 * device (model.c builds each rank's part: its rows and columns of the
 * matrices, its heads and their KV cache), one communicator over the
 * devices (kf_comm_create: NCCL over several GPUs, host loops over CPU
 * devices), and runs a step as the ranks' launches up to each collective,
 * the collective over all ranks, and on:
 *
 *   per layer: norm -> QKV rows -> RoPE, cache, attention of the rank's heads
 *              -> its Wo columns (f32 part) -> ALL-REDUCE -> x += part
 *              -> norm -> gate/up rows -> silu_mul -> its Wdown columns
 *              -> ALL-REDUCE -> x += part
 *   then:      norm -> the rank's vocabulary rows -> ALL-GATHER of the logits
 *              -> argmax and embed on every rank (the same token everywhere)
 *
 * Every rank's plan list has the same shape (a NULL plan marks the k-th
 * collective), so the ranks walk it in lockstep. Graph mode records every
 * rank's step in its device's graph (the collectives too) and replays them
 * with kf_comm_graph_launch. */
#include "decode.h"

#include <stdlib.h>
#include <string.h>

kf_status dc_tp_check(const dc_config *c, kf_error *err)
{
    uint32_t n = c->tp, v[5] = {c->sh.heads, c->sh.kv_heads, c->sh.ffn, c->sh.vocab, 8 * n};
    static const char *const names[4] = {"heads", "KV heads", "FFN size", "vocabulary"};
    if (n <= 1) return KF_OK;
    if (c->model) return kf_error_set(err, KF_ERR_USAGE, "--tp %u takes random weights: drop --model", n);
    for (int i = 0; i < 4; i++)
        if (v[i] % n)
            return kf_error_set(err, KF_ERR_USAGE, "--tp %u: the %s (%u) do not split over %u devices: give a --tp "
                                "that divides the heads (%u), the KV heads (%u), the FFN size and the vocabulary", n,
                                names[i], v[i], n, c->sh.heads, c->sh.kv_heads);
    if ((c->sh.ffn / n) % 8)
        return kf_error_set(err, KF_ERR_USAGE, "--tp %u: each device's FFN share (%u) must be a multiple of 8 "
                            "(16-byte vectors)", n, c->sh.ffn / n);
    uint32_t hd = c->sh.heads / n * c->sh.head_dim;
    if (c->wt == DC_Q4K && (hd % 256 || (c->sh.ffn / n) % 256))
        return kf_error_set(err, KF_ERR_USAGE, "--tp %u with q4k weights: each device's heads x head dim (%u) and FFN "
                            "share (%u) must be multiples of 256 (the output and down matrices split by whole Q4_K "
                            "blocks): give more heads or a smaller --tp", n, hd, c->sh.ffn / n);
    return KF_OK;
}

/* Launches [from, to) of every rank's plans; then collective k at `to` if it is one. */
static kf_status segment(dc_model *m, uint32_t from, uint32_t to, uint32_t k, kf_dispatch_mode dm, kf_error *err)
{
    kf_status st = KF_OK;
    for (uint32_t r = 0; r < m->c->tp; r++)
        for (uint32_t i = from; i < to && st == KF_OK; i++) st = kf_plan_launch(m->ranks[r].plan[i], dm, NULL, err);
    if (st != KF_OK || to == m->ranks[0].nplan) return st;
    for (uint32_t r = 0; r < m->c->tp; r++) m->send[r] = m->ranks[r].coll[k].send, m->recv[r] = m->ranks[r].coll[k].recv;
    const dc_coll *c0 = &m->ranks[0].coll[k];
    return c0->gather ? kf_comm_all_gather(m->comm, m->send, m->recv, c0->count, dm, err)
                      : kf_comm_all_reduce(m->comm, m->send, c0->count, dm, err);
}

/* The step's launches and collectives in order (recorded while the devices record). */
static kf_status issue(dc_model *m, kf_dispatch_mode dm, kf_error *err)
{
    const dc_model *r0 = &m->ranks[0];
    uint32_t from = 0, k = 0;
    kf_status st = KF_OK;
    for (uint32_t i = 0; i <= r0->nplan && st == KF_OK; i++) {
        if (i < r0->nplan && r0->plan[i]) continue;
        st = segment(m, from, i, k++, dm, err);
        from = i + 1;
    }
    return st;
}

/* NCCL sets up its connections at a communicator's first collectives
 * (allocating memory, which a stream capture cannot hold): the step's two
 * kinds run once, eagerly, before it is recorded (their buffers are
 * scratch the step overwrites). */
static kf_status warm(dc_model *m, kf_error *err)
{
    for (uint32_t r = 0; r < m->c->tp; r++) m->send[r] = m->ranks[r].part;
    kf_status st = kf_comm_all_reduce(m->comm, m->send, m->sh.hidden, KF_DISPATCH_SYNC, err);
    for (uint32_t r = 0; r < m->c->tp; r++) m->send[r] = m->ranks[r].lpart, m->recv[r] = m->ranks[r].logits;
    return st == KF_OK ? kf_comm_all_gather(m->comm, m->send, m->recv, m->ranks[0].sh.vocab, KF_DISPATCH_SYNC, err)
                       : st;
}

static kf_status record(dc_model *m, kf_error *err)
{
    kf_status st = warm(m, err);
    if (st != KF_OK) return st;
    m->graphs = calloc(m->c->tp, sizeof *m->graphs);
    if (!m->graphs) return kf_error_set(err, KF_ERR_NOMEM, "out of memory for %u graphs", m->c->tp);
    for (uint32_t r = 0; r < m->c->tp && st == KF_OK; r++) st = kf_graph_begin(m->ranks[r].dev, err);
    if (st == KF_OK) st = issue(m, KF_DISPATCH_ASYNC, err);
    for (uint32_t r = 0; r < m->c->tp; r++) {   /* every recording ended, even after a failure */
        kf_error e2 = {0};
        kf_status s = kf_graph_end(m->ranks[r].dev, &m->graphs[r], st == KF_OK ? err : &e2);
        if (st == KF_OK) st = s;
        kf_error_clear(&e2);
    }
    return st;
}

kf_status dc_tp_open(dc_model *m, const dc_config *c, kf_backend b, bool graph, kf_error *err)
{
    memset(m, 0, sizeof *m);
    m->c = c;
    m->sh = c->sh;
    kf_status st = dc_tp_check(c, err);
    if (st != KF_OK) return st;
    m->ranks = calloc(c->tp, sizeof *m->ranks);
    m->send = calloc(c->tp, sizeof *m->send);
    m->recv = calloc(c->tp, sizeof *m->recv);
    kf_device **devs = calloc(c->tp, sizeof *devs);
    if (!m->ranks || !m->send || !m->recv || !devs) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory for %u ranks", c->tp);
    for (uint32_t r = 0; r < c->tp && st == KF_OK; r++) {
        st = dc_rank_open(&m->ranks[r], c, b, r, r ? m->ranks[0].split : 0, err);
        devs[r] = m->ranks[r].dev;
    }
    if (st == KF_OK) st = kf_comm_create(devs, c->tp, &m->comm, err);
    free(devs);
    if (st != KF_OK) return st;
    m->dev = m->ranks[0].dev;
    m->split = m->ranks[0].split;
    m->nplan = m->ranks[0].nplan - m->ranks[0].ncoll;   /* launches per rank */
    m->ncoll = m->ranks[0].ncoll;
    return graph ? record(m, err) : KF_OK;
}

kf_status dc_tp_step(dc_model *m, uint32_t s, dc_mode mode, kf_error *err)
{
    kf_status st = dc_model_retarget(m, s, err);
    if (st != KF_OK) return st;
    if (mode == DC_GRAPH) {
        if (!m->graphs) return kf_error_set(err, KF_ERR_USAGE, "graph mode needs the step recorded (a bug)");
        return kf_comm_graph_launch(m->comm, m->graphs, KF_DISPATCH_ASYNC, err);
    }
    return issue(m, mode == DC_SYNC ? KF_DISPATCH_SYNC : KF_DISPATCH_ASYNC, err);
}

void dc_tp_close(dc_model *m)
{
    for (uint32_t r = 0; m->graphs && r < m->c->tp; r++) kf_graph_destroy(m->graphs[r]);
    free(m->graphs);
    kf_comm_destroy(m->comm);
    for (uint32_t r = 0; m->ranks && r < m->c->tp; r++) dc_model_close(&m->ranks[r]);
    free(m->ranks);
    free(m->send);
    free(m->recv);
    memset(m, 0, sizeof *m);
}
