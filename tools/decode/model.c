/* The model on a device (decode.h): the kernel files compiled once per
 * module (kf_pipeline_create_module: one NVRTC compile or JIT each), the
 * weights made by decode.kf's fill kernels or loaded from a file, the
 * activations, and one plan per launch of the step, made once and kept for
 * the whole loop. A step changes three things, by re-targeting: the
 * step index (decode_pos's scalar s, which writes each sequence's position
 * ctx[b] + s for RoPE and the cache row, and ctx[b] + s + 1 for attention's
 * length), and the token slot argmax writes and embed reads (tokens[s + 1],
 * a view of the batch's tokens per step). Nothing else moves, so graph mode
 * records the step once and each replay updates three kernel nodes.
 *
 * A batch (--batch B > 1) is the same step over B rows: every activation
 * [B, ...], the caches [B, cap, ...], and every weight GEMV tc_gemv.kf's
 * (tc_matvec: the matrix read once for the B rows; q4k on the 8-bit rows
 * its producers write), with the norms and silu·up launched apart (no
 * batched fused GEMV): 1 + 10 launches per layer + 4.
 *
 * Launches per step: 1 + 7 per layer + 3, f16 and q4k alike: the norms and
 * silu·up are made by the GEMVs that read them (gemv.kf's gemv_rms_*,
 * gemv_silu_*; q4k.kf's q4k_q8_gemv_rms_*, _silu_*, which quantize too),
 * and the q4k output projection's 8-bit input is written by the attention
 * combine (decode.kf's sdpa_combine_q8), with no q8_quantize launch.
 * unfused (dc_fuse, c->fuse) launches the norms and silu·up apart (rmsnorm,
 * silu_mul; q4k: decode.kf's rmsnorm_q8, silu_mul_q8): 1 + 10 per layer +
 * 4; --fuse norm fuses the norms and launches silu·up apart: 1 + 8 per
 * layer + 3; --fuse glu (q4k) fuses the norms and makes silu·up's q8 blocks
 * in the gate/up GEMV (q4k_q8_gemv_rms_glu_q8), the down GEMV reading them:
 * 1 + 7 per layer + 3. Each plan
 * carries what it is and the bytes it moves (dc_launch), from which the
 * floor and the profile's rows are made.
 *
 * A rank of a --tp N model (tp.c drives them) is the same model at its
 * shape (m->sh: heads, KV heads, FFN and vocabulary divided by N), built by
 * the same functions, with the output and down GEMVs writing an f32 partial
 * sum (not added into x: each rank holds the whole residual) that a
 * collective (a NULL entry of m->plan, its buffers in m->coll) all-reduces
 * before add_f32_f16 adds it to x, and the vocabulary GEMV writing its
 * rows' slot of the logits, all-gathered: 1 + 9 launches per layer + 3,
 * and 2 collectives per layer + 1. Its random weights are its slices of the
 * one-device model's (rank_weights; Q4_K by whole blocks). */
#include "decode.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const module_files[DC_NMOD] = {
#define X(e, n, f) f,
    DC_MODULES(X)
#undef X
};

/* ---- shape ------------------------------------------------------------------------ */

uint64_t dc_matrix_bytes(dc_wtype wt, uint64_t rows, uint64_t cols)
{
    return wt == DC_Q4K ? rows * (cols / 256) * 144 : rows * cols * 2;
}

static uint64_t qkv_rows(const dc_shape *sh) { return (uint64_t)(sh->heads + 2 * sh->kv_heads) * sh->head_dim; }

/* The sequences of a step (--batch; a --tp rank's: 1). */
static uint32_t nb(const dc_model *m) { return m->c->batch > 1 ? m->c->batch : 1; }

uint64_t dc_params(const dc_shape *sh)
{
    uint64_t hd = (uint64_t)sh->heads * sh->head_dim;
    uint64_t layer = qkv_rows(sh) * sh->hidden + sh->hidden * hd + 3ull * sh->ffn * sh->hidden + 2ull * sh->hidden;
    return 2ull * sh->vocab * sh->hidden + sh->layers * layer + sh->hidden;
}

kf_status dc_shape_check(const dc_shape *sh, dc_wtype wt, kf_error *err)
{
    const char *why = NULL;
    uint32_t hd = sh->heads * sh->head_dim;
    if (!sh->hidden || !sh->heads || !sh->kv_heads || !sh->ffn || !sh->layers || !sh->vocab)
        why = "every dimension must be at least 1";
    else if (sh->head_dim != 64 && sh->head_dim != 128)
        why = "the head dimension must be 64 or 128 (sdpa.kf's D)";
    else if (sh->heads % sh->kv_heads)
        why = "the heads must be a multiple of the KV heads (grouped-query attention)";
    else if (sh->hidden % 8 || sh->ffn % 8)
        why = "hidden and FFN sizes must be multiples of 8 (16-byte vectors)";
    else if (wt == DC_Q4K && (sh->hidden % 256 || sh->ffn % 256 || hd % 256))
        why = "q4k weights need hidden, FFN and heads x head dim multiples of 256 (Q4_K blocks)";
    else if (sh->hidden > 8192)
        why = "hidden must be at most 8192 (rmsnorm holds a row in registers)";
    else if (dc_matrix_bytes(DC_F16, sh->vocab, sh->hidden) / 2 > UINT32_MAX || 2ull * sh->ffn * sh->hidden > UINT32_MAX)
        why = "a matrix must have fewer than 2^32 elements";
    if (why)
        return kf_error_set(err, KF_ERR_USAGE, "model shape hidden %u, heads %u, KV heads %u, head dim %u, FFN %u: %s",
                            sh->hidden, sh->heads, sh->kv_heads, sh->head_dim, sh->ffn, why);
    return KF_OK;
}

/* ---- arguments and plans ---------------------------------------------------------------- */

static kf_arg B(kf_buffer *b) { return (kf_arg){.buf = b}; }

static kf_arg U(uint32_t v)
{
    kf_arg a = {.value = {.type = kf_type_scalar(KF_S_U32)}};
    a.value.lane[0] = v;
    return a;
}

/* The prefetch side job's length argument (decode.kf's PF): the next
 * GEMV's weights w in 16-byte vectors (a u32; the kernel takes min(PF, it)). */
static kf_arg PFN(const kf_buffer *w)
{
    size_t v = kf_buffer_bytes(w) / 16;
    return U(v > UINT32_MAX ? UINT32_MAX : (uint32_t)v);
}

static kf_arg F(float f)
{
    kf_arg a = {.value = {.type = kf_type_scalar(KF_S_F32)}};
    memcpy(&a.value.lane[0], &f, 4);
    return a;
}

static kf_pipeline *pipe_of(dc_model *m, int mod, const char *kernel)
{
    for (uint32_t i = 0; i < m->mod[mod]->nkernels; i++)
        if (!strcmp(m->mod[mod]->kernels[i].name, kernel)) return m->pipe[mod][i];
    return NULL;
}

/* Appends pl (NULL: a collective) to the step's launches, as `kernel`
 * (dc_launch: no bytes yet); pl is destroyed when it cannot be kept. */
static kf_status push(dc_model *m, kf_plan *pl, const char *kernel, kf_error *err)
{
    if (m->nplan == m->plan_cap) {
        uint32_t cap = m->plan_cap ? 2 * m->plan_cap : 256;
        kf_plan **np = realloc(m->plan, cap * sizeof *np);
        if (np) m->plan = np;
        dc_launch *nl = np ? realloc(m->launch, cap * sizeof *nl) : NULL;
        if (nl) m->launch = nl;
        if (!np || !nl) {
            kf_plan_destroy(pl);
            return kf_error_set(err, KF_ERR_NOMEM, "out of memory for %u plans", cap);
        }
        m->plan_cap = cap;
    }
    m->launch[m->nplan] = (dc_launch){.kernel = kernel};
    m->plan[m->nplan++] = pl;
    return KF_OK;
}

/* A plan of kernel `kernel` of module mod; kept as the step's next launch
 * unless out is given (then the caller owns it). */
static kf_status plan(dc_model *m, int mod, const char *kernel, const kf_arg *a, uint32_t n, kf_plan **out,
                      kf_error *err)
{
    kf_pipeline *p = pipe_of(m, mod, kernel);
    if (!p) return kf_error_set(err, KF_ERR_USAGE, "%s has no kernel '%s'", module_files[mod], kernel);
    kf_plan *pl;
    kf_status st = kf_plan_create(p, a, n, NULL, &pl, err);
    if (st != KF_OK || out) {
        if (out) *out = st == KF_OK ? pl : NULL;
        return st;
    }
    return push(m, pl, kernel, err);
}

