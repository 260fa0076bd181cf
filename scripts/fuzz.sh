#!/bin/sh
# The long fuzz run: every libFuzzer target of tests/fuzz for SECONDS each
# (default 300), one after another, niced, and a table of execs per target.
#
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR] [TARGET...]
#
# BUILD_DIR (default build-san) is a clang build with DY_SANITIZE=ON, where
# DY_FUZZ is on by default; it is configured and built when missing:
#   CC=clang cmake -S . -B build-san -DDY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
# Each target fuzzes over its seeds (BUILD_DIR/tests/fuzz/corpus/NAME), the
# regression inputs (tests/fuzz/regress/NAME) and what earlier runs found
# (BUILD_DIR/tests/fuzz/work/NAME, where new inputs go). A crash, leak,
# timeout or out-of-memory stops that target and is saved as
# BUILD_DIR/tests/fuzz/work/NAME-crash-* (or -leak-, -timeout-, -oom-);
# reproduce with BUILD_DIR/tests/fuzz/fuzz_NAME FILE, and when fixed commit
# it as tests/fuzz/regress/NAME/<what>. Exits 1 if any target failed.
set -u
SECONDS_EACH=${1:-300}
BUILD=${2:-build-san}
[ $# -ge 2 ] && shift 2 || shift $#
SRC=$(cd "$(dirname "$0")/.." && pwd)
ALL="dymodel dyparams onnx npy ir pipeline cconvert"
[ -e "$SRC/compiler/frontends/paddle/paddle.c" ] && ALL="$ALL pdmodel"
TARGETS=${*:-$ALL}

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CC=clang cmake -S "$SRC" -B "$BUILD" -DDY_WERROR=ON -DDY_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug >/dev/null || exit 1
fi
grep -q '^DY_FUZZ:BOOL=ON' "$BUILD/CMakeCache.txt" || {
  echo "fuzz.sh: $BUILD is not a DY_FUZZ build (needs clang and -DDY_SANITIZE=ON)" >&2
  exit 1
}
for t in $TARGETS; do
  cmake --build "$BUILD" --target "fuzz_$t" -j 2 >/dev/null || { echo "fuzz.sh: cannot build fuzz_$t" >&2; exit 1; }
done

F=$BUILD/tests/fuzz
LOG=$F/logs
mkdir -p "$LOG"
status=0
results=""
for t in $TARGETS; do
  mkdir -p "$F/work/$t"
  dict=""
  case $t in
    ir|pipeline) dict="-dict=$F/corpus/ir.dict" ;;
    onnx) dict="-dict=$F/corpus/onnx.dict" ;;
  esac
  echo "== fuzz_$t: $SECONDS_EACH s (log: $LOG/$t.log)"
  nice "$F/fuzz_$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$F/work/$t-" $dict \
    "$F/work/$t" "$SRC/tests/fuzz/regress/$t" "$F/corpus/$t" >"$LOG/$t.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG/$t.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$LOG/$t.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$LOG/$t.log" | tail -1 | cut -d' ' -f2)
  verdict=ok
  if [ $rc -ne 0 ]; then
    verdict="FAILED (exit $rc): $(grep -m1 -E 'ERROR|SUMMARY|fuzz:' "$LOG/$t.log")"
    status=1
  fi
  results="$results$(printf '%-10s %12s %10s %8s  %s' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$verdict")
"
done
echo
printf '%-10s %12s %10s %8s  %s\n' target execs exec/s cov result
printf '%s' "$results"
exit $status
