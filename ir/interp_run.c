/* The interpreter's inner loop: core IR is decoded once per launch into
 * kf_idins (a handler id chosen from op + type, so scalar i32/u32/f32 work
 * takes a one-line fast path and everything else a generic lane-wise path
 * in interp_ops.c; jump targets resolved, CONSTs pre-encoded), and then
 * kf_interp_thread runs one thread's program counter forward until the
 * thread reaches a barrier, a warp operation, or its end. Structured control
 * flow needs no stack: IF jumps past its ELSE/ENDIF when false, ELSE and
 * ENDLOOP jump, BREAK leaves past ENDLOOP, CONTINUE goes to the LATCH. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "interp_impl.h"
#include "numeric.h"

static uint8_t log2_bytes(uint32_t b)
{
    uint8_t n = 0;
    while ((1u << n) < b) n++;
    return n;
}

/* Fast-path handler for an f32 vector BINOP, or IH_BINOP. */
static uint16_t pick_vbinop(kf_op op, kf_scalar s)
{
    if (s != KF_S_F32) return IH_BINOP;
    switch (op) {
    case KF_OP_ADD: return IH_ADD_F32V;
    case KF_OP_SUB: return IH_SUB_F32V;
    case KF_OP_MUL: return IH_MUL_F32V;
    case KF_OP_DIV: return IH_DIV_F32V;
    default: return IH_BINOP;
    }
}

/* Fast-path handler for a scalar BINOP, or IH_BINOP. */
static uint16_t pick_binop(kf_op op, kf_scalar s)
{
    bool w32 = s == KF_S_I32 || s == KF_S_U32, w64 = s == KF_S_I64 || s == KF_S_U64;
    switch (op) {
    case KF_OP_ADD: return w32 ? IH_ADD_W32 : w64 ? IH_ADD_W64 : s == KF_S_F32 ? IH_ADD_F32 : s == KF_S_F64 ? IH_ADD_F64 : IH_BINOP;
    case KF_OP_SUB: return w32 ? IH_SUB_W32 : w64 ? IH_SUB_W64 : s == KF_S_F32 ? IH_SUB_F32 : s == KF_S_F64 ? IH_SUB_F64 : IH_BINOP;
    case KF_OP_MUL: return w32 ? IH_MUL_W32 : w64 ? IH_MUL_W64 : s == KF_S_F32 ? IH_MUL_F32 : s == KF_S_F64 ? IH_MUL_F64 : IH_BINOP;
    case KF_OP_DIV: return s == KF_S_F32 ? IH_DIV_F32 : s == KF_S_F64 ? IH_DIV_F64 : s == KF_S_U32 ? IH_DIV_U32 : IH_BINOP;
    case KF_OP_REM: return s == KF_S_U32 ? IH_REM_U32 : IH_BINOP;
    case KF_OP_AND: return w32 ? IH_AND_W32 : w64 ? IH_AND_W64 : IH_BINOP;
    case KF_OP_OR: return w32 ? IH_OR_W32 : w64 ? IH_OR_W64 : IH_BINOP;
    case KF_OP_XOR: return w32 ? IH_XOR_W32 : w64 ? IH_XOR_W64 : IH_BINOP;
    case KF_OP_SHL: return w32 ? IH_SHL_W32 : IH_BINOP;
    case KF_OP_SHR: return s == KF_S_U32 ? IH_SHR_U32 : s == KF_S_I32 ? IH_SHR_I32 : IH_BINOP;
    default: return IH_BINOP;
    }
}

static uint16_t pick_cmp(kf_op op, kf_scalar s)
{
    static const uint16_t u32h[] = {IH_LT_U32, IH_LE_U32, IH_GT_U32, IH_GE_U32};
    static const uint16_t i32h[] = {IH_LT_I32, IH_LE_I32, IH_GT_I32, IH_GE_I32};
    static const uint16_t f32h[] = {IH_LT_F32, IH_LE_F32, IH_GT_F32, IH_GE_F32};
    bool ord = op >= KF_OP_LT && op <= KF_OP_GE;
    bool w32 = s == KF_S_I32 || s == KF_S_U32;
    if (op == KF_OP_EQ || op == KF_OP_NE) {
        if (w32) return op == KF_OP_EQ ? IH_EQ_W32 : IH_NE_W32;
        if (s == KF_S_F32) return op == KF_OP_EQ ? IH_EQ_F32 : IH_NE_F32;
    }
    if (ord && s == KF_S_U32) return u32h[op - KF_OP_LT];
    if (ord && s == KF_S_I32) return i32h[op - KF_OP_LT];
    if (ord && s == KF_S_F32) return f32h[op - KF_OP_LT];
    return IH_CMP;
}

static uint16_t pick_cvt(kf_scalar to, kf_scalar from, unsigned lanes)
{
    if (lanes != 1) return IH_CVT;
    bool i32 = from == KF_S_I32, u32 = from == KF_S_U32;
    bool to64 = to == KF_S_I64 || to == KF_S_U64, to32 = to == KF_S_I32 || to == KF_S_U32;
    if (from == KF_S_F16 && to == KF_S_F32) return IH_CVT_F16_F32;
    if (from == KF_S_F32 && to == KF_S_F16) return IH_CVT_F32_F16;
    if (u32 && to == KF_S_F32) return IH_CVT_U32_F32;
    if (i32 && to == KF_S_F32) return IH_CVT_I32_F32;
    if (u32 && to64) return IH_CVT_ZX_32_64;
    if (i32 && to64) return IH_CVT_SX_32_64;
    if ((from == KF_S_I64 || from == KF_S_U64) && to32) return IH_CVT_W64_W32;
    if ((i32 || u32) && to32) return IH_MOV4;
    return IH_CVT;
}

/* Copies move exactly the value's bytes: a 16-byte load of a slot just
 * written by a 4-byte store would stall on store forwarding. */
static uint16_t pick_mov(kf_type t)
{
    if (t.kind != KF_TK_SCALAR && t.kind != KF_TK_VECTOR) return IH_MOV;
    switch (kf_type_elem_bytes(t)) {
    case 1: return IH_MOV1;
    case 2: return IH_MOV2;
    case 4: return IH_MOV4;
    case 8: return IH_MOV8;
    default: return IH_MOV;
    }
}

static bool f32_unary(kf_builtin fn)
{
    return fn == KF_BI_EXP || fn == KF_BI_EXP2 || fn == KF_BI_LOG || fn == KF_BI_LOG2 || fn == KF_BI_SQRT ||
           fn == KF_BI_RSQRT || fn == KF_BI_SIN || fn == KF_BI_COS || fn == KF_BI_TANH || fn == KF_BI_ABS ||
           fn == KF_BI_FLOOR || fn == KF_BI_CEIL || fn == KF_BI_TRUNC || fn == KF_BI_ROUND;
}

static uint16_t pick_math(kf_builtin fn, kf_scalar s, unsigned lanes)
{
    if (lanes != 1) return IH_MATH;
    if (s == KF_S_F32 && f32_unary(fn)) return IH_MATH_F32;
    if (s == KF_S_F32 && fn == KF_BI_MIN) return IH_MIN_F32;
    if (s == KF_S_F32 && fn == KF_BI_MAX) return IH_MAX_F32;
    if (s == KF_S_F32 && fn == KF_BI_FMA) return IH_FMA_F32;
    if (s == KF_S_U32 && fn == KF_BI_MIN) return IH_MIN_U32;
    if (s == KF_S_U32 && fn == KF_BI_MAX) return IH_MAX_U32;
    return IH_MATH;
}

