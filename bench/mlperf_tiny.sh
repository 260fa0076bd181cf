#!/bin/sh
# bench/mlperf_tiny.sh - the four MLPerf Tiny reference models on a
# simulated Cortex-M4F, float and int8: flash, RAM and instructions per
# inference (the MLPerf section of bench/RESULTS.md).
#
#   sh bench/mlperf_tiny.sh [BUILD_DIR] [WORK_DIR] > mlperf.txt
#
# BUILD_DIR is a CMake build of dy2stc with its samples (default: build);
# WORK_DIR where the models, generated C and firmware go (default:
# BUILD_DIR/mlperf). Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi and
# qemu-system-arm (scripts/setup.sh). A measurement, not a test: nothing
# here fails on a number (ctest mlperf_tiny checks correctness).
#
#   1. samples/mlperf_tiny saves resnet8, dscnn, mobilenet and autoenc
#      (seeded weights) with an input and a calibration set each;
#   2. `dy2stc quantize --per-channel` makes NAME_int8 from the
#      calibration set (int8 weights and activations, f32 in and out);
#   3. samples/mlperf_tiny/build.sh compiles each variant to NAME.c and
#      links the Cortex-M4F program (arm-none-eabi-gcc -O2);
#   4. qemu-system-arm -M mps2-an386 -icount shift=0 runs it once: the
#      program reads the FPGA counter around NAME_run, which under
#      -icount shift=0 counts executed instructions / 40, and measures its
#      stack by painting it.
#
# Columns: flash = text + data of the model's object files (kernels, weights
# in NAME.c or NAME_weights.c,
# and tables; .rodata counts as text); code = the text of NAME.o alone
# (kernels and tables, no weights); arena = NAME_ARENA_BYTES; stack =
# the deepest stack NAME_run reached (painted, from the stack pointer at
# its call); stack bound = NAME_STACK_BYTES, dy2stc's compile-time bound
# (arm-none-eabi-gcc's frames on the deepest call path); RAM = arena +
# stack; instructions =
# per inference, batch 1 (instructions, not cycles: QEMU models no
# pipeline or memory timing). MLPerf Tiny v1.x closed-division figures
# (NUCLEO-L4R5ZI, Cortex-M4F at 120 MHz, int8) as cycles = ms x 120e3.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
WORK=${2:-$BUILD/mlperf}
DY2STC=$BUILD/compiler/dy2stc
SAMPLE=$BUILD/samples/mlperf_tiny
QEMU="timeout 1200 qemu-system-arm -M mps2-an386 -nographic -icount shift=0 -semihosting-config enable=on,target=native"
[ -x "$DY2STC" ] && [ -x "$SAMPLE" ] || { echo "mlperf_tiny.sh: build dy2stc and its samples first" >&2; exit 1; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

echo "# MLPerf Tiny on qemu-system-arm -M mps2-an386 (Cortex-M4F), $(date -u +%Y-%m-%d)"
echo "# $(arm-none-eabi-gcc --version | head -1) -O2; $(qemu-system-arm --version | head -1)"
"$SAMPLE" --out "$WORK"
have_quantize=0
"$DY2STC" quantize --help >/dev/null 2>&1 && have_quantize=1

# measure NAME VARIANT MODEL: build and run one model, append a row to rows.txt
measure() {
  name=$1 variant=$2 model=$3
  sh "$ROOT/samples/mlperf_tiny/build.sh" "$DY2STC" "$model" "$WORK/${name}_x.npy" \
    "$WORK/fw" "${name}_$variant" >"$WORK/${name}_$variant.build.log"
  $QEMU -kernel "$WORK/fw/${name}_$variant-m4.elf" >"$WORK/${name}_$variant.run.log"
  objs="$WORK/fw/${name}_$variant-m4.o"
  [ -f "$WORK/fw/${name}_${variant}_weights-m4.o" ] && objs="$objs $WORK/fw/${name}_${variant}_weights-m4.o"
  flash=$(arm-none-eabi-size $objs | awk 'NR >= 2 { s += $1 + $2 } END { print s }')
  arena=$(sed -n 's/.*arena \([0-9]*\) bytes.*/\1/p' "$WORK/${name}_$variant.run.log")
  stack=$(sed -n 's/.*stack \([0-9]*\) bytes.*/\1/p' "$WORK/${name}_$variant.run.log")
  insns=$(sed -n 's/^instructions: \([0-9]*\).*/\1/p' "$WORK/${name}_$variant.run.log")
  code=$(arm-none-eabi-size "$WORK/fw/${name}_$variant-m4.o" | awk 'NR == 2 { print $1 }')
  bound=$(sed -n 's/^#define [A-Z0-9_]*_STACK_BYTES \([0-9]*\).*/\1/p' "$WORK/fw/${name}_$variant.h")
  echo "$name $variant $flash $arena $stack $insns $code ${bound:-0}" | tee -a "$WORK/rows.txt"
}

: >"$WORK/rows.txt"
for m in resnet8 dscnn mobilenet autoenc; do
  measure $m float "$WORK/$m.dymodel"
  if [ $have_quantize = 1 ]; then
    "$DY2STC" quantize "$WORK/$m.dymodel" --calibrate "$WORK/${m}_calib" --per-channel \
      -o "$WORK/${m}_int8" | tee "$WORK/${m}_quantize.log"
    measure $m int8 "$WORK/${m}_int8.dymodel"
  fi
done

echo
echo "| model | variant | flash (bytes) | code | arena | stack | stack bound | RAM (bytes) | instructions | MLPerf Tiny int8, Cortex-M4F 120 MHz |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
awk '
  BEGIN {
    ref["resnet8"] = "165 ms = 19.8 M cycles (X-CUBE-AI); TFLM 704 ms = 84.5 M"
    ref["dscnn"] = "43.2 ms = 5.2 M cycles (X-CUBE-AI); TFLM 182 ms = 21.8 M"
    ref["mobilenet"] = "88.9 ms = 10.7 M cycles (X-CUBE-AI); TFLM 601 ms = 72.1 M"
    ref["autoenc"] = "4.05 ms = 0.49 M cycles (X-CUBE-AI); TFLM 10.1 ms = 1.21 M"
  }
  { printf "| %s | %s | %d | %d | %d | %d | %d | %d | %.2f M | %s |\n", $1, $2, $3, $7, $4, $5,
           $8, $4 + $5, $6 / 1e6, $2 == "float" ? ref[$1] : "" }' "$WORK/rows.txt"
