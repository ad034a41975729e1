/* Communicators and collectives on CPU devices (runtime/comm.c): an
 * all-reduce over N CPU devices gives every rank the sum (f32, and f16
 * added in f32 in rank order and rounded once), an all-gather lays each
 * rank's part at its slot (in place too), one device needs nothing, nothing
 * is allocated per call; every bad argument is refused naming the call,
 * rank and argument; collectives recorded into every rank's graph replay in
 * lockstep with kf_comm_graph_launch and give what the eager calls give,
 * and a graph launched alone, a recording on only some ranks, or graphs
 * whose collectives differ are clear errors. (The NCCL side is
 * test_runtime_mocknccl.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "../ir/numeric.h"
#include "runtime_test_ir.h"

enum { R = 4, N = 700 };   /* ranks; elements (more than one 512-element chunk) */

typedef struct {
    kf_device *dev[R];
    kf_comm *comm;
    ir_saxpy ir;
    kf_pipeline *p[R];
    kf_buffer *x[R], *y[R];  /* f32, N: x[r][i] = r + i, y[r][i] = 1 */
    kf_error err;
} fx;

static kf_buffer *mk(fx *f, uint32_t r, kf_scalar s, size_t n)
{
    kf_buffer *b;
    assert_int_equal(kf_buffer_create(f->dev[r], kf_type_scalar(s), n, &b, &f->err), KF_OK);
    return b;
}

