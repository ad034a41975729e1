/* The golden case file parser (golden_case.h). Deliberately tiny: one
 * keyword per line and whitespace-separated fields, so that case files stay
 * reviewable by eye and the reference generator can share this parser
 * without sharing anything that computes results. The `size` expressions
 * are read by a small recursive-descent evaluator at the end. */
#include "golden_case.h"

#include "cmd_common.h"   /* kf_cli_dims_parse: grid and block as on the command line */

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static kf_status case_error(kf_error *err, const kf_case *c, unsigned line, const char *what)
{
    return kf_error_set(err, KF_ERR_USAGE, "%s:%u: %s", c->path, line, what);
}

/* Splits s in place into whitespace-separated fields; returns how many
 * there are, of which at most max are stored (more is an error). */
static int split(char *s, char **f, int max)
{
    int n = 0;
    char *save;   /* strtok_r: kforge test -j loads cases on several threads at once */
    for (char *t = strtok_r(s, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save), n++)
        if (n < max) f[n] = t;
    return n;
}

static bool parse_tol(kf_case_expect *e, const char *f)
{
    double *slot = !strncmp(f, "abs=", 4) ? &e->abs : !strncmp(f, "rel=", 4) ? &e->rel : !strncmp(f, "ulp=", 4) ? &e->ulp : NULL;
    if (!slot) return false;
    char *end;
    *slot = strtod(f + 4, &end);
    e->has_tol = true;
    return *end == 0 && end != f + 4 && isfinite(*slot) && *slot >= 0;
}

/* The directives a case may hold only once; a second one would silently
 * replace the first. */
static const char *const single[] = {"kernel", "reference", "count", "backends", "error", "params", "grid", "block"};
enum { NSINGLE = sizeof single / sizeof single[0] };

static kf_status once(kf_case *c, unsigned line, const char *k, unsigned seen[NSINGLE], kf_error *err)
{
    for (int i = 0; i < NSINGLE; i++) {
        if (strcmp(k, single[i])) continue;
        if (seen[i])
            return kf_error_set(err, KF_ERR_USAGE, "%s:%u: a second '%s' line (the first is line %u): a case has one",
                                c->path, line, k, seen[i]);
        seen[i] = line;
    }
    return KF_OK;
}

/* The path of `rel` relative to the case's directory, with leading "../"
 * folded into the directory where it has a component to drop. */
static const char *resolve(kf_case *c, const char *rel)
{
    if (rel[0] == '/') return kf_arena_strdup(&c->arena, rel);
    size_t dlen = strlen(c->dir);
    while (!strncmp(rel, "../", 3) && dlen && strcmp(c->dir, ".")) {
        const char *slash = NULL;
        for (size_t i = dlen; i > 0; i--)
            if (c->dir[i - 1] == '/') { slash = c->dir + i - 1; break; }
        size_t comp = slash ? dlen - (size_t)(slash - c->dir) - 1 : dlen;
        if ((comp == 2 && !strncmp(c->dir + dlen - 2, "..", 2)) || comp == 0) break;
        dlen = slash ? (size_t)(slash - c->dir) : 0;
        rel += 3;
    }
    if (dlen == 0) return kf_arena_strdup(&c->arena, rel);
    return kf_arena_printf(&c->arena, "%.*s/%s", (int)dlen, c->dir, rel);
}

