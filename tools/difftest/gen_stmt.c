/* The random program generator: statements, fns and the kernel of one
 * program, program k of seed s always the same.
 *
 * ---- What a program is ----------------------------------------------------
 * One kernel with its fns and constants; 1-3 input buffers (&[T], T any
 * scalar or vector type, edge-biased data: 0, +-1, MIN, MAX, powers of two
 * +-1, +-0, +-inf, NaNs with payloads, subnormals), 0-4 scalar or vector
 * parameters, 1-3 output buffers (&mut [T]) in which each thread owns S
 * slots, and optionally an approximate-output buffer (f32 or f64) and an
 * atomic buffer. Blocks of 17 to 256 threads in 1-D, 2-D and 3-D, partial
 * warps included (48, 40, 17, (8, 6) ...), grids of 1 to 4 blocks; block
 * and grid written as literals, as constants (some overridden with -D), or
 * as expressions over scalar parameters, or no grid at all (launched over
 * an element count). Statements: let (typed or not; a buffer view
 * `let v = buf as &[U]`; select(c, 1, 2) typed by the declaration),
 * var (initialised or zero), assignment and every compound assignment to
 * vars, vector components, local-array elements and the thread's own
 * output slots; a read-only buffer's load and an own slot read back meeting
 * in one value through the same op (gen_mirror); if / else if / else; for
 * (literal or run-time bounds of any integer type, with and without step),
 * @unroll for (the variable indexes
 * vectors and local arrays), while with a bounded trip count; break,
 * continue and return under conditions, and loops whose body always leaves
 * in the first iteration; local arrays; shared arrays written by every
 * thread, then a barrier, then read; barriers; atomics; fn calls (values,
 * buffers and a base slot passed, early returns inside). Expressions: see
 * gen_expr.c (every operator, conversion, bitcast, builtin, warp operation,
 * vector form). Identifiers come from names C, C++, CUDA and PTX already
 * use (j0, y1, float, threadIdx, reg, kf_f16 ...).
 *
 * ---- Free of undefined behaviour by construction ----------------------------
 *  - Division and remainder: divisors are literals that are not 0, (e | 1)
 *    or nz_T(e) = select(e == 0, 1, e); vector divisors per lane. INT_MIN / -1
 *    is defined by the contract (INT_MIN; % gives 0) and is generated.
 *  - Shifts by any amount are defined (0 or the sign fill) and generated.
 *  - Float -> int saturates and NaN gives 0 (contract): generated freely.
 *  - Indices: (e & (len-1)) for powers of two, ((e as u32) % len) otherwise,
 *    or a loop variable whose range is known to fit.
 *  - No read of an unwritten local: scalars are initialised (`var x: T;` is
 *    zero by the contract); a local array is filled by the loop that
 *    follows its declaration.
 *  - Global memory: a thread writes only its own slots (dt_gt * S + j, the
 *    E_SLOT nodes, which no shrinking edit touches) and reads inputs, its own
 *    slots, or anything through atomics.
 *  - Shared memory: an exchange writes every element (q = tb, tb + NB, ...),
 *    then barrier(); reads come only after it in the same scope; a later
 *    exchange starts with a barrier. Exchanges and barriers only where the
 *    whole block is (below). Section 8: the kernel's dynamic array (sized by
 *    shared = EXPR or the launch), exchanges through a view of any element
 *    type (`(s as shared U[])[q] = e`) and reads through any view of the
 *    bytes written; fns with barriers declare arrays of their own (one per
 *    kernel, shared by every call site) and exchange through them, starting
 *    with a barrier, since an earlier call may still be reading. A fn may
 *    take `p: shared T[]` needing n written elements: it is called only
 *    where a readable array (or a view of it, `(s as shared T[])`) has
 *    them, never inside an exchange's value; it reads p and may exchange
 *    through it like its own arrays.
 *  - Uniformity: every value and every point of control has a variance
 *    (uniform, per block, per warp, per thread). Conditions, loop bounds and
 *    early exits raise the control's; a barrier needs per-block control or
 *    less and a warp operation per-warp or less, with no early exit before it
 *    that could have been taken by only some threads (g->exited). A loop
 *    decides up front how varying its break/continue/return conditions may
 *    be, and its whole body counts as that varying. A var has a fixed
 *    variance class: it is assigned only values and under control no more
 *    varying than that. Warp operations only in warp-uniform control, with
 *    every lane of a partial warp present (no early exit before).
 *  - Loops are bounded: for loops run over bounds below 48 with steps 1-4
 *    (no wrap), while loops count their trips in a counter incremented
 *    before anything else in the body (so continue cannot skip it).
 *  - Floats: + - * / sqrt fma conversions min max floor ... are exact on every
 *    back end (no contraction: emitters use .rn / __fmul_rn) and compared bit
 *    for bit, NaN matching NaN. A bitcast from a float type first maps NaN to
 *    -inf (clamp(e, -inf, inf)): back ends may choose a NaN's payload and
 *    sign (x86 gives 0xffc00000 for 0/0, the GPU 0x7fffffff). min/max/clamp of
 *    floats get + 0.0, since the sign of a zero result is not fixed. warp_sum
 *    and float atomic adds only see small integers (exact in any order);
 *    float atomics never see -0, NaN or subnormals (atom.add.f32 flushes
 *    subnormals). Contended atomics (the first 8 slots of the atomic
 *    buffer, every thread) keep one operation per slot, so the final value
 *    is the same in any order: slots 0-1 add (ints: any value, wrapping;
 *    f32: 0..15, so sums stay exact below 2^24; f64: small integers; f16x2:
 *    0 or 1 per lane, exact to 2048 and stuck there), 2-3 min, 4-5 max, 6
 *    exch of the program's one constant, 7 cas of the program's one
 *    (expected, new) constant pair (f64 and f16x2: add only); their
 *    returned values are dropped (they depend on the order), while atomics
 *    on a thread's own slots use them freely.
 *  - Approximate functions (exp exp2 log log2 rsqrt sin cos tanh, and all
 *    f64 math) only in the approximate-output buffer: the argument is
 *    clamped into the range where the documented bound holds, the result is
 *    stored directly (never compared, branched on, converted to an integer,
 *    rounded or subtracted), and that slot is compared within the bound of
 *    its function (dt_tol). An approximate value never reaches anything else.
 * The interpreter checks the rest as it runs: a program it reports a fault
 * in is a generator bug (CI asserts none).
 *
 * ---- Tensor cores (section 8) ------------------------------------------------
 * mma and ldmatrix are warp operations of a full warp: producers in
 * gen_expr.c under warp_ok(g) && full_warps(g) (blocks whose size is a
 * multiple of 32), and dt_tensor() gives gen_let one of either more often
 * than their types come up. mma: f16/bf16 fragments are small integers
 * (dt_exact_float, c too) so that every summation order gives the same
 * f32; i8/u8 fragments take any values (exact, wrapping). ldmatrix reads
 * whole 16-byte rows (index 8 * row, dt_scaled: never edited) of a readable
 * shared array through a 16-bit view. cp_async is a kind of exchange
 * (gen_exchange, op 1, in the kernel only): each thread copies its 16-byte
 * chunks of an input buffer (viewed as the array's element type), some
 * through the 5-argument form that zero-fills past n bytes, then
 * cp_async_commit(), cp_async_wait(0) and the barrier; the array is
 * readable only after them.
 * A new builtin is one producer in gen_expr.c (with its guard, if it has
 * an undefined case), and a count in test_difftest's census.
 *
 * ---- kforge's statement extensions ------------------------------------------
 * fence(), dep_trigger() and dep_wait() (grammar/README.md section 7) come
 * from a second stream (dt_gen.side), so that the rest of a program draws
 * the same numbers with them as without (a kernel with pre-wait lets then
 * differs only where later choices pick among them). fence(), dep_trigger()
 * and prefetch_l2() of an input buffer in scope (its range inside it) stand
 * anywhere (3% of statements, kernel and fns: 5, 3 and 2 in 10). dep_wait() (20% of kernels)
 * opens the kernel's own statements after the prologue, behind 1-3 lets
 * that store nothing (pre_wait); on one launch it waits for nothing, so
 * what it tests is the GPU paths' loads around it. The same stream wraps 2%
 * of f32 expressions in a select form of max(min(e, 1.0), 0.0) (gen_expr.c
 * saturate_form), which ptxas 13 made a saturate.
 */
#include "dt_impl.h"

#include "../../ir/numeric.h"

#include <stdio.h>
#include <string.h>

/* ---- symbols ----------------------------------------------------------------------- */
void dt_push(dt_gen *g, dt_sym s)
{
    if (g->nsyms < DT_MAX_SYMS) g->syms[g->nsyms++] = s;
}

dt_sym *dt_find_param(dt_gen *g, const dt_param *p)
{
    for (uint32_t i = 0; i < g->nsyms; i++)
        if (g->syms[i].buf == p && (g->syms[i].kind == DT_K_INBUF || g->syms[i].kind == DT_K_OUTBUF)) return &g->syms[i];
    return NULL;
}

static const char *fresh(dt_gen *g) { return dt_fresh_name(g->r, g->p); }

static dt_node *name_ref(dt_gen *g, const char *name, kf_type t, uint8_t var)
{
    dt_node *n = dt_new(g, DT_E_NAME, t);
    n->text = name;
    n->var = var;
    return n;
}

static dt_node *lit_int(dt_gen *g, kf_type t, int64_t v, bool untyped)
{
    dt_node *n = dt_new(g, DT_E_LIT, t);
    n->text = kf_arena_printf(&g->p->arena, "%lld", (long long)v);
    if (untyped) n->flags |= DT_F_UNTYPED;
    return n;
}

static bool is_int(kf_type t) { return kf_scalar_class[t.scalar] == 'i' || kf_scalar_class[t.scalar] == 'u'; }
static bool is_float(kf_type t) { return kf_scalar_class[t.scalar] == 'f'; }
static bool same_type(kf_type a, kf_type b) { return a.scalar == b.scalar && a.lanes == b.lanes; }

static kf_type pick_int(dt_rng *r)
{
    kf_type t;
    do t = dt_pick_scalar(r, false);
    while (!is_int(t));
    return t;
}

