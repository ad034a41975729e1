/* Semantic analysis (the pass after parsing): resolves every name, checks
 * and annotates types, folds constants, applies -D overrides, validates
 * @schedule and the fn rules (no recursion, no dynamic shared array, a
 * value on every path). The AST is annotated in place (ir/ast.h): `type` on every
 * expression and declaration, `sym` on names and fn calls, `op` = builtin
 * id on builtin names and calls, is_const/cval on constant expressions.
 *
 * Order: module names, then signatures (so fns may be called before they
 * are defined), then constants in dependency order (each on first use,
 * cycles reported), then kernels and fns in source order, then the call
 * graph. Every error is reported and checking goes on: a bad expression
 * gets the error type, which silences follow-up errors about it.
 *
 * Files: sema.c (module level), sema_stmt.c (scopes, statements),
 * sema_expr.c (expressions, untyped constants), sema_builtin.c (builtin
 * calls), sema_fold.c (exact arithmetic shared with value.c). */
#include "sema_impl.h"

#include <stdio.h>
#include <string.h>

#define ERR kf_sema_err_type()
#define IS_ERR(t) kf_sema_is_err(t)

enum { MAX_THREADS = 1024, SM_THREADS = 2048, SM_BLOCKS = 32 };   /* per block; per SM (sm_90): threads, blocks */

void kf_sema_error(kf_sema *s, kf_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kf_diag_vadd(s->cx->diags, KF_DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
}

static bool is_module_decl(const kf_node *n)
{
    return n->kind == KF_N_CONST || n->kind == KF_N_FN || n->kind == KF_N_KERNEL;
}

kf_node *kf_sema_module_lookup(kf_sema *s, const char *name)
{
    return (kf_node *)kf_sema_map_get(&s->names, name);
}

/* ---- "did you mean" ---------------------------------------------------------------- */
static unsigned edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40) return 99;
    unsigned row[41];
    for (size_t j = 0; j <= lb; j++) row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static void consider(const char *name, const char *cand, const char **best, unsigned *bd)
{
    if (!cand || strcmp(name, cand) == 0) return;
    unsigned d = edit_distance(name, cand);
    if (d < *bd) *bd = d, *best = cand;
}

#define NO_RINT "round(x): there is no round-half-even builtin; round takes halves away from zero"
#define NO_POW "exp2(y * log2(x)) for x > 0: there is no pow builtin"
#define NO_ERF "a tanh form (GELU: 0.5 * x * (1 + tanh(0.7978846 * (x + 0.044715 * x * x * x)))): there is no erf"
#define NO_ATAN "nothing built in: there are no inverse trigonometric builtins"

/* CUDA's names for what kforge spells otherwise, for a user coming from
 * CUDA-C: the name and what to write instead. */
