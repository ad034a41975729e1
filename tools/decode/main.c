/* kforge-decode: runs the decode step of a Llama-style model (decode.h) and
 * prints the tokens it chooses; --check compares every step's logits with
 * the independent reference or between the two GPU paths; --bench times the
 * step in every mode against the bandwidth floor and PyTorch. Options are
 * in `usage` below; exit status as kforge's (0 ok, 1 a failed check or a
 * missed target, 2 usage, 3 runtime or device error). */
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "kforge-decode [MODEL] [RUN] [--check[=ref|cross]] [--bench [--warmup N] [--runs N] [--torch] [--json PATH]]\n"
    "              [--profile]\n"
    "  MODEL: [--small] [--hidden N] [--heads N] [--kv-heads N] [--head-dim N] [--ffn N] [--layers N] [--vocab N]\n"
    "         [--weights f16|q4k] [--seed N] | --model FILE;  [--save FILE]\n"
    "  RUN:   [--batch B] [--context N[,N...]] [--steps N] [--token ID] [--backend cpu|cuda|ptx] [--mode sync|async|graph]\n"
    "         [--split N] [--attn fused|split] [--rope fused|apart] [--tp N] [--fuse auto|on|off|norm|glu] [--narrow-rows N]\n"
    "         [-D FILE.NAME=VALUE]... [--kernels CHECKOUT]  (FILE: a kernel file, e.g.\n"
    "         -D gemv.UNROLL=8; CHECKOUT: where kernels/ is, default $KF_SOURCE_DIR or the build's)\n"
    "  defaults: Llama-3-8B (hidden 4096, 32 heads, 8 KV heads, head dim 128, FFN 14336, 32 layers,\n"
    "  vocabulary 128256), f16, seed 1, context 4096, 8 steps, token 1, cuda, graph; --small: hidden 256,\n"
    "  4 heads, 2 KV heads, head dim 64, FFN 512, 2 layers, vocabulary 512, context 40. --seed seeds the\n"
    "  random weights and the cache's context (with --model, the context only). --check: with the\n"
    "  reference up to 100M parameters, else (ref|cross to choose) cuda against ptx. --bench: 3 + 20\n"
    "  steps per mode; --torch adds tools/bench_torch.py --decode (f16). --profile: after --warmup steps,\n"
    "  5 steps (--runs N: N) with each launch timed alone, summed by kernel and shape (with --bench: after it;\n"
    "  one device: not with --tp). --tp N: the model split over N devices (GPUs 0..N-1 with NCCL; cpu: N CPU\n"
    "  devices), f16 or q4k; --check then compares it with --tp 1 and the reference; --bench adds the all-reduce\n"
    "  against NCCL's own and the floor with the all-reduces. --fuse on: the norms and silu·up made by the\n"
    "  GEMVs that read them; off (--unfused): launches of their own (rmsnorm, silu_mul; q4k: rmsnorm_q8,\n"
    "  silu_mul_q8); norm: the norms fused, silu·up apart; glu (q4k; f16: on): the norms fused, silu·up and\n"
    "  its q8 blocks made by the gate/up GEMV; auto (default): on for f16 weights, off for q4k (faster on the\n"
    "  H200). --attn fused:\n"
    "  attention in one launch (sdpa_decode_fused); split (default, faster on the H200): split + combine.\n"
    "  --rope apart (default): rope_qkv_neox a layer; fused (split attention): the split kernel turns q and the\n"
    "  new k with a table made once a step (rope_table) and appends k and v (sdpa_decode_split_rope_neox).\n"
    "  --batch B (1..16, default 1): B sequences decoded together, each with its own token (sequence b starts\n"
    "  from ID + b), cache and context: --context N puts sequence b at N - b, --context N,N,... (B numbers)\n"
    "  chooses each. B > 1 runs every weight GEMV (QKV, output, gate/up, down, vocabulary) on the tensor-core\n"
    "  kernels of kernels/tc_gemv.kf (the weights read once for the batch; q4k: 8-bit inputs), and the\n"
    "  fused GEMVs (gemv_rms_*, gemv_silu_*, q4k_q8_gemv_rms_*, ...) have no batched form: the norms and\n"
    "  silu·up are launches of their own (--fuse has no effect); not with --tp. --check compares every\n"
    "  sequence of every step; --bench counts B tokens a step (the weights once, each sequence's cache).\n"
    "  --narrow-rows N: q4k GEMVs of fewer than N rows (default 16384) use the q4k_narrow build (32 lanes a row).";

