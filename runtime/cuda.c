/* The CUDA driver, loaded at run time: libcuda.so.1 is opened once per
 * process with dlopen ($KF_LIBCUDA forces a path, which the no-driver tests
 * use), every entry point of cuda_drv.h's list is resolved into the table
 * kf_cu, and cuInit runs. Nothing links against the driver, so machines
 * without one build and run everything that does not need a GPU. */
#include "cuda_drv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

kf_cu_table kf_cu;

static struct {
    void *lib;
    CUresult init;       /* cuInit's result */
    int version;
    char why[1024];
} drv;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

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
    return true;
}

static void drv_load(void)
{
    drv.lib = kf_rt_dlopen("KF_LIBCUDA", "libcuda.so.1", false, drv.why, sizeof drv.why);
    if (!drv.lib) return;
    if (!resolve()) {
        dlclose(drv.lib);
        drv.lib = NULL;
        return;
    }
    drv.init = kf_cu.Init(0);
    kf_cu.DriverGetVersion(&drv.version);
}

kf_status kf_cu_load(kf_error *err)
{
    pthread_once(&drv_once, drv_load);
    if (!drv.lib)
        return kf_error_set(err, KF_ERR_DEVICE,
                            "no CUDA driver: cannot load libcuda.so.1 (%s). The cuda and ptx backends need an "
                            "NVIDIA GPU and its driver; --backend cpu works without", drv.why);
    if (drv.init == CUDA_ERROR_NO_DEVICE)
        return kf_error_set(err, KF_ERR_DEVICE, "no CUDA GPU found (cuInit: CUDA_ERROR_NO_DEVICE); --backend cpu works without");
    if (drv.init != CUDA_SUCCESS) return kf_cu_fail(err, "cuInit(0)", drv.init, __FILE__, __LINE__);
    return KF_OK;
}

int kf_cu_driver_version(void)
{
    pthread_once(&drv_once, drv_load);
    return drv.lib ? drv.version : 0;
}

kf_status kf_cu_fail(kf_error *err, const char *api, CUresult r, const char *file, int line)
{
    const char *name = NULL, *str = NULL;
    if (kf_cu.GetErrorName) kf_cu.GetErrorName(r, &name);
    if (kf_cu.GetErrorString) kf_cu.GetErrorString(r, &str);
    kf_status st = (r == 700 || r == 702 || r == 715 || r == 716 || r == 719) ? KF_ERR_RUNTIME
                                                                                          : KF_ERR_DEVICE;
    return kf_error_set(err, st, "%s failed: %s (%d): %s (%s:%d)", api, name ? name : "CUDA_ERROR_UNKNOWN", (int)r,
                        str ? str : "unknown error", file, line);
}

kf_status kf_cuda_device_count(int *count, int *driver_version, kf_error *err)
{
    *count = 0;
    *driver_version = 0;
    pthread_once(&drv_once, drv_load);
    kf_status st = kf_cu_load(err);
    *driver_version = kf_cu_driver_version();
    if (st != KF_OK) return drv.lib && drv.init == CUDA_ERROR_NO_DEVICE ? KF_OK : st;
    CUresult r = kf_cu.DeviceGetCount(count);
    if (r != CUDA_SUCCESS) return kf_cu_fail(err, "cuDeviceGetCount", r, __FILE__, __LINE__);
    return KF_OK;
}
