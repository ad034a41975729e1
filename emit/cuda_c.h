/* Internal interface of the CUDA-C emitter, shared by its four files:
 *
 *   emit/cuda_c.c          kf_cuda_emit and the statement writer
 *   emit/cuda_c_analyze.c  what the writer needs to know first: checks,
 *                          reachability, scopes, liveness, declarations,
 *                          folds, names
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
    X(KF_CU_H_BITCAST_SPLIT, 0)                            \
    X(KF_CU_H_HALF_BITS, KF_CU_BIT(KF_CU_H_BITCAST))       \
    X(KF_CU_H_BYTES, 0)                                    \
    X(KF_CU_H_LDG, 0)                                      \
    X(KF_CU_H_LDS_NARROW, 0)                               \
    X(KF_CU_H_F16, 0)                                      \
    X(KF_CU_H_BF16, 0)                                     \
    X(KF_CU_H_F16_OPS, KF_CU_BIT(KF_CU_H_F16))             \
    X(KF_CU_H_BF16_OPS, KF_CU_BIT(KF_CU_H_BF16))           \
    X(KF_CU_H_ODD, 0)                                      \
    X(KF_CU_H_F16_NARROW, KF_CU_BIT(KF_CU_H_F16) | KF_CU_BIT(KF_CU_H_ODD))   \
    X(KF_CU_H_BF16_NARROW, KF_CU_BIT(KF_CU_H_BF16) | KF_CU_BIT(KF_CU_H_ODD)) \
    X(KF_CU_H_F2I, 0)                                      \
    X(KF_CU_H_SAT, 0)                                      \
    X(KF_CU_H_NARROW, 0)                                   \
    X(KF_CU_H_SHIFT32, 0)                                  \
    X(KF_CU_H_SHIFT64, 0)                                  \
    X(KF_CU_H_IDIV32, 0)                                   \
    X(KF_CU_H_IDIV64, 0)                                   \
    X(KF_CU_H_CDIV, 0)                                     \
    X(KF_CU_H_ABS, 0)                                      \
    X(KF_CU_H_FSIGN, 0)                                    \
    X(KF_CU_H_APPROX, 0)                                   \
    X(KF_CU_H_DMINMAX, 0)                                  \
    X(KF_CU_H_IMINMAX, 0)                                  \
    X(KF_CU_H_LANE, 0)                                     \
    X(KF_CU_H_SHFL_GUARD, KF_CU_BIT(KF_CU_H_LANE))         \
    X(KF_CU_H_ATOMIC_F32, 0)                               \
    X(KF_CU_H_DOT4, 0)                                     \
    X(KF_CU_H_BITFIELD, 0)                                 \
    X(KF_CU_H_TYPES, 0)       /* marker: vector struct types are written here */ \
    X(KF_CU_H_WORDS, 0)                                    \
    X(KF_CU_H_ATOMIC_F16X2, KF_CU_BIT(KF_CU_H_BITCAST) | KF_CU_BIT(KF_CU_H_WORDS)) \
    X(KF_CU_H_F16V, KF_CU_BIT(KF_CU_H_WORDS))              \
    X(KF_CU_H_BF16V, KF_CU_BIT(KF_CU_H_WORDS))             \
    X(KF_CU_H_BF16V_ARITH, KF_CU_BIT(KF_CU_H_BF16V))       \
    X(KF_CU_H_BF16V_ARITH80, KF_CU_BIT(KF_CU_H_BF16V))     \
    X(KF_CU_H_MMA, KF_CU_BIT(KF_CU_H_WORDS))               \
    X(KF_CU_H_LDSM, KF_CU_BIT(KF_CU_H_WORDS))              \
    X(KF_CU_H_CP_ASYNC, 0)                                 \
    X(KF_CU_H_PDL, 0)                                      \
    X(KF_CU_H_PDL_TRIGGER, 0)                              \
    X(KF_CU_H_PREFETCH, 0)

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

