/* The core-IR optimiser (ir/opt.c, ir/opt_fold.c), transformation by
 * transformation: each test gives a program, the IR the pass leaves
 * (kf_ir_print without the location comments) and, where it runs, the
 * interpreter's results at -O0 and -O1, which must be identical bit for
 * bit (or the same error). Negative tests name what must NOT happen: a
 * value rewritten in a loop forwarded past the rewrite, a load that may
 * fault or a division that may trap removed, a barrier or warp operation
 * moved, approximate math folded, an unknown op looked into. Vector
 * constants fold lane by lane, bit for bit, and the exact-constant pass
 * (ir/opt_exact.c) replaces float operations on constants at -O0 too.
 * Then every library kernel: optimised (never skipped), still linked, its
 * effects a subsequence of the -O0 ones in the same order, and the PTX of
 * the decode kernels free of div/rem by powers of two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../emit/emit.h"
#include "interp.h"
#include "kf_irbuild.h"
#include "opt.h"
#include "ptx_kf_files.h"

static kf_module *compile_at(const char *src, kf_opt_level level)
{
    kf_compile_opts o = {NULL, 0, level};
    kf_module *m = NULL;
    kf_status st = kf_compile("t.kf", src, strlen(src), &o, &m);
    if (st != KF_OK && m) {
        kf_buf out = {0};
        kf_diags_render(&out, &m->diags, m->source, m->source_len);
        print_error("%s\n", out.data ? out.data : "");
        kf_buf_free(&out);
    }
    assert_int_equal(st, KF_OK);
    return m;
}

/* The kernel's IR as kf_ir_print writes it, less the header, the array
 * lines and the `; file:line:col` comments (heap text). */
static char *ir_text(const kf_ir_kernel *k)
{
    kf_buf raw = {0}, out = {0};
    kf_ir_print(&raw, k);
    assert_non_null(raw.data);
    for (char *line = strchr(raw.data, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char *s = line + 1, *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *semi = memchr(s, ';', n);
        if (semi) n = (size_t)(semi - s);
        while (n && s[n - 1] == ' ') n--;
        if (n >= 3 && (!strncmp(s, "  local", 7) || !strncmp(s, "  shared", 8))) continue;
        kf_buf_append(&out, s, n);
        kf_buf_puts(&out, "\n");
    }
    kf_buf_free(&raw);
    return kf_buf_take(&out);
}

static void assert_ir(const kf_ir_kernel *k, const char *want)
{
    char *got = ir_text(k);
    if (strcmp(got, want) != 0) fail_msg("IR differs; got:\n%s\nwant:\n%s", got, want);
    free(got);
}

/* src's only kernel compiled at -O0 (its IR then is `before` unless NULL),
 * then optimised here; its statistics. */
static kf_module *optimise_from(const char *src, const char *before, kf_opt_stats *st)
{
    kf_module *m = compile_at(src, KF_OPT_O0);
    if (before) assert_ir(&m->kernels[0], before);
    assert_int_equal(m->nkernels, 1);
    assert_int_equal(kf_opt_kernel_stats(&m->arena, &m->kernels[0], st), KF_OK);
    assert_false(st->skipped);
    assert_true(kf_ir_linked(&m->kernels[0]));
    return m;
}

static kf_module *optimise(const char *src, kf_opt_stats *st) { return optimise_from(src, NULL, st); }

/* ---- running at both levels ------------------------------------------------ */

typedef struct {
    void *p;          /* buffer (copied per run), or NULL for a scalar */
    size_t bytes;
    uint64_t bits;    /* scalar */
} karg;

typedef struct {
    kf_status st;
    char msg[1024];
    void *out[8];     /* every buffer after the run */
} run_result;

static void run_at(const char *src, kf_opt_level level, uint32_t grid, uint32_t block, const karg *a, run_result *r)
{
    kf_module *m = compile_at(src, level);
    const kf_ir_kernel *k = &m->kernels[0];
    kf_interp_arg args[8];
    assert_true(k->nparams <= 8);
    memset(r, 0, sizeof *r);
    for (uint32_t i = 0; i < k->nparams; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].is_buffer = k->params[i].type.kind == KF_TK_BUFFER;
        args[i].value.type = k->params[i].type;
        args[i].value.lane[0] = a[i].bits;
        if (!a[i].p) continue;
        r->out[i] = malloc(a[i].bytes);
        memcpy(r->out[i], a[i].p, a[i].bytes);
        args[i].data = r->out[i];
        args[i].bytes = a[i].bytes;
    }
    kf_interp_launch l = {.grid = {grid, 1, 1}, .block = {block, 1, 1}};
    kf_error err = {0};
    r->st = kf_interp_run(k, args, k->nparams, &l, NULL, &err);
    snprintf(r->msg, sizeof r->msg, "%s", err.msg);
    kf_error_clear(&err);
    kf_module_free(m);
}

/* Runs src's kernel at -O0 and -O1 on the same inputs: the same status and
 * message, and the same bytes in every buffer. Returns the -O1 run (the
 * caller frees it with free_result). */
static run_result *same_both_levels(const char *src, uint32_t grid, uint32_t block, const karg *a, uint32_t n)
{
    run_result r0, *r1 = malloc(sizeof *r1);
    run_at(src, KF_OPT_O0, grid, block, a, &r0);
    run_at(src, KF_OPT_O1, grid, block, a, r1);
    assert_int_equal(r0.st, r1->st);
    assert_string_equal(r0.msg, r1->msg);
    for (uint32_t i = 0; i < n; i++) {
        if (!a[i].p) continue;
        if (memcmp(r0.out[i], r1->out[i], a[i].bytes)) fail_msg("buffer %u differs between -O0 and -O1", i);
        free(r0.out[i]);
    }
    return r1;
}

static void free_result(run_result *r)
{
    for (int i = 0; i < 8; i++) free(r->out[i]);
    free(r);
}

/* ---- 1. constant folding ------------------------------------------------------ */

/* Constant arguments of an inlined fn fold through every kind of
 * instruction, with the interpreter's own semantics (wrapping, the shift
 * rules, float->int saturation, round half away, clz/popc/mul_hi/cdiv). */
static void folds_constants_with_the_interpreters_semantics(void **state)
{
    static const char src[] =
        "fn f(a: u32, b: i32, x: f32, c: bool) -> u32 {\n"
        "    let w = a * 0x9E3779B9 + (a >> 33);\n"              /* wraps; shift past the width is 0 */
        "    let s = (b >> 40) as u32;\n"                          /* sign fill: 0xFFFFFFFF */
        "    let f = (x * 1e10) as u32;\n"                         /* saturates */
        "    let r = round(x) as u32 + floor(-x) as u32 + sqrt(x * x) as u32;\n"
        "    let v = u32x4(a, a, a, a) + u32x4(1);\n"
        "    let g = clz(a) + popc(a) + mul_hi(a, 0xFFFFFFFF) + cdiv(a, 4) + min(a, 3);\n"
        "    return select(c, w ^ s ^ f, 0) + r + v.z + g + bitcast(u32, 1.0);\n"
        "}\n"
        "kernel k(y: &mut [u32]) { y[0] = f(10, -3, 2.5, true); }\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&mut [u32] y = param 0\n"
              "  %2:u32 = const 0\n"
              "  %62:u32 = const 1839907191\n"
              "  store %1[%2], %62\n");
    assert_true(st.folded > 20);
    kf_module_free(m);
    uint32_t y[1] = {0};
    karg a[1] = {{y, sizeof y, 0}};
    run_result *r = same_both_levels(src, 1, 1, a, 1);
    assert_int_equal(((uint32_t *)r->out[0])[0], 1839907191u);   /* w + 5 + 11 + 45 + 0x3F800000 */
    free_result(r);
}

/* What is never folded: approximate math (its value is the back end's)
 * and an integer division by zero, which must still fault at run time. A
 * NaN result (z / z) and min/max of zeros fold, with the interpreter's bits. */
static void never_folds_approximate_math_or_a_division_by_zero(void **state)
{
    static const char src[] =
        "fn f(x: f32, z: f32, d: u32) -> f32 {\n"
        "    let e = exp(x) + rsqrt(x) + tanh(x) + sin(x);\n"
        "    let p = log2(x) + exp2(x) + cos(x) + log(x);\n"
        "    let n = z / z;\n"
        "    let m = min(z, -z) + max(-z, z);\n"
        "    return e + p + n + m + (7 / d) as f32;\n"
        "}\n"
        "kernel k(y: &mut [f32]) { y[0] = f(0.5, 0.0, 0); }\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    const kf_ir_kernel *k = &m->kernels[0];
    unsigned math = 0, divs = 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        math += k->ins[i].op == KF_IR_MATH;
        divs += k->ins[i].op == KF_IR_BINOP && k->ins[i].sub == KF_OP_DIV;
    }
    assert_int_equal(math, 8);   /* exp rsqrt tanh sin log2 exp2 cos log */
    assert_int_equal(divs, 1);   /* 7 / 0 */
    kf_module_free(m);
    float y[1] = {0};
    karg a[1] = {{y, sizeof y, 0}};
    run_result *r = same_both_levels(src, 1, 1, a, 1);
    assert_int_equal(r->st, KF_ERR_RUNTIME);
    assert_non_null(strstr(r->msg, "integer division by zero"));
    assert_non_null(strstr(r->msg, "t.kf:6:31"));
    free_result(r);
}

/* ---- 1b. vector constants and the exact-constant pass (ir/opt_exact.c) ------ */

static kf_islot slot32(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    kf_islot v = {{0, 0}};
    v.u32[0] = a, v.u32[1] = b, v.u32[2] = c, v.u32[3] = d;
    return v;
}

static kf_islot slot16(uint16_t a, uint16_t b)
{
    kf_islot v = {{0, 0}};
    v.u16[0] = a, v.u16[1] = b;
    return v;
}

/* kf_opt_fold of one instruction (op, sub, result type rt) over known
 * operands of type t (y and z NULL when it has fewer): the constant. */
static kf_islot fold_known(kf_ir_op op, unsigned sub, kf_type rt, kf_type t, kf_islot x, const kf_islot *y,
                           const kf_islot *z)
{
    kb *b = calloc(1, sizeof *b);
    kb_init(b, "k", 32, 1, 1);
    kf_val a0 = kb_val(b, t, "x"), a1 = y ? kb_val(b, t, "y") : 0, a2 = z ? kb_val(b, t, "z") : 0;
    kf_ir_ins in = {(uint16_t)op, (uint16_t)sub, rt, kb_val(b, rt, "r"), {a0, a1, a2, 0}, 0, kb_loc(b)};
    opt_cval cv[4] = {{true, x}, {y != NULL, {{0, 0}}}, {z != NULL, {{0, 0}}}, {false, {{0, 0}}}};
    if (y) cv[1].v = *y;
    if (z) cv[2].v = *z;
    opt_fold_result r = kf_opt_fold(&b->k, &in, cv);
    free(b);
    assert_int_equal(r.kind, OPT_CONST);
    return r.v;
}

static void assert_lanes32(kf_islot v, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    if (v.u32[0] != a || v.u32[1] != b || v.u32[2] != c || v.u32[3] != d)
        fail_msg("lanes %08x %08x %08x %08x, want %08x %08x %08x %08x", v.u32[0], v.u32[1], v.u32[2], v.u32[3], a, b,
                 c, d);
}

/* Lane by lane, bit for bit, each operation rounded once to its type: the
 * regress_tie_fold sum -FLT_MAX + 0x7d432638, an exact tie, is 0xff73cd9c
 * (to nearest even; the H200 JIT's own fold gave 0xff73cd9b), a NaN lane
 * keeps its bits, -inf stays; f16 and bf16 ties round to even in their own
 * type; conversions saturate, take NaN to 0 and round f64 ties to even;
 * min/max follow PTX (-0 < +0, NaN gives the other); integers wrap. */
