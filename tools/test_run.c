/* One golden-output case (golden_case.h) on each backend it asks for:
 * compile it (or read a raw kernel), bind its inputs exactly as `kforge
 * run` does, check its declared sizes, run it, and compare every expected
 * output within its tolerance. Everything a case prints goes to its
 * worker's stream, so `kforge test -j N` can run cases side by side and
 * still list them in order (tools/cmd_test.c). */
#include <math.h>
#include <string.h>

#include "../ir/numeric.h"
#include "golden_case.h"
#include "npy.h"
#include "test_run.h"

/* An unusable case or .npy file: a FAIL line in the listing, the problem
 * on stderr, and exit 2 at the end. */
static void bad_input(kf_test_worker *w, const char *name, const char *msg)
{
    fprintf(w->out, "FAIL %s: %s\n", name, msg);
    fprintf(stderr, "kforge test: error: %s\n", msg);
    w->n->bad_input = true;
}

/* ---- comparing one output ------------------------------------------------ */

typedef struct {
    double max_abs, max_ulp;
    size_t bad, first_bad;
    double got, want, allowed;
} cmp_result;

static unsigned precision(kf_scalar s) { return s == KF_S_F16 ? 11 : s == KF_S_BF16 ? 8 : s == KF_S_F32 ? 24 : 53; }
static int min_exp(kf_scalar s) { return s == KF_S_F16 ? -14 : s == KF_S_F64 ? -1022 : -126; }

/* The size of one unit in the last place of type s at magnitude |x|. */
static double ulp_of(kf_scalar s, double x)
{
    int e = x == 0 || !isfinite(x) ? min_exp(s) : ilogb(x);
    if (e < min_exp(s)) e = min_exp(s);
    return ldexp(1.0, e - (int)precision(s) + 1);
}

static uint64_t load_bits(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned b = 0; b < bytes; b++) v |= (uint64_t)p[b] << (8 * b);
    return v;
}

static bool float_ok(const kf_case_expect *e, kf_scalar s, double got, double want, cmp_result *r)
{
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    if (got == want) return e->has_tol || signbit(got) == signbit(want);   /* exact: -0.0 is not +0.0 */
    if (isinf(got) || isinf(want)) return false;
    double d = fabs(got - want), u = d / ulp_of(s, want);
    if (d > r->max_abs) r->max_abs = d;
    if (u > r->max_ulp) r->max_ulp = u;
    return e->has_tol && (d <= e->abs + e->rel * fabs(want) || (e->ulp > 0 && u <= e->ulp));
}

static void compare(const kf_case_expect *e, kf_scalar s, const void *got, const void *want, size_t n, cmp_result *r)
{
    unsigned bytes = kf_scalar_bytes[s];
    bool fl = kf_scalar_class[s] == 'f';
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < n; i++) {
        uint64_t g = load_bits((const unsigned char *)got + i * bytes, bytes);
        uint64_t w = load_bits((const unsigned char *)want + i * bytes, bytes);
        double gd = fl ? kf_bits_to_double(s, g) : 0, wd = fl ? kf_bits_to_double(s, w) : 0;
        bool ok = fl ? float_ok(e, s, gd, wd, r) : g == w;
        if (ok) continue;
        if (!r->bad++) {
            r->first_bad = i;
            r->got = fl ? gd : (double)kf_bits_to_i64(s, g);
            r->want = fl ? wd : (double)kf_bits_to_i64(s, w);
            r->allowed = e->abs + e->rel * fabs(wd);
        }
    }
}

/* ---- running one case on one backend ------------------------------------- */

/* A case compiled and bound, its declared sizes evaluated, its expected
 * outputs read. */
typedef struct {
    kf_module *m;
    const kf_ir_kernel *k;   /* m's kernel, or raw.k */
    bool is_raw;
    kf_cli_raw raw;          /* a raw kernel (kernel FILE.cu|FILE.ptx ENTRY) */
    kf_cli_inputs in;
    uint64_t *need;   /* per parameter: elements the kernel indexes (0: none declared) */
    kf_npy *want;     /* per `expect` line: the expected output */
} prepared;

