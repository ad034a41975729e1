/* kforge-difftest: the command line of the differential tester (the parts
 * are described in difftest.h). Exit status: 0 no failure, 1 failures,
 * 2 usage error, 3 the run could not be done (no GPU, ...). */
#include "difftest.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: kforge-difftest [--seed S] [--first K] [--count N] [--backends cpu,cuda,ptx] [--no-gpu]\n"
    "                       [-j N] [--batch B] [--save DIR] [--no-shrink] [--shrink-time S] [--max-saves N]\n"
    "                       [--timeout S] [--launch-timeout S] [--avoid NAME,...] [--gpu-O0 N] [--print K] [--dump K]\n"
    "  Generates programs K..K+N-1 of seed S (each always the same program), runs them on the\n"
    "  interpreter at -O0 (cpu, the reference), on the interpreter with the optimiser (cpu-O1, bit-exact),\n"
    "  through CUDA-C and NVRTC (cuda) and through kforge's PTX (ptx), B programs to a module, in N\n"
    "  worker processes, and compares every output with the reference's. The GPU paths build at the\n"
    "  default level, and at -O0 in every Nth batch (--gpu-O0 N, default 4; 0: never, 1: always).\n"
    "  --no-gpu: instead check that NVRTC and ptxas (sm_80, sm_90) accept every program, with no merged\n"
    "  loads misread in NVRTC's PTX and no pattern ptxas miscompiles in kforge's (back ends cpu,cpu-O1,\n"
    "  nvrtc,ptxas-sm80,ptxas-sm90). Failures are shrunk and saved under DIR.\n"
    "  --avoid: steer around a known open bug (--avoid list names them). --print K: show program K.\n"
    "  --dump K (with --save DIR): save program K as a case to replay (kforge test DIR/.../case.case).\n";

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "kforge-difftest: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

static bool number(const char *s, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-') return false;
    *out = strtoull(s, &end, 10);
    return *end == 0;
}

static bool parse_list(const char *s, const char *const *names, int n, unsigned *bits)
{
    *bits = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < n && strcmp(w, names[i]) != 0) i++;
        if (i == n) return false;
        *bits |= 1u << i;
    }
    return *bits != 0;
}

static int print_program(const kf_dt_options *o, uint64_t k)
{
    kf_dt_prog *p = kf_dt_generate(o->seed, k, o->avoid);
    char *src = p ? kf_dt_source(p) : NULL, *defs = p ? kf_dt_defines(p) : NULL;
    if (!src || !defs) return 3;
    printf("%s", src);
    if (*defs) printf("// -D overrides (kforge -D NAME=VALUE):\n");
    for (char *save, *d = strtok_r(defs, "\n", &save); d; d = strtok_r(NULL, "\n", &save)) printf("// %s\n", d);   /* each line a comment */
    free(src);
    free(defs);
    kf_dt_prog_free(p);
    return 0;
}

static int dump_program(const kf_dt_options *o, uint64_t k)
{
    char dir[4096];
    kf_error err = {0};
    if (!o->save_dir) return bad("%s needs --save DIR", "--dump");
    if (kf_dt_dump(o, k, dir, sizeof dir, &err) != KF_OK) {
        fprintf(stderr, "kforge-difftest: %s\n", err.msg);
        kf_error_clear(&err);
        return 3;
    }
    printf("%s\n", dir);
    return 0;
}

/* An option that takes a value; false when the option or its value is bad. */
static bool value_option(kf_dt_options *o, const char *a, const char *v, int64_t *print, int64_t *dump,
                         bool *backends_given)
{
    uint64_t n = 0;
    bool num = number(v, &n);
    if (!strcmp(a, "--seed") && num) o->seed = n;
    else if (!strcmp(a, "--first") && num) o->first = n;
    else if (!strcmp(a, "--count") && num && n) o->count = n;
    else if (!strcmp(a, "-j") && num && n && n <= 256) o->jobs = (unsigned)n;
    else if (!strcmp(a, "--batch") && num && n && n <= 1000) o->batch = (unsigned)n;
    else if (!strcmp(a, "--timeout") && num && n) o->timeout_s = (unsigned)n;
    else if (!strcmp(a, "--launch-timeout") && num && n) o->launch_timeout_s = (unsigned)n;
    else if (!strcmp(a, "--shrink-time") && num && n) o->shrink_s = (unsigned)n;
    else if (!strcmp(a, "--max-saves") && num && n) o->max_saves = (unsigned)n;
    else if (!strcmp(a, "--print") && num) *print = (int64_t)n;
    else if (!strcmp(a, "--gpu-O0") && num && n <= 1000000) o->gpu_o0_every = (unsigned)n;
    else if (!strcmp(a, "--dump") && num) *dump = (int64_t)n;
    else if (!strcmp(a, "--save") && v) o->save_dir = v;
    else if (!strcmp(a, "--backends") && v && parse_list(v, kf_dt_backend_names, KF_DT_NBACKEND, &o->backends))
        *backends_given = true;
    else if (!strcmp(a, "--avoid") && v && parse_list(v, kf_dt_avoid_names, KF_DT_NAVOID, &o->avoid)) {
    } else return false;
    return true;
}

int main(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    kf_dt_options o = {.seed = 1, .count = 100, .jobs = cpus > 0 ? (unsigned)cpus : 1, .batch = 100, .shrink = true,
                       .gpu_o0_every = 4};
    o.backends = 1u << KF_DT_CPU | 1u << KF_DT_CPUO1 | 1u << KF_DT_CUDA | 1u << KF_DT_PTX;
    bool no_gpu = false, backends_given = false;
    int64_t print = -1, dump = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-gpu")) no_gpu = true;
        else if (!strcmp(a, "--no-shrink")) o.shrink = false;
        else if (!strncmp(a, "-j", 2) && a[2] && value_option(&o, "-j", a + 2, &print, &dump, &backends_given)) continue;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) return printf("%s", usage), 0;
        else if (!strcmp(a, "--avoid") && v && !strcmp(v, "list")) {
            for (int k = 0; k < KF_DT_NAVOID; k++) printf("%-20s %s\n", kf_dt_avoid_names[k], kf_dt_avoid_why[k]);
            return 0;
        } else if (value_option(&o, a, v, &print, &dump, &backends_given)) i++;
        else return bad(a[0] == '-' ? "bad or missing value for %s" : "unknown argument %s", a);
    }
    if (print >= 0) return print_program(&o, (uint64_t)print);
    if (dump >= 0) return dump_program(&o, (uint64_t)dump);
    if (no_gpu && !backends_given)
        o.backends = 1u << KF_DT_CPU | 1u << KF_DT_CPUO1 | 1u << KF_DT_NVRTC | 1u << KF_DT_PTXAS80 | 1u << KF_DT_PTXAS90;
    o.backends |= 1u << KF_DT_CPU;   /* the reference always runs */
    kf_dt_summary sum;
    kf_error err = {0};
    kf_status st = kf_dt_run(&o, &sum, &err);
    char line[2048];
    kf_dt_summary_line(&sum, &o, line, sizeof line);
    printf("%s\n", line);
    if (st != KF_OK) {
        fprintf(stderr, "kforge-difftest: %s\n", err.msg);
        return 3;
    }
    return kf_dt_failures(&sum) ? 1 : 0;
}