static void folds_vector_lanes_bit_exactly(void **state)
{
    kf_type f4 = kf_type_vector(KF_S_F32, 4);
    kf_islot big = slot32(0xff7fffff, 0xff800000, 0x7fc00000, 0xbf800000);   /* -FLT_MAX -inf nan -1 */
    kf_islot tr = fold_known(KF_IR_MATH, KF_BI_TRUNC, f4, f4, big, NULL, NULL);
    assert_lanes32(tr, 0xff7fffff, 0xff800000, 0x7fc00000, 0xbf800000);
    kf_islot bc = slot32(0x7d432638, 0x5df99684, 0x7d432638, 0x5df99684);   /* bitcast(f32x4, u64x2(0x5df996847d432638)) */
    assert_lanes32(fold_known(KF_IR_BINOP, KF_OP_ADD, f4, f4, tr, &bc, NULL), 0xff73cd9c, 0xff800000, 0x7fc00000,
                   0x5df99684);
    kf_type h2 = kf_type_vector(KF_S_F16, 2), b2 = kf_type_vector(KF_S_BF16, 2);
    kf_islot hh = slot16(0x1000, 0x1000), bh = slot16(0x3b80, 0x3b80);   /* half an ulp of 1.0 */
    kf_islot h = fold_known(KF_IR_BINOP, KF_OP_ADD, h2, h2, slot16(0x3c00, 0x3c01), &hh, NULL);
    assert_int_equal(h.u16[0], 0x3c00), assert_int_equal(h.u16[1], 0x3c02);
    kf_islot bf = fold_known(KF_IR_BINOP, KF_OP_ADD, b2, b2, slot16(0x3f80, 0x3f81), &bh, NULL);
    assert_int_equal(bf.u16[0], 0x3f80), assert_int_equal(bf.u16[1], 0x3f82);
    kf_islot cv = fold_known(KF_IR_CVT, 0, kf_type_vector(KF_S_F16, 4), f4,
                             slot32(0x3f801000, 0x3f803000, 0x7fc00000, 0x477ff000), NULL, NULL);   /* ..., 65520 */
    assert_int_equal(cv.u16[0], 0x3c00), assert_int_equal(cv.u16[1], 0x3c02), assert_int_equal(cv.u16[3], 0x7c00);
    assert_true((cv.u16[2] & 0x7c00) == 0x7c00 && (cv.u16[2] & 0x3ff) != 0);   /* still a NaN */
    kf_islot bt = fold_known(KF_IR_CVT, 0, kf_type_vector(KF_S_BF16, 2), kf_type_vector(KF_S_F32, 2),
                             slot32(0x3f808000, 0x3f818000, 0, 0), NULL, NULL);
    assert_int_equal(bt.u16[0], 0x3f80), assert_int_equal(bt.u16[1], 0x3f82);
    assert_lanes32(fold_known(KF_IR_CVT, 0, kf_type_vector(KF_S_I32, 4), f4,
                              slot32(0x7fc00000, 0x4f32d05e, 0xcf32d05e, 0xc0200000), NULL, NULL),   /* nan, ±3e9, -2.5 */
                   0, 0x7fffffff, 0x80000000, 0xfffffffe);
    kf_islot d = {{UINT64_C(0x3ff0000010000000), UINT64_C(0x3ff0000030000000)}};   /* 1 + 2^-24, 1 + 3 * 2^-24 */
    kf_islot df = fold_known(KF_IR_CVT, 0, kf_type_vector(KF_S_F32, 2), kf_type_vector(KF_S_F64, 2), d, NULL, NULL);
    assert_int_equal(df.u32[0], 0x3f800000), assert_int_equal(df.u32[1], 0x3f800002);
    kf_islot mz = slot32(0x80000000, 0x3f800000, 0x80000000, 0x3f800000), pz = slot32(0, 0x7fc00000, 0, 0x7fc00000);
    assert_lanes32(fold_known(KF_IR_MATH, KF_BI_MIN, f4, f4, pz, &mz, NULL), 0x80000000, 0x3f800000, 0x80000000,
                   0x3f800000);
    assert_lanes32(fold_known(KF_IR_MATH, KF_BI_MAX, f4, f4, mz, &pz, NULL), 0, 0x3f800000, 0, 0x3f800000);
    kf_islot one = slot32(1, 1, 1, 1);
    kf_type u4 = kf_type_vector(KF_S_U32, 4);
    assert_lanes32(fold_known(KF_IR_BINOP, KF_OP_ADD, u4, u4, slot32(0xffffffff, 1, 2, 3), &one, NULL), 0, 2, 3, 4);
}

/* regress_tie_fold's vector (a NaN lane) folds at -O1: the stored lanes are
 * CONST and INSERTs, c.x the constant 0xff73cd9c; the interpreter stores
 * the same bits at -O0 and -O1. */
static void vector_with_a_nan_lane_folds_to_constants(void **state)
{
    static const char src[] =
        "kernel k(y: &mut [f32x4], z: &mut [f32]) {\n"
        "    let c = trunc(f32x4(-3.4028234663852886e+38, -inf, nan, -1.0)) + bitcast(f32x4, u64x2(0x5df996847d432638));\n"
        "    y[0] = c;\n"
        "    z[0] = c.x;\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&mut [f32x4] y = param 0\n"
              "  %2:&mut [f32] z = param 1\n"
              "  %25:f32x4 = const -3.24069988e+38\n"
              "  %26:f32 = const -inf\n"
              "  %27:f32x4 = insert %25[1], %26\n"
              "  %28:f32 = const nan\n"
              "  %29:f32x4 = insert %27[2], %28\n"
              "  %30:f32 = const 2.24808841e+18\n"
              "  %15:f32x4 c = insert %29[3], %30\n"
              "  %16:u32 = const 0\n"
              "  store %1[%16], %15\n"
              "  %17:u32 = const 0\n"
              "  %18:f32 = const -3.24069988e+38\n"
              "  store %2[%17], %18\n");
    kf_module_free(m);
    uint32_t y[4] = {0}, z[1] = {0};
    karg a[2] = {{y, sizeof y, 0}, {z, sizeof z, 0}};
    run_result *r = same_both_levels(src, 1, 1, a, 2);
    assert_int_equal(r->st, KF_OK);
    uint32_t *yo = r->out[0], *zo = r->out[1];
    assert_int_equal(zo[0], 0xff73cd9c);
    assert_int_equal(yo[0], 0xff73cd9c), assert_int_equal(yo[1], 0xff800000);
    assert_int_equal(yo[2], 0x7fc00000), assert_int_equal(yo[3], 0x5df99684);
    free_result(r);
}

/* At -O0 the exact-constant pass replaces the float operations whose
 * operands are known (through x & 0, a copy, a vector's lanes) by their
 * constants, and nothing else: the integer operations, the copies and the
 * approximate exp stay as lowered, and no other instruction goes. */
static void O0_replaces_float_operations_on_constants_only(void **state)
{
    static const char src[] =
        "kernel k(x: &[f32], y: &mut [f32], i: u32) {\n"
        "    let a = bitcast(f32, 0xff7fffff + (i & 0));\n"
        "    var b = bitcast(f32, 0x7d432638 + (i & 0));\n"
        "    let h = ((((i & 0) + 3) as f16) as bf16) as f32;\n"
        "    y[0] = a + b;\n"
        "    y[1] = trunc(a) + x[0];\n"
        "    y[2] = exp(b) + h;\n"
        "}\n";
    kf_module *m = compile_at(src, KF_OPT_O0);
    assert_ir(&m->kernels[0],
              "  %1:&[f32] x = param 0\n"
              "  %2:&mut [f32] y = param 1\n"
              "  %3:u32 i = param 2\n"
              "  %4:u32 = const 4286578687\n"
              "  %5:u32 = const 0\n"
              "  %6:u32 = and %3, %5\n"
              "  %7:u32 = add %4, %6\n"
              "  %8:f32 a = bitcast %7:u32\n"
              "  %9:u32 = const 2101552696\n"
              "  %10:u32 = const 0\n"
              "  %11:u32 = and %3, %10\n"
              "  %12:u32 = add %9, %11\n"
              "  %13:f32 = bitcast %12:u32\n"
              "  %14:f32 b = mov %13\n"
              "  %15:u32 = const 0\n"
              "  %16:u32 = and %3, %15\n"
              "  %17:u32 = const 3\n"
              "  %18:u32 = add %16, %17\n"
              "  %19:f16 = const 3\n"
              "  %20:bf16 = const 3\n"
              "  %21:f32 h = const 3\n"
              "  %22:u32 = const 0\n"
              "  %23:f32 = const -3.24069988e+38\n"
              "  store %2[%22], %23\n"
              "  %24:u32 = const 1\n"
              "  %25:f32 = const -3.40282347e+38\n"
              "  %26:u32 = const 0\n"
              "  %27:f32 = load %1[%26]\n"
              "  %28:f32 = add %25, %27\n"
              "  store %2[%24], %28\n"
              "  %29:u32 = const 2\n"
              "  %30:f32 = exp %14\n"
              "  %31:f32 = add %30, %21\n"
              "  store %2[%29], %31\n");
    kf_module_free(m);
    float x[1] = {0.25f}, y[3] = {0};
    karg a[3] = {{x, sizeof x, 0}, {y, sizeof y, 0}, {NULL, 0, 5}};
    run_result *r = same_both_levels(src, 1, 1, a, 3);
    uint32_t y0;
    memcpy(&y0, r->out[1], 4);
    assert_int_equal(y0, 0xff73cd9c);
    free_result(r);
}

/* Hand-built IR with float operations on constants only: the pass (mode
 * OPT_EXACT) leaves no float BINOP, MATH or CVT, keeps every other
 * instruction, and the interpreter stores the same bytes before and after. */
static void exact_pass_keeps_the_interpreters_results(void **state)
{
    kb *b = calloc(1, sizeof *b);
    kb_init(b, "k", 1, 1, 1);
    kf_type f = kf_type_scalar(KF_S_F32), h2 = kf_type_vector(KF_S_F16, 2);
    kf_val y = kb_param(b, "y", kb_buf(KF_S_U32, 1, true));
    kf_val s = kb_bin(b, KF_OP_ADD, kb_const(b, f, 0xff7fffff), kb_const(b, f, 0x7d432638), 0);
    kf_val hs = kb_bin(b, KF_OP_MUL, kb_const(b, h2, 0x3c01), kb_const(b, h2, 0x3801), 0);   /* lanes alike */
    kf_val hv = kb_val(b, h2, "hv");
    kb_ins(b, KF_IR_INSERT, 0, h2, hv, hs, kb_const(b, kf_type_scalar(KF_S_F16), 0x7e00), 0, 1);   /* a NaN lane */
    kf_val q = kb_math(b, KF_BI_FMA, h2, hv, hv, hs);
    kf_val n = kb_val(b, kf_type_scalar(KF_S_U32), NULL);
    kb_ins(b, KF_IR_BITCAST, 0, kf_type_scalar(KF_S_U32), n, q, 0, 0, 0);
    kf_val w = kb_cvt(b, kb_cvt(b, s, kf_type_scalar(KF_S_F64)), kf_type_scalar(KF_S_I32));
    kb_store(b, y, kb_u32(b, 0), kb_val(b, kf_type_scalar(KF_S_U32), NULL));
    b->ins[b->k.nins - 1].a[2] = n;
    kb_ins(b, KF_IR_BITCAST, 0, kf_type_scalar(KF_S_U32), b->k.nvals - 1, w, 0, 0, 0);
    kb_store(b, y, kb_u32(b, 1), b->k.nvals - 1);
    assert_true(kf_ir_link(&b->k));
    uint32_t before[2] = {0}, after[2] = {0};
    kf_interp_launch l = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    kf_interp_arg arg = {.is_buffer = true, .data = before, .bytes = sizeof before};
    arg.value.type = b->params[0].type;
    kf_error err = {0};
    assert_int_equal(kf_interp_run(&b->k, &arg, 1, &l, NULL, &err), KF_OK);
    uint32_t n0 = b->k.nins;
    kf_opt_stats st;
    assert_int_equal(kf_opt_walk(&b->m.arena, &b->k, OPT_EXACT, &st), KF_OK);
    assert_int_equal(st.folded, 5);    /* add, mul, fma, two cvts ... */
    assert_int_equal(st.vectors, 1);   /* ... the fma's lanes differ: CONST and INSERT */
    for (uint32_t i = 0; i < b->k.nins; i++)
        assert_false(kf_opt_exact_op(&b->k, &b->k.ins[i]));
    assert_true(b->k.nins >= n0);
    arg.data = after;
    assert_int_equal(kf_interp_run(&b->k, &arg, 1, &l, NULL, &err), KF_OK);
    assert_memory_equal(before, after, sizeof before);
    assert_int_equal(after[1], (uint32_t)INT32_MIN);   /* -3.24e38 saturates */
    kf_arena_free(&b->m.arena);
    free(b);
}

