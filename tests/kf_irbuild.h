/* A tiny builder of core IR kernels by hand, for back-end tests that must
 * not depend on the front end (header-only; fixed capacities). */
#ifndef KF_IRBUILD_H
#define KF_IRBUILD_H

#include <string.h>

#include "../ir/passes.h"

#define KB_MAXV 2048
#define KB_MAXI 4096

typedef struct {
    kf_module m;
    kf_ir_kernel k;
    kf_ir_value vals[KB_MAXV];
    kf_ir_ins ins[KB_MAXI];
    kf_ir_param params[64];
    kf_ir_array arrays[8];
    uint32_t line;   /* source line given to the next instructions */
} kb;

static inline void kb_init(kb *b, const char *name, uint32_t bx, uint32_t by, uint32_t bz)
{
    memset(b, 0, sizeof *b);
    b->line = 1;
    b->m.file = "t.kf";
    b->m.kernels = &b->k;
    b->m.nkernels = 1;
    b->k.name = name;
    b->k.loc = (kf_loc){"t.kf", 1, 1};
    b->k.vals = b->vals;
    b->k.nvals = 1;
    b->k.ins = b->ins;
    b->k.params = b->params;
    b->k.arrays = b->arrays;
    b->k.sched.block[0] = bx;
    b->k.sched.block[1] = by;
    b->k.sched.block[2] = bz;
}

static inline kf_loc kb_loc(kb *b) { return (kf_loc){"t.kf", b->line, 5}; }

static inline kf_val kb_val(kb *b, kf_type t, const char *name)
{
    kf_val v = b->k.nvals++;
    b->vals[v] = (kf_ir_value){t, name, kb_loc(b)};
    return v;
}

static inline uint32_t kb_ins(kb *b, kf_ir_op op, unsigned sub, kf_type t, kf_val dst, kf_val a0, kf_val a1,
                              kf_val a2, uint64_t imm)
{
    uint32_t i = b->k.nins++;
    b->ins[i] = (kf_ir_ins){(uint16_t)op, (uint16_t)sub, t, dst, {a0, a1, a2, 0}, imm, kb_loc(b)};
    return i;
}

static inline void kb_mark(kb *b, kf_ir_op op) { kb_ins(b, op, 0, kf_type_void(), 0, 0, 0, 0, 0); }

static inline kf_val kb_param(kb *b, const char *name, kf_type t)
{
    uint32_t p = b->k.nparams++;
    b->params[p] = (kf_ir_param){name, t, kb_loc(b), kf_type_elem_bytes(t)};
    kf_val v = kb_val(b, t, name);
    kb_ins(b, KF_IR_PARAM, 0, t, v, 0, 0, 0, p);
    return v;
}

static inline kf_type kb_buf(kf_scalar s, unsigned lanes, bool mut)
{
    return (kf_type){KF_TK_BUFFER, (uint8_t)s, (uint8_t)lanes, mut ? KF_TF_MUT : 0, 0};
}

static inline kf_val kb_const(kb *b, kf_type t, uint64_t bits)
{
    kf_val v = kb_val(b, t, NULL);
    kb_ins(b, KF_IR_CONST, 0, t, v, 0, 0, 0, bits);
    return v;
}

static inline kf_val kb_u32(kb *b, uint32_t x) { return kb_const(b, kf_type_scalar(KF_S_U32), x); }

static inline kf_val kb_sreg(kb *b, kf_ir_sreg r)
{
    kf_val v = kb_val(b, kf_type_scalar(KF_S_U32), NULL);
    kb_ins(b, KF_IR_SREG, 0, kf_type_scalar(KF_S_U32), v, 0, 0, 0, r);
    return v;
}

/* dst = a op c (dst a new temp, or `into` when non-zero) */
static inline kf_val kb_bin(kb *b, kf_op op, kf_val a, kf_val c, kf_val into)
{
    kf_type t = b->vals[a].type;
    kf_val v = into ? into : kb_val(b, t, NULL);
    kb_ins(b, KF_IR_BINOP, op, t, v, a, c, 0, 0);
    return v;
}

static inline kf_val kb_cmp(kb *b, kf_op op, kf_val a, kf_val c)
{
    kf_val v = kb_val(b, kf_type_scalar(KF_S_BOOL), NULL);
    kb_ins(b, KF_IR_CMP, op, b->vals[a].type, v, a, c, 0, 0);
    return v;
}

static inline kf_val kb_cvt(kb *b, kf_val a, kf_type to)
{
    kf_val v = kb_val(b, to, NULL);
    kb_ins(b, KF_IR_CVT, 0, to, v, a, 0, 0, 0);
    return v;
}

static inline kf_val kb_load(kb *b, kf_val buf, kf_val idx)
{
    kf_type et = kf_type_vector((kf_scalar)b->vals[buf].type.scalar, b->vals[buf].type.lanes);
    kf_val v = kb_val(b, et, NULL);
    kb_ins(b, KF_IR_LOAD, 0, et, v, buf, idx, 0, 0);
    return v;
}

static inline void kb_store(kb *b, kf_val buf, kf_val idx, kf_val x)
{
    kb_ins(b, KF_IR_STORE, 0, b->vals[x].type, 0, buf, idx, x, 0);
}

static inline kf_val kb_mov(kb *b, kf_val dst, kf_val src)
{
    kb_ins(b, KF_IR_MOV, 0, b->vals[dst].type, dst, src, 0, 0, 0);
    return dst;
}

static inline kf_val kb_math(kb *b, kf_builtin f, kf_type t, kf_val a0, kf_val a1, kf_val a2)
{
    kf_val v = kb_val(b, t, NULL);
    kb_ins(b, KF_IR_MATH, f, t, v, a0, a1, a2, 0);
    return v;
}

/* global_id.x */
static inline kf_val kb_gid(kb *b, const char *name)
{
    kf_val t = kb_bin(b, KF_OP_MUL, kb_sreg(b, KF_SR_CTAID_X), kb_sreg(b, KF_SR_NTID_X), 0);
    kf_val i = kb_val(b, kf_type_scalar(KF_S_U32), name);
    kb_ins(b, KF_IR_BINOP, KF_OP_ADD, kf_type_scalar(KF_S_U32), i, t, kb_sreg(b, KF_SR_TID_X), 0, 0);
    return i;
}

#endif
