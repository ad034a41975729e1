/* Running generated programs: many programs (or shrinking candidates) are
 * printed into ONE module, compiled once by the front end, built once per
 * GPU path (kf_pipeline_create_module: one NVRTC compile, one PTX JIT) and
 * run program by program through the device interface, the interpreter
 * included, each with fresh buffers holding the program's data. Outputs are
 * compared with the interpreter's: bit for bit (floats: NaN matches any
 * NaN), or, in the slots of the approximate-output buffer, within the
 * documented bound of the function that wrote them. Without a GPU the same
 * module's CUDA-C goes through NVRTC and its PTX through ptxas (sm_80 and
 * sm_90) instead. */
#include "dt_impl.h"

#include "../../emit/ptxas.h"
#include "../../ir/numeric.h"
#include "../../runtime/device.h"
#include "../../runtime/nvrtc.h"
#include "../../emit/ptx_hazards.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const kf_dt_status_names[KF_DT_NSTATUS] = {
#define X(e, s) s,
    KF_DT_STATUSES(X)
#undef X
};

const char *const kf_dt_backend_names[KF_DT_NBACKEND] = {
#define X(e, s) s,
    KF_DT_BACKENDS(X)
#undef X
};

/* ---- compiling a batch --------------------------------------------------------- */
static uint32_t count_lines(const char *s, size_t from, size_t to)
{
    uint32_t n = 0;
    for (size_t i = from; i < to; i++) n += s[i] == '\n';
    return n;
}

kf_opt_level kf_dt_gpu_level(const kf_dt_options *opts, uint64_t k)
{
    uint64_t batch = opts->batch ? opts->batch : 100, nth = opts->gpu_o0_every;
    if (!nth || k < opts->first) return KF_OPT_DEFAULT;
    return ((k - opts->first) / batch) % nth == nth - 1 ? KF_OPT_O0 : KF_OPT_DEFAULT;
}

kf_status dt_compile(const dt_item *items, uint32_t n, kf_opt_level level, kf_module **m, uint32_t *first_line,
                     kf_error *err)
{
    kf_buf b = {0};
    kf_arena a;
    kf_arena_init(&a);
    kf_define *defs = calloc((size_t)n * DT_MAX_CONSTS + 1, sizeof *defs);
    uint32_t ndefs = 0, line = 1;
    *m = NULL;
    for (uint32_t i = 0; i < n && defs; i++) {
        size_t at = b.len;
        if (first_line) first_line[i] = line;
        dt_print(&b, items[i].p, items[i].tag, items[i].edit.kind ? &items[i].edit : NULL);
        if (b.data) line += count_lines(b.data, at, b.len);
        ndefs += dt_print_defines(items[i].p, items[i].tag, items[i].edit.kind ? &items[i].edit : NULL, &a, defs + ndefs,
                                  DT_MAX_CONSTS);
    }
    kf_status st = KF_OK;
    if (!defs || b.oom || !b.data) {
        st = kf_error_set(err, KF_ERR_NOMEM, "out of memory printing %u programs", n);
    } else {
        kf_compile_opts o = {defs, ndefs, level};
        st = kf_compile("difftest.kf", b.data, b.len, &o, m);
        if (st != KF_OK && *m && (*m)->diags.items.len) {
            const kf_diag *d = &(*m)->diags.items.data[0];
            kf_error_set(err, st, "%s:%u:%u: %s", d->loc.file, d->loc.line, d->loc.col, d->msg);
        } else if (st != KF_OK) {
            kf_error_set(err, st, "the front end failed (out of memory)");
        }
        if (st != KF_OK) {
            kf_module_free(*m);
            *m = NULL;
        }
    }
    kf_buf_free(&b);
    free(defs);
    kf_arena_free(&a);
    return st;
}

/* ---- running one program ---------------------------------------------------------- */
void dt_outputs_free(dt_outputs *o)
{
    for (int i = 0; i < DT_MAX_PARAMS; i++) free(o->buf[i]);
    memset(o, 0, sizeof *o);
}

static size_t param_bytes(const dt_param *pa) { return (size_t)pa->count * kf_type_elem_bytes(kf_type_elem(pa->type)); }