static kf_status bad_ir(kf_ictx *c, uint32_t i, const char *what)
{
    return kf_error_set_at(c->err, KF_ERR_USAGE, c->k->ins[i].loc,
                           "kernel %s: malformed core IR at instruction %u (%s): a lowering bug",
                           c->k->name, i, what);
}

/* Control markers jump where kf_ir_link's structure says (kf_ir_flow_of;
 * kf_interp_decode checked it with kf_ir_linked first). */
static void decode_flow(const kf_ir_kernel *k, uint32_t i, kf_idins *d)
{
    kf_ir_flow f = kf_ir_flow_of(k, i);
    switch (k->ins[i].op) {
    case KF_IR_IF: d->h = IH_IF, d->target = (f.mid ? f.mid : f.end) + 1; break;
    case KF_IR_ELSE:
    case KF_IR_BREAK: d->h = IH_JUMP, d->target = f.end + 1; break;
    case KF_IR_ENDLOOP: d->h = IH_LOOPJUMP, d->target = f.head + 1; break;
    case KF_IR_CONTINUE: d->h = IH_LOOPJUMP, d->target = (f.mid ? f.mid : f.head) + 1; break;
    default: d->h = IH_NOP; break;   /* LOOP, LATCH, ENDIF, NOP */
    }
}

static kf_scalar val_scalar(const kf_ictx *c, kf_val v) { return (kf_scalar)c->k->vals[v].type.scalar; }

/* LOAD, STORE, ATOMIC: element size and index type; the x32 fast paths. */
static void decode_buffer_op(const kf_ictx *c, const kf_ir_ins *in, kf_idins *d)
{
    d->h = in->op == KF_IR_LOAD ? IH_LOAD : in->op == KF_IR_STORE ? IH_STORE : IH_ATOMIC;
    d->s_in = val_scalar(c, in->a[1]);
    if (in->op == KF_IR_ATOMIC) {
        /* the element type is the buffer's, whatever `type` says */
        kf_type bt = c->k->vals[in->a[0]].type;
        d->s = bt.scalar, d->lanes = bt.lanes ? bt.lanes : 1;
        d->eshift = log2_bytes(kf_type_elem_bytes(kf_type_elem(bt)));
        return;
    }
    d->eshift = log2_bytes(kf_type_elem_bytes(in->type));
    /* a bool load takes do_load_store, which makes any nonzero byte 1 */
    if ((d->s_in == KF_S_U32 || d->s_in == KF_S_I32) && !(in->op == KF_IR_LOAD && d->s == KF_S_BOOL))
        d->h = in->op == KF_IR_LOAD ? IH_LOAD_X32 : IH_STORE_X32;
}

/* ALOAD, ASTORE (array index checked): shared arrays take the checked
 * handlers, local ones the x32 fast path when they can. eshift is the
 * accessed element's (a view of a shared array: the view's). */
static void decode_array_op(const kf_ictx *c, const kf_ir_ins *in, kf_idins *d)
{
    bool load = in->op == KF_IR_ALOAD;
    d->target = (uint32_t)in->imm;
    d->s_in = val_scalar(c, in->a[0]);
    d->eshift = log2_bytes(kf_type_elem_bytes(in->type));
    if (c->arrays[in->imm].shared) d->h = load ? IH_SLOAD : IH_SSTORE;
    else if (d->s_in == KF_S_U32 || d->s_in == KF_S_I32) d->h = load ? IH_ALOAD_X32 : IH_ASTORE_X32;
    else d->h = load ? IH_ALOAD : IH_ASTORE;
}

static void decode_intrin(const kf_ictx *c, const kf_ir_ins *in, kf_idins *d);

/* Decodes everything but control flow. */
static kf_status decode_op(kf_ictx *c, uint32_t i, uint32_t *nconst, kf_idins *d)
{
    const kf_ir_kernel *k = c->k;
    const kf_ir_ins *in = &k->ins[i];
    kf_scalar s = (kf_scalar)in->type.scalar;
    switch (in->op) {
    case KF_IR_CONST: {
        kf_islot *slot = &c->consts[*nconst];
        unsigned by = kf_scalar_bytes[s];
        for (unsigned l = 0; l < in->type.lanes; l++) kf_iop_set_lane(slot, by, l, in->imm);
        d->h = IH_CONST, d->target = (*nconst)++;
        break;
    }
    case KF_IR_PARAM:
        if (in->imm >= k->nparams) return bad_ir(c, i, "param index");
        d->h = IH_PARAM, d->target = (uint32_t)in->imm;
        break;
    case KF_IR_MOV: case KF_IR_BITCAST: case KF_IR_VIEW: d->h = pick_mov(in->type); break;
    case KF_IR_BINOP: d->h = in->type.lanes == 1 ? pick_binop((kf_op)in->sub, s) : pick_vbinop((kf_op)in->sub, s); break;
    case KF_IR_CMP: d->h = pick_cmp((kf_op)in->sub, s); break;
    case KF_IR_UNOP: d->h = in->sub == KF_OP_NOT ? IH_NOT : IH_UNOP; break;
    case KF_IR_CVT:
        d->s_in = val_scalar(c, in->a[0]);
        d->h = pick_cvt(s, (kf_scalar)d->s_in, in->type.lanes);
        break;
    case KF_IR_SELECT: {
        uint16_t m = pick_mov(in->type);
        d->h = m == IH_MOV4 ? IH_SELECT4 : m == IH_MOV8 ? IH_SELECT8 : IH_SELECT;
        break;
    }
    case KF_IR_MATH:
        d->s_in = val_scalar(c, in->a[0]);
        d->h = pick_math((kf_builtin)in->sub, s, in->type.lanes);
        break;
    case KF_IR_SPLAT: d->h = IH_SPLAT; break;
    case KF_IR_EXTRACT: case KF_IR_INSERT:
        if (in->imm >= 16) return bad_ir(c, i, "lane");
        d->h = in->op == KF_IR_EXTRACT ? IH_EXTRACT : IH_INSERT, d->target = (uint32_t)in->imm;
        if (in->op == KF_IR_EXTRACT && kf_scalar_bytes[s] == 4) d->h = IH_EXTRACT4;
        if (in->op == KF_IR_EXTRACT && kf_scalar_bytes[s] == 2) d->h = IH_EXTRACT2;
        break;
    case KF_IR_SREG:
        if (in->imm >= KF_SR_COUNT) return bad_ir(c, i, "sreg");
        d->h = IH_SREG, d->target = (uint32_t)in->imm;
        break;
    case KF_IR_LOAD: case KF_IR_STORE: case KF_IR_ATOMIC: decode_buffer_op(c, in, d); break;
    case KF_IR_ALOAD: case KF_IR_ASTORE:
        if (in->imm >= k->narrays) return bad_ir(c, i, "array index");
        decode_array_op(c, in, d);
        break;
    case KF_IR_SHFL: d->h = IH_SHFL; break;
    case KF_IR_VOTE: d->h = IH_VOTE; break;
    case KF_IR_INTRIN: decode_intrin(c, in, d); break;
    case KF_IR_BARRIER: d->h = IH_BARRIER; break;
    case KF_IR_RET: d->h = IH_RET; break;
    default: return bad_ir(c, i, "unknown op");
    }
    return KF_OK;
}

