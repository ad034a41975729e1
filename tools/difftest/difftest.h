/* kforge-difftest: differential testing of the three back ends (cpu, the
 * reference interpreter; cuda, CUDA-C through NVRTC; ptx, kforge's PTX
 * through the driver JIT) on random programs, in the manner of Csmith and
 * YARPGen. The parts, one file each:
 *
 *   gen_value.c  random numbers, types, edge values, literals, input data
 *   gen_expr.c   typed expressions, free of undefined behaviour by construction
 *   gen_stmt.c   statements, fns and the kernel of one program (the design
 *                of the generator is described at the top of that file)
 *   print.c      a program as .kf text, with one shrinking edit applied or not
 *   exec.c       a batch of programs as one module: run on each back end,
 *                compare with the interpreter (exact, or within the documented
 *                bound of an approximate function), or (--no-gpu) check that
 *                NVRTC and ptxas accept every program
 *   shrink.c     delta debugging of a failing program over its statements and
 *                expressions, each step re-checked
 *   driver.c     the worker processes, the per-backend counts, saved cases
 *
 * This header is what main.c and the tests use. */
#ifndef KF_DIFFTEST_H
#define KF_DIFFTEST_H

#include "../../ir/module.h"

/* What a back end can report for one program. */
#define KF_DT_STATUSES(X)                                                      \
    X(KF_DT_OK, "ok")                                                          \
    X(KF_DT_MISMATCH, "mismatch")         /* outputs differ from the cpu's */   \
    X(KF_DT_COMPILE, "compile failure")   /* front end, NVRTC, ptxas or JIT refused it */ \
    X(KF_DT_FAULT, "fault")               /* interpreter report or launch error */ \
    X(KF_DT_HANG, "hang")                 /* no answer within the time limit */

typedef enum {
#define X(e, s) e,
    KF_DT_STATUSES(X)
#undef X
    KF_DT_NSTATUS
} kf_dt_status;

extern const char *const kf_dt_status_names[KF_DT_NSTATUS];

/* The back ends a run compares, and the CPU-only checks of --no-gpu. */
#define KF_DT_BACKENDS(X)                                  \
    X(KF_DT_CPU, "cpu")           /* the reference: the interpreter at -O0 */ \
    X(KF_DT_CPUO1, "cpu-O1")      /* the interpreter on the optimised module: bit-exact */ \
    X(KF_DT_CUDA, "cuda")                                  \
    X(KF_DT_PTX, "ptx")                                    \
    X(KF_DT_NVRTC, "nvrtc")       /* --no-gpu: NVRTC accepts the CUDA-C, ptxas its PTX */ \
    X(KF_DT_PTXAS80, "ptxas-sm80") /* --no-gpu: ptxas accepts the PTX */    \
    X(KF_DT_PTXAS90, "ptxas-sm90")

typedef enum {
#define X(e, s) e,
    KF_DT_BACKENDS(X)
#undef X
    KF_DT_NBACKEND
} kf_dt_backend;

extern const char *const kf_dt_backend_names[KF_DT_NBACKEND];

/* Known bugs the generator can steer around (--avoid NAME), so that a run
 * can look for other bugs while a fix is under way; each names its issue.
 * The six below are fixed on main (issue 7); they stay as switches that
 * tell a regression of one of them from a new bug. */
#define KF_DT_AVOIDS(X)                                                                                    \
    X(KF_DT_AVOID_NAN_TO_INT, "nan-to-int", "issue 7 bug 1: NaN converted to an integer is not 0 (cuda, ptx)")   \
    X(KF_DT_AVOID_FIRST_EXIT, "first-exit-loop",                                                          \
      "issue 7 bug 2: a loop whose body always leaves in its first iteration loses its variable (cuda)")   \
    X(KF_DT_AVOID_CONST_BITCAST, "const-bitcast", "issue 7 bug 3: constant bitcasts fold wrongly (cuda)")      \
    X(KF_DT_AVOID_NARROW_WIDEN, "narrow-widen",                                                           \
      "issue 7 bug 4: 8/16-bit arithmetic does not wrap before a widening conversion (cuda, ptx)")        \
    X(KF_DT_AVOID_BITCAST_SIGN, "bitcast-sign", "issue 7 bug 5: a bitcast to i8 is not sign-extended (ptx)") \
    X(KF_DT_AVOID_HALF_BF16, "half-bf16", "issue 7 bug 6: f16 <-> bf16, then to an integer, is wrong (ptx)")

