/* The CUDA backend's host side, in CI, without a GPU: libcuda is replaced by
 * tests/mock/mock_cuda.c (host memory, a fake linker, a host saxpy) through
 * KF_LIBCUDA, while NVRTC is the real one. Checks the driver table, device
 * properties, buffers, CUDA-C -> NVRTC -> link -> load, loaded PTX, the
 * memory and disk caches (including a corrupt entry rebuilt with a
 * warning), argument packing, every dispatch mode, launch records,
 * driver errors carrying the API name, error name and JIT log, graphs:
 * stream capture, node updates for re-targeted plans, failures while
 * recording; and programmatic dependent launch (PDL): which launches get
 * the attribute on a mocked sm_90 and sm_80. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "device.h"
#include "nvrtc.h"
#include "runtime_test_ir.h"

#define MOCK KF_BINARY_DIR "/tests/libkf_mockcuda.so"

typedef struct {
    unsigned grid[3], block[3], shared;
    char name[128];
    int nlaunches;
    int pdl;
} mock_launch;

static const mock_launch *(*last_launch)(void);
static int (*last_dyn_limit)(void);
static int (*live_allocs)(void);
static int (*link_count)(void);
static int (*live_modules)(void);
static int (*mock_calls)(const char *api);
static int (*mock_fail)(const char *api, int n);
static int (*mock_capturing)(void);
static int (*mock_graph_launches)(void);
static int (*mock_live_handles)(void);
static kf_device *dev;
static char cache_dir[64];

static int group_setup(void **state)
{
    setenv("KF_LIBCUDA", MOCK, 1);
    snprintf(cache_dir, sizeof cache_dir, "/tmp/kf-mock-cache-XXXXXX");
    if (!mkdtemp(cache_dir)) return -1;
    setenv("KFORGE_CACHE_DIR", cache_dir, 1);
    void *h = dlopen(MOCK, RTLD_NOW);
    if (!h) return -1;
    *(void **)&last_launch = dlsym(h, "mock_last_launch");
    *(void **)&last_dyn_limit = dlsym(h, "mock_last_dyn_limit");
    *(void **)&live_allocs = dlsym(h, "mock_live_allocs");
    *(void **)&link_count = dlsym(h, "mock_link_count");
    *(void **)&live_modules = dlsym(h, "mock_live_modules");
    *(void **)&mock_calls = dlsym(h, "mock_calls");
    *(void **)&mock_fail = dlsym(h, "mock_fail");
    *(void **)&mock_capturing = dlsym(h, "mock_capturing");
    *(void **)&mock_graph_launches = dlsym(h, "mock_graph_launches");
    *(void **)&mock_live_handles = dlsym(h, "mock_live_handles");
    if (!mock_calls || !mock_fail || !mock_capturing || !mock_graph_launches || !mock_live_handles) return -1;
    kf_error e = {0};
    if (kf_device_open(KF_BACKEND_CUDA, 0, &dev, &e) != KF_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    kf_device_close(dev);
    kf_cache_clear(true, NULL, NULL);
    rmdir(cache_dir);
    return 0;
}

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

static kf_status make_raw(kf_src_kind kind, const char *src, const char *entry, bool uncached, kf_pipeline **p,
                          kf_error *e)
{
    kf_raw_kernel rk = {kind, src, entry, saxpy_params, 4, {128, 1, 1}, 0, uncached};
    return kf_pipeline_create_raw(dev, &rk, p, e);
}

enum { N = 1000 };

typedef struct {
    kf_buffer *x, *y;
    kf_arg a[4];
} vecs;

static void vecs_make(vecs *v, float alpha, uint32_t n)
{
    kf_error e = {0};
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
    assert_int_equal(kf_buffer_create(dev, kf_type_scalar(KF_S_F32), N, &v->x, &e), KF_OK);
    assert_int_equal(kf_buffer_create(dev, kf_type_scalar(KF_S_F32), N, &v->y, &e), KF_OK);
    assert_int_equal(kf_buffer_upload(v->x, hx, sizeof hx, &e), KF_OK);
    assert_int_equal(kf_buffer_upload(v->y, hy, sizeof hy, &e), KF_OK);
    float fa = alpha;
    v->a[0] = (kf_arg){.value = {.type = kf_type_scalar(KF_S_F32)}};
    memcpy(&v->a[0].value.lane[0], &fa, 4);
    v->a[1] = (kf_arg){.buf = v->x};
    v->a[2] = (kf_arg){.buf = v->y};
    v->a[3] = (kf_arg){.value = {.type = kf_type_scalar(KF_S_U32), .lane = {n}}};
}

static void vecs_check(vecs *v, float alpha, uint32_t n, int times)
{
    kf_error e = {0};
    float hy[N];
    assert_int_equal(kf_buffer_download(v->y, hy, sizeof hy, &e), KF_OK);
    for (uint32_t i = 0; i < N; i++) {
        float want = i < n ? 1.0f + (float)times * alpha * (float)i : 1.0f;
        if (hy[i] != want) fail_msg("y[%u] = %g, want %g", i, hy[i], want);
    }
}

static void vecs_free(vecs *v)
{
    kf_buffer_destroy(v->x);
    kf_buffer_destroy(v->y);
}

static void device_reports_driver_properties(void **state)
{
    kf_device_props p;
    kf_device_props_get(dev, &p);
    assert_string_equal(p.name, "Mock GPU");
    assert_int_equal(p.sm_count, 4);
    assert_int_equal(p.cc_major, 9);
    assert_int_equal(p.arch, 90);
    assert_int_equal(p.max_block[2], 64);
    assert_int_equal(p.max_grid[0], 2147483647);
    assert_int_equal(p.shared_per_block_optin, 232448);
    assert_int_equal(p.driver_version, 99000);   /* the mock: newer than any toolkit */
    assert_int_equal(p.nvrtc_version, kf_nvrtc_version());
    int n, v;
    kf_error e = {0};
    assert_int_equal(kf_cuda_device_count(&n, &v, &e), KF_OK);
    assert_int_equal(n, 1);
    assert_int_equal(v, 99000);
}

static void missing_ordinal_is_device_error(void **state)
{
    kf_device *d = (kf_device *)1;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_PTX, 3, &d, &e), KF_ERR_DEVICE);
    assert_null(d);
    assert_non_null(strstr(e.msg, "GPU 3 does not exist (this machine has 1; use 0..0)"));
}

static void buffers_round_trip_and_are_freed(void **state)
{
    int before = live_allocs();
    kf_buffer *b, *v;
    kf_error e = {0};
    assert_int_equal(kf_buffer_create(dev, kf_type_scalar(KF_S_U16), 64, &b, &e), KF_OK);
    assert_int_equal(live_allocs(), before + 1);
    uint16_t in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = (uint16_t)(i * 1000);
    assert_int_equal(kf_buffer_download(b, out, sizeof out, &e), KF_OK);
    for (int i = 0; i < 64; i++) assert_int_equal(out[i], 0);
    assert_int_equal(kf_buffer_upload(b, in, sizeof in, &e), KF_OK);
    assert_int_equal(kf_buffer_view(b, 10, 4, &v, &e), KF_OK);
    assert_int_equal(kf_buffer_download(v, out, 8, &e), KF_OK);
    assert_int_equal(out[0], 10000);
    assert_int_equal(out[3], 13000);
    kf_buffer_destroy(b);
    assert_int_equal(live_allocs(), before + 1);   /* the view keeps it */
    kf_buffer_destroy(v);
    assert_int_equal(live_allocs(), before);
}

