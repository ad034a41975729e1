/* The golden case format's `size NAME = EXPR` declarations
 * (tools/golden_case.c): the expression evaluator's precedence, functions
 * and refusals (negative, overflow, division by zero, unknown names, bad
 * syntax with its column), the case-file line parser, and the rule that
 * every library-kernel case that computes outputs declares the size of
 * each of its kernel's buffers, and that cases load the same from many
 * threads at once (kforge test -j). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../tools/golden_case.h"

#define SRC KF_SOURCE_DIR

/* Scalars for the evaluator: n = 100, rows = 3, cols = 1001, zero = 0. */
static bool lookup(void *ctx, const char *name, size_t len, uint64_t *value, kf_error *err)
{
    (void)ctx;
    static const struct { const char *name; uint64_t v; } vars[] = {{"n", 100}, {"rows", 3}, {"cols", 1001}, {"zero", 0}};
    for (size_t i = 0; i < 4; i++)
        if (strlen(vars[i].name) == len && !strncmp(vars[i].name, name, len)) {
            *value = vars[i].v;
            return true;
        }
    kf_error_set(err, KF_ERR_USAGE, "'%.*s' is not an integer scalar parameter", (int)len, name);
    return false;
}

static uint64_t eval_ok(const char *expr)
{
    uint64_t v = 12345;
    kf_error err = {0};
    kf_status st = kf_case_size_eval(expr, lookup, NULL, &v, &err);
    if (st != KF_OK) fprintf(stderr, "%s: %s\n", expr, err.msg);
    assert_int_equal(st, KF_OK);
    return v;
}

/* Evaluation must fail with a message containing `want`. */
static void eval_fails(const char *expr, const char *want)
{
    uint64_t v = 7;
    kf_error err = {0};
    assert_int_equal(kf_case_size_eval(expr, lookup, NULL, &v, &err), KF_ERR_USAGE);
    if (!strstr(err.msg, want)) fprintf(stderr, "%s: got '%s', want '%s'\n", expr, err.msg, want);
    assert_non_null(strstr(err.msg, want));
    assert_int_equal(v, 7);
}

static void test_size_expressions_follow_arithmetic_precedence(void **state)
{
    assert_int_equal(eval_ok("n"), 100);
    assert_int_equal(eval_ok("rows*cols"), 3003);
    assert_int_equal(eval_ok(" rows * cols + 1 "), 3004);
    assert_int_equal(eval_ok("1 + rows * cols"), 3004);
    assert_int_equal(eval_ok("(1 + rows) * cols"), 4004);
    assert_int_equal(eval_ok("n - 10 - 20"), 70);
    assert_int_equal(eval_ok("n / 7 % 5"), 4);
    assert_int_equal(eval_ok("42"), 42);
}

static void test_size_functions_cdiv_min_max(void **state)
{
    assert_int_equal(eval_ok("cdiv(n, 3)"), 34);
    assert_int_equal(eval_ok("cdiv(n, 4) * 4"), 100);
    assert_int_equal(eval_ok("cdiv(cols,8)"), 126);
    assert_int_equal(eval_ok("min(n, rows*cols)"), 100);
    assert_int_equal(eval_ok("max(n, rows*cols)"), 3003);
}

static void test_size_expressions_refuse_what_has_no_element_count(void **state)
{
    eval_fails("rows - n", "the difference is negative");
    eval_fails("n / zero", "division by zero");
    eval_fails("cdiv(n, zero)", "division by zero");
    eval_fails("4294967296 * 4294967296", "overflows 64 bits");
    eval_fails("18446744073709551615 + 1", "overflows 64 bits");
    eval_fails("99999999999999999999", "does not fit in 64 bits");
    eval_fails("m * 2", "'m' is not an integer scalar parameter");
}

static void test_size_syntax_errors_give_the_column_and_what_was_expected(void **state)
{
    eval_fails("rows *", "column 7: expected a number, a scalar parameter or '('");
    eval_fails("(rows", "expected ')'");
    eval_fails("rows cols", "column 6: expected an operator");
    eval_fails("sqrt(n)", "expected cdiv(a,b), min(a,b) or max(a,b)");
    eval_fails("min(n)", "expected ',' between the two arguments");
    eval_fails("n = 3", "column 3: expected an operator");
    char deep[400];
    memset(deep, '(', 200);
    strcpy(deep + 200, "n");
    eval_fails(deep, "nested too deeply");
}

static void test_syntax_only_check_accepts_any_names(void **state)
{
    uint64_t v = 0;
    kf_error err = {0};
    assert_int_equal(kf_case_size_eval("unknown - other - 5", NULL, NULL, &v, &err), KF_OK);
    assert_int_equal(kf_case_size_eval("unknown -", NULL, NULL, &v, &err), KF_ERR_USAGE);
}

