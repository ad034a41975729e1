/* The independent reference of the decode step (decode.h): the same model
 * written from its definition in plain C, in double precision, never from
 * the kernels' algorithms (no splits, no online softmax, no warp sums, no
 * fused reads). It stores a value as f16 wherever the step stores one (the
 * residual stream, the normed input, q, k, v, the attention output, the
 * gate/up output, silu·up) with its own f16 rounding (tools/reference/
 * ref_num.c), so the two differ only by the kernels' f32 arithmetic and
 * approximate exp2/rsqrt/sin/cos. Q4_K weights go through llama.cpp's q8_1
 * activation quantization and integer dot, as the q4k x q8 GEMV defines it.
 *
 * Weights and the caches are host copies made from the device model once;
 * the caches then grow by each step's k and v, computed here. A batch is
 * its sequences one after another: sequence b's step reads and grows its
 * own cache (rows [b·cap, (b + 1)·cap) of the device's [batch, cap, ...]
 * layout) and nothing else, so one sequence's step is the same model with
 * no batch at all. */
#include "decode.h"
#include "../reference/ref_num.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint16_t *attn_norm, *ffn_norm, *kc, *vc;
    unsigned char *wqkv, *wo, *wgu, *wdown;
} ref_layer;

struct dc_ref {
    dc_shape sh;
    dc_wtype wt;
    uint32_t cap;
    size_t kv0;                 /* the step's sequence: its cache's first element */
    uint16_t *embed, *out_norm;
    unsigned char *lm_head;
    ref_layer *layer;
    uint16_t *x, *xn, *qkv, *q, *attn, *gu, *h;   /* f16 bits */
    double *acc, *scores;
};

static void *host_copy(kf_buffer *b, kf_status *st, kf_error *err)
{
    size_t n = kf_buffer_bytes(b);
    void *p = malloc(n ? n : 1);
    if (!p && *st == KF_OK) *st = kf_error_set(err, KF_ERR_NOMEM, "out of memory copying %zu bytes", n);
    if (p && *st == KF_OK) *st = kf_buffer_download(b, p, n, err);
    return p;
}

static void *scratch(size_t n, size_t size, kf_status *st, kf_error *err)
{
    void *p = calloc(n ? n : 1, size);
    if (!p && *st == KF_OK) *st = kf_error_set(err, KF_ERR_NOMEM, "out of memory for the reference");
    return p;
}

kf_status dc_ref_create(dc_model *m, dc_ref **out, kf_error *err)
{
    const dc_shape *sh = &m->c->sh;
    kf_status st = KF_OK;
    dc_ref *r = calloc(1, sizeof *r);
    if (!r) return kf_error_set(err, KF_ERR_NOMEM, "out of memory for the reference");
    *r = (dc_ref){.sh = *sh, .wt = m->c->wt, .cap = m->cap};
    r->embed = host_copy(m->embed, &st, err);
    r->out_norm = host_copy(m->out_norm, &st, err);
    r->lm_head = host_copy(m->lm_head, &st, err);
    r->layer = scratch(sh->layers, sizeof *r->layer, &st, err);
    for (uint32_t l = 0; r->layer && l < sh->layers; l++) {
        dc_layer *L = &m->layer[l];
        r->layer[l] = (ref_layer){host_copy(L->attn_norm, &st, err), host_copy(L->ffn_norm, &st, err),
                                  host_copy(L->kc, &st, err), host_copy(L->vc, &st, err), host_copy(L->wqkv, &st, err),
                                  host_copy(L->wo, &st, err), host_copy(L->wgu, &st, err),
                                  host_copy(L->wdown, &st, err)};
    }
    size_t hd = (size_t)sh->heads * sh->head_dim, nqkv = (size_t)(sh->heads + 2 * sh->kv_heads) * sh->head_dim;
    size_t big = sh->vocab > 2 * sh->ffn ? sh->vocab : 2 * sh->ffn;
    big = big > nqkv ? big : nqkv;
    big = big > sh->hidden ? big : sh->hidden;
    r->x = scratch(sh->hidden, 2, &st, err);
    r->xn = scratch(sh->hidden, 2, &st, err);
    r->qkv = scratch((sh->heads + 2 * sh->kv_heads) * sh->head_dim, 2, &st, err);
    r->q = scratch(hd, 2, &st, err);
    r->attn = scratch(hd, 2, &st, err);
    r->gu = scratch(2 * sh->ffn, 2, &st, err);
    r->h = scratch(sh->ffn, 2, &st, err);
    r->acc = scratch(big, sizeof(double), &st, err);
    r->scores = scratch(r->cap, sizeof(double), &st, err);
    if (st != KF_OK) {
        dc_ref_destroy(r);
        r = NULL;
    }
    *out = r;
    return st;
}

