/* Re-targeting plans and graphs on the CPU device (runtime/device.c,
 * runtime/graph.c, runtime/cpu_device.c): a plan's value or buffer changed
 * in place with no allocation and the change seen by the next launch; the
 * grid evaluated again when the schedule reads the changed value (and not
 * when the launch fixed it); every re-target error naming the argument and
 * leaving the plan as it was; a graph that records plan launches without
 * running them, replays them with their arguments as they are at the
 * replay, and refuses every call a graph cannot hold by abandoning the
 * recording with an error that names the call and the last launch, after
 * which the device runs work as before. (The CUDA side is
 * test_runtime_mockcuda.c, the real driver test_gpu_runtime.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "runtime_test_ir.h"

enum { N = 1000 };

typedef struct {
    kf_device *dev;
    ir_saxpy ir;
    kf_pipeline *p;          /* saxpy(a, x, y, n), count-based grid */
    kf_buffer *x, *y, *y2;   /* x[i] = i, y = y2 = 1 */
    kf_module *m;
    kf_pipeline *fill;       /* fill(y: &mut [u32], n): grid = cdiv(n, 64) */
    kf_error err;
} fx;

static const char *fill_kf =
    "@schedule(block = 64, grid = cdiv(n, 64))\n"
    "kernel fill(y: &mut [u32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { y[i] = i * 3 + 1; }\n"
    "}\n";

static kf_buffer *f32buf(fx *f, size_t n, float v0, float step)
{
    kf_buffer *b;
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = v0 + step * (float)i;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_F32), n, &b, &f->err), KF_OK);
    assert_int_equal(kf_buffer_upload(b, h, n * sizeof *h, &f->err), KF_OK);
    free(h);
    return b;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &f->dev, &f->err), KF_OK);
    make_saxpy(&f->ir, 4);
    assert_int_equal(kf_pipeline_create(f->dev, NULL, &f->ir.k, &f->p, &f->err), KF_OK);
    f->x = f32buf(f, N, 0.0f, 1.0f);
    f->y = f32buf(f, N, 1.0f, 0.0f);
    f->y2 = f32buf(f, N, 1.0f, 0.0f);
    assert_int_equal(kf_compile("fill.kf", fill_kf, strlen(fill_kf), NULL, &f->m), KF_OK);
    assert_int_equal(kf_pipeline_create(f->dev, f->m, &f->m->kernels[0], &f->fill, &f->err), KF_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    kf_buffer_destroy(f->x);
    kf_buffer_destroy(f->y);
    kf_buffer_destroy(f->y2);
    kf_pipeline_destroy(f->p);
    kf_pipeline_destroy(f->fill);
    kf_module_free(f->m);
    kf_device_close(f->dev);
    kf_error_clear(&f->err);
    free(f);
    return 0;
}

static kf_plan *saxpy_plan(fx *f, float alpha)
{
    kf_arg a[4] = {{NULL, f32v(alpha)}, {.buf = f->x}, {.buf = f->y}, {NULL, u32v(N)}};
    kf_launch l = {.count = N};
    kf_plan *plan;
    assert_int_equal(kf_plan_create(f->p, a, 4, &l, &plan, &f->err), KF_OK);
    return plan;
}

/* Buffer b holds 1 + k·i at element i (saxpy applied with a summing to k). */
static void expect_saxpy(fx *f, kf_buffer *b, float k)
{
    float y[N];
    assert_int_equal(kf_buffer_download(b, y, sizeof y, &f->err), KF_OK);
    for (int i = 0; i < N; i += 37)
        if (y[i] != 1.0f + k * (float)i) fail_msg("y[%d] = %g, want %g", i, y[i], 1.0f + k * (float)i);
}

static void expect_error(fx *f, kf_status got, const char *n1, const char *n2)
{
    assert_int_equal(got, KF_ERR_USAGE);
    if (!strstr(f->err.msg, n1) || (n2 && !strstr(f->err.msg, n2)))
        fail_msg("message '%s' lacks '%s' / '%s'", f->err.msg, n1, n2 ? n2 : "");
}

/* ---- re-targeting ------------------------------------------------------------------ */

