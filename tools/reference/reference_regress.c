/* Reference outputs of the regression kernels (kernels/features/regress.kf),
 * included by reference.c after reference_features.c (whose helpers it
 * uses). Each function restates the contract in plain C: float -> int
 * truncates, saturates and gives 0 for NaN; integers wrap at their width;
 * f16/bf16 conversions round once to nearest even (rf16/rbf16); a bitcast is
 * the same bits. */

/* Float -> integer of the contract: NaN -> 0, truncate, saturate to [lo, hi]. */
static int64_t to_int(double v, double lo, double hi)
{
    return (int64_t)sat(v, lo, hi);
}

/* ---- 1. NaN to every integer type ---------------------------------------------- */

static void nan_to_int_one(double v, int64_t out[8][4])
{
    static const double lo[8] = {-128, 0, -32768, 0, -2147483648.0, 0, -9.2e18, 0};
    static const double hi[8] = {127, 255, 32767, 65535, 2147483647.0, 4294967295.0, 9.2e18, 1.8e19};
    double src[4] = {kf_ref_rf16(v), rbf16(v), (double)(float)v, v};   /* from f16, bf16, f32, f64 */
    for (int t = 0; t < 8; t++)
        for (int s = 0; s < 4; s++) out[t][s] = to_int(src[s], lo[t], hi[t]);   /* |v| <= 300: no extremes */
}

static void ref_regress_nan_to_int(ref_ctx *r)
{
    static const char *const names[8] = {"o_i8", "o_u8", "o_i16", "o_u16", "o_i32", "o_u32", "o_i64", "o_u64"};
    static const kf_scalar types[8] = {KF_S_I8, KF_S_U8, KF_S_I16, KF_S_U16, KF_S_I32, KF_S_U32, KF_S_I64, KF_S_U64};
    size_t n = (size_t)in_num(r, "n"), nx, m[8], nv, nw;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    void *o[8];
    for (int t = 0; t < 8; t++) o[t] = in_buf(r, names[t], types[t], 1, &m[t]);
    int64_t *ov = in_buf(r, "ov", KF_S_I64, 2, &nv);
    uint16_t *ow = in_buf(r, "ow", KF_S_U16, 4, &nw);
    for (size_t i = 0; i < n && i < nx; i++) {
        double v = i % 2 == 0 ? NAN : (double)x[i] * 300.0;
        int64_t q[8][4];
        nan_to_int_one(v, q);
        for (int t = 0; t < 8; t++)
            for (size_t s = 0; s < 4 && 4 * i + s < m[t]; s++) {
                unsigned bytes = kf_scalar_bytes[types[t]];
                memcpy((char *)o[t] + (4 * i + s) * bytes, &q[t][s], bytes);   /* little-endian low bytes */
            }
        if (i < nv) ov[2 * i] = to_int(v, -9.2e18, 9.2e18), ov[2 * i + 1] = to_int(-v, -9.2e18, 9.2e18);
        float f = (float)v, w[4] = {f, -f, f, 1.5f};
        for (int l = 0; l < 4 && i < nw; l++) ow[4 * i + l] = (uint16_t)to_int(w[l], 0, 65535);
    }
    for (int t = 0; t < 8; t++) out_free(r, names[t], types[t], o[t], m[t]);
    out_free(r, "ov", KF_S_I64, ov, 2 * nv);
    out_free(r, "ow", KF_S_U16, ow, 4 * nw);
    free(x);
}

/* ---- 2. loop variables -------------------------------------------------------------- */

static void ref_regress_loop_var(ref_ctx *r)
{
    size_t m;
    int32_t *o = in_buf(r, "o", KF_S_I32, 1, &m);
    for (int32_t t = 0; t < 32 && 8 * (size_t)t + 7 < m; t++) {
        int32_t *q = o + 8 * t;
        q[0] = 7;            /* j0 = 0: 0 + 7 */
        q[1] = 10;           /* j1 = 1: 1 * 10 */
        q[2] = 1;            /* y0 = 2: 2 - 1 */
        q[3] = 40;           /* y1 = 0: 0 + 40 */
        q[4] = 3 * t + 1;    /* exp = new + 1 = 3 int + 1 */
        q[5] = t;            /* sin = 0: 0 + int */
        q[6] = 70 + t;
        q[7] = 7;
    }
    out_free(r, "o", KF_S_I32, o, m);
}

/* ---- 3. bytes of converted 16-bit floats ---------------------------------------------- */

static void ref_regress_half_bytes(ref_ctx *r)
{
    size_t n8, nu8, n32;
    int32_t k = (int32_t)in_num(r, "k");
    int8_t *o8 = in_buf(r, "o_i8", KF_S_I8, 1, &n8);
    uint8_t *ou8 = in_buf(r, "o_u8", KF_S_U8, 1, &nu8);
    int32_t *o32 = in_buf(r, "o_i32", KF_S_I32, 1, &n32);
    for (uint32_t t = 0; t < 32; t++) {
        int16_t m = (int16_t)(uint16_t)(t * 3 - (uint32_t)k);
        uint16_t bm = bf16_bits(m), hm = kf_ref_f16_bits(m), b75 = bf16_bits((float)m * 0.75f);
        if (4 * t + 3 < n8) {
            o8[4 * t] = (int8_t)(bf16_bits(32) & 0xff);
            o8[4 * t + 1] = (int8_t)(bm & 0xff);   /* lane 0 is the low half of the i32 */
            o8[4 * t + 2] = (int8_t)(hm & 0xff);
            o8[4 * t + 3] = (int8_t)(b75 & 0xff);
        }
        if (2 * t + 1 < nu8) ou8[2 * t] = (uint8_t)(bm & 0xff), ou8[2 * t + 1] = (uint8_t)(hm >> 8);
        if (t < n32) o32[t] = (int32_t)((uint32_t)bm * 0x10001u);
    }
    out_free(r, "o_i8", KF_S_I8, o8, n8);
    out_free(r, "o_u8", KF_S_U8, ou8, nu8);
    out_free(r, "o_i32", KF_S_I32, o32, n32);
}

/* ---- 4. narrow wrapping arithmetic -------------------------------------------------- */

/* x wrapped to `bits` bits, sign- or zero-extended. */
static int64_t wrap(int64_t x, unsigned bits, bool sgn)
{
    uint64_t m = (1ull << bits) - 1, u = (uint64_t)x & m;
    return sgn && (u >> (bits - 1)) ? (int64_t)(u | ~m) : (int64_t)u;
}

/* The 14 operations of regress_narrow_wrap, in its order, on a and b of a
 * `bits`-bit type (b != 0), shift amount s. */
static void narrow_ops(int64_t a, int64_t b, unsigned s, unsigned bits, bool sgn, int64_t o[14])
{
    int64_t q = b == -1 ? -a : a / b, rm = b == -1 ? 0 : a % b;
    o[0] = wrap(-a, bits, sgn);
    o[1] = wrap(sgn && a < 0 ? -a : a, bits, sgn);
    o[2] = wrap(a + b, bits, sgn);
    o[3] = wrap(a - b, bits, sgn);
    o[4] = wrap(a * b, bits, sgn);
    o[5] = s >= bits ? 0 : wrap((int64_t)((uint64_t)a << s), bits, sgn);
    o[6] = wrap(~a, bits, sgn);
    o[7] = wrap(q, bits, sgn);
    o[8] = rm;
    o[9] = wrap(q + (rm != 0 && (!sgn || (a < 0) == (b < 0))), bits, sgn);
    o[10] = a < b ? a : b;
    o[11] = a > b ? a : b;
    o[12] = s >= bits ? (a < 0 ? -1 : 0) : a >> s;   /* a >= 0 when unsigned */
    o[13] = wrap(-a, bits, sgn);
}