/* ---- 2. dead branches and loops ----------------------------------------------- */

/* A bool argument selects one side of an if in the inlined fn; the other
 * side goes, with its markers. */
static void if_on_a_constant_keeps_one_side(void **state)
{
    static const char src[] =
        "fn put(y: &mut [f32], i: u32, v: f32, half: bool) {\n"
        "    if half { y[i] = (v as f16) as f32; } else { y[i] = v; }\n"
        "}\n"
        "kernel k(x: &[f32], y: &mut [f32]) {\n"
        "    let i = thread_id.x;\n"
        "    put(y, i, x[i], false);\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise_from(src,
                                 "  %1:&[f32] x = param 0\n"
                                 "  %2:&mut [f32] y = param 1\n"
                                 "  %3:u32 i = sreg thread_id.x\n"
                                 "  %4:f32 v = load %1[%3]\n"
                                 "  %5:bool half = const false\n"
                                 "  if %5\n"
                                 "    %6:f16 = cvt %4:f32\n"
                                 "    %7:f32 = cvt %6:f16\n"
                                 "    store %2[%3], %7\n"
                                 "  else\n"
                                 "    store %2[%3], %4\n"
                                 "  endif\n",
                                 &st);
    assert_ir(&m->kernels[0],
              "  %1:&[f32] x = param 0\n"
              "  %2:&mut [f32] y = param 1\n"
              "  %3:u32 i = sreg thread_id.x\n"
              "  %4:f32 v = load %1[%3]\n"
              "  store %2[%3], %4\n");
    assert_int_equal(st.branches, 1);
    kf_module_free(m);
}

/* A fn whose return sits inside an if becomes a one-trip loop with BREAKs;
 * when the if is decided, the loop goes too, and the result is the MOV
 * that reaches. */
static void early_return_wrapper_loop_goes_when_decided(void **state)
{
    static const char src[] =
        "fn pick(a: u32, b: u32, mode: u32) -> u32 {\n"
        "    if mode == 0 { return a + b; }\n"
        "    if mode == 1 { return a * b; }\n"
        "    return a - b;\n"
        "}\n"
        "kernel k(y: &mut [u32]) { let t = thread_id.x; y[t] = pick(t, 3, 1); }\n";
    kf_module *m0 = compile_at(src, KF_OPT_O0);
    char *before = ir_text(&m0->kernels[0]);
    assert_non_null(strstr(before, "loop\n"));
    free(before);
    kf_module_free(m0);
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&mut [u32] y = param 0\n"
              "  %2:u32 t = sreg thread_id.x\n"
              "  %3:u32 b = const 3\n"
              "  %11:u32 = mul %2, %3\n"
              "  store %1[%2], %11\n");
    assert_int_equal(st.one_trip, 1);
    kf_module_free(m);
}

/* A return inside a loop inside a fn needs an exit flag that the loops
 * around re-check; when the return's condition is a constant false, the
 * flag is constant and every check, the flag and the wrapper go. */
static void exit_flags_go_when_the_exit_is_decided(void **state)
{
    static const char src[] =
        "fn sum(x: &[u32], n: u32, stop: bool) -> u32 {\n"
        "    var s: u32 = 0;\n"
        "    for i in 0 .. n {\n"
        "        if stop && x[i] == 0 { return s; }\n"
        "        s += x[i];\n"
        "    }\n"
        "    return s;\n"
        "}\n"
        "kernel k(x: &[u32], y: &mut [u32], n: u32) { y[0] = sum(x, n, false); }\n";
    kf_module *m0 = compile_at(src, KF_OPT_O0);
    char *before = ir_text(&m0->kernels[0]);
    assert_non_null(strstr(before, "= const true\n"));   /* the flag set before the inner break */
    free(before);
    kf_module_free(m0);
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&[u32] x = param 0\n"
              "  %2:&mut [u32] y = param 1\n"
              "  %3:u32 n = param 2\n"
              "  %4:u32 = const 0\n"
              "  %7:u32 = const 0\n"
              "  %8:u32 s = mov %7\n"
              "  %9:u32 = const 0\n"
              "  %10:u32 = const 1\n"
              "  %11:u32 i = mov %9\n"
              "  loop\n"
              "    %12:bool = cmp.ge.u32 %11, %3\n"
              "    if %12\n"
              "      break\n"
              "    endif\n"
              "    %20:u32 = load %1[%11]\n"
              "    %21:u32 = add %8, %20\n"
              "    %8:u32 s = mov %21\n"
              "  latch\n"
              "    %22:u32 = add %11, %10\n"
              "    %11:u32 i = mov %22\n"
              "  endloop\n"
              "  store %2[%4], %8\n");
    assert_int_equal(st.one_trip, 1);
    kf_module_free(m);
    uint32_t x[5] = {1, 0, 3, 4, 5}, y[1] = {0};
    karg a[3] = {{x, sizeof x, 0}, {y, sizeof y, 0}, {NULL, 0, 5}};
    run_result *r = same_both_levels(src, 1, 1, a, 3);
    assert_int_equal(((uint32_t *)r->out[1])[0], 13);
    free_result(r);
}

/* A loop whose first test fails on entry (bounds 4 .. 2) is removed; the
 * instructions before its test still run once. */
static void loop_that_runs_zero_times_goes(void **state)
{
    static const char src[] =
        "fn fill(y: &mut [u32], a: u32, b: u32) { for i in a .. b { y[i] = i; } }\n"
        "kernel k(y: &mut [u32]) { fill(y, 4, 2); y[0] = 7; }\n";
    kf_opt_stats st;
    kf_module *m = optimise_from(src,
                                 "  %1:&mut [u32] y = param 0\n"
                                 "  %2:u32 a = const 4\n"
                                 "  %3:u32 b = const 2\n"
                                 "  %4:u32 = const 1\n"
                                 "  %5:u32 i = mov %2\n"
                                 "  loop\n"
                                 "    %6:bool = cmp.ge.u32 %5, %3\n"
                                 "    if %6\n"
                                 "      break\n"
                                 "    endif\n"
                                 "    store %1[%5], %5\n"
                                 "  latch\n"
                                 "    %7:u32 = add %5, %4\n"
                                 "    %5:u32 i = mov %7\n"
                                 "  endloop\n"
                                 "  %8:u32 = const 0\n"
                                 "  %9:u32 = const 7\n"
                                 "  store %1[%8], %9\n",
                                 &st);
    assert_ir(&m->kernels[0],
              "  %1:&mut [u32] y = param 0\n"
              "  %8:u32 = const 0\n"
              "  %9:u32 = const 7\n"
              "  store %1[%8], %9\n");
    assert_int_equal(st.zero_trip, 1);
    kf_module_free(m);
}

/* A loop whose body always returns: its latch is unreachable and goes,
 * the loop runs once, so its variable is the start value and its test an
 * if around the rest of the body (tested negated: nothing is left on its
 * break side). */
static void loop_body_that_always_leaves_becomes_an_if(void **state)
{
    static const char src[] =
        "kernel k(y: &mut [u32], n: u32) {\n"
        "    for i in 0 .. n { if i == 3 { y[1] = 3; } y[i] = i; return; }\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&mut [u32] y = param 0\n"
              "  %2:u32 n = param 1\n"
              "  %3:u32 = const 0\n"
              "  %6:bool = cmp.ge.u32 %3, %2\n"
              "  %12:bool = not %6\n"
              "  if %12\n"
              "    store %1[%3], %3\n"
              "    ret\n"
              "  endif\n");
    assert_true(st.unreachable >= 3);
    assert_int_equal(st.one_trip, 1);
    kf_module_free(m);
    uint32_t y[2] = {9, 9};
    karg a[2] = {{y, sizeof y, 0}, {NULL, 0, 2}};
    free_result(same_both_levels(src, 1, 1, a, 2));
}

/* An if whose sides lose everything goes with its markers; an early
 * return under a thread-dependent condition makes the rest of the fn its
 * else side, and the fn's wrapper loop goes. */
static void empty_ifs_and_early_return_loops_go(void **state)
{
    static const char src[] =
        "fn put(y: &mut [u32], i: u32, n: u32, log: bool) {\n"
        "    if log { y[0] = 1; }\n"
        "    if i >= n { return; }\n"
        "    y[i] = i * 3;\n"
        "}\n"
        "kernel k(y: &mut [u32], n: u32) {\n"
        "    let t = thread_id.x;\n"
        "    if t < n { let unused = t * t; }\n"
        "    if t > 7 { put(y, t, n, false); }\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&mut [u32] y = param 0\n"
              "  %2:u32 n = param 1\n"
              "  %3:u32 t = sreg thread_id.x\n"
              "  %6:u32 = const 7\n"
              "  %7:bool = cmp.gt.u32 %3, %6\n"
              "  if %7\n"
              "    %11:bool = cmp.ge.u32 %3, %2\n"
              "    %14:bool = not %11\n"
              "    if %14\n"
              "      %12:u32 = const 3\n"
              "      %13:u32 = mul %3, %12\n"
              "      store %1[%3], %13\n"
              "    endif\n"
              "  endif\n");
    assert_int_equal(st.one_trip, 1);
    assert_int_equal(st.empty_ifs, 1);
    assert_int_equal(st.branches, 1);
    kf_module_free(m);
    uint32_t y[16] = {0};
    karg a[2] = {{y, sizeof y, 0}, {NULL, 0, 12}};
    free_result(same_both_levels(src, 1, 16, a, 2));
}

/* ---- 3. copies and dead code -------------------------------------------------------- */

static void mov_chains_forward_and_dead_values_go(void **state)
{
    static const char src[] =
        "kernel k(x: &[f32], y: &mut [f32]) {\n"
        "    let i = thread_id.x;\n"
        "    let a = x[i];\n"
        "    var b = a; var c = b; var d = c * 2.0;\n"
        "    let unused = d * d + 1.0;\n"
        "    y[i] = d + c;\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&[f32] x = param 0\n"
              "  %2:&mut [f32] y = param 1\n"
              "  %3:u32 i = sreg thread_id.x\n"
              "  %4:f32 a = load %1[%3]\n"
              "  %7:f32 = const 2\n"
              "  %8:f32 = mul %4, %7\n"
              "  %13:f32 = add %8, %4\n"
              "  store %2[%3], %13\n");
    assert_true(st.copies >= 3);
    assert_true(st.dead >= 6);
    kf_module_free(m);
}

