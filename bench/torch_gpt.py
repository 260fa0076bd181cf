#!/usr/bin/python3
"""torch_gpt.py - a GPT-style block with a dynamic sequence (issue 29 item 2),
exported by PyTorch to ONNX with dynamic_axes on seq, compiled with dy2stc
and compared with PyTorch at several sequence lengths.

The block: token embedding + learned position embedding indexed by
torch.arange(seq) (ONNX: Shape -> Gather -> Range), one pre-norm causal
self-attention layer (the causal mask compares the positions:
pos[None, :] > pos[:, None], seq x seq at run time) and an MLP, a final LayerNorm and a linear head. Exported once
(opset 13, dynamic_axes {"tokens": {1: "seq"}}), compiled once with
`dy2stc compile`, run on random tokens at each length, compiled and on
the static executor (`dy2stc run`); a line per length gives the max abs
error of each against PyTorch relative to max |y|. Exit 1 when
one is above --tol.

  /usr/bin/python3 bench/torch_gpt.py --dy2stc build/compiler/dy2stc \\
      [--work /tmp/torch_gpt] [--seqs 7,16] [--tol 1e-4]
"""
import argparse
import math
import os
import subprocess
import sys

import numpy as np
import torch

VOCAB, D, HEADS, MAXPOS = 50, 32, 4, 64


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, D)
        self.pos = torch.nn.Embedding(MAXPOS, D)
        self.ln1 = torch.nn.LayerNorm(D)
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.proj = torch.nn.Linear(D, D)
        self.ln2 = torch.nn.LayerNorm(D)
        self.fc1 = torch.nn.Linear(D, 4 * D)
        self.fc2 = torch.nn.Linear(4 * D, D)
        self.lnf = torch.nn.LayerNorm(D)
        self.head = torch.nn.Linear(D, VOCAB)

    def forward(self, tokens):
        b, seq = tokens.shape
        pos = torch.arange(seq, dtype=torch.long)
        x = self.tok(tokens) + self.pos(pos)
        h = self.ln1(x)
        q, k, v = self.qkv(h).split(D, dim=2)
        hd = D // HEADS
        q = q.reshape(b, seq, HEADS, hd).transpose(1, 2)
        k = k.reshape(b, seq, HEADS, hd).transpose(1, 2)
        v = v.reshape(b, seq, HEADS, hd).transpose(1, 2)
        att = q @ k.transpose(-2, -1) / math.sqrt(hd)
        mask = pos[None, :] > pos[:, None]  # causal: key after query
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, seq, D)
        x = x + self.proj(y)
        x = x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))
        return self.head(self.lnf(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dy2stc", default="build/compiler/dy2stc")
    ap.add_argument("--work", default="/tmp/torch_gpt")
    ap.add_argument("--seqs", default="7,16")
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    dy = os.path.abspath(a.dy2stc)
    torch.manual_seed(29)
    gen = torch.Generator().manual_seed(29)
    model = Block().eval()
    os.makedirs(a.work, exist_ok=True)
    onnx_path = os.path.join(a.work, "gpt.onnx")
    example = torch.randint(0, VOCAB, (1, 5), generator=gen)
    torch.onnx.export(model, example, onnx_path, input_names=["tokens"], output_names=["y"],
                      opset_version=13, dynamic_axes={"tokens": {1: "seq"}, "y": {1: "seq"}})
    exe = os.path.join(a.work, "gpt")
    subprocess.run([dy, "compile", onnx_path, "-o", exe], check=True)
    bad = 0
    for seq in [int(s) for s in a.seqs.split(",")]:
        tokens = torch.randint(0, VOCAB, (1, seq), generator=gen)
        inp = os.path.join(a.work, f"tokens_{seq}.npy")
        np.save(inp, tokens.numpy())
        out = os.path.join(a.work, f"out_{seq}")
        os.makedirs(out, exist_ok=True)
        subprocess.run([exe, "--input", "tokens=" + inp, "--output-dir", out], check=True,
                       capture_output=True)
        with torch.no_grad():
            ref = model(tokens).numpy()
        got = np.load(os.path.join(out, "y.npy"))
        # the same model on the static executor (dy2stc run)
        run_out = os.path.join(a.work, f"run_{seq}")
        os.makedirs(run_out, exist_ok=True)
        subprocess.run([dy, "run", onnx_path, "--input", "tokens=" + inp, "--output-dir",
                        run_out], check=True, capture_output=True)
        got_run = np.load(os.path.join(run_out, "y.npy"))
        scale = max(float(np.max(np.abs(ref))), 1e-30)
        errs = [float(np.max(np.abs(g - ref))) / scale if g.shape == ref.shape else float("inf")
                for g in (got, got_run)]
        ok = max(errs) <= a.tol
        bad += not ok
        print(f"seq {seq}: output {list(got.shape)}, max error {errs[0]:.2e} compiled, "
              f"{errs[1]:.2e} executor, relative to max |y| {scale:.3g}: "
              f"{'ok' if ok else 'MISMATCH'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
