/* Every runtime capability on a real GPU (DESIGN.md section 3): a .kf
 * kernel through CUDA-C + NVRTC and through kforge's PTX, raw CUDA-C,
 * cached builds (memory and disk), loaded PTX, sync / async / explicit 3-D
 * with dynamic shared memory / pre-sorted / timed dispatch, timed regions
 * of several launches, registers and local bytes, device copies,
 * validation against device limits, graphs with re-targeted plans (and
 * their host cost per kernel), programmatic dependent launch (a chain of
 * kernels each reading the last one's output, with PDL on and off, async
 * and as a graph with updated nodes), and a kernel fault reported as an error. Results are compared with the CPU device. Without a GPU each test
 * prints "skipped: <reason>" and is reported skipped by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "device.h"
#include "nvrtc.h"

static kf_device *gpu, *gpu_ptx, *cpu;
static char why[1200];
static char cache_dir[64];

static void need_gpu(void)
{
    if (gpu) return;
    printf("skipped: %s\n", why);
    skip();
}

static int group_setup(void **state)
{
    snprintf(cache_dir, sizeof cache_dir, "/tmp/kf-gpu-cache-XXXXXX");
    if (mkdtemp(cache_dir)) setenv("KFORGE_CACHE_DIR", cache_dir, 1);
    kf_error e = {0};
    if (kf_device_open(KF_BACKEND_CUDA, 0, &gpu, &e) != KF_OK) {
        snprintf(why, sizeof why, "no GPU: %s", e.msg);
        gpu = NULL;
    } else if (kf_device_open(KF_BACKEND_PTX, 0, &gpu_ptx, &e) != KF_OK) {
        snprintf(why, sizeof why, "PTX device failed to open: %s", e.msg);
        kf_device_close(gpu);
        gpu = NULL;
    }
    kf_device_open(KF_BACKEND_CPU, 0, &cpu, &e);
    return 0;
}

static int group_teardown(void **state)
{
    kf_device_close(gpu);
    kf_device_close(gpu_ptx);
    kf_device_close(cpu);
    kf_cache_clear(true, NULL, NULL);
    rmdir(cache_dir);
    return 0;
}

static kf_type buf_t(kf_scalar s, bool mut) { return (kf_type){KF_TK_BUFFER, (uint8_t)s, 1, mut ? KF_TF_MUT : 0, 0}; }

static kf_value f32v(float f)
{
    kf_value v = {.type = kf_type_scalar(KF_S_F32)};
    memcpy(&v.lane[0], &f, 4);
    return v;
}

static kf_value u32v(uint32_t u)
{
    kf_value v = {.type = kf_type_scalar(KF_S_U32)};
    v.lane[0] = u;
    return v;
}

/* ---- raw CUDA-C saxpy ------------------------------------------------------ */
static const char *saxpy_cu =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

static const kf_ir_param saxpy_params[4] = {
    {"a", {KF_TK_SCALAR, KF_S_F32, 1, 0, 0}, {0}, 0},
    {"x", {KF_TK_BUFFER, KF_S_F32, 1, 0, 0}, {0}, 4},
    {"y", {KF_TK_BUFFER, KF_S_F32, 1, KF_TF_MUT, 0}, {0}, 4},
    {"n", {KF_TK_SCALAR, KF_S_U32, 1, 0, 0}, {0}, 0},
};

static kf_pipeline *raw_saxpy(kf_device *d, kf_src_kind kind, const char *src, bool uncached)
{
    kf_raw_kernel rk = {kind, src, "saxpy", saxpy_params, 4, {256, 1, 1}, 0, uncached};
    kf_pipeline *p = NULL;
    kf_error e = {0};
    if (kf_pipeline_create_raw(d, &rk, &p, &e) != KF_OK) fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
    kf_error_clear(&e);
    return p;
}

enum { N = 1 << 20 };

typedef struct {
    kf_buffer *x, *y;
    float *hx, *hy;
} vecs;

static vecs make_vecs(kf_device *d, uint32_t n)
{
    vecs v = {0};
    kf_error e = {0};
    v.hx = malloc(n * sizeof(float));
    v.hy = malloc(n * sizeof(float));
    for (uint32_t i = 0; i < n; i++) v.hx[i] = (float)(i % 1000), v.hy[i] = 1.0f;
    assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_F32), n, &v.x, &e), KF_OK);
    assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_F32), n, &v.y, &e), KF_OK);
    assert_int_equal(kf_buffer_upload(v.x, v.hx, n * sizeof(float), &e), KF_OK);
    assert_int_equal(kf_buffer_upload(v.y, v.hy, n * sizeof(float), &e), KF_OK);
    return v;
}

static void free_vecs(vecs *v)
{
    kf_buffer_destroy(v->x);
    kf_buffer_destroy(v->y);
    free(v->hx);
    free(v->hy);
}

