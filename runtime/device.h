/* The device interface (DESIGN.md section 2): one vtable that the CPU
 * interpreter (runtime/cpu_device.c) and the CUDA runtime
 * (runtime/cuda_device.c) both implement, so `kforge run --backend
 * cpu|cuda|ptx`, the golden tests and the benchmarks share one path.
 *
 * Lifecycle: kf_device_open -> buffers and pipelines -> dispatch -> destroy
 * everything -> kf_device_close. Nothing here prints, exits or aborts. */
#ifndef KF_DEVICE_H
#define KF_DEVICE_H

#include "../ir/kforge.h"

typedef enum { KF_BACKEND_CPU, KF_BACKEND_CUDA, KF_BACKEND_PTX } kf_backend;

typedef struct kf_device kf_device;
typedef struct kf_buffer kf_buffer;
typedef struct kf_pipeline kf_pipeline;

/* One argument in binding order: a buffer (a view of one) or a value. */
typedef struct {
    kf_buffer *buf;       /* NULL for scalars/vectors */
    kf_value value;
} kf_arg;

/* An explicit launch shape; zeros mean "from the schedule". */
typedef struct {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dyn_shared;  /* dynamic shared-memory bytes; 0: the schedule's `shared = EXPR`
                             (LANGUAGE.md section 8), or none */
    uint64_t count;       /* element count for schedules without a grid */
} kf_launch;

typedef enum {
    KF_DISPATCH_SYNC = 0,  /* launch, wait, report faults */
    KF_DISPATCH_ASYNC,     /* no host fence; the next read or sync is the barrier */
    KF_DISPATCH_TIMED,     /* sync, and *ms receives the device time */
} kf_dispatch_mode;

/* Opens a device of the backend (ordinal: GPU index; ignored for CPU).
 * A missing driver or GPU is KF_ERR_DEVICE with a clear message. NVRTC is
 * needed only to build CUDA-C (KF_BACKEND_CUDA pipelines, raw CUDA-C): its
 * absence is KF_ERR_DEVICE from that build; KF_BACKEND_PTX never needs it.
 * The CPU device runs every launch to completion (ASYNC included). */
kf_status kf_device_open(kf_backend backend, int ordinal, kf_device **out, kf_error *err);
void kf_device_close(kf_device *dev);
const char *kf_device_name(const kf_device *dev);

/* Buffers: `count` elements of type elem (scalar or vector), zero-filled. */
kf_status kf_buffer_create(kf_device *dev, kf_type elem, size_t count, kf_buffer **out, kf_error *err);
/* A view of `count` elements starting at element `offset` (same element
 * type), sharing storage; destroy views before their parent. */
kf_status kf_buffer_view(kf_buffer *parent, size_t offset, size_t count, kf_buffer **out, kf_error *err);
kf_status kf_buffer_upload(kf_buffer *b, const void *src, size_t bytes, kf_error *err);
kf_status kf_buffer_download(kf_buffer *b, void *dst, size_t bytes, kf_error *err);
size_t kf_buffer_bytes(const kf_buffer *b);
kf_type kf_buffer_elem(const kf_buffer *b);
void kf_buffer_destroy(kf_buffer *b);

/* A compiled, loaded kernel of a module (the module must outlive it).
 * CUDA devices build through the cache (runtime/cache.h); with
 * KFORGE_LINEINFO=1 the code carries .kf line info for profilers. A kernel
 * of a module from kf_compile is keyed on the module's file, source and
 * options (plus the kernel, arch, emit options, the compiler's build ID and
 * the NVRTC/driver versions), so a warm start loads the cached cubin with no
 * emit, NVRTC or JIT; such a kernel's IR must not be changed after
 * kf_compile. Pass m = NULL for hand-built or changed IR: it is then keyed on
 * its emitted text. A JIT or NVRTC error on emitted code names the .kf
 * line (err->loc). */
kf_status kf_pipeline_create(kf_device *dev, const kf_module *m, const kf_ir_kernel *k,
                             kf_pipeline **out, kf_error *err);
