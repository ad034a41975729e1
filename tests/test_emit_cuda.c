/* Unit tests of the CUDA-C emitter (emit/cuda_c*.c) over hand-built core
 * IR (tests/kf_cuda_cases.h): the text it writes for the contract's tricky
 * rules (shifts, conversions, short-circuit, break/continue with latches,
 * vector loads, #line placement), names, dead code and determinism; and,
 * from .kf source, LANGUAGE.md section 8 (16-byte aligned and dynamic shared
 * arrays, views, packed f16/bf16 pair helpers per arch, the intrinsics).
 * The same kernels are compiled with NVRTC by tests/test_nvrtc_kernels.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "kf_cuda_cases.h"

static kb B;

/* Links and emits B's kernel; returns heap text (free it). */
static char *emit_opts(uint32_t arch, bool lineinfo, kf_linemap *lm)
{
    assert_true(kf_ir_link(&B.k));
    kf_emit_opts o = {arch, lineinfo, false};
    kf_buf out = {0};
    kf_diags d = {0};
    kf_status st = kf_cuda_emit(&B.m, NULL, &o, &out, lm, &d);
    if (st != KF_OK)
        for (size_t i = 0; i < d.items.len; i++) fprintf(stderr, "%s\n", d.items.data[i].msg);
    assert_int_equal(st, KF_OK);
    assert_int_equal(d.nerrors, 0);
    kf_diags_free(&d);
    return kf_buf_take(&out);
}

static char *emit_case(kf_cuda_case c)
{
    kb_build(&B, c);
    return emit_opts(90, false, NULL);
}

#define assert_has(text, s)                                                      \
    do {                                                                         \
        if (!strstr((text), (s))) fail_msg("missing in emitted CUDA-C: %s", (s)); \
    } while (0)
#define assert_lacks(text, s)                                                    \
    do {                                                                         \
        if (strstr((text), (s))) fail_msg("unexpected in emitted CUDA-C: %s", (s)); \
    } while (0)

/* Index of the line holding s (1-based), 0 if none. */
static size_t line_of(const char *text, const char *s)
{
    const char *p = strstr(text, s);
    if (!p) return 0;
    size_t n = 1;
    for (const char *q = text; q < p; q++) n += *q == '\n';
    return n;
}

static void entry_point_has_launch_bounds_and_restrict_params(void **state)
{
    char *t = emit_case(case_saxpy);
    assert_has(t, "extern \"C\" __global__ void __launch_bounds__(256)\nsaxpy(float a_, const float* __restrict__ x_, "
                  "float* __restrict__ y_, unsigned n_)\n");
    assert_has(t, "    unsigned i_ = (blockIdx.x * blockDim.x) + threadIdx.x;\n");
    /* saxpy loads y, which it writes: x's loads are our own ld.global.nc */
    assert_has(t, "    if (i_ < n_) {\n        y_[i_] = __fadd_rn(__fmul_rn(a_, kf_ldg(x_ + (i_))), y_[i_]);\n    }\n");
    free(t);
}

static void shifts_past_the_width_go_through_helpers(void **state)
{
    char *t = emit_case(case_shifts);
    /* helpers implement the contract: >= width gives 0 or the sign fill */
    assert_has(t, "unsigned kf_shl_u32(unsigned a, unsigned s) { return s >= 32u ? 0u : a << s; }");
    assert_has(t, "int kf_shr_i32(int a, unsigned s) { return a >> (s >= 31u ? 31u : s); }");
    assert_has(t, "unsigned long long kf_shl_u64(unsigned long long a, unsigned long long s) { return s >= 64ull ? 0ull : a << s; }");
    assert_has(t, "o32_[0u] = kf_shl_u32(u_, u_);");
    assert_has(t, "o32_[1u] = kf_shr_u32(u_, u_);");
    /* signed: amount taken as unsigned; << computed in unsigned */
    assert_has(t, "oi_[0u] = kf_shr_i32(s_, (unsigned)s_);");
    assert_has(t, "oi_[1u] = (int)kf_shl_u32((unsigned)s_, (unsigned)s_);");
    assert_has(t, "o64_[1u] = kf_shr_u64(q_, q_);");
    /* u8: widened; the amount is the u8 value itself */
    assert_has(t, "o8_[0u] = (unsigned char)kf_shl_u32((unsigned)c_, (unsigned)(unsigned char)c_);");
    /* no raw C shift of a kernel value */
    assert_lacks(strstr(t, "__global__"), "<<");
    free(t);
}

static void signed_division_and_wrapping_add_have_no_undefined_behaviour(void **state)
{
    char *t = emit_case(case_shifts);
    assert_has(t, "int kf_div_i32(int a, int b) { return b == -1 ? (int)(0u - (unsigned)a) : a / b; }");
    assert_has(t, "int kf_rem_i32(int a, int b) { return b == -1 ? 0 : a % b; }");
    assert_has(t, "oi_[2u] = kf_div_i32(s_, s_);");
    assert_has(t, "oi_[3u] = kf_rem_i32(s_, s_);");
    assert_has(t, "oi_[4u] = (int)((unsigned)s_ + (unsigned)s_);");
    free(t);
}

static void conversions_truncate_saturate_and_round_once(void **state)
{
    char *t = emit_case(case_convert);
    /* float -> int: cvt.rzi truncates and saturates; NaN is picked out for 0 */
    assert_has(t, "oi_[0u] = kf_f32_to_i32(f_);");
    /* inline PTX: NVVM folded __float2ull_rz(-1.0f) to 2^64 - 1 (difftest seed 1 program 4595) */
    assert_has(t, "int kf_f32_to_i32(float x) { int r; asm(\"cvt.rzi.s32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x)); return x != x ? 0 : r; }");
    assert_has(t, "o8_[0u] = (unsigned char)kf_sat_u32(kf_f32_to_u32(f_), 255u);");
    assert_has(t, "oi_[1u] = kf_f64_to_i32(d_);");
    assert_has(t, "oh_[0u] = kf_f16_from_f32(f_);");
    assert_has(t, "asm(\"{ .reg .b16 t; cvt.rn.f16.f32 t, %1; cvt.u32.u16 %0, t; }\" : \"=r\"(u) : \"f\"(f));");
    assert_has(t, "ob_[0u] = kf_bf16_from_f32(f_);");
    assert_has(t, "asm(\"{ .reg .b16 t; cvt.rn.bf16.f32 t, %1; cvt.u32.u16 %0, t; }\" : \"=r\"(u) : \"f\"(f));");
    /* f64 and wide ints narrow through round-to-odd f32: one rounding */
    assert_has(t, "oh_[1u] = kf_f64_to_f16(d_);");
    assert_has(t, "ob_[1u] = kf_f64_to_bf16(d_);");
    assert_has(t, "float r = __double2float_rz(x);");
    assert_has(t, "of_[0u] = __double2float_rn(d_);");
    assert_has(t, "oh_[2u] = kf_i32_to_f16(i_);");   /* i32: a signed 32-bit cvt to f64, never widened (program 7291) */
    assert_has(t, "oh_[3u] = kf_u64_to_f16((unsigned long long)q_);");
    assert_has(t, "ob_[2u] = kf_i64_to_bf16((long long)l_);");
    assert_has(t, "kf_bf16_from_f32(kf_f16_to_f32(");
    /* f16 arithmetic through f32, rounded once per operation */
    assert_has(t, "kf_f16 kf_f16_add(kf_f16 a, kf_f16 b) { return kf_f16_from_f32(__fadd_rn(kf_f16_to_f32(a), kf_f16_to_f32(b))); }");
    assert_has(t, "oh_[4u] = kf_f16_add(");
    free(t);
}

