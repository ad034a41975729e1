/* Semantic analysis of expressions: name resolution, typing with untyped
 * constants, operator rules, conversions, indexing and members, calls to
 * fns and vector constructors, constant folding. Builtin calls live in
 * sema_builtin.c.
 *
 * Untyped constants. Literals (and inf/nan) are untyped; an operation on
 * untyped operands is evaluated exactly (integers in 128 bits, floats in
 * double) and stays untyped. When the context gives a type (the other
 * operand, a declared type, a parameter) kf_sema_adapt gives the whole
 * untyped subtree that type: the exact value must fit it. Used as a vector
 * (`v * 2.0`, `let v: f32x4 = 0.0`, clamp(v, 0.0, 1.0)) an untyped constant
 * is splatted: it takes the lane type (same range check) and the node
 * becomes the constructor call f32x4(2.0), so every typed vector operation
 * still has two operands of the same vector type.
 *
 * An @unroll variable with untyped bounds is untyped too, but its value is
 * known only per iteration: a subtree over it is typed for exact evaluation
 * (i64, f64) and converted to the type it adapts to, whose range each
 * iteration's value must fit, as a literal's (adapt_unrolled; the values
 * come per iteration from kf_sema_refold and lowering's ceval). */
#include "sema_impl.h"

#include <stdio.h>
#include <string.h>

typedef __int128 i128;

enum { ALLOW_BUF = 1, ALLOW_ARRAY = 2, ALLOW_VOID = 4, ALLOW_DIM3 = 8 };

kf_type kf_sema_err_type(void) { return (kf_type){KF_TK_SCALAR, KF_S_NONE, 1, 0, 0}; }
bool kf_sema_is_err(kf_type t) { return t.kind == KF_TK_SCALAR && t.scalar == KF_S_NONE; }
bool kf_sema_is_dim3(kf_type t) { return t.kind == KF_TK_VECTOR && t.lanes == 3; }

#define ERR kf_sema_err_type()
#define IS_ERR(t) kf_sema_is_err(t)

static kf_type set(kf_node *n, kf_type t) { n->type = t; return t; }
static kf_type fail(kf_node *n) { n->is_const = false; return set(n, ERR); }
#define untyped kf_sema_untyped
#define is_value kf_sema_is_value
#define is_num kf_sema_is_num
#define is_int_scalar kf_sema_is_int_scalar
static bool is_unroll_for(const kf_node *d) { return d && d->kind == KF_N_FOR && d->op == 1 && d->is_const; }
static const char *member_name(const kf_node *n) { return n->name ? (n->name[0] == '.' ? n->name + 1 : n->name) : "?"; }

static kf_type expr(kf_sema *s, kf_node *n);
static kf_type value_ex(kf_sema *s, kf_node *n, unsigned allow);
static kf_type value_hint(kf_sema *s, kf_node *n, kf_type hint, unsigned allow);

/* ---- exact untyped integers --------------------------------------------- */
static const i128 ULIM = (i128)1 << 64;

static int ubin(kf_op op, i128 a, i128 b, i128 *r)
{
    switch (op) {
    case KF_OP_ADD: *r = a + b; break;
    case KF_OP_SUB: *r = a - b; break;
    case KF_OP_MUL: if (__builtin_mul_overflow(a, b, r)) return 2; break;
    case KF_OP_DIV: if (!b) return 1; *r = a / b; break;
    case KF_OP_REM: if (!b) return 1; *r = a % b; break;
    case KF_OP_AND: *r = a & b; break;
    case KF_OP_OR: *r = a | b; break;
    case KF_OP_XOR: *r = a ^ b; break;
    case KF_OP_SHL:
        if (b < 0) return 3;
        if (a == 0) { *r = 0; break; }
        if (b >= 64 || __builtin_mul_overflow(a, (i128)1 << b, r)) return 2;
        break;
    case KF_OP_SHR:
        if (b < 0) return 3;
        *r = b >= 127 ? (a < 0 ? -1 : 0) : a >> b;
        break;
    default: return 4;
    }
    return (*r <= -ULIM || *r >= ULIM) ? 2 : 0;
}

static i128 uexact(const kf_node *n);

/* The value args[k] of the untyped generic call n (min, max, clamp, abs,
 * select), select's condition not counted; NULL past the last. */
static const kf_node *generic_arg(const kf_node *n, unsigned k)
{
    const kf_node *a = n->b;
    if (n->op == KF_BI_SELECT && a) a = a->next;
    while (a && k--) a = a->next;
    return a;
}

bool kf_sema_generic_call(const kf_node *n)
{
    return n->kind == KF_N_CALL && !n->sym && (n->op == KF_BI_MIN || n->op == KF_BI_MAX || n->op == KF_BI_CLAMP ||
                                               n->op == KF_BI_ABS || n->op == KF_BI_SELECT);
}

/* min, max, clamp, abs or select of the exact values v[] (select: pick). */
static i128 generic_value(kf_builtin bi, const i128 *v, bool pick_first)
{
    switch (bi) {
    case KF_BI_MIN: return v[0] < v[1] ? v[0] : v[1];
    case KF_BI_MAX: return v[0] > v[1] ? v[0] : v[1];
    case KF_BI_CLAMP: {
        i128 r = v[0] > v[1] ? v[0] : v[1];
        return r < v[2] ? r : v[2];
    }
    case KF_BI_ABS: return v[0] < 0 ? -v[0] : v[0];
    default: return pick_first ? v[0] : v[1];
    }
}

static i128 uexact(const kf_node *n)
{
    i128 r = 0;
    switch (n->kind) {
    case KF_N_INT: return (i128)n->ival;
    case KF_N_UNARY: r = uexact(n->a); return n->op == KF_OP_NEG ? -r : ~r;
    case KF_N_BINARY: ubin((kf_op)n->op, uexact(n->a), uexact(n->b), &r); return r;
    case KF_N_CALL:
        /* an untyped generic call holds past INT64_MAX too: from its arguments */
        if (kf_sema_generic_call(n) && n->type.scalar == KF_S_UINT) {
            i128 v[3] = {0};
            for (unsigned k = 0; k < 3 && generic_arg(n, k); k++) v[k] = uexact(generic_arg(n, k));
            return generic_value((kf_builtin)n->op, v, n->op != KF_BI_SELECT || n->b->cval.u);
        }
        return (i128)n->cval.i;
    default: return (i128)n->cval.i;
    }
}

static const char *i128_str(i128 v, char *buf, size_t size)
{
    char tmp[48];
    int n = 0;
    bool neg = v < 0;
    unsigned __int128 m = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    do tmp[n++] = (char)('0' + (int)(m % 10)); while ((m /= 10) && n < 47);
    size_t k = 0;
    if (neg && k + 1 < size) buf[k++] = '-';
    while (n && k + 1 < size) buf[k++] = tmp[--n];
    buf[k] = 0;
    return buf;
}

static bool i128_fits(kf_scalar s, i128 v)
{
    unsigned w = 8u * kf_scalar_bytes[s];
    if (kf_scalar_class[s] == 'u') return v >= 0 && v < ((i128)1 << w);
    return v >= -((i128)1 << (w - 1)) && v < ((i128)1 << (w - 1));
}

/* The untyped constant n as text, for messages. */
static const char *const_str(const kf_node *n, char *buf, size_t size)
{
    if (n->type.scalar == KF_S_UFLOAT) return kf_cv_str(KF_S_F64, (kf_cv){.f = n->cval.f}, buf, size);
    return i128_str(uexact(n), buf, size);
}
#define CSTR(n) const_str((n), (char[64]){0}, 64)

/* Let chains make these walks as deep as the program is long; past this
 * depth they stop (an absurd program then gets fewer @unroll range checks,
 * never a stack overflow). */
enum { MAX_WALK = 10000 };
static _Thread_local unsigned walk_depth;

static bool depends_walk(const kf_node *e);

static bool depends(const kf_node *e)
{
    if (walk_depth >= MAX_WALK) return false;
    walk_depth++;
    bool r = depends_walk(e);
    walk_depth--;
    return r;
}

static bool depends_walk(const kf_node *e)
{
    if (!e) return false;
    switch (e->kind) {
    case KF_N_NAME:
        if (!e->sym) return false;
        if (is_unroll_for(e->sym)) return true;
        return e->sym->kind == KF_N_LET && e->sym->b && e->sym->b->is_const && depends(e->sym->b);
    case KF_N_CALL:
        for (const kf_node *a = e->b; a; a = a->next)
            if (depends(a)) return true;
        return false;
    case KF_N_BINARY: case KF_N_UNARY: case KF_N_CAST: case KF_N_INDEX: case KF_N_MEMBER:
        return depends(e->a) || depends(e->b);
    default: return false;
    }
}

bool kf_sema_depends(const kf_sema *s, const kf_node *e)
{
    return s->unroll.len && depends(e);
}

/* ---- folding of one node from its children's cvals ------------------------ */
static kf_fold_status fold_call(kf_node *e)
{
    kf_cv args[4];
    unsigned n = 0;
    kf_scalar s = KF_S_NONE;
    const kf_node *first = e->b;
    if (e->op == KF_BI_BITCAST) {
        const kf_node *v = first ? first->next : NULL;
        if (!v || e->type.kind != KF_TK_SCALAR || v->type.kind != KF_TK_SCALAR) return KF_FOLD_NO;
        e->cval.u = kf_cv_from_bits((kf_scalar)e->type.scalar,
                                    kf_cv_to_bits((kf_scalar)v->type.scalar, (kf_cv){.u = v->cval.u})).u;
        return KF_FOLD_OK;
    }
    for (const kf_node *a = first; a; a = a->next) {
        if (n == 4 || !a->is_const || a->type.kind != KF_TK_SCALAR) return KF_FOLD_NO;
        args[n].u = a->cval.u;
        if (n == 0 || (e->op == KF_BI_SELECT && n == 1)) s = (kf_scalar)a->type.scalar;
        n++;
    }
    kf_cv r;
    kf_fold_status st = kf_fold_builtin((kf_builtin)e->op, s, args, n, &r);
    if (st == KF_FOLD_OK) e->cval.u = r.u;
    return st;
}