static void raw_cuda_c_builds_and_launches(void **state)
{
    kf_pipeline *p;
    kf_error e = {0};
    if (make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", true, &p, &e) != KF_OK) fail_msg("%s", e.msg);
    assert_int_equal(kf_pipeline_origin(p), KF_FROM_BUILD);
    vecs v;
    vecs_make(&v, 2.0f, 777);
    kf_launch l = {.count = 777};
    assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    const mock_launch *ml = last_launch();
    assert_string_equal(ml->name, "saxpy");
    assert_int_equal(ml->grid[0], 7);   /* cdiv(777, 128) */
    assert_int_equal(ml->block[0], 128);
    vecs_check(&v, 2.0f, 777, 1);
    vecs_free(&v);
    kf_pipeline_destroy(p);
}

static void loaded_ptx_needs_no_nvrtc(void **state)
{
    char *ptx;
    kf_error e = {0};
    assert_int_equal(kf_nvrtc_compile(saxpy_cu, "saxpy.cu", 90, false, &ptx, NULL, &e), KF_OK);
    kf_pipeline *p;
    assert_int_equal(make_raw(KF_SRC_PTX, ptx, "saxpy", false, &p, &e), KF_OK);
    free(ptx);
    vecs v;
    vecs_make(&v, -1.0f, N);
    kf_launch l = {.count = N};
    assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    vecs_check(&v, -1.0f, N, 1);
    vecs_free(&v);
    kf_pipeline_destroy(p);
}

static int count_entries(void)
{
    DIR *d = opendir(cache_dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) n += strstr(de->d_name, ".kfc") != NULL;
    if (d) closedir(d);
    return n;
}

static void cache_serves_memory_then_disk_and_rebuilds_corrupt(void **state)
{
    kf_cache_clear(true, NULL, NULL);
    kf_pipeline *p1, *p2, *p3, *p4;
    kf_error e = {0};
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p1, &e), KF_OK);
    assert_int_equal(kf_pipeline_origin(p1), KF_FROM_BUILD);
    assert_int_equal(count_entries(), 1);
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p2, &e), KF_OK);
    assert_int_equal(kf_pipeline_origin(p2), KF_FROM_MEMORY);
    kf_cache_clear(false, NULL, NULL);
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p3, &e), KF_OK);
    assert_int_equal(kf_pipeline_origin(p3), KF_FROM_DISK);
    assert_null(kf_pipeline_warning(p3));
    /* Corrupt the entry on disk: detected, warned about, rebuilt. */
    kf_cache_clear(false, NULL, NULL);
    DIR *d = opendir(cache_dir);
    struct dirent *de;
    char path[512] = "";
    while ((de = readdir(d)))
        if (strstr(de->d_name, ".kfc")) snprintf(path, sizeof path, "%s/%s", cache_dir, de->d_name);
    closedir(d);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 100, SEEK_SET);
    fputc('#', f);
    fclose(f);
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p4, &e), KF_OK);
    assert_int_equal(kf_pipeline_origin(p4), KF_FROM_BUILD);
    assert_non_null(kf_pipeline_warning(p4));
    assert_non_null(strstr(kf_pipeline_warning(p4), "payload checksum mismatch"));
    uint64_t good, bad;
    assert_int_equal(kf_cache_verify(false, &good, &bad, NULL, &e), KF_OK);
    assert_int_equal(good, 1);
    assert_int_equal(bad, 0);
    kf_pipeline_destroy(p1);
    kf_pipeline_destroy(p2);
    kf_pipeline_destroy(p3);
    kf_pipeline_destroy(p4);
}

static void async_plan_and_bare_launches(void **state)
{
    kf_pipeline *p;
    kf_error e = {0};
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p, &e), KF_OK);
    vecs v;
    vecs_make(&v, 1.0f, N);
    kf_launch l = {.count = N};
    for (int i = 0; i < 3; i++) assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    kf_plan *plan;
    assert_int_equal(kf_plan_create(p, v.a, 4, &l, &plan, &e), KF_OK);
    int n0 = last_launch()->nlaunches;
    uint64_t a0 = kf_rt_alloc_count();
    for (int i = 0; i < 5; i++) assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_rt_alloc_count(), a0);
    assert_int_equal(last_launch()->nlaunches, n0 + 5);
    double us = -1;
    assert_int_equal(kf_plan_bench_bare(plan, 2, &us, &e), KF_OK);
    assert_true(us >= 0);
    assert_int_equal(kf_device_sync(dev, &e), KF_OK);
    vecs_check(&v, 1.0f, N, 3 + 5 + 2);
    kf_plan_destroy(plan);
    vecs_free(&v);
    kf_pipeline_destroy(p);
}

static void explicit_launch_and_dynamic_shared_reach_the_driver(void **state)
{
    kf_pipeline *p;
    kf_error e = {0};
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p, &e), KF_OK);
    vecs v;
    vecs_make(&v, 1.0f, N);
    kf_launch l = {.grid = {2, 3, 4}, .block = {8, 4, 2}, .dyn_shared = 65536};
    assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    const mock_launch *ml = last_launch();
    assert_int_equal(ml->grid[1], 3);
    assert_int_equal(ml->grid[2], 4);
    assert_int_equal(ml->block[1], 4);
    assert_int_equal(ml->block[2], 2);
    assert_int_equal(ml->shared, 65536);   /* accepted: the pipeline opted in past 48 KiB */
    l.dyn_shared = 232449;
    assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "max_shared_per_block = 232448 bytes (Mock GPU)"));
    vecs_free(&v);
    kf_pipeline_destroy(p);
}

/* A .kf kernel's @schedule(shared = n * 4) reaches cuLaunchKernel on both
 * GPU paths: the pipeline opted in to all the device allows (227 KiB, no
 * static shared memory here), a launch's dyn_shared overrides the
 * schedule's bytes, and more than the limit is refused with the sizes. */
static void schedule_shared_bytes_reach_the_driver(void **state)
{
    static const char src[] = "@schedule(block = 32, grid = 1, shared = n * 4)\n"
                              "kernel stage(o: &mut [f32], n: u32) {\n    shared s: f32[];\n    s[0] = 1.0;\n    o[0] = s[0];\n}\n";
    kf_module *m = NULL;
    assert_int_equal(kf_compile("stage.kf", src, sizeof src - 1, NULL, &m), KF_OK);
    for (int path = 0; path < 2; path++) {
        kf_device *d;
        kf_pipeline *p;
        kf_buffer *o;
        kf_error e = {0};
        assert_int_equal(kf_device_open(path ? KF_BACKEND_PTX : KF_BACKEND_CUDA, 0, &d, &e), KF_OK);
        if (kf_pipeline_create(d, m, &m->kernels[0], &p, &e) != KF_OK) fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
        assert_int_equal(last_dyn_limit(), 232448);
        assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_F32), 1, &o, &e), KF_OK);
        kf_arg a[2] = {{.buf = o}, {.value = {.type = kf_type_scalar(KF_S_U32), .lane = {20000}}}};
        assert_int_equal(kf_dispatch(p, a, 2, NULL, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_int_equal(last_launch()->shared, 80000);   /* over 48 KiB: the opt-in let it through */
        kf_launch l = {.dyn_shared = 1024};
        assert_int_equal(kf_dispatch(p, a, 2, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_int_equal(last_launch()->shared, 1024);
        a[1].value.lane[0] = 60000;
        assert_int_equal(kf_dispatch(p, a, 2, NULL, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_USAGE);
        assert_non_null(strstr(e.msg, "240000 bytes of dynamic shared memory (its @schedule's shared = ...) + 0 "
                                      "static exceed the device limit max_shared_per_block = 232448 bytes (Mock GPU)"));
        kf_buffer_destroy(o);
        kf_pipeline_destroy(p);
        kf_device_close(d);
    }
    kf_module_free(m);
}

static void timed_dispatch_and_copy(void **state)
{
    kf_pipeline *p;
    kf_error e = {0};
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p, &e), KF_OK);
    vecs v;
    vecs_make(&v, 1.0f, N);
    kf_launch l = {.count = N};
    float ms = -1;
    assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_TIMED, &ms, &e), KF_OK);
    assert_true(ms > 0);
    ms = -1;
    assert_int_equal(kf_buffer_copy(v.y, v.x, 16, KF_DISPATCH_TIMED, &ms, &e), KF_OK);
    assert_true(ms > 0);
    float got[4];
    assert_int_equal(kf_buffer_download(v.y, got, sizeof got, &e), KF_OK);
    assert_true(got[3] == 3.0f);
    assert_int_equal(kf_buffer_copy(v.y, v.x, 8 * N, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "does not fit"));
    vecs_free(&v);
    kf_pipeline_destroy(p);
}

