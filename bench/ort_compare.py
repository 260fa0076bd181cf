#!/usr/bin/python3
"""ort_compare.py - dy2stc against ONNX Runtime (and PyTorch) on torchvision models.

The models (random weights, batch norms with non-trivial statistics, eval
mode) are exported by PyTorch to ONNX (opset 13, dynamic batch) once, then
each is run three ways on the same input:

  ONNX Runtime  onnxruntime-node (bench/ort/, CPU execution provider) run by
                node: intraOpNumThreads THREADS, interOpNumThreads 1,
                sequential, graph optimisation "all"; timed inside its
                process (bench/ort/ort_run.js: median of RUNS runs after two
                warm-ups)
  dy2stc        `dy2stc compile MODEL.onnx` (what `dy2stc bench` builds:
                -O3 -march=native), `--threads THREADS`; the executable's own
                `--bench RUNS` (median of RUNS runs after a warm-up, in its
                process)
  PyTorch       torch.set_num_threads(THREADS), the best of eager, jit.trace
                and optimize_for_inference (bench/torch_compare.py's
                torch_best), median of RUNS calls

in ROUNDS rounds, the three alternated inside each round (the order turns
every round). The process and its children are pinned: one thread to CPU
--cpu (default the last one), THREADS > 1 to CPUs 0..THREADS-1. Each
ratio is the other engine's median / dy2stc's median (> 1: dy2stc faster),
per round; the table gives the median over the rounds and the range, with
each engine's max error against PyTorch eager on the same input (scaled by
the largest magnitude of PyTorch's output). /proc/loadavg is printed
before and after.

A benchmark, not a test. Needs Debian's python3-torch, python3-torchvision,
python3-onnx and node with bench/ort/node_modules (all from
`sh scripts/setup.sh --bench`). Usage:

  /usr/bin/python3 bench/ort_compare.py --dy2stc build/compiler/dy2stc \\
      [--work /tmp/ort_compare] [--rounds 3] [--runs 30] [--only a,b]
      [--threads 1] [--batch 1] [--no-torch] [--compile-flags '...']
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_compare import randomise_bn, torch_ways, torch_best, dy2stc_ms  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_DIR = os.path.join(HERE, "ort")

MODELS = {
    # name: torchvision constructor; every one takes 1x3x224x224
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "vit_b_16": torchvision.models.vit_b_16,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "squeezenet1_1": torchvision.models.squeezenet1_1,
    "mobilenet_v3_large": torchvision.models.mobilenet_v3_large,
    "efficientnet_b0": torchvision.models.efficientnet_b0,
    # beyond the table (--only to run them)
    "shufflenet_v2_x1_0": torchvision.models.shufflenet_v2_x1_0,
    "convnext_tiny": torchvision.models.convnext_tiny,
    "regnet_y_400mf": torchvision.models.regnet_y_400mf,
    "resnext50_32x4d": torchvision.models.resnext50_32x4d,
}
DEFAULT = ["resnet18", "resnet50", "vit_b_16", "mobilenet_v2", "squeezenet1_1",
           "mobilenet_v3_large", "efficientnet_b0"]


def ort_ms(model, inp_bin, shape, threads, runs, out_bin):
    """ONNX Runtime's median ms over runs, in node (bench/ort/ort_run.js)."""
    r = subprocess.run(["node", os.path.join(ORT_DIR, "ort_run.js"), model, inp_bin,
                        ",".join(map(str, shape)), str(threads), str(runs), out_bin],
                       capture_output=True, text=True, cwd=ORT_DIR)
    if r.returncode != 0:
        raise RuntimeError(f"ort_run.js {model}: {r.stderr.strip()}")
    for line in r.stdout.splitlines():
        if line.startswith("median "):
            return float(line.split()[1])
    raise RuntimeError(f"ort_run.js {model}: no median in {r.stdout!r}")


