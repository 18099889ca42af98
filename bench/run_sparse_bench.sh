#!/usr/bin/env bash
# Builds gpstream and runs bench_sparse: the sparse columns (SD, SR, MPGP,
# p = 2000) of the GBCD paper's Table 4 and Schwaighofer & Tresp's Table 1
# (remaining variance on kin40k, B = 200 and 1000, with the online GP and the
# BCM) and Cao et al. 2015 Fig. 5 (CholQR; bench/plot_sparse.sh draws it).
# Extra arguments go to the program (e.g. --tables 1, --datasets kin40k).
# Outputs in out/bench/: sparse.log, sparse_table4.csv, sparse_table1.csv,
# sparse_cholqr.csv.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/run_program.sh" bench_sparse sparse.log "$@"
