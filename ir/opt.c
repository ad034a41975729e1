/* The core-IR optimiser (kf_opt): run by kf_compile on every kernel after
 * lowering unless the options ask for -O0 (ir/compile.c). It removes what
 * lowering leaves behind when fns are inlined with constant arguments and
 * loops unrolled: both sides of branches on constants, the one-trip
 * wrapper loops and exit flags of early returns, chains of MOVs, values
 * nobody reads; and it folds constants and turns / % * by powers of two
 * into shifts and masks (ir/opt_fold.c), once, for every back end.
 *
 * The IR is not SSA (ir.h): a `var` is one value written by several MOVs,
 * in loops and branches. So nothing is assumed about a value from its
 * definitions alone; one forward walk over the structured code computes,
 * at every instruction, which definition each value holds there, as a
 * token: the index of the defining instruction when one definition reaches
 * on every path, or a fresh token (a phi) where paths that carry different
 * ones meet. Markers make the meeting points explicit: ENDIF joins its two
 * arms; a LOOP head is entered from before the loop and from the back edge,
 * so every value the loop writes gets a fresh token there (the body is
 * walked once, valid for every iteration); after ENDLOOP each value holds
 * the join over the BREAKs that leave the loop. With that:
 *  - a value is a constant where its token is a CONST instruction, or an
 *    instruction whose operands were constants there (kf_opt_fold: a
 *    vector whose lanes differ, built by INSERTs, is known lane by lane);
 *  - a use of v, whose token is `MOV v, a`, reads a instead when a still
 *    holds the token it held at the MOV (neither was written in between,
 *    on any path, nor round a back edge);
 *  - an instruction whose operands are constants becomes a CONST, or a MOV
 *    of an operand (select on a constant, x + 0); a vector result whose
 *    lanes differ becomes a CONST and INSERTs of constants (INSERTs and
 *    BITCASTs that build such a vector stay as they are); IF on a constant keeps
 *    one side; a loop whose first test is decided on entry is removed; a
 *    loop that never reaches its back edge (every path breaks or returns,
 *    no continue, every break at the top of its body or ending the then
 *    side of a top-level if, as an early return does) loses its markers,
 *    such an if taking the rest of the body as its else side; code after
 *    break/continue/return is removed;
 *  - each use counts one use of the definition its token names (a phi
 *    counts for every definition of the value), and a pure instruction
 *    with no uses is removed, transitively.
 * Rounds repeat until one changes nothing (a folded flag makes the next
 * round's branch constant), then the markers are paired again (kf_ir_link).
 *
 * What is never done: no instruction is moved or duplicated, so barriers,
 * warp operations, atomics and stores keep their place and the conditions
 * they run under. Only instructions that cannot have an effect are removed
 * (kf_opt_pure_op): loads (a buffer or array load the interpreter may report
 * out of bounds or unwritten), integer division by a divisor not known to
 * be non-zero, every memory, warp, barrier or atomic operation, and any op
 * this file does not know (one added later) stay, whether read or not, so
 * an -O0 and an -O1 build report the same faults. A kernel nested deeper
 * than OPT_MAX_DEPTH is left as lowered.
 *
 * The same walk runs in mode OPT_EXACT for the mandatory pass of
 * ir/opt_exact.c, at every -O level: it computes the same constants but
 * changes nothing except the instructions kf_opt_exact_op names, each
 * replaced by its constant (no copy forwarded, no branch decided, no loop
 * or code removed; code after a jump is walked as if reached). */
#include <string.h>

#include "opt.h"

#define OPT_MAX_ROUNDS 32
#define OPT_MAX_DEPTH 256u       /* IF/LOOP nesting the recursive walk goes into */
#define OPT_MAX_DEFS (UINT64_C(1) << 24)   /* entries of the per-structure lists of written values */
#define OPT_MAX_PREFIX 32u       /* instructions before a loop's first test that are evaluated */
#define TOK_ENTRY 0u             /* the value as it was when the kernel started */
#define TOK_MIXED UINT32_MAX     /* accumulator: paths carried different tokens */
#define TOK_UNREAD (UINT32_MAX - 1)   /* optok: an operand whose use is not counted */

/* A LOOP being walked. */
typedef struct {
    uint32_t head;
    uint32_t defs, ndefs;    /* the values it writes: o->defs.data[defs .. defs + ndefs) */
    uint32_t brk, cnt;       /* offsets in o->scratch: tokens joined over its BREAKs / CONTINUEs */
    bool brk_any, cnt_any;   /* a reachable BREAK / CONTINUE was seen */
    uint32_t nested;         /* reachable BREAKs inside IFs of this loop */
    uint32_t ntail;          /* of those, tails of a top-level IF without ELSE (pairs at `tails`) */
    uint32_t tails;          /* offset in o->scratch: (IF, its tail BREAK) per such IF */
    uint32_t if_depth;       /* IFs open between the loop and the walk */
    uint32_t top_exit;       /* the first BREAK/RET at the body's top level, or UINT32_MAX */
} loop_frame;

typedef struct {
    opt_code *code;
    kf_ir_kernel *k;         /* a view of code, linked */
    uint32_t nins, nvals;
    uint32_t *tok;           /* per value: the token it holds at the walk's position */
    uint32_t *optok;         /* per instruction and operand: the token the operand had there */
    uint32_t *uses;          /* per instruction: uses whose token names it */
    uint32_t *phiuses;       /* per value: uses through a phi (count for all its definitions) */
    uint8_t *dead;           /* per instruction: removed at the end of the round */
    uint8_t *pure;           /* per instruction: no effect, may be removed when unread */
    uint8_t *known;          /* per instruction: its result is the constant kv[i] */
    kf_islot *kv;
    uint8_t *mat;            /* per instruction: replaced by kf_opt_const_emit(kv[i]) */
    opt_reduce *red;         /* per instruction: a strength reduction to apply */
    uint8_t *negate;         /* per IF: test the negation of its condition */
    uint32_t *endifs;        /* per instruction: ENDIFs to insert after it */
    uint32_t *dstart, *dlen; /* per IF/LOOP: its written values in `defs` */
    KF_VEC(uint32_t) defs;
    uint32_t *vdef_at;       /* per value + 1: its defining instructions in vdefs */
    uint32_t *vdefs;
    KF_VEC(uint32_t) scratch;
    KF_VEC(loop_frame) loops;
    uint32_t ncap, vcap, vdefs_cap;   /* the tables' sizes: they serve every round */
    uint32_t next_phi;
    bool reach;              /* the walk's position can run */
    bool changed, oom;
    opt_mode mode;
    kf_opt_stats *st;
} opt_t;

