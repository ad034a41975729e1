/* The bench file reader (bench_case.h). Like the golden case parser it only
 * reads: one keyword per line, blank-separated fields, each error at
 * path:line with what was expected. Expressions (`bytes`, `flops`) are
 * checked for syntax here with the .case `size` evaluator, and evaluated
 * over the bound arguments when a bench is prepared (cmd_bench.c). */
#include "bench_case.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_case.h"

/* The reader's state over one file. */
typedef struct {
    kf_bench_set *set;
    const char *path, *dir;
    unsigned line;
    kf_bench *b;                /* the bench being read, NULL before the first */
    kf_error *err;
} reader;

static kf_status fail(reader *r, const char *what)
{
    return kf_error_set(r->err, KF_ERR_USAGE, "%s:%u: %s", r->path, r->line, what);
}

static kf_status nomem(reader *r) { return kf_error_set(r->err, KF_ERR_NOMEM, "out of memory reading %s", r->path); }

/* The next blank-separated word of *s (NUL-terminated in place), or NULL. */
static char *word(char **s)
{
    char *p = *s + strspn(*s, " \t\r");
    if (!*p) return *s = p, NULL;
    char *end = p + strcspn(p, " \t\r");
    if (*end) *end++ = 0;
    *s = end;
    return p;
}

static bool is_name(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.-^", *s)) return false;
    return true;
}

/* NAME=SPEC into v (strings in arena); false when malformed. */
static bool binding(kf_arena *a, const char *w, kf_bench_binds *v, bool *oom)
{
    const char *eq = strchr(w, '=');
    if (!eq || eq == w || !eq[1]) return false;
    kf_cli_binding b = {kf_arena_strndup(a, w, (size_t)(eq - w)), kf_arena_strdup(a, eq + 1)};
    *oom = !b.name || !b.spec || !KF_VEC_PUSH(v, b);
    return true;
}

static bool define(kf_arena *a, const char *w, kf_cli_defines *v, bool *oom)
{
    const char *eq = strchr(w, '=');
    if (!eq || eq == w || !eq[1]) return false;
    kf_define d = {kf_arena_strndup(a, w, (size_t)(eq - w)), kf_arena_strdup(a, eq + 1)};
    *oom = !d.name || !d.value || !KF_VEC_PUSH(v, d);
    return true;
}

kf_status kf_bench_variant_parse(kf_arena *arena, const char *text, kf_bench_variant *v, kf_error *err)
{
    memset(v, 0, sizeof *v);
    char *copy = kf_arena_strdup(arena, text), *s = copy, *w;
    if (!copy) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    v->label = kf_arena_strdup(arena, text);
    bool oom = false;
    while ((w = word(&s)) && !oom) {
        bool ok;
        if (!strcmp(w, "-D")) ok = (w = word(&s)) && define(arena, w, &v->defines, &oom);
        else if (!strncmp(w, "-D", 2)) ok = define(arena, w + 2, &v->defines, &oom);
        else ok = w[0] != '-' && binding(arena, w, &v->binds, &oom);
        if (!ok)
            return kf_error_set(err, KF_ERR_USAGE, "variant '%s': '%s' is neither -D NAME=VALUE nor NAME=SPEC", text,
                                w ? w : "-D");
    }
    if (oom) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    if (!v->defines.len && !v->binds.len)
        return kf_error_set(err, KF_ERR_USAGE, "variant '%s' changes nothing: give -D NAME=VALUE or NAME=SPEC words",
                            text);
    return KF_OK;
}

void kf_bench_variant_free(kf_bench_variant *v)
{
    KF_VEC_FREE(&v->defines);
    KF_VEC_FREE(&v->binds);
}

/* ---- directives ------------------------------------------------------------------ */

static kf_status start_bench(reader *r, char *rest)
{
    const char *name = word(&rest);
    if (!name || word(&rest) || !is_name(name))
        return fail(r, "expected 'bench NAME' (letters, digits, _ . - ^)");
    for (size_t i = 0; i < r->set->benches.len; i++)
        if (!strcmp(r->set->benches.data[i].name, name)) {
            const kf_bench *o = &r->set->benches.data[i];
            char msg[600];
            snprintf(msg, sizeof msg, "a second bench named '%s' (the first is at %s:%u): names are unique", name,
                     o->path, o->line);
            return fail(r, msg);
        }
    kf_bench b = {.name = kf_arena_strdup(&r->set->arena, name), .path = r->path, .dir = r->dir, .line = r->line};
    if (!b.name || !KF_VEC_PUSH(&r->set->benches, b)) return nomem(r);
    r->b = &r->set->benches.data[r->set->benches.len - 1];
    return KF_OK;
}

/* The path of rel relative to the bench file's directory. */
static const char *resolve(reader *r, const char *rel)
{
    if (rel[0] == '/' || !strcmp(r->dir, ".")) return kf_arena_strdup(&r->set->arena, rel);
    return kf_arena_printf(&r->set->arena, "%s/%s", r->dir, rel);
}

