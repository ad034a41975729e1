/* References of the raw kernels' cases (kernels/raw/, `kernel FILE.cu|FILE.ptx`):
 * the tensor-core GEMM in double precision with one rounding to f32 (the
 * raw PTX axpy uses ref_saxpy). Included by reference.c. */

/* c = a * b: a m x k and b k x n f16, row major; c m x n f32. */
static void ref_gemm_f16_f32(ref_ctx *r)
{
    size_t m = (size_t)in_num(r, "m"), n = (size_t)in_num(r, "n"), k = (size_t)in_num(r, "k"), na, nb, nc;
    uint16_t *a = in_buf(r, "a", KF_S_F16, 1, &na), *b = in_buf(r, "b", KF_S_F16, 1, &nb);
    float *c = in_buf(r, "c", KF_S_F32, 1, &nc);
    for (size_t i = 0; i < m && (i + 1) * k <= na && (i + 1) * n <= nc && k * n <= nb; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t x = 0; x < k; x++) s += kf_ref_f16_value(a[i * k + x]) * kf_ref_f16_value(b[x * n + j]);
            c[i * n + j] = (float)s;
        }
    out_buf(r, "c", KF_S_F32, c, nc);
    free(a);
    free(b);
    free(c);
}

#define KF_REFERENCE_RAW {"gemm_f16_f32", ref_gemm_f16_f32},
