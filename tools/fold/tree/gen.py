#!/usr/bin/env python3
"""Random expression-tree differential for kforge's front end: the typing of untyped
constants (literals, @unroll variables, generic builtins over them) in every context,
const chains and -D overrides, folding and lowering, against model.py.

  gen.py --seed N --count M [--per-kernel K] [--kforge BIN] [--backend cpu|cuda|ptx]
         [--out DIR] [--no-shrink] [--quiet]

Makes M random statements (one expression tree each, depth 2-5; see Gen), K per kernel,
runs every kernel on the back end at -O1 and -O0 and compares each stored value bit for
bit with model.py (NaN matches NaN; the sign of zero counts), and -O1 with -O0. Programs
the contract refuses are checked with `kforge check`. A refusal of a valid program is a
problem, but for the one documented limit (grammar/README.md section 4: an @unroll
expression no 64-bit type holds), counted apart. Mismatches are shrunk and written to
DIR/s<seed>_k<kernel>_<stmt>.kf with their command line (--out; else only printed).
Exits 1 on any problem. Python's standard library only.
"""
import math, os, random, subprocess, sys, tempfile, shutil, copy, json
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import *   # noqa
from nodes import *   # noqa

ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))   # tools/
NUMT = INTS + FLOATS
VEC_OK = {s: [n for n in (2, 4, 8, 16) if n * BYTES[s] <= 16] for s in NUMT}

UFLT_TEXT = ['0.1', '0.2', '0.3', '1e-7', '3.14159', '2.5', '0.5', '1.0', '1e10', '1e30', '65504.0', '65520.0',
             '3.4028235e38', '1e-40', '0.0', '16777217.0', '0.333333333333333333333', '1.00048828125', '1.5',
             '255.0', '4294967296.0', '9007199254740993.0', '1e-310', '0.75', '100.25', '2.', '.5', '1_000.5',
             '6.02e23', '1.0009765625', '1.00390625', '2049.0', '33.3']


