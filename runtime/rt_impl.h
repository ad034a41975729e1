/* Private to runtime/: the structures behind the opaque handles of
 * include/kforge.h and the vtable each backend fills (runtime/cpu_device.c,
 * runtime/cuda_device.c). The shared half (runtime/device.c) owns buffer
 * bookkeeping, launch-shape resolution and argument validation, so both
 * backends reject exactly the same bad input with the same words. */
#ifndef KF_RT_IMPL_H
#define KF_RT_IMPL_H

#include "device.h"

typedef struct {
    void (*close)(kf_device *dev);
    /* Zeroed storage of `bytes` (> 0); *addr is a host pointer or a CUdeviceptr. */
    kf_status (*alloc)(kf_device *dev, size_t bytes, uint64_t *addr, kf_error *err);
    void (*free)(kf_device *dev, uint64_t addr);
    kf_status (*upload)(kf_device *dev, uint64_t addr, const void *src, size_t bytes, kf_error *err);
    kf_status (*download)(kf_device *dev, uint64_t addr, void *dst, size_t bytes, kf_error *err);
    /* Fills p->impl and p->static_shared for a .kf kernel. */
    kf_status (*pipeline_create)(kf_pipeline *p, const kf_module *m, kf_error *err);
    kf_status (*pipeline_create_raw)(kf_pipeline *p, const kf_raw_kernel *rk, kf_error *err);
    /* Fills ps[i]->impl and static_shared for the n kernels of m with one
     * build shared by all (NULL: each is built by pipeline_create). On
     * failure the caller destroys them (pipeline_destroy where impl is set). */
    kf_status (*module_create)(kf_pipeline **ps, uint32_t n, const kf_module *m, kf_error *err);
    void (*pipeline_destroy)(kf_pipeline *p);
    /* Bytes of backend launch data a plan of n arguments needs after itself. */
    size_t (*plan_extra)(uint32_t n);
    /* Packs validated argument i into plan->extra (at creation, for each
     * argument, and again when it is re-targeted): no allocation. */
    void (*plan_pack)(kf_plan *plan, uint32_t i);
    kf_status (*launch)(kf_plan *plan, kf_dispatch_mode mode, float *ms, kf_error *err);
    kf_status (*sync)(kf_device *dev, kf_error *err);
    kf_status (*copy)(kf_device *dev, uint64_t dst, uint64_t src, size_t bytes, kf_dispatch_mode mode, float *ms,
                      kf_error *err);
    kf_status (*bench_bare)(kf_plan *plan, uint32_t n, double *us, kf_error *err);   /* NULL: unsupported */
    /* Start (stop false) or end (stop true: wait, *ms) a timed region; NULL: unsupported. */
    kf_status (*timer)(kf_device *dev, bool stop, float *ms, kf_error *err);
    /* Sends later work to the caller's stream (external true) or back to the
     * device's own (false), after the current stream's work; NULL: no streams. */
    kf_status (*stream)(kf_device *dev, bool external, void *stream, kf_error *err);
    /* Registers and local bytes of a pipeline's code; NULL: unsupported. */
    kf_status (*resources)(const kf_pipeline *p, kf_resources *out, kf_error *err);
    /* Graphs (runtime/graph.c drives them; NULL: nothing to do there).
     * graph_begin starts recording g (CUDA: stream capture); graph_record
     * records one validated plan launch as node g->n (CUDA: the launch,
     * captured, and its node); graph_abort ends a recording that failed
     * and drops what it holds (g->impl included); graph_end ends a good one
     * and makes g launchable (on failure it has ended the recording and
     * freed g->impl); graph_update carries node i's plan, re-targeted, into
     * g; graph_launch replays g. */
    kf_status (*graph_begin)(kf_graph *g, kf_error *err);
    kf_status (*graph_record)(kf_graph *g, kf_plan *plan, kf_error *err);
    void (*graph_abort)(kf_graph *g);
    kf_status (*graph_end)(kf_graph *g, kf_error *err);
    kf_status (*graph_update)(kf_graph *g, uint32_t i, kf_error *err);
    kf_status (*graph_launch)(kf_graph *g, kf_dispatch_mode mode, float *ms, kf_error *err);
    void (*graph_destroy)(kf_graph *g);
    /* CPU only (NULL elsewhere): runs nodes [from, to) of g, all plan launches. */
    kf_status (*graph_run)(kf_graph *g, uint32_t from, uint32_t to, kf_error *err);
} kf_device_ops;

