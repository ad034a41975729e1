/* The CPU interpreter's launch driver and scheduler (interp.h). It checks
 * the arguments against the kernel's parameters, decodes the kernel once
 * (interp_run.c), lays out registers, local arrays (with a written flag per
 * element) and shared arrays (each from a 16-byte boundary, the dynamic one
 * sized by the launch, within the sm_90 limit), then runs the blocks one
 * after another, x fastest.
 *
 * Within a block every thread runs alone until it stops at a barrier, a
 * warp operation (SHFL, VOTE, mma, ldmatrix) or its end. When no thread can run, each warp
 * whose lanes all wait at the same warp op exchanges values and resumes; a
 * warp with lanes elsewhere is an error. When no warp op is pending, every
 * thread must be waiting at one and the same barrier (or all have ended).
 * This is bounded (each round completes a warp op or a barrier, or ends the
 * block) and needs no threads of its own. Completed barriers advance the
 * epoch and completed warp ops the warp's count, which order shared-memory
 * accesses for the race check (interp_impl.h, kf_ishmeta); a race found
 * while threads run is reported when the block next checks its barriers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

/* Work one launch may do before it is reported as a runaway (roughly 30 s
 * of interpretation): IR instructions executed, plus KF_INTERP_START_COST
 * for each block and each thread started, so that a near-empty kernel over
 * a huge grid is bounded too. $KFORGE_INTERP_MAX_STEPS replaces it. */
#define KF_INTERP_MAX_STEPS (UINT64_C(4) << 30)
#define KF_INTERP_START_COST 8   /* about what starting a thread costs, in instructions */
#define KF_INTERP_MAX_ARRAY_BYTES (UINT32_C(1) << 28)
/* Memory one block's state may take (registers, local and shared arrays,
 * their bookkeeping): a large kernel in a large block is refused before
 * allocation instead of exhausting the host. */
#define KF_INTERP_MAX_BLOCK_BYTES (UINT64_C(1) << 30)

kf_status kf_interp_fault(kf_ictx *c, const kf_ithread *t, uint32_t ins, const char *fmt, ...)
{
    char what[700];
    va_list ap;
    if (c->race_pending) return KF_ERR_RUNTIME;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    kf_loc loc = ins < c->k->nins ? c->k->ins[ins].loc : c->k->loc;
    return kf_error_set_at(c->err, KF_ERR_RUNTIME, loc, "kernel %s: %s:%u:%u: %s in block (%u,%u,%u) thread (%u,%u,%u)",
                           c->k->name, loc.file ? loc.file : "<unknown>", loc.line, loc.col, what, c->ctaid[0],
                           c->ctaid[1], c->ctaid[2], t->tid[0], t->tid[1], t->tid[2]);
}

static kf_status check_args(const kf_ir_kernel *k, const kf_interp_arg *args, uint32_t nargs,
                            const kf_interp_launch *l, kf_error *err)
{
    if (nargs != k->nparams)
        return kf_error_set(err, KF_ERR_USAGE, "kernel %s takes %u arguments, %u given", k->name, k->nparams, nargs);
    for (uint32_t i = 0; i < nargs; i++) {
        const kf_ir_param *p = &k->params[i];
        bool buf = p->type.kind == KF_TK_BUFFER;
        char want[64], got[64];
        if (buf != args[i].is_buffer)
            return kf_error_set(err, KF_ERR_USAGE, "kernel %s: argument %u (%s) must be a %s", k->name, i + 1,
                                p->name, buf ? "buffer" : "scalar or vector value");
        if (buf && !args[i].data && args[i].bytes)
            return kf_error_set(err, KF_ERR_USAGE, "kernel %s: buffer argument %s has no memory", k->name, p->name);
        if (!buf && (args[i].value.type.scalar != p->type.scalar || args[i].value.type.lanes != p->type.lanes))
            return kf_error_set(err, KF_ERR_USAGE, "kernel %s: argument %s is %s, expected %s", k->name, p->name,
                                kf_type_str(args[i].value.type, got, sizeof got),
                                kf_type_str(p->type, want, sizeof want));
    }
    uint64_t n = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (n == 0 || n > 1024)
        return kf_error_set(err, KF_ERR_USAGE, "kernel %s: a block of %llu threads; expected 1 to 1024", k->name,
                            (unsigned long long)n);
    if (!l->grid[0] || !l->grid[1] || !l->grid[2])
        return kf_error_set(err, KF_ERR_USAGE, "kernel %s: empty grid (%u,%u,%u)", k->name, l->grid[0], l->grid[1],
                            l->grid[2]);
    return KF_OK;
}

