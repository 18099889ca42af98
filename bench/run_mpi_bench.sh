#!/usr/bin/env bash
# Distributed GBCD (mpirun): on Friedman1 1M rows, 20 iterations, the seconds
# per iteration of 1 rank x 2 threads against 2 ranks x 1 thread on this
# machine's two cores (parallel efficiency = the first over the second), and
# what each iteration communicates (rank 0's collectives: calls, bytes, time)
# as P grows to 8 ranks, oversubscribed (their compute then shares two cores:
# only the communication figures mean anything there); then the latency
# and bandwidth of one all-reduce alone (bench_collectives) on 2, 4 and 8
# ranks. Writes out/bench/mpi.csv and mpi_collectives.csv; docs/benchmarks.md's
# model of larger P uses these constants.
# Usage: bench/run_mpi_bench.sh [ITERATIONS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
iterations="${1:-20}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"  # gpstream and bench_collectives
gpstream="$root/build/tools/gpstream"
out="$root/out/bench"
data="$out/scale-data"
mkdir -p "$data"
[ -f "$data/friedman1_1m.h5" ] || "$gpstream" generate friedman1 --rows 1000000 --seed 3 -q -o "$data/friedman1_1m.h5"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # where CI or a container runs as root
hyper=(--lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039)
csv="$out/mpi.csv"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
echo "run,ranks,threads,iterations,seconds_per_iteration,collectives_per_iteration,bytes_per_iteration,communication_ms_per_iteration" | tee "$csv"

# run LABEL RANKS THREADS: one training run of $iterations GBCD iterations.
run() {
  local label="$1" ranks="$2" threads="$3" launcher=()
  [ "$ranks" -gt 1 ] && launcher=(mpirun --oversubscribe -np "$ranks")
  "${launcher[@]}" "$gpstream" train "$data/friedman1_1m.h5" -o "$work/model.h5" --force "${hyper[@]}" \
    --max-iter "$iterations" --threads "$threads" --log "$work/log.csv" 2>"$work/err" || { cat "$work/err"; return 1; }
  local per communication
  # Seconds per iteration after the first (which also reads X in), from the log.
  per=$(awk -F, 'NR == 3 { first = $2 } NR > 1 { n = $1; s = $2 } END { printf "%.4f", (s - first) / (n - 1) }' \
    "$work/log.csv")
  communication=$(tr '\r' '\n' <"$work/err" | grep -o "communication of rank 0: .*" || true)
  local calls bytes ms
  calls=$(sed -E 's/.*: ([0-9,]+) collectives.*/\1/' <<<"$communication" | tr -d ,)
  bytes=$(sed -E 's/.* and ([0-9.]+ [KMG]?i?B) per iteration.*/\1/' <<<"$communication")
  ms=$(sed -E 's/.*\(([0-9.]+) ms and.*/\1/' <<<"$communication")
  [ -n "$communication" ] || { calls=0; bytes=0; ms=0; }
  echo "$label,$ranks,$threads,$iterations,$per,$((calls / iterations)),$bytes,$ms" | tee -a "$csv"
}

run one_rank_two_threads 1 2
run two_ranks_one_thread 2 1
for ranks in 3 4 8; do
  run "oversubscribed_$ranks" "$ranks" 1
done
awk -F, '$1 == "one_rank_two_threads" { a = $5 } $1 == "two_ranks_one_thread" { b = $5 }
  END { printf "parallel efficiency of 2 ranks x 1 thread against 1 rank x 2 threads: %.2f\n", a / b }' "$csv"

# The collectives alone: one all-reduce of 1, 1,024 and an iteration's 359,292 values.
mpirun --oversubscribe -np 2 "$root/build/bench/bench_collectives" | tee "$out/mpi_collectives.csv"
for ranks in 4 8; do
  mpirun --oversubscribe -np "$ranks" "$root/build/bench/bench_collectives" | tail -n +2 | tee -a "$out/mpi_collectives.csv"
done
