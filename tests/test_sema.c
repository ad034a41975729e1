/* Unit tests of semantic analysis (ir/sema*.c) and host-side values
 * (ir/value.c): for each rule of LANGUAGE.md sections 2-8 one accepted and
 * one rejected program (message text and line:col asserted), the typing of
 * untyped constants, folded values, -D overrides, and schedule evaluation
 * with kf_schedule_grid and kf_schedule_shared. Programs go through kf_parse + kf_sema_check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/parse.h"
#include "../ir/passes.h"

typedef struct {
    kf_arena arena;
    kf_diags diags;
    kf_node *module;
    kf_status st;
    char *src;
} prog;

static prog *run_sema(const char *src, const kf_compile_opts *opts)
{
    static const kf_compile_opts none = {0};
    prog *p = calloc(1, sizeof *p);
    assert_non_null(p);
    kf_arena_init(&p->arena);
    p->src = strdup(src);
    kf_pass_ctx cx = {&p->arena, &p->diags, "t.kf", p->src, strlen(src)};
    p->module = kf_parse(&cx);
    assert_non_null(p->module);
    if (p->diags.nerrors)
        fail_msg("syntax error %u:%u: %s\n%s", p->diags.items.data[0].loc.line, p->diags.items.data[0].loc.col,
                 p->diags.items.data[0].msg, src);
    p->st = kf_sema_check(&cx, p->module, opts ? opts : &none);
    return p;
}

static void prog_free(prog *p)
{
    kf_diags_free(&p->diags);
    kf_arena_free(&p->arena);
    free(p->src);
    free(p);
}

static prog *ok_opts(const char *src, const kf_compile_opts *opts)
{
    prog *p = run_sema(src, opts);
    if (p->diags.nerrors)
        fail_msg("unexpected error %u:%u: %s\n%s", p->diags.items.data[0].loc.line, p->diags.items.data[0].loc.col,
                 p->diags.items.data[0].msg, src);
    assert_int_equal(p->st, KF_OK);
    return p;
}

static prog *ok(const char *src) { return ok_opts(src, NULL); }
static void accept(const char *src) { prog_free(ok(src)); }

static void reject_opts(const char *src, const kf_compile_opts *opts, uint32_t line, uint32_t col, const char *part)
{
    prog *p = run_sema(src, opts);
    if (p->diags.items.len == 0) fail_msg("no error for:\n%s", src);
    const kf_diag *d = &p->diags.items.data[0];
    if (!strstr(d->msg, part)) fail_msg("error '%s' lacks '%s' in:\n%s", d->msg, part, src);
    if (d->loc.line != line || d->loc.col != col)
        fail_msg("error '%s' at %u:%u, want %u:%u in:\n%s", d->msg, d->loc.line, d->loc.col, line, col, src);
    assert_int_equal(p->st, KF_ERR_SOURCE);
    prog_free(p);
}

static void reject(const char *src, uint32_t line, uint32_t col, const char *part)
{
    reject_opts(src, NULL, line, col, part);
}

/* A kernel with common parameters; the statements start on line 2. */
#define K(body) "kernel k(a: &[f32], o: &mut [f32], n: u32, i: i32, f: f32, v: f32x4, h: f16, w: u64, b: bool) {\n" body "\n}\n"

static kf_node *find(kf_node *n, kf_node_kind kind, const char *name)
{
    for (; n; n = n->next) {
        if (n->kind == kind && n->name && name && strcmp(n->name, name) == 0) return n;
        kf_node *kids[4] = {n->a, n->b, n->c, n->d};
        for (int i = 0; i < 4; i++) {
            kf_node *r = find(kids[i], kind, name);
            if (r) return r;
        }
    }
    return NULL;
}

/* The first node of `kind` (depth first). */
static kf_node *find_kind(kf_node *n, kf_node_kind kind)
{
    for (; n; n = n->next) {
        if (n->kind == kind) return n;
        kf_node *kids[4] = {n->a, n->b, n->c, n->d};
        for (int i = 0; i < 4; i++) {
            kf_node *r = find_kind(kids[i], kind);
            if (r) return r;
        }
    }
    return NULL;
}

/* The initializer of `let name` (or var/const). */
static kf_node *init_of(prog *p, const char *name)
{
    kf_node *d = find(p->module, KF_N_LET, name);
    if (!d) d = find(p->module, KF_N_VAR, name);
    if (!d) d = find(p->module, KF_N_CONST, name);
    assert_non_null(d);
    return d->b;
}

static kf_type decl_type(prog *p, const char *name)
{
    kf_node *d = find(p->module, KF_N_LET, name);
    if (!d) d = find(p->module, KF_N_VAR, name);
    if (!d) d = find(p->module, KF_N_CONST, name);
    assert_non_null(d);
    return d->type;
}

static void assert_type(kf_type t, const char *want)
{
    char b[48];
    assert_string_equal(kf_type_str(t, b, sizeof b), want);
}

/* ---- module ---------------------------------------------------------------------------- */
static void module_names_are_unique(void **state)
{
    accept("const A: u32 = 1;\nfn f() {}\nkernel k() {}\n");
    reject("const A: u32 = 1;\nfn A() {}\n", 2, 4, "'A' is already defined in this module (at line 1)");
    reject("kernel k() {}\nkernel k() {}\n", 2, 8, "'k' is already defined");
}

static void consts_evaluate_in_dependency_order(void **state)
{
    prog *p = ok("const A: u32 = B * 2;\nconst B: u32 = C + 1;\nconst C: u32 = 20;\n");
    kf_node *a = find(p->module, KF_N_CONST, "A");
    assert_true(a->is_const);
    assert_int_equal(a->cval.u, 42);
    prog_free(p);
    reject("const A: u32 = B;\nconst B: u32 = A + 1;\n", 1, 7, "constant 'A' depends on itself: A -> B -> A");
}

static void const_value_must_be_constant_and_fit(void **state)
{
    reject("const A: u8 = 300;\n", 1, 15, "constant 300 does not fit u8");
    reject("const A: u32 = WARP_SIZE * lane_id;\n", 1, 26, "must be a compile-time constant");
    reject("const A: f32x4 = f32x4(1.0);\n", 1, 10, "must have a scalar type");
    prog *p = ok("const A: i8 = -128;\nconst B: f16 = 0.1;\nconst C: u32 = WARP_SIZE;\n");
    assert_int_equal(find(p->module, KF_N_CONST, "A")->cval.i, -128);
    assert_true(find(p->module, KF_N_CONST, "B")->cval.f == 0.0999755859375);
    assert_int_equal(find(p->module, KF_N_CONST, "C")->cval.u, 32);
    prog_free(p);
}

static void overrides_replace_const_values(void **state)
{
    kf_define d[] = {{"N", "0x1_00"}, {"M", "-5"}, {"E", "1e-3"}, {"B", "true"}};
    kf_compile_opts o = {d, 4, KF_OPT_DEFAULT};
    prog *p = ok_opts("const N: u32 = 1;\nconst M: i16 = 1;\nconst E: f64 = 1.0;\nconst B: bool = false;\n"
                      "const T: u32 = N * 2;\n", &o);
    assert_int_equal(find(p->module, KF_N_CONST, "N")->cval.u, 256);
    assert_int_equal(find(p->module, KF_N_CONST, "M")->cval.i, -5);
    assert_true(find(p->module, KF_N_CONST, "E")->cval.f == 1e-3);
    assert_int_equal(find(p->module, KF_N_CONST, "B")->cval.u, 1);
    assert_int_equal(find(p->module, KF_N_CONST, "T")->cval.u, 512);
    prog_free(p);
}

static void overrides_are_checked(void **state)
{
    kf_define unknown[] = {{"NN", "1"}};
    kf_compile_opts o1 = {unknown, 1, KF_OPT_DEFAULT};
    reject_opts("const N: u32 = 1;\n", &o1, 0, 0, "-D NN=1: there is no constant 'NN' in this module; did you mean 'N'?");
    kf_define bad[] = {{"N", "12abc"}};
    kf_compile_opts o2 = {bad, 1, KF_OPT_DEFAULT};
    reject_opts("const N: u32 = 1;\n", &o2, 0, 0, "-D N=12abc: '12abc' is not a number");
    kf_define big[] = {{"N", "256"}};
    kf_compile_opts o3 = {big, 1, KF_OPT_DEFAULT};
    reject_opts("const N: u8 = 1;\n", &o3, 0, 0, "-D N=256: 256 does not fit u8");
    kf_define fl[] = {{"N", "1.5"}};
    kf_compile_opts o4 = {fl, 1, KF_OPT_DEFAULT};
    reject_opts("const N: i32 = 1;\n", &o4, 0, 0, "-D N=1.5: 1.5 is not an integer");
    kf_define neg[] = {{"N", "-1"}};
    kf_compile_opts o5 = {neg, 1, KF_OPT_DEFAULT};
    reject_opts("const N: u32 = 1;\n", &o5, 0, 0, "does not fit u32");
}

/* ---- scopes --------------------------------------------------------------------------- */
static void inner_blocks_may_shadow(void **state)
{
    prog *p = ok(K("let x: u32 = 1;\nif true { let x: f32 = 2.0; o[0] = x; }\nlet y = x;"));
    assert_type(decl_type(p, "y"), "u32");
    prog_free(p);
    reject(K("let x = 1;\nlet x = 2;"), 3, 5, "'x' is already declared in this block (at line 2)");
    reject("kernel k(n: u32, n: u32) {}\n", 1, 18, "parameter 'n' is declared twice");
}

static void unknown_names_suggest_the_closest(void **state)
{
    reject(K("let count = 1;\nlet y = coutn + 1;"), 3, 9, "unknown name 'coutn'; did you mean 'count'?");
    reject(K("let y = thread_idx.x;"), 2, 9, "unknown name 'thread_idx'; did you mean 'thread_id'?");
    reject(K("let y = zzzz;"), 2, 9, "unknown name 'zzzz'");
    reject(K("let y = frobnicate(1);"), 2, 9, "unknown function 'frobnicate'");
}

