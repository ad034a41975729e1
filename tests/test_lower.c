/* Unit tests of ir/lower*.c and ir/print.c: typed ASTs (built here exactly
 * as sema leaves them) lowered to core IR, checked instruction by
 * instruction and through the printer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "interp.h"
#include "../ir/passes.h"
#include "lower_ast.h"
#include "numeric.h"

/* ---- harness ------------------------------------------------------------ */

typedef struct {
    kf_arena arena;
    kf_diags diags;
    kf_ir_kernel *ks;
    uint32_t nk;
    kf_status st;
} lowered;

static lowered *L;

static int setup(void **state)
{
    L = calloc(1, sizeof *L);
    kf_arena_init(&L->arena);
    T_arena = &L->arena;
    T_line = 1;
    return 0;
}

static int teardown(void **state)
{
    kf_diags_free(&L->diags);
    kf_arena_free(&L->arena);
    free(L);
    return 0;
}

/* Lowers and links a module; asserts success. */
static kf_ir_kernel *lower_ok(kf_node *module)
{
    kf_pass_ctx cx = {&L->arena, &L->diags, "t.kf", "", 0};
    L->st = kf_lower(&cx, module, &L->ks, &L->nk);
    if (L->diags.items.len) fprintf(stderr, "diag: %s\n", L->diags.items.data[0].msg);
    assert_int_equal(L->st, KF_OK);
    for (uint32_t i = 0; i < L->nk; i++) {
        assert_true(kf_ir_link(&L->ks[i]));
        if (getenv("KF_TEST_DUMP")) {
            kf_buf b = {0};
            kf_ir_print(&b, &L->ks[i]);
            fputs(b.data, stderr);
            kf_buf_free(&b);
        }
    }
    return L->nk ? &L->ks[0] : NULL;
}

static inline uint32_t count_op(const kf_ir_kernel *k, kf_ir_op op)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nins; i++) n += k->ins[i].op == op;
    return n;
}

/* Index of the n-th instruction with op (from 0), or UINT32_MAX. */
static inline uint32_t find_op(const kf_ir_kernel *k, kf_ir_op op, uint32_t nth)
{
    for (uint32_t i = 0; i < k->nins; i++)
        if (k->ins[i].op == op && nth-- == 0) return i;
    return UINT32_MAX;
}

static char *print_kernel(const kf_ir_kernel *k)
{
    kf_buf b = {0};
    kf_ir_print(&b, k);
    return kf_buf_take(&b);
}


/* ---- a tiny single-thread evaluator of integer IR ---------------------------
 * Enough to check that control flow lowers to what the source means: ints
 * wrap to their width (unsigned), buffers are per-parameter arrays with
 * bounds checks, thread geometry reads 0. */

#define EV_MEM 64
typedef struct {
    uint64_t mem[8][EV_MEM];   /* buffer of parameter p */
    uint64_t arr[4][EV_MEM];
    uint64_t args[8];          /* scalar arguments by parameter index */
    uint32_t len[8];           /* buffer lengths */
    bool fault;
    uint32_t steps;
} ev_t;

static uint64_t ev_wrap(kf_type t, uint64_t v)
{
    unsigned w = 8u * kf_scalar_bytes[t.scalar];
    if (t.scalar == KF_S_BOOL) return v & 1;
    return w >= 64 ? v : v & ((UINT64_C(1) << w) - 1);
}

static int64_t ev_signed(kf_type t, uint64_t v)
{
    unsigned w = 8u * kf_scalar_bytes[t.scalar];
    if (kf_scalar_class[t.scalar] == 'i' && w < 64 && ((v >> (w - 1)) & 1)) v |= ~UINT64_C(0) << w;
    return (int64_t)v;
}

static uint64_t ev_binop(kf_op op, kf_type t, uint64_t a, uint64_t b, bool *fault)
{
    bool sg = kf_scalar_class[t.scalar] == 'i';
    int64_t sa = ev_signed(t, a), sb = ev_signed(t, b);
    switch (op) {
    case KF_OP_ADD: return a + b;
    case KF_OP_SUB: return a - b;
    case KF_OP_MUL: return a * b;
    case KF_OP_DIV: if (!b) { *fault = true; return 0; } return sg ? (uint64_t)(sa / sb) : a / b;
    case KF_OP_REM: if (!b) { *fault = true; return 0; } return sg ? (uint64_t)(sa % sb) : a % b;
    case KF_OP_AND: return a & b;
    case KF_OP_OR: return a | b;
    case KF_OP_XOR: return a ^ b;
    case KF_OP_SHL: return b >= 64 ? 0 : a << b;
    case KF_OP_SHR: return sg ? (uint64_t)(sa >> (b > 63 ? 63 : b)) : (b >= 64 ? 0 : a >> b);
    case KF_OP_EQ: return a == b;
    case KF_OP_NE: return a != b;
    case KF_OP_LT: return sg ? sa < sb : a < b;
    case KF_OP_LE: return sg ? sa <= sb : a <= b;
    case KF_OP_GT: return sg ? sa > sb : a > b;
    case KF_OP_GE: return sg ? sa >= sb : a >= b;
    default: *fault = true; return 0;
    }
}


static uint64_t *ev_slot(ev_t *ev, const kf_ir_kernel *k, uint64_t *r, kf_val buf, uint64_t i)
{
    uint64_t p = r[buf];
    if (p >= 8 || i >= ev->len[p]) {
        ev->fault = true;
        return NULL;
    }
    (void)k;
    return &ev->mem[p][i];
}

/* Runs kernel k; false on a fault (bad op, out-of-bounds, runaway). */
static bool ev_run(ev_t *ev, const kf_ir_kernel *k)
{
    uint64_t *r = calloc(k->nvals + 1, sizeof *r);
    uint32_t pc = 0;
    while (pc < k->nins && !ev->fault && ev->steps++ < 1000000) {
        kf_ir_flow fl = kf_ir_flow_of(k, pc);   /* markers: where kf_ir_link says they jump */
        const kf_ir_ins *in = &k->ins[pc++];
        const uint64_t *a0 = &r[in->a[0]], *a1 = &r[in->a[1]], *a2 = &r[in->a[2]];
        kf_type dt = in->dst ? k->vals[in->dst].type : in->type;
        uint64_t v = 0, *slot;
        switch (in->op) {
        case KF_IR_CONST: v = in->imm; break;
        case KF_IR_PARAM: v = in->type.kind == KF_TK_BUFFER ? in->imm : ev->args[in->imm]; break;
        case KF_IR_MOV: case KF_IR_CVT: case KF_IR_VIEW: v = *a0; break;
        case KF_IR_BINOP: case KF_IR_CMP: v = ev_binop((kf_op)in->sub, in->type, *a0, *a1, &ev->fault); break;
        case KF_IR_UNOP: v = in->sub == KF_OP_NOT ? !*a0 : in->sub == KF_OP_NEG ? 0 - *a0 : ~*a0; break;
        case KF_IR_SELECT: v = *a0 ? *a1 : *a2; break;
        case KF_IR_MATH:
            if (in->sub == KF_BI_MIN) v = ev_binop(KF_OP_LT, in->type, *a0, *a1, &ev->fault) ? *a0 : *a1;
            else if (in->sub == KF_BI_MAX) v = ev_binop(KF_OP_GT, in->type, *a0, *a1, &ev->fault) ? *a0 : *a1;
            else ev->fault = true;
            break;
        case KF_IR_SREG: v = 0; break;
        case KF_IR_LOAD: if ((slot = ev_slot(ev, k, r, in->a[0], *a1))) v = *slot; break;
        case KF_IR_STORE: if ((slot = ev_slot(ev, k, r, in->a[0], *a1))) *slot = ev_wrap(in->type, *a2); continue;
        case KF_IR_ALOAD: if (*a0 < EV_MEM && in->imm < 4) v = ev->arr[in->imm][*a0]; else ev->fault = true; break;
        case KF_IR_ASTORE: if (*a0 < EV_MEM && in->imm < 4) ev->arr[in->imm][*a0] = *a1; else ev->fault = true; continue;
        case KF_IR_IF: if (!*a0) pc = (fl.mid ? fl.mid : fl.end) + 1; continue;
        case KF_IR_ELSE: pc = fl.end + 1; continue;
        case KF_IR_ENDLOOP: pc = fl.head + 1; continue;
        case KF_IR_BREAK: pc = fl.end + 1; continue;
        case KF_IR_CONTINUE: pc = fl.mid ? fl.mid : fl.end; continue;
        case KF_IR_RET: pc = k->nins; continue;
        case KF_IR_ENDIF: case KF_IR_LOOP: case KF_IR_LATCH: case KF_IR_NOP: case KF_IR_BARRIER: continue;
        default: ev->fault = true; continue;
        }
        (void)a2;
        if (in->dst) r[in->dst] = ev_wrap(dt, v);
    }
    free(r);
    return !ev->fault && pc >= k->nins;
}

/* ---- saxpy --------------------------------------------------------------- */

/* @schedule(block = 256, grid = cdiv(n, 256))
 * kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {
 *     let i = global_id.x;
 *     if i < n { y[i] = a * x[i] + y[i]; } } */
static kf_node *saxpy(void)
{
    kf_type f32 = T_(KF_S_F32), u32 = T_(KF_S_U32);
    kf_node *a = t_param("a", f32), *x = t_param("x", TB(KF_S_F32, 1, false));
    kf_node *y = t_param("y", TB(KF_S_F32, 1, true)), *n = t_param("n", u32);
    T_line = 4;
    kf_node *i = t_decl(KF_N_LET, "i", u32, t_geo(KF_BI_GLOBAL_ID, "x"));
    T_line = 5;
    kf_node *cond = t_bin(KF_OP_LT, T_(KF_S_BOOL), t_ref(i), t_ref(n));
    T_line = 6;
    kf_node *rhs = t_bin(KF_OP_ADD, f32, t_bin(KF_OP_MUL, f32, t_ref(a), t_index(t_ref(x), t_ref(i))),
                         t_index(t_ref(y), t_ref(i)));
    kf_node *st = t_assign(KF_OP_ASSIGN, t_index(t_ref(y), t_ref(i)), rhs);
    kf_node *body = t_block(LIST(i, t_if(cond, t_block(st), NULL)));
    T_line = 2;
    kf_node *grid = t_call(KF_BI_CDIV, u32, LIST(t_ref(n), t_const(u32, 256)));
    grid->is_const = false;
    return t_module(t_kernel(t_const(T_(KF_S_UINT), 256), grid, "saxpy", LIST(a, x, y, n), body));
}

