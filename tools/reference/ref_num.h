/* The numerics the independent references share (tools/reference/ for the
 * golden cases, tools/decode/ref.c for the decode step): f16 rounding done
 * here in double (never the compiler's or the kernels' conversions), the
 * Q4_K block layout as llama.cpp documents it, llama.cpp's q8_1 activation
 * quantization (the f32 operations it specifies), and the rotary turn of
 * one head. Plain C over doubles; nothing of kforge's compiler or runtime. */
#ifndef KF_REF_NUM_H
#define KF_REF_NUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* x rounded to p significant bits, minimum normal exponent emin, maximum
 * exponent emax, to nearest even, in one rounding (overflow: infinity). */
double kf_ref_round_fmt(double x, int p, int emin, int emax);
/* x rounded to f16 (as a double), its bits, and the value of f16 bits. */
double kf_ref_rf16(double x);
uint16_t kf_ref_f16_bits(double x);
double kf_ref_f16_value(uint16_t h);

/* Q4_K (block_q4_K, 144 bytes per 256 weights: f16 d, f16 dmin, 12 bytes
 * of 6-bit scales and mins, 128 bytes of 4-bit quants). */
void kf_ref_q4k_scale_min(int j, const uint8_t *scales, int *sc, int *mn);
double kf_ref_q4k_d(const uint8_t *blk, int h);   /* h 0: d, 1: dmin */
/* The 256 weights of one block: weight 64j + l (l < 32) is d·sc·(qs[32j + l]
 * & 15) - dmin·m of sub-block 2j, weight 64j + 32 + l uses qs[32j + l] >> 4
 * and sub-block 2j + 1. */
void kf_ref_q4k_dequant(const uint8_t *blk, double *out);
/* One row of nbk blocks times 8-bit x (xq, and xds as (d, s) f16 bit pairs
 * per 32 values): llama.cpp's dot, sum over sub-blocks of
 * d·sc·d8·sum(q4·q8) - dmin·m·s8, in double. */
double kf_ref_q4k_q8_row(const uint8_t *row, size_t nbk, const int8_t *xq, const uint16_t *xds);
/* q8 quantization of one block of n <= 32 values (llama.cpp's
 * quantize_q8_1 in f32): d = amax / 127, q = round(x / d) half away from
 * zero; ds = (d, the block's sum) as f16 bits. */
void kf_ref_q8_block(const float *x, size_t n, int8_t *xq, uint16_t ds[2]);

/* The rotary angle of pair i of a head of d values at position pos:
 * pos·theta^(-2i/d). */
double kf_ref_rope_angle(double pos, size_t i, size_t d, double theta);
/* Turns the pairs of one head of d f16 values in place: pair i (NeoX: i and
 * i + d/2; GPT-J: 2i and 2i + 1) by pos·theta^(-2i/d), each result rounded
 * to f16. */
void kf_ref_rope_head(uint16_t *x, size_t d, double pos, double theta, bool neox);

#endif
