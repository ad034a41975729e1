/* Hand-built core IR kernels that exercise the CUDA-C emitter: shared by
 * tests/test_emit_cuda.c (asserts on the text) and
 * tests/test_nvrtc_kernels.c (compiles the text with NVRTC). */
#ifndef KF_CUDA_CASES_H
#define KF_CUDA_CASES_H

#include "kf_irbuild.h"

static inline kf_type ts(kf_scalar s) { return kf_type_scalar(s); }
static inline void kb_if(kb *b, kf_val c) { kb_ins(b, KF_IR_IF, 0, kf_type_void(), 0, c, 0, 0, 0); }

/* saxpy: y[i] = a * x[i] + y[i] for i < n (line 5 holds the statement) */
static inline void case_saxpy(kb *b)
{
    kb_init(b, "saxpy", 256, 1, 1);
    kf_val a = kb_param(b, "a", ts(KF_S_F32));
    kf_val x = kb_param(b, "x", kb_buf(KF_S_F32, 1, false));
    kf_val y = kb_param(b, "y", kb_buf(KF_S_F32, 1, true));
    kf_val n = kb_param(b, "n", ts(KF_S_U32));
    b->line = 3;
    kf_val i = kb_gid(b, "i");
    b->line = 4;
    kb_if(b, kb_cmp(b, KF_OP_LT, i, n));
    b->line = 5;
    kf_val p = kb_bin(b, KF_OP_MUL, a, kb_load(b, x, i), 0);
    kb_store(b, y, i, kb_bin(b, KF_OP_ADD, p, kb_load(b, y, i), 0));
    b->line = 6;
    kb_mark(b, KF_IR_ENDIF);
}

/* out[k] = shifts of every width class by the runtime amount s */
static inline void case_shifts(kb *b)
{
    kb_init(b, "shifts", 64, 1, 1);
    kf_val u = kb_param(b, "u", ts(KF_S_U32));
    kf_val s = kb_param(b, "s", ts(KF_S_I32));
    kf_val q = kb_param(b, "q", ts(KF_S_U64));
    kf_val c8 = kb_param(b, "c", ts(KF_S_U8));
    kf_val o32 = kb_param(b, "o32", kb_buf(KF_S_U32, 1, true));
    kf_val oi = kb_param(b, "oi", kb_buf(KF_S_I32, 1, true));
    kf_val o64 = kb_param(b, "o64", kb_buf(KF_S_U64, 1, true));
    kf_val o8 = kb_param(b, "o8", kb_buf(KF_S_U8, 1, true));
    b->line = 2;
    kb_store(b, o32, kb_u32(b, 0), kb_bin(b, KF_OP_SHL, u, u, 0));
    kb_store(b, o32, kb_u32(b, 1), kb_bin(b, KF_OP_SHR, u, u, 0));
    kb_store(b, oi, kb_u32(b, 0), kb_bin(b, KF_OP_SHR, s, s, 0));
    kb_store(b, oi, kb_u32(b, 1), kb_bin(b, KF_OP_SHL, s, s, 0));
    kb_store(b, o64, kb_u32(b, 0), kb_bin(b, KF_OP_SHL, q, q, 0));
    kb_store(b, o64, kb_u32(b, 1), kb_bin(b, KF_OP_SHR, q, q, 0));
    kb_store(b, o8, kb_u32(b, 0), kb_bin(b, KF_OP_SHL, c8, c8, 0));
    kb_store(b, oi, kb_u32(b, 2), kb_bin(b, KF_OP_DIV, s, s, 0));
    kb_store(b, oi, kb_u32(b, 3), kb_bin(b, KF_OP_REM, s, s, 0));
    kb_store(b, oi, kb_u32(b, 4), kb_bin(b, KF_OP_ADD, s, s, 0));
}

/* conversions: f32 -> i32/u8/f16/bf16, f64 -> f16/bf16/f32, i32/u64 -> f16,
 * i64 -> bf16, f16 -> bf16; stored through a u32 buffer view-free */