static uint32_t walk_range(opt_t *o, uint32_t from, uint32_t to);

/* ---- tokens, copies, constants --------------------------------------------- */

static bool is_def_tok(const opt_t *o, uint32_t t) { return t >= 1 && t <= o->nins; }

static uint32_t new_phi(opt_t *o) { return o->next_phi++; }

/* The value v copies: when v's token is `MOV v, s` and s still holds the
 * token it had at that MOV (same type), s; else 0. */
static kf_val copy_source(const opt_t *o, kf_val v)
{
    uint32_t t = o->tok[v];
    if (!is_def_tok(o, t) || o->dead[t - 1]) return 0;
    const kf_ir_ins *d = &o->k->ins[t - 1];
    kf_val s = d->a[0];
    if (d->op != KF_IR_MOV || s == v || !s) return 0;
    if (!kf_type_eq(o->k->vals[v].type, o->k->vals[s].type) || o->tok[s] != o->optok[(t - 1) * 4]) return 0;
    return s;
}

/* The end of v's chain of copies. */
static kf_val forward(const opt_t *o, kf_val v)
{
    for (unsigned n = 0; n < 64; n++) {
        kf_val s = copy_source(o, v);
        if (!s) break;
        v = s;
    }
    return v;
}

/* v's value at the walk's position when its token is a CONST or an
 * instruction whose result the walk knows (v already at the end of its
 * chain of copies). */
static opt_cval const_here(const opt_t *o, kf_val v)
{
    opt_cval c = {false, {{0, 0}}};
    if (!v) return c;
    uint32_t t = o->tok[v];
    if (!is_def_tok(o, t) || o->dead[t - 1]) return c;
    const kf_ir_ins *d = &o->k->ins[t - 1];
    if (d->op == KF_IR_CONST) c.v = kf_opt_splat_slot(d->type, d->imm), c.known = true;
    else if (o->known[t - 1]) c.v = o->kv[t - 1], c.known = true;
    return c;
}

/* v's value at the walk's position when its token, or that of the value
 * it copies, is a CONST. */
static opt_cval const_of(const opt_t *o, kf_val v)
{
    return const_here(o, v ? forward(o, v) : 0);
}

static void record_use(opt_t *o, uint32_t i, unsigned j)
{
    kf_val v = o->k->ins[i].a[j];
    uint32_t t = o->tok[v];
    o->optok[i * 4 + j] = t;
    if (is_def_tok(o, t)) o->uses[t - 1]++;
    else o->phiuses[v]++;
}

/* ---- one instruction -------------------------------------------------------- */

/* The operand an EXTRACT reads its lane from, following the INSERTs and the
 * SPLAT that built the vector, when that operand still holds the token it
 * had there; else 0. */
static kf_val lane_source(const opt_t *o, const kf_ir_ins *in)
{
    uint32_t t = o->tok[in->a[0]];
    for (unsigned n = 0; n < 16 && is_def_tok(o, t) && !o->dead[t - 1]; n++) {
        const kf_ir_ins *d = &o->k->ins[t - 1];
        const uint32_t *rec = &o->optok[(t - 1) * 4];
        if (d->op == KF_IR_SPLAT) return o->tok[d->a[0]] == rec[0] ? d->a[0] : 0;
        if (d->op != KF_IR_INSERT) return 0;
        if (d->imm == in->imm) return o->tok[d->a[1]] == rec[1] ? d->a[1] : 0;
        t = rec[0];   /* the vector before this INSERT */
    }
    return 0;
}

static void make_mov(kf_ir_ins *in, const kf_ir_kernel *k, kf_val src)
{
    *in = (kf_ir_ins){KF_IR_MOV, 0, k->vals[in->dst].type, in->dst, {src, 0, 0, 0}, 0, in->loc};
}

/* Instruction i computes the constant v: it becomes a CONST, or when v's
 * lanes differ, CONST and INSERTs at the end of the round (compact). */
static void replace_const(opt_t *o, uint32_t i, const kf_islot *v)
{
    kf_ir_ins *in = &o->k->ins[i];
    kf_type t = o->k->vals[in->dst].type;
    uint64_t bits;
    if (kf_opt_splat_bits(t, v, &bits)) *in = (kf_ir_ins){KF_IR_CONST, 0, t, in->dst, {0, 0, 0, 0}, bits, in->loc};
    else o->mat[i] = 1, o->st->vectors++;
    o->st->folded++, o->changed = true;
}

/* What i computes when the walk knows it: the constant of r, or the
 * constant its copied operand (`lane` for an EXTRACT's lane) holds. */
static void note_known(opt_t *o, uint32_t i, opt_fold_result r, const opt_cval cv[4], kf_val lane)
{
    opt_cval c = {r.kind == OPT_CONST, r.v};
    if (r.kind == OPT_COPY) c = r.copy == 4 ? const_of(o, lane) : cv[r.copy];
    o->known[i] = c.known;
    o->kv[i] = c.v;
}

/* Whether OPT_ALL keeps in, known to be a constant whose lanes differ, as
 * it is: an INSERT or BITCAST (what writes such a constant). */
static bool builds_vector(const kf_ir_kernel *k, const kf_ir_ins *in, const kf_islot *v)
{
    uint64_t bits;
    return (in->op == KF_IR_INSERT || in->op == KF_IR_BITCAST) && !kf_opt_splat_bits(k->vals[in->dst].type, v, &bits);
}

