#!/bin/sh
# check_digits.sh DIGITS DY2STC WORKDIR - the digits sample end to end:
#   1. `digits` trains the MLP and the CNN eagerly and through to_static,
#      saves them, and writes NAME_untrained, NAME_train_args.txt (the
#      `dy2stc train` options of the same run) and NAME_static_losses.txt;
#   2. `dy2stc train` trains NAME_untrained with those options;
#   3. its epoch losses must equal the to_static ones (within 1e-3 + 1e-3
#      relative: the CLI prints four decimals), and the test accuracy of
#      every path (eager, to_static, the to_static model as saved and
#      reloaded, dy2stc train's model) must reach the bar: MLP 95%, CNN 97%.
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
for m in mlp cnn; do
  args=$(cat "$W/${m}_train_args.txt")
  # shellcheck disable=SC2086
  "$DY2STC" train "$W/${m}_untrained.dymodel" $args -o "$W/${m}_cli" | tee "$W/${m}_cli.log"
  grep '^epoch ' "$W/${m}_cli.log" | awk '{ print $4 }' > "$W/${m}_cli_losses.txt"
  if ! paste "$W/${m}_cli_losses.txt" "$W/${m}_static_losses.txt" | awk '
      { n++; d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3 + 1e-3 * $2) bad++ }
      END { exit !(n > 0 && bad == 0) }'; then
    echo "FAIL: $m: dy2stc train epoch losses differ from to_static's:"
    paste "$W/${m}_cli_losses.txt" "$W/${m}_static_losses.txt"
    fail=1
  fi
  # the saved models (dy_jit_save_ex after training, and the CLI's) on
  # the static executor
  for k in static cli; do
    "$DIGITS" --eval "$W/${m}_$k" --out "$W" | tee -a "$W/cli_eval.log"
  done
done
cat "$W/digits.log" "$W/cli_eval.log" > "$W/all.log"
accuracy "mlp eager:" 95
accuracy "mlp to_static:" 95
accuracy "mlp_static:" 95
accuracy "mlp_cli:" 95
accuracy "cnn eager:" 97
accuracy "cnn to_static:" 97
accuracy "cnn_static:" 97
accuracy "cnn_cli:" 97
[ $fail = 0 ] && echo "digits: all checks passed"
exit $fail
