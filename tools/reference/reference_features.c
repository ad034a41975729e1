/* Reference outputs of the feature kernels (kernels/features/),
 * included by reference.c. Each function restates in plain C what the
 * kernel computes under the contract's semantics: integers wrap (computed
 * in unsigned arithmetic), shifts by >= the width give 0 or the sign fill,
 * float->int truncates and saturates, f32 operations round per operation
 * (C float arithmetic, no contraction under -std=c11), f16/bf16 operations
 * round to their type per operation (round_fmt above). */
#include <stdint.h>

/* ---- helpers --------------------------------------------------------------- */

static double sat(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    if (v <= lo) return lo;
    if (v >= hi) return hi;
    return trunc(v);
}

static int32_t shl32(int32_t x, uint32_t a) { return a >= 32 ? 0 : (int32_t)((uint32_t)x << a); }
static int32_t sar32(int32_t x, uint32_t a) { return a >= 32 ? (x < 0 ? -1 : 0) : x >> a; }
static uint32_t shr32u(uint32_t x, uint32_t a) { return a >= 32 ? 0 : x >> a; }
static uint32_t clz32(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 32; }
static uint32_t clz64(uint64_t x) { return x ? (uint32_t)__builtin_clzll(x) : 64; }
static uint32_t popc64(uint64_t x) { return (uint32_t)__builtin_popcountll(x); }

static int64_t cdiv_s(int64_t a, int64_t b)
{
    int64_t q = a / b, r = a % b;
    return q + (r != 0 && ((a < 0) == (b < 0)));
}

static void out_free(ref_ctx *r, const char *name, kf_scalar s, void *data, size_t count)
{
    out_buf(r, name, s, data, count);
    free(data);
}

/* ---- types.kf ---------------------------------------------------------------- */

static void ref_convert(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, m;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    int8_t *o8 = in_buf(r, "o_i8", KF_S_I8, 1, &m);
    uint8_t *ou8 = in_buf(r, "o_u8", KF_S_U8, 1, &m);
    int16_t *o16 = in_buf(r, "o_i16", KF_S_I16, 1, &m);
    uint16_t *ou16 = in_buf(r, "o_u16", KF_S_U16, 1, &m);
    int32_t *o32 = in_buf(r, "o_i32", KF_S_I32, 1, &m);
    uint32_t *ou32 = in_buf(r, "o_u32", KF_S_U32, 1, &m);
    int64_t *o64 = in_buf(r, "o_i64", KF_S_I64, 1, &m);
    uint64_t *ou64 = in_buf(r, "o_u64", KF_S_U64, 1, &m);
    uint16_t *oh = in_buf(r, "o_f16", KF_S_F16, 1, &m);
    uint16_t *obf = in_buf(r, "o_bf16", KF_S_BF16, 1, &m);
    double *od = in_buf(r, "o_f64", KF_S_F64, 1, &m);
    uint8_t *ob = in_buf(r, "o_b", KF_S_U8, 1, &m);
    for (size_t i = 0; i < n && i < nx && i < m; i++) {
        float v = x[i] * 300.0f;
        o8[i] = (int8_t)sat(v, -128, 127);
        ou8[i] = (uint8_t)sat(v, 0, 255);
        o16[i] = (int16_t)sat(v * 200.0f, -32768, 32767);
        ou16[i] = (uint16_t)sat(v * 300.0f, 0, 65535);
        o32[i] = (int32_t)sat(v * 1.0e7f, -2147483648.0, 2147483647.0);
        ou32[i] = (uint32_t)sat(v * 2.0e7f, 0, 4294967295.0);
        double d64 = sat((double)x[i] * 1.0e15, -9223372036854775808.0, 9223372036854775807.0);
        o64[i] = d64 >= 9223372036854775807.0 ? INT64_MAX : (int64_t)d64;
        double du64 = sat((double)x[i] * 1.0e19, 0, 18446744073709551615.0);
        ou64[i] = du64 >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)du64;
        oh[i] = kf_ref_f16_bits(v);
        obf[i] = bf16_bits(v);
        od[i] = (double)x[i] * 3.0;
        ob[i] = v > 0.0f;
    }
    out_free(r, "o_i8", KF_S_I8, o8, m);
    out_free(r, "o_u8", KF_S_U8, ou8, m);
    out_free(r, "o_i16", KF_S_I16, o16, m);
    out_free(r, "o_u16", KF_S_U16, ou16, m);
    out_free(r, "o_i32", KF_S_I32, o32, m);
    out_free(r, "o_u32", KF_S_U32, ou32, m);
    out_free(r, "o_i64", KF_S_I64, o64, m);
    out_free(r, "o_u64", KF_S_U64, ou64, m);
    out_free(r, "o_f16", KF_S_F16, oh, m);
    out_free(r, "o_bf16", KF_S_BF16, obf, m);
    out_free(r, "o_f64", KF_S_F64, od, m);
    out_free(r, "o_b", KF_S_U8, ob, m);
    free(x);
}

static void ref_vectors(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, nw, m4, mh, mu, m8, mbf, mhf;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    uint32_t *w = in_buf(r, "w", KF_S_U32, 1, &nw);
    float *o4 = in_buf(r, "o4", KF_S_F32, 4, &m4);
    uint16_t *oh = in_buf(r, "oh", KF_S_F16, 2, &mh);
    uint32_t *ou = in_buf(r, "ou", KF_S_U32, 1, &mu);
    uint8_t *o8 = in_buf(r, "o8", KF_S_U8, 1, &m8);
    uint16_t *obf = in_buf(r, "obf", KF_S_BF16, 1, &mbf);
    uint16_t *ohf = in_buf(r, "ohf", KF_S_F16, 1, &mhf);
    for (size_t i = 0; i < n && i < nx && i < nw && i < m4; i++) {
        float xi = x[i], v[4] = {xi, 2.0f, -xi, 0.5f}, rr[4];
        for (int l = 0; l < 4; l++) {
            float t = v[l] * xi;
            t = t + 1.0f;
            float q = v[l] / 4.0f;
            rr[l] = t - q;
        }
        rr[1] = rr[0] + rr[3];
        rr[3] = -rr[3];
        rr[2] = rr[2] * 2.0f;
        memcpy(o4 + 4 * i, rr, sizeof rr);
        oh[2 * i] = (uint16_t)(w[i] >> 16);
        oh[2 * i + 1] = (uint16_t)w[i];
        ou[2 * i] = f32_bits(xi) ^ 0x80000000u;
        ou[2 * i + 1] = (w[i] >> 8) & 0xff;
        o8[i] = (uint8_t)((w[i] & 0xff) + (w[i] >> 24) + 3);
        double bx = rbf16(xi), prod = rbf16(bx * 1.5);
        obf[i] = bf16_bits(prod + 1.5);
        double hv = kf_ref_rf16(xi), sq = kf_ref_rf16(hv * hv);
        ohf[i] = kf_ref_f16_bits(sq + hv);
    }
    out_free(r, "o4", KF_S_F32, o4, m4 * 4);
    out_free(r, "oh", KF_S_F16, oh, mh * 2);
    out_free(r, "ou", KF_S_U32, ou, mu);
    out_free(r, "o8", KF_S_U8, o8, m8);
    out_free(r, "obf", KF_S_BF16, obf, mbf);
    out_free(r, "ohf", KF_S_F16, ohf, mhf);
    free(x);
    free(w);
}

/* ---- ops.kf ------------------------------------------------------------------ */

