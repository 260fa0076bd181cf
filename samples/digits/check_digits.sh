#!/bin/sh
# check_digits.sh DIGITS DY2STC WORKDIR - the digits sample end to end:
#   1. `digits` trains the MLP and the CNN eagerly and through to_static,
#      saves them, and writes NAME_untrained, NAME_static_losses.txt and the
#      run's options: NAME_train_opts.txt (loss, optimizer, lr, schedule,
#      batch) and NAME_run_args.txt (data, epochs, shuffle);
#   2. `dy2stc train` trains NAME_untrained with both;
#   3. `dy2stc compile --train OPTS --report` compiles its training step into
#      trainer_NAME, which runs on RUN_ARGS; `dy2stc params` turns the state
#      it writes into NAME_compiled;
#   4. `dy2stc quantize --per-channel` quantizes NAME_static to int8
#      (NAME_int8), calibrated on the training split; the int8 executable
#      must give the static executor's outputs exactly on the test split
#      (dy2stc check --atol 0 --rtol 0);
#   5. the epoch losses of `dy2stc train` must equal the to_static ones and
#      the compiled trainer's must equal `dy2stc train`'s (within 1e-3 +
#      1e-3 relative: the CLIs print four decimals), and the test accuracy
#      of every path (eager, to_static, the to_static model as saved and
#      reloaded, dy2stc train's model, the compiled trainer's) must reach the
#      bar: MLP 95%, CNN 97%; and the int8 model's test accuracy may be at
#      most 1 point below the float model's (NAME_static; PTQ's drop).
# NAME_cli.log and NAME_compiled.log hold the epoch lines (with times),
# NAME_compile.log the trainer's --report (training arena, state bytes); the
# median epoch time of every path is printed (eager and to_static by digits).
set -eu
DIGITS=$1 DY2STC=$2 W=$3
rm -rf "$W" && mkdir -p "$W"
"$DIGITS" --out "$W" | tee "$W/digits.log"
fail=0
# accuracy LINE_PREFIX BAR: the "... test accuracy P%" line must say P >= BAR
accuracy() {
  p=$(grep -F "$1" "$W/all.log" | sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' | head -n 1)
  if [ -z "$p" ] || ! awk -v p="$p" -v bar="$2" 'BEGIN { exit !(p >= bar) }'; then
    echo "FAIL: $1 test accuracy '${p:-none}' below $2%"
    fail=1
  fi
}
# median_epoch LOG: the median of the "epoch e loss L time T s" lines' T
median_epoch() {
  grep '^epoch ' "$1" | awk '{ print $6 }' | sort -n | awk '{ v[NR] = $1 }
    END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# same_losses WHAT GOT WANT: the two files of epoch losses agree
same_losses() {
  if ! paste "$2" "$3" | awk '
      { n++; d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3 + 1e-3 * $2) bad++ }
      END { exit !(n > 0 && bad == 0) }'; then
    echo "FAIL: $1:"
    paste "$2" "$3"
    fail=1
  fi
}
for m in mlp cnn; do
  opts=$(cat "$W/${m}_train_opts.txt")
  run=$(cat "$W/${m}_run_args.txt")
  # shellcheck disable=SC2086
  "$DY2STC" train "$W/${m}_untrained.dymodel" $run $opts -o "$W/${m}_cli" | tee "$W/${m}_cli.log"
  grep '^epoch ' "$W/${m}_cli.log" | awk '{ print $4 }' > "$W/${m}_cli_losses.txt"
  same_losses "$m: dy2stc train epoch losses differ from to_static's" \
    "$W/${m}_cli_losses.txt" "$W/${m}_static_losses.txt"
  # the compiled training step: the trainer writes its state as
  # DIR/<name>.npy, which dy2stc params turns into the trained model
  # shellcheck disable=SC2086
  "$DY2STC" compile "$W/${m}_untrained.dymodel" --train $opts --report -o "$W/trainer_$m" \
    | tee "$W/${m}_compile.log"
  # shellcheck disable=SC2086
  "$W/trainer_$m" $run -o "$W/${m}_state" | tee "$W/${m}_compiled.log"
  "$DY2STC" params "$W/${m}_untrained.dymodel" --from "$W/${m}_state" -o "$W/${m}_compiled"
  grep '^epoch ' "$W/${m}_compiled.log" | awk '{ print $4 }' > "$W/${m}_compiled_losses.txt"
  same_losses "$m: the compiled trainer's epoch losses differ from dy2stc train's" \
    "$W/${m}_compiled_losses.txt" "$W/${m}_cli_losses.txt"
  # the saved models (dy_jit_save_ex after training, the CLI's, the
  # compiled trainer's) on the static executor
  for k in static cli compiled; do
    "$DIGITS" --eval "$W/${m}_$k" --out "$W" | tee -a "$W/cli_eval.log"
  done
  # post-training int8 quantization, calibrated on the training split
  in=x
  [ $m = cnn ] && in=img
  mkdir -p "$W/${m}_calib"
  cp "$W/train_$in.npy" "$W/${m}_calib/"
  "$DY2STC" quantize "$W/${m}_static.dymodel" --calibrate "$W/${m}_calib" --per-channel \
    -o "$W/${m}_int8" | tee "$W/${m}_quantize.log"
  "$DIGITS" --eval "$W/${m}_int8" --out "$W" | tee -a "$W/cli_eval.log"
  if ! "$DY2STC" check "$W/${m}_int8.dymodel" --input "$in=$W/test_$in.npy" --atol 0 --rtol 0 --max-batch 512 \
      >"$W/${m}_int8_check.log" 2>&1; then
    cat "$W/${m}_int8_check.log"
    echo "FAIL: $m int8: the compiled executable differs from the static executor"
    fail=1
  fi
done
cat "$W/digits.log" "$W/cli_eval.log" > "$W/all.log"
accuracy "mlp eager:" 95
accuracy "mlp to_static:" 95
accuracy "mlp_static:" 95
accuracy "mlp_cli:" 95
accuracy "mlp_compiled:" 95
accuracy "cnn eager:" 97
accuracy "cnn to_static:" 97
accuracy "cnn_static:" 97
accuracy "cnn_cli:" 97
accuracy "cnn_compiled:" 97
# the int8 models: at most 1 point below their float model
for m in mlp cnn; do
  f=$(grep -F "${m}_static:" "$W/all.log" | sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p')
  accuracy "${m}_int8:" "$(awk -v f="${f:-0}" 'BEGIN { print f - 1 }')"
  q=$(grep -F "${m}_int8:" "$W/all.log" | sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p')
  echo "$m post-training int8: test accuracy ${q:-none}% (float ${f:-none}%)"
done
# the epoch times of the two command-line paths (digits.log has eager's
# and to_static's), for the README's table
for m in mlp cnn; do
  echo "$m dy2stc train: median epoch $(median_epoch "$W/${m}_cli.log") s"
  echo "$m compiled trainer: median epoch $(median_epoch "$W/${m}_compiled.log") s"
done
[ $fail = 0 ] && echo "digits: all checks passed"
exit $fail
