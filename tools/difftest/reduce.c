/* Shrinking one failure and saving it (a worker forked by driver.c).
 *
 * The oracle that decides whether a candidate (the program with one edit,
 * shrink.c) still fails the same way: first, on the CPU, it must compile and
 * run on the interpreter without a fault, which also gives its reference
 * outputs (for a failure of the front end or the interpreter itself, the
 * candidate must instead fail there with the same message). Then, for NVRTC
 * and ptxas, the valid candidates are checked together as one module and a
 * failing module is bisected to its first failing candidate; for the GPU
 * paths, a grandchild process (this worker never touches CUDA, so each
 * grandchild can) builds them as one module and runs them in order until
 * one fails as the original did: mismatch, fault, hang or build failure. A
 * grandchild that loses its context to a fault of another kind is replaced,
 * starting after that candidate.
 *
 * The result goes to <save_dir>/s<seed>-p<index>-<backend>-<status>/:
 * original.kf and prog.kf (before and after shrinking), case.case (a
 * golden-output case: `kforge test DIR/case.case`), the inputs and the
 * interpreter's outputs as .npy, what the failing back end gave (got_*.npy,
 * for the GPU paths), and README.txt with the failure and how to rerun it. */
#include "driver.h"

#include "../npy.h"
#include "../../ir/numeric.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { CHUNK = 32, MAX_EDITS = 8192 };

typedef struct {
    const kf_dt_options *o;
    const dt_task *t;
    kf_dt_prog *p;
    double deadline;
    char sig[160];          /* the failure's message with names and numbers left out */
} reducer;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The words of a message that identify a failure: from after the last
 * "file:line:col: " (or the first "error"), without quoted names, numbers
 * and parenthesised details. */
static void signature(const char *msg, char *out, size_t len)
{
    const char *at = msg, *e = strstr(msg, "error");
    for (const char *s = strstr(msg, ".kf:"); s; s = strstr(s + 1, ".kf:")) at = s + 4;
    if (at == msg && e) at = e;
    size_t n = 0;
    bool quoted = false;
    for (; *at && n + 1 < len && *at != '\n' && !(at[0] == ' ' && at[1] == ' '); at++) {
        char c = *at;
        if (c == '\'' || c == '"') quoted = !quoted;
        else if (c == '(' || c == '|') break;
        else if (!quoted && !(c >= '0' && c <= '9') && c != ':') out[n++] = c;
    }
    while (n && out[n - 1] == ' ') n--;
    out[n] = 0;
}

/* ---- the CPU side of the oracle ---------------------------------------------------- */
typedef enum { CAND_INVALID, CAND_VALID, CAND_INTERESTING } cand_state;

/* Compiles and runs candidate e on the interpreter. For failures of the
 * front end or the interpreter, a candidate failing the same way is
 * interesting; otherwise a clean run is valid (*out gets its outputs). */
static cand_state cpu_check(const reducer *r, const dt_edit *e, dt_outputs *out)
{
    dt_item it = {r->p, e ? *e : (dt_edit){0}, ""};
    kf_module *m = NULL;
    kf_error err = {0};
    char sig[160];
    bool cpu = r->t->backend == KF_DT_CPU;
    cand_state s = CAND_INVALID;
    kf_status st = dt_compile(&it, 1, KF_OPT_O0, &m, NULL, &err);
    if (st != KF_OK) {
        signature(err.msg, sig, sizeof sig);
        if (cpu && r->t->status == KF_DT_COMPILE && strcmp(sig, r->sig) == 0) s = CAND_INTERESTING;
    } else {
        kf_device *dev = NULL;
        kf_pipeline *pipe = NULL;
        st = kf_device_open(KF_BACKEND_CPU, 0, &dev, &err);
        if (st == KF_OK) st = kf_pipeline_create(dev, m, &m->kernels[0], &pipe, &err);
        if (st == KF_OK) st = dt_run_one(dev, pipe, r->p, out, &err);
        if (st == KF_OK) {
            s = cpu ? CAND_INVALID : CAND_VALID;
            if (cpu) dt_outputs_free(out);
        } else {
            signature(err.msg, sig, sizeof sig);
            if (cpu && r->t->status == KF_DT_FAULT && strcmp(sig, r->sig) == 0) s = CAND_INTERESTING;
        }
        kf_pipeline_destroy(pipe);
        if (dev) kf_device_close(dev);
    }
    kf_error_clear(&err);
    kf_module_free(m);
    return s;
}

