/* Deterministic buffer generators shared by `kforge run` (NAME=zeros(N),
 * rand(N,SEED), iota(N)), the golden cases and the independent reference
 * generator (tools/reference/), so that all of them see identical inputs.
 *
 * rand(N, SEED): one splitmix64 stream seeded with SEED; each scalar lane in
 * memory order (element 0 lane 0, element 0 lane 1, ...) takes the next
 * 64-bit output r.
 *   - floats: uniform in [-1, 1) on the grid k * 2^(1-p) - 1 with
 *     k = r >> (64 - p) and p the type's precision (f16 11, bf16 8, f32 24,
 *     f64 53 bits), so every value is exact in the type (no rounding, and
 *     never 1.0); f16/bf16 bits via ir/numeric.h;
 *   - integers: the low bits of r (all bit patterns, signed and unsigned);
 *   - bool: r >> 63.
 * iota(N): scalar lane j (in memory order) holds the value j converted to
 * the type (integers wrap, floats round to nearest even, bool j & 1).
 * zeros(N): all bits zero. */
#ifndef KF_FILL_H
#define KF_FILL_H

#include "../ir/types.h"

typedef enum { KF_FILL_ZEROS, KF_FILL_IOTA, KF_FILL_RAND } kf_fill_kind;

/* A parsed generator expression: kind, element count N and seed. */
typedef struct {
    kf_fill_kind kind;
    uint64_t count;
    uint64_t seed;
} kf_fill_spec;

/* The next output of the splitmix64 generator whose state is *state. */
uint64_t kf_fill_splitmix64(uint64_t *state);

/* Parses "zeros(N)", "iota(N)" or "rand(N,SEED)" (spaces allowed, N > 0,
 * numbers as kf_value_parse_u64 reads them: no leading zero). Returns false if text is not a generator call at all
 * (*is_gen false) or is one with bad arguments (*is_gen true, err set). */
bool kf_fill_parse(const char *text, kf_fill_spec *out, bool *is_gen, kf_error *err);

/* Fills `elems` elements of type elem (scalar or vector) at dst, which
 * holds elems * kf_type_elem_bytes(elem) bytes. */
void kf_fill(void *dst, kf_type elem, size_t elems, const kf_fill_spec *spec);

#endif
