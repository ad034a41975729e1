/* Float math builtins in PTX, one lane at a time.
 *
 * f32 uses the hardware approximations the contract allows; f64 has no
 * approximate exp/log/sin/cos/tanh in PTX, so those are call-free software
 * sequences (range reduction + Taylor polynomial in Horner form, fma.rn).
 * f16/bf16 compute in f32 and round once, except abs and fma, which are
 * native (and exact but for the one rounding). Scalar f16/bf16 min, max and
 * clamp compare in f32 too (exact both ways, the same NaN and -0 < +0
 * rules): ptxas 13 assembles `max.f16` then `min.f16` (a clamp) into two
 * HMNMX2 on a broadcast pair whose result holds the value in both halves,
 * yet then reads that register as a zero-extended 16-bit integer after a
 * bitcast (issue 7, difftest seed 1 program 3754). The packed .f16x2 forms
 * are not affected: both halves are lanes.
 *
 * Error bounds. f32: the PTX ISA's documented bounds of the approximate
 * instructions. f64: measured on 2e6 random arguments per function against
 * glibc long double, simulating these exact sequences in C with fma():
 *   fn      f32                                      f64 (max measured -> documented bound)
 *   exp     ex2.approx(x*log2e): 2 ulp + the x*log2e  1.00 -> 1 ulp  (2^k*p scaled in two steps,
 *           rounding (grows with |x|)                  exact to the subnormal range)
 *   exp2    ex2.approx: 2 ulp                         1.00 -> 1 ulp
 *   log     lg2.approx*ln2: 2^-21.41 abs in [0.5, 2], 1.16 -> 2 ulp
 *           2 ulp + 1 rounding elsewhere
 *   log2    lg2.approx: as log                        1.63 -> 2 ulp
 *   sqrt    sqrt.rn: correctly rounded                sqrt.rn: correctly rounded
 *   rsqrt   rsqrt.approx: 2 ulp                       1/sqrt.rn (div.rn): 1.5 ulp
 *   sin,cos sin/cos.approx of x - 2 pi k:            1.47 -> 2 ulp for |x| < 2^20 (Cody-Waite with pi/2
 *           2^-20.5 abs + 2^-21 for the turn, for      in 3 parts); beyond, accuracy degrades
 *           |x| < 2^24 (sincos_f32); beyond, grows
 *   tanh    tanh.approx: 2^-10.987 relative           2.45 -> 3 ulp (e/(e+2), e = expm1(2|x|))
 *   floor/ceil/trunc/round/abs/min/max: exact; fma: one rounding.
 *   rcp     rcp.approx.ftz.f32: 1 ulp, subnormal inputs and results flushed to zero of their sign;
 *           fast_div(a, b) = mul.rn.f32(a, rcp(b)): that, and one more rounding. */
#include "ptx_internal.h"

#include <string.h>

static preg fd_imm(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return kf_ptx_imm(KF_S_F64, b);
}

/* p = c[n-1]; p = p*z + c[i] for i = n-2 .. 0 */
static void horner(ptx_cx *cx, const char *p, const char *z, const double *c, int n)
{
    kf_ptx_ins(cx, "mov.f64 %s, %s", p, fd_imm(c[n - 1]).s);
    for (int i = n - 2; i >= 0; i--) kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", p, p, z, fd_imm(c[i]).s);
}

/* d = 2^k for an s32 k in [-1022, 1023]. */
static void pow2i(ptx_cx *cx, const char *d, const char *k)
{
    preg e = kf_ptx_tmp(cx, PTX_RC_R), z = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_ins(cx, "add.s32 %s, %s, 1023", e.s, k);
    kf_ptx_ins(cx, "shl.b32 %s, %s, 20", e.s, e.s);
    kf_ptx_ins(cx, "mov.b32 %s, 0", z.s);
    kf_ptx_ins(cx, "mov.b64 %s, {%s, %s}", d, z.s, e.s);
}

/* d = p * 2^k for |k| <= 2100, in two exact-range steps so that the only
 * rounding is the last one (gradual underflow). */
