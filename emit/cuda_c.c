/* The CUDA-C emitter: core IR to self-contained CUDA-C that NVRTC compiles
 * (DESIGN.md section 1). One `extern "C" __global__` entry per kernel, with
 * the launch ABI of the notes: one parameter per .kf parameter in order,
 * buffers as `const T* __restrict__` (read-only) or `T* __restrict__`,
 * scalars and vectors by value (vectors as 16-byte-or-size aligned structs).
 *
 * A kernel is emitted in passes over its flat instruction array:
 *   1. check   markers nest and operands are in range; find loop latches;
 *   2. reach   mark code after break/continue/return (and after loops that
 *              never break) unreachable, so no "unreachable" warning and no
 *              dead statement reaches the text;
 *   3. scopes  give every instruction the C block it will sit in;
 *   4. live    drop pure instructions whose result nobody reads (to a fixed
 *              point), so no "set but never used" warning either;
 *   5. decide  per value: an inline literal, the parameter itself, declared
 *              where it is first assigned (when every other assignment and
 *              use follows in that block or nested ones), or declared at the
 *              top of the kernel; then the readability folds, none of which
 *              moves anything with an effect: vector constructor chains
 *              become one `T{{a, b, c, d}}`, a temporary read once by the
 *              next statement becomes part of its expression (never into a
 *              ?: arm or the right of && ||, which C may skip), per-lane
 *              vector results fold lane by lane, and an else block holding
 *              only an if becomes `else if`;
 *   6. names   source names kept, sanitised (C++ keywords, our kf_ prefix)
 *              and made unique (`acc`, `acc_2`); temporaries are `t<id>`;
 *   7. write   one statement per line, structured control flow as if/else
 *              and `for (;;)`; a loop with a LATCH is written as
 *              `for (;;) { { body } kf_latch_N: ; latch }` and `continue`
 *              in its body becomes `goto kf_latch_N;` (the body block keeps
 *              the goto from jumping over any initialised declaration).
 *
 * With -g (lineinfo) a `#line N "file.kf"` precedes every statement whose
 * text line would otherwise map to another .kf line. The linemap records
 * the .kf location of every emitted line either way. */
#include "cuda_c.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { VK_NONE, VK_INLINE, VK_PARAM, VK_AT_DEF, VK_TOP, VK_FOLD, VK_CHAIN, VK_LANEFOLD };
enum { ELIF_ELSE = 1, ELIF_IF = 2, ELIF_END = 4 };

typedef struct {
    uint32_t ndefs, nuses;   /* live definitions and uses (self-uses excluded) */
    uint32_t def;            /* index of the first live definition */
    uint32_t use;            /* index of the last live use */
    uint8_t kind;            /* VK_* */
    const char *name;        /* C name, or the inline expression */
} vinfo;

typedef struct {
    const char **slot;
    uint32_t *next;          /* per slot: the next suffix to try after it */
    size_t cap;
} name_set;

typedef KF_VEC(kf_loc) loc_vec;

static const uint8_t op_has_dst[KF_IR_OP_COUNT] = {
#define X(e, n, na, d) [e] = d,
    KF_IR_OPS(X)
#undef X
};

/* Per-kernel writer state. Arrays live in the scratch arena. */
typedef struct {
    kf_cu *c;
    const kf_ir_kernel *k;
    kf_buf *out;
    loc_vec lines;
    vinfo *v;
    bool *dead;              /* [nins] unreachable */
    bool *drop;              /* [nins] pure and its result is never read */
    uint32_t *scope;         /* [nins] C block the instruction sits in */
    uint32_t *sparent;       /* [nscopes] enclosing block */
    uint32_t nscopes;
    uint32_t *loop_of;       /* [nins] BREAK/CONTINUE/LATCH/ENDLOOP: its LOOP */
    uint32_t *latch_of;      /* [nins] LOOP: index of its LATCH, or 0 */
    uint32_t *label;         /* [nins] LOOP: label number, 1-based */
    bool *cont_live;         /* [nins] LOOP: a reachable continue targets it */
    bool *brk_live;          /* [nins] LOOP: a reachable break leaves it */
    uint32_t *close_of;      /* [nins] IF and ELSE: index of their ENDIF */
    uint8_t *elif;           /* [nins] else-if collapsing: ELIF_* bits */
    const char **pnames;     /* [nparams] */
    const char **anames;     /* [narrays] */
    name_set names;
    int depth;
    uint32_t mapped;         /* .kf line the next text line maps to (#line) */
    const char *mapped_file;
} kw;

/* ---- small utilities --------------------------------------------------- */

static void *scratch_calloc(kw *w, size_t n, size_t size)
{
    void *p = kf_arena_calloc(&w->c->scratch, n ? n : 1, size);
    if (!p) w->c->failed = true;
    return p;
}

static void push_loc(kw *w, kf_loc loc)
{
    if (!KF_VEC_PUSH(&w->lines, loc)) w->c->failed = true;
}

static void write_line_directive(kw *w, kf_loc loc)
{
    kf_buf_printf(w->out, "#line %u \"", loc.line);
    for (const char *p = loc.file; *p; p++) {
        if (*p == '"' || *p == '\\') kf_buf_append(w->out, "\\", 1);
        kf_buf_append(w->out, p, 1);
    }
    kf_buf_puts(w->out, "\"\n");
    push_loc(w, loc);
    w->mapped = loc.line;
    w->mapped_file = loc.file;
}