static bool is_flow(uint16_t op)
{
    return op == KF_IR_IF || op == KF_IR_ELSE || op == KF_IR_ENDIF || op == KF_IR_LOOP || op == KF_IR_LATCH ||
           op == KF_IR_ENDLOOP || op == KF_IR_BREAK || op == KF_IR_CONTINUE || op == KF_IR_NOP;
}

static bool is_value_type(kf_type t)
{
    return (t.kind == KF_TK_SCALAR || t.kind == KF_TK_VECTOR) && t.scalar > KF_S_NONE && t.scalar < KF_S_UINT &&
           t.lanes >= 1 && kf_type_elem_bytes(t) <= 16;
}

static bool is_buffer(const kf_ir_kernel *k, kf_val v)
{
    kf_type t = k->vals[v].type;
    return t.kind == KF_TK_BUFFER && t.scalar > KF_S_NONE && t.scalar < KF_S_UINT && kf_type_elem_bytes(t) <= 16;
}

/* An array access: a value type that is a power-of-two element; a local
 * array only as its own element type, a shared one also through a view. */
static bool array_access_ok(const kf_ir_kernel *k, const kf_ir_ins *in)
{
    if (in->imm >= k->narrays || !is_value_type(in->type)) return false;
    kf_type at = k->arrays[in->imm].type;
    uint32_t eb = kf_type_elem_bytes(in->type);
    if (eb & (eb - 1)) return false;
    return (at.flags & KF_TF_SHARED) || (at.scalar == in->type.scalar && at.lanes == in->type.lanes);
}

static bool is_vec(kf_type t, kf_scalar s, unsigned lanes)
{
    return (t.kind == KF_TK_VECTOR || t.kind == KF_TK_SCALAR) && t.scalar == s && t.lanes == lanes;
}

static bool is_index(const kf_ir_kernel *k, kf_val v)
{
    kf_type t = k->vals[v].type;
    return t.kind == KF_TK_SCALAR && (kf_scalar_class[t.scalar] == 'i' || kf_scalar_class[t.scalar] == 'u');
}

/* mma's fragments: A f16x8/bf16x8 with B of its type x4 and C f32x4, or
 * A i8x16/u8x16 with B i8x8/u8x8 and C i32x4; D is C's type. */
static bool mma_ok(const kf_ir_kernel *k, const kf_ir_ins *in)
{
    kf_type a = k->vals[in->a[0]].type, b = k->vals[in->a[1]].type, c = k->vals[in->a[2]].type;
    bool fl = is_vec(a, KF_S_F16, 8) || is_vec(a, KF_S_BF16, 8);
    bool in8 = is_vec(a, KF_S_I8, 16) || is_vec(a, KF_S_U8, 16);
    if (fl) return is_vec(b, (kf_scalar)a.scalar, 4) && is_vec(c, KF_S_F32, 4) && is_vec(in->type, KF_S_F32, 4);
    return in8 && (is_vec(b, KF_S_I8, 8) || is_vec(b, KF_S_U8, 8)) && is_vec(c, KF_S_I32, 4) &&
           is_vec(in->type, KF_S_I32, 4);
}

/* cp_async: a shared array, an element type of at most 16 bytes (a power
 * of two), the buffer of that element size, indices, a u32 byte count. */
static bool cp_async_ok(const kf_ir_kernel *k, const kf_ir_ins *in)
{
    uint32_t eb = kf_type_elem_bytes(in->type);
    if (!is_value_type(in->type) || (eb & (eb - 1)) || !is_buffer(k, in->a[1])) return false;
    if (kf_type_elem_bytes(kf_type_elem(k->vals[in->a[1]].type)) != eb) return false;
    if (!is_index(k, in->a[0]) || !is_index(k, in->a[2])) return false;
    return in->sub == KF_BI_CP_ASYNC || is_vec(k->vals[in->a[3]].type, KF_S_U32, 1);
}

/* INTRIN operands of the types kf_iop_intrin and interp_tensor.c read. */
static bool intrin_ok(const kf_ir_kernel *k, const kf_ir_ins *in)
{
    unsigned n, f;
    if (!kf_ir_intrin_info(in->sub, &n, &f)) return false;
    for (unsigned j = 0; j < n; j++)
        if (!in->a[j] || in->a[j] >= k->nvals) return false;
    if ((f & KF_II_ARRAY) && (in->imm >= k->narrays || !(k->arrays[in->imm].type.flags & KF_TF_SHARED))) return false;
    bool trans;
    unsigned mats = kf_builtin_ldmatrix((kf_builtin)in->sub, &trans);
    if (mats)
        return is_index(k, in->a[0]) && kf_scalar_bytes[in->type.scalar] == 2 && in->type.lanes == 2 * mats &&
               is_value_type(in->type) && in->dst;
    switch (in->sub) {
    case KF_BI_MMA: return in->dst && mma_ok(k, in);
    case KF_BI_CP_ASYNC: case KF_BI_CP_ASYNC_N: return !in->dst && cp_async_ok(k, in);
    case KF_BI_CP_ASYNC_COMMIT: case KF_BI_FENCE: case KF_BI_DEP_WAIT: case KF_BI_DEP_TRIGGER: return !in->dst;
    case KF_BI_CP_ASYNC_WAIT: return !in->dst && in->imm <= 255;
    case KF_BI_PREFETCH_L2:
        return !in->dst && is_buffer(k, in->a[0]) && is_vec(k->vals[in->a[1]].type, KF_S_U64, 1) &&
               is_vec(k->vals[in->a[2]].type, KF_S_U64, 1);
    default: break;
    }
    if (!is_value_type(in->type) || !in->dst) return false;
    for (unsigned j = 0; j < n; j++)
        if (!is_value_type(k->vals[in->a[j]].type) || kf_type_elem_bytes(k->vals[in->a[j]].type) > 8) return false;
    return true;
}

/* The handler of an INTRIN (intrin_ok checked it). */
static void decode_intrin(const kf_ictx *c, const kf_ir_ins *in, kf_idins *d)
{
    if (in->sub == KF_BI_MMA) d->h = IH_MMA;
    else if (kf_builtin_ldmatrix((kf_builtin)in->sub, NULL)) d->h = IH_LDSM, d->eshift = 1;
    else if (in->sub == KF_BI_CP_ASYNC || in->sub == KF_BI_CP_ASYNC_N) d->h = IH_CPASYNC;
    else if (in->sub == KF_BI_CP_ASYNC_COMMIT) d->h = IH_CPCOMMIT;
    else if (in->sub == KF_BI_CP_ASYNC_WAIT) d->h = IH_CPWAIT;
    else if (in->sub == KF_BI_FENCE) d->h = IH_NOP;   /* every access is done when it runs (interp.c) */
    else if (in->sub == KF_BI_DEP_WAIT || in->sub == KF_BI_DEP_TRIGGER) d->h = IH_NOP;   /* launches run one by one */
    else if (in->sub == KF_BI_PREFETCH_L2) d->h = IH_PREFETCH;   /* only its range is checked */
    else d->h = IH_INTRIN;
    if (d->h == IH_CPASYNC) d->eshift = log2_bytes(kf_type_elem_bytes(in->type));
    if (d->h == IH_PREFETCH) d->eshift = log2_bytes(kf_type_elem_bytes(kf_type_elem(c->k->vals[in->a[0]].type)));
    if (d->h == IH_LDSM || d->h == IH_CPASYNC || d->h == IH_CPWAIT) d->target = (uint32_t)in->imm;
    if (d->h == IH_LDSM || d->h == IH_CPASYNC) d->s_in = val_scalar(c, in->a[0]);
}

