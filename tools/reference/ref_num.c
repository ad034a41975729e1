/* The references' shared numerics (ref_num.h): f16 rounding in double, the
 * Q4_K layout, q8_1 activation quantization and the rotary turn of a head,
 * written from their definitions (IEEE binary16, llama.cpp's block formats,
 * rotary angles pos·theta^(-2i/d)), never from kforge's kernels. */
#include "ref_num.h"

#include <math.h>

double kf_ref_round_fmt(double x, int p, int emin, int emax)
{
    if (x == 0 || isnan(x) || isinf(x)) return x;
    int e = ilogb(x);
    if (e < emin) e = emin;
    double q = ldexp(nearbyint(ldexp(x, p - 1 - e)), e - (p - 1));
    double maxv = ldexp(2.0 - ldexp(1.0, 1 - p), emax);
    return fabs(q) > maxv ? copysign(INFINITY, x) : q;
}

double kf_ref_rf16(double x) { return kf_ref_round_fmt(x, 11, -14, 15); }

uint16_t kf_ref_f16_bits(double x)
{
    double q = kf_ref_rf16(x);
    uint16_t sign = signbit(q) ? 0x8000 : 0;
    double a = fabs(q);
    if (isnan(q)) return 0x7e00;
    if (isinf(a)) return sign | 0x7c00;
    if (a < ldexp(1.0, -14)) return sign | (uint16_t)ldexp(a, 24);
    int e = ilogb(a);
    return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(ldexp(a, 10 - e) - 1024);
}

double kf_ref_f16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* get_scale_min_k4: 6-bit scale and min of sub-block j of the 12 scale bytes q. */
void kf_ref_q4k_scale_min(int j, const uint8_t *q, int *sc, int *mn)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *mn = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

double kf_ref_q4k_d(const uint8_t *blk, int h) { return kf_ref_f16_value((uint16_t)(blk[2 * h] | blk[2 * h + 1] << 8)); }

void kf_ref_q4k_dequant(const uint8_t *blk, double *out)
{
    const uint8_t *scales = blk + 4, *qs = blk + 16;
    for (int j = 0; j < 4; j++)
        for (int half = 0; half < 2; half++) {
            int sc, mn;
            kf_ref_q4k_scale_min(2 * j + half, scales, &sc, &mn);
            for (int l = 0; l < 32; l++) {
                int q = half ? qs[32 * j + l] >> 4 : qs[32 * j + l] & 15;
                out[64 * j + 32 * half + l] = kf_ref_q4k_d(blk, 0) * sc * q - kf_ref_q4k_d(blk, 1) * mn;
            }
        }
}

double kf_ref_q4k_q8_row(const uint8_t *row, size_t nbk, const int8_t *xq, const uint16_t *xds)
{
    double s = 0;
    for (size_t kb = 0; kb < nbk; kb++) {
        const uint8_t *blk = row + kb * 144, *qs = blk + 16;
        for (int sub = 0; sub < 8; sub++) {
            int sc, mn;
            long dot = 0;
            kf_ref_q4k_scale_min(sub, blk + 4, &sc, &mn);
            for (int l = 0; l < 32; l++) {
                int q = sub & 1 ? qs[32 * (sub / 2) + l] >> 4 : qs[32 * (sub / 2) + l] & 15;
                dot += (long)q * xq[kb * 256 + 32 * sub + l];
            }
            size_t ds = (kb * 8 + sub) * 2;
            s += kf_ref_q4k_d(blk, 0) * sc * kf_ref_f16_value(xds[ds]) * (double)dot -
                 kf_ref_q4k_d(blk, 1) * mn * kf_ref_f16_value(xds[ds + 1]);
        }
    }
    return s;
}

void kf_ref_q8_block(const float *x, size_t n, int8_t *xq, uint16_t ds[2])
{
    float amax = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        amax = fmaxf(amax, fabsf(x[i]));
        sum += x[i];
    }
    float d = amax / 127.0f;
    for (size_t i = 0; i < n; i++) xq[i] = amax == 0 ? 0 : (int8_t)roundf(x[i] / d);
    ds[0] = kf_ref_f16_bits(d);
    ds[1] = kf_ref_f16_bits(sum);
}

double kf_ref_rope_angle(double pos, size_t i, size_t d, double theta)
{
    return pos * pow(theta, -2.0 * (double)i / (double)d);
}

void kf_ref_rope_head(uint16_t *x, size_t d, double pos, double theta, bool neox)
{
    for (size_t i = 0; i < d / 2; i++) {
        double a = kf_ref_rope_angle(pos, i, d, theta), c = cos(a), sn = sin(a);
        size_t i0 = neox ? i : 2 * i, i1 = neox ? i + d / 2 : 2 * i + 1;
        double u = kf_ref_f16_value(x[i0]), v = kf_ref_f16_value(x[i1]);
        x[i0] = kf_ref_f16_bits(u * c - v * sn);
        x[i1] = kf_ref_f16_bits(v * c + u * sn);
    }
}
