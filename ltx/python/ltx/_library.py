"""Loads libltx.so with ctypes and declares the C API of ltx/c_api.h.

The library is LTX_LIBRARY if set, else the libltx.so of the install tree this package lies in
(<prefix>/lib/python/ltx -> <prefix>/lib/libltx.so), else the one beside this file, else the
dynamic linker's search path. ctypes releases the GIL during every call.
"""

from __future__ import annotations

import ctypes
import os
import threading

from . import errors


class RuntimeOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("devices", ctypes.POINTER(ctypes.c_int)),
        ("num_devices", ctypes.c_int),
        ("timeout_us", ctypes.c_int64),
        ("max_blocks", ctypes.c_int),
        ("worker_spin_us", ctypes.c_int64),
        ("one_trip_max_bytes", ctypes.c_int64),
        ("copy_engine_min_bytes", ctypes.c_int64),
        ("transport", ctypes.c_int),
        ("two_shot_min_bytes", ctypes.c_int64),
    ]


class CallOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("timeout_us", ctypes.c_int64),
        ("blocks", ctypes.c_int),
        ("protocol", ctypes.c_int),
        ("generation", ctypes.c_int64),
        ("two_shot_min_bytes", ctypes.c_int64),  # -1: the Runtime's.
        ("wire", ctypes.c_int),  # An ltx_wire_format (WIRES).
    ]


class AllGatherShape(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("batch", ctypes.c_int64),
        ("hidden", ctypes.c_int64),
        ("token_counts", ctypes.POINTER(ctypes.c_int64)),
        ("num_ranks", ctypes.c_int),
    ]


