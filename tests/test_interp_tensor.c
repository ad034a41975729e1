/* The interpreter's tensor-core and async-copy rules (LANGUAGE.md section 8)
 * that the golden cases cannot pin down from outside: mma's f32 sum is
 * exact in double then rounded once; cp_async_wait(N) leaves exactly the N
 * newest committed groups pending; the zero-fill form reads (and bounds-
 * checks) only its n bytes; ldmatrix_x1/x2 ignore the addresses of the lanes
 * they do not use; and each misuse is reported at its source line: an
 * ldmatrix of unwritten shared memory, a write over a pending copy, an
 * out-of-bounds copy, copies never committed at the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "interp.h"
#include "numeric.h"
#include "kf_compile_test.h"


/* Runs kernel 0 of src as one warp with buffers b0, b1 and the u32 mode. */
static kf_status run_warp(const char *src, void *b0, size_t n0, void *b1, size_t n1, uint32_t mode, kf_error *err)
{
    kf_module *m = compile(src);
    const kf_ir_kernel *k = &m->kernels[0];
    kf_interp_arg args[3];
    memset(args, 0, sizeof args);
    args[0].is_buffer = args[1].is_buffer = true;
    args[0].data = b0, args[0].bytes = n0, args[1].data = b1, args[1].bytes = n1;
    args[2].value.type = kf_type_scalar(KF_S_U32);
    args[2].value.lane[0] = mode;
    assert_true(k->nparams <= 3);
    kf_interp_launch l = {{1, 1, 1}, {32, 1, 1}, 0};
    kf_status st = kf_interp_run(k, args, k->nparams, &l, NULL, err);
    kf_module_free(m);
    return st;
}

static void expect_fault(kf_status st, kf_error *err, const char *where, const char *what)
{
    assert_int_equal(st, KF_ERR_RUNTIME);
    if (!strstr(err->msg, where) || !strstr(err->msg, what)) fail_msg("unexpected report: %s", err->msg);
    kf_error_clear(err);
}

/* Row 0 of A is 1, then fifteen 2^-12; column 0 of B the same: the exact
 * sum is 1 + 15 * 2^-24, which rounds once to 1 + 2^-20 (7.5 f32 ulps of 1
 * to the even 8), where adding in f32 one product at a time would stay 1. */
static void mma_f32_is_the_exact_sum_rounded_once(void **state)
{
    const char *src =
        "kernel k(a: &[f16], o: &mut [f32], mode: u32) {\n"
        "    var fa: f16x8 = 0.0;\n"
        "    var fb: f16x4 = 0.0;\n"
        "    @unroll for j in 0 .. 8 {\n"
        "        let col = lane_id % 4 * 2 + j % 2 + 8 * (j / 4);\n"
        "        if lane_id / 4 == 0 && j / 2 % 2 == 0 { fa[j] = a[col]; }\n"
        "    }\n"
        "    @unroll for j in 0 .. 4 {\n"
        "        let row = lane_id % 4 * 2 + j % 2 + 8 * (j / 2);\n"
        "        if lane_id / 4 == 0 { fb[j] = a[row]; }\n"
        "    }\n"
        "    let d = mma(fa, fb, 0.0);\n"
        "    if lane_id == 0 { o[0] = d.x; }\n"
        "}\n";
    uint16_t a[16];
    a[0] = kf_f16_from_double(1.0);
    for (int i = 1; i < 16; i++) a[i] = kf_f16_from_double(ldexp(1.0, -12));
    float o = 0;
    kf_error err = {0};
    assert_int_equal(run_warp(src, a, sizeof a, &o, sizeof o, 0, &err), KF_OK);
    assert_true(o == (float)(1.0 + ldexp(1.0, -20)));
}

/* Three groups of one copy each; cp_async_wait(1) completes the first two.
 * mode 0 reads the second group's bytes (landed), mode 1 the third's
 * (still pending: reported). */
