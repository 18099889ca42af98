#!/usr/bin/env bash
# What a batch's shape and the active set's size cost the gbcd variance route
# on heaton_sim's default model (the slow case of issue 47: matern12, ℓ ≈ 50
# grid cells, σ² = 0.0046 against s² = 0.52), at the default tolerance, one
# batch each. The rows of a batch share each iteration's active set, so rows
# that lie together need fewer iterations. Batches:
#  - a strip: 512 consecutive rows of the test file (rows 20,001–20,512: the
#    file is in grid order, so a band a few cells tall across the domain) —
#    what `predict` solves now, batch after batch;
#  - tiles: the 256, 512 and 1,024 test rows nearest (in standardised
#    inputs) to the strip's middle row.
# Each at the active set sizes ACTIVE_SETS (m; default 500 1000 2000), and
# the 1,024-row tile also at 125, 250 and 4,000; then bcef's default model
# (matern12 in 3 inputs) on the first 1,024 rows of run_model_bench.sh's
# test sample, when out/bench/model/bcef/all.h5 is there.
# Prints rows, m, iterations, seconds and milliseconds a row, and what all
# 44,431 heaton test rows would take at that rate; appends to
# out/bench/variance_batches.csv. The heaton model is run_model_bench.sh's
# "all" (the default path), trained when missing (~6 minutes).
#
#   bench/run_variance_batches.sh      ACTIVE_SETS="500 1000 2000"   GPSTREAM=path/to/gpstream
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GPSTREAM_DATA:-$root/../shared/data}"
test -f "$data/heaton_sim_test.csv" || { echo "run_variance_batches.sh: needs $data/heaton_sim_*.csv" >&2; exit 2; }
[ -n "${GPSTREAM:-}" ] || [ -x "$root/build/tools/gpstream" ] || BUILD_TARGET=gpstream "$root/scripts/build.sh" "$root/build"
gpstream="${GPSTREAM:-$root/build/tools/gpstream}"
work="$root/out/bench/model/heaton_sim"
csv="$root/out/bench/variance_batches.csv"
active_sets="${ACTIVE_SETS:-500 1000 2000}"
mkdir -p "$work"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
[ -f "$csv" ] || echo "model,batch,rows,active_set,iterations,seconds,ms_per_row,all_heaton_test_rows_minutes" >"$csv"
[ -f "$work/train.h5" ] || "$gpstream" convert "$data/heaton_sim_train.csv" -o "$work/train.h5" -q
model="$work/all.h5"
[ -f "$model" ] || "$gpstream" train "$work/train.h5" --learn-hyper -o "$model" --save-hyper "$work/all.json" -q
/usr/bin/python3 - "$data/heaton_sim_test.csv" "$work" <<'PY'
import sys
import numpy as np
rows = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
x = rows[:, :2]
z = (x - x.mean(0)) / x.std(0)
np.savetxt(f"{sys.argv[2]}/batch-strip-512.csv", rows[20000:20512], delimiter=",", header="x1,x2,y", comments="",
           fmt="%.10g")
distance = ((z - z[20256]) ** 2).sum(1)
for size in (256, 512, 1024):
    chosen = np.sort(np.argsort(distance)[:size])
    np.savetxt(f"{sys.argv[2]}/batch-tile-{size}.csv", rows[chosen], delimiter=",", header="x1,x2,y",
               comments="", fmt="%.10g")
PY
total=$(($(wc -l <"$data/heaton_sim_test.csv") - 1))
printf "%-10s %-10s %6s %6s %10s %9s %9s %22s\n" model batch rows m iterations seconds ms/row "all $total rows (min)"
# run MODEL NAME ROWS.csv M: one batch by the gbcd route.
run() {
  local log="$work/batch-$2-$4.log"
  "$gpstream" predict "$1" "$3" -o "$work/batch.out.csv" --force --variance --variance-method gbcd --variance-active-set "$4" \
    --batch-rows 1024 >"$log" 2>&1
  local line rows seconds iterations per_row minutes name
  name=$(basename "$(dirname "$1")")
  line=$(grep "variances by gbcd in" "$log")
  rows=$(echo "$line" | grep -o "predict: [0-9,]* rows" | grep -o "[0-9,]*" | tr -d ,)
  seconds=$(echo "$line" | grep -o "gbcd in [0-9.]* s" | awk '{print $3}')
  iterations=$(echo "$line" | grep -o "[0-9]* iterations" | awk '{print $1}')
  per_row=$(awk -v s="$seconds" -v r="$rows" 'BEGIN {printf "%.1f", 1000 * s / r}')
  minutes=-
  [ "$name" = heaton_sim ] && minutes=$(awk -v s="$seconds" -v r="$rows" -v t="$total" 'BEGIN {printf "%.0f", s / r * t / 60}')
  printf "%-10s %-10s %6s %6s %10s %9s %9s %22s\n" "$name" "$2" "$rows" "$4" "$iterations" "$seconds" "$per_row" "$minutes"
  echo "$name,$2,$rows,$4,$iterations,$seconds,$per_row,$minutes" >>"$csv"
}
for batch in strip-512 tile-256 tile-512 tile-1024; do
  sizes="$active_sets"
  [ "$batch" = tile-1024 ] && sizes="125 250 $active_sets 4000"
  for m in $sizes; do run "$model" "$batch" "$work/batch-$batch.csv" "$m"; done
done
bcef="$root/out/bench/model/bcef"
if [ -f "$bcef/all.h5" ] && [ -f "$bcef/sample.csv" ]; then
  head -n 1025 "$bcef/sample.csv" >"$bcef/sample-1024.csv"
  for m in $active_sets; do run "$bcef/all.h5" sample-1024 "$bcef/sample-1024.csv" "$m"; done
fi
