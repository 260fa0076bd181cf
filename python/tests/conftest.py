"""Fixtures of the Python package's tests: the project's build (the CLI,
the samples), a private compile cache and the sample models.

The tests run under Debian's /usr/bin/python3 with numpy and pytest from
python3-numpy / python3-pytest (tests/CMakeLists.txt: ctest python_pytest).
DY2STC_BUILD names the build tree (default: <checkout>/build); the package
is imported from python/ (PYTHONPATH) and finds build/compiler/libdy2stc.so
through DY2STC_LIB.
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("DY2STC_BUILD", ROOT / "build"))
CLI = BUILD / "compiler" / "dy2stc"
CNN = ROOT / "samples" / "onnx" / "cnn.onnx"
# The environment of the CLI, the samples and the executables: the
# sanitizer runtime that ctest preloads into python (DY_SANITIZE builds)
# must not reach programs that link their own.
EXE_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def cli(*args, check=True, cwd=None):
    """Run the dy2stc CLI; the CompletedProcess (text)."""
    r = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                       env=EXE_ENV)
    if check and r.returncode != 0:
        raise AssertionError(f"dy2stc {' '.join(map(str, args))}: {r.stderr}")
    return r


def cli_error(*args):
    """The one-line error `dy2stc ARGS` prints, without its "dy2stc: "."""
    r = cli(*args, check=False)
    assert r.returncode == 1, r
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("dy2stc: "), line
    return line[len("dy2stc: "):]


@pytest.fixture(scope="session", autouse=True)
def cache(tmp_path_factory):
    """A private compile cache for the session."""
    d = tmp_path_factory.mktemp("cache")
    os.environ["DY2STC_CACHE"] = str(d)
    return d


@pytest.fixture(scope="session")
def cnn_input():
    return np.load(ROOT / "samples" / "onnx" / "input.npy")


def _sample(tmp_path_factory, name, *args):
    d = tmp_path_factory.mktemp(name)
    subprocess.run([str(BUILD / "samples" / name), "--batch", "2", "--out", str(d), *args],
                   check=True, capture_output=True, env=EXE_ENV)
    return d


@pytest.fixture(scope="session")
def lenet5(tmp_path_factory):
    """(model path, {input: array}) of the eager-built LeNet-5 sample."""
    d = _sample(tmp_path_factory, "lenet5")
    return d / "lenet5.dymodel", {"x": np.load(d / "x.npy")}


@pytest.fixture(scope="session")
def transformer_seq(tmp_path_factory):
    """The transformer sample with a dynamic seq dim (f32[batch, seq, 128])."""
    d = _sample(tmp_path_factory, "transformer", "--dynamic-seq")
    return d / "transformer.dymodel", {"x": np.load(d / "x.npy")}
