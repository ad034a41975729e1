/* Unit tests of the parser (grammar/parser.y) through kf_parse: the AST
 * shape of every construct (ir/ast.h), each precedence level, locations,
 * syntax error messages and recovery (several errors per file), and the
 * guards against hostile input (deep nesting, long chains, garbage). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../grammar/parse.h"
#include "../ir/passes.h"

typedef struct {
    kf_arena arena;
    kf_diags diags;
    kf_node *module;
    char *src;
} parsed;

static parsed *parse_n(const char *src, size_t len)
{
    parsed *p = calloc(1, sizeof *p);
    kf_arena_init(&p->arena);
    p->src = malloc(len + 1);
    memcpy(p->src, src, len);
    p->src[len] = 0;
    kf_pass_ctx cx = {&p->arena, &p->diags, "t.kf", p->src, len};
    p->module = kf_parse(&cx);
    assert_non_null(p->module);
    assert_int_equal(p->module->kind, KF_N_MODULE);
    return p;
}

static parsed *parse(const char *src) { return parse_n(src, strlen(src)); }

static void parsed_free(parsed *p)
{
    kf_diags_free(&p->diags);
    kf_arena_free(&p->arena);
    free(p->src);
    free(p);
}

static void assert_no_errors(const parsed *p)
{
    if (p->diags.nerrors) fail_msg("unexpected error %u:%u: %s", p->diags.items.data[0].loc.line,
                                   p->diags.items.data[0].loc.col, p->diags.items.data[0].msg);
}

/* Error i is at line:col and its message contains `part`. */
static void assert_error(const parsed *p, size_t i, uint32_t line, uint32_t col, const char *part)
{
    if (i >= p->diags.items.len) fail_msg("no error %zu (have %zu)", i, p->diags.items.len);
    const kf_diag *d = &p->diags.items.data[i];
    if (!strstr(d->msg, part)) fail_msg("error %zu '%s' lacks '%s'", i, d->msg, part);
    if (d->loc.line != line || d->loc.col != col)
        fail_msg("error %zu '%s' at %u:%u, want %u:%u", i, d->msg, d->loc.line, d->loc.col, line, col);
}

/* ---- a compact s-expression view of expressions --------------------------- */

static void sexpr(kf_buf *b, const kf_node *n);

static void sexpr_list(kf_buf *b, const kf_node *n)
{
    for (; n; n = n->next) {
        kf_buf_puts(b, " ");
        sexpr(b, n);
    }
}

static void sexpr(kf_buf *b, const kf_node *n)
{
    char tb[48];
    if (!n) {
        kf_buf_puts(b, "nil");
        return;
    }
    switch (n->kind) {
    case KF_N_INT: kf_buf_printf(b, "%llu", (unsigned long long)n->ival); break;
    case KF_N_FLOAT: kf_buf_printf(b, "%g", n->fval); break;
    case KF_N_BOOL: kf_buf_puts(b, n->ival ? "true" : "false"); break;
    case KF_N_NAME: kf_buf_puts(b, n->name); break;
    case KF_N_TYPE: kf_buf_puts(b, kf_type_str(n->type, tb, sizeof tb)); break;
    case KF_N_TYPE_BUF: kf_buf_puts(b, n->op ? "&mut[" : "&["); sexpr(b, n->a); kf_buf_puts(b, "]"); break;
    case KF_N_TYPE_ARRAY: sexpr(b, n->a); kf_buf_puts(b, "["); sexpr(b, n->b); kf_buf_puts(b, "]"); break;
    case KF_N_BINARY: kf_buf_printf(b, "(%s ", kf_op_spelling[n->op]); sexpr(b, n->a); kf_buf_puts(b, " "); sexpr(b, n->b); kf_buf_puts(b, ")"); break;
    case KF_N_UNARY: kf_buf_printf(b, "(%s ", n->op == KF_OP_NEG ? "neg" : kf_op_spelling[n->op]); sexpr(b, n->a); kf_buf_puts(b, ")"); break;
    case KF_N_CAST: kf_buf_puts(b, "(as "); sexpr(b, n->a); kf_buf_puts(b, " "); sexpr(b, n->b); kf_buf_puts(b, ")"); break;
    case KF_N_CALL: kf_buf_puts(b, "(call "); sexpr(b, n->a); sexpr_list(b, n->b); kf_buf_puts(b, ")"); break;
    case KF_N_INDEX: kf_buf_puts(b, "(idx "); sexpr(b, n->a); kf_buf_puts(b, " "); sexpr(b, n->b); kf_buf_puts(b, ")"); break;
    case KF_N_MEMBER: kf_buf_puts(b, "(. "); sexpr(b, n->a); kf_buf_printf(b, " %s)", n->name); break;
    case KF_N_TUPLE: kf_buf_puts(b, "(tuple"); sexpr_list(b, n->a); kf_buf_puts(b, ")"); break;
    default: kf_buf_printf(b, "<%s>", kf_node_kind_names[n->kind]); break;
    }
}

/* The first statement of the first item's body. */
static const kf_node *first_stmt(const parsed *p)
{
    const kf_node *item = p->module->a;
    assert_non_null(item);
    const kf_node *body = item->c;
    assert_non_null(body);
    assert_int_equal(body->kind, KF_N_BLOCK);
    assert_non_null(body->a);
    return body->a;
}