/* A collective as the step's next "launch": plan NULL, its buffers in
 * m->coll, its dc_launch named after it with no bytes. */
static kf_status coll(dc_model *m, bool gather, kf_buffer *send, kf_buffer *recv, size_t count, kf_error *err)
{
    dc_coll *nc = realloc(m->coll, (m->ncoll + 1) * sizeof *nc);
    if (!nc) return kf_error_set(err, KF_ERR_NOMEM, "out of memory for the step's collectives");
    m->coll = nc;
    m->coll[m->ncoll++] = (dc_coll){gather, send, recv, count};
    kf_status st = push(m, NULL, gather ? "all_gather" : "all_reduce", err);
    if (st == KF_OK) snprintf(m->launch[m->nplan - 1].shape, sizeof m->launch[0].shape, "%zu", count);
    return st;
}

/* A plan kept as the step's next launch, with its shape label (printf-style)
 * and the bytes it moves. */
static kf_status step_plan(dc_model *m, int mod, const char *kernel, const kf_arg *a, uint32_t n, dc_cost cost,
                           kf_error *err, const char *fmt, ...)
{
    kf_status st = plan(m, mod, kernel, a, n, NULL, err);
    if (st != KF_OK) return st;
    dc_launch *l = &m->launch[m->nplan - 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->shape, sizeof l->shape, fmt, ap);
    va_end(ap);
    l->cost = cost;
    return KF_OK;
}

/* Runs a plan made for the purpose once, queued, and drops it. */
static kf_status once(dc_model *m, int mod, const char *kernel, const kf_arg *a, uint32_t n, kf_error *err)
{
    kf_plan *pl;
    kf_status st = plan(m, mod, kernel, a, n, &pl, err);
    if (st == KF_OK) st = kf_plan_launch(pl, KF_DISPATCH_ASYNC, NULL, err);
    kf_plan_destroy(pl);
    return st;
}

/* ---- kernels --------------------------------------------------------------------------- */

/* d into defs, replacing a define of the same name. */
static bool define_set(kf_cli_defines *defs, kf_define d)
{
    for (size_t i = 0; i < defs->len; i++)
        if (!strcmp(defs->data[i].name, d.name)) {
            defs->data[i] = d;
            return true;
        }
    return KF_VEC_PUSH(defs, d);
}

/* kforge-decode's own -D defaults for the step's kernels, each set only when
 * the kernel file declares the constant (a checkout named by --kernels may
 * predate a knob): the GEMVs' early weight loads and trigger (gemv.kf's and
 * q4k.kf's EARLY, TRIGGER 2: each warp's first W loads before dep_wait(),
 * the next kernel launched once the warps issued their last W loads; on the
 * H200 the f16 graph step went from 4.359 to 4.267 ms, 1.180x to 1.154x its
 * floor, in one run; q4k 2.0872 ms plain against 2.0456 with these and
 * decode.kf's, 2026-12-02), decode.kf's EARLY (the q4k step's rmsnorm_q8,
 * silu_mul_q8 and sdpa_combine_q8 trigger at their start, so that the GEMV
 * after each issues its weight loads while it runs), rope.kf's EARLY 2,
 * TRIGGER 1 and sdpa.kf's EARLY (their loads that no kernel before writes
 * issued before the wait: f16 graph 1.154x to 1.138x the floor, same call),
 * and q4k.kf's Q8F_MINB 2 (the fused q4k GEMVs of --fuse norm, glu and on
 * two blocks an SM: the cuda build's --fuse glu step 2.031x -> 1.812x the
 * floor, 2026-12-03; NVRTC spills a few bytes there, so the file's default
 * stays 0), and decode.kf's PF 262144 (the q4k step's small kernels pull
 * the first 4 MB of the next GEMV's weights into L2 with 128 more blocks,
 * one an SM: graph 2.094 -> 2.027 ms on ptx, 2.067 -> 2.010 on cuda, two
 * runs each, 2026-12-04; 2, 6 and 8 MB, or 4 MB in 256 blocks, gain less,
 * 12 MB and more lose). */
#define DC_STEP_DEFAULTS(X) \
    X(GEMV, "EARLY", "true") X(GEMV, "TRIGGER", "2") X(Q4K, "EARLY", "true") X(Q4K, "TRIGGER", "2") \
    X(Q4KN, "EARLY", "true") X(Q4KN, "TRIGGER", "2") X(OWN, "EARLY", "true") X(ROPE, "EARLY", "2") \
    X(ROPE, "TRIGGER", "1") X(SDPA, "EARLY", "true") X(Q4K, "Q8F_MINB", "2") X(Q4KN, "Q8F_MINB", "2") \
    X(OWN, "PF", "262144")

static const struct {
    int mod;
    kf_define def;
} step_defaults[] = {
#define X(m, n, v) {DC_MOD_##m, {n, v}},
    DC_STEP_DEFAULTS(X)
#undef X
};

/* Whether the text of the file at path declares `const NAME` (at a line's
 * start); false when it cannot be read (the compile then says why). */
static bool declares(const char *path, const char *name)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char line[512], want[96];
    snprintf(want, sizeof want, "const %s:", name);
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = !strncmp(line, want, strlen(want));
    fclose(f);
    return found;
}

/* The path of module mod's kernel file. */
static void module_path(const dc_config *c, int mod, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", c->src_dir, module_files[mod]);
}

void dc_step_defaults_text(const dc_config *c, char *out, size_t cap)
{
    static const char *const names[DC_NMOD] = {
#define X(e, n, f) n,
        DC_MODULES(X)
#undef X
    };
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof step_defaults / sizeof step_defaults[0]; i++) {
        char path[4200];
        module_path(c, step_defaults[i].mod, path, sizeof path);
        if (!declares(path, step_defaults[i].def.name) || len >= cap) continue;
        int n = snprintf(out + len, cap - len, "%s%s.%s=%s", len ? " " : "", names[step_defaults[i].mod],
                         step_defaults[i].def.name, step_defaults[i].def.value);
        if (n > 0) len += (size_t)n;
    }
}

/* The -D list of module mod (its file at path): the head dimension of sdpa
 * (D) and of decode.kf's combine (CD); q4k_narrow's lanes per row and q4k's
 * -D; the step's defaults that the file declares (step_defaults); then the
 * user's for mod, which win (-D q4k.EARLY=false, -D decode.EARLY=false:
 * the entry waits). */
static bool module_defines(const dc_config *c, int mod, const char *path, kf_cli_defines *defs, char *dval)
{
    bool ok = true;
    snprintf(dval, 16, "%u", c->sh.head_dim);
    if (mod == DC_MOD_SDPA || mod == DC_MOD_OWN) ok = define_set(defs, (kf_define){mod == DC_MOD_SDPA ? "D" : "CD", dval});
    for (size_t i = 0; i < sizeof step_defaults / sizeof step_defaults[0] && ok; i++)
        if (step_defaults[i].mod == mod && declares(path, step_defaults[i].def.name))
            ok = define_set(defs, step_defaults[i].def);
    if (mod == DC_MOD_Q4KN && ok) ok = define_set(defs, (kf_define){"Q8_LOG_BL", DC_NARROW_LOG_BL});
    for (uint32_t i = 0; i < c->ndefs && ok; i++)
        if (mod == DC_MOD_Q4KN && c->defs[i].module == DC_MOD_Q4K) ok = define_set(defs, c->defs[i].def);
    for (uint32_t i = 0; i < c->ndefs && ok; i++)
        if (c->defs[i].module == mod) ok = define_set(defs, c->defs[i].def);
    return ok;
}

/* Compiles every kernel file (before any device is opened: a bad -D or
 * source is a usage or compile error, never a device one). */
static kf_status compile_modules(dc_model *m, kf_error *err)
{
    for (int i = 0; i < DC_NMOD; i++) {
        char path[4200], dval[16];
        kf_cli_defines defs = {0};
        module_path(m->c, i, path, sizeof path);
        bool ok = module_defines(m->c, i, path, &defs, dval);
        int rc = ok ? kf_cli_compile("decode", path, &defs, KF_OPT_DEFAULT, &m->mod[i]) : KF_EXIT_RUNTIME;
        KF_VEC_FREE(&defs);
        if (rc != KF_EXIT_OK)
            return kf_error_set(err, rc == KF_EXIT_FAIL ? KF_ERR_SOURCE : KF_ERR_USAGE, "%s does not compile%s", path,
                                rc == KF_EXIT_RUNTIME ? " (out of memory)" : " (see above)");
    }
    return KF_OK;
}