static void bind_params(kf_ictx *c, const kf_interp_arg *args)
{
    for (uint32_t i = 0; i < c->k->nparams; i++) {
        kf_islot *p = &c->params[i];
        if (args[i].is_buffer) {
            p->u64[0] = (uint64_t)(uintptr_t)args[i].data;
            p->u64[1] = args[i].bytes;
        } else {
            unsigned by = kf_scalar_bytes[args[i].value.type.scalar];
            for (unsigned l = 0; l < args[i].value.type.lanes && l < 16; l++)
                kf_iop_set_lane(p, by, l, args[i].value.lane[l]);
        }
    }
}

/* Names each buffer value after the parameter it was taken from. */
static void name_buffers(kf_ictx *c)
{
    const kf_ir_kernel *k = c->k;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (in->op == KF_IR_PARAM && in->imm < k->nparams && k->params[in->imm].type.kind == KF_TK_BUFFER)
            c->bufparam[in->dst] = &k->params[in->imm];
        else if ((in->op == KF_IR_VIEW || in->op == KF_IR_MOV) && !c->bufparam[in->dst])
            c->bufparam[in->dst] = c->bufparam[in->a[0]];
    }
}

static uint8_t log2_bytes(uint32_t b)
{
    uint8_t n = 0;
    while ((1u << n) < b) n++;
    return n;
}

/* The element type instruction in accesses array imm as, or void when it
 * accesses no array: ALOAD/ASTORE, ldmatrix (16-bit rows), cp_async. */
static kf_type array_access(const kf_ir_ins *in)
{
    unsigned n, f;
    if (in->op == KF_IR_ALOAD || in->op == KF_IR_ASTORE) return in->type;
    if (in->op != KF_IR_INTRIN || !kf_ir_intrin_info(in->sub, &n, &f) || !(f & KF_II_ARRAY)) return kf_type_void();
    return kf_builtin_ldmatrix((kf_builtin)in->sub, NULL) ? kf_type_elem(in->type) : in->type;
}

/* log2 of the smallest element size any access uses on array a (its
 * views included): the granularity of its shared-memory checks. */
static uint8_t access_unit(const kf_ir_kernel *k, uint32_t a, uint8_t eshift)
{
    for (uint32_t i = 0; i < k->nins; i++) {
        kf_type t = array_access(&k->ins[i]);
        if (t.kind == KF_TK_VOID || k->ins[i].imm != a) continue;
        uint8_t u = log2_bytes(kf_type_elem_bytes(t));
        if (u < eshift) eshift = u;
    }
    return eshift;
}

/* Shared memory of the launch: static arrays from 16-byte boundaries, then
 * the dynamic one, at most KF_SHARED_LIMIT bytes in all (sm_90's limit). */
static kf_status check_shared_limit(kf_ictx *c, uint64_t static_bytes)
{
    if (static_bytes + c->dyn_shared <= KF_SHARED_LIMIT) return KF_OK;
    return kf_error_set(c->err, KF_ERR_USAGE,
                        "kernel %s: %llu bytes of static shared memory + %u dynamic = %llu bytes, over the limit of %u "
                        "bytes per block (227 KiB, sm_90)", c->k->name, (unsigned long long)static_bytes, c->dyn_shared,
                        (unsigned long long)(static_bytes + c->dyn_shared), KF_SHARED_LIMIT);
}

