/* Lowering of expressions and assignments to core IR values.
 *
 * Constants: sema folds every compile-time constant expression (is_const,
 * cval). Those become one CONST in the type the context wants (an untyped
 * literal takes the type of its use). Inside an @unroll body the loop
 * variable is a constant that differs per iteration, which sema cannot have
 * folded, so an expression that mentions an unrolled variable is evaluated
 * here instead (integers, booleans, comparisons, casts, float + - * /, the
 * integer builtins min max abs clamp cdiv select, and lets folded earlier in
 * the same iteration; anything else is lowered to instructions over CONSTs,
 * which computes the same value). Sema's own per-iteration refold
 * (kf_sema_fold) is not needed and not called.
 *
 * Values: a name is the value its declaration is bound to (lower.c); every
 * operator makes a fresh value. `&&`/`||` short-circuit through IF so the
 * right operand (say `x[i]`) is only evaluated when it decides the result. */
#include "lower.h"
#include "numeric.h"

#include <string.h>

/* ---- constants ------------------------------------------------------------ */

/* Untyped constants compute as 64-bit integers / doubles. */
static kf_scalar wide(kf_scalar s)
{
    return s == KF_S_UINT ? KF_S_I64 : s == KF_S_UFLOAT ? KF_S_F64 : s;
}

static uint64_t mask_bits(kf_scalar s, uint64_t bits)
{
    unsigned w = 8u * kf_scalar_bytes[s];
    return w >= 64 ? bits : bits & ((UINT64_C(1) << w) - 1);
}

uint64_t kf_lower_const_convert(kf_type from, uint64_t bits, kf_type to)
{
    kf_scalar fs = wide((kf_scalar)from.scalar), ts = wide((kf_scalar)to.scalar);
    char fc = kf_scalar_class[fs], tc = kf_scalar_class[ts];
    if (fs == KF_S_NONE || ts == KF_S_NONE) return bits;
    if (fc == 'b') bits &= 1;
    if (tc == 'b') return fc == 'f' ? kf_bits_to_double(fs, bits) != 0 : bits != 0;
    uint64_t r;
    if (fc == 'b' || fc == 'u') r = kf_bits_from_u64(ts, fc == 'b' ? bits : mask_bits(fs, bits));
    else if (fc == 'i') r = kf_bits_from_i64(ts, kf_bits_to_i64(fs, bits));
    else r = kf_bits_from_double(ts, kf_bits_to_double(fs, bits));
    return mask_bits(ts, r);
}

/* Bits of a folded sema value of type t (cval's encoding, ast.h). */
static uint64_t cval_bits(kf_type t, const kf_node *e)
{
    kf_scalar s = wide((kf_scalar)t.scalar);
    switch (kf_scalar_class[s]) {
    case 'b': return e->cval.u & 1;
    case 'f': return mask_bits(s, kf_bits_from_double(s, e->cval.f));
    default: return mask_bits(s, e->cval.u);
    }
}

static bool is_unroll_var(const kf_node *sym)
{
    return sym && sym->kind == KF_N_FOR && sym->op;
}

/* Whether e mentions an @unroll loop variable (memoised in aux: 1 no, 2 yes). */
static bool mentions_unroll(kf_node *e)
{
    if (!e) return false;
    if (e->aux) return e->aux == 2;
    bool m = e->kind == KF_N_NAME && is_unroll_var(e->sym);
    /* sema folds a use of `let j = k * 2` to the let's value: follow it */
    if (e->kind == KF_N_NAME && e->sym && e->sym->kind == KF_N_LET && e->sym->b && e->sym->b->is_const) {
        e->aux = 1;   /* guards a cycle; lets cannot refer to themselves */
        m = mentions_unroll(e->sym->b);
    }
    m = m || mentions_unroll(e->a) || mentions_unroll(e->c) || mentions_unroll(e->d);
    if (e->kind == KF_N_CALL || e->kind == KF_N_TUPLE) {
        for (kf_node *x = e->kind == KF_N_CALL ? e->b : e->a; x && !m; x = x->next) m = mentions_unroll(x);
    } else {
        m = m || mentions_unroll(e->b);
    }
    e->aux = m ? 2 : 1;
    return m;
}

static bool ceval(lw_t *lw, const kf_node *e, kf_type *t, uint64_t *bits);

static int64_t as_i64(kf_type t, uint64_t bits)
{
    kf_scalar s = wide((kf_scalar)t.scalar);
    unsigned w = 8u * kf_scalar_bytes[s];
    if (kf_scalar_class[s] == 'i' && w < 64 && (bits >> (w - 1)) & 1) bits |= ~UINT64_C(0) << w;
    return (int64_t)bits;
}