static void ldexp_f64(ptx_cx *cx, const char *d, const char *p, const char *k)
{
    preg k1 = kf_ptx_tmp(cx, PTX_RC_R), k2 = kf_ptx_tmp(cx, PTX_RC_R);
    preg s1 = kf_ptx_tmp(cx, PTX_RC_FD), s2 = kf_ptx_tmp(cx, PTX_RC_FD), t = kf_ptx_tmp(cx, PTX_RC_FD);
    kf_ptx_ins(cx, "shr.s32 %s, %s, 1", k1.s, k);
    kf_ptx_ins(cx, "sub.s32 %s, %s, %s", k2.s, k, k1.s);
    pow2i(cx, s1.s, k1.s);
    pow2i(cx, s2.s, k2.s);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", t.s, p, s1.s);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", d, t.s, s2.s);
}

#define LOG2E 1.4426950408889634
#define LN2_HI 0x1.62e42fefa39efp-1
#define LN2_LO 0x1.abc9e3b39803fp-56

/* Taylor coefficients: c[i] = m^i / i!, i = 0 .. n-1. */
static void taylor(double *c, int n, double m)
{
    double f = 1.0, mi = 1.0;
    for (int i = 0; i < n; i++) {
        if (i) f *= i, mi *= m;
        c[i] = mi / f;
    }
}

/* d = x kept at or above (lower) or at or below the constant imm; a NaN x
 * gives imm, as max.f64/min.f64 would, which kforge never emits (exact_minmax) */
static void f64_bound(ptx_cx *cx, const char *d, const char *x, const char *imm, bool lower)
{
    preg p = kf_ptx_tmp(cx, PTX_RC_P);
    kf_ptx_ins(cx, "setp.%s.f64 %s, %s, %s", lower ? "gt" : "lt", p.s, x, imm);
    kf_ptx_ins(cx, "selp.f64 %s, %s, %s, %s", d, x, imm, p.s);
}

/* exp (base e) or exp2 of an f64. */
static void exp_f64(ptx_cx *cx, const char *d, const char *x, bool base2)
{
    double c[14];
    taylor(c, 14, base2 ? LN2_HI : 1.0);
    if (base2) c[1] = LN2_HI;
    preg xc = kf_ptx_tmp(cx, PTX_RC_FD), t = kf_ptx_tmp(cx, PTX_RC_FD), kf = kf_ptx_tmp(cx, PTX_RC_FD);
    preg r = kf_ptx_tmp(cx, PTX_RC_FD), p = kf_ptx_tmp(cx, PTX_RC_FD), y = kf_ptx_tmp(cx, PTX_RC_FD);
    preg k = kf_ptx_tmp(cx, PTX_RC_R), nan = kf_ptx_tmp(cx, PTX_RC_P);
    double lim = base2 ? 1100.0 : 760.0;
    kf_ptx_comment(cx, "%s(f64): 2^k * poly(r), degree-13 Taylor, |r| <= %s", base2 ? "exp2" : "exp",
                base2 ? "0.5" : "ln2/2");
    f64_bound(cx, xc.s, x, fd_imm(-lim).s, true);
    f64_bound(cx, xc.s, xc.s, fd_imm(lim).s, false);
    if (base2) {
        kf_ptx_ins(cx, "cvt.rni.f64.f64 %s, %s", kf.s, xc.s);
        kf_ptx_ins(cx, "sub.rn.f64 %s, %s, %s", r.s, xc.s, kf.s);
    } else {
        kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", t.s, xc.s, fd_imm(LOG2E).s);
        kf_ptx_ins(cx, "cvt.rni.f64.f64 %s, %s", kf.s, t.s);
        kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", r.s, kf.s, fd_imm(-LN2_HI).s, xc.s);
        kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", r.s, kf.s, fd_imm(-LN2_LO).s, r.s);
    }
    kf_ptx_ins(cx, "cvt.rzi.s32.f64 %s, %s", k.s, kf.s);
    horner(cx, p.s, r.s, c, 14);
    ldexp_f64(cx, y.s, p.s, k.s);
    kf_ptx_ins(cx, "setp.nan.f64 %s, %s, %s", nan.s, x, x);
    kf_ptx_ins(cx, "selp.f64 %s, %s, %s, %s", d, x, y.s, nan.s);
}

/* log (base e) or log2 of an f64: x = m * 2^e, m in [sqrt(1/2), sqrt(2)),
 * f = m - 1 (exact), s = f/(2+f), |s| <= 0.1716; log(m) = 2 atanh(s) =
 * f - s*(f - R) with R = sum 2 s^(2i)/(2i+1), i >= 1, to s^22. */