static inline void case_convert(kb *b)
{
    kb_init(b, "convert", 32, 1, 1);
    kf_val f = kb_param(b, "f", ts(KF_S_F32));
    kf_val d = kb_param(b, "d", ts(KF_S_F64));
    kf_val i = kb_param(b, "i", ts(KF_S_I32));
    kf_val l = kb_param(b, "l", ts(KF_S_I64));
    kf_val q = kb_param(b, "q", ts(KF_S_U64));
    kf_val oi = kb_param(b, "oi", kb_buf(KF_S_I32, 1, true));
    kf_val o8 = kb_param(b, "o8", kb_buf(KF_S_U8, 1, true));
    kf_val oh = kb_param(b, "oh", kb_buf(KF_S_F16, 1, true));
    kf_val ob = kb_param(b, "ob", kb_buf(KF_S_BF16, 1, true));
    kf_val of = kb_param(b, "of", kb_buf(KF_S_F32, 1, true));
    b->line = 2;
    kb_store(b, oi, kb_u32(b, 0), kb_cvt(b, f, ts(KF_S_I32)));
    kb_store(b, o8, kb_u32(b, 0), kb_cvt(b, f, ts(KF_S_U8)));
    kb_store(b, oh, kb_u32(b, 0), kb_cvt(b, f, ts(KF_S_F16)));
    kb_store(b, ob, kb_u32(b, 0), kb_cvt(b, f, ts(KF_S_BF16)));
    kb_store(b, oh, kb_u32(b, 1), kb_cvt(b, d, ts(KF_S_F16)));
    kb_store(b, ob, kb_u32(b, 1), kb_cvt(b, d, ts(KF_S_BF16)));
    kb_store(b, of, kb_u32(b, 0), kb_cvt(b, d, ts(KF_S_F32)));
    kb_store(b, oh, kb_u32(b, 2), kb_cvt(b, i, ts(KF_S_F16)));
    kb_store(b, oh, kb_u32(b, 3), kb_cvt(b, q, ts(KF_S_F16)));
    kb_store(b, ob, kb_u32(b, 2), kb_cvt(b, l, ts(KF_S_BF16)));
    kf_val h = kb_cvt(b, f, ts(KF_S_F16));
    kb_store(b, ob, kb_u32(b, 3), kb_cvt(b, h, ts(KF_S_BF16)));
    kb_store(b, oi, kb_u32(b, 1), kb_cvt(b, d, ts(KF_S_I32)));
    kb_store(b, oh, kb_u32(b, 4), kb_bin(b, KF_OP_ADD, h, h, 0));
}

/* nested loops with latches, continue and break at both levels, and a
 * short-circuit `a && b` lowered through IF */