static void saxpy_prints_expected_ir(void **state)
{
    kf_ir_kernel *k = lower_ok(saxpy());
    char *text = print_kernel(k);
    const char *want =
        "kernel saxpy(a: f32, x: &[f32] align 4, y: &mut [f32] align 4, n: u32) block(256, 1, 1) grid(cdiv(n, 256)) ; t.kf:2:5\n"
        "  %1:f32 a = param 0                        ; t.kf:1:5\n"
        "  %2:&[f32] x = param 1                     ; t.kf:1:5\n"
        "  %3:&mut [f32] y = param 2                 ; t.kf:1:5\n"
        "  %4:u32 n = param 3                        ; t.kf:1:5\n"
        "  %5:u32 = sreg block_id.x                  ; t.kf:4:5\n"
        "  %6:u32 = sreg block_dim.x                 ; t.kf:4:5\n"
        "  %7:u32 = sreg thread_id.x                 ; t.kf:4:5\n"
        "  %8:u32 = mul %5, %6                       ; t.kf:4:5\n"
        "  %9:u32 i = add %8, %7                     ; t.kf:4:5\n"
        "  %10:bool = cmp.lt.u32 %9, %4              ; t.kf:5:5\n"
        "  if %10                                    ; t.kf:6:5\n"
        "    %11:f32 = load %2[%9]                   ; t.kf:6:5\n"
        "    %12:f32 = mul %1, %11                   ; t.kf:6:5\n"
        "    %13:f32 = load %3[%9]                   ; t.kf:6:5\n"
        "    %14:f32 = add %12, %13                  ; t.kf:6:5\n"
        "    store %3[%9], %14                       ; t.kf:6:5\n"
        "  endif                                     ; t.kf:6:5\n";
    if (strcmp(text, want)) fprintf(stderr, "%s", text);
    assert_string_equal(text, want);
    free(text);
}


/* ---- helpers for the programs below --------------------------------------- */

#define U32 T_(KF_S_U32)
#define I32 T_(KF_S_I32)
#define BOOL T_(KF_S_BOOL)
#define UINT T_(KF_S_UINT)
static kf_node *u(uint64_t v) { return t_const(U32, v); }
static kf_node *store(kf_node *buf, kf_node *i, kf_node *v) { return t_assign(KF_OP_ASSIGN, t_index(t_ref(buf), i), v); }

/* A use of an unrolled variable as sema leaves it: typed by its use, and
 * marked constant with a value that is only right for one iteration. */
static kf_node *uvar(kf_node *f, kf_type t)
{
    kf_node *n = t_ref(f);
    n->type = t;
    n->is_const = true;
    n->cval.u = 99;
    return n;
}
static kf_node *unroll(const char *v, uint64_t a, uint64_t b)
{
    kf_node *f = t_for(v, UINT, true, t_const(UINT, a), t_const(UINT, b), NULL);
    f->is_const = true;
    return f;
}
static kf_node *kernel1(const char *name, kf_node *params, kf_node *body)
{
    return t_module(t_kernel(NULL, NULL, name, params, t_block(body)));
}

/* ---- @unroll ----------------------------------------------------------------- */

/* var a: u32[4];
 * @unroll for t in 0 .. 4 { a[t] = t * 3; }
 * @unroll for t in 0 .. 4 { out[t] = a[t]; } */
static void unroll_expands_with_constant_indices(void **state)
{
    kf_node *out = t_param("out", TB(KF_S_U32, 1, true));
    kf_node *a = t_decl(KF_N_VAR, "a", TA(KF_S_U32, 4, false), NULL);
    kf_node *f1 = unroll("t", 0, 4), *f2 = unroll("t", 0, 4);
    kf_node *prod = t_bin(KF_OP_MUL, U32, uvar(f1, U32), t_const(U32, 3));
    prod->is_const = true;   /* sema: constant, value per iteration */
    f1->d = t_block(t_assign(KF_OP_ASSIGN, t_index(t_ref(a), uvar(f1, U32)), prod));
    f2->d = t_block(store(out, uvar(f2, U32), t_index(t_ref(a), uvar(f2, U32))));
    kf_ir_kernel *k = lower_ok(kernel1("k", out, LIST(a, f1, f2)));
    assert_int_equal(count_op(k, KF_IR_LOOP), 0);
    assert_int_equal(count_op(k, KF_IR_ASTORE), 4);
    assert_int_equal(count_op(k, KF_IR_STORE), 4);
    assert_int_equal(count_op(k, KF_IR_BINOP), 0);   /* t * 3 folded per iteration */
    for (uint32_t i = 0; i < 4; i++) {
        const kf_ir_ins *st = &k->ins[find_op(k, KF_IR_ASTORE, i)];
        const kf_ir_ins *idx = NULL, *val = NULL;
        for (uint32_t j = 0; j < k->nins; j++) {
            if (k->ins[j].dst == st->a[0]) idx = &k->ins[j];
            if (k->ins[j].dst == st->a[1]) val = &k->ins[j];
        }
        assert_non_null(idx);
        assert_non_null(val);
        assert_int_equal(idx->op, KF_IR_CONST);
        assert_int_equal(idx->imm, i);
        assert_int_equal(val->op, KF_IR_CONST);
        assert_int_equal(val->imm, 3 * i);
    }
    ev_t ev = {.len = {4}};
    assert_true(ev_run(&ev, k));
    for (int i = 0; i < 4; i++) assert_int_equal(ev.mem[0][i], 3 * i);
}

/* var s: u32 = 0;
 * @unroll for t in 0 .. 8 { let v = x[t]; if v == 0 { continue; } if v == 7 { break; } s += v; }
 * out[0] = s; */
static void unroll_break_and_continue_follow_the_source(void **state)
{
    kf_node *x = t_param("x", TB(KF_S_U32, 1, false)), *out = t_param("out", TB(KF_S_U32, 1, true));
    kf_node *s = t_decl(KF_N_VAR, "s", U32, u(0));
    kf_node *f = unroll("t", 0, 8);
    kf_node *v = t_decl(KF_N_LET, "v", U32, t_index(t_ref(x), uvar(f, U32)));
    kf_node *c1 = t_if(t_bin(KF_OP_EQ, BOOL, t_ref(v), u(0)), t_block(t_node(KF_N_CONTINUE, kf_type_void())), NULL);
    kf_node *c2 = t_if(t_bin(KF_OP_EQ, BOOL, t_ref(v), u(7)), t_block(t_node(KF_N_BREAK, kf_type_void())), NULL);
    f->d = t_block(LIST(v, c1, c2, t_assign(KF_OP_ADD, t_ref(s), t_ref(v))));
    kf_ir_kernel *k = lower_ok(kernel1("k", LIST(x, out), LIST(s, f, store(out, u(0), t_ref(s)))));
    assert_int_equal(count_op(k, KF_IR_LOOP), 9);      /* whole expansion + one per iteration */
    assert_int_equal(count_op(k, KF_IR_LATCH), 0);
    assert_int_equal(count_op(k, KF_IR_CONTINUE), 0);
    uint64_t xs[8] = {1, 0, 2, 0, 3, 7, 5, 5};
    ev_t ev = {.len = {8, 1}};
    memcpy(ev.mem[0], xs, sizeof xs);
    assert_true(ev_run(&ev, k));
    assert_int_equal(ev.mem[1][0], 1 + 2 + 3);
    uint64_t ys[8] = {1, 0, 2, 0, 3, 4, 5, 6};   /* no break: every non-zero */
    ev_t ev2 = {.len = {8, 1}};
    memcpy(ev2.mem[0], ys, sizeof ys);
    assert_true(ev_run(&ev2, k));
    assert_int_equal(ev2.mem[1][0], 21);
}

/* ---- fn inlining ------------------------------------------------------------- */

/* fn find(x: &[u32], n: u32, key: u32) -> u32 {
 *     for i in 0 .. n { for j in 0 .. 2 { if x[i] + j == key { return i * 10 + j; } } }
 *     return 999; }
 * fn sq(a: u32) -> u32 { return a * a; }
 * fn f(a: u32) -> u32 { return sq(a) + sq(a + 1); }
 * kernel k(x: &[u32], out: &mut [u32], n: u32) {
 *     out[0] = find(x, n, 5); out[1] = find(x, n, 100); out[2] = f(3); } */
