/* Every CUDA driver and NVRTC call the runtime makes, failing in turn, in CI
 * without a GPU: libcuda and NVRTC are the stand-ins of
 * tests/mock/mock_cuda.c (KF_LIBCUDA, KF_LIBNVRTC), whose fault injection
 * makes the Nth call of an API fail.
 *
 * A scenario walks the runtime's main paths: open both GPU devices, count
 * devices, create buffers, upload and download, build a raw CUDA-C kernel
 * through NVRTC, a raw PTX kernel, a .kf kernel on the cuda and ptx paths,
 * the whole module at once (kf_pipeline_create_module) on both, load the
 * kernel again from the disk cache, make a plan, dispatch sync, async and
 * timed, copy, sync, run the bare launch loop, record a graph of the plan,
 * replay it, re-target the plan and replay it again (the node updated), and
 * close everything. A
 * first run (no fault) counts the calls of every API; then, for every API
 * and every one of its calls, a fresh process runs the scenario with that
 * call failing and must show:
 *   - the failure as exactly one failed step whose error names the call
 *     (its driver name, the error name and number, and the error string),
 *     or, for the calls whose failure the runtime can only survive (frees,
 *     unloads, destroys, reading NVRTC's log), no failed step at all;
 *   - every later step working, and then a good saxpy on both devices
 *     giving the right numbers: the device stays usable;
 *   - nothing left allocated in the driver (the mock counts every handle)
 *     and, under ASan (build-asan), no leak at the process's exit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"
#include "cuda_drv.h"
#include "device.h"

#define MOCK KF_BINARY_DIR "/tests/libkf_mockcuda.so"

static int (*mock_fail)(const char *api, int n);
static int (*mock_calls)(const char *api);
static int (*mock_api_count)(void);
static const char *(*mock_api_name)(int i);
static int (*mock_faults_fired)(void);
static int (*mock_live_handles)(void);

static int group_setup(void **state)
{
    setenv("KF_LIBCUDA", MOCK, 1);
    setenv("KF_LIBNVRTC", MOCK, 1);
    void *h = dlopen(MOCK, RTLD_NOW);
    if (!h) return -1;
    *(void **)&mock_fail = dlsym(h, "mock_fail");
    *(void **)&mock_calls = dlsym(h, "mock_calls");
    *(void **)&mock_api_count = dlsym(h, "mock_api_count");
    *(void **)&mock_api_name = dlsym(h, "mock_api_name");
    *(void **)&mock_faults_fired = dlsym(h, "mock_faults_fired");
    *(void **)&mock_live_handles = dlsym(h, "mock_live_handles");
    return mock_fail && mock_calls && mock_api_count && mock_api_name && mock_faults_fired && mock_live_handles ? 0 : -1;
}

/* ---- the scenario ------------------------------------------------------------------ */
enum { N = 1000, SKIP = -1 };

static const char *saxpy_cu =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";
static const char *saxpy_ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry saxpy(\n.param .f32 a\n)\n{\nret;\n}\n";
static const char *saxpy_kf =
    "@schedule(block = 256, grid = cdiv(n, 256))\n"
    "kernel saxpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { y[i] = a * x[i] + y[i]; }\n"
    "}\n"
    "@schedule(block = 64, grid = 1)\n"
    "kernel fill(y: &mut [f32]) { y[global_id.x] = 2.0; }\n";

static const kf_ir_param saxpy_params[4] = {
    {"a", {KF_TK_SCALAR, KF_S_F32, 1, 0, 0}, {0}, 0},
    {"x", {KF_TK_BUFFER, KF_S_F32, 1, 0, 0}, {0}, 4},
    {"y", {KF_TK_BUFFER, KF_S_F32, 1, KF_TF_MUT, 0}, {0}, 4},
    {"n", {KF_TK_SCALAR, KF_S_U32, 1, 0, 0}, {0}, 0},
};

