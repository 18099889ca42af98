#!/usr/bin/env bash
# Builds gpstream and runs bench_sparse: the sparse columns (SD, SR, MPGP,
# p = 2000) of the GBCD paper's Table 4 and Schwaighofer & Tresp's Table 1
# (remaining variance on kin40k, B = 200 and 1000). Extra arguments go to the
# program (e.g. --tables 1, --datasets kin40k). Outputs in out/bench/:
# sparse.log, sparse_table4.csv, sparse_table1.csv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
out="$root/out/bench"
mkdir -p "$out"
cd "$root"
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
  "$root/build/bench/bench_sparse" --data "$root/../shared/data" --out "$out" "$@"
} 2>&1 | tee "$out/sparse.log"
