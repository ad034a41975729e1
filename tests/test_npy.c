/* .npy reading and writing (tools/npy.c): every dtype of DESIGN.md section 4
 * round-trips, headers of v1/v2 and any shape read flattened, mismatched
 * dtypes and lengths are errors naming the parameter, and corrupt files are
 * errors, never crashes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../tools/npy.h"

/* Builds an image with a given version, header text and payload. */
static size_t make_image(unsigned char *out, int major, const char *hdr, const void *data, size_t n)
{
    size_t hl = strlen(hdr);
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    size_t off;
    if (major == 1) {
        out[8] = (unsigned char)hl;
        out[9] = (unsigned char)(hl >> 8);
        off = 10;
    } else {
        out[8] = (unsigned char)hl;
        out[9] = (unsigned char)(hl >> 8);
        out[10] = out[11] = 0;
        off = 12;
    }
    memcpy(out + off, hdr, hl);
    memcpy(out + off + hl, data, n);
    return off + hl + n;
}

static void test_every_dtype_round_trips_with_its_descr(void **state)
{
    static const struct { kf_scalar s; const char *descr; } table[] = {
        {KF_S_F16, "<f2"}, {KF_S_F32, "<f4"}, {KF_S_F64, "<f8"}, {KF_S_I8, "|i1"},
        {KF_S_U8, "|u1"}, {KF_S_I16, "<i2"}, {KF_S_U16, "<u2"}, {KF_S_I32, "<i4"},
        {KF_S_U32, "<u4"}, {KF_S_I64, "<i8"}, {KF_S_U64, "<u8"}, {KF_S_BOOL, "|b1"},
        {KF_S_BF16, "<u2"},
    };
    unsigned char data[8 * 5];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 37 + 1);
    for (size_t t = 0; t < sizeof table / sizeof table[0]; t++) {
        assert_string_equal(kf_npy_descr(table[t].s), table[t].descr);
        kf_buf b = {0};
        kf_error err = {0};
        size_t count = 5;
        assert_int_equal(kf_npy_encode(&b, table[t].s, data, count, &err), KF_OK);
        assert_int_equal((b.len - count * kf_scalar_bytes[table[t].s]) % 64, 0);
        assert_non_null(strstr(b.data + 10, table[t].descr));
        kf_npy n;
        assert_int_equal(kf_npy_parse(b.data, b.len, "x.npy", &n, &err), KF_OK);
        assert_int_equal(n.count, count);
        assert_int_equal(n.size, kf_scalar_bytes[table[t].s]);
        assert_memory_equal(n.data, data, count * n.size);
        size_t elems = 0;
        assert_int_equal(kf_npy_match(&n, kf_type_scalar(table[t].s), "x", &elems, &err), KF_OK);
        assert_int_equal(elems, count);
        kf_npy_free(&n);
        kf_buf_free(&b);
    }
}

static void test_version_2_header_and_2d_shape_read_flattened(void **state)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    unsigned char img[256];
    size_t len = make_image(img, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", v, sizeof v);
    kf_npy n;
    kf_error err = {0};
    assert_int_equal(kf_npy_parse(img, len, "m.npy", &n, &err), KF_OK);
    assert_int_equal(n.count, 6);
    assert_int_equal(n.kind, 'f');
    assert_memory_equal(n.data, v, sizeof v);
    kf_npy_free(&n);
}

static void test_scalar_shape_is_one_element_and_empty_is_zero(void **state)
{
    int32_t v = 7;
    unsigned char img[256];
    kf_npy n;
    kf_error err = {0};
    size_t len = make_image(img, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }\n", &v, 4);
    assert_int_equal(kf_npy_parse(img, len, "s.npy", &n, &err), KF_OK);
    assert_int_equal(n.count, 1);
    kf_npy_free(&n);
    len = make_image(img, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (0,), }\n", &v, 0);
    assert_int_equal(kf_npy_parse(img, len, "e.npy", &n, &err), KF_OK);
    assert_int_equal(n.count, 0);
    kf_npy_free(&n);
}

