#!/usr/bin/env python3
"""PyTorch / cuBLAS peer of `kforge bench` (DESIGN.md section 6, issue 8).

The same shapes as the library's bench files (kernels/bench/*.bench), under
the same bench names, timed the same way: CUDA events around each pass, the
L2 flushed before each pass (a write of 2 x L2 bytes, then a read of another
2 x L2, outside the timed region), an adaptive number of passes after a
warm-up, the median (min and max too), GB/s and the ratio to a
device-to-device copy measured in the same run. Byte counts are the bytes
the operation must move (the peer's own temporaries are its cost, not more
bytes), so `x copy` compares with kforge's row of the same name; the ratio
of the medians (tools/bench_join.py) compares the two directly.

Also cuBLAS GEMMs (torch.matmul, f16 and bf16, 4096^3, 8192^3 and decode-like
skinny shapes) for issue 11, reported in TFLOP/s, and F.linear at the
tensor-core GEMV's shapes and batches (tc_gemv_f16_b<B>_<M>x<K>). The f32-out
GEMMs (wmma_gemm_f16f32_<S>^3, gemm_f16_f32_<S>^3: f16 in, f32 out) have
torch.mm(a, b, out_dtype=torch.float32) as peer, one cuBLAS GEMM writing f32,
where this torch has it (peer "cublas"); else torch.matmul in f16, f16 out
(peer "cublas f16 out", writing half the bytes of C: never slower than the
fair peer).

With --decode it runs instead the peer of kforge-decode --bench (issue 10): the
decode step of the same Llama-style f16 model (random weights; fused QKV and
gate/up matrices, F.rms_norm, RoPE NeoX in torch ops, the new k and v written
into a [1, Hkv, L, D] cache, F.scaled_dot_product_attention with enable_gqa
over the cache up to the position, F.linear for every matrix, argmax, the
embedding of the chosen token; --batch B: B sequences, a [B, Hkv, L, D] cache,
all at the same position), eagerly (one step per position) and under a
torch CUDA graph (the step at the context's position captured once and
replayed), each timed with CUDA events over --steps steps after 3 warm-up
steps. It prints `decode-peer: eager X ms`, `decode-peer: graph X ms` (or why
the capture failed) and `decode-peer: copy X GB/s`, which kforge-decode reads.

With --decode --tp N (issue 12) the same model runs tensor parallel over GPUs
0..N-1, as kforge-decode --tp N splits it: one process per GPU (spawned here,
torch.distributed with the NCCL backend), each with its heads' rows of the
fused QKV, its share of gate/up and of the vocabulary rows, the matching
columns of the output and down matrices, dist.all_reduce after each of those
two and dist.all_gather of the logits; eager and, if it captures, under a
torch CUDA graph, the slowest rank's events. It prints `decode-peer: tp N
eager X ms` and `decode-peer: tp N graph X ms`.

    python3 tools/bench_torch.py [--budget MS] [--runs N] [--no-flush]
                                 [--only PATTERN] [--no-compile] [--json PATH]
    python3 tools/bench_torch.py --decode [--hidden N --heads N --kv-heads N --head-dim N --ffn N
                                 --layers N --vocab N] [--context N] [--steps N] [--tp N | --batch B] [--json PATH]
"""
import argparse
import fnmatch
import json
import math
import statistics
import sys

import torch
import torch.nn.functional as F


