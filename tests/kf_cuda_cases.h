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

typedef void (*kf_cuda_case)(kb *);
static const kf_cuda_case kf_cuda_cases[] = {case_saxpy, case_shifts, case_convert, case_loops,
                                             case_vectors, case_warp, case_names};

#endif