static kf_fold_status fold_node(kf_node *e)
{
    kf_cv r;
    kf_fold_status st = KF_FOLD_NO;
    switch (e->kind) {
    case KF_N_BINARY:
        st = kf_fold_binary((kf_scalar)e->a->type.scalar, (kf_op)e->op, (kf_cv){.u = e->a->cval.u},
                            (kf_cv){.u = e->b->cval.u}, &r);
        break;
    case KF_N_UNARY:
        st = kf_fold_unary((kf_scalar)e->a->type.scalar, (kf_op)e->op, (kf_cv){.u = e->a->cval.u}, &r);
        break;
    case KF_N_CAST:
        r = kf_fold_convert((kf_scalar)e->a->type.scalar, (kf_scalar)e->type.scalar, (kf_cv){.u = e->a->cval.u});
        st = KF_FOLD_OK;
        break;
    case KF_N_CALL: return e->sym ? KF_FOLD_NO : fold_call(e);
    default: break;
    }
    if (st == KF_FOLD_OK) e->cval.u = r.u;
    return st;
}

/* Folds n when all its operands are constants; reports division by zero. */
void kf_sema_try_fold(kf_sema *s, kf_node *n, bool operands_const)
{
    if (!operands_const || n->type.kind != KF_TK_SCALAR) return;
    kf_fold_status st = fold_node(n);
    if (st == KF_FOLD_OK) {
        n->is_const = true;
    } else if (st == KF_FOLD_DIV0 && !kf_sema_depends(s, n)) {
        kf_sema_error(s, n->loc, "division by zero in a constant expression");
        fail(n);
    }
}

static kf_scalar for_scalar(const kf_node *f) { return f->type.scalar == KF_S_UINT ? KF_S_I64 : (kf_scalar)f->type.scalar; }

static bool refold_walk(kf_node *e);

bool kf_sema_refold(kf_node *e)
{
    if (walk_depth >= MAX_WALK) return false;
    walk_depth++;
    bool r = refold_walk(e);
    walk_depth--;
    return r;
}

static bool refold_walk(kf_node *e)
{
    if (!e) return false;
    bool dep = false;
    switch (e->kind) {
    case KF_N_NAME:
        if (is_unroll_for(e->sym)) {
            kf_scalar to = e->type.scalar == KF_S_UINT ? KF_S_I64 : (kf_scalar)e->type.scalar;
            e->cval.u = kf_fold_convert(for_scalar(e->sym), to, (kf_cv){.u = e->sym->cval.u}).u;
            return true;
        }
        if (e->sym && e->sym->kind == KF_N_LET && e->sym->b && e->sym->b->is_const && kf_sema_refold(e->sym->b)) {
            e->cval.u = e->sym->b->cval.u;
            return true;
        }
        return false;
    case KF_N_BLOCK: case KF_N_TUPLE:
        for (kf_node *a = e->a; a; a = a->next) dep |= kf_sema_refold(a);
        return dep;
    case KF_N_CALL:
        for (kf_node *a = e->b; a; a = a->next) dep |= kf_sema_refold(a);
        break;
    case KF_N_FOR: case KF_N_IF: case KF_N_WHILE: case KF_N_LET: case KF_N_VAR: case KF_N_ASSIGN:
    case KF_N_RETURN: case KF_N_EXPR: case KF_N_BINARY: case KF_N_UNARY: case KF_N_CAST:
    case KF_N_INDEX: case KF_N_MEMBER: case KF_N_SHARED:
        dep |= kf_sema_refold(e->a);
        dep |= kf_sema_refold(e->b);
        dep |= kf_sema_refold(e->c);
        dep |= kf_sema_refold(e->d);
        break;
    default: return false;
    }
    if (dep && e->is_const && e->type.kind == KF_TK_SCALAR) fold_node(e);
    return dep;
}

/* ---- @unroll enumeration ---------------------------------------------------- */
typedef struct {
    bool (*fn)(kf_sema *, void *);
    void *ctx;
    uint32_t budget;
    bool stop;
} each_state;

static i128 cval_i128(const kf_node *n)
{
    if (!n) return 1;
    return kf_type_is_signed(n->type) || n->type.scalar == KF_S_UINT ? (i128)n->cval.i : (i128)n->cval.u;
}

static void set_for_value(kf_node *f, i128 v) { f->cval.u = kf_fold_wrap(for_scalar(f), (uint64_t)v); }

bool kf_sema_arm_dead(kf_node *cond, bool taken)
{
    if (!cond || IS_ERR(cond->type)) return false;
    if (cond->is_const) {
        kf_sema_refold(cond);
        return (cond->cval.u != 0) != taken;
    }
    if (cond->kind == KF_N_UNARY && cond->op == KF_OP_NOT) return kf_sema_arm_dead(cond->a, !taken);
    if (cond->kind == KF_N_BINARY && cond->op == (taken ? KF_OP_LAND : KF_OP_LOR))
        return kf_sema_arm_dead(cond->a, taken) || kf_sema_arm_dead(cond->b, taken);
    return false;
}

/* Whether an enclosing if's arm being checked is dead in this iteration. */
static bool dead_iteration(kf_sema *s)
{
    for (size_t i = 0; i < s->guards.len; i++)
        if (kf_sema_arm_dead(s->guards.data[i].cond, s->guards.data[i].taken)) return true;
    return false;
}

static void each_level(kf_sema *s, size_t lvl, each_state *st)
{
    if (st->stop) return;
    if (lvl == s->unroll.len) {
        if (dead_iteration(s)) return;
        if (st->budget == 0 || !st->fn(s, st->ctx)) st->stop = true;
        else st->budget--;
        return;
    }
    kf_node *f = s->unroll.data[lvl];
    kf_sema_refold(f->a), kf_sema_refold(f->b), kf_sema_refold(f->c);
    i128 a = cval_i128(f->a), b = cval_i128(f->b), c = cval_i128(f->c);
    if (c <= 0) return;
    for (i128 v = a; v < b && !st->stop; v += c) {
        if (st->budget == 0) {
            st->stop = true; /* too many combinations: the rest is lowering's to check */
            break;
        }
        st->budget--;
        set_for_value(f, v);
        each_level(s, lvl + 1, st);
    }
}

void kf_sema_each_unroll(kf_sema *s, bool (*fn)(kf_sema *, void *), void *ctx)
{
    each_state st = {fn, ctx, 1u << 16, false};
    each_level(s, 0, &st);
    for (size_t i = 0; i < s->unroll.len; i++) {
        kf_node *f = s->unroll.data[i];
        kf_sema_refold(f->a);
        set_for_value(f, cval_i128(f->a));
    }
}

/* ---- untyped constants ------------------------------------------------------ */
/* Gives every untyped node of the subtree (which mentions no @unroll
 * variable) type t, with its own value converted. */
static void retype(kf_node *n, kf_type t)
{
    if (!n || !untyped(n->type)) return;
    kf_cv v = {0};
    if (n->type.scalar == KF_S_UFLOAT) v.f = kf_type_is_float(t) ? kf_fold_round((kf_scalar)t.scalar, n->cval.f) : 0;
    else if (kf_type_is_float(t)) v = kf_fold_convert(KF_S_I64, (kf_scalar)t.scalar, (kf_cv){.i = (int64_t)uexact(n)});
    else v.u = kf_fold_wrap((kf_scalar)t.scalar, (uint64_t)uexact(n));
    if (n->kind == KF_N_BINARY || n->kind == KF_N_UNARY) {
        retype(n->a, t);
        retype(n->b, t);
    }
    n->type = t;
    n->cval.u = v.u;
}

static bool adapt_value(kf_sema *s, kf_node *n, kf_type t)
{
    kf_scalar ts = (kf_scalar)t.scalar;
    kf_cv v;
    if (n->type.scalar == KF_S_UFLOAT) {
        v.f = kf_fold_round(ts, n->cval.f);
        if (v.f != v.f ? false : (__builtin_isinf(v.f) && !__builtin_isinf(n->cval.f))) {
            kf_sema_error(s, n->loc, "constant %s does not fit %s", CSTR(n), TSTR(t));
            return false;
        }
    } else {
        i128 x = uexact(n);
        if (kf_type_is_int(t) && !i128_fits(ts, x)) {
            kf_sema_error(s, n->loc, "constant %s does not fit %s", CSTR(n), TSTR(t));
            return false;
        }
        if (kf_type_is_int(t)) v.u = (uint64_t)x;
        else if (x < 0) v = kf_fold_convert(KF_S_I64, ts, (kf_cv){.i = (int64_t)x});
        else v = kf_fold_convert(KF_S_U64, ts, (kf_cv){.u = (uint64_t)x});
        if (kf_type_is_float(t) && __builtin_isinf(v.f)) {
            kf_sema_error(s, n->loc, "constant %s does not fit %s", CSTR(n), TSTR(t));
            return false;
        }
    }
    retype(n, t);
    n->cval.u = v.u;
    n->is_const = true;
    return true;
}

/* ---- untyped constants over @unroll variables ---------------------------------------- */
/* Node n becomes `n as t`: its old self moves into a new child node. */
static kf_node *wrap_cast(kf_sema *s, kf_node *n, kf_type t)
{
    kf_node *c = kf_ast_new(s->cx->arena, (kf_node_kind)n->kind, n->loc);
    if (!c) return s->nomem = true, NULL;
    *c = *n;
    c->next = NULL;
    kf_node *next = n->next;
    *n = (kf_node){.kind = KF_N_CAST, .loc = c->loc, .a = c, .next = next, .type = t, .is_const = true};
    return c;
}

/* Whether the untyped subtree n holds an integer constant above INT64_MAX
 * (or, per adapt_unrolled, a value above it in some iteration): then its
 * integers are evaluated in u64, else in i64. */
