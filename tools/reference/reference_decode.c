/* Reference outputs of the decode-step kernels (kernels/gemv.kf, tc_gemv.kf,
 * q4k.kf, sdpa.kf, rope.kf, silu_mul.kf, add_rmsnorm.kf, embed.kf, argmax.kf),
 * included by reference.c. Each function states in plain C what the kernel
 * must compute, in double precision with one final rounding to the output
 * type, from the definitions (the Q4_K layout as llama.cpp documents it,
 * softmax attention, rotary angles pos·theta^(-2i/d)), never from the
 * kernels' algorithms. Where the kernel's result is defined by an f32
 * computation (q8_quantize's scale d = amax / 127 and q = round(x / d), as
 * llama.cpp's quantize_q8_1) the same f32 operations are done here.
 *
 * Made inputs. Some inputs cannot come from the shared generators: Q4_K
 * weights (random bits would make d and dmin NaN or huge), token ids below
 * the vocabulary, sequence lengths, positions near 1M, logits with ties,
 * 8-bit activation scales of the size q8_quantize gives (make_q8_ds). A
 * case names such an input `arg NAME=@inputs/<case>.<NAME>.npy`; the
 * reference makes it from a splitmix64 stream seeded with the FNV-1a hash of
 * the file's base name, writes it (and with --check compares it) like an
 * expected output, and computes the outputs from it. */

/* ---- made inputs ------------------------------------------------------------- */

typedef void (*ref_maker)(void *dst, size_t count, uint64_t *rng, const void *ctx);

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* Writes (or, with --check, compares) a made input file. */
static void made_write(ref_ctx *r, const char *path, kf_scalar s, const void *data, size_t count)
{
    kf_buf b = {0};
    kf_error err = {0};
    kf_npy_encode(&b, s, data, count, &err);
    char *old = NULL;
    size_t len = 0;
    if (r->check) {
        if (kf_read_file(path, &old, &len, &err) != KF_OK || len != b.len || memcmp(old, b.data, len)) {
            fprintf(stderr, "MISMATCH %s: input %s differs from the reference\n", r->c->name, path);
            r->mismatched++;
        }
    } else if (kf_npy_write(path, s, data, count, &err) != KF_OK) {
        fprintf(stderr, "%s\n", err.msg);
        r->errors++;
    } else {
        r->written++;
    }
    free(old);
    kf_buf_free(&b);
}

/* Input NAME of `count` elements of scalar s × lanes: made by `make` when the
 * case gives it as @FILE, from its generator otherwise. */
static void *in_made(ref_ctx *r, const char *name, kf_scalar s, unsigned lanes, size_t count, ref_maker make,
                     const void *ctx, size_t *elems)
{
    const char *spec = kf_case_arg(r->c, name);
    if (!spec || spec[0] != '@') return in_buf(r, name, s, lanes, elems);
    void *p = calloc(count * lanes + 8, kf_scalar_bytes[s]);
    const char *base = strrchr(spec + 1, '/');
    uint64_t rng = fnv1a(base ? base + 1 : spec + 1);
    make(p, count * lanes, &rng, ctx);
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", r->c->dir, spec + 1);
    made_write(r, path, s, p, count * lanes);
    *elems = count;
    return p;
}

/* u32 values uniform in [lo, hi] (ctx: two u32). */
static void make_u32_range(void *dst, size_t count, uint64_t *rng, const void *ctx)
{
    const uint32_t *lh = ctx;
    for (size_t i = 0; i < count; i++)
        ((uint32_t *)dst)[i] = lh[0] + (uint32_t)(kf_fill_splitmix64(rng) % ((uint64_t)lh[1] - lh[0] + 1));
}

/* Sequence lengths: the first is hi (a full cache), the others uniform in
 * [lo, hi] (ctx: two u32). */
static void make_lens(void *dst, size_t count, uint64_t *rng, const void *ctx)
{
    make_u32_range(dst, count, rng, ctx);
    if (count) ((uint32_t *)dst)[0] = ((const uint32_t *)ctx)[1];
}

/* As make_lens, and the last length 0 (a sequence with no positions). */
static void make_lens_last0(void *dst, size_t count, uint64_t *rng, const void *ctx)
{
    make_lens(dst, count, rng, ctx);
    if (count > 1) ((uint32_t *)dst)[count - 1] = 0;
}

/* Q4_K rows: per 144-byte block d, dmin positive f16 in [2^-10, 2^-4), all
 * other bytes random (every 6-bit scale and min, every quant is valid). */
static void make_q4k(void *dst, size_t count, uint64_t *rng, const void *ctx)
{
    (void)ctx;
    uint8_t *b = dst;
    for (size_t i = 0; i < count; i++) b[i] = (uint8_t)kf_fill_splitmix64(rng);
    for (size_t blk = 0; blk + 144 <= count; blk += 144)
        for (int h = 0; h < 2; h++) {
            uint64_t v = kf_fill_splitmix64(rng);
            uint16_t bits = (uint16_t)(((5 + v % 6) << 10) | ((v >> 8) & 1023));
            b[blk + 2 * h] = (uint8_t)bits;
            b[blk + 2 * h + 1] = (uint8_t)(bits >> 8);
        }
}

/* xds of 8-bit activations as q8_quantize makes them from |x| < 1 (f16 pairs):
 * d = amax / 127 in [2^-10, 2^-7), s (the block's sum of x) in [-8, 8). */
static void make_q8_ds(void *dst, size_t count, uint64_t *rng, const void *ctx)
{
    (void)ctx;
    uint16_t *h = dst;
    for (size_t i = 0; i + 1 < count; i += 2) {
        uint64_t v = kf_fill_splitmix64(rng);
        h[i] = kf_ref_f16_bits(ldexp(1.0 + (double)(v & 1023) / 1024, -10 + (int)((v >> 10) % 3)));
        h[i + 1] = kf_ref_f16_bits(((double)(v >> 32) / 4294967296.0 - 0.5) * 16);
    }
}

