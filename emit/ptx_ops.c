/* PTX instruction selection: one core-IR instruction at a time, lane by lane
 * for vectors. The choices that carry the language contract:
 *   - 8- and 16-bit integers follow the register rule of ptx_internal.h
 *     (8-bit sign/zero-extended in 16-bit registers, re-normalized after
 *     operations that can carry out of the byte; wrapping arithmetic that
 *     ptxas cannot widen);
 *   - shifts pass the amount as u32, which PTX clamps to the width (so
 *     amounts >= width give 0 or the sign fill); 64-bit amounts are first
 *     clamped with min.u64;
 *   - signed x / -1 and x % -1 are selected around the divide so INT_MIN / -1
 *     gives INT_MIN and INT_MIN % -1 gives 0 whatever div.s32 does;
 *   - float + - * / are .rn (never contracted into fma); bf16 arithmetic is
 *     native on sm_90 and an exact fma.rn.bf16 form on sm_80..89; f16/bf16
 *     vectors + - * fma min max abs are packed .f16x2/.bf16x2 instructions,
 *     a pair of lanes each;
 *   - dot4, bfe, bfi, prmt are dp4a, bfe, bfi, prmt.b32; mma, ldmatrix
 *     and cp_async are emit/ptx_tensor.c's;
 *   - conversions use one rounding: cvt.rzi (saturating) for float -> int
 *     with NaN selected to 0, .rn for int -> float and narrowing, and a
 *     round-to-odd step where bf16 has no direct cvt from the source type;
 *     f16 <-> bf16 through f32;
 *   - loads from read-only buffers are ld.global.nc (around a dep_wait():
 *     load_space); vector elements move with ld/st .v2/.v4 (8 and 16
 *     lanes as .b32 words, unpacked). */
#include "ptx_internal.h"

#include <stdio.h>
#include <string.h>

static kf_type vtype(const ptx_cx *cx, kf_val v)
{
    return cx->k->vals[v].type;
}

static uint32_t nlanes(kf_type t)
{
    return t.kind == KF_TK_VECTOR ? t.lanes : 1;
}

static bool is_half(kf_scalar s)
{
    return s == KF_S_F16 || s == KF_S_BF16;
}

static bool is_signed_s(kf_scalar s)
{
    return kf_scalar_class[s] == 'i';
}

static bool is_float_s(kf_scalar s)
{
    return kf_scalar_class[s] == 'f';
}

static const char *movty(kf_scalar s)
{
    if (s == KF_S_BOOL) return "pred";
    return is_half(s) ? "b16" : kf_ptx_scalars[s].arith;
}

void kf_ptx_normalize(ptx_cx *cx, const char *d, kf_scalar s)
{
    if (s == KF_S_I8) kf_ptx_ins(cx, "cvt.s16.s8 %s, %s", d, d);
    else if (s == KF_S_U8) kf_ptx_ins(cx, "cvt.u16.u8 %s, %s", d, d);
}

/* The type of a wrapping + - * on integer scalar s: u16 for every value held
 * in a 16-bit register (see the invariant in ptx_internal.h), else its own. */
static const char *wrap_type(kf_scalar s)
{
    return kf_scalar_bytes[s] <= 2 ? "u16" : kf_ptx_scalars[s].arith;
}

/* d = -a wrapped to the width of integer scalar s, normalized. 16-bit
 * registers use sub.u16 0, a: ptxas widens a neg.s16 to 32 bits without
 * wrapping (-(-32768) became +32768 for whatever read it sign-extended).
 * 32 bits: ~a + 1, not neg.s32 (nor sub 0, a, nor mul by -1): ptxas 13
 * merges max.s32 x, (max.s32 y, (neg.s32 z)) into one VIMNMX3 and drops the
 * negation, so max(d, abs(d)) gave -1 for d = -1 (difftest seed 11 program
 * 6458, case regress_neg_minmax3); it keeps the not and the add. */
static void int_neg(ptx_cx *cx, kf_scalar s, const char *d, const char *a)
{
    if (kf_scalar_bytes[s] <= 2) {
        kf_ptx_ins(cx, "sub.u16 %s, 0, %s", d, a);
    } else if (kf_scalar_bytes[s] == 4) {
        kf_ptx_ins(cx, "not.b32 %s, %s", d, a);
        kf_ptx_ins(cx, "add.s32 %s, %s, 1", d, d);
    } else {
        kf_ptx_ins(cx, "neg.s64 %s, %s", d, a);
    }
    kf_ptx_normalize(cx, d, s);
}

/* ---- conversions ------------------------------------------------------------ */

/* Rounds a to bf16 where PTX has no direct cvt (sm_80..89 from f64 and
 * 32/64-bit ints): convert toward zero to f32, set the last bit when that was
 * inexact (round to odd), then one cvt.rn.bf16.f32. Round-to-odd at 24 bits
 * followed by RNE at 8 bits equals one RNE rounding. */
static void cvt_bf16_rodd(ptx_cx *cx, const char *d, const char *a, kf_scalar as)
{
    preg f = kf_ptx_tmp(cx, PTX_RC_F), p = kf_ptx_tmp(cx, PTX_RC_P);
    preg w = kf_ptx_tmp(cx, PTX_RC_R), w1 = kf_ptx_tmp(cx, PTX_RC_R);
    const char *t = kf_ptx_scalars[as].mem;
    kf_ptx_ins(cx, "cvt.rz.f32.%s %s, %s", t, f.s, a);
    if (as == KF_S_F64) {
        preg back = kf_ptx_tmp(cx, PTX_RC_FD);
        kf_ptx_ins(cx, "cvt.f64.f32 %s, %s", back.s, f.s);
        kf_ptx_ins(cx, "setp.neu.f64 %s, %s, %s", p.s, back.s, a);
    } else {
        preg back = kf_ptx_tmp(cx, (ptx_rclass)kf_ptx_scalars[as].rc);
        kf_ptx_ins(cx, "cvt.rzi.%s.f32 %s, %s", t, back.s, f.s);
        kf_ptx_ins(cx, "setp.ne.%s %s, %s, %s", t, p.s, back.s, a);
    }
    kf_ptx_ins(cx, "mov.b32 %s, %s", w.s, f.s);
    kf_ptx_ins(cx, "or.b32 %s, %s, 1", w1.s, w.s);
    kf_ptx_ins(cx, "selp.b32 %s, %s, %s, %s", w.s, w1.s, w.s, p.s);
    kf_ptx_ins(cx, "mov.b32 %s, %s", f.s, w.s);
    kf_ptx_ins(cx, "cvt.rn.bf16.f32 %s, %s", d, f.s);
}

static void cvt_from_bool(ptx_cx *cx, const char *d, kf_scalar ds, const char *a)
{
    static const uint64_t one[KF_S_COUNT] = {
        [KF_S_F16] = 0x3C00, [KF_S_BF16] = 0x3F80, [KF_S_F32] = 0x3F800000, [KF_S_F64] = 0x3FF0000000000000ull,
    };
    if (ds == KF_S_BOOL) {
        kf_ptx_ins(cx, "mov.pred %s, %s", d, a);
        return;
    }
    uint64_t o = is_float_s(ds) ? one[ds] : 1;
    kf_ptx_ins(cx, "selp.%s %s, %s, 0, %s", kf_ptx_scalars[ds].bits, d, kf_ptx_imm(ds, o).s, a);
}

/* Float -> integer: truncate toward zero and saturate (cvt.rzi clamps to
 * the destination's range), NaN -> 0. The hardware gives NaN the most
 * negative pattern of the destination instead (2^31 for u32, 128 for u8,
 * INT64_MIN for s64), so a setp.nan selects 0. `am` spells the source type. */
static void cvt_float_to_int(ptx_cx *cx, const char *d, kf_scalar ds, const char *a, const char *am)
{
    preg p = kf_ptx_tmp(cx, PTX_RC_P), t = kf_ptx_tmp(cx, (ptx_rclass)kf_ptx_scalars[ds].rc);
    kf_ptx_ins(cx, "setp.nan.%s %s, %s, %s", am, p.s, a, a);
    bool sat = kf_scalar_bytes[ds] >= 4 && strcmp(am, "bf16") != 0;   /* redundant; not allowed from bf16 */
    kf_ptx_ins(cx, "cvt.rzi.%s%s.%s %s, %s", sat ? "sat." : "", kf_ptx_scalars[ds].mem, am, t.s, a);
    kf_ptx_ins(cx, "selp.%s %s, 0, %s, %s", kf_ptx_scalars[ds].bits, d, t.s, p.s);
}

/* f16 and bf16 never convert into each other directly: ptxas 13 folds a
 * cvt.f16.bf16 (or cvt.bf16.f16) into a following cvt.rzi to an integer and
 * loses it (the integer conversion then reads the other format's bits and
 * rounds to nearest). Through f32 both steps are exact but the last. */

/* bf16 -> anything but bf16: exact to f32 first unless sm_90 converts directly. */
static void cvt_from_bf16(ptx_cx *cx, const char *d, kf_scalar ds, const char *a)
{
    bool direct = cx->o->arch >= 90 && ds != KF_S_F32 && ds != KF_S_F16 && kf_scalar_bytes[ds] >= 2;
    if (ds == KF_S_F32 || (direct && is_float_s(ds))) {
        kf_ptx_ins(cx, "cvt.%s.bf16 %s, %s", kf_ptx_scalars[ds].mem, d, a);
        return;
    }
    if (direct) {
        cvt_float_to_int(cx, d, ds, a, "bf16");
        return;
    }
    preg f = kf_ptx_tmp(cx, PTX_RC_F);
    kf_ptx_ins(cx, "cvt.f32.bf16 %s, %s", f.s, a);
    kf_ptx_cvt_lane(cx, d, ds, f.s, KF_S_F32);
}

/* anything but bf16 -> bf16. */
static void cvt_to_bf16(ptx_cx *cx, const char *d, const char *a, kf_scalar as)
{
    if (as == KF_S_F32) {
        kf_ptx_ins(cx, "cvt.rn.bf16.f32 %s, %s", d, a);
    } else if (cx->o->arch >= 90 && as != KF_S_F16 && kf_scalar_bytes[as] >= 2) {
        kf_ptx_ins(cx, "cvt.rn.bf16.%s %s, %s", kf_ptx_scalars[as].mem, d, a);
    } else if (as == KF_S_F16 || kf_scalar_bytes[as] <= 2) {
        preg f = kf_ptx_tmp(cx, PTX_RC_F);   /* exact in f32 */
        kf_ptx_cvt_lane(cx, f.s, KF_S_F32, a, as);
        kf_ptx_ins(cx, "cvt.rn.bf16.f32 %s, %s", d, f.s);
    } else {
        cvt_bf16_rodd(cx, d, a, as);
    }
}

/* Never a bare cvt.u16.u32 (or cvt.u8.u32) of a word: ptxas 13 drops the
 * zero-extension of `cvt.u16.u32 h, w; ... cvt.u32.u16 r, h` when w is the
 * low word of an f64 min/max result (DSETP + SEL), so r kept w's high bits:
 * the u32 lanes of bitcast(u16x4, clamp(x, -inf, inf)) (difftest seed 10
 * program 8746, case regress_low_word_cut). With the and.b32 it masks. */
void kf_ptx_low_bits(ptx_cx *cx, const char *d, const char *w, uint32_t bits)
{
    preg t = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "and.b32 %s, %s, %u", t.s, w, (1u << bits) - 1);
    kf_ptx_ins(cx, "cvt.u16.u32 %s, %s", d, t.s);
}

