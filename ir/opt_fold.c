/* What one instruction computes when some of its operands are known (the
 * instruction-local half of the optimiser, ir/opt.h): constant folding,
 * algebraic identities and strength reduction.
 *
 * Folding runs the interpreter's own lane semantics (kf_iop_binop, _cmp,
 * _unop, _cvt and _math of ir/interp_ops.c, over the conversions of
 * ir/numeric.c), lane by lane: a folded constant is bit for bit what the
 * interpreter computes at run time, NaN lanes (their bits too), signed
 * zeros and f16/bf16 lanes (each operation rounded once to its type, as
 * the interpreter does) included, and the back ends are held to the
 * interpreter by the golden and differential tests, so each operation's
 * meaning has one implementation. kf_opt and the mandatory kf_opt_exact
 * (ir/opt_exact.c) both fold through kf_opt_fold. What is never folded,
 * and why:
 *  - an integer / % or cdiv by zero: it faults at run time and the
 *    interpreter reports it (the instruction stays, see kf_opt_cannot_fault);
 *  - approximate math (exp exp2 log log2 rsqrt sin cos tanh, rcp,
 *    fast_div) and every builtin not listed in exact_float_math /
 *    int_math_ok: their values are each back end's own, within its
 *    documented bound.
 * A result is a constant of any lanes; the walk (ir/opt.c) writes one
 * whose lanes differ as CONST and INSERTs (kf_opt_const_emit).
 * Identities are integer-only (x + 0.0 is not x for x = -0.0). */
#include <string.h>

#include "numeric.h"
#include "opt.h"

static kf_type val_type(const kf_ir_kernel *k, kf_val v) { return k->vals[v].type; }

static unsigned lanes_of(kf_type t) { return t.lanes ? t.lanes : 1; }

bool kf_opt_splat_bits(kf_type t, const kf_islot *v, uint64_t *bits)
{
    unsigned by = kf_scalar_bytes[t.scalar];
    uint64_t b = kf_iop_lane(v, by, 0);
    for (unsigned l = 1; l < lanes_of(t); l++)
        if (kf_iop_lane(v, by, l) != b) return false;
    *bits = b;
    return true;
}

kf_islot kf_opt_splat_slot(kf_type t, uint64_t bits)
{
    kf_islot v = {{0, 0}};
    unsigned by = kf_scalar_bytes[t.scalar];
    for (unsigned l = 0; l < lanes_of(t) && l * by < sizeof v; l++) kf_iop_set_lane(&v, by, l, bits);
    return v;
}

static opt_fold_result const_result(const kf_islot *r) { return (opt_fold_result){OPT_CONST, *r, 0}; }

static opt_fold_result splat_result(kf_type t, uint64_t bits)
{
    return (opt_fold_result){OPT_CONST, kf_opt_splat_slot(t, bits), 0};
}

static opt_fold_result copy_of(unsigned j) { return (opt_fold_result){OPT_COPY, {{0, 0}}, j}; }

static const opt_fold_result keep = {OPT_KEEP, {{0, 0}}, 0};

/* Whether every lane of a known operand equals `x` (as bits of scalar s). */
static bool all_lanes(const opt_cval *c, kf_type t, uint64_t x)
{
    uint64_t b;
    unsigned by = kf_scalar_bytes[t.scalar];
    uint64_t m = by >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * by)) - 1;
    return c->known && kf_opt_splat_bits(t, &c->v, &b) && b == (x & m);
}

static bool is_plain_int(kf_type t)
{
    return kf_type_is_int(t) && t.scalar != KF_S_BOOL && !kf_type_is_untyped(t);
}