/* Parses `let x = <expr>;` in a kernel and checks the s-expression. */
static void check_expr(const char *expr, const char *want)
{
    char src[512];
    snprintf(src, sizeof src, "kernel k() { let x = %s; }", expr);
    parsed *p = parse(src);
    assert_no_errors(p);
    const kf_node *let = first_stmt(p);
    assert_int_equal(let->kind, KF_N_LET);
    kf_buf b = {0};
    sexpr(&b, let->b);
    if (strcmp(b.data, want) != 0) fail_msg("%s: got %s, want %s", expr, b.data, want);
    kf_buf_free(&b);
    parsed_free(p);
}

static void dump_of_the_saxpy_example_is_exact(void **state)
{
    parsed *p = parse("@schedule(block = 256, grid = cdiv(n, 256))\n"
                      "kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
                      "    let i = global_id.x;\n"
                      "    if i < n {\n"
                      "        y[i] = a * x[i] + y[i];\n"
                      "    }\n"
                      "}\n");
    assert_no_errors(p);
    kf_buf b = {0};
    kf_ast_dump(&b, p->module, 0);
    const char *want =
        "MODULE @1:1\n"
        "  KERNEL saxpy @2:8\n"
        "    PARAM a @2:14\n"
        "      TYPE f32 @2:17\n"
        "    PARAM x @2:22\n"
        "      TYPE_BUF @2:25\n"
        "        TYPE f32 @2:27\n"
        "    PARAM y @2:33\n"
        "      TYPE_BUF mut @2:36\n"
        "        TYPE f32 @2:42\n"
        "    PARAM n @2:48\n"
        "      TYPE u32 @2:51\n"
        "    BLOCK @2:56\n"
        "      LET i @3:9\n"
        "        MEMBER x @3:23\n"
        "          NAME global_id @3:13\n"
        "      IF @4:5\n"
        "        BINARY '<' @4:10\n"
        "          NAME i @4:8\n"
        "          NAME n @4:12\n"
        "        BLOCK @4:14\n"
        "          ASSIGN '=' @5:14\n"
        "            INDEX @5:10\n"
        "              NAME y @5:9\n"
        "              NAME i @5:11\n"
        "            BINARY '+' @5:25\n"
        "              BINARY '*' @5:18\n"
        "                NAME a @5:16\n"
        "                INDEX @5:21\n"
        "                  NAME x @5:20\n"
        "                  NAME i @5:22\n"
        "              INDEX @5:28\n"
        "                NAME y @5:27\n"
        "                NAME i @5:29\n"
        "    ATTR schedule @1:1\n"
        "      NAMEDARG block @1:11\n"
        "        INT 256 @1:19\n"
        "      NAMEDARG grid @1:24\n"
        "        CALL @1:31\n"
        "          NAME cdiv @1:31\n"
        "          NAME n @1:36\n"
        "          INT 256 @1:39\n";
    assert_string_equal(b.data, want);
    kf_buf_free(&b);
    parsed_free(p);
}

/* ---- module items ---------------------------------------------------------- */

static void empty_file_is_an_empty_module(void **state)
{
    parsed *p = parse("");
    assert_no_errors(p);
    assert_null(p->module->a);
    parsed_free(p);
    p = parse("  // only a comment\n/* and another */\n");
    assert_no_errors(p);
    assert_null(p->module->a);
    parsed_free(p);
}

static void const_declaration(void **state)
{
    parsed *p = parse("const BLOCK: u32 = 256 * 2;");
    assert_no_errors(p);
    const kf_node *c = p->module->a;
    assert_int_equal(c->kind, KF_N_CONST);
    assert_string_equal(c->name, "BLOCK");
    assert_int_equal(c->loc.col, 7);
    assert_int_equal(c->a->kind, KF_N_TYPE);
    assert_true(kf_type_eq(c->a->type, kf_type_scalar(KF_S_U32)));
    assert_int_equal(c->b->kind, KF_N_BINARY);
    assert_null(c->next);
    parsed_free(p);
}

static void fn_declaration_with_and_without_return_type(void **state)
{
    parsed *p = parse("fn sq(x: f32, v: f16x8) -> f32 { return x * x; }\nfn noop(b: &mut [u32]) { }");
    assert_no_errors(p);
    const kf_node *f = p->module->a;
    assert_int_equal(f->kind, KF_N_FN);
    assert_string_equal(f->name, "sq");
    assert_int_equal(f->loc.col, 4);
    const kf_node *x = f->a;
    assert_int_equal(x->kind, KF_N_PARAM);
    assert_string_equal(x->name, "x");
    assert_string_equal(x->next->name, "v");
    assert_true(kf_type_eq(x->next->a->type, kf_type_vector(KF_S_F16, 8)));
    assert_null(x->next->next);
    assert_int_equal(f->b->kind, KF_N_TYPE);
    assert_int_equal(f->c->kind, KF_N_BLOCK);
    assert_int_equal(f->c->a->kind, KF_N_RETURN);
    const kf_node *g = f->next;
    assert_int_equal(g->kind, KF_N_FN);
    assert_null(g->b);
    assert_int_equal(g->a->a->kind, KF_N_TYPE_BUF);
    assert_int_equal(g->a->a->op, 1);
    assert_null(g->c->a);
    parsed_free(p);
}

