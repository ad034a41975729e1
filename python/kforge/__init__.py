"""kforge from Python: compile .kf kernels and run them on the CPU
interpreter or an NVIDIA GPU, with NumPy arrays and PyTorch CUDA tensors.

    import numpy as np, kforge
    m = kforge.compile("kernels/saxpy.kf")          # a path, or the source text
    x = np.arange(1024, dtype=np.float32)
    y = np.zeros(1024, dtype=np.float32)
    m.saxpy(2.0, x, y, 1024, backend="cpu")          # arguments in binding order
    # y now holds 2*x + y: a &mut parameter's array receives the result in place

Arguments: a scalar parameter takes a Python number (a vector parameter a
number for every lane, or a sequence of them); a buffer parameter takes a
C-contiguous NumPy array of its element type (f16 float16, bf16 as uint16
bits, a vector element type as its scalar type with a length that is a
multiple of the width) or a CUDA tensor (PyTorch, or anything with
__cuda_array_interface__), which is used in place, without a copy, on the
GPU of the tensor and on PyTorch's current stream (the launch is
asynchronous there, like a PyTorch op, unless sync=True). On the cpu
backend NumPy arrays are used in place too; on a GPU they are copied in
and, for &mut parameters, back.

Errors are exceptions (KforgeError and its subclasses) whose message is
kforge's, with the file:line:col of the .kf source where there is one.
This is pure Python over the shared library (ctypes): see _lib.py for how
it is found (KFORGE_LIBRARY overrides)."""

import ctypes
import math
import operator
import os
import threading
from ctypes import byref, c_float, c_size_t, c_void_p

import numpy as np

from . import _lib

__version__ = "0.1.0"
__all__ = ["compile", "Module", "Kernel", "KforgeError", "CompileError", "UsageError", "KernelFault", "DeviceError",
           "version", "library_path"]

_C, _PATH = _lib.load()


def version():
    """The version of the loaded libkforge."""
    return _C.kf_version().decode()


def library_path():
    """The file the library was loaded from."""
    return _PATH


if version().split(".")[:2] != __version__.split(".")[:2]:
    raise ImportError(f"kforge: the package is {__version__} but {_PATH} is {version()}; install matching versions")

# ---- errors ----------------------------------------------------------------------------


class KforgeError(Exception):
    """An error of the library: .status (kf_status name), .file, .line, .col
    (where the .kf source is at fault, else None) and .log (NVRTC or JIT log)."""

    def __init__(self, message, status="KF_ERR_USAGE", file=None, line=None, col=None, log=None):
        super().__init__(message)
        self.status, self.file, self.line, self.col, self.log = status, file, line, col, log


class CompileError(KforgeError):
    """The .kf program is invalid; the message holds every diagnostic
    (file:line:col: error: ..., the source line and a caret);
    .diagnostics lists them as (file, line, col, message)."""


class UsageError(KforgeError, ValueError):
    """Bad arguments: a wrong dtype, a missing argument, a bad launch shape."""


class KernelFault(KforgeError):
    """The kernel faulted (the interpreter names the .kf line), or the launch failed."""


class DeviceError(KforgeError):
    """No driver or GPU, NVRTC missing or failing, a JIT error."""


_ERRORS = {_lib.ERR_SOURCE: CompileError, _lib.ERR_USAGE: UsageError, _lib.ERR_RUNTIME: KernelFault,
           _lib.ERR_DEVICE: DeviceError}


def _raise(status, err):
    loc = err.loc
    cls = _ERRORS.get(status, KforgeError)
    log = err.log.decode(errors="replace") if err.log else None
    file = loc.file.decode(errors="replace") if loc.line and loc.file else None
    exc = cls(err.msg.decode(errors="replace") + (f"\n{log}" if log else ""), _C.kf_status_name(status).decode(),
              file, loc.line or None, loc.col or None, log)
    _C.kf_error_clear(byref(err))
    raise exc


def _check(status, err):
    if status != _lib.OK:
        _raise(status, err)