void kf_ptx_cvt_lane(ptx_cx *cx, const char *d, kf_scalar ds, const char *a, kf_scalar as)
{
    const char *dm = ds == KF_S_F16 ? "f16" : kf_ptx_scalars[ds].mem;
    const char *am = as == KF_S_F16 ? "f16" : kf_ptx_scalars[as].mem;
    if (ds == as) {
        kf_ptx_ins(cx, "mov.%s %s, %s", movty(ds), d, a);
    } else if (as == KF_S_BOOL) {
        cvt_from_bool(cx, d, ds, a);
    } else if (ds == KF_S_BOOL) {
        kf_ptx_ins(cx, "setp.ne.%s %s, %s, 0", is_half(as) ? "b16" : kf_ptx_scalars[as].arith, d, a);
    } else if (as == KF_S_BF16) {
        cvt_from_bf16(cx, d, ds, a);
    } else if (ds == KF_S_BF16) {
        cvt_to_bf16(cx, d, a, as);
    } else if (!is_float_s(as) && !is_float_s(ds)) {
        if (kf_scalar_bytes[as] == kf_scalar_bytes[ds] && kf_scalar_bytes[as] >= 2)
            kf_ptx_ins(cx, "mov.%s %s, %s", kf_ptx_scalars[ds].bits, d, a);
        else if (kf_scalar_bytes[as] == 4 && kf_scalar_bytes[ds] < 4 && !is_signed_s(ds))
            kf_ptx_low_bits(cx, d, a, 8 * kf_scalar_bytes[ds]);
        else
            kf_ptx_ins(cx, "cvt.%s.%s %s, %s", dm, am, d, a);
    } else if (!is_float_s(as)) {
        kf_ptx_ins(cx, "cvt.rn.%s.%s %s, %s", dm, am, d, a);
    } else if (!is_float_s(ds)) {
        cvt_float_to_int(cx, d, ds, a, am);
    } else if (kf_scalar_bytes[ds] > kf_scalar_bytes[as]) {
        kf_ptx_ins(cx, "cvt.%s.%s %s, %s", dm, am, d, a);
    } else {
        kf_ptx_ins(cx, "cvt.rn.%s.%s %s, %s", dm, am, d, a);
    }
}

/* ---- memory ------------------------------------------------------------------ */

static void reg_list(ptx_cx *cx, kf_buf *b, kf_val v, uint32_t n)
{
    for (uint32_t l = 0; l < n; l++) {
        if (l) kf_buf_append(b, ", ", 2);
        kf_buf_puts(b, kf_ptx_reg(cx, v, l).s);
    }
}

/* Loads (store = false) or stores the value v of type `elem` at [addr] in
 * state space sp ("global", "global.nc", "shared", "local", "param"). */
static void mem_access(ptx_cx *cx, bool store, const char *sp, const char *addr, kf_type elem, kf_val v)
{
    kf_scalar s = (kf_scalar)elem.scalar;
    uint32_t n = nlanes(elem), sb = kf_scalar_bytes[s];
    if (s == KF_S_BOOL) {
        if (n != 1) {
            kf_ptx_error(cx, "bool vectors cannot be stored in memory; use u8 lanes and compare with != 0");
            return;
        }
        preg t = kf_ptx_tmp(cx, PTX_RC_RS);
        if (store) {
            kf_ptx_ins(cx, "selp.u16 %s, 1, 0, %s", t.s, kf_ptx_reg(cx, v, 0).s);
            kf_ptx_ins(cx, "st.%s.u8 [%s], %s", sp, addr, t.s);
        } else {
            kf_ptx_ins(cx, "ld.%s.u8 %s, [%s]", sp, t.s, addr);
            kf_ptx_ins(cx, "setp.ne.u16 %s, %s, 0", kf_ptx_reg(cx, v, 0).s, t.s);
        }
        return;
    }
    kf_buf list = {0};
    if (n <= 4) {
        static const char *const vecs[5] = {"", "", "v2.", "", "v4."};
        const char *vec = vecs[n];
        reg_list(cx, &list, v, n);
        const char *lb = n > 1 ? "{" : "", *rb = n > 1 ? "}" : "";
        if (store) kf_ptx_ins(cx, "st.%s.%s%s [%s], %s%s%s", sp, vec, kf_ptx_scalars[s].mem, addr, lb, list.data, rb);
        else kf_ptx_ins(cx, "ld.%s.%s%s %s%s%s, [%s]", sp, vec, kf_ptx_scalars[s].mem, lb, list.data, rb, addr);
        kf_buf_free(&list);
        return;
    }
    uint32_t words = n * sb / 4, per = 4 / sb;
    preg w[4];
    for (uint32_t i = 0; i < words; i++) {
        w[i] = kf_ptx_tmp(cx, PTX_RC_R);
        if (i) kf_buf_append(&list, ", ", 2);
        kf_buf_puts(&list, w[i].s);
        if (store) kf_ptx_pack_word(cx, w[i].s, v, i * per, per, s);
    }
    if (store) kf_ptx_ins(cx, "st.%s.v%u.b32 [%s], {%s}", sp, words, addr, list.data);
    else kf_ptx_ins(cx, "ld.%s.v%u.b32 {%s}, [%s]", sp, words, list.data, addr);
    for (uint32_t i = 0; i < words && !store; i++) kf_ptx_unpack_word(cx, w[i].s, v, i * per, per, s);
    kf_buf_free(&list);
}

static const char *arr_space(const ptx_cx *cx, uint32_t ai)
{
    return (cx->k->arrays[ai].type.flags & KF_TF_SHARED) ? "shared" : "local";
}

/* ALOAD / ASTORE, in registers when the array lives there. */
static void emit_array(ptx_cx *cx, const kf_ir_ins *in, bool store)
{
    uint32_t ai = (uint32_t)in->imm;
    if (ai >= cx->k->narrays) {
        kf_ptx_error(cx, "internal error: array %u does not exist", ai);
        return;
    }
    kf_type at = cx->k->arrays[ai].type;
    kf_val v = store ? in->a[1] : in->dst;
    if (!cx->areg[ai]) {
        ptx_addr a = kf_ptx_arr_addr(cx, ai, in->a[0], in->type);
        mem_access(cx, store, arr_space(cx, ai), a.s, in->type, v);
        return;
    }
    uint64_t e = 0;
    (void)kf_ptx_const_of(cx, in->a[0], &e);
    if (e >= at.len) {
        kf_ptx_error(cx, "index %llu is out of bounds for '%s' of length %u", (unsigned long long)e,
                  cx->k->arrays[ai].name ? cx->k->arrays[ai].name : "array", at.len);
        return;
    }
    kf_scalar s = (kf_scalar)at.scalar;
    for (uint32_t l = 0; l < at.lanes; l++) {
        preg r = kf_ptx_regn(cx, (ptx_rclass)kf_ptx_scalars[s].rc, cx->areg[ai] + (uint32_t)e * at.lanes + l);
        if (store) kf_ptx_ins(cx, "mov.%s %s, %s", movty(s), r.s, kf_ptx_movsrc(cx, v, l).s);
        else kf_ptx_ins(cx, "mov.%s %s, %s", movty(s), kf_ptx_reg(cx, v, l).s, r.s);
    }
}

/* The state space of a buffer load: read-only buffers through the
 * non-coherent path (ld.global.nc). In a kernel with dep_wait() (ir.h
 * kf_ir_early_params), a load before the wait is ld.relaxed.gpu, which
 * ptxas keeps before griddepcontrol.wait (it hoists the wait above weak
 * loads, so they would start only after it), and after the wait only the
 * buffers loaded before it stay .nc: ptxas moves ld.global.nc across the
 * wait, so a buffer the kernel before writes must not be read that way. */
static const char *load_space(const ptx_cx *cx, const kf_ir_ins *in)
{
    bool ro = !(vtype(cx, in->a[0]).flags & KF_TF_MUT);
    if (cx->dep_at == UINT32_MAX) return ro ? "global.nc" : "global";
    if (cx->at < cx->dep_at) return "relaxed.gpu.global";
    uint32_t p = kf_ir_buffer_param(cx->k, in->a[0]);
    return ro && p < 64 && (cx->early >> p & 1) ? "global.nc" : "global";
}

static void emit_load(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_type et = vtype(cx, in->dst);
    ptx_addr a = kf_ptx_buf_addr(cx, in->a[0], in->a[1], kf_type_elem_bytes(et));
    mem_access(cx, false, load_space(cx, in), a.s, et, in->dst);
}

static void emit_store(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_type et = vtype(cx, in->a[2]);
    ptx_addr a = kf_ptx_buf_addr(cx, in->a[0], in->a[1], kf_type_elem_bytes(et));
    mem_access(cx, true, "global", a.s, et, in->a[2]);
}

static void emit_param(ptx_cx *cx, const kf_ir_ins *in)
{
    if (in->imm >= cx->k->nparams) {
        kf_ptx_error(cx, "internal error: parameter %llu does not exist", (unsigned long long)in->imm);
        return;
    }
    const kf_ir_param *p = &cx->k->params[in->imm];
    kf_buf addr = {0};   /* names have no length limit */
    kf_buf_puts(&addr, "p_");
    kf_buf_puts(&addr, p->name);
    if (addr.oom) {
        kf_ptx_error(cx, "out of memory");
    } else if (p->type.kind == KF_TK_BUFFER) {
        preg d = kf_ptx_reg(cx, in->dst, 0);
        kf_ptx_ins(cx, "ld.param.u64 %s, [%s]", d.s, addr.data);
        kf_ptx_ins(cx, "cvta.to.global.u64 %s, %s", d.s, d.s);
    } else {
        mem_access(cx, false, "param", addr.data, p->type, in->dst);
    }
    kf_buf_free(&addr);
}

/* ---- arithmetic ---------------------------------------------------------------- */

/* Shift amount as a u32 register (PTX clamps amounts >= width). */
static preg shift_amount(ptx_cx *cx, const char *b, kf_scalar s)
{
    preg t = kf_ptx_tmp(cx, PTX_RC_R);
    if (kf_scalar_bytes[s] == 8) {
        preg c = kf_ptx_tmp(cx, PTX_RC_RD);
        kf_ptx_ins(cx, "min.u64 %s, %s, 64", c.s, b);
        kf_ptx_ins(cx, "cvt.u32.u64 %s, %s", t.s, c.s);
    } else if (kf_scalar_bytes[s] <= 2) {
        kf_ptx_ins(cx, "cvt.u32.u%u %s, %s", 8u * kf_scalar_bytes[s], t.s, b);
    } else {
        snprintf(t.s, sizeof t.s, "%s", b);
    }
    return t;
}

/* Signed / and % with the divisor -1 taken out: x / -1 = -x (wrapping),
 * x % -1 = 0, so INT_MIN / -1 never reaches div. */
static void signed_divrem(ptx_cx *cx, kf_op op, kf_scalar s, const char *d, const char *a, const char *b)
{
    ptx_rclass rc = (ptx_rclass)kf_ptx_scalars[s].rc;
    const char *ar = kf_ptx_scalars[s].arith, *bi = kf_ptx_scalars[s].bits;
    preg p = kf_ptx_tmp(cx, PTX_RC_P), b1 = kf_ptx_tmp(cx, rc), q = kf_ptx_tmp(cx, rc);
    kf_ptx_ins(cx, "setp.eq.%s %s, %s, -1", ar, p.s, b);
    kf_ptx_ins(cx, "selp.%s %s, 1, %s, %s", bi, b1.s, b, p.s);
    kf_ptx_ins(cx, "%s.%s %s, %s, %s", kf_ptx_binops[op].ints, ar, q.s, a, b1.s);
    if (op == KF_OP_DIV) {
        preg n = kf_ptx_tmp(cx, rc);
        int_neg(cx, s, n.s, a);
        kf_ptx_ins(cx, "selp.%s %s, %s, %s, %s", bi, d, n.s, q.s, p.s);
    } else {
        kf_ptx_ins(cx, "selp.%s %s, 0, %s, %s", bi, d, q.s, p.s);
    }
}