static void kernel_parameters_in_binding_order(void **state)
{
    parsed *p = parse("kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) { }");
    assert_no_errors(p);
    const kf_node *k = p->module->a;
    assert_int_equal(k->kind, KF_N_KERNEL);
    assert_string_equal(k->name, "saxpy");
    assert_null(k->d);
    assert_null(k->b);
    const char *names[] = {"a", "x", "y", "n"};
    const int kinds[] = {KF_N_TYPE, KF_N_TYPE_BUF, KF_N_TYPE_BUF, KF_N_TYPE};
    const int mut[] = {0, 0, 1, 0};
    const kf_node *q = k->a;
    for (int i = 0; i < 4; i++, q = q->next) {
        assert_string_equal(q->name, names[i]);
        assert_int_equal(q->a->kind, kinds[i]);
        assert_int_equal(q->a->op, mut[i]);
    }
    assert_null(q);
    assert_true(kf_type_eq(k->a->next->a->a->type, kf_type_scalar(KF_S_F32)));
    assert_int_equal(k->a->next->a->type.kind, KF_TK_BUFFER);
    assert_int_equal(k->a->next->a->type.flags, 0);
    assert_int_equal(k->a->next->next->a->type.flags, KF_TF_MUT);
    assert_int_equal(k->a->next->next->a->type.scalar, KF_S_F32);
    parsed_free(p);
}

static void schedule_with_expressions_and_tuples(void **state)
{
    parsed *p = parse("@schedule(block = (16, 16), grid = (cdiv(n, 16), cdiv(m, 16), 1))\n"
                      "kernel k(n: u32, m: u32) { }\n"
                      "@schedule(block = 256)\nkernel j() { }\n"
                      "@schedule(block = (64), grid = n)\nkernel i(n: u32) { }");
    assert_no_errors(p);
    const kf_node *k = p->module->a;
    const kf_node *attr = k->d;
    assert_int_equal(attr->kind, KF_N_ATTR);
    assert_string_equal(attr->name, "schedule");
    assert_int_equal(attr->loc.line, 1);
    assert_int_equal(attr->loc.col, 1);
    const kf_node *block = attr->a, *grid = block->next;
    assert_int_equal(block->kind, KF_N_NAMEDARG);
    assert_string_equal(block->name, "block");
    assert_string_equal(grid->name, "grid");
    kf_buf b = {0};
    sexpr(&b, block->a);
    assert_string_equal(b.data, "(tuple 16 16)");
    kf_buf_reset(&b);
    sexpr(&b, grid->a);
    assert_string_equal(b.data, "(tuple (call cdiv n 16) (call cdiv m 16) 1)");
    kf_buf_reset(&b);
    const kf_node *j = k->next;
    sexpr(&b, j->d->a->a);
    assert_string_equal(b.data, "256");
    assert_null(j->d->a->next);
    kf_buf_reset(&b);
    const kf_node *i = j->next;
    sexpr(&b, i->d->a->a);
    assert_string_equal(b.data, "64");
    kf_buf_free(&b);
    parsed_free(p);
}

static void schedule_tuple_of_more_than_three_is_an_error(void **state)
{
    parsed *p = parse("@schedule(block = (1, 2, 3, 4))\nkernel k() { }");
    assert_int_equal(p->diags.nerrors, 1);
    assert_error(p, 0, 1, 19, "at most 3 items");
    parsed_free(p);
}

static void attributes_only_before_kernels(void **state)
{
    parsed *p = parse("@schedule(block = 1) fn f() { }");
    assert_error(p, 0, 1, 22, "unexpected 'fn', expected 'kernel' or '@schedule'");
    parsed_free(p);
    p = parse("kernel k() { @unroll while true { } }");
    assert_error(p, 0, 1, 22, "unexpected 'while', expected 'for'");
    parsed_free(p);
}

/* ---- statements ------------------------------------------------------------ */

static void declarations_let_var_shared(void **state)
{
    parsed *p = parse("kernel k() {\n let a = 1;\n let b: i32 = 2;\n var c = 3;\n var d: f32;\n var e: u8x4 = f;\n"
                      " var g: f32[8];\n shared s: f16x2[BLOCK / 2];\n}");
    assert_no_errors(p);
    const kf_node *s = first_stmt(p);
    kf_buf b = {0};
    const struct { int kind; const char *name; const char *type; const char *init; } want[] = {
        {KF_N_LET, "a", "nil", "1"}, {KF_N_LET, "b", "i32", "2"}, {KF_N_VAR, "c", "nil", "3"},
        {KF_N_VAR, "d", "f32", "nil"}, {KF_N_VAR, "e", "u8x4", "f"}, {KF_N_VAR, "g", "f32[8]", "nil"},
        {KF_N_SHARED, "s", "f16x2[(/ BLOCK 2)]", "nil"},
    };
    for (int i = 0; i < 7; i++, s = s->next) {
        assert_int_equal(s->kind, want[i].kind);
        assert_string_equal(s->name, want[i].name);
        assert_int_equal(s->loc.line, (uint32_t)i + 2);
        kf_buf_reset(&b);
        sexpr(&b, s->a);
        assert_string_equal(b.data, want[i].type);
        kf_buf_reset(&b);
        sexpr(&b, s->b);
        assert_string_equal(b.data, want[i].init);
    }
    assert_null(s);
    kf_buf_free(&b);
    parsed_free(p);
}

