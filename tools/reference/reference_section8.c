/* Reference outputs of the LANGUAGE.md section 8 feature kernels
 * (kernels/features/shared.kf, packed.kf, bits.kf), included by
 * reference.c after reference_features.c (whose helpers it uses). Each
 * function restates the contract in plain C, with its own code for every
 * rule it checks:
 *  - f16/bf16 + - * are computed in double and rounded once (rf16/rbf16):
 *    f16 sums and all products are exact in double, and a bf16 sum rounded
 *    to double first rounds the same (53 >= 2 * 8 + 2 bits);
 *  - fma is rounded once from the exact a*b + c, by integer arithmetic on
 *    the significands (fma_once), not through a double;
 *  - min/max: a NaN gives the other operand, two NaNs a NaN, -0 < +0;
 *  - dp4a, bfe, bfi, prmt as the PTX ISA defines them, written with masks
 *    and byte arrays rather than the ISA's bit loops;
 *  - rcp is 1/x correctly rounded with subnormal inputs and results flushed
 *    to zero (the cases allow the GPU's 1 ulp). */

/* ---- f16 / bf16 ------------------------------------------------------------- */

/* Bits of a half value, every NaN the canonical 0x7FFF. */
static uint16_t half_bits(bool bf, double v)
{
    if (isnan(v)) return 0x7fff;
    return bf ? bf16_bits(v) : kf_ref_f16_bits(v);
}

static double half_value(bool bf, uint16_t h) { return bf ? bf16_value(h) : kf_ref_f16_value(h); }
static double rhalf(bool bf, double x) { return bf ? rbf16(x) : kf_ref_rf16(x); }

static int bit_length(unsigned __int128 m)
{
    int n = 0;
    while (m) n++, m >>= 1;
    return n;
}

/* mag * 2^e (mag > 0) rounded to p bits, minimum normal exponent emin,
 * largest exponent emax, to nearest even; the sign applied after. */
static double round_scaled(bool neg, unsigned __int128 mag, int e, int p, int emin, int emax)
{
    int top = bit_length(mag) - 1 + e;          /* value in [2^top, 2^(top+1)) */
    int q = (top < emin ? emin : top) - p + 1;  /* exponent of the last kept bit */
    int shift = q - e;
    unsigned __int128 r = mag;
    if (shift > 126) {
        r = 0;                                  /* below half the smallest step */
    } else if (shift > 0) {
        unsigned __int128 rem = mag & (((unsigned __int128)1 << shift) - 1), half = (unsigned __int128)1 << (shift - 1);
        r = mag >> shift;
        if (rem > half || (rem == half && (r & 1))) r++;
    } else {
        q = e;
    }
    double v = ldexp((double)r, q);
    if (v > ldexp(2.0 - ldexp(1.0, 1 - p), emax)) v = INFINITY;
    return neg ? -v : v;
}

/* a*b + c (doubles holding f16 or bf16 values) rounded once to p bits. The
 * significands are integers (24 bits hold either format); the product's and
 * c's are aligned in a window of about 120 bits below the larger; what the
 * smaller loses below the window becomes a sticky half unit, which never
 * changes the rounding of a value so far above it. */
static double fma_once(double a, double b, double c, int p, int emin, int emax)
{
    if (!isfinite(a) || !isfinite(b) || !isfinite(c) || a == 0 || b == 0 || c == 0)
        return rhalf(p == 8, fma(a, b, c));      /* specials, a zero term: fma is exact in double */
    int ea, eb, ec;
    int64_t ma = (int64_t)ldexp(frexp(a, &ea), 24), mb = (int64_t)ldexp(frexp(b, &eb), 24);
    int64_t mc = (int64_t)ldexp(frexp(c, &ec), 24);
    __int128 mp = (__int128)ma * mb;
    int e_p = ea + eb - 48, e_c = ec - 24;
    unsigned __int128 ap = mp < 0 ? -(unsigned __int128)mp : (unsigned __int128)mp;
    unsigned __int128 ac = mc < 0 ? (unsigned __int128)-mc : (unsigned __int128)mc;
    int top = e_p + bit_length(ap) > e_c + bit_length(ac) ? e_p + bit_length(ap) : e_c + bit_length(ac);
    int E = top - 120;                           /* exponent of the window's last bit */
    __int128 sum = 0;
    const unsigned __int128 mags[2] = {ap, ac};
    const int exps[2] = {e_p, e_c}, neg[2] = {mp < 0, mc < 0};
    for (int t = 0; t < 2; t++) {   /* only the smaller term can be shifted down */
        unsigned __int128 m = mags[t];
        int d = exps[t] - E;
        bool sticky = false;
        if (d >= 0) m <<= d;
        else if (-d > 126) sticky = m != 0, m = 0;
        else sticky = (m & (((unsigned __int128)1 << -d) - 1)) != 0, m >>= -d;
        __int128 v = (__int128)(m << 1) + sticky;   /* units of 2^(E-1); +1: strictly inside the lost part */
        sum += neg[t] ? -v : v;
    }
    if (sum == 0) return 0.0;
    return round_scaled(sum < 0, sum < 0 ? -(unsigned __int128)sum : (unsigned __int128)sum, E - 1, p, emin, emax);
}