/* Folds or simplifies in (operands already forwarded in OPT_ALL) and
 * decides whether it is removable and reducible. */
static void simplify(opt_t *o, uint32_t i)
{
    kf_ir_ins *in = &o->k->ins[i];
    opt_cval cv[4];
    for (unsigned j = 0; j < 4; j++) cv[j] = o->mode == OPT_ALL ? const_here(o, in->a[j]) : const_of(o, in->a[j]);
    opt_fold_result r = kf_opt_fold(o->k, in, cv);
    kf_val lane = in->op == KF_IR_EXTRACT && r.kind == OPT_KEEP ? lane_source(o, in) : 0;
    if (lane && kf_type_eq(o->k->vals[lane].type, o->k->vals[in->dst].type)) r = (opt_fold_result){OPT_COPY, {{0, 0}}, 4};
    note_known(o, i, r, cv, lane);
    if (o->mode == OPT_EXACT) {
        if (r.kind == OPT_CONST && kf_opt_exact_op(o->k, in)) replace_const(o, i, &r.v);
        return;
    }
    if (r.kind == OPT_CONST && !builds_vector(o->k, in, &r.v)) {
        replace_const(o, i, &r.v);
    } else if (r.kind == OPT_COPY) {
        make_mov(in, o->k, r.copy == 4 ? lane : in->a[r.copy]);
        o->st->simplified++, o->changed = true;
    }
    o->pure[i] = kf_opt_pure_op(in) && kf_opt_cannot_fault(o->k, in, cv);
    if (in->op == KF_IR_BINOP && !o->mat[i] && kf_opt_reduce_plan(in, cv, &o->red[i])) o->changed = true;
}

/* The ops this file knows: each reads exactly its non-zero a[] and writes
 * only dst. Any other op (one added after this file) is opaque: it may
 * have effects, and may also write the values it names in a[]. INTRIN is
 * known by its table (ir.h KF_IR_INTRINS: operands in, dst out) and never
 * pure here (kf_opt_pure_op): mma and ldmatrix are warp-collective, cp_async
 * and its waits order shared memory, bfe/bfi may fault; so none is moved,
 * folded or removed, read or not. */
static bool known_op(uint16_t op)
{
    switch (op) {
    case KF_IR_NOP: case KF_IR_CONST: case KF_IR_PARAM: case KF_IR_MOV: case KF_IR_BINOP: case KF_IR_CMP:
    case KF_IR_UNOP: case KF_IR_CVT: case KF_IR_BITCAST: case KF_IR_SELECT: case KF_IR_MATH: case KF_IR_SPLAT:
    case KF_IR_EXTRACT: case KF_IR_INSERT: case KF_IR_SREG: case KF_IR_VIEW: case KF_IR_LOAD: case KF_IR_STORE:
    case KF_IR_ALOAD: case KF_IR_ASTORE: case KF_IR_ATOMIC: case KF_IR_SHFL: case KF_IR_VOTE: case KF_IR_BARRIER:
    case KF_IR_IF: case KF_IR_ELSE: case KF_IR_ENDIF: case KF_IR_LOOP: case KF_IR_LATCH: case KF_IR_ENDLOOP:
    case KF_IR_BREAK: case KF_IR_CONTINUE: case KF_IR_RET: case KF_IR_INTRIN: return true;
    default: return false;
    }
}

/* The values instruction in may write: dst, and for an op this file does
 * not know every value it names. Returns how many (out holds up to 5). */
static unsigned written(const kf_ir_ins *in, kf_val out[5])
{
    unsigned n = 0;
    if (in->dst) out[n++] = in->dst;
    for (unsigned j = 0; j < 4 && !known_op(in->op); j++)
        if (in->a[j] && in->a[j] != in->dst) out[n++] = in->a[j];
    return n;
}

static bool foldable(uint16_t op)
{
    switch (op) {
    case KF_IR_BINOP: case KF_IR_CMP: case KF_IR_UNOP: case KF_IR_CVT: case KF_IR_BITCAST: case KF_IR_SELECT:
    case KF_IR_MATH: case KF_IR_SPLAT: case KF_IR_EXTRACT: case KF_IR_INSERT: return true;
    default: return false;
    }
}

/* Any instruction that is not a marker: forward its operands, simplify,
 * count its uses, and make its destination hold it. */
static void walk_ins(opt_t *o, uint32_t i)
{
    kf_ir_ins *in = &o->k->ins[i];
    if (!known_op(in->op)) {   /* opaque: reads and perhaps writes every value it names */
        kf_val w[5];
        for (unsigned j = 0; j < 4; j++)
            if (in->a[j]) record_use(o, i, j);
        for (unsigned n = written(in, w), j = 0; j < n; j++) o->tok[w[j]] = j == 0 && in->dst ? i + 1 : new_phi(o);
        return;
    }
    for (unsigned j = 0; j < 4 && o->mode == OPT_ALL; j++) {
        kf_val f = in->a[j] ? forward(o, in->a[j]) : 0;
        if (f != in->a[j]) in->a[j] = f, o->st->copies++, o->changed = true;
    }
    if (foldable(in->op)) simplify(o, i);
    else o->pure[i] = kf_opt_pure_op(in);
    if (in->op == KF_IR_MOV && in->a[0] == in->dst && o->mode == OPT_ALL) {   /* v = v: v keeps its token */
        o->dead[i] = 1, o->st->dead++, o->changed = true;
        return;
    }
    bool reduced = o->red[i].kind != OPT_RED_NONE;   /* it will no longer read its constant */
    for (unsigned j = 0; j < 4; j++) {
        if (in->a[j] && !o->mat[i] && !(reduced && j != o->red[i].x)) record_use(o, i, j);
        else o->optok[i * 4 + j] = TOK_UNREAD;
    }
    if (in->dst) o->tok[in->dst] = i + 1;
}

/* ---- structure ------------------------------------------------------------- */

