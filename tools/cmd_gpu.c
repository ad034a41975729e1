/* The GPU-side subcommands: `kforge devices`, `kforge cache` and
 * `kforge bench` (DESIGN.md sections 4 and 6).
 *
 * bench takes the library kernels of the table `cases` below, by file or
 * kernel name (any other name is a usage error, before any GPU work), and
 * exits 1 when a target is MISSED, 3 on a runtime error.
 *
 * bench measures, in one process: the device-to-device copy bandwidth (the
 * reference every kernel is a ratio to); for each library kernel on both GPU
 * paths (CUDA-C via NVRTC, and kforge's PTX) the median event-timed device
 * time of many runs after warm-up on inputs well past the 60 MB L2, its
 * GB/s and ratio to copy; the host cost per launch of async dispatch and of
 * a pre-sorted plan next to a bare cuLaunchKernel loop; and the cold
 * compile time (no caches at all: the driver's JIT cache is turned off with
 * CUDA_CACHE_DISABLE=1 before cuInit) against a warm start from the disk
 * cache (median of several loads). The sizes and
 * scalar arguments of each kernel come from the table `cases` below. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/cache.h"
#include "../runtime/device.h"
#include "../runtime/nvrtc.h"
#include "cli.h"

/* ---- kforge devices ------------------------------------------------------------ */
static void version_str(int v, char *buf, size_t n)
{
    if (v) snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
    else snprintf(buf, n, "not available");
}

int kf_cmd_devices(int argc, char **argv)
{
    if (argc > 0) {
        fprintf(stderr, "usage: kforge devices\n");
        return KF_EXIT_USAGE;
    }
    kf_error err = {0};
    int count = 0, drv = 0;
    char dv[32], nv[32];
    kf_status st = kf_cuda_device_count(&count, &drv, &err);
    version_str(drv, dv, sizeof dv);
    version_str(kf_nvrtc_version(), nv, sizeof nv);
    printf("backends: cpu (interpreter, always)%s\n", count > 0 ? ", cuda (CUDA-C via NVRTC), ptx (kforge PTX)" : "");
    printf("CUDA driver: %s   NVRTC: %s\n", dv, nv);
    if (st != KF_OK) {
        fprintf(stderr, "kforge devices: %s\n", err.msg);
        return KF_EXIT_RUNTIME;
    }
    if (count == 0) {
        fprintf(stderr, "kforge devices: no CUDA GPU found; only --backend cpu is available\n");
        return KF_EXIT_RUNTIME;
    }
    for (int i = 0; i < count; i++) {
        kf_device *d;
        if (kf_device_open(KF_BACKEND_CUDA, i, &d, &err) != KF_OK) {
            fprintf(stderr, "kforge devices: GPU %d: %s\n", i, err.msg);
            return KF_EXIT_RUNTIME;
        }
        kf_device_props p;
        kf_device_props_get(d, &p);
        printf("GPU %d: %s, %u SMs, compute capability %d.%d (kforge arch sm_%u), %.1f GiB, L2 %.0f MiB, "
               "shared memory %u KiB per block (%u KiB opt-in)\n",
               i, p.name, p.sm_count, p.cc_major, p.cc_minor, p.arch, (double)p.total_mem / (1 << 30),
               (double)p.l2_bytes / (1 << 20), p.shared_per_block / 1024, p.shared_per_block_optin / 1024);
        kf_device_close(d);
    }
    return KF_EXIT_OK;
}

/* ---- kforge cache ------------------------------------------------------------------ */
static int cache_usage(void)
{
    fprintf(stderr, "usage: kforge cache stats | clear | verify [--remove]\n");
    return KF_EXIT_USAGE;
}

/* Prints a failed cache call; a misconfigured directory is a usage error. */
static int cache_error(const kf_error *err)
{
    fprintf(stderr, "kforge cache: error: %s\n", err->msg);
    return err->status == KF_ERR_USAGE ? KF_EXIT_USAGE : KF_EXIT_RUNTIME;
}