static double half_fma(bool bf, double a, double b, double c)
{
    return bf ? fma_once(a, b, c, 8, -126, 127) : fma_once(a, b, c, 11, -14, 15);
}

static double ref_min(double a, double b)
{
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0 && b == 0) return signbit(a) ? a : b;
    return a < b ? a : b;
}

static double ref_max(double a, double b)
{
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0 && b == 0) return signbit(a) ? b : a;
    return a > b ? a : b;
}

/* ---- packed.kf ---------------------------------------------------------------- */

/* The 11 results of packed_f16 / packed_bf16 for one lane. */
static void packed_lane(bool bf, uint16_t ha, uint16_t hb, uint16_t hc, uint16_t out[11])
{
    double a = half_value(bf, ha), b = half_value(bf, hb), c = half_value(bf, hc);
    double z = half_value(bf, ha & 0x8000), mz = half_value(bf, (ha & 0x8000) ^ 0x8000);
    double lo = ref_min(a, b), hi = ref_max(a, b);
    double v[11] = {
        rhalf(bf, a + b), rhalf(bf, a - b), rhalf(bf, a * b), half_fma(bf, a, b, c),
        rhalf(bf, rhalf(bf, a * b) + c), lo, hi, fabs(a), ref_min(z, mz), ref_max(mz, z),
        ref_min(ref_max(c, lo), hi),
    };
    for (int k = 0; k < 11; k++) out[k] = half_bits(bf, v[k]);
    out[7] = ha & 0x7fff;   /* abs: the sign bit cleared, a NaN's payload kept (stored uncanonicalised) */
}

static void ref_packed(ref_ctx *r, bool bf)
{
    size_t n = (size_t)in_num(r, "n"), nw, no;
    uint32_t *w = in_buf(r, "w", KF_S_U32, 1, &nw);
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    for (size_t i = 0; i < n && 3 * i + 2 < nw && 11 * i + 10 < no; i++) {
        uint16_t lo[11], hi[11];
        packed_lane(bf, w[3 * i] & 0xffff, w[3 * i + 1] & 0xffff, w[3 * i + 2] & 0xffff, lo);
        packed_lane(bf, w[3 * i] >> 16, w[3 * i + 1] >> 16, w[3 * i + 2] >> 16, hi);
        for (int k = 0; k < 11; k++) o[11 * i + k] = lo[k] | (uint32_t)hi[k] << 16;
    }
    out_free(r, "o", KF_S_U32, o, no);
    free(w);
}

static void ref_packed_f16(ref_ctx *r) { ref_packed(r, false); }
static void ref_packed_bf16(ref_ctx *r) { ref_packed(r, true); }

static void x8_lanes(bool bf, const uint16_t *a, const uint16_t *b, uint16_t *o0, uint16_t *o1)
{
    for (int l = 0; l < 8; l++) {
        double x = half_value(bf, a[l]), y = half_value(bf, b[l]);
        double t = rhalf(bf, rhalf(bf, x * y) - x);
        double p = half_fma(bf, x, y, t);
        o0[l] = half_bits(bf, ref_max(fabs(p), rhalf(bf, x + y)));
        o1[l] = half_bits(bf, rhalf(bf, ref_min(p, y) * 1.5));
    }
}

