/* Unit tests of the lexer (grammar/lexer.re): every token class, literal
 * forms and their values, the `0..n` range rule, and each lexical error with
 * its exact line:col (bad bytes, invalid UTF-8, NUL, unterminated comments,
 * overflowing literals, invalid vector types), plus a 10 MB line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/lexer.h"
#include "parser.h"

#define MAXTOK 64

typedef struct {
    kf_arena arena;
    kf_diags diags;
    kf_pass_ctx cx;
    kf_lexer lx;
    int tk[MAXTOK];
    kf_token tok[MAXTOK];
    int n;
} lexed;

/* Lexes src (len bytes, NUL-terminated after) into at most MAXTOK tokens;
 * the last recorded token is the end (0). */
static lexed *lex_n(const char *src, size_t len)
{
    lexed *l = calloc(1, sizeof *l);
    kf_arena_init(&l->arena);
    l->cx = (kf_pass_ctx){&l->arena, &l->diags, "t.kf", src, len};
    kf_lex_init(&l->lx, &l->cx);
    for (l->n = 0; l->n < MAXTOK; l->n++) {
        l->tk[l->n] = kf_lex_next(&l->lx, &l->tok[l->n]);
        if (l->tk[l->n] == 0) break;
    }
    assert_true(l->n < MAXTOK);
    return l;
}

static lexed *lex(const char *src) { return lex_n(src, strlen(src)); }

static void lexed_free(lexed *l)
{
    kf_diags_free(&l->diags);
    kf_arena_free(&l->arena);
    free(l);
}

static void assert_kinds(const lexed *l, const int *want, int n)
{
    assert_int_equal(l->n, n);
    for (int i = 0; i < n; i++) {
        if (l->tk[i] != want[i]) fail_msg("token %d: got %s, want %s", i, kf_lex_token_name(l->tk[i]), kf_lex_token_name(want[i]));
    }
}

/* The one error of l, at line:col, whose message contains `part`. */
static void assert_one_error(const lexed *l, uint32_t line, uint32_t col, const char *part)
{
    assert_int_equal(l->diags.nerrors, 1);
    const kf_diag *d = &l->diags.items.data[0];
    if (!strstr(d->msg, part)) fail_msg("message '%s' lacks '%s'", d->msg, part);
    assert_int_equal(d->loc.line, line);
    assert_int_equal(d->loc.col, col);
}

static void keywords_are_their_own_tokens(void **state)
{
    lexed *l = lex("kernel fn const let var shared if else for in step while break continue return as mut true false");
    const int want[] = {TK_KERNEL, TK_FN, TK_CONST, TK_LET, TK_VAR, TK_SHARED, TK_IF, TK_ELSE, TK_FOR, TK_IN, TK_STEP,
                        TK_WHILE, TK_BREAK, TK_CONTINUE, TK_RETURN, TK_AS, TK_MUT, TK_TRUE, TK_FALSE};
    assert_kinds(l, want, (int)(sizeof want / sizeof *want));
    assert_int_equal(l->diags.nerrors, 0);
    lexed_free(l);
}

static void names_are_ascii_words_and_keyword_prefixes_are_names(void **state)
{
    lexed *l = lex("x _a9 kernels iff f32x4b f32x f320 global_id");
    const int want[] = {TK_NAME, TK_NAME, TK_NAME, TK_NAME, TK_NAME, TK_NAME, TK_NAME, TK_NAME};
    assert_kinds(l, want, 8);
    assert_string_equal(l->tok[1].v.name, "_a9");
    assert_string_equal(l->tok[2].v.name, "kernels");
    assert_string_equal(l->tok[4].v.name, "f32x4b");
    assert_string_equal(l->tok[7].v.name, "global_id");
    assert_int_equal(l->diags.nerrors, 0);
    lexed_free(l);
}

static void type_names_carry_their_type(void **state)
{
    const char *names[] = {"bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64",
                           "f32x4", "f16x8", "bf16x2", "u8x16", "u64x2", "i32x4", "f64x2", "u8x4"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        lexed *l = lex(names[i]);
        assert_int_equal(l->tk[0], TK_TYPE);
        char buf[32];
        assert_string_equal(kf_type_str(l->tok[0].v.type, buf, sizeof buf), names[i]);
        assert_int_equal(l->diags.nerrors, 0);
        lexed_free(l);
    }
}