/* kf_device_timer_start/stop time everything queued between them (two
 * async launches here: both ran, two event records, one elapsed time), and
 * the CPU device, whose launches finish before they return, refuses. */
static void timed_region_spans_several_async_launches(void **state)
{
    int (*calls)(const char *) = (int (*)(const char *))dlsym(dlopen(MOCK, RTLD_NOW), "mock_calls");
    assert_non_null(calls);
    kf_pipeline *p;
    kf_error e = {0};
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p, &e), KF_OK);
    vecs v;
    vecs_make(&v, 2.0f, N);
    kf_launch l = {.count = N};
    int records = calls("cuEventRecord"), elapsed = calls("cuEventElapsedTime_v2");
    float ms = -1;
    assert_int_equal(kf_device_timer_start(dev, &e), KF_OK);
    assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_device_timer_stop(dev, &ms, &e), KF_OK);
    assert_true(ms > 0);
    assert_int_equal(calls("cuEventRecord") - records, 2);
    assert_int_equal(calls("cuEventElapsedTime_v2") - elapsed, 1);
    vecs_check(&v, 2.0f, N, 2);
    assert_int_equal(kf_device_timer_stop(dev, NULL, &e), KF_ERR_USAGE);
    vecs_free(&v);
    kf_pipeline_destroy(p);
    kf_device *cpu;
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &cpu, &e), KF_OK);
    assert_int_equal(kf_device_timer_start(cpu, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "needs a CUDA device"));
    kf_device_close(cpu);
}

/* Registers and local bytes come from cuFuncGetAttribute: the mock says 40
 * registers for every entry, 48 local bytes for one named *spill*. */
static void resources_report_registers_and_local_bytes(void **state)
{
    static const char *spill_cu =
        "extern \"C\" __global__ void saxpy_spill(float a, const float *x, float *y, unsigned n) {}\n";
    kf_pipeline *p, *q;
    kf_error e = {0};
    kf_resources r = {-1, -1, 1, 1};
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "saxpy", false, &p, &e), KF_OK);
    assert_int_equal(kf_pipeline_resources(p, &r, &e), KF_OK);
    assert_int_equal(r.regs, 40);
    assert_int_equal(r.local_bytes, 0);
    assert_int_equal(r.static_shared, 0);
    assert_int_equal(r.max_threads, 1024);
    assert_int_equal(make_raw(KF_SRC_CUDA, spill_cu, "saxpy_spill", false, &q, &e), KF_OK);
    assert_int_equal(kf_pipeline_resources(q, &r, &e), KF_OK);
    assert_int_equal(r.local_bytes, 48);
    kf_pipeline_destroy(p);
    kf_pipeline_destroy(q);
}

static void missing_entry_names_the_driver_call(void **state)
{
    kf_pipeline *p = (kf_pipeline *)1;
    kf_error e = {0};
    assert_int_equal(make_raw(KF_SRC_CUDA, saxpy_cu, "nosuch", true, &p, &e), KF_ERR_USAGE);
    assert_null(p);
    assert_non_null(strstr(e.msg, "no entry point 'nosuch'"));
    assert_non_null(strstr(e.msg, "cuModuleGetFunction"));
    assert_non_null(strstr(e.msg, "CUDA_ERROR_NOT_FOUND"));
}

static void bad_ptx_attaches_the_jit_log(void **state)
{
    kf_pipeline *p = (kf_pipeline *)1;
    kf_error e = {0};
    assert_int_equal(make_raw(KF_SRC_PTX, ".version 8.0\n.target sm_90\n", "saxpy", true, &p, &e), KF_ERR_SOURCE);
    assert_null(p);
    assert_non_null(strstr(e.msg, "cuLinkAddData"));
    assert_non_null(strstr(e.msg, "CUDA_ERROR_INVALID_PTX"));
    assert_non_null(e.log);
    assert_non_null(strstr(e.log, "mock: no .entry"));
    kf_error_clear(&e);
}

static void nvrtc_error_attaches_the_log(void **state)
{
    kf_pipeline *p = (kf_pipeline *)1;
    kf_error e = {0};
    assert_int_equal(make_raw(KF_SRC_CUDA, "extern \"C\" __global__ void saxpy() { oops; }", "saxpy", true, &p, &e),
                     KF_ERR_SOURCE);
    assert_null(p);
    assert_non_null(strstr(e.msg, "nvrtcCompileProgram"));
    assert_non_null(e.log);
    assert_non_null(strstr(e.log, "oops"));
    kf_error_clear(&e);
}

/* A .kf kernel (core IR) through kf_cuda_emit + NVRTC, and through
 * kf_ptx_emit loaded directly; both reach the driver as `saxpy`. */
static void kf_kernel_builds_on_both_gpu_paths(void **state)
{
    ir_saxpy ir;
    make_saxpy(&ir, 4);
    for (int path = 0; path < 2; path++) {
        kf_device *d;
        kf_pipeline *p;
        kf_error e = {0};
        assert_int_equal(kf_device_open(path ? KF_BACKEND_PTX : KF_BACKEND_CUDA, 0, &d, &e), KF_OK);
        if (kf_pipeline_create(d, NULL, &ir.k, &p, &e) != KF_OK) fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
        assert_int_equal(kf_pipeline_origin(p), KF_FROM_BUILD);
        kf_pipeline *again;
        assert_int_equal(kf_pipeline_create(d, NULL, &ir.k, &again, &e), KF_OK);
        assert_int_equal(kf_pipeline_origin(again), KF_FROM_MEMORY);
        kf_pipeline_destroy(again);
        kf_buffer *x, *y;
        assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_F32), N, &x, &e), KF_OK);
        assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_F32), N, &y, &e), KF_OK);
        float hx[N], hy[N];
        for (int i = 0; i < N; i++) hx[i] = (float)i;
        assert_int_equal(kf_buffer_upload(x, hx, sizeof hx, &e), KF_OK);
        kf_arg a[4] = {{.value = {.type = kf_type_scalar(KF_S_F32)}}, {.buf = x}, {.buf = y},
                       {.value = {.type = kf_type_scalar(KF_S_U32), .lane = {N}}}};
        float three = 3.0f;
        memcpy(&a[0].value.lane[0], &three, 4);
        kf_launch l = {.count = N};
        assert_int_equal(kf_dispatch(p, a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_int_equal(last_launch()->grid[0], 4);   /* cdiv(1000, 256) */
        assert_int_equal(last_launch()->block[0], 256);
        assert_int_equal(kf_buffer_download(y, hy, sizeof hy, &e), KF_OK);
        for (int i = 0; i < N; i++) assert_true(hy[i] == 3.0f * (float)i);
        kf_buffer_destroy(x);
        kf_buffer_destroy(y);
        kf_pipeline_destroy(p);
        kf_device_close(d);
    }
}

/* ---- .kf kernels keyed on their source ----------------------------------------- */
static const char *saxpy_kf =
    "const BLOCK: u32 = 256; const UNUSED: u32 = 1;\n"
    "@schedule(block = BLOCK, grid = cdiv(n, BLOCK))\n"
    "kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n {\n"
    "        y[i] = a * x[i] + y[i]; // MARK\n"
    "    }\n"
    "}\n";