/* Integer operation in type t (wrapping); false for division by zero. */
static bool int_binop(kf_op op, kf_type t, uint64_t a, uint64_t b, uint64_t *r)
{
    kf_scalar s = wide((kf_scalar)t.scalar);
    return kf_int_binop(op, kf_scalar_class[s] == 'i', 8u * kf_scalar_bytes[s], a, b, r);
}

static bool int_cmp(kf_op op, kf_type t, uint64_t a, uint64_t b, uint64_t *r)
{
    bool sg = kf_scalar_class[wide((kf_scalar)t.scalar)] == 'i';
    int64_t sa = as_i64(t, a), sb = as_i64(t, b);
    bool lt = sg ? sa < sb : a < b, eq = a == b;
    switch (op) {
    case KF_OP_EQ: *r = eq; break;
    case KF_OP_NE: *r = !eq; break;
    case KF_OP_LT: *r = lt; break;
    case KF_OP_LE: *r = lt || eq; break;
    case KF_OP_GT: *r = !lt && !eq; break;
    case KF_OP_GE: *r = !lt; break;
    default: return false;
    }
    return true;
}

static bool is_intlike(kf_type t)
{
    char c = kf_scalar_class[wide((kf_scalar)t.scalar)];
    return t.kind == KF_TK_SCALAR && (c == 'i' || c == 'u' || c == 'b');
}

/* + - * / of floats: computed in double and rounded once to the type, which
 * is the correctly rounded result for f16, bf16, f32 (double keeps more than
 * twice their precision) and f64. */
static bool float_binop(kf_op op, kf_type ot, kf_type ta, uint64_t a, kf_type tb, uint64_t b,
                        kf_type *t, uint64_t *bits)
{
    kf_type d = kf_type_scalar(KF_S_F64);
    uint64_t ab = kf_lower_const_convert(ta, a, ot), bb = kf_lower_const_convert(tb, b, ot);
    double x = kf_bits_to_double(KF_S_F64, kf_lower_const_convert(ot, ab, d));
    double y = kf_bits_to_double(KF_S_F64, kf_lower_const_convert(ot, bb, d));
    double r = op == KF_OP_ADD ? x + y : op == KF_OP_SUB ? x - y : op == KF_OP_MUL ? x * y : x / y;
    *t = ot;
    *bits = kf_lower_const_convert(d, kf_bits_from_double(KF_S_F64, r), ot);
    return true;
}

static bool ceval_binary(lw_t *lw, const kf_node *e, kf_type *t, uint64_t *bits)
{
    kf_type ta, tb;
    uint64_t a, b;
    if (!ceval(lw, e->a, &ta, &a) || !ceval(lw, e->b, &tb, &b)) return false;
    kf_op op = (kf_op)e->op;
    bool cmp = op >= KF_OP_EQ && op <= KF_OP_LOR;
    kf_type ot = cmp ? (kf_type_is_untyped(ta) ? tb : ta) : e->type;
    if (op == KF_OP_LAND || op == KF_OP_LOR) ot = kf_type_scalar(KF_S_BOOL);
    if (kf_type_is_float(ot) && !cmp && op <= KF_OP_DIV) return float_binop(op, ot, ta, a, tb, b, t, bits);
    if (!is_intlike(ot) || !is_intlike(ta) || !is_intlike(tb)) return false;
    a = kf_lower_const_convert(ta, a, ot);
    b = kf_lower_const_convert(tb, b, (op == KF_OP_SHL || op == KF_OP_SHR) ? tb : ot);
    *t = cmp ? kf_type_scalar(KF_S_BOOL) : ot;
    if (op == KF_OP_LAND) return *bits = a && b, true;
    if (op == KF_OP_LOR) return *bits = a || b, true;
    return cmp ? int_cmp(op, ot, a, b, bits) : int_binop(op, ot, a, b, bits);
}

static bool ceval_unary(lw_t *lw, const kf_node *e, kf_type *t, uint64_t *bits)
{
    kf_type ta;
    uint64_t a;
    if (!ceval(lw, e->a, &ta, &a)) return false;
    *t = e->type.kind == KF_TK_SCALAR ? e->type : ta;
    if (kf_type_is_float(*t) && e->op == KF_OP_NEG) {   /* flip the sign bit */
        kf_scalar fs = wide((kf_scalar)t->scalar);
        *bits = kf_lower_const_convert(ta, a, *t) ^ (UINT64_C(1) << (8u * kf_scalar_bytes[fs] - 1));
        return true;
    }
    if (!is_intlike(ta)) return false;
    a = kf_lower_const_convert(ta, a, *t);
    switch (e->op) {
    case KF_OP_NEG: *bits = mask_bits(wide((kf_scalar)t->scalar), (uint64_t)0 - a); return true;
    case KF_OP_BNOT: *bits = mask_bits(wide((kf_scalar)t->scalar), ~a); return true;
    case KF_OP_NOT: *bits = !a; return true;
    default: return false;
    }
}

