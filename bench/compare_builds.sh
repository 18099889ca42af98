#!/usr/bin/env bash
# Two packed builds (bench/pack_portable.sh) timed against each other on one
# machine: kin40k's default `train` (30,000 rows, the shared hyperparameters,
# packed with the build) at each thread count, the builds alternated REPEATS
# times so that a machine's drift falls on both, each run whole and by phase
# (`train --profile`), and their α compared bit for bit. How the worker
# team's 16-core figures in docs/benchmarks.md were taken.
#
#   bench/compare_builds.sh BEFORE.tar.xz AFTER.tar.xz [THREADS="16 8"] [REPEATS=2] [OUT_DIR=dir]
#
# Writes OUT_DIR/compare_builds.csv (build, threads, seconds, profile) and
# prints whether every α equals the first run's. (A build packed before
# 2026-11-28 runs its packed glibc loader by name, which failed on an Ubuntu
# 24.04 VM: pack it again from its commit.)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BEFORE.tar.xz AFTER.tar.xz" >&2; exit 2; }
threads="${THREADS:-16 8}"
repeats="${REPEATS:-2}"
out="${OUT_DIR:-$PWD}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/before" "$work/after"
tar -C "$work/before" -xf "$1"
tar -C "$work/after" -xf "$2"
data="$work/after/gpstream-portable/data"
"$work/after/gpstream-portable/bin/gpstream" convert "$data/kin40k_train.csv" -o "$work/kin40k.h5" -q
csv="$out/compare_builds.csv"
echo "build,threads,seconds,profile" >"$csv"
run=0
for count in $threads; do
  for _ in $(seq "$repeats"); do
    for build in before after; do
      run=$((run + 1))
      start="$(date +%s.%N)"
      "$work/$build/gpstream-portable/bin/gpstream" train "$work/kin40k.h5" --hyper "$data/hyper/kin40k.json" \
        -o "$work/model_$run.h5" -q --profile --threads "$count" 2>"$work/err"
      end="$(date +%s.%N)"
      profile="$(grep 'profile' "$work/err" | sed 's/.*iterations: //')"
      echo "$build,$count,$(awk "BEGIN { print $end - $start }"),\"$profile\"" | tee -a "$csv"
    done
  done
done
# α of every run against the first (h5dump from the HDF5 tools, else Python's h5py).
for model in "$work"/model_*.h5; do
  if command -v h5dump >/dev/null; then
    h5dump -d /alpha -b LE -o "$model.alpha" "$model" >/dev/null
  else
    python3 -c "import h5py, sys; open(sys.argv[2], 'wb').write(h5py.File(sys.argv[1], 'r')['alpha'][()].tobytes())" \
      "$model" "$model.alpha"
  fi
  cmp -s "$work/model_1.h5.alpha" "$model.alpha" && same=equal || same=DIFFERENT
  echo "alpha of $(basename "$model"): $same"
done
echo "wrote $csv"