/* Types that keep every slot access inside its 16 bytes and every pointer
 * a buffer's: only PARAM, VIEW and MOV make buffer values. */
static bool types_ok(const kf_ir_kernel *k, const kf_ir_ins *in)
{
    kf_type t = in->type;
    switch (in->op) {
    case KF_IR_PARAM: return in->imm < k->nparams && kf_type_eq(k->vals[in->dst].type, k->params[in->imm].type);
    case KF_IR_VIEW: return is_buffer(k, in->a[0]) && is_buffer(k, in->dst);
    case KF_IR_MOV:
        return is_buffer(k, in->dst) == is_buffer(k, in->a[0]) && (is_buffer(k, in->dst) || is_value_type(t));
    case KF_IR_LOAD: case KF_IR_STORE: case KF_IR_ATOMIC: return is_buffer(k, in->a[0]) && is_value_type(t);
    case KF_IR_CVT: case KF_IR_MATH:
        return is_value_type(t) && kf_scalar_bytes[k->vals[in->a[0]].type.scalar] * t.lanes <= 16;
    case KF_IR_EXTRACT: case KF_IR_INSERT:
        return is_value_type(t) && (in->imm + 1) * kf_scalar_bytes[t.scalar] <= 16;
    case KF_IR_CONST: case KF_IR_BINOP: case KF_IR_CMP: case KF_IR_UNOP: case KF_IR_SELECT: case KF_IR_SPLAT:
    case KF_IR_BITCAST: case KF_IR_SHFL:
        return is_value_type(t);
    case KF_IR_ALOAD: case KF_IR_ASTORE: return array_access_ok(k, in);
    case KF_IR_INTRIN: return intrin_ok(k, in);
    default: return in->dst == 0 || !is_buffer(k, in->dst);
    }
}

/* Operators the lane-wise semantics (interp_ops.c) define for the op. */
static bool sub_ok(const kf_ir_ins *in)
{
    bool flt = kf_scalar_class[in->type.scalar] == 'f';
    switch (in->op) {
    case KF_IR_BINOP: return in->sub >= KF_OP_ADD && in->sub <= (flt ? KF_OP_DIV : KF_OP_SHR);
    case KF_IR_CMP: return in->sub >= KF_OP_EQ && in->sub <= KF_OP_GE;
    case KF_IR_UNOP: return in->sub == KF_OP_NEG || in->sub == KF_OP_NOT || in->sub == KF_OP_BNOT;
    default: return true;
    }
}

static kf_status check_operands(kf_ictx *c, uint32_t i)
{
    const kf_ir_ins *in = &c->k->ins[i];
    if (in->op >= KF_IR_OP_COUNT) return bad_ir(c, i, "op");
    if (in->dst >= c->k->nvals) return bad_ir(c, i, "dst");
    unsigned na = kf_ir_op_nargs[in->op];
    if (in->op == KF_IR_ATOMIC && in->sub != KF_BI_ATOMIC_CAS) na = 3;
    if (in->op == KF_IR_MATH) na = 1;
    unsigned iflags;
    if (in->op == KF_IR_INTRIN && !kf_ir_intrin_info(in->sub, &na, &iflags)) return bad_ir(c, i, "intrinsic");
    for (unsigned j = 0; j < na; j++)
        if (!in->a[j] || in->a[j] >= c->k->nvals) return bad_ir(c, i, "operand");
    for (unsigned j = na; j < 4; j++)
        if (in->a[j] >= c->k->nvals) return bad_ir(c, i, "operand");
    if (!types_ok(c->k, in)) return bad_ir(c, i, "types");
    if (!sub_ok(in)) return bad_ir(c, i, "operator");
    return KF_OK;
}

kf_status kf_interp_decode(kf_ictx *c)
{
    const kf_ir_kernel *k = c->k;
    if (!kf_ir_linked(k))
        return kf_error_set_at(c->err, KF_ERR_USAGE, k->loc,
                               "kernel %s: malformed core IR: control markers not paired by kf_ir_link: a lowering bug",
                               k->name);
    kf_status st = KF_OK;
    uint32_t nconst = 0;
    for (uint32_t i = 0; i < k->nins && st == KF_OK; i++) {
        const kf_ir_ins *in = &k->ins[i];
        kf_idins *d = &c->code[i];
        st = check_operands(c, i);
        if (st) break;
        *d = (kf_idins){.sub = in->sub, .s = in->type.scalar, .lanes = in->type.lanes ? in->type.lanes : 1,
                        .dst = in->dst, .a = {in->a[0], in->a[1], in->a[2], in->a[3]}, .src = i};
        if (is_flow(in->op)) decode_flow(k, i, d);
        else st = decode_op(c, i, &nconst, d);
    }
    c->code[k->nins] = (kf_idins){.h = IH_END, .src = k->nins ? k->nins - 1 : 0};
    return st;
}

/* ---- running one thread ---------------------------------------------------- */

/* Reads an index operand; false when negative (signed types). */
static inline bool read_index(const kf_islot *v, uint8_t s, uint64_t *idx)
{
    switch (s) {
    case KF_S_U32: *idx = v->u32[0]; return true;
    case KF_S_I32: *idx = (uint64_t)(int64_t)v->i32[0]; return v->i32[0] >= 0;
    case KF_S_U64: *idx = v->u64[0]; return true;
    case KF_S_I64: *idx = v->u64[0]; return v->i64[0] >= 0;
    default: {
        int64_t x = kf_bits_to_i64((kf_scalar)s, kf_iop_lane(v, kf_scalar_bytes[s], 0));
        *idx = (uint64_t)x;
        return x >= 0 || kf_scalar_class[s] != 'i';
    }
    }
}

static void index_text(char *buf, size_t n, const kf_islot *v, uint8_t s)
{
    uint64_t bits = kf_iop_lane(v, kf_scalar_bytes[s], 0);
    if (kf_scalar_class[s] == 'i') snprintf(buf, n, "%lld", (long long)kf_bits_to_i64((kf_scalar)s, bits));
    else snprintf(buf, n, "%llu", (unsigned long long)bits);
}

static const char *const mem_verb[] = {"load", "store", "atomic"};

static kf_status buffer_fault(kf_ictx *c, kf_ithread *t, const kf_idins *d, int verb)
{
    const kf_islot *R = t->R;
    char ix[32];
    index_text(ix, sizeof ix, &R[d->a[1]], d->s_in);
    uint64_t len = R[d->a[0]].u64[1] >> d->eshift;
    const kf_ir_param *bp = c->bufparam[d->a[0]];
    const char *name = bp ? bp->name : "buffer";
    const char *what = verb == 2 ? kf_builtin_names[d->sub] : mem_verb[verb];
    uint32_t ps = bp ? (uint32_t)__builtin_ctz(kf_type_elem_bytes(bp->type)) : d->eshift;
    if (ps != d->eshift)   /* through a view of other elements: say both lengths */
        return kf_interp_fault(c, t, d->src, "out-of-bounds %s of %s[%s] through a view of %u-byte elements "
                               "(length %llu; %s holds %llu elements of %u bytes)", what, name, ix, 1u << d->eshift,
                               (unsigned long long)len, name, (unsigned long long)(R[d->a[0]].u64[1] >> ps), 1u << ps);
    return kf_interp_fault(c, t, d->src, "out-of-bounds %s of %s[%s] (length %llu)", what, name, ix,
                           (unsigned long long)len);
}