static void ref_regress_narrow_wrap(ref_ctx *r)
{
    size_t n32, nu32, n64, nf;
    int32_t *o32 = in_buf(r, "o32", KF_S_I32, 1, &n32);
    uint32_t *ou32 = in_buf(r, "ou32", KF_S_U32, 1, &nu32);
    int64_t *o64 = in_buf(r, "o64", KF_S_I64, 1, &n64);
    float *of = in_buf(r, "of", KF_S_F32, 1, &nf);
    for (uint32_t t = 0; t < 64; t++) {
        unsigned s = t % 20;
        int64_t res[4][14];
        int64_t b8 = t % 8 == 0 ? -1 : (int8_t)(uint8_t)((t * 37 + 11) | 1);
        int64_t b16 = t % 8 == 0 ? -1 : (int16_t)(uint16_t)((t * 7919 + 11) | 1);
        narrow_ops((int8_t)(uint8_t)(t + 0x60), b8, s, 8, true, res[0]);
        narrow_ops((uint8_t)(t + 0xe0), (uint8_t)((t * 37 + 11) | 1), s, 8, false, res[1]);
        narrow_ops((int16_t)(uint16_t)(t + 0x7fe0), b16, s, 16, true, res[2]);
        narrow_ops((uint16_t)(t + 0xffe0), (uint16_t)((t * 7919 + 11) | 1), s, 16, false, res[3]);
        for (size_t j = 0; j < 56; j++) {
            size_t at = 56 * t + j;
            int64_t v = res[j / 14][j % 14];
            if (at < n32) o32[at] = (int32_t)v;
            if (at < nu32) ou32[at] = (uint32_t)v;
            if (at < n64) o64[at] = v;
            if (at < nf) of[at] = (float)v;
        }
    }
    out_free(r, "o32", KF_S_I32, o32, n32);
    out_free(r, "ou32", KF_S_U32, ou32, nu32);
    out_free(r, "o64", KF_S_I64, o64, n64);
    out_free(r, "of", KF_S_F32, of, nf);
}

/* ---- 5. bitcast bytes ---------------------------------------------------------------- */

static void ref_regress_bitcast_bytes(ref_ctx *r)
{
    size_t no, nb;
    int32_t k = (int32_t)in_num(r, "k");
    uint32_t h = (uint32_t)in_num(r, "h");
    int32_t *o = in_buf(r, "o", KF_S_I32, 1, &no);
    uint32_t *ob = in_buf(r, "ob", KF_S_U32, 1, &nb);
    int8_t kk = (int8_t)k, hh = (int8_t)(uint8_t)(0xff | (uint8_t)h);
    int8_t b[64];
    for (uint32_t t = 0; t < 64; t++) b[t] = (int8_t)(uint8_t)(t * 7 + 0x7c);
    for (uint32_t t = 0; t < 64 && 8 * t + 7 < no; t++) {
        uint8_t y = (uint8_t)(t * 7 + 0x7c), c = (uint8_t)(t - 32);
        int8_t v[4] = {(int8_t)y, (int8_t)(uint8_t)(y + 1), (int8_t)200, (int8_t)255};
        int32_t *q = o + 8 * t;
        q[0] = kk > hh;
        q[1] = kk > b[t];
        q[2] = b[t] / 3;
        q[3] = b[t] >> 1;   /* arithmetic: the sign fill */
        q[4] = b[t] + (b[t] < 0 ? b[t] : 0) * 1000;
        q[5] = (c > 200) + (c / 7) * 10;
        q[6] = (v[0] < 0) + 2 * (v[1] < 0) + v[2] * 4 + v[3] * 1000;
        q[7] = (int16_t)(uint16_t)(t + 0x7ff0);
    }
    for (uint32_t t = 0; t < 64 && 2 * t + 1 < nb; t++) {
        uint32_t w = t / 32 * 32, ballot = 0;
        bool all = true;
        for (uint32_t l = 0; l < 32; l++) {
            ballot |= (uint32_t)(kk > b[w + l]) << l;
            all = all && b[w + l] < 100;
        }
        ob[2 * t] = ballot;
        ob[2 * t + 1] = (kk > hh ? 1u : 0u) + (all ? 2u : 0u);
    }
    out_free(r, "o", KF_S_I32, o, no);
    out_free(r, "ob", KF_S_U32, ob, nb);
}

/* ---- 6. f16 <-> bf16, then integer --------------------------------------------------- */

static void ref_regress_half_int(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, n16, n64, n32, n8, nf;
    double s = rbf16(in_num(r, "s")), m = in_num(r, "m");
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    uint16_t *o16 = in_buf(r, "o_u16", KF_S_U16, 1, &n16);
    int64_t *o64 = in_buf(r, "o_i64", KF_S_I64, 1, &n64);
    int32_t *o32 = in_buf(r, "o_i32", KF_S_I32, 1, &n32);
    uint8_t *o8 = in_buf(r, "o_u8", KF_S_U8, 1, &n8);
    float *of = in_buf(r, "o_f32", KF_S_F32, 1, &nf);
    double mhb = rbf16(kf_ref_rf16(m));
    for (size_t i = 0; i < n && i < nx; i++) {
        float v = x[i] * 300.0f;
        double hb = rbf16(kf_ref_rf16(v)), bh = kf_ref_rf16(rbf16(v));
        if (4 * i + 3 < n16) {
            o16[4 * i] = (uint16_t)to_int(kf_ref_rf16(s), 0, 65535);
            o16[4 * i + 1] = (uint16_t)to_int(hb, 0, 65535);
            o16[4 * i + 2] = (uint16_t)to_int(bh, 0, 65535);
            o16[4 * i + 3] = (uint16_t)to_int(mhb, 0, 65535);
        }
        if (2 * i + 1 < n64) o64[2 * i] = to_int(mhb, -9.2e18, 9.2e18), o64[2 * i + 1] = to_int(hb, -9.2e18, 9.2e18);
        if (4 * i + 3 < n32) {
            o32[4 * i] = (int32_t)to_int(hb, -2147483648.0, 2147483647.0);
            o32[4 * i + 1] = (int32_t)to_int(bh, -2147483648.0, 2147483647.0);
            o32[4 * i + 2] = (int32_t)to_int(kf_ref_rf16(rbf16(bh)), -2147483648.0, 2147483647.0);
            o32[4 * i + 3] = (int32_t)to_int(kf_ref_rf16(s), -2147483648.0, 2147483647.0);
        }
        if (2 * i + 1 < n8) o8[2 * i] = (uint8_t)to_int(hb, 0, 255), o8[2 * i + 1] = (uint8_t)to_int(bh, 0, 255);
        if (2 * i + 1 < nf) of[2 * i] = (float)hb, of[2 * i + 1] = (float)bh;
    }
    out_free(r, "o_u16", KF_S_U16, o16, n16);
    out_free(r, "o_i64", KF_S_I64, o64, n64);
    out_free(r, "o_i32", KF_S_I32, o32, n32);
    out_free(r, "o_u8", KF_S_U8, o8, n8);
    out_free(r, "o_f32", KF_S_F32, of, nf);
    free(x);
}

/* ---- 7. the difftest's first GPU run -------------------------------------------------- */

/* clamp(v, -inf, inf) of the f16 bits v: a NaN gives -inf (min and max
 * ignore a NaN operand), any other value itself. */
static uint16_t clamp_inf_f16(uint16_t v)
{
    return (v & 0x7c00) == 0x7c00 && (v & 0x3ff) ? 0xfc00 : v;
}