/* The output buffers that take ordinary (exact) values. */
static const dt_param *pick_out(dt_gen *g)
{
    const dt_param *c[DT_MAX_PARAMS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->nsyms; i++)
        if (g->syms[i].kind == DT_K_OUTBUF && g->syms[i].buf->role == DT_R_OUT) c[n++] = g->syms[i].buf;
    return n ? c[dt_below(g->r, n)] : NULL;
}

static const dt_param *find_role(const kf_dt_prog *p, dt_role role)
{
    for (uint32_t i = 0; i < p->nparams; i++)
        if (p->params[i].role == role) return &p->params[i];
    return NULL;
}

/* ---- statements: plumbing ---------------------------------------------------------- */
typedef struct {
    dt_node **tail;
} list;

static void append(list *l, dt_node *s)
{
    *l->tail = s;
    while (*l->tail) l->tail = &(*l->tail)->next;
}

static dt_node *stmt(dt_gen *g, dt_kind kind) { return dt_new(g, kind, kf_type_void()); }

static dt_node *assign(dt_gen *g, dt_node *lv, dt_binop op, dt_node *v)
{
    dt_node *s = stmt(g, DT_S_ASSIGN);
    s->a[0] = lv;
    s->a[1] = v;
    s->op = (uint8_t)op;
    return s;
}

static dt_node *nan_guard(dt_gen *g, dt_node *v)
{
    dt_node *nn = dt_new(g, DT_E_GUARD, v->type);
    nn->op = DT_G_NAN;
    nn->a[0] = v;
    nn->flags = DT_F_KEEP;
    nn->var = v->var;
    return nn;
}

static dt_node *cast_to(dt_gen *g, dt_node *v, kf_type to)
{
    dt_node *c = dt_new(g, DT_E_CAST, to);
    c->a[0] = v;
    c->var = v->var;
    return c;
}

/* value converted to type `to` (scalar or vector) by as, lanes or splat,
 * steering around the known bugs being avoided. */
static dt_node *convert(dt_gen *g, dt_node *v, kf_type to)
{
    kf_type from = v->type;
    bool f2i = is_float(from) && is_int(to), nan_avoid = f2i && (g->avoid & KF_DT_AVOID_NAN_TO_INT);
    bool wide_half = (from.scalar == KF_S_F16 || from.scalar == KF_S_BF16) && from.lanes > 4;
    bool halves = (from.scalar == KF_S_F16 && to.scalar == KF_S_BF16) || (from.scalar == KF_S_BF16 && to.scalar == KF_S_F16);
    bool halves_avoid = halves && (g->avoid & KF_DT_AVOID_HALF_BF16);
    if (from.scalar == to.scalar && from.lanes == to.lanes) return v;
    if (from.kind == KF_TK_VECTOR && (from.lanes != to.lanes || ((nan_avoid || halves_avoid) && wide_half))) {   /* one lane */
        dt_node *m = dt_new(g, DT_E_MEMBER, kf_type_scalar((kf_scalar)from.scalar));
        m->a[0] = v;
        m->n = dt_below(g->r, from.lanes);
        m->var = v->var;
        return convert(g, m, to);
    }
    if (from.kind == KF_TK_SCALAR && to.kind == KF_TK_VECTOR) {   /* splat */
        dt_node *c = dt_new(g, DT_E_CTOR, to);
        c->a[0] = convert(g, v, kf_type_scalar((kf_scalar)to.scalar));
        c->var = v->var;
        return c;
    }
    bool signed_narrow = to.scalar == KF_S_I8 || to.scalar == KF_S_I16;
    if (f2i && kf_type_elem_bytes(from) == kf_type_elem_bytes(to) && from.lanes <= 4 && dt_chance(g->r, 40) &&
        !(signed_narrow && (g->avoid & KF_DT_AVOID_BITCAST_SIGN))) {   /* the exact bits of a float */
        dt_node *b = dt_new(g, DT_E_BITCAST, to);
        b->a[0] = nan_guard(g, v);
        b->var = v->var;
        return b;
    }
    if (halves_avoid)   /* through f32: exact, then the one rounding */
        return cast_to(g, cast_to(g, v, kf_type_vector(KF_S_F32, from.lanes)), to);
    return cast_to(g, nan_avoid ? nan_guard(g, v) : v, to);
}

/* o[own slot] (op)= value: a store to the thread's own slot of an output. */
static dt_node *store(dt_gen *g, const dt_param *o, dt_node *value, dt_binop op)
{
    kf_type et = kf_type_elem(o->type);
    dt_node *lv = dt_new(g, DT_E_INDEX, et);
    lv->text = dt_find_param(g, o)->name;
    lv->a[0] = dt_slot(g, o, dt_below(g->r, o->slots));
    return assign(g, lv, op, value);
}

/* A compound operator that suits type t with a value v (a divisor made safe). */
static dt_binop compound_op(dt_gen *g, kf_type t)
{
    static const dt_binop ints[] = {DT_OP_ADD, DT_OP_SUB, DT_OP_MUL, DT_OP_DIV, DT_OP_REM, DT_OP_AND,
                                    DT_OP_OR, DT_OP_XOR, DT_OP_SHL, DT_OP_SHR};
    if (t.kind == KF_TK_SCALAR && is_int(t)) return ints[dt_below(g->r, 10)];
    if (is_float(t)) return (dt_binop)(DT_OP_ADD + dt_below(g->r, 4));
    return (dt_binop)(DT_OP_ADD + dt_below(g->r, 3));   /* integer vectors: no division */
}

static dt_node *divisor_for(dt_gen *g, kf_type t, uint8_t mv)
{
    dt_node *e = dt_expr(g, t, mv, 2, false);
    dt_node *x = dt_new(g, DT_E_GUARD, t);
    x->op = DT_G_NZ_OR1;
    x->a[0] = e;
    x->var = e->var;
    x->flags = DT_F_KEEP;
    return x;
}

/* The value of `lv op= v` for an lvalue of type t and variance class mv,
 * an expression of at most `depth` levels (a divisor made safe). */
static dt_node *value_for(dt_gen *g, kf_type t, dt_binop op, uint8_t mv, int depth)
{
    if ((op == DT_OP_DIV || op == DT_OP_REM) && is_int(t)) return divisor_for(g, t, mv);
    return dt_expr(g, t, mv, depth, true);
}

/* ---- the statement generator ------------------------------------------------------------ */
static void block(dt_gen *g, list *l, int n);
static void sinks(dt_gen *g, list *l, uint32_t from);

/* let v = buf as &[U]; — an input buffer (or view) seen as another type. */
static bool gen_view(dt_gen *g, list *l)
{
    const dt_sym *from = NULL;
    for (uint32_t i = 0; i < g->nsyms; i++)
        if ((g->syms[i].kind == DT_K_INBUF || g->syms[i].kind == DT_K_VIEW) && dt_chance(g->r, 50)) from = &g->syms[i];
    if (!from) return false;
    kf_type u = dt_pick_type(g->r, false);
    uint64_t bytes = (uint64_t)(from->kind == DT_K_INBUF ? from->buf->count : from->len) * kf_type_elem_bytes(from->type);
    uint32_t len = (uint32_t)(bytes / kf_type_elem_bytes(u));
    if (!len) return false;
    dt_node *s = stmt(g, DT_S_LET);
    s->text = fresh(g);
    s->type = (kf_type){KF_TK_BUFFER, u.scalar, u.lanes, 0, 0};
    s->a[0] = name_ref(g, kf_arena_printf(&g->p->arena, "(%s as &[%s])", from->name, dt_type_name(u)), s->type, DT_V_UNI);
    append(l, s);
    dt_push(g, (dt_sym){s->text, u, DT_K_VIEW, DT_V_UNI, false, len, from->buf, 0, 0, false});
    return true;
}

/* select(c, 1, 2) with both values untyped: the declared type types it. */
static dt_node *untyped_select(dt_gen *g, kf_type t)
{
    dt_node *c = dt_new(g, DT_E_CALL, t);
    c->text = "select";
    c->a[0] = dt_cond(g, DT_V_THREAD, 2);
    c->a[0]->next = dt_lit(g, t, true);
    c->a[0]->next->next = dt_lit(g, t, true);
    c->var = c->a[0]->var;
    return c;
}

/* Declared in the current scope: let x[: T] = e; */
static void gen_let(dt_gen *g, list *l)
{
    if (dt_chance(g->r, 8) && gen_view(g, l)) return;
    kf_type t = dt_pick_type(g->r, true);
    bool typed = dt_chance(g->r, 50);
    dt_node *s = stmt(g, DT_S_LET), *tc = dt_chance(g->r, 10) ? dt_tensor(g, 3) : NULL;
    if (tc) s->a[0] = tc, t = tc->type;   /* section 8's warp operations, more often than their types come up */
    else if (typed && t.kind == KF_TK_SCALAR && t.scalar != KF_S_BOOL && dt_chance(g->r, 8)) s->a[0] = untyped_select(g, t);
    else s->a[0] = dt_expr(g, t, DT_V_THREAD, 3 + dt_chance(g->r, 30), typed);
    if (typed || (s->a[0]->flags & DT_F_UNTYPED)) s->flags |= DT_F_TYPED;
    s->type = t;
    s->text = fresh(g);
    append(l, s);
    dt_push(g, (dt_sym){s->text, t, DT_K_LET, s->a[0]->var, false, 0, NULL, 0, 0, false});
}

/* var x: T [= e]; with a variance class it keeps. */
static void gen_var(dt_gen *g, list *l)
{
    kf_type t = dt_pick_type(g->r, true);
    uint8_t cls = dt_chance(g->r, 60) ? DT_V_THREAD : (uint8_t)dt_below(g->r, DT_V_THREAD + 1);
    cls = dt_max(cls, dt_eff(g));
    dt_node *s = stmt(g, DT_S_VAR);
    s->type = t;
    s->text = fresh(g);
    s->flags = DT_F_TYPED;
    if (dt_chance(g->r, 85)) s->a[0] = dt_expr(g, t, cls, 3, true);
    if (s->a[0] && !(s->a[0]->flags & DT_F_UNTYPED) && dt_chance(g->r, 40)) s->flags = 0;
    append(l, s);
    dt_push(g, (dt_sym){s->text, t, DT_K_VAR, cls, false, 0, NULL, 0, 0, false});
}