static inline void case_loops(kb *b)
{
    kb_init(b, "loops", 32, 1, 1);
    kf_val n = kb_param(b, "n", ts(KF_S_U32));
    kf_val o = kb_param(b, "o", kb_buf(KF_S_U32, 1, true));
    b->line = 2;
    kf_val acc = kb_val(b, ts(KF_S_U32), "acc");
    kb_mov(b, acc, kb_u32(b, 0));
    kf_val i = kb_val(b, ts(KF_S_U32), "i");
    b->line = 3;
    kb_mov(b, i, kb_u32(b, 0));
    kb_mark(b, KF_IR_LOOP);                              /* outer */
    kb_if(b, kb_cmp(b, KF_OP_GE, i, n));
    kb_mark(b, KF_IR_BREAK);
    kb_mark(b, KF_IR_ENDIF);
    b->line = 4;
    kb_if(b, kb_cmp(b, KF_OP_EQ, i, kb_u32(b, 2)));
    kb_mark(b, KF_IR_CONTINUE);                          /* outer continue */
    kb_mark(b, KF_IR_ENDIF);
    b->line = 5;
    kf_val j = kb_val(b, ts(KF_S_U32), "j");
    kb_mov(b, j, kb_u32(b, 0));
    kb_mark(b, KF_IR_LOOP);                              /* inner */
    kb_if(b, kb_cmp(b, KF_OP_GE, j, i));
    kb_mark(b, KF_IR_BREAK);
    kb_mark(b, KF_IR_ENDIF);
    b->line = 6;
    /* short circuit: c = (j > 1) && (j % 3 == 0) */
    kf_val c = kb_val(b, ts(KF_S_BOOL), "c");
    kb_mov(b, c, kb_cmp(b, KF_OP_GT, j, kb_u32(b, 1)));
    kb_if(b, c);
    kb_mov(b, c, kb_cmp(b, KF_OP_EQ, kb_bin(b, KF_OP_REM, j, kb_u32(b, 3), 0), kb_u32(b, 0)));
    kb_mark(b, KF_IR_ENDIF);
    kb_if(b, c);
    kb_mark(b, KF_IR_CONTINUE);                          /* inner continue */
    kb_mark(b, KF_IR_ENDIF);
    b->line = 7;
    kb_if(b, kb_cmp(b, KF_OP_EQ, j, kb_u32(b, 7)));
    kb_mark(b, KF_IR_BREAK);                             /* inner break */
    kb_mark(b, KF_IR_ENDIF);
    kb_bin(b, KF_OP_ADD, acc, j, acc);
    kb_mark(b, KF_IR_LATCH);
    b->line = 5;
    kb_bin(b, KF_OP_ADD, j, kb_u32(b, 1), j);
    kb_mark(b, KF_IR_ENDLOOP);
    kb_mark(b, KF_IR_LATCH);
    b->line = 3;
    kb_bin(b, KF_OP_ADD, i, kb_u32(b, 1), i);
    kb_mark(b, KF_IR_ENDLOOP);
    b->line = 8;
    kb_store(b, o, kb_u32(b, 0), acc);
    kb_mark(b, KF_IR_RET);
    kb_store(b, o, kb_u32(b, 1), acc);                   /* unreachable */
}

/* vector loads and stores through f32x4 and f16x8 buffers, a VIEW of a
 * scalar buffer as f32x4, lanes, splat, insert and extract */
static inline void case_vectors(kb *b)
{
    kb_init(b, "vectors", 128, 1, 1);
    kf_type v4 = kf_type_vector(KF_S_F32, 4);
    kf_val x = kb_param(b, "x", kb_buf(KF_S_F32, 4, false));
    kf_val h = kb_param(b, "h", kb_buf(KF_S_F16, 8, true));
    kf_val y = kb_param(b, "y", kb_buf(KF_S_F32, 1, true));
    kf_val s = kb_param(b, "s", v4);
    b->line = 2;
    kf_val i = kb_gid(b, "i");
    b->line = 3;
    kf_val xi = kb_load(b, x, i);
    kf_val sum = kb_bin(b, KF_OP_ADD, xi, s, 0);
    kf_val yv = kb_val(b, kb_buf(KF_S_F32, 4, true), "yv");
    kb_ins(b, KF_IR_VIEW, 0, b->vals[yv].type, yv, y, 0, 0, 0);
    kb_store(b, yv, i, sum);
    b->line = 4;
    kf_val hv = kb_load(b, h, i);
    kf_val lane3 = kb_val(b, ts(KF_S_F16), NULL);
    kb_ins(b, KF_IR_EXTRACT, 0, ts(KF_S_F16), lane3, hv, 0, 0, 3);
    kf_val w = kb_val(b, kf_type_vector(KF_S_F16, 8), "w");
    kb_ins(b, KF_IR_SPLAT, 0, b->vals[w].type, w, lane3, 0, 0, 0);
    kb_ins(b, KF_IR_INSERT, 0, b->vals[w].type, w, w, kb_cvt(b, kb_u32(b, 1), ts(KF_S_F16)), 0, 0);
    kb_store(b, h, i, w);
}

