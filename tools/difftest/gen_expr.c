/* Expressions of the random programs (the rules they follow are listed at
 * the top of gen_stmt.c). dt_expr(t, maxvar, depth) returns a tree of type
 * t whose value varies at most as much as maxvar allows (uniform, per
 * block, per warp, per thread), so that conditions around barriers and
 * warp operations stay uniform. Every operation whose result the contract
 * leaves undefined gets its operands made safe by an E_GUARD node: a
 * divisor that cannot be zero, an index reduced into bounds, a float that
 * cannot be NaN before a bitcast, a zero that cannot be -0 after min/max,
 * an approximate function's argument clamped into its accurate range. */
#include "dt_impl.h"

#include <stdio.h>
#include <string.h>

static void oom(void)
{
    fprintf(stderr, "kforge-difftest: out of memory generating a program\n");
    exit(3);
}

dt_node *dt_new(dt_gen *g, dt_kind kind, kf_type t)
{
    dt_node *n = kf_arena_calloc(&g->p->arena, 1, sizeof *n);
    if (!n) oom();
    n->kind = (uint8_t)kind;
    n->type = t;
    n->id = g->p->next_id++;
    return n;
}

uint8_t dt_eff(const dt_gen *g) { return dt_max(g->ctrl, g->exited); }

static dt_node *name_node(dt_gen *g, const char *name, kf_type t, uint8_t var)
{
    dt_node *n = dt_new(g, DT_E_NAME, t);
    n->text = name;
    n->var = var;
    return n;
}

static dt_node *call(dt_gen *g, const char *fn, kf_type t, dt_node *a0, dt_node *a1, dt_node *a2)
{
    dt_node *n = dt_new(g, DT_E_CALL, t);
    n->text = fn;
    n->a[0] = a0;
    if (a0) a0->next = a1;
    if (a1) a1->next = a2;
    n->var = dt_max(a0 ? a0->var : 0, dt_max(a1 ? a1->var : 0, a2 ? a2->var : 0));
    return n;
}

static dt_node *guard(dt_gen *g, dt_guard kind, kf_type t, dt_node *e, int64_t n)
{
    dt_node *x = dt_new(g, DT_E_GUARD, t);
    x->op = (uint8_t)kind;
    x->a[0] = e;
    x->n = n;
    x->var = e->var;
    x->flags = DT_F_KEEP;
    return x;
}

static bool is_int(kf_type t) { return kf_scalar_class[t.scalar] == 'i' || kf_scalar_class[t.scalar] == 'u'; }
static bool is_float(kf_type t) { return kf_scalar_class[t.scalar] == 'f'; }
static bool scalar(kf_type t) { return t.kind == KF_TK_SCALAR; }
static bool same(kf_type a, kf_type b) { return a.scalar == b.scalar && a.lanes == b.lanes; }

/* ---- literals ------------------------------------------------------------------- */
dt_node *dt_lit(dt_gen *g, kf_type t, bool untyped)
{
    uint64_t bits;
    if (t.kind == KF_TK_VECTOR && !untyped) {
        dt_node *c = dt_new(g, DT_E_CTOR, t), **at = &c->a[0];
        unsigned n = dt_chance(g->r, 50) ? 1 : t.lanes;
        for (unsigned i = 0; i < n; i++, at = &(*at)->next) *at = dt_lit(g, kf_type_scalar((kf_scalar)t.scalar), true);
        return c;
    }
    dt_node *n = dt_new(g, DT_E_LIT, t);
    n->text = dt_literal(g->r, &g->p->arena, (kf_scalar)t.scalar, &bits);
    if (untyped || t.scalar == KF_S_BOOL) n->flags |= DT_F_UNTYPED;
    return n;
}

/* A literal of integer type t that is not zero (a constant divisor). */
static dt_node *nonzero_lit(dt_gen *g, kf_type t)
{
    for (;;) {
        dt_node *n = dt_lit(g, t, true);
        if (strcmp(n->text, "0") != 0) return n;
    }
}

/* ---- leaves ----------------------------------------------------------------------- */
typedef struct {
    dt_node *(*make)(dt_gen *g, kf_type t, uint8_t mv, int d, int i);
    int i;
    unsigned w;
} choice;

enum { MAXC = 24 };

static void add(choice *cs, unsigned *n, dt_node *(*make)(dt_gen *, kf_type, uint8_t, int, int), int i, unsigned w)
{
    if (*n < MAXC && w) cs[(*n)++] = (choice){make, i, w};
}

static int pick(dt_gen *g, const choice *cs, unsigned n)
{
    unsigned total = 0;
    for (unsigned i = 0; i < n; i++) total += cs[i].w;
    unsigned x = dt_below(g->r, total);
    for (unsigned i = 0; i < n; i++) {
        if (x < cs[i].w) return (int)i;
        x -= cs[i].w;
    }
    return 0;
}

/* A reference to symbol s (constants are module-level names). */
static dt_node *sym_ref(dt_gen *g, const dt_sym *s, kf_type t)
{
    dt_node *n = name_node(g, s->name, t, s->var);
    if (s->kind == DT_K_CONST) n->flags |= DT_F_MODULE;
    return n;
}

static dt_node *mk_sym(dt_gen *g, kf_type t, uint8_t mv, int d, int i) { (void)mv; (void)d; return sym_ref(g, &g->syms[i], t); }

static uint8_t shared_var(uint8_t idx) { return dt_max(idx, DT_V_BLOCK); }

static dt_node *index_node(dt_gen *g, const char *base, kf_type t, dt_node *idx, uint8_t var)
{
    dt_node *n = dt_new(g, DT_E_INDEX, t);
    n->text = base;
    n->a[0] = idx;
    n->var = var;
    return n;
}

/* Elements of an input buffer or view symbol, or of an array (of a shared
 * array: those the exchanges so far have written). */
static uint32_t sym_count(const dt_sym *s)
{
    if (s->kind == DT_K_SHARED) return s->wbytes / kf_type_elem_bytes(s->type);
    return s->kind == DT_K_INBUF ? s->buf->count : s->len;
}

/* (s as shared T[])[i]: a shared array's written bytes seen as elements of
 * type t (LANGUAGE.md section 8 views). */
static dt_node *mk_shared_view(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    dt_sym *s = &g->syms[i];
    dt_node *idx = dt_index(g, s->wbytes / kf_type_elem_bytes(t), dt_max(mv, DT_V_UNI), d - 1);
    const char *base = kf_arena_printf(&g->p->arena, "(%s as shared %s[])", s->name, dt_type_name(t));
    dt_node *n = dt_new(g, DT_E_INDEX, t);
    n->text = base;
    n->a[0] = idx;
    n->var = shared_var(idx->var);
    return n;
}

/* buf[i], view[i], arr[i], shared[i] of symbol i. */
static dt_node *mk_load(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    dt_sym *s = &g->syms[i];
    uint32_t len = sym_count(s);
    dt_node *idx = dt_index(g, len, s->kind == DT_K_SHARED ? dt_max(mv, DT_V_UNI) : mv, d - 1);
    uint8_t var = s->kind == DT_K_ARRAY ? DT_V_THREAD : s->kind == DT_K_SHARED ? shared_var(idx->var) : idx->var;
    return index_node(g, s->name, t, idx, var);
}

dt_node *dt_input_load(dt_gen *g, int d)
{
    int ins[DT_MAX_SYMS], n = 0;
    for (uint32_t i = 0; i < g->nsyms; i++)
        if (g->syms[i].kind == DT_K_INBUF) ins[n++] = (int)i;
    if (!n) return NULL;
    int i = ins[dt_below(g->r, (uint32_t)n)];
    return mk_load(g, g->syms[i].type, DT_V_THREAD, d, i);
}

