/* Internals of kforge-difftest shared by its files (see difftest.h for the
 * parts): the program tree the generator builds, the printer prints and the
 * shrinker edits; the generator's context; the batch runner. */
#ifndef KF_DT_IMPL_H
#define KF_DT_IMPL_H

#include "difftest.h"
#include "../../runtime/device.h"

/* ---- random numbers: splitmix64, one stream per program ----------------- */
typedef struct {
    uint64_t s;
} dt_rng;

uint64_t dt_next(dt_rng *r);
uint32_t dt_below(dt_rng *r, uint32_t n);           /* [0, n), n > 0 */
bool dt_chance(dt_rng *r, unsigned percent);
int64_t dt_range(dt_rng *r, int64_t lo, int64_t hi);  /* [lo, hi] */

/* ---- variance: how far a value or a point of control may differ --------- */
enum {
    DT_V_UNI = 0,   /* the same in every thread of the grid */
    DT_V_BLOCK,     /* the same in every thread of a block */
    DT_V_WARP,      /* the same in every lane of a warp */
    DT_V_THREAD,    /* per thread */
};

/* ---- the program tree ------------------------------------------------------ */
/* X(kind) for expressions, then statements. */
#define DT_NODES(X)                                                                            \
    X(E_LIT)      /* text: the literal; F_UNTYPED: printed bare, else (lit as T) */              \
    X(E_NAME)     /* text: a variable, parameter, constant or builtin value */                   \
    X(E_UN)       /* op: '-', '~', '!'; a[0] */                                                  \
    X(E_BIN)      /* op: dt_binop; a[0], a[1] */                                                 \
    X(E_CAST)     /* a[0] as type */                                                             \
    X(E_BITCAST)  /* bitcast(type, a[0]) */                                                      \
    X(E_CALL)     /* text: builtin or fn name; args a[0] -> next ... */                          \
    X(E_CTOR)     /* type(args): args a[0] -> next ... (one: splat) */                           \
    X(E_INDEX)    /* text[a[0]]: text is a buffer, view, array or shared array */                 \
    X(E_MEMBER)   /* a[0].xyzw (n < 4 and F_DOT) or a[0][n] */                                    \
    X(E_SLOT)     /* text + n: a thread's own slot n of an output buffer (KEEP) */               \
    X(E_GUARD)    /* op: dt_guard; a[0] made safe (KEEP: never hoisted away) */                  \
    X(S_LET)      /* let text[: type] = a[0]; (F_TYPED: with the type) */                        \
    X(S_VAR)      /* var text[: type] [= a[0]]; */                                               \
    X(S_ASSIGN)   /* a[0] op= a[1]; op: dt_binop or 0 for '=' */                                 \
    X(S_IF)       /* if a[0] { body } else { els } (els may be one S_IF: else if) */             \
    X(S_FOR)      /* for text in a[0] .. a[1] [step a[2]] { body } (F_UNROLL) */                 \
    X(S_WHILE)    /* var aux: i32 = 0; while a[0] && aux < n { aux += 1; body } */               \
    X(S_BREAK)                                                                                 \
    X(S_CONTINUE)                                                                              \
    X(S_RETURN)   /* return [a[0]]; */                                                          \
    X(S_ARRAY)    /* var text: type[n]; for aux in 0 .. n { text[aux] = a[0]; } */              \
    X(S_SHARED)   /* shared text: type[n]; */                                                   \
    X(S_EXCHANGE) /* [barrier();] for aux in tb .. n step NB { text[aux] = a[0]; } barrier(); op 1: */ \
                  /* the loop's body is a[0] (cp_async), then commit and wait(0) */  \
    X(S_BARRIER)                                                                               \
    X(S_BUILTIN)  /* text; kforge's statement extensions: fence, dep_wait, dep_trigger */     \
    X(S_CALL)     /* a[0]; (a call whose value, if any, is dropped) */

typedef enum {
#define X(e) DT_##e,
    DT_NODES(X)
#undef X
    DT_NKINDS
} dt_kind;