enum {
#define X(e, name, why) e##_BIT,
    KF_DT_AVOIDS(X)
#undef X
    KF_DT_NAVOID
};
enum {
#define X(e, name, why) e = 1u << e##_BIT,
    KF_DT_AVOIDS(X)
#undef X
};
extern const char *const kf_dt_avoid_names[KF_DT_NAVOID];
extern const char *const kf_dt_avoid_why[KF_DT_NAVOID];

typedef struct {
    uint64_t seed;
    uint64_t first;          /* first program index */
    uint64_t count;          /* programs */
    unsigned backends;       /* bit per kf_dt_backend */
    unsigned jobs;           /* worker processes */
    unsigned batch;          /* programs per module */
    const char *save_dir;    /* NULL: do not save failures */
    bool shrink;             /* shrink failures before saving (default on) */
    unsigned timeout_s;      /* per batch (its worker is killed after it); 0: default */
    unsigned launch_timeout_s; /* per GPU launch; 0: default (20 s) */
    unsigned shrink_s;       /* time for shrinking one failure; 0: default (180 s) */
    unsigned max_saves;      /* failures shrunk and saved at most; 0: default (20) */
    unsigned avoid;          /* KF_DT_AVOID_* bits */
    unsigned gpu_o0_every;   /* every Nth batch builds the GPU paths (and NVRTC, ptxas) at -O0, the rest at the
                                default level; 0: never (kf_dt_gpu_level) */
} kf_dt_options;

/* The level program k is built at for cuda, ptx, nvrtc and ptxas: -O0 in
 * every gpu_o0_every-th batch of opts->batch programs (counted from
 * opts->first), so emitter bugs that constant folding hides stay visible;
 * the default (optimised) level otherwise. The cpu reference is always -O0,
 * cpu-O1 always the default. */
kf_opt_level kf_dt_gpu_level(const kf_dt_options *opts, uint64_t k);

/* Counts of one run, per back end and status. */
typedef struct {
    uint64_t n[KF_DT_NBACKEND][KF_DT_NSTATUS];
    uint64_t programs;       /* programs generated */
    uint64_t saved;          /* failure directories written */
    double seconds;          /* running the programs */
    double shrink_seconds;   /* shrinking and saving the failures */
} kf_dt_summary;

/* Runs opts->count programs from opts->first with opts->jobs worker
 * processes and fills *sum. Failures are described on stderr (one line
 * each) and, with save_dir, shrunk and saved there. Errors of the run
 * itself (no GPU when cuda/ptx is asked, a directory that cannot be made)
 * are returned in err. */
kf_status kf_dt_run(const kf_dt_options *opts, kf_dt_summary *sum, kf_error *err);
/* One summary line: programs and, per back end, each nonzero status. */
void kf_dt_summary_line(const kf_dt_summary *sum, const kf_dt_options *opts, char *buf, size_t len);
/* The number of failures (anything but ok) in the summary. */
uint64_t kf_dt_failures(const kf_dt_summary *sum);

/* Saves program `index` of opts->seed under opts->save_dir as a replayable
 * case (prog.kf, case.case, input and expected .npy); dir gets its path. */
kf_status kf_dt_dump(const kf_dt_options *opts, uint64_t index, char *dir, size_t len, kf_error *err);

/* ---- single programs (the tests and --print use these) ------------------ */
typedef struct kf_dt_prog kf_dt_prog;

/* Program `index` of `seed`: always the same program for the same avoid
 * bits. NULL when out of memory. */
kf_dt_prog *kf_dt_generate(uint64_t seed, uint64_t index, unsigned avoid);
void kf_dt_prog_free(kf_dt_prog *p);
/* The program's .kf source, standalone (heap, free() it), and its -D
 * overrides as "NAME=VALUE" lines. */
char *kf_dt_source(const kf_dt_prog *p);
char *kf_dt_defines(const kf_dt_prog *p);
/* Runs the program on the interpreter; KF_OK when it compiles and runs
 * without a reported fault (the message in err otherwise). */
kf_status kf_dt_check_cpu(const kf_dt_prog *p, kf_error *err);

#endif
