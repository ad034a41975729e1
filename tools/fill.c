/* Deterministic buffer generators (fill.h). The exact algorithm is part of
 * the golden cases' contract: changing it changes every expected output, so
 * the reference generator (tools/reference/) links this same file. */
#include "fill.h"

#include "../ir/module.h"
#include "../ir/numeric.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

uint64_t kf_fill_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned precision(kf_scalar s)
{
    switch (s) {
    case KF_S_F16: return 11;
    case KF_S_BF16: return 8;
    case KF_S_F32: return 24;
    default: return 53;
    }
}

static void store_bits(unsigned char *p, unsigned bytes, uint64_t bits)
{
    for (unsigned i = 0; i < bytes; i++) p[i] = (unsigned char)(bits >> (8 * i));
}

static uint64_t rand_bits(kf_scalar s, uint64_t r)
{
    char c = kf_scalar_class[s];
    if (c == 'b') return r >> 63;
    if (c != 'f') return r;
    unsigned p = precision(s);
    double v = ldexp((double)(r >> (64 - p)), 1 - (int)p) - 1.0;
    return kf_bits_from_double(s, v);
}

static uint64_t iota_bits(kf_scalar s, uint64_t j)
{
    if (s == KF_S_BOOL) return j & 1;
    return kf_bits_from_u64(s, j);
}

void kf_fill(void *dst, kf_type elem, size_t elems, const kf_fill_spec *spec)
{
    kf_scalar s = (kf_scalar)elem.scalar;
    unsigned bytes = kf_scalar_bytes[s];
    size_t n = elems * elem.lanes;
    unsigned char *p = dst;
    uint64_t state = spec->seed;
    if (spec->kind == KF_FILL_ZEROS) {
        memset(dst, 0, n * bytes);
        return;
    }
    for (size_t j = 0; j < n; j++) {
        uint64_t bits = spec->kind == KF_FILL_IOTA ? iota_bits(s, j) : rand_bits(s, kf_fill_splitmix64(&state));
        store_bits(p + j * bytes, bytes, bits);
    }
}

/* Reads one integer (kf_value_parse_u64's syntax) between blanks; advances *p. */
static bool read_u64(const char **p, uint64_t *out)
{
    while (**p == ' ') (*p)++;
    size_t n = strcspn(*p, " ,)");
    if (!kf_value_parse_u64(*p, n, out)) return false;
    *p += n;
    while (**p == ' ') (*p)++;
    return true;
}

bool kf_fill_parse(const char *text, kf_fill_spec *out, bool *is_gen, kf_error *err)
{
    static const struct { const char *name; kf_fill_kind kind; unsigned nargs; } gens[] = {
        {"zeros", KF_FILL_ZEROS, 1}, {"iota", KF_FILL_IOTA, 1}, {"rand", KF_FILL_RAND, 2},
    };
    *is_gen = false;
    memset(out, 0, sizeof *out);
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++) {
        size_t len = strlen(gens[g].name);
        if (strncmp(text, gens[g].name, len) != 0 || text[len] != '(') continue;
        *is_gen = true;
        const char *p = text + len + 1;
        uint64_t args[2] = {0, 0};
        bool ok = read_u64(&p, &args[0]);
        if (ok && gens[g].nargs == 2) ok = *p++ == ',' && read_u64(&p, &args[1]);
        ok = ok && *p == ')' && p[1] == 0;
        const char *form = gens[g].nargs == 2 ? "rand(N,SEED)" : gens[g].kind == KF_FILL_IOTA ? "iota(N)" : "zeros(N)";
        if (ok && args[0] == 0) {   /* well formed, but empty */
            kf_error_set(err, KF_ERR_USAGE, "bad generator '%s': a buffer of 0 elements; %s needs N > 0", text, form);
            return false;
        }
        if (!ok) {
            kf_error_set(err, KF_ERR_USAGE, "bad generator '%s': expected %s with N > 0 (numbers " KF_NUMBER_SYNTAX ")",
                         text, form);
            return false;
        }
        out->kind = gens[g].kind;
        out->count = args[0];
        out->seed = args[1];
        return true;
    }
    return false;
}
