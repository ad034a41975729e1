/* kforge-decode (tools/decode/): the decode step of a Llama-style model run
 * from the library's kernels through the runtime API, checked against an
 * independent C reference and timed against the bandwidth floor and PyTorch.
 *
 *   main.c    options, the run (tokens printed), exit status
 *   model.c   the model on a device: kernels compiled, weights made or loaded,
 *             buffers, one plan per launch for the whole loop, the step in
 *             sync / async / graph mode, the position and tokens re-targeted
 *   file.c    the model file format (load, save)
 *   ref.c     the independent reference step (plain C, double, f16 storage)
 *   check.c   --check: every step's logits against the reference, or the
 *             cuda and ptx paths against each other
 *   bench.c   --bench: ms per step, tokens/s, host cost per launch, the
 *             bandwidth floor and the ratio to it, the PyTorch peer
 *   tp.c      --tp N: the step split over N devices (a rank model per device,
 *             the collectives between), model.c building each rank's part
 *   bench_tp.c  --tp N --bench: the all-reduce against NCCL's own, the step
 *             against a GPU's floor plus its collectives
 *
 * One step (the list), per layer: add+RMSNorm -> fused QKV GEMV ->
 * RoPE on q and k, k and v appended to the layer's cache at the position ->
 * sdpa_decode (split + combine) -> output GEMV (+ residual, the _acc form) ->
 * add+RMSNorm -> fused gate/up GEMV -> silu_mul -> down GEMV (+ residual);
 * then the final norm, the vocabulary GEMV, argmax, and the chosen token
 * embedded as the next step's input. The residual adds are the _acc GEMVs',
 * so add_rmsnorm adds a zero vector. Q4_K weights quantize the GEMV's input
 * to 8 bits first (q8_quantize_f16, then q4k_q8_gemv), as llama.cpp does. */
#ifndef KF_DECODE_H
#define KF_DECODE_H

#include "../cmd_common.h"

typedef struct {
    uint32_t hidden, heads, kv_heads, head_dim, ffn, layers, vocab;
    float eps, theta;
} dc_shape;

typedef enum { DC_F16 = 0, DC_Q4K = 1 } dc_wtype;
typedef enum { DC_SYNC, DC_ASYNC, DC_GRAPH } dc_mode;

/* The kernel files a step uses (kernels/NAME.kf) and the program's own. */
#define DC_MODULES(X) \
    X(GEMV, "gemv") X(Q4K, "q4k") X(SDPA, "sdpa") X(ROPE, "rope") X(SILU, "silu_mul") \
    X(NORM, "add_rmsnorm") X(EMBED, "embed") X(ARGMAX, "argmax") X(OWN, "decode")
enum {
#define X(e, n) DC_MOD_##e,
    DC_MODULES(X)
#undef X
    DC_NMOD
};

/* A -D override for one kernel file: "gemv.ROWS=1". */
typedef struct {
    int module;
    kf_define def;
} dc_define;

typedef struct {
    dc_shape sh;
    dc_wtype wt;
    uint32_t seed;
    const char *model;          /* the weights file (shape and type from it), or NULL: random */
    const unsigned char *model_data;   /* its bytes (dc_file_read) */
    size_t model_len;
    uint32_t context;           /* positions already in the cache (random content) */
    uint32_t steps;             /* decode steps */
    uint32_t max_steps;         /* the most steps any run of this model takes (cache and token room) */
    uint32_t token;             /* the input token of the first step */
    uint32_t split;             /* sdpa positions per split block; 0: chosen for the context */
    uint32_t tp;                /* devices the model is split over (--tp; 0 and 1: one) */
    const char *src_dir;        /* the checkout: kernels/ and tools/decode/decode.kf */
    dc_define defs[32];
    uint32_t ndefs;
} dc_config;

typedef struct {
    kf_buffer *attn_norm, *wqkv, *wo, *ffn_norm, *wgu, *wdown, *kc, *vc;
} dc_layer;

/* One collective of a step split over devices: this rank's buffers. */
typedef struct {
    bool gather;                /* all-gather (the vocabulary), else an all-reduce (sum) */
    kf_buffer *send, *recv;
    size_t count;               /* elements per rank */
} dc_coll;

/* A model on a device with everything one step needs, made once; or, with
 * --tp N > 1, the driver of N such models (ranks), one per device, each
 * holding its part of every layer (tp.c). */
