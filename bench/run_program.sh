#!/usr/bin/env bash
# The shared part of the run_*_bench.sh scripts: installs the Debian
# packages, builds gpstream (Release), and runs build/bench/PROGRAM with the
# shared datasets and out/bench/ as its output directory, printing a line
# about the machine first and keeping everything printed in out/bench/LOG.
# Usage: bench/run_program.sh PROGRAM LOG [program arguments...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
program="$1"
log="$2"
shift 2
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
out="$root/out/bench"
mkdir -p "$out"
cd "$root"
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
  "$root/build/bench/$program" --data "$root/../shared/data" --out "$out" "$@"
} 2>&1 | tee "$out/$log"