/* ---- NVRTC and ptxas: one module of candidates, bisected ----------------------------- */
static kf_status check_items(const reducer *r, const dt_item *its, uint32_t n, char *sig, size_t len)
{
    kf_module *m = NULL;
    kf_error e = {0};
    kf_status st = dt_compile(its, n, kf_dt_gpu_level(r->o, r->t->index), &m, NULL, &e);
    if (st == KF_OK) {
        uint8_t be = r->t->backend;
        st = be == KF_DT_NVRTC ? dt_check_nvrtc(m, 90, &e) : dt_check_ptxas(m, be == KF_DT_PTXAS80 ? 80 : 90, &e);
        if (st != KF_OK) signature(e.log ? e.log : e.msg, sig, len);
    } else {
        st = KF_OK;   /* the front end refuses it: not this failure */
    }
    kf_error_clear(&e);
    kf_module_free(m);
    return st;
}

/* The first of its[lo, hi) whose check fails with the original signature, or -1. */
static int first_failing(const reducer *r, const dt_item *its, uint32_t lo, uint32_t hi)
{
    char sig[160] = "";
    if (hi <= lo || check_items(r, its + lo, hi - lo, sig, sizeof sig) == KF_OK) return -1;
    if (hi - lo == 1) return strcmp(sig, r->sig) == 0 ? (int)lo : -1;
    uint32_t mid = lo + (hi - lo) / 2;
    int k = first_failing(r, its, lo, mid);
    return k >= 0 ? k : first_failing(r, its, mid, hi);
}

/* ---- the GPU paths: candidates run in a grandchild ----------------------------------------- */
typedef struct {
    const reducer *r;
    const dt_item *its;
    const dt_outputs *ref;
    uint32_t n;
    const char *save;        /* write got_*.npy of candidate 0 here (final run) */
} gpu_job;

static void write_got(const gpu_job *j, const dt_outputs *out)
{
    for (uint32_t i = 0; i < j->r->p->nparams; i++) {
        const dt_param *pa = &j->r->p->params[i];
        if (!out->buf[i]) continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/got_%s_%s.npy", j->save, kf_dt_backend_names[j->r->t->backend], pa->name);
        kf_npy_write(path, (kf_scalar)pa->type.scalar, out->buf[i], (size_t)pa->count * pa->type.lanes, NULL);
    }
}

/* In the grandchild: builds candidates [from, n) and runs them until one
 * fails like the original; reports "I k detail", "F k" (a fault of another
 * kind: the context is gone) or "N" (none). */
static void gpu_child(const gpu_job *j, uint32_t from, int fd)
{
    uint8_t be = j->r->t->backend, want = j->r->t->status;
    kf_device *dev = NULL;
    kf_module *m = NULL;
    kf_error e = {0};
    uint32_t n = j->n - from;
    kf_pipeline **ps = calloc(n + 1, sizeof *ps);
    if (kf_device_open(be == KF_DT_CUDA ? KF_BACKEND_CUDA : KF_BACKEND_PTX, 0, &dev, &e) != KF_OK ||
        dt_compile(j->its + from, n, kf_dt_gpu_level(j->r->o, j->r->t->index), &m, NULL, &e) != KF_OK) {
        dt_say(fd, "N %s", e.msg);
        return;
    }
    if (kf_pipeline_create_module(dev, m, ps, &e) != KF_OK) {
        if (want != KF_DT_COMPILE) return dt_say(fd, "N build: %s", e.msg);
        for (uint32_t k = from; k < j->n; k++) {   /* the first that fails alone */
            kf_module *one = NULL;
            kf_pipeline *p1 = NULL;
            if (dt_compile(&j->its[k], 1, kf_dt_gpu_level(j->r->o, j->r->t->index), &one, NULL, &e) == KF_OK &&
                kf_pipeline_create_module(dev, one, &p1, &e) != KF_OK)
                return dt_say(fd, "I %u %s", k, e.msg);
            kf_pipeline_destroy(p1);
            kf_module_free(one);
        }
        return dt_say(fd, "N");
    }
    for (uint32_t k = from; k < j->n; k++) {
        dt_outputs out;
        dt_say(fd, "R %u", k);
        alarm(j->r->o->launch_timeout_s ? j->r->o->launch_timeout_s : 20);
        kf_status st = dt_run_one(dev, ps[k - from], j->its[k].p, &out, &e);
        alarm(0);
        if (st != KF_OK) return dt_say(fd, "%c %u %s", want == KF_DT_FAULT ? 'I' : 'F', k, e.msg);
        dt_diff d;
        bool same = dt_compare(j->its[k].p, &j->ref[k], &out, false, &d);
        if (j->save && k == 0) write_got(j, &out);
        dt_outputs_free(&out);
        if (!same && want == KF_DT_MISMATCH) return dt_say(fd, "I %u %s", k, d.text);
    }
    dt_say(fd, "N");
}