/* One line of kernel text at the current depth, attributed to loc. */
static void wline(kw *w, kf_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void wline(kw *w, kf_loc loc, const char *fmt, ...)
{
    bool lineinfo = w->c->o->lineinfo && loc.line && loc.file;
    if (lineinfo && (loc.line != w->mapped || !w->mapped_file || strcmp(loc.file, w->mapped_file) != 0))
        write_line_directive(w, loc);
    static const char spaces[] = "                                                                ";
    for (int d = w->depth; d > 0; d -= 16) kf_buf_append(w->out, spaces, 4u * (unsigned)(d > 16 ? 16 : d));
    va_list ap;
    va_start(ap, fmt);
    kf_buf_puts(w->out, kf_cu_vstr(w->c, fmt, ap));
    va_end(ap);
    kf_buf_append(w->out, "\n", 1);
    push_loc(w, loc);
    w->mapped++;
}

static const kf_loc no_loc = {0};

/* ---- names --------------------------------------------------------------- */

/* Identifiers a .kf name may not take in C++/CUDA: keywords, the builtin
 * variables, and every function the emitted code calls (a local of that
 * name would hide it). Sorted for bsearch. */
static const char *const reserved[] = {
    "INFINITY", "NAN", "NULL", "alignas", "alignof", "and", "and_eq", "asm", "assert", "atomicAdd",
    "atomicCAS", "atomicExch", "atomicMax", "atomicMin", "auto", "bitand", "bitor", "blockDim",
    "blockIdx", "bool", "break", "case", "catch", "ceil", "ceilf", "char", "char16_t", "char32_t",
    "char8_t", "class", "co_await", "co_return", "co_yield", "compl", "concept", "const",
    "const_cast", "consteval", "constexpr", "constinit", "continue", "cos", "decltype", "default",
    "delete", "do", "double", "dynamic_cast", "else", "enum", "exp", "exp2", "explicit", "export",
    "extern", "fabs", "fabsf", "false", "float", "floor", "floorf", "fmax", "fmaxf", "fmin", "fminf",
    "for", "free", "friend", "goto", "gridDim", "if", "inline", "int", "log", "log2", "long",
    "malloc", "max", "memcpy", "min", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "printf", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "round", "roundf", "rsqrt", "short", "signed", "sin",
    "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "tanh", "template",
    "this", "threadIdx", "thread_local", "throw", "true", "trunc", "truncf", "try", "typedef",
    "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "warpSize",
    "wchar_t", "while", "xor", "xor_eq",
};

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static bool is_reserved(const char *s)
{
    if (strncmp(s, "kf_", 3) == 0 || strncmp(s, "__", 2) == 0) return true;
    if (s[0] == '_' && isupper((unsigned char)s[1])) return true;
    return bsearch(&s, reserved, sizeof reserved / sizeof *reserved, sizeof *reserved, cmp_str) != NULL;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Adds s; returns true if it was not present. *at gets its slot. */
static bool names_add(name_set *ns, const char *s, size_t *at)
{
    size_t i = hash_str(s) & (ns->cap - 1);
    for (; ns->slot[i]; i = (i + 1) & (ns->cap - 1))
        if (strcmp(ns->slot[i], s) == 0) break;
    *at = i;
    if (ns->slot[i]) return false;
    ns->slot[i] = s;
    ns->next[i] = 2;
    return true;
}

/* A C identifier for source name `src`, unique within the kernel: the name
 * itself, else name_2, name_3, ... (the set remembers where to resume). */
static const char *unique_name(kw *w, const char *src)
{
    kf_cu *c = w->c;
    char clean[128];
    size_t n = 0;
    for (const char *p = src; *p && n < sizeof clean - 8; p++)
        clean[n++] = (isalnum((unsigned char)*p) || *p == '_') ? *p : '_';
    clean[n] = 0;
    if (n == 0 || isdigit((unsigned char)clean[0])) {
        memmove(clean + 1, clean, n + 1);
        clean[0] = 'v';
    }
    const char *base = is_reserved(clean) ? kf_cu_str(c, "%s_", clean) : kf_cu_str(c, "%s", clean);
    size_t at, at2;
    if (names_add(&w->names, base, &at)) return base;
    for (;;) {
        const char *s = kf_cu_str(c, "%s_%u", base, w->names.next[at]++);
        if (c->failed) return s;
        if (names_add(&w->names, s, &at2)) return s;
    }
}

/* ---- pass 1: structure check --------------------------------------------- */

static bool bad_ir(kw *w, uint32_t i, const char *what)
{
    kf_loc loc = i < w->k->nins ? w->k->ins[i].loc : w->k->loc;
    kf_diag_error(w->c->diags, loc, "internal error in CUDA-C emission of kernel '%s': %s (instruction %u)",
                  w->k->name, what, i);
    w->c->failed = true;
    return false;
}

static bool check_operands(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    if (in->op >= KF_IR_OP_COUNT) return bad_ir(w, i, "unknown opcode");
    if (in->dst >= w->k->nvals) return bad_ir(w, i, "destination out of range");
    for (int a = 0; a < 4; a++)
        if (in->a[a] >= w->k->nvals) return bad_ir(w, i, "operand out of range");
    bool arr = in->op == KF_IR_ALOAD || in->op == KF_IR_ASTORE;
    if (arr && in->imm >= w->k->narrays) return bad_ir(w, i, "array index out of range");
    if (in->op == KF_IR_PARAM && in->imm >= w->k->nparams) return bad_ir(w, i, "parameter index out of range");
    bool sub_ok = true;
    switch (in->op) {
    case KF_IR_BINOP: sub_ok = in->sub >= KF_OP_ADD && in->sub <= KF_OP_SHR; break;
    case KF_IR_CMP: sub_ok = in->sub >= KF_OP_EQ && in->sub <= KF_OP_GE; break;
    case KF_IR_UNOP: sub_ok = in->sub == KF_OP_NEG || in->sub == KF_OP_NOT || in->sub == KF_OP_BNOT; break;
    case KF_IR_MATH: case KF_IR_ATOMIC: case KF_IR_SHFL: case KF_IR_VOTE: sub_ok = in->sub < KF_BI_COUNT; break;
    case KF_IR_EXTRACT: case KF_IR_INSERT: sub_ok = in->imm < 16; break;
    default: break;
    }
    if (!sub_ok) return bad_ir(w, i, "operation code out of range");
    return true;
}

static bool check_types(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t v = 1; v < k->nvals; v++) {
        kf_type t = k->vals[v].type;
        if (t.scalar >= KF_S_COUNT || t.lanes > 16) return bad_ir(w, 0, "value of an impossible type");
    }
    for (uint32_t a = 0; a < k->narrays; a++)
        if (k->arrays[a].type.scalar >= KF_S_COUNT || k->arrays[a].type.lanes > 16)
            return bad_ir(w, 0, "array of an impossible type");
    for (uint32_t p = 0; p < k->nparams; p++)
        if (k->params[p].type.scalar >= KF_S_COUNT || k->params[p].type.lanes > 16)
            return bad_ir(w, 0, "parameter of an impossible type");
    return true;
}

static bool check_structure(kw *w)
{
    const kf_ir_kernel *k = w->k;
    if (!check_types(w)) return false;
    uint32_t *st = scratch_calloc(w, k->nins + 1, sizeof *st);
    uint32_t *loops = scratch_calloc(w, k->nins + 1, sizeof *loops);
    if (!st || !loops) return false;
    uint32_t sp = 0, lp = 0, nlabels = 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        if (!check_operands(w, i)) return false;
        uint16_t op = k->ins[i].op;
        uint16_t top = sp ? k->ins[st[sp - 1]].op : KF_IR_NOP;
        switch (op) {
        case KF_IR_IF: st[sp++] = i; break;
        case KF_IR_LOOP:
            st[sp++] = i;
            loops[lp++] = i;
            w->label[i] = ++nlabels;
            break;
        case KF_IR_ELSE:
            if (top != KF_IR_IF || w->close_of[st[sp - 1]]) return bad_ir(w, i, "else outside if");
            w->close_of[st[sp - 1]] = i;   /* until the ENDIF: the ELSE */
            break;
        case KF_IR_ENDIF:
            if (top != KF_IR_IF) return bad_ir(w, i, "endif outside if");
            sp--;
            if (w->close_of[st[sp]]) w->close_of[w->close_of[st[sp]]] = i;
            w->close_of[st[sp]] = i;
            break;
        case KF_IR_LATCH:
            if (top != KF_IR_LOOP || w->latch_of[st[sp - 1]]) return bad_ir(w, i, "latch outside loop");
            w->latch_of[st[sp - 1]] = i;
            w->loop_of[i] = st[sp - 1];
            break;
        case KF_IR_ENDLOOP:
            if (top != KF_IR_LOOP) return bad_ir(w, i, "endloop outside loop");
            w->loop_of[i] = st[--sp];
            lp--;
            break;
        case KF_IR_BREAK:
        case KF_IR_CONTINUE:
            if (!lp) return bad_ir(w, i, "break/continue outside loop");
            w->loop_of[i] = loops[lp - 1];
            break;
        default: break;
        }
    }
    if (sp) return bad_ir(w, k->nins, "unclosed if/loop");
    return true;
}

