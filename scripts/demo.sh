#!/usr/bin/env bash
# The README's main command: install, build, and run gpstream's main job on the
# built-in default — Friedman1 (the GBCD paper's synthetic set): generate a
# training CSV and a noise-free test set, convert, describe, train an exact GP
# with GBCD, predict the test set and print its RMSE (GBCD paper eq. 16).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

gpstream="$root/build/tools/gpstream"
work="$root/out/demo"
mkdir -p "$work"
rows="${DEMO_ROWS:-20000}"
# Friedman1's hyperparameters in standardised space (squared exponential ARD,
# learned by maximum likelihood on 2,000 rows; x6..x10 are irrelevant, hence
# their very long lengthscales).
hyper=(--kernel se-ard --lengthscales 1.90,1.92,2.76,5.32,7.54,4.5e4,8.2e4,4.4e4,6.3e4,4.7e4 --signal-var 1 --noise-var 0.039)

echo "== generate $rows Friedman1 training rows (CSV) and 5000 noise-free test rows"
"$gpstream" generate friedman1 --rows "$rows" --seed 1 -o "$work/friedman1.csv" --force
"$gpstream" generate friedman1 --rows 5000 --seed 2 --noise-free -o "$work/friedman1_test.h5" --force
echo "== convert CSV -> HDF5"
"$gpstream" convert "$work/friedman1.csv" -o "$work/friedman1.h5" --force
echo "== info"
"$gpstream" info "$work/friedman1.h5"
echo "== train: exact GP by greedy block coordinate descent (m = 500, kappa = 60, tol 1e-4)"
"$gpstream" train "$work/friedman1.h5" -o "$work/model.h5" --force "${hyper[@]}" \
  --checkpoint "$work/checkpoint.h5" --log "$work/training_log.csv"
echo "== predict the test set"
"$gpstream" predict "$work/model.h5" "$work/friedman1_test.h5" -o "$work/predictions.csv" --force
