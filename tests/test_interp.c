/* Unit tests of the CPU interpreter (ir/interp*.c) on hand-built core IR:
 * barriers and shared memory, every warp builtin (including partial warps
 * and out-of-range source lanes), atomics under contention, conversions,
 * shifts, wrapping, f16 rounding, control flow, and each runtime error
 * report with its exact location, block and thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "interp_build.h"
#include "interp_impl.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- basic execution ---------------------------------------------------- */

static void build_saxpy(tb *b, bool guard)
{
    tb_init(b, "saxpy");
    kf_val a = tb_param(b, "a", T_F32);
    kf_val x = tb_param(b, "x", t_buf(T_F32, false));
    kf_val y = tb_param(b, "y", t_buf(T_F32, true));
    kf_val n = tb_param(b, "n", T_U32);
    kf_val i = tb_gid(b);
    if (guard) tb_if(b, tb_cmp(b, KF_OP_LT, i, n));
    b->line = 6, b->col = 9;
    kf_val xi = tb_load(b, x, i);
    b->line = 6, b->col = 20;
    kf_val yi = tb_load(b, y, i);
    b->line = 6, b->col = 5;
    tb_store(b, y, i, tb_bin(b, KF_OP_ADD, tb_bin(b, KF_OP_MUL, a, xi), yi));
    if (guard) tb_endif(b);
}

static void saxpy_rounds_multiply_and_add_separately(void **state)
{
    enum { N = 1000 };
    tb b;
    build_saxpy(&b, true);
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *want = malloc(N * sizeof *want);
    float a = 1.0f + ldexpf(1.0f, -12);
    for (int i = 0; i < N; i++) {
        x[i] = 1.0f + (float)i * ldexpf(1.0f, -11) + ldexpf(1.0f, -20);
        y[i] = -1.0f - (float)i * ldexpf(1.0f, -11);
        volatile float p = a * x[i];     /* no fma contraction in the reference */
        want[i] = p + y[i];
    }
    kf_interp_arg args[] = {tb_scalar_arg(T_F32, kf_f32_bits(a)), tb_buf_arg(x, N * 4), tb_buf_arg(y, N * 4),
                            tb_scalar_arg(T_U32, N)};
    kf_error err = {0};
    kf_interp_stats st;
    assert_int_equal(tb_run(&b, 4, 256, args, &err, &st), KF_OK);
    for (int i = 0; i < N; i++) assert_true(y[i] == want[i]);
    assert_true(fmaf(a, x[7], -1.0f - 7 * ldexpf(1.0f, -11)) != want[7]);  /* the case tells fma apart */
    assert_int_equal(st.threads, 1024);
    assert_true(st.instructions > 1024 * 8);
    free(x), free(y), free(want);
}

static void sreg_geometry_in_three_dimensions(void **state)
{
    tb b;
    tb_init(&b, "geom");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    kf_val tx = tb_sreg(&b, KF_SR_TID_X), ty = tb_sreg(&b, KF_SR_TID_Y), tz = tb_sreg(&b, KF_SR_TID_Z);
    kf_val bx = tb_sreg(&b, KF_SR_CTAID_X), by = tb_sreg(&b, KF_SR_CTAID_Y);
    kf_val lin = tb_bin(&b, KF_OP_ADD, tx, tb_bin(&b, KF_OP_MUL, tb_u32(&b, 4),
                                                   tb_bin(&b, KF_OP_ADD, ty, tb_bin(&b, KF_OP_MUL, tz, tb_u32(&b, 4)))));
    kf_val blk = tb_bin(&b, KF_OP_ADD, bx, tb_bin(&b, KF_OP_MUL, by, tb_sreg(&b, KF_SR_NCTAID_X)));
    kf_val idx = tb_bin(&b, KF_OP_ADD, tb_bin(&b, KF_OP_MUL, blk, tb_u32(&b, 48)), lin);
    kf_val code = tb_bin(&b, KF_OP_OR, tb_sreg(&b, KF_SR_LANE),
                         tb_bin(&b, KF_OP_SHL, tb_sreg(&b, KF_SR_NTID_Y), tb_u32(&b, 8)));
    code = tb_bin(&b, KF_OP_OR, code, tb_bin(&b, KF_OP_SHL, tb_sreg(&b, KF_SR_NCTAID_Y), tb_u32(&b, 16)));
    tb_store(&b, out, idx, code);
    assert_true(kf_ir_link(&b.k));
    uint32_t o[6 * 48];
    kf_interp_arg args[] = {tb_buf_arg(o, sizeof o)};
    kf_interp_launch l = {{2, 3, 1}, {4, 4, 3}, 0};
    kf_error err = {0};
    assert_int_equal(kf_interp_run(&b.k, args, 1, &l, NULL, &err), KF_OK);
    for (uint32_t i = 0; i < 6 * 48; i++) assert_int_equal(o[i], ((i % 48) % 32) | (4u << 8) | (3u << 16));
}

/* for i in 0 .. 100 { if i % 3 == 0 { continue; } if i == 50 { break; } s += i; } */
static void loop_continue_and_break(void **state)
{
    tb b;
    tb_init(&b, "loops");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    kf_val i = tb_val(&b, T_U32), s = tb_val(&b, T_U32);
    tb_mov(&b, i, tb_u32(&b, 0));
    tb_mov(&b, s, tb_u32(&b, 0));
    tb_loop(&b);
    tb_if(&b, tb_cmp(&b, KF_OP_GE, i, tb_u32(&b, 100)));
    tb_break(&b);
    tb_endif(&b);
    tb_if(&b, tb_cmp(&b, KF_OP_EQ, tb_bin(&b, KF_OP_REM, i, tb_u32(&b, 3)), tb_u32(&b, 0)));
    tb_continue(&b);
    tb_endif(&b);
    tb_if(&b, tb_cmp(&b, KF_OP_EQ, i, tb_u32(&b, 50)));
    tb_break(&b);
    tb_else(&b);
    tb_mov(&b, s, tb_bin(&b, KF_OP_ADD, s, i));
    tb_endif(&b);
    tb_latch(&b);
    tb_mov(&b, i, tb_bin(&b, KF_OP_ADD, i, tb_u32(&b, 1)));
    tb_endloop(&b);
    tb_store(&b, out, tb_sreg(&b, KF_SR_TID_X), s);
    uint32_t o[2] = {0};
    kf_interp_arg args[] = {tb_buf_arg(o, sizeof o)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 2, args, &err, NULL), KF_OK);
    uint32_t want = 0;
    for (uint32_t k = 0; k < 50; k++)
        if (k % 3) want += k;
    assert_int_equal(o[0], want);
    assert_int_equal(o[1], want);
}

/* if t % 4 == 3 { return; } out[t] = 1: returning threads write nothing;
 * a warp op after the return misses the returned lanes and is reported. */
static void return_ends_only_the_returning_thread(void **state)
{
    tb b;
    tb_init(&b, "ret");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    tb_if(&b, tb_cmp(&b, KF_OP_EQ, tb_bin(&b, KF_OP_AND, t, tb_u32(&b, 3)), tb_u32(&b, 3)));
    tb_ret(&b);
    tb_endif(&b);
    tb_store(&b, out, t, tb_u32(&b, 1));
    uint32_t o[64] = {0};
    kf_interp_arg args[] = {tb_buf_arg(o, sizeof o)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 64, args, &err, NULL), KF_OK);
    for (uint32_t i = 0; i < 64; i++) assert_int_equal(o[i], (i & 3) != 3);
    b.line = 9, b.col = 2;
    tb_vote(&b, KF_BI_ALL, tb_cmp(&b, KF_OP_LT, t, tb_u32(&b, 64)));
    assert_int_equal(tb_run(&b, 1, 64, args, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel ret: t.kf:9:2: warp builtin not reached by all 32 lanes of warp 0 (lane 3 has "
                                 "exited) in block (0,0,0) thread (0,0,0)");
}

/* Stats count executed IR instructions (markers a jump skips are not
 * executed) and started threads exactly. */
static void stats_count_instructions_and_threads(void **state)
{
    tb b;
    tb_init(&b, "count");
    kf_val i = tb_val(&b, T_U32);
    tb_mov(&b, i, tb_u32(&b, 0));
    kf_val ten = tb_u32(&b, 10);
    tb_loop(&b);
    tb_if(&b, tb_cmp(&b, KF_OP_GE, i, ten));
    tb_break(&b);
    tb_endif(&b);
    tb_latch(&b);
    tb_mov(&b, i, tb_bin(&b, KF_OP_ADD, i, tb_u32(&b, 1)));
    tb_endloop(&b);
    kf_error err = {0};
    kf_interp_stats st;
    assert_true(kf_ir_link(&b.k));
    kf_interp_launch l = {{3, 1, 1}, {5, 1, 1}, 0};
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, &st, &err), KF_OK);
    /* 4 up to LOOP; 10 iterations of cmp, if (false: jumps past ENDIF),
     * latch, const, add, mov, endloop (back to after LOOP) = 7; then cmp,
     * if, break = 3. */
    assert_int_equal(st.instructions, 15 * (4 + 10 * 7 + 3));
    assert_int_equal(st.threads, 15);
}

/* ---- barrier and shared memory ------------------------------------------ */

/* s[t] = t * 3; barrier; out[t] = s[63 - t] */
static void barrier_exchanges_through_shared_memory(void **state)
{
    tb b;
    tb_init(&b, "xchg");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    uint32_t s = tb_array(&b, "s", T_U32, 64, true);
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    tb_astore(&b, s, t, tb_bin(&b, KF_OP_MUL, t, tb_u32(&b, 3)));
    tb_barrier(&b);
    kf_val v = tb_aload(&b, s, tb_bin(&b, KF_OP_SUB, tb_u32(&b, 63), t));
    kf_val g = tb_gid(&b);
    tb_store(&b, out, g, v);
    uint32_t o[128];
    kf_interp_arg args[] = {tb_buf_arg(o, sizeof o)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 2, 64, args, &err, NULL), KF_OK);
    for (uint32_t i = 0; i < 128; i++) assert_int_equal(o[i], (63 - i % 64) * 3);
}