/* Marks [from, to) removed; `unreachable` counts its instructions. */
static void kill_range(opt_t *o, uint32_t from, uint32_t to, bool unreachable)
{
    for (uint32_t x = from; x < to; x++) {
        if (o->dead[x]) continue;
        o->dead[x] = 1;
        o->changed = true;
        if (unreachable) o->st->unreachable++;
    }
}

static bool range_empty(const opt_t *o, uint32_t from, uint32_t to)
{
    for (uint32_t x = from; x < to; x++)
        if (!o->dead[x]) return false;
    return true;
}

static loop_frame *top_loop(opt_t *o) { return o->loops.len ? &o->loops.data[o->loops.len - 1] : NULL; }

/* Pushes n tokens onto the scratch stack; returns their offset. */
static uint32_t scratch_push(opt_t *o, uint32_t n)
{
    if (!KF_VEC_RESERVE(&o->scratch, n)) {
        o->oom = true;
        return 0;
    }
    o->scratch.len += n;
    return (uint32_t)(o->scratch.len - n);
}

/* The values written inside loop head's body (o->dlen[head] of them; an
 * empty table has no storage, so no pointer is formed from NULL). */
static const uint32_t *defs_of(const opt_t *o, uint32_t head)
{
    return o->defs.data ? o->defs.data + o->dstart[head] : NULL;
}

/* An IF on a constant: the side that runs stays, without its markers. */
static uint32_t decided_if(opt_t *o, uint32_t i, kf_ir_flow f, bool cond)
{
    uint32_t then_end = f.mid ? f.mid : f.end;
    o->dead[i] = o->dead[f.end] = 1;
    o->st->branches++, o->changed = true;
    if (cond) {
        walk_range(o, i + 1, then_end);
        if (f.mid) kill_range(o, f.mid, f.end, true);
    } else {
        kill_range(o, i + 1, f.mid ? f.mid + 1 : f.end, true);
        if (f.mid) walk_range(o, f.mid + 1, f.end);
    }
    return f.end + 1;
}

/* Removes the IF's markers when nothing is left in either side, its ELSE
 * when nothing is left in the else side. */
static void drop_empty(opt_t *o, uint32_t i, kf_ir_flow f)
{
    bool then_empty = range_empty(o, i + 1, f.mid ? f.mid : f.end);
    bool else_empty = !f.mid || range_empty(o, f.mid + 1, f.end);
    if (then_empty && else_empty) {
        o->dead[i] = o->dead[f.end] = 1;
        if (f.mid) o->dead[f.mid] = 1;
        uint32_t t = o->optok[i * 4];
        if (is_def_tok(o, t)) o->uses[t - 1]--;
        else o->phiuses[o->k->ins[i].a[0]]--;
        o->st->empty_ifs++, o->changed = true;
    } else if (f.mid && else_empty) {
        o->dead[f.mid] = 1;
        o->changed = true;
    }
}

/* An IF at the top level of the loop being walked, without an ELSE (or
 * with nothing left in it), whose then side ends in a BREAK: recorded,
 * for unwrap_one_trip to make the rest of the loop body its else side. */
static void note_tail(opt_t *o, uint32_t i, kf_ir_flow f)
{
    loop_frame *lf = top_loop(o);
    if (!lf || lf->if_depth || (f.mid && !o->dead[f.mid])) return;
    uint32_t b = f.mid ? f.mid : f.end;
    while (b > i + 1 && o->dead[b - 1]) b--;
    if (b == i + 1 || o->k->ins[b - 1].op != KF_IR_BREAK) return;
    uint32_t at = scratch_push(o, 2);
    if (o->oom) return;
    lf = top_loop(o);
    o->scratch.data[at] = i, o->scratch.data[at + 1] = b - 1;
    lf->ntail++;
}

static uint32_t walk_if(opt_t *o, uint32_t i)
{
    kf_ir_ins *in = &o->k->ins[i];
    kf_ir_flow f = kf_ir_flow_of(o->k, i);
    bool all = o->mode == OPT_ALL;
    kf_val c = all ? forward(o, in->a[0]) : in->a[0];
    if (c != in->a[0]) in->a[0] = c, o->st->copies++, o->changed = true;
    opt_cval cv = const_of(o, c);
    if (cv.known && all) return decided_if(o, i, f, cv.v.u8[0] != 0);
    record_use(o, i, 0);
    uint32_t n = o->dlen[i];
    uint32_t save = scratch_push(o, 2 * n);   /* [0, n): before; [n, 2n): end of the then side */
    if (o->oom) return f.end + 1;
    const uint32_t *defs = defs_of(o, i);
    for (uint32_t j = 0; j < n; j++) o->scratch.data[save + j] = o->tok[defs[j]];
    loop_frame *lf = top_loop(o);
    if (lf) lf->if_depth++;
    walk_range(o, i + 1, f.mid ? f.mid : f.end);
    bool then_reach = o->reach;
    for (uint32_t j = 0; j < n; j++) {
        o->scratch.data[save + n + j] = o->tok[defs[j]];
        o->tok[defs[j]] = o->scratch.data[save + j];
    }
    o->reach = true;
    if (f.mid) walk_range(o, f.mid + 1, f.end);
    if ((lf = top_loop(o))) lf->if_depth--;
    for (uint32_t j = 0; j < n && then_reach; j++) {
        uint32_t tt = o->scratch.data[save + n + j];
        if (!o->reach) o->tok[defs[j]] = tt;
        else if (tt != o->tok[defs[j]]) o->tok[defs[j]] = new_phi(o);
    }
    o->reach = o->reach || then_reach;
    o->scratch.len = save;
    if (!all) return f.end + 1;
    drop_empty(o, i, f);
    if (!then_reach) note_tail(o, i, f);
    return f.end + 1;
}

/* Joins the tokens of the loop's values at a BREAK or CONTINUE into acc. */
static void join_into(opt_t *o, const loop_frame *lf, uint32_t acc, bool first)
{
    const uint32_t *defs = defs_of(o, lf->head);
    for (uint32_t j = 0; j < lf->ndefs; j++) {
        uint32_t *a = &o->scratch.data[acc + j], t = o->tok[defs[j]];
        *a = first ? t : *a == t ? t : TOK_MIXED;
    }
}

