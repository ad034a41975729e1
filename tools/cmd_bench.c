/* kforge bench (DESIGN.md sections 4 and 6, issue 8): GPU timings of any
 * kernel, or of the library's bench files (kernels/bench/NAME.bench, format in
 * tools/bench_case.h), as ratios to the copy bandwidth measured in the
 * same run.
 *
 *   kforge bench FILE.kf -k KERNEL ARGS...   one kernel, its arguments as
 *                                            `kforge run` takes them
 *   kforge bench [BENCH|PATTERN|F.bench]...  the library's benches (all, or
 *                                            those named), with targets
 *
 * Everything asked for is compiled and bound first (tools/bench_run.c), so
 * a FILE that is not a kernel, a bad argument or a bad bench file is an
 * error (exit 1 or 2) before any device is opened. Then, on each GPU path
 * asked for (default cuda and ptx): the copy bandwidth, and for every
 * bench and variant the median, min and max of event-timed passes with the
 * L2 flushed before each, GB/s, x copy, TFLOP/s when flops are given, the
 * registers of each kernel (from the driver) and whether it spills; the
 * cold-build vs warm-start time of benches that ask (`startup`); and, when
 * the whole library runs (no names given), the host cost of a launch. A table on stdout, or JSON
 * (--json). Exit 0; 1 when a target is missed (x copy below target, a
 * kernel with local memory, warm/cold or the host cost over theirs); 2
 * usage; 3 a runtime or device error (which outranks 1). */
#include <dirent.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/cache.h"
#include "bench_run.h"
#include "golden_case.h"

static const char usage[] =
    "kforge bench FILE [-k KERNEL] [-D NAME=VALUE]... [NAME=SPEC]... [--count N] [--grid X,Y,Z]\n"
    "                  [--block X,Y,Z] [--shared BYTES] [--bytes EXPR | --flops EXPR] [--target RATIO]\n"
    "                  [--name NAME] [OPTIONS]\n"
    "       kforge bench [BENCH | PATTERN | FILE.bench]... [--variants] [--list] [OPTIONS]\n"
    "OPTIONS: [--backend cuda|ptx]... [--runs N] [--warmup N] [--budget MS] [--no-flush | --l2 cold|warm]\n"
    "         [--variant 'WORDS']... [--sweep NAME=V1,V2...]... [--json[=PATH]]";

typedef struct {
    kf_cli_kernel_args k;               /* FILE mode: -k, -D, NAME=SPEC, --count, --grid, --block, --shared */
    const char *file;                   /* FILE mode's kernel source */
    KF_VEC(const char *) names;         /* library mode: bench names, patterns, .bench files */
    unsigned backends;                  /* bit per kf_backend; 0: cuda and ptx */
    kf_bench_timing timing;
    const char *bytes, *flops, *name;   /* FILE mode */
    double target;
    bool list, file_variants, json, file_only_opts;
    const char *l2_set;                 /* the option that set the flush: "--no-flush" or "--l2" */
    const char *json_path;              /* --json=PATH; NULL: JSON instead of the table */
    KF_VEC(const char *) variants;      /* --variant */
    KF_VEC(const char *) sweeps;        /* --sweep */
} bench_opts;

/* ---- options ---------------------------------------------------------------------------- */

static bool parse_ratio(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || end == s || !(v > 0 && v <= 100)) return false;
    *out = v;
    return true;
}

static int parse_count(const char *opt, const char *val, int lo, int hi, int *out)
{
    uint64_t v;
    if (!kf_value_parse_u64(val, strlen(val), &v) || v < (uint64_t)lo || v > (uint64_t)hi)
        return kf_cli_usage_error("bench", usage, "bad %s '%s': expected an integer from %d to %d", opt, val, lo, hi);
    *out = (int)v;
    return KF_EXIT_OK;
}

/* `bytes` / `flops`: an expression as a .case `size` (syntax checked now). */
static int parse_expr(const char *opt, const char *val, const char **out)
{
    uint64_t ignored;
    kf_error err = {0};
    if (kf_case_size_eval(val, NULL, NULL, &ignored, &err) != KF_OK)
        return kf_cli_usage_error("bench", usage, "bad %s: %s", opt, err.msg);
    *out = val;
    return KF_EXIT_OK;
}

