/* Running ptxas over emitted PTX (kforge emit --verify / --stats, and the
 * ptxas tests): finds ptxas on PATH or under $CUDA_HOME/bin or
 * /usr/local/cuda/bin, assembles, and maps ptxas errors back to .kf lines
 * through the emitter's line map. No CUDA header is involved. */
#ifndef KF_PTXAS_H
#define KF_PTXAS_H

#include "emit.h"

typedef struct {
    char kernel[128];
    uint32_t registers;
    uint32_t shared_bytes;
    uint32_t spill_stores, spill_loads;  /* bytes */
    uint32_t stack_bytes;
} kf_ptxas_kernel_stats;

typedef struct {
    KF_VEC(kf_ptxas_kernel_stats) kernels;
    char *log;              /* ptxas stdout+stderr (heap) */
    uint32_t nwarnings;
} kf_ptxas_result;

/* Assembles ptx for sm_<arch>. ptxas errors become diags at the .kf location
 * the line map gives (or at the PTX line when it gives none), status
 * KF_ERR_SOURCE; ptxas missing is KF_ERR_DEVICE in err. */
kf_status kf_ptxas_run(const char *ptx, uint32_t arch, const kf_linemap *lm, const char *kf_file,
                       kf_ptxas_result *res, kf_diags *diags, kf_error *err);
void kf_ptxas_result_free(kf_ptxas_result *res);

#endif
