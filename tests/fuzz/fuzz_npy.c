/* libFuzzer target for the .npy reader (tools/npy.c): any byte string given
 * to kf_npy_parse is either a clear error or an array whose byte count is
 * its element count times the element size; an accepted array re-encodes
 * (kf_npy_encode, 1-D) to an image that parses back to the same dtype,
 * count and bytes, and kf_npy_match answers for every element type.
 *
 * Built by -DKF_FUZZ=ON (tests/fuzz/CMakeLists.txt); seeds (valid files of
 * every dtype, v1/v2/v3 headers, and broken ones) in
 * tests/fuzz/corpus/fuzz_npy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The scalar type written for a parsed dtype (bf16 reads as <u2). */
static kf_scalar scalar_of(const kf_npy *n)
{
    for (int s = KF_S_BOOL; s <= KF_S_F64; s++) {
        const char *d = kf_npy_descr((kf_scalar)s);
        if (s != KF_S_BF16 && d && d[1] == n->kind && d[2] - '0' == n->size) return (kf_scalar)s;
    }
    return KF_S_NONE;
}

static void round_trip(const kf_npy *n)
{
    kf_scalar s = scalar_of(n);
    if (s == KF_S_NONE) abort();   /* the reader accepted a dtype it cannot name */
    kf_buf img = {0};
    kf_error err = {0};
    if (kf_npy_encode(&img, s, n->data, n->count, &err) != KF_OK) abort();
    kf_npy back;
    if (kf_npy_parse(img.data, img.len, "re-encoded", &back, &err) != KF_OK) abort();
    if (back.kind != n->kind || back.size != n->size || back.count != n->count || back.bytes != n->bytes ||
        (n->bytes && memcmp(back.data, n->data, n->bytes)))
        abort();
    kf_npy_free(&back);
    kf_buf_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kf_npy n;
    kf_error err = {0};
    kf_status st = kf_npy_parse(data, size, "fuzz.npy", &n, &err);
    if (st != KF_OK) {
        if (!strstr(err.msg, "fuzz.npy") || n.data) abort();   /* errors name the file */
        return 0;
    }
    if (!n.data || n.size == 0 || n.bytes != n.count * n.size) abort();
    round_trip(&n);
    for (int s = KF_S_BOOL; s <= KF_S_F64; s++)
        for (uint8_t lanes = 1; lanes <= 4; lanes *= 2) {
            kf_type t = {lanes == 1 ? KF_TK_SCALAR : KF_TK_VECTOR, (uint8_t)s, lanes, 0, 0};
            size_t elems = 0;
            kf_error e = {0};
            if (kf_npy_match(&n, t, "x", &elems, &e) == KF_OK && elems * lanes != n.count) abort();
        }
    kf_npy_free(&n);
    return 0;
}
