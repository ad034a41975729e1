/* A stand-in libcuda for tests on machines without a GPU: the driver entry
 * points kforge's runtime resolves (runtime/cuda_drv.h), over host memory.
 * "Device" pointers are host pointers; the "linker" turns PTX into a fake
 * cubin ("MOCKCUBIN\n" + the PTX) that only this module loads; an entry is
 * found if the PTX declares `.entry NAME(`; PTX holding "MOCKJITFAIL" fails
 * to link with a JIT log naming that PTX line. A launch of an entry named
 * `saxpy` with the (f32 a, f32 *x, f32 *y, u32 n) layout really computes
 * saxpy on the host, so argument packing, grids and stream order are
 * checked end to end; every launch is recorded for mock_last_launch(),
 * and mock_live_modules() counts modules loaded and not unloaded. Stream
 * capture and graphs (cuStreamBeginCapture .. cuGraphLaunch, below) record
 * and replay launches, so a graph of saxpy launches computes too; several
 * streams may capture at once, and mock_capture_other adds the mock NCCL's
 * nodes. Every
 * function reports 40 registers and no local memory, except an entry whose
 * name holds "spill": 48 local bytes, as a kernel that spills.
 * cuLaunchKernelEx takes the launch attributes' PROGRAMMATIC_STREAM_SERIALIZATION
 * (any other attribute is CUDA_ERROR_INVALID_VALUE) and records it on the
 * launch (mock_last_launch's pdl, a captured node's too); below sm_90 it
 * is CUDA_ERROR_INVALID_VALUE (the runtime must not ask for it there). $MOCKCUDA_CC=80 (major and minor digits) makes
 * devices report that compute capability from then on (9.0 otherwise).
 * This exercises the CUDA backend's host side in CI; the GPU tests
 * (tests/test_gpu_*.c) cover the real driver.
 *
 * $MOCKCUDA_DEVICES=N shows N GPUs (all one host memory).
 * Fault injection: every entry point below (driver and NVRTC) counts its
 * calls (mock_calls) and fails when told to: mock_fail(API, N) makes the
 * Nth call of API from now on return an injected error, once, or every
 * call with N < 0 (CUDA_ERROR_UNKNOWN "mock: injected fault", or
 * NVRTC_ERROR_INTERNAL_ERROR),
 * without touching its outputs, as a failing driver does; $MOCKCUDA_FAIL
 * set to API or API:N does the same for a whole process (CLI tests). A
 * failing destroy or free still releases what it was given, as the driver
 * does when the context goes, so a leak seen by mock_live_handles() is the
 * runtime's own. */
#include <stdbool.h>
#include <stdint.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { OK = 0, INVALID_VALUE = 1, NO_DEVICE = 100, INVALID_DEVICE = 101, INVALID_IMAGE = 200, INVALID_PTX = 218,
       ILLEGAL_STATE = 401, NOT_FOUND = 500, ILLEGAL_ADDRESS = 700, CAPTURE_UNSUPPORTED = 900,
       CAPTURE_INVALIDATED = 901 };

typedef struct {
    char name[128];
    int dyn_limit;
} mock_func;

#define MOCK_FUNCS 512   /* entry points per module (a test batch holds hundreds) */

typedef struct {
    char *text;
    mock_func funcs[MOCK_FUNCS];
    int nfuncs;
} mock_module;

typedef struct {
    unsigned grid[3], block[3], shared;
    char name[128];
    int nlaunches;
    int pdl;          /* launched with PROGRAMMATIC_STREAM_SERIALIZATION */
} mock_launch;

static mock_launch last;
static int live_allocs;
static int links;    /* PTX handed to the "JIT" */
static int live_modules;
static int live_other;   /* streams, events, link states, NVRTC programs, context retains */
static int sticky;   /* a "fault" poisons later calls, like the real driver */

/* For tests: the last launch, the launch count, live allocations. */
const mock_launch *mock_last_launch(void) { return &last; }
int mock_live_allocs(void) { return live_allocs; }
int mock_link_count(void) { return links; }
int mock_live_modules(void) { return live_modules; }
/* Everything the runtime holds: allocations, modules, streams, events,
 * link states, NVRTC programs and primary-context retains. */
int mock_live_handles(void) { return live_allocs + live_modules + live_other; }