static void fn_calls_inline_with_early_returns(void **state)
{
    kf_node *fx = t_param("x", TB(KF_S_U32, 1, false)), *fn_ = t_param("n", U32), *fk = t_param("key", U32);
    kf_node *fi = t_for("i", U32, false, u(0), t_ref(fn_), NULL);
    kf_node *fj = t_for("j", U32, false, u(0), u(2), NULL);
    kf_node *hit = t_bin(KF_OP_EQ, BOOL, t_bin(KF_OP_ADD, U32, t_index(t_ref(fx), t_ref(fi)), t_ref(fj)), t_ref(fk));
    kf_node *ret = t_stmt(KF_N_RETURN, t_bin(KF_OP_ADD, U32, t_bin(KF_OP_MUL, U32, t_ref(fi), u(10)), t_ref(fj)));
    fj->d = t_block(t_if(hit, t_block(ret), NULL));
    fi->d = t_block(fj);
    kf_node *find = t_fn("find", U32, LIST(fx, fn_, fk), t_block(LIST(fi, t_stmt(KF_N_RETURN, u(999)))));
    kf_node *sa = t_param("a", U32);
    kf_node *sq = t_fn("sq", U32, sa, t_block(t_stmt(KF_N_RETURN, t_bin(KF_OP_MUL, U32, t_ref(sa), t_ref(sa)))));
    kf_node *pa = t_param("a", U32);
    kf_node *f = t_fn("f", U32, pa, t_block(t_stmt(KF_N_RETURN, t_bin(KF_OP_ADD, U32, t_fcall(sq, t_ref(pa)),
                                                                     t_fcall(sq, t_bin(KF_OP_ADD, U32, t_ref(pa), u(1)))))));
    kf_node *x = t_param("x", TB(KF_S_U32, 1, false)), *out = t_param("out", TB(KF_S_U32, 1, true)), *n = t_param("n", U32);
    kf_node *body = LIST(store(out, u(0), t_fcall(find, LIST(t_ref(x), t_ref(n), u(5)))),
                         store(out, u(1), t_fcall(find, LIST(t_ref(x), t_ref(n), u(100)))),
                         store(out, u(2), t_fcall(f, u(3))));
    kf_node *kern = t_kernel(NULL, NULL, "k", LIST(x, out, n), t_block(body));
    kf_ir_kernel *k = lower_ok(t_module(LIST(find, sq, f, kern)));
    /* two calls of find: each a one-trip wrapper around its two loops */
    assert_int_equal(count_op(k, KF_IR_LOOP), 2 * 3);
    assert_int_equal(count_op(k, KF_IR_LATCH), 2 * 2);
    assert_int_equal(count_op(k, KF_IR_PARAM), 3);
    ev_t ev = {.len = {4, 3}, .args = {0, 0, 4}};
    uint64_t xs[4] = {1, 2, 4, 9};
    memcpy(ev.mem[0], xs, sizeof xs);
    assert_true(ev_run(&ev, k));
    assert_int_equal(ev.mem[1][0], 21);
    assert_int_equal(ev.mem[1][1], 999);
    assert_int_equal(ev.mem[1][2], 25);
}

/* ---- short-circuit -------------------------------------------------------------- */

/* if i < n && x[i] > 2 { out[0] = 1; } else { out[0] = 2; }
 * if i >= n || x[i] == 0 { out[1] = 1; } */
static void short_circuit_evaluates_right_only_when_needed(void **state)
{
    kf_node *x = t_param("x", TB(KF_S_U32, 1, false)), *out = t_param("out", TB(KF_S_U32, 1, true));
    kf_node *n = t_param("n", U32), *i = t_param("i", U32);
    kf_node *c1 = t_bin(KF_OP_LAND, BOOL, t_bin(KF_OP_LT, BOOL, t_ref(i), t_ref(n)),
                        t_bin(KF_OP_GT, BOOL, t_index(t_ref(x), t_ref(i)), u(2)));
    kf_node *c2 = t_bin(KF_OP_LOR, BOOL, t_bin(KF_OP_GE, BOOL, t_ref(i), t_ref(n)),
                        t_bin(KF_OP_EQ, BOOL, t_index(t_ref(x), t_ref(i)), u(0)));
    kf_node *body = LIST(t_if(c1, t_block(store(out, u(0), u(1))), t_block(store(out, u(0), u(2)))),
                         t_if(c2, t_block(store(out, u(1), u(1))), NULL));
    kf_ir_kernel *k = lower_ok(kernel1("k", LIST(x, out, n, i), body));
    /* each load sits inside the IF that tests the left operand */
    for (uint32_t j = 0; j < 2; j++) {
        uint32_t ld = find_op(k, KF_IR_LOAD, j);
        assert_true(ld != UINT32_MAX);
        uint32_t open = UINT32_MAX;
        for (uint32_t q = 0; q < ld; q++)
            if (k->ins[q].op == KF_IR_IF && kf_ir_flow_of(k, q).end > ld) open = q;
        assert_true(open != UINT32_MAX);
    }
    ev_t ev = {.len = {4, 2}, .args = {0, 0, 4, 5}};   /* i = 5 is out of bounds */
    assert_true(ev_run(&ev, k));
    assert_int_equal(ev.mem[1][0], 2);
    assert_int_equal(ev.mem[1][1], 1);
    ev_t ev2 = {.len = {4, 2}, .args = {0, 0, 4, 1}, .mem = {{0, 3}}};
    assert_true(ev_run(&ev2, k));
    assert_int_equal(ev2.mem[1][0], 1);
    assert_int_equal(ev2.mem[1][1], 0);
}

/* ---- nested loops --------------------------------------------------------------- */

/* var s: u32 = 0;
 * for i in 0 .. 4 { for j in 0 .. 4 { if j == i { continue; } if j > 2 { break; } s += 1; } }
 * var w: u32 = 0; while w < 10 { w += 3; if w == 6 { continue; } s += 100; } */
static void break_and_continue_bind_to_the_innermost_loop(void **state)
{
    kf_node *out = t_param("out", TB(KF_S_U32, 1, true));
    kf_node *s = t_decl(KF_N_VAR, "s", U32, u(0));
    kf_node *fi = t_for("i", U32, false, u(0), u(4), NULL);
    kf_node *fj = t_for("j", U32, false, u(0), u(4), NULL);
    fj->d = t_block(LIST(t_if(t_bin(KF_OP_EQ, BOOL, t_ref(fj), t_ref(fi)), t_block(t_node(KF_N_CONTINUE, kf_type_void())), NULL),
                         t_if(t_bin(KF_OP_GT, BOOL, t_ref(fj), u(2)), t_block(t_node(KF_N_BREAK, kf_type_void())), NULL),
                         t_assign(KF_OP_ADD, t_ref(s), u(1))));
    fi->d = t_block(fj);
    kf_node *w = t_decl(KF_N_VAR, "w", U32, u(0));
    kf_node *wl = t_while(t_bin(KF_OP_LT, BOOL, t_ref(w), u(10)),
                          t_block(LIST(t_assign(KF_OP_ADD, t_ref(w), u(3)),
                                       t_if(t_bin(KF_OP_EQ, BOOL, t_ref(w), u(6)), t_block(t_node(KF_N_CONTINUE, kf_type_void())), NULL),
                                       t_assign(KF_OP_ADD, t_ref(s), u(100)))));
    kf_ir_kernel *k = lower_ok(kernel1("k", out, LIST(s, fi, w, wl, store(out, u(0), t_ref(s)))));
    uint32_t inner = find_op(k, KF_IR_LOOP, 1), c0 = find_op(k, KF_IR_CONTINUE, 0), b1 = find_op(k, KF_IR_BREAK, 1);
    assert_int_equal(kf_ir_flow_of(k, c0).head, inner);
    assert_int_equal(kf_ir_flow_of(k, b1).head, inner);
    assert_int_equal(kf_ir_flow_of(k, find_op(k, KF_IR_CONTINUE, 1)).head, find_op(k, KF_IR_LOOP, 2));
    ev_t ev = {.len = {1}};
    assert_true(ev_run(&ev, k));
    assert_int_equal(ev.mem[0][0], 9 + 3 * 100);
}

/* ---- params, views, conversions, schedule ------------------------------------------- */

/* kernel k(n: u32, x: &[f32], y: &mut [f32], b: &[u8]) {
 *     let x4 = x as &[f32x4]; let v = x4[n]; y[n] = v.x + (n as f32); } */
static void params_in_order_and_align_follows_views(void **state)
{
    kf_type f32 = T_(KF_S_F32), f32x4 = TV(KF_S_F32, 4);
    kf_node *n = t_param("n", U32), *x = t_param("x", TB(KF_S_F32, 1, false));
    kf_node *y = t_param("y", TB(KF_S_F32, 1, true)), *b = t_param("b", TB(KF_S_U8, 1, false));
    kf_node *x4 = t_decl(KF_N_LET, "x4", TB(KF_S_F32, 4, false), t_cast(t_ref(x), TB(KF_S_F32, 4, false)));
    kf_node *v = t_decl(KF_N_LET, "v", f32x4, t_index(t_ref(x4), t_ref(n)));
    kf_node *sum = t_bin(KF_OP_ADD, f32, t_member(t_ref(v), "x", f32), t_cast(t_ref(n), f32));
    kf_ir_kernel *k = lower_ok(kernel1("k", LIST(n, x, y, b), LIST(x4, v, store(y, t_ref(n), sum))));
    assert_int_equal(k->nparams, 4);
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(k->ins[i].op, KF_IR_PARAM);
        assert_int_equal(k->ins[i].imm, i);
        assert_true(kf_type_eq(k->vals[k->ins[i].dst].type, k->params[i].type));
    }
    assert_string_equal(k->params[1].name, "x");
    assert_int_equal(k->params[0].align, 4);   /* scalar: its size */
    assert_int_equal(k->params[1].align, 16);  /* read as f32x4 through the view */
    assert_int_equal(k->params[2].align, 4);
    assert_int_equal(k->params[3].align, 1);   /* never accessed: its element size */
    assert_int_equal(count_op(k, KF_IR_VIEW), 1);
    assert_int_equal(count_op(k, KF_IR_CVT), 1);
    const kf_ir_ins *cvt = &k->ins[find_op(k, KF_IR_CVT, 0)];
    assert_int_equal(cvt->type.scalar, KF_S_F32);
    assert_int_equal(k->vals[cvt->a[0]].type.scalar, KF_S_U32);
    const kf_ir_ins *ld = &k->ins[find_op(k, KF_IR_LOAD, 0)];
    assert_true(kf_type_eq(ld->type, f32x4));
    assert_int_equal(k->vals[ld->a[0]].type.lanes, 4);
    assert_string_equal(k->vals[ld->dst].name, "v");
}

