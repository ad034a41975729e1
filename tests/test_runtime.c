/* Tests of the device interface on the CPU device (runtime/device.c +
 * runtime/cpu_device.c): buffers, views, transfers, pipelines, every
 * dispatch mode, the pre-sorted plan path, and every validation error,
 * each checked for the parameter or limit its message names. Kernels are
 * built as core IR by hand so these tests do not depend on the front end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "runtime_test_ir.h"

/* A fixture: CPU device, saxpy pipeline, x and y of N f32. */
enum { N = 1000 };
typedef struct {
    kf_device *dev;
    ir_saxpy ir;
    kf_pipeline *p;
    kf_buffer *x, *y;
    kf_error err;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &f->dev, &f->err), KF_OK);
    make_saxpy(&f->ir, 4);
    assert_int_equal(kf_pipeline_create(f->dev, NULL, &f->ir.k, &f->p, &f->err), KF_OK);
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_F32), N, &f->x, &f->err), KF_OK);
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_F32), N, &f->y, &f->err), KF_OK);
    float xs[N], ys[N];
    for (int i = 0; i < N; i++) xs[i] = (float)i, ys[i] = 1.0f;
    assert_int_equal(kf_buffer_upload(f->x, xs, sizeof xs, &f->err), KF_OK);
    assert_int_equal(kf_buffer_upload(f->y, ys, sizeof ys, &f->err), KF_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    kf_buffer_destroy(f->x);
    kf_buffer_destroy(f->y);
    kf_pipeline_destroy(f->p);
    kf_device_close(f->dev);
    kf_error_clear(&f->err);
    free(f);
    return 0;
}

static void args4(fx *f, kf_arg a[4], float alpha, uint32_t n)
{
    a[0] = (kf_arg){NULL, f32v(alpha)};
    a[1] = (kf_arg){.buf = f->x};
    a[2] = (kf_arg){.buf = f->y};
    a[3] = (kf_arg){NULL, u32v(n)};
}

/* Asserts a dispatch fails with KF_ERR_USAGE and a message containing each needle. */
static void expect_rejected(fx *f, const kf_arg *a, uint32_t n, const kf_launch *l, const char *n1, const char *n2)
{
    kf_plan *plan = (kf_plan *)1;
    kf_error_clear(&f->err);
    assert_int_equal(kf_plan_create(f->p, a, n, l, &plan, &f->err), KF_ERR_USAGE);
    assert_null(plan);
    if (!strstr(f->err.msg, n1) || (n2 && !strstr(f->err.msg, n2)))
        fail_msg("message '%s' lacks '%s' / '%s'", f->err.msg, n1, n2 ? n2 : "");
    /* kf_dispatch rejects identically and launches nothing: y is untouched. */
    kf_error e2 = {0};
    assert_int_equal(kf_dispatch(f->p, a, n, l, KF_DISPATCH_SYNC, NULL, &e2), KF_ERR_USAGE);
    assert_string_equal(e2.msg, f->err.msg);
    float y0;
    assert_int_equal(kf_buffer_download(f->y, &y0, sizeof y0, &e2), KF_OK);
    assert_true(y0 == 1.0f);
}

/* ---- devices and buffers --------------------------------------------------- */
static void cpu_device_opens_with_cuda_like_limits(void **state)
{
    fx *f = *state;
    kf_device_props dp;
    kf_device_props_get(f->dev, &dp);
    assert_string_equal(kf_device_name(f->dev), "cpu (kforge interpreter)");
    assert_int_equal(dp.backend, KF_BACKEND_CPU);
    assert_int_equal(dp.max_threads_per_block, 1024);
    assert_int_equal(dp.max_block[2], 64);
    assert_int_equal(dp.max_grid[1], 65535);
    assert_int_equal(kf_device_sync(f->dev, &f->err), KF_OK);
}

