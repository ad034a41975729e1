/* nvJitLink, loaded with dlopen (no link-time dependency): PTX linked into
 * a cubin for sm_<arch> with no GPU and no driver (kf_emit's
 * KF_TARGET_CUBIN, `kforge emit --target cubin`). */
#ifndef KF_NVJITLINK_H
#define KF_NVJITLINK_H

#include "../ir/base.h"

/* Links NUL-terminated `ptx` for sm_<arch> (with line info when asked) (80..90, the "a" variants not
 * included) into a new heap cubin (*cubin, *len; free() it). nvJitLink
 * missing is KF_ERR_DEVICE saying where it was looked for
 * ($KF_LIBNVJITLINK forces a path); a PTX error is KF_ERR_DEVICE with
 * nvJitLink's log in err->log. */
kf_status kf_nvjitlink_ptx(const char *ptx, uint32_t arch, bool lineinfo, void **cubin, size_t *len, kf_error *err);

/* nvJitLink's version as CUDA encodes versions (major * 1000 + minor * 10,
 * as cuDriverGetVersion does); 0 when it cannot be loaded or cannot say
 * (before 12.3). */
int kf_nvjitlink_version(void);

#endif
