/* Core IR tables and structural linking (ir.h). The printer lives in
 * ir/print.c. */
#include "ir.h"

#include <string.h>

const char *const kf_ir_op_names[KF_IR_OP_COUNT] = {
#define X(e, n, na, d) [e] = n,
    KF_IR_OPS(X)
#undef X
};
const uint8_t kf_ir_op_nargs[KF_IR_OP_COUNT] = {
#define X(e, n, na, d) [e] = na,
    KF_IR_OPS(X)
#undef X
};
const char *const kf_ir_sreg_names[KF_SR_COUNT] = {
#define X(e, n, p) [e] = n,
    KF_IR_SREGS(X)
#undef X
};
const char *const kf_ir_sreg_ptx[KF_SR_COUNT] = {
#define X(e, n, p) [e] = p,
    KF_IR_SREGS(X)
#undef X
};

bool kf_ir_intrin_info(uint16_t sub, unsigned *nargs, unsigned *flags)
{
    switch (sub) {
#define X(b, n, f) case b: *nargs = (n), *flags = (f); return true;
        KF_IR_INTRINS(X)
#undef X
    default: *nargs = 0, *flags = 0; return false;
    }
}

uint32_t kf_ir_dep_wait_at(const kf_ir_kernel *k)
{
    for (uint32_t i = 0; i < k->nins; i++)
        if (k->ins[i].op == KF_IR_INTRIN && k->ins[i].sub == KF_BI_DEP_WAIT) return i;
    return UINT32_MAX;
}

bool kf_ir_places_dep_wait(const kf_ir_kernel *k) { return kf_ir_dep_wait_at(k) != UINT32_MAX; }

/* What instruction in is, as a user of its operands (KF_IR_FEEDS_*). */
static uint8_t feed_kind(const kf_ir_kernel *k, const kf_ir_ins *in)
{
    if (!in->dst || in->dst > k->nvals || !kf_type_is_int(k->vals[in->dst].type)) return 0;
    if (in->op == KF_IR_BINOP || in->op == KF_IR_UNOP) return KF_IR_FEEDS_INT_OP;
    if (in->op == KF_IR_MATH && (in->sub == KF_BI_MIN || in->sub == KF_BI_MAX || in->sub == KF_BI_CLAMP))
        return KF_IR_FEEDS_INT_MINMAX;
    return 0;
}

/* The direct uses, then five rounds along copies: round r gives a copy's
 * source what its destination had after round r - 1 (tmp), so a value
 * takes what is at most r copies away, as the depth-limited walk this
 * replaces did. */
void kf_ir_feed_flags(const kf_ir_kernel *k, uint8_t *flags, uint8_t *tmp)
{
    memset(flags, 0, (size_t)k->nvals + 1);
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        uint8_t f = feed_kind(k, in);
        for (int a = 0; f && a < kf_ir_op_nargs[in->op]; a++)
            if (in->a[a] <= k->nvals) flags[in->a[a]] |= f;
    }
    for (int round = 0; round < 5; round++) {
        memcpy(tmp, flags, (size_t)k->nvals + 1);
        bool grew = false;
        for (uint32_t i = 0; i < k->nins; i++) {
            const kf_ir_ins *in = &k->ins[i];
            if (in->op != KF_IR_MOV || in->dst > k->nvals) continue;
            for (int a = 0; a < kf_ir_op_nargs[in->op]; a++) {
                kf_val v = in->a[a];
                if (v == in->dst || v > k->nvals || (flags[v] | tmp[in->dst]) == flags[v]) continue;
                flags[v] |= tmp[in->dst];
                grew = true;
            }
        }
        if (!grew) break;
    }
}

/* The definition v comes from through up to 8 copies (MOV, SPLAT), or NULL. */
static const kf_ir_ins *source_def(kf_val v, const kf_ir_ins *(*def)(const void *ctx, kf_val v), const void *ctx)
{
    for (int hop = 0; hop < 8 && v; hop++) {
        const kf_ir_ins *d = def(ctx, v);
        if (!d || (d->op != KF_IR_MOV && d->op != KF_IR_SPLAT)) return d;
        v = d->a[0];
    }
    return NULL;
}

