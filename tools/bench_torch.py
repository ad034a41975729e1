#!/usr/bin/env python3
"""PyTorch peer for `kforge bench` (DESIGN.md section 6): the same shapes,
timed the same way (CUDA events, warm-up, median of many runs), reported as
GB/s and as a ratio to a device-to-device copy measured in the same run.

    python3 tools/bench_torch.py [--runs N]
"""
import argparse
import statistics

import torch


def timed(fn, runs):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    runs = ap.parse_args().runs
    dev = torch.device("cuda")
    nbytes = 1 << 30
    src = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src), runs)
    copy = 2 * nbytes / (ms * 1e6)
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    print(f"copy         {ms:10.3f} ms {copy:9.0f} GB/s  (1 GiB device-to-device, read+write)")

    rows = cols = 8192
    x = torch.randn(rows, cols, device=dev, dtype=torch.float16)
    w = torch.randn(cols, device=dev, dtype=torch.float16)
    n = 1 << 28
    xs = torch.randn(n, device=dev, dtype=torch.float32)
    ys = torch.randn(n, device=dev, dtype=torch.float32)
    cases = [
        ("saxpy", lambda: ys.add_(xs, alpha=2.0), 12.0 * n),
        ("reduce_sum", lambda: xs.sum(), 4.0 * n),
        ("softmax_f16", lambda: torch.softmax(x, dim=-1), 4.0 * rows * cols),
    ]
    if hasattr(torch.nn.functional, "rms_norm"):
        cases.append(("rmsnorm", lambda: torch.nn.functional.rms_norm(x, (cols,), w, 1e-6),
                      4.0 * rows * cols + 2.0 * cols))
    print(f"{'kernel':12s} {'median ms':>10s} {'GB/s':>9s} {'x copy':>7s}")
    for name, fn, nb in cases:
        ms = timed(fn, runs)
        gbps = nb / (ms * 1e6)
        print(f"{name:12s} {ms:10.3f} {gbps:9.0f} {gbps / copy:7.2f}")


if __name__ == "__main__":
    main()