static void assignment_and_every_compound_operator(void **state)
{
    const char *ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
    const kf_op want[] = {KF_OP_ASSIGN, KF_OP_ADD, KF_OP_SUB, KF_OP_MUL, KF_OP_DIV, KF_OP_REM, KF_OP_AND, KF_OP_OR,
                          KF_OP_XOR, KF_OP_SHL, KF_OP_SHR};
    for (int i = 0; i < 11; i++) {
        char src[128];
        snprintf(src, sizeof src, "kernel k() { a[i].x %s b + 1; }", ops[i]);
        parsed *p = parse(src);
        assert_no_errors(p);
        const kf_node *s = first_stmt(p);
        assert_int_equal(s->kind, KF_N_ASSIGN);
        assert_int_equal(s->op, want[i]);
        assert_int_equal(s->loc.col, 21);
        kf_buf b = {0};
        sexpr(&b, s->a);
        assert_string_equal(b.data, "(. (idx a i) x)");
        kf_buf_free(&b);
        parsed_free(p);
    }
}

static void else_if_chain_nests_in_else_slot(void **state)
{
    parsed *p = parse("kernel k() { if a { x(); } else if b { } else if c { } else { y(); } if d { } }");
    assert_no_errors(p);
    const kf_node *s = first_stmt(p);
    assert_int_equal(s->kind, KF_N_IF);
    assert_string_equal(s->a->name, "a");
    assert_int_equal(s->b->kind, KF_N_BLOCK);
    assert_int_equal(s->b->a->kind, KF_N_EXPR);
    assert_int_equal(s->b->a->a->kind, KF_N_CALL);
    const kf_node *e1 = s->c;
    assert_int_equal(e1->kind, KF_N_IF);
    assert_string_equal(e1->a->name, "b");
    assert_int_equal(e1->loc.col, 33);
    const kf_node *e2 = e1->c;
    assert_int_equal(e2->kind, KF_N_IF);
    assert_string_equal(e2->a->name, "c");
    assert_int_equal(e2->c->kind, KF_N_BLOCK);
    assert_int_equal(e2->c->a->kind, KF_N_EXPR);
    const kf_node *last = s->next;
    assert_int_equal(last->kind, KF_N_IF);
    assert_null(last->c);
    assert_null(last->next);
    parsed_free(p);
}

static void for_loops_with_step_and_unroll(void **state)
{
    parsed *p = parse("kernel k() {\n for i in 0 .. n { }\n for c in thread_id.x..cols step BLOCK { }\n"
                      " @unroll for t in 0..4 { }\n}");
    assert_no_errors(p);
    const kf_node *f = first_stmt(p);
    kf_buf b = {0};
    assert_int_equal(f->kind, KF_N_FOR);
    assert_string_equal(f->name, "i");
    assert_int_equal(f->op, 0);
    assert_int_equal(f->loc.line, 2);
    assert_int_equal(f->loc.col, 2);
    assert_null(f->c);
    assert_int_equal(f->d->kind, KF_N_BLOCK);
    f = f->next;
    sexpr(&b, f->a);
    kf_buf_puts(&b, " ");
    sexpr(&b, f->b);
    kf_buf_puts(&b, " ");
    sexpr(&b, f->c);
    assert_string_equal(b.data, "(. thread_id x) cols BLOCK");
    f = f->next;
    assert_int_equal(f->op, 1);
    assert_string_equal(f->name, "t");
    assert_int_equal(f->loc.col, 10);
    assert_int_equal(f->a->ival, 0);
    assert_int_equal(f->b->ival, 4);
    kf_buf_free(&b);
    parsed_free(p);
}

static void while_break_continue_return_and_calls(void **state)
{
    parsed *p = parse("fn f() -> i32 { while i < n { break; continue; } return; return 1 + 2; barrier(); }");
    assert_no_errors(p);
    const kf_node *w = first_stmt(p);
    assert_int_equal(w->kind, KF_N_WHILE);
    assert_int_equal(w->a->kind, KF_N_BINARY);
    assert_int_equal(w->b->a->kind, KF_N_BREAK);
    assert_int_equal(w->b->a->next->kind, KF_N_CONTINUE);
    const kf_node *r = w->next;
    assert_int_equal(r->kind, KF_N_RETURN);
    assert_null(r->a);
    assert_int_equal(r->next->kind, KF_N_RETURN);
    assert_int_equal(r->next->a->op, KF_OP_ADD);
    const kf_node *e = r->next->next;
    assert_int_equal(e->kind, KF_N_EXPR);
    assert_int_equal(e->a->kind, KF_N_CALL);
    assert_string_equal(e->a->a->name, "barrier");
    assert_null(e->a->b);
    parsed_free(p);
}

/* ---- expressions ----------------------------------------------------------- */

static void each_precedence_level_binds_tighter_than_the_one_below(void **state)
{
    /* lowest to highest: || && | ^ & (== !=) (< <= > >=) (<< >>) (+ -) (* / %) as unary postfix */
    check_expr("a || b && c", "(|| a (&& b c))");
    check_expr("a && b | c", "(&& a (| b c))");
    check_expr("a | b ^ c", "(| a (^ b c))");
    check_expr("a ^ b & c", "(^ a (& b c))");
    check_expr("a & b == c", "(& a (== b c))");
    check_expr("a != b < c", "(!= a (< b c))");
    check_expr("a <= b << c", "(<= a (<< b c))");
    check_expr("a >> b + c", "(>> a (+ b c))");
    check_expr("a - b * c", "(- a (* b c))");
    check_expr("a % b as u32", "(% a (as b u32))");
    check_expr("-a as f32", "(as (neg a) f32)");
    check_expr("-a[i]", "(neg (idx a i))");
    check_expr("!f(x).y", "(! (. (call f x) y))");
    /* and the reverse order, to see that each level is not just right-nested */
    check_expr("a && b || c", "(|| (&& a b) c)");
    check_expr("a * b - c", "(- (* a b) c)");
    check_expr("a >= b || c > d", "(|| (>= a b) (> c d))");
    check_expr("a ^ b | c ^ d", "(| (^ a b) (^ c d))");
}