/* An assignment to a var, a component of a vector var, a local-array element
 * or an own output slot. */
static void gen_assign(dt_gen *g, list *l)
{
    uint8_t eff = dt_eff(g);
    for (int tries = 0; tries < 8; tries++) {
        dt_sym *s = &g->syms[dt_below(g->r, g->nsyms)];
        if (s->kind == DT_K_VAR && s->var >= eff) {
            dt_node *lv = name_ref(g, s->name, s->type, s->var);
            kf_type t = s->type;
            if (t.kind == KF_TK_VECTOR && dt_chance(g->r, 40)) {   /* v.x = e, v[k] = e */
                dt_node *m = dt_new(g, DT_E_MEMBER, kf_type_scalar((kf_scalar)t.scalar));
                m->a[0] = lv;
                m->n = dt_below(g->r, t.lanes);
                if (t.lanes <= 4 && dt_chance(g->r, 50)) m->flags |= DT_F_DOT;
                lv = m;
                t = m->type;
            }
            dt_binop op = t.scalar == KF_S_BOOL || dt_chance(g->r, 50) ? DT_OP_NONE : compound_op(g, t);
            append(l, assign(g, lv, op, op ? value_for(g, t, op, s->var, 3) : dt_expr(g, t, s->var, 3, true)));
            return;
        }
        if (s->kind == DT_K_ARRAY) {
            dt_node *lv = dt_new(g, DT_E_INDEX, s->type);
            lv->text = s->name;
            lv->a[0] = dt_index(g, s->len, DT_V_THREAD, 2);
            dt_binop op = s->type.scalar == KF_S_BOOL || dt_chance(g->r, 60) ? DT_OP_NONE : compound_op(g, s->type);
            append(l, assign(g, lv, op, op ? value_for(g, s->type, op, DT_V_THREAD, 3) : dt_expr(g, s->type, DT_V_THREAD, 3, true)));
            return;
        }
    }
    const dt_param *o = pick_out(g);
    if (!o) return gen_let(g, l);
    kf_type et = kf_type_elem(o->type);
    dt_binop op = dt_chance(g->r, 70) ? DT_OP_NONE : compound_op(g, et);
    append(l, store(g, o, op ? value_for(g, et, op, DT_V_THREAD, 3) : dt_expr(g, et, DT_V_THREAD, 3, true), op));
}

/* o[slot] = an approximate function's value (compared within its bound). */
static void gen_approx(dt_gen *g, list *l)
{
    const dt_param *ap = find_role(g->p, DT_R_APPROX);
    if (!ap || !dt_find_param(g, ap)) return gen_assign(g, l);
    uint8_t tol;
    dt_node *v = dt_approx(g, (kf_scalar)ap->type.scalar, DT_V_THREAD, 3, &tol);
    dt_node *s = store(g, ap, v, DT_OP_NONE);
    uint32_t slot = (uint32_t)s->a[0]->a[0]->n;
    ap->tol[slot] = dt_tol_looser(ap->tol[slot], tol);
    append(l, s);
}

/* `if c { ... } [else if c { ... }] [else { ... }]`: c at most as varying as
 * allowed, the bodies' control as varying as c. */
static void gen_if(dt_gen *g, list *l, int size)
{
    dt_node *s = stmt(g, DT_S_IF), *at = s;
    uint8_t saved = g->ctrl;
    for (int links = 0;; links++) {
        uint8_t cv = (uint8_t)dt_below(g->r, DT_V_THREAD + 1);
        at->a[0] = dt_cond(g, cv, 3);   /* an else-if's runs where the conditions before were false */
        g->ctrl = dt_max(g->ctrl, at->a[0]->var);
        list bl = {&at->body};
        block(g, &bl, 1 + (int)dt_below(g->r, (unsigned)size));
        if (dt_chance(g->r, 45)) {
            if (links < 2 && dt_chance(g->r, 40)) {   /* else if */
                dt_node *e = stmt(g, DT_S_IF);
                at->els = e;
                at = e;
                continue;
            }
            list el = {&at->els};
            block(g, &el, 1 + (int)dt_below(g->r, (unsigned)size));
        }
        g->ctrl = saved;
        break;
    }
    append(l, s);
}

/* `if c { [store;] break|continue|return; }` inside a loop (or return
 * anywhere), with c no more varying than the loop allows. */
/* With KF_DT_AVOID_FIRST_EXIT, an exit condition inside a loop gets a term
 * that is true but not a compile-time constant, so no loop body always
 * leaves in its first iteration (the condition may fold to true). */
static dt_node *not_constant(dt_gen *g, dt_node *cond)
{
    if (!(g->avoid & KF_DT_AVOID_FIRST_EXIT) || !g->loops) return cond;
    kf_type b = kf_type_scalar(KF_S_BOOL), u = kf_type_scalar(KF_S_U32);
    dt_node *t = dt_new(g, DT_E_BIN, b), *and = dt_new(g, DT_E_BIN, b);
    t->op = DT_OP_NE;
    t->a[0] = name_ref(g, "block_dim.x", u, DT_V_UNI);
    t->a[1] = lit_int(g, u, 0, true);
    and->op = DT_OP_LAND;
    and->a[0] = cond;
    and->a[1] = t;
    and->var = cond->var;
    return and;
}

/* Whether an exit may be taken here: inside loops, only where the control
 * is no more varying than every enclosing loop allows. */
static bool exit_ok(const dt_gen *g) { return !g->loops || dt_eff(g) <= g->exit_var; }

static void gen_exit(dt_gen *g, list *l, dt_kind kind)
{
    uint8_t allowed = g->loops ? g->exit_var : DT_V_THREAD;
    if (!exit_ok(g)) return gen_assign(g, l);
    dt_node *s = stmt(g, DT_S_IF);
    s->a[0] = not_constant(g, dt_cond(g, allowed, 2));
    dt_node *x = stmt(g, kind);
    if (kind == DT_S_RETURN && g->fn && g->fn->ret.kind != KF_TK_VOID)
        x->a[0] = dt_expr(g, g->fn->ret, DT_V_THREAD, 3, true);
    list bl = {&s->body};
    uint8_t ctrl = g->ctrl;
    g->ctrl = dt_max(g->ctrl, s->a[0]->var);
    if (x->a[0]) x->a[0] = dt_expr(g, g->fn->ret, DT_V_THREAD, 3, true);
    if (dt_chance(g->r, 50) && pick_out(g)) {
        const dt_param *o = pick_out(g);
        append(&bl, store(g, o, dt_expr(g, kf_type_elem(o->type), DT_V_THREAD, 3, true), DT_OP_NONE));
    }
    g->ctrl = ctrl;
    append(&bl, x);
    append(l, s);
    if (kind == DT_S_RETURN) g->exited = dt_max(g->exited, dt_max(dt_eff(g), s->a[0]->var));
}

/* Loop set-up shared by for and while: how varying its exits may be and
 * what its body's control is. */
typedef struct {
    uint8_t ctrl, exit_var;
} loop_state;

static loop_state loop_enter(dt_gen *g, uint8_t bounds_var)
{
    loop_state ls = {g->ctrl, g->exit_var};
    uint8_t ev = dt_chance(g->r, 50) ? DT_V_THREAD : dt_max(bounds_var, dt_eff(g));
    if (g->loops) ev = ev < g->exit_var ? ev : g->exit_var;
    g->exit_var = ev;
    g->ctrl = dt_max(dt_max(g->ctrl, bounds_var), ev);
    g->loops++;
    return ls;
}

static void loop_leave(dt_gen *g, loop_state ls)
{
    g->ctrl = ls.ctrl;
    g->exit_var = ls.exit_var;
    g->loops--;
}

/* The body of a loop: statements, exits, and sometimes an unconditional
 * exit at the end (the body always leaves in its first iteration). */
static void loop_body(dt_gen *g, dt_node *s, int size)
{
    list bl = {&s->body};
    block(g, &bl, 1 + (int)dt_below(g->r, (unsigned)size));
    if (dt_chance(g->r, 12) && exit_ok(g)) {
        dt_kind k = dt_chance(g->r, 60) || g->fn ? DT_S_BREAK : DT_S_RETURN;
        dt_node *x = stmt(g, k);
        if (dt_chance(g->r, 50)) {   /* if ALWAYS { ... } with a bool constant that is true */
            const dt_const *c = &g->p->consts[0];
            dt_node *s2 = stmt(g, DT_S_IF);
            s2->a[0] = name_ref(g, c->name, c->type, DT_V_UNI);
            s2->a[0]->flags |= DT_F_MODULE;
            s2->body = x;
            x = s2;
        }
        if (g->avoid & KF_DT_AVOID_FIRST_EXIT) return;
        append(&bl, x);
        if (k == DT_S_RETURN) g->exited = dt_max(g->exited, dt_eff(g));
    }
}

/* (e & mask) + c in integer type t: a run-time bound in [c, c + mask]. */
static dt_node *masked_plus(dt_gen *g, kf_type t, uint8_t mv, int depth, int64_t mask, int64_t c)
{
    dt_node *e = dt_expr(g, t, mv, depth, false), *m = dt_new(g, DT_E_GUARD, t), *b = dt_new(g, DT_E_BIN, t);
    m->op = DT_G_MASK, m->a[0] = e, m->n = mask, m->var = e->var, m->flags = DT_F_KEEP;
    b->op = DT_OP_ADD, b->a[0] = m, b->a[1] = lit_int(g, t, c, true), b->var = m->var;
    return b;
}

/* A read-only buffer's load and the thread's own output slot read back
 * meeting in one value through the same arithmetic, the shape NVVM sank
 * into one load of the selected address while keeping the read-only side's
 * ld.global.nc (stale after the thread's own store: seed 2517 program 790,
 * and stop 29's arithmetic form):
 *   var m; if c { m = in[i] op v } else { m = o[s] op v }; o[s] = m
 *   if c { o[s] = in[i] op v } else { o[s] = o[s] op v }
 *   o[s] = select(c, in[i] op v, o[s] op v)
 * One op a side, v copied, so the arms differ only in the load (an input
 * of another type is read through a view, `(in as &[T])[i]`); half of
 * them in a loop of 2-4 trips, so the slot is read again after its store.
 * NVRTC merges the integer forms (a float op through an intrinsic stays
 * apart).
 * v and i are made under c's control (a warp builtin in them must see the
 * arm's lanes). */