/* ---- pass 2: reachability -------------------------------------------------- */

typedef struct {
    uint32_t at;
    bool before;     /* the IF/LOOP itself is reachable */
    bool then_end;   /* IF: end of the then-branch reachable */
    bool has_else;
} reach_frame;

static void mark_reachable(kw *w)
{
    const kf_ir_kernel *k = w->k;
    reach_frame *st = scratch_calloc(w, k->nins + 1, sizeof *st);
    if (!st) return;
    uint32_t sp = 0;
    bool reach = true;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        w->dead[i] = !reach;
        switch (in->op) {
        case KF_IR_IF:
        case KF_IR_LOOP: st[sp++] = (reach_frame){i, reach, false, false}; break;
        case KF_IR_ELSE:
            st[sp - 1].then_end = reach;
            st[sp - 1].has_else = true;
            reach = st[sp - 1].before;
            w->dead[i] = !reach;
            break;
        case KF_IR_ENDIF: {
            reach_frame f = st[--sp];
            reach = f.has_else ? (f.then_end || reach) : (reach || f.before);
            w->dead[i] = !f.before;
            break;
        }
        case KF_IR_LATCH:
            w->dead[i] = !st[sp - 1].before;
            reach = reach || w->cont_live[st[sp - 1].at];
            break;
        case KF_IR_ENDLOOP: {
            reach_frame f = st[--sp];
            w->dead[i] = !f.before;
            reach = w->brk_live[f.at];
            break;
        }
        case KF_IR_BREAK:
        case KF_IR_CONTINUE:
            if (reach) (in->op == KF_IR_BREAK ? w->brk_live : w->cont_live)[w->loop_of[i]] = true;
            reach = false;
            break;
        case KF_IR_RET: reach = false; break;
        default: break;
        }
    }
}

/* ---- pass 3: scopes ---------------------------------------------------------- */

static uint32_t new_scope(kw *w, uint32_t parent)
{
    w->sparent[w->nscopes] = parent;
    return w->nscopes++;
}

static void assign_scopes(kw *w)
{
    const kf_ir_kernel *k = w->k;
    uint32_t *st = scratch_calloc(w, k->nins + 1, sizeof *st);
    if (!st) return;
    uint32_t sp = 0, cur = new_scope(w, 0);
    for (uint32_t i = 0; i < k->nins; i++) {
        switch (k->ins[i].op) {
        case KF_IR_IF:
            w->scope[i] = cur;
            st[sp++] = cur;
            cur = new_scope(w, cur);
            break;
        case KF_IR_ELSE:
            w->scope[i] = st[sp - 1];
            cur = new_scope(w, st[sp - 1]);
            break;
        case KF_IR_LOOP:
            w->scope[i] = cur;
            st[sp++] = cur;
            cur = new_scope(w, cur);
            if (w->latch_of[i]) cur = new_scope(w, cur);
            break;
        case KF_IR_LATCH:
            cur = w->sparent[cur];
            w->scope[i] = cur;
            break;
        case KF_IR_ENDIF:
        case KF_IR_ENDLOOP:
            cur = st[--sp];
            w->scope[i] = cur;
            break;
        default: w->scope[i] = cur; break;
        }
    }
}

static bool scope_encloses(const kw *w, uint32_t outer, uint32_t inner)
{
    for (;;) {
        if (inner == outer) return true;
        if (inner == 0) return false;
        inner = w->sparent[inner];
    }
}

/* ---- pass 4: liveness ------------------------------------------------------------ */

static bool has_effect(const kf_ir_ins *in)
{
    return !op_has_dst[in->op] || in->op == KF_IR_ATOMIC;
}

static void count_uses(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t v = 0; v < k->nvals; v++) w->v[v].ndefs = w->v[v].nuses = 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        for (int a = 0; a < kf_ir_op_nargs[in->op]; a++)
            if (in->a[a] && in->a[a] != in->dst) {
                w->v[in->a[a]].nuses++;
                w->v[in->a[a]].use = i;
            }
        if (in->dst && op_has_dst[in->op]) {
            if (!w->v[in->dst].ndefs++) w->v[in->dst].def = i;
        }
    }
}

/* Backward passes with use counts kept up to date: dropping a reader may
 * free its operands' writers, which come earlier (loops may need a second
 * pass). */
static void drop_unused(kw *w)
{
    const kf_ir_kernel *k = w->k;
    count_uses(w);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = k->nins; i-- > 0;) {
            const kf_ir_ins *in = &k->ins[i];
            if (w->dead[i] || w->drop[i] || has_effect(in)) continue;
            if (in->dst && w->v[in->dst].nuses != 0) continue;
            w->drop[i] = true;
            changed = true;
            for (int a = 0; a < kf_ir_op_nargs[in->op]; a++)
                if (in->a[a] && in->a[a] != in->dst) w->v[in->a[a]].nuses--;
        }
    }
    count_uses(w);
}

/* ---- pass 5: how each value is declared --------------------------------------------- */

/* A value may be declared at its first assignment when every other
 * assignment and use comes later, in that block or blocks nested in it. */
/* Marks bad[v] for every value touched before, or outside the block of,
 * its first assignment. One pass over the instructions. */
static void mark_scattered(const kw *w, bool *bad)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        for (int a = -1; a < kf_ir_op_nargs[in->op]; a++) {
            kf_val v = a < 0 ? (op_has_dst[in->op] ? in->dst : 0) : in->a[a];
            if (!v || bad[v]) continue;
            uint32_t d = w->v[v].def;
            if (i == d) continue;
            if (!w->v[v].ndefs || i < d || !scope_encloses(w, w->scope[d], w->scope[i])) bad[v] = true;
        }
    }
}

static void decide_kinds(kw *w)
{
    const kf_ir_kernel *k = w->k;
    bool *bad = scratch_calloc(w, k->nvals + 1, sizeof *bad);
    if (!bad) return;
    mark_scattered(w, bad);
    for (kf_val v = 1; v < k->nvals; v++) {
        vinfo *vi = &w->v[v];
        const kf_ir_value *val = &k->vals[v];
        vi->kind = VK_NONE;
        if (vi->nuses == 0) continue;
        const kf_ir_ins *d = vi->ndefs ? &k->ins[vi->def] : NULL;
        if (vi->ndefs == 0) vi->kind = VK_TOP;
        else if (vi->ndefs == 1 && d->op == KF_IR_PARAM) vi->kind = VK_PARAM;
        else if (vi->ndefs == 1 && !val->name &&
                 (d->op == KF_IR_SREG || (d->op == KF_IR_CONST && val->type.kind == KF_TK_SCALAR)))
            vi->kind = VK_INLINE;
        else vi->kind = bad[v] ? VK_TOP : VK_AT_DEF;
    }
}

/* A temporary read once, by the next statement written after it, is
 * folded into that statement's expression: `if (i < n)` rather than a
 * `bool t7 = i < n;` line. Only pure scalar instructions fold; statements
 * between the two must all be folded too (so nothing with an effect moves),
 * and the reader must be a single statement (not a per-lane vector op). */