static void invalid_vector_types_say_why(void **state)
{
    const char *bad[] = {"f32x3", "u8x32", "f64x4", "f32x02", "i16x1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char src[32];
        snprintf(src, sizeof src, "  %s", bad[i]);
        lexed *l = lex(src);
        assert_int_equal(l->tk[0], TK_TYPE);
        char want[128];
        snprintf(want, sizeof want, "vector %s: lane count must be 2, 4, 8 or 16 and total size at most 16 bytes", bad[i]);
        assert_one_error(l, 1, 3, want);
        lexed_free(l);
    }
    lexed *l = lex("boolx2");
    assert_one_error(l, 1, 1, "no bool vectors");
    lexed_free(l);
}

static void operators_and_punctuation(void **state)
{
    lexed *l = lex("|| && | ^ & == != < <= > >= << >> + - * / % ! ~ = += -= *= /= %= &= |= ^= <<= >>= "
                   "( ) [ ] { } , ; : . .. -> @schedule @unroll");
    const int want[] = {TK_OROR, TK_ANDAND, TK_PIPE, TK_CARET, TK_AMP, TK_EQEQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE,
                        TK_SHL, TK_SHR, TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT, TK_NOT, TK_TILDE,
                        TK_ASSIGN, TK_PLUSEQ, TK_MINUSEQ, TK_STAREQ, TK_SLASHEQ, TK_PERCENTEQ, TK_AMPEQ, TK_PIPEEQ,
                        TK_CARETEQ, TK_SHLEQ, TK_SHREQ, TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_LBRACE,
                        TK_RBRACE, TK_COMMA, TK_SEMI, TK_COLON, TK_DOT, TK_DOTDOT, TK_ARROW, TK_AT_SCHEDULE,
                        TK_AT_UNROLL, 0};
    assert_kinds(l, want, (int)(sizeof want / sizeof *want) - 1);
    assert_int_equal(l->diags.nerrors, 0);
    lexed_free(l);
}

static void amp_mut_is_two_tokens(void **state)
{
    lexed *l = lex("&mut [f32] &[u8x4]");
    const int want[] = {TK_AMP, TK_MUT, TK_LBRACKET, TK_TYPE, TK_RBRACKET, TK_AMP, TK_LBRACKET, TK_TYPE, TK_RBRACKET};
    assert_kinds(l, want, 9);
    lexed_free(l);
}

static void integer_literals_decimal_hex_binary_with_separators(void **state)
{
    lexed *l = lex("0 1024 1_000_000 0xff 0XFF 0xdead_BEEF 0b1010 0B1_0 18446744073709551615 0xffffffffffffffff");
    const uint64_t want[] = {0, 1024, 1000000, 255, 255, 0xdeadbeef, 10, 2, UINT64_MAX, UINT64_MAX};
    assert_int_equal(l->n, 10);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(l->tk[i], TK_INT);
        assert_true(l->tok[i].v.ival == want[i]);
    }
    assert_int_equal(l->diags.nerrors, 0);
    lexed_free(l);
}

static void float_literal_forms(void **state)
{
    lexed *l = lex("1.0 .5 2. 1e-6 6.02e23 1_000.5 3E+2 1.5e3 0.");
    const double want[] = {1.0, 0.5, 2.0, 1e-6, 6.02e23, 1000.5, 300.0, 1500.0, 0.0};
    assert_int_equal(l->n, 9);
    for (int i = 0; i < 9; i++) {
        assert_int_equal(l->tk[i], TK_FLOAT);
        assert_true(l->tok[i].v.fval == want[i]);
    }
    assert_int_equal(l->diags.nerrors, 0);
    lexed_free(l);
}

