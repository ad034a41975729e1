#!/usr/bin/env python3
"""Runs the kernels gen.py wrote and checks them (Python's standard library only).

  check.py run --save DIR [--kforge BIN] [--backend B] [--opt -O0|-O1] [--jobs N]
               [--ref] [--forms] [--only SUBSTR]
      run every kernel of $FOLD_OUT/manifest.json, saving the outputs in DIR;
      --ref: compare every form with ref.py's value; --forms: compare the forms
      (a l c v r m k u w) of each case with the run-time form r. A kernel that
      does not compile has the offending lines removed (each printed as REJECT,
      a problem: gen.py writes only valid programs) and is run again, so one
      refusal hides no other result.
  check.py cmp DIR_CPU DIR_OTHER [--label L]
      compare two runs' saved outputs: bitwise, NaN as NaN, approximate math
      within the documented tolerance; PASS/FAIL per kernel and a count.
  check.py rejects [--kforge BIN]   the programs the compiler must refuse
Each command exits 1 when it found a problem.
"""
import json, math, os, re, subprocess, sys, shutil
from concurrent.futures import ThreadPoolExecutor
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ref import *
FORMS = 'alcvrmkuw'

OUT = os.path.abspath(os.environ.get('FOLD_OUT', 'out'))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))


def lanes_of(t):
    if 'x' in t:
        s, n = t.split('x')
        return s, int(n)
    return t, 1


def store_t(t): return 'u32' if t == 'bool' else t