static const char *write_case(const char *text)
{
    static char path[] = "/tmp/kf_case_XXXXXX.case";
    strcpy(path, "/tmp/kf_case_XXXXXX.case");
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_case_file_size_lines_are_parsed(void **state)
{
    const char *p = write_case("kernel k.kf k\nsize x = n   # comment\nsize   y=rows * cols\nerror boom\n");
    kf_case c;
    kf_error err = {0};
    assert_int_equal(kf_case_load(p, &c, &err), KF_OK);
    assert_int_equal(c.sizes.len, 2);
    assert_string_equal(c.sizes.data[0].name, "x");
    assert_string_equal(c.sizes.data[0].expr, "n");
    assert_int_equal(c.sizes.data[0].line, 2);
    assert_string_equal(c.sizes.data[1].name, "y");
    assert_string_equal(c.sizes.data[1].expr, "rows * cols");
    kf_case_free(&c);
    remove(p);
}

static void case_fails(const char *text, const char *want)
{
    const char *p = write_case(text);
    kf_case c;
    kf_error err = {0};
    assert_int_equal(kf_case_load(p, &c, &err), KF_ERR_USAGE);
    if (!strstr(err.msg, want)) fprintf(stderr, "got '%s', want '%s'\n", err.msg, want);
    assert_non_null(strstr(err.msg, want));
    kf_case_free(&c);
    remove(p);
}

static void test_case_file_shared_line_gives_the_dynamic_bytes(void **state)
{
    const char *p = write_case("kernel k.kf k\nshared 0x10000\nerror boom\n");
    kf_case c;
    kf_error err = {0};
    assert_int_equal(kf_case_load(p, &c, &err), KF_OK);
    assert_int_equal(c.shared, 65536);
    kf_case_free(&c);
    remove(p);
    case_fails("kernel k.kf k\nshared 0\nerror e\n", ":2: expected 'shared BYTES' with 1 <= BYTES <= 4294967295");
    case_fails("kernel k.kf k\nshared 4294967296\nerror e\n", ":2: expected 'shared BYTES'");
    case_fails("kernel k.kf k\nshared 12 KiB\nerror e\n", "expected one of: kernel FILE KERNEL");
}

/* A raw kernel's case: its parameter list (the rest of the line), block and grid. */
static void test_raw_kernel_directives(void **state)
{
    const char *p = write_case("kernel ../raw/k.cu entry\nparams a: &[f16], n: u32   # list\nblock 32\ngrid 3,4\n"
                               "error e\n");
    kf_case c;
    kf_error err = {0};
    assert_int_equal(kf_case_load(p, &c, &err), KF_OK);
    assert_string_equal(c.params, "a: &[f16], n: u32");
    assert_int_equal(c.block[0], 32);
    assert_int_equal(c.block[1], 1);
    assert_int_equal(c.grid[0], 3);
    assert_int_equal(c.grid[1], 4);
    assert_int_equal(c.grid[2], 1);
    kf_case_free(&c);
    remove(p);
    case_fails("kernel k.cu k\nblock 0\nerror e\n", ":2: expected 'grid X[,Y,Z]' or 'block X[,Y,Z]'");
    case_fails("kernel k.cu k\ngrid 1\ngrid 2\nerror e\n", ":3: a second 'grid' line");
}

static void test_bad_size_lines_are_reported_at_their_line(void **state)
{
    case_fails("kernel k.kf k\nsize x n\nerror e\n", ":2: expected 'size NAME = EXPR'");
    case_fails("kernel k.kf k\nsize = n\nerror e\n", ":2: expected 'size NAME = EXPR'");
    case_fails("kernel k.kf k\nsize x =\nerror e\n", ":2: expected 'size NAME = EXPR'");
    case_fails("kernel k.kf k\nsize x = n\nsize x = 2\nerror e\n", ":3: the size of this buffer is declared twice");
    case_fails("kernel k.kf k\n\nsize y = rows * (cols\nerror e\n", ":3: size expression 'rows * (cols', column 13: expected ')'");
}

/* ---- every library-kernel case declares what its kernel indexes --------- */

/* A case of a library .kf kernel (not a feature kernel, not a raw one). */
static bool is_library_case(const kf_case *c)
{
    size_t n = strlen(c->kf_file);
    return c->expects.len && !strstr(c->kf_file, "/features/") && n > 3 && !strcmp(c->kf_file + n - 3, ".kf");
}

static void check_case_declares_every_buffer(const kf_case *c)
{
    char *src;
    size_t len;
    kf_error err = {0};
    assert_int_equal(kf_read_file(c->kf_file, &src, &len, &err), KF_OK);
    kf_compile_opts opts = {c->defines.data, (uint32_t)c->defines.len, KF_OPT_DEFAULT};
    kf_module *m = NULL;
    assert_int_equal(kf_compile(c->kf_file, src, len, &opts, &m), KF_OK);
    free(src);
    const kf_ir_kernel *k = kf_module_kernel(m, c->kernel);
    assert_non_null(k);
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (k->params[i].type.kind != KF_TK_BUFFER) continue;
        bool declared = false;
        for (size_t j = 0; j < c->sizes.len; j++) declared |= !strcmp(c->sizes.data[j].name, k->params[i].name);
        if (!declared) fprintf(stderr, "%s declares no size for buffer '%s'\n", c->path, k->params[i].name);
        assert_true(declared);
    }
    kf_module_free(m);
}