static void ops_i32_one(int32_t x, int32_t y, int32_t *o)
{
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
    o[0] = (int32_t)(ux + uy);
    o[1] = (int32_t)(ux - uy);
    o[2] = (int32_t)(ux * uy);
    if (y == 0) o[3] = o[4] = 0;
    else if (y == -1) o[3] = (int32_t)(0u - ux), o[4] = 0;
    else o[3] = x / y, o[4] = x % y;
    o[5] = x & y;
    o[6] = x | y;
    o[7] = x ^ y;
    o[8] = (int32_t)(~ux + (0u - uy));
    o[9] = shl32(x, (uint32_t)(y & 63));
    o[10] = sar32(x, (uint32_t)(y & 63));
    o[11] = (int32_t)(shr32u(ux, uy & 63) + ux / (uy | 1) + ux % (uy | 1));
    o[12] = (x < y) | (x <= y) << 1 | (x > y) << 2 | (x >= y) << 3 | (x == y) << 4 | (x != y) << 5
          | (ux < uy) << 6 | (ux >= uy) << 7;
    o[13] = (x > 0 && y > 0) || !(x < y);
    int32_t c = (int32_t)(ux + uy);
    c = (int32_t)((uint32_t)c - 3u);
    c = (int32_t)((uint32_t)c * 5u);
    c &= 0x7fffffff;
    c /= 7;
    c %= 100000;
    c |= 4;
    c ^= y;
    c = shl32(c, 3);
    c = sar32(c, 2);
    o[14] = c;
    uint32_t d = uy >> 4;
    d = d << (ux & 7);
    o[15] = (int32_t)d;
}

static void ref_ops_i32(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), na, nb, no;
    int32_t *a = in_buf(r, "a", KF_S_I32, 1, &na), *b = in_buf(r, "b", KF_S_I32, 1, &nb);
    int32_t *o = in_buf(r, "o", KF_S_I32, 1, &no);
    for (size_t i = 0; i < n && i < na && i < nb && 16 * i + 16 <= no; i++) ops_i32_one(a[i], b[i], o + 16 * i);
    out_free(r, "o", KF_S_I32, o, no);
    free(a);
    free(b);
}

static void ref_ops_widths(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), k[12];
    int8_t *a = in_buf(r, "a", KF_S_I8, 1, &k[0]);
    uint8_t *b = in_buf(r, "b", KF_S_U8, 1, &k[1]);
    int16_t *c = in_buf(r, "c", KF_S_I16, 1, &k[2]);
    uint16_t *d = in_buf(r, "d", KF_S_U16, 1, &k[3]);
    int64_t *e = in_buf(r, "e", KF_S_I64, 1, &k[4]);
    uint64_t *f = in_buf(r, "f", KF_S_U64, 1, &k[5]);
    int8_t *o8 = in_buf(r, "o8", KF_S_I8, 1, &k[6]);
    uint8_t *ou8 = in_buf(r, "ou8", KF_S_U8, 1, &k[7]);
    int16_t *o16 = in_buf(r, "o16", KF_S_I16, 1, &k[8]);
    uint16_t *ou16 = in_buf(r, "ou16", KF_S_U16, 1, &k[9]);
    int64_t *o64 = in_buf(r, "o64", KF_S_I64, 1, &k[10]);
    uint64_t *ou64 = in_buf(r, "ou64", KF_S_U64, 1, &k[11]);
    for (size_t i = 0; i < n && 3 * i + 3 <= k[10] && 2 * i + 2 <= k[6]; i++) {
        o8[2 * i] = (int8_t)(uint8_t)((unsigned)a[i] * 3u + (unsigned)a[i]);
        o8[2 * i + 1] = (int8_t)(a[i] >> 2);
        ou8[2 * i] = (uint8_t)(b[i] * b[i] - 7);
        ou8[2 * i + 1] = (uint8_t)((b[i] >> 3) | (uint8_t)(b[i] << 5));
        o16[2 * i] = (int16_t)(uint16_t)((unsigned)c[i] * (unsigned)c[i] + (unsigned)c[i]);
        int16_t negc = (int16_t)(uint16_t)(0u - (unsigned)c[i]);
        o16[2 * i + 1] = negc < 0 ? -1 : 0;
        ou16[2 * i] = (uint16_t)(d[i] * 3u + d[i] / 5u);
        ou16[2 * i + 1] = (uint16_t)(d[i] << 9);
        uint64_t ux = (uint64_t)e[i], y = f[i];
        o64[3 * i] = (int64_t)(ux * 3u - (uint64_t)(e[i] >> 7));
        o64[3 * i + 1] = e[i] / 1000 + e[i] % 1000;
        o64[3 * i + 2] = (int64_t)(ux << 40);
        ou64[3 * i] = y * y + (y >> 63);
        ou64[3 * i + 1] = y / 12345 + y % 12345;
        ou64[3 * i + 2] = (0 + (y >> 33)) ^ ~y;
    }
    out_free(r, "o8", KF_S_I8, o8, k[6]);
    out_free(r, "ou8", KF_S_U8, ou8, k[7]);
    out_free(r, "o16", KF_S_I16, o16, k[8]);
    out_free(r, "ou16", KF_S_U16, ou16, k[9]);
    out_free(r, "o64", KF_S_I64, o64, k[10]);
    out_free(r, "ou64", KF_S_U64, ou64, k[11]);
    free(a), free(b), free(c), free(d), free(e), free(f);
}

/* ---- control.kf -------------------------------------------------------------- */

static void ref_control(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), na, no;
    const char *lim = define_value(r, "LIMIT");
    int32_t limit = lim ? (int32_t)strtol(lim, NULL, 0) : 10;
    int32_t *a = in_buf(r, "a", KF_S_I32, 1, &na), *o = in_buf(r, "o", KF_S_I32, 1, &no);
    for (size_t i = 0; i < n && i < na && 6 * i + 6 <= no; i++) {
        int32_t x = a[i], *q = o + 6 * i;
        q[0] = x < 3 ? 1 : x < 6 ? 2 : x == 6 ? 3 : 4;
        int32_t s = 0;
        for (int32_t j = 0; j < x; j += 2) {
            if (j == 4) continue;
            if (j > 12) break;
            s += j;
        }
        q[1] = s;
        int32_t w = x, steps = 0;
        while (w != 1 && steps < 100) {
            w = w % 2 == 0 ? w / 2 : 3 * w + 1;
            steps++;
        }
        q[2] = steps;
        q[3] = x * 28;
        int32_t found = -1;
        for (int32_t j = 0; j < 8; j++)
            if (x * j > 20) {
                found = j;
                break;
            }
        q[4] = 10 * x + 20 + found;
        q[5] = x * 3 > limit ? limit : x * 3 + 1000;
    }
    out_free(r, "o", KF_S_I32, o, no);
    free(a);
}

/* control.kf's nested_context: the nested selects in their contexts' types. */
static void ref_nested_context(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), na, no, nw, nd;
    int32_t *a = in_buf(r, "a", KF_S_I32, 1, &na);
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    uint64_t *w = in_buf(r, "w", KF_S_U64, 1, &nw);
    double *d = in_buf(r, "d", KF_S_F64, 1, &nd);
    for (size_t i = 0; i < n && i < na && 2 * i + 1 < no && i < nw && i < nd; i++) {
        int32_t v = a[i] - 8;
        o[2 * i] = v < 0 ? 1u : v < 5 ? 2u : 3000000000u;
        uint32_t m = v < 3 ? 7u : 4000000000u;
        o[2 * i + 1] = (m < 3500000000u ? m : 3500000000u) + (v > 0 ? 1u : 2u);
        uint64_t p = (v > 1 ? 5u : 6u) * 3000000000ull;
        w[i] = ~(uint64_t)(v < 0 ? 1 : 2) - (p < 16000000000ull ? p : 16000000000ull);
        d[i] = (v < 0 ? 1.0 : 2.0) * 0.1 + (double)v;
    }
    out_free(r, "o", KF_S_U32, o, no);
    out_free(r, "w", KF_S_U64, w, nw);
    out_free(r, "d", KF_S_F64, d, nd);
    free(a);
}

