# Expression-tree nodes: each knows its type, its source text and its value under model.py.
import math
from model import *   # noqa

PREC = {'||': 1, '&&': 2, '|': 3, '^': 4, '&': 5, '==': 6, '!=': 6, '<': 7, '<=': 7, '>': 7, '>=': 7,
        '<<': 8, '>>': 8, '+': 9, '-': 9, '*': 10, '/': 10, '%': 10}
P_AS, P_UN, P_PRIM = 11, 12, 13


class X:
    """Emission context: names of loads/lets, the loop variable, parenthesis style."""
    def __init__(self, full=True):
        self.full = full
        self.inputs = {}     # store type -> list of values
        self.pre = []        # let/var lines of the current statement
        self.tname = 't'
        self.nlet = 0
        self.prefix = 'L'
        self.memo = {}

    def load(self, t, v):
        st = 'u32' if t == 'bool' else t
        lst = self.inputs.setdefault(st, [])
        lst.append(int(v) if t == 'bool' else v)
        return len(lst) - 1


def par(s, need):
    return '(%s)' % s if need else s


class Node:
    ty = None
    prec = P_PRIM
    kids = ()

    def rebuild(self, kids):
        import copy
        n = copy.copy(self)
        n.kids = list(kids)
        return n

    def uses_t(self):
        return any(k.uses_t() for k in self.kids)

    def consts(self, acc):
        for k in self.kids: k.consts(acc)
        return acc

    def sub(self, k, X, minprec):
        s = k.src(X)
        return par(s, k.prec < minprec or (X.full and k.prec < P_PRIM))


# ---- leaves ------------------------------------------------------------------------
def int_text(v, style):
    a = abs(v)
    if style == 1 and a > 9: s = hex(a)
    elif style == 2 and 0 < a < 4096: s = bin(a)
    elif style == 3 and a >= 10000:
        s = '{:_}'.format(a)
    else: s = str(a)
    return ('-' + s) if v < 0 else s


class Lit(Node):
    """Untyped literal (int, float, inf, nan); a leading '-' is the unary minus."""
    ty = 'U'

    def __init__(self, uv, text):
        self.uv, self.text = uv, text
        self.prec = P_UN if text.startswith('-') else P_PRIM

    def ev(self, E): return self.uv

    def src(self, X): return self.text


def ilit(v, style=0):
    return Lit(UV('i', v=v), int_text(v, style))


def flit_d(d):
    if math.isnan(d): return Lit(UV('f', d=math.nan), 'nan')
    if math.isinf(d): return Lit(UV('f', d=d), '-inf' if d < 0 else 'inf')
    return Lit(UV('f', d=d, x=Fr(d)), fmt_float(d))


def flit_text(text):
    neg = text.startswith('-')
    body = text[1:] if neg else text
    x = Fr(body.replace('_', ''))
    d = float(body.replace('_', ''))
    u = UV('f', d=-d if neg else d)
    u.x = -x if neg else x
    return Lit(u, text)


def blit(b):
    n = Lit(None, 'true' if b else 'false')
    n.ty = 'bool'
    n.ev = lambda E: b
    return n


class BoolLit(Node):
    ty = 'bool'

    def __init__(self, b): self.b = b

    def ev(self, E): return self.b

    def src(self, X): return 'true' if self.b else 'false'


class UVar(Node):
    ty = 'U'

    def ev(self, E):
        if E.get('t') is None or E.get('tty') != 'U': raise Skip('no untyped loop variable')
        return UV('i', v=E['t'])

    def src(self, X): return X.tname

    def uses_t(self): return True


class TVar(Node):
    def __init__(self, t): self.ty = t

    def ev(self, E):
        if E.get('t') is None or E.get('tty') != self.ty: raise Skip('no typed loop variable')
        return E['t']

    def src(self, X): return X.tname

    def uses_t(self): return True