/* (buf as &[T])[i]: the same bytes as another element type. */
static dt_node *mk_view(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    dt_sym *s = &g->syms[i];
    uint32_t len = (uint32_t)((uint64_t)sym_count(s) * kf_type_elem_bytes(s->type) / kf_type_elem_bytes(t));
    dt_node *idx = dt_index(g, len, mv, d - 1);
    const char *base = kf_arena_printf(&g->p->arena, "(%s as &[%s])", s->name, dt_type_name(t));
    return index_node(g, base, t, idx, idx->var);
}

dt_node *dt_slot(dt_gen *g, const dt_param *out, uint32_t slot)
{
    dt_sym *s = dt_find_param(g, out);
    dt_node *n = dt_new(g, DT_E_SLOT, kf_type_scalar(KF_S_U32));
    n->text = g->fn ? g->fn->base : kf_arena_printf(&g->p->arena, "dt_%s", out->name);
    n->n = slot;
    n->var = DT_V_THREAD;
    n->flags = DT_F_KEEP | DT_F_FIXED;
    (void)s;
    return n;
}

/* A thread's own output slot, read back. */
static dt_node *mk_own(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)mv; (void)d;
    dt_sym *s = &g->syms[i];
    return index_node(g, s->name, t, dt_slot(g, s->buf, dt_below(g->r, s->buf->slots)), DT_V_THREAD);
}

static dt_node *mk_member(dt_gen *g, kf_type t, uint8_t mv, int d, int i);

static dt_node *mk_lit(dt_gen *g, kf_type t, uint8_t mv, int d, int i) { (void)mv; (void)d; return dt_lit(g, t, i != 0); }

/* Thread geometry (u32). */
static dt_node *mk_sreg(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)d; (void)i;
    static const struct { const char *name; uint8_t var; } regs[] = {
        {"thread_id.x", DT_V_THREAD}, {"thread_id.y", DT_V_THREAD}, {"thread_id.z", DT_V_THREAD},
        {"global_id.x", DT_V_THREAD}, {"global_id.y", DT_V_THREAD}, {"lane_id", DT_V_THREAD},
        {"warp_id", DT_V_WARP}, {"block_id.x", DT_V_BLOCK}, {"block_id.y", DT_V_BLOCK}, {"block_id.z", DT_V_BLOCK},
        {"block_dim.x", DT_V_UNI}, {"block_dim.y", DT_V_UNI}, {"grid_dim.x", DT_V_UNI}, {"grid_dim.z", DT_V_UNI},
        {"WARP_SIZE", DT_V_UNI},
    };
    for (;;) {
        unsigned k = dt_below(g->r, sizeof regs / sizeof regs[0]);
        if (regs[k].var <= mv) return name_node(g, regs[k].name, t, regs[k].var);
    }
}

/* An untyped @unroll variable (an untyped constant 0 .. len-1). */
static dt_node *mk_unroll(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)mv; (void)d;
    dt_node *n = name_node(g, g->syms[i].name, t, DT_V_UNI);
    n->flags |= DT_F_UNTYPED;
    return n;
}

static dt_node *leaf(dt_gen *g, kf_type t, uint8_t mv, int d, bool untyped)
{
    choice cs[MAXC];
    unsigned n = 0;
    add(cs, &n, mk_lit, untyped, 4);
    if (t.kind == KF_TK_SCALAR && t.scalar == KF_S_U32) add(cs, &n, mk_sreg, 0, 3);
    for (uint32_t i = 0; i < g->nsyms && n < MAXC - 4; i++) {
        dt_sym *s = &g->syms[i];
        bool match = same(s->type, t);
        switch (s->kind) {
        case DT_K_LOOP:
            if (s->type.scalar == KF_S_UINT) {
                if (untyped && (is_int(t) || is_float(t))) add(cs, &n, mk_unroll, (int)i, 2);
                break;
            }
            /* fall through */
        case DT_K_LET: case DT_K_VAR: case DT_K_PARAM: case DT_K_CONST:
            if (match && s->var <= mv) add(cs, &n, mk_sym, (int)i, 8);
            else if (scalar(t) && s->type.kind == KF_TK_VECTOR && s->type.scalar == t.scalar && s->var <= mv)
                add(cs, &n, mk_member, (int)i, 2);
            break;
        case DT_K_INBUF: case DT_K_VIEW:
            if (match) add(cs, &n, mk_load, (int)i, 4);
            else if (t.scalar != KF_S_BOOL &&
                     (uint64_t)sym_count(s) * kf_type_elem_bytes(s->type) >= 4 * (uint64_t)kf_type_elem_bytes(t))
                add(cs, &n, mk_view, (int)i, 1);
            break;
        case DT_K_OUTBUF:
            if (match && mv >= DT_V_THREAD && s->buf->role == DT_R_OUT) add(cs, &n, mk_own, (int)i, 1);
            break;
        case DT_K_ARRAY:
            if (match && mv >= DT_V_THREAD) add(cs, &n, mk_load, (int)i, 3);
            break;
        case DT_K_SHARED:
            if (!s->readable || g->in_exchange || mv < DT_V_BLOCK) break;
            if (match && sym_count(s)) add(cs, &n, mk_load, (int)i, 3);
            else if (t.scalar != KF_S_BOOL && s->wbytes >= kf_type_elem_bytes(t)) add(cs, &n, mk_shared_view, (int)i, 2);
            break;
        default: break;
        }
    }
    int k = pick(g, cs, n);
    return cs[k].make(g, t, mv, d, cs[k].i);
}

static dt_node *cast_operand(dt_gen *g, kf_type from, kf_type to, uint8_t mv, int d);

/* ---- indices ------------------------------------------------------------------------ */
dt_node *dt_index(dt_gen *g, uint32_t len, uint8_t mv, int d)
{
    for (uint32_t i = g->nsyms; i-- > 0 && dt_chance(g->r, 30);) {   /* a loop variable known in range */
        dt_sym *s = &g->syms[i];
        if (s->kind == DT_K_LOOP && s->len && s->lo >= 0 && s->len <= len && s->var <= mv)
            return s->type.scalar == KF_S_UINT ? mk_unroll(g, kf_type_scalar(KF_S_U32), mv, d, (int)i)
                                               : name_node(g, s->name, s->type, s->var);
    }
    kf_type it = dt_pick_scalar(g->r, false);
    while (!is_int(it)) it = dt_pick_scalar(g->r, false);
    bool pow2 = (len & (len - 1)) == 0;
    if (pow2 && (uint64_t)(len - 1) <= dt_int_max((kf_scalar)it.scalar) && dt_chance(g->r, 60))
        return guard(g, DT_G_MASK, it, dt_expr(g, it, mv, d, false), len - 1);
    return guard(g, DT_G_MOD, kf_type_scalar(KF_S_U32), cast_operand(g, it, kf_type_scalar(KF_S_U32), mv, d), len);
}

/* ---- operators ------------------------------------------------------------------------- */
static dt_node *bin(dt_gen *g, dt_binop op, kf_type t, dt_node *a, dt_node *b)
{
    dt_node *n = dt_new(g, DT_E_BIN, t);
    n->op = (uint8_t)op;
    n->a[0] = a;
    n->a[1] = b;
    n->var = dt_max(a->var, b->var);
    return n;
}

/* Two operands of type t, at most one of them an untyped literal. */
static dt_node *arith(dt_gen *g, kf_type t, uint8_t mv, int d, int op)
{
    dt_node *a = dt_expr(g, t, mv, d - 1, true);
    dt_node *b = dt_expr(g, t, mv, d - 1, !(a->flags & DT_F_UNTYPED));
    return bin(g, (dt_binop)op, t, a, b);
}