static void cp_async_wait_keeps_the_newest_groups_pending(void **state)
{
    const char *src =
        "kernel k(x: &[u32], o: &mut [u32], mode: u32) {\n"
        "    shared t: u32[384];\n"
        "    @unroll for g in 0 .. 3 {\n"
        "        cp_async(t, g * 128 + lane_id * 4, x, g * 128 + lane_id * 4);\n"
        "        cp_async_commit();\n"
        "    }\n"
        "    cp_async_wait(1);\n"
        "    o[lane_id] = t[(mode + 1) * 128 + lane_id * 4];\n"
        "    cp_async_wait(0);\n"
        "}\n";
    uint32_t x[384], o[32];
    for (int i = 0; i < 384; i++) x[i] = 1000u + (uint32_t)i;
    kf_error err = {0};
    assert_int_equal(run_warp(src, x, sizeof x, o, sizeof o, 0, &err), KF_OK);
    for (int l = 0; l < 32; l++) assert_int_equal(o[l], 1000u + 128 + 4 * (uint32_t)l);
    expect_fault(run_warp(src, x, sizeof x, o, sizeof o, 1, &err), &err, "t.kf:8:19",
                 "read of shared t[256] before the cp_async into it");
}

/* A copy whose group is never committed: cp_async_wait(0) cannot complete
 * it, and the report names the missing cp_async_commit(). */
static void cp_async_never_committed_names_the_commit(void **state)
{
    const char *src =
        "kernel k(x: &[u32], o: &mut [u32], mode: u32) {\n"
        "    shared t: u32[128];\n"
        "    cp_async(t, lane_id * 4, x, lane_id * 4);\n"
        "    if mode == 1 { cp_async_commit(); }\n"
        "    cp_async_wait(0);\n"
        "    o[lane_id] = t[lane_id * 4];\n"
        "}\n";
    uint32_t x[128], o[32];
    for (int i = 0; i < 128; i++) x[i] = 7u * (uint32_t)i;
    kf_error err = {0};
    expect_fault(run_warp(src, x, sizeof x, o, sizeof o, 0, &err), &err, "t.kf:6:19",
                 "was waited for (its group was never committed): cp_async_commit() then cp_async_wait");
    assert_int_equal(run_warp(src, x, sizeof x, o, sizeof o, 1, &err), KF_OK);
    for (int l = 0; l < 32; l++) assert_int_equal(o[l], 28u * (uint32_t)l);
}

/* The zero-fill form: lane l copies 4 * (l % 5) bytes from word 4 l of a
 * 64-word buffer, the rest of its 16 bytes zero. Lanes 16..31 start past
 * its end: with mode 0 they read nothing (no fault), with mode 1 they read
 * 0 to 16 bytes and lane 16 (4 bytes) is the first out of bounds. */
static void cp_async_zero_fill_checks_only_the_bytes_read(void **state)
{
    const char *src =
        "kernel k(x: &[u32], o: &mut [u32], mode: u32) {\n"
        "    shared t: u32[128];\n"
        "    let n = select(lane_id < 16 || mode == 1, lane_id % 5 * 4, 0);\n"
        "    cp_async(t, lane_id * 4, x, lane_id * 4, n);\n"
        "    cp_async_commit();\n"
        "    cp_async_wait(0);\n"
        "    @unroll for w in 0 .. 4 { o[lane_id * 4 + w] = t[lane_id * 4 + w]; }\n"
        "}\n";
    uint32_t x[64], o[128];
    for (int i = 0; i < 64; i++) x[i] = 7u + (uint32_t)i;
    kf_error err = {0};
    assert_int_equal(run_warp(src, x, sizeof x, o, sizeof o, 0, &err), KF_OK);
    for (uint32_t l = 0; l < 32; l++)
        for (uint32_t w = 0; w < 4; w++) {
            bool read = l < 16 && w < l % 5;
            assert_int_equal(o[l * 4 + w], read ? x[l * 4 + w] : 0u);
        }
    expect_fault(run_warp(src, x, sizeof x, o, sizeof o, 1, &err), &err, "t.kf:4:5",
                 "out-of-bounds cp_async from x[64]: 4 bytes read up to byte 260 of 256");
}

/* ldmatrix_x1 reads the rows of lanes 0..7 only: the others may give any
 * index (here far out of bounds); x2 reads lanes 0..15. */