/* Binary operators, in the order of their spelling table. */
#define DT_BINOPS(X)                                                                          \
    X(ADD, "+") X(SUB, "-") X(MUL, "*") X(DIV, "/") X(REM, "%") X(AND, "&") X(OR, "|")        \
    X(XOR, "^") X(SHL, "<<") X(SHR, ">>") X(EQ, "==") X(NE, "!=") X(LT, "<") X(LE, "<=")      \
    X(GT, ">") X(GE, ">=") X(LAND, "&&") X(LOR, "||")

typedef enum {
    DT_OP_NONE = 0,
#define X(e, s) DT_OP_##e,
    DT_BINOPS(X)
#undef X
    DT_NOPS
} dt_binop;

extern const char *const dt_op_spelling[DT_NOPS];

/* What an E_GUARD makes safe. */
typedef enum {
    DT_G_NZ_OR1,      /* a divisor: (e | 1) */
    DT_G_NZ_FN,       /* a divisor: nz_T(e) = select(e == 0, 1, e) (a helper fn) */
    DT_G_NAN,         /* no NaN before a bitcast: clamp(e, -inf, inf) (NaN -> -inf) */
    DT_G_ZERO,        /* no -0 from min/max/clamp: (e + 0.0) */
    DT_G_MASK,        /* an index: (e & n), n + 1 a power of two */
    DT_G_MOD,         /* an index: ((e as u32) % n) */
    DT_G_APPROX,      /* text(clamp(e, lo, hi)) or text(clamp(abs(e), lo, hi)); n: dt_range_kind */
} dt_guard;

enum {
    DT_F_UNTYPED = 1,   /* E_LIT: an untyped constant */
    DT_F_TYPED = 2,     /* S_LET/S_VAR: print the type */
    DT_F_UNROLL = 4,    /* S_FOR: @unroll */
    DT_F_DOT = 8,       /* E_MEMBER: .x .y .z .w */
    DT_F_LEAD = 16,     /* S_EXCHANGE: a barrier first */
    DT_F_KEEP = 32,     /* never replaced by a child (its children would be unsafe) */
    DT_F_FIXED = 64,    /* never edited (an ownership index: a thread's own slots) */
    DT_F_MODULE = 128,  /* E_NAME/E_CALL: a module-level name (a const, a fn): printed with the tag */
};

typedef struct dt_node dt_node;
struct dt_node {
    uint8_t kind;       /* dt_kind */
    uint8_t op;         /* dt_binop, unary operator char, dt_guard */
    uint8_t var;        /* variance of the value (expressions) */
    uint8_t flags;      /* DT_F_* */
    uint32_t id;        /* unique in the program: what a shrinking edit names */
    kf_type type;       /* value type; declared type of S_LET/S_VAR/S_ARRAY/S_SHARED */
    const char *text;   /* name, literal, callee */
    const char *aux;    /* a loop variable or counter name */
    int64_t n;          /* slot, lane, length, trip bound, range kind */
    dt_node *a[3];      /* operands; call and constructor arguments chain through next */
    dt_node *body, *els;
    dt_node *next;      /* next statement or argument */
};

/* Operand k of n: a[k], or for calls and constructors argument k. */
static inline dt_node *dt_operand(const dt_node *n, int k)
{
    if (n->kind != DT_E_CALL && n->kind != DT_E_CTOR) return k < 3 ? n->a[k] : NULL;
    dt_node *x = n->a[0];
    while (x && k-- > 0) x = x->next;
    return x;
}

/* ---- the program --------------------------------------------------------- */
typedef enum { DT_R_IN, DT_R_OUT, DT_R_APPROX, DT_R_ATOMIC, DT_R_SCALAR } dt_role;

/* Tolerance classes of output slots (README.md "Tolerances"). */
typedef enum {
    DT_TOL_EXACT = 0,   /* bit for bit (floats: NaN matches NaN) */
    DT_TOL_F32,         /* f32 exp exp2 log log2 rsqrt sin cos: abs 8e-6 + rel 8e-6 */
    DT_TOL_TANH,        /* f32 tanh: abs 2e-6 + rel 2e-3 */
    DT_TOL_F64,         /* f64 math: abs 1e-14 + rel 1e-13 */
    DT_TOL_RCP,         /* rcp, fast_div (rcp.approx.ftz): abs 1.2e-38 + rel 2.4e-7 (2 ulp) */
} dt_tol;