static void int_binop(ptx_cx *cx, kf_op op, kf_scalar s, const char *d, const char *a, const char *b)
{
    const ptx_scalar_info *si = &kf_ptx_scalars[s];
    switch (op) {
    case KF_OP_AND:
    case KF_OP_OR:
    case KF_OP_XOR:
        kf_ptx_ins(cx, "%s.%s %s, %s, %s", kf_ptx_binops[op].ints, si->bits, d, a, b);
        return;
    case KF_OP_SHL:
    case KF_OP_SHR: {
        preg t = shift_amount(cx, b, s);
        kf_ptx_ins(cx, "%s.%s %s, %s, %s", kf_ptx_binops[op].ints, op == KF_OP_SHL ? si->bits : si->arith, d, a, t.s);
        break;
    }
    case KF_OP_DIV:
    case KF_OP_REM:
        if (is_signed_s(s) && kf_scalar_bytes[s] >= 2) {
            signed_divrem(cx, op, s, d, a, b);
            return;
        }
        kf_ptx_ins(cx, "%s.%s %s, %s, %s", kf_ptx_binops[op].ints, si->arith, d, a, b);
        break;
    case KF_OP_ADD:
    case KF_OP_SUB:
    case KF_OP_MUL:
        kf_ptx_ins(cx, "%s.%s %s, %s, %s", kf_ptx_binops[op].ints, wrap_type(s), d, a, b);
        break;
    default:
        kf_ptx_ins(cx, "%s.%s %s, %s, %s", kf_ptx_binops[op].ints, si->arith, d, a, b);
        break;
    }
    kf_ptx_normalize(cx, d, s);
}

/* Through f32: exact widening, one f32 operation, one rounding back (the
 * double rounding is innocuous: 24 >= 2 * 11 + 2). */
static void half_via_f32(ptx_cx *cx, kf_op op, kf_scalar s, const char *d, const char *a, const char *b)
{
    preg fa = kf_ptx_tmp(cx, PTX_RC_F), fb = kf_ptx_tmp(cx, PTX_RC_F), fr = kf_ptx_tmp(cx, PTX_RC_F);
    kf_ptx_cvt_lane(cx, fa.s, KF_S_F32, a, s);
    kf_ptx_cvt_lane(cx, fb.s, KF_S_F32, b, s);
    kf_ptx_ins(cx, "%s.f32 %s, %s, %s", kf_ptx_binops[op].floats, fr.s, fa.s, fb.s);
    kf_ptx_ins(cx, "cvt.rn.%s.f32 %s, %s", s == KF_S_F16 ? "f16" : "bf16", d, fr.s);
}

static void float_binop(ptx_cx *cx, kf_op op, kf_scalar s, const char *d, const char *a, const char *b)
{
    if (!kf_ptx_binops[op].floats) {
        kf_ptx_error(cx, "operator '%s' is not defined on %s", kf_op_spelling[op], kf_scalar_names[s]);
        return;
    }
    if (op == KF_OP_DIV && is_half(s)) {
        half_via_f32(cx, op, s, d, a, b);
    } else if (s == KF_S_BF16 && cx->o->arch < 90) {
        /* sm_80..89 have fma.rn.bf16 only: a+b = fma(b,1,a), a-b = fma(b,-1,a),
         * a*b = fma(a,b,-0); each exact but for the one rounding. */
        preg k = kf_ptx_tmp(cx, PTX_RC_H);
        kf_ptx_ins(cx, "mov.b16 %s, %s", k.s, op == KF_OP_ADD ? "0x3F80" : op == KF_OP_SUB ? "0xBF80" : "0x8000");
        if (op == KF_OP_MUL) kf_ptx_ins(cx, "fma.rn.bf16 %s, %s, %s, %s", d, a, b, k.s);
        else kf_ptx_ins(cx, "fma.rn.bf16 %s, %s, %s, %s", d, b, k.s, a);
    } else {
        kf_ptx_ins(cx, "%s.%s %s, %s, %s", kf_ptx_binops[op].floats, kf_ptx_scalars[s].arith, d, a, b);
    }
}

/* The constant `bits` of an integer type as a signed 64-bit value. */
static int64_t sext(uint64_t bits, kf_scalar s)
{
    uint32_t w = 8u * kf_scalar_bytes[s];
    if (w >= 64) return (int64_t)bits;
    uint64_t m = (1ull << w) - 1;
    bits &= m;
    return is_signed_s(s) && (bits >> (w - 1)) ? (int64_t)(bits | ~m) : (int64_t)bits;
}

/* Integer operations whose second operand is a constant and that then need
 * no run-time care: shifts by an immediate and signed / and % (x / -1 = -x,
 * x % -1 = 0, otherwise a plain div.s that ptxas strength-reduces). A shift
 * by the width or more is never written as one: ptxas 13 folds
 * `mul.lo.s64 t, x, C; shl.b64 d, t, 64` into one multiply by C << 64
 * taken modulo 2^6 (d = x * C, issue 7, difftest seed 1 program 1781), so
 * such a shift is a mov of 0 (<<, unsigned >>) or a shift by width - 1
 * (signed >>: the sign fill). Returns false when the general path applies. */
static bool const_int_binop(ptx_cx *cx, kf_op op, kf_scalar s, const char *d, const char *a, uint64_t bits)
{
    const ptx_scalar_info *si = &kf_ptx_scalars[s];
    uint32_t w = 8u * kf_scalar_bytes[s];
    if (op == KF_OP_SHL || op == KF_OP_SHR) {
        uint64_t amt = (uint64_t)sext(bits, s) & (w >= 64 ? ~0ull : ((1ull << w) - 1));
        if (amt >= w && (op == KF_OP_SHL || !is_signed_s(s))) {
            kf_ptx_ins(cx, "mov.%s %s, 0", si->bits, d);
            return true;
        }
        if (amt >= w) amt = w - 1;   /* 8-bit values are sign-extended in 16-bit registers: bit 7 fills too */
        kf_ptx_ins(cx, "%s.%s %s, %s, %u", kf_ptx_binops[op].ints, op == KF_OP_SHL ? si->bits : si->arith, d, a,
                (unsigned)amt);
        kf_ptx_normalize(cx, d, s);
        return true;
    }
    if ((op != KF_OP_DIV && op != KF_OP_REM) || !is_signed_s(s)) return false;
    if (sext(bits, s) == -1 && op == KF_OP_DIV) {
        int_neg(cx, s, d, a);
        return true;
    }
    if (sext(bits, s) == -1) kf_ptx_ins(cx, "mov.%s %s, 0", si->bits, d);
    else kf_ptx_ins(cx, "%s.%s %s, %s, %lld", kf_ptx_binops[op].ints, si->arith, d, a, (long long)sext(bits, s));
    kf_ptx_normalize(cx, d, s);
    return true;
}

/* ---- packed half math (LANGUAGE.md section 8) ----------------------------------- */

/* f16/bf16 vectors compute as pairs of lanes packed into one .b32 register
 * ({lane 2i, lane 2i+1}, the low half first), one f16x2/bf16x2 instruction
 * per pair, each lane rounded once: add/sub/mul.rn, fma.rn, min, max, abs.
 * .rn keeps ptxas from contracting a mul and an add into an fma. sm_80..89
 * have no add/sub/mul.bf16x2: fma.rn.bf16x2 computes them exactly but for
 * its one rounding (a + b = fma(a, 1, b), a - b = fma(b, -1, a), a * b =
 * fma(a, b, -0), which keeps a -0 product -0). */
static bool packed_half(kf_type t)
{
    return t.kind == KF_TK_VECTOR && is_half((kf_scalar)t.scalar) && t.lanes % 2 == 0;
}

/* The word of lanes l, l + 1 of v, put together by prmt, not mov.b32 {lo, hi}:
 * ptxas 13 makes a negative 16-bit constant lane of such a pair as its
 * magnitude and loses the negation (f16x4(x, -2048, 0, 0) + y gave +2048 in
 * lane 1: difftest seed 7 program 2992, case regress_half_const_pair). */
static preg half_pair(ptx_cx *cx, kf_val v, uint32_t l)
{
    preg w = kf_ptx_tmp(cx, PTX_RC_R), lo = kf_ptx_tmp(cx, PTX_RC_R), hi = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "cvt.u32.u16 %s, %s", lo.s, kf_ptx_reg(cx, v, l).s);
    kf_ptx_ins(cx, "cvt.u32.u16 %s, %s", hi.s, kf_ptx_reg(cx, v, l + 1).s);
    kf_ptx_ins(cx, "prmt.b32 %s, %s, %s, 0x5410", w.s, lo.s, hi.s);
    return w;
}

/* A .b32 register holding `bits` (both lanes of a pair constant). */
static preg pair_const(ptx_cx *cx, uint32_t bits)
{
    preg k = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "mov.b32 %s, 0x%08X", k.s, bits);
    return k;
}

/* One pair: d = op(a, b, c) as a packed instruction (op: a binop or builtin). */
static void packed_pair(ptx_cx *cx, kf_scalar s, int op, bool builtin, const char *d, const char *a,
                        const char *b, const char *c)
{
    const char *ty = s == KF_S_F16 ? "f16x2" : "bf16x2";
    bool emulate = s == KF_S_BF16 && cx->o->arch < 90 && !builtin;
    if (builtin) {
        kf_builtin bi = (kf_builtin)op;
        if (bi == KF_BI_FMA) kf_ptx_ins(cx, "fma.rn.%s %s, %s, %s, %s", ty, d, a, b, c);
        else if (bi == KF_BI_ABS) kf_ptx_ins(cx, "and.b32 %s, %s, 0x7FFF7FFF", d, a);   /* abs.(b)f16x2 makes NaNs canonical */
        else kf_ptx_ins(cx, "%s.%s %s, %s, %s", bi == KF_BI_MIN ? "min" : "max", ty, d, a, b);
    } else if (!emulate) {
        kf_ptx_ins(cx, "%s.%s %s, %s, %s", kf_ptx_binops[op].floats, ty, d, a, b);
    } else if (op == KF_OP_MUL) {
        kf_ptx_ins(cx, "fma.rn.bf16x2 %s, %s, %s, %s", d, a, b, pair_const(cx, 0x80008000u).s);
    } else if (op == KF_OP_ADD) {
        kf_ptx_ins(cx, "fma.rn.bf16x2 %s, %s, %s, %s", d, a, pair_const(cx, 0x3F803F80u).s, b);
    } else {
        kf_ptx_ins(cx, "fma.rn.bf16x2 %s, %s, %s, %s", d, b, pair_const(cx, 0xBF80BF80u).s, a);
    }
}

/* A BINOP (+ - *) or MATH (fma min max abs) on an f16/bf16 vector, pair by pair. */
static void emit_packed(ptx_cx *cx, const kf_ir_ins *in, int op, bool builtin)
{
    kf_scalar s = (kf_scalar)in->type.scalar;
    unsigned nargs = !builtin ? 2 : op == KF_BI_FMA ? 3 : op == KF_BI_ABS ? 1 : 2;
    for (uint32_t l = 0; l < in->type.lanes; l += 2) {
        preg x[3], r = kf_ptx_tmp(cx, PTX_RC_R);
        for (unsigned j = 0; j < nargs; j++) x[j] = half_pair(cx, in->a[j], l);
        packed_pair(cx, s, op, builtin, r.s, x[0].s, nargs > 1 ? x[1].s : "", nargs > 2 ? x[2].s : "");
        kf_ptx_ins(cx, "mov.b32 {%s, %s}, %s", kf_ptx_reg(cx, in->dst, l).s, kf_ptx_reg(cx, in->dst, l + 1).s, r.s);
    }
}

