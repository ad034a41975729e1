/* kforge test [PATH...]: runs golden-output cases (golden_case.h) on every
 * backend this machine has: the CPU interpreter always, CUDA-C and PTX when
 * a device opens (otherwise one "skipped: ..." line per backend). One line
 * per case and backend,
 *     PASS softmax_f16_64x1024 [cpu] max_abs_err=2.4e-07 max_ulp=1
 *     FAIL saxpy_100000 [ptx] y[17]: got 1.5, want 1.25 (...)
 *     SKIP raw_wmma_gemm_16 [cpu] not applicable: raw CUDA-C runs on the cuda backend (NVRTC) only
 * and last exactly "N passed, N failed, N skipped" (skipped: runs on a
 * backend that is not available or does not apply). Exit 1 on any failure,
 * 2 when a PATH, a case file or a .npy file it names is unusable (missing
 * or malformed; the rest still run). PATH is a .case file or a directory
 * of them (default: kernels/cases, found from the working directory or
 * next to the kforge binary's source tree). -k PATTERN keeps the cases
 * whose name matches (a shell pattern, or a substring when it has no * ?
 * or [). -j N runs N cases at a time, each worker with its own devices,
 * and still lists them in order. --backend (repeatable) restricts the
 * backends. -O0 compiles the cases without the IR optimiser. --same-as-O0
 * also runs each case on the CPU compiled at -O0 and at the chosen level
 * and requires the same bits in every buffer afterwards (or the same
 * error): one line per case,
 *     SAME softmax_f16_64x1024 [cpu -O0]
 *     FAIL saxpy_100000 [cpu -O0] y[17]: 0x3fa00000 at -O0, 0x3fa00001 optimised
 * which catches an optimiser bug that every backend, reading the same
 * optimised IR, would share. Running one case is tools/test_run.c. */
#include <dirent.h>
#include <fnmatch.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_run.h"

static const char usage[] =
    "kforge test [--backend cpu|cuda|ptx]... [-O0|-O1] [--same-as-O0] [-k PATTERN] [-j N] [PATH...]\n"
    "            (PATH: a .case file or a directory of them; default kernels/cases)";

typedef KF_VEC(char *) path_list;

typedef struct {
    kf_test_opts o;
    const char *pattern;    /* -k */
    unsigned jobs;          /* -j */
    path_list cases;        /* every case to run, in order (heap strings) */
} test_args;

/* ---- which cases ------------------------------------------------------------- */

/* The case's name (its file name without .case) matches -k. */
static bool selected(const test_args *a, const char *path)
{
    if (!a->pattern) return true;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char name[1024];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(base) - 5), base);
    if (strpbrk(a->pattern, "*?[")) return fnmatch(a->pattern, name, 0) == 0;
    return strstr(name, a->pattern) != NULL;
}

static int add_case(test_args *a, const char *path)
{
    if (!selected(a, path)) return KF_EXIT_OK;
    char *p = strdup(path);
    if (p && KF_VEC_PUSH(&a->cases, p)) return KF_EXIT_OK;
    free(p);
    return KF_EXIT_RUNTIME;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every *.case of a directory, in name order. */
static int add_dir(test_args *a, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "kforge test: error: cannot open directory '%s'\n", dir);
        return KF_EXIT_USAGE;
    }
    path_list names = {0};
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= 5 || strcmp(de->d_name + len - 5, ".case")) continue;
        char *p = malloc(strlen(dir) + len + 2);
        if (p) sprintf(p, "%s/%s", dir, de->d_name);
        if (!p || !KF_VEC_PUSH(&names, p)) free(p);
    }
    closedir(d);
    int rc = KF_EXIT_OK;
    if (!names.len) {
        fprintf(stderr, "kforge test: error: no .case files in directory '%s'\n", dir);
        rc = KF_EXIT_USAGE;
    }
    if (names.len) qsort(names.data, names.len, sizeof *names.data, cmp_str);
    for (size_t i = 0; i < names.len; i++) {
        if (rc == KF_EXIT_OK) rc = add_case(a, names.data[i]);
        free(names.data[i]);
    }
    KF_VEC_FREE(&names);
    return rc;
}

static int add_path(test_args *a, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "kforge test: error: no such case file or directory '%s'\n", path);
        return KF_EXIT_USAGE;
    }
    if (S_ISDIR(st.st_mode)) return add_dir(a, path);
    size_t len = strlen(path);
    if (len < 5 || strcmp(path + len - 5, ".case")) {
        fprintf(stderr, "kforge test: error: '%s' is not a .case file; expected a .case file or a directory of them\n", path);
        return KF_EXIT_USAGE;
    }
    return add_case(a, path);
}

