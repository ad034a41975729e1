/* A tiny core-IR builder for the interpreter tests: fills kf_ir_kernel
 * arrays by hand the way lowering would (one PARAM per parameter first,
 * structured markers linked by kf_ir_link), so the interpreter can be
 * tested without the front end. Every instruction gets the location
 * t.kf:<line>:<col> from the builder's current line/col. */
#ifndef KF_TEST_INTERP_BUILD_H
#define KF_TEST_INTERP_BUILD_H

#include <string.h>

#include "interp.h"
#include "numeric.h"

#define TB_MAX 1024

typedef struct {
    kf_ir_kernel k;
    kf_ir_value vals[TB_MAX];
    kf_ir_ins ins[TB_MAX];
    kf_ir_param params[8];
    kf_ir_array arrays[8];
    uint32_t line, col;
} tb;

#define T_BOOL kf_type_scalar(KF_S_BOOL)
#define T_I8 kf_type_scalar(KF_S_I8)
#define T_U8 kf_type_scalar(KF_S_U8)
#define T_I16 kf_type_scalar(KF_S_I16)
#define T_U16 kf_type_scalar(KF_S_U16)
#define T_I32 kf_type_scalar(KF_S_I32)
#define T_U32 kf_type_scalar(KF_S_U32)
#define T_I64 kf_type_scalar(KF_S_I64)
#define T_U64 kf_type_scalar(KF_S_U64)
#define T_F16 kf_type_scalar(KF_S_F16)
#define T_BF16 kf_type_scalar(KF_S_BF16)
#define T_F32 kf_type_scalar(KF_S_F32)
#define T_F64 kf_type_scalar(KF_S_F64)

static inline kf_type t_buf(kf_type elem, bool mut)
{
    return (kf_type){KF_TK_BUFFER, elem.scalar, elem.lanes, mut ? KF_TF_MUT : 0, 0};
}

static inline void tb_init(tb *b, const char *name)
{
    memset(b, 0, sizeof *b);
    b->k.name = name;
    b->k.vals = b->vals;
    b->k.ins = b->ins;
    b->k.params = b->params;
    b->k.arrays = b->arrays;
    b->k.nvals = 1;
    b->line = 1;
    b->col = 1;
}

static inline kf_loc tb_loc(tb *b) { return (kf_loc){"t.kf", b->line, b->col}; }

static inline kf_val tb_val(tb *b, kf_type t)
{
    b->vals[b->k.nvals] = (kf_ir_value){t, NULL, tb_loc(b)};
    return b->k.nvals++;
}

/* Appends an instruction; a new dst of type dt unless dt is void. */
static inline kf_val tb_ins(tb *b, uint16_t op, uint16_t sub, kf_type t, kf_type dt, kf_val a0, kf_val a1,
                            kf_val a2, kf_val a3, uint64_t imm)
{
    kf_val d = dt.kind == KF_TK_VOID ? 0 : tb_val(b, dt);
    b->ins[b->k.nins++] = (kf_ir_ins){op, sub, t, d, {a0, a1, a2, a3}, imm, tb_loc(b)};
    return d;
}

static inline kf_val tb_param(tb *b, const char *name, kf_type t)
{
    uint32_t i = b->k.nparams++;
    b->params[i] = (kf_ir_param){name, t, tb_loc(b), 4};
    kf_val v = tb_ins(b, KF_IR_PARAM, 0, t, t, 0, 0, 0, 0, i);
    b->vals[v].name = name;
    return v;
}

static inline uint32_t tb_array(tb *b, const char *name, kf_type elem, uint32_t len, bool shared)
{
    uint32_t i = b->k.narrays++;
    b->arrays[i] = (kf_ir_array){name, {KF_TK_ARRAY, elem.scalar, elem.lanes, shared ? KF_TF_SHARED : 0, len},
                                 tb_loc(b)};
    return i;
}