static void short_circuit_and_is_an_if_on_the_left_operand(void **state)
{
    char *t = emit_case(case_loops);
    assert_has(t, "            bool c_ = j_ > 1u;\n"
                  "            if (c_) {\n"
                  "                c_ = (j_ % 3u) == 0u;\n"
                  "            }\n");
    free(t);
}

static void for_loops_get_a_header_and_plain_continue(void **state)
{
    char *t = emit_case(case_loops);
    /* outer: the break test and the latch become the for header; every
       loop is left to run as written (@unroll has been expanded already),
       not unrolled by NVVM */
    assert_has(t, "    unsigned acc_ = 0u;\n    #pragma unroll 1\n    for (unsigned i_ = 0u; i_ < n_; i_ = i_ + 1u) {\n"
                  "        if (i_ == 2u) {\n            continue;\n        }\n");
    /* inner continue and break target the inner loop; acc, read after the
       loops, stays declared outside them */
    assert_has(t, "        #pragma unroll 1\n        for (unsigned j_ = 0u; j_ < i_; j_ = j_ + 1u) {\n");
    assert_has(t, "            if (c_) {\n                continue;\n            }\n");
    assert_has(t, "            if (j_ == 7u) {\n                break;\n            }\n            acc_ = acc_ + j_;\n        }\n    }\n");
    assert_lacks(t, "goto");
    free(t);
}

static void continue_in_a_loop_with_latch_jumps_to_the_latch(void **state)
{
    char *t = emit_case(case_latch);
    assert_has(t, "    unsigned i_ = 0u;\n"
                  "    #pragma unroll 1\n"
                  "    for (;;) {\n"
                  "        {\n"
                  "            o_[i_] = i_;\n"
                  "            if (i_ >= n_) {\n"
                  "                break;\n"
                  "            }\n"
                  "            if (i_ == 5u) {\n"
                  "                goto kf_latch_1;\n"
                  "            }\n"
                  "            o_[i_ + n_] = n_;\n"
                  "        }\n"
                  "    kf_latch_1:;\n"
                  "        i_ = i_ + 2u;\n"
                  "    }\n");
    free(t);
}

static void code_after_return_is_not_emitted(void **state)
{
    char *t = emit_case(case_loops);
    assert_has(t, "    o_[0u] = acc_;\n    return;\n}\n");
    assert_lacks(t, "o_[1u]");
    free(t);
}

static void vector_buffers_are_aligned_structs_loaded_whole(void **state)
{
    char *t = emit_case(case_vectors);
    assert_has(t, "struct __align__(16) kf_f32x4 { float v[4]; };");
    assert_has(t, "struct __align__(16) kf_f16x8 { kf_f16 v[8]; };");
    assert_has(t, "vectors(const kf_f32x4* __restrict__ x_, kf_f16x8* __restrict__ h_, float* __restrict__ y_, kf_f32x4 s_)");
    assert_has(t, "    kf_f32x4 t10_ = kf_ldg(x_ + (i_));\n    kf_f32x4 t11_;\n    t11_.v[0] = __fadd_rn(t10_.v[0], s_.v[0]);\n");
    assert_has(t, "    t11_.v[3] = __fadd_rn(t10_.v[3], s_.v[3]);\n");
    assert_has(t, "    kf_f32x4* yv_ = (kf_f32x4*)y_;\n    yv_[i_] = t11_;\n");
    assert_has(t, "    kf_f16 t14_ = h_[i_].v[3];\n");
    assert_has(t, "    kf_f16x8 w_ = kf_f16x8{{t14_, t14_, t14_, t14_, t14_, t14_, t14_, t14_}};\n");
    assert_has(t, "    w_.v[0] = kf_u64_to_f16((unsigned long long)1u);\n");
    assert_has(t, "    h_[i_] = w_;\n");
    free(t);
}

static void warp_atomic_and_shared_builtins_map_to_cuda(void **state)
{
    char *t = emit_case(case_warp);
    assert_has(t, "__launch_bounds__(128)");
    assert_has(t, "    __shared__ __align__(16) float part_[32];\n    unsigned tmp_[4];\n");
    assert_has(t, "kf_shfl_xor(t8_, 16u, kf_wn)");
    assert_has(t, "__ballot_sync(kf_warp_mask(kf_wn), (t16_ > t6_))");
    assert_has(t, "__any_sync(kf_warp_mask(kf_wn), ");
    assert_has(t, "__syncthreads();");
    assert_has(t, "atomicAdd(&o_[0u], t12_)");
    assert_has(t, "kf_atomic_max_f32(&o_[1u], old_)");
    assert_has(t, "atomicMin(&cnt_[0u], ");
    assert_has(t, "kf_atomic_add_f16x2(&hh_[0u], t28_);");
    assert_has(t, "atom.add.noftz.f16x2");
    assert_has(t, "atomicAdd(&d_[0u], exp((double)t25_))");             /* f64: accurate libdevice exp */
    assert_has(t, "kf_tanh_approx(kf_exp_approx(t6_))");               /* f32: approximations */
    assert_has(t, "asm(\"tanh.approx.f32 %0, %1;\"");
    assert_has(t, "asm(\"mov.u32 %0, %%laneid;\"");
    assert_has(t, "o_[2u] = fminf(fmaxf(t12_, t6_), t8_);");               /* clamp = min(max()) */
    free(t);
}

static void names_are_kept_sanitised_and_unique(void **state)
{
    char *t = emit_case(case_names);
    assert_has(t, "    int int_ = 5;\n");
    assert_has(t, "    int x_ = (int)((unsigned)int_ * (unsigned)int_);\n");
    assert_has(t, "    int x_2_ = (int)((unsigned)x_ - (unsigned)int_);\n");
    assert_has(t, "    int kf_tmp_ = (int)((unsigned)x_2_ + (unsigned)x_2_);\n");
    free(t);
}

static void line_directives_precede_statements_of_a_new_source_line(void **state)
{
    kb_build(&B, case_saxpy);
    kf_linemap lm = {0};
    char *t = emit_opts(90, true, &lm);
    assert_has(t, "#line 3 \"t.kf\"\n    unsigned i_ = (blockIdx.x * blockDim.x) + threadIdx.x;\n"
                  "    if (i_ < n_) {\n        y_[i_] = ");
    /* the if (line 4) and store (line 5) follow line 3 without a directive */
    size_t store = line_of(t, "y_[i_] = __fadd_rn");
    assert_true(store > 0);
    assert_true(lm.lines.len >= store);
    assert_int_equal(lm.lines.data[store - 1].line, 5);
    assert_string_equal(lm.lines.data[store - 1].file, "t.kf");
    size_t ifl = line_of(t, "if (i_ < n_)");
    assert_int_equal(lm.lines.data[ifl - 1].line, 4);
    /* the linemap covers every line of the text, prelude lines with no loc */
    size_t nlines = 0;
    for (const char *p = t; *p; p++) nlines += *p == '\n';
    assert_int_equal(lm.lines.len, nlines);
    assert_int_equal(lm.lines.data[0].line, 0);
    kf_linemap_free(&lm);
    free(t);
    char *plain = emit_case(case_saxpy);
    assert_lacks(plain, "#line");
    free(plain);
}

