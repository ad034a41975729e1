/* Private interface of the lowering pass (ir/lower.c, ir/lower_expr.c,
 * ir/lower_builtin.c): the per-kernel builder state, the instruction
 * emitters, and the entry points each file offers the others.
 *
 * The builder collects instructions, values and arrays in heap vectors while
 * a kernel is lowered, then copies them into the compilation arena. Two
 * stacks follow the structure being built: `loops` has one entry per open IR
 * LOOP (user loops and the one-trip wrapper loops lowering makes for fn
 * returns and @unroll break/continue), `syn` one entry per open syntactic
 * target of break/continue/return (a user loop, an unrolled loop, an inlined
 * fn). An exit that crosses more than one IR LOOP sets the target's flag,
 * breaks, and every loop in between re-checks that flag after its ENDLOOP. */
#ifndef KF_LOWER_H
#define KF_LOWER_H

#include "passes.h"

/* One open IR LOOP. */
typedef struct {
    uint32_t flag;       /* exit flag value (bool), 0 until an exit needs it */
    uint32_t flag_at;    /* two reserved NOPs before the LOOP, patched to init the flag */
    bool wrapper;        /* one-trip loop made by lowering (ends with BREAK) */
    bool left;           /* an exit (return, @unroll break) out of it was lowered, at left_at */
    kf_loc loc, left_at;
    KF_VEC(uint32_t) checks; /* loops[] indices whose flag is re-checked after ENDLOOP */
} lw_loop;

typedef enum { SYN_LOOP, SYN_UNROLL, SYN_FN } lw_syn_kind;

/* One open target of break / continue / return. */
typedef struct {
    lw_syn_kind kind;
    uint32_t loop;       /* SYN_LOOP: its loops[] index; SYN_UNROLL: the whole-expansion
                            wrapper (UINT32_MAX if none); SYN_FN: the wrapper or UINT32_MAX */
    uint32_t iter;       /* SYN_UNROLL: the current iteration's wrapper or UINT32_MAX */
    kf_val result;       /* SYN_FN: result value (written by MOV), or the direct value */
    bool direct;         /* SYN_FN: the only return is the body's last statement */
    kf_type rtype;       /* SYN_FN: return type */
} lw_syn;

/* The value of an unrolled loop's variable in the iteration being expanded. */
typedef struct {
    const kf_node *node; /* the FOR node */
    uint64_t bits;       /* current value, two's complement in 64 bits */
} lw_unroll;

typedef struct {
    const kf_node *node; /* SHARED declaration */
    uint32_t array;      /* arrays[] index */
} lw_shared;

typedef struct {
    uint64_t bits;
    bool known;
} lw_vconst;

typedef struct {
    kf_pass_ctx *cx;
    KF_VEC(kf_ir_ins) ins;
    KF_VEC(kf_ir_value) vals;
    KF_VEC(uint32_t) vparam;  /* per value: 1 + index of the param a buffer derives from, or 0 */
    KF_VEC(lw_vconst) vconst; /* per value: its bits when a CONST defines it */
    KF_VEC(kf_ir_array) arrays;
    KF_VEC(lw_loop) loops;
    KF_VEC(lw_syn) syn;
    KF_VEC(lw_unroll) unroll;
    KF_VEC(lw_shared) shared;
    kf_ir_param *params;
    uint32_t nparams;
    uint32_t inline_depth;
    uint32_t depth;           /* statements and expressions being lowered, across inlined fns */
    uint32_t work;            /* statements, expressions, folds and @unroll iterations so far */
    uint32_t fold_epoch;      /* advances whenever what kf_lower_fold reads may change (each
                                 statement, @unroll iteration and inlined fn): an
                                 expression that failed to fold in this epoch fails again */
    uint32_t if_depth;        /* IFs open in the IR (a constant condition opens none), */
    kf_loc if_at;             /* the innermost one's */
    bool dep_waited;          /* a dep_wait() was lowered, at dep_wait_at */
    kf_loc dep_wait_at;
    bool failed;              /* a diagnostic was reported */
    bool oom;
} lw_t;

#define LW_MAX_INS (1u << 18)      /* instruction cap per kernel (runaway unroll/inlining) */
#define LW_MAX_UNROLL 4096u        /* iterations of one @unroll loop */
#define LW_MAX_WORK (8u * LW_MAX_INS) /* lowering steps per kernel (kf_lower_work): nested @unroll
                                      loops multiply, and bodies that fold away make no
                                      instruction to cap. The library's kernels take under 2
                                      steps per instruction; 0.1 s at the limit (Release) */
