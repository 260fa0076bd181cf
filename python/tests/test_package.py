"""The dy2stc package against the CLI: load, run, compile, check, localize
and the errors, on the ONNX CNN of samples/onnx and the eager-built
samples (LeNet-5, the transformer with a dynamic seq)."""
import numpy as np
import pytest

import dy2stc
import dy2stc.testing
from dy2stc._model import Feeds
from conftest import CNN, EXE_ENV, cli, cli_error


def cli_run(tmp_path, model, **inputs):
    """`dy2stc run`'s outputs: {name: array}."""
    args = []
    for name, a in inputs.items():
        np.save(tmp_path / f"in_{len(args)}.npy", a)
        args += ["--input", f"{name}={tmp_path / f'in_{len(args)}.npy'}"]
    out = tmp_path / "out"
    cli("run", model, *args, "--output-dir", out)
    return {p.stem: np.load(p) for p in out.glob("*.npy")}


def test_load_describes_inputs_and_outputs():
    m = dy2stc.load(CNN)
    assert m.inputs == [dy2stc.TensorInfo("input.1", np.dtype(np.float32), ("batch", 3, 8, 8))]
    assert m.outputs == [dy2stc.TensorInfo("probs", np.dtype(np.float32), ("batch", 10))]


def test_symbolic_dims_are_strings(transformer_seq):
    path, _ = transformer_seq
    m = dy2stc.load(path)
    assert m.inputs[0].shape == ("batch", "seq", 128)


def test_run_is_dy2stc_run(tmp_path, cnn_input):
    got = dy2stc.load(CNN).run({"input.1": cnn_input})
    want = cli_run(tmp_path, CNN, **{"input.1": cnn_input})
    assert got.keys() == want.keys()
    np.testing.assert_array_equal(got["probs"], want["probs"])
    np.testing.assert_allclose(got["probs"], np.load(CNN.parent / "expected.npy"),
                               rtol=1e-5, atol=1e-6)


def test_run_positional_and_float64(cnn_input):
    m = dy2stc.load(CNN)
    a = m.run({"input.1": cnn_input})["probs"]
    # a list in input order; float64 is refused, as run refuses a '<f8' file
    np.testing.assert_array_equal(m.run([cnn_input])["probs"], a)
    with pytest.raises(dy2stc.Error, match="input 'input.1': unsupported dtype float64"):
        m.run([cnn_input.astype(np.float64)])


def test_compile_matches_run_and_the_cli_executable(tmp_path, cnn_input):
    m = dy2stc.load(CNN)
    net = dy2stc.compile(m, max_batch=8)
    got = net({"input.1": cnn_input})["probs"]
    ref = m.run({"input.1": cnn_input})["probs"]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    # the executable `dy2stc compile` builds runs the same C
    exe = tmp_path / "cnn"
    cli("compile", CNN, "-o", exe, "--max-batch", "8")
    np.save(tmp_path / "x.npy", cnn_input)
    import subprocess
    subprocess.run([str(exe), "--input", f"input.1={tmp_path / 'x.npy'}", "--output-dir",
                    str(tmp_path)], check=True, capture_output=True, env=EXE_ENV)
    np.testing.assert_array_equal(got, np.load(tmp_path / "probs.npy"))


def test_compile_from_a_path_and_every_batch(cnn_input):
    net = dy2stc.compile(str(CNN), max_batch=4)
    m = dy2stc.load(CNN)
    for b in (1, 2, 4):
        x = np.concatenate([cnn_input] * 2)[:b]
        np.testing.assert_allclose(net({"input.1": x})["probs"], m.run({"input.1": x})["probs"],
                                   rtol=1e-5, atol=1e-6)


def test_compile_cache_reuses_the_library(tmp_path, cnn_input):
    a = dy2stc.compile(CNN, max_batch=3, cache_dir=tmp_path)
    b = dy2stc.compile(CNN, max_batch=3, cache_dir=tmp_path)
    c = dy2stc.compile(CNN, max_batch=5, cache_dir=tmp_path)
    assert not a.cached and b.cached and not c.cached
    assert a.library == b.library != c.library
    assert a.library.startswith(str(tmp_path))
    np.testing.assert_array_equal(a({"input.1": cnn_input})["probs"],
                                  b({"input.1": cnn_input})["probs"])