/* kernels/cases from the working directory, else relative to the binary
 * (build/kforge -> ../kernels/cases). */
static const char *default_dir(char *buf, size_t size)
{
    struct stat st;
    if (stat("kernels/cases", &st) == 0 && S_ISDIR(st.st_mode)) return "kernels/cases";
    ssize_t n = readlink("/proc/self/exe", buf, size - 32);
    if (n <= 0) return "kernels/cases";
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (slash) strcpy(slash, "/../kernels/cases");
    return buf;
}

/* ---- options ----------------------------------------------------------------- */

static int value_opt(void *args, const char *opt, char *val)
{
    test_args *a = args;
    kf_backend b;
    uint64_t n;
    if (!strcmp(opt, "--backend")) {
        if (!kf_cli_backend_parse(val, &b))
            return kf_cli_usage_error("test", usage, "unknown backend '%s': expected cpu, cuda or ptx", val);
        a->o.only |= 1u << b;
    } else if (!strcmp(opt, "-k")) {
        a->pattern = val;
    } else {
        if (!kf_value_parse_u64(val, strlen(val), &n) || !n || n > 64)
            return kf_cli_usage_error("test", usage, "bad -j '%s': expected 1 to 64 cases at a time", val);
        a->jobs = (unsigned)n;
    }
    return KF_EXIT_OK;
}

static int parse_args(int argc, char **argv, test_args *a, path_list *paths)
{
    static const char *const vopts[] = {"--backend", "-k", "-j"};
    for (int i = 0; i < argc;) {
        if (kf_cli_end_of_options(argv, &i)) continue;
        int o = kf_cli_value_opts(argc, argv, &i, vopts, sizeof vopts / sizeof vopts[0], "test", value_opt, a);
        if (o < 0) return KF_EXIT_USAGE;
        if (o > 0) continue;
        if (!kf_cli_is_option(argv[i])) {
            if (!KF_VEC_PUSH(paths, argv[i++])) return KF_EXIT_RUNTIME;
        } else if (kf_cli_opt_level(argv[i], &a->o.opt)) {
            i++;
        } else if (!strcmp(argv[i], "--same-as-O0")) {
            a->o.same_as_O0 = true, i++;
        } else {
            return kf_cli_usage_error("test", usage, "unknown option '%s'", argv[i]);
        }
    }
    return KF_EXIT_OK;
}

/* Tries each backend that may run once: the ones that open are available
 * (their devices go to the first worker); the others print a "skipped:"
 * line, and one asked for with --backend is an error. */
static int open_backends(kf_test_opts *o, kf_test_worker *first)
{
    for (int b = KF_BACKEND_CPU; b <= KF_BACKEND_PTX; b++) {
        if (o->only && !(o->only & (1u << b))) continue;
        kf_error err = {0};
        o->available[b] = kf_device_open((kf_backend)b, 0, &first->dev[b], &err) == KF_OK;
        if (!o->available[b] && o->only) {
            fprintf(stderr, "kforge test: error: --backend %s was asked for but is not available: %s\n",
                    kf_cli_backend_name((kf_backend)b), err.msg);
            return KF_EXIT_RUNTIME;
        }
        if (!o->available[b]) printf("skipped: %s backend: %s\n", kf_cli_backend_name((kf_backend)b), err.msg);
        kf_error_clear(&err);
    }
    return KF_EXIT_OK;
}

/* ---- running the cases: N workers, the listing in order ---------------------- */

typedef struct {
    char *text;             /* what the case printed */
    size_t len;
    kf_test_counts n;
    bool done;
} case_result;

typedef struct {
    const test_args *a;
    case_result *res;
    size_t next;            /* the next case to take */
    pthread_mutex_t lock;
    pthread_cond_t finished;
} pool;

static void run_one(kf_test_worker *w, pool *p, size_t i)
{
    case_result *r = &p->res[i];
    w->n = &r->n;
    w->out = open_memstream(&r->text, &r->len);
    if (w->out) {
        kf_test_case_run(w, p->a->cases.data[i]);
        fclose(w->out);
    } else {
        r->n.failed++;
        fprintf(stderr, "kforge test: error: out of memory running %s\n", p->a->cases.data[i]);
    }
    pthread_mutex_lock(&p->lock);
    r->done = true;
    pthread_cond_broadcast(&p->finished);
    pthread_mutex_unlock(&p->lock);
}

