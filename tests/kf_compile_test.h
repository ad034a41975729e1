/* compile(): a .kf source text compiled for a test with kf_compile, its
 * diagnostics printed and the test failed when it does not compile.
 * Header-only (static), for CMocka test programs. */
#ifndef KF_TEST_COMPILE_H
#define KF_TEST_COMPILE_H

#include <string.h>

#include "kforge.h"

/* compile_opt: at optimisation level `level` (kf_opt_level). */
static kf_module *compile_opt(const char *src, int level)
{
    kf_module *m = NULL;
    kf_compile_opts o = {.opt = (kf_opt_level)level};
    kf_status st = kf_compile("t.kf", src, strlen(src), &o, &m);
    if (st != KF_OK && m) {
        kf_buf out = {0};
        kf_diags_render(&out, &m->diags, m->source, m->source_len);
        print_error("%s\n", out.data ? out.data : "");
        kf_buf_free(&out);
    }
    assert_int_equal(st, KF_OK);
    return m;
}

static kf_module *compile(const char *src) { return compile_opt(src, KF_OPT_DEFAULT); }

#endif
