"""_model.py - dy2stc.load and Model: a model on the static executor.

Inputs are given as a dict {name: array} (or a sequence, in input order)
and passed in their own dtype, as ``dy2stc run`` and the executable take
.npy files: a narrower integer is widened to the input's (int32, int8 or
uint8 for int64; int8 or uint8 for int32: the rule of runtime/npy.c's
dy_dtype_widens_to), another dtype (float64 for float32, int64 for
int32, ...) is refused with the library's own message
("input 'x' is f64[2,3], the Program expects f32[-1,3]").
"""
import collections
import ctypes

import numpy as np

from . import _lib
from ._error import Error

# dy2stc dtype name -> numpy dtype (ir/dtypes.def)
_NP = {"f32": np.float32, "i64": np.int64, "bool": np.bool_, "i8": np.int8,
       "u8": np.uint8, "i32": np.int32}
# (array dtype, input dtype) pairs widened exactly (dy_dtype_widens_to)
_WIDENS = {("i32", "i64"), ("i8", "i64"), ("u8", "i64"), ("i8", "i32"), ("u8", "i32")}

TensorInfo = collections.namedtuple("TensorInfo", "name dtype shape")
TensorInfo.__doc__ = ("An input or output: its name, numpy dtype and shape "
                      "(ints, and strings for the symbolic dims: 'batch', 'seq').")


def dtype_codes():
    """{dy2stc dtype name: code} as the library numbers them."""
    L = _lib.lib()
    codes, i = {}, 0
    while True:
        name = L.dy2stc_dtype_name(i)
        if name is None:
            return codes
        codes[name.decode()] = i
        i += 1


def np_dtype(code):
    return np.dtype(_NP[_lib.lib().dy2stc_dtype_name(code).decode()])


def describe(handle, output):
    """The TensorInfo list of a model handle's inputs (0) or outputs (1)."""
    L = _lib.lib()
    infos = []
    buf = ctypes.create_string_buffer(256)
    for i in range(L.dy2stc_model_count(handle, output)):
        shape = []
        for d in range(L.dy2stc_model_rank(handle, output, i)):
            v = L.dy2stc_model_dim(handle, output, i, d, buf, len(buf))
            shape.append(v if v >= 0 else buf.value.decode())
        infos.append(TensorInfo(L.dy2stc_model_name(handle, output, i).decode(),
                                np_dtype(L.dy2stc_model_dtype(handle, output, i)),
                                tuple(shape)))
    return infos


class Feeds:
    """Inputs as the C API takes them: names, dtype codes, ranks, shapes,
    data pointers; the arrays are kept alive (and not copied when they are
    C-contiguous and of the dtype the model reads)."""

    def __init__(self, inputs, feeds):
        if isinstance(feeds, dict):
            items = list(feeds.items())
        elif isinstance(feeds, (list, tuple)):
            items = [(None, a) for a in feeds]
        else:
            raise Error("feeds must be a dict {input name: array} or a list in input "
                        f"order, not {type(feeds).__name__}")
        by_name = {t.name: t for t in inputs}
        codes = dtype_codes()
        self.arrays, names = [], []
        for k, (name, a) in enumerate(items):
            if name is not None and not isinstance(name, str):
                raise Error(f"input names must be strings, not {name!r}")
            info = by_name.get(name) if name is not None else (
                inputs[k] if k < len(inputs) else None)
            label = name if name is not None else (info.name if info else f"#{k}")
            self.arrays.append(self._convert(label, info, a, codes))
            names.append(name)
        n = len(self.arrays)
        self.n = n
        self.names = _lib.strings(names)
        self.dtypes = (ctypes.c_int * max(1, n))()
        self.ranks = (ctypes.c_int * max(1, n))()
        self.shapes = (ctypes.c_int64 * max(1, n * _lib.MAX_DIMS))()
        self.data = (ctypes.c_void_p * max(1, n))()
        for k, a in enumerate(self.arrays):
            self.dtypes[k] = codes[_name_of(a.dtype)]
            self.ranks[k] = a.ndim
            for d, v in enumerate(a.shape[:_lib.MAX_DIMS]):
                self.shapes[k * _lib.MAX_DIMS + d] = v
            self.data[k] = a.ctypes.data
        if any(a.ndim > _lib.MAX_DIMS for a in self.arrays):
            a = next(a for a in self.arrays if a.ndim > _lib.MAX_DIMS)
            raise Error(f"an input has rank {a.ndim} (at most {_lib.MAX_DIMS} dims)")

    @staticmethod
    def _convert(label, info, a, codes):
        a = np.asarray(a)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("="))
        if _name_of(a.dtype) not in codes:
            raise Error(f"input '{label}': unsupported dtype {a.dtype} (want float32, "
                        "int64, int32, int8, uint8 or bool)")
        if info is not None and (_name_of(a.dtype), _name_of(info.dtype)) in _WIDENS:
            return np.ascontiguousarray(a, dtype=info.dtype)
        return np.ascontiguousarray(a)


def _name_of(dt):
    for name, t in _NP.items():
        if np.dtype(t) == dt:
            return name
    return None


def outputs_to_dict(handle, names):
    """A dy2stc_outputs handle's tensors as {name: new numpy array}."""
    L = _lib.lib()
    result = {}
    for i, name in enumerate(names):
        shape = tuple(L.dy2stc_outputs_dim(handle, i, d)
                      for d in range(L.dy2stc_outputs_rank(handle, i)))
        a = np.empty(shape, np_dtype(L.dy2stc_outputs_dtype(handle, i)))
        n = L.dy2stc_outputs_nbytes(handle, i)
        if n:
            ctypes.memmove(a.ctypes.data, L.dy2stc_outputs_data(handle, i), n)
        result[name] = a
    return result


class Model:
    """A loaded model: .inputs and .outputs (TensorInfo lists) and .run(feeds)
    on the static executor. Made by dy2stc.load."""

    def __init__(self, path, params=None):
        L = _lib.lib()
        self.path = str(path)
        self.params = None if params is None else str(params)
        handle = ctypes.c_void_p()
        msg = _lib.msg_buffer()
        rc = L.dy2stc_load(self.path.encode(),
                           None if self.params is None else self.params.encode(),
                           ctypes.byref(handle), msg, len(msg))
        _lib.check(rc, msg)
        self._handle = handle
        self.inputs = describe(handle, 0)
        self.outputs = describe(handle, 1)

    def run(self, feeds):
        """Run on the static executor: {output name: numpy array}."""
        L = _lib.lib()
        f = Feeds(self.inputs, feeds)
        out = ctypes.c_void_p()
        msg = _lib.msg_buffer()
        rc = L.dy2stc_model_run(self._handle, f.n, f.names, f.dtypes, f.ranks, f.shapes,
                                f.data, ctypes.byref(out), msg, len(msg))
        _lib.check(rc, msg)
        try:
            return outputs_to_dict(out, [t.name for t in self.outputs])
        finally:
            L.dy2stc_outputs_free(out)

    __call__ = run

    def __del__(self):
        h = getattr(self, "_handle", None)
        if h and _lib._lib is not None:
            _lib._lib.dy2stc_model_free(h)
            self._handle = None

    def __repr__(self):
        return f"dy2stc.Model({self.path!r}, inputs={self.inputs}, outputs={self.outputs})"


def load(path, params=None):
    """Load a model: .dymodel (or NAME for NAME.dymodel), .onnx, .pdmodel /
    __model__ (params: its weights file, default beside it) or .json.
    Returns a Model; dy2stc.Error when the file cannot be read."""
    return Model(path, params)
