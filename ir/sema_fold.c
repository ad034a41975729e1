/* Exact constant arithmetic with the runtime semantics of the contract
 * (common rules of every back end): integers wrap in their width, shifts
 * take the amount as unsigned and give 0 / the sign fill past the width,
 * INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0, floats are rounded to their
 * type after every operation (f16/bf16 through numeric.h, one RNE rounding),
 * min/max ignore NaN, cdiv rounds up. Sema folds constants with it and
 * value.c evaluates @schedule grid expressions on the host with it, so the
 * host and the kernel agree bit for bit.
 *
 * Values are kf_cv: integers sign/zero extended to 64 bits, floats as the
 * double already rounded to their type, bools 0/1. */
#include "sema_impl.h"
#include "numeric.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool cls_int(kf_scalar s) { char c = kf_scalar_class[s]; return c == 'i' || c == 'u' || c == 'I'; }
static bool cls_float(kf_scalar s) { char c = kf_scalar_class[s]; return c == 'f' || c == 'F'; }
static bool cls_signed(kf_scalar s) { char c = kf_scalar_class[s]; return c == 'i' || c == 'I'; }
static unsigned width(kf_scalar s) { return 8u * kf_scalar_bytes[s]; }

uint64_t kf_fold_wrap(kf_scalar s, uint64_t v)
{
    if (s == KF_S_BOOL) return v != 0;
    unsigned w = width(s);
    if (w >= 64) return v;
    uint64_t m = (UINT64_C(1) << w) - 1;
    v &= m;
    if (cls_signed(s) && ((v >> (w - 1)) & 1)) v |= ~m;
    return v;
}

double kf_fold_round(kf_scalar s, double x)
{
    switch (s) {
    case KF_S_F16:
    case KF_S_BF16:
    case KF_S_F32: return kf_bits_to_double(s, kf_bits_from_double(s, x));
    default: return x;
    }
}

kf_cv kf_fold_convert(kf_scalar from, kf_scalar to, kf_cv v)
{
    kf_cv r = {0};
    bool fint = !cls_float(from);
    if (to == KF_S_BOOL) {
        r.u = fint ? v.u != 0 : v.f != 0;
    } else if (cls_float(to)) {
        uint64_t bits;
        if (to == KF_S_UFLOAT) to = KF_S_F64;
        if (!fint) bits = kf_bits_from_double(to, v.f);
        else if (cls_signed(from)) bits = kf_bits_from_i64(to, v.i);
        else bits = kf_bits_from_u64(to, v.u);
        r.f = kf_bits_to_double(to, bits);
    } else {
        kf_scalar t = to == KF_S_UINT ? KF_S_I64 : to;
        r.u = kf_fold_wrap(t, fint ? v.u : kf_bits_from_double(t, v.f));
    }
    return r;
}


static uint64_t shift(kf_scalar s, kf_op op, uint64_t a, uint64_t b)
{
    unsigned w = width(s);
    uint64_t amt = w >= 64 ? b : b & ((UINT64_C(1) << w) - 1);
    bool neg = cls_signed(s) && (int64_t)a < 0;
    if (op == KF_OP_SHL) return amt >= w ? 0 : kf_fold_wrap(s, a << amt);
    if (amt >= w) return neg ? UINT64_MAX : 0;
    if (!cls_signed(s)) return a >> amt;
    return neg ? ~(~a >> amt) : a >> amt;
}

static kf_fold_status int_binary(kf_scalar s, kf_op op, uint64_t a, uint64_t b, uint64_t *r)
{
    bool sg = cls_signed(s);
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    switch (op) {
    case KF_OP_ADD: *r = a + b; break;
    case KF_OP_SUB: *r = a - b; break;
    case KF_OP_MUL: *r = a * b; break;
    case KF_OP_DIV:
        if (b == 0) return KF_FOLD_DIV0;
        if (sg) *r = (sb == -1) ? 0 - a : (uint64_t)(sa / sb);
        else *r = a / b;
        break;
    case KF_OP_REM:
        if (b == 0) return KF_FOLD_DIV0;
        if (sg) *r = (sb == -1) ? 0 : (uint64_t)(sa % sb);
        else *r = a % b;
        break;
    case KF_OP_AND: *r = a & b; break;
    case KF_OP_OR: *r = a | b; break;
    case KF_OP_XOR: *r = a ^ b; break;
    case KF_OP_SHL: case KF_OP_SHR: *r = shift(s, op, a, b); return KF_FOLD_OK;
    case KF_OP_EQ: *r = a == b; return KF_FOLD_OK;
    case KF_OP_NE: *r = a != b; return KF_FOLD_OK;
    case KF_OP_LT: *r = sg ? sa < sb : a < b; return KF_FOLD_OK;
    case KF_OP_LE: *r = sg ? sa <= sb : a <= b; return KF_FOLD_OK;
    case KF_OP_GT: *r = sg ? sa > sb : a > b; return KF_FOLD_OK;
    case KF_OP_GE: *r = sg ? sa >= sb : a >= b; return KF_FOLD_OK;
    default: return KF_FOLD_NO;
    }
    *r = kf_fold_wrap(s, *r);
    return KF_FOLD_OK;
}

