/* The PTX emitter's address and word helpers, below instruction selection
 * (emit/ptx_ops.c, emit/ptx_tensor.c) and above the text and register
 * helpers (emit/ptx_text.c): the global address of buf[i] (reused while
 * neither changes, ptx_cx.acache), the shared or local address of an array
 * element (arrays are named by their PTX symbol; a shared one is a 32-bit
 * address in the shared window), and packing narrow lanes into 32-bit words
 * and back (vector memory accesses, bitcasts, fragments). */
#include "ptx_internal.h"

#include <string.h>

/* "base" or "base+off" (snprintf-free: addresses are on the hot path). */
static ptx_addr addr_of(const char *base, int64_t off)
{
    ptx_addr a;
    size_t n = strlen(base);
    if (n > 40) n = 40;
    memcpy(a.s, base, n);
    if (off) {
        char num[24], *e = num + sizeof num, *q = e;
        unsigned long long u = off < 0 ? 0ull - (unsigned long long)off : (unsigned long long)off;
        do *--q = (char)('0' + u % 10); while ((u /= 10));
        if (off < 0) *--q = '-';
        a.s[n++] = '+';
        memcpy(a.s + n, q, (size_t)(e - q));
        n += (size_t)(e - q);
    }
    a.s[n] = 0;
    return a;
}

void kf_ptx_unpack_word(ptx_cx *cx, const char *w, kf_val v, uint32_t first, uint32_t n, kf_scalar s)
{
    if (kf_scalar_bytes[s] == 2) {
        if (n == 2) kf_ptx_ins(cx, "mov.b32 {%s, %s}, %s", kf_ptx_reg(cx, v, first).s, kf_ptx_reg(cx, v, first + 1).s, w);
        else kf_ptx_low_bits(cx, kf_ptx_reg(cx, v, first).s, w, 16);
        return;
    }
    for (uint32_t j = 0; j < n; j++) {
        preg t = kf_ptx_tmp(cx, PTX_RC_R);
        kf_ptx_ins(cx, "bfe.%s32 %s, %s, %u, 8", (kf_scalar_class[s] == 'i') ? "s" : "u", t.s, w, 8 * j);
        kf_ptx_ins(cx, "cvt.%s16.%s32 %s, %s", (kf_scalar_class[s] == 'i') ? "s" : "u", (kf_scalar_class[s] == 'i') ? "s" : "u",
                kf_ptx_reg(cx, v, first + j).s, t.s);
    }
}

void kf_ptx_pack_word(ptx_cx *cx, const char *w, kf_val v, uint32_t first, uint32_t n, kf_scalar s)
{
    if (kf_scalar_bytes[s] == 2) {
        /* lanes unpacked from one word (ptx_cx.wreg): that word, not a repack
           (ptxas copies repacked ldmatrix words around the mma operands) */
        if (n == 2 && first % 2 == 0 && v < cx->k->nvals && cx->wreg[v])
            kf_ptx_ins(cx, "mov.b32 %s, %s", w, kf_ptx_regn(cx, PTX_RC_R, cx->wreg[v] + first / 2).s);
        else if (n == 2) kf_ptx_ins(cx, "mov.b32 %s, {%s, %s}", w, kf_ptx_reg(cx, v, first).s, kf_ptx_reg(cx, v, first + 1).s);
        else kf_ptx_ins(cx, "cvt.u32.u16 %s, %s", w, kf_ptx_reg(cx, v, first).s);
        return;
    }
    kf_ptx_ins(cx, "cvt.u32.u8 %s, %s", w, kf_ptx_reg(cx, v, first).s);
    for (uint32_t j = 1; j < n; j++) {
        preg t = kf_ptx_tmp(cx, PTX_RC_R);
        kf_ptx_ins(cx, "cvt.u32.u8 %s, %s", t.s, kf_ptx_reg(cx, v, first + j).s);
        kf_ptx_ins(cx, "bfi.b32 %s, %s, %s, %u, 8", w, t.s, w, 8 * j);
    }
}