/* saxpy_kf compiled as `file`, MARK replaced by `mark`, with `define` (NAME=VALUE or NULL). */
static kf_module *compile_kf(const char *file, const char *mark, const char *define)
{
    char src[1024], *at;
    snprintf(src, sizeof src, "%s", saxpy_kf);
    at = strstr(src, "MARK");
    memmove(at + strlen(mark), at + 4, strlen(at + 4) + 1);
    memcpy(at, mark, strlen(mark));
    char name[64] = "", value[64] = "";
    kf_define d = {name, value};
    if (define) sscanf(define, "%63[^=]=%63s", name, value);
    kf_compile_opts o = {&d, define ? 1 : 0, KF_OPT_DEFAULT};
    kf_module *m;
    if (kf_compile(file, src, strlen(src), &o, &m) != KF_OK) fail_msg("%s does not compile", file);
    return m;
}

/* Origin of a fresh pipeline of m's kernel on d (destroyed again). */
static kf_code_origin origin_of(kf_device *d, kf_module *m)
{
    kf_pipeline *p;
    kf_error e = {0};
    if (kf_pipeline_create(d, m, &m->kernels[0], &p, &e) != KF_OK) fail_msg("%s", e.msg);
    kf_code_origin o = kf_pipeline_origin(p);
    kf_pipeline_destroy(p);
    return o;
}

/* A warm start from the disk cache neither emits nor runs NVRTC or the JIT:
 * with the kernel's IR emptied after the first build, emitting would give
 * other text (another key, a build); the source key still finds the cubin. */
static void warm_start_from_source_key_skips_emit_nvrtc_and_jit(void **state)
{
    assert_true(kf_cache_build_id()[0] != 0);
    for (int path = 0; path < 2; path++) {
        kf_device *d;
        kf_error e = {0};
        assert_int_equal(kf_device_open(path ? KF_BACKEND_PTX : KF_BACKEND_CUDA, 0, &d, &e), KF_OK);
        kf_cache_clear(true, NULL, NULL);
        kf_module *m = compile_kf("warm.kf", "", NULL);
        assert_int_equal(origin_of(d, m), KF_FROM_BUILD);
        int links = link_count();
        kf_cache_clear(false, NULL, NULL);
        uint32_t nins = m->kernels[0].nins;
        m->kernels[0].nins = 0;
        assert_int_equal(origin_of(d, m), KF_FROM_DISK);
        assert_int_equal(origin_of(d, m), KF_FROM_MEMORY);
        m->kernels[0].nins = nins;
        assert_int_equal(link_count(), links);
        kf_module_free(m);
        kf_device_close(d);
    }
}

/* Whatever changes the emitted text changes the key: defines, the file
 * name (it is in the text), line info and the path; the same source in a
 * new module is the same key. */
static void source_key_follows_everything_that_changes_the_output(void **state)
{
    kf_device *ptx;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_PTX, 0, &ptx, &e), KF_OK);
    kf_cache_clear(true, NULL, NULL);
    kf_module *a = compile_kf("a.kf", "", NULL), *a2 = compile_kf("a.kf", "", NULL), *b = compile_kf("b.kf", "", NULL),
              *d128 = compile_kf("a.kf", "", "BLOCK=128"), *d64 = compile_kf("a.kf", "", "BLOCK=64"),
              *d64b = compile_kf("a.kf", "", "BLOCK=64");
    assert_int_equal(origin_of(ptx, a), KF_FROM_BUILD);
    assert_int_equal(origin_of(ptx, a2), KF_FROM_MEMORY);
    assert_int_equal(origin_of(ptx, b), KF_FROM_BUILD);
    assert_int_equal(origin_of(ptx, d128), KF_FROM_BUILD);
    assert_int_equal(origin_of(ptx, d64), KF_FROM_BUILD);
    assert_int_equal(origin_of(ptx, d64b), KF_FROM_MEMORY);
    setenv("KFORGE_LINEINFO", "1", 1);
    assert_int_equal(origin_of(ptx, a), KF_FROM_BUILD);
    unsetenv("KFORGE_LINEINFO");
    assert_int_equal(origin_of(ptx, a), KF_FROM_MEMORY);
    kf_device *cu;
    assert_int_equal(kf_device_open(KF_BACKEND_CUDA, 0, &cu, &e), KF_OK);
    assert_int_equal(origin_of(cu, a), KF_FROM_BUILD);
    assert_int_equal(origin_of(cu, a2), KF_FROM_MEMORY);
    kf_device_close(cu);
    kf_module *mods[] = {a, a2, b, d128, d64, d64b};
    for (int i = 0; i < 6; i++) kf_module_free(mods[i]);
    kf_device_close(ptx);
}

/* A source key that misses falls back to the emitted text's key: a define
 * of an unused constant changes the source key but not the PTX, so the
 * build is found by its text (no JIT) and stored under the new source key. */
static void source_key_miss_falls_back_to_the_text_key(void **state)
{
    kf_device *d;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_PTX, 0, &d, &e), KF_OK);
    kf_cache_clear(true, NULL, NULL);
    kf_module *a = compile_kf("two.kf", "", NULL), *b = compile_kf("two.kf", "", "UNUSED=2");
    assert_int_equal(origin_of(d, a), KF_FROM_BUILD);
    assert_int_equal(count_entries(), 2);   /* text key + source key */
    int links = link_count();
    assert_int_equal(origin_of(d, b), KF_FROM_MEMORY);
    assert_int_equal(link_count(), links);
    assert_int_equal(count_entries(), 3);
    kf_cache_clear(false, NULL, NULL);
    assert_int_equal(origin_of(d, b), KF_FROM_DISK);
    kf_module_free(a);
    kf_module_free(b);
    kf_device_close(d);
}

/* A PTX JIT error on kforge's PTX names the .kf line that produced the
 * failing PTX line (through the emitter's line map). */
static void ptx_jit_error_points_at_the_kf_line(void **state)
{
    kf_device *d;
    kf_pipeline *p = (kf_pipeline *)1;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_PTX, 0, &d, &e), KF_OK);
    kf_module *m = compile_kf("jit.kf", "MOCKJITFAIL", NULL);
    assert_int_equal(kf_pipeline_create(d, m, &m->kernels[0], &p, &e), KF_ERR_DEVICE);
    assert_null(p);
    assert_non_null(strstr(e.msg, "CUDA_ERROR_INVALID_PTX"));
    assert_non_null(strstr(e.msg, " at jit.kf:6:"));
    assert_int_equal(e.loc.line, 6);
    assert_non_null(e.log);
    assert_non_null(strstr(e.log, "mock: requested"));
    kf_error_clear(&e);
    kf_module_free(m);
    kf_device_close(d);
}


/* ---- a whole module at once ------------------------------------------------------ */
static const char *three_kf =
    "@schedule(block = 64)\n"
    "kernel first(o: &mut [u32]) { o[global_id.x] = 1; }\n"
    "@schedule(block = 256, grid = cdiv(n, 256))\n"
    "kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { y[i] = a * x[i] + y[i]; }\n"
    "}\n"
    "@schedule(block = (8, 4), grid = 3)\n"
    "kernel third(o: &mut [i32]) { o[thread_id.x] = 7; }\n";

