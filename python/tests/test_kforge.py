"""The Python package on the CPU backend (CI runs these with the shared
library of the build: KFORGE_LIBRARY, tests/python/run_pytest.sh):
compiling a path or source text, reflection, calls with NumPy arrays in
binding order (a &mut array receives the result in place), scalars as
Python numbers with their range checked, every error as an exception
carrying kforge's message and file:line:col, emit, and the README's
"Use it from Python" example, run as written."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import kforge

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SAXPY = os.path.join(ROOT, "kernels", "saxpy.kf")

KERNELS = """
@schedule(block = 64, grid = cdiv(n, 64))
kernel axpy(a: f32, x: &[f32], y: &mut [f32], n: u32) {
    let i = global_id.x;
    if i < n { y[i] = a * x[i] + y[i]; }
}

@schedule(block = 32)
kernel widen(x: &[f16], s: f32x4, y: &mut [f32x4], k: i8, flag: bool, n: u32) {
    let i = global_id.x;
    if i < n {
        let v = x[i] as f32;
        y[i] = select(flag, f32x4(v) * s + f32x4(k as f32), f32x4(0.0));
    }
}
"""


@pytest.fixture(scope="module")
def m():
    return kforge.compile(KERNELS, name="api.kf")


def test_library_and_package_versions_agree():
    assert kforge.version() == kforge.__version__
    assert os.path.exists(kforge.library_path())


def test_compile_a_path_and_reflect(m):
    s = kforge.compile(SAXPY)
    assert s.file == SAXPY
    assert list(s.kernels) == ["saxpy"]
    assert [repr(p) for p in s.saxpy.params] == ["a: f32", "x: &[f32]", "y: &mut [f32]", "n: u32"]
    assert [p.mutable for p in s.saxpy.params] == [False, False, True, False]
    assert s.saxpy.schedule == {"block": (256, 1, 1), "grid_dims": 1, "has_shared": False, "min_blocks": 0}
    assert list(m.kernels) == ["axpy", "widen"]
    assert m.widen.schedule["grid_dims"] == 0


def test_numpy_mut_array_receives_the_result_in_place(m):
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, dtype=np.float32)
    before = y.ctypes.data
    assert m.axpy(2.0, x, y, 100, backend="cpu") is None
    np.testing.assert_array_equal(y, 2 * x + 1)
    assert y.ctypes.data == before
    m.axpy(3, x, y, 50)   # an int for an f32 scalar, the cpu backend by default
    np.testing.assert_array_equal(y[:50], 5 * x[:50] + 1)
    np.testing.assert_array_equal(y[50:], 2 * x[50:] + 1)


def test_vector_half_narrow_and_bool_arguments(m):
    x = np.array([1.5, -2.0, 0.25, 4.0], dtype=np.float16)
    y = np.zeros(16, dtype=np.float32)     # four f32x4 elements
    m.widen(x, (1, 2, 3, 4), y, -3, True, 4)  # no grid: count = the length of x
    want = np.array([[v * s - 3 for s in (1, 2, 3, 4)] for v in x.astype(np.float32)], dtype=np.float32)
    np.testing.assert_array_equal(y.reshape(4, 4), want)
    m.widen(x, 0.5, y, 0, False, 4)           # a number for every lane
    assert not y.any()


def test_read_only_arguments_may_be_copied_but_mut_ones_must_be_in_place(m):
    x = np.arange(200, dtype=np.float32)[::2]   # not contiguous: copied for a read-only parameter
    y = np.zeros(100, dtype=np.float32)
    m.axpy(1.0, x, y, 100)
    np.testing.assert_array_equal(y, x)
    with pytest.raises(kforge.UsageError, match="'y' is &mut \\[f32\\]: the array is not C-contiguous"):
        m.axpy(1.0, y, np.zeros(200, dtype=np.float32)[::2], 100)
    frozen = np.zeros(100, dtype=np.float32)
    frozen.flags.writeable = False
    with pytest.raises(kforge.UsageError, match="'y' is &mut \\[f32\\] but the array is read-only"):
        m.axpy(1.0, x, frozen, 100)


def test_argument_errors_name_the_parameter(m):
    x = np.zeros(10, dtype=np.float32)
    with pytest.raises(kforge.UsageError, match="parameter 'x' is &\\[f32\\] and needs dtype '<f4'.*'<f8'"):
        m.axpy(1.0, x.astype(np.float64), x, 10)
    with pytest.raises(kforge.UsageError, match="takes 4 arguments \\(a, x, y, n\\), not 3"):
        m.axpy(1.0, x, x)
    with pytest.raises(kforge.UsageError, match="parameter 'n' is u32: -1 does not fit u32"):
        m.axpy(1.0, x, x.copy(), -1)
    with pytest.raises(kforge.UsageError, match="parameter 'n' is u32: give an integer, not 2.5"):
        m.axpy(1.0, x, x.copy(), 2.5)
    with pytest.raises(kforge.UsageError, match="parameter 'x' is a buffer &\\[f32\\]: give a NumPy array"):
        m.axpy(1.0, [1.0, 2.0], x, 2)
    with pytest.raises(kforge.UsageError, match="unknown backend 'gpu'"):
        m.axpy(1.0, x, x.copy(), 10, backend="gpu")
    with pytest.raises(AttributeError, match="has no kernel 'axpi'; its kernels are: axpy, widen"):
        m.axpi


def test_a_fault_is_an_exception_at_its_source_line():
    s = kforge.compile(SAXPY)
    x = np.zeros(10, dtype=np.float32)
    with pytest.raises(kforge.KernelFault) as e:
        s.saxpy(1.0, x, x.copy(), 11)
    assert e.value.status == "KF_ERR_RUNTIME"
    assert e.value.file == SAXPY and e.value.line == 22
    assert re.search(r"saxpy\.kf:22:\d+: out-of-bounds load of x\[10\] \(length 10\)", str(e.value))


def test_compile_errors_carry_every_diagnostic():
    with pytest.raises(kforge.CompileError) as e:
        kforge.compile("kernel k(y: &mut [f32]) {\n    y[0] = 1.0 + true;\n    y[1] = nope;\n}\n", name="bad.kf")
    text = str(e.value)
    assert text.startswith("bad.kf:2:")
    assert "    y[0] = 1.0 + true;\n" in text and "^" in text
    assert "bad.kf:3:" in text and "nope" in text
    assert (e.value.file, e.value.line) == ("bad.kf", 2)
    assert [d[1] for d in e.value.diagnostics] == [2, 3]
    with pytest.raises(kforge.CompileError, match="BLOCK"):
        kforge.compile(SAXPY, defines={"BLOCK": "true"})


def test_wrong_sources_and_a_freed_module_raise():
    with pytest.raises(TypeError, match="not int"):
        kforge.compile(123)
    with pytest.raises(FileNotFoundError, match="nonexistent"):
        kforge.compile("/nonexistent/x.kf")
    mod = kforge.compile(KERNELS, name="gone.kf")
    k = mod.axpy
    mod.__del__()
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(kforge.UsageError, match="was freed"):
        k(2.0, x, y, 8)
    with pytest.raises(kforge.UsageError, match="was freed"):
        mod.emit("ptx")


def test_keywords_and_values_out_of_range_raise(m):
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(kforge.UsageError, match="past the largest f32"):
        m.axpy(1e300, x, y, 8)
    with pytest.raises(kforge.UsageError, match="past the largest f32"):
        m.axpy(10 ** 400, x, y, 8)
    with pytest.raises(kforge.UsageError, match="count must be a non-negative int"):
        m.axpy(2.0, x, y, 8, count=-5)
    with pytest.raises(kforge.UsageError, match="count=5 has no effect, the grid comes from its @schedule"):
        m.axpy(2.0, x, y, 8, count=5)
    with pytest.raises(kforge.UsageError, match="shared must be a number of bytes"):
        m.axpy(2.0, x, y, 8, shared=-1)
    with pytest.raises(kforge.UsageError, match="no kernel 'nope'"):
        m.emit("ptx", kernel="nope")
    with pytest.raises(IsADirectoryError):
        kforge.compile(os.path.dirname(__file__))
    with pytest.raises(kforge.UsageError, match="opt must be 0 or 1"):
        kforge.compile(KERNELS, opt=7)
    m.axpy(3.4e38, x, y, 8)   # the largest f32 region still fits


ALIAS = """
@schedule(block = 32, grid = cdiv(n, 32))
kernel twomut(a: &mut [f32], b: &mut [f32], n: u32) {
    let i = global_id.x;
    if i < n { a[i] += 1.0; b[i] += 2.0; }
}

