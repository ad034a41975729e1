/* The CUDA driver, loaded at run time: libcuda.so.1 is opened once per
 * process with dlopen ($KF_LIBCUDA forces a path, which the no-driver tests
 * use), every entry point of cuda_drv.h's lists is resolved into the
 * table kf_cu (the optional ones left NULL where the driver lacks them),
 * and cuInit and cuDriverGetVersion run (again at the next load while they
 * fail, so a passing failure does not disable the driver for the process). Nothing links against the driver, so machines without one
 * build and run everything that does not need a GPU. */
#include "cuda_drv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

kf_cu_table kf_cu;

static struct {
    void *lib;
    CUresult init;       /* cuInit's last result */
    bool ready;          /* cuInit and cuDriverGetVersion have succeeded */
    int version;
    char why[1024];
} drv;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t drv_lock = PTHREAD_MUTEX_INITIALIZER;

static bool resolve(void)
{
#define X(f, sym, r, p)                                                                      \
    if (!(*(void **)&kf_cu.f = dlsym(drv.lib, sym))) {                                       \
        if (strcmp(sym, "cuEventElapsedTime_v2") == 0)                                       \
            *(void **)&kf_cu.f = dlsym(drv.lib, "cuEventElapsedTime");                       \
        if (!kf_cu.f) {                                                                      \
            snprintf(drv.why, sizeof drv.why, "the CUDA driver lacks %s (driver too old?)", sym); \
            return false;                                                                    \
        }                                                                                    \
    }
    KF_CU_FUNCS(X)
#undef X
#define X(f, sym, r, p) *(void **)&kf_cu.f = dlsym(drv.lib, sym);
    KF_CU_OPTIONAL(X)
#undef X
    return true;
}

static void drv_load(void)
{
    drv.lib = kf_rt_dlopen("KF_LIBCUDA", "libcuda.so.1", false, drv.why, sizeof drv.why);
    if (!drv.lib) return;
    if (!resolve()) {
        dlclose(drv.lib);
        drv.lib = NULL;
    }
}

/* cuInit and the driver's version (a part of every cache key), until both
 * have worked once. */
static kf_status drv_init(kf_error *err)
{
    kf_status st = KF_OK;
    pthread_mutex_lock(&drv_lock);
    if (!drv.ready) {
        drv.init = kf_cu.Init(0);
        CUresult r = drv.init;
        if (r == CUDA_SUCCESS && (r = kf_cu.DriverGetVersion(&drv.version)) != CUDA_SUCCESS)
            st = kf_cu_fail(err, "cuDriverGetVersion", r, __FILE__, __LINE__);
        else if (r == CUDA_ERROR_NO_DEVICE)
            st = kf_error_set(err, KF_ERR_DEVICE, "no CUDA GPU found (cuInit: CUDA_ERROR_NO_DEVICE); --backend cpu works without");
        else if (r != CUDA_SUCCESS)
            st = kf_cu_fail(err, "cuInit", r, __FILE__, __LINE__);
        drv.ready = st == KF_OK;
    }
    pthread_mutex_unlock(&drv_lock);
    return st;
}

kf_status kf_cu_load(kf_error *err)
{
    pthread_once(&drv_once, drv_load);
    if (!drv.lib)
        return kf_error_set(err, KF_ERR_DEVICE,
                            "no CUDA driver: cannot load libcuda.so.1 (%s). The cuda and ptx backends need an "
                            "NVIDIA GPU and its driver; --backend cpu works without", drv.why);
    return drv_init(err);
}

int kf_cu_driver_version(void)
{
    pthread_once(&drv_once, drv_load);
    pthread_mutex_lock(&drv_lock);
    int v = drv.lib && drv.ready ? drv.version : 0;
    pthread_mutex_unlock(&drv_lock);
    return v;
}

/* The driver's name of a call: `api` is "cu" followed by a kf_cu field and
 * maybe its arguments (CU_CHECK's text) or already a name; the table's
 * symbol without its ABI suffix ("cuMemAlloc", not "cuMemAlloc_v2"). */
static void api_name(const char *api, char *out, size_t n)
{
    static const char *const fields[] = {
#define X(f, sym, r, p) #f, sym,
        KF_CU_FUNCS(X) KF_CU_OPTIONAL(X)
#undef X
    };
    size_t len = strcspn(api, "( ");
    snprintf(out, n, "%.*s", (int)len, api);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i += 2)
        if (len > 2 && strlen(fields[i]) == len - 2 && !strncmp(api + 2, fields[i], len - 2))
            snprintf(out, n, "%s", fields[i + 1]);
    char *v = strrchr(out, '_');   /* "_v2", "_v3": the ABI's, not the call's name */
    if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' && !v[3]) *v = 0;
}

kf_status kf_cu_fail(kf_error *err, const char *api, CUresult r, const char *file, int line)
{
    const char *name = NULL, *str = NULL;
    if (kf_cu.GetErrorName && kf_cu.GetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
    if (kf_cu.GetErrorString && kf_cu.GetErrorString(r, &str) != CUDA_SUCCESS) str = NULL;
    kf_status st = (r == 700 || r == 702 || r == 715 || r == 716 || r == 719) ? KF_ERR_RUNTIME
                   : r == 218 /* CUDA_ERROR_INVALID_PTX: the PTX's own error */ ? KF_ERR_SOURCE
                                                                               : KF_ERR_DEVICE;
    char call[96];
    api_name(api, call, sizeof call);
    return kf_error_set(err, st, "%s failed: %s (%d): %s (%s:%d)", call, name ? name : "CUDA_ERROR_UNKNOWN", (int)r,
                        str ? str : "unknown error", file, line);
}

kf_status kf_cuda_device_count(int *count, int *driver_version, kf_error *err)
{
    KF_NEED(count, err, "count");
    KF_NEED(driver_version, err, "driver_version");
    *count = 0;
    *driver_version = 0;
    kf_status st = kf_cu_load(err);
    *driver_version = kf_cu_driver_version();
    if (st != KF_OK) return drv.lib && drv.init == CUDA_ERROR_NO_DEVICE ? KF_OK : st;
    CUresult r = kf_cu.DeviceGetCount(count);
    if (r != CUDA_SUCCESS) return kf_cu_fail(err, "cuDeviceGetCount", r, __FILE__, __LINE__);
    return KF_OK;
}
