/* The core IR: the only program representation the back ends read (CUDA-C
 * emitter, PTX emitter, CPU interpreter). See DESIGN.md section 2.
 *
 * Shape. One kf_ir_kernel per kernel; fns are inlined and @unroll loops
 * expanded before this point. Values are typed virtual registers held in a
 * flat array and named by 32-bit ids (id 0 is "no value"). They are NOT SSA:
 * a `var` is one value written by several MOVs, which maps straight onto a
 * PTX virtual register and onto a C local. Instructions are one flat array;
 * control flow stays structured through marker instructions:
 *
 *     IF c ... [ELSE ...] ENDIF
 *     LOOP ... [LATCH ...] ENDLOOP     BREAK / CONTINUE (innermost loop)
 *
 * LOOP repeats forever; BREAK jumps past ENDLOOP; CONTINUE jumps to LATCH (or
 * to ENDLOOP when the loop has no LATCH, which then repeats). A `for` lowers
 * to: init; LOOP; IF !(i < end) BREAK ENDIF; body; LATCH; i += step; ENDLOOP.
 * kf_ir_link() pairs the markers, the one place that does: it stores in
 * `imm` of every marker its structure (kf_ir_flow_of) so that no walker
 * searches or pairs again (interp keeps a per-thread pc into this array,
 * which is what lets a thread suspend at a barrier or warp op).
 *
 * Vectors are values too (f32x4): arithmetic, CVT and math apply per lane;
 * EXTRACT/INSERT/SPLAT build and take them apart. Warp shuffles take 32- or
 * 64-bit scalars only (lowering splits vectors; warp_sum/max/min lower to
 * SHFL butterflies). Every conversion is an explicit CVT.
 *
 * Arrays are not values: ALOAD/ASTORE name one in `imm`. A shared array may
 * be accessed as another element type (a view, `tile as shared f16x8[]`):
 * the access's `type` is the element type of the view and its index counts
 * elements of that type from the array's first byte, so a view is nothing
 * but the type on its accesses (fn parameters and lets that hold a shared
 * array are resolved to the array when fns are inlined). Every shared array
 * starts on a 16-byte boundary, so such an element index k is at byte
 * k * size(type), aligned to its own size. The dynamic array (flags
 * KF_TF_DYN, len 0) has floor(bytes / size) elements for the launch's
 * dynamic bytes. The shared-memory INTRINs (ldmatrix, cp_async) address
 * arrays the same way: imm, an element index, and the element type.
 *
 * Tensor-core fragments are vectors too (f16x8, i8x16, f32x4: lane j is
 * PTX's element j); mma, ldmatrix and cp_async are INTRINs whose behaviour
 * every pass reads from one table (KF_IR_INTRINS below), so version 3's
 * wgmma, TMA copies and mbarriers are more rows there, not new ops. */
#ifndef KF_IR_H
#define KF_IR_H

#include "ast.h"

typedef uint32_t kf_val;   /* index into kernel->vals; 0 = none */

/* X(enum, name, nargs, has_dst)
 * Operand conventions (a[0..3]); `type` is the result type unless stated. */
