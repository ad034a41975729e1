/* Tests of runtime/nvrtc.c against the real NVRTC of the CUDA toolkit
 * (no GPU needed): PTX for the requested arch, the compile log attached
 * to errors, line info, and the version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc.h"

static const char *good =
    "extern \"C\" __global__ void twice(float *y, const float *x, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = 2.0f * x[i];\n"
    "}\n";

static void compiles_cuda_c_to_ptx_for_the_arch(void **state)
{
    char *ptx = NULL, *log = NULL;
    kf_error e = {0};
    assert_int_equal(kf_nvrtc_compile(good, "twice.cu", 80, false, &ptx, &log, &e), KF_OK);
    assert_non_null(strstr(ptx, ".target sm_80"));
    assert_non_null(strstr(ptx, ".entry twice("));
    free(ptx);
    free(log);
    assert_int_equal(kf_nvrtc_compile(good, "twice.cu", 90, true, &ptx, NULL, &e), KF_OK);
    assert_non_null(strstr(ptx, ".target sm_90"));
    assert_non_null(strstr(ptx, ".loc"));   /* line info asked for */
    free(ptx);
}

static void compile_error_carries_the_log_and_api_name(void **state)
{
    char *ptx = (char *)1, *log = NULL;
    kf_error e = {0};
    const char *bad = "extern \"C\" __global__ void k(float *y) { y[0] = undefined_name; }\n";
    assert_int_equal(kf_nvrtc_compile(bad, "bad.cu", 90, false, &ptx, &log, &e), KF_ERR_SOURCE);
    assert_null(ptx);
    assert_non_null(strstr(e.msg, "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION"));
    assert_non_null(strstr(e.msg, "nvrtc.c:"));
    assert_non_null(e.log);
    assert_non_null(strstr(e.log, "bad.cu(1)"));
    assert_non_null(strstr(e.log, "undefined_name"));
    assert_non_null(log);
    assert_string_equal(log, e.log);
    free(log);
    kf_error_clear(&e);
}

static void unsupported_arch_is_usage_error(void **state)
{
    char *ptx;
    kf_error e = {0};
    assert_int_equal(kf_nvrtc_compile(good, "twice.cu", 7, false, &ptx, NULL, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "sm_7"));
}

/* Raw CUDA-C that includes toolkit headers (a WMMA tensor-core tile). */
static const char *wmma =
    "#include <mma.h>\n"
    "using namespace nvcuda;\n"
    "extern \"C\" __global__ void wmma16(const half *a, const half *b, float *c) {\n"
    "    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n"
    "    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;\n"
    "    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;\n"
    "    wmma::fill_fragment(fc, 0.0f);\n"
    "    wmma::load_matrix_sync(fa, a, 16);\n"
    "    wmma::load_matrix_sync(fb, b, 16);\n"
    "    wmma::mma_sync(fc, fa, fb, fc);\n"
    "    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);\n"
    "}\n";

static void wmma_source_finds_toolkit_headers(void **state)
{
    char *ptx = NULL;
    kf_error e = {0};
    if (kf_nvrtc_compile(wmma, "wmma16.cu", 80, false, &ptx, NULL, &e) != KF_OK)
        fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
    assert_non_null(strstr(ptx, ".entry wmma16("));
    assert_non_null(strstr(ptx, "wmma.mma.sync"));
    free(ptx);
    kf_error_clear(&e);
}

static void version_is_reported(void **state)
{
    int v = kf_nvrtc_version();
    assert_true(v >= 11000);
    assert_int_equal(v % 10, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compiles_cuda_c_to_ptx_for_the_arch),
        cmocka_unit_test(compile_error_carries_the_log_and_api_name),
        cmocka_unit_test(unsupported_arch_is_usage_error),
        cmocka_unit_test(wmma_source_finds_toolkit_headers),
        cmocka_unit_test(version_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