static int value_opt(void *args, const char *opt, char *val)
{
    bench_opts *o = args;
    kf_backend b;
    double budget;
    if (!strcmp(opt, "--backend")) {
        if (!kf_cli_backend_parse(val, &b) || b == KF_BACKEND_CPU)
            return kf_cli_usage_error("bench", usage, "unknown backend '%s': bench times cuda or ptx", val);
        o->backends |= 1u << b;
        return KF_EXIT_OK;
    }
    if (!strcmp(opt, "--runs")) return parse_count(opt, val, 1, 100000, &o->timing.runs);
    if (!strcmp(opt, "--warmup")) return parse_count(opt, val, 1, 100000, &o->timing.warmup);
    if (!strcmp(opt, "--budget")) {
        char *end;
        budget = strtod(val, &end);
        if (*end || end == val || !(budget >= 1 && budget <= 60000))
            return kf_cli_usage_error("bench", usage, "bad --budget '%s': expected milliseconds, 1 to 60000", val);
        o->timing.budget_ms = budget;
        return KF_EXIT_OK;
    }
    if (!strcmp(opt, "--l2")) {
        if (strcmp(val, "cold") && strcmp(val, "warm"))
            return kf_cli_usage_error("bench", usage, "bad --l2 '%s': expected cold (flushed) or warm", val);
        if (o->l2_set) return kf_cli_usage_error("bench", usage, "--l2 and %s both given: give one", o->l2_set);
        o->l2_set = "--l2";
        o->timing.flush = !strcmp(val, "cold");
        return KF_EXIT_OK;
    }
    if (!strcmp(opt, "--variant")) return KF_VEC_PUSH(&o->variants, val) ? KF_EXIT_OK : KF_EXIT_RUNTIME;
    if (!strcmp(opt, "--sweep")) return KF_VEC_PUSH(&o->sweeps, val) ? KF_EXIT_OK : KF_EXIT_RUNTIME;
    o->file_only_opts = true;
    if (!strcmp(opt, "--bytes")) return parse_expr(opt, val, &o->bytes);
    if (!strcmp(opt, "--flops")) return parse_expr(opt, val, &o->flops);
    if (!strcmp(opt, "--name")) {
        o->name = val;
        return KF_EXIT_OK;
    }
    if (!parse_ratio(val, &o->target))
        return kf_cli_usage_error("bench", usage, "bad --target '%s': expected a ratio to copy, 0 < RATIO <= 100", val);
    return KF_EXIT_OK;
}

static bool is_regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* Sorts the positional words: the kernel FILE (an existing file that is
 * not a .bench, or a missing *.kf when kernel arguments are given) from
 * the bench files, names and patterns of library mode. */
static int classify_words(bench_opts *o, bool kernel_opts)
{
    size_t kept = 0;
    for (size_t i = 0; i < o->names.len; i++) {
        const char *w = o->names.data[i];
        bool file = !ends_with(w, ".bench") && (is_regular_file(w) || (kernel_opts && ends_with(w, ".kf")));
        if (file && o->file)
            return kf_cli_usage_error("bench", usage, "one kernel FILE at a time: '%s' and '%s'", o->file, w);
        if (file) o->file = w;
        else o->names.data[kept++] = w;
    }
    o->names.len = kept;
    return KF_EXIT_OK;
}

static int flag_opt(bench_opts *o, const char *s)
{
    if (!kf_cli_is_option(s)) return KF_VEC_PUSH(&o->names, s) ? KF_EXIT_OK : KF_EXIT_RUNTIME;
    if (!strcmp(s, "--no-flush")) {
        if (o->l2_set) return kf_cli_usage_error("bench", usage, "--no-flush and %s both given: give one", o->l2_set);
        o->l2_set = "--no-flush", o->timing.flush = false;
    }
    else if (!strcmp(s, "--list")) o->list = true;
    else if (!strcmp(s, "--variants")) o->file_variants = true;
    else if (!strcmp(s, "--json")) o->json = true, o->json_path = NULL;
    else if (!strncmp(s, "--json=", 7) && s[7]) o->json = true, o->json_path = s + 7;
    else return kf_cli_usage_error("bench", usage, "unknown option '%s'", s);
    return KF_EXIT_OK;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    static const char *const vopts[] = {"--backend", "--runs", "--warmup", "--budget", "--l2", "--variant",
                                        "--sweep", "--bytes", "--flops", "--name", "--target"};
    for (int i = 0; i < argc;) {
        if (kf_cli_end_of_options(argv, &i)) continue;
        int matched = kf_cli_kernel_arg(argc, argv, &i, &o->k, "bench", usage);
        if (!matched)
            matched = kf_cli_value_opts(argc, argv, &i, vopts, sizeof vopts / sizeof vopts[0], "bench", value_opt, o);
        if (matched < 0) return KF_EXIT_USAGE;
        if (matched) continue;
        int rc = flag_opt(o, argv[i++]);
        if (rc != KF_EXIT_OK) return rc;
    }
    bool kernel_opts = o->k.kernel || o->k.defs.len || o->k.binds.len || o->k.count || o->k.launch.grid[0] ||
                       o->k.launch.block[0] || o->k.launch.dyn_shared || o->file_only_opts;
    int rc = classify_words(o, kernel_opts);
    if (rc != KF_EXIT_OK) return rc;
    if (o->file && o->names.len)
        return kf_cli_usage_error("bench", usage, "a kernel FILE (%s) is benched alone; '%s' is not a NAME=SPEC argument",
                                  o->file, o->names.data[0]);
    if (!o->file && kernel_opts)
        return kf_cli_usage_error("bench", usage, "-k, -D, NAME=SPEC, --count, --grid, --block, --shared, --bytes, "
                                  "--flops, --target and --name need a kernel FILE; vary a library bench with "
                                  "--variant '-D NAME=VALUE' or --sweep NAME=V1,V2");
    if (o->bytes && o->flops)
        return kf_cli_usage_error("bench", usage, "give --bytes or --flops, not both");
    if (o->file && o->file_variants)
        return kf_cli_usage_error("bench", usage, "--variants runs the variant lines of bench files; with a kernel FILE "
                                  "give --variant or --sweep");
    return KF_EXIT_OK;
}