/* A divisor of integer scalar type t that cannot be zero. */
static dt_node *divisor(dt_gen *g, kf_type t, uint8_t mv, int d)
{
    unsigned k = dt_below(g->r, 10);
    if (k < 3) return nonzero_lit(g, t);
    dt_node *e = dt_expr(g, t, mv, d, false);
    if (k < 6) return guard(g, DT_G_NZ_OR1, t, e, 0);
    return guard(g, DT_G_NZ_FN, t, e, 0);
}

/* a / b, a % b: integer divisors made nonzero (per lane for vectors);
 * INT_MIN / -1 is defined (INT_MIN) and may happen. */
static dt_node *mk_div(dt_gen *g, kf_type t, uint8_t mv, int d, int op)
{
    if (is_float(t)) return arith(g, t, mv, d, op);
    dt_node *a = dt_expr(g, t, mv, d - 1, false), *b;
    if (scalar(t)) {
        b = divisor(g, t, mv, d - 1);
    } else if (dt_chance(g->r, 40)) {
        b = nonzero_lit(g, kf_type_scalar((kf_scalar)t.scalar));   /* splat */
    } else {
        b = dt_new(g, DT_E_CTOR, t);
        dt_node **at = &b->a[0];
        for (unsigned i = 0; i < t.lanes; i++, at = &(*at)->next) {
            *at = divisor(g, kf_type_scalar((kf_scalar)t.scalar), mv, d - 2);
            b->var = dt_max(b->var, (*at)->var);
        }
    }
    return bin(g, (dt_binop)op, t, a, b);
}

/* Shifts: any amount, also past the width or "negative" (huge unsigned). */
static dt_node *mk_shift(dt_gen *g, kf_type t, uint8_t mv, int d, int op)
{
    dt_node *a = dt_expr(g, t, mv, d - 1, false), *b;
    if (dt_chance(g->r, 50)) {
        b = dt_new(g, DT_E_LIT, t);
        unsigned bits = kf_type_bits(t);
        int64_t amt = dt_range(g->r, 0, 2 * (int64_t)bits);
        if ((uint64_t)amt > dt_int_max((kf_scalar)t.scalar)) amt = (int64_t)bits;
        b->text = kf_arena_printf(&g->p->arena, "%lld", (long long)amt);
        b->flags = DT_F_UNTYPED;
    } else {
        b = dt_expr(g, t, mv, d - 1, false);
    }
    return bin(g, (dt_binop)op, t, a, b);
}

static dt_node *mk_unary(dt_gen *g, kf_type t, uint8_t mv, int d, int op)
{
    dt_node *n = dt_new(g, DT_E_UN, t);
    n->op = (uint8_t)op;
    n->a[0] = dt_expr(g, t, mv, d - 1, false);
    n->var = n->a[0]->var;
    return n;
}

/* e as t from another numeric type (bool too, to a scalar). */
/* A float value that cannot be NaN (made so only when it could be). */
static dt_node *not_nan(dt_gen *g, kf_type t, dt_node *e)
{
    if (!is_float(t)) return e;
    return guard(g, DT_G_NAN, t, e, 0);
}

/* ---- steering around known bugs (--avoid, difftest.h) ------------------------------- */
static bool avoiding(const dt_gen *g, unsigned bit) { return (g->avoid & bit) != 0; }

/* An 8/16-bit integer converted to a wider type. */
static bool widens_narrow(kf_type from, kf_type to)
{
    return is_int(from) && kf_scalar_bytes[from.scalar] <= 2 &&
           (is_float(to) || kf_scalar_bytes[to.scalar] > kf_scalar_bytes[from.scalar]);
}

/* Whether `e as to` from `from` may be generated. */
static bool cast_ok(const dt_gen *g, kf_type from, kf_type to)
{
    bool halves = (from.scalar == KF_S_F16 && to.scalar == KF_S_BF16) || (from.scalar == KF_S_BF16 && to.scalar == KF_S_F16);
    if (halves && avoiding(g, KF_DT_AVOID_HALF_BF16)) return false;
    bool wide_half = (from.scalar == KF_S_F16 || from.scalar == KF_S_BF16) && from.lanes > 4;
    return !(wide_half && is_int(to) && avoiding(g, KF_DT_AVOID_NAN_TO_INT));   /* no guard fits 8 lanes */
}

/* The operand of a conversion from `from` to `to`: with narrow-widen
 * avoided, a narrow integer is a leaf (no arithmetic to wrap); with
 * nan-to-int avoided, a float becoming an integer cannot be NaN. */
static dt_node *cast_operand(dt_gen *g, kf_type from, kf_type to, uint8_t mv, int d)
{
    bool narrow = widens_narrow(from, to) && avoiding(g, KF_DT_AVOID_NARROW_WIDEN);
    dt_node *e = narrow ? leaf(g, from, mv, d, false) : dt_expr(g, from, mv, d, false);
    if (is_float(from) && is_int(to) && avoiding(g, KF_DT_AVOID_NAN_TO_INT)) e = not_nan(g, from, e);
    return e;
}

/* Whether n is a compile-time constant (literals, constants, @unroll
 * variables, and pure operations over them). */
static bool is_constant(const dt_node *n)
{
    switch ((dt_kind)n->kind) {
    case DT_E_LIT: return true;
    case DT_E_NAME: return (n->flags & (DT_F_MODULE | DT_F_UNTYPED)) != 0;
    case DT_E_CALL:
        if (n->flags & DT_F_MODULE || strncmp(n->text, "atomic", 6) == 0 || strncmp(n->text, "warp", 4) == 0 ||
            strncmp(n->text, "shfl", 4) == 0)
            return false;
        /* fall through */
    case DT_E_CTOR:
        for (const dt_node *a = n->a[0]; a; a = a->next)
            if (!is_constant(a)) return false;
        return strcmp(n->text ? n->text : "", "ballot") && strcmp(n->text ? n->text : "", "any") &&
               strcmp(n->text ? n->text : "", "all");
    case DT_E_UN: case DT_E_BIN: case DT_E_CAST: case DT_E_BITCAST: case DT_E_MEMBER: case DT_E_GUARD:
        for (int k = 0; k < 3; k++)
            if (n->a[k] && !is_constant(n->a[k])) return false;
        return !n->aux;
    default: return false;
    }
}

dt_node *dt_copy(dt_gen *g, const dt_node *n)
{
    if (!n) return NULL;
    dt_node *c = dt_new(g, (dt_kind)n->kind, n->type);
    uint32_t id = c->id;
    *c = *n;
    c->id = id;
    c->next = NULL;
    for (int k = 0; k < 3; k++) c->a[k] = dt_copy(g, n->a[k]);
    if (n->kind == DT_E_CALL || n->kind == DT_E_CTOR)   /* the other arguments */
        for (const dt_node *src = n->a[0]; src && src->next; src = src->next) {
            dt_node *dst = c->a[0];
            while (dst->next) dst = dst->next;
            dst->next = dt_copy(g, src->next);
        }
    return c;
}

/* select(block_dim.x != 0, e, e): e's value, but not a compile-time constant. */
static dt_node *runtime(dt_gen *g, dt_node *e)
{
    kf_type u = kf_type_scalar(KF_S_U32);
    dt_node *zero = dt_new(g, DT_E_LIT, u);
    zero->text = "0";
    zero->flags = DT_F_UNTYPED;
    dt_node *c = bin(g, DT_OP_NE, kf_type_scalar(KF_S_BOOL), name_node(g, "block_dim.x", u, DT_V_UNI), zero);
    return call(g, "select", e->type, c, e, dt_copy(g, e));
}