/* ---- types and untyped constants ------------------------------------------------------------ */
static void untyped_constants_adapt_to_context(void **state)
{
    prog *p = ok(K("let a1 = n + 1;\nlet a2: u8 = 255;\nlet a3 = 7;\nlet a4 = 1.5;\nlet a5: f64 = 1;\n"
                   "let a6 = h * 2;\nlet a7 = 1 + 2.5;\nlet a8: u64 = 0xFFFF_FFFF_FFFF_FFFF;\nlet a9 = -(1 << 4);"));
    assert_type(decl_type(p, "a1"), "u32");
    assert_type(init_of(p, "a1")->b->type, "u32");
    assert_int_equal(init_of(p, "a1")->b->cval.u, 1);
    assert_type(decl_type(p, "a2"), "u8");
    assert_int_equal(init_of(p, "a2")->cval.u, 255);
    assert_type(decl_type(p, "a3"), "i32");
    assert_type(decl_type(p, "a4"), "f32");
    assert_type(decl_type(p, "a5"), "f64");
    assert_true(init_of(p, "a5")->cval.f == 1.0);
    assert_type(decl_type(p, "a6"), "f16");
    assert_type(decl_type(p, "a7"), "f32");
    assert_true(init_of(p, "a7")->cval.f == 3.5);
    assert_int_equal(init_of(p, "a8")->cval.u, UINT64_MAX);
    assert_int_equal(init_of(p, "a9")->cval.i, -16);
    prog_free(p);
}

static void constants_must_fit_their_type(void **state)
{
    reject(K("let x: u8 = 300;"), 2, 13, "constant 300 does not fit u8");
    reject(K("let x = n + -1;"), 2, 13, "constant -1 does not fit u32");
    reject(K("let x: u32 = 1.5;"), 2, 14, "float constant 1.5 cannot be used as u32: convert it with 'as u32'");
    reject(K("let x = 5000000000;"), 2, 9, "constant 5000000000 does not fit i32");
    reject(K("let x: f16 = 70000.0;"), 2, 14, "constant 70000.0 does not fit f16");
    reject(K("let x: f16 = 70000;"), 2, 14, "constant 70000 does not fit f16");
    reject(K("let x: f64 = 1e300 * 1e300;"), 2, 20, "constant expression overflows: the result is outside the range of f64");
    reject(K("let x = (-0.5) / 5e-324;"), 2, 16, "constant expression overflows");
    accept("kernel k(o: &mut [f16]) { o[0] = 65520 as f16; o[1] = 65520.0 as f16; o[2] = inf * 2.0 as f16; o[3] = (1.5 / -0.0) as f16; }\n");
    reject(K("let x: u8x4 = 300;"), 2, 15, "constant 300 does not fit u8");
    reject(K("let x = v * 1e40;"), 2, 13, "constant 1e+40 does not fit f32");
    reject(K("let x: i32x4 = 1.5;"), 2, 16, "float constant 1.5 cannot be used as i32: convert it with 'as i32'");
    reject(K("let x: bool = min(1, 2);"), 2, 15, "constant 1 cannot be used as bool");
}

/* LANGUAGE.md section 3: an untyped constant used as a vector is splatted
 * (binary operands, compound assignment, builtin arguments, declared types,
 * fn parameters); the node becomes the constructor call T(c). */
static void untyped_constants_splat_to_vectors(void **state)
{
    prog *p = ok(K("var s = f32x4(1.0, 2.0, 3.0, 4.0);\ns = s * 2.0;\ns *= 3;\nlet a1 = 1.0 + v;\n"
                   "let a2: f32x4 = 0.0;\nlet a3 = clamp(v, 0.0, 1.0);\nlet a4 = min(v, 2.0);\nlet a5 = fma(v, 2.0, v);\n"
                   "let a6 = select(b, v, 1.5);\nlet a7: u8x4 = 255;\nlet a8 = v / 2;"));
    assert_type(decl_type(p, "a1"), "f32x4");
    kf_node *c = init_of(p, "a2");
    assert_int_equal(c->kind, KF_N_CALL);
    assert_type(c->type, "f32x4");
    assert_int_equal(c->a->kind, KF_N_TYPE);
    assert_type(c->b->type, "f32");
    assert_true(c->b->is_const && c->b->cval.f == 0.0);
    assert_null(c->b->next);
    assert_type(decl_type(p, "a3"), "f32x4");
    assert_type(decl_type(p, "a4"), "f32x4");
    assert_type(decl_type(p, "a5"), "f32x4");
    assert_type(decl_type(p, "a6"), "f32x4");
    assert_int_equal(init_of(p, "a7")->b->cval.u, 255);
    assert_type(init_of(p, "a8")->b->b->type, "f32");
    prog_free(p);
    accept("fn scale(x: f32x4, k: f32x4) -> f32x4 { return x * k; }\n"
           "kernel k(o: &mut [f32x4], v: f32x4) { o[0] = scale(v, 0.5); o[1] = v; o[1] += 1.0; }\n");
    reject(K("let x = v + n;"), 2, 11, "mismatched types f32x4 and u32 in '+'");
}

/* Generic builtins (min, max, clamp, abs, select) over untyped constants stay
 * untyped constants; over untyped runtime arguments they take the context's
 * type (declared type, assigned element, other operand) instead of i32. */
static void untyped_builtin_calls_adapt_to_context(void **state)
{
    prog *p = ok(K("let s: u32 = select(b, 1, 2);\nlet m: u32 = min(1, 2);\nlet x: u8 = max(300, 7) - 100;\n"
                   "let y: i64 = clamp(-5, -2, 9) + abs(-4);\nlet z = min(1, 2.5);\nlet q = n + select(b, 3, 4);\n"
                   "let r = select(b, 3, 4) + w;\nlet t = select(true, 10, 20);\nlet h2: f16 = max(1.0, 2.0);\n"
                   "var u: u64 = 0;\nu = select(b, 5, 6);\nlet g = min(3, 2);\no[0] = select(b, 1.0, 2.0);"));
    assert_type(decl_type(p, "s"), "u32");
    assert_type(init_of(p, "s")->type, "u32");
    assert_type(init_of(p, "s")->b->next->type, "u32");
    assert_type(decl_type(p, "m"), "u32");
    assert_true(init_of(p, "m")->is_const);
    assert_int_equal(init_of(p, "m")->cval.u, 1);
    assert_int_equal(init_of(p, "x")->cval.u, 200);
    assert_int_equal(init_of(p, "y")->cval.i, 2);
    assert_type(decl_type(p, "z"), "f32");
    assert_true(init_of(p, "z")->cval.f == 1.0);
    assert_type(decl_type(p, "q"), "u32");
    assert_type(decl_type(p, "r"), "u64");
    assert_int_equal(init_of(p, "t")->cval.i, 10);
    assert_type(decl_type(p, "h2"), "f16");
    assert_type(decl_type(p, "g"), "i32");
    assert_int_equal(init_of(p, "g")->cval.i, 2);
    prog_free(p);
    /* folded float min/max/clamp order -0 below +0, as every back end's
     * (fmin/fmax may return either zero: they gave max(-0.0, 0.0) = -0) */
    p = ok(K("let a = min(0.0, -0.0);\nlet b = max(-0.0, 0.0);\nlet c = clamp(-0.0, 0.0, 1.0);\n"
             "let d = min(-0.0, 0.0);\nlet e = max(0.0, -0.0);\nlet f = clamp(0.0, -1.0, -0.0);"));
    assert_true(init_of(p, "a")->cval.f == 0 && signbit(init_of(p, "a")->cval.f));
    assert_true(init_of(p, "b")->cval.f == 0 && !signbit(init_of(p, "b")->cval.f));
    assert_true(init_of(p, "c")->cval.f == 0 && !signbit(init_of(p, "c")->cval.f));
    assert_true(signbit(init_of(p, "d")->cval.f) && !signbit(init_of(p, "e")->cval.f));
    assert_true(init_of(p, "f")->cval.f == 0 && signbit(init_of(p, "f")->cval.f));
    prog_free(p);
    p = ok("fn pick(c: bool) -> u64 { return select(c, 1, 2); }\nfn put(x: u8) -> u8 { return x; }\n"
           "kernel k(o: &mut [u64], b: bool) { o[0] = pick(b) + (put(select(b, 200, 255)) as u64); }\n");
    kf_node *ret = find_kind(p->module, KF_N_RETURN);
    assert_non_null(ret);
    assert_type(ret->a->type, "u64");
    prog_free(p);
    /* the context reaches calls and operators nested in a generic call or an
     * arithmetic operator that has it (a CUDA user's c ? 1 : (d ? 2 : 3)) */
    p = ok("fn b2(v: i32) -> u32 { return select(v < 0, 1, select(v < 5, 2, 3)); }\n"
           "fn b3(v: i32) -> u32 { return min(select(v < 0, 1, 2), 7) + select(v < 5, 2, 3); }\n"
           "kernel k(o: &mut [u32], v: i32, n: u32) {\n"
           "    o[0] = b2(v) + b3(v) + (n + select(v < 0, 1, select(v < 5, 2, 3)));\n"
           "    let r: u64 = ~select(v < 0, 1, 2) - clamp(select(v > 1, 5, 6) * 2, 1, 9);\n"
           "    let f: f64 = select(v < 0, 1.0, 2.0) * 0.1;\n"
           "    o[1] = (r as u32) + (f as u32);\n}\n");
    kf_node *b2 = find_kind(p->module, KF_N_RETURN);
    assert_non_null(b2);
    assert_type(b2->a->type, "u32");
    assert_type(b2->a->b->next->next->type, "u32");
    assert_type(decl_type(p, "r"), "u64");
    assert_type(init_of(p, "r")->a->a->type, "u64");
    assert_type(init_of(p, "f")->a->type, "f64");
    prog_free(p);
    /* ... and through the operands a builtin or statement types: constructor
     * values, bfe's position, a lane, an atomic's value, for bounds and step;
     * warp_sum and cdiv over literals take their context like sqrt */
    p = ok("kernel k(o: &mut [u32], w: &mut [u64], n: u32) {\n"
           "    let v = u32x2(select(n > 0, 3000000000, 2), n);\n"
           "    let f = bfe(n, select(n > 9, 4, 8), 8) + shfl(n, select(n > 1, 0, 31)) + prmt(n, n, select(n > 2, 0x3210, 0x0123));\n"
           "    let c: u32 = warp_sum(1);\n"
           "    let d: u64 = cdiv(1 << 40, select(n > 3, 3, 5));\n"
           "    for i in select(n > 0, 0, 1) .. n - 3 step select(n > 7, 2, 1) { o[i] = v[0] + f + c; }\n"
           "    atomic_add(o, 0, select(n > 0, 3000000000, 2));\n"
           "    w[0] = d;\n}\n");
    assert_type(decl_type(p, "v"), "u32x2");
    assert_type(decl_type(p, "c"), "u32");
    assert_type(init_of(p, "d")->b->next->type, "u64");
    assert_type(find_kind(p->module, KF_N_FOR)->type, "u32");
    prog_free(p);
    /* with no context they default as before */
    reject(K("let q = select(b, 1, select(b, 2, 3));\nlet w: u32 = q;"), 3, 14, "must be u32, found i32");
    /* math on untyped constants takes a float context's type, else f32 */
    p = ok("kernel k(d: &mut [f64], x: f64) { d[0] = x * 2.0 + sqrt(2.0); let e: f64 = exp(1.0); let f = exp(1.0); d[1] = e; }\n");
    kf_node *sq = find_kind(p->module, KF_N_ASSIGN)->b->b;
    assert_type(sq->type, "f64");
    assert_true(sq->is_const);
    assert_true(sq->cval.f == sqrt(2.0));
    assert_type(decl_type(p, "e"), "f64");
    assert_type(decl_type(p, "f"), "f32");
    prog_free(p);
    reject(K("let x: u8 = select(b, 1, 300);"), 2, 26, "constant 300 does not fit u8");
    reject(K("let x: u32 = min(-1, 2);"), 2, 14, "constant -1 does not fit u32");
    /* an untyped @unroll expression is exact in each iteration and must fit its type, as a literal */
    reject(K("@unroll for t in 0 .. 4 { let y: u8 = t + 254; o[t] = y as f32; }"), 2, 41,
           "constant 256 (@unroll at t = 2) does not fit u8");
    accept("kernel k(o: &mut [u8]) { @unroll for t in 0 .. 4 { let y: u8 = (t + 254) / 2; o[t] = y; } }\n");
    /* ... in i64, or u64 when a value passes INT64_MAX; never wrapping: a value past both is an overflow,
     * and a negative value that u64 would misread (here by /) has no 64-bit type */
    reject(K("@unroll for t in 0 .. 3 { o[t] = ((t * 9223372036854775807) * 4 / 4) as f32; }"), 2, 61,
           "constant expression overflows (@unroll at t = 1): the result is outside the range of u64 and i64");
    reject(K("@unroll for t in 0 .. 2 { o[t] = (((t - 1) / 2 + 9223372036854775808) as f32); }"), 2, 48,
           "constant expression over @unroll variables has values below 0 and above 9223372036854775807 (@unroll at t = 0): "
           "no 64-bit type holds them all; convert a part of it with 'as'");
    accept("kernel k(o: &mut [u64]) { @unroll for t in 0 .. 2 { o[t] = ((t - 1) + 9223372036854775808) / 2; } }\n");
    /* an untyped comparison over t takes the one 64-bit type that holds both sides in every iteration */
    accept("kernel k(o: &mut [u32]) { @unroll for t in 0 .. 2 { o[t] = select(t + 9223372036854775808 > 5, 1, 0); } }\n");
    reject(K("@unroll for t in 0 .. 2 { o[t] = select(t + 9223372036854775808 > -1, 1.0, 0.0); }"), 2, 65,
           "comparison over @unroll variables has values below 0 and above 9223372036854775807 across the iterations: "
           "no 64-bit type holds them all; convert a part of it with 'as'");
    reject(K("let x: u32 = select(b, 1.5, 2);"), 2, 14, "the initializer of 'x' must be u32, found f32");
}