static int cache_stats(void)
{
    kf_cache_stats s;
    kf_error err = {0};
    if (kf_cache_stats_get(&s, &err) != KF_OK) return cache_error(&err);
    printf("directory: %s%s\n", s.dir, s.disk_enabled ? "" : " (disabled: KFORGE_CACHE=0)");
    printf("entries:   %llu (%.1f KiB)\n", (unsigned long long)s.disk_entries, (double)s.disk_bytes / 1024);
    return KF_EXIT_OK;
}

static int cache_verify(bool remove)
{
    uint64_t good, bad;
    char *names = NULL;
    kf_error err = {0};
    if (kf_cache_verify(remove, &good, &bad, &names, &err) != KF_OK) return cache_error(&err);
    if (names) fputs(names, stdout);
    free(names);
    printf("%llu good, %llu bad%s\n", (unsigned long long)good, (unsigned long long)bad,
           bad ? (remove ? " (removed)" : " (kforge cache verify --remove deletes them; they are rebuilt on use)") : "");
    return bad && !remove ? KF_EXIT_FAIL : KF_EXIT_OK;
}

int kf_cmd_cache(int argc, char **argv)
{
    if (argc < 1) return cache_usage();
    if (!strcmp(argv[0], "stats") && argc == 1) return cache_stats();
    if (!strcmp(argv[0], "verify") && (argc == 1 || (argc == 2 && !strcmp(argv[1], "--remove"))))
        return cache_verify(argc == 2);
    if (!strcmp(argv[0], "clear") && argc == 1) {
        uint64_t n = 0;
        kf_error err = {0};
        char dir[KF_CACHE_DIR_MAX];
        kf_cache_dir(dir, sizeof dir);
        if (kf_cache_clear(true, &n, &err) != KF_OK) return cache_error(&err);
        printf("removed %llu entries from %s\n", (unsigned long long)n, dir);
        return KF_EXIT_OK;
    }
    return cache_usage();
}

/* ---- kforge bench: the kernel table ----------------------------------------------------- */
#define N28 (1u << 28)
#define RC (8192u * 8192u)

typedef struct {
    const char *name;
    double value;        /* scalar value, or element count for buffers */
    bool scales;         /* shrinks with --quick (problem sizes, not widths or constants) */
} bench_kv;

typedef struct {
    const char *file, *kernel;
    bench_kv args[6];    /* by parameter name: scalars' values, buffers' lengths */
    double bytes;        /* bytes read + written per launch */
    double target;       /* issue 4's goal for the ratio to copy bandwidth */
} bench_case;

static const bench_case cases[] = {
    {"saxpy.kf", "saxpy", {{"a", 2.0, 0}, {"x", N28, 1}, {"y", N28, 1}, {"n", N28, 1}}, 12.0 * N28, 0.90},
    {"reduce_sum.kf", "reduce_sum", {{"x", N28, 1}, {"out", 1, 0}, {"n", N28, 1}}, 4.0 * N28, 0.90},
    {"softmax.kf", "softmax_f16", {{"x", RC, 1}, {"y", RC, 1}, {"rows", 8192, 1}, {"cols", 8192, 0}}, 4.0 * RC, 0.80},
    {"rmsnorm.kf", "rmsnorm",
     {{"x", RC, 1}, {"w", 8192, 0}, {"y", RC, 1}, {"rows", 8192, 1}, {"cols", 8192, 0}, {"eps", 1e-6, 0}},
     4.0 * RC + 2.0 * 8192, 0.80},
};

typedef struct {
    int runs;
    double scale;        /* --quick: sizes / 16 */
    const char *dir;
} bench_opts;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

static const bench_kv *lookup(const bench_case *c, const char *name)
{
    for (int i = 0; i < 6 && c->args[i].name; i++)
        if (!strcmp(c->args[i].name, name)) return &c->args[i];
    return NULL;
}

static kf_value make_value(kf_type t, double v)
{
    kf_value out = {.type = t};
    if (t.scalar == KF_S_F32) {
        float f = (float)v;
        memcpy(&out.lane[0], &f, 4);
    } else if (t.scalar == KF_S_F64) {
        memcpy(&out.lane[0], &v, 8);
    } else {
        out.lane[0] = (uint64_t)(int64_t)v;
    }
    return out;
}