typedef struct {
    kf_device *cu, *ptx;
    kf_buffer *x, *y;
    bool uploaded;
    kf_module *m;
    kf_pipeline *raw_cu, *raw_ptx, *kf_cu, *kf_ptx, *kf_disk;
    kf_pipeline *mod_cu[2], *mod_ptx[2];   /* kf_pipeline_create_module: both kernels, one build */
    kf_plan *plan;
    kf_graph *graph;
    bool faulted;            /* a fault is armed: the disk load may have to build */
    int failures;            /* steps that failed */
    char first[1200];        /* the first failed step and its error */
} world;

static kf_status raw(kf_device *d, kf_src_kind kind, bool uncached, kf_pipeline **p, kf_error *e)
{
    kf_raw_kernel rk = {kind, kind == KF_SRC_CUDA ? saxpy_cu : saxpy_ptx, "saxpy", saxpy_params, 4, {128, 1, 1}, 0,
                        uncached};
    return kf_pipeline_create_raw(d, &rk, p, e);
}

static void saxpy_args(kf_arg a[4], kf_buffer *x, kf_buffer *y, float alpha)
{
    a[0] = (kf_arg){.value = {.type = kf_type_scalar(KF_S_F32)}};
    memcpy(&a[0].value.lane[0], &alpha, 4);
    a[1] = (kf_arg){.buf = x};
    a[2] = (kf_arg){.buf = y};
    a[3] = (kf_arg){.value = {.type = kf_type_scalar(KF_S_U32), .lane = {N}}};
}

static int s_open_cuda(world *w, kf_error *e) { return kf_device_open(KF_BACKEND_CUDA, 0, &w->cu, e); }
static int s_open_ptx(world *w, kf_error *e) { return kf_device_open(KF_BACKEND_PTX, 0, &w->ptx, e); }

static int s_count(world *w, kf_error *e)
{
    int n = 0, v = 0;
    kf_status st = kf_cuda_device_count(&n, &v, e);
    if (st == KF_OK && (n != 1 || v != 99000)) fail_msg("kf_cuda_device_count: %d GPUs, driver %d", n, v);
    return st;
}

static int s_buffers(world *w, kf_error *e)
{
    if (!w->ptx) return SKIP;
    kf_status st = kf_buffer_create(w->ptx, kf_type_scalar(KF_S_F32), N, &w->x, e);
    return st == KF_OK ? kf_buffer_create(w->ptx, kf_type_scalar(KF_S_F32), N, &w->y, e) : st;
}

static int s_upload(world *w, kf_error *e)
{
    if (!w->x || !w->y) return SKIP;
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
    kf_status st = kf_buffer_upload(w->x, hx, sizeof hx, e);
    if (st == KF_OK) st = kf_buffer_upload(w->y, hy, sizeof hy, e);
    w->uploaded = st == KF_OK;
    return st;
}

static int s_download(world *w, kf_error *e)
{
    if (!w->y) return SKIP;
    float hy[N];
    kf_status st = kf_buffer_download(w->y, hy, sizeof hy, e);
    if (st == KF_OK && w->uploaded && (hy[0] != 1.0f || hy[N - 1] != 1.0f)) fail_msg("download: y[0] = %g", hy[0]);
    return st;
}

static int s_raw_cuda(world *w, kf_error *e) { return w->cu ? (int)raw(w->cu, KF_SRC_CUDA, false, &w->raw_cu, e) : SKIP; }
static int s_raw_ptx(world *w, kf_error *e) { return w->ptx ? (int)raw(w->ptx, KF_SRC_PTX, true, &w->raw_ptx, e) : SKIP; }

static int s_kf_cuda(world *w, kf_error *e)
{
    return w->cu ? (int)kf_pipeline_create(w->cu, w->m, &w->m->kernels[0], &w->kf_cu, e) : SKIP;
}

static int s_kf_ptx(world *w, kf_error *e)
{
    return w->ptx ? (int)kf_pipeline_create(w->ptx, w->m, &w->m->kernels[0], &w->kf_ptx, e) : SKIP;
}