static kf_status directive(kf_case *c, unsigned line, char **f, int n, kf_error *err)
{
    const char *k = f[0];
    if (!strcmp(k, "kernel") && n == 3) {
        c->kf_file = resolve(c, f[1]);
        c->kernel = kf_arena_strdup(&c->arena, f[2]);
    } else if (!strcmp(k, "define") && n == 2 && strchr(f[1], '=') && f[1][0] != '=') {
        char *eq = strchr(f[1], '=');
        kf_define d = {kf_arena_strndup(&c->arena, f[1], (size_t)(eq - f[1])), kf_arena_strdup(&c->arena, eq + 1)};
        if (!KF_VEC_PUSH(&c->defines, d)) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    } else if (!strcmp(k, "arg") && n == 2 && strchr(f[1], '=') && f[1][0] != '=') {
        char *eq = strchr(f[1], '=');
        const char *name = kf_arena_strndup(&c->arena, f[1], (size_t)(eq - f[1]));
        const char *spec = kf_arena_strdup(&c->arena, eq + 1);
        if (!KF_VEC_PUSH(&c->arg_names, name) || !KF_VEC_PUSH(&c->arg_specs, spec))
            return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    } else if (!strcmp(k, "count") && n == 2) {
        if (!kf_value_parse_u64(f[1], strlen(f[1]), &c->count) || !c->count)
            return case_error(err, c, line, "expected 'count N' with N > 0 (" KF_NUMBER_SYNTAX ")");
    } else if (!strcmp(k, "shared") && n == 2) {
        uint64_t b = 0;
        if (!kf_value_parse_u64(f[1], strlen(f[1]), &b) || !b || b > UINT32_MAX)
            return case_error(err, c, line, "expected 'shared BYTES' with 1 <= BYTES <= 4294967295 (" KF_NUMBER_SYNTAX ")");
        c->shared = (uint32_t)b;
    } else if (!strcmp(k, "backends") && n >= 2) {
        static const char *const names[] = {"cpu", "cuda", "ptx"};
        for (int i = 1; i < n; i++) {
            int b = -1;
            for (int j = 0; j < 3; j++) if (!strcmp(f[i], names[j])) b = j;
            if (b < 0) return case_error(err, c, line, "expected 'backends' followed by cpu, cuda or ptx");
            c->backends |= 1u << b;
        }
    } else if ((!strcmp(k, "grid") || !strcmp(k, "block")) && n == 2) {
        if (!kf_cli_dims_parse(f[1], !strcmp(k, "grid") ? c->grid : c->block))
            return case_error(err, c, line, "expected 'grid X[,Y,Z]' or 'block X[,Y,Z]' with positive integers");
    } else if (!strcmp(k, "reference") && n == 2) {
        c->reference = kf_arena_strdup(&c->arena, f[1]);
    } else if (!strcmp(k, "expect") && n >= 3) {
        kf_case_expect e = {kf_arena_strdup(&c->arena, f[1]), resolve(c, f[2]), 0, 0, 0, false};
        for (int i = 3; i < n; i++)
            if (!parse_tol(&e, f[i])) return case_error(err, c, line, "expected a tolerance abs=A, rel=R or ulp=U (non-negative)");
        if (!KF_VEC_PUSH(&c->expects, e)) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    } else if (!strcmp(k, "error") && n >= 2) {
        return KF_OK; /* handled by the caller, which keeps the rest of the line */
    } else {
        return case_error(err, c, line, "expected one of: kernel FILE KERNEL, define NAME=VALUE, arg NAME=SPEC, count N, shared BYTES, "
                                  "backends cpu|cuda|ptx..., reference NAME, expect NAME FILE [tolerances], error TEXT, size NAME = EXPR, "
                                  "params LIST, grid X[,Y,Z], block X[,Y,Z]");
    }
    return KF_OK;
}

/* The rest of a line after its keyword, without surrounding blanks (in place). */
static char *rest_of_line(char *t)
{
    while (*t == ' ' || *t == '\t') t++;
    size_t len = strlen(t);
    while (len && (t[len - 1] == ' ' || t[len - 1] == '\t' || t[len - 1] == '\r')) len--;
    t[len] = 0;
    return t;
}

static bool keyword(const char *s, const char *kw)
{
    size_t n = strlen(kw);
    return !strncmp(s, kw, n) && (s[n] == ' ' || s[n] == '\t');
}

/* `size NAME = EXPR`: the expression's syntax is checked here, its names
 * and values when the case runs. */
static kf_status parse_size(kf_case *c, unsigned line, char *t, kf_error *err)
{
    t = rest_of_line(t);
    char *name = t;
    while (isalnum((unsigned char)*t) || *t == '_') t++;
    size_t nlen = (size_t)(t - name);
    t = rest_of_line(t);
    if (!nlen || *t != '=' || !*rest_of_line(t + 1))
        return case_error(err, c, line, "expected 'size NAME = EXPR' (e.g. size y = rows*cols)");
    kf_case_size sz = {kf_arena_strndup(&c->arena, name, nlen), kf_arena_strdup(&c->arena, rest_of_line(t + 1)), line};
    for (size_t i = 0; i < c->sizes.len; i++)
        if (!strcmp(c->sizes.data[i].name, sz.name)) return case_error(err, c, line, "the size of this buffer is declared twice");
    uint64_t ignored;
    kf_error e = {0};
    if (kf_case_size_eval(sz.expr, NULL, NULL, &ignored, &e) != KF_OK) return case_error(err, c, line, e.msg);
    if (!KF_VEC_PUSH(&c->sizes, sz)) return kf_error_set(err, KF_ERR_NOMEM, "out of memory");
    return KF_OK;
}

