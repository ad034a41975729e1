/* Typing of builtin calls (LANGUAGE.md sections 7 and 8). Each builtin has
 * an arity (the builtin table, ast.h) and an operand class; messages name
 * the builtin and what it accepts. f16/bf16 vectors (f16x2 ... bf16x8, pairs
 * of packed lanes) take + - * fma min max abs, each rounded once per lane. Untyped constant arguments adapt to the other arguments
 * (min(x, 1)), or default (i32/f32; f32 for float-only builtins). The
 * generic builtins (min, max, clamp, abs, select) over untyped constants
 * stay untyped constants (`let m: u32 = min(1, 2)`); over untyped runtime
 * arguments (select(c, 1, 2)) they take the type the context gives.
 * Pure builtins over constants fold with the runtime semantics; those whose
 * GPU result is an approximation (exp, sin, ...) are never folded. The
 * tensor-core builtins take their shape from the fragment types (mma), a
 * shared array of 16-bit elements (ldmatrix) or a shared array and a buffer
 * of one element type (cp_async, 4 or 5 arguments: two rows of the table). */
#include "numeric.h"
#include "sema_impl.h"

#include <stdio.h>
#include <string.h>

/* Operand classes. */
typedef enum {
    C_NONE,
    C_F3264,     /* f32, f64 or a vector of them */
    C_FMA,       /* f32, f64 or a vector of them, or an f16/bf16 vector */
    C_F32,       /* f32 or an f32 vector */
    C_WARP,      /* 32/64-bit scalar or a vector of them */
    C_INT,       /* integer scalar */
    C_INT3264,   /* 32/64-bit integer scalar */
    C_MINMAX,    /* integer or float scalar, f32/f64 or f16/bf16 vector */
    C_ABS,       /* integer scalar, f32/f64 (vector), f16/bf16 vector */
    C_BYTES4,    /* i8x4 or u8x4 */
    C_ANY,       /* any scalar or vector */
} bclass;

static const char *const class_desc[] = {
    [C_NONE] = "nothing",
    [C_F3264] = "f32, f64 or a vector of them",
    [C_FMA] = "f32, f64, a vector of them, or an f16/bf16 vector (f16x2 ... bf16x8)",
    [C_F32] = "f32 or an f32 vector",
    [C_WARP] = "a 32- or 64-bit value or a vector of them",
    [C_INT] = "an integer",
    [C_INT3264] = "a 32- or 64-bit integer",
    [C_MINMAX] = "integers, floats, f32/f64 vectors or f16/bf16 vectors",
    [C_ABS] = "an integer, f32, f64, a vector of f32/f64 or an f16/bf16 vector",
    [C_BYTES4] = "i8x4 or u8x4 (four bytes)",
    [C_ANY] = "a scalar or vector",
};

static bool f3264(kf_type t) { return kf_sema_is_value(t) && (t.scalar == KF_S_F32 || t.scalar == KF_S_F64); }
/* f16x2, f16x4, f16x8 and the bf16 ones: pairs of packed half lanes. */
static bool half_vec(kf_type t)
{
    return kf_sema_is_value(t) && t.kind == KF_TK_VECTOR && (t.scalar == KF_S_F16 || t.scalar == KF_S_BF16);
}

static bool accepts(bclass c, kf_type t)
{
    bool scalar = t.kind == KF_TK_SCALAR;
    switch (c) {
    case C_F3264: return f3264(t);
    case C_FMA: return f3264(t) || half_vec(t);
    case C_F32: return kf_sema_is_value(t) && t.scalar == KF_S_F32;
    case C_WARP: return kf_sema_is_num(t) && (kf_scalar_bytes[t.scalar] == 4 || kf_scalar_bytes[t.scalar] == 8);
    case C_INT: return kf_sema_is_int_scalar(t);
    case C_INT3264: return kf_sema_is_int_scalar(t) && kf_scalar_bytes[t.scalar] >= 4;
    case C_MINMAX: return kf_sema_is_num(t) && (scalar || f3264(t) || half_vec(t));
    case C_ABS: return kf_sema_is_int_scalar(t) || f3264(t) || half_vec(t);
    case C_BYTES4:
        return kf_sema_is_value(t) && t.kind == KF_TK_VECTOR && t.lanes == 4 && (t.scalar == KF_S_I8 || t.scalar == KF_S_U8);
    case C_ANY: return kf_sema_is_value(t);
    default: return false;
    }
}

static bool grid_allowed(kf_builtin bi)
{
    switch (bi) {
    case KF_BI_ABS: case KF_BI_MIN: case KF_BI_MAX: case KF_BI_CLAMP: case KF_BI_CLZ: case KF_BI_POPC:
    case KF_BI_CDIV: case KF_BI_MUL_HI: case KF_BI_SELECT: case KF_BI_FLOOR: case KF_BI_CEIL:
    case KF_BI_TRUNC: case KF_BI_ROUND: case KF_BI_SQRT: case KF_BI_FMA: return true;
    default: return false;
    }
}

static kf_type fail(kf_node *n)
{
    n->is_const = false;
    n->type = kf_sema_err_type();
    return n->type;
}

