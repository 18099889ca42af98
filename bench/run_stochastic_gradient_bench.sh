#!/usr/bin/env bash
# The all-rows gradient's stochastic estimate against the exact gradient on
# 10,000-row subsets of kin40k, sgemm and bcef (relative error, cosine,
# calibration of its own error bars, solve iterations, time), with
# bench_stochastic_gradient; Hutchinson's probes by default, --pathwise for
# probes drawn from the prior. Outputs in out/bench/: stochastic_gradient.log
# and stochastic_gradient.csv.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/run_program.sh" bench_stochastic_gradient stochastic_gradient.log "$@"