static bool foldable_def(const kw *w, uint32_t d)
{
    const kf_ir_ins *in = &w->k->ins[d];
    switch (in->op) {
    case KF_IR_BINOP: case KF_IR_CMP: case KF_IR_UNOP: case KF_IR_CVT: case KF_IR_MATH:
    case KF_IR_SELECT: case KF_IR_EXTRACT: case KF_IR_BITCAST: case KF_IR_SHFL: case KF_IR_VOTE:
        return w->k->vals[in->dst].type.kind == KF_TK_SCALAR;
    case KF_IR_LOAD: case KF_IR_ALOAD: case KF_IR_SPLAT: case KF_IR_CONST:
        return true;   /* whole vectors too: the reader is one statement */
    default: return false;
    }
}

static bool single_statement(const kw *w, uint32_t u)
{
    const kf_ir_ins *in = &w->k->ins[u];
    if (in->op == KF_IR_SPLAT) return false;   /* would repeat its operand per lane */
    if (in->op == KF_IR_INSERT)                 /* one statement only when in place */
        return in->dst == in->a[0] && !(w->v[in->dst].kind == VK_AT_DEF && w->v[in->dst].def == u);
    if (op_has_dst[in->op] && in->dst && w->k->vals[in->dst].type.kind == KF_TK_VECTOR) return false;
    return true;
}

static bool written(const kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    if (w->dead[i] || w->drop[i]) return false;
    if (!op_has_dst[in->op] || !in->dst) return true;
    uint8_t kd = w->v[in->dst].kind;
    return kd != VK_INLINE && kd != VK_FOLD && kd != VK_CHAIN && kd != VK_LANEFOLD;
}

static bool reads_itself(const kf_ir_ins *in)
{
    for (int a = 0; a < kf_ir_op_nargs[in->op]; a++)
        if (in->a[a] == in->dst) return true;
    return false;
}

static uint32_t next_written(const kw *w, uint32_t i)
{
    while (i < w->k->nins && !written(w, i)) i++;
    return i;
}

/* `} else { if (c) { ... } }` with nothing else in the else block is
 * written `} else if (c) { ... }`. */
static void decide_else_ifs(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t e = 0; e < k->nins; e++) {
        if (k->ins[e].op != KF_IR_ELSE || w->dead[e]) continue;
        uint32_t j = next_written(w, e + 1);
        if (j >= k->nins || k->ins[j].op != KF_IR_IF) continue;
        uint32_t inner_end = w->close_of[j];
        if (next_written(w, inner_end + 1) != w->close_of[e]) continue;
        w->elif[e] |= ELIF_ELSE;
        w->elif[j] |= ELIF_IF;
        w->elif[inner_end] |= ELIF_END;
    }
}

/* Vector constructors lower to SPLAT then INSERTs into fresh values. A
 * chain whose links are read only by the next INSERT is written as one
 * `T{{a, b, c, d}}` at its last INSERT, provided nothing between writes a
 * value it reads and no block boundary lies between. */
static bool chain_link(const kw *w, kf_val v)
{
    const vinfo *vi = &w->v[v];
    if (w->k->vals[v].name || vi->ndefs != 1 || vi->nuses != 1) return false;
    if (vi->kind != VK_AT_DEF && vi->kind != VK_CHAIN) return false;
    const kf_ir_ins *d = &w->k->ins[vi->def];
    if (reads_itself(d)) return false;
    return d->op == KF_IR_SPLAT || d->op == KF_IR_INSERT;
}

static bool chain_safe(const kw *w, uint32_t head, uint32_t last)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t i = head + 1; i < last; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        if (!op_has_dst[in->op] && in->op != KF_IR_STORE && in->op != KF_IR_ASTORE) return false;   /* markers */
        if (!op_has_dst[in->op] || !in->dst) continue;
        for (uint32_t j = head; j < i; j++) {   /* an operand read by an earlier link, rewritten here */
            const kf_ir_ins *m = &k->ins[j];
            bool link = m->op == KF_IR_SPLAT || (m->op == KF_IR_INSERT && m->a[0] != m->dst);
            if (link && (m->a[0] == in->dst || (m->op == KF_IR_INSERT && m->a[1] == in->dst))) return false;
        }
    }
    return true;
}

static void decide_chains(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t f = 0; f < k->nins; f++) {
        const kf_ir_ins *in = &k->ins[f];
        if (w->dead[f] || w->drop[f] || in->op != KF_IR_INSERT || in->a[0] == in->dst) continue;
        if (!chain_link(w, in->a[0])) continue;
        uint32_t head = w->v[in->a[0]].def;
        while (k->ins[head].op == KF_IR_INSERT && chain_link(w, k->ins[head].a[0])) head = w->v[k->ins[head].a[0]].def;
        if (k->ins[head].op != KF_IR_SPLAT || !chain_safe(w, head, f)) continue;
        for (kf_val v = in->a[0];; v = k->ins[w->v[v].def].a[0]) {
            w->v[v].kind = VK_CHAIN;
            if (w->v[v].def == head) break;
        }
    }
}

/* `c ? a : b` and bool `a && b` / `a || b` may skip an operand in C; the IR
 * evaluates both, so their operands stay statements of their own (a warp
 * shuffle must run on every lane). */
static bool conditional_operand(const kf_ir_ins *r, kf_val v)
{
    if (r->op == KF_IR_SELECT) return r->a[1] == v || r->a[2] == v;
    bool logic = r->op == KF_IR_BINOP && r->type.scalar == KF_S_BOOL && (r->sub == KF_OP_AND || r->sub == KF_OP_OR);
    return logic && r->a[1] == v;
}

/* A per-lane vector operation (written one statement per lane). */
static bool per_lane(const kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    bool op = in->op == KF_IR_BINOP || in->op == KF_IR_UNOP || in->op == KF_IR_CVT || in->op == KF_IR_MATH;
    return op && w->k->vals[in->dst].type.kind == KF_TK_VECTOR;
}

/* A per-lane result read once, by the per-lane statement written next, is
 * folded lane by lane: `e.v[0] = kf_exp_approx(__fsub_rn(x.v[0], m.v[0]));`.
 * Lane l of the reader reads only lane l of its operands, so writing the
 * reader's lanes in order never reads a lane it already overwrote. */
static bool lane_fold(kw *w, uint32_t d, uint32_t u, const uint32_t *stmt)
{
    const kf_ir_kernel *k = w->k;
    vinfo *vi = &w->v[k->ins[d].dst];
    if (!per_lane(w, d) || u >= k->nins || !per_lane(w, u)) return false;
    uint32_t r = vi->use;
    return r == u || (r > d && r < u && w->v[k->ins[r].dst].kind == VK_LANEFOLD && stmt[r] == u);
}

