/* The deterministic generators behind NAME=zeros(N) / iota(N) /
 * rand(N,SEED) (tools/fill.c): splitmix64 matches its published test
 * vector, rand floats lie in [-1, 1) and are exact in their type, integers
 * cover all bit patterns, iota counts scalar lanes in memory order, and the
 * argument syntax is checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "../ir/numeric.h"
#include "../tools/fill.h"

static void test_splitmix64_matches_the_reference_vector(void **state)
{
    uint64_t s = 0;
    assert_true(kf_fill_splitmix64(&s) == 0xe220a8397b1dcdafull);
    assert_true(kf_fill_splitmix64(&s) == 0x6e789e6aa1b965f4ull);
    assert_true(kf_fill_splitmix64(&s) == 0x06c45d188009454full);
}

static void test_rand_floats_are_in_range_and_exact_in_their_type(void **state)
{
    static const kf_scalar types[] = {KF_S_F16, KF_S_BF16, KF_S_F32, KF_S_F64};
    static const int precision[] = {11, 8, 24, 53};
    kf_fill_spec spec = {KF_FILL_RAND, 4096, 99};
    for (int t = 0; t < 4; t++) {
        unsigned bytes = kf_scalar_bytes[types[t]];
        unsigned char *buf = malloc(4096 * bytes);
        kf_fill(buf, kf_type_scalar(types[t]), 4096, &spec);
        double lo = 1, hi = -1;
        for (int i = 0; i < 4096; i++) {
            uint64_t bits = 0;
            memcpy(&bits, buf + (size_t)i * bytes, bytes);
            double v = kf_bits_to_double(types[t], bits);
            lo = fmin(lo, v), hi = fmax(hi, v);
            double k = ldexp(v + 1.0, precision[t] - 1);   /* the grid index */
            assert_true(k == floor(k));
        }
        assert_true(lo >= -1.0 && hi < 1.0);
        assert_true(lo < -0.9 && hi > 0.9);   /* uniform over the range */
        free(buf);
    }
}

static void test_rand_is_deterministic_and_seed_dependent(void **state)
{
    float a[64], b[64], c[64];
    kf_fill_spec s1 = {KF_FILL_RAND, 64, 7}, s2 = {KF_FILL_RAND, 64, 8};
    kf_fill(a, kf_type_scalar(KF_S_F32), 64, &s1);
    kf_fill(b, kf_type_scalar(KF_S_F32), 64, &s1);
    kf_fill(c, kf_type_scalar(KF_S_F32), 64, &s2);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
}

static void test_rand_integers_cover_all_bits(void **state)
{
    int32_t v[256];
    kf_fill_spec s = {KF_FILL_RAND, 256, 1};
    kf_fill(v, kf_type_scalar(KF_S_I32), 256, &s);
    uint32_t seen_or = 0, seen_and = ~0u;
    int negative = 0;
    for (int i = 0; i < 256; i++) {
        seen_or |= (uint32_t)v[i];
        seen_and &= (uint32_t)v[i];
        negative += v[i] < 0;
    }
    assert_true(seen_or == ~0u);
    assert_true(seen_and == 0);
    assert_true(negative > 64 && negative < 192);
}

static void test_iota_counts_scalar_lanes_of_vectors(void **state)
{
    uint16_t h[16];
    kf_fill_spec s = {KF_FILL_IOTA, 2, 0};
    kf_fill(h, kf_type_vector(KF_S_F16, 8), 2, &s);
    for (int j = 0; j < 16; j++) assert_true(kf_bits_to_double(KF_S_F16, h[j]) == j);
    uint8_t b[300];
    kf_fill_spec s8 = {KF_FILL_IOTA, 300, 0};
    kf_fill(b, kf_type_scalar(KF_S_U8), 300, &s8);
    assert_int_equal(b[255], 255);
    assert_int_equal(b[256], 0);   /* integers wrap */
}

static void test_zeros_clears_every_byte(void **state)
{
    double d[8];
    memset(d, 0xff, sizeof d);
    kf_fill_spec s = {KF_FILL_ZEROS, 4, 0};
    kf_fill(d, kf_type_vector(KF_S_F64, 2), 4, &s);
    for (int i = 0; i < 8; i++) assert_true(d[i] == 0.0);
}

static void test_generator_syntax(void **state)
{
    kf_fill_spec s;
    bool is_gen;
    kf_error err = {0};
    assert_true(kf_fill_parse("rand(10,3)", &s, &is_gen, &err));
    assert_int_equal(s.kind, KF_FILL_RAND);
    assert_int_equal(s.count, 10);
    assert_int_equal(s.seed, 3);
    assert_true(kf_fill_parse("iota( 0x10 )", &s, &is_gen, &err));
    assert_int_equal(s.count, 16);
    assert_true(kf_fill_parse("zeros(5)", &s, &is_gen, &err));
    assert_int_equal(s.kind, KF_FILL_ZEROS);

    assert_false(kf_fill_parse("rand(10)", &s, &is_gen, &err));
    assert_true(is_gen);
    assert_non_null(strstr(err.msg, "rand(N,SEED)"));
    assert_false(kf_fill_parse("zeros(0)", &s, &is_gen, &err));
    assert_true(is_gen);
    assert_false(kf_fill_parse("iota(3)x", &s, &is_gen, &err));
    assert_true(is_gen);
    assert_false(kf_fill_parse("iota(-3)", &s, &is_gen, &err));
    assert_true(is_gen);
    assert_false(kf_fill_parse("ones(3)", &s, &is_gen, &err));
    assert_false(is_gen);
    assert_false(kf_fill_parse("1.5", &s, &is_gen, &err));
    assert_false(is_gen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_splitmix64_matches_the_reference_vector),
        cmocka_unit_test(test_rand_floats_are_in_range_and_exact_in_their_type),
        cmocka_unit_test(test_rand_is_deterministic_and_seed_dependent),
        cmocka_unit_test(test_rand_integers_cover_all_bits),
        cmocka_unit_test(test_iota_counts_scalar_lanes_of_vectors),
        cmocka_unit_test(test_zeros_clears_every_byte),
        cmocka_unit_test(test_generator_syntax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