static kf_status add_step(reader *r, char *rest)
{
    char *file = word(&rest), *kernel = word(&rest);
    if (!file || !kernel || word(&rest)) return fail(r, "expected 'kernel FILE KERNEL'");
    kf_bench_step st = {.file = resolve(r, file), .kernel = kf_arena_strdup(&r->set->arena, kernel), .line = r->line};
    if (!st.file || !st.kernel || !KF_VEC_PUSH(&r->b->steps, st)) return nomem(r);
    return KF_OK;
}

/* NAME=SPEC or NAME=VALUE words into v. */
static kf_status words(reader *r, char *rest, bool defines, void *v, const char *what)
{
    char *w;
    bool oom = false, any = false;
    while ((w = word(&rest))) {
        bool ok = defines ? define(&r->set->arena, w, v, &oom) : binding(&r->set->arena, w, v, &oom);
        if (!ok) return fail(r, what);
        if (oom) return nomem(r);
        any = true;
    }
    return any ? KF_OK : fail(r, what);
}

/* `bytes`/`flops`: the rest of the line, syntax checked; one of each. */
static kf_status expression(reader *r, char *rest, const char **slot, const char *kw)
{
    char what[160];
    while (*rest == ' ' || *rest == '\t') rest++;
    rest[strcspn(rest, "\r")] = 0;
    if (*slot) {
        snprintf(what, sizeof what, "a second '%s' line: a bench has one", kw);
        return fail(r, what);
    }
    uint64_t ignored;
    kf_error e = {0};
    if (!*rest) {
        snprintf(what, sizeof what, "expected '%s EXPR' (e.g. %s 2*m*k)", kw, kw);
        return fail(r, what);
    }
    if (kf_case_size_eval(rest, NULL, NULL, &ignored, &e) != KF_OK) return fail(r, e.msg);
    *slot = kf_arena_strdup(&r->set->arena, rest);
    return *slot ? KF_OK : nomem(r);
}

static kf_status ratio(reader *r, char *rest, double *slot, const char *kw)
{
    char *w = word(&rest), *end = NULL;
    double v = w ? strtod(w, &end) : 0;
    char what[160];
    if (*slot) {
        snprintf(what, sizeof what, "a second '%s' line: a bench has one", kw);
        return fail(r, what);
    }
    if (!w || *end || word(&rest) || !isfinite(v) || v <= 0 || v > 100) {
        snprintf(what, sizeof what, "expected '%s RATIO' with 0 < RATIO <= 100 (e.g. %s 0.9)", kw, kw);
        return fail(r, what);
    }
    *slot = v;
    return KF_OK;
}

static kf_status step_launch(reader *r, const char *kw, char *rest)
{
    kf_bench_step *st = &r->b->steps.data[r->b->steps.len - 1];
    char *w = word(&rest);
    uint64_t v = 0;
    bool ok = w && !word(&rest);
    if (!strcmp(kw, "count")) {
        ok = ok && kf_value_parse_u64(w, strlen(w), &v) && v;
        st->count = v;
        return ok ? KF_OK : fail(r, "expected 'count N' with N > 0 (" KF_NUMBER_SYNTAX ")");
    }
    if (!strcmp(kw, "shared")) {
        ok = ok && kf_value_parse_u64(w, strlen(w), &v) && v <= UINT32_MAX;
        st->launch.dyn_shared = (uint32_t)v;
        return ok ? KF_OK : fail(r, "expected 'shared BYTES' with 0 <= BYTES <= 4294967295");
    }
    ok = ok && kf_cli_dims_parse(w, !strcmp(kw, "grid") ? st->launch.grid : st->launch.block);
    return ok ? KF_OK : fail(r, "expected 'grid X[,Y,Z]' or 'block X[,Y,Z]' with positive integers");
}

/* `params LIST`: a raw step's parameter list, the rest of the line (checked
 * when the step is prepared, as a .case's); one per step. */
static kf_status step_params(reader *r, kf_bench_step *st, char *rest)
{
    while (*rest == ' ' || *rest == '\t') rest++;
    rest[strcspn(rest, "\r")] = 0;
    if (st->params) return fail(r, "a second 'params' line: a step has one");
    if (!*rest) return fail(r, "expected 'params LIST' (e.g. params a: &[f16], c: &mut [f32], n: u32)");
    st->params = kf_arena_strdup(&r->set->arena, rest);
    return st->params ? KF_OK : nomem(r);
}

static kf_status add_variant(reader *r, char *rest)
{
    while (*rest == ' ' || *rest == '\t') rest++;
    rest[strcspn(rest, "\r")] = 0;
    kf_bench_variant v;
    kf_error e = {0};
    kf_status st = kf_bench_variant_parse(&r->set->arena, rest, &v, &e);
    if (st == KF_OK && !KF_VEC_PUSH(&r->b->variants, v)) st = kf_error_set(&e, KF_ERR_NOMEM, "out of memory");
    if (st != KF_OK) kf_bench_variant_free(&v);
    return st == KF_OK ? KF_OK : fail(r, e.msg);
}