static void ref_regress_difftest1(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, nh, nw, no, n64;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx);
    uint16_t *h = in_buf(r, "h", KF_S_U16, 1, &nh);
    uint64_t *w = in_buf(r, "w", KF_S_U64, 1, &nw);
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    uint64_t *o64 = in_buf(r, "o64", KF_S_U64, 1, &n64);
    for (uint32_t i = 0; i < n && i < nx && i < nh && i < nw && 8 * i + 7 < no && 2 * i + 1 < n64; i++) {
        uint32_t fb = i % 4 == 0 ? x[i] | 0x7fc00000u : x[i];
        float f;
        memcpy(&f, &fb, 4);
        bool nan = isnan(f);
        o[8 * i] = !nan;                                 /* -1 < |f| */
        o[8 * i + 1] = !nan;                             /* |f| >= 0 */
        uint16_t sb = i % 4 == 1 ? (uint16_t)(h[i] | 0x7e00) : h[i], c = clamp_inf_f16(sb);
        uint16_t fill = (sb & 0x8000) ? 0xffff : 0;      /* s >> 26 of an i16: the sign fill */
        o[8 * i + 2] = !(c >= fill);
        o[8 * i + 3] = (uint32_t)(c >> 3);
        o[8 * i + 4] = c;
        uint32_t k0 = i * 3 + i % 5, k1 = (i + 1) * 3 + (i + 1) % 5;
        o[8 * i + 5] = k0 + k1 + i * (i % 9);
        o[8 * i + 6] = ((x[i] >> 8) & 1) * 2;             /* unsigned 0 > x is false */
        o[8 * i + 7] = (x[i] * 0x9e3779b9u) << 24 << 16;
        o64[2 * i] = 0;                                  /* << 121 */
        o64[2 * i + 1] = (int64_t)(w[i] * 3u) < 0 ? UINT64_MAX : 0;   /* >> 70: the sign fill */
    }
    out_free(r, "o", KF_S_U32, o, no);
    out_free(r, "o64", KF_S_U64, o64, n64);
    free(x);
    free(h);
    free(w);
}

/* ---- 8. the sign of zero from min and max ------------------------------------------------- */

static void ref_regress_zero_sign(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no, nd, nh;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    float *o = in_buf(r, "o", KF_S_F32, 1, &no);
    double *od = in_buf(r, "od", KF_S_F64, 1, &nd);
    uint16_t *oh = in_buf(r, "oh", KF_S_F16, 1, &nh);
    for (size_t i = 0; i < n && i < nx && 6 * i + 5 < no && 4 * i + 3 < nd && 2 * i + 1 < nh; i++) {
        bool neg = signbit(x[i]) != 0;                   /* z = x * 0: the zero of x's sign */
        size_t w0 = i / 32 * 32;
        bool any_neg = false, any_pos = false;
        for (size_t l = w0; l < w0 + 32 && l < n; l++) *(signbit(x[l]) ? &any_neg : &any_pos) = true;
        o[6 * i] = -0.0f, o[6 * i + 1] = 0.0f;
        o[6 * i + 2] = neg ? 0.0f : -0.0f;                /* min(max(z, -z), -z) = -z */
        o[6 * i + 3] = any_neg ? -0.0f : 0.0f;
        o[6 * i + 4] = any_pos ? 0.0f : -0.0f;
        o[6 * i + 5] = neg ? -0.0f : 0.0f;                /* min(z, NaN) = z */
        od[4 * i] = -0.0, od[4 * i + 1] = 0.0;
        od[4 * i + 2] = any_neg ? -0.0 : 0.0;
        od[4 * i + 3] = any_pos ? 0.0 : -0.0;
        oh[2 * i] = 0x8000, oh[2 * i + 1] = 0x0000;
    }
    out_free(r, "o", KF_S_F32, o, no);
    out_free(r, "od", KF_S_F64, od, nd);
    out_free(r, "oh", KF_S_F16, oh, nh);
    free(x);
}

/* ---- 9. a sum that is an exact tie ---------------------------------------------------------- */

static void ref_regress_tie_fold(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    float *o = in_buf(r, "o", KF_S_F32, 1, &no);
    uint32_t ab[2] = {0xff7fffffu, 0x7d432638u};
    float a, b, tiny = ldexpf(1.0f, -149);
    memcpy(&a, &ab[0], 4);
    memcpy(&b, &ab[1], 4);
    volatile float t = a + b;                            /* the tie, rounded to even: 0xff73cd9c */
    for (size_t i = 0; i < n && i < nx && 3 * i + 2 < no; i++) {
        volatile float m = x[i] * 1.0e-30f;
        float small = (m > tiny ? m : tiny) + 0.0f;
        volatile float s16 = 16.0f + small;
        o[3 * i] = o[3 * i + 1] = o[3 * i + 2] = t + s16;
    }
    out_free(r, "o", KF_S_F32, o, no);
    free(x);
}

/* ---- narrow min/max compares and sign-extended bytes to float ------------------- */

static void ref_regress_narrow_minmax(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nh, ns, nb, nv, no, nf;
    uint16_t *h = in_buf(r, "h", KF_S_U16, 1, &nh);
    int16_t *s = in_buf(r, "s", KF_S_I16, 1, &ns);
    int8_t *b = in_buf(r, "b", KF_S_I8, 1, &nb);
    int8_t *v = in_buf(r, "v", KF_S_I8, 4, &nv);
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    float *f = in_buf(r, "f", KF_S_F32, 1, &nf);
    for (size_t i = 0; i < n && i < nh && i < ns && i < nb && i < nv && 4 * i + 3 < no && 3 * i + 2 < nf; i++) {
        o[4 * i] = h[i] <= 8192 ? 1 : 2;
        o[4 * i + 1] = s[i] >= -7 ? 1 : 2;
        o[4 * i + 2] = b[i] <= 1 ? 1 : 2;
        o[4 * i + 3] = s[i] >= 0 || s[i] == INT16_MIN ? 1 : 2;   /* abs wraps: abs(-32768) is -32768 */
        uint32_t u[3];
        for (int l = 0; l < 3; l++) u[l] = (uint32_t)(int32_t)v[4 * i + l];   /* sign-extended, then unsigned */
        f[3 * i] = (float)u[0];
        f[3 * i + 1] = (float)u[1];
        f[3 * i + 2] = u[2] > 65519 ? INFINITY : kf_ref_rf16((double)u[2]);   /* f16: past 65519 rounds to inf */
    }
    out_free(r, "o", KF_S_U32, o, no);
    out_free(r, "f", KF_S_F32, f, nf);
    free(h), free(s), free(b), free(v);
}

/* ---- NVVM folds: abs(INT_MIN) widened, negative floats to unsigned --------------- */

static void ref_regress_nvvm_fold(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, nw, nf, nq;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    int32_t *w = in_buf(r, "w", KF_S_I32, 1, &nw);
    float *f = in_buf(r, "f", KF_S_F32, 1, &nf);
    uint64_t *q = in_buf(r, "q", KF_S_U64, 1, &nq);
    for (size_t i = 0; i < n && i < nx && i < nw && 2 * i + 1 < nf && 2 * i + 1 < nq; i++) {
        bool top = w[i] < 0;                       /* w & INT_MIN is INT_MIN, whose abs is itself */
        f[2 * i] = top ? -2147483648.0f : 0.0f;    /* exact in bf16 */
        f[2 * i + 1] = top ? -9223372036854775808.0f : 0.0f;
        q[2 * i] = 0;                              /* -1.0 or 0.0 to u64: saturated at 0 */
        q[2 * i + 1] = 0;                          /* -3.0 or -2.0 to u32 */
    }
    out_free(r, "f", KF_S_F32, f, nf);
    out_free(r, "q", KF_S_U64, q, nq);
    free(x), free(w);
}

