/* The CUDA-C prelude: small device helpers and types that the emitted
 * kernels call, written once at the top of the module and only when used.
 *
 * NVRTC 13 ships no <cuda_fp16.h>/<cuda_bf16.h> on its default include path
 * (checked: "could not open source file"), and the runtime passes no include
 * directory, so f16 and bf16 are our own 2-byte structs over their bits,
 * converted with the PTX cvt instructions through inline asm. Every
 * conversion, shift and division that C would leave undefined, or round
 * twice, goes through a helper here that implements the language contract.
 *
 * Error bounds of the math helpers (f32; f64 math uses CUDA's accurate
 * libdevice functions, whose bounds are those of the CUDA Programming Guide,
 * at most 2 ulp; sqrt and / are correctly rounded in both precisions):
 *
 *   function   emitted as                        bound (PTX ISA 8.x)
 *   exp2(x)    ex2.approx.f32 x                  2 ulp over the full range
 *   exp(x)     ex2.approx.f32 (x * log2 e)       2 ulp + 2 ulp * |x| (input rounding of x*log2 e)
 *   log2(x)    lg2.approx.f32 x                  2^-22.6 absolute in [0.5, 2], else 2 ulp relative
 *   log(x)     lg2.approx.f32 x * ln 2           the log2 bound, plus 1 ulp for the product
 *   rsqrt(x)   rsqrt.approx.f32 x                2^-22.9 relative
 *   sin(x)     sin.approx.f32 r, r = x - 2 pi k  2^-20.5 absolute + 2^-21 for the turn, |x| < 2^24
 *   cos(x)     cos.approx.f32 r (as sin)         (k = rint(x / 2 pi), three fma with 2 pi in three
 *                                                parts; the instruction's own bound is for
 *                                                [-100 pi, 100 pi] and grows outside it)
 *   tanh(x)    tanh.approx.f32 x                 2^-10.987 relative (sm_75+)
 *   rcp(x)     rcp.approx.ftz.f32 x              1 ulp; subnormal inputs and results flush to 0
 *   fast_div   __fmul_rn(a, rcp(b))              the rcp bound and one more rounding
 *   sqrt(x)    __fsqrt_rn (sqrt.rn.f32)          correctly rounded
 *   a / b      __fdiv_rn (div.rn.f32)            correctly rounded
 *   floor ceil trunc round abs min max fma       exact (fma: one rounding)
 *
 * The packed f16/bf16 operations and dot4, bfe, bfi, prmt are inline PTX:
 * the same instructions the PTX back end emits (NVRTC's PTX carries them
 * verbatim), with no header NVRTC would have to find. So are mma, ldmatrix
 * and cp.async: `asm volatile`, so NVVM never removes, duplicates or sinks
 * a warp-collective instruction into a branch, with a "memory" clobber on
 * every one that reads or writes shared memory or waits for copies, so no
 * shared load or store moves across them; shared addresses are 32-bit
 * (__cvta_generic_to_shared), global ones __cvta_generic_to_global.
 */
#include "cuda_c.h"

#include <string.h>

static const uint64_t helper_deps[KF_CU_H_COUNT] = {
#define X(e, d) [e] = (d),
    KF_CU_HELPERS(X)
#undef X
};

