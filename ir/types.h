/* The type system of the .kf language (LANGUAGE.md section 3), as one small
 * value type. A kf_type is 8 bytes, passed by value, never allocated:
 * scalar class + lane count + aggregate kind + array length.
 *
 * Tensor-core fragments (LANGUAGE.md section 8) are plain vectors: an mma
 * A fragment is an f16x8 or i8x16, its accumulator an f32x4 or i32x4. */
#ifndef KF_TYPES_H
#define KF_TYPES_H

#include "base.h"

/* X(enum, name, bytes, class)   class: 'b' bool, 'i' signed, 'u' unsigned, 'f' float */
#define KF_SCALARS(X)                 \
    X(KF_S_BOOL, "bool", 1, 'b')      \
    X(KF_S_I8, "i8", 1, 'i')          \
    X(KF_S_U8, "u8", 1, 'u')          \
    X(KF_S_I16, "i16", 2, 'i')        \
    X(KF_S_U16, "u16", 2, 'u')        \
    X(KF_S_I32, "i32", 4, 'i')        \
    X(KF_S_U32, "u32", 4, 'u')        \
    X(KF_S_I64, "i64", 8, 'i')        \
    X(KF_S_U64, "u64", 8, 'u')        \
    X(KF_S_F16, "f16", 2, 'f')        \
    X(KF_S_BF16, "bf16", 2, 'f')      \
    X(KF_S_F32, "f32", 4, 'f')        \
    X(KF_S_F64, "f64", 8, 'f')        \
    X(KF_S_UINT, "untyped int", 8, 'I')   /* untyped integer constant (sema only) */ \
    X(KF_S_UFLOAT, "untyped float", 8, 'F') /* untyped float constant (sema only) */

typedef enum {
    KF_S_NONE = 0,
#define X(e, n, b, c) e,
    KF_SCALARS(X)
#undef X
    KF_S_COUNT
} kf_scalar;

typedef enum {
    KF_TK_VOID = 0,
    KF_TK_SCALAR,   /* scalar, lanes == 1 */
    KF_TK_VECTOR,   /* scalar x lanes, lanes in {2,4,8,16}, <= 16 bytes */
    KF_TK_BUFFER,   /* &[elem] or &mut [elem]; elem = (scalar, lanes) */
    KF_TK_ARRAY,    /* elem[len], local or shared; elem = (scalar, lanes); len 0: KF_TF_DYN */
    KF_TK_TYPE,     /* sema only: an expression that names a type (f32x4 in f32x4(a)) */
} kf_type_kind;

enum {
    KF_TF_MUT = 1,     /* buffer: &mut */
    KF_TF_SHARED = 2,  /* array: shared memory */
    KF_TF_DYN = 4,     /* shared array whose length is known only at run time (len 0):
                          the dynamic array `shared s: T[]`, a `shared T[]` fn parameter,
                          a view of either; in core IR only the dynamic array itself */
};

typedef struct {
    uint8_t kind;     /* kf_type_kind */
    uint8_t scalar;   /* kf_scalar of the (element) type */
    uint8_t lanes;    /* 1 for scalars */
    uint8_t flags;    /* KF_TF_* */
    uint32_t len;     /* array length */
} kf_type;

extern const char *const kf_scalar_names[KF_S_COUNT];
extern const uint8_t kf_scalar_bytes[KF_S_COUNT];
extern const char kf_scalar_class[KF_S_COUNT];

static inline kf_type kf_type_void(void) { return (kf_type){0}; }
static inline kf_type kf_type_scalar(kf_scalar s) { return (kf_type){KF_TK_SCALAR, (uint8_t)s, 1, 0, 0}; }
static inline kf_type kf_type_vector(kf_scalar s, unsigned lanes) {
    return (kf_type){lanes == 1 ? KF_TK_SCALAR : KF_TK_VECTOR, (uint8_t)s, (uint8_t)lanes, 0, 0};
}
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
bool kf_type_eq(kf_type a, kf_type b);
/* Writes the source spelling ("f32x4", "&mut [f16]", "u32[8]") into buf. */
const char *kf_type_str(kf_type t, char *buf, size_t size);
/* Parses a scalar or vector type name ("f16x8"); KF_TK_VOID if not one. */
kf_type kf_type_from_name(const char *name, size_t len);

#endif
