/* apifuzz: a stateful sequence fuzzer for the kforge runtime's public API.
 *
 *   apifuzz BACKEND SEED [SEED_LAST] [options]
 *   apifuzz BACKEND selftest    each kernel once, checked against the host
 *     BACKEND   cpu | cuda | ptx
 *     -s N      steps per seed (default 160)
 *     -o DIR    write one file per seed, DIR/SEED.txt (default: stdout)
 *     -v        print every error message to stderr
 *     -x        no second-device work while the first device records a graph
 *     -r        no plan re-targeting while recording a graph
 *
 * For each seed it opens two devices of the backend (dev0, dev1), compiles
 * two modules, and makes a deterministic random sequence of calls of
 * kforge.h. Every step prints one line: step number, the call, its
 * arguments as model ids (never addresses) and the status; downloads print
 * an FNV-1a hash of the bytes. After a final kf_device_sync every live
 * buffer is downloaded and hashed. Lines depend only on the seed, so two
 * backends are compared with cmp. Times (TIMED), device names, PDL state and
 * error messages are not printed on stdout.
 *
 * The model tracks what kforge.h allows (buffers, views, wraps, read-only
 * marks, plans and their bindings, graphs and recording) so that every
 * launch indexes in bounds and every result is exact on every backend
 * (integer math; f32 values are integers in [0, 1024)). Error paths are made
 * deliberately, one defect at a time; each has the status the header
 * documents. A status other than the one expected prints a line
 * "EXPECT ..." on stderr and "expect-fail" on stdout. */
#define _POSIX_C_SOURCE 200809L
#include <kforge.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- kernels */
static const char src_a[] =
    "@schedule(block = 64, grid = cdiv(n, 64))\n"
    "kernel axpy_u32(a: u32, x: &[u32], y: &mut [u32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { y[i] = a * x[i] + y[i]; }\n"
    "}\n"
    "@schedule(block = 64, grid = cdiv(n, 64))\n"
    "kernel axpy_i32(a: i32, x: &[i32], y: &mut [i32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { y[i] = a * x[i] + y[i]; }\n"
    "}\n"
    "// f32 values stay integers in [0, 1024): every operation is exact\n"
    "@schedule(block = 64, grid = cdiv(n, 64))\n"
    "kernel axpy_f32(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n {\n"
    "        let v = a * x[i] + y[i];\n"
    "        y[i] = v - floor(v / 1024.0) * 1024.0;\n"
    "    }\n"
    "}\n"
    "// no grid expression: the grid is cdiv(kf_launch.count, 64)\n"
    "@schedule(block = 64)\n"
    "kernel copy_off(src: &[u32], dst: &mut [u32], off: u32, n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { dst[i] = src[i + off] * 3 + i; }\n"
    "}\n"
    "@schedule(block = 64, grid = nb)\n"
    "kernel block_sum(x: &[u32], out: &mut [u32], n: u32, nb: u32) {\n"
    "    shared part: u32[64];\n"
    "    let t = thread_id.x;\n"
    "    let i = block_id.x * 64 + t;\n"
    "    var v: u32 = 0;\n"
    "    if i < n { v = x[i] ^ i; }\n"
    "    part[t] = v;\n"
    "    barrier();\n"
    "    var s: u32 = 32;\n"
    "    while s > 0 {\n"
    "        if t < s { part[t] += part[t + s]; }\n"
    "        barrier();\n"
    "        s = s / 2;\n"
    "    }\n"
    "    if t == 0 && block_id.x < nb { out[block_id.x] = part[0]; }\n"
    "}\n";

static const char src_b[] =
    "@schedule(block = 32, grid = cdiv(n, 32))\n"
    "kernel vec_param(s: u32, v: u32x4, x: &mut [u32x4], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { x[i] = x[i] * u32x4(s) + v; }\n"
    "}\n"
    "@schedule(block = (8, 8), grid = (cdiv(w, 8), cdiv(h, 8)))\n"
    "kernel grid2d(a: &[i32], b: &mut [i32], w: u32, h: u32) {\n"
    "    let x = global_id.x;\n"
    "    let y = global_id.y;\n"
    "    if x < w && y < h {\n"
    "        let k = y * w + x;\n"
    "        b[k] = a[k] * 3 + (x as i32) - (y as i32) * 5;\n"
    "    }\n"
    "}\n"
    "@schedule(block = 64, grid = cdiv(n, 64), shared = sh * 4)\n"
    "kernel dyn_rev(x: &[u32], y: &mut [u32], n: u32, sh: u32) {\n"
    "    shared s: u32[];\n"
    "    let t = thread_id.x;\n"
    "    let i = global_id.x;\n"
    "    var v: u32 = 0;\n"
    "    if i < n { v = x[i]; }\n"
    "    s[t] = v;\n"
    "    if t == 0 { s[sh - 1] = n * 3 + block_id.x; }\n"
    "    barrier();\n"
    "    if i < n { y[i] = s[63 - t] + s[sh - 1]; }\n"
    "}\n"
    "// x is read as u32x4: a view bound to x must start on 16 bytes\n"
    "@schedule(block = 64, grid = cdiv(n4, 64))\n"
    "kernel sum4(x: &[u32], y: &mut [u32], n4: u32) {\n"
    "    let x4 = x as &[u32x4];\n"
    "    let i = global_id.x;\n"
    "    if i < n4 {\n"
    "        let q = x4[i];\n"
    "        y[i] = q.x + q.y * 2 + q.z * 3 + q.w * 4;\n"
    "    }\n"
    "}\n";

enum { T_I32, T_U32, T_F32, T_U32X4, NTYPES };
static const char *tname[NTYPES] = {"i32", "u32", "f32", "u32x4"};
static const size_t tsize[NTYPES] = {4, 4, 4, 16};
static kf_type ktype(int t)
{
    switch (t) {
    case T_I32: return kf_type_scalar(KF_S_I32);
    case T_U32: return kf_type_scalar(KF_S_U32);
    case T_F32: return kf_type_scalar(KF_S_F32);
    default: return kf_type_vector(KF_S_U32, 4);
    }
}
static bool is_int(int t) { return t != T_F32; }
static bool same_class(int a, int b) { return is_int(a) == is_int(b); }

/* parameter kinds: B = buffer (type, mut), V = value (scalar kind) */
enum { V_U32, V_I32, V_F32, V_U32X4 };
typedef struct {
    bool buf;
    int type;   /* buffer: T_*; value: V_* */
    bool mut;
    uint32_t align;
} pdesc;
enum { K_AXPY_U32, K_AXPY_I32, K_AXPY_F32, K_COPY, K_BSUM, K_VEC, K_GRID2D, K_DYN, K_SUM4, NK };
static const char *kname[NK] = {"axpy_u32", "axpy_i32", "axpy_f32", "copy_off", "block_sum",
                                "vec_param", "grid2d",   "dyn_rev",  "sum4"};
static const int kmod[NK] = {0, 0, 0, 0, 0, 1, 1, 1, 1};
static const uint32_t kblock[NK] = {64, 64, 64, 64, 64, 32, 64, 64, 64}; /* threads per block */
static const bool kblock_free[NK] = {1, 1, 1, 1, 0, 1, 1, 0, 1};        /* an explicit smaller block is safe */
static const int knp[NK] = {4, 4, 4, 4, 4, 4, 4, 4, 3};
static const pdesc kp[NK][4] = {
    {{0, V_U32, 0, 0}, {1, T_U32, 0, 4}, {1, T_U32, 1, 4}, {0, V_U32, 0, 0}},
    {{0, V_I32, 0, 0}, {1, T_I32, 0, 4}, {1, T_I32, 1, 4}, {0, V_U32, 0, 0}},
    {{0, V_F32, 0, 0}, {1, T_F32, 0, 4}, {1, T_F32, 1, 4}, {0, V_U32, 0, 0}},
    {{1, T_U32, 0, 4}, {1, T_U32, 1, 4}, {0, V_U32, 0, 0}, {0, V_U32, 0, 0}},
    {{1, T_U32, 0, 4}, {1, T_U32, 1, 4}, {0, V_U32, 0, 0}, {0, V_U32, 0, 0}},
    {{0, V_U32, 0, 0}, {0, V_U32X4, 0, 0}, {1, T_U32X4, 1, 16}, {0, V_U32, 0, 0}},
    {{1, T_I32, 0, 4}, {1, T_I32, 1, 4}, {0, V_U32, 0, 0}, {0, V_U32, 0, 0}},
    {{1, T_U32, 0, 4}, {1, T_U32, 1, 4}, {0, V_U32, 0, 0}, {0, V_U32, 0, 0}},
    {{1, T_U32, 0, 16}, {1, T_U32, 1, 4}, {0, V_U32, 0, 0}, {0, 0, 0, 0}},
};