/* Fills a buffer with small finite values (f16/f32 bit patterns), chunk by chunk. */
static kf_status fill(kf_buffer *b, kf_error *err)
{
    enum { CHUNK = 1 << 22 };
    size_t total = kf_buffer_bytes(b), esz = kf_type_elem_bytes(kf_buffer_elem(b));
    kf_scalar sc = (kf_scalar)kf_buffer_elem(b).scalar;
    unsigned char *host = malloc(CHUNK);
    if (!host) return kf_error_set(err, KF_ERR_NOMEM, "out of host memory");
    uint32_t r = 12345;
    for (size_t i = 0; i + 4 <= CHUNK; i += 4) {
        r = r * 1664525u + 1013904223u;
        if (sc == KF_S_F16) {
            uint16_t h[2] = {(uint16_t)(((r >> 31) << 15) | ((10 + (r >> 8) % 5) << 10) | (r & 0x3ff)),
                             (uint16_t)((((r >> 30) & 1) << 15) | ((10 + (r >> 12) % 5) << 10) | ((r >> 3) & 0x3ff))};
            memcpy(host + i, h, 4);
        } else {
            float f = (float)((r >> 8) % 2001) / 1000.0f - 1.0f;
            memcpy(host + i, &f, 4);
        }
    }
    kf_status st = KF_OK;
    size_t count = total / esz, per = CHUNK / esz;
    for (size_t off = 0; off < count && st == KF_OK; off += per) {
        size_t n = count - off < per ? count - off : per;
        kf_buffer *v;
        st = kf_buffer_view(b, off, n, &v, err);
        if (st == KF_OK) st = kf_buffer_upload(v, host, n * esz, err);
        kf_buffer_destroy(v);
    }
    free(host);
    return st;
}

/* One kernel's arguments on one device. */
typedef struct {
    kf_arg args[8];
    kf_buffer *bufs[8];
    uint32_t n;
} bench_args;

static void args_free(bench_args *a)
{
    for (uint32_t i = 0; i < a->n; i++) kf_buffer_destroy(a->bufs[i]);
    memset(a, 0, sizeof *a);
}

static kf_status args_make(kf_device *d, const kf_ir_kernel *k, const bench_case *c, double scale, bench_args *a,
                           kf_error *err)
{
    memset(a, 0, sizeof *a);
    if (k->nparams > 8) return kf_error_set(err, KF_ERR_USAGE, "kernel '%s' has too many parameters", k->name);
    for (uint32_t i = 0; i < k->nparams; i++, a->n++) {
        const kf_ir_param *p = &k->params[i];
        const bench_kv *kv = lookup(c, p->name);
        if (!kv) return kf_error_set(err, KF_ERR_USAGE, "bench table has no value for '%s' of '%s'", p->name, k->name);
        double v = kv->scales ? (double)(uint64_t)(kv->value * scale) : kv->value;
        if (p->type.kind != KF_TK_BUFFER) {
            a->args[i].value = make_value(p->type, v);
            continue;
        }
        kf_status st = kf_buffer_create(d, kf_type_vector((kf_scalar)p->type.scalar, p->type.lanes), (size_t)v,
                                        &a->bufs[i], err);
        if (st == KF_OK && !(p->type.flags & KF_TF_MUT)) st = fill(a->bufs[i], err);
        if (st != KF_OK) return st;
        a->args[i].buf = a->bufs[i];
    }
    return KF_OK;
}

/* ---- kforge bench: measurements ----------------------------------------------------------- */
static kf_status time_copy(kf_device *d, int runs, double *gbps, kf_error *err)
{
    size_t bytes = (size_t)1 << 30;
    kf_buffer *src = NULL, *dst = NULL;
    kf_status st = kf_buffer_create(d, kf_type_scalar(KF_S_U8), bytes, &src, err);
    if (st == KF_OK) st = kf_buffer_create(d, kf_type_scalar(KF_S_U8), bytes, &dst, err);
    float *ms = calloc((size_t)runs, sizeof *ms);
    if (!ms && st == KF_OK) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory for %d timings", runs);
    for (int i = 0; st == KF_OK && i < 5; i++) st = kf_buffer_copy(dst, src, bytes, KF_DISPATCH_SYNC, NULL, err);
    for (int i = 0; st == KF_OK && i < runs; i++) st = kf_buffer_copy(dst, src, bytes, KF_DISPATCH_TIMED, &ms[i], err);
    if (st == KF_OK) *gbps = 2.0 * (double)bytes / (median(ms, runs) * 1e6);
    free(ms);
    kf_buffer_destroy(src);
    kf_buffer_destroy(dst);
    return st;
}