static bool needs_u64(const kf_sema *s, const kf_node *n)
{
    if (!n || !untyped(n->type)) return false;
    if (!kf_sema_depends(s, n)) return n->type.scalar == KF_S_UINT && uexact(n) > INT64_MAX;
    if (kf_sema_generic_call(n)) {
        for (unsigned k = 0; generic_arg(n, k); k++)
            if (needs_u64(s, generic_arg(n, k))) return true;
        return false;
    }
    return (n->kind == KF_N_BINARY || n->kind == KF_N_UNARY) && (needs_u64(s, n->a) || needs_u64(s, n->b));
}

/* The untyped subtree n, which mentions an @unroll variable, typed for
 * exact evaluation per iteration, as literals are: integer nodes in iw
 * (i64, or u64 for constants past INT64_MAX), float nodes in f64, an
 * integer operand of a float operation converted to f64 there (as
 * untyped_binary does); n itself becomes `... as want` when that differs.
 * Constant parts take their values. Returns the node of the exact value
 * (n, or the one under the cast), NULL when out of memory. */
static kf_node *type_exact(kf_sema *s, kf_node *n, kf_type want, kf_scalar iw)
{
    if (!n || !untyped(n->type)) return n;
    kf_type own = kf_type_scalar(n->type.scalar == KF_S_UFLOAT ? KF_S_F64 : iw);
    kf_node *cast = n;
    if (own.scalar != want.scalar && !(n = wrap_cast(s, n, want))) return NULL;
    if (!kf_sema_depends(s, n)) {
        retype(n, own);
        if (cast != n) fold_node(cast);   /* refolds leave a constant part be: its cast takes its value now */
        return n;
    }
    if (n->kind == KF_N_BINARY || n->kind == KF_N_UNARY) {
        bool shift = n->kind == KF_N_BINARY && (n->op == KF_OP_SHL || n->op == KF_OP_SHR);
        if ((n->a && !type_exact(s, n->a, own, iw)) || (n->b && !type_exact(s, n->b, shift ? kf_type_scalar(iw) : own, iw)))
            return NULL;
    } else if (kf_sema_generic_call(n)) {
        for (unsigned k = 0; generic_arg(n, k); k++)
            if (!type_exact(s, (kf_node *)generic_arg(n, k), own, iw)) return NULL;
    }
    n->type = own;
    return n;
}

typedef struct {
    kf_node *e;   /* the exact value (i64, u64 or f64) */
    kf_type t;    /* the type it must fit */
    bool reported;
} unrolled_fit;

/* " at t = 3": the innermost @unroll variable's value, for messages. */
static const char *unroll_at(const kf_sema *s, char *buf, size_t size)
{
    const kf_node *f = s->unroll.len ? s->unroll.data[s->unroll.len - 1] : NULL;
    buf[0] = 0;
    if (f && f->name) {
        char fv[32];
        kf_cv_str(for_scalar(f), (kf_cv){.u = f->cval.u}, fv, sizeof fv);
        snprintf(buf, size, " at %s = %s", f->name, fv);
    }
    return buf;
}

/* What the integer nodes of an untyped subtree over @unroll variables hold
 * in one iteration, exactly: a value above INT64_MAX (big: the subtree is
 * then evaluated in u64), a negative value that u64 would misread (one
 * that /, %, >>, a conversion to float or the result itself uses: +, -, *,
 * <<, &, |, ^, - and ~ wrap to the same bits), a value outside both i64 and
 * u64 (over, at the node *at). */
typedef struct {
    bool big, neg_used, over;
    const kf_node *at;
} exact_span;

static void exact_use(exact_span *sp, i128 v) { sp->neg_used |= v < 0; }

static i128 exact_int(const kf_sema *s, const kf_node *n, exact_span *sp);

/* A float node: its integer operands, each converted to f64 (a use). */
static void exact_float(const kf_sema *s, const kf_node *n, exact_span *sp)
{
    bool call = kf_sema_generic_call(n);
    if (n->kind != KF_N_BINARY && n->kind != KF_N_UNARY && !call) return;
    const kf_node *k[3] = {call ? generic_arg(n, 0) : n->a, call ? generic_arg(n, 1) : n->b, call ? generic_arg(n, 2) : NULL};
    for (int i = 0; i < 3; i++) {
        if (!k[i] || !untyped(k[i]->type)) continue;
        if (k[i]->type.scalar == KF_S_UFLOAT) exact_float(s, k[i], sp);
        else exact_use(sp, exact_int(s, k[i], sp));
    }
}

static i128 exact_int(const kf_sema *s, const kf_node *n, exact_span *sp)
{
    i128 r = 0;
    if (!kf_sema_depends(s, n)) {
        r = uexact(n);
    } else if (n->kind == KF_N_NAME && is_unroll_for(n->sym)) {
        r = kf_scalar_class[for_scalar(n->sym)] == 'u' ? (i128)n->sym->cval.u : (i128)n->sym->cval.i;
    } else if (n->kind == KF_N_UNARY) {
        r = exact_int(s, n->a, sp);
        r = n->op == KF_OP_NEG ? -r : ~r;
    } else if (n->kind == KF_N_BINARY) {
        i128 a = exact_int(s, n->a, sp), b = exact_int(s, n->b, sp);
        if (n->op == KF_OP_DIV || n->op == KF_OP_REM || n->op == KF_OP_SHR) exact_use(sp, a), exact_use(sp, b);
        if (ubin((kf_op)n->op, a, b, &r) == 2 && !sp->over) sp->over = true, sp->at = n;
    } else if (kf_sema_generic_call(n)) {   /* min, max, clamp, abs compare their arguments: uses */
        i128 v[3] = {0};
        for (unsigned k = 0; k < 3 && generic_arg(n, k); k++) {
            v[k] = exact_int(s, generic_arg(n, k), sp);
            if (n->op != KF_BI_SELECT) exact_use(sp, v[k]);
        }
        if (n->op == KF_BI_SELECT) kf_sema_refold(n->b);
        r = generic_value((kf_builtin)n->op, v, n->op != KF_BI_SELECT || n->b->cval.u);
        if ((r <= -((i128)1 << 64) || r >= ((i128)1 << 64)) && !sp->over) sp->over = true, sp->at = n;
    }
    sp->big |= r > INT64_MAX;
    return r;
}

typedef struct {
    const kf_node *e;
    exact_span sp;
    bool reported;
} unrolled_span;

static bool span_unrolled(kf_sema *s, void *p)
{
    unrolled_span *u = p;
    if (u->e->type.scalar == KF_S_UFLOAT) exact_float(s, u->e, &u->sp);
    else exact_use(&u->sp, exact_int(s, u->e, &u->sp));
    char at[96];
    if (u->sp.over) {
        kf_sema_error(s, u->sp.at->loc, "constant expression overflows (@unroll%s): the result is outside the range of u64 and i64",
                      unroll_at(s, at, sizeof at));
    } else if (u->sp.neg_used && u->sp.big) {
        kf_sema_error(s, u->e->loc, "constant expression over @unroll variables has values below 0 and above %lld (@unroll%s): "
                      "no 64-bit type holds them all; convert a part of it with 'as'", (long long)INT64_MAX,
                      unroll_at(s, at, sizeof at));
    } else {
        return true;
    }
    u->reported = true;
    return false;
}

static bool check_unrolled_fit(kf_sema *s, void *p)
{
    unrolled_fit *u = p;
    kf_sema_refold(u->e);
    kf_scalar ts = (kf_scalar)u->t.scalar, es = (kf_scalar)u->e->type.scalar;
    i128 x = es == KF_S_U64 ? (i128)u->e->cval.u : (i128)u->e->cval.i;
    bool fits;
    char vb[48];
    kf_cv_str(es, (kf_cv){.u = u->e->cval.u}, vb, sizeof vb);
    if (es == KF_S_F64) fits = !__builtin_isinf(kf_fold_round(ts, u->e->cval.f)) || __builtin_isinf(u->e->cval.f);
    else if (kf_type_is_int(u->t)) fits = i128_fits(ts, x);
    else fits = !__builtin_isinf(kf_fold_convert(es, ts, (kf_cv){.u = u->e->cval.u}).f);
    if (fits) return true;
    char at[96];
    kf_sema_error(s, u->e->loc, "constant %s (@unroll%s) does not fit %s", vb, unroll_at(s, at, sizeof at), TSTR(u->t));
    u->reported = true;
    return false;
}

/* kf_sema_adapt of an untyped n over @unroll variables: evaluated exactly in
 * every iteration (i64 or u64, f64), then converted to t, whose range the
 * value must fit in each, like a literal's (LANGUAGE.md section 5). */
static bool adapt_unrolled(kf_sema *s, kf_node *n, kf_type t)
{
    unrolled_span sp = {n, {0}, false};
    kf_sema_each_unroll(s, span_unrolled, &sp);
    if (sp.reported) return fail(n), false;
    kf_node *e = type_exact(s, n, t, needs_u64(s, n) || sp.sp.big ? KF_S_U64 : KF_S_I64);
    if (!e) return fail(n), false;
    unrolled_fit u = {e, t, false};
    kf_sema_each_unroll(s, check_unrolled_fit, &u);
    if (u.reported) return fail(n), false;
    kf_sema_refold(n);
    return true;
}

/* An untyped constant used as vector type t becomes the constructor call
 * t(n): the constant itself (moved into a new node) takes t's lane type
 * with the usual range check, and lowering emits it as CONST + SPLAT. */
static bool splat(kf_sema *s, kf_node *n, kf_type t)
{
    kf_node *c = kf_ast_new(s->cx->arena, (kf_node_kind)n->kind, n->loc);
    kf_node *ty = kf_ast_new(s->cx->arena, KF_N_TYPE, n->loc);
    if (!c || !ty) {
        s->nomem = true;
        return fail(n), false;
    }
    *c = *n;
    c->next = NULL;
    if (!kf_sema_adapt(s, c, kf_type_elem(t))) return fail(n), false;
    ty->type = t;
    kf_node *next = n->next;
    *n = (kf_node){.kind = KF_N_CALL, .loc = c->loc, .a = ty, .b = c, .next = next, .type = t};
    return true;
}

