/* Semantic analysis of statements: block scopes (shadowing in an inner
 * block, no redeclaration in the same block), declarations (let, var, local
 * and shared arrays), assignments, if/while conditions, for loops and their
 * @unroll rules, break/continue/return, and the "returns on every path"
 * analysis of fns. */
#include "sema_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR kf_sema_err_type()
#define IS_ERR(t) kf_sema_is_err(t)

/* ---- name maps ------------------------------------------------------------------ */
static uint32_t hash_str(const char *k)
{
    uint32_t h = 2166136261u;
    for (; *k; k++) h = (h ^ (uint8_t)*k) * 16777619u;
    return h;
}

static uint32_t map_slot(const kf_sema_map *m, const char *key)
{
    uint32_t i = hash_str(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
    return i;
}

static bool map_grow(kf_sema_map *m)
{
    kf_sema_map g = {calloc(m->cap ? m->cap * 2 : 64, sizeof *g.keys), NULL, m->cap ? m->cap * 2 : 64, m->count};
    g.vals = calloc(g.cap, sizeof *g.vals);
    if (!g.keys || !g.vals || g.cap < m->cap) {
        free(g.keys);
        free(g.vals);
        return false;
    }
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        uint32_t j = map_slot(&g, m->keys[i]);
        g.keys[j] = m->keys[i];
        g.vals[j] = m->vals[i];
    }
    kf_sema_map_free(m);
    *m = g;
    return true;
}

