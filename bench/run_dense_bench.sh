#!/usr/bin/env bash
# Builds gpstream and reproduces the GBCD paper's Table 2 and Figs 2-4 with
# bench_dense, then plots them with gnuplot. Extra arguments go to
# bench_dense (e.g. --time-limit 300, --datasets kin40k). Outputs in out/bench/:
#   dense.log                the printed tables
#   table2.csv               time, iterations, |g|/|y| and test RMSE per solver
#   table2_trace.csv         |g|/|y| and objective against time (Figs 2-3)
#   dense_other.csv          kernel-product throughput and Fig 4
#   fig2_3_<dataset>.png     |g|/|y| and f - f* against time, every solver
#   fig4_friedman1.png       training time against n, gbcd and bcd-cyclic
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v gnuplot >/dev/null; then
  "$root/scripts/install-deps.sh"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null
fi
"$root/bench/run_program.sh" bench_dense dense.log "$@"
"$root/bench/plot_dense.sh" "$root/out/bench"
