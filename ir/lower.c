/* Lowering: the typed AST of a checked module becomes core IR (ir.h), one
 * kf_ir_kernel per kernel in source order.
 *
 * This file holds the builder (values, instructions, the two structure
 * stacks described in lower.h), statements and control flow, fn inlining
 * and @unroll expansion. Expressions are in lower_expr.c, builtins in
 * lower_builtin.c.
 *
 * Declarations bind through the AST: a LET, VAR, FOR or PARAM node's `aux`
 * holds the value (a local array's VAR node, and a LET or fn PARAM that
 * holds a shared array or a view of one: the array index) of the instance
 * being lowered. That is enough because fns never recurse: an
 * inlined body is open at most once at a time, and each inlined instance or
 * unrolled iteration rebinds its declarations before their uses.
 *
 * Control flow stays structured (IF/ELSE/ENDIF, LOOP/LATCH/ENDLOOP):
 *   while c { b }            LOOP; IF !c BREAK ENDIF; b; ENDLOOP
 *   for i in a..b step s {}  i = a; LOOP; IF i >= end BREAK ENDIF; body; LATCH; i = i + s; ENDLOOP
 *   fn with an early return  one-trip LOOP; ... MOV r; BREAK ...; BREAK; ENDLOOP
 *   @unroll with break       one-trip LOOP around the expansion; break = leave it
 *   @unroll with continue    one-trip LOOP around each iteration; continue = leave it
 * An exit that must leave more than one LOOP sets a flag on its target and
 * breaks; each loop in between tests the flag right after its ENDLOOP and
 * breaks again. The flag is initialised by two NOPs reserved before the
 * target LOOP and patched when the first such exit appears; unused NOPs are
 * removed when the kernel is finished. (Sema currently rejects break and
 * continue directly in an @unroll body; lowering supports them anyway.)
 *
 * Shared arrays: one per declaration per kernel, however often the
 * declaration is met (an unrolled loop, every call of the fn declaring it,
 * as in CUDA). The static ones may hold 48 KiB in all, each rounded up to
 * 16 bytes (checked here, once every fn is inlined).
 *
 * Defaults: a kernel without `@schedule(block = ...)` gets block (256, 1, 1);
 * `var x: T;` starts at zero. */
#include "lower.h"
#include "numeric.h"

#include <stdarg.h>
#include <string.h>

/* ---- builder ------------------------------------------------------------ */

kf_type kf_lower_norm(kf_type t)
{
    if (t.scalar == KF_S_UINT) t.scalar = KF_S_I32;
    else if (t.scalar == KF_S_UFLOAT) t.scalar = KF_S_F32;
    return t;
}

void kf_lower_error(lw_t *lw, kf_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!lw->failed) kf_diag_vadd(lw->cx->diags, KF_DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
    lw->failed = true;
}

/* KF_VEC_PUSH with the capacity test inline: the hot pushes (one value, one
 * instruction) then call kf_vec_grow only when the array must grow. */
#define LW_PUSH(v, x) \
    (((v)->len < (v)->cap || KF_VEC_RESERVE(v, 1)) ? ((v)->data[(v)->len++] = (x), true) : false)

kf_val kf_lower_new_val(lw_t *lw, kf_type t, const char *name, kf_loc loc)
{
    if (!LW_PUSH(&lw->vals, ((kf_ir_value){t, name, loc})) || !LW_PUSH(&lw->vparam, 0u) ||
        !LW_PUSH(&lw->vconst, ((lw_vconst){0, false}))) {
        lw->oom = lw->failed = true;
        return 0;
    }
    return (kf_val)(lw->vals.len - 1);
}

kf_type kf_lower_vtype(const lw_t *lw, kf_val v)
{
    return v < lw->vals.len ? lw->vals.data[v].type : kf_type_void();
}

uint32_t kf_lower_emit(lw_t *lw, kf_ir_op op, uint16_t sub, kf_type t, kf_val dst,
                 kf_val a0, kf_val a1, kf_val a2, kf_val a3, uint64_t imm, kf_loc loc)
{
    if (lw->failed) return UINT32_MAX;
    if (lw->ins.len >= LW_MAX_INS) {
        kf_lower_error(lw, loc, "kernel too large after inlining fns and unrolling loops (over %u IR instructions); "
                 "call fewer fns or unroll fewer iterations", LW_MAX_INS);
        return UINT32_MAX;
    }
    kf_ir_ins in = {(uint16_t)op, sub, t, dst, {a0, a1, a2, a3}, imm, loc};
    if (!LW_PUSH(&lw->ins, in)) {
        lw->oom = lw->failed = true;
        return UINT32_MAX;
    }
    return (uint32_t)(lw->ins.len - 1);
}

kf_val kf_lower_def(lw_t *lw, kf_ir_op op, uint16_t sub, kf_type t, kf_type dt,
              kf_val a0, kf_val a1, kf_val a2, uint64_t imm, kf_loc loc)
{
    if (lw->failed) return 0;
    kf_val d = kf_lower_new_val(lw, dt, NULL, loc);
    if (d) kf_lower_emit(lw, op, sub, t, d, a0, a1, a2, 0, imm, loc);
    return d;
}

kf_val kf_lower_const(lw_t *lw, kf_type t, uint64_t bits, kf_loc loc)
{
    kf_val v = kf_lower_def(lw, KF_IR_CONST, 0, t, t, 0, 0, 0, bits, loc);
    if (v) lw->vconst.data[v] = (lw_vconst){bits, true};
    return v;
}

void kf_lower_mov(lw_t *lw, kf_val dst, kf_val src, kf_loc loc)
{
    if (lw->failed) return;
    kf_lower_emit(lw, KF_IR_MOV, 0, kf_lower_vtype(lw, dst), dst, src, 0, 0, 0, 0, loc);
    if (dst < lw->vparam.len && src < lw->vparam.len && !lw->vparam.data[dst])
        lw->vparam.data[dst] = lw->vparam.data[src];
}

