"""The C API of include/kforge.h through ctypes: the library found and
loaded once, the structures it passes by value or pointer, and each
function's argument and result types. Nothing here decides anything; the
package (kforge/__init__.py) builds the Python API on top."""

import ctypes
import ctypes.util
import os
import subprocess
from ctypes import (POINTER, Structure, c_bool, c_char, c_char_p, c_double, c_float, c_int, c_int8, c_int16,
                    c_int32, c_int64, c_size_t, c_uint, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)

# kf_status
OK, ERR_SOURCE, ERR_USAGE, ERR_RUNTIME, ERR_DEVICE, ERR_IO, ERR_NOMEM = range(7)
# kf_scalar, in the order of the header's KF_SCALARS table
SCALARS = ["none", "bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64"]
# kf_type_kind
TK_VOID, TK_SCALAR, TK_VECTOR, TK_BUFFER = 0, 1, 2, 3
TF_MUT = 1
# kf_backend, kf_dispatch_mode, kf_target, kf_opt_level
BACKENDS = {"cpu": 0, "cuda": 1, "ptx": 2}
DISPATCH_SYNC, DISPATCH_ASYNC, DISPATCH_TIMED = 0, 1, 2
TARGETS = {"ptx": 0, "cuda": 1, "ir": 2, "cubin": 3}


class Type(Structure):
    _fields_ = [("kind", c_uint8), ("scalar", c_uint8), ("lanes", c_uint8), ("flags", c_uint8), ("len", c_uint32)]


class Value(Structure):
    _fields_ = [("type", Type), ("lane", c_uint64 * 16)]


class Loc(Structure):
    _fields_ = [("file", c_char_p), ("line", c_uint32), ("col", c_uint32)]


class Error(Structure):
    _fields_ = [("status", c_int), ("msg", c_char * 1024), ("loc", Loc), ("log", c_char_p)]


class Define(Structure):
    _fields_ = [("name", c_char_p), ("value", c_char_p)]


class CompileOpts(Structure):
    _fields_ = [("defines", POINTER(Define)), ("ndefines", c_uint32), ("opt", c_int)]


class Diagnostic(Structure):
    _fields_ = [("kind", c_int), ("loc", Loc), ("message", c_char_p)]


class Param(Structure):
    _fields_ = [("name", c_char_p), ("type", Type), ("loc", Loc), ("align", c_uint32)]


class ScheduleInfo(Structure):
    _fields_ = [("block", c_uint32 * 3), ("grid_dims", c_uint32), ("has_shared", c_bool), ("loc", Loc),
                ("min_blocks", c_uint32)]


class EmitOptions(Structure):
    _fields_ = [("target", c_int), ("arch", c_uint32), ("lineinfo", c_bool), ("pdl_trigger", c_bool)]


class DeviceProps(Structure):
    _fields_ = [("name", c_char * 256), ("backend", c_int), ("ordinal", c_int), ("cc_major", c_int),
                ("cc_minor", c_int), ("sm_count", c_uint32), ("total_mem", c_uint64),
                ("max_threads_per_block", c_uint32), ("max_block", c_uint32 * 3), ("max_grid", c_uint32 * 3),
                ("shared_per_block", c_uint32), ("shared_per_block_optin", c_uint32), ("l2_bytes", c_uint32),
                ("driver_version", c_int), ("nvrtc_version", c_int), ("arch", c_uint32)]


class Arg(Structure):
    _fields_ = [("buf", c_void_p), ("value", Value)]


class Launch(Structure):
    _fields_ = [("grid", c_uint32 * 3), ("block", c_uint32 * 3), ("dyn_shared", c_uint32), ("count", c_uint64)]


P = c_void_p   # the opaque handles: kf_module, kf_kernel, kf_device, kf_buffer, kf_pipeline
E = POINTER(Error)

