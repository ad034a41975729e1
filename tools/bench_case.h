/* Bench files (kernels/bench/<name>.bench): the shapes, byte counts and
 * targets `kforge bench` measures, kept beside the kernels in the style of
 * the golden .case files (golden_case.h): one directive per line, fields
 * split by blanks, '#' starts a comment. A file holds one or more benches:
 *
 *   bench    NAME               starts a bench (letters, digits, _ . - ^;
 *                               unique across the files read together)
 *   define   NAME=VALUE...      -D overrides: before the bench's first
 *                               `kernel` line for every step, after it for
 *                               that step only
 *   set      NAME=SPEC...       bench-wide arguments, as `kforge run` takes
 *                               them: every step whose kernel has a
 *                               parameter NAME binds it; a buffer is made
 *                               once and shared by those steps
 *   kernel   FILE KERNEL        a step: the .kf file (relative to the bench
 *                               file) and its kernel. Several steps are a
 *                               sequence, launched back to back and timed
 *                               as one region (sdpa split + combine)
 *   arg      NAME=SPEC...       the step's own arguments (as `kforge run`)
 *   count    N                  the step's element count (no grid in its schedule)
 *   grid     X[,Y,Z]            the step's launch overrides, as
 *   block    X[,Y,Z]              `kforge run --grid/--block/--shared`
 *   shared   BYTES
 *   params   LIST               a raw step's parameters (below)
 *   bytes    EXPR               bytes one pass must move (default: every
 *                               distinct buffer once, twice when a step
 *                               writes it), over the integer scalar
 *                               arguments, as a .case `size` expression
 *   flops    EXPR               operations of one pass: also report TFLOP/s
 *   target   RATIO              the pass reaches RATIO x the copy bandwidth
 *                               measured in the same run (default: report)
 *   startup  RATIO              also time the cold build (no caches) and the
 *                               warm start (disk cache); warm/cold <= RATIO
 *   variant  WORDS...           a variant for sweeps (`kforge bench
 *                               --variants`): -D NAME=VALUE (or -DNAME=VALUE)
 *                               for every step and NAME=SPEC replacing a set
 *                               or arg of that name, as on the command line
 *
 * A raw step (`kernel FILE.cu ENTRY` or `kernel FILE.ptx ENTRY`, the
 * seed's raw paths, as in a golden .case) takes its parameters from a
 * `params LIST` line (.kf syntax) or the file's `// kforge: params LIST`
 * line, needs a `block` line, and launches `grid` blocks (default
 * cdiv(count, block.x)); -D does not apply to it. Raw CUDA-C runs on the
 * cuda path only, raw PTX on the ptx path only: a bench with such a step
 * is reported skipped, with that reason, on the other path.
 *
 * Every bench has at least one `kernel` line; one `bytes`, `flops`,
 * `target` and `startup` at most. Names, kernels and arguments are checked
 * when the bench is prepared (compiled and bound), before any device. */
#ifndef KF_BENCH_CASE_H
#define KF_BENCH_CASE_H

#include "cmd_common.h"

typedef KF_VEC(kf_cli_binding) kf_bench_binds;

/* A variant: -D overrides for every step and argument replacements. */
typedef struct {
    const char *label;          /* the words as given; "default" for none */
    kf_cli_defines defines;
    kf_bench_binds binds;
} kf_bench_variant;

typedef struct {
    const char *file;           /* resolved .kf path */
    const char *kernel;
    unsigned line;              /* of its `kernel` line */
    kf_cli_defines defines;     /* this step's own */
    kf_bench_binds args;
    uint64_t count;
    kf_launch launch;           /* grid, block, dyn_shared overrides (zeros: the schedule's) */
    const char *params;         /* a raw step's `params` list, or NULL */
} kf_bench_step;

typedef struct {
    const char *name;
    const char *path;           /* the bench file */
    const char *dir;            /* its directory (base of @file.npy arguments) */
    unsigned line;              /* of its `bench` line */
    kf_cli_defines defines;     /* every step */
    kf_bench_binds sets;
    KF_VEC(kf_bench_step) steps;
    const char *bytes, *flops;  /* expressions, or NULL */
    double target;              /* x copy; 0: report only */
    double startup;             /* warm/cold at most; 0: not measured */
    KF_VEC(kf_bench_variant) variants;
} kf_bench;

typedef struct {
    kf_arena arena;             /* owns every string */
    KF_VEC(kf_bench) benches;
} kf_bench_set;

/* Most bytes of a bench file. */
#define KF_BENCH_FILE_MAX (1u << 20)

/* Reads the bench file at path and appends its benches to set (initialise
 * set with memset 0 once). Errors are KF_ERR_IO (unreadable) or
 * KF_ERR_USAGE naming path:line and what was expected; a bench name seen
 * before in set is one too. Free with kf_bench_set_free either way. */
kf_status kf_bench_file_load(kf_bench_set *set, const char *path, kf_error *err);
void kf_bench_set_free(kf_bench_set *set);

/* Parses a variant's words (as a `variant` line or `kforge bench --variant`
 * gives them) into v, strings in arena. KF_ERR_USAGE says which word is
 * neither -D NAME=VALUE nor NAME=SPEC. */
kf_status kf_bench_variant_parse(kf_arena *arena, const char *text, kf_bench_variant *v, kf_error *err);
void kf_bench_variant_free(kf_bench_variant *v);

#endif