/* `e as T` with e already T is no instruction; every other `as` is one CVT. */
static void casts_are_explicit_cvts(void **state)
{
    kf_node *out = t_param("out", TB(KF_S_F32, 1, true)), *n = t_param("n", U32), *h = t_param("h", T_(KF_S_F16));
    kf_node *e = t_bin(KF_OP_ADD, T_(KF_S_F32), t_cast(t_cast(t_ref(n), U32), T_(KF_S_F32)), t_cast(t_ref(h), T_(KF_S_F32)));
    kf_node *i = t_cast(t_cast(t_ref(n), I32), U32);
    kf_ir_kernel *k = lower_ok(kernel1("k", LIST(out, n, h), store(out, i, e)));
    assert_int_equal(count_op(k, KF_IR_CVT), 4);
    for (uint32_t j = 0; j < 4; j++) {
        const kf_ir_ins *c = &k->ins[find_op(k, KF_IR_CVT, j)];
        assert_false(kf_type_eq(c->type, k->vals[c->a[0]].type));
    }
}

static void schedule_is_copied(void **state)
{
    kf_node *n = t_param("n", U32), *m = t_param("m", U32);
    kf_node *blk = t_node(KF_N_TUPLE, kf_type_void());
    blk->a = LIST(t_const(UINT, 16), t_const(UINT, 8));
    kf_node *grid = t_node(KF_N_TUPLE, kf_type_void());
    kf_node *g0 = t_call(KF_BI_CDIV, U32, LIST(t_ref(n), u(16))), *g1 = t_ref(m);
    grid->a = LIST(g0, g1);
    kf_node *k1 = t_kernel(blk, grid, "tiled", LIST(n, m), t_block(NULL));
    kf_node *k2 = t_kernel(NULL, NULL, "plain", NULL, t_block(NULL));
    k1->next = k2;
    lower_ok(t_module(k1));
    assert_int_equal(L->nk, 2);
    const kf_schedule *s = &L->ks[0].sched;
    assert_int_equal(s->block[0], 16);
    assert_int_equal(s->block[1], 8);
    assert_int_equal(s->block[2], 1);
    assert_int_equal(s->ngrid, 2);
    assert_ptr_equal(s->grid[0], g0);
    assert_ptr_equal(s->grid[1], g1);
    assert_string_equal(L->ks[1].name, "plain");
    assert_int_equal(L->ks[1].sched.ngrid, 0);
    assert_int_equal(L->ks[1].nparams, 0);
    char *text = print_kernel(&L->ks[0]);
    assert_non_null(strstr(text, "kernel tiled(n: u32, m: u32) block(16, 8, 1) grid(cdiv(n, 16), m)"));
    free(text);
}

/* grid = (n + 15) / 16 - (m - 1) prints with only the parentheses it needs. */
static void grid_prints_with_needed_parentheses(void **state)
{
    kf_node *n = t_param("n", U32), *m = t_param("m", U32);
    kf_node *g = t_bin(KF_OP_SUB, U32, t_bin(KF_OP_DIV, U32, t_bin(KF_OP_ADD, U32, t_ref(n), u(15)), u(16)),
                       t_bin(KF_OP_SUB, U32, t_ref(m), u(1)));
    kf_ir_kernel *k = lower_ok(t_module(t_kernel(t_const(UINT, 64), g, "g", LIST(n, m), t_block(NULL))));
    char *text = print_kernel(k);
    assert_non_null(strstr(text, "block(64, 1, 1) grid((n + 15) / 16 - (m - 1))"));
    free(text);
}

/* ---- builtins -------------------------------------------------------------------- */

/* A full warp reduces with the shfl_xor butterfly (16, 8, 4, 2, 1); a partial
 * warp (IF n == 32 ... ELSE) with a shfl_down tree (16 .. 1) and a broadcast
 * from lane 0, so lanes that do not exist are never counted. */
static uint32_t count_shfl(const kf_ir_kernel *k, kf_builtin sub)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nins; i++) n += k->ins[i].op == KF_IR_SHFL && k->ins[i].sub == sub;
    return n;
}

static void warp_reductions_are_butterflies_in_full_warps_trees_in_partial_ones(void **state)
{
    kf_type f32 = T_(KF_S_F32), f32x2 = TV(KF_S_F32, 2);
    kf_node *v = t_param("v", f32), *w = t_param("w", f32x2);
    kf_node *out = t_param("out", TB(KF_S_F32, 1, true)), *out2 = t_param("out2", TB(KF_S_F32, 2, true));
    kf_node *body = LIST(store(out, u(0), t_call(KF_BI_WARP_SUM, f32, t_ref(v))),
                         store(out2, u(0), t_call(KF_BI_WARP_MAX, f32x2, t_ref(w))));
    kf_ir_kernel *k = lower_ok(kernel1("k", LIST(v, w, out, out2), body));
    /* warp_sum on f32: 5 + 5 + 1; warp_max on f32x2: twice that, per lane */
    assert_int_equal(count_op(k, KF_IR_SHFL), 3 * 11);
    assert_int_equal(count_shfl(k, KF_BI_SHFL_XOR), 15);
    assert_int_equal(count_shfl(k, KF_BI_SHFL_DOWN), 15);
    assert_int_equal(count_shfl(k, KF_BI_SHFL), 3);
    assert_int_equal(count_op(k, KF_IR_IF), 2);
    assert_int_equal(count_op(k, KF_IR_ELSE), 2);
    /* every step 16, 8, 4, 2, 1 once per lane reduced, in each shape */
    uint32_t xor_by[33] = {0}, down_by[33] = {0}, idx0 = 0;
    for (uint32_t j = 0; j < count_op(k, KF_IR_SHFL); j++) {
        const kf_ir_ins *s = &k->ins[find_op(k, KF_IR_SHFL, j)];
        assert_int_equal(k->vals[s->a[0]].type.kind, KF_TK_SCALAR);
        uint64_t amount = UINT64_MAX;
        for (uint32_t q = 0; q < k->nins; q++)
            if (k->ins[q].dst == s->a[1] && k->ins[q].op == KF_IR_CONST) amount = k->ins[q].imm;
        assert_true(amount <= 32);
        if (s->sub == KF_BI_SHFL_XOR) xor_by[amount]++;
        else if (s->sub == KF_BI_SHFL_DOWN) down_by[amount]++;
        else idx0 += amount == 0;
    }
    for (uint32_t m = 1; m <= 16; m *= 2) {
        assert_int_equal(xor_by[m], 3);
        assert_int_equal(down_by[m], 3);
    }
    assert_int_equal(idx0, 3);
    /* sum: 5 adds per branch; max: 5 vector MATHs per branch; min: the lane counts */
    uint32_t max = 0, min = 0;
    for (uint32_t i = 0; i < k->nins; i++)
        if (k->ins[i].op == KF_IR_MATH) max += k->ins[i].sub == KF_BI_MAX, min += k->ins[i].sub == KF_BI_MIN;
    assert_int_equal(max, 2 * 5);
    assert_int_equal(min, 2);
}

/* cdiv(a, b) for signed and unsigned operands, against exact ceilings. */
static void cdiv_rounds_toward_positive_infinity(void **state)
{
    kf_node *a = t_param("a", I32), *b = t_param("b", I32), *c = t_param("c", U32), *d = t_param("d", U32);
    kf_node *out = t_param("out", TB(KF_S_I32, 1, true)), *outu = t_param("outu", TB(KF_S_U32, 1, true));
    kf_node *body = LIST(store(out, u(0), t_call(KF_BI_CDIV, I32, LIST(t_ref(a), t_ref(b)))),
                         store(outu, u(0), t_call(KF_BI_CDIV, U32, LIST(t_ref(c), t_ref(d)))));
    kf_ir_kernel *k = lower_ok(kernel1("k", LIST(a, b, c, d, out, outu), body));
    static const int64_t cases[][3] = {{7, 2, 4}, {-7, 2, -3}, {7, -2, -3}, {-7, -2, 4}, {6, 3, 2},
                                       {-6, 3, -2}, {0, 5, 0}, {INT32_MIN, -1, INT32_MIN}, {INT32_MAX, 2, 0x40000000}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ev_t ev = {.len = {0, 0, 0, 0, 1, 1}};
        ev.args[0] = (uint32_t)cases[i][0];
        ev.args[1] = (uint32_t)cases[i][1];
        ev.args[2] = 0xffffffffu;
        ev.args[3] = 2;
        ev.mem[0][0] = 0;
        /* buffers are params 4 and 5 */
        ev.len[4] = ev.len[5] = 1;
        assert_true(ev_run(&ev, k));
        assert_int_equal((int32_t)ev.mem[4][0], (int32_t)cases[i][2]);
        assert_int_equal(ev.mem[5][0], 0x80000000u);
    }
}

/* var v: f32x4 = f32x4(a, a, b, b); v.y = b; out[0] = v; */
static void vectors_build_with_splat_and_insert(void **state)
{
    kf_type f32 = T_(KF_S_F32), f32x4 = TV(KF_S_F32, 4);
    kf_node *a = t_param("a", f32), *b = t_param("b", f32), *out = t_param("out", TB(KF_S_F32, 4, true));
    kf_node *ctor = t_node(KF_N_CALL, f32x4);
    ctor->a = t_node(KF_N_TYPE, f32x4);
    ctor->b = LIST(t_ref(a), t_ref(a), t_ref(b), t_ref(b));
    kf_node *v = t_decl(KF_N_VAR, "v", f32x4, ctor);
    kf_node *body = LIST(v, t_assign(KF_OP_ASSIGN, t_member(t_ref(v), "y", f32), t_ref(b)), store(out, u(0), t_ref(v)));
    kf_ir_kernel *k = lower_ok(kernel1("k", LIST(a, b, out), body));
    assert_int_equal(count_op(k, KF_IR_SPLAT), 1);
    assert_int_equal(count_op(k, KF_IR_INSERT), 4);
    const kf_ir_ins *last = &k->ins[find_op(k, KF_IR_INSERT, 3)];
    assert_int_equal(last->imm, 1);
    assert_int_equal(last->dst, last->a[0]);
    assert_string_equal(k->vals[last->dst].name, "v");
}

