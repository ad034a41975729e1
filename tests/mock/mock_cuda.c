/* A stand-in libcuda for tests on machines without a GPU: the driver entry
 * points kforge's runtime resolves (runtime/cuda_drv.h), over host memory.
 * "Device" pointers are host pointers; the "linker" turns PTX into a fake
 * cubin ("MOCKCUBIN\n" + the PTX) that only this module loads; an entry is
 * found if the PTX declares `.entry NAME(`; PTX holding "MOCKJITFAIL" fails
 * to link with a JIT log naming that PTX line. A launch of an entry named
 * `saxpy` with the (f32 a, f32 *x, f32 *y, u32 n) layout really computes
 * saxpy on the host, so argument packing, grids and stream order are
 * checked end to end; every launch is recorded for mock_last_launch(),
 * and mock_live_modules() counts modules loaded and not unloaded.
 * This exercises the CUDA backend's host side in CI; the GPU tests
 * (tests/test_gpu_*.c) cover the real driver. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { OK = 0, INVALID_VALUE = 1, NO_DEVICE = 100, INVALID_DEVICE = 101, INVALID_IMAGE = 200, INVALID_PTX = 218,
       NOT_FOUND = 500, ILLEGAL_ADDRESS = 700 };

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
} mock_launch;

static mock_launch last;
static int live_allocs;
static int links;    /* PTX handed to the "JIT" */
static int live_modules;
static int sticky;   /* a "fault" poisons later calls, like the real driver */

/* For tests: the last launch, the launch count, live allocations. */
const mock_launch *mock_last_launch(void) { return &last; }
int mock_live_allocs(void) { return live_allocs; }
int mock_link_count(void) { return links; }
int mock_live_modules(void) { return live_modules; }

CUresult cuInit(unsigned flags) { return getenv("MOCKCUDA_NODEVICE") ? NO_DEVICE : OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }

CUresult cuGetErrorName(CUresult r, const char **s)
{
    switch (r) {
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; break;
    case INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; break;
    case INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; break;
    case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; return INVALID_VALUE;
    }
    return OK;
}

CUresult cuGetErrorString(CUresult r, const char **s) { *s = "mock driver error"; return OK; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? OK : INVALID_DEVICE; }
CUresult cuDeviceGetName(char *name, int len, int dev) { snprintf(name, (size_t)len, "Mock GPU"); return OK; }

CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
    switch (attr) {
    case 1: *v = 1024; break;                              /* max threads per block */
    case 2: case 3: *v = 1024; break;                      /* max block x, y */
    case 4: *v = 64; break;
    case 5: *v = 2147483647; break;
    case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break;                             /* shared per block */
    case 16: *v = 4; break;                                /* SMs */
    case 38: *v = 50 << 20; break;                         /* L2 */
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    case 97: *v = 232448; break;                           /* opt-in shared */
    default: *v = 0;
    }
    return OK;
}

CUresult cuDeviceTotalMem_v2(size_t *b, int dev) { *b = (size_t)80 << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)&last; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return OK; }
CUresult cuCtxSetCurrent(void *ctx) { return OK; }
CUresult cuStreamCreate(void **s, unsigned flags) { *s = malloc(8); return OK; }
CUresult cuStreamDestroy_v2(void *s) { free(s); return OK; }
CUresult cuStreamSynchronize(void *s) { return sticky; }

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    void *m = aligned_alloc(256, (n + 255) & ~(size_t)255);
    if (!m) return 2;
    live_allocs++;
    *p = (CUdeviceptr)(uintptr_t)m;
    return OK;
}

CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); live_allocs--; return OK; }
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, void *s) { memset((void *)(uintptr_t)p, v, n); return OK; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) { memcpy((void *)(uintptr_t)d, s, n); return sticky; }
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) { memcpy(d, (void *)(uintptr_t)s, n); return sticky; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) { memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n); return sticky; }

/* ---- linking and modules ----------------------------------------------------- */
typedef struct {
    char *elog;
    size_t elog_len;
    char *cubin;
} mock_link;

CUresult cuLinkCreate_v2(unsigned n, int *opt, void **val, void **out)
{
    mock_link *l = calloc(1, sizeof *l);
    for (unsigned i = 0; i < n; i++) {
        if (opt[i] == 5) l->elog = val[i];
        if (opt[i] == 6) l->elog_len = (size_t)(uintptr_t)val[i];
    }
    *out = l;
    return OK;
}