/* The looser of two classes (a slot written by several functions). */
static inline uint8_t dt_tol_looser(uint8_t a, uint8_t b)
{
    static const uint8_t rank[] = {[DT_TOL_EXACT] = 0, [DT_TOL_RCP] = 1, [DT_TOL_F64] = 1, [DT_TOL_F32] = 2,
                                   [DT_TOL_TANH] = 3};
    return rank[a] >= rank[b] ? a : b;
}

typedef struct {
    const char *name;
    kf_type type;        /* a buffer type, or the scalar/vector type of a value */
    dt_role role;
    uint32_t count;      /* buffer elements */
    uint32_t slots;      /* OUT, APPROX: slots per thread; ATOMIC: own slots per thread */
    uint32_t shared;     /* ATOMIC: contended slots at the start (dt_contended_kind: one operation each) */
    uint64_t exch_bits;  /* ATOMIC: the one value atomic_exch writes to its contended slot */
    uint64_t cas_bits[2]; /* ATOMIC: the one (expected, new) pair of atomic_cas on its contended slot */
    uint8_t *tol;        /* APPROX: dt_tol of each slot */
    void *data;          /* initial contents, count elements */
    kf_value value;      /* DT_R_SCALAR */
} dt_param;

typedef struct {
    const char *name;
    kf_type type;
    int64_t decl;        /* the declared value */
    int64_t value;       /* the value in effect (-D when overridden) */
    bool overridden;
} dt_const;

typedef struct {
    const char *name;
    kf_type type;
    const dt_param *buf; /* a buffer parameter passed through */
    bool base;           /* the base slot of the fn's output buffer (a u32) */
    uint32_t shared_len; /* > 0: a `shared T[]` parameter (type: T) of at least this many written elements */
} dt_fparam;

enum { DT_MAX_FPARAMS = 8, DT_MAX_FNS = 6, DT_MAX_PARAMS = 16, DT_MAX_CONSTS = 6 };

typedef struct {
    const char *name;
    dt_fparam params[DT_MAX_FPARAMS];
    uint32_t nparams;
    kf_type ret;         /* KF_TK_VOID: no value */
    dt_node *body;
    uint8_t collective;  /* DT_C_* bits: warp operations, barriers inside */
    bool ready;          /* generated: callable from later fns and the kernel */
    const dt_param *out; /* the output buffer it stores to (with a base param), or NULL */
    const char *base;    /* name of the base parameter */
} dt_fn;

/* Collective operations allowed (dt_gen.collective, dt_fn.collective). */
enum { DT_C_WARP = 1, DT_C_BARRIER = 2 };

struct kf_dt_prog {
    kf_arena arena;
    uint64_t seed, index;
    dt_const consts[DT_MAX_CONSTS];
    uint32_t nconsts;
    dt_fn fns[DT_MAX_FNS];
    uint32_t nfns;
    dt_param params[DT_MAX_PARAMS];
    uint32_t nparams;
    const char *kname;
    uint32_t block[3];           /* in effect */
    uint32_t grid[3];
    uint64_t count;              /* with no grid expression: the element count of the launch */
    uint32_t shared_bytes;       /* static shared memory declared so far */
    uint32_t dyn_bytes;          /* the dynamic shared array's bytes in effect (0: none) */
    uint32_t dyn_launch;         /* the bytes the launch gives (overriding shared = EXPR), 0: none */
    dt_node *shared_expr;        /* @schedule's shared = EXPR (NULL: not written) */
    uint32_t min_blocks;         /* @schedule's min_blocks = N (0: not written) */
    bool min_blocks_zero;        /* min_blocks = 0 written (no bound, the same code as none) */
    dt_node *block_expr[3];      /* as written in @schedule (NULL: not written) */
    dt_node *grid_expr[3];
    uint32_t nthreads;           /* of the whole grid */
    dt_node *body;
    uint32_t next_id;
    uint8_t used_names[64];      /* pool names taken bare (gen_value.c) */
    uint32_t name_counter;
};