static bool ceval_name(lw_t *lw, const kf_node *e, kf_type *t, uint64_t *bits)
{
    if (is_unroll_var(e->sym)) {
        for (size_t i = lw->unroll.len; i-- > 0;) {
            if (lw->unroll.data[i].node != e->sym) continue;
            kf_type vt = e->sym->type;
            kf_type it = kf_type_is_untyped(vt) || vt.kind != KF_TK_SCALAR ? kf_type_scalar(KF_S_I64) : vt;
            *t = e->type.kind == KF_TK_SCALAR ? e->type : it;
            *bits = kf_lower_const_convert(it, lw->unroll.data[i].bits, *t);
            return true;
        }
        return false;
    }
    /* a let over an unrolled variable: its value in this iteration, if the
     * let was folded to a CONST when it was lowered (before any use) */
    if (e->sym && e->sym->kind == KF_N_LET) {
        kf_val v = e->sym->aux;
        if (!v || v >= lw->vconst.len || !lw->vconst.data[v].known) return false;
        kf_type vt = kf_lower_vtype(lw, v);
        *t = e->type.kind == KF_TK_SCALAR ? e->type : vt;
        *bits = kf_lower_const_convert(vt, lw->vconst.data[v].bits, *t);
        return true;
    }
    if (e->sym && e->sym->kind == KF_N_CONST && e->sym->b) {
        kf_type ct;
        uint64_t cb;
        if (!ceval(lw, e->sym->b, &ct, &cb)) return false;
        *t = e->type.kind == KF_TK_SCALAR ? e->type : ct;
        *bits = kf_lower_const_convert(ct, cb, *t);
        return true;
    }
    return false;
}

/* Integer builtins over constants: min max abs clamp cdiv select. */
static bool ceval_call(lw_t *lw, const kf_node *e, kf_type *t, uint64_t *bits)
{
    kf_type at[3];
    uint64_t av[3];
    unsigned n = 0;
    kf_builtin b = (kf_builtin)e->op;
    for (const kf_node *a = e->b; a; a = a->next) {
        if (n == 3 || !ceval(lw, a, &at[n], &av[n])) return false;
        n++;
    }
    kf_type ot = e->type;
    if (!is_intlike(ot) || kf_type_is_bool(ot)) return false;
    for (unsigned i = b == KF_BI_SELECT; i < n; i++) {
        if (!is_intlike(at[i])) return false;
        av[i] = kf_lower_const_convert(at[i], av[i], ot);
    }
    uint64_t r, lt;
    *t = ot;
    switch (b) {
    case KF_BI_MIN: case KF_BI_MAX:
        if (n != 2 || !int_cmp(KF_OP_LT, ot, av[0], av[1], &lt)) return false;
        *bits = (b == KF_BI_MIN) == (lt != 0) ? av[0] : av[1];
        return true;
    case KF_BI_ABS:
        if (n != 1) return false;
        /* only a signed type has negative values: abs of a u64 >= 2^63 is itself */
        *bits = kf_scalar_class[wide((kf_scalar)ot.scalar)] == 'i' && as_i64(ot, av[0]) < 0
                    ? mask_bits(wide((kf_scalar)ot.scalar), (uint64_t)0 - av[0])
                    : av[0];
        return true;
    case KF_BI_CLAMP:
        if (n != 3 || !int_cmp(KF_OP_LT, ot, av[0], av[1], &lt)) return false;
        r = lt ? av[1] : av[0];
        if (!int_cmp(KF_OP_LT, ot, av[2], r, &lt)) return false;
        *bits = lt ? av[2] : r;
        return true;
    case KF_BI_CDIV: {
        uint64_t q, m, nz, same;
        if (n != 2 || !int_binop(KF_OP_DIV, ot, av[0], av[1], &q) || !int_binop(KF_OP_REM, ot, av[0], av[1], &m)) return false;
        nz = m != 0;
        same = kf_scalar_class[wide((kf_scalar)ot.scalar)] != 'i' || (as_i64(ot, m) < 0) == (as_i64(ot, av[1]) < 0);
        return int_binop(KF_OP_ADD, ot, q, nz && same, bits);
    }
    case KF_BI_SELECT:
        if (n != 3 || !kf_type_is_bool(at[0])) return false;
        *bits = av[0] ? av[1] : av[2];
        return true;
    default: return false;
    }
}