# ---- types -----------------------------------------------------------------------------

_NUMPY = {"bool": np.bool_, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
          "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f16": np.float16, "bf16": np.uint16,
          "f32": np.float32, "f64": np.float64}
_TORCH = {"bool": "torch.bool", "i8": "torch.int8", "u8": "torch.uint8", "i16": "torch.int16", "u16": "torch.uint16",
          "i32": "torch.int32", "u32": "torch.uint32", "i64": "torch.int64", "u64": "torch.uint64",
          "f16": "torch.float16", "bf16": "torch.bfloat16", "f32": "torch.float32", "f64": "torch.float64"}
_BITS = {"bool": 1, "i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64}


class Param:
    """A kernel parameter: name, type (as .kf spells it), scalar, lanes,
    is_buffer, mutable (a &mut buffer), align (buffers: the byte alignment
    the kernel's widest access needs)."""

    def __init__(self, p):
        buf = ctypes.create_string_buffer(64)
        self.name = p.name.decode()
        self.type = _C.kf_type_str(p.type, buf, 64).decode()
        self.scalar = _lib.SCALARS[p.type.scalar]
        self.lanes = p.type.lanes
        self.is_buffer = p.type.kind == _lib.TK_BUFFER
        self.mutable = bool(p.type.flags & _lib.TF_MUT)
        self._type = _lib.Type(p.type.kind, p.type.scalar, p.type.lanes, p.type.flags, p.type.len)
        self.align = max(p.align, _C.kf_type_size(self.elem_type())) if self.is_buffer else 0

    def elem_type(self):
        kind = _lib.TK_SCALAR if self.lanes == 1 else _lib.TK_VECTOR
        return _lib.Type(kind, self._type.scalar, self.lanes, 0, 0)

    def __repr__(self):
        return f"{self.name}: {self.type}"


def _scalar_value(p, x, what):
    """The kf_value of one lane of scalar type p.scalar from a Python number."""
    s = p.scalar
    if isinstance(x, np.generic):
        x = x.item()
    if s == "bool":
        if not isinstance(x, (bool, int)) or x not in (0, 1):
            raise UsageError(f"parameter '{p.name}' is {p.type}: give True or False, not {x!r}")
        return _C.kf_value_bool(bool(x))
    if s in _BITS:
        if isinstance(x, bool) or not isinstance(x, int):
            raise UsageError(f"parameter '{p.name}' is {p.type}: give an integer, not {x!r}{what}")
        signed = s[0] == "i"
        lo, hi = (-(1 << (_BITS[s] - 1)), (1 << (_BITS[s] - 1)) - 1) if signed else (0, (1 << _BITS[s]) - 1)
        if not lo <= x <= hi:
            raise UsageError(f"parameter '{p.name}' is {p.type}: {x} does not fit {s}{what}")
        return getattr(_C, "kf_value_" + s)(x)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise UsageError(f"parameter '{p.name}' is {p.type}: give a number, not {x!r}{what}")
    try:
        fx = float(x)
    except OverflowError:
        raise UsageError(f"parameter '{p.name}' is {p.type}: {x!r} is past the largest {s}{what}") from None
    v = getattr(_C, "kf_value_" + s)(fx)
    inf = {"f16": 0x7c00, "bf16": 0x7f80, "f32": 0x7f800000}.get(s)
    if inf is not None and math.isfinite(fx) and (v.lane[0] & ~(1 << (_C.kf_type_size(v.type) * 8 - 1))) == inf:
        raise UsageError(f"parameter '{p.name}' is {p.type}: {x!r} is past the largest {s}{what} (it would be inf)")
    return v


def _value(p, x):
    """The kf_value for scalar or vector parameter p."""
    if p.lanes == 1:
        return _scalar_value(p, x, "")
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x.item()
    seq = isinstance(x, (list, tuple, range, np.ndarray))
    lanes = list(x) if seq else [x] * p.lanes
    if len(lanes) != p.lanes:
        raise UsageError(f"parameter '{p.name}' is {p.type}: give one number or {p.lanes}, not {len(lanes)}")
    v = _lib.Value()
    v.type = p.elem_type()
    for i, lane in enumerate(lanes):
        v.lane[i] = _scalar_value(p, lane, f" (lane {i})").lane[0]
    return v


# ---- devices -----------------------------------------------------------------------------

class _Device:
    """An open kf_device; closed when the last module using it goes."""

    def __init__(self, backend, ordinal):
        self.ptr = c_void_p()
        self.backend = backend
        err = _lib.Error()
        _check(_C.kf_device_open(_lib.BACKENDS[backend], ordinal, byref(self.ptr), byref(err)), err)
        self.stream = None   # the caller's stream in use (PyTorch's), or None: the device's own

    def use_stream(self, stream):
        """Sends the work to PyTorch's stream (an int), or back to the device's
        own (None). Asked at every call with tensors: it also makes the
        device's context current again, whatever PyTorch made current."""
        if stream is None and self.stream is None:
            return
        err = _lib.Error()
        if stream is None:
            _check(_C.kf_device_reset_stream(self.ptr, byref(err)), err)
        else:
            _check(_C.kf_device_set_stream(self.ptr, c_void_p(stream), byref(err)), err)
        self.stream = stream

    def __del__(self):
        if getattr(self, "ptr", None) and _C:
            _C.kf_device_close(self.ptr)
            self.ptr = None


_devices = {}
# kforge.h drives a device (its launches, buffers and pipelines) from one
# thread at a time, and every call shares the devices of _devices: calls,
# and the pipelines a module frees, take this lock (re-entrant: a module's
# __del__ may run inside a call).
_device_lock = threading.RLock()


def _device(backend, ordinal):
    key = (backend, 0 if backend == "cpu" else ordinal)
    if key not in _devices:
        _devices[key] = _Device(backend, key[1])
    return _devices[key]


# ---- arguments ---------------------------------------------------------------------------

def _is_cuda_tensor(x):
    if hasattr(x, "is_cuda") and hasattr(x, "data_ptr"):
        return bool(x.is_cuda)
    return hasattr(x, "__cuda_array_interface__")


def _cuda_array(p, x):
    """(pointer, elements, device index, torch stream or None) of a CUDA
    tensor for buffer parameter p, checked against its element type."""
    if hasattr(x, "data_ptr") and hasattr(x, "is_cuda"):       # PyTorch
        if str(x.dtype) != _TORCH[p.scalar]:
            raise UsageError(f"parameter '{p.name}' is {p.type} and needs a {_TORCH[p.scalar]} tensor, not {x.dtype}")
        if not x.is_contiguous():
            raise UsageError(f"parameter '{p.name}': the tensor is not contiguous; pass x.contiguous()")
        import torch
        stream = torch.cuda.current_stream(x.device).cuda_stream
        return x.data_ptr(), x.numel(), x.device.index or 0, stream
    cai = x.__cuda_array_interface__                             # CuPy, Numba, ...
    want = np.dtype(_NUMPY[p.scalar]).str
    if np.dtype(cai["typestr"]).str != want:
        raise UsageError(f"parameter '{p.name}' is {p.type} and needs dtype '{want}', not '{cai['typestr']}'")
    if cai.get("strides") is not None and cai["strides"] != _c_strides(cai["shape"], np.dtype(want).itemsize):
        raise UsageError(f"parameter '{p.name}': the array is not C-contiguous")
    n = int(np.prod(cai["shape"])) if cai["shape"] else 1
    return cai["data"][0], n, None, None


def _c_strides(shape, size):
    strides, step = [], size
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def _host_array(p, x):
    """A NumPy array for buffer parameter p: x itself when it can be used as
    it is (and must be, for &mut), else a contiguous copy."""
    if not isinstance(x, np.ndarray):
        raise UsageError(f"parameter '{p.name}' is a buffer {p.type}: give a NumPy array or a CUDA tensor, "
                         f"not {type(x).__name__}")
    want = np.dtype(_NUMPY[p.scalar])
    if x.dtype != want:
        raise UsageError(f"parameter '{p.name}' is {p.type} and needs dtype '{want.str}' ({want.name}), "
                         f"but the array has '{x.dtype.str}' ({x.dtype.name})")
    if p.mutable and not x.flags.writeable:
        raise UsageError(f"parameter '{p.name}' is {p.type} but the array is read-only")
    if not x.flags.c_contiguous:
        if p.mutable:
            raise UsageError(f"parameter '{p.name}' is {p.type}: the array is not C-contiguous, so the result "
                             f"could not be written back in place; pass np.ascontiguousarray({p.name}) and read that")
        x = np.ascontiguousarray(x)
    if x.size % p.lanes:
        raise UsageError(f"parameter '{p.name}' is {p.type}: the array's {x.size} elements are not a multiple "
                         f"of {p.lanes}")
    return x


def _host_alias(p, x, host):
    """For host array x of parameter p, given the (array, param, buffer) bound
    before it: the buffer of an earlier &mut argument that is the very same
    array when p is &mut too (both then see one memory, as in place), None
    when x shares no memory with the others; any other sharing with a written
    argument is refused, as kf_dispatch refuses it (a copy per argument
    would run the kernel on snapshots and lose writes)."""
    for y, q, b in host:
        if not np.shares_memory(x, y):
            continue
        if p.mutable and q.mutable and x.__array_interface__ == y.__array_interface__:
            return b
        if p.mutable or q.mutable:
            w = p.name if p.mutable else q.name
            raise UsageError(f"parameters '{q.name}' and '{p.name}' share memory and '{w}' is written by the "
                             f"kernel: pass separate arrays (or the same array to two &mut parameters)")
    return None


class _Binding:
    """The kf_args of one call, the buffers behind them, and what to copy back."""

    def __init__(self):
        self.buffers, self.copy_back, self.keep = [], [], []

    def buffer(self, dev, p, ptr, elems, wrap, err):
        b = c_void_p()
        t = p.elem_type()
        if wrap:
            _check(_C.kf_buffer_wrap(dev.ptr, t, elems, c_void_p(ptr), byref(b), byref(err)), err)
        else:
            _check(_C.kf_buffer_create(dev.ptr, t, elems, byref(b), byref(err)), err)
        self.buffers.append(b)
        return b

    def free(self):
        for b in self.buffers:
            _C.kf_buffer_destroy(b)
        self.buffers = []


# ---- modules and kernels -----------------------------------------------------------------

class Kernel:
    """A kernel of a module: .name, .params (binding order), .schedule
    (block, grid_dims, has_shared, min_blocks: 0 when not given). Call it with
    its arguments."""

    def __init__(self, module, ptr):
        self._module, self._ptr = module, ptr
        self.name = _C.kf_kernel_name(ptr).decode()
        self.params = [Param(_C.kf_kernel_param(ptr, i).contents) for i in range(_C.kf_kernel_param_count(ptr))]
        info = _lib.ScheduleInfo()
        _C.kf_kernel_schedule(ptr, byref(info))
        self.schedule = {"block": tuple(info.block), "grid_dims": info.grid_dims, "has_shared": bool(info.has_shared),
                         "min_blocks": info.min_blocks}

    def __repr__(self):
        return f"<kforge kernel {self.name}({', '.join(map(repr, self.params))})>"

    def __call__(self, *args, backend=None, device=None, grid=None, block=None, shared=None, count=None,
                 sync=None, timed=False):
        """Runs the kernel once. backend: "cpu", "cuda" or "ptx" (default: cuda
        when a CUDA tensor is given, else cpu); device: the GPU (default: the
        tensors'); grid, block (int or tuple) override the schedule; shared:
        dynamic shared bytes, a positive number overrides the schedule's
        (0 or None keeps it); count: the elements of a schedule without a
        grid (default: the first buffer's). sync: wait for the kernel
        (default: yes, but not on PyTorch's stream); timed=True waits and
        returns the device milliseconds."""
        if len(args) != len(self.params):
            names = ", ".join(p.name for p in self.params)
            raise UsageError(f"kernel '{self.name}' takes {len(self.params)} arguments ({names}), "
                             f"not {len(args)}")
        cuda_args = [a for a in args if _is_cuda_tensor(a)]
        backend = backend or ("cuda" if cuda_args else "cpu")
        if backend not in _lib.BACKENDS:
            raise UsageError(f"unknown backend '{backend}': expected cpu, cuda or ptx")
        if cuda_args and backend == "cpu":
            raise UsageError(f"kernel '{self.name}': CUDA tensors need backend 'cuda' or 'ptx', not 'cpu'")
        return self._run(args, backend, device, _launch(grid, block, shared), count, sync, timed)

    def _bind(self, args, dev, backend, bind, err):
        kargs = (_lib.Arg * max(1, len(args)))()
        first = None
        torch_stream = None
        host = []   # (the argument, its param, its kf buffer) of each host array bound so far
        for i, (p, x) in enumerate(zip(self.params, args)):
            if not p.is_buffer:
                kargs[i].value = _value(p, x)
                continue
            if _is_cuda_tensor(x):
                ptr, n, _, stream = _cuda_array(p, x)
                torch_stream = stream if stream is not None else torch_stream
                kargs[i].buf = bind.buffer(dev, p, ptr, n // p.lanes, True, err)
            else:
                a = _host_array(p, x)
                n = a.size // p.lanes
                b = _host_alias(p, x, host)   # the very array of an earlier &mut argument: its buffer
                if b is None:
                    bind.keep.append(a)
                    wrap = backend == "cpu" and a.ctypes.data % p.align == 0
                    b = bind.buffer(dev, p, a.ctypes.data if n else 0, n, wrap, err)
                    if not wrap:
                        _check(_C.kf_buffer_upload(b, c_void_p(a.ctypes.data), a.nbytes, byref(err)), err)
                        if p.mutable:
                            bind.copy_back.append((b, x))
                kargs[i].buf = b
                host.append((x, p, b))
            if first is None:
                first = n   # the default count of a schedule without a grid, as on the command line
        return kargs, first, torch_stream

    def _run(self, args, backend, device, launch, count, sync, timed):
        with _device_lock:
            return self._run_locked(args, backend, device, launch, count, sync, timed)

    def _run_locked(self, args, backend, device, launch, count, sync, timed):
        ordinal = device if device is not None else _tensor_device(args)
        dev = _device(backend, ordinal or 0)
        pipe = self._module._pipeline(self, dev, backend, ordinal or 0)
        bind, err = _Binding(), _lib.Error()
        try:
            kargs, first, stream = self._bind(args, dev, backend, bind, err)
            if backend != "cpu":
                dev.use_stream(stream)
            if count is not None and (isinstance(count, bool) or not isinstance(count, int) or not 0 <= count < 2 ** 64):
                raise UsageError(f"kernel '{self.name}': count must be a non-negative int below 2**64, not {count!r}")
            if count is not None and (self.schedule["grid_dims"] or launch.grid[0]):
                raise UsageError(f"kernel '{self.name}': count={count} has no effect, the grid comes from "
                                 f"{'grid=' if launch.grid[0] else 'its @schedule'} (leave count out)")
            if self.schedule["grid_dims"] == 0 and not launch.grid[0]:
                launch.count = count if count is not None else (first or 0)
            mode = _lib.DISPATCH_TIMED if timed else (_lib.DISPATCH_ASYNC if sync is False or
                                                     (sync is None and stream is not None and not bind.copy_back)
                                                     else _lib.DISPATCH_SYNC)
            ms = c_float(0)
            _check(_C.kf_dispatch(pipe, kargs, len(args), byref(launch), mode, byref(ms), byref(err)), err)
            for b, a in bind.copy_back:
                _check(_C.kf_buffer_download(b, c_void_p(a.ctypes.data), a.nbytes, byref(err)), err)
            return ms.value if timed else None
        finally:
            bind.free()


def _tensor_device(args):
    devs = {d for d in (_cuda_array_device(a) for a in args if _is_cuda_tensor(a)) if d is not None}
    if len(devs) > 1:
        raise UsageError(f"the CUDA tensors are on different GPUs ({sorted(devs)}); kforge launches on one")
    return devs.pop() if devs else None


def _cuda_array_device(x):
    if not hasattr(x, "is_cuda"):
        return None
    dev = getattr(x, "device", None)
    if dev is None or not hasattr(dev, "index"):
        raise UsageError(f"a CUDA tensor argument ({type(x).__name__}) has no .device.index: pass a torch tensor "
                         "or an object with __cuda_array_interface__")
    return dev.index or 0


def _dim(d):
    """d as a positive int below 2**32 (NumPy integers too), or None."""
    if isinstance(d, (bool, np.bool_)):
        return None
    try:
        d = operator.index(d)
    except TypeError:
        return None
    return d if 0 < d < 2 ** 32 else None


def _dims(v, what):
    if v is None:
        return (0, 0, 0)
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    dims = tuple(_dim(d) for d in t)
    if not 1 <= len(dims) <= 3 or None in dims:
        raise UsageError(f"{what} must be a positive int below 2**32 or a tuple of 1 to 3 of them, not {v!r}")
    return dims + (1,) * (3 - len(dims))


def _launch(grid, block, shared):
    l = _lib.Launch()
    l.grid[:] = _dims(grid, "grid")
    l.block[:] = _dims(block, "block")
    if shared is not None and (isinstance(shared, bool) or not isinstance(shared, int) or not 0 <= shared < 2 ** 32):
        raise UsageError(f"shared must be a number of bytes, an int in [0, 2**32), not {shared!r}")
    l.dyn_shared = shared or 0
    return l


class Module:
    """A compiled .kf file: .file, .kernels (name -> Kernel), and each
    kernel as an attribute (m.saxpy)."""

    def __init__(self, ptr):
        self._ptr = ptr
        self._pipelines = {}
        self.file = _C.kf_module_file(ptr).decode()
        self.kernels = {}
        for i in range(_C.kf_module_kernel_count(ptr)):
            k = Kernel(self, _C.kf_module_kernel_at(ptr, i))
            self.kernels[k.name] = k

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"{self.__dict__.get('file', 'the module')} has no kernel '{name}'; "
                             f"its kernels are: {', '.join(kernels) or 'none'}")

    def __dir__(self):
        return list(super().__dir__()) + list(self.kernels)

    def _pipeline(self, k, dev, backend, ordinal):
        if not self._ptr:
            raise UsageError(f"the module of kernel '{k.name}' ({self.file}) was freed; compile it again")
        key = (k.name, backend, ordinal)
        if key not in self._pipelines:
            p, err = c_void_p(), _lib.Error()
            _check(_C.kf_pipeline_create(dev.ptr, self._ptr, k._ptr, byref(p), byref(err)), err)
            self._pipelines[key] = (dev, p)   # the device stays open while the pipeline lives
        return self._pipelines[key][1]

    def emit(self, target="ptx", kernel=None, arch=90, lineinfo=False, pdl_trigger=False):
        """The PTX, CUDA-C or IR text (str) of a kernel or of all, or the
        linked cubin (bytes, target="cubin"); pdl_trigger: sm_90 kernels also
        let the next programmatic dependent launch start early."""
        if target not in _lib.TARGETS:
            raise UsageError(f"unknown target '{target}': expected ptx, cuda, ir or cubin")
        if not self._ptr:
            raise UsageError(f"the module {self.file} was freed; compile it again")
        if kernel and kernel not in self.kernels:
            raise UsageError(f"no kernel '{kernel}' in {self.file}: it has {', '.join(self.kernels) or 'none'}")
        k = self.kernels[kernel]._ptr if kernel else None
        out, n, err = c_void_p(), c_size_t(), _lib.Error()
        o = _lib.EmitOptions(_lib.TARGETS[target], arch, lineinfo, pdl_trigger)
        _check(_C.kf_emit(self._ptr, k, byref(o), byref(out), byref(n), byref(err)), err)
        try:
            data = ctypes.string_at(out, n.value)
        finally:
            _C.kf_free(out)
        return data if target == "cubin" else data.decode()

    def __del__(self):
        ptr = getattr(self, "_ptr", None)
        if not ptr or not _C:
            return
        with _device_lock:
            for _, p in self._pipelines.values():
                _C.kf_pipeline_destroy(p)
        self._pipelines = {}
        _C.kf_module_free(ptr)
        self._ptr = None


def _compile_error(m):
    diags = []
    for i in range(_C.kf_module_diag_count(m)):
        d = _lib.Diagnostic()
        if _C.kf_module_diag(m, i, byref(d)):
            diags.append(((d.loc.file or b"").decode(errors="replace"), d.loc.line, d.loc.col,
                          d.message.decode(errors="replace")))
    text = _C.kf_module_diagnostics(m).decode(errors="replace")   # (a source line may not be UTF-8)
    first = diags[0] if diags else (None, None, None, None)
    exc = CompileError(text.rstrip("\n"), "KF_ERR_SOURCE", *first[:3])
    exc.diagnostics = diags
    return exc


def _define_text(v):
    """A define's value as -D takes it: True/False as the language's true/false."""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    return str(v)


def compile(source, defines=None, opt=1, name=None):
    """Compiles a .kf file (a path) or .kf source text into a Module.
    defines: {NAME: value} overrides of module constants (-D); opt: 0 or
    1 (the IR optimiser); name: how source text is named in diagnostics.
    A program with errors raises CompileError."""
    if opt not in (0, 1):
        raise UsageError(f"opt must be 0 or 1 (the IR optimiser off or on), not {opt!r}")
    defs = list((defines or {}).items())
    arr = (_lib.Define * max(1, len(defs)))(*[_lib.Define(str(k).encode(), _define_text(v).encode()) for k, v in defs])
    opts = _lib.CompileOpts(arr, len(defs), 2 if opt else 1)
    m = c_void_p()
    if not isinstance(source, (str, bytes, bytearray, memoryview, os.PathLike)):
        raise TypeError(f"compile() takes .kf source text (str or bytes) or a path, not {type(source).__name__}")
    is_path = isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                                 and os.path.isfile(source))
    if isinstance(source, (str, os.PathLike)) and "\n" not in str(source) and os.path.isdir(source):
        raise IsADirectoryError(f"'{source}' is a directory: compile() takes a .kf file or source text")
    if isinstance(source, str) and not is_path and "\n" not in source and source.strip().endswith(".kf"):
        raise FileNotFoundError(f"no .kf file '{source}' (source text is compiled as is; this looks like a path)")
    if is_path:
        err = _lib.Error()
        st = _C.kf_compile_file(os.fsencode(source), byref(opts), byref(m), byref(err))
        if st != _lib.OK and st != _lib.ERR_SOURCE:
            if m:
                _C.kf_module_free(m)
            _raise(st, err)
        _C.kf_error_clear(byref(err))
    else:
        text = source.encode() if isinstance(source, str) else bytes(source)
        st = _C.kf_compile((name or "<string>").encode(), text, len(text), byref(opts), byref(m))
    if st == _lib.ERR_SOURCE:
        try:
            exc = _compile_error(m)
        finally:
            _C.kf_module_free(m)
        raise exc
    if st != _lib.OK:
        if m:
            _C.kf_module_free(m)
        raise KforgeError(f"compiling failed: {_C.kf_status_name(st).decode()}", _C.kf_status_name(st).decode())
    return Module(m)