kf_status dt_run_one(kf_device *dev, kf_pipeline *pipe, const kf_dt_prog *p, dt_outputs *out, kf_error *err)
{
    kf_buffer *bufs[DT_MAX_PARAMS] = {0};
    kf_arg args[DT_MAX_PARAMS];
    kf_status st = KF_OK;
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < p->nparams && st == KF_OK; i++) {
        const dt_param *pa = &p->params[i];
        if (pa->role == DT_R_SCALAR) {
            args[i] = (kf_arg){.value = pa->value};
            continue;
        }
        st = kf_buffer_create(dev, kf_type_elem(pa->type), pa->count, &bufs[i], err);
        if (st == KF_OK) st = kf_buffer_upload(bufs[i], pa->data, param_bytes(pa), err);
        args[i] = (kf_arg){.buf = bufs[i]};
    }
    kf_launch launch = {.count = p->count, .dyn_shared = p->dyn_launch};   /* zero grid and block: the schedule's */
    bool own = p->count || p->dyn_launch;
    if (st == KF_OK) st = kf_dispatch(pipe, args, p->nparams, own ? &launch : NULL, KF_DISPATCH_SYNC, NULL, err);
    for (uint32_t i = 0; i < p->nparams && st == KF_OK; i++) {
        const dt_param *pa = &p->params[i];
        if (pa->role == DT_R_SCALAR || pa->role == DT_R_IN) continue;
        out->bytes[i] = param_bytes(pa);
        out->buf[i] = malloc(out->bytes[i] ? out->bytes[i] : 1);
        if (!out->buf[i]) st = kf_error_set(err, KF_ERR_NOMEM, "out of memory reading outputs");
        else st = kf_buffer_download(bufs[i], out->buf[i], out->bytes[i], err);
    }
    for (uint32_t i = 0; i < p->nparams; i++) kf_buffer_destroy(bufs[i]);
    if (st != KF_OK) dt_outputs_free(out);
    return st;
}

/* ---- comparing ------------------------------------------------------------------------ */
static void describe(char *out, size_t len, kf_scalar s, uint64_t bits)
{
    if (kf_scalar_class[s] == 'f') snprintf(out, len, "%.9g (0x%llx)", kf_bits_to_double(s, bits), (unsigned long long)bits);
    else if (kf_scalar_class[s] == 'i') snprintf(out, len, "%lld", (long long)kf_bits_to_i64(s, bits));
    else snprintf(out, len, "%llu", (unsigned long long)bits);
}

static bool within(dt_tol tol, double want, double got)
{
    static const double bound[][2] = {
        [DT_TOL_EXACT] = {0, 0}, [DT_TOL_F32] = {8e-6, 8e-6}, [DT_TOL_TANH] = {2e-6, 2e-3}, [DT_TOL_F64] = {1e-14, 1e-13},
        [DT_TOL_RCP] = {1.2e-38, 2.4e-7}};
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (want == got) return true;
    return fabs(got - want) <= bound[tol][0] + bound[tol][1] * fabs(want);
}

bool dt_compare(const kf_dt_prog *p, const dt_outputs *a, const dt_outputs *b, bool exact, dt_diff *d)
{
    for (uint32_t i = 0; i < p->nparams; i++) {
        const dt_param *pa = &p->params[i];
        if (!a->buf[i]) continue;
        if (!b->buf[i]) {
            snprintf(d->text, sizeof d->text, "buffer '%s' was not read back", pa->name);
            return false;
        }
        kf_scalar s = (kf_scalar)pa->type.scalar;
        unsigned by = kf_scalar_bytes[s], lanes = pa->type.lanes;
        size_t n = (size_t)pa->count * lanes;
        for (size_t e = 0; e < n; e++) {
            uint64_t x = 0, y = 0;
            memcpy(&x, (const char *)a->buf[i] + e * by, by);
            memcpy(&y, (const char *)b->buf[i] + e * by, by);
            if (x == y) continue;
            double dx = kf_bits_to_double(s, x), dy = kf_bits_to_double(s, y);
            bool fl = kf_scalar_class[s] == 'f';
            dt_tol tol = pa->role == DT_R_APPROX && !exact ? (dt_tol)pa->tol[(e / lanes) % pa->slots] : DT_TOL_EXACT;
            if (fl && (tol ? within(tol, dx, dy) : (isnan(dx) && isnan(dy)))) continue;
            char w[64], g[64];
            describe(w, sizeof w, s, x);
            describe(g, sizeof g, s, y);
            size_t el = e / lanes;
            uint32_t slots = pa->role == DT_R_ATOMIC ? pa->slots : pa->slots ? pa->slots : 1;
            if (pa->role == DT_R_ATOMIC && el < pa->shared)
                snprintf(d->text, sizeof d->text, "%s[%zu] (contended atomic slot)", pa->name, el);
            else if (pa->role == DT_R_ATOMIC)
                snprintf(d->text, sizeof d->text, "%s[%zu] (thread %zu, own atomic slot %zu)", pa->name, el,
                         (el - pa->shared) / slots, (el - pa->shared) % slots);
            else
                snprintf(d->text, sizeof d->text, "%s[%zu] (thread %zu, slot %zu)", pa->name, el, el / slots, el % slots);
            char lane[32] = "";
            if (lanes > 1) snprintf(lane, sizeof lane, " lane %zu", e % lanes);
            size_t used = strlen(d->text);
            snprintf(d->text + used, sizeof d->text - used, "%s: want %s, got %s", lane, w, g);
            return false;
        }
    }
    return true;
}