enum { PROFILE_STEPS = 5 };

static const dc_shape llama3_8b = {4096, 32, 8, 128, 14336, 32, 128256, 1e-5f, 500000.0f};
static const dc_shape small_shape = {256, 4, 2, 64, 512, 2, 512, 1e-5f, 500000.0f};

typedef struct {
    dc_config c;
    dc_mode mode;
    kf_backend backend;
    int check;                  /* 0 none, 1 reference, 2 cross, 3 chosen by size */
    bool bench, profile, small, shape_given, weights_given, context_given, steps_given, runs_given;
    uint32_t nctx;              /* contexts given (--context N,N,...) */
    dc_bench_opts bo;
    const char *save;
    char *kernels_dir;
} options;

void dc_print_error(const kf_error *err) { fprintf(stderr, "kforge decode: error: %s\n", err->msg); }

void dc_print_tokens(const dc_config *c, const uint32_t *tokens, uint32_t steps)
{
    printf("tokens:");
    for (uint32_t b = 0; b < c->batch; b++)
        for (uint32_t s = 0; s < steps; s++) printf("%s %u", b && !s ? " |" : "", tokens[(size_t)s * c->batch + b]);
    printf("\n");
}

static int bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "kforge decode: error: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\nusage: %s\n", usage);
    return KF_EXIT_USAGE;
}

static bool u32_of(const char *s, uint32_t *out)
{
    uint64_t v;
    if (!kf_value_parse_u64(s, strlen(s), &v) || v > UINT32_MAX) return false;
    *out = (uint32_t)v;
    return true;
}

/* --hidden N and the other numbers: the field each sets. */
static uint32_t *number_field(options *o, const char *opt)
{
    static const char *const names[] = {"--hidden", "--heads", "--kv-heads", "--head-dim", "--ffn", "--layers",
                                        "--vocab", "--seed", "--steps", "--token", "--split",
                                        "--warmup", "--runs", "--tp", "--batch", "--narrow-rows"};
    uint32_t *fields[] = {&o->c.sh.hidden, &o->c.sh.heads, &o->c.sh.kv_heads, &o->c.sh.head_dim, &o->c.sh.ffn,
                          &o->c.sh.layers, &o->c.sh.vocab, &o->c.seed, &o->c.steps, &o->c.token,
                          &o->c.split, &o->bo.warmup, &o->bo.runs, &o->c.tp, &o->c.batch, &o->c.narrow_rows};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(opt, names[i])) {
            o->shape_given |= i < 7;
            o->steps_given |= fields[i] == &o->c.steps;
            o->runs_given |= fields[i] == &o->bo.runs;
            return fields[i];
        }
    return NULL;
}

/* -D FILE.NAME=VALUE */
static int define(options *o, char *v)
{
    static const char *const names[DC_NMOD] = {
#define X(e, n, f) n,
        DC_MODULES(X)
#undef X
    };
    char *dot = strchr(v, '.'), *eq = strchr(v, '=');
    if (!dot || !eq || eq < dot || o->c.ndefs == 32) return bad("-D '%s': expected FILE.NAME=VALUE (FILE: gemv, q4k, q4k_narrow, sdpa, rope, silu_mul, rmsnorm, embed, argmax, tc_gemv or decode)%s", v, "");
    *dot = *eq = 0;
    for (int i = 0; i < DC_NMOD; i++)
        if (!strcmp(v, names[i])) {
            o->c.defs[o->c.ndefs++] = (dc_define){i, {dot + 1, eq + 1}};
            return KF_EXIT_OK;
        }
    return bad("-D: '%s' is not a kernel file of the step%s", v, "");
}

/* --context N or N,N,...: one context (the batch's sequences at N, N-1,
 * ...) or one per sequence. */
static int contexts(options *o, const char *v)
{
    const char *p = v;
    o->nctx = 0;
    o->context_given = true;
    while (o->nctx < DC_BATCH_MAX) {
        char num[16];
        size_t n = strcspn(p, ",");
        if (!n || n >= sizeof num) break;
        memcpy(num, p, n);
        num[n] = 0;
        if (!u32_of(num, &o->c.ctx[o->nctx])) break;
        o->nctx++;
        if (!p[n]) return KF_EXIT_OK;
        p += n + 1;
    }
    return bad("--context '%s': expected a number, or up to 16 numbers separated by commas (one per sequence of "
               "--batch)%s", v, "");
}