/* The value a 64-bit v is a constant multiple of through a chain of
 * shifts and multiplications by constants (v = base · *factor, mod 2^64),
 * or v itself. ptxas 13 folds such a chain into a following multiply by a
 * constant and keeps the product constant to 32 bits: (x << 31) * 3 + 1
 * gave (x << 31) + 1, and 1 - (x << 31) * 28 gave (x << 31) * 28 + 1
 * (difftest seed 12 program 6010, case regress_mul_chain). emit_binop
 * multiplies base by the exact 64-bit product instead, which ptxas gets
 * right (NVVM folds the same way). Single-definition values only, so base
 * still holds the value the chain read. */
static kf_val mul_chain(const ptx_cx *cx, kf_val v, uint64_t *factor)
{
    const kf_ir_kernel *k = cx->k;
    *factor = 1;
    for (int hops = 0; hops < 8 && v < k->nvals && cx->def1[v] >= 0 && cx->ndefs[v] == 1; hops++) {
        const kf_ir_ins *d = &k->ins[cx->def1[v]];
        uint64_t c;
        kf_val x = d->a[0];
        if (d->op != KF_IR_BINOP) break;
        if (d->sub == KF_OP_SHL && kf_ptx_const_of(cx, d->a[1], &c) && c < 64) c = 1ull << c;
        else if (d->sub == KF_OP_MUL && kf_ptx_const_of(cx, d->a[1], &c)) (void)0;
        else if (d->sub == KF_OP_MUL && kf_ptx_const_of(cx, d->a[0], &c)) x = d->a[1];
        else break;
        uint64_t unused;
        if (x >= k->nvals || cx->ndefs[x] > 1 || kf_ptx_const_of(cx, x, &unused)) break;
        *factor *= c;
        v = x;
    }
    return v;
}

static void emit_binop(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_scalar s = (kf_scalar)in->type.scalar;
    kf_op op = (kf_op)in->sub;
    if (op < KF_OP_ADD || op > KF_OP_SHR) {
        kf_ptx_error(cx, "internal error: binop %u", (unsigned)op);
        return;
    }
    if (packed_half(in->type) && (op == KF_OP_ADD || op == KF_OP_SUB || op == KF_OP_MUL)) {
        emit_packed(cx, in, op, false);
        return;
    }
    uint64_t cb;
    kf_val va = in->a[0], vb = in->a[1];
    bool commutes = op == KF_OP_ADD || op == KF_OP_MUL || op == KF_OP_AND || op == KF_OP_OR || op == KF_OP_XOR;
    if (commutes && kf_ptx_const_of(cx, va, &cb) && !kf_ptx_const_of(cx, vb, &cb)) va = in->a[1], vb = in->a[0];
    bool bconst = kf_ptx_const_of(cx, vb, &cb) && s != KF_S_BOOL && !is_half(s);
    uint64_t f = 1;
    kf_val base = bconst && op == KF_OP_MUL && kf_scalar_bytes[s] == 8 && !is_float_s(s) ? mul_chain(cx, va, &f) : va;
    if (base != va) {   /* the chain's base times the exact 64-bit product (mul_chain) */
        for (uint32_t l = 0; l < nlanes(in->type); l++)
            kf_ptx_ins(cx, "mul.lo.%s %s, %s, %lld", kf_ptx_scalars[s].arith, kf_ptx_reg(cx, in->dst, l).s,
                       kf_ptx_reg(cx, base, l).s, (long long)(cb * f));
        return;
    }
    /* 0 - x and x * -1 are int_neg's ~x + 1: ptxas 13 drops the negation of
     * sub 0, x (or mul by -1) inside a VIMNMX3 as it does neg.s32's (difftest
     * seed 2303 program 15603's nests: max(max(0 - y, 0 - x), ~l) gave
     * max(-y, x, ~l); case regress_nested_minmax) */
    uint64_t ca, ones = kf_scalar_ones(s);
    bool int_s = s != KF_S_BOOL && !is_float_s(s) && !is_half(s);
    if (int_s && ((op == KF_OP_SUB && kf_ptx_const_of(cx, in->a[0], &ca) && (ca & ones) == 0) ||
                  (op == KF_OP_MUL && bconst && (cb & ones) == ones))) {
        for (uint32_t l = 0; l < nlanes(in->type); l++)
            int_neg(cx, s, kf_ptx_reg(cx, in->dst, l).s, kf_ptx_reg(cx, op == KF_OP_SUB ? in->a[1] : va, l).s);
        return;
    }
    /* a - b (b not a constant) that an integer min/max reads: a + (~b + 1).
     * ptxas 13 fuses the subtraction into a VIADDMNMX and, when a becomes a
     * constant only in its own folding, negates the wrong side: max(x & 16,
     * 16 - v) as max(v - 16, x & 16) (difftest seed 2309 program 10046) */
    if (int_s && !bconst && op == KF_OP_SUB && kf_scalar_bytes[s] == 4 && (cx->feeds[in->dst] & KF_IR_FEEDS_INT_MINMAX)) {
        for (uint32_t l = 0; l < nlanes(in->type); l++) {
            preg t = kf_ptx_tmp(cx, PTX_RC_R);
            int_neg(cx, s, t.s, kf_ptx_reg(cx, vb, l).s);
            kf_ptx_ins(cx, "add.%s %s, %s, %s", wrap_type(s), kf_ptx_reg(cx, in->dst, l).s, kf_ptx_reg(cx, va, l).s, t.s);
        }
        return;
    }
    for (uint32_t l = 0; l < nlanes(in->type); l++) {
        preg d = kf_ptx_reg(cx, in->dst, l), a = kf_ptx_reg(cx, va, l), b = kf_ptx_opnd(cx, vb, l);
        if (bconst && !is_float_s(s) && const_int_binop(cx, op, s, d.s, a.s, cb)) continue;
        if (s == KF_S_BOOL) {
            if (op != KF_OP_AND && op != KF_OP_OR && op != KF_OP_XOR) {
                kf_ptx_error(cx, "operator '%s' is not defined on bool", kf_op_spelling[op]);
                return;
            }
            kf_ptx_ins(cx, "%s.pred %s, %s, %s", kf_ptx_binops[op].ints, d.s, a.s, b.s);
        } else if (is_float_s(s)) {
            float_binop(cx, op, s, d.s, a.s, b.s);
        } else {
            int_binop(cx, op, s, d.s, a.s, b.s);
        }
    }
}

static void emit_cmp(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_scalar s = (kf_scalar)vtype(cx, in->a[0]).scalar;
    kf_op op = (kf_op)in->sub;
    preg d = kf_ptx_reg(cx, in->dst, 0), a = kf_ptx_reg(cx, in->a[0], 0);
    preg b = s == KF_S_BOOL || is_half(s) ? kf_ptx_reg(cx, in->a[1], 0) : kf_ptx_opnd(cx, in->a[1], 0);
    if (op < KF_OP_EQ || op > KF_OP_GE) {
        kf_ptx_error(cx, "internal error: comparison %u", (unsigned)op);
    } else if (s == KF_S_BOOL) {
        if (op == KF_OP_NE) {
            kf_ptx_ins(cx, "xor.pred %s, %s, %s", d.s, a.s, b.s);
        } else if (op == KF_OP_EQ) {
            preg t = kf_ptx_tmp(cx, PTX_RC_P);
            kf_ptx_ins(cx, "xor.pred %s, %s, %s", t.s, a.s, b.s);
            kf_ptx_ins(cx, "not.pred %s, %s", d.s, t.s);
        } else {
            kf_ptx_error(cx, "'%s' is not defined on bool", kf_op_spelling[op]);
        }
    } else if (s == KF_S_BF16 && cx->o->arch < 90) {
        preg fa = kf_ptx_tmp(cx, PTX_RC_F), fb = kf_ptx_tmp(cx, PTX_RC_F);
        kf_ptx_ins(cx, "cvt.f32.bf16 %s, %s", fa.s, a.s);
        kf_ptx_ins(cx, "cvt.f32.bf16 %s, %s", fb.s, b.s);
        kf_ptx_ins(cx, "setp.%s.f32 %s, %s, %s", kf_ptx_cmps[op].floats, d.s, fa.s, fb.s);
    } else {
        kf_ptx_ins(cx, "setp.%s.%s %s, %s, %s", is_float_s(s) ? kf_ptx_cmps[op].floats : kf_ptx_cmps[op].ints,
                kf_ptx_scalars[s].arith, d.s, a.s, b.s);
    }
}

static void emit_unop(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_scalar s = (kf_scalar)in->type.scalar;
    for (uint32_t l = 0; l < nlanes(in->type); l++) {
        preg d = kf_ptx_reg(cx, in->dst, l), a = kf_ptx_reg(cx, in->a[0], l);
        if (in->sub == KF_OP_NOT) {
            kf_ptx_ins(cx, "not.pred %s, %s", d.s, a.s);
        } else if (in->sub == KF_OP_BNOT) {
            kf_ptx_ins(cx, "not.%s %s, %s", kf_ptx_scalars[s].bits, d.s, a.s);
            kf_ptx_normalize(cx, d.s, s);
        } else if (in->sub != KF_OP_NEG || s == KF_S_BOOL) {
            kf_ptx_error(cx, "internal error: unary operator %u on %s", (unsigned)in->sub, kf_scalar_names[s]);
        } else if (is_half(s)) {
            kf_ptx_ins(cx, "xor.b16 %s, %s, 0x8000", d.s, a.s);
        } else if (is_float_s(s)) {
            kf_ptx_ins(cx, "neg.%s %s, %s", kf_ptx_scalars[s].arith, d.s, a.s);
        } else {
            int_neg(cx, s, d.s, a.s);
        }
    }
}

/* ---- bit reinterpretation ---------------------------------------------------------- */

/* Lanes first and first + 1 of v (16 bits each) from the scratch word w:
 * the low half masked (kf_ptx_low_bits), then w shifted down in place for the high half.
 * Never mov.b32 {lo, hi}: ptxas 13 and the H200 driver's JIT read the high
 * half of a split word that is a widened 8- or 16-bit value as that value
 * ((u8x2 as u32x2) as i16x4 gave the byte, not 0, in lane 3: difftest seed
 * 4 program 5323). */
static void split_halves(ptx_cx *cx, const char *w, kf_val v, uint32_t first)
{
    kf_ptx_low_bits(cx, kf_ptx_reg(cx, v, first).s, w, 16);
    kf_ptx_ins(cx, "shr.u32 %s, %s, 16", w, w);
    kf_ptx_ins(cx, "cvt.u16.u32 %s, %s", kf_ptx_reg(cx, v, first + 1).s, w);
}

/* Splits the value into 32-bit words (w) or joins words into it. */
static void words_of(ptx_cx *cx, kf_val v, preg *w, uint32_t nw, bool to_words)
{
    kf_type t = vtype(cx, v);
    kf_scalar s = (kf_scalar)t.scalar;
    uint32_t sb = kf_scalar_bytes[s], n = nlanes(t);
    if (sb == 8) {
        for (uint32_t l = 0; l < n; l++) {
            if (to_words) kf_ptx_ins(cx, "mov.b64 {%s, %s}, %s", w[2 * l].s, w[2 * l + 1].s, kf_ptx_reg(cx, v, l).s);
            else kf_ptx_ins(cx, "mov.b64 %s, {%s, %s}", kf_ptx_reg(cx, v, l).s, w[2 * l].s, w[2 * l + 1].s);
        }
    } else if (sb == 4) {
        for (uint32_t l = 0; l < n; l++) {
            if (to_words) kf_ptx_ins(cx, "mov.b32 %s, %s", w[l].s, kf_ptx_reg(cx, v, l).s);
            else kf_ptx_ins(cx, "mov.b32 %s, %s", kf_ptx_reg(cx, v, l).s, w[l].s);
        }
    } else {
        uint32_t per = 4 / sb < n ? 4 / sb : n;
        for (uint32_t i = 0; i < nw; i++) {
            if (to_words) kf_ptx_pack_word(cx, w[i].s, v, i * per, per, s);
            else if (sb == 2 && per == 2) split_halves(cx, w[i].s, v, i * per);
            else kf_ptx_unpack_word(cx, w[i].s, v, i * per, per, s);
        }
    }
}