/* saxpy through pipeline p (the mock computes it on the host): y = 2x + 1. */
static void saxpy_through(kf_device *d, kf_pipeline *p)
{
    kf_error e = {0};
    kf_buffer *x, *y;
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
    assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_F32), N, &x, &e), KF_OK);
    assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_F32), N, &y, &e), KF_OK);
    assert_int_equal(kf_buffer_upload(x, hx, sizeof hx, &e), KF_OK);
    assert_int_equal(kf_buffer_upload(y, hy, sizeof hy, &e), KF_OK);
    kf_arg a[4] = {{.value = {.type = kf_type_scalar(KF_S_F32)}}, {.buf = x}, {.buf = y},
                   {.value = {.type = kf_type_scalar(KF_S_U32), .lane = {N}}}};
    float two = 2.0f;
    memcpy(&a[0].value.lane[0], &two, 4);
    assert_int_equal(kf_dispatch(p, a, 4, NULL, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    assert_string_equal(last_launch()->name, "saxpy");
    assert_int_equal(last_launch()->grid[0], 4);   /* cdiv(1000, 256) */
    assert_int_equal(kf_buffer_download(y, hy, sizeof hy, &e), KF_OK);
    for (int i = 0; i < N; i++) assert_true(hy[i] == 2.0f * (float)i + 1.0f);
    kf_buffer_destroy(x);
    kf_buffer_destroy(y);
}

/* kf_pipeline_create_module: every kernel of a module from one build (one
 * JIT input, one loaded module on both GPU paths), each pipeline launching
 * its own entry; a second call is served by the cache; the module is
 * unloaded only with the last pipeline that shares it. */
static void module_pipelines_share_one_build_and_one_module(void **state)
{
    kf_module *m;
    assert_int_equal(kf_compile("three.kf", three_kf, strlen(three_kf), NULL, &m), KF_OK);
    for (int path = 0; path < 2; path++) {
        kf_device *d;
        kf_error e = {0};
        kf_pipeline *ps[3], *again[3];
        assert_int_equal(kf_device_open(path ? KF_BACKEND_PTX : KF_BACKEND_CUDA, 0, &d, &e), KF_OK);
        kf_cache_clear(true, NULL, NULL);
        int links = link_count(), mods = live_modules();
        if (kf_pipeline_create_module(d, m, ps, &e) != KF_OK) fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
        assert_int_equal(link_count(), links + 1);
        assert_int_equal(live_modules(), mods + 1);
        for (int i = 0; i < 3; i++) assert_int_equal(kf_pipeline_origin(ps[i]), KF_FROM_BUILD);
        saxpy_through(d, ps[1]);
        kf_arg o;
        kf_buffer *ob;
        assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_I32), 96, &ob, &e), KF_OK);
        o = (kf_arg){.buf = ob};
        assert_int_equal(kf_dispatch(ps[2], &o, 1, NULL, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_string_equal(last_launch()->name, "third");
        assert_int_equal(last_launch()->block[1], 4);
        assert_int_equal(last_launch()->grid[0], 3);
        kf_buffer_destroy(ob);
        assert_int_equal(kf_pipeline_create_module(d, m, again, &e), KF_OK);
        assert_int_equal(link_count(), links + 1);
        for (int i = 0; i < 3; i++) assert_int_equal(kf_pipeline_origin(again[i]), KF_FROM_MEMORY);
        assert_int_equal(live_modules(), mods + 2);
        kf_pipeline_destroy(ps[1]);
        kf_pipeline_destroy(ps[0]);
        assert_int_equal(live_modules(), mods + 2);
        saxpy_through(d, again[1]);
        kf_pipeline_destroy(ps[2]);
        assert_int_equal(live_modules(), mods + 1);
        for (int i = 0; i < 3; i++) kf_pipeline_destroy(again[i]);
        assert_int_equal(live_modules(), mods);
        kf_device_close(d);
    }
    kf_module_free(m);
}

/* KFORGE_JIT=nvjitlink: kforge's PTX becomes a real cubin through nvJitLink
 * (no call to the driver's linker), keyed apart from the driver's build of
 * the same text, and the mock loads it and runs saxpy from it. An unknown
 * KFORGE_JIT is a usage error naming the choices. */
static void ptx_links_through_nvjitlink_when_asked(void **state)
{
    kf_module *m;
    assert_int_equal(kf_compile("three.kf", three_kf, strlen(three_kf), NULL, &m), KF_OK);
    kf_device *d;
    kf_pipeline *ps[3];
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_PTX, 0, &d, &e), KF_OK);
    assert_int_equal(kf_pipeline_create_module(d, m, ps, &e), KF_OK);   /* the mock's linker */
    for (int i = 0; i < 3; i++) kf_pipeline_destroy(ps[i]);
    setenv("KFORGE_JIT", "nvjitlink", 1);
    int links = link_count();
    kf_status st = kf_pipeline_create_module(d, m, ps, &e);
    if (st == KF_ERR_DEVICE && strstr(e.msg, "nvJitLink is not available")) {
        printf("skipped: %s\n", e.msg);
        unsetenv("KFORGE_JIT");
        kf_error_clear(&e);
        kf_device_close(d);
        kf_module_free(m);
        skip();
    }
    if (st != KF_OK) fail_msg("%s\n%s", e.msg, e.log ? e.log : "");
    assert_int_equal(link_count(), links);
    for (int i = 0; i < 3; i++) assert_int_equal(kf_pipeline_origin(ps[i]), KF_FROM_BUILD);
    saxpy_through(d, ps[1]);
    for (int i = 0; i < 3; i++) kf_pipeline_destroy(ps[i]);
    setenv("KFORGE_JIT", "fast", 1);
    assert_int_equal(kf_pipeline_create_module(d, m, ps, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "KFORGE_JIT is 'fast': expected 'driver' or 'nvjitlink'"));
    unsetenv("KFORGE_JIT");
    kf_error_clear(&e);
    kf_device_close(d);
    kf_module_free(m);
}

/* A JIT error in one kernel of the module fails the whole build with the
 * .kf line, leaves no pipeline and no loaded module. */
static void module_build_error_leaves_nothing(void **state)
{
    kf_device *d;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_PTX, 0, &d, &e), KF_OK);
    kf_module *m = compile_kf("badmod.kf", "MOCKJITFAIL", NULL);
    kf_pipeline *ps[1] = {(kf_pipeline *)1};
    int mods = live_modules();
    assert_int_equal(kf_pipeline_create_module(d, m, ps, &e), KF_ERR_DEVICE);
    assert_null(ps[0]);
    assert_non_null(strstr(e.msg, "CUDA_ERROR_INVALID_PTX"));
    assert_non_null(strstr(e.msg, " at badmod.kf:6:"));
    assert_int_equal(live_modules(), mods);
    kf_error_clear(&e);
    kf_module_free(m);
    kf_module *none;
    assert_int_equal(kf_compile("none.kf", "const A: i32 = 1;", 17, NULL, &none), KF_OK);
    assert_int_equal(kf_pipeline_create_module(d, none, ps, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "no kernel"));
    kf_module_free(none);
    kf_device_close(d);
}

/* Last: the mock, like the driver, stays faulted afterwards. */
/* ---- graphs: capture, instantiate, replay, node updates ------------------------- */

/* The .kf saxpy (grid = cdiv(n, 256)) on a fresh device of backend b, with
 * x[i] = i and y = 1 of N f32 and a plan a = 1 over n = N. */
typedef struct {
    kf_device *d;
    kf_module *m;
    kf_pipeline *p;
    kf_buffer *x, *y, *y2;
    kf_plan *plan;
} gfx;

static void gfx_make(gfx *g, kf_backend b)
{
    kf_error e = {0};
    memset(g, 0, sizeof *g);
    assert_int_equal(kf_device_open(b, 0, &g->d, &e), KF_OK);
    g->m = compile_kf("graph.kf", "", NULL);
    if (kf_pipeline_create(g->d, g->m, &g->m->kernels[0], &g->p, &e) != KF_OK) fail_msg("%s", e.msg);
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
    kf_buffer **bs[3] = {&g->x, &g->y, &g->y2};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kf_buffer_create(g->d, kf_type_scalar(KF_S_F32), N, bs[i], &e), KF_OK);
        assert_int_equal(kf_buffer_upload(*bs[i], i ? hy : hx, sizeof hx, &e), KF_OK);
    }
    kf_arg a[4] = {{.value = {.type = kf_type_scalar(KF_S_F32)}}, {.buf = g->x}, {.buf = g->y},
                   {.value = {.type = kf_type_scalar(KF_S_U32), .lane = {N}}}};
    float one = 1.0f;
    memcpy(&a[0].value.lane[0], &one, 4);
    assert_int_equal(kf_plan_create(g->p, a, 4, NULL, &g->plan, &e), KF_OK);
}

