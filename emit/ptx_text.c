/* The PTX emitter's text and register helpers, below both the driver
 * (emit/ptx.c: the passes, in order) and instruction selection
 * (emit/ptx_ops.c, emit/ptx_math.c), which call only down into this file.
 *
 * Text: every body line goes through kf_ptx_ins / kf_ptx_label / kf_ptx_comment,
 * which write it into the kernel's body buffer (formatting the emitter's
 * few conversions by hand: they dominate its profile), precede the first
 * instruction of each source line with a comment holding that line (and
 * with -g a .loc), and record each line's .kf location for the line map.
 * Registers: values map to virtual registers one per lane, numbered per
 * class in order of first appearance; constants become immediates where
 * PTX takes one. The first pass writes no text (final_pass false) but
 * hands out the same registers, so both passes make the same decisions. */
#include "ptx_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- text output ----------------------------------------------------------- */

/* Appends n bytes of source text (file names, source lines) for a PTX
 * comment or string: ptxas rejects any non-ASCII byte, even in comments, and
 * a trailing backslash would continue the comment onto the next line, so
 * such bytes become '?'. */
void kf_ptx_put_ascii(kf_buf *b, const char *s, size_t n)
{
    if (!n) return;
    kf_buf_append(b, s, n);   /* reserves and copies; then fix the bytes in place */
    if (b->oom) return;
    char *o = b->data + b->len - n;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)o[i];
        if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"') o[i] = '?';
    }
}

static void hex_digits(char *out, uint64_t v, int digits)
{
    static const char hex[] = "0123456789ABCDEF";
    for (int i = digits - 1; i >= 0; i--, v >>= 4) out[i] = hex[v & 15];
    out[digits] = 0;
}

static void dec_digits(char *out, uint64_t u, bool neg)
{
    char num[24], *e = num + sizeof num, *q = e;
    do *--q = (char)('0' + u % 10); while ((u /= 10));
    if (neg) *--q = '-';
    memcpy(out, q, (size_t)(e - q));
    out[e - q] = 0;
}


static void push_loc(ptx_cx *cx, kf_loc loc)
{
    if (cx->locs.len < cx->locs.cap) cx->locs.data[cx->locs.len++] = loc;   /* reserved up front */
    else if (!KF_VEC_PUSH(&cx->locs, loc)) cx->failed = true;
}

/* Offsets of the module's source lines, so a comment finds its line in O(1). */
bool kf_ptx_index_lines(ptx_cx *cx, kf_arena *arena)
{
    const kf_module *m = cx->m;
    if (!m || !m->source) return true;
    const char *src = m->source, *end = src + m->source_len;
    uint32_t n = 1;
    for (const char *q = src; (q = memchr(q, '\n', (size_t)(end - q))); q++) n++;
    cx->line_start = kf_arena_calloc(arena, n + 2, sizeof *cx->line_start);
    if (!cx->line_start) return false;
    uint32_t l = 1;
    cx->line_start[1] = 0;
    for (const char *q = src; (q = memchr(q, '\n', (size_t)(end - q))); q++)
        cx->line_start[++l] = (uint32_t)(q - src + 1);
    cx->nlines = l;
    return true;
}

/* The source line `line`, trimmed, without its newline, or "". */
static void source_line(const ptx_cx *cx, uint32_t line, const char **s, int *n)
{
    *s = "";
    *n = 0;
    if (!cx->line_start || line == 0 || line > cx->nlines) return;
    const char *p = cx->m->source + cx->line_start[line], *end = cx->m->source + cx->m->source_len;
    if (line < cx->nlines) end = cx->m->source + cx->line_start[line + 1] - 1;   /* at its '\n' */
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    /* [p, end) holds no '\n' (end is the line's '\n' or the source's end) */
    size_t len = end > p ? (size_t)(end - p) : 0;
    const char *e = len ? memchr(p, '\r', len) : NULL;
    if (!e) e = p + len;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    *s = p;
    *n = (int)(e - p > 160 ? 160 : e - p);
}

/* Appends fmt with its arguments. The conversions the emitter's hot path
 * uses (%s %u %d %lld %llu %%) are expanded here into one line buffer and
 * appended once, several times faster than vsnprintf; a format with anything
 * else, or a line too long for the buffer, goes through kf_buf_vprintf. */