/* A shared-memory tree reduction: a barrier inside a loop is reached
 * again and again by every thread. */
static void barrier_inside_a_loop_tree_reduction(void **state)
{
    tb b;
    tb_init(&b, "tree");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    uint32_t sh = tb_array(&b, "sh", T_U32, 256, true);
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    tb_astore(&b, sh, t, tb_bin(&b, KF_OP_ADD, tb_gid(&b), tb_u32(&b, 1)));
    tb_barrier(&b);
    kf_val s = tb_val(&b, T_U32);
    tb_mov(&b, s, tb_u32(&b, 128));
    tb_loop(&b);
    tb_if(&b, tb_cmp(&b, KF_OP_EQ, s, tb_u32(&b, 0)));
    tb_break(&b);
    tb_endif(&b);
    tb_if(&b, tb_cmp(&b, KF_OP_LT, t, s));
    tb_astore(&b, sh, t, tb_bin(&b, KF_OP_ADD, tb_aload(&b, sh, t), tb_aload(&b, sh, tb_bin(&b, KF_OP_ADD, t, s))));
    tb_endif(&b);
    tb_barrier(&b);
    tb_latch(&b);
    tb_mov(&b, s, tb_bin(&b, KF_OP_SHR, s, tb_u32(&b, 1)));
    tb_endloop(&b);
    tb_if(&b, tb_cmp(&b, KF_OP_EQ, t, tb_u32(&b, 0)));
    tb_store(&b, out, tb_sreg(&b, KF_SR_CTAID_X), tb_aload(&b, sh, tb_u32(&b, 0)));
    tb_endif(&b);
    uint32_t o[3];
    kf_interp_arg args[] = {tb_buf_arg(o, sizeof o)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 3, 256, args, &err, NULL), KF_OK);
    for (uint32_t k = 0; k < 3; k++) assert_int_equal(o[k], 256 * (256 * k + 1) + 255 * 256 / 2);
}

/* ---- warp builtins -------------------------------------------------------- */

/* out[gid] = fn(value = lane * 10 + 1000 * warp, arg(lane)) over a block of bx threads. */
static void run_shfl(kf_builtin fn, uint32_t bx, uint32_t (*arg)(uint32_t), uint32_t *o)
{
    tb b;
    tb_init(&b, "shfl");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    kf_val lane = tb_sreg(&b, KF_SR_LANE);
    kf_val v = tb_bin(&b, KF_OP_ADD, tb_bin(&b, KF_OP_MUL, lane, tb_u32(&b, 10)),
                      tb_bin(&b, KF_OP_MUL, tb_bin(&b, KF_OP_SHR, t, tb_u32(&b, 5)), tb_u32(&b, 1000)));
    /* the argument per lane comes from a table in memory */
    kf_val tab = tb_param(&b, "tab", t_buf(T_U32, false));
    kf_val r = tb_shfl(&b, fn, v, tb_load(&b, tab, lane));
    tb_store(&b, out, t, r);
    uint32_t a[32];
    for (uint32_t i = 0; i < 32; i++) a[i] = arg(i);
    kf_interp_arg args[] = {tb_buf_arg(o, bx * 4), tb_buf_arg(a, sizeof a)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, bx, args, &err, NULL), KF_OK);
}

static uint32_t arg_plus5(uint32_t l) { return l + 5; }
static uint32_t arg_mod_test(uint32_t l) { return l == 0 ? 37 : l == 1 ? 20 : l; }
static uint32_t arg_xor(uint32_t l) { return l < 8 ? 1 : l < 16 ? 16 : l < 24 ? 32 : 7; }
static uint32_t arg_delta(uint32_t l) { return l < 16 ? 1 : l < 24 ? 40 : 3; }

static void shfl_idx_wraps_mod_32_and_keeps_own_value_outside_warp(void **state)
{
    uint32_t o[48];
    run_shfl(KF_BI_SHFL, 48, arg_plus5, o);
    for (uint32_t t = 0; t < 48; t++) {
        uint32_t lane = t % 32, w = t / 32, n = w ? 16 : 32;
        uint32_t src = (lane + 5) & 31;
        uint32_t want = src < n ? src * 10 + 1000 * w : lane * 10 + 1000 * w;
        assert_int_equal(o[t], want);
    }
    run_shfl(KF_BI_SHFL, 48, arg_mod_test, o);
    assert_int_equal(o[0], 5 * 10);                 /* 37 % 32 = 5 */
    assert_int_equal(o[1], 20 * 10);
    assert_int_equal(o[32], 5 * 10 + 1000);
    assert_int_equal(o[33], 1 * 10 + 1000);         /* lane 20 does not exist: own value */
}

static void shfl_xor_masks_in_and_out_of_range(void **state)
{
    uint32_t o[32];
    run_shfl(KF_BI_SHFL_XOR, 32, arg_xor, o);
    for (uint32_t l = 0; l < 32; l++) {
        uint32_t src = l ^ arg_xor(l);
        assert_int_equal(o[l], (src < 32 ? src : l) * 10);
    }
}

static void shfl_up_and_down_keep_own_value_past_the_edge(void **state)
{
    uint32_t o[48];
    run_shfl(KF_BI_SHFL_UP, 48, arg_delta, o);
    for (uint32_t t = 0; t < 48; t++) {
        uint32_t l = t % 32, d = arg_delta(l), w = t / 32;
        uint32_t src = d > l ? l : l - d;
        assert_int_equal(o[t], src * 10 + 1000 * w);
    }
    run_shfl(KF_BI_SHFL_DOWN, 48, arg_delta, o);
    for (uint32_t t = 0; t < 48; t++) {
        uint32_t l = t % 32, d = arg_delta(l), w = t / 32, n = w ? 16 : 32;
        uint32_t src = l + d < n ? l + d : l;
        assert_int_equal(o[t], src * 10 + 1000 * w);
    }
    assert_int_equal(o[15 + 32], 15 * 10 + 1000);  /* lane 15 of a 16-lane warp: own */
    assert_int_equal(o[31], 31 * 10);
}

/* out[t] = warp_reduce(v(t)) where v is read from `in` (type t). */
static void run_reduce(kf_builtin fn, kf_type ty, uint32_t bx, const void *in, void *o)
{
    tb b;
    tb_init(&b, "reduce");
    kf_val out = tb_param(&b, "out", t_buf(ty, true));
    kf_val inp = tb_param(&b, "in", t_buf(ty, false));
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    tb_store(&b, out, t, tb_warp_reduce(&b, fn, tb_load(&b, inp, t)));
    size_t by = kf_scalar_bytes[ty.scalar];
    kf_interp_arg args[] = {tb_buf_arg(o, bx * by), tb_buf_arg((void *)in, bx * by)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, bx, args, &err, NULL), KF_OK);
}

static void warp_sum_max_min_on_i32_f32_u64(void **state)
{
    int32_t vi[64], oi[64];
    float vf[64], of[64];
    uint64_t vu[64], ou[64];
    int32_t sum = 0, mx = INT32_MIN, mn = INT32_MAX;
    float fsum = 0;
    for (int i = 0; i < 64; i++) {
        vi[i] = i < 32 ? (i * 7919) % 1000 - 500 : i;
        vf[i] = (float)i * 0.25f;
        vu[i] = i == 3 ? UINT64_C(1) << 63 : (uint64_t)i * 1000000007u;
        if (i < 32) sum += vi[i], mx = vi[i] > mx ? vi[i] : mx, mn = vi[i] < mn ? vi[i] : mn, fsum += vf[i];
    }
    run_reduce(KF_BI_WARP_SUM, T_I32, 64, vi, oi);
    for (int i = 0; i < 32; i++) assert_int_equal(oi[i], sum);
    assert_int_equal(oi[40], (32 + 63) * 32 / 2);
    run_reduce(KF_BI_WARP_MAX, T_I32, 32, vi, oi);
    for (int i = 0; i < 32; i++) assert_int_equal(oi[i], mx);
    run_reduce(KF_BI_WARP_MIN, T_I32, 32, vi, oi);
    for (int i = 0; i < 32; i++) assert_int_equal(oi[i], mn);
    run_reduce(KF_BI_WARP_SUM, T_F32, 32, vf, of);
    for (int i = 0; i < 32; i++) assert_true(of[i] == fsum);
    run_reduce(KF_BI_WARP_MAX, T_U64, 32, vu, ou);
    for (int i = 0; i < 32; i++) assert_true(ou[i] == UINT64_C(1) << 63);   /* unsigned compare */
    run_reduce(KF_BI_WARP_MIN, T_U64, 32, vu, ou);
    for (int i = 0; i < 32; i++) assert_true(ou[i] == 0);
    uint64_t usum = 0;
    for (int i = 0; i < 32; i++) usum += vu[i];
    run_reduce(KF_BI_WARP_SUM, T_U64, 32, vu, ou);
    assert_true(ou[5] == usum);
}

/* ballot(lane % 3 == 0), any(lane == 7), all(lane % 3 == 0), all(lane < 100) */
static void ballot_any_all_full_and_partial_warps(void **state)
{
    tb b;
    tb_init(&b, "votes");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    kf_val t = tb_sreg(&b, KF_SR_TID_X), lane = tb_sreg(&b, KF_SR_LANE);
    kf_val p = tb_cmp(&b, KF_OP_EQ, tb_bin(&b, KF_OP_REM, lane, tb_u32(&b, 3)), tb_u32(&b, 0));
    kf_val bal = tb_vote(&b, KF_BI_BALLOT, p);
    kf_val an = tb_vote(&b, KF_BI_ANY, tb_cmp(&b, KF_OP_EQ, lane, tb_u32(&b, 7)));
    kf_val al = tb_vote(&b, KF_BI_ALL, p);
    kf_val al2 = tb_vote(&b, KF_BI_ALL, tb_cmp(&b, KF_OP_LT, lane, tb_u32(&b, 100)));
    kf_val base = tb_bin(&b, KF_OP_MUL, t, tb_u32(&b, 4));
    tb_store(&b, out, base, bal);
    tb_store(&b, out, tb_bin(&b, KF_OP_ADD, base, tb_u32(&b, 1)), tb_cvt(&b, T_U32, an));
    tb_store(&b, out, tb_bin(&b, KF_OP_ADD, base, tb_u32(&b, 2)), tb_cvt(&b, T_U32, al));
    tb_store(&b, out, tb_bin(&b, KF_OP_ADD, base, tb_u32(&b, 3)), tb_cvt(&b, T_U32, al2));
    uint32_t o[48 * 4];
    kf_interp_arg args[] = {tb_buf_arg(o, sizeof o)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 48, args, &err, NULL), KF_OK);
    assert_int_equal(o[0], 0x49249249u);
    assert_int_equal(o[5 * 4 + 1], 1);
    assert_int_equal(o[5 * 4 + 2], 0);
    assert_int_equal(o[5 * 4 + 3], 1);
    assert_int_equal(o[40 * 4 + 0], 0x9249u);       /* 16 lanes */
    assert_int_equal(o[40 * 4 + 1], 1);
    assert_int_equal(o[47 * 4 + 3], 1);
}

