/* Unit tests of ir/numeric.c: f16/bf16 encoding with one RNE rounding
 * (ties, subnormals, overflow, NaN), the double-rounding traps where going
 * through f32 would give a different answer, and the contract's conversion
 * rules of the kf_bits_* helpers (float->int truncates, saturates, NaN->0;
 * ints wrap; int->float rounds to nearest even once), and the LANGUAGE.md
 * section 8 operations as PTX defines them: min/max with NaN and signed
 * zeros, f16/bf16 fma rounded once, rcp.approx.ftz's flushes, bfe, bfi,
 * prmt and dp4a. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "numeric.h"

static void f16_exact_values_and_limits(void **state)
{
    assert_int_equal(kf_f16_from_double(1.0), 0x3c00);
    assert_int_equal(kf_f16_from_double(-2.0), 0xc000);
    assert_int_equal(kf_f16_from_double(0.0), 0x0000);
    assert_int_equal(kf_f16_from_double(-0.0), 0x8000);
    assert_int_equal(kf_f16_from_double(65504.0), 0x7bff);      /* max finite */
    assert_int_equal(kf_f16_from_double(-65504.0), 0xfbff);
    assert_int_equal(kf_f16_from_double(65519.99), 0x7bff);     /* below the tie */
    assert_int_equal(kf_f16_from_double(65520.0), 0x7c00);      /* tie rounds to even = inf */
    assert_int_equal(kf_f16_from_double(1e10), 0x7c00);
    assert_int_equal(kf_f16_from_double(-1e300), 0xfc00);
    assert_int_equal(kf_f16_from_double(INFINITY), 0x7c00);
    assert_int_equal(kf_f16_from_double(ldexp(1.0, -14)), 0x0400); /* min normal */
    assert_true(kf_f16_to_double(0x7bff) == 65504.0);
    assert_true(kf_f16_to_double(0x0400) == ldexp(1.0, -14));
    assert_true(isinf(kf_f16_to_double(0xfc00)) && kf_f16_to_double(0xfc00) < 0);
    assert_true(signbit(kf_f16_to_double(0x8000)));
}

static void f16_ties_round_to_even(void **state)
{
    assert_int_equal(kf_f16_from_double(2049.0), 0x6800);       /* 2048: even */
    assert_int_equal(kf_f16_from_double(2051.0), 0x6802);       /* 2052: even */
    assert_int_equal(kf_f16_from_double(2049.0001), 0x6801);    /* above the tie */
    assert_int_equal(kf_f16_from_double(1.0 + ldexp(1.0, -11)), 0x3c00);
    assert_int_equal(kf_f16_from_double(1.0 + 3 * ldexp(1.0, -11)), 0x3c02);
    assert_int_equal(kf_f16_from_double(-(1.0 + ldexp(1.0, -11))), 0xbc00);
}

static void f16_subnormals_round_once(void **state)
{
    double tiny = ldexp(1.0, -24);                               /* smallest subnormal */
    assert_int_equal(kf_f16_from_double(tiny), 0x0001);
    assert_int_equal(kf_f16_from_double(tiny / 2), 0x0000);      /* tie -> even 0 */
    assert_int_equal(kf_f16_from_double(-tiny / 2), 0x8000);
    assert_int_equal(kf_f16_from_double(tiny / 2 * 1.0000001), 0x0001);
    assert_int_equal(kf_f16_from_double(tiny * 1.5), 0x0002);    /* tie -> even 2 */
    assert_int_equal(kf_f16_from_double(tiny * 2.5), 0x0002);
    assert_int_equal(kf_f16_from_double(tiny * 1023), 0x03ff);   /* max subnormal */
    assert_int_equal(kf_f16_from_double(tiny * 1023.5), 0x0400); /* carries to min normal */
    assert_int_equal(kf_f16_from_double(ldexp(1.0, -40)), 0x0000);
    assert_int_equal(kf_f16_from_double(5e-324), 0x0000);        /* double subnormal */
    assert_true(kf_f16_to_double(0x0001) == tiny);
    assert_true(kf_f16_to_double(0x03ff) == tiny * 1023);
}

static void f16_nan_is_kept(void **state)
{
    uint16_t h = kf_f16_from_double(NAN);
    assert_int_equal(h & 0x7c00, 0x7c00);
    assert_int_not_equal(h & 0x03ff, 0);
    assert_true(isnan(kf_f16_to_double(0x7e00)));
    assert_true(isnan(kf_f16_to_double(0x7c01)));                /* signalling payload */
    assert_int_equal(kf_f16_from_double(-NAN) & 0x8000, 0x8000);
}

