/* Interpreter tests through the whole front end: real .kf programs compiled
 * with kf_compile and run on the CPU interpreter, checked against C
 * references (saxpy, a block reduction with warp_sum + shared memory + one
 * atomic per block, rmsnorm and softmax on f16), language semantics that
 * need runtime values (shifts, conversions, wrapping), shared memory of
 * LANGUAGE.md section 8 (the dynamic array, views, fn-declared arrays, the
 * size limit), and every runtime error report at its source line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interp.h"
#include "numeric.h"
#include "kf_compile_test.h"


/* One launch argument: a buffer (p != NULL) or a scalar given as bits. */
typedef struct {
    void *p;
    size_t bytes;
    uint64_t bits;
} karg;

/* A launch with `dyn` bytes of dynamic shared memory. */
static kf_status run_dyn(const kf_ir_kernel *k, uint32_t grid, uint32_t block, uint32_t dyn, const karg *a,
                         kf_error *err, kf_interp_stats *stats)
{
    kf_interp_arg args[8];
    assert_true(k->nparams <= 8);
    for (uint32_t i = 0; i < k->nparams; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].is_buffer = k->params[i].type.kind == KF_TK_BUFFER;
        args[i].data = a[i].p;
        args[i].bytes = a[i].bytes;
        args[i].value.type = k->params[i].type;
        args[i].value.lane[0] = a[i].bits;
    }
    kf_interp_launch l = {{grid, 1, 1}, {block, 1, 1}, dyn};
    return kf_interp_run(k, args, k->nparams, &l, stats, err);
}

static kf_status run(const kf_ir_kernel *k, uint32_t grid, uint32_t block, const karg *a, kf_error *err,
                     kf_interp_stats *stats)
{
    return run_dyn(k, grid, block, 0, a, err, stats);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);   /* CPU time: robust on a loaded machine */
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng_state = 88172645463325252ull;
static double urand(void)   /* [-1, 1) */
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

/* ---- library-style kernels ------------------------------------------------- */

static const char SAXPY[] =
    "@schedule(block = 256, grid = cdiv(n, 256))\n"
    "kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n {\n"
    "        y[i] = a * x[i] + y[i];\n"
    "    }\n"
    "}\n";

static void saxpy_matches_float_reference(void **state)
{
    enum { N = 100000 };
    kf_module *m = compile(SAXPY);
    float *x = malloc(N * 4), *y = malloc(N * 4), *want = malloc(N * 4);
    float a = 1.0f + ldexpf(1.0f, -12);
    for (int i = 0; i < N; i++) {
        x[i] = (float)urand(), y[i] = (float)urand();
        volatile float p = a * x[i];
        want[i] = p + y[i];
    }
    karg args[] = {{0, 0, kf_f32_bits(a)}, {x, N * 4, 0}, {y, N * 4, 0}, {0, 0, N}};
    kf_error err = {0};
    kf_interp_stats st;
    double t0 = seconds();
    assert_int_equal(run(kf_module_kernel(m, NULL), (N + 255) / 256, 256, args, &err, &st), KF_OK);
    double t = seconds() - t0;
    for (int i = 0; i < N; i++) assert_true(y[i] == want[i]);
    print_message("saxpy n=%d: %llu instructions, %.1f M/s\n", N, (unsigned long long)st.instructions,
                  (double)st.instructions / t / 1e6);
    free(x), free(y), free(want);
    kf_module_free(m);
}

static const char REDUCE[] =
    "@schedule(block = 256, grid = 64)\n"
    "kernel reduce_sum(x: &[f32], out: &mut [f32], n: u32) {\n"
    "    shared part: f32[8];\n"
    "    var acc: f32 = 0.0;\n"
    "    for i in global_id.x .. n step grid_dim.x * block_dim.x {\n"
    "        acc += x[i];\n"
    "    }\n"
    "    acc = warp_sum(acc);\n"
    "    if lane_id == 0 { part[warp_id] = acc; }\n"
    "    barrier();\n"
    "    if warp_id == 0 {\n"
    "        var v: f32 = 0.0;\n"
    "        if lane_id < 8 { v = part[lane_id]; }\n"
    "        v = warp_sum(v);\n"
    "        if lane_id == 0 { atomic_add(out, 0, v); }\n"
    "    }\n"
    "}\n";

static void reduce_sum_over_a_million_elements(void **state)
{
    enum { N = 1 << 20 };
    kf_module *m = compile(REDUCE);
    float *x = malloc(N * 4), out = 0;
    double want = 0;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 13), want += i % 13;
    karg args[] = {{x, N * 4, 0}, {&out, 4, 0}, {0, 0, N}};
    kf_error err = {0};
    kf_interp_stats st;
    double t0 = seconds();
    assert_int_equal(run(kf_module_kernel(m, NULL), 64, 256, args, &err, &st), KF_OK);
    double t = seconds() - t0;
    assert_true(out == (float)want);   /* integers below 2^24: every partial sum exact */
    print_message("reduce_sum n=%d: %llu instructions in %.3f s, %.1f M/s\n", N, (unsigned long long)st.instructions,
                  t, (double)st.instructions / t / 1e6);
    free(x);
    kf_module_free(m);
}

static const char RMSNORM[] =
    "const BLOCK: u32 = 256;\n"
    "@schedule(block = BLOCK, grid = rows)\n"
    "kernel rmsnorm(x: &[f16], w: &[f16], y: &mut [f16], rows: u32, cols: u32, eps: f32) {\n"
    "    shared part: f32[BLOCK / 32];\n"
    "    let base = block_id.x * cols;\n"
    "    var acc: f32 = 0.0;\n"
    "    for c in thread_id.x .. cols step BLOCK {\n"
    "        let v = x[base + c] as f32;\n"
    "        acc += v * v;\n"
    "    }\n"
    "    acc = warp_sum(acc);\n"
    "    if lane_id == 0 { part[warp_id] = acc; }\n"
    "    barrier();\n"
    "    var total: f32 = 0.0;\n"
    "    for k in 0 .. BLOCK / 32 { total += part[k]; }\n"
    "    let scale = rsqrt(total / (cols as f32) + eps);\n"
    "    for c in thread_id.x .. cols step BLOCK {\n"
    "        y[base + c] = (x[base + c] as f32 * scale * (w[c] as f32)) as f16;\n"
    "    }\n"
    "}\n";