/* control.kf's unroll_dead_arms: each iteration's live arms only. */
static void ref_unroll_dead_arms(ref_ctx *r)
{
    size_t nx, no, nc;
    float *x = in_buf(r, "x", KF_S_F32, 4, &nx);
    float *o = in_buf(r, "o", KF_S_F32, 1, &no);
    uint32_t *c = in_buf(r, "c", KF_S_U32, 1, &nc);
    uint32_t n = (uint32_t)in_num(r, "n");
    for (uint32_t t = 0; t < 32 && t < nx && t < no && 4 * t + 3 < nc; t++) {
        const float *v = &x[4 * t];
        uint32_t arr[4];
        float acc = 0.0f;
        for (uint32_t k = 0; k < 4; k++) {
            arr[k] = k * t;
            if (k > 0) acc += v[k - 1];
            if (k > 1) acc += 2.0f * v[k - 2];
            if (k > 0 && t < n) acc += 10.0f * v[k - 1];
            if (k > 0 && t < n) acc += 100.0f * v[k - 1];
            else acc += 1000.0f;
            if (t >= n || k == 3) acc += 0.5f;
            else acc += 10000.0f * v[k + 1];
            if (k >= 2 && v[k] > v[k - 2]) acc += 100000.0f;
            if (k < 1 || v[k - 1] < 1000.0f) acc += 0.25f;
            if (k == 0) c[4 * t] = 7;
            else if (k < 3) c[4 * t + k] = arr[k - 1] + 1;
            else c[4 * t + 3] = arr[0];
        }
        o[t] = acc;
    }
    out_free(r, "o", KF_S_F32, o, no);
    out_free(r, "c", KF_S_U32, c, nc);
    free(x);
}

/* control.kf's nested_context_builtins: contexts through builtins and for. */
static void ref_nested_context_builtins(ref_ctx *r)
{
    size_t na, no, nw, nc;
    uint32_t *a = in_buf(r, "a", KF_S_U32, 1, &na), *o = in_buf(r, "o", KF_S_U32, 1, &no);
    uint32_t *c = in_buf(r, "c", KF_S_U32, 1, &nc);
    uint64_t *w = in_buf(r, "w", KF_S_U64, 1, &nw);
    uint32_t sum = 0;
    for (size_t t = 0; t < 32 && t < na && 4 * t + 3 < no && t < nw; t++) {
        uint32_t x = a[t], pos = x > 9 ? 4 : 8, len = x > 20 ? 4 : 8, s = 0;
        uint32_t lane = x > 15 ? 0 : 31;
        for (uint32_t i = x > 3 ? 0 : 1; i < x + 2; i += x > 7 ? 2 : 1) s += i;
        o[4 * t] = (x > 5 ? 3000000000u : 2u) + x;
        o[4 * t + 1] = ((x * 0x01010101u) >> pos) & ((1u << len) - 1);
        o[4 * t + 2] = (lane < na ? a[lane] : 0) + 32;
        o[4 * t + 3] = s;
        uint64_t d = x > 10 ? 3 : 5;
        w[t] = ((1ull << 40) + d - 1) / d + x;
        sum += x > 30 ? 3000000000u : 2u;
    }
    if (nc) c[0] += sum;
    out_free(r, "o", KF_S_U32, o, no);
    out_free(r, "w", KF_S_U64, w, nw);
    out_free(r, "c", KF_S_U32, c, nc);
    free(a);
}

/* ---- warp.kf ----------------------------------------------------------------- */

/* What the warp reductions of warp_ops give for one warp of 32 lanes. */
typedef struct {
    double sum, mx, mn;
    uint32_t isum, ballot;
    int32_t imax, imin;
    bool all;
} warp_totals;

static warp_totals warp_reduce(const float *x, const int32_t *xi)
{
    warp_totals w = {0, -INFINITY, INFINITY, 0, 0, INT32_MIN, INT32_MAX, true};
    for (unsigned l = 0; l < 32; l++) {
        w.sum += x[l], w.mx = fmax(w.mx, x[l]), w.mn = fmin(w.mn, x[l]);
        int32_t v = xi[l];
        w.isum += (uint32_t)v;
        w.imax = v > w.imax ? v : w.imax;
        w.imin = v < w.imin ? v : w.imin;
        w.ballot |= (uint32_t)(v > 0) << l;
        w.all = w.all && v != 0;
    }
    return w;
}

/* The outputs of global thread g (lane l of the warp starting at w0). */
static void warp_lane(const float *x, const int32_t *xi, size_t w0, unsigned l, const warp_totals *w, float *of,
                      int32_t *oi, uint32_t *ou)
{
    size_t g = w0 + l, blk = g / 64 * 64, t = g % 64;
    float *f = of + 9 * g;
    f[0] = x[w0 + (l + 5) % 32];
    f[1] = x[w0 + (l ^ 3)];
    f[2] = l >= 2 ? x[g - 2] : x[g];
    f[3] = l + 7 < 32 ? x[g + 7] : x[g];
    f[4] = (float)w->sum;
    f[5] = (float)w->mx;
    f[6] = (float)w->mn;
    f[7] = 2.0f * x[w0 + (l ^ 1)];
    f[8] = x[blk + 63 - t];
    int32_t *q = oi + 5 * g;
    q[0] = (int32_t)w->isum;
    q[1] = w->imax;
    q[2] = w->imin;
    uint64_t wide = (uint64_t)(uint32_t)(l + 1 < 32 ? xi[g + 1] : xi[g]) * 3u;
    q[3] = (int32_t)(wide >> 3);
    q[4] = (int32_t)((uint32_t)xi[w0 + 31 - l] + 3u);
    uint32_t *u = ou + 5 * g;
    u[0] = w->ballot;
    u[1] = xi[w0 + 17] > 0;
    u[2] = w->all;
    u[3] = (uint32_t)(t / 32);
    u[4] = l;
}

static void ref_warp_ops(ref_ctx *r)
{
    size_t nb = (size_t)in_num(r, "nb"), nx, nxi, nf, ni, nu;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    int32_t *xi = in_buf(r, "xi", KF_S_I32, 1, &nxi);
    float *of = in_buf(r, "of", KF_S_F32, 1, &nf);
    int32_t *oi = in_buf(r, "oi", KF_S_I32, 1, &ni);
    uint32_t *ou = in_buf(r, "ou", KF_S_U32, 1, &nu);
    size_t threads = nb * 64;
    if (nx < threads || nxi < threads || nf < 9 * threads || ni < 5 * threads || nu < 5 * threads) {
        fprintf(stderr, "%s: buffers too small for warp_ops\n", r->c->path);
        r->errors++;
        threads = 0;
    }
    for (size_t w0 = 0; w0 < threads; w0 += 32) {
        warp_totals w = warp_reduce(x + w0, xi + w0);
        for (unsigned l = 0; l < 32; l++) warp_lane(x, xi, w0, l, &w, of, oi, ou);
    }
    out_free(r, "of", KF_S_F32, of, nf);
    out_free(r, "oi", KF_S_I32, oi, ni);
    out_free(r, "ou", KF_S_U32, ou, nu);
    free(x);
    free(xi);
}