class Gen:
    def __init__(self, rng, kid):
        self.r = rng
        self.kid = kid
        self.consts = {}    # name -> dict(t, init (node or None), lit, ov, val)
        self.corder = []
        self.cvals = {}
        self.cmode = False
        self.envs = [{'t': None, 'tty': None, 'C': self.cvals}]
        self.loop = None
        self.allow_reject = False
        self.reuse = {}

    # ---- values -------------------------------------------------------------------
    def rint(self, t, small=False):
        r = self.r
        lo, hi = irange(t)
        w = WIDTH[t]
        x = r.random()
        if small or x < 0.3: v = r.randint(-9, 9)
        elif x < 0.6: v = r.choice([0, 1, 2, 3, 7, hi, hi - 1, lo, lo + 1, -1, -2, 0x55, 1 << (w - 1), (1 << (w // 2)) - 1])
        elif x < 0.8: v = r.randint(lo, hi)
        else: v = r.randint(-(1 << r.randint(1, w)), 1 << r.randint(1, w))
        if not fits(t, v): v = wrap(t, v)
        return v

    def rflt(self, t):
        r = self.r
        p, emin, emax = FMT[t]
        x = r.random()
        if x < 0.35:
            mx = float((2 - Fr(2) ** (1 - p)) * Fr(2) ** emax)
            v = r.choice([0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, mx, -mx, float(Fr(2) ** emin),
                          float(Fr(2) ** (emin - p + 1)), math.inf, -math.inf, math.nan, 1 + float(Fr(2) ** (1 - p)),
                          float(2 ** (p - 1) + 1), 7.0, -7.0, 0.1, 1 / 3, 255.5, 65504.0, 1e4, -129.5])
        elif x < 0.75:
            v = r.choice([-1, 1]) * r.randint(0, 1 << 12) / r.choice([1, 2, 4, 8, 16, 3, 10])
        else:
            v = r.choice([-1, 1]) * r.random() * 2.0 ** r.randint(max(emin - p, -1070), min(emax, 1000))
        return rnd(t, v)

    def rval(self, t, small=False):
        if t == 'bool': return self.r.random() < 0.5
        return self.rint(t, small) if is_int(t) else self.rflt(t)

    # ---- evaluation over the loop's iterations ---------------------------------------
    def check(self, n):
        return [n.ev(E) for E in self.envs]

    def ok(self, n):
        """n's value in every iteration, or None (Skip).  A Reject is kept only when allowed."""
        try:
            self.check(n)
            return True
        except Skip:
            return False
        except Reject:
            if self.allow_reject and self.r.random() < 0.08:
                n.rejects = True
                return True
            return False

    # ---- constants -----------------------------------------------------------------
    def new_const(self, t, chain=False, small=False):
        name = 'C%d_%d' % (self.kid, len(self.corder))
        c = {'t': t, 'init': None, 'ov': None}
        if chain and t != 'bool' and self.corder:
            self.cmode = True
            save = self.envs
            self.envs = [{'t': None, 'tty': None, 'C': self.cvals}]
            n = None
            for _ in range(8):
                cand = self.typed(t, self.r.randint(1, 2))
                try:
                    [v] = self.check(cand)
                    n = cand
                    break
                except (Skip, Reject):
                    continue
            self.envs = save
            self.cmode = False
            if n is None: return None
            c['init'] = n
            val = v
            if self.r.random() < 0.15:
                c['ov'] = self.rval(t, small)
                val = c['ov']
        else:
            c['lit'] = self.rval(t, small)
            val = c['lit']
            if self.r.random() < 0.4:
                c['ov'] = self.rval(t, small)
                val = c['ov']
        self.consts[name] = c
        self.corder.append(name)
        self.cvals[name] = val
        return name

    def const_leaf(self, t):
        have = [n for n in self.corder if self.consts[n]['t'] == t]
        if have and self.r.random() < 0.4: return ConstRef(self.r.choice(have), t)
        nm = self.new_const(t, chain=self.r.random() < 0.35)
        if nm is None: nm = self.new_const(t)
        return ConstRef(nm, t)

    # ---- leaves ----------------------------------------------------------------------
    def typed_leaf(self, t):
        r = self.r
        if self.cmode:
            x = r.random()
            have = [n for n in self.corder if self.consts[n]['t'] == t]
            if have and x < 0.6: return ConstRef(r.choice(have), t)
            if t != 'bool' and x < 0.8:
                return Cast(self.ulit(t, 'i' if is_int(t) else 'f'), t)
            if t == 'bool': return BoolLit(r.random() < 0.5)
            return Cast(self.ulit(t, 'i' if is_int(t) else 'f'), t)
        if self.loop and self.loop[0] == 'T' and self.loop[1] == t and r.random() < 0.3:
            return TVar(t)
        if self.reuse.get(t) and r.random() < 0.3:   # the same value twice: x - x, x * x, min(x, x) ...
            return r.choice(self.reuse[t])
        n = self._typed_leaf(t)
        if isinstance(n, (Load, LetRef, ConstRef)): self.reuse.setdefault(t, []).append(n)
        return n

    def _typed_leaf(self, t):
        r = self.r
        x = r.random()
        if x < 0.4: return Load(t, self.rval(t))
        if x < 0.55: return LetRef(t, self.rval(t))
        if x < 0.65: return LetRef(t, self.rval(t), True)
        if x < 0.85: return self.const_leaf(t)
        if t == 'bool': return BoolLit(r.random() < 0.5)
        return Cast(self.ulit(t, 'i' if is_int(t) else 'f'), t)

    def ulit(self, ctx, kind):
        r = self.r
        if kind == 'i':
            t = ctx if ctx in INTS else 'i32'
            x = r.random()
            if x < 0.85: v = self.rint(t)
            elif x < 0.93: v = r.choice([256, 300, -1, 65536, 1 << 32, 1 << 31, 1 << 63, 1 << 64, -(1 << 63) - 1, 1000])
            else: v = r.randint(-(1 << 70), 1 << 70)
            if v > (1 << 64) - 1: v = (1 << 64) - 1
            if v < -(1 << 63): v = -(1 << 63)
            return ilit(v, r.choice([0, 0, 0, 1, 2, 3]))
        t = ctx if ctx in FLOATS else 'f32'
        x = r.random()
        if x < 0.5:
            v = self.rflt(t)
            if ctx in INTS and not math.isfinite(v): v = 1.5
            return flit_d(v)
        if x < 0.8:
            return flit_text(r.choice(UFLT_TEXT + ['-' + s for s in UFLT_TEXT[:10]]))
        return flit_d(r.choice([0.0, -0.0, 1.0, 2.0, 0.5, -1.5, 1e-30, 1e30]))

    def uleaf(self, ctx, kind):
        if self.r.random() < 0.2:   # identities and absorbing values: x + 0, x * 1, x * -0.0, x >> 0 ...
            if kind == 'i' or self.r.random() < 0.4:
                return ilit(self.r.choice([0, 1, -1, 2, 0, 1]))
            return flit_d(self.r.choice([0.0, -0.0, 1.0, -1.0, 0.5, 2.0]))
        if self.loop and self.loop[0] == 'U' and not self.cmode and self.r.random() < 0.35:
            return UVar()
        return self.ulit(ctx, kind)

    # ---- untyped trees -----------------------------------------------------------------
    def untyped(self, ctx, kind, d):
        """kind 'i': an integer-kind constant; 'f': may be float kind (mixing int parts)."""
        r = self.r
        for attempt in range(6):
            if d <= 0 or r.random() < 0.3:
                n = self.uleaf(ctx, kind if kind == 'i' or r.random() < 0.7 else 'i')
            else:
                x = r.random()
                if x < 0.55:
                    ops = ['+', '-', '*', '/'] + (['%', '&', '|', '^', '<<', '>>'] if kind == 'i' else [])
                    op = r.choice(ops)
                    if op in ('<<', '>>'):
                        n = UBin(op, self.untyped(ctx, 'i', d - 1), ilit(r.randint(0, 40 if r.random() < 0.8 else 70)))
                    else:
                        ka = kind
                        kb = 'i' if kind == 'i' else r.choice('if')
                        n = UBin(op, self.untyped(ctx, ka, d - 1), self.untyped(ctx, kb, d - 1))
                elif x < 0.7:
                    op = '-' if kind == 'f' or r.random() < 0.6 else '~'
                    n = UUn(op, self.untyped(ctx, kind if op == '-' else 'i', d - 1))
                elif x < 0.9:
                    fn = r.choice(['abs', 'min', 'max', 'clamp'])
                    k2 = kind if kind == 'i' else r.choice(['i', 'f', 'f'])
                    na = {'abs': 1, 'min': 2, 'max': 2, 'clamp': 3}[fn]
                    n = UCall(fn, [self.untyped(ctx, k2, d - 1) for _ in range(na)])
                    # generic builtins: keep kinds equal
                    try:
                        ks = set(a.ev(self.envs[0]).kind for a in n.kids)
                        if len(ks) > 1: continue
                    except (Skip, Reject):
                        continue
                else:
                    c = self.untyped_cond(d - 1)
                    k2 = kind if kind == 'i' else r.choice(['i', 'f'])
                    n = UCall('select', [c, self.untyped(ctx, k2, d - 1), self.untyped(ctx, k2, d - 1)])
                    try:
                        ks = set(a.ev(self.envs[0]).kind for a in n.kids[1:])
                        if len(ks) > 1: continue
                    except (Skip, Reject):
                        continue
            if self.ok(n): return n
        return self.ulit(ctx, 'i')

    def big(self, n, span=False):
        try:
            for E in self.envs:
                for v in [n.ev(E)] + [k.ev(E) for k in n.kids]:
                    if isinstance(v, UV) and v.kind == 'i' and not (-(1 << 63) <= v.v < (1 << 63)): return True
        except (Skip, Reject):
            return True
        return False

    def untyped_cond(self, d):
        if self.r.random() < 0.4: return BoolLit(self.r.random() < 0.5)
        k = self.r.choice('if')
        return UCmp(self.r.choice(['<', '<=', '>', '>=', '==', '!=']), self.untyped(None, k, d), self.untyped(None, k, d))

    # ---- typed trees ---------------------------------------------------------------------
    def operand(self, t, d, ctx_ok=False, small=False):
        """A typed-t operand: a typed subtree, or an untyped one adapted to t."""
        if t != 'bool' and self.r.random() < 0.3:
            return Adapt(self.untyped(t, 'i' if is_int(t) else 'f', d), t)
        return self.typed(t, d, ctx_ok)

    def typed(self, t, d, ctx_ok=False):
        for attempt in range(6):
            n = self._typed(t, d, ctx_ok)
            if n is not None and self.ok(n): return n
        for attempt in range(20):
            n = self.typed_leaf(t)
            if self.ok(n): return n
        raise Skip('no leaf')

    def _typed(self, t, d, ctx_ok):
        r = self.r
        if d <= 0 or r.random() < 0.12: return self.typed_leaf(t)
        ch = []
        if t == 'bool':
            ch = ['cmp'] * 5 + ['logic'] * 2 + ['not', 'beq', 'select', 'fn', 'ucmp']
        else:
            ch = ['bin'] * 8 + ['neg', 'abs', 'minmax', 'minmax', 'clamp', 'select', 'cast', 'cast', 'cast', 'lane',
                                'lane', 'fn', 'bitcast']
            if is_int(t):
                ch += ['bnot']
                if WIDTH[t] >= 32: ch += ['cdiv', 'mul_hi']
                if t == 'u32': ch += ['clzpopc']
            if t in ('f32', 'f64'): ch += ['round', 'round', 'sqrt', 'fma', 'fma']
            if ctx_ok: ch += ['selu']
        if self.cmode:
            ch = [c for c in ch if c in ('bin', 'neg', 'abs', 'minmax', 'clamp', 'select', 'cast', 'bnot', 'cmp',
                                         'logic', 'not', 'beq', 'ucmp')]
        k = r.choice(ch)
        d1 = d - 1
        if k == 'bin':
            ops = ['+', '-', '*', '/'] + (['%', '&', '|', '^', '<<', '>>'] if is_int(t) else [])
            op = r.choice(ops)
            m = r.random()
            small = op in ('<<', '>>')
            # with a context of its own (ctx_ok) the operator passes it to both operands (grammar 2)
            if m < 0.55: a, b = self.typed(t, d1, ctx_ok and not small), self.typed(t, d1, True)
            elif m < 0.8: a, b = self.typed(t, d1), Adapt(self.untyped(t, 'i' if is_int(t) else 'f', d1), t)
            else: a, b = Adapt(self.untyped(t, 'i' if is_int(t) else 'f', d1), t), self.typed(t, d1)
            if small and r.random() < 0.6 and not isinstance(a, Adapt):
                b = Adapt(ilit(r.randint(0, 2 * WIDTH[t] + 2) if r.random() < 0.9 else r.choice([-1, 255, 100])), t)
            return Bin(op, a, b, t)
        # an untyped operand would make it untyped; a context passes through - and ~
        if k == 'neg': return Un('-', self.typed(t, d1, ctx_ok), t)
        if k == 'bnot': return Un('~', self.typed(t, d1, ctx_ok), t)
        if k == 'not': return Un('!', self.typed('bool', d1), 'bool')
        if k == 'abs':
            if t in ('f16', 'bf16'): return None   # LANGUAGE.md 7: abs is for integers, f32, f64
            return Call('abs', [self.typed(t, d1)], t)
        if k in ('minmax', 'clamp', 'select'):
            na = 3 if k == 'clamp' else 2
            # with a context, every argument may take it (select(c, 1, 2) nested: grammar 2)
            args = [self.typed(t, d1, ctx_ok)] + [self.operand(t, d1, ctx_ok) for _ in range(na - 1)]
            r.shuffle(args)
            if k == 'select': return Call('select', [self.typed('bool', d1)] + args, t)
            return Call(k if k == 'clamp' else r.choice(['min', 'max']), args, t)
        if k == 'cast':
            if r.random() < 0.15 and not self.cmode:
                return Cast(self.untyped(None, r.choice('if'), d1), t)
            s = r.choice(SCALARS)
            return Cast(self.typed(s, d1), t)
        if k == 'fn': return Call('pass_' + t, [self.operand(t, d1, True) if t != 'bool' else self.typed(t, d1)], t)
        if k == 'bitcast':
            ss = [s for s in NUMT if WIDTH[s] == WIDTH[t] and s != t]
            return Bitcast(self.typed(r.choice(ss), d1), t)
        if k == 'cdiv' or k == 'mul_hi':
            args = [self.typed(t, d1), self.operand(t, d1)]
            r.shuffle(args)
            return Call(k, args, t)
        if k == 'clzpopc':
            s = r.choice(['i32', 'u32', 'i64', 'u64'])
            return Call(r.choice(['clz', 'popc']), [self.typed(s, d1)], 'u32')
        if k == 'round': return Call(r.choice(['floor', 'ceil', 'trunc', 'round']), [self.typed(t, d1)], t)
        if k == 'sqrt': return Call('sqrt', [self.typed(t, d1)], t)
        if k == 'fma':
            args = [self.typed(t, d1), self.operand(t, d1), self.operand(t, d1)]
            r.shuffle(args)
            return Call('fma', args, t)
        if k == 'selu':
            kind = 'i' if is_int(t) else r.choice('if')
            c = self.typed('bool', d1)
            if not has_load(c): c = Logic('&&', c, Load('bool', True))   # a run-time condition (grammar 2)
            return SelU(c, self.untyped(t, kind, d1), self.untyped(t, kind, d1), t)
        if k == 'lane': return self.lane(t, d1)
        if k == 'cmp':
            s = r.choice(NUMT + ['bool'])
            op = r.choice(['==', '!='] if s == 'bool' else ['<', '<=', '>', '>=', '==', '!='])
            m = r.random()
            if s == 'bool' or m < 0.6: a, b = self.typed(s, d1), self.typed(s, d1)
            elif m < 0.8: a, b = self.typed(s, d1), Adapt(self.untyped(s, 'i' if is_int(s) else 'f', d1), s)
            else: a, b = Adapt(self.untyped(s, 'i' if is_int(s) else 'f', d1), s), self.typed(s, d1)
            return Cmp(op, a, b)
        if k == 'ucmp': return self.untyped_cond(d1)
        if k == 'logic': return Logic(r.choice(['&&', '||']), self.typed('bool', d1), self.typed('bool', d1))
        if k == 'beq': return Cmp(r.choice(['==', '!=']), self.typed('bool', d1), self.typed('bool', d1))
        raise ValueError(k)

    # ---- vectors ----------------------------------------------------------------------------
    def lane(self, s, d):
        r = self.r
        n = r.choice(VEC_OK[s])
        v = self.vec(s, n, d)
        ts = self.loop_values() if self.loop and self.loop[0] in ('U', 'T') else None
        if ts and all(0 <= x < n for x in ts) and r.random() < 0.5:
            return Lane(v, 't', 0)
        return Lane(v, r.randrange(n), r.randint(0, 1))

    def vec(self, s, n, d):
        r = self.r
        x = r.random()
        if d <= 0 or x < 0.4:
            if n <= 4 or r.random() < 0.5:
                dd = max(0, min(d, 2 if n <= 4 else 0))
                if r.random() < 0.25: return VCtor(s, n, [self.operand(s, dd)])
                return VCtor(s, n, [self.operand(s, dd) for _ in range(n)])
            return VCtor(s, n, [self.operand(s, 0)])
        if x < 0.7:
            op = r.choice(['+', '-', '*'] + (['/'] if is_float(s) else []))
            a = self.vec(s, n, d - 1)
            if r.random() < 0.3:
                b = Adapt(self.untyped(s, 'i' if is_int(s) else 'f', 0), s)
                return VBin(op, a, b, s, n) if r.random() < 0.5 else VBin(op, b, a, s, n)
            return VBin(op, a, self.vec(s, n, d - 1), s, n)
        if x < 0.85 and is_float(s):
            return VCall(r.choice(['min', 'max']), [self.vec(s, n, d - 1), self.vec(s, n, d - 1)], s, n)
        ss = [q for q in NUMT if n in VEC_OK[q]]
        q = r.choice(ss)
        return VCast(self.vec(q, n, d - 1), s, n)

    def loop_values(self):
        return [E['t'] for E in self.envs]


# ---- statements --------------------------------------------------------------------------
class Stmt:
    """One test: a loop (or none), a form, a tree; stores one value per iteration."""

    def __init__(self, g, idx):
        self.idx = idx
        self.rejects = False


def make_loop(g, st):
    r = g.r
    if r.random() < 0.65: return None
    if r.random() < 0.7:
        a = r.randint(-3, 3) if r.random() < 0.5 else 0
        if r.random() < 0.12:   # bounds near the edges of the integer types
            a = r.choice([126, 254, 32766, 65534, 2147483645, 4294967293, -2147483650, 9223372036854775799,
                          -129, -32770, -9223372036854775808])   # kforge wants untyped bounds in i64 (see README)
        n = r.randint(1, 4)
        s = 2 if r.random() < 0.2 else 1
        return ('U', a, a + n * s, s, [a + i * s for i in range(n)])
    t = r.choice(INTS)
    ca = g.new_const(t, small=True)
    va = g.cvals[ca]
    if not fits(t, va + 5) or (not signed(t) and va < 0):
        return None
    n = r.randint(1, 4)
    if r.random() < 0.5:
        return ('T', t, ca, '%s + %d' % (ca, n), 1, [va + i for i in range(n)])
    if r.random() < 0.3:
        return ('T', t, ca, '%s + %d step 2' % (ca, n), 2, [va + i for i in range(0, n, 2)])
    cb = 'C%d_%d' % (g.kid, len(g.corder))
    g.consts[cb] = {'t': t, 'init': None, 'lit': va + n, 'ov': None}
    g.corder.append(cb)
    g.cvals[cb] = va + n
    return ('T', t, ca, cb, 1, [va + i for i in range(n)])


def gen_stmt(g, idx):
    r = g.r
    st = Stmt(g, idx)
    for attempt in range(30):
        loop = make_loop(g, st)
        g.loop = loop
        if loop is None: g.envs = [{'t': None, 'tty': None, 'C': g.cvals}]
        else:
            g.envs = [{'t': v, 'tty': 'U' if loop[0] == 'U' else loop[1], 'C': g.cvals} for v in loop[-1]]
        g.reuse = {}
        t = r.choice(SCALARS)
        d = r.randint(2, 5)
        form = r.choice(['store', 'store', 'let', 'letd', 'comp'])
        if t == 'bool' and form == 'comp': form = 'store'
        g.allow_reject = True
        try:
            if form == 'letd' and r.random() < 0.5:
                tree = g.untyped(None, r.choice('if'), d)
                rt = default_type(tree.ev(g.envs[0]))
                tree = Adapt(tree, rt)
            elif form in ('store', 'let') and t != 'bool' and r.random() < 0.2:
                tree = Adapt(g.untyped(t, 'i' if is_int(t) else 'f', d), t)
                rt = t
            else:
                tree = g.typed(t, d, ctx_ok=form != 'letd')
                rt = t
            op = None
            if form == 'comp':
                ops = ['+', '-', '*', '/'] + (['%', '&', '|', '^', '<<', '>>'] if is_int(t) else [])
                op = r.choice(ops)
                st.init = g.rval(t)
        except Skip:
            continue
        except Reject:
            continue
        finally:
            g.allow_reject = False
        st.loop, st.t, st.form, st.tree, st.op = loop, rt, form, tree, op
        try:
            st.expect = [stmt_value(st, E) for E in g.envs]
        except Skip:
            continue
        except Reject as e:
            st.rejects = str(e)
            st.expect = None
        return st
    return None


def stmt_value(st, E):
    v = st.tree.ev(E)
    if st.form == 'comp':
        v = t_binop(st.t, st.op, st.init, v)
    return v


def stmt_src(st, X, base):
    X.pre = []
    X.nlet = 0
    X.memo = {}
    X.prefix = 'L%d_' % st.idx
    X.tname = 't%d' % st.idx
    e = st.tree.src(X)
    sto = 'u32' if st.t == 'bool' else st.t
    lp = st.loop
    if lp is None: idx = str(base)
    elif lp[0] == 'U':
        a = lp[1]
        off = '%s - %s' % (X.tname, int_text(a, 0)) if a >= 0 else '%s + %d' % (X.tname, -a)
        if lp[3] != 1: off = '(%s) / %d' % (off, lp[3])
        idx = '((%s) as u32) + %d' % (off, base)
    else:
        idx = '((%s - %s) as u32) + %d' % (X.tname, lp[2], base)
        if lp[4] != 1: idx = '(((%s - %s) / %d) as u32) + %d' % (X.tname, lp[2], lp[4], base)
    R = 'R%d' % st.idx
    if st.form == 'store':
        body = 'o_%s[%s] = %s;' % (sto, idx, '(%s) as u32' % e if st.t == 'bool' else e)
    elif st.form in ('let', 'letd'):
        body = 'let %s%s = %s; o_%s[%s] = %s;' % (R, '' if st.form == 'letd' else ': ' + st.t, e, sto, idx,
                                                   R + ' as u32' if st.t == 'bool' else R)
    else:
        body = 'var %s: %s = %s; %s %s= %s; o_%s[%s] = %s;' % (R, st.t, typed_lit_text(st.t, st.init), R, st.op, e,
                                                                sto, idx, R)
    line = ' '.join(X.pre + [body])
    if lp is not None:
        if lp[0] == 'U':
            rng = '%s .. %s' % (int_text(lp[1], 0), int_text(lp[2], 0)) + (' step %d' % lp[3] if lp[3] != 1 else '')
        else:
            rng = '%s .. %s' % (lp[2], lp[3])
        line = '@unroll for %s in %s { %s }' % (X.tname, rng, line)
    return '    ' + line


def stmt_consts(g, st):
    acc = st.tree.consts(set())
    if st.loop and st.loop[0] == 'T':
        acc.add(st.loop[2])
        acc.add(st.loop[3].split(' ')[0])
    todo = list(acc)
    while todo:
        c = g.consts[todo.pop()]
        if c['init'] is not None:
            for x in c['init'].consts(set()):
                if x not in acc:
                    acc.add(x)
                    todo.append(x)
    return acc


def dval(t, v):
    """-D value text."""
    if t == 'bool': return 'true' if v else 'false'
    if is_int(t): return str(v)
    if math.isnan(v): return 'nan'
    if math.isinf(v): return 'inf' if v > 0 else '-inf'
    return fmt_float(v)


def emit(g, stmts, full_parens, only_consts=None):
    """Kernel source, line map (line -> stmt index or const name), inputs, outs, defines."""
    X = Xc(full_parens)
    lines, lmap = [], {}
    use = only_consts if only_consts is not None else set(g.corder)
    defines = []
    for nm in g.corder:
        if nm not in use: continue
        c = g.consts[nm]
        init = c['init'].src(X) if c['init'] is not None else typed_lit_text(c['t'], c['lit'])
        lines.append('const %s: %s = %s;' % (nm, c['t'], init))
        lmap[len(lines)] = ('const', nm)
        if c['ov'] is not None: defines += ['-D', '%s=%s' % (nm, dval(c['t'], c['ov']))]
    fns = sorted(set(x for st in stmts for x in fn_uses(st.tree)) | set(
        x for nm in use for x in (fn_uses(g.consts[nm]['init']) if g.consts[nm]['init'] is not None else [])))
    for f in fns:
        t = f[5:]
        lines.append('fn %s(p: %s) -> %s { return p; }' % (f, t, t))
    lines.append('@schedule(block = 1, grid = 1)')
    hdr = len(lines)
    lines.append(None)
    outs = {}
    slots = {}
    X.inputs = {}
    for st in stmts:
        sto = 'u32' if st.t == 'bool' else st.t
        base = outs.get(sto, 0)
        n = len(st.loop[-1]) if st.loop else 1
        outs[sto] = base + n
        slots[st.idx] = (sto, base, n)
        lines.append(stmt_src(st, X, base))
        lmap[len(lines)] = ('stmt', st.idx)
    lines.append('}')
    params = ['x_%s: &[%s]' % (t, t) for t in sorted(X.inputs)] + ['o_%s: &mut [%s]' % (t, t) for t in sorted(outs)]
    lines[hdr] = 'kernel k%d(%s) {' % (g.kid, ', '.join(params))
    return '\n'.join(lines) + '\n', lmap, X.inputs, outs, slots, defines


def Xc(full):
    return X(full)


def has_load(n):
    return isinstance(n, Load) or any(has_load(k) for k in n.kids)


def fn_uses(n):
    out = []
    if isinstance(n, Call) and n.fn.startswith('pass_'): out.append(n.fn)
    for k in n.kids: out += fn_uses(k)
    return out


# ---- running ---------------------------------------------------------------------------------
BACKEND = 'cpu'


def run_kernel(kforge, d, name, src, inputs, outs, defines, opt):
    f = os.path.join(d, name + '.kf')
    open(f, 'w').write(src)
    cmd = [kforge, 'run', f, '--backend', BACKEND, opt] + defines
    for t, vals in sorted(inputs.items()):
        p = os.path.join(d, '%s.x_%s.npy' % (name, t))
        npy_write(p, t, vals)
        cmd.append('x_%s=@%s' % (t, p))
    paths = {}
    for t, n in sorted(outs.items()):
        p = os.path.join(d, '%s.o_%s%s.npy' % (name, t, opt))
        if os.path.exists(p): os.remove(p)
        cmd += ['o_%s=zeros(%d)' % (t, n), '-o', 'o_%s=%s' % (t, p)]
        paths[t] = p
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return None, r, cmd
    return {t: npy_bits(p, WIDTH[t] // 8) for t, p in paths.items()}, r, cmd


def exp_bits(t, v):
    if t == 'bool': return int(bool(v))
    if is_float(t) and math.isnan(v): return 'nan'
    return bits(t, v)


def same(t, got, want):
    if want == 'nan':
        s = t
        return math.isnan(from_bits(s, got))
    return got == want


def fmtv(t, b):
    if b == 'nan': return 'nan'
    if t == 'bool': t = 'u32'
    if is_float(t): return '%r (0x%x)' % (from_bits(t, b), b)
    return '%d (0x%x)' % (from_bits(t, b), b)


def compare(g, stmts, slots, res):
    bad = {}
    for st in stmts:
        sto, base, n = slots[st.idx]
        got = res[sto][base:base + n]
        for i, (gv, ev) in enumerate(zip(got, st.expect)):
            w = exp_bits(st.t, ev)
            if not same(sto, gv, w):
                bad[st.idx] = (i, fmtv(sto, gv), fmtv(sto, w))
                break
    return bad


def compile_errors(stderr):
    import re
    return sorted(set(int(m.group(1)) for m in re.finditer(r'^[^\s:]*\.kf:(\d+):\d+: error', stderr, re.M)))


def kernel_for(g, stmts, full):
    use = set()
    for st in stmts: use |= stmt_consts(g, st)
    return emit(g, stmts, full, use)


# the one refusal of a valid program that grammar/README.md section 4 documents
LIMIT = 'no 64-bit type holds them all'


def run_batch(args, seed, kid, d, log):
    rng = random.Random(seed * 100003 + kid)
    g = Gen(rng, kid)
    stmts, rejects = [], []
    for i in range(args.per_kernel):
        st = gen_stmt(g, i)
        if st is None: continue
        (rejects if st.rejects else stmts).append(st)
    full = rng.random() < 0.6
    stats = {'stmts': len(stmts), 'iters': sum(len(s.loop[-1]) if s.loop else 1 for s in stmts),
             'rejects': len(rejects), 'false_reject': 0, 'accepted_bad': 0, 'mismatch': 0, 'o0o1': 0}
    found = []
    # must-reject programs: each alone
    for st in rejects:
        src, lmap, inputs, outs, slots, defines = kernel_for(g, [st], full)
        f = os.path.join(d, 'rej_%d_%d.kf' % (kid, st.idx))
        open(f, 'w').write(src)
        r = subprocess.run([args.kforge, 'check'] + defines + [f], capture_output=True, text=True)
        if r.returncode == 0:
            stats['accepted_bad'] += 1
            found.append(('ACCEPTED', st.rejects, src, defines, None))
            log('ACCEPTED-BUT-MUST-REJECT (%s) seed=%d kernel=%d stmt=%d:\n%s  defines: %s' % (
                st.rejects, seed, kid, st.idx, src, ' '.join(defines)))
    live = list(stmts)
    results = {}
    for opt in ('-O1', '-O0'):
        for attempt in range(40):
            src, lmap, inputs, outs, slots, defines = kernel_for(g, live, full)
            res, r, cmd = run_kernel(args.kforge, d, 'k%d' % kid, src, inputs, outs, defines, opt)
            if res is not None: break
            errs = compile_errors(r.stderr)
            if r.returncode != 1 or not errs:
                log('RUN-ERROR seed=%d kernel=%d %s rc=%d: %s' % (seed, kid, opt, r.returncode, r.stderr[-2000:]))
                stats['run_error'] = stats.get('run_error', 0) + 1
                res = None
                # find the culprit statement by bisection is costly; try each statement alone
                culprits = []
                for st in live:
                    s2, l2, i2, o2, sl2, d2 = kernel_for(g, [st], full)
                    rr, r2, c2 = run_kernel(args.kforge, d, 'one', s2, i2, o2, d2, opt)
                    if rr is None and r2.returncode != 1:
                        culprits.append(st)
                        found.append(('RUNERROR', r2.stderr.strip()[-400:], s2, d2, opt))
                        log('  culprit (rc=%d): %s\n%s' % (r2.returncode, r2.stderr.strip()[-600:], s2))
                if not culprits: break
                live = [s for s in live if s not in culprits]
                continue
            drop = set()
            limits = 0
            for ln in errs:
                what = lmap.get(ln)
                msg = [l for l in r.stderr.split('\n') if ':%d:' % ln in l][:1]
                if what is None:
                    log('UNMAPPED error line %d: %s' % (ln, msg))
                    continue
                if what[0] == 'stmt' and msg and LIMIT in msg[0]:
                    drop.add(what[1])
                    limits += 1
                elif what[0] == 'stmt':
                    drop.add(what[1])
                    st = [s for s in live if s.idx == what[1]][0]
                    s1, *_ = kernel_for(g, [st], full)
                    log('FALSE-REJECT seed=%d kernel=%d stmt=%d: %s\n%s' % (seed, kid, st.idx, msg, s1))
                    found.append(('FALSEREJECT', msg, s1, defines, opt))
                else:
                    for st in live:
                        if what[1] in stmt_consts(g, st): drop.add(st.idx)
                    log('FALSE-REJECT const %s seed=%d kernel=%d: %s\n%s' % (what[1], seed, kid, msg, src.split('\n')[ln - 1]))
            stats['false_reject'] += len(drop) - limits
            stats['limit'] = stats.get('limit', 0) + limits
            live = [s for s in live if s.idx not in drop]
            if not drop: break
        if res is None: continue
        results[opt] = (res, slots)
        bad = compare(g, live, slots, res)
        for idx, (i, gv, wv) in bad.items():
            st = [s for s in live if s.idx == idx][0]
            stats['mismatch'] += 1
            s1, *_, d1 = kernel_for(g, [st], full)
            log('MISMATCH %s seed=%d kernel=%d stmt=%d iter=%d: got %s want %s\n%s  defines: %s' % (
                opt, seed, kid, idx, i, gv, wv, s1, ' '.join(d1)))
            found.append(('MISMATCH', (opt, gv, wv), s1, d1, (g, st, opt, full)))
    if '-O1' in results and '-O0' in results:
        (r1, s1), (r0, s0) = results['-O1'], results['-O0']
        for st in live:
            if st.idx not in s1 or st.idx not in s0: continue
            a, b = s1[st.idx], s0[st.idx]
            x = r1[a[0]][a[1]:a[1] + a[2]]
            y = r0[b[0]][b[1]:b[1] + b[2]]
            if any(p != q and not (is_float(a[0]) and math.isnan(from_bits(a[0], p)) and math.isnan(from_bits(a[0], q)))
                   for p, q in zip(x, y)):
                stats['o0o1'] += 1
    return stats, found


# ---- shrinking -------------------------------------------------------------------------------
def paths(n, p=()):
    yield p, n
    for i, k in enumerate(n.kids):
        yield from paths(k, p + (i,))


def replace(n, p, new):
    if not p: return new
    kids = list(n.kids)
    kids[p[0]] = replace(kids[p[0]], p[1:], new)
    return n.rebuild(kids)


def size(n):
    return 1 + sum(size(k) for k in n.kids)


def shrink(args, g, st, opt, full, d):
    """Greedy: replace subtrees by loads/literals/children while kforge still disagrees with the model."""
    def still_bad(g2, st2):
        try:
            envs = envs_of(g2, st2)
            st2.expect = [stmt_value(st2, E) for E in envs]
        except (Skip, Reject):
            return False
        src, lmap, inputs, outs, slots, defines = kernel_for(g2, [st2], full)
        res, r, cmd = run_kernel(args.kforge, d, 'shr', src, inputs, outs, defines, opt)
        if res is None: return False
        return bool(compare(g2, [st2], slots, res))

    cur = copy.copy(st)
    g2 = g
    changed = True
    tries = 0
    while changed and tries < 400:
        changed = False
        # drop -D overrides / the loop
        loopc = set([cur.loop[2], cur.loop[3].split(' ')[0]]) if cur.loop and cur.loop[0] == 'T' else set()
        for nm in list(stmt_consts(g2, cur)):
            if g2.consts[nm]['ov'] is not None and nm not in loopc:
                g3 = copy.copy(g2)
                g3.consts = dict(g2.consts)
                g3.cvals = dict(g2.cvals)
                c = dict(g3.consts[nm])
                if c['init'] is None: c['lit'] = c['ov']
                else: continue
                c['ov'] = None
                g3.consts[nm] = c
                tries += 1
                if still_bad(g3, cur): g2 = g3; changed = True
        if cur.loop is not None and not cur.tree.uses_t():
            c2 = copy.copy(cur)
            c2.loop = None
            tries += 1
            if still_bad(g2, c2): cur = c2; changed = True
        if cur.form != 'store':
            c2 = copy.copy(cur)
            c2.form = 'store'
            if isinstance(c2.tree, Adapt) and c2.tree.ty != cur.t: pass
            tries += 1
            if cur.form != 'comp' and still_bad(g2, c2): cur = c2; changed = True
        for p, n in list(paths(cur.tree)):
            cands = []
            envs = envs_of(g2, cur)
            try:
                vals = [n.ev(E) for E in envs]
            except (Skip, Reject):
                continue
            if n.ty in SCALARS and not isinstance(n, (Load, Adapt)) and p:
                if all(repr(v) == repr(vals[0]) for v in vals) and not isinstance(vals[0], UV):
                    cands.append(Load(n.ty, vals[0]))
            if n.ty == 'U' and not isinstance(n, Lit):
                v = vals[0]
                if all(repr(x) == repr(v) for x in vals):
                    if v.kind == 'i' and abs(v.v) < 1 << 64: cands.append(ilit(v.v))
                    elif v.kind == 'f' and (v.x is None or v.x == Fr(v.d)): cands.append(flit_d(v.d))
            for k in n.kids:
                if k.ty == n.ty and not (isinstance(n, Adapt)): cands.append(k)
                if n.ty == 'U' and k.ty == 'U': cands.append(k)
                for kk in k.kids:
                    if kk.ty == n.ty and n.ty != 'U': cands.append(kk)
            for c in cands:
                if size(c) >= size(n) and not (isinstance(c, (Load, Lit)) and not isinstance(n, (Load, Lit))): continue
                t2 = replace(cur.tree, p, c)
                c2 = copy.copy(cur)
                c2.tree = t2
                tries += 1
                if still_bad(g2, c2):
                    cur = c2
                    changed = True
                    break
            if changed: break
    src, lmap, inputs, outs, slots, defines = kernel_for(g2, [cur], full)
    envs = envs_of(g2, cur)
    cur.expect = [stmt_value(cur, E) for E in envs]
    res, r, cmd = run_kernel(args.kforge, d, 'min', src, inputs, outs, defines, opt)
    return g2, cur, src, inputs, outs, defines, res, slots


def envs_of(g, st):
    if st.loop is None: return [{'t': None, 'tty': None, 'C': g.cvals}]
    return [{'t': v, 'tty': 'U' if st.loop[0] == 'U' else st.loop[1], 'C': recompute(g)} for v in st.loop[-1]]


def recompute(g):
    vals = {}
    for nm in g.corder:
        c = g.consts[nm]
        if c['ov'] is not None: vals[nm] = c['ov']
        elif c['init'] is None: vals[nm] = c['lit']
        else:
            vals[nm] = c['init'].ev({'t': None, 'C': vals})
    g.cvals.clear()
    g.cvals.update(vals)
    return g.cvals


def main():
    global BACKEND
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=500)
    ap.add_argument('--per-kernel', type=int, default=80)
    ap.add_argument('--kforge', default=os.path.join(ROOT, '..', 'build', 'kforge'))
    ap.add_argument('--backend', default='cpu', choices=['cpu', 'cuda', 'ptx'])
    ap.add_argument('--out', default=None, help='where shrunk mismatches and the log go (default: printed only)')
    ap.add_argument('--no-shrink', action='store_true')
    ap.add_argument('--quiet', action='store_true', help='print only the problems and the totals')
    args = ap.parse_args()
    args.kforge = os.path.abspath(args.kforge)
    BACKEND = args.backend
    d = tempfile.mkdtemp(prefix='kftree')
    logf = None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        logf = open(os.path.join(args.out, 'log_seed%d.txt' % args.seed), 'w')

    def log(s):
        if logf:
            logf.write(s + '\n')
            logf.flush()
        if not args.quiet or not s.startswith('seed '): print(s)
    tot = {}
    nk = (args.count + args.per_kernel - 1) // args.per_kernel
    try:
        for kid in range(nk):
            stats, found = run_batch(args, args.seed, kid, d, log)
            for k, v in stats.items(): tot[k] = tot.get(k, 0) + v
            for kind, info, src, defines, extra in found:
                if kind == 'MISMATCH' and not args.no_shrink:
                    shrink_and_save(args, kid, extra, d, log)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    bad = sum(tot.get(k, 0) for k in ('false_reject', 'accepted_bad', 'mismatch', 'o0o1', 'run_error'))
    line = 'tree: seed %d, %s: %s' % (args.seed, args.backend, json.dumps(tot))
    if logf: logf.write(line + '\n')
    print(line)
    return 1 if bad else 0


def shrink_and_save(args, kid, extra, d, log):
    g, st, opt, full = extra
    try:
        g2, cur, s2, inputs, outs, d2, res, slots = shrink(args, g, st, opt, full, d)
    except Exception as e:   # the shrinker is best effort: the mismatch itself is already logged
        log('shrink failed: %r' % e)
        return
    base = os.path.join(args.out or d, 's%d_k%d_%d' % (args.seed, kid, st.idx))
    ins = []
    if args.out:
        open(base + '.kf', 'w').write(s2)
        for t, vals in sorted(inputs.items()):
            npy_write(base + '.x_%s.npy' % t, t, vals)
            ins.append('x_%s=@%s.x_%s.npy' % (t, base, t))
    outa = ' '.join('o_%s=zeros(%d) -o o_%s=out_%s.npy' % (t, n, t, t) for t, n in sorted(outs.items()))
    cmdline = 'kforge run %s.kf --backend %s %s %s %s %s' % (base, BACKEND, opt, ' '.join(d2), ' '.join(ins), outa)
    bad = compare(g2, [cur], slots, res) if res else {}
    msg = 'SHRUNK %s: %s\n%s  cmd: %s\n  got/want: %s\n' % (opt, base, s2, cmdline, bad)
    if args.out: open(base + '.txt', 'w').write(msg)
    log(msg)


if __name__ == '__main__':
    sys.exit(main())