/* A var rewritten in the loop: `b` read after `a` changed must still read
 * the old value, round the back edge too; `c` doubles every iteration so
 * it is no constant inside the loop. */
static void values_rewritten_in_loops_are_not_forwarded(void **state)
{
    static const char src[] =
        "kernel k(x: &[u32], y: &mut [u32], n: u32) {\n"
        "    var a = x[0];\n"
        "    var b = a;\n"
        "    var c: u32 = 1;\n"
        "    for i in 0 .. n {\n"
        "        a = a + c;\n"
        "        y[i] = b;\n"
        "        b = a;\n"
        "        c = c * 3;\n"
        "    }\n"
        "    y[n] = b + c;\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&[u32] x = param 0\n"
              "  %2:&mut [u32] y = param 1\n"
              "  %3:u32 n = param 2\n"
              "  %4:u32 = const 0\n"
              "  %5:u32 = load %1[%4]\n"
              "  %6:u32 a = mov %5\n"
              "  %7:u32 b = mov %5\n"
              "  %8:u32 = const 1\n"
              "  %9:u32 c = mov %8\n"
              "  %10:u32 = const 0\n"
              "  %11:u32 = const 1\n"
              "  %12:u32 i = mov %10\n"
              "  loop\n"
              "    %13:bool = cmp.ge.u32 %12, %3\n"
              "    if %13\n"
              "      break\n"
              "    endif\n"
              "    %14:u32 = add %6, %9\n"
              "    %6:u32 a = mov %14\n"
              "    store %2[%12], %7\n"
              "    %7:u32 b = mov %14\n"
              "    %15:u32 = const 3\n"
              "    %16:u32 = mul %9, %15\n"
              "    %9:u32 c = mov %16\n"
              "  latch\n"
              "    %17:u32 = add %12, %11\n"
              "    %12:u32 i = mov %17\n"
              "  endloop\n"
              "  %18:u32 = add %7, %9\n"
              "  store %2[%3], %18\n");
    kf_module_free(m);
    uint32_t x[1] = {5}, y[5] = {0};
    karg a[3] = {{x, sizeof x, 0}, {y, sizeof y, 0}, {NULL, 0, 4}};
    run_result *r = same_both_levels(src, 1, 1, a, 3);
    static const uint32_t want[5] = {5, 6, 9, 18, 45 + 81};
    assert_memory_equal(r->out[1], want, sizeof want);
    free_result(r);
}

/* A value written on one side of an if only (hand-built IR: lowering
 * always initialises a var) is no constant after the if: on the other
 * path it keeps what it held before. */
static void a_definition_on_one_path_is_not_a_constant(void **state)
{
    kb *b = calloc(1, sizeof *b);
    kb_init(b, "k", 32, 1, 1);
    kf_val y = kb_param(b, "y", kb_buf(KF_S_U32, 1, true));
    kf_val c = kb_param(b, "c", kf_type_scalar(KF_S_BOOL));
    kf_val v = kb_val(b, kf_type_scalar(KF_S_U32), "v");
    kf_val five = kb_u32(b, 5);
    kb_ins(b, KF_IR_IF, 0, kf_type_void(), 0, c, 0, 0, 0);
    kb_mov(b, v, five);
    kb_mark(b, KF_IR_ENDIF);
    kb_store(b, y, kb_u32(b, 0), v);
    assert_true(kf_ir_link(&b->k));
    kf_opt_stats st;
    assert_int_equal(kf_opt_kernel_stats(&b->m.arena, &b->k, &st), KF_OK);
    assert_ir(&b->k,
              "  %1:&mut [u32] y = param 0\n"
              "  %2:bool c = param 1\n"
              "  %4:u32 = const 5\n"
              "  if %2\n"
              "    %3:u32 v = mov %4\n"
              "  endif\n"
              "  %5:u32 = const 0\n"
              "  store %1[%5], %3\n");
    kf_arena_free(&b->m.arena);
    free(b);
}

/* ---- what must stay --------------------------------------------------------------- */

/* An unused load (which may be out of bounds) and an unused division by a
 * divisor not known to be non-zero stay, so the interpreter reports the
 * same fault at -O1 as at -O0; a division by a known non-zero constant,
 * unused, goes. */
static void loads_and_divisions_that_may_fault_stay(void **state)
{
    static const char src[] =
        "kernel k(x: &[u32], y: &mut [u32], i: u32, d: u32) {\n"
        "    let t = x[i];\n"
        "    let q = 100 / d;\n"
        "    let r = i / 7;\n"
        "    y[0] = 1;\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&[u32] x = param 0\n"
              "  %2:&mut [u32] y = param 1\n"
              "  %3:u32 i = param 2\n"
              "  %4:u32 d = param 3\n"
              "  %5:u32 t = load %1[%3]\n"
              "  %6:u32 = const 100\n"
              "  %7:u32 q = div %6, %4\n"
              "  %10:u32 = const 0\n"
              "  %11:u32 = const 1\n"
              "  store %2[%10], %11\n");
    kf_module_free(m);
    uint32_t x[4] = {0}, y[1] = {0};
    karg oob[4] = {{x, sizeof x, 0}, {y, sizeof y, 0}, {NULL, 0, 9}, {NULL, 0, 1}};
    run_result *r = same_both_levels(src, 1, 1, oob, 4);
    assert_int_equal(r->st, KF_ERR_RUNTIME);
    assert_non_null(strstr(r->msg, "out-of-bounds load of x[9]"));
    free_result(r);
    karg div0[4] = {{x, sizeof x, 0}, {y, sizeof y, 0}, {NULL, 0, 1}, {NULL, 0, 0}};
    r = same_both_levels(src, 1, 1, div0, 4);
    assert_int_equal(r->st, KF_ERR_RUNTIME);
    assert_non_null(strstr(r->msg, "integer division by zero"));
    free_result(r);
}

/* A barrier or warp operation under a constant condition stays where it
 * was (the condition is the same for every thread); one under a thread
 * dependent condition keeps it; an unused shuffle stays. */
static void barriers_and_warp_ops_keep_their_place(void **state)
{
    static const char src[] =
        "fn sync(on: bool) { if on { barrier(); } }\n"
        "kernel k(y: &mut [u32]) {\n"
        "    shared s: u32[64];\n"
        "    let t = thread_id.x;\n"
        "    s[t] = t;\n"
        "    sync(true);\n"
        "    let u = shfl_xor(t, 1);\n"
        "    if t < 32 { y[t] = s[63 - t] + ballot(t < 7); }\n"
        "    sync(false);\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    assert_ir(&m->kernels[0],
              "  %1:&mut [u32] y = param 0\n"
              "  %2:u32 t = sreg thread_id.x\n"
              "  astore @s[%2], %2\n"
              "  barrier\n"
              "  %4:u32 = const 1\n"
              "  %5:u32 u = shfl_xor %2, %4\n"
              "  %6:u32 = const 32\n"
              "  %7:bool = cmp.lt.u32 %2, %6\n"
              "  if %7\n"
              "    %8:u32 = const 63\n"
              "    %9:u32 = sub %8, %2\n"
              "    %10:u32 = aload @s[%9]\n"
              "    %11:u32 = const 7\n"
              "    %12:bool = cmp.lt.u32 %2, %11\n"
              "    %13:u32 = ballot %12\n"
              "    %14:u32 = add %10, %13\n"
              "    store %1[%2], %14\n"
              "  endif\n");
    kf_module_free(m);
    uint32_t y[64] = {0};
    karg a[1] = {{y, sizeof y, 0}};
    free_result(same_both_levels(src, 1, 64, a, 1));
}

/* mma, ldmatrix and cp_async whose results nobody reads, under a branch
 * decided by a constant and after a copy: the copy is forwarded into their
 * operands, the dead side goes, and every one of them stays, in order. */
static void tensor_intrinsics_stay_though_unread(void **state)
{
    static const char src[] =
        "fn stage(t: shared f16[], x: &[f16], on: bool) {\n"
        "    if on { cp_async(t, lane_id * 8, x, lane_id * 8); }\n"
        "    cp_async_commit();\n"
        "}\n"
        "kernel k(x: &[f16], y: &mut [f32]) {\n"
        "    shared t: f16[256];\n"
        "    stage(t, x, true);\n"
        "    stage(t, x, false);\n"
        "    cp_async_wait(0);\n"
        "    barrier();\n"
        "    let i = lane_id * 8;\n"
        "    let j = i;\n"
        "    let a = ldmatrix_x4(t, j);\n"
        "    let b: f16x4 = 1.0;\n"
        "    let unused = mma(a, b, 0.0);\n"
        "    let d = mma(a, b, 0.0);\n"
        "    y[lane_id] = d.x;\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    const kf_ir_kernel *k = &m->kernels[0];
    static const uint16_t want[] = {KF_BI_CP_ASYNC, KF_BI_CP_ASYNC_COMMIT, KF_BI_CP_ASYNC_COMMIT, KF_BI_CP_ASYNC_WAIT,
                                    KF_BI_LDMATRIX_X4, KF_BI_MMA, KF_BI_MMA};
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        assert_true(in->op != KF_IR_IF);   /* both constant branches decided */
        if (in->op != KF_IR_INTRIN) continue;
        assert_true(n < sizeof want / sizeof *want);
        assert_int_equal(in->sub, want[n++]);
    }
    assert_int_equal(n, sizeof want / sizeof *want);
    kf_module_free(m);
}

/* fence() orders memory: the optimiser keeps every fence, two in a row
 * too, in its place between the accesses around it (the writer's store,
 * fence, atomic; the reader's atomic, fence, loads), and keeps the loads
 * after it though they read what the thread stored before. */
static void fences_stay_between_their_accesses(void **state)
{
    static const char src[] =
        "kernel k(part: &mut [f32], count: &mut [u32], out: &mut [f32], nb: u32) {\n"
        "    let i = block_id.x;\n"
        "    part[i] = 2.0;\n"
        "    fence();\n"
        "    fence();\n"
        "    let old = atomic_add(count, 0, 1);\n"
        "    if old == nb - 1 {\n"
        "        fence();\n"
        "        out[0] = part[i] + part[0];\n"
        "    }\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    const kf_ir_kernel *k = &m->kernels[0];
    enum { F = 1000 };   /* a fence, in want[] */
    static const uint16_t want[] = {KF_IR_STORE, F, F, KF_IR_ATOMIC, KF_IR_IF, F, KF_IR_LOAD, KF_IR_LOAD, KF_IR_STORE};
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        uint16_t op = in->op == KF_IR_INTRIN && in->sub == KF_BI_FENCE ? F : in->op;
        if (op != F && op != KF_IR_STORE && op != KF_IR_LOAD && op != KF_IR_ATOMIC && op != KF_IR_IF) continue;
        if (op == F) assert_int_equal(in->dst, 0);
        assert_true(n < sizeof want / sizeof *want);
        assert_int_equal(op, want[n++]);
    }
    assert_int_equal(n, sizeof want / sizeof *want);
    kf_module_free(m);
}

/* dep_wait() and dep_trigger() stay where the kernel puts them: the
 * weight load before the wait, the loads of what the kernel before wrote
 * after it, though the same buffer x is read on both sides (nothing merged
 * across it), and the trigger between the two stores. */
