/* .npy reading and writing (npy.h).
 *
 * The header is a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (64, 1024), }
 * We read it with a small scanner that looks up the three keys and accepts
 * nothing else: every length is checked against the image before it is
 * used, and every product of the shape against overflow, so a corrupt file
 * is an error, never a crash. Fortran order is accepted only when at most
 * one dimension is above 1 (then both orders are the same bytes). */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

const char *kf_npy_descr(kf_scalar s)
{
    switch (s) {
    case KF_S_BOOL: return "|b1";
    case KF_S_I8: return "|i1";
    case KF_S_U8: return "|u1";
    case KF_S_I16: return "<i2";
    case KF_S_U16: return "<u2";
    case KF_S_BF16: return "<u2";
    case KF_S_I32: return "<i4";
    case KF_S_U32: return "<u4";
    case KF_S_I64: return "<i8";
    case KF_S_U64: return "<u8";
    case KF_S_F16: return "<f2";
    case KF_S_F32: return "<f4";
    case KF_S_F64: return "<f8";
    default: return NULL;
    }
}

/* Finds `'key'` in the header and returns the text after the colon. */
static const char *find_key(const char *h, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(h, pat);
    }
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

static kf_status parse_descr(const char *h, const char *what, kf_npy *out, kf_error *err)
{
    const char *p = find_key(h, "descr");
    if (p && *p == '[')
        return kf_error_set(err, KF_ERR_IO, "%s: a structured .npy dtype (fields) is not supported: save a plain array "
                            "of one type, such as '<f4'", what);
    if (!p || (*p != '\'' && *p != '"'))
        return kf_error_set(err, KF_ERR_IO, "%s: .npy header has no 'descr' string", what);
    char q = *p++;
    const char *end = strchr(p, q);
    if (!end || end - p < 3 || end - p > 4)
        return kf_error_set(err, KF_ERR_IO, "%s: unsupported .npy dtype (a structured or unknown dtype)", what);
    char order = p[0], kind = p[1];
    int size = 0;
    for (const char *d = p + 2; d < end; d++)   /* all digits: '<f4x' and '<f 4' are not f32 */
        size = *d >= '0' && *d <= '9' && size >= 0 ? size * 10 + (*d - '0') : -1;
    if (order == '>' && size > 1)
        return kf_error_set(err, KF_ERR_IO, "%s: big-endian .npy data is not supported; save it little-endian ('<')", what);
    bool order_ok = order == '<' || order == '=' || order == '|';
    bool kind_ok = (kind == 'f' && (size == 2 || size == 4 || size == 8)) ||
                   ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
                   (kind == 'b' && size == 1);
    if (!order_ok || !kind_ok)
        return kf_error_set(err, KF_ERR_IO, "%s: unsupported .npy dtype '%.*s'", what, (int)(end - p), p);
    out->kind = kind;
    out->size = (uint8_t)size;
    return KF_OK;
}

/* Parses "(d0, d1, ...)" into the element count; false on bad syntax or overflow. */
static bool parse_shape(const char *p, size_t *count, size_t *ndim_big)
{
    if (!p || *p != '(') return false;
    p++;
    size_t n = 1;
    *ndim_big = 0;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        if (*p < '0' || *p > '9') return false;
        errno = 0;
        char *e;
        unsigned long long d = strtoull(p, &e, 10);
        if (errno || e == p) return false;
        p = e;
        while (*p == 'L') p++;  /* Python 2 longs */
        if (d > 1) (*ndim_big)++;
        if (d != 0 && n > SIZE_MAX / d) return false;
        n *= (size_t)d;
        if (*p != ',' && *p != ')' && *p != ' ') return false;
    }
    *count = n;
    return true;
}

static kf_status parse_header(const char *h, const char *what, kf_npy *out, kf_error *err)
{
    kf_status st = parse_descr(h, what, out, err);
    if (st != KF_OK) return st;
    size_t big = 0;
    if (!parse_shape(find_key(h, "shape"), &out->count, &big))
        return kf_error_set(err, KF_ERR_IO, "%s: .npy header has no valid 'shape' tuple", what);
    const char *fo = find_key(h, "fortran_order");
    if (!fo || (strncmp(fo, "False", 5) != 0 && strncmp(fo, "True", 4) != 0))
        return kf_error_set(err, KF_ERR_IO, "%s: .npy header has no valid 'fortran_order'", what);
    if (strncmp(fo, "True", 4) == 0 && big > 1)
        return kf_error_set(err, KF_ERR_IO, "%s: Fortran-ordered arrays are not supported; save with np.ascontiguousarray", what);
    return KF_OK;
}

