/* kf_reference: the independent reference for the golden-output cases.
 *
 * For every kernels/cases/<name>.case with a `reference NAME` line it regenerates
 * the case's inputs with the shared generators (tools/fill.c: the inputs
 * must be bit-identical to what `kforge test` feeds the kernel), computes
 * the expected outputs here in plain C (double precision for the library
 * kernels; exact C emulation of the contract's integer and per-operation
 * float semantics for the feature kernels) and writes them as the .npy
 * files the case's `expect` lines name. Nothing here uses the kforge
 * compiler, interpreter or runtime; f16/bf16 rounding is its own code too.
 *
 *   kf_reference [--check] [CASE_DIR]    (default kernels/cases)
 *
 * --check writes nothing and exits 1 unless every expected file is
 * byte-identical to what would be written (tests/test_golden_reference.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>

#include "../fill.h"
#include "../golden_case.h"
#include "../npy.h"
#include "ref_num.h"

typedef struct {
    const kf_case *c;
    bool check;
    unsigned written, mismatched, errors;
} ref_ctx;

/* ---- independent f16 / bf16 rounding ------------------------------------- */

static double rbf16(double x) { return kf_ref_round_fmt(x, 8, -126, 127); }

static uint16_t bf16_bits(double x)
{
    float f = (float)rbf16(x);
    uint32_t b;
    memcpy(&b, &f, 4);
    return isnan(f) ? 0x7fc0 : (uint16_t)(b >> 16);
}

/* The value of bf16 bits h (exact: bf16 is the top half of an f32). */
static double bf16_value(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* ---- inputs and outputs --------------------------------------------------- */

static void *in_buf(ref_ctx *r, const char *name, kf_scalar s, unsigned lanes, size_t *elems)
{
    const char *spec = kf_case_arg(r->c, name);
    kf_fill_spec fs;
    bool is_gen;
    kf_error err = {0};
    if (!spec || !kf_fill_parse(spec, &fs, &is_gen, &err)) {
        fprintf(stderr, "%s: argument '%s' must be a generator for the reference\n", r->c->path, name);
        r->errors++;
        *elems = 0;
        return calloc(1, 64);
    }
    *elems = (size_t)fs.count;
    void *p = calloc((size_t)fs.count * lanes + 8, kf_scalar_bytes[s]);
    if (p) kf_fill(p, kf_type_vector(s, lanes), *elems, &fs);
    return p;
}

static double in_num(ref_ctx *r, const char *name)
{
    const char *spec = kf_case_arg(r->c, name);
    if (!spec) {
        fprintf(stderr, "%s: missing argument '%s'\n", r->c->path, name);
        r->errors++;
        return 0;
    }
    return strtod(spec, NULL);
}

/* The value of the case's -D name (the last one given wins, as on the
 * command line), or NULL when the case does not set it. */
static const char *define_value(ref_ctx *r, const char *name)
{
    const char *v = NULL;
    for (size_t i = 0; i < r->c->defines.len; i++)
        if (!strcmp(r->c->defines.data[i].name, name)) v = r->c->defines.data[i].value;
    return v;
}

static void out_buf(ref_ctx *r, const char *name, kf_scalar s, const void *data, size_t count)
{
    const kf_case_expect *e = NULL;
    for (size_t i = 0; i < r->c->expects.len; i++)
        if (!strcmp(r->c->expects.data[i].name, name)) e = &r->c->expects.data[i];
    if (!e) return;   /* the case does not check this output */
    kf_buf b = {0};
    kf_error err = {0};
    kf_npy_encode(&b, s, data, count, &err);
    if (r->check) {
        char *old;
        size_t len;
        if (kf_read_file(e->file, &old, &len, &err) != KF_OK || len != b.len || memcmp(old, b.data, len)) {
            fprintf(stderr, "MISMATCH %s: %s differs from the reference\n", r->c->name, e->file);
            r->mismatched++;
        }
        if (old) free(old);
    } else if (kf_npy_write(e->file, s, data, count, &err) != KF_OK) {
        fprintf(stderr, "%s\n", err.msg);
        r->errors++;
    } else {
        r->written++;
    }
    kf_buf_free(&b);
}

/* ---- library kernels (double precision) ---------------------------------- */

static void ref_saxpy(ref_ctx *r)
{
    size_t nx, ny;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx), *y = in_buf(r, "y", KF_S_F32, 1, &ny);
    double a = (float)in_num(r, "a");
    size_t n = (size_t)in_num(r, "n");
    for (size_t i = 0; i < n && i < nx && i < ny; i++) y[i] = (float)(a * x[i] + y[i]);
    out_buf(r, "y", KF_S_F32, y, ny);
    free(x);
    free(y);
}

static void ref_reduce_sum(ref_ctx *r)
{
    size_t nx, no;
    float *x = in_buf(r, "x", KF_S_F32, 1, &nx), *out = in_buf(r, "out", KF_S_F32, 1, &no);
    size_t n = (size_t)in_num(r, "n");
    double s = out[0];
    for (size_t i = 0; i < n && i < nx; i++) s += x[i];
    out[0] = (float)s;
    out_buf(r, "out", KF_S_F32, out, no);
    free(x);
    free(out);
}

/* softmax of one row of doubles into dst (doubles). */
static void softmax_row(const double *x, double *dst, size_t cols)
{
    double m = -INFINITY, s = 0;
    for (size_t c = 0; c < cols; c++) m = fmax(m, x[c]);
    for (size_t c = 0; c < cols; c++) s += exp(x[c] - m);
    for (size_t c = 0; c < cols; c++) dst[c] = exp(x[c] - m) / s;
}