/* ---- i8 lanes divided by a negative power of two ---------------------------------- */

static void ref_regress_narrow_div(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nv, no;
    int8_t *v = in_buf(r, "v", KF_S_I8, 16, &nv);
    int8_t *o = in_buf(r, "o", KF_S_I8, 16, &no);
    for (size_t i = 0; i < n && i < nv && i < no; i++)
        for (size_t l = 0; l < 16; l++) {
            int q = v[16 * i + l] / -16;                 /* C truncates toward zero, as the contract */
            o[16 * i + l] = (int8_t)(uint8_t)(unsigned)(-q);   /* times bitcast(-1 as i16) lanes: -1 */
        }
    out_free(r, "o", KF_S_I8, o, 16 * no);
    free(v);
}

/* ---- 16-bit lanes of widened bytes and halfwords ------------------------------------ */

static void ref_regress_bitcast_split(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, ns, no, nf;
    uint8_t *x = in_buf(r, "x", KF_S_U8, 2, &nx);
    int16_t *s = in_buf(r, "s", KF_S_I16, 1, &ns);
    int32_t *o = in_buf(r, "o", KF_S_I32, 1, &no);
    float *f = in_buf(r, "f", KF_S_F32, 1, &nf);
    for (size_t i = 0; i < n && i < nx && i < ns && 8 * i + 7 < no && 2 * i + 1 < nf; i++) {
        uint32_t top = s[i] < 0 ? 0xffffu : 0u;          /* the sign extension's high half */
        o[8 * i] = x[2 * i], o[8 * i + 1] = 0;          /* i16 lanes of the zero-extended bytes */
        o[8 * i + 2] = x[2 * i + 1], o[8 * i + 3] = 0;
        o[8 * i + 4] = (uint16_t)s[i], o[8 * i + 5] = (int32_t)top;
        o[8 * i + 6] = o[8 * i + 7] = (int32_t)(top & 0xffu);
        f[2 * i] = 0.0f, f[2 * i + 1] = 0.0f;            /* the zero high halves, as f32 */
    }
    out_free(r, "o", KF_S_I32, o, no);
    out_free(r, "f", KF_S_F32, f, nf);
    free(x), free(s);
}

/* ---- abs of the most negative integer, then signed arithmetic ---------------------- */

static void ref_regress_abs_rem(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nj, nk, no, np;
    int32_t *j = in_buf(r, "j", KF_S_I32, 1, &nj);
    int64_t *k = in_buf(r, "k", KF_S_I64, 1, &nk);
    int32_t *o = in_buf(r, "o", KF_S_I32, 1, &no);
    int64_t *p = in_buf(r, "p", KF_S_I64, 1, &np);
    for (size_t i = 0; i < n && i < nj && i < nk && 4 * i + 3 < no && 3 * i + 2 < np; i++) {
        int64_t xv = (int64_t)(int32_t)((uint32_t)j[i] ^ 0x80000000u);
        int32_t x = (int32_t)(xv < 0 ? (uint32_t)-(uint64_t)xv : (uint32_t)xv);   /* wraps: |MIN| = MIN */
        o[4 * i] = x % 2147483647, o[4 * i + 1] = x / 7;
        o[4 * i + 2] = x >> 3, o[4 * i + 3] = x < 0;
        uint64_t yb = (uint64_t)k[i] ^ 0x8000000000000000u;
        int64_t y = (int64_t)(yb >> 63 ? 0 - yb : yb);
        p[3 * i] = y % INT64_MAX, p[3 * i + 1] = y / 7;
        p[3 * i + 2] = (int64_t)((uint64_t)x + (uint64_t)(y >> 62));
    }
    out_free(r, "o", KF_S_I32, o, no);
    out_free(r, "p", KF_S_I64, p, np);
    free(j), free(k);
}

/* ---- packed f16 with negative constant lanes ------------------------------------- */

static void ref_regress_half_const_pair(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, ny, no;
    uint16_t *x = in_buf(r, "x", KF_S_F16, 1, &nx);
    int64_t *y = in_buf(r, "y", KF_S_I64, 1, &ny);
    uint16_t *o = in_buf(r, "o", KF_S_F16, 4, &no);
    for (size_t i = 0; i < n && i < nx && i < ny && 3 * i + 2 < no; i++) {
        double xi = kf_ref_f16_value(x[i]), c[4];
        for (int l = 0; l < 4; l++) c[l] = kf_ref_f16_value((uint16_t)((uint64_t)y[i] >> (16 * l)));
        double a0[4] = {xi, -2048, 0, -2}, a1[4] = {-2, xi, -0.5, xi};
        double fa[4] = {xi, -1024, xi, -4}, fb[4] = {2, xi, -2, 0.5};
        for (int l = 0; l < 4; l++) {
            o[4 * (3 * i) + l] = kf_ref_f16_bits(a0[l] + c[l]);            /* f16 + f16: exact, then rounded */
            o[4 * (3 * i + 1) + l] = kf_ref_f16_bits(a1[l] * kf_ref_rf16(c[l] + 1.0));
            o[4 * (3 * i + 2) + l] = kf_ref_f16_bits(fa[l] * fb[l] + c[l]);  /* one rounding */
        }
    }
    out_free(r, "o", KF_S_F16, o, 4 * no);
    free(x), free(y);
}

/* ---- a byte pair and a halfword pair read through two views -------------------- */

static void ref_regress_byte_pair_view(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no, np;
    uint16_t *x = in_buf(r, "x", KF_S_F16, 4, &nx);
    uint8_t *o = in_buf(r, "o", KF_S_U8, 2, &no);
    int16_t *p = in_buf(r, "p", KF_S_I16, 2, &np);
    for (size_t i = 0; i < n && i < nx && i < no && i < np; i++) {
        uint16_t h0 = x[4 * i], h1 = x[4 * i + 1];
        uint8_t a[2] = {(uint8_t)h0, (uint8_t)(h0 >> 8)};   /* the bytes of lane 0, low first */
        for (int l = 0; l < 2; l++) o[2 * i + l] = (uint8_t)(1u + a[l] * (uint8_t)(0u - a[l]));
        p[2 * i] = (int16_t)(uint16_t)((uint32_t)h0 * h0);
        p[2 * i + 1] = (int16_t)(uint16_t)((uint32_t)h1 * h1);
    }
    out_free(r, "o", KF_S_U8, o, 2 * no);
    out_free(r, "p", KF_S_I16, p, 2 * np);
    free(x);
}

/* ---- byte pairs stored to shared and local arrays --------------------------------- */

static void ref_regress_byte_pair_store(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    uint8_t *x = in_buf(r, "x", KF_S_U8, 2, &nx);
    uint16_t *o = in_buf(r, "o", KF_S_U16, 1, &no);
    for (size_t i = 0; i < n && i < nx && 2 * i + 1 < no; i++) {
        o[2 * i] = (uint16_t)(x[2 * i] | x[2 * i + 1] << 8);    /* the pair as a halfword, low byte first */
        o[2 * i + 1] = (uint16_t)(i % 4 | 0xff00u);            /* i8x2(i % 4, -1) */
    }
    out_free(r, "o", KF_S_U16, o, no);
    free(x);
}

/* ---- the low word of an f64 min/max, cut and widened ------------------------------- */

static uint32_t f64_word(double v, int hi)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return (uint32_t)(b >> (hi ? 32 : 0));
}