# name: (result, argument types)
FUNCTIONS = {
    "kf_version": (c_char_p, []),
    "kf_version_number": (c_int, []),
    "kf_status_name": (c_char_p, [c_int]),
    "kf_error_clear": (None, [E]),
    "kf_free": (None, [c_void_p]),
    "kf_type_str": (c_char_p, [Type, c_char_p, c_size_t]),
    "kf_type_size": (c_uint32, [Type]),
    "kf_value_bool": (Value, [c_bool]),
    "kf_value_i8": (Value, [c_int8]),
    "kf_value_u8": (Value, [c_uint8]),
    "kf_value_i16": (Value, [c_int16]),
    "kf_value_u16": (Value, [c_uint16]),
    "kf_value_i32": (Value, [c_int32]),
    "kf_value_u32": (Value, [c_uint32]),
    "kf_value_i64": (Value, [c_int64]),
    "kf_value_u64": (Value, [c_uint64]),
    "kf_value_f16": (Value, [c_double]),
    "kf_value_bf16": (Value, [c_double]),
    "kf_value_f32": (Value, [c_float]),
    "kf_value_f64": (Value, [c_double]),
    "kf_compile": (c_int, [c_char_p, c_char_p, c_size_t, POINTER(CompileOpts), POINTER(P)]),
    "kf_compile_file": (c_int, [c_char_p, POINTER(CompileOpts), POINTER(P), E]),
    "kf_module_free": (None, [P]),
    "kf_module_file": (c_char_p, [P]),
    "kf_module_diagnostics": (c_char_p, [P]),
    "kf_module_diag_count": (c_uint32, [P]),
    "kf_module_diag": (c_bool, [P, c_uint32, POINTER(Diagnostic)]),
    "kf_module_kernel_count": (c_uint32, [P]),
    "kf_module_kernel_at": (P, [P, c_uint32]),
    "kf_kernel_name": (c_char_p, [P]),
    "kf_kernel_param_count": (c_uint32, [P]),
    "kf_kernel_param": (POINTER(Param), [P, c_uint32]),
    "kf_kernel_schedule": (None, [P, POINTER(ScheduleInfo)]),
    "kf_emit": (c_int, [P, P, POINTER(EmitOptions), POINTER(c_void_p), POINTER(c_size_t), E]),
    "kf_device_open": (c_int, [c_int, c_int, POINTER(P), E]),
    "kf_device_close": (None, [P]),
    "kf_device_props_get": (None, [P, POINTER(DeviceProps)]),
    "kf_device_sync": (c_int, [P, E]),
    "kf_device_set_stream": (c_int, [P, c_void_p, E]),
    "kf_device_reset_stream": (c_int, [P, E]),
    "kf_buffer_create": (c_int, [P, Type, c_size_t, POINTER(P), E]),
    "kf_buffer_wrap": (c_int, [P, Type, c_size_t, c_void_p, POINTER(P), E]),
    "kf_buffer_upload": (c_int, [P, c_void_p, c_size_t, E]),
    "kf_buffer_download": (c_int, [P, c_void_p, c_size_t, E]),
    "kf_buffer_destroy": (None, [P]),
    "kf_pipeline_create": (c_int, [P, P, P, POINTER(P), E]),
    "kf_pipeline_destroy": (None, [P]),
    "kf_dispatch": (c_int, [P, POINTER(Arg), c_uint32, POINTER(Launch), c_int, POINTER(c_float), E]),
}

HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    """Where libkforge may be, in the order tried (KFORGE_LIBRARY only, when set)."""
    forced = os.environ.get("KFORGE_LIBRARY")
    if forced:
        return [forced]
    found = [os.path.join(HERE, "libkforge.so")]          # a copy shipped inside the package
    found.append("libkforge.so.0.1")                        # the loader path: LD_LIBRARY_PATH, ldconfig
    name = ctypes.util.find_library("kforge")
    if name:
        found.append(name)
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "kforge"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
        if libdir:
            found.append(os.path.join(libdir, "libkforge.so"))
    except (OSError, subprocess.SubprocessError):
        pass
    found.append(os.path.join(HERE, "..", "..", "build", "libkforge.so"))   # the checkout's build/
    return found


def load():
    """The loaded library with every function of FUNCTIONS typed."""
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(str(e) if path in str(e) else f"{path}: {e}")   # (dlopen's message may name it)
            continue
        for name, (res, args) in FUNCTIONS.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        return lib, path
    raise ImportError("kforge: cannot load libkforge.so; build it with BUILD_SHARED_LIBS=ON (tools/setup.sh does) and "
                      "set KFORGE_LIBRARY=/path/to/libkforge.so. Tried: " + "; ".join(tried))
