#!/bin/sh
# The main job on the shipped default model, SimpleNet (the seed example):
# eager run and save, dy2stc compile to an executable, run it, and compare
# compiled with eager side by side. Usage: scripts/demo.sh BUILD_DIR
set -e
BUILD=${1:-build}
OUT=$BUILD/demo
rm -rf "$OUT" && mkdir -p "$OUT"
echo "== 1. eager run, to_static run, jit_save (samples/simple_net.c)"
"$BUILD/samples/simple_net" --batch 5 --out "$OUT"
echo
echo "== 2. the saved Program (dy2stc show)"
"$BUILD/compiler/dy2stc" show "$OUT/simple_net.dymodel"
echo
echo "== 3. compile to a standalone executable"
"$BUILD/compiler/dy2stc" compile "$OUT/simple_net.dymodel" -o "$OUT/simple_net_bin" --max-batch 64 --report
echo
echo "== 4. run the executable"
"$OUT/simple_net_bin" --input x="$OUT/x.npy" --input y="$OUT/y.npy" --output-dir "$OUT/compiled"
echo "wrote $(ls "$OUT"/compiled/*.npy)"
echo
echo "== 5. compiled vs eager"
"$BUILD/compiler/dy2stc" compare "$OUT/compiled/out.npy" "$OUT/eager_out.npy" --limit 15