class AllToAllShape(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("batch", ctypes.c_int64),
        ("heads", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("token_counts", ctypes.POINTER(ctypes.c_int64)),
        ("num_ranks", ctypes.c_int),
        ("direction", ctypes.c_int),
        ("head_counts", ctypes.POINTER(ctypes.c_int64)),  # NULL: the even split.
    ]


class AllReduceShape(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("count", ctypes.c_int64),
        ("reduction", ctypes.c_int),
    ]


class ReduceScatterShape(ctypes.Structure):
    # The AllGather's fields, then the reduction.
    _fields_ = AllGatherShape._fields_ + [("reduction", ctypes.c_int)]


class AllReduceRmsNormShape(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("rows", ctypes.c_int64),
        ("hidden", ctypes.c_int64),
        ("eps", ctypes.c_float),
    ]


class RmsNormBuffers(ctypes.Structure):
    _fields_ = [
        ("input", ctypes.c_void_p),
        ("output", ctypes.c_void_p),
        ("residual", ctypes.c_void_p),
        ("residual_out", ctypes.c_void_p),
        ("weight", ctypes.c_void_p),
        ("stream", ctypes.c_void_p),
    ]


class RankBuffers(ctypes.Structure):
    _fields_ = [
        ("input", ctypes.c_void_p),
        ("output", ctypes.c_void_p),
        ("stream", ctypes.c_void_p),
    ]


MAX_TENSORS = 4  # LTX_MAX_TENSORS


class TensorBuffers(ctypes.Structure):
    _fields_ = [
        ("inputs", ctypes.c_void_p * MAX_TENSORS),
        ("outputs", ctypes.c_void_p * MAX_TENSORS),
        ("stream", ctypes.c_void_p),
    ]


_P = ctypes.POINTER
_c_int, _c_int64, _void_p = ctypes.c_int, ctypes.c_int64, ctypes.c_void_p

# name: (result type, argument types)
_PROTOTYPES = {
    "ltx_version": (_c_int, []),
    "ltx_code_string": (ctypes.c_char_p, [_c_int]),
    "ltx_last_error": (ctypes.c_char_p, []),
    "ltx_runtime_options_init_sized": (_c_int, [_P(RuntimeOptions), ctypes.c_size_t]),
    "ltx_call_options_init_sized": (_c_int, [_P(CallOptions), ctypes.c_size_t]),
    "ltx_runtime_create": (_c_int, [_P(RuntimeOptions), _P(_void_p)]),
    "ltx_runtime_destroy": (_c_int, [_void_p]),
    "ltx_runtime_world_size": (_c_int, [_void_p, _P(_c_int)]),
    "ltx_runtime_device": (_c_int, [_void_p, _c_int, _P(_c_int)]),
    "ltx_runtime_transport": (_c_int, [_void_p, _P(_c_int)]),
    "ltx_runtime_generation": (_c_int, [_void_p, _P(ctypes.c_uint64)]),
    "ltx_all_gather": (_c_int, [_void_p, _P(AllGatherShape), _P(RankBuffers), _c_int,
                                _P(CallOptions), _P(_void_p)]),
    "ltx_op_wait": (_c_int, [_void_p, _c_int64]),
    "ltx_op_destroy": (_c_int, [_void_p]),
    "ltx_all_gather_rank": (_c_int, [_void_p, _c_int, _P(AllGatherShape), _P(RankBuffers),
                                     _P(CallOptions)]),
    "ltx_all_to_all": (_c_int, [_void_p, _P(AllToAllShape), _P(RankBuffers), _c_int,
                                _P(CallOptions), _P(_void_p)]),
    "ltx_all_to_all_rank": (_c_int, [_void_p, _c_int, _P(AllToAllShape), _P(RankBuffers),
                                     _P(CallOptions)]),
    "ltx_all_gather_tensors": (_c_int, [_void_p, _P(AllGatherShape), _c_int, _P(TensorBuffers),
                                        _c_int, _P(CallOptions), _P(_void_p)]),
    "ltx_all_gather_tensors_rank": (_c_int, [_void_p, _c_int, _P(AllGatherShape), _c_int,
                                             _P(TensorBuffers), _P(CallOptions)]),
    "ltx_all_to_all_tensors": (_c_int, [_void_p, _P(AllToAllShape), _c_int, _P(TensorBuffers),
                                        _c_int, _P(CallOptions), _P(_void_p)]),
    "ltx_all_to_all_tensors_rank": (_c_int, [_void_p, _c_int, _P(AllToAllShape), _c_int,
                                             _P(TensorBuffers), _P(CallOptions)]),
    "ltx_all_reduce": (_c_int, [_void_p, _P(AllReduceShape), _P(RankBuffers), _c_int,
                                _P(CallOptions), _P(_void_p)]),
    "ltx_all_reduce_rank": (_c_int, [_void_p, _c_int, _P(AllReduceShape), _P(RankBuffers),
                                     _P(CallOptions)]),
    "ltx_reduce_scatter": (_c_int, [_void_p, _P(ReduceScatterShape), _P(RankBuffers), _c_int,
                                    _P(CallOptions), _P(_void_p)]),
    "ltx_reduce_scatter_rank": (_c_int, [_void_p, _c_int, _P(ReduceScatterShape),
                                         _P(RankBuffers), _P(CallOptions)]),
    "ltx_all_reduce_rmsnorm": (_c_int, [_void_p, _P(AllReduceRmsNormShape), _P(RmsNormBuffers),
                                        _c_int, _P(CallOptions), _P(_void_p)]),
    "ltx_all_reduce_rmsnorm_rank": (_c_int, [_void_p, _c_int, _P(AllReduceRmsNormShape),
                                             _P(RmsNormBuffers), _P(CallOptions)]),
    "ltx_runtime_synchronize": (_c_int, [_void_p, _c_int64]),
    "ltx_runtime_status": (_c_int, [_void_p]),
    "ltx_runtime_stop": (_c_int, [_void_p, _c_int, ctypes.c_char_p]),
    "ltx_runtime_reset": (_c_int, [_void_p, _c_int64]),
}

_lock = threading.Lock()
_lib = None


def library_path() -> str:
    """The path (or bare name) of the libltx.so this package loads."""
    path = os.environ.get("LTX_LIBRARY")
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, os.pardir, os.pardir, "libltx.so"),
                      os.path.join(here, "libltx.so")):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    return "libltx.so"


def lib() -> ctypes.CDLL:
    """The loaded library (loaded on first use). Raises ImportError when it cannot be loaded."""
    global _lib
    with _lock:
        if _lib is None:
            path = library_path()
            try:
                loaded = ctypes.CDLL(path)
            except OSError as e:
                raise ImportError(f"ltx: cannot load {path} (set LTX_LIBRARY): {e}") from e
            for name, (restype, argtypes) in _PROTOTYPES.items():
                try:
                    function = getattr(loaded, name)
                except AttributeError as e:
                    raise ImportError(
                        f"ltx: {path} lacks {name}: a libltx.so older than this package "
                        f"(install the library and the package of one version)") from e
                function.restype = restype
                function.argtypes = argtypes
            _lib = loaded
        return _lib


def check(code: int) -> None:
    """Raises the ltx.Error of a non-zero `code` with this thread's last message."""
    if code != 0:
        raise errors.error_for(code, lib().ltx_last_error().decode(errors="replace"))