/* Values where f64 -> f32 -> f16 lands on an exact tie and rounds the other
 * way from a single f64 -> f16 rounding. */
static void f16_has_no_double_rounding(void **state)
{
    double x = 1.0 + ldexp(1.0, -11) + ldexp(1.0, -30);
    assert_int_equal(kf_f16_from_double(x), 0x3c01);
    assert_int_equal(kf_f16_from_double((double)(float)x), 0x3c00);  /* the trap */
    double y = 2048.0 + 1.0 + ldexp(1.0, -40);                       /* just above a tie */
    assert_int_equal(kf_f16_from_double(y), 0x6801);
    double z = ldexp(1.0, -25) + ldexp(1.0, -60);                    /* subnormal tie + tiny */
    assert_int_equal(kf_f16_from_double(z), 0x0001);
    assert_int_equal(kf_f16_from_double((double)(float)z), 0x0000);
}

static void bf16_rounding(void **state)
{
    assert_int_equal(kf_bf16_from_double(1.0), 0x3f80);
    assert_int_equal(kf_bf16_from_double(-1.0), 0xbf80);
    assert_int_equal(kf_bf16_from_double(1.0 + ldexp(1.0, -8)), 0x3f80);       /* tie, even */
    assert_int_equal(kf_bf16_from_double(1.0 + 3 * ldexp(1.0, -8)), 0x3f82);   /* tie, even */
    assert_int_equal(kf_bf16_from_double(1.0 + ldexp(1.0, -8) + ldexp(1.0, -40)), 0x3f81);
    assert_int_equal(kf_bf16_from_double((double)(float)(1.0 + ldexp(1.0, -8) + ldexp(1.0, -40))),
                     0x3f80);                                                   /* the trap */
    assert_int_equal(kf_bf16_from_double(3.0e38), 0x7f62);
    assert_int_equal(kf_bf16_from_double(3.4e38), 0x7f80);       /* past max, rounds to inf */
    assert_int_equal(kf_bf16_from_double(ldexp(1.0, -133)), 0x0001); /* smallest subnormal */
    assert_int_equal(kf_bf16_from_double(ldexp(1.0, -134)), 0x0000); /* tie -> 0 */
    assert_true(kf_bf16_to_double(0x3f81) == 1.0 + ldexp(1.0, -7));
    assert_true(kf_bf16_to_double(0x0001) == ldexp(1.0, -133));
    assert_true(isnan(kf_bf16_to_double(kf_bf16_from_double(NAN))));
}

static void float_to_int_truncates_and_saturates(void **state)
{
    assert_int_equal(kf_bits_from_double(KF_S_I32, 3e9), 0x7fffffff);
    assert_int_equal(kf_bits_from_double(KF_S_I32, -3e9), 0x80000000);
    assert_int_equal(kf_bits_from_double(KF_S_I32, NAN), 0);
    assert_int_equal(kf_bits_from_double(KF_S_I32, -1.9), 0xffffffff);
    assert_int_equal(kf_bits_from_double(KF_S_I32, 1.9), 1);
    assert_int_equal(kf_bits_from_double(KF_S_U8, 300.0), 255);
    assert_int_equal(kf_bits_from_double(KF_S_U8, -5.0), 0);
    assert_int_equal(kf_bits_from_double(KF_S_I8, -200.0), 0x80);
    assert_int_equal(kf_bits_from_double(KF_S_I8, -INFINITY), 0x80);
    assert_int_equal(kf_bits_from_double(KF_S_U32, INFINITY), 0xffffffff);
    assert_true(kf_bits_from_double(KF_S_U64, ldexp(1.0, 64)) == UINT64_MAX);
    assert_true(kf_bits_from_double(KF_S_U64, ldexp(1.0, 63)) == UINT64_C(1) << 63);
    assert_true(kf_bits_from_double(KF_S_I64, ldexp(1.0, 63)) == (uint64_t)INT64_MAX);
    assert_true(kf_bits_from_double(KF_S_I64, -ldexp(1.0, 63)) == (uint64_t)INT64_MIN);
    assert_true(kf_bits_from_double(KF_S_I64, NAN) == 0);
    assert_int_equal(kf_bits_from_double(KF_S_I16, 32767.9), 32767);
    assert_int_equal(kf_bits_from_double(KF_S_I16, -32768.9), 0x8000);
}