static void rmsnorm_f16_matches_double_reference(void **state)
{
    enum { ROWS = 16, COLS = 1000 };
    kf_module *m = compile(RMSNORM);
    uint16_t *x = malloc(ROWS * COLS * 2), *w = malloc(COLS * 2), *y = malloc(ROWS * COLS * 2);
    for (int i = 0; i < ROWS * COLS; i++) x[i] = kf_f16_from_double(urand() * 4);
    for (int i = 0; i < COLS; i++) w[i] = kf_f16_from_double(urand());
    karg args[] = {{x, ROWS * COLS * 2, 0}, {w, COLS * 2, 0}, {y, ROWS * COLS * 2, 0},
                   {0, 0, ROWS}, {0, 0, COLS}, {0, 0, kf_f32_bits(1e-6f)}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), ROWS, 256, args, &err, NULL), KF_OK);
    for (int r = 0; r < ROWS; r++) {
        double ss = 0;
        for (int c = 0; c < COLS; c++) ss += kf_f16_to_double(x[r * COLS + c]) * kf_f16_to_double(x[r * COLS + c]);
        double scale = 1.0 / sqrt(ss / COLS + 1e-6);
        for (int c = 0; c < COLS; c++) {
            double want = kf_f16_to_double(x[r * COLS + c]) * scale * kf_f16_to_double(w[c]);
            double got = kf_f16_to_double(y[r * COLS + c]);
            assert_true(fabs(got - want) <= 1e-3 * fabs(want) + 1e-4);   /* one f16 rounding + f32 sums */
        }
    }
    free(x), free(w), free(y);
    kf_module_free(m);
}

static const char SOFTMAX[] =
    "const BLOCK: u32 = 256;\n"
    "@schedule(block = BLOCK, grid = rows)\n"
    "kernel softmax(x: &[f16], y: &mut [f16], rows: u32, cols: u32) {\n"
    "    shared red: f32[BLOCK / 32];\n"
    "    let base = block_id.x * cols;\n"
    "    var m: f32 = -inf;\n"
    "    for c in thread_id.x .. cols step BLOCK { m = max(m, x[base + c] as f32); }\n"
    "    m = warp_max(m);\n"
    "    if lane_id == 0 { red[warp_id] = m; }\n"
    "    barrier();\n"
    "    var mm: f32 = red[0];\n"
    "    for k in 1 .. BLOCK / 32 { mm = max(mm, red[k]); }\n"
    "    barrier();\n"
    "    var s: f32 = 0.0;\n"
    "    for c in thread_id.x .. cols step BLOCK { s += exp(x[base + c] as f32 - mm); }\n"
    "    s = warp_sum(s);\n"
    "    if lane_id == 0 { red[warp_id] = s; }\n"
    "    barrier();\n"
    "    var tot: f32 = 0.0;\n"
    "    for k in 0 .. BLOCK / 32 { tot += red[k]; }\n"
    "    for c in thread_id.x .. cols step BLOCK {\n"
    "        y[base + c] = (exp(x[base + c] as f32 - mm) / tot) as f16;\n"
    "    }\n"
    "}\n";

static void softmax_f16_64x1024_matches_double_reference(void **state)
{
    enum { ROWS = 64, COLS = 1024 };
    kf_module *m = compile(SOFTMAX);
    uint16_t *x = malloc(ROWS * COLS * 2), *y = malloc(ROWS * COLS * 2);
    for (int i = 0; i < ROWS * COLS; i++) x[i] = kf_f16_from_double(urand() * 8);
    karg args[] = {{x, ROWS * COLS * 2, 0}, {y, ROWS * COLS * 2, 0}, {0, 0, ROWS}, {0, 0, COLS}};
    kf_error err = {0};
    kf_interp_stats st;
    double t0 = seconds();
    assert_int_equal(run(kf_module_kernel(m, NULL), ROWS, 256, args, &err, &st), KF_OK);
    double t = seconds() - t0;
    for (int r = 0; r < ROWS; r++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < COLS; c++) mx = fmax(mx, kf_f16_to_double(x[r * COLS + c]));
        for (int c = 0; c < COLS; c++) sum += exp(kf_f16_to_double(x[r * COLS + c]) - mx);
        for (int c = 0; c < COLS; c++) {
            double want = exp(kf_f16_to_double(x[r * COLS + c]) - mx) / sum;
            double got = kf_f16_to_double(y[r * COLS + c]);
            assert_true(fabs(got - want) <= 1e-3 * want + 1e-7);
        }
    }
    print_message("softmax 64x1024 f16: %llu instructions in %.3f s, %.1f M/s\n",
                  (unsigned long long)st.instructions, t, (double)st.instructions / t / 1e6);
    free(x), free(y);
    kf_module_free(m);
}

/* ---- semantics that need runtime values -------------------------------------- */

static const char SEMANTICS[] =
    "kernel sem(o: &mut [i32], u: &mut [u32], a: i32, s: u32, f: f32) {\n"
    "    o[0] = a >> (s as i32);\n"
    "    o[1] = (a as u32 >> s) as i32;\n"
    "    o[2] = a << (s as i32);\n"
    "    o[3] = f as i32;\n"
    "    u[0] = f as u32;\n"
    "    o[4] = (a as i8) as i32;\n"
    "    o[5] = (a + 2147483647) / -1;\n"
    "    u[1] = bitcast(u32, f);\n"
    "    u[2] = bitcast(u32, (f as f16 as f32));\n"
    "    o[6] = a % 7;\n"
    "}\n";

static void shifts_conversions_and_wrapping_from_source(void **state)
{
    kf_module *m = compile(SEMANTICS);
    const kf_ir_kernel *k = kf_module_kernel(m, NULL);
    int32_t o[7];
    uint32_t u[3];
    kf_error err = {0};
    karg args[] = {{o, sizeof o, 0}, {u, sizeof u, 0}, {0, 0, (uint32_t)-9}, {0, 0, 40}, {0, 0, kf_f32_bits(-3e9f)}};
    assert_int_equal(run(k, 1, 1, args, &err, NULL), KF_OK);
    assert_int_equal(o[0], -1);                        /* signed >> past width: sign fill */
    assert_int_equal(o[1], 0);                         /* unsigned >> past width */
    assert_int_equal(o[2], 0);
    assert_int_equal(o[3], INT32_MIN);                 /* saturates */
    assert_int_equal(u[0], 0);
    assert_int_equal(o[4], -9);
    assert_int_equal(o[5], -(2147483647 - 9));
    assert_int_equal(u[1], kf_f32_bits(-3e9f));
    assert_int_equal(u[2], kf_f32_bits(-INFINITY));    /* f16 overflow */
    assert_int_equal(o[6], -2);                        /* % truncates like C */
    args[2].bits = 1, args[3].bits = 31, args[4].bits = kf_f32_bits(NAN);
    assert_int_equal(run(k, 1, 1, args, &err, NULL), KF_OK);
    assert_int_equal(o[0], 0);
    assert_int_equal(o[2], INT32_MIN);
    assert_int_equal(o[3], 0);                         /* NaN -> 0 */
    assert_int_equal(o[5], INT32_MIN);                 /* INT_MIN / -1 */
    kf_module_free(m);
}