def load_raw(path, t):
    s, n = lanes_of(t)
    return npy_bits(path, WIDTH[s] // 8), n


def isnan_bits(s, b):
    if s == 'f16': return (b & 0x7c00) == 0x7c00 and (b & 0x3ff) != 0
    if s == 'bf16': return (b & 0x7f80) == 0x7f80 and (b & 0x7f) != 0
    if s == 'f32': return (b & 0x7f800000) == 0x7f800000 and (b & 0x7fffff) != 0
    if s == 'f64': return (b >> 52 & 0x7ff) == 0x7ff and (b & ((1 << 52) - 1)) != 0
    return False


def ulp_of(s, x):
    p, emin, emax = FMT[s]
    if x == 0 or math.isinf(x) or math.isnan(x): return 2.0 ** (emin - p + 1)
    e = max(math.frexp(abs(x))[1] - 1, emin)
    return 2.0 ** (e - p + 1)


def approx_ok(kind, s, got, want):
    """README.md 'Tolerances': f32 exp exp2 log log2 rsqrt sin cos abs 4e-6 + rel 4e-6
    (on the tested ranges), tanh rel 1e-3, f64 math rel 1e-14, rcp 1 ulp or 1.2e-38
    abs, fast_div 2 ulp."""
    if math.isnan(want): return math.isnan(got)
    if math.isinf(want):
        return got == want or (s == 'f32' and abs(got) > 3e38 and math.copysign(1, got) == math.copysign(1, want))
    if math.isnan(got) or math.isinf(got): return False
    d = abs(got - want)
    if kind == 'rcp': return d <= ulp_of(s, want) or d <= 1.2e-38
    if kind == 'fast_div': return d <= 2 * ulp_of(s, want) + 1.2e-38
    if kind == 'tanh' and s == 'f32': return d <= 1e-3 * abs(want) + 1e-6
    if s == 'f64': return d <= 1e-14 * abs(want) + 1e-300
    return d <= 4e-6 + 4e-6 * abs(want)


def load_manifest():
    man = json.load(open(os.path.join(OUT, 'manifest.json')))
    for k in man['kernels']:
        k['lines'] = {str(a): b for a, b in k['lines'].items()}
    return man


def fmt(s, bs):
    out = []
    for b in bs:
        if b == 'nan': out.append('nan'); continue
        if is_float(s): out.append('%r(0x%x)' % (from_bits(s, b), b))
        else: out.append('%d(0x%x)' % (wrap(s, b) if s in INTS else b, b))
    return '[' + ', '.join(out) + ']'


def run_one(k, a):
    """Runs kernel k; returns (printed lines, problems, form results checked)."""
    save, kforge, backend, opt = a['save'], a['kforge'], a['backend'], a['opt']
    lines, nbad, ncheck = [], 0, 0
    for f in os.listdir(OUT):
        if f.startswith(k['name'] + '.x_'): shutil.copy(os.path.join(OUT, f), save)
    src = open(os.path.join(OUT, k['file'])).read().split('\n')
    removed = []
    outs = {}
    for attempt in range(60):
        open(os.path.join(save, k['file']), 'w').write('\n'.join(src))
        cmd = [kforge, 'run', os.path.join(save, k['file']), '--backend', backend] + ([opt] if opt else []) + k['args']
        outs = {}
        for t in k['outs']:
            p = os.path.join(save, '%s.o_%s.npy' % (k['name'], t))
            if os.path.exists(p): os.remove(p)
            cmd += ['-o', 'o_%s=%s' % (t, p)]
            outs[t] = p
        r = subprocess.run(cmd, cwd=save, capture_output=True, text=True)
        if r.returncode == 0: break
        errs = sorted(set(int(m.group(1)) for m in re.finditer(r'^[^\s:]*\.kf:(\d+):\d+: error', r.stderr, re.M)))
        if not errs or r.returncode != 1:
            lines.append('ERROR %s: rc=%d %s' % (k['name'], r.returncode, r.stderr.strip()[-1500:]))
            return lines, 1, 0
        for ln in errs:
            msg = [l for l in r.stderr.split('\n') if re.match(r'^[^\s:]*\.kf:%d:' % ln, l)][0]
            ci, form = k['lines'].get(str(ln), (None, None))
            if ci is None:
                lines.append('ERROR %s: unmapped line %d: %s' % (k['name'], ln, msg))
                return lines, 1, 0
            c = k['cases'][ci]
            lines.append('REJECT %s [%s] form %s: %s   | %s' % (k['name'], c['name'], form, msg.split('error: ')[-1],
                                                               src[ln - 1].strip()))
            nbad += 1
            for l2, (c2, f2) in k['lines'].items():   # a const's uses go with it
                if int(l2) == ln or (form in 'ck' and c2 == ci and f2 in (form, 'k')):
                    src[int(l2) - 1] = '// removed'
                    removed.append((c2, f2))
    else:
        lines.append('ERROR %s: gave up' % k['name'])
        return lines, 1, 0
    data = {t: load_raw(p, t) for t, p in outs.items()}
    gone = set(removed)
    for ci, c in enumerate(k['cases']):
        s, n = lanes_of(c['rtype'])
        if s == 'bool': s = 'u32'
        raw, _ = data[store_t(c['rtype'])]
        vals = {}
        for fi, f in enumerate(FORMS):
            if f not in c['forms'] or (ci, f) in gone: continue
            slot = c['base'] + fi
            vals[f] = raw[slot * n:(slot + 1) * n]
        if a['ref']:
            for f, got in vals.items():
                ncheck += 1
                bad = []
                for g, w in zip(got, c['expect']):
                    if c['approx']:
                        wv = from_bits(s, w) if w != 'nan' else math.nan
                        if not approx_ok(c['approx'][0], s, from_bits(s, g), wv): bad.append((g, w))
                    elif w == 'nan':
                        if not isnan_bits(s, g): bad.append((g, w))
                    elif g != w:
                        bad.append((g, w))
                if bad:
                    nbad += 1
                    lines.append('MISMATCH %s [%s] form %s (%s): got %s want %s' % (
                        k['name'], c['name'], f, c['expr'], fmt(s, [b[0] for b in bad]), fmt(s, [b[1] for b in bad])))
        if a['forms'] and len(vals) > 1:
            ref_f = 'r' if 'r' in vals else list(vals)[0]
            for f, got in vals.items():
                for g, w in zip(got, vals[ref_f]):
                    if not (g == w or (isnan_bits(s, g) and isnan_bits(s, w))):
                        nbad += 1
                        lines.append('FORMDIFF %s [%s] form %s vs %s (%s): %s vs %s' % (
                            k['name'], c['name'], f, ref_f, c['expr'], fmt(s, [g]), fmt(s, [w])))
                        break
    return lines, nbad, ncheck


def cmd_run(args):
    a = {'kforge': os.path.abspath(args.get('--kforge', os.path.join(ROOT, 'build', 'kforge'))),
         'backend': args.get('--backend', 'cpu'), 'opt': args.get('--opt', ''),
         'ref': '--ref' in args, 'forms': '--forms' in args}
    if not args.get('--save'): sys.exit('check.py run: --save DIR is required')
    a['save'] = os.path.abspath(args['--save'])
    man = load_manifest()
    os.makedirs(a['save'], exist_ok=True)
    ks = [k for k in man['kernels'] if not args.get('--only') or args['--only'] in k['name']]
    with ThreadPoolExecutor(int(args.get('--jobs', '2'))) as ex:
        res = list(ex.map(lambda k: run_one(k, a), ks))
    nbad = ncheck = 0
    for lines, b, n in res:
        for l in lines: print(l)
        nbad += b
        ncheck += n
    print('[%s%s] %d kernels, checked %d form results, %d problems' % (a['backend'], a['opt'], len(ks), ncheck, nbad))
    return nbad


def cmd_cmp(args, a_dir, b_dir):
    man = load_manifest()
    label = args.get('--label', os.path.basename(b_dir))
    npass = nfail = 0
    for k in man['kernels']:
        fails = []
        for t in k['outs']:
            pa = os.path.join(a_dir, '%s.o_%s.npy' % (k['name'], t))
            pb = os.path.join(b_dir, '%s.o_%s.npy' % (k['name'], t))
            if not os.path.exists(pa) or not os.path.exists(pb):
                fails.append('missing output o_%s (%s)' % (t, 'cpu' if not os.path.exists(pa) else label))
                continue
            ra, n = load_raw(pa, t)
            rb, _ = load_raw(pb, t)
            for ci, c in enumerate(k['cases']):
                if store_t(c['rtype']) != t: continue
                s = lanes_of(c['rtype'])[0]
                s = 'u32' if s == 'bool' else s
                for fi, f in enumerate(FORMS):
                    if f not in c['forms']: continue
                    sl = (c['base'] + fi) * n
                    for x, y in zip(ra[sl:sl + n], rb[sl:sl + n]):
                        if x == y: continue
                        if is_float(s) and isnan_bits(s, x) and isnan_bits(s, y): continue
                        if c['approx'] and is_float(s) and approx_ok(c['approx'][0], s, from_bits(s, y), from_bits(s, x)):
                            continue
                        fails.append('[%s] form %s (%s): cpu %s, %s %s' % (c['name'], f, c['expr'], fmt(s, [x]), label,
                                                                         fmt(s, [y])))
                        break
        if fails:
            nfail += 1
            print('FAIL %s [%s]: %d outputs differ: %s' % (k['name'], label, len(fails), '; '.join(fails[:8])))
        else:
            npass += 1
            print('PASS %s [%s]' % (k['name'], label))
    print('%s vs cpu: %d passed, %d failed' % (label, npass, nfail))
    return nfail


def cmd_rejects(args):
    kforge = os.path.abspath(args.get('--kforge', os.path.join(ROOT, 'build', 'kforge')))
    man = load_manifest()
    n = 0
    for r in man['rejects']:
        p = subprocess.run([kforge, 'check', '-'], input=r['src'], capture_output=True, text=True)
        if p.returncode == 0:
            n += 1
            print('ACCEPTED (should be an error) %s: %s' % (r['name'], r['src'].strip()))
    print('%d of %d must-reject programs were accepted' % (n, len(man['rejects'])))
    return n


def parse(argv):
    args, pos = {}, []
    i = 0
    while i < len(argv):
        if argv[i].startswith('--'):
            if argv[i] not in ('--ref', '--forms') and i + 1 < len(argv):
                args[argv[i]] = argv[i + 1]; i += 2
            else:
                args[argv[i]] = ''; i += 1
        else:
            pos.append(argv[i]); i += 1
    return args, pos


if __name__ == '__main__':
    args, pos = parse(sys.argv[2:])
    if sys.argv[1] == 'run': sys.exit(1 if cmd_run(args) else 0)
    if sys.argv[1] == 'cmp': sys.exit(1 if cmd_cmp(args, pos[0], pos[1]) else 0)
    if sys.argv[1] == 'rejects': sys.exit(1 if cmd_rejects(args) else 0)
    sys.exit(__doc__)