static void ints_wrap_and_int_to_float_rounds_once(void **state)
{
    assert_int_equal(kf_bits_from_i64(KF_S_I8, 200), 0xc8);
    assert_int_equal(kf_bits_from_i64(KF_S_U16, -1), 0xffff);
    assert_int_equal(kf_bits_from_u64(KF_S_I32, UINT64_C(0x1ffffffff)), 0xffffffff);
    assert_int_equal(kf_bits_from_i64(KF_S_F16, 2049), 0x6800);
    assert_int_equal(kf_bits_from_i64(KF_S_F16, -2051), 0xe802);
    assert_int_equal(kf_bits_from_i64(KF_S_F16, 70000), 0x7c00);
    assert_int_equal(kf_bits_from_i64(KF_S_F16, 0), 0);
    /* 2^60 + 2^52 + 1: through double it becomes an exact tie (2^60); one
     * rounding sees the +1 and rounds up. */
    int64_t big = (INT64_C(1) << 60) + (INT64_C(1) << 52) + 1;
    assert_int_equal(kf_bits_from_i64(KF_S_BF16, big), 0x5d81);
    assert_int_equal(kf_bits_from_i64(KF_S_BF16, -big), 0xdd81);
    assert_int_equal(kf_bits_from_u64(KF_S_F32, UINT64_MAX), 0x5f800000);
    assert_int_equal(kf_bits_from_i64(KF_S_F32, 16777217), 0x4b800000);  /* 2^24: even */
    assert_true(kf_bits_from_i64(KF_S_F64, INT64_MIN) == 0xc3e0000000000000ull);
    assert_int_equal(kf_bits_from_i64(KF_S_BOOL, 7), 1);
}

static void bits_read_back_sign_and_zero_extended(void **state)
{
    assert_true(kf_bits_to_i64(KF_S_I8, 0x80) == -128);
    assert_true(kf_bits_to_i64(KF_S_U8, 0x80) == 128);
    assert_true(kf_bits_to_i64(KF_S_I32, 0xffffffff) == -1);
    assert_true(kf_bits_to_i64(KF_S_U32, 0xffffffff) == 4294967295);
    assert_true(kf_bits_to_double(KF_S_U64, UINT64_MAX) == ldexp(1.0, 64));
    assert_true(kf_bits_to_double(KF_S_I16, 0x8000) == -32768.0);
    assert_true(kf_bits_to_double(KF_S_F32, 0x3fc00000) == 1.5);
    assert_true(kf_bits_to_double(KF_S_F16, 0x3e00) == 1.5);
    assert_true(kf_bits_to_double(KF_S_BF16, 0x3fc0) == 1.5);
    assert_true(kf_bits_to_double(KF_S_F64, 0x3ff8000000000000ull) == 1.5);
    assert_true(kf_bits_to_i64(KF_S_F32, 0xc0200000) == -2);     /* -2.5 truncates */
    assert_int_equal(kf_f32_bits(kf_f32_from_bits(0x7fc00001)), 0x7fc00001);
}

/* Every f16 and bf16 pattern decodes to a double that encodes back to the
 * same pattern (NaNs stay NaN), and decoding agrees with ldexp arithmetic. */
static void every_narrow_pattern_round_trips(void **state)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        double d = kf_f16_to_double((uint16_t)h), b = kf_bf16_to_double((uint16_t)h);
        uint32_t e = (h >> 10) & 31, m = h & 1023;
        if (e == 31) {
            assert_true(m ? isnan(d) : isinf(d));
            assert_true(!m || (kf_f16_from_double(d) & 0x7fff) > 0x7c00);
        } else {
            double ref = e ? ldexp(1024.0 + m, (int)e - 25) : ldexp((double)m, -24);
            assert_true(d == ((h & 0x8000) ? -ref : ref));
            assert_int_equal(kf_f16_from_double(d), h);
        }
        if (((h >> 7) & 255) == 255) assert_true((h & 127) ? isnan(b) : isinf(b));
        else assert_int_equal(kf_bf16_from_double(b), h);
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

/* For random doubles over the f16 range, the encoding is the nearest f16
 * (ties to the even pattern), checked against both neighbours. */