static void log_f64(ptx_cx *cx, const char *d, const char *x, bool base2)
{
    double c[11];
    for (int i = 0; i < 11; i++) c[i] = 2.0 / (2 * i + 3);
    preg xs = kf_ptx_tmp(cx, PTX_RC_FD), lo = kf_ptx_tmp(cx, PTX_RC_R), hi = kf_ptx_tmp(cx, PTX_RC_R);
    preg e = kf_ptx_tmp(cx, PTX_RC_R), psub = kf_ptx_tmp(cx, PTX_RC_P), pbig = kf_ptx_tmp(cx, PTX_RC_P);
    preg m = kf_ptx_tmp(cx, PTX_RC_FD), f = kf_ptx_tmp(cx, PTX_RC_FD), den = kf_ptx_tmp(cx, PTX_RC_FD);
    preg s = kf_ptx_tmp(cx, PTX_RC_FD), z = kf_ptx_tmp(cx, PTX_RC_FD), q = kf_ptx_tmp(cx, PTX_RC_FD);
    preg lm = kf_ptx_tmp(cx, PTX_RC_FD), ef = kf_ptx_tmp(cx, PTX_RC_FD), y = kf_ptx_tmp(cx, PTX_RC_FD);
    preg p = kf_ptx_tmp(cx, PTX_RC_P), hm = kf_ptx_tmp(cx, PTX_RC_R), fr = kf_ptx_tmp(cx, PTX_RC_FD);
    kf_ptx_comment(cx, "%s(f64): e*ln2 + log(m), log(m) = f - s*(f - R(s*s)), s = f/(2+f), f = m-1",
                base2 ? "log2" : "log");
    kf_ptx_ins(cx, "setp.lt.f64 %s, %s, 0d0010000000000000", psub.s, x);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, 0d4350000000000000", xs.s, x);  /* 2^54 */
    kf_ptx_ins(cx, "selp.f64 %s, %s, %s, %s", xs.s, xs.s, x, psub.s);
    kf_ptx_ins(cx, "mov.b64 {%s, %s}, %s", lo.s, hi.s, xs.s);
    kf_ptx_ins(cx, "shr.u32 %s, %s, 20", e.s, hi.s);
    kf_ptx_ins(cx, "sub.s32 %s, %s, 1023", e.s, e.s);
    kf_ptx_ins(cx, "@%s sub.s32 %s, %s, 54", psub.s, e.s, e.s);
    kf_ptx_ins(cx, "and.b32 %s, %s, 0x000FFFFF", hm.s, hi.s);
    kf_ptx_ins(cx, "setp.gt.u32 %s, %s, 0x0006A09E", pbig.s, hm.s);   /* m > sqrt(2) */
    kf_ptx_ins(cx, "or.b32 %s, %s, 0x3FF00000", hm.s, hm.s);
    kf_ptx_ins(cx, "@%s sub.u32 %s, %s, 0x00100000", pbig.s, hm.s, hm.s);
    kf_ptx_ins(cx, "@%s add.s32 %s, %s, 1", pbig.s, e.s, e.s);
    kf_ptx_ins(cx, "mov.b64 %s, {%s, %s}", m.s, lo.s, hm.s);
    kf_ptx_ins(cx, "sub.rn.f64 %s, %s, 0d3FF0000000000000", f.s, m.s);
    kf_ptx_ins(cx, "add.rn.f64 %s, %s, 0d3FF0000000000000", den.s, m.s);
    kf_ptx_ins(cx, "div.rn.f64 %s, %s, %s", s.s, f.s, den.s);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", z.s, s.s, s.s);
    horner(cx, q.s, z.s, c, 11);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", q.s, q.s, z.s);
    kf_ptx_ins(cx, "sub.rn.f64 %s, %s, %s", fr.s, f.s, q.s);
    kf_ptx_ins(cx, "neg.f64 %s, %s", s.s, s.s);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", lm.s, s.s, fr.s, f.s);
    kf_ptx_ins(cx, "cvt.rn.f64.s32 %s, %s", ef.s, e.s);
    if (base2) {
        kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", y.s, lm.s, fd_imm(LOG2E).s, ef.s);
    } else {
        kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", lm.s, ef.s, fd_imm(LN2_LO).s, lm.s);
        kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", y.s, ef.s, fd_imm(LN2_HI).s, lm.s);
    }
    kf_ptx_ins(cx, "setp.eq.f64 %s, %s, 0d7FF0000000000000", p.s, x);
    kf_ptx_ins(cx, "selp.f64 %s, %s, %s, %s", y.s, x, y.s, p.s);
    kf_ptx_ins(cx, "setp.eq.f64 %s, %s, 0d0000000000000000", p.s, x);
    kf_ptx_ins(cx, "selp.f64 %s, 0dFFF0000000000000, %s, %s", y.s, y.s, p.s);
    kf_ptx_ins(cx, "setp.ltu.f64 %s, %s, 0d0000000000000000", p.s, x);
    kf_ptx_ins(cx, "selp.f64 %s, 0dFFF8000000000000, %s, %s", d, y.s, p.s);
}

