/* PTX emitter: core IR -> PTX text that the driver loads directly (no NVRTC,
 * no LLVM). This file holds the module and entry framing: the `.version` /
 * `.target` header, one `.visible .entry` per kernel with its parameters (the
 * launch ABI: buffers as 64-bit global addresses, scalars by value in their
 * natural size, vectors as aligned byte arrays), `.maxntid` from the
 * schedule, `.reg` declarations per register class, `.shared`/`.local`
 * arrays, line info (`.file`/`.loc` with -g) and the line map. Instruction
 * selection is in emit/ptx_ops.c, float math sequences in emit/ptx_math.c,
 * opcode spelling in emit/ptx_tables.c.
 *
 * Values map to virtual registers one per lane (%r, %rd, %f, %fd, %h, %rs,
 * %p), numbered in order of first appearance; ptxas does the register
 * allocation. For the reader the text carries a comment with the source line
 * before each statement's instructions, the source name where a let/var/
 * parameter is first written, and stays close to the IR with a few local
 * rewrites that never change a result:
 *   - constants appear as immediates wherever PTX takes one; a CONST whose
 *     every use is an immediate writes no register (a first pass over the
 *     instructions that read constants finds which ones need one);
 *   - `t = op ...; v = mov t` writes v directly when t has no other use;
 *   - `c = not x; if c` branches on x with the sense flipped; `if c break`
 *     is one predicated branch;
 *   - a global address computed for buf[i] is reused until buf or i change
 *     or control flow joins.
 * Output is a pure function of the IR and options (byte-identical). */
#include "ptx_internal.h"

#include <stdio.h>
#include <string.h>

#define PTX_VERSION "8.0"
#define PTX_REG_ARRAY_MAX 128  /* local arrays up to this many registers may live in registers */

/* ---- text output ----------------------------------------------------------- */

/* Appends n bytes of source text (file names, source lines) for a PTX
 * comment or string: ptxas rejects any non-ASCII byte, even in comments, and
 * a trailing backslash would continue the comment onto the next line, so
 * such bytes become '?'. */
static void put_ascii(kf_buf *b, const char *s, size_t n)
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
static bool index_lines(ptx_cx *cx, kf_arena *arena)
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
        else put_ascii(&cx->body, cx->lf_base, cx->lf_len);
        kf_buf_append(&cx->body, ":", 1);
        kf_buf_puts(&cx->body, num);
        if (n) kf_buf_append(&cx->body, "  ", 2);
        put_ascii(&cx->body, s, (size_t)n);
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

void ptx_ins(ptx_cx *cx, const char *fmt, ...)
{
    if (!cx->final_pass) return;
    line_info(cx);
    va_list ap;
    va_start(ap, fmt);
    put_line(&cx->body, "\t", 1, fmt, ap, ";\n", 2);
    va_end(ap);
    push_loc(cx, cx->cur);
}

void ptx_label(ptx_cx *cx, const char *fmt, ...)
{
    if (!cx->final_pass) return;
    va_list ap;
    va_start(ap, fmt);
    put_line(&cx->body, "", 0, fmt, ap, ":\n", 2);
    va_end(ap);
    push_loc(cx, cx->cur);
}

void ptx_comment(ptx_cx *cx, const char *fmt, ...)
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

void ptx_error(ptx_cx *cx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kf_diag_vadd(cx->diags, KF_DIAG_ERROR, cx->cur, fmt, ap);
    va_end(ap);
    cx->failed = true;
}

/* ---- registers --------------------------------------------------------------- */