/* Reads what the grandchild says until it closes the pipe or `end` passes
 * (then it is killed); buf gets the text. */
static void read_child(int fd, pid_t pid, double end, char *buf, size_t size)
{
    size_t len = 0;
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 200) > 0) {
            ssize_t got = read(fd, buf + len, size - 1 - len);
            if (got <= 0) break;
            len += (size_t)got;
        } else if (now_s() > end) {
            kill(pid, SIGKILL);
            break;
        }
        if (len == size - 1) len = 0;
    }
    buf[len] = 0;
}

/* Runs gpu_child from candidate `from` in a fresh process; the index of
 * the first interesting candidate, -1 for none, or (as *resume) where to go
 * on after a candidate that killed the context. detail gets its text. */
static int gpu_round(const gpu_job *j, uint32_t from, uint32_t *resume, char *detail, size_t dlen)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        gpu_child(j, from, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    char buf[8192];
    read_child(fds[0], pid, now_s() + (j->r->o->launch_timeout_s ? j->r->o->launch_timeout_s : 20) * 2.0 + 600, buf,
               sizeof buf);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int result = -1, last_run = -1;
    *resume = j->n;
    char *save;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned k;
        int off = 0;
        if (sscanf(line, "R %u", &k) == 1) last_run = (int)k;
        if (sscanf(line, "I %u %n", &k, &off) >= 1) {
            result = (int)k;
            snprintf(detail, dlen, "%s", off ? line + off : "");
        }
        if (sscanf(line, "F %u", &k) == 1) *resume = k + 1;
    }
    bool died = !(WIFEXITED(status) && WEXITSTATUS(status) == 0) && result < 0;
    if (died && last_run >= 0) {   /* a hang (SIGALRM) or a crash in candidate last_run */
        if (j->r->t->status == KF_DT_HANG) {
            snprintf(detail, dlen, "no answer within the time limit");
            return last_run;
        }
        *resume = (uint32_t)last_run + 1;
    }
    return result;
}

static int gpu_first(const gpu_job *j, char *detail, size_t dlen)
{
    uint32_t from = 0;
    while (from < j->n) {
        uint32_t resume;
        int k = gpu_round(j, from, &resume, detail, dlen);
        if (k >= 0 || resume >= j->n) return k;
        from = resume;
    }
    return -1;
}

/* ---- cpu-O1: the optimised module on the interpreter ------------------------------------------ */
/* Whether candidate it, run at the default level on the interpreter, fails
 * as the original did (a mismatch with ref, the -O0 run, a fault or a
 * refusal); detail gets its text. */
static bool o1_fails(const reducer *r, const dt_item *it, const dt_outputs *ref, char *detail, size_t dlen)
{
    kf_module *m = NULL;
    kf_device *dev = NULL;
    kf_pipeline *pipe = NULL;
    kf_error e = {0};
    dt_outputs out;
    bool fails = false;
    uint8_t want = r->t->status;
    kf_status st = dt_compile(it, 1, KF_OPT_DEFAULT, &m, NULL, &e);
    if (st != KF_OK) {
        fails = want == KF_DT_COMPILE;
    } else if (kf_device_open(KF_BACKEND_CPU, 0, &dev, &e) != KF_OK || kf_pipeline_create(dev, m, &m->kernels[0], &pipe, &e) != KF_OK ||
               dt_run_one(dev, pipe, it->p, &out, &e) != KF_OK) {
        fails = want == KF_DT_FAULT;
    } else {
        dt_diff d;
        fails = want == KF_DT_MISMATCH && !dt_compare(it->p, ref, &out, true, &d);
        if (fails) snprintf(detail, dlen, "%s", d.text);
        dt_outputs_free(&out);
    }
    if (fails && st != KF_OK) snprintf(detail, dlen, "%.500s", e.msg);
    kf_pipeline_destroy(pipe);
    if (dev) kf_device_close(dev);
    kf_module_free(m);
    kf_error_clear(&e);
    return fails;
}