static kf_status time_kernel(kf_pipeline *p, bench_args *a, int runs, float *med, kf_error *err)
{
    kf_plan *plan;
    kf_status st = kf_plan_create(p, a->args, a->n, NULL, &plan, err);
    if (st != KF_OK) return st;
    float *ms = calloc((size_t)runs, sizeof *ms);
    if (!ms) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory for %d timings", runs);
    for (int i = 0; st == KF_OK && i < 5; i++) st = kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, err);
    for (int i = 0; st == KF_OK && i < runs; i++) st = kf_plan_launch(plan, KF_DISPATCH_TIMED, &ms[i], err);
    if (st == KF_OK) *med = median(ms, runs);
    free(ms);
    kf_plan_destroy(plan);
    return st;
}

enum { WARM_LOADS = 9 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Cold build (no kforge cache, no driver JIT cache: emit + NVRTC for cuda +
 * PTX JIT) and warm start (the disk cache only: hash the source, read the
 * entry, load the cubin), the median of WARM_LOADS loads. The last warm
 * pipeline is kept in *out. */
static kf_status time_build(kf_device *d, const kf_module *m, const kf_ir_kernel *k, double *cold, double *warm,
                            kf_pipeline **out, kf_error *err)
{
    kf_pipeline *p;
    double w[WARM_LOADS];
    *out = NULL;
    kf_cache_clear(true, NULL, NULL);
    double t0 = now_ms();
    kf_status st = kf_pipeline_create(d, m, k, &p, err);
    *cold = now_ms() - t0;
    if (st != KF_OK) return st;
    kf_pipeline_destroy(p);
    for (int i = 0; st == KF_OK && i < WARM_LOADS; i++) {
        kf_pipeline_destroy(*out);
        *out = NULL;
        kf_cache_clear(false, NULL, NULL);
        t0 = now_ms();
        st = kf_pipeline_create(d, m, k, out, err);
        w[i] = now_ms() - t0;
        if (st == KF_OK && kf_pipeline_origin(*out) != KF_FROM_DISK)
            fprintf(stderr, "kforge bench: warning: %s was not loaded from the disk cache (is KFORGE_CACHE=0?)\n",
                    k->name);
    }
    qsort(w, WARM_LOADS, sizeof w[0], cmp_double);
    *warm = w[WARM_LOADS / 2];
    return st;
}

typedef struct {
    double bare, plan, async;   /* host µs per launch */
} host_cost;

/* One batch of launches through path 0 (bare cuLaunchKernel), 1 (a
 * pre-sorted plan) or 2 (kf_dispatch async); host µs per launch. The batch
 * stays well under the driver's launch queue so the host never waits on
 * the GPU, and the device is drained afterwards, outside the timing. */
static kf_status time_batch(int path, kf_device *d, kf_pipeline *p, kf_plan *plan, bench_args *a, int n,
                            float *us, kf_error *err)
{
    kf_launch l = {.grid = {1, 1, 1}, .block = {32, 1, 1}};
    kf_status st = KF_OK;
    double t0 = now_ms(), bare = 0;
    if (path == 0) st = kf_plan_bench_bare(plan, (uint32_t)n, &bare, err);
    for (int i = 0; path == 1 && st == KF_OK && i < n; i++) st = kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, err);
    for (int i = 0; path == 2 && st == KF_OK && i < n; i++)
        st = kf_dispatch(p, a->args, a->n, &l, KF_DISPATCH_ASYNC, NULL, err);
    *us = path == 0 ? (float)bare : (float)((now_ms() - t0) * 1e3 / n);
    if (st == KF_OK) st = kf_device_sync(d, err);
    return st;
}

/* Host cost per launch of the three paths, interleaved in rotating order
 * over many rounds; each figure is the median. */