bool kf_sema_adapt(kf_sema *s, kf_node *n, kf_type t)
{
    if (!n || !untyped(n->type)) return true;
    if (IS_ERR(t)) {
        fail(n);
        return false;
    }
    const char *what = n->type.scalar == KF_S_UFLOAT ? "float constant" : "constant";
    if (t.kind == KF_TK_VECTOR && !kf_sema_is_dim3(t)) return splat(s, n, t);
    if (t.kind != KF_TK_SCALAR || t.scalar == KF_S_BOOL) {
        kf_sema_error(s, n->loc, "%s %s cannot be used as %s", what, CSTR(n), TSTR(t));
        return fail(n), false;
    }
    if (n->type.scalar == KF_S_UFLOAT && !kf_type_is_float(t)) {
        kf_sema_error(s, n->loc, "float constant %s cannot be used as %s: convert it with 'as %s'", CSTR(n),
                      TSTR(t), TSTR(t));
        return fail(n), false;
    }
    if (kf_sema_depends(s, n)) return adapt_unrolled(s, n, t);
    if (!adapt_value(s, n, t)) return fail(n), false;
    return true;
}

void kf_sema_default(kf_sema *s, kf_node *n)
{
    if (!n || !untyped(n->type)) return;
    if (n->type.scalar == KF_S_UINT && !kf_sema_depends(s, n) && !i128_fits(KF_S_I32, uexact(n))) {
        kf_sema_error(s, n->loc, "constant %s does not fit i32, the type of an integer constant without context: "
                      "give it a type (let x: i64 = ...) or convert it (... as u64)", CSTR(n));
        fail(n);
        return;
    }
    kf_sema_adapt(s, n, kf_type_scalar(n->type.scalar == KF_S_UFLOAT ? KF_S_F32 : KF_S_I32));
}

static bool same_buffer_ok(kf_type have, kf_type want)
{
    return have.kind == KF_TK_BUFFER && want.kind == KF_TK_BUFFER && have.scalar == want.scalar &&
           have.lanes == want.lanes && ((have.flags & KF_TF_MUT) || !(want.flags & KF_TF_MUT));
}

/* A shared array (any length, or a view) passed to a `shared T[]` parameter. */
static bool shared_array_ok(kf_type have, kf_type want)
{
    return have.kind == KF_TK_ARRAY && want.kind == KF_TK_ARRAY && (have.flags & KF_TF_SHARED) &&
           (want.flags & KF_TF_DYN) && have.scalar == want.scalar && have.lanes == want.lanes;
}

bool kf_sema_expect(kf_sema *s, kf_node *n, kf_type t, const char *what)
{
    if (IS_ERR(n->type) || IS_ERR(t)) return false;
    if (untyped(n->type)) return kf_sema_adapt(s, n, t);
    if (kf_type_eq(n->type, t) || same_buffer_ok(n->type, t) || shared_array_ok(n->type, t)) return true;
    bool conv = is_num(n->type) || n->type.scalar == KF_S_BOOL;
    conv = conv && is_value(t);
    bool view = n->type.kind == KF_TK_ARRAY && t.kind == KF_TK_ARRAY && (n->type.flags & KF_TF_SHARED);
    kf_sema_error(s, n->loc, "%s must be %s, found %s%s", what, TSTR(t), TSTR(n->type),
                  conv ? ": convert it with 'as'"
                  : view ? ": view it with 'as shared T[]'"
                  : n->type.kind == KF_TK_ARRAY && t.kind == KF_TK_ARRAY ? ": only shared arrays can be passed" : "");
    return false;
}

/* ---- names ------------------------------------------------------------------ */
static kf_type builtin_value(kf_sema *s, kf_node *n)
{
    kf_builtin bi = kf_builtin_lookup(n->name);
    if (!bi) {
        char hint[160];
        kf_sema_suggest(s, n->name, hint, sizeof hint);
        kf_sema_error(s, n->loc, "unknown name '%s'%s", n->name, hint);
        return fail(n);
    }
    n->op = (uint16_t)bi;
    if (kf_builtin_kind[bi] == 'f') {
        kf_sema_error(s, n->loc, "'%s' is a builtin function: call it as %s(...)", n->name, n->name);
        return fail(n);
    }
    if (s->grid_mode && bi != KF_BI_WARP_SIZE && bi != KF_BI_INF && bi != KF_BI_NAN) {
        kf_sema_error(s, n->loc, "a %s expression cannot use '%s': only scalar parameters and constants are known on the host",
                      s->grid_mode, n->name);
        return fail(n);
    }
    switch (bi) {
    case KF_BI_LANE_ID: case KF_BI_WARP_ID: return set(n, kf_type_scalar(KF_S_U32));
    case KF_BI_WARP_SIZE:
        n->is_const = true;
        n->cval.u = 32;
        return set(n, kf_type_scalar(KF_S_U32));
    case KF_BI_INF: case KF_BI_NAN:
        n->is_const = true;
        n->cval.f = bi == KF_BI_INF ? __builtin_inf() : __builtin_nan("");
        return set(n, kf_type_scalar(KF_S_UFLOAT));
    default: return set(n, (kf_type){KF_TK_VECTOR, KF_S_U32, 3, 0, 0});
    }
}

static bool grid_name_ok(kf_sema *s, kf_node *n, kf_node *d)
{
    if (!s->grid_mode || d->kind == KF_N_CONST) return true;
    if (d->kind == KF_N_PARAM && d->type.kind == KF_TK_SCALAR) return true;
    if (d->kind == KF_N_PARAM && IS_ERR(d->type)) return false;
    const char *what = d->kind == KF_N_PARAM ? (d->type.kind == KF_TK_BUFFER ? "buffer" : "vector parameter") : "local";
    kf_sema_error(s, n->loc, "a %s expression cannot use %s '%s': only scalar parameters and constants are known on the host",
                  s->grid_mode, what, n->name);
    return false;
}

static kf_type name_expr(kf_sema *s, kf_node *n)
{
    kf_node *d = kf_sema_lookup(s, n->name);
    if (!d) return builtin_value(s, n);
    n->sym = d;
    if (!grid_name_ok(s, n, d)) return fail(n);
    switch (d->kind) {
    case KF_N_CONST:
        if (!kf_sema_ensure_const(s, d)) return fail(n);
        n->is_const = true;
        n->cval.u = d->cval.u;
        return set(n, d->type);
    case KF_N_LET:
        if (d->b && d->b->is_const && d->type.kind == KF_TK_SCALAR) {
            n->is_const = true;
            n->cval.u = d->b->cval.u;
        }
        return set(n, d->type);
    case KF_N_FOR:
        if (is_unroll_for(d)) {
            n->is_const = true;
            n->cval.u = d->cval.u;
        }
        return set(n, d->type);
    case KF_N_VAR: case KF_N_PARAM: case KF_N_SHARED: return set(n, d->type);
    case KF_N_FN:
        kf_sema_error(s, n->loc, "'%s' is a fn: call it as %s(...)", n->name, n->name);
        return fail(n);
    default:
        kf_sema_error(s, n->loc, "'%s' is a kernel and cannot be used in an expression", n->name);
        return fail(n);
    }
}

/* ---- operators ---------------------------------------------------------------- */
static bool is_arith(kf_op op) { return op == KF_OP_ADD || op == KF_OP_SUB || op == KF_OP_MUL || op == KF_OP_DIV; }
static bool is_bitwise(kf_op op) { return op == KF_OP_AND || op == KF_OP_OR || op == KF_OP_XOR || op == KF_OP_SHL || op == KF_OP_SHR; }
static bool is_cmp(kf_op op) { return op >= KF_OP_EQ && op <= KF_OP_GE; }
static bool is_logic(kf_op op) { return op == KF_OP_LAND || op == KF_OP_LOR; }

/* Checks operator op (spelled sp, e.g. "+" or "+=") on operands of type t. */
static bool op_rules(kf_sema *s, kf_loc loc, kf_op op, const char *sp, kf_type t)
{
    const char *need = NULL, *hint = "";
    if (is_arith(op) && !is_num(t)) need = "numbers";
    else if (op == KF_OP_REM && !is_int_scalar(t)) need = "integer operands";
    else if (is_bitwise(op) && !is_int_scalar(t)) need = "integer operands";
    else if ((op == KF_OP_EQ || op == KF_OP_NE) && t.kind != KF_TK_SCALAR) need = "scalar operands (compare vector components one by one)";
    else if (is_cmp(op) && op > KF_OP_NE && !(t.kind == KF_TK_SCALAR && is_num(t))) need = "numbers";
    else if (is_logic(op) && !kf_type_is_bool(t)) need = "bool operands";
    if (!need) return true;
    if (is_logic(op) && is_num(t) && t.kind == KF_TK_SCALAR) hint = ": compare with != 0";
    kf_sema_error(s, loc, "'%s' needs %s, found %s%s", sp, need, TSTR(t), hint);
    return false;
}

/* The order of the integer a and the float d, exactly: -1, 0 or 1, or 2 when
 * d is NaN. */
static int int_float_order(i128 a, double d)
{
    if (d != d) return 2;
    if (d >= 0x1p100) return -1;
    if (d <= -0x1p100) return 1;
    double f = __builtin_floor(d);
    i128 k = (i128)f;
    if (a != k) return a < k ? -1 : 1;
    return d > f ? -1 : 0;
}

/* The order of two untyped constants that are known now (not over an
 * @unroll variable), exactly: -1, 0, 1, or 2 when unordered. */
static int untyped_order(const kf_node *a, const kf_node *b)
{
    bool fa = a->type.scalar == KF_S_UFLOAT, fb = b->type.scalar == KF_S_UFLOAT;
    if (fa && fb) {
        double x = a->cval.f, y = b->cval.f;
        return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
    }
    if (fa) {
        int o = int_float_order(uexact(b), a->cval.f);
        return o == 2 ? 2 : -o;
    }
    if (fb) return int_float_order(uexact(a), b->cval.f);
    i128 x = uexact(a), y = uexact(b);
    return x < y ? -1 : x > y;
}

