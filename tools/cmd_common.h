/* Helpers shared by the kforge subcommands (tools/cmd_*.c): compiling a
 * file with -D overrides and printing its diagnostics, parsing the
 * NAME=VALUE / NAME=@file.npy / NAME=zeros|rand|iota(...) bindings of
 * `kforge run` and of golden cases into host-side inputs, and moving those
 * inputs onto a device. Only the CLI prints; these helpers print only
 * through kf_cli_print_* so that the format is the same everywhere. */
#ifndef KF_CMD_COMMON_H
#define KF_CMD_COMMON_H

#include <stdio.h>

#include "../runtime/device.h"
#include "cli.h"
#include "fill.h"

/* -D NAME=VALUE list (the strings point into argv or a case file). */
typedef KF_VEC(kf_define) kf_cli_defines;

/* Adds "NAME=VALUE" to defs; false (and a message in err) when malformed. */
bool kf_cli_define_add(kf_cli_defines *defs, char *text, kf_error *err);

/* Most bytes of a .kf source file. */
#define KF_SOURCE_MAX (UINT64_C(64) << 20)

/* Reads and compiles path ("-": standard input, named <stdin>) for
 * subcommand cmd at optimisation level opt (-O0 / -O1). On source errors prints the
 * rendered diagnostics to stderr and returns KF_EXIT_FAIL; an unreadable
 * file, or -D overrides that are the only errors (no such constant, a bad
 * value), are KF_EXIT_USAGE. *out is set only on success (kf_module_free). */
int kf_cli_compile(const char *cmd, const char *path, const kf_cli_defines *defs, kf_opt_level opt, kf_module **out);

/* Reads -O0 / -O1 into *opt; false when s is neither. */
bool kf_cli_opt_level(const char *s, kf_opt_level *opt);

/* Renders d (diagnostics about m's source) to stderr with source excerpts. */
void kf_cli_print_diags(const kf_diags *d, const kf_module *m);

/* Picks the kernel named `name` (or the only one). Prints a message listing
 * the module's kernels and returns NULL when that is not possible. */
const kf_ir_kernel *kf_cli_pick_kernel(const kf_module *m, const char *name, const char *cmd);

/* Prints `file:line:col: error: msg` with the source excerpt when the
 * error has a location in m's source, else `kforge CMD: error: msg`. */
void kf_cli_print_error(const char *cmd, const kf_module *m, const kf_error *err);

/* Prints the pipeline's cache warning (a corrupt disk entry that was
 * rebuilt), if any, as "kforge CMD: warning: ..." on stderr. */
void kf_cli_print_warning(const char *cmd, const kf_pipeline *p);

/* Maps a library status to an exit code (USAGE 2, SOURCE 1, others 3). */
int kf_cli_exit_for(kf_status st);

/* One NAME=SPEC binding. */
typedef struct {
    const char *name;
    const char *spec;
} kf_cli_binding;

/* Index of k's parameter `name`, or -1. */
int kf_cli_find_param(const kf_ir_kernel *k, const char *name);

/* Host-side inputs for every parameter of a kernel, in binding order. */
typedef struct {
    uint32_t n;
    kf_value *values;    /* scalars/vectors (buffers: type only) */
    void **host;         /* buffers: initial contents (heap), else NULL */
    size_t *elems;       /* buffers: element count */
    kf_fill_spec *gens;  /* deferred inputs only: a generator's spec (count > 0), host NULL */
} kf_cli_inputs;

/* Builds the inputs of k from bindings: every parameter must be bound
 * exactly once; @paths are relative to base_dir (NULL: as given). Errors
 * (KF_ERR_USAGE / KF_ERR_IO) name the parameter and what was expected. */
kf_status kf_cli_inputs_make(const kf_ir_kernel *k, const kf_cli_binding *b, size_t nb,
                             const char *base_dir, kf_cli_inputs *in, kf_error *err);
/* The same, but buffers given by a generator (zeros, rand, iota) are not
 * made on the host: their spec is kept in in->gens[i] and they are made on
 * the device by kf_cli_devargs_make / kf_cli_buffer_make (kforge bench:
 * inputs of hundreds of MB). */
kf_status kf_cli_inputs_make_deferred(const kf_ir_kernel *k, const kf_cli_binding *b, size_t nb,
                                      const char *base_dir, kf_cli_inputs *in, kf_error *err);