/* ---- atomics -------------------------------------------------------------- */

static void atomic_add_contention_gives_full_sum_and_distinct_olds(void **state)
{
    tb b;
    tb_init(&b, "count");
    kf_val ctr = tb_param(&b, "ctr", t_buf(T_U32, true));
    kf_val olds = tb_param(&b, "olds", t_buf(T_U32, true));
    kf_val g = tb_gid(&b);
    kf_val old = tb_atomic(&b, KF_BI_ATOMIC_ADD, ctr, tb_u32(&b, 0), tb_u32(&b, 1), 0);
    tb_store(&b, olds, g, old);
    uint32_t c = 0, o[1024];
    kf_interp_arg args[] = {tb_buf_arg(&c, 4), tb_buf_arg(o, sizeof o)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 4, 256, args, &err, NULL), KF_OK);
    assert_int_equal(c, 1024);
    uint8_t seen[1024] = {0};
    for (int i = 0; i < 1024; i++) {
        assert_true(o[i] < 1024);
        assert_false(seen[o[i]]);
        seen[o[i]] = 1;
    }
}

/* atomic_<fn>(buf, 0, in[gid]) for each thread; returns the final buf[0]. */
static void run_atomic(kf_builtin fn, kf_type ty, uint32_t n, const void *in, void *cell, void *olds)
{
    tb b;
    tb_init(&b, "atom");
    kf_val c = tb_param(&b, "c", t_buf(ty, true));
    kf_val inp = tb_param(&b, "in", t_buf(ty, false));
    kf_val o = tb_param(&b, "o", t_buf(ty, true));
    kf_val g = tb_gid(&b);
    tb_store(&b, o, g, tb_atomic(&b, fn, c, tb_u32(&b, 0), tb_load(&b, inp, g), 0));
    size_t by = kf_type_elem_bytes(ty);
    kf_interp_arg args[] = {tb_buf_arg(cell, by), tb_buf_arg((void *)in, n * by), tb_buf_arg(olds, n * by)};
    kf_error err = {0};
    uint32_t bx = n > 1000 ? 1000 : n;
    assert_int_equal(tb_run(&b, n / bx, bx, args, &err, NULL), KF_OK);
}

static void atomic_min_max_exch_f32_and_f16x2_add(void **state)
{
    int32_t vi[64], oi[64], ci = 0;
    for (int i = 0; i < 64; i++) vi[i] = (i * 37) % 64 - 40;
    run_atomic(KF_BI_ATOMIC_MIN, T_I32, 64, vi, &ci, oi);
    assert_int_equal(ci, -40);
    ci = 0;
    run_atomic(KF_BI_ATOMIC_MAX, T_I32, 64, vi, &ci, oi);
    assert_int_equal(ci, 23);
    uint32_t vu[64], ou[64], cu = 5;
    for (int i = 0; i < 64; i++) vu[i] = 0x80000000u + (uint32_t)i;
    run_atomic(KF_BI_ATOMIC_MAX, T_U32, 64, vu, &cu, ou);
    assert_int_equal(cu, 0x8000003fu);               /* unsigned order */
    cu = 7;
    run_atomic(KF_BI_ATOMIC_EXCH, T_U32, 64, vu, &cu, ou);
    uint64_t olds_sum = 0;
    for (int i = 0; i < 64; i++) olds_sum += ou[i];
    /* the exchanged-out values are the initial 7 and all inputs but the final one */
    uint64_t in_sum = 0;
    for (int i = 0; i < 64; i++) in_sum += vu[i];
    assert_true(olds_sum == in_sum - cu + 7);
    float vf[64], of[64], cf = 0.5f;
    for (int i = 0; i < 64; i++) vf[i] = 0.25f * (float)i;
    run_atomic(KF_BI_ATOMIC_ADD, T_F32, 64, vf, &cf, of);
    assert_true(cf == 0.5f + 0.25f * 2016.0f);
    /* f16x2: lane 0 adds 1.0 3000 times (stops at 2048: 2048 + 1 rounds to
     * even), lane 1 adds 0.5 (exact up to 1024). */
    enum { N = 1000 };
    uint32_t *vh = malloc(3 * N * 4), *oh = malloc(3 * N * 4), ch = 0;
    for (int i = 0; i < 3 * N; i++) vh[i] = kf_f16_from_double(1.0) | (uint32_t)kf_f16_from_double(i < 2000 ? 0.5 : 0.0) << 16;
    run_atomic(KF_BI_ATOMIC_ADD, kf_type_vector(KF_S_F16, 2), 3 * N, vh, &ch, oh);
    assert_true(kf_f16_to_double((uint16_t)ch) == 2048.0);
    assert_true(kf_f16_to_double((uint16_t)(ch >> 16)) == 1000.0);
    free(vh), free(oh);
}

static void atomic_cas_succeeds_once(void **state)
{
    tb b;
    tb_init(&b, "cas");
    kf_val c = tb_param(&b, "c", t_buf(T_U32, true));
    kf_val o = tb_param(&b, "o", t_buf(T_U32, true));
    kf_val g = tb_gid(&b);
    kf_val old = tb_atomic(&b, KF_BI_ATOMIC_CAS, c, tb_u32(&b, 0), tb_u32(&b, 0), tb_bin(&b, KF_OP_ADD, g, tb_u32(&b, 100)));
    tb_store(&b, o, g, old);
    uint32_t cell = 0, olds[64];
    kf_interp_arg args[] = {tb_buf_arg(&cell, 4), tb_buf_arg(olds, sizeof olds)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 2, 32, args, &err, NULL), KF_OK);
    int winners = 0;
    for (int i = 0; i < 64; i++) {
        if (olds[i] == 0) {
            winners++;
            assert_int_equal(cell, (uint32_t)i + 100);
        } else {
            assert_int_equal(olds[i], cell);
        }
    }
    assert_int_equal(winners, 1);
}

/* ---- scalar semantics: each case computes r = op(x, y) in one thread ----- */

typedef enum { K_BIN, K_CMP, K_CVT, K_MATH, K_UN } op_kind;

/* Runs one operation on constants of type tx (and ty), returning the bits
 * of the result, which has type tr. */
static uint64_t eval(op_kind kind, int op, kf_type tr, kf_type tx, uint64_t x, uint64_t y, uint64_t z)
{
    tb b;
    tb_init(&b, "eval");
    kf_val out = tb_param(&b, "out", t_buf(tr, true));
    kf_val cx = tb_const(&b, tx, x), cy = tb_const(&b, tx, y), cz = tb_const(&b, tx, z), r = 0;
    switch (kind) {
    case K_BIN: r = tb_bin(&b, (kf_op)op, cx, cy); break;
    case K_CMP: r = tb_cmp(&b, (kf_op)op, cx, cy); break;
    case K_CVT: r = tb_cvt(&b, tr, cx); break;
    case K_MATH: r = tb_math(&b, (kf_builtin)op, tr, cx, cy, cz); break;
    case K_UN: r = tb_unop(&b, (kf_op)op, cx); break;
    }
    tb_store(&b, out, tb_u32(&b, 0), r);
    uint64_t res[2] = {0, 0};
    kf_interp_arg args[] = {tb_buf_arg(res, kf_type_elem_bytes(tr))};
    kf_error err = {0};
    kf_status st = tb_run(&b, 1, 1, args, &err, NULL);
    assert_int_equal(st, KF_OK);
    return res[0];
}

#define BIN(op, t, x, y) eval(K_BIN, op, t, t, (uint64_t)(x), (uint64_t)(y), 0)
#define MASK(t, v) ((uint64_t)(v) & (kf_scalar_bytes[(t).scalar] == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * kf_scalar_bytes[(t).scalar])) - 1))

static void integer_overflow_wraps_at_every_width(void **state)
{
    assert_true(BIN(KF_OP_ADD, T_I8, 127, 1) == 0x80);
    assert_true(BIN(KF_OP_ADD, T_U8, 255, 1) == 0);
    assert_true(BIN(KF_OP_SUB, T_U8, 0, 1) == 0xff);
    assert_true(BIN(KF_OP_ADD, T_I16, 32767, 1) == 0x8000);
    assert_true(BIN(KF_OP_MUL, T_U16, 300, 300) == (90000 & 0xffff));
    assert_true(BIN(KF_OP_ADD, T_I32, INT32_MAX, 1) == 0x80000000u);
    assert_true(BIN(KF_OP_MUL, T_U32, 65536, 65536) == 0);
    assert_true(BIN(KF_OP_MUL, T_I32, 0x7fffffff, 3) == 0x7ffffffdu);
    assert_true(BIN(KF_OP_ADD, T_I64, INT64_MAX, 1) == (uint64_t)INT64_MIN);
    assert_true(BIN(KF_OP_ADD, T_U64, UINT64_MAX, 2) == 1);
    assert_true(eval(K_UN, KF_OP_NEG, T_I8, T_I8, 0x80, 0, 0) == 0x80);
    assert_true(eval(K_UN, KF_OP_BNOT, T_U16, T_U16, 0x00ff, 0, 0) == 0xff00);
}

