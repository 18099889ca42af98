#!/usr/bin/env bash
# Builds gpstream and reproduces the GBCD paper's Table 3 (variance accuracy
# and cost on 10k subsets) and the GBCD column of Table 4 (hyperparameters
# learned on 2000 rows, GBCD on the full training sets) with
# bench_hyper_variance. Extra arguments go to the program (e.g. --tables 3,
# --datasets kin40k). Outputs in out/bench/: hyper_variance.log, table3.csv,
# table4.csv.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/run_program.sh" bench_hyper_variance hyper_variance.log "$@"
