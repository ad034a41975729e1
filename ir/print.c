/* Placeholder: IR printer. */
#include "ir.h"
void kf_ir_print(kf_buf *out, const kf_ir_kernel *k) { kf_buf_printf(out, "kernel %s\n", k->name); }