/* y must equal 1 + times * a * x (exact: small integers). */
static void check_y(vecs *v, uint32_t n, float a, int times)
{
    kf_error e = {0};
    assert_int_equal(kf_buffer_download(v->y, v->hy, n * sizeof(float), &e), KF_OK);
    for (uint32_t i = 0; i < n; i++) {
        float want = 1.0f + (float)times * a * v->hx[i];
        if (v->hy[i] != want) fail_msg("y[%u] = %g, want %g", i, v->hy[i], want);
    }
}

static void set_args(kf_arg a[4], float alpha, vecs *v, uint32_t n)
{
    a[0] = (kf_arg){.value = f32v(alpha)};
    a[1] = (kf_arg){.buf = v->x};
    a[2] = (kf_arg){.buf = v->y};
    a[3] = (kf_arg){.value = u32v(n)};
}

static void gpu_device_reports_properties(void **state)
{
    need_gpu();
    kf_device_props dp;
    kf_device_props_get(gpu, &dp);
    assert_true(strlen(dp.name) > 0);
    assert_true(dp.sm_count > 0);
    assert_true(dp.cc_major >= 8);
    assert_int_equal(dp.max_threads_per_block, 1024);
    assert_true(dp.shared_per_block_optin >= dp.shared_per_block);
    assert_true(dp.driver_version >= 12000);
    assert_true(dp.total_mem > ((uint64_t)1 << 30));
    int n, v;
    kf_error e = {0};
    assert_int_equal(kf_cuda_device_count(&n, &v, &e), KF_OK);
    assert_true(n >= 1);
    assert_int_equal(v, dp.driver_version);
}

