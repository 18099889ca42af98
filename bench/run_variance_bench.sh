#!/usr/bin/env bash
# Variances of whole test sets at scale (issue 30), as a user runs them:
#  - bcef (105,504 training rows, 83,213 test rows; the model `train
#    --learn-hyper` learns, the default path): `predict --variance` at
#    --variance-tol 1e-2 and 1e-3 (the route auto picks), and the error on
#    1,000 sampled test rows against the gbcd route at a per-row bound of 1e-6;
#  - kin40k (30,000 / 10,000, the shared hyperparameters): the cholesky route
#    with K̄'s factor in memory (the default budget) and with `--memory 2G`
#    (K̄'s 6.7 GiB factor on disk), and the largest difference between them;
#  - the means' rate, test rows × training rows per second, against a
#    training iteration's kernel evaluations per second.
# Needs ../shared/data. Prints the figures and writes out/bench/variance_scale.csv.
# Usage: bench/run_variance_bench.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$root/../shared/data"
test -d "$shared" || { echo "run_variance_bench.sh: needs $shared (bcef, kin40k)" >&2; exit 2; }
"$root/scripts/install-deps.sh"
BUILD_TARGET=gpstream "$root/scripts/build.sh"
gpstream="$root/build/tools/gpstream"
out="$root/out/bench"
work="$out/variance-data"  # models kept between runs
mkdir -p "$work"
csv="$out/variance_scale.csv"
python=/usr/bin/python3

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
echo "dataset,training_rows,test_rows,memory,variance_tol,route,seconds,peak_mib,largest_relative_error,checked_against" >"$csv"

# timed LOG COMMAND...: runs it, keeping its stderr in LOG; prints "seconds peak_mib".
timed() {
  local log="$1"
  shift
  /usr/bin/time -f "%e %M" -o "$log.time" "$@" 2>"$log"
  awk '{ printf "%s %.0f\n", $1, $2 / 1024 }' "$log.time"
}

# largest_error A.csv B.csv [ROWS.npy]: max |var_a − var_b| / var_b (rows of A at ROWS of B, when given).
largest_error() {
  "$python" - "$@" <<'EOF'
import sys
import numpy as np
a = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, usecols=1)
b = np.loadtxt(sys.argv[2], delimiter=",", skiprows=1, usecols=1)
if len(sys.argv) > 3:
    a = a[np.load(sys.argv[3])]
print(f"{np.max(np.abs(a - b) / b):.3g}")
EOF
}

# route LOG: the route predict took, as it says.
route() { grep -o "variances by [a-z]*" "$1" | head -1 | cut -d' ' -f3; }

# --- bcef
if [ ! -f "$work/bcef-model.h5" ]; then
  "$gpstream" convert "$shared/bcef_train.csv" -o "$work/bcef-train.h5" -q --force
  "$gpstream" convert "$shared/bcef_test.csv" -o "$work/bcef-test.h5" -q --force
  "$gpstream" train "$work/bcef-train.h5" --learn-hyper --save-hyper "$work/bcef-hyper.json" \
    -o "$work/bcef-model.h5" --force -q
fi
"$python" - "$shared/bcef_test.csv" "$work" <<'EOF'
import sys
import numpy as np
test = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
rows = np.sort(np.random.default_rng(30).choice(len(test), 1000, replace=False))
np.save(f"{sys.argv[2]}/bcef-sample.npy", rows)
np.savetxt(f"{sys.argv[2]}/bcef-sample.csv", test[rows], delimiter=",", header="x1,x2,x3,y", comments="")
EOF
"$gpstream" convert "$work/bcef-sample.csv" -o "$work/bcef-sample.h5" -q --force
read -r seconds peak < <(timed "$work/reference.log" "$gpstream" predict "$work/bcef-model.h5" "$work/bcef-sample.h5" \
  -o "$work/bcef-reference.csv" --force --variance --variance-method gbcd --variance-tol 1e-6)
echo "bcef reference: 1,000 sampled test rows by gbcd at a per-row bound of 1e-6 in $seconds s"
for tolerance in 1e-2 1e-3; do
  read -r seconds peak < <(timed "$work/bcef-$tolerance.log" "$gpstream" predict "$work/bcef-model.h5" \
    "$work/bcef-test.h5" -o "$work/bcef-$tolerance.csv" --force --variance --variance-tol "$tolerance")
  error="$(largest_error "$work/bcef-$tolerance.csv" "$work/bcef-reference.csv" "$work/bcef-sample.npy")"
  echo "bcef: 83,213 variances at --variance-tol $tolerance by $(route "$work/bcef-$tolerance.log") in $seconds s" \
    "(peak $peak MiB); largest relative error on the 1,000 sampled rows $error"
  grep "variances by" "$work/bcef-$tolerance.log" | head -1
  echo "bcef,105504,83213,default,$tolerance,$(route "$work/bcef-$tolerance.log"),$seconds,$peak,$error,gbcd 1e-6 on 1000 sampled rows" >>"$csv"
done

# --- kin40k
if [ ! -f "$work/kin40k-model.h5" ]; then
  "$gpstream" convert "$shared/kin40k_train.csv" -o "$work/kin40k-train.h5" -q --force
  "$gpstream" convert "$shared/kin40k_test.csv" -o "$work/kin40k-test.h5" -q --force
  "$gpstream" train "$work/kin40k-train.h5" --hyper "$shared/hyper/kin40k.json" -o "$work/kin40k-model.h5" --force -q
fi
read -r seconds peak < <(timed "$work/kin40k-memory.log" "$gpstream" predict "$work/kin40k-model.h5" \
  "$work/kin40k-test.h5" -o "$work/kin40k-memory.csv" --force --variance)
echo "kin40k: 10,000 variances, factor in memory, in $seconds s (peak $peak MiB)"
echo "kin40k,30000,10000,default,1e-3,cholesky in memory,$seconds,$peak,0,itself" >>"$csv"
read -r seconds peak < <(timed "$work/kin40k-2G.log" "$gpstream" predict "$work/kin40k-model.h5" \
  "$work/kin40k-test.h5" -o "$work/kin40k-2G.csv" --force --variance --memory 2G)
error="$(largest_error "$work/kin40k-2G.csv" "$work/kin40k-memory.csv")"
grep "variances by" "$work/kin40k-2G.log" | head -1
echo "kin40k: --memory 2G in $seconds s (peak $peak MiB); largest relative difference from the factor in memory $error"
echo "kin40k,30000,10000,2G,1e-3,$(route "$work/kin40k-2G.log") (factor on disk),$seconds,$peak,$error,cholesky in memory" >>"$csv"

# --- means against a training iteration (kernel entries per second)
means="$(grep -o "means in [0-9.]* s" "$work/bcef-1e-2.log" | head -1 | awk '{print $3}')"
"$gpstream" train "$work/bcef-train.h5" --hyper "$work/bcef-hyper.json" -o "$work/throwaway.h5" --force \
  --max-iter 30 --log "$work/train.csv" -q
training_rate="$(awk -F, 'NR > 1 { e = $5; s = $2 } END { printf "%.3g", e / s }' "$work/train.csv")"
means_rate="$(awk -v s="$means" 'BEGIN { printf "%.3g", 83213 * 105504 / s }')"
echo "bcef means: 83,213 x 105,504 in $means s = $means_rate kernel entries/s; a training iteration: $training_rate"
echo "bcef,105504,83213,default,,means,$means,,,training iteration $training_rate entries/s; means $means_rate" >>"$csv"
echo "wrote $csv"
