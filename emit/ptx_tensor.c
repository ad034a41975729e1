/* PTX instruction selection for the tensor-core and async-copy builtins
 * (LANGUAGE.md section 8), called by emit/ptx_ops.c for every INTRIN that is
 * not a pure helper. Each is its one PTX instruction:
 *   mma          mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
 *                mma.sync.aligned.m16n8k32.row.col.s32.{s8,u8}.{s8,u8}.s32
 *   ldmatrix     ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16
 *   cp_async     cp.async.cg.shared.global [dst], [src], 16[, n]
 *   commit/wait  cp.async.commit_group / cp.async.wait_group N
 *   fence        fence.acq_rel.gpu (the kforge extension fence())
 *   dep_wait     griddepcontrol.wait (sm_90; nothing below), then with
 *                pdl_trigger griddepcontrol.launch_dependents
 *   dep_trigger  griddepcontrol.launch_dependents (sm_90; nothing below)
 *   prefetch_l2  cp.async.bulk.prefetch.L2.global of the range's 16-byte
 *                chunks (sm_90; nothing below)
 * Fragments live one lane per register like every vector (ptx_internal.h);
 * the instructions take them as 32-bit words, so lanes are packed into
 * words before (mov.b32 {lo, hi} for 16-bit lanes, which ptxas folds
 * away) and unpacked after; a fragment that is a bitcast of 32-bit words is
 * read from those words directly. Shared addresses are 32-bit addresses in
 * the shared window, as every shared access of this emitter.
 *
 * Later (LANGUAGE.md version 3): wgmma, TMA and mbarriers are more rows of
 * KF_IR_INTRINS emitted here the same way (a descriptor or barrier operand
 * is one more value; a warpgroup op another KF_II_ flag). */
#include "ptx_internal.h"

#include <stdio.h>
#include <string.h>

static kf_type vtype(const ptx_cx *cx, kf_val v) { return cx->k->vals[v].type; }

/* The nw 32-bit words of fragment v into w[]: the registers of the 32-bit
 * value v is the only bitcast of (single definitions both), else v's lanes
 * packed into temporaries. */
static void frag_words(ptx_cx *cx, kf_val v, preg *w, uint32_t nw)
{
    kf_type t = vtype(cx, v);
    int32_t d = cx->def1[v];
    if (d >= 0 && cx->k->ins[d].op == KF_IR_BITCAST) {
        kf_val src = cx->k->ins[d].a[0];
        kf_type st = vtype(cx, src);
        if (kf_scalar_bytes[st.scalar] == 4 && kf_scalar_class[st.scalar] != 'f' && st.lanes == nw &&
            cx->ndefs[src] == 1) {
            for (uint32_t i = 0; i < nw; i++) w[i] = kf_ptx_reg(cx, src, i);
            return;
        }
    }
    uint32_t per = 4u / kf_scalar_bytes[t.scalar];
    for (uint32_t i = 0; i < nw; i++) {
        w[i] = kf_ptx_tmp(cx, PTX_RC_R);
        kf_ptx_pack_word(cx, w[i].s, v, i * per, per, (kf_scalar)t.scalar);
    }
}

/* "{r0, r1, ...}" of n registers. */
static void reg_set(kf_buf *b, const preg *r, uint32_t n)
{
    kf_buf_puts(b, "{");
    for (uint32_t i = 0; i < n; i++) {
        if (i) kf_buf_puts(b, ", ");
        kf_buf_puts(b, r[i].s);
    }
    kf_buf_puts(b, "}");
}

static const char *mma_type(kf_scalar s)
{
    switch (s) {
    case KF_S_F16: return "f16";
    case KF_S_BF16: return "bf16";
    case KF_S_I8: return "s8";
    default: return "u8";
    }
}