static kf_status time_host(kf_device *d, kf_pipeline *p, bench_args *a, host_cost *hc, kf_error *err)
{
    enum { BATCH = 400, ROUNDS = 41 };
    float t[3][ROUNDS];
    kf_plan *plan;
    kf_launch l = {.grid = {1, 1, 1}, .block = {32, 1, 1}};
    kf_status st = kf_plan_create(p, a->args, a->n, &l, &plan, err);
    for (int r = 0; st == KF_OK && r < ROUNDS; r++)
        for (int k = 0; st == KF_OK && k < 3; k++) {
            int path = (r + k) % 3;
            st = time_batch(path, d, p, plan, a, BATCH, &t[path][r], err);
        }
    if (st == KF_OK) {
        hc->bare = median(t[0], ROUNDS);
        hc->plan = median(t[1], ROUNDS);
        hc->async = median(t[2], ROUNDS);
    }
    if (plan) kf_plan_destroy(plan);
    return st;
}

/* ---- kforge bench: driver ---------------------------------------------------------------------- */
typedef struct {
    char kernel[64];
    const char *path;
    float ms;
    double gbps, cold, warm;
    bool ok;
} bench_row;

static kf_status load_module(const char *dir, const char *file, kf_module **m, kf_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *src;
    size_t len;
    *m = NULL;
    kf_status st = kf_read_file(path, &src, &len, err);
    if (st != KF_OK) return st;
    st = kf_compile(path, src, len, NULL, m);
    free(src);
    if (st != KF_OK && *m && (*m)->diags.items.len) {
        const kf_diag *g = &(*m)->diags.items.data[0];
        kf_error_set(err, st, "%s:%u:%u: %s", path, g->loc.line, g->loc.col, g->msg);
    } else if (st != KF_OK) {
        kf_error_set(err, st, "%s does not compile", path);
    }
    return st;
}

/* Whether the command-line name `arg` (a path or a kernel) selects c. */
static bool selects(const bench_case *c, const char *arg)
{
    const char *base = strrchr(arg, '/');
    base = base ? base + 1 : arg;
    return !strcmp(base, c->file) || !strcmp(base, c->kernel);
}

static bool wanted(const bench_case *c, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (selects(c, argv[i])) return true;
    return argc == 0;
}

/* Every name given selects a kernel of the table; otherwise an error
 * naming it and what bench takes (checked before any GPU work). */
static bool selection_known(int nsel, char **sel)
{
    for (int i = 0; i < nsel; i++) {
        bool known = false;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) known |= selects(&cases[c], sel[i]);
        if (known) continue;
        fprintf(stderr, "kforge bench: error: '%s' is not a kernel bench measures; it takes these files or kernels:", sel[i]);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            fprintf(stderr, "%s %s (%s)", c ? "," : "", cases[c].file, cases[c].kernel);
        fputc('\n', stderr);
        return false;
    }
    return true;
}

static void bench_case_run(kf_device *d, const kf_module *m, const bench_case *c, const bench_opts *o, bench_row *row,
                           kf_error *err)
{
    const kf_ir_kernel *k = kf_module_kernel(m, c->kernel);
    snprintf(row->kernel, sizeof row->kernel, "%s", c->kernel);
    if (!k) {
        kf_error_set(err, KF_ERR_USAGE, "%s has no kernel '%s'", c->file, c->kernel);
        return;
    }
    kf_pipeline *p = NULL;
    bench_args a = {0};
    kf_status st = time_build(d, m, k, &row->cold, &row->warm, &p, err);
    if (st == KF_OK) st = args_make(d, k, c, o->scale, &a, err);
    if (st == KF_OK) st = time_kernel(p, &a, o->runs, &row->ms, err);
    if (st == KF_OK) {
        row->gbps = c->bytes * o->scale / (row->ms * 1e6);
        row->ok = true;
    }
    args_free(&a);
    kf_pipeline_destroy(p);
}

static const char *find_kernels_dir(void)
{
    static char buf[4096];
    struct stat sb;
    if (stat("kernels/saxpy.kf", &sb) == 0) return "kernels";
    const char *src = getenv("KF_SOURCE_DIR");
    if (src) {
        snprintf(buf, sizeof buf, "%s/kernels", src);
        return buf;
    }
    return "kernels";
}

