#!/usr/bin/env python3
"""Hand-written fold-vs-runtime probes that the generator's shape does not
cover: @unroll variables, -D overrides (values and refusals), consts over
consts with overrides, @schedule expressions over overridden consts.
Each probe: source, defines, expected outputs (or 'reject').
Usage: special.py [--kforge BIN] [--backend B] [--opt O]   (prints PASS/FAIL)"""
import os, subprocess, sys, tempfile, math
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ref import *

args = sys.argv[1:]
def opt(name, d):
    return args[args.index(name) + 1] if name in args else d
KF = os.path.abspath(opt('--kforge', os.path.join(HERE, '..', '..', 'build', 'kforge')))
BACK = opt('--backend', 'cpu')
OPTL = opt('--opt', '')
ONLY_RUN = '--no-reject' in args
VS_CPU = '--vs-cpu' in args   # compare the back end's outputs with the cpu's (not with the expected values)

P = []   # (name, src, defines, {buf: (type, n, expected list or None)}, reject?)


def probe(name, src, exp, defines=(), reject=False, note=''):
    P.append((name, src, list(defines), exp, reject, note))


# 1. untyped @unroll variable with an untyped INTEGER literal in a float context
probe('unroll_int_lit_f32', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [f32]) { @unroll for t in 0 .. 4 { let x: f32 = t + 1; o[t] = x; } }''',
      {'o': ('f32', 4, [1.0, 2.0, 3.0, 4.0])})
probe('unroll_int_lit_f64', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [f64]) { @unroll for t in 0 .. 4 { o[t] = t * 1000 + 7; } }''',
      {'o': ('f64', 4, [7.0, 1007.0, 2007.0, 3007.0])})
probe('unroll_int_div_f32', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [f32]) { @unroll for t in 0 .. 4 { o[t] = t / 3; } }''',
      {'o': ('f32', 4, [0.0, 0.0, 0.0, 1.0])}, note='literal rule: t / 3 is an integer division, then f32')
probe('unroll_cast_f16', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [f16]) { @unroll for t in 0 .. 4 { o[t] = (7 - t) as f16; } }''',
      {'o': ('f16', 4, [7.0, 6.0, 5.0, 4.0])})
probe('unroll_cast_bf16_neg', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [bf16]) { @unroll for t in 0 .. 2 { o[t] = (t - 3) as bf16; } }''',
      {'o': ('bf16', 2, [-3.0, -2.0])})
# 2. untyped @unroll expressions are exact like literals (contract 5), not wrapped in the context type
probe('unroll_exact_u8_div', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [u32]) { @unroll for t in 0 .. 4 { let y: u8 = (t + 254) / 2; o[t] = y as u32; } }''',
      {'o': ('u32', 4, [127, 127, 128, 128])}, note='(2 + 254) / 2 written with literals is 128')
probe('unroll_exact_i8_shr', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [i32]) { @unroll for t in 0 .. 2 { let y: i8 = (t + 127) >> 1; o[t] = y as i32; } }''',
      {'o': ('i32', 2, [63, 64])}, note='(1 + 127) >> 1 is 64 with literals')
probe('unroll_exact_u32_cmp', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [u32]) { @unroll for t in 0 .. 2 { let y: u32 = (t - 1) / 2 + 5; o[t] = y; } }''',
      {'o': ('u32', 2, [5, 5])}, note='(0 - 1) / 2 + 5 = 5 exactly (-1/2 = 0); wrapping u32 gives 2147483652')
