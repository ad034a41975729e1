/* The diagnostics corpus: every tests/diagnostics/NNN_name.kf is an invalid
 * program whose first line says what its first diagnostic must be:
 *
 *     // expect: LINE:COL: message substring
 *
 * Each file is compiled with kf_compile; the test checks the status, the
 * first diagnostic's line:col and message, and the rendered form
 * `NNN_name.kf:LINE:COL: error: ...` with the source line and a caret.
 * One CMocka test per file, named after it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/passes.h"

#define CORPUS KF_SOURCE_DIR "/tests/diagnostics"
enum { MIN_CASES = 45 };

typedef struct {
    char name[256];
    char path[1024];
} diag_case;

static void check_case(void **state)
{
    const diag_case *c = *state;
    char *src = NULL;
    size_t len = 0;
    kf_error err = {0};
    assert_int_equal(kf_read_file(c->path, &src, &len, &err), KF_OK);
    unsigned line = 0, col = 0;
    int off = 0;
    if (sscanf(src, "// expect: %u:%u: %n", &line, &col, &off) != 2 || off == 0)
        fail_msg("%s: first line must be '// expect: LINE:COL: message'", c->name);
    char want[512];
    size_t wl = strcspn(src + off, "\n");
    if (wl >= sizeof want) wl = sizeof want - 1;
    memcpy(want, src + off, wl);
    want[wl] = 0;

    kf_module *m = NULL;
    kf_status st = kf_compile(c->name, src, len, NULL, &m);
    assert_non_null(m);
    assert_int_equal(st, KF_ERR_SOURCE);
    if (m->diags.items.len == 0) fail_msg("%s: no diagnostic", c->name);
    const kf_diag *d = &m->diags.items.data[0];
    if (!strstr(d->msg, want)) fail_msg("%s: first diagnostic '%s' lacks '%s'", c->name, d->msg, want);
    if (d->loc.line != line || d->loc.col != col)
        fail_msg("%s: '%s' at %u:%u, expected %u:%u", c->name, d->msg, d->loc.line, d->loc.col, line, col);
    kf_buf out = {0};
    kf_diag_render(&out, d, m->source, m->source_len);
    char head[512];
    snprintf(head, sizeof head, "%s:%u:%u: error: ", c->name, line, col);
    assert_non_null(out.data);
    assert_memory_equal(out.data, head, strlen(head));
    assert_non_null(strstr(out.data, "^"));
    kf_buf_free(&out);
    kf_module_free(m);
    free(src);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const diag_case *)a)->name, ((const diag_case *)b)->name);
}

static size_t load_cases(diag_case **out)
{
    DIR *dir = opendir(CORPUS);
    size_t n = 0, cap = 0;
    diag_case *cases = NULL;
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        size_t nl = strlen(e->d_name);
        if (nl < 4 || strcmp(e->d_name + nl - 3, ".kf") != 0 || nl >= sizeof cases->name) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            diag_case *grown = realloc(cases, cap * sizeof *cases);
            if (!grown) break;
            cases = grown;
        }
        snprintf(cases[n].name, sizeof cases[n].name, "%s", e->d_name);
        snprintf(cases[n].path, sizeof cases[n].path, "%s/%s", CORPUS, e->d_name);
        n++;
    }
    if (dir) closedir(dir);
    if (n) qsort(cases, n, sizeof *cases, by_name);
    *out = cases;
    return n;
}

static void corpus_has_enough_cases(void **state)
{
    size_t n = (size_t)(uintptr_t)*state;
    if (n < MIN_CASES) fail_msg("only %zu diagnostics cases in %s (want at least %d)", n, CORPUS, MIN_CASES);
}

int main(void)
{
    diag_case *cases = NULL;
    size_t n = load_cases(&cases);
    struct CMUnitTest *tests = calloc(n + 1, sizeof *tests);
    if (!tests) return 1;
    tests[0] = (struct CMUnitTest){"corpus_has_enough_cases", corpus_has_enough_cases, NULL, NULL, (void *)(uintptr_t)n};
    for (size_t i = 0; i < n; i++)
        tests[i + 1] = (struct CMUnitTest){cases[i].name, check_case, NULL, NULL, &cases[i]};
    int rc = _cmocka_run_group_tests("diagnostics", tests, n + 1, NULL, NULL);
    free(tests);
    free(cases);
    return rc;
}