static dt_node *mk_cast(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)i;
    kf_type from;
    for (int tries = 0;; tries++) {
        if (tries == 50) return leaf(g, t, mv, d, false);
        from = dt_pick_scalar(g->r, scalar(t));
        if (t.kind == KF_TK_VECTOR) from = kf_type_vector((kf_scalar)from.scalar, t.lanes);
        if (kf_type_elem_bytes(from) <= 16 && !same(from, t) && cast_ok(g, from, t)) break;
    }
    dt_node *n = dt_new(g, DT_E_CAST, t);
    n->a[0] = cast_operand(g, from, t, mv, d - 1);
    n->var = n->a[0]->var;
    return n;
}

/* bitcast(t, e) from a type of the same size; a float source is made
 * non-NaN first: back ends may choose a NaN's payload. */
static dt_node *mk_bitcast(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    if ((t.scalar == KF_S_I8 || t.scalar == KF_S_I16) && avoiding(g, KF_DT_AVOID_BITCAST_SIGN))
        return mk_cast(g, t, mv, d, i);
    uint32_t size = kf_type_elem_bytes(t);
    kf_type from;
    for (int tries = 0;; tries++) {
        from = dt_pick_type(g->r, false);
        if (kf_type_elem_bytes(from) != size) {
            if (tries > 40) from = t;
            else continue;
        }
        bool wide_half = (from.scalar == KF_S_F16 || from.scalar == KF_S_BF16) && from.lanes > 4;
        if (!wide_half) break;
    }
    dt_node *n = dt_new(g, DT_E_BITCAST, t);
    n->a[0] = not_nan(g, from, dt_expr(g, from, mv, d - 1, false));
    if (avoiding(g, KF_DT_AVOID_CONST_BITCAST) && is_constant(n->a[0])) n->a[0] = runtime(g, n->a[0]);
    n->var = n->a[0]->var;
    return n;
}

/* A vector expression's lane: .x .y .z .w, v[k], or v[t] inside @unroll. */
static dt_node *member_of(dt_gen *g, kf_type t, dt_node *v)
{
    dt_node *n = dt_new(g, DT_E_MEMBER, t);
    n->a[0] = v;
    n->n = dt_below(g->r, v->type.lanes);
    n->var = v->var;
    if (v->type.lanes <= 4 && dt_chance(g->r, 60)) n->flags |= DT_F_DOT;
    for (uint32_t i = g->nsyms; i-- > 0;) {
        dt_sym *s = &g->syms[i];
        if (s->kind == DT_K_LOOP && s->type.scalar == KF_S_UINT && s->len <= v->type.lanes && dt_chance(g->r, 50)) {
            n->aux = s->name;
            n->flags &= (uint8_t)~DT_F_DOT;
            break;
        }
    }
    return n;
}

static dt_node *mk_member(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    if (i >= 0) {
        return member_of(g, t, sym_ref(g, &g->syms[i], g->syms[i].type));
    }
    static const uint8_t lanes[] = {2, 4, 8, 16};
    kf_type v;
    do v = kf_type_vector((kf_scalar)t.scalar, lanes[dt_below(g->r, 4)]);
    while (kf_type_elem_bytes(v) > 16);
    return member_of(g, t, dt_expr(g, v, mv, d - 1, false));
}

static dt_node *mk_ctor(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)i;
    dt_node *c = dt_new(g, DT_E_CTOR, t), **at = &c->a[0];
    unsigned n = dt_chance(g->r, 25) ? 1 : t.lanes;
    for (unsigned k = 0; k < n; k++, at = &(*at)->next) {
        *at = dt_expr(g, kf_type_scalar((kf_scalar)t.scalar), mv, d - (t.lanes > 4 ? 2 : 1), true);
        c->var = dt_max(c->var, (*at)->var);
    }
    return c;
}

static dt_node *mk_select(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)i;
    dt_node *c = dt_cond(g, mv, d - 1);
    dt_node *a = dt_expr(g, t, mv, d - 1, true);
    dt_node *b = dt_expr(g, t, mv, d - 1, !(a->flags & DT_F_UNTYPED));
    return call(g, "select", t, c, a, b);
}

/* An untyped literal of (scalar or vector) type t, spelled text. */
static dt_node *lit_text(dt_gen *g, kf_type t, const char *text)
{
    dt_node *n = dt_new(g, DT_E_LIT, t);
    n->text = text;
    n->flags = DT_F_UNTYPED;
    return n;
}

/* min, max, clamp. On floats -0 < +0 on every back end (grammar/README.md
 * section 7); half the time the result gets + 0.0 anyway, so a zero sign
 * bug elsewhere does not hide the rest of a program. One float call in
 * eight has constant bounds at the saturation edges instead, ±0.0 and 1.0
 * (clamp(x, -0.0, 1.0), min(max(x, 0.0), 1.0), max(x, -0.0), ...), the
 * shapes ptxas turns into a saturating add (.sat flushes -0 to +0), with
 * no guard. */
static dt_node *mk_minmax(dt_gen *g, kf_type t, uint8_t mv, int d, int which)
{
    static const char *const fn[] = {"min", "max", "clamp"};
    static const char *const lo[] = {"0.0", "-0.0"}, *const hi[] = {"1.0", "-0.0", "0.0", "6.0"};
    if (is_float(t) && dt_chance(g->r, 12)) {
        dt_node *a = dt_expr(g, t, mv, d - 1, false);
        dt_node *z = lit_text(g, t, lo[dt_below(g->r, 2)]);
        if (which == 2) return call(g, "clamp", t, a, z, lit_text(g, t, hi[dt_below(g->r, 4)]));
        if (dt_chance(g->r, 50)) return call(g, fn[which], t, a, which ? z : lit_text(g, t, hi[dt_below(g->r, 4)]), NULL);
        dt_node *m = call(g, which ? "min" : "max", t, a, which ? lit_text(g, t, hi[dt_below(g->r, 4)]) : z, NULL);
        return call(g, fn[which], t, m, which ? z : lit_text(g, t, hi[dt_below(g->r, 4)]), NULL);
    }
    dt_node *a = dt_expr(g, t, mv, d - 1, false);
    dt_node *b = dt_expr(g, t, mv, d - 1, true);
    dt_node *c = which == 2 ? dt_expr(g, t, mv, d - 1, true) : NULL;
    dt_node *n = call(g, fn[which], t, a, b, c);
    return is_float(t) && dt_chance(g->r, 50) ? guard(g, DT_G_ZERO, t, n, 0) : n;
}

/* ---- section 8 helpers: dot4, bfe, bfi, prmt ------------------------------------------ */
/* dot4(a, b, c) -> i32 with a and b i8x4 or u8x4 in any of the four mixes. */
static dt_node *mk_dot4(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)i;
    kf_type q[2] = {kf_type_vector(KF_S_I8, 4), kf_type_vector(KF_S_U8, 4)};
    dt_node *a = dt_expr(g, q[dt_below(g->r, 2)], mv, d - 1, false);
    dt_node *b = dt_expr(g, q[dt_below(g->r, 2)], mv, d - 1, false);
    return call(g, "dot4", t, a, b, dt_expr(g, t, mv, d - 1, false));
}

/* A bfe/bfi position or length: 0 .. 255 (defined up to 255; past the
 * width on purpose), a literal at the edges or (e & 255). */