void dc_ref_destroy(dc_ref *r)
{
    if (!r) return;
    for (uint32_t l = 0; r->layer && l < r->sh.layers; l++) {
        ref_layer *L = &r->layer[l];
        void *p[8] = {L->attn_norm, L->ffn_norm, L->kc, L->vc, L->wqkv, L->wo, L->wgu, L->wdown};
        for (int i = 0; i < 8; i++) free(p[i]);
    }
    void *p[] = {r->embed, r->out_norm, r->lm_head, r->layer, r->x, r->xn, r->qkv, r->q, r->attn, r->gu, r->h, r->acc,
                 r->scores};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    free(r);
}

static double h2d(uint16_t h) { return kf_ref_f16_value(h); }

/* y[i] = sum_k W[i, k]·x[k], W rows x cols: f16, or Q4_K with x quantized
 * to q8_1 blocks first. */
static void matvec(const dc_ref *r, const unsigned char *w, const uint16_t *x, uint64_t rows, uint64_t cols, double *y)
{
    if (r->wt == DC_F16) {
        const uint16_t *wh = (const uint16_t *)w;
        for (uint64_t i = 0; i < rows; i++) {
            double s = 0;
            for (uint64_t c = 0; c < cols; c++) s += h2d(wh[i * cols + c]) * h2d(x[c]);
            y[i] = s;
        }
        return;
    }
    int8_t *xq = malloc(cols);
    uint16_t *xds = malloc(cols / 32 * 2 * sizeof *xds);
    for (uint64_t b = 0; xq && xds && b < cols; b += 32) {
        float v[32];
        for (int i = 0; i < 32; i++) v[i] = (float)h2d(x[b + i]);
        kf_ref_q8_block(v, 32, xq + b, xds + b / 16);
    }
    for (uint64_t i = 0; xq && xds && i < rows; i++) y[i] = kf_ref_q4k_q8_row(w + i * (cols / 256) * 144, cols / 256, xq, xds);
    free(xq);
    free(xds);
}

/* xn = x·rsqrt(mean(x^2) + eps)·w. */
static void rmsnorm(const dc_ref *r, const uint16_t *w)
{
    double ss = 0;
    for (uint32_t c = 0; c < r->sh.hidden; c++) ss += h2d(r->x[c]) * h2d(r->x[c]);
    double scale = 1.0 / sqrt(ss / r->sh.hidden + (double)r->sh.eps);
    for (uint32_t c = 0; c < r->sh.hidden; c++) r->xn[c] = kf_ref_f16_bits(h2d(r->x[c]) * scale * h2d(w[c]));
}

/* x = x + W·in, one rounding (the _acc GEMVs). */
static void residual(dc_ref *r, const unsigned char *w, const uint16_t *in, uint64_t cols)
{
    matvec(r, w, in, r->sh.hidden, cols, r->acc);
    for (uint32_t i = 0; i < r->sh.hidden; i++) r->x[i] = kf_ref_f16_bits(h2d(r->x[i]) + r->acc[i]);
}

/* Head hq's output: softmax(q·K / sqrt(d)) over positions 0..pos of its
 * KV head, times V. */