/* sin (quadrant offset 0) or cos (offset 1): k = rint(x*2/pi), r = x - k*pi/2
 * in three fma steps (pi/2 to 161 bits), Taylor sin/cos of r to degree 19/18,
 * pick by quadrant. */
static void sincos_f64(ptx_cx *cx, const char *d, const char *x, bool is_cos)
{
    double sc[10], cc[10];
    double f = 1.0;
    for (int i = 1; i <= 19; i++) {
        f *= i;
        if (i % 2) sc[i / 2] = (i / 2 % 2 ? -1.0 : 1.0) / f;
        else cc[i / 2] = (i / 2 % 2 ? -1.0 : 1.0) / f;
    }
    cc[0] = 1.0;
    preg t = kf_ptx_tmp(cx, PTX_RC_FD), kf = kf_ptx_tmp(cx, PTX_RC_FD), r = kf_ptx_tmp(cx, PTX_RC_FD);
    preg z = kf_ptx_tmp(cx, PTX_RC_FD), ps = kf_ptx_tmp(cx, PTX_RC_FD), pc = kf_ptx_tmp(cx, PTX_RC_FD);
    preg v = kf_ptx_tmp(cx, PTX_RC_FD), k = kf_ptx_tmp(cx, PTX_RC_R), q = kf_ptx_tmp(cx, PTX_RC_R);
    preg pswap = kf_ptx_tmp(cx, PTX_RC_P), pneg = kf_ptx_tmp(cx, PTX_RC_P), nv = kf_ptx_tmp(cx, PTX_RC_FD);
    kf_ptx_comment(cx, "%s(f64): quadrant k = rint(x*2/pi), Cody-Waite r = x - k*pi/2, Taylor on |r| <= pi/4",
                is_cos ? "cos" : "sin");
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, 0d3FE45F306DC9C883", t.s, x);
    kf_ptx_ins(cx, "cvt.rni.f64.f64 %s, %s", kf.s, t.s);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, 0dBFF921FB54442D18, %s", r.s, kf.s, x);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, 0dBC91A62633145C07, %s", r.s, kf.s, r.s);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, 0d391F1976B7ED8FBC, %s", r.s, kf.s, r.s);
    kf_ptx_ins(cx, "cvt.rzi.s32.f64 %s, %s", k.s, kf.s);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", z.s, r.s, r.s);
    horner(cx, ps.s, z.s, sc + 1, 9);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", v.s, r.s, z.s);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", ps.s, v.s, ps.s, r.s);
    horner(cx, pc.s, z.s, cc, 10);
    if (is_cos) kf_ptx_ins(cx, "add.s32 %s, %s, 1", q.s, k.s);
    else kf_ptx_ins(cx, "mov.b32 %s, %s", q.s, k.s);
    kf_ptx_ins(cx, "and.b32 %s, %s, 1", k.s, q.s);
    kf_ptx_ins(cx, "setp.ne.u32 %s, %s, 0", pswap.s, k.s);
    kf_ptx_ins(cx, "and.b32 %s, %s, 2", k.s, q.s);
    kf_ptx_ins(cx, "setp.ne.u32 %s, %s, 0", pneg.s, k.s);
    kf_ptx_ins(cx, "selp.f64 %s, %s, %s, %s", v.s, pc.s, ps.s, pswap.s);
    kf_ptx_ins(cx, "neg.f64 %s, %s", nv.s, v.s);
    kf_ptx_ins(cx, "selp.f64 %s, %s, %s, %s", d, nv.s, v.s, pneg.s);
}

/* tanh = sign(x) * e / (e + 2), e = expm1(2|x|) = fma(2^k, q, 2^k - 1) with
 * q = expm1(r); 1 for |x| >= 22. */
