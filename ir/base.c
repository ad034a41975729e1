/* Base services: arena, growable arrays, text buffers, diagnostics and the
 * error record. See base.h for the contracts. */
#include "base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kf_arena_chunk {
    kf_arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK 65536

void kf_arena_init(kf_arena *a) { a->head = NULL; a->used_total = 0; }

void *kf_arena_alloc(kf_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    kf_arena_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        if (cap > SIZE_MAX - sizeof(kf_arena_chunk)) return NULL;
        c = malloc(sizeof(kf_arena_chunk) + cap);
        if (!c) return NULL;
        c->size = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->used_total += size;
    memset(p, 0, size);
    return p;
}

void *kf_arena_calloc(kf_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    return kf_arena_alloc(a, n * size);
}

char *kf_arena_strndup(kf_arena *a, const char *s, size_t n)
{
    char *p = kf_arena_alloc(a, n + 1);
    if (p) memcpy(p, s, n);
    return p;
}

char *kf_arena_strdup(kf_arena *a, const char *s) { return kf_arena_strndup(a, s, strlen(s)); }

char *kf_arena_printf(kf_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n < 0 ? NULL : kf_arena_alloc(a, (size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void kf_arena_free(kf_arena *a)
{
    for (kf_arena_chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
    a->used_total = 0;
}

bool kf_vec_grow(void **data, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) return false;
        ncap *= 2;
    }
    if (elem && ncap > SIZE_MAX / elem) return false;
    void *p = realloc(*data, ncap * elem);
    if (!p) return false;
    *data = p;
    *cap = ncap;
    return true;
}

/* ---- text buffers ------------------------------------------------------- */
static bool buf_reserve(kf_buf *b, size_t extra)
{
    if (b->oom) return false;
    if (extra > SIZE_MAX - b->len - 1 ||
        !kf_vec_grow((void **)&b->data, &b->cap, b->len + extra + 1, 1)) {
        b->oom = true;
        return false;
    }
    return true;
}

void kf_buf_append(kf_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n)) return;
    if (n) memcpy(b->data + b->len, s, n);   /* s may be NULL when n is 0 (an empty kf_buf's data) */
    b->len += n;
    b->data[b->len] = '\0';
}

void kf_buf_puts(kf_buf *b, const char *s) { kf_buf_append(b, s, strlen(s)); }

void kf_buf_vprintf(kf_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        b->oom = true;
    } else if ((size_t)n < sizeof small) {
        kf_buf_append(b, small, (size_t)n);
    } else if (buf_reserve(b, (size_t)n)) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void kf_buf_printf(kf_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kf_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void kf_buf_reset(kf_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

void kf_buf_free(kf_buf *b)
{
    free(b->data);
    *b = (kf_buf){0};
}

char *kf_buf_take(kf_buf *b)
{
    char *p = b->data;
    if (!p) p = calloc(1, 1);
    *b = (kf_buf){0};
    return p;
}

/* ---- diagnostics -------------------------------------------------------- */
void kf_diag_vadd(kf_diags *d, kf_diag_kind kind, kf_loc loc, const char *fmt, va_list ap)
{
    if (kind == KF_DIAG_ERROR) d->nerrors++;
    if (d->items.len >= KF_DIAG_LIMIT) {
        d->dropped++;
        return;
    }
    kf_buf msg = {0};
    kf_buf_vprintf(&msg, fmt, ap);
    kf_diag dg = {kind, loc, kf_buf_take(&msg)};
    if (!dg.msg || !KF_VEC_PUSH(&d->items, dg)) {
        free(dg.msg);
        d->dropped++;
    }
}

void kf_diag_add(kf_diags *d, kf_diag_kind kind, kf_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kf_diag_vadd(d, kind, loc, fmt, ap);
    va_end(ap);
}

void kf_diags_free(kf_diags *d)
{
    for (size_t i = 0; i < d->items.len; i++) free(d->items.data[i].msg);
    KF_VEC_FREE(&d->items);
    d->nerrors = d->dropped = 0;
}

/* Finds line `line` (1-based) of source; returns its start and length. */
static const char *source_line(const char *src, size_t len, uint32_t line, size_t *n)
{
    const char *p = src, *end = src + len;
    for (uint32_t l = 1; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return NULL;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *n = (size_t)((nl ? nl : end) - p);
    return p;
}

void kf_diag_render(kf_buf *out, const kf_diag *dg, const char *source, size_t source_len)
{
    static const char *const kinds[] = {"error", "warning", "note"};
    kf_buf_printf(out, "%s:%u:%u: %s: %s\n", dg->loc.file ? dg->loc.file : "<input>",
                  dg->loc.line, dg->loc.col, kinds[dg->kind], dg->msg);
    size_t n = 0;
    const char *line = source && dg->loc.line ? source_line(source, source_len, dg->loc.line, &n) : NULL;
    if (!line) return;
    enum { EXCERPT = 200 };   /* a 10 MB line is shown as a window around the column */
    size_t col = dg->loc.col ? dg->loc.col - 1 : 0;
    size_t from = col > EXCERPT / 2 ? col - EXCERPT / 2 : 0;
    if (from > n) from = n;
    size_t to = from + EXCERPT < n ? from + EXCERPT : n;
    kf_buf_puts(out, "    ");
    if (from) kf_buf_puts(out, "...");
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)line[i];
        kf_buf_append(out, c == '\t' ? " " : (c < 0x20 || c == 0x7f) ? "?" : (const char *)&line[i], 1);
    }
    kf_buf_puts(out, to < n ? "...\n    " : "\n    ");
    if (from) kf_buf_puts(out, "   ");
    for (size_t i = from; i < col && i < to + 1; i++) kf_buf_puts(out, " ");
    kf_buf_puts(out, "^\n");
}

void kf_diags_render(kf_buf *out, const kf_diags *d, const char *source, size_t source_len)
{
    for (size_t i = 0; i < d->items.len; i++) kf_diag_render(out, &d->items.data[i], source, source_len);
    if (d->dropped) kf_buf_printf(out, "(%u more errors not shown)\n", d->dropped);
}

/* ---- error record ------------------------------------------------------- */
static kf_status error_vset(kf_error *err, kf_status st, kf_loc loc, const char *fmt, va_list ap)
{
    if (!err) return st;
    err->status = st;
    err->loc = loc;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return st;
}

kf_status kf_error_set(kf_error *err, kf_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, st, (kf_loc){0}, fmt, ap);
    va_end(ap);
    return st;
}

kf_status kf_error_set_at(kf_error *err, kf_status st, kf_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, st, loc, fmt, ap);
    va_end(ap);
    return st;
}

kf_status kf_error_restatus(kf_error *err, kf_status st)
{
    if (err) err->status = st;
    return st;
}

void kf_error_clear(kf_error *err)
{
    if (!err) return;
    free(err->log);
    memset(err, 0, sizeof *err);
}

_Noreturn void kf_unreachable_at(const char *file, int line, const char *what)
{
    fprintf(stderr, "kforge: internal error at %s:%d: %s\n", file, line, what);
    abort();
}
