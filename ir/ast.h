/* The abstract syntax tree of a .kf module, built by the Lemon parser
 * (grammar/parser.y) and annotated in place by sema (ir/sema.c).
 *
 * One node shape for everything (chibicc style): a kind, an operator or
 * builtin id, a location, up to four children and a `next` link for lists
 * (statements, parameters, arguments, attributes). All nodes live in the
 * compilation's arena. Sema fills `type`, `sym`, `cval`/`is_const` and, for
 * calls, `op` (the builtin id) or `sym` (the fn declaration). */
#ifndef KF_AST_H
#define KF_AST_H

#include "types.h"

/* Operators shared by the AST and the core IR. X(enum, spelling) */
#define KF_OPERATORS(X) \
    X(KF_OP_ADD, "+")   X(KF_OP_SUB, "-")   X(KF_OP_MUL, "*")  X(KF_OP_DIV, "/") \
    X(KF_OP_REM, "%")   X(KF_OP_AND, "&")   X(KF_OP_OR, "|")   X(KF_OP_XOR, "^") \
    X(KF_OP_SHL, "<<")  X(KF_OP_SHR, ">>")  X(KF_OP_EQ, "==")  X(KF_OP_NE, "!=") \
    X(KF_OP_LT, "<")    X(KF_OP_LE, "<=")   X(KF_OP_GT, ">")   X(KF_OP_GE, ">=") \
    X(KF_OP_LAND, "&&") X(KF_OP_LOR, "||")  X(KF_OP_NEG, "-")  X(KF_OP_NOT, "!") \
    X(KF_OP_BNOT, "~")  X(KF_OP_ASSIGN, "=")

typedef enum {
    KF_OP_NONE = 0,
#define X(e, s) e,
    KF_OPERATORS(X)
#undef X
    KF_OP_COUNT
} kf_op;
extern const char *const kf_op_spelling[KF_OP_COUNT];

/* Builtin functions and values (LANGUAGE.md sections 7 and 8), one row each.
 * X(enum, name, kind, nargs)  kind: 'f' function, 'v' value (thread geometry,
 * WARP_SIZE, inf, nan); nargs: the arity of a function (the one place it is
 * written: sema checks calls against it, lowering trusts it). A name may
 * have two rows of different arity, next to each other (cp_async with 4 or
 * 5 arguments): lookup finds the first, sema picks the row the call's
 * argument count matches. Section 8's builtins that are not lane by lane
 * (dot4, bfe, bfi, prmt; mma, ldmatrix, cp_async) lower to the IR's INTRIN
 * op (ir.h: KF_IR_INTRINS says how each behaves), and so do `fence`,
 * `dep_wait`, `dep_trigger` and `prefetch_l2`, kforge extensions beyond
 * the v2 contract (grammar/README.md section 7). */