/* How a value is written (kf_cu_vinfo.kind). */
enum { VK_NONE, VK_INLINE, VK_PARAM, VK_AT_DEF, VK_TOP, VK_FOLD, VK_CHAIN, VK_LANEFOLD };
/* kf_cu_kernel.mm: the value may hold an integer min, max, clamp or select
 * (MM_DEF), or is a value operand of one (MM_USE), directly or through copies. */
enum { MM_DEF = 1, MM_USE = 2 };
/* kf_cu_kernel.amixed bits. */
enum { AM_MIXED = 1, AM_LOADS = 2 };
/* else-if collapsing bits (kf_cu_kernel.elif). */
enum { ELIF_ELSE = 1, ELIF_IF = 2, ELIF_END = 4 };

typedef struct {
    uint32_t ndefs, nuses;   /* live definitions and uses (self-uses excluded) */
    uint32_t def;            /* index of the first live definition */
    uint32_t use;            /* index of the last live use */
    uint8_t kind;            /* VK_* */
    const char *name;        /* C name, or the inline expression */
} kf_cu_vinfo;

typedef struct {
    const char **slot;
    uint32_t *next;          /* per slot: the next suffix to try after it */
    size_t cap;
} kf_cu_names;

typedef KF_VEC(kf_loc) kf_cu_lines;

/* 1 when the IR op writes dst (the has_dst column of KF_IR_OPS). */
extern const uint8_t kf_cu_has_dst[KF_IR_OP_COUNT];

/* Per-kernel state: the analysis results (cuda_c_analyze.c) and the
 * writer's position (cuda_c.c). Arrays live in the scratch arena. */
typedef struct {
    kf_cu *c;
    const kf_ir_kernel *k;
    kf_buf *out;
    kf_cu_lines lines;
    kf_cu_vinfo *v;
    bool *dead;              /* [nins] unreachable */
    uint8_t *mm;             /* [nvals] MM_* bits: next to an integer min, max or clamp, or a select */
    uint8_t *feeds;          /* [nvals] KF_IR_FEEDS_* (kf_ir_feed_flags) */
    bool *drop;              /* [nins] pure and its result is never read */
    uint32_t *scope;         /* [nins] C block the instruction sits in */
    uint32_t *sparent;       /* [nscopes] enclosing block */
    uint32_t nscopes;
    uint32_t *label;         /* [nins] LOOP: label number, 1-based */
    bool *cont_live;         /* [nins] LOOP: a reachable continue targets it */
    bool *brk_live;          /* [nins] LOOP: a reachable break leaves it */
    bool *header;            /* [nins] LOOP: written as while (c) / for (; c; latch) */
    bool *consumed;          /* [nins] part of a loop header: not a statement */
    uint32_t *init;          /* [nins] header LOOP: the declaration moved into for (init; ...), +1 */
    uint8_t *elif;           /* [nins] else-if collapsing: ELIF_* bits */
    bool *aread;             /* [narrays] a live instruction reads the array */
    uint8_t *amixed;         /* [narrays] shared, and its live accesses have more than one element size
                                (AM_MIXED); its loads of 1 to 8 bytes have more than one (AM_LOADS) */
    bool explicit_nc;        /* read-only buffers' loads are kf_ldg (cuda_c.c loads_written_buffer) */
    bool dep_wait;           /* the kernel calls dep_wait() (kf_ir_places_dep_wait, with PDL on) */
    uint64_t early;          /* kf_ir_early_params: the buffers loaded before the wait */
    const char **pnames;     /* [nparams] */
    const char **anames;     /* [narrays] */
    kf_cu_names names;
    int depth;
    uint32_t mapped;         /* .kf line the next text line maps to (#line) */
    const char *mapped_file;
} kf_cu_kernel;

/* The structure of control marker i as kf_ir_link paired it (ir.h): its
 * IF or LOOP (for BREAK/CONTINUE the innermost LOOP), its ELSE or LATCH (0:
 * none), its ENDIF or ENDLOOP. */
static inline uint32_t kf_cu_head(const kf_cu_kernel *w, uint32_t i) { return kf_ir_flow_of(w->k, i).head; }
static inline uint32_t kf_cu_mid(const kf_cu_kernel *w, uint32_t i) { return kf_ir_flow_of(w->k, i).mid; }
static inline uint32_t kf_cu_end(const kf_cu_kernel *w, uint32_t i) { return kf_ir_flow_of(w->k, i).end; }

