/* NumPy .npy files for the command line and the golden tests (DESIGN.md
 * section 4): read any v1/v2/v3 file of a little-endian dtype kforge knows,
 * flattened in C order, and write 1-D v1.0 files.
 *
 * Dtypes: f16 <f2, f32 <f4, f64 <f8, i8 |i1, u8 |u1, i16 <i2, u16 <u2,
 * i32 <i4, u32 <u4, i64 <i8, u64 <u8, bool |b1; bf16 is stored as <u2 (its
 * raw bits; NumPy has no bf16). A vector element type (f32x4) is stored as
 * its scalar type with a length that is a multiple of the width. */
#ifndef KF_NPY_H
#define KF_NPY_H

#include "../ir/types.h"

typedef struct {
    char kind;         /* 'f', 'i', 'u', 'b' */
    uint8_t size;      /* bytes per scalar */
    size_t count;      /* scalars (product of the shape) */
    void *data;        /* count * size bytes, heap (kf_npy_free) */
    size_t bytes;
} kf_npy;

/* Parses an in-memory .npy image. Malformed, truncated, big-endian or
 * unsupported files are KF_ERR_IO with a message naming `what` (a path). */
kf_status kf_npy_parse(const void *buf, size_t len, const char *what, kf_npy *out, kf_error *err);
kf_status kf_npy_read(const char *path, kf_npy *out, kf_error *err);
void kf_npy_free(kf_npy *n);

/* The dtype string of scalar s ("<f4"; bf16 -> "<u2"), NULL if none. */
const char *kf_npy_descr(kf_scalar s);

/* Checks that the file's dtype matches the element type `elem` (scalar or
 * vector) of parameter `param`, and that its length is a multiple of the
 * vector width; *elems receives the element count. KF_ERR_USAGE otherwise,
 * with a message naming the parameter, the expected and the found dtype. */
kf_status kf_npy_match(const kf_npy *n, kf_type elem, const char *param, size_t *elems, kf_error *err);

/* Encodes `count` scalars of type s at data as a 1-D v1.0 .npy image
 * (kf_buf) or file; the file is replaced as one step (kf_write_file): a
 * failed write leaves no partial file. */
kf_status kf_npy_encode(kf_buf *out, kf_scalar s, const void *data, size_t count, kf_error *err);
kf_status kf_npy_write(const char *path, kf_scalar s, const void *data, size_t count, kf_error *err);

#endif