class Load(Node):
    def __init__(self, t, v): self.ty, self.v = t, v

    def ev(self, E): return self.v

    def src(self, X):
        if id(self) in X.memo: return X.memo[id(self)]
        i = X.load(self.ty, self.v)
        if self.ty == 'bool':
            r = '(x_u32[%d] != 0)' % i
        else: r = 'x_%s[%d]' % (self.ty, i)
        X.memo[id(self)] = r
        return r


def typed_lit_text(t, v):
    if t == 'bool': return 'true' if v else 'false'
    if is_int(t): return int_text(v, 0)
    if math.isnan(v): return 'nan'
    if math.isinf(v): return '-inf' if v < 0 else 'inf'
    return fmt_float(v)


class LetRef(Node):
    def __init__(self, t, v, isvar=False): self.ty, self.v, self.isvar = t, v, isvar

    def ev(self, E): return self.v

    def src(self, X):
        if id(self) in X.memo: return X.memo[id(self)]
        X.nlet += 1
        nm = '%s%d' % (X.prefix, X.nlet)
        X.memo[id(self)] = nm
        X.pre.append('%s %s: %s = %s;' % ('var' if self.isvar else 'let', nm, self.ty, typed_lit_text(self.ty, self.v)))
        return nm


class ConstRef(Node):
    def __init__(self, name, t): self.name, self.ty = name, t

    def ev(self, E): return E['C'][self.name]

    def src(self, X): return self.name

    def consts(self, acc):
        acc.add(self.name)
        return acc


# ---- untyped operators --------------------------------------------------------------
class UBin(Node):
    ty = 'U'

    def __init__(self, op, a, b):
        self.op, self.kids = op, [a, b]
        self.prec = PREC[op]

    def ev(self, E):
        try:
            return u_binop(self.op, self.kids[0].ev(E), self.kids[1].ev(E))
        except Reject:
            # over an @unroll variable a division by zero is the run-time error of LANGUAGE.md
            # section 5 (reported by the interpreter, in an iteration that runs), not a refusal
            if self.uses_t(): raise Skip('division by zero over t')
            raise

    def src(self, X):
        return '%s %s %s' % (self.sub(self.kids[0], X, self.prec), self.op, self.sub(self.kids[1], X, self.prec + 1))


class UUn(Node):
    ty = 'U'
    prec = P_UN

    def __init__(self, op, a): self.op, self.kids = op, [a]

    def ev(self, E):
        a = self.kids[0].ev(E)
        return u_neg(a) if self.op == '-' else u_bnot(a)

    def src(self, X):
        s = self.sub(self.kids[0], X, P_UN)
        if s[0] in '-~!': s = '(%s)' % s
        return self.op + s


class UCall(Node):
    ty = 'U'

    def __init__(self, fn, args): self.fn, self.kids = fn, list(args)

    def ev(self, E):
        if self.fn == 'select':
            c = self.kids[0].ev(E)
            return self.kids[1].ev(E) if c else self.kids[2].ev(E)
        a = [k.ev(E) for k in self.kids]
        if self.fn == 'abs': return u_abs(a[0])
        if self.fn == 'min': return u_min(a[0], a[1])
        if self.fn == 'max': return u_min(a[0], a[1], True)
        if self.fn == 'clamp': return u_min(u_min(a[0], a[1], True), a[2])
        raise ValueError(self.fn)

    def src(self, X):
        return '%s(%s)' % (self.fn, ', '.join(k.src(X) for k in self.kids))


class UCmp(Node):
    ty = 'bool'

    def __init__(self, op, a, b):
        self.op, self.kids = op, [a, b]
        self.prec = PREC[op]

    def ev(self, E): return u_cmp(self.op, self.kids[0].ev(E), self.kids[1].ev(E))

    def src(self, X):
        return '%s %s %s' % (self.sub(self.kids[0], X, self.prec + 1), self.op, self.sub(self.kids[1], X, self.prec + 1))


class Adapt(Node):
    """An untyped subtree in a typed position (no source text of its own)."""
    def __init__(self, a, t):
        self.kids, self.ty = [a], t

    @property
    def prec(self): return self.kids[0].prec

    def ev(self, E): return adapt(self.kids[0].ev(E), self.ty)

    def src(self, X): return self.kids[0].src(X)


