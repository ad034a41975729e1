/* NVRTC, loaded with dlopen (no link-time dependency): CUDA-C source to PTX.
 * Usable on machines without a GPU (the nvrtc tests run in CI). */
#ifndef KF_NVRTC_H
#define KF_NVRTC_H

#include "../ir/base.h"

/* Compiles `src` for compute_<arch> (80, 86, 89, 90); `name` is the program
 * name shown in the log. On success *ptx is heap PTX text. *log (may be
 * NULL) receives the compiler log (heap) in either case. NVRTC missing or
 * failing is KF_ERR_DEVICE; an error in src (NVRTC_ERROR_COMPILATION) is
 * KF_ERR_SOURCE, its first error line in err->msg and the log in err->log. */
kf_status kf_nvrtc_compile(const char *src, const char *name, uint32_t arch, bool lineinfo,
                           char **ptx, char **log, kf_error *err);
/* NVRTC version (major*1000 + minor*10), 0 if unavailable. */
int kf_nvrtc_version(void);

#endif