static const char VECTORS[] =
    "kernel vecs(h: &[f16], f: &mut [f32]) {\n"
    "    let hv = h as &[f16x8];\n"
    "    let v = hv[thread_id.x];\n"
    "    @unroll for k in 0 .. 8 {\n"
    "        f[thread_id.x * 8 + k] = v[k] as f32 * 2.0;\n"
    "    }\n"
    "}\n";

static void vector_view_loads_and_unrolled_lanes(void **state)
{
    kf_module *m = compile(VECTORS);
    uint16_t h[32];
    float f[32];
    for (int i = 0; i < 32; i++) h[i] = kf_f16_from_double(i * 0.5 - 3);
    karg args[] = {{h, sizeof h, 0}, {f, sizeof f, 0}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 1, 4, args, &err, NULL), KF_OK);
    for (int i = 0; i < 32; i++) assert_true(f[i] == (float)(i * 0.5 - 3) * 2.0f);
    kf_module_free(m);
}

/* Runs src's kernel as one thread at optimisation level `level` on args. */
static void run_one_thread(const char *src, int level, karg *args)
{
    kf_module *m = compile_opt(src, level);
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 1, 1, args, &err, NULL), KF_OK);
    kf_module_free(m);
}

/* An untyped @unroll variable adapts like a literal (LANGUAGE.md section
 * 5): an expression over it is exact in each iteration, then converted to
 * its context's type (before: computed in that type, so t + 1 as f32 read
 * the literal's integer bits as a float, t / 3 divided in f32 and
 * (t + 254) / 2 wrapped in u8); abs of a u64 >= 2^63 is itself; a value past
 * INT64_MAX makes the integers u64 (before: 1 << 63 wrapped in i64 and was
 * refused), where + - * wrap to the same bits; an untyped integer part
 * that does not mention t under a float operation keeps its value (before:
 * 4 * (t + 0.5) was 0, its cast of 4 to f64 never folded). */
static const char UNROLL_UNTYPED[] =
    "kernel k(f: &mut [f32], d: &mut [f64], h: &mut [f16], b: &mut [u8], u: &mut [u32], q: &mut [u64]) {\n"
    "    @unroll for t in 0 .. 4 {\n"
    "        let x: f32 = t + 1;\n"
    "        f[t] = x;\n"
    "        f[4 + t] = t / 3;\n"
    "        f[8 + t] = t * 0.5 + (t / 2);\n"
    "        d[t] = t * 1000 + 7;\n"
    "        d[4 + t] = 4 * (t + 0.5);\n"
    "        d[8 + t] = 1 + t * 0.5;\n"
    "        h[t] = (7 - t) as f16;\n"
    "        let y: u8 = (t + 254) / 2;\n"
    "        b[t] = y;\n"
    "        let z: u32 = (t - 1) / 2 + 5;\n"
    "        u[t] = z + ((t - 1) & 7);\n"
    "        let a: u64 = 18446744073709551614 - (t as u64);\n"
    "        q[t] = abs(a);\n"
    "        q[4 + t] = (3 - t) << (62 - t);\n"
    "        q[8 + t] = ((t - 1) + 9223372036854775808) / 2;\n"
    "    }\n"
    "}\n";

static void untyped_unroll_expressions_are_exact(void **state)
{
    for (int level = KF_OPT_O0; level <= KF_OPT_O1; level++) {
        float f[12];
        double d[12];
        uint16_t h[4];
        uint8_t b[4];
        uint32_t u[4];
        uint64_t q[12];
        karg args[] = {{f, sizeof f, 0}, {d, sizeof d, 0}, {h, sizeof h, 0}, {b, sizeof b, 0}, {u, sizeof u, 0}, {q, sizeof q, 0}};
        run_one_thread(UNROLL_UNTYPED, level, args);
        static const float ef[12] = {1, 2, 3, 4, 0, 0, 0, 1, 0, 0.5f, 2, 2.5f};
        static const uint8_t eb[4] = {127, 127, 128, 128};
        static const uint32_t eu[4] = {5 + 7, 5 + 0, 5 + 1, 6 + 2};
        for (int i = 0; i < 12; i++) assert_true(f[i] == ef[i]);
        for (int t = 0; t < 4; t++) {
            assert_true(d[t] == t * 1000 + 7);
            assert_true(d[4 + t] == 4 * (t + 0.5) && d[8 + t] == 1 + t * 0.5);
            assert_int_equal(h[t], kf_f16_from_double(7 - t));
            assert_int_equal(b[t], eb[t]);
            assert_int_equal(u[t], eu[t]);
            assert_true(q[t] == UINT64_MAX - 1 - (uint64_t)t);
            assert_true(q[4 + t] == (uint64_t)(3 - t) << (62 - t));
            assert_true(q[8 + t] == ((uint64_t)t - 1 + (UINT64_C(1) << 63)) / 2);
        }
    }
}

/* An @unroll loop over a typed signed variable narrower than 64 bits with a
 * negative bound (before: the bound's bits, masked to the type's width,
 * compared as an i64, so -2 as i32 was 4294967294 and the loop ran no
 * iteration). o[0..]: the values, o[7]: the count. */
static const char UNROLL_NEGATIVE[] =
    "const A: i16 = -3;\n"
    "kernel k(o: &mut [i32], p: &mut [i32]) {\n"
    "    let a: i32 = -2;\n"
    "    var c: i32 = 0;\n"
    "    @unroll for t in a .. 1 { o[c as u32] = t; c += 1; }\n"
    "    o[7] = c;\n"
    "    c = 0;\n"
    "    @unroll for t in (-4 as i8) .. 3 step 3 { p[c as u32] = t as i32; c += 1; }\n"
    "    @unroll for t in A .. (-1 as i16) { p[c as u32] = t as i32; c += 1; }\n"
    "    p[7] = c;\n"
    "}\n";