static void binary_operands_must_match(void **state)
{
    accept(K("let x = n + (i as u32);\nlet y = f * 2.0 + f;"));
    reject(K("let x = n + i;"), 2, 11, "mismatched types u32 and i32 in '+': convert one with 'as'");
    reject(K("let x = f < h;"), 2, 11, "mismatched types f32 and f16 in '<'");
}

static void operator_rules(void **state)
{
    prog *p = ok(K("let c = n < 3;\nlet m = i % 4;\nlet s = n << 2;\nlet l = b && n != 0;\nlet q = !b;\nlet z = ~n;"));
    assert_type(decl_type(p, "c"), "bool");
    assert_type(decl_type(p, "l"), "bool");
    prog_free(p);
    reject(K("let x = f % 2.0;"), 2, 11, "'%' needs integer operands, found f32");
    reject(K("let x = f & f;"), 2, 11, "'&' needs integer operands, found f32");
    reject(K("let x = n && b;"), 2, 11, "'&&' needs bool operands, found u32: compare with != 0");
    reject(K("let x = b + b;"), 2, 11, "'+' needs numbers, found bool");
    reject(K("let x = !n;"), 2, 9, "'!' needs a bool, found u32: compare with == 0");
    reject(K("let x = v == v;"), 2, 11, "'==' needs scalar operands");
    reject(K("let x = 1 && 2;"), 2, 11, "'&&' needs bool operands");
}

static void conditions_must_be_bool(void **state)
{
    accept(K("if n != 0 { } else if b { }\nwhile false { }"));
    reject(K("if n { }"), 2, 4, "condition must be bool, found u32: compare with != 0");
    reject(K("while 1 { }"), 2, 7, "condition must be bool, found untyped int");
}

static void vectors_work_componentwise(void **state)
{
    prog *p = ok(K("let s = v + v * v;\nlet c = v.x + v.w;\nlet d = v[3];\nlet e = f32x4(1, f, 2.5, f);\n"
                   "let g = f16x2(h);\nlet u = u8x16(1);"));
    assert_type(decl_type(p, "s"), "f32x4");
    assert_type(decl_type(p, "c"), "f32");
    assert_type(decl_type(p, "d"), "f32");
    assert_type(decl_type(p, "e"), "f32x4");
    assert_type(init_of(p, "e")->b->type, "f32");
    assert_type(decl_type(p, "g"), "f16x2");
    prog_free(p);
    reject(K("let x = v[4];"), 2, 11, "index 4 is out of range for f32x4 (0..3)");
    reject(K("let x = v[n];"), 2, 11, "a vector index must be a compile-time constant");
    reject(K("let x = f32x4(1.0, 2.0, 3.0);"), 2, 9, "f32x4 takes 4 values, or 1 to splat, found 3");
    reject(K("let x = f32x2(f, h);"), 2, 18, "value 2 of f32x2 must be f32, found f16");
    reject(K("let x = v.q;"), 2, 11, "f32x4 has no member .q");
    reject(K("let y = f32x2(f);\nlet x = y.z;"), 3, 11, "f32x2 has no member .z");
    reject(K("let x = f.x;"), 2, 11, "'.x' needs a vector, found f32");
    reject(K("let x = v & v;"), 2, 11, "'&' needs integer operands, found f32x4");
}

static void as_converts_numbers_only(void **state)
{
    prog *p = ok(K("let x = f as i32;\nlet y = b as f32;\nlet z = v as f16x4;\nlet q = -1 as u32;\n"
                   "let r = 1e10 as f16;\nlet t = 3.7 as i32;\nlet m = a as &[f32x4];\nlet wr = o as &[u8];"));
    assert_type(decl_type(p, "x"), "i32");
    assert_type(decl_type(p, "z"), "f16x4");
    assert_int_equal(init_of(p, "q")->cval.u, 0xFFFFFFFFu);
    assert_true(isinf(init_of(p, "r")->cval.f));
    assert_int_equal(init_of(p, "t")->cval.i, 3);
    assert_type(decl_type(p, "m"), "&[f32x4]");
    prog_free(p);
    reject(K("let x = n as bool;"), 2, 11, "cannot convert u32 to bool with 'as': write x != 0");
    reject(K("let x = a as &mut [f32];"), 2, 11, "cannot view read-only &[f32] as &mut [f32]");
    reject(K("let x = v as f32x2;"), 2, 11, "the lane counts differ");
    reject(K("let x = f as f32x4;"), 2, 11, "write f32x4(x) to splat");
    reject(K("let x = a as f32;"), 2, 11, "a buffer can only be viewed as another buffer type");
}

static void bitcast_needs_equal_sizes(void **state)
{
    prog *p = ok(K("let x = bitcast(f16x2, n);\nlet y = bitcast(u32, 1.0 as f32);"));
    assert_type(decl_type(p, "x"), "f16x2");
    assert_int_equal(init_of(p, "y")->cval.u, 0x3f800000u);
    prog_free(p);
    reject(K("let x = bitcast(u64, n);"), 2, 9, "bitcast from u32 (4 bytes) to u64 (8 bytes): the sizes must match");
}

/* ---- declarations and assignment ---------------------------------------------------------------- */
static void let_is_immutable(void **state)
{
    accept(K("var x: u32 = 1;\nx = 2;\nx += n;\nvar y = 0;\ny = y + 1;"));
    reject(K("let x = 1;\nx = 2;"), 3, 1, "cannot assign to 'x': it is declared with 'let'; declare it with 'var'");
    reject(K("n = 2;"), 2, 1, "cannot assign to parameter 'n'");
    reject(K("for j in 0 .. 4 { j = 1; }"), 2, 19, "cannot assign to loop variable 'j'");
}

static void local_arrays_need_constant_length(void **state)
{
    prog *p = ok("const L: u32 = 4;\n" K("var t: f32[L * 2];\nt[0] = 1.0;\nlet q = t[7];"));
    kf_type t = decl_type(p, "t");
    assert_int_equal(t.kind, KF_TK_ARRAY);
    assert_int_equal(t.len, 8);
    prog_free(p);
    reject(K("var t: f32[n];"), 2, 12, "an array length must be an integer compile-time constant");
    reject(K("var t: f32[0];"), 2, 12, "an array length must be in 1..4294967295, found 0");
    reject(K("var t: f32[4];\nlet q = t[4];"), 3, 11, "index 4 is out of bounds for f32[4]");
    reject(K("var t: f32[4];\nlet q = t;"), 3, 9, "a local array (f32[4]) cannot be bound with 'let': index it");
    reject(K("var t: f32[4];\nvar q = t;"), 3, 9, "array 't' (f32[4]) cannot be used as a value: index it");
    prog *q = ok(K("var q: f32;\nq += 1.0;"));
    assert_type(decl_type(q, "q"), "f32");
    prog_free(q);
}

static void shared_arrays_in_kernels_and_fns(void **state)
{
    accept(K("shared s: f32[256];\ns[0] = 1.0;\nif b { shared t: u32[4]; t[1] = n; }"));
    accept("fn g() -> f32 {\nshared s: f32[4];\ns[0] = 1.0;\nreturn s[0];\n}\n");
    prog *p = ok(K("shared d: f16[];\nd[n] = h;"));
    kf_type t = find(p->module, KF_N_SHARED, "d")->type;
    assert_type(t, "shared f16[]");
    assert_true((t.flags & KF_TF_DYN) && t.len == 0);
    prog_free(p);
    reject("fn g() {\nshared s: f32[];\n}\n", 2, 8, "a fn cannot declare the dynamic shared array 's'");
    reject(K("shared s: f32[];\nshared t: u32[];"), 3, 8,
           "kernel 'k' already has a dynamic shared array ('s' at line 2); a kernel has one");
    reject("kernel k(p: shared f32[]) {}\n", 1, 10, "kernel parameter 'p' cannot be a shared array");
}