bool kf_sema_map_put(kf_sema_map *m, const char *key, uintptr_t val)
{
    if ((m->count + 1) * 2 > m->cap && !map_grow(m)) return false;
    uint32_t i = map_slot(m, key);
    if (!m->keys[i]) m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

uintptr_t kf_sema_map_get(const kf_sema_map *m, const char *key)
{
    return m->cap ? m->vals[map_slot(m, key)] : 0;
}

void kf_sema_map_free(kf_sema_map *m)
{
    free(m->keys);
    free(m->vals);
    *m = (kf_sema_map){0};
}

/* ---- scopes ------------------------------------------------------------------ */
void kf_sema_push(kf_sema *s) { s->depth++; }

void kf_sema_pop(kf_sema *s)
{
    while (s->syms.len && s->syms.data[s->syms.len - 1].depth >= s->depth) {
        kf_sema_sym *top = &s->syms.data[--s->syms.len];
        kf_sema_map_put(&s->scope, top->name, top->prev);
    }
    s->depth--;
}

bool kf_sema_declare(kf_sema *s, kf_node *decl)
{
    if (!decl->name) return false;
    uint32_t head = (uint32_t)kf_sema_map_get(&s->scope, decl->name);
    if (head && s->syms.data[head - 1].depth == s->depth) {
        kf_node *old = s->syms.data[head - 1].decl;
        if (decl->kind == KF_N_PARAM && old->kind == KF_N_PARAM)
            kf_sema_error(s, decl->loc, "parameter '%s' is declared twice", decl->name);
        else
            kf_sema_error(s, decl->loc, "'%s' is already declared in this block (at line %u); use another name or assign to it",
                          decl->name, old->loc.line);
        return false;
    }
    kf_sema_sym sym = {decl->name, decl, s->depth, head};
    if (!KF_VEC_PUSH(&s->syms, sym) || !kf_sema_map_put(&s->scope, decl->name, s->syms.len)) s->nomem = true;
    return true;
}

kf_node *kf_sema_lookup(kf_sema *s, const char *name)
{
    if (!name) return NULL;
    uint32_t i = s->hide_locals ? 0 : (uint32_t)kf_sema_map_get(&s->scope, name);
    if (i) return s->syms.data[i - 1].decl;
    return kf_sema_module_lookup(s, name);
}

/* ---- types written in the source ------------------------------------------------- */
static kf_type array_type(kf_sema *s, kf_node *tn)
{
    kf_type et = kf_sema_resolve_type(s, tn->a, false, false);
    kf_node *len = tn->b;
    if (!len) {   /* T[]: the dynamic array, a shared parameter or view (length at run time) */
        if (IS_ERR(et)) return ERR;
        return tn->type = (kf_type){KF_TK_ARRAY, et.scalar, et.lanes, KF_TF_SHARED | KF_TF_DYN, 0};
    }
    kf_type lt = kf_sema_value(s, len, false);
    if (IS_ERR(et) || IS_ERR(lt)) return ERR;
    if (kf_sema_untyped(lt)) kf_sema_adapt(s, len, kf_type_scalar(KF_S_U32));
    if (IS_ERR(len->type)) return ERR;
    if (!kf_sema_is_int_scalar(len->type) || !len->is_const || kf_sema_depends(s, len)) {
        kf_sema_error(s, len->loc, "an array length must be an integer compile-time constant, found %s%s",
                      TSTR(len->type), kf_sema_is_int_scalar(len->type) ? " that is not a constant" : "");
        return ERR;
    }
    bool neg = kf_type_is_signed(len->type) && len->cval.i < 0;
    if (neg || len->cval.u == 0 || len->cval.u > UINT32_MAX) {
        char b[32];
        kf_sema_error(s, len->loc, "an array length must be in 1..4294967295, found %s",
                      kf_cv_str((kf_scalar)len->type.scalar, (kf_cv){.u = len->cval.u}, b, sizeof b));
        return ERR;
    }
    kf_type t = {KF_TK_ARRAY, et.scalar, et.lanes, 0, (uint32_t)len->cval.u};
    return tn->type = t;
}

kf_type kf_sema_resolve_type(kf_sema *s, kf_node *tn, bool allow_buffer, bool allow_array)
{
    if (!tn) return ERR;
    kf_type t = ERR;
    switch (tn->kind) {
    case KF_N_TYPE:
        if (tn->type.kind != KF_TK_SCALAR && tn->type.kind != KF_TK_VECTOR) {
            kf_sema_error(s, tn->loc, "unknown type");
            return ERR;
        }
        return tn->type;
    case KF_N_TYPE_BUF:
        t = kf_sema_resolve_type(s, tn->a, false, false);
        if (IS_ERR(t)) return t;
        t = (kf_type){KF_TK_BUFFER, t.scalar, t.lanes, (uint8_t)(tn->op ? KF_TF_MUT : 0), 0};
        tn->type = t;
        if (!allow_buffer) {
            kf_sema_error(s, tn->loc, "a buffer type (%s) is only allowed for parameters, 'let' and 'as'", TSTR(t));
            return ERR;
        }
        return t;
    case KF_N_TYPE_ARRAY:
        t = array_type(s, tn);
        if (!IS_ERR(t) && !allow_array) {
            kf_sema_error(s, tn->loc, "an array type (%s) is only allowed in 'var' and 'shared' declarations", TSTR(t));
            return ERR;
        }
        return t;
    default:
        kf_sema_error(s, tn->loc, "expected a type");
        return ERR;
    }
}

/* ---- declarations ----------------------------------------------------------------- */
/* `let v = <shared array>`: a shared array (or a view of one) bound to a
 * name; a local array cannot be. */
static bool let_array_ok(kf_sema *s, kf_node *n, kf_type it)
{
    if (it.kind != KF_TK_ARRAY || (it.flags & KF_TF_SHARED)) return true;
    kf_sema_error(s, n->b->loc, "a local array (%s) cannot be bound with 'let': index it", TSTR(it));
    return false;
}

static void let_stmt(kf_sema *s, kf_node *n)
{
    kf_type dt = n->a ? kf_sema_resolve_type(s, n->a, true, false) : kf_type_void();
    kf_type it = kf_sema_value_let(s, n->b, dt);
    if (!IS_ERR(it) && !let_array_ok(s, n, it)) {
        n->type = ERR;
        kf_sema_declare(s, n);
        return;
    }
    char what[96];
    snprintf(what, sizeof what, "the initializer of '%s'", n->name ? n->name : "?");
    if (n->a && !IS_ERR(dt) && !IS_ERR(it)) {
        if (!kf_sema_expect(s, n->b, dt, what)) dt = ERR;
    } else if (!n->a) {
        kf_sema_default(s, n->b);
        dt = IS_ERR(it) ? ERR : n->b->type;
    } else {
        kf_sema_default(s, n->b);
        dt = ERR;
    }
    n->type = dt;
    kf_sema_declare(s, n);
}

/* A thread's local memory on the GPU (CUDA: 512 KiB per thread). */
#define KF_LOCAL_LIMIT (UINT64_C(512) << 10)

static void var_stmt(kf_sema *s, kf_node *n)
{
    bool array = n->a && n->a->kind == KF_N_TYPE_ARRAY;
    kf_type dt = n->a ? kf_sema_resolve_type(s, n->a, false, true) : kf_type_void();
    uint64_t bytes = array && dt.kind == KF_TK_ARRAY ? (uint64_t)kf_type_elem_bytes(dt) * dt.len : 0;
    if (bytes > KF_LOCAL_LIMIT) {
        kf_sema_error(s, n->a->loc, "local array '%s' is %llu bytes; a thread has at most %llu bytes (512 KiB) of "
                      "local memory: use a shared array or a buffer", n->name ? n->name : "?",
                      (unsigned long long)bytes, (unsigned long long)KF_LOCAL_LIMIT);
        dt = ERR;
    }
    if (array) {
        if (n->b) {
            kf_sema_error(s, n->b->loc, "a local array cannot be initialized: assign its elements");
            kf_sema_value(s, n->b, false);
        }
    } else if (!n->b) {
        /* `var x: T;` (grammar/README.md): lowering starts it at zero */
        if (!n->a) {
            kf_sema_error(s, n->loc, "'var %s' needs a type or an initial value", n->name);
            dt = ERR;
        }
    } else {
        kf_type it = kf_sema_value_hint(s, n->b, dt, false);
        char what[96];
        snprintf(what, sizeof what, "the initializer of '%s'", n->name ? n->name : "?");
        if (!n->a) {
            kf_sema_default(s, n->b);
            dt = IS_ERR(it) ? ERR : n->b->type;
        } else if (!IS_ERR(dt) && !IS_ERR(it)) {
            if (!kf_sema_expect(s, n->b, dt, what)) dt = ERR;
        } else {
            kf_sema_default(s, n->b);
        }
    }
    n->type = dt;
    kf_sema_declare(s, n);
}

/* `shared s: T[N]` (kernel or fn: one array per kernel, shared by every
 * call site of the fn) or `shared s: T[]` (the kernel's one dynamic array). */
static void shared_stmt(kf_sema *s, kf_node *n)
{
    kf_type t = kf_sema_resolve_type(s, n->a, false, true);
    bool dyn = !IS_ERR(t) && (t.flags & KF_TF_DYN);
    if (!IS_ERR(t) && t.kind != KF_TK_ARRAY) {
        kf_sema_error(s, n->loc, "shared '%s' must be an array: write 'shared %s: %s[N];'", n->name, n->name, TSTR(t));
        t = ERR;
    } else if (dyn && s->func && s->func->kind == KF_N_FN) {
        kf_sema_error(s, n->loc, "a fn cannot declare the dynamic shared array '%s': declare it in the kernel and pass it "
                      "as a '%s' parameter", n->name, TSTR(t));
        t = ERR;
    } else if (dyn && s->dyn_shared) {
        kf_sema_error(s, n->loc, "kernel '%s' already has a dynamic shared array ('%s' at line %u); a kernel has one: "
                      "view it as another element type with 'as shared T[]'", s->func ? s->func->name : "?",
                      s->dyn_shared->name, s->dyn_shared->loc.line);
        t = ERR;
    } else if (dyn) {
        s->dyn_shared = n;
    }
    if (!IS_ERR(t)) t.flags |= KF_TF_SHARED;
    n->type = t;
    kf_sema_declare(s, n);
}

/* ---- control ---------------------------------------------------------------------------- */
static void condition(kf_sema *s, kf_node *c)
{
    kf_type t = kf_sema_value(s, c, false);
    if (IS_ERR(t) || kf_type_is_bool(t)) return;
    kf_sema_error(s, c->loc, "condition must be bool, found %s%s", TSTR(t),
                  kf_sema_is_num(t) && t.kind == KF_TK_SCALAR ? ": compare with != 0" : "");
    kf_sema_default(s, c);
}

static void stmt(kf_sema *s, kf_node *n);

static void loop_body(kf_sema *s, kf_node *body)
{
    s->loops++;
    kf_sema_block(s, body);
    s->loops--;
}

/* An arm of an if whose condition depends on an @unroll variable is
 * checked only for the iterations that take it (kf_sema_each_unroll). */
static void if_stmt(kf_sema *s, kf_node *n)
{
    condition(s, n->a);
    bool guard = !IS_ERR(n->a->type) && kf_sema_depends(s, n->a);
    /* a constant condition (`if R > 2` with a -D R): the arm it never takes
     * is not lowered, so its constant indices are not range-checked */
    bool fixed = !IS_ERR(n->a->type) && !guard && n->a->is_const;
    bool dead_then = fixed && !n->a->cval.u, dead_else = fixed && n->a->cval.u;
    if (guard && !KF_VEC_PUSH(&s->guards, ((kf_sema_guard){n->a, true}))) s->nomem = true, guard = false;
    s->dead += dead_then;
    kf_sema_block(s, n->b);
    s->dead -= dead_then;
    if (guard) s->guards.data[s->guards.len - 1].taken = false;
    s->dead += dead_else;
    if (n->c) stmt(s, n->c);
    s->dead -= dead_else;
    if (guard) s->guards.len--;
}

static void jump_stmt(kf_sema *s, kf_node *n)
{
    const char *w = n->kind == KF_N_BREAK ? "break" : "continue";
    if (s->loops == 0) kf_sema_error(s, n->loc, "'%s' must be inside a loop", w);
}

static void return_stmt(kf_sema *s, kf_node *n)
{
    kf_node *f = s->func;
    if (!f) return;
    if (f->kind == KF_N_KERNEL) {
        if (n->a) {
            kf_sema_value(s, n->a, false);
            kf_sema_error(s, n->a->loc, "a kernel cannot return a value: write 'return;'");
        }
        return;
    }
    if (f->type.kind == KF_TK_VOID) {
        if (n->a) {
            kf_sema_value(s, n->a, false);
            kf_sema_error(s, n->a->loc, "fn '%s' has no return type: remove the value or declare '-> T'", f->name);
        }
        return;
    }
    if (!n->a) {
        kf_sema_error(s, n->loc, "fn '%s' must return a value of type %s", f->name, TSTR(f->type));
        return;
    }
    char what[96];
    snprintf(what, sizeof what, "the return value of '%s'", f->name);
    if (!IS_ERR(kf_sema_value_hint(s, n->a, f->type, false))) kf_sema_expect(s, n->a, f->type, what);
}

/* ---- for loops ---------------------------------------------------------------------------- */
static __int128 cv128(const kf_node *n)
{
    return kf_type_is_signed(n->type) ? (__int128)n->cval.i : (__int128)n->cval.u;
}

typedef struct {
    kf_node *loop;
    __int128 max_trip;
} trip_state;

static __int128 trip_of(const kf_node *f)
{
    __int128 a = cv128(f->a), b = cv128(f->b), c = f->c ? cv128(f->c) : 1;
    if (c <= 0 || b <= a) return 0;
    return (b - a + c - 1) / c;
}

static bool trip_visit(kf_sema *s, void *p)
{
    (void)s;
    trip_state *t = p;
    kf_sema_refold(t->loop->a), kf_sema_refold(t->loop->b), kf_sema_refold(t->loop->c);
    __int128 n = trip_of(t->loop);
    if (n > t->max_trip) t->max_trip = n;
    return t->max_trip <= 1024;
}

static bool unroll_rules(kf_sema *s, kf_node *n)
{
    kf_node *parts[3] = {n->a, n->b, n->c};
    const char *names[3] = {"start", "end", "step"};
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        if (!parts[i] || IS_ERR(parts[i]->type) || parts[i]->is_const) continue;
        kf_buf b = {0};
        kf_expr_str(&b, parts[i]);
        kf_sema_error(s, parts[i]->loc, "@unroll needs compile-time constant bounds: the %s '%s' is not a constant",
                      names[i], b.data ? b.data : "");
        kf_buf_free(&b);
        ok = false;
    }
    if (!ok) return false;
    trip_state t = {n, 0};
    if (kf_sema_depends(s, n->a) || kf_sema_depends(s, n->b) || kf_sema_depends(s, n->c)) kf_sema_each_unroll(s, trip_visit, &t);
    else t.max_trip = trip_of(n);
    if (t.max_trip > 1024) {
        kf_sema_error(s, n->loc, "@unroll loop '%s' runs %lld iterations; at most 1024 can be unrolled", n->name,
                      (long long)(t.max_trip > INT64_MAX ? INT64_MAX : t.max_trip));
        return false;
    }
    return true;
}