static void unknown_backend_is_usage_error(void **state)
{
    kf_device *d = (kf_device *)1;
    kf_error e = {0};
    assert_int_equal(kf_device_open((kf_backend)7, 0, &d, &e), KF_ERR_USAGE);
    assert_null(d);
    assert_non_null(strstr(e.msg, "unknown backend"));
}

static void buffer_is_zero_filled_and_round_trips(void **state)
{
    fx *f = *state;
    kf_buffer *b;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_vector(KF_S_F16, 8), 5, &b, &f->err), KF_OK);
    assert_int_equal(kf_buffer_bytes(b), 80);
    assert_int_equal(kf_buffer_elem(b).lanes, 8);
    unsigned char got[80], src[80];
    assert_int_equal(kf_buffer_download(b, got, sizeof got, &f->err), KF_OK);
    for (int i = 0; i < 80; i++) assert_int_equal(got[i], 0), src[i] = (unsigned char)(i * 7);
    assert_int_equal(kf_buffer_upload(b, src, sizeof src, &f->err), KF_OK);
    assert_int_equal(kf_buffer_download(b, got, sizeof got, &f->err), KF_OK);
    assert_memory_equal(got, src, 80);
    kf_buffer_destroy(b);
}

static void buffer_of_buffer_type_is_rejected(void **state)
{
    fx *f = *state;
    kf_buffer *b = (kf_buffer *)1;
    assert_int_equal(kf_buffer_create(f->dev, buf_t(KF_S_F32, 1, false), 4, &b, &f->err), KF_ERR_USAGE);
    assert_null(b);
    assert_non_null(strstr(f->err.msg, "scalar or vector"));
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_UFLOAT), 4, &b, &f->err), KF_ERR_USAGE);
}

static void buffer_count_overflow_is_rejected(void **state)
{
    fx *f = *state;
    kf_buffer *b;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_F64), SIZE_MAX / 4, &b, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "overflows"));
}

static void upload_larger_than_buffer_names_both_sizes(void **state)
{
    fx *f = *state;
    char big[4004] = {0};
    assert_int_equal(kf_buffer_upload(f->x, big, sizeof big, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "upload of 4004 bytes"));
    assert_non_null(strstr(f->err.msg, "4000 bytes"));
    assert_int_equal(kf_buffer_download(f->x, big, sizeof big, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "download of 4004 bytes"));
}

static void view_shares_storage_with_offset(void **state)
{
    fx *f = *state;
    kf_buffer *v;
    assert_int_equal(kf_buffer_view(f->x, 10, 5, &v, &f->err), KF_OK);
    assert_int_equal(kf_buffer_bytes(v), 20);
    float got[5], put[5] = {-1, -2, -3, -4, -5};
    assert_int_equal(kf_buffer_download(v, got, sizeof got, &f->err), KF_OK);
    assert_true(got[0] == 10.0f && got[4] == 14.0f);
    assert_int_equal(kf_buffer_upload(v, put, sizeof put, &f->err), KF_OK);
    float all[N];
    assert_int_equal(kf_buffer_download(f->x, all, sizeof all, &f->err), KF_OK);
    assert_true(all[9] == 9.0f && all[10] == -1.0f && all[14] == -5.0f && all[15] == 15.0f);
    kf_buffer_destroy(v);
}

static void view_outside_parent_is_rejected(void **state)
{
    fx *f = *state;
    kf_buffer *v = (kf_buffer *)1;
    assert_int_equal(kf_buffer_view(f->x, 990, 11, &v, &f->err), KF_ERR_USAGE);
    assert_null(v);
    assert_non_null(strstr(f->err.msg, "view of 11 elements at offset 990 is outside the buffer of 1000 elements"));
    assert_int_equal(kf_buffer_view(f->x, SIZE_MAX, 2, &v, &f->err), KF_ERR_USAGE);
}