static void decide_folds(kw *w)
{
    const kf_ir_kernel *k = w->k;
    uint32_t *stmt = scratch_calloc(w, k->nins + 1, sizeof *stmt);   /* folded def -> statement holding it */
    if (!stmt) return;
    for (uint32_t d = k->nins; d-- > 0;) {
        const kf_ir_ins *in = &k->ins[d];
        if (w->dead[d] || w->drop[d] || !op_has_dst[in->op] || !in->dst) continue;
        vinfo *vi = &w->v[in->dst];
        if (vi->kind != VK_AT_DEF || vi->nuses != 1 || k->vals[in->dst].name) continue;
        if (reads_itself(in)) continue;
        uint32_t u = d + 1;
        while (u < k->nins && !written(w, u)) u++;
        if (lane_fold(w, d, u, stmt)) {
            vi->kind = VK_LANEFOLD;
            stmt[d] = u;
            continue;
        }
        if (!foldable_def(w, d)) continue;
        if (u >= k->nins || !single_statement(w, u)) continue;
        uint32_t r = vi->use;
        if (conditional_operand(&k->ins[r], in->dst)) continue;
        bool into_fold = r > d && r < u && w->v[k->ins[r].dst].kind == VK_FOLD && stmt[r] == u;
        if (r != u && !into_fold) continue;
        vi->kind = VK_FOLD;
        stmt[d] = u;
    }
}

/* ---- pass 6: names ------------------------------------------------------------------ */

static const char *const sreg_c[KF_SR_COUNT] = {
    [KF_SR_TID_X] = "threadIdx.x",   [KF_SR_TID_Y] = "threadIdx.y",   [KF_SR_TID_Z] = "threadIdx.z",
    [KF_SR_CTAID_X] = "blockIdx.x",  [KF_SR_CTAID_Y] = "blockIdx.y",  [KF_SR_CTAID_Z] = "blockIdx.z",
    [KF_SR_NTID_X] = "blockDim.x",   [KF_SR_NTID_Y] = "blockDim.y",   [KF_SR_NTID_Z] = "blockDim.z",
    [KF_SR_NCTAID_X] = "gridDim.x",  [KF_SR_NCTAID_Y] = "gridDim.y",  [KF_SR_NCTAID_Z] = "gridDim.z",
    [KF_SR_LANE] = "kf_lane_id()",
};

static const char *sreg_expr(kw *w, uint64_t imm)
{
    if (imm >= KF_SR_COUNT) return "0u";
    if (imm == KF_SR_LANE) kf_cu_need(w->c, KF_CU_H_LANE);
    return sreg_c[imm];
}

static void assign_names(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t p = 0; p < k->nparams; p++) w->pnames[p] = unique_name(w, k->params[p].name ? k->params[p].name : "p");
    for (uint32_t a = 0; a < k->narrays; a++) w->anames[a] = unique_name(w, k->arrays[a].name ? k->arrays[a].name : "arr");
    for (int pass = 0; pass < 2; pass++)
        for (kf_val v = 1; v < k->nvals; v++) {
            vinfo *vi = &w->v[v];
            const char *src = k->vals[v].name;
            if ((pass == 0) != (src != NULL)) continue;
            if (vi->kind == VK_AT_DEF || vi->kind == VK_TOP)
                vi->name = unique_name(w, src ? src : kf_cu_str(w->c, "t%u", v));
        }
    for (kf_val v = 1; v < k->nvals; v++) {
        vinfo *vi = &w->v[v];
        const kf_ir_ins *d = &k->ins[vi->def];
        if (vi->kind == VK_PARAM) vi->name = w->pnames[d->imm];
        if (vi->kind == VK_INLINE)
            vi->name = d->op == KF_IR_SREG ? sreg_expr(w, d->imm) : kf_cu_literal(w->c, (kf_scalar)d->type.scalar, d->imm);
    }
}

/* ---- pass 7: writing ------------------------------------------------------------------- */

static const char *decl_type(kw *w, kf_type t)
{
    if (t.kind == KF_TK_BUFFER)
        return kf_cu_str(w->c, "%s%s*", (t.flags & KF_TF_MUT) ? "" : "const ",
                         kf_cu_type(w->c, kf_type_vector((kf_scalar)t.scalar, t.lanes)));
    return kf_cu_type(w->c, t);
}

static const char *rhs(kw *w, uint32_t i);

/* A value as a full expression (statement context, brackets, call arguments). */
static const char *bare(kw *w, kf_val v)
{
    vinfo *vi = &w->v[v];
    if (vi->kind == VK_FOLD && !vi->name) vi->name = rhs(w, vi->def);
    return vi->name ? vi->name : "?";
}

/* True when s has an operator outside any parentheses or brackets. */
static bool has_top_level_operator(const char *s)
{
    int depth = 0;
    for (; *s; s++) {
        if (*s == '(' || *s == '[' || *s == '{') depth++;
        else if (*s == ')' || *s == ']' || *s == '}') depth--;
        else if (*s == ' ' && depth == 0) return true;
    }
    return false;
}

/* A value as an operand of an operator: folded expressions in parentheses. */
static const char *val(kw *w, kf_val v)
{
    const char *s = bare(w, v);
    if (w->v[v].kind == VK_FOLD && has_top_level_operator(s)) return kf_cu_str(w->c, "(%s)", s);
    return s;
}

static const char *lane_expr(kw *w, const kf_ir_ins *in, unsigned l);

static const char *lane(kw *w, kf_val v, unsigned l)
{
    if (w->k->vals[v].type.kind != KF_TK_VECTOR) return val(w, v);
    if (w->v[v].kind == VK_LANEFOLD) {
        const char *e = lane_expr(w, &w->k->ins[w->v[v].def], l);
        return has_top_level_operator(e) ? kf_cu_str(w->c, "(%s)", e) : e;
    }
    return kf_cu_str(w->c, "%s.v[%u]", val(w, v), l);
}

/* "T name = " at the value's declaring assignment, "name = " elsewhere. */
static const char *lhs(kw *w, uint32_t i)
{
    kf_val d = w->k->ins[i].dst;
    if (w->v[d].kind == VK_AT_DEF && w->v[d].def == i)
        return kf_cu_str(w->c, "%s %s = ", decl_type(w, w->k->vals[d].type), val(w, d));
    return kf_cu_str(w->c, "%s = ", val(w, d));
}

static void assign(kw *w, uint32_t i, const char *expr)
{
    const kf_ir_ins *in = &w->k->ins[i];
    if (w->v[in->dst].kind == VK_NONE || w->v[in->dst].kind == VK_INLINE || !in->dst) wline(w, in->loc, "%s;", expr);
    else wline(w, in->loc, "%s%s;", lhs(w, i), expr);
}

/* Expression of lane l of a per-lane instruction. */
static const char *lane_expr(kw *w, const kf_ir_ins *in, unsigned l)
{
    const kf_ir_value *vals = w->k->vals;
    kf_scalar s = (kf_scalar)vals[in->dst].type.scalar;
    kf_scalar sa = in->a[0] ? (kf_scalar)vals[in->a[0]].type.scalar : s;
    switch (in->op) {
    case KF_IR_BINOP: return kf_cu_binop(w->c, (kf_op)in->sub, s, lane(w, in->a[0], l), lane(w, in->a[1], l));
    case KF_IR_UNOP: return kf_cu_unop(w->c, (kf_op)in->sub, s, lane(w, in->a[0], l));
    case KF_IR_CVT: return kf_cu_cvt(w->c, sa, s, lane(w, in->a[0], l));
    case KF_IR_SPLAT: return val(w, in->a[0]);
    case KF_IR_CONST: {
        unsigned bits = kf_type_bits(vals[in->dst].type);
        uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
        return kf_cu_literal(w->c, s, bits * l >= 64 ? 0 : (in->imm >> (bits * l)) & mask);
    }
    case KF_IR_MATH: {
        const char *x[3] = {NULL, NULL, NULL};
        for (int a = 0; a < 3; a++)
            if (in->a[a]) x[a] = lane(w, in->a[a], l);
        return kf_cu_math(w->c, (kf_builtin)in->sub, sa, x);
    }
    default: return "?";
    }
}