static kf_status array_fault(kf_ictx *c, kf_ithread *t, const kf_idins *d, bool store, bool unwritten)
{
    const kf_iarray *ar = &c->arrays[d->target];
    kf_type at = c->k->arrays[d->target].type, vt = c->k->ins[d->src].type;
    if (d->h == IH_LDSM) vt = kf_type_elem(vt);   /* rows of 16-bit elements */
    char name[160], tb[48];
    if (at.scalar != vt.scalar || at.lanes != vt.lanes)   /* through a view */
        snprintf(name, sizeof name, "(%s as %s)", c->k->arrays[d->target].name, kf_type_str(vt, tb, sizeof tb));
    else
        snprintf(name, sizeof name, "%s", c->k->arrays[d->target].name);
    char ix[32];
    index_text(ix, sizeof ix, &t->R[d->a[0]], d->s_in);
    if (unwritten && ar->shared)
        return kf_interp_fault(c, t, d->src, "read of shared array element %s[%s] before any thread of the block wrote it",
                               name, ix);
    if (unwritten)
        return kf_interp_fault(c, t, d->src, "read of local array element %s[%s] before it was written", name, ix);
    return kf_interp_fault(c, t, d->src, "out-of-bounds %s of %s array %s[%s] (length %u)", store ? "store" : "load",
                           ar->shared ? "shared" : "local", name, ix, ar->bytes >> d->eshift);
}

static kf_status intrin_fault(kf_ictx *c, kf_ithread *t, const kf_idins *d, int why)
{
    unsigned at = d->sub == KF_BI_BFI ? 2 : 1;
    uint32_t v = t->R[d->a[why == IOP_POS255 ? at : at + 1]].u32[0];
    return kf_interp_fault(c, t, d->src, "%s bit %s %u is over 255 (undefined; the field must lie in 0..255)",
                           kf_builtin_names[d->sub], why == IOP_POS255 ? "position" : "length", v);
}

static kf_status div_fault(kf_ictx *c, kf_ithread *t, const kf_idins *d, int why)
{
    return kf_interp_fault(c, t, d->src, "integer %s by zero", why == IOP_REM0 ? "remainder" : "division");
}

/* f32 bits with a subnormal taken as zero of its sign. */
static uint32_t ftz_f32(uint32_t b) { return (b & 0x7f800000u) ? b : (b & 0x80000000u); }

/* atomic_add on f32 elements as PTX atom.global.add.f32 (all atomics are on
 * buffers, global memory): subnormal inputs (the element and the operand)
 * and a subnormal result flush to zero of their sign. f64 and f16x2 adds
 * keep subnormals (atom.add.f64, atom.add.noftz.f16x2). */
static void atomic_add_f32_ftz(kf_islot *nw, const kf_islot *old, const kf_islot *v)
{
    uint32_t a = ftz_f32(old->u32[0]), b = ftz_f32(v->u32[0]), r;
    float fa, fb, fr;
    memcpy(&fa, &a, 4);
    memcpy(&fb, &b, 4);
    fr = fa + fb;
    memcpy(&r, &fr, 4);
    nw->u32[0] = ftz_f32(r);
}

static kf_status do_atomic(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    kf_islot *R = t->R;
    uint64_t idx;
    uint32_t esz = 1u << d->eshift;
    if (!read_index(&R[d->a[1]], d->s_in, &idx) || idx >= (R[d->a[0]].u64[1] >> d->eshift))
        return buffer_fault(c, t, d, 2);
    uint8_t *p = (uint8_t *)(uintptr_t)R[d->a[0]].u64[0] + (idx << d->eshift);
    kf_islot old = {{0, 0}}, nw;
    memcpy(&old, p, esz);
    const kf_islot *v = &R[d->a[2]];
    switch (d->sub) {
    case KF_BI_ATOMIC_ADD:
        if (d->s == KF_S_F32 && d->lanes == 1) atomic_add_f32_ftz(&nw, &old, v);
        else kf_iop_binop(KF_OP_ADD, (kf_scalar)d->s, d->lanes, &nw, &old, v);
        break;
    case KF_BI_ATOMIC_MIN: kf_iop_math(KF_BI_MIN, (kf_scalar)d->s, (kf_scalar)d->s, d->lanes, &nw, &old, v, NULL); break;
    case KF_BI_ATOMIC_MAX: kf_iop_math(KF_BI_MAX, (kf_scalar)d->s, (kf_scalar)d->s, d->lanes, &nw, &old, v, NULL); break;
    case KF_BI_ATOMIC_EXCH: nw = *v; break;
    case KF_BI_ATOMIC_CAS: nw = memcmp(&old, v, esz) == 0 ? R[d->a[3]] : old; break;
    default: return bad_ir(c, d->src, "atomic");
    }
    memcpy(p, &nw, esz);
    R[d->dst] = old;
    return KF_OK;
}

static kf_status do_load_store(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    kf_islot *R = t->R;
    uint64_t idx;
    if (!read_index(&R[d->a[1]], d->s_in, &idx) || idx >= (R[d->a[0]].u64[1] >> d->eshift))
        return buffer_fault(c, t, d, d->h == IH_STORE);
    uint8_t *p = (uint8_t *)(uintptr_t)R[d->a[0]].u64[0] + (idx << d->eshift);
    if (d->h == IH_LOAD) {
        memcpy(&R[d->dst], p, 1u << d->eshift);
        if (d->s == KF_S_BOOL) R[d->dst].u8[0] = R[d->dst].u8[0] != 0;   /* a byte seen as a bool: nonzero is true */
    } else {
        memcpy(p, &R[d->a[2]], 1u << d->eshift);
    }
    return KF_OK;
}

/* prefetch_l2: a hint, so nothing happens but the check that its range
 * (bytes a1 .. a1 + a2 of the buffer) lies in the buffer, as a load's. */
static kf_status do_prefetch(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    const kf_islot *R = t->R;
    uint64_t off = R[d->a[1]].u64[0], n = R[d->a[2]].u64[0], len = R[d->a[0]].u64[1];
    if (!n || (off <= len && n <= len - off)) return KF_OK;
    const kf_ir_param *bp = c->bufparam[d->a[0]];
    return kf_interp_fault(c, t, d->src, "out-of-bounds prefetch_l2 of %s: elements %llu to %llu, the buffer has %llu "
                           "(the range must lie in the buffer, as a load's index)", bp ? bp->name : "buffer",
                           (unsigned long long)(off >> d->eshift), (unsigned long long)((off >> d->eshift) + (n >> d->eshift) - 1),
                           (unsigned long long)(len >> d->eshift));
}

/* Copies one array or buffer element between memory and a slot, sizes
 * fixed so the compiler inlines them. */
static inline void copy_elem(bool load, uint8_t *p, kf_islot *v, unsigned eshift)
{
    switch (eshift) {
    case 0: if (load) memcpy(v, p, 1); else memcpy(p, v, 1); break;
    case 1: if (load) memcpy(v, p, 2); else memcpy(p, v, 2); break;
    case 2: if (load) memcpy(v, p, 4); else memcpy(p, v, 4); break;
    case 3: if (load) memcpy(v, p, 8); else memcpy(p, v, 8); break;
    default: if (load) memcpy(v, p, 16); else memcpy(p, v, 16); break;
    }
}