static void line_directive_repeats_when_one_source_line_spans_statements(void **state)
{
    kb_build(&B, case_convert);
    kf_linemap lm = {0};
    char *t = emit_opts(90, true, &lm);
    /* every statement of line 2 is preceded by a directive except the first
       text line after one (which already maps to line 2) */
    assert_has(t, "#line 2 \"t.kf\"\n    oi_[0u] = kf_f32_to_i32(f_);\n#line 2 \"t.kf\"\n    o8_[0u] = ");
    kf_linemap_free(&lm);
    free(t);
}

static void emission_is_deterministic(void **state)
{
    for (size_t c = 0; c < sizeof kf_cuda_cases / sizeof *kf_cuda_cases; c++) {
        kb_build(&B, kf_cuda_cases[c]);
        char *a = emit_opts(90, true, NULL);
        kb_build(&B, kf_cuda_cases[c]);
        char *b = emit_opts(90, true, NULL);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
}

static void unsupported_arch_is_a_diagnostic(void **state)
{
    kb_build(&B, case_saxpy);
    kf_emit_opts o = {70, false, false};
    kf_buf out = {0};
    kf_diags d = {0};
    assert_int_equal(kf_cuda_emit(&B.m, NULL, &o, &out, NULL, &d), KF_ERR_SOURCE);
    assert_int_equal(d.nerrors, 1);
    assert_non_null(strstr(d.items.data[0].msg, "sm_70"));
    assert_int_equal(out.len, 0);
    assert_int_equal(kf_cuda_emit(&B.m, NULL, &o, &out, NULL, NULL), KF_ERR_SOURCE);   /* no list: still an error */
    kf_diags_free(&d);
    kf_buf_free(&out);
}

/* Emits CUDA-C of .kf source text (every kernel) for arch, compiled at
 * level; returns heap text. */
static char *emit_src_at(const char *src, uint32_t arch, kf_opt_level level)
{
    const kf_compile_opts opts = {NULL, 0, level};
    kf_module *m = NULL;
    if (kf_compile("t.kf", src, strlen(src), &opts, &m) != KF_OK) {
        kf_buf r = {0};
        if (m) kf_diags_render(&r, &m->diags, src, strlen(src));
        fail_msg("does not compile:\n%s", r.data ? r.data : "");
    }
    kf_emit_opts o = {arch, false, false};
    kf_buf out = {0};
    kf_diags d = {0};
    assert_int_equal(kf_cuda_emit(m, NULL, &o, &out, NULL, &d), KF_OK);
    kf_diags_free(&d);
    kf_module_free(m);
    return kf_buf_take(&out);
}

/* At -O0, so the emitter meets each construct as lowering writes it. */
static char *emit_src(const char *src, uint32_t arch)
{
    return emit_src_at(src, arch, KF_OPT_O0);
}

static char *emit_source(const char *src)
{
    return emit_src(src, 90);
}

/* Issue 7, difftest seed 4 program 5323: a bitcast to narrower lanes of 8
 * or 16 bits shifts each lane out of its word by inline PTX (NVVM would
 * split the word with mov.b32 {lo, hi}, whose high half ptxas 13 reads as
 * the low half of a widened byte); read only by dot4 (as a word) it stays
 * one copy of the bits. */
static void bitcast_to_narrow_lanes_shifts_each_lane_out_of_its_word(void **state)
{
    char *t = emit_source("kernel k(x: &[u8x2], w: &[u32], o: &mut [i16x4], d: &mut [i32]) {\n"
                          "    let i = thread_id.x;\n"
                          "    o[i] = bitcast(i16x4, x[i] as u32x2);\n"
                          "    d[i] = dot4(bitcast(u8x4, w[i]), bitcast(i8x4, w[i]), 0);\n}\n");
    assert_has(t, "unsigned kf_shr_b32(unsigned w, unsigned s) { unsigned r; asm(\"shr.b32 %0, %1, %2;\"");
    assert_has(t, "kf_i16x4{{kf_low_bits<short>(kf_word(");
    assert_has(t, ", 0u)), kf_low_bits<short>(kf_shr_b32(kf_word(");
    assert_has(t, ", 1u)), kf_low_bits<short>(kf_shr_b32(kf_word(");
    assert_has(t, ", 1u), 16u))}};");
    assert_lacks(t, "kf_bitcast<kf_i16x4>");
    assert_has(t, "kf_bitcast<kf_u8x4>(");   /* dot4's operands: words, nothing split */
    assert_has(t, "kf_bitcast<kf_i8x4>(");
    free(t);
}

/* Issue 5, difftest seed 2303 program 15603: NVVM 13.0 never finishes
 * compiling min(max(0u - y, 0u - x), ~l) (a min or max of a min or max,
 * through a let, a var or a select too, and clamp): a min or max next to
 * another or to a select, as operand or user, is PTX min/max
 * (KF_CU_H_IMINMAX), so NVVM sees no min/max of a min/max; a lone min or
 * max stays CUDA's, which NVVM reasons about. */
static void nested_integer_min_max_are_ptx_min_max(void **state)
{
    char *t = emit_source("kernel k(o: &mut [u32], s: &mut [i64], y: u32, x: u32, l: u32, z: i64) {\n"
                          "    let i = thread_id.x;\n"
                          "    o[i] = min(max(0 - y, 0 - x), ~l);\n"
                          "    let a = min(y, x);\n"
                          "    o[i + 1] = max(a, ~l);\n"
                          "    o[i + 2] = min(select(y < x, y, x), l);\n"
                          "    o[i + 3] = clamp(y, x, l);\n"
                          "    o[i + 4] = min(y + 1, x);\n"
                          "    s[i] = max(min(0 - z, z), ~z);\n"
                          "    let c = max(y, x);\n"
                          "    o[i + 5] = select(c < l, c, l);\n"
                          "    o[i + 6] = min((max(0 - y, 0 - x) ^ 0) * 1, ~l);\n"
                          "    o[i + 7] = min(max(y, x) + 1, l);\n}\n");
    assert_has(t, "kf_min_u32(kf_max_u32(kf_neg_u32(y_), kf_neg_u32(x_)), ~l_)");   /* both of a nest */
    assert_has(t, "kf_max_u32(a_, ~l_)");
    assert_has(t, "kf_min_u32(((y_ < x_) ? y_ : x_), l_)");
    assert_has(t, "kf_min_u32(kf_max_u32(y_, x_), l_)");            /* clamp */
    assert_has(t, "kf_max_s64(kf_min_s64(");
    assert_has(t, "unsigned c_ = kf_max_u32(y_, x_);");            /* under a select */
    assert_has(t, "min((y_ + 1u), x_)");        /* lone: CUDA's */
    assert_has(t, "unsigned a_ = kf_min_u32(y_, x_);");            /* its user is a max */
    assert_has(t, "kf_min_u32(((kf_max_u32(kf_neg_u32(y_), kf_neg_u32(x_)) ^ 0u) * 1u), ~l_)");   /* -O0: NVVM folds ^ 0, * 1 */
    assert_has(t, "min((max(y_, x_) + 1u), l_)");   /* + 1 is no copy: both lone */
    assert_has(t, "asm(\"min.\" #n \" %0, %1, %2;\"");
    free(t);
}

/* NVVM recomputed tc_gemv_f16's row offsets (min(row, m - 1)·k, from
 * block_id) inside its main loop at every load (126 SASS instructions a
 * step against the PTX path's 104): a loop pins, where it starts, the
 * loop-invariant products that make the index of one of its loads, scalars
 * and elements of local arrays held in registers, 32-bit ("r") and 64-bit
 * ("l"). Not pinned: what NVVM would lose a range for (a masked lane index),
 * values the loop does not use in an index. */
static void loop_pins_the_invariant_row_offsets_of_its_load_indices(void **state)
{
    char *t = emit_source("kernel k(x: &[f32], y: &mut [f32], m: u32, k: u32, n: u64) {\n"
                          "    let q = lane_id % 4;\n"
                          "    let row = min(block_id.x, m - 1) * k;\n"
                          "    let wide = (block_id.x as u64) * n;\n"
                          "    let other = block_id.x * k;\n"
                          "    var rb: u32[2];\n"
                          "    rb[0] = block_id.y * k;\n"
                          "    rb[1] = block_id.z * k;\n"
                          "    var s = 0.0;\n"
                          "    for c in q .. k step 4 {\n"
                          "        s += x[row + c] + x[rb[0] + c] + x[rb[1] + c] + x[(wide + (c as u64)) as u32];\n"
                          "    }\n"
                          "    y[other] = s;\n"
                          "}\n");
    assert_has(t, "asm(\"\" : \"+r\"(row_));\n");
    assert_has(t, "asm(\"\" : \"+r\"(rb_[0u]));\n");
    assert_has(t, "asm(\"\" : \"+r\"(rb_[1u]));\n");
    assert_has(t, "asm(\"\" : \"+l\"(wide_));\n    #pragma unroll 1\n    for (");
    assert_lacks(t, "(q_)");
    assert_lacks(t, "(other_)");
    free(t);
}

/* Issue 7 bug 2: a loop whose latch is unreachable (the body always leaves)
 * still declares its variable in the for header. */
static void loop_whose_body_always_leaves_keeps_its_variable(void **state)
{
    char *t = emit_source("const C: bool = true;\n@schedule(block = 32, grid = 1)\n"
                          "kernel loopvar(o: &mut [i32]) {\n"
                          "    for j in 0 .. 4 { if C { o[thread_id.x] = j + 7; return; } }\n}\n");
    assert_has(t, "    for (int j_ = 0; j_ < 4; ) {\n        o_[threadIdx.x] = (int)((unsigned)j_ + 7u);\n"
                  "        return;\n    }\n");
    assert_lacks(t, "while");
    free(t);
}

/* Every name made for a kernel's own things ends in one '_', so none can
 * be a C++ keyword, a CUDA name or a math library function (j0, y1, exp). */
static void names_never_collide_with_cuda_or_cpp(void **state)
{
    char *t = emit_source("kernel k(sin: &mut [f64], int: u32) {\n"
                          "    let j0 = int as f64; let y1 = j0 * 2.0; let exp = y1 + j0;\n"
                          "    let new = int + 1; let kf_x = new * 2; let _X = kf_x + 1; let a__b_ = _X + 1;\n"
                          "    sin[a__b_] = exp;\n}\n");
    assert_has(t, "k(double* __restrict__ sin_, unsigned int_)\n");
    assert_has(t, "double j0_ = (double)int_;");
    assert_has(t, "double y1_ = __dmul_rn(j0_, 2.0);");
    assert_has(t, "double exp_ = __dadd_rn(y1_, j0_);");
    assert_has(t, "unsigned new_ = int_ + 1u;");
    assert_has(t, "unsigned kf_x_ = new_ * 2u;");
    assert_has(t, "unsigned v_X_ = kf_x_ + 1u;");            /* no reserved _X, no __ */
    assert_has(t, "sin_[a_b_] = exp_;");
    free(t);
    /* the kernel name is the entry point and keeps its spelling: a clash is an error */
    static const char *const bad[] = {"j0", "y1", "exp", "float4", "uchar2", "dim3", "kf_go", "a__b", "new"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kb_build(&B, case_saxpy);
        B.k.name = bad[i];
        kf_buf out = {0};
        kf_diags d = {0};
        assert_int_equal(kf_cuda_emit(&B.m, NULL, NULL, &out, NULL, &d), KF_ERR_SOURCE);
        assert_non_null(strstr(d.items.data[0].msg, "reserved in CUDA-C"));
        kf_diags_free(&d);
        kf_buf_free(&out);
    }
    kb_build(&B, case_saxpy);
    B.k.name = "float8";   /* not a CUDA type */
    free(emit_opts(90, false, NULL));
}

/* Issue 7 (seed 8 program 3694): a pair of bytes is read as one unsigned
 * short and split by shifts, from a buffer and from a shared view: NVVM
 * merged a shared ld.v2.u8 with an ld.v2.u16 of the same address. The view
 * of an array with other element sizes reads its halfword by an ld.shared
 * of its own (kf_lds_narrow: seed 3810 program 3417). */
static void byte_pairs_load_as_halfwords(void **state)
{
    char *t = emit_source("kernel k(x: &[u8x2], y: &[f16x4], o: &mut [u8x2]) {\n"
                          "    shared s: f16x4[4];\n"
                          "    shared p: u8x2[8];\n"
                          "    s[thread_id.x % 4] = y[0];\n"
                          "    p[thread_id.x % 8] = x[1];\n"
                          "    barrier();\n"
                          "    o[0] = x[thread_id.x] + (s as shared u8x2[])[thread_id.x % 16] + p[3];\n}\n");
    assert_has(t, "kf_bytes<kf_u8x2>(((const unsigned short*)x_)[threadIdx.x])");
    assert_has(t, "kf_bytes<kf_u8x2>(kf_lds_narrow(&((const unsigned short*)s_)[");
    assert_has(t, "r.v[i] = (w >> (8 * i)) & 0xffu;");
    /* a store is to the element itself, never to the load form (seed 9: 23 lost stores) */
    assert_has(t, "    p_[threadIdx.x % 8u] = kf_bytes<kf_u8x2>(((const unsigned short*)x_)[1u]);\n");
    assert_has(t, "kf_bytes<kf_u8x2>(((const unsigned short*)p_)[3u]);\n");
    assert_lacks(t, ") = ");
    free(t);
}

/* Issue 7 bug 4: 8/16-bit results leave 32-bit arithmetic through
 * kf_narrow, so NVVM cannot narrow a negation into neg.s16; NaN -> 0. */
static void narrow_arithmetic_and_nan_conversions(void **state)
{
    char *t = emit_source("kernel k(x: i16, c: u8, f: f64, h: f16, o: &mut [i32], q: &mut [u64], b: &mut [u8]) {\n"
                          "    o[0] = (-x) as i32; o[1] = abs(x) as i32; o[2] = (x * x) as i32; o[3] = (x / x) as i32;\n"
                          "    b[0] = -c; q[0] = h as u64; b[1] = f as u8; o[4] = (o[5] + 1) * 2;\n}\n");
    assert_has(t, "o_[0u] = (int)(short)kf_narrow(0u - (unsigned)x_);");
    assert_has(t, "o_[1u] = (int)(short)kf_narrow((unsigned)kf_abs_i32(x_));");
    assert_has(t, "o_[2u] = (int)(short)kf_narrow((unsigned)x_ * (unsigned)x_);");
    /* div.s32 in inline PTX: NVVM narrowed a byte division by -16 wrongly (program 10530) */
    assert_has(t, "o_[3u] = (int)(short)kf_narrow((unsigned)kf_div_n32((int)x_, (int)x_));");
    assert_has(t, "int kf_div_n32(int a, int b) { int r; asm(\"div.s32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }");
    /* max(a, -a), not abs.s32: ptxas divides abs's result unsigned (seed 7 program 906);
       -a as ~a + 1: ptxas drops a neg.s32 merged into a three-input max (seed 11 program 6458) */
    assert_has(t, "int kf_abs_i32(int a) { int r; asm(\"{ .reg .s32 t; not.b32 t, %1; add.s32 t, t, 1; max.s32 %0, %1, t; }\" : \"=r\"(r) : \"r\"(a)); return r; }");
    assert_has(t, "b_[0u] = (unsigned char)kf_narrow(0u - (unsigned)c_);");
    assert_has(t, "unsigned kf_narrow(unsigned x) { unsigned r; asm(\"mov.b32 %0, %1;\" : \"=r\"(r) : \"r\"(x)); return r; }");
    assert_has(t, "q_[0u] = kf_f32_to_u64(kf_f16_to_f32(h_));");
    assert_has(t, "unsigned long long kf_f32_to_u64(float x) { unsigned long long r; asm(\"cvt.rzi.u64.f32 %0, %1;\" : \"=l\"(r) : \"f\"(x)); return x >= 0.0f ? r : 0ull; }");
    assert_has(t, "b_[1u] = (unsigned char)kf_sat_u32(kf_f64_to_u32(f_), 255u);");
    assert_has(t, "(int)((unsigned)o_[5u] + 1u) * 2u");           /* 32-bit: no kf_narrow */
    free(t);
}

/* A shift by a literal amount below the width (what ir/opt.c makes of / %
 * * by powers of two) is plain C; one by the width or a variable amount
 * keeps the helper that gives 0 or the sign fill. */
static void shifts_by_literal_amounts_are_plain_c(void **state)
{
    char *t = emit_source("kernel k(x: i32, y: i64, u: u32, o: &mut [i32], q: &mut [i64], p: &mut [u32]) {\n"
                          "    o[0] = x >> 31; o[1] = x << 3; o[2] = x >> 32; q[0] = y >> 63; q[1] = y << 5;\n"
                          "    p[0] = u >> 4; p[1] = u << u;\n}\n");
    assert_has(t, "o_[0u] = x_ >> 31u;");
    assert_has(t, "o_[1u] = (int)((unsigned)x_ << 3u);");   /* no signed overflow in C */
    assert_has(t, "o_[2u] = kf_shr_i32(x_, 32u);");
    assert_has(t, "q_[0u] = y_ >> 63ull;");
    assert_has(t, "q_[1u] = (long long)((unsigned long long)y_ << 5ull);");
    assert_has(t, "p_[0u] = u_ >> 4u;");
    assert_has(t, "p_[1u] = kf_shl_u32(u_, u_);");
    free(t);
}

/* Found by tests/fuzz/fuzz_compile (an empty source): emitting a module
 * without kernels passed a NULL buffer to memcpy and returned a bare
 * prelude; it is the PTX emitter's error now. */
static void module_without_kernels_is_a_diagnostic(void **state)
{
    kf_module *m = NULL;
    assert_int_equal(kf_compile("empty.kf", "const N: i32 = 1;\n", 18, NULL, &m), KF_OK);
    assert_int_equal(m->nkernels, 0);
    kf_buf out = {0};
    kf_diags d = {0}, dp = {0};
    assert_int_equal(kf_cuda_emit(m, NULL, NULL, &out, NULL, &d), KF_ERR_SOURCE);
    assert_int_equal(out.len, 0);
    assert_int_equal(d.nerrors, 1);
    assert_string_equal(d.items.data[0].msg, "no kernel to emit: the module declares no `kernel`");
    assert_int_equal(kf_ptx_emit(m, NULL, NULL, &out, NULL, &dp), KF_ERR_SOURCE);
    assert_string_equal(dp.items.data[0].msg, d.items.data[0].msg);
    kf_diags_free(&d);
    kf_diags_free(&dp);
    kf_buf_free(&out);
    kf_module_free(m);
}

static void reserved_kernel_name_is_a_diagnostic(void **state)
{
    kb_build(&B, case_saxpy);
    B.k.name = "new";
    kf_buf out = {0};
    kf_diags d = {0};
    assert_int_equal(kf_cuda_emit(&B.m, NULL, NULL, &out, NULL, &d), KF_ERR_SOURCE);
    assert_int_equal(d.nerrors, 1);
    assert_int_equal(d.items.data[0].loc.line, 1);
    kf_diags_free(&d);
    kf_buf_free(&out);
}

static void unbalanced_markers_are_reported_not_crashed_on(void **state)
{
    kb_build(&B, case_saxpy);
    B.k.nins--;   /* drop the ENDIF */
    kf_buf out = {0};
    kf_diags d = {0};
    assert_int_equal(kf_cuda_emit(&B.m, NULL, NULL, &out, NULL, &d), KF_ERR_SOURCE);
    assert_int_equal(d.nerrors, 1);
    kf_diags_free(&d);
    kf_buf_free(&out);
    kb_build(&B, case_saxpy);
    B.ins[5].a[0] = 9999;   /* operand out of range */
    assert_int_equal(kf_cuda_emit(&B.m, NULL, NULL, &out, NULL, &d), KF_ERR_SOURCE);
    kf_diags_free(&d);
    kf_buf_free(&out);
}

static void unused_results_are_not_emitted(void **state)
{
    kb_build(&B, case_saxpy);
    kf_val dead = kb_bin(&B, KF_OP_MUL, 1, 1, kb_val(&B, kf_type_scalar(KF_S_F32), "unused"));
    (void)dead;
    B.k.arrays[0] = (kf_ir_array){"scratch", {KF_TK_ARRAY, KF_S_F32, 1, KF_TF_SHARED, 32}, kb_loc(&B)};
    B.k.narrays = 1;
    kb_ins(&B, KF_IR_ASTORE, 0, kf_type_scalar(KF_S_F32), 0, kb_u32(&B, 0), 1, 0, 0);   /* never read */
    char *t = emit_opts(90, false, NULL);
    assert_lacks(t, "unused_");
    assert_lacks(t, "scratch_");
    free(t);
}

/* Issue 7, difftest seed 11 program 2249: a select of an f32 constant -0.0 is
 * a bit select NVVM cannot see through (kf_sel_f32); ptxas 13 turned
 * selp.f32 -1.0, -0.0 into an integer select and a conversion (+0.0). */
static void negative_zero_select_is_a_bit_select(void **state)
{
    char *t = emit_src("kernel k(x: &[f32], o: &mut [f32]) {\n"
                       "    o[0] = select(x[0] > 0.0, 1.0, -0.0);\n    o[1] = select(x[1] > 0.0, 1.0, 0.0);\n}\n", 90);
    assert_has(t, "o_[0u] = kf_sel_f32((x_[0u] > 0.0f), 1.0f, -0.0f);");
    assert_has(t, "o_[1u] = (x_[1u] > 0.0f) ? 1.0f : 0.0f;");
    assert_has(t, "selp.b32 %0, %2, %3, p;");
    free(t);
    (void)state;
}

static void literals_round_trip(void **state)
{
    kb_init(&B, "lits", 32, 1, 1);
    kf_val o = kb_param(&B, "o", kb_buf(KF_S_F32, 1, true));
    kf_val oi = kb_param(&B, "oi", kb_buf(KF_S_I32, 1, true));
    kb_store(&B, o, kb_u32(&B, 0), kb_const(&B, kf_type_scalar(KF_S_F32), 0x3dcccccd));  /* 0.1f */
    kb_store(&B, o, kb_u32(&B, 1), kb_const(&B, kf_type_scalar(KF_S_F32), 0x7f800000));  /* inf */
    kb_store(&B, o, kb_u32(&B, 2), kb_const(&B, kf_type_scalar(KF_S_F32), 0x40000000));  /* 2.0f */
    kb_store(&B, oi, kb_u32(&B, 0), kb_const(&B, kf_type_scalar(KF_S_I32), 0x80000000)); /* INT_MIN */
    kb_store(&B, oi, kb_u32(&B, 1), kb_const(&B, kf_type_scalar(KF_S_I32), 0xfffffffb)); /* -5 */
    kf_val neg = kb_val(&B, kf_type_scalar(KF_S_F32), NULL);
    kb_ins(&B, KF_IR_UNOP, KF_OP_NEG, kf_type_scalar(KF_S_F32), neg, kb_const(&B, kf_type_scalar(KF_S_F32), 0xbfc00000), 0, 0, 0);
    kb_store(&B, o, kb_u32(&B, 3), neg);                                                  /* -(-1.5f) */
    char *t = emit_opts(90, false, NULL);
    assert_has(t, "o_[3u] = kf_neg_f32(-1.5f);");   /* f32 negation opaque to NVVM (KF_CU_H_FSIGN) */
    assert_has(t, "o_[0u] = 0.1f;");
    assert_has(t, "o_[1u] = __uint_as_float(0x7f800000u);");
    assert_has(t, "o_[2u] = 2.0f;");
    assert_has(t, "oi_[0u] = (-2147483647 - 1);");
    assert_has(t, "oi_[1u] = -5;");
    free(t);
}

static void operands_of_select_are_evaluated_on_every_lane(void **state)
{
    kb_init(&B, "sel", 32, 1, 1);
    kf_val o = kb_param(&B, "o", kb_buf(KF_S_F32, 1, true));
    kf_val x = kb_param(&B, "x", kf_type_scalar(KF_S_F32));
    kf_val r = kb_val(&B, kf_type_scalar(KF_S_F32), NULL);
    kb_ins(&B, KF_IR_SHFL, KF_BI_SHFL_DOWN, kf_type_scalar(KF_S_F32), r, x, kb_u32(&B, 1), 0, 0);
    kf_val c = kb_cmp(&B, KF_OP_GT, x, kb_const(&B, kf_type_scalar(KF_S_F32), 0));
    kf_val s = kb_val(&B, kf_type_scalar(KF_S_F32), NULL);
    kb_ins(&B, KF_IR_SELECT, 0, kf_type_scalar(KF_S_F32), s, c, r, x, 0);
    kb_store(&B, o, kb_u32(&B, 0), s);
    char *t = emit_opts(90, false, NULL);
    /* the shuffle is its own statement, not a branch of ?: */
    assert_has(t, "    float t3_ = kf_shfl_down(x_, 1u, kf_wn);\n");
    assert_has(t, "    o_[0u] = (x_ > 0.0f) ? t3_ : x_;\n");
    free(t);
}

static void vector_constructor_chains_become_one_brace_initialiser(void **state)
{
    kb_init(&B, "ctor", 32, 1, 1);
    kf_type v4 = kf_type_vector(KF_S_F32, 4), f32 = kf_type_scalar(KF_S_F32);
    kf_val o = kb_param(&B, "o", kb_buf(KF_S_F32, 4, true));
    kf_val a = kb_param(&B, "a", f32);
    kf_val s = kb_val(&B, v4, NULL);
    kb_ins(&B, KF_IR_SPLAT, 0, v4, s, a, 0, 0, 0);
    kf_val i1 = kb_val(&B, v4, NULL);
    kb_ins(&B, KF_IR_INSERT, 0, v4, i1, s, kb_const(&B, f32, 0x40000000), 0, 1);   /* 2.0 */
    kf_val neg = kb_val(&B, f32, "na");
    kb_ins(&B, KF_IR_UNOP, KF_OP_NEG, f32, neg, a, 0, 0, 0);
    kf_val i2 = kb_val(&B, v4, "v");
    kb_ins(&B, KF_IR_INSERT, 0, v4, i2, i1, neg, 0, 3);
    kb_store(&B, o, kb_u32(&B, 0), i2);
    char *t = emit_opts(90, false, NULL);
    assert_has(t, "    float na_ = kf_neg_f32(a_);\n    kf_f32x4 v_ = kf_f32x4{{a_, 2.0f, a_, na_}};\n    o_[0u] = v_;\n");
    free(t);
}

static void else_blocks_holding_only_an_if_become_else_if(void **state)
{
    kb_init(&B, "elif", 32, 1, 1);
    kf_type i32 = kf_type_scalar(KF_S_I32);
    kf_val o = kb_param(&B, "o", kb_buf(KF_S_I32, 1, true));
    kf_val x = kb_param(&B, "x", i32);
    kf_val c = kb_val(&B, i32, "cls");
    kb_if(&B, kb_cmp(&B, KF_OP_LT, x, kb_const(&B, i32, 3)));
    kb_mov(&B, c, kb_const(&B, i32, 1));
    kb_mark(&B, KF_IR_ELSE);
    kb_if(&B, kb_cmp(&B, KF_OP_LT, x, kb_const(&B, i32, 6)));
    kb_mov(&B, c, kb_const(&B, i32, 2));
    kb_mark(&B, KF_IR_ELSE);
    kb_mov(&B, c, kb_const(&B, i32, 3));
    kb_mark(&B, KF_IR_ENDIF);
    kb_mark(&B, KF_IR_ENDIF);
    kb_store(&B, o, kb_u32(&B, 0), c);
    char *t = emit_opts(90, false, NULL);
    assert_has(t, "    if (x_ < 3) {\n        cls_ = 1;\n    } else if (x_ < 6) {\n        cls_ = 2;\n    } else {\n"
                  "        cls_ = 3;\n    }\n    o_[0u] = cls_;\n}\n");
    free(t);
}

/* Every library and feature kernel: emitted twice byte-identical, every
 * operation spelled (the emitter writes "?" for one it cannot spell). */
static void kf_files_emit_deterministically_and_completely(void **state)
{
    static const char *const dirs[] = {KF_SOURCE_DIR "/kernels", KF_SOURCE_DIR "/kernels/features"};
    size_t nfiles = 0;
    for (size_t d = 0; d < 2; d++) {
        DIR *dh = opendir(dirs[d]);
        assert_non_null(dh);
        for (struct dirent *e; (e = readdir(dh));) {
            size_t l = strlen(e->d_name);
            if (l < 4 || strcmp(e->d_name + l - 3, ".kf") != 0) continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            char *src;
            size_t len;
            assert_int_equal(kf_read_file(path, &src, &len, NULL), KF_OK);
            kf_module *m = NULL;
            if (kf_compile(e->d_name, src, len, NULL, &m) != KF_OK) fail_msg("%s does not compile", path);
            char *text[2];
            for (int r = 0; r < 2; r++) {
                kf_emit_opts o = {80, r == 1, false};
                kf_buf out = {0};
                kf_diags dg = {0};
                assert_int_equal(kf_cuda_emit(m, NULL, &o, &out, NULL, &dg), KF_OK);
                kf_diags_free(&dg);
                text[r] = kf_buf_take(&out);
                kf_buf_reset(&out);
                assert_int_equal(kf_cuda_emit(m, NULL, &o, &out, NULL, &dg), KF_OK);
                assert_string_equal(text[r], out.data);
                kf_buf_free(&out);
                kf_diags_free(&dg);
                const char *body = strstr(text[r], "__global__");
                assert_non_null(body);
                if (strstr(body, "?;") || strstr(body, "(?") || strstr(body, "?)") || strstr(body, " ?,"))
                    fail_msg("%s: an operation was not spelled:\n%s", path, text[r]);
            }
            assert_non_null(strstr(text[1], "#line "));
            assert_null(strstr(text[0], "#line "));
            free(text[0]);
            free(text[1]);
            kf_module_free(m);
            free(src);
            nfiles++;
        }
        closedir(dh);
    }
    assert_true(nfiles >= 2);
}

static void per_lane_results_fold_lane_by_lane(void **state)
{
    kb_init(&B, "lanes", 32, 1, 1);
    kf_type v2 = kf_type_vector(KF_S_F32, 2);
    kf_val o = kb_param(&B, "o", kb_buf(KF_S_F32, 2, true));
    kf_val a = kb_param(&B, "a", v2);
    kf_val b = kb_param(&B, "b", v2);
    kf_val acc = kb_val(&B, v2, "acc");
    kb_mov(&B, acc, a);
    kf_val d = kb_bin(&B, KF_OP_SUB, a, b, 0);
    kf_val e = kb_math(&B, KF_BI_EXP, v2, d, 0, 0);
    kb_bin(&B, KF_OP_MUL, acc, e, acc);   /* acc = acc * exp(a - b), in place */
    kb_store(&B, o, kb_u32(&B, 0), acc);
    char *t = emit_opts(90, false, NULL);
    assert_has(t, "    kf_f32x2 acc_ = a_;\n"
                  "    acc_.v[0] = __fmul_rn(acc_.v[0], kf_exp_approx(__fsub_rn(a_.v[0], b_.v[0])));\n"
                  "    acc_.v[1] = __fmul_rn(acc_.v[1], kf_exp_approx(__fsub_rn(a_.v[1], b_.v[1])));\n");
    free(t);
}

/* Randomly corrupted IR (deterministic seed): every call either emits a
 * module with its entry point or reports an error in diags; none faults
 * (run under ASan/UBSan in the sanitizer build). */
static void corrupted_ir_is_reported_or_emitted_never_a_fault(void **state)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t ncases = sizeof kf_cuda_cases / sizeof *kf_cuda_cases, nerr = 0;
    for (int it = 0; it < 3000; it++) {
        kb_build(&B, kf_cuda_cases[it % ncases]);
        for (int q = 0; q < 3; q++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t r = (uint32_t)(seed >> 33);
            kf_ir_ins *in = &B.ins[r % B.k.nins];
            kf_ir_value *v = &B.vals[1 + (r >> 8) % (B.k.nvals - 1)];
            switch ((r >> 20) % 7) {
            case 0: in->op = (uint16_t)((r >> 4) % (KF_IR_OP_COUNT + 2)); break;
            case 1: in->a[(r >> 4) % 4] = (kf_val)((r >> 6) % (B.k.nvals + 3)); break;
            case 2: in->imm = (r >> 4) % 40; break;
            case 3: in->sub = (uint16_t)((r >> 4) % 80); break;
            case 4: v->type.scalar = (uint8_t)((r >> 4) % (KF_S_COUNT + 2)); break;
            case 5: v->type.lanes = (uint8_t)(1u << ((r >> 4) % 6)); break;
            default: in->dst = (kf_val)((r >> 4) % (B.k.nvals + 2)); break;
            }
        }
        kf_emit_opts o = {90, it % 2 == 1, false};
        kf_buf out = {0};
        kf_diags d = {0};
        kf_status st = kf_cuda_emit(&B.m, NULL, &o, &out, NULL, &d);
        if (st == KF_OK) assert_non_null(strstr(out.data, "__global__"));
        else {
            assert_int_equal(st, KF_ERR_SOURCE);
            assert_true(d.nerrors > 0);
            nerr++;
        }
        kf_buf_free(&out);
        kf_diags_free(&d);
    }
    assert_true(nerr > 0);   /* the corruption does reach the checks */
}

