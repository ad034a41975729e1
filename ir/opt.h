/* Private interface of the core-IR optimiser: ir/opt.c (the driver, the
 * structured data-flow walk, dead branches and loops, copies, dead code) and
 * ir/opt_fold.c (what one instruction computes when some operands are
 * known: constant folding through the interpreter's own lane semantics,
 * algebraic identities, strength reduction). Tests include this header for
 * the statistics of a run (tests/test_opt.c). */
#ifndef KF_OPT_H
#define KF_OPT_H

#include "interp_impl.h"   /* kf_islot and the lane semantics kf_iop_* that folding runs */
#include "passes.h"

/* What one kf_opt_kernel_stats run did (every count over all its rounds). */
typedef struct {
    uint32_t rounds;        /* walks over the kernel until nothing changed */
    uint32_t ins_before, ins_after;
    uint32_t folded;        /* instructions replaced by a constant */
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

/* kf_opt with its statistics (stats may be NULL). */
kf_status kf_opt_kernel_stats(kf_arena *arena, kf_ir_kernel *k, kf_opt_stats *stats);

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
    OPT_CONST,   /* the result is the constant `bits` in every lane */
    OPT_COPY,    /* the result is operand a[copy] unchanged (same type) */
} opt_fold_kind;

typedef struct {
    opt_fold_kind kind;
    uint64_t bits;
    unsigned copy;
} opt_fold_result;

/* What instruction `in` of k computes given the known operands cv[j] (for
 * a[j]): a constant, one of its operands, or nothing known. Only
 * BINOP, CMP, UNOP, CVT, BITCAST, SELECT, MATH, SPLAT, EXTRACT and INSERT
 * are ever folded; anything else is OPT_KEEP. */
opt_fold_result opt_fold(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4]);

/* Whether the pure instruction `in` cannot fault given cv: true for every
 * op opt_fold reasons about except an integer division, remainder or cdiv
 * whose divisor is not a known non-zero constant. Faulting (and unknown)
 * instructions are never removed, so the interpreter still reports them. */
bool opt_cannot_fault(const kf_ir_kernel *k, const kf_ir_ins *in, const opt_cval cv[4]);

/* Whether the op is one the optimiser knows to be free of side effects
 * (given opt_cannot_fault): it may be removed when nothing reads it. */
bool opt_pure_op(const kf_ir_ins *in);

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
bool opt_reduce_plan(const kf_ir_ins *in, const opt_cval cv[4], opt_reduce *r);

/* Instructions and values under construction (heap). */
typedef struct {
    KF_VEC(kf_ir_ins) ins;
    KF_VEC(kf_ir_value) vals;
    bool oom;
} opt_code;

/* Appends to `out` the instructions that compute in's result as r says,
 * the last one writing in->dst; new values are appended to out->vals. */
void opt_reduce_emit(opt_code *out, const kf_ir_ins *in, opt_reduce r);

#endif