/* x op c or c op x with c a known constant: the integer identities. */
static opt_fold_result int_identity(const kf_ir_ins *in, const opt_cval cv[4])
{
    kf_type t = in->type;
    if (!is_plain_int(t)) return keep;
    opt_fold_result zero = splat_result(t, 0);
    const opt_cval *a = &cv[0], *b = &cv[1];
    switch ((kf_op)in->sub) {
    case KF_OP_ADD: case KF_OP_OR: case KF_OP_XOR:
        if (all_lanes(b, t, 0)) return copy_of(0);
        if (all_lanes(a, t, 0)) return copy_of(1);
        if (in->sub == KF_OP_OR && (all_lanes(a, t, UINT64_MAX) || all_lanes(b, t, UINT64_MAX)))
            return splat_result(t, kf_bits_from_i64((kf_scalar)t.scalar, -1));
        return keep;
    case KF_OP_SUB: case KF_OP_SHL: case KF_OP_SHR:
        return all_lanes(b, t, 0) ? copy_of(0) : keep;
    case KF_OP_MUL:
        if (all_lanes(a, t, 0) || all_lanes(b, t, 0)) return zero;
        if (all_lanes(b, t, 1)) return copy_of(0);
        return all_lanes(a, t, 1) ? copy_of(1) : keep;
    case KF_OP_AND:
        if (all_lanes(a, t, 0) || all_lanes(b, t, 0)) return zero;
        if (all_lanes(b, t, UINT64_MAX)) return copy_of(0);
        return all_lanes(a, t, UINT64_MAX) ? copy_of(1) : keep;
    case KF_OP_DIV: return all_lanes(b, t, 1) ? copy_of(0) : keep;
    case KF_OP_REM: return all_lanes(b, t, 1) ? zero : keep;
    default: return keep;
    }
}

static opt_fold_result fold_binop(const kf_ir_ins *in, const opt_cval cv[4])
{
    if (!cv[0].known || !cv[1].known) return int_identity(in, cv);
    kf_islot r;
    if (kf_iop_binop((kf_op)in->sub, (kf_scalar)in->type.scalar, lanes_of(in->type), &r, &cv[0].v, &cv[1].v) != IOP_OK)
        return keep;   /* a division by zero faults at run time */
    return const_result(&r);
}

static opt_fold_result fold_cmp(const kf_ir_ins *in, const opt_cval cv[4])
{
    if (!cv[0].known || !cv[1].known || in->type.lanes > 1) return keep;
    kf_islot r = {{0, 0}};
    kf_iop_cmp((kf_op)in->sub, (kf_scalar)in->type.scalar, &r, &cv[0].v, &cv[1].v);
    return const_result(&r);
}

/* Float builtins every back end computes exactly (correctly rounded or
 * exact; PTX's min/max rules for NaN and zeros), in every float type. */
static bool exact_float_math(kf_builtin fn)
{
    switch (fn) {
    case KF_BI_ABS: case KF_BI_FLOOR: case KF_BI_CEIL: case KF_BI_TRUNC: case KF_BI_ROUND: case KF_BI_SQRT:
    case KF_BI_FMA: case KF_BI_MIN: case KF_BI_MAX: case KF_BI_CLAMP: return true;
    default: return false;
    }
}

static bool int_math_ok(kf_builtin fn)
{
    switch (fn) {
    case KF_BI_ABS: case KF_BI_MIN: case KF_BI_MAX: case KF_BI_CLAMP: case KF_BI_CLZ: case KF_BI_POPC:
    case KF_BI_MUL_HI: case KF_BI_CDIV: return true;
    default: return false;
    }
}

/* Every float builtin MATH carries today, exact or approximate: pure. */
static bool float_math_known(kf_builtin fn)
{
    switch (fn) {
    case KF_BI_EXP: case KF_BI_EXP2: case KF_BI_LOG: case KF_BI_LOG2: case KF_BI_RSQRT: case KF_BI_SIN:
    case KF_BI_COS: case KF_BI_TANH: return true;
    default: return exact_float_math(fn);
    }
}

static unsigned math_nargs(const kf_ir_ins *in)
{
    unsigned n = 0;
    while (n < 4 && in->a[n]) n++;
    return n;
}

static opt_fold_result fold_math(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4])
{
    kf_builtin fn = (kf_builtin)in->sub;
    unsigned n = math_nargs(in);
    if (n == 0 || n > 3) return keep;
    kf_scalar s_in = (kf_scalar)val_type(k, in->a[0]).scalar;
    if (kf_scalar_class[s_in] == 'f' ? !exact_float_math(fn) : !int_math_ok(fn)) return keep;
    for (unsigned j = 0; j < n; j++)
        if (!cv[j].known) return keep;
    kf_islot r;
    if (kf_iop_math(fn, (kf_scalar)in->type.scalar, s_in, lanes_of(in->type), &r, &cv[0].v, n > 1 ? &cv[1].v : NULL,
                    n > 2 ? &cv[2].v : NULL) != IOP_OK)
        return keep;   /* cdiv by zero */
    return const_result(&r);
}