enum { MAX_FIELDS = 16 };

static kf_status parse_line(kf_case *c, unsigned line, char *s, unsigned seen[NSINGLE], kf_error *err)
{
    char *hash = strchr(s, '#');
    if (hash) *hash = 0;
    while (*s == ' ' || *s == '\t') s++;
    char kw[16];
    snprintf(kw, sizeof kw, "%.*s", (int)strcspn(s, " \t\r"), s);
    kf_status st = once(c, line, kw, seen, err);
    if (st != KF_OK) return st;
    if (keyword(s, "error")) {
        char *t = rest_of_line(s + 6);
        if (!*t) return case_error(err, c, line, "expected 'error TEXT'");
        c->error_text = kf_arena_strdup(&c->arena, t);
        return KF_OK;
    }
    if (keyword(s, "size")) return parse_size(c, line, s + 5, err);
    if (keyword(s, "params")) {   /* a raw kernel's parameter list, in .kf syntax (commas and spaces) */
        c->params = kf_arena_strdup(&c->arena, rest_of_line(s + 7));
        return KF_OK;
    }
    char *f[MAX_FIELDS];
    int n = split(s, f, MAX_FIELDS);
    if (n > MAX_FIELDS) return case_error(err, c, line, "more than 16 fields on one line");
    return n ? directive(c, line, f, n, err) : KF_OK;
}

static void set_names(kf_case *c, const char *path)
{
    c->path = kf_arena_strdup(&c->arena, path);
    const char *slash = strrchr(path, '/');
    c->dir = slash ? kf_arena_strndup(&c->arena, path, (size_t)(slash - path)) : ".";
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(base);
    if (len > 5 && !strcmp(base + len - 5, ".case")) len -= 5;
    c->name = kf_arena_strndup(&c->arena, base, len);
}

kf_status kf_case_load(const char *path, kf_case *c, kf_error *err)
{
    memset(c, 0, sizeof *c);
    kf_arena_init(&c->arena);
    set_names(c, path);
    char *text;
    size_t len;
    kf_status st = kf_read_file_max(path, KF_CASE_MAX, &text, &len, err);
    if (st != KF_OK) return st;
    if (strlen(text) != len) st = kf_error_set(err, KF_ERR_USAGE, "%s: contains a NUL byte", path);
    unsigned line = 1, seen[NSINGLE] = {0};
    for (char *s = text; st == KF_OK && s && *s; line++) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = 0;
        st = parse_line(c, line, s, seen, err);
        s = nl ? nl + 1 : NULL;
    }
    free(text);
    if (st == KF_OK && !c->kernel) st = kf_error_set(err, KF_ERR_USAGE, "%s: expected a 'kernel FILE KERNEL' line", path);
    if (st == KF_OK && !c->expects.len && !c->error_text)
        st = kf_error_set(err, KF_ERR_USAGE, "%s: expected at least one 'expect' or 'error' line", path);
    return st;
}

void kf_case_free(kf_case *c)
{
    KF_VEC_FREE(&c->defines);
    KF_VEC_FREE(&c->arg_names);
    KF_VEC_FREE(&c->arg_specs);
    KF_VEC_FREE(&c->expects);
    KF_VEC_FREE(&c->sizes);
    kf_arena_free(&c->arena);
}

const char *kf_case_arg(const kf_case *c, const char *name)
{
    for (size_t i = 0; i < c->arg_names.len; i++)
        if (!strcmp(c->arg_names.data[i], name)) return c->arg_specs.data[i];
    return NULL;
}

/* ---- size expressions ---------------------------------------------------- */

typedef struct {
    const char *expr, *p;
    kf_case_size_lookup lookup;   /* NULL: syntax only */
    void *ctx;
    kf_error *err;
    kf_status st;
    unsigned depth;
} size_parser;

static uint64_t size_fail(size_parser *sp, const char *what)
{
    if (sp->st == KF_OK)
        sp->st = kf_error_set(sp->err, KF_ERR_USAGE, "size expression '%s', column %u: %s", sp->expr,
                              (unsigned)(sp->p - sp->expr) + 1, what);
    return 0;
}

static void skip_blanks(size_parser *sp)
{
    while (*sp->p == ' ' || *sp->p == '\t') sp->p++;
}

static bool accept(size_parser *sp, char ch)
{
    skip_blanks(sp);
    if (*sp->p != ch) return false;
    sp->p++;
    return true;
}

