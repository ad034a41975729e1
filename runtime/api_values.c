/* The small public vocabulary (include/kforge.h): the version, status
 * names, the library's free, scalar and type sizes, value constructors for
 * every scalar type, and arguments. Values hold lane bits exactly as the
 * kernel reads them (ir/numeric.h does the f16/bf16 rounding, once). */
#include "../ir/numeric.h"

#include <string.h>

const char *kf_version(void) { return KF_VERSION; }
int kf_version_number(void) { return KF_VERSION_NUMBER; }

const char *kf_status_name(kf_status st)
{
    static const char *const names[] = {"KF_OK", "KF_ERR_SOURCE", "KF_ERR_USAGE", "KF_ERR_RUNTIME",
                                        "KF_ERR_DEVICE", "KF_ERR_IO", "KF_ERR_NOMEM"};
    return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "KF_ERR_?";
}

void kf_free(void *p) { free(p); }

const char *kf_scalar_name(kf_scalar s) { return (unsigned)s < KF_S_COUNT ? kf_scalar_names[s] : "none"; }
uint32_t kf_scalar_size(kf_scalar s) { return (unsigned)s < KF_S_COUNT ? kf_scalar_bytes[s] : 0; }
uint32_t kf_type_size(kf_type t) { return t.scalar < KF_S_COUNT ? kf_type_elem_bytes(t) : 0; }

/* ---- values ------------------------------------------------------------------ */
static kf_value scalar(kf_scalar s, uint64_t bits)
{
    kf_value v = {.type = kf_type_scalar(s)};
    v.lane[0] = bits;
    return v;
}

kf_value kf_value_bool(bool x) { return scalar(KF_S_BOOL, x); }
kf_value kf_value_i8(int8_t x) { return scalar(KF_S_I8, (uint8_t)x); }
kf_value kf_value_u8(uint8_t x) { return scalar(KF_S_U8, x); }
kf_value kf_value_i16(int16_t x) { return scalar(KF_S_I16, (uint16_t)x); }
kf_value kf_value_u16(uint16_t x) { return scalar(KF_S_U16, x); }
kf_value kf_value_i32(int32_t x) { return scalar(KF_S_I32, (uint32_t)x); }
kf_value kf_value_u32(uint32_t x) { return scalar(KF_S_U32, x); }
kf_value kf_value_i64(int64_t x) { return scalar(KF_S_I64, (uint64_t)x); }
kf_value kf_value_u64(uint64_t x) { return scalar(KF_S_U64, x); }
kf_value kf_value_f16(double x) { return scalar(KF_S_F16, kf_f16_from_double(x)); }
kf_value kf_value_bf16(double x) { return scalar(KF_S_BF16, kf_bf16_from_double(x)); }
kf_value kf_value_f16_bits(uint16_t bits) { return scalar(KF_S_F16, bits); }
kf_value kf_value_bf16_bits(uint16_t bits) { return scalar(KF_S_BF16, bits); }
kf_value kf_value_f32(float x) { return scalar(KF_S_F32, kf_f32_bits(x)); }

kf_value kf_value_f64(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return scalar(KF_S_F64, bits);
}

kf_value kf_value_splat(kf_value x, unsigned lanes)
{
    kf_value v = {0};
    kf_type t = kf_type_vector((kf_scalar)x.type.scalar, lanes);
    bool ok = x.type.kind == KF_TK_SCALAR && (lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16) &&
              kf_type_elem_bytes(t) <= 16;
    if (!ok) return v;
    v.type = t;
    for (unsigned i = 0; i < lanes; i++) v.lane[i] = x.lane[0];
    return v;
}

double kf_value_to_double(kf_value v, unsigned lane)
{
    if (lane >= 16 || v.type.scalar == KF_S_NONE || v.type.scalar >= KF_S_UINT) return 0;
    return kf_bits_to_double((kf_scalar)v.type.scalar, v.lane[lane]);
}

kf_arg kf_arg_buffer(kf_buffer *b) { return (kf_arg){.buf = b}; }
kf_arg kf_arg_value(kf_value v) { return (kf_arg){.value = v}; }