static kf_fold_status float_binary(kf_scalar s, kf_op op, double a, double b, kf_cv *r)
{
    switch (op) {
    case KF_OP_ADD: r->f = kf_fold_round(s, a + b); break;
    case KF_OP_SUB: r->f = kf_fold_round(s, a - b); break;
    case KF_OP_MUL: r->f = kf_fold_round(s, a * b); break;
    case KF_OP_DIV: r->f = kf_fold_round(s, a / b); break;
    case KF_OP_EQ: r->u = a == b; break;
    case KF_OP_NE: r->u = a != b; break;
    case KF_OP_LT: r->u = a < b; break;
    case KF_OP_LE: r->u = a <= b; break;
    case KF_OP_GT: r->u = a > b; break;
    case KF_OP_GE: r->u = a >= b; break;
    default: return KF_FOLD_NO;
    }
    return KF_FOLD_OK;
}

kf_fold_status kf_fold_binary(kf_scalar s, kf_op op, kf_cv a, kf_cv b, kf_cv *out)
{
    kf_cv r = {0};
    kf_fold_status st;
    if (s == KF_S_BOOL) {
        switch (op) {
        case KF_OP_EQ: r.u = a.u == b.u; break;
        case KF_OP_NE: r.u = a.u != b.u; break;
        case KF_OP_LAND: r.u = a.u && b.u; break;
        case KF_OP_LOR: r.u = a.u || b.u; break;
        default: return KF_FOLD_NO;
        }
        st = KF_FOLD_OK;
    } else if (cls_int(s)) {
        st = int_binary(s == KF_S_UINT ? KF_S_I64 : s, op, a.u, b.u, &r.u);
    } else if (cls_float(s)) {
        st = float_binary(s, op, a.f, b.f, &r);
    } else {
        return KF_FOLD_NO;
    }
    if (st == KF_FOLD_OK) *out = r;
    return st;
}

kf_fold_status kf_fold_unary(kf_scalar s, kf_op op, kf_cv a, kf_cv *out)
{
    if (op == KF_OP_NOT && s == KF_S_BOOL) out->u = !a.u;
    else if (op == KF_OP_NEG && cls_int(s)) out->u = kf_fold_wrap(s, 0 - a.u);
    else if (op == KF_OP_NEG && cls_float(s)) out->f = -a.f;
    else if (op == KF_OP_BNOT && cls_int(s)) out->u = kf_fold_wrap(s, ~a.u);
    else return KF_FOLD_NO;
    return KF_FOLD_OK;
}

static kf_cv int_minmax(kf_scalar s, bool max, kf_cv a, kf_cv b)
{
    bool lt = cls_signed(s) ? a.i < b.i : a.u < b.u;
    return (lt != max) ? a : b;
}

static kf_cv float_minmax(bool max, kf_cv a, kf_cv b)
{
    kf_cv r;
    r.f = max ? kf_fmax(a.f, b.f) : kf_fmin(a.f, b.f);
    return r;
}

static kf_cv minmax(kf_scalar s, bool max, kf_cv a, kf_cv b)
{
    return cls_float(s) ? float_minmax(max, a, b) : int_minmax(s, max, a, b);
}

static uint64_t bits_of(kf_scalar s, uint64_t v)
{
    unsigned w = width(s);
    return w >= 64 ? v : v & ((UINT64_C(1) << w) - 1);
}

static kf_fold_status cdiv(kf_scalar s, kf_cv a, kf_cv b, kf_cv *r)
{
    if (b.u == 0) return KF_FOLD_DIV0;
    if (!cls_signed(s)) {
        r->u = a.u / b.u + (a.u % b.u != 0);
        return KF_FOLD_OK;
    }
    if (b.i == -1) {
        r->u = kf_fold_wrap(s, 0 - a.u);
        return KF_FOLD_OK;
    }
    int64_t q = a.i / b.i;
    if (a.i % b.i != 0 && ((a.i < 0) == (b.i < 0))) q++;
    r->u = kf_fold_wrap(s, (uint64_t)q);
    return KF_FOLD_OK;
}