/* ---- the oracle ----------------------------------------------------------------------------- */
/* The first of the n edits (an edit of kind NONE: the program itself) whose
 * candidate still fails the same way, or -1. */
static int first_interesting(const reducer *r, const dt_edit *cands, uint32_t n, char *detail, size_t dlen)
{
    dt_item *its = calloc(n, sizeof *its);
    dt_outputs *ref = calloc(n, sizeof *ref);
    uint32_t *back = calloc(n, sizeof *back), nv = 0;
    int found = -1;
    for (uint32_t i = 0; i < n && found < 0; i++) {
        cand_state s = cpu_check(r, &cands[i], &ref[nv]);
        if (s == CAND_INTERESTING) found = (int)i;
        if (s != CAND_VALID) continue;
        its[nv] = (dt_item){r->p, cands[i], ""};
        snprintf(its[nv].tag, sizeof its[nv].tag, "_c%u", i);
        back[nv++] = i;
    }
    uint8_t be = r->t->backend;
    if (found < 0 && nv && (be == KF_DT_NVRTC || be == KF_DT_PTXAS80 || be == KF_DT_PTXAS90)) {
        int k = first_failing(r, its, 0, nv);
        if (k >= 0) found = (int)back[k];
    } else if (found < 0 && nv && be == KF_DT_CPUO1) {
        for (uint32_t k = 0; k < nv && found < 0; k++)
            if (o1_fails(r, &its[k], &ref[k], detail, dlen)) found = (int)back[k];
    } else if (found < 0 && nv && (be == KF_DT_CUDA || be == KF_DT_PTX)) {
        gpu_job j = {r, its, ref, nv, NULL};
        int k = gpu_first(&j, detail, dlen);
        if (k >= 0) found = (int)back[k];
    }
    for (uint32_t i = 0; i < nv; i++) dt_outputs_free(&ref[i]);
    free(its);
    free(ref);
    free(back);
    return found;
}

static void shrink(reducer *r, uint32_t *steps)
{
    dt_edit *edits = malloc(MAX_EDITS * sizeof *edits);
    char detail[600];
    if (!edits) return;
    for (bool progress = true; progress && now_s() < r->deadline;) {
        progress = false;
        size_t n = dt_edits(r->p, edits, MAX_EDITS);
        for (size_t at = 0; at < n && now_s() < r->deadline; at += CHUNK) {
            uint32_t chunk = (uint32_t)(n - at < CHUNK ? n - at : CHUNK);
            int k = first_interesting(r, edits + at, chunk, detail, sizeof detail);
            if (k < 0) continue;
            dt_apply(r->p, &edits[at + (size_t)k]);
            (*steps)++;
            progress = true;
            break;
        }
    }
    free(edits);
}

/* ---- saving ------------------------------------------------------------------------------------ */
static bool write_text(const char *dir, const char *name, const char *text)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs(text ? text : "", f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Lane values of a scalar argument as `kforge run` parses them. */
static void value_arg(kf_buf *b, const kf_value *v)
{
    kf_scalar s = (kf_scalar)v->type.scalar;
    for (unsigned l = 0; l < v->type.lanes; l++) {
        uint64_t x = v->lane[l];
        if (l) kf_buf_puts(b, ",");
        if (s == KF_S_BOOL) kf_buf_puts(b, x ? "true" : "false");
        else if (kf_scalar_class[s] == 'f') kf_buf_printf(b, "%.17g", kf_bits_to_double(s, x));
        else if (kf_scalar_class[s] == 'i') kf_buf_printf(b, "%lld", (long long)kf_bits_to_i64(s, x));
        else kf_buf_printf(b, "%llu", (unsigned long long)x);
    }
}

static void npy(const char *dir, const char *name, const dt_param *pa, const void *data)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    kf_npy_write(path, (kf_scalar)pa->type.scalar, data, (size_t)pa->count * pa->type.lanes, NULL);
}

