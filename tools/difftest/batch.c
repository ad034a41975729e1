/* One batch of programs, in a worker process (driver.c forks it): the
 * programs are printed into one module; the front end compiles it once; the
 * interpreter runs every program (the reference); each GPU path builds the
 * whole module once (kf_pipeline_create_module) and runs the programs one
 * by one, or, without a GPU, NVRTC and ptxas check the module. A build that
 * fails is bisected down to the programs that make it fail. Every result
 * goes to the parent as one line on the pipe `fd`:
 *
 *   C <backend>                        about to build for a back end
 *   R <k> <backend>                    about to run program k
 *   S <k> <backend> <status> <detail>  program k's result on a back end
 *   E <message>                        the batch cannot run (no GPU ...)
 *
 * A launch error leaves the CUDA context unusable: the worker reports the
 * fault and exits with DT_EXIT_FAULT, a launch that does not finish within
 * the time limit makes it exit with DT_EXIT_HANG (SIGALRM); the parent
 * starts a new worker for the rest of the batch. */
#include "driver.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- the pipe ------------------------------------------------------------------- */
void dt_say(int fd, const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof line - 2) n = sizeof line - 2;
    for (int i = 0; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r') line[i] = ' ';
    line[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w = write(fd, line + off, (size_t)(n - off));
        if (w <= 0) return;
        off += (int)w;
    }
}

/* ---- the hang watchdog -------------------------------------------------------------- */
static int alarm_fd = -1;
static char alarm_line[96];

static void on_alarm(int sig)
{
    (void)sig;
    ssize_t w = write(alarm_fd, alarm_line, strlen(alarm_line));
    (void)w;
    _exit(DT_EXIT_HANG);
}