static uint64_t mul_hi(kf_scalar s, kf_cv a, kf_cv b)
{
    unsigned w = width(s);
    if (cls_signed(s)) {
        __int128 p = (__int128)a.i * (__int128)b.i;
        return kf_fold_wrap(s, (uint64_t)(p >> w));
    }
    unsigned __int128 p = (unsigned __int128)a.u * (unsigned __int128)b.u;
    return kf_fold_wrap(s, (uint64_t)(p >> w));
}

static kf_fold_status int_builtin(kf_builtin bi, kf_scalar s, const kf_cv *x, kf_cv *r)
{
    uint64_t v = bits_of(s, x[0].u);
    unsigned w = width(s), n = 0;
    switch (bi) {
    case KF_BI_ABS: r->u = (cls_signed(s) && x[0].i < 0) ? kf_fold_wrap(s, 0 - x[0].u) : x[0].u; break;
    case KF_BI_CLZ:
        while (n < w && !((v >> (w - 1 - n)) & 1)) n++;
        r->u = n;
        break;
    case KF_BI_POPC:
        for (; v; v &= v - 1) n++;
        r->u = n;
        break;
    case KF_BI_CDIV: return cdiv(s, x[0], x[1], r);
    case KF_BI_MUL_HI: r->u = mul_hi(s, x[0], x[1]); break;
    case KF_BI_BFE:
        if (x[1].u > 255 || x[2].u > 255) return KF_FOLD_NO;   /* undefined: left to run time */
        r->u = kf_fold_wrap(s, kf_bfe(v, w, cls_signed(s), (uint32_t)x[1].u, (uint32_t)x[2].u));
        break;
    case KF_BI_BFI:
        if (x[2].u > 255 || x[3].u > 255) return KF_FOLD_NO;
        r->u = kf_fold_wrap(s, kf_bfi(v, bits_of(s, x[1].u), w, (uint32_t)x[2].u, (uint32_t)x[3].u));
        break;
    case KF_BI_PRMT: r->u = kf_prmt((uint32_t)x[0].u, (uint32_t)x[1].u, (uint32_t)x[2].u); break;
    default: return KF_FOLD_NO;
    }
    return KF_FOLD_OK;
}

static kf_fold_status float_builtin(kf_builtin bi, kf_scalar s, const kf_cv *x, kf_cv *r)
{
    double v = x[0].f;
    switch (bi) {
    case KF_BI_ABS: r->f = fabs(v); break;
    case KF_BI_FLOOR: r->f = floor(v); break;
    case KF_BI_CEIL: r->f = ceil(v); break;
    case KF_BI_TRUNC: r->f = trunc(v); break;
    case KF_BI_ROUND: r->f = round(v); break;
    case KF_BI_SQRT: r->f = kf_fold_round(s, sqrt(v)); break;
    case KF_BI_FMA:
        if (s == KF_S_F64) r->f = fma(v, x[1].f, x[2].f);
        else if (s == KF_S_F32) r->f = fmaf((float)v, (float)x[1].f, (float)x[2].f);
        else return KF_FOLD_NO;
        break;
    default: return KF_FOLD_NO;
    }
    return KF_FOLD_OK;
}

kf_fold_status kf_fold_builtin(kf_builtin bi, kf_scalar s, const kf_cv *x, unsigned n, kf_cv *out)
{
    kf_cv r = {0};
    kf_fold_status st = KF_FOLD_OK;
    if (bi == KF_BI_SELECT && n == 3) r = x[0].u ? x[1] : x[2];
    else if ((bi == KF_BI_MIN || bi == KF_BI_MAX) && n == 2) r = minmax(s, bi == KF_BI_MAX, x[0], x[1]);
    else if (bi == KF_BI_CLAMP && n == 3) r = minmax(s, false, minmax(s, true, x[0], x[1]), x[2]);
    else if (cls_int(s) && s != KF_S_UINT) st = int_builtin(bi, s, x, &r);
    else if (cls_float(s) && s != KF_S_UFLOAT) st = float_builtin(bi, s, x, &r);
    else st = KF_FOLD_NO;
    if (st == KF_FOLD_OK) *out = r;
    return st;
}

