/* The parent of kforge-difftest: splits the programs into batches, runs up
 * to `jobs` worker processes at once (fork; each batch is one module, so one
 * NVRTC compile and one JIT per GPU path; interpretation, NVRTC and the JIT
 * of different batches run in parallel, and several processes share the
 * GPU fine), collects every (program, back end) result from the workers'
 * pipes, and then shrinks and saves the failures, again in workers.
 *
 * The parent never touches CUDA, so that every worker it forks can start
 * the driver afresh. A worker that faults the GPU context, hangs in a
 * launch, or dies is replaced: the batch goes on from the failing program,
 * which is not run again on that back end; a worker that dies while
 * building is retried on each half of its batch until the program that
 * breaks the build is alone. */
#include "driver.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { NONE = 0xff };

typedef struct {
    pid_t pid;
    int fd;
    dt_task task;
    double started;
    bool killed;                 /* by the parent, for time */
    char buf[16384];
    size_t len;
    bool running;                /* a program is being run: run_k on run_be */
    uint64_t run_k;
    int run_be;
    int build_be;                /* building for this back end (-1: no) */
} worker;

typedef struct {
    const kf_dt_options *o;
    uint8_t *st;                 /* [program][backend]: kf_dt_status or NONE */
    char **detail;               /* [program][backend]: text of a failure */
    KF_VEC(dt_task) queue;
    size_t qhead;
    worker *w;
    unsigned nw;
    bool fatal;
    kf_error *err;
    kf_dt_summary *sum;
} pool;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int backend_of(const char *name)
{
    for (int b = 0; b < KF_DT_NBACKEND; b++)
        if (strcmp(name, kf_dt_backend_names[b]) == 0) return b;
    return -1;
}

static int status_of(const char *word)
{
    if (strcmp(word, "compile") == 0) return KF_DT_COMPILE;   /* "compile failure" is written as "compile" */
    for (int s = 0; s < KF_DT_NSTATUS; s++)
        if (strcmp(word, kf_dt_status_names[s]) == 0) return s;
    return -1;
}

static bool push(pool *p, dt_task t)
{
    if (KF_VEC_PUSH(&p->queue, t)) return true;
    p->fatal = true;
    kf_error_set(p->err, KF_ERR_NOMEM, "out of memory queueing work");
    return false;
}

/* ---- results ----------------------------------------------------------------------- */
static void record(pool *p, uint64_t k, int be, int status, const char *detail)
{
    if (k < p->o->first || k - p->o->first >= p->o->count || be < 0 || status < 0) return;
    size_t at = (size_t)(k - p->o->first) * KF_DT_NBACKEND + (size_t)be;
    p->st[at] = (uint8_t)status;
    free(p->detail[at]);
    p->detail[at] = NULL;
    if (status == KF_DT_OK) return;
    p->detail[at] = strdup(detail ? detail : "");
    fprintf(stderr, "kforge-difftest: seed %llu program %llu: %s %s: %s\n", (unsigned long long)p->o->seed,
            (unsigned long long)k, kf_dt_backend_names[be], kf_dt_status_names[status], detail ? detail : "");
}

static void handle_line(pool *p, worker *w, char *line)
{
    char kind = line[0], name[32] = "", word[32] = "";
    unsigned long long k = 0;
    int off = 0;
    if (kind == 'S' && sscanf(line, "S %llu %31s %31s %n", &k, name, word, &off) >= 3) {
        record(p, k, backend_of(name), status_of(word), off ? line + off : "");
        w->running = false;
    } else if (kind == 'R' && sscanf(line, "R %llu %31s", &k, name) == 2) {
        w->running = true;
        w->run_k = k;
        w->run_be = backend_of(name);
        w->build_be = -1;
    } else if (kind == 'C' && sscanf(line, "C %31s", name) == 1) {
        w->build_be = backend_of(name);
        w->running = false;
    } else if (kind == 'E') {
        if (!p->fatal) kf_error_set(p->err, KF_ERR_DEVICE, "%s", line + 2);
        p->fatal = true;
    } else if (kind == 'W') {
        p->sum->saved++;
        fprintf(stderr, "kforge-difftest: saved %s\n", line + 2);
    }
}

static void drain(pool *p, worker *w)
{
    for (;;) {
        ssize_t n = read(w->fd, w->buf + w->len, sizeof w->buf - 1 - w->len);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            return;
        }
        w->len += (size_t)n;
        w->buf[w->len] = 0;
        char *nl;
        while ((nl = strchr(w->buf, '\n'))) {
            *nl = 0;
            handle_line(p, w, w->buf);
            memmove(w->buf, nl + 1, w->len - (size_t)(nl + 1 - w->buf) + 1);
            w->len -= (size_t)(nl + 1 - w->buf);
        }
        if (w->len == sizeof w->buf - 1) w->len = 0;   /* a line too long: dropped */
        if ((size_t)n < sizeof w->buf / 2) return;
    }
}