static kf_type done(kf_sema *s, kf_node *n, kf_type t, bool fold)
{
    n->type = t;
    if (fold) {
        bool all = true;
        for (kf_node *a = n->b; a; a = a->next) all &= a->is_const || a->kind == KF_N_TYPE;
        kf_sema_try_fold(s, n, all);
    }
    return n->type;
}

/* Checks that t is in class c for argument `a` of builtin bi. */
static bool need(kf_sema *s, kf_node *a, kf_builtin bi, bclass c)
{
    if (kf_sema_is_err(a->type)) return false;
    if (accepts(c, a->type)) return true;
    const char *hint = "";
    if ((c == C_F3264 || c == C_F32) && kf_sema_is_num(a->type) && a->type.scalar != KF_S_F32) hint = ": convert it with 'as f32'";
    if (c == C_BYTES4 && a->type.kind == KF_TK_SCALAR && kf_scalar_bytes[a->type.scalar] == 4)
        hint = ": take its bytes with bitcast(i8x4, w) or bitcast(u8x4, w)";
    kf_sema_error(s, a->loc, "'%s' accepts %s, found %s%s", kf_builtin_names[bi], class_desc[c], TSTR(a->type), hint);
    return false;
}

static bool generic(kf_builtin bi)
{
    return bi == KF_BI_MIN || bi == KF_BI_MAX || bi == KF_BI_CLAMP || bi == KF_BI_ABS || bi == KF_BI_SELECT;
}

static double as_double(const kf_node *a)
{
    return a->type.scalar == KF_S_UFLOAT ? a->cval.f : (double)kf_sema_uexact(a);
}

/* min/max/clamp/abs/select over untyped constants (select: a constant
 * condition, args[-1]) evaluated exactly: n becomes an untyped constant
 * that adapts to its context like a literal. false when it cannot. */
static bool untyped_fold(kf_sema *s, kf_node *n, kf_node **args, unsigned na, kf_builtin bi, bool fl)
{
    if (!generic(bi)) return false;
    if (bi == KF_BI_SELECT && (!args[-1]->is_const || kf_sema_depends(s, args[-1]))) return false;
    for (unsigned i = 0; i < na; i++)
        if (!args[i]->is_const || kf_sema_depends(s, args[i])) return false;
    unsigned pick = 0;
    if (bi == KF_BI_SELECT) pick = args[-1]->cval.u ? 0 : 1;
    if (fl) {
        double x = as_double(args[0]), y = na > 1 ? as_double(args[1]) : 0;
        double r = x;
        /* kf_fmin/kf_fmax, the back ends' min and max: -0 < +0 (fmin may return either zero) */
        if (bi == KF_BI_MIN) r = kf_fmin(x, y);
        if (bi == KF_BI_MAX) r = kf_fmax(x, y);
        if (bi == KF_BI_CLAMP) r = kf_fmin(kf_fmax(x, y), as_double(args[2]));
        if (bi == KF_BI_ABS) r = __builtin_fabs(x);
        if (bi == KF_BI_SELECT) r = as_double(args[pick]);
        n->cval.f = r;
        n->type = kf_type_scalar(KF_S_UFLOAT);
    } else {
        __int128 x = kf_sema_uexact(args[0]), y = na > 1 ? kf_sema_uexact(args[1]) : 0, r = x;
        if (bi == KF_BI_MIN) r = x < y ? x : y;
        if (bi == KF_BI_MAX) r = x > y ? x : y;
        if (bi == KF_BI_CLAMP) {
            __int128 h = kf_sema_uexact(args[2]);
            r = x > y ? x : y;
            r = r < h ? r : h;
        }
        if (bi == KF_BI_ABS) r = x < 0 ? -x : x;
        if (bi == KF_BI_SELECT) r = kf_sema_uexact(args[pick]);
        if (r <= -((__int128)1 << 64) || r >= ((__int128)1 << 64)) return false;
        n->cval.i = (int64_t)r;   /* past INT64_MAX: kf_sema_uexact recomputes it from the arguments */
        n->type = kf_type_scalar(KF_S_UINT);
    }
    n->is_const = true;
    return true;
}

/* Whether an all-untyped generic call is a constant over @unroll variables:
 * every argument (select: its condition too) constant, one over t. */
static bool over_unroll(kf_sema *s, kf_node **args, unsigned na, kf_builtin bi)
{
    if (!generic(bi)) return false;
    bool dep = false;
    for (int i = bi == KF_BI_SELECT ? -1 : 0; i < (int)na; i++) {
        if (!args[i]->is_const) return false;
        dep |= kf_sema_depends(s, args[i]);
    }
    return dep;
}

/* The type an all-untyped generic or math call takes (sqrt(2.0) beside an
 * f64): the context's (s->hint) when it is known and can hold the
 * arguments, else f32 / i32. */
static kf_type untyped_target(kf_sema *s, kf_node *n, kf_builtin bi, bool fl)
{
    kf_type h = s->hint;
    bool adapts = generic(bi) || (bi >= KF_BI_EXP && bi <= KF_BI_FMA) || bi == KF_BI_BFE || bi == KF_BI_BFI ||
                  (bi >= KF_BI_SHFL && bi <= KF_BI_WARP_MIN) || bi == KF_BI_CDIV || bi == KF_BI_MUL_HI;
    if (adapts && s->hint_node == n && kf_sema_is_num(h) && (!fl || kf_type_is_float(h))) return h;
    return kf_type_scalar(fl ? KF_S_F32 : KF_S_I32);
}

