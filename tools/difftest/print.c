/* A generated program as .kf text. Every module-level name (constants, fns,
 * the kernel, the nz_T helpers) gets the caller's tag appended, so that
 * many programs, or many shrinking candidates of one, can share a module.
 * One shrinking edit (shrink.c) may be applied while printing: a statement
 * left out or replaced by its body, an expression replaced by 0, 1 or one
 * of its operands. Expressions are fully parenthesised, so the printed
 * text never depends on precedence. */
#include "dt_impl.h"

#include "../../ir/numeric.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const dt_op_spelling[DT_NOPS] = {
    [DT_OP_NONE] = "",
#define X(e, s) [DT_OP_##e] = s,
    DT_BINOPS(X)
#undef X
};

typedef struct {
    kf_buf *b;
    const kf_dt_prog *p;
    const char *tag;
    const dt_edit *e;
    int indent;
} pr;

static void expr(pr *c, const dt_node *n);
static void stmts(pr *c, const dt_node *s);

static const char *tname(kf_type t) { return dt_type_name(t); }

/* 0 or 1 of type t as typed .kf text. */
static void constant(pr *c, kf_type t, int v)
{
    if (t.scalar == KF_S_BOOL) kf_buf_puts(c->b, v ? "true" : "false");
    else if (t.kind == KF_TK_VECTOR) kf_buf_printf(c->b, "%s(%d)", tname(t), v);
    else kf_buf_printf(c->b, "(%d as %s)", v, tname(t));
}

static void args(pr *c, const dt_node *a)
{
    for (; a; a = a->next) {
        expr(c, a);
        if (a->next) kf_buf_puts(c->b, ", ");
    }
}

/* pre, the expression e, post. */
static void around(pr *c, const char *pre, const dt_node *e, const char *post)
{
    kf_buf_puts(c->b, pre);
    expr(c, e);
    kf_buf_puts(c->b, post);
}

static void guard(pr *c, const dt_node *n)
{
    const dt_node *a = n->a[0];
    char pre[96], post[96];
    switch ((dt_guard)n->op) {
    case DT_G_NZ_OR1: return around(c, "(", a, " | 1)");
    case DT_G_NZ_FN:
        snprintf(pre, sizeof pre, "nz_%s%s(", tname(n->type), c->tag);
        return around(c, pre, a, ")");
    case DT_G_NAN:   /* f16/bf16 vectors too: packed min/max (section 10) */
        return around(c, "clamp(", a, ", -inf, inf)");
    case DT_G_ZERO: return around(c, "(", a, " + 0.0)");
    case DT_G_MASK:
        snprintf(post, sizeof post, " & %lld)", (long long)n->n);
        return around(c, "(", a, post);
    case DT_G_MOD:
        snprintf(post, sizeof post, " as u32) %% %lld)", (long long)n->n);
        return around(c, "((", a, post);
    case DT_G_APPROX: {
        bool f64 = n->type.scalar == KF_S_F64, absolute = dt_approx_abs(n->n);
        snprintf(pre, sizeof pre, "%s(clamp(%s", n->text, absolute ? "abs(" : "");
        snprintf(post, sizeof post, "%s, %s, %s))", absolute ? ")" : "", dt_approx_bound(n->n, f64, false),
                 dt_approx_bound(n->n, f64, true));
        return around(c, pre, a, post);
    }
    }
}