static void view_keeps_storage_alive_after_parent_destroy(void **state)
{
    fx *f = *state;
    kf_buffer *b, *v, *vv;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_I32), 16, &b, &f->err), KF_OK);
    int32_t src[16];
    for (int i = 0; i < 16; i++) src[i] = i * 3;
    assert_int_equal(kf_buffer_upload(b, src, sizeof src, &f->err), KF_OK);
    assert_int_equal(kf_buffer_view(b, 4, 8, &v, &f->err), KF_OK);
    assert_int_equal(kf_buffer_view(v, 2, 2, &vv, &f->err), KF_OK);
    kf_buffer_destroy(b);
    kf_buffer_destroy(v);
    int32_t got[2];
    assert_int_equal(kf_buffer_download(vv, got, sizeof got, &f->err), KF_OK);
    assert_int_equal(got[0], 18);
    assert_int_equal(got[1], 21);
    kf_buffer_destroy(vv);
}

static void readonly_flag_is_inherited_by_views(void **state)
{
    fx *f = *state;
    kf_buffer *v;
    assert_false(kf_buffer_readonly(f->y));
    kf_buffer_set_readonly(f->y, true);
    assert_int_equal(kf_buffer_view(f->y, 0, 4, &v, &f->err), KF_OK);
    assert_true(kf_buffer_readonly(v));
    kf_buffer_set_readonly(f->y, false);
    kf_buffer_set_readonly(v, false);
    assert_false(kf_buffer_readonly(v));
    kf_buffer_destroy(v);
}

/* ---- dispatch --------------------------------------------------------------- */
static void check_saxpy(fx *f, float alpha, uint32_t n)
{
    float y[N];
    assert_int_equal(kf_buffer_download(f->y, y, sizeof y, &f->err), KF_OK);
    for (uint32_t i = 0; i < N; i++) {
        float want = i < n ? alpha * (float)i + 1.0f : 1.0f;
        if (y[i] != want) fail_msg("y[%u] = %g, want %g", i, y[i], want);
    }
}

static void sync_dispatch_with_count_runs_saxpy(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 2.0f, 777);
    kf_launch l = {.count = 777};
    assert_int_equal(kf_dispatch(f->p, a, 4, &l, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    check_saxpy(f, 2.0f, 777);
}

static void async_dispatch_then_sync_runs_saxpy(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, -3.0f, N);
    kf_launch l = {.count = N};
    assert_int_equal(kf_dispatch(f->p, a, 4, &l, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_device_sync(f->dev, &f->err), KF_OK);
    check_saxpy(f, -3.0f, N);
}

static void explicit_launch_overrides_block_and_grid(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 0.5f, N);
    /* 3 blocks of 64 threads cover only the first 192 elements. */
    kf_launch l = {.grid = {3, 1, 1}, .block = {64, 1, 1}};
    assert_int_equal(kf_dispatch(f->p, a, 4, &l, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    check_saxpy(f, 0.5f, 192);
}

static void timed_dispatch_reports_time(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.count = N};
    float ms = -1;
    assert_int_equal(kf_dispatch(f->p, a, 4, &l, KF_DISPATCH_TIMED, &ms, &f->err), KF_OK);
    assert_true(ms >= 0.0f);
    check_saxpy(f, 1.0f, N);
}

static void timed_dispatch_without_ms_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.count = N};
    assert_int_equal(kf_dispatch(f->p, a, 4, &l, KF_DISPATCH_TIMED, NULL, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "ms is NULL"));
}

static void plan_launch_allocates_nothing(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.count = N};
    kf_plan *plan;
    assert_int_equal(kf_plan_create(f->p, a, 4, &l, &plan, &f->err), KF_OK);
    uint64_t before = kf_rt_alloc_count();
    for (int r = 0; r < 5; r++) assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_rt_alloc_count(), before);
    kf_plan_destroy(plan);
    float y[N];
    assert_int_equal(kf_buffer_download(f->y, y, sizeof y, &f->err), KF_OK);
    assert_true(y[10] == 51.0f && y[999] == 5.0f * 999.0f + 1.0f);
}