/* ---- what to measure ---------------------------------------------------------------------- */

typedef struct {
    bench_opts o;
    kf_bench_set set;
    kf_arena arena;                     /* the command line's variants */
    KF_VEC(kf_bench_variant) variants;  /* --variant and --sweep, for every bench */
    bool *sel;                          /* per bench of set: selected */
    KF_VEC(kf_bench_prep) preps;
} bench_state;

/* The benches FILE mode measures: one, from the command line. */
static int file_bench(bench_state *s)
{
    const bench_opts *o = &s->o;
    kf_arena *a = &s->set.arena;
    const char *base = strrchr(o->file, '/') ? strrchr(o->file, '/') + 1 : o->file;
    kf_bench b = {.name = o->name ? o->name : o->k.kernel ? o->k.kernel : kf_arena_strndup(a, base, strcspn(base, ".")),
                  .path = o->file, .bytes = o->bytes, .flops = o->flops, .target = o->target};
    kf_bench_step st = {.file = o->file, .kernel = o->k.kernel, .count = o->k.count, .launch = o->k.launch};
    bool ok = true;
    for (size_t i = 0; i < o->k.defs.len; i++) ok &= KF_VEC_PUSH(&st.defines, o->k.defs.data[i]);
    for (size_t i = 0; i < o->k.binds.len; i++) ok &= KF_VEC_PUSH(&st.args, o->k.binds.data[i]);
    ok = ok && KF_VEC_PUSH(&b.steps, st) && KF_VEC_PUSH(&s->set.benches, b);
    if (!ok) {
        KF_VEC_FREE(&st.defines);
        KF_VEC_FREE(&st.args);
        KF_VEC_FREE(&b.steps);
    }
    return ok ? KF_EXIT_OK : KF_EXIT_RUNTIME;
}

static const char *kernels_dir(void)
{
    static char buf[4096];
    if (is_regular_file("kernels/bench/saxpy.bench")) return "kernels";
    const char *src = getenv("KF_SOURCE_DIR");
    if (!src) return "kernels";
    snprintf(buf, sizeof buf, "%s/kernels", src);
    return buf;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every .bench file of kernels/bench, in name order. */
static int load_library(bench_state *s)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/bench", kernels_dir());
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "kforge bench: error: no bench files: cannot open %s (run from the checkout, or set "
                        "KF_SOURCE_DIR)\n", dir);
        return KF_EXIT_USAGE;
    }
    KF_VEC(char *) files = {0};
    struct dirent *de;
    while ((de = readdir(d)))
        if (ends_with(de->d_name, ".bench")) {
            char *path = kf_arena_printf(&s->arena, "%s/%s", dir, de->d_name);
            if (!path || !KF_VEC_PUSH(&files, path)) break;
        }
    closedir(d);
    qsort(files.data, files.len, sizeof *files.data, name_cmp);
    int rc = KF_EXIT_OK;
    kf_error err = {0};
    for (size_t i = 0; i < files.len && rc == KF_EXIT_OK; i++)
        if (kf_bench_file_load(&s->set, files.data[i], &err) != KF_OK) {
            fprintf(stderr, "kforge bench: error: %s\n", err.msg);
            rc = kf_cli_exit_for(err.status);
        }
    KF_VEC_FREE(&files);
    return rc;
}

/* Whether word selects b: its name (or a shell pattern over it), a step's
 * kernel, or a step's .kf file by base name. */
static bool selects(const kf_bench *b, const char *word)
{
    if (!fnmatch(word, b->name, 0)) return true;
    for (size_t i = 0; i < b->steps.len; i++) {
        const char *f = b->steps.data[i].file, *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
        if (!strcmp(word, b->steps.data[i].kernel) || !strcmp(word, base)) return true;
    }
    return false;
}

/* Library mode: the .bench files named (else the library), then the
 * benches the other words select (else all); an unknown word is a usage
 * error listing the benches. s->sel[i] is set for the benches selected. */