static void unroll_over_negative_typed_bounds(void **state)
{
    for (int level = KF_OPT_O0; level <= KF_OPT_O1; level++) {
        int32_t o[8] = {0}, p[8] = {0};
        karg args[] = {{o, sizeof o, 0}, {p, sizeof p, 0}};
        run_one_thread(UNROLL_NEGATIVE, level, args);
        static const int32_t eo[8] = {-2, -1, 0, 0, 0, 0, 0, 3}, ep[8] = {-4, -1, 2, -3, -2, 0, 0, 5};
        assert_memory_equal(o, eo, sizeof eo);
        assert_memory_equal(p, ep, sizeof ep);
    }
}

/* min, max, clamp, abs and select over untyped constants and an @unroll
 * variable are untyped constants too, typed by their context exactly per
 * iteration (before: they took i32 unless the context was a declaration,
 * so max(x, min(t, 2)) with x: i16 was refused and min(t + 254, 255) as u8
 * overflowed u8); over untyped integers past INT64_MAX they stay exact
 * (before: refused as operands). */
static const char UNROLL_GENERIC[] =
    "kernel k(x: &[i16], o: &mut [i16], b: &mut [u8], p: &mut [i32], f: &mut [f32], w: &mut [u64]) {\n"
    "    @unroll for t in 0 .. 5 {\n"
    "        o[t] = max(x[0], min(t, 2));\n"
    "        let y: u8 = min(t + 254, 255);\n"
    "        b[t] = y;\n"
    "        p[t] = clamp(x[0] as i32, abs(t - 3), 5) + select(t > 1, t, 10);\n"
    "        f[t] = max(t * 0.5, 1);\n"
    "        w[t] = (min(t, 2) + 18446744073709551610) / 2;\n"
    "    }\n"
    "    p[5] = max(9223372036854775808, 1) / 9223372036854775808;\n"
    "    w[5] = abs(-9223372036854775808) + 0;\n"
    "    w[6] = min(select(true, 18446744073709551615, 1), 5);\n"
    "}\n";

static void unroll_generic_builtins_adapt(void **state)
{
    for (int level = KF_OPT_O0; level <= KF_OPT_O1; level++) {
        int16_t x[1] = {-5}, o[5];
        uint8_t b[5];
        int32_t p[6];
        float f[5];
        uint64_t w[7];
        karg args[] = {{x, sizeof x, 0}, {o, sizeof o, 0}, {b, sizeof b, 0}, {p, sizeof p, 0}, {f, sizeof f, 0}, {w, sizeof w, 0}};
        run_one_thread(UNROLL_GENERIC, level, args);
        static const int16_t eo[5] = {0, 1, 2, 2, 2};
        static const uint8_t eb[5] = {254, 255, 255, 255, 255};
        static const int32_t ep[6] = {13, 12, 3, 3, 5, 1};
        static const float ef[5] = {1, 1, 1, 1.5f, 2};
        static const uint64_t ew[7] = {UINT64_MAX / 2 - 2, UINT64_MAX / 2 - 2, UINT64_MAX / 2 - 1, UINT64_MAX / 2 - 1,
                                       UINT64_MAX / 2 - 1, UINT64_C(1) << 63, 5};
        assert_memory_equal(o, eo, sizeof eo);
        assert_memory_equal(b, eb, sizeof eb);
        assert_memory_equal(p, ep, sizeof ep);
        assert_memory_equal(f, ef, sizeof ef);
        assert_memory_equal(w, ew, sizeof ew);
    }
}

/* Two untyped constants compare as exact numbers (before: both took i64,
 * u64 or f64, so -1 < 2^64 - 1 was refused and 2^53 + 1 == 2^53 as a float
 * held); each bit of u[0] is one comparison, u[1] the same in a const. */
static const char UNTYPED_COMPARE[] =
    "const C: bool = 9007199254740993 > 9007199254740992.0 && -1 < 18446744073709551615;\n"
    "kernel k(u: &mut [u32]) {\n"
    "    var r: u32 = 0;\n"
    "    if -1 < 18446744073709551615 { r |= 1; }\n"
    "    if 9007199254740993 == 9007199254740992.0 { r |= 2; }\n"
    "    if 9007199254740993 > 9007199254740992.0 { r |= 4; }\n"
    "    if nan != 1 { r |= 8; }\n"
    "    if 1 < nan || 1 >= nan || nan == nan { r |= 16; }\n"
    "    if -0.0 == 0 { r |= 32; }\n"
    "    if 18446744073709551615 >= -1.5 { r |= 64; }\n"
    "    if -2.5 < -2 && 2.5 > 2 { r |= 128; }\n"
    "    if inf > 18446744073709551615 && -inf < -9223372036854775808 { r |= 256; }\n"
    "    if 18446744073709551615 == 18446744073709551616.0 { r |= 512; }\n"
    "    u[0] = r;\n"
    "    u[1] = select(C, 1, 0);\n"
    "}\n";

static void untyped_comparisons_are_exact(void **state)
{
    kf_module *m = compile(UNTYPED_COMPARE);
    uint32_t u[2] = {0};
    karg args[] = {{u, sizeof u, 0}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 1, 1, args, &err, NULL), KF_OK);
    assert_int_equal(u[0], 1 | 4 | 8 | 32 | 64 | 128 | 256);
    assert_int_equal(u[1], 1);
    kf_module_free(m);
}

static const char SHUFFLES[] =
    "kernel sh(x: &[f64], y: &mut [f64], z: &[i64], w: &mut [i64], q: &[f32x2], r: &mut [f32x2]) {\n"
    "    let t = thread_id.x;\n"
    "    y[t] = shfl_down(x[t], 1);\n"
    "    w[t] = warp_max(z[t]);\n"
    "    r[t] = warp_sum(q[t]);\n"
    "}\n";

static void shuffles_of_f64_i64_and_vectors(void **state)
{
    kf_module *m = compile(SHUFFLES);
    double x[32], y[32];
    int64_t z[32], w[32];
    float q[64], r[64], s0 = 0, s1 = 0;
    for (int i = 0; i < 32; i++) {
        x[i] = i + 0.25;
        z[i] = i == 9 ? INT64_C(1) << 40 : -(int64_t)i * 1000000000000;
        q[2 * i] = (float)i, q[2 * i + 1] = (float)(i * 3);
        s0 += (float)i, s1 += (float)(i * 3);
    }
    karg args[] = {{x, sizeof x, 0}, {y, sizeof y, 0}, {z, sizeof z, 0}, {w, sizeof w, 0}, {q, sizeof q, 0},
                   {r, sizeof r, 0}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 1, 32, args, &err, NULL), KF_OK);
    for (int i = 0; i < 32; i++) {
        assert_true(y[i] == x[i < 31 ? i + 1 : 31]);
        assert_true(w[i] == INT64_C(1) << 40);
        assert_true(r[2 * i] == s0 && r[2 * i + 1] == s1);
    }
    kf_module_free(m);
}

