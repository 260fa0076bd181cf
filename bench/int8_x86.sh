#!/bin/sh
# int8_x86.sh - int8 against float on x86 (issue 26 item 5): resnet18 and
# mobilenet_v2 from torchvision (random weights, batch norms randomised as
# bench/torch_compare.py does, eval mode) exported to ONNX, quantized with
# `dy2stc quantize --per-channel` on 4 random calibration inputs, compiled
# three ways: float, int8, and int8 without the AVX-512 VNNI forms
# (-DDY_Q_PANEL16=0: the per-pixel dot form before them). Each executable
# is timed as CPU time (perf stat task-clock of --bench 40 minus --bench
# 10, over 30 runs, pinned to one CPU), ROUNDS rounds alternated; the
# int8 outputs of the two int8 builds are compared byte for byte.
# A benchmark, not a test (needs python3-torch, torchvision, perf).
#   sh bench/int8_x86.sh [DY2STC] [WORK] [ROUNDS] [CPU]
set -e
D=$(realpath "${1:-build/compiler/dy2stc}")
W=${2:-/tmp/int8_x86}
ROUNDS=${3:-3}
CPU=${4:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$W/cal" && cd "$W"
/usr/bin/python3 - "$HERE" <<'PY'
import sys, numpy as np, torch, torchvision
sys.path.insert(0, sys.argv[1])
from torch_compare import randomise_bn
for name in ["resnet18", "mobilenet_v2"]:
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)()
    randomise_bn(m, torch.Generator().manual_seed(1))
    m.eval()
    torch.onnx.export(m, torch.randn(1, 3, 224, 224), f"{name}.onnx", input_names=["x"],
                      output_names=["y"], opset_version=13)
rng = np.random.default_rng(0)
for i in range(4):
    np.save(f"cal/{i}.npy", rng.standard_normal((1, 3, 224, 224)).astype(np.float32))
np.save("x.npy", rng.standard_normal((1, 3, 224, 224)).astype(np.float32))
PY
for n in resnet18 mobilenet_v2; do
  "$D" quantize $n.onnx --calibrate cal -o ${n}_q --per-channel -q | tail -1
  "$D" compile $n.onnx -o ${n}_f32 --cflags "-O3 -march=native" >/dev/null
  "$D" compile ${n}_q.dymodel -o ${n}_int8 --cflags "-O3 -march=native" >/dev/null
  "$D" compile ${n}_q.dymodel -o ${n}_int8_before --cflags "-O3 -march=native -DDY_Q_PANEL16=0" >/dev/null
  ./${n}_int8 --input x=x.npy --output-dir o1 >/dev/null
  ./${n}_int8_before --input x=x.npy --output-dir o2 >/dev/null
  cmp o1/y.npy o2/y.npy && echo "$n: the two int8 builds' outputs are identical"
done
ms() { # CPU ms per run of executable $1
  a=$(perf stat -x, -e task-clock taskset -c $CPU ./$1 --input x=x.npy --bench 10 --output-dir o 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
  b=$(perf stat -x, -e task-clock taskset -c $CPU ./$1 --input x=x.npy --bench 40 --output-dir o 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
  echo "($b - $a) / 30" | bc -l
}
echo "load before: $(cat /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for n in resnet18 mobilenet_v2; do
    for v in f32 int8 int8_before; do
      printf "round %s %s %s %.2f ms\n" "$r" "$n" "$v" "$(ms ${n}_$v)"
    done
  done
done
echo "load after: $(cat /proc/loadavg)"