static void dispatch_allocates_through_the_counted_function(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.count = N};
    uint64_t before = kf_rt_alloc_count();
    assert_int_equal(kf_dispatch(f->p, a, 4, &l, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_true(kf_rt_alloc_count() > before);   /* the counter sees runtime allocations */
}

static void buffer_copy_moves_a_prefix_and_checks_sizes(void **state)
{
    fx *f = *state;
    float ms = -1;
    assert_int_equal(kf_buffer_copy(f->y, f->x, 40, KF_DISPATCH_TIMED, &ms, &f->err), KF_OK);
    assert_true(ms >= 0);
    float y[N];
    assert_int_equal(kf_buffer_download(f->y, y, sizeof y, &f->err), KF_OK);
    assert_true(y[9] == 9.0f && y[10] == 1.0f);
    assert_int_equal(kf_buffer_copy(f->y, f->x, 4004, KF_DISPATCH_SYNC, NULL, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "copy of 4004 bytes does not fit (source 4000 bytes, destination 4000)"));
    assert_int_equal(kf_buffer_copy(f->y, f->x, 4, KF_DISPATCH_TIMED, NULL, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "ms is NULL"));
    kf_device *d2;
    kf_buffer *b2;
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &d2, &f->err), KF_OK);
    assert_int_equal(kf_buffer_create(d2, kf_type_scalar(KF_S_F32), 4, &b2, &f->err), KF_OK);
    assert_int_equal(kf_buffer_copy(b2, f->x, 4, KF_DISPATCH_SYNC, NULL, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "different devices"));
    kf_buffer_destroy(b2);
    kf_device_close(d2);
}

static void bare_launch_reference_needs_a_gpu(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.count = N};
    kf_plan *plan;
    assert_int_equal(kf_plan_create(f->p, a, 4, &l, &plan, &f->err), KF_OK);
    double us;
    assert_int_equal(kf_plan_bench_bare(plan, 10, &us, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "needs a CUDA device, not cpu (kforge interpreter)"));
    kf_plan_destroy(plan);
}

static void raw_kernel_is_refused_on_cpu(void **state)
{
    fx *f = *state;
    kf_raw_kernel rk = {.kind = KF_SRC_CUDA, .source = "extern \"C\" __global__ void k(){}", .entry = "k"};
    kf_pipeline *p = (kf_pipeline *)1;
    assert_int_equal(kf_pipeline_create_raw(f->dev, &rk, &p, &f->err), KF_ERR_USAGE);
    assert_null(p);
    assert_non_null(strstr(f->err.msg, "cannot run raw CUDA-C kernels"));
    rk.entry = NULL;
    assert_int_equal(kf_pipeline_create_raw(f->dev, &rk, &p, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "entry point"));
}

/* A .kf kernel whose grid comes from its scalar arguments. */
static const char *fill_kf =
    "@schedule(block = 64, grid = cdiv(n, 64))\n"
    "kernel fill(y: &mut [u32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { y[i] = i * 3; }\n"
    "}\n";

