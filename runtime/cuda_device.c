/* The CUDA device: the device interface of device.h over the driver API
 * (cuda_drv.h), for both GPU paths.
 *
 *   KF_BACKEND_CUDA  .kf -> kf_cuda_emit -> NVRTC -> PTX ─┐
 *   KF_BACKEND_PTX   .kf -> kf_ptx_emit ----------> PTX ──┼─> nvJitLink or cuLink -> cubin -> cuModuleLoadDataEx
 *   raw kernels      CUDA-C -> NVRTC -> PTX, or PTX text ─┘
 *
 * Every build goes through the cache (cache.h): the key covers the text,
 * options, arch and the NVRTC and driver versions; a hit loads the cached
 * cubin directly (no NVRTC, no PTX JIT). A .kf kernel is first looked up by
 * a key over its source (source_key), so a warm start does not even emit;
 * on a miss it is emitted and looked up by its text, and the build is
 * stored under both keys. kf_pipeline_create_module emits a whole module
 * and builds it the same way, once, for all its kernels: their pipelines
 * share one loaded CUmodule (cuda_mod), unloaded with the last of them.
 * One context per device (the
 * primary context of the ordinal), one non-blocking stream, properties
 * read once at open. Buffers are plain cuMemAlloc memory. Launch data is
 * packed once per plan (kernelParams pointing at 16-byte slots; a
 * re-targeted argument re-packs its slot), so a launch is one
 * cuLaunchKernel, or, for a .kf kernel built for sm_90 (which opens with
 * griddepcontrol.wait, emit.h) on a device with PDL on, one
 * cuLaunchKernelEx with PROGRAMMATIC_STREAM_SERIALIZATION: the kernel may
 * be launched while the one before it in the stream finishes, and waits for
 * its writes itself (programmatic dependent launch). Raw kernels never get
 * the attribute (nothing says they wait). Graphs are stream captures whose
 * kernel nodes are updated in place for re-targeted plans (below). Every
 * driver call goes through CU_CHECK. */
#include "cache.h"
#include "cuda_drv.h"
#include "nvjitlink.h"
#include "nvrtc.h"
#include "../emit/emit.h"
#include "../emit/ptx_hazards.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    CUdevice cu;
    CUcontext ctx;
    CUstream stream;        /* where work goes: own, or the caller's (kf_device_set_stream) */
    CUstream own;           /* the device's non-blocking stream */
    CUevent ev0, ev1;
} cuda_dev;

/* A loaded module, shared by the pipelines of its kernels. */
typedef struct {
    CUmodule mod;
    atomic_uint refs;       /* pipelines holding it */
} cuda_mod;

typedef struct {
    cuda_mod *cm;
    CUfunction fn;
    bool pdl_wait;          /* the code opens with griddepcontrol.wait (kf_emit_pdl_wait) */
} cuda_pipe;

#define JIT_LOG 8192
#define MODULE_ENTRY "*module*"   /* the build name of a whole module: no kernel is named so */

static _Thread_local CUcontext current;

/* Makes the device's context current on this thread (cheap when it is). */
static kf_status use(kf_device *dev, kf_error *err)
{
    cuda_dev *cd = dev->impl;
    kf_status st = KF_OK;
    if (current == cd->ctx) return KF_OK;
    CU_CHECK(CtxSetCurrent(cd->ctx));
    current = cd->ctx;
cleanup:
    return st;
}

void *kf_cuda_stream(kf_device *dev) { return ((cuda_dev *)dev->impl)->stream; }
kf_status kf_cuda_use(kf_device *dev, kf_error *err) { return use(dev, err); }
void kf_cuda_forget_current(void) { current = NULL; }

/* ---- open / close ------------------------------------------------------------- */
static void cuda_close(kf_device *dev)
{
    cuda_dev *cd = dev->impl;
    if (!cd) return;
    if (cd->ctx) kf_cu.CtxSetCurrent(cd->ctx);
    if (cd->ctx && cd->stream != cd->own) kf_cu.StreamSynchronize(cd->stream);
    if (cd->own) kf_cu.StreamSynchronize(cd->own);
    if (cd->ev0) kf_cu.EventDestroy(cd->ev0);
    if (cd->ev1) kf_cu.EventDestroy(cd->ev1);
    if (cd->own) kf_cu.StreamDestroy(cd->own);
    if (cd->ctx) kf_cu.PrimaryCtxRelease(cd->cu);
    if (current == cd->ctx) current = NULL;
    kf_rt_free(cd);
    dev->impl = NULL;
}

/* X(attribute, field of kf_device_props) */
#define DEVICE_ATTRS(X)                                                          \
    X(COMPUTE_CAPABILITY_MAJOR, cc_major) X(COMPUTE_CAPABILITY_MINOR, cc_minor)   \
    X(MULTIPROCESSOR_COUNT, sm_count) X(MAX_THREADS_PER_BLOCK, max_threads_per_block) \
    X(MAX_BLOCK_DIM_X, max_block[0]) X(MAX_BLOCK_DIM_X + 1, max_block[1])         \
    X(MAX_BLOCK_DIM_X + 2, max_block[2]) X(MAX_GRID_DIM_X, max_grid[0])            \
    X(MAX_GRID_DIM_X + 1, max_grid[1]) X(MAX_GRID_DIM_X + 2, max_grid[2])          \
    X(MAX_SHARED_MEMORY_PER_BLOCK, shared_per_block)                              \
    X(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, shared_per_block_optin) X(L2_CACHE_SIZE, l2_bytes)

