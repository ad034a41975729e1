# Independent reference model of the kforge contract's scalar semantics
# (LANGUAGE.md + grammar/README.md), written from the documents, not from
# the compiler's source. Values: ints as Python ints (in range), floats as
# Python floats (every f16/bf16/f32 value is a double), bools as bool.
import math, struct
from fractions import Fraction as Fr

INTS = ['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64']
FLOATS = ['f16', 'bf16', 'f32', 'f64']
WIDTH = {'i8': 8, 'u8': 8, 'i16': 16, 'u16': 16, 'i32': 32, 'u32': 32, 'i64': 64, 'u64': 64,
         'f16': 16, 'bf16': 16, 'f32': 32, 'f64': 64, 'bool': 8}
# (precision incl. hidden bit, emin, emax)
FMT = {'f16': (11, -14, 15), 'bf16': (8, -126, 127), 'f32': (24, -126, 127), 'f64': (53, -1022, 1023)}
NPY = {'i8': '<i1', 'u8': '<u1', 'i16': '<i2', 'u16': '<u2', 'i32': '<i4', 'u32': '<u4', 'i64': '<i8',
       'u64': '<u8', 'f16': '<f2', 'bf16': '<u2', 'f32': '<f4', 'f64': '<f8'}


def is_int(t): return t in INTS
def is_float(t): return t in FLOATS
def signed(t): return t[0] == 'i'


def irange(t):
    w = WIDTH[t]
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed(t) else (0, (1 << w) - 1)


def wrap(t, v):
    w = WIDTH[t]
    v &= (1 << w) - 1
    if signed(t) and v >> (w - 1): v -= 1 << w
    return v


def isneg(x):
    return math.copysign(1.0, x) < 0


def round_frac(t, q, neg_zero=False):
    """Exact rational q rounded to float type t, RNE, overflow -> inf."""
    p, emin, emax = FMT[t]
    if q == 0: return -0.0 if neg_zero else 0.0
    s = -1 if q < 0 else 1
    a = abs(q)
    e = math.floor(math.log2(a.numerator) - math.log2(a.denominator))
    # fix e so that 2^e <= a < 2^(e+1)
    while Fr(2) ** e > a: e -= 1
    while Fr(2) ** (e + 1) <= a: e += 1
    e = max(e, emin)
    ulp = Fr(2) ** (e - p + 1)
    n = a / ulp
    f = math.floor(n)
    r = n - f
    if r > Fr(1, 2) or (r == Fr(1, 2) and f % 2 == 1): f += 1
    v = f * ulp
    if v >= Fr(2) ** (emax + 1): return s * math.inf
    return s * float(v) if v != 0 else (-0.0 if s < 0 else 0.0)


def rnd(t, x):
    """double x rounded to float type t (one rounding)."""
    if t == 'f64' or math.isnan(x) or math.isinf(x): return x
    if x == 0: return x
    return round_frac(t, Fr(x))


def bits(t, v):
    """Bit pattern (int) of value v in type t."""
    if t == 'bool': return int(bool(v))
    if is_int(t): return v & ((1 << WIDTH[t]) - 1)
    if t == 'f64': return struct.unpack('<Q', struct.pack('<d', v))[0]
    if t == 'f32': return struct.unpack('<I', struct.pack('<f', v))[0]
    if math.isnan(v): return 0x7e00 if t == 'f16' else 0x7fc0
    if t == 'f16': return struct.unpack('<H', struct.pack('<e', v))[0]
    # bf16: v is exactly representable
    b = struct.unpack('<I', struct.pack('<f', v))[0]
    assert b & 0xffff == 0, (v, hex(b))
    return b >> 16


def from_bits(t, b):
    if is_int(t): return wrap(t, b)
    if t == 'f64': return struct.unpack('<d', struct.pack('<Q', b))[0]
    if t == 'f32': return struct.unpack('<f', struct.pack('<I', b))[0]
    if t == 'f16': return struct.unpack('<e', struct.pack('<H', b))[0]
    return struct.unpack('<f', struct.pack('<I', b << 16))[0]


