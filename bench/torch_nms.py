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
the kept indices equal PyTorch's. With --m4 each input is also built into
a Cortex-M4F firmware (`dy2stc compile --emit c`, samples/firmware's
startup and linker script, a small app calling head_run_v and printing
the kept indices) and run under qemu-system-arm -M mps2-an386. Exit 1 on
a mismatch.

  /usr/bin/python3 bench/torch_nms.py --dy2stc build/compiler/dy2stc \\
      [--work /tmp/torch_nms] [--runs 5] [--m4]
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


HERE = os.path.dirname(os.path.abspath(__file__))
FIRMWARE = os.path.join(HERE, "..", "samples", "firmware")
M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]
APP = r"""#include <stdio.h>
#include "head.h"
#include "input.h"
static unsigned char arena[HEAD_ARENA_BYTES + 1] __attribute__((aligned(HEAD_ARENA_ALIGN)));
static int64_t keep[64];
int main(void) {
  int64_t dims[HEAD_NUM_DIMS] = HEAD_DIM_MAXES, shape[8];
  const void *in[1] = {x};
  void *out[1] = {keep};
  dims[0] = 1;
  int rc = head_run_v(arena, dims, in, out);
  head_output_shape(0, dims, shape);
  printf("status %d count %ld\n", rc, (long)shape[0]);
  for (int64_t i = 0; rc == 0 && i < shape[0]; i++)
    printf("keep %ld\n", (long)keep[i]);
  printf("done\n");
  return rc;
}
"""


def run_m4(dy, work, onnx_path, x):
    """The kept indices of the firmware built for x, run under qemu."""
    d = os.path.join(work, "m4")
    os.makedirs(d, exist_ok=True)
    subprocess.run([dy, "compile", onnx_path, "--emit", "c", "--name", "head", "-o",
                    os.path.join(d, "head"), "--max-batch", "1", "--cc", "arm-none-eabi-gcc",
                    "--cflags", " ".join(M4 + ["-ffreestanding"])], check=True,
                   capture_output=True)
    v = x.numpy().ravel()
    with open(os.path.join(d, "input.h"), "w") as f:
        f.write("static const float x[%d] = {%s};\n" % (v.size, ", ".join(float(t).hex()
                                                                         for t in v)))
    with open(os.path.join(d, "app.c"), "w") as f:
        f.write(APP)
    cc = ["arm-none-eabi-gcc"] + M4 + ["-std=c11", "-O2"]
    for src in ["head.c", "head_weights.c", "app.c", os.path.join(FIRMWARE, "startup.c")]:
        obj = os.path.join(d, os.path.basename(src)[:-2] + ".o")
        extra = ["-ffreestanding", "-Wall", "-Wextra", "-pedantic", "-Werror"] \
            if src.startswith("head") else []
        subprocess.run(cc + extra + ["-I", d, "-c", os.path.join(d, src) if src[0] != "/"
                                     else src, "-o", obj], check=True)
    elf = os.path.join(d, "head-m4.elf")
    subprocess.run(["arm-none-eabi-gcc"] + M4 + ["--specs=rdimon.specs", "-nostartfiles", "-T",
                    os.path.join(FIRMWARE, "mps2.ld"), "-Wl,--gc-sections"] +
                   [os.path.join(d, o) for o in ["startup.o", "app.o", "head.o",
                                                  "head_weights.o"]] + ["-o", elf], check=True)
    r = subprocess.run(["timeout", "300", "qemu-system-arm", "-M", "mps2-an386", "-nographic",
                        "-semihosting-config", "enable=on,target=native", "-kernel", elf],
                       capture_output=True, text=True)
    lines = r.stdout.splitlines()
    if r.returncode or not lines or not lines[0].startswith("status 0") or lines[-1] != "done":
        raise RuntimeError("the firmware failed: " + r.stdout + r.stderr)
    return np.array([int(t.split()[1]) for t in lines[1:-1]], dtype=np.int64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dy2stc", default="build/compiler/dy2stc")
    ap.add_argument("--work", default="/tmp/torch_nms")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--m4", action="store_true", help="also on a Cortex-M4F under qemu")
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
        line = (f"run {r}: PyTorch keeps {ref.shape[0]} of 36 boxes, the executable "
                f"{got.shape[0]}: {'ok' if ok else 'MISMATCH'}")
        if a.m4:
            fw = run_m4(dy, a.work, onnx_path, x)
            ok_m4 = fw.shape == ref.shape and np.array_equal(fw, ref)
            bad += not ok_m4
            line += f"; the Cortex-M4 {fw.shape[0]}: {'ok' if ok_m4 else 'MISMATCH'}"
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
