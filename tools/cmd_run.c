/* kforge run FILE: compile, bind NAME=VALUE / NAME=@in.npy /
 * NAME=zeros(N)|rand(N,SEED)|iota(N) arguments to the kernel's parameters,
 * dispatch once on the chosen backend (cpu by default) and write -o
 * NAME=out.npy files (NAME=- : standard output). Without -o, the first
 * elements of every writable buffer are printed. A kernel whose schedule has no grid runs over --count
 * elements (default: the length of its first buffer); --grid, --block and
 * --shared override the schedule's launch shape; -O0 runs the IR as lowered,
 * without the optimiser (the reference for its bugs). The arguments shared
 * with `kforge bench` are parsed by kf_cli_kernel_arg (cmd_common.c).
 *
 * A raw FILE.cu (CUDA-C, through NVRTC) or FILE.ptx (loaded by the driver)
 * runs the same way on a GPU: -k names the entry point, --params (or a
 * `// kforge: params ...` line in the file) its parameters in .kf syntax,
 * --block the block (required) and --grid the grid (else cdiv(count,
 * block.x) as for a .kf kernel without a grid). Both go through the
 * process and disk caches. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/numeric.h"
#include "cmd_common.h"
#include "npy.h"

static const char usage[] =
    "kforge run FILE [-k KERNEL] [--backend cpu|cuda|ptx] [-D NAME=VALUE]... [-O0|-O1] [--count N] [--time]\n"
    "           [--grid X[,Y,Z]] [--block X[,Y,Z]] [--shared BYTES]\n"
    "           [NAME=VALUE | NAME=@in.npy | NAME=zeros(N) | NAME=rand(N,SEED) | NAME=iota(N)]...\n"
    "           [-o NAME=out.npy]...\n"
    "       kforge run FILE.cu|FILE.ptx -k ENTRY [--params 'x: &[f16], y: &mut [f32], n: u32'] --block X[,Y,Z]\n"
    "           [--grid X[,Y,Z] | --count N] [--shared BYTES] [--backend cuda|ptx] [--time] ARGS... [-o NAME=out.npy]...";

typedef struct {
    const char *file;
    kf_backend backend;
    bool backend_given;
    const char *params;                 /* --params: a raw kernel's parameter list */
    bool time;
    kf_cli_kernel_args k;               /* -k, -D, -O0/-O1, --count, --grid, --block, --shared, NAME=SPEC */
    KF_VEC(kf_cli_binding) outs;
} run_args;

static int value_opt(void *args, const char *opt, char *val)
{
    run_args *a = args;
    kf_cli_binding b;
    if (!strcmp(opt, "--backend")) {
        if (!kf_cli_backend_parse(val, &a->backend))
            return kf_cli_usage_error("run", usage, "unknown backend '%s': expected cpu, cuda or ptx", val);
        a->backend_given = true;
    } else if (!strcmp(opt, "--params")) {
        a->params = val;
    } else {
        if (!kf_cli_binding_split(val, &b))
            return kf_cli_usage_error("run", usage, "bad output '%s': expected -o NAME=out.npy", val);
        if (!KF_VEC_PUSH(&a->outs, b)) return KF_EXIT_RUNTIME;
    }
    return KF_EXIT_OK;
}

static int parse_args(int argc, char **argv, run_args *a)
{
    static const char *const vopts[] = {"--backend", "--params", "-o"};
    for (int i = 0; i < argc;) {
        if (kf_cli_end_of_options(argv, &i)) continue;
        int matched = kf_cli_kernel_arg(argc, argv, &i, &a->k, "run", usage);
        if (!matched) matched = kf_cli_value_opts(argc, argv, &i, vopts, sizeof vopts / sizeof vopts[0], "run", value_opt, a);
        if (matched < 0) return KF_EXIT_USAGE;
        if (matched) continue;
        char *s = argv[i++];
        if (kf_cli_is_option(s) && !strcmp(s, "--time")) a->time = true;
        else if (kf_cli_is_option(s)) return kf_cli_usage_error("run", usage, "unknown option '%s'", s);
        else if (a->file) return kf_cli_usage_error("run", usage, "expected one FILE and NAME=VALUE arguments, got '%s'", s);
        else a->file = s;
    }
    if (!a->file) return kf_cli_usage_error("run", usage, "expected a .kf FILE (or a raw .cu or .ptx)");
    kf_src_kind raw;
    if (a->params && !kf_cli_raw_kind(a->file, &raw))
        return kf_cli_usage_error("run", usage, "--params gives a raw kernel's parameters; %s is a .kf file, which declares its own",
                                  a->file);
    return KF_EXIT_OK;
}