/* ---- the CPU-only checks: NVRTC and ptxas accept the module ------------------------------ */
/* NVRTC compiles the module's CUDA-C for compute_<arch>, its PTX shows none
 * of the marks NVVM leaves when it merges loads of different sizes and
 * mistakes a lane for a wider value (emit/ptx_hazards.h: ptx_merged_lanes;
 * the bug behind seed 3503 program 1280, which no CPU check saw), and
 * ptxas assembles that PTX for sm_<arch>. */
kf_status dt_check_nvrtc(const kf_module *m, uint32_t arch, kf_error *err)
{
    kf_emit_opts eo = {.arch = arch};
    kf_buf text = {0};
    kf_diags d = {0};
    kf_status st = kf_cuda_emit(m, NULL, &eo, &text, NULL, &d);
    if (st != KF_OK || text.oom || !text.data) {
        st = kf_error_set(err, KF_ERR_SOURCE, "CUDA-C emission failed: %s", d.items.len ? d.items.data[0].msg : "out of memory");
    } else {   /* NVRTC passes inline asm through unchecked: ptxas assembles its PTX as the JIT would */
        char *ptx = NULL;
        st = kf_nvrtc_compile(text.data, "difftest.cu", arch, false, &ptx, NULL, err);
        char why[320];
        if (st == KF_OK && ptx_merged_lanes(ptx, why, sizeof why))
            st = kf_error_set(err, KF_ERR_SOURCE, "NVRTC's PTX %s", why);
        kf_ptxas_result res = {0};
        if (st == KF_OK && kf_ptxas_run(ptx, arch, NULL, "nvrtc.ptx", &res, &d, err) != KF_OK) {
            st = kf_error_set(err, KF_ERR_SOURCE, "ptxas sm_%u rejects NVRTC's PTX: %s", arch,
                              d.items.len ? d.items.data[0].msg : "failed");
        }
        kf_ptxas_result_free(&res);
        free(ptx);
    }
    kf_buf_free(&text);
    kf_diags_free(&d);
    return st;
}

/* kforge's own PTX for sm_<arch> holds none of the instruction patterns
 * ptxas is known to miscompile (emit/ptx_hazards.h; the PTX back end
 * avoids them all, see emit/ptx_internal.h) and ptxas assembles it. */
kf_status dt_check_ptxas(const kf_module *m, uint32_t arch, kf_error *err)
{
    kf_emit_opts eo = {.arch = arch};
    kf_buf text = {0};
    kf_diags d = {0};
    kf_linemap lm = {0};
    kf_status st = kf_ptx_emit(m, NULL, &eo, &text, &lm, &d);
    if (st != KF_OK || text.oom || !text.data) {
        st = kf_error_set(err, KF_ERR_SOURCE, "PTX emission failed: %s", d.items.len ? d.items.data[0].msg : "out of memory");
    } else {
        kf_ptxas_result res = {0};
        char why[320];
        bool hazard = ptx_hazard(text.data, why, sizeof why) != NULL;   /* what ptxas is known to miscompile */
        st = hazard ? kf_error_set(err, KF_ERR_SOURCE, "kforge's PTX %s", why)
                    : kf_ptxas_run(text.data, arch, &lm, m->file, &res, &d, err);
        if (st == KF_ERR_SOURCE && !hazard) {   /* every error, at its .kf line, in the log */
            const kf_diag *g = d.items.len ? &d.items.data[0] : NULL;
            kf_error_set(err, st, "ptxas sm_%u: %s:%u: %s", arch, g ? g->loc.file : "?", g ? g->loc.line : 0,
                         g ? g->msg : "failed");
            kf_buf log = {0};
            for (size_t i = 0; i < d.items.len; i++)
                kf_buf_printf(&log, "%s:%u:%u: error: %s\n", d.items.data[i].loc.file ? d.items.data[i].loc.file : "?",
                              d.items.data[i].loc.line, d.items.data[i].loc.col, d.items.data[i].msg);
            free(err->log);
            err->log = kf_buf_take(&log);
            kf_buf_free(&log);
        }
        kf_ptxas_result_free(&res);
    }
    kf_buf_free(&text);
    kf_linemap_free(&lm);
    kf_diags_free(&d);
    return st;
}

