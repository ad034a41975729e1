/* Lane-by-lane semantics of the interpreter's generic operations, exactly
 * as the language contract fixes them (LANGUAGE.md, common decisions):
 * integers of every width wrap; shifts by at least the width give 0 or the
 * sign fill; INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0; f32 arithmetic is
 * done in float (each operation rounds once), f64 in double, and f16/bf16
 * in double then rounded to the type (RNE), which equals the native result
 * for + - * / because double has more than 2p+2 bits (f16/bf16 fma is not
 * such a case: kf_half_fma rounds it once); float min/max follow PTX min/max
 * (NaN gives the other operand, -0 < +0; two f16/bf16 NaNs give the
 * canonical NaN 0x7FFF); f16/bf16 abs clears the sign bit; conversions go
 * through ir/numeric.h. The fast paths in interp_run.c
 * must agree with these functions (tests compare both).
 *
 * Math error bounds (the interpreter is the reference, so it is accurate):
 * sqrt, / , fma, floor/ceil/trunc/round, min/max/abs are exact (correctly
 * rounded); f32 rsqrt is 1/sqrt in double rounded once (correctly rounded
 * but for double-rounding ties); f32 exp/exp2/log/log2/sin/cos/tanh call
 * glibc's expf... (exp/exp2/log/log2/sin/cos < 1 ulp, tanhf <= 2 ulp); f64
 * ones call glibc's exp... (< 1 ulp). f16/bf16 math is done in double and
 * rounded once to the type. rcp is the correctly rounded 1/x with
 * rcp.approx.ftz's flushes (kf_rcp_ftz; the GPU is within 1 ulp of it) and
 * fast_div(a, b) = a * rcp(b) rounded once more. GPU back ends using .approx
 * instructions differ from these by their own documented bounds. */
#include <math.h>

#include "interp_impl.h"
#include "numeric.h"

uint64_t kf_iop_lane(const kf_islot *v, unsigned bytes, unsigned i)
{
    switch (bytes) {
    case 1: return v->u8[i];
    case 2: return v->u16[i];
    case 4: return v->u32[i];
    default: return v->u64[i];
    }
}

void kf_iop_set_lane(kf_islot *v, unsigned bytes, unsigned i, uint64_t bits)
{
    switch (bytes) {
    case 1: v->u8[i] = (uint8_t)bits; break;
    case 2: v->u16[i] = (uint16_t)bits; break;
    case 4: v->u32[i] = (uint32_t)bits; break;
    default: v->u64[i] = bits; break;
    }
}

