#!/usr/bin/env bash
# The Vecchia likelihood against the exact one on 10,000-row subsets of bcef,
# sgemm and kin40k (value and gradient errors, time), with bench_vecchia.
# Outputs in out/bench/: vecchia.log, vecchia.csv.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/run_program.sh" bench_vecchia vecchia.log "$@"