/* Directives that belong to a step, and those of the bench itself. */
static kf_status directive(reader *r, const char *kw, char *rest)
{
    static const char *const step_kws[] = {"arg", "count", "grid", "block", "shared", "params"};
    kf_bench *b = r->b;
    bool in_step = b->steps.len > 0;
    for (size_t i = 0; i < sizeof step_kws / sizeof step_kws[0]; i++)
        if (!strcmp(kw, step_kws[i]) && !in_step) {
            char what[160];
            snprintf(what, sizeof what, "'%s' belongs to a step: put it after a 'kernel FILE KERNEL' line", kw);
            return fail(r, what);
        }
    kf_bench_step *st = in_step ? &b->steps.data[b->steps.len - 1] : NULL;
    if (!strcmp(kw, "kernel")) return add_step(r, rest);
    if (!strcmp(kw, "define"))
        return words(r, rest, true, st ? (void *)&st->defines : (void *)&b->defines, "expected 'define NAME=VALUE...'");
    if (!strcmp(kw, "set")) return words(r, rest, false, &b->sets, "expected 'set NAME=SPEC...'");
    if (!strcmp(kw, "arg")) return words(r, rest, false, &st->args, "expected 'arg NAME=SPEC...'");
    if (!strcmp(kw, "count") || !strcmp(kw, "grid") || !strcmp(kw, "block") || !strcmp(kw, "shared"))
        return step_launch(r, kw, rest);
    if (!strcmp(kw, "params")) return step_params(r, st, rest);
    if (!strcmp(kw, "bytes")) return expression(r, rest, &b->bytes, kw);
    if (!strcmp(kw, "flops")) return expression(r, rest, &b->flops, kw);
    if (!strcmp(kw, "target")) return ratio(r, rest, &b->target, kw);
    if (!strcmp(kw, "startup")) return ratio(r, rest, &b->startup, kw);
    if (!strcmp(kw, "variant")) return add_variant(r, rest);
    return fail(r, "expected one of: bench NAME, define NAME=VALUE..., set NAME=SPEC..., kernel FILE KERNEL, "
                   "arg NAME=SPEC..., count N, grid X,Y,Z, block X,Y,Z, shared BYTES, params LIST, bytes EXPR, flops EXPR, "
                   "target RATIO, startup RATIO, variant WORDS...");
}

static kf_status parse_line(reader *r, char *s)
{
    char *hash = strchr(s, '#');
    if (hash) *hash = 0;
    char *kw = word(&s);
    if (!kw) return KF_OK;
    if (!strcmp(kw, "bench")) return start_bench(r, s);
    if (!r->b) return fail(r, "expected 'bench NAME' before anything else");
    return directive(r, kw, s);
}

/* Each bench of the file has a step. */
static kf_status check_steps(reader *r, size_t first)
{
    for (size_t i = first; i < r->set->benches.len; i++) {
        const kf_bench *b = &r->set->benches.data[i];
        if (b->steps.len) continue;
        r->line = b->line;
        return fail(r, "this bench has no 'kernel FILE KERNEL' line");
    }
    return KF_OK;
}

kf_status kf_bench_file_load(kf_bench_set *set, const char *path, kf_error *err)
{
    const char *slash = strrchr(path, '/');
    reader r = {set, kf_arena_strdup(&set->arena, path),
                slash ? kf_arena_strndup(&set->arena, path, (size_t)(slash - path)) : ".", 0, NULL, err};
    if (!r.path || !r.dir) return nomem(&r);
    char *text;
    size_t len, first = set->benches.len;
    kf_status st = kf_read_file_max(path, KF_BENCH_FILE_MAX, &text, &len, err);
    if (st != KF_OK) return st;
    if (strlen(text) != len) st = kf_error_set(err, KF_ERR_USAGE, "%s: contains a NUL byte", path);
    for (char *s = text; st == KF_OK && s && *s;) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = 0;
        r.line++;
        st = parse_line(&r, s);
        s = nl ? nl + 1 : NULL;
    }
    free(text);
    if (st == KF_OK) st = check_steps(&r, first);
    return st;
}

void kf_bench_set_free(kf_bench_set *set)
{
    for (size_t i = 0; i < set->benches.len; i++) {
        kf_bench *b = &set->benches.data[i];
        for (size_t s = 0; s < b->steps.len; s++) {
            KF_VEC_FREE(&b->steps.data[s].defines);
            KF_VEC_FREE(&b->steps.data[s].args);
        }
        for (size_t v = 0; v < b->variants.len; v++) kf_bench_variant_free(&b->variants.data[v]);
        KF_VEC_FREE(&b->defines);
        KF_VEC_FREE(&b->sets);
        KF_VEC_FREE(&b->steps);
        KF_VEC_FREE(&b->variants);
    }
    KF_VEC_FREE(&set->benches);
    kf_arena_free(&set->arena);
}
