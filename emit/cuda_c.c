/* The CUDA-C emitter: core IR to self-contained CUDA-C that NVRTC compiles
 * (DESIGN.md section 1). One `extern "C" __global__` entry per kernel, with
 * the launch ABI of the notes: one parameter per .kf parameter in order,
 * buffers as `const T* __restrict__` (read-only) or `T* __restrict__`
 * (in a kernel with dep_wait(), only those it reads before the wait),
 * scalars and vectors by value (vectors as 16-byte-or-size aligned structs).
 *
 * A kernel is emitted in passes over its flat instruction array (1-6 in
 * emit/cuda_c_analyze.c, 7 here):
 *   1. check   operands are in range and kf_ir_link's marker structure holds;
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
 *              Every loop is preceded by `#pragma unroll 1`: lowering has
 *              already expanded the @unroll loops, and the rest run as
 *              written on both GPU paths. NVVM's own unrolling gave
 *              tc_gemv_f16 64 registers against the PTX path's 56 (8
 *              blocks an SM instead of 9) and twice its code; with the
 *              pragma, 54 and the same SASS size. A loop is also
 *              preceded by an empty asm ("+r") on each loop-invariant
 *              product (row offset) an index of its loads is made from
 *              (kf_cu_pin_value), which NVVM otherwise recomputes inside
 *              the loop at every load: tc_gemv_f16's main loop went from
 *              126 SASS instructions to 103 (PTX path: 104).
 *
 * For sm_90 every kernel opens with kf_pdl_wait() (griddepcontrol.wait), so
 * the runtime may launch it as a programmatic dependent (emit.h), or calls
 * it where its dep_wait() stands; dep_trigger() is kf_pdl_trigger().
 *
 * With -g (lineinfo) a `#line N "file.kf"` precedes every statement whose
 * text line would otherwise map to another .kf line. The linemap records
 * the .kf location of every emitted line either way. */
#include "cuda_c.h"

#include <stdlib.h>
#include <string.h>

typedef kf_cu_kernel kw;
typedef kf_cu_lines loc_vec;
typedef kf_cu_vinfo vinfo;
#define op_has_dst kf_cu_has_dst

/* ---- small utilities --------------------------------------------------- */

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

/* ---- pass 7: writing ------------------------------------------------------------------- */

/* The C type of an element in memory (buffers, arrays, views): a bool is
 * an unsigned char there, since a byte other than 0 or 1 (a u8 buffer
 * seen `as &[bool]`) is true in the language but undefined as a C++ bool
 * (NVVM used the raw byte for `b as u32`); loads test it (!= 0). */
static const char *mem_type(kw *w, kf_type elem)
{
    if (elem.scalar == KF_S_BOOL && elem.lanes <= 1) return "unsigned char";
    return kf_cu_type(w->c, kf_type_vector((kf_scalar)elem.scalar, elem.lanes));
}

static const char *decl_type(kw *w, kf_type t)
{
    if (t.kind == KF_TK_BUFFER) return kf_cu_str(w->c, "%s%s*", (t.flags & KF_TF_MUT) ? "" : "const ", mem_type(w, t));
    return kf_cu_type(w->c, t);
}