ptx_rclass ptx_class_of(kf_type t)
{
    if (t.kind == KF_TK_BUFFER) return PTX_RC_RD;
    return (ptx_rclass)ptx_scalars[t.scalar].rc;
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

preg ptx_regn(const ptx_cx *cx, ptx_rclass rc, uint32_t n)
{
    preg r;
    reg_name(&r, rc, n, cx->final_pass);
    return r;
}

preg ptx_reg(ptx_cx *cx, kf_val v, uint32_t lane)
{
    preg r;
    if (v == 0 || v >= cx->k->nvals) {
        ptx_error(cx, "internal error: IR value %u does not exist (kernel has %u)", v, cx->k->nvals);
        snprintf(r.s, sizeof r.s, "%%r0");
        return r;
    }
    if (cx->alias[v]) v = cx->alias[v];
    const kf_ir_value *val = &cx->k->vals[v];
    ptx_rclass rc = ptx_class_of(val->type);
    if (cx->needreg[v] == 2)   /* its CONST wrote no register: the first pass missed this use */
        ptx_error(cx, "internal error: constant %%%u used as a register after its mov was dropped", v);
    cx->needreg[v] = 1;
    if (!cx->vreg[v]) {
        cx->vreg[v] = cx->nreg[rc] + 1;
        cx->nreg[rc] += lanes_of(val->type);
    }
    reg_name(&r, rc, cx->vreg[v] + lane, cx->final_pass);
    return r;
}

preg ptx_opnd(ptx_cx *cx, kf_val v, uint32_t lane)
{
    uint64_t b;
    if (ptx_const_of(cx, v, &b)) {
        kf_type t = cx->k->vals[v].type;
        if (t.kind != KF_TK_BUFFER && t.scalar != KF_S_BOOL && t.scalar != KF_S_F16 && t.scalar != KF_S_BF16)
            return cx->final_pass ? ptx_imm((kf_scalar)t.scalar, b) : (preg){{0}};
    }
    return ptx_reg(cx, v, lane);
}

preg ptx_movsrc(ptx_cx *cx, kf_val v, uint32_t lane)
{
    uint64_t b;
    if (ptx_const_of(cx, v, &b) && cx->k->vals[v].type.kind != KF_TK_BUFFER)
        return cx->final_pass ? ptx_imm((kf_scalar)cx->k->vals[v].type.scalar, b) : (preg){{0}};
    return ptx_reg(cx, v, lane);
}

preg ptx_tmp(ptx_cx *cx, ptx_rclass rc)
{
    preg r;
    reg_name(&r, rc, ++cx->nreg[rc], cx->final_pass);
    return r;
}

preg ptx_imm(kf_scalar s, uint64_t bits)
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

bool ptx_const_of(const ptx_cx *cx, kf_val v, uint64_t *bits)
{
    if (v >= cx->k->nvals || cx->cdef[v] < 0) return false;   /* cdef[0] and multi-def values are -1 */
    *bits = cx->k->ins[cx->cdef[v]].imm;
    return true;
}

/* ---- per-kernel analysis ------------------------------------------------------ */

static bool reads(const kf_ir_ins *in, kf_val v)
{
    for (uint32_t j = 0; j < 4; j++)
        if (j < kf_ir_op_nargs[in->op] && in->a[j] == v) return true;
    return false;
}

/* An op that writes each destination lane with one instruction after
 * reading that lane's sources only (so its destination may be a source). */
static bool lanewise_single(const kf_ir_ins *in)
{
    if (in->op != KF_IR_BINOP || in->type.kind == KF_TK_BUFFER) return false;
    kf_scalar s = (kf_scalar)in->type.scalar;
    bool ints = kf_scalar_class[s] == 'i' || kf_scalar_class[s] == 'u';
    bool op_ok = in->sub == KF_OP_ADD || in->sub == KF_OP_SUB || in->sub == KF_OP_MUL ||
                 (ints && (in->sub == KF_OP_AND || in->sub == KF_OP_OR || in->sub == KF_OP_XOR));
    return op_ok && ((ints && kf_scalar_bytes[s] >= 2) || s == KF_S_F32 || s == KF_S_F64);
}

/* `t = op ...; v = mov t` where t is used nowhere else and op does not
 * read v (or reads it lane by lane before writing): op writes v's
 * registers directly and the MOV disappears (`i = i + 1` is one add). */
static void forward_moves(ptx_cx *cx, const uint32_t *nuses)
{
    const kf_ir_kernel *k = cx->k;
    for (uint32_t i = 0; i + 1 < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i], *mv = &k->ins[i + 1];
        kf_val t = in->dst, v = mv->dst;
        if (!t || t >= k->nvals || in->op >= KF_IR_OP_COUNT || in->op == KF_IR_CONST || mv->op != KF_IR_MOV ||
            mv->a[0] != t || !v || v >= k->nvals || v == t || cx->ndefs[t] != 1 || nuses[t] != 1 ||
            cx->alias[v] || !kf_type_eq(k->vals[t].type, k->vals[v].type) || (reads(in, v) && !lanewise_single(in)))
            continue;
        cx->alias[t] = v;
        cx->skip[i + 1] = 1;
        i++;
    }
}

