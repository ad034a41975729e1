/* Lowering of builtins (LANGUAGE.md section 7) to core IR.
 *
 * Thread geometry reads special registers (SREG); global_id and warp_id are
 * computed from them as common.md fixes. Shuffles take 32/64-bit scalars in
 * the IR, so a vector is shuffled lane by lane (EXTRACT, SHFL, INSERT) and a
 * vector of narrow lanes (f16x2, u8x4) first travels as 32-bit words
 * (BITCAST). warp_sum/max/min are a 5-step SHFL_XOR butterfly in a full
 * warp and a SHFL_DOWN tree plus broadcast in a partial one. Math maps to
 * MATH with the builtin id; clamp is MIN(MAX(x, lo), hi); cdiv is computed
 * exactly (no a + b - 1 overflow) from DIV, REM, CMP and SELECT. The
 * section 8 helpers that are not lane by lane (dot4, bfe, bfi, prmt) are one
 * INTRIN each; rcp and fast_div are MATH. So are mma (whole fragments),
 * ldmatrix and cp_async (the shared array in `imm`, as ALOAD names it),
 * cp_async_commit / cp_async_wait (the constant group count in `imm`),
 * fence, dep_wait and dep_trigger (no operand: ir.h's KF_II_FENCE keeps
 * every pass's hands off them; lower.c checks where dep_wait stands), and
 * prefetch_l2 (its range in bytes). */
#include "lower.h"

static kf_type u32_t(void) { return kf_type_scalar(KF_S_U32); }
static kf_type bool_t(void) { return kf_type_scalar(KF_S_BOOL); }

static kf_val sreg(lw_t *lw, kf_ir_sreg r, kf_loc loc)
{
    return kf_lower_def(lw, KF_IR_SREG, 0, u32_t(), u32_t(), 0, 0, 0, r, loc);
}

static kf_val binop(lw_t *lw, kf_op op, kf_type t, kf_val a, kf_val b, kf_loc loc)
{
    return kf_lower_def(lw, KF_IR_BINOP, op, t, t, a, b, 0, 0, loc);
}

kf_val kf_lower_geometry(lw_t *lw, kf_builtin b, int dim, kf_loc loc)
{
    switch (b) {
    case KF_BI_THREAD_ID: return sreg(lw, (kf_ir_sreg)(KF_SR_TID_X + dim), loc);
    case KF_BI_BLOCK_ID: return sreg(lw, (kf_ir_sreg)(KF_SR_CTAID_X + dim), loc);
    case KF_BI_BLOCK_DIM: return sreg(lw, (kf_ir_sreg)(KF_SR_NTID_X + dim), loc);
    case KF_BI_GRID_DIM: return sreg(lw, (kf_ir_sreg)(KF_SR_NCTAID_X + dim), loc);
    case KF_BI_GLOBAL_ID: {
        kf_val c = sreg(lw, (kf_ir_sreg)(KF_SR_CTAID_X + dim), loc);
        kf_val n = sreg(lw, (kf_ir_sreg)(KF_SR_NTID_X + dim), loc);
        kf_val t = sreg(lw, (kf_ir_sreg)(KF_SR_TID_X + dim), loc);
        return binop(lw, KF_OP_ADD, u32_t(), binop(lw, KF_OP_MUL, u32_t(), c, n, loc), t, loc);
    }
    default: break;
    }
    kf_lower_error(lw, loc, "internal error: '%s' is not thread geometry", kf_builtin_names[b]);
    return 0;
}

/* (tid.x + ntid.x * (tid.y + ntid.y * tid.z)) / 32 */
static kf_val warp_id(lw_t *lw, kf_loc loc)
{
    kf_type u = u32_t();
    kf_val z = binop(lw, KF_OP_MUL, u, sreg(lw, KF_SR_NTID_Y, loc), sreg(lw, KF_SR_TID_Z, loc), loc);
    kf_val y = binop(lw, KF_OP_ADD, u, sreg(lw, KF_SR_TID_Y, loc), z, loc);
    kf_val x = binop(lw, KF_OP_MUL, u, sreg(lw, KF_SR_NTID_X, loc), y, loc);
    kf_val flat = binop(lw, KF_OP_ADD, u, sreg(lw, KF_SR_TID_X, loc), x, loc);
    return binop(lw, KF_OP_DIV, u, flat, kf_lower_const(lw, u, 32, loc), loc);
}

