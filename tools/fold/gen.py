#!/usr/bin/env python3
"""Fold-versus-runtime differential generator for kforge.

Every test expression is computed in up to five forms, each stored to its own
output slot:  a = untyped literals (sema's untyped fold), l = typed `let`
constants (sema's typed fold), c = module `const`s, v = `var`s initialised
with constants (folded by the IR optimiser / kf_opt_exact, not by sema),
r = operands loaded from input buffers at run time (no folding possible).
The expected value comes from ref.py (an independent model of the contract).

Writes OUTDIR/<kernel>.kf, one .npy per input buffer (OUTDIR/<kernel>.x_<type>.npy)
and OUTDIR/manifest.json (the kernels, their arguments, each case's output slots
and expected bits, and the programs the compiler must refuse).
Usage: gen.py OUTDIR [--full] [--seed N]   (--full: the 17k-case set; default:
the 3.8k-case set that tools/fold/run.sh checks). Python's standard library only.
"""
import json, math, os, random, sys
from fractions import Fraction as Fr
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref import *

if len(sys.argv) < 2 or sys.argv[1].startswith('-'):
    sys.exit('usage: gen.py OUTDIR [--full] [--seed N]')
OUT = sys.argv[1]
FORMS = 'alcvrmkuw'
NSLOT = len(FORMS)
# the forms of a case whose exact (untyped) value differs from its typed result:
# the untyped ones (a, w) are refused or give the exact value, so they are left out
INEXACT = FORMS.replace('a', '').replace('w', '')
random.seed(int(sys.argv[sys.argv.index('--seed') + 1]) if '--seed' in sys.argv else 1234)
FULL = '--full' in sys.argv
NP_INT, NP_FLT, NP_PK = (70, 80, 40) if FULL else (20, 24, 14)


def lanes_of(t):
    if 'x' in t and t not in ('bool',):
        s, n = t.split('x')
        return s, int(n)
    return t, 1


# ---------------------------------------------------------------------------
class Case:
    def __init__(self, group, name, rtype, tmpl, args, expect, approx=None, forms=FORMS, lit_cast=False, note=''):
        self.group, self.name, self.rtype, self.tmpl = group, name, rtype, tmpl
        self.args, self.expect, self.approx, self.forms = args, expect, approx, forms
        self.lit_cast, self.note = lit_cast, note


CASES = []
REJECTS = []   # (name, source) that the compiler must refuse


def add(*a, **k):
    c = Case(*a, **k)
    if c.approx or c.tmpl.startswith('dot4'):   # run-time builtins: never a const's value (form k)
        c.forms = c.forms.replace('k', '')
    CASES.append(c)


def lit(t, v):
    s, n = lanes_of(t)
    if n > 1:
        return '%s(%s)' % (t, ', '.join(lit(s, x) for x in v))
    if t == 'bool': return 'true' if v else 'false'
    if is_int(t):
        return str(v) if v >= 0 else '(-%d)' % -v
    if math.isnan(v): return 'nan'
    if math.isinf(v): return 'inf' if v > 0 else '(-inf)'
    r = repr(float(v))
    if 'e' in r and '.' not in r.split('e')[0]:
        m, e = r.split('e')
        r = m + '.0e' + e
    return '(%s)' % r if r.startswith('-') else r


# ---------------------------------------------------------------------------
# values
def fvals(t):
    p, emin, emax = FMT[t]
    mx = float((2 - Fr(2) ** (1 - p)) * Fr(2) ** emax)
    mn = float(Fr(2) ** emin)
    sub = float(Fr(2) ** (emin - p + 1))
    eps = float(Fr(2) ** (1 - p))
    below_half = float(Fr(1, 2) - Fr(2) ** (-p - 1))
    big_odd = float(Fr(2) ** (p - 1) + 1)
    vs = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, below_half, -below_half, mx, -mx, mn, -mn,
          sub, -sub, math.inf, -math.inf, math.nan, 1 + eps, big_odd, -big_odd, rnd(t, 1 / 3), rnd(t, 0.1), 7.0, -7.0,
          rnd(t, 1e4), rnd(t, 300.75), rnd(t, -129.5)]
    return vs


