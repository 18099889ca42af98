#!/usr/bin/env bash
# Configures and builds gpstream. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Default: a Release build in build/ for this machine's CPU; GPSTREAM_ARCH=x86-64-v3
# (or any -march value) builds for a stated baseline instead, as docker/Dockerfile does.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$root/build}"
shift || true
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  -DGPSTREAM_ARCH="${GPSTREAM_ARCH:-native}" "$@" >/dev/null
# BUILD_TARGET=gpstream builds only the command line tool (the demo needs no tests or benchmarks).
cmake --build "$build_dir" -j "$(nproc)" --target "${BUILD_TARGET:-all}"
