/* Hand-built core IR for the PTX emitter tests: a tiny builder over fixed
 * arrays, so emitter rules can be tested without the front end, and a few
 * helpers to emit and inspect PTX text. Header-only, used by
 * tests/test_ptx_lowering.c and tests/test_ptxas_kernels.c. */
#ifndef KF_PTX_IR_BUILDER_H
#define KF_PTX_IR_BUILDER_H

#include "../emit/emit.h"
#include "../emit/ptxas.h"

#include <string.h>

typedef struct {
    kf_module m;
    kf_ir_kernel k;
    kf_ir_value vals[4096];
    kf_ir_ins ins[8192];
    kf_ir_param params[64];
    kf_ir_array arrays[8];
    uint32_t line;         /* location given to the next instructions */
} irb;

static inline void irb_init(irb *b, const char *name, const char *source)
{
    memset(b, 0, sizeof *b);
    b->m.file = "test.kf";
    b->m.source = (char *)source;
    b->m.source_len = source ? strlen(source) : 0;
    b->k.name = name;
    b->k.loc = (kf_loc){"test.kf", 1, 1};
    b->k.vals = b->vals;
    b->k.nvals = 1;
    b->k.ins = b->ins;
    b->k.params = b->params;
    b->k.arrays = b->arrays;
    b->k.sched.block[0] = 256;
    b->k.sched.block[1] = 1;
    b->k.sched.block[2] = 1;
    b->m.kernels = &b->k;
    b->m.nkernels = 1;
    b->line = 1;
}

static inline kf_val irb_val(irb *b, kf_type t, const char *name)
{
    kf_val v = b->k.nvals++;
    b->vals[v] = (kf_ir_value){t, name, {"test.kf", b->line, 1}};
    return v;
}

static inline void irb_ins(irb *b, kf_ir_op op, uint16_t sub, kf_type t, kf_val dst, kf_val a0, kf_val a1,
                           kf_val a2, uint64_t imm)
{
    b->ins[b->k.nins++] = (kf_ir_ins){(uint16_t)op, sub, t, dst, {a0, a1, a2, 0}, imm, {"test.kf", b->line, 5}};
}

/* A new value defined by op. */
static inline kf_val irb_op(irb *b, kf_ir_op op, uint16_t sub, kf_type t, kf_val a0, kf_val a1, kf_val a2,
                            uint64_t imm)
{
    kf_val d = irb_val(b, t, NULL);
    irb_ins(b, op, sub, t, d, a0, a1, a2, imm);
    return d;
}

static inline kf_val irb_const(irb *b, kf_scalar s, uint64_t bits)
{
    return irb_op(b, KF_IR_CONST, 0, kf_type_scalar(s), 0, 0, 0, bits);
}

static inline kf_type irb_buf(kf_scalar s, unsigned lanes, bool mut)
{
    return (kf_type){KF_TK_BUFFER, (uint8_t)s, (uint8_t)lanes, mut ? KF_TF_MUT : 0, 0};
}

/* Declares parameter `name` of type t and emits its PARAM. */
static inline kf_val irb_param(irb *b, const char *name, kf_type t)
{
    uint32_t i = b->k.nparams++;
    b->params[i] = (kf_ir_param){name, t, {"test.kf", 1, 1}, t.kind == KF_TK_BUFFER ? kf_type_elem_bytes(t) : 0};
    kf_val v = irb_val(b, t, name);
    irb_ins(b, KF_IR_PARAM, 0, t, v, 0, 0, 0, i);
    return v;
}

static inline uint32_t irb_array(irb *b, const char *name, kf_scalar s, unsigned lanes, uint32_t len, bool shared)
{
    uint32_t i = b->k.narrays++;
    b->arrays[i] = (kf_ir_array){name, {KF_TK_ARRAY, (uint8_t)s, (uint8_t)lanes, shared ? KF_TF_SHARED : 0, len},
                                 {"test.kf", b->line, 1}};
    return i;
}

/* Links and emits the builder's kernel; returns heap text (free()) or NULL
 * on error (diagnostics in *d). */
static inline char *irb_emit(irb *b, uint32_t arch, bool g, kf_linemap *lm, kf_diags *d)
{
    kf_emit_opts o = {arch, g, false};
    kf_buf out = {0};
    (void)kf_ir_link(&b->k);   /* as lowering does; unbalanced markers are the emitter's to report */
    kf_status st = kf_ptx_emit(&b->m, &b->k, &o, &out, lm, d);
    if (st != KF_OK) {
        kf_buf_free(&out);
        return NULL;
    }
    return kf_buf_take(&out);
}

/* Number of non-overlapping occurrences of needle in hay. */
static inline int count_of(const char *hay, const char *needle)
{
    int n = 0;
    size_t l = strlen(needle);
    for (const char *p = hay; (p = strstr(p, needle)); p += l) n++;
    return n;
}

#endif
