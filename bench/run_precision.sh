#!/usr/bin/env bash
# Single against double precision (issue 58): the kernel-entry probe
# (bench_kernel_entries: entries per second per core, each family), then
# `train` in both `--precision`s on each dataset — the hyperparameters
# learned once by `gpstream hyper` (kin40k: the shared ones) and kept in
# out/bench/precision/ — with its iterations, seconds, kernel evaluations,
# passes over K̄, the precision it ran in and its exact residuals in double,
# the final relative residual and the normalised test RMSE (predict's, GBCD
# paper eq. 16).
#
# Prints the tables and writes out/bench/kernel_entries.csv and
# out/bench/precision.csv (one row per dataset and precision).
#
# Usage: [GPSTREAM=path] [GPSTREAM_DATA=dir] bench/run_precision.sh [DATASET ...]
#        (default: kin40k bcef heaton_sim sgemm)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/common.sh"
gpstream="$(bench_gpstream)"
shared="$(bench_data kin40k_train.csv kin40k)"
out="$root/out/bench"
work="$out/precision"
mkdir -p "$work"
datasets=("$@")
[ ${#datasets[@]} -gt 0 ] || datasets=(kin40k bcef heaton_sim sgemm)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $("$gpstream" --version); $(date -u +%F)"
probe="$root/build/bench/bench_kernel_entries"
[ -x "$probe" ] || cmake --build "$root/build" --target bench_kernel_entries >/dev/null
"$probe" --out "$out"

csv="$out/precision.csv"
echo "dataset,precision,ran_in,exact_residuals,iterations,train_seconds,kernel_evaluations,passes,relative_residual,normalised_rmse" >"$csv"
printf '\n%-10s %-9s %-34s %6s %9s %7s %10s %8s\n' dataset asked "ran in" iters "train s" passes residual nRMSE
for dataset in "${datasets[@]}"; do
  [ -f "$shared/${dataset}_train.csv" ] || { echo "$dataset: not in $shared"; continue; }
  [ -f "$work/$dataset.h5" ] || "$gpstream" convert "$shared/${dataset}_train.csv" -o "$work/$dataset.h5" -q
  [ -f "$work/${dataset}_test.h5" ] || "$gpstream" convert "$shared/${dataset}_test.csv" -o "$work/${dataset}_test.h5" -q
  hyper="$work/$dataset.json"
  if [ "$dataset" = kin40k ]; then
    hyper="$shared/hyper/kin40k.json"
  elif [ ! -f "$hyper" ]; then
    "$gpstream" hyper "$work/$dataset.h5" -o "$hyper" -q
  fi
  for precision in double auto; do
    "$gpstream" train "$work/$dataset.h5" --hyper "$hyper" --precision "$precision" -o "$work/model.h5" --force \
      2>"$work/train.txt"
    line=$(tr '\r' '\n' <"$work/train.txt" | grep '^train: converged after\|^train: stopped' | tail -1)
    iterations=$(echo "$line" | sed -n 's/.* after \([0-9]*\) iterations.*/\1/p')
    seconds=$(echo "$line" | sed -n 's/.* iterations in \([0-9.]*\) s.*/\1/p')
    residual=$(echo "$line" | sed -n 's/.*|g|\/|y| \([0-9.e+-]*\).*/\1/p')
    info=$("$gpstream" info "$work/model.h5")
    evaluations=$(echo "$info" | sed -n 's/.* \([0-9,]*\) kernel evaluations.*/\1/p' | tr -d ,)
    rows=$(echo "$info" | sed -n 's/^trained on .*(\([0-9,]*\) rows.*/\1/p' | tr -d ,)
    ran_in=$(echo "$info" | sed -n 's/^precision *//p')
    exact=$(echo "$ran_in" | sed -n 's/.*, \([0-9]*\) exact residual.*/\1/p')
    passes=$(awk -v e="$evaluations" -v n="$rows" 'BEGIN { printf "%.1f", e / (n * n) }')
    rmse=$("$gpstream" predict "$work/model.h5" "$work/${dataset}_test.h5" -o "$work/predictions.csv" --force 2>&1 |
      tr '\r' '\n' | sed -n 's/^predict: RMSE \([0-9.e+-]*\).*/\1/p' | head -1)
    printf '%-10s %-9s %-34s %6s %9s %7s %10s %8s\n' "$dataset" "$precision" "$ran_in" "$iterations" "$seconds" \
      "$passes" "$residual" "$rmse"
    echo "$dataset,$precision,\"$ran_in\",${exact:-0},$iterations,$seconds,$evaluations,$passes,$residual,$rmse" >>"$csv"
  done
done
echo "wrote $out/kernel_entries.csv and $csv"