static void range_after_integer_is_not_a_float(void **state)
{
    lexed *l = lex("0..n 2...x 0x10..4 1.5..2");
    const int want[] = {TK_INT, TK_DOTDOT, TK_NAME, TK_INT, TK_DOTDOT, TK_DOT, TK_NAME, TK_INT, TK_DOTDOT, TK_INT,
                        TK_FLOAT, TK_DOTDOT, TK_INT};
    assert_kinds(l, want, 13);
    assert_true(l->tok[0].v.ival == 0);
    assert_true(l->tok[7].v.ival == 16);
    assert_true(l->tok[9].v.ival == 4);
    assert_true(l->tok[10].v.fval == 1.5);
    assert_int_equal(l->diags.nerrors, 0);
    lexed_free(l);
}

static void member_access_after_name_is_dot(void **state)
{
    lexed *l = lex("v.x a[0].y");
    const int want[] = {TK_NAME, TK_DOT, TK_NAME, TK_NAME, TK_LBRACKET, TK_INT, TK_RBRACKET, TK_DOT, TK_NAME};
    assert_kinds(l, want, 9);
    lexed_free(l);
}

static void token_locations_are_line_and_byte_column(void **state)
{
    lexed *l = lex("let x\n\t  = 1; // c\n/* a\nb */ y");
    const uint32_t where[][2] = {{1, 1}, {1, 5}, {2, 4}, {2, 6}, {2, 7}, {4, 6}};
    assert_int_equal(l->n, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(l->tok[i].loc.line, where[i][0]);
        assert_int_equal(l->tok[i].loc.col, where[i][1]);
        assert_string_equal(l->tok[i].loc.file, "t.kf");
    }
    assert_int_equal(l->tok[5].len, 1);
    assert_int_equal(l->tok[6].loc.line, 4);
    assert_int_equal(l->tok[6].loc.col, 7);
    lexed_free(l);
}

static void comments_may_hold_utf8(void **state)
{
    lexed *l = lex("// héllo → ✓ 𝄞\n/* ünïcode\n */ x");
    assert_int_equal(l->n, 1);
    assert_int_equal(l->tk[0], TK_NAME);
    assert_int_equal(l->tok[0].loc.line, 3);
    assert_int_equal(l->diags.nerrors, 0);
    lexed_free(l);
}

static void stray_character_is_an_error_at_its_position(void **state)
{
    lexed *l = lex("a\n  b $ c");
    const int want[] = {TK_NAME, TK_NAME, TK_ILLEGAL, TK_NAME};
    assert_kinds(l, want, 4);
    assert_one_error(l, 2, 5, "unexpected character '$'");
    lexed_free(l);
}

static void control_character_is_an_error(void **state)
{
    lexed *l = lex("a \x01 b");
    assert_one_error(l, 1, 3, "control character 0x01");
    lexed_free(l);
}

static void non_ascii_outside_comment_is_an_error(void **state)
{
    lexed *l = lex("let é = 1;");
    assert_int_equal(l->tk[1], TK_ILLEGAL);
    assert_one_error(l, 1, 5, "non-ASCII character U+00E9");
    assert_int_equal(l->tk[2], TK_ASSIGN);
    lexed_free(l);
}

static void invalid_utf8_is_an_error_in_code_and_comments(void **state)
{
    lexed *l = lex("x \xff\xfe y");
    assert_one_error(l, 1, 3, "invalid UTF-8 byte 0xff");
    assert_int_equal(l->tk[2], TK_NAME);
    lexed_free(l);
    /* overlong encoding of '/', a surrogate, a truncated sequence */
    const char *bad[] = {"// ok\n// \xc0\xaf\n", "/* \xed\xa0\x80 */", "//\xe2\x82"};
    const uint32_t col[] = {4, 4, 3};
    const uint32_t line[] = {2, 1, 1};
    for (int i = 0; i < 3; i++) {
        l = lex(bad[i]);
        assert_one_error(l, line[i], col[i], "invalid UTF-8 byte");
        lexed_free(l);
    }
}

static void embedded_nul_is_an_error_at_its_position(void **state)
{
    const char src[] = "a \0 b // \0\n";
    lexed *l = lex_n(src, sizeof src - 1);
    const int want[] = {TK_NAME, TK_ILLEGAL, TK_NAME};
    assert_kinds(l, want, 3);
    assert_int_equal(l->diags.nerrors, 2);
    assert_int_equal(l->diags.items.data[0].loc.col, 3);
    assert_non_null(strstr(l->diags.items.data[0].msg, "NUL byte"));
    assert_int_equal(l->diags.items.data[1].loc.col, 10);
    assert_non_null(strstr(l->diags.items.data[1].msg, "NUL byte"));
    lexed_free(l);
}