static void dep_wait_and_trigger_stay_between_their_accesses(void **state)
{
    static const char src[] =
        "kernel k(w: &[f32], x: &[f32], y: &mut [f32]) {\n"
        "    let i = global_id.x;\n"
        "    let a = w[i] + x[0];\n"
        "    dep_wait();\n"
        "    let b = x[0];\n"
        "    y[i] = a * b;\n"
        "    dep_trigger();\n"
        "    y[i + 1] = b;\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    const kf_ir_kernel *k = &m->kernels[0];
    enum { W = 1000, T = 1001 };
    static const uint16_t want[] = {KF_IR_LOAD, KF_IR_LOAD, W, KF_IR_LOAD, KF_IR_STORE, T, KF_IR_STORE};
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        uint16_t op = in->op;
        if (op == KF_IR_INTRIN && in->sub == KF_BI_DEP_WAIT) op = W;
        else if (op == KF_IR_INTRIN && in->sub == KF_BI_DEP_TRIGGER) op = T;
        else if (op != KF_IR_STORE && op != KF_IR_LOAD) continue;
        assert_true(n < sizeof want / sizeof *want);
        assert_int_equal(op, want[n++]);
    }
    assert_int_equal(n, sizeof want / sizeof *want);
    assert_true(kf_ir_places_dep_wait(k));
    kf_module_free(m);
    m = optimise("kernel k(y: &mut [f32]) {\n    dep_trigger();\n    y[0] = 1.0;\n}\n", &st);
    assert_false(kf_ir_places_dep_wait(&m->kernels[0]));
    kf_module_free(m);
}

/* An op this pass does not know (one added to the IR later) is opaque:
 * kept though unread, its operands not rewritten, and every value it names
 * counted as perhaps written, so no copy is forwarded across it. */
static void unknown_ops_are_opaque(void **state)
{
    kb *b = calloc(1, sizeof *b);
    kb_init(b, "k", 32, 1, 1);
    kf_type u = kf_type_scalar(KF_S_U32);
    kf_val y = kb_param(b, "y", kb_buf(KF_S_U32, 1, true));
    kf_val p = kb_param(b, "p", u);
    kf_val v = kb_val(b, u, "v");
    kb_mov(b, v, p);
    kf_val r = kb_val(b, u, "r");
    uint32_t at = kb_ins(b, (kf_ir_op)KF_IR_OP_COUNT, 0, u, r, v, 0, 0, 0);
    kb_store(b, y, kb_u32(b, 0), v);
    assert_true(kf_ir_link(&b->k));
    kf_opt_stats st;
    assert_int_equal(kf_opt_kernel_stats(&b->m.arena, &b->k, &st), KF_OK);
    assert_int_equal(b->k.nins, 6);
    assert_int_equal(b->k.ins[at].op, KF_IR_OP_COUNT);
    assert_int_equal(b->k.ins[at].a[0], v);   /* not forwarded to p */
    assert_int_equal(b->k.ins[at + 2].op, KF_IR_STORE);
    assert_int_equal(b->k.ins[at + 2].a[2], v);
    kf_arena_free(&b->m.arena);
    free(b);
}

/* Found by fuzz_compile once the optimiser ran under it: a kernel with no
 * instructions, or one with no loop (no per-loop table), sized its tables
 * from NULL pointers (UBSan); and later one whose only statement is a value
 * (`2;`), optimised to no instruction, was copied from NULL. All compile,
 * and the empty ones stay empty. */
static void empty_kernels_and_loopless_kernels_compile(void **state)
{
    kf_module *m = compile_at("kernel e() {}\nkernel f(y: &mut [u32]) { y[0] = 1; }\nkernel g() {\n    2;\n}\n",
                              KF_OPT_DEFAULT);
    assert_int_equal(m->nkernels, 3);
    assert_true(m->kernels[0].nins <= 1);
    assert_true(kf_ir_linked(&m->kernels[1]));
    assert_true(m->kernels[2].nins <= 1);
    kf_module_free(m);
}

/* IR nested deeper than the walk goes (the parser stops at 200 levels, but
 * inlining adds loops) is left exactly as lowered. */
static void nesting_deeper_than_the_walk_is_left_as_lowered(void **state)
{
    kb *b = calloc(1, sizeof *b);
    kb_init(b, "k", 32, 1, 1);
    kf_val y = kb_param(b, "y", kb_buf(KF_S_U32, 1, true));
    kf_val c = kb_param(b, "c", kf_type_scalar(KF_S_BOOL));
    kf_val zero = kb_u32(b, 0), one = kb_u32(b, 1);
    for (int d = 0; d < 300; d++) kb_ins(b, KF_IR_IF, 0, kf_type_void(), 0, c, 0, 0, 0);
    kb_store(b, y, zero, kb_bin(b, KF_OP_MUL, one, one, 0));
    for (int d = 0; d < 300; d++) kb_mark(b, KF_IR_ENDIF);
    assert_true(kf_ir_link(&b->k));
    uint32_t n = b->k.nins;
    kf_opt_stats st;
    assert_int_equal(kf_opt_kernel_stats(&b->m.arena, &b->k, &st), KF_OK);
    assert_true(st.skipped);
    assert_int_equal(b->k.nins, n);
    assert_int_equal(b->k.ins[n - 302].op, KF_IR_BINOP);   /* 1 * 1 not folded */
    kf_arena_free(&b->m.arena);
    free(b);
}

/* ---- 4. strength reduction ------------------------------------------------------ */

static void division_by_powers_of_two_becomes_shifts(void **state)
{
    static const char src[] =
        "kernel k(x: &[i32], y: &mut [i32], u: &mut [u32]) {\n"
        "    let i = thread_id.x;\n"
        "    let v = x[i];\n"
        "    y[4 * i] = v / 8;\n"
        "    y[4 * i + 1] = v % 8;\n"
        "    y[4 * i + 2] = v * 16;\n"
        "    u[2 * i] = (v as u32) / 32 + warp_id;\n"
        "    u[2 * i + 1] = (v as u32) % 32;\n"
        "}\n";
    kf_opt_stats st;
    kf_module *m = optimise(src, &st);
    char *t = ir_text(&m->kernels[0]);
    assert_null(strstr(t, " div "));
    assert_null(strstr(t, " rem "));
    assert_non_null(strstr(t, "= shr %5, %"));   /* the sign of v, then the biased v >> 3 */
    free(t);
    assert_int_equal(st.reduced, 3 + 2 + 1 + 5);   /* v / % * by 8 16, v as u32 / % 32, warp_id, 4 * i (3), 2 * i (2) */
    kf_module_free(m);
    static const int32_t edge[] = {0, 1, -1, 7, -7, 8, -8, 9, -9, 15, -15, 16, -16, 17, -17, 1000003, -1000003,
                                   INT32_MAX, INT32_MIN, INT32_MIN + 1, INT32_MAX - 1, 64, -64, 31, -33};
    enum { N = sizeof edge / sizeof *edge };
    int32_t x[N], y[4 * N] = {0};
    uint32_t u[2 * N] = {0};
    memcpy(x, edge, sizeof x);
    karg a[3] = {{x, sizeof x, 0}, {y, sizeof y, 0}, {u, sizeof u, 0}};
    run_result *r = same_both_levels(src, 1, N, a, 3);
    const int32_t *ry = r->out[1];
    const uint32_t *ru = r->out[2];
    for (int i = 0; i < N; i++) {
        assert_int_equal(ry[4 * i], x[i] / 8);
        assert_int_equal(ry[4 * i + 1], x[i] % 8);
        assert_int_equal((uint32_t)ry[4 * i + 2], (uint32_t)x[i] * 16u);
        assert_int_equal(ru[2 * i], (uint32_t)x[i] / 32 + (uint32_t)i / 32);
        assert_int_equal(ru[2 * i + 1], (uint32_t)x[i] % 32);
    }
    free_result(r);
}

/* 64-bit signed division and remainder by 2^k for every k the rewrite
 * takes (1 .. 62), over values around the edges. */
static void signed_64_bit_division_rounds_toward_zero(void **state)
{
    kf_buf src = {0};
    kf_buf_puts(&src, "kernel k(x: &[i64], y: &mut [i64]) {\n    let i = thread_id.x;\n    let v = x[i];\n");
    for (int k = 1; k <= 62; k++)
        kf_buf_printf(&src, "    y[%d * 128 + 2 * i] = v / %lld; y[%d * 128 + 2 * i + 1] = v %% %lld;\n", k - 1,
                      1LL << k, k - 1, 1LL << k);
    kf_buf_puts(&src, "}\n");
    static const int64_t edge[] = {0, 1, -1, 3, -3, 1LL << 40, -(1LL << 40), (1LL << 40) + 1, -(1LL << 40) - 1,
                                   INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1, 123456789012345LL,
                                   -123456789012345LL, (1LL << 62), -(1LL << 62)};
    enum { N = sizeof edge / sizeof *edge };
    int64_t x[N], *y = calloc(62 * 128, sizeof *y);
    memcpy(x, edge, sizeof x);
    karg a[2] = {{x, sizeof x, 0}, {y, 62 * 128 * sizeof *y, 0}};
    run_result *r = same_both_levels(src.data, 1, N, a, 2);
    const int64_t *ry = r->out[1];
    for (int k = 1; k <= 62; k++)
        for (int i = 0; i < N; i++) {
            assert_true(ry[(k - 1) * 128 + 2 * i] == x[i] / (1LL << k));
            assert_true(ry[(k - 1) * 128 + 2 * i + 1] == x[i] % (1LL << k));
        }
    free_result(r);
    free(y);
    kf_buf_free(&src);
}

/* Fails when a line of ptx divides or takes a remainder by an integer
 * power of two. */
static void assert_no_pow2_divrem(const char *file, const char *ptx)
{
    for (const char *line = ptx; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < 255 ? n : 255), line);
        line = end ? end + 1 : NULL;
        char *semi = strchr(buf, ';'), *last;
        if ((!strstr(buf, "div.") && !strstr(buf, "rem.")) || !semi) continue;
        *semi = 0;
        if (!(last = strrchr(buf, ' '))) continue;
        char *e;
        unsigned long long c = strtoull(last + 1, &e, 0);
        if (!*e && c > 1 && !(c & (c - 1))) fail_msg("%s: division by a power of two left in the PTX: %s", file, buf);
    }
}

/* The PTX of the decode kernels has no div/rem left by a power of two:
 * warp_id, cdiv(m, 2) and the like are shifts and masks. */
static void decode_kernels_ptx_has_no_power_of_two_division(void **state)
{
    static const char *const files[] = {"gemv.kf", "q4k.kf", "sdpa.kf", "rope.kf", "softmax.kf", "rmsnorm.kf"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[4096], *src;
        size_t len;
        snprintf(path, sizeof path, "%s/kernels/%s", KF_SOURCE_DIR, files[f]);
        assert_int_equal(kf_read_file(path, &src, &len, NULL), KF_OK);
        kf_module *m = NULL;
        assert_int_equal(kf_compile(files[f], src, len, NULL, &m), KF_OK);
        kf_buf out = {0};
        kf_diags d = {0};
        kf_emit_opts o = {90, false, false};
        assert_int_equal(kf_ptx_emit(m, NULL, &o, &out, NULL, &d), KF_OK);
        assert_no_pow2_divrem(files[f], out.data);
        kf_diags_free(&d);
        kf_buf_free(&out);
        kf_module_free(m);
        free(src);
    }
}

/* kf_ir_feed_flags against the walk it replaced, asked value by value:
 * whether v, directly or through copies at most 5 deep, is an operand of an
 * integer unary/binary operator or of an integer min/max/clamp. */