static void schedule_grid_comes_from_scalar_arguments(void **state)
{
    fx *f = *state;
    kf_module *m;
    assert_int_equal(kf_compile("fill.kf", fill_kf, strlen(fill_kf), NULL, &m), KF_OK);
    kf_pipeline *p;
    assert_int_equal(kf_pipeline_create(f->dev, m, &m->kernels[0], &p, &f->err), KF_OK);
    kf_buffer *y;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_U32), 200, &y, &f->err), KF_OK);
    kf_arg a[2] = {{.buf = y}, {.value = {.type = kf_type_scalar(KF_S_U32), .lane = {130}}}};
    assert_int_equal(kf_dispatch(p, a, 2, NULL, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    uint32_t got[200];
    assert_int_equal(kf_buffer_download(y, got, sizeof got, &f->err), KF_OK);
    for (uint32_t i = 0; i < 200; i++) assert_int_equal(got[i], i < 130 ? i * 3 : 0);
    /* n = 0 makes an empty grid: rejected, naming the expression, nothing run. */
    memset(got, 0, sizeof got);
    assert_int_equal(kf_buffer_upload(y, got, sizeof got, &f->err), KF_OK);
    a[1].value.lane[0] = 0;
    assert_int_equal(kf_dispatch(p, a, 2, NULL, KF_DISPATCH_SYNC, NULL, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "grid.x = cdiv(n, 64)"));
    /* An explicit grid overrides the schedule. */
    kf_launch l = {.grid = {1, 1, 1}};
    a[1].value.lane[0] = 200;
    assert_int_equal(kf_dispatch(p, a, 2, &l, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_buffer_download(y, got, sizeof got, &f->err), KF_OK);
    assert_int_equal(got[63], 189);
    assert_int_equal(got[64], 0);
    kf_buffer_destroy(y);
    kf_pipeline_destroy(p);
    kf_module_free(m);
}

static void interpreter_fault_is_a_runtime_error(void **state)
{
    fx *f = *state;
    kf_module *m;
    assert_int_equal(kf_compile("fill.kf", fill_kf, strlen(fill_kf), NULL, &m), KF_OK);
    kf_pipeline *p;
    assert_int_equal(kf_pipeline_create(f->dev, m, &m->kernels[0], &p, &f->err), KF_OK);
    kf_buffer *y;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_U32), 10, &y, &f->err), KF_OK);
    kf_arg a[2] = {{.buf = y}, {.value = {.type = kf_type_scalar(KF_S_U32), .lane = {11}}}};
    assert_int_equal(kf_dispatch(p, a, 2, NULL, KF_DISPATCH_SYNC, NULL, &f->err), KF_ERR_RUNTIME);
    assert_non_null(strstr(f->err.msg, "fill.kf:4"));
    kf_buffer_destroy(y);
    kf_pipeline_destroy(p);
    kf_module_free(m);
}

/* kf_pipeline_create_module on the CPU: one pipeline per kernel, in module
 * order, each running its own kernel. */
static void module_pipelines_run_their_own_kernels_on_cpu(void **state)
{
    fx *f = *state;
    static const char *two =
        "@schedule(block = 64, grid = cdiv(n, 64))\n"
        "kernel fill(y: &mut [u32], n: u32) { let i = global_id.x; if i < n { y[i] = i * 3; } }\n"
        "@schedule(block = 64, grid = cdiv(n, 64))\n"
        "kernel neg(y: &mut [u32], n: u32) { let i = global_id.x; if i < n { y[i] = 0 - y[i]; } }\n";
    kf_module *m;
    assert_int_equal(kf_compile("two.kf", two, strlen(two), NULL, &m), KF_OK);
    kf_pipeline *ps[2];
    assert_int_equal(kf_pipeline_create_module(f->dev, m, ps, &f->err), KF_OK);
    kf_buffer *y;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_U32), 100, &y, &f->err), KF_OK);
    kf_arg a[2] = {{.buf = y}, {.value = {.type = kf_type_scalar(KF_S_U32), .lane = {100}}}};
    assert_int_equal(kf_dispatch(ps[0], a, 2, NULL, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_dispatch(ps[1], a, 2, NULL, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    uint32_t got[100];
    assert_int_equal(kf_buffer_download(y, got, sizeof got, &f->err), KF_OK);
    for (uint32_t i = 0; i < 100; i++) assert_int_equal(got[i], 0u - i * 3);
    kf_buffer_destroy(y);
    kf_pipeline_destroy(ps[1]);
    kf_pipeline_destroy(ps[0]);
    kf_module_free(m);
}

/* ---- validation: every bad input names the parameter or limit ---------------- */
static void wrong_argument_count_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.count = N};
    expect_rejected(f, a, 3, &l, "kernel 'saxpy' takes 4 arguments, got 3", NULL);
    expect_rejected(f, NULL, 4, &l, "the argument array is NULL with 4 arguments", NULL);
}

