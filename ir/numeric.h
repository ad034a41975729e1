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

#endif