kf_val kf_lower_builtin_value(lw_t *lw, const kf_node *e)
{
    kf_type t = kf_lower_norm(e->type);
    uint64_t bits;
    switch ((kf_builtin)e->op) {
    case KF_BI_LANE_ID: return sreg(lw, KF_SR_LANE, e->loc);
    case KF_BI_WARP_ID: return warp_id(lw, e->loc);
    case KF_BI_WARP_SIZE: return kf_lower_const(lw, u32_t(), 32, e->loc);
    case KF_BI_INF:
    case KF_BI_NAN:
        if (t.kind == KF_TK_SCALAR && kf_lower_fold(lw, e, t, &bits)) return kf_lower_const(lw, t, bits, e->loc);
        break;
    default: break;
    }
    kf_lower_error(lw, e->loc, "'%s' cannot be used as a value here%s", e->name ? e->name : kf_builtin_names[e->op < KF_BI_COUNT ? e->op : 0],
             e->op >= KF_BI_THREAD_ID && e->op <= KF_BI_GLOBAL_ID ? " (use its member .x, .y or .z)" : "");
    return 0;
}

/* ---- shuffles ------------------------------------------------------------ */

/* One SHFL of a scalar; 8/16-bit scalars travel widened to 32 bits. */
static kf_val shfl_scalar(lw_t *lw, kf_builtin b, kf_val v, kf_val lane, kf_loc loc)
{
    kf_type t = kf_lower_vtype(lw, v);
    uint32_t bytes = kf_type_elem_bytes(t);
    if (bytes == 4 || bytes == 8) return kf_lower_def(lw, KF_IR_SHFL, b, t, t, v, lane, 0, 0, loc);
    if (kf_type_is_bool(t)) {
        kf_val w = kf_lower_def(lw, KF_IR_CVT, 0, u32_t(), u32_t(), v, 0, 0, 0, loc);
        kf_val s = kf_lower_def(lw, KF_IR_SHFL, b, u32_t(), u32_t(), w, lane, 0, 0, loc);
        return kf_lower_def(lw, KF_IR_CMP, KF_OP_NE, u32_t(), bool_t(), s, kf_lower_const(lw, u32_t(), 0, loc), 0, 0, loc);
    }
    kf_type wt = kf_type_scalar(kf_type_is_float(t) ? KF_S_F32 : kf_type_is_signed(t) ? KF_S_I32 : KF_S_U32);
    kf_val w = kf_lower_def(lw, KF_IR_CVT, 0, wt, wt, v, 0, 0, 0, loc);
    kf_val s = kf_lower_def(lw, KF_IR_SHFL, b, wt, wt, w, lane, 0, 0, loc);
    return kf_lower_def(lw, KF_IR_CVT, 0, t, t, s, 0, 0, 0, loc);   /* exact: the value came from t */
}

/* Shuffles any scalar or vector: lane by lane, narrow lanes as 32-bit words. */
static kf_val shfl_value(lw_t *lw, kf_builtin b, kf_val v, kf_val lane, kf_loc loc)
{
    kf_type t = kf_lower_vtype(lw, v);
    if (t.kind != KF_TK_VECTOR) return shfl_scalar(lw, b, v, lane, loc);
    uint32_t lb = kf_scalar_bytes[t.scalar], total = lb * t.lanes;
    if (lb < 4 && total % 4 == 0) {
        kf_type wt = kf_type_vector(KF_S_U32, total / 4);
        kf_val w = kf_lower_def(lw, KF_IR_BITCAST, 0, wt, wt, v, 0, 0, 0, loc);
        kf_val s = shfl_value(lw, b, w, lane, loc);
        return kf_lower_def(lw, KF_IR_BITCAST, 0, t, t, s, 0, 0, 0, loc);
    }
    kf_type el = kf_type_elem(t);
    kf_val r = 0;
    for (uint32_t i = 0; i < t.lanes; i++) {
        kf_val x = kf_lower_def(lw, KF_IR_EXTRACT, 0, el, el, v, 0, 0, i, loc);
        kf_val s = shfl_scalar(lw, b, x, lane, loc);
        r = i == 0 ? kf_lower_def(lw, KF_IR_SPLAT, 0, t, t, s, 0, 0, 0, loc)
                   : kf_lower_def(lw, KF_IR_INSERT, 0, t, t, r, s, 0, i, loc);
    }
    return r;
}