/* Local array access (any index type). */
static kf_status do_array(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    kf_islot *R = t->R;
    const kf_iarray *ar = &c->arrays[d->target];
    uint64_t idx;
    bool store = d->h == IH_ASTORE;
    if (!read_index(&R[d->a[0]], d->s_in, &idx) || idx >= ar->len) return array_fault(c, t, d, store, false);
    uint8_t *p = t->local + ar->off + (idx << ar->eshift);
    if (store) {
        memcpy(p, &R[d->a[1]], 1u << ar->eshift);
        t->written[ar->woff + idx] = 1;
    } else {
        if (!t->written[ar->woff + idx]) return array_fault(c, t, d, false, true);
        memcpy(&R[d->dst], p, 1u << ar->eshift);
    }
    return KF_OK;
}

static uint32_t lowest_lane(uint32_t mask)
{
    uint32_t i = 0;
    while (i < 31 && !(mask >> i & 1)) i++;
    return i;
}

/* Accesses by threads a and b (linear ids) with their warps' warp-op counts
 * at the time: unordered unless in one warp with a warp builtin between.
 * Both are in the current barrier epoch. */
static inline bool unordered(uint32_t a, uint32_t a_ops, uint32_t b, uint32_t b_ops)
{
    return a != b && (a / 32 != b / 32 || a_ops == b_ops);
}

/* Records the race (the first of the block is reported, at the block's
 * next sync check) and lets the thread go on. */
static void shared_race(kf_ictx *c, kf_ithread *t, const kf_idins *d, uint64_t idx, uint32_t elem, bool first_write,
                        uint32_t first, bool store)
{
    const kf_ithread *o = &c->th[first];
    char at[300] = "";
    if (!first_write && c->unwritten_at == elem + 1)
        c->race_pending = false;   /* the pending unwritten read raced with this write: say so */
    if (first_write) {
        kf_loc l = c->k->ins[c->shmeta[elem].wins].loc;
        snprintf(at, sizeof at, " at %s:%u:%u", l.file ? l.file : "<unknown>", l.line, l.col);
    }
    kf_interp_fault(c, t, d->src,
                    "race on shared %s[%llu]: %s by thread (%u,%u,%u)%s and %s by thread (%u,%u,%u) with no barrier "
                    "between", c->k->arrays[d->target].name, (unsigned long long)idx, first_write ? "written" : "read",
                    o->tid[0], o->tid[1], o->tid[2], at, store ? "written" : "read", t->tid[0], t->tid[1], t->tid[2]);
    if (!c->race_pending) c->race_pending = true, c->unwritten_at = 0;
}

/* Records a read of an element no thread of the block has written (kept
 * pending: a write by another thread later in the epoch makes it a race). */
static void unwritten_read(kf_ictx *c, kf_ithread *t, const kf_idins *d, uint32_t elem)
{
    if (c->race_pending) return;
    array_fault(c, t, d, false, true);
    c->race_pending = true, c->unwritten_at = elem + 1;
}

/* A reader of m in this epoch that a write by thread `me` (warp-op count
 * ops) is unordered with, or KF_SH_NONE. */
static uint32_t racing_reader(const kf_ictx *c, const kf_ishmeta *m, uint32_t me, uint32_t ops)
{
    if (m->repoch != c->epoch) return KF_SH_NONE;
    if (m->rwarp != me / 32) return m->rwarp * 32u + lowest_lane(m->rmask);
    if (m->other != KF_SH_NONE) return m->other;
    uint32_t others = m->rmask & ~(1u << (me % 32));
    return m->rops == ops && others ? m->rwarp * 32u + lowest_lane(others) : KF_SH_NONE;
}

static void note_read(const kf_ictx *c, kf_ishmeta *m, uint32_t me, uint32_t ops)
{
    uint32_t bit = 1u << (me % 32);
    if (m->repoch != c->epoch) {
        m->repoch = c->epoch, m->rops = ops, m->rmask = bit;
        m->rwarp = (uint16_t)(me / 32), m->other = KF_SH_NONE;
    } else if (m->rwarp != me / 32) {
        if (m->other == KF_SH_NONE) m->other = (uint16_t)me;
    } else if (m->rops != ops) {
        m->rops = ops, m->rmask = bit;   /* earlier reads are ordered before anything now */
    } else {
        m->rmask |= bit;
    }
}

/* An access to a unit a cp_async is still copying into. */
static kf_status pending_fault(kf_ictx *c, kf_ithread *t, const kf_idins *d, uint64_t idx, uint32_t elem, bool store)
{
    const kf_ithread *o = &c->th[c->shmeta[elem].pend - 1];
    kf_loc l = c->k->loc;
    bool open = false;   /* the copy's group is not committed yet: no wait can complete it */
    for (size_t i = 0; i < o->copies.len; i++) {
        const kf_icopy *cp = &o->copies.data[i];
        if (elem >= cp->unit && elem < cp->unit + (16u >> c->arrays[cp->arr].ushift))
            l = c->k->ins[cp->ins].loc, open = cp->group == o->groups;
    }
    return kf_interp_fault(c, t, d->src,
                           "%s of shared %s[%llu] before the cp_async into it (by thread (%u,%u,%u) at %s:%u:%u) was "
                           "waited for%s in that thread%s first", store ? "write" : "read",
                           c->k->arrays[d->target].name, (unsigned long long)idx, o->tid[0], o->tid[1], o->tid[2],
                           l.file ? l.file : "<unknown>", l.line, l.col,
                           open ? " (its group was never committed): cp_async_commit() then cp_async_wait" : ": cp_async_wait",
                           o == t ? "" : ", then a barrier,");
}

/* One unit (kf_iarray.ushift bytes) of a shared access: a read of a unit
 * no thread of the block has written, and races (kf_ishmeta). */
static void shared_unit(kf_ictx *c, kf_ithread *t, const kf_idins *d, uint64_t idx, uint32_t elem, bool store)
{
    kf_ishmeta *m = &c->shmeta[elem];
    uint32_t me = t->lin, ops = c->warpops[me / 32];
    if (!store && m->wepoch < c->epoch0) unwritten_read(c, t, d, elem);
    else if (m->wepoch == c->epoch &&
             (m->landed ? m->writer != me : unordered(m->writer, m->wops, me, ops)))
        shared_race(c, t, d, idx, elem, true, m->writer, store);
    if (!store) {
        note_read(c, m, me, ops);
        return;
    }
    uint32_t r = racing_reader(c, m, me, ops);
    if (r != KF_SH_NONE) shared_race(c, t, d, idx, elem, false, r, true);
    m->wepoch = c->epoch, m->wops = ops, m->wins = d->src, m->writer = (uint16_t)me, m->landed = false;
}

kf_status kf_interp_shared_units(kf_ictx *c, kf_ithread *t, const kf_idins *d, uint64_t idx, uint32_t unit,
                                 uint32_t units, bool store)
{
    for (uint32_t u = 0; u < units; u++)
        if (c->shmeta[unit + u].pend) return pending_fault(c, t, d, idx, unit + u, store);
    for (uint32_t u = 0; u < units; u++) shared_unit(c, t, d, idx, unit + u, store);
    return KF_OK;
}

/* Shared array access, through a view or not: bounds in the accessed
 * element type, then the checks of every unit the element covers. Out of
 * line: inlined into the dispatch loop it cost every IR instruction an
 * extra machine instruction. */