/* Compares buffer e->name after the run with its expected output `want` and
 * prints the FAIL line itself; *r receives the comparison (its largest
 * errors on success). */
static bool check_expect(FILE *out, const kf_case *c, const kf_case_expect *e, const kf_npy *want,
                         const kf_ir_kernel *k, const kf_cli_devargs *da, const char *bname, cmp_result *r)
{
    int i = kf_cli_find_param(k, e->name);
    kf_error err = {0};
    void *got = NULL;
    size_t bytes = 0;
    const char *why = NULL;
    memset(r, 0, sizeof *r);
    if (kf_cli_devargs_read(da, (uint32_t)i, &got, &bytes, &err) != KF_OK) why = err.msg;
    else if (bytes != want->bytes) why = "has a different length than the expected file";
    if (!why) compare(e, (kf_scalar)k->params[i].type.scalar, got, want->data, want->count, r);
    if (why)
        fprintf(out, "FAIL %s [%s] %s %s\n", c->name, bname, e->name, why);
    else if (r->bad)
        fprintf(out, "FAIL %s [%s] %s[%zu]: got %.9g, want %.9g (abs err %.3g, allowed %.3g + %g ulp); %zu of %zu elements differ\n",
               c->name, bname, e->name, r->first_bad, r->got, r->want, fabs(r->got - r->want), r->allowed, e->ulp, r->bad,
               want->count);
    free(got);
    return !why && !r->bad;
}

/* Checks every expected output; prints the FAIL line itself, returns pass. */
static bool check_outputs(FILE *out, const kf_case *c, const prepared *pc, const kf_cli_devargs *da,
                          const char *bname, char *summary, size_t ssize)
{
    double max_abs = 0, max_ulp = 0;
    for (size_t x = 0; x < c->expects.len; x++) {
        cmp_result r;
        if (!check_expect(out, c, &c->expects.data[x], &pc->want[x], pc->k, da, bname, &r)) return false;
        max_abs = fmax(max_abs, r.max_abs);
        max_ulp = fmax(max_ulp, r.max_ulp);
    }
    snprintf(summary, ssize, "max_abs_err=%.3g max_ulp=%.3g", max_abs, max_ulp);
    return true;
}

/* Reads every expected output and checks it against its parameter. */
static kf_status read_expects(const kf_case *c, prepared *pc, kf_error *err)
{
    pc->want = calloc(c->expects.len + 1, sizeof *pc->want);
    if (!pc->want) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    for (size_t x = 0; x < c->expects.len; x++) {
        const kf_case_expect *e = &c->expects.data[x];
        int i = kf_cli_find_param(pc->k, e->name);
        size_t elems;
        if (i < 0 || pc->k->params[i].type.kind != KF_TK_BUFFER)
            return kf_error_set(err, KF_ERR_USAGE, "%s: expect %s: kernel '%s' has no buffer parameter '%s'", c->path,
                                e->name, pc->k->name, e->name);
        kf_type elem = kf_type_vector((kf_scalar)pc->k->params[i].type.scalar, pc->k->params[i].type.lanes);
        kf_status st = kf_npy_read(e->file, &pc->want[x], err);
        if (st == KF_OK) st = kf_npy_match(&pc->want[x], elem, e->name, &elems, err);
        if (st != KF_OK) return st;
    }
    return KF_OK;
}

static void prepared_free(const kf_case *c, prepared *pc)
{
    for (size_t x = 0; pc->want && x < c->expects.len; x++) kf_npy_free(&pc->want[x]);
    free(pc->want);
    kf_cli_inputs_free(&pc->in);
    kf_module_free(pc->m);
    kf_cli_raw_free(&pc->raw);
    free(pc->need);
}

/* ---- declared buffer sizes ------------------------------------------------ */