class Timer:
    """Event-timed passes with the L2 flushed before each."""

    def __init__(self, budget_ms, runs, flush):
        self.budget_ms, self.runs, self.flush = budget_ms, runs, flush
        l2 = torch.cuda.get_device_properties(0).L2_cache_size or (64 << 20)
        self.flush_bytes = 2 * l2
        self.scratch = torch.empty(2 * self.flush_bytes, dtype=torch.uint8, device="cuda")
        self.dirty, self.clean = self.scratch[: self.flush_bytes], self.scratch[self.flush_bytes:]

    def flush_l2(self):
        self.dirty.zero_()
        self.clean.max()

    def one(self, fn):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if self.flush:
            self.flush_l2()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def time(self, fn):
        fn()
        torch.cuda.synchronize()
        est = max(self.one(fn), 1e-4)
        warmup = min(max(math.ceil(10.0 / est), 2), 50)
        runs = self.runs or min(max(int(self.budget_ms / est), 10), 500)
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        ms = [self.one(fn) for _ in range(runs)]
        return statistics.median(ms), min(ms), max(ms), runs


def copy_bandwidth(runs=20):
    nbytes = 1 << 30
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    ms = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        dst.copy_(src)
        e.record()
        e.synchronize()
        ms.append(s.elapsed_time(e))
    del src, dst
    return 2 * nbytes / (statistics.median(ms) * 1e6)


# ---- the cases: (bench name, peer, make) where make() returns (fn, bytes, flops) ----

def rnd(*shape, dtype=torch.float16):
    return torch.rand(*shape, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dtype)


def saxpy():
    n = 1 << 28
    x, y = rnd(n, dtype=torch.float32), rnd(n, dtype=torch.float32)
    return (lambda: y.add_(x, alpha=2.0)), 12 * n, 0


def reduce_sum():
    n = 1 << 28
    x = rnd(n, dtype=torch.float32)
    return (lambda: x.sum()), 4 * n, 0


def softmax():
    x = rnd(8192, 8192)
    return (lambda: torch.softmax(x, dim=-1)), 4 * 8192 * 8192, 0


def rmsnorm():
    x, w = rnd(8192, 8192), rnd(8192)
    return (lambda: F.rms_norm(x, (8192,), w, 1e-6)), 4 * 8192 * 8192 + 2 * 8192, 0


def add_rmsnorm():
    x, res, w = rnd(8192, 8192), rnd(8192, 8192), rnd(8192)

    def fn():
        x.add_(res)
        return F.rms_norm(x, (8192,), w, 1e-6)
    return fn, 8 * 8192 * 8192 + 2 * 8192, 0


def gemv(dtype, nb=1, m=14336, k=4096):
    w, x = rnd(m, k, dtype=dtype), rnd(nb, k, dtype=dtype)
    return (lambda: F.linear(x, w)), 2 * m * k + 2 * nb * k + 2 * nb * m, 2 * nb * m * k


def sdpa(b, l, h=32, hkv=8, d=128):
    q = rnd(b, h, 1, d)
    k, v = rnd(b, hkv, l, d), rnd(b, hkv, l, d)
    fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    return fn, 4 * b * l * hkv * d + 4 * b * h * d, 4 * b * h * l * d