/* Reinterprets the known bytes of operand 0 as the result type. */
static opt_fold_result fold_bitcast(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4])
{
    kf_type from = val_type(k, in->a[0]), to = in->type;
    if (!cv[0].known || kf_type_elem_bytes(from) != kf_type_elem_bytes(to) || kf_type_elem_bytes(to) > 16) return keep;
    kf_islot r = {{0, 0}};
    memcpy(&r, &cv[0].v, kf_type_elem_bytes(to));
    return const_result(&r);
}

static opt_fold_result fold_lanes(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4])
{
    kf_type t = in->type;
    unsigned by = kf_scalar_bytes[t.scalar];
    switch (in->op) {
    case KF_IR_SPLAT: return cv[0].known ? splat_result(t, kf_iop_lane(&cv[0].v, by, 0)) : keep;
    case KF_IR_EXTRACT:
        if (!cv[0].known || in->imm >= lanes_of(val_type(k, in->a[0]))) return keep;
        return splat_result(t, kf_iop_lane(&cv[0].v, by, (unsigned)in->imm));
    case KF_IR_INSERT: {
        if (!cv[0].known || !cv[1].known || in->imm >= lanes_of(t)) return keep;
        kf_islot r = cv[0].v;
        kf_iop_set_lane(&r, by, (unsigned)in->imm, kf_iop_lane(&cv[1].v, by, 0));
        return const_result(&r);
    }
    default: return keep;
    }
}

static opt_fold_result fold_select(const kf_ir_ins *in, const opt_cval cv[4])
{
    if (cv[0].known) return copy_of(cv[0].v.u8[0] ? 1 : 2);
    if (in->a[1] == in->a[2]) return copy_of(1);
    if (cv[1].known && cv[2].known && !memcmp(&cv[1].v, &cv[2].v, sizeof cv[1].v)) return const_result(&cv[1].v);
    return keep;
}

opt_fold_result kf_opt_fold(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4])
{
    kf_islot r;
    switch (in->op) {
    case KF_IR_BINOP:
        if (in->sub < KF_OP_ADD || in->sub > KF_OP_SHR) return keep;
        if (kf_type_is_float(in->type) && in->sub > KF_OP_DIV) return keep;
        return fold_binop(in, cv);
    case KF_IR_CMP: return in->sub >= KF_OP_EQ && in->sub <= KF_OP_GE ? fold_cmp(in, cv) : keep;
    case KF_IR_UNOP: {
        bool ok = in->sub == KF_OP_NEG || in->sub == KF_OP_NOT || in->sub == KF_OP_BNOT;
        if (!ok || !cv[0].known) return keep;
        kf_iop_unop((kf_op)in->sub, (kf_scalar)in->type.scalar, lanes_of(in->type), &r, &cv[0].v);
        return const_result(&r);
    }
    case KF_IR_CVT:
        if (!cv[0].known) return keep;
        kf_iop_cvt((kf_scalar)in->type.scalar, (kf_scalar)val_type(k, in->a[0]).scalar, lanes_of(in->type), &r, &cv[0].v);
        return const_result(&r);
    case KF_IR_BITCAST: return fold_bitcast(k, in, cv);
    case KF_IR_SELECT: return fold_select(in, cv);
    case KF_IR_MATH: return fold_math(k, in, cv);
    case KF_IR_SPLAT: case KF_IR_EXTRACT: case KF_IR_INSERT: return fold_lanes(k, in, cv);
    default: return keep;
    }
}