/* Gives every value of the loop the token joined in acc. */
static void take_join(opt_t *o, const loop_frame *lf, uint32_t acc)
{
    const uint32_t *defs = defs_of(o, lf->head);
    for (uint32_t j = 0; j < lf->ndefs; j++) {
        uint32_t a = o->scratch.data[acc + j];
        o->tok[defs[j]] = a == TOK_MIXED ? new_phi(o) : a;
    }
}

static void walk_jump(opt_t *o, uint32_t i)
{
    uint16_t op = o->k->ins[i].op;
    loop_frame *lf = top_loop(o);
    if (op == KF_IR_RET) {
        if (lf && !lf->if_depth && lf->top_exit == UINT32_MAX) lf->top_exit = i;
    } else if (!lf || lf->head != kf_ir_flow_of(o->k, i).head) {
        kf_unreachable("break/continue outside the loop being walked");
    } else if (op == KF_IR_BREAK) {
        join_into(o, lf, lf->brk, !lf->brk_any);
        lf->brk_any = true;
        if (lf->if_depth) lf->nested++;
        else if (lf->top_exit == UINT32_MAX) lf->top_exit = i;
    } else {
        join_into(o, lf, lf->cnt, !lf->cnt_any);
        lf->cnt_any = true;
    }
    o->reach = false;
}

static bool is_marker(uint16_t op)
{
    switch (op) {
    case KF_IR_IF: case KF_IR_ELSE: case KF_IR_ENDIF: case KF_IR_LOOP: case KF_IR_LATCH: case KF_IR_ENDLOOP:
    case KF_IR_BREAK: case KF_IR_CONTINUE: case KF_IR_RET: case KF_IR_INTRIN: return true;
    default: return false;
    }
}

/* A value computed by the instructions before a loop's first test. */
typedef struct {
    kf_val v;
    opt_cval c;
} prefix_val;

/* v's constant as the prefix so far (pv) computes it, or as the loop is
 * entered with it. */
static opt_cval prefix_const(const opt_t *o, const prefix_val *pv, uint32_t n, kf_val v)
{
    for (uint32_t j = n; j-- > 0;)
        if (pv[j].v == v) return pv[j].c;
    return const_of(o, v);
}

/* Whether the loop at h leaves at its first test: its body starts with
 * instructions (no markers) and then `IF c BREAK ENDIF` where c, computed
 * from the values the loop is entered with, is true. *test gets the IF. */
static bool zero_trip(opt_t *o, uint32_t h, uint32_t end, uint32_t *test)
{
    prefix_val pv[OPT_MAX_PREFIX];
    uint32_t n = 0, x = h + 1;
    for (; x < end && n < OPT_MAX_PREFIX; x++) {
        const kf_ir_ins *in = &o->k->ins[x];
        if (o->dead[x] || in->op == KF_IR_NOP) continue;
        if (is_marker(in->op)) break;
        if (!known_op(in->op)) return false;   /* it may write values it names */
        if (!in->dst) continue;
        opt_cval cv[4], r = {false, {{0, 0}}};
        for (unsigned j = 0; j < 4; j++) cv[j] = in->a[j] ? prefix_const(o, pv, n, in->a[j]) : r;
        opt_fold_result f = {OPT_KEEP, {{0, 0}}, 0};
        if (in->op == KF_IR_MOV) f.kind = OPT_COPY;
        else if (in->op == KF_IR_CONST) f = (opt_fold_result){OPT_CONST, kf_opt_splat_slot(in->type, in->imm), 0};
        else if (foldable(in->op)) f = kf_opt_fold(o->k, in, cv);
        if (f.kind == OPT_COPY) r = cv[f.copy];
        if (f.kind == OPT_CONST) r = (opt_cval){true, f.v};
        pv[n++] = (prefix_val){in->dst, r};
    }
    const kf_ir_ins *t = &o->k->ins[x];
    if (x + 2 >= end || t->op != KF_IR_IF || o->k->ins[x + 1].op != KF_IR_BREAK || kf_ir_flow_of(o->k, x).end != x + 2)
        return false;
    opt_cval c = prefix_const(o, pv, n, t->a[0]);
    *test = x;
    return c.known && c.v.u8[0];
}

/* After ENDLOOP: a loop that never takes its back edge runs its body at
 * most once. When it is left only by BREAKs at the top of its body and at
 * the end of the then side of top-level IFs without ELSE (an early
 * return), it becomes plain code: each such IF takes the rest of the body
 * as its else side (its BREAK goes, its ENDIF becomes ELSE; when nothing
 * is left on the then side the IF tests the negation instead), all of
 * them close where the body's top-level exit was, and the loop markers go. */
static void unwrap_one_trip(opt_t *o, const loop_frame *lf, kf_ir_flow f, bool back)
{
    if (back || lf->cnt_any || lf->nested != lf->ntail || (f.mid && !o->dead[f.mid])) return;
    uint32_t exit = lf->top_exit;
    if (lf->ntail && exit == UINT32_MAX) return;
    for (uint32_t t = 0; t < lf->ntail; t++) {
        uint32_t i = o->scratch.data[lf->tails + 2 * t], brk = o->scratch.data[lf->tails + 2 * t + 1];
        uint32_t endif = kf_ir_flow_of(o->k, i).end;
        o->dead[brk] = 1;
        if (range_empty(o, i + 1, endif)) o->negate[i] = 1, o->dead[endif] = 1;
        else o->k->ins[endif].op = KF_IR_ELSE;
    }
    if (exit != UINT32_MAX && o->k->ins[exit].op == KF_IR_BREAK) {
        if (lf->ntail) o->k->ins[exit].op = KF_IR_ENDIF, o->endifs[exit] = lf->ntail - 1;
        else o->dead[exit] = 1;
    } else if (exit != UINT32_MAX) {
        o->endifs[exit] = lf->ntail;
    }
    o->dead[f.head] = o->dead[f.end] = 1;
    o->st->one_trip++, o->changed = true;
}