/* f32 logits with many ties: values k/4 for k uniform in [-8, 8]. */
static void make_ties(void *dst, size_t count, uint64_t *rng, const void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < count; i++) ((float *)dst)[i] = (float)((int)(kf_fill_splitmix64(rng) % 17) - 8) / 4.0f;
}

/* ---- helpers ------------------------------------------------------------------ */

/* Element i of a buffer of 16-bit floats (bf: bf16) or f32. */
static double elem(const void *p, size_t i, int kind)
{
    if (kind == 2) return ((const float *)p)[i];
    return kind ? bf16_value(((const uint16_t *)p)[i]) : kf_ref_f16_value(((const uint16_t *)p)[i]);
}

/* Stores v in element i: f32 when f32 is set, f16 otherwise. */
static void put(void *p, size_t i, double v, bool f32)
{
    if (f32) ((float *)p)[i] = (float)v;
    else ((uint16_t *)p)[i] = kf_ref_f16_bits(v);
}

static bool name_has(ref_ctx *r, const char *part) { return strstr(r->c->kernel, part) != NULL; }

/* ---- gemv.kf --------------------------------------------------------------------- */

/* gemv_[batch_]<W>_<x>_<y>[_acc]: Y[b, i] = sum_k W[i, k]·X[b, k] (+ Y[b, i]);
 * gemv_f16_f16_f16_dyn's ticket counter ctr is back at 0. */
static void ref_gemv(ref_ctx *r)
{
    const char *t = r->c->kernel + strlen(name_has(r, "batch") ? "gemv_batch_" : "gemv_");
    int wk = !strncmp(t, "bf16", 4);
    t += wk ? 5 : 4;
    bool xf = !strncmp(t, "f32", 3), yf = !strncmp(t + 4, "f32", 3), acc = name_has(r, "_acc");
    size_t m = (size_t)in_num(r, "m"), k = (size_t)in_num(r, "k"), nw, nx, ny;
    size_t nb = name_has(r, "batch") ? (size_t)in_num(r, "nb") : 1;
    void *w = in_buf(r, "w", wk ? KF_S_BF16 : KF_S_F16, 1, &nw);
    void *x = in_buf(r, "x", xf ? KF_S_F32 : KF_S_F16, 1, &nx);
    void *y = in_buf(r, "y", yf ? KF_S_F32 : KF_S_F16, 1, &ny);
    for (size_t b = 0; b < nb && (b + 1) * k <= nx && (b + 1) * m <= ny; b++)
        for (size_t i = 0; i < m && (i + 1) * k <= nw; i++) {
            double s = acc ? elem(y, b * m + i, yf ? 2 : 0) : 0;
            for (size_t c = 0; c < k; c++) s += elem(w, i * k + c, wk) * elem(x, b * k + c, xf ? 2 : 0);
            put(y, b * m + i, s, yf);
        }
    out_buf(r, "y", yf ? KF_S_F32 : KF_S_F16, y, ny);
    if (name_has(r, "_dyn")) {
        size_t nc;
        uint32_t *ctr = in_buf(r, "ctr", KF_S_U32, 1, &nc);
        for (size_t i = 0; i < nc; i++) ctr[i] = 0;
        out_buf(r, "ctr", KF_S_U32, ctr, nc);
        free(ctr);
    }
    free(w);
    free(x);
    free(y);
}

/* y (+)= W·x over the f16 x given (k values), W f16 [m, k]: y f32 (yf) or f16,
 * one rounding; acc adds y's own value first. */
static void gemv_over(ref_ctx *r, const uint16_t *x, size_t m, size_t k, bool yf, bool acc)
{
    size_t nw, ny;
    uint16_t *w = in_buf(r, "w", KF_S_F16, 1, &nw);
    void *y = in_buf(r, "y", yf ? KF_S_F32 : KF_S_F16, 1, &ny);
    for (size_t i = 0; i < m && i < ny && (i + 1) * k <= nw; i++) {
        double s = acc ? elem(y, i, yf ? 2 : 0) : 0;
        for (size_t c = 0; c < k; c++) s += kf_ref_f16_value(w[i * k + c]) * kf_ref_f16_value(x[c]);
        put(y, i, s, yf);
    }
    out_buf(r, "y", yf ? KF_S_F32 : KF_S_F16, y, ny);
    free(w);
    free(y);
}

static void q4k_over(ref_ctx *r, const uint16_t *x, size_t m, size_t k, bool yf, bool acc);

/* The fused forms' GEMV over their made x: f16 W (gemv_*), or Q4_K W with x
 * quantized to q8_1 blocks first (q4k_q8_gemv_*). */
static void fused_over(ref_ctx *r, const uint16_t *x, size_t m, size_t k)
{
    bool yf = name_has(r, "_f32"), acc = name_has(r, "_acc");
    if (name_has(r, "q4k")) q4k_over(r, x, m, k, yf, acc);
    else gemv_over(r, x, m, k, yf, acc);
}

/* gemv_rms_f16_f16_<y>, q4k_q8_gemv_rms_<y>: y = W·x with x the RMS-normed
 * h, stored as f16 as the unfused step stores it: x = f16(h·(mean(h^2) +
 * eps)^-1/2·nw). */
static uint16_t *rms_x(ref_ctx *r, size_t k)
{
    size_t nh, nn;
    double eps = (float)in_num(r, "eps"), ss = 0;
    uint16_t *h = in_buf(r, "h", KF_S_F16, 1, &nh), *nw = in_buf(r, "nw", KF_S_F16, 1, &nn);
    uint16_t *x = calloc(k + 1, 2);
    for (size_t c = 0; c < k && c < nh; c++) ss += kf_ref_f16_value(h[c]) * kf_ref_f16_value(h[c]);
    double scale = 1.0 / sqrt(ss / (double)k + eps);
    for (size_t c = 0; c < k && c < nh && c < nn; c++)
        x[c] = kf_ref_f16_bits(kf_ref_f16_value(h[c]) * scale * kf_ref_f16_value(nw[c]));
    free(h);
    free(nw);
    return x;
}

static void ref_gemv_rms(ref_ctx *r)
{
    size_t m = (size_t)in_num(r, "m"), k = (size_t)in_num(r, "k");
    uint16_t *x = rms_x(r, k);
    fused_over(r, x, m, k);
    free(x);
}