/* `c = not x; IF c` branches on x with the sense flipped (`@x bra` for
 * `@!c bra`) when c is used nowhere else: the NOT disappears. */
static void fold_not_into_branches(ptx_cx *cx, const uint32_t *nuses)
{
    const kf_ir_kernel *k = cx->k;
    for (uint32_t i = 1; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i], *n = &k->ins[i - 1];
        kf_val c = in->a[0];
        if (in->op != KF_IR_IF || n->op != KF_IR_UNOP || n->sub != KF_OP_NOT || n->dst != c || !c ||
            c >= k->nvals || cx->ndefs[c] != 1 || nuses[c] != 1 || cx->skip[i - 1] || !n->a[0])
            continue;
        cx->skip[i - 1] = 1;
        cx->flip[i] = 1;
    }
}

preg ptx_if_pred(ptx_cx *cx, uint32_t at, bool want_true, const char **neg)
{
    const kf_ir_ins *in = &cx->k->ins[at];
    bool flip = cx->flip[at];
    kf_val c = flip ? cx->k->ins[at - 1].a[0] : in->a[0];
    *neg = want_true != flip ? "" : "!";
    return ptx_reg(cx, c, 0);
}

/* Counts definitions per value, finds single-CONST values and which local
 * arrays can stay in registers (every index a constant). */
