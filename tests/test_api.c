/* The public API (include/kforge.h) as a user sees it: this file includes
 * nothing else of kforge, and is compiled with -Wpedantic so the header is
 * checked as strict C11 too (tests/api_header.cpp does C++17). Each test
 * names the promise of the header it checks: version macros and
 * kf_version, status names, the value constructors' bits, diagnostics,
 * reflection, kf_emit, kf_params_parse, and on the CPU device dispatch,
 * wrapped memory, views outliving their parent, and the read-only rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kforge.h>

static const char axpy_src[] =
    "const BLOCK: u32 = 64;\n"
    "@schedule(block = BLOCK, grid = cdiv(n, BLOCK), min_blocks = 0)\n"   /* 0: no bound, as not given */
    "kernel axpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {\n"
    "    let i = global_id.x;\n"
    "    if i < n { y[i] = a * x[i] + y[i]; }\n"
    "}\n"
    "@schedule(block = (8, 4), shared = n * 4, min_blocks = 16)\n"
    "kernel scale(v: &mut [f32x4], s: f16, n: u32) {\n"
    "    shared t: f32[];\n"
    "    v[0] = v[0] * f32x4(s as f32);\n"
    "}\n";

static kf_module *compile_ok(const char *src)
{
    kf_module *m = NULL;
    kf_status st = kf_compile("api.kf", src, strlen(src), NULL, &m);
    if (st != KF_OK) fprintf(stderr, "%s", m ? kf_module_diagnostics(m) : "no module\n");
    assert_int_equal(st, KF_OK);
    return m;
}

/* KF_VERSION, KF_VERSION_NUMBER and kf_version agree with each other. */
static void test_version_macros_match_the_library(void **state)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", KF_VERSION_MAJOR, KF_VERSION_MINOR, KF_VERSION_PATCH);
    assert_string_equal(KF_VERSION, want);
    assert_string_equal(kf_version(), KF_VERSION);
    assert_int_equal(kf_version_number(), KF_VERSION_MAJOR * 10000 + KF_VERSION_MINOR * 100 + KF_VERSION_PATCH);
    assert_int_equal(kf_version_number(), KF_VERSION_NUMBER);
}

static void test_status_names(void **state)
{
    assert_string_equal(kf_status_name(KF_OK), "KF_OK");
    assert_string_equal(kf_status_name(KF_ERR_SOURCE), "KF_ERR_SOURCE");
    assert_string_equal(kf_status_name(KF_ERR_NOMEM), "KF_ERR_NOMEM");
    assert_string_equal(kf_status_name((kf_status)99), "KF_ERR_?");
}

