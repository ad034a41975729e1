/* The committed expected outputs of the golden cases (kernels/cases/
 * expected/) are exactly what the independent reference generator
 * (tools/reference/) computes now: regenerating them in memory gives
 * byte-identical .npy files, and a changed file is detected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KF_REFERENCE_NO_MAIN
#include "../tools/fill.h"
#include "../tools/golden_case.h"
#include "../tools/npy.h"
#include "../tools/reference/ref_num.h"
#include "../tools/reference/reference.c"

static void test_committed_expected_files_match_the_reference(void **state)
{
    ref_ctx r = {.check = true};
    unsigned n = kf_reference_run_dir(&r, KF_SOURCE_DIR "/kernels/cases");
    assert_true(n >= 30);
    assert_int_equal(r.errors, 0);
    assert_int_equal(r.mismatched, 0);
}

static void copy_file(const char *from, const char *to)
{
    char *data;
    size_t len;
    kf_error err = {0};
    assert_int_equal(kf_read_file(from, &data, &len, &err), KF_OK);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    free(data);
}

static void test_a_changed_expected_file_is_detected(void **state)
{
    char dir[] = "/tmp/kf_ref_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[600], exp_dir[600], npy[700];
    snprintf(exp_dir, sizeof exp_dir, "%s/expected", dir);
    assert_int_equal(mkdir(exp_dir, 0700), 0);
    snprintf(path, sizeof path, "%s/saxpy_3.case", dir);
    copy_file(KF_SOURCE_DIR "/kernels/cases/saxpy_3.case", path);
    snprintf(npy, sizeof npy, "%s/saxpy_3.y.npy", exp_dir);
    copy_file(KF_SOURCE_DIR "/kernels/cases/expected/saxpy_3.y.npy", npy);

    ref_ctx r = {.check = true};
    assert_int_equal(kf_reference_run_dir(&r, dir), 1);
    assert_int_equal(r.mismatched, 0);

    FILE *f = fopen(npy, "r+b");
    assert_non_null(f);
    fseek(f, -1, SEEK_END);
    int c = fgetc(f);
    fseek(f, -1, SEEK_END);
    fputc(c ^ 1, f);
    fclose(f);
    ref_ctx r2 = {.check = true};
    kf_reference_run_dir(&r2, dir);
    assert_int_equal(r2.mismatched, 1);

    remove(npy);
    remove(path);
    rmdir(exp_dir);
    rmdir(dir);
}

static void test_reference_f16_rounding_is_round_to_nearest_even(void **state)
{
    assert_int_equal(kf_ref_f16_bits(1.0), 0x3c00);
    assert_int_equal(kf_ref_f16_bits(1.0 + ldexp(1, -11)), 0x3c00);             /* tie to even */
    assert_int_equal(kf_ref_f16_bits(1.0 + 3 * ldexp(1, -11)), 0x3c02);         /* tie to even, up */
    assert_int_equal(kf_ref_f16_bits(65504.0), 0x7bff);
    assert_int_equal(kf_ref_f16_bits(65520.0), 0x7c00);                          /* rounds to inf */
    assert_int_equal(kf_ref_f16_bits(ldexp(1, -24)), 0x0001);                    /* smallest subnormal */
    assert_int_equal(kf_ref_f16_bits(-ldexp(1, -25)), 0x8000);                   /* tie to zero */
    assert_int_equal(bf16_bits(1.0 + ldexp(1, -8)), 0x3f80);
    assert_int_equal(bf16_bits(1.0 + 3 * ldexp(1, -8)), 0x3f82);
    assert_true(kf_ref_f16_value(0x3555) > 0.333 && kf_ref_f16_value(0x3555) < 0.3334);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_committed_expected_files_match_the_reference),
        cmocka_unit_test(test_a_changed_expected_file_is_detected),
        cmocka_unit_test(test_reference_f16_rounding_is_round_to_nearest_even),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