static void expr(pr *c, const dt_node *n)
{
    kf_buf *b = c->b;
    if (c->e && c->e->id == n->id) {
        if (c->e->kind == DT_ED_ZERO || c->e->kind == DT_ED_ONE) return constant(c, n->type, c->e->kind == DT_ED_ONE);
        if (c->e->kind == DT_ED_HOIST) return expr(c, dt_operand(n, c->e->arg));
    }
    switch ((dt_kind)n->kind) {
    case DT_E_LIT:
        if (n->flags & DT_F_UNTYPED) kf_buf_puts(b, n->text);
        else if (n->type.kind == KF_TK_VECTOR) kf_buf_printf(b, "%s(%s)", tname(n->type), n->text);
        else kf_buf_printf(b, "(%s as %s)", n->text, tname(n->type));
        break;
    case DT_E_NAME:
        kf_buf_printf(b, "%s%s", n->text, n->flags & DT_F_MODULE ? c->tag : "");
        break;
    case DT_E_UN:
        kf_buf_printf(b, "(%c ", n->op);
        around(c, "", n->a[0], ")");
        break;
    case DT_E_BIN:
        around(c, "(", n->a[0], "");
        kf_buf_printf(b, " %s ", dt_op_spelling[n->op]);
        around(c, "", n->a[1], ")");
        break;
    case DT_E_CAST:
        around(c, "(", n->a[0], " as ");
        kf_buf_printf(b, "%s)", tname(n->type));
        break;
    case DT_E_BITCAST:
        kf_buf_printf(b, "bitcast(%s, ", tname(n->type));
        around(c, "", n->a[0], ")");
        break;
    case DT_E_CALL:
    case DT_E_CTOR:
        if (n->kind == DT_E_CTOR) kf_buf_printf(b, "%s(", tname(n->type));
        else kf_buf_printf(b, "%s%s(", n->text, n->flags & DT_F_MODULE ? c->tag : "");
        args(c, n->a[0]);
        kf_buf_puts(b, ")");
        break;
    case DT_E_INDEX:
        kf_buf_printf(b, "%s[", n->text);
        around(c, "", n->a[0], "]");
        break;
    case DT_E_MEMBER:
        expr(c, n->a[0]);
        if (n->aux) kf_buf_printf(b, "[%s]", n->aux);
        else if (n->flags & DT_F_DOT) kf_buf_printf(b, ".%c", "xyzw"[n->n]);
        else kf_buf_printf(b, "[%lld]", (long long)n->n);
        break;
    case DT_E_SLOT:
        kf_buf_printf(b, "(%s + %lld)", n->text, (long long)n->n);
        break;
    case DT_E_GUARD:
        guard(c, n);
        break;
    default:
        kf_unreachable("statement printed as an expression");
    }
}

