# Expression-tree model for the kforge contract (LANGUAGE.md 3, 5, 7; grammar/README.md 2, 5).
# Scalar semantics come from ../ref.py (the fold differential's model); this file adds
# untyped constants: exact integers, and floats carried twice (as an exact rational
# and as an IEEE double) so that a case where the two readings of "evaluated exactly"
# differ is dropped (Skip) instead of guessed.
import math, os, sys
from fractions import Fraction as Fr
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ref import *   # noqa

SCALARS = INTS + FLOATS + ['bool']
BYTES = {t: WIDTH[t] // 8 for t in INTS + FLOATS}


class Skip(Exception):
    """The case is undefined or ambiguous under the contract: not generated."""


class Reject(Exception):
    """The contract says the compiler must refuse this program."""


class UV:
    """Untyped constant: kind 'i' (v: int) or 'f' (d: double reading, x: exact Fraction or None)."""
    __slots__ = ('kind', 'v', 'd', 'x')

    def __init__(self, kind, v=None, d=None, x=None):
        self.kind, self.v, self.d, self.x = kind, v, d, x
        if kind == 'f' and x is None and d is not None and math.isfinite(d):
            self.x = Fr(d)

    def __repr__(self):
        return 'U%s(%s)' % (self.kind, self.v if self.kind == 'i' else '%r|%s' % (self.d, self.x))


def to_f(u):
    if u.kind == 'f': return u
    try:
        d = float(u.v)
    except OverflowError:
        raise Skip('int too big for double')
    return UV('f', d=d, x=Fr(u.v))


def fits(t, v):
    lo, hi = irange(t)
    return lo <= v <= hi


def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def u_binop(op, a, b):
    if op in ('+', '-', '*', '/') and (a.kind == 'f' or b.kind == 'f'):
        a, b = to_f(a), to_f(b)
        if op == '/' and b.d == 0: raise Skip('untyped float division by zero')
        try:
            d = {'+': lambda: a.d + b.d, '-': lambda: a.d - b.d, '*': lambda: a.d * b.d, '/': lambda: a.d / b.d}[op]()
        except (OverflowError, ZeroDivisionError):
            raise Skip('double overflow')
        fin_in = math.isfinite(a.d) and math.isfinite(b.d)
        if fin_in and not math.isfinite(d): raise Skip('untyped double overflow')
        x = None
        if a.x is not None and b.x is not None and fin_in:
            x = {'+': lambda: a.x + b.x, '-': lambda: a.x - b.x, '*': lambda: a.x * b.x, '/': lambda: a.x / b.x}[op]()
            if x != 0 and abs(x) > Fr(10) ** 300: raise Skip('huge')
        r = UV('f', d=d)
        if x is not None: r.x = x
        return r
    if a.kind != 'i' or b.kind != 'i': raise Skip('float operand of integer operator')
    x, y = a.v, b.v
    if op == '+': r = x + y
    elif op == '-': r = x - y
    elif op == '*': r = x * y
    elif op in '/%':
        if y == 0: raise Reject('udiv0')
        q = tdiv(x, y)
        r = q if op == '/' else x - q * y
    elif op == '&': r = x & y
    elif op == '|': r = x | y
    elif op == '^': r = x ^ y
    elif op in ('<<', '>>'):
        if y < 0 or y > 70: raise Skip('untyped shift amount')
        r = x << y if op == '<<' else x >> y
    else: raise ValueError(op)
    if not (-(1 << 63) <= r <= (1 << 64) - 1): raise Skip('untyped int outside [i64 min, u64 max]')
    return UV('i', v=r)


def ichk(v):
    # kforge keeps untyped integers in [-2^63, 2^64-1] ('constant expression overflows'); the
    # contract says 'exact' without a bound, so values outside are left out, not judged.
    if not (-(1 << 63) <= v <= (1 << 64) - 1): raise Skip('untyped int outside [i64 min, u64 max]')
    return v


def u_neg(a):
    if a.kind == 'i': return UV('i', v=ichk(-a.v))
    r = UV('f', d=-a.d)
    r.x = -a.x if a.x is not None else None
    return r


def u_bnot(a):
    if a.kind != 'i': raise Skip('~ float')
    return UV('i', v=ichk(~a.v))


def u_abs(a):
    if a.kind == 'i': return UV('i', v=abs(a.v))
    r = UV('f', d=abs(a.d))
    r.x = abs(a.x) if a.x is not None else None
    return r


def u_key(a):
    return a.v if a.kind == 'i' else a.d


def u_min(a, b, mx=False):
    if a.kind == 'i' and b.kind == 'i':
        return UV('i', v=max(a.v, b.v) if mx else min(a.v, b.v))
    if a.kind != b.kind: raise Skip('mixed kinds in generic builtin')
    if math.isnan(a.d) and math.isnan(b.d): return UV('f', d=math.nan)
    if math.isnan(a.d): return b
    if math.isnan(b.d): return a
    ka = a.x if a.x is not None else a.d
    kb = b.x if b.x is not None else b.d
    if ka != kb:
        pick = a if (ka < kb) != mx else b
        if a.d == b.d: raise Skip('min/max: exact and double readings differ')
        if (a if (a.d < b.d) != mx else b) is not pick: raise Skip('min/max ambiguous')
        return pick
    r = fmax(a.d, b.d) if mx else fmin(a.d, b.d)
    return a if bits('f64', r) == bits('f64', a.d) else b


def u_cmp(op, a, b):
    if a.kind == 'i' and b.kind == 'i': return cmp(op, a.v, b.v)
    a, b = to_f(a), to_f(b)
    r1 = cmp(op, a.d, b.d)
    if a.x is not None and b.x is not None:
        r2 = cmp(op, a.x, b.x)
        if r1 != r2: raise Skip('untyped compare ambiguous')
    return r1


def adapt(u, t):
    """An untyped constant meets its context type t (LANGUAGE.md 3: 'A constant that does not fit its type
    is an error'; grammar 2: 'a float constant never becomes an integer')."""
    if not isinstance(u, UV): return u
    if t == 'bool': raise Skip('untyped to bool')
    if is_int(t):
        if u.kind == 'f': raise Reject('float constant in integer context')
        if not fits(t, u.v): raise Reject('constant does not fit %s' % t)
        return u.v
    if u.kind == 'i':
        r = round_frac(t, Fr(u.v)) if u.v != 0 else 0.0
        if math.isinf(r): raise Reject('int constant overflows %s' % t)
        return r
    if u.x is None or not math.isfinite(u.d):
        if math.isnan(u.d) or math.isinf(u.d): return u.d
    r1 = round_frac(t, u.x, neg_zero=isneg(u.d)) if u.x != 0 else (-0.0 if isneg(u.d) else 0.0)
    if math.isinf(r1): raise Reject('float constant overflows %s' % t)
    r2 = rnd(t, u.d)
    if bits(t, r1) != bits(t, r2): raise Skip('exact and double readings differ')
    return r1


def default_type(u):
    return 'i32' if u.kind == 'i' else 'f32'


# ---- typed operations ------------------------------------------------------------
def t_binop(t, op, a, b):
    if is_int(t):
        r = int_binop(t, op, a, b)
        if r is None: raise Skip('division by zero')
        return r
    if op not in '+-*/': raise Skip('float op %s' % op)
    return float_binop(t, op, a, b)


def t_neg(t, a):
    return wrap(t, -a) if is_int(t) else -a


def t_abs(t, a):
    if is_int(t): return wrap(t, abs(a))
    return abs(a) if not math.isnan(a) else a


def t_min(t, a, b, mx=False):
    if is_float(t): return fmax(a, b) if mx else fmin(a, b)
    return max(a, b) if mx else min(a, b)


def cast_val(s, t, v):
    if s == 'bool': return convert('i32', t, int(v))
    return convert(s, t, v)


def bitcast_val(s, t, v):
    if is_float(s) and math.isnan(v): raise Skip('bitcast of NaN')
    return from_bits(t, bits(s, v))


def t_call(name, t, args):
    if name in ('floor', 'ceil', 'trunc', 'round'):
        return {'floor': ffloor, 'ceil': fceil, 'trunc': ftrunc, 'round': fround}[name](args[0])
    if name == 'sqrt': return fsqrt(t, args[0])
    if name == 'fma': return fma_exact(t, *args)
    if name == 'cdiv':
        r = cdiv(t, args[0], args[1])
        if r is None: raise Skip('cdiv by zero')
        return r
    if name == 'mul_hi': return mul_hi(t, args[0], args[1])
    raise ValueError(name)


def u_to_cast(u, t):
    """`untyped as T`: only where 'default type then convert' and 'exact then convert' agree."""
    if u.kind == 'i':
        if not fits('i32', u.v): raise Skip('cast of big untyped int')
        if is_int(t):
            if not fits(t, u.v): raise Skip('cast of untyped int that does not fit')
            return u.v
        r = convert('i32', t, u.v)
        if math.isinf(r): raise Skip('untyped int cast overflows')
        return r
    d = u.d
    if math.isfinite(d):
        if u.x != Fr(d) or rnd('f32', d) != d: raise Skip('untyped float cast not exact in f32')
    if is_int(t):
        if not math.isfinite(d): raise Skip('cast nan/inf untyped')
        if not fits(t, math.trunc(d)): raise Skip('cast out of range')
        return math.trunc(d)
    return convert('f32', t, d)


def fmt_float(v):
    """A float literal (untyped) whose value is exactly the double v (finite)."""
    r = repr(float(abs(v)))
    if 'e' in r and '.' not in r.split('e')[0]:
        m, e = r.split('e')
        r = m + '.0e' + e
    return ('-' if isneg(v) else '') + r