/* Every scalar constructor gives the type and the lane bits a kernel reads. */
static void test_value_constructors_give_kernel_bits(void **state)
{
    kf_value v = kf_value_f32(2.0f);
    assert_int_equal(v.type.kind, KF_TK_SCALAR);
    assert_int_equal(v.type.scalar, KF_S_F32);
    assert_int_equal(v.lane[0], 0x40000000u);
    assert_int_equal(kf_value_f64(1.5).lane[0], UINT64_C(0x3ff8000000000000));
    assert_int_equal(kf_value_f16(1.0).lane[0], 0x3c00);
    assert_int_equal(kf_value_f16(65520.0).lane[0], 0x7c00);   /* rounds to infinity */
    assert_int_equal(kf_value_f16(1.0 + 1.0 / 2048).lane[0], 0x3c00);   /* a tie to even */
    assert_int_equal(kf_value_bf16(1.0).lane[0], 0x3f80);
    assert_int_equal(kf_value_f16_bits(0x7e00).lane[0], 0x7e00);
    assert_int_equal(kf_value_bf16_bits(0x7fc0).type.scalar, KF_S_BF16);
    assert_int_equal(kf_value_bool(true).lane[0], 1);
    assert_int_equal(kf_value_i8(-1).lane[0], 0xff);
    assert_int_equal(kf_value_u8(200).lane[0], 200);
    assert_int_equal(kf_value_i16(-2).lane[0], 0xfffe);
    assert_int_equal(kf_value_u16(65535).lane[0], 0xffff);
    assert_int_equal(kf_value_i32(-1).lane[0], 0xffffffffu);
    assert_int_equal(kf_value_u32(7).type.scalar, KF_S_U32);
    assert_int_equal(kf_value_i64(-1).lane[0], UINT64_MAX);
    assert_int_equal(kf_value_u64(UINT64_MAX).lane[0], UINT64_MAX);
    assert_true(kf_value_to_double(kf_value_i16(-2), 0) == -2.0);
    assert_true(kf_value_to_double(kf_value_bf16(0.5), 0) == 0.5);

    kf_value s = kf_value_splat(kf_value_f32(3.0f), 4);
    assert_int_equal(s.type.kind, KF_TK_VECTOR);
    assert_int_equal(s.type.lanes, 4);
    for (int i = 0; i < 4; i++) assert_int_equal(s.lane[i], 0x40400000u);
    assert_int_equal(kf_value_splat(kf_value_f64(1.0), 4).type.kind, KF_TK_VOID);   /* 32 bytes: no such vector */
    assert_int_equal(kf_value_splat(kf_value_f32(1.0f), 3).type.kind, KF_TK_VOID);

    kf_value p;
    kf_error err = {0};
    assert_int_equal(kf_value_parse("0x10", kf_type_scalar(KF_S_U32), "n", &p, &err), KF_OK);
    assert_int_equal(p.lane[0], 16);
    assert_int_equal(kf_value_parse("010", kf_type_scalar(KF_S_U32), "n", &p, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "parameter 'n'"));
}

static void test_type_names_and_sizes(void **state)
{
    char buf[32];
    assert_string_equal(kf_type_str(kf_type_buffer(kf_type_vector(KF_S_F16, 8), true), buf, sizeof buf),
                        "&mut [f16x8]");
    kf_type t = kf_type_from_name("bf16x2", 6);
    assert_int_equal(t.kind, KF_TK_VECTOR);
    assert_int_equal(kf_type_size(t), 4);
    assert_int_equal(kf_type_from_name("f32x3", 5).kind, KF_TK_VOID);
    assert_string_equal(kf_scalar_name(KF_S_BF16), "bf16");
    assert_int_equal(kf_scalar_size(KF_S_F64), 8);
    assert_string_equal(kf_scalar_name((kf_scalar)200), "none");
}

/* A bad program: the module holds the diagnostics, rendered with a caret. */
static void test_diagnostics_render_with_the_source_line(void **state)
{
    static const char bad[] = "kernel k(y: &mut [f32]) {\n    y[0] = 1.0 + true;\n}\n";
    kf_module *m = NULL;
    assert_int_equal(kf_compile("bad.kf", bad, strlen(bad), NULL, &m), KF_ERR_SOURCE);
    assert_non_null(m);
    assert_int_equal(kf_module_error_count(m), 1);
    assert_int_equal(kf_module_diag_count(m), 1);
    kf_diagnostic d;
    assert_true(kf_module_diag(m, 0, &d));
    assert_false(kf_module_diag(m, 1, &d));
    assert_int_equal(d.kind, KF_DIAG_ERROR);
    assert_string_equal(d.loc.file, "bad.kf");
    assert_int_equal(d.loc.line, 2);
    const char *text = kf_module_diagnostics(m);
    assert_non_null(strstr(text, "bad.kf:2:"));
    assert_non_null(strstr(text, "    y[0] = 1.0 + true;\n"));
    assert_non_null(strstr(text, "^\n"));
    kf_module_free(m);

    m = compile_ok(axpy_src);
    assert_string_equal(kf_module_diagnostics(m), "");
    kf_module_free(m);
}

/* kf_compile_file: I/O errors in err with no module; source errors also
 * in err, as `file:line:col: error: ...`. */