static void binary_operators_are_left_associative(void **state)
{
    check_expr("a - b - c", "(- (- a b) c)");
    check_expr("a / b * c % d", "(% (* (/ a b) c) d)");
    check_expr("a << b >> c", "(>> (<< a b) c)");
    check_expr("a || b || c", "(|| (|| a b) c)");
    check_expr("x as u32 as f64", "(as (as x u32) f64)");
}

static void as_binds_tighter_than_multiplication_and_looser_than_unary(void **state)
{
    check_expr("a * b as f32", "(* a (as b f32))");
    check_expr("a as f32 * b", "(* (as a f32) b)");
    check_expr("-x as f32 * y", "(* (as (neg x) f32) y)");
    check_expr("~x as u8", "(as (~ x) u8)");
    check_expr("- - !x", "(neg (neg (! x)))");
    check_expr("(a + b) as f16", "(as (+ a b) f16)");
    check_expr("x as &[f32x4]", "(as x &[f32x4])");
    check_expr("y as &mut [u8]", "(as y &mut[u8])");
}

static void postfix_calls_index_and_members_chain(void **state)
{
    check_expr("a.b[c].x", "(. (idx (. a b) c) x)");
    check_expr("f(x)[i + 1]", "(idx (call f x) (+ i 1))");
    check_expr("m[i][j]", "(idx (idx m i) j)");
    check_expr("global_id.x", "(. global_id x)");
    check_expr("f()", "(call f)");
    check_expr("g(a, b + c, h(d))", "(call g a (+ b c) (call h d))");
}

static void literals_names_and_types_as_primaries(void **state)
{
    check_expr("0x10 + 1_000", "(+ 16 1000)");
    check_expr("2.5 * .5", "(* 2.5 0.5)");
    check_expr("true && false", "(&& true false)");
    check_expr("f32x4(a, b, c, d)", "(call f32x4 a b c d)");
    check_expr("f32x4(a)", "(call f32x4 a)");
    check_expr("bitcast(f16x2, w)", "(call bitcast f16x2 w)");
    check_expr("((a))", "a");
    check_expr("inf", "inf");
}

static void locations_of_operators_calls_literals(void **state)
{
    /*                              1         2         3
     *                     123456789012345678901234567890123456789 */
    parsed *p = parse("kernel k() { let x = f(1) + -2.0 * y; }");
    assert_no_errors(p);
    const kf_node *let = first_stmt(p);
    assert_int_equal(let->loc.col, 18);
    const kf_node *add = let->b;
    assert_int_equal(add->loc.col, 27);
    assert_int_equal(add->a->kind, KF_N_CALL);
    assert_int_equal(add->a->loc.col, 22);
    assert_int_equal(add->a->b->loc.col, 24);
    const kf_node *mul = add->b;
    assert_int_equal(mul->loc.col, 34);
    assert_int_equal(mul->a->kind, KF_N_UNARY);
    assert_int_equal(mul->a->loc.col, 29);
    assert_int_equal(mul->a->a->loc.col, 30);
    assert_int_equal(mul->b->loc.col, 36);
    assert_int_equal(p->module->a->loc.col, 8);
    parsed_free(p);
}

static void comparisons_do_not_chain(void **state)
{
    parsed *p = parse("kernel k() { let x = a < b < c; let y = a == b != c; let z = (a < b) == c; }");
    assert_int_equal(p->diags.nerrors, 2);
    assert_error(p, 0, 1, 28, "comparisons do not chain");
    assert_error(p, 1, 1, 48, "comparisons do not chain");
    parsed_free(p);
}

/* ---- syntax errors --------------------------------------------------------- */

static void error_names_the_token_and_what_was_expected(void **state)
{
    parsed *p = parse("kernel k() {\n  let x = 1 +;\n}");
    assert_int_equal(p->diags.nerrors, 1);
    assert_error(p, 0, 2, 14, "unexpected ';', expected an expression");
    parsed_free(p);
    p = parse("kernel k(a f32) { }");
    assert_error(p, 0, 1, 12, "unexpected type 'f32', expected ':'");
    parsed_free(p);
    p = parse("kernel k() {\n  let x = 1\n  let y = 2;\n}");
    assert_error(p, 0, 3, 3, "unexpected 'let', expected ';' or an operator (is a ';' missing at the end of line 2?)");
    parsed_free(p);
    p = parse("kernel k() {\n  if a = b { }\n}");
    assert_error(p, 0, 2, 8, "unexpected '=', expected '{' or an operator (to compare, use '==')");
    parsed_free(p);
    p = parse("kernel k() { let v = c ? a : b; }");
    assert_error(p, 0, 1, 24, "there is no ?: operator");
    parsed_free(p);
    p = parse("kernel k() { let in = 1; }");
    assert_error(p, 0, 1, 18, "unexpected 'in', expected a name");
    parsed_free(p);
    p = parse("kernel k() {\n  if a {\n  }\n");
    assert_error(p, 0, 4, 1, "unexpected end of input, expected '}', a statement or an expression "
                 "(the '{' at line 1, column 12 is not closed)");
    parsed_free(p);
    p = parse("let x = 1;");
    assert_error(p, 0, 1, 1, "unexpected 'let', expected 'const', 'fn', 'kernel' or '@schedule'");
    parsed_free(p);
    p = parse("kernel k() { let step = 1; let f32 = 2; }");
    assert_error(p, 0, 1, 18, "unexpected 'step', expected a name ('step' is a keyword and cannot be a name)");
    assert_error(p, 1, 1, 32, "unexpected type 'f32', expected a name (a type name is a keyword");
    parsed_free(p);
    p = parse("kernel k() { for i in 0..n x { } f(a b); }\nfn g( -> f32 { }\nconst C: u32 = 1\n");
    assert_error(p, 0, 1, 28, "unexpected name 'x', expected '{' or 'step'");
    assert_error(p, 1, 1, 38, "unexpected name 'b', expected ')' or ','");
    assert_error(p, 2, 2, 7, "unexpected '->', expected a name or ')'");
    assert_error(p, 3, 4, 1, "unexpected end of input, expected ';' or an operator (is a ';' missing at the end of line 3?)");
    parsed_free(p);
}