/* atomics, shuffles, votes, shared memory, barrier, lane id, f32 math */
static inline void case_warp(kb *b)
{
    kb_init(b, "warp", 32, 4, 1);
    kf_val o = kb_param(b, "o", kb_buf(KF_S_F32, 1, true));
    kf_val c = kb_param(b, "cnt", kb_buf(KF_S_U64, 1, true));
    kf_val hh = kb_param(b, "hh", kb_buf(KF_S_F16, 2, true));
    kf_val d = kb_param(b, "d", kb_buf(KF_S_F64, 1, true));
    b->k.arrays[0] = (kf_ir_array){"part", {KF_TK_ARRAY, KF_S_F32, 1, KF_TF_SHARED, 32}, kb_loc(b)};
    b->k.arrays[1] = (kf_ir_array){"tmp", {KF_TK_ARRAY, KF_S_U32, 1, 0, 4}, kb_loc(b)};
    b->k.narrays = 2;
    b->line = 2;
    kf_val ln = kb_sreg(b, KF_SR_LANE);
    kf_val f = kb_cvt(b, ln, ts(KF_S_F32));
    kf_val e = kb_math(b, KF_BI_EXP, ts(KF_S_F32), f, 0, 0);
    kf_val t = kb_math(b, KF_BI_TANH, ts(KF_S_F32), e, 0, 0);
    kf_val r = kb_val(b, ts(KF_S_F32), NULL);
    kb_ins(b, KF_IR_SHFL, KF_BI_SHFL_XOR, ts(KF_S_F32), r, t, kb_u32(b, 16), 0, 0);
    b->line = 3;
    kb_ins(b, KF_IR_ASTORE, 0, ts(KF_S_F32), 0, ln, r, 0, 0);
    kb_ins(b, KF_IR_ASTORE, 1, ts(KF_S_U32), 0, kb_u32(b, 0), ln, 0, 1);
    kb_mark(b, KF_IR_BARRIER);
    kf_val p = kb_val(b, ts(KF_S_F32), NULL);
    kb_ins(b, KF_IR_ALOAD, 0, ts(KF_S_F32), p, kb_u32(b, 0), 0, 0, 0);
    kf_val old = kb_val(b, ts(KF_S_F32), "old");
    kb_ins(b, KF_IR_ATOMIC, KF_BI_ATOMIC_ADD, ts(KF_S_F32), old, o, kb_u32(b, 0), p, 0);
    kf_val mx = kb_val(b, ts(KF_S_F32), NULL);
    kb_ins(b, KF_IR_ATOMIC, KF_BI_ATOMIC_MAX, ts(KF_S_F32), mx, o, kb_u32(b, 1), old, 0);
    b->line = 4;
    kf_val bl = kb_val(b, ts(KF_S_U32), NULL);
    kb_ins(b, KF_IR_VOTE, KF_BI_BALLOT, ts(KF_S_U32), bl, kb_cmp(b, KF_OP_GT, mx, f), 0, 0, 0);
    kf_val w64 = kb_cvt(b, bl, ts(KF_S_U64));
    kf_val tl = kb_val(b, ts(KF_S_U32), NULL);
    kb_ins(b, KF_IR_ALOAD, 0, ts(KF_S_U32), tl, kb_u32(b, 0), 0, 0, 1);
    kf_val w2 = kb_bin(b, KF_OP_ADD, w64, kb_cvt(b, tl, ts(KF_S_U64)), 0);
    kf_val cold = kb_val(b, ts(KF_S_U64), NULL);
    kb_ins(b, KF_IR_ATOMIC, KF_BI_ATOMIC_MIN, ts(KF_S_U64), cold, c, kb_u32(b, 0), w2, 0);
    kf_val h2 = kb_load(b, hh, kb_u32(b, 1));
    kf_val hold = kb_val(b, kf_type_vector(KF_S_F16, 2), NULL);
    kb_ins(b, KF_IR_ATOMIC, KF_BI_ATOMIC_ADD, b->vals[hold].type, hold, hh, kb_u32(b, 0), h2, 0);
    kf_val dold = kb_val(b, ts(KF_S_F64), NULL);
    kb_ins(b, KF_IR_ATOMIC, KF_BI_ATOMIC_ADD, ts(KF_S_F64), dold, d, kb_u32(b, 0),
           kb_math(b, KF_BI_EXP, ts(KF_S_F64), kb_cvt(b, cold, ts(KF_S_F64)), 0, 0), 0);
    kf_val any = kb_val(b, ts(KF_S_BOOL), NULL);
    kb_ins(b, KF_IR_VOTE, KF_BI_ANY, ts(KF_S_BOOL), any, kb_cmp(b, KF_OP_GT, dold, kb_cvt(b, mx, ts(KF_S_F64))), 0, 0, 0);
    kb_if(b, any);
    kb_store(b, o, kb_u32(b, 2), kb_math(b, KF_BI_CLAMP, ts(KF_S_F32), p, f, t));
    kb_mark(b, KF_IR_ENDIF);
}