static kf_status read_props(kf_device *dev, cuda_dev *cd, kf_error *err)
{
    kf_device_props *dp = &dev->props;
    kf_status st = KF_OK;
    size_t mem = 0;
    int v;
    CU_CHECK(DeviceGetName(dp->name, (int)sizeof dp->name - 1, cd->cu));
    CU_CHECK(DeviceTotalMem(&mem, cd->cu));
    dp->total_mem = mem;
#define X(a, field)                                                       \
    CU_CHECK(DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_##a, cd->cu));    \
    dp->field = v;
    DEVICE_ATTRS(X)
#undef X
    if (dp->shared_per_block_optin < dp->shared_per_block) dp->shared_per_block_optin = dp->shared_per_block;
    dp->driver_version = kf_cu_driver_version();
    dp->nvrtc_version = kf_nvrtc_version();
    int cc = dp->cc_major * 10 + dp->cc_minor;
    dp->arch = cc >= 90 ? 90 : cc >= 89 ? 89 : cc >= 86 ? 86 : 80;
cleanup:
    return st;
}

/* PDL needs sm_90 and cuLaunchKernelEx; it is on unless $KFORGE_PDL is 0
 * (A/B measurements; kf_device_set_pdl changes it later). */
static void pdl_init(kf_device *dev)
{
    const char *e = getenv("KFORGE_PDL");
    dev->pdl_able = dev->props.cc_major >= 9 && kf_cu.LaunchKernelEx;
    dev->pdl = dev->pdl_able && !(e && !strcmp(e, "0"));
}

static const kf_device_ops cuda_ops;

kf_status kf_cuda_open(kf_device *dev, int ordinal, kf_error *err)
{
    kf_status st = kf_cu_load(err);
    if (st != KF_OK) return st;
    int n = 0;
    CU_CHECK(DeviceGetCount(&n));
    if (ordinal < 0 || ordinal >= n)
        return kf_error_set(err, KF_ERR_DEVICE, n ? "GPU %d does not exist (this machine has %d; use 0..%d)"
                                                 : "GPU %d does not exist: no CUDA GPU found", ordinal, n, n - 1);
    cuda_dev *cd = kf_rt_alloc(sizeof *cd);
    if (!cd) return kf_error_set(err, KF_ERR_NOMEM, "out of memory opening a GPU");
    dev->impl = cd;
    dev->ops = &cuda_ops;
    CU_CHECK(DeviceGet(&cd->cu, ordinal));
    CU_CHECK(PrimaryCtxRetain(&cd->ctx, cd->cu));
    CU_CHECK(CtxSetCurrent(cd->ctx));
    current = cd->ctx;
    CU_CHECK(StreamCreate(&cd->own, CU_STREAM_NON_BLOCKING));
    cd->stream = cd->own;
    CU_CHECK(EventCreate(&cd->ev0, CU_EVENT_DEFAULT));
    CU_CHECK(EventCreate(&cd->ev1, CU_EVENT_DEFAULT));
    st = read_props(dev, cd, err);
    if (st == KF_OK) pdl_init(dev);
    if (st == KF_OK) return KF_OK;
cleanup:
    cuda_close(dev);
    return st;
}

/* ---- memory ---------------------------------------------------------------------- */
/* Allocations are rounded up to whole 16-byte words: a cp_async tail
 * (LANGUAGE.md section 8, `n` < 16 bytes read) is one 16-byte LDGSTS whose
 * window may pass the buffer's last byte, and compute-sanitizer's memcheck
 * checks the whole window. The padding is zeroed and never part of the
 * buffer's size. */
static kf_status cuda_alloc(kf_device *dev, size_t bytes, uint64_t *addr, kf_error *err)
{
    cuda_dev *cd = dev->impl;
    CUdeviceptr p = 0;
    kf_status st = use(dev, err);
    if (st != KF_OK) return st;
    if (bytes > SIZE_MAX - 15) return kf_error_set(err, KF_ERR_USAGE, "a buffer of %zu bytes is too large", bytes);
    bytes = (bytes + 15) & ~(size_t)15;
    CU_CHECK(MemAlloc(&p, bytes));
    CU_CHECK(MemsetD8Async(p, 0, bytes, cd->stream));
    *addr = p;
    return KF_OK;
cleanup:
    if (p) kf_cu.MemFree(p);
    return st;
}

static void cuda_free(kf_device *dev, uint64_t addr)
{
    cuda_dev *cd = dev->impl;
    if (use(dev, NULL) != KF_OK) return;
    kf_cu.StreamSynchronize(cd->stream);   /* queued work may still use it */
    kf_cu.MemFree(addr);
}

static kf_status cuda_upload(kf_device *dev, uint64_t addr, const void *src, size_t bytes, kf_error *err)
{
    cuda_dev *cd = dev->impl;
    kf_status st = use(dev, err);
    if (st != KF_OK) return st;
    CU_CHECK(MemcpyHtoDAsync(addr, src, bytes, cd->stream));
    CU_CHECK(StreamSynchronize(cd->stream));
cleanup:
    return st;
}

static kf_status cuda_download(kf_device *dev, uint64_t addr, void *dst, size_t bytes, kf_error *err)
{
    cuda_dev *cd = dev->impl;
    kf_status st = use(dev, err);
    if (st != KF_OK) return st;
    CU_CHECK(MemcpyDtoHAsync(dst, addr, bytes, cd->stream));
    CU_CHECK(StreamSynchronize(cd->stream));
cleanup:
    return st;
}

static kf_status cuda_sync(kf_device *dev, kf_error *err)
{
    cuda_dev *cd = dev->impl;
    kf_status st = use(dev, err);
    if (st != KF_OK) return st;
    CU_CHECK(StreamSynchronize(cd->stream));
cleanup:
    return st;
}

/* Ends the work queued since ev0 per the dispatch mode: timed (wait, *ms =
 * device time), sync (wait) or async (nothing). */
static kf_status finish_stream(cuda_dev *cd, kf_dispatch_mode mode, float *ms, kf_error *err)
{
    kf_status st = KF_OK;
    if (mode == KF_DISPATCH_TIMED) {
        CU_CHECK(EventRecord(cd->ev1, cd->stream));
        CU_CHECK(EventSynchronize(cd->ev1));
        CU_CHECK(EventElapsedTime(ms, cd->ev0, cd->ev1));
    } else if (mode == KF_DISPATCH_SYNC) {
        CU_CHECK(StreamSynchronize(cd->stream));
    }
cleanup:
    return st;
}

static kf_status cuda_copy(kf_device *dev, uint64_t dst, uint64_t src, size_t bytes, kf_dispatch_mode mode,
                           float *ms, kf_error *err)
{
    cuda_dev *cd = dev->impl;
    kf_status st = use(dev, err);
    if (st != KF_OK) return st;
    if (mode == KF_DISPATCH_TIMED) CU_CHECK(EventRecord(cd->ev0, cd->stream));
    CU_CHECK(MemcpyDtoDAsync(dst, src, bytes, cd->stream));
    st = finish_stream(cd, mode, ms, err);
cleanup:
    return st;
}

/* ---- building code ----------------------------------------------------------------- */
static void map_line(kf_error *err, unsigned long line, const kf_linemap *lm);

/* Maps "line N" of the PTX in err's log to the .kf source when a line map
 * is known. */
static void map_jit_log(kf_error *err, const kf_linemap *lm)
{
    if (!err || !err->log) return;
    const char *at = strstr(err->log, "line ");
    map_line(err, at ? strtoul(at + 5, NULL, 10) : 0, lm);
}

/* Attaches the driver JIT's error log to err, mapped (map_jit_log). */
static void attach_jit_log(kf_error *err, const char *log, const kf_linemap *lm)
{
    if (!err || !log || !log[0]) return;
    free(err->log);
    size_t n = strlen(log);
    err->log = malloc(n + 1);
    if (err->log) memcpy(err->log, log, n + 1);
    map_jit_log(err, lm);
}

/* PTX -> cubin through nvJitLink (kf_ptx_compiler), with its log mapped like
 * the driver's. */
static kf_status nvjitlink_ptx(const char *ptx, uint32_t arch, const kf_linemap *lm, bool lineinfo,
                               kf_cache_blob *out, kf_error *err)
{
    kf_status st = kf_nvjitlink_ptx(ptx, arch, lineinfo, &out->cubin, &out->cubin_len, err);
    if (st != KF_OK) map_jit_log(err, lm);
    return st;
}

/* PTX -> cubin through the driver's linker (the PTX JIT runs here, once),
 * or nvJitLink (kf_ptx_compiler).
 * The JIT options are part of what decides the cubin: keys over emitted or
 * raw text cover only lineinfo, so any other change here must bump
 * FORMAT_VERSION in cache.c (source keys also cover the build ID).
 * The linker compiles the PTX as relocatable code (ptxas -c), which
 * allocates more registers than a whole-program JIT (cuModuleLoadData of
 * the PTX, or ptxas without -c): sdpa DIRECT's split 174 against 148,
 * tc_gemv_q4k 230 against 170, the ring sdpa kernels 101-128 against
 * 72-96; the instructions are the same. Measured on the H200 (2026-12-02,
 * the same build loading the PTX whole instead), the extra registers are
 * faster or equal nearly everywhere: sdpa B4 DIRECT 0.848 -> 0.777 x copy,
 * tc_gemv f16 B8 0.870 -> 0.800 (cuda), the f16 decode step 1.134 -> 1.222
 * x its floor, q4k 1.786 -> 1.836; only the cuda builds of the q4k GEMVs
 * with a fused norm gained (6144 x 4096: 0.214 -> 0.281). The linker also
 * hands back the cubin that the cache keeps. nvJitLink compiles the same
 * way (register counts equal to ptxas -c's: sdpa_decode_split 101,
 * tc_gemv_q4k 230, against 78 and 170 whole). */
static kf_status link_ptx(const char *ptx, size_t len, uint32_t arch, int jit, const kf_linemap *lm, bool lineinfo,
                          kf_cache_blob *out, kf_error *err)
{
    if (jit < 0)
        return kf_error_set(err, KF_ERR_USAGE, "KFORGE_JIT is '%s': expected 'driver' or 'nvjitlink' (or unset: "
                            "nvJitLink when it is at least as new as the driver)", getenv("KFORGE_JIT"));
    if (jit > 0) return nvjitlink_ptx(ptx, arch, lm, lineinfo, out, err);
    char elog[JIT_LOG] = "", ilog[JIT_LOG] = "";
    CUjit_option opt[5] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_GENERATE_LINE_INFO};
    void *val[5] = {elog, (void *)(uintptr_t)JIT_LOG, ilog, (void *)(uintptr_t)JIT_LOG, (void *)(uintptr_t)1};
    CUlinkState ls = NULL;
    void *cubin = NULL;
    size_t size = 0;
    kf_status st = KF_OK;
    CU_CHECK(LinkCreate(lineinfo ? 5 : 4, opt, val, &ls));
    CU_CHECK(LinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, "kernel.ptx", 0, NULL, NULL));
    CU_CHECK(LinkComplete(ls, &cubin, &size));
    out->cubin = malloc(size ? size : 1);
    if (!out->cubin) {
        st = kf_error_set(err, KF_ERR_NOMEM, "out of memory holding a %zu-byte cubin", size);
        goto cleanup;
    }
    memcpy(out->cubin, cubin, size);
    out->cubin_len = size;