static void a_block_is_a_statement(void **state)
{
    (void)state;
    parsed *p = parse("kernel k(o: &mut [u32]) {\n    { let x = 1; o[0] = x; }\n    {}\n    { { o[1] = 2; } }\n}\n");
    assert_int_equal(p->diags.nerrors, 0);
    const kf_node *s = p->module->a->c->a;
    assert_int_equal(s->kind, KF_N_BLOCK);
    assert_int_equal(s->a->kind, KF_N_LET);
    assert_int_equal(s->next->kind, KF_N_BLOCK);
    assert_null(s->next->a);
    assert_int_equal(s->next->next->a->kind, KF_N_BLOCK);
    parsed_free(p);
}

static void several_independent_errors_are_each_reported(void **state)
{
    parsed *p = parse("kernel a() {\n"
                      "    let x = ;\n"             /* 2:13 */
                      "    if x < { y = 1; }\n"     /* 3:12 */
                      "    let ok = 1;\n"
                      "    z = 3 3;\n"              /* 5:11 */
                      "}\n"
                      "kernel b(n: u32) {\n"
                      "    for i in 0 .. { }\n"     /* 8:19 */
                      "}\n"
                      "const C: u32 = 1\n"          /* 11:1 */
                      "fn f() { return 1 }\n");     /* 11:19 */
    assert_int_equal(p->diags.nerrors, 6);
    assert_error(p, 0, 2, 13, "unexpected ';'");
    assert_error(p, 1, 3, 12, "unexpected '{'");
    assert_error(p, 2, 5, 11, "unexpected integer literal '3'");
    assert_error(p, 3, 8, 19, "unexpected '{'");
    assert_error(p, 4, 11, 1, "unexpected 'fn', expected ';' or an operator (is a ';' missing at the end of line 10?)");
    assert_error(p, 5, 11, 19, "unexpected '}'");
    /* recovery kept the braces balanced: both kernels and the fn survive,
     * and the block after the broken if is read as a block statement */
    const kf_node *k = p->module->a;
    assert_string_equal(k->name, "a");
    assert_string_equal(k->next->name, "b");
    assert_int_equal(k->c->a->kind, KF_N_BLOCK);
    assert_int_equal(k->c->a->next->kind, KF_N_LET);
    parsed_free(p);
}

static void habits_from_other_languages_give_one_error_each(void **state)
{
    parsed *p = parse("kernel k(x: &f32, n: u32) {\n"      /* 1:14 */
                      "    let mut y = 1;\n"                /* 2:9 */
                      "    for (i = 0; i < n; i++) { }\n"   /* 3:9 */
                      "    if (x) y = 1;\n"                 /* 4:12 */
                      "    var a: [f32; 4];\n"              /* 5:12 */
                      "    return 1 +\n"
                      "}\n"                                 /* 7:1 */
                      "fn f(x: f32): f32 { }\n"             /* 8:13 */
                      "kernel k2() { x.y = f32x4(1, 2)[0] }\n");   /* 9:36 */
    assert_int_equal(p->diags.nerrors, 8);
    assert_error(p, 0, 1, 14, "unexpected type 'f32', expected '[' or 'mut'");
    assert_error(p, 1, 2, 9, "unexpected 'mut', expected a name");
    assert_error(p, 2, 3, 9, "unexpected '(', expected a name");
    assert_error(p, 3, 4, 12, "unexpected name 'y', expected '{' or an operator");
    assert_error(p, 4, 5, 12, "unexpected '[', expected a type");
    assert_error(p, 5, 7, 1, "unexpected '}', expected an expression");
    assert_error(p, 6, 8, 13, "unexpected ':', expected '->' or '{'");
    assert_error(p, 7, 9, 36, "unexpected '}', expected ';' or an operator");
    parsed_free(p);
    /* a ';' inside a parameter's brackets does not end the recovery: the
     * length is not read again as a module item */
    p = parse("kernel k(o: &mut [f32], x: &[f32; 16]) {\n    o[0] = x[0];\n}\n");
    assert_int_equal(p->diags.nerrors, 1);
    assert_error(p, 0, 1, 33, "unexpected ';', expected ']'");
    parsed_free(p);
}