static double *q4k_rows(ref_ctx *r, const uint16_t *x, size_t m, size_t k);

/* q4k_q8_gemv_rms_glu_q8: the gate/up GEMV over the RMS-normed h (as
 * q4k_q8_gemv_rms_f16), g = f16(row i), u = f16(row m/2 + i), then the
 * down projection's input: h_i = f16(silu(g)·u) as 8-bit blocks of 32
 * (kf_ref_q8_block) in xo, xds. */
static void ref_gemv_rms_glu(ref_ctx *r)
{
    size_t m = (size_t)in_num(r, "m"), k = (size_t)in_num(r, "k"), n = m / 2, nq, nd;
    uint16_t *x = rms_x(r, k);
    double *y = q4k_rows(r, x, m, k);
    int8_t *xo = in_buf(r, "xo", KF_S_I8, 1, &nq);
    uint16_t *xds = in_buf(r, "xds", KF_S_F16, 2, &nd);
    for (size_t b = 0; y && b + 32 <= n && b + 32 <= nq && b / 32 < nd; b += 32) {
        float v[32];
        for (size_t i = 0; i < 32; i++) {
            double g = kf_ref_f16_value(kf_ref_f16_bits(y[b + i])), u = kf_ref_f16_value(kf_ref_f16_bits(y[n + b + i]));
            v[i] = (float)kf_ref_f16_value(kf_ref_f16_bits(g / (1.0 + exp(-g)) * u));
        }
        kf_ref_q8_block(v, 32, xo + b, xds + b / 16);
    }
    out_buf(r, "xo", KF_S_I8, xo, nq);
    out_buf(r, "xds", KF_S_F16, xds, nd * 2);
    free(x);
    free(y);
    free(xo);
    free(xds);
}

/* gemv_silu_f16_f16_f16_acc / _f32, q4k_q8_gemv_silu_f16_acc / _f32: y (+)=
 * W·x with x = f16(silu(g)·u), silu(g) = g / (1 + e^-g). */
static void ref_gemv_silu(ref_ctx *r)
{
    size_t m = (size_t)in_num(r, "m"), k = (size_t)in_num(r, "k"), ng, nu;
    uint16_t *g = in_buf(r, "g", KF_S_F16, 1, &ng), *u = in_buf(r, "u", KF_S_F16, 1, &nu);
    uint16_t *x = calloc(k + 1, 2);
    for (size_t c = 0; c < k && c < ng && c < nu; c++) {
        double gv = kf_ref_f16_value(g[c]);
        x[c] = kf_ref_f16_bits(gv / (1.0 + exp(-gv)) * kf_ref_f16_value(u[c]));
    }
    fused_over(r, x, m, k);
    free(g);
    free(u);
    free(x);
}

/* tc_gemv_f16 / _f16_f32 / _f16_acc / _bf16 (kernels/tc_gemv.kf): Y[b, i] =
 * sum_k W[i, k]·X[b, k] (+ Y[b, i] for _acc) for b < nb, exact in double, one
 * rounding to Y's type (f16, f32, or bf16 for the bf16 form, whose W and X
 * are bf16 too). */
static void ref_tc_gemv(ref_ctx *r)
{
    bool bf = name_has(r, "bf16"), yf = name_has(r, "_f32"), acc = name_has(r, "_acc");
    kf_scalar hs = bf ? KF_S_BF16 : KF_S_F16, ys = yf ? KF_S_F32 : hs;
    size_t m = (size_t)in_num(r, "m"), k = (size_t)in_num(r, "k"), nb = (size_t)in_num(r, "nb"), nw, nx, ny;
    void *w = in_buf(r, "w", hs, 1, &nw), *x = in_buf(r, "x", hs, 1, &nx), *y = in_buf(r, "y", ys, 1, &ny);
    for (size_t b = 0; b < nb && nw >= m * k && nx >= nb * k && ny >= nb * m; b++)
        for (size_t i = 0; i < m; i++) {
            size_t o = b * m + i;
            double s = acc ? elem(y, o, 0) : 0;
            for (size_t c = 0; c < k; c++) s += elem(w, i * k + c, bf) * elem(x, b * k + c, bf);
            if (yf) ((float *)y)[o] = (float)s;
            else ((uint16_t *)y)[o] = bf ? bf16_bits(s) : kf_ref_f16_bits(s);
        }
    out_buf(r, "y", ys, y, ny);
    free(w);
    free(x);
    free(y);
}

/* ---- q4k.kf ------------------------------------------------------------------------ */

static uint8_t *q4k_weights(ref_ctx *r, size_t m, size_t k, size_t *nw)
{
    return in_made(r, "w", KF_S_U8, 1, m * (k / 256) * 144, make_q4k, NULL, nw);
}

static void ref_q4k_gemv(ref_ctx *r)
{
    size_t m = (size_t)in_num(r, "m"), k = (size_t)in_num(r, "k"), nw, nx, ny;
    uint8_t *w = q4k_weights(r, m, k, &nw);
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx), *y = in_buf(r, "y", KF_S_F32, 1, &ny);
    double deq[256];
    for (size_t i = 0; i < m && i < ny && nx >= k && nw >= m * k / 256 * 144; i++) {
        double s = 0;
        for (size_t kb = 0; kb < k / 256; kb++) {
            kf_ref_q4k_dequant(w + (i * (k / 256) + kb) * 144, deq);
            for (int l = 0; l < 256; l++) s += deq[l] * x[kb * 256 + l];
        }
        y[i] = (float)s;
    }
    out_buf(r, "y", KF_S_F32, y, ny);
    free(w);
    free(x);
    free(y);
}

/* q8_quantize_f32 / _f16: per block of 32 (the last may be shorter) d = amax /
 * 127 and q = round(x / d) half away from zero, both in f32 as llama.cpp's
 * quantize_q8_1; xds = (d, sum of the block's x) as f16. */
