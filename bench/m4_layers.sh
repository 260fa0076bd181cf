#!/bin/sh
# bench/m4_layers.sh - the instructions of each kernel call of one model's
# NAME_run on the simulated Cortex-M4F (a per-layer profile; a measurement,
# not a test).
#
#   sh bench/m4_layers.sh OUT NAME
#
# OUT and NAME as given to samples/mlperf_tiny/build.sh, which must have
# run first (OUT/NAME.c, OUT/NAME-app-m4.o, OUT/startup-m4.o). A copy of
# NAME.c reads the MPS2 FPGA counter (one tick = 40 instructions under
# -icount shift=0) before each kernel call of NAME_run and prints, after
# the run, one line per call: instructions, kernel. The counter's reads
# and stores add ~6 instructions a call.
set -eu
OUT=$1 NAME=$2
HERE=$(cd "$(dirname "$0")/../samples" && pwd)
CC=${ARM_CC:-arm-none-eabi-gcc}
ARCH="-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard"
P=$OUT/${NAME}_layers
awk -v run="${NAME}_run(" '
  BEGIN { n = 0 }
  index($0, "int " run) == 1 { inrun = 1 }
  inrun && /^  k[0-9]+_[A-Za-z0-9_]+\(/ {
    k = $0; sub(/^  /, "", k); sub(/\(.*/, "", k)
    printf "  dy_prof_t[%d] = DY_PROF_COUNTER; dy_prof_k[%d] = \"%s\";\n", n, n, k; n++
  }
  inrun && /^  return / && !/_ERR_/ {
    printf "  dy_prof_t[%d] = DY_PROF_COUNTER; dy_prof_n = %d;\n", n, n
    print "  for (int i = 0; i < dy_prof_n; i++)"
    print "    printf(\"layer %lu %s\\n\", (unsigned long)(dy_prof_t[i + 1] - dy_prof_t[i]) * 40, dy_prof_k[i]);"
  }
  inrun && /^}/ { inrun = 0 }
  { print }
  /^#include/ && !done {
    print "#include <stdio.h>"
    print "#define DY_PROF_COUNTER (*(volatile uint32_t *)0x40028018u)"
    print "static uint32_t dy_prof_t[256]; static const char *dy_prof_k[256]; static int dy_prof_n;"
    done = 1
  }' "$OUT/$NAME.c" >"$P.c"
CFLAGS="-std=c11 -O2 -ffreestanding -ffunction-sections -fdata-sections -I$OUT"
$CC $ARCH $CFLAGS -c "$P.c" -o "$P-m4.o"
WOBJ=
[ -f "$OUT/${NAME}_weights-m4.o" ] && WOBJ="$OUT/${NAME}_weights-m4.o"
$CC $ARCH --specs=rdimon.specs -nostartfiles -T "$HERE/firmware/mps2.ld" -Wl,--gc-sections \
  "$OUT/startup-m4.o" "$OUT/$NAME-app-m4.o" "$P-m4.o" $WOBJ -o "$P-m4.elf"
timeout 1200 qemu-system-arm -M mps2-an386 -nographic -icount shift=0 \
  -semihosting-config enable=on,target=native -kernel "$P-m4.elf" |
  awk '/^layer / { printf "%10d  %s\n", $2, $3; next } /^instructions:/ { print }'