/* a variable named like a C++ keyword, two values sharing a source name,
 * and a kf_ prefixed name */
static inline void case_names(kb *b)
{
    kb_init(b, "names", 32, 1, 1);
    kf_val o = kb_param(b, "o", kb_buf(KF_S_I32, 1, true));
    kf_val a = kb_val(b, ts(KF_S_I32), "int");
    kb_mov(b, a, kb_const(b, ts(KF_S_I32), 5));
    kf_val x1 = kb_bin(b, KF_OP_MUL, a, a, kb_val(b, ts(KF_S_I32), "x"));
    kf_val x2 = kb_bin(b, KF_OP_SUB, x1, a, kb_val(b, ts(KF_S_I32), "x"));
    kf_val k1 = kb_bin(b, KF_OP_ADD, x2, x2, kb_val(b, ts(KF_S_I32), "kf_tmp"));
    kb_store(b, o, kb_u32(b, 0), k1);
    kb_store(b, o, kb_u32(b, 1), x2);
    kb_store(b, o, kb_u32(b, 2), x1);
}


static const kf_scalar kf_case_scalars[] = {KF_S_BOOL, KF_S_I8, KF_S_U8, KF_S_I16, KF_S_U16, KF_S_I32, KF_S_U32,
                                            KF_S_I64, KF_S_U64, KF_S_F16, KF_S_BF16, KF_S_F32, KF_S_F64};
#define KF_NCASE_SCALARS (sizeof kf_case_scalars / sizeof *kf_case_scalars)

/* every conversion between every pair of scalar types (into bool too,
 * which sema forbids but the emitter still spells safely) */
static inline void case_cvt_all(kb *b)
{
    kb_init(b, "cvt_all", 32, 1, 1);
    kf_val in[KF_NCASE_SCALARS], out[KF_NCASE_SCALARS];
    for (size_t i = 0; i < KF_NCASE_SCALARS; i++) in[i] = kb_param(b, kf_scalar_names[kf_case_scalars[i]], ts(kf_case_scalars[i]));
    for (size_t i = 0; i < KF_NCASE_SCALARS; i++) out[i] = kb_param(b, "out", kb_buf(kf_case_scalars[i], 1, true));
    for (size_t f = 0; f < KF_NCASE_SCALARS; f++)
        for (size_t t = 0; t < KF_NCASE_SCALARS; t++)
            kb_store(b, out[t], kb_u32(b, (uint32_t)f), kb_cvt(b, in[f], ts(kf_case_scalars[t])));
}

/* every binary operator, comparison and unary operator on every scalar
 * type it applies to, and on a vector of each numeric type */