/* `as shared T[]` views: shared arrays only; static lengths follow the bytes. */
static void shared_views(void **state)
{
    prog *p = ok(K("shared t: f16[12];\nlet v = t as shared f16x8[];\nlet w = v as shared u32[];\n"
                   "shared d: f32[];\nlet e = d as shared f32x4[];\ne[n] = v4(f);") "fn v4(x: f32) -> f32x4 { return f32x4(x); }\n");
    assert_type(decl_type(p, "v"), "shared f16x8[1]");   /* 24 bytes: one f16x8 */
    assert_type(decl_type(p, "w"), "shared u32[4]");      /* the view's 16 bytes */
    assert_type(decl_type(p, "e"), "shared f32x4[]");
    prog_free(p);
    reject(K("let q = a as shared f32[];"), 2, 11, "a buffer can never be viewed as shared memory");
    reject(K("var t: f32[4];\nlet q = t as shared u32[];"), 3, 11, "only a shared array can be viewed as shared u32[]; 't' is f32[4]");
    reject(K("shared t: f16[4];\nlet q = t as shared f16x8[];"), 3, 11, "'t' (shared f16[4], 8 bytes) viewed as shared f16x8[] has no element");
    reject(K("shared t: f32[4];\nlet q = t as f32;"), 3, 11, "an array can only be viewed as another shared array type");
    reject(K("shared t: f32[4];\nlet q = t as &[f32];"), 3, 11, "an array cannot be viewed as a buffer");
    reject(K("shared t: f32[8];\nlet q = (t as shared f32x4[])[2];"), 3, 31, "index 2 is out of bounds for shared f32x4[2]");
}

/* `p: shared T[]` takes a shared array of any length or a view. */
static void shared_array_parameters(void **state)
{
    const char *fn = "fn put(p: shared f32[], i: u32, v: f32) { p[i] = v; }\n";
    char src[1024];
    snprintf(src, sizeof src, "%s" K("shared s: f32[64];\nshared d: u32[];\nput(s, n, f);\nput(d as shared f32[], 0, f);"), fn);
    accept(src);
    snprintf(src, sizeof src, "%s" K("var t: f32[4];\nput(t, 0, f);"), fn);
    reject(src, 4, 5, "argument 1 of 'put' (p) must be shared f32[], found f32[4]: only shared arrays can be passed");
    snprintf(src, sizeof src, "%s" K("shared s: u32[8];\nput(s, 0, f);"), fn);
    reject(src, 4, 5, "argument 1 of 'put' (p) must be shared f32[], found shared u32[8]: view it with 'as shared T[]'");
    snprintf(src, sizeof src, "%s" K("put(a, 0, f);"), fn);
    reject(src, 3, 5, "argument 1 of 'put' (p) must be shared f32[], found &[f32]");
}

static void assignment_targets(void **state)
{
    accept(K("o[n] = 1.0;\nvar u = v;\nu.y = 2.0;\nu[3] = f;\nvar t: u32[4];\nt[n] = 1;\no[i] = a[w];"));
    reject(K("a[0] = 1.0;"), 2, 2, "buffer 'a' is read-only (&[f32]); declare it '&mut [f32]'");
    reject(K("v.x = 1.0;"), 2, 3, "only a component of a 'var' vector can be assigned");
    reject(K("o[f] = 1.0;"), 2, 3, "an index must be an integer, found f32");
    reject(K("var x = 1.0;\nx %= 2.0;"), 3, 3, "'%=' needs integer operands, found f32");
    reject(K("var x: u32 = 1;\nx += i;"), 3, 3, "mismatched types u32 and i32 in '+='");
    reject(K("var x: u32 = 1;\nx = f;"), 3, 5, "the value assigned to 'x' must be u32, found f32: convert it with 'as'");
    reject(K("o[-1] = 1.0;"), 2, 3, "index -1 is negative");
    reject(K("var t: f32[4];\nt = 1.0;"), 3, 1, "cannot assign to the whole array 't': assign its elements");
    reject(K("thread_id = 1;"), 2, 1, "cannot assign to builtin 'thread_id'");
    prog *p = run_sema(K("var t: f32[4];\nt = 1.0;"), NULL);
    assert_int_equal(p->diags.nerrors, 1);
    prog_free(p);
}

/* ---- control -------------------------------------------------------------------------------- */
static void break_only_inside_loops(void **state)
{
    accept(K("for j in 0 .. n { if j == 3 { break; } continue; }\nwhile true { break; }"));
    reject(K("break;"), 2, 1, "'break' must be inside a loop");
    reject("fn g() { continue; }\n" K("for j in 0 .. 4 { g(); }"), 1, 10, "'continue' must be inside a loop");
}

static void returns(void **state)
{
    accept("fn g(x: f32) -> f32 {\nif x > 0.0 { return x; } else { return -x; }\n}\n"
           "fn h(x: u32) -> u32 { while true { return x; } }\n" K("if b { return; }\nlet y = g(f) + g(2);"));
    reject(K("return 1;"), 2, 8, "a kernel cannot return a value: write 'return;'");
    reject("fn g(x: f32) -> f32 {\nif x > 0.0 { return x; }\n}\n", 1, 4, "fn 'g' must return a value of type f32 on every path");
    reject("fn g() { return 1; }\n", 1, 17, "fn 'g' has no return type: remove the value or declare '-> T'");
    reject("fn g() -> u32 { return; }\n", 1, 17, "fn 'g' must return a value of type u32");
    reject("fn g() -> u32 { return 1.5; }\n", 1, 24, "float constant 1.5 cannot be used as u32");
}

static void for_loop_types(void **state)
{
    prog *p = ok(K("for c in thread_id.x .. n step 32 { o[c] = 0.0; }\nfor j in 0 .. 10 { let jj = j; }\n"
                   "for q in 0 .. w step w { }"));
    assert_type(find(p->module, KF_N_FOR, "c")->type, "u32");
    assert_type(find(p->module, KF_N_FOR, "j")->type, "i32");
    assert_type(decl_type(p, "jj"), "i32");
    assert_type(find(p->module, KF_N_FOR, "q")->type, "u64");
    prog_free(p);
    reject(K("for j in 0 .. n step 0 { }"), 2, 22, "the step of a for loop must be positive, found 0");
    reject(K("for j in i .. n { }"), 2, 1, "mismatched types i32 and u32 in 'for j in a .. b'");
    reject(K("for j in 0.0 .. 4.0 { }"), 2, 10, "the bounds of a for loop must be integers");
    reject(K("for j in 0 .. n step i { }"), 2, 22, "the step of 'for j' must be u32, found i32");
}

static void unroll_body_may_break_and_continue(void **state)
{
    accept(K("var s: u32 = 0;\n@unroll for u in 0 .. 4 {\n  if u == 1 { continue; }\n  if n == u { break; }\n  s += u;\n}\n"
             "@unroll for t in 0 .. 2 { if b { break; } continue; }"));
}

static void unroll_needs_constant_bounds(void **state)
{
    prog *p = ok(K("var acc = v;\n@unroll for t in 0 .. 4 { acc[t] = acc[t] * 2.0; let m = n + t; }\n"
                   "@unroll for s in 0 .. 8 step 2 { let e = s * 3; }"));
    kf_node *t = find(p->module, KF_N_FOR, "t");
    assert_true(t->is_const);
    assert_int_equal(t->op, 1);
    assert_type(decl_type(p, "m"), "u32");
    kf_node *e = init_of(p, "e");
    assert_true(e->is_const);
    assert_int_equal(e->cval.i, 0);
    /* lowering's per-iteration refold */
    kf_node *s = find(p->module, KF_N_FOR, "s");
    s->cval.i = 6;
    assert_true(kf_sema_fold(s->d));
    assert_int_equal(e->cval.i, 18);
    prog_free(p);
    reject(K("@unroll for t in 0 .. n { }"), 2, 23, "@unroll needs compile-time constant bounds: the end 'n' is not a constant");
    reject(K("@unroll for t in 0 .. 2000 { }"), 2, 9, "@unroll loop 't' runs 2000 iterations; at most 1024 can be unrolled");
    reject(K("var acc = v;\n@unroll for t in 0 .. 5 { acc[t] = 1.0; }"), 3, 31, "index 4 is out of range for f32x4 (0..3)");
    accept(K("@unroll for t in 0 .. 4 { if t == 2 { break; } if t == 1 { continue; } }"));
}

static void nested_unroll_checks_every_iteration(void **state)
{
    prog *p = ok(K("var acc: f32[16];\n@unroll for r in 0 .. 4 {\n@unroll for c in 0 .. r {\nlet k = r * 4 + c;\nacc[k] = 0.0;\n}\n}"));
    kf_node *k = init_of(p, "k");
    assert_true(k->is_const);
    kf_node *r = find(p->module, KF_N_FOR, "r"), *c = find(p->module, KF_N_FOR, "c");
    r->cval.i = 3;
    c->cval.i = 2;
    assert_true(kf_sema_fold(r->d));
    assert_int_equal(k->cval.i, 14);
    prog_free(p);
    reject(K("var acc: f32[16];\n@unroll for r in 0 .. 4 {\n@unroll for c in 0 .. r {\nacc[r * 5 + c] = 0.0;\n}\n}"), 5, 11,
           "index 16 is out of bounds for f32[16]");
    reject(K("@unroll for r in 0 .. 4 {\n@unroll for c in 0 .. r * 600 { }\n}"), 3, 9, "@unroll loop 'c' runs 1200 iterations");
    accept(K("var u = v;\n@unroll for t in 0 .. 2 { let q = t + 2; u[q] = u[t]; }"));
}

