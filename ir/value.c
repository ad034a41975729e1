/* Host-side values: parsing scalar arguments ("1024", "-3", "0x10",
 * "1e-6", "true") into lane bits, and evaluating a kernel's @schedule grid
 * and shared expressions from its scalar arguments with the kernel's
 * semantics (the same folding code sema uses: cdiv, min/max, conversions),
 * except that an integer operation that would wrap is an error naming the
 * expression: the grid (and the dynamic shared bytes) the runtime launches
 * with are what the expression says, or none. A good evaluation allocates
 * nothing (the text of an expression is made for its error only), and
 * kf_schedule_uses_param says which parameters a schedule reads. */
#include "sema_impl.h"

#include <stdio.h>
#include <string.h>

/* What a message about the value is about: "parameter 'x'", or "the
 * value" when the caller names no parameter. */
static void subject(const char *param, char *buf, size_t n)
{
    if (param) snprintf(buf, n, "parameter '%s'", param);
    else snprintf(buf, n, "the value");
}

static kf_status parse_scalar(const char *text, kf_scalar s, const char *param, uint64_t *bits, kf_error *err)
{
    kf_literal lit;
    kf_cv v;
    const char *why = NULL;
    char p[96];
    subject(param, p, sizeof p);
    if (!kf_literal_parse(text, &lit))
        return kf_error_set(err, KF_ERR_USAGE, "%s: '%s' is not a number, true or false%s", p, text,
                            kf_literal_hint(text));
    if (!kf_literal_to(&lit, s, &v, &why))
        return kf_error_set(err, KF_ERR_USAGE, "%s: %s %s%s%s", p, text, why,
                            strcmp(why, "does not fit") == 0 ? " " : "",
                            strcmp(why, "does not fit") == 0 ? kf_scalar_names[s] : "");
    *bits = kf_cv_to_bits(s, v);
    return KF_OK;
}

bool kf_value_parse_u64(const char *text, size_t len, uint64_t *out)
{
    char buf[96];
    kf_literal lit;
    if (len == 0 || len >= sizeof buf || text[0] == '-' || text[0] == '+') return false;
    memcpy(buf, text, len);
    buf[len] = 0;
    if (!kf_literal_parse(buf, &lit) || lit.kind != 'i') return false;
    *out = lit.mag;
    return true;
}

kf_status kf_value_parse(const char *text, kf_type t, const char *param, kf_value *out, kf_error *err)
{
    char p[96];
    subject(param, p, sizeof p);
    memset(out, 0, sizeof *out);
    out->type = t;
    if (!text) return kf_error_set(err, KF_ERR_USAGE, "%s: no value given", p);
    if (t.kind == KF_TK_SCALAR) return parse_scalar(text, (kf_scalar)t.scalar, param, &out->lane[0], err);
    if (t.kind != KF_TK_VECTOR)
        return kf_error_set(err, KF_ERR_USAGE, "%s is a %s, not a scalar: give it a buffer", p,
                            t.kind == KF_TK_BUFFER ? "buffer" : "non-scalar");
    /* a vector: one value (splat) or one per lane, separated by commas */
    char lanes[16][64];
    unsigned n = 0;
    const char *q = text;
    for (;;) {
        const char *c = strchr(q, ',');
        size_t len = c ? (size_t)(c - q) : strlen(q);
        if (n == 16 || len >= sizeof lanes[0])
            return kf_error_set(err, KF_ERR_USAGE, "%s: too many or too long lane values in '%s'", p, text);
        memcpy(lanes[n], q, len);
        lanes[n++][len] = 0;
        if (!c) break;
        q = c + 1;
    }
    if (n != 1 && n != t.lanes)
        return kf_error_set(err, KF_ERR_USAGE, "%s is %s: give 1 value or %u comma-separated values, found %u",
                            p, kf_type_str(t, (char[48]){0}, 48), t.lanes, n);
    for (unsigned i = 0; i < t.lanes; i++) {
        kf_status st = parse_scalar(lanes[n == 1 ? 0 : i], (kf_scalar)t.scalar, param, &out->lane[i], err);
        if (st != KF_OK) return st;
    }
    return KF_OK;
}

typedef struct {
    const kf_ir_kernel *k;
    const kf_value *args;
    const char *bad_param;
} grid_env;