static void division_truncates_and_int_min_by_minus_one_wraps(void **state)
{
    assert_true(BIN(KF_OP_DIV, T_I32, MASK(T_I32, -7), 2) == MASK(T_I32, -3));
    assert_true(BIN(KF_OP_REM, T_I32, MASK(T_I32, -7), 2) == MASK(T_I32, -1));
    assert_true(BIN(KF_OP_REM, T_I32, 7, MASK(T_I32, -2)) == 1);
    assert_true(BIN(KF_OP_DIV, T_I32, 0x80000000u, MASK(T_I32, -1)) == 0x80000000u);
    assert_true(BIN(KF_OP_REM, T_I32, 0x80000000u, MASK(T_I32, -1)) == 0);
    assert_true(BIN(KF_OP_DIV, T_I8, 0x80, 0xff) == 0x80);
    assert_true(BIN(KF_OP_REM, T_I8, 0x80, 0xff) == 0);
    assert_true(BIN(KF_OP_DIV, T_I64, (uint64_t)INT64_MIN, UINT64_MAX) == (uint64_t)INT64_MIN);
    assert_true(BIN(KF_OP_REM, T_I64, (uint64_t)INT64_MIN, UINT64_MAX) == 0);
    assert_true(BIN(KF_OP_DIV, T_U32, 0xffffffffu, 2) == 0x7fffffffu);
    assert_true(BIN(KF_OP_REM, T_U64, UINT64_MAX, 10) == 5);
}

static void shifts_at_and_past_width(void **state)
{
    assert_true(BIN(KF_OP_SHR, T_I32, MASK(T_I32, -8), 1) == MASK(T_I32, -4));
    assert_true(BIN(KF_OP_SHR, T_I32, MASK(T_I32, -8), 31) == 0xffffffffu);
    assert_true(BIN(KF_OP_SHR, T_I32, MASK(T_I32, -8), 32) == 0xffffffffu);
    assert_true(BIN(KF_OP_SHR, T_I32, 8, 32) == 0);
    assert_true(BIN(KF_OP_SHR, T_I32, MASK(T_I32, -8), 0xffffffffu) == 0xffffffffu);  /* amount unsigned */
    assert_true(BIN(KF_OP_SHR, T_U32, 0x80000000u, 31) == 1);
    assert_true(BIN(KF_OP_SHR, T_U32, 0x80000000u, 32) == 0);
    assert_true(BIN(KF_OP_SHL, T_U32, 1, 31) == 0x80000000u);
    assert_true(BIN(KF_OP_SHL, T_U32, 1, 32) == 0);
    assert_true(BIN(KF_OP_SHL, T_I32, 1, 100) == 0);
    assert_true(BIN(KF_OP_SHR, T_I8, 0x80, 8) == 0xff);
    assert_true(BIN(KF_OP_SHR, T_I8, 0x80, 7) == 0xff);
    assert_true(BIN(KF_OP_SHR, T_I8, 0x40, 8) == 0);
    assert_true(BIN(KF_OP_SHL, T_U8, 1, 8) == 0);
    assert_true(BIN(KF_OP_SHL, T_U8, 3, 7) == 0x80);
    assert_true(BIN(KF_OP_SHR, T_U16, 0x8000, 16) == 0);
    assert_true(BIN(KF_OP_SHL, T_U64, 1, 63) == UINT64_C(1) << 63);
    assert_true(BIN(KF_OP_SHL, T_U64, 1, 64) == 0);
    assert_true(BIN(KF_OP_SHR, T_I64, (uint64_t)INT64_MIN, 64) == UINT64_MAX);
    assert_true(BIN(KF_OP_SHR, T_I64, (uint64_t)INT64_MIN, 63) == UINT64_MAX);
    assert_true(BIN(KF_OP_SHR, T_U64, UINT64_MAX, 64) == 0);
}

static uint64_t f32b(float x) { return kf_f32_bits(x); }
static uint64_t f64b(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}
#define CVT(to, from, x) eval(K_CVT, 0, to, from, (uint64_t)(x), 0, 0)

static void float_to_int_saturates_truncates_and_maps_nan_to_zero(void **state)
{
    assert_true(CVT(T_I32, T_F32, f32b(3e9f)) == 0x7fffffffu);
    assert_true(CVT(T_I32, T_F32, f32b(-3e9f)) == 0x80000000u);
    assert_true(CVT(T_I32, T_F32, f32b(NAN)) == 0);
    assert_true(CVT(T_I32, T_F32, f32b(-1.9f)) == 0xffffffffu);
    assert_true(CVT(T_U32, T_F32, f32b(-1.0f)) == 0);
    assert_true(CVT(T_U32, T_F32, f32b(INFINITY)) == 0xffffffffu);
    assert_true(CVT(T_U8, T_F32, f32b(300.0f)) == 255);
    assert_true(CVT(T_I8, T_F64, f64b(-129.5)) == 0x80);
    assert_true(CVT(T_I64, T_F64, f64b(1e300)) == (uint64_t)INT64_MAX);
    assert_true(CVT(T_U64, T_F64, f64b(NAN)) == 0);
    assert_true(CVT(T_I16, T_F16, kf_f16_from_double(-65504.0)) == 0x8000);
    assert_true(CVT(T_I32, T_F16, kf_f16_from_double(-65504.0)) == MASK(T_I32, -65504));
}

static void narrowing_and_int_to_float_round_to_nearest_even_once(void **state)
{
    assert_true(CVT(T_F16, T_F64, f64b(1.0 + ldexp(1.0, -11) + ldexp(1.0, -30))) == 0x3c01);
    assert_true(CVT(T_F16, T_F32, f32b(2049.0f)) == 0x6800);
    assert_true(CVT(T_F16, T_F32, f32b(70000.0f)) == 0x7c00);
    assert_true(CVT(T_BF16, T_F32, f32b(1.0f + ldexpf(1.0f, -8))) == 0x3f80);
    assert_true(CVT(T_F32, T_F64, f64b(1.0 + ldexp(1.0, -24))) == f32b(1.0f));
    assert_true(CVT(T_F32, T_F64, f64b(1.0 + 3 * ldexp(1.0, -24))) == f32b(1.0f + ldexpf(1.0f, -22)));
    assert_true(CVT(T_F16, T_I32, 2049) == 0x6800);
    assert_true(CVT(T_F16, T_I32, MASK(T_I32, -2051)) == 0xe802);
    assert_true(CVT(T_F16, T_U32, 100000) == 0x7c00);
    assert_true(CVT(T_F32, T_U32, 16777217) == f32b(16777216.0f));
    assert_true(CVT(T_F32, T_I64, (UINT64_C(1) << 40) + 1) == f32b(1099511627776.0f));
    assert_true(CVT(T_F32, T_F16, 0x3555) == f32b((float)kf_f16_to_double(0x3555)));
    assert_true(CVT(T_F32, T_BOOL, 1) == f32b(1.0f));
    assert_true(CVT(T_I32, T_I8, 0x80) == MASK(T_I32, -128));
    assert_true(CVT(T_U32, T_I8, 0xff) == 0xffffffffu);
    assert_true(CVT(T_U8, T_U32, 0x1234) == 0x34);
    assert_true(CVT(T_I64, T_I32, 0xffffffffu) == UINT64_MAX);
    assert_true(CVT(T_U64, T_U32, 0xffffffffu) == 0xffffffffu);
}

static void f64_arithmetic_is_double(void **state)
{
    assert_true(BIN(KF_OP_ADD, T_F64, f64b(0.1), f64b(0.2)) == f64b(0.1 + 0.2));
    assert_true(BIN(KF_OP_DIV, T_F64, f64b(1.0), f64b(3.0)) == f64b(1.0 / 3.0));
    assert_true(BIN(KF_OP_MUL, T_F64, f64b(1e200), f64b(1e200)) == f64b(INFINITY));
    assert_true(BIN(KF_OP_DIV, T_F32, f32b(1.0f), f32b(3.0f)) == f32b(1.0f / 3.0f));
    assert_true(eval(K_CMP, KF_OP_LE, T_BOOL, T_F64, f64b(-0.0), f64b(0.0), 0) == 1);
    assert_true(eval(K_UN, KF_OP_NEG, T_F64, T_F64, f64b(2.0), 0, 0) == f64b(-2.0));
    assert_true(eval(K_UN, KF_OP_NEG, T_F32, T_F32, f32b(0.0f), 0, 0) == f32b(-0.0f));
}

static void f16_and_bf16_arithmetic_round_each_operation(void **state)
{
    uint64_t two048 = kf_f16_from_double(2048.0), one = kf_f16_from_double(1.0);
    assert_true(BIN(KF_OP_ADD, T_F16, two048, one) == two048);                 /* 2049 -> 2048 */
    assert_true(BIN(KF_OP_ADD, T_F16, kf_f16_from_double(2050.0), one) == kf_f16_from_double(2052.0));
    assert_true(BIN(KF_OP_MUL, T_F16, kf_f16_from_double(300.0), kf_f16_from_double(300.0)) == 0x7c00);
    assert_true(BIN(KF_OP_DIV, T_F16, one, kf_f16_from_double(3.0)) == kf_f16_from_double(1.0 / 3.0));
    assert_true(BIN(KF_OP_SUB, T_BF16, kf_bf16_from_double(1.0), kf_bf16_from_double(ldexp(1.0, -9))) ==
                kf_bf16_from_double(1.0));
    assert_true(eval(K_CMP, KF_OP_LT, T_BOOL, T_F16, 0xbc00, 0x3c00, 0) == 1);   /* -1 < 1 */
    assert_true(eval(K_CMP, KF_OP_NE, T_BOOL, T_F16, 0x7e00, 0x7e00, 0) == 1);   /* NaN != NaN */
    assert_true(eval(K_CMP, KF_OP_EQ, T_BOOL, T_F32, f32b(NAN), f32b(NAN), 0) == 0);
    assert_true(eval(K_CMP, KF_OP_LT, T_BOOL, T_I32, MASK(T_I32, -1), 0, 0) == 1);
    assert_true(eval(K_CMP, KF_OP_LT, T_BOOL, T_U32, 0xffffffffu, 0, 0) == 0);
    assert_true(eval(K_CMP, KF_OP_GE, T_BOOL, T_I8, 0x80, 0x7f, 0) == 0);
    assert_true(eval(K_UN, KF_OP_NEG, T_F16, T_F16, one, 0, 0) == 0xbc00);
}