/* ---------------------------------------------------------------- rng, hash */
static uint64_t rs;
static uint64_t rnd(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint32_t rn(uint32_t n) { return n ? (uint32_t)(rnd() % n) : 0; }
static bool chance(uint32_t pct) { return rn(100) < pct; }
static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* ---------------------------------------------------------------- output */
static FILE *out;
static int verbose, no_cross_rec, no_rec_retarget;
static int step;
static long expect_fails, total_expect_fails, total_steps;
static kf_error err;
static kf_backend backend;
static uint64_t run_hash;

static void emit(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    run_hash = fnv(line, strlen(line)) ^ (run_hash * 31);
    fprintf(out, "%s\n", line);
}

/* A kf_error or, one call in eight, NULL (allowed everywhere). */
static kf_error *E(void)
{
    kf_error_clear(&err);
    return chance(12) ? NULL : &err;
}

/* Prints the step line with status st; checks st against want (-1: any). */
static void report(const char *what, kf_status st, int want)
{
    const char *ok = (want >= 0 && (int)st != want) ? " expect-fail" : "";
    emit("%d %s -> %s%s", step, what, kf_status_name(st), ok);
    if (*ok) {
        expect_fails++;
        fprintf(stderr, "EXPECT seed-step %d: %s -> %s, want %s: %s\n", step, what, kf_status_name(st),
                kf_status_name((kf_status)want), err.msg);
    } else if (verbose && st != KF_OK) {
        fprintf(stderr, "  [%d %s] %s\n", step, what, err.msg);
    }
    kf_error_clear(&err);
}

/* ---------------------------------------------------------------- the model */
#define MAXB 320
#define MAXP 24
#define MAXG 8
#define MAXPIPE 32
#define MAXREC 12
#define MAXCOUNT 700

typedef struct {
    bool used, live;
    kf_buffer *h;
    int dev, type;
    size_t count;
    int kind;        /* 0 create, 1 view, 2 wrap */
    int parent;      /* views: the record viewed */
    int mem;         /* record of the created buffer whose storage this is */
    size_t off;      /* byte offset in that storage */
    bool ro;         /* this handle's own mark */
} buf_t;
static buf_t B[MAXB];
static int nbrec;

typedef struct {
    bool live;
    kf_pipeline *h;
    int dev, k;
} pipe_t;
static pipe_t P[MAXPIPE];

typedef struct {
    bool live;
    kf_plan *h;
    int pipe, k;
    int b[4];          /* buffer records bound (-1 for values) */
    uint32_t v[4];     /* scalar values (u32 bits; f32 as integer; vec: lane 0) */
    uint32_t vx[4];    /* u32x4 lanes */
    size_t need[4];    /* bytes the plan was made with */
    kf_launch l;
} plan_t;
static plan_t PL[MAXP];

typedef struct {
    bool live;
    kf_graph *h;
    int n;
    int plans[MAXREC];
} graph_t;
static graph_t G[MAXG];

static kf_device *dev[2];
static kf_module *mod[2];
static int rec_state;   /* 0 none, 1 recording on dev0, 2 abandoned (reason pending) */
static int rec_n, rec_plans[MAXREC];
static bool have_timer;
static unsigned char hbuf[MAXCOUNT * 16 + 64];

static bool ro_eff(int b)
{
    for (; b >= 0; b = B[b].kind == 1 ? B[b].parent : -1)
        if (B[b].ro) return true;
    return false;
}
static size_t bbytes(int b) { return B[b].count * tsize[B[b].type]; }
static bool overlap(int a, int b)
{
    if (B[a].mem != B[b].mem || !bbytes(a) || !bbytes(b)) return false;
    return B[a].off < B[b].off + bbytes(b) && B[b].off < B[a].off + bbytes(a);
}
/* The handle whose tree holds b: a created buffer or a wrap. */
static int tree_root(int b)
{
    while (B[b].kind == 1) b = B[b].parent;
    return b;
}
static bool bound_in_plan(int b)
{
    for (int i = 0; i < MAXP; i++)
        if (PL[i].live)
            for (int j = 0; j < knp[PL[i].k]; j++)
                if (PL[i].b[j] == b) return true;
    return false;
}
/* Destroying b is allowed: not bound in a plan, and not the last handle of
 * storage that a live wrap (or a view of one) still points into. */
static bool can_destroy(int b)
{
    if (!B[b].live || bound_in_plan(b)) return false;
    int r = tree_root(b);
    if (B[r].kind != 0) return true;
    int same = 0, others = 0;
    for (int i = 0; i < nbrec; i++) {
        if (!B[i].live || B[i].mem != r) continue;
        if (tree_root(i) == r) same++;
        else others++;
    }
    return !(same == 1 && others > 0);
}
static int nlive_bufs(void)
{
    int n = 0;
    for (int i = 0; i < nbrec; i++) n += B[i].live;
    return n;
}
/* A random live buffer matching: dev (-1 any), type (-1 any). */
static int pick_buf(int d, int type)
{
    int cand[MAXB], n = 0;
    for (int i = 0; i < nbrec; i++)
        if (B[i].live && (d < 0 || B[i].dev == d) && (type < 0 || B[i].type == type)) cand[n++] = i;
    return n ? cand[rn(n)] : -1;
}

/* Fills hbuf with n elements of type t, valid for the type's class. */
static void fill_data(int t, size_t n)
{
    if (t == T_F32) {
        float *f = (float *)hbuf;
        for (size_t i = 0; i < n; i++) f[i] = (float)rn(1024);
    } else {
        uint32_t *u = (uint32_t *)hbuf;
        size_t words = n * tsize[t] / 4;
        int mode = rn(3);
        for (size_t i = 0; i < words; i++) u[i] = mode == 0 ? (uint32_t)rnd() : mode == 1 ? rn(100) : (uint32_t)i * 7u;
    }
}

/* The device for a call: dev0 only while dev0 records with -x. */
static int rdev(int d) { return rec_state == 1 && no_cross_rec ? 0 : d; }

/* ---------------------------------------------------------------- buffers */
static int new_rec(void)
{
    if (nbrec >= MAXB) return -1;
    memset(&B[nbrec], 0, sizeof B[nbrec]);
    B[nbrec].used = true;
    return nbrec++;
}

static void op_create(void)
{
    if (nlive_bufs() >= 40 || nbrec >= MAXB - 2) return;
    int d = rdev(chance(80) ? 0 : 1);
    if (chance(8)) {   /* error: not a scalar or vector element type */
        kf_type bad = chance(50) ? kf_type_vector(KF_S_U32, 3) : kf_type_scalar(KF_S_UINT);
        kf_buffer *b = (kf_buffer *)1;
        kf_status st = kf_buffer_create(dev[d], bad, 16, &b, E());
        char w[64];
        snprintf(w, sizeof w, "create-bad-elem dev%d", d);
        report(w, st, rec_state == 1 && d == 0 ? KF_ERR_USAGE : KF_ERR_USAGE);
        if (rec_state == 1 && d == 0) rec_state = 2;
        return;
    }
    int t = rn(NTYPES);
    size_t count = chance(5) ? 0 : 1 + rn(t == T_U32X4 ? 200 : MAXCOUNT);
    int r = new_rec();
    kf_buffer *h = NULL;
    kf_status st = kf_buffer_create(dev[d], ktype(t), count, &h, E());
    int want = (rec_state == 1 && d == 0) ? KF_ERR_USAGE : KF_OK;
    if (want == KF_ERR_USAGE) rec_state = 2;
    char w[96];
    snprintf(w, sizeof w, "create b%d dev%d %s[%zu]", r, d, tname[t], count);
    report(w, st, want);
    if (st == KF_OK) {
        B[r] = (buf_t){true, true, h, d, t, count, 0, -1, r, 0, false};
    } else {
        nbrec--;
    }
}

static void op_view(void)
{
    int p = pick_buf(-1, -1);
    if (p < 0 || nbrec >= MAXB - 2 || rec_state == 1) return;
    size_t c = B[p].count;
    size_t off, cnt;
    bool bad = chance(10);
    if (bad) {
        off = c ? rn((uint32_t)c + 1) : 0;
        cnt = c - off + 1 + rn(4);
    } else {
        off = c ? rn((uint32_t)c + 1) : 0;
        cnt = rn((uint32_t)(c - off) + 1);
    }
    int r = new_rec();
    kf_buffer *h = NULL;
    kf_status st = kf_buffer_view(B[p].h, off, cnt, &h, E());
    char w[96];
    snprintf(w, sizeof w, "view b%d = b%d[%zu +%zu]", r, p, off, cnt);
    report(w, st, bad ? KF_ERR_USAGE : KF_OK);
    if (st == KF_OK) {
        B[r] = (buf_t){true, true, h, B[p].dev, B[p].type, cnt, 1, p, B[p].mem, B[p].off + off * tsize[B[p].type], false};
    } else {
        nbrec--;
    }
}

/* A wrap over part of a live buffer's storage (its device address). */
static void op_wrap(void)
{
    int p = pick_buf(-1, -1);
    if (p < 0 || !B[p].count || nbrec >= MAXB - 2 || rec_state == 1) return;
    int t = B[p].type;
    if (is_int(t) && chance(40)) t = (int[]){T_I32, T_U32, T_U32X4}[rn(3)];
    size_t pb = bbytes(p), es = tsize[t];
    char *base = kf_buffer_address(B[p].h);
    if (chance(8)) {   /* error: misaligned pointer */
        kf_buffer *h = (kf_buffer *)1;
        size_t o = 1 + rn(3);
        kf_status st = kf_buffer_wrap(B[p].dev == 0 ? dev[0] : dev[1], kf_type_scalar(KF_S_U32), 1, base + o, &h, E());
        char w[96];
        snprintf(w, sizeof w, "wrap-misaligned b%d +%zu", p, o);
        report(w, st, KF_ERR_USAGE);
        return;
    }
    if (chance(5)) {   /* error: NULL with a count */
        kf_buffer *h = (kf_buffer *)1;
        kf_status st = kf_buffer_wrap(dev[B[p].dev], ktype(t), 4, NULL, &h, E());
        report("wrap-null", st, KF_ERR_USAGE);
        return;
    }
    /* an element-aligned sub-range, also aligned in absolute storage offset */
    size_t abs0 = B[p].off;
    size_t first = (abs0 + es - 1) / es * es - abs0;   /* bytes into p */
    if (first >= pb) return;
    size_t maxel = (pb - first) / es;
    if (!maxel) return;
    size_t skip = rn((uint32_t)maxel);
    size_t cnt = 1 + rn((uint32_t)(maxel - skip));
    size_t o = first + skip * es;
    int r = new_rec();
    kf_buffer *h = NULL;
    kf_status st = kf_buffer_wrap(dev[B[p].dev], ktype(t), cnt, base + o, &h, E());
    char w[96];
    snprintf(w, sizeof w, "wrap b%d = b%d@%zu %s[%zu]", r, p, o, tname[t], cnt);
    report(w, st, KF_OK);
    if (st == KF_OK) {
        B[r] = (buf_t){true, true, h, B[p].dev, t, cnt, 2, -1, B[p].mem, B[p].off + o, false};
    } else {
        nbrec--;
    }
}

static void op_upload(void)
{
    int b = pick_buf(rdev(-1), -1);
    if (b < 0) return;
    size_t es = tsize[B[b].type], cnt = B[b].count;
    bool bad = chance(8);
    size_t n = bad ? cnt + 1 + rn(3) : rn((uint32_t)cnt + 1);
    if (n > MAXCOUNT + 3) n = MAXCOUNT + 3;
    fill_data(B[b].type, n);
    size_t bytes = n * es;
    if (!bad && is_int(B[b].type) && bytes && chance(20)) bytes -= rn(4);   /* a partial element */
    kf_status st = kf_buffer_upload(B[b].h, hbuf, bytes, E());
    int want = (rec_state == 1 && B[b].dev == 0) ? KF_ERR_USAGE : bad ? KF_ERR_USAGE : KF_OK;
    if (rec_state == 1 && B[b].dev == 0) rec_state = 2;
    char w[96];
    snprintf(w, sizeof w, "upload b%d %zu bytes h=%016llx", b, bytes, (unsigned long long)fnv(hbuf, bytes));
    report(w, st, want);
}

static void op_download(void)
{
    int b = pick_buf(rdev(-1), -1);
    if (b < 0) return;
    size_t by = bbytes(b);
    bool bad = chance(8);
    size_t n = bad ? by + 1 + rn(16) : (chance(70) ? by : rn((uint32_t)by + 1));
    memset(hbuf, 0xAB, n);
    kf_status st = kf_buffer_download(B[b].h, hbuf, n, E());
    int want = (rec_state == 1 && B[b].dev == 0) ? KF_ERR_USAGE : bad ? KF_ERR_USAGE : KF_OK;
    if (rec_state == 1 && B[b].dev == 0) rec_state = 2;
    char w[128];
    snprintf(w, sizeof w, "download b%d %zu bytes h=%016llx", b, n,
             st == KF_OK ? (unsigned long long)fnv(hbuf, n) : 0ull);
    report(w, st, want);
}

static void op_copy(void)
{
    int d = pick_buf(rdev(-1), -1);
    if (d < 0) return;
    int kind = rn(100);
    int s = -1;
    if (kind < 6) {   /* error: buffers of two devices */
        if (rec_state == 1) return;
        s = pick_buf(1 - B[d].dev, -1);
        if (s < 0) return;
        kf_status st = kf_buffer_copy(B[d].h, B[s].h, 0, KF_DISPATCH_SYNC, NULL, E());
        char w[64];
        snprintf(w, sizeof w, "copy-cross-device b%d <- b%d", d, s);
        report(w, st, KF_ERR_USAGE);
        return;
    }
    for (int tries = 0; tries < 8 && s < 0; tries++) {
        int c = pick_buf(B[d].dev, -1);
        if (c >= 0 && c != d && same_class(B[c].type, B[d].type) && !overlap(c, d)) s = c;
    }
    if (s < 0) return;
    size_t maxb = bbytes(d) < bbytes(s) ? bbytes(d) : bbytes(s);
    size_t es = B[d].type == T_F32 ? 4 : 1;
    bool bad = kind < 14;
    size_t bytes = bad ? maxb + 1 + rn(8) : rn((uint32_t)(maxb / es) + 1) * es;
    int mode = rn(3);
    float ms = 0, *pms = &ms;
    bool nulms = !bad && mode == KF_DISPATCH_TIMED && chance(20);
    if (nulms) pms = NULL;
    kf_status st = kf_buffer_copy(B[d].h, B[s].h, bytes, (kf_dispatch_mode)mode, pms, E());
    int want = (rec_state == 1 && B[d].dev == 0) ? KF_ERR_USAGE : (bad || nulms) ? KF_ERR_USAGE : KF_OK;
    if (rec_state == 1 && B[d].dev == 0) rec_state = 2;
    char w[96];
    snprintf(w, sizeof w, "copy b%d <- b%d %zu bytes mode%d%s", d, s, bytes, mode, nulms ? " ms=NULL" : "");
    report(w, st, want);
}

static void op_readonly(void)
{
    int b = pick_buf(-1, -1);
    if (b < 0) return;
    bool on = chance(45);
    kf_buffer_set_readonly(B[b].h, on);
    B[b].ro = on;
    bool got = kf_buffer_readonly(B[b].h), want = ro_eff(b);
    char w[64];
    snprintf(w, sizeof w, "set_readonly b%d %d eff=%d", b, on, got);
    report(w, got == want ? KF_OK : KF_ERR_USAGE, KF_OK);
}

static void op_destroy_buf(void)
{
    int b = pick_buf(-1, -1);
    if (b < 0 || !can_destroy(b)) return;
    kf_buffer_destroy(B[b].h);
    B[b].live = false;
    B[b].h = NULL;
    char w[64];
    snprintf(w, sizeof w, "destroy b%d%s", b, rec_state == 1 && B[b].dev == 0 ? " (abandons)" : "");
    if (rec_state == 1 && B[b].dev == 0) rec_state = 2;
    report(w, KF_OK, KF_OK);
}

static void op_sync(void)
{
    int d = rdev(chance(80) ? 0 : 1);
    kf_status st = kf_device_sync(dev[d], E());
    int want = (rec_state == 1 && d == 0) ? KF_ERR_USAGE : KF_OK;
    if (want) rec_state = 2;
    char w[32];
    snprintf(w, sizeof w, "sync dev%d", d);
    report(w, st, want);
}

/* Timers and PDL differ by backend by design: called, never printed. */
static void op_timer_pdl(void)
{
    if (rec_state == 1) return;
    if (chance(50)) {
        bool on = chance(50);
        kf_device_set_pdl(dev[rn(2)], on);
        return;
    }
    float ms = 0;
    kf_status st;
    if (!have_timer) {
        st = kf_device_timer_start(dev[0], E());
        if (st == KF_OK) have_timer = true;
        else if (backend != KF_BACKEND_CPU) fprintf(stderr, "EXPECT timer_start on a GPU: %s\n", err.msg);
    } else {
        st = kf_device_timer_stop(dev[0], &ms, E());
        have_timer = false;
        if (st != KF_OK) fprintf(stderr, "EXPECT timer_stop: %s\n", err.msg);
    }
    if (backend == KF_BACKEND_CPU && st != KF_ERR_USAGE) fprintf(stderr, "EXPECT timer on the CPU: %s\n", kf_status_name(st));
    kf_error_clear(&err);
}

/* ---------------------------------------------------------------- pipelines */
static int pick_pipe(int d, int k)
{
    int cand[MAXPIPE], n = 0;
    for (int i = 0; i < MAXPIPE; i++)
        if (P[i].live && (d < 0 || P[i].dev == d) && (k < 0 || P[i].k == k)) cand[n++] = i;
    return n ? cand[rn(n)] : -1;
}
static bool pipe_in_plan(int p)
{
    for (int i = 0; i < MAXP; i++)
        if (PL[i].live && PL[i].pipe == p) return true;
    return false;
}
static int free_pipe_slot(void)
{
    for (int i = 0; i < MAXPIPE; i++)
        if (!P[i].live) return i;
    return -1;
}
static const kf_kernel *kern(int k) { return kf_module_kernel(mod[kmod[k]], kname[k]); }

static void op_pipeline(void)
{
    int c = rn(100);
    if (c < 40) {   /* destroy one not used by a plan (keep one per kernel on dev0) */
        int p = pick_pipe(-1, -1);
        if (p < 0 || pipe_in_plan(p)) return;
        int others = 0;
        for (int i = 0; i < MAXPIPE; i++) others += i != p && P[i].live && P[i].dev == P[p].dev && P[i].k == P[p].k;
        if (!others) return;
        kf_pipeline_destroy(P[p].h);
        P[p].live = false;
        char w[48];
        snprintf(w, sizeof w, "pipeline_destroy p%d", p);
        report(w, KF_OK, KF_OK);
        return;
    }
    int d = rdev(chance(75) ? 0 : 1);
    int k = rn(NK);
    if (c < 48) {   /* error: a kernel of the other module */
        kf_pipeline *h = NULL;
        kf_status st = kf_pipeline_create(dev[d], mod[1 - kmod[k]], kern(k), &h, E());
        int want = KF_ERR_USAGE;
        if (rec_state == 1 && d == 0) rec_state = 2;
        char w[64];
        snprintf(w, sizeof w, "pipeline_create-wrong-module %s dev%d", kname[k], d);
        report(w, st, want);
        if (st == KF_OK) kf_pipeline_destroy(h);
        return;
    }
    int s = free_pipe_slot();
    if (s < 0) return;
    kf_pipeline *h = NULL;
    kf_status st = kf_pipeline_create(dev[d], mod[kmod[k]], kern(k), &h, E());
    int want = (rec_state == 1 && d == 0) ? KF_ERR_USAGE : KF_OK;
    if (want) rec_state = 2;
    char w[64];
    snprintf(w, sizeof w, "pipeline_create p%d %s dev%d", s, kname[k], d);
    report(w, st, want);
    if (st == KF_OK) P[s] = (pipe_t){true, h, d, k};
}

/* ---------------------------------------------------------------- arguments */
/* Requirements of kernel k with values v under launch l: the element count
 * each buffer parameter must have, and whether the values are in range.
 * dyn: the dynamic shared bytes the launch would use. */
static bool requirements(int k, const uint32_t *v, const kf_launch *l, size_t need[4])
{
    memset(need, 0, 4 * sizeof *need);
    switch (k) {
    case K_AXPY_U32: case K_AXPY_I32: case K_AXPY_F32:
        need[1] = need[2] = v[3];
        return v[3] >= 1;
    case K_COPY:
        need[0] = (size_t)v[2] + v[3];
        need[1] = v[3];
        return true;
    case K_BSUM:
        need[0] = v[2];
        need[1] = v[3];
        return v[3] >= 1;
    case K_VEC:
        need[2] = v[3];
        return v[3] >= 1;
    case K_GRID2D:
        need[0] = need[1] = (size_t)v[2] * v[3];
        return v[2] >= 1 && v[3] >= 1;
    case K_DYN: {
        need[0] = need[1] = v[2];
        uint32_t dyn = l->dyn_shared ? l->dyn_shared : v[3] * 4;
        return v[2] >= 1 && v[3] >= 128 && v[3] <= 16384 && v[3] * 4 <= dyn;
    }
    case K_SUM4:
        need[0] = (size_t)v[2] * 4;
        need[1] = v[2];
        return v[2] >= 1;
    }
    return false;
}

static kf_value mkval(int vt, uint32_t x, const uint32_t *lanes)
{
    switch (vt) {
    case V_U32: return kf_value_u32(x);
    case V_I32: return kf_value_i32((int32_t)x);
    case V_F32: return kf_value_f32((float)(int32_t)x);
    default: {
        kf_value v = kf_value_splat(kf_value_u32(0), 4);
        for (int i = 0; i < 4; i++) v.lane[i] = lanes[i];
        return v;
    }
    }
}

/* A buffer for parameter j of kernel k on device d: type, writable if
 * mut, aligned, at least `minc` elements, no overlap with the other
 * buffers chosen (for & vs &mut). */
static bool buf_fits(int b, int d, const pdesc *pd, size_t minc)
{
    if (!B[b].live || B[b].dev != d || B[b].type != pd->type || B[b].count < minc) return false;
    if (pd->mut && ro_eff(b)) return false;
    if (B[b].off % pd->align) return false;
    return true;
}
static bool no_alias(int k, const int *bs, int j, int b)
{
    for (int i = 0; i < knp[k]; i++)
        if (i != j && bs[i] >= 0 && kp[k][i].mut != kp[k][j].mut && overlap(bs[i], b)) return false;
    return true;
}

typedef struct {
    int k, d;
    int b[4];
    uint32_t v[4];
    uint32_t vx[4];
    kf_launch l;
} argset;

/* Draws a valid argument set for kernel k on device d; false when the
 * buffers on hand do not allow one. */
static bool draw_args(int k, int d, argset *a)
{
    memset(a, 0, sizeof *a);
    a->k = k, a->d = d;
    for (int j = 0; j < 4; j++) a->b[j] = -1;
    for (int j = 0; j < knp[k]; j++) {
        if (!kp[k][j].buf) continue;
        int cand[MAXB], n = 0;
        for (int i = 0; i < nbrec; i++)
            if (buf_fits(i, d, &kp[k][j], 1) && no_alias(k, a->b, j, i)) cand[n++] = i;
        if (!n) return false;
        a->b[j] = cand[rn(n)];
    }
    /* values from the chosen sizes */
    size_t c[4];
    for (int j = 0; j < knp[k]; j++) c[j] = a->b[j] >= 0 ? B[a->b[j]].count : 0;
    switch (k) {
    case K_AXPY_U32: case K_AXPY_I32: case K_AXPY_F32: {
        size_t m = c[1] < c[2] ? c[1] : c[2];
        a->v[3] = 1 + rn((uint32_t)m);
        a->v[0] = k == K_AXPY_F32 ? (uint32_t)((int32_t)rn(9) - 4) : (uint32_t)rnd();
        break;
    }
    case K_COPY: {
        size_t m = c[0] < c[1] ? c[0] : c[1];
        a->v[3] = 1 + rn((uint32_t)m);
        a->v[2] = rn((uint32_t)(c[0] - a->v[3]) + 1);
        break;
    }
    case K_BSUM:
        a->v[2] = rn((uint32_t)c[0] + 1);
        a->v[3] = 1 + rn((uint32_t)(c[1] < 20 ? c[1] : 20));
        break;
    case K_VEC:
        a->v[0] = (uint32_t)rnd();
        for (int i = 0; i < 4; i++) a->vx[i] = (uint32_t)rnd();
        a->v[3] = 1 + rn((uint32_t)c[2]);
        break;
    case K_GRID2D: {
        size_t m = c[0] < c[1] ? c[0] : c[1];
        uint32_t w = 1 + rn((uint32_t)(m < 40 ? m : 40));
        a->v[2] = w;
        a->v[3] = 1 + rn((uint32_t)(m / w));
        break;
    }
    case K_DYN: {
        size_t m = c[0] < c[1] ? c[0] : c[1];
        a->v[2] = 1 + rn((uint32_t)m);
        a->v[3] = chance(20) ? 12288 + rn(4097) : 128 + rn(2000);
        break;
    }
    case K_SUM4: {
        if (c[0] < 4) return false;
        size_t m = c[0] / 4 < c[1] ? c[0] / 4 : c[1];
        a->v[2] = 1 + rn((uint32_t)m);
        break;
    }
    }
    /* the launch: the schedule, or parts given */
    if (k == K_COPY) a->l.count = a->v[3] + rn(70);
    if (chance(25)) {
        if (k == K_GRID2D) {
            a->l.grid[0] = 1 + rn(6), a->l.grid[1] = 1 + rn(6);
        } else {
            a->l.grid[0] = 1 + rn(12);
        }
        if (k == K_COPY && chance(50)) a->l.count = 0;
    }
    if (kblock_free[k] && chance(20)) {
        if (k == K_GRID2D) {
            a->l.block[0] = 1 + rn(8), a->l.block[1] = 1 + rn(8);
        } else {
            a->l.block[0] = 1 + rn(kblock[k]);
        }
    }
    if (k == K_DYN && chance(30)) a->l.dyn_shared = a->v[3] * 4 + rn(256) * 4;
    size_t need[4];
    return requirements(k, a->v, &a->l, need);
}

static void build_args(const argset *a, kf_arg *args)
{
    for (int j = 0; j < knp[a->k]; j++)
        args[j] = kp[a->k][j].buf ? kf_arg_buffer(B[a->b[j]].h) : kf_arg_value(mkval(kp[a->k][j].type, a->v[j], a->vx));
}

/* Makes one defect in a valid argument set; returns its name. */
static const char *spoil(argset *a, kf_arg *args, uint32_t *nargs, int *mode, bool *nulms)
{
    int k = a->k;
    for (int tries = 0; tries < 10; tries++) {
        switch (rn(13)) {
        case 0: *nargs -= 1 + rn(2); return "nargs-short";
        case 1: {   /* wrong element type */
            for (int j = 0; j < knp[k]; j++)
                if (kp[k][j].buf) {
                    int t = (kp[k][j].type + 1 + rn(NTYPES - 1)) % NTYPES;
                    int b = pick_buf(a->d, t);
                    if (b < 0) break;
                    args[j] = kf_arg_buffer(B[b].h);
                    return "wrong-elem-type";
                }
            break;
        }
        case 2: {   /* a value of the wrong type */
            for (int j = 0; j < knp[k]; j++)
                if (!kp[k][j].buf) {
                    args[j] = kf_arg_value(kp[k][j].type == V_I32 ? kf_value_u32(1) : chance(50) ? kf_value_i32(1) : kf_value_u64(1));
                    return "wrong-value-type";
                }
            break;
        }
        case 3: {   /* a value where a buffer goes, or the reverse */
            int j = rn(knp[k]);
            if (kp[k][j].buf) args[j] = kf_arg_value(kf_value_u32(3));
            else {
                int b = pick_buf(a->d, -1);
                if (b < 0) break;
                args[j] = kf_arg_buffer(B[b].h);
            }
            return "buffer-value-swap";
        }
        case 4: {   /* read-only &mut: a read-only buffer, or a view of one */
            for (int j = 0; j < knp[k]; j++)
                if (kp[k][j].buf && kp[k][j].mut) {
                    for (int i = 0; i < nbrec; i++)
                        if (B[i].live && B[i].dev == a->d && B[i].type == kp[k][j].type && ro_eff(i)) {
                            args[j] = kf_arg_buffer(B[i].h);
                            return "readonly-mut";
                        }
                }
            break;
        }
        case 5: {   /* & and &mut over overlapping bytes */
            int jr = -1, jw = -1;
            for (int j = 0; j < knp[k]; j++)
                if (kp[k][j].buf) {
                    if (kp[k][j].mut) jw = j;
                    else jr = j;
                }
            if (jr < 0 || jw < 0) break;
            for (int i = 0; i < nbrec; i++)
                if (B[i].live && B[i].dev == a->d && B[i].type == kp[k][jr].type && overlap(i, a->b[jw]) &&
                    B[i].off % kp[k][jr].align == 0) {
                    args[jr] = kf_arg_buffer(B[i].h);
                    return "overlap-ro-mut";
                }
            break;
        }
        case 6: {   /* sum4: a view of x not on 16 bytes */
            if (k != K_SUM4) break;
            for (int i = 0; i < nbrec; i++)
                if (B[i].live && B[i].dev == a->d && B[i].type == T_U32 && B[i].off % 16 && !overlap(i, a->b[1])) {
                    args[0] = kf_arg_buffer(B[i].h);
                    return "misaligned-view";
                }
            break;
        }
        case 7: {
            int c = rn(4);
            if (c == 0) a->l.block[0] = 2048, a->l.block[1] = a->l.block[2] = 1;
            else if (c == 1) a->l.block[0] = kblock[k] * 2, a->l.block[1] = a->l.block[2] = 1;   /* over the kernel's bound */
            else if (c == 2) a->l.block[0] = 1, a->l.block[1] = 1, a->l.block[2] = 65;          /* over max_block.z */
            else a->l.block[0] = 32, a->l.block[1] = 40, a->l.block[2] = 1;                      /* 1280 threads */
            return "block-over-limit";
        }
        case 8:
            if (chance(50)) a->l.grid[0] = 1, a->l.grid[1] = 70000, a->l.grid[2] = 1;
            else a->l.grid[0] = 1, a->l.grid[1] = 1, a->l.grid[2] = 65536;
            return "grid-over-limit";
        case 9:
            if (k == K_DYN) {
                a->l.dyn_shared = 400000;
                return "shared-over-limit";
            }
            if (k == K_GRID2D) {   /* the schedule's grid.y over the limit */
                memset(&a->l, 0, sizeof a->l);
                args[3] = kf_arg_value(kf_value_u32(600000));
                return "sched-grid-over-limit";
            }
            break;
        case 10:   /* the schedule's grid is empty, or no count */
            if (k == K_COPY) {
                memset(&a->l, 0, sizeof a->l);
                return "no-count";
            }
            if (k == K_BSUM) {
                memset(&a->l, 0, sizeof a->l);
                args[3] = kf_arg_value(kf_value_u32(0));
                return "empty-grid";
            }
            if (k == K_DYN || k == K_AXPY_U32 || k == K_VEC) {
                memset(&a->l, 0, sizeof a->l);
                args[k == K_DYN ? 2 : 3] = kf_arg_value(kf_value_u32(0));
                return "empty-grid";
            }
            break;
        case 11: {   /* a buffer of the other device */
            for (int j = 0; j < knp[k]; j++)
                if (kp[k][j].buf) {
                    int b = pick_buf(1 - a->d, kp[k][j].type);
                    if (b < 0) break;
                    args[j] = kf_arg_buffer(B[b].h);
                    return "other-device-buffer";
                }
            break;
        }
        case 12:
            if (chance(50)) {
                *mode = 7;
                return "bad-mode";
            }
            *mode = KF_DISPATCH_TIMED;
            *nulms = true;
            return "timed-null-ms";
        }
    }
    *nargs = 0;
    return "no-args";
}

static void argdesc(const argset *a, char *w, size_t n)
{
    int k = a->k;
    size_t u = (size_t)snprintf(w, n, "%s(", kname[k]);
    for (int j = 0; j < knp[k] && u < n; j++) {
        if (kp[k][j].buf) u += (size_t)snprintf(w + u, n - u, "%sb%d", j ? "," : "", a->b[j]);
        else if (kp[k][j].type == V_U32X4)
            u += (size_t)snprintf(w + u, n - u, "%s<%u,%u,%u,%u>", j ? "," : "", a->vx[0], a->vx[1], a->vx[2], a->vx[3]);
        else u += (size_t)snprintf(w + u, n - u, "%s%d", j ? "," : "", (int)a->v[j]);
    }
    if (u < n)
        snprintf(w + u, n - u, ") g=%u,%u,%u b=%u,%u,%u sh=%u c=%llu", a->l.grid[0], a->l.grid[1], a->l.grid[2],
                 a->l.block[0], a->l.block[1], a->l.block[2], a->l.dyn_shared, (unsigned long long)a->l.count);
}

/* A kernel with a pipeline on device d, chosen at random. */
static int pick_kernel_pipe(int d, int *k)
{
    int p = pick_pipe(d, -1);
    if (p >= 0) *k = P[p].k;
    return p;
}

/* A launch's pipeline on device d (its kernel in *k) and valid arguments
 * for it (a, args, *nargs); -1 when there is none to draw. */
static int draw_launch(int d, int *k, argset *a, kf_arg args[4], uint32_t *nargs)
{
    int p = pick_kernel_pipe(d, k);
    if (p < 0 || !draw_args(*k, d, a)) return -1;
    build_args(a, args);
    *nargs = (uint32_t)knp[*k];
    return p;
}

/* kf_dispatch: valid, or with one defect. */
static void op_dispatch(void)
{
    int d = rdev(chance(85) ? 0 : 1), k;
    argset a;
    kf_arg args[4];
    uint32_t nargs;
    int p = draw_launch(d, &k, &a, args, &nargs);
    if (p < 0) return;
    int mode = rn(3);
    bool nulms = false;
    const char *defect = chance(30) ? spoil(&a, args, &nargs, &mode, &nulms) : NULL;
    float ms = 0;
    bool with_launch = a.l.grid[0] || a.l.block[0] || a.l.dyn_shared || a.l.count || a.l.grid[1] || a.l.grid[2];
    kf_status st = kf_dispatch(P[p].h, nargs ? args : (chance(50) ? NULL : args), nargs, with_launch ? &a.l : NULL,
                               (kf_dispatch_mode)mode, nulms ? NULL : &ms, E());
    int want = defect ? KF_ERR_USAGE : KF_OK;
    if (rec_state == 1 && d == 0) {
        want = KF_ERR_USAGE;
        rec_state = 2;
    }
    char w[400], ad[300];
    argdesc(&a, ad, sizeof ad);
    snprintf(w, sizeof w, "dispatch p%d dev%d mode%d %s%s%s", p, d, mode, ad, defect ? " defect=" : "", defect ? defect : "");
    report(w, st, want);
}

/* ---------------------------------------------------------------- plans */
static int free_plan_slot(void)
{
    for (int i = 0; i < MAXP; i++)
        if (!PL[i].live) return i;
    return -1;
}
static int pick_plan(int d)
{
    int cand[MAXP], n = 0;
    for (int i = 0; i < MAXP; i++)
        if (PL[i].live && (d < 0 || P[PL[i].pipe].dev == d)) cand[n++] = i;
    return n ? cand[rn(n)] : -1;
}
static bool plan_in_graph(int pl)
{
    for (int g = 0; g < MAXG; g++)
        if (G[g].live)
            for (int i = 0; i < G[g].n; i++)
                if (G[g].plans[i] == pl) return true;
    for (int i = 0; i < rec_n && rec_state == 1; i++)
        if (rec_plans[i] == pl) return true;
    return false;
}
/* A plan launch is refused (read-only &mut binding) */
static bool plan_blocked(int pl)
{
    int k = PL[pl].k;
    for (int j = 0; j < knp[k]; j++)
        if (kp[k][j].buf && kp[k][j].mut && ro_eff(PL[pl].b[j])) return true;
    return false;
}

static void op_plan_create(void)
{
    int s = free_plan_slot();
    if (s < 0) return;
    int d = chance(85) ? 0 : 1, k;
    argset a;
    kf_arg args[4];
    uint32_t nargs;
    int p = draw_launch(d, &k, &a, args, &nargs);
    if (p < 0) return;
    int mode = 0;
    bool nulms = false;
    const char *defect = chance(20) ? spoil(&a, args, &nargs, &mode, &nulms) : NULL;
    if (defect && (!strcmp(defect, "bad-mode") || !strcmp(defect, "timed-null-ms"))) defect = NULL;   /* no mode here */
    bool with_launch = a.l.grid[0] || a.l.block[0] || a.l.dyn_shared || a.l.count || a.l.grid[1] || a.l.grid[2];
    kf_plan *h = NULL;
    kf_status st = kf_plan_create(P[p].h, nargs ? args : NULL, nargs, with_launch ? &a.l : NULL, &h, E());
    char w[400], ad[300];
    argdesc(&a, ad, sizeof ad);
    snprintf(w, sizeof w, "plan_create pl%d p%d %s%s%s", s, p, ad, defect ? " defect=" : "", defect ? defect : "");
    report(w, st, defect ? KF_ERR_USAGE : KF_OK);   /* plan creation is allowed while recording */
    if (st != KF_OK) return;
    if (defect) {   /* accepted with a defect: reported above; never launch it */
        kf_plan_destroy(h);
        return;
    }
    PL[s] = (plan_t){.live = true, .h = h, .pipe = p, .k = k, .l = a.l};
    for (int j = 0; j < 4; j++) {
        PL[s].b[j] = a.b[j];
        PL[s].v[j] = a.v[j];
        PL[s].vx[j] = a.vx[j];
        PL[s].need[j] = a.b[j] >= 0 ? bbytes(a.b[j]) : 0;
    }
}

static void print_shape(int pl, const char *what)
{
    uint32_t g[3], b[3], dyn;
    kf_plan_shape(PL[pl].h, g, b, &dyn);
    emit("%d   shape pl%d %s g=%u,%u,%u b=%u,%u,%u sh=%u", step, pl, what, g[0], g[1], g[2], b[0], b[1], b[2], dyn);
}

static void op_plan_launch(void)
{
    int pl = pick_plan(rdev(-1));
    if (pl < 0) return;
    int d = P[PL[pl].pipe].dev;
    int mode = rec_state == 1 && d == 0 && chance(85) ? KF_DISPATCH_ASYNC : rn(3);
    bool nulms = false, badmode = false;
    if (chance(4)) nulms = mode == KF_DISPATCH_TIMED;
    if (chance(3)) badmode = true, mode = 5;
    float ms = 0;
    bool blocked = plan_blocked(pl);
    bool recording = rec_state == 1 && d == 0;
    kf_status st = kf_plan_launch(PL[pl].h, (kf_dispatch_mode)mode, nulms ? NULL : &ms, E());
    int want = (blocked || nulms || badmode) ? KF_ERR_USAGE : KF_OK;
    if (recording && mode != KF_DISPATCH_ASYNC) want = KF_ERR_USAGE;
    char w[128];
    snprintf(w, sizeof w, "plan_launch pl%d mode%d%s%s%s", pl, mode, nulms ? " ms=NULL" : "", blocked ? " (read-only &mut)" : "",
             recording ? " [rec]" : "");
    report(w, st, want);
    if (!recording) return;
    if (st == KF_OK && want == KF_OK) {
        if (rec_n < MAXREC) rec_plans[rec_n++] = pl;
        else {   /* should not happen: the caller stops at MAXREC */
        }
        return;
    }
    /* kforge.h: an invalid launch (and a SYNC or TIMED one) abandons the
     * recording. End it now and check that it was abandoned, so the model
     * never depends on it. */
    rec_state = 2;
    kf_graph *g = NULL;
    step++;
    kf_status st2 = kf_graph_end(dev[0], &g, E());
    report("graph_end after a refused launch", st2, KF_ERR_USAGE);
    if (st2 == KF_OK) kf_graph_destroy(g);
    rec_state = 0;
    rec_n = 0;
}

/* kf_plan_set_value: valid (keeps the plan in bounds) or refused; the
 * plan's shape must not change on an error. */
static void op_set_value(void)
{
    int pl = pick_plan(-1);
    if (pl < 0) return;
    plan_t *q = &PL[pl];
    int k = q->k;
    int vals[4], nv = 0;
    for (int j = 0; j < knp[k]; j++)
        if (!kp[k][j].buf) vals[nv++] = j;
    int j = vals[rn(nv)];
    uint32_t nvv[4];
    memcpy(nvv, q->v, sizeof nvv);
    uint32_t lanes[4];
    memcpy(lanes, q->vx, sizeof lanes);
    const char *defect = NULL;
    uint32_t index = (uint32_t)j;
    kf_value v;
    int c = rn(100);
    if (c < 8) {
        index = (uint32_t)knp[k] + rn(3);
        v = kf_value_u32(1);
        defect = "index-out-of-range";
    } else if (c < 14) {
        for (int i = 0; i < knp[k]; i++)
            if (kp[k][i].buf) index = (uint32_t)i;
        v = kf_value_u32(1);
        defect = "index-is-buffer";
    } else if (c < 22) {
        v = kp[k][j].type == V_U32 ? kf_value_i32(1) : kf_value_u32(1);
        defect = "wrong-type";
    } else if (c < 30) {
        /* a value whose grid is empty or over a limit, where the schedule reads it */
        if (k == K_COPY) return;
        if (k == K_GRID2D && chance(50)) index = 3, v = kf_value_u32(600000), defect = "grid-over-limit";
        else if (k == K_DYN && chance(50)) index = 3, v = kf_value_u32(100000), defect = "shared-over-limit";
        else {
            index = k == K_SUM4 || k == K_DYN || k == K_GRID2D ? 2 : 3;
            v = kf_value_u32(0), defect = "empty-grid";
        }
        /* only refused when the schedule evaluates it: not with a fixed grid (and dyn) */
        bool grid_fixed = q->l.grid[0] != 0;
        if (!strcmp(defect, "shared-over-limit") && q->l.dyn_shared) return;
        if (strcmp(defect, "shared-over-limit") && grid_fixed) return;
    } else {
        /* a new valid value */
        uint32_t x = 0;
        switch (k) {
        case K_AXPY_U32: case K_AXPY_I32: case K_AXPY_F32:
            if (j == 0) x = k == K_AXPY_F32 ? (uint32_t)((int32_t)rn(9) - 4) : (uint32_t)rnd();
            else {
                size_t m = B[q->b[1]].count < B[q->b[2]].count ? B[q->b[1]].count : B[q->b[2]].count;
                x = 1 + rn((uint32_t)m);
            }
            break;
        case K_COPY: {
            size_t cs = B[q->b[0]].count, cd = B[q->b[1]].count;
            if (j == 3) {
                size_t m = cd < cs - q->v[2] ? cd : cs - q->v[2];
                if (!m) return;
                x = 1 + rn((uint32_t)m);
            } else x = rn((uint32_t)(cs - q->v[3]) + 1);
            break;
        }
        case K_BSUM:
            x = j == 2 ? rn((uint32_t)B[q->b[0]].count + 1) : 1 + rn((uint32_t)(B[q->b[1]].count < 20 ? B[q->b[1]].count : 20));
            break;
        case K_VEC:
            if (j == 1) {
                for (int i = 0; i < 4; i++) lanes[i] = (uint32_t)rnd();
            } else if (j == 0) x = (uint32_t)rnd();
            else x = 1 + rn((uint32_t)B[q->b[2]].count);
            break;
        case K_GRID2D: {
            size_t m = B[q->b[0]].count < B[q->b[1]].count ? B[q->b[0]].count : B[q->b[1]].count;
            uint32_t other = q->v[j == 2 ? 3 : 2];
            if (m / other < 1) return;
            x = 1 + rn((uint32_t)(m / other < 60 ? m / other : 60));
            break;
        }
        case K_DYN:
            if (j == 2) {
                size_t m = B[q->b[0]].count < B[q->b[1]].count ? B[q->b[0]].count : B[q->b[1]].count;
                x = 1 + rn((uint32_t)m);
            } else {
                uint32_t lim = q->l.dyn_shared ? q->l.dyn_shared / 4 : 16384;
                if (lim > 16384) lim = 16384;
                if (lim < 128) return;
                x = 128 + rn(lim - 127);
            }
            break;
        case K_SUM4: {
            size_t m = B[q->b[0]].count / 4 < B[q->b[1]].count ? B[q->b[0]].count / 4 : B[q->b[1]].count;
            x = 1 + rn((uint32_t)m);
            break;
        }
        }
        nvv[j] = x;
        size_t need[4];
        if (!requirements(k, nvv, &q->l, need)) return;
        for (int i = 0; i < knp[k]; i++)
            if (kp[k][i].buf && B[q->b[i]].count < need[i]) return;
        v = mkval(kp[k][j].type, x, lanes);
    }
    uint32_t g0[3], b0[3], d0, g1[3], b1[3], d1;
    kf_plan_shape(q->h, g0, b0, &d0);
    bool nullv = chance(3) && !defect;
    if (nullv) defect = "null-value";
    kf_status st = kf_plan_set_value(q->h, index, nullv ? NULL : &v, E());
    char w[160];
    if (kp[k][j].type == V_U32X4 && !defect)
        snprintf(w, sizeof w, "set_value pl%d [%u] = <%u,%u,%u,%u>", pl, index, lanes[0], lanes[1], lanes[2], lanes[3]);
    else
        snprintf(w, sizeof w, "set_value pl%d [%u] = %d%s%s", pl, index, defect ? (int)v.lane[0] : (int)nvv[j],
                 defect ? " defect=" : "", defect ? defect : "");
    report(w, st, defect ? KF_ERR_USAGE : -1);
    kf_plan_shape(q->h, g1, b1, &d1);
    if (st != KF_OK) {
        if (memcmp(g0, g1, sizeof g0) || memcmp(b0, b1, sizeof b0) || d0 != d1) {
            expect_fails++;
            emit("%d   shape changed by a refused set_value expect-fail", step);
            fprintf(stderr, "EXPECT step %d: refused set_value changed the plan's shape\n", step);
        }
        return;
    }
    if (defect) return;
    q->v[j] = nvv[j];
    memcpy(q->vx, lanes, sizeof lanes);
    print_shape(pl, "after set_value");
}

static void op_set_buffer(void)
{
    int pl = pick_plan(-1);
    if (pl < 0) return;
    plan_t *q = &PL[pl];
    int k = q->k, d = P[q->pipe].dev;
    int bj[4], nb = 0;
    for (int j = 0; j < knp[k]; j++)
        if (kp[k][j].buf) bj[nb++] = j;
    int j = bj[rn(nb)];
    int c = rn(100);
    const char *defect = NULL;
    uint32_t index = (uint32_t)j;
    int nbuf = -1;
    size_t need[4];
    requirements(k, q->v, &q->l, need);
    if (c < 6) {
        index = (uint32_t)knp[k] + rn(2);
        nbuf = q->b[j];
        defect = "index-out-of-range";
    } else if (c < 10) {
        for (int i = 0; i < knp[k]; i++)
            if (!kp[k][i].buf) index = (uint32_t)i;
        nbuf = q->b[j];
        defect = "index-is-value";
    } else if (c < 14) {
        defect = "null";
    } else if (c < 30) {
        /* one defect: smaller than the plan was made with, wrong type, read-only, overlap, misaligned, other device */
        for (int i = 0; i < nbrec && !defect; i++) {
            int b = (int)((i + rn(nbrec)) % nbrec);
            if (!B[b].live) continue;
            bool typ = B[b].type == kp[k][j].type, dv = B[b].dev == d;
            bool ro = kp[k][j].mut && ro_eff(b), al = B[b].off % kp[k][j].align == 0;
            bool big = bbytes(b) >= q->need[j];
            bool ali = true;
            for (int o = 0; o < knp[k]; o++)
                if (o != j && kp[k][o].buf && kp[k][o].mut != kp[k][j].mut && overlap(q->b[o], b)) ali = false;
            int bad = !typ + !dv + ro + !al + !big + !ali;
            if (bad != 1) continue;
            nbuf = b;
            defect = !typ ? "wrong-elem-type" : !dv ? "other-device" : ro ? "readonly-mut" : !al ? "misaligned" : !big ? "too-small" : "overlap-ro-mut";
        }
        if (!defect) return;
    } else {
        int cand[MAXB], n = 0;
        for (int i = 0; i < nbrec; i++) {
            if (!buf_fits(i, d, &kp[k][j], need[j]) || bbytes(i) < q->need[j]) continue;
            bool ali = true;
            for (int o = 0; o < knp[k]; o++)
                if (o != j && kp[k][o].buf && kp[k][o].mut != kp[k][j].mut && overlap(q->b[o], i)) ali = false;
            if (ali) cand[n++] = i;
        }
        if (!n) return;
        nbuf = cand[rn(n)];
    }
    kf_status st = kf_plan_set_buffer(q->h, index, nbuf >= 0 ? B[nbuf].h : NULL, E());
    char w[128];
    snprintf(w, sizeof w, "set_buffer pl%d [%u] = b%d%s%s", pl, index, nbuf, defect ? " defect=" : "", defect ? defect : "");
    report(w, st, defect ? KF_ERR_USAGE : KF_OK);
    if (st == KF_OK && !defect) q->b[j] = nbuf;
    if (st == KF_OK && defect) {   /* accepted a defect: drop the plan's use from the model by restoring it */
        kf_plan_set_buffer(q->h, (uint32_t)j, B[q->b[j]].h, NULL);
    }
}

/* A destroy (no status): its line, "what" followed by the model id. */
static void report_destroy(const char *what, int id)
{
    char w[48];
    snprintf(w, sizeof w, "%s%d", what, id);
    report(w, KF_OK, KF_OK);
}

static void op_plan_destroy(void)
{
    int pl = pick_plan(-1);
    if (pl < 0 || plan_in_graph(pl)) return;
    kf_plan_destroy(PL[pl].h);
    PL[pl].live = false;
    report_destroy("plan_destroy pl", pl);
}

/* ---------------------------------------------------------------- graphs */
static void op_graph_begin(void)
{
    kf_status st = kf_graph_begin(dev[0], E());
    int want = rec_state == 1 ? KF_ERR_USAGE : KF_OK;
    report(rec_state == 1 ? "graph_begin (nested)" : "graph_begin", st, want);
    if (rec_state == 1) rec_state = 2;
    else if (st == KF_OK) rec_state = 1, rec_n = 0;
}

static void op_graph_end(void)
{
    kf_graph *g = NULL;
    int want = rec_state == 1 && rec_n > 0 ? KF_OK : KF_ERR_USAGE;
    kf_status st = kf_graph_end(dev[0], &g, E());
    int slot = -1;
    for (int i = 0; i < MAXG; i++)
        if (!G[i].live) {
            slot = i;
            break;
        }
    char w[64];
    snprintf(w, sizeof w, "graph_end g%d (%d launches, state %d)", slot, rec_n, rec_state);
    report(w, st, want);
    if (st == KF_OK) {
        uint32_t n = kf_graph_size(g);
        if ((int)n != rec_n) {
            expect_fails++;
            emit("%d   graph size %u != %d expect-fail", step, n, rec_n);
        }
        if (slot < 0 || (int)n != rec_n) {
            kf_graph_destroy(g);
        } else {
            G[slot].live = true;
            G[slot].h = g;
            G[slot].n = rec_n;
            memcpy(G[slot].plans, rec_plans, sizeof rec_plans);
        }
    }
    rec_state = 0;
    rec_n = 0;
}

static int pick_graph(void)
{
    int cand[MAXG], n = 0;
    for (int i = 0; i < MAXG; i++)
        if (G[i].live) cand[n++] = i;
    return n ? cand[rn(n)] : -1;
}

static void op_graph_launch(void)
{
    int g = pick_graph();
    if (g < 0) return;
    int mode = rn(3);
    bool nulms = mode == KF_DISPATCH_TIMED && chance(10);
    bool blocked = false;
    for (int i = 0; i < G[g].n; i++) blocked |= plan_blocked(G[g].plans[i]);
    float ms;
    kf_status st = kf_graph_launch(G[g].h, (kf_dispatch_mode)mode, nulms ? NULL : &ms, E());
    int want = (rec_state == 1 || blocked || nulms) ? KF_ERR_USAGE : KF_OK;
    char w[96];
    snprintf(w, sizeof w, "graph_launch g%d mode%d%s%s%s", g, mode, nulms ? " ms=NULL" : "",
             blocked ? " (read-only &mut)" : "", rec_state == 1 ? " [rec: refused]" : "");
    if (rec_state == 1) rec_state = 2;
    report(w, st, want);
}

static void op_graph_destroy(void)
{
    int g = pick_graph();
    if (g < 0) return;
    kf_graph_destroy(G[g].h);
    G[g].live = false;
    report_destroy("graph_destroy g", g);
}

/* ---------------------------------------------------------------- one run */
static int setup(void)
{
    kf_status st = kf_device_open(backend, 0, &dev[0], &err);
    if (st == KF_OK) st = kf_device_open(backend, 0, &dev[1], &err);
    if (st != KF_OK) {
        fprintf(stderr, "apifuzz: kf_device_open: %s: %s\n", kf_status_name(st), err.msg);
        return 1;
    }
    const char *srcs[2] = {src_a, src_b};
    const char *names[2] = {"fz_a.kf", "fz_b.kf"};
    for (int m = 0; m < 2; m++) {
        st = kf_compile(names[m], srcs[m], strlen(srcs[m]), NULL, &mod[m]);
        if (st != KF_OK) {
            fprintf(stderr, "apifuzz: compile %s:\n%s", names[m], mod[m] ? kf_module_diagnostics(mod[m]) : "no module\n");
            return 1;
        }
    }
    /* module A through kf_pipeline_create_module on dev0, one by one on dev1;
     * module B one by one on both */
    memset(P, 0, sizeof P);
    int s = 0;
    for (int d = 0; d < 2; d++) {
        if (d == 0) {
            kf_pipeline *ps[8] = {0};
            uint32_t n = kf_module_kernel_count(mod[0]);
            st = kf_pipeline_create_module(dev[0], mod[0], ps, &err);
            emit("0 pipeline_create_module A dev0 (%u kernels) -> %s", n, kf_status_name(st));
            if (st != KF_OK) {
                fprintf(stderr, "apifuzz: %s\n", err.msg);
                return 1;
            }
            for (uint32_t i = 0; i < n; i++)
                for (int k = 0; k < NK; k++)
                    if (kmod[k] == 0 && !strcmp(kf_kernel_name(kf_module_kernel_at(mod[0], i)), kname[k]))
                        P[s++] = (pipe_t){true, ps[i], 0, k};
        }
        for (int k = 0; k < NK; k++) {
            if (d == 0 && kmod[k] == 0) continue;
            kf_pipeline *h = NULL;
            st = kf_pipeline_create(dev[d], mod[kmod[k]], kern(k), &h, &err);
            emit("0 pipeline_create p%d %s dev%d -> %s", s, kname[k], d, kf_status_name(st));
            if (st != KF_OK) {
                fprintf(stderr, "apifuzz: %s\n", err.msg);
                return 1;
            }
            P[s++] = (pipe_t){true, h, d, k};
        }
    }
    kf_error_clear(&err);
    return 0;
}

static void run_seed(uint64_t seed, int nsteps)
{
    memset(B, 0, sizeof B);
    memset(PL, 0, sizeof PL);
    memset(G, 0, sizeof G);
    nbrec = 0;
    rec_state = 0;
    rec_n = 0;
    expect_fails = 0;
    have_timer = false;
    run_hash = 0;
    rs = seed * 0x2545F4914F6CDD1Dull + 0x1234567;
    step = 0;
    emit("seed %llu steps %d", (unsigned long long)seed, nsteps);
    if (setup()) {
        emit("setup failed");
        exit(3);
    }
    /* a few buffers of every type to start with */
    for (int i = 0; i < 10; i++) {
        step = 0;
        int t = i % NTYPES, d = i < 8 ? 0 : 1;
        size_t count = 64 + rn(t == T_U32X4 ? 100 : 500);
        int r = new_rec();
        kf_buffer *h = NULL;
        kf_status st = kf_buffer_create(dev[d], ktype(t), count, &h, &err);
        char w[80];
        snprintf(w, sizeof w, "create b%d dev%d %s[%zu]", r, d, tname[t], count);
        report(w, st, KF_OK);
        B[r] = (buf_t){true, true, h, d, t, count, 0, -1, r, 0, false};
        fill_data(t, count);
        st = kf_buffer_upload(h, hbuf, count * tsize[t], &err);
        report("  upload", st, KF_OK);
    }
    for (step = 1; step <= nsteps; step++) {
        int c = rn(1000);
        if (rec_state == 1) {
            /* recording on dev0: mostly what a graph holds, sometimes a refused call */
            if (c < 450) {
                if (rec_n >= MAXREC) op_graph_end();
                else op_plan_launch();
            } else if (c < 600) {
                if (!no_rec_retarget) op_set_value();
            } else if (c < 680) {
                if (!no_rec_retarget) op_set_buffer();
            } else if (c < 720) op_readonly();
            else if (c < 800) {
                if (rec_n > 0 || chance(20)) op_graph_end();
            } else if (c < 840) op_plan_create();
            else if (c < 900) {
                if (!no_cross_rec) {   /* work on dev1 while dev0 records */
                    int r = rn(4);
                    if (r == 0) {
                        int d1 = pick_pipe(1, -1);
                        if (d1 >= 0) {
                            int k = P[d1].k;
                            argset a;
                            if (draw_args(k, 1, &a)) {
                                kf_arg args[4];
                                build_args(&a, args);
                                bool wl = a.l.grid[0] || a.l.block[0] || a.l.dyn_shared || a.l.count;
                                kf_status st = kf_dispatch(P[d1].h, args, (uint32_t)knp[k], wl ? &a.l : NULL,
                                                           KF_DISPATCH_ASYNC, NULL, E());
                                char w[400], ad[300];
                                argdesc(&a, ad, sizeof ad);
                                snprintf(w, sizeof w, "dispatch p%d dev1 while dev0 records %s", d1, ad);
                                report(w, st, KF_OK);
                            }
                        }
                    } else if (r == 1) {
                        int b = pick_buf(1, -1);
                        if (b >= 0) {
                            size_t n = bbytes(b);
                            kf_status st = kf_buffer_download(B[b].h, hbuf, n, E());
                            char w[96];
                            snprintf(w, sizeof w, "download b%d (dev1 while dev0 records) h=%016llx", b,
                                     st == KF_OK ? (unsigned long long)fnv(hbuf, n) : 0ull);
                            report(w, st, KF_OK);
                        }
                    } else if (r == 2) {
                        kf_status st = kf_device_sync(dev[1], E());
                        report("sync dev1 while dev0 records", st, KF_OK);
                    } else {
                        int b = pick_buf(1, -1);
                        if (b >= 0) {
                            fill_data(B[b].type, B[b].count);
                            kf_status st = kf_buffer_upload(B[b].h, hbuf, bbytes(b), E());
                            char w[96];
                            snprintf(w, sizeof w, "upload b%d (dev1 while dev0 records)", b);
                            report(w, st, KF_OK);
                        }
                    }
                }
            } else {
                /* a call a recording refuses (it abandons the recording) */
                switch (rn(9)) {
                case 0: op_dispatch(); break;
                case 1: op_sync(); break;
                case 2: op_upload(); break;
                case 3: op_download(); break;
                case 4: op_copy(); break;
                case 5: op_create(); break;
                case 6: op_pipeline(); break;
                case 7: op_graph_begin(); break;
                case 8: op_graph_launch(); break;
                }
                if (rec_state == 2) {   /* kforge.h: abandoned; check it now so the model stays exact */
                    step++;
                    kf_graph *g = NULL;
                    kf_status st = kf_graph_end(dev[0], &g, E());
                    report("graph_end after a refused call", st, KF_ERR_USAGE);
                    if (st == KF_OK) kf_graph_destroy(g);
                    rec_state = 0;
                    rec_n = 0;
                }
            }
            continue;
        }
        if (c < 70) op_create();
        else if (c < 130) op_view();
        else if (c < 170) op_wrap();
        else if (c < 230) op_upload();
        else if (c < 300) op_download();
        else if (c < 360) op_copy();
        else if (c < 400) op_readonly();
        else if (c < 440) op_destroy_buf();
        else if (c < 470) op_sync();
        else if (c < 490) op_timer_pdl();
        else if (c < 510) op_pipeline();
        else if (c < 600) op_dispatch();
        else if (c < 660) op_plan_create();
        else if (c < 740) op_plan_launch();
        else if (c < 800) op_set_value();
        else if (c < 840) op_set_buffer();
        else if (c < 855) op_plan_destroy();
        else if (c < 890) op_graph_begin();
        else if (c < 900) op_graph_end();
        else if (c < 970) op_graph_launch();
        else if (c < 985) op_graph_destroy();
        else op_readonly();
    }
    /* the end: finish any recording, sync, then every live buffer's bytes */
    step = nsteps + 1;
    if (rec_state != 0) op_graph_end();   /* first: a timer call would abandon a recording (kforge.h) */
    if (have_timer) {
        float ms;
        kf_device_timer_stop(dev[0], &ms, NULL);
        have_timer = false;
    }
    for (int d = 0; d < 2; d++) {
        kf_status st = kf_device_sync(dev[d], E());
        char w[32];
        snprintf(w, sizeof w, "final sync dev%d", d);
        report(w, st, KF_OK);
    }
    uint64_t all = 0;
    for (int b = 0; b < nbrec; b++) {
        if (!B[b].live) continue;
        size_t n = bbytes(b);
        memset(hbuf, 0, n + 1);
        kf_status st = kf_buffer_download(B[b].h, hbuf, n, E());
        uint64_t h = fnv(hbuf, n);
        all = all * 1000003u ^ h;
        emit("B%d dev%d %s[%zu] kind%d ro%d %s h=%016llx", b, B[b].dev, tname[B[b].type], B[b].count, B[b].kind,
             (int)kf_buffer_readonly(B[b].h), kf_status_name(st), (unsigned long long)h);
        if (kf_buffer_count(B[b].h) != B[b].count || kf_buffer_bytes(B[b].h) != n) {
            expect_fails++;
            emit("B%d size mismatch expect-fail", b);
        }
        kf_error_clear(&err);
    }
    /* destroy in an allowed random order: graphs, plans, buffers, pipelines, devices, modules */
    for (int g = 0; g < MAXG; g++)
        if (G[g].live) kf_graph_destroy(G[g].h), G[g].live = false;
    for (int p = 0; p < MAXP; p++)
        if (PL[p].live) kf_plan_destroy(PL[p].h), PL[p].live = false;
    for (int left = nlive_bufs(); left > 0; left = nlive_bufs()) {
        int b = pick_buf(-1, -1);
        if (can_destroy(b)) {
            kf_buffer_destroy(B[b].h);
            B[b].live = false;
        }
    }
    for (int p = 0; p < MAXPIPE; p++)
        if (P[p].live) kf_pipeline_destroy(P[p].h), P[p].live = false;
    kf_device_close(dev[1]);
    kf_device_close(dev[0]);
    kf_module_free(mod[1]);
    kf_module_free(mod[0]);
    emit("END buffers=%016llx expect_fail=%ld", (unsigned long long)all, expect_fails);
    total_expect_fails += expect_fails;
    total_steps += nsteps;
}

/* ---------------------------------------------------------------- self-test
 * Each kernel once on known data, checked against the host: the kernels
 * compute what the fuzzer's oracle assumes (and are not no-ops). */
static int selftest(void)
{
    kf_status st = kf_device_open(backend, 0, &dev[0], &err);
    const char *srcs[2] = {src_a, src_b};
    const char *names[2] = {"fz_a.kf", "fz_b.kf"};
    for (int m = 0; m < 2 && st == KF_OK; m++) st = kf_compile(names[m], srcs[m], strlen(srcs[m]), NULL, &mod[m]);
    if (st != KF_OK) {
        fprintf(stderr, "selftest setup: %s %s\n", kf_status_name(st), err.msg);
        return 1;
    }
    enum { N = 300 };
    static uint32_t x[4 * N], y[4 * N], r[4 * N], e[4 * N];
    int bad = 0;
    for (int k = 0; k < NK; k++) {
        kf_pipeline *p = NULL;
        st = kf_pipeline_create(dev[0], mod[kmod[k]], kern(k), &p, &err);
        if (st != KF_OK) {
            fprintf(stderr, "selftest %s: %s\n", kname[k], err.msg);
            bad++;
            continue;
        }
        for (int i = 0; i < 4 * N; i++) {
            x[i] = (uint32_t)(i * 37 % 1000), y[i] = (uint32_t)(i * 11 % 1000);
            if (k == K_AXPY_F32) {
                float fx = (float)x[i], fy = (float)y[i];
                memcpy(&x[i], &fx, 4), memcpy(&y[i], &fy, 4);
            }
        }
        int tx = kp[k][0].buf ? kp[k][0].type : kp[k][1].type, ty = -1;
        for (int j = 0; j < knp[k]; j++)
            if (kp[k][j].buf && kp[k][j].mut) ty = kp[k][j].type;
        kf_buffer *bx, *by;
        size_t cx = N * 4, cy = ty == T_U32X4 ? N : N * 4;
        kf_buffer_create(dev[0], ktype(tx == T_U32X4 ? T_U32 : tx), cx, &bx, NULL);
        kf_buffer_create(dev[0], ktype(ty), cy, &by, NULL);
        kf_buffer_upload(bx, x, cx * 4, NULL);
        kf_buffer_upload(by, y, cy * tsize[ty], NULL);
        memcpy(e, y, sizeof e);
        kf_arg a[4];
        kf_launch l = {0};
        const kf_launch *lp = NULL;
        uint32_t n = N - 7;
        switch (k) {
        case K_AXPY_U32: case K_AXPY_I32:
            a[0] = kf_arg_value(k == K_AXPY_U32 ? kf_value_u32(3000000000u) : kf_value_i32(-7));
            a[1] = kf_arg_buffer(bx), a[2] = kf_arg_buffer(by), a[3] = kf_arg_value(kf_value_u32(n));
            for (uint32_t i = 0; i < n; i++) e[i] = (k == K_AXPY_U32 ? 3000000000u : (uint32_t)-7) * x[i] + y[i];
            break;
        case K_AXPY_F32:
            a[0] = kf_arg_value(kf_value_f32(-3.0f)), a[1] = kf_arg_buffer(bx), a[2] = kf_arg_buffer(by);
            a[3] = kf_arg_value(kf_value_u32(n));
            for (uint32_t i = 0; i < n; i++) {
                float fx, fy;
                memcpy(&fx, &x[i], 4), memcpy(&fy, &y[i], 4);
                float v = -3.0f * fx + fy;
                v = v - (float)((int)((v + 4096.0f) / 1024.0f) - 4) * 1024.0f;
                memcpy(&e[i], &v, 4);
            }
            break;
        case K_COPY:
            a[0] = kf_arg_buffer(bx), a[1] = kf_arg_buffer(by), a[2] = kf_arg_value(kf_value_u32(5));
            a[3] = kf_arg_value(kf_value_u32(n));
            l.count = n, lp = &l;
            for (uint32_t i = 0; i < n; i++) e[i] = x[i + 5] * 3 + i;
            break;
        case K_BSUM:
            a[0] = kf_arg_buffer(bx), a[1] = kf_arg_buffer(by), a[2] = kf_arg_value(kf_value_u32(n));
            a[3] = kf_arg_value(kf_value_u32(4));
            for (uint32_t b = 0; b < 4; b++) {
                uint32_t sum = 0;
                for (uint32_t t = 0; t < 64; t++) sum += b * 64 + t < n ? x[b * 64 + t] ^ (b * 64 + t) : 0;
                e[b] = sum;
            }
            break;
        case K_VEC:
            a[0] = kf_arg_value(kf_value_u32(0x10001)), a[1] = kf_arg_value(mkval(V_U32X4, 0, (uint32_t[]){1, 2, 3, 0xffffffffu}));
            a[2] = kf_arg_buffer(by), a[3] = kf_arg_value(kf_value_u32(n));
            for (uint32_t i = 0; i < 4 * n; i++) e[i] = y[i] * 0x10001u + (uint32_t[]){1, 2, 3, 0xffffffffu}[i % 4];
            break;
        case K_GRID2D:
            a[0] = kf_arg_buffer(bx), a[1] = kf_arg_buffer(by), a[2] = kf_arg_value(kf_value_u32(13));
            a[3] = kf_arg_value(kf_value_u32(21));
            for (uint32_t yy = 0; yy < 21; yy++)
                for (uint32_t xx = 0; xx < 13; xx++) e[yy * 13 + xx] = x[yy * 13 + xx] * 3 + xx - yy * 5;
            break;
        case K_DYN:
            a[0] = kf_arg_buffer(bx), a[1] = kf_arg_buffer(by), a[2] = kf_arg_value(kf_value_u32(n));
            a[3] = kf_arg_value(kf_value_u32(13000));
            for (uint32_t i = 0; i < n; i++) {
                uint32_t b = i / 64, t = i % 64, src = b * 64 + 63 - t;
                e[i] = (src < n ? x[src] : 0) + n * 3 + b;
            }
            break;
        case K_SUM4:
            a[0] = kf_arg_buffer(bx), a[1] = kf_arg_buffer(by), a[2] = kf_arg_value(kf_value_u32(n / 4));
            for (uint32_t i = 0; i < n / 4; i++) e[i] = x[4 * i] + x[4 * i + 1] * 2 + x[4 * i + 2] * 3 + x[4 * i + 3] * 4;
            break;
        }
        st = kf_dispatch(p, a, (uint32_t)knp[k], lp, KF_DISPATCH_SYNC, NULL, &err);
        memset(r, 0, sizeof r);
        if (st == KF_OK) st = kf_buffer_download(by, r, cy * tsize[ty], &err);
        size_t words = cy * tsize[ty] / 4, diff = 0, first = 0;
        for (size_t i = 0; i < words; i++)
            if (r[i] != e[i] && !diff++) first = i;
        printf("selftest %-9s %s, %zu of %zu words differ%s", kname[k], kf_status_name(st), diff, words, diff ? "" : "\n");
        if (diff) printf(" (first: word %zu = %u, want %u)\n", first, r[first], e[first]);
        if (st != KF_OK) printf("  %s\n", err.msg);
        bad += st != KF_OK || diff;
        kf_buffer_destroy(bx);
        kf_buffer_destroy(by);
        kf_pipeline_destroy(p);
    }
    kf_device_close(dev[0]);
    kf_module_free(mod[0]);
    kf_module_free(mod[1]);
    return bad != 0;
}

int main(int argc, char **argv)
{
    const char *outdir = NULL;
    int nsteps = 160;
    int pos = 0;
    const char *bk = NULL;
    unsigned long long s0 = 0, s1 = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc) nsteps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) outdir = argv[++i];
        else if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "-x")) no_cross_rec = 1;
        else if (!strcmp(argv[i], "-r")) no_rec_retarget = 1;
        else if (pos == 0) bk = argv[i], pos++;
        else if (pos == 1) s0 = s1 = strtoull(argv[i], NULL, 10), pos++;
        else if (pos == 2) s1 = strtoull(argv[i], NULL, 10), pos++;
        else {
            fprintf(stderr, "apifuzz: unexpected argument %s\n", argv[i]);
            return 2;
        }
    }
    if (bk && pos == 1 && !strcmp(argv[argc - 1], "selftest")) pos = 2;
    if (!bk || pos < 2) {
        fprintf(stderr, "usage: apifuzz cpu|cuda|ptx SEED [SEED_LAST] [-s STEPS] [-o DIR] [-v] [-x] [-r]\n");
        return 2;
    }
    if (!strcmp(bk, "cpu")) backend = KF_BACKEND_CPU;
    else if (!strcmp(bk, "cuda")) backend = KF_BACKEND_CUDA;
    else if (!strcmp(bk, "ptx")) backend = KF_BACKEND_PTX;
    else {
        fprintf(stderr, "apifuzz: unknown backend %s\n", bk);
        return 2;
    }
    if (!strcmp(argv[argc - 1], "selftest")) return selftest();
    if (outdir && mkdir(outdir, 0777) && errno != EEXIST) {
        perror(outdir);
        return 2;
    }
    for (unsigned long long s = s0; s <= s1; s++) {
        char path[4096];
        if (outdir) {
            snprintf(path, sizeof path, "%s/%llu.txt", outdir, s);
            out = fopen(path, "w");
            if (!out) {
                perror(path);
                return 2;
            }
        } else out = stdout;
        run_seed(s, nsteps);
        if (outdir) fclose(out);
        else fflush(out);
    }
    fprintf(stderr, "apifuzz %s seeds %llu..%llu: %ld steps, %ld expectation failures\n", bk, s0, s1, total_steps,
            total_expect_fails);
    return total_expect_fails ? 1 : 0;
}