static void f16_encoding_is_the_nearest_value(void **state)
{
    for (int i = 0; i < 200000; i++) {
        double x = ldexp((double)(rng() >> 11) / 9007199254740992.0, (int)(rng() % 44) - 28);
        if (rng() & 1) x = -x;
        uint16_t r = kf_f16_from_double(x);
        double v = kf_f16_to_double(r);
        if (isinf(v)) {
            assert_true(fabs(x) >= 65520.0);
            continue;
        }
        double err = fabs(x - v);
        for (int dlt = -1; dlt <= 1; dlt += 2) {
            uint16_t n = (uint16_t)(r + dlt);
            if ((n & 0x7fff) >= 0x7c00 || ((r & 0x7fff) == 0 && dlt < 0)) continue;
            double en = fabs(x - kf_f16_to_double(n));
            assert_true(err <= en);
            if (err == en) assert_int_equal(r & 1, 0);
        }
    }
}

/* Every i8/u8 pair against C int arithmetic (no overflow at that width):
 * wrapping, C truncating division, INT_MIN / -1, shift amounts >= 8. */
static void int_binop_matches_c_on_every_8_bit_pair(void **state)
{
    static const kf_op ops[] = {KF_OP_ADD, KF_OP_SUB, KF_OP_MUL, KF_OP_DIV, KF_OP_REM,
                                KF_OP_AND, KF_OP_OR,  KF_OP_XOR, KF_OP_SHL, KF_OP_SHR};
    for (int sgn = 0; sgn < 2; sgn++)
        for (unsigned a = 0; a < 256; a++)
            for (unsigned b = 0; b < 256; b++)
                for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++) {
                    int x = sgn ? (int8_t)a : (int)a, y = sgn ? (int8_t)b : (int)b, want;
                    switch (ops[k]) {
                    case KF_OP_ADD: want = x + y; break;
                    case KF_OP_SUB: want = x - y; break;
                    case KF_OP_MUL: want = x * y; break;
                    case KF_OP_DIV: want = y ? x / y : -1; break;
                    case KF_OP_REM: want = y ? x % y : -1; break;
                    case KF_OP_AND: want = x & y; break;
                    case KF_OP_OR: want = x | y; break;
                    case KF_OP_XOR: want = x ^ y; break;
                    case KF_OP_SHL: want = b >= 8 ? 0 : (int)(a << b); break;
                    default: want = b >= 8 ? (x < 0 ? -1 : 0) : x / (1 << b) - (x < 0 && x % (1 << b) != 0); break;
                    }
                    uint64_t r = 12345;
                    bool ok = kf_int_binop(ops[k], sgn, 8, a, b, &r);
                    bool div0 = !b && (ops[k] == KF_OP_DIV || ops[k] == KF_OP_REM);
                    assert_int_equal(ok, !div0);
                    assert_int_equal(r, div0 ? 12345 : (uint64_t)(want & 0xff));
                }
}

static void int_binop_at_64_and_32_bits(void **state)
{
    uint64_t r;
    assert_true(kf_int_binop(KF_OP_DIV, true, 64, UINT64_C(1) << 63, UINT64_MAX, &r));
    assert_int_equal(r, UINT64_C(1) << 63);                      /* INT64_MIN / -1 */
    assert_true(kf_int_binop(KF_OP_REM, true, 64, UINT64_C(1) << 63, UINT64_MAX, &r));
    assert_int_equal(r, 0);
    assert_true(kf_int_binop(KF_OP_SHR, true, 32, 0x80000000u, 40, &r));
    assert_int_equal(r, 0xFFFFFFFFu);                             /* sign fill, masked */
    assert_true(kf_int_binop(KF_OP_SHL, false, 32, 1, 32, &r));
    assert_int_equal(r, 0);
    assert_true(kf_int_binop(KF_OP_SUB, false, 32, 0, 1, &r));
    assert_int_equal(r, 0xFFFFFFFFu);
    assert_true(kf_int_binop(KF_OP_DIV, true, 32, (uint32_t)-7, 2, &r));
    assert_int_equal(r, (uint32_t)-3);                            /* truncates toward zero */
    assert_false(kf_int_binop(KF_OP_LT, false, 32, 1, 2, &r));   /* not a BINOP */
}

/* ---- section 8 ----------------------------------------------------------------- */