cleanup:
    if (st != KF_OK) attach_jit_log(err, elog, lm);
    if (ls) kf_cu.LinkDestroy(ls);
    return st;
}

/* Loads a cubin as a module no pipeline holds yet (refs 0). */
static kf_status load_module(const kf_cache_blob *b, cuda_mod **out, kf_error *err)
{
    char elog[JIT_LOG] = "";
    CUjit_option opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[2] = {elog, (void *)(uintptr_t)JIT_LOG};
    kf_status st = KF_OK;
    cuda_mod *cm = kf_rt_alloc(sizeof *cm);
    if (!cm) return kf_error_set(err, KF_ERR_NOMEM, "out of memory loading a module");
    CU_CHECK(ModuleLoadDataEx(&cm->mod, b->cubin, 2, opt, val));
    *out = cm;
    return KF_OK;
cleanup:
    attach_jit_log(err, elog, NULL);
    kf_rt_free(cm);
    return st;
}

/* Drops one pipeline's hold on cm; the last one unloads it. */
static void module_release(kf_device *dev, cuda_mod *cm)
{
    if (!cm || atomic_fetch_sub(&cm->refs, 1) != 1) return;
    if (use(dev, NULL) == KF_OK) kf_cu.ModuleUnload(cm->mod);
    kf_rt_free(cm);
}

/* Binds p to its entry point in cm (cm gains a holder), reading its static
 * shared memory and thread limit. */