bool kf_opt_pure_op(const kf_ir_ins *in)
{
    switch (in->op) {
    case KF_IR_CONST: case KF_IR_MOV: case KF_IR_BINOP: case KF_IR_CMP: case KF_IR_UNOP: case KF_IR_CVT:
    case KF_IR_BITCAST: case KF_IR_SELECT: case KF_IR_SPLAT: case KF_IR_EXTRACT: case KF_IR_INSERT:
    case KF_IR_SREG: case KF_IR_VIEW:
        return true;
    case KF_IR_MATH: return float_math_known((kf_builtin)in->sub) || int_math_ok((kf_builtin)in->sub);
    default: return false;   /* memory, warp ops, barriers, INTRIN (see known_op), control, and any op added later */
    }
}

bool kf_opt_cannot_fault(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4])
{
    bool divides = (in->op == KF_IR_BINOP && (in->sub == KF_OP_DIV || in->sub == KF_OP_REM)) ||
                   (in->op == KF_IR_MATH && in->sub == KF_BI_CDIV);
    if (!divides || kf_type_is_float(in->type)) return true;
    kf_type t = val_type(k, in->a[1]);
    unsigned by = kf_scalar_bytes[t.scalar];
    if (!cv[1].known) return false;
    for (unsigned l = 0; l < lanes_of(t); l++)
        if (kf_iop_lane(&cv[1].v, by, l) == 0) return false;
    return true;
}

/* ---- strength reduction -------------------------------------------------- */

/* log2 of the known scalar constant c of type t when it is 2^k, k >= 1. */
static int pow2_of(const opt_cval *c, kf_type t)
{
    if (!c->known) return -1;
    uint64_t b = kf_iop_lane(&c->v, kf_scalar_bytes[t.scalar], 0);
    if (b < 2 || (b & (b - 1))) return -1;
    return __builtin_ctzll(b);
}

bool kf_opt_reduce_plan(const kf_ir_ins *in, const opt_cval cv[4], opt_reduce *r)
{
    kf_type t = in->type;
    unsigned w = kf_type_bits(t);
    if (in->op != KF_IR_BINOP || t.kind != KF_TK_SCALAR || !is_plain_int(t) || (w != 32 && w != 64)) return false;
    bool sgn = kf_type_is_signed(t);
    int k = pow2_of(&cv[1], t);
    unsigned x = 0;
    if (in->sub == KF_OP_MUL && k < 0) {
        k = pow2_of(&cv[0], t);
        x = 1;
    }
    if (k < 1 || (unsigned)k >= w || (sgn && (unsigned)k >= w - 1 && in->sub != KF_OP_MUL)) return false;
    switch ((kf_op)in->sub) {
    case KF_OP_DIV: r->kind = sgn ? OPT_RED_SDIV : OPT_RED_UDIV; break;
    case KF_OP_REM: r->kind = sgn ? OPT_RED_SREM : OPT_RED_UREM; break;
    case KF_OP_MUL: r->kind = OPT_RED_MUL; break;
    default: return false;
    }
    r->log2 = (uint8_t)k;
    r->x = (uint8_t)x;
    return true;
}

static kf_val new_val(opt_code *o, kf_type t, kf_loc loc)
{
    if (!KF_VEC_PUSH(&o->vals, ((kf_ir_value){t, NULL, loc}))) {
        o->oom = true;
        return 0;
    }
    return (kf_val)(o->vals.len - 1);
}

static void put(opt_code *o, kf_ir_op op, uint16_t sub, kf_type t, kf_val dst, kf_val a0, kf_val a1, uint64_t imm,
                kf_loc loc)
{
    kf_ir_ins in = {(uint16_t)op, sub, t, dst, {a0, a1, 0, 0}, imm, loc};
    if (!KF_VEC_PUSH(&o->ins, in)) o->oom = true;
}

static kf_val put_const(opt_code *o, kf_type t, uint64_t bits, kf_loc loc)
{
    kf_val v = new_val(o, t, loc);
    put(o, KF_IR_CONST, 0, t, v, 0, 0, bits & (kf_type_bits(t) >= 64 ? UINT64_MAX : (UINT64_C(1) << kf_type_bits(t)) - 1),
        loc);
    return v;
}

static kf_val put_binop(opt_code *o, kf_op op, kf_type t, kf_val a, kf_val b, kf_loc loc)
{
    kf_val v = new_val(o, t, loc);
    put(o, KF_IR_BINOP, (uint16_t)op, t, v, a, b, 0, loc);
    return v;
}