/* ---- through the interpreter --------------------------------------------------- */

static kf_interp_arg buf_arg(void *data, size_t bytes)
{
    return (kf_interp_arg){.is_buffer = true, .data = data, .bytes = bytes};
}

/* @schedule(block = 64)
 * kernel reduce(x: &[f32], out: &mut [f32], hx: &[f16x2], hy: &mut [f16x2]) {
 *     shared part: f32[2];
 *     let v = x[global_id.x];
 *     let s = warp_sum(v);
 *     if lane_id == 0 { part[warp_id] = s; }
 *     barrier();
 *     if thread_id.x == 0 { out[0] = part[0] + part[1]; }
 *     hy[thread_id.x] = shfl_xor(hx[thread_id.x], 1); } */
static void block_reduction_runs_on_the_interpreter(void **state)
{
    kf_type f32 = T_(KF_S_F32), h2 = TV(KF_S_F16, 2);
    kf_node *x = t_param("x", TB(KF_S_F32, 1, false)), *out = t_param("out", TB(KF_S_F32, 1, true));
    kf_node *hx = t_param("hx", TB(KF_S_F16, 2, false)), *hy = t_param("hy", TB(KF_S_F16, 2, true));
    kf_node *part = t_decl(KF_N_SHARED, "part", TA(KF_S_F32, 2, true), NULL);
    kf_node *v = t_decl(KF_N_LET, "v", f32, t_index(t_ref(x), t_geo(KF_BI_GLOBAL_ID, "x")));
    kf_node *sm = t_decl(KF_N_LET, "s", f32, t_call(KF_BI_WARP_SUM, f32, t_ref(v)));
    kf_node *first = t_if(t_bin(KF_OP_EQ, BOOL, t_builtin(KF_BI_LANE_ID, U32), u(0)),
                          t_block(t_assign(KF_OP_ASSIGN, t_index(t_ref(part), t_builtin(KF_BI_WARP_ID, U32)), t_ref(sm))), NULL);
    kf_node *bar = t_stmt(KF_N_EXPR, t_call(KF_BI_BARRIER, kf_type_void(), NULL));
    kf_node *tot = t_bin(KF_OP_ADD, f32, t_index(t_ref(part), u(0)), t_index(t_ref(part), u(1)));
    kf_node *fin = t_if(t_bin(KF_OP_EQ, BOOL, t_geo(KF_BI_THREAD_ID, "x"), u(0)), t_block(store(out, u(0), tot)), NULL);
    kf_node *sh = store(hy, t_geo(KF_BI_THREAD_ID, "x"),
                        t_call(KF_BI_SHFL_XOR, h2, LIST(t_index(t_ref(hx), t_geo(KF_BI_THREAD_ID, "x")), u(1))));
    kf_node *kern = t_kernel(t_const(UINT, 64), NULL, "reduce", LIST(x, out, hx, hy), t_block(LIST(part, v, sm, first, bar, fin, sh)));
    kf_ir_kernel *k = lower_ok(t_module(kern));
    assert_int_equal(k->narrays, 1);
    assert_true(k->arrays[0].type.flags & KF_TF_SHARED);
    assert_int_equal(k->params[2].align, 4);
    float xs[64], o = 0;
    uint16_t hin[128], hout[128];
    for (int i = 0; i < 64; i++) xs[i] = (float)i;
    for (int i = 0; i < 128; i++) hin[i] = kf_f16_from_double(i * 0.5);
    kf_interp_arg args[4] = {buf_arg(xs, sizeof xs), buf_arg(&o, sizeof o), buf_arg(hin, sizeof hin), buf_arg(hout, sizeof hout)};
    kf_interp_launch launch = {{1, 1, 1}, {64, 1, 1}, 0};
    kf_error err = {0};
    kf_status st = kf_interp_run(k, args, 4, &launch, NULL, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(st, KF_OK);
    assert_true(o == 2016.0f);
    for (int t = 0; t < 64; t++) {
        assert_int_equal(hout[2 * t], hin[2 * (t ^ 1)]);
        assert_int_equal(hout[2 * t + 1], hin[2 * (t ^ 1) + 1]);
    }
    kf_error_clear(&err);
}

/* ---- through kf_compile: real .kf programs ------------------------------------------ */

static kf_module *M;

static int teardown_module(void **state)
{
    kf_module_free(M);
    M = NULL;
    return 0;
}

/* Compiles src at -O0 (these tests look at the IR as lowered; ir/opt.c
 * is tests/test_opt.c's) and returns kernel `name` (the only one when NULL). */
static const kf_ir_kernel *compile_ok(const char *src, const char *name)
{
    static const kf_compile_opts o0 = {NULL, 0, KF_OPT_O0};
    kf_status st = kf_compile("t.kf", src, strlen(src), &o0, &M);
    if (st != KF_OK) {
        kf_buf b = {0};
        kf_diags_render(&b, &M->diags, M->source, M->source_len);
        fprintf(stderr, "%s", b.data ? b.data : "(no diagnostics)\n");
        kf_buf_free(&b);
    }
    assert_int_equal(st, KF_OK);
    const kf_ir_kernel *k = kf_module_kernel(M, name);
    assert_non_null(k);
    if (getenv("KF_TEST_DUMP")) {
        kf_buf b = {0};
        kf_ir_print(&b, k);
        fputs(b.data, stderr);
        kf_buf_free(&b);
    }
    return k;
}

/* Runs k on one block of `threads` threads; args in binding order. */
static void run_ok(const kf_ir_kernel *k, kf_interp_arg *args, uint32_t threads)
{
    kf_interp_launch launch = {{1, 1, 1}, {threads, 1, 1}, 0};
    kf_error err = {0};
    kf_status st = kf_interp_run(k, args, k->nparams, &launch, NULL, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(st, KF_OK);
    kf_error_clear(&err);
}

static kf_interp_arg u32_arg(uint32_t v)
{
    kf_interp_arg a = {0};
    a.value.type = kf_type_scalar(KF_S_U32);
    a.value.lane[0] = v;
    return a;
}

static void compiled_saxpy_prints_expected_ir(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "// y = a*x + y\n"
        "@schedule(block = 128, grid = cdiv(n, 128))\n"
        "kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
        "    let i = global_id.x;\n"
        "    if i < n {\n"
        "        y[i] = a * x[i] + y[i];\n"
        "    }\n"
        "}\n", NULL);
    char *text = print_kernel(k);
    const char *want =
        "kernel saxpy(a: f32, x: &[f32] align 4, y: &mut [f32] align 4, n: u32) block(128, 1, 1) grid(cdiv(n, 128)) ; t.kf:3:8\n"
        "  %1:f32 a = param 0                        ; t.kf:3:14\n"
        "  %2:&[f32] x = param 1                     ; t.kf:3:22\n"
        "  %3:&mut [f32] y = param 2                 ; t.kf:3:33\n"
        "  %4:u32 n = param 3                        ; t.kf:3:48\n"
        "  %5:u32 = sreg block_id.x                  ; t.kf:4:23\n"
        "  %6:u32 = sreg block_dim.x                 ; t.kf:4:23\n"
        "  %7:u32 = sreg thread_id.x                 ; t.kf:4:23\n"
        "  %8:u32 = mul %5, %6                       ; t.kf:4:23\n"
        "  %9:u32 i = add %8, %7                     ; t.kf:4:23\n"
        "  %10:bool = cmp.lt.u32 %9, %4              ; t.kf:5:10\n"
        "  if %10                                    ; t.kf:5:5\n"
        "    %11:f32 = load %2[%9]                   ; t.kf:6:21\n"
        "    %12:f32 = mul %1, %11                   ; t.kf:6:18\n"
        "    %13:f32 = load %3[%9]                   ; t.kf:6:28\n"
        "    %14:f32 = add %12, %13                  ; t.kf:6:25\n"
        "    store %3[%9], %14                       ; t.kf:6:10\n"
        "  endif                                     ; t.kf:5:5\n";
    if (strcmp(text, want)) fprintf(stderr, "%s", text);
    assert_string_equal(text, want);
    free(text);
}

/* The printed layout of loops with a latch, if/else and a shared array. */
static void compiled_loop_prints_expected_ir(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "@schedule(block = 64)\n"
        "kernel k(out: &mut [i32], n: i32) {\n"
        "    shared tile: i32[64];\n"
        "    var s: i32 = 0;\n"
        "    for j in 0 .. n step 2 {\n"
        "        if j > 3 { s += j; } else { s -= 1; }\n"
        "    }\n"
        "    tile[thread_id.x] = s;\n"
        "    out[0] = tile[0];\n"
        "}\n"
        , NULL);
    char *text = print_kernel(k);
    const char *want =
        "kernel k(out: &mut [i32] align 4, n: i32) block(64, 1, 1) grid(cdiv(count, 64)) ; t.kf:2:8\n"
        "  shared @tile: i32[64]                     ; t.kf:3:12\n"
        "  %1:&mut [i32] out = param 0               ; t.kf:2:10\n"
        "  %2:i32 n = param 1                        ; t.kf:2:27\n"
        "  %3:i32 = const 0                          ; t.kf:4:18\n"
        "  %4:i32 s = mov %3                         ; t.kf:4:9\n"
        "  %5:i32 = const 0                          ; t.kf:5:14\n"
        "  %6:i32 = const 2                          ; t.kf:5:26\n"
        "  %7:i32 j = mov %5                         ; t.kf:5:5\n"
        "  loop                                      ; t.kf:5:5\n"
        "    %8:bool = cmp.ge.i32 %7, %2             ; t.kf:5:19\n"
        "    if %8                                   ; t.kf:5:19\n"
        "      break                                 ; t.kf:5:19\n"
        "    endif                                   ; t.kf:5:19\n"
        "    %9:i32 = const 3                        ; t.kf:6:16\n"
        "    %10:bool = cmp.gt.i32 %7, %9            ; t.kf:6:14\n"
        "    if %10                                  ; t.kf:6:9\n"
        "      %11:i32 = add %4, %7                  ; t.kf:6:22\n"
        "      %4:i32 s = mov %11                    ; t.kf:6:22\n"
        "    else                                    ; t.kf:6:35\n"
        "      %12:i32 = const 1                     ; t.kf:6:42\n"
        "      %13:i32 = sub %4, %12                 ; t.kf:6:39\n"
        "      %4:i32 s = mov %13                    ; t.kf:6:39\n"
        "    endif                                   ; t.kf:6:9\n"
        "  latch                                     ; t.kf:5:26\n"
        "    %14:i32 = add %7, %6                    ; t.kf:5:26\n"
        "    %7:i32 j = mov %14                      ; t.kf:5:26\n"
        "  endloop                                   ; t.kf:5:5\n"
        "  %15:u32 = sreg thread_id.x                ; t.kf:8:20\n"
        "  astore @tile[%15], %4                     ; t.kf:8:9\n"
        "  %16:u32 = const 0                         ; t.kf:9:9\n"
        "  %17:u32 = const 0                         ; t.kf:9:19\n"
        "  %18:i32 = aload @tile[%17]                ; t.kf:9:18\n"
        "  store %1[%16], %18                        ; t.kf:9:8\n";
    if (strcmp(text, want)) fprintf(stderr, "%s", text);
    assert_string_equal(text, want);
    free(text);
}