static kf_status bind_function(kf_pipeline *p, cuda_mod *cm, kf_error *err)
{
    cuda_pipe *cp = p->impl;
    int shared = 0, maxt = 0;
    kf_status st = KF_OK;
    CUresult fr = kf_cu.ModuleGetFunction(&cp->fn, cm->mod, p->name);
    if (fr == CUDA_ERROR_NOT_FOUND)   /* a raw file's -k names none of its entries */
        return kf_error_set(err, KF_ERR_USAGE, "no entry point '%s' in the loaded module (cuModuleGetFunction: "
                            "CUDA_ERROR_NOT_FOUND): name one of its __global__ functions or .entry directives "
                            "(extern \"C\" for CUDA-C, or its mangled name)", p->name);
    if (fr != CUDA_SUCCESS) {
        st = kf_cu_fail(err, "cuModuleGetFunction", fr, __FILE__, __LINE__);
        goto cleanup;
    }
    CU_CHECK(FuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, cp->fn));
    CU_CHECK(FuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cp->fn));
    p->static_shared = (uint32_t)shared;
    p->max_threads = (uint32_t)maxt;
    /* Opt in to the whole dynamic shared memory the device allows (>48 KiB). */
    uint32_t room = p->dev->props.shared_per_block_optin - p->static_shared;
    if (room > p->dev->props.shared_per_block - p->static_shared)
        CU_CHECK(FuncSetAttribute(cp->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)room));
    cp->cm = cm;
    atomic_fetch_add(&cm->refs, 1);
cleanup:
    return st;
}

/* Loads the cubin and binds the n pipelines to their entries in it. */
static kf_status load_cubin(kf_pipeline **ps, uint32_t n, const kf_cache_blob *b, kf_error *err)
{
    cuda_mod *cm = NULL;
    kf_status st = load_module(b, &cm, err);
    for (uint32_t i = 0; i < n && st == KF_OK; i++) st = bind_function(ps[i], cm, err);
    if (st != KF_OK && cm) {
        atomic_fetch_add(&cm->refs, 1);   /* the bound ones keep theirs until their destroy */
        module_release(ps[0]->dev, cm);
    }
    return st;
}

/* What to build: the text (CUDA-C or PTX) and how to compile it. */
typedef struct {
    const char *name;       /* the entry, or MODULE_ENTRY for a whole module */
    const char *kind;
    const char *text;       /* CUDA-C or PTX */
    bool is_cuda;
    uint32_t arch;
    bool uncached;
    const kf_linemap *lm;   /* emitted text line -> .kf location, or NULL */
    bool lineinfo;          /* NVRTC -lineinfo (the emitted text carries its own) */
} build_req;

/* Points the error at the .kf location of line `line` of emitted text. */
static void map_line(kf_error *err, unsigned long line, const kf_linemap *lm)
{
    if (!lm || line < 1 || line > lm->lines.len || !lm->lines.data[line - 1].line) return;
    err->loc = lm->lines.data[line - 1];
    size_t used = strlen(err->msg);
    snprintf(err->msg + used, sizeof err->msg - used, " at %s:%u:%u", err->loc.file ? err->loc.file : "?",
             err->loc.line, err->loc.col);
}

/* NVRTC reports "NAME.cu(LINE): error: ..."; maps the first error line. */
static void map_nvrtc_error(kf_error *err, const char *name, const kf_linemap *lm)
{
    if (!err || !err->log || !lm) return;
    size_t n = strlen(name);
    for (const char *at = strstr(err->log, name); at; at = strstr(at + 1, name)) {
        char *end;
        if (at[n] != '(') continue;
        unsigned long line = strtoul(at + n + 1, &end, 10);
        if (strncmp(end, "): error", 8) != 0) continue;
        map_line(err, line, lm);
        return;
    }
}

/* Builds rq's cubin, linking with `jit` (kf_ptx_compiler's answer, which
 * the caller's key holds too). */
static kf_status build_blob(const build_req *rq, int jit, kf_cache_blob *b, kf_error *err)
{
    kf_status st;
    if (rq->is_cuda) {
        char name[300];
        snprintf(name, sizeof name, "%s.cu", rq->name);
        st = kf_nvrtc_compile(rq->text, name, rq->arch, rq->lineinfo, &b->ptx, NULL, err);
        if (st != KF_OK) {
            map_nvrtc_error(err, name, rq->lm);
            return st;
        }
        b->ptx_len = strlen(b->ptx);
    } else {
        b->ptx_len = strlen(rq->text);
        b->ptx = malloc(b->ptx_len + 1);
        if (!b->ptx) return kf_error_set(err, KF_ERR_NOMEM, "out of memory copying PTX");
        memcpy(b->ptx, rq->text, b->ptx_len + 1);
    }
    return link_ptx(b->ptx, b->ptx_len, rq->arch, jit, rq->is_cuda ? NULL : rq->lm, rq->lineinfo, b, err);
}

/* Looks a key up unless uncached; records where the code came from. */
static bool cache_find(kf_pipeline *p, kf_cache_key key, bool uncached, kf_cache_blob *b)
{
    char w[512] = "";
    kf_cache_result hit = uncached ? KF_CACHE_MISS : kf_cache_lookup(key, b, w, sizeof w);
    if (w[0] && !p->warning[0]) snprintf(p->warning, sizeof p->warning, "%s", w);
    p->origin = hit == KF_CACHE_HIT_MEMORY ? KF_FROM_MEMORY : hit == KF_CACHE_HIT_DISK ? KF_FROM_DISK : KF_FROM_BUILD;
    return hit != KF_CACHE_MISS;
}

static kf_status cache_put(kf_pipeline *p, kf_cache_key key, const kf_cache_blob *b, kf_error *err)
{
    char w[512];
    kf_status st = kf_cache_store(key, b, w, sizeof w);
    if (w[0] && !p->warning[0]) snprintf(p->warning, sizeof p->warning, "%s", w);
    if (st != KF_OK) kf_error_set(err, st, "out of memory caching a build");
    return st;
}

static kf_status pipe_alloc(kf_pipeline *p, kf_error *err)
{
    kf_status st = use(p->dev, err);
    if (st != KF_OK) return st;
    p->impl = kf_rt_alloc(sizeof(cuda_pipe));
    return p->impl ? KF_OK : kf_error_set(err, KF_ERR_NOMEM, "out of memory creating a pipeline");
}

/* NVRTC's PTX with the marks NVVM leaves when it merges loads of different
 * sizes and misreads a lane (emit/ptx_hazards.h: wrong values, not a failed
 * build). kforge's own CUDA-C is refused: its writer keeps such loads apart,
 * so a mark is a case it missed, and the ptx back end builds the kernel
 * without NVRTC; a refused build is never cached, so a hit needs no scan. A
 * raw kernel, which nothing else builds, gets a warning on p, on a cache
 * hit too. */