static int library_benches(bench_state *s)
{
    int rc = KF_EXIT_OK;
    bool files = false, words = false;
    kf_error err = {0};
    for (size_t i = 0; i < s->o.names.len && rc == KF_EXIT_OK; i++)
        if (ends_with(s->o.names.data[i], ".bench")) {
            files = true;
            if (kf_bench_file_load(&s->set, s->o.names.data[i], &err) != KF_OK) {
                fprintf(stderr, "kforge bench: error: %s\n", err.msg);
                rc = kf_cli_exit_for(err.status);
            }
        }
    if (rc == KF_EXIT_OK && !files) rc = load_library(s);
    bool *sel = s->sel = rc == KF_EXIT_OK ? calloc(s->set.benches.len + 1, sizeof *sel) : NULL;
    if (rc == KF_EXIT_OK && !sel) rc = KF_EXIT_RUNTIME;
    for (size_t i = 0; i < s->o.names.len && rc == KF_EXIT_OK; i++) {
        const char *w = s->o.names.data[i];
        if (ends_with(w, ".bench")) continue;
        words = true;
        bool any = false;
        for (size_t b = 0; b < s->set.benches.len; b++)
            if (selects(&s->set.benches.data[b], w)) sel[b] = any = true;
        if (any) continue;
        fprintf(stderr, "kforge bench: error: '%s' names no bench, kernel or .kf file of the bench files read; "
                        "their benches are:", w);
        for (size_t b = 0; b < s->set.benches.len; b++) fprintf(stderr, " %s", s->set.benches.data[b].name);
        fputc('\n', stderr);
        rc = KF_EXIT_USAGE;
    }
    for (size_t b = 0; rc == KF_EXIT_OK && !words && b < s->set.benches.len; b++) sel[b] = true;
    return rc;
}

/* --sweep NAME=V1,V2,... lists: every combination as a variant
 * "-D NAME=V ..." (at most 4096). */
static int sweep_variants(bench_state *s)
{
    size_t n = s->o.sweeps.len, combos = 1;
    if (!n) return KF_EXIT_OK;
    size_t *count = calloc(n, sizeof *count);
    int rc = count ? KF_EXIT_OK : KF_EXIT_RUNTIME;
    for (size_t i = 0; i < n && rc == KF_EXIT_OK; i++) {
        const char *sw = s->o.sweeps.data[i], *eq = strchr(sw, '=');
        if (!eq || eq == sw || !eq[1] || strstr(eq, ",,") || eq[strlen(eq) - 1] == ',')
            rc = kf_cli_usage_error("bench", usage, "bad --sweep '%s': expected NAME=V1,V2,...", sw);
        for (const char *c = eq; rc == KF_EXIT_OK && c; c = strchr(c + 1, ',')) count[i]++;
        combos *= count[i] ? count[i] : 1;
        if (rc == KF_EXIT_OK && combos > 4096)
            rc = kf_cli_usage_error("bench", usage, "--sweep makes more than 4096 variants");
    }
    for (size_t c = 0; c < combos && rc == KF_EXIT_OK; c++) {
        kf_buf text = {0};
        for (size_t i = 0, r = c; i < n; r /= count[i], i++) {
            const char *sw = s->o.sweeps.data[i], *eq = strchr(sw, '='), *v = eq + 1;
            for (size_t k = 0; k < r % count[i]; k++) v = strchr(v, ',') + 1;
            kf_buf_printf(&text, "%s-D %.*s=%.*s", i ? " " : "", (int)(eq - sw), sw, (int)strcspn(v, ","), v);
        }
        kf_bench_variant var;
        kf_error err = {0};
        if (text.oom || kf_bench_variant_parse(&s->arena, text.data, &var, &err) != KF_OK || !KF_VEC_PUSH(&s->variants, var))
            rc = kf_cli_usage_error("bench", usage, "--sweep: %s", err.msg[0] ? err.msg : "out of memory");
        kf_buf_free(&text);
    }
    free(count);
    return rc;
}

static int cli_variants(bench_state *s)
{
    for (size_t i = 0; i < s->o.variants.len; i++) {
        kf_bench_variant v;
        kf_error err = {0};
        if (kf_bench_variant_parse(&s->arena, s->o.variants.data[i], &v, &err) != KF_OK) {
            kf_bench_variant_free(&v);
            return kf_cli_usage_error("bench", usage, "bad --variant: %s", err.msg);
        }
        if (!KF_VEC_PUSH(&s->variants, v)) return KF_EXIT_RUNTIME;
    }
    return sweep_variants(s);
}

static int prepare_one(bench_state *s, const kf_bench *b, const kf_bench_variant *v)
{
    kf_bench_prep p;
    int rc = kf_bench_prepare(b, v, &p);
    if (rc == KF_EXIT_OK && !KF_VEC_PUSH(&s->preps, p)) rc = KF_EXIT_RUNTIME;
    if (rc != KF_EXIT_OK) kf_bench_prep_free(&p);
    return rc;
}

/* Every selected bench (FILE mode: the one) with each of its variants,
 * compiled and bound. */
static int prepare_all(bench_state *s)
{
    int rc = KF_EXIT_OK;
    for (size_t i = 0; i < s->set.benches.len && rc == KF_EXIT_OK; i++) {
        const kf_bench *b = &s->set.benches.data[i];
        if (s->sel && !s->sel[i]) continue;
        rc = prepare_one(s, b, NULL);
        for (size_t v = 0; s->o.file_variants && v < b->variants.len && rc == KF_EXIT_OK; v++)
            rc = prepare_one(s, b, &b->variants.data[v]);
        for (size_t v = 0; v < s->variants.len && rc == KF_EXIT_OK; v++) rc = prepare_one(s, b, &s->variants.data[v]);
    }
    return rc;
}