/* ---- workers ----------------------------------------------------------------------- */
static unsigned batch_timeout(const kf_dt_options *o, const dt_task *t)
{
    if (t->shrink) return (o->shrink_s ? o->shrink_s : 180) + 120;
    if (o->timeout_s) return o->timeout_s;
    unsigned s = 120 + 4 * (unsigned)t->count;
    return s;
}

static void start(pool *p, dt_task t)
{
    int fds[2];
    if (pipe(fds) != 0) {
        kf_error_set(p->err, KF_ERR_IO, "pipe: %s", strerror(errno));
        p->fatal = true;
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        kf_error_set(p->err, KF_ERR_IO, "fork: %s", strerror(errno));
        p->fatal = true;
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        for (unsigned i = 0; i < p->nw; i++) close(p->w[i].fd);
        if (t.shrink) dt_run_shrink(p->o, &t, fds[1]);
        else dt_run_batch(p->o, &t, fds[1]);
        close(fds[1]);
        _exit(DT_EXIT_OK);
    }
    close(fds[1]);
    worker *w = &p->w[p->nw++];
    *w = (worker){.pid = pid, .fd = fds[0], .task = t, .started = now_s(), .build_be = -1};
}

/* The rest of a batch from program k on, without (k, be) (0xff: nothing). */
static void requeue_from(pool *p, const dt_task *t, uint64_t k, int be)
{
    dt_task r = *t;
    uint64_t end = t->first + t->count;
    if (k < t->first || k >= end) return;
    r.first = k;
    r.count = end - k;
    if (be >= 0) {
        if (r.npoison == DT_MAX_POISON) {   /* too many failures in one batch: skip the program */
            r.first = k + 1;
            r.count = end - k - 1;
        } else {
            r.poison[r.npoison++] = (dt_poison){k, (uint8_t)be};
        }
    }
    if (r.count) push(p, r);
}

/* A batch worker that died while building for backend be (or in the front
 * end, be < 0): halve the batch until the program that breaks it is alone. */
static void requeue_build(pool *p, const dt_task *t, int be, const char *why)
{
    if (t->count == 1) {
        record(p, t->first, be < 0 ? KF_DT_CPU : be, KF_DT_COMPILE, why);
        requeue_from(p, t, t->first, be < 0 ? KF_DT_CPU : be);
        return;
    }
    dt_task a = *t, b = *t;
    a.count = t->count / 2;
    b.first = t->first + a.count;
    b.count = t->count - a.count;
    push(p, a);
    push(p, b);
}

static void finished(pool *p, worker *w, int status)
{
    drain(p, w);
    close(w->fd);
    if (w->task.shrink || p->fatal) return;
    char why[160];
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == DT_EXIT_OK) return;
    if (code == DT_EXIT_ERROR) {
        if (!p->fatal) kf_error_set(p->err, KF_ERR_DEVICE, "a worker could not run its batch");
        p->fatal = true;
        return;
    }
    if (code == DT_EXIT_FAULT || code == DT_EXIT_HANG) {   /* its S line said which */
        requeue_from(p, &w->task, w->run_k, w->run_be);
        return;
    }
    snprintf(why, sizeof why, "the worker %s", w->killed ? "took too long (killed)" : "died");
    if (WIFSIGNALED(status)) snprintf(why + strlen(why), sizeof why - strlen(why), " (signal %d)", WTERMSIG(status));
    if (w->running) {
        record(p, w->run_k, w->run_be, w->killed ? KF_DT_HANG : KF_DT_FAULT, why);
        requeue_from(p, &w->task, w->run_k, w->run_be);
    } else {
        requeue_build(p, &w->task, w->build_be, why);
    }
}

static void reap(pool *p)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (unsigned i = 0; i < p->nw; i++) {
            if (p->w[i].pid != pid) continue;
            finished(p, &p->w[i], status);
            p->w[i] = p->w[--p->nw];
            break;
        }
    }
}

static void step(pool *p)
{
    struct pollfd fds[256];
    for (unsigned i = 0; i < p->nw; i++) fds[i] = (struct pollfd){p->w[i].fd, POLLIN, 0};
    if (poll(fds, p->nw, 100) > 0)
        for (unsigned i = 0; i < p->nw; i++)
            if (fds[i].revents & (POLLIN | POLLHUP)) drain(p, &p->w[i]);
    double t = now_s();
    for (unsigned i = 0; i < p->nw; i++) {
        worker *w = &p->w[i];
        if (!w->killed && (t - w->started > batch_timeout(p->o, &w->task) || p->fatal)) {
            kill(w->pid, SIGKILL);
            w->killed = true;
        }
    }
    reap(p);
}

static void run_queue(pool *p)
{
    unsigned jobs = p->o->jobs ? p->o->jobs : 1;
    if (jobs > 256) jobs = 256;
    while ((p->qhead < p->queue.len && !p->fatal) || p->nw) {
        while (p->nw < jobs && p->qhead < p->queue.len && !p->fatal) start(p, p->queue.data[p->qhead++]);
        step(p);
    }
}

