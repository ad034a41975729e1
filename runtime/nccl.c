/* NCCL, loaded at run time: libnccl.so.2 is opened once per process with
 * dlopen ($KF_LIBNCCL forces a path: the tests point it at the mock NCCL or
 * at a missing file) and every entry point of nccl.h's list is resolved into
 * the table kf_nccl. Nothing links against NCCL, so machines without it
 * build and run everything but a communicator over several GPUs. */
#include "nccl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

kf_nccl_table kf_nccl;

static struct {
    void *lib;
    int version;
    char why[1024];
} lib;

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static bool resolve(void)
{
#define X(f, sym, r, p)                                                                          \
    if (!(*(void **)&kf_nccl.f = dlsym(lib.lib, sym))) {                                         \
        snprintf(lib.why, sizeof lib.why, "%s lacks %s (NCCL older than 2.13?)", "libnccl.so.2", sym); \
        return false;                                                                            \
    }
    KF_NCCL_FUNCS(X)
#undef X
    return true;
}

static void lib_load(void)
{
    lib.lib = kf_rt_dlopen("KF_LIBNCCL", "libnccl.so.2", false, lib.why, sizeof lib.why);
    if (!lib.lib) return;
    if (!resolve() || kf_nccl.GetVersion(&lib.version) != ncclSuccess) {
        if (!lib.why[0]) snprintf(lib.why, sizeof lib.why, "ncclGetVersion failed");
        dlclose(lib.lib);
        lib.lib = NULL;
        memset(&kf_nccl, 0, sizeof kf_nccl);
    }
}

kf_status kf_nccl_load(kf_error *err)
{
    pthread_once(&lib_once, lib_load);
    if (!lib.lib)
        return kf_error_set(err, KF_ERR_DEVICE,
                            "no NCCL: cannot load libnccl.so.2 (%s). A communicator over several GPUs needs NCCL "
                            "(Debian/Ubuntu: libnccl2; or set KF_LIBNCCL to its path); one GPU (--tp 1) and the "
                            "cpu backend work without", lib.why);
    return KF_OK;
}

int kf_nccl_version(void)
{
    pthread_once(&lib_once, lib_load);
    return lib.lib ? lib.version : 0;
}

kf_status kf_nccl_fail(kf_error *err, const char *api, ncclResult_t r, const char *file, int line)
{
    static const char *const names[] = {"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
                                        "ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage",
                                        "ncclRemoteError", "ncclInProgress"};
    const char *name = r >= 0 && r < (int)(sizeof names / sizeof names[0]) ? names[r] : "ncclResult";
    const char *str = kf_nccl.GetErrorString ? kf_nccl.GetErrorString(r) : NULL;
    const char *last = kf_nccl.GetLastError ? kf_nccl.GetLastError(NULL) : NULL;
    return kf_error_set(err, r == ncclInvalidArgument || r == ncclInvalidUsage ? KF_ERR_USAGE : KF_ERR_DEVICE,
                        "%.*s failed: %s (%d): %s%s%s (%s:%d)", (int)strcspn(api, "( "), api, name, (int)r,
                        str ? str : "unknown error", last && *last ? "; " : "", last ? last : "", file, line);
}