/* ---- fault injection --------------------------------------------------------- */
/* X(name): every entry point of this file that can fail. */
#define MOCK_APIS(X)                                                                                      \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet) \
    X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem_v2) X(cuDevicePrimaryCtxRetain)         \
    X(cuDevicePrimaryCtxRelease_v2) X(cuCtxSetCurrent) X(cuStreamCreate) X(cuStreamDestroy_v2)           \
    X(cuStreamSynchronize) X(cuMemAlloc_v2) X(cuMemFree_v2) X(cuMemsetD8Async) X(cuMemcpyHtoDAsync_v2)     \
    X(cuMemcpyDtoHAsync_v2) X(cuMemcpyDtoDAsync_v2) X(cuLinkCreate_v2) X(cuLinkAddData_v2) X(cuLinkComplete) \
    X(cuLinkDestroy) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute)  \
    X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuEventCreate) X(cuEventDestroy_v2) X(cuEventRecord)         \
    X(cuEventSynchronize) X(cuEventElapsedTime_v2) X(cuStreamBeginCapture_v2) X(cuStreamEndCapture)        \
    X(cuStreamGetCaptureInfo_v3)                                                                           \
    X(cuGraphGetNodes) X(cuGraphKernelNodeGetParams_v2) X(cuGraphInstantiateWithFlags)                     \
    X(cuGraphExecKernelNodeSetParams_v2) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)          \
    X(nvrtcVersion) X(nvrtcCreateProgram)                                                                  \
    X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetPTXSize) X(nvrtcGetPTX)                        \
    X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)

enum {
#define X(n) API_##n,
    MOCK_APIS(X)
#undef X
    API_COUNT
};
static const char *const api_names[] = {
#define X(n) #n,
    MOCK_APIS(X)
#undef X
};

enum { INJECTED = 999, NVRTC_INJECTED = 11 };
static int calls[API_COUNT];
static int fail_at[API_COUNT];   /* fail when calls reaches this (0: never, -1: every call) */
static int fired;

static int api_index(const char *name)
{
    for (int i = 0; i < API_COUNT; i++)
        if (!strcmp(api_names[i], name)) return i;
    return -1;
}

/* Arms the Nth call of api from now (n >= 1) to fail, or every call from
 * now (n < 0), or none (n == 0); false for an unknown api. */
int mock_fail(const char *api, int n)
{
    int i = api_index(api);
    if (i < 0) return 0;
    fail_at[i] = n > 0 ? calls[i] + n : n < 0 ? -1 : 0;
    return 1;
}

/* Calls of api so far (-1: not an entry point of the mock), and the names. */
int mock_calls(const char *api)
{
    int i = api_index(api);
    return i < 0 ? -1 : calls[i];
}
int mock_api_count(void) { return API_COUNT; }
const char *mock_api_name(int i) { return i >= 0 && i < API_COUNT ? api_names[i] : NULL; }
/* Injected failures so far. */
int mock_faults_fired(void) { return fired; }

/* $MOCKCUDA_FAIL=API[:N], read at the first call. */
static void env_faults(void)
{
    static int done;
    const char *e = getenv("MOCKCUDA_FAIL");
    if (done++ || !e) return;
    char api[64];
    int n = 1;
    if (sscanf(e, "%63[^:]:%d", api, &n) >= 1) mock_fail(api, n);
}

/* Counts a call; true when it is to fail. */
static int fault(int api)
{
    env_faults();
    if (++calls[api] != fail_at[api] && fail_at[api] != -1) return 0;
    if (fail_at[api] != -1) fail_at[api] = 0;
    fired++;
    return 1;
}

