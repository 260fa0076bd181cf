#!/usr/bin/python3
"""torch_match.py - does a PyTorch model, exported to ONNX, compile with
dy2stc and match PyTorch? An accuracy check, not a benchmark (issue 29:
densenet121, whose Concats have up to 25 inputs).

Each model is built with random initialisation (batch norm statistics
randomised too, so they are not the identity), in eval mode, exported by
torch.onnx.export (opset 13, static shape), compiled with `dy2stc compile`
and run on one random input; the line per model gives the max abs error of
the executable's output against PyTorch's, relative to the largest
magnitude of PyTorch's output. Exit 1 when one is above --tol.

  /usr/bin/python3 bench/torch_match.py --dy2stc build/compiler/dy2stc \\
      [--work /tmp/torch_match] [--only densenet121] [--tol 1e-4]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision

MODELS = {
    "densenet121": (lambda: torchvision.models.densenet121(), (1, 3, 224, 224)),
}


def randomise_bn(model, gen):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dy2stc", default="build/compiler/dy2stc")
    ap.add_argument("--work", default="/tmp/torch_match")
    ap.add_argument("--only", default="")
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    dy = os.path.abspath(a.dy2stc)
    gen = torch.Generator().manual_seed(29)
    torch.manual_seed(29)
    bad = 0
    for name in [n for n in MODELS if not a.only or n in a.only.split(",")]:
        make, shape = MODELS[name]
        model = make().eval()
        with torch.no_grad():
            randomise_bn(model, gen)
        x = torch.randn(shape, generator=gen)
        d = os.path.join(a.work, name)
        os.makedirs(d, exist_ok=True)
        onnx_path = os.path.join(d, name + ".onnx")
        torch.onnx.export(model, x, onnx_path, input_names=["x"], output_names=["y"],
                          opset_version=13)
        inp = os.path.join(d, "x.npy")
        np.save(inp, x.numpy())
        exe = os.path.join(d, name)
        subprocess.run([dy, "compile", onnx_path, "-o", exe], check=True)
        subprocess.run([exe, "--input", "x=" + inp, "--output-dir", d], check=True,
                       capture_output=True)
        with torch.no_grad():
            ref = model(x).numpy()
        got = np.load(os.path.join(d, "y.npy"))
        err = float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
        ok = got.shape == ref.shape and err <= a.tol
        bad += not ok
        print(f"{name}: output {list(got.shape)}, max error {err:.2e} relative to "
              f"max |y| {float(np.max(np.abs(ref))):.3g}: {'ok' if ok else 'MISMATCH'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
