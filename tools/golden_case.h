/* Golden-output cases (kernels/cases/<name>.case): the declarative format
 * read by `kforge test` and by the independent reference generator
 * (tools/reference/). One directive per line, '#' starts a comment:
 *
 *   kernel    FILE KERNEL        the .kf file (relative to the case file) and kernel
 *   define    NAME=VALUE         a -D override (repeatable)
 *   arg       NAME=SPEC          one per parameter, exactly as `kforge run` takes it:
 *                                VALUE, @file.npy, zeros(N), rand(N,SEED), iota(N);
 *                                a generator's N declares the buffer's size
 *   count     N                  element count for schedules without a grid
 *                                (with a grid the case fails: it would be ignored)
 *   shared    BYTES              dynamic shared memory of the launch, as
 *                                `kforge run --shared` (default: the schedule's)
 *   backends  cpu [cuda] [ptx]   restrict the backends (default: all)
 *   reference NAME               the reference function that computes the outputs
 *   expect    NAME FILE [abs=A] [rel=R] [ulp=U]
 *                                buffer NAME after the run must equal FILE (.npy,
 *                                relative to the case file). With no tolerance the
 *                                comparison is exact (floats: equal values, NaN
 *                                matches NaN); otherwise an element passes when
 *                                |got - want| <= A + R*|want| or when it is within
 *                                U units in the last place of the output type.
 *   error     TEXT               the run must fail with an error containing TEXT
 *                                (for interpreter checks; use with `backends cpu`)
 *   size      NAME = EXPR        buffer NAME must hold at least EXPR elements (of
 *                                its parameter's type): the number the kernel
 *                                indexes, over the integer scalar arguments with
 *                                + - * / % ( ) and cdiv(a,b) min(a,b) max(a,b);
 *                                checked before launch on every backend
 *
 * A raw kernel (`kernel FILE.cu ENTRY` or `kernel FILE.ptx ENTRY`, the
 * seed's raw paths) runs on one GPU path: CUDA-C through NVRTC on `cuda`,
 * PTX through the driver on `ptx`; the other backends report the case not
 * applicable. It takes three more directives:
 *   params    LIST               its parameters in .kf syntax (default: the file's
 *                                `// kforge: params LIST` line)
 *   block     X[,Y,Z]            the block (required)
 *   grid      X[,Y,Z]            the grid (default: cdiv(count, block.x)) */
#ifndef KF_GOLDEN_CASE_H
#define KF_GOLDEN_CASE_H

#include "../ir/module.h"

typedef struct {
    const char *name, *file;   /* buffer parameter, expected .npy path (resolved) */
    double abs, rel, ulp;      /* all zero: exact */
    bool has_tol;
} kf_case_expect;

typedef struct {
    const char *name, *expr;   /* buffer parameter, element-count expression */
    unsigned line;             /* in the case file */
} kf_case_size;

typedef struct {
    kf_arena arena;            /* owns every string below */
    const char *path;          /* the .case file */
    const char *name;          /* basename without .case */
    const char *dir;           /* directory of the case file */
    const char *kf_file;       /* resolved .kf path */
    const char *kernel;
    const char *reference;
    KF_VEC(kf_define) defines;
    KF_VEC(const char *) arg_names;
    KF_VEC(const char *) arg_specs;
    KF_VEC(kf_case_expect) expects;
    KF_VEC(kf_case_size) sizes;
    const char *error_text;    /* NULL unless the case expects a failure */
    uint64_t count;
    uint32_t shared;           /* dynamic shared bytes; 0: the schedule's */
    const char *params;        /* raw kernels: the parameter list, or NULL */
    uint32_t grid[3], block[3];/* raw kernels (and .kf overrides): zeros when not given */
    unsigned backends;         /* bit per kf_backend value; 0 = all */
} kf_case;

/* Most bytes of a case file. */
#define KF_CASE_MAX (1u << 20)

/* Reads and parses a case file. Errors (KF_ERR_IO / KF_ERR_USAGE) give
 * path:line and what was expected: an unknown directive, a bad field, more
 * than 16 fields on a line, a second kernel/reference/count/backends/error
 * line. Free with kf_case_free either way. */
kf_status kf_case_load(const char *path, kf_case *c, kf_error *err);
void kf_case_free(kf_case *c);

/* Looks up the spec of argument `name` (NULL if absent). */
const char *kf_case_arg(const kf_case *c, const char *name);

/* Gives the value of the integer scalar argument `name` (len bytes, not
 * NUL-terminated) in *value; false with a message in err when there is none. */
typedef bool (*kf_case_size_lookup)(void *ctx, const char *name, size_t len, uint64_t *value, kf_error *err);

/* Evaluates a `size` expression (unsigned 64-bit; a negative, overflowing
 * or divide-by-zero intermediate is an error). With lookup NULL only the
 * syntax is checked (every name counts as 1). Errors are KF_ERR_USAGE and
 * say what was expected where. */
kf_status kf_case_size_eval(const char *expr, kf_case_size_lookup lookup, void *ctx, uint64_t *out, kf_error *err);

#endif
