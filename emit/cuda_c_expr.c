/* Spelling of CUDA-C types, literals and one-lane expressions for the
 * CUDA-C emitter. Everything here takes operands already spelled as C
 * expressions (a name, `v.v[2]`, a literal) and returns the expression for
 * one lane of one IR operation, following the language contract:
 *
 *  - integer + - * wrap: 8/16-bit and signed types compute in unsigned
 *    (C would promote to int and overflow is undefined), then cast back;
 *  - shifts, signed division and cdiv go through prelude helpers so that no
 *    C undefined behaviour leaks through;
 *  - f32/f64 + - * / use the __f*_rn / __d*_rn intrinsics, which the
 *    compiler never contracts into an fma, so the results are the IEEE ones
 *    the interpreter computes, whatever NVRTC's --fmad setting;
 *  - f16/bf16 compute through f32 and round once to the type.
 *
 * The tables below hold the spellings; the functions only pick a row. */
#include "cuda_c.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* X(scalar, C type, unsigned type used for wrapping arithmetic) */
#define CU_SCALARS(X)                                              \
    X(KF_S_NONE, "void", "unsigned")                               \
    X(KF_S_BOOL, "bool", "bool")                                   \
    X(KF_S_I8, "signed char", "unsigned")                          \
    X(KF_S_U8, "unsigned char", "unsigned")                        \
    X(KF_S_I16, "short", "unsigned")                               \
    X(KF_S_U16, "unsigned short", "unsigned")                      \
    X(KF_S_I32, "int", "unsigned")                                 \
    X(KF_S_U32, "unsigned", "unsigned")                            \
    X(KF_S_I64, "long long", "unsigned long long")                 \
    X(KF_S_U64, "unsigned long long", "unsigned long long")        \
    X(KF_S_F16, "kf_f16", "")                                      \
    X(KF_S_BF16, "kf_bf16", "")                                    \
    X(KF_S_F32, "float", "")                                       \
    X(KF_S_F64, "double", "")                                      \
    X(KF_S_UINT, "long long", "unsigned long long")                \
    X(KF_S_UFLOAT, "double", "")

static const char *const c_scalar[KF_S_COUNT] = {
#define X(s, c, u) [s] = c,
    CU_SCALARS(X)
#undef X
};
static const char *const c_unsigned[KF_S_COUNT] = {
#define X(s, c, u) [s] = u,
    CU_SCALARS(X)
#undef X
};

/* Float operators. X(op, f32, f64, f16/bf16 helper suffix) */
#define CU_FLOAT_OPS(X)                          \
    X(KF_OP_ADD, "__fadd_rn", "__dadd_rn", "add") \
    X(KF_OP_SUB, "__fsub_rn", "__dsub_rn", "sub") \
    X(KF_OP_MUL, "__fmul_rn", "__dmul_rn", "mul") \
    X(KF_OP_DIV, "__fdiv_rn", "__ddiv_rn", "div")

typedef struct { const char *f32, *f64, *half; } float_op;
static const float_op float_ops[KF_OP_COUNT] = {
#define X(op, a, b, h) [op] = {a, b, h},
    CU_FLOAT_OPS(X)
#undef X
};

/* Float math. X(builtin, f32, f64, nargs) ; "" = composed in float_math() */
#define CU_FLOAT_MATH(X)                                  \
    X(KF_BI_EXP, "kf_exp_approx", "exp", 1)               \
    X(KF_BI_EXP2, "kf_exp2_approx", "exp2", 1)            \
    X(KF_BI_LOG, "kf_log_approx", "log", 1)               \
    X(KF_BI_LOG2, "kf_log2_approx", "log2", 1)            \
    X(KF_BI_SQRT, "__fsqrt_rn", "__dsqrt_rn", 1)          \
    X(KF_BI_RSQRT, "kf_rsqrt_approx", "rsqrt", 1)         \
    X(KF_BI_SIN, "kf_sin_approx", "sin", 1)               \
    X(KF_BI_COS, "kf_cos_approx", "cos", 1)               \
    X(KF_BI_TANH, "kf_tanh_approx", "tanh", 1)            \
    X(KF_BI_ABS, "kf_abs_f32", "fabs", 1)                 \
    X(KF_BI_FLOOR, "floorf", "floor", 1)                  \
    X(KF_BI_CEIL, "ceilf", "ceil", 1)                     \
    X(KF_BI_TRUNC, "truncf", "trunc", 1)                  \
    X(KF_BI_ROUND, "roundf", "round", 1)                  \
    X(KF_BI_MIN, "fminf", "kf_dmin", 2)                   \
    X(KF_BI_MAX, "fmaxf", "kf_dmax", 2)                   \
    X(KF_BI_FMA, "__fmaf_rn", "__fma_rn", 3)              \
    X(KF_BI_RCP, "kf_rcp_approx", "", 1)                  \
    X(KF_BI_FAST_DIV, "kf_fast_div", "", 2)               \
    X(KF_BI_CLAMP, "", "", 3)

typedef struct { const char *f32, *f64; uint8_t nargs; } float_math_row;
static const float_math_row float_math_rows[KF_BI_COUNT] = {
#define X(b, f, d, n) [b] = {f, d, n},
    CU_FLOAT_MATH(X)
#undef X
};