/* ---- values, types and data (gen_value.c) ---------------------------------- */
extern const kf_type dt_vector_types[];
extern const uint32_t dt_nvector_types;

kf_type dt_pick_scalar(dt_rng *r, bool with_bool);
kf_type dt_pick_type(dt_rng *r, bool with_bool);        /* a scalar or a vector */
bool dt_is_f3264(kf_type t);                            /* f32, f64 or a vector of them */
bool dt_is_warp_type(kf_type t);                        /* 32/64-bit lanes */
const char *dt_type_name(kf_type t);                    /* static text */
/* An edge-biased random value of scalar s as lane bits. */
uint64_t dt_value_bits(dt_rng *r, kf_scalar s, bool finite);
/* The .kf spelling of an untyped constant that fits s (arena text), and its
 * bits in s. */
const char *dt_literal(dt_rng *r, kf_arena *a, kf_scalar s, uint64_t *bits);
/* A random small exact-integer value of scalar s (for atomics), as bits. */
uint64_t dt_small_bits(dt_rng *r, kf_scalar s);
/* Fills n elements of type t at dst with dt_value_bits. */
void dt_fill(dt_rng *r, kf_type t, void *dst, uint32_t n, bool finite);
/* The smallest and largest value of integer scalar s. */
int64_t dt_int_min(kf_scalar s);
uint64_t dt_int_max(kf_scalar s);
/* A fresh identifier from the collision-prone pool (C, C++ and CUDA names,
 * CUDA math functions, PTX register-like names), unique in the program. */
const char *dt_fresh_name(dt_rng *r, kf_dt_prog *p);

/* ---- the generator (gen_expr.c, gen_stmt.c) --------------------------------- */
typedef enum {
    DT_K_LET, DT_K_VAR, DT_K_PARAM, DT_K_LOOP, DT_K_CONST, DT_K_ARRAY, DT_K_SHARED, DT_K_INBUF, DT_K_OUTBUF,
    DT_K_VIEW,   /* let v = buf as &[T]: an input buffer seen as another element type (len elements) */
} dt_symkind;

typedef struct {
    const char *name;
    kf_type type;        /* element type for arrays and buffers */
    uint8_t kind;        /* dt_symkind */
    uint8_t var;         /* variance (vars: the most they may take) */
    bool readable;       /* shared arrays: written and behind a barrier here */
    uint32_t len;        /* arrays: length; loop variables: exclusive upper bound (0: unknown) */
    const dt_param *buf; /* buffers */
    int64_t lo;          /* loop variables: the smallest value */
    uint32_t wbytes;     /* shared arrays: bytes from the start written by exchanges (readable through any view) */
    bool exchanged;      /* shared arrays: an exchange was generated (in any scope, never reset) */
} dt_sym;

enum { DT_MAX_SYMS = 256 };

typedef struct {
    kf_dt_prog *p;
    dt_rng *r;
    dt_sym syms[DT_MAX_SYMS];
    uint32_t nsyms;
    uint8_t ctrl;          /* variance of the control flow here */
    uint8_t exited;        /* variance of the early exits seen in this kernel or fn */
    uint8_t exit_var;      /* the innermost loop's: most variance a break/continue/return may have */
    uint8_t collective;    /* DT_C_* bits: which collective operations this kernel or fn may hold */
    int loops;             /* loops around this point (of this kernel or fn) */
    int unrolls;           /* @unroll loops around this point */
    dt_fn *fn;             /* the fn being generated, or NULL in the kernel */
    int budget;            /* statements left */
    bool in_exchange;      /* no shared reads inside an exchange's value */
    bool prewait;          /* before dep_wait(): no fn calls, no atomics (nothing that stores) */
    dt_rng *side;          /* the extensions' own stream (fence, dep_trigger, dep_wait), so
                              that the rest of a program is as it was without them */
    unsigned avoid;        /* KF_DT_AVOID_* bits */
} dt_gen;