/* Gives all args one type: typed args must agree, untyped ones adapt; all
 * untyped: an untyped constant when untyped_fold can evaluate the call,
 * else the context's type, else f32 if any is a float (or float_only),
 * else i32. Returns the untyped type in the first case. */
static kf_type unify(kf_sema *s, kf_node *n, kf_node **args, unsigned na, kf_builtin bi, bool float_only)
{
    kf_node *typed = NULL;
    bool fl = float_only;
    for (unsigned i = 0; i < na; i++) {
        if (kf_sema_is_err(args[i]->type)) return kf_sema_err_type();
        if (!kf_sema_untyped(args[i]->type) && !typed) typed = args[i];
        fl |= args[i]->type.scalar == KF_S_UFLOAT;
    }
    if (!typed && untyped_fold(s, n, args, na, bi, fl)) return n->type;
    if (!typed && over_unroll(s, args, na, bi)) {
        /* like an untyped operator over t: typed, exactly per iteration, by its context (kf_sema_adapt) */
        n->is_const = true;
        n->cval.u = 0;
        n->type = kf_type_scalar(fl ? KF_S_UFLOAT : KF_S_UINT);
        return n->type;
    }
    if (!typed) {
        kf_type d = untyped_target(s, n, bi, fl);
        for (unsigned i = 0; i < na; i++)
            if (!kf_sema_adapt(s, args[i], d)) return kf_sema_err_type();
        return d;
    }
    for (unsigned i = 0; i < na; i++)
        if (args[i] != typed && kf_sema_is_err(kf_sema_unify2(s, n->loc, typed, args[i], kf_builtin_names[bi])))
            return kf_sema_err_type();
    return typed->type;
}

static kf_type warp(kf_sema *s, kf_node *n, kf_builtin bi, kf_node **a)
{
    /* the result has v's type: an untyped v takes the call's context (let c: u32 = warp_sum(1)) */
    if (kf_sema_untyped(a[0]->type)) kf_sema_adapt(s, a[0], untyped_target(s, n, bi, a[0]->type.scalar == KF_S_UFLOAT));
    else kf_sema_default(s, a[0]);
    bool ok = need(s, a[0], bi, C_WARP);
    if (bi >= KF_BI_SHFL && bi <= KF_BI_SHFL_DOWN) {
        const char *what = bi == KF_BI_SHFL ? "the source lane" : bi == KF_BI_SHFL_XOR ? "the lane mask" : "the lane offset";
        char w[64];
        snprintf(w, sizeof w, "%s of '%s'", what, kf_builtin_names[bi]);
        ok &= kf_sema_expect(s, a[1], kf_type_scalar(KF_S_U32), w);
    }
    return ok ? done(s, n, a[0]->type, false) : fail(n);
}

static kf_type vote(kf_sema *s, kf_node *n, kf_builtin bi, kf_node *a)
{
    if (kf_sema_is_err(a->type)) return fail(n);
    if (!kf_type_is_bool(a->type)) {
        kf_sema_error(s, a->loc, "'%s' needs a bool, found %s%s", kf_builtin_names[bi], TSTR(a->type),
                      kf_sema_is_num(a->type) ? ": compare with != 0" : "");
        return fail(n);
    }
    return done(s, n, kf_type_scalar(bi == KF_BI_BALLOT ? KF_S_U32 : KF_S_BOOL), false);
}

static bool atomic_elem_ok(kf_builtin bi, kf_type e)
{
    if (e.kind == KF_TK_SCALAR && (e.scalar == KF_S_I32 || e.scalar == KF_S_U32 || e.scalar == KF_S_U64 || e.scalar == KF_S_F32))
        return true;
    if (bi != KF_BI_ATOMIC_ADD) return false;
    return (e.kind == KF_TK_SCALAR && e.scalar == KF_S_F64) || (e.kind == KF_TK_VECTOR && e.scalar == KF_S_F16 && e.lanes == 2);
}

static kf_type atomic(kf_sema *s, kf_node *n, kf_builtin bi, kf_node **a, unsigned na)
{
    const char *nm = kf_builtin_names[bi];
    kf_type bt = a[0]->type;
    bool ok = kf_sema_index(s, a[1]);
    if (kf_sema_is_err(bt)) return fail(n);
    if (bt.kind != KF_TK_BUFFER) {
        kf_sema_error(s, a[0]->loc, "the first argument of '%s' must be a buffer, found %s%s", nm, TSTR(bt),
                      bt.kind == KF_TK_ARRAY ? ": atomics work on buffer elements only; combine in the block first "
                                               "(warp_sum, a tree in shared memory), then one atomic per block on a buffer"
                                             : "");
        return fail(n);
    }
    kf_type mt = bt;
    mt.flags |= KF_TF_MUT;
    if (!(bt.flags & KF_TF_MUT)) {
        kf_sema_error(s, a[0]->loc, "'%s' needs a writable buffer: '%s' is %s; declare it '%s'", nm,
                      a[0]->kind == KF_N_NAME ? a[0]->name : "?", TSTR(bt), TSTR(mt));
        return fail(n);
    }
    kf_type e = kf_type_elem(bt);
    if (!atomic_elem_ok(bi, e)) {
        kf_sema_error(s, a[0]->loc, "'%s' works on buffers of i32, u32, u64 or f32%s, found %s", nm,
                      bi == KF_BI_ATOMIC_ADD ? " (also f64 and f16x2)" : "", TSTR(bt));
        return fail(n);
    }
    for (unsigned i = 2; i < na; i++) {
        char w[64];
        snprintf(w, sizeof w, "%s of '%s'", bi == KF_BI_ATOMIC_CAS && i == 2 ? "the expected value" : "the value", nm);
        if (!kf_sema_is_err(a[i]->type)) ok &= kf_sema_expect(s, a[i], e, w);
        else ok = false;
    }
    return ok ? done(s, n, e, false) : fail(n);
}