/* Formats fmt into line (cap bytes) for the conversions the emitter uses;
 * returns the length, or SIZE_MAX when fmt has another conversion or the
 * text does not fit (the caller then uses vprintf). */
static size_t fast_format(char *line, size_t cap, const char *fmt, va_list ap)
{
    char *o = line, *const lim = line + cap - 24;   /* room for one number after any check */
    for (const char *p = fmt; *p; p++) {
        if (o >= lim) return SIZE_MAX;
        if (*p != '%') {
            *o++ = *p;
            continue;
        }
        p++;
        bool ll = p[0] == 'l' && p[1] == 'l';
        if (ll) p += 2;
        if (*p == 's') {
            for (const char *a = va_arg(ap, const char *); *a;) {
                if (o >= lim) return SIZE_MAX;
                *o++ = *a++;
            }
            continue;
        }
        if (*p == '%') {
            *o++ = '%';
            continue;
        }
        if (*p != 'u' && *p != 'd') return SIZE_MAX;
        unsigned long long u;
        bool neg = false;
        if (*p == 'u') {
            u = ll ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
        } else {
            long long v = ll ? va_arg(ap, long long) : va_arg(ap, int);
            neg = v < 0;
            u = neg ? 0ull - (unsigned long long)v : (unsigned long long)v;
        }
        char num[24], *e = num + sizeof num, *q = e;
        do *--q = (char)('0' + u % 10); while ((u /= 10));
        if (neg) *--q = '-';
        while (q < e) *o++ = *q++;
    }
    return (size_t)(o - line);
}

/* Appends `pre`, fmt with its arguments, then `post`. The hot path formats
 * straight into the buffer's reserved tail (see fast_format); anything else
 * goes through kf_buf_vprintf. */
static void put_line(kf_buf *b, const char *pre, size_t lp, const char *fmt, va_list ap, const char *post,
                     size_t lq)
{
    enum { ROOM = 512 };
    va_list ap2;
    va_copy(ap2, ap);
    size_t n = SIZE_MAX;
    size_t need = b->len + ROOM + lp + lq + 1;
    if (!b->oom && (need <= b->cap || kf_vec_grow((void **)&b->data, &b->cap, need, 1))) {
        n = fast_format(b->data + b->len + lp, ROOM, fmt, ap);
        if (n != SIZE_MAX) {
            for (size_t i = 0; i < lp; i++) b->data[b->len + i] = pre[i];
            for (size_t i = 0; i < lq; i++) b->data[b->len + lp + n + i] = post[i];
            b->len += lp + n + lq;
            b->data[b->len] = 0;
        }
    } else {
        b->oom = true;
    }
    if (n == SIZE_MAX && !b->oom) {
        kf_buf_puts(b, pre);
        kf_buf_vprintf(b, fmt, ap2);
        kf_buf_puts(b, post);
    }
    va_end(ap2);
}

/* Before the first instruction of a new source line: a comment with the
 * source text, and with -g a .loc directive. */
static void line_info(ptx_cx *cx)
{
    kf_loc l = cx->cur;
    if (l.line == 0) return;
    if (l.line != cx->last_comment_line) {
        const char *s;
        int n;
        source_line(cx, l.line, &s, &n);
        const char *f = l.file ? l.file : (cx->m && cx->m->file ? cx->m->file : "?");
        if (f != cx->lf_file) {   /* the base name and its check, once per file */
            const char *base = strrchr(f, '/');
            cx->lf_file = f;
            cx->lf_base = base ? base + 1 : f;
            cx->lf_len = strlen(cx->lf_base);
            cx->lf_clean = true;
            for (size_t i = 0; i < cx->lf_len; i++) {
                unsigned char c = (unsigned char)cx->lf_base[i];
                if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"') cx->lf_clean = false;
            }
        }
        char num[16];
        dec_digits(num, l.line, false);
        kf_buf_append(&cx->body, "\t// ", 4);
        if (cx->lf_clean) kf_buf_append(&cx->body, cx->lf_base, cx->lf_len);
        else kf_ptx_put_ascii(&cx->body, cx->lf_base, cx->lf_len);
        kf_buf_append(&cx->body, ":", 1);
        kf_buf_puts(&cx->body, num);
        if (n) kf_buf_append(&cx->body, "  ", 2);
        kf_ptx_put_ascii(&cx->body, s, (size_t)n);
        kf_buf_append(&cx->body, "\n", 1);
        push_loc(cx, l);
        cx->last_comment_line = l.line;
    }
    if (cx->o->lineinfo && (l.line != cx->last_loc_line || l.col != cx->last_loc_col)) {
        char ln[16], col[16];
        dec_digits(ln, l.line, false);
        dec_digits(col, l.col, false);
        kf_buf_append(&cx->body, "\t.loc 1 ", 8);
        kf_buf_puts(&cx->body, ln);
        kf_buf_append(&cx->body, " ", 1);
        kf_buf_puts(&cx->body, col);
        kf_buf_append(&cx->body, "\n", 1);
        push_loc(cx, l);
        cx->last_loc_line = l.line;
        cx->last_loc_col = l.col;
    }
}