#define FAULT(api)                                         \
    do {                                                   \
        if (fault(API_##api)) return INJECTED;             \
    } while (0)
#define NVFAULT(api)                                       \
    do {                                                   \
        if (fault(API_##api)) return NVRTC_INJECTED;       \
    } while (0)

CUresult cuInit(unsigned flags)
{
    FAULT(cuInit);
    return getenv("MOCKCUDA_NODEVICE") ? NO_DEVICE : OK;
}

/* 99.0 unless $MOCKCUDA_DRIVER says otherwise: newer than any toolkit, so
 * the runtime links PTX through this mock's linker, not nvJitLink
 * (cuda_device.c ptx_compiler; KFORGE_JIT=nvjitlink asks for it anyway). */
CUresult cuDriverGetVersion(int *v)
{
    FAULT(cuDriverGetVersion);
    const char *e = getenv("MOCKCUDA_DRIVER");
    *v = e ? atoi(e) : 99000;
    return OK;
}

CUresult cuGetErrorName(CUresult r, const char **s)
{
    FAULT(cuGetErrorName);
    switch (r) {
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; break;
    case INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; break;
    case INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; break;
    case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case INJECTED: *s = "CUDA_ERROR_UNKNOWN"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; return INVALID_VALUE;
    }
    return OK;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
    FAULT(cuGetErrorString);
    *s = r == INJECTED ? "mock: injected fault" : "mock driver error";
    return OK;
}

/* One GPU, or $MOCKCUDA_DEVICES of them (1..8: the communicator tests). */
static int device_count(void)
{
    const char *e = getenv("MOCKCUDA_DEVICES");
    int n = e ? atoi(e) : 1;
    return n >= 1 && n <= 8 ? n : 1;
}

CUresult cuDeviceGetCount(int *n)
{
    FAULT(cuDeviceGetCount);
    *n = device_count();
    return OK;
}

CUresult cuDeviceGet(int *d, int ordinal)
{
    FAULT(cuDeviceGet);
    *d = ordinal;
    return ordinal >= 0 && ordinal < device_count() ? OK : INVALID_DEVICE;
}

CUresult cuDeviceGetName(char *name, int len, int dev)
{
    FAULT(cuDeviceGetName);
    snprintf(name, (size_t)len, "Mock GPU");
    return OK;
}

/* The compute capability as major * 10 + minor: $MOCKCUDA_CC, or 90. */
static int cc(void)
{
    const char *e = getenv("MOCKCUDA_CC");
    int v = e ? atoi(e) : 90;
    return v >= 50 && v <= 129 ? v : 90;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
    FAULT(cuDeviceGetAttribute);
    switch (attr) {
    case 1: *v = 1024; break;                              /* max threads per block */
    case 2: case 3: *v = 1024; break;                      /* max block x, y */
    case 4: *v = 64; break;
    case 5: *v = 2147483647; break;
    case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break;                             /* shared per block */
    case 16: *v = 4; break;                                /* SMs */
    case 38: *v = 1 << 20; break;                          /* L2 (small: kforge bench's scratch) */
    case 75: *v = cc() / 10; break;
    case 76: *v = cc() % 10; break;
    case 97: *v = 232448; break;                           /* opt-in shared */
    default: *v = 0;
    }
    return OK;
}

CUresult cuDeviceTotalMem_v2(size_t *b, int dev)
{
    FAULT(cuDeviceTotalMem_v2);
    *b = (size_t)80 << 30;
    return OK;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    FAULT(cuDevicePrimaryCtxRetain);
    *ctx = (void *)&last;
    live_other++;
    return OK;
}

CUresult cuDevicePrimaryCtxRelease_v2(int dev)
{
    live_other--;
    FAULT(cuDevicePrimaryCtxRelease_v2);
    return OK;
}

CUresult cuCtxSetCurrent(void *ctx)
{
    FAULT(cuCtxSetCurrent);
    return OK;
}

CUresult cuStreamCreate(void **s, unsigned flags)
{
    FAULT(cuStreamCreate);
    *s = malloc(8);
    live_other++;
    return OK;
}

CUresult cuStreamDestroy_v2(void *s)
{
    free(s);
    live_other--;
    FAULT(cuStreamDestroy_v2);
    return OK;
}

/* ---- stream capture: the state (the calls are below) ---------------------------- */
typedef struct {
    void *func;
    unsigned grid[3], block[3], shared;
    unsigned char args[24];   /* saxpy's (a, x, y, n), copied at capture as the driver copies them */
    int pdl;                  /* a programmatic dependent launch (a programmatic edge in a graph) */
} mock_node;

typedef struct {
    mock_node **nodes;        /* the node handles */
    int n, cap;
} mock_graph;

/* One capture per stream (several GPUs record at once for a communicator). */
typedef struct {
    void *stream;             /* the stream being captured, or NULL: a free slot */
    mock_graph *g;            /* what it has captured so far */
    int broken;               /* an unsupported call invalidated the capture */
} mock_capture;

static mock_capture captures[8];
static int graph_launches;

static mock_capture *capture_of(void *stream)
{
    for (int i = 0; stream && i < 8; i++)
        if (captures[i].stream == stream) return &captures[i];
    return NULL;
}

/* For tests: whether a capture is going on, and graph launches so far. */
int mock_capturing(void)
{
    for (int i = 0; i < 8; i++)
        if (captures[i].stream) return 1;
    return 0;
}
int mock_graph_launches(void) { return graph_launches; }

/* A call on the capturing stream that a capture cannot hold (a wait, a
 * copy to or from the host): it invalidates the capture, as the driver does. */
static int unsupported_in_capture(void *stream)
{
    mock_capture *c = capture_of(stream);
    if (!c) return 0;
    c->broken = 1;
    return 1;
}

CUresult cuStreamSynchronize(void *s)
{
    FAULT(cuStreamSynchronize);
    if (unsupported_in_capture(s)) return CAPTURE_UNSUPPORTED;
    return sticky;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    FAULT(cuMemAlloc_v2);
    void *m = aligned_alloc(256, (n + 255) & ~(size_t)255);
    if (!m) return 2;
    live_allocs++;
    *p = (CUdeviceptr)(uintptr_t)m;
    return OK;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    live_allocs--;
    FAULT(cuMemFree_v2);
    return OK;
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, void *s)
{
    FAULT(cuMemsetD8Async);
    if (unsupported_in_capture(s)) return CAPTURE_UNSUPPORTED;
    memset((void *)(uintptr_t)p, v, n);
    return OK;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st)
{
    FAULT(cuMemcpyHtoDAsync_v2);
    if (unsupported_in_capture(st)) return CAPTURE_UNSUPPORTED;
    memcpy((void *)(uintptr_t)d, s, n);
    return sticky;
}

CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st)
{
    FAULT(cuMemcpyDtoHAsync_v2);
    if (unsupported_in_capture(st)) return CAPTURE_UNSUPPORTED;
    memcpy(d, (void *)(uintptr_t)s, n);
    return sticky;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st)
{
    FAULT(cuMemcpyDtoDAsync_v2);
    if (unsupported_in_capture(st)) return CAPTURE_UNSUPPORTED;
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return sticky;
}

/* ---- linking and modules ----------------------------------------------------- */
typedef struct {
    char *elog;
    size_t elog_len;
    char *cubin;
} mock_link;

CUresult cuLinkCreate_v2(unsigned n, int *opt, void **val, void **out)
{
    FAULT(cuLinkCreate_v2);
    mock_link *l = calloc(1, sizeof *l);
    live_other++;
    for (unsigned i = 0; i < n; i++) {
        if (opt[i] == 5) l->elog = val[i];
        if (opt[i] == 6) l->elog_len = (size_t)(uintptr_t)val[i];
    }
    *out = l;
    return OK;
}

CUresult cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name, unsigned n, int *o, void **v)
{
    FAULT(cuLinkAddData_v2);
    mock_link *l = state;
    const char *fail = strstr(data, "MOCKJITFAIL");
    links++;
    if (fail) {   /* a JIT error at the PTX line holding the marker */
        int line = 1;
        for (const char *p = data; p < fail; p++) line += *p == '\n';
        if (l->elog) snprintf(l->elog, l->elog_len, "ptxas application ptx input, line %d; error   : mock: requested", line);
        return INVALID_PTX;
    }
    if (type != 1 || !strstr(data, ".entry ")) {
        if (l->elog) snprintf(l->elog, l->elog_len, "ptxas application ptx input, line 1; error   : mock: no .entry");
        return INVALID_PTX;
    }
    l->cubin = malloc(size + 10);
    memcpy(l->cubin, "MOCKCUBIN\n", 10);
    memcpy(l->cubin + 10, data, size);
    return OK;
}

CUresult cuLinkComplete(void *state, void **cubin, size_t *size)
{
    FAULT(cuLinkComplete);
    mock_link *l = state;
    *cubin = l->cubin;
    *size = 10 + strlen(l->cubin + 10) + 1;
    return OK;
}

CUresult cuLinkDestroy(void *state)
{
    mock_link *l = state;
    free(l->cubin);
    free(l);
    live_other--;
    FAULT(cuLinkDestroy);
    return OK;
}

/* A real cubin (nvJitLink's, KFORGE_JIT=nvjitlink) as module text: each
 * NUL-terminated name in it (its string tables) becomes `.entry NAME(`. The
 * image ends with its section headers. */
static char *elf_entries(const unsigned char *image)
{
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, image + 0x28, 8);
    memcpy(&shentsize, image + 0x3A, 2);
    memcpy(&shnum, image + 0x3C, 2);
    size_t size = (size_t)(shoff + (uint64_t)shentsize * shnum), cap = 1, len = 0;
    char *text = calloc(1, 1);
    for (size_t i = 0; i < size; i++) {
        size_t j = i;
        while (j < size && (isalnum(image[j]) || image[j] == '_')) j++;
        if (j < size && !image[j] && j - i > 1 && (i == 0 || !image[i - 1])) {
            text = realloc(text, cap += j - i + 10);
            len += (size_t)sprintf(text + len, ".entry %.*s(\n", (int)(j - i), (const char *)image + i);
        }
        i = j;
    }
    return text;
}

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *o, void **v)
{
    FAULT(cuModuleLoadDataEx);
    bool elf = memcmp(image, "\177ELF", 4) == 0;
    if (!elf && strncmp(image, "MOCKCUBIN\n", 10) != 0) return INVALID_IMAGE;
    mock_module *m = calloc(1, sizeof *m);
    m->text = elf ? elf_entries(image) : strdup((const char *)image + 10);
    *mod = m;
    live_modules++;
    return OK;
}

