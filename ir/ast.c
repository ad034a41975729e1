/* AST tables, constructors and the debug dump (ast.h). */
#include "ast.h"

#include <string.h>

const char *const kf_op_spelling[KF_OP_COUNT] = {
    [KF_OP_NONE] = "?",
#define X(e, s) [e] = s,
    KF_OPERATORS(X)
#undef X
};

const char *const kf_builtin_names[KF_BI_COUNT] = {
    [KF_BI_NONE] = "?",
#define X(e, n, k, a) [e] = n,
    KF_BUILTINS(X)
#undef X
};
const char kf_builtin_kind[KF_BI_COUNT] = {
#define X(e, n, k, a) [e] = k,
    KF_BUILTINS(X)
#undef X
};
const uint8_t kf_builtin_nargs[KF_BI_COUNT] = {
#define X(e, n, k, a) [e] = a,
    KF_BUILTINS(X)
#undef X
};

const char *const kf_node_kind_names[KF_N_COUNT] = {
#define X(e) [e] = &(#e)[5],   /* drop the "KF_N_" prefix */
    KF_NODE_KINDS(X)
#undef X
};

kf_builtin kf_builtin_lookup(const char *name)
{
    for (int i = 1; i < KF_BI_COUNT; i++)
        if (strcmp(kf_builtin_names[i], name) == 0) return (kf_builtin)i;
    return KF_BI_NONE;
}

kf_node *kf_ast_new(kf_arena *a, kf_node_kind kind, kf_loc loc)
{
    kf_node *n = kf_arena_alloc(a, sizeof *n);
    if (n) {
        n->kind = (uint16_t)kind;
        n->loc = loc;
    }
    return n;
}

kf_node *kf_ast_node(kf_arena *a, kf_node_kind kind, kf_loc loc, kf_node *ca, kf_node *cb, kf_node *cc)
{
    kf_node *n = kf_ast_new(a, kind, loc);
    if (n) {
        n->a = ca;
        n->b = cb;
        n->c = cc;
    }
    return n;
}

kf_node *kf_ast_append(kf_node *list, kf_node *item)
{
    if (!list) return item;
    kf_node *p = list;
    while (p->next) p = p->next;
    p->next = item;
    return list;
}

void kf_ast_dump(kf_buf *out, const kf_node *n, int indent)
{
    for (; n; n = n->next) {
        char tb[48];
        kf_buf_printf(out, "%*s%s", indent * 2, "", kf_node_kind_names[n->kind]);
        if (n->name) kf_buf_printf(out, " %s", n->name);
        if (n->kind == KF_N_BINARY || n->kind == KF_N_UNARY || n->kind == KF_N_ASSIGN)
            kf_buf_printf(out, " '%s'", kf_op_spelling[n->op < KF_OP_COUNT ? n->op : 0]);
        if (n->kind == KF_N_INT || n->kind == KF_N_BOOL) kf_buf_printf(out, " %llu", (unsigned long long)n->ival);
        if (n->kind == KF_N_FLOAT) kf_buf_printf(out, " %.17g", n->fval);
        if (n->kind == KF_N_TYPE) kf_buf_printf(out, " %s", kf_type_str(n->type, tb, sizeof tb));
        if ((n->kind == KF_N_TYPE_BUF || n->kind == KF_N_FOR) && n->op) kf_buf_puts(out, n->kind == KF_N_FOR ? " unroll" : " mut");
        kf_buf_printf(out, " @%u:%u\n", n->loc.line, n->loc.col);
        kf_ast_dump(out, n->a, indent + 1);
        kf_ast_dump(out, n->b, indent + 1);
        kf_ast_dump(out, n->c, indent + 1);
        kf_ast_dump(out, n->d, indent + 1);
    }
}
