#!/usr/bin/env python3
"""Joins `kforge bench --json` and `tools/bench_torch.py --json` of one call
into one table, row by row on the bench name, for the lead's note:

    python3 tools/bench_join.py KFORGE.json TORCH.json

Per bench (the default variant): kforge's median on each GPU path and its
ratio to the copy bandwidth of kforge's run, the target and its status;
then each peer (torch, torch.compile, cublas) with its median and its ratio
to the copy bandwidth of the peer's run, and the speedup = peer median /
kforge's best median (above 1: kforge is faster). Peer rows with no kforge
bench (the cuBLAS GEMMs) follow, in TFLOP/s. Either file may be missing or
unreadable: the other is still shown.
"""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"bench_join: {path}: {e}", file=sys.stderr)
        return None


def kforge_rows(doc):
    """{bench: {"cuda": row, "ptx": row}} for the default variant, in order."""
    out = {}
    for r in (doc or {}).get("results", []):
        if r.get("variant") == "default":
            out.setdefault(r["bench"], {})[r["backend"]] = r
    return out


def peer_rows(doc):
    out = {}
    for r in (doc or {}).get("results", []):
        out.setdefault(r["bench"], []).append(r)
    return out


def ms(r):
    return f"{r['median_ms']:9.4f}" if r and "median_ms" in r else f"{'-':>9s}"


def xc(r):
    return f"{r['x_copy']:6.3f}" if r and "x_copy" in r else f"{'-':>6s}"


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    kf, pt = load(argv[1]), load(argv[2])
    krows, prows = kforge_rows(kf), peer_rows(pt)
    w = max([len(n) for n in list(krows) + list(prows)] + [10])
    print("== kforge bench and its PyTorch/cuBLAS peer, one call")
    if kf:
        print(f"kforge: {kf.get('device')}, copy {kf.get('copy_gbps', 0):.0f} GB/s, L2 flushed: {kf.get('l2_flush')}")
    if pt:
        print(f"peer:   {pt.get('device')}, torch {pt.get('torch')}, copy {pt.get('copy_gbps', 0):.0f} GB/s, "
              f"L2 flushed: {pt.get('l2_flush')}")
    print("x copy: GB/s over the copy bandwidth of the same run; speedup: peer median / kforge's best median")
    print(f"{'bench':{w}s} {'target':>6s} {'cuda ms':>9s} {'x copy':>6s} {'ptx ms':>9s} {'x copy':>6s} {'status':13s} | "
          f"{'peer':13s} {'peer ms':>9s} {'x copy':>6s} | {'speedup':>7s}")
    for name, paths in krows.items():
        cu, px = paths.get("cuda"), paths.get("ptx")
        t = next((r.get("target") for r in (cu, px) if r), None)
        status = "/".join(r["status"] for r in (cu, px) if r)
        best = min((r["median_ms"] for r in (cu, px) if r and "median_ms" in r), default=None)
        left = f"{name:{w}s} {(f'{t:.2f}' if t else '-'):>6s} {ms(cu)} {xc(cu)} {ms(px)} {xc(px)} {status:13s}"
        peers = prows.pop(name, []) or [None]
        for i, p in enumerate(peers):
            speed = f"{p['median_ms'] / best:6.2f}x" if p and "median_ms" in p and best else f"{'-':>7s}"
            label = p["peer"] if p else "-"
            if p and p.get("status") == "error":
                label += " (error)"
            print(f"{left if i == 0 else ' ' * len(left)} | {label:13s} {ms(p)} {xc(p)} | {speed}")
    if prows:
        print(f"\n{'peer only':{w}s} {'peer':13s} {'median ms':>10s} {'TFLOP/s':>8s} {'x copy':>7s}")
        for name, peers in prows.items():
            for p in peers:
                tf = f"{p['tflops']:8.1f}" if p.get("tflops") else f"{'-':>8s}"
                print(f"{name:{w}s} {p['peer']:13s} {ms(p):>10s} {tf} {xc(p):>7s}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