# ---- conversions --------------------------------------------------------------
def convert(frm, to, v):
    if frm == to: return v
    if frm == 'bool': v = int(v); frm = 'i32'
    if is_int(frm):
        if is_int(to): return wrap(to, v)
        return round_frac(to, Fr(v))
    # from float
    if is_int(to):
        if math.isnan(v): return 0
        lo, hi = irange(to)
        if math.isinf(v): return hi if v > 0 else lo
        tv = math.trunc(v)
        return max(lo, min(hi, tv))
    if math.isnan(v) or math.isinf(v) or v == 0: return v
    return round_frac(to, Fr(v))


# ---- integer ops ---------------------------------------------------------------
def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_binop(t, op, a, b):
    w = WIDTH[t]
    if op == '+': return wrap(t, a + b)
    if op == '-': return wrap(t, a - b)
    if op == '*': return wrap(t, a * b)
    if op == '/':
        if b == 0: return None
        return wrap(t, tdiv(a, b))
    if op == '%':
        if b == 0: return None
        return wrap(t, a - tdiv(a, b) * b)
    if op == '&': return wrap(t, a & b)
    if op == '|': return wrap(t, a | b)
    if op == '^': return wrap(t, a ^ b)
    amt = b & ((1 << w) - 1)   # amount taken as unsigned
    if op == '<<': return 0 if amt >= w else wrap(t, a << amt)
    if op == '>>':
        if amt >= w: return -1 if a < 0 else 0
        return a >> amt   # python >> on ints is arithmetic for signed (a<0 only if signed)
    raise ValueError(op)


def cmp(op, a, b):
    if isinstance(a, float) and (math.isnan(a) or math.isnan(b)): return op == '!='
    return {'==': a == b, '!=': a != b, '<': a < b, '<=': a <= b, '>': a > b, '>=': a >= b}[op]


# ---- float ops -----------------------------------------------------------------
def float_binop(t, op, a, b):
    # IEEE in double then one rounding: exact for f16/bf16/f32 (53 >= 2p+2)
    try:
        if op == '+': r = a + b
        elif op == '-': r = a - b
        elif op == '*': r = a * b
        elif op == '/':
            if b == 0:
                if a == 0 or math.isnan(a): r = math.nan
                else: r = math.copysign(math.inf, a) * math.copysign(1.0, b)
            else: r = a / b
    except OverflowError:
        r = math.copysign(math.inf, a) * (math.copysign(1.0, b) if op in '*/' else 1.0)
    return rnd(t, r)


def fmin(a, b):
    if math.isnan(a): return b
    if math.isnan(b): return a
    if a == b: return a if isneg(a) else b
    return a if a < b else b


def fmax(a, b):
    if math.isnan(a): return b
    if math.isnan(b): return a
    if a == b: return b if isneg(a) else a
    return a if a > b else b


def fma_exact(t, a, b, c):
    if any(math.isnan(v) or math.isinf(v) for v in (a, b, c)):
        if any(math.isnan(v) for v in (a, b, c)): return math.nan
        p = a * b if not ((a == 0 and math.isinf(b)) or (b == 0 and math.isinf(a))) else math.nan
        return p + c
    q = Fr(a) * Fr(b) + Fr(c)
    if q == 0:
        # sign of an exact zero sum: -0 only if both addends are -0 (product sign)
        pneg = (isneg(a) != isneg(b))
        return -0.0 if (pneg and isneg(c)) else 0.0
    return round_frac(t, q)


def fround(x):   # half away from zero, exact
    if math.isnan(x) or math.isinf(x): return x
    a = Fr(abs(x))
    r = float(math.floor(a + Fr(1, 2)))
    return -r if isneg(x) else r


def ffloor(x):
    if math.isnan(x) or math.isinf(x) or x == 0: return x
    r = float(math.floor(x))
    return math.copysign(r, x) if r == 0 else r


