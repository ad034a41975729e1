/* A tiny builder of typed ASTs (as sema leaves them) for the lowering tests,
 * so lowering can be tested on exact inputs independent of the front end. */
#ifndef KF_TEST_LOWER_AST_H
#define KF_TEST_LOWER_AST_H

#include "../ir/passes.h"

static kf_arena *T_arena;
static uint32_t T_line = 1;

static inline kf_node *t_node(kf_node_kind k, kf_type t)
{
    kf_node *n = kf_ast_new(T_arena, k, (kf_loc){"t.kf", T_line, 5});
    n->type = t;
    return n;
}

static inline kf_type T_(kf_scalar s) { return kf_type_scalar(s); }
static inline kf_type TV(kf_scalar s, unsigned n) { return kf_type_vector(s, n); }
static inline kf_type TB(kf_scalar s, unsigned lanes, bool mut)
{
    return (kf_type){KF_TK_BUFFER, (uint8_t)s, (uint8_t)lanes, mut ? KF_TF_MUT : 0, 0};
}
static inline kf_type TA(kf_scalar s, uint32_t len, bool shared)
{
    return (kf_type){KF_TK_ARRAY, (uint8_t)s, 1, shared ? KF_TF_SHARED : 0, len};
}

/* Lists: NULL-terminated varargs chained through next. */
#include <stdarg.h>
static inline kf_node *t_list(kf_node *first, ...)
{
    va_list ap;
    va_start(ap, first);
    kf_node *head = first, *tail = first;
    for (kf_node *n; tail && (n = va_arg(ap, kf_node *));) tail = tail->next = n;
    va_end(ap);
    return head;
}
#define LIST(...) t_list(__VA_ARGS__, (kf_node *)NULL)

static inline kf_node *t_const(kf_type t, uint64_t u)
{
    kf_node *n = t_node(KF_N_INT, t);
    n->ival = u;
    n->is_const = true;
    n->cval.u = u;
    return n;
}
static inline kf_node *t_fconst(kf_type t, double f)
{
    kf_node *n = t_node(KF_N_FLOAT, t);
    n->fval = f;
    n->is_const = true;
    n->cval.f = f;
    return n;
}
static inline kf_node *t_decl(kf_node_kind k, const char *name, kf_type t, kf_node *init)
{
    kf_node *n = t_node(k, t);
    n->name = name;
    n->b = init;
    return n;
}
static inline kf_node *t_ref(kf_node *decl)
{
    kf_node *n = t_node(KF_N_NAME, decl->type);
    n->name = decl->name;
    n->sym = decl;
    return n;
}
static inline kf_node *t_bin(kf_op op, kf_type t, kf_node *a, kf_node *b)
{
    kf_node *n = t_node(KF_N_BINARY, t);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}
static inline kf_node *t_un(kf_op op, kf_node *a)
{
    kf_node *n = t_node(KF_N_UNARY, a->type);
    n->op = op;
    n->a = a;
    return n;
}
static inline kf_node *t_index(kf_node *base, kf_node *i)
{
    kf_node *n = t_node(KF_N_INDEX, kf_type_elem(base->type));
    n->a = base;
    n->b = i;
    return n;
}
static inline kf_node *t_member(kf_node *base, const char *m, kf_type t)
{
    kf_node *n = t_node(KF_N_MEMBER, t);
    n->a = base;
    n->name = m;
    return n;
}
static inline kf_node *t_builtin(kf_builtin b, kf_type t)
{
    kf_node *n = t_node(KF_N_NAME, t);
    n->name = kf_builtin_names[b];
    n->op = b;
    return n;
}
static inline kf_node *t_geo(kf_builtin b, const char *m)
{
    return t_member(t_builtin(b, TV(KF_S_U32, 3)), m, T_(KF_S_U32));
}
static inline kf_node *t_call(kf_builtin b, kf_type t, kf_node *args)
{
    kf_node *n = t_node(KF_N_CALL, t);
    n->a = t_builtin(b, kf_type_void());
    n->op = b;
    n->b = args;
    return n;
}
static inline kf_node *t_fcall(kf_node *fn, kf_node *args)
{
    kf_node *n = t_node(KF_N_CALL, fn->type);
    n->a = t_ref(fn);
    n->sym = fn;
    n->b = args;
    return n;
}
static inline kf_node *t_cast(kf_node *e, kf_type t)
{
    kf_node *n = t_node(KF_N_CAST, t);
    n->a = e;
    n->b = t_node(t.kind == KF_TK_BUFFER ? KF_N_TYPE_BUF : KF_N_TYPE, t);
    return n;
}
static inline kf_node *t_assign(kf_op op, kf_node *lv, kf_node *e)
{
    kf_node *n = t_node(KF_N_ASSIGN, kf_type_void());
    n->op = op;
    n->a = lv;
    n->b = e;
    return n;
}
static inline kf_node *t_block(kf_node *stmts)
{
    kf_node *n = t_node(KF_N_BLOCK, kf_type_void());
    n->a = stmts;
    return n;
}
static inline kf_node *t_if(kf_node *c, kf_node *then, kf_node *els)
{
    kf_node *n = t_node(KF_N_IF, kf_type_void());
    n->a = c;
    n->b = then;
    n->c = els;
    return n;
}
static inline kf_node *t_for(const char *v, kf_type t, bool unroll, kf_node *a, kf_node *b, kf_node *step)
{
    kf_node *n = t_node(KF_N_FOR, t);
    n->name = v;
    n->op = unroll;
    n->a = a;
    n->b = b;
    n->c = step;
    return n;
}
static inline kf_node *t_while(kf_node *c, kf_node *body)
{
    kf_node *n = t_node(KF_N_WHILE, kf_type_void());
    n->a = c;
    n->b = body;
    return n;
}
static inline kf_node *t_stmt(kf_node_kind k, kf_node *a)
{
    kf_node *n = t_node(k, kf_type_void());
    n->a = a;
    return n;
}
static inline kf_node *t_param(const char *name, kf_type t)
{
    return t_decl(KF_N_PARAM, name, t, NULL);
}
static inline kf_node *t_fn(const char *name, kf_type ret, kf_node *params, kf_node *body)
{
    kf_node *n = t_node(KF_N_FN, ret);
    n->name = name;
    n->a = params;
    n->c = body;
    return n;
}
static inline kf_node *t_kernel(const kf_node *sched_block, kf_node *grid, const char *name, kf_node *params, kf_node *body)
{
    kf_node *k = t_node(KF_N_KERNEL, kf_type_void());
    k->name = name;
    k->a = params;
    k->c = body;
    if (sched_block || grid) {
        kf_node *at = t_node(KF_N_ATTR, kf_type_void());
        at->name = "schedule";
        kf_node *nb = NULL, *ng = NULL;
        if (sched_block) {
            nb = t_node(KF_N_NAMEDARG, kf_type_void());
            nb->name = "block";
            nb->a = (kf_node *)sched_block;
        }
        if (grid) {
            ng = t_node(KF_N_NAMEDARG, kf_type_void());
            ng->name = "grid";
            ng->a = grid;
        }
        at->a = nb ? nb : ng;
        if (nb) nb->next = ng;
        k->d = at;
    }
    return k;
}
static inline kf_node *t_module(kf_node *decls)
{
    kf_node *m = t_node(KF_N_MODULE, kf_type_void());
    m->a = decls;
    return m;
}

#endif