#define KF_IR_OPS(X) \
    X(KF_IR_NOP, "nop", 0, 0) \
    X(KF_IR_CONST, "const", 0, 1)     /* imm: bits of the value in `type` (zero-extended; f16/bf16 bits, f32 bits, f64 bits, ints two's complement); a vector CONST holds imm in every lane */ \
    X(KF_IR_PARAM, "param", 0, 1)     /* imm: parameter index; dst gets the scalar/vector value or buffer handle */ \
    X(KF_IR_MOV, "mov", 1, 1)         /* dst = a0 (same type) */ \
    X(KF_IR_BINOP, "binop", 2, 1)     /* sub: kf_op ADD..SHR; dst = a0 op a1; per lane (min/max are MATH) */ \
    X(KF_IR_CMP, "cmp", 2, 1)         /* sub: kf_op EQ..GE; dst: bool; `type` = operand type (scalar) */ \
    X(KF_IR_UNOP, "unop", 1, 1)       /* sub: KF_OP_NEG, KF_OP_NOT (bool), KF_OP_BNOT */ \
    X(KF_IR_CVT, "cvt", 1, 1)         /* numeric conversion to `type` per contract (float->int truncates, saturates, NaN->0; int->float RN; narrowing RNE); per lane */ \
    X(KF_IR_BITCAST, "bitcast", 1, 1) /* same size reinterpretation */ \
    X(KF_IR_SELECT, "select", 3, 1)   /* dst = a0 ? a1 : a2 (a0 bool) */ \
    X(KF_IR_MATH, "math", 3, 1)       /* sub: kf_builtin (EXP..FMA, CLZ, POPC, MUL_HI, MIN, MAX, ABS, RCP, FAST_DIV); \
                                         args as the builtin; per lane (f16/bf16 vectors: PTX's packed \
                                         pairs, each lane rounded once) */ \
    X(KF_IR_SPLAT, "splat", 1, 1)     /* dst vector = a0 in every lane */ \
    X(KF_IR_EXTRACT, "extract", 1, 1) /* dst = a0[imm] */ \
    X(KF_IR_INSERT, "insert", 2, 1)   /* dst = a0 with lane imm replaced by a1 (dst may equal a0) */ \
    X(KF_IR_SREG, "sreg", 0, 1)       /* imm: kf_ir_sreg; u32 */ \
    X(KF_IR_VIEW, "view", 1, 1)       /* dst buffer = a0 reinterpreted with element type `type.elem` (length = bytes / size) */ \
    X(KF_IR_LOAD, "load", 2, 1)       /* dst = a0[a1]; a0 buffer value, a1 index (u32/i32/u64/i64), `type` = element type */ \
    X(KF_IR_STORE, "store", 3, 0)     /* a0[a1] = a2; `type` = element type */ \
    X(KF_IR_ALOAD, "aload", 1, 1)     /* dst = arrays[imm][a0] (local or shared); `type` = the element \
                                         type accessed: a shared array's view type (see below) */ \
    X(KF_IR_ASTORE, "astore", 2, 0)   /* arrays[imm][a0] = a1; `type` as ALOAD */ \
    X(KF_IR_ATOMIC, "atomic", 4, 1)   /* sub: kf_builtin ATOMIC_*; dst = old; a0 buf, a1 index, a2 value (CAS: a2 expected, a3 new) */ \
    X(KF_IR_SHFL, "shfl", 2, 1)       /* sub: kf_builtin SHFL/SHFL_XOR/SHFL_UP/SHFL_DOWN; a0 value (32/64-bit scalar), a1 u32 lane/mask/delta */ \
    X(KF_IR_VOTE, "vote", 1, 1)       /* sub: kf_builtin BALLOT (u32) / ANY / ALL (bool); a0 bool */ \
    X(KF_IR_INTRIN, "intrin", 4, 1)   /* sub: kf_builtin of a KF_IR_INTRINS row, which gives its operands \
                                         and behaviour; whole values (not lane by lane): dot4's i8x4/u8x4, \
                                         mma's fragments; `type` = the result type (cp_async: the element \
                                         type of the shared view); dst 0 when it has no result */ \
    X(KF_IR_BARRIER, "barrier", 0, 0) \
    X(KF_IR_IF, "if", 1, 0)           /* a0 bool; imm: kf_ir_flow_of */ \
    X(KF_IR_ELSE, "else", 0, 0)       /* imm: kf_ir_flow_of (every marker's) */ \
    X(KF_IR_ENDIF, "endif", 0, 0) \
    X(KF_IR_LOOP, "loop", 0, 0) \
    X(KF_IR_LATCH, "latch", 0, 0) \
    X(KF_IR_ENDLOOP, "endloop", 0, 0) \
    X(KF_IR_BREAK, "break", 0, 0)     /* of the innermost LOOP */ \
    X(KF_IR_CONTINUE, "continue", 0, 0) /* of the innermost LOOP */ \
    X(KF_IR_RET, "ret", 0, 0)

