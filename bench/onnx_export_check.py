#!/usr/bin/python3
"""onnx_export_check.py - `dy2stc export --to onnx` checked in ONNX Runtime.

Each model is exported to ONNX by dy2stc, run in ONNX Runtime
(onnxruntime-node, bench/ort/ort_run.js, one thread, the model's first
input fed, its first output kept) and compared with `dy2stc run` of the
model as dy2stc read it (the static executor):

  samples      the eager-built LeNet-5 and transformer (samples/*.c, saved
               with dy_jit_save), the ONNX CNN (samples/onnx/cnn.onnx)
  control      samples/control: cond and while, exported as If and Loop
  int8         LeNet-5 quantized by `dy2stc quantize`, exported as
               QLinearConv and QuantizeLinear / DequantizeLinear around
               float ops (QDQ)
  testdata     the first --testdata models of the ONNX backend test data
               (Debian libonnx-testdata) with one float input and output
               that dy2stc imports: ONNX -> dy2stc -> ONNX

A float model passes when every element is within 1e-5 (abs) + 1e-5 *
|dy2stc's|. An int8 model's requantization differs by design: dy2stc's is
TFLite's fixed-point rule, ONNX Runtime's QDQ graph rounds float products;
it passes within one quantization step of its output, and its max error is
printed beside it.

A check, not a test (ONNX Runtime is a bench-only dependency). Needs node
with bench/ort/node_modules (`sh scripts/setup.sh --bench`) and numpy.

  /usr/bin/python3 bench/onnx_export_check.py --build build [--work DIR]
      [--testdata 30]
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
ORT_RUN = os.path.join(HERE, "ort", "ort_run.js")
NODE_DATA = "/usr/share/libonnx-testdata/data/node"


def run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    return r.stdout


def first_feed(dy, model):
    """The model's first input name, from `dy2stc show`."""
    for line in run([dy, "show", model]).splitlines():
        if line.strip().startswith("var ") and " feed 0" in line:
            return line.split()[1]
    raise RuntimeError(f"{model}: no feed 0")