static bool analyse(ptx_cx *cx, kf_arena *arena)
{
    const kf_ir_kernel *k = cx->k;
    cx->vreg = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->vreg);
    cx->ndefs = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->ndefs);
    cx->cdef = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->cdef);
    cx->areg = kf_arena_calloc(arena, k->narrays + 1, sizeof *cx->areg);
    cx->aname = kf_arena_calloc(arena, k->narrays + 1, sizeof *cx->aname);
    cx->needreg = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->needreg);
    cx->alias = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->alias);
    cx->skip = kf_arena_calloc(arena, k->nins + 1, sizeof *cx->skip);
    cx->named = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->named);
    cx->flip = kf_arena_calloc(arena, k->nins + 1, sizeof *cx->flip);
    if (!cx->flip) return false;
    uint32_t *nuses = kf_arena_calloc(arena, k->nvals + 1, sizeof *nuses);
    if (!cx->alias || !cx->skip || !cx->named || !nuses) return false;
    bool *dyn = kf_arena_calloc(arena, k->narrays + 1, sizeof *dyn);
    if (!cx->vreg || !cx->ndefs || !cx->cdef || !cx->areg || !cx->aname || !dyn || !cx->needreg ||
        !index_lines(cx, arena))
        return false;
    if (!kf_ir_linked(k)) {   /* labels and branches follow kf_ir_link's structure */
        cx->cur = k->loc;
        ptx_error(cx, "internal error: the control markers of kernel '%s' are not paired (kf_ir_link)", k->name);
    }
    for (uint32_t v = 0; v <= k->nvals; v++) cx->cdef[v] = -1;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (in->dst && in->dst < k->nvals) {
            cx->ndefs[in->dst]++;
            if (in->op == KF_IR_CONST) cx->cdef[in->dst] = (int32_t)i;
        }
        for (uint32_t j = 0; j < 4 && in->op < KF_IR_OP_COUNT; j++)
            if (j < kf_ir_op_nargs[in->op] && in->a[j] < k->nvals) nuses[in->a[j]]++;
    }
    for (uint32_t v = 0; v <= k->nvals; v++)   /* only single-CONST values keep cdef */
        if (cx->ndefs[v] != 1) cx->cdef[v] = -1;
    forward_moves(cx, nuses);
    fold_not_into_branches(cx, nuses);
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        uint64_t b;
        if ((in->op == KF_IR_ALOAD || in->op == KF_IR_ASTORE) && in->imm < k->narrays &&
            !ptx_const_of(cx, in->a[0], &b))
            dyn[in->imm] = true;
    }
    for (uint32_t a = 0; a < k->narrays; a++) {
        const kf_ir_array *ar = &k->arrays[a];
        uint64_t nregs = (uint64_t)ar->type.len * ar->type.lanes;
        if (!(ar->type.flags & KF_TF_SHARED) && !dyn[a] && nregs <= PTX_REG_ARRAY_MAX && nregs > 0) {
            ptx_rclass rc = (ptx_rclass)ptx_scalars[ar->type.scalar].rc;
            cx->areg[a] = cx->nreg[rc] + 1;
            cx->nreg[rc] += (uint32_t)nregs;
        }
        bool dup = false;
        for (uint32_t b2 = 0; b2 < a; b2++)
            dup |= k->arrays[b2].name && ar->name && !strcmp(k->arrays[b2].name, ar->name);
        const char *pre = (ar->type.flags & KF_TF_SHARED) ? "sh" : "loc";
        const char *nm = ar->name && strlen(ar->name) <= 24 ? ar->name : "arr";   /* addresses hold 40 chars */
        cx->aname[a] = dup || nm != ar->name ? kf_arena_printf(arena, "%s_%s_%u", pre, nm, a)
                                             : kf_arena_printf(arena, "%s_%s", pre, nm);
        if (!cx->aname[a]) return false;
    }
    return true;
}

/* ---- entry framing ------------------------------------------------------------ */

static const char *param_type(kf_type t)
{
    static const char *const names[KF_S_COUNT] = {
        [KF_S_BOOL] = ".u8", [KF_S_I8] = ".s8", [KF_S_U8] = ".u8", [KF_S_I16] = ".s16",
        [KF_S_U16] = ".u16", [KF_S_I32] = ".s32", [KF_S_U32] = ".u32", [KF_S_I64] = ".s64",
        [KF_S_U64] = ".u64", [KF_S_F16] = ".b16", [KF_S_BF16] = ".b16", [KF_S_F32] = ".f32",
        [KF_S_F64] = ".f64",
    };
    return names[t.scalar] ? names[t.scalar] : ".b32";
}

static void emit_params(kf_buf *out, const kf_ir_kernel *k)
{
    for (uint32_t i = 0; i < k->nparams; i++) {
        const kf_ir_param *p = &k->params[i];
        const char *sep = i + 1 < k->nparams ? "," : "";
        if (p->type.kind == KF_TK_BUFFER) {
            uint32_t al = p->align ? p->align : kf_type_elem_bytes(p->type);
            if (al < 1) al = 1;
            kf_buf_printf(out, "\t.param .u64 .ptr .global .align %u p_%s%s\n", al, p->name, sep);
        } else if (p->type.kind == KF_TK_VECTOR) {
            uint32_t sz = kf_type_elem_bytes(p->type);
            kf_buf_printf(out, "\t.param .align %u .b8 p_%s[%u]%s\n", sz, p->name, sz, sep);
        } else {
            kf_buf_printf(out, "\t.param %s p_%s%s\n", param_type(p->type), p->name, sep);
        }
    }
}