static void print_scalar(kf_scalar s, const unsigned char *p)
{
    uint64_t bits = 0;
    for (unsigned b = 0; b < kf_scalar_bytes[s]; b++) bits |= (uint64_t)p[b] << (8 * b);
    char c = kf_scalar_class[s];
    if (c == 'f') printf("%.9g", kf_bits_to_double(s, bits));
    else if (c == 'i') printf("%lld", (long long)kf_bits_to_i64(s, bits));
    else if (c == 'b') printf("%s", bits ? "true" : "false");
    else printf("%llu", (unsigned long long)bits);
}

static void print_buffer(const kf_ir_param *p, const void *data, size_t bytes)
{
    kf_scalar s = (kf_scalar)p->type.scalar;
    size_t n = bytes / kf_scalar_bytes[s];
    char t[48];
    kf_type_str(p->type, t, sizeof t);
    printf("%s: %s, %zu elements = [", p->name, t, n / p->type.lanes);
    for (size_t i = 0; i < n && i < 8; i++) {
        if (i) printf(", ");
        print_scalar(s, (const unsigned char *)data + i * kf_scalar_bytes[s]);
    }
    printf("%s]\n", n > 8 ? ", ..." : "");
}

/* The absolute path `path` names, through its directory when the file does
 * not exist yet; false when that directory does not exist either. */
static bool resolve_out(const char *path, char out[PATH_MAX])
{
    if (realpath(path, out)) return true;
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], rd[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path) snprintf(dir, sizeof dir, "/");
    return realpath(dir, rd) && snprintf(out, PATH_MAX, "%s/%s", rd, slash ? slash + 1 : path) < PATH_MAX;
}

static bool same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    return !strcmp(a, b) || (resolve_out(a, ra) && resolve_out(b, rb) && !strcmp(ra, rb));
}

/* Checks the -o names before anything runs: buffer parameters, and no file
 * named twice (it would keep only the last buffer written). */
static int check_outputs(const run_args *a, const kf_ir_kernel *k)
{
    for (size_t o = 0; o < a->outs.len; o++) {
        const kf_cli_binding *b = &a->outs.data[o];
        int i = kf_cli_find_param(k, b->name);
        if (i < 0 || k->params[i].type.kind != KF_TK_BUFFER)
            return kf_cli_usage_error("run", usage, "-o %s=%s: kernel '%s' has no buffer parameter '%s'", b->name,
                                      b->spec, k->name, b->name);
        for (size_t p = 0; p < o; p++)
            if (same_file(a->outs.data[p].spec, b->spec))
                return kf_cli_usage_error("run", usage,
                                          "-o %s=%s and -o %s=%s name the same file: it would keep only one of them; "
                                          "give each output its own file",
                                          a->outs.data[p].name, a->outs.data[p].spec, b->name, b->spec);
    }
    return KF_EXIT_OK;
}

/* An -o NAME=- sends that buffer's .npy to standard output: then no
 * buffer is summarised there. */
static bool to_stdout(const run_args *a)
{
    for (size_t o = 0; o < a->outs.len; o++)
        if (!strcmp(a->outs.data[o].spec, "-")) return true;
    return false;
}

/* One -o file (or standard output) written as one step. */
static int write_npy(const char *path, kf_scalar s, const void *data, size_t bytes)
{
    kf_error err = {0};
    kf_buf b = {0};
    kf_status st = kf_npy_encode(&b, s, data, bytes / kf_scalar_bytes[s], &err);
    if (st == KF_OK) st = kf_cli_write(path, b.data, b.len, &err);
    kf_buf_free(&b);
    if (st == KF_OK) return KF_EXIT_OK;
    kf_cli_print_error("run", NULL, &err);
    return KF_EXIT_RUNTIME;   /* the run happened; its output is lost */
}