static void tanh_f64(ptx_cx *cx, const char *d, const char *x)
{
    double c[14];
    taylor(c, 14, 1.0);
    preg ax = kf_ptx_tmp(cx, PTX_RC_FD), y = kf_ptx_tmp(cx, PTX_RC_FD), t = kf_ptx_tmp(cx, PTX_RC_FD);
    preg kf = kf_ptx_tmp(cx, PTX_RC_FD), r = kf_ptx_tmp(cx, PTX_RC_FD), q = kf_ptx_tmp(cx, PTX_RC_FD);
    preg k = kf_ptx_tmp(cx, PTX_RC_R), s = kf_ptx_tmp(cx, PTX_RC_FD), sm1 = kf_ptx_tmp(cx, PTX_RC_FD);
    preg e = kf_ptx_tmp(cx, PTX_RC_FD), den = kf_ptx_tmp(cx, PTX_RC_FD), th = kf_ptx_tmp(cx, PTX_RC_FD);
    preg p = kf_ptx_tmp(cx, PTX_RC_P);
    kf_ptx_comment(cx, "tanh(f64): e/(e+2), e = expm1(2|x|) by 2^k*q + (2^k-1), q degree-13 Taylor");
    kf_ptx_ins(cx, "abs.f64 %s, %s", ax.s, x);
    f64_bound(cx, y.s, ax.s, "0d4036000000000000", false);             /* 22 */
    kf_ptx_ins(cx, "add.rn.f64 %s, %s, %s", y.s, y.s, y.s);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", t.s, y.s, fd_imm(LOG2E).s);
    kf_ptx_ins(cx, "cvt.rni.f64.f64 %s, %s", kf.s, t.s);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", r.s, kf.s, fd_imm(-LN2_HI).s, y.s);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", r.s, kf.s, fd_imm(-LN2_LO).s, r.s);
    horner(cx, q.s, r.s, c + 2, 12);
    kf_ptx_ins(cx, "mul.rn.f64 %s, %s, %s", th.s, r.s, r.s);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", q.s, th.s, q.s, r.s);
    kf_ptx_ins(cx, "cvt.rzi.s32.f64 %s, %s", k.s, kf.s);
    pow2i(cx, s.s, k.s);
    kf_ptx_ins(cx, "sub.rn.f64 %s, %s, 0d3FF0000000000000", sm1.s, s.s);
    kf_ptx_ins(cx, "fma.rn.f64 %s, %s, %s, %s", e.s, s.s, q.s, sm1.s);
    kf_ptx_ins(cx, "add.rn.f64 %s, %s, 0d4000000000000000", den.s, e.s);
    kf_ptx_ins(cx, "div.rn.f64 %s, %s, %s", th.s, e.s, den.s);
    kf_ptx_ins(cx, "setp.ge.f64 %s, %s, 0d4036000000000000", p.s, ax.s);
    kf_ptx_ins(cx, "selp.f64 %s, 0d3FF0000000000000, %s, %s", th.s, th.s, p.s);
    kf_ptx_ins(cx, "copysign.f64 %s, %s, %s", d, x, th.s);
}

/* |a| of f16, bf16, f32 or f64: the sign bit cleared (abs.f64 for f64). f32
 * too as a bit operation: ptxas 13 takes abs.f32 for never NaN and folds
 * `-1 < |x|` or `|x| >= 0` to true (issue 7, difftest seed 1 program 8750;
 * fabsf in CUDA-C likewise). */
static void float_abs(ptx_cx *cx, kf_scalar s, const char *d, const char *a)
{
    if (s == KF_S_F16 || s == KF_S_BF16) kf_ptx_ins(cx, "and.b16 %s, %s, 0x7FFF", d, a);
    else if (s == KF_S_F32) kf_ptx_ins(cx, "and.b32 %s, %s, 0x7FFFFFFF", d, a);
    else kf_ptx_ins(cx, "abs.f64 %s, %s", d, a);
}

/* round half away from zero: t = trunc(x); t + sign(x) when |x - t| >= 0.5
 * (x - t is exact). NaN and inf come out of trunc unchanged. */