static const char *fn_src =
    "fn sq(a: u32) -> u32 { return a * a; }\n"
    "fn sum_sq(a: u32, b: u32) -> u32 { return sq(a) + sq(b); }\n"
    "fn find(x: &[u32], n: u32, key: u32) -> u32 {\n"
    "    for i in 0 .. n {\n"
    "        var j: u32 = 0;\n"
    "        while j < 2 {\n"
    "            if x[i] + j == key { return i * 10 + j; }\n"
    "            j += 1;\n"
    "        }\n"
    "    }\n"
    "    return 999;\n"
    "}\n"
    "kernel k(x: &[u32], out: &mut [u32], n: u32) {\n"
    "    out[0] = find(x, n, 5);\n"
    "    out[1] = find(x, n, 100);\n"
    "    out[2] = sum_sq(3, sum_sq(1, 1));\n"
    "}\n";

static void compiled_fns_are_inlined(void **state)
{
    const kf_ir_kernel *k = compile_ok(fn_src, "k");
    assert_int_equal(count_op(k, KF_IR_PARAM), 3);
    /* find twice: a wrapper, a for and a while each; sq four times: no wrapper */
    assert_int_equal(count_op(k, KF_IR_LOOP), 2 * 3);
    assert_int_equal(count_op(k, KF_IR_LATCH), 2);
    uint32_t muls = 0;
    for (uint32_t i = 0; i < k->nins; i++)
        muls += k->ins[i].op == KF_IR_BINOP && k->ins[i].sub == KF_OP_MUL;
    assert_int_equal(muls, 2 * 1 + 4);   /* i * 10 per find, a * a per sq */
    uint32_t xs[4] = {1, 2, 4, 9}, out[3] = {0};
    kf_interp_arg args[3] = {buf_arg(xs, sizeof xs), buf_arg(out, sizeof out), u32_arg(4)};
    run_ok(k, args, 1);
    assert_int_equal(out[0], 21);
    assert_int_equal(out[1], 999);
    assert_int_equal(out[2], 9 + 4);
}

static void compiled_unroll_leaves_no_loop(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "kernel k(x: &[f32x4], out: &mut [f32]) {\n"
        "    var a: f32[4];\n"
        "    let v = x[0];\n"
        "    @unroll for t in 0 .. 4 {\n"
        "        let j = 3 - t;\n"
        "        a[j] = v[t] * (t as f32) * 0.5;\n"
        "    }\n"
        "    var s: f32 = 0.0;\n"
        "    @unroll for t in 0 .. 4 { s += a[t]; out[t + 1] = a[t]; }\n"
        "    out[0] = s;\n"
        "}\n", NULL);
    assert_int_equal(count_op(k, KF_IR_LOOP), 0);
    assert_int_equal(count_op(k, KF_IR_EXTRACT), 4);
    for (uint32_t i = 0; i < 4; i++) {
        const kf_ir_ins *ex = &k->ins[find_op(k, KF_IR_EXTRACT, i)];
        assert_int_equal(ex->imm, i);
        const kf_ir_ins *st = &k->ins[find_op(k, KF_IR_ASTORE, i)];
        for (uint32_t j = 0; j < k->nins; j++)
            if (k->ins[j].dst == st->a[0]) {
                assert_int_equal(k->ins[j].op, KF_IR_CONST);
                assert_int_equal(k->ins[j].imm, 3 - i);
            }
    }
    assert_int_equal(k->params[0].align, 16);
    float xs[4] = {2, 4, 6, 8}, out[5] = {0};
    kf_interp_arg args[2] = {buf_arg(xs, sizeof xs), buf_arg(out, sizeof out)};
    run_ok(k, args, 1);
    float want[4] = {12.0f, 6.0f, 2.0f, 0.0f};   /* a[3 - t] = x[t] * t / 2 */
    for (int i = 0; i < 4; i++) assert_true(out[i + 1] == want[i]);
    assert_true(out[0] == 20.0f);
}

static void compiled_conversions_are_explicit(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "kernel k(x: &[f16], y: &mut [f32], n: u32, m: i32) {\n"
        "    let a = x[n] as f32;\n"
        "    let b = (m as u32) as f32;\n"
        "    let c = n as u32;\n"
        "    y[c] = a + b + (m as f32);\n"
        "}\n", NULL);
    assert_int_equal(count_op(k, KF_IR_CVT), 4);   /* `n as u32` is no instruction */
    for (uint32_t j = 0; j < 4; j++) {
        const kf_ir_ins *c = &k->ins[find_op(k, KF_IR_CVT, j)];
        assert_false(kf_type_eq(c->type, k->vals[c->a[0]].type));
    }
}

static void compiled_short_circuit_guards_the_load(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "kernel k(x: &[u32], out: &mut [u32], n: u32, i: u32) {\n"
        "    if i < n && x[i] > 2 { out[0] = 1; } else { out[0] = 2; }\n"
        "    if i >= n || x[i] == 0 { out[1] = 1; }\n"
        "}\n", NULL);
    assert_int_equal(count_op(k, KF_IR_IF), 4);
    uint32_t xs[4] = {0, 3, 0, 0}, out[2] = {0};
    kf_interp_arg args[4] = {buf_arg(xs, sizeof xs), buf_arg(out, sizeof out), u32_arg(4), u32_arg(9)};
    run_ok(k, args, 1);   /* i = 9: x[9] would be out of bounds */
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 1);
    args[3] = u32_arg(1);
    run_ok(k, args, 1);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 1);
}

static void compiled_nested_loops_break_and_continue(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "kernel k(out: &mut [u32], n: u32) {\n"
        "    var s: u32 = 0;\n"
        "    for i in 0 .. n {\n"
        "        for j in 0 .. n {\n"
        "            if j == i { continue; }\n"
        "            if j > 2 { break; }\n"
        "            s += 1;\n"
        "        }\n"
        "        if i == 2 { continue; }\n"
        "        s += 100;\n"
        "    }\n"
        "    out[0] = s;\n"
        "}\n", NULL);
    uint32_t outer = find_op(k, KF_IR_LOOP, 0), inner = find_op(k, KF_IR_LOOP, 1);
    assert_int_equal(kf_ir_flow_of(k, find_op(k, KF_IR_CONTINUE, 0)).head, inner);
    assert_int_equal(kf_ir_flow_of(k, find_op(k, KF_IR_CONTINUE, 1)).head, outer);
    assert_int_equal(kf_ir_flow_of(k, find_op(k, KF_IR_BREAK, 2)).head, inner);   /* 0, 1: the for exits */
    uint32_t out = 0;
    kf_interp_arg args[2] = {buf_arg(&out, sizeof out), u32_arg(4)};
    run_ok(k, args, 1);
    assert_int_equal(out, 9 + 3 * 100);
}

static void compiled_params_order_and_view_align(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "@schedule(block = (16, 4), grid = (cdiv(n, 16), 2))\n"
        "kernel k(n: u32, x: &[f32], y: &mut [f32], unused: &[u16]) {\n"
        "    let x4 = x as &[f32x4];\n"
        "    let v = x4[n];\n"
        "    y[n] = v.x;\n"
        "}\n", NULL);
    assert_int_equal(k->nparams, 4);
    static const char *names[4] = {"n", "x", "y", "unused"};
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(k->ins[i].op, KF_IR_PARAM);
        assert_int_equal(k->ins[i].imm, i);
        assert_string_equal(k->params[i].name, names[i]);
    }
    assert_int_equal(k->params[1].align, 16);
    assert_int_equal(k->params[2].align, 4);
    assert_int_equal(k->params[3].align, 2);
    assert_true(k->params[2].type.flags & KF_TF_MUT);
    assert_false(k->params[1].type.flags & KF_TF_MUT);
    assert_int_equal(k->sched.block[0], 16);
    assert_int_equal(k->sched.block[1], 4);
    assert_int_equal(k->sched.block[2], 1);
    assert_int_equal(k->sched.ngrid, 2);
    assert_int_equal(k->sched.grid[0]->kind, KF_N_CALL);
    assert_true(k->sched.grid[1]->is_const);
}

/* Returns that leave @unroll expansions and nested loops; unroll bounds over
 * an outer unrolled variable; a kernel return deep in loops. */