/* The LATCH side of a loop, entered from the body's end and from CONTINUEs;
 * returns whether the back edge is reachable. */
static bool walk_latch(opt_t *o, loop_frame *lf, kf_ir_flow f, bool body_reach)
{
    if (!body_reach && !lf->cnt_any && o->mode == OPT_ALL) {
        kill_range(o, f.mid, f.end, true);
        return false;
    }
    if (lf->cnt_any) {
        if (body_reach) join_into(o, lf, lf->cnt, false);
        take_join(o, lf, lf->cnt);
    }
    o->reach = true;
    walk_range(o, f.mid + 1, f.end);
    return o->reach;
}

static uint32_t walk_loop(opt_t *o, uint32_t h)
{
    kf_ir_flow f = kf_ir_flow_of(o->k, h);
    uint32_t test;
    if (o->mode == OPT_ALL && zero_trip(o, h, f.end, &test)) {
        o->dead[h] = 1;
        kill_range(o, test, f.end + 1, true);
        o->st->zero_trip++, o->changed = true;
        walk_range(o, h + 1, test);   /* the loop's only run: up to its first test */
        return f.end + 1;
    }
    uint32_t n = o->dlen[h];
    const uint32_t *defs = defs_of(o, h);
    for (uint32_t j = 0; j < n; j++) o->tok[defs[j]] = new_phi(o);
    uint32_t acc = scratch_push(o, 2 * n);
    loop_frame fr = {h, o->dstart[h], n, acc, acc + n, false, false, 0, 0, acc + 2 * n, 0, UINT32_MAX};
    if (o->oom || !KF_VEC_PUSH(&o->loops, fr)) {
        o->oom = true;
        return f.end + 1;
    }
    walk_range(o, h + 1, f.mid ? f.mid : f.end);
    bool body_reach = o->reach;
    loop_frame *lf = top_loop(o);
    bool back = f.mid ? walk_latch(o, lf, f, body_reach) : body_reach || lf->cnt_any;
    lf = top_loop(o);
    if (lf->brk_any) take_join(o, lf, lf->brk);
    o->reach = lf->brk_any;
    if (o->mode == OPT_ALL) unwrap_one_trip(o, lf, f, back);
    o->loops.len--;
    o->scratch.len = acc;
    return f.end + 1;
}

static uint32_t walk_range(opt_t *o, uint32_t from, uint32_t to)
{
    uint32_t x = from;
    while (x < to && !o->oom) {
        if (o->dead[x]) {
            x++;
            continue;
        }
        if (!o->reach && o->mode == OPT_EXACT) {
            o->reach = true;   /* nothing is removed: walked as if reached (more paths, fewer constants) */
        } else if (!o->reach) {
            kill_range(o, x, to, true);
            break;
        }
        switch (o->k->ins[x].op) {
        case KF_IR_IF: x = walk_if(o, x); break;
        case KF_IR_LOOP: x = walk_loop(o, x); break;
        case KF_IR_BREAK: case KF_IR_CONTINUE: case KF_IR_RET: walk_jump(o, x++); break;
        case KF_IR_NOP: o->dead[x++] = o->mode == OPT_ALL; break;
        case KF_IR_ELSE: case KF_IR_ENDIF: case KF_IR_LATCH: case KF_IR_ENDLOOP:
            kf_unreachable("structure marker inside a range");
        default: walk_ins(o, x++); break;
        }
    }
    return to;
}

/* ---- per-round tables --------------------------------------------------------- */

static void *zalloc(opt_t *o, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) o->oom = true;
    return p;
}

static bool is_head(uint16_t op) { return op == KF_IR_IF || op == KF_IR_LOOP; }
static bool is_close(uint16_t op) { return op == KF_IR_ENDIF || op == KF_IR_ENDLOOP; }

/* First pass of build_defs: per head the number of writes inside it, per
 * value its number of definitions; the deepest nesting and the total. */
static uint32_t count_defs(opt_t *o, uint64_t *total)
{
    const kf_ir_kernel *k = o->k;
    KF_VEC(uint32_t) open = {0};
    uint32_t depth = 0;
    *total = 0;
    for (uint32_t i = 0; i < k->nins && !o->oom; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (is_close(in->op) && open.len) open.len--;
        kf_val w[5];
        for (unsigned n = written(in, w), j = 0; j < n; j++) {
            for (size_t s = 0; s < open.len; s++) o->dlen[open.data[s]]++;
            *total += open.len;
            o->vdef_at[w[j] + 1]++;
        }
        if (is_head(in->op) && !KF_VEC_PUSH(&open, i)) o->oom = true;
        if (open.len > depth) depth = (uint32_t)open.len;
    }
    KF_VEC_FREE(&open);
    return depth;
}

/* For every IF and LOOP, the values written inside it (each once), and
 * for every value its defining instructions. Returns the deepest nesting;
 * past OPT_MAX_DEPTH (or OPT_MAX_DEFS entries) nothing is built. */