/* ceval of an expression over @unroll variables. */
static bool ceval_dyn(lw_t *lw, const kf_node *e, kf_type *t, uint64_t *bits)
{
    switch (e->kind) {
    case KF_N_NAME: return ceval_name(lw, e, t, bits);
    case KF_N_BINARY: return ceval_binary(lw, e, t, bits);
    case KF_N_UNARY: return ceval_unary(lw, e, t, bits);
    case KF_N_CALL: return !e->sym && ceval_call(lw, e, t, bits);
    case KF_N_CAST: {
        kf_type ta;
        uint64_t a;
        if (e->type.kind != KF_TK_SCALAR || !ceval(lw, e->a, &ta, &a)) return false;
        *t = e->type;
        *bits = kf_lower_const_convert(ta, a, *t);
        return true;
    }
    default: return false;
    }
}

/* Compile-time value of e: its type (possibly untyped) and bits in it. */
static bool ceval(lw_t *lw, const kf_node *e, kf_type *t, uint64_t *bits)
{
    if (!e) return false;
    bool dyn = lw->unroll.len && mentions_unroll((kf_node *)e);
    if (!dyn && e->is_const && e->type.kind == KF_TK_SCALAR) {
        *t = e->type;
        *bits = cval_bits(e->type, e);
        return true;
    }
    kf_type lt = e->type.kind == KF_TK_SCALAR ? e->type : kf_type_void();
    switch (e->kind) {
    case KF_N_INT:
        *t = lt.kind ? lt : kf_type_scalar(KF_S_UINT);
        *bits = kf_lower_const_convert(kf_type_scalar(KF_S_U64), e->ival, *t);
        return true;
    case KF_N_BOOL:
        *t = kf_type_scalar(KF_S_BOOL);
        *bits = e->ival & 1;
        return true;
    case KF_N_FLOAT: {
        uint64_t b;
        memcpy(&b, &e->fval, sizeof b);
        *t = lt.kind ? lt : kf_type_scalar(KF_S_UFLOAT);
        *bits = kf_lower_const_convert(kf_type_scalar(KF_S_F64), b, *t);
        return true;
    }
    default: break;
    }
    /* Lowering asks again at every level of an expression that did not fold
     * (kf_lower_expr); remembering the miss keeps a deep one linear, not quadratic. */
    if (!dyn || e->fold_miss == lw->fold_epoch) return false;
    if (kf_lower_work(lw, e->loc) && ceval_dyn(lw, e, t, bits)) return true;
    ((kf_node *)e)->fold_miss = lw->fold_epoch;
    return false;
}

bool kf_lower_fold(lw_t *lw, const kf_node *e, kf_type t, uint64_t *bits)
{
    kf_type et;
    uint64_t b;
    if (t.kind != KF_TK_SCALAR || !ceval(lw, e, &et, &b)) return false;
    *bits = kf_lower_const_convert(et, b, kf_lower_norm(t));
    return true;
}

bool kf_lower_is_fresh(const lw_t *lw, kf_val v, kf_val mark)
{
    return v && v >= mark && v < lw->vals.len && !lw->vals.data[v].name;
}

/* ---- expressions ------------------------------------------------------ */

static kf_val expr_unfolded(lw_t *lw, const kf_node *e);

kf_val kf_lower_expr_as(lw_t *lw, const kf_node *e, kf_type want)
{
    want = kf_lower_norm(want);
    uint64_t bits;
    kf_val v;
    if (want.kind != KF_TK_SCALAR) v = kf_lower_expr(lw, e);
    else if (kf_lower_fold(lw, e, want, &bits)) return kf_lower_const(lw, want, bits, e->loc);
    else v = expr_unfolded(lw, e);   /* not constant in any type */
    kf_type vt = kf_lower_vtype(lw, v);
    bool value = want.kind == KF_TK_SCALAR || want.kind == KF_TK_VECTOR;
    if (!v || !value || kf_type_eq(vt, want)) return v;
    if (vt.kind == want.kind && vt.lanes == want.lanes && !kf_type_is_bool(vt) && !kf_type_is_bool(want))
        return kf_lower_def(lw, KF_IR_CVT, 0, want, want, v, 0, 0, 0, e->loc);
    char a[48], b[48];
    kf_lower_error(lw, e->loc, "internal error: expected a value of type %s here, found %s",
             kf_type_str(want, a, sizeof a), kf_type_str(vt, b, sizeof b));
    return 0;
}

