/* Builds one hand-made kernel that uses every core-IR op on every type the
 * language has (all binops, comparisons, unary ops and math per scalar type,
 * every conversion pair, vector loads/stores of each vector shape, bitcasts,
 * atomics, shuffles, votes, shared/local/register arrays, nested loops with
 * break/continue, vector and small scalar parameters). The ptxas test
 * assembles it for sm_80 and sm_90, so any PTX the emitter can produce for
 * valid IR is checked by the real assembler. */
#ifndef KF_PTX_ALL_OPS_H
#define KF_PTX_ALL_OPS_H

#include "ptx_ir_builder.h"

#include <stdio.h>

static const kf_scalar allops_ints[] = {KF_S_I8, KF_S_U8, KF_S_I16, KF_S_U16, KF_S_I32, KF_S_U32, KF_S_I64, KF_S_U64};
static const kf_scalar allops_floats[] = {KF_S_F16, KF_S_BF16, KF_S_F32, KF_S_F64};

typedef struct {
    irb *b;
    kf_val idx;                 /* u32 thread index */
    kf_val buf[KF_S_COUNT];     /* one mutable buffer per scalar type */
    kf_val x[KF_S_COUNT];       /* a loaded value per scalar type */
} allops;

static void ao_store(allops *a, kf_scalar s, kf_val v)
{
    irb_ins(a->b, KF_IR_STORE, 0, kf_type_scalar(s), 0, a->buf[s], a->idx, v, 0);
}

static void ao_params(allops *a)
{
    static char names[KF_S_COUNT][16];
    for (int s = KF_S_BOOL; s <= KF_S_F64; s++) {
        snprintf(names[s], sizeof names[s], "b_%s", kf_scalar_names[s]);
        a->buf[s] = irb_param(a->b, names[s], irb_buf((kf_scalar)s, 1, true));
    }
    a->idx = irb_op(a->b, KF_IR_SREG, 0, kf_type_scalar(KF_S_U32), 0, 0, 0, KF_SR_TID_X);
    for (int s = KF_S_BOOL; s <= KF_S_F64; s++)
        a->x[s] = irb_op(a->b, KF_IR_LOAD, 0, kf_type_scalar((kf_scalar)s), a->buf[s], a->idx, 0, 0);
}

static void ao_int_ops(allops *a, kf_scalar s)
{
    irb *b = a->b;
    kf_type t = kf_type_scalar(s), bt = kf_type_scalar(KF_S_BOOL), u32 = kf_type_scalar(KF_S_U32);
    kf_val x = a->x[s], y = irb_const(b, s, 3);
    for (int op = KF_OP_ADD; op <= KF_OP_SHR; op++) ao_store(a, s, irb_op(b, KF_IR_BINOP, (uint16_t)op, t, x, y, 0, 0));
    for (int op = KF_OP_ADD; op <= KF_OP_SHR; op++) ao_store(a, s, irb_op(b, KF_IR_BINOP, (uint16_t)op, t, y, x, 0, 0));
    for (int op = KF_OP_EQ; op <= KF_OP_GE; op++) {
        kf_val p = irb_op(b, KF_IR_CMP, (uint16_t)op, t, x, y, 0, 0);
        b->vals[p].type = bt;
        ao_store(a, s, irb_op(b, KF_IR_SELECT, 0, t, p, x, y, 0));
    }
    ao_store(a, s, irb_op(b, KF_IR_UNOP, KF_OP_NEG, t, x, 0, 0, 0));
    ao_store(a, s, irb_op(b, KF_IR_UNOP, KF_OP_BNOT, t, x, 0, 0, 0));
    static const kf_builtin same[] = {KF_BI_ABS, KF_BI_MIN, KF_BI_MAX, KF_BI_CLAMP, KF_BI_MUL_HI, KF_BI_CDIV};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        ao_store(a, s, irb_op(b, KF_IR_MATH, same[i], t, x, y, x, 0));
    ao_store(a, KF_S_U32, irb_op(b, KF_IR_MATH, KF_BI_CLZ, u32, x, 0, 0, 0));
    ao_store(a, KF_S_U32, irb_op(b, KF_IR_MATH, KF_BI_POPC, u32, x, 0, 0, 0));
}

