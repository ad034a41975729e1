/* Private to runtime/: the few CUDA driver API types, enum values and entry
 * points kforge uses, declared here (ABI-exact, from CUDA 13's cuda.h) so
 * building needs no cuda.h. runtime/cuda.c opens libcuda.so.1 with dlopen
 * and fills one table of function pointers, `kf_cu`, from the X-macro list
 * below; every call goes through CU_CHECK. */
#ifndef KF_CUDA_DRV_H
#define KF_CUDA_DRV_H

#include "rt_impl.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlinkState_st *CUlinkState;
typedef int CUjit_option;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUkern_st *CUkernel;

/* CUDA_KERNEL_NODE_PARAMS_v2 (what cuGraph*KernelNodeGetParams/SetParams
 * _v2 take; func set, kern and ctx NULL). */
typedef struct {
    CUfunction func;
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    void **kernelParams;
    void **extra;
    CUkernel kern;
    CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;

/* CUlaunchAttribute and CUlaunchConfig (cuLaunchKernelEx): an attribute is
 * its id, padding to 8 bytes and a 64-byte value union, of which kforge
 * sets only the int of PROGRAMMATIC_STREAM_SERIALIZATION. */
typedef struct {
    int id;
    char pad[4];
    union {
        char bytes[64];
        int programmatic_stream_serialization;
    } value;
} CUlaunchAttribute;

typedef struct {
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_NOT_FOUND = 500,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_GENERATE_LINE_INFO = 13,
    CU_JIT_INPUT_CUBIN = 0,
    CU_JIT_INPUT_PTX = 1,
    CU_EVENT_DEFAULT = 0,
    CU_STREAM_NON_BLOCKING = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
};

/* X(field, symbol in libcuda, return, params) */
#define KF_CU_FUNCS(X)                                                                              \
    X(Init, "cuInit", CUresult, (unsigned))                                                         \
    X(DriverGetVersion, "cuDriverGetVersion", CUresult, (int *))                                    \
    X(GetErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))                          \
    X(GetErrorString, "cuGetErrorString", CUresult, (CUresult, const char **))                      \
    X(DeviceGetCount, "cuDeviceGetCount", CUresult, (int *))                                        \
    X(DeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                                        \
    X(DeviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))                          \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *, int, CUdevice))                 \
    X(DeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t *, CUdevice))                        \
    X(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext *, CUdevice))              \
    X(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice))                      \
    X(CtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                                      \
    X(StreamCreate, "cuStreamCreate", CUresult, (CUstream *, unsigned))                             \
    X(StreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream))                                    \
    X(StreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))                               \
    X(MemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))                                 \
    X(MemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                             \
    X(MemsetD8Async, "cuMemsetD8Async", CUresult, (CUdeviceptr, unsigned char, size_t, CUstream))   \
    X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult, (CUdeviceptr, const void *, size_t, CUstream)) \
    X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult, (void *, CUdeviceptr, size_t, CUstream))   \
    X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
    X(ModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                                             \
      (CUmodule *, const void *, unsigned, CUjit_option *, void **))                                \
    X(ModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                                         \
    X(ModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction *, CUmodule, const char *))   \
    X(FuncGetAttribute, "cuFuncGetAttribute", CUresult, (int *, int, CUfunction))                   \
    X(FuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int))                     \
    X(LaunchKernel, "cuLaunchKernel", CUresult,                                                     \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,  \
       void **, void **))                                                                           \
    X(EventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))                                \
    X(EventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                                       \
    X(EventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))                                  \
    X(EventSynchronize, "cuEventSynchronize", CUresult, (CUevent))                                  \
    X(EventElapsedTime, "cuEventElapsedTime_v2", CUresult, (float *, CUevent, CUevent))             \
    X(LinkCreate, "cuLinkCreate_v2", CUresult, (unsigned, CUjit_option *, void **, CUlinkState *))  \
    X(LinkAddData, "cuLinkAddData_v2", CUresult,                                                    \
      (CUlinkState, int, void *, size_t, const char *, unsigned, CUjit_option *, void **))          \
    X(LinkComplete, "cuLinkComplete", CUresult, (CUlinkState, void **, size_t *))                   \
    X(LinkDestroy, "cuLinkDestroy", CUresult, (CUlinkState))                                        \
    X(StreamBeginCapture, "cuStreamBeginCapture_v2", CUresult, (CUstream, int))                     \
    X(StreamEndCapture, "cuStreamEndCapture", CUresult, (CUstream, CUgraph *))                       \
    X(StreamGetCaptureInfo, "cuStreamGetCaptureInfo_v3", CUresult,                                  \
      (CUstream, int *, unsigned long long *, CUgraph *, const CUgraphNode **, const void **, size_t *)) \
    X(GraphGetNodes, "cuGraphGetNodes", CUresult, (CUgraph, CUgraphNode *, size_t *))                \
    X(GraphKernelNodeGetParams, "cuGraphKernelNodeGetParams_v2", CUresult,                          \
      (CUgraphNode, CUDA_KERNEL_NODE_PARAMS *))                                                      \
    X(GraphInstantiate, "cuGraphInstantiateWithFlags", CUresult, (CUgraphExec *, CUgraph, unsigned long long)) \
    X(GraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2", CUresult,                  \
      (CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *))                                   \
    X(GraphLaunch, "cuGraphLaunch", CUresult, (CUgraphExec, CUstream))                               \
    X(GraphExecDestroy, "cuGraphExecDestroy", CUresult, (CUgraphExec))                               \
    X(GraphDestroy, "cuGraphDestroy", CUresult, (CUgraph))

/* Entry points a driver may lack: NULL in kf_cu then, and the runtime
 * does without (cuLaunchKernelEx: CUDA 12.0; without it no PDL). */
#define KF_CU_OPTIONAL(X)                                                                           \
    X(LaunchKernelEx, "cuLaunchKernelEx", CUresult, (const CUlaunchConfig *, CUfunction, void **, void **))

typedef struct {
#define X(f, sym, r, p) r(*f) p;
    KF_CU_FUNCS(X)
    KF_CU_OPTIONAL(X)
#undef X
} kf_cu_table;

/* The driver table, valid after kf_cu_load() returned KF_OK. */
extern kf_cu_table kf_cu;

/* Opens libcuda.so.1 ($KF_LIBCUDA forces a path) once per process and runs
 * cuInit and cuDriverGetVersion until they have succeeded once. Missing
 * driver or no GPU is KF_ERR_DEVICE with a clear message. */
kf_status kf_cu_load(kf_error *err);
int kf_cu_driver_version(void);

/* Records a failed driver call: the API by its driver name (api is "cu" +
 * a kf_cu field, possibly followed by the call's arguments, as CU_CHECK
 * passes it), the error name, number and string, file:line. */
kf_status kf_cu_fail(kf_error *err, const char *api, CUresult r, const char *file, int line);

/* Every driver call: on failure sets `st` and jumps to `cleanup`. */
#define CU_CHECK(call)                                                  \
    do {                                                                \
        CUresult r_ = kf_cu.call;                                       \
        if (r_ != CUDA_SUCCESS) {                                       \
            st = kf_cu_fail(err, "cu" #call, r_, __FILE__, __LINE__);   \
            goto cleanup;                                               \
        }                                                               \
    } while (0)

#endif