kf_status kf_npy_parse(const void *buf, size_t len, const char *what, kf_npy *out, kf_error *err)
{
    const unsigned char *b = buf;
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(b, magic, 6) != 0)
        return kf_error_set(err, KF_ERR_IO, "%s: not a .npy file (bad magic)", what);
    size_t hlen, hstart;
    if (b[6] == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (b[6] == 2 || b[6] == 3) {
        if (len < 12) return kf_error_set(err, KF_ERR_IO, "%s: truncated .npy header", what);
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        return kf_error_set(err, KF_ERR_IO, "%s: unsupported .npy version %u.%u", what, b[6], b[7]);
    }
    if (hlen > len - hstart) return kf_error_set(err, KF_ERR_IO, "%s: truncated .npy header", what);
    char *h = malloc(hlen + 1);
    if (!h) return kf_error_set(err, KF_ERR_NOMEM, "%s: out of memory", what);
    memcpy(h, b + hstart, hlen);
    h[hlen] = 0;
    kf_status st = parse_header(h, what, out, err);
    free(h);
    if (st != KF_OK) return st;
    size_t have = len - hstart - hlen;
    if (out->count > SIZE_MAX / out->size || out->count * out->size != have)
        return kf_error_set(err, KF_ERR_IO, "%s: .npy data is %zu bytes but the header describes %zu elements of %u bytes",
                            what, have, out->count, out->size);
    out->bytes = have;
    out->data = malloc(have ? have : 1);
    if (!out->data) return kf_error_set(err, KF_ERR_NOMEM, "%s: out of memory", what);
    memcpy(out->data, b + hstart + hlen, have);
    return KF_OK;
}

kf_status kf_npy_read(const char *path, kf_npy *out, kf_error *err)
{
    char *data;
    size_t len;
    memset(out, 0, sizeof *out);
    kf_status st = kf_read_file(path, &data, &len, err);
    if (st != KF_OK) return st;
    st = kf_npy_parse(data, len, path, out, err);
    free(data);
    return st;
}

void kf_npy_free(kf_npy *n)
{
    free(n->data);
    memset(n, 0, sizeof *n);
}

kf_status kf_npy_match(const kf_npy *n, kf_type elem, const char *param, size_t *elems, kf_error *err)
{
    const char *want = kf_npy_descr((kf_scalar)elem.scalar);
    char tname[32];
    kf_type_str(elem, tname, sizeof tname);
    if (!want) return kf_error_set(err, KF_ERR_USAGE, "parameter '%s': element type %s cannot come from a .npy file", param, tname);
    char found[8];
    snprintf(found, sizeof found, "%c%c%u", n->size == 1 ? '|' : '<', n->kind, n->size);
    if (n->kind != want[1] || n->size != (uint8_t)(want[2] - '0'))
        return kf_error_set(err, KF_ERR_USAGE, "parameter '%s' is %s and needs dtype '%s', but the .npy file has '%s'%s",
                            param, tname, want, found,
                            elem.scalar == KF_S_BF16 ? " (bf16 is stored as raw bits, <u2)" : "");
    if (n->count % elem.lanes)
        return kf_error_set(err, KF_ERR_USAGE, "parameter '%s' is %s: the .npy length %zu is not a multiple of %u",
                            param, tname, n->count, elem.lanes);
    *elems = n->count / elem.lanes;
    return KF_OK;
}

kf_status kf_npy_encode(kf_buf *out, kf_scalar s, const void *data, size_t count, kf_error *err)
{
    const char *d = kf_npy_descr(s);
    if (!d) return kf_error_set(err, KF_ERR_USAGE, "type %s has no .npy dtype", kf_scalar_names[s]);
    char dict[128];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", d, count);
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    kf_buf_append(out, (const char *)pre, sizeof pre);
    kf_buf_append(out, dict, (size_t)n);
    for (size_t i = 0; i < pad; i++) kf_buf_append(out, " ", 1);
    kf_buf_append(out, "\n", 1);
    if (count) kf_buf_append(out, data, count * kf_scalar_bytes[s]);
    return out->oom ? kf_error_set(err, KF_ERR_NOMEM, "out of memory writing .npy") : KF_OK;
}

kf_status kf_npy_write(const char *path, kf_scalar s, const void *data, size_t count, kf_error *err)
{
    kf_buf b = {0};
    kf_status st = kf_npy_encode(&b, s, data, count, err);
    if (st == KF_OK) st = kf_write_file(path, b.data, b.len, err);
    kf_buf_free(&b);
    return st;
}