static inline void case_ops_all(kb *b)
{
    static const kf_op bin[] = {KF_OP_ADD, KF_OP_SUB, KF_OP_MUL, KF_OP_DIV, KF_OP_REM, KF_OP_AND,
                                KF_OP_OR, KF_OP_XOR, KF_OP_SHL, KF_OP_SHR};
    static const kf_op cmp[] = {KF_OP_EQ, KF_OP_NE, KF_OP_LT, KF_OP_LE, KF_OP_GT, KF_OP_GE};
    kb_init(b, "ops_all", 64, 2, 1);
    kf_val ob = kb_param(b, "ob", kb_buf(KF_S_BOOL, 1, true));
    for (size_t i = 0; i < KF_NCASE_SCALARS; i++) {
        kf_scalar s = kf_case_scalars[i];
        char cls = kf_scalar_class[s];
        kf_val x = kb_param(b, "x", ts(s));
        kf_val o = kb_param(b, "o", kb_buf(s, 1, true));
        uint32_t k = 0;
        for (size_t j = 0; j < sizeof bin / sizeof *bin; j++) {
            kf_op op = bin[j];
            if (cls == 'f' && op > KF_OP_DIV) continue;
            if (cls == 'b' && op != KF_OP_AND && op != KF_OP_OR && op != KF_OP_XOR) continue;
            kb_store(b, o, kb_u32(b, k++), kb_bin(b, op, x, x, 0));
        }
        for (size_t j = 0; j < sizeof cmp / sizeof *cmp; j++) {
            if (cls == 'b' && cmp[j] > KF_OP_NE) continue;
            kb_store(b, ob, kb_u32(b, (uint32_t)(i * 8 + j)), kb_cmp(b, cmp[j], x, x));
        }
        kf_val u = kb_val(b, ts(s), NULL);
        kb_ins(b, KF_IR_UNOP, cls == 'b' ? KF_OP_NOT : KF_OP_NEG, ts(s), u, x, 0, 0, 0);
        kb_store(b, o, kb_u32(b, k++), u);
        if (cls == 'i' || cls == 'u') {
            kf_val n = kb_val(b, ts(s), NULL);
            kb_ins(b, KF_IR_UNOP, KF_OP_BNOT, ts(s), n, x, 0, 0, 0);
            kb_store(b, o, kb_u32(b, k++), n);
        }
        if (cls == 'b' || kf_scalar_bytes[s] > 4) continue;
        unsigned lanes = 16 / kf_scalar_bytes[s] > 4 ? 4 : 16 / kf_scalar_bytes[s];
        kf_type vt = kf_type_vector(s, lanes);
        kf_val vb = kb_param(b, "ov", kb_buf(s, lanes, true));
        kf_val v = kb_val(b, vt, NULL);
        kb_ins(b, KF_IR_SPLAT, 0, vt, v, x, 0, 0, 0);
        kf_val r = kb_val(b, vt, "r");
        kb_ins(b, KF_IR_BINOP, KF_OP_MUL, vt, r, v, v, 0, 0);
        kb_ins(b, KF_IR_BINOP, cls == 'f' ? KF_OP_DIV : KF_OP_SHR, vt, r, r, v, 0, 0);
        kb_store(b, vb, kb_u32(b, 0), r);
    }
}

/* every math builtin on every type it applies to */
static inline void case_math_all(kb *b)
{
    static const kf_builtin fm[] = {KF_BI_EXP, KF_BI_EXP2, KF_BI_LOG, KF_BI_LOG2, KF_BI_SQRT, KF_BI_RSQRT,
                                    KF_BI_SIN, KF_BI_COS, KF_BI_TANH, KF_BI_ABS, KF_BI_FLOOR, KF_BI_CEIL,
                                    KF_BI_TRUNC, KF_BI_ROUND, KF_BI_MIN, KF_BI_MAX, KF_BI_CLAMP, KF_BI_FMA};
    static const kf_builtin im[] = {KF_BI_MIN, KF_BI_MAX, KF_BI_ABS, KF_BI_CLAMP, KF_BI_CDIV, KF_BI_MUL_HI};
    kb_init(b, "math_all", 32, 1, 1);
    kf_val ou = kb_param(b, "ou", kb_buf(KF_S_U32, 1, true));
    uint32_t ku = 0;
    for (size_t i = 1; i < KF_NCASE_SCALARS; i++) {
        kf_scalar s = kf_case_scalars[i];
        bool fl = kf_scalar_class[s] == 'f';
        kf_val x = kb_param(b, "x", ts(s));
        kf_val o = kb_param(b, "o", kb_buf(s, 1, true));
        const kf_builtin *list = fl ? fm : im;
        size_t n = fl ? sizeof fm / sizeof *fm : sizeof im / sizeof *im;
        for (size_t j = 0; j < n; j++)
            kb_store(b, o, kb_u32(b, (uint32_t)j), kb_math(b, list[j], ts(s), x, x, x));
        if (!fl && kf_scalar_bytes[s] >= 4) {
            kb_store(b, ou, kb_u32(b, ku++), kb_math(b, KF_BI_CLZ, ts(KF_S_U32), x, 0, 0));
            kb_store(b, ou, kb_u32(b, ku++), kb_math(b, KF_BI_POPC, ts(KF_S_U32), x, 0, 0));
        }
    }
    kf_type v2 = kf_type_vector(KF_S_F32, 2);
    kf_val vx = kb_param(b, "v", v2);
    kf_val vo = kb_param(b, "ov", kb_buf(KF_S_F32, 2, true));
    kb_store(b, vo, kb_u32(b, 0), kb_math(b, KF_BI_FMA, v2, vx, vx, vx));
}