void kf_cli_inputs_free(kf_cli_inputs *in);

/* The value of k's integer scalar parameter `name` (len bytes) as bound in
 * in: 1 and *value, 0 when k has no such integer scalar, -1 (err set)
 * when it is negative. */
int kf_cli_scalar_u64(const kf_ir_kernel *k, const kf_cli_inputs *in, const char *name, size_t len, uint64_t *value,
                      kf_error *err);

/* The element count a launch of k runs over: 0 when its schedule has a
 * grid; else `given` when not 0, else the length of the first buffer
 * parameter. No buffer, or an empty one, is KF_ERR_USAGE naming the buffer
 * and `how` the count is given ("--count N"). */
kf_status kf_cli_launch_count(const kf_ir_kernel *k, const kf_cli_inputs *in, uint64_t given, const char *how,
                              uint64_t *count, kf_error *err);

/* Device-side arguments made from inputs: buffers created and uploaded. */
typedef struct {
    uint32_t n;
    kf_arg *args;
} kf_cli_devargs;

kf_status kf_cli_devargs_make(kf_device *dev, const kf_ir_kernel *k, const kf_cli_inputs *in,
                              kf_cli_devargs *out, kf_error *err);
/* Bytes of rand() data a deferred input generates on the host; the rest
 * of the buffer repeats it (device copies). */
#define KF_CLI_TILE_BYTES ((size_t)8 << 20)

/* A buffer of `elems` elements of elem on dev holding `host` (elems
 * elements), or, with host NULL, what gen says: zeros (or no gen) as
 * created; iota made on the host and uploaded; rand its first
 * KF_CLI_TILE_BYTES exactly as kf_fill makes them, then that tile repeated
 * by device-to-device copies (a benchmark's input, not run's stream). */
kf_status kf_cli_buffer_make(kf_device *dev, kf_type elem, size_t elems, const void *host, const kf_fill_spec *gen,
                             kf_buffer **out, kf_error *err);
/* Downloads buffer parameter i into a new heap block of its full size. */
kf_status kf_cli_devargs_read(const kf_cli_devargs *a, uint32_t i, void **data, size_t *bytes, kf_error *err);
void kf_cli_devargs_free(kf_cli_devargs *a);

/* Parses "X[,Y[,Z]]" (positive u32, numbers as KF_NUMBER_SYNTAX; missing
 * ones 1), the form of --grid and --block. */
bool kf_cli_dims_parse(const char *s, uint32_t out[3]);

/* Splits "NAME=SPEC" in place; false when there is no name or no spec. */
bool kf_cli_binding_split(char *s, kf_cli_binding *b);

/* The arguments every command that runs a kernel takes (run, bench); the
 * FILE and the backend are each command's own. */
typedef struct {
    const char *kernel;                 /* -k KERNEL */
    kf_cli_defines defs;                /* -D NAME=VALUE */
    kf_opt_level opt;                   /* -O0 / -O1 */
    KF_VEC(kf_cli_binding) binds;       /* NAME=SPEC (the strings point into argv) */
    uint64_t count;                     /* --count N; 0: the default */
    kf_launch launch;                   /* --grid X,Y,Z --block X,Y,Z --shared BYTES; zeros: the schedule's */
} kf_cli_kernel_args;

/* If argv[*i] is one of those arguments (-k, -D, --count, --grid, --block,
 * --shared with their value, -O0 / -O1, or a NAME=SPEC word), consumes it into a and
 * returns 1; returns 0 when it is none of them (another option or a word
 * without '='), -1 after printing a usage error for cmd with usage. */
int kf_cli_kernel_arg(int argc, char **argv, int *i, kf_cli_kernel_args *a, const char *cmd, const char *usage);
/* Checks a against the kernel chosen: --count with a grid (from the
 * schedule or --grid) would have no effect. Prints the usage error and
 * returns its status, else KF_EXIT_OK. */
int kf_cli_kernel_args_check(const kf_cli_kernel_args *a, const kf_ir_kernel *k, const char *cmd, const char *usage);
void kf_cli_kernel_args_free(kf_cli_kernel_args *a);

/* A raw kernel file by its name: FILE.cu is CUDA-C, FILE.ptx is PTX;
 * false for anything else (a .kf source). */
bool kf_cli_raw_kind(const char *path, kf_src_kind *kind);