def rel_err(got, ref):
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def prepare(name, a, dy, gen):
    model = MODELS[name]().eval()
    randomise_bn(model, gen)
    x = torch.randn((a.batch, 3, 224, 224), generator=gen)
    d = os.path.join(a.work, name)
    os.makedirs(d, exist_ok=True)
    onnx_path = os.path.join(d, name + ".onnx")
    if not os.path.exists(onnx_path):
        torch.onnx.export(model, x, onnx_path, input_names=["x"], output_names=["y"],
                          opset_version=13, dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    inp = os.path.join(d, f"x_b{a.batch}.npy")
    np.save(inp, x.numpy())
    inp_bin = os.path.join(d, f"x_b{a.batch}.bin")
    x.numpy().astype(np.float32).tofile(inp_bin)
    exe = os.path.join(d, f"{name}_t{a.threads}_b{a.batch}")
    cmd = [dy, "compile", onnx_path, "-o", exe, "--max-batch", str(a.batch)]
    if a.threads > 1:
        cmd += ["--threads", str(a.threads)]
    cmd += a.compile_flags.split()
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    compile_s = time.perf_counter() - t0
    outd = os.path.join(d, "out")
    os.makedirs(outd, exist_ok=True)
    subprocess.run([exe, "--input", "x=" + inp, "--output-dir", outd], check=True,
                   capture_output=True)
    with torch.no_grad():
        ref = model(x).numpy()
    err_dy = rel_err(np.load(os.path.join(outd, "y.npy")), ref)
    ort_out = os.path.join(d, "ort_y.bin")
    ort_ms(onnx_path, inp_bin, list(x.shape), a.threads, 1, ort_out)
    err_ort = rel_err(np.fromfile(ort_out, dtype=np.float32).reshape(ref.shape), ref)
    ways = None if a.no_torch else torch_ways(model, x)
    print(f"{name}: compiled in {compile_s:.1f} s; max error vs PyTorch: dy2stc {err_dy:.1e}, "
          f"ORT {err_ort:.1e}", file=sys.stderr)
    return dict(model=model, x=x, onnx=onnx_path, inp=inp, inp_bin=inp_bin, exe=exe,
                ways=ways, err_dy=err_dy, err_ort=err_ort, ort_out=ort_out, compile_s=compile_s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dy2stc", default="build/compiler/dy2stc")
    ap.add_argument("--work", default="/tmp/ort_compare")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--only", default="")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1,
                    help="the CPU one thread is pinned to")
    ap.add_argument("--no-torch", action="store_true", help="ORT and dy2stc only")
    ap.add_argument("--compile-flags", default="", help="more dy2stc compile flags")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        sys.exit("ort_compare: bench/ort/node_modules/onnxruntime-node is missing: "
                 "sh scripts/setup.sh --bench (npm install --ignore-scripts in bench/ort)")
    cpus = {a.cpu} if a.threads == 1 else set(range(a.threads))
    os.sched_setaffinity(0, cpus)
    torch.set_num_threads(a.threads)
    names = a.only.split(",") if a.only else DEFAULT
    for n in names:
        if n not in MODELS:
            sys.exit(f"ort_compare: unknown model {n!r} (known: {', '.join(MODELS)})")
    os.makedirs(a.work, exist_ok=True)
    dy = os.path.abspath(a.dy2stc)
    gen = torch.Generator().manual_seed(17)
    torch.manual_seed(17)
    load0 = loadavg()
    prep = {n: prepare(n, a, dy, gen) for n in names}

    res = {n: {"ort": [], "dy": [], "pt": []} for n in names}
    for r in range(a.rounds):
        for n in names:
            p = prep[n]
            engines = ["ort", "dy", "pt"] if not a.no_torch else ["ort", "dy"]
            k = r % len(engines)
            for e in engines[k:] + engines[:k]:
                if e == "ort":
                    ms = ort_ms(p["onnx"], p["inp_bin"], list(p["x"].shape), a.threads, a.runs,
                                p["ort_out"])
                elif e == "dy":
                    ms, _ = dy2stc_ms(p["exe"], p["inp"], a.runs)
                else:
                    _, ms, _ = torch_best(p["ways"], p["x"], a.runs)
                res[n][e].append(ms)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    load1 = loadavg()

    print(f"batch {a.batch}, {a.threads} thread(s) on CPU(s) {sorted(cpus)}, {a.rounds} rounds of "
          f"{a.runs} runs; PyTorch {torch.__version__}; load average before {load0}, after {load1}")
    print()
    print("| model | ORT ms | dy2stc ms | ORT / dy2stc (median, range) | PyTorch ms | "
          "PyTorch / dy2stc (median, range) | error dy2stc | error ORT |")
    print("|---|---|---|---|---|---|---|---|")
    for n in names:
        o, d, t = res[n]["ort"], res[n]["dy"], res[n]["pt"]
        ro = [x / y for x, y in zip(o, d)]
        line = (f"| {n} | {statistics.median(o):.2f} ({min(o):.2f}-{max(o):.2f}) | "
                f"{statistics.median(d):.2f} ({min(d):.2f}-{max(d):.2f}) | "
                f"**{statistics.median(ro):.2f}** ({min(ro):.2f}-{max(ro):.2f}) | ")
        if t:
            rt = [x / y for x, y in zip(t, d)]
            line += (f"{statistics.median(t):.2f} | {statistics.median(rt):.2f} "
                     f"({min(rt):.2f}-{max(rt):.2f}) | ")
        else:
            line += "- | - | "
        line += f"{prep[n]['err_dy']:.1e} | {prep[n]['err_ort']:.1e} |"
        print(line)


if __name__ == "__main__":
    main()
