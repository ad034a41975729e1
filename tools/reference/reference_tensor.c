/* Reference outputs of the tensor-core feature kernels
 * (kernels/features/tensor.kf) and of kernels/gemm.kf, included by
 * reference.c after reference_section8.c (whose f16/bf16 helpers it uses).
 * Nothing here knows a fragment layout: every output is the whole-matrix
 * product D = A·B + C, computed in double from the row-major inputs, so a
 * kernel (or interpreter) that takes the wrong element for a fragment lane
 * computes a different matrix. Integer products are exact and wrap modulo
 * 2^32 as the contract says; float ones are rounded once to the output type
 * (the cases allow LANGUAGE.md's bound (K + 2)·2^-23·(sum |a·b| + |c|)). */

/* D (m x n, f32) = A (m x k) · B (k x n) + C, row-major doubles in, rounded. */
static void ref_matmul(const double *a, const double *b, const double *c, float *d, size_t m, size_t n, size_t k)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = c ? c[i * n + j] : 0;
            for (size_t x = 0; x < k; x++) s += a[i * k + x] * b[x * n + j];
            d[i * n + j] = (float)s;
        }
}

/* count half values (f16 or bf16 bits) as doubles. */
static double *halves(const uint16_t *h, size_t count, bool bf)
{
    double *v = malloc((count + 1) * sizeof *v);
    for (size_t i = 0; v && i < count; i++) v[i] = half_value(bf, h[i]);
    return v;
}

static double *floats(const float *f, size_t count)
{
    double *v = malloc((count + 1) * sizeof *v);
    for (size_t i = 0; v && i < count; i++) v[i] = f[i];
    return v;
}

/* mma_f16 / mma_bf16: per tile t, D = A (16 x 16 ksteps) · B (16 ksteps x 8) + C. */
static void ref_mma_half(ref_ctx *r, bool bf)
{
    size_t tiles = (size_t)in_num(r, "tiles"), ks = (size_t)in_num(r, "ksteps"), na, nb, nc, nd;
    kf_scalar s = bf ? KF_S_BF16 : KF_S_F16;
    uint16_t *a = in_buf(r, "a", s, 1, &na), *b = in_buf(r, "b", s, 1, &nb);
    float *c = in_buf(r, "c", KF_S_F32, 1, &nc), *d = in_buf(r, "d", KF_S_F32, 1, &nd);
    size_t k = 16 * ks;
    double *av = halves(a, na, bf), *bv = halves(b, nb, bf), *cv = floats(c, nc);
    for (size_t t = 0; t < tiles && (t + 1) * 16 * k <= na && (t + 1) * k * 8 <= nb && (t + 1) * 128 <= nc &&
                       (t + 1) * 128 <= nd; t++)
        ref_matmul(av + t * 16 * k, bv + t * k * 8, cv + t * 128, d + t * 128, 16, 8, k);
    out_free(r, "d", KF_S_F32, d, nd);
    free(a), free(b), free(c), free(av), free(bv), free(cv);
}

static void ref_mma_f16(ref_ctx *r) { ref_mma_half(r, false); }
static void ref_mma_bf16(ref_ctx *r) { ref_mma_half(r, true); }

/* mma_int: the bytes of a (16 x 32) and b (32 x 8) per tile, read signed
 * (s) or unsigned (u), D = A·B + C modulo 2^32, for ss, su, us, uu. */
static void ref_mma_int(ref_ctx *r)
{
    static const char *const outs[4] = {"d_ss", "d_su", "d_us", "d_uu"};
    size_t tiles = (size_t)in_num(r, "tiles"), na, nb, nc, nd[4];
    uint8_t *a = in_buf(r, "a", KF_S_U8, 1, &na), *b = in_buf(r, "b", KF_S_U8, 1, &nb);
    int32_t *c = in_buf(r, "c", KF_S_I32, 1, &nc), *d[4];
    for (int o = 0; o < 4; o++) d[o] = in_buf(r, outs[o], KF_S_I32, 1, &nd[o]);
    for (size_t t = 0; t < tiles && (t + 1) * 512 <= na && (t + 1) * 256 <= nb && (t + 1) * 128 <= nc; t++)
        for (int o = 0; o < 4; o++)
            for (size_t i = 0; i < 16; i++)
                for (size_t j = 0; j < 8 && (t + 1) * 128 <= nd[o]; j++) {
                    int64_t s = c[t * 128 + i * 8 + j];
                    for (size_t x = 0; x < 32; x++) {
                        int64_t p = a[t * 512 + i * 32 + x], q = b[t * 256 + x * 8 + j];
                        if (o < 2 && p > 127) p -= 256;   /* A signed: ss, su */
                        if (o % 2 == 0 && q > 127) q -= 256;   /* B signed: ss, us */
                        s += p * q;
                    }
                    d[o][t * 128 + i * 8 + j] = (int32_t)(uint32_t)(uint64_t)s;
                }
    for (int o = 0; o < 4; o++) out_free(r, outs[o], KF_S_I32, d[o], nd[o]);
    free(a), free(b), free(c);
}