/* The interpreter computes f16/bf16 + - * / in double and rounds once; the
 * contract says that equals computing in f32 and rounding (and native f16):
 * check it on random operand pairs of every magnitude, bit for bit. */
static void narrow_float_ops_equal_f32_then_round(void **state)
{
    static const kf_op ops[] = {KF_OP_ADD, KF_OP_SUB, KF_OP_MUL, KF_OP_DIV};
    for (int n = 0; n < 200000; n++) {
        kf_scalar s = n & 1 ? KF_S_BF16 : KF_S_F16;
        kf_op op = ops[(n >> 1) & 3];
        uint16_t x = (uint16_t)rng(), y = (uint16_t)rng();
        kf_islot a = {{x, 0}}, b = {{y, 0}}, r;
        assert_int_equal(kf_iop_binop(op, s, 1, &r, &a, &b), IOP_OK);
        float fx = (float)kf_bits_to_double(s, x), fy = (float)kf_bits_to_double(s, y), fz;
        switch (op) {
        case KF_OP_ADD: fz = fx + fy; break;
        case KF_OP_SUB: fz = fx - fy; break;
        case KF_OP_MUL: fz = fx * fy; break;
        default: fz = fx / fy; break;
        }
        uint16_t want = (uint16_t)kf_bits_from_double(s, fz);
        if (isnan(fz)) assert_true(isnan(kf_bits_to_double(s, r.u16[0])));
        else assert_int_equal(r.u16[0], want);
    }
}

#define MATH(fn, t, x, y, z) eval(K_MATH, fn, t, t, (uint64_t)(x), (uint64_t)(y), (uint64_t)(z))

static void math_builtins_follow_the_contract(void **state)
{
    assert_true(MATH(KF_BI_MIN, T_F32, f32b(NAN), f32b(2.0f), 0) == f32b(2.0f));
    assert_true(MATH(KF_BI_MAX, T_F32, f32b(1.0f), f32b(NAN), 0) == f32b(1.0f));
    assert_true(MATH(KF_BI_ABS, T_I32, 0x80000000u, 0, 0) == 0x80000000u);
    assert_true(MATH(KF_BI_ABS, T_I32, MASK(T_I32, -5), 0, 0) == 5);
    assert_true(MATH(KF_BI_ROUND, T_F32, f32b(2.5f), 0, 0) == f32b(3.0f));
    assert_true(MATH(KF_BI_ROUND, T_F32, f32b(-2.5f), 0, 0) == f32b(-3.0f));
    assert_true(MATH(KF_BI_FLOOR, T_F64, f64b(-1.5), 0, 0) == f64b(-2.0));
    assert_true(MATH(KF_BI_SQRT, T_F32, f32b(2.0f), 0, 0) == f32b(sqrtf(2.0f)));
    assert_true(MATH(KF_BI_FMA, T_F32, f32b(1.0f + ldexpf(1.0f, -12)), f32b(1.0f + ldexpf(1.0f, -12)),
                     f32b(-1.0f)) == f32b(fmaf(1.0f + ldexpf(1.0f, -12), 1.0f + ldexpf(1.0f, -12), -1.0f)));
    assert_true(MATH(KF_BI_MIN, T_I32, MASK(T_I32, -3), 2, 0) == MASK(T_I32, -3));
    assert_true(MATH(KF_BI_MIN, T_U32, 0xfffffffdu, 2, 0) == 2);
    assert_true(MATH(KF_BI_MAX, T_U32, 0xfffffffdu, 2, 0) == 0xfffffffdu);
    assert_true(MATH(KF_BI_MUL_HI, T_U32, 0x80000000u, 4, 0) == 2);
    assert_true(MATH(KF_BI_MUL_HI, T_I32, MASK(T_I32, -1), MASK(T_I32, -1), 0) == 0);
    assert_true(MATH(KF_BI_MUL_HI, T_U64, UINT64_MAX, UINT64_MAX, 0) == UINT64_MAX - 1);
    assert_true(MATH(KF_BI_MUL_HI, T_I64, (uint64_t)INT64_MIN, 2, 0) == UINT64_MAX);
    assert_true(eval(K_MATH, KF_BI_CLZ, T_U32, T_U32, 1, 0, 0) == 31);
    assert_true(eval(K_MATH, KF_BI_CLZ, T_U32, T_U32, 0, 0, 0) == 32);
    assert_true(eval(K_MATH, KF_BI_CLZ, T_U32, T_U64, 1, 0, 0) == 63);
    assert_true(eval(K_MATH, KF_BI_POPC, T_U32, T_U64, UINT64_MAX, 0, 0) == 64);
    assert_true(eval(K_MATH, KF_BI_POPC, T_U32, T_I32, 0xf0f0f0f0u, 0, 0) == 16);
    assert_true(MATH(KF_BI_CDIV, T_U32, 10, 3, 0) == 4);
    assert_true(MATH(KF_BI_CDIV, T_U32, 9, 3, 0) == 3);
    assert_true(MATH(KF_BI_CDIV, T_I32, MASK(T_I32, -7), 2, 0) == MASK(T_I32, -3));
    assert_true(MATH(KF_BI_CLAMP, T_I32, MASK(T_I32, -9), MASK(T_I32, -4), 4) == MASK(T_I32, -4));
    assert_true(MATH(KF_BI_CLAMP, T_F32, f32b(9.0f), f32b(-1.0f), f32b(1.0f)) == f32b(1.0f));
}

/* Operands that hit the edges: small shift amounts, zero, -1, INT_MIN,
 * NaN/inf/-0 for floats, and random bits. */
static uint64_t edgy(kf_scalar s)
{
    static const uint64_t f32s[] = {0x7fc00000, 0x7f800000, 0xff800000, 0x80000000, 0x3f800000, 0x00000001};
    static const uint64_t f64s[] = {0x7ff8000000000000ull, 0x7ff0000000000000ull, 0x8000000000000000ull,
                                    0x3ff0000000000000ull, 1};
    uint64_t r = rng();
    switch (r % 8) {
    case 0: return rng() % 70;
    case 1: return 0;
    case 2: return UINT64_MAX;
    case 3: return s == KF_S_F32 ? f32s[rng() % 6] : s == KF_S_F64 ? f64s[rng() % 5] : UINT64_C(1) << (8 * kf_scalar_bytes[s] - 1);
    default: return rng();
    }
}

/* r[i] = x[i] op y[i] through the interpreter's decoded fast path must equal
 * the generic lane-wise operation of interp_ops.c, bit for bit. */
static void fast_paths_agree_with_generic_ops(void **state)
{
    static const kf_scalar types[] = {KF_S_I32, KF_S_U32, KF_S_I64, KF_S_U64, KF_S_F32, KF_S_F64};
    static const kf_op iops[] = {KF_OP_ADD, KF_OP_SUB, KF_OP_MUL, KF_OP_AND, KF_OP_OR, KF_OP_XOR, KF_OP_SHL, KF_OP_SHR,
                                 KF_OP_DIV, KF_OP_REM, KF_OP_EQ, KF_OP_NE, KF_OP_LT, KF_OP_LE, KF_OP_GT, KF_OP_GE};
    static const kf_op fops[] = {KF_OP_ADD, KF_OP_SUB, KF_OP_MUL, KF_OP_DIV, KF_OP_EQ, KF_OP_NE,
                                 KF_OP_LT, KF_OP_LE, KF_OP_GT, KF_OP_GE};
    enum { N = 512 };
    for (unsigned ti = 0; ti < 6; ti++) {
        kf_scalar sc = types[ti];
        kf_type t = kf_type_scalar(sc);
        bool fl = kf_scalar_class[sc] == 'f';
        unsigned nops = fl ? 10 : 16;
        unsigned by = kf_scalar_bytes[sc];
        for (unsigned oi = 0; oi < nops; oi++) {
            kf_op op = fl ? fops[oi] : iops[oi];
            bool cmp = op >= KF_OP_EQ;
            kf_type rt = cmp ? T_BOOL : t;
            tb b;
            tb_init(&b, "diff");
            kf_val x = tb_param(&b, "x", t_buf(t, false)), y = tb_param(&b, "y", t_buf(t, false));
            kf_val r = tb_param(&b, "r", t_buf(rt, true));
            kf_val i = tb_sreg(&b, KF_SR_TID_X);
            kf_val xi = tb_load(&b, x, i), yi = tb_load(&b, y, i);
            tb_store(&b, r, i, cmp ? tb_cmp(&b, op, xi, yi) : tb_bin(&b, op, xi, yi));
            uint64_t xs[N], ys[N], rs[N];
            uint8_t xb[N * 8], yb[N * 8], rb[N * 8];
            for (int k = 0; k < N; k++) {
                xs[k] = edgy(sc), ys[k] = edgy(sc);
                if ((op == KF_OP_DIV || op == KF_OP_REM) && !fl && !(ys[k] & ((UINT64_C(2) << (8 * by - 1)) - 1)))
                    ys[k] = 3;   /* division by zero is a fault, tested elsewhere */
                memcpy(xb + k * by, &xs[k], by), memcpy(yb + k * by, &ys[k], by);
            }
            kf_interp_arg args[] = {tb_buf_arg(xb, N * by), tb_buf_arg(yb, N * by),
                                    tb_buf_arg(rb, N * kf_scalar_bytes[rt.scalar])};
            kf_error err = {0};
            assert_int_equal(tb_run(&b, 1, N, args, &err, NULL), KF_OK);
            for (int k = 0; k < N; k++) {
                kf_islot a = {{0, 0}}, c = {{0, 0}}, want = {{0, 0}};
                memcpy(&a, &xs[k], by), memcpy(&c, &ys[k], by);
                if (cmp) kf_iop_cmp(op, sc, &want, &a, &c);
                else assert_int_equal(kf_iop_binop(op, sc, 1, &want, &a, &c), IOP_OK);
                rs[k] = 0;
                memcpy(&rs[k], rb + k * kf_scalar_bytes[rt.scalar], kf_scalar_bytes[rt.scalar]);
                uint64_t w = kf_iop_lane(&want, kf_scalar_bytes[rt.scalar], 0);
                bool nan = fl && !cmp && isnan(kf_bits_to_double(sc, w)) && isnan(kf_bits_to_double(sc, rs[k]));
                if (rs[k] != w && !nan) print_error("%s %s %llx %llx\n", kf_scalar_names[sc], kf_op_spelling[op],
                                                    (unsigned long long)xs[k], (unsigned long long)ys[k]);
                assert_true(rs[k] == w || nan);
            }
        }
    }
}