/* ---- statements ------------------------------------------------------------------- */
static void line(pr *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(pr *c, const char *fmt, ...)
{
    kf_buf_printf(c->b, "%*s", 4 * c->indent, "");
    va_list ap;
    va_start(ap, fmt);
    kf_buf_vprintf(c->b, fmt, ap);
    va_end(ap);
}

static void braced(pr *c, const dt_node *body)
{
    kf_buf_puts(c->b, " {\n");
    c->indent++;
    stmts(c, body);
    c->indent--;
    line(c, "}");
}

static void if_stmt(pr *c, const dt_node *s)
{
    kf_buf_puts(c->b, "if ");
    expr(c, s->a[0]);
    braced(c, s->body);
    if (!s->els) return;
    kf_buf_puts(c->b, " else ");
    if (s->els->kind == DT_S_IF && !s->els->next && !(c->e && c->e->id == s->els->id)) return if_stmt(c, s->els);
    kf_buf_puts(c->b, "{\n");
    c->indent++;
    stmts(c, s->els);
    c->indent--;
    line(c, "}");
}

static void for_stmt(pr *c, const dt_node *s)
{
    line(c, "%sfor %s in ", s->flags & DT_F_UNROLL ? "@unroll " : "", s->text);
    expr(c, s->a[0]);
    kf_buf_puts(c->b, " .. ");
    expr(c, s->a[1]);
    if (s->a[2]) {
        kf_buf_puts(c->b, " step ");
        expr(c, s->a[2]);
    }
    braced(c, s->body);
    kf_buf_puts(c->b, "\n");
}

static void stmt(pr *c, const dt_node *s)
{
    kf_buf *b = c->b;
    if (c->e && c->e->id == s->id) {
        if (c->e->kind == DT_ED_DELETE) return;
        if (c->e->kind == DT_ED_UNWRAP) return stmts(c, s->body);
        if (c->e->kind == DT_ED_ELSE) return stmts(c, s->els);
    }
    switch ((dt_kind)s->kind) {
    case DT_S_LET:
    case DT_S_VAR:
        line(c, "%s %s", s->kind == DT_S_LET ? "let" : "var", s->text);
        if (s->flags & DT_F_TYPED) kf_buf_printf(b, ": %s", tname(s->type));
        if (s->a[0]) around(c, " = ", s->a[0], "");
        kf_buf_puts(b, ";\n");
        break;
    case DT_S_ASSIGN:
        line(c, "%s", "");
        expr(c, s->a[0]);
        kf_buf_printf(b, " %s= ", dt_op_spelling[s->op]);
        expr(c, s->a[1]);
        kf_buf_puts(b, ";\n");
        break;
    case DT_S_IF:
        line(c, "%s", "");
        if_stmt(c, s);
        kf_buf_puts(b, "\n");
        break;
    case DT_S_FOR:
        for_stmt(c, s);
        break;
    case DT_S_WHILE:
        line(c, "var %s: i32 = 0;\n", s->aux);
        line(c, "while ");
        expr(c, s->a[0]);
        kf_buf_printf(b, " && %s < %lld {\n", s->aux, (long long)s->n);
        c->indent++;
        line(c, "%s += 1;\n", s->aux);
        stmts(c, s->body);
        c->indent--;
        line(c, "}\n");
        break;
    case DT_S_BREAK: line(c, "break;\n"); break;
    case DT_S_CONTINUE: line(c, "continue;\n"); break;
    case DT_S_RETURN:
        line(c, "return");
        if (s->a[0]) around(c, " ", s->a[0], "");
        kf_buf_puts(b, ";\n");
        break;
    case DT_S_ARRAY:
        line(c, "var %s: %s[%lld];\n", s->text, tname(s->type), (long long)s->n);
        line(c, "for %s in 0 .. %lld { %s[%s] = ", s->aux, (long long)s->n, s->text, s->aux);
        expr(c, s->a[0]);
        kf_buf_puts(b, "; }\n");
        break;
    case DT_S_SHARED:   /* n = 0: the dynamic array */
        if (s->n) line(c, "shared %s: %s[%lld];\n", s->text, tname(s->type), (long long)s->n);
        else line(c, "shared %s: %s[];\n", s->text, tname(s->type));
        break;
    case DT_S_EXCHANGE: {
        uint32_t nb = c->p->block[0] * c->p->block[1] * c->p->block[2];
        if (s->flags & DT_F_LEAD) line(c, "barrier();\n");
        const char *tb = s->a[1] ? s->a[1]->text : "dt_tb";
        if (s->op) {   /* async: the copies, then the group closed and waited for */
            line(c, "for %s in %s .. %lld step %u { ", s->aux, tb, (long long)s->n, nb);
            expr(c, s->a[0]);
            kf_buf_puts(b, "; }\n");
            line(c, "cp_async_commit();\n");
            line(c, "cp_async_wait(0);\n");
        } else {
            line(c, "for %s in %s .. %lld step %u { %s[%s] = ", s->aux, tb, (long long)s->n, nb, s->text, s->aux);
            expr(c, s->a[0]);
            kf_buf_puts(b, "; }\n");
        }
        line(c, "barrier();\n");
        break;
    }
    case DT_S_BARRIER: line(c, "barrier();\n"); break;
    case DT_S_BUILTIN: line(c, "%s;\n", s->text); break;
    case DT_S_CALL:
        line(c, "%s", "");
        expr(c, s->a[0]);
        kf_buf_puts(b, ";\n");
        break;
    default:
        kf_unreachable("expression printed as a statement");
    }
}

static void stmts(pr *c, const dt_node *s)
{
    for (; s; s = s->next) stmt(c, s);
}

/* ---- declarations ---------------------------------------------------------------- */
/* A constant's value (bits of its type) as .kf text. */
static void value_text(char *out, size_t len, kf_type t, int64_t bits)
{
    kf_scalar s = (kf_scalar)t.scalar;
    char cls = kf_scalar_class[s];
    if (s == KF_S_BOOL) {
        snprintf(out, len, "%s", bits ? "true" : "false");
    } else if (cls == 'i') {
        unsigned nb = 8u * kf_scalar_bytes[s];
        int64_t v = nb == 64 ? bits : (int64_t)((uint64_t)bits << (64 - nb)) >> (64 - nb);
        snprintf(out, len, "%lld", (long long)v);
    } else if (cls == 'u') {
        snprintf(out, len, "%llu", (unsigned long long)bits);
    } else {
        double d = kf_bits_to_double(s, (uint64_t)bits);
        snprintf(out, len, "%.17g", d);
        if (!strpbrk(out, ".en")) snprintf(out + strlen(out), len - strlen(out), ".0");
    }
}

static void param_decl(pr *c, const char *name, kf_type t)
{
    if (t.kind == KF_TK_BUFFER) {
        kf_type e = kf_type_elem(t);
        kf_buf_printf(c->b, "%s: &%s[%s]", name, t.flags & KF_TF_MUT ? "mut " : "", tname(e));
    } else {
        kf_buf_printf(c->b, "%s: %s", name, tname(t));
    }
}

static void fn_decl(pr *c, const dt_fn *f)
{
    kf_buf_printf(c->b, "fn %s%s(", f->name, c->tag);
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (f->params[i].shared_len) kf_buf_printf(c->b, "%s: shared %s[]", f->params[i].name, tname(f->params[i].type));
        else param_decl(c, f->params[i].name, f->params[i].type);
        if (i + 1 < f->nparams) kf_buf_puts(c->b, ", ");
    }
    kf_buf_puts(c->b, ")");
    if (f->ret.kind != KF_TK_VOID) kf_buf_printf(c->b, " -> %s", tname(f->ret));
    braced(c, f->body);
    kf_buf_puts(c->b, "\n");
}