void kf_pipeline_destroy(kf_pipeline *p);
/* Pipelines of every kernel of m at once: out[i] (m->nkernels entries) is
 * the pipeline of m->kernels[i]. A CUDA device emits the whole module
 * once and builds it with one NVRTC compile (KF_BACKEND_CUDA) and one PTX
 * JIT, through the same cache as kf_pipeline_create (keyed on the module's
 * source when known, else on the emitted text), and loads one CUmodule
 * that the pipelines share: it is unloaded with the last of them
 * (kf_pipeline_destroy each, in any order). Worth it whenever a program
 * uses several kernels of one module (a decode step, a test batch): N
 * kernels cost one compile instead of N. The CPU device builds each
 * kernel as kf_pipeline_create does. On failure every out[i] is NULL and
 * the error is the one build's (a JIT or NVRTC error names the .kf line). */
kf_status kf_pipeline_create_module(kf_device *dev, const kf_module *m, kf_pipeline **out, kf_error *err);

/* Validates the arguments against the kernel's parameters and the launch
 * against device limits, then runs it. launch may be NULL (schedule +
 * count 0). ms may be NULL unless mode is TIMED. Every error names the
 * parameter or the limit, and nothing is launched. A device is driven from
 * one thread at a time (TIMED uses the device's one pair of events). */
kf_status kf_dispatch(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                      kf_dispatch_mode mode, float *ms, kf_error *err);
/* Waits for all queued work; reports asynchronous faults. */
kf_status kf_device_sync(kf_device *dev, kf_error *err);

/* ---- additions (runtime engineer): read-only buffers, properties,
 * raw CUDA-C / PTX pipelines, pre-sorted plans, allocation counter ------ */

/* Marks a buffer read-only (or writable again). A read-only buffer, or a
 * view of one, bound to a `&mut` parameter is a validation error. Views
 * created later inherit the flag. */
void kf_buffer_set_readonly(kf_buffer *b, bool readonly);
bool kf_buffer_readonly(const kf_buffer *b);

/* What a device is and what it allows (read once at open). */
typedef struct {
    char name[256];
    kf_backend backend;
    int ordinal;
    int cc_major, cc_minor;         /* compute capability (0 for CPU) */
    uint32_t sm_count;
    uint64_t total_mem;             /* bytes */
    uint32_t max_threads_per_block;
    uint32_t max_block[3], max_grid[3];
    uint32_t shared_per_block;      /* static + dynamic without opt-in */
    uint32_t shared_per_block_optin;/* dynamic limit after opt-in (>48 KiB) */
    uint32_t l2_bytes;
    int driver_version;             /* CUDA driver, major*1000+minor*10; 0 for CPU */
    int nvrtc_version;              /* 0 when NVRTC is unavailable */
    uint32_t arch;                  /* SM arch kforge compiles for (80..90); 0 for CPU */
} kf_device_props;
void kf_device_props_get(const kf_device *dev, kf_device_props *out);

/* Number of CUDA GPUs and the driver version, without opening one. A
 * missing driver is KF_ERR_DEVICE; no GPU is KF_OK with *count == 0. */
kf_status kf_cuda_device_count(int *count, int *driver_version, kf_error *err);

/* A kernel not written in .kf: CUDA-C source for NVRTC (e.g. a WMMA GEMM
 * .cu file) or already-compiled PTX text. `params` is the binding list,
 * one entry per kernel parameter in order (buffers: all pointer params,
 * with KF_TF_MUT on the ones written; align 0 means the element size). */
typedef enum { KF_SRC_CUDA, KF_SRC_PTX } kf_src_kind;
typedef struct {
    kf_src_kind kind;
    const char *source;             /* NUL-terminated text */
    const char *entry;              /* extern "C" __global__ entry point */
    const kf_ir_param *params;
    uint32_t nparams;
    uint32_t block[3];              /* default block; zeros: give one at dispatch */
    uint32_t arch;                  /* 0: the device's (kf_device_props.arch) */
    bool uncached;                  /* skip the process and disk caches */
} kf_raw_kernel;
/* CUDA devices only (the CPU device has no CUDA-C). NVRTC and driver JIT
 * logs are attached to err->log on failure. The raw kernel's strings and
 * params are copied. */