static void ref_packed_x8(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nh, ng, noh, nog;
    uint16_t *h = in_buf(r, "h", KF_S_F16, 8, &nh), *g = in_buf(r, "g", KF_S_BF16, 8, &ng);
    uint16_t *oh = in_buf(r, "oh", KF_S_F16, 8, &noh), *og = in_buf(r, "og", KF_S_BF16, 8, &nog);
    for (size_t i = 0; i < n && 2 * i + 1 < nh && 2 * i + 1 < ng && 2 * i + 1 < noh && 2 * i + 1 < nog; i++) {
        x8_lanes(false, h + 16 * i, h + 16 * i + 8, oh + 16 * i, oh + 16 * i + 8);
        x8_lanes(true, g + 16 * i, g + 16 * i + 8, og + 16 * i, og + 16 * i + 8);
    }
    out_free(r, "oh", KF_S_F16, oh, noh * 8);
    out_free(r, "og", KF_S_BF16, og, nog * 8);
    free(h);
    free(g);
}

static void ref_fma_ties(ref_ctx *r)
{
    uint32_t w[3] = {(uint32_t)in_num(r, "a"), (uint32_t)in_num(r, "b"), (uint32_t)in_num(r, "c")};
    size_t no;
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    for (int bf = 0; bf < 2 && bf < (int)no; bf++) {
        uint32_t bits = 0;
        for (int l = 0; l < 2; l++) {
            double v[3];
            for (int k = 0; k < 3; k++) v[k] = half_value(bf, (uint16_t)(w[k] >> (16 * l)));
            bits |= (uint32_t)half_bits(bf, half_fma(bf, v[0], v[1], v[2])) << (16 * l);
        }
        o[bf] = bits;
    }
    out_free(r, "o", KF_S_U32, o, no);
}

/* ---- bits.kf ------------------------------------------------------------------- */

static int32_t ref_dot4(uint32_t a, bool sa, uint32_t b, bool sb, int32_t c)
{
    int64_t s = c;
    for (int k = 0; k < 4; k++) {
        int x = (a >> (8 * k)) & 0xff, y = (b >> (8 * k)) & 0xff;
        if (sa && x > 127) x -= 256;
        if (sb && y > 127) y -= 256;
        s += (int64_t)x * y;
    }
    return (int32_t)(uint32_t)(uint64_t)s;
}

static void ref_dots(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), na, nb, nc, no;
    uint32_t *a = in_buf(r, "a", KF_S_U32, 1, &na), *b = in_buf(r, "b", KF_S_U32, 1, &nb);
    int32_t *c = in_buf(r, "c", KF_S_I32, 1, &nc), *o = in_buf(r, "o", KF_S_I32, 1, &no);
    for (size_t i = 0; i < n && i < na && i < nb && i < nc && 4 * i + 3 < no; i++) {
        o[4 * i] = ref_dot4(a[i], true, b[i], true, c[i]);
        o[4 * i + 1] = ref_dot4(a[i], true, b[i], false, c[i]);
        o[4 * i + 2] = ref_dot4(a[i], false, b[i], true, c[i]);
        o[4 * i + 3] = ref_dot4(a[i], false, b[i], false, 7);
    }
    out_free(r, "o", KF_S_I32, o, no);
    free(a);
    free(b);
    free(c);
}

static void ref_bytes(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nw, no, now;
    uint32_t *w = in_buf(r, "w", KF_S_U32, 1, &nw), *ow = in_buf(r, "ow", KF_S_U32, 1, &now);
    int8_t *o = in_buf(r, "o", KF_S_I8, 1, &no);
    for (size_t i = 0; i < n && i < nw && i < now && 4 * i + 3 < no; i++) {
        uint32_t word = 0;
        for (int k = 0; k < 4; k++) {
            uint8_t byte = (uint8_t)(w[i] >> (8 * k));
            o[4 * i + k] = (int8_t)byte;
            word |= (uint32_t)(uint8_t)(byte + 1) << (8 * k);
        }
        ow[i] = word;
    }
    out_free(r, "o", KF_S_I8, o, no);
    out_free(r, "ow", KF_S_U32, ow, now);
    free(w);
}

/* bfe: the len-bit field at pos (the part inside the w-bit value), then
 * filled with its sign (signed: the field's top bit, or bit w-1 of x when
 * the field runs past it) or zeros; len 0 gives 0. */
