/* The interpreter's tensor-core and async-copy operations (LANGUAGE.md
 * section 8), with the PTX ISA as the reference.
 *
 * mma and ldmatrix complete for a whole warp at once (interp.c calls
 * kf_interp_tensor_warp when all 32 lanes wait at one): the lanes'
 * fragments are gathered into whole matrices with PTX's layout, multiplied,
 * and scattered back, so a kernel that indexes fragments wrongly computes
 * the same wrong answer as the GPU. The layouts ("Matrix Fragments for
 * mma.m16n8k16 with floating point type", "... for mma.m16n8k32"), with
 * g = lane / 4, q = lane % 4 and E the elements one 32-bit register holds
 * (2 of f16/bf16, 4 of i8/u8), K = 8 * E:
 *   A (16 x K, row):  element j in register r = j / E:
 *                     row g + 8 * (r % 2), col q * E + j % E + (K / 2) * (r / 2)
 *   B (K x 8, col):   row q * E + j % E + (K / 2) * r, col g
 *   C, D (16 x 8):    row g + 8 * (j / 2), col 2 * q + j % 2
 * f32 results are the products summed in double in k order, C added last,
 * rounded once to f32 (the hardware's order is its own; back ends agree
 * within (K + 2) * 2^-23 * (sum |a*b| + |c|)). Integer results wrap.
 *
 * ldmatrix: lane 8m + r gives the element index where row r of matrix m
 * starts (8 elements of 16 bits, 16-byte aligned); lane t receives from
 * each matrix m the pair at row t / 4, columns 2 * (t % 4) + {0, 1} (with
 * _trans: rows 2 * (t % 4) + {0, 1} of column t / 4), as lanes 2m, 2m + 1
 * of its result. Each row is read as the lane that gives its address.
 *
 * cp_async: the bytes are read when issued and kept in the thread's list
 * with its group (the commit count then); the 16 destination bytes are
 * checked as a write and marked pending (kf_ishmeta.pend) until the
 * thread's cp_async_wait(N) completes the copy (every group but the N
 * newest committed ones): then they land, written by that thread then. */
#include <stdio.h>
#include <string.h>

#include "interp_impl.h"
#include "numeric.h"

/* ---- mma ------------------------------------------------------------------- */

typedef struct {
    bool fl;              /* f16/bf16 (m16n8k16), else i8/u8 (m16n8k32) */
    unsigned e, k;        /* elements per 32-bit register, K */
} mma_shape;

static void frag_a(mma_shape s, unsigned t, unsigned j, unsigned *row, unsigned *col)
{
    unsigned r = j / s.e;
    *row = t / 4 + 8 * (r % 2);
    *col = (t % 4) * s.e + j % s.e + (s.k / 2) * (r / 2);
}

static void frag_b(mma_shape s, unsigned t, unsigned j, unsigned *row, unsigned *col)
{
    *row = (t % 4) * s.e + j % s.e + (s.k / 2) * (j / s.e);
    *col = t / 4;
}

static void frag_c(unsigned t, unsigned j, unsigned *row, unsigned *col)
{
    *row = t / 4 + 8 * (j / 2);
    *col = 2 * (t % 4) + j % 2;
}

/* Lane j of v (scalar s) as a double: f16/bf16 values, i8/u8 integers. */
static double elem(const kf_islot *v, kf_scalar s, unsigned j)
{
    switch (s) {
    case KF_S_F16: return kf_f16_to_double(v->u16[j]);
    case KF_S_BF16: return kf_bf16_to_double(v->u16[j]);
    case KF_S_I8: return (int8_t)v->u8[j];
    default: return v->u8[j];
    }
}

static void warp_mma(const kf_ictx *c, kf_ithread *w, const kf_idins *d)
{
    const kf_ir_kernel *k = c->k;
    kf_scalar as = (kf_scalar)k->vals[d->a[0]].type.scalar, bs = (kf_scalar)k->vals[d->a[1]].type.scalar;
    mma_shape s = {as == KF_S_F16 || as == KF_S_BF16, 0, 0};
    s.e = s.fl ? 2 : 4, s.k = 8 * s.e;
    double A[16][32], B[32][8], C[16][8];
    unsigned row, col;
    for (unsigned t = 0; t < 32; t++) {
        for (unsigned j = 0; j < 2 * s.e * 2; j++) frag_a(s, t, j, &row, &col), A[row][col] = elem(&w[t].R[d->a[0]], as, j);
        for (unsigned j = 0; j < 2 * s.e; j++) frag_b(s, t, j, &row, &col), B[row][col] = elem(&w[t].R[d->a[1]], bs, j);
        for (unsigned j = 0; j < 4; j++) {   /* (not one ?: expression: it would make the i32 a float) */
            frag_c(t, j, &row, &col);
            if (s.fl) C[row][col] = w[t].R[d->a[2]].f32[j];
            else C[row][col] = w[t].R[d->a[2]].i32[j];
        }
    }
    for (unsigned t = 0; t < 32; t++) {
        kf_islot r = {{0, 0}};
        for (unsigned j = 0; j < 4; j++) {
            frag_c(t, j, &row, &col);
            if (s.fl) {
                double sum = 0;
                for (unsigned x = 0; x < s.k; x++) sum += A[row][x] * B[x][col];
                r.f32[j] = (float)(sum + C[row][col]);
            } else {
                int64_t sum = 0;
                for (unsigned x = 0; x < s.k; x++) sum += (int64_t)A[row][x] * (int64_t)B[x][col];
                r.u32[j] = (uint32_t)((uint64_t)sum + (uint32_t)(int32_t)C[row][col]);
            }
        }
        w[t].R[d->dst] = r;
    }
}