static void ref_regress_low_word_cut(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    double *x = in_buf(r, "x", KF_S_F64, 1, &nx);
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    for (size_t i = 0; i < n && i < nx && 8 * i + 7 < no; i++) {
        uint32_t lo = f64_word(x[i], 0), hi = f64_word(x[i], 1);      /* rand: finite, so the clamp keeps it */
        double v = x[i] * 0.25 + 1.5;                                  /* in [1.25, 1.75): min/max keep it */
        double c = x[i] < -0.5 ? -0.5 : x[i] > 0.5 ? 0.5 : x[i];
        uint32_t wlo = f64_word(v, 0), whi = f64_word(v, 1);
        o[8 * i] = lo & 0xffffu, o[8 * i + 1] = lo >> 16;
        o[8 * i + 2] = hi & 0xffffu, o[8 * i + 3] = hi >> 16;
        o[8 * i + 4] = wlo & 0xffffu, o[8 * i + 5] = wlo & 0xffu, o[8 * i + 6] = whi & 0xffffu;
        o[8 * i + 7] = (f64_word(c, 0) & 0xffffu) + (wlo >> 16 << 16);
    }
    out_free(r, "o", KF_S_U32, o, no);
    free(x);
}

/* ---- 64-bit multiplies of constant multiples, then a constant added ---------------- */

static void ref_regress_mul_chain(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    int64_t *x = in_buf(r, "x", KF_S_I64, 1, &nx);
    int64_t *o = in_buf(r, "o", KF_S_I64, 1, &no);
    for (size_t i = 0; i < n && i < nx && 6 * i + 5 < no; i++) {
        uint64_t xs = (uint64_t)x[i] << 31, s = xs * 28u;   /* unsigned: wraps mod 2^64 */
        o[6 * i] = (int64_t)(xs * 3u + 1u);
        o[6 * i + 1] = (int64_t)(1u - xs * 3u);
        o[6 * i + 2] = (int64_t)(1u - s);
        o[6 * i + 3] = (int64_t)(1u - s);
        o[6 * i + 4] = (int64_t)(1u - s * 3u);
        o[6 * i + 5] = (int64_t)((uint64_t)x[i] * 2147483648u * 5u + 7u);
    }
    out_free(r, "o", KF_S_I64, o, no);
    free(x);
}

/* ---- a negation under two nested min/max ------------------------------------------ */

static int32_t wneg(int32_t a) { return (int32_t)(0u - (uint32_t)a); }
static int32_t wabs(int32_t a) { return a < 0 ? wneg(a) : a; }
static int32_t imax(int32_t a, int32_t b) { return a > b ? a : b; }
static int32_t imin(int32_t a, int32_t b) { return a < b ? a : b; }

static void ref_regress_neg_minmax3(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nj, nk, no;
    int32_t *j = in_buf(r, "j", KF_S_I32, 1, &nj);
    int32_t *k = in_buf(r, "k", KF_S_I32, 1, &nk);
    int32_t *o = in_buf(r, "o", KF_S_I32, 1, &no);
    for (size_t i = 0; i < n && i < nj && (i + 7) % n < nk && 5 * i + 4 < no; i++) {
        int32_t a = j[i] - 32, b = k[(i + 7) % n] - 40;
        o[5 * i] = imax(a, wabs(a));
        o[5 * i + 1] = imax(a, imax(b, wneg(a)));
        o[5 * i + 2] = imin(b, imin(a, wneg(b)));
        o[5 * i + 3] = imax(b, wabs(a));
        o[5 * i + 4] = imin(a, wabs(b)) + imax(wneg(a), imax(b, 3));
    }
    out_free(r, "o", KF_S_I32, o, no);
    free(j), free(k);
}

/* ---- selects of float constants with -0.0 ----------------------------------------- */

static void ref_regress_negzero_select(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    float *o = in_buf(r, "o", KF_S_F32, 1, &no);
    for (size_t i = 0; i < n && i < nx && 4 * i + 3 < no; i++) {
        o[4 * i] = x[i] > 0.0f ? -1.0f : -0.0f;
        o[4 * i + 1] = x[i] > 0.25f ? 1.0f : -0.0f;
        o[4 * i + 2] = x[i] < -0.25f ? -1.0f : -0.0f;
        o[4 * i + 3] = x[i] > 0.5f ? -0.0f : -2.0f;
    }
    out_free(r, "o", KF_S_F32, o, no);
    free(x);
}

/* ---- four bytes and four bf16 lanes read through two views --------------------------- */

static void ref_regress_byte_quad_view(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no, np;
    uint16_t *x = in_buf(r, "x", KF_S_BF16, 4, &nx);
    int8_t *o = in_buf(r, "o", KF_S_I8, 4, &no);
    uint16_t *p = in_buf(r, "p", KF_S_BF16, 4, &np);
    for (size_t i = 0; i < n && i < nx && i < no && i < np; i++) {
        const uint16_t *h = &x[4 * (i / 64 * 64)];                  /* s[0]: the block's thread 0 */
        int8_t a[4] = {(int8_t)(h[0] & 0xff), (int8_t)(h[0] >> 8), (int8_t)(h[1] & 0xff), (int8_t)(h[1] >> 8)};
        for (int l = 0; l < 4; l++) {
            o[4 * i + l] = (int8_t)(uint8_t)(a[l] * 3 + (int)(i % 64 % 8));   /* wraps at 8 bits */
            p[4 * i + l] = bf16_bits(bf16_value(h[l]) * a[l]);     /* exact product, rounded once */
        }
    }
    out_free(r, "o", KF_S_I8, o, 4 * no);
    out_free(r, "p", KF_S_BF16, p, 4 * np);
    free(x);
}

/* ---- the low word of an f64 clamp after a loop; min/max of signed zeros ----------- */

static uint32_t ref_prmt(uint32_t a, uint32_t b, uint32_t s);   /* reference_section8.c */

static uint64_t f64_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* PTX min (max: want_max): a NaN operand gives the other; of equal operands
 * (+0 and -0) the negative (min) or the positive (max) one */
static double ptx_minmax(double a, double b, int want_max)
{
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == b) return (signbit(a) != 0) != (want_max != 0) ? a : b;
    return (a < b) != (want_max != 0) ? a : b;
}

static void ref_regress_f64_minmax_low_word(ref_ctx *r)
{
    size_t nx, nc, no, nm;
    uint32_t a = (uint32_t)in_num(r, "a"), b = (uint32_t)in_num(r, "b");
    double *x = in_buf(r, "x", KF_S_F64, 1, &nx);
    float *c = in_buf(r, "c", KF_S_F32, 1, &nc);
    uint8_t *o = in_buf(r, "o", KF_S_U8, 8, &no);
    uint32_t *m = in_buf(r, "m", KF_S_U32, 1, &nm);
    float x0;
    memcpy(&x0, x, sizeof x0);                                  /* (x as &[f32])[0] */
    for (size_t i = 0; i < 64 && nx == 64 && 5 * i + 1 < nc && i < no && 2 * i + 1 < nm; i++) {
        if (ref_prmt(b, a, b) >= 1) c[5 * i + 1] = x0;          /* the loop runs at least 6 times */
        double v = x[(i + 63) % 64], cl = ptx_minmax(ptx_minmax(v, -INFINITY, 1), INFINITY, 0);
        for (int l = 0; l < 8; l++) o[8 * i + l] = (uint8_t)f64_bits(cl);
        double w = i % 3 == 0 ? -0.0 : x[63 - i], v0 = i % 3 == 0 ? 0.0 : v;
        m[2 * i] = (uint32_t)f64_bits(ptx_minmax(v0, w, 0)) ^ (uint32_t)(f64_bits(ptx_minmax(w, v0, 0)) >> 32);
        m[2 * i + 1] = (uint32_t)f64_bits(ptx_minmax(v0, w, 1)) ^ (uint32_t)(f64_bits(ptx_minmax(w, v0, 1)) >> 32);
    }
    out_free(r, "c", KF_S_F32, c, nc);
    out_free(r, "o", KF_S_U8, o, 8 * no);
    out_free(r, "m", KF_S_U32, m, nm);
    free(x);
}