/* Integer and comparison operator spellings come from kf_op_spelling. */

/* Formats %s, %u and %% without stdio (glibc's vsnprintf dominated the
 * emitter's profile); returns the length, or -1 for any other conversion
 * (the caller then uses vsnprintf). Writes at most cap bytes plus a NUL. */
static int fast_format(char *dst, size_t cap, const char *fmt, va_list ap)
{
    size_t n = 0;
    for (const char *p = fmt; *p; p++) {
        const char *s = NULL;
        char num[16];
        if (*p != '%') {
            if (n < cap) dst[n] = *p;
            n++;
            continue;
        }
        p++;
        if (*p == 's') {
            s = va_arg(ap, const char *);
            if (!s) s = "?";   /* a table hole (malformed IR): visible, never a crash */
        } else if (*p == 'u') {
            unsigned u = va_arg(ap, unsigned);
            char *q = num + sizeof num;
            *--q = 0;
            do *--q = (char)('0' + u % 10); while (u /= 10);
            s = q;
        } else if (*p == '%') s = "%";
        else return -1;
        size_t l = strlen(s);   /* operands are often long nested expressions */
        if (n < cap) memcpy(dst + n, s, l < cap - n ? l : cap - n);
        n += l;
    }
    if (n < cap) dst[n] = 0;
    return n > INT32_MAX ? -1 : (int)n;
}