typedef enum {
#define X(e, n, na, d) e,
    KF_IR_OPS(X)
#undef X
    KF_IR_OP_COUNT
} kf_ir_op;
extern const char *const kf_ir_op_names[KF_IR_OP_COUNT];
extern const uint8_t kf_ir_op_nargs[KF_IR_OP_COUNT];

/* How each INTRIN behaves (the flags every pass asks, so that a pass that
 * does not know one builtin still treats it right):
 *   KF_II_PURE    no effect: the result depends on the operands only, so
 *                 it may be folded, removed when unread, or moved;
 *   KF_II_WARP    warp-collective (PTX .sync.aligned): every lane of a full
 *                 warp executes this very instruction in uniform control
 *                 flow; never moved, duplicated, removed, nor put under a
 *                 condition, even when its result is unread;
 *   KF_II_ARRAY   `imm` names an array (a shared one), addressed as ALOAD
 *                 does: an element index a0 in elements of the view type;
 *   KF_II_READS / KF_II_WRITES  it reads / writes that array;
 *   KF_II_ASYNC   part of the async-copy machinery (cp.async): its effect
 *                 on shared memory happens later, at a wait; shared accesses
 *                 are never moved across it;
 *   KF_II_FENCE   a memory fence (device scope): the thread's loads, stores
 *                 and atomics before it are ordered before those after it
 *                 for every thread of the grid, so no memory access (global
 *                 or shared) is moved across it, none is merged with one on
 *                 the other side, and it is never removed. The two steps of
 *                 programmatic dependent launch (dep_wait, dep_trigger)
 *                 are kept in place the same way.
 * Anything not PURE has an effect and stays where it is, run or not.
 * X(builtin, value operands a[0..n), flags) */
enum {
    KF_II_PURE = 1,
    KF_II_WARP = 2,
    KF_II_ARRAY = 4,
    KF_II_READS = 8,
    KF_II_WRITES = 16,
    KF_II_ASYNC = 32,
    KF_II_FENCE = 64,
};
#define KF_II_LDSM (KF_II_WARP | KF_II_ARRAY | KF_II_READS)
#define KF_IR_INTRINS(X) \
    X(KF_BI_DOT4, 3, KF_II_PURE) X(KF_BI_BFE, 3, KF_II_PURE) X(KF_BI_BFI, 4, KF_II_PURE) \
    X(KF_BI_PRMT, 3, KF_II_PURE) \
    X(KF_BI_MMA, 3, KF_II_WARP)          /* a0 A, a1 B, a2 C fragments; dst D (shape from the types) */ \
    X(KF_BI_LDMATRIX_X1, 1, KF_II_LDSM)  /* a0 this lane's row index into arrays[imm] as `type`'s scalar; */ \
    X(KF_BI_LDMATRIX_X2, 1, KF_II_LDSM)  /* dst: the fragment (2, 4, 8 lanes of 16 bits) */ \
    X(KF_BI_LDMATRIX_X4, 1, KF_II_LDSM) \
    X(KF_BI_LDMATRIX_X1_TRANS, 1, KF_II_LDSM) X(KF_BI_LDMATRIX_X2_TRANS, 1, KF_II_LDSM) \
    X(KF_BI_LDMATRIX_X4_TRANS, 1, KF_II_LDSM) \
    X(KF_BI_CP_ASYNC, 3, KF_II_ARRAY | KF_II_WRITES | KF_II_ASYNC)   /* a0 shared index, a1 buffer, a2 its index; \
                                                                           16 bytes; no dst */ \
    X(KF_BI_CP_ASYNC_N, 4, KF_II_ARRAY | KF_II_WRITES | KF_II_ASYNC) /* and a3: the u32 bytes read (0..16) */ \
    X(KF_BI_CP_ASYNC_COMMIT, 0, KF_II_ASYNC) \
    X(KF_BI_CP_ASYNC_WAIT, 0, KF_II_ASYNC)   /* imm: N, the groups that may stay pending */ \
    X(KF_BI_FENCE, 0, KF_II_FENCE)           /* fence(): PTX fence.acq_rel.gpu; no operand, no dst */ \
    X(KF_BI_DEP_WAIT, 0, KF_II_FENCE)        /* dep_wait(): griddepcontrol.wait (sm_90), the kernel's one wait */ \
    X(KF_BI_DEP_TRIGGER, 0, KF_II_FENCE)     /* dep_trigger(): griddepcontrol.launch_dependents (sm_90) */ \
    X(KF_BI_PREFETCH_L2, 3, 0)   /* prefetch_l2(src, j, n): a0 buffer, a1 u64 byte offset, a2 u64 bytes; \
                                    a hint, no dst: cp.async.bulk.prefetch.L2 (sm_90) */