struct kf_device {
    const kf_device_ops *ops;
    kf_backend backend;
    kf_device_props props;
    void *impl;              /* backend state */
    kf_graph *rec;           /* the graph being recorded (kf_graph_begin), or NULL */
    bool pdl_able;           /* programmatic dependent launch possible (CUDA: sm_90, cuLaunchKernelEx) */
    bool pdl;                /* kf_device_pdl: launches use it (CUDA device only) */
    char rec_failed[1000];    /* why the last recording was abandoned, "" if it was not */
    uint64_t ro_gen;         /* bumped when a buffer on it is marked read-only (kf_rt_plan_writable) */
};

struct kf_buffer {
    kf_device *dev;
    kf_buffer *parent;       /* NULL for an allocation */
    kf_buffer *root;         /* the allocation (itself when parent is NULL) */
    kf_type elem;
    size_t count;
    size_t offset;           /* bytes from the root's start */
    size_t bytes;
    uint64_t addr;           /* root addr + offset */
    uint32_t refs;           /* 1 for the handle + 1 per live view */
    bool readonly;           /* this handle's mark; read-only = marked here or on an ancestor */
    bool external;           /* kf_buffer_wrap: the caller's memory, never freed */
};

struct kf_pipeline {
    kf_device *dev;
    const char *name;        /* kernel / entry name (owned copy) */
    kf_ir_param *params;     /* binding list (owned copy) */
    uint32_t nparams;
    const kf_ir_kernel *k;   /* NULL for raw kernels */
    uint32_t block[3];       /* default block; 0 = none */
    uint32_t static_shared;  /* bytes of static shared memory the code uses */
    uint32_t max_threads;    /* the code's limit (launch bound, registers); 0 = the device's */
    kf_code_origin origin;
    char warning[512];       /* cache or NVRTC warning (kf_pipeline_warning), "" if none */
    void *impl;
};

struct kf_plan {
    kf_pipeline *p;
    uint32_t nargs;
    kf_arg *args;            /* copies, in binding order */
    size_t *need;            /* per argument: the bytes a re-bound buffer must hold (the
                                buffer's at creation: what the plan was validated with) */
    kf_value *vals;          /* scratch for re-evaluating the schedule (nargs values) */
    kf_launch launch;        /* as given at creation (zeros: all from the schedule) */
    uint32_t grid[3], block[3], dyn_shared;
    bool empty;              /* a grid dimension is 0: nothing to launch */
    uint64_t gen;            /* bumped by every re-target: graphs update their node for it */
    uint64_t ro_gen;         /* the device's ro_gen when its &mut bindings were last seen writable */
    void *extra;             /* backend launch data (ops->plan_extra bytes) */
};

/* One collective as one rank sees it (runtime/comm.c). */
typedef enum { KF_COLL_ALL_REDUCE, KF_COLL_ALL_GATHER } kf_coll_kind;
typedef struct {
    kf_comm *comm;
    kf_coll_kind kind;
    uint32_t rank;
    kf_buffer *send, *recv;  /* the same buffer for an all-reduce */
    size_t count;            /* elements per rank */
} kf_coll;

/* One recorded launch of a graph: the plan, and its gen when the graph
 * last gave the device its arguments; or (plan NULL) a collective. grid
 * and dyn_shared are the plan's when it was recorded (what the capture
 * holds: a re-target during the recording changes the plan's, and the
 * first replay carries it in). */