static bool size_lookup(void *ctx, const char *name, size_t len, uint64_t *value, kf_error *err)
{
    const prepared *pc = ctx;
    int found = kf_cli_scalar_u64(pc->k, &pc->in, name, len, value, err);
    if (found) return found > 0;
    kf_error_set(err, KF_ERR_USAGE, "'%.*s' is not an integer scalar parameter of kernel '%s'", (int)len, name,
                 pc->k->name);
    return false;
}

/* Evaluates every `size` line of c against the bound scalar arguments. */
static kf_status eval_sizes(const kf_case *c, prepared *pc, kf_error *err)
{
    pc->need = calloc(pc->k->nparams + 1, sizeof *pc->need);
    if (!pc->need) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    for (size_t j = 0; j < c->sizes.len; j++) {
        const kf_case_size *sz = &c->sizes.data[j];
        int i = kf_cli_find_param(pc->k, sz->name);
        if (i < 0 || pc->k->params[i].type.kind != KF_TK_BUFFER)
            return kf_error_set(err, KF_ERR_USAGE, "%s:%u: kernel '%s' has no buffer parameter '%s'", c->path, sz->line,
                                pc->k->name, sz->name);
        kf_status st = kf_case_size_eval(sz->expr, size_lookup, pc, &pc->need[i], err);
        if (st != KF_OK) {
            char msg[sizeof err->msg];
            memcpy(msg, err->msg, sizeof msg);
            return kf_error_set(err, st, "%s:%u: %s", c->path, sz->line, msg);
        }
    }
    return KF_OK;
}

/* Every buffer holds at least the elements its `size` line declares;
 * otherwise an error naming the parameter and both sizes. */
static kf_status check_sizes(const kf_case *c, const prepared *pc, kf_error *err)
{
    for (size_t j = 0; j < c->sizes.len; j++) {
        int i = kf_cli_find_param(pc->k, c->sizes.data[j].name);
        if (pc->in.elems[i] < pc->need[i])
            return kf_error_set(err, KF_ERR_USAGE,
                                "parameter '%s': the buffer holds %zu elements but the kernel indexes %llu (size %s = %s); "
                                "nothing was launched",
                                c->sizes.data[j].name, pc->in.elems[i], (unsigned long long)pc->need[i],
                                c->sizes.data[j].name, c->sizes.data[j].expr);
    }
    return KF_OK;
}

/* ---- the runs ---------------------------------------------------------------- */

/* The case's pipeline on dev: the .kf kernel, or the raw source. */
static kf_status pipeline_for(const prepared *pc, kf_device *dev, kf_pipeline **out, kf_error *err)
{
    return kf_cli_pipeline(dev, pc->m, pc->k, pc->is_raw ? &pc->raw : NULL, out, err);
}

/* Prints the PASS or FAIL line of a run that ended with st/err. */
static bool judge(FILE *out, const kf_case *c, const prepared *pc, const kf_cli_devargs *da, const char *bname,
                  kf_status st, const kf_error *err)
{
    bool pass;
    char summary[1200] = "";
    if (c->error_text) {
        pass = st != KF_OK && strstr(err->msg, c->error_text);
        if (pass) snprintf(summary, sizeof summary, "expected error: %s", err->msg);
        else if (st == KF_OK) fprintf(out, "FAIL %s [%s] ran without the expected error '%s'\n", c->name, bname, c->error_text);
        else fprintf(out, "FAIL %s [%s] error '%s' does not contain '%s'\n", c->name, bname, err->msg, c->error_text);
    } else if (st != KF_OK) {
        fprintf(out, "FAIL %s [%s] %s\n", c->name, bname, err->msg);
        pass = false;
    } else {
        pass = check_outputs(out, c, pc, da, bname, summary, sizeof summary);
    }
    if (pass) fprintf(out, "PASS %s [%s] %s\n", c->name, bname, summary);
    return pass;
}