/* Every kernel of the module at once, on both paths. */
static int s_module(world *w, kf_error *e)
{
    if (!w->cu || !w->ptx) return SKIP;
    kf_status st = kf_pipeline_create_module(w->cu, w->m, w->mod_cu, e);
    return st == KF_OK ? kf_pipeline_create_module(w->ptx, w->m, w->mod_ptx, e) : st;
}

/* The .kf kernel again with the memory cache emptied: the disk entry. */
static int s_cache_load(world *w, kf_error *e)
{
    if (!w->ptx) return SKIP;
    kf_cache_clear(false, NULL, NULL);
    kf_status st = kf_pipeline_create(w->ptx, w->m, &w->m->kernels[0], &w->kf_disk, e);
    if (st == KF_OK && !w->faulted && kf_pipeline_origin(w->kf_disk) != KF_FROM_DISK) fail_msg("not loaded from disk");
    return st;
}

static int s_plan(world *w, kf_error *e)
{
    if (!w->raw_ptx || !w->x || !w->y) return SKIP;
    kf_arg a[4];
    saxpy_args(a, w->x, w->y, 1.0f);
    kf_launch l = {.count = N};
    kf_status st = kf_plan_create(w->raw_ptx, a, 4, &l, &w->plan, e);
    return st == KF_OK ? kf_plan_launch(w->plan, KF_DISPATCH_SYNC, NULL, e) : st;
}

static int s_async(world *w, kf_error *e)
{
    if (!w->raw_ptx || !w->x || !w->y) return SKIP;
    kf_arg a[4];
    saxpy_args(a, w->x, w->y, 1.0f);
    kf_launch l = {.count = N};
    kf_status st = kf_dispatch(w->raw_ptx, a, 4, &l, KF_DISPATCH_ASYNC, NULL, e);
    return st == KF_OK ? kf_device_sync(w->ptx, e) : st;
}

static int s_timed(world *w, kf_error *e)
{
    if (!w->kf_ptx || !w->x || !w->y) return SKIP;
    kf_arg a[4];
    saxpy_args(a, w->x, w->y, 1.0f);
    float ms = -1;
    kf_status st = kf_dispatch(w->kf_ptx, a, 4, NULL, KF_DISPATCH_TIMED, &ms, e);
    if (st == KF_OK && !(ms > 0)) fail_msg("timed dispatch: %g ms", ms);
    return st;
}

static int s_copy(world *w, kf_error *e)
{
    if (!w->x || !w->y) return SKIP;
    float ms = -1;
    kf_status st = kf_buffer_copy(w->y, w->x, 64, KF_DISPATCH_TIMED, &ms, e);
    return st == KF_OK ? kf_buffer_copy(w->y, w->x, 64, KF_DISPATCH_SYNC, NULL, e) : st;
}

static int s_bench(world *w, kf_error *e)
{
    double us = -1;
    return w->plan ? (int)kf_plan_bench_bare(w->plan, 2, &us, e) : SKIP;
}

/* A graph of two launches of the plan, replayed, then the plan re-targeted
 * (a = 2) and replayed again: the update must reach the graph. */
static int s_graph(world *w, kf_error *e)
{
    if (!w->plan || !w->x || !w->y) return SKIP;
    float x[N], y0[N], y[N];
    kf_value a2 = {.type = kf_type_scalar(KF_S_F32)};
    float two = 2.0f;
    memcpy(&a2.lane[0], &two, 4);
    kf_status st = kf_buffer_download(w->x, x, sizeof x, e);
    if (st == KF_OK) st = kf_buffer_download(w->y, y0, sizeof y0, e);
    if (st == KF_OK) st = kf_graph_begin(w->ptx, e);
    for (int i = 0; i < 2 && st == KF_OK; i++) st = kf_plan_launch(w->plan, KF_DISPATCH_ASYNC, NULL, e);
    if (st == KF_OK) st = kf_graph_end(w->ptx, &w->graph, e);
    if (st == KF_OK) st = kf_graph_launch(w->graph, KF_DISPATCH_SYNC, NULL, e);
    if (st == KF_OK) st = kf_plan_set_value(w->plan, 0, &a2, e);
    if (st == KF_OK) st = kf_graph_launch(w->graph, KF_DISPATCH_SYNC, NULL, e);
    if (st == KF_OK) st = kf_buffer_download(w->y, y, sizeof y, e);
    if (st == KF_OK && (y[3] != y0[3] + 6.0f * x[3] || y[N - 1] != y0[N - 1] + 6.0f * x[N - 1]))
        fail_msg("graph: y[3] = %g, want %g", y[3], y0[3] + 6.0f * x[3]);
    return st;
}

