/* The exact-constant pass (kf_opt_exact): mandatory, run by kf_compile on
 * every kernel at every -O level, after kf_opt at -O1 (where it finds
 * nothing left to do). It exists because the GPU compilers kforge hands its
 * code to (NVRTC, ptxas, the driver's PTX JIT) fold operations whose
 * operands they see as constants, and their folding is not the contract's:
 * the H200's driver 13 JIT folds an f32 add that is an exact tie toward
 * zero where the hardware rounds it to nearest even (kernels/raw/
 * tie_probe.ptx, golden case regress_tie_fold). kforge cannot know every
 * such fold, so it leaves them none: every float operation whose operands
 * kforge knows is replaced by its constant, computed by kf_opt_fold with
 * the interpreter's own arithmetic, before any back end sees it.
 *
 * The rule (kf_opt_exact_op): an operation is replaced when it reads or
 * writes a float (f16, bf16, f32, f64) and the contract fixes its value
 * exactly: BINOP + - * / (each rounded once to its type), UNOP -, CMP
 * (NaN unordered), CVT to or from a float (f32 <-> f16/bf16/f64 and int ->
 * float round to nearest even, float -> int truncates and saturates, NaN
 * gives 0), and the exact MATH builtins (abs floor ceil trunc round sqrt
 * fma min max clamp; min/max with PTX's NaN and signed-zero rules). These
 * are where a compiler's folding can differ from the hardware: rounding of
 * ties, double rounding through a wider type, subnormals, NaN bits and
 * NaN -> int, the zero that min/max return. Not replaced:
 *  - approximate math (exp exp2 log log2 rsqrt sin cos tanh rcp fast_div):
 *    no single right value; each back end's own within its documented
 *    bound, to which a compiler's fold is held as well;
 *  - integer operations: exact in every compiler (the emitters bring the
 *    bit-field intrinsics' positions and lengths inside the value);
 *  - moves of bits (BITCAST SPLAT EXTRACT INSERT SELECT MOV): nothing to
 *    round.
 * "Known" is what kf_opt's walk computes (ir/opt.c, mode OPT_EXACT):
 * constants through copies, integer identities (x & 0, x * 0) and vectors
 * lane by lane, on every path. A vector result whose lanes differ is
 * written as a CONST and INSERTs of constants (moves only). Not covered
 * yet: a vector only some of whose lanes are known is not split, so such a
 * lane still reaches the back ends as an operation on constants
 * (lane 3 of `f32x4(f, -f, v, 1.5) as u16x4`); and a compiler that proves
 * a constant kforge does not (x ^ x) can still fold. The differential
 * tester (tools/difftest) watches for both.
 *
 * -O0 still means "no optimisation": no copy is forwarded, no branch
 * decided, no loop or dead instruction removed; only such a value is
 * computed once on the host instead of by a GPU compiler. The replacement
 * is exact, so the interpreter computes the same bits with it as without
 * (the --same-as-O0 checks compare -O1 against this same -O0). A kernel
 * nested deeper than the walk goes is left as lowered, as kf_opt leaves it. */
#include "opt.h"

static bool is_float(const kf_ir_kernel *k, kf_val v) { return v && kf_type_is_float(k->vals[v].type); }

bool kf_opt_exact_op(const kf_ir_kernel *k, const kf_ir_ins *in)
{
    switch (in->op) {
    case KF_IR_BINOP: case KF_IR_UNOP: case KF_IR_CMP: case KF_IR_CVT: case KF_IR_MATH:
        return kf_type_is_float(in->type) || is_float(k, in->a[0]);   /* kf_opt_fold keeps approximate math */
    default: return false;
    }
}

kf_status kf_opt_exact(kf_pass_ctx *cx, kf_ir_kernel *k)
{
    return kf_opt_walk(cx->arena, k, OPT_EXACT, NULL);
}