static kf_status check_merged_lanes(kf_pipeline *p, const build_req *rq, const char *ptx, kf_error *err)
{
    char why[320];
    if (!rq->is_cuda || !ptx || !ptx_merged_lanes(ptx, why, sizeof why)) return KF_OK;
    if (strcmp(rq->kind, "raw-cuda") != 0)
        return kf_error_set(err, KF_ERR_DEVICE,
                            "NVRTC miscompiled %s.cu: its PTX %s; the ptx back end (--backend ptx) builds the "
                            "kernel without NVRTC",
                            rq->name, why);
    if (!p->warning[0])
        snprintf(p->warning, sizeof p->warning, "NVRTC's PTX of %s.cu %s: its results may be wrong", rq->name, why);
    return KF_OK;
}

/* Text key -> cubin, building on a miss; the build is also stored under
 * src_key (the .kf source key) when given. Where the code came from and
 * any cache warning are recorded on p. */
static kf_status build_cached(kf_pipeline *p, const build_req *rq, const kf_cache_key *src_key, kf_cache_blob *b,
                              kf_error *err)
{
    char opts[300];
    snprintf(opts, sizeof opts, "entry=%s lineinfo=%d", rq->name, (int)rq->lineinfo);
    int jit = kf_ptx_compiler();
    kf_cache_inputs in = {rq->kind, rq->text, strlen(rq->text), opts, rq->arch,
                          rq->is_cuda ? kf_nvrtc_version() : 0, p->dev->props.driver_version, jit};
    kf_cache_key key = kf_cache_key_make(&in);
    kf_status st = KF_OK;
    bool hit = cache_find(p, key, rq->uncached, b);
    if (!hit) st = build_blob(rq, jit, b, err);
    if (st == KF_OK && (!hit || !strcmp(rq->kind, "raw-cuda"))) st = check_merged_lanes(p, rq, b->ptx, err);
    if (st == KF_OK && !hit && !rq->uncached) st = cache_put(p, key, b, err);
    if (st == KF_OK && src_key) st = cache_put(p, *src_key, b, err);
    return st;
}

/* Builds (or finds) the cubin and loads it for the n pipelines. */
static kf_status build_and_load(kf_pipeline **ps, uint32_t n, const build_req *rq, const kf_cache_key *src_key,
                                kf_error *err)
{
    kf_cache_blob b = {0};
    kf_status st = build_cached(ps[0], rq, src_key, &b, err);
    if (st == KF_OK) st = load_cubin(ps, n, &b, err);
    kf_cache_blob_free(&b);
    return st;
}

static kf_status diags_error(kf_error *err, const kf_diags *d, const char *what)
{
    if (d->items.len) {
        const kf_diag *g = &d->items.data[0];
        return kf_error_set_at(err, KF_ERR_SOURCE, g->loc, "%s:%u:%u: %s", g->loc.file ? g->loc.file : "?",
                               g->loc.line, g->loc.col, g->msg);
    }
    return kf_error_set(err, KF_ERR_NOMEM, "%s failed (out of memory)", what);
}

/* The key of a .kf kernel's build from what decides its emitted text, so a
 * warm start neither emits nor compiles: the module's file name, source
 * text and compile options (-D overrides, optimisation level), the kernel,
 * the emit options, the compiler's
 * build identity (kf_cache_build_id), arch and the NVRTC and driver
 * versions. False when that is not known for certain: a hand-built module
 * or kernel, or a program without a build ID; the caller then keys on the
 * emitted text. */
static bool source_key(const kf_pipeline *p, const kf_module *m, bool whole, const kf_emit_opts *eo, kf_cache_key *key)
{
    const char *build = kf_cache_build_id();
    uint32_t ki = 0;
    while (m && !whole && ki < m->nkernels && &m->kernels[ki] != p->k) ki++;
    if (!m || !m->source || !build[0] || ki == m->nkernels) return false;
    bool is_cuda = p->dev->backend == KF_BACKEND_CUDA;
    kf_buf o = {0};
    const char *file = m->file ? m->file : "";
    if (whole) kf_buf_printf(&o, "build=%s module=%u", build, m->nkernels);
    else kf_buf_printf(&o, "build=%s kernel=%u:%s", build, ki, p->name);
    kf_buf_printf(&o, " file=%zu:%s lineinfo=%d pdl_trigger=%d opt=%d defines=%u", strlen(file), file,
                  (int)eo->lineinfo, (int)eo->pdl_trigger, m->opts.opt == KF_OPT_O0 ? 0 : 1, m->opts.ndefines);
    for (uint32_t i = 0; i < m->opts.ndefines; i++)
        kf_buf_printf(&o, " %zu:%s=%zu:%s", strlen(m->opts.defines[i].name), m->opts.defines[i].name,
                      strlen(m->opts.defines[i].value), m->opts.defines[i].value);
    bool ok = !o.oom && o.data;
    if (ok) {
        kf_cache_inputs in = {is_cuda ? "kf-cuda-source" : "kf-ptx-source", m->source, m->source_len, o.data,
                              eo->arch, is_cuda ? kf_nvrtc_version() : 0, p->dev->props.driver_version,
                              kf_ptx_compiler()};
        *key = kf_cache_key_make(&in);
    }
    kf_buf_free(&o);
    return ok;
}

/* Emits the n kernels (the whole module when n > 1) and builds them through
 * the text-keyed cache. */
static kf_status emit_and_build(kf_pipeline **ps, uint32_t n, const kf_module *m, const kf_emit_opts *eo,
                                const kf_cache_key *src_key, kf_error *err)
{
    bool is_cuda = ps[0]->dev->backend == KF_BACKEND_CUDA;
    const kf_ir_kernel *k = n > 1 ? NULL : ps[0]->k;
    kf_buf text = {0};
    kf_linemap lm = {0};
    kf_diags d = {0};
    kf_status st = is_cuda ? kf_cuda_emit(m, k, eo, &text, &lm, &d) : kf_ptx_emit(m, k, eo, &text, &lm, &d);
    if (st != KF_OK || text.oom || !text.data) {
        st = diags_error(err, &d, is_cuda ? "CUDA-C emission" : "PTX emission");
    } else {
        build_req rq = {k ? ps[0]->name : MODULE_ENTRY, is_cuda ? "kf-cuda" : "kf-ptx", text.data, is_cuda, eo->arch,
                        false, &lm, eo->lineinfo};
        st = build_and_load(ps, n, &rq, src_key, err);
        /* text that kforge emitted and NVRTC or the JIT refuses is not the
         * program's error (KF_ERR_SOURCE is a raw kernel's): the device's */
        if (st == KF_ERR_SOURCE) st = kf_error_restatus(err, KF_ERR_DEVICE);
    }
    kf_buf_free(&text);
    kf_linemap_free(&lm);
    kf_diags_free(&d);
    return st;
}