/* The range of two untyped integer operands over every @unroll iteration. */
typedef struct {
    const kf_node *a, *b;
    i128 lo, hi;
    bool any;
} compare_range;

static bool range_unrolled(kf_sema *s, void *p)
{
    compare_range *r = p;
    exact_span sp = {0};
    const kf_node *k[2] = {r->a, r->b};
    for (int i = 0; i < 2; i++) {
        i128 v = exact_int(s, k[i], &sp);
        if (!r->any || v < r->lo) r->lo = v;
        if (!r->any || v > r->hi) r->hi = v;
        r->any = true;
    }
    return true;
}

/* Two untyped operands compare as exact numbers (-1 < 2^64 - 1, and
 * 2^53 + 1 != 2^53 as a float); the operands still take i64, u64 or f64 for
 * the nodes below. A comparison over an @unroll variable is evaluated in
 * that type per iteration: the one that holds both sides in every
 * iteration. */
static kf_type untyped_compare(kf_sema *s, kf_node *n)
{
    bool fl = n->a->type.scalar == KF_S_UFLOAT || n->b->type.scalar == KF_S_UFLOAT;
    bool dep = kf_sema_depends(s, n->a) || kf_sema_depends(s, n->b);
    kf_scalar js = KF_S_F64;
    if (!fl) {
        i128 a = uexact(n->a), b = uexact(n->b), lo = a < b ? a : b, hi = a > b ? a : b;
        if (dep) {   /* both sides over every iteration: one 64-bit type must hold them */
            compare_range r = {n->a, n->b, 0, 0, false};
            kf_sema_each_unroll(s, range_unrolled, &r);
            lo = r.lo, hi = r.hi;
            if (r.any && lo < 0 && hi > INT64_MAX) {
                kf_sema_error(s, n->loc, "comparison over @unroll variables has values below 0 and above %lld across the "
                              "iterations: no 64-bit type holds them all; convert a part of it with 'as'", (long long)INT64_MAX);
                return fail(n);
            }
        }
        js = i128_fits(KF_S_I64, lo) && i128_fits(KF_S_I64, hi) ? KF_S_I64
             : (i128_fits(KF_S_U64, lo) && i128_fits(KF_S_U64, hi)) || dep ? KF_S_U64 : KF_S_F64;
    }
    int order = dep ? 2 : untyped_order(n->a, n->b);
    if (!kf_sema_adapt(s, n->a, kf_type_scalar(js)) || !kf_sema_adapt(s, n->b, kf_type_scalar(js))) return fail(n);
    set(n, kf_type_scalar(KF_S_BOOL));
    if (dep) {
        kf_sema_try_fold(s, n, n->a->is_const && n->b->is_const);
        return n->type;
    }
    kf_op op = (kf_op)n->op;
    bool r = order == 2 ? op == KF_OP_NE
             : op == KF_OP_EQ ? order == 0 : op == KF_OP_NE ? order != 0 : op == KF_OP_LT ? order < 0
             : op == KF_OP_LE ? order <= 0 : op == KF_OP_GT ? order > 0 : order >= 0;
    n->is_const = true;
    n->cval.u = r;
    return n->type;
}

static kf_type untyped_binary(kf_sema *s, kf_node *n)
{
    kf_op op = (kf_op)n->op;
    bool fl = n->a->type.scalar == KF_S_UFLOAT || n->b->type.scalar == KF_S_UFLOAT;
    const char *sp = kf_op_spelling[op];
    if (is_logic(op)) {
        kf_sema_error(s, n->loc, "'%s' needs bool operands, found %s", sp, TSTR(fl ? n->b->type : n->a->type));
        return fail(n);
    }
    if (is_cmp(op)) return untyped_compare(s, n);
    if (fl && !is_arith(op)) {
        kf_sema_error(s, n->loc, "'%s' needs integer operands, found untyped float", sp);
        return fail(n);
    }
    if (kf_sema_depends(s, n->a) || kf_sema_depends(s, n->b)) {
        /* over an @unroll variable: evaluated once the context gives a type */
        n->is_const = true;
        n->cval.u = 0;
        return set(n, kf_type_scalar(fl ? KF_S_UFLOAT : KF_S_UINT));
    }
    if (fl) {
        double a = n->a->type.scalar == KF_S_UFLOAT ? n->a->cval.f : (double)uexact(n->a);
        double b = n->b->type.scalar == KF_S_UFLOAT ? n->b->cval.f : (double)uexact(n->b);
        n->cval.f = op == KF_OP_ADD ? a + b : op == KF_OP_SUB ? a - b : op == KF_OP_MUL ? a * b : a / b;
        /* an infinity from finite operands, but for x / 0 (IEEE's exact infinity) */
        if (__builtin_isinf(n->cval.f) && !__builtin_isinf(a) && !__builtin_isinf(b) && !(op == KF_OP_DIV && b == 0)) {
            kf_sema_error(s, n->loc, "constant expression overflows: the result is outside the range of f64");
            return fail(n);
        }
        n->is_const = true;
        return set(n, kf_type_scalar(KF_S_UFLOAT));
    }
    i128 r = 0;
    int st = ubin(op, uexact(n->a), uexact(n->b), &r);
    if (st) {
        kf_sema_error(s, n->loc, st == 1 ? "division by zero in a constant expression"
                                 : st == 3 ? "negative shift amount in a constant expression"
                                           : "constant expression overflows: this step's value is outside the range of u64 and "
                                             "i64 (untyped constants are exact within 64 bits at every step)");
        return fail(n);
    }
    n->is_const = true;
    n->cval.i = (int64_t)r;
    return set(n, kf_type_scalar(KF_S_UINT));
}

/* Makes the types of a and b equal (adapting an untyped one); reports at loc. */
kf_type kf_sema_unify2(kf_sema *s, kf_loc loc, kf_node *a, kf_node *b, const char *sp)
{
    kf_type ta = a->type, tb = b->type;
    if (IS_ERR(ta) || IS_ERR(tb)) return ERR;
    if (untyped(ta) && !untyped(tb)) {
        if (!kf_sema_adapt(s, a, tb)) return ERR;
        ta = tb;
    } else if (untyped(tb) && !untyped(ta)) {
        if (!kf_sema_adapt(s, b, ta)) return ERR;
        tb = ta;
    }
    if (!kf_type_eq(ta, tb)) {
        kf_sema_error(s, loc, "mismatched types %s and %s in '%s': convert one with 'as'", TSTR(ta), TSTR(tb), sp);
        return ERR;
    }
    return ta;
}

/* How many leading value arguments of builtin bi have the call's own type
 * (select: after the condition, counted in *skip), 0 if its result does not
 * follow them. */
static unsigned typed_like_result(kf_builtin bi, unsigned *skip)
{
    *skip = bi == KF_BI_SELECT;
    if (bi == KF_BI_SELECT) return 2;
    if (bi == KF_BI_BFE || (bi >= KF_BI_SHFL && bi <= KF_BI_SHFL_DOWN)) return 1;
    if (bi == KF_BI_BFI) return 2;
    if ((bi >= KF_BI_EXP && bi <= KF_BI_FMA) || (bi >= KF_BI_WARP_SUM && bi <= KF_BI_WARP_MIN) || bi == KF_BI_CDIV ||
        bi == KF_BI_MUL_HI || bi == KF_BI_FAST_DIV)
        return 3;
    return 0;
}

/* Whether n's type may come from its context, read from the syntax alone:
 * an untyped literal; a builtin call whose result has its arguments' type
 * (select(c, 1, 2), min, sqrt, warp_sum, ...) when those all may; an
 * arithmetic operator over two that may, - or ~ over one. Such an operand
 * is checked after its typed neighbours, whose type is then its context
 * (select(c, 0, 1) .. n - 3). Only the order of checking follows from it. */
bool kf_sema_adapts(kf_sema *s, const kf_node *n)
{
    switch (n->kind) {
    case KF_N_INT: case KF_N_FLOAT: return true;
    case KF_N_NAME: {   /* inf and nan, and an @unroll variable over untyped bounds, are untyped */
        const kf_node *d = kf_sema_lookup(s, n->name);
        if (!d) return kf_builtin_lookup(n->name) == KF_BI_INF || kf_builtin_lookup(n->name) == KF_BI_NAN;
        return d->kind == KF_N_FOR && untyped(d->type);
    }
    case KF_N_UNARY: return n->op != KF_OP_NOT && kf_sema_adapts(s, n->a);
    case KF_N_BINARY:
        return !is_cmp((kf_op)n->op) && !is_logic((kf_op)n->op) && kf_sema_adapts(s, n->a) && kf_sema_adapts(s, n->b);
    case KF_N_CALL: {
        if (!n->a || n->a->kind != KF_N_NAME) return false;
        unsigned skip, nv = typed_like_result(kf_builtin_lookup(n->a->name), &skip);
        const kf_node *x = n->b;
        for (; x && skip; x = x->next) skip--;
        for (unsigned i = 0; x && i < nv; x = x->next, i++)
            if (!kf_sema_adapts(s, x)) return false;
        return nv > 0;
    }
    default: return false;
    }
}