static kf_val lower_name(lw_t *lw, const kf_node *e)
{
    const kf_node *s = e->sym;
    if (!s) return kf_lower_builtin_value(lw, e);
    switch (s->kind) {
    case KF_N_LET:
    case KF_N_VAR:
    case KF_N_PARAM:
    case KF_N_FOR:
        if (s->type.kind == KF_TK_ARRAY) break;
        if (s->kind == KF_N_FOR && s->op) {
            uint64_t bits;
            kf_type t = kf_lower_norm(e->type);
            if (kf_lower_fold(lw, e, t, &bits)) return kf_lower_const(lw, t, bits, e->loc);
            break;
        }
        if (!s->aux) break;
        return s->aux;
    case KF_N_CONST: {
        uint64_t bits;
        kf_type t = kf_lower_norm(e->type);
        if (kf_lower_fold(lw, e, t, &bits)) return kf_lower_const(lw, t, bits, e->loc);
        break;
    }
    default: break;
    }
    kf_lower_error(lw, e->loc, "internal error: '%s' cannot be used as a value here", e->name ? e->name : "?");
    return 0;
}

/* a && b / a || b: r = a; IF (a / !a) { r = b } ENDIF */
static kf_val short_circuit(lw_t *lw, const kf_node *e)
{
    kf_type b = kf_type_scalar(KF_S_BOOL);
    uint64_t lc;
    if (kf_lower_fold(lw, e->a, b, &lc)) {   /* decided by the left: no branch */
        if ((e->op == KF_OP_LAND) != (lc != 0)) return kf_lower_const(lw, b, lc, e->loc);
        return kf_lower_expr_as(lw, e->b, b);
    }
    kf_val l = kf_lower_expr_as(lw, e->a, b);
    /* the left decides it in this @unroll iteration by sema's fold, and sema
     * did not check the right there: it never runs */
    if (kf_lower_arm_dead(lw, e->a, e->op == KF_OP_LAND)) return l;
    kf_val r = kf_lower_new_val(lw, b, NULL, e->loc);
    kf_lower_mov(lw, r, l, e->loc);
    kf_val c = e->op == KF_OP_LAND ? l : kf_lower_def(lw, KF_IR_UNOP, KF_OP_NOT, b, b, l, 0, 0, 0, e->loc);
    kf_lower_emit(lw, KF_IR_IF, 0, kf_type_void(), 0, c, 0, 0, 0, 0, e->loc);
    kf_lower_mov(lw, r, kf_lower_expr_as(lw, e->b, b), e->loc);
    kf_lower_emit(lw, KF_IR_ENDIF, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, e->loc);
    return r;
}

static kf_type operand_type(const kf_node *e)
{
    kf_type ta = e->a->type, tb = e->b->type;
    return kf_lower_norm(kf_type_is_untyped(ta) && !kf_type_is_untyped(tb) ? tb : ta);
}

static kf_val lower_binary(lw_t *lw, const kf_node *e)
{
    kf_op op = (kf_op)e->op;
    if (op == KF_OP_LAND || op == KF_OP_LOR) return short_circuit(lw, e);
    if (op >= KF_OP_EQ && op <= KF_OP_GE) {
        kf_type ot = operand_type(e);
        kf_val a = kf_lower_expr_as(lw, e->a, ot), b = kf_lower_expr_as(lw, e->b, ot);
        return kf_lower_def(lw, KF_IR_CMP, (uint16_t)op, ot, kf_type_scalar(KF_S_BOOL), a, b, 0, 0, e->loc);
    }
    if (op < KF_OP_ADD || op > KF_OP_SHR) {
        kf_lower_error(lw, e->loc, "internal error: operator '%s' in a binary expression", kf_op_spelling[op < KF_OP_COUNT ? op : 0]);
        return 0;
    }
    kf_type t = kf_lower_norm(e->type);
    kf_type bt = t;
    if ((op == KF_OP_SHL || op == KF_OP_SHR) && !kf_type_is_untyped(e->b->type)) bt = kf_lower_norm(e->b->type);
    kf_val a = kf_lower_expr_as(lw, e->a, t), b = kf_lower_expr_as(lw, e->b, bt);
    return kf_lower_def(lw, KF_IR_BINOP, (uint16_t)op, t, t, a, b, 0, 0, e->loc);
}

static kf_val lower_unary(lw_t *lw, const kf_node *e)
{
    kf_type t = kf_lower_norm(e->type);
    kf_val a = kf_lower_expr_as(lw, e->a, t);
    return kf_lower_def(lw, KF_IR_UNOP, e->op, t, t, a, 0, 0, 0, e->loc);
}