static const char *const cuda_names[][2] = {
    {"threadIdx", "thread_id"}, {"blockIdx", "block_id"}, {"blockDim", "block_dim"}, {"gridDim", "grid_dim"},
    {"warpSize", "WARP_SIZE"}, {"__syncthreads", "barrier()"}, {"__threadfence", "fence()"},
    {"atomicAdd", "atomic_add"}, {"atomicMin", "atomic_min"}, {"atomicMax", "atomic_max"},
    {"atomicExch", "atomic_exch"}, {"atomicCAS", "atomic_cas"}, {"__shfl_sync", "shfl(v, lane)"},
    {"__shfl_xor_sync", "shfl_xor(v, mask)"}, {"__shfl_up_sync", "shfl_up(v, d)"},
    {"__shfl_down_sync", "shfl_down(v, d)"}, {"__ballot_sync", "ballot(b)"}, {"__any_sync", "any(b)"},
    {"__all_sync", "all(b)"}, {"__popc", "popc"}, {"__popcll", "popc"}, {"__clz", "clz"}, {"__clzll", "clz"},
    {"__umulhi", "mul_hi"}, {"__mulhi", "mul_hi"}, {"__umul64hi", "mul_hi"}, {"__mul64hi", "mul_hi"},
    {"__dp4a", "dot4"}, {"__byte_perm", "prmt"}, {"__fdividef", "fast_div"}, {"__frcp_rn", "rcp (approximate) or 1.0 / x"},
    {"fmaf", "fma"}, {"__fmaf_rn", "fma"}, {"fminf", "min"}, {"fmaxf", "max"}, {"fmin", "min"}, {"fmax", "max"},
    {"sqrtf", "sqrt"}, {"rsqrtf", "rsqrt"}, {"expf", "exp"}, {"__expf", "exp"}, {"exp2f", "exp2"},
    {"logf", "log"}, {"__logf", "log"}, {"log2f", "log2"}, {"sinf", "sin"}, {"__sinf", "sin"}, {"cosf", "cos"},
    {"__cosf", "cos"}, {"tanhf", "tanh"}, {"fabsf", "abs"}, {"fabs", "abs"}, {"floorf", "floor"}, {"ceilf", "ceil"},
    {"truncf", "trunc"}, {"roundf", "round"}, {"__float2half", "x as f16"}, {"__half2float", "x as f32"},
    {"__float2bfloat16", "x as bf16"}, {"__bfloat162float", "x as f32"}, {"__int_as_float", "bitcast(f32, x)"},
    {"__uint_as_float", "bitcast(f32, x)"}, {"__float_as_int", "bitcast(i32, x)"},
    {"__float_as_uint", "bitcast(u32, x)"}, {"__hadd2", "+ on f16x2"}, {"__hmul2", "* on f16x2"},
    {"__hfma2", "fma on f16x2"}, {"__syncwarp", "nothing (a warp builtin waits for its lanes; barrier() orders the block)"},
    {"__ldg", "a plain read of a '&[T]' buffer, x[i]"},
    {"make_float2", "f32x2(a, b)"}, {"make_float4", "f32x4(a, b, c, d)"}, {"make_int4", "i32x4(a, b, c, d)"},
    {"make_uint4", "u32x4(a, b, c, d)"}, {"make_half2", "f16x2(a, b)"}, {"__saturatef", "clamp(x, 0.0, 1.0)"},
    {"__float2int_rn", "round(x) as i32 (halves away from zero), or x as i32 (toward zero)"},
    {"__float2int_rz", "x as i32"}, {"rintf", NO_RINT}, {"rint", NO_RINT},
    {"nearbyintf", "round(x) (halves away from zero)"}, {"powf", NO_POW}, {"pow", NO_POW},
    {"__powf", "exp2(y * log2(x)) for x > 0"}, {"erff", NO_ERF}, {"erf", NO_ERF},
    {"atan2f", NO_ATAN}, {"atan2", NO_ATAN}, {"atanf", NO_ATAN},
    {"tanf", "sin(x) / cos(x)"}, {"expm1f", "exp(x) - 1.0 (there is no expm1)"}, {"log1pf", "log(1.0 + x) (there is no log1p)"},
    {"dot", "the sum of the lanes of a * b (dot4 is the 8-bit integer dot product)"}};

void kf_sema_suggest(kf_sema *s, const char *name, char *buf, size_t size)
{
    const char *best = NULL;
    unsigned bd = 99;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof cuda_names / sizeof cuda_names[0]; i++)
        if (!strcmp(name, cuda_names[i][0])) {
            snprintf(buf, size, "; for CUDA's %s write %s", name, cuda_names[i][1]);
            return;
        }
    if (s->cx->diags->items.len >= KF_DIAG_LIMIT) return; /* not shown anyway: stay linear */
    for (size_t i = s->hide_locals ? 0 : s->syms.len; i-- > 0;) consider(name, s->syms.data[i].name, &best, &bd);
    for (kf_node *n = s->module ? s->module->a : NULL; n; n = n->next)
        if (is_module_decl(n)) consider(name, n->name, &best, &bd);
    for (int b = 1; b < KF_BI_COUNT; b++) consider(name, kf_builtin_names[b], &best, &bd);
    size_t len = strlen(name);
    unsigned limit = len <= 2 ? 1 : len <= 5 ? 2 : 3;
    if (best && bd <= limit && bd < len) snprintf(buf, size, "; did you mean '%s'?", best);
}

