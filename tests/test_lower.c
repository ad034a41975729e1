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

#include "kforge.h"
#include "lower_ast.h"

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
    for (uint32_t i = 0; i < L->nk; i++) assert_true(kf_ir_link(&L->ks[i]));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(saxpy_prints_expected_ir, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
