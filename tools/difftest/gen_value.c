/* Values for the generator: the random stream, the types a program may
 * use, edge-biased values (0, +-1, MIN, MAX, powers of two +-1; for floats
 * +-0, +-inf, NaNs with several payloads, subnormals, the largest finite,
 * 1 + ulp), untyped literals in every spelling the lexer takes, input data,
 * and identifiers drawn from names that C, C++, CUDA's math library or PTX
 * already use, so that an emitter that forgets to rename one is caught.
 *
 * Everything is a pure function of the stream: program k of seed s is the
 * same program on every machine. */
#include "dt_impl.h"

#include "../../ir/numeric.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the random stream ---------------------------------------------------- */
uint64_t dt_next(dt_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint32_t dt_below(dt_rng *r, uint32_t n) { return (uint32_t)(dt_next(r) % n); }
bool dt_chance(dt_rng *r, unsigned percent) { return dt_below(r, 100) < percent; }
int64_t dt_range(dt_rng *r, int64_t lo, int64_t hi) { return lo + (int64_t)(dt_next(r) % (uint64_t)(hi - lo + 1)); }
uint8_t dt_max(uint8_t a, uint8_t b) { return a > b ? a : b; }

/* ---- types ------------------------------------------------------------------ */
#define V(s, n) {KF_TK_VECTOR, KF_S_##s, n, 0, 0}
const kf_type dt_vector_types[] = {
    V(I8, 2),  V(I8, 4),  V(I8, 8),  V(I8, 16), V(U8, 2),  V(U8, 4),  V(U8, 8),   V(U8, 16),
    V(I16, 2), V(I16, 4), V(I16, 8), V(U16, 2), V(U16, 4), V(U16, 8), V(I32, 2),  V(I32, 4),
    V(U32, 2), V(U32, 4), V(I64, 2), V(U64, 2), V(F16, 2), V(F16, 4), V(F16, 8),  V(BF16, 2),
    V(BF16, 4), V(BF16, 8), V(F32, 2), V(F32, 4), V(F64, 2), V(F32, 4), V(F32, 2), V(U32, 4),
};
#undef V
const uint32_t dt_nvector_types = sizeof dt_vector_types / sizeof dt_vector_types[0];

kf_type dt_pick_scalar(dt_rng *r, bool with_bool)
{
    /* i32, u32 and f32 come up more often than the rest, as in real kernels */
    static const uint8_t weights[KF_S_F64 + 1] = {
        [KF_S_BOOL] = 6, [KF_S_I8] = 6, [KF_S_U8] = 6, [KF_S_I16] = 5, [KF_S_U16] = 5, [KF_S_I32] = 12,
        [KF_S_U32] = 12, [KF_S_I64] = 7, [KF_S_U64] = 7, [KF_S_F16] = 7, [KF_S_BF16] = 6, [KF_S_F32] = 12,
        [KF_S_F64] = 7};
    unsigned total = 0;
    for (int s = KF_S_BOOL; s <= KF_S_F64; s++) total += (s == KF_S_BOOL && !with_bool) ? 0 : weights[s];
    unsigned x = dt_below(r, total);
    for (int s = KF_S_BOOL; s <= KF_S_F64; s++) {
        unsigned w = (s == KF_S_BOOL && !with_bool) ? 0 : weights[s];
        if (x < w) return kf_type_scalar((kf_scalar)s);
        x -= w;
    }
    return kf_type_scalar(KF_S_I32);
}

kf_type dt_pick_type(dt_rng *r, bool with_bool)
{
    if (dt_chance(r, 22)) return dt_vector_types[dt_below(r, dt_nvector_types)];
    return dt_pick_scalar(r, with_bool);
}

bool dt_is_f3264(kf_type t) { return t.scalar == KF_S_F32 || t.scalar == KF_S_F64; }

bool dt_is_warp_type(kf_type t)
{
    return t.scalar != KF_S_BOOL && (kf_scalar_bytes[t.scalar] == 4 || kf_scalar_bytes[t.scalar] == 8);
}

const char *dt_type_name(kf_type t)
{
    static _Thread_local char buf[8][48];
    static _Thread_local unsigned at;
    char *b = buf[at++ % 8];
    return kf_type_str(t, b, sizeof buf[0]);
}

int64_t dt_int_min(kf_scalar s)
{
    unsigned bits = 8u * kf_scalar_bytes[s];
    if (kf_scalar_class[s] != 'i') return 0;
    return bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
}

uint64_t dt_int_max(kf_scalar s)
{
    unsigned bits = 8u * kf_scalar_bytes[s];
    if (kf_scalar_class[s] == 'i') return (UINT64_C(1) << (bits - 1)) - 1;
    return bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* ---- edge values ------------------------------------------------------------- */
/* An integer of s (its bits, wrapped to 64) from the edges; unsigned
 * arithmetic throughout, so nothing overflows. */
static int64_t int_edge(dt_rng *r, kf_scalar s)
{
    unsigned bits = 8u * kf_scalar_bytes[s];
    bool sgn = kf_scalar_class[s] == 'i';
    uint64_t mn = (uint64_t)dt_int_min(s), mx = dt_int_max(s);
    int k = (int)dt_range(r, 1, (int64_t)bits - (sgn ? 2 : 1));
    uint64_t p2 = UINT64_C(1) << k, v;
    switch (dt_below(r, 12)) {
    case 0: v = 0; break;
    case 1: v = 1; break;
    case 2: v = sgn ? UINT64_MAX : 2; break;
    case 3: v = mn; break;
    case 4: v = mx; break;
    case 5: v = sgn ? mn + 1 : mx - 1; break;
    case 6: v = p2; break;
    case 7: v = p2 - 1; break;
    case 8: v = p2 + 1; break;
    case 9: v = sgn ? 0 - p2 : (mx >> 1) + 1; break;
    case 10: v = (uint64_t)dt_range(r, sgn ? -20 : 0, 40); break;
    default: v = dt_next(r);
    }
    return (int64_t)v;
}

/* A double that scalar s represents exactly (finite unless allowed). */
static double float_edge(dt_rng *r, kf_scalar s, bool finite)
{
    static const int mant[KF_S_COUNT] = {[KF_S_F16] = 11, [KF_S_BF16] = 8, [KF_S_F32] = 24, [KF_S_F64] = 53};
    static const int emin[KF_S_COUNT] = {[KF_S_F16] = -14, [KF_S_BF16] = -126, [KF_S_F32] = -126, [KF_S_F64] = -1022};
    static const int emax[KF_S_COUNT] = {[KF_S_F16] = 15, [KF_S_BF16] = 127, [KF_S_F32] = 127, [KF_S_F64] = 1023};
    int p = mant[s];
    double sign = dt_chance(r, 50) ? -1.0 : 1.0;
    switch (dt_below(r, finite ? 11 : 14)) {
    case 0: return sign * 0.0;
    case 1: return sign;
    case 2: return sign * 0.5;
    case 3: return sign * ldexp(2.0 - ldexp(1.0, 1 - p), emax[s]);        /* largest finite */
    case 4: return sign * ldexp(1.0, emin[s]);                            /* smallest normal */
    case 5: return sign * ldexp(1.0, emin[s] - p + 1);                    /* smallest subnormal */
    case 6: return sign * (1.0 + ldexp(1.0, 1 - p));                      /* 1 + ulp */
    case 7: return (double)dt_range(r, -300, 300);
    case 8: {   /* k * 2^e, kept finite in s */
        double v = ldexp((double)dt_range(r, 1, 1 << (p < 20 ? p - 1 : 20)), (int)dt_range(r, -12, 12));
        return sign * (v > ldexp(1.0, emax[s]) ? ldexp(1.0, emax[s]) : v);
    }
    case 9: return sign * ldexp(1.0, (int)dt_range(r, emin[s], emax[s]));
    case 10: return sign * (ldexp(1.0, p) + 1.0 * (p < 53));              /* past the integers */
    case 11: return sign * INFINITY;
    default: return NAN;
    }
}

uint64_t dt_value_bits(dt_rng *r, kf_scalar s, bool finite)
{
    if (s == KF_S_BOOL) return dt_next(r) >> 63;
    unsigned bits = 8u * kf_scalar_bytes[s];
    uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    if (kf_scalar_class[s] != 'f') return (uint64_t)int_edge(r, s) & mask;
    if (!finite && dt_chance(r, 8)) {   /* a NaN with some payload, or raw bits */
        uint64_t x = dt_next(r) & mask;
        if (dt_chance(r, 50)) return x;
        static const int man[KF_S_COUNT] = {[KF_S_F16] = 10, [KF_S_BF16] = 7, [KF_S_F32] = 23, [KF_S_F64] = 52};
        uint64_t expo = (mask >> (man[s] + 1)) << man[s];
        return (x & ~expo) | expo | 1;   /* all-ones exponent, mantissa != 0 */
    }
    if (dt_chance(r, 20)) {   /* any finite bit pattern */
        for (;;) {
            uint64_t x = dt_next(r) & mask;
            double d = kf_bits_to_double(s, x);
            if (isfinite(d) || !finite) return x;
        }
    }
    return kf_bits_from_double(s, float_edge(r, s, finite));
}

uint64_t dt_small_bits(dt_rng *r, kf_scalar s)
{
    int64_t v = dt_range(r, kf_scalar_class[s] == 'u' ? 0 : -8, 16);
    if (kf_scalar_class[s] == 'f') return kf_bits_from_double(s, (double)v);
    unsigned bits = 8u * kf_scalar_bytes[s];
    return bits == 64 ? (uint64_t)v : (uint64_t)v & ((UINT64_C(1) << bits) - 1);
}

void dt_fill(dt_rng *r, kf_type t, void *dst, uint32_t n, bool finite)
{
    unsigned by = kf_scalar_bytes[t.scalar];
    unsigned char *d = dst;
    for (uint32_t i = 0; i < n * t.lanes; i++) {
        uint64_t b = dt_value_bits(r, (kf_scalar)t.scalar, finite);
        memcpy(d + (size_t)i * by, &b, by);   /* little-endian low bytes */
    }
}

/* ---- literals -------------------------------------------------------------------- */
/* Digits of v in base 2 or 16 (v > 0), with '_' between groups sometimes. */
static void spell_unsigned(dt_rng *r, char *out, size_t len, uint64_t v)
{
    switch (dt_below(r, 6)) {
    case 0:
        snprintf(out, len, "0x%llx", (unsigned long long)v);
        break;
    case 1:
        snprintf(out, len, "0X%llX", (unsigned long long)v);
        break;
    case 2:
        if (v < 4096) {
            char bin[80];
            int n = 0;
            for (int b = 63 - __builtin_clzll(v | 1); b >= 0; b--) bin[n++] = (char)('0' + ((v >> b) & 1));
            bin[n] = 0;
            snprintf(out, len, "0b%s", bin);
            break;
        }
        /* fall through */
    case 3:
        if (v >= 1000) {   /* 1_000_000 style */
            char dec[32], *o = out;
            int n = snprintf(dec, sizeof dec, "%llu", (unsigned long long)v);
            for (int i = 0; i < n; i++) {
                if (i && (n - i) % 3 == 0) *o++ = '_';
                *o++ = dec[i];
            }
            *o = 0;
            break;
        }
        /* fall through */
    default:
        snprintf(out, len, "%llu", (unsigned long long)v);
    }
}

static const char *int_literal(dt_rng *r, kf_arena *a, kf_scalar s, uint64_t *bits)
{
    int64_t v = int_edge(r, s);
    unsigned nb = 8u * kf_scalar_bytes[s];
    bool sgn = kf_scalar_class[s] == 'i';
    if (!sgn && nb == 64) {
        uint64_t u = (uint64_t)v;
        char t[80];
        spell_unsigned(r, t, sizeof t, u);
        *bits = u;
        return u ? kf_arena_strdup(a, t) : "0";
    }
    if (sgn && nb < 64) v = (int64_t)((uint64_t)v << (64 - nb)) >> (64 - nb);   /* in range */
    if (!sgn) v = (int64_t)((uint64_t)v & dt_int_max(s));
    *bits = nb == 64 ? (uint64_t)v : (uint64_t)v & ((UINT64_C(1) << nb) - 1);
    char t[80];
    if (v < 0) {
        uint64_t mag = (uint64_t)0 - (uint64_t)v;
        snprintf(t, sizeof t, "-%llu", (unsigned long long)mag);
    } else if (v == 0) {
        return "0";
    } else {
        spell_unsigned(r, t, sizeof t, (uint64_t)v);
    }
    return kf_arena_strdup(a, t);
}

/* %.17g with a '.' or an exponent, so that it lexes as a float. */
static void spell_double(dt_rng *r, char *out, size_t len, double d)
{
    char t[64];
    snprintf(t, sizeof t, "%.17g", fabs(d));
    if (!strpbrk(t, ".e")) {
        size_t n = strlen(t);
        if (dt_chance(r, 30) && fabs(d) < 1e15) snprintf(t + n, sizeof t - n, ".");   /* 2. */
        else snprintf(t + n, sizeof t - n, ".0");
    } else if (t[0] == '0' && t[1] == '.' && dt_chance(r, 40)) {
        memmove(t, t + 1, strlen(t));   /* .5 */
    }
    snprintf(out, len, "%s%s", signbit(d) ? "-" : "", t);
}

static const char *float_literal(dt_rng *r, kf_arena *a, kf_scalar s, uint64_t *bits)
{
    char t[80];
    unsigned pick = dt_below(r, 16);
    if (pick == 0) {
        *bits = kf_bits_from_double(s, INFINITY);
        return "inf";
    }
    if (pick == 1) {
        *bits = kf_bits_from_double(s, -INFINITY);
        return "-inf";
    }
    if (pick == 2) {
        *bits = kf_bits_from_double(s, NAN);
        return "nan";
    }
    double d = float_edge(r, s, true);
    if (pick == 3 && d == floor(d) && fabs(d) < 1e6) {   /* an integer literal in a float context */
        snprintf(t, sizeof t, "%s%.0f", d < 0 ? "-" : "", fabs(d));
        *bits = kf_bits_from_double(s, d);
        return kf_arena_strdup(a, t);
    }
    spell_double(r, t, sizeof t, d);
    *bits = kf_bits_from_double(s, d);
    return kf_arena_strdup(a, t);
}

const char *dt_literal(dt_rng *r, kf_arena *a, kf_scalar s, uint64_t *bits)
{
    if (s == KF_S_BOOL) {
        *bits = dt_next(r) >> 63;
        return *bits ? "true" : "false";
    }
    return kf_scalar_class[s] == 'f' ? float_literal(r, a, s, bits) : int_literal(r, a, s, bits);
}

/* ---- names ------------------------------------------------------------------------ */
/* Names that something below the .kf source already uses: C and C++ keywords
 * and types, CUDA builtins, intrinsics and math functions (j0, y1 ...), the
 * CUDA-C emitter's own helpers, PTX opcodes, directives and register names,
 * and plain short names. None is a .kf keyword, type or builtin. */
static const char *const pool[] = {
    "j0", "j1", "jn", "y0", "y1", "yn", "j0f", "y1f", "erf", "erfc", "lgamma", "tgamma", "sinf", "cosf",
    "expf", "logf", "powf", "pow", "sqrtf", "exp10", "log10", "log1p", "expm1", "cbrt", "hypot", "atan2",
    "sinh", "cosh", "asin", "acos", "atan", "fmod", "remainder", "modf", "frexp", "ldexp", "scalbn",
    "ilogb", "logb", "copysign", "nextafter", "fdim", "rint", "lrint", "llround", "nearbyint", "isnan",
    "isinf", "isfinite", "signbit", "norm", "rhypot", "rcbrt", "sincos", "sinpi", "cospi", "normcdf",
    "float", "double", "int", "char", "short", "long", "signed", "unsigned", "void", "auto", "register",
    "static", "struct", "union", "enum", "typedef", "sizeof", "switch", "case", "default", "goto", "do",
    "extern", "inline", "volatile", "restrict", "class", "new", "delete", "this", "template",
    "typename", "namespace", "using", "public", "private", "operator", "virtual", "friend", "throw",
    "try", "catch", "asm", "nullptr", "NULL", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "warpSize", "printf", "malloc", "free", "memcpy", "memset", "half", "half2", "nv_bfloat16",
    "float4", "int2", "uint4", "dim3", "uint", "ushort", "ulong", "uint32_t", "int64_t", "uint8_t",
    "size_t", "INFINITY", "NAN", "M_PI", "EOF", "errno", "fmaxf", "fminf", "exp2f", "rsqrtf", "tanhf",
    "floorf", "ceilf", "roundf", "truncf", "fabsf", "fabs", "atomicAdd", "atomicCAS", "atomicExch",
    "clock", "clock64", "assert", "abort", "exit", "main", "std", "cuda", "entry", "param", "reg",
    "global", "local", "ret", "bra", "pred", "mov", "add", "ld", "st", "cvt", "setp", "r1", "rd1",
    "f1", "fd1", "h1", "p1", "r0", "rs1", "b32", "u32_", "_Bool", "_Alignas", "_x", "__x", "__restrict__",
    "__shared__", "__device__", "kf_f16", "kf_bitcast", "kf_div_i32", "kf_shfl", "t1", "t2", "v1", "v2",
    "a", "b", "c", "d", "x", "y", "z", "w", "i", "j", "k", "n", "m", "q", "s", "u", "acc", "tmp",
    "sum", "idx", "val", "lo", "hi", "res", "out", "in_", "mask", "bits", "lane", "warp", "tid",
};

const char *dt_fresh_name(dt_rng *r, kf_dt_prog *p)
{
    enum { N = sizeof pool / sizeof pool[0] };
    _Static_assert(N <= 8 * sizeof p->used_names, "pool larger than the used-name bitmap");
    uint32_t i = dt_below(r, N);
    if (!(p->used_names[i / 8] & (1u << (i % 8)))) {   /* the bare name, once per program */
        p->used_names[i / 8] |= (uint8_t)(1u << (i % 8));
        return pool[i];
    }
    return kf_arena_printf(&p->arena, "%s_%u", pool[i], p->name_counter++);
}