static const char *const helper_text[KF_CU_H_COUNT] = {
    [KF_CU_H_BITCAST] =
        "/* bitcast(T, x): the same bits seen as another type of the same size */\n"
        "template <typename T, typename F>\n"
        "__device__ __forceinline__ T kf_bitcast(F x)\n"
        "{\n"
        "    static_assert(sizeof(T) == sizeof(F), \"bitcast between types of different size\");\n"
        "    T r;\n"
        "    memcpy(&r, &x, sizeof r);\n"
        "    return r;\n"
        "}\n",
    [KF_CU_H_HALF_BITS] =
        "/* bitcast(i16 or u16, an f16/bf16 value) that integer operators read, through a word\n"
        "   holding it twice: ptxas 13 drops an and or shift of a cvt-to-half result's mov.b16\n"
        "   when the result is packed into a vector store (difftest seed 2307 program 1172:\n"
        "   x & 16384 stored as x) */\n"
        "template <typename T, typename H>\n"
        "__device__ __forceinline__ T kf_half_bits(H x)\n"
        "{\n"
        "    unsigned short h = kf_bitcast<unsigned short>(x);\n"
        "    unsigned w;\n"
        "    asm(\"mov.b32 %0, {%1, %1};\" : \"=r\"(w) : \"h\"(h));\n"
        "    return (T)(unsigned short)w;\n"
        "}\n",
    [KF_CU_H_BYTES] =
        "/* A vector of bytes (u8xN, i8xN) from the word(s) that hold it, by shifts: NVVM merged\n"
        "   a byte vector load with a load of wider lanes of the same address and took those\n"
        "   lanes' low bytes for the bytes: a shared ld.v2.u8 with an ld.v2.u16 (difftest seed 8\n"
        "   program 3694), an i8x4 with a bf16x4, read as ld.v4.u16 (seed 11 program 3195; cases\n"
        "   regress_byte_pair_view, regress_byte_quad_view) */\n"
        "template <typename T> __device__ __forceinline__ T kf_bytes(unsigned long long w)\n"
        "{\n"
        "    T r;\n"
        "    for (unsigned i = 0; i < sizeof r.v; i++) r.v[i] = (w >> (8 * i)) & 0xffu;   /* the lane's low 8 bits */\n"
        "    return r;\n"
        "}\n"
        "template <typename T> __device__ __forceinline__ T kf_bytes(ulonglong2 w)\n"
        "{\n"
        "    T r;\n"
        "    for (unsigned i = 0; i < 16; i++) r.v[i] = ((i < 8 ? w.x : w.y) >> (8 * (i % 8))) & 0xffu;\n"
        "    return r;\n"
        "}\n",
    [KF_CU_H_LDG] =
        "/* An element of a read-only buffer through ld.global.nc, written out: left to\n"
        "   NVVM, the .nc of a read-only buffer's load stayed on a load it merged with one\n"
        "   of a written buffer (if c { x = ro[k] } else { x = rw[i] } became one load of\n"
        "   the selected address, stale after the kernel's own store; difftest seed 2517\n"
        "   program 790). As a word of the element's size (1 to 16 bytes) */\n"
        "template <unsigned N> struct kf_ldg_word;\n"
        "template <> struct kf_ldg_word<1> { typedef unsigned char t; };\n"
        "template <> struct kf_ldg_word<2> { typedef unsigned short t; };\n"
        "template <> struct kf_ldg_word<4> { typedef unsigned t; };\n"
        "template <> struct kf_ldg_word<8> { typedef unsigned long long t; };\n"
        "template <> struct kf_ldg_word<16> { typedef uint4 t; };\n"
        "template <typename T> __device__ __forceinline__ T kf_ldg(const T* p)\n"
        "{\n"
        "    typedef typename kf_ldg_word<sizeof(T)>::t W;\n"
        "    W w = __ldg((const W*)p);\n"
        "    T r;\n"
        "    memcpy(&r, &w, sizeof r);\n"
        "    return r;\n"
        "}\n",
    [KF_CU_H_LDS_NARROW] =
        "/* A 1- or 2-byte element of a shared array the kernel also accesses with\n"
        "   another element size, loaded by an ld.shared of its own: left to NVVM,\n"
        "   16-bit and 8-bit loads of one array were merged into one ld.v4.u8\n"
        "   whose bytes then stood for the 16-bit values (an i16 at byte 0 read as\n"
        "   that byte alone, 255 for -1: difftest seed 3503 program 1280); and the\n"
        "   word of a byte vector (u8x4, i8x4), which NVVM merged with a u32 load\n"
        "   into an ld.v2.u32 whose used_bytes_mask called the u32 it then read\n"
        "   unused (seed 3810 program 3417); and every scalar load of up to 8\n"
        "   bytes of an array with such loads of more than one size (a u64 merged\n"
        "   with u32 loads, its high word called unused: seed 3841 program 3232) */\n"
        "template <typename T> __device__ __forceinline__ T kf_lds_narrow(const T* p)\n"
        "{\n"
        "    unsigned a = (unsigned)__cvta_generic_to_shared(p);\n"
        "    unsigned short h;\n"
        "    unsigned w;\n"
        "    unsigned long long d;\n"
        "    T r;\n"
        "    if (sizeof(T) == 8) {\n"
        "        asm volatile(\"ld.shared.b64 %0, [%1];\" : \"=l\"(d) : \"r\"(a) : \"memory\");\n"
        "        memcpy(&r, &d, sizeof r);\n"
        "        return r;\n"
        "    }\n"
        "    if (sizeof(T) == 4) {\n"
        "        asm volatile(\"ld.shared.b32 %0, [%1];\" : \"=r\"(w) : \"r\"(a) : \"memory\");\n"
        "        memcpy(&r, &w, sizeof r);\n"
        "        return r;\n"
        "    }\n"
        "    if (sizeof(T) == 1) asm volatile(\"ld.shared.u8 %0, [%1];\" : \"=h\"(h) : \"r\"(a) : \"memory\");\n"
        "    else asm volatile(\"ld.shared.u16 %0, [%1];\" : \"=h\"(h) : \"r\"(a) : \"memory\");\n"
        "    memcpy(&r, &h, sizeof r);\n"
        "    return r;\n"
        "}\n",
    [KF_CU_H_BITCAST_SPLIT] =
        "/* bitcast(T, x) to narrower lanes of 8 or 16 bits (i16x4 from u32x2) is\n"
        "   written T{{lane, ...}}, each lane the low bits of x's 32-bit word\n"
        "   kf_word(x, i), shifted down first by an inline shr.b32 unless it is the\n"
        "   word's lowest: never taken as the high half of mov.b32 {lo, hi}, which\n"
        "   ptxas 13 and the H200 driver's JIT read as the word itself when the word\n"
        "   is a widened 8- or 16-bit value ((u8x2 as u32x2) as i16x4 gave the byte,\n"
        "   not 0, in lane 3: difftest seed 4 program 5323) */\n"
        "__device__ __forceinline__ unsigned kf_shr_b32(unsigned w, unsigned s) { unsigned r; asm(\"shr.b32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(w), \"r\"(s)); return r; }\n"
        "template <typename F> __device__ __forceinline__ unsigned kf_word(F x, unsigned i)\n"
        "{\n"
        "    unsigned w = 0;\n"
        "    memcpy(&w, (const char*)&x + 4 * i, sizeof x < 4 ? sizeof x : 4);\n"
        "    return w;\n"
        "}\n"
        "/* A 16-bit lane is the low half of its (shifted) word through mov.b32\n"
        "   {lo, hi}: converted with cvt.u16.u32 instead, ptxas 13 took the high half\n"
        "   of a widened byte for the byte itself when an f16 conversion read it\n"
        "   (bitcast(f16x2, b as u32).y as f32 gave b's value as f16 bits, not 0;\n"
        "   case regress_bitcast_split on the H200) */\n"
        "template <typename L> __device__ __forceinline__ L kf_low_bits(unsigned w)\n"
        "{\n"
        "    L r;\n"
        "    if (sizeof r == 2) {\n"
        "        unsigned short h;\n"
        "        asm(\"{ .reg .b16 kf_hi; mov.b32 {%0, kf_hi}, %1; }\" : \"=h\"(h) : \"r\"(w));\n"
        "        memcpy(&r, &h, 2);\n"
        "    } else memcpy(&r, &w, sizeof r);\n"
        "    return r;\n"
        "}\n",
    [KF_CU_H_F16] =
        "/* f16: IEEE binary16 bits; arithmetic goes through f32 (exact widening,\n"
        "   one round-to-nearest-even back) */\n"
        "struct __align__(2) kf_f16 { unsigned short bits; };\n"
        "__device__ __forceinline__ float kf_f16_to_f32(kf_f16 h)\n"
        "{\n"
        "    float f;\n"
        "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h.bits));\n"
        "    return f;\n"
        "}\n"
        "/* the bits leave the asm in a 32-bit register: ptxas 13 turns an 8-bit store of\n"
        "   a cvt.rn.f16.f32 result register into a float -> u8 conversion */\n"
        "__device__ __forceinline__ kf_f16 kf_f16_from_f32(float f)\n"
        "{\n"
        "    unsigned u;\n"
        "    asm(\"{ .reg .b16 t; cvt.rn.f16.f32 t, %1; cvt.u32.u16 %0, t; }\" : \"=r\"(u) : \"f\"(f));\n"
        "    kf_f16 h = {(unsigned short)u};\n"
        "    return h;\n"
        "}\n",
    [KF_CU_H_BF16] =
        "/* bf16: the top 16 bits of an f32 */\n"
        "struct __align__(2) kf_bf16 { unsigned short bits; };\n"
        "__device__ __forceinline__ float kf_bf16_to_f32(kf_bf16 h)\n"
        "{\n"
        "    return __uint_as_float((unsigned)h.bits << 16);\n"
        "}\n"
        "__device__ __forceinline__ kf_bf16 kf_bf16_from_f32(float f)\n"
        "{\n"
        "    unsigned u;   /* 32-bit: see kf_f16_from_f32 */\n"
        "    asm(\"{ .reg .b16 t; cvt.rn.bf16.f32 t, %1; cvt.u32.u16 %0, t; }\" : \"=r\"(u) : \"f\"(f));\n"
        "    kf_bf16 h = {(unsigned short)u};\n"
        "    return h;\n"
        "}\n",
    [KF_CU_H_F16_OPS] =
        "/* f16 arithmetic: each result rounded to f16 (RNE), as native f16 ops */\n"
        "__device__ __forceinline__ kf_f16 kf_f16_add(kf_f16 a, kf_f16 b) { return kf_f16_from_f32(__fadd_rn(kf_f16_to_f32(a), kf_f16_to_f32(b))); }\n"
        "__device__ __forceinline__ kf_f16 kf_f16_sub(kf_f16 a, kf_f16 b) { return kf_f16_from_f32(__fsub_rn(kf_f16_to_f32(a), kf_f16_to_f32(b))); }\n"
        "__device__ __forceinline__ kf_f16 kf_f16_mul(kf_f16 a, kf_f16 b) { return kf_f16_from_f32(__fmul_rn(kf_f16_to_f32(a), kf_f16_to_f32(b))); }\n"
        "__device__ __forceinline__ kf_f16 kf_f16_div(kf_f16 a, kf_f16 b) { return kf_f16_from_f32(__fdiv_rn(kf_f16_to_f32(a), kf_f16_to_f32(b))); }\n"
        "__device__ __forceinline__ kf_f16 kf_f16_neg(kf_f16 a) { kf_f16 r = {(unsigned short)(a.bits ^ 0x8000u)}; return r; }\n",
    [KF_CU_H_BF16_OPS] =
        "/* bf16 arithmetic: each result rounded to bf16 (RNE) */\n"
        "__device__ __forceinline__ kf_bf16 kf_bf16_add(kf_bf16 a, kf_bf16 b) { return kf_bf16_from_f32(__fadd_rn(kf_bf16_to_f32(a), kf_bf16_to_f32(b))); }\n"
        "__device__ __forceinline__ kf_bf16 kf_bf16_sub(kf_bf16 a, kf_bf16 b) { return kf_bf16_from_f32(__fsub_rn(kf_bf16_to_f32(a), kf_bf16_to_f32(b))); }\n"
        "__device__ __forceinline__ kf_bf16 kf_bf16_mul(kf_bf16 a, kf_bf16 b) { return kf_bf16_from_f32(__fmul_rn(kf_bf16_to_f32(a), kf_bf16_to_f32(b))); }\n"
        "__device__ __forceinline__ kf_bf16 kf_bf16_div(kf_bf16 a, kf_bf16 b) { return kf_bf16_from_f32(__fdiv_rn(kf_bf16_to_f32(a), kf_bf16_to_f32(b))); }\n"
        "__device__ __forceinline__ kf_bf16 kf_bf16_neg(kf_bf16 a) { kf_bf16 r = {(unsigned short)(a.bits ^ 0x8000u)}; return r; }\n",
    [KF_CU_H_ODD] =
        "/* Round to odd into f32 (24 bits): a later RNE rounding to f16/bf16\n"
        "   (<= 11 bits) then equals ONE rounding of the exact value */\n"
        "__device__ __forceinline__ float kf_f64_to_f32_odd(double x)\n"
        "{\n"
        "    float r = __double2float_rz(x);\n"
        "    if ((double)r != x && r == r) r = __uint_as_float(__float_as_uint(r) | 1u);\n"
        "    return r;\n"
        "}\n"
        "__device__ __forceinline__ float kf_u64_to_f32_odd(unsigned long long u)\n"
        "{\n"
        "    if (u < (1ull << 24)) return (float)u;\n"
        "    int sh = 40 - __clzll((long long)u);\n"
        "    unsigned m = (unsigned)(u >> sh);\n"
        "    if (u & ((1ull << sh) - 1ull)) m |= 1u;\n"
        "    return __fmul_rn((float)m, __uint_as_float((unsigned)(127 + sh) << 23));\n"
        "}\n",
    [KF_CU_H_F16_NARROW] =
        "/* f64 and 32/64-bit integers to f16 in one RNE rounding */\n"
        "__device__ __forceinline__ kf_f16 kf_f64_to_f16(double x) { return kf_f16_from_f32(kf_f64_to_f32_odd(x)); }\n"
        "__device__ __forceinline__ kf_f16 kf_u64_to_f16(unsigned long long x) { return kf_f16_from_f32(kf_u64_to_f32_odd(x)); }\n"
        "/* i32 through a signed 32-bit cvt to f64 (exact), never widened to 64 bits\n"
        "   first: the H200 driver's JIT took the sign extension of an abs.s32 result\n"
        "   for a zero extension (abs(INT_MIN) as bf16 gave +2^31: difftest seed 1\n"
        "   program 7291) */\n"
        "__device__ __forceinline__ kf_f16 kf_i32_to_f16(int x) { double d; asm(\"cvt.rn.f64.s32 %0, %1;\" : \"=d\"(d) : \"r\"(x)); return kf_f64_to_f16(d); }\n"
        "__device__ __forceinline__ kf_f16 kf_i64_to_f16(long long x)\n"
        "{\n"
        "    float m = kf_u64_to_f32_odd(x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x);\n"
        "    return kf_f16_from_f32(x < 0 ? -m : m);\n"
        "}\n",
    [KF_CU_H_BF16_NARROW] =
        "/* f64 and 32/64-bit integers to bf16 in one RNE rounding */\n"
        "__device__ __forceinline__ kf_bf16 kf_f64_to_bf16(double x) { return kf_bf16_from_f32(kf_f64_to_f32_odd(x)); }\n"
        "__device__ __forceinline__ kf_bf16 kf_u64_to_bf16(unsigned long long x) { return kf_bf16_from_f32(kf_u64_to_f32_odd(x)); }\n"
        "/* i32 through a signed 32-bit cvt to f64 (exact), never widened to 64 bits\n"
        "   first: the H200 driver's JIT took the sign extension of an abs.s32 result\n"
        "   for a zero extension (abs(INT_MIN) as bf16 gave +2^31: difftest seed 1\n"
        "   program 7291) */\n"
        "__device__ __forceinline__ kf_bf16 kf_i32_to_bf16(int x) { double d; asm(\"cvt.rn.f64.s32 %0, %1;\" : \"=d\"(d) : \"r\"(x)); return kf_f64_to_bf16(d); }\n"
        "__device__ __forceinline__ kf_bf16 kf_i64_to_bf16(long long x)\n"
        "{\n"
        "    float m = kf_u64_to_f32_odd(x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x);\n"
        "    return kf_bf16_from_f32(x < 0 ? -m : m);\n"
        "}\n",
    [KF_CU_H_F2I] =
        "/* float -> integer: truncate, saturate, NaN -> 0. cvt.rzi truncates and\n"
        "   saturates, but NaN gives the most negative pattern of the destination (2^31\n"
        "   for unsigned, INT64_MIN for long long). Inline PTX, not the __*_rz intrinsics:\n"
        "   NVVM folds __float2ull_rz(-1.0f) to 2^64 - 1 (difftest seed 1 program 4595),\n"
        "   and so does the H200 driver's JIT with cvt.rzi.u64.f32 of a select of -1.0:\n"
        "   an unsigned result is 0 unless x >= 0 (also false for NaN) by a compare\n"
        "   of our own. */\n"
        "__device__ __forceinline__ int kf_f32_to_i32(float x) { int r; asm(\"cvt.rzi.s32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x)); return x != x ? 0 : r; }\n"
        "__device__ __forceinline__ unsigned kf_f32_to_u32(float x) { unsigned r; asm(\"cvt.rzi.u32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x)); return x >= 0.0f ? r : 0u; }\n"
        "__device__ __forceinline__ long long kf_f32_to_i64(float x) { long long r; asm(\"cvt.rzi.s64.f32 %0, %1;\" : \"=l\"(r) : \"f\"(x)); return x != x ? 0ll : r; }\n"
        "__device__ __forceinline__ unsigned long long kf_f32_to_u64(float x) { unsigned long long r; asm(\"cvt.rzi.u64.f32 %0, %1;\" : \"=l\"(r) : \"f\"(x)); return x >= 0.0f ? r : 0ull; }\n"
        "__device__ __forceinline__ int kf_f64_to_i32(double x) { int r; asm(\"cvt.rzi.s32.f64 %0, %1;\" : \"=r\"(r) : \"d\"(x)); return x != x ? 0 : r; }\n"
        "__device__ __forceinline__ unsigned kf_f64_to_u32(double x) { unsigned r; asm(\"cvt.rzi.u32.f64 %0, %1;\" : \"=r\"(r) : \"d\"(x)); return x >= 0.0 ? r : 0u; }\n"
        "__device__ __forceinline__ long long kf_f64_to_i64(double x) { long long r; asm(\"cvt.rzi.s64.f64 %0, %1;\" : \"=l\"(r) : \"d\"(x)); return x != x ? 0ll : r; }\n"
        "__device__ __forceinline__ unsigned long long kf_f64_to_u64(double x) { unsigned long long r; asm(\"cvt.rzi.u64.f64 %0, %1;\" : \"=l\"(r) : \"d\"(x)); return x >= 0.0 ? r : 0ull; }\n",
    [KF_CU_H_SAT] =
        "/* float -> 8/16-bit int: to 32 bits (truncates, saturates, NaN -> 0),\n"
        "   then saturate to the narrow range */\n"
        "__device__ __forceinline__ int kf_sat_i32(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }\n"
        "__device__ __forceinline__ unsigned kf_sat_u32(unsigned x, unsigned hi) { return x > hi ? hi : x; }\n",
    [KF_CU_H_NARROW] =
        "/* 8/16-bit integer results are computed in 32 bits and narrowed by a cast\n"
        "   of kf_narrow(x), which hides x from NVVM: narrowed back to 16 bits, a\n"
        "   negation or abs becomes neg.s16/abs.s16, which ptxas 13 widens without\n"
        "   wrapping (-(short)-32768 read as +32768) */\n"
        "__device__ __forceinline__ unsigned kf_narrow(unsigned x) { unsigned r; asm(\"mov.b32 %0, %1;\" : \"=r\"(r) : \"r\"(x)); return r; }\n",
    [KF_CU_H_SHIFT32] =
        "/* Shifts: the amount is unsigned; >= the width gives 0 (<<, unsigned >>)\n"
        "   or the sign fill (signed >>). 8/16-bit values shift widened to 32. */\n"
        "__device__ __forceinline__ unsigned kf_shl_u32(unsigned a, unsigned s) { return s >= 32u ? 0u : a << s; }\n"
        "__device__ __forceinline__ unsigned kf_shr_u32(unsigned a, unsigned s) { return s >= 32u ? 0u : a >> s; }\n"
        "__device__ __forceinline__ int kf_shr_i32(int a, unsigned s) { return a >> (s >= 31u ? 31u : s); }\n",
    [KF_CU_H_SHIFT64] =
        "__device__ __forceinline__ unsigned long long kf_shl_u64(unsigned long long a, unsigned long long s) { return s >= 64ull ? 0ull : a << s; }\n"
        "__device__ __forceinline__ unsigned long long kf_shr_u64(unsigned long long a, unsigned long long s) { return s >= 64ull ? 0ull : a >> s; }\n"
        "__device__ __forceinline__ long long kf_shr_i64(long long a, unsigned long long s) { return a >> (s >= 63ull ? 63ull : s); }\n",
    [KF_CU_H_IDIV32] =
        "/* Signed division: INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0 */\n"
        "__device__ __forceinline__ int kf_div_i32(int a, int b) { return b == -1 ? (int)(0u - (unsigned)a) : a / b; }\n"
        "__device__ __forceinline__ int kf_rem_i32(int a, int b) { return b == -1 ? 0 : a % b; }\n"
        "/* i8/i16 division in 32 bits (no overflow there), as PTX: NVVM narrows a C division\n"
        "   of sign-extended bytes by a power of two and drops the sign extension of the\n"
        "   biased sum in some lanes (-2 / -16 gave -16: difftest seed 1 program 10530) */\n"
        "__device__ __forceinline__ int kf_div_n32(int a, int b) { int r; asm(\"div.s32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ int kf_rem_n32(int a, int b) { int r; asm(\"rem.s32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n",
    [KF_CU_H_IDIV64] =
        "__device__ __forceinline__ long long kf_div_i64(long long a, long long b) { return b == -1 ? (long long)(0ull - (unsigned long long)a) : a / b; }\n"
        "__device__ __forceinline__ long long kf_rem_i64(long long a, long long b) { return b == -1 ? 0 : a % b; }\n",
    [KF_CU_H_CDIV] =
        "/* cdiv(a, b): the quotient rounded toward +inf */\n"
        "__device__ __forceinline__ unsigned kf_cdiv_u32(unsigned a, unsigned b) { return a / b + (a % b != 0u); }\n"
        "__device__ __forceinline__ unsigned long long kf_cdiv_u64(unsigned long long a, unsigned long long b) { return a / b + (a % b != 0ull); }\n"
        "__device__ __forceinline__ int kf_cdiv_i32(int a, int b)\n"
        "{\n"
        "    if (b == -1) return (int)(0u - (unsigned)a);\n"
        "    int q = a / b;\n"
        "    return (a % b != 0 && (a ^ b) >= 0) ? q + 1 : q;\n"
        "}\n"
        "__device__ __forceinline__ long long kf_cdiv_i64(long long a, long long b)\n"
        "{\n"
        "    if (b == -1) return (long long)(0ull - (unsigned long long)a);\n"
        "    long long q = a / b;\n"
        "    return (a % b != 0 && (a ^ b) >= 0) ? q + 1 : q;\n"
        "}\n",
    [KF_CU_H_ABS] =
        "/* abs(INT_MIN) = INT_MIN, as PTX abs.s32/abs.s64 define it. Not in C: NVVM takes\n"
        "   a < 0 ? 0 - a : a for an abs that is never negative and sign-extends it as if\n"
        "   non-negative ((long long)abs(INT_MIN) became +2^31: difftest seed 1 program 7291).\n"
        "   Nor PTX abs: ptxas 13 takes abs.s32's result for never negative too and divides it\n"
        "   unsigned (abs(INT_MIN) % 2147483647 gave 1: seed 7 program 906), so max(a, -a).\n"
        "   A 32-bit -a is ~a + 1 in PTX (kf_neg_i32): ptxas 13 merges max(x, max(y, neg z))\n"
        "   into one VIMNMX3 and drops the negation (max(d, abs(d)) gave -1 for d = -1:\n"
        "   seed 11 program 6458); NVVM turns ~a + 1 in C back into neg.s32. */\n"
        "__device__ __forceinline__ int kf_neg_i32(int a) { int r; asm(\"{ not.b32 %0, %1; add.s32 %0, %0, 1; }\" : \"=r\"(r) : \"r\"(a)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_neg_u32(unsigned a) { unsigned r; asm(\"{ not.b32 %0, %1; add.u32 %0, %0, 1; }\" : \"=r\"(r) : \"r\"(a)); return r; }\n"
        "__device__ __forceinline__ int kf_abs_i32(int a) { int r; asm(\"{ .reg .s32 t; not.b32 t, %1; add.s32 t, t, 1; max.s32 %0, %1, t; }\" : \"=r\"(r) : \"r\"(a)); return r; }\n"
        "__device__ __forceinline__ long long kf_abs_i64(long long a) { long long r; asm(\"{ .reg .s64 t; neg.s64 t, %1; max.s64 %0, %1, t; }\" : \"=l\"(r) : \"l\"(a)); return r; }\n",
    [KF_CU_H_FSIGN] =
        "/* f32 negation, and a select of a -0.0 constant, in PTX that NVVM does not see through:\n"
        "   ptxas 13 makes selp.f32 of two constants, one of them -0.0, an integer select and a\n"
        "   conversion (or FSET.BF) that gives +0.0, and NVVM folds a negation into a select of\n"
        "   constants: -(float)b became selp.f32 -1.0, -0.0 (difftest seed 11 program 2249). */\n"
        "__device__ __forceinline__ float kf_neg_f32(float x) { float r; asm(\"neg.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x)); return r; }\n"
        "__device__ __forceinline__ float kf_sel_f32(bool c, float a, float b)\n"
        "{\n"
        "    float r;\n"
        "    asm(\"{ .reg .pred p; setp.ne.u32 p, %1, 0; selp.b32 %0, %2, %3, p; }\" : \"=f\"(r) : \"r\"((unsigned)c), \"f\"(a), \"f\"(b));\n"
        "    return r;\n"
        "}\n",
    [KF_CU_H_APPROX] =
        "/* f32 math on the hardware approximations (bounds: see the table atop\n"
        "   kforge's emit/cuda_c_prelude.c), and abs as the bit operation it is:\n"
        "   ptxas 13 takes abs.f32 (fabsf) for never NaN and folds -1 < fabsf(x) to true */\n"
        "__device__ __forceinline__ float kf_abs_f32(float x) { float r; asm(\"and.b32 %0, %1, 0x7FFFFFFF;\" : \"=f\"(r) : \"f\"(x)); return r; }\n"
        "__device__ __forceinline__ float kf_exp2_approx(float x) { float r; asm(\"ex2.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x)); return r; }\n"
        "__device__ __forceinline__ float kf_exp_approx(float x) { return kf_exp2_approx(__fmul_rn(x, 1.44269502f)); }\n"
        "__device__ __forceinline__ float kf_log2_approx(float x) { float r; asm(\"lg2.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x)); return r; }\n"
        "__device__ __forceinline__ float kf_log_approx(float x) { return __fmul_rn(kf_log2_approx(x), 0.693147182f); }\n"
        "__device__ __forceinline__ float kf_rsqrt_approx(float x) { float r; asm(\"rsqrt.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x)); return r; }\n"
        "/* x - 2 pi k in [-pi, pi] (k = rint(x / 2 pi); x itself when k is 0, for its -0) */\n"
        "__device__ __forceinline__ float kf_turn(float x) {\n"
        "    float k = rintf(__fmul_rn(x, 0.159154937f));\n"
        "    float r = __fmaf_rn(k, -6.28318548f, x);\n"
        "    r = __fmaf_rn(k, 1.74845553e-07f, r);\n"
        "    r = __fmaf_rn(k, 6.86049804e-15f, r);\n"
        "    return k == 0.0f ? x : r;\n"
        "}\n"
        "__device__ __forceinline__ float kf_sin_approx(float x) { float r; asm(\"sin.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(kf_turn(x))); return r; }\n"
        "__device__ __forceinline__ float kf_cos_approx(float x) { float r; asm(\"cos.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(kf_turn(x))); return r; }\n"
        "__device__ __forceinline__ float kf_tanh_approx(float x) { float r; asm(\"tanh.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x)); return r; }\n"
        "__device__ __forceinline__ float kf_rcp_approx(float x) { float r; asm(\"rcp.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x)); return r; }\n"
        "__device__ __forceinline__ float kf_fast_div(float a, float b) { return __fmul_rn(a, kf_rcp_approx(b)); }\n",
    [KF_CU_H_DMINMAX] =
        "/* f64 min/max as compares and selects, not fmin/fmax (min.f64/max.f64): ptxas 13\n"
        "   takes a DSETP.MIN/MAX whose high word is dead after a loop for a compare with zero\n"
        "   (difftest seed 2200 program 2890); and f32 min/max beside a constant -0.0 (kf_fmin_z,\n"
        "   kf_fmax_z): the H200 gave +0 for clamp(x, -0.0, 1.0) of x <= -0. A NaN operand gives\n"
        "   the other; equal operands (+0, -0) their bits or'd (min: -0) or and'd (max: +0):\n"
        "   PTX min/max, as the PTX back end. kf_zpick_P(m, t, f): P(m) ? t : f, P a predicate on\n"
        "   m's bits as integers (ir.h kf_ir_zero_select), for a max or select of zero and a min:\n"
        "   ptxas makes max(min(x, 1.0), 0.0) a saturate, +0 for a NaN x (difftest seed 3503\n"
        "   program 2775), and select(m > 0.0, m, 0.0) of a min as well */\n"
        "#define KF_XMINMAX(name, t, f, w, c, cmp, op) \\\n"
        "    __device__ __forceinline__ t name(t a, t b) \\\n"
        "    { \\\n"
        "        t r; \\\n"
        "        asm(\"{ .reg .pred p, q; .reg .\" w \" x, y; .reg .\" f \" t; setp.\" cmp \".\" f \" p, %1, %2; \" \\\n"
        "            \"setp.nan.\" f \" q, %2, %2; or.pred p, p, q; selp.\" f \" t, %1, %2, p; setp.eq.\" f \" q, %1, %2; \" \\\n"
        "            \"mov.\" w \" x, %1; mov.\" w \" y, %2; \" op \".\" w \" x, x, y; mov.\" w \" y, t; selp.\" w \" y, x, y, q; \" \\\n"
        "            \"mov.\" w \" %0, y; }\" : \"=\" c(r) : c(a), c(b)); \\\n"
        "        return r; \\\n"
        "    }\n"
        "KF_XMINMAX(kf_dmin, double, \"f64\", \"b64\", \"d\", \"lt\", \"or\")\n"
        "KF_XMINMAX(kf_dmax, double, \"f64\", \"b64\", \"d\", \"gt\", \"and\")\n"
        "KF_XMINMAX(kf_fmin_z, float, \"f32\", \"b32\", \"f\", \"lt\", \"or\")\n"
        "KF_XMINMAX(kf_fmax_z, float, \"f32\", \"b32\", \"f\", \"gt\", \"and\")\n"
        "#undef KF_XMINMAX\n"
        "#define KF_ZPICK(name, pred) \\\n"
        "    __device__ __forceinline__ float name(float m, float t, float f) \\\n"
        "    { \\\n"
        "        float r; \\\n"
        "        asm(\"{ .reg .b32 x; .reg .pred p, q; mov.b32 x, %1; \" pred \" selp.b32 %0, %2, %3, p; }\" \\\n"
        "            : \"=f\"(r) : \"f\"(m), \"f\"(t), \"f\"(f)); \\\n"
        "        return r; \\\n"
        "    }\n"
        "KF_ZPICK(kf_zpick_gt, \"add.s32 x, x, -1; setp.lt.u32 p, x, 2139095040;\")\n"
        "KF_ZPICK(kf_zpick_lt, \"add.s32 x, x, 2147483647; setp.lt.u32 p, x, 2139095040;\")\n"
        "KF_ZPICK(kf_zpick_ge, \"setp.le.u32 p, x, 2139095040; setp.eq.u32 q, x, -2147483648; or.pred p, p, q;\")\n"
        "KF_ZPICK(kf_zpick_le, \"add.s32 x, x, -2147483648; setp.le.u32 p, x, 2139095040; \"\n"
        "         \"setp.eq.u32 q, x, -2147483648; or.pred p, p, q;\")\n"
        "KF_ZPICK(kf_zpick_plus, \"setp.le.u32 p, x, 2139095040;\")\n"
        "#undef KF_ZPICK\n",
    [KF_CU_H_IMINMAX] =
        "/* Integer min/max in PTX that NVVM does not see into, for a clamp and a min or max\n"
        "   of a min, max or select: NVVM 13.0 never finishes compiling min(max(0u - y, 0u - x),\n"
        "   ~l) (signed too), whether written with CUDA's min()/max() or as compares and\n"
        "   selects (difftest seed 2303 program 15603) */\n"
        "#define KF_IMINMAX(t, n, c) \\\n"
        "    __device__ __forceinline__ t kf_min_##n(t a, t b) { t r; asm(\"min.\" #n \" %0, %1, %2;\" : \"=\" c(r) : c(a), c(b)); return r; } \\\n"
        "    __device__ __forceinline__ t kf_max_##n(t a, t b) { t r; asm(\"max.\" #n \" %0, %1, %2;\" : \"=\" c(r) : c(a), c(b)); return r; }\n"
        "KF_IMINMAX(int, s32, \"r\")\n"
        "KF_IMINMAX(unsigned, u32, \"r\")\n"
        "KF_IMINMAX(long long, s64, \"l\")\n"
        "KF_IMINMAX(unsigned long long, u64, \"l\")\n"
        "#undef KF_IMINMAX\n",
    [KF_CU_H_LANE] =
        "__device__ __forceinline__ unsigned kf_lane_id(void) { unsigned r; asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(r)); return r; }\n",
    [KF_CU_H_SHFL_GUARD] =
        "/* Warp operations over the n lanes of this warp that exist (a block that\n"
        "   is not a multiple of 32 threads has a partial last warp; the full mask\n"
        "   would be undefined there). Shuffles as the interpreter (LANGUAGE.md 7):\n"
        "     shfl(v, s)      source s % 32       own value when s % 32 >= n\n"
        "     shfl_xor(v, m)  source lane ^ m     own value when m >= 32 or lane ^ m >= n\n"
        "     shfl_down(v, d) source lane + d     own value when d >= 32 or lane + d >= n\n"
        "     shfl_up(v, d)   source lane - d     own value when d > lane */\n"
        "__device__ __forceinline__ unsigned kf_warp_lanes(void)\n"
        "{\n"
        "    unsigned t = blockDim.x * blockDim.y * blockDim.z;\n"
        "    unsigned l = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
        "    unsigned r = t - (l & ~31u);\n"
        "    return r < 32u ? r : 32u;\n"
        "}\n"
        "__device__ __forceinline__ unsigned kf_warp_mask(unsigned n) { return n < 32u ? (1u << n) - 1u : 0xffffffffu; }\n"
        "template <typename T>\n"
        "__device__ __forceinline__ T kf_shfl(T v, unsigned s, unsigned n)\n"
        "{\n"
        "    T r = __shfl_sync(kf_warp_mask(n), v, s & 31u);\n"
        "    return (s & 31u) < n ? r : v;\n"
        "}\n"
        "template <typename T>\n"
        "__device__ __forceinline__ T kf_shfl_xor(T v, unsigned m, unsigned n)\n"
        "{\n"
        "    T r = __shfl_xor_sync(kf_warp_mask(n), v, m & 31u);\n"
        "    return m < 32u && (kf_lane_id() ^ m) < n ? r : v;\n"
        "}\n"
        "template <typename T>\n"
        "__device__ __forceinline__ T kf_shfl_up(T v, unsigned d, unsigned n)\n"
        "{\n"
        "    T r = __shfl_up_sync(kf_warp_mask(n), v, d & 31u);\n"
        "    return d < 32u ? r : v;\n"
        "}\n"
        "template <typename T>\n"
        "__device__ __forceinline__ T kf_shfl_down(T v, unsigned d, unsigned n)\n"
        "{\n"
        "    T r = __shfl_down_sync(kf_warp_mask(n), v, d & 31u);\n"
        "    return d < 32u && kf_lane_id() + d < n ? r : v;\n"
        "}\n",
    [KF_CU_H_ATOMIC_F32] =
        "/* f32 atomic min/max (NaN-ignoring, as fminf/fmaxf) by compare-and-swap */\n"
        "__device__ __forceinline__ float kf_atomic_min_f32(float* p, float v)\n"
        "{\n"
        "    unsigned* q = (unsigned*)p;\n"
        "    unsigned old = *q;\n"
        "    unsigned seen;\n"
        "    do {\n"
        "        seen = old;\n"
        "        old = atomicCAS(q, seen, __float_as_uint(fminf(__uint_as_float(seen), v)));\n"
        "    } while (old != seen);\n"
        "    return __uint_as_float(old);\n"
        "}\n"
        "__device__ __forceinline__ float kf_atomic_max_f32(float* p, float v)\n"
        "{\n"
        "    unsigned* q = (unsigned*)p;\n"
        "    unsigned old = *q;\n"
        "    unsigned seen;\n"
        "    do {\n"
        "        seen = old;\n"
        "        old = atomicCAS(q, seen, __float_as_uint(fmaxf(__uint_as_float(seen), v)));\n"
        "    } while (old != seen);\n"
        "    return __uint_as_float(old);\n"
        "}\n",
    [KF_CU_H_DOT4] =
        "/* dot4: c + the dot product of two 4-byte vectors (dp4a), modulo 2^32 */\n"
        "__device__ __forceinline__ int kf_dot4_ss(unsigned a, unsigned b, int c) { int r; asm(\"dp4a.s32.s32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(c)); return r; }\n"
        "__device__ __forceinline__ int kf_dot4_su(unsigned a, unsigned b, int c) { int r; asm(\"dp4a.s32.u32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(c)); return r; }\n"
        "__device__ __forceinline__ int kf_dot4_us(unsigned a, unsigned b, int c) { int r; asm(\"dp4a.u32.s32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(c)); return r; }\n"
        "__device__ __forceinline__ int kf_dot4_uu(unsigned a, unsigned b, int c) { int r; asm(\"dp4a.u32.u32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(c)); return r; }\n",
    [KF_CU_H_BITFIELD] =
        "/* bfe / bfi / prmt as PTX defines them (positions and lengths 0..255). The position and\n"
        "   length are first brought inside the value (the same field by the ISA definition):\n"
        "   ptxas 13 miscompiles a known bfe.s32 position past 31 (-1 for every x) and a known\n"
        "   bfi length of 32 or more (taken modulo 32). A signed bfe position stops at w - 1,\n"
        "   whose field is the sign bit; the others stop at w, whose field is empty. */\n"
        "__device__ __forceinline__ unsigned kf_bf_pos(unsigned p, unsigned cap) { p &= 255u; return p < cap ? p : cap; }\n"
        "__device__ __forceinline__ unsigned kf_bf_len(unsigned l, unsigned w, unsigned p) { l &= 255u; return l < w - p ? l : w - p; }\n"
        "__device__ __forceinline__ unsigned kf_bfe_u32(unsigned x, unsigned p, unsigned l) { unsigned r; p = kf_bf_pos(p, 32u); l = kf_bf_len(l, 32u, p); asm(\"bfe.u32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(x), \"r\"(p), \"r\"(l)); return r; }\n"
        "__device__ __forceinline__ int kf_bfe_i32(int x, unsigned p, unsigned l) { int r; p = kf_bf_pos(p, 31u); l = kf_bf_len(l, 32u, p); asm(\"bfe.s32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(x), \"r\"(p), \"r\"(l)); return r; }\n"
        "__device__ __forceinline__ unsigned long long kf_bfe_u64(unsigned long long x, unsigned p, unsigned l) { unsigned long long r; p = kf_bf_pos(p, 64u); l = kf_bf_len(l, 64u, p); asm(\"bfe.u64 %0, %1, %2, %3;\" : \"=l\"(r) : \"l\"(x), \"r\"(p), \"r\"(l)); return r; }\n"
        "__device__ __forceinline__ long long kf_bfe_i64(long long x, unsigned p, unsigned l) { long long r; p = kf_bf_pos(p, 63u); l = kf_bf_len(l, 64u, p); asm(\"bfe.s64 %0, %1, %2, %3;\" : \"=l\"(r) : \"l\"(x), \"r\"(p), \"r\"(l)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_bfi_u32(unsigned f, unsigned x, unsigned p, unsigned l) { unsigned r; p = kf_bf_pos(p, 32u); l = kf_bf_len(l, 32u, p); asm(\"bfi.b32 %0, %1, %2, %3, %4;\" : \"=r\"(r) : \"r\"(f), \"r\"(x), \"r\"(p), \"r\"(l)); return r; }\n"
        "__device__ __forceinline__ int kf_bfi_i32(int f, int x, unsigned p, unsigned l) { return (int)kf_bfi_u32((unsigned)f, (unsigned)x, p, l); }\n"
        "__device__ __forceinline__ unsigned long long kf_bfi_u64(unsigned long long f, unsigned long long x, unsigned p, unsigned l) { unsigned long long r; p = kf_bf_pos(p, 64u); l = kf_bf_len(l, 64u, p); asm(\"bfi.b64 %0, %1, %2, %3, %4;\" : \"=l\"(r) : \"l\"(f), \"l\"(x), \"r\"(p), \"r\"(l)); return r; }\n"
        "__device__ __forceinline__ long long kf_bfi_i64(long long f, long long x, unsigned p, unsigned l) { return (long long)kf_bfi_u64((unsigned long long)f, (unsigned long long)x, p, l); }\n"
        "__device__ __forceinline__ unsigned kf_prmt(unsigned a, unsigned b, unsigned s) { unsigned r; asm(\"prmt.b32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(s)); return r; }\n",
    [KF_CU_H_TYPES] = "",
    [KF_CU_H_WORDS] =
        "/* A vector of 16-bit lanes as 32-bit words, a pair of lanes each (the low\n"
        "   lane in the low half), and an operation applied word by word */\n"
        "template <typename V> struct kf_words { unsigned w[sizeof(V) / 4]; };\n"
        "template <typename V> __device__ __forceinline__ kf_words<V> kf_to_words(V v) { kf_words<V> r; memcpy(&r, &v, sizeof v); return r; }\n"
        "template <typename V> __device__ __forceinline__ V kf_from_words(kf_words<V> r) { V v; memcpy(&v, &r, sizeof v); return v; }\n"
        "/* The words a packed instruction reads, each put together by prmt from its two lanes'\n"
        "   bits, not as mov.b32 {lo, hi}: ptxas 13 makes a negative 16-bit constant lane of such\n"
        "   a pair as its magnitude and loses the negation (f16x4(x, -2048, 0, 0) + y gave +2048\n"
        "   in lane 1: difftest seed 7 program 2992, case regress_half_const_pair) */\n"
        "template <typename V> __device__ __forceinline__ kf_words<V> kf_pair_words(V a)\n"
        "{\n"
        "    kf_words<V> r;\n"
        "    for (unsigned i = 0; i < sizeof(V) / 4; i++)\n"
        "        asm(\"prmt.b32 %0, %1, %2, 0x5410;\" : \"=r\"(r.w[i]) : \"r\"((unsigned)a.v[2 * i].bits), \"r\"((unsigned)a.v[2 * i + 1].bits));\n"
        "    return r;\n"
        "}\n"
        "template <typename V, typename F> __device__ __forceinline__ V kf_pairs(F f, V a)\n"
        "{\n"
        "    kf_words<V> x = kf_pair_words(a);\n"
        "    for (unsigned i = 0; i < sizeof(V) / 4; i++) x.w[i] = f(x.w[i]);\n"
        "    return kf_from_words<V>(x);\n"
        "}\n"
        "template <typename V, typename F> __device__ __forceinline__ V kf_pairs(F f, V a, V b)\n"
        "{\n"
        "    kf_words<V> x = kf_pair_words(a), y = kf_pair_words(b);\n"
        "    for (unsigned i = 0; i < sizeof(V) / 4; i++) x.w[i] = f(x.w[i], y.w[i]);\n"
        "    return kf_from_words<V>(x);\n"
        "}\n"
        "template <typename V, typename F> __device__ __forceinline__ V kf_pairs(F f, V a, V b, V c)\n"
        "{\n"
        "    kf_words<V> x = kf_pair_words(a), y = kf_pair_words(b), z = kf_pair_words(c);\n"
        "    for (unsigned i = 0; i < sizeof(V) / 4; i++) x.w[i] = f(x.w[i], y.w[i], z.w[i]);\n"
        "    return kf_from_words<V>(x);\n"
        "}\n",
    [KF_CU_H_F16V] =
        "/* f16 pairs: one packed f16x2 instruction each, each lane rounded once (.rn: never fused) */\n"
        "__device__ __forceinline__ unsigned kf_h2_add(unsigned a, unsigned b) { unsigned r; asm(\"add.rn.f16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_h2_sub(unsigned a, unsigned b) { unsigned r; asm(\"sub.rn.f16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_h2_mul(unsigned a, unsigned b) { unsigned r; asm(\"mul.rn.f16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_h2_fma(unsigned a, unsigned b, unsigned c) { unsigned r; asm(\"fma.rn.f16x2 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(c)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_h2_min(unsigned a, unsigned b) { unsigned r; asm(\"min.f16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_h2_max(unsigned a, unsigned b) { unsigned r; asm(\"max.f16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "/* abs clears the sign bits (abs.f16x2 would make a NaN canonical) */\n"
        "__device__ __forceinline__ unsigned kf_h2_abs(unsigned a) { return a & 0x7FFF7FFFu; }\n",
    [KF_CU_H_BF16V] =
        "/* bf16 pairs: one packed bf16x2 instruction each, each lane rounded once */\n"
        "__device__ __forceinline__ unsigned kf_bh2_fma(unsigned a, unsigned b, unsigned c) { unsigned r; asm(\"fma.rn.bf16x2 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(c)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_bh2_min(unsigned a, unsigned b) { unsigned r; asm(\"min.bf16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_bh2_max(unsigned a, unsigned b) { unsigned r; asm(\"max.bf16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_bh2_abs(unsigned a) { return a & 0x7FFF7FFFu; }\n",
    [KF_CU_H_BF16V_ARITH] =
        "/* bf16 pairs + - * (sm_90) */\n"
        "__device__ __forceinline__ unsigned kf_bh2_add(unsigned a, unsigned b) { unsigned r; asm(\"add.rn.bf16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_bh2_sub(unsigned a, unsigned b) { unsigned r; asm(\"sub.rn.bf16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_bh2_mul(unsigned a, unsigned b) { unsigned r; asm(\"mul.rn.bf16x2 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n",
    [KF_CU_H_BF16V_ARITH80] =
        "/* bf16 pairs + - * (sm_80..89 have no add/sub/mul.bf16x2: fma.rn.bf16x2 with 1, -1, -0 is exact but for its one rounding) */\n"
        "__device__ __forceinline__ unsigned kf_bh2_add(unsigned a, unsigned b) { unsigned r; asm(\"{ .reg .b32 k; mov.b32 k, 0x3F803F80; fma.rn.bf16x2 %0, %1, k, %2; }\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_bh2_sub(unsigned a, unsigned b) { unsigned r; asm(\"{ .reg .b32 k; mov.b32 k, 0xBF80BF80; fma.rn.bf16x2 %0, %2, k, %1; }\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "__device__ __forceinline__ unsigned kf_bh2_mul(unsigned a, unsigned b) { unsigned r; asm(\"{ .reg .b32 k; mov.b32 k, 0x80008000; fma.rn.bf16x2 %0, %1, %2, k; }\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n",
    [KF_CU_H_MMA] =
        "/* mma.sync: fragments as vectors, lane j = PTX's element j (aj, bj, cj, dj) */\n"
        "#define KF_MMA_F(name, ty) \\\n"
        "template <typename A, typename B, typename C> __device__ __forceinline__ C name(A a, B b, C c) \\\n"
        "{ \\\n"
        "    kf_words<A> x = kf_to_words(a); kf_words<B> y = kf_to_words(b); C d; \\\n"
        "    asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.\" ty \".\" ty \".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\" \\\n"
        "                 : \"=f\"(d.v[0]), \"=f\"(d.v[1]), \"=f\"(d.v[2]), \"=f\"(d.v[3]) \\\n"
        "                 : \"r\"(x.w[0]), \"r\"(x.w[1]), \"r\"(x.w[2]), \"r\"(x.w[3]), \"r\"(y.w[0]), \"r\"(y.w[1]), \\\n"
        "                   \"f\"(c.v[0]), \"f\"(c.v[1]), \"f\"(c.v[2]), \"f\"(c.v[3])); \\\n"
        "    return d; \\\n"
        "}\n"
        "#define KF_MMA_I(name, ta, tb) \\\n"
        "template <typename A, typename B, typename C> __device__ __forceinline__ C name(A a, B b, C c) \\\n"
        "{ \\\n"
        "    kf_words<A> x = kf_to_words(a); kf_words<B> y = kf_to_words(b); C d; \\\n"
        "    asm volatile(\"mma.sync.aligned.m16n8k32.row.col.s32.\" ta \".\" tb \".s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\" \\\n"
        "                 : \"=r\"(d.v[0]), \"=r\"(d.v[1]), \"=r\"(d.v[2]), \"=r\"(d.v[3]) \\\n"
        "                 : \"r\"(x.w[0]), \"r\"(x.w[1]), \"r\"(x.w[2]), \"r\"(x.w[3]), \"r\"(y.w[0]), \"r\"(y.w[1]), \\\n"
        "                   \"r\"(c.v[0]), \"r\"(c.v[1]), \"r\"(c.v[2]), \"r\"(c.v[3])); \\\n"
        "    return d; \\\n"
        "}\n"
        "KF_MMA_F(kf_mma_f16, \"f16\")\n"
        "KF_MMA_F(kf_mma_bf16, \"bf16\")\n"
        "KF_MMA_I(kf_mma_s8s8, \"s8\", \"s8\")\n"
        "KF_MMA_I(kf_mma_s8u8, \"s8\", \"u8\")\n"
        "KF_MMA_I(kf_mma_u8s8, \"u8\", \"s8\")\n"
        "KF_MMA_I(kf_mma_u8u8, \"u8\", \"u8\")\n",
    [KF_CU_H_LDSM] =
        "/* ldmatrix: lane t gives the address of row t % 8 of matrix t / 8 (p, in shared memory) */\n"
        "template <typename V> __device__ __forceinline__ V kf_ldsm_x1(const void* p) { kf_words<V> r; asm volatile(\"ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\" : \"=r\"(r.w[0]) : \"r\"((unsigned)__cvta_generic_to_shared(p)) : \"memory\"); return kf_from_words<V>(r); }\n"
        "template <typename V> __device__ __forceinline__ V kf_ldsm_x2(const void* p) { kf_words<V> r; asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\" : \"=r\"(r.w[0]), \"=r\"(r.w[1]) : \"r\"((unsigned)__cvta_generic_to_shared(p)) : \"memory\"); return kf_from_words<V>(r); }\n"
        "template <typename V> __device__ __forceinline__ V kf_ldsm_x4(const void* p) { kf_words<V> r; asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\" : \"=r\"(r.w[0]), \"=r\"(r.w[1]), \"=r\"(r.w[2]), \"=r\"(r.w[3]) : \"r\"((unsigned)__cvta_generic_to_shared(p)) : \"memory\"); return kf_from_words<V>(r); }\n"
        "template <typename V> __device__ __forceinline__ V kf_ldsm_x1_trans(const void* p) { kf_words<V> r; asm volatile(\"ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\" : \"=r\"(r.w[0]) : \"r\"((unsigned)__cvta_generic_to_shared(p)) : \"memory\"); return kf_from_words<V>(r); }\n"
        "template <typename V> __device__ __forceinline__ V kf_ldsm_x2_trans(const void* p) { kf_words<V> r; asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\" : \"=r\"(r.w[0]), \"=r\"(r.w[1]) : \"r\"((unsigned)__cvta_generic_to_shared(p)) : \"memory\"); return kf_from_words<V>(r); }\n"
        "template <typename V> __device__ __forceinline__ V kf_ldsm_x4_trans(const void* p) { kf_words<V> r; asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\" : \"=r\"(r.w[0]), \"=r\"(r.w[1]), \"=r\"(r.w[2]), \"=r\"(r.w[3]) : \"r\"((unsigned)__cvta_generic_to_shared(p)) : \"memory\"); return kf_from_words<V>(r); }\n",
    [KF_CU_H_CP_ASYNC] =
        "/* cp.async.cg: 16 bytes global -> shared (n bytes read, the rest zero-filled), in groups */\n"
        "__device__ __forceinline__ void kf_cp_async(void* s, const void* g) { asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: \"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(__cvta_generic_to_global(g)) : \"memory\"); }\n"
        "__device__ __forceinline__ void kf_cp_async_n(void* s, const void* g, unsigned n) { asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(__cvta_generic_to_global(g)), \"r\"(n) : \"memory\"); }\n"
        "__device__ __forceinline__ void kf_cp_async_commit() { asm volatile(\"cp.async.commit_group;\" ::: \"memory\"); }\n"
        "template <int N> __device__ __forceinline__ void kf_cp_async_wait() { asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(N) : \"memory\"); }\n",
    [KF_CU_H_PDL] =
        "/* Programmatic dependent launch (sm_90): a kernel launched as a dependent may\n"
        "   start before the previous one ends; it waits for that one's writes first.\n"
        "   Without the launch attribute the wait returns at once; before sm_90, nothing. */\n"
        "__device__ __forceinline__ void kf_pdl_wait() {\n"
        "#if __CUDA_ARCH__ >= 900\n"
        "    asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
        "#endif\n"
        "}\n",
    [KF_CU_H_PDL_TRIGGER] =
        "/* Lets the next dependent launch start once every block of this one has called it */\n"
        "__device__ __forceinline__ void kf_pdl_trigger() {\n"
        "#if __CUDA_ARCH__ >= 900\n"
        "    asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n"
        "#endif\n"
        "}\n",
    [KF_CU_H_PREFETCH] =
        "/* prefetch_l2: the 16-byte chunks inside bytes [off, off + n) of p into L2 (sm_90; a hint) */\n"
        "__device__ __forceinline__ void kf_prefetch_l2(const void* p, unsigned long long off, unsigned long long n) {\n"
        "#if __CUDA_ARCH__ >= 900\n"
        "    unsigned long long a = (unsigned long long)__cvta_generic_to_global(p) + off;\n"
        "    unsigned long long lo = (a + 15) & ~15ull, hi = (a + n) & ~15ull;\n"
        "    if (hi > lo) {\n"
        "        unsigned long long sz = hi - lo < 2147483632ull ? hi - lo : 2147483632ull;\n"
        "        asm volatile(\"cp.async.bulk.prefetch.L2.global [%0], %1;\" :: \"l\"(lo), \"r\"((unsigned)sz));\n"
        "    }\n"
        "#endif\n"
        "}\n",
    [KF_CU_H_ATOMIC_F16X2] =
        "__device__ __forceinline__ kf_f16x2 kf_atomic_add_f16x2(kf_f16x2* p, kf_f16x2 v)\n"
        "{\n"
        "    unsigned old;\n"
        "    asm volatile(\"atom.add.noftz.f16x2 %0, [%1], %2;\" : \"=r\"(old) : \"l\"(p), \"r\"(kf_pair_words(v).w[0]) : \"memory\");\n"
        "    return kf_bitcast<kf_f16x2>(old);\n"
        "}\n",
};

void kf_cu_need(kf_cu *c, kf_cu_helper h)
{
    if (c->needs & KF_CU_BIT(h)) return;
    c->needs |= KF_CU_BIT(h);
    for (unsigned d = 0; d < KF_CU_H_COUNT; d++)
        if (helper_deps[h] & KF_CU_BIT(d)) kf_cu_need(c, (kf_cu_helper)d);
    if (h == KF_CU_H_ATOMIC_F16X2) (void)kf_cu_type(c, kf_type_vector(KF_S_F16, 2));
}

static void write_vector_types(kf_cu *c, kf_buf *out)
{
    bool any = false;
    for (unsigned s = 1; s < KF_S_COUNT; s++)
        for (unsigned n = 2; n <= 16; n *= 2) {
            if (!c->vec_used[s][n]) continue;
            if (!any) kf_buf_puts(out, "/* vectors: 16-byte (size) aligned, lanes in v[] */\n");
            any = true;
            kf_type t = kf_type_vector((kf_scalar)s, n);
            kf_buf_printf(out, "struct __align__(%u) kf_%sx%u { %s v[%u]; };\n", kf_type_elem_bytes(t),
                          kf_scalar_names[s], n, kf_cu_type(c, kf_type_scalar((kf_scalar)s)), n);
        }
    if (any) kf_buf_puts(out, "\n");
}

void kf_cu_prelude(kf_cu *c, kf_buf *out)
{
    kf_buf_puts(out, "/* Generated by kforge " KF_VERSION ": CUDA-C for NVRTC, self-contained. */\n\n");
    for (unsigned h = 0; h < KF_CU_H_COUNT; h++) {
        if (h == KF_CU_H_TYPES) {
            write_vector_types(c, out);
            continue;
        }
        if (!(c->needs & KF_CU_BIT(h))) continue;
        kf_buf_puts(out, helper_text[h]);
        kf_buf_puts(out, "\n");
    }
}