/* f32x2 / f32x4 arithmetic takes a vector fast path; it must equal the
 * generic lane-wise op. */
static void vector_fast_paths_agree_with_generic_ops(void **state)
{
    static const kf_op ops[] = {KF_OP_ADD, KF_OP_SUB, KF_OP_MUL, KF_OP_DIV};
    for (unsigned lanes = 2; lanes <= 4; lanes += 2) {
        kf_type vt = kf_type_vector(KF_S_F32, lanes);
        for (unsigned oi = 0; oi < 4; oi++) {
            tb b;
            tb_init(&b, "vdiff");
            kf_val x = tb_param(&b, "x", t_buf(vt, false)), y = tb_param(&b, "y", t_buf(vt, false));
            kf_val r = tb_param(&b, "r", t_buf(vt, true));
            kf_val i = tb_sreg(&b, KF_SR_TID_X);
            tb_store(&b, r, i, tb_bin(&b, ops[oi], tb_load(&b, x, i), tb_load(&b, y, i)));
            kf_islot xs[64], ys[64], rs[64];
            for (int k = 0; k < 64; k++)
                for (unsigned l = 0; l < 4; l++) xs[k].u32[l] = (uint32_t)edgy(KF_S_F32), ys[k].u32[l] = (uint32_t)edgy(KF_S_F32);
            uint32_t xb[256], yb[256], rb[256];
            for (int k = 0; k < 64; k++) memcpy(xb + k * lanes, &xs[k], lanes * 4), memcpy(yb + k * lanes, &ys[k], lanes * 4);
            kf_interp_arg args[] = {tb_buf_arg(xb, 64 * lanes * 4), tb_buf_arg(yb, 64 * lanes * 4),
                                    tb_buf_arg(rb, 64 * lanes * 4)};
            kf_error err = {0};
            assert_int_equal(tb_run(&b, 1, 64, args, &err, NULL), KF_OK);
            for (int k = 0; k < 64; k++) {
                kf_iop_binop(ops[oi], KF_S_F32, lanes, &rs[k], &xs[k], &ys[k]);
                for (unsigned l = 0; l < lanes; l++) {
                    uint32_t got = rb[k * lanes + l], want = rs[k].u32[l];
                    assert_true(got == want || (isnan(kf_f32_from_bits(got)) && isnan(kf_f32_from_bits(want))));
                }
            }
        }
    }
}

/* Vector ops: splat, insert, extract, per-lane add and f32x4 -> f16x4. */
static void vectors_work_per_lane(void **state)
{
    tb b;
    tb_init(&b, "vec");
    kf_type v4 = kf_type_vector(KF_S_F32, 4), h4 = kf_type_vector(KF_S_F16, 4);
    kf_val out = tb_param(&b, "out", t_buf(h4, true));
    kf_val in = tb_param(&b, "in", t_buf(v4, false));
    kf_val x = tb_load(&b, in, tb_u32(&b, 0));
    kf_val s = tb_ins(&b, KF_IR_SPLAT, 0, v4, v4, tb_f32(&b, 0.5f), 0, 0, 0, 0);
    kf_val ins2 = tb_ins(&b, KF_IR_INSERT, 0, v4, v4, s, tb_f32(&b, 1024.0f), 0, 0, 2);
    kf_val sum = tb_bin(&b, KF_OP_ADD, x, ins2);
    kf_val e = tb_ins(&b, KF_IR_EXTRACT, 0, T_F32, T_F32, sum, 0, 0, 0, 3);
    kf_val sum2 = tb_ins(&b, KF_IR_INSERT, 0, v4, v4, sum, e, 0, 0, 0);
    tb_store(&b, out, tb_u32(&b, 0), tb_cvt(&b, h4, sum2));
    kf_val lo = tb_view(&b, out, T_U32);   /* bitcast view: the low word */
    kf_val word = tb_load(&b, lo, tb_u32(&b, 1));
    kf_val sel = tb_ins(&b, KF_IR_SELECT, 0, T_U32, T_U32,
                        tb_cmp(&b, KF_OP_NE, word, tb_u32(&b, 0)), word, tb_u32(&b, 7), 0, 0);
    tb_store(&b, lo, tb_u32(&b, 2), sel);
    float xin[4] = {1.0f, 2.0f, 1.0f, 3.0f};
    uint16_t o[6] = {0};
    kf_interp_arg args[] = {tb_buf_arg(o, 12), tb_buf_arg(xin, 16)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 1, args, &err, NULL), KF_OK);
    assert_int_equal(o[0], kf_f16_from_double(3.5));
    assert_int_equal(o[1], kf_f16_from_double(2.5));
    assert_int_equal(o[2], kf_f16_from_double(1025.0));  /* 1025 is exact in f16 */
    assert_int_equal(o[3], kf_f16_from_double(3.5));
    assert_int_equal(o[4], o[2]);                          /* copied word 1 */
    assert_int_equal(o[5], o[3]);
}

static void local_arrays_are_per_thread(void **state)
{
    tb b;
    tb_init(&b, "loc");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    uint32_t a = tb_array(&b, "a", T_U32, 4, false);
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    for (uint32_t i = 0; i < 4; i++) tb_astore(&b, a, tb_u32(&b, i), tb_bin(&b, KF_OP_ADD, t, tb_u32(&b, i * 100)));
    tb_barrier(&b);
    tb_store(&b, out, t, tb_aload(&b, a, tb_u32(&b, 3)));
    uint32_t o[40];
    kf_interp_arg args[] = {tb_buf_arg(o, sizeof o)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 40, args, &err, NULL), KF_OK);
    for (uint32_t i = 0; i < 40; i++) assert_int_equal(o[i], i + 300);
}

/* A block whose registers and arrays would take over 1 GiB is refused
 * before anything is allocated: 4 MiB of local array (and 1 MiB of written
 * flags) per thread is 5 GiB for 1024 threads, which calloc could grant on
 * an overcommitting host and the first block's flag reset would then touch.
 * The same kernel in a block of 32 threads runs. */
static void oversized_block_state_is_refused_before_allocation(void **state)
{
    tb b;
    tb_init(&b, "big");
    kf_val out = tb_param(&b, "out", t_buf(T_U32, true));
    uint32_t a = tb_array(&b, "a", T_U32, 1u << 20, false);
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    tb_astore(&b, a, t, tb_bin(&b, KF_OP_ADD, t, tb_u32(&b, 5)));
    tb_store(&b, out, t, tb_aload(&b, a, t));
    uint32_t o[1024] = {0};
    kf_interp_arg args[] = {tb_buf_arg(o, sizeof o)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 1024, args, &err, NULL), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "kernel big: a block of 1024 threads needs 5120 MiB of interpreter state"));
    assert_non_null(strstr(err.msg, "over the interpreter's 1024 MiB"));
    assert_int_equal(o[0], 0);
    assert_int_equal(tb_run(&b, 1, 32, args, &err, NULL), KF_OK);
    for (uint32_t i = 0; i < 32; i++) assert_int_equal(o[i], i + 5);
}

/* ---- error reports ---------------------------------------------------------- */

static void out_of_bounds_load_names_buffer_index_place_and_thread(void **state)
{
    tb b;
    build_saxpy(&b, false);
    float x[1000] = {0}, y[1000] = {0};
    kf_interp_arg args[] = {tb_scalar_arg(T_F32, 0), tb_buf_arg(x, sizeof x), tb_buf_arg(y, sizeof y),
                            tb_scalar_arg(T_U32, 1000)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 4, 256, args, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel saxpy: t.kf:6:9: out-of-bounds load of x[1000] (length 1000) in block (3,0,0) "
                                 "thread (232,0,0)");
    assert_int_equal(err.loc.line, 6);
    assert_int_equal(err.loc.col, 9);
    assert_true(y[999] == 0.0f);
}

/* out[ctaid.y * 10 + tid.y * 4 + tid.x] in 4x4 blocks on a 1x2 grid, 16
 * elements: the first fault is block (0,1,0) thread (2,1,0). */
static void fault_names_multidimensional_block_and_thread(void **state)
{
    tb b;
    tb_init(&b, "md");
    kf_val o = tb_param(&b, "o", t_buf(T_U32, true));
    kf_val i = tb_bin(&b, KF_OP_MUL, tb_sreg(&b, KF_SR_CTAID_Y), tb_u32(&b, 10));
    i = tb_bin(&b, KF_OP_ADD, i, tb_bin(&b, KF_OP_MUL, tb_sreg(&b, KF_SR_TID_Y), tb_u32(&b, 4)));
    i = tb_bin(&b, KF_OP_ADD, i, tb_sreg(&b, KF_SR_TID_X));
    b.line = 2, b.col = 8;
    tb_store(&b, o, i, i);
    assert_true(kf_ir_link(&b.k));
    uint32_t mem[16];
    kf_interp_arg args[] = {tb_buf_arg(mem, sizeof mem)};
    kf_interp_launch l = {{1, 2, 1}, {4, 4, 1}, 0};
    kf_error err = {0};
    assert_int_equal(kf_interp_run(&b.k, args, 1, &l, NULL, &err), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel md: t.kf:2:8: out-of-bounds store of o[16] (length 16) in block (0,1,0) "
                                 "thread (2,1,0)");
}

