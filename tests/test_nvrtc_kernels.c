/* NVRTC compiles every CUDA-C module kforge emits (issue 3): each
 * kernels/<name>.kf and kernels/features/<name>.kf, and the hand-built IR kernels of
 * tests/kf_cuda_cases.h, emitted with and without -g and compiled through
 * kf_nvrtc_compile for compute_80 and compute_90, with no error and no
 * warning in the log, into PTX free of the instruction patterns ptxas
 * miscompiles (tests/ptx_hazards.h). Needs libnvrtc (CI has it), no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "kf_cuda_cases.h"
#include "ptx_hazards.h"
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
        char why[320];
        if (ptx_hazard(ptx, why, sizeof why))   /* NVVM's PTX of our C goes through ptxas too */
            fail_msg("%s (compute_%u): NVRTC's PTX has an instruction ptxas miscompiles: %s", what, archs[a], why);
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
            kb_build(&B, kf_cuda_cases[c]);
            kf_emit_opts o = {90, g == 1};
            kf_buf out = {0};
            kf_diags d = {0};
            assert_int_equal(kf_cuda_emit(&B.m, NULL, &o, &out, NULL, &d), KF_OK);
            nvrtc_ok(out.data, B.k.name, g == 1);
            kf_buf_free(&out);
            kf_diags_free(&d);
        }
}

/* Emits and compiles one .kf file; returns the number of kernels. */
static uint32_t check_kf_file(const char *path)
{
    char *src = NULL;
    size_t len = 0;
    kf_error err = {0};
    if (kf_read_file(path, &src, &len, &err) != KF_OK) fail_msg("%s: %s", path, err.msg);
    kf_module *m = NULL;
    kf_status st = kf_compile(path, src, len, NULL, &m);
    if (st != KF_OK) {
        kf_buf r = {0};
        if (m) kf_diags_render(&r, &m->diags, src, len);
        fail_msg("%s does not compile:\n%s", path, r.data ? r.data : "");
    }
    uint32_t n = m->nkernels;
    for (int g = 0; g < 2; g++) {
        kf_emit_opts o = {90, g == 1};
        kf_buf out = {0};
        kf_diags d = {0};
        if (kf_cuda_emit(m, NULL, &o, &out, NULL, &d) != KF_OK)
            fail_msg("%s: CUDA-C emission failed: %s", path, d.items.len ? d.items.data[0].msg : "?");
        nvrtc_ok(out.data, path, g == 1);
        kf_buf_free(&out);
        kf_diags_free(&d);
    }
    kf_module_free(m);
    free(src);
    return n;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every *.kf of dir (sorted); returns the number of files. */
static size_t check_kf_dir(const char *dir, uint32_t *nkernels)
{
    DIR *dh = opendir(dir);
    if (!dh) fail_msg("cannot open %s", dir);
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dh)) && n < 256;) {
        size_t l = strlen(e->d_name);
        if (l > 3 && strcmp(e->d_name + l - 3, ".kf") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(dh);
    qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        *nkernels += check_kf_file(path);
        free(names[i]);
    }
    return n;
}

static void library_kernels_compile_with_nvrtc(void **state)
{
    uint32_t nk = 0;
    size_t nf = check_kf_dir(KF_SOURCE_DIR "/kernels", &nk);
    assert_true(nf >= 1);
    assert_true(nk >= nf);
}

static void feature_kernels_compile_with_nvrtc(void **state)
{
    uint32_t nk = 0;
    size_t nf = check_kf_dir(KF_SOURCE_DIR "/kernels/features", &nk);
    assert_true(nf >= 1);
    assert_true(nk >= nf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_built_kernels_compile_with_nvrtc),
        cmocka_unit_test(library_kernels_compile_with_nvrtc),
        cmocka_unit_test(feature_kernels_compile_with_nvrtc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