static const char INTBUILTINS[] =
    "kernel ib(o: &mut [u32], s: &mut [i32], a: u32, b: i32) {\n"
    "    o[0] = cdiv(a, 7);\n"
    "    o[1] = clz(a);\n"
    "    o[2] = popc(a);\n"
    "    o[3] = mul_hi(a, a);\n"
    "    o[4] = select(a > 5, a, 2);\n"
    "    s[0] = cdiv(b, 4);\n"
    "    s[1] = clamp(b, -3, 3);\n"
    "    s[2] = abs(b);\n"
    "    s[3] = min(b, 2);\n"
    "    s[4] = b % 4;\n"
    "}\n";

static void integer_builtins_from_source(void **state)
{
    kf_module *m = compile(INTBUILTINS);
    uint32_t o[5];
    int32_t s[5];
    karg args[] = {{o, sizeof o, 0}, {s, sizeof s, 0}, {0, 0, 0xF0000001u}, {0, 0, (uint32_t)-9}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 1, 1, args, &err, NULL), KF_OK);
    assert_int_equal(o[0], 0xF0000001u / 7 + (0xF0000001u % 7 != 0));
    assert_int_equal(o[1], 0);
    assert_int_equal(o[2], 5);
    assert_int_equal(o[3], (uint32_t)(((uint64_t)0xF0000001u * 0xF0000001u) >> 32));
    assert_int_equal(o[4], 0xF0000001u);
    assert_int_equal(s[0], -2);                       /* -9/4 = -2.25 rounds toward +inf */
    assert_int_equal(s[1], -3);
    assert_int_equal(s[2], 9);
    assert_int_equal(s[3], -9);
    assert_int_equal(s[4], -1);
    kf_module_free(m);
}

static const char ATOMICS[] =
    "kernel at(c: &mut [u32], m: &mut [i32], x: &[i32]) {\n"
    "    let t = global_id.x;\n"
    "    atomic_add(c, 0, 1);\n"
    "    atomic_max(m, 0, x[t]);\n"
    "    atomic_min(m, 1, x[t]);\n"
    "    let old = atomic_cas(c, 1, 0, t + 1);\n"
    "    if old == 0 { atomic_exch(c, 2, t); }\n"
    "}\n";

static void atomics_from_source(void **state)
{
    kf_module *m = compile(ATOMICS);
    uint32_t c[3] = {0, 0, 12345};
    int32_t mm[2] = {INT32_MIN, INT32_MAX}, x[512];
    for (int i = 0; i < 512; i++) x[i] = (i * 7919) % 2000 - 1000;
    int32_t mx = INT32_MIN, mn = INT32_MAX;
    for (int i = 0; i < 512; i++) mx = x[i] > mx ? x[i] : mx, mn = x[i] < mn ? x[i] : mn;
    karg args[] = {{c, sizeof c, 0}, {mm, sizeof mm, 0}, {x, sizeof x, 0}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 4, 128, args, &err, NULL), KF_OK);
    assert_int_equal(c[0], 512);
    assert_int_equal(mm[0], mx);
    assert_int_equal(mm[1], mn);
    assert_int_equal(c[1], c[2] + 1);                 /* the one winner wrote its id */
    kf_module_free(m);
}

static const char WHILEFN[] =
    "fn collatz(n: u32) -> u32 {\n"
    "    var x = n;\n"
    "    var steps: u32 = 0;\n"
    "    while x != 1 {\n"
    "        if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }\n"
    "        steps += 1;\n"
    "    }\n"
    "    return steps;\n"
    "}\n"
    "kernel cz(o: &mut [u32]) {\n"
    "    o[global_id.x] = collatz(global_id.x + 1);\n"
    "}\n";

static void while_loops_in_inlined_fns(void **state)
{
    kf_module *m = compile(WHILEFN);
    uint32_t o[1000];
    karg args[] = {{o, sizeof o, 0}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 4, 250, args, &err, NULL), KF_OK);
    for (uint32_t i = 0; i < 1000; i++) {
        uint32_t x = i + 1, n = 0;
        while (x != 1) x = x % 2 ? 3 * x + 1 : x / 2, n++;
        assert_int_equal(o[i], n);
    }
    kf_module_free(m);
}

/* ---- error reports at source lines -------------------------------------------- */

/* Runs kernel src on grid x block with buffers of n u32 elements; expects a
 * runtime error at line `line` whose message contains `what`, and returns
 * the message. */
static void expect_fault(const char *src, uint32_t grid, uint32_t block, uint32_t line, const char *what)
{
    kf_module *m = compile(src);
    const kf_ir_kernel *k = kf_module_kernel(m, NULL);
    uint32_t mem[64] = {0};
    karg args[4];
    for (uint32_t i = 0; i < 4; i++) args[i] = (karg){mem, sizeof mem, 0};
    kf_error err = {0};
    assert_int_equal(run(k, grid, block, args, &err, NULL), KF_ERR_RUNTIME);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "kernel %s: t.kf:%u:", k->name, line);
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, what)) print_error("got: %s\n", err.msg);
    assert_int_equal(strncmp(err.msg, prefix, strlen(prefix)), 0);
    assert_non_null(strstr(err.msg, what));
    assert_int_equal(err.loc.line, line);
    kf_module_free(m);
}