# ---- typed operators -----------------------------------------------------------------
class Bin(Node):
    def __init__(self, op, a, b, t):
        self.op, self.kids, self.ty = op, [a, b], t
        self.prec = PREC[op]

    def ev(self, E):
        return t_binop(self.ty, self.op, self.kids[0].ev(E), self.kids[1].ev(E))

    def src(self, X):
        return '%s %s %s' % (self.sub(self.kids[0], X, self.prec), self.op, self.sub(self.kids[1], X, self.prec + 1))


class Cmp(Node):
    ty = 'bool'

    def __init__(self, op, a, b):
        self.op, self.kids = op, [a, b]
        self.prec = PREC[op]

    def ev(self, E):
        return cmp(self.op, self.kids[0].ev(E), self.kids[1].ev(E))

    def src(self, X):
        return '%s %s %s' % (self.sub(self.kids[0], X, self.prec + 1), self.op, self.sub(self.kids[1], X, self.prec + 1))


class Logic(Node):
    ty = 'bool'

    def __init__(self, op, a, b):
        self.op, self.kids = op, [a, b]
        self.prec = PREC[op]

    def ev(self, E):
        a = self.kids[0].ev(E)
        b = self.kids[1].ev(E)   # evaluated anyway: no side effects, keeps Skip checks honest
        return (a and b) if self.op == '&&' else (a or b)

    def src(self, X):
        return '%s %s %s' % (self.sub(self.kids[0], X, self.prec), self.op, self.sub(self.kids[1], X, self.prec + 1))


class Un(Node):
    prec = P_UN

    def __init__(self, op, a, t): self.op, self.kids, self.ty = op, [a], t

    def ev(self, E):
        a = self.kids[0].ev(E)
        if self.op == '-': return t_neg(self.ty, a)
        if self.op == '~': return wrap(self.ty, ~a)
        return not a

    def src(self, X):
        s = self.sub(self.kids[0], X, P_UN)
        if s[0] in '-~!': s = '(%s)' % s
        return self.op + s


class Call(Node):
    """Builtins over typed arguments (untyped arguments arrive wrapped in Adapt)."""
    def __init__(self, fn, args, t): self.fn, self.kids, self.ty = fn, list(args), t

    def ev(self, E):
        if self.fn == 'select':
            c = self.kids[0].ev(E)
            a, b = self.kids[1].ev(E), self.kids[2].ev(E)
            return a if c else b
        a = [k.ev(E) for k in self.kids]
        t = self.ty
        if self.fn == 'abs': return t_abs(t, a[0])
        if self.fn == 'min': return t_min(t, a[0], a[1])
        if self.fn == 'max': return t_min(t, a[0], a[1], True)
        if self.fn == 'clamp': return t_min(t, t_min(t, a[0], a[1], True), a[2])
        if self.fn in ('clz', 'popc'):
            s = self.kids[0].ty
            return clz(s, a[0]) if self.fn == 'clz' else popc(s, a[0])
        if self.fn.startswith('pass_'): return a[0]
        return t_call(self.fn, t, a)

    def src(self, X):
        return '%s(%s)' % (self.fn, ', '.join(k.src(X) for k in self.kids))


class Cast(Node):
    prec = P_AS

    def __init__(self, a, t): self.kids, self.ty = [a], t

    def ev(self, E):
        k = self.kids[0]
        v = k.ev(E)
        if isinstance(v, UV): return u_to_cast(v, self.ty)
        return cast_val(k.ty, self.ty, v)

    def src(self, X):
        return '%s as %s' % (self.sub(self.kids[0], X, P_AS), self.ty)


class Bitcast(Node):
    def __init__(self, a, t): self.kids, self.ty = [a], t

    def ev(self, E): return bitcast_val(self.kids[0].ty, self.ty, self.kids[0].ev(E))

    def src(self, X): return 'bitcast(%s, %s)' % (self.ty, self.kids[0].src(X))