/* Every module's pipelines: one build per kernel file. */
static kf_status build_modules(dc_model *m, kf_error *err)
{
    for (int i = 0; i < DC_NMOD; i++) {
        m->pipe[i] = calloc(m->mod[i]->nkernels, sizeof *m->pipe[i]);
        if (!m->pipe[i]) return kf_error_set(err, KF_ERR_NOMEM, "out of memory for pipelines");
        kf_status st = kf_pipeline_create_module(m->dev, m->mod[i], m->pipe[i], err);
        if (st != KF_OK) return st;
    }
    return KF_OK;
}

/* ---- buffers and weights ---------------------------------------------------------------------- */

static kf_status buf(dc_model *m, kf_scalar s, unsigned lanes, uint64_t n, kf_buffer **out, kf_error *err)
{
    return kf_buffer_create(m->dev, lanes > 1 ? kf_type_vector(s, lanes) : kf_type_scalar(s), (size_t)n, out, err);
}

static kf_status matrix(dc_model *m, uint64_t rows, uint64_t cols, kf_buffer **out, kf_error *err)
{
    return m->c->wt == DC_Q4K ? buf(m, KF_S_U8, 1, dc_matrix_bytes(DC_Q4K, rows, cols), out, err)
                              : buf(m, KF_S_F16, 1, rows * cols, out, err);
}

static kf_status weight_buffers(dc_model *m, kf_error *err)
{
    const dc_shape *sh = &m->sh;
    uint64_t hd = (uint64_t)sh->heads * sh->head_dim;
    uint64_t kv = (uint64_t)nb(m) * m->cap * sh->kv_heads * sh->head_dim;   /* [batch, cap, kv_heads, head_dim] */
    kf_status st = buf(m, KF_S_F16, 1, (uint64_t)m->c->sh.vocab * sh->hidden, &m->embed, err);
    if (st == KF_OK) st = buf(m, KF_S_F16, 1, sh->hidden, &m->out_norm, err);
    if (st == KF_OK) st = matrix(m, sh->vocab, sh->hidden, &m->lm_head, err);
    m->layer = calloc(sh->layers, sizeof *m->layer);
    if (!m->layer) return kf_error_set(err, KF_ERR_NOMEM, "out of memory for %u layers", sh->layers);
    for (uint32_t l = 0; l < sh->layers && st == KF_OK; l++) {
        dc_layer *L = &m->layer[l];
        st = buf(m, KF_S_F16, 1, sh->hidden, &L->attn_norm, err);
        if (st == KF_OK) st = matrix(m, qkv_rows(sh), sh->hidden, &L->wqkv, err);
        if (st == KF_OK) st = matrix(m, sh->hidden, hd, &L->wo, err);
        if (st == KF_OK) st = buf(m, KF_S_F16, 1, sh->hidden, &L->ffn_norm, err);
        if (st == KF_OK) st = matrix(m, 2ull * sh->ffn, sh->hidden, &L->wgu, err);
        if (st == KF_OK) st = matrix(m, sh->hidden, sh->ffn, &L->wdown, err);
        if (st == KF_OK) st = buf(m, KF_S_F16, 1, kv, &L->kc, err);
        if (st == KF_OK) st = buf(m, KF_S_F16, 1, kv, &L->vc, err);
    }
    return st;
}

kf_status dc_model_tensors(dc_model *m, dc_tensor_fn f, void *ctx, kf_error *err)
{
    const dc_shape *sh = &m->sh;
    uint64_t hd = (uint64_t)sh->heads * sh->head_dim;
    kf_status st = f(ctx, m->embed, DC_T_EMBED, sh->hidden, err);
    for (uint32_t l = 0; l < sh->layers && st == KF_OK; l++) {
        dc_layer *L = &m->layer[l];
        kf_buffer *t[6] = {L->attn_norm, L->wqkv, L->wo, L->ffn_norm, L->wgu, L->wdown};
        uint64_t cols[6] = {sh->hidden, sh->hidden, hd, sh->hidden, sh->hidden, sh->ffn};
        for (int i = 0; i < 6 && st == KF_OK; i++) st = f(ctx, t[i], i == 0 || i == 3 ? DC_T_NORM : DC_T_MATRIX, cols[i], err);
    }
    if (st == KF_OK) st = f(ctx, m->out_norm, DC_T_NORM, sh->hidden, err);
    return st == KF_OK ? f(ctx, m->lm_head, DC_T_MATRIX, sh->hidden, err) : st;
}

typedef struct {
    dc_model *m;
    uint32_t n;                 /* tensors made so far: the seed's offset */
} fill_ctx;

/* b's n elements = those of a global tensor at base + (i / cols)·ld + i % cols
 * (decode.kf's fill_f16: offset + scale·u of the global index). */
static kf_status fill_part(dc_model *m, kf_buffer *b, uint32_t seed, float scale, float offset, uint64_t cols,
                           uint64_t ld, uint64_t base, kf_error *err)
{
    size_t n = kf_buffer_bytes(b) / 2;
    kf_arg a[8] = {B(b), U((uint32_t)n), U((uint32_t)cols), U((uint32_t)ld), U((uint32_t)base), U(seed), F(scale),
                   F(offset)};
    return once(m, DC_MOD_OWN, "fill_f16", a, 8, err);
}

/* A matrix's fill unit: an f16 element, or a u32 word of Q4_K blocks (36 a
 * block of 256 columns); units(wt, k): a row of k columns'. */
static uint64_t unit_bytes(dc_wtype wt) { return wt == DC_Q4K ? 4 : 2; }
static uint64_t units(dc_wtype wt, uint64_t k) { return wt == DC_Q4K ? k / 256 * 36 : k; }

/* Matrix b of k columns (of the global matrix: the scale) at random, its
 * units those of the global matrix at base + (i / cols)·ld + i % cols: f16
 * uniform with standard deviation 1/sqrt(k), or Q4_K blocks with about that. */
static kf_status fill_matrix(dc_model *m, kf_buffer *b, uint32_t seed, uint64_t k, uint64_t cols, uint64_t ld,
                             uint64_t base, kf_error *err)
{
    if (m->c->wt == DC_F16) return fill_part(m, b, seed, (float)sqrt(3.0 / (double)k), 0.0f, cols, ld, base, err);
    kf_arg a[7] = {B(b), U((uint32_t)(kf_buffer_bytes(b) / 4)), U((uint32_t)cols), U((uint32_t)ld), U((uint32_t)base),
                   U(seed), F((float)(1.0 / (258.0 * sqrt((double)k))))};
    return once(m, DC_MOD_OWN, "fill_q4k", a, 7, err);
}

/* x = offset + scale·u on the device: a whole tensor. */
static kf_status fill_f16(dc_model *m, kf_buffer *b, uint32_t seed, float scale, float offset, kf_error *err)
{
    size_t n = kf_buffer_bytes(b) / 2;
    return fill_part(m, b, seed, scale, offset, n, n, 0, err);
}

/* A tensor of the file order made at random: norms 1 ± 0.1, the embedding
 * in [-1, 1), a matrix of k columns with standard deviation 1/sqrt(k) (so
 * activations keep their scale), f16 uniform or Q4_K blocks. */
static kf_status fill_tensor(void *ctx, kf_buffer *b, dc_tensor_kind kind, uint64_t cols, kf_error *err)
{
    fill_ctx *fc = ctx;
    dc_model *m = fc->m;
    uint32_t seed = m->c->seed * 1000003u + fc->n++;
    if (kind != DC_T_MATRIX) return fill_f16(m, b, seed, kind == DC_T_NORM ? 0.1f : 1.0f, kind == DC_T_NORM ? 1.0f : 0.0f, err);
    uint64_t n = kf_buffer_bytes(b) / unit_bytes(m->c->wt);
    return fill_matrix(m, b, seed, cols, n, n, 0, err);
}

/* ---- a rank's part of the random model ------------------------------------------------------ */

/* n units of matrix b from unit `at` = the global matrix's from `base` (a
 * run of whole rows). */
static kf_status fill_rows(dc_model *m, kf_buffer *b, uint64_t at, uint64_t n, uint64_t base, uint32_t seed,
                           uint64_t k, kf_error *err)
{
    kf_buffer *v;
    uint64_t ub = unit_bytes(m->c->wt) / (m->c->wt == DC_F16 ? 2 : 1);   /* the buffer's elements per unit */
    kf_status st = kf_buffer_view(b, (size_t)(at * ub), (size_t)(n * ub), &v, err);
    if (st == KF_OK) st = fill_matrix(m, v, seed, k, n, n, base, err);
    kf_buffer_destroy(v);
    return st;
}