static void emit_lanes(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    kf_type t = w->k->vals[in->dst].type;
    if (t.kind != KF_TK_VECTOR) {
        assign(w, i, lane_expr(w, in, 0));
        return;
    }
    const char *d = val(w, in->dst);
    if (w->v[in->dst].kind == VK_AT_DEF && w->v[in->dst].def == i) wline(w, in->loc, "%s %s;", decl_type(w, t), d);
    for (unsigned l = 0; l < t.lanes; l++) wline(w, in->loc, "%s.v[%u] = %s;", d, l, lane_expr(w, in, l));
}

static const char *atomic_expr(kw *w, const kf_ir_ins *in)
{
    kf_cu *c = w->c;
    kf_type et = kf_type_elem(w->k->vals[in->a[0]].type);
    kf_scalar s = (kf_scalar)et.scalar;
    const char *p = kf_cu_str(c, "&%s[%s]", val(w, in->a[0]), bare(w, in->a[1]));
    const char *x = bare(w, in->a[2]), *xv = val(w, in->a[2]);   /* xv: operand of a cast */
    bool i64 = s == KF_S_I64, f32 = s == KF_S_F32;
    const char *ull = "unsigned long long";
    switch (in->sub) {
    case KF_BI_ATOMIC_ADD:
        if (et.kind == KF_TK_VECTOR) {
            kf_cu_need(c, KF_CU_H_ATOMIC_F16X2);
            return kf_cu_str(c, "kf_atomic_add_f16x2(%s, %s)", p, x);
        }
        if (i64) return kf_cu_str(c, "(long long)atomicAdd((%s*)%s, (%s)%s)", ull, p, ull, xv);
        return kf_cu_str(c, "atomicAdd(%s, %s)", p, x);
    case KF_BI_ATOMIC_MIN:
    case KF_BI_ATOMIC_MAX: {
        const char *mm = in->sub == KF_BI_ATOMIC_MIN ? "Min" : "Max";
        if (f32) {
            kf_cu_need(c, KF_CU_H_ATOMIC_F32);
            return kf_cu_str(c, "kf_atomic_%s_f32(%s, %s)", in->sub == KF_BI_ATOMIC_MIN ? "min" : "max", p, x);
        }
        return kf_cu_str(c, "atomic%s(%s, %s)", mm, p, x);
    }
    case KF_BI_ATOMIC_EXCH:
        if (i64) return kf_cu_str(c, "(long long)atomicExch((%s*)%s, (%s)%s)", ull, p, ull, xv);
        return kf_cu_str(c, "atomicExch(%s, %s)", p, x);
    case KF_BI_ATOMIC_CAS: {
        const char *y = bare(w, in->a[3]), *yv = val(w, in->a[3]);
        if (f32) {
            kf_cu_need(c, KF_CU_H_BITCAST);
            return kf_cu_str(c, "kf_bitcast<float>(atomicCAS((unsigned*)%s, kf_bitcast<unsigned>(%s), kf_bitcast<unsigned>(%s)))",
                             p, x, y);
        }
        if (i64) return kf_cu_str(c, "(long long)atomicCAS((%s*)%s, (%s)%s, (%s)%s)", ull, p, ull, xv, ull, yv);
        return kf_cu_str(c, "atomicCAS(%s, %s, %s)", p, x, y);
    }
    default: return "?";
    }
}

/* xor/up/down: CUDA's intrinsic when the amount is a constant below 32,
 * else the guarded helper (an amount >= 32 leaves the caller's value). */
static const char *shfl_guarded(kw *w, const kf_ir_ins *in, const char *mode)
{
    const vinfo *m = &w->v[in->a[1]];
    const kf_ir_ins *md = m->ndefs == 1 ? &w->k->ins[m->def] : NULL;
    const char *x = bare(w, in->a[0]);
    if (md && md->op == KF_IR_CONST && md->imm < 32)
        return kf_cu_str(w->c, "__shfl_%s_sync(0xffffffffu, %s, %s)", mode, x, bare(w, in->a[1]));
    kf_cu_need(w->c, KF_CU_H_SHFL_GUARD);
    return kf_cu_str(w->c, "kf_shfl_%s(%s, %s)", mode, x, bare(w, in->a[1]));
}

static const char *warp_expr(kw *w, const kf_ir_ins *in)
{
    const char *x = val(w, in->a[0]);
    switch (in->sub) {
    case KF_BI_SHFL: return kf_cu_str(w->c, "__shfl_sync(0xffffffffu, %s, %s)", x, val(w, in->a[1]));
    case KF_BI_SHFL_XOR: return shfl_guarded(w, in, "xor");
    case KF_BI_SHFL_UP: return shfl_guarded(w, in, "up");
    case KF_BI_SHFL_DOWN: return shfl_guarded(w, in, "down");
    case KF_BI_BALLOT: return kf_cu_str(w->c, "__ballot_sync(0xffffffffu, %s)", x);
    case KF_BI_ANY: return kf_cu_str(w->c, "__any_sync(0xffffffffu, %s) != 0", x);
    case KF_BI_ALL: return kf_cu_str(w->c, "__all_sync(0xffffffffu, %s) != 0", x);
    default: return "?";
    }
}

/* `T{{...}}` for the last INSERT of a constructor chain. */
static const char *chain_braces(kw *w, const kf_ir_ins *last)
{
    const kf_ir_kernel *k = w->k;
    kf_type t = k->vals[last->dst].type;
    const char *lanes[16] = {0};
    const kf_ir_ins *m = last;
    for (; m->op == KF_IR_INSERT; m = &k->ins[w->v[m->a[0]].def])
        if (m->imm < 16 && !lanes[m->imm]) lanes[m->imm] = bare(w, m->a[1]);
    kf_buf b = {0};
    kf_buf_puts(&b, kf_cu_type(w->c, t));
    kf_buf_puts(&b, "{{");
    for (unsigned l = 0; l < t.lanes && l < 16; l++) {
        if (l) kf_buf_puts(&b, ", ");
        kf_buf_puts(&b, lanes[l] ? lanes[l] : bare(w, m->a[0]));
    }
    kf_buf_puts(&b, "}}");
    const char *s = b.oom ? NULL : kf_cu_str(w->c, "%s", b.data);
    if (!s) w->c->failed = true;
    kf_buf_free(&b);
    return s ? s : "?";
}

static void emit_insert(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    if (in->dst != in->a[0] && w->v[in->a[0]].kind == VK_CHAIN) {
        assign(w, i, chain_braces(w, in));
        return;
    }
    const char *d = val(w, in->dst);
    if (in->dst != in->a[0]) assign(w, i, val(w, in->a[0]));
    else if (w->v[in->dst].kind == VK_AT_DEF && w->v[in->dst].def == i)
        wline(w, in->loc, "%s %s;", decl_type(w, w->k->vals[in->dst].type), d);
    wline(w, in->loc, "%s.v[%u] = %s;", d, (unsigned)in->imm, bare(w, in->a[1]));
}

