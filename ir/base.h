/* Base services shared by every phase of kforge: source locations, the
 * compilation arena, one overflow-checked growable array, text buffers,
 * and the error/diagnostic record.
 *
 * Ownership: everything a compilation makes (tokens, AST, IR, strings) lives
 * in one kf_arena and is freed by kf_arena_free. The library never prints,
 * exits or aborts on user error: fallible calls return kf_status and fill a
 * kf_error or append to a kf_diags list. A broken internal invariant is a bug
 * and goes through kf_unreachable(). */
#ifndef KF_BASE_H
#define KF_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../include/kforge.h"   /* kf_status, kf_loc, kf_error, the public types */

/* ---- arena ------------------------------------------------------------ */
typedef struct kf_arena_chunk kf_arena_chunk;
typedef struct {
    kf_arena_chunk *head;
    size_t used_total;
} kf_arena;

void kf_arena_init(kf_arena *a);
/* Zeroed, 16-byte aligned memory owned by the arena; NULL only when out of
 * memory or size overflows. */
void *kf_arena_alloc(kf_arena *a, size_t size);
void *kf_arena_calloc(kf_arena *a, size_t n, size_t size);
char *kf_arena_strndup(kf_arena *a, const char *s, size_t n);
char *kf_arena_strdup(kf_arena *a, const char *s);
char *kf_arena_printf(kf_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void kf_arena_free(kf_arena *a);

/* ---- growable array (heap, overflow-checked) ---------------------------
 *   KF_VEC(int) v = {0};  if (!KF_VEC_PUSH(&v, 3)) fail;  free(v.data); */
#define KF_VEC(T) struct { T *data; size_t len, cap; }
bool kf_vec_grow(void **data, size_t *cap, size_t need, size_t elem);
#define KF_VEC_RESERVE(v, n) \
    kf_vec_grow((void **)&(v)->data, &(v)->cap, (v)->len + (n), sizeof(*(v)->data))
#define KF_VEC_PUSH(v, x) \
    (KF_VEC_RESERVE(v, 1) ? ((v)->data[(v)->len++] = (x), true) : false)
#define KF_VEC_FREE(v) ((void)(free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0))

/* ---- text buffer: every emitted text goes through kf_buf_printf --------- */
typedef struct {
    char *data;   /* NUL-terminated while len > 0 or after any append */
    size_t len, cap;
    bool oom;     /* sticky: an append failed; the text is incomplete */
} kf_buf;

void kf_buf_printf(kf_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kf_buf_vprintf(kf_buf *b, const char *fmt, va_list ap);
void kf_buf_append(kf_buf *b, const char *s, size_t n);
void kf_buf_puts(kf_buf *b, const char *s);
void kf_buf_reset(kf_buf *b);     /* len = 0, keeps memory */
void kf_buf_free(kf_buf *b);
/* Hands the text to the caller (free() it); the buffer becomes empty. */
char *kf_buf_take(kf_buf *b);

/* ---- diagnostics -------------------------------------------------------- */
typedef struct {
    kf_diag_kind kind;
    kf_loc loc;
    char *msg;   /* heap, owned by the list */
} kf_diag;

#define KF_DIAG_LIMIT 50   /* errors kept per compilation; more are counted */

typedef struct {
    KF_VEC(kf_diag) items;
    uint32_t nerrors;      /* includes errors past the limit */
    uint32_t dropped;
} kf_diags;

void kf_diag_add(kf_diags *d, kf_diag_kind kind, kf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void kf_diag_vadd(kf_diags *d, kf_diag_kind kind, kf_loc loc, const char *fmt, va_list ap);
#define kf_diag_error(d, loc, ...) kf_diag_add((d), KF_DIAG_ERROR, (loc), __VA_ARGS__)
void kf_diags_free(kf_diags *d);
/* Renders one diagnostic as `file:line:col: error: msg`, then the source line
 * and a caret under col (source may be NULL: no excerpt). */
void kf_diag_render(kf_buf *out, const kf_diag *dg, const char *source, size_t source_len);
void kf_diags_render(kf_buf *out, const kf_diags *d, const char *source, size_t source_len);

/* ---- error record (kf_error, public) for non-source failures ---------- */
/* Sets err (if non-NULL) and returns status. */
kf_status kf_error_set(kf_error *err, kf_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
kf_status kf_error_set_at(kf_error *err, kf_status status, kf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The status of an error already recorded, changed to status (the message
 * and log kept); returns status. */
kf_status kf_error_restatus(kf_error *err, kf_status status);

/* A public call's pointer argument that must not be NULL: KF_ERR_USAGE
 * naming the call and the argument. */
#define KF_NEED(p, err, what)                                                                           \
    do {                                                                                                \
        if (!(p)) return kf_error_set((err), KF_ERR_USAGE, "%s: %s is NULL", __func__, (what));         \
    } while (0)

_Noreturn void kf_unreachable_at(const char *file, int line, const char *what);
#define kf_unreachable(what) kf_unreachable_at(__FILE__, __LINE__, (what))

/* ---- files (ir/file.c) ----------------------------------------------------
 * Every file kforge reads goes through kf_read_file and every file it writes
 * through kf_write_file. */

/* Most bytes kf_read_file reads (16 GiB); kf_read_file_max takes another. */
#define KF_READ_MAX (UINT64_C(16) << 30)

/* Reads a whole regular file into a NUL-terminated heap buffer (free() it).
 * Anything else (a directory, a FIFO, a device such as /dev/zero) is refused
 * without reading or blocking, and so is a file of more than max_bytes:
 * KF_ERR_IO naming the path and the problem. */
kf_status kf_read_file(const char *path, char **data, size_t *len, kf_error *err);
kf_status kf_read_file_max(const char *path, uint64_t max_bytes, char **data, size_t *len, kf_error *err);

/* Replaces path with len bytes as one step: the bytes go to a temporary
 * file in the same directory (".tmp-<pid>-<n>-<name>"), which is renamed
 * over path once complete, so a reader sees the old file or the new one,
 * never a part, and a failed write (unwritable directory, full disk, file
 * size limit) removes the temporary and leaves path as it was; KF_ERR_IO
 * names path and the reason. A path that is an existing non-regular file
 * (/dev/stdout, /dev/null, a FIFO) is written in place; a symbolic link is
 * followed. */
kf_status kf_write_file(const char *path, const void *data, size_t len, kf_error *err);

#endif