static void ldmatrix_ignores_the_lanes_it_does_not_use(void **state)
{
    const char *src =
        "kernel k(x: &[u16], o: &mut [u16], mode: u32) {\n"
        "    shared t: u16[128];\n"
        "    @unroll for w in 0 .. 4 { t[lane_id * 4 + w] = x[lane_id * 4 + w]; }\n"
        "    barrier();\n"
        "    let bad: u32 = 1 << 30;\n"
        "    let p = ldmatrix_x1(t, select(lane_id < 8, lane_id * 8, bad));\n"
        "    let q = ldmatrix_x2_trans(t, select(lane_id < 16 + 16 * mode, lane_id * 8, bad));\n"
        "    o[lane_id * 4] = p.x;\n"
        "    o[lane_id * 4 + 1] = p.y;\n"
        "    o[lane_id * 4 + 2] = q.x;\n"
        "    o[lane_id * 4 + 3] = q.w;\n"
        "}\n";
    uint16_t x[128], o[128];
    for (int i = 0; i < 128; i++) x[i] = (uint16_t)(3 * i + 1);
    kf_error err = {0};
    assert_int_equal(run_warp(src, x, sizeof x, o, sizeof o, 0, &err), KF_OK);
    for (uint32_t t = 0; t < 32; t++) {
        uint32_t r = t / 4, c = 2 * (t % 4);
        assert_int_equal(o[t * 4], x[r * 8 + c]);               /* matrix 0, row t / 4 */
        assert_int_equal(o[t * 4 + 1], x[r * 8 + c + 1]);
        assert_int_equal(o[t * 4 + 2], x[c * 8 + r]);           /* transposed: column t / 4 */
        assert_int_equal(o[t * 4 + 3], x[64 + (c + 1) * 8 + r]); /* matrix 1 (rows 8..15), transposed */
    }
}

/* A row nobody wrote, and a store over bytes a copy is still bringing. */
static void ldmatrix_and_copies_report_their_misuse(void **state)
{
    const char *unwritten =
        "kernel k(x: &[u16], o: &mut [u16], mode: u32) {\n"
        "    shared t: u16[256];\n"
        "    @unroll for w in 0 .. 4 { t[lane_id * 4 + w] = x[lane_id * 4 + w]; }\n"
        "    barrier();\n"
        "    let p = ldmatrix_x4(t, lane_id * 8);\n"
        "    o[lane_id] = p[0];\n"
        "}\n";
    const char *overwrite =
        "kernel k(x: &[u16], o: &mut [u16], mode: u32) {\n"
        "    shared t: u16[256];\n"
        "    cp_async(t, lane_id * 8, x, lane_id * 8);\n"
        "    t[lane_id * 8 + mode] = 5;\n"
        "    cp_async_commit();\n"
        "    cp_async_wait(0);\n"
        "    o[lane_id] = t[lane_id * 8];\n"
        "}\n";
    const char *uncommitted =
        "kernel k(x: &[u16], o: &mut [u16], mode: u32) {\n"
        "    shared t: u16[256];\n"
        "    cp_async(t, lane_id * 8, x, lane_id * 8);\n"
        "    o[lane_id] = 0;\n"
        "}\n";
    uint16_t x[256] = {0}, o[32];
    kf_error err = {0};
    expect_fault(run_warp(unwritten, x, sizeof x, o, sizeof o, 0, &err), &err, "t.kf:5:13",
                 "read of shared array element t[128] before any thread of the block wrote it");
    expect_fault(run_warp(overwrite, x, sizeof x, o, sizeof o, 3, &err), &err, "t.kf:4:6",
                 "write of shared t[3] before the cp_async into it");
    expect_fault(run_warp(uncommitted, x, sizeof x, o, sizeof o, 0, &err), &err, "t.kf:3:5",
                 "1 cp_async copy pending (the first issued here, into shared t[0], never committed)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mma_f32_is_the_exact_sum_rounded_once),
        cmocka_unit_test(cp_async_wait_keeps_the_newest_groups_pending),
        cmocka_unit_test(cp_async_never_committed_names_the_commit),
        cmocka_unit_test(cp_async_zero_fill_checks_only_the_bytes_read),
        cmocka_unit_test(ldmatrix_ignores_the_lanes_it_does_not_use),
        cmocka_unit_test(ldmatrix_and_copies_report_their_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
