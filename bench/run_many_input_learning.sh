#!/usr/bin/env bash
# Learning where the Vecchia likelihood declines (issue 57): `train
# --learn-hyper` on kin40k's first ROWS training rows, as given (8 inputs)
# and with EXTRA_INPUTS columns of uniform noise beside them (seeded: a
# set of ~10,000 rows × 16–26 inputs, most of them irrelevant, like the
# held-out ones the issue names). Prints each phase's seconds and evaluations
# — the subset search of every candidate, each rung of the exact ladder — and
# the whole, and writes out/bench/many_input_learning.csv.
#
# Usage: [ROWS=10000] [EXTRA_INPUTS=16] [GPSTREAM=path] [GPSTREAM_DATA=dir] [OUT_DIR=dir]
#        bench/run_many_input_learning.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/common.sh"
gpstream="$(bench_gpstream)"
shared="$(bench_data kin40k_train.csv kin40k)"
rows="${ROWS:-10000}"
extra="${EXTRA_INPUTS:-16}"
out="${OUT_DIR:-$root/out/bench}"
mkdir -p "$out"
csv="$out/many_input_learning.csv"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

awk -v rows="$rows" 'NR <= rows + 1' "$shared/kin40k_train.csv" >"$work/given.csv"
# The same rows with `extra` columns of U(0, 1) noise before the target (NumPy's default generator, seed 5).
/usr/bin/python3 - "$work/given.csv" "$extra" "$work/wide.csv" <<'EOF'
import sys
import numpy as np
given, extra, wide = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = np.loadtxt(given, delimiter=",", skiprows=1)
header = open(given).readline().strip().split(",")
noise = np.random.default_rng(5).uniform(size=(data.shape[0], extra))
names = header[:-1] + [f"z{i}" for i in range(1, extra + 1)] + header[-1:]
np.savetxt(wide, np.hstack([data[:, :-1], noise, data[:, -1:]]), delimiter=",", header=",".join(names),
           comments="", fmt="%.8g")
EOF

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $("$gpstream" --version); $(date -u +%F)"
echo "rows,inputs,phase,seconds,evaluations" >"$csv"
for set in given wide; do
  "$gpstream" convert "$work/$set.csv" -o "$work/$set.h5" -q
  inputs=$(($(head -n 1 "$work/$set.csv" | tr ',' '\n' | wc -l) - 1))
  "$gpstream" train "$work/$set.h5" --learn-hyper -o "$work/model.h5" --force >"$work/train.txt" 2>&1
  echo "$rows rows x $inputs inputs:"
  # "train: <kernel>  <-log p subset>  -  <params>  <seconds>  …": each candidate's subset search.
  tr '\r' '\n' <"$work/train.txt" | awk -v rows="$rows" -v inputs="$inputs" -v csv="$csv" '
    /^train: kernel / { table = 1; next }
    table && /^train: [a-z0-9+]+ +[-0-9.]+ / { printf "  subset search, %-28s %7.1f s\n", $2, $6
                                     print rows "," inputs ",subset search " $2 "," $6 "," >>csv; next }
    { table = 0 }
    /^train: refined .* by the exact likelihood on / {
      match($0, /on [0-9,]+ random rows/); size = substr($0, RSTART + 3, RLENGTH - 15); gsub(/,/, "", size)
      match($0, /\([0-9]+ evaluations, [0-9.]+ s\)/); split(substr($0, RSTART + 1, RLENGTH - 2), part, /[ ,]+/)
      printf "  exact rung of %6d rows: %4d evaluations, %7.1f s\n", size, part[1], part[3]
      print rows "," inputs ",exact rung " size "," part[3] "," part[1] >>csv }
    /^train: learned in / {
      match($0, /in [0-9.]+ s \([0-9]+ evaluations/); split(substr($0, RSTART + 3, RLENGTH - 3), part, /[ (]+/)
      printf "  learned in %.1f s (%d evaluations)\n", part[1], part[3]
      print rows "," inputs ",learning," part[1] "," part[3] >>csv }'
done
echo "wrote $csv"