static bool run_on(FILE *out, const kf_case *c, const prepared *pc, kf_device *dev, const char *bname)
{
    const kf_ir_kernel *k = pc->k;
    const kf_cli_inputs *in = &pc->in;
    kf_error err = {0};
    kf_pipeline *pipe = NULL;
    kf_cli_devargs da = {0};
    uint64_t count = 0;
    kf_status st = check_sizes(c, pc, &err);
    if (st == KF_OK && !c->grid[0]) st = kf_cli_launch_count(k, in, c->count, "a 'count N' line", &count, &err);
    if (st == KF_OK) st = pipeline_for(pc, dev, &pipe, &err);
    if (st == KF_OK) kf_cli_print_warning("test", pipe);
    if (st == KF_OK) st = kf_cli_devargs_make(dev, k, in, &da, &err);
    if (st == KF_OK) {
        kf_launch launch = {{c->grid[0], c->grid[1], c->grid[2]}, {c->block[0], c->block[1], c->block[2]}, c->shared, count};
        st = kf_dispatch(pipe, da.args, da.n, &launch, KF_DISPATCH_SYNC, NULL, &err);
    }
    bool pass = judge(out, c, pc, &da, bname, st, &err);
    kf_cli_devargs_free(&da);
    if (pipe) kf_pipeline_destroy(pipe);
    kf_error_clear(&err);
    return pass;
}

static kf_device *backend_device(kf_test_worker *w, kf_backend b);

/* ---- --same-as-O0: the optimised IR against the IR as lowered --------------- */

/* Runs kernel k of m on the CPU with the case's inputs; every buffer
 * afterwards in bufs[i] (bytes[i]), or the error. */
static kf_status run_cpu(kf_device *dev, const kf_case *c, const prepared *pc, const kf_module *m,
                         const kf_ir_kernel *k, void **bufs, size_t *bytes, kf_error *err)
{
    kf_pipeline *pipe = NULL;
    kf_cli_devargs da = {0};
    uint64_t count = 0;
    kf_status st = kf_cli_launch_count(k, &pc->in, c->count, "a 'count N' line", &count, err);
    if (st == KF_OK) st = kf_pipeline_create(dev, m, k, &pipe, err);
    if (st == KF_OK) st = kf_cli_devargs_make(dev, k, &pc->in, &da, err);
    if (st == KF_OK) {
        kf_launch launch = {.count = count};
        st = kf_dispatch(pipe, da.args, da.n, &launch, KF_DISPATCH_SYNC, NULL, err);
    }
    for (uint32_t i = 0; st == KF_OK && i < k->nparams; i++)
        if (k->params[i].type.kind == KF_TK_BUFFER) st = kf_cli_devargs_read(&da, i, &bufs[i], &bytes[i], err);
    kf_cli_devargs_free(&da);
    if (pipe) kf_pipeline_destroy(pipe);
    return st;
}

/* Why two runs' buffers differ ("" when they do not): the first element
 * that differs, as bits. */
static void buffer_difference(const kf_ir_kernel *k, void *const *b0, const size_t *n0, void *const *b1,
                              const size_t *n1, char *why, size_t size)
{
    why[0] = 0;
    for (uint32_t i = 0; i < k->nparams && !why[0]; i++) {
        if (k->params[i].type.kind != KF_TK_BUFFER) continue;
        unsigned by = kf_scalar_bytes[k->params[i].type.scalar];
        if (n0[i] != n1[i]) {
            snprintf(why, size, "%s: %zu bytes at -O0, %zu optimised", k->params[i].name, n0[i], n1[i]);
            continue;
        }
        for (size_t e = 0; e + by <= n0[i] && !why[0]; e += by) {
            uint64_t x = load_bits((const unsigned char *)b0[i] + e, by), y = load_bits((const unsigned char *)b1[i] + e, by);
            if (x != y)
                snprintf(why, size, "%s[%zu]: 0x%llx at -O0, 0x%llx optimised", k->params[i].name, e / by,
                         (unsigned long long)x, (unsigned long long)y);
        }
    }
}

/* The case on the CPU at -O0 and at the chosen level: the same error, or
 * the same bits in every buffer. Prints the SAME or FAIL line. */