/* ---- constants and overrides --------------------------------------------------------- */
static const kf_loc CMDLINE = {"<command line>", 0, 0};

static const kf_define *find_define(kf_sema *s, const char *name)
{
    const kf_define *found = NULL;
    for (uint32_t i = 0; s->opts && i < s->opts->ndefines; i++)
        if (s->opts->defines[i].name && strcmp(s->opts->defines[i].name, name) == 0) found = &s->opts->defines[i];
    return found;
}

static void check_define_names(kf_sema *s)
{
    for (uint32_t i = 0; s->opts && i < s->opts->ndefines; i++) {
        const kf_define *d = &s->opts->defines[i];
        const char *nm = d->name ? d->name : "";
        kf_node *c = kf_sema_module_lookup(s, nm);
        if (c && c->kind == KF_N_CONST) continue;
        char hint[96] = "";
        const char *best = NULL;
        unsigned bd = 99;
        for (kf_node *n = s->module->a; n; n = n->next)
            if (n->kind == KF_N_CONST) consider(nm, n->name, &best, &bd);
        if (best && bd <= 2) snprintf(hint, sizeof hint, "; did you mean '%s'?", best);
        kf_sema_error(s, CMDLINE, "-D %s=%s: there is no constant '%s' in this module%s", nm, d->value ? d->value : "",
                      nm, c ? " (it is not a const)" : hint);
    }
}

static void apply_define(kf_sema *s, kf_node *c, const kf_define *d)
{
    kf_literal lit;
    const char *why = NULL;
    const char *val = d->value ? d->value : "";
    kf_cv v;
    if (!kf_literal_parse(val, &lit)) {
        kf_sema_error(s, CMDLINE, "-D %s=%s: '%s' is not a number, true or false%s", d->name, val, val,
                      kf_literal_hint(val));
        return;
    }
    if (IS_ERR(c->type)) return;
    if (!kf_literal_to(&lit, (kf_scalar)c->type.scalar, &v, &why)) {
        bool fit = strcmp(why, "does not fit") == 0;
        kf_sema_error(s, CMDLINE, "-D %s=%s: %s %s%s%s (constant '%s' is declared %s at %s:%u:%u)", d->name, val, val, why,
                      fit ? " " : "", fit ? TSTR(c->type) : "", c->name, TSTR(c->type), c->loc.file ? c->loc.file : "?",
                      c->loc.line, c->loc.col);
        return;
    }
    c->cval.u = v.u;
    c->is_const = true;
}

static void const_cycle(kf_sema *s, kf_node *c)
{
    kf_buf b = {0};
    size_t i = 0;
    while (i < s->consts.len && s->consts.data[i] != c) i++;
    for (; i < s->consts.len; i++) kf_buf_printf(&b, "%s -> ", s->consts.data[i]->name);
    kf_buf_puts(&b, c->name);
    kf_sema_error(s, c->loc, "constant '%s' depends on itself: %s", c->name, b.data ? b.data : "");
    kf_buf_free(&b);
}

