#!/usr/bin/env bash
# What a small noise variance costs (issue 47, item 3): the default `train`
# and the gbcd route of `predict --variance` on kin40k (30,000 rows, the
# shared hyperparameters) with the noise variance σ² set to each of
# NOISE_LEVELS (standardised targets; the shared value is 0.0105): the
# iterations and seconds of the solve, and of the variances of the first
# VARIANCE_ROWS test rows at the default tolerance (each at most
# VARIANCE_SECONDS: a run stopped there is reported with the rows it did).
# K̄'s smallest eigenvalue is σ², so the condition number grows as 1/σ².
#
# Prints the table and writes out/bench/noise_levels.csv.
#
# Usage: [NOISE_LEVELS="0.1 0.01 0.001"] [VARIANCE_ROWS=64] [VARIANCE_SECONDS=300]
#        [GPSTREAM=path] [GPSTREAM_DATA=dir] [OUT_DIR=dir] bench/run_noise_levels.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/common.sh"
gpstream="$(bench_gpstream)"
shared="$(bench_data kin40k_train.csv kin40k)"
levels="${NOISE_LEVELS:-0.1 0.01 0.001}"
variance_rows="${VARIANCE_ROWS:-64}"
variance_seconds="${VARIANCE_SECONDS:-300}"
out="${OUT_DIR:-$root/out/bench}"
data="$out/scale-data"  # shared with run_scale_bench.sh and run_thread_scaling.sh
mkdir -p "$data"
csv="$out/noise_levels.csv"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -f "$data/kin40k.h5" ] || "$gpstream" convert "$shared/kin40k_train.csv" -o "$data/kin40k.h5" -q
head -n "$((variance_rows + 1))" "$shared/kin40k_test.csv" >"$work/test.csv"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $("$gpstream" --version); $(date -u +%F)"
echo "noise_variance,train_iterations,train_seconds,variance_rows,variance_rows_done,variance_iterations,variance_seconds" >"$csv"
printf '%-10s %12s %10s %16s %14s %12s\n' "σ²" "iterations" "train s" "variance rows" "iterations" "seconds"
for noise in $levels; do
  "$gpstream" train "$data/kin40k.h5" --hyper "$shared/hyper/kin40k.json" --noise-var "$noise" -o "$work/model.h5" \
    --force -q --profile 2>"$work/train.txt"
  # "train: profile, ms per iteration over N iterations: …; in all M"
  read -r iterations seconds < <(awk '/^train: profile/ {
      match($0, /over [0-9]+ iterations/); n = substr($0, RSTART + 5, RLENGTH - 16)
      all = $NF; printf "%d %.2f\n", n, n * all / 1000 }' "$work/train.txt")
  "$gpstream" predict "$work/model.h5" "$work/test.csv" -o "$work/predictions.csv" --force --variance \
    --variance-method gbcd --time-limit "$variance_seconds" 2>"$work/predict.txt" >/dev/null
  # Finished: "predict: R rows; means in …, V variances by gbcd in S s (…): …, I iterations, …"; stopped at
  # the time limit: "predict: stopped at --time-limit: V of R rows have variances", the iterations from the
  # last progress line ("variance iter I  …").
  read -r done variance_iterations variance_time < <(awk -v limit="$variance_seconds" '
      /^variance iter / { i = $3 }
      /variances by gbcd in/ {
        match($0, /, [0-9,]+ variances by/); v = substr($0, RSTART + 2, RLENGTH - 15); gsub(/,/, "", v)
        match($0, /by gbcd in [0-9.]+ s/); s = substr($0, RSTART + 11, RLENGTH - 13)
        match($0, /[0-9,]+ iterations/); i = substr($0, RSTART, RLENGTH - 11); gsub(/,/, "", i) }
      /stopped at --time-limit/ {
        match($0, /: [0-9,]+ of/); v = substr($0, RSTART + 2, RLENGTH - 5); gsub(/,/, "", v); s = limit " (stopped)" }
      END { print (v == "" ? 0 : v), (i == "" ? 0 : i), s }' "$work/predict.txt")
  echo "$noise,$iterations,$seconds,$variance_rows,$done,$variance_iterations,${variance_time% (stopped)}" >>"$csv"
  printf '%-10s %12s %10s %16s %14s %12s\n' "$noise" "$iterations" "$seconds" "$done of $variance_rows" \
    "$variance_iterations" "$variance_time"
done
echo "wrote $csv"