/* The row of INTRIN sub: its operand count and flags; false when sub is
 * not an intrinsic (malformed IR). */
bool kf_ir_intrin_info(uint16_t sub, unsigned *nargs, unsigned *flags);

/* Special registers read by SREG. X(enum, name, ptx) */
#define KF_IR_SREGS(X) \
    X(KF_SR_TID_X, "thread_id.x", "%tid.x")     X(KF_SR_TID_Y, "thread_id.y", "%tid.y") \
    X(KF_SR_TID_Z, "thread_id.z", "%tid.z")     X(KF_SR_CTAID_X, "block_id.x", "%ctaid.x") \
    X(KF_SR_CTAID_Y, "block_id.y", "%ctaid.y")  X(KF_SR_CTAID_Z, "block_id.z", "%ctaid.z") \
    X(KF_SR_NTID_X, "block_dim.x", "%ntid.x")   X(KF_SR_NTID_Y, "block_dim.y", "%ntid.y") \
    X(KF_SR_NTID_Z, "block_dim.z", "%ntid.z")   X(KF_SR_NCTAID_X, "grid_dim.x", "%nctaid.x") \
    X(KF_SR_NCTAID_Y, "grid_dim.y", "%nctaid.y") X(KF_SR_NCTAID_Z, "grid_dim.z", "%nctaid.z") \
    X(KF_SR_LANE, "lane_id", "%laneid")

typedef enum {
#define X(e, n, p) e,
    KF_IR_SREGS(X)
#undef X
    KF_SR_COUNT
} kf_ir_sreg;
extern const char *const kf_ir_sreg_names[KF_SR_COUNT];
extern const char *const kf_ir_sreg_ptx[KF_SR_COUNT];

typedef struct {
    kf_type type;        /* scalar, vector or buffer (buffers: PARAM and VIEW results) */
    const char *name;    /* source name for readable output, or NULL (temporaries) */
    kf_loc loc;
} kf_ir_value;

typedef struct {
    uint16_t op;         /* kf_ir_op */
    uint16_t sub;        /* kf_op or kf_builtin, per op */
    kf_type type;        /* see op table */
    kf_val dst;
    kf_val a[4];
    uint64_t imm;
    kf_loc loc;          /* the source statement/expression this came from */
} kf_ir_ins;

typedef struct {
    const char *name;
    kf_type type;        /* KF_TK_ARRAY; flags & KF_TF_SHARED for shared memory */
    kf_loc loc;
} kf_ir_array;

/* A parameter (public as kf_param): name, type (a buffer, flags &
 * KF_TF_MUT, or a scalar/vector), loc, and for buffers `align`, the largest
 * element size (bytes) the kernel accesses it as, through VIEWs too; the
 * runtime requires bound views to be aligned to it. */
typedef kf_param kf_ir_param;

/* The kernel's default launch shape (LANGUAGE.md section 6). block is
 * constant; the grid is evaluated on the host from scalar arguments by
 * kf_schedule_grid (include/kforge.h). */
typedef struct {
    uint32_t block[3];   /* 1 in unused dimensions */
    uint32_t ngrid;      /* 0: no grid expression (grid = cdiv(count, block.x)) */
    const kf_node *grid[3]; /* typed AST of each grid expression (arena of the module) */
    const kf_node *shared;  /* typed AST of `shared = EXPR` (u32 bytes of dynamic shared
                               memory), or NULL; evaluated by kf_schedule_shared */
    uint32_t min_blocks;    /* `min_blocks = N`: blocks of the kernel an SM must hold at
                               once (a register budget for the back ends), 0: none */
    kf_loc loc;
} kf_schedule;

