#!/bin/sh
# Install the Debian packages dy2stc needs to build and test, if any is
# missing. Safe to run again: does nothing when all are present.
# The cross tools are for the firmware tests (tests/test_firmware.c,
# samples/firmware): arm-none-eabi-gcc and newlib for Cortex-M, QEMU's
# mps2 boards to run it; aarch64-linux-gnu-gcc and qemu-aarch64 for ARM64
# (and for the NEON path of the generated code, tests/test_simd.c).
# python3-sklearn ships the digits data set (sklearn/datasets/data/digits.csv.gz)
# that samples/digits trains on.
# python3-numpy, -pytest, -venv, -pip and -setuptools: the Python package
# (python/) and its tests, under Debian's /usr/bin/python3.
# python3-onnx: onnx.checker, which tests/test_onnx_export.c runs on the
# models `dy2stc export --to onnx` writes.
# `sh scripts/setup.sh --bench` also installs what bench/torch_compare.py
# and bench/ort_compare.py need (PyTorch, torchvision and onnx for
# torch.onnx.export; node and ONNX Runtime's npm package onnxruntime-node
# into bench/ort/node_modules, with --ignore-scripts: its install script
# would download GPU libraries, and the CPU library ships inside the
# package); large, so not part of the default install.
set -e
BENCH_PKGS="python3-torch python3-torchvision python3-numpy nodejs"
PKGS="cmake make gcc clang libclang-rt-14-dev libclang-14-dev pkg-config libprotobuf-c-dev protobuf-c-compiler \
libopenblas-dev libcunit1-dev libonnx-dev libonnx-testdata \
gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm \
gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
python3-sklearn python3-numpy python3-pytest python3-venv python3-pip python3-setuptools python3-onnx"
[ "${1:-}" = "--bench" ] && PKGS="$PKGS $BENCH_PKGS"
# npm: Debian's package, unless the nodejs installed already carries npm
[ "${1:-}" = "--bench" ] && ! command -v npm >/dev/null 2>&1 && PKGS="$PKGS npm"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
if [ "${1:-}" = "--bench" ] && [ ! -d "$(dirname "$0")/../bench/ort/node_modules/onnxruntime-node" ]; then
  echo "setup: npm install --ignore-scripts onnxruntime-node (bench/ort)"
  (cd "$(dirname "$0")/../bench/ort" && npm install --ignore-scripts --no-audit --no-fund)
fi