__attribute__((noinline)) static kf_status do_shared(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    kf_islot *R = t->R;
    const kf_iarray *ar = &c->arrays[d->target];
    bool store = d->h == IH_SSTORE;
    uint64_t idx;
    if (!read_index(&R[d->a[0]], d->s_in, &idx) || idx >= (ar->bytes >> d->eshift)) return array_fault(c, t, d, store, false);
    uint32_t first = ar->woff + (uint32_t)((idx << d->eshift) >> ar->ushift), units = 1u << (d->eshift - ar->ushift);
    kf_status st = kf_interp_shared_units(c, t, d, idx, first, units, store);
    if (st) return st;
    copy_elem(!store, c->shared + ar->off + (idx << d->eshift), &R[store ? d->a[1] : d->dst], d->eshift);
    if (!store && d->s == KF_S_BOOL) R[d->dst].u8[0] = R[d->dst].u8[0] != 0;   /* through a view: nonzero is true */
    return KF_OK;
}

static uint32_t sreg_value(const kf_ictx *c, const kf_ithread *t, uint32_t r)
{
    switch (r) {
    case KF_SR_TID_X: case KF_SR_TID_Y: case KF_SR_TID_Z: return t->tid[r - KF_SR_TID_X];
    case KF_SR_CTAID_X: case KF_SR_CTAID_Y: case KF_SR_CTAID_Z: return c->ctaid[r - KF_SR_CTAID_X];
    case KF_SR_NTID_X: case KF_SR_NTID_Y: case KF_SR_NTID_Z: return c->block[r - KF_SR_NTID_X];
    case KF_SR_NCTAID_X: case KF_SR_NCTAID_Y: case KF_SR_NCTAID_Z: return c->grid[r - KF_SR_NCTAID_X];
    default: return t->lin & 31;
    }
}

/* The generic handlers, out of the hot loop. */
static kf_status run_generic(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    kf_islot *R = t->R;
    kf_scalar s = (kf_scalar)d->s;
    int st = IOP_OK;
    switch (d->h) {
    case IH_BINOP: st = kf_iop_binop((kf_op)d->sub, s, d->lanes, &R[d->dst], &R[d->a[0]], &R[d->a[1]]); break;
    case IH_CMP: kf_iop_cmp((kf_op)d->sub, s, &R[d->dst], &R[d->a[0]], &R[d->a[1]]); break;
    case IH_UNOP: kf_iop_unop((kf_op)d->sub, s, d->lanes, &R[d->dst], &R[d->a[0]]); break;
    case IH_CVT: kf_iop_cvt(s, (kf_scalar)d->s_in, d->lanes, &R[d->dst], &R[d->a[0]]); break;
    case IH_MATH:
        st = kf_iop_math((kf_builtin)d->sub, s, (kf_scalar)d->s_in, d->lanes, &R[d->dst], &R[d->a[0]],
                         d->a[1] ? &R[d->a[1]] : NULL, d->a[2] ? &R[d->a[2]] : NULL);
        break;
    case IH_SPLAT: {
        unsigned by = kf_scalar_bytes[s];
        uint64_t x = kf_iop_lane(&R[d->a[0]], by, 0);
        for (unsigned l = 0; l < d->lanes; l++) kf_iop_set_lane(&R[d->dst], by, l, x);
        break;
    }
    case IH_EXTRACT: {
        unsigned by = kf_scalar_bytes[s];
        kf_iop_set_lane(&R[d->dst], by, 0, kf_iop_lane(&R[d->a[0]], by, d->target));
        break;
    }
    case IH_INSERT: {
        unsigned by = kf_scalar_bytes[s];
        kf_islot v = R[d->a[0]];
        kf_iop_set_lane(&v, by, d->target, kf_iop_lane(&R[d->a[1]], by, 0));
        R[d->dst] = v;
        break;
    }
    case IH_SREG: R[d->dst].u32[0] = sreg_value(c, t, d->target); break;
    case IH_LOAD: case IH_STORE: return do_load_store(c, t, d);
    case IH_ALOAD: case IH_ASTORE: return do_array(c, t, d);
    case IH_ATOMIC: return do_atomic(c, t, d);
    case IH_INTRIN: {
        const kf_islot *a[4] = {&R[d->a[0]], &R[d->a[1]], &R[d->a[2]], &R[d->a[3]]};
        kf_scalar sin[4];
        for (int j = 0; j < 4; j++) sin[j] = (kf_scalar)c->k->vals[d->a[j]].type.scalar;
        st = kf_iop_intrin((kf_builtin)d->sub, s, &R[d->dst], a, sin);
        return st ? intrin_fault(c, t, d, st) : KF_OK;
    }
    case IH_CPASYNC: case IH_CPCOMMIT: case IH_CPWAIT: return kf_interp_async(c, t, d);
    case IH_PREFETCH: return do_prefetch(c, t, d);
    default: kf_unreachable("interp handler");
    }
    return st ? div_fault(c, t, d, st) : KF_OK;
}

static kf_status over_budget(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    return kf_interp_over_budget(c, t, d->src);
}

#define BIN(H, F, OP) case H: R[d->dst].F[0] = R[d->a[0]].F[0] OP R[d->a[1]].F[0]; break;
#define VBIN(H, OP) case H: { \
    kf_islot r_ = {{0, 0}}; \
    for (unsigned l_ = 0; l_ < d->lanes; l_++) r_.f32[l_] = R[d->a[0]].f32[l_] OP R[d->a[1]].f32[l_]; \
    R[d->dst] = r_; \
    break; }
#define CMP(H, F, OP) case H: R[d->dst].u8[0] = R[d->a[0]].F[0] OP R[d->a[1]].F[0]; break;

