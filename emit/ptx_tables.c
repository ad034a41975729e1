/* Instruction spelling tables of the PTX emitter: register classes, the PTX
 * type names of every scalar, and the opcode names of operators, shuffles,
 * atomics and one-instruction math. Code in emit/ptx*.c combines these with
 * kf_buf_printf; it does not spell opcodes itself except in the fixed
 * multi-instruction sequences (conversions, math) it documents. */
#include "ptx_internal.h"

const char *const ptx_rc_prefix[PTX_RC_COUNT] = {
#define X(e, p, d) [e] = p,
    PTX_RCLASSES(X)
#undef X
};
const char *const ptx_rc_decl[PTX_RC_COUNT] = {
#define X(e, p, d) [e] = d,
    PTX_RCLASSES(X)
#undef X
};

/* 8- and 16-bit integers live in 16-bit registers (%rs), 8-bit ones kept
 * sign- or zero-extended to 16 bits; f16/bf16 in %h (b16); bool in %p and in
 * memory as a u8 holding 0 or 1. */
#define PTX_SCALARS(X) \
    X(KF_S_BOOL, PTX_RC_P, "pred", "pred", "u8") \
    X(KF_S_I8, PTX_RC_RS, "s16", "b16", "s8") \
    X(KF_S_U8, PTX_RC_RS, "u16", "b16", "u8") \
    X(KF_S_I16, PTX_RC_RS, "s16", "b16", "s16") \
    X(KF_S_U16, PTX_RC_RS, "u16", "b16", "u16") \
    X(KF_S_I32, PTX_RC_R, "s32", "b32", "s32") \
    X(KF_S_U32, PTX_RC_R, "u32", "b32", "u32") \
    X(KF_S_I64, PTX_RC_RD, "s64", "b64", "s64") \
    X(KF_S_U64, PTX_RC_RD, "u64", "b64", "u64") \
    X(KF_S_F16, PTX_RC_H, "f16", "b16", "b16") \
    X(KF_S_BF16, PTX_RC_H, "bf16", "b16", "b16") \
    X(KF_S_F32, PTX_RC_F, "f32", "b32", "f32") \
    X(KF_S_F64, PTX_RC_FD, "f64", "b64", "f64") \
    X(KF_S_UINT, PTX_RC_RD, "s64", "b64", "s64") \
    X(KF_S_UFLOAT, PTX_RC_FD, "f64", "b64", "f64")

const ptx_scalar_info ptx_scalars[KF_S_COUNT] = {
    [KF_S_NONE] = {PTX_RC_R, "b32", "b32", "b32"},
#define X(s, rc, ar, bi, me) [s] = {rc, ar, bi, me},
    PTX_SCALARS(X)
#undef X
};

/* X(op, integer spelling, float spelling); float + - * / carry .rn so that
 * ptxas never contracts them into fma (every operation is rounded, as in the
 * interpreter). */
#define PTX_BINOPS(X) \
    X(KF_OP_ADD, "add", "add.rn") X(KF_OP_SUB, "sub", "sub.rn") \
    X(KF_OP_MUL, "mul.lo", "mul.rn") X(KF_OP_DIV, "div", "div.rn") \
    X(KF_OP_REM, "rem", NULL) X(KF_OP_AND, "and", NULL) X(KF_OP_OR, "or", NULL) \
    X(KF_OP_XOR, "xor", NULL) X(KF_OP_SHL, "shl", NULL) X(KF_OP_SHR, "shr", NULL)
const ptx_binop_info ptx_binops[KF_OP_COUNT] = {
#define X(op, i, f) [op] = {i, f},
    PTX_BINOPS(X)
#undef X
};

#define PTX_CMPS(X) \
    X(KF_OP_EQ, "eq", "eq") X(KF_OP_NE, "ne", "neu") X(KF_OP_LT, "lt", "lt") \
    X(KF_OP_LE, "le", "le") X(KF_OP_GT, "gt", "gt") X(KF_OP_GE, "ge", "ge")
const ptx_binop_info ptx_cmps[KF_OP_COUNT] = {
#define X(op, i, f) [op] = {i, f},
    PTX_CMPS(X)
#undef X
};

/* c operand: segment mask 0 and, for idx/bfly/down, the clamp register
 * (existing lanes - 1, so a source past the last existing lane gives the
 * own value); 0 for up (its lower bound, lane 0). See emit_shfl. */
#define PTX_SHFLS(X) \
    X(KF_BI_SHFL, "idx", true, false) X(KF_BI_SHFL_XOR, "bfly", true, true) \
    X(KF_BI_SHFL_UP, "up", false, true) X(KF_BI_SHFL_DOWN, "down", true, true)
const ptx_shfl_info ptx_shfls[KF_BI_COUNT] = {
#define X(b, m, c, o) [b] = {m, c, o},
    PTX_SHFLS(X)
#undef X
};

#define PTX_ATOMICS(X) \
    X(KF_BI_ATOMIC_ADD, "add") X(KF_BI_ATOMIC_MIN, "min") X(KF_BI_ATOMIC_MAX, "max") \
    X(KF_BI_ATOMIC_EXCH, "exch") X(KF_BI_ATOMIC_CAS, "cas")
const char *const ptx_atomic_ops[KF_BI_COUNT] = {
#define X(b, n) [b] = n,
    PTX_ATOMICS(X)
#undef X
};

/* f32 math that maps to one instruction. No .ftz: denormals are kept (but
 * in rcp, which the contract defines as rcp.approx.ftz). */
#define PTX_MATH_F32(X) \
    X(KF_BI_EXP2, "ex2.approx.f32") X(KF_BI_LOG2, "lg2.approx.f32") \
    X(KF_BI_SQRT, "sqrt.rn.f32") X(KF_BI_RSQRT, "rsqrt.approx.f32") \
    X(KF_BI_SIN, "sin.approx.f32") X(KF_BI_COS, "cos.approx.f32") \
    X(KF_BI_TANH, "tanh.approx.f32") \
    X(KF_BI_FLOOR, "cvt.rmi.f32.f32") X(KF_BI_CEIL, "cvt.rpi.f32.f32") \
    X(KF_BI_TRUNC, "cvt.rzi.f32.f32") X(KF_BI_RCP, "rcp.approx.ftz.f32")
const char *const ptx_math_f32[KF_BI_COUNT] = {
#define X(b, n) [b] = n,
    PTX_MATH_F32(X)
#undef X
};
