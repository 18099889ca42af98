#!/usr/bin/env bash
# What a multi-scale model costs each solver (issue 57): `train` by gbcd and
# by pcg on multiscale (its westernmost ROWS training rows: a window of the
# field at the data's full density, where every-fifth-row subsets make the
# short term easy; the generating trend taken off, the data's own units) with the generating model's first 1, 2 and
# 3 Matérn-3/2 terms (short, middle, long range) and the noise variance σ²
# set to each of NOISE_LEVELS (the generating value is 0.04, against a signal
# variance of 1.3 + 1.8 + 2.4): the iterations, seconds, kernel evaluations
# and passes over K̄ (evaluations / n²) of the solve to the default tolerance.
# K̄'s smallest eigenvalue is σ², so the condition number grows as 1/σ²;
# the long-range term couples every row with every other.
#
# Prints the table and writes out/bench/solver_sweep.csv.
#
# Usage: [NOISE_LEVELS="0.4 0.04 0.004"] [TERMS="1 2 3"] [SOLVERS="gbcd pcg"] [ROWS=21000]
#        [GPSTREAM=path] [GPSTREAM_DATA=dir] [OUT_DIR=dir] bench/run_solver_sweep.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/common.sh"
gpstream="$(bench_gpstream)"
shared="$(bench_data multiscale_train.csv multiscale)"
levels="${NOISE_LEVELS:-0.4 0.04 0.004}"
terms_list="${TERMS:-1 2 3}"
solvers="${SOLVERS:-gbcd pcg}"
window_rows="${ROWS:-21000}"
out="${OUT_DIR:-$root/out/bench}"
mkdir -p "$out"
csv="$out/solver_sweep.csv"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The rows, less the generating trend (../shared/data/README.md, "Generating models").
{
  head -n 1 "$shared/multiscale_train.csv"
  tail -n +2 "$shared/multiscale_train.csv" | sort -t, -k1,1g -k2,2g |
    awk -F, -v rows="$window_rows" 'NR <= rows { printf "%s,%s,%.10g\n", $1, $2, $3 - (44.5 - 2.2 * ($1 + 93.74) + 1.1 * ($2 - 35.5)) }'
} >"$work/rows.csv"
"$gpstream" convert "$work/rows.csv" -o "$work/rows.h5" -q
rows=$(($(wc -l <"$work/rows.csv") - 1))
# The generating model's first `terms` terms.
hyper_file() {
  /usr/bin/python3 - "$shared/hyper/multiscale_generating.json" "$1" "$2" <<'EOF'
import json, sys
model = json.load(open(sys.argv[1]))
terms = int(sys.argv[2])
model["added_terms"] = model["added_terms"][: terms - 1]
model["kernel_name"] = "+".join(["matern32"] * terms)
json.dump(model, open(sys.argv[3], "w"), indent=1)
EOF
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $("$gpstream" --version); $(date -u +%F); $rows rows"
echo "rows,terms,noise_variance,solver,iterations,seconds,kernel_evaluations,passes" >"$csv"
printf '%-6s %-8s %-6s %10s %9s %16s %7s\n' terms "σ²" solver iterations seconds evaluations passes
for terms in $terms_list; do
  hyper_file "$terms" "$work/hyper.json"
  for noise in $levels; do
    for solver in $solvers; do
      "$gpstream" train "$work/rows.h5" --no-standardise --hyper "$work/hyper.json" --noise-var "$noise" \
        --solver "$solver" -o "$work/model.h5" --force >"$work/train.txt" 2>&1
      line=$(tr '\r' '\n' <"$work/train.txt" | grep '^train: converged after\|^train: stopped' | tail -1)
      iterations=$(echo "$line" | sed -n 's/.* after \([0-9,]*\) iterations.*/\1/p' | tr -d ,)
      seconds=$(echo "$line" | sed -n 's/.* iterations in \([0-9.]*\) s.*/\1/p')
      evaluations=$("$gpstream" info "$work/model.h5" | sed -n 's/.* \([0-9,]*\) kernel evaluations.*/\1/p' | tr -d ,)
      passes=$(awk -v e="$evaluations" -v n="$rows" 'BEGIN { printf "%.1f", e / (n * n) }')
      printf '%-6s %-8s %-6s %10s %9s %16s %7s\n' "$terms" "$noise" "$solver" "$iterations" "$seconds" \
        "$evaluations" "$passes"
      echo "$rows,$terms,$noise,$solver,$iterations,$seconds,$evaluations,$passes" >>"$csv"
    done
  done
done
echo "wrote $csv"