typedef struct dc_model {
    const dc_config *c;
    dc_shape sh;                /* this rank's: heads, KV heads, FFN and vocabulary divided by tp */
    uint32_t rank;
    kf_device *dev;             /* the driver: rank 0's */
    kf_module *mod[DC_NMOD];
    kf_pipeline **pipe[DC_NMOD];
    uint32_t cap;               /* cache rows: context + max_steps */
    uint32_t split;             /* sdpa split in use */
    kf_buffer *embed, *out_norm, *lm_head;
    dc_layer *layer;
    kf_buffer *x, *zero, *xn, *qkv, *q, *attn, *po, *plse, *gu, *g, *u, *h, *logits;
    kf_buffer *pos, *pos_rope, *pos_lens, *tokens, **tok, *xq, *xds;
    kf_plan **plan;             /* every launch of a step, in order */
    uint32_t nplan, plan_cap;
    kf_plan *pos_plan, *argmax_plan, *embed_plan;
    int argmax_idx, embed_ids;  /* the re-bound parameters */
    kf_graph *graph;            /* the step, recorded (graph mode) */
    /* tensor parallelism: a rank's */
    kf_buffer *part;            /* f32 [hidden]: this rank's share of an output or down projection */
    kf_buffer *lpart;           /* the view of logits this rank's vocabulary rows fill */
    dc_coll *coll;              /* the step's collectives in order; plan[i] NULL marks each */
    uint32_t ncoll;
    /* the driver's */
    struct dc_model *ranks;     /* tp models, or NULL (one device) */
    kf_comm *comm;
    kf_graph **graphs;          /* each rank's recorded step (graph mode) */
    kf_buffer **send, **recv;   /* scratch: one collective's buffers over the ranks */
} dc_model;

/* Model dimensions checked (every kernel's constraints), a message in err. */
kf_status dc_shape_check(const dc_shape *sh, dc_wtype wt, kf_error *err);
/* Weights of one matrix of rows x cols: bytes. */
uint64_t dc_matrix_bytes(dc_wtype wt, uint64_t rows, uint64_t cols);
/* Parameters of the model. */
uint64_t dc_params(const dc_shape *sh);

/* Opens backend b, compiles the kernels (compile errors printed as kforge
 * prints them: KF_ERR_SOURCE), makes the weights (random on the device, or
 * c->model), the buffers and the plans; graph: records the step once.
 * The first step's input is embedded. dc_model_close frees everything. */
kf_status dc_model_open(dc_model *m, const dc_config *c, kf_backend b, bool graph, kf_error *err);
void dc_model_close(dc_model *m);
/* Runs step s (position context + s; s < max_steps) in mode `mode` (graph
 * needs the recording). Async and graph leave it queued; the next read or
 * dc_model_sync waits for it. */
kf_status dc_model_step(dc_model *m, uint32_t s, dc_mode mode, kf_error *err);
/* Waits for every device of the model. */
kf_status dc_model_sync(dc_model *m, kf_error *err);
/* After step s (synced): its logits (vocab f32) and chosen token. */
kf_status dc_model_logits(dc_model *m, float *logits, kf_error *err);
kf_status dc_model_token(dc_model *m, uint32_t s, uint32_t *token, kf_error *err);
/* Makes token t the input of step s + 1 (replacing the one step s chose). */
kf_status dc_model_force_token(dc_model *m, uint32_t s, uint32_t t, kf_error *err);

/* Tensor parallelism (tp.c), Megatron-style over c->tp devices: each rank
 * holds the rows of the fused QKV (its query heads, its KV heads' k and v),
 * gate/up (its share of the FFN) and vocabulary matrices, and the columns
 * of the output and down matrices that meet them, its heads' KV cache, and
 * a whole copy of the embedding, the norms and the residual x. Each output
 * and down projection is a partial sum in f32 on every rank, all-reduced
 * and added to x (one f16 rounding, as the one-device _acc GEMV); the
 * vocabulary rows' logits are all-gathered, and every rank takes the same
 * argmax and embeds the same token. The random weights are the very values
 * of the one-device model (decode.kf's fill is counter based: a slice is
 * filled from its global indices). f16 weights only.
 *
 * dc_tp_check: the shape splits over c->tp devices (KF_ERR_USAGE naming the
 * dimension and the fix). */
kf_status dc_tp_check(const dc_config *c, kf_error *err);
/* One rank's model (model.c): device `rank` of backend b, its part. */
kf_status dc_rank_open(dc_model *m, const dc_config *c, kf_backend b, uint32_t rank, kf_error *err);
/* Step s's position and token slots re-targeted on a rank's plans. */
kf_status dc_rank_retarget(dc_model *m, uint32_t s, kf_error *err);
kf_status dc_tp_open(dc_model *m, const dc_config *c, kf_backend b, bool graph, kf_error *err);
kf_status dc_tp_step(dc_model *m, uint32_t s, dc_mode mode, kf_error *err);
void dc_tp_close(dc_model *m);