static void compiled_returns_leave_nested_structures(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "fn first_big(v: f32x4) -> u32 {\n"
        "    @unroll for t in 0 .. 4 { if v[t] > 1.0 { return t; } }\n"
        "    return 9;\n"
        "}\n"
        "fn search(x: &[u32], n: u32) -> u32 {\n"
        "    var r: u32 = 0;\n"
        "    while r < 100 {\n"
        "        @unroll for u in 0 .. 2 {\n"
        "            for i in 0 .. n { if x[i] == r + u { return r * 10 + u; } }\n"
        "        }\n"
        "        r += 2;\n"
        "    }\n"
        "    return 7777;\n"
        "}\n"
        "kernel k(v: &[f32x4], x: &[u32], out: &mut [u32], n: u32) {\n"
        "    out[0] = first_big(v[0]);\n"
        "    out[1] = first_big(v[1]);\n"
        "    out[2] = search(x, n);\n"
        "    var s: u32 = 0;\n"
        "    @unroll for i in 0 .. 4 { @unroll for j in 0 .. i { s += x[i] * x[j]; } }\n"
        "    out[3] = s;\n"
        "    for i in 0 .. n {\n"
        "        var j: u32 = 0;\n"
        "        while j < 5 { if j == 3 && i == 1 { return; } j += 1; out[4] = i * 100 + j; }\n"
        "    }\n"
        "    out[5] = 1;\n"
        "}\n", NULL);
    float vs[8] = {0.5f, 0.25f, 3.0f, 9.0f, 0, 0, 0, 0};
    uint32_t xs[4] = {9, 13, 5, 2}, out[6] = {0};
    kf_interp_arg args[4] = {buf_arg(vs, sizeof vs), buf_arg(xs, sizeof xs), buf_arg(out, sizeof out), u32_arg(4)};
    run_ok(k, args, 1);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 9);
    assert_int_equal(out[2], 20);   /* r = 2, u = 0 finds x[3] == 2: 2 * 10 + 0 */
    assert_int_equal(out[3], 13 * 9 + 5 * 9 + 5 * 13 + 2 * 9 + 2 * 13 + 2 * 5);
    assert_int_equal(out[4], 103);  /* i = 1 returns when j reaches 3 after writing 103 */
    assert_int_equal(out[5], 0);
    assert_int_equal(count_op(k, KF_IR_RET), 1);
}

/* Lets over an unrolled variable fold per iteration (a doubling chain of 30
 * lets must not be re-evaluated exponentially), and so do integer builtins
 * used as vector indices. */
static void compiled_unroll_folds_lets_and_int_builtins(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "kernel k(x: &[f32x4], out: &mut [u32]) {\n"
        "    var s: u32 = 0;\n"
        "    let v = x[0];\n"
        "    @unroll for t in 0 .. 4 {\n"
        "        let a1: u32 = t + 1;\n"
        "        let a2 = a1 + a1; let a3 = a2 + a2; let a4 = a3 + a3; let a5 = a4 + a4; let a6 = a5 + a5;\n"
        "        let a7 = a6 + a6; let a8 = a7 + a7; let a9 = a8 + a8; let a10 = a9 + a9; let a11 = a10 + a10;\n"
        "        let a12 = a11 + a11; let a13 = a12 + a12; let a14 = a13 + a13; let a15 = a14 + a14; let a16 = a15 + a15;\n"
        "        let a17 = a16 + a16; let a18 = a17 + a17; let a19 = a18 + a18; let a20 = a19 + a19; let a21 = a20 + a20;\n"
        "        let a22 = a21 + a21; let a23 = a22 + a22; let a24 = a23 + a23; let a25 = a24 + a24; let a26 = a25 + a25;\n"
        "        let a27 = a26 + a26; let a28 = a27 + a27; let a29 = a28 + a28; let a30 = a29 + a29;\n"
        "        let j = min(t, 2);\n"
        "        s += a30 + (v[j] as u32) + (v[cdiv(t, 2)] as u32);\n"
        "    }\n"
        "    out[0] = s;\n"
        "}\n"
        , NULL);
    static const uint64_t lanes[8] = {0, 0, 1, 1, 2, 1, 2, 2};   /* min(t, 2), cdiv(t, 2) */
    assert_int_equal(count_op(k, KF_IR_EXTRACT), 8);
    for (uint32_t i = 0; i < 8; i++) assert_int_equal(k->ins[find_op(k, KF_IR_EXTRACT, i)].imm, lanes[i]);
    float xs[4] = {10, 20, 30, 40};
    uint32_t out = 0;
    kf_interp_arg args[2] = {buf_arg(xs, sizeof xs), buf_arg(&out, sizeof out)};
    run_ok(k, args, 1);
    assert_int_equal(out, (uint32_t)(10ull << 29) + 170u);
}

/* A chain of fns each calling the next twice inlines 2^24 bodies: lowering
 * stops at its instruction cap with an error instead of running away. */
static void compiled_runaway_inlining_is_an_error(void **state)
{
    kf_buf src = {0};
    kf_buf_puts(&src, "fn g0(a: u32) -> u32 { return a + 1; }\n");
    for (int i = 1; i <= 24; i++) kf_buf_printf(&src, "fn g%d(a: u32) -> u32 { return g%d(a) + g%d(a + 1); }\n", i, i - 1, i - 1);
    kf_buf_puts(&src, "kernel k(out: &mut [u32]) { out[0] = g24(1); }\n");
    kf_status st = kf_compile("t.kf", src.data, src.len, NULL, &M);
    kf_buf_free(&src);
    assert_int_equal(st, KF_ERR_SOURCE);
    assert_int_equal(M->diags.nerrors, 1);
    assert_non_null(strstr(M->diags.items.data[0].msg, "kernel too large after inlining fns and unrolling loops"));
}

/* Untyped constants splatted to vectors lower to CONST + SPLAT and run; an
 * untyped select/min takes the declared type; break/continue directly in an
 * @unroll body skip or end the remaining copies. */
static void compiled_splats_and_untyped_builtins_run(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "kernel k(x: &[f32x4], o: &mut [f32x4], p: &mut [u32], c: bool) {\n"
        "    var v = x[0];\n"
        "    v = v * 2.0;\n"
        "    v += 1;\n"
        "    let w = clamp(v, 0.0, 6.0);\n"
        "    let z: f32x4 = 0.5;\n"
        "    o[0] = w + z;\n"
        "    let s: u32 = select(c, 1, 2);\n"
        "    let m: u32 = min(7, 9);\n"
        "    p[0] = s + m;\n"
        "    var acc: u32 = 0;\n"
        "    @unroll for u in 0 .. 8 {\n"
        "        if u == 1 { continue; }\n"
        "        if u == 5 { break; }\n"
        "        acc += u;\n"
        "    }\n"
        "    p[1] = acc;\n"
        "}\n", NULL);
    assert_true(count_op(k, KF_IR_SPLAT) >= 4);
    uint32_t sp = find_op(k, KF_IR_SPLAT, 0);
    assert_true(sp > 0 && k->ins[sp - 1].op == KF_IR_CONST && k->ins[sp - 1].dst == k->ins[sp].a[0]);
    float xs[4] = {-1.0f, 0.5f, 1.0f, 3.0f}, os[4] = {0};
    uint32_t ps[2] = {0};
    kf_interp_arg args[4] = {buf_arg(xs, sizeof xs), buf_arg(os, sizeof os), buf_arg(ps, sizeof ps), {0}};
    args[3].value.type = kf_type_scalar(KF_S_BOOL);
    args[3].value.lane[0] = 0;
    run_ok(k, args, 1);
    float want[4] = {0.5f, 2.5f, 3.5f, 6.5f};
    for (int i = 0; i < 4; i++) assert_true(os[i] == want[i]);
    assert_int_equal(ps[0], 2 + 7);
    assert_int_equal(ps[1], 0 + 2 + 3 + 4);
}

/* A splatted constant that depends on an @unroll variable takes each
 * iteration's value: v + u adds 0, 1, 2, 3 to every lane in turn. */
/* Lowering asks lw_fold at every level of an expression that does not
 * fold. Over an @unroll variable (x + t + t + ..., x a parameter) that must
 * cost steps linear in the depth: 32 iterations of 990 levels lower well
 * within LW_MAX_WORK (quadratic, they would need over seven times the
 * limit) and compute x + 990 * t in every iteration. */
static void compiled_deep_unroll_expression_lowers_in_linear_steps(void **state)
{
    kf_buf src = {0};
    kf_buf_puts(&src, "kernel k(out: &mut [u32], x: u32) {\n    @unroll for t in 0 .. 32 { out[t] = x");
    for (int i = 0; i < 990; i++) kf_buf_puts(&src, " + t");
    kf_buf_puts(&src, "; }\n}\n");
    const kf_ir_kernel *k = compile_ok(src.data, NULL);
    kf_buf_free(&src);
    assert_int_equal(count_op(k, KF_IR_LOOP), 0);
    uint32_t out[32] = {0};
    kf_interp_arg args[2] = {buf_arg(out, sizeof out), u32_arg(7)};
    run_ok(k, args, 1);
    for (uint32_t t = 0; t < 32; t++) assert_int_equal(out[t], 7 + 990 * t);
}

static void compiled_unroll_dependent_splat_runs(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "kernel k(x: &[f32x4], o: &mut [f32x4]) {\n"
        "    var v = x[0];\n"
        "    @unroll for u in 0 .. 4 {\n"
        "        v = v + u;\n"
        "        v[u] = v[u] * 2.0;\n"
        "    }\n"
        "    o[0] = v;\n"
        "}\n", NULL);
    float xs[4] = {0.0f, 1.0f, 2.0f, 3.0f}, os[4] = {0};
    kf_interp_arg args[2] = {buf_arg(xs, sizeof xs), buf_arg(os, sizeof os)};
    run_ok(k, args, 1);
    float want[4] = {6.0f, 9.0f, 13.0f, 18.0f};
    for (int i = 0; i < 4; i++) assert_true(os[i] == want[i]);
}


/* ---- section 8 --------------------------------------------------------------- */

/* Views are the access type on ALOAD/ASTORE of the one array; a fn's shared
 * array is one array for every call; the dynamic array is DYN with no
 * length; the schedule keeps its shared expression. */