static uint32_t build_defs(opt_t *o)
{
    const kf_ir_kernel *k = o->k;
    uint64_t total;
    uint32_t depth = count_defs(o, &total);
    if (o->oom || depth > OPT_MAX_DEPTH || total > OPT_MAX_DEFS) return OPT_MAX_DEPTH + 1;
    for (uint32_t v = 0; v < o->nvals; v++) o->vdef_at[v + 1] += o->vdef_at[v];
    if (o->vdef_at[o->nvals] > o->vdefs_cap) {
        free(o->vdefs);
        o->vdefs_cap = o->vdef_at[o->nvals];
        o->vdefs = zalloc(o, o->vdefs_cap, sizeof *o->vdefs);
    }
    for (uint32_t i = 0, at = 0; i < k->nins; i++)
        if (is_head(k->ins[i].op)) o->dstart[i] = at, at += o->dlen[i], o->dlen[i] = 0;
    uint32_t *vfill = zalloc(o, o->nvals, sizeof *vfill), *stamp = zalloc(o, o->nvals, sizeof *stamp);
    KF_VEC(uint32_t) open = {0};
    if (!o->oom && !KF_VEC_RESERVE(&o->defs, total)) o->oom = true;
    for (uint32_t i = 0; i < k->nins && !o->oom; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (is_close(in->op) && open.len) open.len--;
        kf_val w[5];
        for (unsigned n = written(in, w), j = 0; j < n; j++) {
            o->vdefs[o->vdef_at[w[j]] + vfill[w[j]]++] = i;
            for (size_t s = 0; s < open.len; s++) {
                uint32_t h = open.data[s];
                o->defs.data[o->dstart[h] + o->dlen[h]++] = w[j];
            }
        }
        if (is_head(in->op) && !KF_VEC_PUSH(&open, i)) o->oom = true;
    }
    for (uint32_t i = 0; i < k->nins && !o->oom; i++) {   /* each head's list once per value */
        if (!is_head(k->ins[i].op) || !o->dlen[i]) continue;   /* (no list: defs.data may be NULL) */
        uint32_t *d = o->defs.data + o->dstart[i], n = 0;
        for (uint32_t j = 0; j < o->dlen[i]; j++)
            if (stamp[d[j]] != i + 1) stamp[d[j]] = i + 1, d[n++] = d[j];
        o->dlen[i] = n;
    }
    free(vfill);
    free(stamp);
    KF_VEC_FREE(&open);
    return depth;
}

static void tables_free(opt_t *o)
{
    free(o->tok), free(o->optok), free(o->uses), free(o->phiuses), free(o->dead), free(o->pure), free(o->red);
    free(o->negate), free(o->endifs), free(o->known), free(o->kv), free(o->mat);
    o->known = o->mat = NULL;
    o->kv = NULL;
    free(o->dstart), free(o->dlen), free(o->vdef_at), free(o->vdefs);
    o->tok = o->optok = o->uses = o->phiuses = o->endifs = o->dstart = o->dlen = o->vdef_at = o->vdefs = NULL;
    o->dead = o->pure = o->negate = NULL;
    o->red = NULL;
    o->ncap = o->vcap = o->vdefs_cap = 0;
    KF_VEC_FREE(&o->defs);
    KF_VEC_FREE(&o->scratch);
    KF_VEC_FREE(&o->loops);
}

/* Zeroes the per-instruction and per-value tables for a round over n
 * instructions and v values, allocating them anew only when they grow
 * (the same tables serve every round). */
static void tables_reset(opt_t *o, uint32_t n, uint32_t v)
{
    if (n > o->ncap || v > o->vcap) {
        tables_free(o);
        o->ncap = n + n / 4 + 16, o->vcap = v + v / 4 + 16;
        n = o->ncap, v = o->vcap;
        o->tok = zalloc(o, v, sizeof *o->tok);
        o->optok = zalloc(o, (size_t)n * 4, sizeof *o->optok);
        o->uses = zalloc(o, n, sizeof *o->uses);
        o->phiuses = zalloc(o, v, sizeof *o->phiuses);
        o->dead = zalloc(o, n, 1);
        o->pure = zalloc(o, n, 1);
        o->known = zalloc(o, n, 1);
        o->kv = zalloc(o, n, sizeof *o->kv);
        o->mat = zalloc(o, n, 1);
        o->red = zalloc(o, n, sizeof *o->red);
        o->negate = zalloc(o, n, 1);
        o->endifs = zalloc(o, n, sizeof *o->endifs);
        o->dstart = zalloc(o, n, sizeof *o->dstart);
        o->dlen = zalloc(o, n, sizeof *o->dlen);
        o->vdef_at = zalloc(o, (size_t)v + 1, sizeof *o->vdef_at);
        return;
    }
    memset(o->tok, 0, v * sizeof *o->tok);
    memset(o->optok, 0, (size_t)n * 4 * sizeof *o->optok);
    memset(o->uses, 0, n * sizeof *o->uses);
    memset(o->phiuses, 0, v * sizeof *o->phiuses);
    memset(o->dead, 0, n);
    memset(o->pure, 0, n);
    memset(o->known, 0, n);
    memset(o->mat, 0, n);
    memset(o->red, 0, n * sizeof *o->red);
    memset(o->negate, 0, n);
    memset(o->endifs, 0, n * sizeof *o->endifs);
    memset(o->dlen, 0, n * sizeof *o->dlen);
    memset(o->vdef_at, 0, ((size_t)v + 1) * sizeof *o->vdef_at);
    o->defs.len = o->scratch.len = o->loops.len = 0;
}

/* ---- dead code -------------------------------------------------------------- */

static bool unread(const opt_t *o, uint32_t i)
{
    const kf_ir_ins *in = &o->k->ins[i];
    return !o->dead[i] && o->pure[i] && in->dst && !o->uses[i] && !o->phiuses[in->dst];
}

/* Removes pure instructions nothing reads, and then what only they read. */
static void remove_unread(opt_t *o)
{
    KF_VEC(uint32_t) work = {0};
    for (uint32_t i = 0; i < o->nins; i++)
        if (unread(o, i) && !KF_VEC_PUSH(&work, i)) o->oom = true;
    while (work.len && !o->oom) {
        uint32_t i = work.data[--work.len];
        if (!unread(o, i)) continue;
        o->dead[i] = 1;
        o->st->dead++, o->changed = true;
        const kf_ir_ins *in = &o->k->ins[i];
        for (unsigned j = 0; j < 4; j++) {
            uint32_t t = o->optok[i * 4 + j];
            if (!in->a[j] || t == TOK_UNREAD) continue;
            if (is_def_tok(o, t)) {
                if (!--o->uses[t - 1] && !KF_VEC_PUSH(&work, t - 1)) o->oom = true;
            } else if (!--o->phiuses[in->a[j]]) {
                for (uint32_t d = o->vdef_at[in->a[j]]; d < o->vdef_at[in->a[j] + 1]; d++)
                    if (!KF_VEC_PUSH(&work, o->vdefs[d])) o->oom = true;
            }
        }
    }
    KF_VEC_FREE(&work);
}

