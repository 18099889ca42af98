#!/usr/bin/env bash
# The README's main command: install, build, and run gpstream's main job on the
# built-in default — Friedman1 (the GBCD paper's synthetic set): generate a
# training CSV and a noise-free test set, convert, describe, learn the
# hyperparameters on 2000 rows, train an exact GP with GBCD, predict the test
# set with error bars and print its RMSE (GBCD paper eq. 16) and calibration.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

gpstream="$root/build/tools/gpstream"
work="$root/out/demo"
mkdir -p "$work"
rows="${DEMO_ROWS:-20000}"

echo "== generate $rows Friedman1 training rows (CSV) and 1000 noise-free test rows"
"$gpstream" generate friedman1 --rows "$rows" --seed 1 -o "$work/friedman1.csv" --force
"$gpstream" generate friedman1 --rows 1000 --seed 2 --noise-free -o "$work/friedman1_test.h5" --force
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
"$gpstream" predict "$work/model.h5" "$work/friedman1_test.h5" -o "$work/predictions.csv" --force --variance --latent
echo "== the first predictions (mean, variance, std)"
head -4 "$work/predictions.csv"
echo "== a sparse alternative: sparse greedy GP (Smola & Bartlett) on up to 500 basis rows, O(m^2) per prediction"
"$gpstream" train "$work/friedman1.h5" -o "$work/sparse_model.h5" --force --hyper "$work/hyper.json" \
  --model sggp --basis 500
"$gpstream" predict "$work/sparse_model.h5" "$work/friedman1_test.h5" -o "$work/sparse_predictions.csv" --force \
  --variance --latent
