/* Exact numeric conversions (numeric.h). f16 and bf16 are produced by one
 * generic routine that rounds a binary value sig * 2^exp to a narrow IEEE
 * format with round-to-nearest-even, subnormals, overflow to infinity, in a
 * single rounding. Doubles and 64-bit integers both feed it their exact
 * significand, so no value is rounded twice (a double rounded to f32 then to
 * f16 can differ from a double rounded straight to f16). Integer and f32/f64
 * targets use C conversions, which are one RNE rounding already, except the
 * float->int rule (truncate, saturate, NaN->0), which is spelled out.
 * Integer arithmetic works on 64-bit words masked to the type's width, with
 * no signed overflow or implementation-defined shift in C. */
#include <math.h>
#include <string.h>

#include "numeric.h"

/* A narrow IEEE binary format: mantissa bits and exponent bits. */
typedef struct {
    int mant;
    int expo;
} narrow_fmt;

static const narrow_fmt FMT_F16 = {10, 5};
static const narrow_fmt FMT_BF16 = {7, 8};

static int msb64(uint64_t x)   /* x != 0 */
{
    return 63 - __builtin_clzll(x);
}

/* Rounds (-1)^neg * sig * 2^exp2 (sig != 0) to format f, RNE, one rounding. */
static uint16_t round_to_narrow(narrow_fmt f, bool neg, uint64_t sig, int exp2)
{
    const int bias = (1 << (f.expo - 1)) - 1;
    const uint32_t inf = ((1u << f.expo) - 1u) << f.mant;
    const uint16_t sign = neg ? (uint16_t)(1u << (f.mant + f.expo)) : 0;
    int p = msb64(sig);
    int e = p + exp2;                       /* value in [2^e, 2^(e+1)) */
    if (e > bias) return (uint16_t)(sign | inf);
    int emin = 1 - bias;
    int shift = p - f.mant;                 /* bits below the kept significand */
    if (e < emin) shift += emin - e;        /* subnormal: fewer bits kept */
    uint64_t r;
    if (shift <= 0) {
        r = sig << -shift;                  /* exact */
    } else if (shift > 64) {
        r = 0;                              /* below half the smallest subnormal */
    } else {
        r = shift == 64 ? 0 : sig >> shift;
        uint64_t rem = shift == 64 ? sig : sig & ((UINT64_C(1) << shift) - 1);
        uint64_t half = UINT64_C(1) << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
    }
    uint32_t bits;
    if (e < emin) bits = (uint32_t)r;       /* may carry into the smallest normal */
    else bits = ((uint32_t)(e + bias - 1) << f.mant) + (uint32_t)r;
    if (bits >= inf) bits = inf;
    return (uint16_t)(sign | bits);
}

static uint16_t narrow_from_double(narrow_fmt f, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    bool neg = b >> 63;
    int ex = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & ((UINT64_C(1) << 52) - 1);
    const uint16_t sign = neg ? (uint16_t)(1u << (f.mant + f.expo)) : 0;
    const uint32_t inf = ((1u << f.expo) - 1u) << f.mant;
    if (ex == 0x7ff) {
        if (!m) return (uint16_t)(sign | inf);
        uint32_t payload = (uint32_t)(m >> (52 - f.mant)) | (1u << (f.mant - 1));  /* quiet */
        return (uint16_t)(sign | inf | payload);
    }
    if (ex == 0 && m == 0) return sign;
    if (ex == 0) return round_to_narrow(f, neg, m, -1074);
    return round_to_narrow(f, neg, m | (UINT64_C(1) << 52), ex - 1075);
}