static void out_of_bounds_store_and_negative_index(void **state)
{
    tb b;
    tb_init(&b, "st");
    kf_val o = tb_param(&b, "o", t_buf(T_I32, true));
    kf_val t = tb_cvt(&b, T_I32, tb_sreg(&b, KF_SR_TID_X));
    kf_val i = tb_bin(&b, KF_OP_SUB, tb_i32(&b, 5), t);
    b.line = 3, b.col = 7;
    tb_store(&b, o, i, t);
    int32_t mem[8];
    kf_interp_arg args[] = {tb_buf_arg(mem, sizeof mem)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 8, args, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel st: t.kf:3:7: out-of-bounds store of o[-1] (length 8) in block (0,0,0) thread (6,0,0)");
    assert_int_equal(mem[0], 5);   /* writes before the fault are kept */
}

static void out_of_bounds_through_a_view_uses_the_view_length(void **state)
{
    tb b;
    tb_init(&b, "vw");
    kf_val x = tb_param(&b, "x", t_buf(T_F32, false));
    kf_val v = tb_view(&b, x, kf_type_vector(KF_S_F32, 4));
    b.line = 9, b.col = 2;
    tb_load(&b, v, tb_sreg(&b, KF_SR_TID_X));
    float mem[10];
    kf_interp_arg args[] = {tb_buf_arg(mem, sizeof mem)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 3, args, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel vw: t.kf:9:2: out-of-bounds load of x[2] through a view of 16-byte elements (length 2; x holds 10 "
                        "elements of 4 bytes) in block (0,0,0) thread (2,0,0)");
}

static void out_of_bounds_atomic(void **state)
{
    tb b;
    tb_init(&b, "at");
    kf_val c = tb_param(&b, "c", t_buf(T_U32, true));
    b.line = 4, b.col = 5;
    tb_atomic(&b, KF_BI_ATOMIC_ADD, c, tb_sreg(&b, KF_SR_TID_X), tb_u32(&b, 1), 0);
    uint32_t mem[2] = {0};
    kf_interp_arg args[] = {tb_buf_arg(mem, sizeof mem)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 4, args, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel at: t.kf:4:5: out-of-bounds atomic_add of c[2] (length 2) in block (0,0,0) thread (2,0,0)");
}

static void out_of_bounds_shared_and_local_arrays(void **state)
{
    tb b;
    tb_init(&b, "arr");
    uint32_t s = tb_array(&b, "part", T_F32, 8, true);
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    b.line = 2, b.col = 3;
    tb_astore(&b, s, t, tb_f32(&b, 1.0f));
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 2, 16, NULL, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel arr: t.kf:2:3: out-of-bounds store of shared array part[8] (length 8) in block "
                                 "(0,0,0) thread (8,0,0)");
    tb_init(&b, "arr");
    uint32_t a = tb_array(&b, "acc", T_U32, 4, false);
    t = tb_sreg(&b, KF_SR_TID_X);
    b.line = 5, b.col = 11;
    tb_aload(&b, a, tb_bin(&b, KF_OP_ADD, t, tb_u32(&b, 2)));
    assert_int_equal(tb_run(&b, 1, 4, NULL, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel arr: t.kf:5:11: read of local array element acc[2] before it was written in "
                                 "block (0,0,0) thread (0,0,0)");
}

static void local_array_out_of_bounds_after_writes(void **state)
{
    tb b;
    tb_init(&b, "arr");
    uint32_t a = tb_array(&b, "acc", T_U32, 4, false);
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    for (uint32_t i = 0; i < 4; i++) tb_astore(&b, a, tb_u32(&b, i), t);
    b.line = 6, b.col = 1;
    tb_aload(&b, a, tb_bin(&b, KF_OP_ADD, t, tb_u32(&b, 2)));
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 4, NULL, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel arr: t.kf:6:1: out-of-bounds load of local array acc[4] (length 4) in block "
                                 "(0,0,0) thread (2,0,0)");
}

static void barrier_skipped_by_some_threads_is_divergent(void **state)
{
    tb b;
    tb_init(&b, "div");
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    tb_if(&b, tb_cmp(&b, KF_OP_LT, t, tb_u32(&b, 16)));
    b.line = 7, b.col = 9;
    tb_barrier(&b);
    b.line = 8;
    tb_endif(&b);
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 64, NULL, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel div: t.kf:7:9: divergent barrier: thread (16,0,0) has exited in block (0,0,0) "
                                 "thread (0,0,0)");
    assert_int_equal(err.loc.line, 7);
}

static void threads_at_different_barriers_are_divergent(void **state)
{
    tb b;
    tb_init(&b, "div2");
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    tb_if(&b, tb_cmp(&b, KF_OP_EQ, t, tb_u32(&b, 40)));
    b.line = 3, b.col = 5;
    tb_barrier(&b);
    tb_else(&b);
    b.line = 5, b.col = 5;
    tb_barrier(&b);
    tb_endif(&b);
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 64, NULL, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel div2: t.kf:5:5: divergent barrier: thread (40,0,0) is at a barrier t.kf:3:5 in "
                                 "block (0,0,0) thread (0,0,0)");
}

static void shfl_in_divergent_code_is_reported(void **state)
{
    tb b;
    tb_init(&b, "wp");
    kf_val lane = tb_sreg(&b, KF_SR_LANE);
    tb_if(&b, tb_cmp(&b, KF_OP_LT, lane, tb_u32(&b, 16)));
    b.line = 4, b.col = 13;
    tb_shfl(&b, KF_BI_SHFL_XOR, lane, tb_u32(&b, 1));
    b.line = 5;
    tb_endif(&b);
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 1, 64, NULL, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel wp: t.kf:4:13: warp builtin not reached by all 32 lanes of warp 0 (lane 16 has "
                                 "exited) in block (0,0,0) thread (0,0,0)");
    /* a partial second warp of 16 lanes, where lane 9 skips the vote */
    tb_init(&b, "wp");
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    tb_if(&b, tb_cmp(&b, KF_OP_NE, t, tb_u32(&b, 41)));
    b.line = 2, b.col = 4;
    tb_vote(&b, KF_BI_ANY, tb_cmp(&b, KF_OP_EQ, t, tb_u32(&b, 0)));
    tb_endif(&b);
    b.line = 3, b.col = 4;
    tb_barrier(&b);
    assert_int_equal(tb_run(&b, 1, 48, NULL, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel wp: t.kf:2:4: warp builtin not reached by all 16 lanes of warp 1 (lane 9 is at "
                                 "a barrier t.kf:3:4) in block (0,0,0) thread (32,0,0)");
}

static void integer_division_and_remainder_by_zero(void **state)
{
    tb b;
    tb_init(&b, "dz");
    kf_val o = tb_param(&b, "o", t_buf(T_U32, true));
    kf_val t = tb_sreg(&b, KF_SR_TID_X);
    kf_val d = tb_bin(&b, KF_OP_SUB, tb_u32(&b, 3), t);
    b.line = 12, b.col = 15;
    tb_store(&b, o, t, tb_bin(&b, KF_OP_DIV, tb_u32(&b, 100), d));
    uint32_t mem[8];
    kf_interp_arg args[] = {tb_buf_arg(mem, sizeof mem)};
    kf_error err = {0};
    assert_int_equal(tb_run(&b, 2, 4, args, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel dz: t.kf:12:15: integer division by zero in block (0,0,0) thread (3,0,0)");
    assert_int_equal(mem[2], 100);
    tb_init(&b, "dz");
    o = tb_param(&b, "o", t_buf(T_I8, true));
    kf_val z = tb_const(&b, T_I8, 0);
    b.line = 2, b.col = 2;
    tb_store(&b, o, tb_u32(&b, 0), tb_bin(&b, KF_OP_REM, tb_const(&b, T_I8, 5), z));
    assert_int_equal(tb_run(&b, 1, 1, args, &err, NULL), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel dz: t.kf:2:2: integer remainder by zero in block (0,0,0) thread (0,0,0)");
}

static void argument_mismatches_are_usage_errors(void **state)
{
    tb b;
    build_saxpy(&b, true);
    assert_true(kf_ir_link(&b.k));
    float x[4];
    kf_interp_launch l = {{1, 1, 1}, {4, 1, 1}, 0};
    kf_interp_arg args[] = {tb_scalar_arg(T_F32, 0), tb_buf_arg(x, sizeof x), tb_buf_arg(x, sizeof x),
                            tb_scalar_arg(T_U32, 4)};
    kf_error err = {0};
    assert_int_equal(kf_interp_run(&b.k, args, 3, &l, NULL, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "kernel saxpy takes 4 arguments, 3 given");
    args[1] = tb_scalar_arg(T_U32, 1);
    assert_int_equal(kf_interp_run(&b.k, args, 4, &l, NULL, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "kernel saxpy: argument 2 (x) must be a buffer");
    args[1] = tb_buf_arg(x, sizeof x);
    args[3] = tb_buf_arg(x, sizeof x);
    assert_int_equal(kf_interp_run(&b.k, args, 4, &l, NULL, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "kernel saxpy: argument 4 (n) must be a scalar or vector value");
    args[3] = tb_scalar_arg(T_I32, 4);
    assert_int_equal(kf_interp_run(&b.k, args, 4, &l, NULL, &err), KF_ERR_USAGE);
    assert_string_equal(err.msg, "kernel saxpy: argument n is i32, expected u32");
    args[3] = tb_scalar_arg(T_U32, 4);
    l.block[0] = 2048;
    assert_int_equal(kf_interp_run(&b.k, args, 4, &l, NULL, &err), KF_ERR_USAGE);
}

static void endless_loop_hits_the_instruction_limit(void **state)
{
    tb b;
    tb_init(&b, "spin");
    tb_loop(&b);
    b.line = 3, b.col = 5;
    tb_endloop(&b);
    assert_true(kf_ir_link(&b.k));
    kf_interp_launch l = {{1, 1, 1}, {2, 1, 1}, 0};
    kf_error err = {0};
    assert_int_equal(kf_interp_run_budget(&b.k, NULL, 0, &l, 10000, NULL, &err), KF_ERR_RUNTIME);
    assert_string_equal(err.msg, "kernel spin: t.kf:3:5: the launch did more work than the interpreter allows (10000 "
                                 "steps: instructions, plus 8 per block and thread started); an endless loop, or a grid "
                                 "too large to interpret? (KFORGE_INTERP_MAX_STEPS=N raises the limit), stopped in block (0,0,0) "
                                 "thread (0,0,0)");
}

/* A kernel of a few instructions and no loop over a huge grid: the blocks
 * and threads it starts count, so the launch stops at the budget instead
 * of running for hours; the same grid within the budget runs. */
static void near_empty_kernel_over_a_huge_grid_hits_the_limit(void **state)
{
    tb b;
    tb_init(&b, "tiny");
    b.line = 1, b.col = 1;
    assert_true(kf_ir_link(&b.k));
    kf_interp_launch l = {{65535, 65535, 1}, {1, 1, 1}, 0};
    kf_interp_stats st;
    kf_error err = {0};
    assert_int_equal(kf_interp_run_budget(&b.k, NULL, 0, &l, 1600, &st, &err), KF_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "the launch did more work than the interpreter allows (1600 steps"));
    assert_non_null(strstr(err.msg, "(KFORGE_INTERP_MAX_STEPS=N raises the limit), stopped in block (100,0,0)"));
    assert_int_equal(st.threads, 100);   /* 100 blocks of 1 thread, 16 steps each, fit; the 101st does not */
    l.grid[1] = 1;
    l.grid[0] = 100;
    assert_int_equal(kf_interp_run_budget(&b.k, NULL, 0, &l, 1600, &st, &err), KF_OK);
    assert_int_equal(st.threads, 100);
}

/* kf_interp_run takes its budget from $KFORGE_INTERP_MAX_STEPS. */
static void the_limit_comes_from_the_environment(void **state)
{
    tb b;
    tb_init(&b, "tiny");
    assert_true(kf_ir_link(&b.k));
    kf_interp_launch l = {{1000, 1, 1}, {32, 1, 1}, 0};
    kf_error err = {0};
    setenv("KFORGE_INTERP_MAX_STEPS", "26400", 1);   /* 100 blocks of 32 threads: 8 * 33 each */
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "(26400 steps"));
    assert_non_null(strstr(err.msg, "in block (100,0,0)"));
    setenv("KFORGE_INTERP_MAX_STEPS", "010", 1);
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "KFORGE_INTERP_MAX_STEPS='010': expected a positive integer"));
    unsetenv("KFORGE_INTERP_MAX_STEPS");
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_OK);
}

static void malformed_ir_is_rejected_not_run(void **state)
{
    tb b;
    tb_init(&b, "bad");
    tb_loop(&b);
    tb_endloop(&b);
    b.ins[1].imm = 1;   /* ENDLOOP pointing at itself */
    kf_interp_launch l = {{1, 1, 1}, {1, 1, 1}, 0};
    kf_error err = {0};
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_ERR_USAGE);
    tb_init(&b, "bad");
    tb_ins(&b, KF_IR_MOV, 0, T_U32, T_U32, 57, 0, 0, 0, 0);   /* operand out of range */
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_ERR_USAGE);
    tb_init(&b, "bad");
    kf_val p = tb_const(&b, t_buf(T_U32, true), 0x1000);   /* a "buffer" made from a number */
    tb_store(&b, p, tb_u32(&b, 0), tb_u32(&b, 1));
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "malformed core IR at instruction 0"));
    tb_init(&b, "bad");
    tb_ins(&b, KF_IR_EXTRACT, 0, T_F32, T_F32, tb_f32(&b, 1.0f), 0, 0, 0, 4);   /* lane 4 of 16 bytes */
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_ERR_USAGE);
    tb_init(&b, "bad");
    tb_bin(&b, KF_OP_REM, tb_f32(&b, 1.0f), tb_f32(&b, 2.0f));   /* no float % */
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "malformed core IR at instruction 2 (operator)"));
    tb_init(&b, "bad");
    tb_bin(&b, KF_OP_LT, tb_u32(&b, 1), tb_u32(&b, 2));   /* a comparison as BINOP */
    assert_int_equal(kf_interp_run(&b.k, NULL, 0, &l, NULL, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "(operator)"));
}