/* regress_nested_minmax: u32 (and, with imin/imax, i32) min/max of negations, in wrapping arithmetic. */
static uint32_t umin32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t umax32(uint32_t a, uint32_t b) { return a > b ? a : b; }

static void ref_regress_nested_minmax(ref_ctx *r)
{
    size_t no, ns;
    uint32_t y = (uint32_t)in_num(r, "y"), x = (uint32_t)in_num(r, "x"), l = (uint32_t)in_num(r, "l");
    uint32_t n = (uint32_t)in_num(r, "n");
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    int32_t *s = in_buf(r, "s", KF_S_I32, 1, &ns);
    int32_t ys = (int32_t)y, xs = (int32_t)x, ls = (int32_t)l;
    int32_t nys = (int32_t)(0u - (uint32_t)ys), nxs = (int32_t)(0u - (uint32_t)xs);
    for (uint32_t by = 0; by < 3; by++)
        for (uint32_t bx = 0; bx < 2; bx++)
            for (uint32_t tx = 0; tx < 32; tx++) {
                size_t t = (by * 2 + bx) * 32 + tx;
                if (9 * t + 8 >= no || 2 * t + 1 >= ns) continue;
                o[9 * t] = umin32(umax32(0u - y, 0u - x), ~l);
                o[9 * t + 1] = umax32(umin32(0u - y, 0u - x), ~l);
                o[9 * t + 2] = umin32(umin32(0u - y, 0u - x), ~l);
                o[9 * t + 3] = umin32(umax32(0u - y, 0u - x), ~l);   /* clamp(v, lo, hi) = min(max(v, lo), hi) */
                for (uint32_t b = 0; b < n; b++) {
                    o[9 * t + 4 + b % 4] = umin32(umax32(0u - by, 0u - bx), ~(l + b));
                    o[9 * t + 8] = umin32(umax32(0u - by, 0u - bx), ~l);   /* select(a < ~l, a, ~l) */
                }
                s[2 * t] = imin(imax(nys, nxs), ~ls);
                s[2 * t + 1] = imax(imax(nys, nxs), ~ls);
            }
    out_free(r, "o", KF_S_U32, o, no);
    out_free(r, "s", KF_S_I32, s, ns);
}

static void ref_regress_select_of_max(ref_ctx *r)
{
    size_t no;
    uint32_t l = (uint32_t)in_num(r, "l"), n = (uint32_t)in_num(r, "n");
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    for (uint32_t by = 0; by < 3; by++)
        for (uint32_t bx = 0; bx < 2; bx++)
            for (uint32_t tx = 0; tx < 32; tx++) {
                size_t t = (by * 2 + bx) * 32 + tx;
                for (uint32_t b = 0; b < n && 4 * t + 3 < no; b++) o[4 * t + b % 4] = umin32(umax32(0u - by, 0u - bx), ~l);
            }
    out_free(r, "o", KF_S_U32, o, no);
}

/* ---- a sign-extended byte, as u32, to bf16 ---------------------------------------- */

static void ref_regress_byte_to_bf16(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nv, nf, nw;
    int8_t *v = in_buf(r, "v", KF_S_I8, 4, &nv);
    uint16_t *f = in_buf(r, "f", KF_S_BF16, 4, &nf);
    int32_t *w = in_buf(r, "w", KF_S_I32, 4, &nw);
    for (size_t i = 0; i < n && i < nv && i < nf && i < nw; i++)
        for (int l = 0; l < 4; l++) {
            double u = (uint32_t)(int32_t)v[4 * i + l];   /* sign-extended, then unsigned */
            f[4 * i + l] = bf16_bits(u);
            w[4 * i + l] = (int32_t)to_int(bf16_value(f[4 * i + l]), INT32_MIN, INT32_MAX);
        }
    out_free(r, "f", KF_S_BF16, f, 4 * nf);
    out_free(r, "w", KF_S_I32, w, 4 * nw);
    free(v);
}

/* ---- a parameter's bytes sign-extended to u32 through abs, max and | 0 ------------- */

static void ref_regress_param_byte_abs(ref_ctx *r)
{
    size_t nh, nf, no;
    uint16_t *h = in_buf(r, "h", KF_S_F16, 1, &nh);
    float *f = in_buf(r, "f", KF_S_F32, 1, &nf);
    int64_t *o = in_buf(r, "o", KF_S_I64, 1, &no);
    kf_value v;
    kf_error err = {0};
    if (kf_value_parse(kf_case_arg(r->c, "v"), kf_type_vector(KF_S_I8, 16), "v", &v, &err) != KF_OK) {
        fprintf(stderr, "%s: %s\n", r->c->path, err.msg);
        r->errors++;
        nh = 0;
    }
    kf_error_clear(&err);
    for (size_t l = 0; l < 16 && l < nh && l < nf && l < no; l++) {
        uint32_t u = (uint32_t)(int32_t)(int8_t)v.lane[l];   /* sign-extended, then unsigned */
        h[l] = kf_ref_f16_bits(u);
        f[l] = (float)(u > 1 ? u : 1);
        double hv = kf_ref_f16_value(h[l]);
        o[l] = isinf(hv) ? INT64_MAX : (int64_t)hv;
    }
    out_free(r, "h", KF_S_F16, h, nh);
    out_free(r, "f", KF_S_F32, f, nf);
    out_free(r, "o", KF_S_I64, o, no);
}

/* ---- a read-only and a written buffer's loads meeting in one value ---------------- */

/* n rounds of p[i] -> 3 p[i] + 1 and q[i] -> qmul q[i] + qadd, each from
 * its own old value, or from ro[5] (p) and ro[qk] (q) for i >= n. */
static void ro_rw_rounds(ref_ctx *r, size_t qk, uint32_t qmul, uint32_t qadd)
{
    size_t n = (size_t)in_num(r, "n"), nro, np, nq;
    uint32_t *ro = in_buf(r, "ro", KF_S_U32, 1, &nro);
    uint32_t *p = in_buf(r, "p", KF_S_U32, 1, &np);
    uint32_t *q = in_buf(r, "q", KF_S_U32, 1, &nq);
    for (size_t i = 0; i < np && i < nq && nro > 5 && nro > qk; i++)
        for (size_t j = 0; j < n; j++) {
            p[i] = (i >= n ? ro[5] : p[i]) * 3u + 1u;
            q[i] = (i >= n ? ro[qk] : q[i]) * qmul + qadd;
        }
    out_free(r, "p", KF_S_U32, p, np);
    out_free(r, "q", KF_S_U32, q, nq);
    free(ro);
}

static void ref_regress_ro_rw_merge(ref_ctx *r) { ro_rw_rounds(r, 5, 3, 1); }
static void ref_regress_ro_rw_merge_arith(ref_ctx *r) { ro_rw_rounds(r, 6, 5, 2); }

/* ---- constants added by the JIT: ties ---------------------------------------------- */