/* `T{{l0, l1, ...}}`: a whole vector from per-lane expressions. */
static const char *vector_braces(kw *w, const kf_ir_ins *in)
{
    kf_type t = w->k->vals[in->dst].type;
    kf_buf b = {0};
    kf_buf_puts(&b, kf_cu_type(w->c, t));
    kf_buf_puts(&b, "{{");
    for (unsigned l = 0; l < t.lanes; l++) {
        if (l) kf_buf_puts(&b, ", ");
        kf_buf_puts(&b, lane_expr(w, in, l));
    }
    kf_buf_puts(&b, "}}");
    const char *s = b.oom ? NULL : kf_cu_str(w->c, "%s", b.data);
    if (!s) w->c->failed = true;
    kf_buf_free(&b);
    return s ? s : "?";
}

/* The right-hand side of a single-statement value instruction. */
static const char *rhs(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    kf_cu *c = w->c;
    const kf_ir_value *vals = w->k->vals;
    if ((in->op == KF_IR_SPLAT || in->op == KF_IR_CONST) && vals[in->dst].type.kind == KF_TK_VECTOR)
        return vector_braces(w, in);
    switch (in->op) {
    case KF_IR_CONST:
    case KF_IR_BINOP:
    case KF_IR_UNOP:
    case KF_IR_CVT:
    case KF_IR_MATH:
    case KF_IR_SPLAT: return lane_expr(w, in, 0);
    case KF_IR_PARAM: return w->pnames[in->imm];
    case KF_IR_MOV: return bare(w, in->a[0]);
    case KF_IR_CMP:
        return kf_cu_cmp(c, (kf_op)in->sub, (kf_scalar)vals[in->a[0]].type.scalar, val(w, in->a[0]), val(w, in->a[1]));
    case KF_IR_BITCAST:
        kf_cu_need(c, KF_CU_H_BITCAST);
        return kf_cu_str(c, "kf_bitcast<%s>(%s)", decl_type(w, vals[in->dst].type), bare(w, in->a[0]));
    case KF_IR_SELECT: return kf_cu_str(c, "%s ? %s : %s", val(w, in->a[0]), val(w, in->a[1]), val(w, in->a[2]));
    case KF_IR_EXTRACT: return kf_cu_str(c, "%s.v[%u]", val(w, in->a[0]), (unsigned)in->imm);
    case KF_IR_SREG: return sreg_expr(w, in->imm);
    case KF_IR_VIEW: return kf_cu_str(c, "(%s)%s", decl_type(w, vals[in->dst].type), val(w, in->a[0]));
    case KF_IR_LOAD: return kf_cu_str(c, "%s[%s]", val(w, in->a[0]), bare(w, in->a[1]));
    case KF_IR_ALOAD: return kf_cu_str(c, "%s[%s]", w->anames[in->imm], bare(w, in->a[0]));
    case KF_IR_ATOMIC: return atomic_expr(w, in);
    case KF_IR_SHFL:
    case KF_IR_VOTE: return warp_expr(w, in);
    default: return "?";
    }
}

static void emit_value_op(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    bool vec = w->k->vals[in->dst].type.kind == KF_TK_VECTOR;
    switch (in->op) {
    case KF_IR_BINOP:
    case KF_IR_UNOP:
    case KF_IR_CVT:
    case KF_IR_MATH:
        if (vec) emit_lanes(w, i);
        else assign(w, i, rhs(w, i));
        break;
    case KF_IR_PARAM:
        if (w->v[in->dst].kind != VK_PARAM) assign(w, i, rhs(w, i));
        break;
    case KF_IR_INSERT: emit_insert(w, i); break;
    default: assign(w, i, rhs(w, i)); break;
    }
}

static void emit_ins(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    switch (in->op) {
    case KF_IR_NOP: break;
    case KF_IR_STORE:
        wline(w, in->loc, "%s[%s] = %s;", val(w, in->a[0]), bare(w, in->a[1]), bare(w, in->a[2]));
        break;
    case KF_IR_ASTORE: wline(w, in->loc, "%s[%s] = %s;", w->anames[in->imm], bare(w, in->a[0]), bare(w, in->a[1])); break;
    case KF_IR_BARRIER: wline(w, in->loc, "__syncthreads();"); break;
    case KF_IR_RET: wline(w, in->loc, "return;"); break;
    case KF_IR_BREAK: wline(w, in->loc, "break;"); break;
    case KF_IR_CONTINUE:
        if (w->latch_of[w->loop_of[i]]) wline(w, in->loc, "goto kf_latch_%u;", w->label[w->loop_of[i]]);
        else wline(w, in->loc, "continue;");
        break;
    case KF_IR_IF:
        wline(w, in->loc, (w->elif[i] & ELIF_IF) ? "} else if (%s) {" : "if (%s) {", bare(w, in->a[0]));
        w->depth++;
        break;
    case KF_IR_ELSE:
        w->depth--;
        if (w->elif[i] & ELIF_ELSE) break;   /* the IF that follows writes `} else if` */
        wline(w, no_loc, "} else {");
        w->depth++;
        break;
    case KF_IR_ENDIF:
        if (w->elif[i] & ELIF_END) break;    /* closed by the enclosing ENDIF */
        w->depth--;
        wline(w, no_loc, "}");
        break;
    case KF_IR_ENDLOOP:
        w->depth--;
        wline(w, no_loc, "}");
        break;
    case KF_IR_LOOP:
        wline(w, in->loc, "for (;;) {");
        w->depth++;
        if (w->latch_of[i]) {
            wline(w, no_loc, "{");
            w->depth++;
        }
        break;
    case KF_IR_LATCH: {
        uint32_t lp = w->loop_of[i];
        w->depth--;
        wline(w, no_loc, "}");
        if (w->cont_live[lp]) {
            w->depth--;
            wline(w, no_loc, "kf_latch_%u:;", w->label[lp]);
            w->depth++;
        }
        break;
    }
    default: emit_value_op(w, i); break;
    }
}

/* ---- the kernel ---------------------------------------------------------------------- */

static void write_signature(kw *w)
{
    const kf_ir_kernel *k = w->k;
    const kf_schedule *s = &k->sched;
    uint64_t b = 1;
    for (int d = 0; d < 3; d++) b *= s->block[d] ? s->block[d] : 1;
    kf_buf *o = w->out;
    wline(w, k->loc, "/* kernel %s (%s:%u) */", k->name, k->loc.file ? k->loc.file : "?", k->loc.line);
    if (is_reserved(k->name)) {
        kf_diag_error(w->c->diags, k->loc, "kernel name '%s' is reserved in CUDA-C (a C++ keyword, CUDA name or kf_ prefix): rename the kernel",
                      k->name);
        w->c->failed = true;
    }
    if (b > 1024) {
        kf_diag_error(w->c->diags, s->loc, "block of %llu threads exceeds the CUDA limit of 1024: make the @schedule block smaller",
                      (unsigned long long)b);
        w->c->failed = true;
    }
    if (s->block[0]) wline(w, k->loc, "extern \"C\" __global__ void __launch_bounds__(%llu)", (unsigned long long)b);
    else wline(w, k->loc, "extern \"C\" __global__ void");   /* no block known: no bound */
    kf_buf_printf(o, "%s(", k->name);
    for (uint32_t p = 0; p < k->nparams; p++) {
        kf_type t = k->params[p].type;
        const char *ty = t.kind == KF_TK_BUFFER ? kf_cu_str(w->c, "%s __restrict__", decl_type(w, t)) : decl_type(w, t);
        kf_buf_printf(o, "%s%s %s", p ? ", " : "", ty, w->pnames[p]);
    }
    kf_buf_puts(o, ")\n");
    push_loc(w, k->loc);
    w->mapped++;
    wline(w, no_loc, "{");
    w->depth++;
}