static kf_status layout_arrays(kf_ictx *c)
{
    uint64_t local = 0, flags = 0, shared = 0, selems = 0, static_shared = 0;
    for (uint32_t i = 0; i < c->k->narrays; i++) {
        const kf_ir_array *a = &c->k->arrays[i];
        kf_iarray *r = &c->arrays[i];
        uint32_t eb = kf_type_elem_bytes(a->type);
        if (a->type.kind != KF_TK_ARRAY || eb == 0 || eb > 16 || (eb & (eb - 1)))
            return kf_error_set_at(c->err, KF_ERR_USAGE, a->loc, "kernel %s: malformed array %s: a lowering bug",
                                   c->k->name, a->name ? a->name : "?");
        r->eshift = log2_bytes(eb);
        r->shared = a->type.flags & KF_TF_SHARED;
        r->len = (a->type.flags & KF_TF_DYN) ? c->dyn_shared >> r->eshift : a->type.len;
        r->bytes = r->len << r->eshift;
        r->ushift = r->shared ? access_unit(c->k, i, r->eshift) : r->eshift;
        uint64_t *at = r->shared ? &shared : &local;
        *at = (*at + 15) & ~UINT64_C(15);
        r->off = (uint32_t)*at;
        *at += r->bytes;
        if (r->shared && !(a->type.flags & KF_TF_DYN)) static_shared += ((uint64_t)r->bytes + 15) & ~UINT64_C(15);
        if (!r->shared) r->woff = (uint32_t)flags, flags += r->len;
        else r->woff = (uint32_t)selems, selems += r->bytes >> r->ushift;
        if (!r->shared && *at > KF_INTERP_MAX_ARRAY_BYTES)   /* shared: check_shared_limit */
            return kf_error_set_at(c->err, KF_ERR_USAGE, a->loc,
                                   "kernel %s: its local arrays need %llu bytes a thread, over the interpreter's %u",
                                   c->k->name, (unsigned long long)*at, (unsigned)KF_INTERP_MAX_ARRAY_BYTES);
    }
    c->local_bytes = (uint32_t)local, c->local_flags = (uint32_t)flags, c->shared_bytes = (uint32_t)shared;
    c->shared_elems = (uint32_t)selems;
    return check_shared_limit(c, static_shared);
}

static uint32_t count_consts(const kf_ir_kernel *k)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nins; i++) n += k->ins[i].op == KF_IR_CONST;
    return n;
}

/* Refuses a block whose state would take over KF_INTERP_MAX_BLOCK_BYTES
 * (needs layout_arrays first). */
static kf_status check_block_bytes(const kf_ictx *c)
{
    uint64_t per_thread = sizeof(kf_ithread) + ((uint64_t)c->k->nvals + 1) * sizeof(kf_islot) +
                          (uint64_t)c->local_bytes + c->local_flags;
    uint64_t bytes = per_thread * c->nthreads + c->shared_bytes + (uint64_t)c->shared_elems * sizeof(kf_ishmeta);
    if (bytes <= KF_INTERP_MAX_BLOCK_BYTES) return KF_OK;
    return kf_error_set_at(c->err, KF_ERR_USAGE, c->k->loc,
                           "kernel %s: a block of %u threads needs %llu MiB of interpreter state (registers and "
                           "arrays), over the interpreter's %llu MiB; launch smaller blocks or use smaller local arrays",
                           c->k->name, c->nthreads, (unsigned long long)(bytes >> 20),
                           (unsigned long long)(KF_INTERP_MAX_BLOCK_BYTES >> 20));
}

static kf_status alloc_ctx(kf_ictx *c)
{
    const kf_ir_kernel *k = c->k;
    size_t nt = c->nthreads;
    c->code = calloc((size_t)k->nins + 1, sizeof *c->code);
    c->consts = calloc(count_consts(k) + 1, sizeof *c->consts);
    c->params = calloc((size_t)k->nparams + 1, sizeof *c->params);
    c->arrays = calloc((size_t)k->narrays + 1, sizeof *c->arrays);
    c->bufparam = calloc((size_t)k->nvals + 1, sizeof *c->bufparam);
    if (!c->code || !c->consts || !c->params || !c->arrays || !c->bufparam)
        return kf_error_set(c->err, KF_ERR_NOMEM, "kernel %s: out of memory for the interpreter", k->name);
    kf_status st = layout_arrays(c);
    if (!st) st = check_block_bytes(c);
    if (st) return st;
    c->th = calloc(nt, sizeof *c->th);
    c->regs = calloc(nt * ((size_t)k->nvals + 1), sizeof *c->regs);
    c->local = calloc(nt * c->local_bytes + 1, 1);
    c->written = calloc(nt * c->local_flags + 1, 1);
    c->shared = calloc((size_t)c->shared_bytes + 1, 1);
    c->shmeta = calloc((size_t)c->shared_elems + 1, sizeof *c->shmeta);
    c->warpops = calloc(nt / 32 + 1, sizeof *c->warpops);
    if (!c->th || !c->regs || !c->local || !c->written || !c->shared || !c->shmeta || !c->warpops)
        return kf_error_set(c->err, KF_ERR_NOMEM, "kernel %s: out of memory for the interpreter", k->name);
    for (uint32_t i = 0; i < c->nthreads; i++) {
        kf_ithread *t = &c->th[i];
        t->lin = i;
        t->tid[0] = i % c->block[0];
        t->tid[1] = i / c->block[0] % c->block[1];
        t->tid[2] = i / c->block[0] / c->block[1];
        t->R = c->regs + (size_t)i * ((size_t)k->nvals + 1);
        t->local = c->local + (size_t)i * c->local_bytes;
        t->written = c->written + (size_t)i * c->local_flags;
    }
    return KF_OK;
}