def ivals(t):
    lo, hi = irange(t)
    w = WIDTH[t]
    vs = [0, 1, 2, 3, 7, hi, hi - 1, lo, (1 << (w - 1)) - 1 if signed(t) else 1 << (w - 1), 0x55 & hi]
    if signed(t): vs += [-1, -2, -7, lo + 1]
    return sorted(set(v for v in vs if lo <= v <= hi), key=lambda v: (abs(v), v))


def fits(t, v):
    lo, hi = irange(t)
    return lo <= v <= hi


# ---------------------------------------------------------------------------
# integer cases
def int_cases():
    for t in INTS:
        w = WIDTH[t]
        g = 'int_' + t
        V = ivals(t)
        lo, hi = irange(t)
        pairs = [(a, b) for a in V for b in V]
        random.shuffle(pairs)
        pairs = pairs[:NP_INT] + [(lo, -1), (lo, 1), (hi, 1), (hi, hi), (lo, lo), (-7, 2), (7, -2), (-7, -2), (7, 2)]
        pairs = [(a, b) for a, b in pairs if fits(t, a) and fits(t, b)]
        for op in ['+', '-', '*', '/', '%', '&', '|', '^']:
            for a, b in pairs:
                if op in '/%' and b == 0: continue
                r = int_binop(t, op, a, b)
                exact = {'+': a + b, '-': a - b, '*': a * b, '/': tdiv(a, b) if b else 0,
                         '%': a - tdiv(a, b) * b if b else 0, '&': a & b, '|': a | b, '^': a ^ b}[op]
                forms = FORMS if exact == r else INEXACT
                if exact != r and op not in '&|^':
                    REJECTS.append(('%s_%s_%d_%d' % (g, op, a, b), t, '%s %s %s' % (lit(t, a), op, lit(t, b))))
                add(g, '%s %s %s' % (a, op, b), t, '{0} %s {1}' % op, [(t, a), (t, b)], r, forms=forms)
        amts = sorted(set([0, 1, w - 1, w, w + 1, 2 * w, 255 if w > 8 else 7, 100 & hi]))
        svals = [1, 3, hi, lo, 0x55 & hi] + ([-1, -8, lo + 1] if signed(t) else [])
        for op in ['<<', '>>']:
            for a in svals:
                for s in amts + ([-1] if signed(t) else []):
                    if not fits(t, s): continue
                    r = int_binop(t, op, a, s)
                    exact = None
                    if s >= 0 and s < 128:
                        exact = a << s if op == '<<' else a >> s
                    forms = FORMS if exact == r else INEXACT
                    add(g, '%s %s %s' % (a, op, s), t, '{0} %s {1}' % op, [(t, a), (t, s)], r, forms=forms)
        for a in V:
            r = wrap(t, -a)
            add(g, '-%s' % a, t, '-{0}', [(t, a)], r, forms=FORMS if r == -a else INEXACT)
            r = wrap(t, ~a)
            add(g, '~%s' % a, t, '~{0}', [(t, a)], r, forms=FORMS if r == ~a else INEXACT)
            r = a if a >= 0 or a == lo else -a
            if signed(t) and a == lo: r = lo
            add(g, 'abs(%s)' % a, t, 'abs({0})', [(t, a)], r, forms=FORMS if r == abs(a) else INEXACT)
        for op in ['==', '!=', '<', '<=', '>', '>=']:
            for a, b in pairs[:NP_INT // 3 + 5]:
                add(g, '%s %s %s' % (a, op, b), 'bool', '{0} %s {1}' % op, [(t, a), (t, b)], cmp(op, a, b))
        for a, b in pairs[:NP_INT // 2 + 5]:
            add(g, 'min(%s,%s)' % (a, b), t, 'min({0}, {1})', [(t, a), (t, b)], min(a, b))
            add(g, 'max(%s,%s)' % (a, b), t, 'max({0}, {1})', [(t, a), (t, b)], max(a, b))
            if b != 0:
                add(g, 'cdiv(%s,%s)' % (a, b), t, 'cdiv({0}, {1})', [(t, a), (t, b)], cdiv(t, a, b), lit_cast=True)
            if w >= 32:
                add(g, 'mul_hi(%s,%s)' % (a, b), t, 'mul_hi({0}, {1})', [(t, a), (t, b)], mul_hi(t, a, b), lit_cast=True)
        for x, l, h in [(5, 1, 3), (0, 1, 3), (2, 1, 3), (5, 3, 1), (lo, lo + 1, hi), (hi, 0, 7), (-1 if signed(t) else 1, 0, 7)]:
            if all(fits(t, v) for v in (x, l, h)):
                add(g, 'clamp(%s,%s,%s)' % (x, l, h), t, 'clamp({0}, {1}, {2})', [(t, x), (t, l), (t, h)], min(max(x, l), h))
        for c in [True, False]:
            add(g, 'select(%s)' % c, t, 'select({0}, {1}, {2})', [('bool', c), (t, V[1]), (t, V[-1])], V[1] if c else V[-1])
        if w >= 32:
            for a in V:
                add(g, 'clz(%s)' % a, 'u32', 'clz({0})', [(t, a)], clz(t, a), lit_cast=True)
                add(g, 'popc(%s)' % a, 'u32', 'popc({0})', [(t, a)], popc(t, a), lit_cast=True)
        # conversions from int t to every numeric type
        for to in INTS + FLOATS:
            cv = V + ([lo + 1, hi - 1] if w > 8 else [])
            if w == 64: cv += [(1 << 53) + 1 if fits(t, (1 << 53) + 1) else 0, (1 << 24) + 1, (1 << 24) + 65537,
                               65520, 65519, 65504, 0x7fffff80 if fits(t, 0x7fffff80) else 0]
            elif w == 32: cv += [(1 << 24) + 1, (1 << 24) + 3, (1 << 24) + 65537, 65520, 65519, 65504, 0x7fffffc0 if fits(t, 0x7fffffc0) else 1]
            for a in sorted(set(v for v in cv if fits(t, v))):
                r = convert(t, to, a)
                add(g + '_cvt', '%s as %s' % (a, to), to, '{0} as %s' % to, [(t, a)], r, lit_cast=False)
        # bitcasts
        same = [x for x in INTS + FLOATS if WIDTH[x] == w and x != t]
        for to in same:
            for a in V:
                b = bits(t, a)
                r = from_bits(to, b)
                add(g + '_cvt', 'bitcast(%s,%s)' % (to, a), to, 'bitcast(%s, {0})' % to, [(t, a)], r, lit_cast=True)
        # bfe / bfi on 32/64
        if w >= 32:
            for x in [0xabcd, lo, hi, -1 if signed(t) else hi]:
                for pos, ln in [(4, 8), (0, 0), (w - 4, 8), (w, 4), (255, 255), (0, w), (1, w), (w - 1, 1), (3, 200)]:
                    if not fits(t, x): continue
                    add(g, 'bfe(%s,%d,%d)' % (x, pos, ln), t, 'bfe({0}, {1}, {2})', [(t, x), ('u32', pos), ('u32', ln)],
                        bfe(t, x, pos, ln), lit_cast=True)
                    add(g, 'bfi(%s,%d,%d)' % (x, pos, ln), t, 'bfi({0}, {1}, {2}, {3})',
                        [(t, 0x5a5a & hi), (t, x), ('u32', pos), ('u32', ln)], bfi(t, 0x5a5a & hi, x, pos, ln), lit_cast=True)
    for a, b, s in [(0x12345678, 0x9abcdef0, 0x3210), (0x12345678, 0x9abcdef0, 0x5140), (0x80ff7f01, 0, 0x8888),
                    (0x80ff7f01, 0x01020304, 0xfedc), (0xdeadbeef, 0xcafebabe, 0x7654), (0x1, 0x2, 0xffffffff)]:
        add('int_u32', 'prmt(%x,%x,%x)' % (a, b, s), 'u32', 'prmt({0}, {1}, {2})', [('u32', a), ('u32', b), ('u32', s)],
            prmt(a, b, s), lit_cast=True)
    for a, b, c in [(0x80ff7f01, 0x80ff7f01, 0), (0x7f7f7f7f, 0x81818181, -5), (0xffffffff, 0xffffffff, 2147483647)]:
        for ta in ['i8x4', 'u8x4']:
            for tb in ['i8x4', 'u8x4']:
                add('int_u32', 'dot4(%s %x,%s %x,%d)' % (ta, a, tb, b, c), 'i32',
                    'dot4(bitcast(%s, {0}), bitcast(%s, {1}), {2})' % (ta, tb), [('u32', a), ('u32', b), ('i32', c)],
                    dot4(a, ta[0] == 'i', b, tb[0] == 'i', c), lit_cast=True)
    for a in [True, False]:
        for b in [True, False]:
            add('int_i32', '%s && %s' % (a, b), 'bool', '{0} && {1}', [('bool', a), ('bool', b)], a and b)
            add('int_i32', '%s || %s' % (a, b), 'bool', '{0} || {1}', [('bool', a), ('bool', b)], a or b)
            add('int_i32', '%s == %s' % (a, b), 'bool', '{0} == {1}', [('bool', a), ('bool', b)], a == b)
        add('int_i32', '!%s' % a, 'bool', '!{0}', [('bool', a)], not a)
        for to in INTS + FLOATS:
            add('int_i32', '%s as %s' % (a, to), to, '{0} as %s' % to, [('bool', a)], convert('i32', to, int(a)))


# ---------------------------------------------------------------------------
APPROX = {'exp': math.exp, 'exp2': lambda x: 2.0 ** x, 'log': math.log, 'log2': math.log2,
          'rsqrt': lambda x: 1 / math.sqrt(x), 'sin': math.sin, 'cos': math.cos, 'tanh': math.tanh}


def approx_ref(f, x):
    try:
        if f in ('log', 'log2'):
            if x == 0: return -math.inf
            if x < 0: return math.nan
        if f == 'rsqrt':
            if x == 0: return math.copysign(math.inf, x)
            if x < 0: return math.nan
        if math.isnan(x): return x
        return APPROX[f](x)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


def float_cases():
    for t in FLOATS:
        g = 'flt_' + t
        V = fvals(t)
        V = [v for v in V if math.isnan(v) or rnd(t, v) == v or math.isinf(v)]
        pairs = [(a, b) for a in V for b in V]
        random.shuffle(pairs)
        p, emin, emax = FMT[t]
        eps = float(Fr(2) ** (1 - p))
        sub = float(Fr(2) ** (emin - p + 1))
        special = [(0.0, -0.0), (-0.0, 0.0), (-0.0, -0.0), (1.0, -1.0), (math.inf, -math.inf), (math.inf, 0.0),
                   (0.0, 0.0), (1.0, 0.0), (1.0, -0.0), (V[13], V[13]), (sub, 0.5), (1.0, eps / 2), (1.0, 3.0),
                   (math.nan, 1.0), (3 * sub, 0.5), (1.0, eps / 2 * 3), (-1.0, eps / 4 if t != 'f64' else eps / 2)]
        special = [(a, b) for a, b in special if rnd(t, a) == a or math.isinf(a) or math.isnan(a)]
        special = [(a, b) for a, b in special if rnd(t, b) == b or math.isinf(b) or math.isnan(b)]
        pairs = special + pairs[:NP_FLT]
        for op in ['+', '-', '*', '/']:
            for a, b in pairs:
                r = float_binop(t, op, a, b)
                # the untyped form is exact (double) then rounded: same, unless it overflows (an error)
                forms = FORMS
                if math.isinf(r) and not (math.isinf(a) or math.isinf(b)):
                    forms = INEXACT
                    if not (op == '/' and b == 0):
                        REJECTS.append(('%s_%s_%r_%r' % (g, op, a, b), t, '%s %s %s' % (lit(t, a), op, lit(t, b))))
                add(g, '%r %s %r' % (a, op, b), t, '{0} %s {1}' % op, [(t, a), (t, b)], r, forms=forms)
        for a in V:
            add(g, '-%r' % a, t, '-{0}', [(t, a)], -a)
        for op in ['==', '!=', '<', '<=', '>', '>=']:
            for a, b in special + pairs[:20]:
                add(g, '%r %s %r' % (a, op, b), 'bool', '{0} %s {1}' % op, [(t, a), (t, b)], cmp(op, a, b))
        mm = special + [(math.nan, math.nan), (-0.0, math.nan), (math.nan, -0.0), (1.0, math.nan)] + pairs[:NP_FLT // 3]
        for a, b in mm:
            add(g, 'min(%r,%r)' % (a, b), t, 'min({0}, {1})', [(t, a), (t, b)], fmin(a, b))
            add(g, 'max(%r,%r)' % (a, b), t, 'max({0}, {1})', [(t, a), (t, b)], fmax(a, b))
        for x, l, h in [(math.nan, 0.0, 1.0), (-0.0, 0.0, 1.0), (0.0, -1.0, -0.0), (5.0, 1.0, 0.5), (0.5, math.nan, 1.0),
                        (0.5, 0.0, math.nan), (-0.0, -0.0, 0.0), (0.0, -0.0, -0.0), (-7.0, -math.inf, math.inf)]:
            add(g, 'clamp(%r,%r,%r)' % (x, l, h), t, 'clamp({0}, {1}, {2})', [(t, x), (t, l), (t, h)], fmin(fmax(x, l), h))
        add(g, 'select', t, 'select({0}, {1}, {2})', [('bool', True), (t, -0.0), (t, 0.0)], -0.0)
        # conversions from float t to every numeric type
        cvv = V + [float(x) for x in [1e10, -1e10, 255.5, 256.0, 65535.0, 65536.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 63,
                                      -2.0 ** 63, 2.0 ** 64, 2.0 ** 32, 4294967295.0, -0.75, 127.9, 128.0, -128.9,
                                      -129.0, 32767.5, -32768.7, 1e30, 9.2e18, 1.8e19]]
        if t == 'f64':
            cvv += [1 + 2 ** -11 + 2 ** -30, 1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -24 + 2 ** -60, 65519.99, 65520.0,
                    3.3895313892515355e38 * 1.0000001, 2 ** -25 + 2 ** -40, 2 ** -24 * 1.5, 2 ** -133 * 1.5,
                    5.96e-8, 2 ** -150, 2 ** -150 * 1.0000001, 9007199254740993.0 + 2, 1e300]
        if t == 'f32':
            cvv += [1 + 2 ** -11 + 2 ** -20, 1 + 2 ** -11, 1 + 2 ** -11 + 2 ** -10, 1 + 2 ** -8, 1 + 2 ** -8 + 2 ** -7,
                    65520.0, 65519.0, 2 ** -25, 2 ** -25 * 1.5, 2 ** -24 * 1.5]
        cvv = [v for v in cvv if math.isnan(v) or rnd(t, v) == v]
        seen = set()
        cvv2 = []
        for v in cvv:
            k = repr(v)
            if k not in seen: seen.add(k); cvv2.append(v)
        for to in INTS + FLOATS:
            for a in cvv2:
                if to == t: continue
                r = convert(t, to, a)
                add(g + '_cvt', '%r as %s' % (a, to), to, '{0} as %s' % to, [(t, a)], r)
        if t in ('f32', 'f64'):
            fx = V + [0.49999999999999994, 4503599627370497.0, 8388609.0, -8388609.0, 1e300, 2.0, 4.0, 0.25, 1e-40]
            fx = [v for v in fx if math.isnan(v) or rnd(t, v) == v]
            for a in fx:
                add(g, 'floor(%r)' % a, t, 'floor({0})', [(t, a)], ffloor(a))
                add(g, 'ceil(%r)' % a, t, 'ceil({0})', [(t, a)], fceil(a))
                add(g, 'trunc(%r)' % a, t, 'trunc({0})', [(t, a)], ftrunc(a))
                add(g, 'round(%r)' % a, t, 'round({0})', [(t, a)], fround(a))
                add(g, 'sqrt(%r)' % a, t, 'sqrt({0})', [(t, a)], fsqrt(t, a))
                add(g, 'abs(%r)' % a, t, 'abs({0})', [(t, a)], abs(a))
                for f in APPROX:
                    ex = approx_ref(f, a)
                    add(g + '_approx', '%s(%r)' % (f, a), t, '%s({0})' % f, [(t, a)], ex, approx=(f, t))
                if t == 'f32':
                    ex = math.copysign(math.inf, a) if a == 0 else (math.copysign(0.0, a) if math.isinf(a) else (math.nan if math.isnan(a) else 1 / a))
                    add(g + '_approx', 'rcp(%r)' % a, t, 'rcp({0})', [(t, a)], ex, approx=('rcp', t))
                    if not math.isnan(a) and a != 0 and not math.isinf(a):
                        add(g + '_approx', 'fast_div(3,%r)' % a, t, 'fast_div({0}, {1})', [(t, 3.0), (t, a)], 3.0 / a,
                            approx=('fast_div', t))
            # fma, including cases where fused != unfused
            trip = [(1 + eps, 1 - eps, -1.0), (1.0, 1.0, -0.0), (-0.0, 1.0, -0.0), (0.0, -1.0, 0.0), (math.inf, 0.0, 1.0),
                    (3.0, 1 / 3 if t == 'f64' else rnd(t, 1 / 3), -1.0), (V[13], 2.0, -V[13]), (sub, 0.5, 0.0),
                    (1 + 2 * eps, 1 + 2 * eps, -(1 + 4 * eps)), (math.nan, 0.0, 1.0), (-1.0, 1.0, 1.0)]
            for a, b, c in trip:
                if any(not (math.isnan(v) or rnd(t, v) == v) for v in (a, b, c)): continue
                add(g, 'fma(%r,%r,%r)' % (a, b, c), t, 'fma({0}, {1}, {2})', [(t, a), (t, b), (t, c)], fma_exact(t, a, b, c))


# ---------------------------------------------------------------------------
def packed_cases():
    for s in ['f16', 'bf16']:
        t = s + 'x2'
        g = 'pk_' + s
        p, emin, emax = FMT[s]
        eps = float(Fr(2) ** (1 - p))
        sub = float(Fr(2) ** (emin - p + 1))
        mx = float((2 - Fr(2) ** (1 - p)) * Fr(2) ** emax)
        vals = [(0.0, -0.0), (-0.0, 0.0), (1.0, math.nan), (math.nan, -0.0), (1 + eps, -(1 + eps)), (eps / 2, 3.0),
                (mx, -mx), (sub, -sub), (2.5, -0.5), (math.inf, 1.0), (3.0, 87.0), (rnd(s, 1 / 3), 7.0)]
        prs = [(a, b) for a in vals for b in vals]
        random.shuffle(prs)
        prs = prs[:NP_PK]
        for op in ['+', '-', '*']:
            for a, b in prs:
                r = tuple(float_binop(s, op, x, y) for x, y in zip(a, b))
                add(g, '%r %s %r' % (a, op, b), t, '{0} %s {1}' % op, [(t, a), (t, b)], r)
        for a, b in prs:
            add(g, 'min(%r,%r)' % (a, b), t, 'min({0}, {1})', [(t, a), (t, b)], tuple(fmin(x, y) for x, y in zip(a, b)))
            add(g, 'max(%r,%r)' % (a, b), t, 'max({0}, {1})', [(t, a), (t, b)], tuple(fmax(x, y) for x, y in zip(a, b)))
        for a in vals:
            add(g, 'abs(%r)' % (a,), t, 'abs({0})', [(t, a)], tuple(abs(x) for x in a))
        trips = [(a, b, c) for a in vals[:8] for b in vals[4:] for c in vals[:4]]
        random.shuffle(trips)
        trips = trips[:NP_PK]
        if s == 'bf16':
            trips.append(((3.0, 3.0), (87.0, 87.0), (float(Fr(2) ** -133), -float(Fr(2) ** -133))))
        trips.append(((1 + eps, 1 + eps), (1 - eps / 2, 1 + eps), (-1.0, -1.0)))
        for a, b, c in trips:
            add(g, 'fma(%r,%r,%r)' % (a, b, c), t, 'fma({0}, {1}, {2})', [(t, a), (t, b), (t, c)],
                tuple(fma_exact(s, x, y, z) for x, y, z in zip(a, b, c)))
        # separate * and + never fused
        for a, b, c in trips[:10]:
            add(g, 'mul-add %r' % ((a, b, c),), t, '{0} * {1} + {2}', [(t, a), (t, b), (t, c)],
                tuple(float_binop(s, '+', float_binop(s, '*', x, y), z) for x, y, z in zip(a, b, c)))
    # f32x4 vectors with splat constants
    g = 'vec_f32'
    for a in [(0.0, -0.0, 1.5, math.nan), (-1.0, 2.0 ** -149, 3.0, math.inf)]:
        add(g, 'splat*2 %r' % (a,), 'f32x4', '{0} * 2.0', [('f32x4', a)], tuple(float_binop('f32', '*', x, 2.0) for x in a))
        add(g, 'splat+-0 %r' % (a,), 'f32x4', '{0} + (-0.0)', [('f32x4', a)], tuple(float_binop('f32', '+', x, -0.0) for x in a))
        add(g, 'min v 0 %r' % (a,), 'f32x4', 'min({0}, 0.0)', [('f32x4', a)], tuple(fmin(x, 0.0) for x in a))
        add(g, 'max v -0 %r' % (a,), 'f32x4', 'max({0}, -0.0)', [('f32x4', a)], tuple(fmax(x, -0.0) for x in a))
        add(g, 'clamp v %r' % (a,), 'f32x4', 'clamp({0}, -0.0, 1.0)', [('f32x4', a)], tuple(fmin(fmax(x, -0.0), 1.0) for x in a))
        add(g, 'cvt f16x4 %r' % (a,), 'f16x4', '{0} as f16x4', [('f32x4', a)], tuple(convert('f32', 'f16', x) for x in a))
        add(g, 'cvt i32x4 %r' % (a,), 'i32x4', '{0} as i32x4', [('f32x4', a)], tuple(convert('f32', 'i32', x) for x in a))
        add(g, 'fma v %r' % (a,), 'f32x4', 'fma({0}, {0}, -1.0)', [('f32x4', a)], tuple(fma_exact('f32', x, x, -1.0) for x in a))


# ---------------------------------------------------------------------------
def emit_all():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    groups = {}
    cases = CASES
    if not FULL:   # small set: at most CAP cases per (group, expression), the first ones (the edge cases) kept
        CAP = 8
        seen = {}
        cases = []
        for c in CASES:
            k = (c.group, c.tmpl)
            seen[k] = seen.get(k, 0) + 1
            if seen[k] <= CAP: cases.append(c)
    for c in cases:
        groups.setdefault(c.group, []).append(c)
    manifest = {'kernels': [], 'rejects': []}
    MAXC = 400 if FULL else 700
    for g, cs in sorted(groups.items()):
        for part in range(0, len(cs), MAXC):
            emit_kernel('%s_%d' % (g, part // MAXC), cs[part:part + MAXC], manifest)
    for name, t, src in REJECTS:
        manifest['rejects'].append({'name': name, 'src': 'kernel k(o: &mut [%s]) { o[0] = %s; }\n' % (t, src)})
    json.dump(manifest, open(os.path.join(OUT, 'manifest.json'), 'w'), separators=(',', ':'))
    print('%d cases, %d kernels, %d rejects' % (len(cases), len(manifest['kernels']), len(REJECTS)))


def store_t(t):
    return 'u32' if t == 'bool' else t


def emit_kernel(kname, cs, manifest):
    consts, body = [], []
    inputs = {}    # type -> list of values
    outs = {}      # type -> count of slots
    lines = {}     # line number -> (case index, form)
    recs = []
    for ci, c in enumerate(cs):
        rt = store_t(c.rtype)
        base = outs.get(rt, 0)
        outs[rt] = base + NSLOT
        rec = {'name': c.name, 'rtype': c.rtype, 'base': base, 'forms': c.forms, 'approx': c.approx,
               'expect': expect_bits(c.rtype, c.expect), 'expr': c.tmpl}
        recs.append(rec)
        vec = any(lanes_of(at)[1] > 1 for at, _ in c.args) or lanes_of(c.rtype)[1] > 1
        if vec: rec['forms'] = ''.join(f for f in c.forms if f not in 'ckuw')
        for fi, f in enumerate(FORMS):
            if f not in c.forms: continue
            if vec and f in 'ckuw': continue
            ops = []
            pre = []
            for j, (at, av) in enumerate(c.args):
                scalar_arg = lanes_of(at)[1] == 1 and at != 'bool'
                if f == 'a' or (f in 'uw' and not scalar_arg):
                    o = lit(at, av)
                    if c.lit_cast and scalar_arg: o = '(%s as %s)' % (o, at)
                elif f == 'u':
                    o = '(%s - (t as %s))' % (lit(at, av), at)
                elif f == 'w':
                    o = '(%s - t)' % lit(at, av)
                    if c.lit_cast: o = '(%s as %s)' % (o, at)
                elif f in 'lv' or (f == 'm' and j > 0):
                    nm = '%s%d_%d' % ({'l': 'L', 'm': 'M', 'v': 'V'}[f], ci, j)
                    pre.append('%s %s: %s = %s;' % ('let' if f in 'lm' else 'var', nm, at, lit(at, av)))
                    o = nm
                elif f in 'ck':
                    nm = 'C%d_%d' % (ci, j)
                    if f == 'c': consts.append(('const %s: %s = %s;' % (nm, at, lit(at, av)), ci, 'c'))
                    o = nm
                else:
                    st = 'u32' if at == 'bool' else at
                    lst = inputs.setdefault(st, [])
                    idx = len(lst)
                    lst.append(int(av) if at == 'bool' else av)
                    o = '(x_%s[%d] != 0)' % (st, idx) if at == 'bool' else 'x_%s[%d]' % (st, idx)
                ops.append(o)
            e = c.tmpl.format(*ops)
            if f == 'k':
                kt = c.rtype
                consts.append(('const K%d: %s = %s;' % (ci, kt, e), ci, 'k'))
                e = 'K%d' % ci
            if c.rtype == 'bool': e = '(%s) as u32' % e
            stmt = ' '.join(pre + ['o_%s[%d] = %s;' % (rt, base + fi, e)])
            if f in 'uw': stmt = '@unroll for t in 0 .. 1 { %s }' % stmt
            body.append(('    ' + stmt, ci, f))
    params = ['x_%s: &[%s]' % (t, t) for t in sorted(inputs)] + ['o_%s: &mut [%s]' % (t, t) for t in sorted(outs)]
    src = []
    # consts first: one per line, remember their lines too
    for cl, ci, f in consts:
        src.append(cl)
        lines[len(src)] = (ci, f)
    src.append('@schedule(block = 1, grid = 1)')
    src.append('kernel %s(%s) {' % (kname, ', '.join(params)))
    for text, ci, f in body:
        src.append(text)
        lines[len(src)] = (ci, f)
    src.append('}')
    open(os.path.join(OUT, kname + '.kf'), 'w').write('\n'.join(src) + '\n')
    args = []
    for t, vals in sorted(inputs.items()):
        write_input(os.path.join(OUT, '%s.x_%s.npy' % (kname, t)), t, vals)
        args.append('x_%s=@%s.x_%s.npy' % (t, kname, t))
    for t, n in sorted(outs.items()):
        s, l = lanes_of(t)
        args.append('o_%s=zeros(%d)' % (t, n))
    manifest['kernels'].append({'name': kname, 'file': kname + '.kf', 'args': args,
                                'outs': sorted(outs), 'cases': recs, 'lines': lines})


def write_input(path, t, vals):
    """An input buffer of type t (vectors flattened to their lanes)."""
    s, n = lanes_of(t)
    flat = []
    for v in vals:
        flat += list(v) if n > 1 else [v]
    npy_write(path, s, flat)


def expect_bits(t, v):
    s, n = lanes_of(t)
    vs = list(v) if n > 1 else [v]
    out = []
    for x in vs:
        if s == 'bool': out.append(int(bool(x)))
        elif is_float(s) and math.isnan(x): out.append('nan')
        elif is_float(s): out.append(bits(s, rnd(s, x)))
        else: out.append(bits(s, x))
    return out


int_cases()
float_cases()
packed_cases()
emit_all()