static void shuffles_by_a_runtime_amount_keep_the_own_value_past_the_warp(void **state)
{
    char *t = emit_case(case_atomics_all);
    /* offsets >= 32 and sources past the existing lanes: the own value */
    assert_has(t, "T r = __shfl_down_sync(kf_warp_mask(n), v, d & 31u);\n"
                  "    return d < 32u && kf_lane_id() + d < n ? r : v;");
    assert_has(t, "return m < 32u && (kf_lane_id() ^ m) < n ? r : v;");
    assert_has(t, "T r = __shfl_up_sync(kf_warp_mask(n), v, d & 31u);\n    return d < 32u ? r : v;");
    assert_has(t, "T r = __shfl_sync(kf_warp_mask(n), v, s & 31u);\n    return (s & 31u) < n ? r : v;");
    assert_has(t, "kf_shfl_xor(");
    assert_has(t, "kf_shfl_up(");
    assert_has(t, "kf_shfl_down(");
    assert_has(t, "kf_shfl(");
    assert_lacks(t, "0xffffffffu, ");
    free(t);
    (void)state;
}

static void warp_operations_use_the_lanes_that_exist(void **state)
{
    char *t = emit_case(case_warp);
    /* once per kernel, from the launched block: a partial last warp */
    assert_has(t, "const unsigned kf_wn = kf_warp_lanes();\n");
    assert_has(t, "unsigned r = t - (l & ~31u);\n    return r < 32u ? r : 32u;");
    assert_has(t, "kf_warp_mask(unsigned n) { return n < 32u ? (1u << n) - 1u : 0xffffffffu; }");
    assert_lacks(t, "__shfl_xor_sync(0xffffffffu");
    free(t);
    (void)state;
}