static uint32_t array_align(kf_type t)
{
    uint32_t b = kf_type_elem_bytes(t);
    return b < 4 ? 4 : b;
}

/* Byte size of an array's element in memory (bool is one byte). */
static uint32_t array_bytes(kf_type t)
{
    return kf_type_elem_bytes(t) * t.len;
}

/* The header of one entry (everything before the body), as lines whose
 * locations go to the map. */
static void emit_entry_head(ptx_cx *cx, kf_buf *out, ptx_locvec *locs)
{
    const kf_ir_kernel *k = cx->k;
    size_t start = out->len;
    kf_buf_printf(out, "\n// kernel %s", k->name);
    if (k->loc.line) {
        const char *f = k->loc.file ? k->loc.file : "";
        kf_buf_puts(out, " (");
        put_ascii(out, f, strlen(f));
        kf_buf_printf(out, ":%u)", k->loc.line);
    }
    kf_buf_printf(out, "\n.visible .entry %s(\n", k->name);
    emit_params(out, k);
    kf_buf_puts(out, ")\n");
    const uint32_t *b = k->sched.block;
    if (b[0]) kf_buf_printf(out, ".maxntid %u, %u, %u\n", b[0], b[1] ? b[1] : 1, b[2] ? b[2] : 1);
    kf_buf_puts(out, "{\n");
    for (int rc = 0; rc < PTX_RC_COUNT; rc++)
        if (cx->nreg[rc])
            kf_buf_printf(out, "\t.reg %s %s<%u>;\n", ptx_rc_decl[rc], ptx_rc_prefix[rc], cx->nreg[rc] + 1);
    for (uint32_t a = 0; a < k->narrays; a++) {
        const kf_ir_array *ar = &k->arrays[a];
        if (cx->areg[a]) {
            char tn[32];
            kf_buf_printf(out, "\t// %s: %s[%u] held in registers %s%u..%s%u\n", ar->name ? ar->name : "?",
                          kf_type_str(kf_type_elem(ar->type), tn, sizeof tn), ar->type.len,
                          ptx_rc_prefix[ptx_scalars[ar->type.scalar].rc], cx->areg[a],
                          ptx_rc_prefix[ptx_scalars[ar->type.scalar].rc],
                          cx->areg[a] + ar->type.len * ar->type.lanes - 1);
            continue;
        }
        kf_buf_printf(out, "\t%s .align %u .b8 %s[%u];\n",
                      (ar->type.flags & KF_TF_SHARED) ? ".shared" : ".local", array_align(ar->type),
                      cx->aname[a], array_bytes(ar->type));
    }
    for (size_t i = start; i < out->len; i++)
        if (out->data[i] == '\n' && !KF_VEC_PUSH(locs, k->loc)) cx->failed = true;
}

static bool check_arch(uint32_t arch)
{
    return arch == 80 || arch == 86 || arch == 89 || arch == 90;
}

/* The first time a named value (a let, var or parameter) is written, its
 * source name goes at the end of the instruction line: `add.u32 %r6, ...;
 * // i`. */
static void name_comment(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_val v = in->dst;
    if (!cx->final_pass || !v || v >= cx->k->nvals) return;
    if (cx->alias[v]) v = cx->alias[v];
    const char *name = cx->k->vals[v].name;
    kf_buf *b = &cx->body;
    if (!name || cx->named[v] || b->len < 2 || b->data[b->len - 1] != '\n' || b->data[b->len - 2] != ';') return;
    cx->named[v] = 1;
    b->len--;
    kf_buf_append(b, "\t// ", 4);
    kf_buf_puts(b, name);
    kf_buf_append(b, "\n", 1);
}

/* For kernels with warp operations: the membermask of the lanes of this
 * thread's warp that exist and their count - 1 (the shfl clamp), from the
 * launched block (%ntid; a block that is not a multiple of 32 threads has a
 * partial last warp): n = min(32, threads - first linear thread of the warp),
 * mask = (1 << n) - 1 (shl by 32 gives 0 in PTX, so a full warp gets ~0). */