static kf_type bitcast(kf_sema *s, kf_node *n, kf_node **a)
{
    if (a[0]->kind != KF_N_TYPE) {
        kf_sema_error(s, a[0]->loc, "the first argument of 'bitcast' must be a type, e.g. bitcast(f16x2, w)");
        return fail(n);
    }
    kf_type to = kf_sema_resolve_type(s, a[0], false, false);
    kf_sema_default(s, a[1]);
    kf_type from = a[1]->type;
    if (kf_sema_is_err(to) || kf_sema_is_err(from)) return fail(n);
    if (!kf_sema_is_num(from) || !kf_sema_is_num(to)) {
        kf_sema_error(s, n->loc, "'bitcast' converts between numeric scalars and vectors, found %s to %s", TSTR(from), TSTR(to));
        return fail(n);
    }
    if (kf_type_elem_bytes(from) != kf_type_elem_bytes(to)) {
        kf_sema_error(s, n->loc, "bitcast from %s (%u bytes) to %s (%u bytes): the sizes must match", TSTR(from),
                      kf_type_elem_bytes(from), TSTR(to), kf_type_elem_bytes(to));
        return fail(n);
    }
    return done(s, n, to, a[1]->is_const);
}

static kf_type select_call(kf_sema *s, kf_node *n, kf_node **a)
{
    bool ok = kf_sema_expect(s, a[0], kf_type_scalar(KF_S_BOOL), "the condition of 'select'");
    if (!ok) return fail(n);
    kf_type t = unify(s, n, a + 1, 2, KF_BI_SELECT, false);
    if (kf_sema_untyped(t)) return t;
    if (kf_sema_is_err(t) || !need(s, a[1], KF_BI_SELECT, C_ANY)) return fail(n);
    return done(s, n, t, true);
}

static kf_type unary_math(kf_sema *s, kf_node *n, kf_builtin bi, kf_node *a, bclass c, bool fold)
{
    if (c == C_F3264 || c == C_F32) {
        if (kf_sema_untyped(a->type)) kf_sema_adapt(s, a, untyped_target(s, n, bi, true));
    } else if (bi == KF_BI_ABS && kf_sema_untyped(a->type)) {
        kf_type t = unify(s, n, &a, 1, bi, false);
        if (kf_sema_untyped(t)) return t;
    } else {
        kf_sema_default(s, a);
    }
    if (!need(s, a, bi, c)) return fail(n);
    if (bi == KF_BI_CLZ || bi == KF_BI_POPC) return done(s, n, kf_type_scalar(KF_S_U32), true);
    return done(s, n, a->type, fold);
}

static kf_type nary(kf_sema *s, kf_node *n, kf_builtin bi, kf_node **a, unsigned na, bclass c, bool float_only)
{
    kf_type t = unify(s, n, a, na, bi, float_only);
    if (kf_sema_untyped(t)) return t;
    if (kf_sema_is_err(t) || !need(s, a[0], bi, c)) return fail(n);
    return done(s, n, t, true);
}

/* dot4(a, b, c): c (i32) + the dot product of the bytes of a and b. */
static kf_type dot4(kf_sema *s, kf_node *n, kf_node **a)
{
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        kf_sema_default(s, a[i]);
        ok &= need(s, a[i], KF_BI_DOT4, C_BYTES4);
    }
    ok &= kf_sema_expect(s, a[2], kf_type_scalar(KF_S_I32), "the accumulator of 'dot4'");
    return ok ? done(s, n, kf_type_scalar(KF_S_I32), false) : fail(n);
}

/* The u32 bit position and length of bfe/bfi (args from `first`). */
static bool pos_len(kf_sema *s, kf_node **a, kf_builtin bi)
{
    char w[2][48];
    snprintf(w[0], sizeof w[0], "the bit position of '%s'", kf_builtin_names[bi]);
    snprintf(w[1], sizeof w[1], "the bit length of '%s'", kf_builtin_names[bi]);
    bool ok = kf_sema_expect(s, a[0], kf_type_scalar(KF_S_U32), w[0]);
    return kf_sema_expect(s, a[1], kf_type_scalar(KF_S_U32), w[1]) && ok;
}

