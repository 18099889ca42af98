#!/usr/bin/env bash
# How training scales with cores (issue 48): the default `train` timed once
# at every thread count from 1 to all cores — kin40k to convergence (30,000
# rows, shared hyperparameters; when ../shared/data is there) and Friedman1
# 1M rows for ITERATIONS_1M iterations — each run whole (wall time) and
# phase by phase (`train --profile`: engine/core/phase_times.h). Amdahl's
# law T(p) = s + w/p is fitted by least squares through every point (not
# two), for the run and for each phase: s is the serial time no core count
# removes, s/(s + w) the serial fraction, s + w/16 and s + w/64 the
# projections. α is the same bits at every thread count (tested), so every
# run does the same iterations.
#
# Prints the table and writes out/bench/thread_scaling.csv (one row per run)
# and out/bench/thread_scaling_fit.csv (one row per dataset and phase).
#
# Usage: [THREADS="1 2 4 8 16"] [GPSTREAM=path] [GPSTREAM_DATA=dir] [OUT_DIR=dir]
#        bench/run_thread_scaling.sh [ITERATIONS_1M]
# (GPSTREAM: a gpstream binary to time instead of building one — the portable
# build bench/pack_portable.sh makes, on another machine; GPSTREAM_DATA: where
# kin40k_train.csv and hyper/kin40k.json are, default ../shared/data.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
iterations_1m="${1:-40}"
gpstream="${GPSTREAM:-}"
if [ -z "$gpstream" ]; then
  "$root/scripts/install-deps.sh"
  BUILD_TARGET=gpstream "$root/scripts/build.sh"
  gpstream="$root/build/tools/gpstream"
fi
cores="$(nproc)"
threads="${THREADS:-$(seq -s ' ' 1 "$cores")}"
out="${OUT_DIR:-$root/out/bench}"
data="$out/scale-data"  # shared with run_scale_bench.sh
mkdir -p "$data"
csv="$out/thread_scaling.csv"
fit_csv="$out/thread_scaling_fit.csv"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "machine: $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $("$gpstream" --version); $(date -u +%F)"
echo "dataset,threads,iterations,seconds,ms_per_iteration,phases" >"$csv"
echo "dataset,phase,serial_ms,parallel_ms_at_1,serial_fraction,projected_16_ms,projected_64_ms" >"$fit_csv"

# run DATASET_LABEL THREADS [train options...]: one whole run, timed; a line of the CSV.
run() {
  local label="$1" count="$2"
  shift 2
  local start end
  start="$(date +%s.%N)"
  "$gpstream" train -o "$work/model.h5" --force -q --profile --threads "$count" "$@" 2>"$work/err.txt"
  end="$(date +%s.%N)"
  # "train: profile, ms per iteration over N iterations: a 0.1, b 0.2; the rest 0.3; in all 4.5"
  awk -v label="$label" -v threads="$count" -v start="$start" -v end="$end" '
    /^train: profile/ {
      match($0, /over [0-9]+ iterations/); iterations = substr($0, RSTART + 5, RLENGTH - 16)
      line = $0; sub(/^[^:]*: [^:]*: /, "", line); gsub(/; /, ", ", line); gsub(/in all/, "all", line)
      n = split(line, parts, ", ")
      phases = ""
      for (k = 1; k <= n; ++k) {
        value = parts[k]; sub(/.* /, "", value); name = parts[k]; sub(/ [^ ]*$/, "", name); gsub(/ /, "_", name)
        phases = phases (k > 1 ? ";" : "") name "=" value
        if (name == "all") all = value
      }
      printf "%s,%d,%d,%.2f,%s,%s\n", label, threads, iterations, end - start, all, phases
    }' "$work/err.txt" | tee -a "$csv"
}

# fit LABEL: Amdahl through every run of LABEL, for the iteration and for each phase.
fit() {
  awk -F, -v label="$1" '
    $1 == label {
      p = $2; x = 1 / p
      add("iteration", x, $5)
      n = split($6, parts, ";")
      for (k = 1; k <= n; ++k) { split(parts[k], pair, "="); if (pair[1] != "all") add(pair[1], x, pair[2]) }
    }
    function add(name, x, y) {
      if (!(name in count)) order[++names] = name
      count[name]++; sx[name] += x; sy[name] += y; sxx[name] += x * x; sxy[name] += x * y
    }
    END {
      for (k = 1; k <= names; ++k) {
        name = order[k]; c = count[name]
        den = c * sxx[name] - sx[name] * sx[name]
        w = den > 0 ? (c * sxy[name] - sx[name] * sy[name]) / den : 0
        s = (sy[name] - w * sx[name]) / c
        if (s < 0) { s = 0; w = sxy[name] / sxx[name] }
        if (w < 0) { w = 0; s = sy[name] / c }
        printf "%s,%s,%.4f,%.4f,%.3f,%.4f,%.4f\n", label, name, s, s + w, (s + w > 0 ? s / (s + w) : 0), s + w / 16, s + w / 64
      }
    }' "$csv" | tee -a "$fit_csv"
}

shared="${GPSTREAM_DATA:-$root/../shared/data}"
if [ -f "$shared/kin40k_train.csv" ]; then
  [ -f "$data/kin40k.h5" ] || "$gpstream" convert "$shared/kin40k_train.csv" -o "$data/kin40k.h5" -q
  for count in $threads; do
    run kin40k "$count" "$data/kin40k.h5" --hyper "$shared/hyper/kin40k.json"
  done
  fit kin40k
fi
[ -f "$data/friedman1_1m.h5" ] || "$gpstream" generate friedman1 --rows 1000000 --seed 3 -q -o "$data/friedman1_1m.h5"
for count in $threads; do
  run friedman1_1m "$count" "$data/friedman1_1m.h5" --max-iter "$iterations_1m" \
    --lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039
done
fit friedman1_1m
echo "wrote $csv and $fit_csv"
