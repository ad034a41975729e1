/* Preparing and measuring benches (bench_run.h): the compile-and-bind
 * phase that runs before any device is opened, and the event-timed passes
 * on a GPU with the L2 flushed between them. The flush, and the tiny
 * kernel the host-cost measurement launches, are .kf kernels of their own
 * (`tool_src` below), compiled like any other. */
#include "bench_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../runtime/cache.h"
#include "golden_case.h"

/* The bench tool's own kernels: the two halves of the L2 flush (a write of
 * n u32x4, then a read of n others that writes nothing unless their bits
 * xor to a value zeros never give), and a one-block kernel for the host
 * cost of a launch. */
static const char tool_src[] =
    "// kforge bench's own kernels (tools/bench_run.c)\n"
    "@schedule(block = 256, grid = min(cdiv(n, 256), 4096))\n"
    "kernel l2_write(x: &mut [u32x4], n: u32) {\n"
    "    for i in global_id.x .. n step grid_dim.x * block_dim.x {\n"
    "        x[i] = u32x4(0);\n"
    "    }\n"
    "}\n"
    "@schedule(block = 256, grid = min(cdiv(n, 256), 4096))\n"
    "kernel l2_read(x: &[u32x4], out: &mut [u32], n: u32) {\n"
    "    var acc: u32 = 0;\n"
    "    for i in global_id.x .. n step grid_dim.x * block_dim.x {\n"
    "        let v = x[i];\n"
    "        acc = acc ^ v[0] ^ v[1] ^ v[2] ^ v[3];\n"
    "    }\n"
    "    if acc == 2654435769 {\n"
    "        out[0] = acc;\n"
    "    }\n"
    "}\n"
    "@schedule(block = 32, grid = 1)\n"
    "kernel bench_tiny(a: f32, x: &[f32], y: &mut [f32]) {\n"
    "    y[thread_id.x] = a * x[thread_id.x] + y[thread_id.x];\n"
    "}\n";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- preparing ------------------------------------------------------------------ */