static void ref_q8_quantize(ref_ctx *r)
{
    bool half = name_has(r, "f16");
    size_t n = (size_t)in_num(r, "n"), nx, nq, nd;
    void *x = in_buf(r, "x", half ? KF_S_F16 : KF_S_F32, 1, &nx);
    int8_t *xq = in_buf(r, "xq", KF_S_I8, 1, &nq);
    uint16_t *xds = in_buf(r, "xds", KF_S_F16, 2, &nd);
    for (size_t b0 = 0; b0 < n && b0 < nx && b0 / 32 < nd; b0 += 32) {
        float v[32];
        size_t len = n - b0 < 32 ? n - b0 : 32;
        for (size_t i = 0; i < len; i++) v[i] = (float)elem(x, b0 + i, half ? 0 : 2);
        int8_t q[32];
        kf_ref_q8_block(v, len, q, xds + b0 / 16);
        for (size_t i = 0; i < len && b0 + i < nq; i++) xq[b0 + i] = q[i];
    }
    out_buf(r, "xq", KF_S_I8, xq, nq);
    out_buf(r, "xds", KF_S_F16, xds, nd * 2);
    free(x);
    free(xq);
    free(xds);
}

/* q4k_q8_gemv_f32 / _f16 / _f16_acc, and the batched tensor-core forms
 * tc_gemv_q4k_f32 / _f16 / _f16_acc (kernels/tc_gemv.kf): nb rows of 8-bit X
 * (xq [nb, k], xds [nb, k/32]) give Y[b, i] = the row-i product with row b. */
static void ref_q4k_q8_gemv(ref_ctx *r)
{
    bool yf = name_has(r, "_f32"), acc = name_has(r, "_acc");
    size_t m = (size_t)in_num(r, "m"), k = (size_t)in_num(r, "k"), nw, nq, nd, ny;
    size_t nb = kf_case_arg(r->c, "nb") ? (size_t)in_num(r, "nb") : 1;
    uint8_t *w = q4k_weights(r, m, k, &nw);
    int8_t *xq = in_buf(r, "xq", KF_S_I8, 1, &nq);
    uint16_t *xds = in_made(r, "xds", KF_S_F16, 2, nb * k / 32, make_q8_ds, NULL, &nd);
    void *y = in_buf(r, "y", yf ? KF_S_F32 : KF_S_F16, 1, &ny);
    for (size_t b = 0; b < nb && nq >= nb * k && nd * 32 >= nb * k && ny >= nb * m; b++)
        for (size_t i = 0; i < m; i++) {
            double s = kf_ref_q4k_q8_row(w + i * (k / 256) * 144, k / 256, xq + b * k, xds + b * (k / 32) * 2);
            put(y, b * m + i, s + (acc ? elem(y, b * m + i, 0) : 0), yf);
        }
    out_buf(r, "y", yf ? KF_S_F32 : KF_S_F16, y, ny);
    free(w);
    free(xq);
    free(xds);
    free(y);
}

/* y (+)= W·x, W Q4_K [m, k], x f16 quantized to q8_1 blocks as llama.cpp's
 * quantize_q8_1 (kf_ref_q8_block), the row products as q4k_q8_gemv's. */
static double *q4k_rows(ref_ctx *r, const uint16_t *x, size_t m, size_t k)
{
    size_t nw;
    uint8_t *w = q4k_weights(r, m, k, &nw);
    int8_t *xq = calloc(k + 1, 1);
    uint16_t *xds = calloc(k / 16 + 1, 2);
    double *y = nw >= m * (k / 256) * 144 ? calloc(m + 1, sizeof *y) : NULL;
    for (size_t b = 0; b + 32 <= k; b += 32) {
        float v[32];
        for (int i = 0; i < 32; i++) v[i] = (float)kf_ref_f16_value(x[b + i]);
        kf_ref_q8_block(v, 32, xq + b, xds + b / 16);
    }
    for (size_t i = 0; y && i < m; i++) y[i] = kf_ref_q4k_q8_row(w + i * (k / 256) * 144, k / 256, xq, xds);
    free(w);
    free(xq);
    free(xds);
    return y;
}

static void q4k_over(ref_ctx *r, const uint16_t *x, size_t m, size_t k, bool yf, bool acc)
{
    size_t ny;
    double *s = q4k_rows(r, x, m, k);
    void *y = in_buf(r, "y", yf ? KF_S_F32 : KF_S_F16, 1, &ny);
    for (size_t i = 0; s && i < m && i < ny; i++) put(y, i, s[i] + (acc ? elem(y, i, 0) : 0), yf);
    out_buf(r, "y", yf ? KF_S_F32 : KF_S_F16, y, ny);
    free(s);
    free(y);
}

/* ---- sdpa.kf ----------------------------------------------------------------------- */

typedef struct {
    size_t b, h, hkv, l, d, split;
    uint32_t *lens;
} sdpa_shape;

static void sdpa_shape_get(ref_ctx *r, sdpa_shape *s, bool kv)
{
    s->b = (size_t)in_num(r, "b");
    s->h = (size_t)in_num(r, "h");
    s->hkv = kv ? (size_t)in_num(r, "hkv") : 1;
    s->l = (size_t)in_num(r, "l");
    s->split = (size_t)in_num(r, "split");
    const char *dv = define_value(r, "D");
    s->d = dv ? (size_t)strtoul(dv, NULL, 10) : 128;
    uint32_t lh[2] = {1, (uint32_t)s->l};
    size_t n;
    const char *spec = kf_case_arg(r->c, "lens");
    bool last0 = spec && strstr(spec, "len0");   /* a made lens file named *len0*: the last sequence is empty */
    s->lens = in_made(r, "lens", KF_S_U32, 1, s->b, last0 ? make_lens_last0 : make_lens, lh, &n);
}

static size_t sdpa_len(const sdpa_shape *s, size_t b) { return s->lens[b] < s->l ? s->lens[b] : s->l; }

/* A KV cache [b, l, hkv, d] of f16 whose valid rows (position < the
 * sequence's length) are uniform in [-1, 1) and whose rows past it are NaN:
 * a kernel that lets a position past lens touch its result fails (ctx: the
 * sdpa_shape, lens read). */