static void nul_inside_block_comment_does_not_end_it(void **state)
{
    const char src[] = "/* a \0 b */ x /* open \0";
    lexed *l = lex_n(src, sizeof src - 1);
    assert_int_equal(l->n, 1);
    assert_int_equal(l->tk[0], TK_NAME);
    assert_int_equal(l->tok[0].loc.col, 13);
    assert_int_equal(l->diags.nerrors, 3);
    assert_int_equal(l->diags.items.data[0].loc.col, 6);
    assert_int_equal(l->diags.items.data[1].loc.col, 23);
    assert_non_null(strstr(l->diags.items.data[1].msg, "NUL byte"));
    assert_int_equal(l->diags.items.data[2].loc.col, 15);
    assert_non_null(strstr(l->diags.items.data[2].msg, "unterminated block comment"));
    assert_int_equal(l->tok[1].loc.col, 24);
    lexed_free(l);
}

static void unterminated_block_comment_is_reported_at_its_start(void **state)
{
    lexed *l = lex("x\n  /* never\n closed * /");
    assert_int_equal(l->n, 1);
    assert_one_error(l, 2, 3, "unterminated block comment");
    lexed_free(l);
}

static void block_comments_do_not_nest(void **state)
{
    lexed *l = lex("/* a /* b */ c */");
    const int want[] = {TK_NAME, TK_STAR, TK_SLASH};
    assert_kinds(l, want, 3);
    lexed_free(l);
}

static void overflowing_integer_literal_is_an_error(void **state)
{
    lexed *l = lex("  18446744073709551616");
    assert_int_equal(l->tk[0], TK_INT);
    assert_one_error(l, 1, 3, "does not fit in 64 bits");
    lexed_free(l);
    l = lex("0x1_0000_0000_0000_0000");
    assert_one_error(l, 1, 1, "does not fit in 64 bits");
    lexed_free(l);
}

static void malformed_number_literals_are_errors(void **state)
{
    const char *src[] = {"0x", "0b", "0b102", "12ab", "1_", "1__", "0xfg", "0123", "1.0f", "2x", "1e", "1e999",
                         "1__0", "0x_ff", "1__0.5"};
    const char *msg[] = {"has no digits", "has no digits", "invalid binary digit '2'", "invalid decimal digit 'a'",
                         "must stand between two digits", "must stand between two digits", "invalid hex digit 'g'",
                         "leading zero", "invalid suffix 'f'", "invalid decimal digit 'x'", "exponent of '1e' has no digits",
                         "too large for f64", "must stand between two digits", "must stand between two digits",
                         "must stand between two digits"};
    for (size_t i = 0; i < sizeof src / sizeof *src; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "x %s", src[i]);
        lexed *l = lex(buf);
        assert_int_equal(l->n, 2);
        assert_one_error(l, 1, 3, msg[i]);
        lexed_free(l);
    }
}

static void unknown_attribute_is_an_error(void **state)
{
    lexed *l = lex(" @inline fn");
    assert_int_equal(l->tk[0], TK_ILLEGAL);
    assert_int_equal(l->tk[1], TK_FN);
    assert_one_error(l, 1, 2, "unknown attribute '@inline'");
    lexed_free(l);
}

static void nesting_deeper_than_limit_stops_the_lexer(void **state)
{
    char src[KF_LEX_MAX_NESTING + 10];
    memset(src, '(', sizeof src - 1);
    src[sizeof src - 1] = 0;
    kf_arena arena;
    kf_arena_init(&arena);
    kf_diags diags = {0};
    kf_pass_ctx cx = {&arena, &diags, "t.kf", src, strlen(src)};
    kf_lexer lx;
    kf_lex_init(&lx, &cx);
    kf_token tok;
    int n = 0;
    while (kf_lex_next(&lx, &tok)) n++;
    assert_int_equal(n, KF_LEX_MAX_NESTING + 1);
    assert_int_equal(diags.nerrors, 1);
    assert_non_null(strstr(diags.items.data[0].msg, "nesting deeper than 200 levels"));
    assert_int_equal(diags.items.data[0].loc.col, KF_LEX_MAX_NESTING + 1);
    kf_diags_free(&diags);
    kf_arena_free(&arena);
}