static bool same_as_O0(kf_test_worker *w, const kf_case *c, const prepared *pc)
{
    kf_device *dev = backend_device(w, KF_BACKEND_CPU);
    kf_module *m0 = NULL;
    kf_cli_defines defs = {0};
    for (size_t i = 0; i < c->defines.len; i++) KF_VEC_PUSH(&defs, c->defines.data[i]);
    int rc = dev ? kf_cli_compile("test", c->kf_file, &defs, KF_OPT_O0, &m0) : KF_EXIT_RUNTIME;
    KF_VEC_FREE(&defs);
    const kf_ir_kernel *k0 = m0 ? kf_module_kernel(m0, c->kernel) : NULL, *k1 = pc->k;
    uint32_t np = k1->nparams;
    void **b0 = calloc(np + 1, sizeof *b0), **b1 = calloc(np + 1, sizeof *b1);
    size_t *n0 = calloc(np + 1, sizeof *n0), *n1 = calloc(np + 1, sizeof *n1);
    char why[2200] = "cannot compile or run at -O0";
    kf_error e0 = {0}, e1 = {0};
    if (rc == KF_EXIT_OK && k0 && k0->nparams == np && b0 && b1 && n0 && n1) {
        kf_status s0 = run_cpu(dev, c, pc, m0, k0, b0, n0, &e0), s1 = run_cpu(dev, c, pc, pc->m, k1, b1, n1, &e1);
        if (s0 != s1 || (s0 != KF_OK && strcmp(e0.msg, e1.msg)))
            snprintf(why, sizeof why, "at -O0: %s; optimised: %s", s0 ? e0.msg : "no error", s1 ? e1.msg : "no error");
        else if (s0 == KF_OK) buffer_difference(k1, b0, n0, b1, n1, why, sizeof why);
        else why[0] = 0;
    }
    if (why[0]) fprintf(w->out, "FAIL %s [cpu -O0] %s\n", c->name, why);
    else fprintf(w->out, "SAME %s [cpu -O0]\n", c->name);
    for (uint32_t i = 0; i < np; i++) free(b0 ? b0[i] : NULL), free(b1 ? b1[i] : NULL);
    free(b0), free(b1), free(n0), free(n1);
    kf_error_clear(&e0), kf_error_clear(&e1);
    kf_module_free(m0);
    return !why[0];
}

/* This worker's device of backend b (the opts say which open), opened
 * on first use. */
static kf_device *backend_device(kf_test_worker *w, kf_backend b)
{
    if (!w->dev[b] && w->o->available[b]) {
        kf_error err = {0};
        if (kf_device_open(b, 0, &w->dev[b], &err) != KF_OK) {
            w->dev[b] = NULL;
            fprintf(stderr, "kforge test: error: %s backend: %s\n", kf_cli_backend_name(b), err.msg);
        }
        kf_error_clear(&err);
    }
    return w->dev[b];
}

void kf_test_worker_close(kf_test_worker *w)
{
    for (int b = 0; b < 3; b++) kf_device_close(w->dev[b]);
    memset(w->dev, 0, sizeof w->dev);
}

/* The case's kernel: compiled from its .kf file, or a raw source read
 * (the stand-in kernel of its parameter list). Prints a FAIL line on error. */