def rope_fn(gptj):
    def rope(x, pos, theta):
        d = x.shape[-1]
        inv = 1.0 / (theta ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
        ang = pos.float()[:, None] * inv[None, :]                      # [T, D/2]
        cos, sin = ang.cos()[:, None, :], ang.sin()[:, None, :]          # [T, 1, D/2]
        xf = x.float()
        if gptj:
            a, b = xf[..., 0::2], xf[..., 1::2]
            return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2).to(x.dtype)
        a, b = xf[..., : d // 2], xf[..., d // 2:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)
    return rope


def rope(gptj, compiled):
    t, h, d = 4096, 32, 128
    x, pos = rnd(t, h, d), torch.arange(t, device="cuda", dtype=torch.int32)
    f = rope_fn(gptj)
    if compiled:
        f = torch.compile(f)
    return (lambda: f(x, pos, 500000.0)), 4 * t * h * d + 4 * t, 0


def silu_mul():
    n = 1 << 27
    g, u = rnd(n), rnd(n)
    return (lambda: F.silu(g) * u), 6 * n, 0


def argmax():
    x = rnd(1, 128256, dtype=torch.float32)
    return (lambda: torch.argmax(x, dim=-1)), 4 * 128256 + 4, 0


def gemm(dtype, m, n, k):
    a, b = rnd(m, k, dtype=dtype), rnd(k, n, dtype=dtype)
    return (lambda: torch.matmul(a, b)), 2 * (m * k + k * n + m * n), 2 * m * n * k


def mm_f32_out():
    """True when torch.mm takes out_dtype (f16 in, f32 out in one cuBLAS call)."""
    try:
        x = torch.ones(16, 16, device="cuda", dtype=torch.float16)
        return torch.mm(x, x, out_dtype=torch.float32).dtype == torch.float32
    except (TypeError, RuntimeError):
        return False


def gemm_f32_out(s, direct):
    """f16 in, f32 accumulation and out, as wmma_gemm.cu and gemm_f16_f32_nn:
    torch.mm(out_dtype=float32), one cuBLAS GEMM writing f32 (direct); else
    torch.matmul in f16 (f16 out: half the C bytes, a peer no slower than
    the fair one). Bytes count C as f32 either way."""
    a, b = rnd(s, s), rnd(s, s)
    fn = (lambda: torch.mm(a, b, out_dtype=torch.float32)) if direct else (lambda: torch.matmul(a, b))
    return fn, 2 * (2 * s * s) + 4 * s * s, 2 * s ** 3


def cases(compile_ok):
    yield "saxpy_f32_2^28", "torch", saxpy
    yield "reduce_sum_f32_2^28", "torch", reduce_sum
    yield "softmax_f16_8192x8192", "torch", softmax
    yield "rmsnorm_f16_8192x8192", "torch", rmsnorm
    yield "add_rmsnorm_f16_8192x8192", "torch", add_rmsnorm
    yield "gemv_f16_14336x4096", "torch", lambda: gemv(torch.float16)
    yield "gemv_bf16_14336x4096", "torch", lambda: gemv(torch.bfloat16)
    yield "gemv_batch8_f16_14336x4096", "torch", lambda: gemv(torch.float16, 8)
    for m, k in ((4096, 4096), (14336, 4096), (4096, 14336), (128256, 4096)):
        for nb in (1, 8, 16):
            yield f"tc_gemv_f16_b{nb}_{m}x{k}", "torch", (lambda nb=nb, m=m, k=k: gemv(torch.float16, nb, m, k))
    yield "sdpa_decode_b1_l8192", "torch", lambda: sdpa(1, 8192)
    yield "sdpa_decode_b4_l8192", "torch", lambda: sdpa(4, 8192)
    yield "sdpa_decode_b1_l32768", "torch", lambda: sdpa(1, 32768)
    yield "rope_neox_t4096_h32_d128", "torch", lambda: rope(False, False)
    if compile_ok:
        yield "rope_neox_t4096_h32_d128", "torch.compile", lambda: rope(False, True)
    yield "rope_gptj_t4096_h32_d128", "torch", lambda: rope(True, False)
    if compile_ok:
        yield "rope_gptj_t4096_h32_d128", "torch.compile", lambda: rope(True, True)
    yield "silu_mul_f16_2^27", "torch", silu_mul
    yield "argmax_f32_1x128256", "torch", argmax
    for dt, dn in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
        for s in (4096, 8192):
            yield f"gemm_{dn}_{s}^3", "cublas", (lambda dt=dt, s=s: gemm(dt, s, s, s))
    for m in (16, 32, 64, 128):
        for n, k in ((14336, 4096), (4096, 14336)):
            yield f"gemm_f16_m{m}_n{n}_k{k}", "cublas", (lambda m=m, n=n, k=k: gemm(torch.float16, m, n, k))
    direct = mm_f32_out()
    for s in (4096, 2048):   # the raw wmma GEMM and gemm.kf with f32 out: one peer, under both names
        for name in (f"wmma_gemm_f16f32_{s}^3", f"gemm_f16_f32_{s}^3"):
            yield name, "cublas" if direct else "cublas f16 out", (lambda s=s: gemm_f32_out(s, direct))


# ---- the decode step (--decode) ----

class DecodeModel:
    """kforge-decode's model in torch f16: the same shapes and the same step."""

    def __init__(self, a, tp=1):
        """tp > 1: this rank's share (heads, KV heads, FFN and vocabulary rows divided by tp)."""
        self.h, self.nh, self.nkv, self.d = a.hidden, a.heads // tp, a.kv_heads // tp, a.head_dim
        self.ffn, self.eps, self.cap = a.ffn // tp, 1e-5, a.context + a.steps + 8
        self.b = a.batch
        torch.manual_seed(1)

        def mat(rows, cols):
            return rnd(rows, cols).mul_(math.sqrt(3.0 / cols))

        def norm():
            return rnd(self.h).mul_(0.1).add_(1.0)

        nqkv = (self.nh + 2 * self.nkv) * self.d
        self.embed = rnd(a.vocab, self.h)
        self.layers = [dict(an=norm(), wqkv=mat(nqkv, self.h), wo=mat(self.h, self.nh * self.d), fn=norm(),
                            wgu=mat(2 * self.ffn, self.h), wd=mat(self.h, self.ffn),
                            kc=rnd(self.b, self.nkv, self.cap, self.d), vc=rnd(self.b, self.nkv, self.cap, self.d))
                       for _ in range(a.layers)]
        self.out_norm, self.lm_head = norm(), mat(a.vocab // tp, self.h)
        half = self.d // 2
        self.inv = 1.0 / (500000.0 ** (torch.arange(0, half, device="cuda", dtype=torch.float64) * 2.0 / self.d))

    def rope(self, x, pos):
        ang = (pos * self.inv).float()
        cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
        a, b = x[..., : self.d // 2], x[..., self.d // 2:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)

    def step(self, tok, pos):
        """tok: [batch] int64 on the device; pos: the position of every sequence (a Python int)."""
        x, b = self.embed[tok], self.b
        for ly in self.layers:
            xn = F.rms_norm(x, (self.h,), ly["an"], self.eps)
            q, k, v = F.linear(xn, ly["wqkv"]).split([self.nh * self.d, self.nkv * self.d, self.nkv * self.d], -1)
            q = self.rope(q.view(b, self.nh, 1, self.d), pos)
            ly["kc"][:, :, pos:pos + 1] = self.rope(k.view(b, self.nkv, 1, self.d), pos)
            ly["vc"][:, :, pos:pos + 1] = v.view(b, self.nkv, 1, self.d)
            o = F.scaled_dot_product_attention(q, ly["kc"][:, :, :pos + 1], ly["vc"][:, :, :pos + 1], enable_gqa=True)
            x = x + self.reduce(F.linear(o.reshape(b, self.nh * self.d), ly["wo"]))
            g, u = F.linear(F.rms_norm(x, (self.h,), ly["fn"], self.eps), ly["wgu"]).chunk(2, -1)
            x = x + self.reduce(F.linear(F.silu(g) * u, ly["wd"]))
        logits = self.gather(F.linear(F.rms_norm(x, (self.h,), self.out_norm, self.eps), self.lm_head).float())
        return torch.argmax(logits, dim=-1)

    def reduce(self, t):
        """The sum of the ranks' partial outputs (one GPU: the output)."""
        return t

    def gather(self, logits):
        return logits


class TPDecodeModel(DecodeModel):
    """A rank's share of DecodeModel over torch.distributed (NCCL)."""

    def __init__(self, a, tp):
        super().__init__(a, tp)
        self.tp = tp

    def reduce(self, t):
        import torch.distributed as dist
        dist.all_reduce(t)
        return t

    def gather(self, logits):
        import torch.distributed as dist
        parts = [torch.empty_like(logits) for _ in range(self.tp)]
        dist.all_gather(parts, logits)
        return torch.cat(parts, dim=-1)


def events_ms(fn, n):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    s.record()
    for i in range(n):
        fn(i)
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / n


def slowest(ms):
    """The largest of the ranks' times (every rank calls it)."""
    import torch.distributed as dist
    t = torch.tensor([ms], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def tp_worker(rank, a, port, q):
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    where = f"tcp://127.0.0.1:{port}"
    try:
        dist.init_process_group("nccl", init_method=where, rank=rank, world_size=a.tp,
                                device_id=torch.device("cuda", rank))
    except TypeError:  # torch before 2.3 has no device_id
        dist.init_process_group("nccl", init_method=where, rank=rank, world_size=a.tp)
    res = {}
    try:
        m = TPDecodeModel(a, a.tp)
        tok = torch.ones(1, dtype=torch.long, device="cuda")
        with torch.no_grad():
            for i in range(3):
                tok = m.step(tok, a.context + i)
            state = {"tok": tok}

            def eager(i):
                state["tok"] = m.step(state["tok"], a.context + i)
            dist.barrier()
            res["eager_ms"] = slowest(events_ms(eager, a.steps))
            try:
                static = tok.clone()
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        static.copy_(m.step(static, a.context))
                torch.cuda.current_stream().wait_stream(side)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    static.copy_(m.step(static, a.context))
                dist.barrier()
                res["graph_ms"] = slowest(events_ms(lambda i: g.replay(), a.steps))
            except Exception as e:  # reported; the eager figure stands
                res["graph_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
    finally:
        if rank == 0:
            q.put(res)
        dist.destroy_process_group()


def decode_tp_main(a):
    import socket
    import torch.multiprocessing as mp
    if torch.cuda.device_count() < a.tp:
        print(f"decode-peer: tp {a.tp} needs {a.tp} GPUs, {torch.cuda.device_count()} here", flush=True)
        return 1
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    mp.spawn(tp_worker, args=(a, port, q), nprocs=a.tp, join=True)
    res = q.get() if not q.empty() else {}
    if "eager_ms" in res:
        print(f"decode-peer: tp {a.tp} eager {res['eager_ms']:.4f} ms per step ({1e3 / res['eager_ms']:.1f} tokens/s)")
    if "graph_ms" in res:
        print(f"decode-peer: tp {a.tp} graph {res['graph_ms']:.4f} ms per step ({1e3 / res['graph_ms']:.1f} tokens/s)")
    if "graph_error" in res:
        print(f"decode-peer: tp {a.tp} graph capture failed: {res['graph_error']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "tp": a.tp,
                       "decode": dict(res, context=a.context, steps=a.steps)}, f, indent=1)
    return 0 if "eager_ms" in res else 1


def decode_main(a):
    if a.tp > 1 and a.batch > 1:
        print("decode-peer: --tp and --batch do not go together", flush=True)
        return 2
    if a.tp > 1:
        return decode_tp_main(a)
    torch.backends.cuda.matmul.allow_tf32 = False
    copy = copy_bandwidth()
    print(f"decode-peer: copy {copy:.1f} GB/s")
    m = DecodeModel(a)
    tok = torch.ones(a.batch, dtype=torch.long, device="cuda")
    with torch.no_grad():
        for i in range(3):
            tok = m.step(tok, a.context + i)
        state = {"tok": tok}

        def eager(i):
            state["tok"] = m.step(state["tok"], a.context + i)
        eager_ms = events_ms(eager, a.steps)
        print(f"decode-peer: eager {eager_ms:.4f} ms per step ({1e3 * a.batch / eager_ms:.1f} tokens/s)", flush=True)
        graph_ms, why = None, None
        try:
            static = tok.clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    static.copy_(m.step(static, a.context))
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static.copy_(m.step(static, a.context))
            graph_ms = events_ms(lambda i: g.replay(), a.steps)
            print(f"decode-peer: graph {graph_ms:.4f} ms per step ({1e3 * a.batch / graph_ms:.1f} tokens/s; the step at "
                  f"position {a.context} captured once, replayed)", flush=True)
        except Exception as e:  # a step torch cannot capture is reported, the eager figure stands
            why = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            print(f"decode-peer: graph capture failed: {why}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "copy_gbps": copy,
                       "decode": {"eager_ms": eager_ms, "graph_ms": graph_ms, "graph_error": why,
                                  "context": a.context, "steps": a.steps}}, f, indent=1)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=200.0, help="ms of timed passes per row (adaptive runs)")
    ap.add_argument("--runs", type=int, default=0, help="fixed number of timed passes")
    ap.add_argument("--no-flush", action="store_true", help="leave the L2 warm between passes")
    ap.add_argument("--only", default="*", help="shell patterns over bench names (several: space-separated)")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile rows")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    ap.add_argument("--decode", action="store_true", help="time the decode step of kforge-decode's model instead")
    for name, default in (("hidden", 4096), ("heads", 32), ("kv-heads", 8), ("head-dim", 128), ("ffn", 14336),
                          ("layers", 32), ("vocab", 128256), ("context", 4096), ("steps", 20), ("tp", 1),
                          ("batch", 1)):
        ap.add_argument("--" + name, type=int, default=default, help=f"--decode: (default {default})")
    a = ap.parse_args()
    if a.decode:
        return decode_main(a)
    torch.backends.cuda.matmul.allow_tf32 = False
    timer = Timer(a.budget, a.runs, not a.no_flush)
    copy = copy_bandwidth()
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}; torch {torch.__version__}; copy bandwidth {copy:.0f} GB/s "
          f"(device-to-device, read+write, median of 20)")
    print("timing: CUDA events around each pass; "
          + ("L2 flushed before each pass (write then read of 2 x L2, outside the timed region)"
             if timer.flush else "L2 warm (not flushed: --no-flush)")
          + "; median, min, max of the passes after warm-up")
    width = 32
    print(f"{'bench':{width}s} {'peer':13s} {'median ms':>10s} {'min ms':>10s} {'max ms':>10s} {'GB/s':>8s} "
          f"{'x copy':>7s} {'TFLOP/s':>8s} {'runs':>5s}")
    rows, failed = [], 0
    for name, peer, make in cases(not a.no_compile):
        if not any(fnmatch.fnmatch(name, p) for p in a.only.split() or ["*"]):
            continue
        row, fn = {"bench": name, "peer": peer}, None
        try:
            fn, nbytes, flops = make()
            med, lo, hi, runs = timer.time(fn)
            gbps = nbytes / (med * 1e6)
            row.update(median_ms=med, min_ms=lo, max_ms=hi, runs=runs, bytes=nbytes, gbps=gbps, x_copy=gbps / copy,
                       flops=flops or None, tflops=flops / (med * 1e9) if flops else None, status="ok")
            tf = f"{row['tflops']:.2f}" if flops else "-"
            print(f"{name:{width}s} {peer:13s} {med:10.4f} {lo:10.4f} {hi:10.4f} {gbps:8.0f} {gbps / copy:7.3f} "
                  f"{tf:>8s} {runs:5d}", flush=True)
        except Exception as e:  # a peer that cannot run here is reported, the others still run
            failed += 1
            msg = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            row.update(status="error", error=msg)
            print(f"{name:{width}s} {peer:13s} ERROR: {msg}", flush=True)
        rows.append(row)
        fn = None  # free this case's tensors before the next is made
        torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": dev, "torch": torch.__version__, "copy_gbps": copy, "l2_flush": timer.flush,
                       "l2_flush_bytes": 2 * timer.flush_bytes if timer.flush else 0, "results": rows}, f, indent=1)
    return 1 if rows and failed == len(rows) else 0  # a peer that cannot run here is a row, not a failure


if __name__ == "__main__":
    sys.exit(main())