bool kf_ir_is_negzero(const kf_ir_kernel *k, kf_val v, const kf_ir_ins *(*def)(const void *ctx, kf_val v),
                      const void *ctx)
{
    if (!v || v >= k->nvals || kf_scalar_class[k->vals[v].type.scalar] != 'f') return false;
    kf_scalar s = (kf_scalar)k->vals[v].type.scalar;
    const kf_ir_ins *d = source_def(v, def, ctx);
    return d && d->op == KF_IR_CONST && (d->imm & kf_scalar_ones(s)) == UINT64_C(1) << (8u * kf_scalar_bytes[s] - 1);
}

/* Whether d is an f32 constant other than NaN. */
static bool nan_free_const(const kf_ir_ins *d)
{
    return d && d->op == KF_IR_CONST && d->type.scalar == KF_S_F32 && ((uint32_t)d->imm & 0x7fffffffu) <= 0x7f800000u;
}

/* Whether d is an f32 constant zero of either sign. */
static bool zero_const(const kf_ir_ins *d)
{
    return d && d->op == KF_IR_CONST && d->type.scalar == KF_S_F32 && ((uint32_t)d->imm & 0x7fffffffu) == 0;
}

/* Whether v is, through copies, what ptxas may read as an f32 min with a
 * constant: a min with a constant other than NaN, or a select on a compare
 * with such a constant as an arm (select(x < 1.0, x, 1.0), and its two
 * loads of one x as well). Looser than a proof: the pick it leads to is
 * exact for any value. */
static bool min_like(kf_val v, const kf_ir_ins *(*def)(const void *ctx, kf_val v), const void *ctx)
{
    const kf_ir_ins *m = source_def(v, def, ctx);
    if (m && m->op == KF_IR_MATH && m->sub == KF_BI_MIN)
        return nan_free_const(source_def(m->a[0], def, ctx)) || nan_free_const(source_def(m->a[1], def, ctx));
    if (!m || m->op != KF_IR_SELECT) return false;
    const kf_ir_ins *cmp = source_def(m->a[0], def, ctx);
    return cmp && cmp->op == KF_IR_CMP &&
           (nan_free_const(source_def(m->a[1], def, ctx)) || nan_free_const(source_def(m->a[2], def, ctx)));
}

/* Whether a and b (each with one definition, through copies) are the same
 * value, or compute it the same way: the same pure operation on operands
 * that are, depth levels down, loads of the same element included. *first
 * is lowered to the index of each such load, whose value is the same only
 * where nothing writes memory between it and the reader (writes_from). */
static bool same_value(const kf_ir_kernel *k, kf_val a, kf_val b, const kf_ir_ins *(*def)(const void *ctx, kf_val v),
                       const void *ctx, int depth, uint32_t *first)
{
    const kf_ir_ins *da = source_def(a, def, ctx), *db = source_def(b, def, ctx);
    if (!da || !db) return false;
    if (da == db) return true;
    if (depth == 0 || da->op != db->op || da->sub != db->sub || da->imm != db->imm || !kf_type_eq(da->type, db->type))
        return false;
    switch (da->op) {
    case KF_IR_CONST: case KF_IR_SREG: case KF_IR_PARAM: return true;
    case KF_IR_LOAD: case KF_IR_ALOAD:
        for (const kf_ir_ins *d = da; d; d = d == da ? db : NULL)
            if ((uint32_t)(d - k->ins) < *first) *first = (uint32_t)(d - k->ins);
        break;
    case KF_IR_BINOP: case KF_IR_UNOP: case KF_IR_CVT: case KF_IR_BITCAST: case KF_IR_MATH: case KF_IR_CMP:
    case KF_IR_SELECT: case KF_IR_SPLAT: case KF_IR_EXTRACT: case KF_IR_VIEW: break;
    default: return false;
    }
    for (int i = 0; i < kf_ir_op_nargs[da->op]; i++)
        if ((da->a[i] || db->a[i]) && !same_value(k, da->a[i], db->a[i], def, ctx, depth - 1, first)) return false;
    return true;
}

/* Whether instructions from .. to-1 may change memory this thread reads
 * (a store, an atomic, a barrier, a copy or wait) or repeat (a loop's
 * marker: the code after `to` may run between them). */
static bool writes_from(const kf_ir_kernel *k, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to && i < k->nins; i++) {
        unsigned nargs, flags;
        switch (k->ins[i].op) {
        case KF_IR_STORE: case KF_IR_ASTORE: case KF_IR_ATOMIC: case KF_IR_BARRIER:
        case KF_IR_LOOP: case KF_IR_LATCH: case KF_IR_ENDLOOP: return true;
        case KF_IR_INTRIN:   /* a copy's arrival or a wait makes other writes visible */
            if (!kf_ir_intrin_info(k->ins[i].sub, &nargs, &flags) ||
                (flags & (KF_II_WRITES | KF_II_ASYNC | KF_II_FENCE)))
                return true;
            break;
        default: break;
        }
    }
    return false;
}