#define LW_MAX_INLINE_DEPTH 64u
#define LW_MAX_DEPTH 2000u         /* statement/expression recursion, inlined fn bodies included
                                      (the parser bounds one body at 1000; inlining adds them up) */

/* ---- builder (lower.c) ---- */
kf_type kf_lower_norm(kf_type t);             /* untyped constants -> i32 / f32 */
kf_val kf_lower_new_val(lw_t *lw, kf_type t, const char *name, kf_loc loc);
kf_type kf_lower_vtype(const lw_t *lw, kf_val v);
/* Appends an instruction; returns its index (UINT32_MAX when out of memory or over the cap). */
uint32_t kf_lower_emit(lw_t *lw, kf_ir_op op, uint16_t sub, kf_type t, kf_val dst,
                 kf_val a0, kf_val a1, kf_val a2, kf_val a3, uint64_t imm, kf_loc loc);
/* Emits an instruction with a fresh destination of type dt; returns the value. */
kf_val kf_lower_def(lw_t *lw, kf_ir_op op, uint16_t sub, kf_type t, kf_type dt,
              kf_val a0, kf_val a1, kf_val a2, uint64_t imm, kf_loc loc);
kf_val kf_lower_const(lw_t *lw, kf_type t, uint64_t bits, kf_loc loc);
void kf_lower_mov(lw_t *lw, kf_val dst, kf_val src, kf_loc loc);
void kf_lower_error(lw_t *lw, kf_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Counts one step of lowering (a statement, an expression, a constant
 * folded over @unroll variables, an @unroll iteration): false, with an
 * error, past LW_MAX_WORK, so no kernel takes unbounded time to lower. */
bool kf_lower_work(lw_t *lw, kf_loc loc);
/* kf_lower_work, then enters one more level of statement or expression
 * recursion: false, with an error, past LW_MAX_DEPTH (so deep bodies
 * inlined into deep bodies cannot overflow the stack); after true the
 * caller ends with lw->depth--. */
bool kf_lower_enter(lw_t *lw, kf_loc loc);
void kf_lower_block(lw_t *lw, const kf_node *block);
/* Records that buffer value v is accessed with elements of type elem. */
void kf_lower_note_access(lw_t *lw, kf_val buf, kf_type elem);
/* Inlines a call of a fn; returns its result value (0 for none). */
kf_val kf_lower_inline(lw_t *lw, const kf_node *call);
/* Lowers dep_wait() at loc after checking that every thread still running
 * passes it exactly once, before any store or atomic on a buffer
 * (grammar/README.md section 7); reported otherwise. */
void kf_lower_dep_wait(lw_t *lw, kf_loc loc);

/* ---- expressions (lower_expr.c) ---- */
kf_val kf_lower_expr(lw_t *lw, const kf_node *e);
/* Lowers e to a value of type want (constants are made in `want` directly;
 * a different non-constant type is converted, which sema should not leave). */
kf_val kf_lower_expr_as(lw_t *lw, const kf_node *e, kf_type want);
/* Compile-time value of e as bits of its type, following unrolled loop
 * variables; false when e is not constant. */
/* Whether the arm of an if on cond (then: taken) is dead in this @unroll
 * iteration by sema's fold (kf_sema_arm_dead), which decided which arms
 * sema checked; also the right operand of a && (taken) or || (not). */
bool kf_lower_arm_dead(lw_t *lw, kf_node *cond, bool taken);
bool kf_lower_fold(lw_t *lw, const kf_node *e, kf_type t, uint64_t *bits);
/* Converts constant bits of type from into bits of type to. */
uint64_t kf_lower_const_convert(kf_type from, uint64_t bits, kf_type to);
void kf_lower_assign(lw_t *lw, const kf_node *s);
bool kf_lower_is_fresh(const lw_t *lw, kf_val v, kf_val mark);

/* ---- builtins (lower_builtin.c) ---- */
kf_val kf_lower_builtin_call(lw_t *lw, const kf_node *call);
kf_val kf_lower_builtin_value(lw_t *lw, const kf_node *name);
kf_val kf_lower_geometry(lw_t *lw, kf_builtin b, int dim, kf_loc loc);
/* arrays[] index of a shared declaration already lowered, or UINT32_MAX. */
uint32_t kf_lower_shared_array(lw_t *lw, const kf_node *decl);
/* The array an array-valued expression names: a local or shared array, a
 * let or fn parameter holding one, or a view (`as shared T[]`) of any of
 * them. false (reported) otherwise. */
bool kf_lower_array_of(lw_t *lw, const kf_node *e, uint32_t *idx);

#endif