static void emit_warp_lanes(ptx_cx *cx)
{
    const kf_ir_kernel *k = cx->k;
    uint32_t i = 0;
    while (i < k->nins && k->ins[i].op != KF_IR_SHFL && k->ins[i].op != KF_IR_VOTE) i++;
    if (i == k->nins) return;
    preg nx = ptx_tmp(cx, PTX_RC_R), ny = ptx_tmp(cx, PTX_RC_R), t = ptx_tmp(cx, PTX_RC_R), u = ptx_tmp(cx, PTX_RC_R);
    cx->wmask = ptx_tmp(cx, PTX_RC_R);
    cx->wclamp = ptx_tmp(cx, PTX_RC_R);
    ptx_comment(cx, "lanes of this warp that exist: membermask %s, shfl clamp %s", cx->wmask.s, cx->wclamp.s);
    ptx_ins(cx, "mov.u32 %s, %%ntid.x", nx.s);
    ptx_ins(cx, "mov.u32 %s, %%ntid.y", ny.s);
    ptx_ins(cx, "mov.u32 %s, %%tid.z", t.s);
    ptx_ins(cx, "mov.u32 %s, %%tid.y", u.s);
    ptx_ins(cx, "mad.lo.u32 %s, %s, %s, %s", t.s, t.s, ny.s, u.s);
    ptx_ins(cx, "mov.u32 %s, %%tid.x", u.s);
    ptx_ins(cx, "mad.lo.u32 %s, %s, %s, %s", t.s, t.s, nx.s, u.s);
    ptx_ins(cx, "and.b32 %s, %s, 0xffffffe0", t.s, t.s);
    ptx_ins(cx, "mul.lo.u32 %s, %s, %s", nx.s, nx.s, ny.s);
    ptx_ins(cx, "mov.u32 %s, %%ntid.z", u.s);
    ptx_ins(cx, "mul.lo.u32 %s, %s, %s", nx.s, nx.s, u.s);
    ptx_ins(cx, "sub.u32 %s, %s, %s", nx.s, nx.s, t.s);
    ptx_ins(cx, "min.u32 %s, %s, 32", nx.s, nx.s);
    ptx_ins(cx, "sub.u32 %s, %s, 1", cx->wclamp.s, nx.s);
    ptx_ins(cx, "mov.u32 %s, 1", u.s);
    ptx_ins(cx, "shl.b32 %s, %s, %s", u.s, u.s, nx.s);
    ptx_ins(cx, "sub.u32 %s, %s, 1", cx->wmask.s, u.s);
}

/* Emits one kernel body into cx->body. */
static void emit_body(ptx_cx *cx)
{
    const kf_ir_kernel *k = cx->k;
    cx->cur = k->loc;
    if (!cx->cur.file && cx->m) cx->cur.file = cx->m->file;
    emit_warp_lanes(cx);
    for (uint32_t i = 0; i < k->nins && !cx->failed; i++) {
        cx->at = i;
        if (cx->skip[i]) {
            ptx_forget_ins(cx, &k->ins[i]);
            continue;
        }
        cx->cur = k->ins[i].loc;
        if (!cx->cur.file && cx->m) cx->cur.file = cx->m->file;
        /* IF c; BREAK/CONTINUE/RET; ENDIF is one predicated branch or ret. */
        if (k->ins[i].op == KF_IR_IF && i + 2 < k->nins && k->ins[i + 2].op == KF_IR_ENDIF &&
            (k->ins[i + 1].op == KF_IR_BREAK || k->ins[i + 1].op == KF_IR_CONTINUE ||
             k->ins[i + 1].op == KF_IR_RET)) {
            const kf_ir_ins *j = &k->ins[i + 1];
            kf_ir_flow lp = kf_ir_flow_of(k, i + 1);
            const char *suffix = j->op == KF_IR_BREAK ? "_end" : (lp.mid ? "_latch" : "");
            const char *neg;
            preg c = ptx_if_pred(cx, i, true, &neg);
            if (j->op == KF_IR_RET) ptx_ins(cx, "@%s%s ret", neg, c.s);
            else ptx_ins(cx, "@%s%s bra $L_loop_%u%s", neg, c.s, lp.head, suffix);
            i += 2;
            continue;
        }
        ptx_emit_ins(cx, &k->ins[i]);
        name_comment(cx, &k->ins[i]);
    }
    if (!k->nins) cx->cur = k->loc;
    cx->last_comment_line = cx->cur.line;   /* the closing ret needs no source comment */
    ptx_ins(cx, "ret");
}