CUresult cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name, unsigned n, int *o, void **v)
{
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
    return OK;
}

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *o, void **v)
{
    if (strncmp(image, "MOCKCUBIN\n", 10) != 0) return INVALID_IMAGE;
    mock_module *m = calloc(1, sizeof *m);
    m->text = strdup((const char *)image + 10);
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
    return OK;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    mock_module *m = mod;
    char want[160];
    snprintf(want, sizeof want, ".entry %s(", name);
    if (!strstr(m->text, want) || m->nfuncs == MOCK_FUNCS) return NOT_FOUND;
    mock_func *f = &m->funcs[m->nfuncs++];
    snprintf(f->name, sizeof f->name, "%s", name);
    *fn = f;
    return OK;
}

CUresult cuFuncGetAttribute(int *v, int attr, void *fn) { *v = attr == 0 ? 1024 : 0; return OK; }
CUresult cuFuncSetAttribute(void *fn, int attr, int v) { ((mock_func *)fn)->dyn_limit = v; return OK; }

/* ---- launches --------------------------------------------------------------------- */
static void run_saxpy(void **params, unsigned threads)
{
    float a;
    float *x, *y;
    unsigned n;
    memcpy(&a, params[0], 4);
    memcpy(&x, params[1], 8);
    memcpy(&y, params[2], 8);
    memcpy(&n, params[3], 4);
    for (unsigned i = 0; i < threads && i < n; i++) y[i] = a * x[i] + y[i];
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra)
{
    mock_func *f = fn;
    if (sticky) return sticky;
    if ((int)shared > (f->dyn_limit > 49152 ? f->dyn_limit : 49152)) return INVALID_VALUE;
    last = (mock_launch){{gx, gy, gz}, {bx, by, bz}, shared, "", last.nlaunches + 1};
    snprintf(last.name, sizeof last.name, "%s", f->name);
    if (!strcmp(f->name, "saxpy")) run_saxpy(params, gx * gy * gz * bx * by * bz);
    if (!strcmp(f->name, "wild")) sticky = ILLEGAL_ADDRESS;   /* faults at the next sync */
    return OK;
}

/* ---- events -------------------------------------------------------------------------- */
CUresult cuEventCreate(void **e, unsigned flags) { *e = calloc(1, sizeof(double)); return OK; }
CUresult cuEventDestroy_v2(void *e) { free(e); return OK; }

CUresult cuEventRecord(void *e, void *stream)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *(double *)e = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    return sticky;
}

CUresult cuEventSynchronize(void *e) { return sticky; }

CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
    *ms = (float)(*(double *)b - *(double *)a) + 1e-4f;
    return OK;
}

/* ---- a stand-in NVRTC (KF_LIBNVRTC may point here too) ---------------------------
 * Compiles nothing: the "PTX" is the source. With $MOCKNVRTC_FAIL_AT set, the
 * compile fails with an NVRTC-style log, "NAME(LINE): error: ...", at the first
 * source line that contains that text. */
typedef struct {
    char *src, *name, *log;
} mock_prog;

int nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
const char *nvrtcGetErrorString(int r) { return r == 6 ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR_MOCK"; }

int nvrtcCreateProgram(mock_prog **prog, const char *src, const char *name, int n, const char *const *h,
                       const char *const *i)
{
    mock_prog *p = calloc(1, sizeof *p);
    p->src = strdup(src);
    p->name = strdup(name ? name : "default_program");
    p->log = strdup("");
    *prog = p;
    return 0;
}

int nvrtcDestroyProgram(mock_prog **prog)
{
    free((*prog)->src);
    free((*prog)->name);
    free((*prog)->log);
    free(*prog);
    *prog = NULL;
    return 0;
}

int nvrtcCompileProgram(mock_prog *p, int n, const char *const *opts)
{
    const char *want = getenv("MOCKNVRTC_FAIL_AT"), *at = want ? strstr(p->src, want) : NULL;
    if (!at) return 0;
    int line = 1;
    for (const char *c = p->src; c < at; c++) line += *c == '\n';
    free(p->log);
    p->log = malloc(strlen(p->name) + 128);
    sprintf(p->log, "%s(%d): error: mock: requested\n\n1 error detected in the compilation of \"%s\".\n", p->name,
            line, p->name);
    return 6;
}

int nvrtcGetPTXSize(mock_prog *p, size_t *n) { *n = strlen(p->src) + 1; return 0; }
int nvrtcGetPTX(mock_prog *p, char *out) { memcpy(out, p->src, strlen(p->src) + 1); return 0; }
int nvrtcGetProgramLogSize(mock_prog *p, size_t *n) { *n = strlen(p->log) + 1; return 0; }
int nvrtcGetProgramLog(mock_prog *p, char *out) { memcpy(out, p->log, strlen(p->log) + 1); return 0; }
