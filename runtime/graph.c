/* Graphs (device.h): a sequence of plan launches recorded once and replayed
 * with one call, the half shared by the CPU and CUDA devices. The backends
 * hold what is theirs through the graph_* operations of kf_device_ops: the
 * CUDA device records by stream capture and replays a CUDA graph, updating
 * the kernel node of each plan re-targeted since the last replay
 * (cuGraphExecKernelNodeSetParams: no re-capture); the CPU device keeps
 * nothing and replays the recorded plans through the interpreter.
 *
 * What is decided here, once for both: which calls a recording refuses and
 * the words of that error (the call, the launches recorded so far, and that
 * the recording is abandoned), that an abandoned recording leaves the
 * device as it was before kf_graph_begin (its reason kept for kf_graph_end),
 * and which nodes a replay must update: a plan's `gen` moves with every
 * re-target, and each node remembers the gen it last gave the device. */
#include "rt_impl.h"

#include <stdio.h>
#include <string.h>

void kf_rt_node_name(const kf_graph *g, uint32_t i, char *out, size_t n)
{
    const kf_graph_node *nd = &g->nodes[i];
    if (nd->plan) snprintf(out, n, "launch %u (kernel '%.100s')", i, nd->plan->p->name);
    else snprintf(out, n, "collective %u (%s)", i, nd->coll.kind == KF_COLL_ALL_REDUCE ? "all_reduce" : "all_gather");
}

/* "after launch N (kernel 'K')" for the last node recorded, or "before any launch". */
static void last_launch(const kf_graph *g, char *out, size_t n)
{
    char name[160];
    if (!g->n) {
        snprintf(out, n, "before any launch");
        return;
    }
    kf_rt_node_name(g, g->n - 1, name, sizeof name);
    snprintf(out, n, "after %s", name);
}

static void graph_free(kf_graph *g)
{
    kf_rt_free(g->nodes);
    kf_rt_free(g);
}

void kf_rt_rec_abandon(kf_device *dev, const char *why)
{
    kf_graph *g = dev->rec;
    if (!g) return;
    if (dev->ops->graph_abort) dev->ops->graph_abort(g);
    dev->rec = NULL;
    graph_free(g);
    snprintf(dev->rec_failed, sizeof dev->rec_failed, "%s", why);
}

/* Abandons the recording and sets err (status st) to `msg` + the common ending. */
static kf_status abandon(kf_device *dev, kf_status st, const char *msg, kf_error *err)
{
    char why[900];
    snprintf(why, sizeof why, "graph recording on %.100s: %.770s", dev->props.name, msg);
    kf_rt_rec_abandon(dev, why);
    return kf_error_set(err, st, "%s; the recording is abandoned and the device runs work as before", why);
}

kf_status kf_rt_rec_refuse(kf_device *dev, const char *what, kf_error *err)
{
    if (!dev) return kf_error_set(err, KF_ERR_USAGE, "%s: the device is NULL (open one with kf_device_open)", what);
    if (!dev->rec) return KF_OK;
    char at[200], msg[700];
    last_launch(dev->rec, at, sizeof at);
    snprintf(msg, sizeof msg, "%.200s %.200s: a graph holds only plan launches made with KF_DISPATCH_ASYNC", what, at);
    return abandon(dev, KF_ERR_USAGE, msg, err);
}

/* Room for one more node. */
static kf_status grow(kf_graph *g, kf_error *err)
{
    if (g->n < g->cap) return KF_OK;
    uint32_t cap = g->cap ? 2 * g->cap : 64;
    kf_graph_node *nodes = cap > g->cap ? kf_rt_alloc((size_t)cap * sizeof *nodes) : NULL;
    if (!nodes) return kf_error_set(err, KF_ERR_NOMEM, "out of memory recording launch %u of a graph", g->n);
    if (g->n) memcpy(nodes, g->nodes, (size_t)g->n * sizeof *nodes);
    kf_rt_free(g->nodes);
    g->nodes = nodes;
    g->cap = cap;
    return KF_OK;
}

kf_status kf_rt_rec_launch(kf_plan *plan, kf_dispatch_mode mode, kf_status refused, kf_error *err)
{
    kf_device *dev = plan->p->dev;
    kf_graph *g = dev->rec;
    char msg[800];
    if (refused != KF_OK) {
        snprintf(msg, sizeof msg, "launch %u (kernel '%.100s') is refused: %.600s", g->n, plan->p->name,
                 err ? err->msg : kf_status_name(refused));
        return abandon(dev, refused, msg, err);
    }
    if (mode != KF_DISPATCH_ASYNC) {
        snprintf(msg, sizeof msg, "launch %u (kernel '%s') is %s: a graph records launches made with "
                 "KF_DISPATCH_ASYNC only (a wait for the device cannot be recorded)", g->n, plan->p->name,
                 mode == KF_DISPATCH_SYNC ? "KF_DISPATCH_SYNC" : "KF_DISPATCH_TIMED");
        return abandon(dev, KF_ERR_USAGE, msg, err);
    }
    if (plan->empty) {
        snprintf(msg, sizeof msg, "launch %u (kernel '%s') launches nothing (a grid dimension is 0)", g->n,
                 plan->p->name);
        return abandon(dev, KF_ERR_USAGE, msg, err);
    }
    kf_status st = grow(g, err);
    if (st == KF_OK && dev->ops->graph_record) st = dev->ops->graph_record(g, plan, err);
    if (st != KF_OK) {
        snprintf(msg, sizeof msg, "launch %u (kernel '%.100s'): %.660s", g->n, plan->p->name, err ? err->msg : "failed");
        return abandon(dev, st, msg, err);
    }
    g->nodes[g->n++] = (kf_graph_node){plan, plan->gen, {0},
                                       {plan->grid[0], plan->grid[1], plan->grid[2]}, plan->dyn_shared};
    return KF_OK;
}