static dt_node *bit_amount(dt_gen *g, uint8_t mv, int d)
{
    static const int edges[] = {0, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 128, 255};
    kf_type u = kf_type_scalar(KF_S_U32);
    if (dt_chance(g->r, 50)) {
        dt_node *n = dt_new(g, DT_E_LIT, u);
        int v = dt_chance(g->r, 70) ? edges[dt_below(g->r, sizeof edges / sizeof edges[0])] : (int)dt_below(g->r, 256);
        n->text = kf_arena_printf(&g->p->arena, "%d", v);
        n->flags = DT_F_UNTYPED;
        return n;
    }
    return guard(g, DT_G_MASK, u, dt_expr(g, u, mv, d, false), 255);
}

/* bfe(x, pos, len) (which 0) or bfi(f, x, pos, len) (1) on u32 i32 u64 i64. */
static dt_node *mk_bitfield(dt_gen *g, kf_type t, uint8_t mv, int d, int which)
{
    dt_node *x = dt_expr(g, t, mv, d - 1, false);
    dt_node *pos = bit_amount(g, mv, d - 1), *len = bit_amount(g, mv, d - 1);
    if (which == 0) return call(g, "bfe", t, x, pos, len);
    dt_node *n = call(g, "bfi", t, dt_expr(g, t, mv, d - 1, false), x, pos);
    pos->next = len;
    n->var = dt_max(n->var, len->var);
    return n;
}

/* prmt(a, b, sel): any selector, its upper half included (PTX reads the low 16 bits). */
static dt_node *mk_prmt(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)i;
    return call(g, "prmt", t, dt_expr(g, t, mv, d - 1, false), dt_expr(g, t, mv, d - 1, false),
                dt_expr(g, t, mv, d - 1, false));
}

/* abs, sqrt, floor, ceil, trunc, round (exact on every back end). */
static dt_node *mk_unary_math(dt_gen *g, kf_type t, uint8_t mv, int d, int which)
{
    static const char *const fn[] = {"abs", "sqrt", "floor", "ceil", "trunc", "round"};
    return call(g, fn[which], t, dt_expr(g, t, mv, d - 1, false), NULL, NULL);
}

static dt_node *mk_fma(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)i;
    dt_node *a = dt_expr(g, t, mv, d - 1, false);
    return call(g, "fma", t, a, dt_expr(g, t, mv, d - 1, true), dt_expr(g, t, mv, d - 1, true));
}

/* clz, popc (u32 from a 32/64-bit integer), mul_hi, cdiv. */
static dt_node *mk_intfn(dt_gen *g, kf_type t, uint8_t mv, int d, int which)
{
    if (which < 2) {
        kf_type a = kf_type_scalar(dt_chance(g->r, 50) ? KF_S_I32 : dt_chance(g->r, 50) ? KF_S_U64 : KF_S_I64);
        if (dt_chance(g->r, 30)) a = kf_type_scalar(KF_S_U32);
        return call(g, which ? "popc" : "clz", t, dt_expr(g, a, mv, d - 1, false), NULL, NULL);
    }
    dt_node *a = dt_expr(g, t, mv, d - 1, false);
    if (which == 2) return call(g, "mul_hi", t, a, dt_expr(g, t, mv, d - 1, true), NULL);
    return call(g, "cdiv", t, a, divisor(g, t, mv, d - 1), NULL);
}

/* ---- warp operations (only where every lane of the warp takes part) --------------- */
static bool warp_ok(const dt_gen *g) { return (g->collective & DT_C_WARP) && dt_eff(g) <= DT_V_WARP; }

static dt_node *u32_expr(dt_gen *g, uint8_t mv, int d)
{
    if (dt_chance(g->r, 50)) {   /* small lane numbers and offsets, some past the warp */
        dt_node *n = dt_new(g, DT_E_LIT, kf_type_scalar(KF_S_U32));
        n->text = kf_arena_printf(&g->p->arena, "%d", (int)dt_range(g->r, 0, 40));
        n->flags = DT_F_UNTYPED;
        return n;
    }
    return dt_expr(g, kf_type_scalar(KF_S_U32), mv, d, false);
}

static dt_node *mk_shfl(dt_gen *g, kf_type t, uint8_t mv, int d, int which)
{
    (void)mv;
    static const char *const fn[] = {"shfl", "shfl_xor", "shfl_up", "shfl_down"};
    dt_node *n = call(g, fn[which], t, dt_expr(g, t, DT_V_THREAD, d - 1, false), u32_expr(g, DT_V_THREAD, d - 1), NULL);
    n->var = DT_V_THREAD;
    return n;
}

/* warp_sum/max/min: the same in every lane. Float sums only of small
 * integers (exact in any order: the back ends sum in their own order);
 * float max/min of values whose zeros are +0. */
static dt_node *mk_reduce(dt_gen *g, kf_type t, uint8_t mv, int d, int which)
{
    (void)mv;
    static const char *const fn[] = {"warp_sum", "warp_max", "warp_min"};
    dt_node *v;
    if (!is_float(t)) v = dt_expr(g, t, DT_V_THREAD, d - 1, false);
    else if (which == 0) v = dt_exact_float(g, t, DT_V_THREAD, d - 1);
    else v = dt_expr(g, t, DT_V_THREAD, d - 1, false);   /* -0 < +0 in the reductions too */
    dt_node *n = call(g, fn[which], t, v, NULL, NULL);
    n->var = DT_V_WARP;
    return n;
}

static dt_node *mk_vote(dt_gen *g, kf_type t, uint8_t mv, int d, int which)
{
    (void)mv;
    static const char *const fn[] = {"ballot", "any", "all"};
    dt_node *n = call(g, fn[which], t, dt_cond(g, DT_V_THREAD, d - 1), NULL, NULL);
    n->var = DT_V_WARP;
    return n;
}

/* ---- tensor cores (LANGUAGE.md section 8): warp operations of full warps ------------- */
static bool full_warps(const dt_gen *g) { return g->p->block[0] * g->p->block[1] * g->p->block[2] % 32 == 0; }

/* A u32 literal no shrinking edit touches (a scale that keeps an address aligned). */
static dt_node *fixed_u32(dt_gen *g, uint32_t v)
{
    dt_node *n = dt_new(g, DT_E_LIT, kf_type_scalar(KF_S_U32));
    n->text = kf_arena_printf(&g->p->arena, "%u", v);
    n->flags = DT_F_UNTYPED | DT_F_FIXED;
    return n;
}

/* i * k, never edited: an element index that stays a multiple of k. */
dt_node *dt_scaled(dt_gen *g, dt_node *i, uint32_t k)
{
    dt_node *m = bin(g, DT_OP_MUL, kf_type_scalar(KF_S_U32), i, fixed_u32(g, k));
    m->flags |= DT_F_KEEP | DT_F_FIXED;
    return m;
}

dt_node *dt_u32_index(dt_gen *g, uint32_t len, uint8_t mv, int d)
{
    kf_type u = kf_type_scalar(KF_S_U32);
    return guard(g, DT_G_MOD, u, dt_expr(g, u, mv, d, false), len);
}

/* A readable shared array holding a whole 16-byte row, at random (-1: none). */
static int row_source(dt_gen *g)
{
    int pick = -1;
    for (uint32_t i = 0, seen = 0; i < g->nsyms; i++)
        if (g->syms[i].kind == DT_K_SHARED && g->syms[i].readable && g->syms[i].wbytes >= 16 && !dt_below(g->r, ++seen))
            pick = (int)i;
    return pick;
}

/* mma(a, b, c), the shape from the types. f16/bf16: a, b and c small
 * integers (products and sums exact in f32 in any order: the tensor core
 * sums in its own); i8/u8 (either signedness for a and b): any values,
 * wrapping sums, exact. */
