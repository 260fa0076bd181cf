#!/bin/sh
# bench/run.sh - every benchmark of bench/, single-threaded, in one run.
#
#   sh bench/run.sh [BUILD_DIR] [WORK_DIR] > results.txt
#
# BUILD_DIR is a CMake build of dy2stc (default: build); WORK_DIR where the
# models, generated C and programs go (default: BUILD_DIR/bench). Needs
# OpenBLAS (libopenblas-dev) and a C compiler ($CC, default cc). Prints
# each measurement as it is made, then a summary in Markdown (the tables of
# bench/RESULTS.md). Benchmarks, not tests: nothing here fails on a number.
#
#   1. the fp32 FMA peak (bench/peak.c)
#   2. emitted GEMM vs cblas_sgemm, side by side in one process, twice:
#      OpenBLAS as the environment sets it, and with OPENBLAS_CORETYPE and
#      OPENBLAS_L2_SIZE both unset; the summary compares with the faster
#   3. every sample: the eager runtime (bench/eager.c) and the compiled
#      code (dy2stc bench), batch 1, and GFLOP/s against the peak; the
#      ONNX sample (samples/onnx/cnn.onnx) compiled only
#   4. the CNN's convolutions alone (dy2stc bench --per-op)
#   5. the MLP at batch 64 vs a chain of OpenBLAS sgemm (bench/mlp_blas.c)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
WORK=${2:-$BUILD/bench}
CC=${CC:-cc}
DY2STC=$BUILD/compiler/dy2stc
RUNS=${RUNS:-200}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
cd "$WORK"
[ -x "$DY2STC" ] || { echo "bench: no $DY2STC (build dy2stc first)" >&2; exit 1; }
LIBS_IR="$BUILD/ir/libdy_ir.a -lprotobuf-c -lm"
LIBS_RT="$BUILD/runtime/libdy_runtime.a $BUILD/ir/libdy_ir.a -lopenblas -lprotobuf-c -lm"
INC="-I$ROOT/ir -I$ROOT/runtime -I$ROOT/bench"

echo "# dy2stc benchmarks, $(date -u +%Y-%m-%d) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# $($CC --version | head -1); OpenBLAS single-threaded"

# ---- 1. peak ----
$CC -O2 "$ROOT/bench/peak.c" -o peak
./peak | tee peak.txt
PEAK=$(awk '/AVX-512 \(16/{p=$(NF-1)} /AVX2 \(8/{if (!p) q=$(NF-1)} END{print p ? p : q}' peak.txt)

# ---- 2. GEMM ----
$CC -O2 $INC "$ROOT/bench/make_gemm.c" $LIBS_IR -o make_gemm
./make_gemm .
for m in gemm_*.dymodel; do
  b=${m%.dymodel}
  "$DY2STC" compile "$m" --emit c -o "$b" --name "$b" > /dev/null
done
$CC -O2 -march=native -std=c11 -I. $INC "$ROOT/bench/gemm.c" gemm_*.c -lopenblas -lm -o gemm
echo "## GEMM, OpenBLAS as the environment sets it"
./gemm | tee gemm_as_set.txt
echo "## GEMM, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ./gemm | tee gemm_unset.txt

# ---- 3. samples: eager vs compiled ----
$CC -O2 $INC "$ROOT/bench/eager.c" $LIBS_RT -o eager
: > samples.txt
for s in simple_net mlp lenet5 cnn transformer; do
  mkdir -p "$s"
  "$BUILD/samples/$s" --batch 1 --out "$s" > /dev/null
  e=$(./eager "$s/$s.dymodel" 1 "$RUNS" | awk '/^median/{print $2}')
  "$DY2STC" bench "$s/$s.dymodel" --batch 1 --runs "$RUNS" > "$s/bench.txt"
  c=$(awk '/^median/{print $2}' "$s/bench.txt")
  g=$(awk '/^GFLOP/{print $2}' "$s/bench.txt")
  echo "$s eager_ms $e compiled_ms $c gflops $g" | tee -a samples.txt
done

# the ONNX sample (it has no eager source): the compiled code alone
"$DY2STC" bench "$ROOT/samples/onnx/cnn.onnx" --batch 1 --runs "$RUNS" > onnx_cnn.txt
echo "onnx_cnn compiled_ms $(awk '/^median/{print $2}' onnx_cnn.txt) gflops $(awk '/^GFLOP/{print $2}' onnx_cnn.txt)" | tee onnx.txt

# ---- 4. the CNN's convolutions alone ----
"$DY2STC" bench cnn/cnn.dymodel --batch 1 --runs "$RUNS" --per-op | tee cnn_per_op.txt

# ---- 5. MLP at batch 64 vs a chain of OpenBLAS sgemm ----
"$DY2STC" compile mlp/mlp.dymodel --emit c -o mlp --name mlp --max-batch 64 > /dev/null
$CC -O2 -march=native -std=c11 -I. $INC "$ROOT/bench/mlp_blas.c" mlp.c $LIBS_IR -lopenblas -o mlp_blas
./mlp_blas mlp/mlp.dymodel 64 "$RUNS" | tee mlp_blas.txt

# the peak again: the larger of the two measurements counts
./peak | tee -a peak.txt
PEAK=$(awk '/AVX-512 \(16/{if ($(NF-1) > p) p=$(NF-1)} /AVX2 \(8/{if ($(NF-1) > q) q=$(NF-1)} END{print p ? p : q}' peak.txt)

# ---- summary ----
echo
echo "## Summary (medians; peak $PEAK GFLOP/s)"
echo
echo "| GEMM | M | N | K | dy2stc ms | dy2stc GFLOP/s | faster OpenBLAS ms | ratio (OpenBLAS / dy2stc) |"
echo "|---|---|---|---|---|---|---|---|"
cat gemm_as_set.txt gemm_unset.txt | awk '
  /^gemm / { n = $2; d = $7; b = $12;
    if (!(n in best) || b < best[n]) { best[n] = b; dd[n] = d; gf[n] = $9;
      m[n] = substr($3, 3); nn[n] = substr($4, 3); k[n] = substr($5, 3) }
    if (!(n in order)) { order[n] = ++cnt; names[cnt] = n } }
  END { for (i = 1; i <= cnt; i++) { n = names[i];
    printf "| %s | %s | %s | %s | %.4f | %.1f | %.4f | %.2f |\n", n, m[n], nn[n], k[n], dd[n], gf[n], best[n], best[n] / dd[n] } }'
echo
echo "| sample (batch 1) | eager ms | compiled ms | speed-up | compiled GFLOP/s | % of peak |"
echo "|---|---|---|---|---|---|"
awk -v peak="$PEAK" '{ printf "| %s | %.4g | %.4g | %.1fx | %.1f | %.0f%% |\n", $1, $3, $5, $3 / $5, $7, 100 * $7 / peak }' samples.txt
awk -v peak="$PEAK" '{ printf "| %s (.onnx) | - | %.4g | - | %.1f | %.0f%% |\n", $1, $3, $5, 100 * $5 / peak }' onnx.txt
echo
awk -v peak="$PEAK" '/^  fused_conv2d|^  conv2d/ { printf "CNN convolutions alone (batch 1): %s ms, %s GFLOP/s = %.0f%% of peak\n", $3, $5, 100 * $5 / peak }' cnn_per_op.txt
awk '{ printf "MLP batch 64: dy2stc %s ms, OpenBLAS sgemm chain %s ms, ratio %s\n", $5, $11, $16 }' mlp_blas.txt