CUresult cuModuleUnload(void *mod)
{
    mock_module *m = mod;
    free(m->text);
    free(m);
    live_modules--;
    FAULT(cuModuleUnload);
    return OK;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    FAULT(cuModuleGetFunction);
    mock_module *m = mod;
    char want[160];
    snprintf(want, sizeof want, ".entry %s(", name);
    if (!strstr(m->text, want) || m->nfuncs == MOCK_FUNCS) return NOT_FOUND;
    mock_func *f = &m->funcs[m->nfuncs++];
    snprintf(f->name, sizeof f->name, "%s", name);
    *fn = f;
    return OK;
}

/* Thread limit 1024, 40 registers, and local memory only for an entry
 * whose name holds "spill" (so a test sees a spilling kernel reported). */
CUresult cuFuncGetAttribute(int *v, int attr, void *fn)
{
    FAULT(cuFuncGetAttribute);
    const mock_func *f = fn;
    *v = attr == 0 ? 1024 : attr == 4 ? 40 : attr == 3 && strstr(f->name, "spill") ? 48 : 0;
    return OK;
}

static int last_dyn_limit;   /* the last MAX_DYNAMIC_SHARED_SIZE_BYTES opt-in */
int mock_last_dyn_limit(void) { return last_dyn_limit; }
CUresult cuFuncSetAttribute(void *fn, int attr, int v)
{
    FAULT(cuFuncSetAttribute);
    ((mock_func *)fn)->dyn_limit = v;
    if (attr == 8) last_dyn_limit = v;
    return OK;
}