kf_ir_zero_pick kf_ir_zero_select(const kf_ir_kernel *k, const kf_ir_ins *in,
                                  const kf_ir_ins *(*def)(const void *ctx, kf_val v), const void *ctx)
{
    kf_ir_zero_pick none = {KF_ZP_NONE, 0, 0, 0};
    if (in->type.scalar != KF_S_F32) return none;   /* a max may be a vector's, lane by lane */
    if (in->op == KF_IR_MATH && in->sub == KF_BI_MAX) {
        for (int a = 0; a < 2; a++) {
            const kf_ir_ins *z = source_def(in->a[a], def, ctx);
            if (zero_const(z) && min_like(in->a[1 - a], def, ctx))
                return (kf_ir_zero_pick){(uint32_t)z->imm >> 31 ? KF_ZP_PLUS : KF_ZP_GT, 1 - a, 1 - a, a};
        }
        return none;
    }
    const kf_ir_ins *cmp = in->op == KF_IR_SELECT ? source_def(in->a[0], def, ctx) : NULL;
    if (!cmp || cmp->op != KF_IR_CMP || cmp->sub < KF_OP_LT || cmp->sub > KF_OP_GE || cmp->a[0] >= k->nvals ||
        k->vals[cmp->a[0]].type.scalar != KF_S_F32)
        return none;
    static const kf_ir_zpred pred[2][4] = {{KF_ZP_LT, KF_ZP_LE, KF_ZP_GT, KF_ZP_GE},   /* m OP 0 */
                                           {KF_ZP_GT, KF_ZP_GE, KF_ZP_LT, KF_ZP_LE}};  /* 0 OP m */
    uint32_t at = (uint32_t)(in - k->ins);
    for (int c = 0; c < 2; c++) {   /* the compare's operand that is m */
        if (!zero_const(source_def(cmp->a[1 - c], def, ctx)) || !min_like(cmp->a[c], def, ctx)) continue;
        for (int arm = 1; arm <= 2; arm++) {
            uint32_t first = UINT32_MAX;   /* m written twice, min(x[i], 1.0) of two loads: one value */
            if (zero_const(source_def(in->a[3 - arm], def, ctx)) &&
                same_value(k, in->a[arm], cmp->a[c], def, ctx, 6, &first) &&
                (first == UINT32_MAX || !writes_from(k, first, at)))
                return (kf_ir_zero_pick){pred[c][cmp->sub - KF_OP_LT], arm, 1, 2};
        }
    }
    return none;
}

uint32_t kf_ir_buffer_param(const kf_ir_kernel *k, kf_val v)
{
    for (uint32_t hops = 0; v && hops < k->nins; hops++) {
        const kf_ir_ins *d = NULL;
        for (uint32_t i = 0; i < k->nins && !d; i++)
            if (k->ins[i].dst == v) d = &k->ins[i];
        if (!d) return UINT32_MAX;
        if (d->op == KF_IR_PARAM) return (uint32_t)d->imm;
        if (d->op != KF_IR_VIEW && d->op != KF_IR_MOV) return UINT32_MAX;
        v = d->a[0];
    }
    return UINT32_MAX;
}

uint64_t kf_ir_early_params(const kf_ir_kernel *k)
{
    uint32_t w = kf_ir_dep_wait_at(k);
    uint64_t early = 0;
    for (uint32_t i = 0; w != UINT32_MAX && i < w; i++) {
        if (k->ins[i].op != KF_IR_LOAD) continue;
        uint32_t p = kf_ir_buffer_param(k, k->ins[i].a[0]);
        if (p < 64) early |= UINT64_C(1) << p;
    }
    return early;
}

static uint64_t pack(uint32_t hi, uint32_t lo) { return (uint64_t)hi << 32 | lo; }

/* Closes the structure opened at `at` (mid: its ELSE/LATCH or 0) at `end`,
 * storing the structure in every marker of it (kf_ir_flow_of). */
static void close_structure(kf_ir_kernel *k, uint32_t at, uint32_t mid, uint32_t end)
{
    k->ins[at].imm = pack(mid, end);
    if (mid) k->ins[mid].imm = pack(at, end);
    k->ins[end].imm = pack(at, mid);
}