kf_status kf_pipeline_create_raw(kf_device *dev, const kf_raw_kernel *rk, kf_pipeline **out,
                                 kf_error *err);

/* Where a pipeline's code came from, and any cache warning (a corrupt or
 * truncated disk entry that was rebuilt). The library never prints it. */
typedef enum { KF_FROM_BUILD, KF_FROM_MEMORY, KF_FROM_DISK } kf_code_origin;
kf_code_origin kf_pipeline_origin(const kf_pipeline *p);
const char *kf_pipeline_warning(const kf_pipeline *p);   /* NULL if none */

/* The pre-sorted fast path: arguments already in binding order are
 * validated and packed once (launch parameters built, grid evaluated);
 * kf_plan_launch then does no allocation, sorting or search. The
 * buffers bound must outlive the plan. */
typedef struct kf_plan kf_plan;
kf_status kf_plan_create(kf_pipeline *p, const kf_arg *args, uint32_t nargs, const kf_launch *launch,
                         kf_plan **out, kf_error *err);
kf_status kf_plan_launch(kf_plan *plan, kf_dispatch_mode mode, float *ms, kf_error *err);
void kf_plan_destroy(kf_plan *plan);

/* A device-to-device copy of `bytes` (a prefix of both buffers), in stream
 * order; TIMED gives its device time in *ms (the copy-bandwidth reference of
 * `kforge bench`). The CPU device copies with memcpy. */
kf_status kf_buffer_copy(kf_buffer *dst, const kf_buffer *src, size_t bytes, kf_dispatch_mode mode, float *ms,
                         kf_error *err);
/* Benchmark reference: launches the plan n times straight through
 * cuLaunchKernel (nothing of kforge in between), waits, and gives host
 * microseconds per launch. CUDA devices only. */
kf_status kf_plan_bench_bare(kf_plan *plan, uint32_t n, double *us_per_launch, kf_error *err);

/* Calls made so far to the runtime's one allocation function (every
 * device, buffer, pipeline, plan and launch-data block goes through it;
 * only texts handed to the caller to free() are malloc'd); lets tests
 * prove a path allocates nothing. */
uint64_t kf_rt_alloc_count(void);

/* ---- additions (bench): timing a region of work, a kernel's resources ---- */

/* Times a region of queued work with the device's pair of events (kforge
 * bench times a launch, or a sequence of launches, this way):
 * kf_device_timer_start records the start in stream order;
 * kf_device_timer_stop records the end, waits for it, and gives the device
 * milliseconds between the two in *ms. Queue the region's work with
 * KF_DISPATCH_ASYNC: a TIMED dispatch or copy inside it takes the same
 * events, so the region's start is lost. CUDA devices only (KF_ERR_USAGE on
 * the CPU device, whose launches finish before they return). */
kf_status kf_device_timer_start(kf_device *dev, kf_error *err);
kf_status kf_device_timer_stop(kf_device *dev, float *ms, kf_error *err);

/* What a pipeline's loaded code uses, as the driver reports it. */
typedef struct {
    int regs;                /* registers per thread */
    int local_bytes;         /* local memory per thread: spills and local arrays (0: none) */
    uint32_t static_shared;  /* bytes of static shared memory */
    uint32_t max_threads;    /* the most threads per block the code allows */
} kf_resources;
/* CUDA devices only (KF_ERR_USAGE on the CPU device, which has no
 * registers); a failed driver query is KF_ERR_DEVICE naming the call. */
kf_status kf_pipeline_resources(const kf_pipeline *p, kf_resources *out, kf_error *err);

/* ---- additions (decode, issue 10): re-targeting plans, graphs ------------ */