/* An iteration checks only the if arms it can take (grammar/README.md section 4). */
static void unroll_checks_only_live_arms(void **state)
{
    (void)state;
    accept(K("var s: f32 = 0.0;\n@unroll for k in 0 .. 4 {\n  if k > 0 { s += v[k - 1]; }\n"
             "  if k > 1 && f > 0.0 { let q: u32 = k - 2; s += a[q]; } else { s += 1.0; }\n"
             "  if k == 3 || f > 0.0 { s += 2.0; } else { s += v[k + 1]; }\n"
             "  if !(k < 3) { s += v[k]; }\n"
             "  if k == 0 { s += 1.0; } else if k < 3 { s += v[k - 1]; } else { @unroll for j in 0 .. k - 2 { s += v[j]; } }\n"
             "  @unroll for j in k .. k + 1 { o[j] = s; }\n}"));
    /* the right of && / || where the left decides it */
    accept(K("var s: f32 = 0.0;\n@unroll for k in 0 .. 4 {\n  if k >= 2 && v[k] > v[k - 2] { s += 1.0; }\n"
             "  let q = k < 1 || v[k - 1] > 0.0;\n  if q { s += 2.0; }\n}\no[0] = s;"));
    /* the arm a constant if never takes (a -D constant's) is not range-checked */
    accept("const R: u32 = 2;\nconst USE: bool = false;\n"
           K("var w: f32[R];\nw[0] = 1.0; w[1] = 2.0;\nvar acc = w[0] + w[1];\nif R > 2 { acc += w[2]; }\n"
             "if USE { acc += w[5] + v[7]; } else { acc += 1.0; }\nif R == 2 { acc += 2.0; } else { acc += w[3]; }\no[0] = acc;"));
    reject("const R: u32 = 2;\n" K("var w: f32[R];\nw[0] = 1.0;\nif R > 1 { o[0] = w[2]; }"), 5, 21,
           "index 2 is out of bounds for f32[2]");
    /* an arm that may run in some thread is still checked */
    reject(K("var s: f32 = 0.0;\n@unroll for k in 0 .. 4 {\n  if k > 0 || f > 0.0 { s += v[k - 1]; }\n}"), 4, 34,
           "constant -1 (@unroll at k = 0) does not fit u32");
    reject(K("var s: f32 = 0.0;\n@unroll for k in 0 .. 4 {\n  if k > 0 { s += 1.0; } else { s += v[k - 1]; }\n}"), 4, 42,
           "constant -1 (@unroll at k = 0) does not fit u32");
}

/* ---- fns ---------------------------------------------------------------------------------- */
static void fns_are_checked_and_inlinable(void **state)
{
    prog *p = ok("fn sq(x: f32) -> f32 { return x * x; }\nfn put(y: &mut [f32], k: u32, val: f32) { y[k] = val; }\n"
                 "fn rd(y: &[f32], k: u32) -> f32 { return y[k]; }\n"
                 K("put(o, n, sq(2));\nlet r = rd(o, 0) + rd(a, 1);"));
    kf_node *c = find(p->module, KF_N_CALL, NULL);
    (void)c;
    prog_free(p);
    reject("fn f(x: u32) -> u32 { return g(x); }\nfn g(x: u32) -> u32 { return f(x); }\n", 2, 30,
           "recursion is not allowed (fns are inlined): f -> g -> f");
    reject("fn f(x: u32) -> u32 { return f(x); }\n", 1, 30, "recursion is not allowed (fns are inlined): f -> f");
    reject("fn g(x: u32) {}\n" K("g(n, n);"), 3, 1, "fn 'g' takes 1 argument, found 2");
    reject("fn g(x: u32) {}\n" K("g(i);"), 3, 3, "argument 1 of 'g' (x) must be u32, found i32");
    reject("fn g(y: &mut [f32]) {}\n" K("g(a);"), 3, 3, "argument 1 of 'g' (y) must be &mut [f32], found &[f32]");
    reject(K("let y = f(1);"), 2, 9, "'f' is not a function");
    reject(K("let x = k;"), 2, 9, "'k' is a kernel");
}

/* ---- builtins -------------------------------------------------------------------------------- */
static void geometry_builtins(void **state)
{
    prog *p = ok(K("let g = global_id.x + block_dim.y * grid_dim.z + block_id.x;\nlet l = lane_id + warp_id + WARP_SIZE;"));
    assert_type(decl_type(p, "g"), "u32");
    kf_node *ws = find(p->module, KF_N_LET, "l")->b->b;
    assert_int_equal(ws->op, KF_BI_WARP_SIZE);
    assert_null(ws->sym);
    assert_true(ws->is_const);
    assert_int_equal(ws->cval.u, 32);
    prog_free(p);
    reject(K("let x = thread_id;"), 2, 9, "'thread_id' is a dim3: use thread_id.x, thread_id.y or thread_id.z");
    reject(K("let x = thread_id.w;"), 2, 19, "'thread_id' has members .x .y .z, not .w");
}

static void warp_builtins(void **state)
{
    prog *p = ok(K("let s = shfl_xor(f, 16);\nlet t = warp_sum(v);\nlet u = shfl(w, lane_id);\nlet q = ballot(f > 0.0);\n"
                   "let r = any(b) && all(b);\nbarrier();"));
    assert_type(decl_type(p, "s"), "f32");
    assert_type(decl_type(p, "t"), "f32x4");
    assert_type(decl_type(p, "q"), "u32");
    assert_type(decl_type(p, "r"), "bool");
    prog_free(p);
    reject(K("let s = shfl_xor(h, 16);"), 2, 18, "'shfl_xor' accepts a 32- or 64-bit value or a vector of them, found f16");
    reject(K("let s = shfl_down(f, i);"), 2, 22, "the lane offset of 'shfl_down' must be u32, found i32");
    reject(K("let s = ballot(n);"), 2, 16, "'ballot' needs a bool, found u32: compare with != 0");
    reject(K("let s = warp_max(b);"), 2, 18, "'warp_max' accepts a 32- or 64-bit value");
    reject(K("barrier(1);"), 2, 1, "'barrier' takes 0 arguments, found 1");
}

/* dep_wait() and dep_trigger(): statements with no arguments and no value
 * (kforge extensions); a user's fn named dep_wait hides the builtin. Where
 * dep_wait may stand is lowering's rule (tests/diagnostics/121-125). */
static void dep_builtins(void **state)
{
    prog *p = ok("kernel k(o: &mut [f32]) {\ndep_trigger();\ndep_wait();\no[0] = 1.0;\n}\n");
    kf_node *call = find_kind(p->module, KF_N_EXPR)->a;
    assert_int_equal(call->kind, KF_N_CALL);
    assert_int_equal(call->op, KF_BI_DEP_TRIGGER);
    assert_int_equal(call->type.kind, KF_TK_VOID);
    prog_free(p);
    p = ok("fn dep_wait(x: f32) -> f32 { return x; }\n"
           "kernel k(o: &mut [f32]) {\nlet y = dep_wait(o[0]);\no[0] = y;\n}\n");
    assert_type(decl_type(p, "y"), "f32");
    prog_free(p);
    reject(K("dep_wait(n);"), 2, 1, "'dep_wait' takes 0 arguments, found 1");
    reject(K("let x = dep_trigger();"), 2, 9, "'dep_trigger' returns no value: call it as a statement");
}

/* prefetch_l2(src, j, n): a buffer, an index of any integer type, a u32
 * element count; a statement with no value. */
static void prefetch_builtin(void **state)
{
    prog *p = ok("kernel k(a: &[f16x8], o: &mut [f32], n: u32, j: i64) {\nprefetch_l2(a, j, n);\n"
                 "prefetch_l2(o, 3, 5);\nprefetch_l2(a as &[u8], 0, n * 16);\n}\n");
    kf_node *call = find_kind(p->module, KF_N_EXPR)->a;
    assert_int_equal(call->kind, KF_N_CALL);
    assert_int_equal(call->op, KF_BI_PREFETCH_L2);
    assert_int_equal(call->type.kind, KF_TK_VOID);
    prog_free(p);
    reject(K("shared s: f32[64];\nprefetch_l2(s, 0, 64);"), 3, 13,
           "'prefetch_l2' prefetches a buffer (global memory), found shared f32[64]: shared and local arrays are on chip already");
    reject(K("prefetch_l2(f, 0, 4);"), 2, 13, "'prefetch_l2' prefetches a buffer (global memory), found f32");
    reject(K("prefetch_l2(a, f, 4);"), 2, 16, "an index must be an integer, found f32");
    reject(K("prefetch_l2(a, 0, i);"), 2, 19, "the element count of 'prefetch_l2' must be u32, found i32");
    reject(K("prefetch_l2(a, 0);"), 2, 1, "'prefetch_l2' takes 3 arguments, found 2");
    reject(K("let x = prefetch_l2(a, 0, 4);"), 2, 9, "'prefetch_l2' returns no value: call it as a statement");
}

/* fence(): a statement with no arguments and no value (the kforge
 * extension); a user's fn or let named fence hides the builtin. */
static void fence_builtin(void **state)
{
    prog *p = ok("kernel k(c: &mut [u32], o: &mut [f32]) {\no[0] = 1.0;\nfence();\nlet old = atomic_add(c, 0, 1);\n}\n");
    kf_node *call = find_kind(p->module, KF_N_EXPR)->a;
    assert_int_equal(call->kind, KF_N_CALL);
    assert_int_equal(call->op, KF_BI_FENCE);
    assert_int_equal(call->type.kind, KF_TK_VOID);
    prog_free(p);
    p = ok("fn fence(x: f32) -> f32 { return x * 2.0; }\n"
           "kernel k(o: &mut [f32]) {\nlet y = fence(o[0]);\no[0] = y;\n}\n");
    assert_type(decl_type(p, "y"), "f32");
    assert_int_equal(init_of(p, "y")->op, 0);
    assert_non_null(init_of(p, "y")->sym);
    prog_free(p);
    p = ok("kernel k(o: &mut [f32]) {\nlet fence = o[1];\no[0] = fence * 2.0;\n}\n");
    assert_type(decl_type(p, "fence"), "f32");
    prog_free(p);
    reject(K("fence(n);"), 2, 1, "'fence' takes 0 arguments, found 1");
    reject(K("let x = fence();"), 2, 9, "'fence' returns no value: call it as a statement");
    reject(K("fence;"), 2, 1, "'fence' is a builtin function: call it as fence(...)");
    reject("@schedule(block = 32, grid = fence())\nkernel k(o: &mut [f32]) { o[0] = 1.0; }\n", 1, 30,
           "a grid expression cannot call 'fence'");
}

static void atomic_builtins(void **state)
{
    prog *p = ok("kernel k(c: &mut [u32], d: &mut [f64], e: &mut [f16x2], x: f16x2) {\n"
                 "let o = atomic_add(c, 0, 1);\nlet p = atomic_cas(c, 1, 0, 5);\nlet q = atomic_add(d, 0, 1.5);\n"
                 "let r = atomic_add(e, 0, x);\nlet s = atomic_max(c, 2, 7);\n}\n");
    assert_type(decl_type(p, "o"), "u32");
    assert_type(decl_type(p, "q"), "f64");
    assert_type(decl_type(p, "r"), "f16x2");
    prog_free(p);
    reject(K("let r = atomic_add(a, 0, 1.0);"), 2, 20, "'atomic_add' needs a writable buffer: 'a' is &[f32]; declare it '&mut [f32]'");
    reject("kernel k(c: &mut [i16]) {\nlet r = atomic_add(c, 0, 1);\n}\n", 2, 20, "'atomic_add' works on buffers of i32, u32, u64 or f32");
    reject("kernel k(d: &mut [f64]) {\nlet r = atomic_min(d, 0, 1.0);\n}\n", 2, 20, "'atomic_min' works on buffers of i32, u32, u64 or f32, found &mut [f64]");
    reject(K("let r = atomic_add(o, f, 1.0);"), 2, 23, "an index must be an integer, found f32");
    reject(K("let r = atomic_add(n, 0, 1);"), 2, 20, "the first argument of 'atomic_add' must be a buffer");
    reject(K("let r = atomic_exch(o, 0, n);"), 2, 27, "the value of 'atomic_exch' must be f32, found u32");
}