static uint64_t ref_bfe(uint64_t x, int w, bool sg, unsigned pos, unsigned len)
{
    uint64_t wmask = w == 64 ? ~0ull : (1ull << w) - 1;
    x &= wmask;
    if (len == 0) return 0;
    unsigned inside = pos >= (unsigned)w ? 0 : (unsigned)w - pos < len ? (unsigned)w - pos : len;
    uint64_t field = inside ? (x >> pos) & (inside == 64 ? ~0ull : (1ull << inside) - 1) : 0;
    unsigned topbit = pos + len - 1 < (unsigned)w - 1 ? pos + len - 1 : (unsigned)w - 1;
    bool fill = sg && ((x >> topbit) & 1);
    if (fill) field |= ~(inside == 64 ? ~0ull : (1ull << inside) - 1);
    return field & wmask;
}

/* bfi: x with the bits of the len-bit field at pos that lie inside it
 * replaced by the low bits of f. */
static uint64_t ref_bfi(uint64_t f, uint64_t x, int w, unsigned pos, unsigned len)
{
    uint64_t wmask = w == 64 ? ~0ull : (1ull << w) - 1;
    if (pos >= (unsigned)w || len == 0) return x & wmask;
    unsigned n = (unsigned)w - pos < len ? (unsigned)w - pos : len;
    uint64_t mask = (n == 64 ? ~0ull : (1ull << n) - 1) << pos;
    return ((x & ~mask) | ((f << pos) & mask)) & wmask;
}

/* regress.kf regress_bitfield_range (registered with the regression
 * references): fields reaching past the value, folded wrongly by ptxas 13. */
static void ref_regress_bitfield_range(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, ny, no, nq;
    unsigned p = (unsigned)in_num(r, "p"), l = (unsigned)in_num(r, "l");
    uint32_t *x = in_buf(r, "x", KF_S_I32, 1, &nx);
    uint64_t *y = in_buf(r, "y", KF_S_I64, 1, &ny);
    uint32_t *o = in_buf(r, "o", KF_S_I32, 1, &no);
    uint64_t *q = in_buf(r, "q", KF_S_I64, 1, &nq);
    const uint64_t f = 0x5a5a5a5a5a5a5a5aull;
    for (size_t i = 0; i < n && i < nx && i < ny && 8 * i + 7 < no && 4 * i + 3 < nq; i++) {
        uint32_t a = x[i];
        uint64_t c = y[i];
        o[8 * i] = (uint32_t)ref_bfe(a, 32, true, 33, 101);
        o[8 * i + 1] = (uint32_t)ref_bfe(a, 32, false, 33, 101);
        o[8 * i + 2] = (uint32_t)ref_bfe(a, 32, true, 3, 40);
        o[8 * i + 3] = (uint32_t)ref_bfi(a, 0x5a5a5a5au, 32, 3, 40);
        o[8 * i + 4] = (uint32_t)ref_bfi(a, 0x5a5a5a5au, 32, 1, 33);
        o[8 * i + 5] = (uint32_t)ref_bfe(a, 32, true, 65, 255);
        o[8 * i + 6] = (uint32_t)ref_bfe(a, 32, true, p, l);
        o[8 * i + 7] = (uint32_t)ref_bfi(a, 0x5a5a5a5au, 32, p - 31, l - 69);
        q[4 * i] = ref_bfe(c, 64, true, 65, 63);
        q[4 * i + 1] = ref_bfe(c, 64, false, 70, 200);
        q[4 * i + 2] = ref_bfi(c, f, 64, 3, 100);
        q[4 * i + 3] = ref_bfi(c, f, 64, 1, 65);
    }
    out_free(r, "o", KF_S_I32, o, no);
    out_free(r, "q", KF_S_I64, q, nq);
    free(x);
    free(y);
}