dt_node *dt_new(dt_gen *g, dt_kind kind, kf_type t);
/* An expression of type t whose variance is at most maxvar; with untyped,
 * a bare literal is allowed (the context gives its type). */
dt_node *dt_expr(dt_gen *g, kf_type t, uint8_t maxvar, int depth, bool untyped);
/* A bool condition of at most maxvar. */
dt_node *dt_cond(dt_gen *g, uint8_t maxvar, int depth);
/* A copy of expression tree n (fresh ids), without n->next. */
dt_node *dt_copy(dt_gen *g, const dt_node *n);
/* A literal of type t (a constructor for vectors). */
dt_node *dt_lit(dt_gen *g, kf_type t, bool untyped);
/* An in-bounds index into a length-len array or buffer, from an integer
 * expression of at most maxvar. */
dt_node *dt_index(dt_gen *g, uint32_t len, uint8_t maxvar, int depth);
/* The value stored into an approximate output slot: a math function whose
 * argument is clamped into its accurate range; *tol receives its class. */
dt_node *dt_approx(dt_gen *g, kf_scalar s, uint8_t maxvar, int depth, uint8_t *tol);
/* A value of float type t that is a small integer (exact in any order of
 * summation: warp_sum, float atomics). */
dt_node *dt_exact_float(dt_gen *g, kf_type t, uint8_t maxvar, int depth);
/* i * k as a u32 that no shrinking edit touches: an element index that stays
 * a multiple of k (16-byte alignment of ldmatrix rows and cp_async chunks). */
dt_node *dt_scaled(dt_gen *g, dt_node *i, uint32_t k);
/* An mma or ldmatrix of a random shape where a full warp is in warp-uniform
 * control here (NULL where not), for a let of its own. */
dt_node *dt_tensor(dt_gen *g, int depth);
/* An in-range u32 index, ((e as u32) % len), e of at most maxvar. */
dt_node *dt_u32_index(dt_gen *g, uint32_t len, uint8_t maxvar, int depth);
dt_node *dt_slot(dt_gen *g, const dt_param *out, uint32_t slot);
/* buf[i] of a random input buffer (NULL: the program has none). */
dt_node *dt_input_load(dt_gen *g, int depth);
void dt_push(dt_gen *g, dt_sym s);
dt_sym *dt_find_param(dt_gen *g, const dt_param *p);
uint8_t dt_max(uint8_t a, uint8_t b);
/* The effective control variance (control and early exits). */
uint8_t dt_eff(const dt_gen *g);

dt_node *dt_fn_call(dt_gen *g, const dt_fn *f);
/* Whether every `shared T[]` parameter of f has an argument here. */
bool dt_fn_shared_args(const dt_gen *g, const dt_fn *f);
bool dt_fn_callable(dt_gen *g, const dt_fn *f);
const dt_param *dt_atomic_buf(dt_gen *g);
/* A value for an atomic on elements of type t (exact for floats). */
dt_node *dt_atomic_value(dt_gen *g, kf_type t, uint8_t mv, int d);
/* gen_expr.c's table of approximate functions: the clamp bounds of range
 * kind k, and whether the argument is clamp(abs(e), ...). */
const char *dt_approx_bound(int64_t k, bool f64, bool hi);
bool dt_approx_abs(int64_t k);

/* Builds program `index` of `seed` (gen_stmt.c). */
kf_dt_prog *dt_build(uint64_t seed, uint64_t index, unsigned avoid);

/* ---- printing (print.c) ------------------------------------------------------ */
typedef enum {
    DT_ED_NONE,
    DT_ED_DELETE,    /* a statement disappears */
    DT_ED_UNWRAP,    /* a compound statement becomes its body */
    DT_ED_ELSE,      /* an if becomes its else part */
    DT_ED_ZERO,      /* an expression becomes 0 (false, splat 0) of its type */
    DT_ED_ONE,       /* ... becomes 1 (true) */
    DT_ED_HOIST,     /* an expression becomes its operand a[arg] */
    DT_ED_DROPFN,    /* fn number arg is not printed */
    DT_ED_DROPCONST, /* constant number arg is not printed (nor its -D) */
} dt_edit_kind;