static int value_opt(void *args, const char *opt, char *v)
{
    options *o = args;
    if (!strcmp(opt, "--context")) return contexts(o, v);
    uint32_t *field = number_field(o, opt);
    if (field) return u32_of(v, field) ? KF_EXIT_OK : bad("%s '%s': expected a number that fits u32", opt, v);
    if (!strcmp(opt, "--weights")) {
        o->weights_given = true;
        if (!strcmp(v, "f16") || !strcmp(v, "q4k")) o->c.wt = v[0] == 'q' ? DC_Q4K : DC_F16;
        else return bad("--weights '%s': expected f16 or q4k%s", v, "");
    } else if (!strcmp(opt, "--attn")) {
        if (strcmp(v, "fused") && strcmp(v, "split")) return bad("--attn '%s': expected fused or split%s", v, "");
        o->c.attn_fused = v[0] == 'f';
    } else if (!strcmp(opt, "--rope")) {
        if (strcmp(v, "fused") && strcmp(v, "apart")) return bad("--rope '%s': expected fused or apart%s", v, "");
        o->c.rope_fused = v[0] == 'f';
    } else if (!strcmp(opt, "--fuse")) {
        int i = !strcmp(v, "auto") ? DC_FUSE_AUTO : !strcmp(v, "on") ? DC_FUSE_ON : !strcmp(v, "off") ? DC_FUSE_OFF
              : !strcmp(v, "norm") ? DC_FUSE_NORM : !strcmp(v, "glu") ? DC_FUSE_GLU : -1;
        if (i < 0) return bad("--fuse '%s': expected auto, on, off, norm or glu%s", v, "");
        o->c.fuse = (dc_fuse)i;
    } else if (!strcmp(opt, "--mode")) {
        int i = !strcmp(v, "sync") ? 0 : !strcmp(v, "async") ? 1 : !strcmp(v, "graph") ? 2 : -1;
        if (i < 0) return bad("--mode '%s': expected sync, async or graph%s", v, "");
        o->mode = (dc_mode)i;
    } else if (!strcmp(opt, "--backend")) {
        if (!kf_cli_backend_parse(v, &o->backend)) return bad("--backend '%s': expected cpu, cuda or ptx%s", v, "");
    } else if (!strcmp(opt, "--check")) {
        o->check = !strcmp(v, "ref") ? 1 : !strcmp(v, "cross") ? 2 : 0;
        if (!o->check) return bad("--check=%s: expected ref or cross%s", v, "");
    } else if (!strcmp(opt, "--model")) o->c.model = v;
    else if (!strcmp(opt, "--save")) o->save = v;
    else if (!strcmp(opt, "--json")) o->bo.json = v;
    else if (!strcmp(opt, "--kernels")) o->c.src_dir = v;
    else if (!strcmp(opt, "-D")) return define(o, v);
    return KF_EXIT_OK;
}

static int parse(int argc, char **argv, options *o)
{
    static const char *const vopts[] = {"--hidden", "--heads", "--kv-heads", "--head-dim", "--ffn", "--layers",
                                        "--vocab", "--seed", "--context", "--steps", "--token", "--split", "--warmup",
                                        "--runs", "--tp", "--batch", "--narrow-rows", "--fuse", "--attn", "--rope", "--weights", "--mode", "--backend", "--model", "--save", "--json",
                                        "--kernels", "-D"};
    for (int i = 0; i < argc;) {
        const char *a = argv[i];
        if (!strcmp(a, "--check") || !strcmp(a, "--bench") || !strcmp(a, "--small") || !strcmp(a, "--torch") ||
            !strcmp(a, "--profile") || !strcmp(a, "--unfused")) {
            if (a[2] == 'c') o->check = 3;
            else if (a[2] == 'u') o->c.fuse = DC_FUSE_OFF;
            else if (a[2] == 'p') o->profile = true;
            else if (a[2] == 'b') o->bench = true;
            else if (a[2] == 's') o->small = true;
            else o->bo.torch = true;
            i++;
            continue;
        }
        if (!strncmp(a, "--check=", 8)) {
            int rc = value_opt(o, "--check", (char *)a + 8);
            if (rc) return rc;
            i++;
            continue;
        }
        int r = kf_cli_value_opts(argc, argv, &i, vopts, sizeof vopts / sizeof vopts[0], "decode", value_opt, o);
        if (r < 0) return KF_EXIT_USAGE;
        if (r == 0) return bad("unknown argument '%s'%s", a, "");
    }
    return KF_EXIT_OK;
}