static void unsigned_comparisons_with_zero_are_constants(void **state)
{
    kb_init(&B, "cmp0", 32, 1, 1);
    kf_val o = kb_param(&B, "o", kb_buf(KF_S_BOOL, 1, true));
    kf_val n = kb_param(&B, "n", kf_type_scalar(KF_S_U32));
    kb_store(&B, o, kb_u32(&B, 0), kb_cmp(&B, KF_OP_GE, n, kb_u32(&B, 0)));
    kb_store(&B, o, kb_u32(&B, 1), kb_cmp(&B, KF_OP_LT, n, kb_u32(&B, 0)));
    kb_store(&B, o, kb_u32(&B, 2), kb_cmp(&B, KF_OP_LE, n, kb_u32(&B, 0)));
    char *t = emit_opts(90, false, NULL);
    assert_has(t, "o_[0u] = true /* n_ >= 0 */;");   /* NVRTC warns #186-D on the comparison */
    assert_has(t, "o_[1u] = false /* n_ < 0 */;");
    assert_has(t, "o_[2u] = n_ <= 0u;");
    free(t);
}

/* Issue 7 (difftest seed 1 program 3483): the comparison folded to a
 * constant keeps its operand as a comment, and the operand held an f16
 * literal's own comment, which ended the outer one early: NVRTC then read
 * the rest of the module as namespace-scope declarations. */