static void ref_fields(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), np, n32, n64, no32, no64;
    uint32_t *pl = in_buf(r, "pl", KF_S_U32, 1, &np), *x32 = in_buf(r, "x32", KF_S_U32, 1, &n32);
    uint64_t *x64 = in_buf(r, "x64", KF_S_U64, 1, &n64);
    uint32_t *o32 = in_buf(r, "o32", KF_S_U32, 1, &no32);
    uint64_t *o64 = in_buf(r, "o64", KF_S_U64, 1, &no64);
    for (size_t i = 0; i < n && i < np && 2 * i + 1 < n32 && 2 * i + 1 < n64 && 4 * i + 3 < no32 && 4 * i + 3 < no64; i++) {
        unsigned pos = (pl[i] & 0xff) % 80, len = ((pl[i] >> 8) & 0xff) % 80;
        uint32_t a = x32[2 * i], b = x32[2 * i + 1];
        o32[4 * i] = (uint32_t)ref_bfe(a, 32, false, pos, len);
        o32[4 * i + 1] = (uint32_t)ref_bfe(a, 32, true, pos, len);
        o32[4 * i + 2] = (uint32_t)ref_bfi(a, b, 32, pos, len);
        o32[4 * i + 3] = o32[4 * i + 2];   /* bfi has no signedness */
        uint64_t c = x64[2 * i], d = x64[2 * i + 1];
        o64[4 * i] = ref_bfe(c, 64, false, pos, len);
        o64[4 * i + 1] = ref_bfe(c, 64, true, pos, len);
        o64[4 * i + 2] = ref_bfi(c, d, 64, pos, len);
        o64[4 * i + 3] = o64[4 * i + 2];
    }
    out_free(r, "o32", KF_S_U32, o32, no32);
    out_free(r, "o64", KF_S_U64, o64, no64);
    free(pl);
    free(x32);
    free(x64);
}

/* prmt: bytes b7..b4 of b above b3..b0 of a; result byte i is the byte the
 * low 3 bits of selector nibble i name, or 0xff/0 (its sign) when the
 * nibble's top bit is set. */
static uint32_t ref_prmt(uint32_t a, uint32_t b, uint32_t s)
{
    uint8_t src[8];
    for (int k = 0; k < 4; k++) src[k] = (uint8_t)(a >> (8 * k)), src[k + 4] = (uint8_t)(b >> (8 * k));
    uint32_t d = 0;
    for (int i = 0; i < 4; i++) {
        unsigned nib = (s >> (4 * i)) & 0xf;
        uint8_t byte = src[nib & 7];
        if (nib & 8) byte = (byte & 0x80) ? 0xff : 0x00;
        d |= (uint32_t)byte << (8 * i);
    }
    return d;
}

static void ref_permute(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), na, nb, ns, no;
    uint32_t *a = in_buf(r, "a", KF_S_U32, 1, &na), *b = in_buf(r, "b", KF_S_U32, 1, &nb);
    uint32_t *s = in_buf(r, "s", KF_S_U32, 1, &ns), *o = in_buf(r, "o", KF_S_U32, 1, &no);
    for (size_t i = 0; i < n && i < na && i < nb && i < ns && 3 * i + 2 < no; i++) {
        o[3 * i] = ref_prmt(a[i], b[i], s[i]);
        o[3 * i + 1] = ref_prmt(a[i], b[i], 0x3210);
        o[3 * i + 2] = ref_prmt(a[i], 0, 0x9991);
    }
    out_free(r, "o", KF_S_U32, o, no);
    free(a);
    free(b);
    free(s);
}

/* rcp.approx.ftz's contract: 1/x (one rounding; through double, which
 * rounds a quotient the same), subnormal inputs and results flushed to 0. */
static float ref_rcp(float x)
{
    if (x != 0 && fabsf(x) < 0x1p-126f) x = copysignf(0.0f, x);
    float q = (float)(1.0 / (double)x);
    if (q != 0 && fabsf(q) < 0x1p-126f) q = copysignf(0.0f, q);
    return q;
}

static void ref_recip(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nb, nx, ny, nr, nd, n4;
    uint32_t *xb = in_buf(r, "xb", KF_S_U32, 1, &nb);
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx), *y = in_buf(r, "y", KF_S_F32, 1, &ny);
    float *orcp = in_buf(r, "orcp", KF_S_F32, 1, &nr), *odiv = in_buf(r, "odiv", KF_S_F32, 1, &nd);
    float *o4 = in_buf(r, "o4", KF_S_F32, 4, &n4);
    for (size_t i = 0; i < n && i < nb && i < nx && i < ny && i < nr && i < nd && i < n4; i++) {
        float f;
        memcpy(&f, &xb[i], 4);
        orcp[i] = ref_rcp(f);
        float num = x[i] * 100.0f, inv = ref_rcp(y[i]);
        odiv[i] = num * inv;
        float v[4] = {x[i], y[i], x[i] * 1e30f, y[i] * 1e-30f};
        for (int l = 0; l < 4; l++) o4[4 * i + l] = ref_rcp(v[l]);
    }
    out_free(r, "orcp", KF_S_F32, orcp, nr);
    out_free(r, "odiv", KF_S_F32, odiv, nd);
    out_free(r, "o4", KF_S_F32, o4, n4 * 4);
    free(xb);
    free(x);
    free(y);
}