/* Layer l's matrices: the rank's rows of Wqkv and Wgate_up, its columns of
 * Wo and Wdown, seeds and scales as fill_tensor gives the whole ones. */
static kf_status rank_layer(dc_model *m, dc_layer *L, uint32_t seed, kf_error *err)
{
    const dc_shape *g = &m->c->sh, *sh = &m->sh;
    dc_wtype w = m->c->wt;
    uint64_t H = g->hidden, d = g->head_dim, r = m->rank, q = sh->heads * d, kq = sh->kv_heads * d;
    uint64_t Q = g->heads * d, KV = g->kv_heads * d, f = sh->ffn, F = g->ffn, uh = units(w, H);
    kf_status st = fill_f16(m, L->attn_norm, seed, 0.1f, 1.0f, err);
    if (st == KF_OK) st = fill_rows(m, L->wqkv, 0, q * uh, r * q * uh, seed + 1, H, err);
    if (st == KF_OK) st = fill_rows(m, L->wqkv, q * uh, kq * uh, (Q + r * kq) * uh, seed + 1, H, err);
    if (st == KF_OK) st = fill_rows(m, L->wqkv, (q + kq) * uh, kq * uh, (Q + KV + r * kq) * uh, seed + 1, H, err);
    if (st == KF_OK) st = fill_matrix(m, L->wo, seed + 2, Q, units(w, q), units(w, Q), r * units(w, q), err);
    if (st == KF_OK) st = fill_f16(m, L->ffn_norm, seed + 3, 0.1f, 1.0f, err);
    if (st == KF_OK) st = fill_rows(m, L->wgu, 0, f * uh, r * f * uh, seed + 4, H, err);
    if (st == KF_OK) st = fill_rows(m, L->wgu, f * uh, f * uh, (F + r * f) * uh, seed + 4, H, err);
    return st == KF_OK ? fill_matrix(m, L->wdown, seed + 5, F, units(w, f), units(w, F), r * units(w, f), err) : st;
}

/* The rank's part of the one-device model's random tensors (fill_tensor's
 * order and seeds) and of its caches (weights_make's), its KV heads' columns. */
static kf_status rank_weights(dc_model *m, kf_error *err)
{
    const dc_shape *g = &m->c->sh;
    uint32_t seed = m->c->seed * 1000003u, r = m->rank;
    uint64_t kq = (uint64_t)m->sh.kv_heads * g->head_dim, KV = (uint64_t)g->kv_heads * g->head_dim;
    kf_status st = fill_f16(m, m->embed, seed, 1.0f, 0.0f, err);
    for (uint32_t l = 0; l < g->layers && st == KF_OK; l++) st = rank_layer(m, &m->layer[l], seed + 1 + 6 * l, err);
    uint32_t next = seed + 1 + 6 * g->layers;
    if (st == KF_OK) st = fill_f16(m, m->out_norm, next, 0.1f, 1.0f, err);
    uint64_t vr = (uint64_t)m->sh.vocab * units(m->c->wt, g->hidden);   /* the rank's vocabulary rows' units */
    if (st == KF_OK) st = fill_rows(m, m->lm_head, 0, vr, r * vr, next + 1, g->hidden, err);
    for (uint32_t l = 0; l < g->layers && st == KF_OK; l++) {
        st = fill_part(m, m->layer[l].kc, m->c->seed * 7919u + 2 * l, 1.0f, 0.0f, kq, KV, r * kq, err);
        if (st == KF_OK) st = fill_part(m, m->layer[l].vc, m->c->seed * 7919u + 2 * l + 1, 1.0f, 0.0f, kq, KV, r * kq, err);
    }
    return st == KF_OK ? kf_device_sync(m->dev, err) : st;
}

/* Random weights, and the caches' first `context` rows (random too: every
 * row is filled, the rows past the context are written before they are read). */
static kf_status weights_make(dc_model *m, kf_error *err)
{
    fill_ctx fc = {m, 0};
    if (m->c->tp > 1) return rank_weights(m, err);
    kf_status st = m->c->model ? dc_file_load(m, err) : dc_model_tensors(m, fill_tensor, &fc, err);
    for (uint32_t l = 0; l < m->sh.layers && st == KF_OK; l++) {
        st = fill_f16(m, m->layer[l].kc, m->c->seed * 7919u + 2 * l, 1.0f, 0.0f, err);
        if (st == KF_OK) st = fill_f16(m, m->layer[l].vc, m->c->seed * 7919u + 2 * l + 1, 1.0f, 0.0f, err);
    }
    return st == KF_OK ? kf_device_sync(m->dev, err) : st;
}

/* A rank's: the f32 partial sums of a projection, its slot of the logits. */
static kf_status tp_buffers(dc_model *m, kf_error *err)
{
    kf_status st = buf(m, KF_S_F32, 1, m->sh.hidden, &m->part, err);
    if (st == KF_OK) st = kf_buffer_view(m->logits, (size_t)m->rank * m->sh.vocab, m->sh.vocab, &m->lpart, err);
    return st;
}

/* The tokens: slot s (a view of the batch's B tokens) is step s's input,
 * written by step s - 1's argmax (slot 0: the first input). */
static kf_status token_buffers(dc_model *m, kf_error *err)
{
    uint64_t n = nb(m);
    kf_status st = buf(m, KF_S_U32, 1, (m->c->max_steps + 1ull) * n, &m->tokens, err);
    m->tok = calloc(m->c->max_steps + 1ull, sizeof *m->tok);
    if (!m->tok) return kf_error_set(err, KF_ERR_NOMEM, "out of memory for token views");
    for (uint32_t s = 0; s <= m->c->max_steps && st == KF_OK; s++)
        st = kf_buffer_view(m->tokens, s * n, n, &m->tok[s], err);
    return st;
}

/* Whether the split kernel turns q and the new k itself (--rope fused, with
 * split attention): rope_table makes the step's (cos, sin) once, after
 * decode_pos, and no layer launches rope_qkv_neox. */
static bool rope_fused(const dc_model *m)
{
    return m->c->rope_fused && !m->c->attn_fused;
}

/* pos [2·batch]: the RoPE positions (pos_rope) then the attention lengths
 * (pos_lens), written by decode_pos from the sequences' contexts (ctxs);
 * cs (--rope fused): the (cos, sin) of pos_rope's pairs (rope_table, once a step). */
static kf_status position_buffers(dc_model *m, kf_error *err)
{
    uint32_t n = nb(m);
    kf_status st = buf(m, KF_S_U32, 1, 2 * n, &m->pos, err);
    if (st == KF_OK) st = kf_buffer_view(m->pos, 0, n, &m->pos_rope, err);
    if (st == KF_OK) st = kf_buffer_view(m->pos, n, n, &m->pos_lens, err);
    if (st == KF_OK && rope_fused(m)) st = buf(m, KF_S_F32, 2, n * (m->sh.head_dim / 2), &m->cs, err);
    if (st == KF_OK) st = buf(m, KF_S_U32, 1, n, &m->ctxs, err);
    return st == KF_OK ? kf_buffer_upload(m->ctxs, m->c->ctx, n * sizeof *m->c->ctx, err) : st;
}

/* Every activation holds a row per sequence ([batch, ...]); the gate and up
 * halves of gu are views from its elements 0 and ffn, rows 2·ffn apart. */
