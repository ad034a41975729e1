/* nvJitLink through dlopen: PTX text to a linked cubin, the same machine
 * code the driver's JIT would load, produced on a machine without a GPU
 * (so `kforge emit --target cubin` and `cuobjdump -sass` work in CI). The
 * library is found once per process like NVRTC (runtime/dl.c; a path in
 * $KF_LIBNVJITLINK is the only one tried); its entry points live in one
 * table filled from an X-macro list, and every call goes through
 * JIT_CHECK, which records the call, the result and __FILE__:__LINE__ and
 * jumps to cleanup (STYLE.md 8). */
#include "nvjitlink.h"
#include "cuda_drv.h"
#include "rt_impl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvJitLinkResult;
typedef struct nvJitLink *nvJitLinkHandle;
enum { INPUT_PTX = 2 };   /* NVJITLINK_INPUT_PTX */
enum { PTX_COMPILE_ERROR = 4 };   /* NVJITLINK_ERROR_PTX_COMPILE: the PTX's own error */

/* X(name, params) */
#define JIT_FUNCS(X)                                                                   \
    X(nvJitLinkCreate, (nvJitLinkHandle *, uint32_t, const char **))                   \
    X(nvJitLinkDestroy, (nvJitLinkHandle *))                                            \
    X(nvJitLinkAddData, (nvJitLinkHandle, int, const void *, size_t, const char *))    \
    X(nvJitLinkComplete, (nvJitLinkHandle))                                             \
    X(nvJitLinkGetLinkedCubinSize, (nvJitLinkHandle, size_t *))                         \
    X(nvJitLinkGetLinkedCubin, (nvJitLinkHandle, void *))                               \
    X(nvJitLinkGetErrorLogSize, (nvJitLinkHandle, size_t *))                            \
    X(nvJitLinkGetErrorLog, (nvJitLinkHandle, char *))

static struct {
#define X(n, p) nvJitLinkResult(*n) p;
    JIT_FUNCS(X)
#undef X
    nvJitLinkResult (*nvJitLinkVersion)(unsigned *, unsigned *);   /* 12.3 and later; optional */
    void *lib;
    char why[1024];
} jl;

static pthread_once_t jl_once = PTHREAD_ONCE_INIT;

static void jl_load(void)
{
    jl.lib = kf_rt_dlopen("KF_LIBNVJITLINK", "libnvJitLink.so", true, jl.why, sizeof jl.why);
    if (!jl.lib) return;
    bool ok = true;
#define X(n, p) ok = ok && kf_rt_dlsym(jl.lib, #n, (void **)&jl.n, "nvJitLink", jl.why, sizeof jl.why);
    JIT_FUNCS(X)
#undef X
    if (!ok) {
        dlclose(jl.lib);
        jl.lib = NULL;
        return;
    }
    *(void **)&jl.nvJitLinkVersion = dlsym(jl.lib, "nvJitLinkVersion");
}

/* nvJitLinkResult's name (nvJitLink.h of CUDA 13; a newer code by number). */
static const char *result_name(nvJitLinkResult r)
{
    static const char *const names[] = {"NVJITLINK_SUCCESS", "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
                                        "NVJITLINK_ERROR_MISSING_ARCH", "NVJITLINK_ERROR_INVALID_INPUT",
                                        "NVJITLINK_ERROR_PTX_COMPILE", "NVJITLINK_ERROR_NVVM_COMPILE",
                                        "NVJITLINK_ERROR_INTERNAL", "NVJITLINK_ERROR_THREADPOOL",
                                        "NVJITLINK_ERROR_UNRECOGNIZED_INPUT", "NVJITLINK_ERROR_FINALIZE",
                                        "NVJITLINK_ERROR_NULL_INPUT", "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
                                        "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE", "NVJITLINK_ERROR_ARCH_MISMATCH",
                                        "NVJITLINK_ERROR_OUTDATED_LIBRARY", "NVJITLINK_ERROR_MISSING_FATBIN",
                                        "NVJITLINK_ERROR_UNRECOGNIZED_ARCH", "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
                                        "NVJITLINK_ERROR_LTO_NOT_ENABLED"};
    return r >= 0 && r < (int)(sizeof names / sizeof names[0]) ? names[r] : "nvJitLink error";
}

