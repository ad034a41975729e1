/* Exact numeric conversions shared by the interpreter, the CLI (.npy, rand)
 * and the golden references: f16/bf16 encoding with round-to-nearest-even
 * from double in ONE rounding (no double rounding through f32), and the
 * contract's float->int conversion (truncate toward zero, saturate, NaN->0).
 * Also the contract's integer arithmetic, shared by the interpreter and the
 * constant folding of lowering so that both compute the same bits. */
#ifndef KF_NUMERIC_H
#define KF_NUMERIC_H

#include "ast.h"

uint16_t kf_f16_from_double(double x);   /* RNE, overflow -> inf, NaN kept */
double kf_f16_to_double(uint16_t h);
uint16_t kf_bf16_from_double(double x);  /* RNE */
double kf_bf16_to_double(uint16_t h);
uint32_t kf_f32_bits(float x);
float kf_f32_from_bits(uint32_t b);

/* Reads the lane bits (kf_value / IR CONST encoding) of scalar type s as a
 * double / int64 / uint64, and writes a double or integer into bits of s
 * with the contract's conversion rules (float->int: trunc, saturate, NaN->0;
 * int->float and float narrowing: round to nearest even). */
double kf_bits_to_double(kf_scalar s, uint64_t bits);
int64_t kf_bits_to_i64(kf_scalar s, uint64_t bits);      /* sign/zero extended */
uint64_t kf_bits_from_double(kf_scalar s, double x);
uint64_t kf_bits_from_i64(kf_scalar s, int64_t x);       /* ints wrap; floats RNE */
uint64_t kf_bits_from_u64(kf_scalar s, uint64_t x);      /* ints wrap; floats RNE */

/* The contract's integer BINOP on the low `bits` bits (1..64) of a and b,
 * two's complement when sgn: + - * wrap, INT_MIN / -1 = INT_MIN and
 * INT_MIN % -1 = 0, % truncates like C, the shift amount is unsigned and
 * >= bits gives 0 (or the sign fill for signed >>). *r gets the result's
 * low `bits` bits. Returns false, *r unchanged, for division or remainder
 * by zero and for an op that is not an integer BINOP. */
bool kf_int_binop(kf_op op, bool sgn, unsigned bits, uint64_t a, uint64_t b, uint64_t *r);

/* ---- LANGUAGE.md section 8: the PTX semantics every back end follows ---- */

/* min/max of PTX min/max.{f32,f64,f16x2,...}: a NaN operand gives the other
 * operand (both NaN: NaN), and -0 < +0. Inline: the interpreter's f32 fast
 * path uses them. */
static inline double kf_fmin(double a, double b)
{
    if (__builtin_isnan(a)) return b;
    if (__builtin_isnan(b)) return a;
    if (a == b) return __builtin_signbit(a) ? a : b;
    return a < b ? a : b;
}

static inline double kf_fmax(double a, double b)
{
    if (__builtin_isnan(a)) return b;
    if (__builtin_isnan(b)) return a;
    if (a == b) return __builtin_signbit(a) ? b : a;
    return a > b ? a : b;
}
/* fma(a, b, c) of f16 or bf16 bits (s), rounded once to s (RNE), as PTX
 * fma.rn.f16x2 / .bf16x2: the exact a*b + c, not fma in double then a second
 * rounding (see numeric.c for why that differs for bf16). */
uint16_t kf_half_fma(kf_scalar s, uint16_t a, uint16_t b, uint16_t c);
/* rcp.approx.ftz.f32 as the interpreter computes it: the correctly rounded
 * 1/x, with subnormal inputs and results flushed to zero of their sign. */
float kf_rcp_ftz(float x);
/* PTX bfe / bfi on the low `bits` (32 or 64) bits, pos and len in 0..255. */
uint64_t kf_bfe(uint64_t x, unsigned bits, bool sgn, uint32_t pos, uint32_t len);
uint64_t kf_bfi(uint64_t field, uint64_t x, unsigned bits, uint32_t pos, uint32_t len);
/* PTX prmt.b32 in its default mode. */
uint32_t kf_prmt(uint32_t a, uint32_t b, uint32_t sel);
/* PTX dp4a: c + the dot product of the four bytes of a and b (each signed
 * or unsigned), modulo 2^32. */
uint32_t kf_dot4(uint32_t a, bool a_signed, uint32_t b, bool b_signed, uint32_t c);

#endif