static kf_status activation_buffers(dc_model *m, kf_error *err)
{
    const dc_shape *sh = &m->sh;
    uint32_t ps = m->c->split ? m->split : dc_split_least(m->split);   /* partials for the least split tried */
    uint64_t n = nb(m), hd = (uint64_t)sh->heads * sh->head_dim, ns = (m->cap + ps - 1) / ps, f = sh->ffn;
    uint64_t kmax = sh->hidden > sh->ffn ? sh->hidden : sh->ffn;
    kmax = kmax > hd ? kmax : hd;
    kf_status st = buf(m, KF_S_F16, 1, n * sh->hidden, &m->x, err);
    if (st == KF_OK) st = buf(m, KF_S_F16, 1, n * sh->hidden, &m->xn, err);
    if (st == KF_OK) st = buf(m, KF_S_F16, 1, n * qkv_rows(sh), &m->qkv, err);
    if (st == KF_OK) st = buf(m, KF_S_F16, 1, n * hd, &m->q, err);
    if (st == KF_OK) st = buf(m, KF_S_F16, 1, n * hd, &m->attn, err);
    if (st == KF_OK) st = buf(m, KF_S_F32, 1, n * sh->heads * ns * sh->head_dim, &m->po, err);
    if (st == KF_OK) st = buf(m, KF_S_F32, 1, n * sh->heads * ns, &m->plse, err);
    if (st == KF_OK) st = buf(m, KF_S_U32, 1, n * sh->heads, &m->cnt, err);   /* >= b·hkv·cdiv(h/hkv, TGQ), zeros */
    if (st == KF_OK) st = buf(m, KF_S_F16, 1, n * 2 * f, &m->gu, err);
    if (st == KF_OK) st = kf_buffer_view(m->gu, 0, (2 * n - 1) * f, &m->g, err);
    if (st == KF_OK) st = kf_buffer_view(m->gu, f, (2 * n - 1) * f, &m->u, err);
    if (st == KF_OK) st = buf(m, KF_S_F16, 1, n * f, &m->h, err);
    if (st == KF_OK) st = buf(m, KF_S_F32, 1, n * m->c->sh.vocab, &m->logits, err);
    if (st == KF_OK && m->c->tp > 1) st = tp_buffers(m, err);
    if (st == KF_OK) st = position_buffers(m, err);
    if (st == KF_OK) st = buf(m, KF_S_I8, 1, n * kmax, &m->xq, err);
    if (st == KF_OK) st = buf(m, KF_S_F16, 2, n * kmax / 32, &m->xds, err);
    return st == KF_OK ? token_buffers(m, err) : st;
}

/* ---- the step's plans --------------------------------------------------------------------------- */

/* What a GEMV of the step reads as its x: DC_IN_X the vector given (f16;
 * q4k: its 8-bit form in xq, xds, which x's producer wrote: sdpa_combine_q8,
 * or the unfused rmsnorm_q8, silu_mul_q8); the fused forms make x
 * themselves: DC_IN_NORM from the residual x and the norm weight given
 * (gemv_rms_*, q4k_q8_gemv_rms_*), DC_IN_SILU from g and u (gemv_silu_*,
 * q4k_q8_gemv_silu_*). */
typedef enum { DC_IN_X, DC_IN_NORM, DC_IN_SILU } dc_input;

/* The kernel of a GEMV: [q4k][input][ymode], NULL where the step needs none. */
static const char *const gemv_kernels[2][3][3] = {
    {{"gemv_f16_f16_f16", "gemv_f16_f16_f16_acc", "gemv_f16_f16_f32"},
     {"gemv_rms_f16_f16_f16", NULL, "gemv_rms_f16_f16_f32"},
     {NULL, "gemv_silu_f16_f16_f16_acc", "gemv_silu_f16_f16_f32"}},
    {{"q4k_q8_gemv_f16", "q4k_q8_gemv_f16_acc", "q4k_q8_gemv_f32"},
     {"q4k_q8_gemv_rms_f16", NULL, "q4k_q8_gemv_rms_f32"},
     {NULL, "q4k_q8_gemv_silu_f16_acc", "q4k_q8_gemv_silu_f32"}},
};

/* The tensor-core GEMV of a batched step (tc_gemv.kf): [q4k][ymode]. */
static const char *const tc_kernels[2][3] = {
    {"tc_gemv_f16", "tc_gemv_f16_acc", "tc_gemv_f16_f32"},
    {"tc_gemv_q4k_f16", "tc_gemv_q4k_f16_acc", "tc_gemv_q4k_f32"},
};

/* Y (+)= X·Wᵀ for the batch's rows of x (f16; q4k: xq, xds), ymode as
 * matvec's: tc_gemv.kf, the weights read once for every sequence. */
static kf_status tc_matvec(dc_model *m, kf_buffer *w, kf_buffer *x, kf_buffer *y, uint64_t rows, uint64_t cols,
                           int ymode, kf_error *err)
{
    bool q4k = m->c->wt == DC_Q4K;
    double yb = (double)rows * (ymode == 2 ? 4 : 2) * (ymode == 1 ? 2 : 1), k = (double)cols;
    dc_cost c = {(double)dc_matrix_bytes(m->c->wt, rows, cols), (q4k ? k + k / 8 : 2 * k) + yb, 0, 0, 0};
    kf_arg a[7];
    uint32_t n = 0;
    a[n++] = B(w);
    if (q4k) a[n++] = B(m->xq), a[n++] = B(m->xds);
    else a[n++] = B(x);
    a[n++] = B(y), a[n++] = U((uint32_t)rows), a[n++] = U((uint32_t)cols), a[n++] = U(nb(m));
    return step_plan(m, DC_MOD_TC, tc_kernels[q4k][ymode], a, n, c, err, "%llux%llu b%u", (unsigned long long)rows,
                     (unsigned long long)cols, nb(m));
}

/* y (+)= W·x, W rows x cols, x as `in` says (x: the vector, or the norm's
 * weight); ymode 0: f16 y, 1: f16 y += (the residual), 2: f32 y. A batched
 * step's (x given: DC_IN_X) is tc_matvec's. */
static kf_status matvec(dc_model *m, kf_buffer *w, dc_input in, kf_buffer *x, kf_buffer *y, uint64_t rows,
                        uint64_t cols, int ymode, kf_error *err)
{
    if (nb(m) > 1) return tc_matvec(m, w, x, y, rows, cols, ymode, err);
    bool q4k = m->c->wt == DC_Q4K, narrow = q4k && rows < (m->c->narrow_rows ? m->c->narrow_rows : DC_NARROW_ROWS);
    double yb = (double)rows * (ymode == 2 ? 4 : 2) * (ymode == 1 ? 2 : 1), k = (double)cols;
    dc_cost c = {(double)dc_matrix_bytes(m->c->wt, rows, cols) + (in == DC_IN_NORM ? 2 * k : 0), 0, 0, 0, 0};
    kf_arg a[7];
    uint32_t n = 0;
    a[n++] = B(w);
    if (in == DC_IN_X && q4k) a[n++] = B(m->xq), a[n++] = B(m->xds);
    else if (in == DC_IN_X) a[n++] = B(x);
    else if (in == DC_IN_NORM) a[n++] = B(m->x), a[n++] = B(x);
    else a[n++] = B(m->g), a[n++] = B(m->u);
    a[n++] = B(y), a[n++] = U((uint32_t)rows), a[n++] = U((uint32_t)cols);
    if (in == DC_IN_NORM) a[n++] = F(m->sh.eps);
    c.act = (in == DC_IN_X ? (q4k ? k + k / 8 : 2 * k) : in == DC_IN_NORM ? 2 * k : 4 * k) + yb;
    int mod = narrow ? DC_MOD_Q4KN : q4k ? DC_MOD_Q4K : DC_MOD_GEMV;
    return step_plan(m, mod, gemv_kernels[q4k][in][ymode], a, n, c, err, "%llux%llu%s", (unsigned long long)rows,
                     (unsigned long long)cols, narrow ? " narrow" : "");
}

/* The input of the next GEMV: rmsnorm(x)·w, into xn (f16) or, for q4k,
 * straight into the 8-bit xq, xds (the residual adds are the GEMVs'); next
 * is that GEMV's weights, which the q4k kernel prefetches (decode.kf's PF). */
static kf_status norm(dc_model *m, kf_buffer *w, kf_buffer *next, kf_error *err)
{
    const dc_shape *sh = &m->sh;
    double h = sh->hidden;
    if (m->c->wt == DC_F16) {
        kf_arg a[6] = {B(m->x), B(w), B(m->xn), U(nb(m)), U(sh->hidden), F(sh->eps)};
        return step_plan(m, DC_MOD_NORM, "rmsnorm", a, 6, (dc_cost){2 * h, 4 * h, 0, 0, 0}, err, "%u", sh->hidden);
    }
    kf_arg a[9] = {B(m->x), B(w), B(m->xq), B(m->xds), U(nb(m)), U(sh->hidden), F(sh->eps), B(next), PFN(next)};
    return step_plan(m, DC_MOD_OWN, "rmsnorm_q8", a, 9, (dc_cost){2 * h, 3 * h + h / 8, 0, 0, 0}, err, "%u",
                     sh->hidden);
}

/* h = silu(g)·u, the down projection's input (q4k: its 8-bit form); a
 * batched step's rows of g and u are 2·ffn apart (decode.kf's silu_mul_rows:
 * silu_mul.kf takes one contiguous row); next as norm's. */
