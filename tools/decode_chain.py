#!/usr/bin/env python3
"""Writes a kforge bench file of the q4k decode step's own launches, chained.

The numbers in kernels/bench/decode.bench's "Where the q4k step's time goes"
come from it: each bench is L layers of a subset of the launches
kforge-decode makes for one Llama-3-8B layer with q4k weights (context 4096),
timed as one region by `kforge bench` (L2 flushed before each pass), with the
step's kernel defaults, so the cost of each kind of launch is the difference
between two benches' times (decode.kf's L2 prefetch is off here: see NO_PF):

  gemvs    the four q4k x q8 GEMVs (QKV, output, gate/up, down)
  norms    the same with rmsnorm_q8 before QKV and gate/up, silu_mul_q8 before down
  layer    every launch of the layer: norms, GEMVs, rope, sdpa split and combine

Usage: tools/decode_chain.py [-L LAYERS] [-D NAME=VALUE]... [-o OUT]
  -D applies to the GEMVs (q4k.kf), e.g. -D EARLY=false; the default out is
  build/decode_chain.bench. Then, on a GPU machine:
  build/kforge bench build/decode_chain.bench [--backend ptx] [--runs 200]
Bytes: the weights and the KV cache once (the floor's, as kforge-decode's).
"""
import argparse
import os

SHAPES = {"Q": (6144, 4096), "O": (4096, 4096), "G": (28672, 4096), "D": (4096, 14336)}
NARROW_ROWS = 16384        # kforge-decode's q4k_narrow build below this many rows
STEP_GEMV = "EARLY=true TRIGGER=2 Q8F_MINB=2"
KV_BYTES = 2 * 4096 * 8 * 128 * 2   # K and V of one layer at context 4096
# The small kernels' L2 prefetch (decode.kf's PF) off: a bench step cannot
# hand them the next step's weights, so its gain shows in kforge-decode only.
NO_PF = "pf=zeros(16) pfn=0"


def q4k_bytes(m, k):
    return m * (k // 256) * 144


def steps(seq, layers, extra, kern, dec):
    out, seed, total = [], 100, 0
    for _ in range(layers):
        for s in seq:
            seed += 1
            if s in SHAPES:
                m, k = SHAPES[s]
                acc = "_acc" if s in "OD" else ""
                defs = STEP_GEMV + (" Q8_LOG_BL=3" if m < NARROW_ROWS else "") + extra
                out += [f"kernel   {kern}/q4k.kf q4k_q8_gemv_f16{acc}", f"define   {defs}",
                        f"arg      w=rand({q4k_bytes(m, k)},{seed}) y=rand({m},{seed + 1000}) m={m} k={k}"]
                total += q4k_bytes(m, k)
            elif s == "N":
                out += [f"kernel   {dec} rmsnorm_q8", "define   EARLY=true",
                        f"arg      x=rand(4096,{seed}) w=rand(4096,{seed + 1000}) rows=1 cols=4096 eps=1e-5 {NO_PF}"]
            elif s == "M":
                out += [f"kernel   {dec} silu_mul_q8", "define   EARLY=true",
                        f"arg      g=rand(14336,{seed}) u=rand(14336,{seed + 1000}) n=14336 rows=1 ld=28672 {NO_PF}"]
            elif s == "R":
                out += [f"kernel   {kern}/rope.kf rope_qkv_neox", "define   EARLY=2 TRIGGER=1",
                        f"arg      qkv=rand(6144,{seed}) pos=iota(1) t=1 d=128 theta=500000 "
                        f"kc=rand(4194304,{seed + 1}) vc=rand(4194304,{seed + 2})"]
            elif s == "S":
                out += [f"kernel   {kern}/sdpa.kf sdpa_decode_split", "define   EARLY=true",
                        f"arg      kc=rand(4194304,{seed + 1}) vc=rand(4194304,{seed + 2})"]
                total += KV_BYTES
            elif s == "C":
                out += [f"kernel   {dec} sdpa_combine_q8", "define   EARLY=true", f"arg      {NO_PF}"]
    return out, total


def bench(name, seq, layers, extra, kern, dec):
    body, total = steps(seq, layers, extra, kern, dec)
    head = [f"bench    {name}"]
    if "S" in seq:
        head += ["set      h=32 hkv=8 l=4096 b=1 split=128",
                 "set      q=zeros(4096) lens=rand(1,13) po=zeros(131072) plse=zeros(1024)"]
    head += ["set      xq=rand(14336,7) xds=rand(448,8)"]
    return head + body + [f"bytes    {total}", ""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-L", "--layers", type=int, default=4)
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("-o", "--out", default="build/decode_chain.bench")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = os.path.dirname(os.path.abspath(a.out))
    kern = os.path.relpath(os.path.join(root, "kernels"), out_dir)
    dec = os.path.relpath(os.path.join(root, "tools", "decode", "decode.kf"), out_dir)
    extra = "".join(" " + d for d in a.defines)
    text = [f"# tools/decode_chain.py -L {a.layers}" + "".join(f" -D {d}" for d in a.defines)]
    text += bench("gemvs", "QOGD", a.layers, extra, kern, dec)
    text += bench("norms", "NQONGMD", a.layers, extra, kern, dec)
    text += bench("layer", "NQRSCONGMD", a.layers, extra, kern, dec)
    os.makedirs(out_dir, exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(text) + "\n")
    print(f"{a.out}: gemvs, norms, layer ({a.layers} layers each)")


if __name__ == "__main__":
    main()