/* ---- results ---------------------------------------------------------------------------------- */

typedef enum { ST_REPORT, ST_MET, ST_MISSED, ST_SPILLS, ST_ERROR, ST_SKIPPED } row_status;
static const char *const status_name[] = {"report", "met", "MISSED", "SPILLS", "ERROR", "skipped"};

typedef struct {
    const kf_bench_prep *p;
    kf_backend backend;
    kf_bench_result r;
    double gbps, x, tflops;
    row_status status;
    char error[sizeof(((kf_error *)0)->msg) + 16];   /* ST_ERROR: what failed; ST_SKIPPED: why */
    double cold, warm;                  /* startup, when measured (cold > 0) */
    row_status startup;
} bench_row;

typedef struct {
    double copy;
    int copy_runs;
    const char *device;
    size_t flush_bytes;
    bool flush, host_measured;
    kf_bench_host host;
    row_status host_status;
    int width, vwidth;                  /* name and variant columns */
} run_info;

static const char *variant_label(const kf_bench_prep *p) { return p->variant ? p->variant->label : "default"; }

static void print_header(const run_info *ri, FILE *f)
{
    fprintf(f, "device: %s; copy bandwidth %.0f GB/s (device-to-device, read+write, median of %d)\n", ri->device,
            ri->copy, ri->copy_runs);
    fprintf(f, "timing: CUDA events around each pass; %s; median, min, max of the passes after warm-up\n",
            ri->flush ? "L2 flushed before each pass (write then read of 2 x L2, outside the timed region)"
                      : "L2 warm (not flushed: --no-flush)");
    fprintf(f, "%-*s %-4s ", ri->width, "bench", "path");
    if (ri->vwidth) fprintf(f, "%-*s ", ri->vwidth, "variant");
    fprintf(f, "%10s %10s %10s %8s %7s %8s %5s  %-14s %s\n", "median ms", "min ms", "max ms", "GB/s", "x copy",
            "TFLOP/s", "runs", "regs", "status");
}

/* Registers of each step ("40+32"), a spilling one with its local bytes. */
static void regs_text(const bench_row *w, char *out, size_t n)
{
    size_t used = 0;
    out[0] = 0;
    for (uint32_t s = 0; w->r.res && s < w->p->nsteps && used < n; s++) {
        const kf_resources *r = &w->r.res[s];
        int k = r->local_bytes ? snprintf(out + used, n - used, "%s%d(local %d)", s ? "+" : "", r->regs, r->local_bytes)
                               : snprintf(out + used, n - used, "%s%d", s ? "+" : "", r->regs);
        if (k < 0) break;
        used += (size_t)k;
    }
}

static void print_row(const run_info *ri, const bench_row *w, FILE *f)
{
    fprintf(f, "%-*s %-4s ", ri->width, w->p->bench->name, kf_cli_backend_name(w->backend));
    if (ri->vwidth) fprintf(f, "%-*s ", ri->vwidth, variant_label(w->p));
    if (w->status == ST_ERROR || w->status == ST_SKIPPED) {
        fprintf(f, "%s: %s\n", w->status == ST_ERROR ? "ERROR" : "skipped, not applicable", w->error);
        return;
    }
    char regs[128], tf[16] = "-", target[32] = "";
    regs_text(w, regs, sizeof regs);
    if (w->p->flops) snprintf(tf, sizeof tf, "%.2f", w->tflops);
    if (w->p->bench->target) snprintf(target, sizeof target, " (>= %.2f)", w->p->bench->target);
    fprintf(f, "%10.4f %10.4f %10.4f %8.0f %7.3f %8s %5d  %-14s %s%s\n", w->r.median, w->r.min, w->r.max, w->gbps, w->x,
            tf, w->r.runs, regs, status_name[w->status], w->status == ST_SPILLS ? "" : target);
    if (w->cold > 0)
        fprintf(f, "%-*s   startup: cold build %.1f ms, warm start %.2f ms (%.1f%%, target <= %.0f%%): %s\n", ri->width,
                "", w->cold, w->warm, 100 * w->warm / w->cold, 100 * w->p->bench->startup, status_name[w->startup]);
}

/* ---- JSON ------------------------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* ", \"key\": value", or null for 0 (not given). */
static void json_num(FILE *f, const char *key, double v, const char *fmt)
{
    fprintf(f, ", \"%s\": ", key);
    if (v) fprintf(f, fmt, v);
    else fputs("null", f);
}

