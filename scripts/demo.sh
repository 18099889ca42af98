#!/usr/bin/env bash
# The README's main command: install, build the gpstream tool, and run its main
# job on the built-in default — Friedman1 (the GBCD paper's synthetic set):
# generate a training CSV and a noise-free test set, convert, describe, learn
# the hyperparameters on 2000 rows, train an exact GP with GBCD, predict the
# test set with error bars and print how good they are; then a sparse model.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
BUILD_TARGET=gpstream "$root/scripts/build.sh"   # only the tool: no tests, no benchmarks

gpstream="$root/build/tools/gpstream"
work="$root/out/demo"
mkdir -p "$work"
rows="${DEMO_ROWS:-20000}"

echo "== generate $rows Friedman1 training rows (CSV) and 1000 noise-free test rows"
"$gpstream" generate friedman1 --rows "$rows" --seed 1 -o "$work/friedman1.csv" --force
"$gpstream" generate friedman1 --rows 1000 --seed 2 --noise-free -o "$work/friedman1_test.csv" --force
echo "== convert CSV -> HDF5"
"$gpstream" convert "$work/friedman1.csv" -o "$work/friedman1.h5" --force
echo "== info"
"$gpstream" info "$work/friedman1.h5"
echo "== hyper: maximum marginal likelihood on 2000 random rows (L-BFGS, 2 random restarts)"
"$gpstream" hyper "$work/friedman1.h5" -o "$work/hyper.json" --force -q
echo "== train: exact GP by greedy block coordinate descent (m = 500, kappa = 60, tol 1e-4)"
"$gpstream" train "$work/friedman1.h5" -o "$work/model.h5" --force --hyper "$work/hyper.json" \
  --checkpoint "$work/checkpoint.h5" --log "$work/training_log.csv"
echo "== predict the noise-free test set: means and the latent f*'s error bars"
"$gpstream" predict "$work/model.h5" "$work/friedman1_test.csv" -o "$work/predictions.csv" --force --variance --latent
echo "== the first test rows: true value, prediction, and its 95% interval (mean +- 2 std)"
paste -d, <(cut -d, -f11 "$work/friedman1_test.csv") "$work/predictions.csv" | awk -F, '
  NR == 1 { printf "%10s %10s %24s\n", "true", "predicted", "95% interval"; next }
  NR <= 6 { printf "%10.4f %10.4f   [%9.4f, %9.4f]\n", $1, $2, $2 - 2 * $4, $2 + 2 * $4 }'
echo "== a sparse alternative: sparse greedy GP (Smola & Bartlett) on up to 500 basis rows, O(m^2) per prediction"
"$gpstream" train "$work/friedman1.h5" -o "$work/sparse_model.h5" --force --hyper "$work/hyper.json" \
  --model sggp --basis 500
"$gpstream" predict "$work/sparse_model.h5" "$work/friedman1_test.csv" -o "$work/sparse_predictions.csv" --force \
  --variance --latent
echo "== done; the files are in $work:"
echo "   friedman1.csv/.h5 (training data), friedman1_test.csv, hyper.json (learned kernel), model.h5 (exact GP),"
echo "   checkpoint.h5, training_log.csv (one line per iteration), predictions.csv (mean, latent_variance, latent_std),"
echo "   sparse_model.h5, sparse_predictions.csv"