/* ---- atomics.kf -------------------------------------------------------------- */

/* The atomic updates atomics.kf makes for element i (value v). */
static void atomics_element(int32_t v, size_t i, int32_t *ci, uint32_t *cu, uint64_t *cl, float *cf, double *h,
                            double *cd)
{
    uint32_t u = (uint32_t)v;
    ci[0] = (int32_t)((uint32_t)ci[0] + u);
    ci[1] = v < ci[1] ? v : ci[1];
    ci[2] = v > ci[2] ? v : ci[2];
    cu[0] += u;
    cu[1] = (u | 1) < cu[1] ? (u | 1) : cu[1];
    cu[2] = u > cu[2] ? u : cu[2];
    cu[5] += (uint32_t)i;
    uint64_t l = (uint64_t)u << 20;
    cl[0] += l;
    cl[1] = l + 1 < cl[1] ? l + 1 : cl[1];
    cl[2] = l > cl[2] ? l : cl[2];
    cf[0] += (float)(v & 255);
    cf[1] = fminf(cf[1], (float)(v >> 8));
    cf[2] = fmaxf(cf[2], (float)(v >> 8));
    h[0] = kf_ref_rf16(h[0] + 1.0);
    h[1] = kf_ref_rf16(h[1] + 0.5);
    cd[0] += (double)(v & 255) * 0.25;
}

/* x with a subnormal taken as zero of its sign (atom.global.add.f32). */
static float ftz32(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }

/* atomics_subnormal: f32 adds flush inputs and results; f64, f16x2 keep them. */
static void ref_atomics_subnormal(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), a, b, c;
    float *sf = in_buf(r, "sf", KF_S_F32, 1, &a);
    double *sd = in_buf(r, "sd", KF_S_F64, 1, &b);
    uint16_t *sh = in_buf(r, "sh", KF_S_F16, 2, &c);
    if (a < 2 + 2 * n || b < n || c < n) {
        fprintf(stderr, "%s: buffers too small for atomics_subnormal\n", r->c->path);
        r->errors++;
        n = 0;
    }
    const float mn = ldexpf(1.0f, -126);
    for (size_t i = 0; i < n; i++) {
        float tiny = ldexpf((float)(0x00200000 + i), -149);
        sf[0] = ftz32(ftz32(sf[0]) + ftz32(tiny));
        sf[1] = ftz32(ftz32(sf[1]) + ftz32(-tiny));
        float *k = &sf[2 + 2 * i];
        k[0] = ftz32(ftz32(k[0]) + 1.5f * mn);
        k[0] = ftz32(ftz32(k[0]) - mn);
        k[1] = ftz32(ftz32(k[1]) - 1.5f * mn);
        k[1] = ftz32(ftz32(k[1]) + mn);
        sd[i] += ldexp((double)(i + 1), -1074);
        sh[2 * i] = kf_ref_f16_bits(kf_ref_f16_value(sh[2 * i]) + ldexp(1.0, -24));
        sh[2 * i + 1] = kf_ref_f16_bits(kf_ref_f16_value(sh[2 * i + 1]) - ldexp(1.0, -23));
    }
    out_free(r, "sf", KF_S_F32, sf, a);
    out_free(r, "sd", KF_S_F64, sd, b);
    out_free(r, "sh", KF_S_F16, sh, 2 * c);
}

static void ref_atomics(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, a, b, c, d, e, f;
    int32_t *x = in_buf(r, "x", KF_S_I32, 1, &nx);
    int32_t *ci = in_buf(r, "ci", KF_S_I32, 1, &a);
    uint32_t *cu = in_buf(r, "cu", KF_S_U32, 1, &b);
    uint64_t *cl = in_buf(r, "cl", KF_S_U64, 1, &c);
    float *cf = in_buf(r, "cf", KF_S_F32, 1, &d);
    uint16_t *ch = in_buf(r, "ch", KF_S_F16, 2, &e);
    double *cd = in_buf(r, "cd", KF_S_F64, 1, &f);
    if (a < 6 || b < 8 || c < 6 || d < 6 || e < 1 || f < 1 || nx < n) {
        fprintf(stderr, "%s: buffers too small for atomics\n", r->c->path);
        r->errors++;
        n = 0;
    }
    double h[2] = {kf_ref_f16_value(ch[0]), kf_ref_f16_value(ch[1])};
    for (size_t i = 0; i < n; i++) atomics_element(x[i], i, ci, cu, cl, cf, h, cd);
    if (n) {
        ci[3] = 7, ci[4] = ci[4] == 0 ? 1 : ci[4], ci[5] += 1;
        cu[3] = 9, cu[4] += (uint32_t)n, cu[6] = cu[6] == 0 ? 5 : cu[6], cu[7] += 1;
        cl[3] = 11, cl[4] = cl[4] == 0 ? 3 : cl[4], cl[5] += 1;
        cf[3] = 2.5f, cf[4] = cf[4] == 0.0f ? 1.0f : cf[4], cf[5] += 1.0f;
    }
    ch[0] = kf_ref_f16_bits(h[0]);
    ch[1] = kf_ref_f16_bits(h[1]);
    out_free(r, "ci", KF_S_I32, ci, a);
    out_free(r, "cu", KF_S_U32, cu, b);
    out_free(r, "cl", KF_S_U64, cl, c);
    out_free(r, "cf", KF_S_F32, cf, d);
    out_free(r, "ch", KF_S_F16, ch, 2 * e);
    out_free(r, "cd", KF_S_F64, cd, f);
    free(x);
}

/* ---- math.kf ----------------------------------------------------------------- */

/* math.kf's math_trig_range: sin and cos far from zero, in double. */
static void ref_math_trig_range(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx), *o = in_buf(r, "o", KF_S_F32, 1, &no);
    for (size_t i = 0; i < n && i < nx && 4 * i + 4 <= no; i++) {
        float a = x[i] * (float)(1u << (i % 24));
        float p = (float)(uint32_t)(i * 997) / (float)(1u << (i % 16));
        o[4 * i] = (float)sin(a);
        o[4 * i + 1] = (float)cos(a);
        o[4 * i + 2] = (float)sin(p);
        o[4 * i + 3] = (float)cos(p);
    }
    out_free(r, "o", KF_S_F32, o, no);
    free(x);
}

static void ref_math_f32(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, ne, na, nt;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    float *oe = in_buf(r, "oe", KF_S_F32, 1, &ne), *oa = in_buf(r, "oa", KF_S_F32, 1, &na);
    float *ot = in_buf(r, "ot", KF_S_F32, 1, &nt);
    for (size_t i = 0; i < n && i < nx && 12 * i + 12 <= ne && 7 * i + 7 <= na && i < nt; i++) {
        float v = x[i], a = fabsf(v) + 0.5f, v10 = v * 10.0f, v3 = v * 3.0f;
        float *e = oe + 12 * i, *p = oa + 7 * i;
        e[0] = sqrtf(a);
        e[1] = fabsf(v);
        e[2] = floorf(v10);
        e[3] = ceilf(v10);
        e[4] = truncf(v10);
        e[5] = roundf(v10);
        e[6] = fminf(v, 0.25f);
        e[7] = fmaxf(v, 0.25f);
        e[8] = fminf(fmaxf(v, -0.5f), 0.5f);
        e[9] = fmaf(v, v, 0.5f);
        e[10] = v > 0.0f ? v / a : -INFINITY;
        e[11] = v + v;
        p[0] = (float)exp(v);
        p[1] = (float)exp2(v * 4.0);
        p[2] = (float)log(a);
        p[3] = (float)log2(a);
        p[4] = (float)(1.0 / sqrt(a));
        p[5] = (float)sin(v3);
        p[6] = (float)cos(v3);
        ot[i] = (float)tanh(v * 2.0f);
    }
    out_free(r, "oe", KF_S_F32, oe, ne);
    out_free(r, "oa", KF_S_F32, oa, na);
    out_free(r, "ot", KF_S_F32, ot, nt);
    free(x);
}