/* `e as T`: CVT, nothing when the types are equal; a buffer becomes a VIEW. */
static kf_val lower_cast(lw_t *lw, const kf_node *e)
{
    kf_type t = kf_lower_norm(e->type);
    if (t.kind == KF_TK_VOID && e->b) t = kf_lower_norm(e->b->type);
    kf_val v = kf_lower_expr(lw, e->a);
    kf_type vt = kf_lower_vtype(lw, v);
    if (!v || kf_type_eq(vt, t)) return v;
    if (t.kind == KF_TK_BUFFER) {
        kf_val d = kf_lower_def(lw, KF_IR_VIEW, 0, t, t, v, 0, 0, 0, e->loc);
        if (d) lw->vparam.data[d] = lw->vparam.data[v];
        return d;
    }
    return kf_lower_def(lw, KF_IR_CVT, 0, t, t, v, 0, 0, 0, e->loc);
}

/* f32x4(a, b, c, d) / f32x4(a) / f32x4(lo2, hi2): SPLAT then INSERT per lane. */
static kf_val vector_ctor(lw_t *lw, const kf_node *e)
{
    kf_type t = kf_lower_norm(e->type);
    kf_type el = kf_type_elem(t);
    kf_val lanes[16] = {0};
    kf_loc locs[16] = {{0}};
    unsigned n = 0;
    for (const kf_node *a = e->b; a; a = a->next) {
        kf_type at = kf_lower_norm(a->type);
        if (at.kind == KF_TK_VECTOR) {
            if (kf_type_eq(at, t) && !a->next && n == 0) return kf_lower_expr(lw, a);
            kf_val v = kf_lower_expr(lw, a);
            for (unsigned i = 0; i < at.lanes && n < 16; i++, n++) {
                lanes[n] = kf_lower_def(lw, KF_IR_EXTRACT, 0, el, el, v, 0, 0, i, a->loc);
                locs[n] = a->loc;
            }
        } else if (n < 16) {
            locs[n] = a->loc;
            lanes[n++] = kf_lower_expr_as(lw, a, el);
        }
    }
    if (t.kind != KF_TK_VECTOR || (n != 1 && n != t.lanes)) {
        kf_lower_error(lw, e->loc, "internal error: vector constructor with %u lanes", n);
        return 0;
    }
    kf_val v = kf_lower_def(lw, KF_IR_SPLAT, 0, t, t, lanes[0], 0, 0, 0, locs[0]);
    for (unsigned i = 1; i < n; i++) v = kf_lower_def(lw, KF_IR_INSERT, 0, t, t, v, lanes[i], 0, i, locs[i]);
    return v;
}

static kf_val lower_call(lw_t *lw, const kf_node *e)
{
    if (e->sym && e->sym->kind == KF_N_FN) return kf_lower_inline(lw, e);
    if (e->a && e->a->kind == KF_N_TYPE) return vector_ctor(lw, e);
    if (e->op || (e->a && e->a->op)) return kf_lower_builtin_call(lw, e);
    kf_lower_error(lw, e->loc, "internal error: call of an unresolved name");
    return 0;
}

bool kf_lower_array_of(lw_t *lw, const kf_node *e, uint32_t *idx)
{
    while (e && e->kind == KF_N_CAST && e->type.kind == KF_TK_ARRAY) e = e->a;   /* a view: the same array */
    const kf_node *s = e && e->kind == KF_N_NAME ? e->sym : NULL;
    bool holder = s && (s->kind == KF_N_VAR || s->kind == KF_N_LET || s->kind == KF_N_PARAM);
    if (holder && s->type.kind == KF_TK_ARRAY) {
        *idx = s->aux;
        return s->aux < lw->arrays.len;
    }
    if (s && s->kind == KF_N_SHARED) {
        *idx = kf_lower_shared_array(lw, s);
        return *idx != UINT32_MAX;
    }
    kf_lower_error(lw, e ? e->loc : (kf_loc){0}, "internal error: indexing something that is not an array");
    return false;
}

/* A vector lane index: a constant in range. */
static bool lane_index(lw_t *lw, const kf_node *idx, kf_type vt, uint32_t *k)
{
    uint64_t v;
    if (!kf_lower_fold(lw, idx, kf_type_scalar(KF_S_U64), &v)) {
        kf_lower_error(lw, idx->loc, "a vector index must be a compile-time constant (use .x/.y/.z/.w or a constant)");
        return false;
    }
    if (v >= vt.lanes) {
        kf_lower_error(lw, idx->loc, "vector index %llu out of range for %u lanes", (unsigned long long)v, vt.lanes);
        return false;
    }
    *k = (uint32_t)v;
    return true;
}