static bool walk_feeds(const kf_ir_kernel *k, kf_val v, bool minmax, int depth)
{
    for (uint32_t i = 0; i < k->nins && depth < 6; i++) {
        const kf_ir_ins *in = &k->ins[i];
        bool is_int = in->dst && kf_type_is_int(k->vals[in->dst].type);
        bool is = is_int && (minmax ? in->op == KF_IR_MATH && (in->sub == KF_BI_MIN || in->sub == KF_BI_MAX ||
                                                               in->sub == KF_BI_CLAMP)
                                    : in->op == KF_IR_BINOP || in->op == KF_IR_UNOP);
        for (int a = 0; a < kf_ir_op_nargs[in->op]; a++) {
            if (in->a[a] != v) continue;
            if (is || (in->op == KF_IR_MOV && in->dst != v && walk_feeds(k, in->dst, minmax, depth + 1))) return true;
        }
    }
    return false;
}

/* The kernels of files with many half bitcasts, subtractions and integer
 * min/max (the walk is quadratic: the large decode and tensor-core files
 * would take minutes), unoptimised (copies kept) and at the default level:
 * the table gives the walk's answers for every value. */
static void feed_flags_match_the_walk(void **state)
{
    static const char *const files[] = {"rope.kf", "softmax.kf", "features/regress.kf", "features/packed.kf",
                                        "features/bits.kf", "features/ops.kf"};
    unsigned nop = 0, nmm = 0, copied = 0;   /* flagged values, and those flagged through copies only */
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[4096], *src;
        size_t len;
        snprintf(path, sizeof path, "%s/kernels/%s", KF_SOURCE_DIR, files[f]);
        assert_int_equal(kf_read_file(path, &src, &len, NULL), KF_OK);
        for (int level = 0; level < 2; level++) {
            kf_module *m = NULL;
            kf_compile_opts o = {NULL, 0, level ? KF_OPT_DEFAULT : KF_OPT_O0};
            assert_int_equal(kf_compile(files[f], src, len, &o, &m), KF_OK);
            for (uint32_t ki = 0; ki < m->nkernels; ki++) {
                const kf_ir_kernel *k = &m->kernels[ki];
                uint8_t *flags = calloc(k->nvals + 1, 1), *tmp = calloc(k->nvals + 1, 1);
                assert_non_null(flags);
                assert_non_null(tmp);
                kf_ir_feed_flags(k, flags, tmp);
                for (kf_val v = 1; v < k->nvals; v++) {
                    bool op = walk_feeds(k, v, false, 0), mm = walk_feeds(k, v, true, 0);
                    if (op != !!(flags[v] & KF_IR_FEEDS_INT_OP) || mm != !!(flags[v] & KF_IR_FEEDS_INT_MINMAX))
                        fail_msg("%s level %d kernel %s value %u: walk %d/%d, table %u", files[f], level, k->name, v,
                                 op, mm, flags[v]);
                    nop += op, nmm += mm;
                    copied += (op && !walk_feeds(k, v, false, 5)) || (mm && !walk_feeds(k, v, true, 5));
                }
                free(flags);
                free(tmp);
            }
            kf_module_free(m);
        }
        free(src);
    }
    if (!nop || !nmm || !copied) fail_msg("a vacuous comparison: %u, %u, %u flagged", nop, nmm, copied);
}

/* PTX registers by number: %r %rd %f %fd %h %p %hh %b below 100000. */
#define PTX_NREG 100000
static long ptx_reg_id(const char *x)
{
    static const char *const cls[] = {"r", "rd", "f", "fd", "h", "p", "hh", "b"};
    size_t n = strspn(x + 1, "abcdefghijklmnopqrstuvwxyz"), d = strspn(x + 1 + n, "0123456789");
    if (*x != '%' || !d || d > 5) return -1;
    for (size_t c = 0; c < sizeof cls / sizeof *cls; c++)
        if (strlen(cls[c]) == n && !strncmp(x + 1, cls[c], n)) return (long)c * PTX_NREG + atol(x + 1 + n);
    return -1;
}

/* One PTX instruction line: its opcode, destination and sources. */
typedef struct {
    const char *op, *opend, *dst, *src, *end;
    bool guarded;   /* @%p: runs under a predicate */
} ptx_line;

static bool ptx_parse(const char *line, ptx_line *l)
{
    const char *p = line + strspn(line, " \t");
    l->end = line + strcspn(line, "\n");
    l->guarded = *p == '@';
    if (l->guarded) p += strcspn(p, " \t"), p += strspn(p, " \t");
    if (p >= l->end || !(*p >= 'a' && *p <= 'z')) return false;
    l->op = p, l->opend = p + strcspn(p, " \t\n");
    l->dst = l->opend + strspn(l->opend, " \t");
    l->src = l->dst + (*l->dst == '{' ? strcspn(l->dst, "}") : 0);
    l->src += strcspn(l->src, ",;\n");
    return l->opend < l->end;
}

/* Whether source x (up to `,` or `;`) is an immediate or a constant register. */
static bool ptx_const_src(const char *x, const uint8_t *is_const)
{
    x += strspn(x, " \t");
    if (*x != '%') return *x == '-' || (*x >= '0' && *x <= '9');
    long id = ptx_reg_id(x);
    return id >= 0 && is_const[id];
}

static bool ptx_all_const(const ptx_line *l, const uint8_t *is_const)
{
    bool all = true;
    for (const char *x = l->src; *x == ',' && x < l->end; x += 1 + strcspn(x + 1, ",;\n"))
        all = all && ptx_const_src(x + 1, is_const);
    return all && *l->src == ',';
}

/* Fails when a float operation of the PTX text reads only constants (what
 * a JIT could fold itself): immediates, or registers written once, by an
 * unconditional mov of constants. */
static void assert_no_float_op_on_constants(const char *what, const char *ptx)
{
    static const char *const ops[] = {"add.", "sub.", "mul.", "div.", "fma.", "min.", "max.", "cvt.", "sqrt.",
                                      "abs.", "neg.", "setp."};
    uint32_t *writes = calloc(8 * PTX_NREG, sizeof *writes);
    uint8_t *is_const = calloc(8 * PTX_NREG, 1);
    ptx_line l;
    for (const char *line = ptx; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
        if (!ptx_parse(line, &l)) continue;
        for (const char *d = l.dst; d < l.src; d += 1 + strcspn(d + 1, "%,"))
            if (*d == '%' && ptx_reg_id(d) >= 0) writes[ptx_reg_id(d)] += l.guarded ? 2 : 1;
    }
    for (const char *line = ptx; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
        if (!ptx_parse(line, &l)) continue;
        bool all = ptx_all_const(&l, is_const), is_float = false, arith = false;
        for (const char *t = l.op; t < l.opend; t++) is_float = is_float || !strncmp(t, ".f", 2) || !strncmp(t, ".bf16", 5);
        for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) arith = arith || !strncmp(l.op, ops[i], strlen(ops[i]));
        if (arith && is_float && all)
            fail_msg("%s: a float operation on constants only: %.*s", what, (int)(l.end - l.op), l.op);
        long id = ptx_reg_id(l.dst);
        if (!strncmp(l.op, "mov.", 4) && all && id >= 0 && writes[id] == 1) is_const[id] = 1;
    }
    free(writes), free(is_const);
}

/* Golden case regress_tie_fold (kernels/features/regress.kf), at -O0 and
 * -O1: its PTX stores the sum as the immediate 0fFF73CD9C and has no float
 * operation on constants left (no trunc at all); its CUDA-C has the same
 * constant and no truncf. The -O0 text still computes the integers (i & 0). */
static void regress_tie_fold_reaches_no_gpu_compiler_as_arithmetic(void **state)
{
    char path[4096], *src;
    size_t len;
    snprintf(path, sizeof path, "%s/kernels/features/regress.kf", KF_SOURCE_DIR);
    assert_int_equal(kf_read_file(path, &src, &len, NULL), KF_OK);
    for (int level = 0; level < 2; level++) {
        kf_compile_opts co = {NULL, 0, level ? KF_OPT_O1 : KF_OPT_O0};
        kf_module *m = NULL;
        assert_int_equal(kf_compile("regress.kf", src, len, &co, &m), KF_OK);
        const kf_ir_kernel *k = kf_module_kernel(m, "regress_tie_fold");
        assert_non_null(k);
        kf_buf ptx = {0}, cu = {0};
        kf_diags d = {0};
        kf_emit_opts o = {90, false, false};
        assert_int_equal(kf_ptx_emit(m, k, &o, &ptx, NULL, &d), KF_OK);
        assert_int_equal(kf_cuda_emit(m, k, &o, &cu, NULL, &d), KF_OK);
        assert_no_float_op_on_constants(level ? "-O1" : "-O0", ptx.data);
        assert_non_null(strstr(ptx.data, "0fFF73CD9C"));
        assert_null(strstr(ptx.data, "cvt.rzi"));
        assert_true((strstr(ptx.data, "and.b32") != NULL) == (level == 0));
        assert_non_null(strstr(cu.data, "-3.2406999e+38f"));   /* 0xff73cd9c, the shortest that reads back */
        assert_null(strstr(cu.data, "truncf"));
        kf_diags_free(&d);
        kf_buf_free(&ptx), kf_buf_free(&cu);
        kf_module_free(m);
    }
    free(src);
}

/* ---- random programs ---------------------------------------------------------------- */

/* A generator of small random kernels in the shapes that exercise the
 * pass: fns with constant and thread-dependent arguments and early
 * returns, ifs on constants, loops with constant and dynamic bounds and
 * break/continue, @unroll, vars rewritten everywhere, / % * by constants
 * (powers of two and not, signed and unsigned), min/max/select, stores of
 * intermediate values. Every program is run at -O0 and -O1. */
typedef struct {
    kf_buf *b;
    uint64_t rng;
    unsigned depth, loops, nfns;
    const char *const *u;   /* u32 names in scope; the first nw may be assigned */
    unsigned nu, nw;
    bool in_fn;
} gen;

static unsigned pick(gen *g, unsigned n)
{
    g->rng ^= g->rng << 13, g->rng ^= g->rng >> 7, g->rng ^= g->rng << 17;
    return (unsigned)(g->rng >> 33) % n;
}

static void gen_u(gen *g, unsigned d);
static void gen_i(gen *g, unsigned d);

static void gen_cond(gen *g, unsigned d)
{
    static const char *const cmp[] = {"<", "<=", "==", "!=", ">", ">="};
    switch (d ? pick(g, 7) : 3 + pick(g, 2)) {
    case 0: kf_buf_puts(g->b, "("), gen_u(g, d - 1), kf_buf_printf(g->b, " %s ", cmp[pick(g, 6)]), gen_u(g, d - 1), kf_buf_puts(g->b, ")"); break;
    case 1: kf_buf_puts(g->b, "("), gen_i(g, d - 1), kf_buf_printf(g->b, " %s ", cmp[pick(g, 6)]), gen_i(g, d - 1), kf_buf_puts(g->b, ")"); break;
    case 2: kf_buf_puts(g->b, "("), gen_cond(g, d - 1), kf_buf_puts(g->b, pick(g, 2) ? " && " : " || "), gen_cond(g, d - 1), kf_buf_puts(g->b, ")"); break;
    case 3: kf_buf_puts(g->b, pick(g, 2) ? "true" : "false"); break;
    case 4: kf_buf_puts(g->b, g->in_fn ? "c" : "flag"); break;
    case 5: kf_buf_puts(g->b, "!"), gen_cond(g, d - 1); break;
    default: kf_buf_puts(g->b, g->in_fn ? "(a < 17)" : "(t < 17)"); break;
    }
}