static void test_every_library_case_declares_each_buffer_size(void **state)
{
    DIR *d = opendir(SRC "/kernels/cases");
    assert_non_null(d);
    unsigned checked = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".case")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/kernels/cases/%s", SRC, de->d_name);
        kf_case c;
        kf_error err = {0};
        assert_int_equal(kf_case_load(path, &c, &err), KF_OK);
        if (is_library_case(&c)) {
            check_case_declares_every_buffer(&c);
            checked++;
        }
        kf_case_free(&c);
    }
    closedir(d);
    assert_true(checked >= 20);
}

/* kforge test -j loads cases on worker threads: the line parser must keep
 * no state between calls (strtok's did: a case failed to parse at random on
 * the H200, 2026-12-03, "expected one of: kernel FILE KERNEL" at a valid
 * kernel line). Every thread loads every library case several times and
 * must see what one thread alone sees. */
enum { LOADERS = 8, ROUNDS = 4, MAX_CASES = 1024 };

typedef struct {
    char (*paths)[1024];
    size_t n;
    const char **kernels;   /* what one thread alone read: the kernel line */
    const size_t *nargs;
    unsigned bad;
} load_job;

static void *load_all(void *arg)
{
    load_job *j = arg;
    for (int r = 0; r < ROUNDS; r++)
        for (size_t i = 0; i < j->n; i++) {
            kf_case c;
            kf_error err = {0};
            if (kf_case_load(j->paths[i], &c, &err) != KF_OK || strcmp(c.kernel, j->kernels[i]) || c.arg_names.len != j->nargs[i]) {
                fprintf(stderr, "%s: %s\n", j->paths[i], err.msg[0] ? err.msg : "read differently");
                j->bad++;
            }
            kf_case_free(&c);
        }
    return NULL;
}

static void test_cases_load_the_same_from_many_threads(void **state)
{
    static char paths[MAX_CASES][1024];
    static const char *kernels[MAX_CASES];
    static size_t nargs[MAX_CASES];
    static kf_case first[MAX_CASES];
    DIR *d = opendir(SRC "/kernels/cases");
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d)) && n < MAX_CASES;) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".case")) continue;
        snprintf(paths[n], sizeof paths[n], "%s/kernels/cases/%s", SRC, de->d_name);
        kf_error err = {0};
        assert_int_equal(kf_case_load(paths[n], &first[n], &err), KF_OK);
        kernels[n] = first[n].kernel;
        nargs[n] = first[n].arg_names.len;
        n++;
    }
    closedir(d);
    assert_true(n >= 100);
    pthread_t t[LOADERS];
    load_job jobs[LOADERS];
    for (int i = 0; i < LOADERS; i++) {
        jobs[i] = (load_job){paths, n, kernels, nargs, 0};
        assert_int_equal(pthread_create(&t[i], NULL, load_all, &jobs[i]), 0);
    }
    unsigned bad = 0;
    for (int i = 0; i < LOADERS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        bad += jobs[i].bad;
    }
    for (size_t i = 0; i < n; i++) kf_case_free(&first[i]);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_expressions_follow_arithmetic_precedence),
        cmocka_unit_test(test_size_functions_cdiv_min_max),
        cmocka_unit_test(test_size_expressions_refuse_what_has_no_element_count),
        cmocka_unit_test(test_size_syntax_errors_give_the_column_and_what_was_expected),
        cmocka_unit_test(test_syntax_only_check_accepts_any_names),
        cmocka_unit_test(test_case_file_size_lines_are_parsed),
        cmocka_unit_test(test_case_file_shared_line_gives_the_dynamic_bytes),
        cmocka_unit_test(test_bad_size_lines_are_reported_at_their_line),
        cmocka_unit_test(test_raw_kernel_directives),
        cmocka_unit_test(test_every_library_case_declares_each_buffer_size),
        cmocka_unit_test(test_cases_load_the_same_from_many_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