static void emit_bitcast(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_type st = vtype(cx, in->a[0]), dt = in->type;
    uint32_t bytes = kf_type_elem_bytes(st);
    if (st.scalar == KF_S_BOOL || dt.scalar == KF_S_BOOL || bytes != kf_type_elem_bytes(dt)) {
        kf_ptx_error(cx, "bitcast needs two non-bool types of the same size");
        return;
    }
    if (kf_scalar_bytes[st.scalar] == kf_scalar_bytes[dt.scalar]) {
        /* f16/bf16 -> i16/u16 that integer operators read, through a word
         * holding the half twice: ptxas 13 drops an and/shr of `mov.b16 rs, h`
         * when h is a cvt to f16/bf16 and the result is packed into a vector
         * store (difftest seed 2307 program 1172: bitcast(i16, bf16 value) &
         * 16384 stored unmasked). */
        bool half_bits = is_half((kf_scalar)st.scalar) && !is_half((kf_scalar)dt.scalar) &&
                         (cx->feeds[in->dst] & KF_IR_FEEDS_INT_OP);
        for (uint32_t l = 0; l < nlanes(dt); l++) {
            preg d = kf_ptx_reg(cx, in->dst, l), a = kf_ptx_reg(cx, in->a[0], l);
            if (half_bits) {
                preg w = kf_ptx_tmp(cx, PTX_RC_R);
                kf_ptx_ins(cx, "mov.b32 %s, {%s, %s}", w.s, a.s, a.s);
                kf_ptx_ins(cx, "cvt.u16.u32 %s, %s", d.s, w.s);
                continue;
            }
            kf_ptx_ins(cx, "mov.%s %s, %s", kf_ptx_scalars[dt.scalar].bits, d.s, a.s);
            if (st.scalar != dt.scalar) kf_ptx_normalize(cx, d.s, (kf_scalar)dt.scalar);   /* u8 <-> i8 */
        }
        if (!half_bits && in->a[0] < cx->k->nvals && cx->wreg[in->a[0]] && cx->ndefs[in->dst] == 1 && !cx->alias[in->dst])
            cx->wreg[in->dst] = cx->wreg[in->a[0]];   /* the same 16-bit lanes: the same words */
        return;
    }
    preg w[4];
    uint32_t nw = bytes < 4 ? 1 : bytes / 4;
    for (uint32_t i = 0; i < nw; i++) w[i] = kf_ptx_tmp(cx, PTX_RC_R);
    words_of(cx, in->a[0], w, nw, true);
    words_of(cx, in->dst, w, nw, false);
}

/* ---- selection, vectors ------------------------------------------------------------ */

/* v's only definition, or NULL (kf_ir_is_negzero) */
static const kf_ir_ins *only_def(const void *ctx, kf_val v)
{
    const ptx_cx *cx = ctx;
    return v < cx->k->nvals && cx->def1[v] >= 0 ? &cx->k->ins[cx->def1[v]] : NULL;
}

/* d = P(m) ? t : f, P an integer predicate on the bits of f32 m (ir.h
 * kf_ir_zero_select), which ptxas does not make a saturate of. */
static void zero_pick(ptx_cx *cx, kf_ir_zpred zp, const char *d, const char *m, const char *t, const char *f)
{
    preg x = kf_ptx_tmp(cx, PTX_RC_R), p = kf_ptx_tmp(cx, PTX_RC_P);
    kf_ptx_ins(cx, "mov.b32 %s, %s", x.s, m);
    if (zp == KF_ZP_GT || zp == KF_ZP_LT || zp == KF_ZP_LE)
        kf_ptx_ins(cx, "add.s32 %s, %s, %s", x.s, x.s,
                   zp == KF_ZP_GT ? "-1" : zp == KF_ZP_LT ? "2147483647" : "-2147483648");
    kf_ptx_ins(cx, "setp.%s.u32 %s, %s, 2139095040", zp == KF_ZP_GT || zp == KF_ZP_LT ? "lt" : "le", p.s, x.s);
    if (zp == KF_ZP_GE || zp == KF_ZP_LE) {   /* the other zero: -0 (GE), +0 (LE, x is b + 0x80000000) */
        preg q = kf_ptx_tmp(cx, PTX_RC_P);
        kf_ptx_ins(cx, "setp.eq.u32 %s, %s, -2147483648", q.s, x.s);
        kf_ptx_ins(cx, "or.pred %s, %s, %s", p.s, p.s, q.s);
    }
    kf_ptx_ins(cx, "selp.b32 %s, %s, %s, %s", d, t, f, p.s);
}

static void emit_select(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_scalar s = (kf_scalar)in->type.scalar;
    preg p = kf_ptx_reg(cx, in->a[0], 0);
    kf_ir_zero_pick zp = kf_ir_zero_select(cx->k, in, only_def, cx);
    if (zp.p != KF_ZP_NONE) {   /* select(m > 0.0, m, 0.0) of a min: on m's bits */
        zero_pick(cx, zp.p, kf_ptx_reg(cx, in->dst, 0).s, kf_ptx_reg(cx, in->a[zp.m], 0).s,
                  kf_ptx_opnd(cx, in->a[1], 0).s, kf_ptx_opnd(cx, in->a[2], 0).s);
        return;
    }
    for (uint32_t l = 0; l < nlanes(in->type); l++) {
        bool imm = s != KF_S_BOOL && !is_half(s);
        preg d = kf_ptx_reg(cx, in->dst, l);
        preg a = imm ? kf_ptx_opnd(cx, in->a[1], l) : kf_ptx_reg(cx, in->a[1], l);
        preg b = imm ? kf_ptx_opnd(cx, in->a[2], l) : kf_ptx_reg(cx, in->a[2], l);
        if (s == KF_S_BOOL) {
            preg t = kf_ptx_tmp(cx, PTX_RC_P);
            kf_ptx_ins(cx, "@%s mov.pred %s, %s", p.s, t.s, a.s);
            kf_ptx_ins(cx, "@!%s mov.pred %s, %s", p.s, t.s, b.s);
            kf_ptx_ins(cx, "mov.pred %s, %s", d.s, t.s);
        } else {
            kf_ptx_ins(cx, "selp.%s %s, %s, %s, %s", kf_ptx_scalars[s].bits, d.s, a.s, b.s, p.s);
        }
    }
}

static void emit_const(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_scalar s = (kf_scalar)in->type.scalar;
    if (!cx->final_pass) return;   /* the first pass only records which uses need a register */
    if (in->dst < cx->k->nvals && cx->ndefs[in->dst] == 1 && !cx->needreg[in->dst]) {
        cx->needreg[in->dst] = 2;   /* no register: any later register use is a bug (kf_ptx_reg) */
        return;
    }
    preg imm = kf_ptx_imm(s, in->imm);
    for (uint32_t l = 0; l < nlanes(in->type); l++)
        kf_ptx_ins(cx, "mov.%s %s, %s", movty(s), kf_ptx_reg(cx, in->dst, l).s, imm.s);
}

static void emit_lanes(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_type t = in->type;
    kf_scalar s = (kf_scalar)t.scalar;
    const char *mt = t.kind == KF_TK_BUFFER ? "b64" : movty(s);
    switch (in->op) {
    case KF_IR_MOV:
    case KF_IR_VIEW:
        for (uint32_t l = 0; l < nlanes(t); l++)
            kf_ptx_ins(cx, "mov.%s %s, %s", mt, kf_ptx_reg(cx, in->dst, l).s, kf_ptx_movsrc(cx, in->a[0], l).s);
        break;
    case KF_IR_SPLAT:
        for (uint32_t l = 0; l < nlanes(t); l++)
            kf_ptx_ins(cx, "mov.%s %s, %s", mt, kf_ptx_reg(cx, in->dst, l).s, kf_ptx_movsrc(cx, in->a[0], 0).s);
        break;
    case KF_IR_EXTRACT:
        kf_ptx_ins(cx, "mov.%s %s, %s", mt, kf_ptx_reg(cx, in->dst, 0).s, kf_ptx_movsrc(cx, in->a[0], (uint32_t)in->imm).s);
        break;
    case KF_IR_INSERT:
        for (uint32_t l = 0; l < nlanes(t) && in->dst != in->a[0]; l++)
            if (l != in->imm)
                kf_ptx_ins(cx, "mov.%s %s, %s", mt, kf_ptx_reg(cx, in->dst, l).s, kf_ptx_movsrc(cx, in->a[0], l).s);
        kf_ptx_ins(cx, "mov.%s %s, %s", mt, kf_ptx_reg(cx, in->dst, (uint32_t)in->imm).s, kf_ptx_movsrc(cx, in->a[1], 0).s);
        break;
    default: break;
    }
}

/* Whether v may be a sign extension of a narrower integer (an i8/i16
 * converted to a wider integer, or a signed bfe), seen through bitcasts,
 * lanes, copies, selects, integer conversions, abs, min, max and the
 * integer operators, over every definition of v (a var assigned in several
 * places): ptxas sees through copies and through whatever it folds to one
 * (abs of a u32 is a copy; `x | 0` at -O0 ...), so any integer operation
 * on the way counts. */
static bool sign_extended(const ptx_cx *cx, kf_val v, int depth)
{
    const kf_ir_kernel *k = cx->k;
    if (depth > 12 || v >= k->nvals || !kf_type_is_int(k->vals[v].type)) return false;
    for (uint32_t i = cx->def1[v] >= 0 ? (uint32_t)cx->def1[v] : 0; i < k->nins; i++) {
        const kf_ir_ins *d = &k->ins[i];
        if (d->dst != v) continue;
        bool yes = false;
        switch (d->op) {
        case KF_IR_BITCAST: case KF_IR_EXTRACT: case KF_IR_MOV: case KF_IR_UNOP:
            yes = sign_extended(cx, d->a[0], depth + 1);
            break;
        case KF_IR_SELECT: yes = sign_extended(cx, d->a[1], depth + 1) || sign_extended(cx, d->a[2], depth + 1); break;
        case KF_IR_BINOP: yes = sign_extended(cx, d->a[0], depth + 1) || sign_extended(cx, d->a[1], depth + 1); break;
        case KF_IR_MATH:
            if (d->sub == KF_BI_ABS || d->sub == KF_BI_MIN || d->sub == KF_BI_MAX)
                yes = sign_extended(cx, d->a[0], depth + 1) || (d->sub != KF_BI_ABS && sign_extended(cx, d->a[1], depth + 1));
            break;
        case KF_IR_INTRIN: yes = d->sub == KF_BI_BFE && is_signed_s((kf_scalar)d->type.scalar); break;
        case KF_IR_CVT: {
            kf_scalar from = (kf_scalar)k->vals[d->a[0]].type.scalar;
            yes = (is_signed_s(from) && kf_scalar_bytes[from] < kf_scalar_bytes[(kf_scalar)d->type.scalar]) ||
                  sign_extended(cx, d->a[0], depth + 1);
            break;
        }
        default: break;
        }
        if (yes) return true;
        if (cx->def1[v] >= 0) break;
    }
    return false;
}