static dt_node *mk_mma(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)mv;
    dt_node *a, *b, *c;
    if (t.scalar == KF_S_F32) {
        kf_scalar h = i ? KF_S_BF16 : KF_S_F16;
        a = dt_exact_float(g, kf_type_vector(h, 8), DT_V_THREAD, d - 1);
        b = dt_exact_float(g, kf_type_vector(h, 4), DT_V_THREAD, d - 1);
        c = dt_exact_float(g, t, DT_V_THREAD, d - 1);
    } else {
        a = dt_expr(g, kf_type_vector(i & 1 ? KF_S_U8 : KF_S_I8, 16), DT_V_THREAD, d - 1, false);
        b = dt_expr(g, kf_type_vector(i & 2 ? KF_S_U8 : KF_S_I8, 8), DT_V_THREAD, d - 1, false);
        c = dt_expr(g, t, DT_V_THREAD, d - 1, false);
    }
    dt_node *n = call(g, "mma", t, a, b, c);
    n->var = DT_V_THREAD;
    return n;
}

/* ldmatrix_xN[_trans](s, 8 * row): N = lanes / 2 matrices from the written
 * 16-byte rows of shared array i, seen as t's 16-bit element type. Every
 * lane's index is a whole row in range (lanes past 8N give one too). */
static dt_node *mk_ldmatrix(dt_gen *g, kf_type t, uint8_t mv, int d, int i)
{
    (void)mv;
    dt_sym *s = &g->syms[i];
    kf_type e = kf_type_scalar((kf_scalar)t.scalar);
    dt_node *arr = name_node(g, same(s->type, e) ? s->name
                                                 : kf_arena_printf(&g->p->arena, "(%s as shared %s[])", s->name, dt_type_name(e)),
                             e, DT_V_BLOCK);
    arr->flags |= DT_F_FIXED;
    const char *fn = kf_arena_printf(&g->p->arena, "ldmatrix_x%u%s", t.lanes / 2, dt_chance(g->r, 50) ? "_trans" : "");
    dt_node *n = call(g, fn, t, arr, dt_scaled(g, dt_u32_index(g, s->wbytes / 16, DT_V_THREAD, d - 1), 8), NULL);
    n->var = DT_V_THREAD;
    return n;
}

dt_node *dt_tensor(dt_gen *g, int d)
{
    if (!warp_ok(g) || !full_warps(g)) return NULL;
    int sh = row_source(g);
    if (sh >= 0 && dt_chance(g->r, 50)) {
        static const kf_scalar es[] = {KF_S_F16, KF_S_BF16, KF_S_U16, KF_S_I16};
        kf_type t = kf_type_vector(es[dt_below(g->r, 4)], 2u << dt_below(g->r, 3));
        return mk_ldmatrix(g, t, DT_V_THREAD, d, sh);
    }
    bool fl = dt_chance(g->r, 50);
    return mk_mma(g, kf_type_vector(fl ? KF_S_F32 : KF_S_I32, 4), DT_V_THREAD, d, (int)dt_below(g->r, fl ? 2 : 4));
}

dt_node *dt_exact_float(dt_gen *g, kf_type t, uint8_t mv, int d)
{
    static const kf_scalar src[] = {KF_S_I8, KF_S_U8, KF_S_I16};
    kf_type from = kf_type_vector(src[dt_below(g->r, t.lanes > 8 ? 2 : 3)], t.lanes);
    if (t.scalar == KF_S_F16 || t.scalar == KF_S_BF16) from = kf_type_vector(KF_S_I8, t.lanes);
    dt_node *n = dt_new(g, DT_E_CAST, t);
    n->a[0] = cast_operand(g, from, t, mv, d);
    n->var = n->a[0]->var;
    return n;
}

/* ---- atomics on the thread's own slots of the atomic buffer (deterministic) --------- */
/* The atomic buffer, when it is visible here (not inside fns). */
const dt_param *dt_atomic_buf(dt_gen *g)
{
    if (g->prewait) return NULL;
    for (uint32_t i = 0; i < g->p->nparams; i++)
        if (g->p->params[i].role == DT_R_ATOMIC) return dt_find_param(g, &g->p->params[i]) ? &g->p->params[i] : NULL;
    return NULL;
}

/* A value for an atomic on elements of type t: exact for floats (no -0,
 * NaN, subnormal or rounding that depends on the order). */
dt_node *dt_atomic_value(dt_gen *g, kf_type t, uint8_t mv, int d)
{
    if (t.kind == KF_TK_VECTOR) {   /* f16x2: 0 or 1 per lane, so every partial sum is exact */
        dt_node *c = dt_new(g, DT_E_CTOR, t), **at = &c->a[0];
        for (int k = 0; k < 2; k++, at = &(*at)->next) {
            dt_node *bit = dt_new(g, DT_E_LIT, kf_type_scalar(KF_S_U8));
            bit->text = "1";
            bit->flags = DT_F_UNTYPED;
            dt_node *e = bin(g, DT_OP_AND, kf_type_scalar(KF_S_U8), dt_expr(g, kf_type_scalar(KF_S_U8), mv, d, false), bit);
            *at = dt_new(g, DT_E_CAST, kf_type_scalar(KF_S_F16));
            (*at)->a[0] = e;
            (*at)->var = e->var;
            c->var = dt_max(c->var, e->var);
        }
        return c;
    }
    return is_float(t) ? dt_exact_float(g, t, mv, d) : dt_expr(g, t, mv, d, true);
}

static dt_node *mk_atomic_own(dt_gen *g, kf_type t, uint8_t mv, int d, int which)
{
    static const char *const fn[] = {"atomic_add", "atomic_min", "atomic_max", "atomic_exch", "atomic_cas"};
    const dt_param *ab = dt_atomic_buf(g);
    dt_node *buf = name_node(g, dt_find_param(g, ab)->name, ab->type, DT_V_UNI);
    dt_node *slot = dt_slot(g, ab, dt_below(g->r, ab->slots));
    dt_node *v = dt_atomic_value(g, t, mv, d - 1);
    dt_node *n = call(g, fn[which], t, buf, slot, v);
    if (which == 4) v->next = dt_atomic_value(g, t, mv, d - 1);   /* cas(buf, i, expected, new) */
    n->var = DT_V_THREAD;
    return n;
}

/* ---- fn calls ----------------------------------------------------------------------- */

static dt_node *mk_fncall(dt_gen *g, kf_type t, uint8_t mv, int d, int i) { (void)t; (void)mv; (void)d; return dt_fn_call(g, &g->p->fns[i]); }

bool dt_fn_callable(dt_gen *g, const dt_fn *f)
{
    if (g->prewait) return false;   /* a fn may store */
    if (g->fn && f >= g->fn) return false;   /* only fns defined before: no recursion */
    for (uint32_t i = 0; i < f->nparams; i++)   /* a shared argument is read: not while an exchange writes */
        if (f->params[i].shared_len && g->in_exchange) return false;
    if (!dt_fn_shared_args(g, f)) return false;
    for (uint32_t i = 0; i < f->nparams; i++)
        if (f->params[i].buf && !dt_find_param(g, f->params[i].buf)) return false;
    if (f->out && g->fn && g->fn->out != f->out) return false;
    if ((f->collective & ~g->collective) != 0) return false;
    if (f->collective & DT_C_BARRIER) return dt_eff(g) <= DT_V_BLOCK;
    return !f->collective || dt_eff(g) <= DT_V_WARP;
}