typedef struct {
    uint32_t id;
    uint8_t kind;    /* dt_edit_kind */
    uint8_t arg;
} dt_edit;

/* Appends the program as .kf text: every module-level name gets `tag`
 * appended (unique in a module of many programs), and edit e (may be NULL)
 * is applied in the text. */
void dt_print(kf_buf *b, const kf_dt_prog *p, const char *tag, const dt_edit *e);
/* "NAME<tag>=VALUE" for each overridden constant (edit e applied), appended to defs. */
uint32_t dt_print_defines(const kf_dt_prog *p, const char *tag, const dt_edit *e, kf_arena *a, kf_define *defs,
                          uint32_t max);
/* The kernel's name with tag. */
const char *dt_kernel_name(const kf_dt_prog *p, const char *tag, char *buf, size_t len);

/* ---- shrinking (shrink.c) ------------------------------------------------------ */
/* The single edits of p that make it smaller, most reducing first. */
size_t dt_edits(const kf_dt_prog *p, dt_edit *out, size_t max);
/* Makes edit e part of p. */
void dt_apply(kf_dt_prog *p, const dt_edit *e);
/* Counts statements and expression nodes (the size a shrink reports). */
uint32_t dt_size(const kf_dt_prog *p);

/* ---- running (exec.c) --------------------------------------------------------- */
/* One program's buffers after a run, in parameter order (NULL for scalars). */
typedef struct {
    void *buf[DT_MAX_PARAMS];
    size_t bytes[DT_MAX_PARAMS];
} dt_outputs;

void dt_outputs_free(dt_outputs *o);

/* A first difference between two runs, described. */
typedef struct {
    char text[512];
} dt_diff;

/* Compares b (a back end's) against a (the interpreter's): exact, or within
 * each approximate slot's bound (exact: every slot bit for bit, as cpu-O1
 * against cpu). NaN matches NaN (the bits of a computed NaN are not
 * specified). False with *d describing the first difference. */
bool dt_compare(const kf_dt_prog *p, const dt_outputs *a, const dt_outputs *b, bool exact, dt_diff *d);

/* One program in a batch: which program, which edit, and its tag. */
typedef struct {
    const kf_dt_prog *p;
    dt_edit edit;
    char tag[32];
} dt_item;

/* Compiles the items as one module at level; *m receives it or NULL (the
 * front end refused it: err holds the first diagnostic). first_line (may be
 * NULL) gets the line of the module at which each item's text begins. */
kf_status dt_compile(const dt_item *items, uint32_t n, kf_opt_level level, kf_module **m, uint32_t *first_line,
                     kf_error *err);
/* The .kf lines (of module m's text) that a failed build of back end be
 * names: every error of NVRTC's or the JIT's log mapped back through the
 * emitter's line map, or of ptxas's, each with where its text starts in
 * err->log. Returns how many (at most max). */
typedef struct {
    uint32_t line;
    uint32_t at;   /* offset in err->log */
} dt_err_line;
uint32_t dt_error_lines(const kf_module *m, kf_dt_backend be, uint32_t arch, const kf_error *err, dt_err_line *out,
                        uint32_t max);
/* The CPU-only checks: NVRTC (compute_<arch>) accepts m's CUDA-C; ptxas
 * (sm_<arch>) accepts its PTX. The error names the failing place. */
kf_status dt_check_nvrtc(const kf_module *m, uint32_t arch, kf_error *err);
kf_status dt_check_ptxas(const kf_module *m, uint32_t arch, kf_error *err);
/* Runs item i's kernel of module m on dev (its own fresh buffers). */
kf_status dt_run_one(kf_device *dev, kf_pipeline *pipe, const kf_dt_prog *p, dt_outputs *out, kf_error *err);

#endif