static bool grid_name(void *ctx, const kf_node *name, kf_cv *out)
{
    grid_env *g = ctx;
    const kf_node *d = name->sym;
    if (!d || d->kind != KF_N_PARAM || !d->name || !g->args) return false;
    for (uint32_t i = 0; i < g->k->nparams; i++) {
        const kf_ir_param *p = &g->k->params[i];
        if (!p->name || strcmp(p->name, d->name) != 0) continue;
        if (p->type.kind != KF_TK_SCALAR || g->args[i].type.kind != KF_TK_SCALAR ||
            g->args[i].type.scalar != p->type.scalar) {
            g->bad_param = p->name;
            return false;
        }
        *out = kf_cv_from_bits((kf_scalar)p->type.scalar, g->args[i].lane[0]);
        return true;
    }
    return false;
}

/* The error for schedule expression e (`what`: "grid.x", "shared") that
 * could not be evaluated: fs says why, bad is the part that overflowed. The
 * expression's text is made only here, so a good evaluation allocates
 * nothing (re-targeting a plan re-evaluates its grid on the hot path). */
static kf_status eval_error(const kf_ir_kernel *k, const kf_node *e, const char *what, const grid_env *env,
                            kf_fold_status fs, const kf_node *bad, kf_error *err)
{
    kf_buf text = {0};
    kf_expr_str(&text, e);
    const char *ts = text.data ? text.data : "";
    kf_status st;
    if (fs == KF_FOLD_DIV0) {
        st = kf_error_set_at(err, KF_ERR_USAGE, e->loc, "kernel '%s': %s = %s divides by zero for these arguments",
                             k->name, what, ts);
    } else if (fs == KF_FOLD_OVERFLOW) {
        kf_buf part = {0};
        char tn[48];
        kf_expr_str(&part, bad->kind == KF_N_CAST ? bad->a : bad);   /* a conversion: the value converted */
        st = kf_error_set_at(err, KF_ERR_USAGE, e->loc,
                             "kernel '%s': %s = %s overflows for these arguments: %s does not fit %s "
                             "(a %.*s expression must not wrap)",
                             k->name, what, ts, part.data ? part.data : "?", kf_type_str(bad->type, tn, sizeof tn),
                             (int)strcspn(what, "."), what);
        kf_buf_free(&part);
    } else if (env->bad_param) {
        st = kf_error_set_at(err, KF_ERR_USAGE, e->loc,
                             "kernel '%s': %s = %s needs a scalar argument of the parameter's type for '%s'", k->name,
                             what, ts, env->bad_param);
    } else if (!env->args && k->nparams) {
        st = kf_error_set_at(err, KF_ERR_USAGE, e->loc,
                             "kernel '%s': %s = %s needs the argument values, and none were given (args is NULL)",
                             k->name, what, ts);
    } else {
        st = kf_error_set_at(err, KF_ERR_USAGE, e->loc, "kernel '%s': %s = %s cannot be evaluated on the host",
                             k->name, what, ts);
    }
    kf_buf_free(&text);
    return st;
}

/* Evaluates schedule expression e (`what` names it in messages: "grid.x",
 * "shared") for the arguments, exactly: integer arithmetic that would wrap
 * is an error naming the whole expression, the part that overflows and its
 * type. */
static kf_status host_eval(const kf_ir_kernel *k, const kf_node *e, const char *what, grid_env *env, kf_cv *v,
                           kf_error *err)
{
    const kf_node *bad = NULL;
    kf_fold_status fs = kf_fold_eval(e, grid_name, env, true, v, &bad);
    return fs == KF_FOLD_OK ? KF_OK : eval_error(k, e, what, env, fs, bad, err);
}