static void retargeted_value_and_buffer_take_effect_without_allocating(void **state)
{
    fx *f = *state;
    kf_plan *plan = saxpy_plan(f, 2.0f);
    assert_int_equal(kf_pipeline_param_index(f->p, "y"), 2);
    assert_int_equal(kf_pipeline_param_index(f->p, "nope"), -1);
    kf_value a3 = f32v(3.0f);
    uint64_t before = kf_rt_alloc_count();
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_plan_set_value(plan, 0, &a3, &f->err), KF_OK);
    assert_int_equal(kf_plan_set_buffer(plan, 2, f->y2, &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_rt_alloc_count(), before);
    expect_saxpy(f, f->y, 2.0f);    /* the first launch, before the change */
    expect_saxpy(f, f->y2, 3.0f);   /* the second: a = 3 into y2 */
    kf_plan_destroy(plan);
}

/* The grid of fill is cdiv(n, 64): n re-targeted moves it, with no allocation. */
static void retargeted_value_the_schedule_reads_moves_the_grid(void **state)
{
    fx *f = *state;
    kf_buffer *y;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_U32), 300, &y, &f->err), KF_OK);
    kf_arg a[2] = {{.buf = y}, {NULL, u32v(100)}};
    kf_plan *plan;
    assert_int_equal(kf_plan_create(f->fill, a, 2, NULL, &plan, &f->err), KF_OK);
    uint32_t grid[3], block[3], dyn = 9;
    kf_plan_shape(plan, grid, block, &dyn);
    assert_int_equal(grid[0], 2);
    assert_int_equal(block[0], 64);
    assert_int_equal(dyn, 0);
    kf_value n = u32v(300);
    uint64_t before = kf_rt_alloc_count();
    assert_int_equal(kf_plan_set_value(plan, 1, &n, &f->err), KF_OK);
    assert_int_equal(kf_rt_alloc_count(), before);
    kf_plan_shape(plan, grid, NULL, NULL);
    assert_int_equal(grid[0], 5);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    uint32_t got[300];
    assert_int_equal(kf_buffer_download(y, got, sizeof got, &f->err), KF_OK);
    assert_int_equal(got[299], 299 * 3 + 1);
    /* n = 0 gives an empty grid: refused in creation's words, the plan unchanged. */
    kf_value zero = u32v(0);
    expect_error(f, kf_plan_set_value(plan, 1, &zero, &f->err), "grid.x = cdiv(n, 64)", "must be in 1..");
    kf_plan_shape(plan, grid, NULL, NULL);
    assert_int_equal(grid[0], 5);
    kf_plan_destroy(plan);
    /* A grid the launch fixes stays as given. */
    kf_launch l = {.grid = {1, 1, 1}};
    assert_int_equal(kf_plan_create(f->fill, a, 2, &l, &plan, &f->err), KF_OK);
    assert_int_equal(kf_plan_set_value(plan, 1, &n, &f->err), KF_OK);
    kf_plan_shape(plan, grid, NULL, NULL);
    assert_int_equal(grid[0], 1);
    kf_plan_destroy(plan);
    kf_buffer_destroy(y);
}

static void retarget_errors_name_the_argument_and_leave_the_plan(void **state)
{
    fx *f = *state;
    kf_plan *plan = saxpy_plan(f, 2.0f);
    kf_value a = f32v(5.0f), n = u32v(7);
    kf_buffer *small, *u32s, *ro, *other_x;
    kf_device *cpu2;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_F32), N - 1, &small, &f->err), KF_OK);
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_U32), N, &u32s, &f->err), KF_OK);
    assert_int_equal(kf_buffer_view(f->y2, 0, N, &ro, &f->err), KF_OK);
    kf_buffer_set_readonly(ro, true);
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &cpu2, &f->err), KF_OK);
    assert_int_equal(kf_buffer_create(cpu2, kf_type_scalar(KF_S_F32), N, &other_x, &f->err), KF_OK);
    expect_error(f, kf_plan_set_value(plan, 4, &a, &f->err), "kernel 'saxpy' has 4 arguments", "no argument 4");
    expect_error(f, kf_plan_set_value(plan, 1, &a, &f->err), "argument 1 'x' of 'saxpy' is a buffer",
                 "kf_plan_set_buffer");
    expect_error(f, kf_plan_set_buffer(plan, 0, f->y2, &f->err), "argument 0 'a' of 'saxpy' is a value",
                 "kf_plan_set_value");
    expect_error(f, kf_plan_set_value(plan, 0, &n, &f->err), "argument 0 'a' of 'saxpy' has type f32", "u32");
    expect_error(f, kf_plan_set_buffer(plan, 2, NULL, &f->err), "argument 2 'y'", "not NULL");
    expect_error(f, kf_plan_set_buffer(plan, 1, u32s, &f->err), "argument 1 'x' of 'saxpy' is &[f32]", "u32");
    expect_error(f, kf_plan_set_buffer(plan, 2, ro, &f->err), "argument 2 'y' of 'saxpy'", "read-only");
    expect_error(f, kf_plan_set_buffer(plan, 2, small, &f->err), "holds 3996 bytes (999 elements)",
                 "made with 4000 bytes");
    expect_error(f, kf_plan_set_buffer(plan, 1, other_x, &f->err), "argument 1 'x'", "another device");
    expect_error(f, kf_plan_set_buffer(plan, 1, f->y, &f->err), "arguments 1 'x' (read-only) and 2 'y' (writable)",
                 "overlap");
    /* Nothing changed: the plan computes y += 2x as made. */
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    expect_saxpy(f, f->y, 2.0f);
    kf_plan_destroy(plan);
    kf_buffer_destroy(other_x);
    kf_device_close(cpu2);
    kf_buffer_destroy(ro);
    kf_buffer_destroy(u32s);
    kf_buffer_destroy(small);
}