/* Host cost of a launch: a tiny .kf saxpy (one block of 32) on the cuda path. */
static void bench_host(kf_device *d, const char *dir, host_cost *hc, kf_error *err)
{
    kf_module *m = NULL;
    kf_pipeline *p = NULL;
    bench_args a = {0};
    static const bench_case tiny = {"saxpy.kf", "saxpy", {{"a", 2.0, 0}, {"x", 32, 0}, {"y", 32, 0}, {"n", 32, 0}}, 0, 0};
    kf_status st = load_module(dir, tiny.file, &m, err);
    if (st == KF_OK) st = kf_pipeline_create(d, m, kf_module_kernel(m, "saxpy"), &p, err);
    if (st == KF_OK) st = args_make(d, kf_module_kernel(m, "saxpy"), &tiny, 1.0, &a, err);
    if (st == KF_OK) st = time_host(d, p, &a, hc, err);
    if (st != KF_OK) fprintf(stderr, "kforge bench: host cost: %s\n", err->msg);
    args_free(&a);
    kf_pipeline_destroy(p);
    kf_module_free(m);
}

/* Removes a directory tree the bench made (the driver's JIT cache, if it
 * wrote one despite CUDA_CACHE_DISABLE). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char sub[4096];
        struct stat sb;
        snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        if (lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode)) remove_tree(sub);
        else unlink(sub);
    }
    if (d) closedir(d);
    rmdir(path);
}

static int bench_usage(void)
{
    fprintf(stderr, "usage: kforge bench [--runs N] [--quick] [KERNEL.kf | KERNEL]...\n");
    return KF_EXIT_USAGE;
}

/* Prints a measured row; false when it missed a target. */
static bool print_row(const bench_row *r, double copy, double target)
{
    if (!r->ok) return true;
    double x = r->gbps / copy, wc = r->warm / r->cold;
    printf("%-12s %-5s %10.3f %9.0f %7.2f %10.1f %9.2f %8.1f%%  >= %.2f %s, %s\n", r->kernel, r->path, r->ms, r->gbps, x,
           r->cold, r->warm, 100.0 * wc, target, x >= target ? "met" : "MISSED", wc <= 0.05 ? "met" : "MISSED");
    return x >= target && wc <= 0.05;
}

/* A runtime error (3) outranks a missed target (1). */
static int worse(int rc, int other) { return rc == KF_EXIT_RUNTIME || other == KF_EXIT_OK ? rc : other; }

/* Parses [--runs N] [--quick] [KERNEL...]; sel receives the names. */
static bool bench_args_parse(int argc, char **argv, bench_opts *o, char **sel, int *nsel)
{
    *nsel = 0;
    for (int i = 0; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            long r = strtol(argv[++i], &end, 10);
            if (*end || r < 1 || r > 100000) return false;
            o->runs = (int)r;
        } else if (!strcmp(argv[i], "--quick")) {
            o->scale = 1.0 / 16;
        } else if (argv[i][0] == '-') {
            return false;
        } else {
            sel[(*nsel)++] = argv[i];
        }
    }
    return true;
}

/* Every selected kernel on both paths; returns the exit status. */
static int bench_kernels(kf_device *dev[2], const bench_opts *o, int nsel, char **sel, double copy)
{
    int rc = KF_EXIT_OK;
    kf_error err = {0};
    printf("cold ms: first build with no caches (kforge's and the driver's JIT cache off, CUDA_CACHE_DISABLE=1): "
           "emit + PTX JIT (ptx), emit + NVRTC + PTX JIT (cuda)\n"
           "warm ms: start from kforge's disk cache: hash source + options, read the entry, load its cubin "
           "(no emit, no NVRTC, no JIT); median of %d\n",
           WARM_LOADS);
    printf("%-12s %-5s %10s %9s %7s %10s %9s %9s  %s\n", "kernel", "path", "median ms", "GB/s", "x copy", "cold ms",
           "warm ms", "warm/cold", "targets (x copy, warm/cold <= 5%)");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (!wanted(&cases[c], nsel, sel)) continue;
        kf_module *m;
        if (load_module(o->dir, cases[c].file, &m, &err) != KF_OK) {
            fprintf(stderr, "kforge bench: %s\n", err.msg);
            kf_module_free(m);
            rc = KF_EXIT_RUNTIME;
            continue;
        }
        for (int path = 0; path < 2; path++) {
            bench_row row = {.path = path ? "ptx" : "cuda"};
            bench_case_run(dev[path], m, &cases[c], o, &row, &err);
            if (!row.ok) {
                fprintf(stderr, "kforge bench: %s (%s): %s\n", cases[c].kernel, row.path, err.msg);
                rc = KF_EXIT_RUNTIME;
            }
            if (!print_row(&row, copy, cases[c].target)) rc = worse(rc, KF_EXIT_FAIL);
            fflush(stdout);
        }
        kf_module_free(m);
    }
    return rc;
}

