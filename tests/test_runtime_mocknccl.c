/* The communicator's NCCL side in CI, without GPUs: two GPUs of the mock
 * driver (tests/mock/mock_cuda.c, $MOCKCUDA_DEVICES=2) and the mock NCCL
 * (tests/mock/mock_nccl.c) through KF_LIBCUDA and KF_LIBNCCL. Checks that a
 * communicator over two GPUs is one ncclCommInitAll, that a collective is
 * one NCCL call per rank on that rank's own stream inside one
 * ncclGroupStart/End, with the right type, count and result (f32 and f16
 * sums, an all-gather as bytes), that one GPU needs no NCCL, and that an
 * NCCL failure is an error naming the call, its result and NCCL's last
 * error, which leaves no group open and the communicator usable; recorded
 * collectives are captured, and a failure while recording abandons the
 * recordings. (No NCCL
 * at all is test_decode's --tp 2 on the mock driver.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "../ir/numeric.h"

#define MOCK KF_BINARY_DIR "/tests/libkf_mockcuda.so"
#define MOCKNCCL KF_BINARY_DIR "/tests/libkf_mocknccl.so"

static const char *(*nccl_log)(void);
static int (*nccl_fail)(const char *api, int n);
static int (*nccl_live)(void), (*nccl_inits)(void), (*nccl_depth)(void);

typedef struct {
    kf_device *dev[2];
    kf_comm *comm;
    kf_error err;
} fx;

static int group_setup(void **state)
{
    setenv("KF_LIBCUDA", MOCK, 1);
    setenv("KF_LIBNCCL", MOCKNCCL, 1);
    setenv("MOCKCUDA_DEVICES", "2", 1);
    void *h = dlopen(MOCKNCCL, RTLD_NOW);
    if (!h) return -1;
    *(void **)&nccl_log = dlsym(h, "mock_nccl_log");
    *(void **)&nccl_fail = dlsym(h, "mock_nccl_fail");
    *(void **)&nccl_live = dlsym(h, "mock_nccl_live");
    *(void **)&nccl_inits = dlsym(h, "mock_nccl_inits");
    *(void **)&nccl_depth = dlsym(h, "mock_nccl_depth");
    return nccl_log && nccl_fail && nccl_live && nccl_inits && nccl_depth ? 0 : -1;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    for (int i = 0; i < 2; i++) assert_int_equal(kf_device_open(KF_BACKEND_CUDA, i, &f->dev[i], &f->err), KF_OK);
    int before = nccl_inits();
    assert_int_equal(kf_comm_create(f->dev, 2, &f->comm, &f->err), KF_OK);
    assert_int_equal(nccl_inits(), before + 1);
    assert_int_equal(nccl_live(), 2);
    assert_int_equal(kf_comm_nccl_version(f->comm), 22803);
    nccl_log();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    kf_comm_destroy(f->comm);
    assert_int_equal(nccl_live(), 0);
    for (int i = 0; i < 2; i++) kf_device_close(f->dev[i]);
    kf_error_clear(&f->err);
    free(f);
    return 0;
}

static kf_buffer *buf(fx *f, int r, kf_scalar s, size_t n, const void *data)
{
    kf_buffer *b;
    assert_int_equal(kf_buffer_create(f->dev[r], kf_type_scalar(s), n, &b, &f->err), KF_OK);
    if (data) assert_int_equal(kf_buffer_upload(b, data, n * kf_type_elem_bytes(kf_type_scalar(s)), &f->err), KF_OK);
    return b;
}

/* The log is GroupStart, rank 0's call, rank 1's call, GroupEnd, the two on different streams. */
static void expect_group(const char *log, const char *call, const char *shape)
{
    char r0[64], r1[64], s0[32], s1[32], want0[64], want1[64];
    snprintf(want0, sizeof want0, "%s r0 %s", call, shape);
    snprintf(want1, sizeof want1, "%s r1 %s", call, shape);
    if (sscanf(log, "GroupStart;%63[^s]s%31[^;];%63[^s]s%31[^;];GroupEnd;", r0, s0, r1, s1) != 4)
        fail_msg("log '%s' is not one group of two calls", log);
    if (strncmp(r0, want0, strlen(want0)) || strncmp(r1, want1, strlen(want1)))
        fail_msg("log '%s': want '%s' then '%s'", log, want0, want1);
    if (!strcmp(s0, s1)) fail_msg("log '%s': both ranks on one stream", log);
}

static void all_reduce_is_one_nccl_call_per_rank_on_its_stream_in_one_group(void **state)
{
    fx *f = *state;
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50}, out[5];
    kf_buffer *x[2] = {buf(f, 0, KF_S_F32, 5, a), buf(f, 1, KF_S_F32, 5, b)};
    assert_int_equal(kf_comm_all_reduce(f->comm, x, 5, KF_DISPATCH_SYNC, &f->err), KF_OK);
    expect_group(nccl_log(), "AllReduce", "n5 t7");
    for (int r = 0; r < 2; r++) {
        assert_int_equal(kf_buffer_download(x[r], out, sizeof out, &f->err), KF_OK);
        for (int i = 0; i < 5; i++) assert_true(out[i] == 11.0f * (float)(i + 1));
        kf_buffer_destroy(x[r]);
    }
}