static dt_node *mirror_arm(dt_gen *g, dt_node *load, dt_binop op, const dt_node *v)
{
    dt_node *b = dt_new(g, DT_E_BIN, load->type);
    b->op = (uint8_t)op;
    b->a[0] = load;
    b->a[1] = dt_copy(g, v);
    b->var = dt_max(load->var, v->var);
    return b;
}

static void mirror(dt_gen *g, list *l, const dt_param *o, const dt_sym *in)
{
    kf_type et = kf_type_elem(o->type);
    dt_node *c = dt_cond(g, DT_V_THREAD, 2);
    uint8_t saved = g->ctrl;
    g->ctrl = dt_max(g->ctrl, c->var);
    dt_node *ro = dt_new(g, DT_E_INDEX, et), *own = dt_new(g, DT_E_INDEX, et);
    uint32_t len = (uint32_t)((uint64_t)in->buf->count * kf_type_elem_bytes(in->type) / kf_type_elem_bytes(et));
    ro->text = same_type(in->type, et) ? in->name
                                       : kf_arena_printf(&g->p->arena, "(%s as &[%s])", in->name, dt_type_name(et));
    ro->a[0] = dt_index(g, len, DT_V_THREAD, 1);
    ro->var = ro->a[0]->var;
    own->text = dt_find_param(g, o)->name;
    own->a[0] = dt_slot(g, o, dt_below(g->r, o->slots));
    own->var = DT_V_THREAD;
    dt_binop op = compound_op(g, et);
    dt_node *v = value_for(g, et, op, DT_V_THREAD, 1);   /* a leaf: NVVM sinks short arms */
    g->ctrl = saved;
    dt_node *a = mirror_arm(g, ro, op, v), *b = mirror_arm(g, dt_copy(g, own), op, v);
    unsigned form = dt_below(g->r, 3);
    if (form == 2) {
        dt_node *sel = dt_new(g, DT_E_CALL, et);
        sel->text = "select";
        sel->a[0] = c;
        c->next = a;
        a->next = b;
        sel->var = DT_V_THREAD;
        return append(l, assign(g, own, DT_OP_NONE, sel));
    }
    dt_node *s = stmt(g, DT_S_IF), *m = NULL;
    s->a[0] = c;
    if (form == 0) {
        m = stmt(g, DT_S_VAR);
        m->type = et;
        m->text = fresh(g);
        m->flags = DT_F_TYPED;
        append(l, m);
        dt_push(g, (dt_sym){m->text, et, DT_K_VAR, DT_V_THREAD, false, 0, NULL, 0, 0, false});
    }
    s->body = assign(g, m ? name_ref(g, m->text, et, DT_V_THREAD) : dt_copy(g, own), DT_OP_NONE, a);
    s->els = assign(g, m ? name_ref(g, m->text, et, DT_V_THREAD) : dt_copy(g, own), DT_OP_NONE, b);
    append(l, s);
    if (m) append(l, assign(g, own, DT_OP_NONE, name_ref(g, m->text, et, DT_V_THREAD)));
}

static void gen_mirror(dt_gen *g, list *l)
{
    const dt_param *o = pick_out(g);
    kf_type et = o ? kf_type_elem(o->type) : kf_type_void();
    const dt_sym *in = NULL;   /* of o's type if one is, else any, seen as o's type */
    for (uint32_t i = 0; o && i < g->nsyms; i++) {
        const dt_sym *s = &g->syms[i];
        if (s->kind != DT_K_INBUF || (uint64_t)s->buf->count * kf_type_elem_bytes(s->type) < kf_type_elem_bytes(et))
            continue;
        bool same = same_type(s->type, et), had = in && same_type(in->type, et);
        if (!in || (same && !had) || (same == had && dt_chance(g->r, 50))) in = s;
    }
    if (!in || et.scalar == KF_S_BOOL) return gen_assign(g, l);
    if (dt_chance(g->r, 50)) return mirror(g, l, o, in);
    dt_node *s = stmt(g, DT_S_FOR);
    kf_type t = kf_type_scalar(KF_S_I32);
    int64_t trips = dt_range(g->r, 2, 4);
    s->a[0] = lit_int(g, t, 0, true);
    s->a[1] = lit_int(g, t, trips, true);
    s->text = fresh(g);
    s->type = t;
    loop_state ls = loop_enter(g, DT_V_UNI);
    uint32_t mark = g->nsyms;
    dt_push(g, (dt_sym){s->text, t, DT_K_LOOP, DT_V_UNI, false, (uint32_t)trips, NULL, 0, 0, false});
    list bl = {&s->body};
    mirror(g, &bl, o, in);
    g->nsyms = mark;
    loop_leave(g, ls);
    append(l, s);
}

/* for i in a .. b [step s]: bounds below 48 (no wrap in any integer type),
 * literal or computed; the variable's range is recorded when it is known. */
static void gen_for(dt_gen *g, list *l, int size)
{
    dt_node *s = stmt(g, DT_S_FOR);
    bool lit = dt_chance(g->r, 40);
    kf_type t = lit ? kf_type_scalar(KF_S_I32) : pick_int(g->r);
    int64_t lo = kf_scalar_class[t.scalar] == 'i' ? dt_range(g->r, -3, 3) : dt_range(g->r, 0, 3), hi_excl;
    uint8_t mv = (uint8_t)dt_below(g->r, DT_V_THREAD + 1), bv = DT_V_UNI;
    s->a[0] = lit_int(g, t, lo, true);
    if (!lit && dt_chance(g->r, 30)) {   /* a computed start in [0, 3] */
        dt_node *start = dt_index(g, 4, mv, 2);
        if (start->type.scalar == t.scalar) s->a[0] = start, lo = 0;
    }
    if (lit) {
        hi_excl = dt_range(g->r, lo, lo + 6);
        s->a[1] = lit_int(g, t, hi_excl, true);
    } else {   /* (e & 7) + c */
        int64_t c = dt_range(g->r, 0, 8);
        s->a[1] = masked_plus(g, t, mv, 2, 7, c);
        hi_excl = 7 + c;
    }
    if (dt_chance(g->r, 35)) {
        s->a[2] = lit_int(g, t, dt_range(g->r, 1, 4), true);
        if (!lit && dt_chance(g->r, 30)) s->a[2] = masked_plus(g, t, mv, 1, 3, 1);   /* (e & 3) + 1 */
    }
    for (int i = 0; i < 3; i++) bv = dt_max(bv, s->a[i] ? s->a[i]->var : DT_V_UNI);
    s->text = fresh(g);
    s->type = t;
    loop_state ls = loop_enter(g, bv);
    uint32_t mark = g->nsyms;
    uint8_t start_var = dt_max(s->a[0]->var, s->a[2] ? s->a[2]->var : DT_V_UNI);
    dt_push(g, (dt_sym){s->text, t, DT_K_LOOP, start_var, false, lo >= 0 ? (uint32_t)hi_excl : 0, NULL, lo, 0, false});
    loop_body(g, s, size);
    g->nsyms = mark;
    loop_leave(g, ls);
    append(l, s);
}

/* @unroll for t in 0 .. n [step k]: constant bounds, an untyped variable
 * that indexes vector components and local arrays; one loop in four over a
 * typed integer from a typed start, negative for a signed type
 * ((-2 as i8) .. 3: the bounds of a type narrower than i64 once compared
 * unextended and ran no iteration). */
static void gen_unroll(dt_gen *g, list *l, int size)
{
    dt_node *s = stmt(g, DT_S_FOR);
    s->flags = DT_F_UNROLL;
    int64_t n = dt_range(g->r, 1, 8), lo = 0;
    s->type = (kf_type){KF_TK_SCALAR, KF_S_UINT, 1, 0, 0};
    bool typed = dt_chance(g->r, 25);
    if (typed) {
        s->type = pick_int(g->r);
        lo = kf_scalar_class[s->type.scalar] == 'i' ? dt_range(g->r, -3, 1) : dt_range(g->r, 0, 2);
    }
    s->a[0] = lit_int(g, s->type, lo, !typed);
    s->a[1] = lit_int(g, s->type, lo + n, true);
    if (dt_chance(g->r, 25)) s->a[2] = lit_int(g, s->type, dt_range(g->r, 1, 3), true);
    s->text = fresh(g);
    loop_state ls = loop_enter(g, DT_V_UNI);
    uint32_t mark = g->nsyms;
    dt_push(g, (dt_sym){s->text, s->type, DT_K_LOOP, DT_V_UNI, false, lo >= 0 ? (uint32_t)(lo + n) : 0, NULL, lo, 0, false});
    g->unrolls++;
    loop_body(g, s, size > 3 ? 3 : size);
    g->unrolls--;
    g->nsyms = mark;
    loop_leave(g, ls);
    append(l, s);
}

/* while c && k < n { k += 1; ... } */
static void gen_while(dt_gen *g, list *l, int size)
{
    dt_node *s = stmt(g, DT_S_WHILE);
    uint8_t ctrl = g->ctrl;   /* evaluated again by the threads still looping: no warp operation */
    g->ctrl = DT_V_THREAD;
    s->a[0] = dt_cond(g, (uint8_t)dt_below(g->r, DT_V_THREAD + 1), 2);
    g->ctrl = ctrl;
    s->n = dt_range(g->r, 1, 5);
    s->aux = fresh(g);
    loop_state ls = loop_enter(g, s->a[0]->var);
    loop_body(g, s, size);
    loop_leave(g, ls);
    append(l, s);
}

/* var a: T[n]; for q in 0 .. n { a[q] = e; } */
static void gen_array(dt_gen *g, list *l)
{
    dt_node *s = stmt(g, DT_S_ARRAY);
    s->type = dt_pick_type(g->r, true);
    s->n = dt_range(g->r, 2, 12);
    s->text = fresh(g);
    s->aux = fresh(g);
    uint32_t mark = g->nsyms;
    dt_push(g, (dt_sym){s->aux, kf_type_scalar(KF_S_I32), DT_K_LOOP, DT_V_UNI, false, (uint32_t)s->n, NULL, 0, 0, false});
    s->a[0] = dt_expr(g, s->type, DT_V_THREAD, 3, true);
    g->nsyms = mark;
    append(l, s);
    dt_push(g, (dt_sym){s->text, s->type, DT_K_ARRAY, DT_V_THREAD, false, (uint32_t)s->n, NULL, 0, 0, false});
}

