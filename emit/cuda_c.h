/* Internal interface of the CUDA-C emitter, shared by its three files:
 *
 *   emit/cuda_c.c          kf_cuda_emit: analysis of a kernel (reachability,
 *                          liveness, scopes, names) and the statement walker
 *   emit/cuda_c_expr.c     spelling of types, literals and per-lane
 *                          expressions (operators, conversions, math)
 *   emit/cuda_c_prelude.c  the helper functions and types the emitted code
 *                          may need, as one table; only the used ones are
 *                          written, in table order
 *
 * Not part of the public API (emit/emit.h). */
#ifndef KF_CUDA_C_H
#define KF_CUDA_C_H

#include "emit.h"

/* Prelude helpers. X(enum, dependencies) ; the text lives in
 * cuda_c_prelude.c. Order = dependency order (a helper only depends on
 * helpers above it). */
#define KF_CU_HELPERS(X)                                   \
    X(KF_CU_H_BITCAST, 0)                                  \
    X(KF_CU_H_F16, 0)                                      \
    X(KF_CU_H_BF16, 0)                                     \
    X(KF_CU_H_F16_OPS, KF_CU_BIT(KF_CU_H_F16))             \
    X(KF_CU_H_BF16_OPS, KF_CU_BIT(KF_CU_H_BF16))           \
    X(KF_CU_H_ODD, 0)                                      \
    X(KF_CU_H_F16_NARROW, KF_CU_BIT(KF_CU_H_F16) | KF_CU_BIT(KF_CU_H_ODD))   \
    X(KF_CU_H_BF16_NARROW, KF_CU_BIT(KF_CU_H_BF16) | KF_CU_BIT(KF_CU_H_ODD)) \
    X(KF_CU_H_SAT, 0)                                      \
    X(KF_CU_H_SHIFT32, 0)                                  \
    X(KF_CU_H_SHIFT64, 0)                                  \
    X(KF_CU_H_IDIV32, 0)                                   \
    X(KF_CU_H_IDIV64, 0)                                   \
    X(KF_CU_H_CDIV, 0)                                     \
    X(KF_CU_H_ABS, 0)                                      \
    X(KF_CU_H_APPROX, 0)                                   \
    X(KF_CU_H_LANE, 0)                                     \
    X(KF_CU_H_SHFL_GUARD, 0)                               \
    X(KF_CU_H_ATOMIC_F32, 0)                               \
    X(KF_CU_H_TYPES, 0)       /* marker: vector struct types are written here */ \
    X(KF_CU_H_ATOMIC_F16X2, KF_CU_BIT(KF_CU_H_BITCAST))

#define KF_CU_BIT(h) (1ull << (h))

typedef enum {
#define X(e, d) e,
    KF_CU_HELPERS(X)
#undef X
    KF_CU_H_COUNT
} kf_cu_helper;

/* Emission state for one call of kf_cuda_emit. */
typedef struct {
    const kf_module *m;
    const kf_emit_opts *o;
    kf_diags *diags;
    kf_arena scratch;            /* names and expression strings; freed at the end */
    uint64_t needs;              /* KF_CU_BIT of every helper used */
    bool vec_used[KF_S_COUNT][17]; /* vector struct types used: [scalar][lanes] */
    bool failed;                 /* an error was reported (diags) */
} kf_cu;

/* Marks helper h (and what it depends on) as used. */
void kf_cu_need(kf_cu *c, kf_cu_helper h);
/* Writes the used helpers and vector types, in table order. */
void kf_cu_prelude(kf_cu *c, kf_buf *out);

/* printf into the scratch arena (NULL only when out of memory, which sets
 * c->failed; callers may pass the result on, "?" is used instead). */
const char *kf_cu_str(kf_cu *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *kf_cu_vstr(kf_cu *c, const char *fmt, va_list ap);

/* C spelling of a scalar or vector type ("float", "kf_f32x4"); marks vector
 * and f16/bf16 types as used. Buffers spell their element type. */
const char *kf_cu_type(kf_cu *c, kf_type t);
/* C literal of scalar s with bits `bits` (IR CONST encoding). */
const char *kf_cu_literal(kf_cu *c, kf_scalar s, uint64_t bits);

/* Expressions over already-spelled scalar operands (one lane). s is the
 * operand scalar type (the result's for CVT: from -> to). */
const char *kf_cu_binop(kf_cu *c, kf_op op, kf_scalar s, const char *a, const char *b);
const char *kf_cu_cmp(kf_cu *c, kf_op op, kf_scalar s, const char *a, const char *b);
const char *kf_cu_unop(kf_cu *c, kf_op op, kf_scalar s, const char *a);
const char *kf_cu_cvt(kf_cu *c, kf_scalar from, kf_scalar to, const char *a);
/* Math builtin b (EXP..FMA, MIN, MAX, ABS, CLAMP, CLZ, POPC, CDIV, MUL_HI);
 * s is the argument scalar type; args has the builtin's operands. */
const char *kf_cu_math(kf_cu *c, kf_builtin b, kf_scalar s, const char *const args[3]);

#endif
