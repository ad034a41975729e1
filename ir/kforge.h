/* The compiler driver's public API: source text in, checked and lowered
 * module out, with kernel reflection (parameters in binding order, schedule)
 * for the runtime. The passes run in the order listed in kf_compile():
 * parse (grammar/) -> sema (ir/sema.c) -> lower (ir/lower.c) -> opt (ir/opt.c). */
#ifndef KF_KFORGE_H
#define KF_KFORGE_H

#include "ir.h"

typedef struct {
    const char *name;
    const char *value;   /* source text of a constant expression, e.g. "128", "1e-6" */
} kf_define;

/* Shared memory per block (LANGUAGE.md section 8): static arrays may hold
 * at most 48 KiB, as in CUDA; static and dynamic together at most the
 * device's opt-in limit, 227 KiB on sm_90, which the CPU interpreter
 * enforces too. Every shared array starts on a 16-byte boundary. */
#define KF_SHARED_STATIC_LIMIT (48u * 1024u)
#define KF_SHARED_LIMIT 232448u
#define KF_SHARED_ALIGN 16u

/* How much kf_compile optimises the core IR (ir/opt.c). The zero value is
 * the default, so options left unset optimise. */
typedef enum {
    KF_OPT_DEFAULT = 0,   /* = KF_OPT_O1 */
    KF_OPT_O0,            /* the IR as lowered: the reference an optimiser bug is caught against */
    KF_OPT_O1,            /* kf_opt on every kernel */
} kf_opt_level;

typedef struct {
    const kf_define *defines;  /* -D NAME=VALUE overrides of module constants */
    uint32_t ndefines;
    kf_opt_level opt;
} kf_compile_opts;

/* A compiled module: owns its arena (AST, IR, strings) and diagnostics. */
typedef struct {
    kf_arena arena;
    const char *file;          /* display name used in locations */
    char *source;              /* copy of the source text (NUL-terminated) */
    size_t source_len;
    kf_node *ast;              /* typed AST (KF_N_MODULE) */
    kf_ir_kernel *kernels;     /* one per `kernel`, in source order */
    uint32_t nkernels;
    kf_diags diags;
    kf_compile_opts opts;      /* the options compiled with (defines copied into the arena):
                                  with file and source, all that decides the output */
} kf_module;

/* Compiles `source` (len bytes; need not be NUL-terminated). Always returns
 * a module (NULL only when out of memory); status is KF_ERR_SOURCE when
 * module->diags holds errors, in which case kernels may be absent. */
kf_status kf_compile(const char *file, const char *source, size_t len,
                     const kf_compile_opts *opts, kf_module **out);
void kf_module_free(kf_module *m);
/* The kernel named `name`, or the only kernel when name is NULL and there is
 * exactly one; NULL otherwise. */
const kf_ir_kernel *kf_module_kernel(const kf_module *m, const char *name);

/* ---- the passes (called by kf_compile; exposed for tests) --------------- */
typedef struct {
    kf_arena *arena;
    kf_diags *diags;
    const char *file;
    const char *src;
    size_t len;
} kf_pass_ctx;

/* Parses into an AST (KF_N_MODULE). Syntax errors go to diags; returns NULL
 * only if nothing could be built. */
kf_node *kf_parse(kf_pass_ctx *cx);
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
/* Lowers every kernel of a checked module to core IR. */
kf_status kf_lower(kf_pass_ctx *cx, kf_node *module, kf_ir_kernel **kernels, uint32_t *nkernels);
/* Optimises one linked kernel in place (constants folded, dead branches,
 * loops, copies and code removed, / % * by powers of two made shifts),
 * computing exactly what the kernel computed before: every fault the
 * interpreter reports stays, and nothing moves across a barrier, warp
 * operation, atomic or store. New arrays come from cx->arena; the kernel
 * is linked again. KF_ERR_NOMEM leaves it as it was. */
kf_status kf_opt(kf_pass_ctx *cx, kf_ir_kernel *k);

/* ---- runtime values and schedule evaluation ------------------------------ */
/* A scalar or vector argument value. Bits are held per lane in `lane`
 * (same encoding as kf_ir_ins.imm for the scalar type). */
typedef struct {
    kf_type type;
    uint64_t lane[16];
} kf_value;

/* Numbers given to kforge outside .kf source (scalar arguments, -D values,
 * generator sizes and seeds, --count, case files) follow the language's
 * literal syntax: integers decimal, 0x hex or 0b binary with `_` between
 * digits, and a leading zero (`010`) is an error, never octal. */
#define KF_NUMBER_SYNTAX "decimal, 0x hex or 0b binary; a leading zero as in 010 is not allowed"

/* Parses a scalar argument ("1024", "-3", "1e-6", "0x10", "true") for a
 * parameter of type t. Errors name the parameter. */
kf_status kf_value_parse(const char *text, kf_type t, const char *param, kf_value *out, kf_error *err);

/* Parses text[0..len) as a non-negative integer of that syntax that fits in
 * 64 bits; false when it is not one. */
bool kf_value_parse_u64(const char *text, size_t len, uint64_t *out);

/* Evaluates the kernel's grid for the given arguments (one per parameter in
 * binding order; buffer entries are ignored). With no grid expression the
 * grid is cdiv(count, block.x) and count must be > 0. */
kf_status kf_schedule_grid(const kf_ir_kernel *k, const kf_value *args, uint64_t count,
                           uint32_t grid[3], kf_error *err);
/* Evaluates the schedule's `shared = EXPR` (u32 bytes of dynamic shared
 * memory) for the given arguments, like the grid; 0 when there is none. */
kf_status kf_schedule_shared(const kf_ir_kernel *k, const kf_value *args, uint32_t *bytes, kf_error *err);
/* Both evaluate without allocating unless they fail (the runtime re-evaluates
 * a re-targeted plan's grid on its hot path). */

/* True when k's grid or `shared = EXPR` reads scalar parameter `index`, so
 * that a new value of it may change the launch shape. */
bool kf_schedule_uses_param(const kf_ir_kernel *k, uint32_t index);

#endif