/* A kernel in core IR: the struct behind the public kf_kernel handle. */
typedef struct kf_kernel {
    const char *name;
    kf_loc loc;
    kf_ir_param *params;  uint32_t nparams;
    kf_ir_value *vals;    uint32_t nvals;   /* vals[0] unused */
    kf_ir_ins *ins;       uint32_t nins;
    kf_ir_array *arrays;  uint32_t narrays;
    kf_schedule sched;
} kf_ir_kernel;

/* Whether k places its own wait for the grids it depends on (a dep_wait()
 * INTRIN, lowering checked where): then the back ends open it with none
 * (emit.h kf_emit_pdl_wait). kf_ir_dep_wait_at: the instruction's index,
 * UINT32_MAX when there is none. */
bool kf_ir_places_dep_wait(const kf_ir_kernel *k);
/* What a value feeds, for the emitters' ptxas 13 workarounds: per value v
 * of k, whether v, directly or through up to 5 copies (MOV), is an operand
 * of an integer unary or binary operator, not a store, select or
 * conversion (KF_IR_FEEDS_INT_OP: the test for a half's bits that ptxas 13
 * mishandles), and of an integer min, max or clamp (KF_IR_FEEDS_INT_MINMAX:
 * what ptxas 13 fuses an add or subtract into, VIADDMNMX, VIMNMX3).
 * kf_ir_feed_flags fills flags[k->nvals + 1] for every value in six passes
 * over k (tmp: as many bytes of scratch); asked value by value, each
 * question was a pass of its own (a seventh of gemm.kf's PTX emit). */
enum { KF_IR_FEEDS_INT_OP = 1, KF_IR_FEEDS_INT_MINMAX = 2 };
void kf_ir_feed_flags(const kf_ir_kernel *k, uint8_t *flags, uint8_t *tmp);
uint32_t kf_ir_dep_wait_at(const kf_ir_kernel *k);
/* Whether float value v is the constant -0.0: a CONST (a vector one holds
 * it in every lane), or a SPLAT or copy (MOV) of one, as unoptimised IR
 * keeps them. def(ctx, v) gives v's only definition, or NULL. The back ends
 * write a float min or max beside one as compares and selects: ptxas turns
 * max(x, -0.0) then min(., 1.0) into FADD.SAT, which gives +0 for x <= -0
 * and NaN (H200 SASS, 2026-12-03). */
bool kf_ir_is_negzero(const kf_ir_kernel *k, kf_val v, const kf_ir_ins *(*def)(const void *ctx, kf_val v),
                      const void *ctx);
/* An f32 max or select of a constant zero (either sign) and a value m that
 * ptxas may read as a min with a constant: max(min(x, 1.0), 0.0), and as
 * selects, select(m > 0.0, m, 0.0) of m = select(x < 1.0, x, 1.0) (a
 * compare of m with a constant zero, in either order, m and the zero the
 * arms; m written twice counts as one, min(x[i], 1.0) of two loads of x[i]
 * where nothing between writes memory, which is how ptxas sees them).
 * ptxas 13 makes the pair a saturate (FADD.SAT, H200 SASS), +0 for a NaN x
 * where the min gives 1.0 (difftest seed 3503 program 2775, 2026-12-05;
 * the select form and a compare-and-select max were found the same day).
 * The back ends write it as d = P(m) ? t : f, with P an integer predicate
 * on m's bits b that ptxas does not read as a float compare and that is
 * exact for every m, NaN included (a NaN makes every compare false, and
 * max(NaN, z) is z): */