/* Types the bounds: same integer type; untyped pairs default to i32, or stay
 * untyped for @unroll (the variable adapts like a literal). */
static kf_type for_type(kf_sema *s, kf_node *n)
{
    /* a bound that adapts (select(c, 0, 1)) takes the other's type, as an operand does */
    kf_type ta, tb;
    if (kf_sema_adapts(s, n->a) && !kf_sema_adapts(s, n->b)) {
        tb = kf_sema_value(s, n->b, false);
        ta = kf_sema_value_hint(s, n->a, tb, false);
    } else {
        ta = kf_sema_value(s, n->a, false);
        tb = kf_sema_value_hint(s, n->b, ta, false);
    }
    if (IS_ERR(ta) || IS_ERR(tb)) return ERR;
    if (kf_sema_untyped(ta) && kf_sema_untyped(tb)) {
        if (ta.scalar == KF_S_UFLOAT || tb.scalar == KF_S_UFLOAT) {
            kf_node *f = ta.scalar == KF_S_UFLOAT ? n->a : n->b;
            kf_sema_error(s, f->loc, "the bounds of a for loop must be integers, found untyped float");
            return ERR;
        }
        if (n->op == 1) {
            kf_type i64 = kf_type_scalar(KF_S_I64);
            if (!kf_sema_adapt(s, n->a, i64) || !kf_sema_adapt(s, n->b, i64)) return ERR;
            return kf_type_scalar(KF_S_UINT);
        }
        kf_sema_default(s, n->a), kf_sema_default(s, n->b);
    }
    char sp[80];
    snprintf(sp, sizeof sp, "for %s in a .. b", n->name ? n->name : "?");
    kf_type t = kf_sema_unify2(s, n->loc, n->a, n->b, sp);
    if (IS_ERR(t)) return ERR;
    if (!kf_sema_is_int_scalar(t)) {
        kf_sema_error(s, n->a->loc, "the bounds of a for loop must be integers, found %s", TSTR(t));
        return ERR;
    }
    return t;
}