static void comments_of_folded_comparisons_never_nest(void **state)
{
    (void)state;
    char *t = emit_source("kernel k(o: &mut [bool], n: u32, h: &[f16]) {\n"
                          "    let i = thread_id.x;\n"
                          "    o[i] = 0 > (n + select(h[i] <= 64.0, 127, n));\n"
                          "}\n");
    assert_has(t, "= false /* 0 > (n_ + ((kf_f16_to_f32(h_[i_]) <= kf_f16_to_f32(kf_f16{0x5400} / * 64 * /)) ? 127u : n_)) */;");
    const char *c = strstr(t, "= false /*");
    assert_non_null(c);
    const char *end = strstr(c + 10, "*/"), *nested = strstr(c + 10, "/*");
    assert_true(end && (!nested || nested > end));   /* one comment, closed once */
    free(t);
}


/* ---- section 8, from source ---------------------------------------------------- */

static void shared_arrays_align_16_and_views_cast(void **state)
{
    char *t = emit_src("kernel k(o: &mut [f32x4], i: u32) {\n    shared s: u8[3];\n    shared d: f32[];\n"
                       "    s[0] = 1;\n    d[i] = s[0] as f32;\n    o[0] = (d as shared f32x4[])[i];\n}\n", 90);
    assert_has(t, "__shared__ __align__(16) unsigned char s_[3];");
    assert_has(t, "extern __shared__ __align__(16) unsigned char kf_dyn_shared[];");
    assert_has(t, "float *const d_ = (float *)kf_dyn_shared;");
    assert_has(t, "((kf_f32x4*)d_)[i_]");
    free(t);
}