def check(dy, name, model, x_npy, work, tol_steps=None):
    """Export model, run it in ORT and with `dy2stc run`; returns the row."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    onnx = os.path.join(d, name + ".onnx")
    run([dy, "export", model, "--to", "onnx", "-o", onnx])
    feed = first_feed(dy, model)
    outd = os.path.join(d, "dy")
    shutil.rmtree(outd, ignore_errors=True)
    run([dy, "run", model, "--input", f"{feed}={x_npy}", "--output-dir", outd])
    outs = sorted(glob.glob(os.path.join(outd, "*.npy")))
    ref = np.load(outs[0]) if len(outs) == 1 else None
    if ref is None:  # several outputs: the first fetch, by `dy2stc show`
        fetch = [l.split()[2] for l in run([dy, "show", model]).splitlines()
                 if l.strip().startswith("fetch 0 ")][0]
        ref = np.load(os.path.join(outd, "".join(
            c if c.isalnum() or c in "._-" else "_" for c in fetch) + ".npy"))
    x = np.load(x_npy)
    xb, yb = os.path.join(d, "x.bin"), os.path.join(d, "y.bin")
    x.astype("<f4").tofile(xb)
    run(["node", ORT_RUN, onnx, xb, ",".join(map(str, x.shape)) or "1", "1", "1", yb])
    got = np.fromfile(yb, dtype=ref.dtype.newbyteorder("<")).reshape(ref.shape)
    err = float(np.max(np.abs(got.astype(np.float64) - ref))) if ref.size else 0.0
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    if tol_steps is None:
        ok = bool(np.all(np.abs(got.astype(np.float64) - ref) <= 1e-5 + 1e-5 * np.abs(ref)))
        rule = "1e-5"
    else:
        ok = err <= tol_steps
        rule = f"{tol_steps:.2g} (1 step)"
    ext = os.path.exists(onnx + ".data")
    return ok, f"{name:44s} {str(ref.dtype):8s} {str(list(ref.shape)):18s} max|err| {err:9.3g}" \
               f"  max|ref| {scale:8.3g}  tol {rule:14s} {'ext ' if ext else ''}" \
               f"{'ok' if ok else 'FAIL'}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--work", default="/tmp/onnx_export_check")
    ap.add_argument("--testdata", type=int, default=30)
    a = ap.parse_args()
    dy = os.path.join(a.build, "compiler", "dy2stc")
    samples = os.path.join(a.build, "samples")
    if not os.path.isdir(os.path.join(HERE, "ort", "node_modules", "onnxruntime-node")):
        sys.exit("onnx_export_check: bench/ort/node_modules is missing: sh scripts/setup.sh --bench")
    os.makedirs(a.work, exist_ok=True)
    rows, bad = [], 0

    def add(*args, **kw):
        nonlocal bad
        try:
            ok, row = check(dy, *args, **kw)
        except RuntimeError as e:
            ok, row = False, f"{args[0]:44s} ERROR {e}"
        bad += not ok
        rows.append(row)
        print(row, flush=True)

    # the eager samples, and LeNet-5 quantized
    for s in ("lenet5", "transformer"):
        d = os.path.join(a.work, "src_" + s)
        os.makedirs(d, exist_ok=True)
        run([os.path.join(samples, s), "--batch", "3", "--out", d])
        add(s, os.path.join(d, s), os.path.join(d, "x.npy"), a.work)
    # size symbols: the transformer with a dynamic sequence, run at seq 5
    d = os.path.join(a.work, "src_transformer_seq")
    os.makedirs(d, exist_ok=True)
    run([os.path.join(samples, "transformer"), "--out", d, "--dynamic-seq"])
    np.save(os.path.join(d, "x5.npy"), np.random.default_rng(5).standard_normal(
        (2, 5, 128)).astype(np.float32))
    add("transformer_dynamic_seq_at_5", os.path.join(d, "transformer"),
        os.path.join(d, "x5.npy"), a.work)
    # the PyTorch-shaped encoder of tests/onnx_encoder.h ([seq, batch, 32]),
    # which ctest -R test_onnx_export writes
    enc = os.path.join(a.build, "tests", "onnx_export", "enc.onnx")
    if os.path.exists(enc):
        d = os.path.join(a.work, "src_encoder")
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "x.npy"), np.random.default_rng(7).standard_normal(
            (5, 2, 32)).astype(np.float32))
        add("onnx_encoder_seq5_batch2", enc, os.path.join(d, "x.npy"), a.work)
    d = os.path.join(a.work, "src_lenet5")
    os.makedirs(os.path.join(d, "cal"), exist_ok=True)
    shutil.copy(os.path.join(d, "x.npy"), os.path.join(d, "cal", "x.npy"))
    run([dy, "quantize", os.path.join(d, "lenet5"), "--calibrate", os.path.join(d, "cal"),
         "-o", os.path.join(d, "q8")])
    # one step of the output's quantization: its dequantize's scale
    q8 = run([dy, "show", os.path.join(d, "q8")])
    step = None
    for line in q8.splitlines():
        if " = dequantize_linear(" in line:
            sc = line.split("(")[1].split(",")[1].strip()
            for l in q8.splitlines():
                if l.strip().startswith(f"var {sc} ") and "= [" in l:
                    step = float(l.split("= [")[1].rstrip("]"))
    add("lenet5_int8", os.path.join(d, "q8"), os.path.join(d, "x.npy"), a.work,
        tol_steps=step * 1.01 if step else 1e-2)
    add("cnn_sample_onnx", os.path.join(SRC, "samples", "onnx", "cnn.onnx"),
        os.path.join(SRC, "samples", "onnx", "input.npy"), a.work)
    # control flow
    for s in ("early_exit", "greedy_decode", "jacobi"):
        d = os.path.join(a.work, "src_" + s)
        os.makedirs(d, exist_ok=True)
        run([os.path.join(samples, s), "--out", d])
        add(s, os.path.join(d, s + ".dymodel"), os.path.join(d, "x_0.npy"), a.work)
    # ONNX backend test data: one float input of static shape, one output,
    # spread evenly over the (sorted) list
    cands = []
    for t in sorted(os.listdir(NODE_DATA)) if os.path.isdir(NODE_DATA) else []:
        ins = glob.glob(os.path.join(NODE_DATA, t, "test_data_set_0", "input_*.pb"))
        outs = glob.glob(os.path.join(NODE_DATA, t, "test_data_set_0", "output_*.pb"))
        if len(ins) == 1 and len(outs) == 1 and not t.endswith("_expanded"):
            cands.append(t)
    picked = []
    for t in cands:
        try:
            text = run([dy, "show", os.path.join(NODE_DATA, t, "model.onnx")])
        except RuntimeError:
            continue
        feeds = [l for l in text.splitlines() if " feed " in l]
        if len(feeds) == 1 and " : f32[" in feeds[0] and "[-" not in feeds[0]:
            picked.append(t)
    step = max(1, len(picked) // max(1, a.testdata))
    try:
        import onnx
        import onnx.numpy_helper as nh
    except ImportError:
        print("onnx_export_check: python3-onnx is missing: no testdata models", file=sys.stderr)
        picked = []
    for t in picked[::step][:a.testdata]:
        tp = onnx.TensorProto()
        with open(glob.glob(os.path.join(NODE_DATA, t, "test_data_set_0", "input_*.pb"))[0],
                  "rb") as f:
            tp.ParseFromString(f.read())
        d = os.path.join(a.work, "src_" + t)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "x.npy"), nh.to_array(tp).astype(np.float32))
        add(t, os.path.join(NODE_DATA, t, "model.onnx"), os.path.join(d, "x.npy"), a.work)
    print(f"\n{len(rows)} models, {len(rows) - bad} ok, {bad} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