static void ref_math_f64(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, ne, na;
    double *x = in_buf(r, "x", KF_S_F64, 1, &nx);
    double *oe = in_buf(r, "oe", KF_S_F64, 1, &ne), *oa = in_buf(r, "oa", KF_S_F64, 1, &na);
    for (size_t i = 0; i < n && i < nx && 11 * i + 11 <= ne && 8 * i + 8 <= na; i++) {
        double v = x[i], a = fabs(v) + 0.5, v10 = v * 10.0, v3 = v * 3.0;
        double *e = oe + 11 * i, *p = oa + 8 * i;
        e[0] = sqrt(a);
        e[1] = fabs(v) / a;
        e[2] = floor(v10);
        e[3] = ceil(v10);
        e[4] = trunc(v10);
        e[5] = round(v10);
        e[6] = fmin(v, 0.25);
        e[7] = fmax(v, 0.25);
        e[8] = fmin(fmax(v, -0.5), 0.5);
        e[9] = fma(v, v, 0.5);
        e[10] = v < 0.0 ? -v : INFINITY;
        p[0] = exp(v);
        p[1] = exp2(v * 4.0);
        p[2] = log(a);
        p[3] = log2(a);
        p[4] = 1.0 / sqrt(a);
        p[5] = sin(v3);
        p[6] = cos(v3);
        p[7] = tanh(v * 2.0);
    }
    out_free(r, "oe", KF_S_F64, oe, ne);
    out_free(r, "oa", KF_S_F64, oa, na);
    free(x);
}

/* kernels/features/schedule.kf row_cross (and its min_blocks twin): y[i] =
 * the sum over j, k < 8 of v[j].x v[k].y + v[j].z v[k].w, v the 8 f32x4
 * x[8i .. 8i+7], in double. */
static void ref_row_cross(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, ny;
    float *x = in_buf(r, "x", KF_S_F32, 4, &nx), *y = in_buf(r, "y", KF_S_F32, 1, &ny);
    for (size_t i = 0; i < n && i < ny && 8 * i + 8 <= nx; i++) {
        const float *v = x + 32 * i;
        double s = 0;
        for (int j = 0; j < 8; j++)
            for (int k = 0; k < 8; k++) s += (double)v[4 * j] * v[4 * k + 1] + (double)v[4 * j + 2] * v[4 * k + 3];
        y[i] = (float)s;
    }
    out_free(r, "y", KF_S_F32, y, ny);
    free(x);
}

static void ref_math_vec(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    float *x = in_buf(r, "x", KF_S_F32, 4, &nx), *o = in_buf(r, "o", KF_S_F32, 4, &no);
    for (size_t i = 0; i < n && i < nx && 3 * i + 3 <= no; i++)
        for (int l = 0; l < 4; l++) {
            float v = x[4 * i + l], a = fabsf(v) + 0.5f;
            o[12 * i + l] = (float)(exp(v) + sqrt(a));
            float f = fmaf(v, a, 1.0f);
            o[12 * i + 4 + l] = f - floorf(v * 4.0f);
            o[12 * i + 8 + l] = fminf(fmaxf(v, -0.25f), 0.25f) + fmaxf(v, 0.0f);
        }
    out_free(r, "o", KF_S_F32, o, no * 4);
    free(x);
}

static void int_math_i32(int32_t x, uint32_t y, int32_t *p)
{
    p[0] = x < 1000 ? x : 1000;
    p[1] = x > -1000 ? x : -1000;
    p[2] = x == INT32_MIN ? INT32_MIN : (x < 0 ? -x : x);
    p[3] = (int32_t)cdiv_s(x, 7);
    p[4] = (int32_t)cdiv_s(x, -7);
    p[5] = (int32_t)(((int64_t)x * (int64_t)(int32_t)y) >> 32);
    p[6] = x > 0 ? x : (int32_t)y;
    p[7] = (int32_t)(clz32((uint32_t)x) + (uint32_t)__builtin_popcount((uint32_t)x) * 100u);
}

static void int_math_u32(uint32_t y, uint32_t *q)
{
    q[0] = y < 1000 ? y : 1000;
    q[1] = y > 1000000 ? y : 1000000;
    q[2] = clz32(y);
    q[3] = (uint32_t)__builtin_popcount(y);
    q[4] = y / 7 + (y % 7 != 0);
    q[5] = (uint32_t)(((uint64_t)y * y) >> 32);
    q[6] = y > 0x80000000u ? y : 0;
    q[7] = y / (y | 1) + (y % (y | 1) != 0) + (y >> 16) / 3 + ((y >> 16) % 3 != 0);
}

static void int_math_i64(int64_t z, int64_t *s)
{
    s[0] = z < 1000 ? z : 1000;
    s[1] = z > -1000 ? z : -1000;
    s[2] = z == INT64_MIN ? INT64_MIN : (z < 0 ? -z : z);
    s[3] = cdiv_s(z, 1000000007);
    s[4] = cdiv_s(z, -13);
    s[5] = (int64_t)(((__int128)z * (__int128)(z >> 3)) >> 64);
    s[6] = (int64_t)(clz64((uint64_t)z) + popc64((uint64_t)z));
    s[7] = z < 0 ? (int64_t)(0u - (uint64_t)z) : z;
}

static void int_math_u64(uint64_t w, uint64_t *t)
{
    t[0] = w < 1000 ? w : 1000;
    t[1] = w > 0x100000000ull ? w : 0x100000000ull;
    t[2] = clz64(w);
    t[3] = popc64(w);
    t[4] = w / 1000000007u + (w % 1000000007u != 0);
    t[5] = (uint64_t)(((unsigned __int128)w * w) >> 64);
    t[6] = clz64(w >> 40);
    t[7] = w > 1000 ? w / 3 : w;
}

static void ref_int_math(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), k[8];
    int32_t *a = in_buf(r, "a", KF_S_I32, 1, &k[0]);
    uint32_t *b = in_buf(r, "b", KF_S_U32, 1, &k[1]);
    int64_t *c = in_buf(r, "c", KF_S_I64, 1, &k[2]);
    uint64_t *d = in_buf(r, "d", KF_S_U64, 1, &k[3]);
    int32_t *o32 = in_buf(r, "o32", KF_S_I32, 1, &k[4]);
    uint32_t *ou32 = in_buf(r, "ou32", KF_S_U32, 1, &k[5]);
    int64_t *o64 = in_buf(r, "o64", KF_S_I64, 1, &k[6]);
    uint64_t *ou64 = in_buf(r, "ou64", KF_S_U64, 1, &k[7]);
    for (size_t i = 0; i < n && 8 * i + 8 <= k[4] && 8 * i + 8 <= k[7]; i++) {
        int_math_i32(a[i], b[i], o32 + 8 * i);
        int_math_u32(b[i], ou32 + 8 * i);
        int_math_i64(c[i], o64 + 8 * i);
        int_math_u64(d[i], ou64 + 8 * i);
    }
    out_free(r, "o32", KF_S_I32, o32, k[4]);
    out_free(r, "ou32", KF_S_U32, ou32, k[5]);
    out_free(r, "o64", KF_S_I64, o64, k[6]);
    out_free(r, "ou64", KF_S_U64, ou64, k[7]);
    free(a), free(b), free(c), free(d);
}

