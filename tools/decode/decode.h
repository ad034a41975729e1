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
 *   profile.c --profile: each launch of a step timed alone, summed by kernel
 *             and shape, with its bytes and its ratio to the copy bandwidth
 *   tune.c    a launch timed alone (the busy kernel ahead), and sdpa's split
 *             chosen by timing candidates on the device
 *
 * One step (the list), per layer: RMSNorm -> fused QKV GEMV ->
 * RoPE on q and k, k and v appended to the layer's cache at the position ->
 * sdpa_decode (split + combine) -> output GEMV (+ residual, the _acc form) ->
 * RMSNorm -> fused gate/up GEMV -> silu_mul -> down GEMV (+ residual);
 * then the final norm, the vocabulary GEMV, argmax, and the chosen token
 * embedded as the next step's input. The residual adds are the _acc GEMVs',
 * so a norm only reads x, and it is made by the GEMV after it (gemv_rms_*),
 * as silu·up is by the down GEMV (gemv_silu_*): no launch of their own
 * (dc_fuse: unfused, rmsnorm and silu_mul launches). Q4_K weights take 8-bit
 * inputs (the q4k x q8 GEMV, as llama.cpp's mmvq): the fused GEMVs quantize
 * their x themselves (q4k_q8_gemv_rms_*, _silu_*; unfused: decode.kf's
 * rmsnorm_q8, silu_mul_q8), sdpa_combine_q8 writes the attention output's.
 * --batch B > 1 decodes B sequences a step (each its own token, cache
 * and context) with every weight GEMV on tc_gemv.kf (tensor cores, the
 * weights read once for the batch) and the norms and silu·up unfused.
 * A --tp rank builds its part with the same functions at
 * its shape; its output and down GEMVs write an f32 partial sum instead of
 * adding into x (the residual add follows the all-reduce: add_f32_f16). */
#ifndef KF_DECODE_H
#define KF_DECODE_H

#include "../cmd_common.h"

typedef struct {
    uint32_t hidden, heads, kv_heads, head_dim, ffn, layers, vocab;
    float eps, theta;
} dc_shape;

typedef enum { DC_F16 = 0, DC_Q4K = 1 } dc_wtype;

/* --batch B: B sequences decoded together, each with its own token, cache
 * and context. B = 1 is the GEMV step; B > 1 runs every weight GEMV on
 * kernels/tc_gemv.kf (tensor cores, the weights read once for the batch),
 * with the norms and silu·up launched apart (dc_fuse has no batched form). */
#define DC_BATCH_MAX 16u

/* --fuse auto|on|off|norm|glu (--unfused: off). auto, the default, fuses the f16
 * step only: on the H200 (2026-12-01, Llama-3-8B, context 4096, graph mode)
 * the f16 step took 4.587 ms fused against 4.615 unfused, but the q4k step
 * 2.885 against 2.108, its fused GEMVs (each block quantising the whole x to
 * q8 before its first weight) running at 0.25-0.48 of copy (q4k.kf's fused
 * forms have been pipelined since, not yet measured). norm fuses the norms
 * only and launches silu·up apart: a fused silu GEMV makes silu(g)·u of the
 * whole FFN (14336 values, two MUFU each) in every block, about 2 µs of an
 * SM's issue at 2 blocks an SM, against a 7.9 µs down projection. glu
 * (q4k; f16: on) fuses the norms and puts silu·up and its q8 blocks in the
 * gate/up GEMV's epilogue (q4k.kf's q4k_q8_gemv_rms_glu_q8), the down
 * projection reading them unfused: 1 + 7 launches per layer + 3, none of
 * them making silu·up more than once. */
typedef enum { DC_FUSE_AUTO = 0, DC_FUSE_ON, DC_FUSE_OFF, DC_FUSE_NORM, DC_FUSE_GLU } dc_fuse;
typedef enum { DC_SYNC, DC_ASYNC, DC_GRAPH } dc_mode;

/* The kernel modules a step uses: the name -D FILE.NAME=VALUE knows it by,
 * and its file (kernels/NAME.kf, and the program's own). q4k_narrow is
 * q4k.kf again, built with more lanes per row (Q8_LOG_BL, default
 * DC_NARROW_LOG_BL; q4k's -D apply to it too), for the matrices with few
 * rows. */
#define DC_MODULES(X) \
    X(GEMV, "gemv", "kernels/gemv.kf") X(Q4K, "q4k", "kernels/q4k.kf") \
    X(Q4KN, "q4k_narrow", "kernels/q4k.kf") X(SDPA, "sdpa", "kernels/sdpa.kf") \
    X(ROPE, "rope", "kernels/rope.kf") X(SILU, "silu_mul", "kernels/silu_mul.kf") \
    X(NORM, "rmsnorm", "kernels/rmsnorm.kf") X(EMBED, "embed", "kernels/embed.kf") \
    X(ARGMAX, "argmax", "kernels/argmax.kf") X(TC, "tc_gemv", "kernels/tc_gemv.kf") \
    X(OWN, "decode", "tools/decode/decode.kf")
#define DC_NARROW_LOG_BL "3"     /* q4k_narrow: 32 lanes per row (q4k.kf's default Q8_LOG_BL 2: 16) */
#define DC_NARROW_ROWS 16384u    /* q4k matrices with fewer rows use q4k_narrow */
enum {
#define X(e, n, f) DC_MOD_##e,
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
    uint32_t context;           /* positions already in the cache (random content): the longest sequence's */
    uint32_t batch;             /* sequences decoded together (--batch, 1 .. DC_BATCH_MAX) */
    uint32_t ctx[DC_BATCH_MAX]; /* each sequence's context (ctx[0] = context when batch is 1) */
    uint32_t steps;             /* decode steps */
    uint32_t max_steps;         /* the most steps any run of this model takes (cache and token room) */
    uint32_t token;             /* the input token of the first step */
    uint32_t split;             /* sdpa positions per split block; 0: chosen for the context */
    uint32_t tp;                /* devices the model is split over (--tp; 0 and 1: one) */
    uint32_t narrow_rows;       /* q4k GEMVs with fewer rows use q4k_narrow (--narrow-rows; 0: DC_NARROW_ROWS) */
    dc_fuse fuse;               /* --fuse: the norms and silu·up made by the GEMVs that read them */
    bool attn_fused;            /* --attn fused: sdpa_decode_fused, one launch (default split: the split
                                 * kernel and a combine launch, faster on the H200: 4.580 ms a step
                                 * against 4.661 fused, f16 graph mode, 2026-12-01) */
    bool rope_fused;            /* --rope fused: rope_table once a step, and sdpa_decode_split_rope_neox
                                 * turns q and the new k itself and appends k and v (split attention
                                 * only). Default apart (rope_qkv_neox a layer): with PDL the rope
                                 * launch overlaps its neighbours, and on the H200 (2026-12-03, two runs
                                 * each, graph mode) fused took 4.2855 / 4.2832 ms a f16 step against
                                 * 4.2847 / 4.2833 apart, and 2.0442 / 2.0415 a q4k step against
                                 * 2.0272 / 2.0304; without PDL fused was faster (4.3901 against
                                 * 4.4539, 2.1209 against 2.1719) */
    const char *src_dir;        /* the checkout: kernels/ and tools/decode/decode.kf */
    dc_define defs[32];
    uint32_t ndefs;
} dc_config;

typedef struct {
    kf_buffer *attn_norm, *wqkv, *wo, *ffn_norm, *wgu, *wdown, *kc, *vc;
} dc_layer;

/* Bytes one launch moves (its share of the floor): weights (norm weights
 * too), read once a step whatever the batch; and per sequence (times the
 * batch) activations (the embedding row too), KV cache rows written, and the
 * parts that grow with its attention length len: kv_pos·len bytes of cache
 * read, part·cdiv(len, split) bytes of sdpa partials. A collective's entry
 * (tensor parallelism) moves none: its time is measured apart (bench_tp.c). */
typedef struct {
    double weights, act, kv, kv_pos, part;
} dc_cost;

/* What a launch of the step is, for the profile: its kernel (or the
 * collective's name), a label of its shape ("6144x4096" rows x columns,
 * "4096" elements, ...), its bytes. */
typedef struct {
    const char *kernel;
    char shape[40];
    dc_cost cost;
} dc_launch;

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
    kf_buffer *x, *xn, *qkv, *q, *attn, *po, *plse, *cnt, *gu, *g, *u, *h, *logits;
    kf_buffer *pos, *pos_rope, *pos_lens, *ctxs, *tokens, **tok, *xq, *xds;
    kf_buffer *cs;              /* the step's RoPE table (rope_table): [batch, head_dim / 2] f32x2 */
    kf_plan **plan;             /* every launch of a step, in order */
    dc_launch *launch;          /* and what each is */
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
    kf_plan *busy;              /* decode.kf's busy kernel (CUDA devices; NULL on the CPU) */
    kf_buffer *sink;            /* its never-written output */
} dc_model;