static void ao_float_ops(allops *a, kf_scalar s)
{
    irb *b = a->b;
    kf_type t = kf_type_scalar(s), bt = kf_type_scalar(KF_S_BOOL);
    kf_val x = a->x[s], y = irb_op(b, KF_IR_BINOP, KF_OP_MUL, t, x, x, 0, 0);
    for (int op = KF_OP_ADD; op <= KF_OP_DIV; op++) ao_store(a, s, irb_op(b, KF_IR_BINOP, (uint16_t)op, t, x, y, 0, 0));
    for (int op = KF_OP_EQ; op <= KF_OP_GE; op++) {
        kf_val p = irb_op(b, KF_IR_CMP, (uint16_t)op, t, x, y, 0, 0);
        b->vals[p].type = bt;
        ao_store(a, s, irb_op(b, KF_IR_SELECT, 0, t, p, x, y, 0));
    }
    ao_store(a, s, irb_op(b, KF_IR_UNOP, KF_OP_NEG, t, x, 0, 0, 0));
    for (int bi = KF_BI_EXP; bi <= KF_BI_FMA; bi++)
        ao_store(a, s, irb_op(b, KF_IR_MATH, (uint16_t)bi, t, x, y, x, 0));
}

static void ao_conversions(allops *a)
{
    static const kf_scalar all[] = {KF_S_I8, KF_S_U8, KF_S_I16, KF_S_U16, KF_S_I32, KF_S_U32, KF_S_I64, KF_S_U64,
                                    KF_S_F16, KF_S_BF16, KF_S_F32, KF_S_F64};
    irb *b = a->b;
    kf_val p = irb_op(b, KF_IR_CMP, KF_OP_LT, kf_type_scalar(KF_S_I32), a->x[KF_S_I32], a->x[KF_S_I32], 0, 0);
    b->vals[p].type = kf_type_scalar(KF_S_BOOL);
    for (size_t i = 0; i < 12; i++) {
        ao_store(a, all[i], irb_op(b, KF_IR_CVT, 0, kf_type_scalar(all[i]), p, 0, 0, 0));
        ao_store(a, all[i], irb_op(b, KF_IR_CVT, 0, kf_type_scalar(all[i]), a->x[KF_S_BOOL], 0, 0, 0));
        for (size_t j = 0; j < 12; j++)
            if (i != j) ao_store(a, all[j], irb_op(b, KF_IR_CVT, 0, kf_type_scalar(all[j]), a->x[all[i]], 0, 0, 0));
    }
    ao_store(a, KF_S_BOOL, p);
    ao_store(a, KF_S_BOOL, irb_op(b, KF_IR_BINOP, KF_OP_AND, kf_type_scalar(KF_S_BOOL), p, a->x[KF_S_BOOL], 0, 0));
    ao_store(a, KF_S_BOOL, irb_op(b, KF_IR_UNOP, KF_OP_NOT, kf_type_scalar(KF_S_BOOL), p, 0, 0, 0));
    kf_val e = irb_op(b, KF_IR_CMP, KF_OP_EQ, kf_type_scalar(KF_S_BOOL), p, a->x[KF_S_BOOL], 0, 0);
    b->vals[e].type = kf_type_scalar(KF_S_BOOL);
    ao_store(a, KF_S_BOOL, irb_op(b, KF_IR_SELECT, 0, kf_type_scalar(KF_S_BOOL), e, p, a->x[KF_S_BOOL], 0));
}