const char *kf_cu_vstr(kf_cu *c, const char *fmt, va_list ap)
{
    char tmp[512];
    va_list ap2, ap3;
    va_copy(ap2, ap);
    va_copy(ap3, ap);
    int n = fast_format(tmp, sizeof tmp - 1, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    char *s = NULL;
    if (n >= 0 && (size_t)n < sizeof tmp - 1) {
        s = kf_arena_strndup(&c->scratch, tmp, (size_t)n);
    } else if (n >= 0) {
        s = kf_arena_alloc(&c->scratch, (size_t)n + 1);
        if (s) vsnprintf(s, (size_t)n + 1, fmt, ap3);
    }
    va_end(ap3);
    if (!s) c->failed = true;
    return s ? s : "?";
}

const char *kf_cu_str(kf_cu *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *s = kf_cu_vstr(c, fmt, ap);
    va_end(ap);
    return s;
}

static bool is_half(kf_scalar s) { return s == KF_S_F16 || s == KF_S_BF16; }
static char sclass(kf_scalar s) { return kf_scalar_class[s]; }
static unsigned sbits(kf_scalar s) { return 8u * kf_scalar_bytes[s]; }

const char *kf_cu_type(kf_cu *c, kf_type t)
{
    kf_scalar s = (kf_scalar)t.scalar;
    if (s == KF_S_F16) kf_cu_need(c, KF_CU_H_F16);
    if (s == KF_S_BF16) kf_cu_need(c, KF_CU_H_BF16);
    if (t.lanes <= 1 || t.kind == KF_TK_SCALAR) return c_scalar[s] ? c_scalar[s] : "?";
    if (t.lanes <= 16) c->vec_used[s][t.lanes] = true;
    return kf_cu_str(c, "kf_%sx%u", kf_scalar_names[s], t.lanes);
}

/* Shortest decimal that reads back to the same float (or double). */
static const char *float_literal(kf_cu *c, double v, bool single)
{
    char tmp[64];
    for (int prec = single ? 6 : 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (single ? (strtof(tmp, NULL) == (float)v) : (strtod(tmp, NULL) == v)) break;
    }
    if (!strpbrk(tmp, ".en")) strcat(tmp, ".0");
    return kf_cu_str(c, "%s%s", tmp, single ? "f" : "");
}

static double half_bits_to_double(kf_scalar s, uint16_t h)
{
    if (s == KF_S_BF16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Decimal of |v| (with '-' when neg) into buf; returns buf. No stdio: this
 * runs for every integer constant. */
static const char *decimal(char buf[24], uint64_t v, bool neg)
{
    char *p = buf + 23;
    *p = 0;
    do *--p = (char)('0' + v % 10); while (v /= 10);
    if (neg) *--p = '-';
    return p;
}

static const char *int_literal(kf_cu *c, kf_scalar s, uint64_t bits)
{
    unsigned nb = sbits(s);
    uint64_t mask = kf_scalar_ones(s);
    bits &= mask;
    bool neg = sclass(s) == 'i' && (bits >> (nb - 1)) & 1;
    uint64_t mag = neg ? (0ull - (bits | ~mask)) : bits;   /* |value| */
    char buf[24];
    const char *d = decimal(buf, mag, neg);
    switch (s) {
    case KF_S_I32: return neg && mag == 2147483648ull ? "(-2147483647 - 1)" : kf_cu_str(c, "%s", d);
    case KF_S_U32: return kf_cu_str(c, "%su", d);
    case KF_S_I64: return neg && mag == (1ull << 63) ? "(-9223372036854775807ll - 1)" : kf_cu_str(c, "%sll", d);
    case KF_S_U64: return kf_cu_str(c, "%sull", d);
    default: return kf_cu_str(c, "(%s)%s", c_scalar[s], d);
    }
}

const char *kf_cu_literal(kf_cu *c, kf_scalar s, uint64_t bits)
{
    switch (s) {
    case KF_S_BOOL: return (bits & 1) ? "true" : "false";
    case KF_S_F32: {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        if (isnan(f) || isinf(f)) return kf_cu_str(c, "__uint_as_float(0x%08xu)", u);
        return float_literal(c, f, true);
    }
    case KF_S_F64: {
        double d;
        memcpy(&d, &bits, 8);
        if (isnan(d) || isinf(d)) return kf_cu_str(c, "__longlong_as_double(0x%016llxll)", (unsigned long long)bits);
        return float_literal(c, d, false);
    }
    case KF_S_F16:
    case KF_S_BF16: {
        (void)kf_cu_type(c, kf_type_scalar(s));
        double v = half_bits_to_double(s, (uint16_t)bits);
        if (isnan(v) || isinf(v)) return kf_cu_str(c, "%s{0x%04x}", c_scalar[s], (unsigned)(bits & 0xffff));
        return kf_cu_str(c, "%s{0x%04x} /* %.9g */", c_scalar[s], (unsigned)(bits & 0xffff), v);
    }
    default: return int_literal(c, s, bits);
    }
}

/* ---- binary operators ------------------------------------------------- */

static bool is_digits(const char *x)
{
    if (!*x) return false;
    for (; *x; x++)
        if (*x < '0' || *x > '9') return false;
    return true;
}

/* `(T)kf_narrow(e)`: the 8/16-bit result of 32-bit expression e (see
 * KF_CU_H_NARROW: NVVM must not narrow e itself, or a negation inside it
 * reaches ptxas as neg.s16). Wider types: `(T)(e)`. */
static const char *narrowed(kf_cu *c, kf_scalar s, const char *e)
{
    if (sbits(s) >= 32) return kf_cu_str(c, "(%s)(%s)", c_scalar[s], e);
    kf_cu_need(c, KF_CU_H_NARROW);
    return kf_cu_str(c, "(%s)kf_narrow(%s)", c_scalar[s], e);
}

static const char *as_unsigned(kf_cu *c, kf_scalar s, const char *x);

/* The value of a literal shift amount ("5", "5u", "5ll", "5ull"). */
static bool literal_amount(const char *b, unsigned long long *k)
{
    size_t n = strspn(b, "0123456789");
    const char *suffix = b + n;
    if (!n || n > 4 || (*suffix && strcmp(suffix, "u") && strcmp(suffix, "ll") && strcmp(suffix, "ull"))) return false;
    *k = strtoull(b, NULL, 10);
    return true;
}

/* A 32/64-bit shift by a literal amount below the width (ir/opt.c's / % *
 * by powers of two): plain C, nothing to clamp. Signed >> is arithmetic in
 * NVRTC, as kf_shr_i32 already relies on; signed << goes through unsigned. */
static const char *literal_shift(kf_cu *c, kf_op op, kf_scalar s, const char *a, unsigned long long k)
{
    bool sgn = sclass(s) == 'i';
    const char *sfx = sbits(s) == 64 ? "ull" : "u";
    if (op == KF_OP_SHR) return kf_cu_str(c, "%s >> %llu%s", a, k, sfx);
    if (!sgn) return kf_cu_str(c, "%s << %llu%s", a, k, sfx);
    return kf_cu_str(c, "(%s)(%s << %llu%s)", c_scalar[s], as_unsigned(c, s, a), k, sfx);
}

static const char *shift_expr(kf_cu *c, kf_op op, kf_scalar s, const char *a, const char *b)
{
    const char *t = c_scalar[s];
    bool sgn = sclass(s) == 'i';
    unsigned long long k;
    if (sbits(s) >= 32 && literal_amount(b, &k) && k < sbits(s)) return literal_shift(c, op, s, a, k);
    if (sbits(s) == 64) {
        kf_cu_need(c, KF_CU_H_SHIFT64);
        size_t nb = strlen(b);
        bool ll = nb > 2 && !strcmp(b + nb - 2, "ll") && strspn(b, "0123456789") == nb - 2;   /* 40ll */
        const char *amt = s == KF_S_U64 ? b
                          : ll ? kf_cu_str(c, "%.*sull", (int)(nb - 2), b)
                          : kf_cu_str(c, "(unsigned long long)%s", b);
        if (op == KF_OP_SHL)
            return sgn ? kf_cu_str(c, "(long long)kf_shl_u64((unsigned long long)%s, %s)", a, amt)
                       : kf_cu_str(c, "kf_shl_u64(%s, %s)", a, amt);
        return kf_cu_str(c, "kf_shr_%s64(%s, %s)", sgn ? "i" : "u", a, amt);
    }
    kf_cu_need(c, KF_CU_H_SHIFT32);
    /* the amount as unsigned of its own width, then widened */
    const char *amt = s == KF_S_U32 ? b
                      : is_digits(b) ? kf_cu_str(c, "%su", b)
                      : sbits(s) == 32 ? kf_cu_str(c, "(unsigned)%s", b)
                      : kf_cu_str(c, "(unsigned)(unsigned %s)%s", sbits(s) == 8 ? "char" : "short", b);
    if (op == KF_OP_SHL) {
        if (s == KF_S_U32) return kf_cu_str(c, "kf_shl_u32(%s, %s)", a, amt);
        return kf_cu_str(c, "(%s)kf_shl_u32((unsigned)%s, %s)", t, a, amt);
    }
    if (sgn) {
        if (s == KF_S_I32) return kf_cu_str(c, "kf_shr_i32(%s, %s)", a, amt);
        return kf_cu_str(c, "(%s)kf_shr_i32((int)%s, %s)", t, a, amt);
    }
    if (s == KF_S_U32) return kf_cu_str(c, "kf_shr_u32(%s, %s)", a, amt);
    return kf_cu_str(c, "(%s)kf_shr_u32((unsigned)%s, %s)", t, a, amt);
}

static const char *int_divrem(kf_cu *c, kf_op op, kf_scalar s, const char *a, const char *b)
{
    const char *sym = kf_op_spelling[op];
    if (s == KF_S_I32 || s == KF_S_I64) {
        kf_cu_need(c, s == KF_S_I32 ? KF_CU_H_IDIV32 : KF_CU_H_IDIV64);
        return kf_cu_str(c, "kf_%s_%s(%s, %s)", op == KF_OP_DIV ? "div" : "rem", kf_scalar_names[s], a, b);
    }
    if (s == KF_S_U32 || s == KF_S_U64) return kf_cu_str(c, "%s %s %s", a, sym, b);
    /* 8/16-bit: in 32 bits, no overflow; the narrowing wraps -128 / -1. Signed
     * ones through kf_div_n32/kf_rem_n32 (inline PTX: NVVM's narrowed signed
     * division by a power of two lost a lane's sign extension) */
    if (kf_scalar_class[s] == 'i') {
        kf_cu_need(c, KF_CU_H_IDIV32);
        return narrowed(c, s, kf_cu_str(c, "(unsigned)kf_%s_n32((int)%s, (int)%s)", op == KF_OP_DIV ? "div" : "rem", a, b));
    }
    return narrowed(c, s, kf_cu_str(c, "(unsigned)(%s %s %s)", a, sym, b));
}

static const char *bool_binop(kf_cu *c, kf_op op, const char *a, const char *b)
{
    const char *sym = op == KF_OP_AND ? "&&" : op == KF_OP_OR ? "||" : op == KF_OP_XOR ? "!=" : kf_op_spelling[op];
    return kf_cu_str(c, "%s %s %s", a, sym, b);
}

/* `(U)x` for wrapping arithmetic, or `5u` when x is a non-negative decimal
 * literal (`(unsigned)5` reads badly). */
static const char *as_unsigned(kf_cu *c, kf_scalar s, const char *x)
{
    bool wide = sbits(s) == 64;
    if (is_digits(x)) return kf_cu_str(c, "%s%s", x, wide ? "ull" : "u");
    if (wide && strncmp(x, "(long long)", 11) == 0) return kf_cu_str(c, "(unsigned long long)%s", x + 11);
    return kf_cu_str(c, "(%s)%s", c_unsigned[s], x);
}

const char *kf_cu_binop(kf_cu *c, kf_op op, kf_scalar s, const char *a, const char *b)
{
    if (sclass(s) == 'f') {
        const float_op *f = &float_ops[op];
        if (!f->f32) return "?";
        if (s == KF_S_F32) return kf_cu_str(c, "%s(%s, %s)", f->f32, a, b);
        if (s == KF_S_F64) return kf_cu_str(c, "%s(%s, %s)", f->f64, a, b);
        kf_cu_need(c, s == KF_S_F16 ? KF_CU_H_F16_OPS : KF_CU_H_BF16_OPS);
        return kf_cu_str(c, "kf_%s_%s(%s, %s)", kf_scalar_names[s], f->half, a, b);
    }
    if (s == KF_S_BOOL) return bool_binop(c, op, a, b);
    switch (op) {
    case KF_OP_SHL:
    case KF_OP_SHR: return shift_expr(c, op, s, a, b);
    case KF_OP_DIV:
    case KF_OP_REM: return int_divrem(c, op, s, a, b);
    case KF_OP_ADD:
    case KF_OP_SUB:
    case KF_OP_MUL:
        if (s == KF_S_U32 || s == KF_S_U64) return kf_cu_str(c, "%s %s %s", a, kf_op_spelling[op], b);
        return narrowed(c, s, kf_cu_str(c, "%s %s %s", as_unsigned(c, s, a), kf_op_spelling[op], as_unsigned(c, s, b)));
    default:
        if (sbits(s) >= 32) return kf_cu_str(c, "%s %s %s", a, kf_op_spelling[op], b);
        return kf_cu_str(c, "(%s)(%s %s %s)", c_scalar[s], a, kf_op_spelling[op], b);
    }
}

/* Text that can stand inside a C comment: every comment opener or closer
 * in it (a half literal's own comment, a file name) gets a space between
 * its two characters, so the comment neither ends early nor nests. */
const char *kf_cu_comment(kf_cu *c, const char *text)
{
    if (!strstr(text, "*/") && !strstr(text, "/*")) return text;
    size_t n = strlen(text), k = 0;
    char *s = kf_arena_alloc(&c->scratch, 2 * n + 1);
    if (!s) return "...";
    for (size_t i = 0; i < n; i++) {
        s[k++] = text[i];
        if ((text[i] == '*' && text[i + 1] == '/') || (text[i] == '/' && text[i + 1] == '*')) s[k++] = ' ';
    }
    s[k] = 0;
    return s;
}

static bool is_zero_literal(const char *x)
{
    return !strcmp(x, "0u") || !strcmp(x, "0ull") || !strcmp(x, "(unsigned char)0") || !strcmp(x, "(unsigned short)0");
}

const char *kf_cu_cmp(kf_cu *c, kf_op op, kf_scalar s, const char *a, const char *b)
{
    /* unsigned x >= 0 / x < 0 are constants; NVRTC warns about them (#186-D) */
    if (sclass(s) == 'u' && is_zero_literal(b) && (op == KF_OP_GE || op == KF_OP_LT))
        return kf_cu_str(c, "%s /* %s %s 0 */", op == KF_OP_GE ? "true" : "false", kf_cu_comment(c, a), kf_op_spelling[op]);
    if (sclass(s) == 'u' && is_zero_literal(a) && (op == KF_OP_LE || op == KF_OP_GT))
        return kf_cu_str(c, "%s /* 0 %s %s */", op == KF_OP_LE ? "true" : "false", kf_op_spelling[op], kf_cu_comment(c, b));
    if (is_half(s)) {
        const char *w = s == KF_S_F16 ? "kf_f16_to_f32" : "kf_bf16_to_f32";
        return kf_cu_str(c, "%s(%s) %s %s(%s)", w, a, kf_op_spelling[op], w, b);
    }
    return kf_cu_str(c, "%s %s %s", a, kf_op_spelling[op], b);
}

const char *kf_cu_unop(kf_cu *c, kf_op op, kf_scalar s, const char *a)
{
    if (op == KF_OP_NOT) return kf_cu_str(c, "!%s", a);
    if (op == KF_OP_BNOT) {
        if (sbits(s) >= 32) return kf_cu_str(c, "~%s", a);
        return kf_cu_str(c, "(%s)~%s", c_scalar[s], a);
    }
    /* NEG */
    if (is_half(s)) {
        kf_cu_need(c, s == KF_S_F16 ? KF_CU_H_F16_OPS : KF_CU_H_BF16_OPS);
        return kf_cu_str(c, "kf_%s_neg(%s)", kf_scalar_names[s], a);
    }
    if (s == KF_S_F32) {   /* opaque to NVVM, which folds it into selects of constants (KF_CU_H_FSIGN) */
        kf_cu_need(c, KF_CU_H_FSIGN);
        return kf_cu_str(c, "kf_neg_f32(%s)", a);
    }
    if (sclass(s) == 'f') return kf_cu_str(c, a[0] == '-' ? "-(%s)" : "-%s", a);   /* never `--` */
    if (s == KF_S_U64) return kf_cu_str(c, "0ull - %s", a);
    if (s == KF_S_I32 || s == KF_S_U32) {   /* not 0 - a: ptxas drops a neg.s32 merged into a 3-way max (KF_CU_H_ABS) */
        kf_cu_need(c, KF_CU_H_ABS);
        return kf_cu_str(c, "kf_neg_%s(%s)", s == KF_S_I32 ? "i32" : "u32", a);
    }
    return narrowed(c, s, kf_cu_str(c, "0%s - (%s)%s", sbits(s) == 64 ? "ull" : "u", c_unsigned[s], a));
}

/* ---- conversions ---------------------------------------------------------- */

static const char *to_f32(kf_cu *c, kf_scalar s, const char *a)
{
    if (s == KF_S_F16) return kf_cu_str(c, "kf_f16_to_f32(%s)", a);
    if (s == KF_S_BF16) return kf_cu_str(c, "kf_bf16_to_f32(%s)", a);
    return a;
}

/* float (f32 or f64, halves widened first) -> integer: truncate, saturate,
 * NaN -> 0 (the kf_f*_to_* helpers of KF_CU_H_F2I), 8/16-bit through 32. */
static const char *float_to_int(kf_cu *c, kf_scalar from, kf_scalar to, const char *a)
{
    const char *f = from == KF_S_F64 ? "f64" : "f32";
    if (is_half(from)) a = to_f32(c, from, a);
    bool sgn = sclass(to) == 'i';
    kf_cu_need(c, KF_CU_H_F2I);
    if (sbits(to) == 64) return kf_cu_str(c, "kf_%s_to_%s(%s)", f, sgn ? "i64" : "u64", a);
    if (sbits(to) == 32) return kf_cu_str(c, "kf_%s_to_%s(%s)", f, sgn ? "i32" : "u32", a);
    kf_cu_need(c, KF_CU_H_SAT);
    if (sgn) {
        long lo = sbits(to) == 8 ? -128 : -32768, hi = -lo - 1;
        return kf_cu_str(c, "(%s)kf_sat_i32(kf_%s_to_i32(%s), %ld, %ld)", c_scalar[to], f, a, lo, hi);
    }
    return kf_cu_str(c, "(%s)kf_sat_u32(kf_%s_to_u32(%s), %uu)", c_scalar[to], f, a, sbits(to) == 8 ? 255u : 65535u);
}

static const char *int_to_half(kf_cu *c, kf_scalar from, kf_scalar to, const char *a)
{
    const char *tn = kf_scalar_names[to];
    if (from == KF_S_BOOL || sbits(from) <= 16) /* exact in f32: one rounding */
        return kf_cu_str(c, "kf_%s_from_f32((float)%s)", tn, a);
    kf_cu_need(c, to == KF_S_F16 ? KF_CU_H_F16_NARROW : KF_CU_H_BF16_NARROW);
    if (sclass(from) == 'i' && sbits(from) == 32) return kf_cu_str(c, "kf_i32_to_%s(%s)", tn, a);
    if (sclass(from) == 'i') return kf_cu_str(c, "kf_i64_to_%s((long long)%s)", tn, a);
    return kf_cu_str(c, "kf_u64_to_%s((unsigned long long)%s)", tn, a);
}

static const char *float_to_float(kf_cu *c, kf_scalar from, kf_scalar to, const char *a)
{
    if (to == KF_S_F64) {
        if (is_half(from)) return kf_cu_str(c, "(double)%s", to_f32(c, from, a));
        return kf_cu_str(c, "(double)%s", a);
    }
    if (to == KF_S_F32) return from == KF_S_F64 ? kf_cu_str(c, "__double2float_rn(%s)", a) : to_f32(c, from, a);
    /* to f16/bf16 */
    if (from == KF_S_F64) {
        kf_cu_need(c, to == KF_S_F16 ? KF_CU_H_F16_NARROW : KF_CU_H_BF16_NARROW);
        return kf_cu_str(c, "kf_f64_to_%s(%s)", kf_scalar_names[to], a);
    }
    return kf_cu_str(c, "kf_%s_from_f32(%s)", kf_scalar_names[to], to_f32(c, from, a));
}

const char *kf_cu_cvt(kf_cu *c, kf_scalar from, kf_scalar to, const char *a)
{
    (void)kf_cu_type(c, kf_type_scalar(from));
    (void)kf_cu_type(c, kf_type_scalar(to));
    if (from == to) return a;
    char cf = sclass(from), ct = sclass(to);
    if (to == KF_S_BOOL) {
        if (cf == 'f') return kf_cu_str(c, "%s != 0.0f", to_f32(c, from, a));
        return kf_cu_str(c, "%s != 0", a);
    }
    if (cf == 'f' && ct == 'f') return float_to_float(c, from, to, a);
    if (cf == 'f') return float_to_int(c, from, to, a);
    if (ct == 'f') {
        if (to == KF_S_F32) return kf_cu_str(c, "(float)%s", a);
        if (to == KF_S_F64) return kf_cu_str(c, "(double)%s", a);
        return int_to_half(c, from, to, a);
    }
    return kf_cu_str(c, "(%s)%s", c_scalar[to], a);   /* int -> int wraps */
}

/* ---- math ------------------------------------------------------------------ */

/* exact: an f32 min, max or clamp beside a constant -0.0, as compares and
 * selects (kf_fmin_z, kf_fmax_z), as f64's always are */
static const char *float_math(kf_cu *c, kf_builtin b, bool dbl, const char *const x[3], bool exact)
{
    const float_math_row *r = &float_math_rows[b];
    bool mm = b == KF_BI_MIN || b == KF_BI_MAX || b == KF_BI_CLAMP;
    if (mm && (dbl || exact)) kf_cu_need(c, KF_CU_H_DMINMAX);
    const char *fmin = dbl ? "kf_dmin" : exact ? "kf_fmin_z" : "fminf";
    const char *fmax = dbl ? "kf_dmax" : exact ? "kf_fmax_z" : "fmaxf";
    if (b == KF_BI_CLAMP) return kf_cu_str(c, "%s(%s(%s, %s), %s)", fmin, fmax, x[0], x[1], x[2]);
    if (mm) return kf_cu_str(c, "%s(%s, %s)", b == KF_BI_MIN ? fmin : fmax, x[0], x[1]);
    if (!r->f32) return "?";
    const char *fn = dbl ? r->f64 : r->f32;
    if (!dbl && strncmp(fn, "kf_", 3) == 0) kf_cu_need(c, KF_CU_H_APPROX);
    if (r->nargs == 1) return kf_cu_str(c, "%s(%s)", fn, x[0]);
    if (r->nargs == 2) return kf_cu_str(c, "%s(%s, %s)", fn, x[0], x[1]);
    return kf_cu_str(c, "%s(%s, %s, %s)", fn, x[0], x[1], x[2]);
}

/* CUDA's min()/max(), or with opaque kf_min_u32 ... (KF_CU_H_IMINMAX: PTX
 * min/max); 8- and 16-bit values widened to 32 bits and narrowed back. */
static const char *int_minmax(kf_cu *c, kf_builtin b, kf_scalar s, const char *x, const char *y, bool opaque)
{
    const char *fn = b == KF_BI_MIN ? "min" : "max";
    bool sgn = sclass(s) == 'i';
    const char *w = sgn ? "int" : "unsigned";
    if (opaque) {
        kf_cu_need(c, KF_CU_H_IMINMAX);
        fn = kf_cu_str(c, "kf_%s_%s%u", fn, sgn ? "s" : "u", sbits(s) == 64 ? 64u : 32u);
    }
    if (sbits(s) >= 32) return kf_cu_str(c, "%s(%s, %s)", fn, x, y);
    return kf_cu_str(c, "(%s)%s((%s)%s, (%s)%s)", c_scalar[s], fn, w, x, w, y);
}

static const char *int_math(kf_cu *c, kf_builtin b, kf_scalar s, const char *const x[3], bool opaque)
{
    const char *t = c_scalar[s];
    bool sgn = sclass(s) == 'i', wide = sbits(s) == 64;
    switch (b) {
    case KF_BI_MIN:
    case KF_BI_MAX: return int_minmax(c, b, s, x[0], x[1], opaque);
    case KF_BI_CLAMP:
        return int_minmax(c, KF_BI_MIN, s, int_minmax(c, KF_BI_MAX, s, x[0], x[1], opaque), x[2], opaque);
    case KF_BI_ABS:
        if (!sgn) return x[0];
        kf_cu_need(c, KF_CU_H_ABS);
        if (wide) return kf_cu_str(c, "kf_abs_i64(%s)", x[0]);
        if (s == KF_S_I32) return kf_cu_str(c, "kf_abs_i32(%s)", x[0]);
        return narrowed(c, s, kf_cu_str(c, "(unsigned)kf_abs_i32(%s)", x[0]));
    case KF_BI_CLZ:
        if (wide) return kf_cu_str(c, "(unsigned)__clzll((long long)%s)", x[0]);
        if (sbits(s) == 32) return kf_cu_str(c, "(unsigned)__clz((int)%s)", x[0]);
        return kf_cu_str(c, "(unsigned)__clz((int)(unsigned %s)%s) - %uu", sbits(s) == 8 ? "char" : "short", x[0],
                         32 - sbits(s));
    case KF_BI_POPC:
        if (wide) return kf_cu_str(c, "(unsigned)__popcll((unsigned long long)%s)", x[0]);
        if (sbits(s) == 32) return kf_cu_str(c, "(unsigned)__popc((unsigned)%s)", x[0]);
        return kf_cu_str(c, "(unsigned)__popc((unsigned)(unsigned %s)%s)", sbits(s) == 8 ? "char" : "short", x[0]);
    case KF_BI_CDIV:
        if (sbits(s) >= 32) {
            kf_cu_need(c, KF_CU_H_CDIV);
            return kf_cu_str(c, "kf_cdiv_%s(%s, %s)", kf_scalar_names[s], x[0], x[1]);
        }
        kf_cu_need(c, KF_CU_H_CDIV);
        return narrowed(c, s, kf_cu_str(c, "(unsigned)kf_cdiv_%s(%s, %s)", sgn ? "i32" : "u32", x[0], x[1]));
    case KF_BI_MUL_HI:
        if (s == KF_S_U32) return kf_cu_str(c, "__umulhi(%s, %s)", x[0], x[1]);
        if (s == KF_S_I32) return kf_cu_str(c, "__mulhi(%s, %s)", x[0], x[1]);
        if (s == KF_S_U64) return kf_cu_str(c, "__umul64hi(%s, %s)", x[0], x[1]);
        if (s == KF_S_I64) return kf_cu_str(c, "__mul64hi(%s, %s)", x[0], x[1]);
        if (sgn) return kf_cu_str(c, "(%s)(((int)%s * (int)%s) >> %u)", t, x[0], x[1], sbits(s));
        return kf_cu_str(c, "(%s)(((unsigned)%s * (unsigned)%s) >> %u)", t, x[0], x[1], sbits(s));
    default: return "?";
    }
}

const char *kf_cu_math(kf_cu *c, kf_builtin b, kf_scalar s, const char *const args[3], bool opaque)
{
    if (sclass(s) != 'f') return int_math(c, b, s, args, opaque);
    if (!is_half(s)) return float_math(c, b, s == KF_S_F64, args, opaque);
    /* f16/bf16: exact widening, f32 math, one rounding back */
    const char *w[3] = {args[0], args[1], args[2]};
    for (int i = 0; i < 3; i++)
        if (w[i]) w[i] = to_f32(c, s, w[i]);
    return kf_cu_str(c, "kf_%s_from_f32(%s)", kf_scalar_names[s], float_math(c, b, false, w, opaque));
}

/* ---- section 8: packed half vectors and intrinsics ----------------------------- */

const char *kf_cu_packed_call(kf_cu *c, const kf_ir_ins *in, kf_type t, const char *const args[3])
{
    static const char *const binops[KF_OP_COUNT] = {[KF_OP_ADD] = "add", [KF_OP_SUB] = "sub", [KF_OP_MUL] = "mul"};
    static const char *const maths[KF_BI_COUNT] = {
        [KF_BI_FMA] = "fma", [KF_BI_MIN] = "min", [KF_BI_MAX] = "max", [KF_BI_ABS] = "abs",
    };
    bool bf = t.scalar == KF_S_BF16, arith = in->op == KF_IR_BINOP;
    kf_cu_need(c, !bf ? KF_CU_H_F16V : !arith ? KF_CU_H_BF16V : c->o->arch >= 90 ? KF_CU_H_BF16V_ARITH : KF_CU_H_BF16V_ARITH80);
    (void)kf_cu_type(c, t);
    const char *fn = arith ? binops[in->sub] : maths[in->sub];
    unsigned n = !arith && in->sub == KF_BI_ABS ? 1 : !arith && in->sub == KF_BI_FMA ? 3 : 2;
    const char *f = kf_cu_str(c, "kf_%s_%s", bf ? "bh2" : "h2", fn ? fn : "?");
    if (n == 1) return kf_cu_str(c, "kf_pairs(%s, %s)", f, args[0]);
    if (n == 2) return kf_cu_str(c, "kf_pairs(%s, %s, %s)", f, args[0], args[1]);
    return kf_cu_str(c, "kf_pairs(%s, %s, %s, %s)", f, args[0], args[1], args[2]);
}

/* A 4-byte vector's bits as one unsigned (dot4's operands). */
static const char *bytes_word(kf_cu *c, const char *x)
{
    kf_cu_need(c, KF_CU_H_BITCAST);
    return kf_cu_str(c, "kf_bitcast<unsigned>(%s)", x);
}

const char *kf_cu_intrin(kf_cu *c, const kf_ir_ins *in, const char *const a[4], const kf_type ts[4])
{
    kf_scalar s = (kf_scalar)in->type.scalar;
    switch (in->sub) {
    case KF_BI_DOT4:
        kf_cu_need(c, KF_CU_H_DOT4);
        return kf_cu_str(c, "kf_dot4_%s%s(%s, %s, %s)", ts[0].scalar == KF_S_I8 ? "s" : "u",
                         ts[1].scalar == KF_S_I8 ? "s" : "u", bytes_word(c, a[0]), bytes_word(c, a[1]), a[2]);
    case KF_BI_BFE:
        kf_cu_need(c, KF_CU_H_BITFIELD);
        return kf_cu_str(c, "kf_bfe_%s(%s, %s, %s)", kf_scalar_names[s], a[0], a[1], a[2]);
    case KF_BI_BFI:
        kf_cu_need(c, KF_CU_H_BITFIELD);
        return kf_cu_str(c, "kf_bfi_%s(%s, %s, %s, %s)", kf_scalar_names[s], a[0], a[1], a[2], a[3]);
    case KF_BI_PRMT:
        kf_cu_need(c, KF_CU_H_BITFIELD);
        return kf_cu_str(c, "kf_prmt(%s, %s, %s)", a[0], a[1], a[2]);
    default: return "?";
    }
}

static const char *mma_call(kf_cu *c, const char *const a[4], const kf_type ts[4])
{
    kf_scalar as = (kf_scalar)ts[0].scalar, bs = (kf_scalar)ts[1].scalar;
    if (as == KF_S_F16 || as == KF_S_BF16)
        return kf_cu_str(c, "kf_mma_%s(%s, %s, %s)", kf_scalar_names[as], a[0], a[1], a[2]);
    return kf_cu_str(c, "kf_mma_%s%s(%s, %s, %s)", as == KF_S_I8 ? "s8" : "u8", bs == KF_S_I8 ? "s8" : "u8", a[0], a[1], a[2]);
}

const char *kf_cu_tensor(kf_cu *c, const kf_ir_ins *in, const char *elem, const char *const a[4], const kf_type ts[4])
{
    bool trans;
    unsigned mats = kf_builtin_ldmatrix((kf_builtin)in->sub, &trans);
    if (mats) {
        kf_cu_need(c, KF_CU_H_LDSM);
        return kf_cu_str(c, "kf_ldsm_x%u%s<%s>(%s)", mats, trans ? "_trans" : "", kf_cu_type(c, in->type), elem);
    }
    switch (in->sub) {
    case KF_BI_MMA: kf_cu_need(c, KF_CU_H_MMA); return mma_call(c, a, ts);
    case KF_BI_CP_ASYNC: kf_cu_need(c, KF_CU_H_CP_ASYNC); return kf_cu_str(c, "kf_cp_async(%s, %s)", elem, a[1]);
    case KF_BI_CP_ASYNC_N:
        kf_cu_need(c, KF_CU_H_CP_ASYNC);
        return kf_cu_str(c, "kf_cp_async_n(%s, %s, %s)", elem, a[1], a[3]);
    case KF_BI_CP_ASYNC_COMMIT: kf_cu_need(c, KF_CU_H_CP_ASYNC); return "kf_cp_async_commit()";
    case KF_BI_CP_ASYNC_WAIT:
        kf_cu_need(c, KF_CU_H_CP_ASYNC);
        return kf_cu_str(c, "kf_cp_async_wait<%u>()", (unsigned)in->imm);
    case KF_BI_FENCE: return "__threadfence()";   /* fence.sc.gpu: at least fence.acq_rel.gpu's ordering */
    case KF_BI_PREFETCH_L2:
        kf_cu_need(c, KF_CU_H_PREFETCH);
        return kf_cu_str(c, "kf_prefetch_l2(%s, %s, %s)", a[0], a[1], a[2]);
    default: return "?";
    }
}