#define KF_BUILTINS(X) \
    X(KF_BI_THREAD_ID, "thread_id", 'v', 0) X(KF_BI_BLOCK_ID, "block_id", 'v', 0) \
    X(KF_BI_BLOCK_DIM, "block_dim", 'v', 0) X(KF_BI_GRID_DIM, "grid_dim", 'v', 0) \
    X(KF_BI_GLOBAL_ID, "global_id", 'v', 0) X(KF_BI_LANE_ID, "lane_id", 'v', 0) \
    X(KF_BI_WARP_ID, "warp_id", 'v', 0)     X(KF_BI_WARP_SIZE, "WARP_SIZE", 'v', 0) \
    X(KF_BI_INF, "inf", 'v', 0)             X(KF_BI_NAN, "nan", 'v', 0) \
    X(KF_BI_BARRIER, "barrier", 'f', 0) \
    X(KF_BI_SHFL, "shfl", 'f', 2)           X(KF_BI_SHFL_XOR, "shfl_xor", 'f', 2) \
    X(KF_BI_SHFL_UP, "shfl_up", 'f', 2)     X(KF_BI_SHFL_DOWN, "shfl_down", 'f', 2) \
    X(KF_BI_WARP_SUM, "warp_sum", 'f', 1)   X(KF_BI_WARP_MAX, "warp_max", 'f', 1) \
    X(KF_BI_WARP_MIN, "warp_min", 'f', 1)   X(KF_BI_BALLOT, "ballot", 'f', 1) \
    X(KF_BI_ANY, "any", 'f', 1)             X(KF_BI_ALL, "all", 'f', 1) \
    X(KF_BI_ATOMIC_ADD, "atomic_add", 'f', 3) X(KF_BI_ATOMIC_MIN, "atomic_min", 'f', 3) \
    X(KF_BI_ATOMIC_MAX, "atomic_max", 'f', 3) X(KF_BI_ATOMIC_EXCH, "atomic_exch", 'f', 3) \
    X(KF_BI_ATOMIC_CAS, "atomic_cas", 'f', 4) \
    X(KF_BI_EXP, "exp", 'f', 1)   X(KF_BI_EXP2, "exp2", 'f', 1)   X(KF_BI_LOG, "log", 'f', 1) \
    X(KF_BI_LOG2, "log2", 'f', 1) X(KF_BI_SQRT, "sqrt", 'f', 1)   X(KF_BI_RSQRT, "rsqrt", 'f', 1) \
    X(KF_BI_SIN, "sin", 'f', 1)   X(KF_BI_COS, "cos", 'f', 1)     X(KF_BI_TANH, "tanh", 'f', 1) \
    X(KF_BI_ABS, "abs", 'f', 1)   X(KF_BI_FLOOR, "floor", 'f', 1) X(KF_BI_CEIL, "ceil", 'f', 1) \
    X(KF_BI_TRUNC, "trunc", 'f', 1) X(KF_BI_ROUND, "round", 'f', 1) X(KF_BI_MIN, "min", 'f', 2) \
    X(KF_BI_MAX, "max", 'f', 2)   X(KF_BI_CLAMP, "clamp", 'f', 3) X(KF_BI_FMA, "fma", 'f', 3) \
    X(KF_BI_CLZ, "clz", 'f', 1)   X(KF_BI_POPC, "popc", 'f', 1)   X(KF_BI_CDIV, "cdiv", 'f', 2) \
    X(KF_BI_MUL_HI, "mul_hi", 'f', 2) X(KF_BI_SELECT, "select", 'f', 3) \
    X(KF_BI_BITCAST, "bitcast", 'f', 2) \
    X(KF_BI_RCP, "rcp", 'f', 1)   X(KF_BI_FAST_DIV, "fast_div", 'f', 2) \
    X(KF_BI_DOT4, "dot4", 'f', 3) X(KF_BI_BFE, "bfe", 'f', 3)     X(KF_BI_BFI, "bfi", 'f', 4) \
    X(KF_BI_PRMT, "prmt", 'f', 3) \
    X(KF_BI_MMA, "mma", 'f', 3) \
    X(KF_BI_LDMATRIX_X1, "ldmatrix_x1", 'f', 2) X(KF_BI_LDMATRIX_X2, "ldmatrix_x2", 'f', 2) \
    X(KF_BI_LDMATRIX_X4, "ldmatrix_x4", 'f', 2) \
    X(KF_BI_LDMATRIX_X1_TRANS, "ldmatrix_x1_trans", 'f', 2) X(KF_BI_LDMATRIX_X2_TRANS, "ldmatrix_x2_trans", 'f', 2) \
    X(KF_BI_LDMATRIX_X4_TRANS, "ldmatrix_x4_trans", 'f', 2) \
    X(KF_BI_CP_ASYNC, "cp_async", 'f', 4)   X(KF_BI_CP_ASYNC_N, "cp_async", 'f', 5) \
    X(KF_BI_CP_ASYNC_COMMIT, "cp_async_commit", 'f', 0) X(KF_BI_CP_ASYNC_WAIT, "cp_async_wait", 'f', 1) \
    X(KF_BI_FENCE, "fence", 'f', 0) \
    X(KF_BI_DEP_WAIT, "dep_wait", 'f', 0) X(KF_BI_DEP_TRIGGER, "dep_trigger", 'f', 0) \
    X(KF_BI_PREFETCH_L2, "prefetch_l2", 'f', 3)

typedef enum {
    KF_BI_NONE = 0,
#define X(e, n, k, a) e,
    KF_BUILTINS(X)
#undef X
    KF_BI_COUNT
} kf_builtin;
extern const char *const kf_builtin_names[KF_BI_COUNT];
extern const char kf_builtin_kind[KF_BI_COUNT];
extern const uint8_t kf_builtin_nargs[KF_BI_COUNT];
kf_builtin kf_builtin_lookup(const char *name);
/* ldmatrix_x1 ... ldmatrix_x4_trans: how many 8x8 matrices (1, 2, 4), or 0
 * for another builtin; *trans (may be NULL) tells the _trans forms. */
static inline unsigned kf_builtin_ldmatrix(kf_builtin b, bool *trans)
{
    if (b < KF_BI_LDMATRIX_X1 || b > KF_BI_LDMATRIX_X4_TRANS) return 0;
    unsigned i = (unsigned)(b - KF_BI_LDMATRIX_X1);
    if (trans) *trans = i >= 3;
    return 1u << (i % 3 == 2 ? 2 : i % 3);
}

/* Node kinds. Children per kind are documented in the trailing comment:
 * a, b, c, d are the child slots; "list" means a `next`-linked chain. */