def test_compile_passes_arrays_without_copies(cnn_input):
    net = dy2stc.compile(CNN, max_batch=8)
    f = Feeds(net.inputs, {"input.1": cnn_input})
    assert f.arrays[0] is cnn_input          # C-contiguous f32: the array itself
    strided = np.asfortranarray(cnn_input)
    f = Feeds(net.inputs, {"input.1": strided})
    assert f.arrays[0] is not strided and f.arrays[0].flags.c_contiguous
    np.testing.assert_array_equal(net({"input.1": strided})["probs"],
                                  net({"input.1": cnn_input})["probs"])


def test_eager_samples_compile_and_match(lenet5, transformer_seq):
    for path, feeds in (lenet5, transformer_seq):
        dy2stc.testing.assert_compiled_matches(path, feeds, rtol=1e-4, atol=1e-5)


def test_size_symbol_bound_and_other_seq(transformer_seq):
    path, feeds = transformer_seq
    net = dy2stc.compile(path, max_batch=4, max_dims={"seq": 64})
    m = dy2stc.load(path)
    x = feeds["x"][:, :16]
    np.testing.assert_allclose(net({"x": x})["out"], m.run({"x": x})["out"],
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(dy2stc.Error, match="seq = 65 is above its bound 64"):
        net({"x": np.zeros((1, 65, 128), np.float32)})


def test_check_reports_every_output(cnn_input):
    errs = dy2stc.check(CNN, {"input.1": cnn_input})
    assert list(errs) == ["probs"]
    assert errs["probs"].ok and errs["probs"].max_abs < 1e-5


def test_assert_compiled_matches_fails_beyond_tolerance(cnn_input):
    # a negative atol puts every element beyond tolerance: the helper must say so
    with pytest.raises(AssertionError, match="output 'probs': 20 elements beyond"):
        dy2stc.testing.assert_compiled_matches(CNN, {"input.1": cnn_input}, rtol=0, atol=-1)


def test_localize_agrees_then_finds_a_planted_op(cnn_input):
    d = dy2stc.localize(CNN, {"input.1": cnn_input}, opt_level=0)
    assert not d and d.n_compared > 0
    assert "op results all agree" in str(d)
    h = None
    for k in range(d.n_compared + 2):  # the first op id with an f32 result
        h = dy2stc.localize(CNN, {"input.1": cnn_input}, opt_level=0, plant_op=k)
        if h:
            break
    assert h, "a planted op must be found"
    assert h.op_id == k
    assert h.n_bad >= 1 and h.var and h.op and h.shown[0][2] != h.shown[0][1]
    assert "first divergence" in str(h)


def _same_error(tmp_path, feeds_py, cli_args):
    """The package's dy2stc.Error for feeds_py on run and on the compiled
    code, and the CLI's message for the same input."""
    m = dy2stc.load(CNN)
    net = dy2stc.compile(m, max_batch=8)
    with pytest.raises(dy2stc.Error) as run_err:
        m.run(feeds_py)
    with pytest.raises(dy2stc.Error) as net_err:
        net(feeds_py)
    want = cli_error("run", CNN, *cli_args, "--output-dir", tmp_path)
    assert str(run_err.value) == want
    assert str(net_err.value) == want
    return want


def test_wrong_shape_is_the_cli_error(tmp_path, cnn_input):
    bad = cnn_input[:, :2].copy()
    np.save(tmp_path / "bad.npy", bad)
    msg = _same_error(tmp_path, {"input.1": bad}, ["--input", f"input.1={tmp_path}/bad.npy"])
    assert msg == "input 'input.1' is f32[2,2,8,8], the Program expects f32[-1,3,8,8]"


def test_wrong_dtype_is_the_cli_error(tmp_path, cnn_input):
    bad = cnn_input.astype(np.int32)
    np.save(tmp_path / "bad.npy", bad)
    m = dy2stc.load(CNN)
    with pytest.raises(dy2stc.Error) as run_err:
        m.run({"input.1": bad})
    assert str(run_err.value) == "input 'input.1' is i32[2,3,8,8], the Program expects f32[-1,3,8,8]"
    # the CLI refuses the same input, naming its file
    want = cli_error("run", CNN, "--input", f"input.1={tmp_path}/bad.npy", "--output-dir", tmp_path)
    assert want == f"input 'input.1': {tmp_path}/bad.npy: dtype '<i4', expected '<f4' (f32)"


def test_unknown_input_is_the_cli_error(tmp_path, cnn_input):
    np.save(tmp_path / "x.npy", cnn_input)
    msg = _same_error(tmp_path, {"image": cnn_input}, ["--input", f"image={tmp_path}/x.npy"])
    assert msg == "the model has no input named 'image'"


def test_missing_input_and_unsupported_dtype():
    m = dy2stc.load(CNN)
    with pytest.raises(dy2stc.Error, match=r"^missing input 'input.1'$"):
        m.run({})
    with pytest.raises(dy2stc.Error, match="input 'input.1': unsupported dtype float16"):
        m.run({"input.1": np.zeros((1, 3, 8, 8), np.float16)})
    with pytest.raises(dy2stc.Error, match="feeds must be a dict"):
        m.run(np.zeros((1, 3, 8, 8), np.float32))


def test_batch_above_max_batch(cnn_input):
    net = dy2stc.compile(CNN, max_batch=1)
    with pytest.raises(dy2stc.Error, match=r"^input 'input.1': batch = 2 is above its bound 1$"):
        net({"input.1": cnn_input})


def test_bad_file_is_the_cli_error(tmp_path):
    with pytest.raises(dy2stc.Error) as e:
        dy2stc.load(tmp_path / "none.onnx")
    assert str(e.value) == cli_error("show", tmp_path / "none.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(dy2stc.Error) as e:
        dy2stc.load(junk)
    assert str(e.value) == cli_error("show", junk)
    assert e.value.status != 0


def test_bad_compile_options():
    with pytest.raises(dy2stc.Error, match="unknown compile option 'fast'"):
        dy2stc.compile(CNN, fast=True)
    with pytest.raises(dy2stc.Error, match="'max_batch' needs an integer from 1"):
        dy2stc.compile(CNN, max_batch=0)
    with pytest.raises(dy2stc.Error, match="the model has no size symbol 'seq'"):
        dy2stc.compile(CNN, max_dims={"seq": 4})
    with pytest.raises(dy2stc.Error, match="unknown target 'z80'"):
        dy2stc.compile(CNN, target="z80")


def test_progress_hears_each_phase(tmp_path):
    phases = []
    dy2stc.compile(CNN, max_batch=2, cache_dir=tmp_path,
                   progress=lambda phase, done, total: phases.append(phase))
    assert phases[0] == "import" and phases[-1] == "cc"
    phases.clear()
    dy2stc.compile(CNN, max_batch=2, cache_dir=tmp_path,
                   progress=lambda phase, done, total: phases.append(phase))
    assert "cc" not in phases          # cached: the C compiler does not run


def test_library_not_found_says_so(tmp_path):
    import subprocess
    import sys
    from conftest import ROOT
    code = ("import dy2stc\ntry:\n    dy2stc.load('x.onnx')\nexcept dy2stc.Error as e:\n"
            "    print(e)\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "python"),
           "DY2STC_LIB": str(tmp_path / "libdy2stc.so")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert "cannot find libdy2stc.so" in r.stdout and "DY2STC_LIB" in r.stdout


def test_paddle_model_with_and_without_params(tmp_path, cnn_input):
    cli("export", CNN, "--to", "paddle", "-o", tmp_path / "cnn")
    pd = tmp_path / "cnn.pdmodel"
    moved = tmp_path / "weights.bin"
    (tmp_path / "cnn.pdiparams").rename(moved)
    ref = dy2stc.load(CNN).run({"input.1": cnn_input})["probs"]
    m = dy2stc.load(pd, params=moved)
    assert m.inputs[0].shape == ("batch", 3, 8, 8)
    np.testing.assert_array_equal(m.run({"input.1": cnn_input})["probs"], ref)
    np.testing.assert_allclose(dy2stc.compile(m)({"input.1": cnn_input})["probs"], ref,
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(dy2stc.Error) as e:
        dy2stc.load(pd)               # its params are not beside it any more
    # run's line (show prints a Program without params: their types only)
    assert str(e.value) == cli_error("run", pd)
    with pytest.raises(dy2stc.Error, match="params are for a Paddle model"):
        dy2stc.load(CNN, params=moved)


def test_threads_compile_matches(cnn_input):
    m = dy2stc.load(CNN)
    net = dy2stc.compile(m, max_batch=2, threads=2)
    np.testing.assert_allclose(net({"input.1": cnn_input})["probs"],
                               m.run({"input.1": cnn_input})["probs"], rtol=1e-5, atol=1e-6)