kf_status kf_rt_rec_coll(kf_device *dev, const kf_coll *c, kf_error *err)
{
    kf_graph *g = dev->rec;
    kf_status st = grow(g, err);
    if (st == KF_OK && dev->ops->graph_record) st = dev->ops->graph_record(g, NULL, err);
    if (st != KF_OK) {
        char msg[800];
        snprintf(msg, sizeof msg, "collective %u: %.700s", g->n, err ? err->msg : "failed");
        return abandon(dev, st, msg, err);
    }
    g->nodes[g->n++] = (kf_graph_node){NULL, 0, *c, {0, 0, 0}, 0};
    return KF_OK;
}

kf_status kf_graph_begin(kf_device *dev, kf_error *err)
{
    kf_status st = kf_rt_rec_refuse(dev, "kf_graph_begin (a second recording)", err);
    if (st != KF_OK) return st;
    dev->rec_failed[0] = 0;
    kf_graph *g = kf_rt_alloc(sizeof *g);
    if (!g) return kf_error_set(err, KF_ERR_NOMEM, "out of memory starting a graph recording");
    g->dev = dev;
    st = dev->ops->graph_begin ? dev->ops->graph_begin(g, err) : KF_OK;
    if (st != KF_OK) {
        graph_free(g);
        return st;
    }
    dev->rec = g;
    return KF_OK;
}

kf_status kf_graph_end(kf_device *dev, kf_graph **out, kf_error *err)
{
    *out = NULL;
    kf_graph *g = dev->rec;
    if (!g && dev->rec_failed[0]) {
        kf_status st = kf_error_set(err, KF_ERR_USAGE, "the graph recording was abandoned: %s", dev->rec_failed);
        dev->rec_failed[0] = 0;
        return st;
    }
    if (!g) return kf_error_set(err, KF_ERR_USAGE, "no graph is being recorded on %s: call kf_graph_begin first",
                                dev->props.name);
    if (!g->n) {
        kf_status st = abandon(dev, KF_ERR_USAGE, "kf_graph_end before any launch: a graph needs at least one launch", err);
        dev->rec_failed[0] = 0;   /* reported here, not again */
        return st;
    }
    dev->rec = NULL;
    kf_status st = dev->ops->graph_end ? dev->ops->graph_end(g, err) : KF_OK;
    if (st != KF_OK) {
        graph_free(g);
        return st;
    }
    *out = g;
    return KF_OK;
}

/* Carries every plan re-targeted since the last replay into g. */
static kf_status update_nodes(kf_graph *g, kf_error *err)
{
    const kf_device_ops *ops = g->dev->ops;
    for (uint32_t i = 0; i < g->n; i++) {
        kf_graph_node *nd = &g->nodes[i];
        kf_status st = nd->plan ? kf_rt_plan_writable(nd->plan, err) : KF_OK;
        if (st != KF_OK) return st;
        if (!nd->plan || nd->gen == nd->plan->gen) continue;
        if (nd->plan->empty)
            return kf_error_set(err, KF_ERR_USAGE, "launch %u (kernel '%s') of the graph launches nothing now "
                                "(a grid dimension is 0)", i, nd->plan->p->name);
        st = ops->graph_update ? ops->graph_update(g, i, err) : KF_OK;
        if (st != KF_OK) return st;
        nd->gen = nd->plan->gen;
    }
    return KF_OK;
}

kf_status kf_graph_launch(kf_graph *g, kf_dispatch_mode mode, float *ms, kf_error *err)
{
    KF_NEED(g, err, "the graph");
    kf_status st = kf_rt_rec_refuse(g->dev, "kf_graph_launch", err);
    if (st != KF_OK) return st;
    if (mode == KF_DISPATCH_TIMED && !ms)
        return kf_error_set(err, KF_ERR_USAGE, "a timed graph launch needs somewhere to put the time (ms is NULL)");
    st = update_nodes(g, err);
    return st == KF_OK ? g->dev->ops->graph_launch(g, mode, ms, err) : st;
}

uint32_t kf_graph_size(const kf_graph *g) { return g ? g->n : 0; }

void kf_graph_destroy(kf_graph *g)
{
    if (!g) return;
    if (g->impl && g->dev->ops->graph_destroy) g->dev->ops->graph_destroy(g);
    graph_free(g);
}