/* A bool element read from memory as a bool (any nonzero byte is true). */
static const char *mem_read(kw *w, kf_type elem, const char *e)
{
    return elem.scalar == KF_S_BOOL && elem.lanes <= 1 ? kf_cu_str(w->c, "(%s != 0)", e) : e;
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

/* Lane l of a bitcast to narrower lanes of 8 or 16 bits, shifted out of
 * its 32-bit word of the operand (KF_CU_H_BITCAST_SPLIT says why). The
 * operand is a named value: a vector result is never folded into. */
static const char *split_lane(kw *w, const kf_ir_ins *in, unsigned l)
{
    kf_scalar s = (kf_scalar)w->k->vals[in->dst].type.scalar;
    unsigned lb = kf_scalar_bytes[s], shift = 8u * (l * lb % 4u);
    const char *word = kf_cu_str(w->c, "kf_word(%s, %uu)", bare(w, in->a[0]), l * lb / 4u);
    if (shift) word = kf_cu_str(w->c, "kf_shr_b32(%s, %uu)", word, shift);
    return kf_cu_str(w->c, "kf_low_bits<%s>(%s)", kf_cu_type(w->c, kf_type_scalar(s)), word);
}

/* v is the f32 scalar constant -0.0, which a select must not hand NVVM and
 * ptxas as a constant (KF_CU_H_FSIGN). */
static bool negzero_f32(const kw *w, kf_val v)
{
    const kf_ir_ins *d = kf_cu_const_def(w, v);
    return d && w->k->vals[v].type.kind == KF_TK_SCALAR && d->type.scalar == KF_S_F32 && (uint32_t)d->imm == 0x80000000u;
}

/* A 32-bit integer 0 - x: written as the negation (kf_neg_i32/_u32, ~x + 1
 * in PTX), since ptxas 13 drops the negation of sub 0, x as of neg.s32
 * inside a three-way VIMNMX3 (max(max(0 - y, 0 - x), ~l) gave max(-y, x,
 * ~l): case regress_nested_minmax). */
static bool zero_minus(const kw *w, const kf_ir_ins *in)
{
    kf_scalar s = (kf_scalar)w->k->vals[in->dst].type.scalar;
    if (in->sub != KF_OP_SUB || (s != KF_S_I32 && s != KF_S_U32)) return false;
    const kf_ir_ins *d = kf_cu_const_def(w, in->a[0]);
    return d && (uint32_t)d->imm == 0;
}

/* An integer min, max or clamp NVVM must not see into (KF_CU_H_IMINMAX): a
 * clamp, or one next to another min, max or select, as an operand or a
 * user (NVVM 13.0 never finishes compiling min(max(0u - y, 0u - x), ~l),
 * nor that max under a select that NVVM makes a min: difftest seed 2303
 * program 15603). A lone min or max stays CUDA's, which NVVM reasons about. */
static bool opaque_minmax(const kw *w, const kf_ir_ins *in)
{
    if (in->sub == KF_BI_CLAMP) return true;
    if (in->sub != KF_BI_MIN && in->sub != KF_BI_MAX) return false;
    return (w->mm[in->a[0]] & MM_DEF) || (w->mm[in->a[1]] & MM_DEF) || (w->mm[in->dst] & MM_USE);
}

/* v's only definition, or NULL (kf_ir_is_negzero) */
static const kf_ir_ins *only_def(const void *ctx, kf_val v)
{
    const kw *w = ctx;
    return w->v[v].ndefs == 1 ? &w->k->ins[w->v[v].def] : NULL;
}

/* A max or select of zero and a min as a pick on an integer predicate of
 * the min's bits (ir.h kf_ir_zero_select), x the operands' texts. */
static const char *zero_pick(kw *w, kf_ir_zero_pick zp, const char *const x[3])
{
    static const char *const name[] = {[KF_ZP_GT] = "gt", [KF_ZP_LT] = "lt", [KF_ZP_GE] = "ge", [KF_ZP_LE] = "le",
                                       [KF_ZP_PLUS] = "plus"};
    kf_cu_need(w->c, KF_CU_H_DMINMAX);
    return kf_cu_str(w->c, "kf_zpick_%s(%s, %s, %s)", name[zp.p], x[zp.m], x[zp.t], x[zp.f]);
}

/* Whether a float min, max or clamp has a constant -0.0 operand: as
 * compares and selects, as on the PTX path (ir.h kf_ir_is_negzero). */
static bool negzero_operand(const kw *w, const kf_ir_ins *in)
{
    if (in->sub != KF_BI_MIN && in->sub != KF_BI_MAX && in->sub != KF_BI_CLAMP) return false;
    for (int a = 0; a < 3; a++)
        if (kf_ir_is_negzero(w->k, in->a[a], only_def, w)) return true;
    return false;
}

/* Expression of lane l of a per-lane instruction. */
static const char *lane_expr(kw *w, const kf_ir_ins *in, unsigned l)
{
    const kf_ir_value *vals = w->k->vals;
    kf_scalar s = (kf_scalar)vals[in->dst].type.scalar;
    kf_scalar sa = in->a[0] ? (kf_scalar)vals[in->a[0]].type.scalar : s;
    switch (in->op) {
    case KF_IR_BINOP:
        if (zero_minus(w, in)) return kf_cu_unop(w->c, KF_OP_NEG, s, lane(w, in->a[1], l));
        if (in->sub == KF_OP_SUB && (s == KF_S_U32 || s == KF_S_I32) && (w->mm[in->dst] & MM_USE) &&
            !kf_cu_const_def(w, in->a[1])) {
            /* a - b (b not a constant) that an integer min, max, clamp or select reads (MM_USE):
             * a + (~b + 1), as the PTX path (ptxas 13 negates the wrong side of a subtraction it
             * fuses into a VIADDMNMX: difftest seed 2309 program 10046) */
            const char *nb = kf_cu_unop(w->c, KF_OP_NEG, s, lane(w, in->a[1], l));
            return s == KF_S_U32 ? kf_cu_str(w->c, "%s + %s", lane(w, in->a[0], l), nb)
                                 : kf_cu_str(w->c, "(int)((unsigned)%s + (unsigned)%s)", lane(w, in->a[0], l), nb);
        }
        return kf_cu_binop(w->c, (kf_op)in->sub, s, lane(w, in->a[0], l), lane(w, in->a[1], l));
    case KF_IR_UNOP: return kf_cu_unop(w->c, (kf_op)in->sub, s, lane(w, in->a[0], l));
    case KF_IR_CVT: return kf_cu_cvt(w->c, sa, s, lane(w, in->a[0], l));
    case KF_IR_SPLAT: return val(w, in->a[0]);
    case KF_IR_BITCAST: return split_lane(w, in, l);
    case KF_IR_CONST: return kf_cu_literal(w->c, s, in->imm);   /* a vector CONST is imm in every lane */
    case KF_IR_MATH: {
        const char *x[3] = {NULL, NULL, NULL};
        for (int a = 0; a < 3; a++)
            if (in->a[a]) x[a] = lane(w, in->a[a], l);
        kf_ir_zero_pick zp = kf_ir_zero_select(w->k, in, only_def, w);
        if (zp.p != KF_ZP_NONE) return zero_pick(w, zp, x);   /* max(min(x, c), 0.0) */
        return kf_cu_math(w->c, (kf_builtin)in->sub, sa, x,
                          kf_scalar_class[sa] != 'f' ? opaque_minmax(w, in) : negzero_operand(w, in));
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

/* Shuffles and votes go through the helpers of KF_CU_H_SHFL_GUARD with
 * kf_wn, the number of lanes of this warp that exist (declared at the top
 * of every kernel with warp operations; see that helper for the table). */
static const char *warp_expr(kw *w, const kf_ir_ins *in)
{
    const char *x = val(w, in->a[0]);
    kf_cu_need(w->c, KF_CU_H_SHFL_GUARD);
    switch (in->sub) {
    case KF_BI_SHFL: return kf_cu_str(w->c, "kf_shfl(%s, %s, kf_wn)", bare(w, in->a[0]), bare(w, in->a[1]));
    case KF_BI_SHFL_XOR: return kf_cu_str(w->c, "kf_shfl_xor(%s, %s, kf_wn)", bare(w, in->a[0]), bare(w, in->a[1]));
    case KF_BI_SHFL_UP: return kf_cu_str(w->c, "kf_shfl_up(%s, %s, kf_wn)", bare(w, in->a[0]), bare(w, in->a[1]));
    case KF_BI_SHFL_DOWN: return kf_cu_str(w->c, "kf_shfl_down(%s, %s, kf_wn)", bare(w, in->a[0]), bare(w, in->a[1]));
    case KF_BI_BALLOT: return kf_cu_str(w->c, "__ballot_sync(kf_warp_mask(kf_wn), %s)", x);
    case KF_BI_ANY: return kf_cu_str(w->c, "__any_sync(kf_warp_mask(kf_wn), %s) != 0", x);
    case KF_BI_ALL: return kf_cu_str(w->c, "__all_sync(kf_warp_mask(kf_wn), %s) != 0", x);
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

/* A load of a vector of bytes (u8xN, i8xN, N = 2, 4, 8, 16) reads the
 * word(s) that hold it and splits them by shifts (KF_CU_H_BYTES says why;
 * a memcpy bitcast becomes an ld.v2.u8 again). NULL for any other type. A
 * load only: the result is not an lvalue (a store through it was dropped:
 * seed 9). own (a mixed shared array's, N <= 4): the word by kf_lds_narrow,
 * since NVVM merged an i8x4's word with a neighbouring u32 load into one
 * ld.shared.v2.u32 whose used_bytes_mask called the u32 unused, which it
 * then read (difftest seed 3810 program 3417). */
static const char *byte_vector_load(kw *w, kf_type t, const char *base, const char *idx, bool nc, bool own)
{
    static const char *const words[17] = {[2] = "unsigned short", [4] = "unsigned", [8] = "unsigned long long",
                                          [16] = "ulonglong2"};
    if (t.kind != KF_TK_VECTOR || kf_scalar_bytes[t.scalar] != 1 || t.lanes > 16 || !words[t.lanes]) return NULL;
    kf_cu_need(w->c, KF_CU_H_BYTES);
    if (own && t.lanes <= 4) {   /* a mixed shared array's: its word by an ld.shared of its own */
        kf_cu_need(w->c, KF_CU_H_LDS_NARROW);
        return kf_cu_str(w->c, "kf_bytes<%s>(kf_lds_narrow(&((const %s*)%s)[%s]))", kf_cu_type(w->c, t), words[t.lanes],
                         base, idx);
    }
    if (!nc) return kf_cu_str(w->c, "kf_bytes<%s>(((const %s*)%s)[%s])", kf_cu_type(w->c, t), words[t.lanes], base, idx);
    kf_cu_need(w->c, KF_CU_H_LDG);
    return kf_cu_str(w->c, "kf_bytes<%s>(kf_ldg((const %s*)%s + (%s)))", kf_cu_type(w->c, t), words[t.lanes], base, idx);
}

/* Whether parameter p, a buffer, is declared __restrict__: not when the
 * kernel calls dep_wait() and p is read after it (it may be the kernel
 * before's output: NVVM must make no ld.global.nc of it that ptxas could
 * move above the wait; emit/ptx_ops.c load_space). */
static bool param_restrict(const kw *w, uint32_t p)
{
    return !w->dep_wait || (p < 64 && (w->early >> p & 1));
}

/* Whether the buffer value b is read-only and its parameter declared
 * __restrict__ (as the PTX path's load_space decides .nc): its loads may be
 * kf_ldg, an ld.global.nc of our own. */
static bool nc_buffer(const kw *w, kf_val b)
{
    if (b >= w->k->nvals || (w->k->vals[b].type.flags & KF_TF_MUT)) return false;
    uint32_t p = kf_ir_buffer_param(w->k, b);
    return p < w->k->nparams && param_restrict(w, p);
}

/* Whether the kernel loads from a global buffer that nc_buffer() rejects
 * (a &mut one, mostly). Then every read-only load is kf_ldg, our own
 * ld.global.nc: NVVM merges two loads whose values meet (an if/else var, a
 * select's arms, and the same through arithmetic: `x = ro[k] * 3 + 1` and
 * `x = p[i] * 3 + 1` sink into one load of the selected address) and keeps
 * the read-only side's .nc on the merged load, which reads stale data after
 * the kernel's own store (difftest seed 2517 program 790). A kf_ldg never
 * merges with a plain load. Kernels that load only read-only buffers keep
 * NVVM's own .nc inference. */
static bool loads_written_buffer(const kw *w)
{
    for (uint32_t i = 0; i < w->k->nins; i++)
        if (w->k->ins[i].op == KF_IR_LOAD && !w->dead[i] && !nc_buffer(w, w->k->ins[i].a[0])) return true;
    return false;
}

/* Element idx of the array an ALOAD/ASTORE names, through a view of
 * another element type as `((T*)name)[idx]`: an lvalue. */
static const char *array_elem(kw *w, const kf_ir_ins *in)
{
    kf_type at = w->k->arrays[in->imm].type;
    const char *idx = bare(w, in->a[0]);
    if (at.scalar == in->type.scalar && at.lanes == in->type.lanes) return kf_cu_str(w->c, "%s[%s]", w->anames[in->imm], idx);
    return kf_cu_str(w->c, "((%s*)%s)[%s]", mem_type(w, in->type), w->anames[in->imm], idx);
}

/* The address of element idx of array ai seen as `elem` (its own type, or
 * a view's): `&name[idx]` or `&((T*)name)[idx]`. */
static const char *array_addr(kw *w, uint32_t ai, kf_type elem, kf_val idx)
{
    kf_type at = w->k->arrays[ai].type;
    const char *i = bare(w, idx);
    if (at.scalar == elem.scalar && at.lanes == elem.lanes) return kf_cu_str(w->c, "&%s[%s]", w->anames[ai], i);
    return kf_cu_str(w->c, "&((%s*)%s)[%s]", mem_type(w, elem), w->anames[ai], i);
}

/* dot4, bfe, bfi, prmt; mma, ldmatrix, cp_async and the copy groups. */
static const char *intrin_expr(kw *w, const kf_ir_ins *in)
{
    const char *a[4] = {NULL, NULL, NULL, NULL};
    kf_type ts[4] = {{0}};
    unsigned n, f;
    if (!kf_ir_intrin_info(in->sub, &n, &f)) return "?";
    for (unsigned j = 0; j < n && j < 4; j++) a[j] = bare(w, in->a[j]), ts[j] = w->k->vals[in->a[j]].type;
    if (f & KF_II_PURE) return kf_cu_intrin(w->c, in, a, ts);
    const char *elem = NULL;
    if (f & KF_II_ARRAY) {
        bool ldsm = kf_builtin_ldmatrix((kf_builtin)in->sub, NULL) != 0;
        elem = array_addr(w, (uint32_t)in->imm, ldsm ? kf_type_elem(in->type) : in->type, in->a[0]);
        if (!ldsm) a[1] = kf_cu_str(w->c, "&%s[%s]", val(w, in->a[1]), bare(w, in->a[2]));   /* cp_async's source */
    }
    return kf_cu_tensor(w->c, in, elem, a, ts);
}

/* The packed-pairs call of an f16/bf16 vector operation (kf_cu_packed). */
static const char *packed_expr(kw *w, const kf_ir_ins *in)
{
    const char *a[3] = {NULL, NULL, NULL};
    for (int j = 0; j < 3; j++)
        if (in->a[j]) a[j] = bare(w, in->a[j]);
    return kf_cu_packed_call(w->c, in, w->k->vals[in->dst].type, a);
}

/* Whether every live read of v takes it back as 32-bit words (an mma or
 * dot4 operand, a packed f16/bf16 pair operation), so no lane of it is
 * ever split off a word. */
static bool read_as_words(const kw *w, kf_val v)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        bool mma_dot4 = in->op == KF_IR_INTRIN && (in->sub == KF_BI_MMA || in->sub == KF_BI_DOT4);
        for (int a = 0; a < kf_ir_op_nargs[in->op]; a++)
            if (in->a[a] == v && !((mma_dot4 && a < 2) || kf_cu_packed(in))) return false;
    }
    return true;
}

/* bitcast(T, x): to lanes of 8 or 16 bits narrower than x's, lane by lane
 * (split_lane) unless the result is only read as words; else the same bits
 * copied (kf_bitcast). */
static const char *bitcast_expr(kw *w, const kf_ir_ins *in)
{
    const kf_ir_value *vals = w->k->vals;
    unsigned db = kf_scalar_bytes[vals[in->dst].type.scalar], sb = kf_scalar_bytes[vals[in->a[0]].type.scalar];
    if (db <= 2 && db < sb && !read_as_words(w, in->dst)) {
        kf_cu_need(w->c, KF_CU_H_BITCAST_SPLIT);
        return vector_braces(w, in);
    }
    kf_type st = vals[in->a[0]].type, dt = vals[in->dst].type;
    if (st.kind == KF_TK_SCALAR && (st.scalar == KF_S_F16 || st.scalar == KF_S_BF16) &&
        (dt.scalar == KF_S_I16 || dt.scalar == KF_S_U16) && (w->feeds[in->dst] & KF_IR_FEEDS_INT_OP)) {
        kf_cu_need(w->c, KF_CU_H_HALF_BITS);
        return kf_cu_str(w->c, "kf_half_bits<%s>(%s)", decl_type(w, dt), bare(w, in->a[0]));
    }
    kf_cu_need(w->c, KF_CU_H_BITCAST);
    return kf_cu_str(w->c, "kf_bitcast<%s>(%s)", decl_type(w, dt), bare(w, in->a[0]));
}

/* The right-hand side of a single-statement value instruction. */
static const char *rhs(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    kf_cu *c = w->c;
    const kf_ir_value *vals = w->k->vals;
    if (kf_cu_packed(in)) return packed_expr(w, in);
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
    case KF_IR_BITCAST: return bitcast_expr(w, in);
    case KF_IR_SELECT: {
        kf_ir_zero_pick zp = kf_ir_zero_select(w->k, in, only_def, w);
        if (zp.p != KF_ZP_NONE) {   /* select(m > 0.0, m, 0.0) of a min */
            const char *x[3] = {NULL, val(w, in->a[1]), val(w, in->a[2])};
            return zero_pick(w, zp, x);
        }
        if (negzero_f32(w, in->a[1]) || negzero_f32(w, in->a[2])) {
            kf_cu_need(c, KF_CU_H_FSIGN);
            return kf_cu_str(c, "kf_sel_f32(%s, %s, %s)", val(w, in->a[0]), val(w, in->a[1]), val(w, in->a[2]));
        }
        return kf_cu_str(c, "%s ? %s : %s", val(w, in->a[0]), val(w, in->a[1]), val(w, in->a[2]));
    }
    case KF_IR_EXTRACT: return kf_cu_str(c, "%s.v[%u]", val(w, in->a[0]), (unsigned)in->imm);
    case KF_IR_SREG: return kf_cu_sreg(w, in->imm);
    case KF_IR_VIEW: return kf_cu_str(c, "(%s)%s", decl_type(w, vals[in->dst].type), val(w, in->a[0]));
    case KF_IR_LOAD: {
        bool nc = w->explicit_nc && nc_buffer(w, in->a[0]);
        const char *bytes = byte_vector_load(w, in->type, val(w, in->a[0]), bare(w, in->a[1]), nc, false);
        if (bytes) return bytes;
        if (!nc) return mem_read(w, in->type, kf_cu_str(c, "%s[%s]", val(w, in->a[0]), bare(w, in->a[1])));
        kf_cu_need(c, KF_CU_H_LDG);
        return mem_read(w, in->type, kf_cu_str(c, "kf_ldg(%s + (%s))", val(w, in->a[0]), bare(w, in->a[1])));
    }
    case KF_IR_ALOAD: {
        uint8_t mixed = w->amixed[in->imm];
        uint32_t eb = kf_type_elem_bytes(in->type);
        bool scalar = in->type.kind == KF_TK_SCALAR;
        bool own = (mixed & AM_MIXED) && (eb <= 2 || ((mixed & AM_LOADS) && scalar && eb <= 8));
        const char *bytes = byte_vector_load(w, in->type, w->anames[in->imm], bare(w, in->a[0]), false,
                                             (mixed & AM_MIXED) && eb <= 4);
        if (bytes) return bytes;
        /* a local array holds only the bools the kernel stored (it has no views) */
        bool local = !(w->k->arrays[in->imm].type.flags & (KF_TF_SHARED | KF_TF_DYN));
        if (local) return array_elem(w, in);
        if (own) {
            kf_cu_need(c, KF_CU_H_LDS_NARROW);
            return mem_read(w, in->type, kf_cu_str(c, "kf_lds_narrow(%s)", array_addr(w, (uint32_t)in->imm, in->type,
                                                                                   in->a[0])));
        }
        return mem_read(w, in->type, array_elem(w, in));
    }
    case KF_IR_INTRIN: return intrin_expr(w, in);
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
        if (vec && !kf_cu_packed(in)) emit_lanes(w, i);
        else assign(w, i, rhs(w, i));
        break;
    case KF_IR_PARAM:
        if (w->v[in->dst].kind != VK_PARAM) assign(w, i, rhs(w, i));
        break;
    case KF_IR_INSERT: emit_insert(w, i); break;
    default: assign(w, i, rhs(w, i)); break;
    }
}

static kf_op inverse_cmp(uint16_t op)
{
    switch (op) {
    case KF_OP_LT: return KF_OP_GE;
    case KF_OP_GE: return KF_OP_LT;
    case KF_OP_LE: return KF_OP_GT;
    case KF_OP_GT: return KF_OP_LE;
    case KF_OP_EQ: return KF_OP_NE;
    default: return KF_OP_EQ;
    }
}

/* The loop-continues condition: the negation of the break test `if (c)`.
 * Integer comparisons invert (i >= n -> i < n); a float one may be NaN, so
 * it keeps `!(...)`. */
static const char *loop_condition(kw *w, uint32_t h)
{
    const kf_ir_kernel *k = w->k;
    kf_val c = k->ins[h].a[0];
    const vinfo *vi = &w->v[c];
    if (vi->kind == VK_FOLD && !vi->name) {
        const kf_ir_ins *d = &k->ins[vi->def];
        kf_scalar s = d->a[0] ? (kf_scalar)k->vals[d->a[0]].type.scalar : KF_S_NONE;
        if (d->op == KF_IR_CMP && kf_scalar_class[s] != 'f')
            return kf_cu_cmp(w->c, inverse_cmp(d->sub), s, val(w, d->a[0]), val(w, d->a[1]));
        if (d->op == KF_IR_UNOP && d->sub == KF_OP_NOT) return bare(w, d->a[0]);
    }
    return kf_cu_str(w->c, "!%s", val(w, c));
}

/* One pin line for the C lvalue `what`, unless `pinned` (the npinned
 * written so far at this loop) has it. */
static void write_pin(kw *w, const char **pinned, uint32_t *npinned, const char *what, kf_scalar s)
{
    for (uint32_t p = 0; p < *npinned; p++)
        if (!strcmp(pinned[p], what)) return;
    pinned[(*npinned)++] = what;
    wline(w, no_loc, "asm(\"\" : \"+%s\"(%s));", kf_scalar_bytes[s] == 8 ? "l" : "r", what);
}

/* The loop-invariant integers from which loop l computes the index of a
 * global load, pinned where it starts (an empty asm: NVVM cannot recompute
 * them inside; kf_cu_pin_value says why), in the order of their first read. */
static void write_loop_pins(kw *w, uint32_t l)
{
    const kf_ir_kernel *k = w->k;
    uint32_t end = kf_cu_end(w, l), npinned = 0;
    const char **pinned = kf_arena_calloc(&w->c->scratch, 4 * (size_t)(end - l) + 1, sizeof *pinned);
    bool *addr = kf_arena_calloc(&w->c->scratch, k->nvals + 1, sizeof *addr);
    if (!pinned || !addr) {
        w->c->failed = true;
        return;
    }
    for (uint32_t i = end; i-- > l + 1;) {   /* backwards: the index values, then what makes them */
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        if (in->op == KF_IR_LOAD) addr[in->a[1]] = true;
        else if (kf_cu_pure_arith(in->op) && addr[in->dst])
            for (int a = 0; a < kf_ir_op_nargs[in->op]; a++) addr[in->a[a]] = true;
    }
    for (uint32_t i = l + 1; i < end; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        if (in->op == KF_IR_ALOAD && addr[in->dst] && kf_cu_pin_array(w, l, (uint32_t)in->imm))
            write_pin(w, pinned, &npinned, array_elem(w, in), (kf_scalar)in->type.scalar);
        for (int a = 0; a < kf_ir_op_nargs[in->op]; a++)
            if (in->a[a] && addr[in->a[a]] && kf_cu_pin_value(w, l, in->a[a]))
                write_pin(w, pinned, &npinned, val(w, in->a[a]), (kf_scalar)k->vals[in->a[a]].type.scalar);
    }
}

static void write_loop_header(kw *w, uint32_t l)
{
    const kf_ir_kernel *k = w->k;
    const char *cond = loop_condition(w, kf_cu_next_written(w, l + 1));
    kf_buf latch = {0};
    uint32_t lt = kf_cu_mid(w, l);
    for (uint32_t i = lt ? lt + 1 : k->nins; i < kf_cu_end(w, l); i++) {
        if (!kf_cu_written(w, i)) continue;
        if (latch.len) kf_buf_puts(&latch, ", ");
        kf_buf_puts(&latch, kf_cu_str(w->c, "%s = %s", val(w, k->ins[i].dst), rhs(w, i)));
    }
    if (latch.oom) w->c->failed = true;
    const char *init = "";
    if (w->init[l]) {
        uint32_t d = w->init[l] - 1;
        kf_val v = k->ins[d].dst;
        init = kf_cu_str(w->c, "%s %s = %s", decl_type(w, k->vals[v].type), val(w, v), rhs(w, d));
    }
    /* the init declares the loop variable: only `while` when there is none
       (a latch made unreachable by a body that always leaves is not written) */
    wline(w, no_loc, "#pragma unroll 1");
    if (latch.len || w->init[l]) wline(w, k->ins[l].loc, "for (%s; %s; %s) {", init, cond, latch.len ? latch.data : "");
    else wline(w, k->ins[l].loc, "while (%s) {", cond);
    kf_buf_free(&latch);
    w->depth++;
}

/* Programmatic dependent launch (emit.h, kf_emit_pdl_wait): the first
 * statement waits for the grids this one depends on (the helper's "memory"
 * clobber keeps every load after it); with pdl_trigger the next may then
 * start. A kernel with dep_wait() waits there instead (write_dep). The
 * helpers are empty below sm_90, so the text stays valid for compute_80 too. */
static void write_wait(kw *w, kf_loc loc)
{
    kf_cu_need(w->c, KF_CU_H_PDL);
    wline(w, loc, "kf_pdl_wait();");
    if (!w->c->o->pdl_trigger) return;
    kf_cu_need(w->c, KF_CU_H_PDL_TRIGGER);
    wline(w, no_loc, "kf_pdl_trigger();");
}

static void write_pdl(kw *w)
{
    if (kf_emit_pdl_wait(w->c->o) && !kf_ir_places_dep_wait(w->k)) write_wait(w, no_loc);
}

/* dep_wait() and dep_trigger() where the kernel puts them (sm_90; nothing
 * below, as the entry's wait). */
static void write_dep(kw *w, const kf_ir_ins *in)
{
    if (!kf_emit_pdl_wait(w->c->o)) return;
    if (in->sub == KF_BI_DEP_WAIT) {
        write_wait(w, in->loc);
        return;
    }
    kf_cu_need(w->c, KF_CU_H_PDL_TRIGGER);
    wline(w, in->loc, "kf_pdl_trigger();");
}

static void emit_ins(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    switch (in->op) {
    case KF_IR_NOP: break;
    case KF_IR_STORE:
        wline(w, in->loc, "%s[%s] = %s;", val(w, in->a[0]), bare(w, in->a[1]), bare(w, in->a[2]));
        break;
    case KF_IR_ASTORE: wline(w, in->loc, "%s = %s;", array_elem(w, in), bare(w, in->a[1])); break;
    case KF_IR_BARRIER: wline(w, in->loc, "__syncthreads();"); break;
    case KF_IR_INTRIN:
        if (in->sub == KF_BI_DEP_WAIT || in->sub == KF_BI_DEP_TRIGGER) write_dep(w, in);
        else if (in->dst) emit_value_op(w, i);
        else wline(w, in->loc, "%s;", intrin_expr(w, in));   /* cp_async and the copy groups */
        break;
    case KF_IR_RET: wline(w, in->loc, "return;"); break;
    case KF_IR_BREAK: wline(w, in->loc, "break;"); break;
    case KF_IR_CONTINUE:
        if (kf_cu_mid(w, i) && !w->header[kf_cu_head(w, i)])
            wline(w, in->loc, "goto kf_latch_%u;", w->label[kf_cu_head(w, i)]);
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
        write_loop_pins(w, i);
        if (w->header[i]) {
            write_loop_header(w, i);
            break;
        }
        wline(w, no_loc, "#pragma unroll 1");
        wline(w, in->loc, "for (;;) {");
        w->depth++;
        if (kf_cu_mid(w, i)) {
            wline(w, no_loc, "{");
            w->depth++;
        }
        break;
    case KF_IR_LATCH: {
        uint32_t lp = kf_cu_head(w, i);
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
    wline(w, k->loc, "/* kernel %s (%s:%u) */", k->name, kf_cu_comment(w->c, k->loc.file ? k->loc.file : "?"), k->loc.line);
    if (kf_cu_reserved(k->name)) {
        kf_diag_error(w->c->diags, k->loc, "kernel name '%s' is reserved in CUDA-C (a C++ keyword, CUDA name or kf_ prefix): rename the kernel",
                      k->name);
        w->c->failed = true;
    }
    if (b > 1024) {
        kf_diag_error(w->c->diags, s->loc, "block of %llu threads exceeds the CUDA limit of 1024: make the @schedule block smaller",
                      (unsigned long long)b);
        w->c->failed = true;
    }
    if (s->block[0] && s->min_blocks)
        wline(w, k->loc, "extern \"C\" __global__ void __launch_bounds__(%llu, %u)", (unsigned long long)b, s->min_blocks);
    else if (s->block[0]) wline(w, k->loc, "extern \"C\" __global__ void __launch_bounds__(%llu)", (unsigned long long)b);
    else wline(w, k->loc, "extern \"C\" __global__ void");   /* no block known: no bound */
    kf_buf_printf(o, "%s(", k->name);
    for (uint32_t p = 0; p < k->nparams; p++) {
        kf_type t = k->params[p].type;
        const char *ty = t.kind != KF_TK_BUFFER ? decl_type(w, t)
                         : param_restrict(w, p) ? kf_cu_str(w->c, "%s __restrict__", decl_type(w, t)) : decl_type(w, t);
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
        if (!w->aread[a]) continue;   /* never read: its stores were dropped */
        kf_type et = kf_type_vector((kf_scalar)ar->type.scalar, ar->type.lanes);
        if (ar->type.flags & KF_TF_DYN) {   /* the launch's dynamic bytes */
            /* One extern name of one type for the whole module: CUDA-C takes
             * every `extern __shared__` array of a name as one entity, so two
             * kernels whose dynamic arrays share a name but not a type would
             * not compile (difftest seed 4, programs 2430..2499 batched). */
            wline(w, ar->loc, "extern __shared__ __align__(%u) unsigned char kf_dyn_shared[];", KF_SHARED_ALIGN);
            wline(w, ar->loc, "%s *const %s = (%s *)kf_dyn_shared;", mem_type(w, et), w->anames[a], mem_type(w, et));
        }
        else if (ar->type.flags & KF_TF_SHARED)
            wline(w, ar->loc, "__shared__ __align__(%u) %s %s[%u];", KF_SHARED_ALIGN, mem_type(w, et), w->anames[a],
                  ar->type.len);
        else
            wline(w, ar->loc, "%s %s[%u];", kf_cu_type(w->c, et), w->anames[a], ar->type.len);
    }
    for (kf_val v = 1; v < k->nvals; v++) {
        if (w->v[v].kind != VK_TOP) continue;
        const char *init = w->v[v].ndefs ? "" : " = {}";
        wline(w, k->vals[v].loc, "%s %s%s;", decl_type(w, k->vals[v].type), val(w, v), init);
    }
}

/* kf_wn, the lanes of this thread's warp that exist, once per kernel that
 * has warp operations (from the launched block: it may be smaller than the
 * schedule's). */
static void write_warp_lanes(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t i = 0; i < k->nins; i++) {
        if (k->ins[i].op != KF_IR_SHFL && k->ins[i].op != KF_IR_VOTE) continue;
        kf_cu_need(w->c, KF_CU_H_SHFL_GUARD);
        wline(w, no_loc, "const unsigned kf_wn = kf_warp_lanes();");
        return;
    }
}

static bool is_marker(uint16_t op)
{
    return op == KF_IR_ELSE || op == KF_IR_ENDIF || op == KF_IR_LATCH || op == KF_IR_ENDLOOP;
}

/* Runs the passes of the file comment over one kernel, appending its text
 * to out and the location of each text line to lines. */
static void emit_kernel(kf_cu *c, const kf_ir_kernel *k, kf_buf *out, loc_vec *lines)
{
    kw w = {.c = c, .k = k, .out = out};
    if (!kf_cu_analyze(&w)) return;
    w.dep_wait = kf_emit_pdl_wait(c->o) && kf_ir_places_dep_wait(k);
    w.early = kf_ir_early_params(k);
    w.explicit_nc = loads_written_buffer(&w);
    w.lines = *lines;
    write_signature(&w);
    write_pdl(&w);
    write_declarations(&w);
    write_warp_lanes(&w);
    for (uint32_t i = 0; i < k->nins; i++) {
        if (w.consumed[i] || (!kf_cu_written(&w, i) && !(is_marker(k->ins[i].op) && !w.dead[i]))) continue;
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
        if (body->len) kf_buf_append(out, body->data, body->len);   /* no kernel: body->data is NULL */
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
    static const kf_emit_opts defaults = {90, false, false};
    kf_diags none = {0};
    kf_cu c = {.m = m, .o = o ? o : &defaults, .diags = diags ? diags : &none};
    const char *file = m && m->file ? m->file : "<input>";
    if (!arch_ok(c.o->arch)) {
        kf_diag_error(c.diags, ((kf_loc){file, 1, 1}), "unsupported --arch sm_%u: kforge targets sm_80, sm_86, sm_89 and sm_90",
                      c.o->arch);
        kf_diags_free(&none);
        return KF_ERR_SOURCE;
    }
    if (!k && (!m || m->nkernels == 0)) {   /* the PTX emitter's error, word for word */
        kf_diag_error(c.diags, ((kf_loc){file, 1, 1}), "no kernel to emit: the module declares no `kernel`");
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