/* ---- graphs ------------------------------------------------------------------------ */

/* Recording runs nothing; a replay runs the launches in order with the
 * plans' arguments as they are at the replay. */
static void cpu_graph_replays_plans_as_they_are_now(void **state)
{
    fx *f = *state;
    kf_plan *p1 = saxpy_plan(f, 1.0f), *p2 = saxpy_plan(f, 2.0f);
    kf_graph *g;
    assert_int_equal(kf_graph_begin(f->dev, &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(p1, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(p2, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_graph_end(f->dev, &g, &f->err), KF_OK);
    assert_int_equal(kf_graph_size(g), 2);
    expect_saxpy(f, f->y, 0.0f);   /* not run while recorded */
    uint64_t before = kf_rt_alloc_count();
    assert_int_equal(kf_graph_launch(g, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);
    expect_saxpy(f, f->y, 3.0f);
    kf_value a5 = f32v(5.0f);
    assert_int_equal(kf_plan_set_value(p2, 0, &a5, &f->err), KF_OK);
    assert_int_equal(kf_plan_set_buffer(p1, 2, f->y2, &f->err), KF_OK);
    float ms = -1;
    assert_int_equal(kf_graph_launch(g, KF_DISPATCH_TIMED, &ms, &f->err), KF_OK);
    assert_true(ms >= 0);
    assert_int_equal(kf_rt_alloc_count(), before);
    expect_saxpy(f, f->y, 8.0f);    /* 3 + 5 */
    expect_saxpy(f, f->y2, 1.0f);   /* p1 now writes y2 */
    assert_int_equal(kf_graph_launch(g, KF_DISPATCH_TIMED, NULL, &f->err), KF_ERR_USAGE);
    kf_graph_destroy(g);
    kf_plan_destroy(p1);
    kf_plan_destroy(p2);
}

/* A fault in a replayed launch names the launch and the interpreter's place. */
static void cpu_graph_fault_names_the_launch(void **state)
{
    fx *f = *state;
    kf_buffer *y;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_U32), 64, &y, &f->err), KF_OK);
    kf_arg a[2] = {{.buf = y}, {NULL, u32v(64)}};
    kf_plan *plan;
    kf_graph *g;
    assert_int_equal(kf_plan_create(f->fill, a, 2, NULL, &plan, &f->err), KF_OK);
    assert_int_equal(kf_graph_begin(f->dev, &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_graph_end(f->dev, &g, &f->err), KF_OK);
    kf_value n65 = u32v(65);   /* one element past y */
    assert_int_equal(kf_plan_set_value(plan, 1, &n65, &f->err), KF_OK);
    assert_int_equal(kf_graph_launch(g, KF_DISPATCH_SYNC, NULL, &f->err), KF_ERR_RUNTIME);
    if (!strstr(f->err.msg, "graph launch 0 (kernel 'fill'): ") || !strstr(f->err.msg, "fill.kf:4"))
        fail_msg("message: %s", f->err.msg);
    kf_graph_destroy(g);
    kf_plan_destroy(plan);
    kf_buffer_destroy(y);
}

/* Call `what` while recording one launch of plan; it must be refused naming
 * itself and the launch, and kf_graph_end must then report the abandoned
 * recording; afterwards the plan runs eagerly again. */
typedef kf_status (*rec_call)(fx *f, kf_plan *plan);

static void refused_while_recording(fx *f, rec_call call, const char *what)
{
    kf_plan *plan = saxpy_plan(f, 1.0f);
    kf_graph *g = (kf_graph *)1;
    assert_int_equal(kf_graph_begin(f->dev, &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    kf_error_clear(&f->err);
    kf_status st = call(f, plan);
    if (st != KF_ERR_USAGE || !strstr(f->err.msg, what) || !strstr(f->err.msg, "recording is abandoned") ||
        !strstr(f->err.msg, "graph recording on cpu (kforge interpreter): "))
        fail_msg("%s: status %d, message '%s'", what, st, f->err.msg);
    assert_int_equal(kf_graph_end(f->dev, &g, &f->err), KF_ERR_USAGE);
    assert_null(g);
    if (!strstr(f->err.msg, "the graph recording was abandoned: ") || !strstr(f->err.msg, what))
        fail_msg("kf_graph_end after %s: '%s'", what, f->err.msg);
    assert_int_equal(kf_graph_end(f->dev, &g, &f->err), KF_ERR_USAGE);   /* reported once */
    assert_non_null(strstr(f->err.msg, "no graph is being recorded on cpu"));
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, &f->err), KF_OK);   /* eager again */
    expect_saxpy(f, f->y, 1.0f);
    float reset[N];
    for (int i = 0; i < N; i++) reset[i] = 1.0f;
    assert_int_equal(kf_buffer_upload(f->y, reset, sizeof reset, &f->err), KF_OK);
    kf_plan_destroy(plan);
}

static kf_status c_sync(fx *f, kf_plan *p) { return kf_device_sync(f->dev, &f->err); }
static kf_status c_sync_launch(fx *f, kf_plan *p) { return kf_plan_launch(p, KF_DISPATCH_SYNC, NULL, &f->err); }
static kf_status c_upload(fx *f, kf_plan *p) { float v = 0; return kf_buffer_upload(f->y2, &v, 4, &f->err); }
static kf_status c_download(fx *f, kf_plan *p) { float v; return kf_buffer_download(f->y2, &v, 4, &f->err); }
static kf_status c_copy(fx *f, kf_plan *p) { return kf_buffer_copy(f->y2, f->x, 4, KF_DISPATCH_ASYNC, NULL, &f->err); }
static kf_status c_begin(fx *f, kf_plan *p) { return kf_graph_begin(f->dev, &f->err); }

static kf_status c_dispatch(fx *f, kf_plan *p)
{
    kf_arg a[4] = {{NULL, f32v(1.0f)}, {.buf = f->x}, {.buf = f->y2}, {NULL, u32v(N)}};
    kf_launch l = {.count = N};
    return kf_dispatch(f->p, a, 4, &l, KF_DISPATCH_ASYNC, NULL, &f->err);
}

static kf_status c_create(fx *f, kf_plan *p)
{
    kf_buffer *b = (kf_buffer *)1;
    kf_status st = kf_buffer_create(f->dev, kf_type_scalar(KF_S_F32), 4, &b, &f->err);
    assert_null(b);
    return st;
}

static kf_status c_pipeline(fx *f, kf_plan *p)
{
    kf_pipeline *q = (kf_pipeline *)1;
    kf_status st = kf_pipeline_create(f->dev, f->m, &f->m->kernels[0], &q, &f->err);
    assert_null(q);
    return st;
}

/* A launch that is refused for a reason of its own abandons the recording
 * too (an invalid launch: kforge.h), not only those a graph cannot hold. */
static kf_status c_timed_no_ms(fx *f, kf_plan *p) { return kf_plan_launch(p, KF_DISPATCH_TIMED, NULL, &f->err); }
static kf_status c_bad_mode(fx *f, kf_plan *p) { return kf_plan_launch(p, (kf_dispatch_mode)7, NULL, &f->err); }

static kf_status c_dispatch_bad_mode(fx *f, kf_plan *p)
{
    kf_arg a[4] = {{NULL, f32v(1.0f)}, {.buf = f->x}, {.buf = f->y2}, {NULL, u32v(N)}};
    kf_launch l = {.count = N};
    return kf_dispatch(f->p, a, 4, &l, (kf_dispatch_mode)9, NULL, &f->err);
}

static kf_status c_readonly(fx *f, kf_plan *p)
{
    kf_buffer_set_readonly(f->y, true);   /* after the plan was made: its launch is refused */
    kf_status st = kf_plan_launch(p, KF_DISPATCH_ASYNC, NULL, &f->err);
    kf_buffer_set_readonly(f->y, false);
    return st;
}

static kf_status c_timer(fx *f, kf_plan *p) { return kf_device_timer_start(f->dev, &f->err); }
static kf_status c_timer_stop(fx *f, kf_plan *p) { return kf_device_timer_stop(f->dev, NULL, &f->err); }

static kf_graph *made;   /* a graph made before the recording (c_graph_launch) */

static kf_status c_graph_launch(fx *f, kf_plan *p) { return kf_graph_launch(made, KF_DISPATCH_TIMED, NULL, &f->err); }

static void recording_refuses_what_a_graph_cannot_hold(void **state)
{
    fx *f = *state;
    kf_plan *first = saxpy_plan(f, 1.0f);
    assert_int_equal(kf_graph_begin(f->dev, &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(first, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    assert_int_equal(kf_graph_end(f->dev, &made, &f->err), KF_OK);
    refused_while_recording(f, c_timed_no_ms, "launch 1 (kernel 'saxpy') is refused: a timed dispatch needs");
    refused_while_recording(f, c_bad_mode, "launch 1 (kernel 'saxpy') is refused: kf_plan_launch: unknown dispatch mode 7");
    refused_while_recording(f, c_readonly, "launch 1 (kernel 'saxpy') is refused: argument 2");
    refused_while_recording(f, c_dispatch_bad_mode, "kf_dispatch (its plan does not outlive the call");
    refused_while_recording(f, c_graph_launch, "kf_graph_launch after launch 0");
    refused_while_recording(f, c_timer, "kf_device_timer_start after launch 0");   /* (the CPU has no timer) */
    refused_while_recording(f, c_timer_stop, "kf_device_timer_stop after launch 0");
    kf_graph_destroy(made);
    kf_plan_destroy(first);
    refused_while_recording(f, c_sync, "kf_device_sync after launch 0 (kernel 'saxpy')");
    refused_while_recording(f, c_sync_launch, "launch 1 (kernel 'saxpy') is KF_DISPATCH_SYNC");
    refused_while_recording(f, c_upload, "kf_buffer_upload after launch 0");
    refused_while_recording(f, c_download, "kf_buffer_download after launch 0");
    refused_while_recording(f, c_copy, "kf_buffer_copy after launch 0");
    refused_while_recording(f, c_dispatch, "kf_dispatch (its plan does not outlive the call");
    refused_while_recording(f, c_create, "kf_buffer_create after launch 0");
    refused_while_recording(f, c_pipeline, "kf_pipeline_create after launch 0");
    refused_while_recording(f, c_begin, "kf_graph_begin (a second recording) after launch 0");
}

static void graph_end_needs_a_recording_with_launches(void **state)
{
    fx *f = *state;
    kf_graph *g = (kf_graph *)1;
    assert_int_equal(kf_graph_end(f->dev, &g, &f->err), KF_ERR_USAGE);
    assert_null(g);
    assert_non_null(strstr(f->err.msg, "no graph is being recorded on cpu (kforge interpreter): call kf_graph_begin"));
    assert_int_equal(kf_graph_begin(f->dev, &f->err), KF_OK);
    assert_int_equal(kf_graph_end(f->dev, &g, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "kf_graph_end before any launch: a graph needs at least one launch"));
    /* Destroying a buffer abandons a recording: kf_graph_end says so. */
    kf_plan *plan = saxpy_plan(f, 1.0f);
    kf_buffer *tmp;
    assert_int_equal(kf_buffer_create(f->dev, kf_type_scalar(KF_S_F32), 4, &tmp, &f->err), KF_OK);
    assert_int_equal(kf_graph_begin(f->dev, &f->err), KF_OK);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_ASYNC, NULL, &f->err), KF_OK);
    kf_buffer_destroy(tmp);
    assert_int_equal(kf_graph_end(f->dev, &g, &f->err), KF_ERR_USAGE);
    assert_non_null(strstr(f->err.msg, "abandoned: a buffer was destroyed while recording"));
    kf_plan_destroy(plan);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(retargeted_value_and_buffer_take_effect_without_allocating),
        T(retargeted_value_the_schedule_reads_moves_the_grid),
        T(retarget_errors_name_the_argument_and_leave_the_plan),
        T(cpu_graph_replays_plans_as_they_are_now),
        T(cpu_graph_fault_names_the_launch),
        T(recording_refuses_what_a_graph_cannot_hold),
        T(graph_end_needs_a_recording_with_launches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