static void value_for_buffer_parameter_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    a[1] = (kf_arg){NULL, f32v(1)};
    kf_launch l = {.count = N};
    expect_rejected(f, a, 4, &l, "argument 1 'x' of 'saxpy' is a buffer &[f32]", "pass a buffer");
}

static void buffer_for_value_parameter_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    a[3] = (kf_arg){.buf = f->x};
    kf_launch l = {.count = N};
    expect_rejected(f, a, 4, &l, "argument 3 'n' of 'saxpy' is a value of type u32", "pass a value");
}

static void buffer_element_type_mismatch_is_rejected(void **state)
{
    fx *f = *state;
    kf_buffer *h;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_F16), N, &h, &f->err), KF_OK);
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    a[1].buf = h;
    kf_launch l = {.count = N};
    expect_rejected(f, a, 4, &l, "argument 1 'x' of 'saxpy' is &[f32] but the buffer holds f16 elements", NULL);
    kf_buffer_destroy(h);
    kf_buffer *v4;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_vector(KF_S_F32, 4), N, &v4, &f->err), KF_OK);
    a[1].buf = v4;
    expect_rejected(f, a, 4, &l, "buffer holds f32x4 elements", NULL);
    kf_buffer_destroy(v4);
}

static void scalar_value_type_mismatch_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    a[3].value.type = kf_type_scalar(KF_S_I32);
    kf_launch l = {.count = N};
    expect_rejected(f, a, 4, &l, "argument 3 'n' of 'saxpy' has type u32 but the value given is i32", NULL);
    a[3] = (kf_arg){NULL, u32v(N)};
    a[0].value.type = kf_type_vector(KF_S_F32, 2);
    expect_rejected(f, a, 4, &l, "argument 0 'a' of 'saxpy' has type f32 but the value given is f32x2", NULL);
}

static void readonly_buffer_for_mut_parameter_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.count = N};
    kf_buffer_set_readonly(f->y, true);
    expect_rejected(f, a, 4, &l, "argument 2 'y' of 'saxpy' is &mut [f32]", "read-only");
    kf_buffer *v;
    assert_int_equal(kf_buffer_view(f->y, 0, N, &v, &f->err), KF_OK);
    a[2].buf = v;
    expect_rejected(f, a, 4, &l, "argument 2 'y'", "read-only");
    kf_buffer_destroy(v);
    kf_buffer_set_readonly(f->y, false);
    /* A read-only buffer is fine for a read-only parameter. */
    kf_buffer_set_readonly(f->x, true);
    a[2].buf = f->y;
    kf_plan *plan;
    assert_int_equal(kf_plan_create(f->p, a, 4, &l, &plan, &f->err), KF_OK);
    kf_plan_destroy(plan);
}

static void buffer_of_other_device_is_rejected(void **state)
{
    fx *f = *state;
    kf_device *d2;
    kf_buffer *x2;
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &d2, &f->err), KF_OK);
    assert_int_equal(kf_buffer_create(d2, kf_type_scalar(KF_S_F32), N, &x2, &f->err), KF_OK);
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    a[1].buf = x2;
    kf_launch l = {.count = N};
    expect_rejected(f, a, 4, &l, "argument 1 'x' of 'saxpy': the buffer belongs to another device", NULL);
    kf_buffer_destroy(x2);
    kf_device_close(d2);
}

