/* The public view of a compiled module (include/kforge.h): its
 * diagnostics, its kernels, their parameters in binding order and their
 * schedules. Accessors only: the module owns everything they return, and
 * nothing of the AST or the IR passes through them. */
#include "../ir/module.h"

#include <string.h>

const char *kf_module_file(const kf_module *m) { return m->file; }
uint32_t kf_module_error_count(const kf_module *m) { return m->diags.nerrors; }
uint32_t kf_module_diag_count(const kf_module *m) { return (uint32_t)m->diags.items.len; }
const char *kf_module_diagnostics(const kf_module *m) { return m->rendered ? m->rendered : ""; }

bool kf_module_diag(const kf_module *m, uint32_t i, kf_diagnostic *out)
{
    if (i >= m->diags.items.len) return false;
    const kf_diag *d = &m->diags.items.data[i];
    *out = (kf_diagnostic){d->kind, d->loc, d->msg};
    return true;
}

uint32_t kf_module_kernel_count(const kf_module *m) { return m->nkernels; }

const kf_kernel *kf_module_kernel_at(const kf_module *m, uint32_t i)
{
    return i < m->nkernels ? &m->kernels[i] : NULL;
}

const char *kf_kernel_name(const kf_kernel *k) { return k->name; }
kf_loc kf_kernel_loc(const kf_kernel *k) { return k->loc; }
uint32_t kf_kernel_param_count(const kf_kernel *k) { return k->nparams; }

const kf_param *kf_kernel_param(const kf_kernel *k, uint32_t i)
{
    return i < k->nparams ? &k->params[i] : NULL;
}

int kf_kernel_param_index(const kf_kernel *k, const char *name)
{
    for (uint32_t i = 0; i < k->nparams; i++)
        if (!strcmp(k->params[i].name, name)) return (int)i;
    return -1;
}

void kf_kernel_schedule(const kf_kernel *k, kf_schedule_info *out)
{
    *out = (kf_schedule_info){{k->sched.block[0], k->sched.block[1], k->sched.block[2]},
                              k->sched.ngrid, k->sched.shared != NULL, k->sched.loc, k->sched.min_blocks};
}