/* Signed x / 2^k and x % 2^k round toward zero: a negative x is biased by
 * 2^k - 1 first. s = x >> (w-1) (all ones when x < 0), t = x + (s & (2^k-1));
 * x / 2^k = t >> k and x % 2^k = x - (t & -2^k); x + bias cannot wrap. */
static void signed_pow2(opt_code *o, const kf_ir_ins *in, kf_val x, unsigned k, bool rem)
{
    kf_type t = in->type;
    kf_loc l = in->loc;
    unsigned w = kf_type_bits(t);
    kf_val sign = put_binop(o, KF_OP_SHR, t, x, put_const(o, t, w - 1, l), l);
    kf_val bias = put_binop(o, KF_OP_AND, t, sign, put_const(o, t, (UINT64_C(1) << k) - 1, l), l);
    kf_val sum = put_binop(o, KF_OP_ADD, t, x, bias, l);
    if (!rem) {
        put(o, KF_IR_BINOP, KF_OP_SHR, t, in->dst, sum, put_const(o, t, k, l), 0, l);
        return;
    }
    kf_val low = put_binop(o, KF_OP_AND, t, sum, put_const(o, t, (uint64_t)0 - (UINT64_C(1) << k), l), l);
    put(o, KF_IR_BINOP, KF_OP_SUB, t, in->dst, x, low, 0, l);
}

void kf_opt_reduce_emit(opt_code *o, const kf_ir_ins *in, opt_reduce r)
{
    kf_type t = in->type;
    kf_loc l = in->loc;
    kf_val x = in->a[r.x];
    switch ((opt_red_kind)r.kind) {
    case OPT_RED_UDIV: put(o, KF_IR_BINOP, KF_OP_SHR, t, in->dst, x, put_const(o, t, r.log2, l), 0, l); break;
    case OPT_RED_UREM:
        put(o, KF_IR_BINOP, KF_OP_AND, t, in->dst, x, put_const(o, t, (UINT64_C(1) << r.log2) - 1, l), 0, l);
        break;
    case OPT_RED_MUL: put(o, KF_IR_BINOP, KF_OP_SHL, t, in->dst, x, put_const(o, t, r.log2, l), 0, l); break;
    case OPT_RED_SDIV: signed_pow2(o, in, x, r.log2, false); break;
    case OPT_RED_SREM: signed_pow2(o, in, x, r.log2, true); break;
    default: kf_unreachable("strength reduction kind");
    }
}

/* ---- vector constants whose lanes differ ------------------------------------ */

/* The lane value of v (of type t) that most lanes hold, the first on a tie. */
static uint64_t common_lane(kf_type t, const kf_islot *v)
{
    unsigned by = kf_scalar_bytes[t.scalar], n = lanes_of(t), best = 0;
    uint64_t b = kf_iop_lane(v, by, 0);
    for (unsigned l = 0; l < n; l++) {
        unsigned c = 0;
        for (unsigned m = 0; m < n; m++) c += kf_iop_lane(v, by, m) == kf_iop_lane(v, by, l);
        if (c > best) best = c, b = kf_iop_lane(v, by, l);
    }
    return b;
}

void kf_opt_const_emit(opt_code *o, const kf_ir_ins *in, const kf_islot *v)
{
    kf_type t = in->type, st = kf_type_scalar((kf_scalar)t.scalar);
    unsigned by = kf_scalar_bytes[t.scalar], n = lanes_of(t), left = 0;
    uint64_t base = common_lane(t, v);
    for (unsigned l = 0; l < n; l++) left += kf_iop_lane(v, by, l) != base;
    if (!left) {
        put(o, KF_IR_CONST, 0, t, in->dst, 0, 0, base, in->loc);
        return;
    }
    kf_val vec = put_const(o, t, base, in->loc);
    for (unsigned l = 0; l < n; l++) {
        uint64_t x = kf_iop_lane(v, by, l);
        if (x == base) continue;
        kf_val lane = put_const(o, st, x, in->loc);
        kf_val dst = --left ? new_val(o, t, in->loc) : in->dst;
        put(o, KF_IR_INSERT, 0, t, dst, vec, lane, l, in->loc);
        vec = dst;
    }
}