static double narrow_to_double(narrow_fmt f, uint16_t h)
{
    const int bias = (1 << (f.expo - 1)) - 1;
    uint64_t sign = (uint64_t)((h >> (f.mant + f.expo)) & 1) << 63;
    uint32_t ex = (h >> f.mant) & ((1u << f.expo) - 1u);
    uint64_t m = h & ((1u << f.mant) - 1u);
    uint64_t b;
    if (ex == (1u << f.expo) - 1u) {
        b = sign | (UINT64_C(0x7ff) << 52) | (m << (52 - f.mant));   /* inf, or NaN with its payload */
    } else if (ex == 0) {
        double v = ldexp((double)m, 1 - bias - f.mant);               /* zero or subnormal: exact */
        return sign ? -v : v;
    } else {
        b = sign | ((uint64_t)((int)ex - bias + 1023) << 52) | (m << (52 - f.mant));
    }
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

uint16_t kf_f16_from_double(double x) { return narrow_from_double(FMT_F16, x); }
double kf_f16_to_double(uint16_t h) { return narrow_to_double(FMT_F16, h); }
uint16_t kf_bf16_from_double(double x) { return narrow_from_double(FMT_BF16, x); }
double kf_bf16_to_double(uint16_t h) { return narrow_to_double(FMT_BF16, h); }

uint32_t kf_f32_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

float kf_f32_from_bits(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static double f64_from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint64_t f64_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* Wraps x to the width of integer scalar s, in the canonical lane encoding
 * (zero-extended bits of the type). */
static uint64_t int_wrap(kf_scalar s, uint64_t x)
{
    unsigned bytes = kf_scalar_bytes[s];
    if (s == KF_S_BOOL) return x != 0;
    return bytes >= 8 ? x : x & ((UINT64_C(1) << (8 * bytes)) - 1);
}

double kf_bits_to_double(kf_scalar s, uint64_t bits)
{
    switch (s) {
    case KF_S_F16: return kf_f16_to_double((uint16_t)bits);
    case KF_S_BF16: return kf_bf16_to_double((uint16_t)bits);
    case KF_S_F32: return kf_f32_from_bits((uint32_t)bits);
    case KF_S_F64: case KF_S_UFLOAT: return f64_from_bits(bits);
    case KF_S_U64: return (double)bits;
    default: return (double)kf_bits_to_i64(s, bits);
    }
}

int64_t kf_bits_to_i64(kf_scalar s, uint64_t bits)
{
    switch (s) {
    case KF_S_BOOL: return (bits & 0xff) != 0;
    case KF_S_I8: return (int8_t)(uint8_t)bits;
    case KF_S_U8: return (uint8_t)bits;
    case KF_S_I16: return (int16_t)(uint16_t)bits;
    case KF_S_U16: return (uint16_t)bits;
    case KF_S_I32: return (int32_t)(uint32_t)bits;
    case KF_S_U32: return (uint32_t)bits;
    case KF_S_I64: case KF_S_U64: case KF_S_UINT: return (int64_t)bits;
    default: {
        /* A float read as an integer follows the float->int rule. */
        uint64_t r = kf_bits_from_double(KF_S_I64, kf_bits_to_double(s, bits));
        return (int64_t)r;
    }
    }
}

/* Float -> integer of scalar s: truncate toward zero, saturate, NaN -> 0. */
static uint64_t int_from_double(kf_scalar s, double x)
{
    if (isnan(x)) return 0;
    if (s == KF_S_BOOL) return x != 0.0;
    unsigned bits = 8u * kf_scalar_bytes[s];
    x = trunc(x);
    if (kf_scalar_class[s] == 'u') {
        if (x <= 0.0) return 0;
        double lim = ldexp(1.0, (int)bits);              /* exact power of two */
        if (x >= lim) return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        return (uint64_t)x;
    }
    double lim = ldexp(1.0, (int)bits - 1);
    int64_t v;
    if (x >= lim) v = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    else if (x < -lim) v = bits >= 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
    else v = (int64_t)x;
    return int_wrap(s, (uint64_t)v);
}

uint64_t kf_bits_from_double(kf_scalar s, double x)
{
    switch (s) {
    case KF_S_F16: return kf_f16_from_double(x);
    case KF_S_BF16: return kf_bf16_from_double(x);
    case KF_S_F32: return kf_f32_bits((float)x);
    case KF_S_F64: case KF_S_UFLOAT: return f64_bits(x);
    default: return int_from_double(s, x);
    }
}

/* An integer magnitude to a float scalar, one RNE rounding. */
static uint64_t float_from_int(kf_scalar s, bool neg, uint64_t mag)
{
    switch (s) {
    case KF_S_F16:
    case KF_S_BF16: {
        narrow_fmt f = s == KF_S_F16 ? FMT_F16 : FMT_BF16;
        if (!mag) return neg ? (uint64_t)1 << (f.mant + f.expo) : 0;
        return round_to_narrow(f, neg, mag, 0);
    }
    case KF_S_F32: {
        float v = (float)mag;                 /* one rounding */
        return kf_f32_bits(neg ? -v : v);
    }
    default: {
        double v = (double)mag;
        return f64_bits(neg ? -v : v);
    }
    }
}

uint64_t kf_bits_from_i64(kf_scalar s, int64_t x)
{
    if (kf_scalar_class[s] == 'f' || s == KF_S_UFLOAT) {
        bool neg = x < 0;
        uint64_t mag = neg ? 0 - (uint64_t)x : (uint64_t)x;
        return float_from_int(s, neg && mag, mag);
    }
    return int_wrap(s, (uint64_t)x);
}

uint64_t kf_bits_from_u64(kf_scalar s, uint64_t x)
{
    if (kf_scalar_class[s] == 'f' || s == KF_S_UFLOAT) return float_from_int(s, false, x);
    return int_wrap(s, x);
}

/* Sign-extends the low `bits` bits of x. */
static int64_t sext(uint64_t x, unsigned bits)
{
    if (bits >= 64) return (int64_t)x;
    uint64_t m = UINT64_C(1) << (bits - 1);
    return (int64_t)((x ^ m) - m);
}

/* Arithmetic right shift that does not rely on implementation-defined C. */
static int64_t sar(int64_t x, unsigned n)
{
    return x < 0 ? ~(int64_t)(~(uint64_t)x >> n) : (int64_t)((uint64_t)x >> n);
}

static uint64_t shift_right(bool sgn, unsigned bits, uint64_t a, uint64_t n)
{
    if (sgn) return (uint64_t)sar(sext(a, bits), n >= bits ? bits - 1 : (unsigned)n);
    return n >= bits ? 0 : a >> n;
}

bool kf_int_binop(kf_op op, bool sgn, unsigned bits, uint64_t a, uint64_t b, uint64_t *r)
{
    uint64_t m = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1, v;
    a &= m, b &= m;
    int64_t x = sext(a, bits), y = sext(b, bits);
    switch (op) {
    case KF_OP_ADD: v = a + b; break;
    case KF_OP_SUB: v = a - b; break;
    case KF_OP_MUL: v = a * b; break;
    case KF_OP_AND: v = a & b; break;
    case KF_OP_OR: v = a | b; break;
    case KF_OP_XOR: v = a ^ b; break;
    case KF_OP_DIV:
    case KF_OP_REM:
        if (!b) return false;
        if (sgn && y == -1) v = op == KF_OP_DIV ? 0 - a : 0;   /* INT_MIN / -1 wraps */
        else if (sgn) v = (uint64_t)(op == KF_OP_DIV ? x / y : x % y);
        else v = op == KF_OP_DIV ? a / b : a % b;
        break;
    case KF_OP_SHL: v = b >= bits ? 0 : a << b; break;
    case KF_OP_SHR: v = shift_right(sgn, bits, a, b); break;
    default: return false;
    }
    *r = v & m;
    return true;
}

/* ---- LANGUAGE.md section 8 ------------------------------------------------ */

/* fma of two narrow formats in ONE rounding. The product a*b is exact in a
 * double (11 + 11 or 8 + 8 significant bits, exponents far inside double's
 * range), but a*b + c in double rounds again before the final rounding to
 * f16/bf16, and that double rounding is not innocuous for fma: the exact sum
 * can lie next to a midpoint of the narrow format, closer than half a double
 * ulp. bf16 example: 3 * 87 = 261 is the midpoint between 260 and 262, and
 * 261 + 2^-133 (the smallest bf16) must round up to 262, but in double it is
 * 261, which rounds to even, 260. (For f16 the exponent range is too small
 * for this: any f16 a*b + c is within 2^-48 granularity of its neighbours and
 * the double keeps it away from every midpoint; the code below does not need
 * that argument.) So the sum is computed as RN(a*b + c) with its exact error
 * (TwoSum), made round-to-odd (an inexact sum keeps an odd last bit), and
 * round-to-odd at 53 bits followed by RNE at <= 11 bits is exactly one RNE
 * rounding of the exact value. Infinities and NaNs pass through fma. */
uint16_t kf_half_fma(kf_scalar s, uint16_t a, uint16_t b, uint16_t c)
{
    narrow_fmt f = s == KF_S_BF16 ? FMT_BF16 : FMT_F16;
    double x = narrow_to_double(f, a), y = narrow_to_double(f, b), z = narrow_to_double(f, c);
    double p = x * y, sum = p + z;
    if (!isfinite(x) || !isfinite(y) || !isfinite(z) || !isfinite(sum))
        return narrow_from_double(f, fma(x, y, z));
    double bv = sum - p, err = (p - (sum - bv)) + (z - bv);
    uint64_t bits = f64_bits(sum);
    if (err != 0 && !(bits & 1)) sum = nextafter(sum, err > 0 ? INFINITY : -INFINITY);
    return narrow_from_double(f, sum);
}

float kf_rcp_ftz(float x)
{
    if (fpclassify(x) == FP_SUBNORMAL) x = copysignf(0.0f, x);
    float r = 1.0f / x;   /* one IEEE division: correctly rounded */
    return fpclassify(r) == FP_SUBNORMAL ? copysignf(0.0f, r) : r;
}

/* PTX ISA bfe: bit i of the result is bit pos+i of x while i < len and
 * pos+i is inside x, else the sign bit of the field (0 unsigned or len 0). */
uint64_t kf_bfe(uint64_t x, unsigned bits, bool sgn, uint32_t pos, uint32_t len)
{
    unsigned msb = bits - 1;
    pos &= 0xff, len &= 0xff;
    uint64_t sbit = 0;
    if (sgn && len) sbit = (x >> (pos + len - 1 < msb ? pos + len - 1 : msb)) & 1;
    uint64_t d = 0;
    for (unsigned i = 0; i <= msb; i++) {
        uint64_t bit = i < len && pos + i <= msb ? (x >> (pos + i)) & 1 : sbit;
        d |= bit << i;
    }
    return d;
}

/* PTX ISA bfi: x with bits pos.. of it replaced by the low len bits of field
 * (only those that land inside x). */
uint64_t kf_bfi(uint64_t field, uint64_t x, unsigned bits, uint32_t pos, uint32_t len)
{
    unsigned msb = bits - 1;
    pos &= 0xff, len &= 0xff;
    for (unsigned i = 0; i < len && pos + i <= msb; i++) {
        uint64_t m = UINT64_C(1) << (pos + i);
        x = ((field >> i) & 1) ? x | m : x & ~m;
    }
    return x;
}

/* PTX ISA prmt (no mode): byte i of the result is byte sel[4i+2:4i] of
 * {b, a} (a the low word), or that byte's sign replicated when sel[4i+3]. */
uint32_t kf_prmt(uint32_t a, uint32_t b, uint32_t sel)
{
    uint64_t src = (uint64_t)b << 32 | a;
    uint32_t d = 0;
    for (unsigned i = 0; i < 4; i++) {
        unsigned ctl = (sel >> (4 * i)) & 0xf;
        uint32_t byte = (uint32_t)(src >> (8 * (ctl & 7))) & 0xff;
        if (ctl & 8) byte = (byte & 0x80) ? 0xff : 0;
        d |= byte << (8 * i);
    }
    return d;
}

uint32_t kf_dot4(uint32_t a, bool a_signed, uint32_t b, bool b_signed, uint32_t c)
{
    uint32_t d = c;
    for (unsigned i = 0; i < 4; i++) {
        uint32_t x = (a >> (8 * i)) & 0xff, y = (b >> (8 * i)) & 0xff;
        int32_t sx = a_signed ? (int32_t)(int8_t)x : (int32_t)x, sy = b_signed ? (int32_t)(int8_t)y : (int32_t)y;
        d += (uint32_t)(sx * sy);
    }
    return d;
}