static void test_compile_file_errors(void **state)
{
    kf_module *m = (kf_module *)1;
    kf_error err = {0};
    assert_int_equal(kf_compile_file("/nonexistent/x.kf", NULL, &m, &err), KF_ERR_IO);
    assert_null(m);
    assert_non_null(strstr(err.msg, "/nonexistent/x.kf"));

    char path[] = "/tmp/kf_api_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("kernel k(n: u32) {\n  let x = nope;\n}\n", f);
    fclose(f);
    kf_error_clear(&err);
    assert_int_equal(kf_compile_file(path, NULL, &m, &err), KF_ERR_SOURCE);
    char want[64];
    snprintf(want, sizeof want, "%s:2:11: error: ", path);
    assert_memory_equal(err.msg, want, strlen(want));
    assert_int_equal(err.loc.line, 2);
    kf_module_free(m);
    remove(path);
}

/* NULL where a call needs a pointer is KF_ERR_USAGE naming it, never a
 * crash; accessors give neutral values; bad compile options and emitting
 * from a failed module or with another module's kernel are refused. */
static void test_null_arguments_are_usage_errors(void **state)
{
    (void)state;
    kf_error err = {0};
#define USAGE(call, what)                                                                                          \
    do {                                                                                                           \
        kf_error_clear(&err);                                                                                      \
        assert_int_equal((call), KF_ERR_USAGE);                                                                    \
        if (!strstr(err.msg, what)) fail_msg("'%s' lacks '%s'", err.msg, what);                                 \
    } while (0)
    assert_int_equal(kf_compile("a.kf", axpy_src, strlen(axpy_src), NULL, NULL), KF_ERR_USAGE);
    kf_module *m = NULL;
    USAGE(kf_compile_file(NULL, NULL, &m, &err), "the path is NULL");
    USAGE(kf_compile_file("a.kf", NULL, NULL, &err), "out (where the module goes) is NULL");
    kf_compile_opts bad = {NULL, 3, KF_OPT_DEFAULT};
    assert_int_equal(kf_compile("a.kf", axpy_src, strlen(axpy_src), &bad, &m), KF_ERR_USAGE);
    assert_non_null(strstr(kf_module_diagnostics(m), "opts.defines is NULL with opts.ndefines 3"));
    kf_module_free(m);
    kf_compile_opts level = {NULL, 0, (kf_opt_level)77};
    assert_int_equal(kf_compile("a.kf", axpy_src, strlen(axpy_src), &level, &m), KF_ERR_USAGE);
    assert_non_null(strstr(kf_module_diagnostics(m), "opts.opt is 77"));
    kf_module_free(m);

    USAGE(kf_device_open(KF_BACKEND_CPU, 0, NULL, &err), "out (where the device goes) is NULL");
    kf_device *dev = NULL;
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &dev, &err), KF_OK);
    kf_module *ma = compile_ok(axpy_src), *mb = compile_ok(axpy_src);
    const kf_kernel *k = kf_module_kernel(ma, "axpy");
    USAGE(kf_pipeline_create(dev, ma, k, NULL, &err), "out (where the pipeline goes) is NULL");
    USAGE(kf_buffer_create(dev, kf_type_scalar(KF_S_F32), 4, NULL, &err), "out (where the buffer goes) is NULL");
    kf_buffer *b = NULL, *v = NULL;
    USAGE(kf_buffer_view(NULL, 0, 1, &v, &err), "the parent buffer is NULL");
    assert_int_equal(kf_buffer_create(dev, kf_type_scalar(KF_S_F32), 4, &b, &err), KF_OK);
    USAGE(kf_buffer_view(b, SIZE_MAX, 2, &v, &err), "view of 2 elements at offset 18446744073709551615");
    void *text = NULL;
    size_t len = 0;
    USAGE(kf_emit(NULL, NULL, NULL, &text, &len, &err), "the module is NULL");
    USAGE(kf_emit(ma, NULL, NULL, NULL, &len, &err), "out (where the text goes) is NULL");
    USAGE(kf_emit(ma, kf_module_kernel(mb, "axpy"), NULL, &text, &len, &err), "not one of the given module's");
    kf_module *broken = NULL;
    assert_int_equal(kf_compile("b.kf", "kernel k() { nope; }", 20, NULL, &broken), KF_ERR_SOURCE);
    kf_error_clear(&err);
    assert_int_equal(kf_emit(broken, NULL, NULL, &text, &len, &err), KF_ERR_SOURCE);
    assert_non_null(strstr(err.msg, "the module has 1 error"));
    kf_module_free(broken);
    int count = 0;
    USAGE(kf_cuda_device_count(NULL, &count, &err), "count is NULL");
    USAGE(kf_cache_stats_get(NULL, &err), "out (where the statistics go) is NULL");
    USAGE(kf_graph_launch(NULL, KF_DISPATCH_SYNC, NULL, &err), "the graph is NULL");
    assert_string_equal(kf_device_name(NULL), "");
    assert_int_equal(kf_buffer_bytes(NULL), 0);
    assert_int_equal(kf_buffer_count(NULL), 0);
    assert_false(kf_buffer_readonly(NULL));
    assert_int_equal(kf_graph_size(NULL), 0);
    kf_buffer_set_readonly(NULL, true);

    /* a plan checks at launch that its &mut buffers are still writable;
     * a count with a kernel that has a grid is refused, not ignored */
    kf_buffer *x = NULL;
    assert_int_equal(kf_buffer_create(dev, kf_type_scalar(KF_S_F32), 4, &x, &err), KF_OK);
    kf_pipeline *p = NULL;
    assert_int_equal(kf_pipeline_create(dev, ma, k, &p, &err), KF_OK);
    kf_arg args[] = {kf_arg_value(kf_value_f32(2)), kf_arg_buffer(x), kf_arg_buffer(b), kf_arg_value(kf_value_u32(4))};
    kf_plan *plan = NULL;
    assert_int_equal(kf_plan_create(p, args, 4, NULL, &plan, &err), KF_OK);
    USAGE(kf_plan_set_value(plan, 3, NULL, &err), "kf_plan_set_value: the value is NULL");
    kf_buffer_set_readonly(b, true);
    USAGE(kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, &err), "marked read-only after the plan was made");
    kf_buffer_set_readonly(b, false);
    assert_int_equal(kf_plan_launch(plan, KF_DISPATCH_SYNC, NULL, &err), KF_OK);
    kf_plan_destroy(plan);
    kf_launch l = {.count = 5};
    USAGE(kf_dispatch(p, args, 4, &l, KF_DISPATCH_SYNC, NULL, &err), "kf_launch.count 5 has no effect");
    USAGE(kf_dispatch(p, NULL, 4, NULL, KF_DISPATCH_SYNC, NULL, &err), "the argument array is NULL");
    USAGE(kf_dispatch(p, args, 4, NULL, (kf_dispatch_mode)7, NULL, &err), "kf_dispatch: unknown dispatch mode 7");
    kf_pipeline_destroy(p);
    kf_buffer_destroy(x);
    kf_error_clear(&err);