/* The batch and each sequence's context: --context N gives sequence b
 * N - b, a list one each; c.context is the longest. */
static int batch_contexts(options *o)
{
    dc_config *c = &o->c;
    char b[16], n[16], n0[16];
    snprintf(b, sizeof b, "%u", c->batch);
    if (!c->batch || c->batch > DC_BATCH_MAX) return bad("--batch %s: expected 1 .. 16 sequences (tc_gemv.kf's rows)%s", b, "");
    if (!o->context_given) o->nctx = 1, c->ctx[0] = o->small ? 40 : 4096;
    snprintf(n, sizeof n, "%u", o->nctx);
    snprintf(n0, sizeof n0, "%u", c->ctx[0]);
    if (o->nctx > 1 && o->nctx != c->batch)
        return bad("--context gives %s contexts for --batch %s: give one per sequence, or one N (the sequences at N, "
                   "N-1, ...)", n, b);
    if (o->nctx == 1 && c->ctx[0] + 1 < c->batch)
        return bad("--context %s is too short for --batch %s: the sequences take N, N-1, ... down to N-B+1 >= 0 (give a "
                   "list to choose each)", n0, b);
    c->context = 0;
    for (uint32_t i = 0; i < c->batch; i++) {
        if (o->nctx == 1) c->ctx[i] = c->ctx[0] - i;
        c->context = c->ctx[i] > c->context ? c->ctx[i] : c->context;
    }
    if (c->batch > 1 && c->tp > 1) return bad("--batch %s runs on one device: drop --tp%s", b, "");
    return KF_EXIT_OK;
}

/* The shape: Llama-3-8B, --small, the options' numbers over them, or the file's. */
static int settle(options *o, const dc_shape *given)
{
    dc_shape base = o->small ? small_shape : llama3_8b;
    const uint32_t *g = &given->hidden;
    uint32_t *s = &base.hidden;
    for (int i = 0; i < 7; i++)
        if (g[i] != UINT32_MAX) s[i] = g[i];
    o->c.sh = base;
    int rc = batch_contexts(o);
    if (rc) return rc;
    if (!o->steps_given) o->c.steps = 8;
    if (o->c.model && (o->shape_given || o->small || o->weights_given))
        return bad("--model %s gives the shape and the weight type: drop --small, --weights and the sizes%s", o->c.model, "");
    if (!o->c.steps) return bad("--steps must be at least 1%s%s", "", "");
    if (o->profile) o->bo.profile = o->runs_given ? o->bo.runs : PROFILE_STEPS;
    bool timed = o->bench || o->profile;
    if (timed && o->check) return bad("--bench or --profile and --check are separate runs%s%s", "", "");
    if (o->save && (timed || o->check))
        return bad("--save goes with a plain run, not --bench, --profile or --check%s%s", "", "");
    if (o->save && o->c.tp > 1) return bad("--save writes a one-device model: drop --tp%s%s", "", "");
    if (o->c.tp > 1 && o->check == 2) return bad("--check=cross compares cuda with ptx on one device: drop --tp%s%s", "", "");
    if (o->profile && o->c.tp > 1)
        return bad("--profile times one device's launches: drop --tp (or profile --tp 1)%s%s", "", "");
    if (timed && !o->bo.runs) return bad("--runs must be at least 1%s%s", "", "");
    return KF_EXIT_OK;
}

/* A plain run: the steps in the mode, timed on the wall clock; the tokens. */
static int run(options *o)
{
    dc_model m = {0};
    kf_error err = {0};
    uint32_t nb = o->c.batch, *tokens = calloc((size_t)o->c.steps * nb, sizeof *tokens);
    kf_status st = tokens ? dc_model_open(&m, &o->c, o->backend, o->mode == DC_GRAPH, &err)
                          : kf_error_set(&err, KF_ERR_NOMEM, "out of memory");
    if (st == KF_OK && o->save) st = dc_file_save(&m, o->save, &err);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t s = 0; s < o->c.steps && st == KF_OK; s++) st = dc_model_step(&m, s, o->mode, &err);
    if (st == KF_OK) st = dc_model_sync(&m, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (uint32_t s = 0; s < o->c.steps && st == KF_OK; s++) st = dc_model_token(&m, s, &tokens[(size_t)s * nb], &err);
    if (st == KF_OK) {
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        dc_print_tokens(&o->c, tokens, o->c.steps);
        printf("%u steps in %.3f ms (%.3f ms per step, %u launches each", o->c.steps, ms, ms / o->c.steps, m.nplan);
        if (m.ranks) printf(" and %u collectives on each of %u devices", m.ncoll, o->c.tp);
        printf(", wall clock)\n");
    } else {
        dc_print_error(&err);
    }
    dc_model_close(&m);
    free(tokens);
    return kf_cli_exit_for(st);
}