/* ldsm_f16: d1 .. d4 = A·B + C, d5 = A·(B + 1) + C with B + 1 rounded to f16. */
static void ref_ldsm(ref_ctx *r)
{
    static const char *const outs[5] = {"d1", "d2", "d3", "d4", "d5"};
    size_t na, nb, nc, nd;
    uint16_t *a = in_buf(r, "a", KF_S_F16, 1, &na), *b = in_buf(r, "b", KF_S_F16, 1, &nb);
    float *c = in_buf(r, "c", KF_S_F32, 1, &nc);
    if (na < 256 || nb < 128 || nc < 128) {
        fprintf(stderr, "%s: ldsm_f16 needs a of 256, b and c of 128 elements\n", r->c->path);
        r->errors++;
        free(a), free(b), free(c);
        return;
    }
    double *av = halves(a, 256, false), *bv = halves(b, 128, false), *cv = floats(c, 128);
    double *b1 = malloc(128 * sizeof *b1);
    for (size_t i = 0; b1 && i < 128; i++) b1[i] = kf_ref_rf16(bv[i] + 1.0);
    for (int o = 0; o < 5; o++) {
        float *d = in_buf(r, outs[o], KF_S_F32, 1, &nd);
        if (nd >= 128) ref_matmul(av, o == 4 ? b1 : bv, cv, d, 16, 8, 16);
        out_free(r, outs[o], KF_S_F32, d, nd);
    }
    free(a), free(b), free(c), free(av), free(bv), free(cv), free(b1);
}

/* cp_stream: out = x (n elements) then zeros, whatever the pipeline depth. */
static void ref_cp_stream(ref_ctx *r)
{
    size_t n = (size_t)in_num(r, "n"), nx, no;
    uint16_t *x = in_buf(r, "x", KF_S_F16, 1, &nx), *o = in_buf(r, "out", KF_S_F16, 1, &no);
    for (size_t i = 0; i < no; i++) o[i] = i < n && i < nx ? x[i] : 0;
    out_free(r, "out", KF_S_F16, o, no);
    free(x);
}

/* cp_misuse used rightly: o[l] = x[4 l], each lane's first copied word. */
static void ref_cp_own(ref_ctx *r)
{
    size_t nx, no;
    uint32_t *x = in_buf(r, "x", KF_S_U32, 1, &nx), *o = in_buf(r, "o", KF_S_U32, 1, &no);
    for (size_t l = 0; l < no && 4 * l < nx; l++) o[l] = x[4 * l];
    out_free(r, "o", KF_S_U32, o, no);
    free(x);
}

/* The operand or output type named by part `which` (0: A and B, 1: C) of a
 * kernel name gemm_<A,B>_<C>_<nn|nt>; *bt for the _nt (B as [N, K]) form. */
static kf_scalar gemm_type(const char *kernel, int which, bool *bt)
{
    char ab[8] = "", c[8] = "", lay[8] = "";
    if (sscanf(kernel, "gemm_%7[a-z0-9]_%7[a-z0-9]_%7[a-z]", ab, c, lay) != 3) return KF_S_NONE;
    *bt = !strcmp(lay, "nt");
    const char *t = which ? c : ab;
    return !strcmp(t, "f16") ? KF_S_F16 : !strcmp(t, "bf16") ? KF_S_BF16 : !strcmp(t, "f32") ? KF_S_F32 : KF_S_NONE;
}

static double elem_value(kf_scalar s, const void *p, size_t i)
{
    if (s == KF_S_F32) return ((const float *)p)[i];
    return half_value(s == KF_S_BF16, ((const uint16_t *)p)[i]);
}

/* kernels/gemm.kf: C = alpha·A·B + beta·C (B [K, N], or [N, K] for _nt),
 * the product exact in double, then the one rounding to C's type; beta 0
 * does not read C. The types and the layout come from the kernel name. */
static void ref_gemm(ref_ctx *r)
{
    bool bt = false;
    kf_scalar ab = gemm_type(r->c->kernel, 0, &bt), cs = gemm_type(r->c->kernel, 1, &bt);
    if (!ab || !cs) {
        fprintf(stderr, "%s: kernel '%s' is not a gemm_<A,B>_<C>_<nn|nt>\n", r->c->path, r->c->kernel);
        r->errors++;
        return;
    }
    size_t m = (size_t)in_num(r, "m"), n = (size_t)in_num(r, "n"), k = (size_t)in_num(r, "k"), na, nb, nc;
    double alpha = (float)in_num(r, "alpha"), beta = (float)in_num(r, "beta");
    void *a = in_buf(r, "a", ab, 1, &na), *b = in_buf(r, "b", ab, 1, &nb), *c = in_buf(r, "c", cs, 1, &nc);
    if (na < m * k || nb < k * n || nc < m * n) {
        fprintf(stderr, "%s: gemm buffers smaller than m, n, k say\n", r->c->path);
        r->errors++;
    }
    for (size_t i = 0; i < m && na >= m * k && nb >= k * n && nc >= m * n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t x = 0; x < k; x++) s += elem_value(ab, a, i * k + x) * elem_value(ab, b, bt ? j * k + x : x * n + j);
            double v = alpha * s + (beta != 0 ? beta * elem_value(cs, c, i * n + j) : 0);
            if (cs == KF_S_F32) ((float *)c)[i * n + j] = (float)v;
            else ((uint16_t *)c)[i * n + j] = half_bits(cs == KF_S_BF16, v);
        }
    out_free(r, "c", cs, c, nc);
    free(a), free(b);
}

#define KF_REFERENCE_TENSOR \
    {"mma_f16", ref_mma_f16}, {"mma_bf16", ref_mma_bf16}, {"mma_int", ref_mma_int}, {"ldsm", ref_ldsm}, \
    {"cp_stream", ref_cp_stream}, {"cp_own", ref_cp_own}, {"gemm", ref_gemm},