/* u32 -> f16/bf16/f32/f64 of a sign-extended narrow value, as the sum of
 * its halves (each exact, one rounding: the same result; to f16 through
 * f32, which only rounds values that are infinite in f16; to bf16 through
 * f64, where the sum is exact, so the one rounding is f64 -> bf16). ptxas
 * 13 turns `cvt.u32.s8 r, b; cvt.rn.f32.u32 f, r` (also to f16, through a
 * u64, or from bfe.s32 r, w, 8, 8) for a byte of a vector load into I2F.S8
 * of the byte: a signed conversion, -2 instead of 4294967294 (difftest
 * seed 1 program 12521); to bf16 the same, cvt.rn.bf16.u32 into
 * I2F.BF16.S8, and sm_80's round-to-odd cvt.rz.f32.u32 into I2F.S8.RZ
 * (seed 2303 program 4463: -39 where 4294967257 rounds to 2^32); through
 * an abs of the u32, a lane of an i8x16 parameter into I2F.F16.S8 (seed
 * 2514 program 4267: -123 where 4294967173 is inf in f16). */
static void cvt_u32_halves(ptx_cx *cx, const char *d, kf_scalar ds, const char *a)
{
    if (ds == KF_S_BF16) {
        preg sum = kf_ptx_tmp(cx, PTX_RC_FD);
        cvt_u32_halves(cx, sum.s, KF_S_F64, a);
        kf_ptx_cvt_lane(cx, d, KF_S_BF16, sum.s, KF_S_F64);
        return;
    }
    bool f64 = ds == KF_S_F64;
    preg hi = kf_ptx_tmp(cx, PTX_RC_R), lo = kf_ptx_tmp(cx, PTX_RC_R), fh = kf_ptx_tmp(cx, f64 ? PTX_RC_FD : PTX_RC_F),
         fl = kf_ptx_tmp(cx, f64 ? PTX_RC_FD : PTX_RC_F);
    const char *ft = f64 ? "f64" : "f32";
    kf_ptx_ins(cx, "shr.u32 %s, %s, 16", hi.s, a);
    kf_ptx_ins(cx, "and.b32 %s, %s, 65535", lo.s, a);
    kf_ptx_ins(cx, "cvt.rn.%s.u32 %s, %s", ft, fh.s, hi.s);
    kf_ptx_ins(cx, "cvt.rn.%s.u32 %s, %s", ft, fl.s, lo.s);
    if (ds == KF_S_F16) {
        preg f = kf_ptx_tmp(cx, PTX_RC_F);
        kf_ptx_ins(cx, "fma.rn.f32 %s, %s, 0f47800000, %s", f.s, fh.s, fl.s);
        kf_ptx_ins(cx, "cvt.rn.f16.f32 %s, %s", d, f.s);
    } else {
        kf_ptx_ins(cx, "fma.rn.%s %s, %s, %s, %s", ft, d, fh.s, f64 ? "0d40F0000000000000" : "0f47800000", fl.s);
    }
}

static void emit_cvt(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_scalar as = (kf_scalar)vtype(cx, in->a[0]).scalar, ds = (kf_scalar)in->type.scalar;
    bool halves = as == KF_S_U32 && is_float_s(ds) && sign_extended(cx, in->a[0], 0);
    for (uint32_t l = 0; l < nlanes(in->type); l++) {
        if (halves) cvt_u32_halves(cx, kf_ptx_reg(cx, in->dst, l).s, ds, kf_ptx_reg(cx, in->a[0], l).s);
        else kf_ptx_cvt_lane(cx, kf_ptx_reg(cx, in->dst, l).s, ds, kf_ptx_reg(cx, in->a[0], l).s, as);
    }
}

/* ---- integer math -------------------------------------------------------------------- */

/* Ceiling division: q = a / b, plus one when the remainder is non-zero and
 * (signed) has the sign of b, i.e. the exact quotient is positive. */
static void int_cdiv(ptx_cx *cx, kf_scalar s, const char *d, const char *a, const char *b)
{
    ptx_rclass rc = (ptx_rclass)kf_ptx_scalars[s].rc;
    preg q = kf_ptx_tmp(cx, rc), r = kf_ptx_tmp(cx, rc), p = kf_ptx_tmp(cx, PTX_RC_P), q1 = kf_ptx_tmp(cx, rc);
    int_binop(cx, KF_OP_DIV, s, q.s, a, b);
    int_binop(cx, KF_OP_REM, s, r.s, a, b);
    kf_ptx_ins(cx, "setp.ne.%s %s, %s, 0", kf_ptx_scalars[s].arith, p.s, r.s);
    if (is_signed_s(s)) {
        preg x = kf_ptx_tmp(cx, rc), p2 = kf_ptx_tmp(cx, PTX_RC_P);
        kf_ptx_ins(cx, "xor.%s %s, %s, %s", kf_ptx_scalars[s].bits, x.s, r.s, b);
        kf_ptx_ins(cx, "setp.ge.%s %s, %s, 0", kf_ptx_scalars[s].arith, p2.s, x.s);
        kf_ptx_ins(cx, "and.pred %s, %s, %s", p.s, p.s, p2.s);
    }
    kf_ptx_ins(cx, "add.%s %s, %s, 1", kf_ptx_scalars[s].arith, q1.s, q.s);
    kf_ptx_ins(cx, "selp.%s %s, %s, %s, %s", kf_ptx_scalars[s].bits, d, q1.s, q.s, p.s);
    kf_ptx_normalize(cx, d, s);
}

static void int_bitcount(ptx_cx *cx, kf_builtin bi, kf_scalar s, const char *d, const char *a)
{
    const char *op = bi == KF_BI_CLZ ? "clz" : "popc";
    uint32_t sb = kf_scalar_bytes[s];
    if (sb >= 4) {
        kf_ptx_ins(cx, "%s.b%u %s, %s", op, 8 * sb, d, a);
        return;
    }
    preg t = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "cvt.u32.u%u %s, %s", 8 * sb, t.s, a);
    if (bi == KF_BI_POPC) {
        kf_ptx_ins(cx, "popc.b32 %s, %s", d, t.s);
    } else {
        preg c = kf_ptx_tmp(cx, PTX_RC_R);
        kf_ptx_ins(cx, "clz.b32 %s, %s", c.s, t.s);
        kf_ptx_ins(cx, "sub.u32 %s, %s, %u", d, c.s, 32 - 8 * sb);
    }
}

/* An 8- or 16-bit operand (a %rs register, or an immediate) as a 32-bit
 * one, extended by its type: 16-bit min/max are done in 32 bits. ptxas 13
 * turns max.u16 x, 8192 then setp.eq.u16 of the result and 8192 into one
 * VIMNMX.U16x2 whose two "which operand" predicates (low and high half)
 * are written to the same P, so the high halves' tie decided the compare
 * (difftest seed 1 program 3540: the branch not taken for x = 0). */
static const char *widen16(ptx_cx *cx, kf_scalar s, const char *a, preg *w)
{
    if (a[0] != '%') return a;
    *w = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "cvt.%s.%s %s, %s", is_signed_s(s) ? "s32" : "u32", is_signed_s(s) ? "s16" : "u16", w->s, a);
    return w->s;
}

/* min, max or clamp (c non-NULL) of 8/16-bit integers in 32 bits (widen16),
 * the result cut back to 16 (it is one of the operands: in range). */
static void int_minmax16(ptx_cx *cx, kf_builtin bi, kf_scalar s, const char *d, const char *a, const char *b,
                         const char *c)
{
    const char *ar = is_signed_s(s) ? "s32" : "u32";
    preg wa, wb, wc, t = kf_ptx_tmp(cx, PTX_RC_R);
    a = widen16(cx, s, a, &wa), b = widen16(cx, s, b, &wb);
    kf_ptx_ins(cx, "%s.%s %s, %s, %s", bi == KF_BI_MIN ? "min" : "max", ar, t.s, a, b);
    if (c) kf_ptx_ins(cx, "min.%s %s, %s, %s", ar, t.s, t.s, widen16(cx, s, c, &wc));
    kf_ptx_ins(cx, "cvt.u16.u32 %s, %s", d, t.s);
}

/* |a| wrapped (abs(INT_MIN) = INT_MIN). 16-bit registers: abs.s32 of the
 * widened value, cut back to 16 bits (then normalized: abs(-128) is -128
 * for i8): ptxas widens abs.s16 without wrapping, as it does neg.s16
 * (int_neg), and a 16-bit max may become VIMNMX.x2 (int_minmax16).
 * 32/64 bits: max(a, -a), not abs.s32/.s64: ptxas 13 takes abs's result for
 * never negative and divides it unsigned, so abs(INT_MIN) % 2147483647 gave
 * 1, not -1 (difftest seed 7 program 906, case regress_abs_rem); -a as
 * int_neg makes it (not neg.s32: regress_neg_minmax3). */
static void int_abs(ptx_cx *cx, kf_scalar s, const char *d, const char *a)
{
    if (!is_signed_s(s)) {
        kf_ptx_ins(cx, "mov.%s %s, %s", kf_ptx_scalars[s].bits, d, a);
    } else if (kf_scalar_bytes[s] <= 2) {
        preg w, t = kf_ptx_tmp(cx, PTX_RC_R);
        kf_ptx_ins(cx, "abs.s32 %s, %s", t.s, widen16(cx, s, a, &w));
        kf_ptx_ins(cx, "cvt.u16.u32 %s, %s", d, t.s);
        kf_ptx_normalize(cx, d, s);
    } else {
        preg t = kf_ptx_tmp(cx, kf_scalar_bytes[s] == 8 ? PTX_RC_RD : PTX_RC_R);
        int_neg(cx, s, t.s, a);
        kf_ptx_ins(cx, "max.%s %s, %s, %s", kf_ptx_scalars[s].arith, d, a, t.s);
    }
}

static void int_math(ptx_cx *cx, kf_builtin bi, kf_scalar s, const char *d, const char *a, const char *b,
                     const char *c)
{
    const char *ar = kf_ptx_scalars[s].arith;
    switch (bi) {
    case KF_BI_ABS:
        int_abs(cx, s, d, a);
        break;
    case KF_BI_MIN:
    case KF_BI_MAX:
        if (kf_scalar_bytes[s] <= 2) int_minmax16(cx, bi, s, d, a, b, NULL);
        else kf_ptx_ins(cx, "%s.%s %s, %s, %s", bi == KF_BI_MIN ? "min" : "max", ar, d, a, b);
        break;
    case KF_BI_CLAMP: {
        if (kf_scalar_bytes[s] <= 2) {
            int_minmax16(cx, KF_BI_MAX, s, d, a, b, c);
            break;
        }
        preg t = kf_ptx_tmp(cx, (ptx_rclass)kf_ptx_scalars[s].rc);
        kf_ptx_ins(cx, "max.%s %s, %s, %s", ar, t.s, a, b);
        kf_ptx_ins(cx, "min.%s %s, %s, %s", ar, d, t.s, c);
        break;
    }
    case KF_BI_CLZ:
    case KF_BI_POPC: int_bitcount(cx, bi, s, d, a); break;
    case KF_BI_MUL_HI:
        if (kf_scalar_bytes[s] == 1) {
            preg t = kf_ptx_tmp(cx, PTX_RC_RS);
            kf_ptx_ins(cx, "mul.lo.%s %s, %s, %s", ar, t.s, a, b);
            kf_ptx_ins(cx, "shr.%s %s, %s, 8", ar, d, t.s);
        } else {
            kf_ptx_ins(cx, "mul.hi.%s %s, %s, %s", ar, d, a, b);
        }
        break;
    case KF_BI_CDIV: int_cdiv(cx, s, d, a, b); break;
    default:
        kf_ptx_error(cx, "'%s' is not defined on %s", kf_builtin_names[bi], kf_scalar_names[s]);
        break;
    }
}