# ---- vectors (values are tuples of lanes) ------------------------------------------------
def vt(s, n): return '%sx%d' % (s, n)


class VCtor(Node):
    def __init__(self, s, n, args): self.s, self.n, self.kids = s, n, list(args); self.ty = vt(s, n)

    def ev(self, E):
        vs = [k.ev(E) for k in self.kids]
        return tuple(vs) if len(vs) == self.n else tuple(vs * self.n)

    def src(self, X): return '%s(%s)' % (self.ty, ', '.join(k.src(X) for k in self.kids))


class VBin(Node):
    def __init__(self, op, a, b, s, n):
        self.op, self.kids, self.s, self.n = op, [a, b], s, n
        self.ty = vt(s, n)
        self.prec = PREC[op]

    def ev(self, E):
        a, b = self.kids[0].ev(E), self.kids[1].ev(E)
        if not isinstance(a, tuple): a = (a,) * self.n   # splatted scalar (Adapt'ed to the lane type)
        if not isinstance(b, tuple): b = (b,) * self.n
        return tuple(t_binop(self.s, self.op, x, y) for x, y in zip(a, b))

    def src(self, X):
        return '%s %s %s' % (self.sub(self.kids[0], X, self.prec), self.op, self.sub(self.kids[1], X, self.prec + 1))


class VCall(Node):
    def __init__(self, fn, args, s, n):
        self.fn, self.kids, self.s, self.n = fn, list(args), s, n
        self.ty = vt(s, n)

    def ev(self, E):
        a = [k.ev(E) for k in self.kids]
        a = [x if isinstance(x, tuple) else (x,) * self.n for x in a]
        if self.fn in ('min', 'max'): return tuple(t_min(self.s, x, y, self.fn == 'max') for x, y in zip(*a))
        if self.fn == 'abs': return tuple(t_abs(self.s, x) for x in a[0])
        if self.fn == 'fma': return tuple(fma_exact(self.s, x, y, z) for x, y, z in zip(*a))
        raise ValueError(self.fn)

    def src(self, X): return '%s(%s)' % (self.fn, ', '.join(k.src(X) for k in self.kids))


class VCast(Node):
    prec = P_AS

    def __init__(self, a, s, n): self.kids, self.s, self.n = [a], s, n; self.ty = vt(s, n)

    def ev(self, E):
        src_s = self.kids[0].s
        return tuple(cast_val(src_s, self.s, x) for x in self.kids[0].ev(E))

    def src(self, X): return '%s as %s' % (self.sub(self.kids[0], X, P_AS), self.ty)


class Lane(Node):
    """v.x / v[k] with k a literal or the loop variable."""
    def __init__(self, v, k, style):
        self.kids, self.k, self.style = [v], k, style
        self.ty = v.s

    def ev(self, E):
        vs = self.kids[0].ev(E)
        k = self.k
        if k == 't':
            k = E.get('t')
            if k is None or not (0 <= k < len(vs)): raise Skip('lane index out of range')
        return vs[k]

    def uses_t(self): return self.k == 't' or self.kids[0].uses_t()

    def src(self, X):
        s = self.sub(self.kids[0], X, P_PRIM)
        if self.k == 't': return '%s[%s]' % (s, X.tname)
        if self.style == 0 and len(self.kids[0].ty) and int(self.kids[0].ty.split('x')[1]) <= 4: return '%s.%s' % (s, 'xyzw'[self.k])
        return '%s[%d]' % (s, self.k)


class SelU(Node):
    """select(c, a, b) with a run-time c and untyped a, b: they take the context type (grammar 2)."""
    def __init__(self, c, a, b, t): self.kids, self.ty = [c, a, b], t

    def ev(self, E):
        c = self.kids[0].ev(E)
        a = adapt(self.kids[1].ev(E), self.ty)
        b = adapt(self.kids[2].ev(E), self.ty)
        return a if c else b

    def src(self, X): return 'select(%s)' % ', '.join(k.src(X) for k in self.kids)