#undef USAGE
    kf_buffer_destroy(b);
    kf_device_close(dev);
    kf_module_free(ma);
    kf_module_free(mb);
}

/* Kernels in source order, parameters in binding order, the schedule. */
static void test_reflection(void **state)
{
    kf_module *m = compile_ok(axpy_src);
    assert_int_equal(kf_module_kernel_count(m), 2);
    assert_null(kf_module_kernel(m, NULL));   /* two kernels: a name is needed */
    assert_null(kf_module_kernel_at(m, 2));
    const kf_kernel *k = kf_module_kernel_at(m, 0);
    assert_ptr_equal(k, kf_module_kernel(m, "axpy"));
    assert_string_equal(kf_kernel_name(k), "axpy");
    assert_int_equal(kf_kernel_loc(k).line, 3);
    assert_int_equal(kf_kernel_param_count(k), 4);
    static const char *const names[] = {"a", "x", "y", "n"};
    for (uint32_t i = 0; i < 4; i++) assert_string_equal(kf_kernel_param(k, i)->name, names[i]);
    assert_null(kf_kernel_param(k, 4));
    assert_int_equal(kf_kernel_param(k, 0)->type.kind, KF_TK_SCALAR);
    assert_int_equal(kf_kernel_param(k, 1)->type.kind, KF_TK_BUFFER);
    assert_int_equal(kf_kernel_param(k, 1)->type.flags & KF_TF_MUT, 0);
    assert_int_equal(kf_kernel_param(k, 2)->type.flags & KF_TF_MUT, KF_TF_MUT);
    assert_int_equal(kf_kernel_param_index(k, "n"), 3);
    assert_int_equal(kf_kernel_param_index(k, "z"), -1);

    kf_schedule_info si;
    kf_kernel_schedule(k, &si);
    assert_int_equal(si.block[0], 64);
    assert_int_equal(si.block[1], 1);
    assert_int_equal(si.grid_dims, 1);
    assert_false(si.has_shared);
    assert_int_equal(si.min_blocks, 0);
    kf_value args[4] = {kf_value_f32(1), {{0}, {0}}, {{0}, {0}}, kf_value_u32(1000)};
    uint32_t grid[3];
    kf_error err = {0};
    assert_int_equal(kf_schedule_grid(k, args, 0, grid, &err), KF_OK);
    assert_int_equal(grid[0], 16);
    assert_int_equal(kf_schedule_grid(k, NULL, 0, grid, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "needs the argument values, and none were given (args is NULL)"));
    kf_error_clear(&err);

    const kf_kernel *s = kf_module_kernel(m, "scale");
    kf_kernel_schedule(s, &si);
    assert_int_equal(si.block[1], 4);
    assert_int_equal(si.grid_dims, 0);
    assert_true(si.has_shared);
    assert_int_equal(si.min_blocks, 16);
    kf_value sargs[3] = {{{0}, {0}}, kf_value_f16(2.0), kf_value_u32(10)};
    uint32_t bytes = 0;
    assert_int_equal(kf_schedule_shared(s, sargs, &bytes, &err), KF_OK);
    assert_int_equal(bytes, 40);
    char t[32];
    assert_string_equal(kf_type_str(kf_kernel_param(s, 0)->type, t, sizeof t), "&mut [f32x4]");
    kf_module_free(m);
}