/* The index value as a 32-bit register (u32 or s32 by signedness). */
static preg index32(ptx_cx *cx, kf_val idx)
{
    kf_scalar s = (kf_scalar)cx->k->vals[idx].type.scalar;
    if (kf_scalar_bytes[s] == 4) return kf_ptx_reg(cx, idx, 0);
    preg t = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "cvt.%s32.%s %s, %s", (kf_scalar_class[s] == 'i') ? "s" : "u", kf_ptx_scalars[s].mem, t.s, kf_ptx_reg(cx, idx, 0).s);
    return t;
}

static bool const_offset(const ptx_cx *cx, kf_val idx, uint32_t bytes, int64_t *off)
{
    uint64_t b;
    if (!kf_ptx_const_of(cx, idx, &b)) return false;
    kf_scalar s = (kf_scalar)cx->k->vals[idx].type.scalar;
    int64_t i = (int64_t)b;
    if (kf_scalar_bytes[s] < 8) {
        uint32_t bits = 8u * kf_scalar_bytes[s];
        uint64_t m = (1ull << bits) - 1;
        i = (kf_scalar_class[s] == 'i') && (b >> (bits - 1)) & 1 ? (int64_t)(b | ~m) : (int64_t)(b & m);
    }
    if (i > INT32_MAX / 16 || i < INT32_MIN / 16) return false;
    *off = i * (int64_t)bytes;
    return true;
}

/* Address of buf[idx] (global space, 64-bit) for elements of `bytes`. */
ptx_addr kf_ptx_buf_addr(ptx_cx *cx, kf_val buf, kf_val idx, uint32_t bytes)
{
    int64_t off;
    preg base = kf_ptx_reg(cx, buf, 0);
    if (const_offset(cx, idx, bytes, &off)) {
        return addr_of(base.s, off);
    }
    for (uint32_t i = 0; i < cx->nacache; i++)
        if (cx->acache[i].buf == buf && cx->acache[i].idx == idx && cx->acache[i].bytes == bytes) {
            return addr_of(cx->acache[i].addr.s, 0);
        }
    kf_scalar s = (kf_scalar)cx->k->vals[idx].type.scalar;
    preg t = kf_ptx_tmp(cx, PTX_RC_RD);
    if (cx->nacache < sizeof cx->acache / sizeof cx->acache[0])
        cx->acache[cx->nacache++] = (ptx_addr_entry){buf, idx, bytes, t};
    if (kf_scalar_bytes[s] == 8) {
        kf_ptx_ins(cx, "mad.lo.s64 %s, %s, %u, %s", t.s, kf_ptx_reg(cx, idx, 0).s, bytes, base.s);
    } else {
        preg i = index32(cx, idx);
        kf_ptx_ins(cx, "mad.wide.%s32 %s, %s, %u, %s", (kf_scalar_class[s] == 'i') ? "s" : "u", t.s, i.s, bytes, base.s);
    }
    return addr_of(t.s, 0);
}

/* Address of element idx of arrays[ai] accessed as `elem` (a view of a
 * shared array: its own element type), shared or local space (32-bit). */
ptx_addr kf_ptx_arr_addr(ptx_cx *cx, uint32_t ai, kf_val idx, kf_type elem)
{
    int64_t off;
    uint32_t bytes = kf_type_elem_bytes(elem);
    const char *name = cx->aname[ai];
    if (const_offset(cx, idx, bytes, &off)) {
        return addr_of(name, off);
    }
    kf_scalar s = (kf_scalar)cx->k->vals[idx].type.scalar;
    preg i;
    if (kf_scalar_bytes[s] == 8) {
        i = kf_ptx_tmp(cx, PTX_RC_R);
        kf_ptx_ins(cx, "cvt.u32.u64 %s, %s", i.s, kf_ptx_reg(cx, idx, 0).s);
    } else {
        i = index32(cx, idx);
    }
    preg b = kf_ptx_tmp(cx, PTX_RC_R), t = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "mov.u32 %s, %s", b.s, name);
    kf_ptx_ins(cx, "mad.lo.s32 %s, %s, %u, %s", t.s, i.s, bytes, b.s);
    return addr_of(t.s, 0);
}