static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* $KFORGE_LINEINFO: line info; $KFORGE_PDL_TRIGGER: sm_90 kernels let the
 * next programmatic dependent launch start as soon as they start. */
static kf_emit_opts emit_opts(const kf_device *dev)
{
    return (kf_emit_opts){.arch = dev->props.arch, .lineinfo = env_on("KFORGE_LINEINFO"),
                          .pdl_trigger = env_on("KFORGE_PDL_TRIGGER")};
}

/* Builds the n pipelines of m (one kernel, or the whole module): a warm
 * start is: hash the source key, read the entry, load the cubin. */
static kf_status build_kf(kf_pipeline **ps, uint32_t n, const kf_module *m, kf_error *err)
{
    kf_emit_opts eo = emit_opts(ps[0]->dev);
    kf_status st = KF_OK;
    for (uint32_t i = 0; i < n && st == KF_OK; i++) st = pipe_alloc(ps[i], err);
    for (uint32_t i = 0; i < n && st == KF_OK; i++) ((cuda_pipe *)ps[i]->impl)->pdl_wait = kf_emit_pdl_wait(&eo);
    kf_cache_key key;
    bool keyed = st == KF_OK && source_key(ps[0], m, n > 1, &eo, &key);
    kf_cache_blob b = {0};
    if (st == KF_OK && keyed && cache_find(ps[0], key, false, &b)) {
        st = load_cubin(ps, n, &b, err);
        kf_cache_blob_free(&b);
    } else if (st == KF_OK) {
        st = emit_and_build(ps, n, m, &eo, keyed ? &key : NULL, err);
    }
    for (uint32_t i = 1; i < n; i++) {   /* one build: the same origin and warning for all */
        ps[i]->origin = ps[0]->origin;
        memcpy(ps[i]->warning, ps[0]->warning, sizeof ps[i]->warning);
    }
    return st;
}

static kf_status cuda_pipeline_create(kf_pipeline *p, const kf_module *m, kf_error *err)
{
    return build_kf(&p, 1, m, err);
}

static kf_status cuda_module_create(kf_pipeline **ps, uint32_t n, const kf_module *m, kf_error *err)
{
    return build_kf(ps, n, m, err);
}

static kf_status cuda_pipeline_create_raw(kf_pipeline *p, const kf_raw_kernel *rk, kf_error *err)
{
    bool is_cuda = rk->kind == KF_SRC_CUDA;
    build_req rq = {p->name, is_cuda ? "raw-cuda" : "raw-ptx", rk->source, is_cuda,
                    rk->arch ? rk->arch : p->dev->props.arch, rk->uncached, NULL, false};
    kf_status st = pipe_alloc(p, err);
    return st == KF_OK ? build_and_load(&p, 1, &rq, NULL, err) : st;
}

static void cuda_pipeline_destroy(kf_pipeline *p)
{
    cuda_pipe *cp = p->impl;
    module_release(p->dev, cp->cm);
    kf_rt_free(cp);
    p->impl = NULL;
}

/* ---- launching ---------------------------------------------------------------------- */
typedef struct {
    _Alignas(16) unsigned char bytes[16];
} slot;

static size_t cuda_plan_extra(uint32_t n) { return (size_t)(n ? n : 1) * (sizeof(void *) + sizeof(slot)); }

/* kernelParams[i] points at slot i: a 64-bit device pointer or the value's
 * lanes packed in their natural size (bool as one byte). */
static void cuda_plan_pack(kf_plan *plan, uint32_t i)
{
    slot *slots = plan->extra;
    void **params = (void **)(slots + plan->nargs);
    const kf_arg *a = &plan->args[i];
    memset(slots[i].bytes, 0, sizeof slots[i].bytes);
    if (a->buf) {
        uint64_t addr = a->buf->addr;
        memcpy(slots[i].bytes, &addr, 8);
    } else {
        uint32_t sz = kf_scalar_bytes[a->value.type.scalar];
        for (uint32_t l = 0; l < a->value.type.lanes && (l + 1) * sz <= 16; l++)
            memcpy(slots[i].bytes + l * sz, &a->value.lane[l], sz);   /* little-endian low bytes */
    }
    params[i] = slots[i].bytes;
}

/* Whether a launch of p is a programmatic dependent launch now. */
static bool launch_pdl(const kf_pipeline *p)
{
    return p->dev->pdl && ((const cuda_pipe *)p->impl)->pdl_wait;
}

/* Queues one launch of plan on the device's stream (launch_pdl: with
 * PROGRAMMATIC_STREAM_SERIALIZATION, through cuLaunchKernelEx). */
static kf_status launch_plan(const kf_plan *plan, kf_error *err)
{
    cuda_dev *cd = plan->p->dev->impl;
    const cuda_pipe *cp = plan->p->impl;
    void **params = (void **)((slot *)plan->extra + plan->nargs);
    kf_status st = KF_OK;
    if (launch_pdl(plan->p)) {
        CUlaunchAttribute at = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                                .value.programmatic_stream_serialization = 1};
        CUlaunchConfig cfg = {plan->grid[0], plan->grid[1], plan->grid[2], plan->block[0], plan->block[1],
                              plan->block[2], plan->dyn_shared, cd->stream, &at, 1};
        CU_CHECK(LaunchKernelEx(&cfg, cp->fn, params, NULL));
    } else {
        CU_CHECK(LaunchKernel(cp->fn, plan->grid[0], plan->grid[1], plan->grid[2], plan->block[0], plan->block[1],
                              plan->block[2], plan->dyn_shared, cd->stream, params, NULL));
    }
cleanup:
    return st;
}