/* bfe(x, pos, len) / bfi(field, x, pos, len) on u32 i32 u64 i64. */
static kf_type bitfield(kf_sema *s, kf_node *n, kf_builtin bi, kf_node **a)
{
    unsigned nv = bi == KF_BI_BFI ? 2 : 1;
    kf_type t = unify(s, n, a, nv, bi, false);
    bool ok = !kf_sema_is_err(t) && need(s, a[0], bi, C_INT3264);
    ok = pos_len(s, a + nv, bi) && ok;
    return ok ? done(s, n, t, true) : fail(n);
}

static kf_type prmt(kf_sema *s, kf_node *n, kf_node **a)
{
    static const char *const what[3] = {"the first word of 'prmt'", "the second word of 'prmt'", "the selector of 'prmt'"};
    bool ok = true;
    for (int i = 0; i < 3; i++) ok &= kf_sema_expect(s, a[i], kf_type_scalar(KF_S_U32), what[i]);
    return ok ? done(s, n, kf_type_scalar(KF_S_U32), true) : fail(n);
}

/* ---- tensor cores and async copies (LANGUAGE.md section 8) ------------------ */

/* The fragment types of mma per shape: A, B, C/D. */
static bool mma_a_ok(kf_type t)
{
    if (t.kind != KF_TK_VECTOR) return false;
    if (t.scalar == KF_S_F16 || t.scalar == KF_S_BF16) return t.lanes == 8;
    return (t.scalar == KF_S_I8 || t.scalar == KF_S_U8) && t.lanes == 16;
}

/* d = mma(a, b, c): m16n8k16 (f16/bf16 A and B, f32 C) or m16n8k32
 * (i8/u8 A and B in any mix, i32 C); the shape follows from A. */
static kf_type mma(kf_sema *s, kf_node *n, kf_node **a)
{
    for (int i = 0; i < 2; i++) kf_sema_default(s, a[i]);
    if (kf_sema_is_err(a[0]->type) || kf_sema_is_err(a[1]->type) || kf_sema_is_err(a[2]->type)) return fail(n);
    kf_type at = a[0]->type, bt = a[1]->type;
    if (!mma_a_ok(at)) {
        kf_sema_error(s, a[0]->loc, "'mma' takes as A an f16x8 or bf16x8 (m16n8k16) or an i8x16 or u8x16 (m16n8k32) "
                      "fragment, found %s", TSTR(at));
        return fail(n);
    }
    bool fl = at.scalar == KF_S_F16 || at.scalar == KF_S_BF16;
    const char *shape = fl ? "m16n8k16" : "m16n8k32";
    bool b_ok = bt.kind == KF_TK_VECTOR && bt.lanes == at.lanes / 2 &&
                (fl ? bt.scalar == at.scalar : (bt.scalar == KF_S_I8 || bt.scalar == KF_S_U8));
    if (!b_ok) {
        kf_sema_error(s, a[1]->loc, "'mma' with A %s (%s) takes as B %s, found %s", TSTR(at), shape,
                      fl ? TSTR(kf_type_vector((kf_scalar)at.scalar, 4)) : "an i8x8 or u8x8 fragment", TSTR(bt));
        return fail(n);
    }
    kf_type ct = kf_type_vector(fl ? KF_S_F32 : KF_S_I32, 4);
    char what[64];
    snprintf(what, sizeof what, "the accumulator C of 'mma' (%s)", shape);
    if (!kf_sema_expect(s, a[2], ct, what)) return fail(n);
    return done(s, n, ct, false);
}

/* The shared array argument of ldmatrix / cp_async: a shared array or a
 * view of one (checked with ALLOW_ARRAY | ALLOW_BUF). */
static bool shared_arg(kf_sema *s, kf_node *x, kf_builtin bi, const char *role)
{
    kf_type t = x->type;
    const char *nm = x->kind == KF_N_NAME && x->name ? x->name : "this argument";
    if (kf_sema_is_err(t)) return false;
    if (t.kind == KF_TK_ARRAY && (t.flags & KF_TF_SHARED)) return true;
    if (t.kind == KF_TK_BUFFER)
        kf_sema_error(s, x->loc, "'%s' %s a shared array; '%s' is a buffer (%s)%s", kf_builtin_names[bi], role, nm,
                      TSTR(t), bi == KF_BI_CP_ASYNC || bi == KF_BI_CP_ASYNC_N ? ": the destination is shared memory, "
                      "the source (third argument) the buffer" : ": copy the tile into a shared array first (cp_async)");
    else if (t.kind == KF_TK_ARRAY)
        kf_sema_error(s, x->loc, "'%s' %s a shared array; '%s' is a local array (%s): declare it 'shared'",
                      kf_builtin_names[bi], role, nm, TSTR(t));
    else
        kf_sema_error(s, x->loc, "'%s' %s a shared array, found %s", kf_builtin_names[bi], role, TSTR(t));
    return false;
}

