#!/usr/bin/python3
"""torch_encoder.py - a real PyTorch export with dynamic batch and sequence.

Issue 13's check against the exporter itself (tests/onnx_encoder.h is the
project's own generator of the same graph form, which `make test` runs):
PyTorch 1.13 (Debian python3-torch) exports nn.TransformerEncoder (2
layers, d=32, 4 heads, batch_first) at opset 13 with dim_params `batch`
and `seq`; dy2stc imports it, compiles it with --max-batch 4 --max-dim
seq=16, and the static executor and the executable are compared with
PyTorch at several (batch, seq) pairs including the bounds; inputs above a
bound or with a wrong static dim must be refused.

  /usr/bin/python3 bench/torch_encoder.py [BUILD_DIR]     (default: build)

Needs python3-torch, python3-onnx and python3-numpy (scripts/setup.sh
--bench); not part of `make test`.
"""
import os, subprocess, sys, tempfile
import numpy as np
import torch

build = sys.argv[1] if len(sys.argv) > 1 else "build"
dy2stc = os.path.abspath(os.path.join(build, "compiler", "dy2stc"))
work = tempfile.mkdtemp(prefix="torch_encoder.")
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                         batch_first=True, dropout=0.0)
enc = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
onnx = os.path.join(work, "enc.onnx")
torch.onnx.export(enc, torch.randn(2, 5, 32), onnx, opset_version=13,
                  input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
exe = os.path.join(work, "enc")
subprocess.run([dy2stc, "compile", onnx, "-o", exe, "--max-batch", "4",
                "--max-dim", "seq=16", "--report"], check=True)

worst = 0.0
for b, s in [(1, 1), (2, 5), (3, 7), (1, 16), (4, 16)]:
    x = torch.randn(b, s, 32)
    with torch.no_grad():
        ref = enc(x).numpy()
    d = os.path.join(work, f"{b}_{s}")
    os.makedirs(os.path.join(d, "run"))
    os.makedirs(os.path.join(d, "exe"))
    np.save(os.path.join(d, "x.npy"), x.numpy())
    subprocess.run([dy2stc, "run", onnx, "--input", "x=" + os.path.join(d, "x.npy"),
                    "--output-dir", os.path.join(d, "run")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([exe, os.path.join(d, "x.npy")], cwd=os.path.join(d, "exe"), check=True,
                   stdout=subprocess.DEVNULL)
    for how in ("run", "exe"):
        got = np.load(os.path.join(d, how, "y.npy"))
        err = float(np.abs(got - ref).max() / np.abs(ref).max())
        worst = max(worst, err)
        print(f"batch {b} seq {s:2d} {how}: shape {got.shape}, scale-relative error {err:.2e}")
        assert got.shape == ref.shape and err <= 1e-4, "mismatch"

for shape, what in [((5, 3, 32), "batch above its bound"), ((2, 17, 32), "seq above its bound"),
                    ((2, 5, 31), "a wrong static dim")]:
    f = os.path.join(work, "bad.npy")
    np.save(f, np.zeros(shape, np.float32))
    r = subprocess.run([exe, f], cwd=work, capture_output=True, text=True)
    print(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    assert r.returncode != 0
print(f"torch_encoder: every pair matches PyTorch (worst {worst:.2e}); refusals ok; work in {work}")