static bool is_open(uint16_t op) { return op == KF_IR_IF || op == KF_IR_LOOP; }
static bool is_mid(uint16_t op) { return op == KF_IR_ELSE || op == KF_IR_LATCH; }
static bool is_close(uint16_t op) { return op == KF_IR_ENDIF || op == KF_IR_ENDLOOP; }
/* The IF/LOOP that an ELSE/LATCH or ENDIF/ENDLOOP belongs to. */
static uint16_t opener(uint16_t op) { return op == KF_IR_ELSE || op == KF_IR_ENDIF ? KF_IR_IF : KF_IR_LOOP; }

bool kf_ir_link(kf_ir_kernel *k)
{
    KF_VEC(uint32_t) st = {0};     /* open IF/LOOP, innermost last */
    KF_VEC(uint32_t) mid = {0};    /* their ELSE/LATCH so far, or 0 */
    KF_VEC(uint32_t) jumps = {0};  /* BREAK/CONTINUE waiting for their ENDLOOP */
    KF_VEC(uint32_t) loops = {0};  /* open LOOPs, innermost last */
    bool ok = true;
    for (uint32_t i = 0; i < k->nins && ok; i++) {
        uint16_t op = k->ins[i].op;
        if (is_open(op)) {
            ok = KF_VEC_PUSH(&st, i) && KF_VEC_PUSH(&mid, 0u) && (op != KF_IR_LOOP || KF_VEC_PUSH(&loops, i));
        } else if (is_mid(op) || is_close(op)) {
            ok = st.len && k->ins[st.data[st.len - 1]].op == opener(op) && !(is_mid(op) && mid.data[mid.len - 1]);
            if (ok && is_mid(op)) mid.data[mid.len - 1] = i;
            if (!ok || is_mid(op)) continue;
            uint32_t at = st.data[--st.len], m = mid.data[--mid.len];
            close_structure(k, at, m, i);
            if (op == KF_IR_ENDLOOP) {
                loops.len--;
                while (jumps.len && k->ins[jumps.data[jumps.len - 1]].imm >> 32 == at)   /* this loop's */
                    k->ins[jumps.data[--jumps.len]].imm |= i;
            }
        } else if (op == KF_IR_BREAK || op == KF_IR_CONTINUE) {
            ok = loops.len && KF_VEC_PUSH(&jumps, i);
            if (ok) k->ins[i].imm = pack(loops.data[loops.len - 1], 0);
        }
    }
    ok = ok && st.len == 0;
    KF_VEC_FREE(&st);
    KF_VEC_FREE(&mid);
    KF_VEC_FREE(&jumps);
    KF_VEC_FREE(&loops);
    return ok;
}

/* Marker i's structure names markers of the right kind that name it back. */
static bool flow_consistent(const kf_ir_kernel *k, uint32_t i)
{
    uint16_t op = k->ins[i].op;
    kf_ir_flow f = kf_ir_flow_of(k, i);
    uint16_t head_op = op == KF_IR_IF || op == KF_IR_ELSE || op == KF_IR_ENDIF ? KF_IR_IF : KF_IR_LOOP;
    if (!(f.head <= i && i <= f.end && f.end < k->nins && f.head < f.end)) return false;
    if (k->ins[f.head].op != head_op || k->ins[f.end].op != (head_op == KF_IR_IF ? KF_IR_ENDIF : KF_IR_ENDLOOP))
        return false;
    kf_ir_flow h = kf_ir_flow_of(k, f.head), e = kf_ir_flow_of(k, f.end);
    if (h.end != f.end || e.head != f.head || e.mid != h.mid) return false;
    if (!h.mid) return op != KF_IR_ELSE && op != KF_IR_LATCH;
    if (!(f.head < h.mid && h.mid < f.end) || k->ins[h.mid].op != (head_op == KF_IR_IF ? KF_IR_ELSE : KF_IR_LATCH))
        return false;
    kf_ir_flow m = kf_ir_flow_of(k, h.mid);
    return m.head == f.head && m.end == f.end;
}

bool kf_ir_linked(const kf_ir_kernel *k)
{
    for (uint32_t i = 0; i < k->nins; i++) {
        uint16_t op = k->ins[i].op;
        bool marker = is_open(op) || is_mid(op) || is_close(op) || op == KF_IR_BREAK || op == KF_IR_CONTINUE;
        if (marker && !flow_consistent(k, i)) return false;
    }
    return true;
}