static void round_float(ptx_cx *cx, kf_scalar s, const char *d, const char *a)
{
    bool w = s == KF_S_F64;
    ptx_rclass rc = w ? PTX_RC_FD : PTX_RC_F;
    const char *ty = w ? "f64" : "f32", *half = w ? "0d3FE0000000000000" : "0f3F000000";
    const char *one = w ? "0d3FF0000000000000" : "0f3F800000";
    preg t = kf_ptx_tmp(cx, rc), f = kf_ptx_tmp(cx, rc), o = kf_ptx_tmp(cx, rc), t1 = kf_ptx_tmp(cx, rc);
    preg p = kf_ptx_tmp(cx, PTX_RC_P);
    kf_ptx_ins(cx, "cvt.rzi.%s.%s %s, %s", ty, ty, t.s, a);
    kf_ptx_ins(cx, "sub.rn.%s %s, %s, %s", ty, f.s, a, t.s);
    float_abs(cx, s, f.s, f.s);
    kf_ptx_ins(cx, "setp.ge.%s %s, %s, %s", ty, p.s, f.s, half);
    kf_ptx_ins(cx, "copysign.%s %s, %s, %s", ty, o.s, a, one);
    kf_ptx_ins(cx, "add.rn.%s %s, %s, %s", ty, t1.s, t.s, o.s);
    kf_ptx_ins(cx, "selp.%s %s, %s, %s, %s", ty, d, t1.s, t.s, p.s);
}

/* min/max of f64 as compares and selects, never min.f64/max.f64: ptxas 13
 * (and the H200 driver's JIT) miscompiles a DSETP.MIN/MAX whose result's
 * high word is dead after a loop: it compared the low operand with zero
 * (DSETP.EQ RZ) instead of with the other operand, so the low word of
 * clamp(x, -inf, inf) was 0 for a subnormal x (difftest seed 2200 program
 * 2890; case regress_f64_minmax_low_word). And f32 min/max with a constant
 * -0.0 operand (cx->minmax_negzero) the same way: the H200's JIT gave +0
 * for clamp(x, -0.0, 1.0) of x <= -0 or NaN, and max(x, -0.0) (the
 * fold-against-run-time differential of 2026-12-03). PTX min/max semantics
 * as the interpreter's kf_fmin/kf_fmax: a NaN operand gives the other,
 * equal operands (+0 and -0) the bits of both or'd (min: -0) or and'd
 * (max: +0). The CUDA-C back end emits the same sequence (kf_dmin/kf_dmax,
 * kf_fmin_z/kf_fmax_z). */
static void exact_minmax(ptx_cx *cx, kf_builtin bi, bool dbl, const char *d, const char *a, const char *b)
{
    bool min = bi == KF_BI_MIN;
    const char *f = dbl ? "f64" : "f32", *w = dbl ? "b64" : "b32";
    preg p = kf_ptx_tmp(cx, PTX_RC_P), q = kf_ptx_tmp(cx, PTX_RC_P), t = kf_ptx_tmp(cx, dbl ? PTX_RC_FD : PTX_RC_F);
    preg x = kf_ptx_tmp(cx, dbl ? PTX_RC_RD : PTX_RC_R), y = kf_ptx_tmp(cx, dbl ? PTX_RC_RD : PTX_RC_R);
    kf_ptx_ins(cx, "setp.%s.%s %s, %s, %s", min ? "lt" : "gt", f, p.s, a, b);
    kf_ptx_ins(cx, "setp.nan.%s %s, %s, %s", f, q.s, b, b);
    kf_ptx_ins(cx, "or.pred %s, %s, %s", p.s, p.s, q.s);
    kf_ptx_ins(cx, "selp.%s %s, %s, %s, %s", f, t.s, a, b, p.s);
    kf_ptx_ins(cx, "setp.eq.%s %s, %s, %s", f, q.s, a, b);
    kf_ptx_ins(cx, "mov.%s %s, %s", w, x.s, a);
    kf_ptx_ins(cx, "mov.%s %s, %s", w, y.s, b);
    kf_ptx_ins(cx, "%s.%s %s, %s, %s", min ? "or" : "and", w, x.s, x.s, y.s);
    kf_ptx_ins(cx, "mov.%s %s, %s", w, y.s, t.s);
    kf_ptx_ins(cx, "selp.%s %s, %s, %s, %s", w, y.s, x.s, y.s, q.s);
    kf_ptx_ins(cx, "mov.%s %s, %s", w, d, y.s);
}