/* Index of the parameter called `name` in p's binding list, or -1. */
int kf_pipeline_param_index(const kf_pipeline *p, const char *name);

/* Re-targeting a plan: one argument changed in place, so that a loop keeps
 * one plan per kernel for its whole life (a decode step's position, a
 * layer's cache). Neither call allocates (kf_rt_alloc_count is unchanged)
 * nor looks at the other arguments beyond what the change touches. On any
 * error the plan is left exactly as it was.
 *
 * kf_plan_set_value gives scalar/vector argument `index` a new value of the
 * parameter's exact type. When the plan's grid or dynamic shared bytes come
 * from the schedule (not from its kf_launch) and the schedule reads that
 * parameter, they are evaluated again for the new value and checked
 * against the device's limits, as at creation: a value whose grid is
 * empty, overflows or is over a limit is refused with the words creation
 * uses. */
kf_status kf_plan_set_value(kf_plan *plan, uint32_t index, const kf_value *value, kf_error *err);
/* kf_plan_set_buffer binds buffer argument `index` to buf, another buffer
 * or view: checked as creation checks it (same device, the parameter's
 * exact element type, not read-only for a `&mut` parameter, aligned to the
 * kernel's widest access, no overlap between it and a writable argument
 * when one of the two is read-only) and against the kernel's needs: it must
 * hold at least the bytes of the buffer the plan was created with (what
 * the plan was validated with). The buffer must outlive the plan. */
kf_status kf_plan_set_buffer(kf_plan *plan, uint32_t index, kf_buffer *buf, kf_error *err);
/* The launch shape the plan launches with now (after any re-target). */
void kf_plan_shape(const kf_plan *plan, uint32_t grid[3], uint32_t block[3], uint32_t *dyn_shared);

/* Graphs: a sequence of plan launches recorded once and replayed with one
 * call. On a CUDA device a graph is a CUDA graph (stream capture,
 * instantiated once); on the CPU device, a replay of the recorded launches.
 *
 * kf_graph_begin starts recording on dev. Until kf_graph_end, each
 * kf_plan_launch(plan, KF_DISPATCH_ASYNC, ...) on dev is recorded, not run.
 * Anything a graph cannot hold is refused with an error that names the
 * call and the last launch recorded, and abandons the recording (the CUDA
 * capture is ended and dropped, so the device works as before, eagerly):
 * a SYNC or TIMED launch, an invalid launch (its error names the launch's
 * number and kernel), kf_dispatch (it destroys its plan), kf_device_sync,
 * upload, download, copy, timers, kf_plan_bench_bare, creating a buffer or
 * a pipeline, a nested kf_graph_begin or a kf_graph_launch. Destroying a
 * buffer abandons it too (kf_graph_end then says so). Re-targeting plans
 * is allowed at any time. */
typedef struct kf_graph kf_graph;
kf_status kf_graph_begin(kf_device *dev, kf_error *err);
/* Ends dev's recording and makes it launchable (CUDA: cuStreamEndCapture,
 * cuGraphInstantiate; each launch's kernel node is the one the capture
 * made for it, read with cuStreamGetCaptureInfo as it was recorded, and
 * checked against the launch with cuGraphGetNodes /
 * cuGraphKernelNodeGetParams). An empty recording is refused. After an
 * abandoned recording it returns the reason the recording was abandoned
 * (once). */
kf_status kf_graph_end(kf_device *dev, kf_graph **out, kf_error *err);
/* Replays g in stream order (mode as for kf_plan_launch: ASYNC queues it,
 * SYNC waits, TIMED waits and gives the device time). Each launch uses its
 * plan's arguments as they are now: a plan re-targeted since the last replay
 * is carried into the instantiated graph first (CUDA:
 * cuGraphExecKernelNodeSetParams on its node; no re-capture), so the
 * host's cost is one graph launch plus one update per changed plan, and
 * nothing is allocated. The plans must outlive the graph. */