static void minmax_ignore_nan_and_order_zeros(void **state)
{
    assert_true(kf_fmin(NAN, 2.0) == 2.0 && kf_fmin(2.0, NAN) == 2.0);
    assert_true(kf_fmax(NAN, -2.0) == -2.0);
    assert_true(isnan(kf_fmin(NAN, NAN)));
    assert_true(signbit(kf_fmin(0.0, -0.0)) && signbit(kf_fmin(-0.0, 0.0)));    /* -0 < +0 */
    assert_true(!signbit(kf_fmax(0.0, -0.0)) && !signbit(kf_fmax(-0.0, 0.0)));
    assert_true(kf_fmin(-INFINITY, 1.0) == -INFINITY && kf_fmax(3.0, 1.0) == 3.0);
}

/* bf16 3 * 87 = 261 lies halfway between 260 and 262: + 2^-133 (the
 * smallest bf16) must give 262, - 2^-133 260; fma in double first gives
 * 261, which rounds to even (260) both times. The f16 analogue: 3 * 683 =
 * 2049, halfway between 2048 and 2050, with +-2^-24. */
static void half_fma_rounds_once(void **state)
{
    assert_int_equal(kf_half_fma(KF_S_BF16, 0x4040, 0x42ae, 0x0001), 0x4383);   /* 262 */
    assert_int_equal(kf_half_fma(KF_S_BF16, 0x4040, 0x42ae, 0x8001), 0x4382);   /* 260 */
    assert_int_equal(kf_bf16_from_double(fma(3.0, 87.0, ldexp(1.0, -133))), 0x4382);   /* why: double first */
    assert_int_equal(kf_half_fma(KF_S_F16, 0x4200, 0x6156, 0x0001), 0x6801);    /* 2050 */
    assert_int_equal(kf_half_fma(KF_S_F16, 0x4200, 0x6156, 0x8001), 0x6800);    /* 2048 */
    assert_int_equal(kf_half_fma(KF_S_F16, 0x3c00, 0x3c00, 0x3c00), 0x4000);    /* 1*1+1 = 2 */
    assert_int_equal(kf_half_fma(KF_S_F16, 0x7bff, 0x4000, 0x0000), 0x7c00);    /* overflow: inf */
    assert_int_equal(kf_half_fma(KF_S_F16, 0x8000, 0x3c00, 0x8000), 0x8000);    /* -0*1 + -0 = -0 */
    assert_int_equal(kf_half_fma(KF_S_F16, 0x3c00, 0xbc00, 0x3c00), 0x0000);    /* exact 0 is +0 */
    assert_true(isnan(kf_f16_to_double(kf_half_fma(KF_S_F16, 0x7c00, 0x0000, 0x3c00))));   /* inf * 0 */
    assert_int_equal(kf_half_fma(KF_S_F16, 0x0001, 0x0001, 0x0000), 0x0000);    /* 2^-48 rounds to 0 */
}

static void rcp_flushes_subnormals(void **state)
{
    assert_true(kf_rcp_ftz(2.0f) == 0.5f && kf_rcp_ftz(-4.0f) == -0.25f);
    assert_true(kf_rcp_ftz(3.0f) == 1.0f / 3.0f);
    float sub = ldexpf(1.0f, -130);
    assert_true(isinf(kf_rcp_ftz(sub)) && kf_rcp_ftz(sub) > 0);              /* subnormal input: 1/+0 */
    assert_true(isinf(kf_rcp_ftz(-sub)) && kf_rcp_ftz(-sub) < 0);
    assert_true(isinf(kf_rcp_ftz(-0.0f)) && kf_rcp_ftz(-0.0f) < 0);
    float big = ldexpf(1.0f, 127);                                          /* 1/big = 2^-127: subnormal */
    assert_true(kf_rcp_ftz(big) == 0.0f && !signbit(kf_rcp_ftz(big)));
    assert_true(kf_rcp_ftz(-big) == 0.0f && signbit(kf_rcp_ftz(-big)));
    assert_true(kf_rcp_ftz(ldexpf(1.0f, 126)) == ldexpf(1.0f, -126));       /* the smallest normal stays */
    assert_true(kf_rcp_ftz(INFINITY) == 0.0f && isnan(kf_rcp_ftz(NAN)));
}