/* ---- ldmatrix ----------------------------------------------------------------- */

/* This lane's row index (any integer type), or -1 when negative. */
static int64_t lane_index(const kf_ictx *c, const kf_ithread *t, kf_val v)
{
    kf_scalar s = (kf_scalar)c->k->vals[v].type.scalar;
    uint64_t bits = kf_iop_lane(&t->R[v], kf_scalar_bytes[s], 0);
    int64_t x = kf_bits_to_i64(s, bits);
    if (kf_scalar_class[s] == 'u' && kf_scalar_bytes[s] == 8 && bits > INT64_MAX) return INT64_MAX;
    return x < 0 ? -1 : x;
}

/* Row r of matrix m, read by the lane that gave its address, into row[8]. */
static kf_status ldsm_row(kf_ictx *c, kf_ithread *t, const kf_idins *d, uint16_t row[8])
{
    const kf_iarray *ar = &c->arrays[d->target];
    const char *nm = c->k->arrays[d->target].name;
    const char *bi = kf_builtin_names[d->sub];
    int64_t idx = lane_index(c, t, d->a[0]);
    unsigned lane = t->lin % 32;
    if (idx < 0 || (uint64_t)idx > (ar->bytes >> 1) || (uint64_t)idx * 2 + 16 > ar->bytes)
        return kf_interp_fault(c, t, d->src, "out-of-bounds '%s' row of shared %s: lane %u gives element %lld, the row "
                               "needs 8 elements from there (length %u)", bi, nm, lane, (long long)idx, ar->bytes >> 1);
    uint64_t byte = (uint64_t)idx * 2;
    if (byte % 16)
        return kf_interp_fault(c, t, d->src, "misaligned '%s' row: lane %u gives element %lld of shared %s, byte %llu, "
                               "not a multiple of 16 (a row is 8 elements from a 16-byte boundary)", bi, lane,
                               (long long)idx, nm, (unsigned long long)byte);
    kf_status st = kf_interp_shared_units(c, t, d, (uint64_t)idx, ar->woff + (uint32_t)(byte >> ar->ushift),
                                          16u >> ar->ushift, false);
    if (st) return st;
    memcpy(row, c->shared + ar->off + byte, 16);
    return KF_OK;
}

static kf_status warp_ldsm(kf_ictx *c, kf_ithread *w, const kf_idins *d)
{
    bool trans;
    unsigned mats = kf_builtin_ldmatrix((kf_builtin)d->sub, &trans);
    uint16_t M[4][8][8];
    for (unsigned m = 0; m < mats; m++)
        for (unsigned r = 0; r < 8; r++) {
            kf_status st = ldsm_row(c, &w[8 * m + r], d, M[m][r]);
            if (st) return st;
        }
    for (unsigned t = 0; t < 32; t++) {
        kf_islot v = {{0, 0}};
        unsigned a = t / 4, b = 2 * (t % 4);
        for (unsigned m = 0; m < mats; m++) {
            v.u16[2 * m] = trans ? M[m][b][a] : M[m][a][b];
            v.u16[2 * m + 1] = trans ? M[m][b + 1][a] : M[m][a][b + 1];
        }
        w[t].R[d->dst] = v;
    }
    return KF_OK;
}

kf_status kf_interp_tensor_warp(kf_ictx *c, kf_ithread *w)
{
    const kf_idins *d = &c->code[w[0].pc];
    if (d->h == IH_MMA) {
        warp_mma(c, w, d);
    } else {
        kf_status st = warp_ldsm(c, w, d);
        if (st) return st;
    }
    for (unsigned t = 0; t < 32; t++) w[t].pc++, w[t].state = KF_TS_RUN;
    return KF_OK;
}

/* ---- cp_async ---------------------------------------------------------------- */

/* The source of cp_async: n bytes at element j of the buffer into data[16]
 * (zero-filled); alignment and the bytes read are checked. */