#define KF_NODE_KINDS(X) \
    X(KF_N_MODULE)    /* a: list of CONST/FN/KERNEL */ \
    X(KF_N_CONST)     /* name; a: type node; b: init expr */ \
    X(KF_N_FN)        /* name; a: list of PARAM; b: return type node or NULL; c: BLOCK */ \
    X(KF_N_KERNEL)    /* name; a: list of PARAM; c: BLOCK; d: list of ATTR */ \
    X(KF_N_PARAM)     /* name; a: type node */ \
    X(KF_N_ATTR)      /* name ("schedule"); a: list of NAMEDARG */ \
    X(KF_N_NAMEDARG)  /* name ("block"/"grid"/"shared"); a: expr or TUPLE */ \
    X(KF_N_TYPE)      /* scalar/vector type; `type` filled by the parser */ \
    X(KF_N_TYPE_BUF)  /* &[a] / &mut [a] (op = 1 when mut); a: elem TYPE node */ \
    X(KF_N_TYPE_ARRAY)/* a: elem TYPE node; b: length expr, NULL for T[]; op = 1 when spelled `shared T[]` */ \
    X(KF_N_BLOCK)     /* a: list of statements */ \
    X(KF_N_LET)       /* name; a: type node or NULL; b: init expr */ \
    X(KF_N_VAR)       /* name; a: type node or NULL; b: init expr or NULL */ \
    X(KF_N_SHARED)    /* name; a: TYPE_ARRAY node */ \
    X(KF_N_ASSIGN)    /* op: KF_OP_ASSIGN or the compound op (KF_OP_ADD for +=); a: lvalue; b: expr */ \
    X(KF_N_IF)        /* a: cond; b: then BLOCK; c: else BLOCK, else IF, or NULL */ \
    X(KF_N_FOR)       /* name; a: start; b: end; c: step or NULL; d: body BLOCK; op = 1 when @unroll */ \
    X(KF_N_WHILE)     /* a: cond; b: body BLOCK */ \
    X(KF_N_BREAK)     \
    X(KF_N_CONTINUE)  \
    X(KF_N_RETURN)    /* a: value or NULL */ \
    X(KF_N_EXPR)      /* expression statement; a: expr */ \
    X(KF_N_INT)       /* ival: value (fits u64; parser reports overflow) */ \
    X(KF_N_FLOAT)     /* fval */ \
    X(KF_N_BOOL)      /* ival: 0/1 */ \
    X(KF_N_NAME)      /* name; sema: sym = declaring node, or op = builtin id */ \
    X(KF_N_BINARY)    /* op; a, b */ \
    X(KF_N_UNARY)     /* op (NEG, NOT, BNOT); a */ \
    X(KF_N_CAST)      /* a: expr; b: type node (TYPE, TYPE_BUF, or TYPE_ARRAY for `as shared T[]`) */ \
    X(KF_N_CALL)      /* a: callee (NAME or TYPE node); b: list of args (exprs; a TYPE node is allowed as an arg for bitcast) */ \
    X(KF_N_INDEX)     /* a: base; b: index */ \
    X(KF_N_MEMBER)    /* a: base; name: member (".x", ".y", ...) */ \
    X(KF_N_TUPLE)     /* a: list of exprs (schedule only) */

typedef enum {
#define X(e) e,
    KF_NODE_KINDS(X)
#undef X
    KF_N_COUNT
} kf_node_kind;
extern const char *const kf_node_kind_names[KF_N_COUNT];

typedef struct kf_node kf_node;
struct kf_node {
    uint16_t kind;       /* kf_node_kind */
    uint16_t op;         /* kf_op, kf_builtin (calls/names after sema), or a flag per kind */
    kf_loc loc;          /* the node's first token (operators: the operator token) */
    kf_node *a, *b, *c, *d;
    kf_node *next;       /* next in a list */
    const char *name;    /* identifiers, declared names, member names (arena) */
    uint64_t ival;       /* integer/bool literal */
    double fval;         /* float literal */
    /* ---- filled by sema ---- */
    kf_type type;        /* type of an expression, declared type of a declaration */
    kf_node *sym;        /* NAME: declaring node (LET, VAR, PARAM, CONST, SHARED, FOR, FN); CALL: FN */
    bool is_const;       /* expression is a compile-time constant; value in cval */
    union { uint64_t u; int64_t i; double f; } cval; /* folded value, in `type`
                            (ints: two's complement in 64 bits, sign/zero extended;
                            floats: the value as a double, already rounded to `type`) */
    uint32_t aux;        /* free for the phase that owns the node (lowering) */
    uint32_t fold_miss;  /* lowering: the fold epoch in which this expression did not fold */
};

/* Node constructor used by the parser actions: one line per rule. */
kf_node *kf_ast_new(kf_arena *a, kf_node_kind kind, kf_loc loc);
kf_node *kf_ast_node(kf_arena *a, kf_node_kind kind, kf_loc loc, kf_node *ca, kf_node *cb, kf_node *cc);
/* Appends `item` to the list headed by `list`; returns the head. */
kf_node *kf_ast_append(kf_node *list, kf_node *item);
/* Debug dump (one node per line, indented), used by parser tests. */
void kf_ast_dump(kf_buf *out, const kf_node *n, int indent);

/* The context every pass runs in, from the parser (grammar/parse.h) to
 * the optimiser (ir/passes.h): the compilation's arena and diagnostics,
 * and the source being compiled. */
typedef struct {
    kf_arena *arena;
    kf_diags *diags;
    const char *file;
    const char *src;
    size_t len;
} kf_pass_ctx;

#endif