static const struct {
    const char *name;
    int (*run)(world *, kf_error *);
} steps[] = {
    {"open cuda device", s_open_cuda}, {"open ptx device", s_open_ptx}, {"count devices", s_count},
    {"create buffers", s_buffers}, {"upload", s_upload}, {"download", s_download},
    {"raw CUDA-C via NVRTC", s_raw_cuda}, {"raw PTX", s_raw_ptx}, {".kf on cuda", s_kf_cuda},
    {".kf on ptx", s_kf_ptx}, {".kf module on both", s_module}, {"disk cache load", s_cache_load}, {"plan + sync launch", s_plan},
    {"async dispatch + sync", s_async}, {"timed dispatch", s_timed}, {"copy", s_copy}, {"bare launches", s_bench},
    {"graph record, replay, re-target", s_graph},
};

static void run_steps(world *w)
{
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        kf_error e = {0};
        int st = steps[i].run(w, &e);
        if (st != KF_OK && st != SKIP && w->failures++ == 0)
            snprintf(w->first, sizeof w->first, "%s: %s", steps[i].name, e.msg);
        kf_error_clear(&e);
    }
}

/* A saxpy on d from new buffers and an uncached pipeline gives a*x + y. */
static bool good_saxpy(kf_device *d, kf_src_kind kind, char *why, size_t wn)
{
    kf_buffer *x = NULL, *y = NULL;
    kf_pipeline *p = NULL;
    kf_error e = {0};
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
    kf_arg a[4];
    kf_launch l = {.count = N};
    kf_status st = kf_buffer_create(d, kf_type_scalar(KF_S_F32), N, &x, &e);
    if (st == KF_OK) st = kf_buffer_create(d, kf_type_scalar(KF_S_F32), N, &y, &e);
    if (st == KF_OK) st = kf_buffer_upload(x, hx, sizeof hx, &e);
    if (st == KF_OK) st = kf_buffer_upload(y, hy, sizeof hy, &e);
    if (st == KF_OK) st = raw(d, kind, true, &p, &e);
    saxpy_args(a, x, y, 2.0f);
    if (st == KF_OK) st = kf_dispatch(p, a, 4, &l, KF_DISPATCH_SYNC, NULL, &e);
    if (st == KF_OK) st = kf_buffer_download(y, hy, sizeof hy, &e);
    bool ok = st == KF_OK && hy[0] == 1.0f && hy[N - 1] == 2.0f * (N - 1) + 1.0f;
    if (!ok) snprintf(why, wn, "afterwards a good saxpy on %s: %s", kf_device_name(d), st ? e.msg : "wrong values");
    kf_error_clear(&e);
    kf_pipeline_destroy(p);
    kf_buffer_destroy(x);
    kf_buffer_destroy(y);
    return ok;
}

/* Both devices (opened again if their open failed) still work. */
static bool devices_usable(world *w, char *why, size_t wn)
{
    kf_error e = {0};
    if (!w->cu && kf_device_open(KF_BACKEND_CUDA, 0, &w->cu, &e) != KF_OK) {
        snprintf(why, wn, "afterwards the cuda device does not open: %s", e.msg);
        return false;
    }
    if (!w->ptx && kf_device_open(KF_BACKEND_PTX, 0, &w->ptx, &e) != KF_OK) {
        snprintf(why, wn, "afterwards the ptx device does not open: %s", e.msg);
        return false;
    }
    return good_saxpy(w->cu, KF_SRC_CUDA, why, wn) && good_saxpy(w->ptx, KF_SRC_PTX, why, wn);
}