static void compiled_shared_views_and_fn_arrays(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "fn bump(s: shared u32[], i: u32) { s[i] += 1; }\n"
        "fn scratch() -> f32 {\n    shared t: f32[4];\n    t[0] = 1.0;\n    return t[0];\n}\n"
        "@schedule(block = 32, grid = 1, shared = n * 2)\n"
        "kernel k(o: &mut [f32], n: u32) {\n"
        "    shared h: f16[];\n"
        "    let wide = h as shared f16x8[];\n"
        "    wide[0] = f16x8(1.0);\n"
        "    bump(h as shared u32[], 1);\n"
        "    o[0] = scratch() + scratch() + (h[3] as f32);\n"
        "}\n", "k");
    assert_int_equal(k->narrays, 2);
    assert_true(k->arrays[0].type.flags & KF_TF_DYN);
    assert_int_equal(k->arrays[0].type.len, 0);
    assert_int_equal(k->arrays[1].type.len, 4);
    assert_non_null(k->sched.shared);
    char *ir = print_kernel(k);
    assert_non_null(strstr(ir, "shared(n * 2)"));
    assert_non_null(strstr(ir, "  shared @h: f16[] dynamic"));
    assert_non_null(strstr(ir, "astore @h[%"));
    assert_non_null(strstr(ir, "] as f16x8, %"));
    assert_non_null(strstr(ir, "= aload @h[%"));
    assert_non_null(strstr(ir, "] as u32"));
    free(ir);
    uint32_t stores_t = 0;
    for (uint32_t i = 0; i < k->nins; i++) stores_t += k->ins[i].op == KF_IR_ASTORE && k->ins[i].imm == 1;
    assert_int_equal(stores_t, 2);   /* two calls of scratch(), one array */
}

/* dot4/bfe/bfi/prmt are one INTRIN each over whole operands; rcp and
 * fast_div are MATH. */
static void compiled_intrinsics_are_one_instruction(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "kernel k(w: u32, f: f32, o: &mut [u32], q: &mut [f32]) {\n"
        "    o[0] = bitcast(u32, dot4(bitcast(i8x4, w), bitcast(u8x4, w), 3));\n"
        "    o[1] = bfi(w, bfe(w, 4, 8), 16, 8);\n"
        "    o[2] = prmt(w, w, 0x1032);\n"
        "    q[0] = rcp(f) + fast_div(f, 3.0);\n"
        "}\n", "k");
    assert_int_equal(count_op(k, KF_IR_INTRIN), 4);
    uint32_t d = find_op(k, KF_IR_INTRIN, 0);
    assert_int_equal(k->ins[d].sub, KF_BI_DOT4);
    assert_int_equal(k->vals[k->ins[d].a[0]].type.kind, KF_TK_VECTOR);
    assert_int_equal(k->vals[k->ins[d].a[1]].type.scalar, KF_S_U8);
    uint32_t bfi = find_op(k, KF_IR_INTRIN, 2);
    assert_int_equal(k->ins[bfi].sub, KF_BI_BFI);
    assert_true(k->ins[bfi].a[3] != 0);
    uint32_t rcp = find_op(k, KF_IR_MATH, 0);
    assert_int_equal(k->ins[rcp].sub, KF_BI_RCP);
    char *ir = print_kernel(k);
    assert_non_null(strstr(ir, ":i32 = dot4 %"));
    assert_non_null(strstr(ir, ":u32 = bfi %"));
    free(ir);
}

/* mma, ldmatrix and cp_async are INTRINs: ldmatrix and cp_async name
 * their shared array in imm (through a fn parameter and a view: the array
 * itself) with the view's element type; cp_async's buffer must be 16-byte
 * aligned (the parameter's align); the wait count is imm. */
static void compiled_tensor_builtins_are_intrinsics(void **state)
{
    const kf_ir_kernel *k = compile_ok(
        "fn load(s: shared u16[], i: u32) -> u16x8 { return ldmatrix_x4_trans(s, i); }\n"
        "kernel k(x: &[f16], o: &mut [f32], n: u32) {\n"
        "    shared t: f16[512];\n"
        "    cp_async(t, lane_id * 8, x, lane_id * 8);\n"
        "    cp_async(t, 256 + lane_id * 8, x, lane_id * 8, n);\n"
        "    cp_async_commit();\n"
        "    cp_async_wait(1);\n"
        "    cp_async_wait(0);\n"
        "    barrier();\n"
        "    let a = bitcast(f16x8, load(t as shared u16[], lane_id * 8));\n"
        "    let b = ldmatrix_x2(t, lane_id % 16 * 8);\n"
        "    let d = mma(a, b, 0.0);\n"
        "    o[lane_id] = d.x;\n"
        "}\n", "k");
    assert_int_equal(count_op(k, KF_IR_INTRIN), 8);
    uint32_t cp = find_op(k, KF_IR_INTRIN, 0), cpn = find_op(k, KF_IR_INTRIN, 1);
    assert_int_equal(k->ins[cp].sub, KF_BI_CP_ASYNC);
    assert_int_equal(k->ins[cpn].sub, KF_BI_CP_ASYNC_N);
    assert_int_equal(k->ins[cp].dst, 0);
    assert_int_equal(k->ins[cp].type.scalar, KF_S_F16);
    assert_int_equal(k->ins[cp].imm, 0);
    assert_int_equal(k->vals[k->ins[cpn].a[3]].type.scalar, KF_S_U32);
    assert_int_equal(k->params[0].align, 16);
    uint32_t w1 = find_op(k, KF_IR_INTRIN, 3);
    assert_int_equal(k->ins[w1].sub, KF_BI_CP_ASYNC_WAIT);
    assert_int_equal(k->ins[w1].imm, 1);
    uint32_t ld = find_op(k, KF_IR_INTRIN, 5);
    assert_int_equal(k->ins[ld].sub, KF_BI_LDMATRIX_X4_TRANS);
    assert_int_equal(k->ins[ld].imm, 0);
    assert_true(kf_type_eq(k->ins[ld].type, kf_type_vector(KF_S_U16, 8)));
    uint32_t mma = find_op(k, KF_IR_INTRIN, 7);
    assert_int_equal(k->ins[mma].sub, KF_BI_MMA);
    assert_true(kf_type_eq(k->vals[k->ins[mma].a[2]].type, kf_type_vector(KF_S_F32, 4)));
    char *ir = print_kernel(k);
    assert_non_null(strstr(ir, "cp_async @t[%"));
    assert_non_null(strstr(ir, "cp_async_wait 1 "));
    assert_non_null(strstr(ir, ":u16x8 = ldmatrix_x4_trans @t[%"));
    assert_non_null(strstr(ir, "] as u16 "));
    assert_non_null(strstr(ir, ":f16x4 b = ldmatrix_x2 @t[%"));
    assert_non_null(strstr(ir, ":f32x4 d = mma %"));
    free(ir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(saxpy_prints_expected_ir, setup, teardown),
        cmocka_unit_test_setup_teardown(unroll_expands_with_constant_indices, setup, teardown),
        cmocka_unit_test_setup_teardown(unroll_break_and_continue_follow_the_source, setup, teardown),
        cmocka_unit_test_setup_teardown(fn_calls_inline_with_early_returns, setup, teardown),
        cmocka_unit_test_setup_teardown(short_circuit_evaluates_right_only_when_needed, setup, teardown),
        cmocka_unit_test_setup_teardown(break_and_continue_bind_to_the_innermost_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(params_in_order_and_align_follows_views, setup, teardown),
        cmocka_unit_test_setup_teardown(casts_are_explicit_cvts, setup, teardown),
        cmocka_unit_test_setup_teardown(schedule_is_copied, setup, teardown),
        cmocka_unit_test_setup_teardown(grid_prints_with_needed_parentheses, setup, teardown),
        cmocka_unit_test_setup_teardown(warp_reductions_are_butterflies_in_full_warps_trees_in_partial_ones, setup, teardown),
        cmocka_unit_test_setup_teardown(cdiv_rounds_toward_positive_infinity, setup, teardown),
        cmocka_unit_test_setup_teardown(vectors_build_with_splat_and_insert, setup, teardown),
        cmocka_unit_test_setup_teardown(block_reduction_runs_on_the_interpreter, setup, teardown),
        cmocka_unit_test_teardown(compiled_saxpy_prints_expected_ir, teardown_module),
        cmocka_unit_test_teardown(compiled_loop_prints_expected_ir, teardown_module),
        cmocka_unit_test_teardown(compiled_fns_are_inlined, teardown_module),
        cmocka_unit_test_teardown(compiled_unroll_leaves_no_loop, teardown_module),
        cmocka_unit_test_teardown(compiled_conversions_are_explicit, teardown_module),
        cmocka_unit_test_teardown(compiled_short_circuit_guards_the_load, teardown_module),
        cmocka_unit_test_teardown(compiled_nested_loops_break_and_continue, teardown_module),
        cmocka_unit_test_teardown(compiled_params_order_and_view_align, teardown_module),
        cmocka_unit_test_teardown(compiled_returns_leave_nested_structures, teardown_module),
        cmocka_unit_test_teardown(compiled_unroll_folds_lets_and_int_builtins, teardown_module),
        cmocka_unit_test_teardown(compiled_runaway_inlining_is_an_error, teardown_module),
        cmocka_unit_test_teardown(compiled_splats_and_untyped_builtins_run, teardown_module),
        cmocka_unit_test_teardown(compiled_unroll_dependent_splat_runs, teardown_module),
        cmocka_unit_test_teardown(compiled_shared_views_and_fn_arrays, teardown_module),
        cmocka_unit_test_teardown(compiled_intrinsics_are_one_instruction, teardown_module),
        cmocka_unit_test_teardown(compiled_tensor_builtins_are_intrinsics, teardown_module),
        cmocka_unit_test_teardown(compiled_deep_unroll_expression_lowers_in_linear_steps, teardown_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