/* Model dimensions checked (every kernel's constraints), a message in err. */
kf_status dc_shape_check(const dc_shape *sh, dc_wtype wt, kf_error *err);
/* Weights of one matrix of rows x cols: bytes. */
uint64_t dc_matrix_bytes(dc_wtype wt, uint64_t rows, uint64_t cols);
/* kforge-decode's own -D defaults that c's checkout declares, as
 * "FILE.NAME=VALUE ..." into out (cap bytes, cut short if too small): the
 * step's kernels are built with them before the user's -D. */
void dc_step_defaults_text(const dc_config *c, char *out, size_t cap);
/* Parameters of the model. */
uint64_t dc_params(const dc_shape *sh);

/* Opens backend b, compiles the kernels (compile errors printed as kforge
 * prints them: KF_ERR_SOURCE), makes the weights (random on the device, or
 * c->model), the buffers and the plans; graph: records the step once.
 * The first step's input is embedded. dc_model_close frees everything. */
kf_status dc_model_open(dc_model *m, const dc_config *c, kf_backend b, bool graph, kf_error *err);
void dc_model_close(dc_model *m);
/* Records the step again (a one-device model), replacing the recording:
 * after kf_device_set_pdl, whose state a recorded graph keeps. */
kf_status dc_model_record(dc_model *m, kf_error *err);
/* Runs step s (sequence b at position ctx[b] + s; s < max_steps) in mode `mode` (graph
 * needs the recording). Async and graph leave it queued; the next read or
 * dc_model_sync waits for it. */