/* every atomic on every type the contract lists (and i64), shuffles of
 * every 32/64-bit type with a runtime xor mask, votes */
static inline void case_atomics_all(kb *b)
{
    static const kf_scalar at[] = {KF_S_I32, KF_S_U32, KF_S_U64, KF_S_F32, KF_S_I64};
    static const kf_builtin ops[] = {KF_BI_ATOMIC_ADD, KF_BI_ATOMIC_MIN, KF_BI_ATOMIC_MAX, KF_BI_ATOMIC_EXCH,
                                     KF_BI_ATOMIC_CAS};
    static const kf_builtin sh[] = {KF_BI_SHFL, KF_BI_SHFL_XOR, KF_BI_SHFL_UP, KF_BI_SHFL_DOWN};
    kb_init(b, "atomics_all", 256, 1, 1);
    kf_val m = kb_param(b, "m", ts(KF_S_U32));
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        kf_val buf = kb_param(b, "buf", kb_buf(at[i], 1, true));
        kf_val x = kb_param(b, "x", ts(at[i]));
        kf_val acc = x;
        for (size_t j = 0; j < sizeof ops / sizeof *ops; j++) {
            kf_val old = kb_val(b, ts(at[i]), NULL);
            uint32_t ins = kb_ins(b, KF_IR_ATOMIC, ops[j], ts(at[i]), old, buf, kb_u32(b, (uint32_t)j), acc, 0);
            if (ops[j] == KF_BI_ATOMIC_CAS) b->ins[ins].a[3] = x;
            acc = old;
        }
        for (size_t j = 0; j < sizeof sh / sizeof *sh; j++) {
            kf_val r = kb_val(b, ts(at[i]), NULL);
            kb_ins(b, KF_IR_SHFL, sh[j], ts(at[i]), r, acc, m, 0, 0);
            acc = r;
        }
        kb_store(b, buf, kb_u32(b, 9), acc);
    }
    kf_val d = kb_param(b, "d", kb_buf(KF_S_F64, 1, true));
    kf_val dx = kb_param(b, "dx", ts(KF_S_F64));
    kf_val dold = kb_val(b, ts(KF_S_F64), NULL);
    kb_ins(b, KF_IR_ATOMIC, KF_BI_ATOMIC_ADD, ts(KF_S_F64), dold, d, kb_u32(b, 0), dx, 0);
    kf_val dr = kb_val(b, ts(KF_S_F64), NULL);
    kb_ins(b, KF_IR_SHFL, KF_BI_SHFL_DOWN, ts(KF_S_F64), dr, dold, m, 0, 0);
    kb_store(b, d, kb_u32(b, 1), dr);
    kf_val all = kb_val(b, ts(KF_S_BOOL), NULL);
    kb_ins(b, KF_IR_VOTE, KF_BI_ALL, ts(KF_S_BOOL), all, kb_cmp(b, KF_OP_GT, dr, dx), 0, 0, 0);
    kb_if(b, all);
    kb_mark(b, KF_IR_RET);
    kb_mark(b, KF_IR_ELSE);
    kb_mark(b, KF_IR_RET);
    kb_mark(b, KF_IR_ENDIF);
    kb_store(b, d, kb_u32(b, 2), dr);    /* unreachable: both branches return */
}

