"""dy2stc - the dy2stc compiler from Python.

    import numpy as np
    import dy2stc

    model = dy2stc.load("samples/onnx/cnn.onnx")
    x = np.random.rand(2, 3, 8, 8).astype(np.float32)
    ref = model.run({"input.1": x})                 # the static executor
    net = dy2stc.compile(model, max_batch=8)        # generated C, loaded
    out = net({"input.1": x})
    print(dy2stc.check(model, {"input.1": x}))      # per-output errors

Everything goes through libdy2stc.so (compiler/capi/), the library the
dy2stc command line is built from: the same input gets the same answer as
`dy2stc run`, and every failure is a dy2stc.Error with the library's
one-line message.
"""
from ._check import Divergence, OutputError, check, localize
from ._compiled import Compiled, compile, default_cache_dir
from ._error import Error
from ._lib import candidates as library_candidates
from ._model import Model, TensorInfo, load

__version__ = "0.1.0"

__all__ = ["Error", "Model", "TensorInfo", "Compiled", "OutputError", "Divergence", "load",
           "compile", "check", "localize", "default_cache_dir", "library_candidates"]