static void raw_cuda_c_kernel_runs_sync(void **state)
{
    need_gpu();
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, true);
    assert_int_equal(kf_pipeline_origin(p), KF_FROM_BUILD);
    vecs v = make_vecs(gpu, N);
    kf_arg a[4];
    set_args(a, 2.0f, &v, N);
    kf_launch l = {.count = N};
    kf_error e = {0};
    assert_int_equal(kf_dispatch(p, a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    check_y(&v, N, 2.0f, 1);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

static void compiled_ptx_loads_without_nvrtc(void **state)
{
    need_gpu();
    char *ptx = NULL;
    kf_error e = {0};
    kf_device_props dp;
    kf_device_props_get(gpu, &dp);
    assert_int_equal(kf_nvrtc_compile(saxpy_cu, "saxpy.cu", dp.arch, false, &ptx, NULL, &e), KF_OK);
    kf_pipeline *p = raw_saxpy(gpu_ptx, KF_SRC_PTX, ptx, true);
    free(ptx);
    vecs v = make_vecs(gpu_ptx, N);
    kf_arg a[4];
    set_args(a, 3.0f, &v, N);
    kf_launch l = {.count = N};
    assert_int_equal(kf_dispatch(p, a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    check_y(&v, N, 3.0f, 1);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

static void cached_build_hits_memory_then_disk(void **state)
{
    need_gpu();
    kf_cache_clear(true, NULL, NULL);
    kf_pipeline *p1 = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    assert_int_equal(kf_pipeline_origin(p1), KF_FROM_BUILD);
    kf_pipeline *p2 = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    assert_int_equal(kf_pipeline_origin(p2), KF_FROM_MEMORY);
    kf_cache_clear(false, NULL, NULL);
    kf_pipeline *p3 = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    assert_int_equal(kf_pipeline_origin(p3), KF_FROM_DISK);
    assert_null(kf_pipeline_warning(p3));
    /* The disk-loaded cubin computes the same thing. */
    vecs v = make_vecs(gpu, N);
    kf_arg a[4];
    set_args(a, -1.0f, &v, N);
    kf_launch l = {.count = N};
    kf_error e = {0};
    assert_int_equal(kf_dispatch(p3, a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    check_y(&v, N, -1.0f, 1);
    free_vecs(&v);
    kf_pipeline_destroy(p1);
    kf_pipeline_destroy(p2);
    kf_pipeline_destroy(p3);
}

static void async_chain_is_ordered_until_sync(void **state)
{
    need_gpu();
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    vecs v = make_vecs(gpu, N);
    kf_arg a[4];
    set_args(a, 1.0f, &v, N);
    kf_launch l = {.count = N};
    kf_error e = {0};
    for (int i = 0; i < 100; i++) assert_int_equal(kf_dispatch(p, a, 4, &l, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_device_sync(gpu, &e), KF_OK);
    check_y(&v, N, 1.0f, 100);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

static void presorted_plan_launches_without_allocation(void **state)
{
    need_gpu();
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    vecs v = make_vecs(gpu, N);
    kf_arg a[4];
    set_args(a, 1.0f, &v, N);
    kf_launch l = {.count = N};
    kf_error e = {0};
    kf_plan *plan;
    assert_int_equal(kf_plan_create(p, a, 4, &l, &plan, &e), KF_OK);
    uint64_t before = kf_rt_alloc_count();
    for (int i = 0; i < 1000; i++) assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_rt_alloc_count(), before);
    assert_int_equal(kf_device_sync(gpu, &e), KF_OK);
    check_y(&v, N, 1.0f, 1000);
    double us = 0;
    assert_int_equal(kf_plan_bench_bare(plan, 100, &us, &e), KF_OK);
    assert_true(us > 0);
    kf_plan_destroy(plan);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

static void timed_dispatch_and_copy_report_device_time(void **state)
{
    need_gpu();
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    vecs v = make_vecs(gpu, N);
    kf_arg a[4];
    set_args(a, 1.0f, &v, N);
    kf_launch l = {.count = N};
    kf_error e = {0};
    float ms = -1;
    assert_int_equal(kf_dispatch(p, a, 4, &l, KF_DISPATCH_TIMED, &ms, &e), KF_OK);
    assert_true(ms > 0.0f && ms < 1000.0f);
    check_y(&v, N, 1.0f, 1);
    ms = -1;
    assert_int_equal(kf_buffer_copy(v.y, v.x, N * sizeof(float), KF_DISPATCH_TIMED, &ms, &e), KF_OK);
    assert_true(ms > 0.0f);
    float got[4];
    assert_int_equal(kf_buffer_download(v.y, got, sizeof got, &e), KF_OK);
    assert_true(got[3] == 3.0f);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

/* A timed region (kforge bench's pass) spans every launch queued in it,
 * and the driver reports the code's registers and no local memory for a
 * kernel that needs none. */
static void timed_region_spans_a_chain_and_resources_are_the_drivers(void **state)
{
    need_gpu();
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    vecs v = make_vecs(gpu, N);
    kf_arg a[4];
    set_args(a, 1.0f, &v, N);
    kf_launch l = {.count = N};
    kf_error e = {0};
    float ms = -1;
    assert_int_equal(kf_device_timer_start(gpu, &e), KF_OK);
    for (int i = 0; i < 10; i++) assert_int_equal(kf_dispatch(p, a, 4, &l, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_device_timer_stop(gpu, &ms, &e), KF_OK);
    assert_true(ms > 0.0f && ms < 1000.0f);
    check_y(&v, N, 1.0f, 10);
    kf_resources r = {-1, -1, 0, 0};
    assert_int_equal(kf_pipeline_resources(p, &r, &e), KF_OK);
    assert_true(r.regs > 0 && r.regs <= 255);
    assert_int_equal(r.local_bytes, 0);
    assert_true(r.max_threads >= 128);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

/* 3-D grid and block, and more dynamic shared memory than the 48 KiB default. */
static const char *grid3d_cu =
    "extern \"C\" __global__ void grid3d(unsigned *out) {\n"
    "    extern __shared__ unsigned s[];\n"
    "    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
    "    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);\n"
    "    unsigned nt = blockDim.x * blockDim.y * blockDim.z;\n"
    "    s[16383 - t] = b * 1000 + t;\n"
    "    __syncthreads();\n"
    "    out[b * nt + t] = s[16383 - t];\n"
    "}\n";

static void explicit_3d_launch_with_dynamic_shared(void **state)
{
    need_gpu();
    kf_ir_param prm = {"out", buf_t(KF_S_U32, true), {0}, 0};
    kf_raw_kernel rk = {KF_SRC_CUDA, grid3d_cu, "grid3d", &prm, 1, {0, 0, 0}, 0, false};
    kf_pipeline *p;
    kf_error e = {0};
    assert_int_equal(kf_pipeline_create_raw(gpu, &rk, &p, &e), KF_OK);
    enum { NB = 2 * 3 * 4, NT = 8 * 4 * 2 };
    kf_buffer *out;
    assert_int_equal(kf_buffer_create(gpu, kf_type_scalar(KF_S_U32), NB * NT, &out, &e), KF_OK);
    kf_arg a = {.buf = out};
    kf_launch l = {.grid = {2, 3, 4}, .block = {8, 4, 2}, .dyn_shared = 65536};
    assert_int_equal(kf_dispatch(p, &a, 1, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    uint32_t got[NB * NT];
    assert_int_equal(kf_buffer_download(out, got, sizeof got, &e), KF_OK);
    for (uint32_t b = 0; b < NB; b++)
        for (uint32_t t = 0; t < NT; t++) assert_int_equal(got[b * NT + t], b * 1000 + t);
    /* No default block: the launch must give one. */
    kf_launch nob = {.grid = {1, 1, 1}};
    assert_int_equal(kf_dispatch(p, &a, 1, &nob, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "no default block"));
    kf_buffer_destroy(out);
    kf_pipeline_destroy(p);
}

static void validation_uses_device_limits(void **state)
{
    need_gpu();
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    vecs v = make_vecs(gpu, 1024);
    kf_arg a[4];
    set_args(a, 1.0f, &v, 1024);
    kf_device_props dp;
    kf_device_props_get(gpu, &dp);
    kf_error e = {0};
    kf_launch big = {.grid = {1, 1, 1}, .block = {2048, 1, 1}};
    assert_int_equal(kf_dispatch(p, a, 4, &big, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "block.x = 2048 exceeds the device limit max_block_dim.x = 1024"));
    kf_launch shm = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .dyn_shared = dp.shared_per_block_optin + 1};
    assert_int_equal(kf_dispatch(p, a, 4, &shm, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "max_shared_per_block"));
    kf_buffer *h;
    assert_int_equal(kf_buffer_create(gpu, kf_type_scalar(KF_S_F16), 1024, &h, &e), KF_OK);
    a[1].buf = h;
    kf_launch l = {.count = 1024};
    assert_int_equal(kf_dispatch(p, a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "argument 1 'x' of 'saxpy' is &[f32] but the buffer holds f16"));
    a[1].buf = v.x;
    a[2].buf = v.x;
    assert_int_equal(kf_dispatch(p, a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "overlap"));
    check_y(&v, 1024, 0.0f, 1);   /* nothing ran */
    kf_buffer_destroy(h);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

/* The raw-kernel API's reason to exist: a WMMA tensor-core tile from CUDA-C. */
static const char *wmma_cu =
    "#include <mma.h>\n"
    "using namespace nvcuda;\n"
    "extern \"C\" __global__ void wmma16(const half *a, const half *b, float *c) {\n"
    "    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n"
    "    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;\n"
    "    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;\n"
    "    wmma::fill_fragment(fc, 0.0f);\n"
    "    wmma::load_matrix_sync(fa, a, 16);\n"
    "    wmma::load_matrix_sync(fb, b, 16);\n"
    "    wmma::mma_sync(fc, fa, fb, fc);\n"
    "    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);\n"
    "}\n";

static uint16_t f16_small(int v)
{
    static const uint16_t mag[4] = {0x0000, 0x3C00, 0x4000, 0x4200};   /* 0, 1, 2, 3 */
    return (uint16_t)(mag[v < 0 ? -v : v] | (v < 0 ? 0x8000 : 0));
}

static void raw_wmma_gemm_tile_matches_host(void **state)
{
    need_gpu();
    kf_ir_param prm[3] = {{"a", buf_t(KF_S_F16, false), {0}, 0}, {"b", buf_t(KF_S_F16, false), {0}, 0},
                          {"c", buf_t(KF_S_F32, true), {0}, 0}};
    kf_raw_kernel rk = {KF_SRC_CUDA, wmma_cu, "wmma16", prm, 3, {32, 1, 1}, 0, false};
    kf_pipeline *p;
    kf_error e = {0};
    if (kf_pipeline_create_raw(gpu, &rk, &p, &e) != KF_OK) fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
    int av[256], bv[256];
    uint16_t ah[256], bh[256];
    for (int i = 0; i < 256; i++) {
        av[i] = i % 7 - 3, bv[i] = (i * 5) % 7 - 3;
        ah[i] = f16_small(av[i]), bh[i] = f16_small(bv[i]);
    }
    kf_buffer *a, *b, *c;
    assert_int_equal(kf_buffer_create(gpu, kf_type_scalar(KF_S_F16), 256, &a, &e), KF_OK);
    assert_int_equal(kf_buffer_create(gpu, kf_type_scalar(KF_S_F16), 256, &b, &e), KF_OK);
    assert_int_equal(kf_buffer_create(gpu, kf_type_scalar(KF_S_F32), 256, &c, &e), KF_OK);
    assert_int_equal(kf_buffer_upload(a, ah, sizeof ah, &e), KF_OK);
    assert_int_equal(kf_buffer_upload(b, bh, sizeof bh, &e), KF_OK);
    kf_arg args[3] = {{.buf = a}, {.buf = b}, {.buf = c}};
    kf_launch l = {.grid = {1, 1, 1}};
    assert_int_equal(kf_dispatch(p, args, 3, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    float got[256];
    assert_int_equal(kf_buffer_download(c, got, sizeof got, &e), KF_OK);
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++) {
            int want = 0;
            for (int k = 0; k < 16; k++) want += av[m * 16 + k] * bv[n * 16 + k];
            if (got[m * 16 + n] != (float)want) fail_msg("c[%d][%d] = %g, want %d", m, n, got[m * 16 + n], want);
        }
    kf_buffer_destroy(a);
    kf_buffer_destroy(b);
    kf_buffer_destroy(c);
    kf_pipeline_destroy(p);
}

static void nvrtc_error_carries_the_log(void **state)
{
    need_gpu();
    kf_ir_param prm = {"y", buf_t(KF_S_F32, true), {0}, 0};
    kf_raw_kernel rk = {KF_SRC_CUDA, "extern \"C\" __global__ void k(float *y) { y[0] = nope; }", "k", &prm, 1,
                        {32, 1, 1}, 0, true};
    kf_pipeline *p = (kf_pipeline *)1;
    kf_error e = {0};
    assert_int_equal(kf_pipeline_create_raw(gpu, &rk, &p, &e), KF_ERR_SOURCE);
    assert_null(p);
    assert_non_null(strstr(e.msg, "nvrtcCompileProgram"));
    assert_non_null(e.log);
    assert_non_null(strstr(e.log, "nope"));
    kf_error_clear(&e);
}

static void bad_ptx_carries_the_jit_log(void **state)
{
    need_gpu();
    kf_raw_kernel rk = {KF_SRC_PTX, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n",
                        "k", NULL, 0, {32, 1, 1}, 0, true};
    kf_pipeline *p = (kf_pipeline *)1;
    kf_error e = {0};
    assert_int_equal(kf_pipeline_create_raw(gpu_ptx, &rk, &p, &e), KF_ERR_SOURCE);
    assert_null(p);
    assert_true(strstr(e.msg, "cuLink") || strstr(e.msg, "nvJitLink"));   /* whichever made the cubin */
    assert_non_null(e.log);
    assert_non_null(strstr(e.log, "error"));
    kf_error_clear(&e);
}

/* ---- a .kf kernel on both GPU paths, compared with the CPU interpreter ---- */
static const char *saxpy_kf =
    "@schedule(block = 256, grid = cdiv(n, 256))\n"
    "kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n {\n"
    "        y[i] = a * x[i] + y[i];\n"
    "    }\n"
    "}\n";

static void run_kf(kf_device *d, const kf_module *m, uint32_t n, float *out)
{
    kf_pipeline *p;
    kf_error e = {0};
    if (kf_pipeline_create(d, m, &m->kernels[0], &p, &e) != KF_OK) fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
    vecs v = make_vecs(d, n);
    kf_arg a[4];
    set_args(a, 0.5f, &v, n);
    if (kf_dispatch(p, a, 4, NULL, KF_DISPATCH_SYNC, NULL, &e) != KF_OK) fail_msg("%s", e.msg);
    assert_int_equal(kf_buffer_download(v.y, out, n * sizeof(float), &e), KF_OK);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

static void kf_kernel_matches_cpu_on_both_gpu_paths(void **state)
{
    need_gpu();
    kf_module *m;
    if (kf_compile("saxpy.kf", saxpy_kf, strlen(saxpy_kf), NULL, &m) != KF_OK)
        fail_msg("saxpy.kf does not compile: %s", m && m->diags.items.len ? m->diags.items.data[0].msg : "?");
    enum { M = 4099 };
    static float want[M], got[M];
    run_kf(cpu, m, M, want);
    run_kf(gpu, m, M, got);
    assert_memory_equal(got, want, sizeof want);
    memset(got, 0, sizeof got);
    run_kf(gpu_ptx, m, M, got);
    assert_memory_equal(got, want, sizeof want);
    kf_module_free(m);
}

/* A warm start (the cubin from the disk cache, keyed on the .kf source: no
 * emit, NVRTC or JIT) runs the same code as the cold build on both paths. */
static void warm_start_from_disk_matches_cpu_on_both_gpu_paths(void **state)
{
    need_gpu();
    kf_module *m;
    if (kf_compile("warm.kf", saxpy_kf, strlen(saxpy_kf), NULL, &m) != KF_OK) fail_msg("saxpy.kf does not compile");
    enum { M = 5003 };
    static float want[M], got[M];
    run_kf(cpu, m, M, want);
    kf_device *devs[2] = {gpu, gpu_ptx};
    for (int i = 0; i < 2; i++) {
        kf_pipeline *p;
        kf_error e = {0};
        kf_cache_clear(true, NULL, NULL);
        assert_int_equal(kf_pipeline_create(devs[i], m, &m->kernels[0], &p, &e), KF_OK);
        assert_int_equal(kf_pipeline_origin(p), KF_FROM_BUILD);
        kf_pipeline_destroy(p);
        kf_cache_clear(false, NULL, NULL);
        assert_int_equal(kf_pipeline_create(devs[i], m, &m->kernels[0], &p, &e), KF_OK);
        assert_int_equal(kf_pipeline_origin(p), KF_FROM_DISK);
        kf_pipeline_destroy(p);
        memset(got, 0, sizeof got);
        run_kf(devs[i], m, M, got);   /* from memory now: the same cubin */
        assert_memory_equal(got, want, sizeof want);
    }
    kf_module_free(m);
}

/* ---- graphs and re-targeted plans --------------------------------------------- */

/* On device d: plans p1 (a = 0.5) and p2 (a = 0.25) of saxpy over n; a graph
 * of p1, p2, p1 replayed; then p2 re-targeted (a = 1, n = n/2: a smaller
 * grid) and p1 re-bound to y2, replayed again. y and y2 go to out (2n). */
static void graph_run(kf_device *d, const kf_module *m, uint32_t n, float *out)
{
    kf_pipeline *p;
    kf_error e = {0};
    if (kf_pipeline_create(d, m, &m->kernels[0], &p, &e) != KF_OK) fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
    vecs v = make_vecs(d, n), v2 = make_vecs(d, n);
    kf_arg a[4];
    kf_plan *p1, *p2;
    kf_graph *g;
    set_args(a, 0.5f, &v, n);
    assert_int_equal(kf_plan_create(p, a, 4, NULL, &p1, &e), KF_OK);
    a[0].value = f32v(0.25f);
    assert_int_equal(kf_plan_create(p, a, 4, NULL, &p2, &e), KF_OK);
    assert_int_equal(kf_graph_begin(d, &e), KF_OK);
    kf_plan *order[3] = {p1, p2, p1};
    for (int i = 0; i < 3; i++) assert_int_equal(kf_plan_launch(order[i], KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    if (kf_graph_end(d, &g, &e) != KF_OK) fail_msg("%s", e.msg);
    assert_int_equal(kf_graph_launch(g, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    kf_value a1 = f32v(1.0f), half = u32v(n / 2);
    assert_int_equal(kf_plan_set_value(p2, 0, &a1, &e), KF_OK);
    assert_int_equal(kf_plan_set_value(p2, 3, &half, &e), KF_OK);
    assert_int_equal(kf_plan_set_buffer(p1, 2, v2.y, &e), KF_OK);
    float ms = -1;
    if (kf_graph_launch(g, KF_DISPATCH_TIMED, &ms, &e) != KF_OK) fail_msg("%s", e.msg);
    assert_true(ms > 0);
    assert_int_equal(kf_buffer_download(v.y, out, n * sizeof(float), &e), KF_OK);
    assert_int_equal(kf_buffer_download(v2.y, out + n, n * sizeof(float), &e), KF_OK);
    kf_graph_destroy(g);
    kf_plan_destroy(p1);
    kf_plan_destroy(p2);
    free_vecs(&v);
    free_vecs(&v2);
    kf_pipeline_destroy(p);
}

/* A CUDA graph replays like the CPU device's graph, re-targets included
 * (carried into the instantiated graph by node updates), on both paths. */
static void graph_with_retargets_matches_cpu_on_both_gpu_paths(void **state)
{
    need_gpu();
    kf_module *m;
    if (kf_compile("graph.kf", saxpy_kf, strlen(saxpy_kf), NULL, &m) != KF_OK) fail_msg("saxpy.kf does not compile");
    enum { M = 100000 };
    static float want[2 * M], got[2 * M];
    graph_run(cpu, m, M, want);
    float x7 = (float)((M - 7) % 1000);   /* y: 1.25x past n/2, 2.25x before; y2: 1x */
    assert_true(want[M - 7] == 1.0f + 1.25f * x7 && want[7] == 1.0f + 2.25f * 7.0f && want[2 * M - 7] == 1.0f + x7);
    graph_run(gpu, m, M, got);
    assert_memory_equal(got, want, sizeof want);
    memset(got, 0, sizeof got);
    graph_run(gpu_ptx, m, M, got);
    assert_memory_equal(got, want, sizeof want);
    kf_module_free(m);
}

/* ---- programmatic dependent launch ----------------------------------------------- */

enum { CHAIN = 64 };

/* On d, CHAIN launches of saxpy (a = 1) ping-ponging between x and y, each
 * reading what the launch before wrote (x += y, y += x, ...): async, then
 * as a graph replayed after re-targeting every plan's a to 1 again (the
 * nodes updated). out gets x then y (2n) after both. */
static void chain_run(kf_device *d, kf_pipeline *p, uint32_t n, float *out)
{
    kf_error e = {0};
    vecs v = make_vecs(d, n);
    kf_plan *pl[2];
    kf_arg a[4];
    set_args(a, 1.0f, &v, n);
    a[1].buf = v.y, a[2].buf = v.x;
    assert_int_equal(kf_plan_create(p, a, 4, NULL, &pl[0], &e), KF_OK);   /* x += y */
    a[1].buf = v.x, a[2].buf = v.y;
    assert_int_equal(kf_plan_create(p, a, 4, NULL, &pl[1], &e), KF_OK);   /* y += x */
    for (int i = 0; i < CHAIN; i++) assert_int_equal(kf_plan_launch(pl[i % 2], KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    kf_graph *g;
    assert_int_equal(kf_graph_begin(d, &e), KF_OK);
    for (int i = 0; i < CHAIN; i++) assert_int_equal(kf_plan_launch(pl[i % 2], KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    if (kf_graph_end(d, &g, &e) != KF_OK) fail_msg("%s", e.msg);
    kf_value one = f32v(1.0f);
    for (int i = 0; i < 2; i++) assert_int_equal(kf_plan_set_value(pl[i], 0, &one, &e), KF_OK);
    if (kf_graph_launch(g, KF_DISPATCH_SYNC, NULL, &e) != KF_OK) fail_msg("%s", e.msg);
    assert_int_equal(kf_buffer_download(v.x, out, n * sizeof(float), &e), KF_OK);
    assert_int_equal(kf_buffer_download(v.y, out + n, n * sizeof(float), &e), KF_OK);
    kf_graph_destroy(g);
    kf_plan_destroy(pl[0]);
    kf_plan_destroy(pl[1]);
    free_vecs(&v);
}

/* What chain_run computes, on the host: x and y grow like Fibonacci
 * numbers (1·v + w is v + w rounded once, as the kernel's fma gives it). */
static void chain_expected(uint32_t n, float *out)
{
    for (uint32_t i = 0; i < n; i++) {
        float x = (float)(i % 1000), y = 1.0f;
        for (int k = 0; k < 2 * CHAIN; k++) {
            if (k % 2) y = x + y;
            else x = y + x;
        }
        out[i] = x, out[n + i] = y;
    }
}

/* On sm_90 the .kf kernels launch as programmatic dependents by default;
 * a chain where each kernel reads the last one's output gives the host's
 * numbers with PDL on and off, on both paths (a kernel that did not wait
 * for the one before would read stale values). */
static void dependent_chain_is_exact_with_pdl_on_and_off(void **state)
{
    need_gpu();
    kf_module *m;
    if (kf_compile("chain.kf", saxpy_kf, strlen(saxpy_kf), NULL, &m) != KF_OK) fail_msg("saxpy.kf does not compile");
    enum { M = 1 << 20 };
    float *want = malloc(2 * M * sizeof(float)), *got = malloc(2 * M * sizeof(float));
    kf_pipeline *p;
    kf_error e = {0};
    chain_expected(M, want);
    kf_device_props dp;
    kf_device_props_get(gpu, &dp);
    kf_device *devs[2] = {gpu, gpu_ptx};
    for (int i = 0; i < 4; i++) {
        kf_device *d = devs[i % 2];
        bool on = i < 2, was = kf_device_pdl(d);
        assert_int_equal(kf_device_set_pdl(d, on), on && dp.cc_major >= 9);
        if (kf_pipeline_create(d, m, &m->kernels[0], &p, &e) != KF_OK) fail_msg("%s", e.msg);
        memset(got, 0, 2 * M * sizeof(float));
        chain_run(d, p, M, got);
        if (memcmp(got, want, 2 * M * sizeof(float)) != 0)
            fail_msg("the chain differs from the CPU's on the %s path with PDL %s", i % 2 ? "ptx" : "cuda",
                     kf_device_pdl(d) ? "on" : "off");
        kf_pipeline_destroy(p);
        kf_device_set_pdl(d, was);
    }
    printf("PDL on this GPU (cc %d.%d): %s\n", dp.cc_major, dp.cc_minor, kf_device_pdl(gpu) ? "on" : "off");
    free(want);
    free(got);
    kf_module_free(m);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The host's cost of a graph replay per kernel in it (issue 10: <= 1 us),
 * with one re-targeted plan updated at each replay; nothing allocated. */
static void graph_replay_costs_the_host_under_a_microsecond_per_kernel(void **state)
{
    need_gpu();
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    vecs v = make_vecs(gpu, 256);
    kf_arg a[4];
    set_args(a, 1.0f, &v, 256);
    kf_launch l = {.count = 256};
    kf_error e = {0};
    enum { K = 200, R = 50 };
    kf_plan *plans[K];
    kf_graph *g;
    for (int i = 0; i < K; i++) assert_int_equal(kf_plan_create(p, a, 4, &l, &plans[i], &e), KF_OK);
    assert_int_equal(kf_graph_begin(gpu, &e), KF_OK);
    for (int i = 0; i < K; i++) assert_int_equal(kf_plan_launch(plans[i], KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_graph_end(gpu, &g, &e), KF_OK);
    assert_int_equal(kf_graph_launch(g, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    uint64_t allocs = kf_rt_alloc_count();
    double host = 0;
    for (int r = 0; r < R; r++) {
        kf_value ar = f32v(r & 1 ? 1.0f : 0.0f);
        double t0 = now_us();
        assert_int_equal(kf_plan_set_value(plans[r % K], 0, &ar, &e), KF_OK);
        assert_int_equal(kf_graph_launch(g, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
        host += now_us() - t0;
        assert_int_equal(kf_device_sync(gpu, &e), KF_OK);
    }
    assert_int_equal(kf_rt_alloc_count(), allocs);
    double per = host / R / K;
    printf("graph replay: %.3f us of host time per kernel (%d kernels, one node updated per replay)\n", per, K);
    assert_true(per <= 1.0);
    kf_graph_destroy(g);
    for (int i = 0; i < K; i++) kf_plan_destroy(plans[i]);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

/* The real driver: a sync while capturing is refused before it reaches the
 * driver, the capture is ended, and the device runs work eagerly after. */
static void sync_while_recording_leaves_the_gpu_usable(void **state)
{
    need_gpu();
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    vecs v = make_vecs(gpu, N);
    kf_arg a[4];
    set_args(a, 1.0f, &v, N);
    kf_launch l = {.count = N};
    kf_error e = {0};
    kf_plan *plan;
    kf_graph *g = NULL;
    assert_int_equal(kf_plan_create(p, a, 4, &l, &plan, &e), KF_OK);
    assert_int_equal(kf_graph_begin(gpu, &e), KF_OK);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_device_sync(gpu, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "kf_device_sync after launch 0 (kernel 'saxpy')"));
    assert_int_equal(kf_graph_end(gpu, &g, &e), KF_ERR_USAGE);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    check_y(&v, N, 1.0f, 1);
    kf_plan_destroy(plan);
    free_vecs(&v);
    kf_pipeline_destroy(p);
}

/* Another device on the same GPU (the same primary context, a stream of
 * its own) works as usual while gpu records (allocations,
 * copies, synchronous launches, syncs), and the recording is unharmed: the
 * capture is relaxed, so the driver refuses only what the recording device
 * itself refuses. */
static void a_second_device_works_while_the_first_records(void **state)
{
    need_gpu();
    kf_device *other;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_CUDA, 0, &other, &e), KF_OK);
    kf_pipeline *p = raw_saxpy(gpu, KF_SRC_CUDA, saxpy_cu, false);
    kf_pipeline *q = raw_saxpy(other, KF_SRC_CUDA, saxpy_cu, false);
    vecs v = make_vecs(gpu, N);
    kf_arg a[4];
    set_args(a, 1.0f, &v, N);
    kf_launch l = {.count = N};
    kf_plan *plan;
    kf_graph *g = NULL;
    assert_int_equal(kf_plan_create(p, a, 4, &l, &plan, &e), KF_OK);
    assert_int_equal(kf_graph_begin(gpu, &e), KF_OK);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    vecs w = make_vecs(other, N);   /* allocations and uploads */
    kf_arg b[4];
    set_args(b, 2.0f, &w, N);
    if (kf_dispatch(q, b, 4, &l, KF_DISPATCH_SYNC, NULL, &e) != KF_OK) fail_msg("%s", e.msg);
    assert_int_equal(kf_device_sync(other, &e), KF_OK);
    check_y(&w, N, 2.0f, 1);           /* a download */
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    if (kf_graph_end(gpu, &g, &e) != KF_OK) fail_msg("kf_graph_end: %s", e.msg);
    check_y(&v, N, 1.0f, 0);           /* recorded, not run */
    assert_int_equal(kf_graph_launch(g, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    check_y(&v, N, 1.0f, 2);
    kf_graph_destroy(g);
    kf_plan_destroy(plan);
    free_vecs(&w);
    free_vecs(&v);
    kf_pipeline_destroy(q);
    kf_pipeline_destroy(p);
    kf_device_close(other);
}

/* Last: a fault poisons the context for the rest of the process. */
static void kernel_fault_is_a_runtime_error(void **state)
{
    need_gpu();
    kf_ir_param prm = {"n", {KF_TK_SCALAR, KF_S_U64, 1, 0, 0}, {0}, 0};
    kf_raw_kernel rk = {KF_SRC_CUDA,
                        "extern \"C\" __global__ void wild(unsigned long long n) { *(volatile int *)n = 1; }",
                        "wild", &prm, 1, {32, 1, 1}, 0, true};
    kf_pipeline *p;
    kf_error e = {0};
    assert_int_equal(kf_pipeline_create_raw(gpu, &rk, &p, &e), KF_OK);
    kf_arg a = {.value = {.type = kf_type_scalar(KF_S_U64), .lane = {8}}};
    kf_launch l = {.grid = {1, 1, 1}};
    assert_int_equal(kf_dispatch(p, &a, 1, &l, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_RUNTIME);
    assert_non_null(strstr(e.msg, "CUDA_ERROR_ILLEGAL_ADDRESS"));
    kf_pipeline_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_device_reports_properties),
        cmocka_unit_test(raw_cuda_c_kernel_runs_sync),
        cmocka_unit_test(compiled_ptx_loads_without_nvrtc),
        cmocka_unit_test(cached_build_hits_memory_then_disk),
        cmocka_unit_test(async_chain_is_ordered_until_sync),
        cmocka_unit_test(presorted_plan_launches_without_allocation),
        cmocka_unit_test(timed_dispatch_and_copy_report_device_time),
        cmocka_unit_test(timed_region_spans_a_chain_and_resources_are_the_drivers),
        cmocka_unit_test(explicit_3d_launch_with_dynamic_shared),
        cmocka_unit_test(validation_uses_device_limits),
        cmocka_unit_test(raw_wmma_gemm_tile_matches_host),
        cmocka_unit_test(a_second_device_works_while_the_first_records),
        cmocka_unit_test(nvrtc_error_carries_the_log),
        cmocka_unit_test(bad_ptx_carries_the_jit_log),
        cmocka_unit_test(kf_kernel_matches_cpu_on_both_gpu_paths),
        cmocka_unit_test(warm_start_from_disk_matches_cpu_on_both_gpu_paths),
        cmocka_unit_test(graph_with_retargets_matches_cpu_on_both_gpu_paths),
        cmocka_unit_test(graph_replay_costs_the_host_under_a_microsecond_per_kernel),
        cmocka_unit_test(sync_while_recording_leaves_the_gpu_usable),
        cmocka_unit_test(dependent_chain_is_exact_with_pdl_on_and_off),
        cmocka_unit_test(kernel_fault_is_a_runtime_error),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