static void math_builtins(void **state)
{
    prog *p = ok(K("let e = exp(f) + sqrt(2) + rsqrt(f);\nlet g = tanh(v);\nlet m = min(n, 3);\nlet x = max(h, h);\n"
                   "let c = clamp(f, 0.0, 1.0);\nlet z = clz(n) + popc(w);\nlet d = cdiv(n, 256);\nlet k = mul_hi(i, -3);\n"
                   "let s = select(b, v, v);\nlet y = fma(f, f, 1);\nlet ab = abs(i) + abs(-3);\nlet fl = floor(2.5);"));
    assert_type(decl_type(p, "e"), "f32");
    assert_type(decl_type(p, "g"), "f32x4");
    assert_type(decl_type(p, "m"), "u32");
    assert_type(decl_type(p, "x"), "f16");
    assert_type(decl_type(p, "z"), "u32");
    assert_type(decl_type(p, "k"), "i32");
    assert_type(decl_type(p, "s"), "f32x4");
    assert_true(init_of(p, "fl")->is_const);
    assert_true(init_of(p, "fl")->cval.f == 2.0);
    prog_free(p);
    reject(K("let e = exp(h);"), 2, 13, "'exp' accepts f32, f64 or a vector of them, found f16: convert it with 'as f32'");
    reject(K("let e = min(n, i);"), 2, 9, "mismatched types u32 and i32 in 'min'");
    reject(K("let e = clz(h);"), 2, 13, "'clz' accepts a 32- or 64-bit integer, found f16");
    reject(K("let e = cdiv(f, 2.0);"), 2, 14, "'cdiv' accepts an integer, found f32");
    reject(K("let e = select(n, f, f);"), 2, 16, "the condition of 'select' must be bool, found u32");
    reject(K("let e = sqrt(f, f);"), 2, 9, "'sqrt' takes 1 argument, found 2");
    reject(K("let e = abs(v as u32x4);"), 2, 15, "'abs' accepts an integer, f32, f64");
}

/* Section 8: packed half math, dot4, bfe, bfi, prmt, rcp, fast_div. */
static void packed_half_builtins(void **state)
{
    prog *p = ok(K("let x = f16x2(h);\nlet y = bf16x8(1.5);\nlet a = fma(x, x, x) + min(x, x) * max(x, x) - abs(x);\n"
                   "let b = fma(y, y, 2.0);\nlet c = clamp(y, y, y);\nlet d = abs(f16x4(h));"));
    assert_type(decl_type(p, "a"), "f16x2");
    assert_type(decl_type(p, "b"), "bf16x8");
    assert_type(decl_type(p, "c"), "bf16x8");
    assert_type(decl_type(p, "d"), "f16x4");
    prog_free(p);
    reject(K("let e = fma(h, h, h);"), 2, 13, "'fma' accepts f32, f64, a vector of them, or an f16/bf16 vector (f16x2 ... bf16x8), found f16");
    reject(K("let e = abs(h);"), 2, 13, "'abs' accepts an integer, f32, f64, a vector of f32/f64 or an f16/bf16 vector, found f16");
    reject(K("let e = exp(f16x2(h));"), 2, 13, "'exp' accepts f32, f64 or a vector of them, found f16x2");
}

static void integer_and_fast_helpers(void **state)
{
    prog *p = ok(K("let w = n;\nlet d = dot4(bitcast(i8x4, w), bitcast(u8x4, w), 5);\nlet e = bfe(w, 3, 4);\n"
                   "let g = bfe(i, n, n);\nlet j = bfi(w, 7, 8, 24);\nlet pm = prmt(w, 0, 0x3210);\n"
                   "let r = rcp(f) + fast_div(f, 2.0);\nlet r4 = rcp(v);\nlet u: u64 = bfe(0xff00, 8, 4);"));
    assert_type(decl_type(p, "d"), "i32");
    assert_type(decl_type(p, "e"), "u32");
    assert_type(decl_type(p, "g"), "i32");
    assert_type(decl_type(p, "j"), "u32");
    assert_type(decl_type(p, "pm"), "u32");
    assert_type(decl_type(p, "r4"), "f32x4");
    assert_true(init_of(p, "u")->is_const);   /* bfe over constants folds, in the context's u64 */
    assert_int_equal(init_of(p, "u")->cval.u, 0xf);
    prog_free(p);
    reject(K("let e = dot4(n, n, 0);"), 2, 14,
           "'dot4' accepts i8x4 or u8x4 (four bytes), found u32: take its bytes with bitcast(i8x4, w) or bitcast(u8x4, w)");
    reject(K("let e = dot4(bitcast(i8x4, n), bitcast(i8x4, n), f);"), 2, 50, "the accumulator of 'dot4' must be i32, found f32");
    reject(K("let e = bfe(h, 0, 4);"), 2, 13, "'bfe' accepts a 32- or 64-bit integer, found f16");
    reject(K("let e = bfe(n, i, 4);"), 2, 16, "the bit position of 'bfe' must be u32, found i32");
    reject(K("let e = bfi(n, w, 0, 4);"), 2, 9, "mismatched types u32 and u64 in 'bfi'");
    reject(K("let e = prmt(n, n, i);"), 2, 20, "the selector of 'prmt' must be u32, found i32");
    reject(K("let e = rcp(1.0 as f64);"), 2, 17, "'rcp' accepts f32 or an f32 vector, found f64");
    reject(K("let e = fast_div(f, 2.0, f);"), 2, 9, "'fast_div' takes 2 arguments, found 3");
}

/* ---- constant folding ------------------------------------------------------------------------------ */
static int64_t folded(const char *decls, const char *name)
{
    prog *p = ok(decls);
    kf_node *c = find(p->module, KF_N_CONST, name);
    assert_true(c->is_const);
    int64_t v = c->cval.i;
    prog_free(p);
    return v;
}

static double folded_f(const char *decls, const char *name)
{
    prog *p = ok(decls);
    kf_node *c = find(p->module, KF_N_CONST, name);
    assert_true(c->is_const);
    double v = c->cval.f;
    prog_free(p);
    return v;
}

static void folding_uses_runtime_semantics(void **state)
{
    assert_int_equal(folded("const A: u8 = 200;\nconst B: u8 = A + A;\n", "B"), 144);
    assert_int_equal(folded("const A: i32 = -2147483647 - 1;\nconst B: i32 = A / -1;\n", "B"), INT32_MIN);
    assert_int_equal(folded("const A: i32 = -2147483647 - 1;\nconst B: i32 = A % -1;\n", "B"), 0);
    assert_int_equal(folded("const A: u32 = 1;\nconst B: u32 = A << 32;\n", "B"), 0);
    assert_int_equal(folded("const A: i32 = -8;\nconst B: i32 = A >> 40;\n", "B"), -1);
    assert_int_equal(folded("const A: i32 = -8;\nconst B: i32 = A >> 1;\n", "B"), -4);
    assert_int_equal(folded("const A: u32 = 0xFFFFFFFF;\nconst B: u32 = A >> 31;\n", "B"), 1);
    assert_int_equal(folded("const A: i32 = -7;\nconst B: i32 = A % 3;\n", "B"), -1);
    assert_int_equal(folded("const A: i32 = -7;\nconst B: i32 = cdiv(A, 2);\n", "B"), -3);
    assert_int_equal(folded("const A: u32 = 7;\nconst B: u32 = cdiv(A, 2);\n", "B"), 4);
    assert_int_equal(folded("const A: u32 = 0x80000000;\nconst B: u32 = mul_hi(A, 4);\n", "B"), 2);
    assert_int_equal(folded("const A: i32 = -2147483647 - 1;\nconst B: i32 = abs(A);\n", "B"), INT32_MIN);
    assert_int_equal(folded("const B: u32 = clz(1 as u32) + popc(0xFF as u64);\n", "B"), 39);
    assert_int_equal(folded("const B: i32 = (-1.5 as f32) as i32;\n", "B"), -1);
    assert_int_equal(folded("const B: u8 = 300.0 as u8;\n", "B"), 255);
    assert_int_equal(folded("const B: i32 = nan as i32;\n", "B"), 0);
    assert_int_equal(folded("const B: u32 = (1 << 40) >> 38;\n", "B"), 4);
    assert_true(folded_f("const A: f16 = 1.0;\nconst B: f16 = A + 0.0004;\n", "B") == 1.0);
    assert_true(folded_f("const A: f32 = 16777216.0;\nconst B: f32 = A + 1.0;\n", "B") == 16777216.0);
    assert_true(folded_f("const B: f32 = min(nan as f32, 2.0);\n", "B") == 2.0);
    assert_true(folded_f("const B: f64 = round(-2.5 as f64);\n", "B") == -3.0);
    assert_true(folded_f("const B: bf16 = 1.00390625;\n", "B") == 1.0);
    reject("const A: u32 = 0;\nconst B: u32 = 7 / A;\n", 2, 18, "division by zero in a constant expression");
    reject("const B: u32 = 7 % 0;\n", 1, 18, "division by zero in a constant expression");
    reject("const B: u64 = 1 << 70;\n", 1, 18, "constant expression overflows");
}

/* ---- schedule ----------------------------------------------------------------------------------- */
static void schedule_block_is_constant(void **state)
{
    prog *p = ok("const B: u32 = 16;\n@schedule(block = (B, B / 2), grid = (cdiv(n, B), 2))\nkernel k(n: u32) {}\n");
    kf_node *na = find(p->module, KF_N_NAMEDARG, "block");
    kf_node *x = na->a->a, *y = x->next;
    assert_true(x->is_const && y->is_const);
    assert_int_equal(x->cval.u, 16);
    assert_int_equal(y->cval.u, 8);
    assert_type(y->type, "u32");
    prog_free(p);
    reject("@schedule(block = (64, 32))\nkernel k() {}\n", 1, 19, "a block of 2048 threads is over the limit of 1024");
    reject("@schedule(block = (1, 1, 128))\nkernel k() {}\n", 1, 26, "block.z = 128 is out of range: it must be in 1..64");
    reject("@schedule(block = 0)\nkernel k() {}\n", 1, 19, "block.x = 0 is out of range");
    reject("@schedule(block = 256, grd = 4)\nkernel k() {}\n", 1, 24,
           "unknown @schedule argument 'grd': expected 'block', 'grid', 'shared' or 'min_blocks'");
    reject("@schedule(block = n)\nkernel k(n: u32) {}\n", 1, 19, "block.x must be an integer compile-time constant");
    reject("@schedule(grid = 4)\nkernel k() {}\n", 1, 1, "needs a block size");
}

