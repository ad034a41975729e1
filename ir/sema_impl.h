/* Internal interface of semantic analysis, shared by ir/sema.c (module
 * level: names, constants, overrides, schedules, fn rules), ir/sema_stmt.c
 * (scopes and statements), ir/sema_expr.c (expressions, untyped constants,
 * builtins), ir/sema_fold.c (exact constant arithmetic, literal text) and
 * ir/value.c (host-side argument parsing and grid evaluation).
 *
 * Conventions of the typed AST that later phases rely on (see also the
 * report in ir/passes.h's kf_sema_fold):
 *  - the error type is {KF_TK_SCALAR, KF_S_NONE}: it marks an expression
 *    already reported and suppresses follow-up errors;
 *  - cval of an integer is its value sign/zero extended to 64 bits; of a
 *    float, the double value already rounded to the type; of a bool, 0/1;
 *  - an @unroll FOR (op = 1) has is_const set; its loop variable's NAMEs are
 *    is_const and every expression over them is is_const with the value for
 *    the iteration held in FOR->cval (in FOR->type; KF_S_UINT for a variable
 *    with untyped bounds, value as int64). */
#ifndef KF_SEMA_IMPL_H
#define KF_SEMA_IMPL_H

#include "passes.h"

typedef union {
    uint64_t u;
    int64_t i;
    double f;
} kf_cv;

/* ---- exact constant arithmetic (sema_fold.c) ---------------------------- */
typedef enum { KF_FOLD_OK, KF_FOLD_DIV0, KF_FOLD_NO, KF_FOLD_OVERFLOW } kf_fold_status;

/* Canonical cval of integer bits for scalar s (wrap, then sign/zero extend). */
uint64_t kf_fold_wrap(kf_scalar s, uint64_t v);
/* Rounds a double to float scalar s (RNE; f16/bf16 via numeric.h). */
double kf_fold_round(kf_scalar s, double x);
/* The contract's `as` conversion between scalars (bool/int/float). */
kf_cv kf_fold_convert(kf_scalar from, kf_scalar to, kf_cv v);
/* a op b in scalar s (comparisons give a bool 0/1); DIV0 for an integer
 * division or remainder by zero; NO when op does not apply to s. */
kf_fold_status kf_fold_binary(kf_scalar s, kf_op op, kf_cv a, kf_cv b, kf_cv *out);
kf_fold_status kf_fold_unary(kf_scalar s, kf_op op, kf_cv a, kf_cv *out);
/* Pure builtin on scalar arguments of scalar s (select: s of args 1, 2).
 * Builtins whose GPU result is approximate (exp, sin, ...) give NO. */
kf_fold_status kf_fold_builtin(kf_builtin bi, kf_scalar s, const kf_cv *args, unsigned n, kf_cv *out);
/* cval <-> lane bits (kf_value / IR CONST encoding, zero-extended). */
kf_cv kf_cv_from_bits(kf_scalar s, uint64_t bits);
uint64_t kf_cv_to_bits(kf_scalar s, kf_cv v);
/* Writes a cval of scalar s readably ("300", "-1", "1.5", "true"). */
const char *kf_cv_str(kf_scalar s, kf_cv v, char *buf, size_t size);

/* A literal as written in -D values and runtime arguments: an integer
 * (decimal, 0x hex, 0b binary, `_` separators, optional '-'), a float
 * (1.0, .5, 1e-6, inf, nan, optional '-') or true/false. */
typedef struct {
    char kind;       /* 'i', 'f', 'b' */
    bool neg;        /* integer: negative */
    uint64_t mag;    /* integer magnitude; bool 0/1 */
    double f;        /* float value */
} kf_literal;

bool kf_literal_parse(const char *text, kf_literal *out);
/* What to add to "'text' is not a number, true or false" for a text that
 * kf_literal_parse refused: the number syntax when it starts like a number. */
const char *kf_literal_hint(const char *text);
/* Converts a literal to scalar s; false with a reason ("does not fit u8",
 * "is a float") when it cannot be represented. */
bool kf_literal_to(const kf_literal *lit, kf_scalar s, kf_cv *out, const char **why);