static void work(kf_test_worker *w, pool *p)
{
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->a->cases.len) return;
        run_one(w, p, i);
    }
}

typedef struct {
    kf_test_worker w;
    pool *p;
} thread_arg;

static void *worker_main(void *arg)
{
    thread_arg *t = arg;
    work(&t->w, t->p);
    kf_test_worker_close(&t->w);
    return NULL;
}

/* Prints a finished case's lines and adds its counts. */
static void take(case_result *r, kf_test_counts *total)
{
    if (r->len) fwrite(r->text, 1, r->len, stdout);
    fflush(stdout);
    free(r->text);
    r->text = NULL;
    total->passed += r->n.passed;
    total->failed += r->n.failed;
    total->skipped += r->n.skipped;
    total->bad_input |= r->n.bad_input;
}

/* Prints each case's lines as soon as it and every case before it are done. */
static void print_in_order(pool *p, kf_test_counts *total)
{
    for (size_t i = 0; i < p->a->cases.len; i++) {
        pthread_mutex_lock(&p->lock);
        while (!p->res[i].done) pthread_cond_wait(&p->finished, &p->lock);
        pthread_mutex_unlock(&p->lock);
        take(&p->res[i], total);
    }
}

/* Starts the -j workers as threads (the first takes the devices already
 * open); returns how many started. */
static unsigned start_workers(pool *p, kf_test_worker *first, thread_arg *t, pthread_t *tid, unsigned jobs)
{
    unsigned started = 0;
    for (unsigned j = 0; j < jobs; j++) {
        t[j] = (thread_arg){started == 0 ? *first : (kf_test_worker){.o = first->o}, p};
        if (pthread_create(&tid[started], NULL, worker_main, &t[j]) != 0) continue;
        if (started++ == 0) memset(first->dev, 0, sizeof first->dev);   /* that thread owns them now */
    }
    return started;
}

/* With -j 1 the cases run here, each listed when it ends; with more, the
 * workers are threads and this one lists the cases in order. */
static int run_all(const test_args *a, kf_test_worker *first, kf_test_counts *total)
{
    pool p = {a, calloc(a->cases.len + 1, sizeof(case_result)), 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
    unsigned jobs = a->jobs > 1 && a->cases.len > 1 ? a->jobs : 1;
    thread_arg *t = calloc(jobs, sizeof *t);
    pthread_t *tid = calloc(jobs, sizeof *tid);
    int rc = KF_EXIT_OK;
    unsigned started = p.res && t && tid && jobs > 1 ? start_workers(&p, first, t, tid, jobs) : 0;
    if (!p.res || !t || !tid) {
        fprintf(stderr, "kforge test: error: out of memory\n");
        rc = KF_EXIT_RUNTIME;
    } else if (started) {
        print_in_order(&p, total);
    } else {
        for (size_t i = 0; i < a->cases.len; i++) {
            run_one(first, &p, i);
            take(&p.res[i], total);
        }
    }
    for (unsigned j = 0; j < started; j++) pthread_join(tid[j], NULL);
    free(p.res), free(t), free(tid);
    return rc;
}

int kf_cmd_test(int argc, char **argv)
{
    if (kf_cli_help(argc, argv, usage)) return KF_EXIT_OK;
    test_args a = {0};
    path_list paths = {0};
    kf_test_worker first = {.o = &a.o};
    kf_test_counts total = {0};
    char buf[4096];
    int rc = parse_args(argc, argv, &a, &paths);
    if (rc == KF_EXIT_OK && paths.len == 0) rc = add_path(&a, default_dir(buf, sizeof buf));
    for (size_t i = 0; i < paths.len && rc == KF_EXIT_OK; i++) rc = add_path(&a, paths.data[i]);
    if (rc == KF_EXIT_OK && !a.cases.len)
        rc = kf_cli_usage_error("test", usage, "no case matches -k '%s'", a.pattern ? a.pattern : "");
    if (rc == KF_EXIT_OK) rc = open_backends(&a.o, &first);
    if (rc == KF_EXIT_OK) rc = run_all(&a, &first, &total);
    kf_test_worker_close(&first);
    for (size_t i = 0; i < a.cases.len; i++) free(a.cases.data[i]);
    KF_VEC_FREE(&a.cases);
    KF_VEC_FREE(&paths);
    if (rc != KF_EXIT_OK) return rc;
    printf("%u passed, %u failed, %u skipped\n", total.passed, total.failed, total.skipped);
    return total.bad_input ? KF_EXIT_USAGE : total.failed ? KF_EXIT_FAIL : KF_EXIT_OK;
}