/* --bench and --profile, each on its own model (one 16 GB model at a time);
 * the status is the bench's unless the profile could not run. */
static int bench_and_profile(options *o)
{
    int rc = o->bench ? dc_bench(&o->c, o->backend, &o->bo) : KF_EXIT_OK;
    if (!o->bo.profile || (rc != KF_EXIT_OK && rc != KF_EXIT_FAIL)) return rc;
    fflush(stdout);
    int rp = dc_profile(&o->c, o->backend, &o->bo);
    return rp != KF_EXIT_OK ? rp : rc;
}

static void banner(const options *o)
{
    const dc_shape *sh = &o->c.sh;
    static const char *const modes[] = {"sync", "async", "graph"};
    printf("kforge-decode: hidden %u, %u heads (%u KV), head dim %u, FFN %u, %u layers, vocabulary %u (%.3g B "
           "parameters), %s weights (%s), context %u, %s backend, %s mode",
           sh->hidden, sh->heads, sh->kv_heads, sh->head_dim, sh->ffn, sh->layers, sh->vocab, dc_params(sh) / 1e9,
           o->c.wt == DC_Q4K ? "q4k" : "f16", o->c.model ? o->c.model : "random", o->c.context,
           kf_cli_backend_name(o->backend), modes[o->mode]);
    if (o->c.batch > 1) {
        printf(", batch %u (contexts", o->c.batch);
        for (uint32_t b = 0; b < o->c.batch; b++) printf("%s%u", b ? ", " : " ", o->c.ctx[b]);
        printf("; tc_gemv, unfused)");
    }
    if (o->c.tp > 1) printf(", tensor parallel over %u devices", o->c.tp);
    char defs[1024];
    dc_step_defaults_text(&o->c, defs, sizeof defs);
    printf("\nkernel defaults: %s (-D FILE.NAME=VALUE overrides)\n", defs[0] ? defs : "none");
}

int main(int argc, char **argv)
{
    if (kf_cli_help(argc - 1, argv + 1, usage)) return KF_EXIT_OK;
    options o = {.mode = DC_GRAPH, .backend = KF_BACKEND_CUDA, .bo = {3, 20, false, 0, NULL}};
    o.c = (dc_config){.seed = 1, .token = 1, .batch = 1, .src_dir = getenv("KF_SOURCE_DIR")};
    if (!o.c.src_dir) o.c.src_dir = KF_DECODE_SOURCE_DIR;
    dc_shape given;
    memset(&given, 0xff, sizeof given);
    o.c.sh = given;
    int rc = parse(argc - 1, argv + 1, &o);
    if (rc) return rc;
    given = o.c.sh;
    if ((rc = settle(&o, &given))) return rc;
    unsigned char *file = NULL;
    if (o.c.model) {
        kf_error err = {0};
        kf_status st = dc_file_read(o.c.model, &file, &o.c.model_len, &o.c.sh, &o.c.wt, &err);
        if (st != KF_OK) {
            dc_print_error(&err);
            return kf_cli_exit_for(st);
        }
        o.c.model_data = file;
    }
    kf_error err = {0};
    if (dc_shape_check(&o.c.sh, o.c.wt, &err) != KF_OK || dc_tp_check(&o.c, &err) != KF_OK) {
        free(file);
        return bad("%s%s", err.msg, "");
    }
    bool timed = o.bench || o.bo.profile;
    o.c.max_steps = timed ? o.bo.warmup + (o.bo.runs > o.bo.profile ? o.bo.runs : o.bo.profile) + 8 : o.c.steps;
    banner(&o);
    if (o.check == 3) o.check = dc_params(&o.c.sh) <= 100000000ull ? 1 : 2;
    rc = o.check && o.c.tp > 1 ? dc_check_tp(&o.c, o.backend, o.mode)
       : o.check == 1 ? dc_check_reference(&o.c, o.backend, o.mode)
       : o.check == 2 ? dc_check_cross(&o.c, o.mode)
       : timed        ? bench_and_profile(&o)
                      : run(&o);
    free(file);
    fflush(stdout);
    return ferror(stdout) && !rc ? KF_EXIT_RUNTIME : rc;
}