static void misaligned_view_is_rejected(void **state)
{
    fx *f = *state;
    kf_pipeline *p16;
    ir_saxpy ir;
    make_saxpy(&ir, 16);   /* the kernel reads x as f32x4 somewhere */
    assert_int_equal(kf_pipeline_create(f->dev, NULL, &ir.k, &p16, &f->err), KF_OK);
    kf_buffer *v;
    assert_int_equal(kf_buffer_view(f->x, 1, 100, &v, &f->err), KF_OK);
    kf_arg a[4];
    args4(f, a, 1.0f, 100);
    a[1].buf = v;
    kf_launch l = {.count = 100};
    kf_plan *plan;
    assert_int_equal(kf_plan_create(p16, a, 4, &l, &plan, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "argument 1 'x' of 'saxpy': the view starts at byte offset 4, not aligned to 16 bytes"));
    assert_non_null(strstr(f->err.msg, "multiple of 4 elements"));
    kf_buffer_destroy(v);
    assert_int_equal(kf_buffer_view(f->x, 4, 100, &v, &f->err), KF_OK);
    a[1].buf = v;
    assert_int_equal(kf_plan_create(p16, a, 4, &l, &plan, &f->err), KF_OK);
    kf_plan_destroy(plan);
    kf_buffer_destroy(v);
    kf_pipeline_destroy(p16);
}

static void overlapping_readonly_and_writable_views_are_rejected(void **state)
{
    fx *f = *state;
    kf_buffer *vx, *vy;
    assert_int_equal(kf_buffer_view(f->x, 0, 500, &vx, &f->err), KF_OK);
    assert_int_equal(kf_buffer_view(f->x, 499, 500, &vy, &f->err), KF_OK);
    kf_arg a[4];
    args4(f, a, 1.0f, 500);
    a[1].buf = vx;
    a[2].buf = vy;
    kf_launch l = {.count = 500};
    expect_rejected(f, a, 4, &l, "arguments 1 'x' (read-only) and 2 'y' (writable) of 'saxpy' overlap",
                    "bytes [0, 2000) and [1996, 3996)");
    /* Adjacent, disjoint views of one buffer are fine. */
    kf_buffer_destroy(vy);
    assert_int_equal(kf_buffer_view(f->x, 500, 500, &vy, &f->err), KF_OK);
    a[2].buf = vy;
    kf_plan *plan;
    assert_int_equal(kf_plan_create(f->p, a, 4, &l, &plan, &f->err), KF_OK);
    kf_plan_destroy(plan);
    /* The same buffer for x and y aliases entirely. */
    a[1].buf = a[2].buf = f->y;
    expect_rejected(f, a, 4, &l, "(read-only) and 2 'y' (writable)", "overlap");
    kf_buffer_destroy(vx);
    kf_buffer_destroy(vy);
}

static void block_over_thread_limit_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.grid = {1, 1, 1}, .block = {64, 32, 1}};
    expect_rejected(f, a, 4, &l, "block (64, 32, 1) has 2048 threads", "max_threads_per_block = 1024");
    kf_launch l2 = {.grid = {1, 1, 1}, .block = {1, 1, 65}};
    expect_rejected(f, a, 4, &l2, "block.z = 65 exceeds the device limit max_block_dim.z = 64", NULL);
}

static void block_over_the_schedule_launch_bound_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.grid = {1, 1, 1}, .block = {512, 1, 1}};
    expect_rejected(f, a, 4, &l, "block (512, 1, 1) has 512 threads, more than kernel 'saxpy' can run per block (256",
                    "launch bound");
}

static void grid_over_limit_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.grid = {1, 65536, 1}, .block = {32, 1, 1}};
    expect_rejected(f, a, 4, &l, "grid.y = 65536 exceeds the device limit max_grid_dim.y = 65535", NULL);
}

static void dynamic_shared_over_limit_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.grid = {4, 1, 1}, .block = {256, 1, 1}, .dyn_shared = 232449};
    expect_rejected(f, a, 4, &l, "232449 bytes of dynamic shared memory (the launch's) + 0 static",
                    "max_shared_per_block = 232448 bytes (cpu (kforge interpreter)): ask for at most 232448");
}

