/* NVRTC through dlopen: CUDA-C text to PTX for compute_<arch>. The library
 * is found once per process (runtime/dl.c; $KF_LIBNVRTC forces a path) and
 * its entry points live in one table filled from an X-macro list. Every
 * NVRTC call goes through NVRTC_CHECK, which records the API name, the
 * error name and number, __FILE__:__LINE__ and the program log, then jumps
 * to cleanup (STYLE.md 8); the version is asked until NVRTC answers, and a
 * compile needs it. Reading the log is best effort (a compile does not fail
 * for want of its log). Works without a GPU or a driver. */
#include "nvrtc.h"
#include "rt_impl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#ifndef KF_CUDA_HOME
#define KF_CUDA_HOME "/usr/local/cuda"
#endif

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
enum { COMPILATION_ERROR = 6 };   /* NVRTC_ERROR_COMPILATION: the source's own error */

/* X(name, return, params) */
#define NVRTC_FUNCS(X)                                                                          \
    X(nvrtcVersion, nvrtcResult, (int *, int *))                                                \
    X(nvrtcGetErrorString, const char *, (nvrtcResult))                                         \
    X(nvrtcCreateProgram, nvrtcResult,                                                          \
      (nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *)) \
    X(nvrtcDestroyProgram, nvrtcResult, (nvrtcProgram *))                                       \
    X(nvrtcCompileProgram, nvrtcResult, (nvrtcProgram, int, const char *const *))               \
    X(nvrtcGetPTXSize, nvrtcResult, (nvrtcProgram, size_t *))                                   \
    X(nvrtcGetPTX, nvrtcResult, (nvrtcProgram, char *))                                         \
    X(nvrtcGetProgramLogSize, nvrtcResult, (nvrtcProgram, size_t *))                            \
    X(nvrtcGetProgramLog, nvrtcResult, (nvrtcProgram, char *))

static struct {
#define X(n, r, p) r(*n) p;
    NVRTC_FUNCS(X)
#undef X
    void *lib;
    int version;      /* 0 until nvrtcVersion has answered */
    char why[1024];   /* why loading failed */
} nv;

static pthread_once_t nv_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;