@schedule(block = 32, grid = cdiv(n, 32))
kernel quad(x: &[f32], y: &mut [f32], n: u32) {
    let i = global_id.x;
    if i < n {
        let v = (x as &[f32x4])[i] * f32x4(2.0);
        y[4 * i] = v.x; y[4 * i + 1] = v.y; y[4 * i + 2] = v.z; y[4 * i + 3] = v.w;
    }
}
"""


def _unaligned(n):
    """A float32 array of n elements at an odd address (copied, not wrapped)."""
    return np.frombuffer(bytearray(4 * n + 1), dtype=np.float32, offset=1, count=n)


def test_arrays_sharing_memory_keep_their_meaning_when_copied():
    """Host arrays the runtime cannot use in place (an odd address) are
    copied; the same array given to two &mut parameters still sees both
    writes, and an array overlapping a written one is refused, as kf_dispatch
    refuses it for memory used in place (found by a property probe)."""
    k = kforge.compile(ALIAS, name="alias.kf")
    for a in (np.zeros(4, np.float32), _unaligned(4)):
        k.twomut(a, a, 4)
        assert a.tolist() == [3.0] * 4
        x = a.copy() if a.flags.writeable else a
        with pytest.raises(kforge.UsageError, match="parameters 'x' and 'y' share memory and 'y' is written"):
            k.quad(x[:4], x[:4], 1)
    big = np.arange(17, dtype=np.float32)
    y = np.zeros(16, np.float32)
    k.quad(big[1:], y, 4)   # 4-byte aligned, read as 16-byte vectors: copied, not refused
    assert y.tolist() == (2 * big[1:]).tolist()


def test_launch_shapes_and_vector_values_take_numpy_and_python_forms(m):
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    m.axpy(1.0, x, y, 8, grid=np.int64(1), block=(np.int32(64),))
    assert y.tolist() == [1.0] * 8
    for bad in (2 ** 32 + 1, 2.0, True, (1, 0)):
        with pytest.raises(kforge.UsageError, match="grid must be a positive int below 2\\*\\*32"):
            m.axpy(1.0, x, y, 8, grid=bad)
    h, out = np.ones(4, np.float16), np.zeros(16, np.float32)
    m.widen(h, range(4), out, 0, True, 4)
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0] * 4
    m.widen(h, np.array(2.0), out, 0, True, 4)
    assert out.tolist() == [2.0] * 16


def test_calls_from_several_threads_are_serialised(m):
    """One device serves every thread, and kforge.h drives a device from one
    thread at a time: the package takes a lock around each call."""
    import threading
    out = {}

    def work(t):
        x = np.full(64, t, np.float32)
        for _ in range(50):
            y = np.zeros(64, np.float32)
            m.axpy(2.0, x, y, 64)
            out.setdefault(t, set()).add(tuple(y.tolist()))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert out == {t: {(2.0 * t,) * 64} for t in range(4)}


def test_a_source_that_is_not_utf8_is_a_compile_error():
    with pytest.raises(kforge.CompileError, match="invalid UTF-8 byte 0xff"):
        kforge.compile(b"kernel k(y: &mut [f32]) { y[0] = 1.0; } \xff\n")


def test_defines_and_optimisation_level():
    s = kforge.compile(SAXPY, defines={"BLOCK": 128}, opt=0)
    assert s.saxpy.schedule["block"] == (128, 1, 1)
    assert "block(128, 1, 1)" in s.emit("ir")
    f = kforge.compile("const FLAG: bool = false;\nkernel k(y: &mut [u32]) { y[0] = select(FLAG, 1, 2); }\n",
                       defines={"FLAG": True})
    y = np.zeros(1, np.uint32)
    f.k(y, grid=1, block=1)
    assert y.tolist() == [1]


def test_emit_text_targets(m):
    ptx = m.emit("ptx", kernel="axpy", arch=80)
    assert ".target sm_80" in ptx and ".entry axpy" in ptx and ".entry widen" not in ptx
    assert 'extern "C" __global__' in m.emit("cuda")
    with pytest.raises(kforge.UsageError, match="unknown target 'sass'"):
        m.emit("sass")


def test_cuda_backend_without_a_gpu_is_a_device_error(m):
    env = dict(os.environ, KF_LIBCUDA="/nonexistent/libcuda.so.1")
    code = ("import numpy as np, kforge\n"
            "m = kforge.compile('kernel k(y: &mut [f32]) { y[0] = 1.0; }')\n"
            "try:\n    m.k(np.zeros(1, np.float32), backend='ptx')\n"
            "except kforge.DeviceError as e:\n    print('DeviceError', e.status, e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("DeviceError KF_ERR_DEVICE no CUDA driver")


def test_a_missing_library_says_how_to_point_at_one():
    env = dict(os.environ, KFORGE_LIBRARY="/nonexistent/libkforge.so")
    out = subprocess.run([sys.executable, "-c", "import kforge"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "cannot load libkforge.so" in out.stderr and "KFORGE_LIBRARY" in out.stderr


def readme_python_blocks():
    """The ```python blocks of README.md's "Use it from Python" section."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("\n## Use it from Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_example_runs_as_written():
    blocks = readme_python_blocks()
    assert len(blocks) >= 2 and "torch" not in blocks[0]
    exec(compile(blocks[0], "README.md (Use it from Python)", "exec"), {})