static void test_big_endian_is_rejected_with_a_fix(void **state)
{
    float v[2] = {0};
    unsigned char img[256];
    size_t len = make_image(img, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", v, sizeof v);
    kf_npy n;
    kf_error err = {0};
    assert_int_equal(kf_npy_parse(img, len, "be.npy", &n, &err), KF_ERR_IO);
    assert_non_null(strstr(err.msg, "be.npy"));
    assert_non_null(strstr(err.msg, "big-endian"));
}

static void test_fortran_order_2d_is_rejected_1d_accepted(void **state)
{
    float v[4] = {0};
    unsigned char img[256];
    kf_npy n;
    kf_error err = {0};
    size_t len = make_image(img, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", v, sizeof v);
    assert_int_equal(kf_npy_parse(img, len, "f.npy", &n, &err), KF_ERR_IO);
    assert_non_null(strstr(err.msg, "Fortran"));
    len = make_image(img, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }\n", v, sizeof v);
    assert_int_equal(kf_npy_parse(img, len, "f.npy", &n, &err), KF_OK);
    kf_npy_free(&n);
}

static void test_data_length_must_match_the_shape(void **state)
{
    float v[4] = {0};
    unsigned char img[256];
    kf_npy n;
    kf_error err = {0};
    size_t len = make_image(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n", v, 12);
    assert_int_equal(kf_npy_parse(img, len, "short.npy", &n, &err), KF_ERR_IO);
    assert_non_null(strstr(err.msg, "12 bytes"));
    len = make_image(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", v, 16);
    assert_int_equal(kf_npy_parse(img, len, "long.npy", &n, &err), KF_ERR_IO);
}

static void test_shape_overflow_is_an_error(void **state)
{
    unsigned char img[256];
    kf_npy n;
    kf_error err = {0};
    size_t len = make_image(img, 1,
        "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }\n", "", 0);
    assert_int_equal(kf_npy_parse(img, len, "big.npy", &n, &err), KF_ERR_IO);
    len = make_image(img, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }\n", "", 0);
    assert_int_equal(kf_npy_parse(img, len, "big.npy", &n, &err), KF_ERR_IO);
}

static void test_unsupported_dtypes_are_rejected(void **state)
{
    static const char *bad[] = {"<c8", "<f16", "|S4", "<U3", "<m8", "O", "<b2", "<f4x", "<f 4", "<i4 ", "<u-4"};
    unsigned char img[256];
    char hdr[128];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (1,), }\n", bad[i]);
        size_t len = make_image(img, 1, hdr, "01234567", 8);
        kf_npy n;
        kf_error err = {0};
        assert_int_equal(kf_npy_parse(img, len, "d.npy", &n, &err), KF_ERR_IO);
        if (strlen(bad[i]) == 4) {   /* the right length, but not all digits after the kind */
            char want[64];
            snprintf(want, sizeof want, "d.npy: unsupported .npy dtype '%s'", bad[i]);
            assert_string_equal(err.msg, want);
        }
    }
}

static void test_truncations_and_corruptions_never_crash(void **state)
{
    uint16_t v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    kf_buf b = {0};
    kf_error err = {0};
    assert_int_equal(kf_npy_encode(&b, KF_S_U16, v, 9, &err), KF_OK);
    kf_npy n;
    for (size_t cut = 0; cut < b.len; cut++)
        assert_int_not_equal(kf_npy_parse(b.data, cut, "cut.npy", &n, &err), KF_OK);
    unsigned char *copy = malloc(b.len);
    int accepted = 0;
    for (size_t pos = 0; pos < b.len; pos++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(copy, b.data, b.len);
            copy[pos] ^= (unsigned char)(1u << bit);
            if (kf_npy_parse(copy, b.len, "flip.npy", &n, &err) == KF_OK) {
                assert_true(n.count * n.size == n.bytes);
                accepted++;
                kf_npy_free(&n);
            }
        }
    }
    assert_true(accepted >= 18 * 8); /* every flip in the payload still parses */
    free(copy);
    kf_buf_free(&b);
}

static void test_dtype_mismatch_names_the_parameter(void **state)
{
    int32_t v[4] = {0};
    kf_buf b = {0};
    kf_error err = {0};
    assert_int_equal(kf_npy_encode(&b, KF_S_I32, v, 4, &err), KF_OK);
    kf_npy n;
    assert_int_equal(kf_npy_parse(b.data, b.len, "in.npy", &n, &err), KF_OK);
    size_t elems;
    assert_int_equal(kf_npy_match(&n, kf_type_scalar(KF_S_F32), "weights", &elems, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "'weights'"));
    assert_non_null(strstr(err.msg, "<f4"));
    assert_non_null(strstr(err.msg, "<i4"));
    assert_int_equal(kf_npy_match(&n, kf_type_scalar(KF_S_U32), "w", &elems, &err), KF_ERR_USAGE);
    kf_npy_free(&n);
    kf_buf_free(&b);
}

static void test_bf16_is_raw_u2_and_f16_is_not_accepted_for_it(void **state)
{
    uint16_t v[2] = {0x3f80, 0x4000};
    kf_buf b = {0};
    kf_error err = {0};
    kf_npy n;
    size_t elems;
    assert_int_equal(kf_npy_encode(&b, KF_S_F16, v, 2, &err), KF_OK);
    assert_int_equal(kf_npy_parse(b.data, b.len, "h.npy", &n, &err), KF_OK);
    assert_int_equal(kf_npy_match(&n, kf_type_scalar(KF_S_BF16), "g", &elems, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "<u2"));
    kf_npy_free(&n);
    kf_buf_reset(&b);
    assert_int_equal(kf_npy_encode(&b, KF_S_BF16, v, 2, &err), KF_OK);
    assert_int_equal(kf_npy_parse(b.data, b.len, "g.npy", &n, &err), KF_OK);
    assert_int_equal(kf_npy_match(&n, kf_type_scalar(KF_S_BF16), "g", &elems, &err), KF_OK);
    assert_int_equal(elems, 2);
    kf_npy_free(&n);
    kf_buf_free(&b);
}

static void test_vector_elements_need_a_multiple_of_the_width(void **state)
{
    float v[8] = {0};
    kf_buf b = {0};
    kf_error err = {0};
    kf_npy n;
    size_t elems;
    assert_int_equal(kf_npy_encode(&b, KF_S_F32, v, 8, &err), KF_OK);
    assert_int_equal(kf_npy_parse(b.data, b.len, "v.npy", &n, &err), KF_OK);
    assert_int_equal(kf_npy_match(&n, kf_type_vector(KF_S_F32, 4), "x", &elems, &err), KF_OK);
    assert_int_equal(elems, 2);
    kf_npy_free(&n);
    kf_buf_reset(&b);
    assert_int_equal(kf_npy_encode(&b, KF_S_F32, v, 6, &err), KF_OK);
    assert_int_equal(kf_npy_parse(b.data, b.len, "v.npy", &n, &err), KF_OK);
    assert_int_equal(kf_npy_match(&n, kf_type_vector(KF_S_F32, 4), "x4", &elems, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "'x4'"));
    assert_non_null(strstr(err.msg, "multiple of 4"));
    kf_npy_free(&n);
    kf_buf_free(&b);
}

static void test_write_then_read_a_file(void **state)
{
    char path[] = "/tmp/kf_test_npy_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    double v[3] = {1.5, -2.25, 1e300};
    kf_error err = {0};
    assert_int_equal(kf_npy_write(path, KF_S_F64, v, 3, &err), KF_OK);
    kf_npy n;
    assert_int_equal(kf_npy_read(path, &n, &err), KF_OK);
    assert_int_equal(n.count, 3);
    assert_memory_equal(n.data, v, sizeof v);
    kf_npy_free(&n);
    remove(path);
    assert_int_equal(kf_npy_read(path, &n, &err), KF_ERR_IO);
    assert_non_null(strstr(err.msg, path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_dtype_round_trips_with_its_descr),
        cmocka_unit_test(test_version_2_header_and_2d_shape_read_flattened),
        cmocka_unit_test(test_scalar_shape_is_one_element_and_empty_is_zero),
        cmocka_unit_test(test_big_endian_is_rejected_with_a_fix),
        cmocka_unit_test(test_fortran_order_2d_is_rejected_1d_accepted),
        cmocka_unit_test(test_data_length_must_match_the_shape),
        cmocka_unit_test(test_shape_overflow_is_an_error),
        cmocka_unit_test(test_unsupported_dtypes_are_rejected),
        cmocka_unit_test(test_truncations_and_corruptions_never_crash),
        cmocka_unit_test(test_dtype_mismatch_names_the_parameter),
        cmocka_unit_test(test_bf16_is_raw_u2_and_f16_is_not_accepted_for_it),
        cmocka_unit_test(test_vector_elements_need_a_multiple_of_the_width),
        cmocka_unit_test(test_write_then_read_a_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
