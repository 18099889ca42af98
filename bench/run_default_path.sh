#!/usr/bin/env bash
# The whole default path as a user runs it (issue 57): convert, `train
# --learn-hyper` (the model learned, then trained by the route `auto`
# chooses), `predict --variance` on every test row — each step's seconds,
# and train's kernel evaluations and passes over K̄ (evaluations / n²);
# the test RMSE in the target's units (against the generating model's, where
# the dataset has one), SNLP and ±2σ coverage. Prints the table and appends
# to out/bench/default_path.csv.
#
#   bench/run_default_path.sh [DATASET ...]      (default: multiscale heaton_sim)
#   GPSTREAM=path (another binary)  LABEL=text (the build, in the CSV)  VARIANCE_ROWS=N (the first N test rows
#   only; default all)  GPSTREAM_DATA=dir
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GPSTREAM_DATA:-$root/../shared/data}"
gpstream="${GPSTREAM:-$root/build/tools/gpstream}"
[ -x "$gpstream" ] || BUILD_TARGET=gpstream "$root/scripts/build.sh" "$root/build"
label="${LABEL:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
out="$root/out/bench/default_path"
mkdir -p "$out"
csv="$root/out/bench/default_path.csv"
[ -f "$csv" ] || echo "dataset,build,kernel,solver,learn_seconds,train_seconds,train_iterations,kernel_evaluations,passes,variance_seconds,variance_rows,rmse,generating_rmse,snlp,coverage" >"$csv"
datasets=("$@")
[ ${#datasets[@]} -gt 0 ] || datasets=(multiscale heaton_sim)
# The generating model's test RMSE (°C), computed by gpstream itself with the generating hyperparameters and
# trend (../shared/data/README.md): the best any model can do on these test rows.
generating_rmse() {
  case "$1" in
    multiscale) echo 1.392 ;;
    heaton_sim) echo 0.8247 ;;
    *) echo "" ;;
  esac
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $("$gpstream" --version); $(date -u +%F)"
printf '%-11s %-28s %-5s %8s %8s %6s %7s %8s %8s %7s %7s\n' dataset kernel solver learn_s train_s iters passes variance RMSE SNLP cover
for dataset in "${datasets[@]}"; do
  work="$out/$dataset"
  mkdir -p "$work"
  [ -f "$work/train.h5" ] || "$gpstream" convert "$data/${dataset}_train.csv" -o "$work/train.h5" -q
  test_csv="$data/${dataset}_test.csv"
  if [ -n "${VARIANCE_ROWS:-}" ]; then
    head -n "$((VARIANCE_ROWS + 1))" "$data/${dataset}_test.csv" >"$work/test_rows.csv"
    test_csv="$work/test_rows.csv"
  fi
  "$gpstream" convert "$test_csv" -o "$work/test.h5" -q --force
  log="$work/train.log"
  "$gpstream" train "$work/train.h5" --learn-hyper -o "$work/model.h5" --force >"$log" 2>&1
  learn=$(tr '\r' '\n' <"$log" | sed -n 's/^train: learned in \([0-9.]*\) s.*/\1/p')
  kernel=$(tr '\r' '\n' <"$log" | sed -n 's/^train: learned in .*: kernel \([^,]*\),.*/\1/p')
  line=$(tr '\r' '\n' <"$log" | grep '^train: converged after\|^train: stopped' | tail -1)
  iterations=$(echo "$line" | sed -n 's/.* after \([0-9]*\) iterations.*/\1/p')
  train=$(echo "$line" | sed -n 's/.* iterations in \([0-9.]*\) s.*/\1/p')
  solver=$(tr '\r' '\n' <"$log" | sed -n 's/^train: \([a-z-]*\) \(with .* past steps \)\{0,1\}on .*/\1/p' | head -1)
  info=$("$gpstream" info "$work/model.h5")
  evaluations=$(echo "$info" | sed -n 's/.* \([0-9,]*\) kernel evaluations.*/\1/p' | tr -d ,)
  rows=$(echo "$info" | sed -n 's/^trained on .*(\([0-9,]*\) rows.*/\1/p' | tr -d ,)
  passes=$(awk -v e="$evaluations" -v n="$rows" 'BEGIN { printf "%.1f", e / (n * n) }')
  vlog="$work/predict.log"
  "$gpstream" predict "$work/model.h5" "$work/test.h5" --variance -o "$work/predictions.csv" --force >"$vlog" 2>&1
  variance=$(tr '\r' '\n' <"$vlog" | sed -n 's/.* variances by [a-z]* in \([0-9.]*\) s.*/\1/p' | head -1)
  count=$(tr '\r' '\n' <"$vlog" | sed -n 's/^predict: \([0-9,]*\) rows;.*/\1/p' | tr -d ,)
  scale=$(tr '\r' '\n' <"$vlog" | sed -n 's/.*standardised with, \([0-9.]*\)).*/\1/p')
  normalised=$(tr '\r' '\n' <"$vlog" | sed -n 's/^predict: RMSE \([0-9.]*\) .*/\1/p')
  rmse=$(awk -v a="$normalised" -v b="$scale" 'BEGIN { printf "%.4f", a * b }')
  snlp=$(tr '\r' '\n' <"$vlog" | sed -n 's/.*mean) \([-0-9.]*\), coverage.*/\1/p')
  coverage=$(tr '\r' '\n' <"$vlog" | sed -n 's/.*coverage of mean +- 2 std \([0-9.]*\).*/\1/p')
  printf '%-11s %-28s %-5s %8s %8s %6s %7s %8s %8s %7s %7s\n' "$dataset" "$kernel" "$solver" "$learn" "$train" \
    "$iterations" "$passes" "$variance" "$rmse" "$snlp" "$coverage"
  echo "$dataset,$label,$kernel,$solver,$learn,$train,$iterations,$evaluations,$passes,$variance,$count,$rmse,$(generating_rmse "$dataset"),$snlp,$coverage" >>"$csv"
done
echo "appended to $csv"