static void ref_regress_const_fold_tie(ref_ctx *r)
{
    static const float x[8] = {1.0f, -1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 3.0f, 0.75f};
    size_t no, np;
    float *o = in_buf(r, "o", KF_S_F32, 1, &no), *p = in_buf(r, "p", KF_S_F32, 1, &np);
    if (no >= 8 && np >= 8) {
        memcpy(o, x, sizeof x);
        p[0] = -24683392.0f + x[0];   /* -24683391: a tie, to the even -24683392 */
        p[1] = 24683392.0f + x[1];
        p[2] = 24683392.0f - x[2];
        p[3] = x[3] - 24683392.0f;
        p[4] = -18775096.0f + x[4];
        p[5] = 33554432.0f - x[5];
        p[6] = 16777216.0f + x[6];
        p[7] = 33554432.0f - x[7];
    }
    out_free(r, "o", KF_S_F32, o, no);
    out_free(r, "p", KF_S_F32, p, np);
}

/* ---- bytes read as bools: nonzero is true ---------------------------------------- */

static void ref_regress_bool_bytes(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no, nq;
    uint8_t *x = in_buf(r, "x", KF_S_U8, 1, &nx), *q = in_buf(r, "q", KF_S_U8, 1, &nq);
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    for (size_t i = 0; i < n && i < nx && 2 * i + 1 < no && i < nq; i++) {
        uint32_t b = x[i] != 0;
        size_t j = (i & ~(size_t)63) | ((i & 63) ^ 1);   /* the neighbour in the block of 64 */
        uint32_t c = j < n && j < nx && x[j] != 0;
        o[2 * i] = b + 10 * b + 100 * !b + 1000 * b;
        o[2 * i + 1] = c + 10 * (c && b);
        q[i] = (uint8_t)b;
    }
    out_free(r, "o", KF_S_U32, o, no);
    out_free(r, "q", KF_S_U8, q, nq);
    free(x);
}

/* ---- the bits of a half conversion, masked or shifted, in a vector of i16 ---------- */

static void ref_regress_half_bits_op(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no, np;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx);
    int16_t *o = in_buf(r, "o", KF_S_I16, 4, &no);
    int16_t *p = in_buf(r, "p", KF_S_I16, 4, &np);
    for (size_t i = 0; i < n && i < nx && i < no && i < np; i++) {
        int16_t b = (int16_t)bf16_bits(x[i]), h = (int16_t)kf_ref_f16_bits(x[i]);
        for (int l = 0; l < 4; l++) o[4 * i + l] = p[4 * i + l] = 0;
        o[4 * i + 2] = (int16_t)(b & 16384);
        p[4 * i + 1] = (int16_t)(h >> 3);   /* arithmetic: the sign fills */
    }
    out_free(r, "o", KF_S_I16, o, 4 * no);
    out_free(r, "p", KF_S_I16, p, 4 * np);
    free(x);
}

/* ---- 16 - v under a max --------------------------------------------------------------- */

static void ref_regress_sub_minmax(ref_ctx *r)
{
    size_t nx, no;
    uint16_t *x = in_buf(r, "x", KF_S_F16, 1, &nx);
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    for (size_t t = 0; t < no && t < nx; t++) {
        size_t src = t / 32 * 32 + (t % 32 + 2) % 32;   /* two lanes up, in the thread's block */
        double f = src < nx ? kf_ref_f16_value(x[src]) : 0;
        o[t] = umax32((uint32_t)t & 16, 16u - (uint32_t)to_int(f, 0, UINT32_MAX));
    }
    out_free(r, "o", KF_S_U32, o, no);
    free(x);
}

/* ---- min/max beside a constant -0.0 ------------------------------------------------------ */

static double pmin(double a, double b) { return ptx_minmax(a, b, 0); }
static double pmax(double a, double b) { return ptx_minmax(a, b, 1); }

/* The buffers of the f32 min/max bound kernels: x in; o (6 a thread), v
 * (f32x4), h (f16, 2 a thread) out. */
typedef struct {
    size_t n, nx, no, nv, nh;
    float *x, *o, *v;
    uint16_t *h;
} bound_bufs;

static bound_bufs bound_in(ref_ctx *r)
{
    bound_bufs b = {.n = (size_t)in_num(r, "n")};
    b.x = in_buf(r, "x", KF_S_F32, 1, &b.nx);
    b.o = in_buf(r, "o", KF_S_F32, 1, &b.no);
    b.v = in_buf(r, "v", KF_S_F32, 4, &b.nv);
    b.h = in_buf(r, "h", KF_S_F16, 1, &b.nh);
    return b;
}

static void bound_out(ref_ctx *r, bound_bufs *b)
{
    out_free(r, "o", KF_S_F32, b->o, b->no);
    out_free(r, "v", KF_S_F32, b->v, 4 * b->nv);
    out_free(r, "h", KF_S_F16, b->h, b->nh);
    free(b->x);
}

static void ref_regress_negzero_bound(ref_ctx *r)
{
    bound_bufs b = bound_in(r);
    for (size_t t = 0; t < b.n && t < b.nx; t++) {
        double a = b.x[t], nz = -0.0;
        double q[6] = {pmin(pmax(a, nz), 1.0), pmax(a, nz), pmin(a, nz), pmin(pmax(a, -1.0), nz),
                       pmin(pmax(a, nz), 1.0), pmax(pmin(a, 1.0), nz)};
        for (size_t k = 0; k < 6 && 6 * t + k < b.no; k++) b.o[6 * t + k] = (float)q[k];
        float l[4] = {b.x[t], -b.x[t], b.x[t] * 0.0f, b.x[t] / 0.0f * 0.0f};
        for (size_t k = 0; k < 4 && t < b.nv; k++) b.v[4 * t + k] = (float)pmin(pmax(l[k], nz), 1.0);
        double h = kf_ref_rf16(a);
        if (2 * t + 1 < b.nh) b.h[2 * t] = kf_ref_f16_bits(pmin(pmax(h, nz), 1.0)), b.h[2 * t + 1] = kf_ref_f16_bits(pmax(h, nz));
    }
    bound_out(r, &b);
}

/* ---- max(min(x, c), 0.0), NaN included ---------------------------------------------- */

static void ref_regress_min_then_zero(ref_ctx *r)
{
    bound_bufs b = bound_in(r);
    for (size_t t = 0; t < b.n && t < b.nx; t++) {
        double a = b.x[t], q = NAN, a4 = (double)(b.x[t] * 4.0f);
        double e[6] = {pmax(pmin(q, 1.0), 0.0), pmax(0.0, pmin(1.0, a4)), pmax(pmin(q, 0.5), 0.0),
                       pmax(pmin(t % 2 == 0 ? q : a4, 1.0), 0.0), pmin(pmax(q, 0.0), 1.0), pmax(pmin(a4, 1.0), 0.0)};
        for (size_t k = 0; k < 6 && 6 * t + k < b.no; k++) b.o[6 * t + k] = (float)e[k];
        double l[4] = {a4, (double)(-b.x[t] * 4.0f), q, a};
        for (size_t k = 0; k < 4 && t < b.nv; k++) b.v[4 * t + k] = (float)pmax(pmin(l[k], 1.0), 0.0);
        double h4 = kf_ref_rf16(kf_ref_rf16(a) * 4.0);   /* f16 times 4: exact, then rounded as f16 */
        if (2 * t + 1 < b.nh)
            b.h[2 * t] = kf_ref_f16_bits(pmax(pmin(q, 1.0), 0.0)), b.h[2 * t + 1] = kf_ref_f16_bits(pmax(pmin(h4, 1.0), 0.0));
    }
    bound_out(r, &b);
}

/* ---- select(s > 0.0, s, 0.0) of a select or min with 1.0 ---------------------------- */