/* a loop with no break (left by return only), bitcasts, select and a
 * vector constant */
static inline void case_misc(kb *b)
{
    kb_init(b, "misc", 32, 1, 1);
    kf_val o = kb_param(b, "o", kb_buf(KF_S_U32, 1, true));
    kf_val h = kb_param(b, "h", kb_buf(KF_S_F16, 2, true));
    kf_val n = kb_param(b, "n", ts(KF_S_U32));
    kf_val i = kb_val(b, ts(KF_S_U32), "i");
    kb_mov(b, i, kb_u32(b, 0));
    kb_mark(b, KF_IR_LOOP);
    kb_if(b, kb_cmp(b, KF_OP_EQ, i, n));
    kb_store(b, o, i, i);
    kb_mark(b, KF_IR_RET);
    kb_mark(b, KF_IR_ENDIF);
    kf_val w = kb_load(b, h, i);
    kf_val bits = kb_val(b, ts(KF_S_U32), "bits");
    kb_ins(b, KF_IR_BITCAST, 0, ts(KF_S_U32), bits, w, 0, 0, 0);
    kf_val f = kb_val(b, ts(KF_S_F32), NULL);
    kb_ins(b, KF_IR_BITCAST, 0, ts(KF_S_F32), f, bits, 0, 0, 0);
    kf_val sel = kb_val(b, ts(KF_S_U32), "sel");
    kb_ins(b, KF_IR_SELECT, 0, ts(KF_S_U32), sel, kb_cmp(b, KF_OP_GT, f, kb_const(b, ts(KF_S_F32), 0)), bits, i, 0);
    kb_store(b, o, i, sel);
    kf_val c2 = kb_const(b, kf_type_vector(KF_S_F16, 2), 0x40003c00);
    kb_store(b, h, i, c2);
    kb_bin(b, KF_OP_ADD, i, kb_u32(b, 1), i);
    kb_mark(b, KF_IR_ENDLOOP);
    kb_store(b, o, kb_u32(b, 0), n);    /* unreachable: the loop never breaks */
}

/* a loop whose exit test is not its first statement (do-while shape), with
 * a latch and a continue: written with the body block and a goto */
static inline void case_latch(kb *b)
{
    kb_init(b, "latch", 32, 1, 1);
    kf_val n = kb_param(b, "n", ts(KF_S_U32));
    kf_val o = kb_param(b, "o", kb_buf(KF_S_U32, 1, true));
    kf_val i = kb_val(b, ts(KF_S_U32), "i");
    kb_mov(b, i, kb_u32(b, 0));
    b->line = 2;
    kb_mark(b, KF_IR_LOOP);
    kb_store(b, o, i, i);
    kb_if(b, kb_cmp(b, KF_OP_GE, i, n));
    kb_mark(b, KF_IR_BREAK);
    kb_mark(b, KF_IR_ENDIF);
    kb_if(b, kb_cmp(b, KF_OP_EQ, i, kb_u32(b, 5)));
    kb_mark(b, KF_IR_CONTINUE);
    kb_mark(b, KF_IR_ENDIF);
    kb_store(b, o, kb_bin(b, KF_OP_ADD, i, n, 0), n);
    kb_mark(b, KF_IR_LATCH);
    kb_bin(b, KF_OP_ADD, i, kb_u32(b, 2), i);
    kb_mark(b, KF_IR_ENDLOOP);
}

typedef void (*kf_cuda_case)(kb *);
static const kf_cuda_case kf_cuda_cases[] = {case_saxpy, case_shifts, case_convert, case_loops,
                                             case_vectors, case_warp, case_names, case_cvt_all,
                                             case_ops_all, case_math_all, case_atomics_all, case_misc, case_latch};

/* Builds case c into b and pairs its markers, as lowering does. */
static inline void kb_build(kb *b, kf_cuda_case c)
{
    c(b);
    (void)kf_ir_link(&b->k);
}

#endif
