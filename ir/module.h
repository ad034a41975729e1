/* The compiled module behind the public kf_module handle (include/kforge.h):
 * what kf_compile (runtime/api_compile.c) returns, with its arena, typed AST,
 * kernels in core IR and diagnostics. The runtime reads it (its cache keys
 * builds on file, source and options), the emitters and the CLI too. */
#ifndef KF_MODULE_H
#define KF_MODULE_H

#include "ir.h"

/* Shared memory per block (LANGUAGE.md section 8): static arrays may hold
 * at most 48 KiB, as in CUDA; static and dynamic together at most the
 * device's opt-in limit, 227 KiB on sm_90, which the CPU interpreter
 * enforces too. Every shared array starts on a 16-byte boundary. */
#define KF_SHARED_STATIC_LIMIT (48u * 1024u)
#define KF_SHARED_LIMIT 232448u
#define KF_SHARED_ALIGN 16u

struct kf_module {
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
    const char *rendered;      /* the diagnostics rendered (kf_module_diagnostics), arena */
};

/* Numbers given to kforge outside .kf source (scalar arguments, -D values,
 * generator sizes and seeds, --count, case files) follow the language's
 * literal syntax: integers decimal, 0x hex or 0b binary with `_` between
 * digits, and a leading zero (`010`) is an error, never octal. */
#define KF_NUMBER_SYNTAX "decimal, 0x hex or 0b binary; a leading zero as in 010 is not allowed"

/* Parses text[0..len) as a non-negative integer of that syntax that fits in
 * 64 bits; false when it is not one. */
bool kf_value_parse_u64(const char *text, size_t len, uint64_t *out);

/* True when k's grid or `shared = EXPR` reads scalar parameter `index`, so
 * that a new value of it may change the launch shape (a re-targeted plan's
 * grid is evaluated again then; kf_schedule_grid and kf_schedule_shared
 * allocate nothing unless they fail, so this is the hot path's cost). */
bool kf_schedule_uses_param(const kf_ir_kernel *k, uint32_t index);

/* KF_ERR_USAGE naming `call` unless k is one of m's kernels (compared as
 * integers: k may point into another module's array). */
static inline kf_status kf_module_check_kernel(const kf_module *m, const kf_ir_kernel *k, const char *call,
                                               kf_error *err)
{
    uintptr_t ka = (uintptr_t)k, k0 = (uintptr_t)m->kernels;
    if (ka >= k0 && ka < k0 + (uintptr_t)m->nkernels * sizeof *k) return KF_OK;
    return kf_error_set(err, KF_ERR_USAGE, "%s: kernel '%s' is not one of the given module's (take it with "
                        "kf_module_kernel from the same module)", call, k->name ? k->name : "?");
}

#endif