typedef enum {
    KF_ZP_NONE,
    KF_ZP_GT,     /* m > 0:  (u32)(b - 1) < 0x7f800000; also max(m, +0.0) */
    KF_ZP_LT,     /* m < 0:  (u32)(b - 0x80000001) < 0x7f800000 */
    KF_ZP_GE,     /* m >= 0: (u32)b <= 0x7f800000, or b = 0x80000000 (-0) */
    KF_ZP_LE,     /* m <= 0: (u32)(b - 0x80000000) <= 0x7f800000, or b = 0 */
    KF_ZP_PLUS,   /* max(m, -0.0), m other than -0 not below +0: (u32)b <= 0x7f800000 */
} kf_ir_zpred;

typedef struct {
    kf_ir_zpred p;   /* KF_ZP_NONE: not the pattern */
    int m, t, f;     /* operand indices of the instruction: m, the result when P(m), when not */
} kf_ir_zero_pick;

/* in as a pick on a predicate of m's bits (above), or p = KF_ZP_NONE. */
kf_ir_zero_pick kf_ir_zero_select(const kf_ir_kernel *k, const kf_ir_ins *in,
                                  const kf_ir_ins *(*def)(const void *ctx, kf_val v), const void *ctx);
/* The parameter buffer value v is (PARAM), or views or copies of it
 * (VIEW, MOV), or UINT32_MAX. */
uint32_t kf_ir_buffer_param(const kf_ir_kernel *k, kf_val v);
/* For a kernel with dep_wait(): bit p set when buffer parameter p (p < 64)
 * is loaded before the wait, so the kernel promises that no kernel before
 * it writes that buffer; 0 without a wait. The back ends load only such
 * read-only buffers through the non-coherent path (ld.global.nc) after the
 * wait: ptxas moves ld.global.nc across griddepcontrol.wait. */
uint64_t kf_ir_early_params(const kf_ir_kernel *k);

/* The structure a control marker belongs to: its IF or LOOP (`head`; for
 * BREAK and CONTINUE the innermost LOOP), the ELSE or LATCH (`mid`, 0 when
 * there is none) and the ENDIF or ENDLOOP (`end`). */
typedef struct {
    uint32_t head, mid, end;
} kf_ir_flow;

/* Pairs the structured markers (see the file comment): stores the structure
 * of each in its `imm`. The only place markers are paired. Returns false if
 * they do not nest (a lowering bug). */
bool kf_ir_link(kf_ir_kernel *k);
/* True when every marker's stored structure is in range and consistent
 * (each IF/LOOP, ELSE/LATCH and ENDIF/ENDLOOP names the others, BREAK and
 * CONTINUE lie inside their LOOP): what a back end checks before it trusts
 * kf_ir_flow_of on IR it did not link itself. O(nins), pairs nothing. */
bool kf_ir_linked(const kf_ir_kernel *k);
/* The structure of marker i (IF ELSE ENDIF LOOP LATCH ENDLOOP BREAK
 * CONTINUE) as kf_ir_link stored it. `imm` packs two indices, the high half
 * first: IF/LOOP mid:end, ELSE/LATCH head:end, ENDIF/ENDLOOP head:mid,
 * BREAK/CONTINUE head:end (mid is then the LOOP's). */
static inline kf_ir_flow kf_ir_flow_of(const kf_ir_kernel *k, uint32_t i)
{
    const kf_ir_ins *in = &k->ins[i];
    uint32_t hi = (uint32_t)(in->imm >> 32), lo = (uint32_t)in->imm;
    switch (in->op) {
    case KF_IR_IF:
    case KF_IR_LOOP: return (kf_ir_flow){i, hi, lo};
    case KF_IR_ELSE:
    case KF_IR_LATCH: return (kf_ir_flow){hi, i, lo};
    case KF_IR_ENDIF:
    case KF_IR_ENDLOOP: return (kf_ir_flow){hi, lo, i};
    case KF_IR_BREAK:
    case KF_IR_CONTINUE: return (kf_ir_flow){hi, hi < k->nins ? (uint32_t)(k->ins[hi].imm >> 32) : 0, lo};
    default: return (kf_ir_flow){0, 0, 0};
    }
}
/* Prints the kernel readably, one instruction per line with its source
 * line ("; saxpy.kf:6"), indented by structure. */
void kf_ir_print(kf_buf *out, const kf_ir_kernel *k);

#endif