/* ---- shared.kf ----------------------------------------------------------------- */

static void ref_row_reduce(ref_ctx *r)
{
    size_t rows = (size_t)in_num(r, "rows"), cols = (size_t)in_num(r, "cols"), nx, ns, nm;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx);
    float *sums = in_buf(r, "sums", KF_S_F32, 1, &ns), *maxs = in_buf(r, "maxs", KF_S_F32, 1, &nm);
    for (size_t row = 0; row < rows && (row + 1) * cols <= nx && row < ns && 2 * row + 1 < nm; row++) {
        double s = 0, m = -INFINITY, nmx = -INFINITY;
        for (size_t c = 0; c < cols; c++) {
            double v = (double)(x[row * cols + c] % 64) * 0.25;   /* sums stay exact */
            s += v;
            m = ref_max(m, v);
            nmx = ref_max(nmx, -v);
        }
        sums[row] = (float)s;
        maxs[2 * row] = (float)m;
        maxs[2 * row + 1] = (float)nmx;
    }
    out_free(r, "sums", KF_S_F32, sums, ns);
    out_free(r, "maxs", KF_S_F32, maxs, nm);
    free(x);
}

static void ref_views(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, n16, n32, n8;
    uint16_t *x = in_buf(r, "x", KF_S_F16, 8, &nx), *o16 = in_buf(r, "o16", KF_S_F16, 1, &n16);
    uint32_t *o32 = in_buf(r, "o32", KF_S_U32, 1, &n32);
    uint8_t *o8 = in_buf(r, "o8", KF_S_U8, 1, &n8);
    const uint8_t *tile = (const uint8_t *)x;   /* the shared bytes: x's, little-endian f16 lanes */
    for (size_t i = 0; i < n && n <= 8 * nx && i < n16 && i < n8; i++) {
        o16[i] = x[n - 1 - i];
        o8[i] = tile[2 * i + 1];
    }
    for (size_t i = 0; i < n / 2 && i < n32; i++)
        o32[i] = ((uint32_t)x[2 * i] | (uint32_t)x[2 * i + 1] << 16) ^ 0x80008000u;
    out_free(r, "o16", KF_S_F16, o16, n16);
    out_free(r, "o32", KF_S_U32, o32, n32);
    out_free(r, "o8", KF_S_U8, o8, n8);
    free(x);
}

static void ref_both(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), no;
    uint32_t *o = in_buf(r, "o", KF_S_U32, 1, &no);
    uint32_t *dyn = calloc(n + 1, sizeof *dyn);
    for (size_t i = 0; i < n; i++) {
        if (i < n / 2) dyn[i] = 7 + (uint32_t)i;
        else {
            float f = (float)i * 0.5f;
            memcpy(&dyn[i], &f, 4);
        }
    }
    for (size_t i = 0; i < n && i < no; i++) o[i] = dyn[n - 1 - i] + 100 + (uint32_t)(i % 3);
    out_free(r, "o", KF_S_U32, o, no);
    free(dyn);
}

static void ref_same_name(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    int16_t *x = in_buf(r, "x", KF_S_I16, 1, &nx);
    int16_t *o = in_buf(r, "o", KF_S_I16, 1, &no);
    for (size_t i = 0; i < n && i < no; i++) o[i] = (int16_t)(uint16_t)((uint32_t)(uint16_t)x[n - 1 - i] * 3u);
    out_free(r, "o", KF_S_I16, o, no);
    free(x);
}

#define KF_REFERENCE_SECTION8 \
    {"packed_f16", ref_packed_f16}, {"fma_ties", ref_fma_ties}, {"packed_bf16", ref_packed_bf16}, {"packed_x8", ref_packed_x8}, \
    {"dots", ref_dots}, {"bytes", ref_bytes}, {"fields", ref_fields}, {"permute", ref_permute}, \
    {"recip", ref_recip}, {"row_reduce", ref_row_reduce}, {"views", ref_views}, {"both", ref_both}, {"same_name", ref_same_name},