static void emit_mma(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_scalar as = (kf_scalar)vtype(cx, in->a[0]).scalar, bs = (kf_scalar)vtype(cx, in->a[1]).scalar;
    bool fl = as == KF_S_F16 || as == KF_S_BF16;
    preg a[4], b[2], c[4], d[4];
    frag_words(cx, in->a[0], a, 4);
    frag_words(cx, in->a[1], b, 2);
    for (uint32_t j = 0; j < 4; j++) c[j] = kf_ptx_reg(cx, in->a[2], j), d[j] = kf_ptx_reg(cx, in->dst, j);
    kf_buf ops = {0};
    reg_set(&ops, d, 4);
    kf_buf_puts(&ops, ", ");
    reg_set(&ops, a, 4);
    kf_buf_puts(&ops, ", ");
    reg_set(&ops, b, 2);
    kf_buf_puts(&ops, ", ");
    reg_set(&ops, c, 4);
    if (ops.oom) kf_ptx_error(cx, "out of memory");
    else
        kf_ptx_ins(cx, "mma.sync.aligned.%s.row.col.%s.%s.%s.%s %s", fl ? "m16n8k16" : "m16n8k32", fl ? "f32" : "s32",
                mma_type(as), mma_type(bs), fl ? "f32" : "s32", ops.data);
    kf_buf_free(&ops);
}

static void emit_ldmatrix(ptx_cx *cx, const kf_ir_ins *in)
{
    bool trans;
    uint32_t mats = kf_builtin_ldmatrix((kf_builtin)in->sub, &trans);
    kf_scalar s = (kf_scalar)in->type.scalar;
    ptx_addr at = kf_ptx_arr_addr(cx, (uint32_t)in->imm, in->a[0], kf_type_scalar(s));
    preg w[4];
    uint32_t first = cx->nreg[PTX_RC_R] + 1;   /* kf_ptx_tmp numbers them first, first + 1, ... */
    for (uint32_t i = 0; i < mats; i++) w[i] = kf_ptx_tmp(cx, PTX_RC_R);
    kf_buf set = {0};
    reg_set(&set, w, mats);
    if (set.oom) kf_ptx_error(cx, "out of memory");
    else kf_ptx_ins(cx, "ldmatrix.sync.aligned.m8n8.x%u%s.shared.b16 %s, [%s]", mats, trans ? ".trans" : "", set.data, at.s);
    kf_buf_free(&set);
    for (uint32_t i = 0; i < mats; i++) kf_ptx_unpack_word(cx, w[i].s, in->dst, 2 * i, 2, s);
    /* a fragment written only here is packed again (mma, bitcast) from these words */
    if (cx->ndefs[in->dst] == 1 && !cx->alias[in->dst]) cx->wreg[in->dst] = first;
}

/* cp.async.cg (L2 only, 16 bytes) from buf[j] into the array at element i;
 * the n-byte form reads n bytes and zero-fills the rest (src-size). */
static void emit_cp_async(ptx_cx *cx, const kf_ir_ins *in)
{
    uint32_t bytes = kf_type_elem_bytes(in->type);
    ptx_addr dst = kf_ptx_arr_addr(cx, (uint32_t)in->imm, in->a[0], in->type);
    ptx_addr src = kf_ptx_buf_addr(cx, in->a[1], in->a[2], bytes);
    if (in->sub == KF_BI_CP_ASYNC_N)
        kf_ptx_ins(cx, "cp.async.cg.shared.global [%s], [%s], 16, %s", dst.s, src.s, kf_ptx_opnd(cx, in->a[3], 0).s);
    else
        kf_ptx_ins(cx, "cp.async.cg.shared.global [%s], [%s], 16", dst.s, src.s);
}

/* prefetch_l2 on sm_90: one cp.async.bulk.prefetch.L2 of the 16-byte
 * chunks inside the range (the address rounded up, the end down; at most
 * 2 GiB - 16 bytes), none when no whole chunk lies inside. A hint: below
 * sm_90 nothing. */