/* ---- the dispatcher ----------------------------------------------------------------------- */
static void producers(dt_gen *g, kf_type t, uint8_t mv, choice *cs, unsigned *n)
{
    bool in = is_int(t), fl = is_float(t), sc = scalar(t);
    if (in || fl) {
        for (int op = DT_OP_ADD; op <= DT_OP_MUL; op++) add(cs, n, arith, op, 4);
        add(cs, n, mk_div, DT_OP_DIV, 3);
        add(cs, n, mk_unary, '-', 2);
        add(cs, n, mk_cast, 0, 5);
        add(cs, n, mk_bitcast, 0, 3);
        add(cs, n, mk_select, 0, 2);
    }
    if (in && sc) {
        add(cs, n, mk_div, DT_OP_REM, 2);
        for (int op = DT_OP_AND; op <= DT_OP_XOR; op++) add(cs, n, arith, op, 2);
        add(cs, n, mk_shift, DT_OP_SHL, 2);
        add(cs, n, mk_shift, DT_OP_SHR, 2);
        add(cs, n, mk_unary, '~', 1);
        add(cs, n, mk_minmax, dt_below(g->r, 3), 2);
        add(cs, n, mk_unary_math, 0, 1);
        add(cs, n, mk_intfn, 3, 1);
        if (kf_scalar_bytes[t.scalar] >= 4) add(cs, n, mk_intfn, 2, 1);
        if (t.scalar == KF_S_U32) add(cs, n, mk_intfn, (int)dt_below(g->r, 2), 1);
    }
    bool packed = fl && !sc && (t.scalar == KF_S_F16 || t.scalar == KF_S_BF16);   /* packed half math */
    if (fl && (sc || dt_is_f3264(t) || packed)) add(cs, n, mk_minmax, dt_below(g->r, 3), 2);
    if (fl && dt_is_f3264(t)) {
        add(cs, n, mk_unary_math, (int)dt_below(g->r, 6), 3);
        add(cs, n, mk_fma, 0, 2);
    }
    if (packed) {
        add(cs, n, mk_unary_math, 0, 1);   /* abs */
        add(cs, n, mk_fma, 0, 2);
    }
    if (sc && t.scalar == KF_S_I32) add(cs, n, mk_dot4, 0, 1);
    if (sc && (t.scalar == KF_S_U32 || t.scalar == KF_S_I32 || t.scalar == KF_S_U64 || t.scalar == KF_S_I64))
        add(cs, n, mk_bitfield, (int)dt_below(g->r, 2), 1);
    if (sc && t.scalar == KF_S_U32) add(cs, n, mk_prmt, 0, 1);
    if (sc && t.scalar != KF_S_BOOL) add(cs, n, mk_member, -1, 1);
    if (!sc) add(cs, n, mk_ctor, 0, 3);
    if (warp_ok(g) && dt_is_warp_type(t)) {
        if (mv >= DT_V_THREAD) add(cs, n, mk_shfl, (int)dt_below(g->r, 4), 2);
        if (mv >= DT_V_WARP) add(cs, n, mk_reduce, (int)dt_below(g->r, 3), 2);
    }
    if (warp_ok(g) && mv >= DT_V_WARP && sc && t.scalar == KF_S_U32) add(cs, n, mk_vote, 0, 1);
    if (warp_ok(g) && full_warps(g) && mv >= DT_V_THREAD && t.kind == KF_TK_VECTOR) {
        if (t.lanes == 4 && (t.scalar == KF_S_F32 || t.scalar == KF_S_I32))
            add(cs, n, mk_mma, (int)dt_below(g->r, t.scalar == KF_S_F32 ? 2 : 4), 2);
        bool half = t.scalar == KF_S_F16 || t.scalar == KF_S_BF16 || t.scalar == KF_S_U16 || t.scalar == KF_S_I16;
        int sh = half ? row_source(g) : -1;
        if (sh >= 0) add(cs, n, mk_ldmatrix, sh, 6);
    }
    const dt_param *ab = dt_atomic_buf(g);
    if (ab && mv >= DT_V_THREAD && same(kf_type_elem(ab->type), t) && ab->slots) {
        bool addonly = t.scalar == KF_S_F64 || t.kind == KF_TK_VECTOR;
        add(cs, n, mk_atomic_own, addonly ? 0 : (int)dt_below(g->r, 5), 2);
    }
    for (uint32_t i = 0; i < g->p->nfns; i++) {
        const dt_fn *f = &g->p->fns[i];
        if (f->ready && same(f->ret, t) && f->ret.kind != KF_TK_VOID && mv >= DT_V_THREAD && dt_fn_callable(g, f))
            add(cs, n, mk_fncall, (int)i, 2);
    }
}

/* Nodes in e, counted up to cap. */
static unsigned nodes_upto(const dt_node *e, unsigned cap)
{
    unsigned n = 0;
    for (int k = 0; e && n < cap; k++) {
        const dt_node *x = dt_operand(e, k);
        if (!x && k >= 3) break;
        if (x) n += nodes_upto(x, cap - n);
    }
    return e ? n + 1 : 0;
}

/* e in a select form of max(min(e, c), z), c 1.0 (or 0.5), z +0.0 or -0.0:
 * ptxas 13 made max(min(x, 1.0), 0.0) a saturate (+0 for a NaN x where min
 * gives 1.0) and the same of selects (ir.h kf_ir_zero_select). Each form
 * reads e twice or four times (copies; 1 or 2 forms only when e is large),
 * and two of them write the min twice, which kforge does not see as one
 * value. All choices from the side stream (dt_gen.side). */
static dt_node *saturate_form(dt_gen *g, kf_type t, dt_node *e)
{
    kf_type b = kf_type_scalar(KF_S_BOOL);
    const char *c = dt_chance(g->side, 25) ? "0.5" : "1.0", *z = dt_chance(g->side, 25) ? "-0.0" : "0.0";
    unsigned k = dt_below(g->side, nodes_upto(e, 13) > 12 ? 2 : 7);
    dt_node *e2 = dt_copy(g, e);
    switch (k) {
    case 0: return call(g, "max", t, call(g, "min", t, e, lit_text(g, t, c), NULL), lit_text(g, t, z), NULL);
    case 1: {   /* select(m > z, m, z), m = min(e, c): one min */
        dt_node *m = call(g, "select", t, bin(g, DT_OP_LT, b, e, lit_text(g, t, c)), e2, lit_text(g, t, c));
        return call(g, "max", t, m, lit_text(g, t, z), NULL);
    }
    default: {
        dt_node *m[2];
        for (int j = 0; j < 2; j++) {
            dt_node *x = j ? dt_copy(g, e) : e, *x2 = j ? dt_copy(g, e2) : e2;
            m[j] = k < 5 ? call(g, "select", t, bin(g, k == 2 ? DT_OP_LT : DT_OP_GT, b, k == 2 ? x : lit_text(g, t, c),
                                                   k == 2 ? lit_text(g, t, c) : x), x2, lit_text(g, t, c))
                         : call(g, "min", t, x, lit_text(g, t, c), NULL);
        }
        static const dt_binop cmp[] = {DT_OP_GT, DT_OP_GE, DT_OP_LE, DT_OP_LT, DT_OP_GT};   /* forms 2 .. 6 */
        bool zero_first = k == 3 || k == 5;
        dt_node *q = zero_first ? bin(g, cmp[k - 2], b, lit_text(g, t, z), m[0]) : bin(g, cmp[k - 2], b, m[0], lit_text(g, t, z));
        bool m_when_true = cmp[k - 2] == (zero_first ? DT_OP_LT : DT_OP_GT) || cmp[k - 2] == (zero_first ? DT_OP_LE : DT_OP_GE);
        return call(g, "select", t, q, m_when_true ? m[1] : lit_text(g, t, z), m_when_true ? lit_text(g, t, z) : m[1]);
    }
    }
}

