/* The type system of the .kf language (LANGUAGE.md section 3), as one small
 * value type. A kf_type is 8 bytes, passed by value, never allocated:
 * scalar class + lane count + aggregate kind + array length.
 *
 * Tensor-core fragments (LANGUAGE.md section 8) are plain vectors: an mma
 * A fragment is an f16x8 or i8x16, its accumulator an f32x4 or i32x4. */
#ifndef KF_TYPES_H
#define KF_TYPES_H

#include "base.h"

/* kf_scalar (the KF_SCALARS table), kf_type_kind, KF_TF_* and kf_type are
 * public (include/kforge.h); the tables and helpers below are the compiler's. */

extern const char *const kf_scalar_names[KF_S_COUNT];
extern const uint8_t kf_scalar_bytes[KF_S_COUNT];
extern const char kf_scalar_class[KF_S_COUNT];

static inline kf_type kf_type_void(void) { return (kf_type){0}; }
/* The element type of a buffer, array or vector (a vector's is its scalar). */
static inline kf_type kf_type_elem(kf_type t) {
    if (t.kind == KF_TK_VECTOR) return kf_type_scalar((kf_scalar)t.scalar);
    return kf_type_vector((kf_scalar)t.scalar, t.lanes);
}
static inline bool kf_type_is_int(kf_type t) {
    char c = kf_scalar_class[t.scalar];
    return (t.kind == KF_TK_SCALAR || t.kind == KF_TK_VECTOR) && (c == 'i' || c == 'u' || c == 'I');
}
static inline bool kf_type_is_float(kf_type t) {
    char c = kf_scalar_class[t.scalar];
    return (t.kind == KF_TK_SCALAR || t.kind == KF_TK_VECTOR) && (c == 'f' || c == 'F');
}
static inline bool kf_type_is_signed(kf_type t) { return kf_scalar_class[t.scalar] == 'i'; }
static inline bool kf_type_is_bool(kf_type t) { return t.kind == KF_TK_SCALAR && t.scalar == KF_S_BOOL; }
static inline bool kf_type_is_untyped(kf_type t) { return t.scalar == KF_S_UINT || t.scalar == KF_S_UFLOAT; }
/* Bytes of one value (scalar or vector) or of one buffer/array element. */
static inline uint32_t kf_type_elem_bytes(kf_type t) { return (uint32_t)kf_scalar_bytes[t.scalar] * t.lanes; }
static inline uint32_t kf_type_bits(kf_type t) { return 8u * kf_scalar_bytes[t.scalar]; }
/* Every bit of scalar s's width set (the bits an integer constant of s keeps). */
static inline uint64_t kf_scalar_ones(kf_scalar s) { return kf_scalar_bytes[s] == 8 ? ~0ull : (1ull << (8 * kf_scalar_bytes[s])) - 1; }
bool kf_type_eq(kf_type a, kf_type b);
/* kf_type_str ("f32x4", "&mut [f16]", "u32[8]") and kf_type_from_name are
 * public (include/kforge.h). */

#endif