static void emit_prefetch(ptx_cx *cx, const kf_ir_ins *in)
{
    if (cx->o->arch < 90) return;
    preg base = kf_ptx_reg(cx, in->a[0], 0), lo = kf_ptx_tmp(cx, PTX_RC_RD), hi = kf_ptx_tmp(cx, PTX_RC_RD);
    preg sz = kf_ptx_tmp(cx, PTX_RC_RD), sz32 = kf_ptx_tmp(cx, PTX_RC_R), p = kf_ptx_tmp(cx, PTX_RC_P);
    kf_ptx_ins(cx, "add.s64 %s, %s, %s", lo.s, base.s, kf_ptx_opnd(cx, in->a[1], 0).s);
    kf_ptx_ins(cx, "add.s64 %s, %s, %s", hi.s, lo.s, kf_ptx_opnd(cx, in->a[2], 0).s);
    kf_ptx_ins(cx, "add.s64 %s, %s, 15", lo.s, lo.s);
    kf_ptx_ins(cx, "and.b64 %s, %s, -16", lo.s, lo.s);
    kf_ptx_ins(cx, "and.b64 %s, %s, -16", hi.s, hi.s);
    kf_ptx_ins(cx, "setp.gt.u64 %s, %s, %s", p.s, hi.s, lo.s);
    kf_ptx_ins(cx, "sub.s64 %s, %s, %s", sz.s, hi.s, lo.s);
    kf_ptx_ins(cx, "min.u64 %s, %s, 2147483632", sz.s, sz.s);
    kf_ptx_ins(cx, "cvt.u32.u64 %s, %s", sz32.s, sz.s);
    kf_ptx_ins(cx, "@%s cp.async.bulk.prefetch.L2.global [%s], %s", p.s, lo.s, sz32.s);
}

void kf_ptx_emit_tensor(ptx_cx *cx, const kf_ir_ins *in)
{
    switch (in->sub) {
    case KF_BI_MMA: emit_mma(cx, in); break;
    case KF_BI_LDMATRIX_X1: case KF_BI_LDMATRIX_X2: case KF_BI_LDMATRIX_X4: case KF_BI_LDMATRIX_X1_TRANS:
    case KF_BI_LDMATRIX_X2_TRANS: case KF_BI_LDMATRIX_X4_TRANS: emit_ldmatrix(cx, in); break;
    case KF_BI_CP_ASYNC: case KF_BI_CP_ASYNC_N: emit_cp_async(cx, in); break;
    case KF_BI_CP_ASYNC_COMMIT: kf_ptx_ins(cx, "cp.async.commit_group"); break;
    case KF_BI_CP_ASYNC_WAIT: kf_ptx_ins(cx, "cp.async.wait_group %u", (unsigned)in->imm); break;
    case KF_BI_FENCE: kf_ptx_ins(cx, "fence.acq_rel.gpu"); break;   /* PTX 6.0, sm_70 (membar.gl is fence.sc.gpu) */
    case KF_BI_DEP_WAIT:
        if (!kf_emit_pdl_wait(cx->o)) break;   /* below sm_90: nothing, as the entry's wait */
        kf_ptx_comment(cx, "programmatic dependent launch: wait for the grids this one depends on (dep_wait)");
        kf_ptx_ins(cx, "griddepcontrol.wait");
        if (cx->o->pdl_trigger) kf_ptx_ins(cx, "griddepcontrol.launch_dependents");
        break;
    case KF_BI_DEP_TRIGGER:
        if (kf_emit_pdl_wait(cx->o)) kf_ptx_ins(cx, "griddepcontrol.launch_dependents");
        break;
    case KF_BI_PREFETCH_L2: emit_prefetch(cx, in); break;
    default:
        kf_ptx_error(cx, "internal error: intrinsic '%s'", in->sub < KF_BI_COUNT ? kf_builtin_names[in->sub] : "?");
        break;
    }
}