static void emit_math(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_builtin bi = (kf_builtin)in->sub;
    kf_type at = in->a[0] ? vtype(cx, in->a[0]) : in->type;
    kf_scalar s = (kf_scalar)at.scalar;
    if (packed_half(in->type) && (bi == KF_BI_FMA || bi == KF_BI_MIN || bi == KF_BI_MAX || bi == KF_BI_ABS)) {
        emit_packed(cx, in, bi, true);
        return;
    }
    cx->minmax_negzero = false;
    for (int k = 0; k < 3 && (bi == KF_BI_MIN || bi == KF_BI_MAX || bi == KF_BI_CLAMP); k++)
        cx->minmax_negzero |= kf_ir_is_negzero(cx->k, in->a[k], only_def, cx);
    kf_ir_zero_pick zp = kf_ir_zero_select(cx->k, in, only_def, cx);
    for (uint32_t l = 0; l < nlanes(in->type); l++) {
        bool imm = !is_half(s) && bi != KF_BI_CDIV && bi != KF_BI_FAST_DIV;
        preg d = kf_ptx_reg(cx, in->dst, l), a = kf_ptx_reg(cx, in->a[0], l);
        preg b = !in->a[1] ? a : imm ? kf_ptx_opnd(cx, in->a[1], l) : kf_ptx_reg(cx, in->a[1], l);
        preg c = !in->a[2] ? a : imm ? kf_ptx_opnd(cx, in->a[2], l) : kf_ptx_reg(cx, in->a[2], l);
        if (zp.p != KF_ZP_NONE) {
            const char *ops[3] = {a.s, b.s, c.s};
            zero_pick(cx, zp.p, d.s, ops[zp.m], ops[zp.t], ops[zp.f]);
        } else if (is_float_s(s)) kf_ptx_math_lane(cx, bi, s, d.s, a.s, b.s, c.s);
        else int_math(cx, bi, s, d.s, a.s, b.s, c.s);
    }
}

/* ---- warp, atomics ---------------------------------------------------------------------- */

/* Warp shuffle semantics (LANGUAGE.md section 7; the interpreter's table in
 * ir/interp.c is the reference), n = lanes of this warp that exist:
 *   shfl(v, s)      source j = s % 32           own value when j >= n
 *   shfl_xor(v, m)  source j = lane ^ m         own value when m >= 32 or j >= n
 *   shfl_down(v, d) source j = lane + d         own value when d >= 32 or j >= n
 *   shfl_up(v, d)   source j = lane - d         own value when d > lane (d >= 32)
 * shfl.sync uses only b[4:0] and gives the own value when j > maxLane (up:
 * j < minLane); with segment mask 0, maxLane is the c operand's clamp, so c
 * is the clamp register (n - 1) and membermask the existing lanes (a full
 * mask is undefined in a partial warp). An offset amount >= 32 (b[4:0]
 * would wrap) keeps the own value: an immediate becomes a mov, a register
 * a setp/selp after the shuffle. */
static void shfl_word(ptx_cx *cx, const ptx_shfl_info *sh, const char *d, const char *a, const char *b)
{
    kf_ptx_ins(cx, "shfl.sync.%s.b32 %s, %s, %s, %s, %s", sh->mode, d, a, b, sh->clamp ? cx->wclamp.s : "0",
            cx->wmask.s);
}

static void emit_shfl(ptx_cx *cx, const kf_ir_ins *in)
{
    const ptx_shfl_info *sh = &kf_ptx_shfls[in->sub];
    kf_scalar s = (kf_scalar)in->type.scalar;
    uint32_t sb = kf_scalar_bytes[s];
    preg d = kf_ptx_reg(cx, in->dst, 0), a = kf_ptx_reg(cx, in->a[0], 0), b = kf_ptx_opnd(cx, in->a[1], 0);
    if (!sh->mode || in->type.kind != KF_TK_SCALAR || (sb != 4 && sb != 8)) {
        kf_ptx_error(cx, "warp shuffles take 32- or 64-bit scalars, not %s", kf_scalar_names[s]);
        return;
    }
    const char *w = sb == 4 ? "b32" : "b64";
    uint64_t amount;
    bool is_const = kf_ptx_const_of(cx, in->a[1], &amount);
    if (sh->offset && is_const && (uint32_t)amount >= 32) {   /* source outside the warp: own value */
        kf_ptx_ins(cx, "mov.%s %s, %s", w, d.s, a.s);
        return;
    }
    bool guard = sh->offset && !is_const;
    preg r = guard ? kf_ptx_tmp(cx, kf_ptx_class_of(in->type)) : d;
    if (sb == 4) {
        shfl_word(cx, sh, r.s, a.s, b.s);
    } else {
        preg lo = kf_ptx_tmp(cx, PTX_RC_R), hi = kf_ptx_tmp(cx, PTX_RC_R);
        preg lo2 = kf_ptx_tmp(cx, PTX_RC_R), hi2 = kf_ptx_tmp(cx, PTX_RC_R);
        kf_ptx_ins(cx, "mov.b64 {%s, %s}, %s", lo.s, hi.s, a.s);
        shfl_word(cx, sh, lo2.s, lo.s, b.s);
        shfl_word(cx, sh, hi2.s, hi.s, b.s);
        kf_ptx_ins(cx, "mov.b64 %s, {%s, %s}", r.s, lo2.s, hi2.s);
    }
    if (!guard) return;
    preg p = kf_ptx_tmp(cx, PTX_RC_P);
    kf_ptx_ins(cx, "setp.lt.u32 %s, %s, 32", p.s, b.s);
    kf_ptx_ins(cx, "selp.%s %s, %s, %s, %s", w, d.s, r.s, a.s, p.s);
}

/* Votes over the existing lanes of the warp (membermask cx->wmask). */
static void emit_vote(ptx_cx *cx, const kf_ir_ins *in)
{
    preg d = kf_ptx_reg(cx, in->dst, 0), a = kf_ptx_reg(cx, in->a[0], 0);
    const char *m = cx->wmask.s;
    if (in->sub == KF_BI_BALLOT) kf_ptx_ins(cx, "vote.sync.ballot.b32 %s, %s, %s", d.s, a.s, m);
    else if (in->sub == KF_BI_ANY) kf_ptx_ins(cx, "vote.sync.any.pred %s, %s, %s", d.s, a.s, m);
    else if (in->sub == KF_BI_ALL) kf_ptx_ins(cx, "vote.sync.all.pred %s, %s, %s", d.s, a.s, m);
    else kf_ptx_error(cx, "internal error: vote %u", (unsigned)in->sub);
}

/* Float atomic min/max: a compare-and-swap loop over the bits, with the
 * NaN-ignoring min/max of the language. */
static void atomic_float_minmax(ptx_cx *cx, const kf_ir_ins *in, const char *addr)
{
    kf_scalar s = (kf_scalar)in->type.scalar;
    bool wide = s == KF_S_F64;
    ptx_rclass ri = wide ? PTX_RC_RD : PTX_RC_R, rf = wide ? PTX_RC_FD : PTX_RC_F;
    const char *bi = wide ? "b64" : "b32";
    preg old = kf_ptx_tmp(cx, ri), f = kf_ptx_tmp(cx, rf), nf = kf_ptx_tmp(cx, rf), nw = kf_ptx_tmp(cx, ri);
    preg got = kf_ptx_tmp(cx, ri), p = kf_ptx_tmp(cx, PTX_RC_P);
    uint32_t lbl = cx->at;
    kf_ptx_ins(cx, "ld.global.%s %s, [%s]", bi, old.s, addr);
    kf_ptx_label(cx, "$L_cas_%u", lbl);
    kf_ptx_ins(cx, "mov.%s %s, %s", bi, f.s, old.s);
    kf_ptx_ins(cx, "%s.%s %s, %s, %s", in->sub == KF_BI_ATOMIC_MIN ? "min" : "max", kf_ptx_scalars[s].arith, nf.s, f.s,
            kf_ptx_reg(cx, in->a[2], 0).s);
    kf_ptx_ins(cx, "mov.%s %s, %s", bi, nw.s, nf.s);
    kf_ptx_ins(cx, "atom.global.cas.%s %s, [%s], %s, %s", bi, got.s, addr, old.s, nw.s);
    kf_ptx_ins(cx, "setp.ne.%s %s, %s, %s", bi, p.s, got.s, old.s);
    kf_ptx_ins(cx, "mov.%s %s, %s", bi, old.s, got.s);
    kf_ptx_ins(cx, "@%s bra $L_cas_%u", p.s, lbl);
    if (in->dst) kf_ptx_ins(cx, "mov.%s %s, %s", bi, kf_ptx_reg(cx, in->dst, 0).s, got.s);
}

/* The register for an atomic's old value (a scratch one when unused). */
static preg old_reg(ptx_cx *cx, const kf_ir_ins *in)
{
    if (in->dst) return kf_ptx_reg(cx, in->dst, 0);
    return kf_ptx_tmp(cx, kf_ptx_class_of(in->type));
}

/* The atom type suffix, or NULL when the language has no such atomic. */
static const char *atomic_type(kf_builtin bi, kf_type t)
{
    kf_scalar s = (kf_scalar)t.scalar;
    if (t.kind == KF_TK_VECTOR) return bi == KF_BI_ATOMIC_ADD && s == KF_S_F16 && t.lanes == 2 ? "noftz.f16x2" : NULL;
    bool ints = s == KF_S_I32 || s == KF_S_U32 || s == KF_S_U64 || s == KF_S_I64;
    switch (bi) {
    case KF_BI_ATOMIC_ADD:
        if (s == KF_S_F32 || s == KF_S_F64) return kf_ptx_scalars[s].arith;
        return ints ? (kf_scalar_bytes[s] == 8 ? "u64" : kf_ptx_scalars[s].arith) : NULL;
    case KF_BI_ATOMIC_MIN:
    case KF_BI_ATOMIC_MAX: return ints ? kf_ptx_scalars[s].arith : NULL;
    case KF_BI_ATOMIC_EXCH:
    case KF_BI_ATOMIC_CAS:
        return ints || s == KF_S_F32 || s == KF_S_F64 ? kf_ptx_scalars[s].bits : NULL;
    default: return NULL;
    }
}

static void emit_atomic(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_builtin bi = (kf_builtin)in->sub;
    kf_type t = in->type;
    ptx_addr a = kf_ptx_buf_addr(cx, in->a[0], in->a[1], kf_type_elem_bytes(t));
    bool fminmax = (bi == KF_BI_ATOMIC_MIN || bi == KF_BI_ATOMIC_MAX) && t.kind == KF_TK_SCALAR &&
                   (t.scalar == KF_S_F32 || t.scalar == KF_S_F64);
    if (fminmax) {
        atomic_float_minmax(cx, in, a.s);
        return;
    }
    const char *ty = atomic_type(bi, t);
    char tn[16];
    if (!ty || !kf_ptx_atomic_ops[bi]) {
        kf_ptx_error(cx, "%s is not available on %s; atomics work on i32, u32, u64 and f32 (add also on f16x2 and f64)",
                  kf_builtin_names[bi] ? kf_builtin_names[bi] : "atomic", kf_type_str(t, tn, sizeof tn));
        return;
    }
    if (t.kind == KF_TK_VECTOR) {
        preg w = half_pair(cx, in->a[2], 0), r = kf_ptx_tmp(cx, PTX_RC_R);
        kf_ptx_ins(cx, "atom.global.add.%s %s, [%s], %s", ty, r.s, a.s, w.s);
        if (in->dst)
            kf_ptx_ins(cx, "mov.b32 {%s, %s}, %s", kf_ptx_reg(cx, in->dst, 0).s, kf_ptx_reg(cx, in->dst, 1).s, r.s);
    } else if (bi == KF_BI_ATOMIC_CAS) {
        kf_ptx_ins(cx, "atom.global.cas.%s %s, [%s], %s, %s", ty, old_reg(cx, in).s, a.s,
                kf_ptx_reg(cx, in->a[2], 0).s, kf_ptx_reg(cx, in->a[3], 0).s);
    } else {
        kf_ptx_ins(cx, "atom.global.%s.%s %s, [%s], %s", kf_ptx_atomic_ops[bi], ty, old_reg(cx, in).s, a.s,
                kf_ptx_reg(cx, in->a[2], 0).s);
    }
}