kf_cv kf_cv_from_bits(kf_scalar s, uint64_t bits)
{
    kf_cv v;
    if (cls_float(s)) v.f = kf_bits_to_double(s, bits);
    else v.u = kf_fold_wrap(s, bits);
    return v;
}

uint64_t kf_cv_to_bits(kf_scalar s, kf_cv v)
{
    if (cls_float(s)) return kf_bits_from_double(s, v.f);
    return bits_of(s, v.u);
}

const char *kf_cv_str(kf_scalar s, kf_cv v, char *buf, size_t size)
{
    if (s == KF_S_BOOL) snprintf(buf, size, "%s", v.u ? "true" : "false");
    else if (cls_float(s)) {
        snprintf(buf, size, "%g", v.f);
        if (!strpbrk(buf, ".eni") && strlen(buf) + 3 <= size) strcat(buf, ".0");
    }
    else if (cls_signed(s)) snprintf(buf, size, "%lld", (long long)v.i);
    else snprintf(buf, size, "%llu", (unsigned long long)v.u);
    return buf;
}

/* ---- literal text ---------------------------------------------------------- */
static int digit(char c, unsigned base)
{
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
    return d < (int)base ? d : -1;
}

static bool parse_int(const char *p, kf_literal *out)
{
    unsigned base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) base = 16, p += 2;
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) base = 2, p += 2;
    else if (p[0] == '0' && p[1]) return false;   /* 010: no octal, as in the language */
    uint64_t v = 0;
    bool any = false;
    for (; *p; p++) {
        if (*p == '_' && any && digit(p[1], base) >= 0) continue;   /* `_` between digits only */
        int d = digit(*p, base);
        if (d < 0) return false;
        if (v > (UINT64_MAX - (uint64_t)d) / base) return false;
        v = v * base + (uint64_t)d;
        any = true;
    }
    out->kind = 'i';
    out->mag = v;
    return any;
}

static bool parse_float(const char *p, kf_literal *out)
{
    char tmp[128];
    size_t n = 0;
    bool digits = false;
    for (; *p; p++) {
        if (*p == '_') continue;
        if (!strchr("0123456789.eE+-", *p) || n + 1 >= sizeof tmp) return false;
        digits |= *p >= '0' && *p <= '9';
        tmp[n++] = *p;
    }
    tmp[n] = 0;
    if (!digits) return false;
    char *end;
    out->kind = 'f';
    out->f = strtod(tmp, &end);
    return *end == 0;
}

const char *kf_literal_hint(const char *text)
{
    const char *d = text + (text[0] == '-' || text[0] == '+');
    return *d >= '0' && *d <= '9' ? " (numbers are " KF_NUMBER_SYNTAX ")" : "";
}

bool kf_literal_parse(const char *text, kf_literal *out)
{
    memset(out, 0, sizeof *out);
    if (!text) return false;
    if (!strcmp(text, "true") || !strcmp(text, "false")) {
        out->kind = 'b';
        out->mag = text[0] == 't';
        return true;
    }
    bool neg = text[0] == '-';
    const char *p = text + (neg || text[0] == '+');
    if (!strcmp(p, "inf") || !strcmp(p, "nan")) {
        out->kind = 'f';
        out->f = p[0] == 'i' ? INFINITY : NAN;
    } else if (!(p[0] == '0' && strchr("xXbB", p[1]) && p[1]) && strpbrk(p, ".eE")) {
        if (!parse_float(p, out)) return false;
    } else if (!parse_int(p, out)) {
        return false;
    }
    if (out->kind == 'f' && neg) out->f = -out->f;
    out->neg = neg && out->mag != 0;
    return true;
}

static bool int_fits(kf_scalar s, bool neg, uint64_t mag)
{
    unsigned w = width(s);
    if (!cls_signed(s)) return !neg && (w >= 64 || mag < (UINT64_C(1) << w));
    uint64_t lim = UINT64_C(1) << (w - 1);
    return neg ? mag <= lim : mag < lim;
}