/* Appends `b = !cond` for IF `in`; returns b. */
static kf_val negation(opt_code *c, const kf_ir_ins *in)
{
    kf_type bt = kf_type_scalar(KF_S_BOOL);
    if (!KF_VEC_PUSH(&c->vals, ((kf_ir_value){bt, NULL, in->loc}))) {
        c->oom = true;
        return in->a[0];
    }
    kf_val b = (kf_val)(c->vals.len - 1);
    kf_ir_ins not = {KF_IR_UNOP, KF_OP_NOT, bt, b, {in->a[0], 0, 0, 0}, 0, in->loc};
    if (!KF_VEC_PUSH(&c->ins, not)) c->oom = true;
    return b;
}

/* Drops the removed instructions, expands the strength reductions and the
 * vector constants, and writes the negated IF conditions and inserted
 * ENDIFs of unwrap_one_trip. */
static void compact(opt_t *o)
{
    opt_code *c = o->code;
    kf_ir_ins *old = c->ins.data;
    size_t n = c->ins.len;
    c->ins.data = NULL, c->ins.len = c->ins.cap = 0;
    if (!KF_VEC_RESERVE(&c->ins, n)) c->oom = true;
    for (size_t i = 0; i < n && !c->oom; i++) {
        if (o->dead[i]) continue;
        if (o->negate[i]) old[i].a[0] = negation(c, &old[i]);
        if (o->red[i].kind && old[i].op == KF_IR_BINOP) {
            kf_opt_reduce_emit(c, &old[i], o->red[i]);
            o->st->reduced++;
        } else if (o->mat[i]) {
            kf_opt_const_emit(c, &old[i], &o->kv[i]);
        } else if (!KF_VEC_PUSH(&c->ins, old[i])) {
            c->oom = true;
        }
        kf_ir_ins endif = {KF_IR_ENDIF, 0, kf_type_void(), 0, {0, 0, 0, 0}, 0, old[i].loc};
        for (uint32_t e = 0; e < o->endifs[i]; e++)
            if (!KF_VEC_PUSH(&c->ins, endif)) c->oom = true;
    }
    free(old);
}

/* One walk, the dead code after it, and the new instruction array. Returns
 * whether anything changed. */
static bool opt_round(opt_t *o, const kf_ir_kernel *proto, bool *skip, bool *oom)
{
    opt_code *code = o->code;
    kf_ir_kernel view = *proto;
    view.ins = code->ins.data, view.nins = (uint32_t)code->ins.len;
    view.vals = code->vals.data, view.nvals = (uint32_t)code->vals.len;
    if (!kf_ir_link(&view)) kf_unreachable("the optimiser broke the nesting of control markers");
    o->k = &view, o->nins = view.nins, o->nvals = view.nvals;
    o->next_phi = view.nins + 1;
    o->reach = true, o->changed = false;
    tables_reset(o, view.nins, view.nvals);
    uint32_t depth = o->oom ? 0 : build_defs(o);
    if (depth > OPT_MAX_DEPTH) *skip = true;
    if (!o->oom && !*skip) {
        walk_range(o, 0, view.nins);
        if (o->mode == OPT_ALL) remove_unread(o);
        if (!o->oom) compact(o);
    }
    *oom = o->oom || code->oom;
    o->k = NULL;
    return o->changed && !*skip;
}

kf_status kf_opt_kernel_stats(kf_arena *arena, kf_ir_kernel *k, kf_opt_stats *stats)
{
    return kf_opt_walk(arena, k, OPT_ALL, stats);
}

kf_status kf_opt_walk(kf_arena *arena, kf_ir_kernel *k, opt_mode mode, kf_opt_stats *stats)
{
    kf_opt_stats local;
    kf_opt_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    st->ins_before = st->ins_after = k->nins;
    if (!kf_ir_linked(k)) return KF_OK;   /* not ours to touch: the back ends report it */
    if (!k->nins) return KF_OK;           /* an empty kernel: nothing to do, no tables to size */
    opt_code code = {0};
    bool oom = !KF_VEC_RESERVE(&code.ins, k->nins) || !KF_VEC_RESERVE(&code.vals, k->nvals);
    if (!oom) {
        memcpy(code.ins.data, k->ins, k->nins * sizeof *k->ins), code.ins.len = k->nins;
        memcpy(code.vals.data, k->vals, k->nvals * sizeof *k->vals), code.vals.len = k->nvals;
    }
    bool skip = false, more = !oom;
    opt_t o = {0};
    o.code = &code, o.st = st, o.mode = mode;
    while (more && st->rounds < OPT_MAX_ROUNDS) {
        st->rounds++;
        more = opt_round(&o, k, &skip, &oom);
        if (oom) break;
    }
    tables_free(&o);
    st->skipped = skip;
    kf_ir_ins *ins = NULL;
    kf_ir_value *vals = NULL;
    if (!oom && !skip) {
        ins = kf_arena_calloc(arena, code.ins.len ? code.ins.len : 1, sizeof *ins);
        vals = kf_arena_calloc(arena, code.vals.len ? code.vals.len : 1, sizeof *vals);
        oom = !ins || !vals;
    }
    if (!oom && !skip) {
        /* a kernel optimised to nothing has no tables (data NULL): no memcpy from NULL */
        if (code.ins.len) memcpy(ins, code.ins.data, code.ins.len * sizeof *ins);
        if (code.vals.len) memcpy(vals, code.vals.data, code.vals.len * sizeof *vals);
        k->ins = ins, k->nins = (uint32_t)code.ins.len;
        k->vals = vals, k->nvals = (uint32_t)code.vals.len;
        if (!kf_ir_link(k)) kf_unreachable("the optimiser broke the nesting of control markers");
        st->ins_after = k->nins;
    }
    KF_VEC_FREE(&code.ins);
    KF_VEC_FREE(&code.vals);
    return oom ? KF_ERR_NOMEM : KF_OK;
}

kf_status kf_opt(kf_pass_ctx *cx, kf_ir_kernel *k)
{
    return kf_opt_kernel_stats(cx->arena, k, NULL);
}