static void ao_vectors(allops *a)
{
    static const struct { kf_scalar s; unsigned n; } vt[] = {
        {KF_S_F32, 4}, {KF_S_F32, 2}, {KF_S_F16, 8}, {KF_S_F16, 4}, {KF_S_F16, 2}, {KF_S_BF16, 8},
        {KF_S_U8, 16}, {KF_S_U8, 8}, {KF_S_U8, 4}, {KF_S_I8, 16}, {KF_S_I8, 2}, {KF_S_I16, 8},
        {KF_S_I32, 4}, {KF_S_U32, 2}, {KF_S_F64, 2}, {KF_S_U64, 2},
    };
    static char names[16][24];
    irb *b = a->b;
    for (size_t i = 0; i < sizeof vt / sizeof vt[0]; i++) {
        kf_type t = kf_type_vector(vt[i].s, vt[i].n);
        snprintf(names[i], sizeof names[i], "v_%s_%u_in", kf_scalar_names[vt[i].s], vt[i].n);
        kf_val in = irb_param(b, names[i], irb_buf(vt[i].s, vt[i].n, false));
        kf_val out = irb_param(b, names[i] + 2, irb_buf(vt[i].s, vt[i].n, true));
        kf_val x = irb_op(b, KF_IR_LOAD, 0, t, in, a->idx, 0, 0);
        kf_val s = irb_op(b, KF_IR_BINOP, KF_OP_ADD, t, x, x, 0, 0);
        kf_val e = irb_op(b, KF_IR_EXTRACT, 0, kf_type_scalar(vt[i].s), s, 0, 0, 1);
        kf_val sp = irb_op(b, KF_IR_SPLAT, 0, t, e, 0, 0, 0);
        kf_val ins = irb_op(b, KF_IR_INSERT, 0, t, sp, e, 0, 0);
        irb_ins(b, KF_IR_STORE, 0, t, 0, out, a->idx, ins, 0);
        kf_val c = irb_op(b, KF_IR_CVT, 0, kf_type_vector(KF_S_F32, vt[i].n), x, 0, 0, 0);
        (void)c;
    }
    /* bitcasts between shapes of 4, 8 and 16 bytes */
    kf_val w = a->x[KF_S_U32];
    kf_val h2 = irb_op(b, KF_IR_BITCAST, 0, kf_type_vector(KF_S_F16, 2), w, 0, 0, 0);
    ao_store(a, KF_S_U32, irb_op(b, KF_IR_BITCAST, 0, kf_type_scalar(KF_S_U32), h2, 0, 0, 0));
    kf_val b4 = irb_op(b, KF_IR_BITCAST, 0, kf_type_vector(KF_S_U8, 4), w, 0, 0, 0);
    ao_store(a, KF_S_F32, irb_op(b, KF_IR_BITCAST, 0, kf_type_scalar(KF_S_F32), b4, 0, 0, 0));
    kf_val q = a->x[KF_S_U64];
    kf_val f2 = irb_op(b, KF_IR_BITCAST, 0, kf_type_vector(KF_S_F32, 2), q, 0, 0, 0);
    kf_val h4 = irb_op(b, KF_IR_BITCAST, 0, kf_type_vector(KF_S_F16, 4), f2, 0, 0, 0);
    kf_val u8 = irb_op(b, KF_IR_BITCAST, 0, kf_type_vector(KF_S_U8, 8), h4, 0, 0, 0);
    ao_store(a, KF_S_F64, irb_op(b, KF_IR_BITCAST, 0, kf_type_scalar(KF_S_F64), u8, 0, 0, 0));
    kf_val h = a->x[KF_S_F16];
    kf_val c2 = irb_op(b, KF_IR_BITCAST, 0, kf_type_vector(KF_S_I8, 2), h, 0, 0, 0);
    ao_store(a, KF_S_BF16, irb_op(b, KF_IR_BITCAST, 0, kf_type_scalar(KF_S_BF16), c2, 0, 0, 0));
    ao_store(a, KF_S_I16, irb_op(b, KF_IR_BITCAST, 0, kf_type_scalar(KF_S_I16), h, 0, 0, 0));
}

