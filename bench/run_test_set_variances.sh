#!/usr/bin/env bash
# Every test variance of a model bench set by the default command (issue 47's
# target: heaton_sim's 44,431 in ≤ 10 minutes on 2 cores at the default
# tolerance): `predict MODEL test.h5 --variance`, auto route, timed whole
# (pilot, means, variances), with the route's own report, peak RSS, test RMSE
# (target units), SNLP and ±2σ coverage.
#   bench/run_test_set_variances.sh [SET ...]   (default: heaton_sim)
# Needs the model of bench/run_model_bench.sh (out/bench/model/SET/all.h5 and
# test.h5; heaton_sim's are made here when missing). Prints a line per set
# and appends it to out/bench/test_set_variances.csv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GPSTREAM_DATA:-$root/../shared/data}"
[ -n "${GPSTREAM:-}" ] || [ -x "$root/build/tools/gpstream" ] || BUILD_TARGET=gpstream "$root/scripts/build.sh" "$root/build"
gpstream="${GPSTREAM:-$root/build/tools/gpstream}"
csv="$root/out/bench/test_set_variances.csv"
mkdir -p "$root/out/bench"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
[ -f "$csv" ] || echo "set,test_rows,route,batches,iterations,variance_seconds,wall_seconds,peak_rss_mib,rmse,snlp,coverage" >"$csv"
for set in "${@:-heaton_sim}"; do
  work="$root/out/bench/model/$set"
  if [ "$set" = heaton_sim ] && [ ! -f "$work/all.h5" ]; then
    test -f "$data/heaton_sim_test.csv" || { echo "run_test_set_variances.sh: needs $data/heaton_sim_*.csv" >&2; exit 2; }
    mkdir -p "$work"
    [ -f "$work/train.h5" ] || "$gpstream" convert "$data/heaton_sim_train.csv" -o "$work/train.h5" -q
    [ -f "$work/test.h5" ] || "$gpstream" convert "$data/heaton_sim_test.csv" -o "$work/test.h5" -q
    "$gpstream" train "$work/train.h5" --learn-hyper -o "$work/all.h5" --save-hyper "$work/all.json" -q
  fi
  test -f "$work/all.h5" && test -f "$work/test.h5" || {
    echo "run_test_set_variances.sh: needs $work/all.h5 and test.h5 (bench/run_model_bench.sh $set)" >&2
    exit 2
  }
  log="$work/test-set-variances.log"
  /usr/bin/time -f "wall %e s, peak %M KiB" "$gpstream" predict "$work/all.h5" "$work/test.h5" \
    -o "$work/test-set-variances.csv" --variance --force >"$log" 2>&1
  grep -v "^variance iter" "$log"
  line=$(grep "variances by" "$log" | grep " in ")
  route=$(echo "$line" | grep -o "variances by [a-z]*" | awk '{print $3}')
  rows=$(echo "$line" | grep -o "predict: [0-9,]* rows" | grep -o "[0-9,]*" | tr -d ,)
  seconds=$(echo "$line" | grep -o "by [a-z]* in [0-9.]* s" | awk '{print $4}')
  batches=$(echo "$line" | grep -o "[0-9]* batches" | awk '{print $1}')
  iterations=$(echo "$line" | grep -o "[0-9]* iterations" | awk '{print $1}')
  wall=$(grep -o "wall [0-9.]* s" "$log" | awk '{print $2}')
  peak=$(grep -o "peak [0-9]* KiB" "$log" | awk '{printf "%.0f", $2 / 1024}')
  rmse=$(grep -o "RMSE [0-9.]*" "$log" | head -1 | awk '{print $2}')
  snlp=$(grep -o "SNLP ([^)]*) [-0-9.]*" "$log" | awk '{print $NF}')
  coverage=$(grep -o "coverage of mean +- 2 std [0-9.]*" "$log" | awk '{print $NF}')
  # RMSE in target units: predict prints it over the training targets' standard deviation.
  sd=$(grep -o "the training targets the model was standardised with, [0-9.]*" "$log" | awk '{print $NF}')
  rmse_units=$(awk -v r="$rmse" -v s="${sd:-1}" 'BEGIN {printf "%.4g", r * s}')
  echo "$set: $rows test variances by $route in $seconds s ($wall s in all, peak $peak MiB); RMSE $rmse_units, SNLP $snlp, ±2σ coverage $coverage"
  echo "$set,$rows,$route,${batches:-},${iterations:-},$seconds,$wall,$peak,$rmse_units,$snlp,$coverage" >>"$csv"
done