static void fill_f32(fx *f, kf_buffer *b, float v0, float step, size_t n)
{
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = v0 + step * (float)i;
    assert_int_equal(kf_buffer_upload(b, h, n * sizeof *h, &f->err), KF_OK);
    free(h);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    make_saxpy(&f->ir, 4);
    for (uint32_t r = 0; r < R; r++) {
        assert_int_equal(kf_device_open(KF_BACKEND_CPU, (int)r, &f->dev[r], &f->err), KF_OK);
        assert_int_equal(kf_pipeline_create(f->dev[r], NULL, &f->ir.k, &f->p[r], &f->err), KF_OK);
        f->x[r] = mk(f, r, KF_S_F32, N);
        f->y[r] = mk(f, r, KF_S_F32, N);
        fill_f32(f, f->x[r], (float)r, 1.0f, N);
        fill_f32(f, f->y[r], 1.0f, 0.0f, N);
    }
    assert_int_equal(kf_comm_create(f->dev, R, &f->comm, &f->err), KF_OK);
    assert_int_equal(kf_comm_size(f->comm), R);
    assert_int_equal(kf_comm_nccl_version(f->comm), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    kf_comm_destroy(f->comm);
    for (uint32_t r = 0; r < R; r++) {
        kf_buffer_destroy(f->x[r]);
        kf_buffer_destroy(f->y[r]);
        kf_pipeline_destroy(f->p[r]);
        kf_device_close(f->dev[r]);
    }
    kf_error_clear(&f->err);
    free(f);
    return 0;
}

static void expect_f32(fx *f, kf_buffer *b, float v0, float step)
{
    float *y = malloc(N * sizeof *y);
    assert_int_equal(kf_buffer_download(b, y, N * sizeof *y, &f->err), KF_OK);
    for (int i = 0; i < N; i++)
        if (y[i] != v0 + step * (float)i) fail_msg("element %d = %g, want %g", i, y[i], v0 + step * (float)i);
    free(y);
}

static void expect_error(fx *f, kf_status got, const char *n1, const char *n2)
{
    if (got != KF_ERR_USAGE) fail_msg("status %d, message %s", (int)got, f->err.msg);
    if (!strstr(f->err.msg, n1) || (n2 && !strstr(f->err.msg, n2)))
        fail_msg("message '%s' lacks '%s' / '%s'", f->err.msg, n1, n2 ? n2 : "");
}

/* ---- eager collectives ------------------------------------------------------------- */

static void all_reduce_f32_gives_every_rank_the_sum_without_allocating(void **state)
{
    fx *f = *state;
    uint64_t before = kf_rt_alloc_count();
    assert_int_equal(kf_comm_all_reduce(f->comm, f->x, N, KF_DISPATCH_SYNC, &f->err), KF_OK);
    assert_int_equal(kf_rt_alloc_count(), before);
    /* sum over r of (r + i) = 0+1+2+3 + 4i */
    for (uint32_t r = 0; r < R; r++) expect_f32(f, f->x[r], 6.0f, 4.0f);
}

static void all_reduce_of_a_prefix_leaves_the_rest(void **state)
{
    fx *f = *state;
    assert_int_equal(kf_comm_all_reduce(f->comm, f->y, 10, KF_DISPATCH_ASYNC, &f->err), KF_OK);
    float y[12];
    assert_int_equal(kf_buffer_download(f->y[2], y, sizeof y, &f->err), KF_OK);
    assert_true(y[0] == 4.0f && y[9] == 4.0f && y[10] == 1.0f && y[11] == 1.0f);
}

/* 2048 + 1 + 1 + 0: pairwise in f16 gives 2048 (2049 ties to even), once in f32 then rounded 2050. */
static void all_reduce_f16_adds_in_f32_in_rank_order_and_rounds_once(void **state)
{
    fx *f = *state;
    kf_buffer *h[R];
    const double v[R] = {2048.0, 1.0, 1.0, 0.0};
    for (uint32_t r = 0; r < R; r++) {
        h[r] = mk(f, r, KF_S_F16, 3);
        uint16_t in[3] = {kf_f16_from_double(v[r]), kf_f16_from_double(0.25 * r), kf_f16_from_double(-1.5)};
        assert_int_equal(kf_buffer_upload(h[r], in, sizeof in, &f->err), KF_OK);
    }
    assert_int_equal(kf_comm_all_reduce(f->comm, h, 3, KF_DISPATCH_SYNC, &f->err), KF_OK);
    for (uint32_t r = 0; r < R; r++) {
        uint16_t out[3];
        assert_int_equal(kf_buffer_download(h[r], out, sizeof out, &f->err), KF_OK);
        assert_true(kf_f16_to_double(out[0]) == 2050.0);
        assert_true(kf_f16_to_double(out[1]) == 1.5);
        assert_true(kf_f16_to_double(out[2]) == -6.0);
        kf_buffer_destroy(h[r]);
    }
}

static void all_gather_puts_each_rank_at_its_slot_in_place_too(void **state)
{
    fx *f = *state;
    kf_buffer *s[R], *g[R], *in_place[R];
    for (uint32_t r = 0; r < R; r++) {
        s[r] = mk(f, r, KF_S_U32, 3);
        g[r] = mk(f, r, KF_S_U32, 3 * R);
        uint32_t v[3] = {10 * r, 10 * r + 1, 10 * r + 2};
        assert_int_equal(kf_buffer_upload(s[r], v, sizeof v, &f->err), KF_OK);
        assert_int_equal(kf_buffer_view(g[r], 3 * r, 3, &in_place[r], &f->err), KF_OK);
    }
    assert_int_equal(kf_comm_all_gather(f->comm, s, g, 3, KF_DISPATCH_SYNC, &f->err), KF_OK);
    for (uint32_t r = 0; r < R; r++) {
        uint32_t out[3 * R];
        assert_int_equal(kf_buffer_download(g[r], out, sizeof out, &f->err), KF_OK);
        for (uint32_t j = 0; j < 3 * R; j++) assert_int_equal(out[j], 10 * (j / 3) + j % 3);
        uint32_t z[3 * R] = {0};   /* again in place: each rank's part already at its slot */
        memcpy(z + 3 * r, out + 3 * r, 12);
        assert_int_equal(kf_buffer_upload(g[r], z, sizeof z, &f->err), KF_OK);
    }
    assert_int_equal(kf_comm_all_gather(f->comm, in_place, g, 3, KF_DISPATCH_SYNC, &f->err), KF_OK);
    for (uint32_t r = 0; r < R; r++) {
        uint32_t out[3 * R];
        assert_int_equal(kf_buffer_download(g[r], out, sizeof out, &f->err), KF_OK);
        for (uint32_t j = 0; j < 3 * R; j++) assert_int_equal(out[j], 10 * (j / 3) + j % 3);
        kf_buffer_destroy(in_place[r]);
        kf_buffer_destroy(s[r]);
        kf_buffer_destroy(g[r]);
    }
}

static void one_device_needs_nothing_and_all_gather_copies(void **state)
{
    fx *f = *state;
    kf_comm *one;
    assert_int_equal(kf_comm_create(f->dev, 1, &one, &f->err), KF_OK);
    assert_int_equal(kf_comm_all_reduce(one, f->x, N, KF_DISPATCH_SYNC, &f->err), KF_OK);
    expect_f32(f, f->x[0], 0.0f, 1.0f);
    assert_int_equal(kf_comm_all_gather(one, f->x, f->y, N, KF_DISPATCH_SYNC, &f->err), KF_OK);
    expect_f32(f, f->y[0], 0.0f, 1.0f);
    kf_comm_destroy(one);
}

static void bad_arguments_are_refused_naming_the_rank_and_argument(void **state)
{
    fx *f = *state;
    kf_buffer *b[R], *i32 = mk(f, 1, KF_S_I32, N), *small = mk(f, 2, KF_S_F32, 5);
    kf_comm *c2;
    memcpy(b, f->x, sizeof b);
    expect_error(f, kf_comm_all_reduce(f->comm, b, 0, KF_DISPATCH_SYNC, &f->err), "count is 0", NULL);
    expect_error(f, kf_comm_all_reduce(f->comm, b, N + 1, KF_DISPATCH_SYNC, &f->err), "rank 0 holds 700", "needs 701");
    expect_error(f, kf_comm_all_reduce(f->comm, b, N, KF_DISPATCH_TIMED, &f->err), "KF_DISPATCH_TIMED", NULL);
    b[3] = f->x[2];
    expect_error(f, kf_comm_all_reduce(f->comm, b, N, KF_DISPATCH_SYNC, &f->err), "rank 3 is on rank 2's device", "on its own device");
    b[3] = f->x[3], b[1] = i32;
    expect_error(f, kf_comm_all_reduce(f->comm, b, N, KF_DISPATCH_SYNC, &f->err), "rank 1 holds i32", "f32 or f16");
    b[1] = f->x[1], b[2] = small;
    expect_error(f, kf_comm_all_gather(f->comm, f->x, b, 2, KF_DISPATCH_SYNC, &f->err), "recv of rank 2", "needs 8");
    kf_buffer_set_readonly(f->x[3], true);
    expect_error(f, kf_comm_all_reduce(f->comm, f->x, N, KF_DISPATCH_SYNC, &f->err), "rank 3 is read-only", NULL);
    kf_buffer_set_readonly(f->x[3], false);
    kf_device *dup[2] = {f->dev[1], f->dev[1]};
    expect_error(f, kf_comm_create(dup, 2, &c2, &f->err), "devices 0 and 1 are the same", NULL);
    expect_error(f, kf_comm_create(f->dev, 0, &c2, &f->err), "at least one device", NULL);
    expect_error(f, kf_comm_create(NULL, 2, &c2, &f->err), "the device list is NULL", NULL);
    double us;
    expect_error(f, kf_comm_bench_bare(f->comm, f->x, N, 3, &us, &f->err), "no NCCL to time (CPU devices)", NULL);
    expect_f32(f, f->x[0], 0.0f, 1.0f);   /* nothing ran */
    kf_buffer_destroy(i32);
    kf_buffer_destroy(small);
}

/* ---- graphs ------------------------------------------------------------------------------ */

/* Rank r: y += a·x; all-reduce y; y += a·x (a = 1 + r on the first, 2 on the second). */
static void record_step(fx *f, kf_plan **p1, kf_plan **p2)
{
    for (uint32_t r = 0; r < R; r++) {
        kf_arg a1[4] = {{NULL, f32v(1.0f + r)}, {.buf = f->x[r]}, {.buf = f->y[r]}, {NULL, u32v(N)}};
        kf_arg a2[4] = {{NULL, f32v(2.0f)}, {.buf = f->x[r]}, {.buf = f->y[r]}, {NULL, u32v(N)}};
        kf_launch l = {.count = N};
        assert_int_equal(kf_plan_create(f->p[r], a1, 4, &l, &p1[r], &f->err), KF_OK);
        assert_int_equal(kf_plan_create(f->p[r], a2, 4, &l, &p2[r], &f->err), KF_OK);
    }
}

static void run_step(fx *f, kf_plan **p1, kf_plan **p2)
{
    for (uint32_t r = 0; r < R; r++) assert_int_equal(kf_plan_launch(p1[r], KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_comm_all_reduce(f->comm, f->y, N, KF_DISPATCH_ASYNC, &f->err), KF_OK);
    for (uint32_t r = 0; r < R; r++) assert_int_equal(kf_plan_launch(p2[r], KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
}

/* y_r = 1 + (1+r)(r+i) summed: 4 + sum (1+r)(r+i) = 4 + 20 + 10i; then + 2(r+i). */
static void graphs_with_collectives_replay_in_lockstep_like_the_eager_calls(void **state)
{
    fx *f = *state;
    kf_plan *p1[R], *p2[R];
    kf_graph *g[R];
    record_step(f, p1, p2);
    for (uint32_t r = 0; r < R; r++) assert_int_equal(kf_graph_begin(f->dev[r], &f->err), KF_OK);
    run_step(f, p1, p2);
    for (uint32_t r = 0; r < R; r++) {
        assert_int_equal(kf_graph_end(f->dev[r], &g[r], &f->err), KF_OK);
        assert_int_equal(kf_graph_size(g[r]), 3);
        expect_f32(f, f->y[r], 1.0f, 0.0f);   /* recorded, not run */
    }
    expect_error(f, kf_graph_launch(g[1], KF_DISPATCH_SYNC, NULL, &f->err), "kf_comm_graph_launch", "4 devices");
    uint64_t before = kf_rt_alloc_count();
    assert_int_equal(kf_comm_graph_launch(f->comm, g, KF_DISPATCH_SYNC, &f->err), KF_OK);
    assert_int_equal(kf_rt_alloc_count(), before);
    for (uint32_t r = 0; r < R; r++) expect_f32(f, f->y[r], 24.0f + 2.0f * r, 12.0f);
    for (uint32_t r = 0; r < R; r++) fill_f32(f, f->y[r], 1.0f, 0.0f, N);
    run_step(f, p1, p2);   /* the eager calls agree */
    for (uint32_t r = 0; r < R; r++) expect_f32(f, f->y[r], 24.0f + 2.0f * r, 12.0f);
    kf_graph *swapped[R] = {g[1], g[0], g[2], g[3]};
    expect_error(f, kf_comm_graph_launch(f->comm, swapped, KF_DISPATCH_SYNC, &f->err), "graph 0", "rank's device");
    for (uint32_t r = 0; r < R; r++) {
        kf_graph_destroy(g[r]);
        kf_plan_destroy(p1[r]);
        kf_plan_destroy(p2[r]);
    }
}

static void graphs_whose_collectives_differ_are_refused(void **state)
{
    fx *f = *state;
    kf_plan *p1[R], *p2[R];
    kf_graph *g[R];
    record_step(f, p1, p2);
    for (uint32_t r = 0; r < R; r++) assert_int_equal(kf_graph_begin(f->dev[r], &f->err), KF_OK);
    run_step(f, p1, p2);
    for (uint32_t r = 0; r < R; r++) assert_int_equal(kf_graph_end(f->dev[r], &g[r], &f->err), KF_OK);
    kf_graph *odd;   /* rank 2's device: a graph with no collective */
    assert_int_equal(kf_graph_begin(f->dev[2], &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(p1[2], KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_graph_end(f->dev[2], &odd, &f->err), KF_OK);
    kf_graph *mixed[R] = {g[0], g[1], odd, g[3]};
    expect_error(f, kf_comm_graph_launch(f->comm, mixed, KF_DISPATCH_SYNC, &f->err), "rank 2's graph is at its end",
                 "same collectives");
    kf_graph_destroy(odd);
    for (uint32_t r = 0; r < R; r++) {
        kf_graph_destroy(g[r]);
        kf_plan_destroy(p1[r]);
        kf_plan_destroy(p2[r]);
    }
}

static void a_collective_while_only_some_ranks_record_abandons_their_recordings(void **state)
{
    fx *f = *state;
    kf_graph *g;
    assert_int_equal(kf_graph_begin(f->dev[1], &f->err), KF_OK);
    expect_error(f, kf_comm_all_reduce(f->comm, f->x, N, KF_DISPATCH_ASYNC, &f->err), "kf_comm_all_reduce",
                 "only when every rank's device records");
    expect_error(f, kf_graph_end(f->dev[1], &g, &f->err), "abandoned", "kf_comm_all_reduce");
    for (uint32_t r = 0; r < R; r++) assert_int_equal(kf_graph_begin(f->dev[r], &f->err), KF_OK);
    expect_error(f, kf_comm_all_reduce(f->comm, f->x, N, KF_DISPATCH_SYNC, &f->err), "not KF_DISPATCH_ASYNC", NULL);
    for (uint32_t r = 0; r < R; r++) expect_error(f, kf_graph_end(f->dev[r], &g, &f->err), "abandoned", NULL);
    assert_int_equal(kf_comm_all_reduce(f->comm, f->x, N, KF_DISPATCH_SYNC, &f->err), KF_OK);   /* usable again */
    expect_f32(f, f->x[3], 6.0f, 4.0f);
}

static void a_graph_of_one_rank_replays_its_all_gather_with_kf_graph_launch(void **state)
{
    fx *f = *state;
    kf_comm *one;
    kf_graph *g;
    assert_int_equal(kf_comm_create(f->dev, 1, &one, &f->err), KF_OK);
    assert_int_equal(kf_graph_begin(f->dev[0], &f->err), KF_OK);
    assert_int_equal(kf_comm_all_gather(one, f->x, f->y, N, KF_DISPATCH_ASYNC, &f->err), KF_OK);
    assert_int_equal(kf_graph_end(f->dev[0], &g, &f->err), KF_OK);
    expect_f32(f, f->y[0], 1.0f, 0.0f);
    assert_int_equal(kf_graph_launch(g, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    expect_f32(f, f->y[0], 0.0f, 1.0f);
    kf_graph_destroy(g);
    kf_comm_destroy(one);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(all_reduce_f32_gives_every_rank_the_sum_without_allocating),
        T(all_reduce_of_a_prefix_leaves_the_rest),
        T(all_reduce_f16_adds_in_f32_in_rank_order_and_rounds_once),
        T(all_gather_puts_each_rank_at_its_slot_in_place_too),
        T(one_device_needs_nothing_and_all_gather_copies),
        T(bad_arguments_are_refused_naming_the_rank_and_argument),
        T(graphs_with_collectives_replay_in_lockstep_like_the_eager_calls),
        T(graphs_whose_collectives_differ_are_refused),
        T(a_collective_while_only_some_ranks_record_abandons_their_recordings),
        T(a_graph_of_one_rank_replays_its_all_gather_with_kf_graph_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