static kf_status silu(dc_model *m, kf_buffer *next, kf_error *err)
{
    uint32_t n = m->sh.ffn;
    if (m->c->wt == DC_F16 && nb(m) == 1) {
        kf_arg a[4] = {B(m->g), B(m->u), B(m->h), U(n)};
        return step_plan(m, DC_MOD_SILU, "silu_mul", a, 4, (dc_cost){0, 6.0 * n, 0, 0, 0}, err, "%u", n);
    }
    if (m->c->wt == DC_F16) {
        kf_arg a[6] = {B(m->g), B(m->u), B(m->h), U(n), U(nb(m)), U(2 * n)};
        return step_plan(m, DC_MOD_OWN, "silu_mul_rows", a, 6, (dc_cost){0, 6.0 * n, 0, 0, 0}, err, "%u", n);
    }
    kf_arg a[9] = {B(m->g), B(m->u), B(m->xq), B(m->xds), U(n), U(nb(m)), U(2 * n), B(next), PFN(next)};
    return step_plan(m, DC_MOD_OWN, "silu_mul_q8", a, 9, (dc_cost){0, 5.0 * n + n / 8.0, 0, 0, 0}, err, "%u", n);
}

/* Layer L's attention at `split`: by default sdpa_decode_split (s) and the
 * step's combine (c, its module in *cmod): sdpa_decode_combine, or for q4k
 * sdpa_combine_q8, which writes the output projection's 8-bit input
 * directly. With --attn fused one launch, sdpa_decode_fused (q4k:
 * sdpa_decode_fused_q8), whose last block of each head group merges the
 * partials (cnt: one counter a group, left at zero by every launch).
 * Returns the fused kernel or the combine; *ns, *nc: the arguments in s, c. */
static const char *attn_args(dc_model *m, dc_layer *L, uint32_t split, kf_arg s[14], unsigned *ns, kf_arg c[11],
                             unsigned *nc, int *cmod)
{
    const dc_shape *sh = &m->sh;
    bool q8 = m->c->wt == DC_Q4K;
    *cmod = DC_MOD_SDPA;
    if (m->c->attn_fused) {
        kf_arg fa[13] = {B(m->q), B(L->kc), B(L->vc), B(m->pos_lens), B(m->po), B(m->plse), B(m->cnt), B(m->attn),
                         U(nb(m)), U(sh->heads), U(sh->kv_heads), U(m->cap), U(split)};
        kf_arg fq[14] = {B(m->q), B(L->kc), B(L->vc), B(m->pos_lens), B(m->po), B(m->plse), B(m->cnt), B(m->xq),
                         B(m->xds), U(nb(m)), U(sh->heads), U(sh->kv_heads), U(m->cap), U(split)};
        *ns = q8 ? 14 : 13;
        *nc = 0;
        memcpy(s, q8 ? fq : fa, *ns * sizeof *s);
        return q8 ? "sdpa_decode_fused_q8" : "sdpa_decode_fused";
    }
    kf_arg sa[11] = {B(m->q), B(L->kc), B(L->vc), B(m->pos_lens), B(m->po), B(m->plse), U(nb(m)), U(sh->heads),
                     U(sh->kv_heads), U(m->cap), U(split)};
    kf_arg ca[8] = {B(m->po), B(m->plse), B(m->pos_lens), B(m->attn), U(nb(m)), U(sh->heads), U(m->cap), U(split)};
    kf_arg cq[11] = {B(m->po), B(m->plse), B(m->pos_lens), B(m->xq), B(m->xds), U(nb(m)), U(sh->heads), U(m->cap),
                     U(split), B(L->wo), PFN(L->wo)};
    *ns = 11;
    *nc = q8 ? 11 : 8;
    memcpy(s, sa, sizeof sa);
    memcpy(c, q8 ? cq : ca, *nc * sizeof *c);
    if (q8) *cmod = DC_MOD_OWN;
    return q8 ? "sdpa_combine_q8" : "sdpa_decode_combine";
}

kf_status dc_attention_plans(dc_model *m, uint32_t split, kf_plan **ps, kf_plan **pc, kf_error *err)
{
    kf_arg s[14], c[11];
    unsigned ns, nc;
    int cmod;
    const char *ck = attn_args(m, &m->layer[0], split, s, &ns, c, &nc, &cmod);
    *pc = NULL;
    if (m->c->attn_fused) return plan(m, DC_MOD_SDPA, ck, s, ns, ps, err);
    kf_status st = plan(m, DC_MOD_SDPA, "sdpa_decode_split", s, ns, ps, err);
    return st == KF_OK ? plan(m, cmod, ck, c, nc, pc, err) : st;
}

static kf_status attention(dc_model *m, dc_layer *L, kf_error *err)
{
    const dc_shape *sh = &m->sh;
    double d = sh->head_dim, hq = sh->heads * d, kvr = sh->kv_heads * d, nqkv = hq + 2 * kvr;
    double part = sh->heads * (d + 1) * 4;   /* one split's partials: po and plse */
    kf_arg r[11] = {B(m->qkv), B(m->pos_rope), B(m->q), B(L->kc), B(L->vc), U(nb(m)), U(sh->heads),
                    U(sh->kv_heads), U(m->cap), U(sh->head_dim), F(sh->theta)};
    kf_arg s[14], c[11];
    unsigned ns, nc;
    int cmod;
    const char *ck = attn_args(m, L, m->split, s, &ns, c, &nc, &cmod);
    double cact = m->c->wt == DC_Q4K ? hq + hq / 8 + 4 : 2 * hq + 4;
    kf_status st;
    if (rope_fused(m)) {   /* q from the fused row; the newest k, v row written instead of read */
        kf_arg sr[12] = {B(m->qkv), B(m->cs), B(L->kc), B(L->vc), B(m->pos_lens), B(m->po), B(m->plse),
                         U(nb(m)), U(sh->heads), U(sh->kv_heads), U(m->cap), U(m->split)};
        st = step_plan(m, DC_MOD_SDPA, "sdpa_decode_split_rope_neox", sr, 12,
                       (dc_cost){0, 2 * nqkv + 4 * d + 4, 0, 4 * kvr, part}, err, "%ux%u/%u split %u", sh->heads,
                       sh->head_dim, sh->kv_heads, m->split);
    } else {
        st = step_plan(m, DC_MOD_ROPE, "rope_qkv_neox", r, 11, (dc_cost){0, 2 * nqkv + 2 * hq + 4, 4 * kvr, 0, 0}, err,
                       "%ux%u", sh->heads + 2 * sh->kv_heads, sh->head_dim);
        if (st == KF_OK && m->c->attn_fused)   /* the split's bytes, and the merge's partials and output */
            return step_plan(m, DC_MOD_SDPA, ck, s, ns, (dc_cost){0, 2 * hq + 4 + cact, 0, 4 * kvr, 2 * part}, err,
                             "%ux%u/%u split %u", sh->heads, sh->head_dim, sh->kv_heads, m->split);
        if (st == KF_OK)
            st = step_plan(m, DC_MOD_SDPA, "sdpa_decode_split", s, ns, (dc_cost){0, 2 * hq + 4, 0, 4 * kvr, part}, err,
                           "%ux%u/%u split %u", sh->heads, sh->head_dim, sh->kv_heads, m->split);
    }
    return st == KF_OK ? step_plan(m, cmod, ck, c, nc, (dc_cost){0, cact, 0, 0, part}, err, "%ux%u split %u", sh->heads,
                                   sh->head_dim, m->split)
                       : st;
}

/* x += W·a (the output and down projections). Over several devices each
 * rank's share is an f32 partial sum, all-reduced, then added to x with one
 * f16 rounding, as the one-device _acc GEMV adds its f32 sum. */
static kf_status residual(dc_model *m, kf_buffer *w, dc_input in, kf_buffer *a, uint64_t cols, kf_error *err)
{
    if (m->c->tp <= 1) return matvec(m, w, in, a, m->x, m->sh.hidden, cols, 1, err);
    kf_arg ad[3] = {B(m->x), B(m->part), U(m->sh.hidden)};
    kf_status st = matvec(m, w, in, a, m->part, m->sh.hidden, cols, 2, err);
    if (st == KF_OK) st = coll(m, false, m->part, m->part, m->sh.hidden, err);
    double h = m->sh.hidden;
    return st == KF_OK ? step_plan(m, DC_MOD_OWN, "add_f32_f16", ad, 3, (dc_cost){0, 8 * h, 0, 0, 0}, err, "%u",
                                   m->sh.hidden)
                       : st;
}

/* Whether the gate/up GEMV makes silu·up's q8 blocks itself (--fuse glu,
 * q4k, one sequence): the down projection then reads them (DC_IN_X). */
static bool glu(const dc_model *m)
{
    return m->c->fuse == DC_FUSE_GLU && m->c->wt == DC_Q4K && nb(m) == 1;
}