static void schedule_part(pr *c, const char *what, dt_node *const ex[3])
{
    int n = ex[2] ? 3 : ex[1] ? 2 : 1;
    kf_buf_printf(c->b, "%s = %s", what, n > 1 ? "(" : "");
    for (int d = 0; d < n; d++) {
        expr(c, ex[d]);
        if (d + 1 < n) kf_buf_puts(c->b, ", ");
    }
    if (n > 1) kf_buf_puts(c->b, ")");
}

/* Bit per integer scalar whose nz_T helper some divisor uses. */
static uint32_t helpers_in(const dt_node *n)
{
    uint32_t h = 0;
    for (; n; n = n->next) {
        if (n->kind == DT_E_GUARD && n->op == DT_G_NZ_FN) h |= 1u << n->type.scalar;
        for (int i = 0; i < 3; i++) h |= helpers_in(n->a[i]);
        h |= helpers_in(n->body) | helpers_in(n->els);
    }
    return h;
}

static bool dropped(const dt_edit *e, dt_edit_kind k, uint32_t i) { return e && e->kind == k && e->arg == i; }

void dt_print(kf_buf *b, const kf_dt_prog *p, const char *tag, const dt_edit *e)
{
    pr c = {b, p, tag, e, 0};
    char v[64];
    kf_buf_printf(b, "// kforge-difftest program %llu of seed %llu\n", (unsigned long long)p->index,
                  (unsigned long long)p->seed);
    for (uint32_t i = 0; i < p->nconsts; i++) {
        if (dropped(e, DT_ED_DROPCONST, i)) continue;
        value_text(v, sizeof v, p->consts[i].type, p->consts[i].decl);
        kf_buf_printf(b, "const %s%s: %s = %s;\n", p->consts[i].name, tag, tname(p->consts[i].type), v);
    }
    uint32_t helpers = helpers_in(p->body);
    for (uint32_t i = 0; i < p->nfns; i++) helpers |= helpers_in(p->fns[i].body);
    for (int s = KF_S_I8; s <= KF_S_U64; s++)
        if (helpers & (1u << s))
            kf_buf_printf(b, "fn nz_%s%s(x: %s) -> %s { return select(x == 0, 1, x); }\n", kf_scalar_names[s], tag,
                          kf_scalar_names[s], kf_scalar_names[s]);
    for (uint32_t i = 0; i < p->nfns; i++)
        if (!dropped(e, DT_ED_DROPFN, i)) fn_decl(&c, &p->fns[i]);
    kf_buf_puts(b, "@schedule(");
    schedule_part(&c, "block", p->block_expr);
    if (p->grid_expr[0]) {
        kf_buf_puts(b, ", ");
        schedule_part(&c, "grid", p->grid_expr);
    }
    if (p->shared_expr) {
        kf_buf_puts(b, ", shared = ");
        expr(&c, p->shared_expr);
    }
    if (p->min_blocks || p->min_blocks_zero) kf_buf_printf(b, ", min_blocks = %u", p->min_blocks);
    kf_buf_printf(b, ")\nkernel %s%s(", p->kname, tag);
    for (uint32_t i = 0; i < p->nparams; i++) {
        param_decl(&c, p->params[i].name, p->params[i].type);
        if (i + 1 < p->nparams) kf_buf_puts(b, ", ");
    }
    kf_buf_puts(b, ")");
    braced(&c, p->body);
    kf_buf_puts(b, "\n");
}

uint32_t dt_print_defines(const kf_dt_prog *p, const char *tag, const dt_edit *e, kf_arena *a, kf_define *defs,
                          uint32_t max)
{
    uint32_t n = 0;
    char v[64];
    for (uint32_t i = 0; i < p->nconsts && n < max; i++) {
        if (!p->consts[i].overridden || dropped(e, DT_ED_DROPCONST, i)) continue;
        value_text(v, sizeof v, p->consts[i].type, p->consts[i].value);
        defs[n].name = kf_arena_printf(a, "%s%s", p->consts[i].name, tag);
        defs[n++].value = kf_arena_strdup(a, v);
    }
    return n;
}

const char *dt_kernel_name(const kf_dt_prog *p, const char *tag, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", p->kname, tag);
    return buf;
}