static inline kf_val tb_const(tb *b, kf_type t, uint64_t bits) { return tb_ins(b, KF_IR_CONST, 0, t, t, 0, 0, 0, 0, bits); }
static inline kf_val tb_u32(tb *b, uint32_t x) { return tb_const(b, T_U32, x); }
static inline kf_val tb_i32(tb *b, int32_t x) { return tb_const(b, T_I32, (uint32_t)x); }
static inline kf_val tb_f32(tb *b, float x) { return tb_const(b, T_F32, kf_f32_bits(x)); }
static inline kf_val tb_sreg(tb *b, kf_ir_sreg r) { return tb_ins(b, KF_IR_SREG, 0, T_U32, T_U32, 0, 0, 0, 0, r); }
static inline kf_type tb_type(tb *b, kf_val v) { return b->vals[v].type; }
static inline kf_val tb_bin(tb *b, kf_op op, kf_val x, kf_val y)
{
    return tb_ins(b, KF_IR_BINOP, op, tb_type(b, x), tb_type(b, x), x, y, 0, 0, 0);
}
static inline kf_val tb_cmp(tb *b, kf_op op, kf_val x, kf_val y)
{
    return tb_ins(b, KF_IR_CMP, op, tb_type(b, x), T_BOOL, x, y, 0, 0, 0);
}
static inline kf_val tb_unop(tb *b, kf_op op, kf_val x)
{
    return tb_ins(b, KF_IR_UNOP, op, tb_type(b, x), tb_type(b, x), x, 0, 0, 0, 0);
}
static inline kf_val tb_cvt(tb *b, kf_type to, kf_val x) { return tb_ins(b, KF_IR_CVT, 0, to, to, x, 0, 0, 0, 0); }
static inline kf_val tb_math(tb *b, kf_builtin fn, kf_type t, kf_val x, kf_val y, kf_val z)
{
    return tb_ins(b, KF_IR_MATH, fn, t, t, x, y, z, 0, 0);
}
static inline void tb_mov(tb *b, kf_val dst, kf_val src)
{
    b->ins[b->k.nins++] = (kf_ir_ins){KF_IR_MOV, 0, tb_type(b, dst), dst, {src, 0, 0, 0}, 0, tb_loc(b)};
}
static inline kf_val tb_load(tb *b, kf_val buf, kf_val idx)
{
    kf_type e = kf_type_elem(tb_type(b, buf));
    return tb_ins(b, KF_IR_LOAD, 0, e, e, buf, idx, 0, 0, 0);
}
static inline void tb_store(tb *b, kf_val buf, kf_val idx, kf_val v)
{
    tb_ins(b, KF_IR_STORE, 0, kf_type_elem(tb_type(b, buf)), kf_type_void(), buf, idx, v, 0, 0);
}
static inline kf_val tb_view(tb *b, kf_val buf, kf_type elem)
{
    kf_type t = t_buf(elem, tb_type(b, buf).flags & KF_TF_MUT);
    return tb_ins(b, KF_IR_VIEW, 0, t, t, buf, 0, 0, 0, 0);
}
static inline kf_val tb_atomic(tb *b, kf_builtin fn, kf_val buf, kf_val idx, kf_val v, kf_val v2)
{
    kf_type e = kf_type_elem(tb_type(b, buf));
    return tb_ins(b, KF_IR_ATOMIC, fn, e, e, buf, idx, v, v2, 0);
}
static inline kf_val tb_aload(tb *b, uint32_t arr, kf_val idx)
{
    kf_type e = kf_type_elem(b->arrays[arr].type);
    return tb_ins(b, KF_IR_ALOAD, 0, e, e, idx, 0, 0, 0, arr);
}
static inline void tb_astore(tb *b, uint32_t arr, kf_val idx, kf_val v)
{
    tb_ins(b, KF_IR_ASTORE, 0, kf_type_elem(b->arrays[arr].type), kf_type_void(), idx, v, 0, 0, arr);
}
static inline kf_val tb_shfl(tb *b, kf_builtin fn, kf_val v, kf_val lane)
{
    return tb_ins(b, KF_IR_SHFL, fn, tb_type(b, v), tb_type(b, v), v, lane, 0, 0, 0);
}
static inline kf_val tb_vote(tb *b, kf_builtin fn, kf_val c)
{
    kf_type t = fn == KF_BI_BALLOT ? T_U32 : T_BOOL;
    return tb_ins(b, KF_IR_VOTE, fn, t, t, c, 0, 0, 0, 0);
}
static inline void tb_mark(tb *b, kf_ir_op op, kf_val c) { tb_ins(b, op, 0, kf_type_void(), kf_type_void(), c, 0, 0, 0, 0); }
#define tb_if(b, c) tb_mark(b, KF_IR_IF, c)
#define tb_else(b) tb_mark(b, KF_IR_ELSE, 0)
#define tb_endif(b) tb_mark(b, KF_IR_ENDIF, 0)
#define tb_loop(b) tb_mark(b, KF_IR_LOOP, 0)
#define tb_latch(b) tb_mark(b, KF_IR_LATCH, 0)
#define tb_endloop(b) tb_mark(b, KF_IR_ENDLOOP, 0)
#define tb_break(b) tb_mark(b, KF_IR_BREAK, 0)
#define tb_continue(b) tb_mark(b, KF_IR_CONTINUE, 0)
#define tb_barrier(b) tb_mark(b, KF_IR_BARRIER, 0)
#define tb_ret(b) tb_mark(b, KF_IR_RET, 0)

/* global_id.x = ctaid.x * ntid.x + tid.x */
static inline kf_val tb_gid(tb *b)
{
    kf_val m = tb_bin(b, KF_OP_MUL, tb_sreg(b, KF_SR_CTAID_X), tb_sreg(b, KF_SR_NTID_X));
    return tb_bin(b, KF_OP_ADD, m, tb_sreg(b, KF_SR_TID_X));
}

/* warp_sum/max/min as lowering builds them: a 5-step SHFL_XOR butterfly. */
static inline kf_val tb_warp_reduce(tb *b, kf_builtin fn, kf_val v)
{
    for (uint32_t m = 16; m >= 1; m /= 2) {
        kf_val o = tb_shfl(b, KF_BI_SHFL_XOR, v, tb_u32(b, m));
        if (fn == KF_BI_WARP_SUM) v = tb_bin(b, KF_OP_ADD, v, o);
        else v = tb_math(b, fn == KF_BI_WARP_MAX ? KF_BI_MAX : KF_BI_MIN, tb_type(b, v), v, o, 0);
    }
    return v;
}

static inline kf_interp_arg tb_buf_arg(void *p, size_t bytes) { return (kf_interp_arg){.is_buffer = true, .data = p, .bytes = bytes}; }
static inline kf_interp_arg tb_scalar_arg(kf_type t, uint64_t bits)
{
    kf_interp_arg a = {0};
    a.value.type = t;
    a.value.lane[0] = bits;
    return a;
}

static inline kf_status tb_run(tb *b, uint32_t gx, uint32_t bx, const kf_interp_arg *args, kf_error *err,
                               kf_interp_stats *stats)
{
    if (!kf_ir_link(&b->k)) return KF_ERR_USAGE;
    kf_interp_launch l = {{gx, 1, 1}, {bx, 1, 1}, 0};
    return kf_interp_run(&b->k, args, b->k.nparams, &l, stats, err);
}

#endif