kf_status kf_graph_launch(kf_graph *g, kf_dispatch_mode mode, float *ms, kf_error *err);
/* Number of launches recorded in g. */
uint32_t kf_graph_size(const kf_graph *g);
void kf_graph_destroy(kf_graph *g);

/* ---- additions (tensor parallelism, issue 12): communicators, collectives -- */

/* A communicator over n devices of this process, all of one backend, rank i
 * being devs[i] (the devices must outlive it). Over several CUDA devices
 * it is one NCCL communicator per device made with ncclCommInitAll (NCCL is
 * loaded then, with dlopen: its absence is KF_ERR_DEVICE saying so); one
 * CUDA device needs no NCCL. Over CPU devices the collectives are host
 * loops. A device listed twice is a usage error. */
typedef struct kf_comm kf_comm;
kf_status kf_comm_create(kf_device *const *devs, uint32_t n, kf_comm **out, kf_error *err);
void kf_comm_destroy(kf_comm *c);
uint32_t kf_comm_size(const kf_comm *c);
/* NCCL's version (as ncclGetVersion: 22803 is 2.28.3) when the communicator
 * uses it, else 0. */
int kf_comm_nccl_version(const kf_comm *c);

/* Collectives, in stream order on every rank's device (the work queued on
 * each device before the call is complete before it reads, and work queued
 * after it sees its result). bufs[i] (send[i], recv[i]) is on rank i's
 * device; all have one element type. mode: ASYNC queues it, SYNC waits for
 * every device (TIMED is refused: time a region with the device timers).
 *
 * kf_comm_all_reduce: bufs[i][0..count) = the sum over the ranks, in place;
 * f32 or f16 elements. The CPU device adds in f32 in rank order, then
 * rounds once (every rank gets the same bits); NCCL's order is its own.
 *
 * kf_comm_all_gather: recv[i][r·count .. (r+1)·count) = send[r][0..count) for
 * every rank r and i; any element type; send[i] may be the view of recv[i]
 * at rank i's slot (in place).
 *
 * While the devices record graphs (kf_graph_begin on every rank's device)
 * a collective is recorded, as a launch is, into each device's graph (CUDA:
 * NCCL's work is captured on each stream); a graph holding one is replayed
 * with kf_comm_graph_launch. If only some of the devices record, the call
 * is refused and their recordings abandoned. Errors name the rank and the
 * argument; nothing is queued then. */
kf_status kf_comm_all_reduce(kf_comm *c, kf_buffer *const *bufs, size_t count, kf_dispatch_mode mode,
                             kf_error *err);
kf_status kf_comm_all_gather(kf_comm *c, kf_buffer *const *send, kf_buffer *const *recv, size_t count,
                             kf_dispatch_mode mode, kf_error *err);
/* Replays graphs[i] (recorded on rank i's device) on every rank: CUDA
 * launches each graph on its device's stream (NCCL joins them on the
 * devices); the CPU devices replay theirs in lockstep, each up to its next
 * collective, which then runs over all ranks (the graphs must hold the
 * same collectives in the same order, else KF_ERR_USAGE naming the node).
 * mode: ASYNC or SYNC. kf_graph_launch refuses a CPU graph that holds a
 * collective over several devices. */
kf_status kf_comm_graph_launch(kf_comm *c, kf_graph *const *graphs, kf_dispatch_mode mode, kf_error *err);
/* Benchmark reference, as nccl-tests measures NCCL: n in-place sum
 * all-reduces of bufs[i][0..count) straight through ncclAllReduce (one
 * ncclGroupStart/End per all-reduce, nothing of kforge in between), timed
 * with each rank's device events from before the first to after the last;
 * *us: the slowest rank's microseconds per all-reduce. A communicator over
 * several GPUs only (KF_ERR_USAGE otherwise: there is no NCCL to compare). */
kf_status kf_comm_bench_bare(kf_comm *c, kf_buffer *const *bufs, size_t count, uint32_t n, double *us,
                             kf_error *err);

#endif