bool kf_literal_to(const kf_literal *lit, kf_scalar s, kf_cv *out, const char **why)
{
    *why = NULL;
    if (s == KF_S_BOOL || lit->kind == 'b') {
        if (s != KF_S_BOOL || lit->kind != 'b') return *why = s == KF_S_BOOL ? "is not true or false" : "is a bool", false;
        out->u = lit->mag;
        return true;
    }
    if (cls_int(s)) {
        if (lit->kind == 'f') return *why = "is not an integer", false;
        if (!int_fits(s, lit->neg, lit->mag)) return *why = "does not fit", false;
        out->u = lit->neg ? 0 - lit->mag : lit->mag;
        return true;
    }
    if (lit->kind == 'i') {
        kf_cv v;
        v.u = lit->neg ? 0 - lit->mag : lit->mag;
        if (lit->neg) *out = kf_fold_convert(KF_S_I64, s, v);
        else *out = kf_fold_convert(KF_S_U64, s, v);
    } else {
        out->f = kf_fold_round(s, lit->f);
    }
    if (isinf(out->f) && !(lit->kind == 'f' && isinf(lit->f))) return *why = "does not fit", false;
    return true;
}

/* ---- evaluation of typed scalar expressions ------------------------------- */
typedef struct {
    kf_eval_name_fn name;
    void *ctx;
    bool exact;          /* integer results must not wrap */
    const kf_node **bad;
} eval_env;

__extension__ typedef __int128 i128;

/* The true value of an integer cval of scalar s. */
static i128 exact_of(kf_scalar s, kf_cv v) { return cls_signed(s) ? (i128)v.i : (i128)v.u; }

static bool fits(kf_scalar s, i128 r)
{
    i128 top = (i128)1 << (width(s) - cls_signed(s));
    return r < top && r >= (cls_signed(s) ? -top : 0);
}

/* Whether a op b in integer scalar s gives its true result (no wrap). */
static bool int_exact(kf_scalar s, kf_op op, kf_cv a, kf_cv b)
{
    i128 x = exact_of(s, a), y = exact_of(s, b), r;
    switch (op) {
    case KF_OP_ADD: r = x + y; break;
    case KF_OP_SUB: r = x - y; break;
    case KF_OP_MUL: if (__builtin_mul_overflow(x, y, &r)) return false; break;
    case KF_OP_SHL:
        if (b.u >= width(s)) return a.u == 0;
        if (__builtin_mul_overflow(x, (i128)1 << b.u, &r)) return false;
        break;
    case KF_OP_DIV: if (y == 0) return true; r = x / y; break;
    default: return true;
    }
    return fits(s, r);
}

/* Whether converting v from `from` to the integer scalar `to` keeps it. */
static bool convert_exact(kf_scalar from, kf_scalar to, kf_cv v)
{
    if (!cls_int(to) || from == KF_S_BOOL) return true;
    if (cls_int(from)) return fits(to, exact_of(from, v));
    double t = trunc(v.f), top = ldexp(1.0, (int)(width(to) - cls_signed(to)));
    return isfinite(t) && t < top && t >= (cls_signed(to) ? -top : 0.0);
}

/* Whether the builtin call e of integer scalar s on args gives its true result. */
static bool builtin_exact(const kf_node *e, kf_scalar s, const kf_cv *args)
{
    if (!cls_int(s)) return true;
    i128 x = exact_of(s, args[0]);
    if (e->op == KF_BI_ABS) return fits(s, x < 0 ? -x : x);
    if (e->op == KF_BI_CDIV) return !(cls_signed(s) && args[1].i == -1) || fits(s, -x);
    return true;
}

static kf_fold_status eval(const kf_node *e, eval_env *env, kf_cv *out);

static kf_fold_status eval_call(const kf_node *e, eval_env *env, kf_cv *out)
{
    kf_cv args[4];
    unsigned n = 0;
    kf_scalar s = KF_S_NONE;
    for (const kf_node *a = e->b; a; a = a->next) {
        if (n == 4) return KF_FOLD_NO;
        kf_fold_status st = eval(a, env, &args[n]);
        if (st != KF_FOLD_OK) return st;
        if (n == 0 || (e->op == KF_BI_SELECT && n == 1)) s = (kf_scalar)a->type.scalar;
        n++;
    }
    kf_fold_status st = kf_fold_builtin((kf_builtin)e->op, s, args, n, out);
    if (st == KF_FOLD_OK && env->exact && !builtin_exact(e, s, args)) st = KF_FOLD_OVERFLOW;
    if (st != KF_FOLD_OK) *env->bad = e;
    return st;
}