static void json_row(FILE *f, const bench_row *w)
{
    const kf_bench_prep *p = w->p;
    fputs("    {\"bench\": ", f);
    json_str(f, p->bench->name);
    fprintf(f, ", \"backend\": \"%s\", \"variant\": ", kf_cli_backend_name(w->backend));
    json_str(f, variant_label(p));
    fprintf(f, ", \"status\": \"%s\", \"bytes\": %.0f", status_name[w->status], p->bytes);
    json_num(f, "flops", p->flops, "%.0f");
    json_num(f, "target", p->bench->target, "%g");
    if (w->status == ST_ERROR || w->status == ST_SKIPPED) {
        fputs(w->status == ST_ERROR ? ", \"error\": " : ", \"reason\": ", f);
        json_str(f, w->error);
    } else {
        fprintf(f, ", \"median_ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f, \"runs\": %d, \"warmup\": %d, "
                   "\"gbps\": %.1f, \"x_copy\": %.4f",
                w->r.median, w->r.min, w->r.max, w->r.runs, w->r.warmup, w->gbps, w->x);
        json_num(f, "tflops", p->flops ? w->tflops : 0, "%.4f");
    }
    fputs(", \"steps\": [", f);
    for (uint32_t s = 0; s < p->nsteps; s++) {
        fprintf(f, "%s{\"kernel\": ", s ? ", " : "");
        json_str(f, p->steps[s].k->name);
        fputs(", \"file\": ", f);
        json_str(f, p->bench->steps.data[s].file);
        if (w->r.res && w->status != ST_ERROR && w->status != ST_SKIPPED)
            fprintf(f, ", \"registers\": %d, \"local_bytes\": %d, \"static_shared\": %u", w->r.res[s].regs,
                    w->r.res[s].local_bytes, w->r.res[s].static_shared);
        fputc('}', f);
    }
    fputc(']', f);
    if (w->cold > 0)
        fprintf(f, ", \"startup\": {\"cold_ms\": %.3f, \"warm_ms\": %.3f, \"target\": %g, \"status\": \"%s\"}", w->cold,
                w->warm, p->bench->startup, status_name[w->startup]);
    fputc('}', f);
}