/* kf_emit: each text target, a kernel or all, and its errors. */
static void test_emit_targets(void **state)
{
    kf_module *m = compile_ok(axpy_src);
    kf_error err = {0};
    void *out;
    size_t len;
    kf_emit_options o = {KF_TARGET_PTX, 80, false, false};
    assert_int_equal(kf_emit(m, kf_module_kernel(m, "axpy"), &o, &out, &len, &err), KF_OK);
    assert_int_equal(strlen(out), len);
    assert_non_null(strstr(out, ".target sm_80"));
    assert_non_null(strstr(out, ".entry axpy"));
    assert_null(strstr(out, ".entry scale"));
    assert_null(strstr(out, ".minnctapersm"));   /* axpy's min_blocks = 0 */
    kf_free(out);
    o.target = KF_TARGET_CUDA;
    assert_int_equal(kf_emit(m, NULL, &o, &out, &len, &err), KF_OK);
    assert_non_null(strstr(out, "extern \"C\" __global__"));
    assert_non_null(strstr(out, "scale("));
    assert_non_null(strstr(out, "__launch_bounds__(64)\naxpy("));        /* block only */
    assert_non_null(strstr(out, "__launch_bounds__(32, 16)\nscale("));   /* min_blocks: 16 blocks an SM */
    kf_free(out);
    o.target = KF_TARGET_PTX;
    assert_int_equal(kf_emit(m, kf_module_kernel(m, "scale"), &o, &out, &len, &err), KF_OK);
    assert_non_null(strstr(out, ".maxntid 8, 4, 1\n.minnctapersm 16\n"));
    kf_free(out);
    o.target = KF_TARGET_IR;
    assert_int_equal(kf_emit(m, kf_module_kernel(m, "axpy"), &o, &out, &len, &err), KF_OK);
    assert_non_null(strstr(out, "api.kf:"));
    kf_free(out);
    o.arch = 70;
    assert_int_equal(kf_emit(m, NULL, &o, &out, &len, &err), KF_ERR_USAGE);
    assert_null(out);
    kf_module_free(m);

    m = compile_ok("const C: u32 = 1;\n");
    assert_int_equal(kf_emit(m, NULL, NULL, &out, &len, &err), KF_ERR_SOURCE);
    assert_non_null(strstr(err.msg, "api.kf:1:1: error: no kernel to emit"));
    kf_module_free(m);
}

