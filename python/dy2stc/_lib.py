"""_lib.py - libdy2stc.so (compiler/capi/dy2stc_capi.h) through ctypes.

The library is looked for, in order:

1. the path in the environment variable DY2STC_LIB;
2. beside this package (``dy2stc/libdy2stc.so``: ``pip install ./python``
   copies it there when the project has been built);
3. the build tree of the checkout the package sits in
   (``<checkout>/build/compiler/libdy2stc.so``).

When none is there, every call raises dy2stc.Error saying so.
"""
import ctypes
import os

from ._error import Error

LIB_NAME = "libdy2stc.so"
MAX_DIMS = 8  # DY2STC_MAX_DIMS
MSG_BYTES = 1024

_c = ctypes
_p = _c.c_void_p
_i64 = _c.c_int64
_int = _c.c_int
_str = _c.c_char_p
_sz = _c.c_size_t
_ip = _c.POINTER(_c.c_int)
_i64p = _c.POINTER(_c.c_int64)
_strp = _c.POINTER(_c.c_char_p)
_pp = _c.POINTER(_c.c_void_p)

PROGRESS = _c.CFUNCTYPE(None, _p, _str, _i64, _i64)

# name: (result type, argument types)
_PROTOS = {
    "dy2stc_version": (_str, []),
    "dy2stc_dtype_name": (_str, [_int]),
    "dy2stc_dtype_size": (_int, [_int]),
    "dy2stc_load": (_int, [_str, _str, _pp, _str, _sz]),
    "dy2stc_model_free": (None, [_p]),
    "dy2stc_model_count": (_int, [_p, _int]),
    "dy2stc_model_name": (_str, [_p, _int, _int]),
    "dy2stc_model_dtype": (_int, [_p, _int, _int]),
    "dy2stc_model_rank": (_int, [_p, _int, _int]),
    "dy2stc_model_dim": (_i64, [_p, _int, _int, _int, _str, _sz]),
    "dy2stc_model_run": (_int, [_p, _int, _strp, _ip, _ip, _i64p, _pp, _pp, _str, _sz]),
    "dy2stc_outputs_count": (_int, [_p]),
    "dy2stc_outputs_dtype": (_int, [_p, _int]),
    "dy2stc_outputs_rank": (_int, [_p, _int]),
    "dy2stc_outputs_dim": (_i64, [_p, _int, _int]),
    "dy2stc_outputs_data": (_p, [_p, _int]),
    "dy2stc_outputs_nbytes": (_i64, [_p, _int]),
    "dy2stc_outputs_free": (None, [_p]),
    "dy2stc_compile": (_int, [_p, _int, _strp, _strp, _str, PROGRESS, _p, _pp, _str, _sz]),
    "dy2stc_compiled_free": (None, [_p]),
    "dy2stc_compiled_library": (_str, [_p]),
    "dy2stc_compiled_prefix": (_str, [_p]),
    "dy2stc_compiled_arena_bytes": (_i64, [_p]),
    "dy2stc_compiled_cached": (_int, [_p]),
    "dy2stc_compiled_model": (_p, [_p]),
    "dy2stc_compiled_prepare": (_int, [_p, _int, _strp, _ip, _ip, _i64p, _ip, _i64p, _i64p,
                                       _str, _sz]),
    "dy2stc_localize": (_int, [_p, _int, _strp, _strp, _int, _strp, _ip, _ip, _i64p, _pp,
                               _c.c_double, _c.c_double, _int, _pp, _str, _sz]),
    "dy2stc_localized_free": (None, [_p]),
    "dy2stc_localized_int": (_int, [_p, _str]),
    "dy2stc_localized_i64": (_i64, [_p, _str]),
    "dy2stc_localized_str": (_str, [_p, _str]),
    "dy2stc_localized_shown": (None, [_p, _int, _i64p, _c.POINTER(_c.c_double),
                                      _c.POINTER(_c.c_double)]),
}


def candidates():
    """The paths tried for libdy2stc.so, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    paths = []
    env = os.environ.get("DY2STC_LIB")
    if env:
        return [env]
    paths.append(os.path.join(here, LIB_NAME))
    # python/dy2stc/ in a checkout: <checkout>/build/compiler/libdy2stc.so
    d = here
    for _ in range(3):
        d = os.path.dirname(d)
        paths.append(os.path.join(d, "build", "compiler", LIB_NAME))
    return paths


_lib = None


def lib():
    """The loaded library (loaded on first use), or dy2stc.Error."""
    global _lib
    if _lib is not None:
        return _lib
    tried = candidates()
    for path in tried:
        if os.path.exists(path):
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                raise Error(f"{path}: cannot load: {e}") from None
            for name, (res, args) in _PROTOS.items():
                fn = getattr(handle, name)
                fn.restype = res
                fn.argtypes = args
            _lib = handle
            return _lib
    raise Error("cannot find libdy2stc.so (tried " + ", ".join(tried) +
                "): build the project (cmake --build build makes "
                "build/compiler/libdy2stc.so), then set DY2STC_LIB to it "
                "or reinstall the package")


def msg_buffer():
    return ctypes.create_string_buffer(MSG_BYTES)


def check(rc, msg):
    """Raise dy2stc.Error with the library's message when rc is not 0."""
    if rc:
        raise Error(msg.value.decode("utf-8", "replace"), rc)


def strings(items):
    """A C array of char* (None stays NULL)."""
    arr = (_c.c_char_p * max(1, len(items)))()
    for i, s in enumerate(items):
        arr[i] = None if s is None else s.encode()
    return arr