/* Phase A ends: what the steps made goes (the devices stay open). */
static void objects_free(world *w)
{
    kf_graph_destroy(w->graph);
    w->graph = NULL;
    kf_plan_destroy(w->plan);
    kf_pipeline *ps[] = {w->raw_cu, w->raw_ptx, w->kf_cu, w->kf_ptx, w->kf_disk};
    for (int i = 0; i < 5; i++) kf_pipeline_destroy(ps[i]);
    for (int i = 0; i < 2; i++) {
        kf_pipeline_destroy(w->mod_cu[i]);
        kf_pipeline_destroy(w->mod_ptx[i]);
        w->mod_cu[i] = w->mod_ptx[i] = NULL;
    }
    kf_buffer_destroy(w->x);
    kf_buffer_destroy(w->y);
    w->plan = NULL, w->x = w->y = NULL;
    w->raw_cu = w->raw_ptx = w->kf_cu = w->kf_ptx = w->kf_disk = NULL;
}

/* Phase A, in a fresh process: the scenario in its own cache directory,
 * then its objects destroyed. */
static void phase_a(world *w, bool faulted)
{
    char dir[] = "/tmp/kf-faults-cache-XXXXXX";
    if (!mkdtemp(dir)) fail_msg("mkdtemp");
    setenv("KFORGE_CACHE_DIR", dir, 1);
    *w = (world){.faulted = faulted};
    if (kf_compile("faults.kf", saxpy_kf, strlen(saxpy_kf), NULL, &w->m) != KF_OK) fail_msg("faults.kf does not compile");
    run_steps(w);
    objects_free(w);
}

/* Phase C: the devices closed, the cache emptied. */
static void phase_c(world *w)
{
    char dir[KF_CACHE_DIR_MAX];
    kf_cache_dir(dir, sizeof dir);
    kf_device_close(w->cu);
    kf_device_close(w->ptx);
    kf_module_free(w->m);
    kf_cache_clear(true, NULL, NULL);
    rmdir(dir);
}

/* ---- judging one injected fault ----------------------------------------------------------- */

/* Calls whose failure the runtime survives without an error to report:
 * releasing what it holds, waiting in a free or close, making the context
 * current in a close, reading NVRTC's log, and asking NVRTC's version for
 * the device properties (asked again, and reported, by the next compile). */
static bool survivable(const char *api)
{
    static const char *const list[] = {"cuMemFree_v2", "cuModuleUnload", "cuLinkDestroy", "cuEventDestroy_v2",
                                       "cuStreamDestroy_v2", "cuDevicePrimaryCtxRelease_v2", "cuStreamSynchronize",
                                       "cuGraphExecDestroy", "cuGraphDestroy",
                                       "cuCtxSetCurrent", "nvrtcDestroyProgram", "nvrtcGetProgramLogSize",
                                       "nvrtcGetProgramLog", "nvrtcVersion"};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        if (!strcmp(api, list[i])) return true;
    return false;
}

/* What the error of a failed `api` must say. */
static void expected_error(const char *api, char *out, size_t n)
{
    char name[64];
    snprintf(name, sizeof name, "%s", api);
    char *v = strrchr(name, '_');   /* the ABI suffix (_v2, _v3) is not in the message */
    if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' && !v[3]) *v = 0;
    if (!strncmp(api, "nvrtc", 5)) snprintf(out, n, "%s failed: NVRTC_ERROR_INTERNAL_ERROR (11) (", name);
    else snprintf(out, n, "%s failed: CUDA_ERROR_UNKNOWN (999): mock: injected fault (", name);
}