static void eval_const(kf_sema *s, kf_node *c)
{
    kf_type dt = kf_sema_resolve_type(s, c->a, false, false);
    if (!IS_ERR(dt) && dt.kind != KF_TK_SCALAR) {
        kf_sema_error(s, c->a->loc, "constant '%s' must have a scalar type, found %s", c->name, TSTR(dt));
        dt = ERR;
    }
    kf_type it = kf_sema_value(s, c->b, false);
    c->type = dt;
    char what[96];
    snprintf(what, sizeof what, "the value of constant '%s'", c->name);
    if (IS_ERR(dt) || IS_ERR(it)) {
        kf_sema_default(s, c->b);
    } else if (kf_sema_expect(s, c->b, dt, what)) {
        if (c->b->is_const) {
            c->cval.u = c->b->cval.u;
            c->is_const = true;
        } else {
            kf_sema_error(s, c->b->loc, "the value of constant '%s' must be a compile-time constant", c->name);
        }
    }
    const kf_define *d = find_define(s, c->name);
    if (d) apply_define(s, c, d);
    if (!c->is_const) c->type = ERR;
}

bool kf_sema_ensure_const(kf_sema *s, kf_node *c)
{
    if (c->type.kind != KF_TK_VOID) return !IS_ERR(c->type);
    for (size_t i = 0; i < s->consts.len; i++)
        if (s->consts.data[i] == c) {
            const_cycle(s, c);
            c->type = ERR;
            return false;
        }
    if (!KF_VEC_PUSH(&s->consts, c)) {
        s->nomem = true;
        return false;
    }
    /* a constant sees only module names: hide locals and function state */
    uint32_t saved_loops = s->loops;
    kf_node *saved_func = s->func;
    const char *saved_grid = s->grid_mode;
    size_t saved_unroll = s->unroll.len, saved_guards = s->guards.len;
    s->func = NULL, s->loops = 0, s->grid_mode = NULL, s->unroll.len = 0, s->guards.len = 0;
    s->hide_locals++;
    eval_const(s, c);
    s->hide_locals--;
    s->loops = saved_loops, s->func = saved_func;
    s->grid_mode = saved_grid, s->unroll.len = saved_unroll, s->guards.len = saved_guards;
    s->consts.len--;
    if (c->type.kind == KF_TK_VOID) c->type = ERR;
    return !IS_ERR(c->type);
}

/* ---- module names and signatures -------------------------------------------------------- */
static void check_names(kf_sema *s)
{
    for (kf_node *n = s->module->a; n; n = n->next) {
        if (!is_module_decl(n) || !n->name) continue;
        kf_node *first = kf_sema_module_lookup(s, n->name);
        if (first)
            kf_sema_error(s, n->loc, "'%s' is already defined in this module (at line %u); names must be unique",
                          n->name, first->loc.line);
        else if (!kf_sema_map_put(&s->names, n->name, (uintptr_t)n))
            s->nomem = true;
    }
}

/* A `shared T[]` parameter: fns only (a kernel's shared arrays live in its body). */
static kf_type shared_param(kf_sema *s, kf_node *f, kf_node *p)
{
    kf_type t = kf_sema_resolve_type(s, p->a, false, true);
    if (kf_sema_is_err(t)) return t;
    if (f->kind == KF_N_KERNEL) {
        kf_sema_error(s, p->loc, "kernel parameter '%s' cannot be a shared array: declare 'shared %s: %s[]' in the kernel body",
                      p->name, p->name, TSTR(kf_type_elem(t)));
        return ERR;
    }
    return t;
}

static void signature(kf_sema *s, kf_node *f)
{
    for (kf_node *p = f->a; p; p = p->next)
        p->type = p->a && p->a->kind == KF_N_TYPE_ARRAY ? shared_param(s, f, p) : kf_sema_resolve_type(s, p->a, true, false);
    if (f->kind == KF_N_FN) f->type = f->b ? kf_sema_resolve_type(s, f->b, false, false) : kf_type_void();
}

/* ---- @schedule --------------------------------------------------------------------------- */
static unsigned tuple_items(kf_node *e, kf_node **items, const char *what, kf_sema *s)
{
    unsigned n = 0;
    if (e->kind != KF_N_TUPLE) {
        items[0] = e;
        return 1;
    }
    e->type = kf_type_void();
    for (kf_node *x = e->a; x; x = x->next) {
        if (n == 3) {
            kf_sema_error(s, x->loc, "%s takes at most 3 dimensions (x, y, z)", what);
            return 0;
        }
        items[n++] = x;
    }
    return n;
}