static void make_cache_nan_tail(void *dst, size_t count, uint64_t *rng, const void *ctx)
{
    const sdpa_shape *s = ctx;
    uint16_t *c = dst;
    size_t row = s->hkv * s->d;
    for (size_t i = 0; i < count; i++) {
        size_t b = i / (s->l * row), p = i / row % s->l;
        double v = ldexp((double)(kf_fill_splitmix64(rng) >> 53), -10) - 1.0;
        c[i] = p < sdpa_len(s, b) ? kf_ref_f16_bits(v) : 0x7e00;
    }
}

/* Softmax attention of query q over cache positions [p0, p1) of kv head kvh
 * of sequence b: po (d values) = sum_p e^(z_p)·V_p / sum_p e^(z_p) with
 * z_p = q·K_p / sqrt(d); returns log2(sum_p e^(z_p)). */
static double sdpa_range(const sdpa_shape *s, const uint16_t *q, const uint16_t *kc, const uint16_t *vc,
                         size_t b, size_t kvh, size_t p0, size_t p1, double *po)
{
    double zmax = -INFINITY, *z = malloc((p1 - p0) * sizeof *z), den = 0;
    for (size_t p = p0; p < p1; p++) {
        const uint16_t *kr = kc + ((b * s->l + p) * s->hkv + kvh) * s->d;
        double dot = 0;
        for (size_t e = 0; e < s->d; e++) dot += kf_ref_f16_value(q[e]) * kf_ref_f16_value(kr[e]);
        z[p - p0] = dot / sqrt((double)s->d);
        zmax = fmax(zmax, z[p - p0]);
    }
    for (size_t e = 0; e < s->d; e++) po[e] = 0;
    for (size_t p = p0; p < p1; p++) {
        const uint16_t *vr = vc + ((b * s->l + p) * s->hkv + kvh) * s->d;
        double wgt = exp(z[p - p0] - zmax);
        den += wgt;
        for (size_t e = 0; e < s->d; e++) po[e] += wgt * kf_ref_f16_value(vr[e]);
    }
    for (size_t e = 0; e < s->d; e++) po[e] /= den;
    free(z);
    return (zmax + log(den)) / log(2.0);
}

/* The partials of query head hq (its d values q) of sequence b into po and
 * plse: one per split with positions (ns slots a head). */
static void sdpa_partials(const sdpa_shape *s, const uint16_t *q, const uint16_t *kc, const uint16_t *vc, size_t b,
                          size_t hq, size_t ns, double *o, float *po, float *plse)
{
    for (size_t sp = 0; sp * s->split < sdpa_len(s, b); sp++) {
        size_t p0 = sp * s->split, p1 = p0 + s->split < sdpa_len(s, b) ? p0 + s->split : sdpa_len(s, b);
        size_t slot = (b * s->h + hq) * ns + sp;
        plse[slot] = (float)sdpa_range(s, q, kc, vc, b, hq / (s->h / s->hkv), p0, p1, o);
        for (size_t e = 0; e < s->d; e++) po[slot * s->d + e] = (float)o[e];
    }
}

/* sdpa_decode_split: the partials of every (b, query head, split) that has
 * positions; the others keep their initial contents. */
static void ref_sdpa_split(ref_ctx *r)
{
    sdpa_shape s;
    sdpa_shape_get(r, &s, true);
    size_t nq, nk, nv, npo, npl, ns = (s.l + s.split - 1) / s.split;
    size_t ncache = s.b * s.l * s.hkv * s.d;
    uint16_t *q = in_buf(r, "q", KF_S_F16, 1, &nq);
    uint16_t *kc = in_made(r, "kc", KF_S_F16, 1, ncache, make_cache_nan_tail, &s, &nk);
    uint16_t *vc = in_made(r, "vc", KF_S_F16, 1, ncache, make_cache_nan_tail, &s, &nv);
    float *po = in_buf(r, "po", KF_S_F32, 1, &npo), *plse = in_buf(r, "plse", KF_S_F32, 1, &npl);
    double *o = malloc(s.d * sizeof *o);
    bool fits = nq >= s.b * s.h * s.d && nk >= s.b * s.l * s.hkv * s.d && nv >= nk && npl >= s.b * s.h * ns &&
                npo >= npl * s.d;
    for (size_t b = 0; b < s.b && fits; b++)
        for (size_t hq = 0; hq < s.h; hq++) sdpa_partials(&s, q + (b * s.h + hq) * s.d, kc, vc, b, hq, ns, o, po, plse);
    out_buf(r, "po", KF_S_F32, po, npo);
    out_buf(r, "plse", KF_S_F32, plse, npl);
    free(o);
    free(q);
    free(kc);
    free(vc);
    free(po);
    free(plse);
    free(s.lens);
}

/* As make_cache_nan_tail, and the newest row (len - 1) NaN too: the rope
 * forms of the split kernel take that row from the fused QKV row, and one
 * that read the cache's row there would fail. */
static void make_cache_nan_newest(void *dst, size_t count, uint64_t *rng, const void *ctx)
{
    const sdpa_shape *s = ctx;
    size_t row = s->hkv * s->d;
    make_cache_nan_tail(dst, count, rng, ctx);
    for (size_t i = 0; i < count; i++) {
        size_t b = i / (s->l * row), p = i / row % s->l;
        if (sdpa_len(s, b) > 0 && p == sdpa_len(s, b) - 1) ((uint16_t *)dst)[i] = 0x7e00;
    }
}

/* Head x (d values of f16) turned by the table row cs (d/2 pairs of (cos,
 * sin) as f32): pair i is (x[i], x[i + d/2]) (NeoX) or (x[2i], x[2i + 1])
 * (GPT-J), turned to (u·c - v·s, v·c + u·s). The rope forms define the
 * turn by a table of f32 values and f32 operations (rope.kf: one product,
 * then an fma), rounded once to f16, so the same f32 operations are done
 * here: in double, one of the few values within an f32 rounding of an f16
 * midpoint would round the other way, and one ulp of a q element moves a
 * score by about 1e-4. */