/* Arms the watchdog for program k on backend be (0 seconds: disarm). */
static void watchdog(int fd, uint64_t k, kf_dt_backend be, unsigned seconds)
{
    alarm_fd = fd;
    snprintf(alarm_line, sizeof alarm_line, "S %llu %s hang no answer within %u s\n", (unsigned long long)k,
             kf_dt_backend_names[be], seconds);
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

/* ---- one batch ------------------------------------------------------------------------ */
typedef struct {
    const kf_dt_options *o;
    int fd;
    uint32_t n;
    kf_dt_prog **progs;
    dt_item *items;
    bool *alive;              /* still compared (front end and cpu were fine) */
    dt_outputs *ref;          /* the interpreter's outputs */
    const dt_task *task;
} batch;

static uint64_t index_of(const batch *b, uint32_t i) { return b->task->first + i; }

static bool poisoned(const batch *b, uint32_t i, kf_dt_backend be)
{
    for (uint32_t j = 0; j < b->task->npoison; j++)
        if (b->task->poison[j].backend == be &&
            (b->task->poison[j].index == index_of(b, i) || b->task->poison[j].index == DT_ALL))
            return true;
    return false;
}

/* The module of the chosen programs (sel[i]); map[j] is the batch index of
 * kernel j, first[j] (may be NULL) the line where its text begins. */
static kf_status compile_sel(const batch *b, const bool *sel, kf_opt_level level, kf_module **m, uint32_t *map,
                             uint32_t *first, uint32_t *nk, kf_error *err)
{
    dt_item *its = malloc(b->n * sizeof *its);
    if (!its) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    uint32_t k = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if (sel[i]) its[k] = b->items[i], map[k++] = i;
    *nk = k;
    kf_status st = k ? dt_compile(its, k, level, m, first, err) : KF_OK;
    if (!k) *m = NULL;
    free(its);
    return st;
}

/* The front end: programs it refuses are reported (a generator bug). */
static void front_end(batch *b)
{
    for (uint32_t i = 0; i < b->n; i++) {
        if (!b->alive[i]) continue;
        kf_module *m;
        kf_error e = {0};
        if (dt_compile(&b->items[i], 1, KF_OPT_O0, &m, NULL, &e) != KF_OK) {
            dt_say(b->fd, "S %llu cpu compile %s", (unsigned long long)index_of(b, i), e.msg);
            b->alive[i] = false;
        }
        kf_module_free(m);
        kf_error_clear(&e);
    }
}

static void run_cpu(batch *b, kf_module *m, const uint32_t *map, uint32_t nk)
{
    kf_device *dev = NULL;
    kf_error e = {0};
    kf_pipeline **ps = calloc(nk + 1, sizeof *ps);
    if (!ps || kf_device_open(KF_BACKEND_CPU, 0, &dev, &e) != KF_OK || kf_pipeline_create_module(dev, m, ps, &e) != KF_OK) {
        dt_say(b->fd, "E the interpreter cannot start: %s", e.msg);
        exit(DT_EXIT_ERROR);
    }
    for (uint32_t j = 0; j < nk; j++) {
        uint32_t i = map[j];
        dt_say(b->fd, "R %llu cpu", (unsigned long long)index_of(b, i));
        if (dt_run_one(dev, ps[j], b->progs[i], &b->ref[i], &e) != KF_OK) {
            dt_say(b->fd, "S %llu cpu fault %s", (unsigned long long)index_of(b, i), e.msg);
            b->alive[i] = false;
        } else {
            dt_say(b->fd, "S %llu cpu ok", (unsigned long long)index_of(b, i));
        }
        kf_error_clear(&e);
        kf_pipeline_destroy(ps[j]);
    }
    free(ps);
    kf_device_close(dev);
}

/* cpu-O1: the module compiled at the default level (the IR optimiser on)
 * runs on the interpreter; every output must equal the -O0 run's bit for
 * bit (NaN matching NaN). A program the optimised front end refuses, or
 * that faults only when optimised, is reported as such. */
static void run_cpu_o1(batch *b)
{
    uint32_t *map = malloc((b->n + 1) * sizeof *map), nk = 0;
    bool *sel = calloc(b->n + 1, sizeof *sel), *one = calloc(b->n + 1, sizeof *one);
    kf_module *m = NULL;
    kf_device *dev = NULL;
    kf_error e = {0};
    if (!map || !sel || !one || kf_device_open(KF_BACKEND_CPU, 0, &dev, &e) != KF_OK) {
        dt_say(b->fd, "E the interpreter cannot start: %s", e.msg);
        exit(DT_EXIT_ERROR);
    }
    memcpy(sel, b->alive, b->n * sizeof *sel);
    if (compile_sel(b, sel, KF_OPT_DEFAULT, &m, map, NULL, &nk, &e) != KF_OK) {   /* find the ones it refuses */
        for (uint32_t i = 0; i < b->n; i++) {
            if (!sel[i]) continue;
            one[i] = true;
            kf_error_clear(&e);
            if (compile_sel(b, one, KF_OPT_DEFAULT, &m, map, NULL, &nk, &e) != KF_OK) {
                dt_say(b->fd, "S %llu cpu-O1 compile %s", (unsigned long long)index_of(b, i), e.msg);
                sel[i] = false;
            }
            one[i] = false;
            kf_module_free(m);
            m = NULL;
        }
        kf_error_clear(&e);
        if (compile_sel(b, sel, KF_OPT_DEFAULT, &m, map, NULL, &nk, &e) != KF_OK) nk = 0;
    }
    for (uint32_t j = 0; j < nk; j++) {
        uint32_t i = map[j];
        kf_pipeline *pipe = NULL;
        dt_outputs out;
        dt_diff d;
        dt_say(b->fd, "R %llu cpu-O1", (unsigned long long)index_of(b, i));
        kf_error_clear(&e);
        if (kf_pipeline_create(dev, m, &m->kernels[j], &pipe, &e) != KF_OK || dt_run_one(dev, pipe, b->progs[i], &out, &e) != KF_OK) {
            dt_say(b->fd, "S %llu cpu-O1 fault %s", (unsigned long long)index_of(b, i), e.msg);
        } else {
            if (dt_compare(b->progs[i], &b->ref[i], &out, true, &d)) dt_say(b->fd, "S %llu cpu-O1 ok", (unsigned long long)index_of(b, i));
            else dt_say(b->fd, "S %llu cpu-O1 mismatch %s", (unsigned long long)index_of(b, i), d.text);
            dt_outputs_free(&out);
        }
        kf_pipeline_destroy(pipe);
    }
    kf_error_clear(&e);
    kf_module_free(m);
    kf_device_close(dev);
    free(map);
    free(sel);
    free(one);
}

/* ---- building for one back end, bisecting failures -------------------------------------- */
typedef struct {
    kf_dt_backend be;
    kf_device *dev;           /* GPU paths */
    kf_opt_level level;       /* what the module is compiled at (kf_dt_gpu_level) */
} target;

/* Builds (GPU: pipelines into *ps) or checks module m for target t. */
static kf_status build(const target *t, const kf_module *m, kf_pipeline **ps, kf_error *err)
{
    switch (t->be) {
    case KF_DT_NVRTC: return dt_check_nvrtc(m, 90, err);
    case KF_DT_PTXAS80: return dt_check_ptxas(m, 80, err);
    case KF_DT_PTXAS90: return dt_check_ptxas(m, 90, err);
    default: {
        kf_pipeline **own = ps ? ps : calloc(m->nkernels, sizeof *own);
        kf_status st = own ? kf_pipeline_create_module(t->dev, m, own, err) : KF_ERR_NOMEM;
        if (!ps && own && st == KF_OK)
            for (uint32_t j = 0; j < m->nkernels; j++) kf_pipeline_destroy(own[j]);
        if (!ps) free(own);
        return st;
    }
    }
}

/* Among the programs selected in sel, finds those whose build fails
 * (halving the set each time) and reports them; sel loses them. */
static void bisect(batch *b, const target *t, bool *sel, uint32_t lo, uint32_t hi)
{
    bool *part = calloc(b->n, sizeof *part);
    uint32_t count = 0, *map = malloc((b->n + 1) * sizeof *map), nk;
    for (uint32_t i = lo; i < hi; i++) count += (part[i] = sel[i]);
    kf_module *m = NULL;
    kf_error e = {0};
    kf_status st = count ? compile_sel(b, part, t->level, &m, map, NULL, &nk, &e) : KF_OK;
    if (st == KF_OK && m) st = build(t, m, NULL, &e);
    if (st != KF_OK && count == 1) {
        for (uint32_t i = lo; i < hi; i++)
            if (sel[i]) {
                dt_say(b->fd, "S %llu %s compile %s%s%.400s", (unsigned long long)index_of(b, i), kf_dt_backend_names[t->be],
                       e.msg, e.log ? " | " : "", e.log ? e.log : "");
                sel[i] = false;
            }
    } else if (st != KF_OK) {
        uint32_t mid = lo + (hi - lo) / 2;
        bisect(b, t, sel, lo, mid);
        bisect(b, t, sel, mid, hi);
    }
    kf_error_clear(&e);
    kf_module_free(m);
    free(map);
    free(part);
}

static uint32_t arch_of(const target *t)
{
    if (t->be == KF_DT_PTXAS80) return 80;
    if (!t->dev) return 90;
    kf_device_props dp;
    kf_device_props_get(t->dev, &dp);
    return dp.arch;
}

/* Reports the programs whose text holds a line the failed build of module m
 * names (kernel j's text begins at first[j]) and that fail to build alone:
 * an error in one program can make the compiler misread the text after it
 * (an unterminated comment), so a named program is blamed only once it is
 * seen failing by itself. False when none is. */
static bool blame(batch *b, const target *t, const kf_module *m, const kf_error *e, const uint32_t *map,
                  const uint32_t *first, uint32_t nk, bool *sel)
{
    dt_err_line lines[64];
    uint32_t nl = dt_error_lines(m, t->be, arch_of(t), e, lines, 64);
    bool any = false;
    for (uint32_t l = 0; l < nl; l++) {
        uint32_t j = 0;
        while (j + 1 < nk && first[j + 1] <= lines[l].line) j++;
        if (!sel[map[j]]) continue;
        bisect(b, t, sel, map[j], map[j] + 1);   /* reports and drops it when it fails alone */
        any |= !sel[map[j]];
    }
    return any;
}

/* The batch's error for its report: the message and, from the compiler's
 * log, the first line that says "error" (NVRTC names the emitted line and
 * the clash, e.g. `declaration is incompatible with previous "dyn_"`). */
static void batch_error(char *why, size_t n, const kf_error *e)
{
    const char *at = e->log ? strstr(e->log, "error") : NULL;
    while (at && at > e->log && at[-1] != '\n') at--;
    int len = at ? (int)strcspn(at, "\n") : 0;
    snprintf(why, n, "%.300s%s%.*s", e->msg, at ? ": " : "", len > 400 ? 400 : len, at ? at : "");
}

/* The programs built for t (sel), with their pipelines (ps, by batch index)
 * for the GPU paths. A failed build is blamed on the programs whose lines
 * its errors name, or bisected, and built again without them. */
static kf_module *build_all(batch *b, const target *t, bool *sel, kf_pipeline **ps)
{
    uint32_t *map = malloc((b->n + 1) * sizeof *map), *first = malloc((b->n + 1) * sizeof *first), nk = 0;
    kf_pipeline **kp = calloc(b->n + 1, sizeof *kp);
    kf_module *m = NULL;
    kf_error e = {0};
    char why[1024] = "";
    dt_say(b->fd, "C %s", kf_dt_backend_names[t->be]);
    for (int attempt = 0; attempt < 8; attempt++) {
        kf_status st = compile_sel(b, sel, t->level, &m, map, first, &nk, &e);
        if (st == KF_OK && m) st = build(t, m, t->dev ? kp : NULL, &e);
        if (st != KF_OK) batch_error(why, sizeof why, &e);
        if (st == KF_OK || !m) {
            if (st != KF_OK) kf_module_free(m), m = NULL;
            break;
        }
        bool blamed = attempt < 6 && blame(b, t, m, &e, map, first, nk, sel);
        kf_error_clear(&e);
        kf_module_free(m);
        m = NULL;
        if (!blamed) bisect(b, t, sel, 0, b->n);   /* then once more without the failing ones */
    }
    /* Every program builds alone but the batch never did: each is reported
     * as a compile failure with the batch's error, never silently dropped
     * (its back end would otherwise count fewer programs run). */
    for (uint32_t i = 0; i < b->n && !m; i++)
        if (sel[i]) {
            dt_say(b->fd, "S %llu %s compile the batch of %u programs failed to build as a whole: %.700s",
                   (unsigned long long)index_of(b, i), kf_dt_backend_names[t->be], b->n, why);
            sel[i] = false;
        }
    for (uint32_t j = 0; m && t->dev && j < nk; j++) ps[map[j]] = kp[j];
    for (uint32_t i = 0; i < b->n; i++)
        if (sel[i] && m && !t->dev) dt_say(b->fd, "S %llu %s ok", (unsigned long long)index_of(b, i), kf_dt_backend_names[t->be]);
    kf_error_clear(&e);
    free(map);
    free(first);
    free(kp);
    return m;
}

/* ---- the GPU paths: program by program ---------------------------------------------------- */
typedef struct {
    target t;
    bool *sel;
    kf_pipeline **ps;
    kf_module *m;
} gpu_path;

static void run_gpu_one(batch *b, gpu_path *g, uint32_t i)
{
    uint64_t k = index_of(b, i);
    const char *name = kf_dt_backend_names[g->t.be];
    dt_outputs out;
    kf_error e = {0};
    dt_say(b->fd, "R %llu %s", (unsigned long long)k, name);
    watchdog(b->fd, k, g->t.be, b->o->launch_timeout_s ? b->o->launch_timeout_s : 20);
    kf_status st = dt_run_one(g->t.dev, g->ps[i], b->progs[i], &out, &e);
    alarm(0);
    if (st != KF_OK) {   /* the context is gone: let the parent go on in a new worker */
        dt_say(b->fd, "S %llu %s fault %s", (unsigned long long)k, name, e.msg);
        exit(DT_EXIT_FAULT);
    }
    dt_diff d;
    if (dt_compare(b->progs[i], &b->ref[i], &out, false, &d)) dt_say(b->fd, "S %llu %s ok", (unsigned long long)k, name);
    else dt_say(b->fd, "S %llu %s mismatch %s", (unsigned long long)k, name, d.text);
    dt_outputs_free(&out);
}

static void run_gpus(batch *b)
{
    static const kf_dt_backend gpus[2] = {KF_DT_CUDA, KF_DT_PTX};
    gpu_path g[2];
    memset(g, 0, sizeof g);
    int ng = 0;
    for (int j = 0; j < 2; j++) {
        if (!(b->o->backends & (1u << gpus[j]))) continue;
        gpu_path *p = &g[ng++];
        kf_error e = {0};
        p->t.be = gpus[j];
        p->t.level = kf_dt_gpu_level(b->o, b->task->first);
        if (kf_device_open(gpus[j] == KF_DT_CUDA ? KF_BACKEND_CUDA : KF_BACKEND_PTX, 0, &p->t.dev, &e) != KF_OK) {
            dt_say(b->fd, "E %s: %s", kf_dt_backend_names[gpus[j]], e.msg);
            exit(DT_EXIT_ERROR);
        }
        p->sel = calloc(b->n, sizeof *p->sel);
        p->ps = calloc(b->n, sizeof *p->ps);
        for (uint32_t i = 0; i < b->n; i++) p->sel[i] = b->alive[i] && !poisoned(b, i, p->t.be);
        p->m = build_all(b, &p->t, p->sel, p->ps);
    }
    for (uint32_t i = 0; i < b->n; i++)   /* program by program: a fault loses nothing already run */
        for (int j = 0; j < ng; j++)
            if (g[j].sel[i] && g[j].ps[i]) run_gpu_one(b, &g[j], i);
    for (int j = 0; j < ng; j++) {
        for (uint32_t i = 0; i < b->n; i++) kf_pipeline_destroy(g[j].ps[i]);
        kf_module_free(g[j].m);
        free(g[j].ps);
        free(g[j].sel);
        kf_device_close(g[j].t.dev);
    }
}

static void check_cpu_only(batch *b)
{
    static const kf_dt_backend checks[3] = {KF_DT_NVRTC, KF_DT_PTXAS80, KF_DT_PTXAS90};
    bool *sel = calloc(b->n, sizeof *sel);
    for (int j = 0; j < 3; j++) {
        if (!(b->o->backends & (1u << checks[j]))) continue;
        target t = {checks[j], NULL, kf_dt_gpu_level(b->o, b->task->first)};
        for (uint32_t i = 0; i < b->n; i++) sel[i] = b->alive[i] && !poisoned(b, i, checks[j]);
        kf_module_free(build_all(b, &t, sel, NULL));
    }
    free(sel);
}

void dt_run_batch(const kf_dt_options *o, const dt_task *task, int fd)
{
    batch b = {.o = o, .fd = fd, .n = (uint32_t)task->count};
    b.progs = calloc(b.n, sizeof *b.progs);
    b.items = calloc(b.n, sizeof *b.items);
    b.alive = calloc(b.n, sizeof *b.alive);
    b.ref = calloc(b.n, sizeof *b.ref);
    b.task = task;
    if (!b.progs || !b.items || !b.alive || !b.ref) exit(DT_EXIT_ERROR);
    for (uint32_t i = 0; i < b.n; i++) {
        b.progs[i] = kf_dt_generate(o->seed, task->first + i, o->avoid);
        b.items[i].p = b.progs[i];
        snprintf(b.items[i].tag, sizeof b.items[i].tag, "_p%llu", (unsigned long long)(task->first + i));
        b.alive[i] = b.progs[i] && !poisoned(&b, i, KF_DT_CPU);
    }
    uint32_t *map = malloc((b.n + 1) * sizeof *map), nk = 0;
    kf_module *m = NULL;
    kf_error e = {0};
    if (compile_sel(&b, b.alive, KF_OPT_O0, &m, map, NULL, &nk, &e) != KF_OK) {   /* find the ones it refuses */
        kf_error_clear(&e);
        front_end(&b);
    }
    if (!m && compile_sel(&b, b.alive, KF_OPT_O0, &m, map, NULL, &nk, &e) != KF_OK) {
        dt_say(fd, "E the front end refused a batch whose programs it accepted one by one: %s", e.msg);
        exit(DT_EXIT_ERROR);
    }
    if (m) run_cpu(&b, m, map, nk);
    kf_module_free(m);
    if (o->backends & (1u << KF_DT_CPUO1)) run_cpu_o1(&b);
    free(map);
    check_cpu_only(&b);
    run_gpus(&b);
    for (uint32_t i = 0; i < b.n; i++) {
        dt_outputs_free(&b.ref[i]);
        kf_dt_prog_free(b.progs[i]);
    }
    free(b.progs);
    free(b.items);
    free(b.alive);
    free(b.ref);
}