/* The cubin target links the PTX with nvJitLink: an ELF for sm_90. */
static void test_emit_cubin_is_elf(void **state)
{
    kf_module *m = compile_ok(axpy_src);
    kf_error err = {0};
    void *out;
    size_t len;
    kf_emit_options o = {KF_TARGET_CUBIN, 90, false, false};
    kf_status st = kf_emit(m, kf_module_kernel(m, "axpy"), &o, &out, &len, &err);
    if (st == KF_ERR_DEVICE && strstr(err.msg, "nvJitLink is not available")) {
        printf("skipped: %s\n", err.msg);
        kf_module_free(m);
        skip();
    }
    assert_int_equal(st, KF_OK);
    assert_true(len > 64);
    assert_memory_equal(out, "\x7f" "ELF", 4);
    kf_free(out);
    kf_error_clear(&err);
    kf_module_free(m);
}

/* A raw kernel's parameter list in .kf syntax. */
static void test_params_parse(void **state)
{
    kf_param *p;
    uint32_t n;
    kf_error err = {0};
    assert_int_equal(kf_params_parse("x: &[f16], y: &mut [f32x4], n: u32", &p, &n, &err), KF_OK);
    assert_int_equal(n, 3);
    char t[32];
    assert_string_equal(p[0].name, "x");
    assert_string_equal(kf_type_str(p[0].type, t, sizeof t), "&[f16]");
    assert_string_equal(p[1].name, "y");
    assert_string_equal(kf_type_str(p[1].type, t, sizeof t), "&mut [f32x4]");
    assert_string_equal(kf_type_str(p[2].type, t, sizeof t), "u32");
    assert_int_equal(p[1].align, 0);
    kf_free(p);

    assert_int_equal(kf_params_parse("", &p, &n, &err), KF_OK);
    assert_int_equal(n, 0);
    kf_free(p);

    assert_int_equal(kf_params_parse("x: &[f17]", &p, &n, &err), KF_ERR_USAGE);
    assert_null(p);
    assert_non_null(strstr(err.msg, "column 6: unexpected name 'f17'"));
}

/* y = a*x + y on the CPU device: values, a created buffer and memory the
 * caller owns (kf_buffer_wrap) receiving the result in place. */