def fceil(x):
    if math.isnan(x) or math.isinf(x) or x == 0: return x
    r = float(math.ceil(x))
    return math.copysign(r, x) if r == 0 else r


def ftrunc(x):
    if math.isnan(x) or math.isinf(x) or x == 0: return x
    r = float(math.trunc(x))
    return math.copysign(r, x) if r == 0 else r


def fsqrt(t, x):
    if math.isnan(x): return x
    if x == 0: return x
    if x < 0: return math.nan
    if math.isinf(x): return x
    # exact: sqrt correctly rounded to double, then to t (53 >= 2p+2 for f32)
    return rnd(t, math.sqrt(x))


def cdiv(t, a, b):
    if b == 0: return None
    return wrap(t, math.ceil(Fr(a, b)))


def mul_hi(t, a, b):
    return wrap(t, (a * b) >> WIDTH[t])


def clz(t, a):
    w = WIDTH[t]
    u = a & ((1 << w) - 1)
    return w - u.bit_length()


def popc(t, a):
    return bin(a & ((1 << WIDTH[t]) - 1)).count('1')


def bfe(t, x, pos, ln):
    w = WIDTH[t]
    u = x & ((1 << w) - 1)
    pos &= 0xff; ln &= 0xff
    msb = w - 1
    sbit = 0
    if signed(t) and ln:
        sbit = (u >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(w):
        bit = (u >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return wrap(t, d)


def bfi(t, f, x, pos, ln):
    w = WIDTH[t]
    u = x & ((1 << w) - 1)
    for i in range(ln):
        if pos + i > w - 1: break
        m = 1 << (pos + i)
        u = (u | m) if (f >> i) & 1 else (u & ~m)
    return wrap(t, u)


def prmt(a, b, sel):
    src = (b << 32) | a
    d = 0
    for i in range(4):
        c = (sel >> (4 * i)) & 0xf
        byte = (src >> (8 * (c & 7))) & 0xff
        if c & 8: byte = 0xff if byte & 0x80 else 0
        d |= byte << (8 * i)
    return d


def dot4(a, asg, b, bsg, c):
    s = c
    for i in range(4):
        x = (a >> (8 * i)) & 0xff
        y = (b >> (8 * i)) & 0xff
        if asg and x >= 128: x -= 256
        if bsg and y >= 128: y -= 256
        s += x * y
    return wrap('i32', s)


# ---- minimal .npy reading/writing (no numpy needed on the GPU machine) ----------
def npy_read_raw(path):
    """(descr, raw bytes) of a 1-D or n-D little-endian .npy file."""
    import ast
    b = open(path, 'rb').read()
    assert b[:6] == b'\x93NUMPY', path
    major = b[6]
    if major == 1:
        hl = struct.unpack('<H', b[8:10])[0]; off = 10
    else:
        hl = struct.unpack('<I', b[8:12])[0]; off = 12
    hdr = ast.literal_eval(b[off:off + hl].decode('latin1'))
    return hdr['descr'], b[off + hl:]


def npy_bits(path, nbytes):
    """lanes of a .npy as unsigned ints of nbytes each."""
    _, data = npy_read_raw(path)
    fmt = {1: 'B', 2: 'H', 4: 'I', 8: 'Q'}[nbytes]
    n = len(data) // nbytes
    return list(struct.unpack('<%d%s' % (n, fmt), data[:n * nbytes]))


def npy_write_bits(path, descr, nbytes, vals):
    fmt = {1: 'B', 2: 'H', 4: 'I', 8: 'Q'}[nbytes]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(vals))
    hdr += ' ' * ((64 - (10 + len(hdr) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(vals), fmt), *vals))


def npy_write(path, t, vals):
    """values of scalar type t (bf16 as <u2 raw bits, as kforge wants)."""
    npy_write_bits(path, NPY[t], WIDTH[t] // 8, [bits(t, v) for v in vals])