static void lexer_errors_are_not_reported_twice(void **state)
{
    parsed *p = parse("kernel k() { let a = 1 $ 2; let b = é; }");
    assert_int_equal(p->diags.nerrors, 2);
    assert_error(p, 0, 1, 24, "unexpected character '$'");
    assert_error(p, 1, 1, 37, "non-ASCII character U+00E9");
    parsed_free(p);
}

static void error_count_is_capped_but_counted(void **state)
{
    kf_buf src = {0};
    for (int i = 0; i < 200; i++) kf_buf_puts(&src, "kernel k() { let = 1; }\n");
    parsed *p = parse(src.data);
    assert_int_equal(p->diags.nerrors, 200);
    assert_int_equal(p->diags.items.len, KF_DIAG_LIMIT);
    assert_error(p, 49, 50, 18, "unexpected '='");
    kf_buf_free(&src);
    parsed_free(p);
}

/* ---- hostile input --------------------------------------------------------- */

static void deep_parentheses_are_an_error_not_a_crash(void **state)
{
    size_t n = 100000;
    kf_buf src = {0};
    kf_buf_puts(&src, "kernel k() { let x = ");
    for (size_t i = 0; i < n; i++) kf_buf_puts(&src, "(");
    kf_buf_puts(&src, "1");
    for (size_t i = 0; i < n; i++) kf_buf_puts(&src, ")");
    kf_buf_puts(&src, "; }");
    parsed *p = parse(src.data);
    assert_int_equal(p->diags.nerrors, 1);
    assert_error(p, 0, 1, 22 + 199, "nesting deeper than 200 levels");
    kf_buf_free(&src);
    parsed_free(p);
}

static void nesting_up_to_the_limit_parses(void **state)
{
    kf_buf src = {0};
    kf_buf_puts(&src, "kernel k() ");   /* 1 brace + 99 (if-brace) + 50 calls (2 brackets each) = 200 */
    kf_buf_puts(&src, "{");
    for (int i = 0; i < 99; i++) kf_buf_puts(&src, "if a {");
    kf_buf_puts(&src, "x = ");
    for (int i = 0; i < 50; i++) kf_buf_puts(&src, "f(a + -b * c, g[");
    kf_buf_puts(&src, "1");
    for (int i = 0; i < 50; i++) kf_buf_puts(&src, "])");
    kf_buf_puts(&src, ";");
    for (int i = 0; i < 100; i++) kf_buf_puts(&src, "}");
    parsed *p = parse(src.data);
    assert_no_errors(p);
    const kf_node *s = first_stmt(p);
    for (int i = 0; i < 99; i++) {
        assert_int_equal(s->kind, KF_N_IF);
        s = s->b->a;
    }
    assert_int_equal(s->kind, KF_N_ASSIGN);
    assert_int_equal(p->module->a->aux, 0);   /* depth marks are cleared */
    kf_buf_free(&src);
    parsed_free(p);
}

static void long_operator_chain_is_an_error_not_a_deep_tree(void **state)
{
    kf_buf src = {0};
    kf_buf_puts(&src, "kernel k() { let x = a");
    for (int i = 0; i < 200000; i++) kf_buf_puts(&src, " + a");
    kf_buf_puts(&src, "; }");
    parsed *p = parse(src.data);
    assert_int_equal(p->diags.nerrors, 1);
    assert_error(p, 0, 1, 22 + 4 * 1000 - 2, "nested more than 1000 levels deep");
    kf_buf_free(&src);
    parsed_free(p);
}

static void long_unary_and_else_if_chains_are_errors(void **state)
{
    kf_buf src = {0};
    kf_buf_puts(&src, "kernel k() { let x = ");
    for (int i = 0; i < 100000; i++) kf_buf_puts(&src, "-");
    kf_buf_puts(&src, "1; }");
    parsed *p = parse(src.data);
    assert_int_equal(p->diags.nerrors, 1);
    /* reported at the '-' that overflows the 1000-entry parser stack */
    assert_non_null(strstr(p->diags.items.data[0].msg, "too deeply nested for the parser"));
    assert_in_range(p->diags.items.data[0].loc.col, 22 + 980, 22 + 1000);
    parsed_free(p);
    kf_buf_reset(&src);
    kf_buf_puts(&src, "kernel k() { if a { }");
    for (int i = 0; i < 20000; i++) kf_buf_puts(&src, " else if a { }");
    kf_buf_puts(&src, " }");
    p = parse(src.data);
    assert_int_equal(p->diags.nerrors, 1);
    /* an IF with an empty block is 2 deep; the 999th link makes 2 + 999 > 1000.
     * Its 'if' is at 21 (the head) + 14 per link, 7 into the link. */
    assert_error(p, 0, 1, 21 + 14 * 998 + 7, "nested more than 1000 levels deep");
    parsed_free(p);
    kf_buf_reset(&src);
    kf_buf_puts(&src, "kernel k() { if a { }");
    for (int i = 0; i < 900; i++) kf_buf_puts(&src, " else if a { }");
    kf_buf_puts(&src, " else { x(); } }");
    p = parse(src.data);
    assert_no_errors(p);
    const kf_node *s = first_stmt(p);
    for (int i = 0; i < 900; i++) s = s->c;
    assert_int_equal(s->kind, KF_N_IF);
    assert_int_equal(s->c->kind, KF_N_BLOCK);
    assert_int_equal(s->c->a->kind, KF_N_EXPR);
    kf_buf_free(&src);
    parsed_free(p);
}