static kf_val lower_index(lw_t *lw, const kf_node *e)
{
    kf_type bt = e->a->type;
    if (bt.kind == KF_TK_BUFFER) {
        kf_type el = kf_type_elem(bt);
        kf_val b = kf_lower_expr(lw, e->a), i = kf_lower_expr(lw, e->b);
        kf_lower_note_access(lw, b, el);
        return kf_lower_def(lw, KF_IR_LOAD, 0, el, el, b, i, 0, 0, e->loc);
    }
    if (bt.kind == KF_TK_ARRAY) {
        uint32_t arr;
        if (!kf_lower_array_of(lw, e->a, &arr)) return 0;
        kf_type el = kf_type_elem(bt);
        kf_val i = kf_lower_expr(lw, e->b);
        return kf_lower_def(lw, KF_IR_ALOAD, 0, el, el, i, 0, 0, arr, e->loc);
    }
    if (bt.kind == KF_TK_VECTOR) {
        uint32_t k;
        if (!lane_index(lw, e->b, bt, &k)) return 0;
        kf_type el = kf_type_elem(bt);
        return kf_lower_def(lw, KF_IR_EXTRACT, 0, el, el, kf_lower_expr(lw, e->a), 0, 0, k, e->loc);
    }
    kf_lower_error(lw, e->loc, "internal error: indexing a value that is not a buffer, array or vector");
    return 0;
}

/* Lane of a member name: x y z w (with or without the leading dot). */
static int member_lane(const char *m)
{
    if (!m) return -1;
    if (m[0] == '.') m++;
    if (!m[0] || m[1]) return -1;
    const char *p = strchr("xyzw", m[0]);
    return p ? (int)(p - "xyzw") : -1;
}

static bool is_geometry(kf_builtin b)
{
    return b >= KF_BI_THREAD_ID && b <= KF_BI_GLOBAL_ID;
}

static kf_val lower_member(lw_t *lw, const kf_node *e)
{
    int lane = member_lane(e->name);
    const kf_node *base = e->a;
    if (base->kind == KF_N_NAME && !base->sym && is_geometry((kf_builtin)base->op)) {
        if (lane < 0 || lane > 2) {
            kf_lower_error(lw, e->loc, "'%s' has members .x, .y and .z", kf_builtin_names[base->op]);
            return 0;
        }
        return kf_lower_geometry(lw, (kf_builtin)base->op, lane, e->loc);
    }
    kf_type bt = base->type;
    if (bt.kind != KF_TK_VECTOR || lane < 0 || (unsigned)lane >= bt.lanes) {
        kf_lower_error(lw, e->loc, "internal error: member '%s' of a non-vector", e->name ? e->name : "?");
        return 0;
    }
    kf_type el = kf_type_elem(bt);
    return kf_lower_def(lw, KF_IR_EXTRACT, 0, el, el, kf_lower_expr(lw, base), 0, 0, (uint64_t)lane, e->loc);
}

kf_val kf_lower_expr(lw_t *lw, const kf_node *e)
{
    kf_type t = e ? kf_lower_norm(e->type) : kf_type_void();
    uint64_t bits;
    if (!lw->failed && t.kind == KF_TK_SCALAR && kf_lower_fold(lw, e, t, &bits)) return kf_lower_const(lw, t, bits, e->loc);
    return expr_unfolded(lw, e);
}

static kf_val expr_kind(lw_t *lw, const kf_node *e)
{
    switch (e->kind) {
    case KF_N_NAME: return lower_name(lw, e);
    case KF_N_BINARY: return lower_binary(lw, e);
    case KF_N_UNARY: return lower_unary(lw, e);
    case KF_N_CAST: return lower_cast(lw, e);
    case KF_N_CALL: return lower_call(lw, e);
    case KF_N_INDEX: return lower_index(lw, e);
    case KF_N_MEMBER: return lower_member(lw, e);
    default: break;
    }
    kf_lower_error(lw, e->loc, "internal error: cannot lower a %s expression", kf_node_kind_names[e->kind]);
    return 0;
}

static kf_val expr_unfolded(lw_t *lw, const kf_node *e)
{
    if (lw->failed) return 0;
    if (!e) {
        kf_lower_error(lw, (kf_loc){lw->cx->file, 1, 1}, "internal error: missing expression");
        return 0;
    }
    if (!kf_lower_enter(lw, e->loc)) return 0;
    kf_val v = expr_kind(lw, e);
    lw->depth--;
    return v;
}

/* ---- assignment ---------------------------------------------------------- */