static void gen_u(gen *g, unsigned d)
{
    static const char *const ops[] = {"+", "-", "*", "&", "|", "^"};
    static const char *const k[] = {"0", "1", "2", "3", "4", "7", "8", "16", "1024", "65535", "0x9E3779B9", "4294967295"};
    static const char *const div[] = {"1", "2", "4", "8", "16", "3", "7", "1024", "2147483648"};
    switch (d ? pick(g, 12) : pick(g, 2)) {
    case 0: kf_buf_puts(g->b, g->u[pick(g, g->nu)]); break;
    case 1: kf_buf_printf(g->b, "(%s as u32)", k[pick(g, 12)]); break;   /* typed: a bare literal may be i32 */
    case 2: case 3:
        kf_buf_puts(g->b, "("), gen_u(g, d - 1), kf_buf_printf(g->b, " %s ", ops[pick(g, 6)]), gen_u(g, d - 1), kf_buf_puts(g->b, ")");
        break;
    case 4: kf_buf_puts(g->b, "("), gen_u(g, d - 1), kf_buf_printf(g->b, " %s %s)", pick(g, 2) ? "/" : "%", div[pick(g, 9)]); break;
    case 5: kf_buf_puts(g->b, "("), gen_u(g, d - 1), kf_buf_puts(g->b, " / ("), gen_u(g, d - 1), kf_buf_puts(g->b, " | 1))"); break;
    case 6: kf_buf_puts(g->b, "("), gen_u(g, d - 1), kf_buf_printf(g->b, " %s %u)", pick(g, 2) ? "<<" : ">>", pick(g, 34)); break;
    case 7: kf_buf_puts(g->b, pick(g, 2) ? "min(" : "max("), gen_u(g, d - 1), kf_buf_puts(g->b, ", "), gen_u(g, d - 1), kf_buf_puts(g->b, ")"); break;
    case 8: kf_buf_puts(g->b, "select("), gen_cond(g, d - 1), kf_buf_puts(g->b, ", "), gen_u(g, d - 1), kf_buf_puts(g->b, ", "), gen_u(g, d - 1), kf_buf_puts(g->b, ")"); break;
    case 9: kf_buf_puts(g->b, "("), gen_i(g, d - 1), kf_buf_puts(g->b, " as u32)"); break;
    case 10:
        if (g->in_fn || !g->nfns) { kf_buf_puts(g->b, "cdiv("), gen_u(g, d - 1), kf_buf_printf(g->b, ", %s)", div[pick(g, 5)]); break; }
        kf_buf_printf(g->b, "f%u(", pick(g, g->nfns)), gen_u(g, d - 1), kf_buf_puts(g->b, ", "), gen_u(g, d - 1), kf_buf_puts(g->b, ", ");
        gen_cond(g, d - 1), kf_buf_puts(g->b, ")");
        break;
    default:
        if (g->in_fn) kf_buf_puts(g->b, "(b >> 3)");
        else kf_buf_puts(g->b, "(x[(t + "), gen_u(g, d - 1), kf_buf_puts(g->b, ") % 64] + 1)");
        break;
    }
}

static void gen_i(gen *g, unsigned d)
{
    static const char *const div[] = {"1", "2", "4", "8", "16", "1073741824", "3", "-4", "-1"};
    switch (d ? pick(g, 6) : 0) {
    case 0: kf_buf_puts(g->b, pick(g, 2) ? "s" : "-5"); break;
    case 1: kf_buf_puts(g->b, "("), gen_u(g, d - 1), kf_buf_puts(g->b, " as i32)"); break;
    case 2: kf_buf_puts(g->b, "("), gen_i(g, d - 1), kf_buf_printf(g->b, " %s %s)", pick(g, 2) ? "/" : "%", div[pick(g, 9)]); break;
    case 3: kf_buf_puts(g->b, "("), gen_i(g, d - 1), kf_buf_puts(g->b, pick(g, 2) ? " - " : " * "), gen_i(g, d - 1), kf_buf_puts(g->b, ")"); break;
    case 4: kf_buf_puts(g->b, "("), gen_i(g, d - 1), kf_buf_printf(g->b, " >> %u)", pick(g, 33)); break;
    default: kf_buf_puts(g->b, "abs("), gen_i(g, d - 1), kf_buf_puts(g->b, ")"); break;
    }
}

/* f32 expressions (kernel only: f and the f32x4 q are in scope). */
static void gen_f(gen *g, unsigned d)
{
    static const char *const leaf[] = {"f", "1.5", "-0.0", "0.0", "(q.x * 3.0e38)", "(v as f32)", "(s as f32)", "q.y", "q[3]"};
    static const char *const un[] = {"sqrt(abs(", "floor(", "round(", "exp(", "trunc(", "rsqrt("};
    static const char *const ops[] = {"+", "-", "*", "/"};
    switch (d ? pick(g, 7) : 0) {
    case 0: kf_buf_puts(g->b, leaf[pick(g, 9)]); break;
    case 1: case 2: kf_buf_puts(g->b, "("), gen_f(g, d - 1), kf_buf_printf(g->b, " %s ", ops[pick(g, 4)]), gen_f(g, d - 1), kf_buf_puts(g->b, ")"); break;
    case 3: {
        unsigned u = pick(g, 6);
        kf_buf_puts(g->b, un[u]), gen_f(g, d - 1), kf_buf_puts(g->b, u == 0 ? "))" : ")");
        break;
    }
    case 4: kf_buf_puts(g->b, pick(g, 2) ? "min(" : "max("), gen_f(g, d - 1), kf_buf_puts(g->b, ", "), gen_f(g, d - 1), kf_buf_puts(g->b, ")"); break;
    case 5: kf_buf_puts(g->b, "fma("), gen_f(g, d - 1), kf_buf_puts(g->b, ", "), gen_f(g, d - 1), kf_buf_puts(g->b, ", "), gen_f(g, d - 1), kf_buf_puts(g->b, ")"); break;
    default: kf_buf_puts(g->b, "(("), gen_f(g, d - 1), kf_buf_puts(g->b, " as f16) as f32)"); break;
    }
}

static void gen_block(gen *g, unsigned n);

static void gen_stmt(gen *g)
{
    unsigned d = 2 + pick(g, 2);
    const char *var = g->u[pick(g, g->nw)];
    bool nest = g->depth < 3;
    switch (pick(g, nest ? 10 : 5)) {
    case 0: case 1: kf_buf_printf(g->b, "%s = ", var), gen_u(g, d), kf_buf_puts(g->b, ";\n"); break;
    case 2: kf_buf_puts(g->b, "s = "), gen_i(g, d), kf_buf_puts(g->b, ";\n"); break;
    case 3:
        if (g->in_fn) kf_buf_printf(g->b, "%s += 1;\n", var);
        else if (pick(g, 3) == 0) kf_buf_puts(g->b, "f = "), gen_f(g, d), kf_buf_puts(g->b, ";\n");
        else if (pick(g, 3) == 0) kf_buf_printf(g->b, "q.%c = ", "xyzw"[pick(g, 4)]), gen_f(g, d), kf_buf_puts(g->b, ";\n");
        else if (pick(g, 4) == 0) kf_buf_puts(g->b, "q = q * f32x4("), gen_f(g, d), kf_buf_puts(g->b, ");\n");
        else if (pick(g, 16) == 0) kf_buf_puts(g->b, "w = w / (v & 3);\n");    /* may divide by zero */
        else if (pick(g, 16) == 0) kf_buf_puts(g->b, "w = x[t + (v & 1) * 63];\n");   /* may be out of bounds */
        else kf_buf_printf(g->b, "y[t * 8 + %u] = ", pick(g, 6)), gen_u(g, d), kf_buf_puts(g->b, ";\n");
        break;
    case 4:
        if (g->loops && pick(g, 2)) kf_buf_puts(g->b, "if "), gen_cond(g, 1), kf_buf_printf(g->b, " { %s; }\n", pick(g, 2) ? "break" : "continue");
        else if (g->in_fn) kf_buf_puts(g->b, "if "), gen_cond(g, 1), kf_buf_puts(g->b, " { return "), gen_u(g, 1), kf_buf_puts(g->b, "; }\n");
        else kf_buf_printf(g->b, "%s ^= t;\n", var);
        break;
    case 5: case 6:
        kf_buf_puts(g->b, "if "), gen_cond(g, 2), kf_buf_puts(g->b, " {\n"), gen_block(g, 2);
        if (pick(g, 2)) kf_buf_puts(g->b, "} else {\n"), gen_block(g, 2);
        kf_buf_puts(g->b, "}\n");
        break;
    case 7: {
        unsigned lo = pick(g, 4), hi = pick(g, 5);
        if (pick(g, 2)) kf_buf_printf(g->b, "for i%u in %u .. %u {\n", g->loops, lo, hi);
        else kf_buf_printf(g->b, "for i%u in %s + %u .. %s + %u {\n", g->loops, g->in_fn ? "(b & 0)" : "z", lo,
                           g->in_fn ? "(b & 0)" : "z", hi);
        g->loops++, gen_block(g, 3), g->loops--;
        kf_buf_puts(g->b, "}\n");
        break;
    }
    case 8:
        kf_buf_printf(g->b, "@unroll for k%u in 0 .. %u {\n%s = %s * 3 + (k%u as u32);\n", g->depth, 1 + pick(g, 3), var, var, g->depth);
        gen_block(g, 1), kf_buf_puts(g->b, "}\n");
        break;
    default: kf_buf_puts(g->b, "if "), gen_cond(g, 0), kf_buf_puts(g->b, " {\n"), gen_block(g, 2), kf_buf_puts(g->b, "}\n"); break;
    }
}

static void gen_block(gen *g, unsigned n)
{
    g->depth++;
    for (unsigned i = 0, m = 1 + pick(g, n); i < m; i++) gen_stmt(g);
    g->depth--;
}

static void gen_program(gen *g)
{
    static const char *const fn_u[] = {"r", "a", "b"}, *const k_u[] = {"v", "w", "t", "n"};
    g->nfns = 0;
    for (unsigned f = 0, nf = 1 + pick(g, 2); f < nf; f++) {
        kf_buf_printf(g->b, "fn f%u(a: u32, b: u32, c: bool) -> u32 {\nvar r: u32 = a ^ b;\nvar s: i32 = -3;\n", f);
        g->u = fn_u, g->nu = 3, g->nw = 1, g->in_fn = true;
        gen_block(g, 3);
        kf_buf_puts(g->b, "return r + (s as u32);\n}\n");
        g->nfns++;
    }
    kf_buf_puts(g->b, "kernel k(x: &[u32], y: &mut [u32], n: u32, z: u32, flag: bool) {\n"
                      "let t = thread_id.x;\nvar v: u32 = x[t];\nvar w: u32 = n;\nvar s: i32 = (v as i32) - 9;\n"
                      "var f: f32 = (v as f32) * 0.5;\nvar q = f32x4(f, 1.0, -2.0, 0.25);\n");
    g->u = k_u, g->nu = 4, g->nw = 2, g->in_fn = false;
    gen_block(g, 4);
    kf_buf_puts(g->b, "y[t * 8 + 6] = bitcast(u32, f) ^ bitcast(u32, q.x + q.w);\n"
                      "y[t * 8 + 7] = v ^ w ^ (s as u32) ^ bitcast(u32, q.y * q.z);\n}\n");
}

/* Random programs give the same bits (or the same error) at -O0 and -O1:
 * 1000 by default, $KF_OPT_PROGRAMS for a longer hunt (30000 pass). */
