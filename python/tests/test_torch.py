"""PyTorch interop on a GPU (tools/gpu_check.sh runs it on the H200; without
torch or a CUDA device every test here is skipped, saying why): CUDA
tensors are used in place, with no copy, on PyTorch's current stream, on
both GPU paths; mixed with NumPy arrays; and the README's PyTorch example
runs as written. Runs under pytest, or as `python3 test_torch.py` where
pytest is not installed (the GPU machine)."""

import os
import re

import numpy as np

import kforge

try:
    import torch
    WHY_NOT = None if torch.cuda.is_available() else "torch has no CUDA device"
except ImportError:
    torch, WHY_NOT = None, "torch is not installed"

try:
    import pytest
    pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
except ImportError:
    pytest = None

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

SRC = """
@schedule(block = 128, grid = cdiv(n, 128))
kernel axpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {
    let i = global_id.x;
    if i < n { y[i] = a * x[i] + y[i]; }
}

@schedule(block = 128, grid = cdiv(n, 128))
kernel scale_h(x: &mut [f16], s: f16, n: u32) {
    let i = global_id.x;
    if i < n { x[i] = x[i] * s; }
}
"""

_module = []


def module():
    if not _module:
        _module.append(kforge.compile(SRC, name="torch.kf"))
    return _module[0]


class raises:
    """pytest.raises(exc, match=...) without pytest."""

    def __init__(self, exc, match):
        self.exc, self.match = exc, match

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        assert kind is not None, f"{self.exc.__name__} was not raised"
        assert issubclass(kind, self.exc) and re.search(self.match, str(value)), f"{kind.__name__}: {value}"
        return True


def in_place(backend):
    n = 1 << 20
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    y = torch.ones(n, device="cuda", dtype=torch.float32)
    ptr = y.data_ptr()
    module().axpy(2.0, x, y, n, backend=backend)
    torch.cuda.synchronize()
    assert y.data_ptr() == ptr
    assert torch.equal(y, 2 * x + 1)


def test_cuda_tensors_in_place_through_nvrtc():
    in_place("cuda")


def test_cuda_tensors_in_place_through_kforge_ptx():
    in_place("ptx")


def test_launch_goes_to_torchs_current_stream():
    n = 1 << 22
    s = torch.cuda.Stream()
    x = torch.full((n,), 3.0, device="cuda")
    y = torch.zeros(n, device="cuda")
    with torch.cuda.stream(s):
        y.fill_(1.0)                  # queued on s before the kernel
        module().axpy(2.0, x, y, n)   # on s too: sees the fill, no host wait
        z = y * 10                    # and torch's next op on s sees the kernel
    s.synchronize()
    assert torch.all(y == 7.0)
    assert torch.all(z == 70.0)


def test_half_tensors_and_scalars():
    x = torch.tensor([1.0, -2.0, 0.5, 65504.0], device="cuda", dtype=torch.float16)
    module().scale_h(x, 0.5, 4)
    torch.cuda.synchronize()
    assert x.tolist() == [0.5, -1.0, 0.25, 32752.0]


def test_tensors_and_numpy_arrays_mix_and_errors_name_the_parameter():
    m = module()
    x = np.arange(1000, dtype=np.float32)
    y = torch.zeros(1000, device="cuda")
    m.axpy(1.0, x, y, 1000)               # x copied in, y used in place
    torch.cuda.synchronize()
    assert torch.equal(y.cpu(), torch.from_numpy(x))
    with raises(kforge.UsageError, "parameter 'y' is &mut \\[f32\\] and needs a torch.float32 tensor"):
        m.axpy(1.0, x, torch.zeros(1000, device="cuda", dtype=torch.float64), 1000)
    with raises(kforge.UsageError, "not 'cpu'"):
        m.axpy(1.0, x, y, 1000, backend="cpu")
    with raises(kforge.UsageError, "not contiguous"):
        m.axpy(1.0, x, torch.zeros(2000, device="cuda")[::2], 1000)


def test_readme_torch_example_runs_as_written():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("\n## Use it from Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = [b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "torch" in b]
    assert blocks
    cwd = os.getcwd()
    os.chdir(ROOT)   # the example names kernels/saxpy.kf
    try:
        exec(compile(blocks[0], "README.md (Use it from Python, PyTorch)", "exec"), {})
    finally:
        os.chdir(cwd)


if __name__ == "__main__":
    import sys
    import traceback
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    failed = 0
    for name, fn in tests:
        if WHY_NOT:
            print(f"skipped: {name}: {WHY_NOT}")
            continue
        try:
            fn()
            print(f"ok {name}")
        except Exception:
            failed += 1
            print(f"FAIL {name}\n{traceback.format_exc()}")
    print(f"test_torch: {len(tests) - failed if not WHY_NOT else 0} passed, {failed} failed"
          + (f", {len(tests)} skipped ({WHY_NOT})" if WHY_NOT else ""))
    sys.exit(1 if failed else 0)