/* The calls of every API at the ends of phases A, B (devices_usable) and C. */
typedef struct {
    char api[64];
    int a, b, c;
} call_counts;

/* Runs the three phases with the nth call of api failing (counted from
 * the start; a call in phase B, the check itself, is not injected); 0 when
 * everything holds, else 1 after saying what did not. */
static int judge(const call_counts *cc, int nth)
{
    world w;
    char why[1600] = "", want[200];
    bool in_c = nth > cc->b;
    if (!in_c) mock_fail(cc->api, nth);
    phase_a(&w, !in_c);
    expected_error(cc->api, want, sizeof want);
    if (!in_c && mock_faults_fired() != 1)
        snprintf(why, sizeof why, "the fault was hit %d times", mock_faults_fired());
    else if (w.failures > 1)
        snprintf(why, sizeof why, "%d steps failed, the first %s", w.failures, w.first);
    else if (w.failures == 1 && !strstr(w.first, want))
        snprintf(why, sizeof why, "the error does not say '%s': %s", want, w.first);
    else if (w.failures == 0 && !survivable(cc->api))
        snprintf(why, sizeof why, "the failure was swallowed: no step failed");
    else
        devices_usable(&w, why, sizeof why);
    if (in_c) mock_fail(cc->api, nth - cc->b);
    phase_c(&w);
    if (!why[0] && mock_faults_fired() != 1) snprintf(why, sizeof why, "the fault was hit %d times", mock_faults_fired());
    if (!why[0] && mock_live_handles() != 0) snprintf(why, sizeof why, "%d driver handles left", mock_live_handles());
    if (why[0]) fprintf(stderr, "%s call %d: %s\n", cc->api, nth, why);
    return why[0] != 0;
}

/* Runs fn(arg, n) in a child process and gives its exit status (an ASan
 * leak report makes it non-zero too: the child ends with exit()). */
static int in_child(int (*fn)(const void *, int), const void *arg, int n)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60);   /* a hang fails the case instead of the whole CI run */
        exit(fn(arg, n));
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int judge_in(const void *cc, int nth) { return judge(cc, nth); }

static void snapshot(int *out, int n)
{
    for (int i = 0; i < n; i++) out[i] = mock_calls(mock_api_name(i));
}

/* The fault-free run: every step works; the calls of each API at the end
 * of each phase go to the file out_path. */
static int count_calls(const void *out_path, int unused)
{
    world w;
    int n = mock_api_count(), a[64], b[64], c[64];
    char why[1600] = "";
    phase_a(&w, false);
    snapshot(a, n);
    int bad = w.failures != 0;
    if (bad) fprintf(stderr, "fault-free scenario: %s\n", w.first);
    if (!devices_usable(&w, why, sizeof why)) bad = fprintf(stderr, "%s\n", why) > 0;
    snapshot(b, n);
    phase_c(&w);
    snapshot(c, n);
    FILE *f = fopen(out_path, "w");
    for (int i = 0; f && i < n; i++) fprintf(f, "%s %d %d %d\n", mock_api_name(i), a[i], b[i], c[i]);
    if (f) fclose(f);
    return bad || !f || n > 64 || mock_live_handles() != 0;
}

static void every_driver_and_nvrtc_call_fails_in_turn_cleanly(void **state)
{
    char counts[] = "/tmp/kf-fault-counts-XXXXXX";
    int fd = mkstemp(counts);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(in_child(count_calls, counts, 0), 0);
    FILE *f = fopen(counts, "r");
    assert_non_null(f);
    call_counts cc;
    int apis = 0, injected = 0, bad = 0;
    while (fscanf(f, "%63s %d %d %d", cc.api, &cc.a, &cc.b, &cc.c) == 4) {
        bool error_only = !strcmp(cc.api, "cuGetErrorName") || !strcmp(cc.api, "cuGetErrorString");
        if (cc.c == 0 && !error_only) fail_msg("the scenario never calls %s", cc.api);
        for (int k = 1; k <= cc.c; k++) {
            if (k > cc.a && k <= cc.b) continue;   /* phase B is the check */
            bad += in_child(judge_in, &cc, k) != 0;
            injected++;
        }
        apis++;
    }
    fclose(f);
    unlink(counts);
    print_message("%d APIs, %d injected faults, %d not handled cleanly\n", apis, injected, bad);
    assert_int_equal(apis, mock_api_count());
    assert_true(injected > 100);
    assert_int_equal(bad, 0);
}