static bool has_const_operand(const ptx_cx *cx, const kf_ir_ins *in)
{
    uint64_t b;
    for (uint32_t j = 0; j < 4; j++)
        if (in->op < KF_IR_OP_COUNT && j < kf_ir_op_nargs[in->op] && ptx_const_of(cx, in->a[j], &b)) return true;
    return false;
}

/* The first pass: selects, without writing text, the instructions that
 * read a single-CONST value (only they decide whether it needs a register)
 * and the branch conditions. */
static void find_needed_consts(ptx_cx *cx)
{
    const kf_ir_kernel *k = cx->k;
    for (uint32_t i = 0; i < k->nins && !cx->failed; i++) {
        const kf_ir_ins *in = &k->ins[i];
        cx->at = i;
        cx->cur = in->loc;
        if (cx->skip[i]) continue;
        if (in->op == KF_IR_IF) {
            const char *neg;
            (void)ptx_if_pred(cx, i, true, &neg);
        } else if (has_const_operand(cx, in)) {
            ptx_emit_ins(cx, in);
        }
    }
}

/* Two passes over the body: the first finds which constants some use needs
 * in a register (the others appear only as immediates), the second writes
 * the text. Both make the same decisions, so the first pass's needs hold. */
static void emit_passes(ptx_cx *cx)
{
    uint32_t nreg0[PTX_RC_COUNT];
    memcpy(nreg0, cx->nreg, sizeof nreg0);
    kf_diags *diags = cx->diags, scratch = {0};
    cx->diags = &scratch;
    find_needed_consts(cx);
    kf_diags_free(&scratch);
    cx->diags = diags;
    kf_buf_reset(&cx->body);
    cx->locs.len = 0;
    memcpy(cx->nreg, nreg0, sizeof nreg0);
    memset(cx->vreg, 0, (cx->k->nvals + 1) * sizeof *cx->vreg);
    cx->nacache = 0;
    cx->last_loc_line = cx->last_loc_col = cx->last_comment_line = 0;
    cx->failed = false;
    cx->final_pass = true;
    /* about 40 bytes and 1.5 lines of PTX per IR instruction: reserve once */
    kf_buf_append(&cx->body, "", 0);
    if (!kf_vec_grow((void **)&cx->body.data, &cx->body.cap, (size_t)cx->k->nins * 48 + 256, 1) ||
        !KF_VEC_RESERVE(&cx->locs, (size_t)cx->k->nins * 2 + 16))
        cx->failed = true;
    emit_body(cx);
}