static kf_status copy_source(kf_ictx *c, kf_ithread *t, const kf_idins *d, uint32_t n, uint8_t data[16])
{
    const kf_islot *b = &t->R[d->a[1]];
    const char *nm = c->bufparam[d->a[1]] ? c->bufparam[d->a[1]]->name : "buffer";
    int64_t j = lane_index(c, t, d->a[2]);
    if (n > 16) return kf_interp_fault(c, t, d->src, "cp_async reads %u bytes: at most 16 (0 to 16)", n);
    if (j < 0 || j > (INT64_C(1) << 40))
        return kf_interp_fault(c, t, d->src, "out-of-bounds cp_async from %s[%lld] (length %llu)", nm, (long long)j,
                               (unsigned long long)(b->u64[1] >> d->eshift));
    uint64_t off = (uint64_t)j << d->eshift;
    if (off % 16)
        return kf_interp_fault(c, t, d->src, "misaligned cp_async source %s[%lld]: byte %llu is not a multiple of 16 "
                               "(both addresses must be 16-byte aligned)", nm, (long long)j, (unsigned long long)off);
    if (n && off + n > b->u64[1])
        return kf_interp_fault(c, t, d->src, "out-of-bounds cp_async from %s[%lld]: %u bytes read up to byte %llu of %llu",
                               nm, (long long)j, n, (unsigned long long)(off + n), (unsigned long long)b->u64[1]);
    memset(data, 0, 16);
    if (n) memcpy(data, (const uint8_t *)(uintptr_t)b->u64[0] + off, n);
    return KF_OK;
}

static kf_status issue_copy(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    const kf_iarray *ar = &c->arrays[d->target];
    const char *nm = c->k->arrays[d->target].name;
    kf_icopy cp = {.group = t->groups, .ins = d->src, .arr = d->target};
    uint32_t n = d->sub == KF_BI_CP_ASYNC_N ? t->R[d->a[3]].u32[0] : 16;
    kf_status st = copy_source(c, t, d, n, cp.data);
    if (st) return st;
    int64_t i = lane_index(c, t, d->a[0]);
    if (i < 0 || (uint64_t)i > ar->bytes || ((uint64_t)i << d->eshift) + 16 > ar->bytes)
        return kf_interp_fault(c, t, d->src, "out-of-bounds cp_async into shared %s[%lld]: 16 bytes from there, the "
                               "array has %u", nm, (long long)i, ar->bytes);
    uint64_t off = (uint64_t)i << d->eshift;
    if (off % 16)
        return kf_interp_fault(c, t, d->src, "misaligned cp_async destination shared %s[%lld]: byte %llu is not a "
                               "multiple of 16 (both addresses must be 16-byte aligned)", nm, (long long)i,
                               (unsigned long long)off);
    cp.off = ar->off + (uint32_t)off, cp.unit = ar->woff + (uint32_t)(off >> ar->ushift), cp.idx = (uint32_t)i;
    uint32_t units = 16u >> ar->ushift;
    st = kf_interp_shared_units(c, t, d, (uint64_t)i, cp.unit, units, true);
    if (st) return st;
    for (uint32_t u = 0; u < units; u++) c->shmeta[cp.unit + u].pend = (uint16_t)(t->lin + 1);
    if (!KF_VEC_PUSH(&t->copies, cp))
        return kf_error_set(c->err, KF_ERR_NOMEM, "kernel %s: out of memory for the interpreter", c->k->name);
    return KF_OK;
}

/* The copy lands: its bytes are written by t now. */
static void land(kf_ictx *c, kf_ithread *t, const kf_icopy *cp)
{
    memcpy(c->shared + cp->off, cp->data, 16);
    uint32_t units = 16u >> c->arrays[cp->arr].ushift, ops = c->warpops[t->lin / 32];
    for (uint32_t u = 0; u < units; u++) {
        kf_ishmeta *m = &c->shmeta[cp->unit + u];
        m->pend = 0, m->wepoch = c->epoch, m->wops = ops, m->wins = cp->ins, m->writer = (uint16_t)t->lin;
        m->landed = true;
    }
}

/* cp_async_wait(N): every copy of a committed group but the N newest. */
static void wait_groups(kf_ictx *c, kf_ithread *t, uint32_t keep)
{
    size_t n = 0;
    for (size_t i = 0; i < t->copies.len; i++) {
        kf_icopy *cp = &t->copies.data[i];
        if ((uint64_t)cp->group + keep < t->groups) land(c, t, cp);
        else t->copies.data[n++] = *cp;
    }
    t->copies.len = n;
}

kf_status kf_interp_async(kf_ictx *c, kf_ithread *t, const kf_idins *d)
{
    switch (d->h) {
    case IH_CPASYNC: return issue_copy(c, t, d);
    case IH_CPCOMMIT: t->groups++; return KF_OK;
    default: wait_groups(c, t, d->target); return KF_OK;
    }
}

kf_status kf_interp_async_end(kf_ictx *c, kf_ithread *t)
{
    if (!t->copies.len) return KF_OK;
    const kf_icopy *cp = &t->copies.data[0];
    bool open = cp->group == t->groups;
    return kf_interp_fault(c, t, cp->ins, "the thread ends with %zu cp_async cop%s pending (the first issued here, into "
                           "shared %s[%u]%s): cp_async_commit() then cp_async_wait(0) before the end",
                           t->copies.len, t->copies.len == 1 ? "y" : "ies", c->k->arrays[cp->arr].name, cp->idx,
                           open ? ", never committed" : "");
}