/* Whether the GEMVs make their own x: the norm (silu: false) or silu·up
 * (silu: true), as dc_fuse says; never for a batch. */
static bool fused(const dc_model *m, bool silu)
{
    if (nb(m) > 1) return false;   /* no batched (tc_gemv) form of gemv_rms_*, gemv_silu_* */
    if (m->c->fuse == DC_FUSE_NORM || glu(m)) return !silu;
    return m->c->fuse == DC_FUSE_ON || m->c->fuse == DC_FUSE_GLU || (m->c->fuse == DC_FUSE_AUTO && m->c->wt == DC_F16);
}

/* xq, xds = the q8 blocks of silu(Wg·x)·(Wu·x), x = rmsnorm(x)·ffn_norm
 * (--fuse glu): q4k.kf's q4k_q8_gemv_rms_glu_q8 over Wgu. */
static kf_status glu_matvec(dc_model *m, dc_layer *L, kf_error *err)
{
    const dc_shape *sh = &m->sh;
    double k = sh->hidden, f = sh->ffn;
    kf_arg a[8] = {B(L->wgu), B(m->x), B(L->ffn_norm), B(m->xq), B(m->xds), U(2 * sh->ffn), U(sh->hidden), F(sh->eps)};
    dc_cost c = {(double)dc_matrix_bytes(DC_Q4K, 2ull * sh->ffn, sh->hidden) + 2 * k, 2 * k + f + f / 8, 0, 0, 0};
    return step_plan(m, DC_MOD_Q4K, "q4k_q8_gemv_rms_glu_q8", a, 8, c, err, "%ux%u glu", 2 * sh->ffn, sh->hidden);
}

/* y = W·(rmsnorm(x)·nw), ymode as matvec's: one fused GEMV, or (unfused)
 * the norm's launch and the GEMV over its output. */
static kf_status normed_matvec(dc_model *m, kf_buffer *nw, kf_buffer *w, kf_buffer *y, uint64_t rows, int ymode,
                               kf_error *err)
{
    if (fused(m, false)) return matvec(m, w, DC_IN_NORM, nw, y, rows, m->sh.hidden, ymode, err);
    kf_status st = norm(m, nw, w, err);
    return st == KF_OK ? matvec(m, w, DC_IN_X, m->xn, y, rows, m->sh.hidden, ymode, err) : st;
}

/* logits = W·(rmsnorm(x)·out_norm); over several devices each rank's rows,
 * all-gathered. */
static kf_status vocab_plans(dc_model *m, kf_error *err)
{
    if (m->c->tp <= 1) return normed_matvec(m, m->out_norm, m->lm_head, m->logits, m->sh.vocab, 2, err);
    kf_status st = normed_matvec(m, m->out_norm, m->lm_head, m->lpart, m->sh.vocab, 2, err);
    return st == KF_OK ? coll(m, true, m->lpart, m->logits, m->sh.vocab, err) : st;
}

/* x += Wdown·(silu(g)·u): fused, or (unfused) silu_mul's launch first
 * (glu: the gate/up GEMV made its q8 blocks). */
static kf_status ffn_down(dc_model *m, dc_layer *L, kf_error *err)
{
    if (fused(m, true)) return residual(m, L->wdown, DC_IN_SILU, NULL, m->sh.ffn, err);
    kf_status st = glu(m) ? KF_OK : silu(m, L->wdown, err);
    return st == KF_OK ? residual(m, L->wdown, DC_IN_X, m->h, m->sh.ffn, err) : st;
}

static kf_status layer_plans(dc_model *m, dc_layer *L, kf_error *err)
{
    const dc_shape *sh = &m->sh;
    uint64_t hd = (uint64_t)sh->heads * sh->head_dim;
    kf_status st = normed_matvec(m, L->attn_norm, L->wqkv, m->qkv, qkv_rows(sh), 0, err);
    if (st == KF_OK) st = attention(m, L, err);
    if (st == KF_OK) st = residual(m, L->wo, DC_IN_X, m->attn, hd, err);
    if (st == KF_OK && glu(m)) st = glu_matvec(m, L, err);
    else if (st == KF_OK) st = normed_matvec(m, L->ffn_norm, L->wgu, m->gu, 2ull * sh->ffn, 0, err);
    return st == KF_OK ? ffn_down(m, L, err) : st;
}

/* Every launch of step 0, in order; the three re-targeted plans remembered
 * (decode_pos's s: parameter 2). */
static kf_status step_plans(dc_model *m, kf_error *err)
{
    const dc_shape *sh = &m->sh;
    double h = sh->hidden;
    uint32_t vocab = m->c->sh.vocab;   /* argmax and embed: the whole vocabulary on every rank */
    kf_arg p[4] = {B(m->pos), B(m->ctxs), U(0), U(nb(m))};
    kf_arg am[4] = {B(m->logits), B(m->tok[1]), U(nb(m)), U(vocab)};
    kf_arg em[6] = {B(m->embed), B(m->tok[1]), B(m->x), U(nb(m)), U(sh->hidden), U(vocab)};
    kf_status st = step_plan(m, DC_MOD_OWN, "decode_pos", p, 4, (dc_cost){0, 12, 0, 0, 0}, err, "%u", nb(m));
    if (st == KF_OK) m->pos_plan = m->plan[m->nplan - 1];
    if (st == KF_OK && rope_fused(m)) {
        kf_arg rt[5] = {B(m->cs), B(m->pos_rope), U(nb(m)), U(sh->head_dim), F(sh->theta)};
        st = step_plan(m, DC_MOD_ROPE, "rope_table", rt, 5, (dc_cost){0, 4.0 * nb(m) * (1 + sh->head_dim), 0, 0, 0}, err,
                       "%ux%u", nb(m), sh->head_dim);
    }
    for (uint32_t l = 0; l < sh->layers && st == KF_OK; l++) st = layer_plans(m, &m->layer[l], err);
    if (st == KF_OK) st = vocab_plans(m, err);
    if (st == KF_OK)
        st = step_plan(m, DC_MOD_ARGMAX, "argmax", am, 4, (dc_cost){0, 4.0 * vocab + 4, 0, 0, 0}, err, "%u", vocab);
    if (st == KF_OK) m->argmax_plan = m->plan[m->nplan - 1];
    if (st == KF_OK) st = step_plan(m, DC_MOD_EMBED, "embed", em, 6, (dc_cost){0, 4 * h + 4, 0, 0, 0}, err, "%u", sh->hidden);
    if (st != KF_OK) return st;
    m->embed_plan = m->plan[m->nplan - 1];
    m->argmax_idx = kf_pipeline_param_index(pipe_of(m, DC_MOD_ARGMAX, "argmax"), "idx");
    m->embed_ids = kf_pipeline_param_index(pipe_of(m, DC_MOD_EMBED, "embed"), "ids");
    return KF_OK;
}

dc_bytes dc_launch_bytes(const dc_model *m, uint32_t i, uint64_t len)
{
    const dc_cost *c = &m->launch[i].cost;
    double n = nb(m), pos = 0, ns = 0;
    for (uint32_t b = 0; b < nb(m); b++) {   /* sequence b is ctx[b] - context shorter than the longest */
        uint64_t lb = len - (m->c->context - m->c->ctx[b]);
        pos += (double)lb, ns += (double)((lb + m->split - 1) / m->split);
    }
    return (dc_bytes){c->weights, n * c->kv + c->kv_pos * pos, n * c->act + c->part * ns};
}

dc_bytes dc_step_bytes(const dc_model *m, uint64_t len)
{
    dc_bytes t = {0, 0, 0};
    for (uint32_t i = 0; i < m->nplan; i++) {
        dc_bytes b = dc_launch_bytes(m, i, len);
        t.weights += b.weights, t.kv += b.kv, t.act += b.act;
    }
    return t;
}

/* tok[0] = the input tokens, embedded into x (the first step's input):
 * sequence b's is token + b (modulo the vocabulary). */
static kf_status first_input(dc_model *m, kf_error *err)
{
    uint32_t t[DC_BATCH_MAX], v = m->c->sh.vocab;
    if (m->c->token >= v)
        return kf_error_set(err, KF_ERR_USAGE, "--token %u is not below the vocabulary (%u)", m->c->token, v);
    for (uint32_t b = 0; b < nb(m); b++) t[b] = (uint32_t)(((uint64_t)m->c->token + b) % v);
    kf_status st = kf_buffer_upload(m->tok[0], t, nb(m) * sizeof *t, err);
    if (st == KF_OK) st = kf_plan_set_buffer(m->embed_plan, (uint32_t)m->embed_ids, m->tok[0], err);
    if (st == KF_OK) st = kf_plan_launch(m->embed_plan, KF_DISPATCH_SYNC, NULL, err);
    return st;
}