static kf_fold_status eval(const kf_node *e, eval_env *env, kf_cv *out)
{
    kf_cv a, b;
    kf_scalar s;
    kf_fold_status st;
    if (e->is_const) {
        out->u = e->cval.u;
        return KF_FOLD_OK;
    }
    if (e->type.kind != KF_TK_SCALAR) return *env->bad = e, KF_FOLD_NO;
    switch (e->kind) {
    case KF_N_NAME:
        if (!env->name || !env->name(env->ctx, e, out)) return *env->bad = e, KF_FOLD_NO;
        return KF_FOLD_OK;
    case KF_N_BINARY:
        if ((st = eval(e->a, env, &a)) != KF_FOLD_OK || (st = eval(e->b, env, &b)) != KF_FOLD_OK) return st;
        s = (kf_scalar)e->a->type.scalar;
        st = kf_fold_binary(s, (kf_op)e->op, a, b, out);
        if (st == KF_FOLD_OK && env->exact && cls_int(s) && !int_exact(s, (kf_op)e->op, a, b)) st = KF_FOLD_OVERFLOW;
        break;
    case KF_N_UNARY:
        if ((st = eval(e->a, env, &a)) != KF_FOLD_OK) return st;
        s = (kf_scalar)e->a->type.scalar;
        st = kf_fold_unary(s, (kf_op)e->op, a, out);
        if (st == KF_FOLD_OK && env->exact && e->op == KF_OP_NEG && cls_int(s) && !fits(s, -exact_of(s, a)))
            st = KF_FOLD_OVERFLOW;
        break;
    case KF_N_CAST:
        if ((st = eval(e->a, env, &a)) != KF_FOLD_OK) return st;
        s = (kf_scalar)e->a->type.scalar;
        *out = kf_fold_convert(s, (kf_scalar)e->type.scalar, a);
        if (env->exact && !convert_exact(s, (kf_scalar)e->type.scalar, a)) return *env->bad = e, KF_FOLD_OVERFLOW;
        return KF_FOLD_OK;
    case KF_N_CALL:
        if (e->sym) return *env->bad = e, KF_FOLD_NO;
        return eval_call(e, env, out);
    default: return *env->bad = e, KF_FOLD_NO;
    }
    if (st != KF_FOLD_OK) *env->bad = e;
    return st;
}

kf_fold_status kf_fold_eval(const kf_node *e, kf_eval_name_fn name, void *ctx, bool exact, kf_cv *out,
                            const kf_node **bad)
{
    const kf_node *dummy = NULL;
    eval_env env = {name, ctx, exact, bad ? bad : &dummy};
    return eval(e, &env, out);
}

/* ---- expression text -------------------------------------------------------- */
static void args_str(kf_buf *out, const kf_node *a)
{
    for (; a; a = a->next) {
        kf_expr_str(out, a);
        if (a->next) kf_buf_puts(out, ", ");
    }
}

void kf_expr_str(kf_buf *out, const kf_node *e)
{
    char tb[48];
    switch (e->kind) {
    case KF_N_INT: kf_buf_printf(out, "%llu", (unsigned long long)e->ival); break;
    case KF_N_FLOAT: kf_buf_printf(out, "%g", e->fval); break;
    case KF_N_BOOL: kf_buf_puts(out, e->ival ? "true" : "false"); break;
    case KF_N_NAME: kf_buf_puts(out, e->name ? e->name : "?"); break;
    case KF_N_TYPE: kf_buf_puts(out, kf_type_str(e->type, tb, sizeof tb)); break;
    case KF_N_BINARY:
        kf_buf_puts(out, "(");
        kf_expr_str(out, e->a);
        kf_buf_printf(out, " %s ", kf_op_spelling[e->op < KF_OP_COUNT ? e->op : 0]);
        kf_expr_str(out, e->b);
        kf_buf_puts(out, ")");
        break;
    case KF_N_UNARY:
        kf_buf_puts(out, kf_op_spelling[e->op < KF_OP_COUNT ? e->op : 0]);
        kf_expr_str(out, e->a);
        break;
    case KF_N_CAST:
        kf_buf_puts(out, "(");
        kf_expr_str(out, e->a);
        kf_buf_printf(out, " as %s)", kf_type_str(e->type, tb, sizeof tb));
        break;
    case KF_N_CALL:
        kf_expr_str(out, e->a);
        kf_buf_puts(out, "(");
        args_str(out, e->b);
        kf_buf_puts(out, ")");
        break;
    case KF_N_INDEX:
        kf_expr_str(out, e->a);
        kf_buf_puts(out, "[");
        kf_expr_str(out, e->b);
        kf_buf_puts(out, "]");
        break;
    case KF_N_MEMBER:
        kf_expr_str(out, e->a);
        kf_buf_printf(out, ".%s", e->name && e->name[0] == '.' ? e->name + 1 : e->name ? e->name : "?");
        break;
    default: kf_buf_puts(out, "<expr>"); break;
    }
}