/* ldmatrix_xN[_trans](s, i): N 8x8 matrices of 16-bit elements of s. */
static kf_type ldmatrix(kf_sema *s, kf_node *n, kf_builtin bi, kf_node **a)
{
    bool ok = shared_arg(s, a[0], bi, "loads from");
    char what[64];
    snprintf(what, sizeof what, "the row index of '%s'", kf_builtin_names[bi]);
    ok = kf_sema_expect(s, a[1], kf_type_scalar(KF_S_U32), what) && ok;
    if (!ok) return fail(n);
    kf_type t = a[0]->type;
    bool half = t.scalar == KF_S_F16 || t.scalar == KF_S_BF16 || t.scalar == KF_S_U16 || t.scalar == KF_S_I16;
    if (t.lanes != 1 || !half) {
        kf_sema_error(s, a[0]->loc, "'%s' loads 16-bit elements (f16, bf16, u16 or i16); '%s' holds %s: view it "
                      "'as shared u16[]' (or f16, bf16, i16)", kf_builtin_names[bi],
                      a[0]->kind == KF_N_NAME && a[0]->name ? a[0]->name : "the array",
                      TSTR(kf_type_vector((kf_scalar)t.scalar, t.lanes)));
        return fail(n);
    }
    return done(s, n, kf_type_vector((kf_scalar)t.scalar, 2 * kf_builtin_ldmatrix(bi, NULL)), false);
}

/* cp_async(s, i, src, j[, n]): 16 bytes from buffer src at element j into
 * shared array s at element i, of one element type; n bytes read (0..16). */
static kf_type cp_async(kf_sema *s, kf_node *n, kf_builtin bi, kf_node **a, unsigned na)
{
    bool ok = shared_arg(s, a[0], bi, "copies into");
    ok = kf_sema_index(s, a[1]) && ok;
    ok = kf_sema_index(s, a[3]) && ok;
    kf_type src = a[2]->type;
    if (!kf_sema_is_err(src) && src.kind != KF_TK_BUFFER) {
        kf_sema_error(s, a[2]->loc, "'cp_async' copies from a buffer (global memory), found %s%s", TSTR(src),
                      src.kind == KF_TK_ARRAY ? ": copy between shared arrays with loads and stores" : "");
        ok = false;
    }
    if (na == 5) {
        ok = kf_sema_expect(s, a[4], kf_type_scalar(KF_S_U32), "the byte count of 'cp_async'") && ok;
        if (ok && a[4]->is_const && !kf_sema_depends(s, a[4]) && a[4]->cval.u > 16) {
            kf_sema_error(s, a[4]->loc, "'cp_async' reads 0 to 16 bytes, found %llu", (unsigned long long)a[4]->cval.u);
            ok = false;
        }
    }
    if (!ok || kf_sema_is_err(src)) return fail(n);
    kf_type dt = a[0]->type;
    if (dt.scalar != src.scalar || dt.lanes != src.lanes) {
        kf_sema_error(s, n->loc, "'cp_async' copies bytes between one element type: the shared array holds %s, the "
                      "buffer %s; view one as the other ('as shared %s[]' or 'as &[%s]')",
                      TSTR(kf_type_vector((kf_scalar)dt.scalar, dt.lanes)), TSTR(kf_type_elem(src)),
                      TSTR(kf_type_elem(src)), TSTR(kf_type_vector((kf_scalar)dt.scalar, dt.lanes)));
        return fail(n);
    }
    return done(s, n, kf_type_void(), false);
}

/* prefetch_l2(src, j, n): a hint that elements j .. j+n-1 of buffer src
 * will be read soon (a kforge extension, grammar/README.md section 7). */
static kf_type prefetch(kf_sema *s, kf_node *n, kf_node **a)
{
    kf_type src = a[0]->type;
    bool ok = !kf_sema_is_err(src);
    if (ok && src.kind != KF_TK_BUFFER) {
        kf_sema_error(s, a[0]->loc, "'prefetch_l2' prefetches a buffer (global memory), found %s%s", TSTR(src),
                      src.kind == KF_TK_ARRAY ? ": shared and local arrays are on chip already" : "");
        ok = false;
    }
    ok = kf_sema_index(s, a[1]) && ok;
    ok = kf_sema_expect(s, a[2], kf_type_scalar(KF_S_U32), "the element count of 'prefetch_l2'") && ok;
    if (!s->func) {
        kf_sema_error(s, n->loc, "prefetch_l2() can only be used in a kernel or fn");
        ok = false;
    }
    return ok ? done(s, n, kf_type_void(), false) : fail(n);
}

/* cp_async_wait(N): N a compile-time constant count of groups. */
static kf_type cp_wait(kf_sema *s, kf_node *n, kf_node *a)
{
    if (kf_sema_is_err(a->type)) return fail(n);
    if (!a->is_const || (!kf_sema_is_int_scalar(a->type) && !kf_sema_untyped(a->type))) {
        kf_sema_error(s, a->loc, "the group count of 'cp_async_wait' must be a compile-time integer constant (0 waits "
                      "for every committed group, 1 leaves the newest pending, ...)");
        return fail(n);
    }
    if (!kf_sema_expect(s, a, kf_type_scalar(KF_S_U32), "the group count of 'cp_async_wait'")) return fail(n);
    if (!kf_sema_depends(s, a) && a->cval.u > 255) {
        kf_sema_error(s, a->loc, "'cp_async_wait' waits for at most 255 pending groups, found %llu",
                      (unsigned long long)a->cval.u);
        return fail(n);
    }
    return done(s, n, kf_type_void(), false);
}

static bool takes_array(kf_builtin bi, unsigned i)
{
    return i == 0 && (kf_builtin_ldmatrix(bi, NULL) || bi == KF_BI_CP_ASYNC || bi == KF_BI_CP_ASYNC_N);
}