/* f16/bf16 vector + - * fma min max abs: one call over the whole vector
 * (a packed instruction per pair); bf16 + - * have an sm_80 form. */
static void packed_half_vectors_call_pair_helpers(void **state)
{
    const char *src = "kernel k(x: &[bf16x8], h: &[f16x2], o: &mut [bf16x8], p: &mut [f16x2]) {\n"
                      "    o[0] = fma(x[0], x[1], x[0] * x[1]);\n    p[0] = abs(min(h[0], h[1]) - h[0]);\n}\n";
    char *t = emit_src(src, 90);
    assert_has(t, "kf_pairs(kf_bh2_fma, ");
    assert_has(t, "kf_pairs(kf_bh2_mul, ");
    assert_has(t, "kf_pairs(kf_h2_abs, kf_pairs(kf_h2_sub, kf_pairs(kf_h2_min, ");
    assert_has(t, "asm(\"mul.rn.bf16x2 %0, %1, %2;\"");
    assert_lacks(t, ".v[1] = ");   /* not lane by lane */
    free(t);
    t = emit_src(src, 80);
    assert_has(t, "mov.b32 k, 0x80008000; fma.rn.bf16x2 %0, %1, %2, k;");
    assert_lacks(t, "mul.rn.bf16x2");
    free(t);
}