static void test_cpu_dispatch_with_wrapped_memory(void **state)
{
    kf_module *m = compile_ok(axpy_src);
    kf_error err = {0};
    kf_device *dev;
    kf_pipeline *p;
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &dev, &err), KF_OK);
    assert_int_equal(kf_pipeline_create(dev, m, kf_module_kernel(m, "axpy"), &p, &err), KF_OK);
    enum { N = 100 };
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
    kf_buffer *x, *y;
    assert_int_equal(kf_buffer_create(dev, kf_type_scalar(KF_S_F32), N, &x, &err), KF_OK);
    assert_int_equal(kf_buffer_upload(x, hx, sizeof hx, &err), KF_OK);
    assert_int_equal(kf_buffer_wrap(dev, kf_type_scalar(KF_S_F32), N, hy, &y, &err), KF_OK);
    assert_ptr_equal(kf_buffer_address(y), hy);
    assert_int_equal(kf_buffer_count(y), N);
    kf_arg args[] = {kf_arg_value(kf_value_f32(2.0f)), kf_arg_buffer(x), kf_arg_buffer(y),
                     kf_arg_value(kf_value_u32(N))};
    assert_int_equal(kf_dispatch(p, args, 4, NULL, KF_DISPATCH_SYNC, NULL, &err), KF_OK);
    for (int i = 0; i < N; i++) assert_true(hy[i] == 2.0f * (float)i + 1.0f);

    /* A mistyped argument is refused by name before anything runs. */
    args[3] = kf_arg_value(kf_value_i32(N));
    assert_int_equal(kf_dispatch(p, args, 4, NULL, KF_DISPATCH_SYNC, NULL, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "'n'"));
    assert_true(hy[1] == 3.0f);

    /* Two wraps over overlapping memory alias like two views of one buffer. */
    kf_buffer *wx, *wy;
    assert_int_equal(kf_buffer_wrap(dev, kf_type_scalar(KF_S_F32), 8, hy + 1, &wx, &err), KF_OK);
    assert_int_equal(kf_buffer_wrap(dev, kf_type_scalar(KF_S_F32), 8, hy, &wy, &err), KF_OK);
    kf_arg alias[] = {kf_arg_value(kf_value_f32(1.0f)), kf_arg_buffer(wx), kf_arg_buffer(wy), kf_arg_value(kf_value_u32(8))};
    assert_int_equal(kf_dispatch(p, alias, 4, NULL, KF_DISPATCH_SYNC, NULL, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "different buffers over overlapping memory"));
    assert_true(hy[1] == 3.0f);
    kf_buffer_destroy(wx);
    kf_buffer_destroy(wy);

    kf_buffer *bad;
    assert_int_equal(kf_buffer_wrap(dev, kf_type_scalar(KF_S_F32), 4, (char *)hy + 2, &bad, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "aligned"));
    assert_int_equal(kf_buffer_wrap(dev, kf_type_scalar(KF_S_F32), 4, NULL, &bad, &err), KF_ERR_USAGE);
    assert_int_equal(kf_device_set_stream(dev, NULL, &err), KF_ERR_USAGE);
    assert_int_equal(kf_device_reset_stream(dev, &err), KF_OK);

    /* Caller slips are usage errors, never crashes: NULL handles, another
     * module's kernel, a grid with x = 0 but y set, an unknown mode. */
    kf_module *m2 = compile_ok(axpy_src);
    kf_pipeline *q = NULL;
    kf_device *none = NULL;
    assert_int_equal(kf_pipeline_create(dev, m2, kf_module_kernel(m, "axpy"), &q, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "not one of the given module's"));
    assert_int_equal(kf_pipeline_create(NULL, m, kf_module_kernel(m, "axpy"), &q, &err), KF_ERR_USAGE);
    assert_int_equal(kf_buffer_create(NULL, kf_type_scalar(KF_S_F32), 4, &bad, &err), KF_ERR_USAGE);
    assert_int_equal(kf_dispatch(NULL, args, 4, NULL, KF_DISPATCH_SYNC, NULL, &err), KF_ERR_USAGE);
    assert_int_equal(kf_buffer_upload(x, NULL, 4, &err), KF_ERR_USAGE);
    assert_int_equal(kf_buffer_download(x, NULL, 4, &err), KF_ERR_USAGE);
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, -1, &none, &err), KF_ERR_USAGE);
    args[3] = kf_arg_value(kf_value_u32(N));
    kf_launch l = {.grid = {0, 5, 1}};
    assert_int_equal(kf_dispatch(p, args, 4, &l, KF_DISPATCH_SYNC, NULL, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "x = 0"));
    assert_int_equal(kf_dispatch(p, args, 4, NULL, (kf_dispatch_mode)77, NULL, &err), KF_ERR_USAGE);
    kf_module *m3 = NULL;
    assert_int_equal(kf_compile("x.kf", NULL, 10, NULL, &m3), KF_ERR_USAGE);
    assert_non_null(strstr(kf_module_diagnostics(m3), "NULL"));
    kf_module_free(m3);
    kf_module_free(m2);

    kf_buffer_destroy(y);   /* never frees hy (a stack array: ASan would say so) */
    kf_buffer_destroy(x);
    kf_pipeline_destroy(p);
    kf_device_close(dev);
    kf_module_free(m);
}