static bool for_step(kf_sema *s, kf_node *n, kf_type t)
{
    kf_node *c = n->c;
    if (!c) return true;
    kf_type want = t.scalar == KF_S_UINT ? kf_type_scalar(KF_S_I64) : t;
    kf_type st = kf_sema_value_hint(s, c, IS_ERR(t) ? kf_type_void() : want, false);
    if (IS_ERR(st) || IS_ERR(t)) return false;
    char what[64];
    snprintf(what, sizeof what, "the step of 'for %s'", n->name ? n->name : "?");
    if (!kf_sema_expect(s, c, want, what)) return false;
    if (c->is_const && !kf_sema_depends(s, c) && (kf_type_is_signed(c->type) ? c->cval.i <= 0 : c->cval.u == 0)) {
        char b[32];
        kf_sema_error(s, c->loc, "the step of a for loop must be positive, found %s",
                      kf_cv_str((kf_scalar)c->type.scalar, (kf_cv){.u = c->cval.u}, b, sizeof b));
        return false;
    }
    return true;
}

static void for_stmt(kf_sema *s, kf_node *n)
{
    kf_type t = for_type(s, n);
    bool ok = for_step(s, n, t) && !IS_ERR(t);
    bool unroll = n->op == 1;
    if (ok && unroll) ok = unroll_rules(s, n);
    n->type = IS_ERR(t) || (unroll && !ok) ? ERR : t;
    if (ok && unroll) {
        n->is_const = true;
        n->cval.u = n->a->cval.u;
        if (!KF_VEC_PUSH(&s->unroll, n)) s->nomem = true;
    }
    kf_sema_push(s);
    kf_sema_declare(s, n);
    loop_body(s, n->d);
    kf_sema_pop(s);
    if (ok && unroll) s->unroll.len--;
}