/* ---- launches --------------------------------------------------------------------- */
/* saxpy's arguments (f32 a, f32 *x, f32 *y, u32 n) as 24 packed bytes. */
static void saxpy_pack(void **params, unsigned char out[24])
{
    memcpy(out, params[0], 4);
    memcpy(out + 4, params[1], 8);
    memcpy(out + 12, params[2], 8);
    memcpy(out + 20, params[3], 4);
}

static void run_saxpy(const unsigned char args[24], unsigned threads)
{
    float a;
    float *x, *y;
    unsigned n;
    memcpy(&a, args, 4);
    memcpy(&x, args + 4, 8);
    memcpy(&y, args + 12, 8);
    memcpy(&n, args + 20, 4);
    for (unsigned i = 0; i < threads && i < n; i++) y[i] = a * x[i] + y[i];
}

/* Runs a launch (recorded for mock_last_launch). */
static void run_node(const mock_node *nd)
{
    const mock_func *f = nd->func;
    if (!f) return;   /* mock_capture_other's */
    last = (mock_launch){{nd->grid[0], nd->grid[1], nd->grid[2]}, {nd->block[0], nd->block[1], nd->block[2]},
                         nd->shared, "", last.nlaunches + 1, nd->pdl};
    snprintf(last.name, sizeof last.name, "%s", f->name);
    if (!strcmp(f->name, "saxpy"))
        run_saxpy(nd->args, nd->grid[0] * nd->grid[1] * nd->grid[2] * nd->block[0] * nd->block[1] * nd->block[2]);
    if (!strcmp(f->name, "wild")) sticky = ILLEGAL_ADDRESS;   /* faults at the next sync */
}

static void node_set(mock_node *nd, void *fn, const unsigned g[3], const unsigned b[3], unsigned shared, void **params)
{
    nd->func = fn;
    memcpy(nd->grid, g, sizeof nd->grid);
    memcpy(nd->block, b, sizeof nd->block);
    nd->shared = shared;
    if (params && !strcmp(((mock_func *)fn)->name, "saxpy")) saxpy_pack(params, nd->args);
}

/* A launch on a capturing stream becomes a node of its capture. */
static CUresult capture_launch(mock_capture *c, mock_node *nd)
{
    if (c->broken) return CAPTURE_INVALIDATED;
    mock_graph *g = c->g;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 16;
        g->nodes = realloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
    }
    g->nodes[g->n] = malloc(sizeof *nd);
    *g->nodes[g->n++] = *nd;
    return OK;
}