static void ref_softmax(ref_ctx *r, bool half)
{
    size_t rows = (size_t)in_num(r, "rows"), cols = (size_t)in_num(r, "cols"), nx, ny;
    kf_scalar s = half ? KF_S_F16 : KF_S_F32;
    void *x = in_buf(r, "x", s, 1, &nx), *y = in_buf(r, "y", s, 1, &ny);
    double *row = malloc(cols * sizeof *row), *res = malloc(cols * sizeof *res);
    for (size_t i = 0; i < rows && (i + 1) * cols <= nx && (i + 1) * cols <= ny; i++) {
        for (size_t c = 0; c < cols; c++)
            row[c] = half ? kf_ref_f16_value(((uint16_t *)x)[i * cols + c]) : ((float *)x)[i * cols + c];
        softmax_row(row, res, cols);
        for (size_t c = 0; c < cols; c++) {
            if (half) ((uint16_t *)y)[i * cols + c] = kf_ref_f16_bits(res[c]);
            else ((float *)y)[i * cols + c] = (float)res[c];
        }
    }
    out_buf(r, "y", s, y, ny);
    free(row);
    free(res);
    free(x);
    free(y);
}

static void ref_softmax_f32(ref_ctx *r) { ref_softmax(r, false); }
static void ref_softmax_f16(ref_ctx *r) { ref_softmax(r, true); }

static void ref_rmsnorm(ref_ctx *r)
{
    size_t rows = (size_t)in_num(r, "rows"), cols = (size_t)in_num(r, "cols"), nx, nw, ny;
    double eps = (float)in_num(r, "eps");
    uint16_t *x = in_buf(r, "x", KF_S_F16, 1, &nx), *w = in_buf(r, "w", KF_S_F16, 1, &nw);
    uint16_t *y = in_buf(r, "y", KF_S_F16, 1, &ny);
    for (size_t i = 0; i < rows && (i + 1) * cols <= nx && (i + 1) * cols <= ny && cols <= nw; i++) {
        double ss = 0;
        for (size_t c = 0; c < cols; c++) ss += kf_ref_f16_value(x[i * cols + c]) * kf_ref_f16_value(x[i * cols + c]);
        double scale = 1.0 / sqrt(ss / (double)cols + eps);
        for (size_t c = 0; c < cols; c++)
            y[i * cols + c] = kf_ref_f16_bits(kf_ref_f16_value(x[i * cols + c]) * scale * kf_ref_f16_value(w[c]));
    }
    out_buf(r, "y", KF_S_F16, y, ny);
    free(x);
    free(w);
    free(y);
}

#include "reference_features.c"
#include "reference_regress.c"
#include "reference_section8.c"
#include "reference_tensor.c"
#include "reference_decode.c"
#include "reference_raw.c"

/* ---- driver ---------------------------------------------------------------- */

static const struct {
    const char *name;
    void (*fn)(ref_ctx *);
} refs[] = {
    {"saxpy", ref_saxpy}, {"reduce_sum", ref_reduce_sum}, {"softmax_f32", ref_softmax_f32},
    {"softmax_f16", ref_softmax_f16}, {"rmsnorm", ref_rmsnorm},
    KF_REFERENCE_FEATURES
    KF_REFERENCE_REGRESS
    KF_REFERENCE_SECTION8
    KF_REFERENCE_TENSOR
    KF_REFERENCE_DECODE
    KF_REFERENCE_RAW
};

static void run_case(ref_ctx *r, const char *path)
{
    kf_case c;
    kf_error err = {0};
    if (kf_case_load(path, &c, &err) != KF_OK) {
        fprintf(stderr, "%s\n", err.msg);
        r->errors++;
    } else if (c.reference) {
        bool found = false;
        r->c = &c;
        for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
            if (!strcmp(refs[i].name, c.reference)) {
                refs[i].fn(r);
                found = true;
            }
        if (!found) {
            fprintf(stderr, "%s: no reference named '%s'\n", path, c.reference);
            r->errors++;
        }
    }
    kf_case_free(&c);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Runs every case of dir; returns the number of cases with a reference. */
static unsigned kf_reference_run_dir(ref_ctx *r, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "kf_reference: cannot open '%s'\n", dir);
        r->errors++;
        return 0;
    }
    char *names[1024];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 1024) {
        size_t len = strlen(de->d_name);
        if (len > 5 && !strcmp(de->d_name + len - 5, ".case")) {
            names[n] = malloc(strlen(dir) + len + 2);
            sprintf(names[n], "%s/%s", dir, de->d_name);
            n++;
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        run_case(r, names[i]);
        free(names[i]);
    }
    return (unsigned)n;
}

int kf_reference_main(int argc, char **argv)
{
    ref_ctx r = {0};
    const char *dir = "kernels/cases";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check")) r.check = true;
        else dir = argv[i];
    }
    unsigned n = kf_reference_run_dir(&r, dir);
    if (r.check)
        printf("%u cases, %u expected files differ from the reference, %u errors\n", n, r.mismatched, r.errors);
    else
        printf("%u cases, %u expected files written, %u errors\n", n, r.written, r.errors);
    return r.mismatched || r.errors ? 1 : 0;
}

#ifndef KF_REFERENCE_NO_MAIN
int main(int argc, char **argv) { return kf_reference_main(argc, argv); }
#endif
