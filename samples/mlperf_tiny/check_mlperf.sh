#!/bin/sh
# check_mlperf.sh SAMPLE DY2STC WORKDIR - ctest mlperf_tiny: the int8 path
# of the MLPerf Tiny models is correct (bench/mlperf_tiny.sh measures it).
# For the DS-CNN, ResNet-8 (residual adds) and the FC autoencoder:
#   1. samples/mlperf_tiny saves the float model, an input and a
#      calibration set, and (--quantize) quantizes it itself through the
#      library call dy_quantize_program; `dy2stc quantize --per-channel`
#      on the saved files must write the same NAME_int8 byte for byte;
#   2. the int8 model must stay within a stated error of the float model on
#      the calibration set (the report's outputs line): cosine similarity
#      >= 0.99, and max |error| <= 0.05 for the softmax classifiers
#      (probabilities in [0, 1]) and <= 0.15 x the largest |output| for
#      the autoencoder (a regression of N(0,1)-scale features);
#   3. the int8 executable compiled for this host (dy2stc compile) must give
#      the static executor's outputs exactly (dy2stc check --atol 0 --rtol 0);
#   4. when arm-none-eabi-gcc and qemu-system-arm are installed, the same
#      model built for the Cortex-M4F (build.sh) and run under
#      qemu-system-arm -M mps2-an386 must print the host executable's
#      outputs bit for bit, and the stack bound dy2stc states in its header
#      (NAME_STACK_BYTES, measured with arm-none-eabi-gcc) must hold the
#      stack the run used (painted by bench_app.c) and be within 1.25x of it.
set -eu
SAMPLE=$1 DY2STC=$2 W=$3
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W" && mkdir -p "$W"
fail=0
have_arm=1
command -v arm-none-eabi-gcc >/dev/null && command -v qemu-system-arm >/dev/null || {
  have_arm=0
  echo "check_mlperf: no arm-none-eabi-gcc or qemu-system-arm: the Cortex-M4 step is skipped" \
       "(scripts/setup.sh installs them)"
}
for m in dscnn resnet8 autoenc; do
  "$SAMPLE" --only $m --out "$W" --quantize >/dev/null
  mv "$W/${m}_int8.dymodel" "$W/${m}_lib.dymodel"
  mv "$W/${m}_int8.dyparams" "$W/${m}_lib.dyparams"
  "$DY2STC" quantize "$W/$m.dymodel" --calibrate "$W/${m}_calib" --per-channel \
    -o "$W/${m}_int8" | tee "$W/${m}_quantize.log"
  for e in dymodel dyparams; do
    cmp "$W/${m}_lib.$e" "$W/${m}_int8.$e" || {
      echo "FAIL: $m: dy_quantize_program and dy2stc quantize wrote different .$e files"
      fail=1
    }
  done
  line=$(grep '^outputs:' "$W/${m}_quantize.log")
  err=$(echo "$line" | sed -n 's/.*max |err| \([^ ]*\) (largest |output| \([^)]*\)), cosine \([^;]*\);.*/\1 \2 \3/p')
  case $m in autoenc) rel=1 bound=0.15 ;; *) rel=0 bound=0.05 ;; esac
  if ! echo "$err" | awk -v rel=$rel -v bound=$bound '
      { lim = rel ? bound * $2 : bound; exit !(NF == 3 && $1 <= lim && $3 >= 0.99) }'; then
    echo "FAIL: $m int8 vs float: '$line' (bound: cosine >= 0.99, max |err| <= $bound$([ $rel = 1 ] && echo ' x the largest |output|'))"
    fail=1
  fi
  # the host executable against the static executor, exactly
  if ! "$DY2STC" check "$W/${m}_int8.dymodel" --input "x=$W/${m}_x.npy" --atol 0 --rtol 0 \
      >"$W/${m}_check.log" 2>&1; then
    cat "$W/${m}_check.log"
    echo "FAIL: $m int8: the compiled executable differs from the static executor"
    fail=1
  fi
  [ $have_arm = 1 ] || continue
  "$DY2STC" compile "$W/${m}_int8.dymodel" -o "$W/${m}_host" --max-batch 1
  "$W/${m}_host" --input "x=$W/${m}_x.npy" --output-dir "$W/${m}_host_out" >/dev/null
  sh "$HERE/build.sh" "$DY2STC" "$W/${m}_int8.dymodel" "$W/${m}_x.npy" "$W/fw" "${m}_int8" \
    >"$W/${m}_build.log"
  timeout 600 qemu-system-arm -M mps2-an386 -nographic -icount shift=0 \
    -semihosting-config enable=on,target=native -kernel "$W/fw/${m}_int8-m4.elf" \
    >"$W/${m}_board.log" || { cat "$W/${m}_board.log"; echo "FAIL: $m int8 under qemu"; fail=1; }
  npy=$(ls "$W/${m}_host_out"/*.npy)
  hlen=$(od -An -tu2 -j8 -N2 "$npy" | tr -d ' ')
  od -An -v -tx4 -j $((10 + hlen)) "$npy" | tr -s ' ' '\n' | grep -v '^$' >"$W/${m}_host.txt"
  sed -n 's/^out\[[0-9]*\] = .* 0x\([0-9a-f]*\)$/\1/p' "$W/${m}_board.log" >"$W/${m}_board.txt"
  if [ -s "$W/${m}_host.txt" ] && cmp -s "$W/${m}_host.txt" "$W/${m}_board.txt"; then
    echo "$m int8: Cortex-M4 (qemu) outputs = host outputs, bit for bit ($(wc -l <"$W/${m}_host.txt") values;" \
         "$(grep '^instructions' "$W/${m}_board.log"))"
  else
    paste "$W/${m}_host.txt" "$W/${m}_board.txt"
    echo "FAIL: $m int8: the Cortex-M4 outputs differ from the host's"
    fail=1
  fi
  painted=$(sed -n 's/.*stack \([0-9]*\) bytes.*/\1/p' "$W/${m}_board.log")
  bound=$(sed -n 's/^#define [A-Z0-9_]*_STACK_BYTES \([0-9]*\).*/\1/p' "$W/fw/${m}_int8.h")
  if [ -n "$bound" ] && [ -n "$painted" ] && [ "$bound" -ge "$painted" ] &&
     [ $((bound * 4)) -le $((painted * 5)) ]; then
    echo "$m int8: stack bound $bound bytes >= painted $painted, within 1.25x"
  else
    echo "FAIL: $m int8: stack bound '${bound}' against the painted '${painted}' bytes" \
         "(want bound >= painted, bound <= 1.25 x painted)"
    fail=1
  fi
done
[ $fail = 0 ] && echo "check_mlperf: all checks passed"
exit $fail