/* ---- geometry.kf ------------------------------------------------------------- */

static void ref_geometry(ref_ctx *r)
{
    size_t no;
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    if (no < 12 * 16 * 8) {
        fprintf(stderr, "%s: o too small for geometry\n", r->c->path);
        r->errors++;
    } else {
        for (uint32_t bz = 0; bz < 2; bz++) for (uint32_t by = 0; by < 3; by++) for (uint32_t bx = 0; bx < 2; bx++)
        for (uint32_t tz = 0; tz < 2; tz++) for (uint32_t ty = 0; ty < 2; ty++) for (uint32_t tx = 0; tx < 4; tx++) {
            uint32_t fb = bx + 2 * (by + 3 * bz), t = tx + 4 * (ty + 2 * tz), *q = o + (fb * 16 + t) * 8;
            q[0] = bx * 4 + tx;
            q[1] = by * 2 + ty;
            q[2] = bz * 2 + tz;
            q[3] = 422;
            q[4] = 232;
            q[5] = t % 32;
            q[6] = t / 32;
            q[7] = 32 + tz * 1000 + bz * 10000;
        }
    }
    out_free(r, "o", KF_S_U32, o, no);
}

static void ref_transpose(ref_ctx *r)
{
    size_t w = (size_t)in_num(r, "w"), h = (size_t)in_num(r, "h"), nx, ny;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx), *y = in_buf(r, "y", KF_S_F32, 1, &ny);
    for (size_t rr = 0; rr < h; rr++)
        for (size_t c = 0; c < w; c++)
            if (rr * w + c < nx && c * h + rr < ny) y[c * h + rr] = x[rr * w + c];
    out_free(r, "y", KF_S_F32, y, ny);
    free(x);
}

/* ---- warp_edges.kf ------------------------------------------------------------ */

typedef enum { SH_IDX, SH_XOR, SH_UP, SH_DOWN } shfl_kind;

/* The lane a shuffle reads from (LANGUAGE.md section 7, CUDA's __shfl_*_sync
 * with width 32), or `lane` itself when that source is outside the warp or
 * is not one of the n lanes that exist. */
static unsigned shfl_from(shfl_kind kd, unsigned lane, uint32_t amount, unsigned n)
{
    int64_t j;
    if (kd == SH_IDX) j = amount % 32;
    else if (kd == SH_XOR) j = amount >= 32 ? -1 : (int64_t)(lane ^ amount);
    else if (kd == SH_UP) j = (int64_t)lane - (int64_t)amount;
    else j = (int64_t)lane + (int64_t)amount;
    return j >= 0 && j < (int64_t)n ? (unsigned)j : lane;
}

/* warp_edges for one warp of n lanes starting at global thread w0. */
static void warp_edges_warp(const float *x, const int32_t *xi, size_t w0, unsigned n, const uint32_t a[4],
                            uint32_t src, float *o, int32_t *oi, int64_t *ol)
{
    /* warp_sum/max/min: over the n lanes that exist, the same in every lane
     * (int sum wraps, so its order does not matter; max/min have none). */
    float mx1 = x[w0];
    uint32_t sum1 = 0;
    int32_t mn1 = xi[w0];
    for (unsigned l = 0; l < n; l++) {
        mx1 = fmaxf(mx1, x[w0 + l]);
        sum1 += (uint32_t)xi[w0 + l];
        mn1 = xi[w0 + l] < mn1 ? xi[w0 + l] : mn1;
    }
    float mx[32];
    uint32_t sum[32];
    int32_t mn[32];
    for (unsigned l = 0; l < n; l++) mx[l] = mx1, sum[l] = sum1, mn[l] = mn1;
    for (unsigned l = 0; l < n; l++) {
        size_t g = w0 + l;
        float *f = o + 18 * g;
        for (unsigned i = 0; i < 4; i++) {
            f[i] = x[w0 + shfl_from(SH_XOR, l, a[i], n)];
            f[4 + i] = x[w0 + shfl_from(SH_UP, l, a[i], n)];
            f[8 + i] = x[w0 + shfl_from(SH_DOWN, l, a[i], n)];
        }
        f[12] = x[w0 + shfl_from(SH_IDX, l, src, n)];
        f[13] = x[w0 + shfl_from(SH_IDX, l, (l * 5 + 3) % 64, n)];
        f[14] = x[w0 + shfl_from(SH_XOR, l, (l * 7) % 40, n)];
        f[15] = x[w0 + shfl_from(SH_DOWN, l, l % 36, n)];
        f[16] = x[w0 + shfl_from(SH_UP, l, (l * 3) % 37, n)];
        f[17] = mx[l];
        oi[2 * g] = (int32_t)sum[l];
        oi[2 * g + 1] = mn[l];
        int64_t *q = ol + 3 * g;
        q[0] = (int64_t)xi[w0 + shfl_from(SH_XOR, l, a[1] + l % 2, n)] * 65537;
        q[1] = (int64_t)xi[w0 + shfl_from(SH_DOWN, l, (l * 11) % 34, n)] * 65537;
        q[2] = (int64_t)xi[w0 + shfl_from(SH_IDX, l, src + l, n)] * 65537;
    }
}

static void ref_warp_edges(ref_ctx *r)
{
    size_t nb = (size_t)in_num(r, "nb"), nx, nxi, no, noi, nol;
    uint32_t a[4] = {(uint32_t)in_num(r, "a0"), (uint32_t)in_num(r, "a1"), (uint32_t)in_num(r, "a2"),
                     (uint32_t)in_num(r, "a3")};
    uint32_t src = (uint32_t)in_num(r, "src");
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    int32_t *xi = in_buf(r, "xi", KF_S_I32, 1, &nxi);
    float *o = in_buf(r, "o", KF_S_F32, 1, &no);
    int32_t *oi = in_buf(r, "oi", KF_S_I32, 1, &noi);
    int64_t *ol = in_buf(r, "ol", KF_S_I64, 1, &nol);
    size_t threads = nb * 48;
    if (nx < threads || nxi < threads || no < 18 * threads || noi < 2 * threads || nol < 3 * threads) {
        fprintf(stderr, "%s: buffers too small for warp_edges\n", r->c->path);
        r->errors++;
        nb = 0;
    }
    for (size_t b = 0; b < nb; b++) {   /* a block of 48: a warp of 32 lanes, then one of 16 */
        warp_edges_warp(x, xi, b * 48, 32, a, src, o, oi, ol);
        warp_edges_warp(x, xi, b * 48 + 32, 16, a, src, o, oi, ol);
    }
    out_free(r, "o", KF_S_F32, o, no);
    out_free(r, "oi", KF_S_I32, oi, noi);
    out_free(r, "ol", KF_S_I64, ol, nol);
    free(x);
    free(xi);
}

/* ---- warp_partial.kf ---------------------------------------------------------- */

/* The value of -D name in the case, or def when the case does not set it. */
static size_t define_num(ref_ctx *r, const char *name, size_t def)
{
    const char *v = define_value(r, name);
    return v ? (size_t)strtoull(v, NULL, 0) : def;
}