/* ---- throughput --------------------------------------------------------------- */

/* A grid-stride f32 reduction over 4M elements: per element a load, a
 * convert-free add, the loop compare and increment; then warp_sum and one
 * atomic per warp. Reports IR instructions per second. */
static void reduction_throughput(void **state)
{
    enum { N = 1 << 22, BLOCKS = 64, THREADS = 256 };
    tb b;
    tb_init(&b, "reduce_sum");
    kf_val x = tb_param(&b, "x", t_buf(T_F32, false));
    kf_val out = tb_param(&b, "out", t_buf(T_F32, true));
    kf_val n = tb_param(&b, "n", T_U32);
    kf_val i = tb_val(&b, T_U32), acc = tb_val(&b, T_F32);
    kf_val stride = tb_bin(&b, KF_OP_MUL, tb_sreg(&b, KF_SR_NCTAID_X), tb_sreg(&b, KF_SR_NTID_X));
    tb_mov(&b, i, tb_gid(&b));
    tb_mov(&b, acc, tb_f32(&b, 0.0f));
    tb_loop(&b);
    tb_if(&b, tb_unop(&b, KF_OP_NOT, tb_cmp(&b, KF_OP_LT, i, n)));
    tb_break(&b);
    tb_endif(&b);
    tb_mov(&b, acc, tb_bin(&b, KF_OP_ADD, acc, tb_load(&b, x, i)));
    tb_latch(&b);
    tb_mov(&b, i, tb_bin(&b, KF_OP_ADD, i, stride));
    tb_endloop(&b);
    kf_val s = tb_warp_reduce(&b, KF_BI_WARP_SUM, acc);
    tb_if(&b, tb_cmp(&b, KF_OP_EQ, tb_sreg(&b, KF_SR_LANE), tb_u32(&b, 0)));
    tb_atomic(&b, KF_BI_ATOMIC_ADD, out, tb_u32(&b, 0), s, 0);
    tb_endif(&b);
    float *xs = malloc(N * sizeof *xs), total = 0;
    for (int k = 0; k < N; k++) xs[k] = (float)(k % 7);
    kf_interp_arg args[] = {tb_buf_arg(xs, N * 4), tb_buf_arg(&total, 4), tb_scalar_arg(T_U32, N)};
    kf_error err = {0};
    kf_interp_stats st;
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    assert_int_equal(tb_run(&b, BLOCKS, THREADS, args, &err, &st), KF_OK);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double want = 0;
    for (int k = 0; k < N; k++) want += k % 7;
    assert_true(total == (float)want);   /* small integers: every partial sum is exact */
    print_message("reduce_sum over %d f32: %llu IR instructions in %.3f s = %.1f M instructions/s of CPU time\n", N,
                  (unsigned long long)st.instructions, sec, (double)st.instructions / sec / 1e6);
    free(xs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(saxpy_rounds_multiply_and_add_separately),
        cmocka_unit_test(sreg_geometry_in_three_dimensions),
        cmocka_unit_test(loop_continue_and_break),
        cmocka_unit_test(return_ends_only_the_returning_thread),
        cmocka_unit_test(stats_count_instructions_and_threads),
        cmocka_unit_test(near_empty_kernel_over_a_huge_grid_hits_the_limit),
        cmocka_unit_test(the_limit_comes_from_the_environment),
        cmocka_unit_test(barrier_exchanges_through_shared_memory),
        cmocka_unit_test(barrier_inside_a_loop_tree_reduction),
        cmocka_unit_test(shfl_idx_wraps_mod_32_and_keeps_own_value_outside_warp),
        cmocka_unit_test(shfl_xor_masks_in_and_out_of_range),
        cmocka_unit_test(shfl_up_and_down_keep_own_value_past_the_edge),
        cmocka_unit_test(warp_sum_max_min_on_i32_f32_u64),
        cmocka_unit_test(ballot_any_all_full_and_partial_warps),
        cmocka_unit_test(atomic_add_contention_gives_full_sum_and_distinct_olds),
        cmocka_unit_test(atomic_min_max_exch_f32_and_f16x2_add),
        cmocka_unit_test(atomic_cas_succeeds_once),
        cmocka_unit_test(integer_overflow_wraps_at_every_width),
        cmocka_unit_test(division_truncates_and_int_min_by_minus_one_wraps),
        cmocka_unit_test(shifts_at_and_past_width),
        cmocka_unit_test(float_to_int_saturates_truncates_and_maps_nan_to_zero),
        cmocka_unit_test(narrowing_and_int_to_float_round_to_nearest_even_once),
        cmocka_unit_test(f64_arithmetic_is_double),
        cmocka_unit_test(f16_and_bf16_arithmetic_round_each_operation),
        cmocka_unit_test(narrow_float_ops_equal_f32_then_round),
        cmocka_unit_test(math_builtins_follow_the_contract),
        cmocka_unit_test(fast_paths_agree_with_generic_ops),
        cmocka_unit_test(vector_fast_paths_agree_with_generic_ops),
        cmocka_unit_test(vectors_work_per_lane),
        cmocka_unit_test(local_arrays_are_per_thread),
        cmocka_unit_test(oversized_block_state_is_refused_before_allocation),
        cmocka_unit_test(out_of_bounds_load_names_buffer_index_place_and_thread),
        cmocka_unit_test(fault_names_multidimensional_block_and_thread),
        cmocka_unit_test(out_of_bounds_store_and_negative_index),
        cmocka_unit_test(out_of_bounds_through_a_view_uses_the_view_length),
        cmocka_unit_test(out_of_bounds_atomic),
        cmocka_unit_test(out_of_bounds_shared_and_local_arrays),
        cmocka_unit_test(local_array_out_of_bounds_after_writes),
        cmocka_unit_test(barrier_skipped_by_some_threads_is_divergent),
        cmocka_unit_test(threads_at_different_barriers_are_divergent),
        cmocka_unit_test(shfl_in_divergent_code_is_reported),
        cmocka_unit_test(integer_division_and_remainder_by_zero),
        cmocka_unit_test(argument_mismatches_are_usage_errors),
        cmocka_unit_test(endless_loop_hits_the_instruction_limit),
        cmocka_unit_test(malformed_ir_is_rejected_not_run),
        cmocka_unit_test(reduction_throughput),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
