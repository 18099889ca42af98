#!/usr/bin/env bash
# The nearest variance route (an upper bound: each test row conditioned on its
# M training rows of highest covariance) against the exact variances, as M
# grows, on the real sets of ../shared/data:
#  - kin40k: the shared hyperparameters (rbf, a smooth kernel in 8 inputs:
#    the hard case), exact variances by the cholesky route;
#  - bcef: the default model (`train --learn-hyper`: matern12, a spatial
#    kernel of short reach), exact variances by the gbcd route at a per-row
#    bound of 1e-6;
#  - heaton_sim: the default model (matern12, ℓ ≈ 50 grid cells, σ² = 0.0046
#    against s² = 0.52: the slow case of issue 47), exact variances by the
#    gbcd route at a per-row bound of 1e-5 on every 15th row of the sample
#    (129 rows spread over the domain; ~3 minutes);
#  - sgemm: the default model (matern32, σ² = 0.0014), whose exact variances
#    this machine cannot give (K̄'s factor: 140 GiB of disk; the gbcd route's
#    pilot batch was not done after 2,758 steps): the bound as M grows.
# The test rows: the fixed sample of bench/run_model_bench.sh (every k-th row,
# ~2,000). For each M: the time, the relative error of var y* (median, 90th
# percentile, largest; never below 0), SNLP and ±2σ coverage.
# The bcef and sgemm models are run_model_bench.sh's "all" (the default path);
# they are trained here when missing (bcef ~7 min, sgemm ~25 min).
#
#   bench/run_nearest_variance_bench.sh [DATASET ...]   (default: kin40k bcef sgemm)
#   NEIGHBOURS="64 256 512 1024 2048"   GPSTREAM=path/to/gpstream (default: build/tools/gpstream)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GPSTREAM_DATA:-$root/../shared/data}"
test -d "$data" || { echo "run_nearest_variance_bench.sh: needs $data" >&2; exit 2; }
[ -n "${GPSTREAM:-}" ] || [ -x "$root/build/tools/gpstream" ] || BUILD_TARGET=gpstream "$root/scripts/build.sh" "$root/build"
gpstream="${GPSTREAM:-$root/build/tools/gpstream}"
python=/usr/bin/python3
neighbours="${NEIGHBOURS:-64 256 512 1024 2048}"
datasets=("$@")
[ ${#datasets[@]} -gt 0 ] || datasets=(kin40k bcef sgemm)
csv="$root/out/bench/nearest_variance.csv"
mkdir -p "$root/out/bench"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
[ -f "$csv" ] || echo "dataset,test_rows,route,neighbours,seconds,peak_mib,median_relative_error,p90_relative_error,largest_relative_error,snlp,coverage" >"$csv"

# errors A.csv [EXACT.csv]: median, 90th percentile and largest (var_a − var_exact) / var_exact, or "- - -".
errors() {
  [ -f "${2:-}" ] || { echo "- - -"; return; }
  "$python" - "$1" "$2" <<'EOF'
import sys
import numpy as np
a = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, usecols=1)
b = np.loadtxt(sys.argv[2], delimiter=",", skiprows=1, usecols=1)
r = (a - b) / b
print(f"{np.median(r):.3g} {np.percentile(r, 90):.3g} {r.max():.3g}")
EOF
}
snlp() { grep -o "training mean) [-0-9.e+]*" "$1" | tail -1 | awk '{print $3}'; }
coverage() { grep -o "mean +- 2 std [0-9.]*" "$1" | tail -1 | awk '{print $5}'; }

printf "%-7s %-9s %6s %9s %9s %9s %9s %9s %8s %8s\n" dataset route M seconds peak_MiB median p90 largest SNLP cover
for dataset in "${datasets[@]}"; do
  work="$root/out/bench/model/$dataset"
  mkdir -p "$work"
  [ -f "$work/train.h5" ] || "$gpstream" convert "$data/${dataset}_train.csv" -o "$work/train.h5" -q
  if [ ! -f "$work/sample.csv" ]; then  # as run_model_bench.sh draws it
    rows=$(($(wc -l <"$data/${dataset}_test.csv") - 1))
    step=$(((rows + 1999) / 2000))
    awk -v step="$step" 'NR == 1 || (NR - 2) % step == 0' "$data/${dataset}_test.csv" >"$work/sample.csv"
  fi
  rows_file="$work/sample.csv"
  if [ "$dataset" = heaton_sim ]; then  # its exact variances cost ~1.3 s a row: every 15th row of the sample
    rows_file="$work/sample-every-15th.csv"
    awk 'NR == 1 || (NR - 2) % 15 == 0' "$work/sample.csv" >"$rows_file"
  fi
  sample_rows=$(($(wc -l <"$rows_file") - 1))
  case "$dataset" in
    kin40k)
      model="$work/shared-hyper.h5"
      [ -f "$model" ] || "$gpstream" train "$work/train.h5" --hyper "$data/hyper/kin40k.json" -o "$model" -q
      exact=(--variance-method cholesky) ;;
    bcef)
      model="$work/all.h5"
      exact=(--variance-method gbcd --variance-tol 1e-6) ;;
    heaton_sim)
      model="$work/all.h5"
      exact=(--variance-method gbcd --variance-tol 1e-5) ;;
    *)
      model="$work/all.h5"
      exact=() ;;
  esac
  [ -f "$model" ] || "$gpstream" train "$work/train.h5" --learn-hyper -o "$model" --save-hyper "$work/all.json" -q
  reference=""
  if [ ${#exact[@]} -gt 0 ]; then
    reference="$work/nearest-exact.csv"
    log="$work/nearest-exact.log"
    /usr/bin/time -f "peak %M KB %e s" "$gpstream" predict "$model" "$rows_file" -o "$reference" --force \
      --variance "${exact[@]}" >"$log" 2>&1
    seconds=$(grep -o "KB [0-9.]* s" "$log" | awk '{print $2}')
    peak=$(($(grep -o "peak [0-9]* KB" "$log" | grep -o "[0-9]*") / 1024))
    route=$(grep -o "variances by [a-z]*" "$log" | head -1 | cut -d' ' -f3)
    printf "%-7s %-9s %6s %9s %9s %9s %9s %9s %8s %8s\n" "$dataset" "$route" - "$seconds" "$peak" 0 0 0 \
      "$(snlp "$log")" "$(coverage "$log")"
    echo "$dataset,$sample_rows,$route (exact),,$seconds,$peak,0,0,0,$(snlp "$log"),$(coverage "$log")" >>"$csv"
  fi
  for m in $neighbours; do
    out="$work/nearest-$m.csv"
    log="$work/nearest-$m.log"
    /usr/bin/time -f "peak %M KB %e s" "$gpstream" predict "$model" "$rows_file" -o "$out" --force --variance \
      --variance-method nearest --neighbours "$m" >"$log" 2>&1
    seconds=$(grep -o "KB [0-9.]* s" "$log" | awk '{print $2}')
    peak=$(($(grep -o "peak [0-9]* KB" "$log" | grep -o "[0-9]*") / 1024))
    read -r median p90 largest < <(errors "$out" "$reference")
    printf "%-7s %-9s %6s %9s %9s %9s %9s %9s %8s %8s\n" "$dataset" nearest "$m" "$seconds" "$peak" "$median" "$p90" \
      "$largest" "$(snlp "$log")" "$(coverage "$log")"
    echo "$dataset,$sample_rows,nearest,$m,$seconds,$peak,$median,$p90,$largest,$(snlp "$log"),$(coverage "$log")" >>"$csv"
  done
done