/* warp_partial for one warp of n lanes starting at global thread w0. */
static void warp_partial_warp(const float *x, const int32_t *xi, size_t w0, unsigned n, float *o, int32_t *oi,
                              uint32_t *ou)
{
    float mx = x[w0];
    uint32_t sum = 0, ballot = 0, any_hi = 0, all_lo = 1;
    int32_t mn = xi[w0];
    for (unsigned l = 0; l < n; l++) {
        mx = fmaxf(mx, x[w0 + l]);
        sum += (uint32_t)xi[w0 + l];
        mn = xi[w0 + l] < mn ? xi[w0 + l] : mn;
        ballot |= (uint32_t)(xi[w0 + l] > 0) << l;
        any_hi |= x[w0 + l] > 0.9f;
        all_lo &= x[w0 + l] > -0.9f;
    }
    for (unsigned l = 0; l < n; l++) {
        size_t g = w0 + l;
        float *f = o + 9 * g;
        f[0] = x[w0 + shfl_from(SH_IDX, l, 5, n)];
        f[1] = x[w0 + shfl_from(SH_IDX, l, 37, n)];
        f[2] = x[w0 + shfl_from(SH_IDX, l, 20, n)];
        f[3] = x[w0 + shfl_from(SH_XOR, l, 3, n)];
        f[4] = x[w0 + shfl_from(SH_XOR, l, 16, n)];
        f[5] = x[w0 + shfl_from(SH_UP, l, 2, n)];
        f[6] = x[w0 + shfl_from(SH_DOWN, l, 7, n)];
        f[7] = x[w0 + shfl_from(SH_DOWN, l, 40, n)];
        f[8] = mx;
        int32_t *q = oi + 7 * g;
        q[0] = (int32_t)sum;
        q[1] = mn;
        q[2] = xi[w0 + shfl_from(SH_XOR, l, l % 8, n)];
        q[3] = xi[w0 + shfl_from(SH_UP, l, l % 5, n)];
        q[4] = xi[w0 + shfl_from(SH_IDX, l, 31 - l, n)];
        q[5] = (int32_t)(uint32_t)((uint64_t)((int64_t)xi[w0 + shfl_from(SH_XOR, l, 2, n)] * 65537) >> 16);
        unsigned d = shfl_from(SH_DOWN, l, 1, n);
        q[6] = xi[w0 + d] ^ (int32_t)d;
        uint32_t *u = ou + 4 * g;
        u[0] = ballot;
        u[1] = any_hi;
        u[2] = all_lo;
        u[3] = n > 20 && xi[w0 + 20] > 0;
    }
}

static void ref_warp_partial(ref_ctx *r)
{
    size_t nb = (size_t)in_num(r, "nb"), nx, nxi, no, noi, nou;
    size_t bt = define_num(r, "BX", 16) * define_num(r, "BY", 4) * define_num(r, "BZ", 1);
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    int32_t *xi = in_buf(r, "xi", KF_S_I32, 1, &nxi);
    float *o = in_buf(r, "o", KF_S_F32, 1, &no);
    int32_t *oi = in_buf(r, "oi", KF_S_I32, 1, &noi);
    uint32_t *ou = in_buf(r, "ou", KF_S_U32, 1, &nou);
    size_t threads = nb * bt;
    if (nx < threads || nxi < threads || no < 9 * threads || noi < 7 * threads || nou < 4 * threads) {
        fprintf(stderr, "%s: buffers too small for warp_partial\n", r->c->path);
        r->errors++;
        nb = 0;
    }
    for (size_t b = 0; b < nb; b++)   /* warps of 32 lanes in the block's linear order, the last one short */
        for (size_t w = 0; w < bt; w += 32)
            warp_partial_warp(x, xi, b * bt + w, (unsigned)(bt - w < 32 ? bt - w : 32), o, oi, ou);
    out_free(r, "o", KF_S_F32, o, no);
    out_free(r, "oi", KF_S_I32, oi, noi);
    out_free(r, "ou", KF_S_U32, ou, nou);
    free(x);
    free(xi);
}

/* ---- fence.kf --------------------------------------------------------------- */

/* last_block_sum: element i belongs to block (i / 128) % nb (the grid
 * stride); part holds each block's sum and marker b + 1, out the sum of all
 * of x, nb markers seen and one last block; the counter ends at 0. */
static void ref_fence_last_block(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nb = (size_t)in_num(r, "nb"), nx, np, nc, no;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx), *part = in_buf(r, "part", KF_S_U32, 1, &np);
    uint32_t *count = in_buf(r, "count", KF_S_U32, 1, &nc), *out = in_buf(r, "out", KF_S_U32, 1, &no);
    if (nx < n || np < 2 * nb || nc < 1 || no < 3 || nb == 0) {
        fprintf(stderr, "%s: buffers too small for fence_last_block\n", r->c->path);
        r->errors++;
        n = nb = 0;
    }
    for (size_t b = 0; b < nb; b++) part[2 * b] = 0, part[2 * b + 1] = (uint32_t)b + 1;
    uint32_t all = 0;
    for (size_t i = 0; i < n; i++) {
        part[2 * (i / 128 % nb)] += x[i];
        all += x[i];
    }
    if (nb) out[0] = all, out[1] = (uint32_t)nb, out[2] += 1, count[0] = 0;
    out_free(r, "part", KF_S_U32, part, np);
    out_free(r, "count", KF_S_U32, count, nc);
    out_free(r, "out", KF_S_U32, out, no);
    free(x);
}

/* ---- prefetch.kf ------------------------------------------------------------ */

/* prefetch_next: y[i] = w[i]·x[i] + y[i] in u32 (the prefetches change
 * nothing). */
static void ref_prefetch_next(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nw, nx, ny;
    uint32_t *w = in_buf(r, "w", KF_S_U32, 1, &nw), *y = in_buf(r, "y", KF_S_U32, 1, &ny);
    uint8_t *x = in_buf(r, "x", KF_S_U8, 1, &nx);
    for (size_t i = 0; i < n && i < nw && i < nx && i < ny; i++) y[i] = w[i] * (uint32_t)x[i] + y[i];
    out_free(r, "y", KF_S_U32, y, ny);
    free(w);
    free(x);
}

/* prefetch_early_rows: y[r] = sum of the row's k·8 f16 weights times x, in
 * double, rounded once to f32. */
static void ref_prefetch_rows(ref_ctx *r)
{
    size_t rows = (size_t)in_num(r, "rows"), k = (size_t)in_num(r, "k"), nw, nx, ny;
    uint16_t *w = in_buf(r, "w", KF_S_F16, 8, &nw);
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx), *y = in_buf(r, "y", KF_S_F32, 1, &ny);
    for (size_t row = 0; row < rows && row < ny && (row + 1) * k <= nw && k * 8 <= nx; row++) {
        double s = 0;
        for (size_t j = 0; j < k * 8; j++) s += kf_ref_f16_value(w[row * k * 8 + j]) * (double)x[j];
        y[row] = (float)s;
    }
    out_free(r, "y", KF_S_F32, y, ny);
    free(w);
    free(x);
}

/* ---- block algorithms (algorithms.kf) ------------------------------------------- */

/* Exclusive scan of each 256-element block (zeros past n), block totals in
 * sums; i32 wraps (sums in u32). */