/* Whether bi's value arguments (select: all but the condition) have one
 * type, the call's own, so the call's context is theirs too. */
static bool agrees(kf_builtin bi)
{
    return (bi >= KF_BI_EXP && bi <= KF_BI_FMA) || bi == KF_BI_CDIV || bi == KF_BI_MUL_HI || bi == KF_BI_SELECT ||
           bi == KF_BI_FAST_DIV;
}

/* Checks the value arguments of a call whose arguments agree: those whose
 * type is their own first, then the ones that adapt (kf_sema_adapts:
 * calls and operators, select(c, 1, 2) inside min(...)) with the first
 * typed argument's type as their context, or the call's own context:
 * `let r: u32 = select(c, 1, select(d, 2, 3))` makes both selects u32. */
static void check_agreeing(kf_sema *s, kf_node *n, kf_node **a, unsigned na)
{
    kf_type h = s->hint_node == n ? s->hint : kf_type_void();
    bool typed = false;
    for (unsigned i = 0; i < na; i++) {
        if (kf_sema_adapts(s, a[i])) continue;
        kf_sema_value(s, a[i], false);
        if (!typed && kf_sema_is_value(a[i]->type) && !kf_sema_untyped(a[i]->type)) {
            h = a[i]->type;
            typed = true;
        }
    }
    for (unsigned i = 0; i < na; i++) {
        if (!kf_sema_adapts(s, a[i])) continue;
        kf_type t = kf_sema_value_hint(s, a[i], h, false);
        if (!typed && kf_sema_is_value(t) && !kf_sema_untyped(t)) {
            h = t;
            typed = true;
        }
    }
}

/* The type argument i of bi is checked against where the builtin fixes it
 * (a bit position, a lane, prmt's words, dot4's accumulator, an atomic's
 * value: the buffer's element), so that an untyped select(c, 1, 2) there
 * takes it; the call's own context where the argument has the call's type
 * (warp_sum's and a shuffle's value); else void. */
static kf_type param_hint(kf_sema *s, kf_node *n, kf_builtin bi, unsigned i, kf_node **a)
{
    kf_type ctx = s->hint_node == n ? s->hint : kf_type_void(), u32 = kf_type_scalar(KF_S_U32);
    if (bi >= KF_BI_SHFL && bi <= KF_BI_SHFL_DOWN) return i == 0 ? ctx : u32;
    if (bi >= KF_BI_WARP_SUM && bi <= KF_BI_WARP_MIN) return ctx;
    if (bi == KF_BI_PRMT || bi == KF_BI_PREFETCH_L2) return u32;   /* prefetch_l2: its count (2) */
    if (bi == KF_BI_DOT4 && i == 2) return kf_type_scalar(KF_S_I32);
    if (bi >= KF_BI_ATOMIC_ADD && bi <= KF_BI_ATOMIC_CAS && i >= 2 && a[0]->type.kind == KF_TK_BUFFER)
        return kf_type_elem(a[0]->type);
    return kf_type_void();
}

static void check_args(kf_sema *s, kf_node *n, kf_builtin bi, kf_node **a, unsigned na)
{
    if (agrees(bi)) {
        unsigned first = bi == KF_BI_SELECT ? 1 : 0;
        if (first) kf_sema_value(s, a[0], false);
        check_agreeing(s, n, a + first, na - first);
        return;
    }
    if (bi == KF_BI_BFE || bi == KF_BI_BFI) {   /* the value(s), then the u32 position and length */
        unsigned nv = bi == KF_BI_BFI ? 2 : 1;
        check_agreeing(s, n, a, nv);
        for (unsigned i = nv; i < na; i++) kf_sema_value_hint(s, a[i], kf_type_scalar(KF_S_U32), false);
        return;
    }
    bool atomic = bi >= KF_BI_ATOMIC_ADD && bi <= KF_BI_ATOMIC_CAS;
    bool copy = bi == KF_BI_CP_ASYNC || bi == KF_BI_CP_ASYNC_N, pf = bi == KF_BI_PREFETCH_L2;
    for (unsigned i = 0; i < na; i++) {
        if (bi == KF_BI_BITCAST && i == 0 && a[i]->kind == KF_N_TYPE) continue;
        if ((atomic || copy || pf) && (i == 1 || (copy && i == 3))) continue; /* checked as an index */
        if (takes_array(bi, i) || (copy && i == 2) || ((atomic || pf) && i == 0)) kf_sema_value_let(s, a[i], kf_type_void());
        else kf_sema_value_hint(s, a[i], param_hint(s, n, bi, i, a), atomic && i == 0);
    }
}

/* The row of builtin bi for a call with na arguments: bi, or the next row
 * of the same name (cp_async's 5-argument form); KF_BI_NONE when none. */
static kf_builtin by_arity(kf_builtin bi, unsigned na)
{
    if (kf_builtin_nargs[bi] == na) return bi;
    if (bi + 1 < KF_BI_COUNT && !strcmp(kf_builtin_names[bi + 1], kf_builtin_names[bi]) && kf_builtin_nargs[bi + 1] == na)
        return (kf_builtin)(bi + 1);
    return KF_BI_NONE;
}