/* min or max (bi) of a and b into d: f64, and f32 beside a constant -0.0, through exact_minmax */
static void float_minmax(ptx_cx *cx, kf_builtin bi, kf_scalar s, const char *d, const char *a, const char *b)
{
    if (s == KF_S_F64 || (s == KF_S_F32 && cx->minmax_negzero)) exact_minmax(cx, bi, s == KF_S_F64, d, a, b);
    else kf_ptx_ins(cx, "%s.%s %s, %s, %s", bi == KF_BI_MIN ? "min" : "max", kf_ptx_scalars[s].arith, d, a, b);
}

/* Operations every float type shares: abs, min, max, clamp, fma, round.
 * Returns false when bi is not one of them. */
static bool common_math(ptx_cx *cx, kf_builtin bi, kf_scalar s, const char *d, const char *a, const char *b,
                        const char *c)
{
    bool half = s == KF_S_F16 || s == KF_S_BF16;
    const char *ty = kf_ptx_scalars[s].arith;
    switch (bi) {
    case KF_BI_ABS: float_abs(cx, s, d, a); return true;
    case KF_BI_MIN:
    case KF_BI_MAX:
        if (half) return false;
        float_minmax(cx, bi, s, d, a, b);
        return true;
    case KF_BI_CLAMP: {
        if (half) return false;
        preg t = kf_ptx_tmp(cx, (ptx_rclass)kf_ptx_scalars[s].rc);
        float_minmax(cx, KF_BI_MAX, s, t.s, a, b);
        float_minmax(cx, KF_BI_MIN, s, d, t.s, c);
        return true;
    }
    case KF_BI_FMA: kf_ptx_ins(cx, "fma.rn.%s %s, %s, %s, %s", ty, d, a, b, c); return true;
    case KF_BI_ROUND:
        if (half) return false;
        round_float(cx, s, d, a);
        return true;
    default: return false;
    }
}

/* sin/cos.approx.f32 of r = x - 2 pi k, k = rint(x / 2 pi): r is in
 * [-pi, pi] (up to 1.5 pi past 2^20, where x / 2 pi rounds), inside the
 * [-100 pi, 100 pi] where the instruction's bound holds. Three fma with 2 pi
 * in three f32 parts (24 + 24 + 24 bits), each rounding once, keep r within
 * 2^-21 of x - 2 pi k for |x| < 2^24 (simulated exactly on 6000 arguments:
 * at most 2.3e-7); x itself when k is 0 (its -0). The same sequence as the
 * CUDA-C prelude's kf_turn. */
static void sincos_f32(ptx_cx *cx, const char *d, const char *a, bool is_cos)
{
    preg k = kf_ptx_tmp(cx, PTX_RC_F), r = kf_ptx_tmp(cx, PTX_RC_F), z = kf_ptx_tmp(cx, PTX_RC_P);
    kf_ptx_ins(cx, "mul.rn.f32 %s, %s, 0f3E22F983", k.s, a);   /* 1 / 2 pi */
    kf_ptx_ins(cx, "cvt.rni.f32.f32 %s, %s", k.s, k.s);
    kf_ptx_ins(cx, "fma.rn.f32 %s, %s, 0fC0C90FDB, %s", r.s, k.s, a);   /* - 2 pi, three parts */
    kf_ptx_ins(cx, "fma.rn.f32 %s, %s, 0f343BBD2E, %s", r.s, k.s, r.s);
    kf_ptx_ins(cx, "fma.rn.f32 %s, %s, 0f27F72CED, %s", r.s, k.s, r.s);
    kf_ptx_ins(cx, "setp.eq.f32 %s, %s, 0f00000000", z.s, k.s);
    kf_ptx_ins(cx, "selp.f32 %s, %s, %s, %s", r.s, a, r.s, z.s);
    kf_ptx_ins(cx, "%s.approx.f32 %s, %s", is_cos ? "cos" : "sin", d, r.s);
}

static void f32_math(ptx_cx *cx, kf_builtin bi, const char *d, const char *a)
{
    if (bi == KF_BI_SIN || bi == KF_BI_COS) {
        sincos_f32(cx, d, a, bi == KF_BI_COS);
        return;
    }
    if (kf_ptx_math_f32[bi]) {
        kf_ptx_ins(cx, "%s %s, %s", kf_ptx_math_f32[bi], d, a);
        return;
    }
    preg t = kf_ptx_tmp(cx, PTX_RC_F);
    if (bi == KF_BI_EXP) {
        kf_ptx_ins(cx, "mul.rn.f32 %s, %s, 0f3FB8AA3B", t.s, a);   /* log2(e) */
        kf_ptx_ins(cx, "ex2.approx.f32 %s, %s", d, t.s);
    } else if (bi == KF_BI_LOG) {
        kf_ptx_ins(cx, "lg2.approx.f32 %s, %s", t.s, a);
        kf_ptx_ins(cx, "mul.rn.f32 %s, %s, 0f3F317218", d, t.s);   /* ln(2) */
    } else {
        kf_ptx_error(cx, "'%s' is not defined on f32", kf_builtin_names[bi]);
    }
}

