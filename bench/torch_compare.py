#!/usr/bin/python3
"""torch_compare.py - dy2stc against PyTorch on the same models (issue 17).

Builds six models in PyTorch (random initialisation, eval mode):

  resnet18       torchvision, 1x3x224x224
  mobilenet_v2   torchvision, 1x3x224x224
  transformer    2-layer nn.TransformerEncoder, d=128, 4 heads, feed-forward
                 512, sequence 64 (static shapes), 1x64x128
  mlp            784-512-256-10 with ReLU (samples/mlp.c), 1x784
  lenet5         samples/lenet5.c, 1x1x28x28
  cnn            3 x [conv 3x3, batch norm, ReLU, max pool 2] 32/64/128,
                 global average pool, linear 128->10 (samples/cnn.c), 1x3x32x32

exports each to ONNX, compiles it with `dy2stc compile` (-O3 -march=native,
what `dy2stc bench` builds) and then, in ROUNDS rounds, times each model
with PyTorch and with the compiled executable alternately:

  PyTorch   one thread (torch.set_num_threads(1)), inference mode; the best
            of three ways of running it: eager, torch.jit.trace, and
            torch.jit.optimize_for_inference(torch.jit.freeze(trace)). Each
            is the median of RUNS calls after a warm-up.
  dy2stc    the executable's own `--bench RUNS` (median of RUNS runs after
            one warm-up, timed inside its process): exactly what
            `dy2stc bench MODEL` runs after compiling.

The ratio of a round is PyTorch's best median / dy2stc's median; the table
shows each model's median ratio over the rounds with its range, and the
max error of the compiled model's output against PyTorch eager's on one
input, relative to the largest magnitude of PyTorch's output. On a shared
machine wall times include other processes' time slices, so the table
also gives CPU time per run (PyTorch: time.process_time over the runs of
its fastest way; dy2stc: the executable's CPU time for `--bench N` less
that for `--bench 1`, over N - 1 runs) and the ratio of those; a model
gets enough runs (at least RUNS) for about 200 ms of dy2stc time.

A benchmark, not a test (not in `make test`). Needs Debian's
python3-torch, python3-torchvision and python3-onnx (scripts/setup.sh,
the optional bench line). Usage:

  /usr/bin/python3 bench/torch_compare.py --dy2stc build/compiler/dy2stc \\
      [--work /tmp/torch_compare] [--rounds 5] [--runs 50] [--only resnet18,mlp]
      [--threads N] [--batch B] [--compile-flags '--disable-pass winograd']
      [--isa avx2]

--threads N compiles with `--threads N` (the PyTorch side keeps one thread
unless --torch-threads says otherwise); --batch B times batch B (models are
exported with a dynamic batch dimension, except the transformer).

--isa avx2 compares both sides capped to AVX2 + FMA on a machine that has
AVX-512 (it is not the same as an AVX2 machine: same caches, clock and
core, fewer vector instructions). dy2stc compiles with `--target
x86-64-v3` (no AVX-512 macros, so the generated code takes its AVX2
paths); PyTorch runs with ATEN_CPU_CAPABILITY=avx2 (ATen's own kernels),
DNNL_MAX_CPU_ISA=AVX2 and ONEDNN_MAX_CPU_ISA=AVX2 (oneDNN: convolutions)
and OPENBLAS_CORETYPE=Haswell (OpenBLAS: Debian's torch does its GEMMs
there), set before torch loads (the script runs itself again with them).
It checks that the caps took effect and prints what it found: ATen's CPU
capability, the ISA oneDNN reports under DNNL_VERBOSE=1 and the kernel of
a test convolution, OpenBLAS's core name, and the number of instructions
on zmm registers in each compiled executable (0 expected).
"""
import argparse
import ctypes
import os
import re
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision


# ---- the models ----------------------------------------------------------

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                 nn.Linear(256, 10))

    def forward(self, x):
        return self.net(x)


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        layers, cin = [], 3
        for cout in (32, 64, 128):
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                       nn.MaxPool2d(2)]
            cin = cout
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512,
                                           dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


def randomise_bn(m, gen):
    """Batch norms with non-trivial statistics, so folding them is tested,
    and no all-zero weight: torchvision zero-initialises ViT's head, whose
    output would then be its bias whatever the network computed."""
    with torch.no_grad():
        for prm in m.parameters():
            if prm.dim() >= 2 and not prm.any():
                prm.normal_(0.0, 0.02, generator=gen)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            with torch.no_grad():
                mod.running_mean.uniform_(-0.2, 0.2, generator=gen)
                mod.running_var.uniform_(0.5, 1.5, generator=gen)
                mod.weight.uniform_(0.5, 1.5, generator=gen)
                mod.bias.uniform_(-0.2, 0.2, generator=gen)