static void attend(dc_ref *r, const ref_layer *L, uint32_t hq, uint32_t pos)
{
    uint32_t d = r->sh.head_dim, hkv = r->sh.kv_heads, kvh = hq / (r->sh.heads / hkv);
    const uint16_t *q = r->q + (size_t)hq * d;
    double mx = -INFINITY, sum = 0;
    for (uint32_t p = 0; p <= pos; p++) {
        const uint16_t *k = L->kc + r->kv0 + ((size_t)p * hkv + kvh) * d;
        double s = 0;
        for (uint32_t e = 0; e < d; e++) s += h2d(q[e]) * h2d(k[e]);
        r->scores[p] = s / sqrt((double)d);
        mx = fmax(mx, r->scores[p]);
    }
    for (uint32_t p = 0; p <= pos; p++) sum += r->scores[p] = exp(r->scores[p] - mx);
    for (uint32_t e = 0; e < d; e++) {
        double o = 0;
        for (uint32_t p = 0; p <= pos; p++) o += r->scores[p] * h2d(L->vc[r->kv0 + ((size_t)p * hkv + kvh) * d + e]);
        r->attn[(size_t)hq * d + e] = kf_ref_f16_bits(o / sum);
    }
}

/* The attention half of a layer: QKV, RoPE (NeoX) on q and k, k and v into
 * the cache at pos, attention, the output projection added to x. */
static void attention(dc_ref *r, ref_layer *L, uint32_t pos)
{
    const dc_shape *sh = &r->sh;
    uint32_t d = sh->head_dim, nh = sh->heads + 2 * sh->kv_heads;
    rmsnorm(r, L->attn_norm);
    matvec(r, L->wqkv, r->xn, (uint64_t)nh * d, sh->hidden, r->acc);
    for (uint32_t i = 0; i < nh * d; i++) r->qkv[i] = kf_ref_f16_bits(r->acc[i]);
    for (uint32_t hh = 0; hh < nh; hh++) {
        uint16_t *src = r->qkv + (size_t)hh * d, *dst = r->q + (size_t)hh * d;
        if (hh < sh->heads + sh->kv_heads) kf_ref_rope_head(src, d, pos, sh->theta, true);
        if (hh >= sh->heads) {   /* k or v head: into the cache row at pos */
            size_t row = ((size_t)pos * sh->kv_heads + (hh - sh->heads) % sh->kv_heads) * d;
            dst = (hh < sh->heads + sh->kv_heads ? L->kc : L->vc) + r->kv0 + row;
        }
        memcpy(dst, src, d * 2);
    }
    for (uint32_t hq = 0; hq < sh->heads; hq++) attend(r, L, hq, pos);
    residual(r, L->wo, r->attn, (uint64_t)sh->heads * d);
}

static void ffn(dc_ref *r, ref_layer *L)
{
    const dc_shape *sh = &r->sh;
    rmsnorm(r, L->ffn_norm);
    matvec(r, L->wgu, r->xn, 2ull * sh->ffn, sh->hidden, r->acc);
    for (uint32_t i = 0; i < 2 * sh->ffn; i++) r->gu[i] = kf_ref_f16_bits(r->acc[i]);
    for (uint32_t i = 0; i < sh->ffn; i++) {
        double g = h2d(r->gu[i]);
        r->h[i] = kf_ref_f16_bits(g / (1.0 + exp(-g)) * h2d(r->gu[sh->ffn + i]));
    }
    residual(r, L->wdown, r->h, sh->ffn);
}

void dc_ref_step(dc_ref *r, uint32_t seq, uint32_t token, uint32_t pos, float *logits)
{
    const dc_shape *sh = &r->sh;
    r->kv0 = (size_t)seq * r->cap * sh->kv_heads * sh->head_dim;
    memcpy(r->x, r->embed + (size_t)token * sh->hidden, (size_t)sh->hidden * 2);
    for (uint32_t l = 0; l < sh->layers; l++) {
        attention(r, &r->layer[l], pos);
        ffn(r, &r->layer[l]);
    }
    rmsnorm(r, r->out_norm);
    matvec(r, r->lm_head, r->xn, sh->vocab, sh->hidden, r->acc);
    for (uint32_t i = 0; i < sh->vocab; i++) logits[i] = (float)r->acc[i];
}

uint16_t *dc_ref_cache_row(dc_ref *r, uint32_t l, uint32_t seq, uint32_t pos, bool v)
{
    size_t row = (size_t)r->sh.kv_heads * r->sh.head_dim;
    return (v ? r->layer[l].vc : r->layer[l].kc) + ((size_t)seq * r->cap + pos) * row;
}