static void intrinsics_are_inline_ptx(void **state)
{
    char *t = emit_src("kernel k(w: u32, o: &mut [i32], u: &mut [u64], f: &mut [f32]) {\n"
                       "    o[0] = dot4(bitcast(u8x4, w), bitcast(i8x4, w), 1);\n    u[0] = bfe(w as u64, 3, 60);\n"
                       "    u[1] = bfi(u[2], u[3], w, 8);\n    o[1] = bitcast(i32, prmt(w, w, 0x1234));\n"
                       "    f[0] = fast_div(rcp(f[1]), f[2]);\n}\n", 90);
    assert_has(t, "kf_dot4_us(kf_bitcast<unsigned>(");
    assert_has(t, "asm(\"dp4a.u32.s32 %0, %1, %2, %3;\"");
    assert_has(t, "kf_bfe_u64(");
    assert_has(t, "asm(\"bfe.u64 %0, %1, %2, %3;\"");
    assert_has(t, "kf_bfi_u64(");
    assert_has(t, "kf_prmt(w_, w_, 4660u)");
    assert_has(t, "asm(\"prmt.b32 %0, %1, %2, %3;\"");
    assert_has(t, "kf_fast_div(kf_rcp_approx(");
    assert_has(t, "asm(\"rcp.approx.ftz.f32 %0, %1;\"");
    free(t);
}

/* The optimiser folds splat(const) into a vector CONST, which holds its
 * value in every lane (ir/ir.h): all four lanes are written, not lane 0
 * and zeros (the H200 run of the differential tester, 2743 programs). */
static void folded_vector_constants_fill_every_lane(void **state)
{
    char *t = emit_src_at("kernel k(o: &mut [f16x4], p: &mut [u32x4]) {\n    o[0] = f16x4(1);\n    p[0] = u32x4(7);\n}\n",
                          90, KF_OPT_DEFAULT);
    assert_has(t, "kf_f16x4{{kf_f16{0x3c00} /* 1 */, kf_f16{0x3c00} /* 1 */, kf_f16{0x3c00} /* 1 */, kf_f16{0x3c00} /* 1 */}}");
    assert_has(t, "{{7u, 7u, 7u, 7u}}");
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entry_point_has_launch_bounds_and_restrict_params),
        cmocka_unit_test(shifts_past_the_width_go_through_helpers),
        cmocka_unit_test(signed_division_and_wrapping_add_have_no_undefined_behaviour),
        cmocka_unit_test(conversions_truncate_saturate_and_round_once),
        cmocka_unit_test(short_circuit_and_is_an_if_on_the_left_operand),
        cmocka_unit_test(for_loops_get_a_header_and_plain_continue),
        cmocka_unit_test(continue_in_a_loop_with_latch_jumps_to_the_latch),
        cmocka_unit_test(code_after_return_is_not_emitted),
        cmocka_unit_test(vector_buffers_are_aligned_structs_loaded_whole),
        cmocka_unit_test(warp_atomic_and_shared_builtins_map_to_cuda),
        cmocka_unit_test(names_are_kept_sanitised_and_unique),
        cmocka_unit_test(line_directives_precede_statements_of_a_new_source_line),
        cmocka_unit_test(line_directive_repeats_when_one_source_line_spans_statements),
        cmocka_unit_test(emission_is_deterministic),
        cmocka_unit_test(unsupported_arch_is_a_diagnostic),
        cmocka_unit_test(shifts_by_literal_amounts_are_plain_c),
        cmocka_unit_test(module_without_kernels_is_a_diagnostic),
        cmocka_unit_test(reserved_kernel_name_is_a_diagnostic),
        cmocka_unit_test(loop_whose_body_always_leaves_keeps_its_variable),
        cmocka_unit_test(names_never_collide_with_cuda_or_cpp),
        cmocka_unit_test(narrow_arithmetic_and_nan_conversions),
        cmocka_unit_test(byte_pairs_load_as_halfwords),
        cmocka_unit_test(unbalanced_markers_are_reported_not_crashed_on),
        cmocka_unit_test(unused_results_are_not_emitted),
        cmocka_unit_test(literals_round_trip),
        cmocka_unit_test(negative_zero_select_is_a_bit_select),
        cmocka_unit_test(operands_of_select_are_evaluated_on_every_lane),
        cmocka_unit_test(vector_constructor_chains_become_one_brace_initialiser),
        cmocka_unit_test(else_blocks_holding_only_an_if_become_else_if),
        cmocka_unit_test(kf_files_emit_deterministically_and_completely),
        cmocka_unit_test(per_lane_results_fold_lane_by_lane),
        cmocka_unit_test(corrupted_ir_is_reported_or_emitted_never_a_fault),
        cmocka_unit_test(shuffles_by_a_runtime_amount_keep_the_own_value_past_the_warp),
        cmocka_unit_test(warp_operations_use_the_lanes_that_exist),
        cmocka_unit_test(unsigned_comparisons_with_zero_are_constants),
        cmocka_unit_test(comments_of_folded_comparisons_never_nest),
        cmocka_unit_test(shared_arrays_align_16_and_views_cast),
        cmocka_unit_test(packed_half_vectors_call_pair_helpers),
        cmocka_unit_test(intrinsics_are_inline_ptx),
        cmocka_unit_test(folded_vector_constants_fill_every_lane),
        cmocka_unit_test(bitcast_to_narrow_lanes_shifts_each_lane_out_of_its_word),
        cmocka_unit_test(nested_integer_min_max_are_ptx_min_max),
        cmocka_unit_test(loop_pins_the_invariant_row_offsets_of_its_load_indices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
