#!/usr/bin/python3
"""torch_nms.py - a small detection head ending in torchvision.ops.nms,
exported by PyTorch to ONNX (NonMaxSuppression), compiled with dy2stc:
does the executable keep the boxes PyTorch keeps? An accuracy check, not
a benchmark (issue 29: sizes known only at run time).

The head: a 1x1 conv over a feature map gives per anchor 4 box offsets
and a score; boxes = anchors + offsets (corner form), scores = sigmoid;
then torchvision.ops.nms(boxes, scores, iou) -> the kept indices, a count
set at run time. Several random inputs (different counts each) are run
through one executable; the line per input gives the count and whether
the kept indices equal PyTorch's. Exit 1 on a mismatch.

  /usr/bin/python3 bench/torch_nms.py --dy2stc build/compiler/dy2stc \\
      [--work /tmp/torch_nms] [--runs 5]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision


class Head(torch.nn.Module):
    def __init__(self, c=8, h=6, w=6, iou=0.4):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, 5, 1)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32),
                                torch.arange(w, dtype=torch.float32), indexing="ij")
        a = torch.stack([xs, ys, xs + 2.5, ys + 2.5], -1).reshape(-1, 4)  # neighbours IoU 0.43
        self.register_buffer("anchors", a)
        self.iou = iou

    def forward(self, x):
        o = self.conv(x)[0].reshape(5, -1).t()          # [h*w, 5]
        boxes = self.anchors + o[:, :4] * 0.5
        scores = torch.sigmoid(o[:, 4])
        return torchvision.ops.nms(boxes, scores, self.iou)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dy2stc", default="build/compiler/dy2stc")
    ap.add_argument("--work", default="/tmp/torch_nms")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    dy = os.path.abspath(a.dy2stc)
    torch.manual_seed(29)
    gen = torch.Generator().manual_seed(29)
    model = Head().eval()
    os.makedirs(a.work, exist_ok=True)
    x0 = torch.randn((1, 8, 6, 6), generator=gen)
    onnx_path = os.path.join(a.work, "head.onnx")
    torch.onnx.export(model, x0, onnx_path, input_names=["x"], output_names=["keep"],
                      opset_version=13)
    exe = os.path.join(a.work, "head")
    subprocess.run([dy, "compile", onnx_path, "-o", exe], check=True)
    bad = 0
    for r in range(a.runs):
        x = torch.randn((1, 8, 6, 6), generator=gen) * (1 + r)
        inp = os.path.join(a.work, f"x{r}.npy")
        np.save(inp, x.numpy())
        out = os.path.join(a.work, f"out{r}")
        os.makedirs(out, exist_ok=True)
        subprocess.run([exe, "--input", "x=" + inp, "--output-dir", out], check=True,
                       capture_output=True)
        with torch.no_grad():
            ref = model(x).numpy()
        got = np.load(os.path.join(out, "keep.npy"))
        ok = got.shape == ref.shape and np.array_equal(got, ref)
        bad += not ok
        print(f"run {r}: PyTorch keeps {ref.shape[0]} of 36 boxes, the executable "
              f"{got.shape[0]}: {'ok' if ok else 'MISMATCH'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