static void ao_warp_atomics(allops *a)
{
    irb *b = a->b;
    static const kf_scalar st[] = {KF_S_U32, KF_S_I32, KF_S_F32, KF_S_U64, KF_S_I64, KF_S_F64};
    kf_val lane = irb_const(b, KF_S_U32, 1);
    for (size_t i = 0; i < 6; i++)
        for (int bi = KF_BI_SHFL; bi <= KF_BI_SHFL_DOWN; bi++)
            ao_store(a, st[i], irb_op(b, KF_IR_SHFL, (uint16_t)bi, kf_type_scalar(st[i]), a->x[st[i]], lane, 0, 0));
    kf_val p = a->x[KF_S_BOOL];
    ao_store(a, KF_S_U32, irb_op(b, KF_IR_VOTE, KF_BI_BALLOT, kf_type_scalar(KF_S_U32), p, 0, 0, 0));
    ao_store(a, KF_S_BOOL, irb_op(b, KF_IR_VOTE, KF_BI_ANY, kf_type_scalar(KF_S_BOOL), p, 0, 0, 0));
    ao_store(a, KF_S_BOOL, irb_op(b, KF_IR_VOTE, KF_BI_ALL, kf_type_scalar(KF_S_BOOL), p, 0, 0, 0));
    static const kf_scalar at[] = {KF_S_I32, KF_S_U32, KF_S_U64, KF_S_F32};
    for (size_t i = 0; i < 4; i++) {
        kf_type t = kf_type_scalar(at[i]);
        kf_val x = a->x[at[i]];
        for (int bi = KF_BI_ATOMIC_ADD; bi <= KF_BI_ATOMIC_CAS; bi++) {
            kf_val d = irb_val(b, t, NULL);
            b->ins[b->k.nins++] = (kf_ir_ins){KF_IR_ATOMIC, (uint16_t)bi, t, d, {a->buf[at[i]], a->idx, x, x}, 0,
                                              {"test.kf", b->line, 5}};
            ao_store(a, at[i], d);
        }
    }
    kf_val d = irb_val(b, kf_type_scalar(KF_S_F64), NULL);
    b->ins[b->k.nins++] = (kf_ir_ins){KF_IR_ATOMIC, KF_BI_ATOMIC_ADD, kf_type_scalar(KF_S_F64), d,
                                      {a->buf[KF_S_F64], a->idx, a->x[KF_S_F64], 0}, 0, {"test.kf", b->line, 5}};
    kf_type h2 = kf_type_vector(KF_S_F16, 2);
    kf_val hb = irb_param(b, "atom_h2", irb_buf(KF_S_F16, 2, true));
    kf_val hv = irb_op(b, KF_IR_LOAD, 0, h2, hb, a->idx, 0, 0);
    kf_val hd = irb_val(b, h2, NULL);
    b->ins[b->k.nins++] = (kf_ir_ins){KF_IR_ATOMIC, KF_BI_ATOMIC_ADD, h2, hd, {hb, a->idx, hv, 0}, 0,
                                      {"test.kf", b->line, 5}};
    irb_ins(b, KF_IR_STORE, 0, h2, 0, hb, a->idx, hd, 0);
    irb_ins(b, KF_IR_BARRIER, 0, kf_type_void(), 0, 0, 0, 0, 0);
}