/* Re-evaluates cval of the expression e (typed by sema) from its children,
 * where names get their value from `name` (which returns false when the
 * name is unknown: the whole evaluation gives NO). Nodes already is_const
 * keep their cval. *bad is set to the node that failed. With exact, an
 * integer operation, negation or conversion whose true result does not fit
 * its type (which the kernel's arithmetic would wrap) gives OVERFLOW, as
 * @schedule grid expressions need. */
typedef bool (*kf_eval_name_fn)(void *ctx, const kf_node *name, kf_cv *out);
kf_fold_status kf_fold_eval(const kf_node *e, kf_eval_name_fn name, void *ctx, bool exact, kf_cv *out,
                            const kf_node **bad);
/* Writes expression e as source text (for messages about grid expressions). */
void kf_expr_str(kf_buf *out, const kf_node *e);

/* ---- the checker state (sema.c, sema_stmt.c, sema_expr.c) --------------- */
typedef struct {
    const char *name;
    kf_node *decl;
    uint32_t depth;
    uint32_t prev;   /* 1 + index of the declaration it shadows; 0 none */
} kf_sema_sym;

/* A string-keyed hash map (open addressing); values are nonzero. Keeps
 * lookups O(1) so that huge modules and blocks check in linear time. */
typedef struct {
    const char **keys;
    uintptr_t *vals;
    uint32_t cap, count;
} kf_sema_map;

/* Sets key to val (val 0 reads as absent); false when out of memory. */
bool kf_sema_map_put(kf_sema_map *m, const char *key, uintptr_t val);
uintptr_t kf_sema_map_get(const kf_sema_map *m, const char *key);
void kf_sema_map_free(kf_sema_map *m);

typedef struct {
    kf_node *caller, *callee;
    kf_loc loc;
} kf_sema_call;

/* An `if` around the statement being checked whose condition depends on
 * an @unroll variable, and the arm being checked (then: taken = true). */
typedef struct {
    kf_node *cond;
    bool taken;
} kf_sema_guard;

typedef struct {
    kf_pass_ctx *cx;
    const kf_compile_opts *opts;
    kf_node *module;
    KF_VEC(kf_sema_sym) syms;   /* visible local declarations, innermost last */
    kf_sema_map scope;          /* name -> 1 + index in syms of the innermost one */
    kf_sema_map names;          /* module name -> its first CONST/FN/KERNEL */
    uint32_t hide_locals;       /* > 0 while a constant is evaluated */
    uint32_t depth;             /* block nesting, for redeclaration checks */
    kf_node *func;              /* FN or KERNEL being checked; NULL at module level */
    uint32_t loops;             /* loops around the current statement in func */
    KF_VEC(kf_node *) unroll;   /* active @unroll FORs, outermost first */
    KF_VEC(kf_sema_guard) guards; /* ifs over their variables around the statement: an
                                   iteration whose guard folds the other way is dead */
    uint32_t dead;              /* > 0 inside the arm a constant if never takes: its
                                   constant indices are not range-checked */
    KF_VEC(kf_node *) consts;   /* constants being evaluated (cycle detection) */
    kf_node *dyn_shared;        /* the current kernel's `shared s: T[]`, if any */
    KF_VEC(kf_sema_call) calls; /* fn call graph */
    const char *grid_mode;      /* checking a host-evaluated @schedule expression: "grid" or
                                   "shared" (named in messages), else NULL */
    kf_node *hint_node;         /* expression whose context type is known in advance */
    kf_type hint;               /* that type (declared type, other operand): generic
                                   builtins over untyped arguments take it */
    bool nomem;
} kf_sema;