/* case.case and its data: the interpreter's outputs are what is expected. */
static void save_case(const reducer *r, const char *dir)
{
    const kf_dt_prog *p = r->p;
    kf_buf c = {0};
    char name[256];
    dt_outputs ref;
    memset(&ref, 0, sizeof ref);
    bool ran = cpu_check(r, NULL, &ref) == CAND_VALID;
    if (r->t->status == KF_DT_OK)
        kf_buf_printf(&c, "# kforge-difftest seed %llu program %llu, as generated (--dump)\n", (unsigned long long)r->o->seed,
                      (unsigned long long)p->index);
    else
        kf_buf_printf(&c, "# kforge-difftest seed %llu program %llu, shrunk: %s %s\n", (unsigned long long)r->o->seed,
                      (unsigned long long)p->index, kf_dt_backend_names[r->t->backend], kf_dt_status_names[r->t->status]);
    kf_buf_printf(&c, "kernel    prog.kf %s\n", dt_kernel_name(p, "", name, sizeof name));
    char *defs = kf_dt_defines(p);
    for (char *save, *d = strtok_r(defs, "\n", &save); d; d = strtok_r(NULL, "\n", &save)) kf_buf_printf(&c, "define    %s\n", d);
    free(defs);
    for (uint32_t i = 0; i < p->nparams; i++) {
        const dt_param *pa = &p->params[i];
        kf_buf_printf(&c, "arg       %s=", pa->name);
        if (pa->role == DT_R_SCALAR) {
            value_arg(&c, &pa->value);
        } else {
            snprintf(name, sizeof name, "input_%s.npy", pa->name);
            npy(dir, name, pa, pa->data);
            kf_buf_printf(&c, "@%s", name);
        }
        kf_buf_puts(&c, "\n");
    }
    for (uint32_t i = 0; ran && i < p->nparams; i++) {
        const dt_param *pa = &p->params[i];
        if (!ref.buf[i]) continue;
        snprintf(name, sizeof name, "expected_%s.npy", pa->name);
        npy(dir, name, pa, ref.buf[i]);
        dt_tol worst = DT_TOL_EXACT;
        for (uint32_t s = 0; pa->tol && s < pa->slots; s++) worst = (dt_tol)dt_tol_looser(worst, pa->tol[s]);
        static const char *const tol[] = {"", " abs=8e-6 rel=8e-6", " abs=2e-6 rel=2e-3", " abs=1e-14 rel=1e-13",
                                          " abs=1.2e-38 rel=2.4e-7"};
        kf_buf_printf(&c, "expect    %s %s%s\n", pa->name, name, tol[worst]);
    }
    if (p->count) kf_buf_printf(&c, "count     %llu\n", (unsigned long long)p->count);
    if (p->dyn_launch) kf_buf_printf(&c, "shared    %u\n", p->dyn_launch);
    if (!ran) kf_buf_puts(&c, "# the interpreter does not run this program cleanly: see README.txt\nbackends  cpu\n");
    write_text(dir, "case.case", c.data);
    kf_buf_free(&c);
    dt_outputs_free(&ref);
}

/* The -O flag of `kforge test` that replays the failing back end's build:
 * " -O0" for a GPU path of a batch built at -O0, "" otherwise. */
static const char *level_flag(const reducer *r)
{
    uint8_t be = r->t->backend;
    bool gpu = be != KF_DT_CPU && be != KF_DT_CPUO1;
    return gpu && kf_dt_gpu_level(r->o, r->t->index) == KF_OPT_O0 ? " -O0" : "";
}