/* For the mock NCCL: a node that is not a kernel (func NULL: a replay skips
 * it) on stream's capture, as NCCL's captured work adds nodes of its own;
 * 0 when the stream is not capturing. */
int mock_capture_other(void *stream)
{
    mock_capture *c = capture_of(stream);
    if (!c) return 0;
    mock_node nd = {0};
    capture_launch(c, &nd);
    return 1;
}

/* Both launch calls: a node run now, or captured. */
static CUresult launch(void *fn, const unsigned g[3], const unsigned b[3], unsigned shared, void *stream,
                       void **params, int pdl)
{
    mock_func *f = fn;
    if (sticky) return sticky;
    if ((int)shared > (f->dyn_limit > 49152 ? f->dyn_limit : 49152)) return INVALID_VALUE;
    mock_node nd = {0};
    node_set(&nd, fn, g, b, shared, params);
    nd.pdl = pdl;
    mock_capture *c = capture_of(stream);
    if (c) return capture_launch(c, &nd);
    run_node(&nd);
    return OK;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra)
{
    FAULT(cuLaunchKernel);
    return launch(fn, (unsigned[3]){gx, gy, gz}, (unsigned[3]){bx, by, bz}, shared, stream, params, 0);
}

typedef struct {       /* CUlaunchAttribute */
    int id;
    char pad[4];
    union {
        char bytes[64];
        int value;
    } v;
} mock_attr;

typedef struct {       /* CUlaunchConfig */
    unsigned gx, gy, gz, bx, by, bz, shared;
    void *stream;
    mock_attr *attrs;
    unsigned nattrs;
} mock_config;

enum { ATTR_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };

CUresult cuLaunchKernelEx(const mock_config *c, void *fn, void **params, void **extra)
{
    FAULT(cuLaunchKernelEx);
    int pdl = 0;
    for (unsigned i = 0; i < c->nattrs; i++) {
        if (c->attrs[i].id != ATTR_PROGRAMMATIC_STREAM_SERIALIZATION) return INVALID_VALUE;
        pdl = c->attrs[i].v.value != 0;
    }
    if (pdl && cc() < 90) return INVALID_VALUE;
    return launch(fn, (unsigned[3]){c->gx, c->gy, c->gz}, (unsigned[3]){c->bx, c->by, c->bz}, c->shared, c->stream,
                  params, pdl);
}

/* ---- graphs ----------------------------------------------------------------------------
 * A capture records each launch on the capturing stream as a node (the
 * arguments copied); a sync, host copy, memset or event record on that
 * stream invalidates it (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, later
 * launches CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) and cuStreamEndCapture then
 * gives no graph. The capture ends at cuStreamEndCapture even when that
 * call fails (injected too), as a driver ends an invalidated one. An
 * instantiated graph copies the nodes; cuGraphLaunch runs them in order.
 * $MOCKCUDA_NODES_REVERSED makes cuGraphGetNodes list them backwards (the
 * driver documents no order). */
typedef struct {       /* CUDA_KERNEL_NODE_PARAMS_v2 */
    void *func;
    unsigned gx, gy, gz, bx, by, bz, shared;
    void **params, **extra;
    void *kern, *ctx;
} mock_kparams;

typedef struct {
    mock_graph *g;     /* instantiated from (its node handles name the nodes) */
    mock_node *nodes;  /* its own copy, in order */
    int n;
} mock_exec;

static void graph_free(mock_graph *g)
{
    for (int i = 0; g && i < g->n; i++) free(g->nodes[i]);
    if (g) free(g->nodes);
    free(g);
}

CUresult cuStreamBeginCapture_v2(void *stream, int mode)
{
    FAULT(cuStreamBeginCapture_v2);
    mock_capture *c = capture_of(stream);
    if (c) return ILLEGAL_STATE;
    for (int i = 0; i < 8 && !c; i++)
        if (!captures[i].stream) c = &captures[i];
    if (!c) return ILLEGAL_STATE;
    *c = (mock_capture){stream, calloc(1, sizeof(mock_graph)), 0};
    return OK;
}

CUresult cuStreamEndCapture(void *stream, void **graph)
{
    *graph = NULL;
    mock_capture *c = capture_of(stream);
    if (!c) return ILLEGAL_STATE;
    mock_graph *g = c->g;
    int broken = c->broken;
    *c = (mock_capture){0};
    if (fault(API_cuStreamEndCapture) || broken) {
        graph_free(g);
        return broken ? CAPTURE_INVALIDATED : INJECTED;
    }
    *graph = g;
    live_other++;
    return OK;
}