static void free_ctx(kf_ictx *c)
{
    for (uint32_t i = 0; c->th && i < c->nthreads; i++) KF_VEC_FREE(&c->th[i].copies);
    free(c->code), free(c->consts), free(c->params), free(c->arrays), free(c->bufparam);
    free(c->th), free(c->regs), free(c->local), free(c->written), free(c->shared);
    free(c->shmeta), free(c->warpops);
}

/* ---- warp operations ---------------------------------------------------- */

/* The source lane of a shuffle (LANGUAGE.md section 7, as CUDA's
 * __shfl_*_sync with width 32; the PTX and CUDA-C back ends follow this
 * table). n = lanes of the warp that exist (a 48-thread block: warp 1 has 16);
 * a source lane outside the warp or that does not exist gives the caller's
 * own value:
 *   shfl(v, s)      j = s % 32       own value when j >= n
 *   shfl_xor(v, m)  j = lane ^ m     own value when m >= 32 or j >= n
 *   shfl_down(v, d) j = lane + d     own value when d >= 32 or j >= n
 *   shfl_up(v, d)   j = lane - d     own value when d > lane
 * (xor/down with m, d >= 32 give j >= 32 >= n here.) */
static uint32_t shfl_source(kf_builtin fn, uint32_t lane, uint32_t arg, uint32_t nlanes)
{
    uint64_t src;
    switch (fn) {
    case KF_BI_SHFL: src = arg & 31u; break;
    case KF_BI_SHFL_XOR: src = lane ^ (uint64_t)arg; break;
    case KF_BI_SHFL_UP: src = arg > lane ? UINT64_MAX : lane - arg; break;
    default: src = (uint64_t)lane + arg; break;
    }
    return src < nlanes ? (uint32_t)src : lane;   /* outside the warp: own value */
}

static void complete_warp(kf_ictx *c, kf_ithread *w, uint32_t n)
{
    const kf_idins *d = &c->code[w[0].pc];
    kf_islot out[32];
    if (d->h == IH_SHFL) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = w[shfl_source((kf_builtin)d->sub, i, w[i].R[d->a[1]].u32[0], n)].R[d->a[0]];
    } else {
        uint32_t ballot = 0;
        for (uint32_t i = 0; i < n; i++) ballot |= (uint32_t)(w[i].R[d->a[0]].u8[0] != 0) << i;
        uint32_t full = n == 32 ? UINT32_MAX : (1u << n) - 1;
        memset(out, 0, sizeof out);
        for (uint32_t i = 0; i < n; i++) {
            if (d->sub == KF_BI_BALLOT) out[i].u32[0] = ballot;
            else out[i].u8[0] = d->sub == KF_BI_ANY ? ballot != 0 : ballot == full;
        }
    }
    c->warpops[w[0].lin / 32]++;
    for (uint32_t i = 0; i < n; i++) {
        w[i].R[d->dst] = out[i];
        w[i].pc++;
        w[i].state = KF_TS_RUN;
    }
}

static void where_text(const kf_ictx *c, const kf_ithread *t, char *buf, size_t n)
{
    if (t->state == KF_TS_DONE) {
        snprintf(buf, n, "has exited");
        return;
    }
    kf_loc l = c->k->ins[c->code[t->pc].src].loc;
    snprintf(buf, n, "is at %s %s:%u:%u", t->state == KF_TS_BARRIER ? "a barrier" : "another warp builtin",
             l.file ? l.file : "<unknown>", l.line, l.col);
}

/* Forgets a pending race or unwritten shared read: a divergent barrier or
 * partial warp op found now is its likely cause and is reported instead. */
static void drop_pending(kf_ictx *c)
{
    c->race_pending = false, c->unwritten_at = 0;
}

/* mma and ldmatrix (PTX .sync.aligned): every lane of a full warp. */
static bool tensor_op(const kf_idins *d) { return d->h == IH_MMA || d->h == IH_LDSM; }