static void arity_error(kf_sema *s, kf_node *n, kf_builtin bi, unsigned na)
{
    int want = kf_builtin_nargs[bi];
    bool two = bi + 1 < KF_BI_COUNT && !strcmp(kf_builtin_names[bi + 1], kf_builtin_names[bi]);
    for (kf_node *x = n->b; x; x = x->next)
        if (x->kind != KF_N_TYPE) kf_sema_value_let(s, x, kf_type_void());
    if (two)
        kf_sema_error(s, n->loc, "'%s' takes %d or %d arguments, found %u", kf_builtin_names[bi], want,
                      kf_builtin_nargs[bi + 1], na);
    else
        kf_sema_error(s, n->loc, "'%s' takes %d argument%s, found %u", kf_builtin_names[bi], want, want == 1 ? "" : "s", na);
}

kf_type kf_sema_builtin_call(kf_sema *s, kf_node *n, kf_builtin bi)
{
    kf_node *a[5] = {0};
    unsigned na = 0;
    for (kf_node *x = n->b; x; x = x->next, na++)
        if (na < 5) a[na] = x;
    kf_builtin row = by_arity(bi, na);
    if (!row) {
        arity_error(s, n, bi, na);
        return fail(n);
    }
    bi = row;
    n->op = (uint16_t)bi;
    if (s->grid_mode && !grid_allowed(bi)) {
        kf_sema_error(s, n->loc, "a %s expression cannot call '%s': it is evaluated on the host", s->grid_mode,
                      kf_builtin_names[bi]);
        return fail(n);
    }
    check_args(s, n, bi, a, na);
    switch (bi) {
    case KF_BI_BARRIER: case KF_BI_CP_ASYNC_COMMIT: case KF_BI_FENCE: case KF_BI_DEP_WAIT: case KF_BI_DEP_TRIGGER:
        if (!s->func) {
            kf_sema_error(s, n->loc, "%s() can only be used in a kernel or fn", kf_builtin_names[bi]);
            return fail(n);
        }
        return done(s, n, kf_type_void(), false);
    case KF_BI_MMA: return mma(s, n, a);
    case KF_BI_LDMATRIX_X1: case KF_BI_LDMATRIX_X2: case KF_BI_LDMATRIX_X4: case KF_BI_LDMATRIX_X1_TRANS:
    case KF_BI_LDMATRIX_X2_TRANS: case KF_BI_LDMATRIX_X4_TRANS: return ldmatrix(s, n, bi, a);
    case KF_BI_CP_ASYNC: case KF_BI_CP_ASYNC_N: return cp_async(s, n, bi, a, na);
    case KF_BI_CP_ASYNC_WAIT: return cp_wait(s, n, a[0]);
    case KF_BI_PREFETCH_L2: return prefetch(s, n, a);
    case KF_BI_SHFL: case KF_BI_SHFL_XOR: case KF_BI_SHFL_UP: case KF_BI_SHFL_DOWN:
    case KF_BI_WARP_SUM: case KF_BI_WARP_MAX: case KF_BI_WARP_MIN: return warp(s, n, bi, a);
    case KF_BI_BALLOT: case KF_BI_ANY: case KF_BI_ALL: return vote(s, n, bi, a[0]);
    case KF_BI_ATOMIC_ADD: case KF_BI_ATOMIC_MIN: case KF_BI_ATOMIC_MAX: case KF_BI_ATOMIC_EXCH:
    case KF_BI_ATOMIC_CAS: return atomic(s, n, bi, a, na);
    case KF_BI_EXP: case KF_BI_EXP2: case KF_BI_LOG: case KF_BI_LOG2: case KF_BI_RSQRT:
    case KF_BI_SIN: case KF_BI_COS: case KF_BI_TANH: return unary_math(s, n, bi, a[0], C_F3264, false);
    case KF_BI_SQRT: case KF_BI_FLOOR: case KF_BI_CEIL: case KF_BI_TRUNC: case KF_BI_ROUND:
        return unary_math(s, n, bi, a[0], C_F3264, true);
    case KF_BI_ABS: return unary_math(s, n, bi, a[0], C_ABS, true);
    case KF_BI_CLZ: case KF_BI_POPC: return unary_math(s, n, bi, a[0], C_INT3264, true);
    case KF_BI_MIN: case KF_BI_MAX: case KF_BI_CLAMP: return nary(s, n, bi, a, na, C_MINMAX, false);
    case KF_BI_FMA: return nary(s, n, bi, a, na, C_FMA, true);
    case KF_BI_RCP: return unary_math(s, n, bi, a[0], C_F32, false);
    case KF_BI_FAST_DIV: return nary(s, n, bi, a, na, C_F32, true);
    case KF_BI_DOT4: return dot4(s, n, a);
    case KF_BI_BFE: case KF_BI_BFI: return bitfield(s, n, bi, a);
    case KF_BI_PRMT: return prmt(s, n, a);
    case KF_BI_CDIV: return nary(s, n, bi, a, na, C_INT, false);
    case KF_BI_MUL_HI: return nary(s, n, bi, a, na, C_INT3264, false);
    case KF_BI_SELECT: return select_call(s, n, a);
    case KF_BI_BITCAST: return bitcast(s, n, a);
    default:
        kf_sema_error(s, n->loc, "'%s' is not a function", kf_builtin_names[bi]);
        return fail(n);
    }
}