static kf_status grid_dim(const kf_ir_kernel *k, unsigned i, grid_env *env, uint32_t *dim, kf_error *err)
{
    static const char *const dims[] = {"grid.x", "grid.y", "grid.z"};
    const kf_node *e = k->sched.grid[i];
    kf_cv v;
    if (!e) return kf_error_set(err, KF_ERR_USAGE, "kernel '%s': %s has no expression", k->name, dims[i]);
    kf_status st = host_eval(k, e, dims[i], env, &v, err);
    uint64_t lim = i == 0 ? INT32_MAX : 65535;
    if (st != KF_OK) return st;
    if (kf_type_is_int(e->type) && !(kf_type_is_signed(e->type) && v.i < 1) && v.u != 0 && v.u <= lim) {
        *dim = (uint32_t)v.u;
        return KF_OK;
    }
    char vb[32];
    kf_buf text = {0};
    kf_expr_str(&text, e);
    kf_cv_str((kf_scalar)e->type.scalar, v, vb, sizeof vb);
    st = kf_error_set_at(err, KF_ERR_USAGE, e->loc, "kernel '%s': %s = %s is %s for these arguments; it must be in 1..%llu",
                         k->name, dims[i], text.data ? text.data : "", vb, (unsigned long long)lim);
    kf_buf_free(&text);
    return st;
}

kf_status kf_schedule_shared(const kf_ir_kernel *k, const kf_value *args, uint32_t *bytes, kf_error *err)
{
    if (!k || !bytes) return kf_error_set(err, KF_ERR_USAGE, "kf_schedule_shared: no kernel or result given");
    *bytes = 0;
    const kf_node *e = k->sched.shared;
    if (!e) return KF_OK;
    grid_env env = {k, args, NULL};
    kf_cv v;
    kf_status st = host_eval(k, e, "shared", &env, &v, err);
    if (st != KF_OK) return st;
    if (e->type.kind != KF_TK_SCALAR || e->type.scalar != KF_S_U32) {
        kf_buf text = {0};
        kf_expr_str(&text, e);
        st = kf_error_set_at(err, KF_ERR_USAGE, e->loc, "kernel '%s': shared = %s is not u32 bytes", k->name,
                             text.data ? text.data : "");
        kf_buf_free(&text);
        return st;
    }
    *bytes = (uint32_t)v.u;
    return KF_OK;
}

/* True when e (or a tuple element after it) reads the parameter `name`. */
static bool reads_param(const kf_node *e, const char *name)
{
    for (; e; e = e->next) {
        if (e->is_const) continue;
        if (e->kind == KF_N_NAME && e->sym && e->sym->kind == KF_N_PARAM && e->sym->name && !strcmp(e->sym->name, name))
            return true;
        if (reads_param(e->a, name) || reads_param(e->b, name) || reads_param(e->c, name) || reads_param(e->d, name))
            return true;
    }
    return false;
}

bool kf_schedule_uses_param(const kf_ir_kernel *k, uint32_t index)
{
    if (!k || index >= k->nparams || !k->params[index].name) return false;
    const char *name = k->params[index].name;
    for (uint32_t i = 0; i < k->sched.ngrid && i < 3; i++)
        if (reads_param(k->sched.grid[i], name)) return true;
    return reads_param(k->sched.shared, name);
}

kf_status kf_schedule_grid(const kf_ir_kernel *k, const kf_value *args, uint64_t count,
                           uint32_t grid[3], kf_error *err)
{
    if (!k || !grid) return kf_error_set(err, KF_ERR_USAGE, "kf_schedule_grid: no kernel or grid given");
    grid[0] = grid[1] = grid[2] = 1;
    if (k->sched.ngrid == 0) {
        uint64_t bx = k->sched.block[0] ? k->sched.block[0] : 1;
        if (count == 0)
            return kf_error_set(err, KF_ERR_USAGE, "kernel '%s' has no grid expression: give an element count greater than 0",
                                k->name);
        uint64_t g = count / bx + (count % bx != 0);
        if (g > INT32_MAX)
            return kf_error_set(err, KF_ERR_USAGE, "kernel '%s': count %llu needs %llu blocks of %llu, over the limit %d",
                                k->name, (unsigned long long)count, (unsigned long long)g, (unsigned long long)bx, INT32_MAX);
        grid[0] = (uint32_t)g;
        return KF_OK;
    }
    if (k->sched.ngrid > 3) return kf_error_set(err, KF_ERR_USAGE, "kernel '%s': more than 3 grid expressions", k->name);
    grid_env env = {k, args, NULL};
    for (unsigned i = 0; i < k->sched.ngrid; i++) {
        kf_status st = grid_dim(k, i, &env, &grid[i], err);
        if (st != KF_OK) return st;
    }
    return KF_OK;
}