static void nv_load(void)
{
    nv.lib = kf_rt_dlopen("KF_LIBNVRTC", "libnvrtc.so", true, nv.why, sizeof nv.why);
    if (!nv.lib && !getenv("KF_LIBNVRTC")) {
        static const char *const fallback[] = {"libnvrtc.so.13", "libnvrtc.so.12"};
        for (int i = 0; i < 2 && !nv.lib; i++) nv.lib = dlopen(fallback[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (!nv.lib) return;
    bool ok = true;
#define X(n, r, p) ok = ok && kf_rt_dlsym(nv.lib, #n, (void **)&nv.n, "NVRTC", nv.why, sizeof nv.why);
    NVRTC_FUNCS(X)
#undef X
    if (!ok) {
        dlclose(nv.lib);
        nv.lib = NULL;
    }
}

/* api: the function's name, maybe followed by the call's arguments. */
static kf_status nv_fail(kf_error *err, const char *api, nvrtcResult r, const char *file, int line)
{
    return kf_error_set(err, KF_ERR_DEVICE, "%.*s failed: %s (%d) (%s:%d)", (int)strcspn(api, "("), api,
                        nv.nvrtcGetErrorString(r), (int)r, file, line);
}

/* Asks NVRTC its version (a part of every CUDA-C cache key) until it has
 * answered once; *version is 0 while it does not. */
static nvrtcResult query_version(int *version)
{
    int major = 0, minor = 0;
    nvrtcResult r = 0;
    pthread_mutex_lock(&nv_lock);
    if (!nv.version && (r = nv.nvrtcVersion(&major, &minor)) == 0) nv.version = major * 1000 + minor * 10;
    *version = nv.version;
    pthread_mutex_unlock(&nv_lock);
    return r;
}

static kf_status nv_ready(kf_error *err)
{
    pthread_once(&nv_once, nv_load);
    if (!nv.lib)
        return kf_error_set(err, KF_ERR_DEVICE,
                            "NVRTC is not available (needed to compile CUDA-C): %s. Install the CUDA toolkit, "
                            "set CUDA_HOME, or use the ptx backend", nv.why);
    int v;
    nvrtcResult r = query_version(&v);
    return r == 0 ? KF_OK : nv_fail(err, "nvrtcVersion", r, __FILE__, __LINE__);
}

int kf_nvrtc_version(void)
{
    int v = 0;
    pthread_once(&nv_once, nv_load);
    if (nv.lib) query_version(&v);
    return v;
}

/* On failure: records the call, the error and the location, then cleans up. */
#define NVRTC_CHECK(call)                                                         \
    do {                                                                          \
        nvrtcResult r_ = nv.call;                                                 \
        if (r_ != 0) {                                                            \
            st = nv_fail(err, #call, r_, __FILE__, __LINE__);                     \
            goto cleanup;                                                         \
        }                                                                         \
    } while (0)

static char *program_log(nvrtcProgram prog)
{
    size_t n = 0;
    if (nv.nvrtcGetProgramLogSize(prog, &n) != 0 || n == 0) return NULL;
    char *log = malloc(n + 1);
    if (log && nv.nvrtcGetProgramLog(prog, log) != 0) {
        free(log);
        return NULL;
    }
    if (log) log[n] = 0;
    return log;
}

static char *dup_heap(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

kf_status kf_nvrtc_compile(const char *src, const char *name, uint32_t arch, bool lineinfo,
                           char **ptx, char **log, kf_error *err)
{
    *ptx = NULL;
    if (log) *log = NULL;
    kf_status st = nv_ready(err);
    if (st != KF_OK) return st;
    if (arch < 50 || arch > 999)
        return kf_error_set(err, KF_ERR_USAGE, "unsupported GPU arch sm_%u for NVRTC", arch);
    char archopt[64], incopt[4200];
    const char *opts[4];
    int nopts = 0;
    snprintf(archopt, sizeof archopt, "--gpu-architecture=compute_%u", arch);
    opts[nopts++] = archopt;
    if (lineinfo) opts[nopts++] = "--generate-line-info";
    const char *home = getenv("CUDA_HOME");
    struct stat sb;
    snprintf(incopt, sizeof incopt, "%s/include", home && *home ? home : KF_CUDA_HOME);
    if (stat(incopt, &sb) == 0) {
        snprintf(incopt, sizeof incopt, "-I%s/include", home && *home ? home : KF_CUDA_HOME);
        opts[nopts++] = incopt;
    }
    nvrtcProgram prog = NULL;
    char *text = NULL, *plog = NULL;
    size_t n = 0;
    NVRTC_CHECK(nvrtcCreateProgram(&prog, src, name ? name : "kernel.cu", 0, NULL, NULL));
    nvrtcResult cr = nv.nvrtcCompileProgram(prog, nopts, opts);
    plog = program_log(prog);
    if (cr != 0) {
        /* the source does not compile: its first error line says where (the
         * whole log follows in err->log) */
        const char *first = plog ? strstr(plog, ": error") : NULL;
        while (first && first > plog && first[-1] != '\n') first--;
        st = nv_fail(err, "nvrtcCompileProgram", cr, __FILE__, __LINE__);
        if (cr == COMPILATION_ERROR) st = kf_error_restatus(err, KF_ERR_SOURCE);
        if (first && err) {
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof err->msg - used, ": %.*s", (int)strcspn(first, "\n"), first);
        }
        goto cleanup;
    }
    NVRTC_CHECK(nvrtcGetPTXSize(prog, &n));
    text = malloc(n + 1);
    if (!text) {
        st = kf_error_set(err, KF_ERR_NOMEM, "out of memory holding %zu bytes of PTX", n);
        goto cleanup;
    }
    NVRTC_CHECK(nvrtcGetPTX(prog, text));
    text[n] = 0;
    *ptx = text;
    text = NULL;
cleanup:
    if (st != KF_OK && err && plog) {
        free(err->log);
        err->log = dup_heap(plog);
    }
    if (log) *log = plog;
    else free(plog);
    free(text);
    if (prog) nv.nvrtcDestroyProgram(&prog);
    return st;
}