static void source_errors_are_reported_at_their_line(void **state)
{
    expect_fault("kernel oob(x: &[u32], y: &mut [u32]) {\n"
                 "    let i = global_id.x;\n"
                 "    y[i] = x[i + 1];\n"
                 "}\n",
                 2, 32, 3, "out-of-bounds load of x[64] (length 64) in block (1,0,0) thread (31,0,0)");
    expect_fault("kernel oobs(x: &[u32], y: &mut [u32]) {\n"
                 "    y[global_id.x * 2] = 1;\n"
                 "}\n",
                 1, 64, 2, "out-of-bounds store of y[64] (length 64) in block (0,0,0) thread (32,0,0)");
    expect_fault("kernel div(x: &[u32], y: &mut [u32]) {\n"
                 "    let i = thread_id.x;\n"
                 "    y[i] = 100 / (5 - i);\n"
                 "}\n",
                 1, 8, 3, "integer division by zero in block (0,0,0) thread (5,0,0)");
    expect_fault("kernel bar(x: &[u32], y: &mut [u32]) {\n"
                 "    if thread_id.x < 40 {\n"
                 "        barrier();\n"
                 "    }\n"
                 "}\n",
                 1, 64, 3, "divergent barrier: thread (40,0,0) has exited");
    expect_fault("kernel wrp(x: &[u32], y: &mut [u32]) {\n"
                 "    if lane_id < 20 {\n"
                 "        y[thread_id.x] = warp_sum(x[thread_id.x]);\n"
                 "    }\n"
                 "}\n",
                 1, 48, 3, "warp builtin not reached by all 32 lanes of warp 0");
    expect_fault("kernel loc(x: &[u32], y: &mut [u32]) {\n"
                 "    var a: u32[4];\n"
                 "    a[0] = 1;\n"
                 "    y[thread_id.x] = a[thread_id.x];\n"
                 "}\n",
                 1, 4, 4, "read of local array element a[1] before it was written in block (0,0,0) thread (1,0,0)");
    expect_fault("kernel sh(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[16];\n"
                 "    s[thread_id.x] = 1;\n"
                 "}\n",
                 1, 32, 3, "out-of-bounds store of shared array s[16] (length 16)");
    expect_fault("kernel shn(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[16];\n"
                 "    s[thread_id.x] = 1;\n"
                 "    y[thread_id.x] = s[(thread_id.x as i64) - 1];\n"
                 "}\n",
                 1, 16, 4, "out-of-bounds load of shared array s[-1] (length 16) in block (0,0,0) thread (0,0,0)");
    expect_fault("kernel at(x: &[u32], y: &mut [u32]) {\n"
                 "    atomic_add(y, thread_id.x + 60, 1);\n"
                 "}\n",
                 1, 8, 2, "out-of-bounds atomic_add of y[64] (length 64) in block (0,0,0) thread (4,0,0)");
}

/* ---- shared memory: unwritten reads and races ------------------------------ */

/* Runs kernel src (arguments: two buffers of 64 u32) on grid x (bx, by)
 * and expects exactly the runtime error `msg`, at line:col. */
static void expect_exact(const char *src, uint32_t grid, uint32_t bx, uint32_t by, uint32_t line, uint32_t col,
                         const char *msg)
{
    kf_module *m = compile(src);
    const kf_ir_kernel *k = kf_module_kernel(m, NULL);
    uint32_t mem[64] = {0};
    kf_interp_arg args[2];
    for (uint32_t i = 0; i < 2; i++) args[i] = (kf_interp_arg){.is_buffer = true, .data = mem, .bytes = sizeof mem};
    kf_interp_launch l = {{grid, 1, 1}, {bx, by, 1}, 0};
    kf_error err = {0};
    assert_int_equal(kf_interp_run(k, args, 2, &l, NULL, &err), KF_ERR_RUNTIME);
    if (strcmp(err.msg, msg) != 0) print_error("got:  %s\nwant: %s\n", err.msg, msg);
    assert_string_equal(err.msg, msg);
    assert_int_equal(err.loc.line, line);
    assert_int_equal(err.loc.col, col);
    kf_module_free(m);
}

/* Runs kernel src (two buffers of 64 u32: x = 0..63 and y) on one block of
 * `block` threads; expects success and returns y in out. */
static void expect_clean(const char *src, uint32_t block, uint32_t *out)
{
    kf_module *m = compile(src);
    uint32_t x[64];
    for (uint32_t i = 0; i < 64; i++) x[i] = i;
    memset(out, 0, 64 * sizeof *out);
    karg args[] = {{x, sizeof x, 0}, {out, 64 * sizeof *out, 0}};
    kf_error err = {0};
    kf_status st = run(kf_module_kernel(m, NULL), 1, block, args, &err, NULL);
    if (st) print_error("%s\n", err.msg);
    assert_int_equal(st, KF_OK);
    kf_module_free(m);
}

static void shared_read_before_any_write_is_reported(void **state)
{
    expect_exact("kernel sh(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    if thread_id.x < 32 { s[thread_id.x] = 1; }\n"
                 "    barrier();\n"
                 "    y[thread_id.x] = s[63 - thread_id.x];\n"
                 "}\n",
                 1, 64, 1, 5, 23,
                 "kernel sh: t.kf:5:23: read of shared array element s[63] before any thread of the block wrote it "
                 "in block (0,0,0) thread (0,0,0)");
    /* the second block starts with nothing written, whatever the first did */
    expect_exact("kernel sh2(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[4];\n"
                 "    if block_id.x == 0 { s[thread_id.x] = 7; }\n"
                 "    barrier();\n"
                 "    y[thread_id.x] = s[thread_id.x];\n"
                 "}\n",
                 2, 4, 1, 5, 23,
                 "kernel sh2: t.kf:5:23: read of shared array element s[0] before any thread of the block wrote it "
                 "in block (1,0,0) thread (0,0,0)");
    /* a thread's own later write does not explain its read */
    expect_exact("kernel own(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    s[thread_id.x] += 1;\n"
                 "}\n",
                 1, 64, 1, 3, 6,
                 "kernel own: t.kf:3:6: read of shared array element s[0] before any thread of the block wrote it "
                 "in block (0,0,0) thread (0,0,0)");
}

/* A read that finds the element unwritten because the thread that writes
 * it has not run yet is a missing barrier: reported as the race. */
static void shared_read_before_a_later_write_is_a_race(void **state)
{
    expect_exact("kernel mb(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    s[thread_id.x] = x[thread_id.x];\n"
                 "    y[thread_id.x] = s[63 - thread_id.x];\n"
                 "}\n",
                 1, 64, 1, 3, 6,
                 "kernel mb: t.kf:3:6: race on shared s[63]: read by thread (0,0,0) and written by thread (63,0,0) "
                 "with no barrier between in block (0,0,0) thread (63,0,0)");
}

