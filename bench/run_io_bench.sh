#!/usr/bin/env bash
# Builds gpstream and runs the I/O benchmark: conversion throughput and peak
# memory on kin40k and a 10-million-row Friedman1 CSV (~2.3 GB), streaming
# throughput against a raw read, chunk-size trade-off. Results: out/bench/io.csv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "$root"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB"
"$root/build/bench/bench_io" --gpstream "$root/build/tools/gpstream" --data "$root/../shared/data" "$@"
