/* Shrinking a failing program, by delta debugging over its tree: the
 * candidates are single edits (a statement deleted, a compound statement
 * replaced by its body or its else part, an expression replaced by 0, by 1
 * or by an operand of the same type, a fn dropped), the ones that remove
 * the most first. The caller's oracle (driver.c) checks candidates in
 * chunks: each must still compile and run on the interpreter without a
 * fault (so it stays free of undefined behaviour: what construction
 * guaranteed, the interpreter re-checks), and must still fail the same
 * way; the first one that does is applied and the search starts again,
 * until no edit keeps the failure or the time is up.
 *
 * The edits never touch what keeps a program safe where the interpreter
 * cannot see it: a thread's own output slots (E_SLOT, FIXED), and the
 * guards (KEEP) that keep NaN payloads, -0 and approximate values away from
 * exact comparisons; an edit can only replace a guard by a constant. */
#include "dt_impl.h"

#include <string.h>
#include <time.h>

/* ---- walking the tree ---------------------------------------------------------- */
typedef struct {
    dt_edit *out;
    size_t n, max;
    uint32_t *gain;
} collect;

static uint32_t tree_size(const dt_node *n)
{
    if (!n) return 0;
    uint32_t s = 1;
    for (int i = 0; i < 3; i++) s += tree_size(n->a[i]);
    if (n->kind == DT_E_CALL || n->kind == DT_E_CTOR)   /* the other arguments */
        for (const dt_node *x = n->a[0] ? n->a[0]->next : NULL; x; x = x->next) s += tree_size(x);
    for (const dt_node *b = n->body; b; b = b->next) s += tree_size(b);
    for (const dt_node *b = n->els; b; b = b->next) s += tree_size(b);
    return s;
}

static void add_edit(collect *c, uint32_t id, dt_edit_kind k, uint8_t arg, uint32_t gain)
{
    if (c->n < c->max) {
        c->out[c->n] = (dt_edit){id, (uint8_t)k, arg};
        c->gain[c->n++] = gain;
    }
}

static bool editable_type(kf_type t)
{
    return (t.kind == KF_TK_SCALAR || t.kind == KF_TK_VECTOR) && !kf_type_is_untyped(t);
}

static bool is_const_lit(const dt_node *n, const char *v)
{
    return n->kind == DT_E_LIT && strcmp(n->text, v) == 0;
}

static void walk_expr(collect *c, const dt_node *n)
{
    if (!n) return;
    if (!(n->flags & DT_F_FIXED) && editable_type(n->type)) {
        uint32_t sz = tree_size(n);
        bool bl = n->type.scalar == KF_S_BOOL;
        if (!is_const_lit(n, bl ? "false" : "0") && sz > 1) add_edit(c, n->id, DT_ED_ZERO, 0, sz);
        if (!is_const_lit(n, bl ? "true" : "1") && sz > 1) add_edit(c, n->id, DT_ED_ONE, 0, sz);
        if (n->kind == DT_E_LIT && !is_const_lit(n, "0") && !is_const_lit(n, "false")) add_edit(c, n->id, DT_ED_ZERO, 0, 1);
        for (int i = 0; !(n->flags & DT_F_KEEP) && i < 4; i++) {
            const dt_node *o = dt_operand(n, i);
            if (o && o->type.scalar == n->type.scalar && o->type.lanes == n->type.lanes && o->type.kind == n->type.kind &&
                !(o->flags & DT_F_UNTYPED))
                add_edit(c, n->id, DT_ED_HOIST, (uint8_t)i, sz - tree_size(o));
        }
    }
    bool list = n->kind == DT_E_CALL || n->kind == DT_E_CTOR;
    for (int i = 0; i < 3; i++) walk_expr(c, n->a[i]);
    if (list)
        for (const dt_node *x = n->a[0] ? n->a[0]->next : NULL; x; x = x->next) walk_expr(c, x);
}

static void walk_stmts(collect *c, const dt_node *s)
{
    for (; s; s = s->next) {
        uint32_t sz = tree_size(s);
        if (!(s->flags & DT_F_FIXED)) add_edit(c, s->id, DT_ED_DELETE, 0, sz);
        if ((s->kind == DT_S_IF || s->kind == DT_S_FOR || s->kind == DT_S_WHILE) && s->body) {
            uint32_t body = 0;
            for (const dt_node *b = s->body; b; b = b->next) body += tree_size(b);
            add_edit(c, s->id, DT_ED_UNWRAP, 0, sz > body ? sz - body : 1);
        }
        if (s->kind == DT_S_IF && s->els) add_edit(c, s->id, DT_ED_ELSE, 0, sz);
        for (int i = 0; i < 3; i++)   /* an assignment's target stays one: only its index is edited */
            walk_expr(c, s->kind == DT_S_ASSIGN && i == 0 ? s->a[0]->a[0] : s->a[i]);
        walk_stmts(c, s->body);
        walk_stmts(c, s->els);
    }
}