static void write_declarations(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t a = 0; a < k->narrays; a++) {
        const kf_ir_array *ar = &k->arrays[a];
        kf_type et = kf_type_vector((kf_scalar)ar->type.scalar, ar->type.lanes);
        if (ar->type.flags & KF_TF_SHARED)
            wline(w, ar->loc, "__shared__ __align__(%u) %s %s[%u];", kf_type_elem_bytes(et), kf_cu_type(w->c, et),
                  w->anames[a], ar->type.len);
        else
            wline(w, ar->loc, "%s %s[%u];", kf_cu_type(w->c, et), w->anames[a], ar->type.len);
    }
    for (kf_val v = 1; v < k->nvals; v++) {
        if (w->v[v].kind != VK_TOP) continue;
        const char *init = w->v[v].ndefs ? "" : " = {}";
        wline(w, k->vals[v].loc, "%s %s%s;", decl_type(w, k->vals[v].type), val(w, v), init);
    }
}

static bool is_marker(uint16_t op)
{
    return op == KF_IR_ELSE || op == KF_IR_ENDIF || op == KF_IR_LATCH || op == KF_IR_ENDLOOP;
}

/* The per-kernel arrays, all in the scratch arena. */
static void alloc_writer(kw *w)
{
    const kf_ir_kernel *k = w->k;
    uint32_t n = k->nins + 1, nv = k->nvals + 1;
    w->v = scratch_calloc(w, nv, sizeof *w->v);
    w->dead = scratch_calloc(w, n, sizeof *w->dead);
    w->drop = scratch_calloc(w, n, sizeof *w->drop);
    w->scope = scratch_calloc(w, n, sizeof *w->scope);
    w->sparent = scratch_calloc(w, 2 * n + 1, sizeof *w->sparent);
    w->loop_of = scratch_calloc(w, n, sizeof *w->loop_of);
    w->latch_of = scratch_calloc(w, n, sizeof *w->latch_of);
    w->label = scratch_calloc(w, n, sizeof *w->label);
    w->cont_live = scratch_calloc(w, n, sizeof *w->cont_live);
    w->brk_live = scratch_calloc(w, n, sizeof *w->brk_live);
    w->close_of = scratch_calloc(w, n, sizeof *w->close_of);
    w->elif = scratch_calloc(w, n, sizeof *w->elif);
    w->pnames = scratch_calloc(w, k->nparams + 1, sizeof *w->pnames);
    w->anames = scratch_calloc(w, k->narrays + 1, sizeof *w->anames);
    w->names.cap = 64;
    while (w->names.cap < 2 * ((size_t)k->nvals + k->nparams + k->narrays)) w->names.cap *= 2;
    w->names.slot = scratch_calloc(w, w->names.cap, sizeof *w->names.slot);
    w->names.next = scratch_calloc(w, w->names.cap, sizeof *w->names.next);
}

/* Runs the passes of the file comment over one kernel, appending its text
 * to out and the location of each text line to lines. */
static void emit_kernel(kf_cu *c, const kf_ir_kernel *k, kf_buf *out, loc_vec *lines)
{
    kw w = {.c = c, .k = k, .out = out};
    alloc_writer(&w);
    if (c->failed || !check_structure(&w)) return;
    w.lines = *lines;
    mark_reachable(&w);
    assign_scopes(&w);
    drop_unused(&w);
    decide_kinds(&w);
    decide_chains(&w);
    decide_folds(&w);
    decide_else_ifs(&w);
    assign_names(&w);
    write_signature(&w);
    write_declarations(&w);
    for (uint32_t i = 0; i < k->nins; i++) {
        if (!written(&w, i) && !(is_marker(k->ins[i].op) && !w.dead[i])) continue;
        emit_ins(&w, i);
    }
    w.depth = 0;
    wline(&w, no_loc, "}");
    *lines = w.lines;
}

static bool arch_ok(uint32_t arch)
{
    return arch == 80 || arch == 86 || arch == 89 || arch == 90;
}

static size_t count_lines(const kf_buf *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++) n += b->data[i] == '\n';
    return n;
}

/* Prelude, then the kernels' text; the linemap gets one entry per line. */
static kf_status finish(kf_cu *c, const kf_buf *body, const loc_vec *lines, kf_buf *out, kf_linemap *linemap)
{
    kf_buf pre = {0};
    kf_cu_prelude(c, &pre);
    kf_status st = KF_OK;
    if (c->failed || pre.oom || body->oom) st = c->diags->nerrors ? KF_ERR_SOURCE : KF_ERR_NOMEM;
    if (st == KF_OK) {
        kf_buf_append(out, pre.data, pre.len);
        kf_buf_append(out, body->data, body->len);
        if (out->oom) st = KF_ERR_NOMEM;
    }
    if (st == KF_OK && linemap) {
        linemap->lines.len = 0;
        size_t np = count_lines(&pre);
        for (size_t i = 0; i < np && st == KF_OK; i++)
            if (!KF_VEC_PUSH(&linemap->lines, no_loc)) st = KF_ERR_NOMEM;
        for (size_t i = 0; i < lines->len && st == KF_OK; i++)
            if (!KF_VEC_PUSH(&linemap->lines, lines->data[i])) st = KF_ERR_NOMEM;
    }
    kf_buf_free(&pre);
    return st;
}

kf_status kf_cuda_emit(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o,
                       kf_buf *out, kf_linemap *linemap, kf_diags *diags)
{
    static const kf_emit_opts defaults = {90, false};
    kf_diags none = {0};
    kf_cu c = {.m = m, .o = o ? o : &defaults, .diags = diags ? diags : &none};
    const char *file = m && m->file ? m->file : "<input>";
    if (!arch_ok(c.o->arch)) {
        kf_diag_error(c.diags, ((kf_loc){file, 1, 1}), "unsupported --arch sm_%u: kforge targets sm_80, sm_86, sm_89 and sm_90",
                      c.o->arch);
        kf_diags_free(&none);
        return KF_ERR_SOURCE;
    }
    kf_arena_init(&c.scratch);
    kf_buf body = {0};
    loc_vec lines = {0};
    uint32_t nk = k ? 1 : (m ? m->nkernels : 0);
    for (uint32_t i = 0; i < nk && !c.failed; i++) {
        if (i) {
            kf_buf_puts(&body, "\n");
            if (!KF_VEC_PUSH(&lines, no_loc)) c.failed = true;
        }
        emit_kernel(&c, k ? k : &m->kernels[i], &body, &lines);
    }
    kf_status st = finish(&c, &body, &lines, out, linemap);
    KF_VEC_FREE(&lines);
    kf_buf_free(&body);
    kf_arena_free(&c.scratch);
    kf_diags_free(&none);
    return st;
}