kf_status kf_interp_thread(kf_ictx *c, kf_ithread *t)
{
    kf_islot *R = t->R;
    const kf_idins *code = c->code;
    uint32_t pc = t->pc;
    uint64_t steps = 0;
    kf_status st = KF_OK;
    for (;;) {
        const kf_idins *d = &code[pc];
        steps++;
        switch (d->h) {
        case IH_NOP: break;
        case IH_END: steps--; t->state = KF_TS_DONE; st = kf_interp_async_end(c, t); goto out;   /* not an IR instruction */
        case IH_RET: t->state = KF_TS_DONE; st = kf_interp_async_end(c, t); goto out;
        case IH_JUMP: pc = d->target; continue;
        case IH_LOOPJUMP:
            if (c->steps + steps > c->limit) { st = over_budget(c, t, d); goto out; }
            pc = d->target;
            continue;
        case IH_IF: if (!R[d->a[0]].u8[0]) { pc = d->target; continue; } break;
        case IH_CONST: R[d->dst] = c->consts[d->target]; break;
        case IH_PARAM: R[d->dst] = c->params[d->target]; break;
        case IH_MOV: R[d->dst] = R[d->a[0]]; break;
        case IH_SELECT: R[d->dst] = R[d->a[0]].u8[0] ? R[d->a[1]] : R[d->a[2]]; break;
        case IH_SHFL: case IH_VOTE: case IH_MMA: case IH_LDSM: t->state = KF_TS_WARP; goto out;
        case IH_BARRIER: t->state = KF_TS_BARRIER; goto out;
        BIN(IH_ADD_W32, u32, +) BIN(IH_SUB_W32, u32, -) BIN(IH_MUL_W32, u32, *)
        BIN(IH_AND_W32, u32, &) BIN(IH_OR_W32, u32, |) BIN(IH_XOR_W32, u32, ^)
        BIN(IH_ADD_W64, u64, +) BIN(IH_SUB_W64, u64, -) BIN(IH_MUL_W64, u64, *)
        BIN(IH_AND_W64, u64, &) BIN(IH_OR_W64, u64, |) BIN(IH_XOR_W64, u64, ^)
        BIN(IH_ADD_F32, f32, +) BIN(IH_SUB_F32, f32, -) BIN(IH_MUL_F32, f32, *) BIN(IH_DIV_F32, f32, /)
        BIN(IH_ADD_F64, f64, +) BIN(IH_SUB_F64, f64, -) BIN(IH_MUL_F64, f64, *) BIN(IH_DIV_F64, f64, /)
        case IH_SHL_W32: {
            uint32_t n = R[d->a[1]].u32[0];
            R[d->dst].u32[0] = n >= 32 ? 0 : R[d->a[0]].u32[0] << n;
            break;
        }
        case IH_SHR_U32: {
            uint32_t n = R[d->a[1]].u32[0];
            R[d->dst].u32[0] = n >= 32 ? 0 : R[d->a[0]].u32[0] >> n;
            break;
        }
        case IH_SHR_I32: {
            uint32_t n = R[d->a[1]].u32[0], x = R[d->a[0]].u32[0];
            uint32_t fill = (x >> 31) ? UINT32_MAX : 0;
            if (n >= 32) R[d->dst].u32[0] = fill;
            else R[d->dst].u32[0] = n ? (x >> n) | (fill << (32 - n)) : x;
            break;
        }
        CMP(IH_LT_U32, u32, <) CMP(IH_LE_U32, u32, <=) CMP(IH_GT_U32, u32, >) CMP(IH_GE_U32, u32, >=)
        CMP(IH_EQ_W32, u32, ==) CMP(IH_NE_W32, u32, !=)
        CMP(IH_LT_I32, i32, <) CMP(IH_LE_I32, i32, <=) CMP(IH_GT_I32, i32, >) CMP(IH_GE_I32, i32, >=)
        CMP(IH_LT_F32, f32, <) CMP(IH_LE_F32, f32, <=) CMP(IH_GT_F32, f32, >) CMP(IH_GE_F32, f32, >=)
        CMP(IH_EQ_F32, f32, ==) CMP(IH_NE_F32, f32, !=)
        case IH_CVT_F16_F32: R[d->dst].f32[0] = (float)kf_f16_to_double(R[d->a[0]].u16[0]); break;
        case IH_CVT_F32_F16: R[d->dst].u16[0] = kf_f16_from_double(R[d->a[0]].f32[0]); break;
        case IH_CVT_U32_F32: R[d->dst].f32[0] = (float)R[d->a[0]].u32[0]; break;
        case IH_CVT_I32_F32: R[d->dst].f32[0] = (float)R[d->a[0]].i32[0]; break;
        case IH_CVT_ZX_32_64: R[d->dst].u64[0] = R[d->a[0]].u32[0]; break;
        case IH_CVT_SX_32_64: R[d->dst].i64[0] = R[d->a[0]].i32[0]; break;
        case IH_CVT_W64_W32: R[d->dst].u32[0] = (uint32_t)R[d->a[0]].u64[0]; break;
        case IH_MIN_F32: R[d->dst].f32[0] = (float)kf_fmin(R[d->a[0]].f32[0], R[d->a[1]].f32[0]); break;
        case IH_MAX_F32: R[d->dst].f32[0] = (float)kf_fmax(R[d->a[0]].f32[0], R[d->a[1]].f32[0]); break;
        case IH_FMA_F32: R[d->dst].f32[0] = fmaf(R[d->a[0]].f32[0], R[d->a[1]].f32[0], R[d->a[2]].f32[0]); break;
        case IH_MIN_U32: {
            uint32_t x = R[d->a[0]].u32[0], y = R[d->a[1]].u32[0];
            R[d->dst].u32[0] = x < y ? x : y;
            break;
        }
        case IH_MAX_U32: {
            uint32_t x = R[d->a[0]].u32[0], y = R[d->a[1]].u32[0];
            R[d->dst].u32[0] = x < y ? y : x;
            break;
        }
        case IH_NOT: R[d->dst].u8[0] = !R[d->a[0]].u8[0]; break;
        VBIN(IH_ADD_F32V, +) VBIN(IH_SUB_F32V, -) VBIN(IH_MUL_F32V, *) VBIN(IH_DIV_F32V, /)
        case IH_DIV_U32: case IH_REM_U32: {
            uint32_t x = R[d->a[0]].u32[0], y = R[d->a[1]].u32[0];
            if (!y) {
                st = div_fault(c, t, d, d->h == IH_DIV_U32 ? IOP_DIV0 : IOP_REM0);
                goto out;
            }
            R[d->dst].u32[0] = d->h == IH_DIV_U32 ? x / y : x % y;
            break;
        }
        case IH_EXTRACT2: R[d->dst].u16[0] = R[d->a[0]].u16[d->target]; break;
        case IH_EXTRACT4: R[d->dst].u32[0] = R[d->a[0]].u32[d->target]; break;
        case IH_ALOAD_X32: case IH_ASTORE_X32: {
            const kf_iarray *ar = &c->arrays[d->target];
            bool store = d->h == IH_ASTORE_X32;
            uint64_t idx = d->s_in == KF_S_I32 ? (uint64_t)(int64_t)R[d->a[0]].i32[0] : R[d->a[0]].u32[0];
            if (idx >= ar->len || (!store && !t->written[ar->woff + idx])) {
                st = array_fault(c, t, d, store, idx < ar->len);
                goto out;
            }
            uint8_t *p = t->local + ar->off + (idx << ar->eshift);
            copy_elem(!store, p, &R[store ? d->a[1] : d->dst], ar->eshift);
            if (store) t->written[ar->woff + idx] = 1;
            break;
        }
        case IH_SLOAD: case IH_SSTORE:
            st = do_shared(c, t, d);
            if (st) goto out;
            break;
        case IH_MOV1: R[d->dst].u8[0] = R[d->a[0]].u8[0]; break;
        case IH_MOV2: R[d->dst].u16[0] = R[d->a[0]].u16[0]; break;
        case IH_MOV4: R[d->dst].u32[0] = R[d->a[0]].u32[0]; break;
        case IH_MOV8: R[d->dst].u64[0] = R[d->a[0]].u64[0]; break;
        case IH_SELECT4: R[d->dst].u32[0] = R[d->a[R[d->a[0]].u8[0] ? 1 : 2]].u32[0]; break;
        case IH_SELECT8: R[d->dst].u64[0] = R[d->a[R[d->a[0]].u8[0] ? 1 : 2]].u64[0]; break;
        case IH_MATH_F32: R[d->dst].f32[0] = kf_iop_math_f32((kf_builtin)d->sub, R[d->a[0]].f32[0]); break;
        case IH_LOAD_X32: case IH_STORE_X32: {
            /* a negative i32 index sign-extends to a huge u64: out of bounds */
            uint64_t idx = d->s_in == KF_S_I32 ? (uint64_t)(int64_t)R[d->a[1]].i32[0] : R[d->a[1]].u32[0];
            const kf_islot *b = &R[d->a[0]];
            if (idx >= (b->u64[1] >> d->eshift)) {
                st = buffer_fault(c, t, d, d->h == IH_STORE_X32);
                goto out;
            }
            uint8_t *p = (uint8_t *)(uintptr_t)b->u64[0] + (idx << d->eshift);
            kf_islot *v = &R[d->h == IH_LOAD_X32 ? d->dst : d->a[2]];
            copy_elem(d->h == IH_LOAD_X32, p, v, d->eshift);
            break;
        }
        default:
            st = run_generic(c, t, d);
            if (st) goto out;
            break;
        }
        pc++;
    }
out:
    t->pc = pc;
    c->steps += steps;
    return st;
}