static void gfx_free(gfx *g)
{
    kf_plan_destroy(g->plan);
    kf_buffer_destroy(g->x);
    kf_buffer_destroy(g->y);
    kf_buffer_destroy(g->y2);
    kf_pipeline_destroy(g->p);
    kf_module_free(g->m);
    kf_device_close(g->d);
}

/* Buffer b holds 1 + k·i for i < n and 1 beyond. */
static void expect_y(kf_buffer *b, float k, uint32_t n)
{
    kf_error e = {0};
    float hy[N];
    assert_int_equal(kf_buffer_download(b, hy, sizeof hy, &e), KF_OK);
    for (uint32_t i = 0; i < N; i++)
        if (hy[i] != (i < n ? 1.0f + k * (float)i : 1.0f)) fail_msg("y[%u] = %g, want %g", i, hy[i], 1.0f + k * i);
}

static kf_graph *record_twice(gfx *g)
{
    kf_error e = {0};
    kf_graph *gr;
    assert_int_equal(kf_graph_begin(g->d, &e), KF_OK);
    assert_int_equal(mock_capturing(), 1);
    for (int i = 0; i < 2; i++) assert_int_equal(kf_plan_launch(g->plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_graph_end(g->d, &gr, &e), KF_OK);
    assert_int_equal(mock_capturing(), 0);
    return gr;
}

/* Both GPU paths: a captured graph runs only when launched; re-targeted
 * values, buffers and the grid that follows n reach the instantiated graph
 * through one node update per changed launch, with no allocation and no
 * second capture; an unchanged replay updates nothing. */
static void graph_replays_and_carries_retargets_without_recapture(void **state)
{
    for (int path = 0; path < 2; path++) {
        gfx g;
        kf_error e = {0};
        gfx_make(&g, path ? KF_BACKEND_PTX : KF_BACKEND_CUDA);
        kf_graph *gr = record_twice(&g);
        assert_int_equal(kf_graph_size(gr), 2);
        expect_y(g.y, 0.0f, N);   /* captured, not run */
        int launches = mock_graph_launches(), captures = mock_calls("cuStreamBeginCapture_v2");
        int updates = mock_calls("cuGraphExecKernelNodeSetParams_v2");
        assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_int_equal(mock_graph_launches(), launches + 1);
        expect_y(g.y, 2.0f, N);
        kf_value a3 = {.type = kf_type_scalar(KF_S_F32)}, n600 = {.type = kf_type_scalar(KF_S_U32), .lane = {600}};
        float three = 3.0f;
        memcpy(&a3.lane[0], &three, 4);
        uint64_t allocs = kf_rt_alloc_count();
        assert_int_equal(kf_plan_set_value(g.plan, 0, &a3, &e), KF_OK);
        assert_int_equal(kf_plan_set_value(g.plan, 3, &n600, &e), KF_OK);
        assert_int_equal(kf_plan_set_buffer(g.plan, 2, g.y2, &e), KF_OK);
        float ms = -1;
        assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_TIMED, &ms, &e), KF_OK);
        assert_true(ms > 0);
        assert_int_equal(kf_rt_alloc_count(), allocs);
        assert_int_equal(mock_calls("cuGraphExecKernelNodeSetParams_v2"), updates + 2);   /* both launches */
        assert_int_equal(last_launch()->grid[0], 3);   /* cdiv(600, 256) */
        expect_y(g.y2, 6.0f, 600);
        assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
        assert_int_equal(kf_device_sync(g.d, &e), KF_OK);
        assert_int_equal(mock_calls("cuGraphExecKernelNodeSetParams_v2"), updates + 2);   /* nothing changed */
        assert_int_equal(mock_calls("cuStreamBeginCapture_v2"), captures);
        expect_y(g.y2, 12.0f, 600);
        kf_graph_destroy(gr);
        gfx_free(&g);
    }
}

/* A plan re-targeted while recording, after its launch was recorded, to a
 * value that moves its grid (re-targeting is allowed at any time): the
 * capture holds the grid the launch was recorded with, kf_graph_end takes
 * it, and the first replay carries the new one in. */