MODELS = {
    # name: (constructor, input shape at batch 1, dynamic batch)
    "resnet18": (lambda: torchvision.models.resnet18(), (1, 3, 224, 224), True),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), (1, 3, 224, 224), True),
    "transformer": (Transformer, (1, 64, 128), False),
    "mlp": (MLP, (1, 784), True),
    "lenet5": (LeNet5, (1, 1, 28, 28), True),
    "cnn": (CNN, (1, 3, 32, 32), True),
}


# ---- instruction-set caps (--isa) ----------------------------------------

# the environment that caps each library PyTorch runs on; read when torch
# (and through it oneDNN and OpenBLAS) loads, so it must be set before that
ISA_ENV = {
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "DNNL_MAX_CPU_ISA": "AVX2",
             "ONEDNN_MAX_CPU_ISA": "AVX2", "OPENBLAS_CORETYPE": "Haswell"},
}
ISA_TARGET = {"avx2": "x86-64-v3"}  # dy2stc --target


def reexec_with_isa_env(isa):
    """Runs this script again with ISA_ENV[isa] set unless it already is."""
    want = ISA_ENV.get(isa, {})
    if all(os.environ.get(k) == v for k, v in want.items()):
        return
    env = dict(os.environ, **want)
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def torch_isa_report():
    """What PyTorch's libraries run on in this process: ATen's capability,
    oneDNN's ISA and the kernel it picks for a small convolution (from
    DNNL_VERBOSE=1 in a child with this environment), OpenBLAS's core."""
    cap = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
    probe = ("import torch\ntorch.set_num_threads(1)\nm = torch.nn.Conv2d(16, 32, 3).eval()\n"
             "x = torch.randn(1, 16, 32, 32)\nwith torch.no_grad():\n"
             "    torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(m, x)))(x)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=dict(os.environ, DNNL_VERBOSE="1", ONEDNN_VERBOSE="1")).stdout
    isa = re.search(r"verbose,info,cpu,isa:(.*)", out)
    conv = re.search(r"verbose,exec,cpu,convolution,([^,]+),", out)
    try:
        ob = ctypes.CDLL("libopenblas.so.0")
        ob.openblas_get_corename.restype = ctypes.c_char_p
        core = ob.openblas_get_corename().decode()
    except (OSError, AttributeError):
        core = "?"
    return (f"ATen {cap.group(1) if cap else '?'}, oneDNN {isa.group(1) if isa else '?'} "
            f"(test conv: {conv.group(1) if conv else '?'}), OpenBLAS {core}")


def zmm_instructions(exe):
    """Instructions on zmm (AVX-512) registers in an executable."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", exe], check=True,
                         capture_output=True, text=True).stdout
    return sum(1 for line in dis.splitlines() if "%zmm" in line)


# ---- timing ----------------------------------------------------------------

def median_ms(fn, x, runs):
    fn(x)
    fn(x)
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(x)
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


def torch_ways(model, x):
    """The three ways of running the model: name -> callable."""
    ways = {"eager": model}
    with torch.inference_mode(False), torch.no_grad():
        traced = torch.jit.trace(model, x)
        ways["jit.trace"] = traced
        try:
            ways["optimize_for_inference"] = torch.jit.optimize_for_inference(
                torch.jit.freeze(torch.jit.trace(model, x).eval()))
        except Exception as e:  # some models do not freeze; say so and go on
            print(f"  (optimize_for_inference failed: {e})", file=sys.stderr)
    return ways


def cpu_ms(fn, x, runs):
    """CPU time per call (this process, all its threads), after a warm-up."""
    fn(x)
    t0 = time.process_time()
    for _ in range(runs):
        fn(x)
    return (time.process_time() - t0) * 1e3 / runs


def torch_best(ways, x, runs):
    """(best way by wall median, its median ms, best CPU ms per call)."""
    best, cpu = None, None
    with torch.no_grad():
        for name, fn in ways.items():
            ms = median_ms(fn, x, runs)
            if best is None or ms < best[1]:
                best = (name, ms)
            c = cpu_ms(fn, x, runs)
            cpu = c if cpu is None else min(cpu, c)
    return best + (cpu,)


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def dy2stc_ms(exe, inp, runs):
    """(the executable's --bench median ms, CPU ms per run): the CPU time of
    `--bench runs` less that of `--bench 1` (start-up, input, warm-up),
    over runs - 1 runs."""
    def run(n):
        c0 = children_cpu_s()
        out = subprocess.run([exe, "--input", "x=" + inp, "--bench", str(n), "--output-dir",
                              os.path.dirname(exe)], check=True, capture_output=True,
                             text=True).stdout
        return out, children_cpu_s() - c0
    out, c_n = run(runs)
    _, c_1 = run(1)
    for line in out.splitlines():
        if line.startswith("median "):
            return float(line.split()[1]), max(c_n - c_1, 0.0) * 1e3 / (runs - 1)
    raise RuntimeError(f"{exe}: no median in {out!r}")


# ---- main ----------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dy2stc", default="build/compiler/dy2stc")
    ap.add_argument("--work", default="/tmp/torch_compare")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--only", default="")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--cflags", default="")
    ap.add_argument("--compile-flags", default="",
                    help="more dy2stc compile flags, e.g. '--disable-pass winograd'")
    ap.add_argument("--isa", choices=["native", "avx2"], default="native",
                    help="avx2: both sides capped to AVX2 + FMA (see the header)")
    a = ap.parse_args()
    reexec_with_isa_env(a.isa)
    isa_line = ""
    if a.isa != "native":
        isa_line = f"capped to {a.isa}: PyTorch on {torch_isa_report()}"
        print(isa_line, file=sys.stderr)
    torch.set_num_threads(a.torch_threads)
    names = [n for n in MODELS if not a.only or n in a.only.split(",")]
    os.makedirs(a.work, exist_ok=True)
    dy = os.path.abspath(a.dy2stc)
    gen = torch.Generator().manual_seed(17)
    torch.manual_seed(17)
    prepared = {}
    for name in names:
        make, shape, dynamic = MODELS[name]
        model = make().eval()
        randomise_bn(model, gen)
        batch = a.batch if dynamic else 1
        x = torch.randn((batch,) + shape[1:], generator=gen)
        d = os.path.join(a.work, name)
        os.makedirs(d, exist_ok=True)
        onnx_path = os.path.join(d, name + ".onnx")
        # with gradients on: nn.TransformerEncoderLayer's inference fast path
        # (one fused aten op, which ONNX cannot express) stays off
        torch.onnx.export(model, x, onnx_path, input_names=["x"], output_names=["y"],
                          opset_version=13,
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}} if dynamic else None)
        inp = os.path.join(d, "x.npy")
        np.save(inp, x.numpy())
        exe = os.path.join(d, name)
        cmd = [dy, "compile", onnx_path, "-o", exe, "--max-batch", str(max(batch, 1))]
        if a.threads > 1:
            cmd += ["--threads", str(a.threads)]
        if a.cflags:
            cmd += ["--cflags", a.cflags]
        if a.isa in ISA_TARGET:
            cmd += ["--target", ISA_TARGET[a.isa]]
        cmd += a.compile_flags.split()
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        compile_s = time.perf_counter() - t0
        subprocess.run([exe, "--input", "x=" + inp, "--output-dir", d], check=True,
                       capture_output=True)
        with torch.no_grad():
            ref = model(x).numpy()
        got = np.load(os.path.join(d, "y.npy"))
        err = float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))
        prepared[name] = (model, x, exe, inp, torch_ways(model, x), err, compile_s)
        print(f"{name}: exported, compiled in {compile_s:.1f} s, max error {err:.2e}",
              file=sys.stderr)
        if a.isa != "native":
            isa_line += f"; {name} executable: {zmm_instructions(exe)} zmm instructions"

    ratios = {n: [] for n in names}
    cpu_ratios = {n: [] for n in names}
    times = {n: [] for n in names}
    runs = {}
    for r in range(a.rounds):
        for name in names:
            model, x, exe, inp, ways, err, _ = prepared[name]
            if name not in runs:  # enough runs for CPU times well above a tick
                d_ms, _ = dy2stc_ms(exe, inp, 3)
                runs[name] = max(a.runs, min(5000, int(200 / max(d_ms, 1e-3))))
            way, t_ms, t_cpu = torch_best(ways, x, runs[name])
            d_ms, d_cpu = dy2stc_ms(exe, inp, runs[name])
            ratios[name].append(t_ms / d_ms)
            cpu_ratios[name].append(t_cpu / d_cpu if d_cpu > 0 else float("nan"))
            times[name].append((way, t_ms, d_ms, t_cpu, d_cpu))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)

    print(f"batch {a.batch}, dy2stc threads {a.threads}, PyTorch threads {a.torch_threads}, "
          f"{a.rounds} rounds, PyTorch {torch.__version__}")
    if isa_line:
        print(isa_line)
    print()
    print("| model | runs | PyTorch ms (best way) | dy2stc ms | PyTorch / dy2stc, wall "
          "(median, range) | PyTorch CPU ms | dy2stc CPU ms | PyTorch / dy2stc, CPU (median, range) "
          "| max error vs PyTorch | compile s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        rs, cs, ts = ratios[name], cpu_ratios[name], times[name]
        med = lambda k: statistics.median(t[k] for t in ts)
        ways = sorted({t[0] for t in ts})
        print(f"| {name} | {runs[name]} | {med(1):.3f} ({', '.join(ways)}) | {med(2):.3f} | "
              f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f}) | {med(3):.3f} | "
              f"{med(4):.3f} | {statistics.median(cs):.2f} ({min(cs):.2f}-{max(cs):.2f}) | "
              f"{prepared[name][5]:.1e} | {prepared[name][6]:.1f} |")


if __name__ == "__main__":
    main()
