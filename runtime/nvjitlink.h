/* nvJitLink, loaded with dlopen (no link-time dependency): PTX linked into
 * a cubin for sm_<arch> with no GPU and no driver (kf_emit's
 * KF_TARGET_CUBIN, `kforge emit --target cubin`). */
#ifndef KF_NVJITLINK_H
#define KF_NVJITLINK_H

#include "../ir/base.h"

/* Links NUL-terminated `ptx` for sm_<arch> (with line info when asked) (80..90, the "a" variants not
 * included) into a new heap cubin (*cubin, *len; free() it). nvJitLink
 * missing is KF_ERR_DEVICE saying where it was looked for
 * ($KF_LIBNVJITLINK forces a path); PTX that does not compile
 * (NVJITLINK_ERROR_PTX_COMPILE) is KF_ERR_SOURCE, any other failure
 * KF_ERR_DEVICE, with nvJitLink's log in err->log. */
kf_status kf_nvjitlink_ptx(const char *ptx, uint32_t arch, bool lineinfo, void **cubin, size_t *len, kf_error *err);

/* nvJitLink's version as CUDA encodes versions (major * 1000 + minor * 10,
 * as cuDriverGetVersion does); 0 when it cannot be loaded or cannot say
 * (before 12.3). */
int kf_nvjitlink_version(void);

/* Which compiler turns PTX into the cubin on both GPU paths: nvJitLink
 * when it loads and is at least as new as the driver, else the driver's
 * JIT; $KFORGE_JIT=driver or nvjitlink chooses. The H200's driver JIT
 * (580.159.04) folded f32 adds of two constants, which NVVM leaves it
 * after forwarding a store, to the wrong neighbour of a tie: -24683392.0 +
 * 1.0 gave -24683390 (difftest seed 2523 program 987; 72 of 300 ties in a
 * sweep), where nvJitLink 13.0 folds every one right. nvJitLink's version
 * when it is the one (1 when asked for but missing: the link then says
 * so), 0 for the driver's JIT, -1 for a $KFORGE_JIT it does not know. */
int kf_ptx_compiler(void);

#endif