# 3. abs of a u64 >= 2^63 inside @unroll (lowering's ceval)
probe('unroll_abs_u64', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [u64]) { @unroll for t in 0 .. 1 { let a: u64 = 18446744073709551614 - (t as u64); o[0] = abs(a); }
  let b: u64 = 18446744073709551614; o[1] = abs(b); }''',
      {'o': ('u64', 2, [18446744073709551614, 18446744073709551614])})
# 4. -D overrides of typed constants
for t, vals in [('f32', ['-0.0', '0.0', 'inf', '-inf', 'nan', '1e-45', '3.4028234663852886e38', '0.1', '-0', '16777217']),
                ('f16', ['-0.0', '65504', '65504.0', '6e-8', '0.1', '-inf', '1e-8', '2049']),
                ('bf16', ['-0.0', '1.00390625', '1.0078125', '3e38', '-1.5']),
                ('f64', ['-0.0', '1e308', '5e-324', '0.1']),
                ('i32', ['-2147483648', '2147483647', '0x7fffffff', '-0x80000000', '0b101', '1_000', '-0']),
                ('u32', ['4294967295', '0xffffffff', '0']),
                ('i8', ['-128', '127']), ('u64', ['18446744073709551615', '0xffffffffffffffff']),
                ('i64', ['-9223372036854775808'])]:
    for v in vals:
        src = 'const C: %s = 0;\n@schedule(block = 1, grid = 1)\nkernel k(o: &mut [%s], x: &[%s]) { o[0] = C; o[1] = -C; o[2] = min(C, x[0]); o[3] = C * x[1]; o[4] = x[2]; }' % (t, t, t)
        # expected: literal value rounded once to t
        if is_float(t):
            x = float(v.replace('_', '')) if 'x' not in v else float(int(v, 16))
            if v in ('-0',): x = 0.0
            cv = convert('f64', t, x) if 'e' in v or '.' in v or 'n' in v else convert('i64', t, int(v))
        else:
            cv = int(v.replace('_', ''), 0)
        if is_float(t) and math.isinf(cv) and 'inf' not in v:
            probe('D_%s_%s' % (t, v), src, {}, defines=['C=' + v], reject=True)
            continue
        one = 1.0 if is_float(t) else 1
        zero = 0.0 if is_float(t) else 0
        neg = -cv if is_float(t) else wrap(t, -cv)
        mn = fmin(cv, zero) if is_float(t) else min(cv, 0)
        mul = float_binop(t, '*', cv, one) if is_float(t) else cv
        P.append(('D_%s_%s' % (t, v), src, ['C=' + v], {'o': (t, 5, [cv, neg, mn, mul, cv]), '@x': (t, 3, [zero, one, cv])}, False, ''))
for t, v in [('i32', '0x80000000'), ('i32', '2147483648'), ('u32', '-1'), ('u8', '256'), ('i8', '-129'), ('i32', '1.5'),
             ('f16', '65520'), ('f32', '1e39'), ('u32', '010'), ('bool', '1'), ('i32', 'true')]:
    probe('Dreject_%s_%s' % (t, v), 'const C: %s = %s;\nkernel k(o: &mut [u32]) { o[0] = 1; }' % (t, 'false' if t == 'bool' else '0'),
          {}, defines=['C=' + v], reject=True)
# 5. a const over an overridden const is recomputed
probe('D_const_chain_f32', '''const A: f32 = 1.0;
const B: f32 = A * 3.0;
const Cc: f32 = min(A, -0.0) + 0.0;
@schedule(block = 1, grid = 1)
kernel k(o: &mut [f32], x: &[f32]) { o[0] = B; o[1] = x[0] * 3.0; o[2] = Cc; }''',
      {'o': ('f32', 3, [float_binop('f32', '*', rnd('f32', 0.1), 3.0)] * 2 + [0.0]), '@x': ('f32', 1, [rnd('f32', 0.1)])},
      defines=['A=0.1'])
probe('D_const_chain_i32', '''const A: i32 = 1;
const B: i32 = A * 3 + (A >> 40);
@schedule(block = 1, grid = 1)
kernel k(o: &mut [i32]) { o[0] = B; }''', {'o': ('i32', 1, [wrap('i32', -2147483648 * 3) - 1])}, defines=['A=-2147483648'])
# 6. @unroll over an overridden const, and a schedule over one
probe('D_unroll', '''const A: u32 = 5;
@schedule(block = 1, grid = 1)
kernel k(o: &mut [u32]) { @unroll for t in 0 .. 2 { o[t] = t + A; } @unroll for t in 0 .. A { o[2] = t; } }''',
      {'o': ('u32', 3, [7, 8, 6])}, defines=['A=7'])
probe('D_schedule', '''const G: u32 = 2;
const H: u32 = G * 2 - 1;
@schedule(block = 1, grid = H)
kernel k(o: &mut [u32]) { if block_id.x == 0 { o[0] = grid_dim.x; o[1] = H; } }''',
      {'o': ('u32', 2, [5, 5])}, defines=['G=3'])
# 7. untyped float constants that overflow double are accepted silently, unlike those that overflow the type
probe('untyped_overflow_f64', 'kernel k(o: &mut [f64]) { o[0] = 1e300 * 1e300; }', {}, reject=True)
probe('untyped_overflow_f32_double', 'kernel k(o: &mut [f32]) { o[0] = 1e300 * 1e300; }', {}, reject=True)
probe('untyped_overflow_f32', 'kernel k(o: &mut [f32]) { o[0] = 1e38 * 10.0; }', {}, reject=True)
# 8. int literal `as f16` that overflows (error) vs the float literal (inf) vs a typed value (inf)
probe('lit_int_as_f16', 'kernel k(o: &mut [f16]) { o[0] = 65520 as f16; }', {}, reject=False,
      note='accept? e as T converts numerically: 65520.0 as f16 and (65520 as i32) as f16 give inf')
probe('lit_float_as_f16', '@schedule(block = 1, grid = 1)\nkernel k(o: &mut [f16]) { o[0] = 65520.0 as f16; o[1] = (65520 as i32) as f16; }',
      {'o': ('f16', 2, [math.inf, math.inf])})
# 9. untyped min/max/clamp/select/abs/round of ±0 and NaN in several contexts
probe('untyped_generic', '''@schedule(block = 1, grid = 1)
kernel k(o: &mut [f32], h: &mut [f16], d: &mut [f64]) {
  o[0] = min(0.0, -0.0); o[1] = max(-0.0, 0.0); o[2] = clamp(-0.0, 0.0, 1.0); o[3] = abs(-0.0); o[4] = min(nan, -0.0);
  o[5] = max(-0.0, nan); o[6] = select(false, 0.0, -0.0); o[7] = -min(0, -0.0); o[8] = round(-0.5); o[9] = round(2.5);
  o[10] = sqrt(-0.0); o[11] = trunc(-0.7); o[12] = ceil(-0.5); o[13] = floor(-0.0); o[14] = fma(-0.0, 1.0, -0.0); o[15] = fma(1.0, -0.0, 0.0);
  h[0] = min(0.0, -0.0); h[1] = max(-0.0, 0.0); h[2] = -0.0 * 1.0; h[3] = max(0, -0.0);
  d[0] = min(-0.0, 0); d[1] = max(0, -0.0); d[2] = 0.0 - 0.0; d[3] = -0.0 - 0.0; d[4] = round(0.49999999999999994); d[5] = round(-4503599627370497.0);
}''', {'o': ('f32', 16, [-0.0, 0.0, 0.0, 0.0, -0.0, -0.0, -0.0, 0.0, -1.0, 3.0, -0.0, -0.0, -0.0, -0.0, -0.0, 0.0]),
       'h': ('f16', 4, [-0.0, 0.0, -0.0, 0.0]), 'd': ('f64', 6, [-0.0, 0.0, 0.0, -0.0, 0.0, -4503599627370497.0])})


def run():
    with tempfile.TemporaryDirectory(prefix='kfspecial') as d:
        return run_in(d)


def run_in(d):
    npass = nfail = 0
    for name, src, defines, exp, reject, note in P:
        f = os.path.join(d, name.replace('/', '_').replace('.', 'p') + '.kf')
        open(f, 'w').write(src + '\n')
        dargs = sum((['-D', x] for x in defines), [])
        if reject or not exp:
            if ONLY_RUN: continue
            r = subprocess.run([KF, 'check'] + dargs + [f], capture_output=True, text=True)
            ok = (r.returncode != 0) == reject
            msg = r.stderr.strip().split('\n')[0] if r.returncode else 'accepted'
            if ok: npass += 1; print('PASS %s' % name)
            else: nfail += 1; print('FAIL %s: %s expected, got %s %s' % (name, 'rejection' if reject else 'acceptance', msg, ('(' + note + ')') if note else ''))
            continue
        def go(backend):
            cmd = [KF, 'run', f, '--backend', backend] + ([OPTL] if OPTL else []) + dargs
            outs = {}
            for b, (t, n, vals) in exp.items():
                if b.startswith('@'):
                    p = os.path.join(d, name + b[1:] + '.npy')
                    npy_write(p, t, vals)
                    cmd.append('%s=@%s' % (b[1:], p))
                else:
                    cmd.append('%s=zeros(%d)' % (b, n))
                    outs[b] = os.path.join(d, '%s.%s.%s.npy' % (name, backend, b))
                    cmd += ['-o', '%s=%s' % (b, outs[b])]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode: return 'rc %d %s' % (r.returncode, r.stderr.strip().split('\n')[0])
            return {b: npy_bits(p, WIDTH[exp[b][0]] // 8) for b, p in outs.items()}
        got_all = go(BACK)
        if isinstance(got_all, str):
            nfail += 1
            print('FAIL %s: %s' % (name, got_all))
            continue
        if VS_CPU:
            ref_all = go('cpu')
            diff = [] if isinstance(ref_all, str) else ['%s[%d]: cpu 0x%x, %s 0x%x' % (b, i, x, BACK, y)
                    for b in got_all for i, (x, y) in enumerate(zip(ref_all[b], got_all[b]))
                    if x != y and not (is_float(exp[b][0]) and math.isnan(from_bits(exp[b][0], x)) and math.isnan(from_bits(exp[b][0], y)))]
            if isinstance(ref_all, str) or diff:
                nfail += 1
                print('FAIL %s: %s' % (name, ref_all if isinstance(ref_all, str) else '; '.join(diff[:6])))
            else:
                npass += 1
                print('PASS %s' % name)
            continue
        bad = []
        for b, (t, n, vals) in exp.items():
            if b.startswith('@'): continue
            got = got_all[b]
            for i, (g, w) in enumerate(zip(got, vals)):
                wb = bits(t, w) if not (is_float(t) and math.isnan(w)) else None
                if wb is None:
                    if not math.isnan(from_bits(t, g)): bad.append('%s[%d]=%r want nan' % (b, i, from_bits(t, g)))
                elif g != wb:
                    bad.append('%s[%d]=%r want %r' % (b, i, from_bits(t, g), w))
        if bad: nfail += 1; print('FAIL %s: %s %s' % (name, '; '.join(bad[:6]), ('(' + note + ')') if note else ''))
        else: npass += 1; print('PASS %s' % name)
    print('special [%s%s]: %d passed, %d failed' % (BACK, OPTL, npass, nfail))
    return nfail


sys.exit(1 if run() else 0)