static const char DIMS[] = "xyz";

/* One constant of a @schedule (a block dimension, min_blocks): an integer
 * compile-time constant in lo..lim, `what` naming it in the errors (`note`
 * after the range). Returns it, 0 when invalid (reported; with lo = 0 the
 * caller cannot tell that from a valid 0, and need not: both bound nothing). */
static uint64_t sched_constant(kf_sema *s, kf_node *e, const char *what, uint64_t lo, uint64_t lim, const char *note)
{
    kf_type t = kf_sema_value(s, e, false);
    if (IS_ERR(t)) return 0;
    if (kf_sema_untyped(t) && !kf_sema_adapt(s, e, kf_type_scalar(KF_S_U32))) return 0;
    if (!kf_sema_is_int_scalar(e->type) || !e->is_const) {
        kf_sema_error(s, e->loc, "%s must be an integer compile-time constant, found %s%s", what, TSTR(e->type),
                      kf_sema_is_int_scalar(e->type) ? " that is not a constant" : "");
        return 0;
    }
    if ((kf_type_is_signed(e->type) && e->cval.i < 0) || e->cval.u < lo || e->cval.u > lim) {
        char b[32];
        kf_sema_error(s, e->loc, "%s = %s is out of range: it must be in %llu..%llu%s", what,
                      kf_cv_str((kf_scalar)e->type.scalar, (kf_cv){.u = e->cval.u}, b, sizeof b),
                      (unsigned long long)lo, (unsigned long long)lim, note);
        return 0;
    }
    return e->cval.u;
}

/* Checks `block = B` or `(X, Y, Z)`; returns its threads, 0 when invalid. */
static uint64_t check_block(kf_sema *s, kf_node *e)
{
    kf_node *it[3];
    unsigned n = tuple_items(e, it, "block", s);
    static const uint64_t lim[3] = {1024, 1024, 64};
    uint64_t total = 1;
    bool ok = n > 0;
    for (unsigned i = 0; i < n; i++) {
        char what[8] = "block.x";
        what[6] = DIMS[i];
        uint64_t v = sched_constant(s, it[i], what, 1, lim[i], "");
        ok = ok && v;
        total *= v;
    }
    if (ok && total > MAX_THREADS) {
        kf_sema_error(s, e->loc, "a block of %llu threads is over the limit of %d threads per block",
                      (unsigned long long)total, MAX_THREADS);
        ok = false;
    }
    return ok ? total : 0;
}

/* `min_blocks = N`: how many blocks of the kernel one SM must hold at once,
 * a constant in 0..SM_BLOCKS (0: no bound, as when it is not given, so that
 * a -D knob can turn it off); returns N, 0 also when invalid (reported).
 * The back ends turn it into a register budget (__launch_bounds__(B, N),
 * .minnctapersm N). */
static uint64_t check_min_blocks(kf_sema *s, kf_node *e)
{
    if (e->kind == KF_N_TUPLE) {
        kf_sema_error(s, e->loc, "min_blocks takes one constant (blocks of the kernel an SM holds at once), not a tuple");
        return 0;
    }
    return sched_constant(s, e, "min_blocks", 0, SM_BLOCKS, " (blocks an SM holds at once)");
}