kf_status dc_model_step(dc_model *m, uint32_t s, dc_mode mode, kf_error *err);
/* Waits for every device of the model. */
kf_status dc_model_sync(dc_model *m, kf_error *err);
/* Re-targets the plans for step s without launching (the profile launches
 * them one by one); a --tp model's every rank. */
kf_status dc_model_retarget(dc_model *m, uint32_t s, kf_error *err);
/* Standalone plans (the caller destroys them) of layer 0's attention at
 * `split`: sdpa_decode_split and the step's combine, or with --attn fused
 * sdpa_decode_fused alone (*pc NULL). */
kf_status dc_attention_plans(dc_model *m, uint32_t split, kf_plan **ps, kf_plan **pc, kf_error *err);
/* sdpa's split guessed for the context and the shape sh (a rank's heads):
 * about two blocks per SM (132 when the device does not say), at least 16
 * positions. */
uint32_t dc_split_guess(const dc_config *c, const dc_shape *sh, const kf_device *dev);

/* tune.c. The busy kernel's plan (m->busy) on a CUDA device. */
kf_status dc_busy_create(dc_model *m, kf_error *err);
/* Launch p timed alone: busy queued ahead of it on a CUDA device (so the
 * start event waits on the device, not on the host), then p TIMED; *us. */