static void f64_math(ptx_cx *cx, kf_builtin bi, const char *d, const char *a)
{
    switch (bi) {
    case KF_BI_SQRT: kf_ptx_ins(cx, "sqrt.rn.f64 %s, %s", d, a); break;
    case KF_BI_RSQRT: {
        preg t = kf_ptx_tmp(cx, PTX_RC_FD);
        kf_ptx_ins(cx, "sqrt.rn.f64 %s, %s", t.s, a);
        kf_ptx_ins(cx, "div.rn.f64 %s, 0d3FF0000000000000, %s", d, t.s);
        break;
    }
    case KF_BI_FLOOR: kf_ptx_ins(cx, "cvt.rmi.f64.f64 %s, %s", d, a); break;
    case KF_BI_CEIL: kf_ptx_ins(cx, "cvt.rpi.f64.f64 %s, %s", d, a); break;
    case KF_BI_TRUNC: kf_ptx_ins(cx, "cvt.rzi.f64.f64 %s, %s", d, a); break;
    case KF_BI_EXP:
    case KF_BI_EXP2: exp_f64(cx, d, a, bi == KF_BI_EXP2); break;
    case KF_BI_LOG:
    case KF_BI_LOG2: log_f64(cx, d, a, bi == KF_BI_LOG2); break;
    case KF_BI_SIN:
    case KF_BI_COS: sincos_f64(cx, d, a, bi == KF_BI_COS); break;
    case KF_BI_TANH: tanh_f64(cx, d, a); break;
    default: kf_ptx_error(cx, "'%s' is not defined on f64", kf_builtin_names[bi]); break;
    }
}

void kf_ptx_math_lane(ptx_cx *cx, kf_builtin bi, kf_scalar s, const char *d, const char *a, const char *b,
                   const char *c)
{
    if (common_math(cx, bi, s, d, a, b, c)) return;
    if (bi == KF_BI_FAST_DIV && s == KF_S_F32) {   /* a * rcp(b), an ordinary (not .ftz) multiply */
        preg r = kf_ptx_tmp(cx, PTX_RC_F);
        kf_ptx_ins(cx, "rcp.approx.ftz.f32 %s, %s", r.s, b);
        kf_ptx_ins(cx, "mul.rn.f32 %s, %s, %s", d, a, r.s);
        return;
    }
    if (s == KF_S_F32) {
        f32_math(cx, bi, d, a);
    } else if (s == KF_S_F64) {
        f64_math(cx, bi, d, a);
    } else if (s == KF_S_F16 || s == KF_S_BF16) {
        preg fa = kf_ptx_tmp(cx, PTX_RC_F), fr = kf_ptx_tmp(cx, PTX_RC_F);
        kf_ptx_cvt_lane(cx, fa.s, KF_S_F32, a, s);
        if (bi == KF_BI_ROUND) {
            round_float(cx, KF_S_F32, fr.s, fa.s);
        } else if (bi == KF_BI_MIN || bi == KF_BI_MAX || bi == KF_BI_CLAMP) {   /* exact in f32 */
            preg fb = kf_ptx_tmp(cx, PTX_RC_F), fc = kf_ptx_tmp(cx, PTX_RC_F);
            kf_ptx_cvt_lane(cx, fb.s, KF_S_F32, b, s);
            if (bi == KF_BI_CLAMP) kf_ptx_cvt_lane(cx, fc.s, KF_S_F32, c, s);
            common_math(cx, bi, KF_S_F32, fr.s, fa.s, fb.s, fc.s);
        } else {
            f32_math(cx, bi, fr.s, fa.s);
        }
        kf_ptx_cvt_lane(cx, d, s, fr.s, KF_S_F32);
    } else {
        kf_ptx_error(cx, "'%s' is not defined on %s", kf_builtin_names[bi], kf_scalar_names[s]);
    }
}