/* v (+|min|max) w */
static kf_val warp_combine(lw_t *lw, kf_builtin b, kf_type t, kf_val v, kf_val w, kf_loc loc)
{
    if (b == KF_BI_WARP_SUM) return binop(lw, KF_OP_ADD, t, v, w, loc);
    return kf_lower_def(lw, KF_IR_MATH, b == KF_BI_WARP_MAX ? KF_BI_MAX : KF_BI_MIN, t, t, v, w, 0, 0, loc);
}

/* Lanes of this thread's warp that exist: min(32, threads - 32 * warp). */
static kf_val warp_lanes(lw_t *lw, kf_loc loc)
{
    kf_type u = u32_t();
    kf_val threads = binop(lw, KF_OP_MUL, u, sreg(lw, KF_SR_NTID_X, loc),
                           binop(lw, KF_OP_MUL, u, sreg(lw, KF_SR_NTID_Y, loc), sreg(lw, KF_SR_NTID_Z, loc), loc), loc);
    kf_val first = binop(lw, KF_OP_MUL, u, warp_id(lw, loc), kf_lower_const(lw, u, 32, loc), loc);
    kf_val left = binop(lw, KF_OP_SUB, u, threads, first, loc);
    return kf_lower_def(lw, KF_IR_MATH, KF_BI_MIN, u, u, left, kf_lower_const(lw, u, 32, loc), 0, 0, loc);
}

/* warp_sum/max/min, result in every lane. A full warp (the usual case)
 * reduces with the 5-step SHFL_XOR butterfly. A partial warp (a block of 48
 * threads has a second warp of 16 lanes) cannot: a butterfly partner that
 * does not exist gives the caller's own value, which would count it twice
 * (sum) or leave lanes out when the lane count is not a power of two. There
 * a SHFL_DOWN tree gathers the existing lanes into lane 0 and SHFL idx 0
 * broadcasts it. The lane count is uniform across a warp, so every lane of
 * the warp takes the same branch and the warp ops stay complete. */