static void schedule_grid_uses_only_scalars(void **state)
{
    accept("const T: u32 = 4;\n@schedule(block = 128, grid = (max(n / T, 1), m as u32))\nkernel k(x: &[f32], n: u32, m: i64) {}\n");
    reject("@schedule(block = 128, grid = x[0])\nkernel k(x: &[u32]) {}\n", 1, 31, "a grid expression cannot use buffer 'x'");
    reject("@schedule(block = 128, grid = thread_id.x)\nkernel k() {}\n", 1, 31, "a grid expression cannot use 'thread_id'");
    reject("@schedule(block = 128, grid = f)\nkernel k(f: f32) {}\n", 1, 31, "grid.x must be an integer expression, found f32");
    reject("@schedule(block = 128, grid = shfl(n, 0))\nkernel k(n: u32) {}\n", 1, 31, "a grid expression cannot call 'shfl'");
    reject("@schedule(block = 128, grid = (1, 70000))\nkernel k() {}\n", 1, 35, "grid.y = 70000 is out of range");
}

/* Builds the kernel reflection the lowering would produce for kernel k. */
static void sched_of(prog *p, kf_ir_kernel *k, kf_ir_param *params, uint32_t maxp)
{
    kf_node *kn = find(p->module, KF_N_KERNEL, "k");
    assert_non_null(kn);
    memset(k, 0, sizeof *k);
    k->name = "k";
    k->params = params;
    for (kf_node *q = kn->a; q && k->nparams < maxp; q = q->next)
        params[k->nparams++] = (kf_ir_param){q->name, q->type, q->loc, 0};
    k->sched.block[0] = k->sched.block[1] = k->sched.block[2] = 1;
    for (kf_node *na = kn->d ? kn->d->a : NULL; na; na = na->next) {
        kf_node *e = na->a;
        kf_node *items = e->kind == KF_N_TUPLE ? e->a : e;
        unsigned i = 0;
        for (kf_node *it = items; it && i < 3; it = e->kind == KF_N_TUPLE ? it->next : NULL, i++) {
            if (strcmp(na->name, "block") == 0) k->sched.block[i] = (uint32_t)it->cval.u;
            else if (strcmp(na->name, "shared") == 0) k->sched.shared = it;
            else k->sched.grid[k->sched.ngrid++] = it;
        }
    }
}

static kf_value u32v(uint32_t x) { return (kf_value){kf_type_scalar(KF_S_U32), {x}}; }