void kf_sema_error(kf_sema *s, kf_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define TSTR(t) kf_type_str((t), (char[48]){0}, 48)

kf_type kf_sema_err_type(void);
bool kf_sema_is_err(kf_type t);
bool kf_sema_is_dim3(kf_type t);

static inline bool kf_sema_untyped(kf_type t) { return t.kind == KF_TK_SCALAR && kf_type_is_untyped(t); }
static inline bool kf_sema_is_value(kf_type t)
{
    return (t.kind == KF_TK_SCALAR || t.kind == KF_TK_VECTOR) && !kf_sema_is_err(t) && !kf_sema_is_dim3(t);
}
/* Whether n's type may come from its context (sema_expr.c): such operands
 * are checked after their typed neighbours, which give them that context. */
bool kf_sema_adapts(kf_sema *s, const kf_node *n);
static inline bool kf_sema_is_num(kf_type t) { return kf_sema_is_value(t) && t.scalar != KF_S_BOOL; }
static inline bool kf_sema_is_int_scalar(kf_type t)
{
    return t.kind == KF_TK_SCALAR && kf_type_is_int(t) && !kf_type_is_untyped(t);
}

/* sema.c */
kf_node *kf_sema_module_lookup(kf_sema *s, const char *name);
bool kf_sema_ensure_const(kf_sema *s, kf_node *c);
void kf_sema_suggest(kf_sema *s, const char *name, char *buf, size_t size);

/* sema_stmt.c */
void kf_sema_push(kf_sema *s);
void kf_sema_pop(kf_sema *s);
bool kf_sema_declare(kf_sema *s, kf_node *decl);
kf_node *kf_sema_lookup(kf_sema *s, const char *name);
kf_type kf_sema_resolve_type(kf_sema *s, kf_node *tn, bool allow_buffer, bool allow_array);
void kf_sema_block(kf_sema *s, kf_node *block);
bool kf_sema_returns(const kf_node *stmt);

/* sema_expr.c */
/* Checks expression n and returns its type (also stored in n->type); the
 * result is a value: not a type, dim3, array, fn name, void. Buffers only
 * when allow_buffer. Untyped constants stay untyped. */
kf_type kf_sema_value(kf_sema *s, kf_node *n, bool allow_buffer);
/* kf_sema_value where the type the context expects of n is already known
 * (a declared type, the other operand): a generic builtin call n over
 * untyped runtime arguments (select(c, 1, 2)) takes it instead of i32/f32. */
kf_type kf_sema_value_hint(kf_sema *s, kf_node *n, kf_type hint, bool allow_buffer);
/* The initializer of a `let`: also a buffer or a shared array (or a view). */
kf_type kf_sema_value_let(kf_sema *s, kf_node *n, kf_type hint);
/* Exact value of an untyped integer constant (beyond 64 bits while folding). */
__int128 kf_sema_uexact(const kf_node *n);
/* Gives an untyped constant n the type t (reporting a value that does not
 * fit); typed n is left alone. false when reported. */
bool kf_sema_adapt(kf_sema *s, kf_node *n, kf_type t);
/* Untyped n takes its default type (i32 / f32). */
void kf_sema_default(kf_sema *s, kf_node *n);
/* Checks n (already checked) can be used where type t is expected in
 * `what` ("the initializer of 'x'"): adapts untyped constants, reports a
 * typed mismatch. */
bool kf_sema_expect(kf_sema *s, kf_node *n, kf_type t, const char *what);
/* Recomputes is_const expressions that depend on @unroll variables (see
 * the file comment). Returns true if e depends on one. */
bool kf_sema_refold(kf_node *e);
/* Runs fn for each combination of values of the active @unroll loops (with
 * their cvals set and refolded) that reaches the statement being checked,
 * stopping when fn returns false or after a budget of combinations. A
 * combination where an enclosing if's condition folds to the other arm is
 * skipped: lowering never lowers that arm (`if k > 0 { v[k - 1] }`). */
void kf_sema_each_unroll(kf_sema *s, bool (*fn)(kf_sema *, void *), void *ctx);
/* Whether e depends on an active @unroll variable (always false outside
 * @unroll bodies, so long let chains elsewhere cost nothing). */
bool kf_sema_depends(const kf_sema *s, const kf_node *e);
/* Whether n is a call of min, max, clamp, abs or select. */
bool kf_sema_generic_call(const kf_node *n);
/* Folds n from its operands when operands_const (reports a constant
 * division by zero). */
void kf_sema_try_fold(kf_sema *s, kf_node *n, bool operands_const);
/* Checks an index expression: an integer; untyped constants become u32. */
bool kf_sema_index(kf_sema *s, kf_node *i);
/* Makes the types of a and b equal, adapting an untyped one; reports a
 * mismatch in operator/builtin sp at loc. Returns the type or the error type. */
kf_type kf_sema_unify2(kf_sema *s, kf_loc loc, kf_node *a, kf_node *b, const char *sp);
kf_type kf_sema_expr_stmt(kf_sema *s, kf_node *n);
void kf_sema_assign(kf_sema *s, kf_node *n);

/* sema_builtin.c */
kf_type kf_sema_builtin_call(kf_sema *s, kf_node *n, kf_builtin bi);

#endif
