"""_compiled.py - dy2stc.compile and Compiled: the model as generated C.

dy2stc.compile has the library compile the model (the same passes and code
as ``dy2stc compile``) and build it as a shared library in a cache
directory, keyed by a hash of the generated code and the build options (a
second compile of the same model and options reuses it); the library is
loaded into this process with ctypes. A call checks the inputs as the
static executor does (the same messages), allocates the outputs and runs
model_run_v on the arrays themselves: a C-contiguous input of the model's
dtype is passed without a copy.

The cache directory: the cache_dir argument, else $DY2STC_CACHE, else
$XDG_CACHE_HOME/dy2stc (~/.cache/dy2stc).
"""
import ctypes
import os
import threading

import numpy as np

from . import _lib
from ._error import Error
from ._model import Feeds, Model, describe

_RUN_ERRORS = {1: "ERR_BATCH: the batch is out of range",
               2: "ERR_ARG: a NULL buffer",
               3: "ERR_INDEX: an index input is out of range",
               4: "ERR_LOOP: a while loop ran past its bound",
               5: "ERR_SHAPE: a size symbol is out of range or an input dim disagrees"}


def default_cache_dir():
    """Where compiled models are kept."""
    d = os.environ.get("DY2STC_CACHE")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dy2stc")


def option_pairs(max_batch=None, max_dims=None, threads=None, dims=None, shapes=None,
                 **options):
    """The keyword options as the C API's (key, value) strings."""
    pairs = []
    for name, v in (shapes or {}).items():
        pairs.append((f"shape:{name}", ",".join(str(int(d)) for d in v)))
    for name, v in (dims or {}).items():
        pairs.append((f"dim:{name}", str(v)))
    if max_batch is not None:
        pairs.append(("max_batch", str(max_batch)))
    for name, v in (max_dims or {}).items():
        pairs.append((f"max_dim:{name}", str(v)))
    if threads is not None:
        pairs.append(("threads", str(threads)))
    for key, v in options.items():
        if isinstance(v, bool):
            v = int(v)
        pairs.append((key, str(v)))
    return pairs


def as_model(path_or_model, params=None):
    if isinstance(path_or_model, Model):
        return path_or_model
    if isinstance(path_or_model, Compiled):
        return path_or_model.model
    return Model(path_or_model, params)