dt_node *dt_expr(dt_gen *g, kf_type t, uint8_t mv, int d, bool untyped)
{
    if (t.scalar == KF_S_BOOL) return dt_cond(g, mv, d);
    if (d <= 0 || dt_chance(g->r, 22)) return leaf(g, t, mv, d, untyped);
    choice cs[MAXC];
    unsigned n = 0;
    producers(g, t, mv, cs, &n);
    if (!n) return leaf(g, t, mv, d, untyped);
    int k = pick(g, cs, n);
    dt_node *e = cs[k].make(g, t, mv, d, cs[k].i);
    if (t.kind == KF_TK_SCALAR && t.scalar == KF_S_F32 && g->side && !(e->flags & DT_F_UNTYPED) && dt_chance(g->side, 2))
        return saturate_form(g, t, e);
    return e;
}

/* ---- conditions ------------------------------------------------------------------------- */
static dt_node *compare(dt_gen *g, uint8_t mv, int d)
{
    kf_type s = dt_pick_scalar(g->r, true);
    dt_binop op = (dt_binop)(s.scalar == KF_S_BOOL ? DT_OP_EQ + dt_below(g->r, 2) : DT_OP_EQ + dt_below(g->r, 6));
    dt_node *a, *b;
    if (s.scalar == KF_S_BOOL) {
        a = dt_cond(g, mv, d - 1);
        b = dt_cond(g, mv, d - 1);
    } else {
        a = dt_expr(g, s, mv, d - 1, true);
        b = dt_expr(g, s, mv, d - 1, !(a->flags & DT_F_UNTYPED));
    }
    return bin(g, op, kf_type_scalar(KF_S_BOOL), a, b);
}

dt_node *dt_cond(dt_gen *g, uint8_t mv, int d)
{
    kf_type b = kf_type_scalar(KF_S_BOOL);
    unsigned k = d <= 0 ? 0 : dt_below(g->r, 20);
    if (k == 0 || k == 1) {   /* a bool variable or a literal */
        for (uint32_t i = g->nsyms; i-- > 0 && k == 1;)
            if (same(g->syms[i].type, b) && g->syms[i].var <= mv && g->syms[i].kind != DT_K_ARRAY &&
                g->syms[i].kind != DT_K_SHARED && dt_chance(g->r, 40))
                return sym_ref(g, &g->syms[i], b);
        return d <= 0 && dt_chance(g->r, 70) ? compare(g, mv, 1) : dt_lit(g, b, true);
    }
    if (k < 12) return compare(g, mv, d);
    if (k < 15) {   /* && ||: the right operand runs only where the left one lets it */
        dt_node *a = dt_cond(g, mv, d - 1);
        uint8_t ctrl = g->ctrl;
        g->ctrl = dt_max(g->ctrl, a->var);
        dt_node *c = dt_cond(g, mv, d - 1);
        g->ctrl = ctrl;
        return bin(g, dt_chance(g->r, 50) ? DT_OP_LAND : DT_OP_LOR, b, a, c);
    }
    if (k == 15) return mk_unary(g, b, mv, d, '!');
    if (k == 16) return mk_select(g, b, mv, d, 0);
    if (k == 17 && warp_ok(g) && mv >= DT_V_WARP) return mk_vote(g, b, mv, d, 1 + (int)dt_below(g->r, 2));
    for (uint32_t i = 0; i < g->p->nfns; i++) {
        const dt_fn *f = &g->p->fns[i];
        if (k == 18 && f->ready && same(f->ret, b) && mv >= DT_V_THREAD && dt_fn_callable(g, f)) return dt_fn_call(g, f);
    }
    return compare(g, mv, d);
}

/* ---- approximate functions -------------------------------------------------------------- */
/* Ranges: f32 sin/cos within [-1e5, 1e5] (the back ends turn the argument
 * into [-pi, pi] before sin.approx, whose 2^-20.9 absolute bound holds
 * there; the turn adds at most 2^-21 below 2^24), exp's argument within [-10, 10] (its bound grows with
 * |x|), exp2's within [-20, 20], log/log2/rsqrt of |x| in [1e-6, 1e6];
 * f64 within ranges where the software sequences keep their few ulp. */
static const struct {
    const char *fn;
    const char *lo32, *hi32, *lo64, *hi64;
    bool absolute;   /* the argument is clamp(abs(e), lo, hi) */
} approx_fns[] = {
    {"exp", "-10.0", "10.0", "-300.0", "300.0", false},
    {"exp2", "-20.0", "20.0", "-500.0", "500.0", false},
    {"log", "1e-6", "1e6", "1e-300", "1e300", true},
    {"log2", "1e-6", "1e6", "1e-300", "1e300", true},
    {"rsqrt", "1e-6", "1e6", "1e-300", "1e300", true},
    {"sin", "-100000.0", "100000.0", "-100.0", "100.0", false},
    {"cos", "-100000.0", "100000.0", "-100.0", "100.0", false},
    {"tanh", "-5.0", "5.0", "-20.0", "20.0", false},
};

const char *dt_approx_bound(int64_t k, bool f64, bool hi)
{
    return f64 ? (hi ? approx_fns[k].hi64 : approx_fns[k].lo64) : (hi ? approx_fns[k].hi32 : approx_fns[k].lo32);
}

bool dt_approx_abs(int64_t k) { return approx_fns[k].absolute; }

/* rcp(x) of any f32 (its flushes are part of the contract, the results
 * within 2 ulp or 1.2e-38), or fast_div(a, b) of a, b within +-1e30. */
static dt_node *approx_rcp(dt_gen *g, uint8_t mv, int d, uint8_t *tol)
{
    static const uint8_t lanes[] = {1, 1, 2, 4};
    kf_type t = kf_type_vector(KF_S_F32, lanes[dt_below(g->r, 4)]);
    dt_node *n;
    *tol = DT_TOL_RCP;
    if (dt_chance(g->r, 50)) {
        n = call(g, "rcp", t, dt_expr(g, t, mv, d, false), NULL, NULL);
    } else {
        dt_node *ab[2];
        for (int k = 0; k < 2; k++) {
            dt_node *e = dt_expr(g, t, mv, d - 1, false);
            ab[k] = call(g, "clamp", t, e, dt_new(g, DT_E_LIT, t), dt_new(g, DT_E_LIT, t));
            ab[k]->a[0]->next->text = "-1e30", ab[k]->a[0]->next->flags = DT_F_UNTYPED;
            ab[k]->a[0]->next->next->text = "1e30", ab[k]->a[0]->next->next->flags = DT_F_UNTYPED;
        }
        n = call(g, "fast_div", t, ab[0], ab[1], NULL);
    }
    n->flags |= DT_F_KEEP;
    return t.lanes == 1 ? n : member_of(g, kf_type_scalar(KF_S_F32), n);
}

dt_node *dt_approx(dt_gen *g, kf_scalar s, uint8_t mv, int d, uint8_t *tol)
{
    if (s == KF_S_F32 && dt_chance(g->r, 20)) return approx_rcp(g, mv, d, tol);
    unsigned k = dt_below(g->r, sizeof approx_fns / sizeof approx_fns[0]);
    static const uint8_t lanes[] = {1, 1, 2, 4};
    kf_type t = kf_type_vector(s, lanes[dt_below(g->r, s == KF_S_F64 ? 3 : 4)]);
    dt_node *n = guard(g, DT_G_APPROX, t, dt_expr(g, t, mv, d, false), k);
    n->text = approx_fns[k].fn;
    *tol = s == KF_S_F64 ? DT_TOL_F64 : k == 7 ? DT_TOL_TANH : DT_TOL_F32;
    return t.lanes == 1 ? n : member_of(g, kf_type_scalar(s), n);
}