static void while_stmt(kf_sema *s, kf_node *n)
{
    condition(s, n->a);
    loop_body(s, n->b);
}

static void stmt(kf_sema *s, kf_node *n)
{
    switch (n->kind) {
    case KF_N_LET: let_stmt(s, n); break;
    case KF_N_VAR: var_stmt(s, n); break;
    case KF_N_SHARED: shared_stmt(s, n); break;
    case KF_N_ASSIGN: kf_sema_assign(s, n); break;
    case KF_N_IF: if_stmt(s, n); break;
    case KF_N_FOR: for_stmt(s, n); break;
    case KF_N_WHILE: while_stmt(s, n); break;
    case KF_N_BREAK: case KF_N_CONTINUE: jump_stmt(s, n); break;
    case KF_N_RETURN: return_stmt(s, n); break;
    case KF_N_EXPR: kf_sema_expr_stmt(s, n->a); break;
    case KF_N_BLOCK: kf_sema_block(s, n); break;
    default: kf_sema_error(s, n->loc, "expected a statement"); break;
    }
}

void kf_sema_block(kf_sema *s, kf_node *block)
{
    if (!block) return;
    if (block->kind != KF_N_BLOCK) {
        stmt(s, block);
        return;
    }
    kf_sema_push(s);
    for (kf_node *st = block->a; st; st = st->next) stmt(s, st);
    kf_sema_pop(s);
}

/* ---- every path returns ---------------------------------------------------------------- */
static bool breaks_out(const kf_node *n)
{
    for (; n; n = n->next) {
        switch (n->kind) {
        case KF_N_BREAK: return true;
        case KF_N_BLOCK: if (breaks_out(n->a)) return true; break;
        case KF_N_IF:
            if ((n->b && breaks_out(n->b->kind == KF_N_BLOCK ? n->b->a : n->b)) ||
                (n->c && breaks_out(n->c->kind == KF_N_BLOCK ? n->c->a : n->c)))
                return true;
            break;
        default: break;
        }
    }
    return false;
}

bool kf_sema_returns(const kf_node *n)
{
    if (!n) return false;
    switch (n->kind) {
    case KF_N_RETURN: return true;
    case KF_N_BLOCK:
        for (const kf_node *st = n->a; st; st = st->next)
            if (kf_sema_returns(st)) return true;
        return false;
    case KF_N_IF: return n->c && kf_sema_returns(n->b) && kf_sema_returns(n->c);
    case KF_N_WHILE:
        return n->a && n->a->is_const && n->a->cval.u && !breaks_out(n->b ? n->b->a : NULL);
    default: return false;
    }
}