/* ---- cuda_c_analyze.c: passes 1-6 over one kernel ---------------------- */
/* Allocates w's arrays and runs check, reachability, scopes, liveness, the
 * declaration and fold decisions and the names. false: malformed IR
 * (reported in diags) or out of memory (c->failed). */
bool kf_cu_analyze(kf_cu_kernel *w);
/* True when instruction i becomes text of its own (not dead, dropped,
 * inlined or folded into another statement). */
bool kf_cu_written(const kf_cu_kernel *w, uint32_t i);
uint32_t kf_cu_next_written(const kf_cu_kernel *w, uint32_t i);
/* The pure operations that compute a value from their operands alone (MOV,
 * BINOP, UNOP, CVT, MATH, SELECT): what a memory index or a constant
 * expression is made of. */
bool kf_cu_pure_arith(uint16_t op);
/* Loop pins (cuda_c_analyze.c says why): value v, read in the loop at l,
 * is pinned at its start; array ai's elements read in it are. */
bool kf_cu_pin_value(const kf_cu_kernel *w, uint32_t l, kf_val v);
bool kf_cu_pin_array(const kf_cu_kernel *w, uint32_t l, uint32_t ai);
/* The CONST instruction that is value v's only definition, or NULL. */
const kf_ir_ins *kf_cu_const_def(const kf_cu_kernel *w, kf_val v);
/* A vector BINOP/UNOP/CVT/MATH, written one statement per lane. */
bool kf_cu_per_lane(const kf_cu_kernel *w, uint32_t i);
/* A BINOP (+ - *) or MATH (fma min max abs) on an f16/bf16 vector: one
 * call of a packed-pairs helper over the whole vector (LANGUAGE.md 8). */
bool kf_cu_packed(const kf_ir_ins *in);
/* C expression of a special register (threadIdx.x, kf_lane_id(), ...). */
const char *kf_cu_sreg(kf_cu_kernel *w, uint64_t imm);
/* A name C++/CUDA or kforge reserves (keywords, called functions, kf_). */
bool kf_cu_reserved(const char *s);

/* Marks helper h (and what it depends on) as used. */
void kf_cu_need(kf_cu *c, kf_cu_helper h);
/* Writes the used helpers and vector types, in table order. */
void kf_cu_prelude(kf_cu *c, kf_buf *out);

/* printf into the scratch arena (NULL only when out of memory, which sets
 * c->failed; callers may pass the result on, "?" is used instead). */
const char *kf_cu_str(kf_cu *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* text made safe inside a C comment (no comment start or end in it). */
const char *kf_cu_comment(kf_cu *c, const char *text);
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
/* Builtin b on scalars s; opaque: an integer min, max or clamp written as
 * PTX min/max, which NVVM does not see into (KF_CU_H_IMINMAX), or a float
 * one beside a constant -0.0 as compares and selects (KF_CU_H_DMINMAX). */
const char *kf_cu_math(kf_cu *c, kf_builtin b, kf_scalar s, const char *const args[3], bool opaque);
/* The packed-pairs helper call of a kf_cu_packed instruction over whole
 * vectors of type t (args: its operands). */
const char *kf_cu_packed_call(kf_cu *c, const kf_ir_ins *in, kf_type t, const char *const args[3]);
/* An INTRIN (dot4, bfe, bfi, prmt) over spelled operands; ts are their types. */
const char *kf_cu_intrin(kf_cu *c, const kf_ir_ins *in, const char *const args[4], const kf_type ts[4]);
/* mma, ldmatrix, cp_async, cp_async_commit, cp_async_wait (INTRINs that are
 * not KF_II_PURE) as one call; elem is the spelled address of the shared
 * element the instruction names (ldmatrix, cp_async), args its operands. */
const char *kf_cu_tensor(kf_cu *c, const kf_ir_ins *in, const char *elem, const char *const args[4], const kf_type ts[4]);

#endif