/* Ownership: a view keeps its parent's storage, so the parent's handle may
 * go first; read-only applies through every view, made before or after. */
static void test_views_outlive_parents_and_readonly_applies_through_them(void **state)
{
    kf_module *m = compile_ok(axpy_src);
    kf_error err = {0};
    kf_device *dev;
    kf_pipeline *p;
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &dev, &err), KF_OK);
    assert_int_equal(kf_pipeline_create(dev, m, kf_module_kernel(m, "axpy"), &p, &err), KF_OK);
    kf_buffer *buf, *lo, *hi, *bad;
    assert_int_equal(kf_buffer_create(dev, kf_type_scalar(KF_S_F32), 8, &buf, &err), KF_OK);
    float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(kf_buffer_upload(buf, ones, sizeof ones, &err), KF_OK);
    assert_int_equal(kf_buffer_view(buf, 0, 4, &lo, &err), KF_OK);
    assert_int_equal(kf_buffer_view(buf, 4, 4, &hi, &err), KF_OK);
    assert_int_equal(kf_buffer_view(buf, 6, 4, &bad, &err), KF_ERR_USAGE);
    assert_null(bad);

    kf_buffer_set_readonly(buf, true);   /* after the views were made */
    assert_true(kf_buffer_readonly(hi));
    kf_arg args[] = {kf_arg_value(kf_value_f32(1.0f)), kf_arg_buffer(lo), kf_arg_buffer(hi),
                     kf_arg_value(kf_value_u32(4))};
    assert_int_equal(kf_dispatch(p, args, 4, NULL, KF_DISPATCH_SYNC, NULL, &err), KF_ERR_USAGE);
    assert_non_null(strstr(err.msg, "read-only"));
    kf_buffer_set_readonly(buf, false);
    assert_false(kf_buffer_readonly(hi));

    kf_buffer_destroy(buf);   /* the parent's handle first: the views keep the storage */
    assert_int_equal(kf_dispatch(p, args, 4, NULL, KF_DISPATCH_SYNC, NULL, &err), KF_OK);
    float got[4];
    assert_int_equal(kf_buffer_download(hi, got, sizeof got, &err), KF_OK);
    for (int i = 0; i < 4; i++) assert_true(got[i] == 2.0f);
    kf_buffer_destroy(hi);
    kf_buffer_destroy(lo);
    kf_pipeline_destroy(p);
    kf_device_close(dev);
    kf_module_free(m);
}

/* The CPU device has no CUDA-C: a raw kernel is a usage error there. */
static void test_raw_kernel_needs_a_gpu(void **state)
{
    kf_error err = {0};
    kf_device *dev;
    kf_pipeline *p;
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &dev, &err), KF_OK);
    kf_raw_kernel rk = {KF_SRC_CUDA, "extern \"C\" __global__ void k() {}", "k", NULL, 0, {1, 1, 1}, 0, true};
    assert_int_equal(kf_pipeline_create_raw(dev, &rk, &p, &err), KF_ERR_USAGE);
    kf_device_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_macros_match_the_library),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_value_constructors_give_kernel_bits),
        cmocka_unit_test(test_type_names_and_sizes),
        cmocka_unit_test(test_diagnostics_render_with_the_source_line),
        cmocka_unit_test(test_compile_file_errors),
        cmocka_unit_test(test_null_arguments_are_usage_errors),
        cmocka_unit_test(test_reflection),
        cmocka_unit_test(test_emit_targets),
        cmocka_unit_test(test_emit_cubin_is_elf),
        cmocka_unit_test(test_params_parse),
        cmocka_unit_test(test_cpu_dispatch_with_wrapped_memory),
        cmocka_unit_test(test_views_outlive_parents_and_readonly_applies_through_them),
        cmocka_unit_test(test_raw_kernel_needs_a_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