static kf_status cuda_launch(kf_plan *plan, kf_dispatch_mode mode, float *ms, kf_error *err)
{
    kf_device *dev = plan->p->dev;
    cuda_dev *cd = dev->impl;
    kf_status st = use(dev, err);
    if (st != KF_OK) return st;
    if (mode == KF_DISPATCH_TIMED) CU_CHECK(EventRecord(cd->ev0, cd->stream));
    st = launch_plan(plan, err);
    if (st == KF_OK) st = finish_stream(cd, mode, ms, err);
cleanup:
    return st;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static kf_status cuda_bench_bare(kf_plan *plan, uint32_t n, double *us, kf_error *err)
{
    cuda_dev *cd = plan->p->dev->impl;
    kf_status st = use(plan->p->dev, err);
    if (st != KF_OK) return st;
    CU_CHECK(StreamSynchronize(cd->stream));
    double t0 = now_us();
    for (uint32_t i = 0; i < n && st == KF_OK; i++) st = launch_plan(plan, err);
    if (st != KF_OK) goto cleanup;
    *us = (now_us() - t0) / (n ? n : 1);
    CU_CHECK(StreamSynchronize(cd->stream));
cleanup:
    return st;
}

/* ---- timed regions and resources (kforge bench) ------------------------------------------------ */
static kf_status cuda_timer(kf_device *dev, bool stop, float *ms, kf_error *err)
{
    cuda_dev *cd = dev->impl;
    kf_status st = use(dev, err);
    if (st != KF_OK) return st;
    if (stop) return finish_stream(cd, KF_DISPATCH_TIMED, ms, err);
    CU_CHECK(EventRecord(cd->ev0, cd->stream));
cleanup:
    return st;
}

static kf_status cuda_resources(const kf_pipeline *p, kf_resources *out, kf_error *err)
{
    const cuda_pipe *cp = p->impl;
    int regs = 0, local = 0;
    kf_status st = use(p->dev, err);
    if (st != KF_OK) return st;
    CU_CHECK(FuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, cp->fn));
    CU_CHECK(FuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, cp->fn));
    *out = (kf_resources){regs, local, p->static_shared, p->max_threads};
cleanup:
    return st;
}

/* ---- graphs (runtime/graph.c drives them) -------------------------------------------------------
 * Recording is stream capture on the device's stream (thread-local mode:
 * this thread may not make calls a capture cannot hold, which graph.c
 * refuses before the driver sees them). After each captured launch the
 * capture's dependency set is that launch's kernel node
 * (cuStreamGetCaptureInfo): node i is launch i by construction, whatever
 * order the driver lists a graph's nodes in. At the end the graph holds
 * exactly those nodes (cuGraphGetNodes) and each is checked to have its
 * launch's grid, block and shared bytes; a re-targeted plan is carried into the
 * executable graph with cuGraphExecKernelNodeSetParams on its node. A
 * programmatic dependent launch captures as a kernel node with a
 * programmatic edge from the node before it; the update sets the node's
 * parameters only and leaves its edges as they are. */
typedef struct {
    CUgraph graph;          /* kept: the nodes updates name belong to it */
    CUgraphExec exec;
    CUgraphNode *nodes;     /* node i: launch i */
    uint32_t cap;
    uint32_t npdl;          /* launches captured as programmatic dependents */
} cuda_graph;

enum { CAPTURE_ACTIVE = 1 };

static void graph_free(cuda_graph *cg)
{
    if (!cg) return;
    if (cg->exec) kf_cu.GraphExecDestroy(cg->exec);
    if (cg->graph) kf_cu.GraphDestroy(cg->graph);
    kf_rt_free(cg->nodes);
    kf_rt_free(cg);
}

static kf_status cuda_graph_begin(kf_graph *g, kf_error *err)
{
    cuda_dev *cd = g->dev->impl;
    cuda_graph *cg = kf_rt_alloc(sizeof *cg);
    if (!cg) return kf_error_set(err, KF_ERR_NOMEM, "out of memory starting a graph recording");
    kf_status st = use(g->dev, err);
    if (st != KF_OK) goto cleanup;
    /* Relaxed: the recording device refuses every call a graph cannot hold
     * itself; the driver's own prohibitions (global or thread-local mode)
     * would also refuse the work of other devices on this GPU and thread,
     * which the recording does not touch (a second kf_device's
     * cuStreamSynchronize gave CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED). */
    CU_CHECK(StreamBeginCapture(cd->stream, CU_STREAM_CAPTURE_MODE_RELAXED));
    g->impl = cg;
    return KF_OK;
cleanup:
    graph_free(cg);
    return st;
}

/* The node the last captured launch made: the capture's one dependency. */
static kf_status last_node(cuda_dev *cd, CUgraphNode *node, kf_error *err)
{
    int status = 0;
    const CUgraphNode *deps = NULL;
    const void *edges = NULL;   /* asked for: a dependency with edge data is otherwise a lossy query */
    size_t n = 0;
    kf_status st = KF_OK;
    CU_CHECK(StreamGetCaptureInfo(cd->stream, &status, NULL, NULL, &deps, &edges, &n));
    if (status != CAPTURE_ACTIVE || n != 1 || !deps)
        return kf_error_set(err, KF_ERR_DEVICE, "the capture is not one chain of launches (status %d, %zu dependencies)",
                            status, n);
    *node = deps[0];
cleanup:
    return st;
}

static kf_status cuda_graph_record(kf_graph *g, kf_plan *plan, kf_error *err)
{
    cuda_graph *cg = g->impl;
    if (g->n == cg->cap) {
        uint32_t cap = cg->cap ? 2 * cg->cap : 64;
        CUgraphNode *nodes = kf_rt_alloc((size_t)cap * sizeof *nodes);
        if (!nodes) return kf_error_set(err, KF_ERR_NOMEM, "out of memory recording launch %u of a graph", g->n);
        if (g->n) memcpy(nodes, cg->nodes, (size_t)g->n * sizeof *nodes);
        kf_rt_free(cg->nodes);
        cg->nodes = nodes, cg->cap = cap;
    }
    cg->nodes[g->n] = NULL;   /* a collective: NCCL's nodes are its own */
    if (!plan) return KF_OK;
    kf_status st = cuda_launch(plan, KF_DISPATCH_ASYNC, NULL, err);
    cg->npdl += st == KF_OK && launch_pdl(plan->p);
    return st == KF_OK ? last_node(g->dev->impl, &cg->nodes[g->n], err) : st;
}