int kf_cmd_bench(int argc, char **argv)
{
    bench_opts o = {50, 1.0, find_kernels_dir()};
    int nsel = 0;
    char **sel = calloc((size_t)argc + 1, sizeof *sel);
    if (!sel) {
        fprintf(stderr, "kforge bench: error: out of memory\n");
        return KF_EXIT_RUNTIME;
    }
    if (!bench_args_parse(argc, argv, &o, sel, &nsel)) return free(sel), bench_usage();
    if (!selection_known(nsel, sel)) return free(sel), KF_EXIT_USAGE;
    /* Cold/warm timings must not wipe the user's cache: use a private one. */
    char tmpdir[] = "/tmp/kforge-bench-XXXXXX", nvdir[] = "/tmp/kforge-bench-nv-XXXXXX";
    if (!mkdtemp(tmpdir) || !mkdtemp(nvdir)) {
        fprintf(stderr, "kforge bench: cannot create a temporary directory\n");
        rmdir(tmpdir);
        free(sel);
        return KF_EXIT_RUNTIME;
    }
    setenv("KFORGE_CACHE_DIR", tmpdir, 1);
    setenv("KFORGE_CACHE", "1", 1);
    /* A cold build must run the real PTX JIT: turn the driver's own JIT
     * cache (~/.nv/ComputeCache) off before cuInit, which happens below,
     * and point it at an empty private directory should it be used anyway. */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    setenv("CUDA_CACHE_PATH", nvdir, 1);
    kf_error err = {0};
    kf_device *dev[2] = {NULL, NULL};
    int rc = KF_EXIT_RUNTIME;
    double copy = 0;
    if (kf_device_open(KF_BACKEND_CUDA, 0, &dev[0], &err) != KF_OK ||
        kf_device_open(KF_BACKEND_PTX, 0, &dev[1], &err) != KF_OK) {
        fprintf(stderr, "kforge bench: %s\n", err.msg);
    } else if (time_copy(dev[0], o.runs, &copy, &err) != KF_OK) {
        fprintf(stderr, "kforge bench: copy: %s\n", err.msg);
    } else {
        printf("device: %s; copy bandwidth %.0f GB/s (1 GiB device-to-device, read+write, median of %d)\n",
               kf_device_name(dev[0]), copy, o.runs);
        rc = bench_kernels(dev, &o, nsel, sel, copy);
        host_cost hc = {0};
        bench_host(dev[0], o.dir, &hc, &err);
        if (hc.bare > 0)
            printf("host us/launch: bare cuLaunchKernel %.2f; pre-sorted plan %.2f (%.2fx, target <= 1.05x: %s); "
                   "async dispatch %.2f (%.2fx)\n",
                   hc.bare, hc.plan, hc.plan / hc.bare, hc.plan <= 1.05 * hc.bare ? "met" : "MISSED", hc.async,
                   hc.async / hc.bare);
        else
            rc = KF_EXIT_RUNTIME;
        if (hc.bare > 0 && hc.plan > 1.05 * hc.bare) rc = worse(rc, KF_EXIT_FAIL);
    }
    kf_device_close(dev[0]);
    kf_device_close(dev[1]);
    kf_cache_clear(true, NULL, NULL);
    rmdir(tmpdir);
    remove_tree(nvdir);
    free(sel);
    return rc;
}