static void all_reduce_f16_is_ncclFloat16(void **state)
{
    fx *f = *state;
    uint16_t a[2] = {kf_f16_from_double(1.5), kf_f16_from_double(-2)}, b[2] = {kf_f16_from_double(2.25),
                                                                                kf_f16_from_double(0.5)};
    kf_buffer *x[2] = {buf(f, 0, KF_S_F16, 2, a), buf(f, 1, KF_S_F16, 2, b)};
    assert_int_equal(kf_comm_all_reduce(f->comm, x, 2, KF_DISPATCH_ASYNC, &f->err), KF_OK);
    expect_group(nccl_log(), "AllReduce", "n2 t6");
    uint16_t out[2];
    assert_int_equal(kf_buffer_download(x[1], out, sizeof out, &f->err), KF_OK);
    assert_true(kf_f16_to_double(out[0]) == 3.75 && kf_f16_to_double(out[1]) == -1.5);
    kf_buffer_destroy(x[0]);
    kf_buffer_destroy(x[1]);
}

static void all_gather_moves_bytes_to_each_ranks_slot(void **state)
{
    fx *f = *state;
    uint32_t a[3] = {1, 2, 3}, b[3] = {7, 8, 9}, out[6];
    kf_buffer *s[2] = {buf(f, 0, KF_S_U32, 3, a), buf(f, 1, KF_S_U32, 3, b)};
    kf_buffer *g[2] = {buf(f, 0, KF_S_U32, 6, NULL), buf(f, 1, KF_S_U32, 6, NULL)};
    assert_int_equal(kf_comm_all_gather(f->comm, s, g, 3, KF_DISPATCH_SYNC, &f->err), KF_OK);
    expect_group(nccl_log(), "AllGather", "n12 t1");
    for (int r = 0; r < 2; r++) {
        assert_int_equal(kf_buffer_download(g[r], out, sizeof out, &f->err), KF_OK);
        uint32_t want[6] = {1, 2, 3, 7, 8, 9};
        assert_memory_equal(out, want, sizeof want);
        kf_buffer_destroy(s[r]);
        kf_buffer_destroy(g[r]);
    }
}

/* nccl-tests' measurement: n groups of one ncclAllReduce per rank, nothing else, timed by events. */
static void bench_bare_is_n_plain_nccl_groups(void **state)
{
    fx *f = *state;
    float a[4] = {1, 1, 1, 1}, out[4];
    kf_buffer *x[2] = {buf(f, 0, KF_S_F32, 4, a), buf(f, 1, KF_S_F32, 4, a)};
    double us = -1;
    assert_int_equal(kf_comm_bench_bare(f->comm, x, 4, 3, &us, &f->err), KF_OK);
    assert_true(us >= 0);
    const char *log = nccl_log();
    char one[400];
    snprintf(one, sizeof one, "%.*s", (int)(strstr(log, "GroupEnd;") - log) + 9, log);
    expect_group(one, "AllReduce", "n4 t7");
    int groups = 0;
    for (const char *p = log; (p = strstr(p, "GroupStart;AllReduce r0 n4 t7")); p++) groups++;
    assert_int_equal(groups, 3);
    assert_int_equal(kf_buffer_download(x[1], out, sizeof out, &f->err), KF_OK);
    assert_true(out[0] == 8.0f);   /* 1 doubled three times, in place */
    kf_comm *one_gpu;
    assert_int_equal(kf_comm_create(f->dev, 1, &one_gpu, &f->err), KF_OK);
    assert_int_equal(kf_comm_bench_bare(one_gpu, x, 4, 3, &us, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "no NCCL to time (one device)"));
    kf_comm_destroy(one_gpu);
    kf_buffer_destroy(x[0]);
    kf_buffer_destroy(x[1]);
}

static void one_gpu_needs_no_nccl(void **state)
{
    fx *f = *state;
    kf_comm *one;
    int before = nccl_inits();
    float a[4] = {1, 2, 3, 4}, out[4];
    kf_buffer *x = buf(f, 1, KF_S_F32, 4, a), *y = buf(f, 1, KF_S_F32, 4, NULL);
    assert_int_equal(kf_comm_create(&f->dev[1], 1, &one, &f->err), KF_OK);
    assert_int_equal(kf_comm_nccl_version(one), 0);
    assert_int_equal(kf_comm_all_reduce(one, &x, 4, KF_DISPATCH_SYNC, &f->err), KF_OK);
    assert_int_equal(kf_comm_all_gather(one, &x, &y, 4, KF_DISPATCH_SYNC, &f->err), KF_OK);
    assert_int_equal(kf_buffer_download(y, out, sizeof out, &f->err), KF_OK);
    assert_memory_equal(out, a, sizeof a);
    assert_int_equal(nccl_inits(), before);
    assert_string_equal(nccl_log(), "");
    kf_comm_destroy(one);
    kf_buffer_destroy(x);
    kf_buffer_destroy(y);
}