static void random_programs_compute_the_same_at_O0_and_O1(void **state)
{
    uint32_t x[64], y[64 * 8];
    for (int i = 0; i < 64; i++) x[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)(i << 7);
    unsigned faults = 0, folded = 0;
    unsigned nprog = getenv("KF_OPT_PROGRAMS") ? (unsigned)atoi(getenv("KF_OPT_PROGRAMS")) : 1000;
    for (unsigned p = 0; p < nprog; p++) {
        kf_buf src = {0};
        gen g = {&src, 0x9E3779B97F4A7C15ull ^ (p * 0x100000001B3ull), 0, 0, 0, NULL, 0, 0, false};
        for (int w = 0; w < 4; w++) pick(&g, 2);
        gen_program(&g);
        memset(y, 0, sizeof y);
        karg a[5] = {{x, sizeof x, 0}, {y, sizeof y, 0}, {NULL, 0, 37}, {NULL, 0, 0}, {NULL, 0, p & 1}};
        kf_compile_opts o0 = {NULL, 0, KF_OPT_O0};
        kf_module *m = NULL;
        if (kf_compile("t.kf", src.data, src.len, &o0, &m) != KF_OK) {
            kf_buf r = {0};
            kf_diags_render(&r, &m->diags, m->source, m->source_len);
            fprintf(stderr, "%s\n%s\n", src.data, r.data ? r.data : "");
            fail_msg("program %u does not compile", p);
        }
        kf_opt_stats st;
        assert_int_equal(kf_opt_kernel_stats(&m->arena, &m->kernels[0], &st), KF_OK);
        folded += st.folded + st.branches;
        kf_module_free(m);
        run_result *r = same_both_levels(src.data, 1, 64, a, 5);
        faults += r->st != KF_OK;
        free_result(r);
        kf_buf_free(&src);
    }
    print_message("%u programs: %u folds and decided branches, %u runs ending in a reported fault\n", nprog, folded,
                  faults);
    assert_true(folded > 300);
    assert_true(faults > 0 && faults < nprog / 4);   /* some report a fault; most run to the end */
}

/* ---- the whole library --------------------------------------------------------------- */

/* The side effects of a kernel, in order: stores, loads, atomics, warp
 * operations, barriers, returns, intrinsics (mma, ldmatrix, cp_async and the
 * pure helpers alike: the pass keeps them all) (op, sub, source location). */
typedef KF_VEC(kf_ir_ins) ins_list;

static bool is_effect(uint16_t op)
{
    return op == KF_IR_STORE || op == KF_IR_ASTORE || op == KF_IR_LOAD || op == KF_IR_ALOAD || op == KF_IR_ATOMIC ||
           op == KF_IR_SHFL || op == KF_IR_VOTE || op == KF_IR_BARRIER || op == KF_IR_RET || op == KF_IR_INTRIN;
}

static bool same_effect(const kf_ir_ins *a, const kf_ir_ins *b)
{
    return a->op == b->op && a->sub == b->sub && a->imm == b->imm && a->loc.line == b->loc.line &&
           a->loc.col == b->loc.col;
}

/* Every library and feature kernel: optimised (not skipped), linked, no
 * larger (but for constants, which are immediates), its effects a
 * subsequence of the -O0 ones in the same order
 * (nothing moved or duplicated: only effects in dead code go), and
 * optimising twice gives the same IR. */
/* Kernel k1 (optimised) against k0 (as lowered): k1's effects appear in
 * k0 in the same order. */
static void assert_effects_subsequence(const char *file, const kf_ir_kernel *k0, const kf_ir_kernel *k1)
{
    uint32_t j = 0;
    for (uint32_t x = 0; x < k1->nins; x++) {
        if (!is_effect(k1->ins[x].op)) continue;
        while (j < k0->nins && !(is_effect(k0->ins[j].op) && same_effect(&k0->ins[j], &k1->ins[x]))) j++;
        if (j == k0->nins)
            fail_msg("%s kernel %s: effect at %u:%u moved or made up", file, k1->name, k1->ins[x].loc.line,
                     k1->ins[x].loc.col);
        j++;
    }
}

static uint32_t non_const(const kf_ir_kernel *k)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nins; i++) n += k->ins[i].op != KF_IR_CONST;
    return n;
}

static void library_kernels_keep_their_effects_in_order(void **state)
{
    static kf_file_entry files[64];
    size_t n = kf_list_dir("kernels", files, 0, 64);
    n = kf_list_dir("kernels/features", files, n, 64);
    unsigned nkernels = 0;
    uint64_t before = 0, after = 0;
    for (size_t f = 0; f < n; f++) {
        char *src;
        size_t len;
        assert_int_equal(kf_read_file(files[f].path, &src, &len, NULL), KF_OK);
        kf_compile_opts o0 = {NULL, 0, KF_OPT_O0};
        kf_module *m0 = NULL, *m1 = NULL;
        kf_status st2;
        assert_int_equal(kf_compile(files[f].stem, src, len, &o0, &m0), KF_OK);
        assert_int_equal(kf_compile(files[f].stem, src, len, &o0, &m1), KF_OK);
        kf_module *m2 = kf_compile_entry(&files[f], &st2);   /* the default level */
        assert_int_equal(st2, KF_OK);
        for (uint32_t i = 0; i < m1->nkernels; i++, nkernels++) {
            kf_ir_kernel *k0 = &m0->kernels[i], *k1 = &m1->kernels[i];
            kf_opt_stats st;
            assert_int_equal(kf_opt_kernel_stats(&m1->arena, k1, &st), KF_OK);
            assert_false(st.skipped);
            assert_true(kf_ir_linked(k1));
            if (non_const(k1) > non_const(k0))   /* constants are immediates: a reduction may add one */
                fail_msg("%s kernel %s: %u instructions besides constants, %u before", files[f].path, k1->name,
                         non_const(k1), non_const(k0));
            before += k0->nins, after += k1->nins;
            assert_effects_subsequence(files[f].path, k0, k1);
            char *t1 = ir_text(k1), *t2 = ir_text(&m2->kernels[i]);   /* kf_compile does the same */
            assert_string_equal(t1, t2);
            free(t1), free(t2);
        }
        kf_module_free(m0), kf_module_free(m1), kf_module_free(m2);
        free(src);
    }
    assert_true(nkernels >= 40);
    assert_true(after * 10 < before * 8);   /* more than a fifth of the library's IR goes */
}

/* Whether every operand of `in` is a value whose one definition is a CONST. */
static bool reads_constants_only(const kf_ir_ins *in, const uint32_t *ndefs, const uint8_t *is_const)
{
    unsigned n = 0;
    for (unsigned j = 0; j < 4; j++) {
        if (!in->a[j]) continue;
        if (ndefs[in->a[j]] != 1 || !is_const[in->a[j]]) return false;
        n++;
    }
    return n > 0;
}

/* The math LANGUAGE.md lets each back end approximate (not replaced). */
static bool approximate(const kf_ir_ins *in)
{
    static const kf_builtin approx[] = {KF_BI_EXP, KF_BI_EXP2, KF_BI_LOG, KF_BI_LOG2, KF_BI_RSQRT,
                                        KF_BI_SIN, KF_BI_COS, KF_BI_TANH, KF_BI_RCP, KF_BI_FAST_DIV};
    for (size_t i = 0; in->op == KF_IR_MATH && i < sizeof approx / sizeof *approx; i++)
        if (in->sub == approx[i]) return true;
    return false;
}

static void assert_no_exact_op_on_constants(const char *file, const kf_ir_kernel *k)
{
    uint32_t *ndefs = calloc(k->nvals + 1, sizeof *ndefs);
    uint8_t *is_const = calloc(k->nvals + 1, 1);
    for (uint32_t i = 0; i < k->nins; i++)
        if (k->ins[i].dst) ndefs[k->ins[i].dst]++, is_const[k->ins[i].dst] = k->ins[i].op == KF_IR_CONST;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (kf_opt_exact_op(k, in) && !approximate(in) && reads_constants_only(in, ndefs, is_const))
            fail_msg("%s kernel %s: %s at %u:%u reads constants only", file, k->name, kf_ir_op_names[in->op],
                     in->loc.line, in->loc.col);
    }
    free(ndefs), free(is_const);
}

/* Every library and feature kernel, at -O0 and -O1: no float operation the
 * exact-constant pass covers reads constants only in the IR. (A vector
 * whose lanes are only partly known is not split, so its PTX may still
 * have a lane that reads constants: ir/opt_exact.c says so.) */
static void library_kernels_leave_no_float_operation_on_constants(void **state)
{
    static kf_file_entry files[64];
    size_t n = kf_list_dir("kernels", files, 0, 64);
    n = kf_list_dir("kernels/features", files, n, 64);
    unsigned nkernels = 0;
    for (size_t f = 0; f < n; f++) {
        char *src;
        size_t len;
        assert_int_equal(kf_read_file(files[f].path, &src, &len, NULL), KF_OK);
        for (int level = 0; level < 2; level++) {
            kf_compile_opts co = {NULL, 0, level ? KF_OPT_O1 : KF_OPT_O0};
            kf_module *m = NULL;
            assert_int_equal(kf_compile(files[f].stem, src, len, &co, &m), KF_OK);
            for (uint32_t i = 0; i < m->nkernels; i++, nkernels++) {
                assert_no_exact_op_on_constants(files[f].path, &m->kernels[i]);
            }
            kf_module_free(m);
        }
        free(src);
    }
    assert_true(nkernels >= 80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(folds_constants_with_the_interpreters_semantics),
        cmocka_unit_test(never_folds_approximate_math_or_a_division_by_zero),
        cmocka_unit_test(folds_vector_lanes_bit_exactly),
        cmocka_unit_test(vector_with_a_nan_lane_folds_to_constants),
        cmocka_unit_test(O0_replaces_float_operations_on_constants_only),
        cmocka_unit_test(exact_pass_keeps_the_interpreters_results),
        cmocka_unit_test(if_on_a_constant_keeps_one_side),
        cmocka_unit_test(early_return_wrapper_loop_goes_when_decided),
        cmocka_unit_test(exit_flags_go_when_the_exit_is_decided),
        cmocka_unit_test(loop_that_runs_zero_times_goes),
        cmocka_unit_test(loop_body_that_always_leaves_becomes_an_if),
        cmocka_unit_test(empty_ifs_and_early_return_loops_go),
        cmocka_unit_test(mov_chains_forward_and_dead_values_go),
        cmocka_unit_test(values_rewritten_in_loops_are_not_forwarded),
        cmocka_unit_test(a_definition_on_one_path_is_not_a_constant),
        cmocka_unit_test(loads_and_divisions_that_may_fault_stay),
        cmocka_unit_test(barriers_and_warp_ops_keep_their_place),
        cmocka_unit_test(tensor_intrinsics_stay_though_unread),
        cmocka_unit_test(fences_stay_between_their_accesses),
        cmocka_unit_test(dep_wait_and_trigger_stay_between_their_accesses),
        cmocka_unit_test(unknown_ops_are_opaque),
        cmocka_unit_test(empty_kernels_and_loopless_kernels_compile),
        cmocka_unit_test(nesting_deeper_than_the_walk_is_left_as_lowered),
        cmocka_unit_test(division_by_powers_of_two_becomes_shifts),
        cmocka_unit_test(signed_64_bit_division_rounds_toward_zero),
        cmocka_unit_test(decode_kernels_ptx_has_no_power_of_two_division),
        cmocka_unit_test(feed_flags_match_the_walk),
        cmocka_unit_test(regress_tie_fold_reaches_no_gpu_compiler_as_arithmetic),
        cmocka_unit_test(random_programs_compute_the_same_at_O0_and_O1),
        cmocka_unit_test(library_kernels_keep_their_effects_in_order),
        cmocka_unit_test(library_kernels_leave_no_float_operation_on_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