static void rope_turn(uint16_t *out, const uint16_t *x, const float *cs, size_t d, bool neox)
{
    for (size_t i = 0; i < d / 2; i++) {
        size_t i0 = neox ? i : 2 * i, i1 = neox ? i + d / 2 : 2 * i + 1;
        float u = (float)kf_ref_f16_value(x[i0]), v = (float)kf_ref_f16_value(x[i1]), c = cs[2 * i], sn = cs[2 * i + 1];
        float vs = v * sn, us = u * sn;
        out[i0] = kf_ref_f16_bits(fmaf(u, c, -vs));
        out[i1] = kf_ref_f16_bits(fmaf(v, c, us));
    }
}

/* sdpa_decode_split_rope_*: the newest position of sequence b, lens[b] - 1
 * (when 1 <= lens[b] <= l), gets the fused row's k head of each kv head
 * turned by cs[b] and its v head into the caches; then the split's partials
 * with each q head of the fused row turned by cs[b] (ref_sdpa_split). */
static void ref_sdpa_split_rope(ref_ctx *r)
{
    bool neox = name_has(r, "neox");
    sdpa_shape s;
    sdpa_shape_get(r, &s, true);
    size_t nx, ncs, nk, nv, npo, npl, ns = (s.l + s.split - 1) / s.split, nh = s.h + 2 * s.hkv;
    size_t ncache = s.b * s.l * s.hkv * s.d;
    uint16_t *qkv = in_buf(r, "qkv", KF_S_F16, 1, &nx);
    float *cs = in_buf(r, "cs", KF_S_F32, 2, &ncs);
    uint16_t *kc = in_made(r, "kc", KF_S_F16, 1, ncache, make_cache_nan_newest, &s, &nk);
    uint16_t *vc = in_made(r, "vc", KF_S_F16, 1, ncache, make_cache_nan_newest, &s, &nv);
    float *po = in_buf(r, "po", KF_S_F32, 1, &npo), *plse = in_buf(r, "plse", KF_S_F32, 1, &npl);
    uint16_t *q = malloc(s.d * sizeof *q);
    double *o = malloc(s.d * sizeof *o);
    bool fits = nx >= s.b * nh * s.d && ncs >= s.b * s.d / 2 && nk >= ncache && nv >= ncache &&
                npl >= s.b * s.h * ns && npo >= npl * s.d;
    for (size_t b = 0; b < s.b && fits; b++) {
        const uint16_t *row = qkv + b * nh * s.d;
        const float *c = cs + b * s.d;
        if (s.lens[b] >= 1 && s.lens[b] <= s.l)
            for (size_t kv = 0; kv < s.hkv; kv++) {
                size_t at = ((b * s.l + s.lens[b] - 1) * s.hkv + kv) * s.d;
                rope_turn(kc + at, row + (s.h + kv) * s.d, c, s.d, neox);
                memcpy(vc + at, row + (s.h + s.hkv + kv) * s.d, s.d * 2);
            }
        for (size_t hq = 0; hq < s.h; hq++) {
            rope_turn(q, row + hq * s.d, c, s.d, neox);
            sdpa_partials(&s, q, kc, vc, b, hq, ns, o, po, plse);
        }
    }
    if (!fits) {
        fprintf(stderr, "%s: buffers too small for sdpa_split_rope\n", r->c->path);
        r->errors++;
    }
    out_buf(r, "po", KF_S_F32, po, npo);
    out_buf(r, "plse", KF_S_F32, plse, npl);
    out_buf(r, "kc", KF_S_F16, kc, nk);
    out_buf(r, "vc", KF_S_F16, vc, nv);
    free(o);
    free(q);
    free(qkv);
    free(cs);
    free(kc);
    free(vc);
    free(po);
    free(plse);
    free(s.lens);
}

/* sdpa_decode_combine: o = sum_s po_s·2^lse_s / sum_s 2^lse_s over the
 * cdiv(len, split) partials (0 when there are none). */
static void ref_sdpa_combine(ref_ctx *r)
{
    sdpa_shape s;
    sdpa_shape_get(r, &s, false);
    size_t npo, npl, no, ns = (s.l + s.split - 1) / s.split;
    float *po = in_buf(r, "po", KF_S_F32, 1, &npo), *plse = in_buf(r, "plse", KF_S_F32, 1, &npl);
    uint16_t *o = in_buf(r, "o", KF_S_F16, 1, &no);
    for (size_t b = 0; b < s.b && npl >= s.b * s.h * ns && npo >= npl * s.d && no >= s.b * s.h * s.d; b++)
        for (size_t hq = 0; hq < s.h; hq++) {
            size_t base = (b * s.h + hq) * ns, nv = (sdpa_len(&s, b) + s.split - 1) / s.split;
            double mx = -INFINITY;
            for (size_t sp = 0; sp < nv; sp++) mx = fmax(mx, plse[base + sp]);
            for (size_t e = 0; e < s.d; e++) {
                double num = 0, den = 0;
                for (size_t sp = 0; sp < nv; sp++) {
                    double wgt = exp2(plse[base + sp] - mx);
                    den += wgt;
                    num += wgt * po[(base + sp) * s.d + e];
                }
                o[(b * s.h + hq) * s.d + e] = kf_ref_f16_bits(nv ? num / den : 0);
            }
        }
    out_buf(r, "o", KF_S_F16, o, no);
    free(po);
    free(plse);
    free(o);
    free(s.lens);
}

/* sdpa_decode_fused / _q8: the attention output of every (b, query head)
 * over all of its len positions at once (0 when len is 0), as f16, or for
 * _q8 those f16 values as 8-bit blocks of 32 (kf_ref_q8_block); the counter
 * is back at 0. */