static kf_status diverged(kf_ictx *c, kf_ithread *w, uint32_t wi, uint32_t f, uint32_t i, uint32_t n)
{
    char where[300];
    where_text(c, &w[i], where, sizeof where);
    drop_pending(c);
    const kf_idins *d = &c->code[w[f].pc];
    if (tensor_op(d))
        return kf_interp_fault(c, &w[f], d->src, "'%s' must be executed by all 32 lanes of warp %u together, in "
                               "uniform control flow (lane %u %s)", kf_builtin_names[d->sub], wi, i, where);
    return kf_interp_fault(c, &w[f], d->src, "warp builtin not reached by all %u lanes of warp %u (lane %u %s)", n, wi,
                           i, where);
}

/* Completes warp `wi` if its lanes wait at one warp op; an error if only some do. */
static kf_status try_warp(kf_ictx *c, uint32_t wi, bool *progress)
{
    kf_ithread *w = &c->th[wi * 32];
    uint32_t n = c->nthreads - wi * 32 < 32 ? c->nthreads - wi * 32 : 32;
    uint32_t f = n;
    for (uint32_t i = 0; i < n && f == n; i++)
        if (w[i].state == KF_TS_WARP) f = i;
    if (f == n) return KF_OK;
    for (uint32_t i = 0; i < n; i++)
        if (w[i].state != KF_TS_WARP || w[i].pc != w[f].pc) return diverged(c, w, wi, f, i, n);
    const kf_idins *d = &c->code[w[f].pc];
    *progress = true;
    if (!tensor_op(d)) {
        complete_warp(c, w, n);
        return KF_OK;
    }
    if (n < 32) {
        drop_pending(c);
        return kf_interp_fault(c, &w[f], d->src, "'%s' needs a full warp of 32 lanes; warp %u has %u (a block of %u "
                               "threads): make the block a multiple of 32 threads", kf_builtin_names[d->sub], wi, n,
                               c->nthreads);
    }
    c->warpops[wi]++;
    return kf_interp_tensor_warp(c, w);
}

/* Releases a barrier every thread waits at; *done when all have ended. */
static kf_status try_barrier(kf_ictx *c, bool *done)
{
    uint32_t f = c->nthreads;
    for (uint32_t i = 0; i < c->nthreads && f == c->nthreads; i++)
        if (c->th[i].state == KF_TS_BARRIER) f = i;
    *done = f == c->nthreads;
    if (*done) return KF_OK;
    kf_ithread *a = &c->th[f];
    for (uint32_t i = 0; i < c->nthreads; i++) {
        kf_ithread *t = &c->th[i];
        if (t->state == KF_TS_BARRIER && t->pc == a->pc) continue;
        char where[300];
        where_text(c, t, where, sizeof where);
        drop_pending(c);
        return kf_interp_fault(c, a, c->code[a->pc].src, "divergent barrier: thread (%u,%u,%u) %s", t->tid[0],
                               t->tid[1], t->tid[2], where);
    }
    for (uint32_t i = 0; i < c->nthreads; i++) c->th[i].pc++, c->th[i].state = KF_TS_RUN;
    c->epoch++;
    return KF_OK;
}

/* A new epoch for the block: every shared element reads as unwritten.
 * Epochs are rebased well before they could wrap (a block passes fewer
 * than 2^31 barriers within the instruction budget). */
static void start_block(kf_ictx *c)
{
    for (uint32_t i = 0; i < c->nthreads; i++) {
        kf_ithread *t = &c->th[i];
        t->pc = 0, t->state = KF_TS_RUN, t->groups = 0, t->copies.len = 0;
    }
    memset(c->written, 0, (size_t)c->nthreads * c->local_flags);
    memset(c->shared, 0, c->shared_bytes);
    if (c->epoch >= UINT32_MAX / 4) {
        memset(c->shmeta, 0, (size_t)c->shared_elems * sizeof *c->shmeta);
        c->epoch = 0;
    }
    c->epoch0 = ++c->epoch;
}

/* Runs every thread until all wait at a warp op or barrier, completes those
 * (a divergent barrier or partial warp op takes precedence over a race it
 * let happen), reports a pending race, and repeats until the block ends. */