/* A raw kernel file read and described for the binding code (run, test). */
typedef struct {
    kf_src_kind kind;
    char *source;          /* the file's text (heap) */
    kf_param *params;      /* kf_params_parse's block */
    kf_ir_kernel k;        /* a stand-in kernel: the entry's name, the parameters, the block */
} kf_cli_raw;
/* Reads path ("-": standard input, then CUDA-C) and its parameter list: `list`, else
 * the file's `// kforge: params LIST` line; no list, or a bad one, is
 * KF_ERR_USAGE saying what to give. The stand-in kernel has no grid
 * expression (a launch gives a grid or a count). */
kf_status kf_cli_raw_load(const char *path, const char *entry, const char *list, const uint32_t block[3],
                          kf_cli_raw *out, kf_error *err);
/* Builds and loads r on dev through the process and disk caches. */
kf_status kf_cli_raw_pipeline(kf_device *dev, const kf_cli_raw *r, kf_pipeline **out, kf_error *err);
void kf_cli_raw_free(kf_cli_raw *r);
/* The pipeline of a tool's kernel: raw r when r is not NULL, else kernel k
 * of module m (kf_pipeline_create). */
kf_status kf_cli_pipeline(kf_device *dev, const kf_module *m, const kf_ir_kernel *k, const kf_cli_raw *r,
                          kf_pipeline **out, kf_error *err);
/* Why raw kernel r does not run on backend b, or NULL when it does (and
 * for r NULL, a .kf kernel): raw CUDA-C goes through NVRTC (cuda), raw PTX
 * through the driver (ptx). */
const char *kf_cli_raw_not_applicable(const kf_cli_raw *r, kf_backend b);

/* Backend names ("cpu", "cuda", "ptx"). */
const char *kf_cli_backend_name(kf_backend b);
bool kf_cli_backend_parse(const char *s, kf_backend *out);



/* Option scanning. If argv[*i] is `opt` with a value ("--arch sm_90",
 * "--arch=sm_90", "-D N=V", "-DN=V"), sets *val, advances *i past it and
 * returns 1; returns 0 when argv[*i] is not `opt`; -1 when the value is
 * missing (after printing a usage error for cmd). */
int kf_cli_opt(int argc, char **argv, int *i, const char *opt, char **val, const char *cmd);

/* Handles a subcommand's options that take a value: when argv[*i] is one
 * of opts[0..nopts) (as kf_cli_opt reads them), calls fn(args, opt, value),
 * which returns an exit status. Returns 1 when argv[*i] was such an option
 * and fn accepted it, 0 when it is none of them, -1 after a usage error
 * (already printed). */
typedef int (*kf_cli_value_fn)(void *args, const char *opt, char *val);
int kf_cli_value_opts(int argc, char **argv, int *i, const char *const *opts, size_t nopts, const char *cmd,
                      kf_cli_value_fn fn, void *args);

/* ---- standard input and output, the end of options, suggestions ---- */

/* Reads the file at path, or all of standard input when path is "-" (at
 * most max bytes either way; NUL-terminated, free() it). */
kf_status kf_cli_read(const char *path, uint64_t max, char **data, size_t *len, kf_error *err);
/* How an input is named in messages: "<stdin>" for "-". */
const char *kf_cli_input_name(const char *path);
/* Writes len bytes to path as one step (kf_write_file), or to standard
 * output when path is "-" (whose write errors kforge's main reports). */
kf_status kf_cli_write(const char *path, const void *data, size_t len, kf_error *err);

/* `--` ends the options: when argv[*i] is the first "--", consumes it and
 * returns true; from then on kf_cli_opt matches nothing and
 * kf_cli_is_option is false, so every word is a FILE or NAME=VALUE. */
bool kf_cli_end_of_options(char **argv, int *i);
/* s is an option word ("-x", "--long"; not "-", standard input) and the
 * options have not ended. */
bool kf_cli_is_option(const char *s);

/* The candidate closest to name (a typo: at most a third of its letters
 * edited, at least one), or NULL. For "did you mean" hints. */
const char *kf_cli_suggest(const char *name, const char *const *cands, size_t n);

/* True (after printing "usage: USAGE" to stdout) when argv holds -h or
 * --help before any "--". */
bool kf_cli_help(int argc, char **argv, const char *usage);

/* Prints "kforge CMD: error: <formatted>" and the command's usage line to
 * stderr; returns KF_EXIT_USAGE. */
int kf_cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