static void ref_sdpa_fused(ref_ctx *r)
{
    sdpa_shape s;
    sdpa_shape_get(r, &s, true);
    bool q8 = name_has(r, "_q8");
    size_t nq, nk, nv, nc, no = 0, nxq = 0, nxd = 0, g = s.h / s.hkv;
    size_t ncache = s.b * s.l * s.hkv * s.d, nout = s.b * s.h * s.d;
    uint16_t *q = in_buf(r, "q", KF_S_F16, 1, &nq);
    uint16_t *kc = in_made(r, "kc", KF_S_F16, 1, ncache, make_cache_nan_tail, &s, &nk);
    uint16_t *vc = in_made(r, "vc", KF_S_F16, 1, ncache, make_cache_nan_tail, &s, &nv);
    uint32_t *cnt = in_buf(r, "cnt", KF_S_U32, 1, &nc);
    uint16_t *o = q8 ? NULL : in_buf(r, "o", KF_S_F16, 1, &no);
    int8_t *xq = q8 ? in_buf(r, "xq", KF_S_I8, 1, &nxq) : NULL;
    uint16_t *xds = q8 ? in_buf(r, "xds", KF_S_F16, 2, &nxd) : NULL;
    double *att = malloc(s.d * sizeof *att);
    float *of = calloc(nout + 1, sizeof *of);
    bool fits = nq >= nout && nk >= ncache && nv >= ncache && (q8 ? nxq >= nout && nxd >= nout / 32 : no >= nout);
    for (size_t b = 0; b < s.b && fits; b++)
        for (size_t hq = 0; hq < s.h; hq++) {
            size_t len = sdpa_len(&s, b);
            if (len) sdpa_range(&s, q + (b * s.h + hq) * s.d, kc, vc, b, hq / g, 0, len, att);
            for (size_t e = 0; e < s.d; e++) {
                uint16_t bits = kf_ref_f16_bits(len ? att[e] : 0);
                of[(b * s.h + hq) * s.d + e] = (float)kf_ref_f16_value(bits);
                if (o) o[(b * s.h + hq) * s.d + e] = bits;
            }
        }
    for (size_t i = 0; q8 && fits && i < nout; i += 32) kf_ref_q8_block(of + i, 32, xq + i, xds + i / 16);
    for (size_t i = 0; i < nc; i++) cnt[i] = 0;
    if (!fits) {
        fprintf(stderr, "%s: buffers too small for sdpa_fused\n", r->c->path);
        r->errors++;
    }
    out_buf(r, "cnt", KF_S_U32, cnt, nc);
    if (o) out_buf(r, "o", KF_S_F16, o, no);
    if (q8) {
        out_buf(r, "xq", KF_S_I8, xq, nxq);
        out_buf(r, "xds", KF_S_F16, xds, nxd * 2);
    }
    free(att);
    free(of);
    free(q);
    free(kc);
    free(vc);
    free(cnt);
    free(o);
    free(xq);
    free(xds);
    free(s.lens);
}

/* ---- rope.kf ------------------------------------------------------------------------- */

/* Positions uniform in [hi - 4096, hi]: near 2^20 for rope_neox / _gptj, in
 * [0, l) for the cache writers. */
static uint32_t *rope_positions(ref_ctx *r, size_t t, uint32_t hi)
{
    uint32_t lh[2] = {hi > 4096 ? hi - 4096 : 0, hi};
    size_t n;
    return in_made(r, "pos", KF_S_U32, 1, t, make_u32_range, lh, &n);
}

static void ref_rope(ref_ctx *r)
{
    bool neox = name_has(r, "neox");
    size_t t = (size_t)in_num(r, "t"), h = (size_t)in_num(r, "h"), d = (size_t)in_num(r, "d"), nx;
    double theta = (float)in_num(r, "theta");
    uint32_t *pos = rope_positions(r, t, 1u << 20);
    uint16_t *x = in_buf(r, "x", KF_S_F16, 1, &nx);
    for (size_t i = 0; i < t * h && (i + 1) * d <= nx; i++) kf_ref_rope_head(x + i * d, d, pos[i / h], theta, neox);
    out_buf(r, "x", KF_S_F16, x, nx);
    free(pos);
    free(x);
}

/* rope_table: cs[t, i] = (cos, sin) of pos[t]·theta^(-2i/d), positions in
 * [0, 2^20] (double, rounded once to f32). */
static void ref_rope_table(ref_ctx *r)
{
    size_t t = (size_t)in_num(r, "t"), d = (size_t)in_num(r, "d"), nc;
    double theta = (float)in_num(r, "theta");
    uint32_t *pos = rope_positions(r, t, 1u << 20);
    float *cs = in_buf(r, "cs", KF_S_F32, 2, &nc);
    for (size_t i = 0; i < t * (d / 2) && i < nc; i++) {
        double a = kf_ref_rope_angle(pos[i / (d / 2)], i % (d / 2), d, theta);
        cs[2 * i] = (float)cos(a);
        cs[2 * i + 1] = (float)sin(a);
    }
    out_buf(r, "cs", KF_S_F32, cs, 2 * nc);
    free(pos);
    free(cs);
}

/* rope_qkv_*: q heads turned into q, k heads turned into kc at (t, pos[t]),
 * v heads copied into vc there; everything else keeps its contents. */
static void ref_rope_qkv(ref_ctx *r)
{
    bool neox = name_has(r, "neox");
    size_t t = (size_t)in_num(r, "t"), h = (size_t)in_num(r, "h"), hkv = (size_t)in_num(r, "hkv");
    size_t l = (size_t)in_num(r, "l"), d = (size_t)in_num(r, "d"), nh = h + 2 * hkv, ns, nq, nk, nv;
    double theta = (float)in_num(r, "theta");
    uint32_t *pos = rope_positions(r, t, (uint32_t)l - 1);
    uint16_t *src = in_buf(r, "qkv", KF_S_F16, 1, &ns), *q = in_buf(r, "q", KF_S_F16, 1, &nq);
    uint16_t *kc = in_buf(r, "kc", KF_S_F16, 1, &nk), *vc = in_buf(r, "vc", KF_S_F16, 1, &nv);
    bool fits = ns >= t * nh * d && nq >= t * h * d && nk >= t * l * hkv * d && nv >= nk;
    for (size_t i = 0; i < t && fits; i++)
        for (size_t hh = 0; hh < nh; hh++) {
            const uint16_t *in = src + (i * nh + hh) * d;
            size_t kv = ((i * l + pos[i]) * hkv + (hh >= h ? (hh - h) % hkv : 0)) * d;
            uint16_t *out = hh < h ? q + (i * h + hh) * d : hh < h + hkv ? kc + kv : vc + kv;
            memcpy(out, in, d * 2);
            if (hh < h + hkv) kf_ref_rope_head(out, d, pos[i], theta, neox);
        }
    out_buf(r, "q", KF_S_F16, q, nq);
    out_buf(r, "kc", KF_S_F16, kc, nk);
    out_buf(r, "vc", KF_S_F16, vc, nv);
    free(pos);
    free(src);
    free(q);
    free(kc);
    free(vc);
}

