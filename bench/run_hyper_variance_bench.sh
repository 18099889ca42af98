#!/usr/bin/env bash
# Builds gpstream and reproduces the GBCD paper's Table 3 (variance accuracy
# and cost on 10k subsets) and the GBCD column of Table 4 (hyperparameters
# learned on 2000 rows, GBCD on the full training sets) with
# bench_hyper_variance. Extra arguments go to the program (e.g. --tables 3,
# --datasets kin40k). Outputs in out/bench/: hyper_variance.log, table3.csv,
# table4.csv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
out="$root/out/bench"
mkdir -p "$out"
cd "$root"
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
  "$root/build/bench/bench_hyper_variance" --data "$root/../shared/data" --out "$out" "$@"
} 2>&1 | tee "$out/hyper_variance.log"