static void check_grid(kf_sema *s, kf_node *e)
{
    kf_node *it[3];
    unsigned n = tuple_items(e, it, "grid", s);
    for (unsigned i = 0; i < n; i++) {
        s->grid_mode = "grid";
        kf_type t = kf_sema_value(s, it[i], false);
        s->grid_mode = NULL;
        if (IS_ERR(t)) continue;
        if (kf_sema_untyped(t) && t.scalar == KF_S_UINT) kf_sema_adapt(s, it[i], kf_type_scalar(KF_S_U32));
        t = it[i]->type;
        if (IS_ERR(t)) continue;
        if (!kf_sema_is_int_scalar(t)) {
            kf_sema_error(s, it[i]->loc, "grid.%c must be an integer expression, found %s", DIMS[i], TSTR(t));
            kf_sema_default(s, it[i]);
            continue;
        }
        uint64_t lim = i == 0 ? INT32_MAX : 65535;
        if (it[i]->is_const && ((kf_type_is_signed(t) && it[i]->cval.i < 1) || it[i]->cval.u == 0 || it[i]->cval.u > lim))
            kf_sema_error(s, it[i]->loc, "grid.%c = %lld is out of range: it must be in 1..%llu", DIMS[i],
                          (long long)it[i]->cval.i, (unsigned long long)lim);
    }
}

/* `shared = EXPR`: u32 bytes of dynamic shared memory, over scalar
 * parameters and constants like the grid; a constant must fit the limit. */
static void check_shared_bytes(kf_sema *s, kf_node *e)
{
    if (e->kind == KF_N_TUPLE) {
        kf_sema_error(s, e->loc, "shared takes one expression (bytes of dynamic shared memory), not a tuple");
        return;
    }
    s->grid_mode = "shared";
    kf_type t = kf_sema_value(s, e, false);
    s->grid_mode = NULL;
    if (IS_ERR(t)) return;
    if (kf_sema_untyped(t) && t.scalar == KF_S_UINT) kf_sema_adapt(s, e, kf_type_scalar(KF_S_U32));
    t = e->type;
    if (IS_ERR(t)) return;
    if (t.kind != KF_TK_SCALAR || t.scalar != KF_S_U32) {
        kf_sema_error(s, e->loc, "shared = EXPR gives u32 bytes of dynamic shared memory, found %s%s", TSTR(t),
                      kf_sema_is_int_scalar(t) ? ": convert it with 'as u32'" : "");
        kf_sema_default(s, e);
        return;
    }
    if (e->is_const && e->cval.u > KF_SHARED_LIMIT)
        kf_sema_error(s, e->loc, "shared = %llu bytes is over the limit of %u bytes (227 KiB, sm_90) per block",
                      (unsigned long long)e->cval.u, KF_SHARED_LIMIT);
}

static void schedule(kf_sema *s, kf_node *k, kf_node *attr)
{
    kf_node *block = NULL, *grid = NULL, *shared = NULL, *minb = NULL;
    uint64_t threads = 0, nmin = 0;
    for (kf_node *a = attr->a; a; a = a->next) {
        const char *nm = a->name ? a->name : "";
        bool is_block = strcmp(nm, "block") == 0, is_grid = strcmp(nm, "grid") == 0;
        bool is_shared = strcmp(nm, "shared") == 0, is_min = strcmp(nm, "min_blocks") == 0;
        if (!is_block && !is_grid && !is_shared && !is_min) {
            kf_sema_error(s, a->loc,
                          "unknown @schedule argument '%s': expected 'block', 'grid', 'shared' or 'min_blocks'", nm);
            continue;
        }
        if ((is_block && block) || (is_grid && grid) || (is_shared && shared) || (is_min && minb)) {
            kf_sema_error(s, a->loc, "'%s' is given twice in @schedule", nm);
            continue;
        }
        a->type = kf_type_void();
        if (!a->a) continue;
        if (is_block) threads = check_block(s, block = a->a);
        else if (is_grid) check_grid(s, grid = a->a);
        else if (is_shared) check_shared_bytes(s, shared = a->a);
        else nmin = check_min_blocks(s, minb = a->a);
    }
    if (!block) kf_sema_error(s, attr->loc, "@schedule of kernel '%s' needs a block size, e.g. 'block = 256'", k->name);
    uint64_t resident = (threads + 31) / 32 * 32 * nmin;   /* threads an SM holds, in whole warps */
    if (resident > SM_THREADS)
        kf_sema_error(s, minb->loc,
                      "min_blocks = %llu blocks of %llu threads make %llu threads, over the %d an SM holds (sm_90): "
                      "lower min_blocks or the block size",
                      (unsigned long long)nmin, (unsigned long long)threads, (unsigned long long)resident, SM_THREADS);
}