kf_status dc_launch_alone(dc_model *m, kf_plan *p, double *us, kf_error *err);
/* The host's monotonic clock in ms (the benches' wall clock). */
double dc_now_ms(void);
/* "sync", "async", "graph": dc_mode's names. */
extern const char *const dc_mode_names[3];
/* The median of t[0..n) (sorted in place). */
double dc_median(double *t, uint32_t n);
/* The least split dc_split_tune tries around guess (the partials' room). */
uint32_t dc_split_least(uint32_t guess);
/* m->split: each candidate around the guess (guess/4 .. 4·guess, at least
 * 16) timed on a CUDA device, split + combine alone at the first step's
 * length, median of a few; the fastest kept. The CPU device keeps the guess. */
kf_status dc_split_tune(dc_model *m, kf_error *err);
/* After step s (synced): its logits (batch x vocab f32, a row per
 * sequence) and chosen tokens (batch). */
kf_status dc_model_logits(dc_model *m, float *logits, kf_error *err);
kf_status dc_model_token(dc_model *m, uint32_t s, uint32_t *token, kf_error *err);
/* Makes tokens t (batch) the input of step s + 1 (replacing those step s chose). */
kf_status dc_model_force_token(dc_model *m, uint32_t s, const uint32_t *t, kf_error *err);

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
 * filled from its global indices; Q4_K by whole blocks, so a rank's share
 * of the output and down matrices' columns must be whole blocks). --profile times one
 * device's launches and is refused with --tp > 1 (main.c).
 *
 * dc_tp_check: the shape splits over c->tp devices (KF_ERR_USAGE naming the
 * dimension and the fix). */
kf_status dc_tp_check(const dc_config *c, kf_error *err);
/* One rank's model (model.c): device `rank` of backend b, its part. split:
 * sdpa's split (0: c->split, else guessed and timed on the device, as rank
 * 0 does; the other ranks take rank 0's, so every rank runs the same). */
kf_status dc_rank_open(dc_model *m, const dc_config *c, kf_backend b, uint32_t rank, uint32_t split, kf_error *err);
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
/* One step of sequence seq (of the batch): token in at position pos,
 * logits (vocab) out; its cache gains k, v. */
void dc_ref_step(dc_ref *r, uint32_t seq, uint32_t token, uint32_t pos, float *logits);
/* The cache row (kv_heads x head_dim f16) of layer l of sequence seq at
 * pos: k (v false) or v. */
uint16_t *dc_ref_cache_row(dc_ref *r, uint32_t l, uint32_t seq, uint32_t pos, bool v);
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
    uint32_t profile;           /* --profile: steps timed launch by launch (0: no profile) */
    const char *json;           /* also write the results here */
} dc_bench_opts;
int dc_bench(const dc_config *c, kf_backend b, const dc_bench_opts *o);
/* --tp N --bench (bench_tp.c), which dc_bench hands it. */
int dc_bench_tp(const dc_config *c, kf_backend b, const dc_bench_opts *o);
/* The copy bandwidth of dev in GB/s (kforge bench's measurement: 1 GiB
 * device-to-device, read + written, median of 20). */
kf_status dc_copy_bandwidth(kf_device *dev, double *gbps, kf_error *err);
/* --profile (profile.c): o->profile steps, each launch timed alone in step
 * order; prints the table. Returns the exit status. One device: c->tp > 1
 * is a usage error. */
int dc_profile(const dc_config *c, kf_backend b, const dc_bench_opts *o);

/* Bytes the step's launches move when its longest sequence's attention
 * length is len (sequence b's: len - (context - ctx[b])), the floor, by
 * kind; dc_launch_bytes: launch i's. */
typedef struct {
    double weights, kv, act;
} dc_bytes;
dc_bytes dc_step_bytes(const dc_model *m, uint64_t len);
dc_bytes dc_launch_bytes(const dc_model *m, uint32_t i, uint64_t len);

/* Prints "kforge-decode: error: ..." for err. */
void dc_print_error(const kf_error *err);
/* Prints "tokens: ..." for tokens [steps][batch]: each sequence's in step
 * order, the sequences separated by " |". */
void dc_print_tokens(const dc_config *c, const uint32_t *tokens, uint32_t steps);

#endif
