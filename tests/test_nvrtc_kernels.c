/* NVRTC compiles every CUDA-C module kforge emits (issue 3): each
 * kernels/<name>.kf and kernels/features/<name>.kf, and the hand-built IR kernels of
 * tests/kf_cuda_cases.h, emitted with and without -g and compiled through
 * kf_nvrtc_compile for compute_80 and compute_90, with no error and no
 * warning in the log. Needs libnvrtc (CI has it), no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "kf_cuda_cases.h"
#include "nvrtc.h"

static const uint32_t archs[] = {80, 90};

/* Compiles CUDA-C `src` for every arch; fails the test with the log. */
static void nvrtc_ok(const char *src, const char *what, bool lineinfo)
{
    for (size_t a = 0; a < sizeof archs / sizeof *archs; a++) {
        char *ptx = NULL, *log = NULL;
        kf_error err = {0};
        kf_status st = kf_nvrtc_compile(src, what, archs[a], lineinfo, &ptx, &log, &err);
        if (st != KF_OK)
            fail_msg("%s (compute_%u): %s\n%s\n--- source ---\n%s", what, archs[a], err.msg,
                     err.log ? err.log : (log ? log : ""), src);
        if (log && strstr(log, "warning"))
            fail_msg("%s (compute_%u): NVRTC warned:\n%s\n--- source ---\n%s", what, archs[a], log, src);
        assert_non_null(strstr(ptx, ".entry"));
        free(ptx);
        free(log);
        kf_error_clear(&err);
    }
}

static kb B;

static void hand_built_kernels_compile_with_nvrtc(void **state)
{
    for (size_t c = 0; c < sizeof kf_cuda_cases / sizeof *kf_cuda_cases; c++)
        for (int g = 0; g < 2; g++) {
            kf_cuda_cases[c](&B);
            kf_emit_opts o = {90, g == 1};
            kf_buf out = {0};
            kf_diags d = {0};
            assert_int_equal(kf_cuda_emit(&B.m, NULL, &o, &out, NULL, &d), KF_OK);
            nvrtc_ok(out.data, B.k.name, g == 1);
            kf_buf_free(&out);
            kf_diags_free(&d);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_built_kernels_compile_with_nvrtc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