/* ---- shrinking the failures ------------------------------------------------------------- */
static void queue_shrinks(pool *p)
{
    unsigned max = p->o->max_saves ? p->o->max_saves : 20, n = 0;
    for (uint64_t i = 0; i < p->o->count && n < max; i++)
        for (int be = 0; be < KF_DT_NBACKEND && n < max; be++) {
            size_t at = (size_t)i * KF_DT_NBACKEND + (size_t)be;
            if (p->st[at] == NONE || p->st[at] == KF_DT_OK) continue;
            dt_task t = {.shrink = true, .index = p->o->first + i, .backend = (uint8_t)be, .status = p->st[at]};
            snprintf(t.detail, sizeof t.detail, "%s", p->detail[at] ? p->detail[at] : "");
            if (!push(p, t)) return;
            n++;
        }
}

/* ---- the run ------------------------------------------------------------------------------ */
static void summarise(pool *p)
{
    for (uint64_t i = 0; i < p->o->count; i++)
        for (int be = 0; be < KF_DT_NBACKEND; be++) {
            uint8_t s = p->st[(size_t)i * KF_DT_NBACKEND + (size_t)be];
            if (s != NONE) p->sum->n[be][s]++;
        }
}

kf_status kf_dt_run(const kf_dt_options *o, kf_dt_summary *sum, kf_error *err)
{
    memset(sum, 0, sizeof *sum);
    double t0 = now_s();
    if (o->save_dir && mkdir(o->save_dir, 0777) != 0 && errno != EEXIST)
        return kf_error_set(err, KF_ERR_IO, "cannot create %s: %s", o->save_dir, strerror(errno));
    if (!getenv("KFORGE_CACHE")) setenv("KFORGE_CACHE", "0", 1);   /* no disk entries for throw-away modules */
    pool p = {.o = o, .err = err, .sum = sum};
    size_t cells = (size_t)o->count * KF_DT_NBACKEND;
    p.st = malloc(cells ? cells : 1);
    p.detail = calloc(cells ? cells : 1, sizeof *p.detail);
    p.w = calloc(256, sizeof *p.w);
    if (!p.st || !p.detail || !p.w) {
        free(p.st), free(p.detail), free(p.w);
        return kf_error_set(err, KF_ERR_NOMEM, "out of memory for %llu programs", (unsigned long long)o->count);
    }
    memset(p.st, NONE, cells);
    unsigned batch = o->batch ? o->batch : 100;
    for (uint64_t f = 0; f < o->count; f += batch)
        push(&p, (dt_task){.first = o->first + f, .count = o->count - f < batch ? o->count - f : batch});
    run_queue(&p);
    summarise(&p);
    sum->programs = o->count;
    sum->seconds = now_s() - t0;
    if (o->save_dir && o->shrink && !p.fatal) {
        double t1 = now_s();
        queue_shrinks(&p);
        run_queue(&p);
        sum->shrink_seconds = now_s() - t1;
    }
    for (size_t i = 0; i < cells; i++) free(p.detail[i]);
    free(p.detail);
    free(p.st);
    free(p.w);
    KF_VEC_FREE(&p.queue);
    return p.fatal ? (err && err->status ? err->status : KF_ERR_DEVICE) : KF_OK;
}

uint64_t kf_dt_failures(const kf_dt_summary *sum)
{
    uint64_t n = 0;
    for (int be = 0; be < KF_DT_NBACKEND; be++)
        for (int s = KF_DT_MISMATCH; s < KF_DT_NSTATUS; s++) n += sum->n[be][s];
    return n;
}

void kf_dt_summary_line(const kf_dt_summary *sum, const kf_dt_options *o, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "difftest: seed %llu, programs %llu..%llu: %llu in %.1f s (%.1f programs/s)",
                                 (unsigned long long)o->seed, (unsigned long long)o->first,
                                 (unsigned long long)(o->first + o->count - 1), (unsigned long long)sum->programs,
                                 sum->seconds, sum->seconds > 0 ? (double)sum->programs / sum->seconds : 0.0);
    for (int be = 0; be < KF_DT_NBACKEND && at < len; be++) {
        if (!(o->backends & (1u << be))) continue;
        uint64_t run = 0;
        for (int s = 0; s < KF_DT_NSTATUS; s++) run += sum->n[be][s];
        at += (size_t)snprintf(buf + at, len - at, "; %s: %llu run, %llu mismatches, %llu compile failures, %llu faults, %llu hangs",
                               kf_dt_backend_names[be], (unsigned long long)run,
                               (unsigned long long)sum->n[be][KF_DT_MISMATCH], (unsigned long long)sum->n[be][KF_DT_COMPILE],
                               (unsigned long long)sum->n[be][KF_DT_FAULT], (unsigned long long)sum->n[be][KF_DT_HANG]);
    }
    if (sum->saved && at < len)
        snprintf(buf + at, len - at, "; %llu saved (shrinking took %.1f s)", (unsigned long long)sum->saved, sum->shrink_seconds);
}