static void ref_regress_zero_select_of_min(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx), *o = in_buf(r, "o", KF_S_F32, 1, &no);
    for (size_t t = 0; t < n && t < nx && 10 * t + 9 < no; t++) {
        size_t k = t % 8;
        float a = x[t];
        float q = k % 4 == 0 ? NAN : k == 1 || k == 5 ? -a * 4.0f : k == 2 ? -0.0f * a : k == 6 ? 0.0f * a : a * 4.0f - 2.0f;
        float s = q < 1.0f ? q : 1.0f, m = (float)pmin(q, 1.0), rr = 1.0f > q ? q : 1.0f;
        float e[10] = {s > 0.0f ? s : 0.0f, 0.0f >= m ? 0.0f : m, (float)pmax(s, 0.0), rr >= 0.0f ? rr : -0.0f,
                       s < 0.0f ? 0.0f : s, m <= -0.0f ? -0.0f : m, q > 0.0f ? q : 0.0f, m > 0.5f ? m : 0.0f,
                       q, m > 0.0f ? m : 0.0f};
        memcpy(&o[10 * t], e, sizeof e);
    }
    out_free(r, "o", KF_S_F32, o, no);
    free(x);
}

/* ---- i16 and u8 views of one shared word, in a loop --------------------------------- */

static void ref_regress_narrow_view_mix(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no, np;
    int32_t *x = in_buf(r, "x", KF_S_I32, 1, &nx);
    int16_t *o = in_buf(r, "o", KF_S_I16, 1, &no);
    uint8_t *p = in_buf(r, "p", KF_S_U8, 1, &np);
    for (size_t blk = 0; blk < 2 && 8 * blk + 7 < nx; blk++) {
        uint8_t b[32];   /* the block's s, as its little-endian bytes */
        for (size_t w = 0; w < 8; w++)
            for (size_t j = 0; j < 4; j++) b[4 * w + j] = (uint8_t)((uint32_t)x[8 * blk + w] >> (8 * j));
        int16_t h[16];
        for (size_t j = 0; j < 16; j++) h[j] = (int16_t)(uint16_t)(b[2 * j] | b[2 * j + 1] << 8);
        for (size_t t = 0; t < 32; t++)
            for (size_t k = 0; k < n && h[2] != 0x7633; k++) {
                size_t i = (blk * 32 + t) * n + k;
                if (i >= no || i >= np) continue;
                o[i] = (int16_t)(uint16_t)(h[(t + k) % 16] + b[(t * 3 + k) % 32] - h[0]);   /* wraps at 16 bits */
                p[i] = (uint8_t)(b[t] ^ b[1] ^ b[3] ^ (uint8_t)h[1]);
            }
    }
    out_free(r, "o", KF_S_I16, o, no);
    out_free(r, "p", KF_S_U8, p, np);
    free(x);
}

/* ---- an i8x4 word and a u32 of a shared array, merged by NVVM ------------------------- */

static void ref_regress_word_view_merge(ref_ctx *r)
{
    size_t ns, no;
    uint32_t *s = in_buf(r, "s", KF_S_U32, 1, &ns);
    int8_t *o = in_buf(r, "o", KF_S_I8, 8, &no);
    uint32_t n = (uint32_t)in_num(r, "n");
    for (uint32_t t = 0; t < 64 && t < no && ns >= 4; t++) {
        int32_t sum = 0;   /* dot4 of word 3's signed bytes with four ones */
        for (int b = 0; b < 4; b++) sum += (int8_t)(uint8_t)(s[3] >> (8 * b));
        uint32_t k = 0;
        memset(&o[8 * t], 0, 8);
        while (sum > (int32_t)s[1] && k < n + t % 3) {
            k++;
            memset(&o[8 * t], (uint8_t)((uint8_t)s[2] + (uint8_t)k), 8);   /* i8 addition wraps */
        }
    }
    out_free(r, "o", KF_S_I8, o, 8 * no);
    free(s);
}

/* ---- u32 and u64 loads of a shared array, merged by NVVM ---------------------------- */

static void ref_regress_u64_u32_merge(ref_ctx *r)
{
    size_t ns, no;
    uint32_t *s = in_buf(r, "s", KF_S_U32, 1, &ns);
    uint64_t *o = in_buf(r, "o", KF_S_U64, 1, &no);
    uint32_t n = (uint32_t)in_num(r, "n");
    uint64_t w01 = ns >= 2 ? (uint64_t)s[1] << 32 | s[0] : 0;   /* the u64 at word 0, little-endian */
    for (uint32_t t = 0; t < 64 && t < no && ns >= 4; t++) {
        o[t] = 0;
        if (s[3] == 65535 && 2 >= s[0]) {
            o[t] = 1;
            continue;
        }
        uint32_t end = (uint32_t)(w01 & 7) + n + t % 3;
        for (uint32_t j = 0; j < end; j++) o[t] += w01 + j;   /* wraps */
    }
    out_free(r, "o", KF_S_U64, o, no);
    free(s);
}

#define KF_REFERENCE_REGRESS \
    {"regress_nan_to_int", ref_regress_nan_to_int}, {"regress_loop_var", ref_regress_loop_var}, \
    {"regress_half_bytes", ref_regress_half_bytes}, {"regress_narrow_wrap", ref_regress_narrow_wrap}, \
    {"regress_bitcast_bytes", ref_regress_bitcast_bytes}, {"regress_half_int", ref_regress_half_int}, \
    {"regress_difftest1", ref_regress_difftest1}, {"regress_zero_sign", ref_regress_zero_sign}, \
    {"regress_tie_fold", ref_regress_tie_fold}, {"regress_bitfield_range", ref_regress_bitfield_range}, \
    {"regress_narrow_minmax", ref_regress_narrow_minmax}, \
    {"regress_nvvm_fold", ref_regress_nvvm_fold}, \
    {"regress_narrow_div", ref_regress_narrow_div}, {"regress_bitcast_split", ref_regress_bitcast_split}, \
    {"regress_abs_rem", ref_regress_abs_rem}, {"regress_half_const_pair", ref_regress_half_const_pair}, \
    {"regress_byte_pair_view", ref_regress_byte_pair_view}, \
    {"regress_byte_pair_store", ref_regress_byte_pair_store}, \
    {"regress_low_word_cut", ref_regress_low_word_cut}, {"regress_mul_chain", ref_regress_mul_chain}, \
    {"regress_neg_minmax3", ref_regress_neg_minmax3}, {"regress_negzero_select", ref_regress_negzero_select}, \
    {"regress_byte_quad_view", ref_regress_byte_quad_view}, \
    {"regress_f64_minmax_low_word", ref_regress_f64_minmax_low_word}, \
    {"regress_nested_minmax", ref_regress_nested_minmax}, {"regress_select_of_max", ref_regress_select_of_max}, \
    {"regress_byte_to_bf16", ref_regress_byte_to_bf16}, {"regress_half_bits_op", ref_regress_half_bits_op}, \
    {"regress_sub_minmax", ref_regress_sub_minmax}, {"regress_negzero_bound", ref_regress_negzero_bound}, {"regress_min_then_zero", ref_regress_min_then_zero}, \
    {"regress_zero_select_of_min", ref_regress_zero_select_of_min}, \
    {"regress_word_view_merge", ref_regress_word_view_merge}, \
    {"regress_u64_u32_merge", ref_regress_u64_u32_merge}, \
    {"regress_param_byte_abs", ref_regress_param_byte_abs}, {"regress_ro_rw_merge", ref_regress_ro_rw_merge}, \
    {"regress_ro_rw_merge_arith", ref_regress_ro_rw_merge_arith}, \
    {"regress_const_fold_tie", ref_regress_const_fold_tie}, {"regress_bool_bytes", ref_regress_bool_bytes}, \
    {"regress_narrow_view_mix", ref_regress_narrow_view_mix},