typedef struct {
    kf_plan *plan;
    uint64_t gen;
    kf_coll coll;
    uint32_t grid[3];
    uint32_t dyn_shared;
} kf_graph_node;

struct kf_graph {
    kf_device *dev;
    kf_graph_node *nodes;    /* in launch order */
    uint32_t n, cap;
    void *impl;              /* backend state (CUDA: the captured graph, its exec and nodes) */
};

/* The runtime's one allocation function: zeroed, 64-byte aligned, counted. */
void *kf_rt_alloc(size_t size);
void kf_rt_free(void *p);
char *kf_rt_strdup(const char *s);

/* dlopen of a CUDA library (runtime/dl.c). With $env_var set only that
 * path is tried (tests point it at a missing file). Otherwise, for NVRTC
 * (toolkit = true) $CUDA_HOME/lib64, /usr/local/cuda/lib64 and the build's
 * CUDA home are searched for stem and stem.<N>, then the loader path; the
 * driver (toolkit = false) comes from the loader path. On failure returns
 * NULL and `why` lists what was tried and dlerror(). */
void *kf_rt_dlopen(const char *env_var, const char *stem, bool toolkit, char *why, size_t whylen);

/* dlsym(lib, sym) into *slot; false, with `why` naming sym and the
 * library (`what`), when it is missing. */
bool kf_rt_dlsym(void *lib, const char *sym, void **slot, const char *what, char *why, size_t whylen);

kf_status kf_cpu_open(kf_device *dev, kf_error *err);
kf_status kf_cuda_open(kf_device *dev, int ordinal, kf_error *err);

/* Validation and launch-shape resolution (runtime/device.c), shared by
 * dispatch and plans: fills plan (which must have room for nargs args). */
kf_status kf_rt_bind(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                     kf_plan *plan, kf_error *err);

/* Graph recording (runtime/graph.c). While dev records, a call a graph
 * cannot hold (`what`, e.g. "kf_device_sync") is refused: the recording is
 * abandoned (the device works as before) and the error names the call and
 * the last launch recorded. KF_OK when dev is not recording. */
kf_status kf_rt_rec_refuse(kf_device *dev, const char *what, kf_error *err);
/* Abandons dev's recording, if any, for `why` (kf_graph_end reports it). */
void kf_rt_rec_abandon(kf_device *dev, const char *why);
/* Records a launch of plan on its recording device (kf_plan_launch). */
/* KF_ERR_USAGE when a buffer bound to one of plan's `&mut` parameters has
 * been marked read-only since (kf_buffer_set_readonly applies at any time):
 * called at every plan launch and graph replay, it looks at the bindings
 * only when some buffer of the device was marked read-only since it last
 * did (the device's ro_gen). */
kf_status kf_rt_plan_writable(kf_plan *plan, kf_error *err);
kf_status kf_rt_rec_launch(kf_plan *plan, kf_dispatch_mode mode, kf_status refused, kf_error *err);
/* Records collective c as the next node of its rank's recording device
 * (the backend's work, if any, already queued on the capturing stream). */
kf_status kf_rt_rec_coll(kf_device *dev, const kf_coll *c, kf_error *err);
/* A collective node replayed by a graph launched alone: KF_OK after an
 * all-gather's copy when its communicator has one rank, else KF_ERR_USAGE
 * naming kf_comm_graph_launch. */
kf_status kf_rt_coll_solo(const kf_coll *c, kf_error *err);
/* "launch N (kernel 'K')" or "collective N (all_reduce)": node i of g. */
void kf_rt_node_name(const kf_graph *g, uint32_t i, char *out, size_t n);

/* The CUDA device's stream (a CUstream) and its context made current on
 * this thread (runtime/cuda_device.c); kf_cuda_forget_current after a
 * library (NCCL) may have changed the thread's current context. */
void *kf_cuda_stream(kf_device *dev);
kf_status kf_cuda_use(kf_device *dev, kf_error *err);
void kf_cuda_forget_current(void);

#endif