static int report_outputs(const run_args *a, const kf_ir_kernel *k, const kf_cli_devargs *da)
{
    kf_error err = {0};
    for (uint32_t i = 0; i < k->nparams; i++) {
        const kf_ir_param *p = &k->params[i];
        bool asked = false;
        for (size_t o = 0; o < a->outs.len; o++) asked |= !strcmp(a->outs.data[o].name, p->name);
        if (p->type.kind != KF_TK_BUFFER || (!asked && !(p->type.flags & KF_TF_MUT))) continue;
        void *data;
        size_t bytes;
        if (kf_cli_devargs_read(da, i, &data, &bytes, &err) != KF_OK) {
            kf_cli_print_error("run", NULL, &err);
            return KF_EXIT_RUNTIME;
        }
        int rc = KF_EXIT_OK;
        for (size_t o = 0; o < a->outs.len && rc == KF_EXIT_OK; o++) {
            if (strcmp(a->outs.data[o].name, p->name)) continue;
            rc = write_npy(a->outs.data[o].spec, (kf_scalar)p->type.scalar, data, bytes);
        }
        if (!asked && !to_stdout(a)) print_buffer(p, data, bytes);
        free(data);
        if (rc != KF_EXIT_OK) return rc;
    }
    return KF_EXIT_OK;
}

/* Everything after the arguments are bound: device, pipeline (of kernel k
 * of m, or of the raw kernel r), dispatch, outputs. */
static int execute(const run_args *a, const kf_module *m, const kf_ir_kernel *k, const kf_cli_raw *r,
                   const kf_cli_inputs *in, uint64_t count)
{
    kf_error err = {0};
    kf_device *dev = NULL;
    kf_pipeline *pipe = NULL;
    kf_cli_devargs da = {0};
    kf_backend b = r && !a->backend_given ? KF_BACKEND_CUDA : a->backend;
    kf_status st = kf_device_open(b, 0, &dev, &err);
    if (st == KF_OK) st = kf_cli_pipeline(dev, m, k, r, &pipe, &err);
    if (st == KF_OK) kf_cli_print_warning("run", pipe);
    if (st == KF_OK) st = kf_cli_devargs_make(dev, k, in, &da, &err);
    float ms = 0;
    if (st == KF_OK) {
        kf_launch launch = a->k.launch;
        launch.count = count;
        st = kf_dispatch(pipe, da.args, da.n, &launch, a->time ? KF_DISPATCH_TIMED : KF_DISPATCH_SYNC, &ms, &err);
    }
    int rc;
    if (st != KF_OK) {
        kf_cli_print_error("run", m, &err);
        rc = kf_cli_exit_for(st);
    } else {
        const char *path = !r ? kf_cli_backend_name(b) : r->kind == KF_SRC_CUDA ? "raw CUDA-C" : "raw PTX";
        if (a->time) printf("time: %.4f ms (%s, %s)\n", ms, path, kf_device_name(dev));
        rc = report_outputs(a, k, &da);
    }
    kf_cli_devargs_free(&da);
    if (pipe) kf_pipeline_destroy(pipe);
    if (dev) kf_device_close(dev);
    kf_error_clear(&err);
    return rc;
}

/* ---- raw CUDA-C and PTX ------------------------------------------------------ */

/* Checks what a raw kernel needs from the command line; usage errors. */
static int raw_check(const run_args *a, kf_src_kind kind)
{
    const char *what = kind == KF_SRC_CUDA ? "raw CUDA-C" : "raw PTX";
    if (a->backend_given && a->backend == KF_BACKEND_CPU)
        return kf_cli_usage_error("run", usage, "--backend cpu: not applicable: %s is %s, which runs on a GPU only "
                                  "(--backend cuda or ptx)", a->file, what);
    if (!a->k.kernel) return kf_cli_usage_error("run", usage, "%s is %s: name its entry point with -k ENTRY", a->file, what);
    if (!a->k.launch.block[0])
        return kf_cli_usage_error("run", usage, "%s is %s: give its block with --block X[,Y,Z]", a->file, what);
    if (a->k.defs.len || a->k.opt != KF_OPT_DEFAULT)
        return kf_cli_usage_error("run", usage, "-D, -O0 and -O1 apply to .kf files; %s is %s", a->file, what);
    if (a->k.count && a->k.launch.grid[0])
        return kf_cli_usage_error("run", usage, "--count %llu has no effect: the grid comes from --grid",
                                  (unsigned long long)a->k.count);
    return KF_EXIT_OK;
}