/* ---- silu_mul.kf, add_rmsnorm.kf, embed.kf, argmax.kf --------------------------------- */

static void ref_silu_mul(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), ng, nu, ny;
    uint16_t *g = in_buf(r, "g", KF_S_F16, 1, &ng), *u = in_buf(r, "u", KF_S_F16, 1, &nu);
    uint16_t *y = in_buf(r, "y", KF_S_F16, 1, &ny);
    for (size_t i = 0; i < n && i < ng && i < nu && i < ny; i++) {
        double gv = kf_ref_f16_value(g[i]);
        y[i] = kf_ref_f16_bits(gv / (1.0 + exp(-gv)) * kf_ref_f16_value(u[i]));
    }
    out_buf(r, "y", KF_S_F16, y, ny);
    free(g);
    free(u);
    free(y);
}

/* x += res (rounded to f16); y = x·rsqrt(mean(x^2) + eps)·w from that x. */
static void ref_add_rmsnorm(ref_ctx *r)
{
    size_t rows = (size_t)in_num(r, "rows"), cols = (size_t)in_num(r, "cols"), nx, nr, nw, ny;
    double eps = (float)in_num(r, "eps");
    uint16_t *x = in_buf(r, "x", KF_S_F16, 1, &nx), *res = in_buf(r, "res", KF_S_F16, 1, &nr);
    uint16_t *w = in_buf(r, "w", KF_S_F16, 1, &nw), *y = in_buf(r, "y", KF_S_F16, 1, &ny);
    for (size_t i = 0; i < rows && (i + 1) * cols <= nx && (i + 1) * cols <= nr && (i + 1) * cols <= ny && cols <= nw;
         i++) {
        double ss = 0;
        for (size_t c = i * cols; c < (i + 1) * cols; c++) {
            x[c] = kf_ref_f16_bits(kf_ref_f16_value(x[c]) + kf_ref_f16_value(res[c]));
            ss += kf_ref_f16_value(x[c]) * kf_ref_f16_value(x[c]);
        }
        double scale = 1.0 / sqrt(ss / (double)cols + eps);
        for (size_t c = 0; c < cols; c++) y[i * cols + c] = kf_ref_f16_bits(kf_ref_f16_value(x[i * cols + c]) * scale * kf_ref_f16_value(w[c]));
    }
    out_buf(r, "x", KF_S_F16, x, nx);
    out_buf(r, "y", KF_S_F16, y, ny);
    free(x);
    free(res);
    free(w);
    free(y);
}

static void ref_embed(ref_ctx *r)
{
    size_t t = (size_t)in_num(r, "t"), d = (size_t)in_num(r, "d"), vocab = (size_t)in_num(r, "vocab"), nt, ni, ny;
    uint16_t *table = in_buf(r, "table", KF_S_F16, 1, &nt), *y = in_buf(r, "y", KF_S_F16, 1, &ny);
    uint32_t lh[2] = {0, (uint32_t)vocab - 1};
    uint32_t *ids = in_made(r, "ids", KF_S_U32, 1, t, make_u32_range, lh, &ni);
    for (size_t i = 0; i < t && i < ni && (i + 1) * d <= ny; i++)
        if ((ids[i] + 1) * d <= nt) memcpy(y + i * d, table + ids[i] * d, d * 2);
    out_buf(r, "y", KF_S_F16, y, ny);
    free(table);
    free(ids);
    free(y);
}

/* idx[r] = the lowest index of the row's maximum (NaN skipped; 0 if none). */
static void ref_argmax(ref_ctx *r)
{
    size_t rows = (size_t)in_num(r, "rows"), cols = (size_t)in_num(r, "cols"), nx, ni;
    float *x = in_made(r, "x", KF_S_F32, 1, rows * cols, make_ties, NULL, &nx);
    uint32_t *idx = in_buf(r, "idx", KF_S_U32, 1, &ni);
    for (size_t i = 0; i < rows && i < ni && (i + 1) * cols <= nx; i++) {
        size_t best = 0;
        bool any = false;
        for (size_t c = 0; c < cols; c++) {
            float v = x[i * cols + c];
            if (!isnan(v) && (!any || v > x[i * cols + best])) best = c, any = true;
        }
        idx[i] = (uint32_t)best;
    }
    out_buf(r, "idx", KF_S_U32, idx, ni);
    free(x);
    free(idx);
}

#define KF_REFERENCE_DECODE \
    {"gemv", ref_gemv}, {"gemv_rms", ref_gemv_rms}, {"gemv_silu", ref_gemv_silu}, {"q4k_gemv", ref_q4k_gemv}, \
    {"q4k_q8_gemv_rms", ref_gemv_rms}, {"q4k_q8_gemv_rms_glu", ref_gemv_rms_glu}, {"q4k_q8_gemv_silu", ref_gemv_silu}, {"q8_quantize", ref_q8_quantize}, \
    {"q4k_q8_gemv", ref_q4k_q8_gemv}, {"tc_gemv", ref_tc_gemv}, {"sdpa_split", ref_sdpa_split}, {"sdpa_split_rope", ref_sdpa_split_rope}, \
    {"sdpa_combine", ref_sdpa_combine}, {"sdpa_fused", ref_sdpa_fused}, \
    {"rope", ref_rope}, {"rope_qkv", ref_rope_qkv}, {"rope_table", ref_rope_table}, {"silu_mul", ref_silu_mul}, \
    {"add_rmsnorm", ref_add_rmsnorm}, {"embed", ref_embed}, {"argmax", ref_argmax},