static uint64_t width_mask(unsigned bits)
{
    return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

static int64_t sext(uint64_t x, unsigned bits)
{
    if (bits >= 64) return (int64_t)x;
    uint64_t m = UINT64_C(1) << (bits - 1);
    return (int64_t)((x ^ m) - m);
}

static double f64_binop(kf_op op, double a, double b)
{
    switch (op) {
    case KF_OP_ADD: return a + b;
    case KF_OP_SUB: return a - b;
    case KF_OP_MUL: return a * b;
    case KF_OP_DIV: return a / b;
    default: kf_unreachable("float binop");
    }
}

int kf_iop_binop(kf_op op, kf_scalar s, unsigned lanes, kf_islot *r, const kf_islot *a, const kf_islot *b)
{
    unsigned by = kf_scalar_bytes[s];
    char cls = kf_scalar_class[s];
    kf_islot out = {{0, 0}};
    for (unsigned i = 0; i < lanes; i++) {
        uint64_t x = kf_iop_lane(a, by, i), y = kf_iop_lane(b, by, i), z;
        if (s == KF_S_F32) {
            /* in double, rounded once: the float result (53 >= 2 * 24 + 2 bits) */
            z = kf_f32_bits((float)f64_binop(op, kf_f32_from_bits((uint32_t)x), kf_f32_from_bits((uint32_t)y)));
        } else if (cls == 'f') {
            z = kf_bits_from_double(s, f64_binop(op, kf_bits_to_double(s, x), kf_bits_to_double(s, y)));
        } else if (!kf_int_binop(op, cls == 'i', s == KF_S_BOOL ? 1 : 8 * by, x, y, &z)) {
            if (op == KF_OP_DIV || op == KF_OP_REM) return op == KF_OP_DIV ? IOP_DIV0 : IOP_REM0;
            kf_unreachable("integer binop");
        }
        kf_iop_set_lane(&out, by, i, z);
    }
    *r = out;
    return IOP_OK;
}

static bool cmp_result(kf_op op, int c, bool unordered)
{
    if (unordered) return op == KF_OP_NE;
    switch (op) {
    case KF_OP_EQ: return c == 0;
    case KF_OP_NE: return c != 0;
    case KF_OP_LT: return c < 0;
    case KF_OP_LE: return c <= 0;
    case KF_OP_GT: return c > 0;
    case KF_OP_GE: return c >= 0;
    default: kf_unreachable("comparison");
    }
}

void kf_iop_cmp(kf_op op, kf_scalar s, kf_islot *r, const kf_islot *a, const kf_islot *b)
{
    unsigned by = kf_scalar_bytes[s];
    uint64_t x = kf_iop_lane(a, by, 0), y = kf_iop_lane(b, by, 0);
    int c;
    bool unordered = false;
    if (kf_scalar_class[s] == 'f') {
        double dx = kf_bits_to_double(s, x), dy = kf_bits_to_double(s, y);
        unordered = isnan(dx) || isnan(dy);
        c = dx < dy ? -1 : dx > dy;
    } else if (kf_scalar_class[s] == 'i') {
        int64_t sx = sext(x, 8 * by), sy = sext(y, 8 * by);
        c = sx < sy ? -1 : sx > sy;
    } else {
        if (s == KF_S_BOOL) x = x != 0, y = y != 0;
        c = x < y ? -1 : x > y;
    }
    r->u8[0] = cmp_result(op, c, unordered);
}

void kf_iop_unop(kf_op op, kf_scalar s, unsigned lanes, kf_islot *r, const kf_islot *a)
{
    unsigned by = kf_scalar_bytes[s];
    kf_islot out = {{0, 0}};
    for (unsigned i = 0; i < lanes; i++) {
        uint64_t x = kf_iop_lane(a, by, i), z;
        if (op == KF_OP_NOT) z = x == 0;
        else if (op == KF_OP_BNOT) z = ~x & width_mask(8 * by);
        else if (kf_scalar_class[s] == 'f') z = x ^ (UINT64_C(1) << (8 * by - 1));   /* neg: sign flip */
        else z = (0 - x) & width_mask(8 * by);
        kf_iop_set_lane(&out, by, i, z);
    }
    *r = out;
}

void kf_iop_cvt(kf_scalar to, kf_scalar from, unsigned lanes, kf_islot *r, const kf_islot *a)
{
    unsigned bi = kf_scalar_bytes[from], bo = kf_scalar_bytes[to];
    char ci = kf_scalar_class[from];
    kf_islot out = {{0, 0}};
    for (unsigned i = 0; i < lanes; i++) {
        uint64_t x = kf_iop_lane(a, bi, i), z;
        if (ci == 'f') {
            double d = kf_bits_to_double(from, x);
            z = to == KF_S_BOOL ? (d != 0.0 && !isnan(d)) : kf_bits_from_double(to, d);
        } else if (ci == 'i') {
            z = kf_bits_from_i64(to, kf_bits_to_i64(from, x));
        } else {
            z = kf_bits_from_u64(to, from == KF_S_BOOL ? x != 0 : x);
        }
        kf_iop_set_lane(&out, bo, i, z);
    }
    *r = out;
}

static double f64_math(kf_builtin fn, double x, double y, double z)
{
    switch (fn) {
    case KF_BI_EXP: return exp(x);
    case KF_BI_EXP2: return exp2(x);
    case KF_BI_LOG: return log(x);
    case KF_BI_LOG2: return log2(x);
    case KF_BI_SQRT: return sqrt(x);
    case KF_BI_RSQRT: return 1.0 / sqrt(x);
    case KF_BI_SIN: return sin(x);
    case KF_BI_COS: return cos(x);
    case KF_BI_TANH: return tanh(x);
    case KF_BI_ABS: return fabs(x);
    case KF_BI_FLOOR: return floor(x);
    case KF_BI_CEIL: return ceil(x);
    case KF_BI_TRUNC: return trunc(x);
    case KF_BI_ROUND: return round(x);
    case KF_BI_MIN: return kf_fmin(x, y);
    case KF_BI_MAX: return kf_fmax(x, y);
    case KF_BI_CLAMP: return kf_fmin(kf_fmax(x, y), z);
    case KF_BI_FMA: return fma(x, y, z);
    default: kf_unreachable("float math builtin");
    }
}

static float f32_math(kf_builtin fn, float x, float y, float z)
{
    switch (fn) {
    case KF_BI_EXP: return expf(x);
    case KF_BI_EXP2: return exp2f(x);
    case KF_BI_LOG: return logf(x);
    case KF_BI_LOG2: return log2f(x);
    case KF_BI_SQRT: return sqrtf(x);
    case KF_BI_RSQRT: return (float)(1.0 / sqrt((double)x));
    case KF_BI_SIN: return sinf(x);
    case KF_BI_COS: return cosf(x);
    case KF_BI_TANH: return tanhf(x);
    case KF_BI_ABS: return fabsf(x);
    case KF_BI_FLOOR: return floorf(x);
    case KF_BI_CEIL: return ceilf(x);
    case KF_BI_TRUNC: return truncf(x);
    case KF_BI_ROUND: return roundf(x);
    case KF_BI_MIN: return (float)kf_fmin(x, y);
    case KF_BI_MAX: return (float)kf_fmax(x, y);
    case KF_BI_CLAMP: return (float)kf_fmin(kf_fmax(x, y), z);
    case KF_BI_FMA: return fmaf(x, y, z);
    case KF_BI_RCP: return kf_rcp_ftz(x);
    case KF_BI_FAST_DIV: return x * kf_rcp_ftz(y);
    default: kf_unreachable("float math builtin");
    }
}

float kf_iop_math_f32(kf_builtin fn, float x)
{
    return f32_math(fn, x, 0.0f, 0.0f);
}

static unsigned clz_bits(uint64_t x, unsigned bits)
{
    unsigned n = 0;
    for (int b = (int)bits - 1; b >= 0 && !((x >> b) & 1); b--) n++;
    return n;
}

static uint64_t mul_hi(bool sgn, unsigned bits, uint64_t a, uint64_t b)
{
    if (bits < 64) {
        if (sgn) return (uint64_t)((sext(a, bits) * sext(b, bits)) >> bits);
        return (a * b) >> bits;   /* both < 2^32: no overflow */
    }
    __extension__ typedef unsigned __int128 u128;
    __extension__ typedef __int128 i128;
    if (sgn) return (uint64_t)(((i128)(int64_t)a * (i128)(int64_t)b) >> 64);
    return (uint64_t)(((u128)a * (u128)b) >> 64);
}

static int int_math(kf_builtin fn, bool sgn, unsigned bits, uint64_t x, uint64_t y, uint64_t z, uint64_t *r)
{
    int64_t sx = sext(x, bits), sy = sext(y, bits), sz = sext(z, bits);
    bool lt = sgn ? sx < sy : x < y;
    switch (fn) {
    case KF_BI_ABS: *r = sgn && sx < 0 ? 0 - x : x; break;
    case KF_BI_MIN: *r = lt ? x : y; break;
    case KF_BI_MAX: *r = lt ? y : x; break;
    case KF_BI_CLAMP: {
        uint64_t m = lt ? y : x;                  /* max(x, lo) */
        bool gt = sgn ? sext(m, bits) > sz : m > z;
        *r = gt ? z : m;
        break;
    }
    case KF_BI_CLZ: *r = clz_bits(x, bits); return IOP_OK;
    case KF_BI_POPC: *r = (uint64_t)__builtin_popcountll(x); return IOP_OK;
    case KF_BI_MUL_HI: *r = mul_hi(sgn, bits, x, y); break;
    case KF_BI_CDIV:
        if (y == 0) return IOP_DIV0;
        if (sgn) {
            if (sy == -1) { *r = 0 - x; break; }
            int64_t q = sx / sy;
            if (sx % sy != 0 && ((sx < 0) == (sy < 0))) q++;   /* round toward +inf */
            *r = (uint64_t)q;
        } else {
            *r = x / y + (x % y != 0);
        }
        break;
    default: kf_unreachable("integer math builtin");
    }
    *r &= width_mask(bits);
    return IOP_OK;
}

/* f16/bf16 lanes: fma rounded once, PTX min/max (two NaNs: the canonical
 * NaN), abs as the sign bit cleared; the rest in double, rounded once. */
static uint64_t half_math(kf_builtin fn, kf_scalar s, uint64_t x, uint64_t y, uint64_t z)
{
    double a = kf_bits_to_double(s, x), b = kf_bits_to_double(s, y);
    switch (fn) {
    case KF_BI_FMA: return kf_half_fma(s, (uint16_t)x, (uint16_t)y, (uint16_t)z);
    case KF_BI_ABS: return x & 0x7fff;
    case KF_BI_MIN:
    case KF_BI_MAX:
        if (isnan(a) && isnan(b)) return 0x7fff;
        return kf_bits_from_double(s, fn == KF_BI_MIN ? kf_fmin(a, b) : kf_fmax(a, b));
    default: return kf_bits_from_double(s, f64_math(fn, a, b, kf_bits_to_double(s, z)));
    }
}

int kf_iop_math(kf_builtin fn, kf_scalar s, kf_scalar s_in, unsigned lanes, kf_islot *r,
                const kf_islot *a, const kf_islot *b, const kf_islot *c)
{
    unsigned bi = kf_scalar_bytes[s_in], bo = kf_scalar_bytes[s];
    char cls = kf_scalar_class[s_in];
    kf_islot out = {{0, 0}};
    for (unsigned i = 0; i < lanes; i++) {
        uint64_t x = kf_iop_lane(a, bi, i);
        uint64_t y = b ? kf_iop_lane(b, bi, i) : 0, z = c ? kf_iop_lane(c, bi, i) : 0, w;
        if (s_in == KF_S_F32) {
            w = kf_f32_bits(f32_math(fn, kf_f32_from_bits((uint32_t)x), kf_f32_from_bits((uint32_t)y),
                                     kf_f32_from_bits((uint32_t)z)));
        } else if (s_in == KF_S_F16 || s_in == KF_S_BF16) {
            w = half_math(fn, s_in, x, y, z);
        } else if (cls == 'f') {
            w = kf_bits_from_double(s, f64_math(fn, kf_bits_to_double(s_in, x), kf_bits_to_double(s_in, y),
                                                kf_bits_to_double(s_in, z)));
        } else {
            int st = int_math(fn, cls == 'i', 8 * bi, x, y, z, &w);
            if (st) return st;
        }
        kf_iop_set_lane(&out, bo, i, w);
    }
    *r = out;
    return IOP_OK;
}

int kf_iop_intrin(kf_builtin fn, kf_scalar s, kf_islot *r, const kf_islot *const a[4], const kf_scalar s_in[4])
{
    kf_islot out = {{0, 0}};
    unsigned bits = 8u * kf_scalar_bytes[s];
    switch (fn) {
    case KF_BI_DOT4:
        out.u32[0] = kf_dot4(a[0]->u32[0], s_in[0] == KF_S_I8, a[1]->u32[0], s_in[1] == KF_S_I8, a[2]->u32[0]);
        break;
    case KF_BI_BFE:
        if (a[1]->u32[0] > 255) return IOP_POS255;
        if (a[2]->u32[0] > 255) return IOP_LEN255;
        out.u64[0] = kf_bfe(kf_iop_lane(a[0], bits / 8, 0), bits, kf_scalar_class[s] == 'i', a[1]->u32[0], a[2]->u32[0]);
        break;
    case KF_BI_BFI:
        if (a[2]->u32[0] > 255) return IOP_POS255;
        if (a[3]->u32[0] > 255) return IOP_LEN255;
        out.u64[0] = kf_bfi(kf_iop_lane(a[0], bits / 8, 0), kf_iop_lane(a[1], bits / 8, 0), bits, a[2]->u32[0],
                            a[3]->u32[0]);
        break;
    case KF_BI_PRMT: out.u32[0] = kf_prmt(a[0]->u32[0], a[1]->u32[0], a[2]->u32[0]); break;
    default: kf_unreachable("intrinsic");
    }
    if (bits == 32) out.u32[1] = 0;   /* only the type's width is read */
    *r = out;
    return IOP_OK;
}
