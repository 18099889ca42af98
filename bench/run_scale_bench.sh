#!/usr/bin/env bash
# Scale benchmark: streamed against resident GBCD iterations on Friedman1 2M
# and 10M rows, and the kernel-column cache (off / ram / auto) on kin40k, a
# 256-input set and Friedman1 1M. Every figure comes from the training log
# (seconds per iteration, cache hits) and GNU time (peak resident memory);
# the table is printed and written to out/bench/scale.csv.
# Usage: bench/run_scale_bench.sh [--quick]   (--quick: 2M rows only, fewer iterations)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0
[ "${1:-}" = "--quick" ] && quick=1
"$root/scripts/install-deps.sh"
BUILD_TARGET=gpstream "$root/scripts/build.sh"
gpstream="$root/build/tools/gpstream"
out="$root/out/bench"
data="$out/scale-data"  # generated datasets, kept between runs (several GB at full size)
mkdir -p "$data"
csv="$out/scale.csv"
log="$out/scale.log"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Friedman1's reference hyperparameters (../shared/data/hyper/friedman1.json, rounded), as the tests use them.
friedman_hyper=(--lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039)

generate_friedman() {  # rows file
  [ -f "$2" ] || "$gpstream" generate friedman1 --rows "$1" --seed 3 -q -o "$2"
}

# run LABEL DATASET ITERATIONS [train options...]: one training run; appends a CSV row.
run() {
  local label="$1" dataset="$2" iterations="$3"
  shift 3
  local limit=()
  [ "$iterations" -gt 0 ] && limit=(--max-iter "$iterations")
  /usr/bin/time -f "%M" -o "$work/rss" "$gpstream" train "$dataset" -o "$work/model.h5" --force -q \
    --log "$work/log.csv" "${limit[@]}" "$@" 2>"$work/err" || { cat "$work/err"; return 1; }
  # Seconds per iteration after the first (which also gathers its candidates and fills pages), hit rate overall.
  awk -F, -v label="$label" -v rss="$(cat "$work/rss")" -v options="$*" '
    NR == 3 { first = $2 }
    NR > 1 { iterations = $1; seconds = $2; lookups = $7; hits = $8 }
    END {
      per = iterations > 1 ? (seconds - first) / (iterations - 1) : seconds
      rate = lookups > 0 ? sprintf("%.0f%%", 100 * hits / lookups) : "-"
      printf "%s,%d,%.2f,%.3f,%s,%.0f,\"%s\"\n", label, iterations, seconds, per, rate, rss / 1024, options
    }' "$work/log.csv" | tee -a "$csv"
  grep -o "kernel-column cache[^;]*" "$work/err" | head -1 | sed 's/^/    /' || true
}

{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
} | tee "$log"
echo "run,iterations,seconds,seconds_per_iteration,cache_hits,peak_rss_mib,options" | tee "$csv"
{
  # 1. Streaming = resident: the same iterations with X in memory and streamed from the file.
  iterations=5
  [ "$quick" = 1 ] && iterations=3
  generate_friedman 2000000 "$data/friedman1_2m.h5"
  run friedman1_2m_resident "$data/friedman1_2m.h5" "$iterations" "${friedman_hyper[@]}" --memory 2G
  run friedman1_2m_streamed "$data/friedman1_2m.h5" "$iterations" "${friedman_hyper[@]}" --memory 256M
  if [ "$quick" = 0 ]; then
    generate_friedman 10000000 "$data/friedman1_10m.h5"
    run friedman1_10m_resident "$data/friedman1_10m.h5" 3 "${friedman_hyper[@]}" --memory 6G
    run friedman1_10m_streamed "$data/friedman1_10m.h5" 3 "${friedman_hyper[@]}" --memory 640M  # the O(n) vectors alone take 458 MiB
  fi

  # 2. The kernel-column cache: off, in RAM, and what auto chooses.
  if [ -f "$root/../shared/data/kin40k_train.csv" ] && [ "$quick" = 0 ]; then
    [ -f "$data/kin40k.h5" ] || "$gpstream" convert "$root/../shared/data/kin40k_train.csv" -o "$data/kin40k.h5" -q
    for cache in off ram auto; do
      run "kin40k_cache_$cache" "$data/kin40k.h5" 0 --hyper "$root/../shared/data/hyper/kin40k.json" --cache "$cache"
    done
  fi
  # A 256-input set (10,000 rows, y a smooth function of 8 inputs): costly kernel entries.
  if [ ! -f "$data/wide256.h5" ]; then
    awk 'BEGIN {
      srand(7)
      for (l = 0; l < 256; ++l) printf "x%d,", l
      print "y"
      for (i = 0; i < 10000; ++i) {
        a = 0; b = 0
        for (l = 0; l < 256; ++l) {
          x = 2 * rand() - 1
          printf "%.9g,", x
          if (l < 4) a += x; else if (l < 8) b += x
        }
        printf "%.9g\n", sin(3 * a) + 0.5 * cos(2 * b) + 0.1 * (rand() + rand() + rand() - 1.5)
      }
    }' >"$work/wide256.csv"
    "$gpstream" convert "$work/wide256.csv" -o "$data/wide256.h5" -q
  fi
  wide_iterations=200
  [ "$quick" = 1 ] && wide_iterations=60
  for cache in off ram auto; do
    run "wide256_cache_$cache" "$data/wide256.h5" "$wide_iterations" --kernel se --lengthscales 8 --noise-var 0.01 \
      --cache "$cache"
  done
  if [ "$quick" = 0 ]; then
    generate_friedman 1000000 "$data/friedman1_1m.h5"
    for cache in off ram; do
      run "friedman1_1m_cache_$cache" "$data/friedman1_1m.h5" 20 "${friedman_hyper[@]}" --cache "$cache"
    done
  fi
} 2>&1 | tee -a "$log"