static kf_type binary(kf_sema *s, kf_node *n)
{
    /* An operand that adapts (select(c, 1, 2), an operator over one) is
     * checked after a typed one, whose type is its context: select(c, 1,
     * 2) + x sees x's type. With none typed, an arithmetic operator's
     * operands take its own context (its result has their type): `let r:
     * u32 = select(c, 1, 2) + select(d, 2, 3)`. */
    kf_op op = (kf_op)n->op;
    kf_type h = s->hint_node == n && !is_cmp(op) && !is_logic(op) ? s->hint : kf_type_void();
    kf_type ta, tb;
    if (is_logic(op)) {
        /* the right runs only where the left does not decide: an @unroll
         * iteration where it does skips the right's checks (kf_sema_arm_dead) */
        ta = value_hint(s, n->a, h, 0);
        bool guard = !IS_ERR(ta) && kf_sema_depends(s, n->a);
        if (guard && !KF_VEC_PUSH(&s->guards, ((kf_sema_guard){n->a, op == KF_OP_LAND}))) s->nomem = true, guard = false;
        tb = value_hint(s, n->b, h, 0);
        if (guard) s->guards.len--;
    } else if (kf_sema_adapts(s, n->a) && !kf_sema_adapts(s, n->b)) {
        tb = value_hint(s, n->b, h, 0);
        ta = value_hint(s, n->a, untyped(tb) ? h : tb, 0);
    } else {
        ta = value_hint(s, n->a, h, 0);
        tb = value_hint(s, n->b, untyped(ta) ? h : ta, 0);
    }
    if (IS_ERR(ta) || IS_ERR(tb)) return fail(n);
    if (is_logic(op) && (!op_rules(s, n->loc, op, kf_op_spelling[op], ta) || !op_rules(s, n->loc, op, kf_op_spelling[op], tb)))
        return fail(n);
    if (untyped(ta) && untyped(tb)) return untyped_binary(s, n);
    /* 1 + true: the operator's error, not the constant's (it cannot be a bool either) */
    if ((untyped(ta) || untyped(tb)) && !op_rules(s, n->loc, op, kf_op_spelling[op], untyped(ta) ? tb : ta)) return fail(n);
    kf_type t = kf_sema_unify2(s, n->loc, n->a, n->b, kf_op_spelling[op]);
    if (IS_ERR(t) || !op_rules(s, n->loc, op, kf_op_spelling[op], t)) return fail(n);
    set(n, is_cmp(op) || is_logic(op) ? kf_type_scalar(KF_S_BOOL) : t);
    kf_sema_try_fold(s, n, n->a->is_const && n->b->is_const);
    return n->type;
}

static kf_type untyped_unary(kf_sema *s, kf_node *n)
{
    kf_type t = n->a->type;
    if (n->op == KF_OP_NOT || (n->op == KF_OP_BNOT && t.scalar == KF_S_UFLOAT)) {
        kf_sema_error(s, n->loc, "'%s' needs %s, found %s", kf_op_spelling[n->op],
                      n->op == KF_OP_NOT ? "a bool" : "an integer", TSTR(t));
        return fail(n);
    }
    n->is_const = true;
    if (t.scalar == KF_S_UFLOAT) {
        n->cval.f = -n->a->cval.f;
        return set(n, t);
    }
    if (kf_sema_depends(s, n->a)) return set(n, t);
    i128 v = uexact(n->a);
    v = n->op == KF_OP_NEG ? -v : ~v;
    n->cval.i = (int64_t)v;
    return set(n, t);
}

static kf_type unary(kf_sema *s, kf_node *n)
{
    /* - and ~ give their operand their own context (`let r: u32 = ~select(c, 1, 2)`) */
    bool passes = s->hint_node == n && (n->op == KF_OP_NEG || n->op == KF_OP_BNOT);
    kf_type t = value_hint(s, n->a, passes ? s->hint : kf_type_void(), 0);
    if (IS_ERR(t)) return fail(n);
    if (untyped(t)) return untyped_unary(s, n);
    const char *sp = kf_op_spelling[n->op];
    if (n->op == KF_OP_NEG && !is_num(t)) {
        kf_sema_error(s, n->loc, "'-' needs a number, found %s", TSTR(t));
        return fail(n);
    }
    if (n->op == KF_OP_NOT && !kf_type_is_bool(t)) {
        kf_sema_error(s, n->loc, "'!' needs a bool, found %s%s", TSTR(t),
                      is_num(t) && t.kind == KF_TK_SCALAR ? ": compare with == 0" : "");
        return fail(n);
    }
    if (n->op == KF_OP_BNOT && !is_int_scalar(t)) {
        kf_sema_error(s, n->loc, "'%s' needs an integer, found %s", sp, TSTR(t));
        return fail(n);
    }
    set(n, t);
    kf_sema_try_fold(s, n, n->a->is_const);
    return t;
}

/* ---- conversions ---------------------------------------------------------------- */
static kf_type cast_buffer(kf_sema *s, kf_node *n, kf_type from, kf_type to)
{
    if (from.kind == KF_TK_ARRAY) {
        kf_sema_error(s, n->loc, "an array cannot be viewed as a buffer (%s); a shared array can be viewed as "
                      "'shared T[]'", TSTR(to));
        return fail(n);
    }
    if (from.kind != KF_TK_BUFFER) {
        kf_sema_error(s, n->loc, "only a buffer can be viewed as %s, found %s", TSTR(to), TSTR(from));
        return fail(n);
    }
    if ((to.flags & KF_TF_MUT) && !(from.flags & KF_TF_MUT)) {
        kf_sema_error(s, n->loc, "cannot view read-only %s as %s: a read-only buffer cannot become writable", TSTR(from), TSTR(to));
        return fail(n);
    }
    return set(n, to);
}

static bool adapt_cast_operand(kf_sema *s, kf_node *a, kf_type to)
{
    if (!is_num(to) || to.kind != KF_TK_SCALAR) {
        kf_sema_error(s, a->loc, "cannot convert %s to %s with 'as'%s", TSTR(a->type), TSTR(to),
                      to.kind == KF_TK_VECTOR ? ": use a vector constructor" : "");
        return false;
    }
    if (a->type.scalar == KF_S_UFLOAT) return kf_sema_adapt(s, a, kf_type_scalar(KF_S_F64));
    if (kf_sema_depends(s, a))   /* exact, then converted */
        return kf_sema_adapt(s, a, kf_type_scalar(needs_u64(s, a) ? KF_S_U64 : KF_S_I64));
    /* an integer constant that fits the integer type: that type; else (and to a float
     * type, as 65520.0 as f16) i64 or u64, converted numerically by the 'as' */
    if (!kf_type_is_float(to) && i128_fits((kf_scalar)to.scalar, uexact(a))) return kf_sema_adapt(s, a, to);
    return kf_sema_adapt(s, a, kf_type_scalar(i128_fits(KF_S_I64, uexact(a)) ? KF_S_I64 : KF_S_U64));
}

/* `a as shared T[]`: the same bytes of a shared array seen as elements of
 * type T; its length is floor(bytes / size(T)) (known at run time when a's
 * is). Buffers and local arrays cannot be viewed as shared memory. */
static kf_type cast_shared(kf_sema *s, kf_node *n, kf_type from, kf_type to)
{
    const char *nm = n->a->kind == KF_N_NAME && n->a->name ? n->a->name : "this";
    if (from.kind == KF_TK_BUFFER) {
        kf_sema_error(s, n->loc, "a buffer can never be viewed as shared memory (%s as %s): copy it into a shared array",
                      TSTR(from), TSTR(to));
        return fail(n);
    }
    if (from.kind != KF_TK_ARRAY || !(from.flags & KF_TF_SHARED)) {
        kf_sema_error(s, n->loc, "only a shared array can be viewed as %s; '%s' is %s", TSTR(to), nm, TSTR(from));
        return fail(n);
    }
    if (from.flags & KF_TF_DYN) return set(n, to);
    uint64_t bytes = (uint64_t)from.len * kf_type_elem_bytes(from);
    if (bytes < kf_type_elem_bytes(to)) {
        kf_sema_error(s, n->loc, "'%s' (%s, %llu bytes) viewed as %s has no element: the view needs %u bytes", nm,
                      TSTR(from), (unsigned long long)bytes, TSTR(to), kf_type_elem_bytes(to));
        return fail(n);
    }
    to.len = (uint32_t)(bytes / kf_type_elem_bytes(to));
    to.flags = KF_TF_SHARED;
    return set(n, to);
}

static kf_type cast(kf_sema *s, kf_node *n)
{
    kf_type to = kf_sema_resolve_type(s, n->b, true, true);
    kf_type from = value_ex(s, n->a, ALLOW_BUF | ALLOW_ARRAY);
    if (IS_ERR(to) || IS_ERR(from)) return fail(n);
    if (to.kind == KF_TK_ARRAY) return cast_shared(s, n, from, to);
    if (to.kind == KF_TK_BUFFER) return cast_buffer(s, n, from, to);
    if (from.kind == KF_TK_BUFFER) {
        kf_sema_error(s, n->loc, "a buffer can only be viewed as another buffer type (&[T]), not as %s", TSTR(to));
        return fail(n);
    }
    if (from.kind == KF_TK_ARRAY) {
        kf_sema_error(s, n->loc, "an array can only be viewed as another shared array type (shared T[]), not as %s: "
                      "index it", TSTR(to));
        return fail(n);
    }
    if (untyped(from)) {
        if (!adapt_cast_operand(s, n->a, to)) return fail(n);
        from = n->a->type;
    }
    if (kf_type_is_bool(to) && !kf_type_is_bool(from)) {
        kf_sema_error(s, n->loc, "cannot convert %s to bool with 'as': write x != 0", TSTR(from));
        return fail(n);
    }
    if (from.kind != to.kind || from.lanes != to.lanes) {
        if (from.kind == KF_TK_SCALAR && to.kind == KF_TK_VECTOR)
            kf_sema_error(s, n->loc, "cannot convert %s to %s with 'as': write %s(x) to splat", TSTR(from), TSTR(to), TSTR(to));
        else
            kf_sema_error(s, n->loc, "cannot convert %s to %s with 'as': the lane counts differ", TSTR(from), TSTR(to));
        return fail(n);
    }
    set(n, to);
    if (n->a->is_const && to.kind == KF_TK_SCALAR) {
        n->cval.u = kf_fold_convert((kf_scalar)from.scalar, (kf_scalar)to.scalar, (kf_cv){.u = n->a->cval.u}).u;
        n->is_const = true;
    }
    return to;
}

/* ---- indexing and members ------------------------------------------------------------ */
typedef struct {
    kf_node *idx;
    uint64_t limit;   /* valid indices 0 .. limit-1; 0 = no upper bound */
    kf_type base;
    bool reported;
} index_check;