static void shared_race_write_then_read_across_warps(void **state)
{
    expect_exact("kernel raw(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    s[thread_id.x] = x[thread_id.x];\n"
                 "    y[thread_id.x] = s[thread_id.x % 32];\n"
                 "}\n",
                 1, 64, 1, 4, 23,
                 "kernel raw: t.kf:4:23: race on shared s[0]: written by thread (0,0,0) at t.kf:3:6 and read by "
                 "thread (32,0,0) with no barrier between in block (0,0,0) thread (32,0,0)");
    /* a warp builtin orders lanes of one warp only */
    expect_exact("kernel rawshfl(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    s[thread_id.x] = x[thread_id.x];\n"
                 "    let v = warp_sum(x[thread_id.x]);\n"
                 "    y[thread_id.x] = s[(thread_id.x + 32) % 64] + v;\n"
                 "}\n",
                 1, 64, 1, 5, 23,
                 "kernel rawshfl: t.kf:5:23: race on shared s[32]: written by thread (32,0,0) at t.kf:3:6 and read "
                 "by thread (0,0,0) with no barrier between in block (0,0,0) thread (0,0,0)");
    /* the ballot orders the first write and read, not the write after it */
    expect_exact("kernel lanes(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[32];\n"
                 "    s[lane_id] = x[lane_id] * 3;\n"
                 "    let b = ballot(true);\n"
                 "    y[lane_id] = s[lane_id ^ 1] + (b & 0);\n"
                 "    s[lane_id] = s[lane_id] + 1;\n"
                 "}\n",
                 1, 32, 1, 5, 19,
                 "kernel lanes: t.kf:5:19: race on shared s[0]: written by thread (0,0,0) at t.kf:6:6 and read by "
                 "thread (1,0,0) with no barrier between in block (0,0,0) thread (1,0,0)");
}

static void shared_race_read_then_write(void **state)
{
    /* lanes of one warp with no warp builtin between are not ordered */
    expect_exact("kernel war(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    s[thread_id.x] = x[thread_id.x];\n"
                 "    barrier();\n"
                 "    let v = s[(thread_id.x + 1) % 64];\n"
                 "    s[thread_id.x] = v;\n"
                 "}\n",
                 1, 64, 1, 6, 6,
                 "kernel war: t.kf:6:6: race on shared s[1]: read by thread (0,0,0) and written by thread (1,0,0) "
                 "with no barrier between in block (0,0,0) thread (1,0,0)");
    /* readers in another warp than the writer */
    expect_exact("kernel war2(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[1];\n"
                 "    if thread_id.x == 0 { s[0] = 5; }\n"
                 "    barrier();\n"
                 "    y[thread_id.x] = s[0];\n"
                 "    if thread_id.x == 40 { s[0] = 6; }\n"
                 "}\n",
                 1, 64, 1, 6, 29,
                 "kernel war2: t.kf:6:29: race on shared s[0]: read by thread (0,0,0) and written by thread (40,0,0) "
                 "with no barrier between in block (0,0,0) thread (40,0,0)");
    /* a warp builtin orders the writer's own warp, not the readers of another */
    expect_exact("kernel war3(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[1];\n"
                 "    if thread_id.x == 0 { s[0] = 5; }\n"
                 "    barrier();\n"
                 "    let v = warp_sum(s[0]);\n"
                 "    if thread_id.x == 5 { s[0] = v; }\n"
                 "}\n",
                 1, 64, 1, 6, 28,
                 "kernel war3: t.kf:6:28: race on shared s[0]: read by thread (32,0,0) and written by thread (5,0,0) "
                 "with no barrier between in block (0,0,0) thread (5,0,0)");
}

static void shared_race_two_writes(void **state)
{
    expect_exact("kernel waw(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[2];\n"
                 "    s[thread_id.x] = thread_id.y;\n"
                 "}\n",
                 1, 2, 2, 3, 6,
                 "kernel waw: t.kf:3:6: race on shared s[0]: written by thread (0,0,0) at t.kf:3:6 and written by "
                 "thread (0,1,0) with no barrier between in block (0,0,0) thread (0,1,0)");
}

/* The report names the first race of the block even when a later fault
 * stops a thread; a divergent barrier that lets a race happen is reported
 * instead of the race. */
static void shared_race_precedence(void **state)
{
    expect_exact("kernel first(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    s[0] = thread_id.x;\n"
                 "    y[thread_id.x + 62] = 1;\n"
                 "}\n",
                 1, 4, 1, 3, 6,
                 "kernel first: t.kf:3:6: race on shared s[0]: written by thread (0,0,0) at t.kf:3:6 and written by "
                 "thread (1,0,0) with no barrier between in block (0,0,0) thread (1,0,0)");
    expect_exact("kernel div(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    s[thread_id.x] = 1;\n"
                 "    if thread_id.x < 32 { barrier(); }\n"
                 "    y[thread_id.x] = s[63 - thread_id.x];\n"
                 "}\n",
                 1, 64, 1, 4, 27,
                 "kernel div: t.kf:4:27: divergent barrier: thread (32,0,0) has exited in block (0,0,0) thread "
                 "(0,0,0)");
}

/* Ordered accesses give no report: barriers, a warp builtin between lanes
 * of one warp, a thread's own accesses, reads by many threads. */
static void shared_ordered_accesses_are_not_races(void **state)
{
    uint32_t y[64];
    expect_clean("kernel lanes(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[32];\n"
                 "    s[lane_id] = x[lane_id] * 3;\n"
                 "    let b = ballot(true);\n"
                 "    y[lane_id] = s[lane_id ^ 1] + (b & 0);\n"
                 "    let c = ballot(true);\n"
                 "    s[lane_id] = s[lane_id] + (c & 1);\n"
                 "}\n",
                 32, y);
    for (uint32_t i = 0; i < 32; i++) assert_int_equal(y[i], (i ^ 1) * 3);
    expect_clean("kernel rounds(x: &[u32], y: &mut [u32]) {\n"
                 "    shared s: u32[64];\n"
                 "    s[thread_id.x] = x[thread_id.x];\n"
                 "    barrier();\n"
                 "    var n: u32 = 32;\n"
                 "    while n > 0 {\n"
                 "        if thread_id.x < n { s[thread_id.x] += s[thread_id.x + n]; }\n"
                 "        barrier();\n"
                 "        n = n / 2;\n"
                 "    }\n"
                 "    y[thread_id.x] = s[0];\n"
                 "}\n",
                 64, y);
    for (uint32_t i = 0; i < 64; i++) assert_int_equal(y[i], 64 * 63 / 2);
}


/* ---- shared memory (LANGUAGE.md section 8) ----------------------------------- */

static const char DYN[] =
    "kernel rev(o: &mut [u32], n: u32) {\n"
    "    shared d: u32[];\n"
    "    for i in thread_id.x .. n step 32 { d[i] = i * 3; }\n"
    "    barrier();\n"
    "    for i in thread_id.x .. n step 32 { o[i] = d[n - 1 - i]; }\n"
    "}\n";

