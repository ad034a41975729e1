/* Private interface of the core-IR optimiser: ir/opt.c (the driver, the
 * structured data-flow walk, dead branches and loops, copies, dead code),
 * ir/opt_fold.c (what one instruction computes when some operands are
 * known: constant folding through the interpreter's own lane semantics,
 * algebraic identities, strength reduction) and ir/opt_exact.c (the
 * mandatory pass that runs the same walk at every -O level and replaces
 * only the float operations a GPU compiler could fold itself). Tests
 * include this header for the statistics of a run (tests/test_opt.c). */
#ifndef KF_OPT_H
#define KF_OPT_H

#include "interp_impl.h"   /* kf_islot and the lane semantics kf_iop_* that folding runs */
#include "passes.h"

/* What one kf_opt_kernel_stats run did (every count over all its rounds). */
typedef struct {
    uint32_t rounds;        /* walks over the kernel until nothing changed */
    uint32_t ins_before, ins_after;
    uint32_t folded;        /* instructions replaced by a constant */
    uint32_t vectors;       /* of those, vectors whose lanes differ: written as CONST and INSERTs */
    uint32_t simplified;    /* instructions that became a copy (select on a constant, x + 0, ...) */
    uint32_t copies;        /* operands that now read a MOV's source instead of its result */
    uint32_t branches;      /* IFs on a constant: one side kept */
    uint32_t empty_ifs;     /* IF/ELSE/ENDIF with nothing left inside, removed */
    uint32_t zero_trip;     /* loops whose first test leaves them, removed */
    uint32_t one_trip;      /* loops that never go round again, unwrapped */
    uint32_t unreachable;   /* instructions after a break/continue/return (or in a dead arm) removed */
    uint32_t dead;          /* pure instructions whose result nothing reads, removed */
    uint32_t reduced;       /* / % * by a power of two made shifts and masks */
    bool skipped;           /* left as lowered: nesting deeper than the walk goes */
} kf_opt_stats;

/* What a run of the walk of ir/opt.c may change. */
typedef enum {
    OPT_ALL,     /* kf_opt: everything ir/opt.c's paragraph lists */
    OPT_EXACT,   /* kf_opt_exact: only instructions kf_opt_exact_op names whose operands are
                    known are replaced by their constant; nothing else moves, goes or changes */
} opt_mode;

/* kf_opt with its statistics (stats may be NULL). */
kf_status kf_opt_kernel_stats(kf_arena *arena, kf_ir_kernel *k, kf_opt_stats *stats);
/* One run of the walk in `mode` (kf_opt_kernel_stats is OPT_ALL). */
kf_status kf_opt_walk(kf_arena *arena, kf_ir_kernel *k, opt_mode mode, kf_opt_stats *stats);

/* ---- ir/opt_exact.c ------------------------------------------------------ */

/* Whether `in` is an operation that kf_opt_exact replaces by its constant
 * when every operand is known (see that file's paragraph for the rule). */
bool kf_opt_exact_op(const kf_ir_kernel *k, const kf_ir_ins *in);

/* ---- ir/opt_fold.c ------------------------------------------------------- */

/* An operand's value at the instruction, when the walk knows it: the lane
 * bits in the interpreter's slot layout (a CONST is the same bits in every
 * lane). */
typedef struct {
    bool known;
    kf_islot v;
} opt_cval;

typedef enum {
    OPT_KEEP,    /* nothing known */
    OPT_CONST,   /* the result is the constant `v`, lane by lane (lanes may differ) */
    OPT_COPY,    /* the result is operand a[copy] unchanged (same type) */
} opt_fold_kind;

typedef struct {
    opt_fold_kind kind;
    kf_islot v;          /* OPT_CONST: every lane, in the interpreter's slot layout; 0 past the type */
    unsigned copy;
} opt_fold_result;

/* What instruction `in` of k computes given the known operands cv[j] (for
 * a[j]): a constant, one of its operands, or nothing known. Only
 * BINOP, CMP, UNOP, CVT, BITCAST, SELECT, MATH, SPLAT, EXTRACT and INSERT
 * are ever folded; anything else is OPT_KEEP. The one folding function of
 * the compiler's IR: kf_opt and kf_opt_exact both call it. */
opt_fold_result kf_opt_fold(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4]);

/* Whether every lane of the constant v of type t is the same; *bits gets
 * lane 0 (the encoding of a CONST's imm). */
bool kf_opt_splat_bits(kf_type t, const kf_islot *v, uint64_t *bits);

/* The constant v of type t in every lane (the value of a CONST with imm
 * `bits`). */
kf_islot kf_opt_splat_slot(kf_type t, uint64_t bits);

/* Whether the pure instruction `in` cannot fault given cv: true for every
 * op kf_opt_fold reasons about except an integer division, remainder or cdiv
 * whose divisor is not a known non-zero constant. Faulting (and unknown)
 * instructions are never removed, so the interpreter still reports them. */
bool kf_opt_cannot_fault(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4]);

/* Whether the op is one the optimiser knows to be free of side effects
 * (given kf_opt_cannot_fault): it may be removed when nothing reads it. */
bool kf_opt_pure_op(const kf_ir_ins *in);

/* A strength reduction of a BINOP by a constant power of two. */
typedef enum { OPT_RED_NONE, OPT_RED_UDIV, OPT_RED_UREM, OPT_RED_SDIV, OPT_RED_SREM, OPT_RED_MUL } opt_red_kind;
typedef struct {
    uint8_t kind;        /* opt_red_kind */
    uint8_t log2;        /* the constant is 2^log2 */
    uint8_t x;           /* the operand that is not the constant */
} opt_reduce;

/* Whether `in` (32- or 64-bit integer BINOP) divides, takes the remainder
 * by, or multiplies by a known constant 2^k, k >= 1, that shifts and masks
 * compute exactly (signed: 2^k < 2^(w-1)); fills *r. */
bool kf_opt_reduce_plan(const kf_ir_ins *in, const opt_cval cv[4], opt_reduce *r);

/* Instructions and values under construction (heap). */
typedef struct {
    KF_VEC(kf_ir_ins) ins;
    KF_VEC(kf_ir_value) vals;
    bool oom;
} opt_code;

/* Appends to `out` the instructions that compute in's result as r says,
 * the last one writing in->dst; new values are appended to out->vals. */
void kf_opt_reduce_emit(opt_code *out, const kf_ir_ins *in, opt_reduce r);

/* Appends to `out` the vector constant v (of in's result type, lanes not
 * all the same) as a CONST of its most frequent lane and one INSERT of a
 * scalar CONST per other lane, the last INSERT writing in->dst: no
 * arithmetic, only moves of constants. */
void kf_opt_const_emit(opt_code *out, const kf_ir_ins *in, const kf_islot *v);

#endif