/* The mock fails what the runtime calls: every entry of the runtime's
 * driver table is one the mock counts. */
static void the_mock_covers_the_runtimes_driver_table(void **state)
{
    static const char *const table[] = {
#define X(f, sym, r, p) sym,
        KF_CU_FUNCS(X) KF_CU_OPTIONAL(X)
#undef X
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (mock_calls(table[i]) < 0) fail_msg("the mock cannot fail %s", table[i]);
}

/* ---- the failure's message when the error's name and text fail too ------------------------ */
static int alloc_fails_with_nameless_error(const void *unused, int n)
{
    world w;
    phase_a(&w, false);
    int bad = w.failures != 0;
    mock_fail("cuMemAlloc_v2", 1);
    mock_fail("cuGetErrorName", 1);
    mock_fail("cuGetErrorString", 1);
    kf_buffer *b = (kf_buffer *)1;
    kf_error e = {0};
    bad |= kf_buffer_create(w.ptx, kf_type_scalar(KF_S_U8), 16, &b, &e) != KF_ERR_DEVICE || b != NULL;
    if (!strstr(e.msg, "cuMemAlloc failed: CUDA_ERROR_UNKNOWN (999): unknown error (")) {
        fprintf(stderr, "message: %s\n", e.msg);
        bad = 1;
    }
    char why[1600] = "";
    if (!devices_usable(&w, why, sizeof why)) bad = fprintf(stderr, "%s\n", why) > 0;
    phase_c(&w);
    return bad || mock_live_handles() != 0;
}

static void a_failure_whose_error_name_fails_still_names_the_call(void **state)
{
    assert_int_equal(in_child(alloc_fails_with_nameless_error, NULL, 0), 0);
}

/* nvrtcVersion failing for good: a CUDA-C build needs it (its cache key
 * does) and says so; the PTX path does not need NVRTC at all. */
static int nvrtc_without_version(const void *unused, int n)
{
    mock_fail("nvrtcVersion", -1);
    world w;
    phase_a(&w, true);
    int bad = 0;
    kf_pipeline *p = NULL;
    kf_error e = {0};
    kf_device_props props;
    kf_device_props_get(w.ptx, &props);
    bad |= props.nvrtc_version != 0;
    bad |= raw(w.cu, KF_SRC_CUDA, true, &p, &e) != KF_ERR_DEVICE;
    if (!strstr(e.msg, "nvrtcVersion failed: NVRTC_ERROR_INTERNAL_ERROR (11) (")) bad = fprintf(stderr, "%s\n", e.msg) > 0;
    bad |= w.failures != 3;   /* the three CUDA-C builds (raw, .kf, the module); the ptx path needs no NVRTC */
    mock_fail("nvrtcVersion", 0);
    char why[1600] = "";
    if (!devices_usable(&w, why, sizeof why)) bad = fprintf(stderr, "%s\n", why) > 0;
    phase_c(&w);
    return bad || mock_live_handles() != 0;
}

static void nvrtc_that_cannot_say_its_version_fails_cuda_c_builds_clearly(void **state)
{
    assert_int_equal(in_child(nvrtc_without_version, NULL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_mock_covers_the_runtimes_driver_table),
        cmocka_unit_test(every_driver_and_nvrtc_call_fails_in_turn_cleanly),
        cmocka_unit_test(a_failure_whose_error_name_fails_still_names_the_call),
        cmocka_unit_test(nvrtc_that_cannot_say_its_version_fails_cuda_c_builds_clearly),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