/* Ends the capture and drops what it made (a failed launch may have
 * invalidated it: the end then fails, as it should). */
static void cuda_graph_abort(kf_graph *g)
{
    cuda_dev *cd = g->dev->impl;
    CUgraph gr = NULL;
    if (use(g->dev, NULL) == KF_OK) kf_cu.StreamEndCapture(cd->stream, &gr);
    if (gr) kf_cu.GraphDestroy(gr);
    graph_free(g->impl);
    g->impl = NULL;
}

/* The captured graph holds the recorded nodes, each a kernel node of its
 * launch's function and of the grid and shared bytes it was recorded with
 * (a plan re-targeted since is carried in at the first replay); with
 * collectives, NCCL's nodes besides (as many as it makes). */
static kf_status graph_check_nodes(kf_graph *g, cuda_graph *cg, kf_error *err)
{
    size_t n = 0;
    uint32_t launches = 0;
    kf_status st = KF_OK;
    for (uint32_t i = 0; i < g->n; i++) launches += g->nodes[i].plan != NULL;
    CU_CHECK(GraphGetNodes(cg->graph, NULL, &n));
    if (launches == g->n ? n != g->n : n < launches)
        return kf_error_set(err, KF_ERR_DEVICE, "the captured graph holds %zu nodes for %u launches", n, launches);
    for (uint32_t i = 0; i < g->n; i++) {
        const kf_graph_node *nd = &g->nodes[i];
        const kf_plan *pl = nd->plan;
        if (!pl) continue;
        CUDA_KERNEL_NODE_PARAMS kp = {0};
        CU_CHECK(GraphKernelNodeGetParams(cg->nodes[i], &kp));
        if (kp.gridDimX != nd->grid[0] || kp.gridDimY != nd->grid[1] || kp.gridDimZ != nd->grid[2] ||
            kp.blockDimX != pl->block[0] || kp.blockDimY != pl->block[1] || kp.blockDimZ != pl->block[2] ||
            kp.sharedMemBytes != nd->dyn_shared)
            return kf_error_set(err, KF_ERR_DEVICE, "node %u of the captured graph does not have the launch shape of "
                                "launch %u (kernel '%s')", i, i, pl->p->name);
    }
cleanup:
    return st;
}

static kf_status cuda_graph_end(kf_graph *g, kf_error *err)
{
    cuda_dev *cd = g->dev->impl;
    cuda_graph *cg = g->impl;
    kf_status st = use(g->dev, err);
    if (st != KF_OK) {
        cuda_graph_abort(g);
        return st;
    }
    CU_CHECK(StreamEndCapture(cd->stream, &cg->graph));
    st = graph_check_nodes(g, cg, err);
    if (st != KF_OK) goto cleanup;
    CU_CHECK(GraphInstantiate(&cg->exec, cg->graph, 0));
    return KF_OK;
cleanup:
    graph_free(cg);
    g->impl = NULL;
    return st;
}

static kf_status cuda_graph_update(kf_graph *g, uint32_t i, kf_error *err)
{
    cuda_graph *cg = g->impl;
    const kf_plan *pl = g->nodes[i].plan;
    CUDA_KERNEL_NODE_PARAMS kp = {((cuda_pipe *)pl->p->impl)->fn, pl->grid[0], pl->grid[1], pl->grid[2],
                                  pl->block[0], pl->block[1], pl->block[2], pl->dyn_shared,
                                  (void **)((slot *)pl->extra + pl->nargs), NULL, NULL, NULL};
    kf_status st = use(g->dev, err);
    if (st != KF_OK) return st;
    CU_CHECK(GraphExecKernelNodeSetParams(cg->exec, cg->nodes[i], &kp));
cleanup:
    if (st != KF_OK && cg->npdl && err) {
        size_t used = strlen(err->msg);
        snprintf(err->msg + used, sizeof err->msg - used, "; the graph holds %u programmatic dependent launches: "
                 "record it with PDL off (kf_device_set_pdl, or KFORGE_PDL=0) if the driver refuses their updates",
                 cg->npdl);
    }
    return st;
}

static kf_status cuda_graph_launch(kf_graph *g, kf_dispatch_mode mode, float *ms, kf_error *err)
{
    cuda_dev *cd = g->dev->impl;
    cuda_graph *cg = g->impl;
    kf_status st = use(g->dev, err);
    if (st != KF_OK) return st;
    if (mode == KF_DISPATCH_TIMED) CU_CHECK(EventRecord(cd->ev0, cd->stream));
    CU_CHECK(GraphLaunch(cg->exec, cd->stream));
    st = finish_stream(cd, mode, ms, err);
cleanup:
    return st;
}

static void cuda_graph_destroy(kf_graph *g)
{
    if (use(g->dev, NULL) == KF_OK) graph_free(g->impl);
    g->impl = NULL;
}

/* ---- the caller's stream (interop: PyTorch's current stream) ----------------------------------- */
static kf_status cuda_stream(kf_device *dev, bool external, void *stream, kf_error *err)
{
    cuda_dev *cd = dev->impl;
    CUstream next = external ? (CUstream)stream : cd->own;
    current = NULL;   /* the caller's code may have made another context current: set ours again */
    kf_status st = use(dev, err);
    if (st != KF_OK || next == cd->stream) return st;
    CU_CHECK(StreamSynchronize(cd->stream));   /* what is queued keeps its order */
    cd->stream = next;
cleanup:
    return st;
}

static const kf_device_ops cuda_ops = {
    .close = cuda_close,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .pipeline_create = cuda_pipeline_create,
    .pipeline_create_raw = cuda_pipeline_create_raw,
    .module_create = cuda_module_create,
    .pipeline_destroy = cuda_pipeline_destroy,
    .plan_extra = cuda_plan_extra,
    .plan_pack = cuda_plan_pack,
    .launch = cuda_launch,
    .sync = cuda_sync,
    .copy = cuda_copy,
    .bench_bare = cuda_bench_bare,
    .timer = cuda_timer,
    .resources = cuda_resources,
    .graph_begin = cuda_graph_begin,
    .graph_record = cuda_graph_record,
    .graph_abort = cuda_graph_abort,
    .graph_end = cuda_graph_end,
    .graph_update = cuda_graph_update,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
    .stream = cuda_stream,
};