/* The model file (file.c). Format:
 *   bytes 0..7    "KFDECOD1"
 *   8..47         u32 hidden, heads, kv_heads, head_dim, ffn, layers, vocab,
 *                 weight type (0 f16, 1 q4k), f32 eps, f32 rope theta
 *   48..63        zero
 *   then each tensor from a 64-byte aligned offset (zero padding), in order:
 *     token embedding [vocab, hidden] f16
 *     per layer: attention norm [hidden] f16, Wqkv [(heads + 2 kv_heads)·
 *       head_dim, hidden], Wo [hidden, heads·head_dim], FFN norm [hidden]
 *       f16, Wgate_up [2·ffn, hidden] (gate rows, then up rows), Wdown
 *       [hidden, ffn]
 *     output norm [hidden] f16, output (vocabulary) [vocab, hidden]
 *   a matrix [rows, cols] is row-major f16, or for q4k rows·cols/256
 *   llama.cpp block_q4_K blocks of 144 bytes, each row's blocks in order;
 *   all little-endian. The file holds exactly these bytes. */
#define DC_FILE_MAGIC "KFDECOD1"
/* Reads the model file path (*data, *len: free(*data)) and its header. */
kf_status dc_file_read(const char *path, unsigned char **data, size_t *len, dc_shape *sh, dc_wtype *wt,
                       kf_error *err);
/* Uploads the tensors of m->c->model_data into m's weight buffers. */
kf_status dc_file_load(dc_model *m, kf_error *err);
/* Writes m's weights to path (replaced in one step). */
kf_status dc_file_save(dc_model *m, const char *path, kf_error *err);

/* The tensors of the model in file order: f(ctx, buffer, kind, columns) for
 * each (columns: of a matrix's rows, else the length). */
typedef enum { DC_T_EMBED, DC_T_NORM, DC_T_MATRIX } dc_tensor_kind;
typedef kf_status (*dc_tensor_fn)(void *ctx, kf_buffer *b, dc_tensor_kind kind, uint64_t cols, kf_error *err);
kf_status dc_model_tensors(dc_model *m, dc_tensor_fn f, void *ctx, kf_error *err);

/* The independent reference (ref.c): plain C over host copies of the
 * weights and cache, in double, values stored as f16 where the step stores
 * them (so the two agree to the kernels' roundings, not more). */
typedef struct dc_ref dc_ref;
/* Copies the model's weights and caches from its device. */
kf_status dc_ref_create(dc_model *m, dc_ref **out, kf_error *err);
/* One step: token in at position pos, logits (vocab) out; the cache gains k, v. */
void dc_ref_step(dc_ref *r, uint32_t token, uint32_t pos, float *logits);
/* The cache row (kv_heads x head_dim f16) of layer l at pos: k (v false) or v. */
uint16_t *dc_ref_cache_row(dc_ref *r, uint32_t l, uint32_t pos, bool v);
void dc_ref_destroy(dc_ref *r);

/* --check (check.c): steps with a fence after each, every logit compared.
 * Returns the exit status (printing a line per step). */
int dc_check_reference(const dc_config *c, kf_backend b, dc_mode mode);
int dc_check_cross(const dc_config *c, dc_mode mode);
/* --tp N --check: the split model against the one-device model run in
 * lockstep (same weights) and, up to 100M parameters, the reference. */
int dc_check_tp(const dc_config *c, kf_backend b, dc_mode mode);

/* --bench (bench.c). */
typedef struct {
    uint32_t warmup, runs;      /* steps: not timed, timed (per mode) */
    bool torch;                 /* run tools/bench_torch.py --decode in the same call */
    const char *json;           /* also write the results here */
} dc_bench_opts;
int dc_bench(const dc_config *c, kf_backend b, const dc_bench_opts *o);
/* --tp N --bench (bench_tp.c), which dc_bench hands it. */
int dc_bench_tp(const dc_config *c, kf_backend b, const dc_bench_opts *o);
/* The copy bandwidth of dev in GB/s (kforge bench's measurement: 1 GiB
 * device-to-device, read + written, median of 20). */
kf_status dc_copy_bandwidth(kf_device *dev, double *gbps, kf_error *err);

/* Bytes every kernel of one step moves at attention length len (the floor). */
typedef struct {
    double weights, kv, act;
} dc_bytes;
dc_bytes dc_step_bytes(const dc_shape *sh, dc_wtype wt, uint64_t len, uint32_t split);

/* Prints "kforge-decode: error: ..." for err. */
void dc_print_error(const kf_error *err);

#endif
