#!/bin/sh
# check_codegen_floors.sh NM CODEGEN_SRC_DIR OBJECT...
#
# Fails when a file of codegen/ calls up or across its floors (the map is
# codegen/README.md):
#   floor 0  the embedded templates (tpl_*.c, data only), buf.c, then
#            emit_util.c and templates.c              (in that order)
#   floor 1  emit_act.c, emit_simd.c, emit_mathlib.c, then emit_gemm.c and
#            emit_conv_small.c, then emit_winograd.c, then emit_matmul.c,
#            emit_conv.c                              (in that order)
#   floor 2  the family emitters, which call floors 0-1 only, never each
#            other: emit_ops.c, emit_math.c, emit_nn.c, emit_shape.c,
#            emit_extra.c, emit_fused.c, emit_attention.c, emit_control.c,
#            emit_quant.c
#   floor 3  the driver: emit_main.c, emit_tidy.c, emit_weights.c, then emit.c
# Each object's undefined dy_* symbols (nm -u) must be defined by its own
# file or by a file of a lower rank; a family emitter (rank 6) may use
# nothing of another rank-6 file. Also checks the includes: a floor 0 file
# includes floor0_util.h, a floor 1 or 2 file (of those listed with a
# header) floor1_kernels.h, never codegen_internal.h. A codegen file that
# is not in the map fails the check: give it a floor here and in the README.
set -u
NM=$1
SRC=$2
shift 2

rank_of() {
  case $1 in
    buf | tpl_*) echo 0 ;;
    emit_util | templates) echo 1 ;;
    emit_act | emit_simd | emit_mathlib) echo 2 ;;
    emit_gemm | emit_conv_small) echo 3 ;;
    emit_winograd) echo 4 ;;
    emit_matmul | emit_conv) echo 5 ;;
    emit_ops | emit_math | emit_nn | emit_shape | emit_extra | emit_fused | emit_attention | emit_control | emit_quant) echo 6 ;;
    emit_main | emit_tidy | emit_weights) echo 7 ;;
    emit) echo 8 ;;
    *) echo unknown ;;
  esac
}

floor_of_rank() {
  case $1 in
    0 | 1) echo 0 ;;
    2 | 3 | 4 | 5) echo 1 ;;
    6) echo 2 ;;
    *) echo 3 ;;
  esac
}

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# symbol -> defining file
for o in "$@"; do
  f=$(basename "$o")
  f=${f%.o}
  f=${f%.obj}
  f=${f%.c}
  if [ "$(rank_of "$f")" = unknown ]; then
    echo "codegen/$f.c has no floor: add it to tests/check_codegen_floors.sh and codegen/README.md"
    fail=1
    continue
  fi
  "$NM" -g --defined-only "$o" | awk -v f="$f" 'NF >= 3 && $3 ~ /^dy_/ {print $3, f}' >> "$tmp/defs"
  echo "$o $f" >> "$tmp/objs"
done
[ -s "$tmp/objs" ] || { echo "no objects given"; exit 2; }

while read -r o f; do
  r=$(rank_of "$f")
  for s in $("$NM" -u "$o" | awk '{print $NF}' | grep '^dy_'); do
    d=$(awk -v s="$s" '$1 == s {print $2; exit}' "$tmp/defs")
    [ -n "$d" ] || continue          # defined outside codegen (ir/)
    [ "$d" = "$f" ] && continue
    rd=$(rank_of "$d")
    if [ "$rd" -ge "$r" ]; then
      echo "codegen/$f.c (floor $(floor_of_rank "$r")) calls $s of codegen/$d.c (floor $(floor_of_rank "$rd")): only lower floors may be called"
      fail=1
    fi
  done
done < "$tmp/objs"

# includes
for f in buf emit_util templates; do
  if grep -q '#include "\(floor1_kernels\|codegen_internal\)\.h"' "$SRC/$f.c"; then
    echo "codegen/$f.c (floor 0) includes a header of a higher floor"
    fail=1
  fi
done
for f in emit_act emit_gemm emit_winograd emit_matmul emit_conv emit_ops emit_math emit_nn emit_shape \
         emit_extra emit_fused emit_control emit_quant; do
  if grep -q '#include "codegen_internal\.h"' "$SRC/$f.c"; then
    echo "codegen/$f.c includes codegen_internal.h (floor 3); include floor1_kernels.h"
    fail=1
  fi
done

if [ "$fail" = 0 ]; then
  echo "codegen floors: $(wc -l < "$tmp/objs") files, no call up or across a floor"
fi
exit "$fail"
