#!/bin/sh
# The differential tester's long run: N random Programs (default 1000) from
# seed SEED on (default 1000, past the bounded run's 1..48), each run
# eagerly, on the static executor and compiled at -O0, at the default level
# and with --threads 2 (tests/difftest.c). Niced; prints the programs
# checked and the mismatches, each minimised and printed as text IR with its
# seed. Usage: scripts/difftest.sh [N] [SEED] [BUILD_DIR]
set -e
N=${1:-1000}
SEED=${2:-1000}
BUILD=${3:-build}
exec env DY_DIFFTEST_PROGRAMS="$N" DY_DIFFTEST_SEED="$SEED" \
  nice "$BUILD/tests/test_difftest"