class Compiled:
    """A compiled model: call it with feeds as Model.run is called.
    .inputs / .outputs describe the compiled Program (after the options'
    pins), .library is the shared library's path, .cached whether it was
    reused from the cache, .model the Model it was compiled from."""

    def __init__(self, model, pairs, cache, progress):
        L = _lib.lib()
        self.model = model
        self.options = dict(pairs)
        keys = _lib.strings([k for k, _ in pairs])
        values = _lib.strings([v for _, v in pairs])
        cb = _lib.PROGRESS(lambda ctx, phase, done, total:
                           progress(phase.decode(), done, total)) if progress else \
            _lib.PROGRESS()
        handle = ctypes.c_void_p()
        msg = _lib.msg_buffer()
        os.makedirs(cache, exist_ok=True)
        rc = L.dy2stc_compile(model._handle, len(pairs), keys, values, str(cache).encode(), cb,
                              None, ctypes.byref(handle), msg, len(msg))
        _lib.check(rc, msg)
        self._handle = handle
        prog = L.dy2stc_compiled_model(handle)
        self.inputs = describe(prog, 0)
        self.outputs = describe(prog, 1)
        self.library = L.dy2stc_compiled_library(handle).decode()
        self.cached = bool(L.dy2stc_compiled_cached(handle))
        prefix = L.dy2stc_compiled_prefix(handle).decode()
        try:
            self._so = ctypes.CDLL(self.library)
        except OSError as e:
            raise Error(f"{self.library}: cannot load: {e}") from None
        self._run_v = getattr(self._so, prefix + "_run_v")
        self._run_v.restype = ctypes.c_int
        self._bind = getattr(self._so, prefix + "_bind", None)
        if self._bind is not None:
            self._bind.restype = ctypes.c_int
        arena = L.dy2stc_compiled_arena_bytes(handle)
        self._arena = np.zeros(arena + 64, np.uint8)
        self._arena_ptr = (self._arena.ctypes.data + 63) // 64 * 64
        self._lock = threading.Lock()

    def __call__(self, feeds):
        """Run the compiled code: {output name: numpy array}."""
        L = _lib.lib()
        f = Feeds(self.inputs, feeds)
        n_in, n_out = len(self.inputs), len(self.outputs)
        order = (ctypes.c_int * max(1, f.n))()
        batch = ctypes.c_int64()
        out_shapes = (ctypes.c_int64 * max(1, n_out * _lib.MAX_DIMS))()
        msg = _lib.msg_buffer()
        rc = L.dy2stc_compiled_prepare(self._handle, f.n, f.names, f.dtypes, f.ranks,
                                       f.shapes, order, ctypes.byref(batch), out_shapes,
                                       msg, len(msg))
        _lib.check(rc, msg)
        ins = (ctypes.c_void_p * max(1, n_in))()
        for k in range(f.n):
            ins[order[k]] = f.data[k]
        outs = []
        out_ptrs = (ctypes.c_void_p * max(1, n_out))()
        for i, t in enumerate(self.outputs):
            shape = tuple(out_shapes[i * _lib.MAX_DIMS + d] for d in range(len(t.shape)))
            a = np.empty(shape, t.dtype)
            outs.append(a)
            out_ptrs[i] = a.ctypes.data if a.nbytes else self._arena_ptr
        for i in range(n_in):
            if not ins[i]:
                ins[i] = self._arena_ptr  # an empty input: any non-NULL pointer
        with self._lock:
            if self._bind is not None:
                shapes = [(ctypes.c_int64 * max(1, f.ranks[k]))(
                    *[f.shapes[k * _lib.MAX_DIMS + d] for d in range(f.ranks[k])])
                    for k in range(f.n)]
                shape_ptrs = (ctypes.c_void_p * max(1, n_in))()
                for k in range(f.n):
                    shape_ptrs[order[k]] = ctypes.cast(shapes[k], ctypes.c_void_p)
                dims = (ctypes.c_int64 * 64)()
                rc = self._bind(shape_ptrs, dims)
                if not rc:
                    rc = self._run_v(ctypes.c_void_p(self._arena_ptr), dims, ins, out_ptrs)
            else:
                rc = self._run_v(ctypes.c_void_p(self._arena_ptr), ctypes.c_int64(batch.value),
                                 ins, out_ptrs)
        if rc:
            raise Error(f"the compiled model returned {rc} "
                        f"({_RUN_ERRORS.get(rc, 'an unknown status')})", rc)
        return {t.name: a for t, a in zip(self.outputs, outs)}

    run = __call__

    def __del__(self):
        h = getattr(self, "_handle", None)
        if h and _lib._lib is not None:
            _lib._lib.dy2stc_compiled_free(h)
            self._handle = None

    def __repr__(self):
        return f"dy2stc.Compiled({self.model.path!r}, library={self.library!r})"


def compile(path_or_model, max_batch=None, max_dims=None, threads=None, *, params=None,
            cache_dir=None, progress=None, **options):
    """Compile a model (a path or a Model) to C, build it as a shared library
    and load it: returns a Compiled, callable as Model.run is.

    max_batch: the bound on the batch (default 64); max_dims: {symbol: bound};
    threads: split GEMM/conv kernels over that many threads; dims={symbol: N}
    and shapes={input: (d0, ...)} pin sizes; other options as the C API's
    keys (opt_level=0..2, cc=, cflags=, target=, plain_kernels=True,
    no_pack_a=True, max_iterations=N). progress(phase, done, total) hears
    the phases: "import", "pass:NAME" for each pass, "plan", "codegen" and
    "cc" (the C compiler, skipped when the cache has the library)."""
    model = as_model(path_or_model, params)
    pairs = option_pairs(max_batch, max_dims, threads, **options)
    return Compiled(model, pairs, cache_dir or default_cache_dir(), progress)
