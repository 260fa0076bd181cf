#!/bin/sh
# check_codegen_floors.sh [--expect TEXT] NM CODEGEN_SRC_DIR FLOOR: OBJECT... FLOOR: OBJECT...
#
# Fails when a file of codegen/ calls up its floors (the map is
# codegen/README.md). The floors, bottom up, each a folder of codegen/ and
# an OBJECT library (codegen/CMakeLists.txt):
#
#   0 text:     text buffers, literals, the emitter context, the templates
#   1 kernels:  kernel builders more than one emitter uses
#   2 ops:      the op families (dy_emit_<op>), which never call each other
#   3 program:  the driver
#
# The objects of each floor follow its name ("text:", "kernels:", "ops:",
# "program:"); ctest codegen_floors gives every object of the four floor
# libraries. Each object's undefined symbols (nm -u) must be defined by
# itself, by an object of its own floor or by one of a floor below; an
# object of the ops floor may use nothing of another one. Symbols defined
# outside codegen (ir/, libc) are not looked at. Also: every #include in codegen/
# names a header by its file name alone (no '/'), so that a floor's include
# path (its own folder and those below) decides what it can see.
#
# Prints every file it read, by floor, and one line per breach; exit 1 on a
# breach, 2 on bad usage. With --expect TEXT the roles turn: exit 0 only
# when the check fails and its output holds TEXT (ctest
# codegen_floors_plant hands it a planted up-call).
set -u
if [ "${1:-}" = "--expect" ]; then
  want=$2
  shift 2
  out=$(sh "$0" "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  if [ "$rc" = 1 ] && printf '%s\n' "$out" | grep -qF -- "$want"; then
    echo "codegen floors: the planted breach was reported, as expected"
    exit 0
  fi
  echo "codegen floors: expected a failure reporting: $want (exit status $rc)"
  exit 1
fi
[ $# -ge 3 ] || { echo "usage: $0 [--expect TEXT] NM CODEGEN_SRC FLOOR: OBJECT..."; exit 2; }
NM=$1
SRC=$2
shift 2

rank_of() {
  case $1 in
    text) echo 0 ;;
    kernels) echo 1 ;;
    ops) echo 2 ;;
    program) echo 3 ;;
    *) echo unknown ;;
  esac
}

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
floor=
: > "$tmp/objs"
: > "$tmp/defs"
: > "$tmp/breaches"
for a in "$@"; do
  case $a in
    *:)
      floor=${a%:}
      [ "$(rank_of "$floor")" != unknown ] || { echo "unknown floor '$floor'"; exit 2; }
      continue ;;
  esac
  [ -n "$floor" ] || { echo "object $a before any FLOOR:"; exit 2; }
  f=$(basename "$a")
  f=${f%.o}
  f=${f%.obj}
  f=${f%.c}
  "$NM" -g --defined-only "$a" > "$tmp/nm" || { echo "$NM failed on $a"; exit 2; }
  awk -v f="$floor/$f" 'NF >= 3 {print $3, f}' "$tmp/nm" >> "$tmp/defs"
  echo "$a $floor/$f" >> "$tmp/objs"
done
[ -s "$tmp/objs" ] || { echo "no objects given"; exit 2; }

# calls: own floor or below; never between two op families
rank_awk='function rank(x) { return x == "text" ? 0 : x == "kernels" ? 1 : x == "ops" ? 2 : 3 }'
while read -r o f; do
  "$NM" -u "$o" | awk '{print $NF}' |
    awk -v f="$f" "$rank_awk"'
      NR == FNR { if (!($1 in def)) def[$1] = $2; next }
      {
        d = def[$1]
        if (d == "" || d == f) next          # outside codegen (ir/), or its own
        fl = f; sub(/\/.*/, "", fl); dl = d; sub(/\/.*/, "", dl)
        r = rank(fl); rd = rank(dl)
        if (rd > r)
          printf "codegen/%s.c (floor %d, %s) calls %s of codegen/%s.c (floor %d, %s): a file calls only its own floor and those below\n", f, r, fl, $1, d, rd, dl
        else if (fl == "ops" && dl == "ops")
          printf "codegen/%s.c calls %s of codegen/%s.c: op families never call each other (what two share belongs on floor 1, codegen/kernels/)\n", f, $1, d
      }' "$tmp/defs" - >> "$tmp/breaches"
done < "$tmp/objs"
if [ -s "$tmp/breaches" ]; then
  cat "$tmp/breaches"
  fail=1
fi

# includes by file name only
for h in $(find "$SRC" -name '*.c' -o -name '*.h' | sort); do
  grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "$h" |
    while IFS= read -r line; do
      echo "${h#"$SRC"/}:${line%%:*}: includes a header by a path; name it alone, the floor's include path finds it"
      echo x >> "$tmp/badinc"
    done
done
[ -s "$tmp/badinc" ] 2>/dev/null && fail=1

if [ "$fail" = 0 ]; then
  for fl in text kernels ops program; do
    names=$(awk -v fl="$fl" '{split($2, a, "/"); if (a[1] == fl) printf " %s.c", a[2]}' "$tmp/objs")
    [ -n "$names" ] && echo "  $fl:$names"
  done
  echo "codegen floors: $(wc -l < "$tmp/objs") files, no call up a floor or between op families"
fi
exit "$fail"