static bool block_level(const dt_gen *g) { return (g->collective & DT_C_BARRIER) && dt_eff(g) <= DT_V_BLOCK; }

/* An input buffer of at least one 16-byte chunk, at random (NULL: none). */
static const dt_sym *async_source(dt_gen *g)
{
    const dt_sym *src = NULL;
    for (uint32_t i = 0, seen = 0; i < g->nsyms; i++) {
        const dt_sym *s = &g->syms[i];
        if (s->kind == DT_K_INBUF && (uint64_t)s->buf->count * kf_type_elem_bytes(s->type) >= 16 && !dt_below(g->r, ++seen))
            src = s;
    }
    return src;
}

/* The copy of an async exchange through the view `view` (elements of u):
 * cp_async(view, q * k, src', j * k[, n]), k elements to 16 bytes, src'
 * src or its view as &[u], j any whole chunk of it, n (the 5-argument
 * form: the rest zero-filled) a literal 0..16, (e & 15) or min(e, 16). */
static dt_node *async_copy(dt_gen *g, const char *view, kf_type u, const dt_sym *src, const char *q)
{
    kf_type t32 = kf_type_scalar(KF_S_U32);
    uint32_t k = 16 / kf_type_elem_bytes(u);
    uint32_t chunks = (uint32_t)((uint64_t)src->buf->count * kf_type_elem_bytes(src->type) / 16);
    dt_node *dst = name_ref(g, view, u, DT_V_BLOCK), *from;
    from = name_ref(g, same_type(u, src->type) ? src->name : kf_arena_printf(&g->p->arena, "(%s as &[%s])", src->name,
                                                                               dt_type_name(u)), u, DT_V_UNI);
    dst->flags |= DT_F_FIXED, from->flags |= DT_F_FIXED;
    dt_node *c = dt_new(g, DT_E_CALL, kf_type_void());
    c->text = "cp_async";
    c->a[0] = dst;
    dst->next = dt_scaled(g, name_ref(g, q, t32, DT_V_THREAD), k);
    dst->next->next = from;
    from->next = dt_scaled(g, dt_u32_index(g, chunks, DT_V_THREAD, 2), k);
    if (dt_chance(g->r, 35)) {
        unsigned how = dt_below(g->r, 3);
        dt_node *n;
        if (how == 0) {
            n = lit_int(g, t32, dt_range(g->r, 0, 16), true);
        } else {
            n = dt_new(g, how == 1 ? DT_E_BIN : DT_E_CALL, t32);
            dt_node *e = dt_expr(g, t32, DT_V_THREAD, 2, false);
            if (how == 1) n->op = DT_OP_AND, n->a[0] = e, n->a[1] = lit_int(g, t32, 15, true);
            else n->text = "min", n->a[0] = e, e->next = lit_int(g, t32, 16, true);
            n->var = e->var;
            n->flags |= DT_F_KEEP;   /* never hoisted to e: n stays within 16 */
        }
        from->next->next = n;
    }
    c->var = DT_V_THREAD;
    return c;
}

/* [barrier();] for q in tb .. n step NB { s[q] = e; } barrier(); — every
 * element written by one thread, then visible to all after the barrier.
 * The async form (op 1, in the kernel: the input buffers are its) copies
 * 16-byte chunks of an input buffer instead, closed by cp_async_commit(),
 * cp_async_wait(0) and the barrier. */
static void gen_exchange(dt_gen *g, list *l)
{
    dt_sym *sh = NULL;
    for (uint32_t i = 0; i < g->nsyms; i++)
        if (g->syms[i].kind == DT_K_SHARED && dt_chance(g->r, 60)) sh = &g->syms[i];
    if (!sh) {   /* a new shared array, declared here (all of them within 40 KiB) */
        dt_node *d = stmt(g, DT_S_SHARED);
        uint32_t nb = g->p->block[0] * g->p->block[1] * g->p->block[2];
        d->type = dt_pick_type(g->r, false);   /* no bool: a view may write any bytes */
        d->n = dt_range(g->r, 1, 2 * (int64_t)nb + 5);
        uint32_t bytes = (uint32_t)d->n * kf_type_elem_bytes(d->type);
        if (g->p->shared_bytes + bytes > 40 * 1024) return gen_assign(g, l);
        g->p->shared_bytes += bytes;
        d->text = fresh(g);
        append(l, d);
        dt_push(g, (dt_sym){d->text, d->type, DT_K_SHARED, DT_V_BLOCK, false, (uint32_t)d->n, NULL, 0, 0, false});
        sh = &g->syms[g->nsyms - 1];
    }
    dt_node *s = stmt(g, DT_S_EXCHANGE);
    uint32_t bytes = sh->len * kf_type_elem_bytes(sh->type);
    kf_type u = sh->type;
    if (dt_chance(g->r, 40)) {   /* through a view: (s as shared U[])[q] = ... */
        u = dt_pick_type(g->r, false);
        if (bytes < kf_type_elem_bytes(u)) u = sh->type;
    }
    const dt_sym *src = !g->fn && bytes >= 16 && dt_chance(g->r, 25) ? async_source(g) : NULL;
    s->op = src != NULL;
    s->n = src ? bytes / 16 : bytes / kf_type_elem_bytes(u);
    s->text = same_type(u, sh->type) ? sh->name
                                     : kf_arena_printf(&g->p->arena, "(%s as shared %s[])", sh->name, dt_type_name(u));
    s->type = u;
    s->aux = fresh(g);
    /* in a fn the array (its own, shared by every call site) may still be read from an earlier call */
    /* an earlier exchange, even in a scope already left (its readable mark
     * is gone), may have been read or written through another view: the
     * last test keeps the random stream of every other program unchanged */
    if (sh->readable || g->loops || g->fn || dt_chance(g->r, 30) || sh->exchanged) s->flags |= DT_F_LEAD;
    sh->exchanged = true;
    if (g->fn) s->a[1] = name_ref(g, "((thread_id.z * block_dim.y + thread_id.y) * block_dim.x + thread_id.x)",
                                  kf_type_scalar(KF_S_U32), DT_V_THREAD);   /* dt_tb is the kernel's */
    if (s->a[1]) s->a[1]->flags |= DT_F_FIXED;
    uint32_t mark = g->nsyms;
    dt_push(g, (dt_sym){s->aux, kf_type_scalar(KF_S_U32), DT_K_LOOP, DT_V_THREAD, false, (uint32_t)s->n, NULL, 0, 0, false});
    uint8_t ctrl = g->ctrl;   /* each thread runs its own number of iterations */
    g->ctrl = DT_V_THREAD;
    g->in_exchange = true;
    if (src) {
        s->a[0] = async_copy(g, s->text, u, src, s->aux);
    } else {
        s->a[0] = dt_expr(g, u, DT_V_THREAD, 3, true);
        if (is_float(u)) s->a[0] = nan_guard(g, s->a[0]);   /* a view may read the bits: no computed NaN in them */
    }
    g->in_exchange = false;
    g->ctrl = ctrl;
    g->nsyms = mark;
    sh->readable = true;
    uint32_t w = (uint32_t)s->n * (src ? 16 : kf_type_elem_bytes(u));
    if (w > sh->wbytes) sh->wbytes = w;
    append(l, s);
}


/* The literal of a small-integer value (bits of scalar s): a constant of a
 * contended exch or cas. */
static dt_node *small_lit(dt_gen *g, kf_type t, uint64_t bits)
{
    dt_node *n = dt_new(g, DT_E_LIT, t);
    kf_scalar s = (kf_scalar)t.scalar;
    if (kf_scalar_class[s] == 'f') n->text = kf_arena_printf(&g->p->arena, "%.1f", kf_bits_to_double(s, bits));
    else if (kf_scalar_class[s] == 'i') n->text = kf_arena_printf(&g->p->arena, "%lld", (long long)kf_bits_to_i64(s, bits));
    else n->text = kf_arena_printf(&g->p->arena, "%llu", (unsigned long long)bits);
    n->flags = DT_F_UNTYPED;
    return n;
}

/* base + (an index in [0, 2)): one of the two contended slots of a kind. */
static dt_node *pair_slot(dt_gen *g, uint32_t base)
{
    dt_node *i = dt_index(g, 2, DT_V_THREAD, 2);
    if (!base) return i;
    dt_node *b = dt_new(g, DT_E_BIN, i->type);
    b->op = DT_OP_ADD, b->a[0] = i, b->a[1] = lit_int(g, i->type, base, true), b->var = i->var;
    return b;
}

/* A value 0 .. 15 as f32: contended f32 sums stay exact (below 2^24). */
static dt_node *tiny_float(dt_gen *g, kf_type t)
{
    kf_type u8 = kf_type_scalar(KF_S_U8);
    dt_node *m = dt_new(g, DT_E_BIN, u8);
    m->op = DT_OP_AND, m->a[0] = dt_expr(g, u8, DT_V_THREAD, 2, false), m->a[1] = lit_int(g, u8, 15, true);
    m->var = m->a[0]->var;
    return cast_to(g, m, t);
}

/* A contended atomic (result dropped) on the slots of one operation: add,
 * min or max of a value of any variance, exch or cas of the program's
 * constants (see the rules above). */