/* new = old op rhs for compound assignment; rhs alone for `=`. */
static kf_val combine(lw_t *lw, const kf_node *s, kf_type t, kf_val old, kf_val rhs)
{
    if (s->op == KF_OP_ASSIGN || s->op == KF_OP_NONE) return rhs;
    return kf_lower_def(lw, KF_IR_BINOP, s->op, t, t, old, rhs, 0, 0, s->loc);
}

static kf_val rhs_of(lw_t *lw, const kf_node *s, kf_type t)
{
    bool shift = s->op == KF_OP_SHL || s->op == KF_OP_SHR;
    if (shift && !kf_type_is_untyped(s->b->type)) return kf_lower_expr(lw, s->b);
    return kf_lower_expr_as(lw, s->b, t);
}

/* The var a vector-component assignment writes. */
static kf_val var_of(lw_t *lw, const kf_node *base)
{
    const kf_node *s = base && base->kind == KF_N_NAME ? base->sym : NULL;
    if (s && (s->kind == KF_N_VAR || s->kind == KF_N_PARAM) && s->aux) return s->aux;
    kf_lower_error(lw, base ? base->loc : (kf_loc){0}, "internal error: a component assignment needs a var vector");
    return 0;
}

static void assign_lane(lw_t *lw, const kf_node *s, const kf_node *base, uint32_t k)
{
    kf_val v = var_of(lw, base);
    kf_type vt = kf_lower_vtype(lw, v), el = kf_type_elem(vt);
    kf_val rhs = rhs_of(lw, s, el);
    kf_val old = s->op == KF_OP_ASSIGN ? 0 : kf_lower_def(lw, KF_IR_EXTRACT, 0, el, el, v, 0, 0, k, s->loc);
    kf_val nv = combine(lw, s, el, old, rhs);
    kf_lower_emit(lw, KF_IR_INSERT, 0, vt, v, v, nv, 0, 0, k, s->loc);
}

static void assign_index(lw_t *lw, const kf_node *s, const kf_node *lv)
{
    kf_type bt = lv->a->type;
    if (bt.kind == KF_TK_VECTOR) {
        uint32_t k;
        if (lane_index(lw, lv->b, bt, &k)) assign_lane(lw, s, lv->a, k);
        return;
    }
    kf_type el = kf_type_elem(bt);
    bool compound = s->op != KF_OP_ASSIGN;
    if (bt.kind == KF_TK_BUFFER) {
        kf_val b = kf_lower_expr(lw, lv->a), i = kf_lower_expr(lw, lv->b);
        kf_val rhs = rhs_of(lw, s, el);
        kf_lower_note_access(lw, b, el);
        kf_val old = compound ? kf_lower_def(lw, KF_IR_LOAD, 0, el, el, b, i, 0, 0, lv->loc) : 0;
        kf_lower_emit(lw, KF_IR_STORE, 0, el, 0, b, i, combine(lw, s, el, old, rhs), 0, 0, lv->loc);
        return;
    }
    uint32_t arr;
    if (bt.kind != KF_TK_ARRAY || !kf_lower_array_of(lw, lv->a, &arr)) {
        if (!lw->failed) kf_lower_error(lw, lv->loc, "internal error: assignment to an element of a non-array");
        return;
    }
    kf_val i = kf_lower_expr(lw, lv->b);
    kf_val rhs = rhs_of(lw, s, el);
    kf_val old = compound ? kf_lower_def(lw, KF_IR_ALOAD, 0, el, el, i, 0, 0, arr, lv->loc) : 0;
    kf_lower_emit(lw, KF_IR_ASTORE, 0, el, 0, i, combine(lw, s, el, old, rhs), 0, 0, arr, lv->loc);
}

void kf_lower_assign(lw_t *lw, const kf_node *s)
{
    const kf_node *lv = s->a;
    switch (lv->kind) {
    case KF_N_NAME: {
        const kf_node *d = lv->sym;
        if (!d || !d->aux || d->type.kind == KF_TK_ARRAY) break;
        kf_val v = d->aux;
        kf_type t = kf_lower_vtype(lw, v);
        kf_val rhs = rhs_of(lw, s, t);
        kf_lower_mov(lw, v, combine(lw, s, t, v, rhs), s->loc);
        return;
    }
    case KF_N_INDEX: assign_index(lw, s, lv); return;
    case KF_N_MEMBER: {
        int lane = member_lane(lv->name);
        if (lane < 0 || lv->a->type.kind != KF_TK_VECTOR || (unsigned)lane >= lv->a->type.lanes) break;
        assign_lane(lw, s, lv->a, (uint32_t)lane);
        return;
    }
    default: break;
    }
    kf_lower_error(lw, lv->loc, "internal error: cannot assign to this expression");
}