/* ---- which .kf lines a build error names ------------------------------------------------------ */
typedef struct {
    dt_err_line *out;
    uint32_t n, max;
    const char *log;
} err_lines;

/* Adds .kf line `line` whose error text starts at `at` (in the log). */
static void add_line(err_lines *e, uint32_t line, const char *at)
{
    for (uint32_t i = 0; i < e->n; i++)
        if (e->out[i].line == line) return;
    while (at && e->log && at > e->log && at[-1] != '\n') at--;   /* the start of its log line */
    if (line && e->n < e->max) e->out[e->n++] = (dt_err_line){line, at && e->log ? (uint32_t)(at - e->log) : 0};
}

/* The .kf lines of the emitted text's lines that NVRTC ("name(LINE): error")
 * or the JIT ("line LINE; error") names in the log. */
static void map_emitted(const kf_module *m, bool cuda, uint32_t arch, err_lines *e)
{
    kf_emit_opts eo = {.arch = arch};
    kf_buf text = {0};
    kf_linemap lm = {0};
    kf_diags d = {0};
    kf_status st = cuda ? kf_cuda_emit(m, NULL, &eo, &text, &lm, &d) : kf_ptx_emit(m, NULL, &eo, &text, &lm, &d);
    for (const char *at = e->log; st == KF_OK && (at = strstr(at, cuda ? "): error" : "; error")); at++) {
        const char *q = at;
        while (q > e->log && q[-1] >= '0' && q[-1] <= '9') q--;
        unsigned long l = strtoul(q, NULL, 10);
        if (l >= 1 && l <= lm.lines.len) add_line(e, lm.lines.data[l - 1].line, at);
    }
    kf_buf_free(&text);
    kf_linemap_free(&lm);
    kf_diags_free(&d);
}

uint32_t dt_error_lines(const kf_module *m, kf_dt_backend be, uint32_t arch, const kf_error *err, dt_err_line *out,
                        uint32_t max)
{
    err_lines e = {out, 0, max, err->log};
    for (const char *at = err->log; at && (at = strstr(at, "difftest.kf:")); at++)   /* ptxas: at the .kf line */
        add_line(&e, (uint32_t)strtoul(at + 12, NULL, 10), at);
    if (err->loc.line) add_line(&e, err->loc.line, NULL);
    if (err->log && (be == KF_DT_NVRTC || be == KF_DT_CUDA)) map_emitted(m, true, arch, &e);
    if (err->log && be == KF_DT_PTX) map_emitted(m, false, arch, &e);
    return e.n;
}

/* ---- single programs ----------------------------------------------------------------------- */
kf_dt_prog *kf_dt_generate(uint64_t seed, uint64_t index, unsigned avoid) { return dt_build(seed, index, avoid); }

void kf_dt_prog_free(kf_dt_prog *p)
{
    if (!p) return;
    kf_arena_free(&p->arena);
    free(p);
}

char *kf_dt_source(const kf_dt_prog *p)
{
    kf_buf b = {0};
    dt_print(&b, p, "", NULL);
    return kf_buf_take(&b);
}

char *kf_dt_defines(const kf_dt_prog *p)
{
    kf_arena a;
    kf_arena_init(&a);
    kf_define defs[DT_MAX_CONSTS];
    uint32_t n = dt_print_defines(p, "", NULL, &a, defs, DT_MAX_CONSTS);
    kf_buf b = {0};
    for (uint32_t i = 0; i < n; i++) kf_buf_printf(&b, "%s=%s\n", defs[i].name, defs[i].value);
    kf_arena_free(&a);
    char *s = kf_buf_take(&b);
    return s ? s : calloc(1, 1);
}

kf_status kf_dt_check_cpu(const kf_dt_prog *p, kf_error *err)
{
    dt_item it = {p, {0}, ""};
    kf_module *m;
    kf_status st = dt_compile(&it, 1, KF_OPT_O0, &m, NULL, err);
    if (st != KF_OK) return st;
    kf_device *dev = NULL;
    st = kf_device_open(KF_BACKEND_CPU, 0, &dev, err);
    kf_pipeline *pipe = NULL;
    if (st == KF_OK) st = kf_pipeline_create(dev, m, &m->kernels[0], &pipe, err);
    dt_outputs o;
    if (st == KF_OK) st = dt_run_one(dev, pipe, p, &o, err);
    if (st == KF_OK) dt_outputs_free(&o);
    kf_pipeline_destroy(pipe);
    if (dev) kf_device_close(dev);
    kf_module_free(m);
    return st;
}