static void ao_arrays_and_flow(allops *a)
{
    irb *b = a->b;
    kf_type f32 = kf_type_scalar(KF_S_F32), u32 = kf_type_scalar(KF_S_U32), bt = kf_type_scalar(KF_S_BOOL);
    uint32_t sh = irb_array(b, "tile", KF_S_F32, 1, 256, true);
    uint32_t sv = irb_array(b, "vecs", KF_S_F16, 8, 32, true);
    uint32_t lo = irb_array(b, "scratch", KF_S_U32, 1, 16, false);
    uint32_t rg = irb_array(b, "acc", KF_S_F32, 1, 4, false);
    uint32_t fl = irb_array(b, "flags", KF_S_BOOL, 1, 8, true);
    irb_ins(b, KF_IR_ASTORE, 0, f32, 0, a->idx, a->x[KF_S_F32], 0, sh);
    ao_store(a, KF_S_F32, irb_op(b, KF_IR_ALOAD, 0, f32, a->idx, 0, 0, sh));
    kf_val h8 = irb_op(b, KF_IR_ALOAD, 0, kf_type_vector(KF_S_F16, 8), a->idx, 0, 0, sv);
    irb_ins(b, KF_IR_ASTORE, 0, kf_type_vector(KF_S_F16, 8), 0, a->x[KF_S_I64], h8, 0, sv);
    irb_ins(b, KF_IR_ASTORE, 0, bt, 0, a->x[KF_S_U8], a->x[KF_S_BOOL], 0, fl);
    ao_store(a, KF_S_BOOL, irb_op(b, KF_IR_ALOAD, 0, bt, a->x[KF_S_I16], 0, 0, fl));
    irb_ins(b, KF_IR_ASTORE, 0, u32, 0, a->idx, a->idx, 0, lo);
    ao_store(a, KF_S_U32, irb_op(b, KF_IR_ALOAD, 0, u32, a->x[KF_S_U64], 0, 0, lo));
    for (uint64_t i = 0; i < 4; i++) {
        kf_val c = irb_const(b, KF_S_U32, i);
        irb_ins(b, KF_IR_ASTORE, 0, f32, 0, c, a->x[KF_S_F32], 0, rg);
    }
    /* var i = 0; loop { if !(i < n) break; loop { if i == 3 continue-latch; break; } latch: i += 1 } */
    kf_val i = irb_val(b, u32, "i");
    kf_val zero = irb_const(b, KF_S_U32, 0), one = irb_const(b, KF_S_U32, 1), three = irb_const(b, KF_S_U32, 3);
    irb_ins(b, KF_IR_MOV, 0, u32, i, zero, 0, 0, 0);
    irb_ins(b, KF_IR_LOOP, 0, kf_type_void(), 0, 0, 0, 0, 0);
    kf_val c = irb_op(b, KF_IR_CMP, KF_OP_GE, u32, i, a->x[KF_S_U32], 0, 0);
    b->vals[c].type = bt;
    irb_ins(b, KF_IR_IF, 0, kf_type_void(), 0, c, 0, 0, 0);
    irb_ins(b, KF_IR_BREAK, 0, kf_type_void(), 0, 0, 0, 0, 0);
    irb_ins(b, KF_IR_ENDIF, 0, kf_type_void(), 0, 0, 0, 0, 0);
    irb_ins(b, KF_IR_LOOP, 0, kf_type_void(), 0, 0, 0, 0, 0);
    kf_val e = irb_op(b, KF_IR_CMP, KF_OP_EQ, u32, i, three, 0, 0);
    b->vals[e].type = bt;
    irb_ins(b, KF_IR_IF, 0, kf_type_void(), 0, e, 0, 0, 0);
    irb_ins(b, KF_IR_CONTINUE, 0, kf_type_void(), 0, 0, 0, 0, 0);
    irb_ins(b, KF_IR_ELSE, 0, kf_type_void(), 0, 0, 0, 0, 0);
    irb_ins(b, KF_IR_BREAK, 0, kf_type_void(), 0, 0, 0, 0, 0);
    irb_ins(b, KF_IR_ENDIF, 0, kf_type_void(), 0, 0, 0, 0, 0);
    irb_ins(b, KF_IR_ENDLOOP, 0, kf_type_void(), 0, 0, 0, 0, 0);
    kf_val r = irb_op(b, KF_IR_ALOAD, 0, f32, three, 0, 0, rg);
    ao_store(a, KF_S_F32, r);
    irb_ins(b, KF_IR_LATCH, 0, kf_type_void(), 0, 0, 0, 0, 0);
    irb_ins(b, KF_IR_BINOP, KF_OP_ADD, u32, i, i, one, 0, 0);
    irb_ins(b, KF_IR_ENDLOOP, 0, kf_type_void(), 0, 0, 0, 0, 0);
    irb_ins(b, KF_IR_RET, 0, kf_type_void(), 0, 0, 0, 0, 0);
}

static void ao_value_params(allops *a)
{
    irb *b = a->b;
    kf_val v4 = irb_param(b, "pv", kf_type_vector(KF_S_F32, 4));
    kf_val h8 = irb_param(b, "ph", kf_type_vector(KF_S_F16, 8));
    kf_val bb = irb_param(b, "pb", kf_type_scalar(KF_S_BOOL));
    kf_val i8 = irb_param(b, "pi8", kf_type_scalar(KF_S_I8));
    kf_val hf = irb_param(b, "pf16", kf_type_scalar(KF_S_BF16));
    ao_store(a, KF_S_F32, irb_op(b, KF_IR_EXTRACT, 0, kf_type_scalar(KF_S_F32), v4, 0, 0, 3));
    ao_store(a, KF_S_F16, irb_op(b, KF_IR_EXTRACT, 0, kf_type_scalar(KF_S_F16), h8, 0, 0, 7));
    ao_store(a, KF_S_BOOL, bb);
    ao_store(a, KF_S_I8, i8);
    ao_store(a, KF_S_BF16, hf);
}

/* Fills b with the all-ops kernel. */
static inline void allops_build(irb *b)
{
    irb_init(b, "all_ops", NULL);
    allops a = {.b = b};
    ao_params(&a);
    ao_value_params(&a);
    for (size_t i = 0; i < 8; i++) ao_int_ops(&a, allops_ints[i]);
    for (size_t i = 0; i < 4; i++) ao_float_ops(&a, allops_floats[i]);
    ao_conversions(&a);
    ao_vectors(&a);
    ao_warp_atomics(&a);
    ao_arrays_and_flow(&a);
}

#endif