static bool check_index_value(kf_sema *s, void *p)
{
    index_check *ic = p;
    kf_node *i = ic->idx;
    bool neg = kf_type_is_signed(i->type) && i->cval.i < 0;
    if (s->dead || (!neg && (ic->limit == 0 || i->cval.u < ic->limit))) return true;
    char vb[32];
    kf_cv_str((kf_scalar)i->type.scalar, (kf_cv){.u = i->cval.u}, vb, sizeof vb);
    if (neg && ic->limit == 0) kf_sema_error(s, i->loc, "index %s is negative", vb);
    else if (ic->base.kind == KF_TK_VECTOR)
        kf_sema_error(s, i->loc, "index %s is out of range for %s (0..%llu)", vb, TSTR(ic->base), (unsigned long long)ic->limit - 1);
    else kf_sema_error(s, i->loc, "index %s is out of bounds for %s", vb, TSTR(ic->base));
    ic->reported = true;
    return false;
}

static bool check_index_iteration(kf_sema *s, void *p)
{
    kf_sema_refold(((index_check *)p)->idx);
    return check_index_value(s, p);
}

static bool check_const_index(kf_sema *s, kf_node *idx, kf_type base, uint64_t limit)
{
    index_check ic = {idx, limit, base, false};
    if (!idx->is_const) return true;
    if (kf_sema_depends(s, idx)) kf_sema_each_unroll(s, check_index_iteration, &ic);
    else check_index_value(s, &ic);
    return !ic.reported;
}

/* Checks and types an index expression: an integer (untyped: u32). */
bool kf_sema_index(kf_sema *s, kf_node *i)
{
    kf_type t = value_ex(s, i, 0);
    if (IS_ERR(t)) return false;
    if (untyped(t) && t.scalar == KF_S_UINT) {
        if (!kf_sema_depends(s, i) && uexact(i) < 0) {
            kf_sema_error(s, i->loc, "index %s is negative", CSTR(i));
            return fail(i), false;
        }
        return kf_sema_adapt(s, i, kf_type_scalar(kf_sema_depends(s, i) || i128_fits(KF_S_U32, uexact(i)) ? KF_S_U32 : KF_S_U64));
    }
    if (!is_int_scalar(t)) {
        kf_sema_error(s, i->loc, "an index must be an integer, found %s", TSTR(t));
        return fail(i), false;
    }
    return true;
}

static kf_type index_expr(kf_sema *s, kf_node *n)
{
    kf_type bt = value_ex(s, n->a, ALLOW_BUF | ALLOW_ARRAY);
    bool iok = kf_sema_index(s, n->b);
    if (IS_ERR(bt) || !iok) return fail(n);
    switch (bt.kind) {
    case KF_TK_VECTOR:
        if (!n->b->is_const) {
            kf_sema_error(s, n->b->loc, "a vector index must be a compile-time constant (0..%u): use .x .y .z .w, a constant or an @unroll loop variable", bt.lanes - 1u);
            return fail(n);
        }
        if (!check_const_index(s, n->b, bt, bt.lanes)) return fail(n);
        return set(n, kf_type_scalar((kf_scalar)bt.scalar));
    case KF_TK_BUFFER:
        if (!check_const_index(s, n->b, bt, 0)) return fail(n);
        return set(n, kf_type_elem(bt));
    case KF_TK_ARRAY:
        if (!check_const_index(s, n->b, bt, bt.len)) return fail(n);
        return set(n, kf_type_elem(bt));
    default:
        kf_sema_error(s, n->loc, "cannot index %s: only buffers, arrays and vectors can be indexed", TSTR(bt));
        return fail(n);
    }
}

static kf_type member(kf_sema *s, kf_node *n)
{
    kf_type bt = value_ex(s, n->a, ALLOW_DIM3);
    if (IS_ERR(bt)) return fail(n);
    const char *m = member_name(n);
    int k = strlen(m) != 1 ? -1 : m[0] == 'x' ? 0 : m[0] == 'y' ? 1 : m[0] == 'z' ? 2 : m[0] == 'w' ? 3 : -1;
    if (kf_sema_is_dim3(bt)) {
        if (k < 0 || k > 2) {
            kf_sema_error(s, n->loc, "'%s' has members .x .y .z, not .%s", n->a->name ? n->a->name : "dim3", m);
            return fail(n);
        }
        return set(n, kf_type_scalar(KF_S_U32));
    }
    if (bt.kind != KF_TK_VECTOR) {
        kf_sema_error(s, n->loc, "'.%s' needs a vector, found %s", m, TSTR(bt));
        return fail(n);
    }
    if (k < 0 || k >= bt.lanes || bt.lanes > 4) {
        kf_sema_error(s, n->loc, "%s has no member .%s%s", TSTR(bt), m,
                      bt.lanes > 4 ? ": use v[k] for vectors of more than 4 lanes" : "");
        return fail(n);
    }
    return set(n, kf_type_scalar((kf_scalar)bt.scalar));
}

/* ---- calls --------------------------------------------------------------------------- */
static unsigned count_args(const kf_node *a)
{
    unsigned n = 0;
    for (; a; a = a->next) n++;
    return n;
}

static kf_type construct(kf_sema *s, kf_node *n)
{
    kf_type vt = n->a->type;
    unsigned na = count_args(n->b), i = 1;
    bool ok = true;
    /* each value has the lane type: an untyped select(c, 1, 2) there takes it */
    kf_type lane = vt.kind == KF_TK_VECTOR ? kf_type_scalar((kf_scalar)vt.scalar) : kf_type_void();
    for (kf_node *a = n->b; a; a = a->next) ok &= !IS_ERR(value_hint(s, a, lane, 0));
    if (vt.kind != KF_TK_VECTOR) {
        kf_sema_error(s, n->loc, "%s(...) is not a conversion: write 'x as %s'", TSTR(vt), TSTR(vt));
        return fail(n);
    }
    if (na != vt.lanes && na != 1) {
        kf_sema_error(s, n->loc, "%s takes %u values, or 1 to splat, found %u", TSTR(vt), vt.lanes, na);
        return fail(n);
    }
    kf_type et = kf_type_scalar((kf_scalar)vt.scalar);
    for (kf_node *a = n->b; a; a = a->next, i++) {
        char what[64];
        snprintf(what, sizeof what, "value %u of %s", i, TSTR(vt));
        if (ok && !IS_ERR(a->type)) ok &= kf_sema_expect(s, a, et, what);
    }
    return ok ? set(n, vt) : fail(n);
}

static kf_type fn_call(kf_sema *s, kf_node *n, kf_node *fn)
{
    n->sym = fn;
    n->a->sym = fn;
    n->a->type = kf_type_void();
    if (s->grid_mode) {
        kf_sema_error(s, n->loc, "a %s expression cannot call fn '%s'", s->grid_mode, fn->name);
        return fail(n);
    }
    if (s->func) {
        kf_sema_call c = {s->func, fn, n->loc};
        if (!KF_VEC_PUSH(&s->calls, c)) s->nomem = true;
    }
    unsigned np = count_args(fn->a), na = count_args(n->b), i = 1;
    bool ok = true;
    kf_node *hp = fn->a;
    for (kf_node *a = n->b; a; a = a->next, hp = hp ? hp->next : NULL)
        ok &= !IS_ERR(value_hint(s, a, hp ? hp->type : kf_type_void(),
                                 ALLOW_BUF | (hp && hp->type.kind == KF_TK_ARRAY ? ALLOW_ARRAY : 0)));
    if (np != na) {
        kf_sema_error(s, n->loc, "fn '%s' takes %u argument%s, found %u", fn->name, np, np == 1 ? "" : "s", na);
        return fail(n);
    }
    kf_node *p = fn->a;
    for (kf_node *a = n->b; a; a = a->next, p = p->next, i++) {
        char what[160];
        snprintf(what, sizeof what, "argument %u of '%s' (%s)", i, fn->name, p->name ? p->name : "?");
        if (!IS_ERR(a->type)) ok &= kf_sema_expect(s, a, p->type, what);
    }
    if (!ok || IS_ERR(fn->type)) return fail(n);
    return set(n, fn->type);
}

kf_type kf_sema_builtin_call(kf_sema *s, kf_node *n, kf_builtin bi);

static kf_type call(kf_sema *s, kf_node *n)
{
    kf_node *callee = n->a;
    if (callee && callee->kind == KF_N_TYPE) return construct(s, n);
    if (!callee || callee->kind != KF_N_NAME) {
        kf_sema_error(s, n->loc, "only fns, builtins and vector types can be called");
        return fail(n);
    }
    kf_node *d = kf_sema_lookup(s, callee->name);
    if (d && d->kind == KF_N_FN) return fn_call(s, n, d);
    if (d) {
        kf_sema_error(s, callee->loc, d->kind == KF_N_KERNEL ? "kernel '%s' cannot be called: only fns can"
                                                             : "'%s' is not a function", callee->name);
        return fail(n);
    }
    kf_builtin bi = kf_builtin_lookup(callee->name);
    if (!bi || kf_builtin_kind[bi] != 'f') {
        char hint[160] = "";
        if (!bi) kf_sema_suggest(s, callee->name, hint, sizeof hint);
        kf_sema_error(s, callee->loc, bi ? "'%s' is not a function%s" : "unknown function '%s'%s", callee->name, hint);
        for (kf_node *a = n->b; a; a = a->next) value_ex(s, a, ALLOW_BUF);
        return fail(n);
    }
    callee->op = (uint16_t)bi;
    callee->type = kf_type_void();
    n->op = (uint16_t)bi;
    return kf_sema_builtin_call(s, n, bi);
}