size_t dt_edits(const kf_dt_prog *p, dt_edit *out, size_t max)
{
    uint32_t *gain = malloc(max * sizeof *gain);
    if (!gain) return 0;
    collect c = {out, 0, max, gain};
    for (uint32_t i = 0; i < p->nconsts; i++) add_edit(&c, 0, DT_ED_DROPCONST, (uint8_t)i, 1);
    for (uint32_t i = 0; i < p->nfns; i++) {
        uint32_t sz = 1;
        for (const dt_node *b = p->fns[i].body; b; b = b->next) sz += tree_size(b);
        add_edit(&c, 0, DT_ED_DROPFN, (uint8_t)i, sz);
        walk_stmts(&c, p->fns[i].body);
    }
    walk_stmts(&c, p->body);
    for (size_t i = 1; i < c.n; i++) {   /* stable insertion sort, biggest gain first */
        dt_edit e = out[i];
        uint32_t g = gain[i];
        size_t j = i;
        for (; j > 0 && gain[j - 1] < g; j--) {
            out[j] = out[j - 1];
            gain[j] = gain[j - 1];
        }
        out[j] = e;
        gain[j] = g;
    }
    free(gain);
    return c.n;
}

uint32_t dt_size(const kf_dt_prog *p)
{
    uint32_t s = 0;
    for (uint32_t i = 0; i < p->nfns; i++)
        for (const dt_node *b = p->fns[i].body; b; b = b->next) s += tree_size(b);
    for (const dt_node *b = p->body; b; b = b->next) s += tree_size(b);
    return s;
}

/* ---- applying an edit for good ---------------------------------------------------- */
static dt_node **find_in_stmts(dt_node **link, uint32_t id, dt_node **found);

/* The node with `id` under expression *link; its link in *found_link. */
static dt_node **find_in_expr(dt_node **link, uint32_t id)
{
    dt_node *n = *link;
    if (!n) return NULL;
    if (n->id == id) return link;
    for (int i = 0; i < 3; i++) {
        dt_node **r = find_in_expr(&n->a[i], id);
        if (r) return r;
    }
    if (n->kind == DT_E_CALL || n->kind == DT_E_CTOR)
        for (dt_node **x = n->a[0] ? &n->a[0]->next : NULL; x && *x; x = &(*x)->next) {
            dt_node **r = find_in_expr(x, id);
            if (r) return r;
        }
    return NULL;
}

static dt_node **find_in_stmts(dt_node **link, uint32_t id, dt_node **found)
{
    for (; *link; link = &(*link)->next) {
        dt_node *s = *link;
        if (s->id == id) return link;
        for (int i = 0; i < 3; i++) {
            dt_node **r = find_in_expr(&s->a[i], id);
            if (r) return r;
        }
        dt_node **r = find_in_stmts(&s->body, id, found);
        if (!r) r = find_in_stmts(&s->els, id, found);
        if (r) return r;
    }
    return NULL;
}

/* Replaces the statement at *link by the list `with` (may be NULL). */
static void splice(dt_node **link, dt_node *with)
{
    dt_node *next = (*link)->next;
    if (!with) {
        *link = next;
        return;
    }
    *link = with;
    while (with->next) with = with->next;
    with->next = next;
}

static void make_constant(dt_node *n, bool one)
{
    dt_node *next = n->next;
    uint32_t id = n->id;
    kf_type t = n->type;
    memset(n, 0, sizeof *n);
    n->kind = DT_E_LIT;
    n->id = id;
    n->type = t;
    n->next = next;
    n->text = t.scalar == KF_S_BOOL ? (one ? "true" : "false") : one ? "1" : "0";
    if (t.scalar == KF_S_BOOL) n->flags = DT_F_UNTYPED;
}

void dt_apply(kf_dt_prog *p, const dt_edit *e)
{
    if (e->kind == DT_ED_DROPFN) {
        memmove(&p->fns[e->arg], &p->fns[e->arg + 1], (p->nfns - e->arg - 1) * sizeof p->fns[0]);
        p->nfns--;
        return;
    }
    if (e->kind == DT_ED_DROPCONST) {
        memmove(&p->consts[e->arg], &p->consts[e->arg + 1], (p->nconsts - e->arg - 1) * sizeof p->consts[0]);
        p->nconsts--;
        return;
    }
    dt_node **link = NULL, *unused = NULL;
    for (uint32_t i = 0; i < p->nfns && !link; i++) link = find_in_stmts(&p->fns[i].body, e->id, &unused);
    if (!link) link = find_in_stmts(&p->body, e->id, &unused);
    if (!link) return;
    dt_node *n = *link;
    switch ((dt_edit_kind)e->kind) {
    case DT_ED_DELETE: splice(link, NULL); break;
    case DT_ED_UNWRAP: splice(link, n->body); break;
    case DT_ED_ELSE: splice(link, n->els); break;
    case DT_ED_ZERO: make_constant(n, false); break;
    case DT_ED_ONE: make_constant(n, true); break;
    case DT_ED_HOIST: {
        dt_node *next = n->next;
        *n = *dt_operand(n, e->arg);
        n->next = next;
        break;
    }
    default: break;
    }
}