static void static_shared_counts_against_the_limit(void **state)
{
    fx *f = *state;
    ir_saxpy ir;
    make_saxpy(&ir, 4);
    kf_type arr = {KF_TK_ARRAY, KF_S_F32, 1, KF_TF_SHARED, 8192};
    ir.arrays[0] = (kf_ir_array){"tile", arr, {0}};
    ir.k.narrays = 1;
    kf_pipeline *p;
    assert_int_equal(kf_pipeline_create(f->dev, NULL, &ir.k, &p, &f->err), KF_OK);
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    kf_launch l = {.count = N, .dyn_shared = 232448 - 32768 + 1};
    kf_plan *plan;
    assert_int_equal(kf_plan_create(p, a, 4, &l, &plan, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "199681 bytes of dynamic shared memory (the launch's) + 32768 static"));
    assert_non_null(strstr(f->err.msg, "ask for at most 199680"));
    l.dyn_shared = 232448 - 32768;
    assert_int_equal(kf_plan_create(p, a, 4, &l, &plan, &f->err), KF_OK);
    kf_plan_destroy(plan);
    kf_pipeline_destroy(p);
}

static void missing_count_without_grid_is_rejected(void **state)
{
    fx *f = *state;
    kf_arg a[4];
    args4(f, a, 1.0f, N);
    expect_rejected(f, a, 4, NULL, "kernel 'saxpy' has no grid expression", "element count");
}

static void pipeline_without_kernel_is_rejected(void **state)
{
    fx *f = *state;
    kf_pipeline *p = (kf_pipeline *)1;
    assert_int_equal(kf_pipeline_create(f->dev, NULL, NULL, &p, &f->err), KF_ERR_USAGE);
    assert_null(p);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(cpu_device_opens_with_cuda_like_limits),
        cmocka_unit_test(unknown_backend_is_usage_error),
        T(buffer_is_zero_filled_and_round_trips),
        T(buffer_of_buffer_type_is_rejected),
        T(buffer_count_overflow_is_rejected),
        T(upload_larger_than_buffer_names_both_sizes),
        T(view_shares_storage_with_offset),
        T(view_outside_parent_is_rejected),
        T(view_keeps_storage_alive_after_parent_destroy),
        T(readonly_flag_is_inherited_by_views),
        T(sync_dispatch_with_count_runs_saxpy),
        T(async_dispatch_then_sync_runs_saxpy),
        T(explicit_launch_overrides_block_and_grid),
        T(timed_dispatch_reports_time),
        T(timed_dispatch_without_ms_is_rejected),
        T(plan_launch_allocates_nothing),
        T(dispatch_allocates_through_the_counted_function),
        T(buffer_copy_moves_a_prefix_and_checks_sizes),
        T(bare_launch_reference_needs_a_gpu),
        T(raw_kernel_is_refused_on_cpu),
        T(schedule_grid_comes_from_scalar_arguments),
        T(interpreter_fault_is_a_runtime_error),
        T(module_pipelines_run_their_own_kernels_on_cpu),
        T(wrong_argument_count_is_rejected),
        T(value_for_buffer_parameter_is_rejected),
        T(buffer_for_value_parameter_is_rejected),
        T(buffer_element_type_mismatch_is_rejected),
        T(scalar_value_type_mismatch_is_rejected),
        T(readonly_buffer_for_mut_parameter_is_rejected),
        T(buffer_of_other_device_is_rejected),
        T(misaligned_view_is_rejected),
        T(overlapping_readonly_and_writable_views_are_rejected),
        T(block_over_thread_limit_is_rejected),
        T(block_over_the_schedule_launch_bound_is_rejected),
        T(grid_over_limit_is_rejected),
        T(dynamic_shared_over_limit_is_rejected),
        T(static_shared_counts_against_the_limit),
        T(missing_count_without_grid_is_rejected),
        T(pipeline_without_kernel_is_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