static void ten_megabyte_line_reports_the_right_column(void **state)
{
    size_t pad = 10u << 20;
    kf_buf src = {0};
    kf_buf_puts(&src, "kernel k() {");
    char *spaces = malloc(pad);
    memset(spaces, ' ', pad);
    kf_buf_append(&src, spaces, pad);
    free(spaces);
    kf_buf_puts(&src, "let x = ; }");
    parsed *p = parse(src.data);
    assert_int_equal(p->diags.nerrors, 1);
    assert_error(p, 0, 1, (uint32_t)(12 + pad + 9), "unexpected ';'");
    kf_buf_free(&src);
    parsed_free(p);
}

static void unterminated_comment_and_invalid_utf8_in_a_program(void **state)
{
    parsed *p = parse("kernel k() { }\n/* open\n\xff");
    assert_int_equal(p->diags.nerrors, 2);
    assert_error(p, 0, 3, 1, "invalid UTF-8 byte 0xff in a comment");
    assert_error(p, 1, 2, 1, "unterminated block comment");
    assert_string_equal(p->module->a->name, "k");
    parsed_free(p);
}

static void binary_garbage_gives_errors_and_no_crash(void **state)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    char *buf = malloc(4097);
    for (int round = 0; round < 200; round++) {
        size_t len = (size_t)(round * 37 % 4096) + 1;
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[i] = (char)(round % 2 ? (int)(x & 0xff) : " (){}[];,+-*/.=<>&|!~abx01@:"[x % 29]);
        }
        parsed *p = parse_n(buf, len);
        assert_true(p->diags.nerrors > 0);
        for (size_t i = 0; i < p->diags.items.len; i++) {
            assert_true(p->diags.items.data[i].loc.line >= 1);
            assert_true(p->diags.items.data[i].loc.col >= 1);
        }
        parsed_free(p);
    }
    free(buf);
}

/* Parses every .kf file of one folder; returns how many. */
static int parse_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".kf") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *src;
        size_t len;
        kf_error err = {0};
        assert_int_equal(kf_read_file(path, &src, &len, &err), KF_OK);
        parsed *p = parse_n(src, len);
        if (p->diags.nerrors) fail_msg("%s:%u:%u: %s", path, p->diags.items.data[0].loc.line,
                                       p->diags.items.data[0].loc.col, p->diags.items.data[0].msg);
        bool kernel = false;
        for (const kf_node *it = p->module->a; it; it = it->next) kernel |= it->kind == KF_N_KERNEL;
        assert_true(kernel);
        parsed_free(p);
        free(src);
        count++;
    }
    closedir(d);
    return count;
}

static void library_kernels_parse_without_errors(void **state)
{
    const char *root = getenv("KF_SOURCE_DIR") ? getenv("KF_SOURCE_DIR") : KF_SOURCE_DIR;
    char dir[900];
    snprintf(dir, sizeof dir, "%s/kernels", root);
    int n = parse_folder(dir);
    snprintf(dir, sizeof dir, "%s/kernels/features", root);
    n += parse_folder(dir);
    assert_true(n >= 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dump_of_the_saxpy_example_is_exact),
        cmocka_unit_test(empty_file_is_an_empty_module),
        cmocka_unit_test(const_declaration),
        cmocka_unit_test(fn_declaration_with_and_without_return_type),
        cmocka_unit_test(kernel_parameters_in_binding_order),
        cmocka_unit_test(schedule_with_expressions_and_tuples),
        cmocka_unit_test(schedule_tuple_of_more_than_three_is_an_error),
        cmocka_unit_test(attributes_only_before_kernels),
        cmocka_unit_test(declarations_let_var_shared),
        cmocka_unit_test(assignment_and_every_compound_operator),
        cmocka_unit_test(else_if_chain_nests_in_else_slot),
        cmocka_unit_test(for_loops_with_step_and_unroll),
        cmocka_unit_test(while_break_continue_return_and_calls),
        cmocka_unit_test(each_precedence_level_binds_tighter_than_the_one_below),
        cmocka_unit_test(binary_operators_are_left_associative),
        cmocka_unit_test(as_binds_tighter_than_multiplication_and_looser_than_unary),
        cmocka_unit_test(postfix_calls_index_and_members_chain),
        cmocka_unit_test(literals_names_and_types_as_primaries),
        cmocka_unit_test(locations_of_operators_calls_literals),
        cmocka_unit_test(comparisons_do_not_chain),
        cmocka_unit_test(error_names_the_token_and_what_was_expected),
        cmocka_unit_test(a_block_is_a_statement),
        cmocka_unit_test(several_independent_errors_are_each_reported),
        cmocka_unit_test(habits_from_other_languages_give_one_error_each),
        cmocka_unit_test(lexer_errors_are_not_reported_twice),
        cmocka_unit_test(error_count_is_capped_but_counted),
        cmocka_unit_test(deep_parentheses_are_an_error_not_a_crash),
        cmocka_unit_test(nesting_up_to_the_limit_parses),
        cmocka_unit_test(long_operator_chain_is_an_error_not_a_deep_tree),
        cmocka_unit_test(long_unary_and_else_if_chains_are_errors),
        cmocka_unit_test(ten_megabyte_line_reports_the_right_column),
        cmocka_unit_test(unterminated_comment_and_invalid_utf8_in_a_program),
        cmocka_unit_test(binary_garbage_gives_errors_and_no_crash),
        cmocka_unit_test(library_kernels_parse_without_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