static void grid_evaluates_with_kernel_semantics_but_never_wraps(void **state)
{
    prog *p = ok("const T: u32 = 16;\n@schedule(block = (T, T), grid = (cdiv(n, T), cdiv(m - 1, T) + 1, min(z as u32, 3)))\n"
                 "kernel k(x: &[f32], n: u32, m: u32, z: i8) {}\n");
    kf_ir_kernel k;
    kf_ir_param params[8];
    sched_of(p, &k, params, 8);
    assert_int_equal(k.sched.block[0], 16);
    kf_value args[4] = {u32v(0), u32v(1000), u32v(33), {kf_type_scalar(KF_S_I8), {0xFE}}};
    uint32_t g[3];
    kf_error err = {0};
    args[3].lane[0] = 7;
    assert_int_equal(kf_schedule_grid(&k, args, 0, g, &err), KF_OK);
    assert_int_equal(g[0], 63);
    assert_int_equal(g[1], 3);
    assert_int_equal(g[2], 3);
    /* m = 0: m - 1 would wrap to 0xFFFFFFFF in the kernel: an error, not a huge grid */
    args[2] = u32v(0);
    assert_int_equal(kf_schedule_grid(&k, args, 0, g, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "kernel 'k': grid.y = (cdiv((m - 1), T) + 1) overflows for these arguments: (m - 1) "
                                 "does not fit u32 (a grid expression must not wrap)");
    /* z = -2 as u32 would be 4294967294 */
    args[2] = u32v(33);
    args[3].lane[0] = 0xFE;
    assert_int_equal(kf_schedule_grid(&k, args, 0, g, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "grid.z = min((z as u32), 3) overflows for these arguments: z does not fit u32"));
    args[2] = u32v(2000000);   /* in range, but past the y limit */
    args[3].lane[0] = 5;
    assert_int_equal(kf_schedule_grid(&k, args, 0, g, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "grid.y = (cdiv((m - 1), T) + 1) is 125001 for these arguments; it must be in 1..65535"));
    args[2] = u32v(33);
    args[1] = u32v(0);
    assert_int_equal(kf_schedule_grid(&k, args, 0, g, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "grid.x = cdiv(n, T) is 0"));
    prog_free(p);
}

/* n = 2147483649: n * 2, n + n and n << 1 wrap to 2 in u32; each is an
 * error naming the expression, and so is every other integer operation
 * whose true value leaves its type. */
static void grid_overflow_names_the_expression(void **state)
{
    static const struct { const char *grid, *part, *type; } cases[] = {
        {"cdiv(n * 2, 1)", "(n * 2)", "u32"}, {"n + n", "(n + n)", "u32"}, {"(n << 1) + 0", "(n << 1)", "u32"},
        {"(s - 1) as u32", "(s - 1)", "i32"}, {"(-s) as u32", "-s", "i32"}, {"(w as u32) + 1", "w", "u32"},
        {"abs(s) as u32", "abs(s)", "i32"}, {"(s / (s - s - 1)) as u32", "(s / ((s - s) - 1))", "i32"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char src[300];
        snprintf(src, sizeof src, "@schedule(block = 1, grid = %s)\nkernel k(n: u32, s: i32, w: u64) {}\n", cases[c].grid);
        prog *p = ok(src);
        kf_ir_kernel k;
        kf_ir_param params[4];
        sched_of(p, &k, params, 4);
        kf_value args[3] = {u32v(2147483649u), {kf_type_scalar(KF_S_I32), {0x80000000u}},
                            {kf_type_scalar(KF_S_U64), {UINT64_C(0x100000002)}}};
        uint32_t g[3];
        kf_error err = {0};
        char want[200];
        snprintf(want, sizeof want, " overflows for these arguments: %s does not fit %s (a grid expression must not wrap)",
                 cases[c].part, cases[c].type);
        assert_int_equal(kf_schedule_grid(&k, args, 0, g, &err), KF_ERR_USAGE);
        if (!strstr(err.msg, want) || !strstr(err.msg, "kernel 'k': grid.x = ")) fail_msg("%s: %s", cases[c].grid, err.msg);
        prog_free(p);
    }
}

static void grid_defaults_to_count_over_block(void **state)
{
    prog *p = ok("@schedule(block = 256)\nkernel k(x: &[f32]) {}\n");
    kf_ir_kernel k;
    kf_ir_param params[2];
    sched_of(p, &k, params, 2);
    uint32_t g[3];
    kf_error err = {0};
    assert_int_equal(kf_schedule_grid(&k, NULL, 1000, g, &err), KF_OK);
    assert_int_equal(g[0], 4);
    assert_int_equal(g[1], 1);
    assert_int_equal(kf_schedule_grid(&k, NULL, 1024, g, &err), KF_OK);
    assert_int_equal(g[0], 4);
    assert_int_equal(kf_schedule_grid(&k, NULL, 0, g, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "element count greater than 0"));
    prog_free(p);
}

/* `shared = EXPR`: u32 bytes over scalar parameters and constants. */
/* min_blocks = N: a constant 0..32 (0: no bound) whose N blocks fit an SM's
 * 2048 threads (blocks rounded up to whole warps); lowering keeps it in the
 * schedule. */
static void schedule_min_blocks(void **state)
{
    prog *p = ok("const B: u32 = 96;\n@schedule(block = B, grid = 1, min_blocks = 2048 / 128)\nkernel k(n: u32) {}\n");
    kf_node *na = find(p->module, KF_N_NAMEDARG, "min_blocks");
    assert_true(na->a->is_const);
    assert_int_equal(na->a->cval.u, 16);
    prog_free(p);
    accept("@schedule(block = (16, 16), min_blocks = 8)\nkernel k() {}\n");   /* 8 x 256 = 2048 threads */
    reject("@schedule(block = 64, min_blocks = n)\nkernel k(n: u32) {}\n", 1, 36,
           "min_blocks must be an integer compile-time constant, found u32 that is not a constant");
    accept("@schedule(block = 1024, min_blocks = 0)\nkernel k() {}\n");   /* no bound */
    reject("@schedule(block = 64, min_blocks = -1 as i32)\nkernel k() {}\n", 1, 39,
           "min_blocks = -1 is out of range: it must be in 0..32 (blocks an SM holds at once)");
    reject("@schedule(block = 32, min_blocks = 33)\nkernel k() {}\n", 1, 36, "min_blocks = 33 is out of range");
    reject("@schedule(block = 64, min_blocks = 2.0)\nkernel k() {}\n", 1, 36,
           "float constant 2.0 cannot be used as u32: convert it with 'as u32'");
    reject("@schedule(block = 64, min_blocks = (2, 2))\nkernel k() {}\n", 1, 36, "min_blocks takes one constant");
    reject("@schedule(block = 1000, min_blocks = 3)\nkernel k() {}\n", 1, 38,
           "min_blocks = 3 blocks of 1000 threads make 3072 threads, over the 2048 an SM holds (sm_90): lower "
           "min_blocks or the block size");
    reject("@schedule(block = 65, min_blocks = 24)\nkernel k() {}\n", 1, 36,   /* 65 threads hold 3 warps */
           "min_blocks = 24 blocks of 65 threads make 2304 threads");
    accept("@schedule(block = 33, min_blocks = 32)\nkernel k() {}\n");   /* 2 warps x 32 = 2048 */
    reject("@schedule(block = 64, min_blocks = 2, min_blocks = 2)\nkernel k() {}\n", 1, 39,
           "'min_blocks' is given twice in @schedule");
}

static void schedule_shared_bytes(void **state)
{
    prog *p = ok("const T: u32 = 4;\n@schedule(block = 64, grid = 1, shared = n * T + 16)\nkernel k(x: &[f32], n: u32) {}\n");
    kf_ir_kernel k;
    kf_ir_param params[2];
    sched_of(p, &k, params, 2);
    kf_value args[2] = {{kf_type_scalar(KF_S_U32), {0}}, u32v(1000)};
    uint32_t bytes = 1;
    kf_error err = {0};
    assert_int_equal(kf_schedule_shared(&k, args, &bytes, &err), KF_OK);
    assert_int_equal(bytes, 4016);
    args[1] = u32v(0x40000000);   /* would wrap in u32: an error, as for a grid */
    assert_int_equal(kf_schedule_shared(&k, args, &bytes, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "kernel 'k': shared = ((n * T) + 16) overflows for these arguments: (n * T) does not "
                                 "fit u32 (a shared expression must not wrap)");
    k.sched.shared = NULL;
    assert_int_equal(kf_schedule_shared(&k, args, &bytes, &err), KF_OK);
    assert_int_equal(bytes, 0);
    prog_free(p);
    reject("@schedule(block = 64, shared = i)\nkernel k(i: i32) {}\n", 1, 32,
           "shared = EXPR gives u32 bytes of dynamic shared memory, found i32: convert it with 'as u32'");
    reject("@schedule(block = 64, shared = 300000)\nkernel k() {}\n", 1, 32,
           "shared = 300000 bytes is over the limit of 232448 bytes (227 KiB, sm_90) per block");
    reject("@schedule(block = 64, shared = x[0])\nkernel k(x: &[u32]) {}\n", 1, 32, "a shared expression cannot use buffer 'x'");
    reject("@schedule(block = 64, shared = 4, shared = 8)\nkernel k() {}\n", 1, 35, "'shared' is given twice");
}

static void grid_division_by_zero_is_reported(void **state)
{
    prog *p = ok("@schedule(block = 32, grid = 100 / d)\nkernel k(d: u32) {}\n");
    kf_ir_kernel k;
    kf_ir_param params[2];
    sched_of(p, &k, params, 2);
    kf_value args[1] = {u32v(0)};
    uint32_t g[3];
    kf_error err = {0};
    assert_int_equal(kf_schedule_grid(&k, args, 0, g, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "grid.x = (100 / d) divides by zero"));
    args[0] = u32v(7);
    assert_int_equal(kf_schedule_grid(&k, args, 0, g, &err), KF_OK);
    assert_int_equal(g[0], 14);
    prog_free(p);
}

/* ---- argument values ------------------------------------------------------------------------------ */
static void value_parse_reads_literals(void **state)
{
    kf_value v;
    kf_error err = {0};
    assert_int_equal(kf_value_parse("0x1_0", kf_type_scalar(KF_S_U32), "n", &v, &err), KF_OK);
    assert_int_equal(v.lane[0], 16);
    assert_int_equal(kf_value_parse("-3", kf_type_scalar(KF_S_I8), "n", &v, &err), KF_OK);
    assert_int_equal(v.lane[0], 0xFD);
    assert_int_equal(kf_value_parse("0b101", kf_type_scalar(KF_S_U64), "n", &v, &err), KF_OK);
    assert_int_equal(v.lane[0], 5);
    assert_int_equal(kf_value_parse("1e-6", kf_type_scalar(KF_S_F32), "eps", &v, &err), KF_OK);
    assert_int_equal(v.lane[0], 0x358637bdu);
    assert_int_equal(kf_value_parse("1", kf_type_scalar(KF_S_F16), "x", &v, &err), KF_OK);
    assert_int_equal(v.lane[0], 0x3c00);
    assert_int_equal(kf_value_parse("true", kf_type_scalar(KF_S_BOOL), "b", &v, &err), KF_OK);
    assert_int_equal(v.lane[0], 1);
    assert_int_equal(kf_value_parse("-inf", kf_type_scalar(KF_S_F64), "x", &v, &err), KF_OK);
    double dv;
    memcpy(&dv, &v.lane[0], sizeof dv);
    assert_true(isinf(dv) && dv < 0);
    assert_int_equal(kf_value_parse("1,2", kf_type_vector(KF_S_U32, 2), "p", &v, &err), KF_OK);
    assert_int_equal(v.lane[1], 2);
}

static void value_parse_rejects_bad_text(void **state)
{
    kf_value v;
    kf_error err = {0};
    assert_int_equal(kf_value_parse("256", kf_type_scalar(KF_S_U8), "n", &v, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "parameter 'n': 256 does not fit u8");
    assert_int_equal(kf_value_parse("-1", kf_type_scalar(KF_S_U32), "n", &v, &err), KF_ERR_USAGE);
    assert_int_equal(kf_value_parse("1.5", kf_type_scalar(KF_S_I32), "n", &v, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "parameter 'n': 1.5 is not an integer");
    assert_int_equal(kf_value_parse("abc", kf_type_scalar(KF_S_F32), "eps", &v, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "parameter 'eps': 'abc' is not a number, true or false");
    assert_int_equal(kf_value_parse("1e9", kf_type_scalar(KF_S_F16), "h", &v, &err), KF_ERR_USAGE);
    assert_int_equal(kf_value_parse("", kf_type_scalar(KF_S_I32), "n", &v, &err), KF_ERR_USAGE);
    assert_int_equal(kf_value_parse("1", kf_type_scalar(KF_S_BOOL), "b", &v, &err), KF_ERR_USAGE);
    assert_int_equal(kf_value_parse("99999999999999999999", kf_type_scalar(KF_S_U64), "n", &v, &err), KF_ERR_USAGE);
    assert_int_equal(kf_value_parse("1,2,3", kf_type_vector(KF_S_U32, 2), "p", &v, &err), KF_ERR_USAGE);
}

/* ---- annotations and error recovery ----------------------------------------------------------------- */
static void names_and_calls_are_annotated(void **state)
{
    prog *p = ok("fn g(x: u32) -> u32 { return x; }\n" K("let y = g(n) + min(n, 1);"));
    kf_node *init = init_of(p, "y");
    kf_node *gc = init->a, *mc = init->b;
    assert_int_equal(gc->kind, KF_N_CALL);
    assert_non_null(gc->sym);
    assert_int_equal(gc->sym->kind, KF_N_FN);
    assert_int_equal(mc->op, KF_BI_MIN);
    assert_null(mc->sym);
    assert_int_equal(gc->b->sym->kind, KF_N_PARAM);
    prog_free(p);
}

static void independent_errors_are_all_reported(void **state)
{
    prog *p = run_sema(K("let x = n + i;\nlet y = x * 2;\nlet z: u8 = 300;\nif n { }"), NULL);
    assert_int_equal(p->diags.nerrors, 3);
    assert_int_equal(p->diags.items.data[0].loc.line, 2);
    assert_int_equal(p->diags.items.data[1].loc.line, 4);
    assert_int_equal(p->diags.items.data[2].loc.line, 5);
    prog_free(p);
}

/* Every .kf program of the kernel library passes sema with no diagnostic. */
static unsigned check_dir(const char *dir)
{
    DIR *d = opendir(dir);
    unsigned n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[1024];
        size_t nl = strlen(e->d_name);
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (nl > 3 && strcmp(e->d_name + nl - 3, ".kf") == 0) {
            char *src = NULL;
            size_t len = 0;
            kf_error err = {0};
            assert_int_equal(kf_read_file(path, &src, &len, &err), KF_OK);
            prog *p = run_sema(src, NULL);
            if (p->diags.nerrors)
                fail_msg("%s:%u:%u: %s", path, p->diags.items.data[0].loc.line, p->diags.items.data[0].loc.col,
                         p->diags.items.data[0].msg);
            prog_free(p);
            free(src);
            n++;
        } else if (!strchr(e->d_name, '.')) {
            n += check_dir(path);
        }
    }
    if (d) closedir(d);
    return n;
}

static void library_kernels_pass_sema(void **state)
{
    unsigned n = check_dir(KF_SOURCE_DIR "/kernels");
    assert_true(n >= 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(module_names_are_unique),
        cmocka_unit_test(consts_evaluate_in_dependency_order),
        cmocka_unit_test(const_value_must_be_constant_and_fit),
        cmocka_unit_test(overrides_replace_const_values),
        cmocka_unit_test(overrides_are_checked),
        cmocka_unit_test(inner_blocks_may_shadow),
        cmocka_unit_test(unknown_names_suggest_the_closest),
        cmocka_unit_test(untyped_constants_adapt_to_context),
        cmocka_unit_test(constants_must_fit_their_type),
        cmocka_unit_test(untyped_constants_splat_to_vectors),
        cmocka_unit_test(untyped_builtin_calls_adapt_to_context),
        cmocka_unit_test(binary_operands_must_match),
        cmocka_unit_test(operator_rules),
        cmocka_unit_test(conditions_must_be_bool),
        cmocka_unit_test(vectors_work_componentwise),
        cmocka_unit_test(as_converts_numbers_only),
        cmocka_unit_test(bitcast_needs_equal_sizes),
        cmocka_unit_test(let_is_immutable),
        cmocka_unit_test(local_arrays_need_constant_length),
        cmocka_unit_test(shared_arrays_in_kernels_and_fns),
        cmocka_unit_test(shared_views),
        cmocka_unit_test(shared_array_parameters),
        cmocka_unit_test(assignment_targets),
        cmocka_unit_test(break_only_inside_loops),
        cmocka_unit_test(returns),
        cmocka_unit_test(for_loop_types),
        cmocka_unit_test(unroll_needs_constant_bounds),
        cmocka_unit_test(unroll_checks_only_live_arms),
        cmocka_unit_test(unroll_body_may_break_and_continue),
        cmocka_unit_test(nested_unroll_checks_every_iteration),
        cmocka_unit_test(fns_are_checked_and_inlinable),
        cmocka_unit_test(geometry_builtins),
        cmocka_unit_test(warp_builtins),
        cmocka_unit_test(atomic_builtins),
        cmocka_unit_test(fence_builtin),
        cmocka_unit_test(dep_builtins),
        cmocka_unit_test(prefetch_builtin),
        cmocka_unit_test(math_builtins),
        cmocka_unit_test(packed_half_builtins),
        cmocka_unit_test(integer_and_fast_helpers),
        cmocka_unit_test(folding_uses_runtime_semantics),
        cmocka_unit_test(schedule_block_is_constant),
        cmocka_unit_test(schedule_grid_uses_only_scalars),
        cmocka_unit_test(grid_evaluates_with_kernel_semantics_but_never_wraps),
        cmocka_unit_test(grid_overflow_names_the_expression),
        cmocka_unit_test(grid_defaults_to_count_over_block),
        cmocka_unit_test(grid_division_by_zero_is_reported),
        cmocka_unit_test(schedule_shared_bytes),
        cmocka_unit_test(schedule_min_blocks),
        cmocka_unit_test(value_parse_reads_literals),
        cmocka_unit_test(value_parse_rejects_bad_text),
        cmocka_unit_test(names_and_calls_are_annotated),
        cmocka_unit_test(independent_errors_are_all_reported),
        cmocka_unit_test(library_kernels_pass_sema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