static void bfe_follows_ptx_past_the_width(void **state)
{
    assert_int_equal(kf_bfe(0xABCD1234u, 32, false, 8, 8), 0x12);
    assert_int_equal(kf_bfe(0xABCD1234u, 32, true, 28, 4), 0xFFFFFFFA);           /* sign of the field */
    assert_int_equal(kf_bfe(0xABCD1234u, 32, true, 24, 0), 0);                     /* len 0 */
    assert_int_equal(kf_bfe(0xABCD1234u, 32, false, 28, 8), 0xA);                 /* runs past: 4 bits */
    assert_int_equal(kf_bfe(0xABCD1234u, 32, true, 28, 8), 0xFFFFFFFA);           /* sign: bit 31 */
    assert_int_equal(kf_bfe(0x8BCD1234u, 32, true, 40, 3), 0xFFFFFFFF);           /* past msb: bit 31 */
    assert_int_equal(kf_bfe(0x0BCD1234u, 32, true, 40, 3), 0);
    assert_true(kf_bfe(0x8000000000000000ull, 64, true, 63, 200) == ~0ull);
    assert_true(kf_bfe(0x8000000000000000ull, 64, false, 63, 200) == 1);
}

static void bfi_inserts_inside_the_width(void **state)
{
    assert_int_equal(kf_bfi(0xFF, 0x12345678u, 32, 8, 8), 0x1234FF78);
    assert_int_equal(kf_bfi(0xFF, 0x12345678u, 32, 28, 8), 0xF2345678);           /* only 4 bits land */
    assert_int_equal(kf_bfi(0xFF, 0x12345678u, 32, 32, 8), 0x12345678);           /* past the msb: x */
    assert_int_equal(kf_bfi(0xFF, 0x12345678u, 32, 4, 0), 0x12345678);            /* len 0: x */
    assert_true(kf_bfi(1, 0, 64, 63, 1) == 0x8000000000000000ull);
}

static void prmt_selects_and_replicates_signs(void **state)
{
    assert_int_equal(kf_prmt(0x33221100u, 0x77665544u, 0x3210), 0x33221100);
    assert_int_equal(kf_prmt(0x33221100u, 0x77665544u, 0x7654), 0x77665544);
    assert_int_equal(kf_prmt(0x33221100u, 0x77665544u, 0x0123), 0x00112233);
    assert_int_equal(kf_prmt(0x00008000u, 0, 0x9991), 0xFFFFFF80);                 /* byte 1, then its sign */
    assert_int_equal(kf_prmt(0x00007F00u, 0, 0x9991), 0x0000007F);
    assert_int_equal(kf_prmt(0x33221100u, 0x77665544u, 0xFFFF3210u), 0x33221100);  /* bits 16..31 ignored */
}

static void dot4_sums_bytes_with_wrap(void **state)
{
    assert_int_equal(kf_dot4(0x04030201u, true, 0x01010101u, true, 10), 20);
    assert_int_equal((int32_t)kf_dot4(0xFFFFFFFFu, true, 0x01010101u, false, 0), -4);   /* -1 * 1, four times */
    assert_int_equal(kf_dot4(0xFFFFFFFFu, false, 0xFFFFFFFFu, false, 0), 4 * 255 * 255);
    assert_int_equal(kf_dot4(0x80808080u, true, 0x80808080u, true, 0x7FFFFFFFu), 0x7FFFFFFFu + 4 * 16384u);   /* wraps */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(f16_exact_values_and_limits),
        cmocka_unit_test(f16_ties_round_to_even),
        cmocka_unit_test(f16_subnormals_round_once),
        cmocka_unit_test(f16_nan_is_kept),
        cmocka_unit_test(f16_has_no_double_rounding),
        cmocka_unit_test(bf16_rounding),
        cmocka_unit_test(float_to_int_truncates_and_saturates),
        cmocka_unit_test(ints_wrap_and_int_to_float_rounds_once),
        cmocka_unit_test(bits_read_back_sign_and_zero_extended),
        cmocka_unit_test(every_narrow_pattern_round_trips),
        cmocka_unit_test(f16_encoding_is_the_nearest_value),
        cmocka_unit_test(int_binop_matches_c_on_every_8_bit_pair),
        cmocka_unit_test(int_binop_at_64_and_32_bits),
        cmocka_unit_test(minmax_ignore_nan_and_order_zeros),
        cmocka_unit_test(half_fma_rounds_once),
        cmocka_unit_test(rcp_flushes_subnormals),
        cmocka_unit_test(bfe_follows_ptx_past_the_width),
        cmocka_unit_test(bfi_inserts_inside_the_width),
        cmocka_unit_test(prmt_selects_and_replicates_signs),
        cmocka_unit_test(dot4_sums_bytes_with_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