static void ten_megabyte_line_lexes_with_exact_columns(void **state)
{
    size_t n = 10u << 20;
    char *src = malloc(n + 16);
    for (size_t i = 0; i < n; i += 2) src[i] = 'a', src[i + 1] = ' ';
    memcpy(src + n, "$", 2);
    kf_arena arena;
    kf_arena_init(&arena);
    kf_diags diags = {0};
    kf_pass_ctx cx = {&arena, &diags, "t.kf", src, n + 1};
    kf_lexer lx;
    kf_lex_init(&lx, &cx);
    kf_token tok;
    size_t count = 0;
    int tk;
    while ((tk = kf_lex_next(&lx, &tok)) == TK_NAME) count++;
    assert_int_equal(count, n / 2);
    assert_int_equal(tk, TK_ILLEGAL);
    assert_int_equal(tok.loc.col, n + 1);
    assert_int_equal(diags.nerrors, 1);
    assert_int_equal(diags.items.data[0].loc.col, n + 1);
    kf_diags_free(&diags);
    kf_arena_free(&arena);
    free(src);
}

static void empty_input_is_just_the_end(void **state)
{
    lexed *l = lex("");
    assert_int_equal(l->n, 0);
    assert_int_equal(l->tok[0].loc.line, 1);
    assert_int_equal(l->tok[0].loc.col, 1);
    assert_int_equal(l->diags.nerrors, 0);
    lexed_free(l);
}

static void token_descriptions_for_messages(void **state)
{
    assert_string_equal(kf_lex_token_name(TK_SEMI), "';'");
    assert_string_equal(kf_lex_token_name(TK_KERNEL), "'kernel'");
    assert_string_equal(kf_lex_token_name(0), "end of input");
    assert_string_equal(kf_lex_token_name(-5), "a token");
    lexed *l = lex("foo 12");
    char buf[64];
    assert_string_equal(kf_lex_token_describe(l->tk[0], &l->tok[0], buf, sizeof buf), "name 'foo'");
    assert_string_equal(kf_lex_token_describe(l->tk[1], &l->tok[1], buf, sizeof buf), "integer literal '12'");
    lexed_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keywords_are_their_own_tokens),
        cmocka_unit_test(names_are_ascii_words_and_keyword_prefixes_are_names),
        cmocka_unit_test(type_names_carry_their_type),
        cmocka_unit_test(invalid_vector_types_say_why),
        cmocka_unit_test(operators_and_punctuation),
        cmocka_unit_test(amp_mut_is_two_tokens),
        cmocka_unit_test(integer_literals_decimal_hex_binary_with_separators),
        cmocka_unit_test(float_literal_forms),
        cmocka_unit_test(range_after_integer_is_not_a_float),
        cmocka_unit_test(member_access_after_name_is_dot),
        cmocka_unit_test(token_locations_are_line_and_byte_column),
        cmocka_unit_test(comments_may_hold_utf8),
        cmocka_unit_test(stray_character_is_an_error_at_its_position),
        cmocka_unit_test(control_character_is_an_error),
        cmocka_unit_test(non_ascii_outside_comment_is_an_error),
        cmocka_unit_test(invalid_utf8_is_an_error_in_code_and_comments),
        cmocka_unit_test(embedded_nul_is_an_error_at_its_position),
        cmocka_unit_test(nul_inside_block_comment_does_not_end_it),
        cmocka_unit_test(unterminated_block_comment_is_reported_at_its_start),
        cmocka_unit_test(block_comments_do_not_nest),
        cmocka_unit_test(overflowing_integer_literal_is_an_error),
        cmocka_unit_test(malformed_number_literals_are_errors),
        cmocka_unit_test(unknown_attribute_is_an_error),
        cmocka_unit_test(nesting_deeper_than_limit_stops_the_lexer),
        cmocka_unit_test(ten_megabyte_line_lexes_with_exact_columns),
        cmocka_unit_test(empty_input_is_just_the_end),
        cmocka_unit_test(token_descriptions_for_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