/* Writes the failure's directory; its path goes to dir (4096 bytes). */
static void save(reducer *r, const char *original, uint32_t before, uint32_t steps, const char *detail, char *dir)
{
    char knm[256];
    snprintf(dir, 4096, "%s/s%llu-p%llu-%s-%s", r->o->save_dir, (unsigned long long)r->o->seed,
             (unsigned long long)r->t->index, kf_dt_backend_names[r->t->backend],
             r->t->status == KF_DT_COMPILE ? "compile" : kf_dt_status_names[r->t->status]);
    mkdir(dir, 0777);
    char *src = kf_dt_source(r->p), *defs = kf_dt_defines(r->p);
    write_text(dir, "original.kf", original);
    write_text(dir, "prog.kf", src);
    save_case(r, dir);
    kf_buf rd = {0};
    kf_buf_printf(&rd,
                  "kforge-difftest failure: seed %llu, program %llu, back end %s: %s\n\n"
                  "as found:      %s\nafter shrinking (%u edits, %u -> %u nodes): %s\n\n"
                  "files: original.kf (as generated), prog.kf (shrunk; kernel %s), case.case (a golden-output\n"
                  "case whose expected outputs are the interpreter's), input_*.npy, expected_*.npy%s\n"
                  "defines (-D, also in case.case):\n%s\n"
                  "rerun:   build/kforge test%s %s/case.case\n"
                  "         build/kforge-difftest --seed %llu --first %llu --count 1 --backends cpu,%s%s\n",
                  (unsigned long long)r->o->seed, (unsigned long long)r->t->index, kf_dt_backend_names[r->t->backend],
                  kf_dt_status_names[r->t->status], r->t->detail, steps, before, dt_size(r->p),
                  detail && *detail ? detail : "(the same failure)", dt_kernel_name(r->p, "", knm, sizeof knm),
                  r->t->backend == KF_DT_CUDA || r->t->backend == KF_DT_PTX ? ", got_<backend>_*.npy (what it gave)" : "",
                  defs, level_flag(r), dir, (unsigned long long)r->o->seed, (unsigned long long)r->t->index,
                  kf_dt_backend_names[r->t->backend], *level_flag(r) ? " --gpu-O0 1" : " --gpu-O0 0");
    write_text(dir, "README.txt", rd.data);
    if (r->t->backend == KF_DT_CUDA || r->t->backend == KF_DT_PTX) {   /* what the back end gave, shrunk */
        dt_outputs ref;
        if (cpu_check(r, NULL, &ref) == CAND_VALID) {
            dt_item it = {r->p, {0}, ""};
            char d2[600];
            gpu_job j = {r, &it, &ref, 1, dir};
            gpu_first(&j, d2, sizeof d2);
            dt_outputs_free(&ref);
        }
    }
    kf_buf_free(&rd);
    free(src);
    free(defs);
}

void dt_run_shrink(const kf_dt_options *o, const dt_task *t, int fd)
{
    reducer r = {.o = o, .t = t, .p = kf_dt_generate(o->seed, t->index, o->avoid),
                 .deadline = now_s() + (o->shrink_s ? o->shrink_s : 180)};
    if (!r.p) return;
    signature(t->detail, r.sig, sizeof r.sig);
    char *original = kf_dt_source(r.p);
    uint32_t before = dt_size(r.p), steps = 0;
    char detail[600] = "";
    dt_edit none = {0};
    bool reproduces = first_interesting(&r, &none, 1, detail, sizeof detail) == 0;
    if (reproduces) shrink(&r, &steps);
    if (reproduces && steps) {
        detail[0] = 0;
        if (first_interesting(&r, &none, 1, detail, sizeof detail) != 0) snprintf(detail, sizeof detail, "(did not reproduce after shrinking)");
    } else if (!reproduces) {
        snprintf(detail, sizeof detail, "(did not reproduce in the shrinking worker: saved as generated)");
    }
    char dir[4096];
    save(&r, original, before, steps, detail, dir);
    dt_say(fd, "W %s (%u -> %u nodes)", dir, before, dt_size(r.p));
    free(original);
    kf_dt_prog_free(r.p);
}

/* --dump: program `index` as generated, saved like a failure (prog.kf,
 * case.case with the interpreter's outputs as expected, the inputs) in
 * <save_dir>/s<seed>-p<index>-dump, to replay it with kforge run or test. */
kf_status kf_dt_dump(const kf_dt_options *o, uint64_t index, char *dir, size_t len, kf_error *err)
{
    dt_task t = {.index = index, .backend = KF_DT_PTX, .status = KF_DT_OK};   /* not cpu: a clean run is valid */
    reducer r = {.o = o, .t = &t, .p = kf_dt_generate(o->seed, index, o->avoid)};
    if (!r.p) return kf_error_set(err, KF_ERR_NOMEM, "out of memory generating program %llu", (unsigned long long)index);
    snprintf(dir, len, "%s/s%llu-p%llu-dump", o->save_dir, (unsigned long long)o->seed, (unsigned long long)index);
    kf_status st = KF_OK;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        st = kf_error_set(err, KF_ERR_IO, "cannot make %s: %s", dir, strerror(errno));
    } else {
        char *src = kf_dt_source(r.p);
        if (!write_text(dir, "prog.kf", src)) st = kf_error_set(err, KF_ERR_IO, "cannot write %s/prog.kf", dir);
        else save_case(&r, dir);
        free(src);
    }
    kf_dt_prog_free(r.p);
    return st;
}