#define JIT_CHECK(call)                                                                            \
    do {                                                                                           \
        nvJitLinkResult r_ = jl.call;                                                              \
        if (r_ != 0) {                                                                             \
            st = kf_error_set(err, r_ == PTX_COMPILE_ERROR ? KF_ERR_SOURCE : KF_ERR_DEVICE,         \
                              "%.*s failed: %s (%d) (%s:%d)", (int)strcspn(#call, "("), #call,      \
                              result_name(r_), r_, __FILE__, __LINE__);                            \
            goto cleanup;                                                                          \
        }                                                                                          \
    } while (0)

/* nvJitLink's error log into err->log (best effort). */
static void keep_log(nvJitLinkHandle h, kf_error *err)
{
    size_t n = 0;
    if (!err || jl.nvJitLinkGetErrorLogSize(h, &n) != 0 || n == 0) return;
    char *log = malloc(n + 1);
    if (log && jl.nvJitLinkGetErrorLog(h, log) == 0) {
        log[n] = 0;
        free(err->log);
        err->log = log;
        return;
    }
    free(log);
}

int kf_nvjitlink_version(void)
{
    pthread_once(&jl_once, jl_load);
    unsigned major = 0, minor = 0;
    if (!jl.lib || !jl.nvJitLinkVersion || jl.nvJitLinkVersion(&major, &minor) != 0) return 0;
    return (int)(major * 1000 + minor * 10);
}

kf_status kf_nvjitlink_ptx(const char *ptx, uint32_t arch, bool lineinfo, void **cubin, size_t *len, kf_error *err)
{
    *cubin = NULL;
    *len = 0;
    pthread_once(&jl_once, jl_load);
    if (!jl.lib)
        return kf_error_set(err, KF_ERR_DEVICE,
                            "nvJitLink is not available (needed to link a cubin): %s. Install the CUDA toolkit "
                            "(12 or later), set CUDA_HOME or KF_LIBNVJITLINK", jl.why);
    if (arch < 50 || arch > 999) return kf_error_set(err, KF_ERR_USAGE, "unsupported GPU arch sm_%u", arch);
    char archopt[32];
    snprintf(archopt, sizeof archopt, "-arch=sm_%u", arch);
    const char *opts[] = {archopt, "-lineinfo"};
    nvJitLinkHandle h = NULL;
    kf_status st = KF_OK;
    void *out = NULL;
    size_t n = 0;
    JIT_CHECK(nvJitLinkCreate(&h, lineinfo ? 2 : 1, opts));
    JIT_CHECK(nvJitLinkAddData(h, INPUT_PTX, ptx, strlen(ptx) + 1, "kernel.ptx"));
    JIT_CHECK(nvJitLinkComplete(h));
    JIT_CHECK(nvJitLinkGetLinkedCubinSize(h, &n));
    if (!(out = malloc(n ? n : 1))) {
        st = kf_error_set(err, KF_ERR_NOMEM, "out of memory holding a cubin of %zu bytes", n);
        goto cleanup;
    }
    JIT_CHECK(nvJitLinkGetLinkedCubin(h, out));
    *cubin = out;
    *len = n;
    out = NULL;
cleanup:
    if (st != KF_OK && h) keep_log(h, err);
    free(out);
    if (h) jl.nvJitLinkDestroy(&h);
    return st;
}

int kf_ptx_compiler(void)
{
    const char *e = getenv("KFORGE_JIT");
    int v = kf_nvjitlink_version();
    if (e && *e) return !strcmp(e, "driver") ? 0 : !strcmp(e, "nvjitlink") ? (v ? v : 1) : -1;
    return v && v >= kf_cu_driver_version() ? v : 0;
}