/* The capture's status; its dependency set is the last captured node. */
CUresult cuStreamGetCaptureInfo_v3(void *stream, int *status, unsigned long long *id, void **graph, void *const **deps,
                                   const void **edges, size_t *n)
{
    FAULT(cuStreamGetCaptureInfo_v3);
    mock_capture *c = capture_of(stream);
    bool on = c != NULL;
    mock_graph *captured = on ? c->g : NULL;
    *status = !on ? 0 : c->broken ? 2 : 1;
    if (id) *id = on ? 1 : 0;
    if (graph) *graph = on ? captured : NULL;
    if (edges) *edges = NULL;
    if (deps) *deps = on && captured->n ? (void *const *)&captured->nodes[captured->n - 1] : NULL;
    if (n) *n = on && captured->n ? 1 : 0;
    return OK;
}

CUresult cuGraphGetNodes(void *graph, void **nodes, size_t *n)
{
    FAULT(cuGraphGetNodes);
    mock_graph *g = graph;
    if (!nodes) {
        *n = (size_t)g->n;
        return OK;
    }
    bool reversed = getenv("MOCKCUDA_NODES_REVERSED") != NULL;   /* the driver promises no order */
    for (size_t i = 0; i < *n && i < (size_t)g->n; i++) nodes[i] = g->nodes[reversed ? (size_t)g->n - 1 - i : i];
    *n = *n < (size_t)g->n ? *n : (size_t)g->n;
    return OK;
}

CUresult cuGraphKernelNodeGetParams_v2(void *node, mock_kparams *p)
{
    FAULT(cuGraphKernelNodeGetParams_v2);
    const mock_node *nd = node;
    *p = (mock_kparams){nd->func, nd->grid[0], nd->grid[1], nd->grid[2], nd->block[0], nd->block[1], nd->block[2],
                        nd->shared, NULL, NULL, NULL, NULL};
    return OK;
}

CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags)
{
    FAULT(cuGraphInstantiateWithFlags);
    mock_graph *g = graph;
    mock_exec *x = calloc(1, sizeof *x);
    x->g = g;
    x->n = g->n;
    x->nodes = malloc((size_t)(g->n ? g->n : 1) * sizeof *x->nodes);
    for (int i = 0; i < g->n; i++) x->nodes[i] = *g->nodes[i];
    *exec = x;
    live_other++;
    return OK;
}

CUresult cuGraphExecKernelNodeSetParams_v2(void *exec, void *node, const mock_kparams *p)
{
    FAULT(cuGraphExecKernelNodeSetParams_v2);
    mock_exec *x = exec;
    int i = 0;
    while (i < x->g->n && x->g->nodes[i] != node) i++;
    if (i == x->g->n || p->func != x->nodes[i].func) return INVALID_VALUE;
    node_set(&x->nodes[i], p->func, (unsigned[3]){p->gx, p->gy, p->gz}, (unsigned[3]){p->bx, p->by, p->bz}, p->shared,
             p->params);
    return OK;
}

CUresult cuGraphLaunch(void *exec, void *stream)
{
    FAULT(cuGraphLaunch);
    mock_exec *x = exec;
    if (sticky) return sticky;
    if (capture_of(stream)) return CAPTURE_UNSUPPORTED;
    graph_launches++;
    for (int i = 0; i < x->n; i++) run_node(&x->nodes[i]);
    return OK;
}

CUresult cuGraphExecDestroy(void *exec)
{
    mock_exec *x = exec;
    free(x->nodes);
    free(x);
    live_other--;
    FAULT(cuGraphExecDestroy);
    return OK;
}

CUresult cuGraphDestroy(void *graph)
{
    graph_free(graph);
    live_other--;
    FAULT(cuGraphDestroy);
    return OK;
}

/* ---- events -------------------------------------------------------------------------- */
CUresult cuEventCreate(void **e, unsigned flags)
{
    FAULT(cuEventCreate);
    *e = calloc(1, sizeof(double));
    live_other++;
    return OK;
}

CUresult cuEventDestroy_v2(void *e)
{
    free(e);
    live_other--;
    FAULT(cuEventDestroy_v2);
    return OK;
}

CUresult cuEventRecord(void *e, void *stream)
{
    FAULT(cuEventRecord);
    if (unsupported_in_capture(stream)) return CAPTURE_UNSUPPORTED;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *(double *)e = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    return sticky;
}

CUresult cuEventSynchronize(void *e)
{
    FAULT(cuEventSynchronize);
    return sticky;
}

CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
    FAULT(cuEventElapsedTime_v2);
    *ms = (float)(*(double *)b - *(double *)a) + 1e-4f;
    return OK;
}