static void gen_atomic(dt_gen *g, list *l)
{
    const dt_param *ab = dt_atomic_buf(g);
    if (!ab) return gen_assign(g, l);
    static const char *const fn[] = {"atomic_add", "atomic_min", "atomic_max", "atomic_exch", "atomic_cas"};
    kf_type et = kf_type_elem(ab->type);
    bool addonly = et.scalar == KF_S_F64 || et.kind == KF_TK_VECTOR;
    unsigned which = addonly ? 0 : dt_below(g->r, 5);
    dt_node *c = dt_new(g, DT_E_CALL, et), *buf = name_ref(g, dt_find_param(g, ab)->name, ab->type, DT_V_UNI), *v;
    c->text = fn[which];
    c->a[0] = buf;
    if (which == 3) buf->next = lit_int(g, kf_type_scalar(KF_S_U32), 6, true);
    else if (which == 4) buf->next = lit_int(g, kf_type_scalar(KF_S_U32), 7, true);
    else buf->next = addonly ? dt_index(g, ab->shared, DT_V_THREAD, 2) : pair_slot(g, 2 * which);
    if (which == 3) v = small_lit(g, et, ab->exch_bits);
    else if (which == 4) v = small_lit(g, et, ab->cas_bits[0]);
    else if (which == 0 && et.scalar == KF_S_F32) v = tiny_float(g, et);
    else v = dt_atomic_value(g, et, DT_V_THREAD, 2);
    buf->next->next = v;
    if (which == 4) v->next = small_lit(g, et, ab->cas_bits[1]);
    dt_node *s = stmt(g, DT_S_CALL);
    s->a[0] = c;
    append(l, s);
}

static void gen_call(dt_gen *g, list *l)
{
    for (uint32_t i = 0; i < g->p->nfns; i++) {
        const dt_fn *f = &g->p->fns[dt_below(g->r, g->p->nfns)];
        if (f->ready && dt_fn_callable(g, f)) {
            dt_node *s = stmt(g, DT_S_CALL);
            s->a[0] = dt_fn_call(g, f);
            append(l, s);
            return;
        }
    }
    gen_assign(g, l);
}

/* text; a statement builtin of kforge's (S_BUILTIN), its call written out. */
static void builtin(dt_gen *g, list *l, const char *text)
{
    dt_node *s = stmt(g, DT_S_BUILTIN);
    s->text = text;
    append(l, s);
}

/* prefetch_l2(buf, j, n) of an input buffer in scope, its range drawn from
 * the side stream and inside the buffer; dep_trigger() where none is. */
static const char *prefetch_text(dt_gen *g)
{
    int ins[DT_MAX_SYMS], n = 0;
    for (uint32_t i = 0; i < g->nsyms; i++)
        if (g->syms[i].kind == DT_K_INBUF && g->syms[i].buf->count) ins[n++] = (int)i;
    if (!n) return "dep_trigger()";
    const dt_sym *s = &g->syms[ins[dt_below(g->side, (uint32_t)n)]];
    uint32_t j = dt_below(g->side, s->buf->count), cnt = dt_below(g->side, s->buf->count - j + 1);
    return kf_arena_printf(&g->p->arena, "prefetch_l2(%s, %u, %u)", s->name, j, cnt);
}

static void gen_stmt(dt_gen *g, list *l, int nest)
{
    g->budget--;
    if (g->side && dt_chance(g->side, 3)) {
        unsigned k = dt_below(g->side, 10);
        builtin(g, l, k < 5 ? "fence()" : k < 8 ? "dep_trigger()" : prefetch_text(g));
    }
    unsigned k = dt_below(g->r, 100);
    int size = 2 + (int)dt_below(g->r, 4);
    bool can_nest = nest < 4 && g->budget > 3;
    if (k < 12) return gen_let(g, l);
    if (k < 20) return gen_var(g, l);
    if (k < 37) return gen_assign(g, l);
    if (k < 40) return gen_mirror(g, l);
    if (k < 45) return gen_approx(g, l);
    if (k < 54 && can_nest) return gen_if(g, l, size);
    if (k < 61 && can_nest) return gen_for(g, l, size);
    if (k < 64 && can_nest && !g->unrolls) return gen_unroll(g, l, size);
    if (k < 67 && can_nest) return gen_while(g, l, size);
    if (k < 71) return gen_array(g, l);
    if (k < 75 && block_level(g)) return gen_exchange(g, l);
    if (k < 77 && block_level(g)) return append(l, stmt(g, DT_S_BARRIER));
    if (k < 81) return gen_atomic(g, l);
    if (k < 85 && g->p->nfns) return gen_call(g, l);
    if (k < 90 && g->loops) return gen_exit(g, l, dt_chance(g->r, 50) ? DT_S_BREAK : DT_S_CONTINUE);
    if (k < 92) return gen_exit(g, l, DT_S_RETURN);
    gen_assign(g, l);
}

/* Stores some of the values declared in this scope into output slots, so a
 * difference in any of them shows. */
static void sinks(dt_gen *g, list *l, uint32_t from)
{
    for (uint32_t i = from; i < g->nsyms; i++) {
        dt_sym *s = &g->syms[i];
        if ((s->kind != DT_K_LET && s->kind != DT_K_VAR) || !dt_chance(g->r, 65)) continue;
        const dt_param *o = pick_out(g);
        if (!o) return;
        dt_node *v = convert(g, name_ref(g, s->name, s->type, s->var), kf_type_elem(o->type));
        append(l, store(g, o, v, dt_chance(g->r, 25) && is_int(kf_type_elem(o->type)) &&
                                     o->type.lanes == 1 ? DT_OP_XOR : DT_OP_NONE));
    }
}

static void block(dt_gen *g, list *l, int n)
{
    uint32_t mark = g->nsyms;
    bool readable[DT_MAX_SYMS];
    uint32_t wbytes[DT_MAX_SYMS];   /* an exchange in this scope may not run: its writes stay here */
    for (uint32_t i = 0; i < mark; i++) readable[i] = g->syms[i].readable, wbytes[i] = g->syms[i].wbytes;
    for (int i = 0; i < n && g->budget > 0; i++) gen_stmt(g, l, g->loops + 1);
    sinks(g, l, mark);
    for (uint32_t i = 0; i < mark; i++) g->syms[i].readable = readable[i], g->syms[i].wbytes = wbytes[i];
    g->nsyms = mark;
}

/* ---- fns --------------------------------------------------------------------------- */
/* A readable shared array in scope with at least fp->shared_len elements
 * of fp's type written (the last such), or NULL. */
static const dt_sym *shared_arg(const dt_gen *g, const dt_fparam *fp)
{
    uint32_t need = fp->shared_len * kf_type_elem_bytes(fp->type);
    for (uint32_t i = g->nsyms; i-- > 0;)
        if (g->syms[i].kind == DT_K_SHARED && g->syms[i].readable && g->syms[i].wbytes >= need) return &g->syms[i];
    return NULL;
}

bool dt_fn_shared_args(const dt_gen *g, const dt_fn *f)
{
    for (uint32_t i = 0; i < f->nparams; i++)
        if (f->params[i].shared_len && !shared_arg(g, &f->params[i])) return false;
    return true;
}

dt_node *dt_fn_call(dt_gen *g, const dt_fn *f)
{
    dt_node *c = dt_new(g, DT_E_CALL, f->ret), **at = &c->a[0];
    c->text = f->name;
    c->flags = DT_F_MODULE;
    c->var = DT_V_THREAD;
    for (uint32_t i = 0; i < f->nparams; i++, at = &(*at)->next) {
        const dt_fparam *fp = &f->params[i];
        if (fp->buf) {
            dt_sym *s = dt_find_param(g, fp->buf);
            *at = name_ref(g, s->name, s->type, DT_V_UNI);
            (*at)->flags = DT_F_FIXED;
        } else if (fp->base) {   /* the caller's base slot of f->out */
            *at = dt_slot(g, f->out, 0);
        } else if (fp->shared_len) {   /* a shared array written far enough, or a view of it */
            const dt_sym *s = shared_arg(g, fp);
            const char *t = same_type(s->type, fp->type)
                                ? s->name
                                : kf_arena_printf(&g->p->arena, "(%s as shared %s[])", s->name, dt_type_name(fp->type));
            *at = name_ref(g, t, fp->type, DT_V_UNI);
            (*at)->flags = DT_F_FIXED;
        } else {
            *at = dt_expr(g, fp->type, DT_V_THREAD, 2, true);
        }
    }
    return c;
}

static void gen_fn(dt_gen *g0, dt_fn *f)
{
    dt_gen g = {.p = g0->p, .r = g0->r, .fn = f, .budget = 4 + (int)dt_below(g0->r, 10), .avoid = g0->avoid};
    kf_dt_prog *p = g0->p;
    f->name = fresh(&g);
    f->collective = dt_chance(g.r, 25) ? DT_C_WARP : dt_chance(g.r, 10) ? DT_C_WARP | DT_C_BARRIER : 0;
    g.collective = f->collective;
    f->ret = dt_chance(g.r, 20) ? kf_type_void() : dt_pick_type(g.r, true);
    for (uint32_t i = 0; i < p->nconsts; i++)
        dt_push(&g, (dt_sym){p->consts[i].name, p->consts[i].type, DT_K_CONST, DT_V_UNI, false, 0, NULL, 0, 0, false});
    uint32_t nvals = dt_below(g.r, 4);
    for (uint32_t i = 0; i < nvals; i++) {
        dt_fparam *fp = &f->params[f->nparams++];
        fp->name = fresh(&g);
        fp->type = dt_pick_type(g.r, true);
        dt_push(&g, (dt_sym){fp->name, fp->type, DT_K_PARAM, DT_V_THREAD, false, 0, NULL, 0, 0, false});
    }
    if (dt_chance(g.r, 25)) {   /* p: shared T[], read (or exchanged through) as the caller's first elements */
        dt_fparam *fp = &f->params[f->nparams++];
        fp->name = fresh(&g);
        fp->type = dt_pick_type(g.r, false);
        fp->shared_len = (uint32_t)dt_range(g.r, 1, 16);
        dt_push(&g, (dt_sym){fp->name, fp->type, DT_K_SHARED, DT_V_BLOCK, true, fp->shared_len, NULL, 0,
                             fp->shared_len * kf_type_elem_bytes(fp->type), false});
    }
    for (uint32_t i = 0; i < p->nparams && f->nparams < DT_MAX_FPARAMS - 2; i++) {
        const dt_param *bp = &p->params[i];
        bool in = bp->role == DT_R_IN && dt_chance(g.r, 40);
        bool out = bp->role == DT_R_OUT && !f->out && dt_chance(g.r, 35);
        if (!in && !out) continue;
        dt_fparam *fp = &f->params[f->nparams++];
        fp->name = fresh(&g);
        fp->type = bp->type;
        fp->buf = bp;
        dt_push(&g, (dt_sym){fp->name, kf_type_elem(bp->type), out ? DT_K_OUTBUF : DT_K_INBUF, DT_V_UNI, false, 0, bp, 0, 0, false});
        if (out) {   /* and its base slot, a u32 parameter */
            f->out = bp;
            f->base = fresh(&g);
            f->params[f->nparams++] = (dt_fparam){f->base, kf_type_scalar(KF_S_U32), NULL, true, 0};
        }
    }
    list l = {&f->body};
    block(&g, &l, 2 + (int)dt_below(g.r, 4));
    if (f->ret.kind != KF_TK_VOID) {
        dt_node *r = stmt(&g, DT_S_RETURN);
        r->a[0] = dt_expr(&g, f->ret, DT_V_THREAD, 3, true);
        append(&l, r);
    }
}