/* op: + - * / % and c (cdiv), m (min), M (max). */
static uint64_t apply(size_parser *sp, char op, uint64_t a, uint64_t b)
{
    if (!sp->lookup || sp->st != KF_OK) return 1;
    switch (op) {
    case '+': return a > UINT64_MAX - b ? size_fail(sp, "the sum overflows 64 bits") : a + b;
    case '-': return b > a ? size_fail(sp, "the difference is negative") : a - b;
    case '*': return a && b > UINT64_MAX / a ? size_fail(sp, "the product overflows 64 bits") : a * b;
    case 'm': return a < b ? a : b;
    case 'M': return a > b ? a : b;
    default: break;
    }
    if (!b) return size_fail(sp, "division by zero");
    return op == '/' ? a / b : op == '%' ? a % b : a / b + (a % b != 0);
}

static uint64_t parse_sum(size_parser *sp);

static uint64_t parse_call(size_parser *sp, const char *name, size_t len)
{
    static const struct { const char *name; char op; } fns[] = {{"cdiv", 'c'}, {"min", 'm'}, {"max", 'M'}};
    char op = 0;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strlen(fns[i].name) == len && !strncmp(name, fns[i].name, len)) op = fns[i].op;
    if (!op) return size_fail(sp, "unknown function: expected cdiv(a,b), min(a,b) or max(a,b)");
    uint64_t a = parse_sum(sp);
    if (!accept(sp, ',')) return size_fail(sp, "expected ',' between the two arguments");
    uint64_t b = parse_sum(sp);
    if (!accept(sp, ')')) return size_fail(sp, "expected ')' after the two arguments");
    return apply(sp, op, a, b);
}

static uint64_t parse_name(size_parser *sp)
{
    const char *name = sp->p;
    while (isalnum((unsigned char)*sp->p) || *sp->p == '_') sp->p++;
    size_t len = (size_t)(sp->p - name);
    if (accept(sp, '(')) return parse_call(sp, name, len);
    uint64_t v = 1;
    kf_error e = {0};
    if (sp->lookup && sp->st == KF_OK && !sp->lookup(sp->ctx, name, len, &v, &e)) return size_fail(sp, e.msg);
    return v;
}

static uint64_t parse_primary(size_parser *sp)
{
    skip_blanks(sp);
    if (sp->depth >= 64) return size_fail(sp, "nested too deeply");
    sp->depth++;
    uint64_t v;
    unsigned char ch = (unsigned char)*sp->p;
    if (isdigit(ch)) {
        size_t n = 0;
        while (isalnum((unsigned char)sp->p[n]) || sp->p[n] == '_') n++;
        if (kf_value_parse_u64(sp->p, n, &v)) sp->p += n;
        else if (strspn(sp->p, "0123456789") == n && ch != '0') v = size_fail(sp, "the number does not fit in 64 bits");
        else v = size_fail(sp, "not a number: numbers are " KF_NUMBER_SYNTAX);
    } else if (isalpha(ch) || ch == '_') {
        v = parse_name(sp);
    } else if (accept(sp, '(')) {
        v = parse_sum(sp);
        if (!accept(sp, ')')) v = size_fail(sp, "expected ')'");
    } else {
        v = size_fail(sp, "expected a number, a scalar parameter or '('");
    }
    sp->depth--;
    return v;
}

static uint64_t parse_product(size_parser *sp)
{
    uint64_t v = parse_primary(sp);
    for (;;) {
        skip_blanks(sp);
        char op = *sp->p;
        if (sp->st != KF_OK || (op != '*' && op != '/' && op != '%')) return v;
        sp->p++;
        v = apply(sp, op, v, parse_primary(sp));
    }
}

static uint64_t parse_sum(size_parser *sp)
{
    uint64_t v = parse_product(sp);
    for (;;) {
        skip_blanks(sp);
        char op = *sp->p;
        if (sp->st != KF_OK || (op != '+' && op != '-')) return v;
        sp->p++;
        v = apply(sp, op, v, parse_product(sp));
    }
}

kf_status kf_case_size_eval(const char *expr, kf_case_size_lookup lookup, void *ctx, uint64_t *out, kf_error *err)
{
    size_parser sp = {expr, expr, lookup, ctx, err, KF_OK, 0};
    uint64_t v = parse_sum(&sp);
    skip_blanks(&sp);
    if (*sp.p) size_fail(&sp, "expected an operator (+ - * / %) or the end of the expression");
    if (sp.st == KF_OK) *out = v;
    return sp.st;
}