/* ---- a stand-in NVRTC (KF_LIBNVRTC may point here too) ---------------------------
 * Compiles nothing: the "PTX" is a line `.entry NAME(` for each
 * `__global__` function NAME of the source (what this module's linker looks
 * for), then the source. With $MOCKNVRTC_FAIL_AT set, the compile fails
 * with an NVRTC-style log, "NAME(LINE): error: ...", at the first source
 * line that contains that text; $MOCKNVRTC_APPEND is added to the end of
 * the "PTX". */
typedef struct {
    char *src, *name, *log, *ptx;
} mock_prog;

int nvrtcVersion(int *major, int *minor)
{
    NVFAULT(nvrtcVersion);
    *major = 13;
    *minor = 0;
    return 0;
}

const char *nvrtcGetErrorString(int r)
{
    return r == 6 ? "NVRTC_ERROR_COMPILATION" : r == NVRTC_INJECTED ? "NVRTC_ERROR_INTERNAL_ERROR" : "NVRTC_ERROR_MOCK";
}

/* The name of the function after `__global__` at g (skipping qualifiers
 * and __launch_bounds__(...)), appended to out as `.entry NAME(`. */
static void entry_of(const char *g, char *out, size_t size)
{
    const char *p = g + strlen("__global__");
    for (;;) {
        while (*p == ' ' || *p == '\n' || *p == '\t') p++;
        const char *w = p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
        if (p == w) return;
        if (*p == '(' && strncmp(w, "__launch_bounds__", 17) != 0) {
            size_t used = strlen(out);
            snprintf(out + used, size - used, ".entry %.*s(\n", (int)(p - w), w);
            return;
        }
        if (*p == '(') p = strchr(p, ')') ? strchr(p, ')') + 1 : p + 1;
    }
}

int nvrtcCreateProgram(mock_prog **prog, const char *src, const char *name, int n, const char *const *h,
                       const char *const *i)
{
    NVFAULT(nvrtcCreateProgram);
    mock_prog *p = calloc(1, sizeof *p);
    p->src = strdup(src);
    p->name = strdup(name ? name : "default_program");
    p->log = strdup("");
    *prog = p;
    live_other++;
    return 0;
}

int nvrtcDestroyProgram(mock_prog **prog)
{
    free((*prog)->src);
    free((*prog)->name);
    free((*prog)->log);
    free((*prog)->ptx);
    free(*prog);
    *prog = NULL;
    live_other--;
    NVFAULT(nvrtcDestroyProgram);
    return 0;
}

int nvrtcCompileProgram(mock_prog *p, int n, const char *const *opts)
{
    NVFAULT(nvrtcCompileProgram);
    const char *want = getenv("MOCKNVRTC_FAIL_AT"), *at = want ? strstr(p->src, want) : NULL;
    if (!at) {
        char entries[4096] = "";
        for (const char *g = strstr(p->src, "__global__"); g; g = strstr(g + 1, "__global__"))
            entry_of(g, entries, sizeof entries);
        const char *tail = getenv("MOCKNVRTC_APPEND") ? getenv("MOCKNVRTC_APPEND") : "";
        free(p->ptx);
        p->ptx = malloc(strlen(entries) + strlen(p->src) + strlen(tail) + 1);
        strcpy(p->ptx, entries);
        strcat(p->ptx, p->src);
        strcat(p->ptx, tail);
        return 0;
    }
    int line = 1;
    for (const char *c = p->src; c < at; c++) line += *c == '\n';
    free(p->log);
    p->log = malloc(strlen(p->name) + 128);
    sprintf(p->log, "%s(%d): error: mock: requested\n\n1 error detected in the compilation of \"%s\".\n", p->name,
            line, p->name);
    return 6;
}

int nvrtcGetPTXSize(mock_prog *p, size_t *n)
{
    NVFAULT(nvrtcGetPTXSize);
    *n = strlen(p->ptx ? p->ptx : "") + 1;
    return 0;
}

int nvrtcGetPTX(mock_prog *p, char *out)
{
    NVFAULT(nvrtcGetPTX);
    strcpy(out, p->ptx ? p->ptx : "");
    return 0;
}

int nvrtcGetProgramLogSize(mock_prog *p, size_t *n)
{
    NVFAULT(nvrtcGetProgramLogSize);
    *n = strlen(p->log) + 1;
    return 0;
}

int nvrtcGetProgramLog(mock_prog *p, char *out)
{
    NVFAULT(nvrtcGetProgramLog);
    memcpy(out, p->log, strlen(p->log) + 1);
    return 0;
}