static void ref_algo_blelloch(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, ny, ns;
    int32_t *x = in_buf(r, "x", KF_S_I32, 1, &nx), *y = in_buf(r, "y", KF_S_I32, 1, &ny);
    int32_t *sums = in_buf(r, "sums", KF_S_I32, 1, &ns);
    for (size_t b = 0; b * 256 < n && b < ns; b++) {
        uint32_t run = 0;
        for (size_t j = b * 256; j < (b + 1) * 256; j++) {
            if (j < n && j < ny) y[j] = (int32_t)run;
            run += j < n && j < nx ? (uint32_t)x[j] : 0u;
        }
        sums[b] = (int32_t)run;
    }
    out_free(r, "y", KF_S_I32, y, ny);
    out_free(r, "sums", KF_S_I32, sums, ns);
    free(x);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Each block of 512 keys sorted ascending. */
static void ref_algo_bitonic(ref_ctx *r)
{
    size_t nb = (size_t)in_num(r, "nb"), nx, ny;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx), *y = in_buf(r, "y", KF_S_U32, 1, &ny);
    for (size_t b = 0; b < nb && (b + 1) * 512 <= nx && (b + 1) * 512 <= ny; b++) {
        memcpy(y + b * 512, x + b * 512, 512 * sizeof *y);
        qsort(y + b * 512, 512, sizeof *y, cmp_u32);
    }
    out_free(r, "y", KF_S_U32, y, ny);
    free(x);
}

/* Row sums over 1024 threads: thread t sums columns t, t + 1024, ...;
 * pre holds each warp's exclusive prefix of warp totals, tot the row's. */
static void ref_algo_block1024(ref_ctx *r)
{
    size_t cols = (size_t)in_num(r, "cols"), rows = (size_t)in_num(r, "rows"), nx, nt, np;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx), *tot = in_buf(r, "tot", KF_S_U32, 1, &nt);
    uint32_t *pre = in_buf(r, "pre", KF_S_U32, 1, &np);
    for (size_t row = 0; row < rows && (row + 1) * cols <= nx && row < nt && (row + 1) * 32 <= np; row++) {
        uint32_t warp[32] = {0}, run = 0;
        for (size_t c = 0; c < cols; c++) warp[c % 1024 / 32] += x[row * cols + c];
        for (int w = 0; w < 32; w++) pre[row * 32 + (size_t)w] = run, run += warp[w];
        tot[row] = run;
    }
    out_free(r, "tot", KF_S_U32, tot, nt);
    out_free(r, "pre", KF_S_U32, pre, np);
    free(x);
}

/* The (8, 4, 2)-block volume stencil and ids, cell by cell. */
static void ref_algo_volume(ref_ctx *r)
{
    uint32_t w = (uint32_t)in_num(r, "w"), h = (uint32_t)in_num(r, "h"), d = (uint32_t)in_num(r, "d");
    size_t nx, no, ni;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx), *o = in_buf(r, "o", KF_S_U32, 1, &no);
    uint32_t *ids = in_buf(r, "ids", KF_S_U32, 1, &ni);
    uint32_t gdx = (w + 7) / 8, gdy = (h + 3) / 4;
    for (uint32_t gz = 0; gz < d; gz++)
        for (uint32_t gy = 0; gy < h; gy++)
            for (uint32_t gx = 0; gx < w; gx++) {
                size_t li = ((size_t)gz * h + gy) * w + gx;
                if (li >= nx || li >= no || li >= ni) continue;
                uint32_t acc = x[li];
                if (gx + 1 < w) acc += x[li + 1];
                if (gy > 0) acc += 2 * x[li - w];
                if (gz + 1 < d) acc += 3 * x[li + (size_t)w * h];
                o[li] = acc;
                uint32_t blk = (gz / 2 * gdy + gy / 4) * gdx + gx / 8;
                uint32_t tid = (gz % 2 * 4 + gy % 4) * 8 + gx % 8;
                ids[li] = blk * 1000000u + tid * 1000u + tid / 32 * 100u + tid % 32;
            }
    out_free(r, "o", KF_S_U32, o, no);
    out_free(r, "ids", KF_S_U32, ids, ni);
    free(x);
}

/* Counts of x >> 26; cnt[0] = n and cnt[1] = 0 + 1 + ... + n-1 (u32). */
static void ref_algo_hist_guarded(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, nh, nc;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx), *h = in_buf(r, "h", KF_S_U32, 1, &nh);
    uint32_t *cnt = in_buf(r, "cnt", KF_S_U32, 1, &nc);
    for (size_t i = 0; i < n && i < nx && nh >= 64 && nc >= 2; i++) {
        h[x[i] >> 26]++;
        cnt[1] += cnt[0]++;
    }
    out_free(r, "h", KF_S_U32, h, nh);
    out_free(r, "cnt", KF_S_U32, cnt, nc);
    free(x);
}

/* h[x & 31] += x >> 16 (u64). */
static void ref_algo_hist_stride(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, nh;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx);
    uint64_t *h = in_buf(r, "h", KF_S_U64, 1, &nh);
    for (size_t i = 0; i < n && i < nx && nh >= 32; i++) h[x[i] & 31] += x[i] >> 16;
    out_free(r, "h", KF_S_U64, h, nh);
    free(x);
}

/* Column sums (wrapping) and row maxima of a rows x cols i32 matrix; each
 * case binds one of cs and rm. */
static void algo_matrix(ref_ctx *r, const char *out)
{
    size_t rows = (size_t)in_num(r, "rows"), cols = (size_t)in_num(r, "cols"), nx, no;
    int32_t *x = in_buf(r, "x", KF_S_I32, 1, &nx), *o = in_buf(r, out, KF_S_I32, 1, &no);
    bool sum = !strcmp(out, "cs");
    for (size_t k = 0; k < (sum ? cols : rows) && k < no && rows * cols <= nx; k++) {
        uint32_t s = 0;
        int32_t m = INT32_MIN;
        for (size_t j = 0; j < (sum ? rows : cols); j++) {
            int32_t e = sum ? x[j * cols + k] : x[k * cols + j];
            s += (uint32_t)e;
            m = e > m ? e : m;
        }
        o[k] = sum ? (int32_t)s : m;
    }
    out_free(r, out, KF_S_I32, o, no);
    free(x);
}

static void ref_algo_colsum(ref_ctx *r) { algo_matrix(r, "cs"); }
static void ref_algo_rowmax(ref_ctx *r) { algo_matrix(r, "rm"); }

#define KF_REFERENCE_FEATURES \
    {"convert", ref_convert}, {"vectors", ref_vectors}, {"ops_i32", ref_ops_i32}, \
    {"ops_widths", ref_ops_widths}, {"control", ref_control}, {"nested_context", ref_nested_context}, {"nested_context_builtins", ref_nested_context_builtins}, {"unroll_dead_arms", ref_unroll_dead_arms}, {"warp_ops", ref_warp_ops}, \
    {"warp_edges", ref_warp_edges}, {"warp_partial", ref_warp_partial}, \
    {"atomics", ref_atomics}, {"atomics_subnormal", ref_atomics_subnormal}, {"fence_last_block", ref_fence_last_block}, {"prefetch_next", ref_prefetch_next}, {"prefetch_rows", ref_prefetch_rows}, {"math_f32", ref_math_f32}, {"math_trig_range", ref_math_trig_range}, {"math_f64", ref_math_f64}, \
    {"math_vec", ref_math_vec}, {"int_math", ref_int_math}, {"geometry", ref_geometry}, \
    {"transpose", ref_transpose}, {"row_cross", ref_row_cross}, \
    {"algo_blelloch", ref_algo_blelloch}, {"algo_bitonic", ref_algo_bitonic}, \
    {"algo_block1024", ref_algo_block1024}, {"algo_volume", ref_algo_volume}, \
    {"algo_hist_guarded", ref_algo_hist_guarded}, {"algo_hist_stride", ref_algo_hist_stride}, \
    {"algo_colsum", ref_algo_colsum}, {"algo_rowmax", ref_algo_rowmax},