static void json_write(FILE *f, const run_info *ri, const bench_row *rows, size_t n, int rc)
{
    fputs("{\n  \"device\": ", f);
    json_str(f, ri->device);
    fprintf(f, ",\n  \"copy_gbps\": %.1f, \"copy_runs\": %d, \"l2_flush\": %s, \"l2_flush_bytes\": %zu,\n", ri->copy,
            ri->copy_runs, ri->flush ? "true" : "false", ri->flush ? 2 * ri->flush_bytes : 0);
    fputs("  \"results\": [\n", f);
    for (size_t i = 0; i < n; i++) {
        json_row(f, &rows[i]);
        fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fputs("  ]", f);
    if (ri->host_measured)
        fprintf(f, ",\n  \"host_us_per_launch\": {\"bare\": %.3f, \"plan\": %.3f, \"async\": %.3f, \"target\": 1.05, "
                   "\"status\": \"%s\"}",
                ri->host.bare, ri->host.plan, ri->host.async, status_name[ri->host_status]);
    fprintf(f, ",\n  \"exit\": %d\n}\n", rc);
}

/* JSON to stdout, or to the file --json=PATH (written whole or not at all). */
static int json_output(const bench_opts *o, const run_info *ri, const bench_row *rows, size_t n, int rc)
{
    if (!o->json_path) {
        json_write(stdout, ri, rows, n, rc);
        return rc;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return KF_EXIT_RUNTIME;
    json_write(f, ri, rows, n, rc);
    fclose(f);
    kf_error err = {0};
    kf_status st = kf_write_file(o->json_path, text, len, &err);
    free(text);
    if (st == KF_OK) return rc;
    fprintf(stderr, "kforge bench: error: %s\n", err.msg);
    return KF_EXIT_RUNTIME;
}

/* ---- measuring ----------------------------------------------------------------------------- */

/* A runtime error (3) outranks a missed target (1). */
static int worse(int rc, int other) { return rc == KF_EXIT_RUNTIME || other == KF_EXIT_OK ? rc : other; }

static int row_exit(const bench_row *w)
{
    if (w->status == ST_ERROR) return KF_EXIT_RUNTIME;
    if (w->status == ST_MISSED || w->status == ST_SPILLS || w->startup == ST_MISSED) return KF_EXIT_FAIL;
    return KF_EXIT_OK;
}

static void measure_row(kf_bench_dev *d, const bench_opts *o, const run_info *ri, bench_row *w)
{
    kf_error err = {0};
    const kf_bench_prep *p = w->p;
    if (kf_bench_not_applicable(p, d->backend, w->error, sizeof w->error)) {
        w->status = ST_SKIPPED;
        return;
    }
    if (kf_bench_measure(d, p, &o->timing, &w->r, &err) != KF_OK) {
        snprintf(w->error, sizeof w->error, "%s", err.msg);
        w->status = ST_ERROR;
        kf_error_clear(&err);
        return;
    }
    w->gbps = p->bytes / (w->r.median * 1e6);
    w->x = ri->copy > 0 ? w->gbps / ri->copy : 0;
    w->tflops = p->flops / (w->r.median * 1e9);
    w->status = p->bench->target ? (w->x >= p->bench->target ? ST_MET : ST_MISSED) : ST_REPORT;
    for (uint32_t s = 0; s < p->nsteps; s++)
        if (w->r.res[s].local_bytes) w->status = ST_SPILLS;
    if (!p->bench->startup) return;
    if (kf_bench_startup(d, p, &w->cold, &w->warm, &err) != KF_OK) {
        snprintf(w->error, sizeof w->error, "startup: %s", err.msg);
        w->status = ST_ERROR;
        w->cold = 0;
        kf_error_clear(&err);
        return;
    }
    w->startup = w->warm <= p->bench->startup * w->cold ? ST_MET : ST_MISSED;
}

/* Prints, per bench and path with more than one variant, the fastest. */
static void print_best(const bench_state *s, const bench_row *rows, size_t n, FILE *f)
{
    for (size_t i = 0; i < n; i++) {
        const bench_row *best = NULL, *def = NULL;
        int count = 0;
        bool first = true;
        for (size_t j = 0; j < n; j++) {
            if (rows[j].p->bench != rows[i].p->bench || rows[j].backend != rows[i].backend) continue;
            if (j < i) first = false;
            count++;
            if (!rows[j].p->variant) def = &rows[j];
            if (rows[j].status != ST_ERROR && rows[j].status != ST_SKIPPED && (!best || rows[j].r.median < best->r.median))
                best = &rows[j];
        }
        if (!first || count < 2 || !best) continue;
        fprintf(f, "best %s [%s]: %s, %.4f ms, %.3f x copy", best->p->bench->name, kf_cli_backend_name(best->backend),
                variant_label(best->p), best->r.median, best->x);
        if (def && def != best && def->status != ST_ERROR && def->status != ST_SKIPPED) fprintf(f, " (default %.4f ms, %.3f x copy)", def->r.median, def->x);
        fputc('\n', f);
    }
    (void)s;
}

static int measure_host(kf_bench_dev *d, run_info *ri, FILE *f)
{
    kf_error err = {0};
    if (kf_bench_host_cost(d, &ri->host, &err) != KF_OK) {
        fprintf(stderr, "kforge bench: host cost: %s\n", err.msg);
        return KF_EXIT_RUNTIME;
    }
    ri->host_measured = true;
    ri->host_status = ri->host.plan <= 1.05 * ri->host.bare ? ST_MET : ST_MISSED;
    if (f)
        fprintf(f, "host us/launch: bare cuLaunchKernel %.2f; pre-sorted plan %.2f (%.2fx, target <= 1.05x: %s); "
                   "async dispatch %.2f (%.2fx)\n",
                ri->host.bare, ri->host.plan, ri->host.plan / ri->host.bare, status_name[ri->host_status],
                ri->host.async, ri->host.async / ri->host.bare);
    return ri->host_status == ST_MET ? KF_EXIT_OK : KF_EXIT_FAIL;
}

static void column_widths(const bench_state *s, run_info *ri)
{
    ri->width = 10;
    ri->vwidth = 0;
    for (size_t i = 0; i < s->preps.len; i++) {
        int n = (int)strlen(s->preps.data[i].bench->name);
        if (n > ri->width) ri->width = n;
        int v = (int)strlen(variant_label(&s->preps.data[i]));
        if (s->preps.data[i].variant && v > ri->vwidth) ri->vwidth = v;
    }
    if (ri->vwidth && ri->vwidth < 7) ri->vwidth = 7;
}

/* Every prepared bench on every path asked for. */
static int measure_all(bench_state *s, kf_bench_dev *devs, int ndev, run_info *ri)
{
    FILE *f = s->o.json && !s->o.json_path ? NULL : stdout;
    bench_row *rows = calloc(s->preps.len * (size_t)ndev + 1, sizeof *rows);
    if (!rows) return KF_EXIT_RUNTIME;
    size_t n = 0;
    int rc = KF_EXIT_OK;
    if (f) print_header(ri, f);
    for (size_t i = 0; i < s->preps.len; i++)
        for (int d = 0; d < ndev; d++) {
            bench_row *w = &rows[n++];
            *w = (bench_row){.p = &s->preps.data[i], .backend = devs[d].backend};
            measure_row(&devs[d], &s->o, ri, w);
            if (f) print_row(ri, w, f), fflush(f);
            if (w->status == ST_ERROR) fprintf(stderr, "kforge bench: %s [%s]: %s\n", w->p->bench->name,
                                                kf_cli_backend_name(w->backend), w->error);
            rc = worse(rc, row_exit(w));
        }
    if (f) print_best(s, rows, n, f);
    if (!s->o.file && !s->o.names.len) rc = worse(rc, measure_host(&devs[0], ri, f));   /* the whole library */
    if (s->o.json) rc = json_output(&s->o, ri, rows, n, rc);
    for (size_t i = 0; i < n; i++) kf_bench_result_free(&rows[i].r);
    free(rows);
    return rc;
}

/* ---- the device phase --------------------------------------------------------------------------- */

/* Removes a directory tree the bench made (its private caches). */
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

typedef struct {
    char cache[32], nv[32];
} private_caches;

/* Start-up timings must not wipe the user's cache and must see the real
 * PTX JIT: a private kforge cache, and the driver's JIT cache off (before
 * cuInit) and pointed at an empty private directory should it be used. */
static bool private_caches_make(private_caches *pc)
{
    snprintf(pc->cache, sizeof pc->cache, "/tmp/kforge-bench-XXXXXX");
    snprintf(pc->nv, sizeof pc->nv, "/tmp/kforge-bench-nv-XXXXXX");
    if (!mkdtemp(pc->cache) || !mkdtemp(pc->nv)) return false;
    setenv("KFORGE_CACHE_DIR", pc->cache, 1);
    setenv("KFORGE_CACHE", "1", 1);
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    setenv("CUDA_CACHE_PATH", pc->nv, 1);
    return true;
}

static void private_caches_remove(private_caches *pc)
{
    if (pc->cache[0] && strchr(pc->cache, 'X') == NULL) {
        kf_cache_clear(true, NULL, NULL);
        remove_tree(pc->cache);
    }
    if (pc->nv[0] && strchr(pc->nv, 'X') == NULL) remove_tree(pc->nv);
}

static int device_phase(bench_state *s)
{
    bool startup = false;
    for (size_t i = 0; i < s->preps.len; i++) startup |= s->preps.data[i].bench->startup > 0;
    private_caches pc = {{0}, {0}};
    if (startup && !private_caches_make(&pc)) {
        fprintf(stderr, "kforge bench: error: cannot create a temporary directory in /tmp\n");
        return KF_EXIT_RUNTIME;
    }
    kf_bench_dev devs[2];
    memset(devs, 0, sizeof devs);
    int ndev = 0, rc = KF_EXIT_OK;
    unsigned want = s->o.backends ? s->o.backends : (1u << KF_BACKEND_CUDA) | (1u << KF_BACKEND_PTX);
    kf_error err = {0};
    for (int b = KF_BACKEND_CUDA; b <= KF_BACKEND_PTX && rc == KF_EXIT_OK; b++) {
        if (!(want & (1u << b))) continue;
        if (kf_bench_dev_open((kf_backend)b, &devs[ndev++], &err) != KF_OK) {
            fprintf(stderr, "kforge bench: %s\n", err.msg);
            rc = KF_EXIT_RUNTIME;
        }
    }
    run_info ri = {.copy_runs = 20, .flush = s->o.timing.flush};
    if (rc == KF_EXIT_OK && kf_bench_copy_bandwidth(&devs[0], ri.copy_runs, &ri.copy, &err) != KF_OK) {
        fprintf(stderr, "kforge bench: copy: %s\n", err.msg);
        rc = KF_EXIT_RUNTIME;
    }
    if (rc == KF_EXIT_OK) {
        ri.device = kf_device_name(devs[0].dev);
        ri.flush_bytes = devs[0].flush_bytes;
        column_widths(s, &ri);
        rc = measure_all(s, devs, ndev, &ri);
    }
    for (int d = 0; d < ndev; d++) kf_bench_dev_close(&devs[d]);
    private_caches_remove(&pc);
    kf_error_clear(&err);
    return rc;
}

/* --list: what would be measured, with no device. */
static int list_preps(const bench_state *s)
{
    for (size_t i = 0; i < s->preps.len; i++) {
        const kf_bench_prep *p = &s->preps.data[i];
        printf("%s  %s  bytes %.0f", p->bench->name, variant_label(p), p->bytes);
        if (p->flops) printf("  flops %.0f", p->flops);
        if (p->bench->target) printf("  target %.2f", p->bench->target);
        if (p->bench->startup) printf("  startup %.2f", p->bench->startup);
        printf("  steps:");
        for (uint32_t st = 0; st < p->nsteps; st++) printf(" %s", p->steps[st].k->name);
        putchar('\n');
    }
    printf("%zu benches\n", s->preps.len);
    return KF_EXIT_OK;
}

static void state_free(bench_state *s)
{
    for (size_t i = 0; i < s->preps.len; i++) kf_bench_prep_free(&s->preps.data[i]);
    KF_VEC_FREE(&s->preps);
    free(s->sel);
    for (size_t i = 0; i < s->variants.len; i++) kf_bench_variant_free(&s->variants.data[i]);
    KF_VEC_FREE(&s->variants);
    kf_bench_set_free(&s->set);
    kf_arena_free(&s->arena);
    kf_cli_kernel_args_free(&s->o.k);
    KF_VEC_FREE(&s->o.names);
    KF_VEC_FREE(&s->o.variants);
    KF_VEC_FREE(&s->o.sweeps);
}

int kf_cmd_bench(int argc, char **argv)
{
    if (kf_cli_help(argc, argv, usage)) return KF_EXIT_OK;
    bench_state s;
    memset(&s, 0, sizeof s);
    s.o.timing = (kf_bench_timing){0, 0, 200.0, true};
    int rc = parse_args(argc, argv, &s.o);
    if (rc == KF_EXIT_OK) rc = cli_variants(&s);
    if (rc == KF_EXIT_OK) rc = s.o.file ? file_bench(&s) : library_benches(&s);
    if (rc == KF_EXIT_OK) rc = prepare_all(&s);
    if (rc == KF_EXIT_OK) rc = s.o.list ? list_preps(&s) : device_phase(&s);
    state_free(&s);
    return rc;
}
