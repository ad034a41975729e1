/* Unit tests of ir/base.c and ir/types.c: arena, vectors, text buffers,
 * diagnostics rendering, type names, IR marker linking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <stdlib.h>

#include "ir.h"

static void arena_allocations_are_zeroed_and_aligned(void **state)
{
    kf_arena a;
    kf_arena_init(&a);
    for (int i = 1; i < 5000; i++) {
        unsigned char *p = kf_arena_alloc(&a, (size_t)i);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        for (int j = 0; j < i; j++) assert_int_equal(p[j], 0);
        memset(p, 0xab, (size_t)i);
    }
    assert_null(kf_arena_calloc(&a, SIZE_MAX / 2, 4));
    assert_string_equal(kf_arena_printf(&a, "%s-%d", "x", 42), "x-42");
    kf_arena_free(&a);
}

static void buf_printf_grows_past_small_buffer(void **state)
{
    kf_buf b = {0};
    char big[1000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = 0;
    kf_buf_printf(&b, "%s|%d", big, 7);
    assert_int_equal(b.len, 1001);
    assert_string_equal(b.data + 999, "|7");
    kf_buf_free(&b);
}

/* An empty kf_buf's data is NULL: appending it (n = 0) is allowed and
 * leaves an empty, NUL-terminated text (fuzz_compile found the NULL reach
 * memcpy through the CUDA-C emitter). */
static void buf_append_of_empty_buffer_is_allowed(void **state)
{
    kf_buf empty = {0}, b = {0};
    kf_buf_append(&b, empty.data, empty.len);
    assert_false(b.oom);
    assert_int_equal(b.len, 0);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    kf_buf_append(&b, "ab", 2);
    kf_buf_append(&b, NULL, 0);
    assert_string_equal(b.data, "ab");
    kf_buf_free(&b);
}

static void diag_renders_line_and_caret(void **state)
{
    const char *src = "let a = 1;\nlet b = c + 1;\n";
    kf_diags d = {0};
    kf_diag_error(&d, ((kf_loc){"t.kf", 2, 9}), "unknown name '%s'", "c");
    kf_buf out = {0};
    kf_diags_render(&out, &d, src, strlen(src));
    assert_string_equal(out.data, "t.kf:2:9: error: unknown name 'c'\n    let b = c + 1;\n            ^\n");
    assert_int_equal(d.nerrors, 1);
    kf_buf_free(&out);
    kf_diags_free(&d);
}

static void diag_limit_counts_dropped_errors(void **state)
{
    kf_diags d = {0};
    for (int i = 0; i < KF_DIAG_LIMIT + 7; i++) kf_diag_error(&d, ((kf_loc){"t.kf", 1, 1}), "e%d", i);
    assert_int_equal(d.items.len, KF_DIAG_LIMIT);
    assert_int_equal(d.dropped, 7);
    assert_int_equal(d.nerrors, KF_DIAG_LIMIT + 7);
    kf_diags_free(&d);
}

static void type_names_round_trip(void **state)
{
    char buf[64];
    const char *names[] = {"f32", "f16x8", "u8x16", "bf16x2", "u64x2", "bool", "i32x4"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        kf_type t = kf_type_from_name(names[i], strlen(names[i]));
        assert_int_not_equal(t.kind, KF_TK_VOID);
        assert_string_equal(kf_type_str(t, buf, sizeof buf), names[i]);
    }
    const char *bad[] = {"f32x3", "f32x8", "u8x32", "boolx2", "f64x4", "f32x02", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(kf_type_from_name(bad[i], strlen(bad[i])).kind, KF_TK_VOID);
}

static void ir_link_pairs_markers(void **state)
{
    kf_ir_ins ins[] = {
        {.op = KF_IR_LOOP}, {.op = KF_IR_IF}, {.op = KF_IR_BREAK}, {.op = KF_IR_ELSE},
        {.op = KF_IR_CONTINUE}, {.op = KF_IR_ENDIF}, {.op = KF_IR_LATCH}, {.op = KF_IR_ENDLOOP},
    };
    kf_ir_kernel k = {.ins = ins, .nins = 8};
    assert_false(kf_ir_linked(&k));   /* not linked yet: no structure stored */
    assert_true(kf_ir_link(&k));
    assert_true(kf_ir_linked(&k));
    /* every marker knows its whole structure: {head, mid, end} */
    static const kf_ir_flow want[8] = {
        {0, 6, 7}, {1, 3, 5}, {0, 6, 7}, {1, 3, 5}, {0, 6, 7}, {1, 3, 5}, {0, 6, 7}, {0, 6, 7},
    };
    for (uint32_t i = 0; i < 8; i++) {
        kf_ir_flow f = kf_ir_flow_of(&k, i);
        assert_int_equal(f.head, want[i].head);
        assert_int_equal(f.mid, want[i].mid);
        assert_int_equal(f.end, want[i].end);
    }
    /* nested loops: break and continue belong to the innermost; no ELSE/LATCH is mid 0 */
    kf_ir_ins nest[] = {
        {.op = KF_IR_LOOP}, {.op = KF_IR_BREAK}, {.op = KF_IR_LOOP}, {.op = KF_IR_CONTINUE}, {.op = KF_IR_ENDLOOP},
        {.op = KF_IR_CONTINUE}, {.op = KF_IR_IF}, {.op = KF_IR_ENDIF}, {.op = KF_IR_ENDLOOP},
    };
    kf_ir_kernel kn = {.ins = nest, .nins = 9};
    assert_true(kf_ir_link(&kn));
    assert_int_equal(kf_ir_flow_of(&kn, 1).end, 8);
    assert_int_equal(kf_ir_flow_of(&kn, 3).head, 2);
    assert_int_equal(kf_ir_flow_of(&kn, 3).end, 4);
    assert_int_equal(kf_ir_flow_of(&kn, 5).head, 0);
    assert_int_equal(kf_ir_flow_of(&kn, 5).mid, 0);
    assert_int_equal(kf_ir_flow_of(&kn, 6).end, 7);
    /* a corrupted link is seen by kf_ir_linked */
    nest[4].imm = 0;
    assert_false(kf_ir_linked(&kn));
    kf_ir_ins bad[] = {{.op = KF_IR_IF}, {.op = KF_IR_ENDLOOP}};
    kf_ir_kernel kb = {.ins = bad, .nins = 2};
    assert_false(kf_ir_link(&kb));
    kf_ir_ins twice[] = {{.op = KF_IR_IF}, {.op = KF_IR_ELSE}, {.op = KF_IR_ELSE}, {.op = KF_IR_ENDIF}};
    kf_ir_kernel kt = {.ins = twice, .nins = 4};
    assert_false(kf_ir_link(&kt));
    kf_ir_ins stray[] = {{.op = KF_IR_BREAK}};
    kf_ir_kernel ks = {.ins = stray, .nins = 1};
    assert_false(kf_ir_link(&ks));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arena_allocations_are_zeroed_and_aligned),
        cmocka_unit_test(buf_printf_grows_past_small_buffer),
        cmocka_unit_test(buf_append_of_empty_buffer_is_allowed),
        cmocka_unit_test(diag_renders_line_and_caret),
        cmocka_unit_test(diag_limit_counts_dropped_errors),
        cmocka_unit_test(type_names_round_trip),
        cmocka_unit_test(ir_link_pairs_markers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
