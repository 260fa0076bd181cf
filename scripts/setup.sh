#!/bin/sh
# Install the Debian packages dy2stc needs to build and test, if any is
# missing. Safe to run again: does nothing when all are present.
set -e
PKGS="cmake make gcc clang libclang-rt-14-dev pkg-config libprotobuf-c-dev protobuf-c-compiler \
libopenblas-dev libcunit1-dev libonnx-dev libonnx-testdata"
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
