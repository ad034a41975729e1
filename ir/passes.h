/* The passes of ir/, in the order runtime/api_compile.c runs them after the parser
 * (grammar/parse.h): sema -> lower -> opt (not at -O0) -> opt_exact. Private to the library and its
 * tests, which call them one at a time; users get them all through
 * kf_compile. Each takes the pass context (ir/ast.h): the compilation's
 * arena and diagnostics. */
#ifndef KF_PASSES_H
#define KF_PASSES_H

#include "module.h"

/* Resolves names, checks and annotates types, folds constants, applies
 * overrides, validates schedules and fn rules. */
kf_status kf_sema_check(kf_pass_ctx *cx, kf_node *module, const kf_compile_opts *opts);
/* Re-folds the constants of e (an expression or statement subtree of a
 * checked module) that depend on @unroll loop variables. Sema marks an
 * @unroll FOR (op = 1) with is_const; its variable's NAMEs (sym = the FOR)
 * and every expression over them are is_const, and their cval holds the
 * value for the iteration in FOR->cval (in FOR->type; a variable whose
 * bounds are untyped constants has FOR->type = untyped int and FOR->cval.i
 * the iteration value, and each use is typed like a literal). Lowering sets
 * FOR->cval for each iteration, then calls kf_sema_fold(body) before
 * lowering the body. Returns true if e depends on such a variable. */
bool kf_sema_fold(kf_node *e);
/* Whether the arm of an if with condition cond (then: taken) is never
 * taken with the @unroll variables' FOR->cval as set: cond is constant the
 * other way, or a `&&` (then) / `||` (else) has such an operand, or `!`
 * of such. Sema checks, and lowering lowers, only the arms that are not
 * dead in an iteration (`if k > 0 { v[k - 1] }`). */
bool kf_sema_arm_dead(kf_node *cond, bool taken);
/* Lowers every kernel of a checked module to core IR. */
kf_status kf_lower(kf_pass_ctx *cx, kf_node *module, kf_ir_kernel **kernels, uint32_t *nkernels);
/* Optimises one linked kernel in place (constants folded, dead branches,
 * loops, copies and code removed, / % * by powers of two made shifts),
 * computing exactly what the kernel computed before: every fault the
 * interpreter reports stays, and nothing moves across a barrier, warp
 * operation, atomic or store. New arrays come from cx->arena; the kernel
 * is linked again. KF_ERR_NOMEM leaves it as it was. */
kf_status kf_opt(kf_pass_ctx *cx, kf_ir_kernel *k);
/* Replaces, in one linked kernel, every float operation whose operands are
 * known constants by its constant, computed exactly as the interpreter
 * computes it (ir/opt_exact.c gives the rule), so that no GPU compiler
 * folds one itself; nothing else changes. Run at every -O level. New
 * arrays come from cx->arena; the kernel is linked again. KF_ERR_NOMEM
 * leaves it as it was. */
kf_status kf_opt_exact(kf_pass_ctx *cx, kf_ir_kernel *k);

#endif