/* ---- dispatch ------------------------------------------------------------------------ */
static kf_type expr(kf_sema *s, kf_node *n)
{
    static _Thread_local unsigned depth;
    if (!n) return ERR;
    if (n->kind == KF_N_TYPE || n->kind == KF_N_TYPE_BUF || n->kind == KF_N_TYPE_ARRAY) {
        kf_type t = kf_sema_resolve_type(s, n, true, true);
        return IS_ERR(t) ? t : (kf_type){KF_TK_TYPE, t.scalar, t.lanes, t.flags, t.len};
    }
    n->is_const = false;
    if (depth > 2000) {
        kf_sema_error(s, n->loc, "expression is nested too deeply");
        return fail(n);
    }
    depth++;
    kf_type t;
    switch (n->kind) {
    case KF_N_INT: n->is_const = true; n->cval.u = n->ival; t = set(n, kf_type_scalar(KF_S_UINT)); break;
    case KF_N_FLOAT: n->is_const = true; n->cval.f = n->fval; t = set(n, kf_type_scalar(KF_S_UFLOAT)); break;
    case KF_N_BOOL: n->is_const = true; n->cval.u = n->ival != 0; t = set(n, kf_type_scalar(KF_S_BOOL)); break;
    case KF_N_NAME: t = name_expr(s, n); break;
    case KF_N_BINARY: t = binary(s, n); break;
    case KF_N_UNARY: t = unary(s, n); break;
    case KF_N_CAST: t = cast(s, n); break;
    case KF_N_CALL: t = call(s, n); break;
    case KF_N_INDEX: t = index_expr(s, n); break;
    case KF_N_MEMBER: t = member(s, n); break;
    case KF_N_TUPLE:
        kf_sema_error(s, n->loc, "a tuple is only allowed in @schedule");
        t = fail(n);
        break;
    default:
        kf_sema_error(s, n->loc, "expected an expression");
        t = fail(n);
        break;
    }
    depth--;
    return t;
}

static const char *what_name(const kf_node *n) { return n->kind == KF_N_NAME && n->name ? n->name : NULL; }

static kf_type value_ex(kf_sema *s, kf_node *n, unsigned allow)
{
    kf_type t = expr(s, n);
    if (IS_ERR(t)) return t;
    const char *nm = what_name(n);
    if (t.kind == KF_TK_TYPE) {
        kf_sema_error(s, n->loc, "type %s cannot be used as a value", TSTR(kf_type_vector((kf_scalar)t.scalar, t.lanes)));
    } else if (kf_sema_is_dim3(t) && !(allow & ALLOW_DIM3)) {
        kf_sema_error(s, n->loc, "'%s' is a dim3: use %s.x, %s.y or %s.z", nm ? nm : "?", nm ? nm : "?", nm ? nm : "?", nm ? nm : "?");
    } else if (t.kind == KF_TK_ARRAY && !(allow & ALLOW_ARRAY)) {
        kf_sema_error(s, n->loc, "array '%s' (%s) cannot be used as a value: index it", nm ? nm : "?", TSTR(t));
    } else if (t.kind == KF_TK_BUFFER && !(allow & ALLOW_BUF)) {
        kf_sema_error(s, n->loc, "buffer '%s' (%s) cannot be used as a value: index it", nm ? nm : "?", TSTR(t));
    } else if (t.kind == KF_TK_VOID && !(allow & ALLOW_VOID)) {
        const char *callee = n->kind == KF_N_CALL && n->a ? what_name(n->a) : NULL;
        if (callee) kf_sema_error(s, n->loc, "'%s' returns no value: call it as a statement", callee);
        else kf_sema_error(s, n->loc, "this call returns no value");
    } else {
        return t;
    }
    if (n->kind != KF_N_TYPE && n->kind != KF_N_TYPE_BUF && n->kind != KF_N_TYPE_ARRAY) fail(n);
    return ERR;
}

kf_type kf_sema_value(kf_sema *s, kf_node *n, bool allow_buffer)
{
    return value_ex(s, n, allow_buffer ? ALLOW_BUF : 0);
}

static kf_type value_hint(kf_sema *s, kf_node *n, kf_type hint, unsigned allow)
{
    kf_node *pn = s->hint_node;
    kf_type ph = s->hint;
    s->hint_node = kf_sema_is_value(hint) && !untyped(hint) ? n : NULL;
    s->hint = hint;
    kf_type t = value_ex(s, n, allow);
    s->hint_node = pn;
    s->hint = ph;
    return t;
}

kf_type kf_sema_value_hint(kf_sema *s, kf_node *n, kf_type hint, bool allow_buffer)
{
    return value_hint(s, n, hint, allow_buffer ? ALLOW_BUF : 0);
}

kf_type kf_sema_value_let(kf_sema *s, kf_node *n, kf_type hint)
{
    return value_hint(s, n, hint, ALLOW_BUF | ALLOW_ARRAY);
}

i128 kf_sema_uexact(const kf_node *n) { return uexact(n); }

/* Checks an expression statement: any expression, void calls included. */
kf_type kf_sema_expr_stmt(kf_sema *s, kf_node *n)
{
    kf_type t = value_ex(s, n, ALLOW_VOID);
    kf_sema_default(s, n);
    return t;
}

/* ---- assignment ---------------------------------------------------------------------- */
static bool var_vector_base(kf_sema *s, kf_node *base, kf_loc loc)
{
    if (base->kind == KF_N_NAME && base->sym && base->sym->kind == KF_N_VAR) return true;
    const kf_node *arr = base->kind == KF_N_INDEX ? base->a : NULL;
    if (arr && arr->type.kind == KF_TK_BUFFER) {
        char et[32];
        kf_sema_error(s, loc, "only a component of a 'var' vector can be assigned: to store one lane of a buffer "
                      "element, view the buffer as its lanes' type, (buf as &mut [%s])[i * %u + k] = ..., or store "
                      "the whole vector", kf_type_str(kf_type_scalar((kf_scalar)arr->type.scalar), et, sizeof et),
                      (unsigned)arr->type.lanes);
    } else if (arr) {
        kf_sema_error(s, loc, "only a component of a 'var' vector can be assigned: copy the element into one, "
                      "set the component and store it back (var t = a[i]; t.x += 1.0; a[i] = t;)");
    } else {
        kf_sema_error(s, loc, "only a component of a 'var' vector can be assigned%s%s%s",
                      base->kind == KF_N_NAME ? ": '" : "", base->kind == KF_N_NAME ? base->name : "",
                      base->kind == KF_N_NAME ? "' is not a var" : "");
    }
    return false;
}

static bool name_assignable(kf_sema *s, kf_node *lv)
{
    kf_node *d = lv->sym;
    const char *nm = lv->name;
    if (!d) kf_sema_error(s, lv->loc, "cannot assign to builtin '%s'", nm);
    else if (d->kind == KF_N_VAR && d->type.kind == KF_TK_ARRAY)
        kf_sema_error(s, lv->loc, "cannot assign to the whole array '%s': assign its elements", nm);
    else if (d->kind == KF_N_VAR) return true;
    else if (d->kind == KF_N_LET)
        kf_sema_error(s, lv->loc, "cannot assign to '%s': it is declared with 'let'; declare it with 'var' to change it", nm);
    else if (d->kind == KF_N_PARAM)
        kf_sema_error(s, lv->loc, "cannot assign to parameter '%s': copy it into a 'var' first", nm);
    else if (d->kind == KF_N_FOR) kf_sema_error(s, lv->loc, "cannot assign to loop variable '%s'", nm);
    else if (d->kind == KF_N_CONST) kf_sema_error(s, lv->loc, "cannot assign to constant '%s'", nm);
    else if (d->kind == KF_N_SHARED)
        kf_sema_error(s, lv->loc, "cannot assign to the whole shared array '%s': assign its elements", nm);
    else kf_sema_error(s, lv->loc, "cannot assign to '%s'", nm);
    return false;
}

/* Checks that the (already typed) expression lv may be assigned. */
static bool assignable(kf_sema *s, kf_node *lv)
{
    if (lv->kind == KF_N_NAME) return name_assignable(s, lv);
    if (lv->kind == KF_N_MEMBER) return var_vector_base(s, lv->a, lv->loc);
    if (lv->kind != KF_N_INDEX) {
        kf_sema_error(s, lv->loc, "cannot assign to this expression: assign to a var, buf[i], arr[i] or v.x");
        return false;
    }
    kf_type bt = lv->a->type;
    if (bt.kind == KF_TK_VECTOR) return var_vector_base(s, lv->a, lv->loc);
    if (bt.kind == KF_TK_BUFFER && !(bt.flags & KF_TF_MUT)) {
        kf_type mt = bt;
        mt.flags |= KF_TF_MUT;
        kf_sema_error(s, lv->loc, "buffer '%s' is read-only (%s); declare it '%s'",
                      lv->a->kind == KF_N_NAME ? lv->a->name : "?", TSTR(bt), TSTR(mt));
        return false;
    }
    return true;
}

void kf_sema_assign(kf_sema *s, kf_node *n)
{
    /* a whole array, buffer or dim3 on the left is reported by assignable() */
    kf_type lt = value_ex(s, n->a, n->a->kind == KF_N_NAME ? ALLOW_ARRAY | ALLOW_BUF | ALLOW_DIM3 : 0);
    kf_type rt = value_hint(s, n->b, lt, 0);
    if (IS_ERR(lt)) {
        if (lt.kind == KF_TK_SCALAR && n->a->kind == KF_N_NAME && n->a->sym) assignable(s, n->a);
        kf_sema_default(s, n->b);
        return;
    }
    if (!assignable(s, n->a) || IS_ERR(rt)) {
        kf_sema_default(s, n->b);
        return;
    }
    if (n->op == KF_OP_ASSIGN || n->op == KF_OP_NONE) {
        char what[96];
        snprintf(what, sizeof what, "the value assigned to %s%s%s", n->a->kind == KF_N_NAME ? "'" : "",
                 n->a->kind == KF_N_NAME ? n->a->name : "this element", n->a->kind == KF_N_NAME ? "'" : "");
        kf_sema_expect(s, n->b, lt, what);
        return;
    }
    char sp[8];
    snprintf(sp, sizeof sp, "%s=", kf_op_spelling[n->op < KF_OP_COUNT ? n->op : 0]);
    kf_type t = kf_sema_unify2(s, n->loc, n->a, n->b, sp);
    if (!IS_ERR(t)) op_rules(s, n->loc, (kf_op)n->op, sp, t);
}