/* Binds the arguments to the raw kernel k and finds the element count. */
static int raw_bind(const run_args *a, const kf_ir_kernel *k, kf_cli_inputs *in, uint64_t *count)
{
    kf_error err = {0};
    kf_status st = kf_cli_inputs_make(k, a->k.binds.data, a->k.binds.len, NULL, in, &err);
    if (st == KF_OK && !a->k.launch.grid[0]) st = kf_cli_launch_count(k, in, a->k.count, "--count N or --grid", count, &err);
    if (st == KF_OK) return KF_EXIT_OK;
    fprintf(stderr, "kforge run: error: %s\n", err.msg);
    return kf_cli_exit_for(st);
}

static int run_raw(const run_args *a, kf_src_kind kind)
{
    kf_cli_raw r = {0};
    kf_cli_inputs in = {0};
    uint64_t count = 0;
    int rc = raw_check(a, kind);
    if (rc == KF_EXIT_OK) {
        kf_error err = {0};
        kf_status st = kf_cli_raw_load(a->file, a->k.kernel, a->params, a->k.launch.block, &r, &err);
        if (st != KF_OK) rc = st == KF_ERR_USAGE ? kf_cli_usage_error("run", usage, "%s", err.msg) : kf_cli_exit_for(st);
        if (st != KF_OK && st != KF_ERR_USAGE) fprintf(stderr, "kforge run: error: %s\n", err.msg);
    }
    if (rc == KF_EXIT_OK) rc = check_outputs(a, &r.k);
    if (rc == KF_EXIT_OK) rc = raw_bind(a, &r.k, &in, &count);
    if (rc == KF_EXIT_OK) rc = execute(a, NULL, &r.k, &r, &in, count);
    kf_cli_inputs_free(&in);
    kf_cli_raw_free(&r);
    return rc;
}

/* ---- .kf kernels ------------------------------------------------------------- */

static int run_kf(const run_args *a)
{
    kf_module *m = NULL;
    const kf_ir_kernel *k = NULL;
    kf_cli_inputs in = {0};
    uint64_t count = 0;
    int rc = kf_cli_compile("run", a->file, &a->k.defs, a->k.opt, &m);
    if (rc == KF_EXIT_OK && !(k = kf_cli_pick_kernel(m, a->k.kernel, "run"))) rc = KF_EXIT_USAGE;
    if (rc == KF_EXIT_OK) rc = check_outputs(a, k);
    if (rc == KF_EXIT_OK) rc = kf_cli_kernel_args_check(&a->k, k, "run", usage);
    if (rc == KF_EXIT_OK) {
        kf_error err = {0};
        kf_status st = kf_cli_inputs_make(k, a->k.binds.data, a->k.binds.len, NULL, &in, &err);
        if (st == KF_OK) st = kf_cli_launch_count(k, &in, a->k.count, "--count N", &count, &err);
        if (st != KF_OK) {
            fprintf(stderr, "kforge run: error: %s\n", err.msg);
            rc = kf_cli_exit_for(st);
        }
    }
    if (rc == KF_EXIT_OK) rc = execute(a, m, k, NULL, &in, count);
    kf_cli_inputs_free(&in);
    kf_module_free(m);
    return rc;
}

int kf_cmd_run(int argc, char **argv)
{
    run_args a = {.backend = KF_BACKEND_CPU};
    if (kf_cli_help(argc, argv, usage)) return KF_EXIT_OK;
    int rc = parse_args(argc, argv, &a);
    kf_src_kind raw;
    if (rc == KF_EXIT_OK) rc = kf_cli_raw_kind(a.file, &raw) ? run_raw(&a, raw) : run_kf(&a);
    kf_cli_kernel_args_free(&a.k);
    KF_VEC_FREE(&a.outs);
    return rc;
}