void kf_lower_note_access(lw_t *lw, kf_val buf, kf_type elem)
{
    uint32_t p = buf < lw->vparam.len ? lw->vparam.data[buf] : 0;
    uint32_t bytes = kf_type_elem_bytes(elem);
    if (p && p <= lw->nparams && lw->params[p - 1].align < bytes) lw->params[p - 1].align = bytes;
}

/* ---- loops and exits ---------------------------------------------------- */

/* Opens an IR LOOP; wrappers reserve two NOPs for their exit flag. */
static uint32_t open_loop(lw_t *lw, bool wrapper, kf_loc loc)
{
    lw_loop l = {0};
    l.wrapper = wrapper;
    l.loc = loc;
    l.flag_at = UINT32_MAX;
    if (wrapper) {
        l.flag_at = kf_lower_emit(lw, KF_IR_NOP, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
        kf_lower_emit(lw, KF_IR_NOP, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    }
    kf_lower_emit(lw, KF_IR_LOOP, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    if (!KF_VEC_PUSH(&lw->loops, l)) lw->oom = lw->failed = true;
    return (uint32_t)(lw->loops.len - 1);
}

/* Closes the innermost LOOP (a wrapper first breaks: it runs once), then
 * re-checks the flags of outer targets that exits inside it were heading for. */
static void close_loop(lw_t *lw, kf_loc loc)
{
    if (!lw->loops.len) return;
    lw_loop l = lw->loops.data[--lw->loops.len];
    if (l.wrapper) kf_lower_emit(lw, KF_IR_BREAK, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    kf_lower_emit(lw, KF_IR_ENDLOOP, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    for (size_t i = 0; i < l.checks.len; i++) {
        uint32_t t = l.checks.data[i];
        if (t >= lw->loops.len) continue;
        kf_lower_emit(lw, KF_IR_IF, 0, kf_type_void(), 0, lw->loops.data[t].flag, 0, 0, 0, 0, loc);
        kf_lower_emit(lw, KF_IR_BREAK, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
        kf_lower_emit(lw, KF_IR_ENDIF, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    }
    KF_VEC_FREE(&l.checks);
}

/* The exit flag of wrapper loop t, made (and its reserved NOPs patched into
 * `flag = false`) on first use. */
static kf_val loop_flag(lw_t *lw, uint32_t t, kf_loc loc)
{
    lw_loop *l = &lw->loops.data[t];
    if (l->flag || l->flag_at == UINT32_MAX || l->flag_at + 1 >= lw->ins.len) return l->flag;
    kf_type b = kf_type_scalar(KF_S_BOOL);
    kf_val f = kf_lower_new_val(lw, b, NULL, loc);
    kf_val z = kf_lower_new_val(lw, b, NULL, loc);
    l = &lw->loops.data[t];
    l->flag = f;
    kf_ir_ins *in = &lw->ins.data[l->flag_at];
    in[0] = (kf_ir_ins){KF_IR_CONST, 0, b, z, {0}, 0, in[2].loc};
    in[1] = (kf_ir_ins){KF_IR_MOV, 0, b, f, {z}, 0, in[2].loc};
    return f;
}

/* Leaves loops up to and including loops[target]. */
static void exit_to(lw_t *lw, uint32_t target, kf_loc loc)
{
    if (target >= lw->loops.len) {
        kf_lower_error(lw, loc, "internal error: exit to a loop that is not open");
        return;
    }
    for (size_t i = target; i < lw->loops.len; i++)
        if (!lw->loops.data[i].left) lw->loops.data[i].left = true, lw->loops.data[i].left_at = loc;
    if (target + 1 < lw->loops.len) {
        kf_val f = loop_flag(lw, target, loc);
        kf_type b = kf_type_scalar(KF_S_BOOL);
        kf_lower_mov(lw, f, kf_lower_const(lw, b, 1, loc), loc);
        for (size_t i = target + 1; i < lw->loops.len; i++) {
            lw_loop *l = &lw->loops.data[i];
            bool have = false;
            for (size_t j = 0; j < l->checks.len; j++) have |= l->checks.data[j] == target;
            if (!have && !KF_VEC_PUSH(&l->checks, target)) lw->oom = lw->failed = true;
        }
    }
    kf_lower_emit(lw, KF_IR_BREAK, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
}

static bool push_syn(lw_t *lw, lw_syn s)
{
    if (KF_VEC_PUSH(&lw->syn, s)) return true;
    lw->oom = lw->failed = true;
    return false;
}

/* ---- statements --------------------------------------------------------- */

static void lower_stmt(lw_t *lw, kf_node *s);

void kf_lower_block(lw_t *lw, const kf_node *block)
{
    if (!block) return;
    const kf_node *list = block->kind == KF_N_BLOCK ? block->a : block;
    for (kf_node *s = (kf_node *)list; s && !lw->failed; s = s->next) {
        lower_stmt(lw, s);
        /* Statements after break/continue/return cannot run. */
        if (s->kind == KF_N_BREAK || s->kind == KF_N_CONTINUE || s->kind == KF_N_RETURN) break;
    }
}

/* The declared type of a PARAM/LET/VAR/SHARED: sema's `type`, else its type node's. */
static kf_type node_type(const kf_node *s)
{
    kf_type t = s->type;
    const kf_node *tn = s->a;
    if (t.kind == KF_TK_VOID && tn && s->kind != KF_N_FOR) {
        t = tn->type;
        if (t.kind == KF_TK_VOID && tn->kind == KF_N_TYPE_BUF && tn->a)
            t = (kf_type){KF_TK_BUFFER, tn->a->type.scalar, tn->a->type.lanes, tn->op ? KF_TF_MUT : 0, 0};
    }
    return kf_lower_norm(t);
}

static kf_type decl_type(const kf_node *s, kf_type fallback)
{
    kf_type t = node_type(s);
    return t.kind == KF_TK_VOID ? fallback : t;
}

static void lower_let(lw_t *lw, kf_node *s)
{
    kf_type t = node_type(s);
    if (t.kind == KF_TK_ARRAY) {   /* a shared array or a view of one, by name */
        uint32_t arr;
        if (kf_lower_array_of(lw, s->b, &arr)) s->aux = arr;
        return;
    }
    kf_val mark = (kf_val)lw->vals.len;
    kf_val v = t.kind == KF_TK_VOID ? kf_lower_expr(lw, s->b) : kf_lower_expr_as(lw, s->b, t);
    t = decl_type(s, kf_lower_vtype(lw, v));
    if (kf_lower_is_fresh(lw, v, mark)) {
        lw->vals.data[v].name = s->name;
        lw->vals.data[v].loc = s->loc;
    } else if (t.kind != KF_TK_BUFFER) {
        kf_val n = kf_lower_new_val(lw, t, s->name, s->loc);
        kf_lower_mov(lw, n, v, s->loc);
        v = n;
    }
    s->aux = v;
}

static kf_val zero_of(lw_t *lw, kf_type t, kf_loc loc)
{
    if (t.kind == KF_TK_SCALAR) return kf_lower_const(lw, t, 0, loc);
    kf_type e = kf_type_elem(t);
    return kf_lower_def(lw, KF_IR_SPLAT, 0, t, t, kf_lower_const(lw, e, 0, loc), 0, 0, 0, loc);
}

static uint32_t new_array(lw_t *lw, const char *name, kf_type t, kf_loc loc)
{
    if (!KF_VEC_PUSH(&lw->arrays, ((kf_ir_array){name, t, loc}))) lw->oom = lw->failed = true;
    return (uint32_t)(lw->arrays.len - 1);
}

/* `var x: T = e` is a value written by MOV; `var x: T;` starts at zero so
 * every back end reads the same thing. `var a: T[N]` is a local array. */
static void lower_var(lw_t *lw, kf_node *s)
{
    kf_type t = node_type(s);
    if (t.kind == KF_TK_ARRAY) {
        t.flags &= (uint8_t)~KF_TF_SHARED;
        s->aux = new_array(lw, s->name, t, s->loc);
        return;
    }
    kf_val init = 0;
    if (s->b) {
        init = t.kind == KF_TK_VOID ? kf_lower_expr(lw, s->b) : kf_lower_expr_as(lw, s->b, t);
        t = decl_type(s, kf_lower_vtype(lw, init));
    } else if (t.kind == KF_TK_SCALAR || t.kind == KF_TK_VECTOR) {
        init = zero_of(lw, t, s->loc);
    }
    kf_val v = kf_lower_new_val(lw, t, s->name, s->loc);
    if (init) kf_lower_mov(lw, v, init, s->loc);
    s->aux = v;
}

/* A shared array is one per block: a declaration met again (in an unrolled
 * loop) names the same array. */
static void lower_shared(lw_t *lw, kf_node *s)
{
    for (size_t i = 0; i < lw->shared.len; i++)
        if (lw->shared.data[i].node == s) return;
    kf_type t = node_type(s);
    if (t.kind != KF_TK_ARRAY) {
        kf_lower_error(lw, s->loc, "internal error: shared '%s' has no array type", s->name);
        return;
    }
    t.flags |= KF_TF_SHARED;
    uint32_t a = new_array(lw, s->name, kf_lower_norm(t), s->loc);
    if (!KF_VEC_PUSH(&lw->shared, ((lw_shared){s, a}))) lw->oom = lw->failed = true;
}

uint32_t kf_lower_shared_array(lw_t *lw, const kf_node *decl)
{
    for (size_t i = 0; i < lw->shared.len; i++)
        if (lw->shared.data[i].node == decl) return lw->shared.data[i].array;
    return UINT32_MAX;
}

/* Whether an arm of the if with condition cond is dead in this @unroll
 * iteration, by sema's fold (kf_sema_arm_dead), which also decided which
 * arms sema checked: FOR->cval takes each unrolled variable's value. */
bool kf_lower_arm_dead(lw_t *lw, kf_node *cond, bool taken)
{
    if (!lw->unroll.len) return false;
    for (size_t i = 0; i < lw->unroll.len; i++) {
        kf_node *f = (kf_node *)lw->unroll.data[i].node;
        uint64_t b = lw->unroll.data[i].bits;
        f->cval.u = kf_type_is_signed(f->type) ? (uint64_t)kf_bits_to_i64((kf_scalar)f->type.scalar, b) : b;
    }
    return kf_sema_arm_dead(cond, taken);
}

static void lower_if(lw_t *lw, kf_node *s)
{
    uint64_t c;
    if (kf_lower_fold(lw, s->a, kf_type_scalar(KF_S_BOOL), &c)) {
        if (c) kf_lower_block(lw, s->b);
        else if (s->c) lower_stmt(lw, s->c);
        return;
    }
    /* an arm dead in this iteration (`if k > 0 && i < n { v[k - 1] }` at
     * k = 0) is not lowered; the condition still is, for its effects */
    bool dead_then = kf_lower_arm_dead(lw, s->a, true), dead_else = s->c && kf_lower_arm_dead(lw, s->a, false);
    kf_val cv = kf_lower_expr_as(lw, s->a, kf_type_scalar(KF_S_BOOL));
    kf_lower_emit(lw, KF_IR_IF, 0, kf_type_void(), 0, cv, 0, 0, 0, 0, s->loc);
    kf_loc outer = lw->if_at;
    lw->if_depth++, lw->if_at = s->loc;
    if (!dead_then) kf_lower_block(lw, s->b);
    if (s->c && !dead_else) {
        kf_lower_emit(lw, KF_IR_ELSE, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, s->c->loc);
        lower_stmt(lw, s->c);
    }
    lw->if_depth--, lw->if_at = outer;
    kf_lower_emit(lw, KF_IR_ENDIF, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, s->loc);
}

/* ---- dep_wait ----------------------------------------------------------- */

/* The first store or atomic on a buffer lowered so far, or NULL. */
static const kf_ir_ins *first_buffer_write(const lw_t *lw)
{
    for (size_t i = 0; i < lw->ins.len; i++)
        if (lw->ins.data[i].op == KF_IR_STORE || lw->ins.data[i].op == KF_IR_ATOMIC) return &lw->ins.data[i];
    return NULL;
}

/* Whether a dep_wait() at loc would stand where a thread could go on
 * without it (reported): inside a user loop, after an exit from a wrapper
 * around it (an inlined fn's early return), inside an IF. */
static bool dep_wait_skippable(lw_t *lw, kf_loc loc)
{
    for (size_t i = lw->loops.len; i-- > 0;) {
        const lw_loop *l = &lw->loops.data[i];
        if (!l->wrapper) {
            kf_lower_error(lw, loc, "dep_wait() inside the loop at line %u would wait on every iteration or not at "
                           "all: call it once, before the loop", l->loc.line);
            return true;
        }
        if (l->left) {
            kf_lower_error(lw, loc, "dep_wait() after the early exit at line %u: a thread that leaves there goes on "
                           "without waiting; call dep_wait() before that 'return' (or 'break')", l->left_at.line);
            return true;
        }
    }
    if (lw->if_depth)
        kf_lower_error(lw, loc, "dep_wait() inside the 'if' at line %u: every thread must pass it before it reads "
                       "what earlier kernels wrote; call it outside the 'if' (an 'if' on a constant, such as a -D "
                       "option, is decided at compile time and allowed)", lw->if_at.line);
    return lw->if_depth != 0;
}

/* A kernel that places its own wait loses the one at its entry, so the
 * wait must be where every thread that goes on passes it once: no IF or
 * user loop open around it (a constant condition opens none, an inlined fn
 * whose returns all come later is fine), not a second time, and no write
 * of a buffer before it (the kernels it depends on may still use that). */
void kf_lower_dep_wait(lw_t *lw, kf_loc loc)
{
    const kf_ir_ins *w = first_buffer_write(lw);
    if (dep_wait_skippable(lw, loc)) return;
    if (lw->dep_waited) {
        kf_lower_error(lw, loc, "dep_wait() a second time in this kernel (first at line %u): a kernel waits for "
                       "the grids it depends on once; remove one", lw->dep_wait_at.line);
    } else if (w) {
        const char *what = w->op == KF_IR_STORE ? "store" : "atomic";
        kf_lower_error(lw, loc, "dep_wait() after the %s on a buffer at line %u: before the wait the kernels this "
                       "one depends on may still use that memory; move the %s after dep_wait()", what, w->loc.line,
                       what);
    } else {
        lw->dep_waited = true, lw->dep_wait_at = loc;
        kf_lower_emit(lw, KF_IR_INTRIN, KF_BI_DEP_WAIT, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    }
}

/* IF c BREAK ENDIF */
static void break_if(lw_t *lw, kf_val c, kf_loc loc)
{
    kf_lower_emit(lw, KF_IR_IF, 0, kf_type_void(), 0, c, 0, 0, 0, 0, loc);
    kf_lower_emit(lw, KF_IR_BREAK, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    kf_lower_emit(lw, KF_IR_ENDIF, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
}

static void lower_while(lw_t *lw, kf_node *s)
{
    kf_type b = kf_type_scalar(KF_S_BOOL);
    uint64_t c = 0;
    bool folded = kf_lower_fold(lw, s->a, b, &c);
    if (folded && !c) return;
    uint32_t l = open_loop(lw, false, s->loc);
    if (!push_syn(lw, (lw_syn){SYN_LOOP, l, UINT32_MAX, 0, false, {0}})) return;
    if (!folded) {
        kf_val cv = kf_lower_expr_as(lw, s->a, b);
        break_if(lw, kf_lower_def(lw, KF_IR_UNOP, KF_OP_NOT, b, b, cv, 0, 0, 0, s->a->loc), s->a->loc);
    }
    kf_lower_block(lw, s->b);
    lw->syn.len--;
    close_loop(lw, s->loc);
}

/* A bound evaluated once before the loop, in a value nothing else writes
 * (only a var's value can change: sema lets nothing else be assigned). */
static kf_val loop_bound(lw_t *lw, const kf_node *e, kf_type t)
{
    kf_val mark = (kf_val)lw->vals.len;
    kf_val v = kf_lower_expr_as(lw, e, t);
    bool is_var = e->kind == KF_N_NAME && e->sym && e->sym->kind == KF_N_VAR;
    if (kf_lower_is_fresh(lw, v, mark) || !is_var) return v;
    kf_val c = kf_lower_new_val(lw, t, NULL, e->loc);
    kf_lower_mov(lw, c, v, e->loc);
    return c;
}

static void lower_for(lw_t *lw, kf_node *s)
{
    kf_type t = kf_lower_norm(s->type);
    if (t.kind == KF_TK_VOID) t = kf_lower_norm(s->a->type);
    kf_type b = kf_type_scalar(KF_S_BOOL);
    kf_val start = kf_lower_expr_as(lw, s->a, t);
    kf_val end = loop_bound(lw, s->b, t);
    kf_val step = s->c ? loop_bound(lw, s->c, t) : kf_lower_const(lw, t, kf_lower_const_convert(kf_type_scalar(KF_S_I64), 1, t), s->loc);
    kf_val i = kf_lower_new_val(lw, t, s->name, s->loc);
    kf_lower_mov(lw, i, start, s->loc);
    s->aux = i;
    uint32_t l = open_loop(lw, false, s->loc);
    if (!push_syn(lw, (lw_syn){SYN_LOOP, l, UINT32_MAX, 0, false, {0}})) return;
    kf_val stop;
    if (kf_type_is_float(t)) {
        kf_val lt = kf_lower_def(lw, KF_IR_CMP, KF_OP_LT, t, b, i, end, 0, 0, s->b->loc);
        stop = kf_lower_def(lw, KF_IR_UNOP, KF_OP_NOT, b, b, lt, 0, 0, 0, s->b->loc);
    } else {
        stop = kf_lower_def(lw, KF_IR_CMP, KF_OP_GE, t, b, i, end, 0, 0, s->b->loc);
    }
    break_if(lw, stop, s->b->loc);
    kf_lower_block(lw, s->d);
    lw->syn.len--;
    kf_loc sl = s->c ? s->c->loc : s->loc;
    kf_lower_emit(lw, KF_IR_LATCH, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, sl);
    kf_lower_mov(lw, i, kf_lower_def(lw, KF_IR_BINOP, KF_OP_ADD, t, t, i, step, 0, 0, sl), sl);
    close_loop(lw, s->loc);
}

/* break/continue statements that bind to the loop whose body is `s`
 * (nested loops bind their own). */
static void scan_jumps(const kf_node *s, bool *brk, bool *cont)
{
    for (; s; s = s->next) {
        switch (s->kind) {
        case KF_N_BREAK: *brk = true; break;
        case KF_N_CONTINUE: *cont = true; break;
        case KF_N_BLOCK: scan_jumps(s->a, brk, cont); break;
        case KF_N_IF:
            scan_jumps(s->b, brk, cont);
            scan_jumps(s->c, brk, cont);   /* else block or else-if: a child, not a list */
            break;
        default: break;
        }
    }
}

/* Constant bits of an @unroll bound in the iteration type it. */
static bool unroll_bound(lw_t *lw, const kf_node *e, kf_type it, uint64_t *v)
{
    if (kf_lower_fold(lw, e, it, v)) return true;
    kf_lower_error(lw, e->loc, "@unroll needs compile-time constant bounds and step; "
             "remove @unroll or make this a constant");
    return false;
}

/* The value of bits (masked to it's width, as kf_lower_fold gives them) as
 * an i64, sign-extended for a signed it: an i32 bound of -2 is
 * 0xfffffffe, which as an i64 would be 4294967294 (the loop then ran no
 * iteration). */
static int64_t unroll_signed(kf_type it, uint64_t bits) { return kf_bits_to_i64((kf_scalar)it.scalar, bits); }

static bool unroll_less(kf_type it, uint64_t a, uint64_t b)
{
    return kf_type_is_signed(it) ? unroll_signed(it, a) < unroll_signed(it, b) : a < b;
}

static void unroll_body(lw_t *lw, kf_node *s, uint64_t i, size_t slot, bool cont)
{
    lw->unroll.data[slot].bits = i;
    lw->fold_epoch++;
    size_t sy = lw->syn.len - 1;
    if (cont) lw->syn.data[sy].iter = open_loop(lw, true, s->loc);
    kf_lower_block(lw, s->d);
    if (cont) close_loop(lw, s->loc);
}

static void lower_unroll(lw_t *lw, kf_node *s)
{
    kf_type vt = s->type;
    kf_type it = kf_type_is_untyped(vt) || vt.kind != KF_TK_SCALAR ? kf_type_scalar(KF_S_I64) : vt;
    uint64_t a, b, st = 1;
    if (!unroll_bound(lw, s->a, it, &a) || !unroll_bound(lw, s->b, it, &b)) return;
    if (s->c && !unroll_bound(lw, s->c, it, &st)) return;
    if (st == 0 || (kf_type_is_signed(it) && unroll_signed(it, st) < 0)) {
        kf_lower_error(lw, s->c->loc, "@unroll step must be positive");
        return;
    }
    uint64_t n = 0;
    for (uint64_t i = a; unroll_less(it, i, b) && n <= LW_MAX_UNROLL;) {
        n++;
        uint64_t nx = kf_lower_const_convert(it, i + st, it);
        if (!unroll_less(it, i, nx)) break;   /* the variable would wrap */
        i = nx;
    }
    if (n > LW_MAX_UNROLL) {
        kf_lower_error(lw, s->loc, "@unroll loop has more than %u iterations; remove @unroll", LW_MAX_UNROLL);
        return;
    }
    bool brk = false, cont = false;
    scan_jumps(s->d ? s->d->a : NULL, &brk, &cont);
    if (!KF_VEC_PUSH(&lw->unroll, ((lw_unroll){s, a}))) {
        lw->oom = lw->failed = true;
        return;
    }
    size_t slot = lw->unroll.len - 1;
    uint32_t all = brk ? open_loop(lw, true, s->loc) : UINT32_MAX;
    if (push_syn(lw, (lw_syn){SYN_UNROLL, all, UINT32_MAX, 0, false, {0}})) {
        uint64_t i = a;
        for (uint64_t k = 0; k < n && kf_lower_work(lw, s->loc) && !lw->failed; k++, i = kf_lower_const_convert(it, i + st, it))
            unroll_body(lw, s, i, slot, cont);
        lw->syn.len--;
    }
    if (brk) close_loop(lw, s->loc);
    lw->unroll.len = slot;
    lw->fold_epoch++;
}

static void lower_jump(lw_t *lw, kf_node *s)
{
    bool is_break = s->kind == KF_N_BREAK;
    for (size_t i = lw->syn.len; i-- > 0;) {
        lw_syn y = lw->syn.data[i];
        if (y.kind == SYN_FN) break;
        if (y.kind == SYN_UNROLL) {
            exit_to(lw, is_break ? y.loop : y.iter, s->loc);
            return;
        }
        if (y.loop + 1 != lw->loops.len) {
            kf_lower_error(lw, s->loc, "internal error: %s is not in its innermost loop", is_break ? "break" : "continue");
            return;
        }
        kf_lower_emit(lw, is_break ? KF_IR_BREAK : KF_IR_CONTINUE, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, s->loc);
        return;
    }
    kf_lower_error(lw, s->loc, "'%s' outside a loop", is_break ? "break" : "continue");
}

static void lower_return(lw_t *lw, kf_node *s)
{
    size_t f = lw->syn.len;
    while (f > 0 && lw->syn.data[f - 1].kind != SYN_FN) f--;
    if (f == 0) {   /* kernel: the thread ends */
        kf_lower_emit(lw, KF_IR_RET, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, s->loc);
        return;
    }
    f--;
    if (s->a) {
        kf_val v = kf_lower_expr_as(lw, s->a, lw->syn.data[f].rtype);
        lw_syn *y = &lw->syn.data[f];
        if (y->direct) y->result = v;
        else if (y->result) kf_lower_mov(lw, y->result, v, s->loc);
    }
    if (!s->aux) exit_to(lw, lw->syn.data[f].loop, s->loc);
}

bool kf_lower_work(lw_t *lw, kf_loc loc)
{
    if (++lw->work <= LW_MAX_WORK) return true;
    if (!lw->failed)
        kf_lower_error(lw, loc, "kernel too large to lower: over %u steps once fns are inlined and @unroll loops "
                 "expanded (nested @unroll loops multiply); unroll fewer iterations or call fewer fns", LW_MAX_WORK);
    return false;
}

bool kf_lower_enter(lw_t *lw, kf_loc loc)
{
    if (!kf_lower_work(lw, loc)) return false;
    if (lw->depth >= LW_MAX_DEPTH) {
        kf_lower_error(lw, loc, "statements and expressions nested more than %u levels deep once fn calls are inlined; "
                 "split them up (with 'let' temporaries) or nest fn calls less deeply", LW_MAX_DEPTH);
        return false;
    }
    lw->depth++;
    return true;
}

static void lower_stmt(lw_t *lw, kf_node *s)
{
    if (!kf_lower_enter(lw, s->loc)) return;
    lw->fold_epoch++;
    switch (s->kind) {
    case KF_N_BLOCK: kf_lower_block(lw, s); break;
    case KF_N_LET: lower_let(lw, s); break;
    case KF_N_VAR: lower_var(lw, s); break;
    case KF_N_SHARED: lower_shared(lw, s); break;
    case KF_N_ASSIGN: kf_lower_assign(lw, s); break;
    case KF_N_IF: lower_if(lw, s); break;
    case KF_N_FOR:
        if (s->op) lower_unroll(lw, s);
        else lower_for(lw, s);
        break;
    case KF_N_WHILE: lower_while(lw, s); break;
    case KF_N_BREAK:
    case KF_N_CONTINUE: lower_jump(lw, s); break;
    case KF_N_RETURN: lower_return(lw, s); break;
    case KF_N_EXPR: kf_lower_expr(lw, s->a); break;
    default:
        kf_lower_error(lw, s->loc, "internal error: cannot lower a %s statement", kf_node_kind_names[s->kind]);
        break;
    }
    lw->depth--;
}

/* ---- fn inlining -------------------------------------------------------- */

/* Counts the RETURN statements under s (clearing their tail marks). */
static uint32_t count_returns(kf_node *s)
{
    uint32_t n = 0;
    for (; s; s = s->next) {
        switch (s->kind) {
        case KF_N_RETURN: s->aux = 0; n++; break;
        case KF_N_BLOCK: n += count_returns(s->a); break;
        case KF_N_IF: n += count_returns(s->b) + count_returns(s->c); break;
        case KF_N_FOR: n += count_returns(s->d); break;
        case KF_N_WHILE: n += count_returns(s->b); break;
        default: break;
        }
    }
    return n;
}

/* Marks (aux = 1) the returns after which nothing of the body runs; counts them. */
static uint32_t mark_tail(kf_node *s)
{
    if (!s) return 0;
    if (s->kind == KF_N_BLOCK) {
        kf_node *last = s->a;
        while (last && last->next) last = last->next;
        return mark_tail(last);
    }
    if (s->kind == KF_N_IF) return mark_tail(s->b) + mark_tail(s->c);
    if (s->kind == KF_N_RETURN) {
        s->aux = 1;
        return 1;
    }
    return 0;
}

static bool lvalue_is(const kf_node *lv, const kf_node *p)
{
    while (lv && (lv->kind == KF_N_INDEX || lv->kind == KF_N_MEMBER)) {
        if (lv->a && lv->a->type.kind == KF_TK_BUFFER) return false;   /* a store, not a write of p */
        lv = lv->a;
    }
    return lv && lv->kind == KF_N_NAME && lv->sym == p;
}

/* Whether the statements under s assign to parameter p. */
static bool assigns_to(const kf_node *s, const kf_node *p)
{
    for (; s; s = s->next) {
        switch (s->kind) {
        case KF_N_ASSIGN: if (lvalue_is(s->a, p)) return true; break;
        case KF_N_BLOCK: if (assigns_to(s->a, p)) return true; break;
        case KF_N_IF: if (assigns_to(s->b, p) || assigns_to(s->c, p)) return true; break;
        case KF_N_FOR: if (assigns_to(s->d, p)) return true; break;
        case KF_N_WHILE: if (assigns_to(s->b, p)) return true; break;
        default: break;
        }
    }
    return false;
}

/* Evaluates the arguments in order, then binds the parameters (a parameter
 * the body assigns gets its own copy). */
static bool bind_args(lw_t *lw, const kf_node *call, kf_node *fn)
{
    KF_VEC(kf_val) args = {0};
    const kf_node *a = call->b;
    for (kf_node *p = fn->a; p; p = p->next, a = a ? a->next : NULL) {
        if (!a) {
            kf_lower_error(lw, call->loc, "internal error: too few arguments in call of '%s'", fn->name);
            break;
        }
        kf_type pt = node_type(p);
        kf_val mark = (kf_val)lw->vals.len;
        uint32_t arr = 0;
        if (pt.kind == KF_TK_ARRAY && !kf_lower_array_of(lw, a, &arr)) break;
        kf_val v = pt.kind == KF_TK_ARRAY ? arr : pt.kind == KF_TK_BUFFER ? kf_lower_expr(lw, a) : kf_lower_expr_as(lw, a, pt);
        if (pt.kind != KF_TK_ARRAY && kf_lower_is_fresh(lw, v, mark)) lw->vals.data[v].name = p->name;   /* readable inlined code */
        if (!KF_VEC_PUSH(&args, v)) lw->oom = lw->failed = true;
    }
    size_t i = 0;
    for (kf_node *p = fn->a; p && i < args.len && !lw->failed; p = p->next, i++) {
        kf_val v = args.data[i];
        kf_type pt = node_type(p);
        if (pt.kind != KF_TK_BUFFER && pt.kind != KF_TK_ARRAY && assigns_to(fn->c ? fn->c->a : NULL, p)) {
            kf_val c = kf_lower_new_val(lw, kf_lower_vtype(lw, v), p->name, p->loc);
            kf_lower_mov(lw, c, v, call->loc);
            v = c;
        }
        p->aux = v;
    }
    KF_VEC_FREE(&args);
    return !lw->failed;
}

kf_val kf_lower_inline(lw_t *lw, const kf_node *call)
{
    kf_node *fn = call->sym;
    if (!fn || fn->kind != KF_N_FN) {
        kf_lower_error(lw, call->loc, "internal error: call of something that is not a fn");
        return 0;
    }
    if (lw->inline_depth >= LW_MAX_INLINE_DEPTH) {
        kf_lower_error(lw, call->loc, "fn calls nested more than %u deep (recursion?)", LW_MAX_INLINE_DEPTH);
        return 0;
    }
    if (!bind_args(lw, call, fn)) return 0;
    kf_node *body = fn->c;
    kf_node *last = body ? body->a : NULL;
    while (last && last->next) last = last->next;
    uint32_t nret = count_returns(body ? body->a : NULL);
    uint32_t ntail = mark_tail(body);
    kf_type rt = kf_lower_norm(call->type);
    bool has_value = rt.kind != KF_TK_VOID;
    lw_syn y = {SYN_FN, UINT32_MAX, UINT32_MAX, 0, false, rt};
    y.direct = has_value && nret == 1 && last && last->kind == KF_N_RETURN;
    if (has_value && !y.direct) y.result = kf_lower_new_val(lw, rt, NULL, call->loc);
    bool wrap = nret > ntail;
    if (wrap) y.loop = open_loop(lw, true, call->loc);
    if (!push_syn(lw, y)) return 0;
    lw->inline_depth++;
    kf_lower_block(lw, body);
    lw->inline_depth--;
    lw->fold_epoch++;
    kf_val r = lw->syn.data[lw->syn.len - 1].result;
    lw->syn.len--;
    if (wrap) close_loop(lw, call->loc);
    return r;
}

/* ---- kernels ------------------------------------------------------------ */

static uint32_t count_list(const kf_node *n)
{
    uint32_t c = 0;
    for (; n; n = n->next) c++;
    return c;
}

static void lower_params(lw_t *lw, kf_node *kn, kf_ir_kernel *k)
{
    uint32_t i = 0;
    for (kf_node *p = kn->a; p; p = p->next, i++) {
        kf_type t = node_type(p);
        k->params[i] = (kf_ir_param){p->name, t, p->loc, kf_type_elem_bytes(t)};
        kf_val v = kf_lower_new_val(lw, t, p->name, p->loc);
        if (v && t.kind == KF_TK_BUFFER) lw->vparam.data[v] = i + 1;
        kf_lower_emit(lw, KF_IR_PARAM, 0, t, v, 0, 0, 0, 0, i, p->loc);
        p->aux = v;
    }
}

/* A folded @schedule constant: a block dimension (at least 1) or min_blocks
 * (at least lo = 0: no bound), as sema checked. */
static uint32_t sched_constant(lw_t *lw, const kf_node *e, uint64_t lo)
{
    uint64_t v;
    if (!kf_lower_fold(lw, e, kf_type_scalar(KF_S_U32), &v) || v < lo) {
        kf_lower_error(lw, e->loc, "internal error: a @schedule constant (block, min_blocks) is not a folded constant in range");
        return (uint32_t)lo;
    }
    return (uint32_t)v;
}

static void copy_schedule(lw_t *lw, const kf_node *kn, kf_schedule *sc)
{
    sc->block[0] = 256;   /* no @schedule block: 256 threads */
    sc->block[1] = sc->block[2] = 1;
    sc->loc = kn->loc;
    for (const kf_node *at = kn->d; at; at = at->next) {
        if (!at->name || strcmp(at->name, "schedule") != 0) continue;
        sc->loc = at->loc;
        for (const kf_node *na = at->a; na; na = na->next) {
            const kf_node *e = na->a;
            bool tuple = e && e->kind == KF_N_TUPLE;
            const kf_node *items = tuple ? e->a : e;
            uint32_t n = 0;
            if (na->name && strcmp(na->name, "block") == 0) {
                sc->block[0] = sc->block[1] = sc->block[2] = 1;
                for (const kf_node *x = items; x && n < 3; x = tuple ? x->next : NULL)
                    sc->block[n++] = sched_constant(lw, x, 1);
            } else if (na->name && strcmp(na->name, "grid") == 0) {
                for (const kf_node *x = items; x && n < 3; x = tuple ? x->next : NULL)
                    sc->grid[n++] = x;
                sc->ngrid = n;
            } else if (na->name && strcmp(na->name, "shared") == 0) {
                sc->shared = e;
            } else if (na->name && strcmp(na->name, "min_blocks") == 0) {
                sc->min_blocks = sched_constant(lw, e, 0);   /* 0..32 (0: no bound), as sema checked */
            }
        }
    }
}

/* The kernel's static shared arrays (its own and those of the fns it
 * calls), each from a 16-byte boundary, may hold 48 KiB in all. */
static void check_static_shared(lw_t *lw, const kf_node *kn)
{
    uint64_t total = 0;
    for (size_t i = 0; i < lw->arrays.len; i++) {
        kf_type t = lw->arrays.data[i].type;
        if (t.flags & KF_TF_SHARED) total += ((uint64_t)t.len * kf_type_elem_bytes(t) + 15) & ~UINT64_C(15);
    }
    if (total <= KF_SHARED_STATIC_LIMIT) return;
    kf_buf b = {0};
    for (size_t i = 0, n = 0; i < lw->arrays.len; i++) {
        kf_type t = lw->arrays.data[i].type;
        if (!(t.flags & KF_TF_SHARED) || (t.flags & KF_TF_DYN)) continue;
        kf_buf_printf(&b, "%s%s (%llu bytes)", n++ ? ", " : "", lw->arrays.data[i].name,
                      (unsigned long long)t.len * kf_type_elem_bytes(t));
    }
    kf_lower_error(lw, kn->loc, "kernel '%s' uses %llu bytes of static shared memory, over the 48 KiB (%u bytes) limit: %s; "
             "move the largest into the dynamic array 'shared s: T[]'", kn->name, (unsigned long long)total,
             KF_SHARED_STATIC_LIMIT, b.data ? b.data : "");
    kf_buf_free(&b);
}

/* Drops the NOPs left by unused exit-flag reservations. */
static void drop_nops(lw_t *lw)
{
    size_t j = 0;
    for (size_t i = 0; i < lw->ins.len; i++)
        if (lw->ins.data[i].op != KF_IR_NOP) lw->ins.data[j++] = lw->ins.data[i];
    lw->ins.len = j;
}

static void *arena_copy(lw_t *lw, const void *src, size_t n, size_t size)
{
    if (!n) return NULL;
    void *d = kf_arena_calloc(lw->cx->arena, n, size);
    if (!d) {
        lw->oom = true;
        return NULL;
    }
    memcpy(d, src, n * size);
    return d;
}

static void lw_free(lw_t *lw)
{
    for (size_t i = 0; i < lw->loops.len; i++) KF_VEC_FREE(&lw->loops.data[i].checks);
    KF_VEC_FREE(&lw->ins);
    KF_VEC_FREE(&lw->vals);
    KF_VEC_FREE(&lw->vparam);
    KF_VEC_FREE(&lw->vconst);
    KF_VEC_FREE(&lw->arrays);
    KF_VEC_FREE(&lw->loops);
    KF_VEC_FREE(&lw->syn);
    KF_VEC_FREE(&lw->unroll);
    KF_VEC_FREE(&lw->shared);
}

/* fold_epoch carries on from kernel to kernel: fn bodies are shared. */
static kf_status lower_kernel(kf_pass_ctx *cx, kf_node *kn, kf_ir_kernel *k, uint32_t *fold_epoch)
{
    lw_t lw = {0};
    lw.cx = cx;
    lw.fold_epoch = *fold_epoch;
    k->name = kn->name;
    k->loc = kn->loc;
    k->nparams = count_list(kn->a);
    k->params = k->nparams ? kf_arena_calloc(cx->arena, k->nparams, sizeof *k->params) : NULL;
    lw.params = k->params;
    lw.nparams = k->nparams;
    if (k->nparams && !k->params) return KF_ERR_NOMEM;
    kf_lower_new_val(&lw, kf_type_void(), NULL, kn->loc);   /* value 0: none */
    lower_params(&lw, kn, k);
    kf_lower_block(&lw, kn->c);
    check_static_shared(&lw, kn);
    copy_schedule(&lw, kn, &k->sched);
    drop_nops(&lw);
    k->ins = arena_copy(&lw, lw.ins.data, lw.ins.len, sizeof *lw.ins.data);
    k->nins = (uint32_t)lw.ins.len;
    k->vals = arena_copy(&lw, lw.vals.data, lw.vals.len, sizeof *lw.vals.data);
    k->nvals = (uint32_t)lw.vals.len;
    k->arrays = arena_copy(&lw, lw.arrays.data, lw.arrays.len, sizeof *lw.arrays.data);
    k->narrays = (uint32_t)lw.arrays.len;
    kf_status st = lw.oom ? KF_ERR_NOMEM : lw.failed ? KF_ERR_SOURCE : KF_OK;
    *fold_epoch = lw.fold_epoch + 1;
    lw_free(&lw);
    return st;
}

/* Lowering owns `aux` from here on (the parser used it for nesting depth);
 * fold_miss is cleared too, in case the module is lowered again. */
static void clear_aux(kf_node *n)
{
    for (; n; n = n->next) {
        n->aux = 0;
        n->fold_miss = 0;
        clear_aux(n->a);
        clear_aux(n->b);
        clear_aux(n->c);
        clear_aux(n->d);
    }
}

kf_status kf_lower(kf_pass_ctx *cx, kf_node *module, kf_ir_kernel **kernels, uint32_t *nkernels)
{
    *kernels = NULL;
    *nkernels = 0;
    if (!module || module->kind != KF_N_MODULE) return KF_ERR_SOURCE;
    clear_aux(module);
    uint32_t n = 0;
    for (const kf_node *d = module->a; d; d = d->next) n += d->kind == KF_N_KERNEL;
    kf_ir_kernel *ks = n ? kf_arena_calloc(cx->arena, n, sizeof *ks) : NULL;
    if (n && !ks) return KF_ERR_NOMEM;
    kf_status st = KF_OK;
    uint32_t i = 0, fold_epoch = 1;   /* 0: fold_miss of a node that never missed */
    for (kf_node *d = module->a; d; d = d->next) {
        if (d->kind != KF_N_KERNEL) continue;
        kf_status s = lower_kernel(cx, d, &ks[i++], &fold_epoch);
        if (s == KF_ERR_NOMEM) return s;
        if (s != KF_OK) st = s;
    }
    *kernels = ks;
    *nkernels = n;
    return st;
}