void kf_ptx_ins(ptx_cx *cx, const char *fmt, ...)
{
    if (!cx->final_pass) return;
    line_info(cx);
    va_list ap;
    va_start(ap, fmt);
    put_line(&cx->body, "\t", 1, fmt, ap, ";\n", 2);
    va_end(ap);
    push_loc(cx, cx->cur);
}

void kf_ptx_label(ptx_cx *cx, const char *fmt, ...)
{
    if (!cx->final_pass) return;
    va_list ap;
    va_start(ap, fmt);
    put_line(&cx->body, "", 0, fmt, ap, ":\n", 2);
    va_end(ap);
    push_loc(cx, cx->cur);
}

void kf_ptx_comment(ptx_cx *cx, const char *fmt, ...)
{
    if (!cx->final_pass) return;
    va_list ap;
    va_start(ap, fmt);
    kf_buf_puts(&cx->body, "\t// ");
    kf_buf_vprintf(&cx->body, fmt, ap);
    kf_buf_puts(&cx->body, "\n");
    va_end(ap);
    push_loc(cx, cx->cur);
}

void kf_ptx_error(ptx_cx *cx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kf_diag_vadd(cx->diags, KF_DIAG_ERROR, cx->cur, fmt, ap);
    va_end(ap);
    cx->failed = true;
}

/* ---- registers --------------------------------------------------------------- */

ptx_rclass kf_ptx_class_of(kf_type t)
{
    if (t.kind == KF_TK_BUFFER) return PTX_RC_RD;
    return (ptx_rclass)kf_ptx_scalars[t.scalar].rc;
}

static uint32_t lanes_of(kf_type t)
{
    return t.kind == KF_TK_VECTOR ? t.lanes : 1;
}

/* "%<prefix><n>" without snprintf (the hot path); empty in the first pass,
 * which writes no text. */
static void reg_name(preg *r, ptx_rclass rc, uint32_t n, bool text)
{
    static const struct { char s[4]; uint8_t len; } prefix[PTX_RC_COUNT] = {
#define X(e, p, d) {p, sizeof p - 1},
        PTX_RCLASSES(X)
#undef X
    };
    r->s[0] = 0;
    if (!text) return;
    memcpy(r->s, prefix[rc].s, 4);
    char *o = r->s + prefix[rc].len;
    if (n < 10) {
        o[0] = (char)('0' + n);
        o[1] = 0;
    } else if (n < 100) {
        o[0] = (char)('0' + n / 10);
        o[1] = (char)('0' + n % 10);
        o[2] = 0;
    } else if (n < 1000) {
        o[0] = (char)('0' + n / 100);
        o[1] = (char)('0' + n / 10 % 10);
        o[2] = (char)('0' + n % 10);
        o[3] = 0;
    } else {
        char num[12];
        int k = 0;
        do num[k++] = (char)('0' + n % 10); while ((n /= 10));
        while (k) *o++ = num[--k];
        *o = 0;
    }
}

preg kf_ptx_regn(const ptx_cx *cx, ptx_rclass rc, uint32_t n)
{
    preg r;
    reg_name(&r, rc, n, cx->final_pass);
    return r;
}