static kf_status record(dc_model *m, kf_error *err)
{
    kf_status st = kf_graph_begin(m->dev, err);
    for (uint32_t i = 0; i < m->nplan && st == KF_OK; i++) st = kf_plan_launch(m->plan[i], KF_DISPATCH_ASYNC, NULL, err);
    return st == KF_OK ? kf_graph_end(m->dev, &m->graph, err) : st;
}

kf_status dc_model_record(dc_model *m, kf_error *err)
{
    kf_graph_destroy(m->graph);
    m->graph = NULL;
    return record(m, err);
}

uint32_t dc_split_guess(const dc_config *c, const dc_shape *sh, const kf_device *dev)
{
    kf_device_props dp;
    kf_device_props_get(dev, &dp);
    uint64_t sms = dp.sm_count ? dp.sm_count : 132, groups = (sh->heads / sh->kv_heads + 3) / 4;
    uint64_t seqs = c->batch > 1 ? c->batch : 1;
    uint64_t want = ((uint64_t)c->context * sh->kv_heads * groups * seqs + 2 * sms - 1) / (2 * sms);
    uint32_t split = 16;
    while (split < want && split < 4096) split *= 2;
    return split;
}

kf_status dc_rank_open(dc_model *m, const dc_config *c, kf_backend b, uint32_t rank, uint32_t split, kf_error *err)
{
    uint32_t tp = c->tp > 1 ? c->tp : 1;
    memset(m, 0, sizeof *m);
    m->c = c;
    m->rank = rank;
    m->sh = c->sh;
    m->sh.heads /= tp, m->sh.kv_heads /= tp, m->sh.ffn /= tp, m->sh.vocab /= tp;
    m->cap = c->context + c->max_steps;
    kf_status st = dc_shape_check(&c->sh, c->wt, err);
    if (st == KF_OK) st = dc_tp_check(c, err);
    if (st == KF_OK) st = compile_modules(m, err);
    if (st == KF_OK) st = kf_device_open(b, (int)rank, &m->dev, err);
    if (st != KF_OK) return st;
    m->split = split ? split : c->split ? c->split : dc_split_guess(c, &m->sh, m->dev);
    st = build_modules(m, err);
    if (st == KF_OK) st = weight_buffers(m, err);
    if (st == KF_OK) st = activation_buffers(m, err);
    if (st == KF_OK) st = weights_make(m, err);
    if (st == KF_OK) st = dc_busy_create(m, err);
    if (st == KF_OK && !split && !c->split) st = dc_split_tune(m, err);
    if (st == KF_OK) st = step_plans(m, err);
    return st == KF_OK ? first_input(m, err) : st;
}

kf_status dc_model_open(dc_model *m, const dc_config *c, kf_backend b, bool graph, kf_error *err)
{
    if (c->tp > 1) return dc_tp_open(m, c, b, graph, err);
    kf_status st = dc_rank_open(m, c, b, 0, 0, err);
    return st == KF_OK && graph ? record(m, err) : st;
}

/* ---- steps ----------------------------------------------------------------------------------------- */

kf_status dc_model_retarget(dc_model *m, uint32_t s, kf_error *err)
{
    if (m->ranks) {
        kf_status st = KF_OK;
        for (uint32_t r = 0; r < m->c->tp && st == KF_OK; r++) st = dc_model_retarget(&m->ranks[r], s, err);
        return st;
    }
    if (s >= m->c->max_steps)
        return kf_error_set(err, KF_ERR_USAGE, "step %u is past the %u steps the model was made for", s, m->c->max_steps);
    kf_value p = U(s).value;
    kf_status st = kf_plan_set_value(m->pos_plan, 2, &p, err);
    if (st == KF_OK) st = kf_plan_set_buffer(m->argmax_plan, (uint32_t)m->argmax_idx, m->tok[s + 1], err);
    return st == KF_OK ? kf_plan_set_buffer(m->embed_plan, (uint32_t)m->embed_ids, m->tok[s + 1], err) : st;
}

kf_status dc_model_step(dc_model *m, uint32_t s, dc_mode mode, kf_error *err)
{
    if (m->ranks) return dc_tp_step(m, s, mode, err);
    kf_status st = dc_model_retarget(m, s, err);
    if (st != KF_OK) return st;
    if (mode == DC_GRAPH) {
        if (!m->graph) return kf_error_set(err, KF_ERR_USAGE, "graph mode needs the step recorded (a bug)");
        return kf_graph_launch(m->graph, KF_DISPATCH_ASYNC, NULL, err);
    }
    kf_dispatch_mode dm = mode == DC_SYNC ? KF_DISPATCH_SYNC : KF_DISPATCH_ASYNC;
    for (uint32_t i = 0; i < m->nplan && st == KF_OK; i++) st = kf_plan_launch(m->plan[i], dm, NULL, err);
    return st;
}

kf_status dc_model_sync(dc_model *m, kf_error *err)
{
    kf_status st = KF_OK;
    for (uint32_t r = 0; m->ranks && r < m->c->tp && st == KF_OK; r++) st = kf_device_sync(m->ranks[r].dev, err);
    return m->ranks ? st : kf_device_sync(m->dev, err);
}

kf_status dc_model_logits(dc_model *m, float *logits, kf_error *err)
{
    if (m->ranks) m = &m->ranks[0];
    return kf_buffer_download(m->logits, logits, (size_t)nb(m) * m->c->sh.vocab * 4, err);
}

kf_status dc_model_token(dc_model *m, uint32_t s, uint32_t *token, kf_error *err)
{
    if (m->ranks) m = &m->ranks[0];
    return kf_buffer_download(m->tok[s + 1], token, nb(m) * sizeof *token, err);
}

kf_status dc_model_force_token(dc_model *m, uint32_t s, const uint32_t *t, kf_error *err)
{
    if (m->ranks) {
        kf_status st = KF_OK;
        for (uint32_t r = 0; r < m->c->tp && st == KF_OK; r++) st = dc_model_force_token(&m->ranks[r], s, t, err);
        return st;
    }
    kf_status st = kf_buffer_upload(m->tok[s + 1], t, nb(m) * sizeof *t, err);
    if (st == KF_OK) st = kf_plan_set_buffer(m->embed_plan, (uint32_t)m->embed_ids, m->tok[s + 1], err);
    return st == KF_OK ? kf_plan_launch(m->embed_plan, KF_DISPATCH_SYNC, NULL, err) : st;
}

void dc_model_close(dc_model *m)
{
    if (!m->c) return;
    if (m->ranks || m->comm) {
        dc_tp_close(m);
        return;
    }
    kf_graph_destroy(m->graph);
    kf_plan_destroy(m->busy);
    kf_buffer_destroy(m->sink);
    for (uint32_t i = 0; i < m->nplan; i++) kf_plan_destroy(m->plan[i]);
    free(m->plan);
    free(m->coll);
    free(m->launch);
    for (uint32_t s = 0; m->tok && s <= m->c->max_steps; s++) kf_buffer_destroy(m->tok[s]);
    free(m->tok);
    kf_buffer *views[] = {m->g, m->u, m->pos_rope, m->pos_lens, m->lpart};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) kf_buffer_destroy(views[i]);
    kf_buffer *act[] = {m->x, m->xn, m->qkv, m->q, m->attn, m->po, m->plse, m->cnt, m->gu, m->h, m->logits,
                        m->pos, m->cs, m->ctxs, m->tokens, m->xq, m->xds, m->embed, m->out_norm, m->lm_head, m->part};
    for (size_t i = 0; i < sizeof act / sizeof act[0]; i++) kf_buffer_destroy(act[i]);
    for (uint32_t l = 0; m->layer && l < m->sh.layers; l++) {
        dc_layer *L = &m->layer[l];
        kf_buffer *t[8] = {L->attn_norm, L->wqkv, L->wo, L->ffn_norm, L->wgu, L->wdown, L->kc, L->vc};
        for (int i = 0; i < 8; i++) kf_buffer_destroy(t[i]);
    }
    free(m->layer);
    for (int i = 0; i < DC_NMOD; i++) {
        for (uint32_t k = 0; m->pipe[i] && k < m->mod[i]->nkernels; k++) kf_pipeline_destroy(m->pipe[i][k]);
        free(m->pipe[i]);
        kf_module_free(m->mod[i]);
    }
    kf_device_close(m->dev);
    memset(m, 0, sizeof *m);
}
