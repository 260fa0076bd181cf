#!/usr/bin/python3
"""torch_while_train.py - does a torch.jit.script-ed PyTorch model with a
data-dependent `while` and an `if`, exported to ONNX (Loop with an If in
its body), train with dy2stc to PyTorch's trained result? (issue 28, item
2.) An accuracy check, not a benchmark.

The model (4 -> 3 -> 3 -> 2, the loop's trip count 1 to 4 by the data):

    h = tanh(l1(x)); i = 0
    while i < 4:
        h = tanh(l2(h)) if mean(h) > -0.1 else h * 0.5 + l2(h) * 0.25
        i += 1
        if mean(h) > -0.05: break
    return l3(h)

is scripted, exported by torch.onnx.export (opset 13, the batch dynamic)
and trained on 24 random samples (MSE, batch 4, 3 epochs, the file order:
no shuffle) by PyTorch and by dy2stc, with SGD with momentum 0.9 (lr 0.1)
and with Adam (lr 0.01). Each line gives the max abs difference of the
trained model's logits on the training inputs against PyTorch's:
`dy2stc train` (checked against --tol, default 1e-4) and the compiled
trainer of `dy2stc compile --train --emit exe` (--tol-exe, default 1e-3).
It also states how many PyTorch steps ran each trip count (the loop is
data-dependent) and how far training moved the logits. Exit 1 when a
difference is above its tolerance.

  /usr/bin/python3 bench/torch_while_train.py --dy2stc build/compiler/dy2stc \\
      [--work /tmp/torch_while_train]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch

N, BATCH, EPOCHS = 24, 4, 3
# the thresholds (literals in forward too: TorchScript takes no globals):
# on these data 2, 3 or 4 trips, both branches taken
BREAK = -0.05
TRIPS = []  # per PyTorch training step: the loop's trip count
BRANCHES = [0, 0]  # trips that took the if's then / else branch


class WhileNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(4, 3)
        self.l2 = torch.nn.Linear(3, 3)
        self.l3 = torch.nn.Linear(3, 2)

    def forward(self, x):
        h = torch.tanh(self.l1(x))
        i = 0
        while i < 4:
            if bool(h.mean() > -0.1):
                h = torch.tanh(self.l2(h))
            else:
                h = h * 0.5 + self.l2(h) * 0.25
            i += 1
            if bool(h.mean() > -0.05):  # BREAK
                break
        return self.l3(h)


def trips_of(net, x):
    """The loop's trip count on x (the forward above, counted)."""
    with torch.no_grad():
        h = torch.tanh(net.l1(x))
        i = 0
        while i < 4:
            pos = bool(h.mean() > -0.1)
            BRANCHES[0 if pos else 1] += 1
            h = torch.tanh(net.l2(h)) if pos else h * 0.5 + net.l2(h) * 0.25
            i += 1
            if bool(h.mean() > BREAK):
                break
        return i


def torch_train(net, opt, x, y):
    """EPOCHS over the samples in file order, BATCH per step, MSE."""
    loss_fn = torch.nn.MSELoss()
    for _ in range(EPOCHS):
        for b in range(0, N, BATCH):
            xb, yb = x[b:b + BATCH], y[b:b + BATCH]
            TRIPS.append(trips_of(net, xb))
            opt.zero_grad()
            loss_fn(net(xb), yb).backward()
            opt.step()
    with torch.no_grad():
        return net(x).numpy()


def sh(cmd, log):
    with open(log, "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    if rc:
        sys.stderr.write("failed (%d): %s\n%s" % (rc, " ".join(cmd), open(log).read()))
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dy2stc", default="build/compiler/dy2stc")
    ap.add_argument("--work", default="/tmp/torch_while_train")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--tol-exe", type=float, default=1e-3)
    a = ap.parse_args()
    dy = os.path.abspath(a.dy2stc)
    os.makedirs(a.work, exist_ok=True)
    w = lambda name: os.path.join(a.work, name)
    torch.manual_seed(0)
    init = WhileNet()
    x = torch.randn(N, 4)
    y = torch.randn(N, 2)
    np.save(w("x.npy"), x.numpy())
    np.save(w("y.npy"), y.numpy())
    torch.onnx.export(torch.jit.script(init), (x[:BATCH],), w("net.onnx"), opset_version=13,
                      input_names=["x"], output_names=["out"],
                      dynamic_axes={"x": {0: "N"}, "out": {0: "N"}})
    with torch.no_grad():
        before = init(x).numpy()
    runs = [
        ("sgd+momentum", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
         ["--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.1"]),
        ("adam", lambda p: torch.optim.Adam(p, lr=0.01),
         ["--optimizer", "adam", "--lr", "0.01"]),
    ]
    data = ["--input", "x=" + w("x.npy"), "--labels", w("y.npy")]
    loop = ["--batch", str(BATCH), "--epochs", str(EPOCHS), "--no-shuffle"]
    bad = False
    for name, make, cli in runs:
        net = WhileNet()
        net.load_state_dict(init.state_dict())
        del TRIPS[:]
        BRANCHES[:] = [0, 0]
        want = torch_train(net, make(net.parameters()), x, y)
        hist = [TRIPS.count(t) for t in range(1, 5)]
        # dy2stc train: the trained inference model, run on x
        sh([dy, "train", w("net.onnx")] + data + ["--loss", "mse"] + cli + loop +
           ["-q", "-o", w("trained_" + name)], w("train_%s.log" % name))
        sh([dy, "run", w("trained_%s.dymodel" % name), "--input", "x=" + w("x.npy"),
            "--output-dir", w("out_" + name)], w("run_%s.log" % name))
        got = np.load(w("out_%s/out.npy" % name))
        # the compiled trainer: its state into the model (dy2stc params), run on x
        sh([dy, "compile", w("net.onnx"), "--train", "--loss", "mse"] + cli +
           ["--batch", str(BATCH), "--emit", "exe", "-o", w("trainer_" + name)],
           w("compile_%s.log" % name))
        state = w("state_" + name)
        subprocess.call(["rm", "-rf", state])
        sh([w("trainer_" + name)] + data + loop + ["-o", state], w("trainer_%s.log" % name))
        sh([dy, "params", w("net.onnx"), "--from", state, "-o", w("exe_" + name)],
           w("params_%s.log" % name))
        sh([dy, "run", w("exe_%s.dymodel" % name), "--input", "x=" + w("x.npy"),
            "--output-dir", w("exeout_" + name)], w("exerun_%s.log" % name))
        got_exe = np.load(w("exeout_%s/out.npy" % name))
        d, d_exe = float(np.abs(got - want).max()), float(np.abs(got_exe - want).max())
        moved = float(np.abs(want - before).max())
        ok = d <= a.tol and d_exe <= a.tol_exe
        bad |= not ok
        print("%-13s steps by trips 1..4: %s (then/else trips %d/%d); training moved the logits by %.3g; max |logits - "
              "PyTorch's|: dy2stc train %.3g (tol %g), compiled trainer %.3g (tol %g): %s"
              % (name, " ".join(map(str, hist)), BRANCHES[0], BRANCHES[1], moved, d, a.tol, d_exe, a.tol_exe,
                 "ok" if ok else "MISMATCH"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