static int prep_error(const kf_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int prep_error(const kf_bench *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kforge bench: error: ");
    if (b->line) fprintf(stderr, "%s (%s:%u): ", b->name, b->path, b->line);   /* from a bench file */
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return KF_EXIT_USAGE;
}

/* Appends add to out; a name already there takes the later value. */
static bool merge_defines(kf_cli_defines *out, const kf_cli_defines *add)
{
    for (size_t i = 0; i < add->len; i++) {
        size_t j = 0;
        while (j < out->len && strcmp(out->data[j].name, add->data[i].name)) j++;
        if (j < out->len) out->data[j] = add->data[i];
        else if (!KF_VEC_PUSH(out, add->data[i])) return false;
    }
    return true;
}

/* The spec of binding `name`: the variant's when it gives one. */
static const char *spec_of(const kf_bench_variant *v, const kf_cli_binding *b)
{
    for (size_t i = 0; v && i < v->binds.len; i++)
        if (!strcmp(v->binds.data[i].name, b->name)) return v->binds.data[i].spec;
    return b->spec;
}

static bool has_binding(const kf_bench_binds *bs, const char *name)
{
    for (size_t i = 0; i < bs->len; i++)
        if (!strcmp(bs->data[i].name, name)) return true;
    return false;
}

/* Step s's bindings: its args, then the sets that name a parameter of k
 * and that it does not bind itself (shared[j] true for those), each with
 * the variant's spec where it gives one. */
static bool step_binds(const kf_bench *b, const kf_bench_variant *v, const kf_bench_step *st, const kf_ir_kernel *k,
                       kf_bench_binds *out, bool *shared)
{
    for (size_t i = 0; i < st->args.len; i++) {
        kf_cli_binding x = {st->args.data[i].name, spec_of(v, &st->args.data[i])};
        shared[out->len] = false;
        if (!KF_VEC_PUSH(out, x)) return false;
    }
    for (size_t i = 0; i < b->sets.len; i++) {
        const kf_cli_binding *x = &b->sets.data[i];
        if (kf_cli_find_param(k, x->name) < 0 || has_binding(&st->args, x->name)) continue;
        kf_cli_binding y = {x->name, spec_of(v, x)};
        shared[out->len] = true;
        if (!KF_VEC_PUSH(out, y)) return false;
    }
    return true;
}

/* Every variant binding and every set names something a step binds. */
static int check_names(const kf_bench *b, const kf_bench_variant *v, const kf_bench_prep *p)
{
    for (size_t i = 0; v && i < v->binds.len; i++) {
        bool found = has_binding(&b->sets, v->binds.data[i].name);
        for (size_t s = 0; s < b->steps.len && !found; s++) found = has_binding(&b->steps.data[s].args, v->binds.data[i].name);
        if (!found)
            return prep_error(b, "variant '%s' binds '%s', which no 'set' or 'arg' line of the bench binds", v->label,
                              v->binds.data[i].name);
    }
    for (size_t i = 0; i < b->sets.len; i++) {
        bool used = false;
        for (uint32_t s = 0; s < p->nsteps && !used; s++) used = kf_cli_find_param(p->steps[s].k, b->sets.data[i].name) >= 0;
        if (!used) return prep_error(b, "'set %s=...' names no parameter of any step's kernel", b->sets.data[i].name);
    }
    return KF_EXIT_OK;
}

/* Buffer j of step s: a new slot, or the shared one of that name. */
static int add_slot(const kf_bench *b, kf_bench_prep *p, uint32_t s, uint32_t j, bool shared)
{
    kf_bench_pstep *ps = &p->steps[s];
    const kf_ir_param *par = &ps->k->params[j];
    kf_type elem = kf_type_vector((kf_scalar)par->type.scalar, par->type.lanes);
    bool writes = (par->type.flags & KF_TF_MUT) != 0;
    for (uint32_t i = 0; shared && i < p->nbufs; i++) {
        kf_bench_buf *o = &p->bufs[i];
        if (!o->shared || strcmp(o->name, par->name)) continue;
        if (!kf_type_eq(o->elem, elem) || o->elems != ps->in.elems[j]) {
            char t1[48], t2[48];
            kf_type_str(o->elem, t1, sizeof t1);
            kf_type_str(elem, t2, sizeof t2);
            return prep_error(b, "'set %s' is shared by steps whose kernels disagree on it: [%s] of %zu elements, "
                              "then [%s] of %zu in kernel '%s'", par->name, t1, o->elems, t2, ps->in.elems[j], ps->k->name);
        }
        o->written |= writes;
        ps->slot[j] = (int32_t)i;
        return KF_EXIT_OK;
    }
    kf_bench_buf *nb = &p->bufs[p->nbufs];
    *nb = (kf_bench_buf){par->name, elem, ps->in.elems[j], ps->in.host[j],
                         ps->in.gens[j].count ? &ps->in.gens[j] : NULL, writes, shared};
    ps->slot[j] = (int32_t)p->nbufs++;
    return KF_EXIT_OK;
}

/* Binds step s (compiled) and gives its buffers slots. */
static int bind_step(const kf_bench *b, const kf_bench_variant *v, kf_bench_prep *p, uint32_t s, size_t *cap)
{
    const kf_bench_step *st = &b->steps.data[s];
    kf_bench_pstep *ps = &p->steps[s];
    kf_bench_binds binds = {0};
    bool *shared = calloc(st->args.len + b->sets.len + 1, sizeof *shared);
    kf_error err = {0};
    int rc = shared && step_binds(b, v, st, ps->k, &binds, shared) ? KF_EXIT_OK : KF_EXIT_RUNTIME;
    kf_status ks = KF_OK;
    if (rc == KF_EXIT_OK) ks = kf_cli_inputs_make_deferred(ps->k, binds.data, binds.len, b->dir, &ps->in, &err);
    if (rc == KF_EXIT_OK && ks == KF_OK)
        ks = kf_cli_launch_count(ps->k, &ps->in, st->count, "a 'count N' line", &ps->launch.count, &err);
    char where[320];
    if (p->nsteps > 1) snprintf(where, sizeof where, "step %u (kernel '%s')", s + 1, ps->k->name);
    else snprintf(where, sizeof where, "kernel '%s'", ps->k->name);
    if (rc == KF_EXIT_OK && ks != KF_OK) rc = prep_error(b, "%s: %s", where, err.msg);
    if (rc == KF_EXIT_OK && st->count && (ps->k->sched.ngrid || st->launch.grid[0]))
        rc = prep_error(b, "%s: the count has no effect: the kernel has a grid", where);
    ps->slot = rc == KF_EXIT_OK ? calloc(ps->k->nparams + 1, sizeof *ps->slot) : NULL;
    if (rc == KF_EXIT_OK && !ps->slot) rc = KF_EXIT_RUNTIME;
    if (rc == KF_EXIT_OK && (*cap - p->nbufs < ps->k->nparams)) {
        kf_bench_buf *nb = realloc(p->bufs, (p->nbufs + ps->k->nparams + 1) * sizeof *nb);
        if (nb) p->bufs = nb, *cap = p->nbufs + ps->k->nparams + 1;
        else rc = KF_EXIT_RUNTIME;
    }
    for (uint32_t j = 0; rc == KF_EXIT_OK && j < ps->k->nparams; j++) {
        ps->slot[j] = -1;
        if (ps->k->params[j].type.kind != KF_TK_BUFFER) continue;
        size_t bi = 0;
        while (bi < binds.len && strcmp(binds.data[bi].name, ps->k->params[j].name)) bi++;
        rc = add_slot(b, p, s, j, bi < binds.len && shared[bi]);
    }
    if (rc == KF_EXIT_RUNTIME) fprintf(stderr, "kforge bench: error: out of memory preparing %s\n", b->name);
    KF_VEC_FREE(&binds);
    free(shared);
    return rc;
}

/* Reads raw step s (FILE.cu or FILE.ptx): its parameters, its block; -D
 * does not reach it. */
static int load_raw_step(const kf_bench *b, const kf_cli_defines *defs, kf_bench_prep *p, uint32_t s)
{
    const kf_bench_step *st = &b->steps.data[s];
    kf_bench_pstep *ps = &p->steps[s];
    char where[64] = "";
    if (p->nsteps > 1) snprintf(where, sizeof where, "step %u: ", s + 1);
    if (!st->kernel) return prep_error(b, "%s%s is a raw kernel: name its entry point with -k ENTRY", where, st->file);
    if (defs->len)
        return prep_error(b, "%s-D %s=%s applies to .kf kernels; %s is a raw kernel", where, defs->data[0].name,
                          defs->data[0].value, st->file);
    if (!st->launch.block[0])
        return prep_error(b, "%s%s is a raw kernel: give its block with a 'block X[,Y,Z]' line (--block on the "
                          "command line)", where, st->file);
    kf_error err = {0};
    ps->raw = calloc(1, sizeof *ps->raw);
    if (!ps->raw) return KF_EXIT_RUNTIME;
    kf_status ks = kf_cli_raw_load(st->file, st->kernel, st->params, st->launch.block, ps->raw, &err);
    if (ks != KF_OK) {
        prep_error(b, "%s%s", where, err.msg);
        kf_error_clear(&err);
        return kf_cli_exit_for(ks);
    }
    ps->k = &ps->raw->k;
    return KF_EXIT_OK;
}

/* Compiles step s with the bench's, the step's and the variant's -D (or
 * reads it, raw). */
static int compile_step(const kf_bench *b, const kf_bench_variant *v, kf_bench_prep *p, uint32_t s)
{
    const kf_bench_step *st = &b->steps.data[s];
    kf_cli_defines defs = {0};
    kf_src_kind kind;
    bool raw = kf_cli_raw_kind(st->file, &kind);
    int rc = merge_defines(&defs, &b->defines) && merge_defines(&defs, &st->defines) &&
                     (!v || merge_defines(&defs, &v->defines))
                 ? KF_EXIT_OK
                 : KF_EXIT_RUNTIME;
    p->steps[s].launch = st->launch;
    if (rc == KF_EXIT_OK && raw) rc = load_raw_step(b, &defs, p, s);
    else if (rc == KF_EXIT_OK && st->params)
        rc = prep_error(b, "'params' (step %u) is for raw kernels (.cu, .ptx); %s declares its own", s + 1, st->file);
    else if (rc == KF_EXIT_OK) {
        rc = kf_cli_compile("bench", st->file, &defs, KF_OPT_DEFAULT, &p->steps[s].m);
        if (rc != KF_EXIT_OK && b->line)   /* from a bench file: say which bench and variant */
            fprintf(stderr, "kforge bench: %s: step %u (%s:%u) does not compile%s%s\n", b->name, s + 1, b->path,
                    st->line, v ? " with variant " : "", v ? v->label : "");
    }
    KF_VEC_FREE(&defs);
    if (rc != KF_EXIT_OK || raw) return rc;
    p->steps[s].k = kf_cli_pick_kernel(p->steps[s].m, st->kernel, "bench");
    return p->steps[s].k ? KF_EXIT_OK : KF_EXIT_USAGE;
}

bool kf_bench_not_applicable(const kf_bench_prep *p, kf_backend b, char *why, size_t size)
{
    for (uint32_t s = 0; s < p->nsteps; s++) {
        const char *w = kf_cli_raw_not_applicable(p->steps[s].raw, b);
        if (!w) continue;
        if (p->nsteps > 1) snprintf(why, size, "step %u (%s): %s", s + 1, p->steps[s].k->name, w);
        else snprintf(why, size, "%s", w);
        return true;
    }
    return false;
}

/* An integer scalar argument of the first step that has one of that name. */
static bool expr_lookup(void *ctx, const char *name, size_t len, uint64_t *value, kf_error *err)
{
    const kf_bench_prep *p = ctx;
    for (uint32_t s = 0; s < p->nsteps; s++) {
        int found = kf_cli_scalar_u64(p->steps[s].k, &p->steps[s].in, name, len, value, err);
        if (found) return found > 0;
    }
    kf_error_set(err, KF_ERR_USAGE, "'%.*s' is not an integer scalar parameter of any step", (int)len, name);
    return false;
}

/* bytes (the expression, or every buffer once and twice when written) and flops. */
static int count_work(const kf_bench *b, kf_bench_prep *p)
{
    kf_error err = {0};
    uint64_t v = 0;
    p->bytes = 0;
    for (uint32_t i = 0; !b->bytes && i < p->nbufs; i++)
        p->bytes += (double)p->bufs[i].elems * (double)kf_type_elem_bytes(p->bufs[i].elem) * (p->bufs[i].written ? 2 : 1);
    if (b->bytes && kf_case_size_eval(b->bytes, expr_lookup, p, &v, &err) != KF_OK)
        return prep_error(b, "bytes: %s", err.msg);
    if (b->bytes) p->bytes = (double)v;
    if (b->flops && kf_case_size_eval(b->flops, expr_lookup, p, &v, &err) != KF_OK)
        return prep_error(b, "flops: %s", err.msg);
    p->flops = b->flops ? (double)v : 0;
    return KF_EXIT_OK;
}

int kf_bench_prepare(const kf_bench *b, const kf_bench_variant *v, kf_bench_prep *p)
{
    memset(p, 0, sizeof *p);
    p->bench = b;
    p->variant = v;
    p->steps = calloc(b->steps.len + 1, sizeof *p->steps);
    if (!p->steps) return KF_EXIT_RUNTIME;
    p->nsteps = (uint32_t)b->steps.len;
    size_t cap = 0;
    int rc = KF_EXIT_OK;
    for (uint32_t s = 0; s < p->nsteps && rc == KF_EXIT_OK; s++) rc = compile_step(b, v, p, s);
    if (rc == KF_EXIT_OK) rc = check_names(b, v, p);
    for (uint32_t s = 0; s < p->nsteps && rc == KF_EXIT_OK; s++) rc = bind_step(b, v, p, s, &cap);
    if (rc == KF_EXIT_OK) rc = count_work(b, p);
    return rc;
}

void kf_bench_prep_free(kf_bench_prep *p)
{
    for (uint32_t s = 0; p->steps && s < p->nsteps; s++) {
        kf_cli_inputs_free(&p->steps[s].in);
        free(p->steps[s].slot);
        kf_module_free(p->steps[s].m);
        if (p->steps[s].raw) kf_cli_raw_free(p->steps[s].raw);
        free(p->steps[s].raw);
    }
    free(p->steps);
    free(p->bufs);
    memset(p, 0, sizeof *p);
}

/* ---- the device -------------------------------------------------------------------- */

static kf_value u32_value(uint64_t v) { return (kf_value){.type = kf_type_scalar(KF_S_U32), .lane = {v}}; }

/* The flush: scratch holds 2 x flush_bytes; the first half is written, the
 * second read, by one plan each. */
static kf_status flush_make(kf_bench_dev *d, kf_error *err)
{
    kf_device_props dp;
    kf_device_props_get(d->dev, &dp);
    d->flush_bytes = 2 * (size_t)(dp.l2_bytes ? dp.l2_bytes : 64u << 20);
    size_t n = d->flush_bytes / 16;
    kf_status st = kf_buffer_create(d->dev, kf_type_vector(KF_S_U32, 4), 2 * n, &d->scratch, err);
    if (st == KF_OK) st = kf_buffer_create(d->dev, kf_type_scalar(KF_S_U32), 1, &d->sink, err);
    for (int h = 0; h < 2 && st == KF_OK; h++)
        st = kf_pipeline_create(d->dev, d->flush_m, &d->flush_m->kernels[h], &d->flush_p[h], err);
    for (int h = 0; h < 2 && st == KF_OK; h++) st = kf_buffer_view(d->scratch, (size_t)h * n, n, &d->half[h], err);
    kf_arg w[2] = {{.buf = d->half[0]}, {.value = u32_value(n)}};
    kf_arg r[3] = {{.buf = d->half[1]}, {.buf = d->sink}, {.value = u32_value(n)}};
    if (st == KF_OK) st = kf_plan_create(d->flush_p[0], w, 2, NULL, &d->flush_plan[0], err);
    if (st == KF_OK) st = kf_plan_create(d->flush_p[1], r, 3, NULL, &d->flush_plan[1], err);
    return st;
}

kf_status kf_bench_dev_open(kf_backend backend, kf_bench_dev *d, kf_error *err)
{
    memset(d, 0, sizeof *d);
    d->backend = backend;
    kf_status st = kf_device_open(backend, 0, &d->dev, err);
    if (st != KF_OK) return st;
    st = kf_compile("<kforge bench>", tool_src, sizeof tool_src - 1, NULL, &d->flush_m);
    if (st != KF_OK) return kf_error_set(err, KF_ERR_RUNTIME, "kforge bench's own kernels do not compile (a bug)");
    return flush_make(d, err);
}

void kf_bench_dev_close(kf_bench_dev *d)
{
    for (int h = 0; h < 2; h++) {
        if (d->flush_plan[h]) kf_plan_destroy(d->flush_plan[h]);
        if (d->flush_p[h]) kf_pipeline_destroy(d->flush_p[h]);
    }
    kf_buffer_destroy(d->half[1]);
    kf_buffer_destroy(d->half[0]);
    kf_buffer_destroy(d->sink);
    kf_buffer_destroy(d->scratch);
    kf_module_free(d->flush_m);
    if (d->dev) kf_device_close(d->dev);
    memset(d, 0, sizeof *d);
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

kf_status kf_bench_copy_bandwidth(kf_bench_dev *d, int runs, double *gbps, kf_error *err)
{
    size_t bytes = (size_t)1 << 30;
    if (bytes > 16 * d->flush_bytes) bytes = 16 * d->flush_bytes;   /* never below 32 x L2 */
    kf_buffer *src = NULL, *dst = NULL;
    kf_status st = kf_buffer_create(d->dev, kf_type_scalar(KF_S_U8), bytes, &src, err);
    if (st == KF_OK) st = kf_buffer_create(d->dev, kf_type_scalar(KF_S_U8), bytes, &dst, err);
    float *ms = calloc((size_t)runs, sizeof *ms);
    if (!ms && st == KF_OK) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory for %d timings", runs);
    for (int i = 0; st == KF_OK && i < 3; i++) st = kf_buffer_copy(dst, src, bytes, KF_DISPATCH_SYNC, NULL, err);
    for (int i = 0; st == KF_OK && i < runs; i++) st = kf_buffer_copy(dst, src, bytes, KF_DISPATCH_TIMED, &ms[i], err);
    if (st == KF_OK) *gbps = 2.0 * (double)bytes / (median(ms, runs) * 1e6);
    free(ms);
    kf_buffer_destroy(src);
    kf_buffer_destroy(dst);
    return st;
}

/* ---- measuring ----------------------------------------------------------------------- */

/* What one measurement holds on the device. */
typedef struct {
    kf_buffer **bufs;
    kf_pipeline **pipes;
    kf_plan **plans;
    kf_arg *args;
} live;

static void live_free(const kf_bench_prep *p, live *l)
{
    for (uint32_t s = 0; l->plans && s < p->nsteps; s++)
        if (l->plans[s]) kf_plan_destroy(l->plans[s]);
    for (uint32_t s = 0; l->pipes && s < p->nsteps; s++)
        if (l->pipes[s]) kf_pipeline_destroy(l->pipes[s]);
    for (uint32_t i = 0; l->bufs && i < p->nbufs; i++) kf_buffer_destroy(l->bufs[i]);
    free(l->plans);
    free(l->pipes);
    free(l->bufs);
    free(l->args);
}

static kf_status step_error(kf_error *err, kf_status st, const kf_bench_prep *p, uint32_t s)
{
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    return kf_error_set(err, st, "step %u (kernel '%s'): %s", s + 1, p->steps[s].k->name, msg);
}

/* Buffers, pipelines, resources and plans of every step. */
static kf_status live_make(kf_bench_dev *d, const kf_bench_prep *p, live *l, kf_bench_result *r, kf_error *err)
{
    size_t nargs = 0;
    for (uint32_t s = 0; s < p->nsteps; s++) nargs += p->steps[s].k->nparams;
    l->bufs = calloc(p->nbufs + 1, sizeof *l->bufs);
    l->pipes = calloc(p->nsteps, sizeof *l->pipes);
    l->plans = calloc(p->nsteps, sizeof *l->plans);
    l->args = calloc(nargs + 1, sizeof *l->args);
    if (!l->bufs || !l->pipes || !l->plans || !l->args) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    kf_status st = KF_OK;
    for (uint32_t i = 0; i < p->nbufs && st == KF_OK; i++) {
        const kf_bench_buf *b = &p->bufs[i];
        st = kf_cli_buffer_make(d->dev, b->elem, b->elems, b->host, b->gen, &l->bufs[i], err);
        if (st != KF_OK) {
            char msg[sizeof err->msg];
            memcpy(msg, err->msg, sizeof msg);
            st = kf_error_set(err, st, "buffer '%s': %s", b->name, msg);
        }
    }
    kf_arg *a = l->args;
    for (uint32_t s = 0; s < p->nsteps && st == KF_OK; s++) {
        const kf_bench_pstep *ps = &p->steps[s];
        for (uint32_t j = 0; j < ps->k->nparams; j++)
            a[j] = ps->slot[j] >= 0 ? (kf_arg){.buf = l->bufs[ps->slot[j]]} : (kf_arg){.value = ps->in.values[j]};
        st = kf_cli_pipeline(d->dev, ps->m, ps->k, ps->raw, &l->pipes[s], err);
        if (st == KF_OK) st = kf_pipeline_resources(l->pipes[s], &r->res[s], err);
        if (st == KF_OK) st = kf_plan_create(l->pipes[s], a, ps->k->nparams, &ps->launch, &l->plans[s], err);
        if (st != KF_OK) st = step_error(err, st, p, s);
        a += ps->k->nparams;
    }
    return st;
}

/* One pass: flush (optionally), then every step between the events. */
static kf_status pass(kf_bench_dev *d, const kf_bench_prep *p, const live *l, bool flush, float *ms, kf_error *err)
{
    kf_status st = KF_OK;
    for (int h = 0; flush && h < 2 && st == KF_OK; h++) st = kf_plan_launch(d->flush_plan[h], KF_DISPATCH_ASYNC, NULL, err);
    if (st == KF_OK) st = kf_device_timer_start(d->dev, err);
    for (uint32_t s = 0; s < p->nsteps && st == KF_OK; s++) st = kf_plan_launch(l->plans[s], KF_DISPATCH_ASYNC, NULL, err);
    return st == KF_OK ? kf_device_timer_stop(d->dev, ms, err) : st;
}

static int clamp_int(double v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : (int)v; }

/* A fenced run of each step (a fault names its step), then one timed pass
 * to size the warm-up and the runs, the warm-up, and the timed passes. */
static kf_status time_passes(kf_bench_dev *d, const kf_bench_prep *p, const live *l, const kf_bench_timing *t,
                             kf_bench_result *r, kf_error *err)
{
    kf_status st = KF_OK;
    for (uint32_t s = 0; s < p->nsteps && st == KF_OK; s++) {
        st = kf_plan_launch(l->plans[s], KF_DISPATCH_SYNC, NULL, err);
        if (st != KF_OK) r->step_failed = (int)s, st = step_error(err, st, p, s);
    }
    float est = 0;
    if (st == KF_OK) st = pass(d, p, l, t->flush, &est, err);
    double e = est > 1e-4 ? est : 1e-4;
    r->warmup = t->warmup ? t->warmup : clamp_int(ceil(10.0 / e), 2, 50);
    r->runs = t->runs ? t->runs : clamp_int(t->budget_ms / e, 10, 500);
    for (int i = 0; i < r->warmup && st == KF_OK; i++)
        for (uint32_t s = 0; s < p->nsteps && st == KF_OK; s++) st = kf_plan_launch(l->plans[s], KF_DISPATCH_ASYNC, NULL, err);
    if (st == KF_OK) st = kf_device_sync(d->dev, err);
    float *ms = st == KF_OK ? calloc((size_t)r->runs, sizeof *ms) : NULL;
    if (st == KF_OK && !ms) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory for %d timings", r->runs);
    for (int i = 0; i < r->runs && st == KF_OK; i++) st = pass(d, p, l, t->flush, &ms[i], err);
    if (st == KF_OK) {
        r->median = median(ms, r->runs);
        r->min = ms[0];
        r->max = ms[r->runs - 1];
    }
    free(ms);
    return st;
}

kf_status kf_bench_measure(kf_bench_dev *d, const kf_bench_prep *p, const kf_bench_timing *t, kf_bench_result *r,
                           kf_error *err)
{
    memset(r, 0, sizeof *r);
    r->step_failed = -1;
    r->res = calloc(p->nsteps, sizeof *r->res);
    if (!r->res) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    live l = {0};
    kf_status st = live_make(d, p, &l, r, err);
    if (st == KF_OK) st = time_passes(d, p, &l, t, r, err);
    live_free(p, &l);
    return st;
}

void kf_bench_result_free(kf_bench_result *r)
{
    free(r->res);
    memset(r, 0, sizeof *r);
}

/* ---- start-up and host cost ------------------------------------------------------------- */

enum { WARM_LOADS = 9 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One kernel: cold build with no caches, then the median warm start. */
static kf_status startup_one(kf_bench_dev *d, const kf_bench_pstep *ps, double *cold, double *warm, kf_error *err)
{
    kf_pipeline *pipe = NULL;
    double w[WARM_LOADS];
    kf_cache_clear(true, NULL, NULL);
    double t0 = now_ms();
    kf_status st = kf_cli_pipeline(d->dev, ps->m, ps->k, ps->raw, &pipe, err);
    *cold = now_ms() - t0;
    for (int i = 0; i < WARM_LOADS && st == KF_OK; i++) {
        kf_pipeline_destroy(pipe);
        pipe = NULL;
        kf_cache_clear(false, NULL, NULL);   /* the process cache only: the disk entry stays */
        t0 = now_ms();
        st = kf_cli_pipeline(d->dev, ps->m, ps->k, ps->raw, &pipe, err);
        w[i] = now_ms() - t0;
        if (st == KF_OK && kf_pipeline_origin(pipe) != KF_FROM_DISK)
            st = kf_error_set(err, KF_ERR_USAGE, "kernel '%s' was not loaded from the disk cache (is KFORGE_CACHE=0?)",
                              ps->k->name);
    }
    if (pipe) kf_pipeline_destroy(pipe);
    qsort(w, WARM_LOADS, sizeof w[0], cmp_double);
    *warm = w[WARM_LOADS / 2];
    return st;
}

kf_status kf_bench_startup(kf_bench_dev *d, const kf_bench_prep *p, double *cold, double *warm, kf_error *err)
{
    *cold = *warm = 0;
    kf_status st = KF_OK;
    for (uint32_t s = 0; s < p->nsteps && st == KF_OK; s++) {
        double c = 0, w = 0;
        st = startup_one(d, &p->steps[s], &c, &w, err);
        *cold += c;
        *warm += w;
    }
    return st;
}

/* One batch of n launches through path 0 (bare cuLaunchKernel), 1 (a
 * pre-sorted plan) or 2 (kf_dispatch, async); host µs per launch. The
 * batch stays well under the driver's launch queue, and the device is
 * drained afterwards, outside the timing. */
static kf_status time_batch(int path, kf_bench_dev *d, kf_pipeline *p, kf_plan *plan, const kf_arg *a, int n,
                            float *us, kf_error *err)
{
    kf_status st = KF_OK;
    double t0 = now_ms(), bare = 0;
    if (path == 0) st = kf_plan_bench_bare(plan, (uint32_t)n, &bare, err);
    for (int i = 0; path == 1 && st == KF_OK && i < n; i++) st = kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, err);
    for (int i = 0; path == 2 && st == KF_OK && i < n; i++) st = kf_dispatch(p, a, 3, NULL, KF_DISPATCH_ASYNC, NULL, err);
    *us = path == 0 ? (float)bare : (float)((now_ms() - t0) * 1e3 / n);
    if (st == KF_OK) st = kf_device_sync(d->dev, err);
    return st;
}

kf_status kf_bench_host_cost(kf_bench_dev *d, kf_bench_host *h, kf_error *err)
{
    enum { BATCH = 400, ROUNDS = 41 };
    float t[3][ROUNDS];
    kf_pipeline *p = NULL;
    kf_plan *plan = NULL;
    kf_buffer *x = NULL, *y = NULL;
    kf_status st = kf_pipeline_create(d->dev, d->flush_m, &d->flush_m->kernels[2], &p, err);
    if (st == KF_OK) st = kf_buffer_create(d->dev, kf_type_scalar(KF_S_F32), 32, &x, err);
    if (st == KF_OK) st = kf_buffer_create(d->dev, kf_type_scalar(KF_S_F32), 32, &y, err);
    kf_arg a[3] = {{.value = {.type = kf_type_scalar(KF_S_F32)}}, {.buf = x}, {.buf = y}};
    if (st == KF_OK) st = kf_plan_create(p, a, 3, NULL, &plan, err);
    for (int r = 0; st == KF_OK && r < ROUNDS; r++)
        for (int k = 0; st == KF_OK && k < 3; k++) {
            int path = (r + k) % 3;
            st = time_batch(path, d, p, plan, a, BATCH, &t[path][r], err);
        }
    if (st == KF_OK) *h = (kf_bench_host){median(t[0], ROUNDS), median(t[1], ROUNDS), median(t[2], ROUNDS)};
    if (plan) kf_plan_destroy(plan);
    kf_buffer_destroy(x);
    kf_buffer_destroy(y);
    if (p) kf_pipeline_destroy(p);
    return st;
}