static bool kernel_of(kf_test_worker *w, const kf_case *c, prepared *pc)
{
    kf_src_kind kind;
    if ((pc->is_raw = kf_cli_raw_kind(c->kf_file, &kind))) {
        kf_error err = {0};
        if (!c->block[0]) fprintf(w->out, "FAIL %s: a raw kernel needs a 'block X[,Y,Z]' line\n", c->name);
        else if (kf_cli_raw_load(c->kf_file, c->kernel, c->params, c->block, &pc->raw, &err) != KF_OK)
            fprintf(w->out, "FAIL %s: %s\n", c->name, err.msg);
        else return (pc->k = &pc->raw.k);
        return false;
    }
    if (c->params || c->block[0] || c->grid[0]) {
        fprintf(w->out, "FAIL %s: 'params', 'block' and 'grid' are for raw kernels (.cu, .ptx); %s declares its own\n",
                c->name, c->kf_file);
        return false;
    }
    kf_cli_defines defs = {0};
    for (size_t i = 0; i < c->defines.len; i++) KF_VEC_PUSH(&defs, c->defines.data[i]);
    int rc = kf_cli_compile("test", c->kf_file, &defs, w->o->opt, &pc->m);
    KF_VEC_FREE(&defs);
    if (rc != KF_EXIT_OK) fprintf(w->out, "FAIL %s: %s does not compile\n", c->name, c->kf_file);
    else if (!(pc->k = kf_module_kernel(pc->m, c->kernel)))
        fprintf(w->out, "FAIL %s: %s has no kernel '%s'\n", c->name, c->kf_file, c->kernel);
    else if (c->count && pc->k->sched.ngrid)
        fprintf(w->out, "FAIL %s: 'count' has no effect: kernel '%s' has a grid in its @schedule\n", c->name, c->kernel);
    else return true;
    return false;
}

/* Compiles the case, binds its inputs, evaluates its declared sizes and
 * reads its expected outputs; prints a FAIL line on error, and marks a
 * missing or malformed .npy file as bad input (exit 2). */
static bool prepare(kf_test_worker *w, const kf_case *c, prepared *pc)
{
    if (!kernel_of(w, c, pc)) return false;
    KF_VEC(kf_cli_binding) b = {0};
    for (size_t i = 0; i < c->arg_names.len; i++) {
        kf_cli_binding x = {c->arg_names.data[i], c->arg_specs.data[i]};
        KF_VEC_PUSH(&b, x);
    }
    kf_error err = {0};
    kf_status st = kf_cli_inputs_make(pc->k, b.data, b.len, c->dir, &pc->in, &err);
    KF_VEC_FREE(&b);
    if (st == KF_OK) st = eval_sizes(c, pc, &err);
    if (st == KF_OK) st = read_expects(c, pc, &err);
    if (st == KF_ERR_IO) bad_input(w, c->name, err.msg);   /* a missing or malformed .npy file */
    else if (st != KF_OK) fprintf(w->out, "FAIL %s: %s\n", c->name, err.msg);
    return st == KF_OK;
}

/* The case on each backend it asks for and the options allow. */
static void run_backends(kf_test_worker *w, const kf_case *c, const prepared *pc)
{
    for (int b = KF_BACKEND_CPU; b <= KF_BACKEND_PTX; b++) {
        if (c->backends && !(c->backends & (1u << b))) continue;
        if (w->o->only && !(w->o->only & (1u << b))) continue;
        const char *why = kf_cli_raw_not_applicable(pc->is_raw ? &pc->raw : NULL, (kf_backend)b);
        if (why) fprintf(w->out, "SKIP %s [%s] not applicable: %s\n", c->name, kf_cli_backend_name((kf_backend)b), why);
        kf_device *dev = why ? NULL : backend_device(w, (kf_backend)b);
        if (!dev) w->n->skipped++;
        else if (run_on(w->out, c, pc, dev, kf_cli_backend_name((kf_backend)b))) w->n->passed++;
        else w->n->failed++;
    }
}

void kf_test_case_run(kf_test_worker *w, const char *path)
{
    kf_case c;
    kf_error err = {0};
    if (kf_case_load(path, &c, &err) != KF_OK) {
        bad_input(w, c.name ? c.name : path, err.msg);
        w->n->failed++;
        kf_case_free(&c);
        return;
    }
    prepared pc = {0};
    if (!prepare(w, &c, &pc)) {
        w->n->failed++;
    } else {
        run_backends(w, &c, &pc);
        if (w->o->same_as_O0 && !pc.is_raw && !(c.backends && !(c.backends & 1u << KF_BACKEND_CPU))) {
            if (same_as_O0(w, &c, &pc)) w->n->passed++;
            else w->n->failed++;
        }
    }
    prepared_free(&c, &pc);
    kf_case_free(&c);
}