/* ---- the program ------------------------------------------------------------------------ */
static dt_const *add_const(dt_gen *g, kf_type t)
{
    kf_dt_prog *p = g->p;
    dt_const *c = &p->consts[p->nconsts++];
    c->name = fresh(g);
    c->type = t;
    return c;
}

/* consts[0]: a bool that is true (declared false and set with -D, or
 * declared true); then a few of any scalar type, some overridden. */
static void make_consts(dt_gen *g)
{
    dt_const *c = add_const(g, kf_type_scalar(KF_S_BOOL));
    c->overridden = dt_chance(g->r, 50);
    c->decl = !c->overridden;
    c->value = 1;
    uint32_t n = dt_below(g->r, 4);
    for (uint32_t i = 0; i < n; i++) {
        kf_type t = dt_pick_scalar(g->r, false);
        c = add_const(g, t);
        c->decl = (int64_t)dt_value_bits(g->r, (kf_scalar)t.scalar, true);
        c->overridden = dt_chance(g->r, 40);
        c->value = c->overridden ? (int64_t)dt_value_bits(g->r, (kf_scalar)t.scalar, true) : c->decl;
    }
}

static dt_node *u32_lit(dt_gen *g, uint32_t v) { return lit_int(g, kf_type_scalar(KF_S_U32), v, true); }

static dt_param *add_param(kf_dt_prog *p, dt_gen *g, dt_role role, kf_type t)
{
    dt_param *pa = &p->params[p->nparams++];
    pa->name = fresh(g);
    pa->role = role;
    pa->type = t;
    return pa;
}

/* A u32 scalar parameter holding v (used by grid expressions). */
static dt_param *grid_param(dt_gen *g, uint32_t v)
{
    dt_param *pa = add_param(g->p, g, DT_R_SCALAR, kf_type_scalar(KF_S_U32));
    pa->value = (kf_value){.type = pa->type, .lane = {v}};
    return pa;
}

/* Block and grid, and how the @schedule writes them: literals, a constant
 * (maybe overridden by -D), a scalar parameter, or cdiv over one. */
static void make_schedule(dt_gen *g)
{
    static const uint16_t shapes[][3] = {
        {32, 1, 1}, {48, 1, 1}, {64, 1, 1}, {96, 1, 1}, {128, 1, 1}, {256, 1, 1}, {40, 1, 1}, {17, 1, 1},
        {33, 1, 1}, {8, 4, 1}, {16, 3, 1}, {8, 6, 1}, {32, 2, 1}, {4, 4, 2}, {8, 2, 3}, {2, 3, 5},
        {1, 32, 1}, {64, 2, 1}, {160, 1, 1}, {512, 1, 1},
    };
    static const uint8_t grids[][3] = {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}, {2, 2, 1}, {1, 2, 1}, {2, 1, 2}, {1, 1, 1}};
    kf_dt_prog *p = g->p;
    const uint16_t *b = shapes[dt_below(g->r, sizeof shapes / sizeof shapes[0])];
    const uint8_t *gr = grids[dt_below(g->r, sizeof grids / sizeof grids[0])];
    if (b[0] * b[1] * b[2] >= 256 && gr[0] * gr[1] * gr[2] > 2) gr = grids[0];
    int bdims = b[2] > 1 ? 3 : b[1] > 1 ? 2 : dt_chance(g->r, 20) ? 2 : 1;
    int gdims = gr[2] > 1 ? 3 : gr[1] > 1 ? 2 : dt_chance(g->r, 20) ? 2 : 1;
    if (gdims == 1 && dt_chance(g->r, 15)) {   /* no grid: cdiv(count, block.x) at dispatch */
        gdims = 0;
        p->count = (uint64_t)gr[0] * b[0] - dt_below(g->r, b[0]);
    }
    for (int d = 0; d < 3; d++) {
        p->block[d] = b[d];
        p->grid[d] = gr[d];
        if (d < bdims) p->block_expr[d] = u32_lit(g, b[d]);
        if (d >= gdims) continue;
        unsigned how = dt_below(g->r, 4);
        if (how == 0) {
            p->grid_expr[d] = u32_lit(g, gr[d]);
        } else if (how == 1) {
            p->grid_expr[d] = name_ref(g, grid_param(g, gr[d])->name, kf_type_scalar(KF_S_U32), DT_V_UNI);
        } else {   /* cdiv(n, k) with n in ((g-1)k, gk] */
            uint32_t k = (uint32_t)dt_range(g->r, 1, 64);
            dt_param *n = grid_param(g, gr[d] * k - (uint32_t)dt_below(g->r, k));
            dt_node *c = dt_new(g, DT_E_CALL, kf_type_scalar(KF_S_U32));
            c->text = "cdiv";
            c->a[0] = name_ref(g, n->name, n->type, DT_V_UNI);
            c->a[0]->next = u32_lit(g, k);
            p->grid_expr[d] = c;
        }
    }
    if (dt_chance(g->r, 30)) {   /* block.x through a constant, maybe set by -D */
        dt_const *c = add_const(g, kf_type_scalar(KF_S_U32));
        c->value = b[0];
        c->overridden = dt_chance(g->r, 60);
        c->decl = c->overridden ? (int64_t)dt_range(g->r, 1, 64) : b[0];
        p->block_expr[0] = name_ref(g, c->name, c->type, DT_V_UNI);
        p->block_expr[0]->flags |= DT_F_MODULE;
    }
    p->nthreads = b[0] * b[1] * b[2] * gr[0] * gr[1] * gr[2];
    /* min_blocks (a register budget: the values must not change) on about
     * one program in four, half the blocks an SM's 64 warps allow, and
     * min_blocks = 0 (no bound) on about as many; chosen from what is
     * drawn already, so a seed's programs stay the ones they were, now and
     * then with this one more word in the schedule. */
    uint32_t threads = b[0] * b[1] * b[2], warps = (threads + 31) / 32;
    uint32_t fit = 64 / warps < 32 ? 64 / warps : 32, pick = threads + gr[0] + 2u * gr[1];
    if (pick % 4 == 0) p->min_blocks = fit > 1 ? fit / 2 : 1;
    p->min_blocks_zero = pick % 4 == 2;
}

static void *alloc_data(kf_dt_prog *p, kf_type t, uint32_t n)
{
    void *d = kf_arena_calloc(&p->arena, (size_t)n ? n : 1, kf_type_elem_bytes(t));
    if (!d) {
        fprintf(stderr, "kforge-difftest: out of memory generating data\n");
        exit(3);
    }
    return d;
}

static kf_type buf_type(kf_type elem, bool mut)
{
    return (kf_type){KF_TK_BUFFER, elem.scalar, elem.lanes, (uint8_t)(mut ? KF_TF_MUT : 0), 0};
}

static void make_inputs(dt_gen *g, uint32_t n)
{
    static const uint16_t lens[] = {16, 32, 48, 64, 100, 128, 256, 7};
    for (uint32_t i = 0; i < n; i++) {
        kf_type t = dt_pick_type(g->r, false);
        dt_param *pa = add_param(g->p, g, DT_R_IN, buf_type(t, false));
        pa->count = lens[dt_below(g->r, 8)];
        pa->data = alloc_data(g->p, t, pa->count);
        dt_fill(g->r, t, pa->data, pa->count, false);
    }
}

/* An output of `slots` slots per thread (initial contents from fill). */
static dt_param *make_output(dt_gen *g, dt_role role, kf_type t, uint32_t slots, bool fill)
{
    dt_param *pa = add_param(g->p, g, role, buf_type(t, true));
    pa->slots = slots;
    pa->count = g->p->nthreads * slots;
    pa->data = alloc_data(g->p, t, pa->count);
    if (fill) dt_fill(g->r, t, pa->data, pa->count, false);
    return pa;
}

/* The atomic buffer: 8 contended slots, then 0-2 slots per thread, all
 * holding small integers (exact in every order of addition). */
static void make_atomic(dt_gen *g)
{
    static const kf_type at[] = {{KF_TK_SCALAR, KF_S_I32, 1, 0, 0}, {KF_TK_SCALAR, KF_S_U32, 1, 0, 0},
                                 {KF_TK_SCALAR, KF_S_U64, 1, 0, 0}, {KF_TK_SCALAR, KF_S_F32, 1, 0, 0},
                                 {KF_TK_SCALAR, KF_S_F64, 1, 0, 0}, {KF_TK_VECTOR, KF_S_F16, 2, 0, 0}};
    kf_type t = at[dt_below(g->r, 6)];
    dt_param *pa = add_param(g->p, g, DT_R_ATOMIC, buf_type(t, true));
    pa->shared = 8;
    pa->slots = dt_below(g->r, 3);
    pa->count = pa->shared + g->p->nthreads * pa->slots;
    pa->data = alloc_data(g->p, t, pa->count);
    unsigned by = kf_scalar_bytes[t.scalar];
    for (uint32_t e = 0; e < pa->count * t.lanes; e++) {
        uint64_t v = dt_small_bits(g->r, (kf_scalar)t.scalar);
        memcpy((char *)pa->data + (size_t)e * by, &v, by);
    }
    pa->exch_bits = dt_small_bits(g->r, (kf_scalar)t.scalar);
    pa->cas_bits[0] = dt_small_bits(g->r, (kf_scalar)t.scalar);
    if (t.lanes == 1 && dt_chance(g->r, 50)) memcpy(&pa->cas_bits[0], (char *)pa->data + 7 * by, by);   /* it succeeds */
    pa->cas_bits[1] = dt_small_bits(g->r, (kf_scalar)t.scalar);
}

