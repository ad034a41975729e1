/* Emitters over core IR: CUDA-C for NVRTC (emit/cuda_c.c) and PTX text that
 * the driver loads directly (emit/ptx.c). Both are deterministic: the same
 * module and options give byte-identical text. */
#ifndef KF_EMIT_H
#define KF_EMIT_H

#include "../ir/module.h"

typedef struct {
    uint32_t arch;       /* SM version: 80, 86, 89, 90 (default 90) */
    bool lineinfo;       /* -g: PTX .file/.loc, CUDA-C #line */
    bool pdl_trigger;    /* where kf_emit_pdl_wait: also griddepcontrol.launch_dependents
                            right after the wait (the entry's or dep_wait()'s; the next
                            PDL launch may start early) */
} kf_emit_opts;

/* Whether every kernel emitted with o waits (griddepcontrol.wait) before
 * any access to what the kernels before it write, so it may be launched as
 * a programmatic dependent (PDL) of the kernel before it: sm_90 and above
 * (griddepcontrol needs PTX ISA 7.8 and sm_90; kforge's PTX is 8.0). The
 * wait opens the body, or stands where the kernel's dep_wait() puts it
 * (kf_ir_places_dep_wait; lowering checked that every thread passes it
 * before any buffer write; the loads before it are the kernel's promise).
 * dep_trigger() is griddepcontrol.launch_dependents there; below sm_90 both
 * emit nothing. Without the PDL launch attribute the wait returns at once,
 * so semantics do not change. The runtime asks this, not the text, so a
 * cached build needs no flag. */
static inline bool kf_emit_pdl_wait(const kf_emit_opts *o)
{
    return (o->arch ? o->arch : 90) >= 90;
}

/* Maps each line of emitted text (1-based) back to the .kf location that
 * produced it (loc.line == 0: none). Lets ptxas/NVRTC errors be reported at
 * the .kf line. */
typedef struct {
    KF_VEC(kf_loc) lines;   /* lines.data[i] is the location of text line i+1 */
} kf_linemap;

/* Emits the kernel (or every kernel of the module when k is NULL) as one PTX
 * module into out. A feature the arch lacks is an error in diags at its .kf
 * location (KF_ERR_SOURCE). linemap may be NULL. */
kf_status kf_ptx_emit(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o,
                      kf_buf *out, kf_linemap *linemap, kf_diags *diags);
/* The same for self-contained CUDA-C (extern "C" __global__ entries). */
kf_status kf_cuda_emit(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o,
                       kf_buf *out, kf_linemap *linemap, kf_diags *diags);
void kf_linemap_free(kf_linemap *lm);

#endif