static kf_status emit_kernel(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o, kf_buf *out,
                             ptx_locvec *locs, kf_diags *diags)
{
    kf_arena arena;
    kf_arena_init(&arena);
    ptx_cx cx = {.m = m, .k = k, .o = o, .diags = diags};
    kf_status st = KF_OK;
    if (!analyse(&cx, &arena)) {
        st = KF_ERR_NOMEM;
        goto done;
    }
    if (!cx.failed) emit_passes(&cx);
    if (cx.failed || cx.body.oom) {
        st = cx.body.oom ? KF_ERR_NOMEM : KF_ERR_SOURCE;
        goto done;
    }
    emit_entry_head(&cx, out, locs);
    kf_buf_append(out, cx.body.data, cx.body.len);
    kf_buf_puts(out, "}\n");
    if (!KF_VEC_RESERVE(locs, cx.locs.len + 1)) {
        st = KF_ERR_NOMEM;
        goto done;
    }
    if (cx.locs.len) memcpy(locs->data + locs->len, cx.locs.data, cx.locs.len * sizeof *cx.locs.data);
    locs->len += cx.locs.len;
    locs->data[locs->len++] = k->loc;
done:
    if (cx.failed && st == KF_OK) st = KF_ERR_SOURCE;
    kf_buf_free(&cx.body);
    KF_VEC_FREE(&cx.locs);
    kf_arena_free(&arena);
    return st;
}

static void emit_module_head(const kf_module *m, const kf_emit_opts *o, uint32_t arch, kf_buf *out,
                             ptx_locvec *locs)
{
    size_t start = out->len;
    const char *file = m && m->file ? m->file : "?";
    kf_buf_printf(out, "//\n// Generated by kforge %s from ", KF_VERSION);
    put_ascii(out, file, strlen(file));
    kf_buf_puts(out, "\n//\n");
    kf_buf_printf(out, ".version %s\n.target sm_%u\n.address_size 64\n", PTX_VERSION, arch);
    if (o->lineinfo) {
        kf_buf_puts(out, ".file 1 \"");
        put_ascii(out, file, strlen(file));
        kf_buf_puts(out, "\"\n");
    }
    for (size_t i = start; i < out->len; i++)
        if (out->data[i] == '\n') (void)KF_VEC_PUSH(locs, ((kf_loc){0}));
}

kf_status kf_ptx_emit(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o,
                      kf_buf *out, kf_linemap *linemap, kf_diags *diags)
{
    kf_emit_opts defaults = {.arch = 90, .lineinfo = false};
    if (!o) o = &defaults;
    kf_emit_opts opts = *o;
    if (!opts.arch) opts.arch = 90;
    kf_loc mloc = {m && m->file ? m->file : "?", 1, 1};
    if (!check_arch(opts.arch)) {
        kf_diag_error(diags, mloc, "unsupported target sm_%u: the PTX back end supports sm_80, sm_86, sm_89 and sm_90",
                      opts.arch);
        return KF_ERR_SOURCE;
    }
    if (!k && (!m || m->nkernels == 0)) {
        kf_diag_error(diags, mloc, "no kernel to emit: the module declares no `kernel`");
        return KF_ERR_SOURCE;
    }
    ptx_locvec locs = {0};
    uint32_t n = k ? 1 : m->nkernels;
    /* reserve the whole module once (about 48 bytes of PTX per IR
     * instruction, as for the bodies) instead of growing by doubling */
    size_t est = 1024;
    for (uint32_t i = 0; i < n; i++) est += (size_t)(k ? k : &m->kernels[i])->nins * 48 + 1024;
    if (!out->oom) (void)kf_vec_grow((void **)&out->data, &out->cap, out->len + est, 1);
    emit_module_head(m, &opts, opts.arch, out, &locs);
    kf_status st = KF_OK;
    for (uint32_t i = 0; i < n && st == KF_OK; i++)
        st = emit_kernel(m, k ? k : &m->kernels[i], &opts, out, &locs, diags);
    if (out->oom && st == KF_OK) st = KF_ERR_NOMEM;
    if (linemap && st == KF_OK) {
        KF_VEC_FREE(&linemap->lines);
        linemap->lines.data = locs.data;
        linemap->lines.len = locs.len;
        linemap->lines.cap = locs.cap;
    } else {
        KF_VEC_FREE(&locs);
    }
    return st;
}

void kf_linemap_free(kf_linemap *lm)
{
    KF_VEC_FREE(&lm->lines);
}