static void expect_device_error(fx *f, kf_status got, const char *call)
{
    assert_int_equal(got, KF_ERR_DEVICE);
    if (!strstr(f->err.msg, call) || !strstr(f->err.msg, "ncclSystemError (2)") ||
        !strstr(f->err.msg, "mock nccl: injected fault"))
        fail_msg("message '%s' does not name %s, its result and NCCL's last error", f->err.msg, call);
}

static void a_failing_nccl_call_is_an_error_naming_it_and_closes_the_group(void **state)
{
    fx *f = *state;
    float a[2] = {1, 2}, b[2] = {3, 4}, out[2];
    kf_buffer *x[2] = {buf(f, 0, KF_S_F32, 2, a), buf(f, 1, KF_S_F32, 2, b)};
    nccl_fail("ncclAllReduce", 2);   /* rank 1's call */
    expect_device_error(f, kf_comm_all_reduce(f->comm, x, 2, KF_DISPATCH_SYNC, &f->err), "ncclAllReduce failed");
    assert_int_equal(nccl_depth(), 0);
    nccl_fail("ncclGroupEnd", 1);
    expect_device_error(f, kf_comm_all_reduce(f->comm, x, 2, KF_DISPATCH_SYNC, &f->err), "ncclGroupEnd failed");
    assert_int_equal(kf_comm_all_reduce(f->comm, x, 2, KF_DISPATCH_SYNC, &f->err), KF_OK);   /* usable again */
    assert_int_equal(kf_buffer_download(x[0], out, sizeof out, &f->err), KF_OK);
    assert_true(out[0] == 4.0f && out[1] == 6.0f);
    kf_comm *c2;
    nccl_fail("ncclCommInitAll", 1);
    expect_device_error(f, kf_comm_create(f->dev, 2, &c2, &f->err), "ncclCommInitAll failed");
    assert_null(c2);
    assert_int_equal(nccl_live(), 2);   /* the fixture's only */
    kf_buffer_destroy(x[0]);
    kf_buffer_destroy(x[1]);
}

/* Recorded on both GPUs: NCCL's calls land in the captures (nothing runs);
 * a failing call while recording abandons both recordings, and the GPUs
 * work as before. */
static void a_collective_recorded_is_captured_and_a_failure_abandons_the_recordings(void **state)
{
    fx *f = *state;
    float a[2] = {1, 2}, b[2] = {3, 4}, out[2];
    kf_buffer *x[2] = {buf(f, 0, KF_S_F32, 2, a), buf(f, 1, KF_S_F32, 2, b)};
    kf_graph *g[2];
    for (int r = 0; r < 2; r++) assert_int_equal(kf_graph_begin(f->dev[r], &f->err), KF_OK);
    assert_int_equal(kf_comm_all_reduce(f->comm, x, 2, KF_DISPATCH_ASYNC, &f->err), KF_OK);
    assert_non_null(strstr(nccl_log(), "captured;"));
    for (int r = 0; r < 2; r++) {
        assert_int_equal(kf_graph_end(f->dev[r], &g[r], &f->err), KF_OK);
        assert_int_equal(kf_graph_size(g[r]), 1);
    }
    assert_int_equal(kf_buffer_download(x[0], out, sizeof out, &f->err), KF_OK);
    assert_true(out[0] == 1.0f);   /* recorded, not run */
    assert_int_equal(kf_comm_graph_launch(f->comm, g, KF_DISPATCH_SYNC, &f->err), KF_OK);
    for (int r = 0; r < 2; r++) kf_graph_destroy(g[r]);
    for (int r = 0; r < 2; r++) assert_int_equal(kf_graph_begin(f->dev[r], &f->err), KF_OK);
    nccl_fail("ncclAllReduce", 1);
    expect_device_error(f, kf_comm_all_reduce(f->comm, x, 2, KF_DISPATCH_ASYNC, &f->err), "ncclAllReduce failed");
    for (int r = 0; r < 2; r++) {
        assert_int_equal(kf_graph_end(f->dev[r], &g[r], &f->err), KF_ERR_USAGE);
        assert_non_null(strstr(f->err.msg, "a collective failed while recording"));
    }
    assert_int_equal(kf_comm_all_reduce(f->comm, x, 2, KF_DISPATCH_SYNC, &f->err), KF_OK);
    assert_int_equal(kf_buffer_download(x[1], out, sizeof out, &f->err), KF_OK);
    assert_true(out[0] == 4.0f && out[1] == 6.0f);
    kf_buffer_destroy(x[0]);
    kf_buffer_destroy(x[1]);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(all_reduce_is_one_nccl_call_per_rank_on_its_stream_in_one_group),
        T(all_reduce_f16_is_ncclFloat16),
        T(all_gather_moves_bytes_to_each_ranks_slot),
        T(bench_bare_is_n_plain_nccl_groups),
        T(one_gpu_needs_no_nccl),
        T(a_failing_nccl_call_is_an_error_naming_it_and_closes_the_group),
        T(a_collective_recorded_is_captured_and_a_failure_abandons_the_recordings),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
