"""_check.py - dy2stc.check and dy2stc.localize: the compiled code against
the static executor, as ``dy2stc check`` and ``dy2stc check --localize``.

check compares outputs element by element as the CLI does
(compiler/cli/cli_diff.c): beyond atol + rtol * |expected| is an error;
NaN and +-inf equal only the same non-finite value.
"""
import collections
import ctypes

import numpy as np

from . import _lib
from ._compiled import as_model, compile, option_pairs
from ._error import Error
from ._model import Feeds

OutputError = collections.namedtuple("OutputError", "max_abs max_rel n_bad worst ok")
OutputError.__doc__ = ("One output's error: the largest absolute and relative error, "
                       "the elements beyond tolerance, the flat index of the worst "
                       "(-1: none) and ok (n_bad == 0).")


def diff(got, expected, rtol, atol):
    """got against expected as `dy2stc check` compares them: an OutputError."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        raise Error(f"shapes differ: {got.dtype}{list(got.shape)} vs "
                    f"{expected.dtype}{list(expected.shape)}")
    x = got.astype(np.float64).ravel()
    y = expected.astype(np.float64).ravel()
    if x.size == 0:
        return OutputError(0.0, 0.0, 0, -1, True)
    finite = np.isfinite(x) & np.isfinite(y)
    same = (np.isnan(x) & np.isnan(y)) | (np.isinf(x) & np.isinf(y) & ((x > 0) == (y > 0)))
    with np.errstate(invalid="ignore", over="ignore"):
        ad = np.where(finite, np.abs(x - y), np.where(same, 0.0, np.inf))
        rd = np.where(finite, ad / np.maximum(np.abs(y), 1e-30), ad)
        excess = np.where(finite, ad - (atol + rtol * np.abs(y)), ad)
    bad = excess > 0
    n_bad = int(bad.sum())
    worst = int(np.argmax(np.where(bad, excess, -np.inf))) if n_bad else -1
    max_rel = float(rd[ad > 0].max()) if (ad > 0).any() else 0.0
    return OutputError(float(ad.max()), max_rel, n_bad, worst, n_bad == 0)


def check(model, feeds, rtol=1e-5, atol=1e-6, *, params=None, **options):
    """Run the static executor and the compiled code (dy2stc.compile with
    options) on feeds: {output name: OutputError}."""
    m = as_model(model, params)
    expected = m.run(feeds)
    got = compile(m, **options)(feeds)
    return {name: diff(got[name], expected[name], rtol, atol) for name in expected}


class Divergence:
    """The first op whose compiled result departs from the static executor:
    found, op_id, op, file, line (its source line), srcs (a fused op's
    parts), var, n_bad of n_elements, n_compared and shown, a list of
    (index, expected, got)."""

    def __init__(self, handle, rtol, atol):
        L = _lib.lib()
        self.rtol, self.atol = rtol, atol
        self.found = bool(L.dy2stc_localized_int(handle, b"found"))
        self.n_compared = L.dy2stc_localized_int(handle, b"n_compared")
        self.op_id = L.dy2stc_localized_int(handle, b"op_id")
        self.op = L.dy2stc_localized_str(handle, b"op").decode()
        self.file = L.dy2stc_localized_str(handle, b"file").decode()
        self.line = L.dy2stc_localized_i64(handle, b"line")
        self.srcs = L.dy2stc_localized_str(handle, b"srcs").decode()
        self.var = L.dy2stc_localized_str(handle, b"var").decode()
        self.n_bad = L.dy2stc_localized_i64(handle, b"n_bad")
        self.n_elements = L.dy2stc_localized_i64(handle, b"n_elements")
        self.shown = []
        for k in range(L.dy2stc_localized_int(handle, b"n_shown")):
            i, e, g = ctypes.c_int64(), ctypes.c_double(), ctypes.c_double()
            L.dy2stc_localized_shown(handle, k, ctypes.byref(i), ctypes.byref(e),
                                     ctypes.byref(g))
            self.shown.append((i.value, e.value, g.value))

    def __bool__(self):
        return self.found

    def __str__(self):
        """The first line `dy2stc check --localize` prints."""
        if not self.found:
            return (f"localize: the {self.n_compared} op results all agree with the "
                    f"static executor (rtol {self.rtol:g}, atol {self.atol:g})")
        where = f"{self.file or '?'}:{self.line}"
        parts = f" [{self.srcs}]" if self.srcs else ""
        return (f"{where}: first divergence: op {self.op_id} ({self.op}){parts}, var "
                f"'{self.var}': {self.n_bad} of {self.n_elements} elements outside "
                f"tolerance (rtol {self.rtol:g}, atol {self.atol:g})")

    __repr__ = __str__


def localize(model, feeds, rtol=1e-5, atol=1e-6, *, params=None, plant_op=-1, **options):
    """Compile the model with every op's result kept and compare each, in
    execution order, with the static executor's: a Divergence (false when
    all agree). plant_op is a test hook (adds 1 to that op's first
    element in the compiled run)."""
    L = _lib.lib()
    m = as_model(model, params)
    pairs = option_pairs(**options)
    keys = _lib.strings([k for k, _ in pairs])
    values = _lib.strings([v for _, v in pairs])
    f = Feeds(m.inputs, feeds)
    handle = ctypes.c_void_p()
    msg = _lib.msg_buffer()
    rc = L.dy2stc_localize(m._handle, len(pairs), keys, values, f.n, f.names, f.dtypes,
                           f.ranks, f.shapes, f.data, rtol, atol, plant_op,
                           ctypes.byref(handle), msg, len(msg))
    _lib.check(rc, msg)
    try:
        return Divergence(handle, rtol, atol)
    finally:
        L.dy2stc_localized_free(handle)