static kf_val warp_reduce(lw_t *lw, kf_builtin b, kf_val v, kf_loc loc)
{
    kf_type t = kf_lower_vtype(lw, v), u = u32_t();
    kf_val r = kf_lower_new_val(lw, t, NULL, loc);
    kf_val n = warp_lanes(lw, loc);
    kf_val full = kf_lower_def(lw, KF_IR_CMP, KF_OP_EQ, u, bool_t(), n, kf_lower_const(lw, u, 32, loc), 0, 0, loc);
    kf_lower_emit(lw, KF_IR_IF, 0, kf_type_void(), 0, full, 0, 0, 0, 0, loc);
    kf_val x = v;
    for (uint32_t m = 16; m >= 1; m /= 2)
        x = warp_combine(lw, b, t, x, shfl_value(lw, KF_BI_SHFL_XOR, x, kf_lower_const(lw, u, m, loc), loc), loc);
    kf_lower_mov(lw, r, x, loc);
    kf_lower_emit(lw, KF_IR_ELSE, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    kf_val lane = sreg(lw, KF_SR_LANE, loc);
    kf_val y = v;
    for (uint32_t d = 16; d >= 1; d /= 2) {
        kf_val dv = kf_lower_const(lw, u, d, loc);
        kf_val w = shfl_value(lw, KF_BI_SHFL_DOWN, y, dv, loc);
        kf_val has = kf_lower_def(lw, KF_IR_CMP, KF_OP_LT, u, bool_t(), binop(lw, KF_OP_ADD, u, lane, dv, loc), n, 0, 0, loc);
        kf_val z = warp_combine(lw, b, t, y, w, loc);
        y = kf_lower_def(lw, KF_IR_SELECT, 0, t, t, has, z, y, 0, loc);
    }
    kf_lower_mov(lw, r, shfl_value(lw, KF_BI_SHFL, y, kf_lower_const(lw, u, 0, loc), loc), loc);
    kf_lower_emit(lw, KF_IR_ENDIF, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, loc);
    return r;
}

/* ---- arithmetic ---------------------------------------------------------- */

/* Ceiling division of scalars: q + (r != 0 [&& r, b same sign when signed]). */
static kf_val cdiv_scalar(lw_t *lw, kf_type t, kf_val a, kf_val b, kf_loc loc)
{
    kf_val q = binop(lw, KF_OP_DIV, t, a, b, loc);
    kf_val r = binop(lw, KF_OP_REM, t, a, b, loc);
    kf_val zero = kf_lower_const(lw, t, 0, loc), one = kf_lower_const(lw, t, 1, loc);
    kf_val nz = kf_lower_def(lw, KF_IR_CMP, KF_OP_NE, t, bool_t(), r, zero, 0, 0, loc);
    kf_val inc = kf_lower_def(lw, KF_IR_SELECT, 0, t, t, nz, one, zero, 0, loc);
    if (kf_type_is_signed(t)) {
        kf_val x = binop(lw, KF_OP_XOR, t, r, b, loc);
        kf_val same = kf_lower_def(lw, KF_IR_CMP, KF_OP_GE, t, bool_t(), x, zero, 0, 0, loc);
        inc = kf_lower_def(lw, KF_IR_SELECT, 0, t, t, same, inc, zero, 0, loc);
    }
    return binop(lw, KF_OP_ADD, t, q, inc, loc);
}

static kf_val cdiv(lw_t *lw, kf_type t, kf_val a, kf_val b, kf_loc loc)
{
    if (t.kind != KF_TK_VECTOR) return cdiv_scalar(lw, t, a, b, loc);
    kf_type el = kf_type_elem(t);
    kf_val r = 0;
    for (uint32_t i = 0; i < t.lanes; i++) {
        kf_val x = kf_lower_def(lw, KF_IR_EXTRACT, 0, el, el, a, 0, 0, i, loc);
        kf_val y = kf_lower_def(lw, KF_IR_EXTRACT, 0, el, el, b, 0, 0, i, loc);
        kf_val c = cdiv_scalar(lw, el, x, y, loc);
        r = i == 0 ? kf_lower_def(lw, KF_IR_SPLAT, 0, t, t, c, 0, 0, 0, loc)
                   : kf_lower_def(lw, KF_IR_INSERT, 0, t, t, r, c, 0, i, loc);
    }
    return r;
}

static kf_val atomic(lw_t *lw, const kf_node *e, const kf_node *args[5], unsigned n)
{
    kf_type bt = args[0]->type;
    if (bt.kind != KF_TK_BUFFER || n < 3) {
        kf_lower_error(lw, e->loc, "internal error: atomic on a non-buffer");
        return 0;
    }
    kf_type el = kf_type_elem(bt);
    kf_val buf = kf_lower_expr(lw, args[0]), i = kf_lower_expr(lw, args[1]);
    kf_val v = kf_lower_expr_as(lw, args[2], el);
    kf_val w = n > 3 ? kf_lower_expr_as(lw, args[3], el) : 0;
    kf_lower_note_access(lw, buf, el);
    kf_val d = kf_lower_new_val(lw, el, NULL, e->loc);
    kf_lower_emit(lw, KF_IR_ATOMIC, e->op, el, d, buf, i, v, w, 0, e->loc);
    return d;
}

/* Math on the call's type; args converted to it (clz/popc keep their own). */
static kf_val math(lw_t *lw, const kf_node *e, kf_builtin b, const kf_node *args[5], unsigned n)
{
    kf_type t = kf_lower_norm(e->type);
    kf_type at = (b == KF_BI_CLZ || b == KF_BI_POPC) ? kf_lower_norm(args[0]->type) : t;
    kf_val v[3] = {0, 0, 0};
    for (unsigned i = 0; i < n && i < 3; i++) v[i] = kf_lower_expr_as(lw, args[i], at);
    switch (b) {
    case KF_BI_CLAMP: {
        kf_val lo = kf_lower_def(lw, KF_IR_MATH, KF_BI_MAX, t, t, v[0], v[1], 0, 0, e->loc);
        return kf_lower_def(lw, KF_IR_MATH, KF_BI_MIN, t, t, lo, v[2], 0, 0, e->loc);
    }
    case KF_BI_CDIV: return cdiv(lw, t, v[0], v[1], e->loc);
    default: return kf_lower_def(lw, KF_IR_MATH, b, t, t, v[0], v[1], v[2], 0, e->loc);
    }
}

/* dot4, bfe, bfi, prmt: one INTRIN over whole operands (dot4's bytes stay
 * i8x4/u8x4 vectors; bit positions, lengths and prmt's words are u32). */
static kf_val intrin(lw_t *lw, const kf_node *e, kf_builtin b, const kf_node *args[5], unsigned n)
{
    kf_type t = kf_lower_norm(e->type), u = u32_t();
    kf_val v[4] = {0};
    for (unsigned i = 0; i < n && i < 4; i++) {
        bool is_u32 = b == KF_BI_PRMT || (b == KF_BI_BFE && i > 0) || (b == KF_BI_BFI && i > 1);
        v[i] = kf_lower_expr_as(lw, args[i], is_u32 ? u : b == KF_BI_DOT4 ? kf_lower_norm(args[i]->type) : t);
    }
    kf_val d = kf_lower_new_val(lw, t, NULL, e->loc);
    kf_lower_emit(lw, KF_IR_INTRIN, b, t, d, v[0], v[1], v[2], v[3], 0, e->loc);
    return d;
}

/* ---- tensor cores and async copies ---------------------------------------- */

/* d = mma(a, b, c): one INTRIN over the whole fragments. */
static kf_val mma(lw_t *lw, const kf_node *e, const kf_node *args[5])
{
    kf_type t = kf_lower_norm(e->type);
    kf_val a = kf_lower_expr(lw, args[0]), b = kf_lower_expr(lw, args[1]), c = kf_lower_expr_as(lw, args[2], t);
    kf_val d = kf_lower_new_val(lw, t, NULL, e->loc);
    kf_lower_emit(lw, KF_IR_INTRIN, KF_BI_MMA, t, d, a, b, c, 0, 0, e->loc);
    return d;
}

/* ldmatrix_xN[_trans](s, i): imm the array, a0 this lane's row index. */
static kf_val ldmatrix(lw_t *lw, const kf_node *e, kf_builtin b, const kf_node *args[5])
{
    uint32_t arr;
    if (!kf_lower_array_of(lw, args[0], &arr)) return 0;
    kf_type t = kf_lower_norm(e->type);
    kf_val i = kf_lower_expr_as(lw, args[1], u32_t());
    kf_val d = kf_lower_new_val(lw, t, NULL, e->loc);
    kf_lower_emit(lw, KF_IR_INTRIN, b, t, d, i, 0, 0, 0, arr, e->loc);
    return d;
}

/* cp_async(s, i, src, j[, n]): `type` the element type of s's view; the
 * source must be 16-byte aligned, which the runtime checks of a bound view
 * when the kernel accesses it as a 16-byte element (kf_lower_note_access). */
static void cp_async(lw_t *lw, const kf_node *e, kf_builtin b, const kf_node *args[5])
{
    uint32_t arr;
    if (!kf_lower_array_of(lw, args[0], &arr)) return;
    kf_type el = kf_type_elem(args[0]->type);
    kf_val i = kf_lower_expr(lw, args[1]), buf = kf_lower_expr(lw, args[2]), j = kf_lower_expr(lw, args[3]);
    kf_val n = b == KF_BI_CP_ASYNC_N ? kf_lower_expr_as(lw, args[4], u32_t()) : 0;
    kf_lower_note_access(lw, buf, kf_type_vector(KF_S_U32, 4));
    kf_lower_emit(lw, KF_IR_INTRIN, b, el, 0, i, buf, j, n, arr, e->loc);
}

/* prefetch_l2(src, j, n): the INTRIN takes the range in bytes (u64), so
 * that the back ends only round it to 16-byte chunks and the interpreter
 * checks it against the buffer's bytes. */
static void prefetch(lw_t *lw, const kf_node *e, const kf_node *args[5])
{
    kf_type u64 = kf_type_scalar(KF_S_U64);
    kf_val buf = kf_lower_expr(lw, args[0]);
    kf_val j = kf_lower_expr_as(lw, args[1], u64), n = kf_lower_expr_as(lw, args[2], u64);
    kf_val es = kf_lower_const(lw, u64, kf_type_elem_bytes(kf_type_elem(args[0]->type)), e->loc);
    kf_val off = binop(lw, KF_OP_MUL, u64, j, es, e->loc), bytes = binop(lw, KF_OP_MUL, u64, n, es, e->loc);
    kf_lower_emit(lw, KF_IR_INTRIN, KF_BI_PREFETCH_L2, kf_type_void(), 0, buf, off, bytes, 0, 0, e->loc);
}

static kf_val async_op(lw_t *lw, const kf_node *e, kf_builtin b, const kf_node *args[5])
{
    uint64_t groups = 0;
    if (b == KF_BI_CP_ASYNC_WAIT && !kf_lower_fold(lw, args[0], u32_t(), &groups)) {
        kf_lower_error(lw, args[0]->loc, "the group count of 'cp_async_wait' must be a compile-time constant");
        return 0;
    }
    if (b == KF_BI_CP_ASYNC || b == KF_BI_CP_ASYNC_N) cp_async(lw, e, b, args);
    else kf_lower_emit(lw, KF_IR_INTRIN, b, kf_type_void(), 0, 0, 0, 0, 0, groups, e->loc);
    return 0;
}

kf_val kf_lower_builtin_call(lw_t *lw, const kf_node *e)
{
    kf_builtin b = (kf_builtin)(e->op ? e->op : e->a->op);
    const kf_node *args[5] = {0};
    unsigned n = 0;
    for (const kf_node *a = e->b; a; a = a->next) {
        if (n == 5) return kf_lower_error(lw, e->loc, "internal error: too many arguments"), 0;
        args[n++] = a;
    }
    kf_type t = kf_lower_norm(e->type);
    if (b <= KF_BI_NONE || b >= KF_BI_COUNT || n != kf_builtin_nargs[b]) {
        kf_lower_error(lw, e->loc, "internal error: builtin call with %u arguments", n);
        return 0;
    }
    switch (b) {
    case KF_BI_BARRIER:
        kf_lower_emit(lw, KF_IR_BARRIER, 0, kf_type_void(), 0, 0, 0, 0, 0, 0, e->loc);
        return 0;
    case KF_BI_FENCE: case KF_BI_DEP_TRIGGER:
        kf_lower_emit(lw, KF_IR_INTRIN, (uint16_t)b, kf_type_void(), 0, 0, 0, 0, 0, 0, e->loc);
        return 0;
    case KF_BI_DEP_WAIT: kf_lower_dep_wait(lw, e->loc); return 0;
    case KF_BI_PREFETCH_L2: prefetch(lw, e, args); return 0;
    case KF_BI_SHFL: case KF_BI_SHFL_XOR: case KF_BI_SHFL_UP: case KF_BI_SHFL_DOWN: {
        kf_val v = kf_lower_expr_as(lw, args[0], t);
        return shfl_value(lw, b, v, kf_lower_expr_as(lw, args[1], u32_t()), e->loc);
    }
    case KF_BI_WARP_SUM: case KF_BI_WARP_MAX: case KF_BI_WARP_MIN:
        return warp_reduce(lw, b, kf_lower_expr_as(lw, args[0], t), e->loc);
    case KF_BI_BALLOT: case KF_BI_ANY: case KF_BI_ALL: {
        kf_val p = kf_lower_expr_as(lw, args[0], bool_t());
        kf_type rt = b == KF_BI_BALLOT ? u32_t() : bool_t();
        return kf_lower_def(lw, KF_IR_VOTE, b, rt, rt, p, 0, 0, 0, e->loc);
    }
    case KF_BI_ATOMIC_ADD: case KF_BI_ATOMIC_MIN: case KF_BI_ATOMIC_MAX:
    case KF_BI_ATOMIC_EXCH: case KF_BI_ATOMIC_CAS:
        return atomic(lw, e, args, n);
    case KF_BI_SELECT: {
        kf_val c = kf_lower_expr_as(lw, args[0], bool_t());
        kf_val x = kf_lower_expr_as(lw, args[1], t), y = kf_lower_expr_as(lw, args[2], t);
        return kf_lower_def(lw, KF_IR_SELECT, 0, t, t, c, x, y, 0, e->loc);
    }
    case KF_BI_BITCAST: {
        kf_val v = kf_lower_expr(lw, args[1]);
        if (kf_type_eq(kf_lower_vtype(lw, v), t)) return v;
        return kf_lower_def(lw, KF_IR_BITCAST, 0, t, t, v, 0, 0, 0, e->loc);
    }
    default: break;
    }
    if ((b >= KF_BI_EXP && b <= KF_BI_MUL_HI) || b == KF_BI_RCP || b == KF_BI_FAST_DIV) return math(lw, e, b, args, n);
    if (b >= KF_BI_DOT4 && b <= KF_BI_PRMT) return intrin(lw, e, b, args, n);
    if (b == KF_BI_MMA) return mma(lw, e, args);
    if (kf_builtin_ldmatrix(b, NULL)) return ldmatrix(lw, e, b, args);
    if (b >= KF_BI_CP_ASYNC && b <= KF_BI_CP_ASYNC_WAIT) return async_op(lw, e, b, args);
    kf_lower_error(lw, e->loc, "internal error: '%s' is not callable", kf_builtin_names[b]);
    return 0;
}
