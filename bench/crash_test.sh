#!/usr/bin/env bash
# Crash test: kills `gpstream train` at N random instants (SIGKILL, SIGINT,
# SIGTERM or SIGHUP, drawn at random), resumes each run with the resume
# command the tool itself printed (at launch, or on the interrupt), resuming
# again if that run is killed too, and checks that every final model's α is
# bitwise equal to an uninterrupted run's. A run killed before its first
# checkpoint is relaunched with its original command (nothing was saved).
# Usage: bench/crash_test.sh [N=50]   (results: out/bench/crash_test.{log,csv})
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-50}"
"$root/scripts/install-deps.sh"
BUILD_TARGET=gpstream "$root/scripts/build.sh"
gpstream="$root/build/tools/gpstream"
out="$root/out/bench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
log="$out/crash_test.log"
csv="$out/crash_test.csv"

# A job of a few seconds with a frequent checkpoint, so that kills land
# everywhere: in iterations, in checkpoint writes, in the final model write.
"$gpstream" generate friedman1 --rows 4000 --seed 3 -q -o "$work/train.h5"
job=(train "$work/train.h5" --active-set 5 --candidates 10 --tol 1e-6
     --lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039)
alpha() { h5dump -d /alpha -b LE -o "$2" "$1" >/dev/null; }

start=$(date +%s.%N)
"$gpstream" "${job[@]}" -q -o "$work/reference.h5"
seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
alpha "$work/reference.h5" "$work/reference.bin"

{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%F)"
  echo "uninterrupted run: ${seconds} s; $runs runs each killed at a random instant in [0, ${seconds}] s"
} | tee "$log"
echo "run,signal,delay_s,interruptions,exit_codes,bitwise_equal" > "$csv"

signals=(KILL KILL INT TERM HUP)
equal=0
for run in $(seq 1 "$runs"); do
  dir="$work/run$run"
  mkdir -p "$dir"
  signal=${signals[$((RANDOM % ${#signals[@]}))]}
  delay=$(awk -v s="$RANDOM" -v t="$seconds" 'BEGIN { srand(s); printf "%.3f", rand() * t }')
  "$gpstream" "${job[@]}" -o "$dir/model.h5" --checkpoint "$dir/run.ckpt" --checkpoint-every 0.05 2>"$dir/err0" &
  pid=$!
  sleep "$delay"
  kill "-$signal" "$pid" 2>/dev/null || true
  code=0; { wait "$pid"; } 2>/dev/null || code=$?
  codes="$code"
  interruptions=1
  attempt=0
  # Resume until the model exists; a resumed run is interrupted too, once in three.
  while [ ! -f "$dir/model.h5" ]; do
    attempt=$((attempt + 1))
    if [ "$attempt" -gt 10 ]; then echo "run $run: no model after 10 attempts" | tee -a "$log"; break; fi
    err="$dir/err$((attempt - 1))"
    # The command the tool printed: on the interrupt ("Resume with:"), else at launch.
    command=$(grep -A1 "Resume with:" "$err" | tail -1 | sed 's/^ *gpstream //' || true)
    if [ -z "$command" ]; then
      command=$(grep -o "resume it with: gpstream .*" "$err" | sed 's/^resume it with: gpstream //' || true)
    fi
    if [ -z "$command" ] || [ ! -f "$dir/run.ckpt" ]; then
      # Killed before the launch line or the first checkpoint: start the job again.
      eval "set -- $(printf '%q ' "${job[@]}") -o $(printf '%q' "$dir/model.h5") --checkpoint $(printf '%q' "$dir/run.ckpt") --checkpoint-every 0.05"
    else
      eval "set -- $command"
    fi
    "$gpstream" "$@" 2>"$dir/err$attempt" &
    pid=$!
    if [ $((RANDOM % 3)) -eq 0 ]; then
      sleep "$(awk -v s="$RANDOM" -v t="$seconds" 'BEGIN { srand(s); printf "%.3f", rand() * t / 2 }')"
      kill "-${signals[$((RANDOM % ${#signals[@]}))]}" "$pid" 2>/dev/null || true
      interruptions=$((interruptions + 1))
    fi
    code=0; { wait "$pid"; } 2>/dev/null || code=$?
    codes="$codes/$code"
  done
  same=no
  if [ -f "$dir/model.h5" ]; then
    alpha "$dir/model.h5" "$dir/alpha.bin"
    if cmp -s "$work/reference.bin" "$dir/alpha.bin"; then same=yes; equal=$((equal + 1)); fi
  fi
  echo "$run,$signal,$delay,$interruptions,$codes,$same" >> "$csv"
  printf 'run %2d: SIG%-4s at %6.3f s, %d interruption(s), exit codes %-12s bitwise equal: %s\n' \
    "$run" "$signal" "$delay" "$interruptions" "$codes" "$same" | tee -a "$log"
  rm -rf "$dir"
done
echo "$equal/$runs resumed runs bitwise equal to the uninterrupted run" | tee -a "$log"
[ "$equal" -eq "$runs" ]