static kf_status run_block(kf_ictx *c)
{
    uint32_t nwarps = (c->nthreads + 31) / 32;
    start_block(c);
    for (;;) {
        for (uint32_t i = 0; i < c->nthreads; i++) {
            if (c->th[i].state != KF_TS_RUN) continue;
            kf_status st = kf_interp_thread(c, &c->th[i]);
            if (st) return st;
        }
        bool progress = false, done;
        for (uint32_t w = 0; w < nwarps; w++) {
            kf_status st = try_warp(c, w, &progress);
            if (st) return st;
        }
        if (progress) continue;
        kf_status st = try_barrier(c, &done);
        if (st) return st;
        if (c->race_pending) return KF_ERR_RUNTIME;
        if (done) return KF_OK;
    }
}

kf_status kf_interp_over_budget(kf_ictx *c, const kf_ithread *t, uint32_t ins)
{
    return kf_interp_fault(c, t, ins,
                           "the launch did more work than the interpreter allows (%llu steps: instructions, plus %u per "
                           "block and thread started); an endless loop, or a grid too large to interpret? "
                           "(KFORGE_INTERP_MAX_STEPS=N raises the limit), stopped",
                           (unsigned long long)c->budget, KF_INTERP_START_COST);
}

/* Charges the start of a block and its threads; the block's own
 * instructions may then run up to c->limit. */
static kf_status charge_block(kf_ictx *c)
{
    c->started += KF_INTERP_START_COST * (1 + (uint64_t)c->nthreads);
    if (c->started > c->budget || c->steps > c->budget - c->started)
        return kf_interp_over_budget(c, &c->th[0], UINT32_MAX);
    c->limit = c->budget - c->started;
    return KF_OK;
}

static kf_status run_grid(kf_ictx *c)
{
    for (uint32_t z = 0; z < c->grid[2]; z++)
        for (uint32_t y = 0; y < c->grid[1]; y++)
            for (uint32_t x = 0; x < c->grid[0]; x++) {
                c->ctaid[0] = x, c->ctaid[1] = y, c->ctaid[2] = z;
                kf_status st = charge_block(c);
                if (st) return st;
                c->blocks_run++;
                st = run_block(c);
                if (st) return st;
            }
    return KF_OK;
}

/* The work budget: $KFORGE_INTERP_MAX_STEPS, else KF_INTERP_MAX_STEPS. */
static kf_status budget_of(uint64_t *budget, kf_error *err)
{
    const char *e = getenv("KFORGE_INTERP_MAX_STEPS");
    *budget = KF_INTERP_MAX_STEPS;
    if (!e || !*e) return KF_OK;
    if (kf_value_parse_u64(e, strlen(e), budget) && *budget) return KF_OK;
    return kf_error_set(err, KF_ERR_USAGE, "KFORGE_INTERP_MAX_STEPS='%s': expected a positive integer (the work one "
                        "interpreted launch may do; default %llu)", e, (unsigned long long)KF_INTERP_MAX_STEPS);
}

kf_status kf_interp_run(const kf_ir_kernel *k, const kf_interp_arg *args, uint32_t nargs,
                        const kf_interp_launch *launch, kf_interp_stats *stats, kf_error *err)
{
    uint64_t budget;
    kf_status st = budget_of(&budget, err);
    return st ? st : kf_interp_run_budget(k, args, nargs, launch, budget, stats, err);
}

kf_status kf_interp_run_budget(const kf_ir_kernel *k, const kf_interp_arg *args, uint32_t nargs,
                               const kf_interp_launch *launch, uint64_t budget, kf_interp_stats *stats,
                               kf_error *err)
{
    if (stats) *stats = (kf_interp_stats){0};
    if (!k || !launch || (nargs && !args))
        return kf_error_set(err, KF_ERR_USAGE, "kf_interp_run: missing kernel, launch or arguments");
    kf_status st = check_args(k, args, nargs, launch, err);
    if (st) return st;
    kf_ictx c = {.k = k, .err = err, .budget = budget, .dyn_shared = launch->dyn_shared};
    memcpy(c.grid, launch->grid, sizeof c.grid);
    memcpy(c.block, launch->block, sizeof c.block);
    c.nthreads = c.block[0] * c.block[1] * c.block[2];
    st = alloc_ctx(&c);
    if (!st) st = kf_interp_decode(&c);
    if (!st) {
        bind_params(&c, args);
        name_buffers(&c);
        st = run_grid(&c);
    }
    if (stats) {
        stats->instructions = c.steps;
        stats->threads = (uint64_t)c.nthreads * c.blocks_run;
    }
    free_ctx(&c);
    return st;
}