static void retarget_while_recording_reaches_the_first_replay(void **state)
{
    for (int path = 0; path < 2; path++) {
        gfx g;
        kf_error e = {0};
        kf_graph *gr = NULL;
        gfx_make(&g, path ? KF_BACKEND_PTX : KF_BACKEND_CUDA);
        assert_int_equal(kf_graph_begin(g.d, &e), KF_OK);
        assert_int_equal(kf_plan_launch(g.plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);   /* grid 4 */
        kf_value n600 = {.type = kf_type_scalar(KF_S_U32), .lane = {600}};
        assert_int_equal(kf_plan_set_value(g.plan, 3, &n600, &e), KF_OK);                 /* grid 3 */
        if (kf_graph_end(g.d, &gr, &e) != KF_OK) fail_msg("kf_graph_end: %s", e.msg);
        int updates = mock_calls("cuGraphExecKernelNodeSetParams_v2");
        assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_int_equal(mock_calls("cuGraphExecKernelNodeSetParams_v2"), updates + 1);
        assert_int_equal(last_launch()->grid[0], 3);
        expect_y(g.y, 1.0f, 600);
        kf_graph_destroy(gr);
        gfx_free(&g);
    }
}

/* Two plans of one function and grid in one graph: re-targeting the second
 * updates the second's node, also when the driver lists the graph's nodes
 * in another order than the capture's (MOCKCUDA_NODES_REVERSED). */
static void each_plan_updates_its_own_node_whatever_the_node_order(void **state)
{
    for (int reversed = 0; reversed < 2; reversed++) {
        gfx g;
        kf_error e = {0};
        kf_plan *p2;
        kf_graph *gr;
        if (reversed) setenv("MOCKCUDA_NODES_REVERSED", "1", 1);
        gfx_make(&g, KF_BACKEND_PTX);
        kf_arg a[4] = {{.value = {.type = kf_type_scalar(KF_S_F32)}}, {.buf = g.x}, {.buf = g.y2},
                       {.value = {.type = kf_type_scalar(KF_S_U32), .lane = {N}}}};
        float two = 2.0f, five = 5.0f;
        memcpy(&a[0].value.lane[0], &two, 4);
        assert_int_equal(kf_plan_create(g.p, a, 4, NULL, &p2, &e), KF_OK);
        assert_int_equal(kf_graph_begin(g.d, &e), KF_OK);
        assert_int_equal(kf_plan_launch(g.plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
        assert_int_equal(kf_plan_launch(p2, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
        assert_int_equal(kf_graph_end(g.d, &gr, &e), KF_OK);
        kf_value a5 = {.type = kf_type_scalar(KF_S_F32)};
        memcpy(&a5.lane[0], &five, 4);
        assert_int_equal(kf_plan_set_value(p2, 0, &a5, &e), KF_OK);
        assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        expect_y(g.y, 1.0f, N);    /* the first plan, unchanged */
        expect_y(g.y2, 5.0f, N);   /* the second, re-targeted */
        unsetenv("MOCKCUDA_NODES_REVERSED");
        kf_graph_destroy(gr);
        kf_plan_destroy(p2);
        gfx_free(&g);
    }
}

/* A launch the driver refuses while capturing: the error names the launch
 * and the driver call, the capture is ended, kf_graph_end reports it, and
 * the device runs the plan eagerly afterwards; nothing is left behind. */
static void failed_capture_names_the_launch_and_leaves_the_device_usable(void **state)
{
    gfx g;
    kf_error e = {0};
    kf_graph *gr = (kf_graph *)1;
    gfx_make(&g, KF_BACKEND_PTX);
    int handles = mock_live_handles();
    assert_int_equal(kf_graph_begin(g.d, &e), KF_OK);
    assert_int_equal(kf_plan_launch(g.plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    mock_fail("cuLaunchKernelEx", 1);   /* a .kf kernel on the mock's sm_90: a programmatic dependent launch */
    assert_int_equal(kf_plan_launch(g.plan, KF_DISPATCH_ASYNC, NULL, &e), KF_ERR_DEVICE);
    if (!strstr(e.msg, "graph recording on Mock GPU: launch 1 (kernel 'saxpy'): cuLaunchKernelEx failed: ") ||
        !strstr(e.msg, "the recording is abandoned"))
        fail_msg("%s", e.msg);
    assert_int_equal(mock_capturing(), 0);
    assert_int_equal(mock_live_handles(), handles);   /* the partial graph is gone */
    assert_int_equal(kf_graph_end(g.d, &gr, &e), KF_ERR_USAGE);
    assert_null(gr);
    assert_non_null(strstr(e.msg, "abandoned: graph recording on Mock GPU: launch 1 (kernel 'saxpy')"));
    assert_int_equal(kf_plan_launch(g.plan, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    expect_y(g.y, 1.0f, N);
    gfx_free(&g);
}

/* A sync or a download while recording is refused before the driver sees
 * it (the capture would be invalidated), and the capture is ended. */
static void waits_while_recording_are_refused_before_the_driver(void **state)
{
    gfx g;
    kf_error e = {0};
    gfx_make(&g, KF_BACKEND_CUDA);
    int syncs = mock_calls("cuStreamSynchronize"), reads = mock_calls("cuMemcpyDtoHAsync_v2");
    assert_int_equal(kf_graph_begin(g.d, &e), KF_OK);
    assert_int_equal(kf_plan_launch(g.plan, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_device_sync(g.d, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "kf_device_sync after launch 0 (kernel 'saxpy')"));
    assert_int_equal(mock_capturing(), 0);
    assert_int_equal(kf_graph_begin(g.d, &e), KF_OK);
    float v;
    assert_int_equal(kf_buffer_download(g.y, &v, 4, &e), KF_ERR_USAGE);
    assert_non_null(strstr(e.msg, "kf_buffer_download before any launch"));
    assert_int_equal(mock_capturing(), 0);
    assert_int_equal(mock_calls("cuStreamSynchronize"), syncs);
    assert_int_equal(mock_calls("cuMemcpyDtoHAsync_v2"), reads);
    expect_y(g.y, 0.0f, N);   /* nothing ran */
    gfx_free(&g);
}

/* Each driver call of recording, kf_graph_end and kf_graph_launch failing:
 * the error names it, nothing leaks, and a new recording works afterwards. */
static void graph_driver_failures_are_reported_and_recoverable(void **state)
{
    static const char *const apis[] = {"cuStreamEndCapture", "cuGraphGetNodes", "cuGraphKernelNodeGetParams_v2",
                                       "cuGraphInstantiateWithFlags", "cuGraphExecKernelNodeSetParams_v2",
                                       "cuGraphLaunch", "cuStreamGetCaptureInfo_v3", "cuStreamBeginCapture_v2"};
    static const char *const names[] = {"cuStreamEndCapture failed", "cuGraphGetNodes failed",
                                        "cuGraphKernelNodeGetParams failed", "cuGraphInstantiateWithFlags failed",
                                        "cuGraphExecKernelNodeSetParams failed", "cuGraphLaunch failed",
                                        "cuStreamGetCaptureInfo failed", "cuStreamBeginCapture failed"};
    for (int i = 0; i < 8; i++) {
        gfx g;
        kf_error e = {0};
        kf_graph *gr = NULL;
        gfx_make(&g, KF_BACKEND_PTX);
        int handles = mock_live_handles();
        mock_fail(apis[i], 1);
        kf_status st = kf_graph_begin(g.d, &e);
        if (st == KF_OK) st = kf_plan_launch(g.plan, KF_DISPATCH_ASYNC, NULL, &e);
        if (st == KF_OK) st = kf_graph_end(g.d, &gr, &e);
        if (st == KF_OK) {
            kf_value a2 = {.type = kf_type_scalar(KF_S_F32)};
            float two = 2.0f;
            memcpy(&a2.lane[0], &two, 4);
            assert_int_equal(kf_plan_set_value(g.plan, 0, &a2, &e), KF_OK);
            st = kf_graph_launch(gr, KF_DISPATCH_SYNC, NULL, &e);
        }
        assert_int_equal(st, KF_ERR_DEVICE);
        if (!strstr(e.msg, names[i])) fail_msg("%s: %s", apis[i], e.msg);
        assert_int_equal(mock_capturing(), 0);
        kf_graph_destroy(gr);
        assert_int_equal(mock_live_handles(), handles);
        gr = record_twice(&g);   /* the device records and replays again */
        assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        kf_graph_destroy(gr);
        gfx_free(&g);
    }
}

/* ---- programmatic dependent launch ----------------------------------------------- */

/* One launch of g's plan (sync): whether it went through cuLaunchKernelEx
 * with PROGRAMMATIC_STREAM_SERIALIZATION; y gains x again either way. */
static int launch_pdl_flag(gfx *g, float *k)
{
    kf_error e = {0};
    int ex = mock_calls("cuLaunchKernelEx"), plain = mock_calls("cuLaunchKernel");
    assert_int_equal(kf_plan_launch(g->plan, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
    int pdl = last_launch()->pdl;
    assert_int_equal(mock_calls("cuLaunchKernelEx") - ex, pdl);   /* PDL: cuLaunchKernelEx, else cuLaunchKernel */
    assert_int_equal(mock_calls("cuLaunchKernel") - plain, !pdl);
    *k += 1.0f;
    expect_y(g->y, *k, N);
    return pdl;
}

/* On sm_90 (the mock's default) a .kf kernel, on both GPU paths, launches
 * as a programmatic dependent and computes the same; kf_device_set_pdl
 * turns it off and on again for later launches. */
static void kf_kernels_launch_as_programmatic_dependents_on_sm90(void **state)
{
    for (int path = 0; path < 2; path++) {
        gfx g;
        float k = 0.0f;
        gfx_make(&g, path ? KF_BACKEND_PTX : KF_BACKEND_CUDA);
        assert_true(kf_device_pdl(g.d));
        assert_int_equal(launch_pdl_flag(&g, &k), 1);
        assert_false(kf_device_set_pdl(g.d, false));
        assert_false(kf_device_pdl(g.d));
        assert_int_equal(launch_pdl_flag(&g, &k), 0);
        assert_true(kf_device_set_pdl(g.d, true));
        assert_int_equal(launch_pdl_flag(&g, &k), 1);
        gfx_free(&g);
    }
}

/* A raw kernel (nothing says it waits) never gets the attribute, with PDL on. */
static void raw_kernels_never_launch_as_programmatic_dependents(void **state)
{
    kf_error e = {0};
    kf_pipeline *p;
    assert_true(kf_device_pdl(dev));
    char *ptx;
    assert_int_equal(kf_nvrtc_compile(saxpy_cu, "saxpy.cu", 90, false, &ptx, NULL, &e), KF_OK);
    for (int kind = 0; kind < 2; kind++) {
        const char *src = kind ? ptx : saxpy_cu;
        if (make_raw(kind ? KF_SRC_PTX : KF_SRC_CUDA, src, "saxpy", true, &p, &e) != KF_OK) fail_msg("%s", e.msg);
        vecs v;
        vecs_make(&v, 2.0f, N);
        int ex = mock_calls("cuLaunchKernelEx");
        kf_launch l = {.count = N};
        assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_int_equal(last_launch()->pdl, 0);
        assert_int_equal(mock_calls("cuLaunchKernelEx"), ex);
        vecs_check(&v, 2.0f, N, 1);
        vecs_free(&v);
        kf_pipeline_destroy(p);
    }
    free(ptx);
}

/* $KFORGE_PDL=0 at open (the A/B switch) and an sm_80 device (no
 * griddepcontrol in its code, no attribute; kf_device_set_pdl cannot turn
 * it on) launch every kernel plainly. */
static void pdl_is_off_with_the_switch_and_below_sm90(void **state)
{
    for (int why = 0; why < 2; why++) {
        setenv(why ? "MOCKCUDA_CC" : "KFORGE_PDL", why ? "80" : "0", 1);
        for (int path = 0; path < 2; path++) {
            gfx g;
            float k = 0.0f;
            kf_device_props dp;
            gfx_make(&g, path ? KF_BACKEND_PTX : KF_BACKEND_CUDA);
            kf_device_props_get(g.d, &dp);
            assert_int_equal(dp.arch, why ? 80 : 90);
            assert_false(kf_device_pdl(g.d));
            assert_int_equal(launch_pdl_flag(&g, &k), 0);
            assert_int_equal(kf_device_set_pdl(g.d, true), !why);   /* the switch is a default; sm_80 cannot */
            assert_int_equal(launch_pdl_flag(&g, &k), !why);
            gfx_free(&g);
        }
        unsetenv(why ? "MOCKCUDA_CC" : "KFORGE_PDL");
    }
}

/* A graph keeps what it was recorded with: recorded with PDL, its nodes
 * replay as programmatic dependents, also after a re-target updated them
 * (the update leaves the edges alone); recorded without, they do not. */
static void graphs_keep_the_pdl_they_were_recorded_with(void **state)
{
    for (int on = 1; on >= 0; on--) {
        gfx g;
        kf_error e = {0};
        gfx_make(&g, KF_BACKEND_PTX);
        kf_device_set_pdl(g.d, on);
        kf_graph *gr = record_twice(&g);
        kf_device_set_pdl(g.d, !on);   /* later launches change, the graph does not */
        assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_int_equal(last_launch()->pdl, on);
        expect_y(g.y, 2.0f, N);
        kf_value a3 = {.type = kf_type_scalar(KF_S_F32)};
        float three = 3.0f;
        memcpy(&a3.lane[0], &three, 4);
        assert_int_equal(kf_plan_set_value(g.plan, 0, &a3, &e), KF_OK);
        int updates = mock_calls("cuGraphExecKernelNodeSetParams_v2");
        assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_SYNC, NULL, &e), KF_OK);
        assert_int_equal(mock_calls("cuGraphExecKernelNodeSetParams_v2"), updates + 2);
        assert_int_equal(last_launch()->pdl, on);
        expect_y(g.y, 8.0f, N);
        kf_graph_destroy(gr);
        gfx_free(&g);
    }
}

/* A refused node update of a graph with programmatic dependents says how
 * to record one without. */
static void refused_update_of_a_pdl_graph_names_the_switch(void **state)
{
    gfx g;
    kf_error e = {0};
    gfx_make(&g, KF_BACKEND_CUDA);
    kf_graph *gr = record_twice(&g);
    kf_value a3 = {.type = kf_type_scalar(KF_S_F32)};
    assert_int_equal(kf_plan_set_value(g.plan, 0, &a3, &e), KF_OK);
    mock_fail("cuGraphExecKernelNodeSetParams_v2", 1);
    assert_int_equal(kf_graph_launch(gr, KF_DISPATCH_SYNC, NULL, &e), KF_ERR_DEVICE);
    assert_non_null(strstr(e.msg, "cuGraphExecKernelNodeSetParams failed"));
    assert_non_null(strstr(e.msg, "the graph holds 2 programmatic dependent launches"));
    assert_non_null(strstr(e.msg, "KFORGE_PDL=0"));
    kf_error_clear(&e);
    kf_graph_destroy(gr);
    gfx_free(&g);
}


static void kernel_fault_is_a_runtime_error(void **state)
{
    kf_pipeline *p;
    kf_error e = {0};
    const char *wild = "extern \"C\" __global__ void wild(float a, const float *x, float *y, unsigned n) {}\n";
    assert_int_equal(make_raw(KF_SRC_CUDA, wild, "wild", true, &p, &e), KF_OK);
    vecs v;
    vecs_make(&v, 1.0f, N);
    kf_launch l = {.count = N};
    assert_int_equal(kf_dispatch(p, v.a, 4, &l, KF_DISPATCH_ASYNC, NULL, &e), KF_OK);
    assert_int_equal(kf_device_sync(dev, &e), KF_ERR_RUNTIME);
    assert_non_null(strstr(e.msg, "cuStreamSynchronize"));
    assert_non_null(strstr(e.msg, "CUDA_ERROR_ILLEGAL_ADDRESS"));
    vecs_free(&v);
    kf_pipeline_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_reports_driver_properties),
        cmocka_unit_test(missing_ordinal_is_device_error),
        cmocka_unit_test(buffers_round_trip_and_are_freed),
        cmocka_unit_test(raw_cuda_c_builds_and_launches),
        cmocka_unit_test(loaded_ptx_needs_no_nvrtc),
        cmocka_unit_test(cache_serves_memory_then_disk_and_rebuilds_corrupt),
        cmocka_unit_test(async_plan_and_bare_launches),
        cmocka_unit_test(explicit_launch_and_dynamic_shared_reach_the_driver),
        cmocka_unit_test(schedule_shared_bytes_reach_the_driver),
        cmocka_unit_test(timed_dispatch_and_copy),
        cmocka_unit_test(timed_region_spans_several_async_launches),
        cmocka_unit_test(resources_report_registers_and_local_bytes),
        cmocka_unit_test(missing_entry_names_the_driver_call),
        cmocka_unit_test(bad_ptx_attaches_the_jit_log),
        cmocka_unit_test(nvrtc_error_attaches_the_log),
        cmocka_unit_test(kf_kernel_builds_on_both_gpu_paths),
        cmocka_unit_test(warm_start_from_source_key_skips_emit_nvrtc_and_jit),
        cmocka_unit_test(source_key_follows_everything_that_changes_the_output),
        cmocka_unit_test(source_key_miss_falls_back_to_the_text_key),
        cmocka_unit_test(ptx_jit_error_points_at_the_kf_line),
        cmocka_unit_test(module_pipelines_share_one_build_and_one_module),
        cmocka_unit_test(module_build_error_leaves_nothing),
        cmocka_unit_test(ptx_links_through_nvjitlink_when_asked),
        cmocka_unit_test(graph_replays_and_carries_retargets_without_recapture),
        cmocka_unit_test(retarget_while_recording_reaches_the_first_replay),
        cmocka_unit_test(each_plan_updates_its_own_node_whatever_the_node_order),
        cmocka_unit_test(failed_capture_names_the_launch_and_leaves_the_device_usable),
        cmocka_unit_test(waits_while_recording_are_refused_before_the_driver),
        cmocka_unit_test(graph_driver_failures_are_reported_and_recoverable),
        cmocka_unit_test(kf_kernels_launch_as_programmatic_dependents_on_sm90),
        cmocka_unit_test(raw_kernels_never_launch_as_programmatic_dependents),
        cmocka_unit_test(pdl_is_off_with_the_switch_and_below_sm90),
        cmocka_unit_test(graphs_keep_the_pdl_they_were_recorded_with),
        cmocka_unit_test(refused_update_of_a_pdl_graph_names_the_switch),
        cmocka_unit_test(kernel_fault_is_a_runtime_error),   /* last: the mock's fault is sticky */
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
