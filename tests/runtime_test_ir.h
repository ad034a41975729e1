/* Shared by the runtime tests: a saxpy kernel built as core IR by hand
 * (y[i] = a*x[i] + y[i] for i < n; params a: f32, x: &[f32], y: &mut [f32],
 * n: u32; block 256, no grid expression), so the runtime is tested without
 * the front end; and scalar argument values (f32v, u32v). */
#ifndef KF_RUNTIME_TEST_IR_H
#define KF_RUNTIME_TEST_IR_H

#include <string.h>

#include "kforge.h"

typedef struct {
    kf_ir_kernel k;
    kf_ir_param params[4];
    kf_ir_value vals[20];
    kf_ir_ins ins[24];
    kf_ir_array arrays[1];
} ir_saxpy;

/* Scalar argument values. */
static inline kf_value f32v(float f)
{
    kf_value v = {.type = kf_type_scalar(KF_S_F32)};
    memcpy(&v.lane[0], &f, 4);
    return v;
}

static inline kf_value u32v(uint32_t u)
{
    kf_value v = {.type = kf_type_scalar(KF_S_U32)};
    v.lane[0] = u;
    return v;
}

static kf_val val(ir_saxpy *s, kf_type t)
{
    s->vals[s->k.nvals] = (kf_ir_value){.type = t};
    return s->k.nvals++;
}

static void emit(ir_saxpy *s, kf_ir_ins in)
{
    in.loc = (kf_loc){"saxpy.kf", 3, 5};
    s->ins[s->k.nins++] = in;
}

static kf_type buf_t(kf_scalar sc, unsigned lanes, bool mut)
{
    kf_type t = {KF_TK_BUFFER, (uint8_t)sc, (uint8_t)lanes, mut ? KF_TF_MUT : 0, 0};
    return t;
}

static void make_saxpy(ir_saxpy *s, uint32_t x_align)
{
    memset(s, 0, sizeof *s);
    kf_type f32 = kf_type_scalar(KF_S_F32), u32 = kf_type_scalar(KF_S_U32);
    s->k.name = "saxpy";
    s->k.params = s->params;
    s->k.nparams = 4;
    s->params[0] = (kf_ir_param){"a", f32, {0}, 0};
    s->params[1] = (kf_ir_param){"x", buf_t(KF_S_F32, 1, false), {0}, x_align};
    s->params[2] = (kf_ir_param){"y", buf_t(KF_S_F32, 1, true), {0}, 4};
    s->params[3] = (kf_ir_param){"n", u32, {0}, 0};
    s->k.vals = s->vals;
    s->k.nvals = 1;
    s->k.ins = s->ins;
    s->k.arrays = s->arrays;
    s->k.sched.block[0] = 256, s->k.sched.block[1] = 1, s->k.sched.block[2] = 1;
    kf_val a = val(s, f32), x = val(s, s->params[1].type), y = val(s, s->params[2].type), n = val(s, u32);
    emit(s, (kf_ir_ins){.op = KF_IR_PARAM, .type = f32, .dst = a, .imm = 0});
    emit(s, (kf_ir_ins){.op = KF_IR_PARAM, .type = s->params[1].type, .dst = x, .imm = 1});
    emit(s, (kf_ir_ins){.op = KF_IR_PARAM, .type = s->params[2].type, .dst = y, .imm = 2});
    emit(s, (kf_ir_ins){.op = KF_IR_PARAM, .type = u32, .dst = n, .imm = 3});
    kf_val bid = val(s, u32), bdim = val(s, u32), tid = val(s, u32), t0 = val(s, u32), i = val(s, u32);
    emit(s, (kf_ir_ins){.op = KF_IR_SREG, .type = u32, .dst = bid, .imm = KF_SR_CTAID_X});
    emit(s, (kf_ir_ins){.op = KF_IR_SREG, .type = u32, .dst = bdim, .imm = KF_SR_NTID_X});
    emit(s, (kf_ir_ins){.op = KF_IR_SREG, .type = u32, .dst = tid, .imm = KF_SR_TID_X});
    emit(s, (kf_ir_ins){.op = KF_IR_BINOP, .sub = KF_OP_MUL, .type = u32, .dst = t0, .a = {bid, bdim}});
    emit(s, (kf_ir_ins){.op = KF_IR_BINOP, .sub = KF_OP_ADD, .type = u32, .dst = i, .a = {t0, tid}});
    kf_val c = val(s, kf_type_scalar(KF_S_BOOL));
    emit(s, (kf_ir_ins){.op = KF_IR_CMP, .sub = KF_OP_LT, .type = u32, .dst = c, .a = {i, n}});
    emit(s, (kf_ir_ins){.op = KF_IR_IF, .a = {c}});
    kf_val xv = val(s, f32), yv = val(s, f32), m = val(s, f32), r = val(s, f32);
    emit(s, (kf_ir_ins){.op = KF_IR_LOAD, .type = f32, .dst = xv, .a = {x, i}});
    emit(s, (kf_ir_ins){.op = KF_IR_LOAD, .type = f32, .dst = yv, .a = {y, i}});
    emit(s, (kf_ir_ins){.op = KF_IR_BINOP, .sub = KF_OP_MUL, .type = f32, .dst = m, .a = {a, xv}});
    emit(s, (kf_ir_ins){.op = KF_IR_BINOP, .sub = KF_OP_ADD, .type = f32, .dst = r, .a = {m, yv}});
    emit(s, (kf_ir_ins){.op = KF_IR_STORE, .type = f32, .a = {y, i, r}});
    emit(s, (kf_ir_ins){.op = KF_IR_ENDIF});
    emit(s, (kf_ir_ins){.op = KF_IR_RET});
    assert_true(kf_ir_link(&s->k));
}

#endif