/* ---- section 8 intrinsics ------------------------------------------------------------ */

/* The 32-bit word of a 4-byte vector (dot4's operands): the register of the
 * u32/i32 it is a bitcast of, when that bitcast is its only definition and
 * the u32/i32 has one definition too (`bitcast(i8x4, w)`: nothing unpacked
 * and packed again), else the lanes packed. */
static preg byte_word(ptx_cx *cx, kf_val v)
{
    int32_t d = cx->def1[v];
    if (d >= 0 && cx->k->ins[d].op == KF_IR_BITCAST) {
        kf_val src = cx->k->ins[d].a[0];
        kf_type st = vtype(cx, src);
        if (st.kind == KF_TK_SCALAR && (st.scalar == KF_S_U32 || st.scalar == KF_S_I32) && cx->ndefs[src] == 1)
            return kf_ptx_reg(cx, src, 0);
    }
    preg w = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_pack_word(cx, w.s, v, 0, 4, (kf_scalar)vtype(cx, v).scalar);
    return w;
}

/* A bfe/bfi position and length, pos & 0xff at most cap and len & 0xff at
 * most width - pos: the same field by the PTX ISA's definition, but always
 * inside the value. ptxas 13 miscompiles the others when it knows them:
 * bfe.s32 x, 33, 101 became -1 for every x (the ISA: x's sign bit
 * replicated), bfi.b32 with a length of 32 or more used it modulo 32. Run-
 * time operands get the same and/min, which ptxas folds when it can. The
 * cap is width - 1 for a signed bfe (a pos past the top gives the sign bit,
 * as the field (width - 1, 1) does) and width otherwise (a field of 0 bits). */
static void bitfield_range(ptx_cx *cx, const kf_ir_ins *in, int at, uint32_t width, uint32_t cap, preg *pos,
                           preg *len)
{
    uint64_t p, l;
    if (kf_ptx_const_of(cx, in->a[at], &p) && kf_ptx_const_of(cx, in->a[at + 1], &l)) {
        p &= 0xff, l &= 0xff;
        if (p > cap) p = cap;
        if (l > width - p) l = width - p;
        *pos = kf_ptx_imm(KF_S_U32, p), *len = kf_ptx_imm(KF_S_U32, l);
        return;
    }
    preg t = kf_ptx_tmp(cx, PTX_RC_R);
    *pos = kf_ptx_tmp(cx, PTX_RC_R), *len = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "and.b32 %s, %s, 255", pos->s, kf_ptx_reg(cx, in->a[at], 0).s);
    kf_ptx_ins(cx, "min.u32 %s, %s, %u", pos->s, pos->s, cap);
    kf_ptx_ins(cx, "and.b32 %s, %s, 255", len->s, kf_ptx_reg(cx, in->a[at + 1], 0).s);
    kf_ptx_ins(cx, "sub.u32 %s, %u, %s", t.s, width, pos->s);
    kf_ptx_ins(cx, "min.u32 %s, %s, %s", len->s, len->s, t.s);
}

/* dot4 (dp4a), bfe, bfi, prmt: one PTX instruction each (bfe and bfi after
 * bitfield_range). */
static void emit_intrin(ptx_cx *cx, const kf_ir_ins *in)
{
    unsigned n, f;
    if (kf_ir_intrin_info(in->sub, &n, &f) && !(f & KF_II_PURE)) {
        kf_ptx_emit_tensor(cx, in);
        return;
    }
    kf_scalar s = (kf_scalar)in->type.scalar;
    preg d = kf_ptx_reg(cx, in->dst, 0);
    switch (in->sub) {
    case KF_BI_DOT4: {
        preg a = byte_word(cx, in->a[0]), b = byte_word(cx, in->a[1]);
        const char *ta = vtype(cx, in->a[0]).scalar == KF_S_I8 ? "s32" : "u32";
        const char *tb = vtype(cx, in->a[1]).scalar == KF_S_I8 ? "s32" : "u32";
        kf_ptx_ins(cx, "dp4a.%s.%s %s, %s, %s, %s", ta, tb, d.s, a.s, b.s, kf_ptx_reg(cx, in->a[2], 0).s);
        break;
    }
    case KF_BI_BFE: {
        uint32_t w = 8u * kf_scalar_bytes[s];
        preg p, l;
        bitfield_range(cx, in, 1, w, kf_scalar_class[s] == 'i' ? w - 1 : w, &p, &l);
        kf_ptx_ins(cx, "bfe.%s %s, %s, %s, %s", kf_ptx_scalars[s].arith, d.s, kf_ptx_reg(cx, in->a[0], 0).s, p.s, l.s);
        break;
    }
    case KF_BI_BFI: {
        uint32_t w = 8u * kf_scalar_bytes[s];
        preg p, l;
        bitfield_range(cx, in, 2, w, w, &p, &l);
        kf_ptx_ins(cx, "bfi.%s %s, %s, %s, %s, %s", kf_ptx_scalars[s].bits, d.s, kf_ptx_reg(cx, in->a[0], 0).s,
                kf_ptx_reg(cx, in->a[1], 0).s, p.s, l.s);
        break;
    }
    case KF_BI_PRMT:
        kf_ptx_ins(cx, "prmt.b32 %s, %s, %s, %s", d.s, kf_ptx_reg(cx, in->a[0], 0).s, kf_ptx_reg(cx, in->a[1], 0).s,
                kf_ptx_opnd(cx, in->a[2], 0).s);
        break;
    default: kf_ptx_error(cx, "internal error: intrinsic '%s'", in->sub < KF_BI_COUNT ? kf_builtin_names[in->sub] : "?"); break;
    }
}

static void emit_one(ptx_cx *cx, const kf_ir_ins *in);

/* ---- control flow ------------------------------------------------------------------------ */

/* Labels are named after the structure's IF or LOOP (kf_ir_flow_of). */
static void emit_flow(ptx_cx *cx, const kf_ir_ins *in)
{
    uint32_t i = cx->at;
    kf_ir_flow f = kf_ir_flow_of(cx->k, i);
    uint32_t p = f.head;
    switch (in->op) {
    case KF_IR_IF: {
        const char *neg;
        preg c = kf_ptx_if_pred(cx, i, false, &neg);
        kf_ptx_ins(cx, "@%s%s bra $L_if_%u_%s", neg, c.s, i, f.mid ? "else" : "end");
        break;
    }
    case KF_IR_ELSE:
        kf_ptx_ins(cx, "bra $L_if_%u_end", p);
        kf_ptx_label(cx, "$L_if_%u_else", p);
        break;
    case KF_IR_ENDIF: kf_ptx_label(cx, "$L_if_%u_end", p); break;
    case KF_IR_LOOP: kf_ptx_label(cx, "$L_loop_%u", i); break;
    case KF_IR_LATCH: kf_ptx_label(cx, "$L_loop_%u_latch", p); break;
    case KF_IR_ENDLOOP:
        kf_ptx_ins(cx, "bra $L_loop_%u", p);
        kf_ptx_label(cx, "$L_loop_%u_end", p);
        break;
    case KF_IR_BREAK: kf_ptx_ins(cx, "bra $L_loop_%u_end", p); break;
    case KF_IR_CONTINUE: kf_ptx_ins(cx, "bra $L_loop_%u%s", p, f.mid ? "_latch" : ""); break;
    default: break;
    }
}

/* Forgets cached addresses that depend on a value just written, or all of
 * them where control flow joins (a label others branch to). */
static void invalidate_addresses(ptx_cx *cx, const kf_ir_ins *in)
{
    switch ((kf_ir_op)in->op) {
    case KF_IR_ELSE:
    case KF_IR_ENDIF:
    case KF_IR_LOOP:
    case KF_IR_LATCH:
    case KF_IR_ENDLOOP: cx->nacache = 0; return;
    default: break;
    }
    if (!in->dst) return;
    uint32_t n = 0;
    for (uint32_t i = 0; i < cx->nacache; i++)
        if (cx->acache[i].buf != in->dst && cx->acache[i].idx != in->dst) cx->acache[n++] = cx->acache[i];
    cx->nacache = n;
}

void kf_ptx_emit_ins(ptx_cx *cx, const kf_ir_ins *in)
{
    emit_one(cx, in);
    invalidate_addresses(cx, in);
}

void kf_ptx_forget_ins(ptx_cx *cx, const kf_ir_ins *in)
{
    invalidate_addresses(cx, in);
}

static void emit_one(ptx_cx *cx, const kf_ir_ins *in)
{
    switch ((kf_ir_op)in->op) {
    case KF_IR_NOP: break;
    case KF_IR_CONST: emit_const(cx, in); break;
    case KF_IR_PARAM: emit_param(cx, in); break;
    case KF_IR_MOV:
    case KF_IR_VIEW:
    case KF_IR_SPLAT:
    case KF_IR_EXTRACT:
    case KF_IR_INSERT: emit_lanes(cx, in); break;
    case KF_IR_BINOP: emit_binop(cx, in); break;
    case KF_IR_CMP: emit_cmp(cx, in); break;
    case KF_IR_UNOP: emit_unop(cx, in); break;
    case KF_IR_CVT: emit_cvt(cx, in); break;
    case KF_IR_BITCAST: emit_bitcast(cx, in); break;
    case KF_IR_SELECT: emit_select(cx, in); break;
    case KF_IR_MATH: emit_math(cx, in); break;
    case KF_IR_SREG:
        if (in->imm >= KF_SR_COUNT) kf_ptx_error(cx, "internal error: special register %llu", (unsigned long long)in->imm);
        else kf_ptx_ins(cx, "mov.u32 %s, %s", kf_ptx_reg(cx, in->dst, 0).s, kf_ir_sreg_ptx[in->imm]);
        break;
    case KF_IR_LOAD: emit_load(cx, in); break;
    case KF_IR_STORE: emit_store(cx, in); break;
    case KF_IR_ALOAD: emit_array(cx, in, false); break;
    case KF_IR_ASTORE: emit_array(cx, in, true); break;
    case KF_IR_ATOMIC: emit_atomic(cx, in); break;
    case KF_IR_SHFL: emit_shfl(cx, in); break;
    case KF_IR_VOTE: emit_vote(cx, in); break;
    case KF_IR_INTRIN: emit_intrin(cx, in); break;
    case KF_IR_BARRIER: kf_ptx_ins(cx, "bar.sync 0"); break;
    case KF_IR_RET: kf_ptx_ins(cx, "ret"); break;
    case KF_IR_IF:
    case KF_IR_ELSE:
    case KF_IR_ENDIF:
    case KF_IR_LOOP:
    case KF_IR_LATCH:
    case KF_IR_ENDLOOP:
    case KF_IR_BREAK:
    case KF_IR_CONTINUE: emit_flow(cx, in); break;
    default: kf_ptx_error(cx, "internal error: unknown IR op %u", (unsigned)in->op); break;
    }
}