static void attributes(kf_sema *s, kf_node *k)
{
    bool seen = false;
    for (kf_node *a = k->d; a; a = a->next) {
        const char *nm = a->name ? a->name : "";
        if (strcmp(nm, "schedule") != 0) {
            kf_sema_error(s, a->loc, "unknown attribute '@%s': a kernel accepts @schedule(block = B, grid = G)", nm);
        } else if (seen) {
            kf_sema_error(s, a->loc, "kernel '%s' has more than one @schedule", k->name);
        } else {
            seen = true;
            schedule(s, k, a);
        }
    }
}

/* ---- bodies ------------------------------------------------------------------------------ */
static void enter(kf_sema *s, kf_node *f)
{
    s->func = f;
    s->loops = 0;
    s->dyn_shared = NULL;
    kf_sema_push(s);
    for (kf_node *p = f->a; p; p = p->next) kf_sema_declare(s, p);
}

static void check_kernel(kf_sema *s, kf_node *k)
{
    enter(s, k);
    k->type = kf_type_void();
    attributes(s, k);
    kf_sema_block(s, k->c);
    kf_sema_pop(s);
    s->func = NULL;
}

static void check_fn(kf_sema *s, kf_node *f)
{
    enter(s, f);
    kf_sema_block(s, f->c);
    if (f->type.kind != KF_TK_VOID && !IS_ERR(f->type) && !kf_sema_returns(f->c))
        kf_sema_error(s, f->loc, "fn '%s' must return a value of type %s on every path: add a 'return' at the end",
                      f->name, TSTR(f->type));
    kf_sema_pop(s);
    s->func = NULL;
}

/* ---- recursion ------------------------------------------------------------------------------ */
/* Depth-first search of the fn call graph with an explicit stack over the
 * calls sorted by caller; a call to a fn on the current path closes a cycle,
 * reported at that call. Each fn's index lives in its aux during the search
 * (reset to 0 afterwards: aux belongs to later phases). */
typedef struct {
    kf_node *fn;
    size_t next_edge;
} dfs_frame;

typedef struct {
    kf_node **fns;
    uint8_t *color;     /* 0 unvisited, 1 on the path, 2 done */
    size_t *first;      /* first call of fn i in the sorted calls */
    dfs_frame *stack;
} call_graph;

static int by_caller(const void *a, const void *b)
{
    uint32_t x = ((const kf_sema_call *)a)->caller->aux, y = ((const kf_sema_call *)b)->caller->aux;
    if (x != y) return x < y ? -1 : 1;
    const kf_sema_call *ca = a, *cb = b;
    return ca->loc.line != cb->loc.line ? (ca->loc.line < cb->loc.line ? -1 : 1) : (ca->loc.col < cb->loc.col ? -1 : ca->loc.col > cb->loc.col);
}

static void report_cycle(kf_sema *s, dfs_frame *stack, size_t depth, kf_node *callee, kf_loc loc)
{
    kf_buf b = {0};
    size_t i = 0;
    while (i < depth && stack[i].fn != callee) i++;
    for (; i < depth; i++) kf_buf_printf(&b, "%s -> ", stack[i].fn->name);
    kf_buf_puts(&b, callee->name);
    kf_sema_error(s, loc, "recursion is not allowed (fns are inlined): %s", b.data ? b.data : "");
    kf_buf_free(&b);
}

