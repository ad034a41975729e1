/* Private to runtime/: the few NCCL types, enum values and entry points
 * kforge uses, declared here from NCCL's public API documentation (no
 * nccl.h is needed to build), and the table `kf_nccl` that runtime/nccl.c
 * fills from the X-macro list below after opening libnccl.so.2 with dlopen,
 * as runtime/cuda.c does for the driver. Every call goes through
 * NCCL_CHECK. Only a communicator over several CUDA devices needs NCCL: the
 * CPU device and a single GPU never load it. */
#ifndef KF_NCCL_H
#define KF_NCCL_H

#include "rt_impl.h"

typedef int ncclResult_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct ncclComm *ncclComm_t;

enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
    ncclUint8 = 1,
    ncclFloat16 = 6,
    ncclFloat32 = 7,
    ncclSum = 0,
};

/* X(field, symbol in libnccl, return, params); streams are CUstreams
 * (cudaStream_t is the same handle). */
#define KF_NCCL_FUNCS(X)                                                                             \
    X(GetVersion, "ncclGetVersion", ncclResult_t, (int *))                                           \
    X(GetErrorString, "ncclGetErrorString", const char *, (ncclResult_t))                            \
    X(GetLastError, "ncclGetLastError", const char *, (ncclComm_t))                                  \
    X(CommInitAll, "ncclCommInitAll", ncclResult_t, (ncclComm_t *, int, const int *))                \
    X(CommDestroy, "ncclCommDestroy", ncclResult_t, (ncclComm_t))                                    \
    X(GroupStart, "ncclGroupStart", ncclResult_t, (void))                                            \
    X(GroupEnd, "ncclGroupEnd", ncclResult_t, (void))                                                \
    X(AllReduce, "ncclAllReduce", ncclResult_t,                                                      \
      (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, void *))               \
    X(AllGather, "ncclAllGather", ncclResult_t,                                                      \
      (const void *, void *, size_t, ncclDataType_t, ncclComm_t, void *))

typedef struct {
#define X(f, sym, r, p) r(*f) p;
    KF_NCCL_FUNCS(X)
#undef X
} kf_nccl_table;

/* The NCCL table, valid after kf_nccl_load() returned KF_OK. */
extern kf_nccl_table kf_nccl;

/* Opens libnccl.so.2 ($KF_LIBNCCL forces a path) once per process and
 * resolves the table. Missing NCCL is KF_ERR_DEVICE saying what was tried
 * and that one GPU (or --tp 1) works without it. */
kf_status kf_nccl_load(kf_error *err);
/* NCCL's version (major*10000 + minor*100 + patch, as ncclGetVersion), 0 if not loaded. */
int kf_nccl_version(void);

/* Records a failed NCCL call: its name, the result's number and string,
 * NCCL's last error text, file:line. */
kf_status kf_nccl_fail(kf_error *err, const char *api, ncclResult_t r, const char *file, int line);

/* Every NCCL call: on failure sets `st` and jumps to `cleanup`. */
#define NCCL_CHECK(call)                                                     \
    do {                                                                     \
        ncclResult_t r_ = kf_nccl.call;                                      \
        if (r_ != ncclSuccess) {                                             \
            st = kf_nccl_fail(err, "nccl" #call, r_, __FILE__, __LINE__);    \
            goto cleanup;                                                    \
        }                                                                    \
    } while (0)

#endif