static void make_params(dt_gen *g)
{
    kf_dt_prog *p = g->p;
    uint32_t nin = 1 + dt_below(g->r, 3), nsc = dt_below(g->r, 5), nout = 1 + dt_below(g->r, 3);
    make_inputs(g, nin);
    for (uint32_t i = 0; i < nsc; i++) {
        kf_type t = dt_pick_type(g->r, true);
        dt_param *pa = add_param(p, g, DT_R_SCALAR, t);
        pa->value.type = t;
        for (unsigned l = 0; l < t.lanes; l++) pa->value.lane[l] = dt_value_bits(g->r, (kf_scalar)t.scalar, true);
    }
    for (uint32_t i = 0; i < nout; i++) {
        kf_type t = dt_pick_type(g->r, false);
        make_output(g, DT_R_OUT, t, 1 + dt_below(g->r, 6), true);
    }
    if (dt_chance(g->r, 45)) {
        kf_type t = kf_type_scalar(dt_chance(g->r, 70) ? KF_S_F32 : KF_S_F64);
        dt_param *pa = make_output(g, DT_R_APPROX, t, 1 + dt_below(g->r, 4), false);
        pa->tol = kf_arena_calloc(&p->arena, pa->slots, 1);
    }
    if (dt_chance(g->r, 40)) make_atomic(g);
    for (uint32_t i = p->nparams; i > 1; i--) {   /* any binding order */
        uint32_t j = dt_below(g->r, i);
        dt_param tmp = p->params[i - 1];
        p->params[i - 1] = p->params[j];
        p->params[j] = tmp;
    }
}

/* The kernel's dynamic shared array (30% of programs), declared first: its
 * bytes come from @schedule(shared = EXPR) (a literal, or K * n over a u32
 * parameter) or from the launch, which overrides the schedule's; mostly a
 * few KiB, sometimes over 48 KiB (the runtime opts the kernel in). */
static void make_dynamic_shared(dt_gen *g, list *l)
{
    kf_dt_prog *p = g->p;
    if (!dt_chance(g->r, 30)) return;
    kf_type t = dt_pick_type(g->r, false);
    uint32_t esz = kf_type_elem_bytes(t);
    uint32_t bytes = dt_chance(g->r, 5) ? (uint32_t)dt_range(g->r, 49153, 60000) : (uint32_t)dt_range(g->r, esz, 4096);
    unsigned how = dt_below(g->r, 3);
    kf_type u = kf_type_scalar(KF_S_U32);
    if (how == 0) {
        p->shared_expr = u32_lit(g, bytes);
    } else if (how == 1) {   /* K * n */
        uint32_t k = (uint32_t)dt_range(g->r, 1, 16), n = bytes / k ? bytes / k : 1;
        if (k * n < esz) n = (esz + k - 1) / k;   /* at least one element: 7 * 1 bytes held no u32x2 (seed 2206 program 4424) */
        bytes = k * n;
        dt_param *pn = grid_param(g, n);
        dt_node *m = dt_new(g, DT_E_BIN, u);
        m->op = DT_OP_MUL, m->a[0] = u32_lit(g, k), m->a[1] = name_ref(g, pn->name, u, DT_V_UNI);
        p->shared_expr = m;
    } else {   /* the launch's, sometimes over a schedule's that it overrides */
        p->dyn_launch = bytes;
        if (dt_chance(g->r, 50)) p->shared_expr = u32_lit(g, (uint32_t)dt_range(g->r, 0, 4096));
    }
    if (bytes < esz) bytes = esz;
    if (how == 2) p->dyn_launch = bytes;
    else if (how == 0) p->shared_expr->text = kf_arena_printf(&p->arena, "%u", bytes);
    p->dyn_bytes = bytes;
    dt_node *d = stmt(g, DT_S_SHARED);
    d->type = t;
    d->n = 0;
    d->text = fresh(g);
    d->flags |= DT_F_FIXED;
    append(l, d);
    dt_push(g, (dt_sym){d->text, t, DT_K_SHARED, DT_V_BLOCK, false, bytes / esz, NULL, 0, 0, false});
}

/* dep_wait() after 1-3 lets (20% of kernels, from the side stream): the
 * first a load of an input buffer, the others any expression that stores
 * nothing (no fn call, no atomic: lowering refuses a store before the
 * wait). Their values are used after it like any other, so the GPU paths'
 * two forms of a load meet: ld.relaxed.gpu before the wait, and after it
 * .nc only for the buffers read before (CUDA-C: __restrict__ on those). */
static void pre_wait(dt_gen *g, list *l)
{
    dt_rng *main = g->r;
    g->r = g->side, g->prewait = true;
    dt_node *ld = dt_input_load(g, 2);
    if (ld) {
        dt_node *s = stmt(g, DT_S_LET);
        s->a[0] = ld, s->type = ld->type, s->text = fresh(g), s->flags = DT_F_TYPED;
        append(l, s);
        dt_push(g, (dt_sym){s->text, s->type, DT_K_LET, ld->var, false, 0, NULL, 0, 0, false});
    }
    for (uint32_t i = dt_below(g->r, 3); i > 0; i--) gen_let(g, l);
    g->r = main, g->prewait = false;
    builtin(g, l, "dep_wait()");
}

/* let dt_tb / dt_gt / dt_<out>: the thread's place and its own slots. */
static void prologue(dt_gen *g, list *l)
{
    kf_dt_prog *p = g->p;
    static const char *const tb = "(thread_id.z * block_dim.y + thread_id.y) * block_dim.x + thread_id.x";
    static const char *const gt =
        "((block_id.z * grid_dim.y + block_id.y) * grid_dim.x + block_id.x) * (block_dim.x * block_dim.y * block_dim.z) + dt_tb";
    kf_type u = kf_type_scalar(KF_S_U32);
    const char *names[2 + DT_MAX_PARAMS], *vals[2 + DT_MAX_PARAMS];
    uint32_t n = 0;
    names[n] = "dt_tb", vals[n++] = tb;
    names[n] = "dt_gt", vals[n++] = gt;
    for (uint32_t i = 0; i < p->nparams; i++) {
        const dt_param *pa = &p->params[i];
        if (pa->role == DT_R_OUT || pa->role == DT_R_APPROX)
            names[n] = kf_arena_printf(&p->arena, "dt_%s", pa->name), vals[n++] = kf_arena_printf(&p->arena, "dt_gt * %u", pa->slots);
        else if (pa->role == DT_R_ATOMIC && pa->slots)
            names[n] = kf_arena_printf(&p->arena, "dt_%s", pa->name),
            vals[n++] = kf_arena_printf(&p->arena, "%u + dt_gt * %u", pa->shared, pa->slots);
    }
    for (uint32_t i = 0; i < n; i++) {
        dt_node *s = stmt(g, DT_S_LET);
        s->text = names[i];
        s->type = u;
        s->flags = DT_F_TYPED | DT_F_FIXED;
        s->a[0] = name_ref(g, vals[i], u, DT_V_THREAD);
        s->a[0]->flags |= DT_F_FIXED;
        append(l, s);
    }
    dt_push(g, (dt_sym){"dt_tb", u, DT_K_LET, DT_V_THREAD, false, 0, NULL, 0, 0, false});
    dt_push(g, (dt_sym){"dt_gt", u, DT_K_LET, DT_V_THREAD, false, 0, NULL, 0, 0, false});
}

const char *const kf_dt_avoid_names[KF_DT_NAVOID] = {
#define X(e, name, why) name,
    KF_DT_AVOIDS(X)
#undef X
};
const char *const kf_dt_avoid_why[KF_DT_NAVOID] = {
#define X(e, name, why) why,
    KF_DT_AVOIDS(X)
#undef X
};

kf_dt_prog *dt_build(uint64_t seed, uint64_t index, unsigned avoid)
{
    kf_dt_prog *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    kf_arena_init(&p->arena);
    p->seed = seed;
    p->index = index;
    p->next_id = 1;   /* 0 names no node (edits of fns and constants) */
    dt_rng r = {seed * 0x9e3779b97f4a7c15ull ^ (index + 1) * 0xd1b54a32d192ed03ull};
    dt_rng side = {seed * 0xbf58476d1ce4e5b9ull ^ (index + 1) * 0x94d049bb133111ebull};
    dt_next(&r);
    dt_next(&side);
    dt_gen g = {.p = p, .r = &r, .side = &side, .collective = DT_C_WARP | DT_C_BARRIER, .avoid = avoid};
    make_consts(&g);
    make_schedule(&g);
    make_params(&g);
    uint32_t nfns = dt_below(&r, 4);
    for (uint32_t i = 0; i < nfns && p->nfns < DT_MAX_FNS; i++) {
        gen_fn(&g, &p->fns[p->nfns]);
        p->fns[p->nfns++].ready = true;
    }
    /* an extern "C" symbol: no name C++ reserves (no "__", no leading "_"), even with a tag appended */
    const char *base = fresh(&g);
    char kname[80];
    size_t n = (size_t)snprintf(kname, sizeof kname, "kern");
    for (const char *c = base; *c && n + 1 < sizeof kname; c++)
        if (*c != '_') kname[n++] = *c;
    kname[n] = 0;
    p->kname = kf_arena_strdup(&p->arena, kname);
    for (uint32_t i = 0; i < p->nconsts; i++)
        dt_push(&g, (dt_sym){p->consts[i].name, p->consts[i].type, DT_K_CONST, DT_V_UNI, false, 0, NULL, 0, 0, false});
    for (uint32_t i = 0; i < p->nparams; i++) {
        const dt_param *pa = &p->params[i];
        dt_symkind k = pa->role == DT_R_IN ? DT_K_INBUF : pa->role == DT_R_SCALAR ? DT_K_PARAM : DT_K_OUTBUF;
        dt_push(&g, (dt_sym){pa->name, k == DT_K_PARAM ? pa->type : kf_type_elem(pa->type), (uint8_t)k, DT_V_UNI, false,
                             0, k == DT_K_PARAM ? NULL : pa, 0, 0, false});
    }
    list l = {&p->body};
    prologue(&g, &l);
    make_dynamic_shared(&g, &l);
    if (dt_chance(&side, 20)) pre_wait(&g, &l);
    g.budget = 8 + (int)dt_below(&r, 24);
    block(&g, &l, g.budget);
    return p;
}