/* The dynamic array has floor(bytes / 4) u32 elements for the launch. */
static void dynamic_shared_length_follows_the_launch(void **state)
{
    kf_module *m = compile(DYN);
    uint32_t o[100];
    karg a[] = {{o, sizeof o, 0}, {0, 0, 100}};
    kf_error err = {0};
    assert_int_equal(run_dyn(kf_module_kernel(m, NULL), 1, 32, 402, a, &err, NULL), KF_OK);   /* 100 elements, 2 bytes spare */
    for (uint32_t i = 0; i < 100; i++) assert_int_equal(o[i], 3 * (99 - i));
    assert_int_equal(run_dyn(kf_module_kernel(m, NULL), 1, 32, 396, a, &err, NULL), KF_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "t.kf:3:42: out-of-bounds store of shared array d[99] (length 99)"));
    kf_module_free(m);
}

/* Static (each array from a 16-byte boundary) and dynamic bytes together
 * may reach 232448, sm_90's limit, not more. */
static void shared_memory_limit_is_sm90s(void **state)
{
    kf_module *m = compile("kernel k(o: &mut [u32]) {\n    shared a: u8[5];\n    shared d: u8[];\n"
                           "    a[0] = 1;\n    d[0] = 2;\n    o[0] = (a[0] + d[0]) as u32;\n}\n");
    uint32_t o[1] = {0};
    karg a[] = {{o, sizeof o, 0}};
    kf_error err = {0};
    assert_int_equal(run_dyn(kf_module_kernel(m, NULL), 1, 1, 232448 - 16, a, &err, NULL), KF_OK);
    assert_int_equal(o[0], 3);
    assert_int_equal(run_dyn(kf_module_kernel(m, NULL), 1, 1, 232448 - 15, a, &err, NULL), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "kernel k: 16 bytes of static shared memory + 232433 dynamic = 232449 bytes, "
                                    "over the limit of 232448 bytes per block (227 KiB, sm_90)"));
    kf_module_free(m);
}

/* Views see the same bytes with their own element type and count; a write
 * through a wide view covers every narrow element for the race check. */
static void shared_views_share_bytes(void **state)
{
    kf_module *m = compile(
        "kernel k(o: &mut [u32], o4: &mut [f32x4]) {\n"
        "    shared s: f32[8];\n"
        "    let w = s as shared u32[];\n"
        "    let v = s as shared f32x4[];\n"
        "    if thread_id.x == 0 { v[1] = f32x4(1.0, 2.0, 3.0, 4.0); }\n"
        "    if thread_id.x == 1 { s[0] = -1.0; s[1] = 0.5; s[2] = 0.0; s[3] = 8.0; }\n"
        "    barrier();\n"
        "    if thread_id.x == 2 { o[0] = w[5]; o[1] = w[0]; o4[0] = v[0]; o4[1] = v[1]; }\n"
        "}\n");
    uint32_t o[2];
    float o4[8];
    karg a[] = {{o, sizeof o, 0}, {o4, sizeof o4, 0}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 1, 3, a, &err, NULL), KF_OK);
    assert_int_equal(o[0], kf_f32_bits(2.0f));
    assert_int_equal(o[1], kf_f32_bits(-1.0f));
    assert_true(o4[0] == -1.0f && o4[1] == 0.5f && o4[3] == 8.0f && o4[4] == 1.0f && o4[7] == 4.0f);
    kf_module_free(m);
}

/* A fn's shared array is one per kernel, whatever the call site: what the
 * first call writes, the second reads. */
static void fn_shared_array_is_shared_by_call_sites(void **state)
{
    kf_module *m = compile(
        "fn stage(v: u32, keep: bool) -> u32 {\n"
        "    shared box: u32[32];\n"
        "    var old: u32 = 0;\n"
        "    if !keep { old = box[thread_id.x]; }\n"
        "    barrier();\n"
        "    box[thread_id.x] = v;\n"
        "    barrier();\n"
        "    return old;\n"
        "}\n"
        "kernel k(o: &mut [u32]) {\n"
        "    let first = stage(thread_id.x + 10, true);\n"
        "    o[thread_id.x] = stage(0, false) + first;\n"
        "}\n");
    uint32_t o[32];
    karg a[] = {{o, sizeof o, 0}};
    kf_error err = {0};
    assert_int_equal(run(kf_module_kernel(m, NULL), 1, 32, a, &err, NULL), KF_OK);
    for (uint32_t t = 0; t < 32; t++) assert_int_equal(o[t], t + 10);
    assert_int_equal(kf_module_kernel(m, NULL)->narrays, 1);
    kf_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(saxpy_matches_float_reference),
        cmocka_unit_test(reduce_sum_over_a_million_elements),
        cmocka_unit_test(rmsnorm_f16_matches_double_reference),
        cmocka_unit_test(softmax_f16_64x1024_matches_double_reference),
        cmocka_unit_test(shifts_conversions_and_wrapping_from_source),
        cmocka_unit_test(vector_view_loads_and_unrolled_lanes),
        cmocka_unit_test(untyped_unroll_expressions_are_exact),
        cmocka_unit_test(untyped_comparisons_are_exact),
        cmocka_unit_test(unroll_over_negative_typed_bounds),
        cmocka_unit_test(unroll_generic_builtins_adapt),
        cmocka_unit_test(shuffles_of_f64_i64_and_vectors),
        cmocka_unit_test(integer_builtins_from_source),
        cmocka_unit_test(atomics_from_source),
        cmocka_unit_test(while_loops_in_inlined_fns),
        cmocka_unit_test(source_errors_are_reported_at_their_line),
        cmocka_unit_test(shared_read_before_any_write_is_reported),
        cmocka_unit_test(shared_read_before_a_later_write_is_a_race),
        cmocka_unit_test(shared_race_write_then_read_across_warps),
        cmocka_unit_test(shared_race_read_then_write),
        cmocka_unit_test(shared_race_two_writes),
        cmocka_unit_test(shared_race_precedence),
        cmocka_unit_test(shared_ordered_accesses_are_not_races),
        cmocka_unit_test(dynamic_shared_length_follows_the_launch),
        cmocka_unit_test(shared_memory_limit_is_sm90s),
        cmocka_unit_test(shared_views_share_bytes),
        cmocka_unit_test(fn_shared_array_is_shared_by_call_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