static void dfs(kf_sema *s, call_graph *g, kf_node *root)
{
    size_t depth = 0;
    g->stack[depth++] = (dfs_frame){root, g->first[root->aux - 1]};
    g->color[root->aux - 1] = 1;
    while (depth) {
        dfs_frame *f = &g->stack[depth - 1];
        kf_sema_call *c = f->next_edge < s->calls.len ? &s->calls.data[f->next_edge] : NULL;
        if (!c || c->caller != f->fn) {
            g->color[f->fn->aux - 1] = 2;
            depth--;
            continue;
        }
        f->next_edge++;
        uint32_t j = c->callee->aux - 1;
        if (g->color[j] == 1) {
            report_cycle(s, g->stack, depth, c->callee, c->loc);
        } else if (g->color[j] == 0) {
            g->color[j] = 1;
            g->stack[depth++] = (dfs_frame){c->callee, g->first[j]};
        }
    }
}

static void check_recursion(kf_sema *s)
{
    KF_VEC(kf_node *) fns = {0};
    for (kf_node *n = s->module->a; n; n = n->next)
        if (n->kind == KF_N_FN && !KF_VEC_PUSH(&fns, n)) s->nomem = true;
    for (size_t i = 0; i < fns.len; i++) fns.data[i]->aux = (uint32_t)i + 1;
    /* only fn -> fn calls can recurse; kernels cannot be called */
    size_t k = 0;
    for (size_t i = 0; i < s->calls.len; i++)
        if (s->calls.data[i].caller->kind == KF_N_FN && s->calls.data[i].caller->aux) s->calls.data[k++] = s->calls.data[i];
    s->calls.len = k;
    if (k) qsort(s->calls.data, k, sizeof *s->calls.data, by_caller);
    call_graph g = {fns.data, calloc(fns.len + 1, 1), calloc(fns.len + 1, sizeof(size_t)), calloc(fns.len + 1, sizeof(dfs_frame))};
    if (g.color && g.first && g.stack) {
        for (size_t i = 0; i < fns.len; i++) g.first[i] = k;
        for (size_t i = k; i-- > 0;) g.first[s->calls.data[i].caller->aux - 1] = i;
        for (size_t i = 0; i < fns.len; i++)
            if (g.color[i] == 0) dfs(s, &g, fns.data[i]);
    } else {
        s->nomem = true;
    }
    for (size_t i = 0; i < fns.len; i++) fns.data[i]->aux = 0;
    free(g.color);
    free(g.first);
    free(g.stack);
    KF_VEC_FREE(&fns);
}

kf_status kf_sema_check(kf_pass_ctx *cx, kf_node *module, const kf_compile_opts *opts)
{
    if (!module || module->kind != KF_N_MODULE) return KF_ERR_SOURCE;
    uint32_t errors0 = cx->diags->nerrors;
    kf_sema s = {.cx = cx, .opts = opts, .module = module};
    check_names(&s);
    for (kf_node *n = module->a; n; n = n->next)
        if (n->kind == KF_N_FN || n->kind == KF_N_KERNEL) signature(&s, n);
    check_define_names(&s);
    for (kf_node *n = module->a; n; n = n->next)
        if (n->kind == KF_N_CONST) kf_sema_ensure_const(&s, n);
    for (kf_node *n = module->a; n; n = n->next) {
        if (n->kind == KF_N_KERNEL) check_kernel(&s, n);
        else if (n->kind == KF_N_FN) check_fn(&s, n);
    }
    check_recursion(&s);
    bool nomem = s.nomem;
    KF_VEC_FREE(&s.syms);
    kf_sema_map_free(&s.scope);
    kf_sema_map_free(&s.names);
    KF_VEC_FREE(&s.unroll);
    KF_VEC_FREE(&s.guards);
    KF_VEC_FREE(&s.consts);
    KF_VEC_FREE(&s.calls);
    if (nomem) return KF_ERR_NOMEM;
    return cx->diags->nerrors > errors0 ? KF_ERR_SOURCE : KF_OK;
}

bool kf_sema_fold(kf_node *e)
{
    return kf_sema_refold(e);
}
