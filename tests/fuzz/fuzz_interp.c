/* libFuzzer target for the CPU interpreter: every kernel of a source that
 * compiles is launched once on tiny, bounded work (one or two blocks of at
 * most 64 threads, 256-element buffers, an instruction budget of 200,000),
 * after its schedule's grid is evaluated for scalar arguments taken from
 * the input. The launch may fail with a clear error (out of bounds, budget,
 * race, ...) but must never crash, leak or hit undefined behaviour, and an
 * error must say what happened.
 *
 * Inputs are .kf sources, as for fuzz_compile (the same corpus seeds it).
 * Built by -DKF_FUZZ=ON (tests/fuzz/CMakeLists.txt). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_PARAMS = 32, BUF_ELEMS = 256, MAX_THREADS = 64 };
#define BUDGET 200000u

/* A deterministic value from the input and a salt. */
static uint64_t mix(const uint8_t *data, size_t size, uint64_t salt)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ salt;
    for (size_t i = 0; i < size && i < 64; i++) h = (h ^ data[i]) * 0x100000001b3u;
    return h ^ (h >> 29);
}

/* Integer scalars take small values (so loops over them stay short), one
 * in eight an edge value; floats are 2.0. */
static void scalar_arg(kf_type t, uint64_t r, kf_value *v)
{
    static const uint64_t edge[4] = {0, UINT64_MAX, 0x80000000u, 0x7fffffffu};
    v->type = t;
    for (unsigned l = 0; l < t.lanes && l < 16; l++) {
        uint64_t bits = (r >> 3) % 9;
        if ((r & 7) == 0) bits = edge[(r >> 3) & 3];
        unsigned by = kf_scalar_bytes[t.scalar];
        if (kf_scalar_class[t.scalar] == 'f')
            bits = by == 8 ? 0x4000000000000000u : by == 4 ? 0x40000000u : 0x4000u;   /* 2.0 */
        if (t.scalar == KF_S_BOOL) bits &= 1;
        v->lane[l] = by == 8 ? bits : bits & ((UINT64_C(1) << (8 * by)) - 1);
        r = r * 6364136223846793005u + 1442695040888963407u;
    }
}

static void run_kernel(const kf_ir_kernel *k, const uint8_t *data, size_t size)
{
    if (k->nparams > MAX_PARAMS) return;
    kf_interp_arg args[MAX_PARAMS];
    kf_value vals[MAX_PARAMS];
    void *bufs[MAX_PARAMS] = {0};
    memset(args, 0, sizeof args);
    memset(vals, 0, sizeof vals);
    for (uint32_t i = 0; i < k->nparams; i++) {
        const kf_ir_param *p = &k->params[i];
        if (p->type.kind == KF_TK_BUFFER) {
            size_t bytes = (size_t)BUF_ELEMS * kf_scalar_bytes[p->type.scalar] * p->type.lanes;
            bufs[i] = calloc(1, bytes);
            if (!bufs[i]) goto out;
            args[i] = (kf_interp_arg){.is_buffer = true, .data = bufs[i], .bytes = bytes};
        } else {
            scalar_arg(p->type, mix(data, size, i), &vals[i]);
            args[i].value = vals[i];
        }
    }
    uint32_t grid[3];
    kf_error err = {0};
    kf_schedule_grid(k, vals, BUF_ELEMS, grid, &err);
    kf_error_clear(&err);
    /* up to 4 KiB of dynamic shared memory, so `shared s: T[]` has a length */
    kf_interp_launch l = {.grid = {1 + (mix(data, size, 99) & 1), 1, 1}, .block = {1, 1, 1},
                          .dyn_shared = (uint32_t)(mix(data, size, 98) % 4097)};
    memcpy(l.block, k->sched.block, sizeof l.block);
    if ((uint64_t)l.block[0] * l.block[1] * l.block[2] > MAX_THREADS) l.block[0] = 32, l.block[1] = l.block[2] = 1;
    kf_status st = kf_interp_run_budget(k, args, k->nparams, &l, BUDGET, NULL, &err);
    if (st != KF_OK && !err.msg[0]) abort();
    kf_error_clear(&err);
out:
    for (uint32_t i = 0; i < k->nparams; i++) free(bufs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kf_module *m = NULL;
    kf_status st = kf_compile("fuzz.kf", (const char *)data, size, NULL, &m);
    for (uint32_t i = 0; st == KF_OK && i < m->nkernels; i++) run_kernel(&m->kernels[i], data, size);
    kf_module_free(m);
    return 0;
}
