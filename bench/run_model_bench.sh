#!/usr/bin/env bash
# Which GP: the model as a user learns it, on the real sets of ../shared/data
# (issue 28). For each dataset and each way of choosing the model — today's
# old default (rbf, 2,000 rows, no mean), each kernel on 2,000 rows, auto on
# 2,000 rows, and the new default (auto on all rows, linear mean) — runs
# `gpstream train --learn-hyper` and `gpstream predict` as a user would, and
# reports the test RMSE (target units), SNLP and ±2σ coverage (variances on a
# fixed sample of test rows), with the time and peak memory (GNU time) of
# learning + training. Prints a table and writes out/bench/model.csv.
#
#   bench/run_model_bench.sh [DATASET ...]          (default: bcef sgemm kin40k)
#   SAMPLE=2000 (test rows with variances)  CONFIGS="old rbf ... all" to choose rows
#   (and all-refined, not by default: the default then --all-rows-steps 4, ~40 minutes on bcef)
#   VARIANCE="--variance-method nearest" (predict's variance options; sgemm's exact
#   variances do not fit this machine: docs/variance.md)
#   TRAIN="--tol 1e-2" (more options of train)  GPSTREAM=path (another gpstream binary)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GPSTREAM_DATA:-$root/../shared/data}"
out="$root/out/bench/model"
mkdir -p "$out"
gpstream="${GPSTREAM:-$root/build/tools/gpstream}"
[ -x "$gpstream" ] || BUILD_TARGET=gpstream "$root/scripts/build.sh" "$root/build"
sample="${SAMPLE:-2000}"
configs="${CONFIGS:-old rbf matern52 matern32 matern12 auto-subset all}"
datasets=("$@")
[ ${#datasets[@]} -gt 0 ] || datasets=(bcef sgemm kin40k)
csv="$root/out/bench/model.csv"
[ -f "$csv" ] || echo "dataset,config,kernel,mean,learn_seconds,train_seconds,peak_mib,rmse,normalised_rmse,snlp,coverage,sample" >"$csv"

# The options of each way of choosing the model.
options_of() {
  case "$1" in
    old) echo "--kernel rbf --mean none --learn-on subset" ;;
    auto-subset) echo "--learn-on subset" ;;
    all) echo "" ;;  # the defaults: auto, linear mean by least squares, all rows
    all-refined) echo "--all-rows-steps 4" ;;  # and 4 Newton steps on the exact likelihood's stochastic gradient
    *) echo "--kernel $1 --learn-on subset" ;;
  esac
}

printf "%-7s %-12s %-14s %9s %9s %8s %8s %8s %8s\n" dataset config kernel learn_s train_s peak_MiB RMSE SNLP cover
for dataset in "${datasets[@]}"; do
  work="$out/$dataset"
  mkdir -p "$work"
  [ -f "$work/train.h5" ] || "$gpstream" convert "$data/${dataset}_train.csv" -o "$work/train.h5" -q
  [ -f "$work/test.h5" ] || "$gpstream" convert "$data/${dataset}_test.csv" -o "$work/test.h5" -q
  # A fixed sample of test rows for the variances (every k-th row).
  if [ ! -f "$work/sample.csv" ]; then
    rows=$(($(wc -l <"$data/${dataset}_test.csv") - 1))
    step=$(((rows + sample - 1) / sample))
    awk -v step="$step" 'NR == 1 || (NR - 2) % step == 0' "$data/${dataset}_test.csv" >"$work/sample.csv"
  fi
  for config in $configs; do
    log="$work/$config.log"
    # shellcheck disable=SC2046,SC2086
    /usr/bin/time -f "peak %M KB" "$gpstream" train "$work/train.h5" --learn-hyper $(options_of "$config") ${TRAIN:-} \
      -o "$work/$config.h5" --save-hyper "$work/$config.json" --force >"$log" 2>&1
    "$gpstream" predict "$work/$config.h5" "$work/test.h5" -o "$work/$config.csv" --force >>"$log" 2>&1
    "$gpstream" predict "$work/$config.h5" "$work/sample.csv" -o "$work/$config.sample.csv" --variance ${VARIANCE:-} --force \
      >>"$log" 2>&1
    learn=$(grep -o "learned in [0-9.]* s" "$log" | grep -o "[0-9.]*" | head -1)
    train=$(grep -o "after [0-9]* iterations in [0-9.]* s" "$log" | grep -o "in [0-9.]*" | grep -o "[0-9.]*" | head -1)
    peak=$(($(grep -o "peak [0-9]* KB" "$log" | grep -o "[0-9]*") / 1024))
    kernel=$(grep -o "kernel [a-z0-9+-]*, lengthscales" "$log" | tail -1 | cut -d' ' -f2 | tr -d ,)
    mean=$(grep -o '"intercept": [a-z]*' "$work/$config.json" >/dev/null 2>&1 && echo linear || echo none)
    # The full test set's RMSE (normalised, and in the target's units), then the sample's SNLP and coverage.
    normalised=$(grep "predict: RMSE" "$log" | head -1 | awk '{print $3}')
    spread=$(grep "predict: RMSE" "$log" | head -1 | grep -o "with, [0-9.e+-]*)" | grep -o "[0-9.e+-]*" | head -1)
    rmse=$(awk -v a="$normalised" -v b="$spread" 'BEGIN { printf "%.4g", a * b }')
    snlp=$(grep -o "training mean) [-0-9.e+]*" "$log" | tail -1 | awk '{print $3}')
    coverage=$(grep -o "mean +- 2 std [0-9.]*" "$log" | tail -1 | awk '{print $5}')
    printf "%-7s %-12s %-14s %9s %9s %8s %8s %8s %8s\n" "$dataset" "$config" "$kernel" "$learn" "$train" "$peak" \
      "$rmse" "$snlp" "$coverage"
    echo "$dataset,$config,$kernel,$mean,$learn,$train,$peak,$rmse,$normalised,$snlp,$coverage,$sample" >>"$csv"
  done
done
