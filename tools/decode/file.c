/* The model file (format in decode.h): a 64-byte header that gives the
 * shape and the weight type, then every tensor in the model's order, each
 * from a 64-byte boundary. Loading checks the header and the file's exact
 * size before anything is uploaded; saving writes the whole file through
 * kf_write_file (a temporary renamed over the target). */
#include "decode.h"

#include <stdlib.h>
#include <string.h>

enum { HEADER = 64 };

static uint64_t align64(uint64_t n) { return (n + 63) & ~(uint64_t)63; }

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void header_write(unsigned char *h, const dc_shape *sh, dc_wtype wt)
{
    uint32_t f[10] = {sh->hidden, sh->heads, sh->kv_heads, sh->head_dim, sh->ffn, sh->layers, sh->vocab, (uint32_t)wt};
    memcpy(&f[8], &sh->eps, 4);
    memcpy(&f[9], &sh->theta, 4);
    memset(h, 0, HEADER);
    memcpy(h, DC_FILE_MAGIC, 8);
    for (int i = 0; i < 10; i++) put_u32(h + 8 + 4 * i, f[i]);
}

static kf_status header_read(const char *path, const unsigned char *h, size_t len, dc_shape *sh, dc_wtype *wt,
                             kf_error *err)
{
    if (len < HEADER || memcmp(h, DC_FILE_MAGIC, 8))
        return kf_error_set(err, KF_ERR_USAGE, "%s is not a kforge-decode model file (no '%s' header)", path,
                            DC_FILE_MAGIC);
    uint32_t f[10];
    for (int i = 0; i < 10; i++) f[i] = get_u32(h + 8 + 4 * i);
    if (f[7] > 1) return kf_error_set(err, KF_ERR_USAGE, "%s: weight type %u is neither 0 (f16) nor 1 (q4k)", path, f[7]);
    *sh = (dc_shape){f[0], f[1], f[2], f[3], f[4], f[5], f[6], 0, 0};
    memcpy(&sh->eps, &f[8], 4);
    memcpy(&sh->theta, &f[9], 4);
    *wt = (dc_wtype)f[7];
    kf_status st = dc_shape_check(sh, *wt, err);
    if (st != KF_OK) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return kf_error_set(err, KF_ERR_USAGE, "%s: %s", path, why);
    }
    return KF_OK;
}

kf_status dc_file_read(const char *path, unsigned char **data, size_t *len, dc_shape *sh, dc_wtype *wt,
                       kf_error *err)
{
    char *d;
    kf_status st = kf_read_file_max(path, UINT64_C(1) << 40, &d, len, err);
    if (st != KF_OK) return st;
    st = header_read(path, (const unsigned char *)d, *len, sh, wt, err);
    if (st != KF_OK) free(d);
    *data = st == KF_OK ? (unsigned char *)d : NULL;
    return st;
}

/* ---- the tensors, in order -------------------------------------------------------------- */
typedef struct {
    dc_model *m;
    unsigned char *data;        /* the whole file */
    uint64_t at, len;           /* the next tensor's offset; the file's size */
    bool save;
} io_ctx;

static kf_status one_tensor(void *ctx, kf_buffer *b, dc_tensor_kind kind, uint64_t cols, kf_error *err)
{
    (void)kind; (void)cols;
    io_ctx *io = ctx;
    uint64_t n = kf_buffer_bytes(b), at = align64(io->at);
    io->at = at + n;
    if (!io->data) return KF_OK;   /* sizing only */
    return io->save ? kf_buffer_download(b, io->data + at, n, err) : kf_buffer_upload(b, io->data + at, n, err);
}

/* The file's size for m (every tensor from a 64-byte boundary). */
static uint64_t file_size(dc_model *m)
{
    io_ctx io = {m, NULL, HEADER, 0, false};
    dc_model_tensors(m, one_tensor, &io, NULL);
    return io.at;
}

kf_status dc_file_load(dc_model *m, kf_error *err)
{
    uint64_t want = file_size(m);
    if (m->c->model_len != want)
        return kf_error_set(err, KF_ERR_USAGE, "%s holds %zu bytes but the model of its header needs %llu: truncated "
                            "or not written by kforge-decode --save", m->c->model, m->c->model_len,
                            (unsigned long long)want);
    io_ctx io = {m, (unsigned char *)m->c->model_data, HEADER, m->c->model_len, false};
    return dc_model_tensors(m, one_tensor, &io, err);
}

kf_status dc_file_save(dc_model *m, const char *path, kf_error *err)
{
    uint64_t size = file_size(m);
    unsigned char *data = size <= SIZE_MAX ? calloc(1, (size_t)size) : NULL;
    if (!data) return kf_error_set(err, KF_ERR_NOMEM, "out of memory holding a %llu-byte model file",
                                   (unsigned long long)size);
    header_write(data, &m->c->sh, m->c->wt);
    io_ctx io = {m, data, HEADER, size, true};
    kf_status st = dc_model_tensors(m, one_tensor, &io, err);
    if (st == KF_OK) st = kf_write_file(path, data, (size_t)size, err);
    free(data);
    return st;
}