preg kf_ptx_reg(ptx_cx *cx, kf_val v, uint32_t lane)
{
    preg r;
    if (v == 0 || v >= cx->k->nvals) {
        kf_ptx_error(cx, "internal error: IR value %u does not exist (kernel has %u)", v, cx->k->nvals);
        snprintf(r.s, sizeof r.s, "%%r0");
        return r;
    }
    if (cx->alias[v]) v = cx->alias[v];
    const kf_ir_value *val = &cx->k->vals[v];
    ptx_rclass rc = kf_ptx_class_of(val->type);
    if (cx->needreg[v] == 2)   /* its CONST wrote no register: the first pass missed this use */
        kf_ptx_error(cx, "internal error: constant %%%u used as a register after its mov was dropped", v);
    cx->needreg[v] = 1;
    if (!cx->vreg[v]) {
        cx->vreg[v] = cx->nreg[rc] + 1;
        cx->nreg[rc] += lanes_of(val->type);
    }
    reg_name(&r, rc, cx->vreg[v] + lane, cx->final_pass);
    return r;
}

preg kf_ptx_opnd(ptx_cx *cx, kf_val v, uint32_t lane)
{
    uint64_t b;
    if (kf_ptx_const_of(cx, v, &b)) {
        kf_type t = cx->k->vals[v].type;
        if (t.kind != KF_TK_BUFFER && t.scalar != KF_S_BOOL && t.scalar != KF_S_F16 && t.scalar != KF_S_BF16)
            return cx->final_pass ? kf_ptx_imm((kf_scalar)t.scalar, b) : (preg){{0}};
    }
    return kf_ptx_reg(cx, v, lane);
}

preg kf_ptx_movsrc(ptx_cx *cx, kf_val v, uint32_t lane)
{
    uint64_t b;
    if (kf_ptx_const_of(cx, v, &b) && cx->k->vals[v].type.kind != KF_TK_BUFFER)
        return cx->final_pass ? kf_ptx_imm((kf_scalar)cx->k->vals[v].type.scalar, b) : (preg){{0}};
    return kf_ptx_reg(cx, v, lane);
}

preg kf_ptx_tmp(ptx_cx *cx, ptx_rclass rc)
{
    preg r;
    reg_name(&r, rc, ++cx->nreg[rc], cx->final_pass);
    return r;
}

preg kf_ptx_imm(kf_scalar s, uint64_t bits)
{
    preg r;
    switch (s) {
    case KF_S_F32: memcpy(r.s, "0f", 2), hex_digits(r.s + 2, bits & 0xffffffffu, 8); break;
    case KF_S_F64: memcpy(r.s, "0d", 2), hex_digits(r.s + 2, bits, 16); break;
    case KF_S_F16:
    case KF_S_BF16: memcpy(r.s, "0x", 2), hex_digits(r.s + 2, bits & 0xffff, 4); break;
    case KF_S_BOOL: dec_digits(r.s, bits & 1, false); break;
    case KF_S_I8:
    case KF_S_I16:
    case KF_S_I32:
    case KF_S_I64: {
        uint32_t w = 8u * kf_scalar_bytes[s];
        int64_t v = w == 64 ? (int64_t)bits : (int64_t)(bits << (64 - w)) >> (64 - w);
        dec_digits(r.s, v < 0 ? 0ull - (uint64_t)v : (uint64_t)v, v < 0);
        break;
    }
    case KF_S_U8: dec_digits(r.s, bits & 0xff, false); break;
    case KF_S_U16: dec_digits(r.s, bits & 0xffff, false); break;
    case KF_S_U32: dec_digits(r.s, bits & 0xffffffffu, false); break;
    default: dec_digits(r.s, bits, false); break;
    }
    return r;
}

bool kf_ptx_const_of(const ptx_cx *cx, kf_val v, uint64_t *bits)
{
    if (v >= cx->k->nvals || cx->def1[v] < 0) return false;   /* def1[0] and multi-def values are -1 */
    if (cx->k->ins[cx->def1[v]].op != KF_IR_CONST) return false;
    *bits = cx->k->ins[cx->def1[v]].imm;
    return true;
}

/* ---- branches ---------------------------------------------------------------- */

preg kf_ptx_if_pred(ptx_cx *cx, uint32_t at, bool want_true, const char **neg)
{
    const kf_ir_ins *in = &cx->k->ins[at];
    bool flip = cx->flip[at];
    kf_val c = flip ? cx->k->ins[at - 1].a[0] : in->a[0];
    *neg = want_true != flip ? "" : "!";
    return kf_ptx_reg(cx, c, 0);
}
