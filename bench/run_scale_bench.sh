#!/usr/bin/env bash
# Scale benchmark: streamed against resident GBCD iterations on Friedman1 2M
# and 10M rows; 1M rows in a 1 GiB memory cgroup and 10M rows in 512 MiB,
# interrupted and resumed; the kernel-column cache (off / ram / disk / auto) on
# kin40k, a 256-input set and Friedman1 1M; the time an exact GP on kin40k
# takes to a test RMSE (GBCD by stopping tolerance, and CG). Every figure
# comes from the training log (seconds per iteration, cache hits), GNU time
# (peak resident memory) and predict (test RMSE); the table is printed and
# written to out/bench/scale.csv.
# Usage: bench/run_scale_bench.sh [--quick] [SECTION...]
#   --quick: 2M rows only, fewer iterations; SECTION: streaming, containers
#   (or one of its halves, containers-1m and containers-10m), cache, speed,
#   speed-cg (CG on kin40k: 15 minutes), converge-1m (Friedman1 1M to
#   |g|/|y| <= 1e-3 in a 1 GiB cgroup; resumed where it stopped when run
#   again) (default: all but speed-cg and converge-1m).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0
[ "${1:-}" = "--quick" ] && quick=1 && shift
sections="${*:-streaming containers cache speed}"
want() { [[ " $sections " == *" $1 "* ]]; }
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
  /usr/bin/time -f "%M" -o "$work/rss" "$gpstream" train "$dataset" -o "$work/model.h5" --force \
    --log "$work/log.csv" "${limit[@]}" "$@" 2>"$work/err" || { cat "$work/err"; return 1; }
  # Seconds per iteration after the first (which also gathers its candidates and fills pages), hit rates
  # overall (all hits, and those read back from the disk tier) and the bytes read from disk.
  awk -F, -v label="$label" -v rss="$(cat "$work/rss")" -v options="$*" '
    NR == 3 { first = $2 }
    NR > 1 { iterations = $1; seconds = $2; lookups = $7; hits = $8; disk_hits = $9; disk_bytes = $10 }
    END {
      per = iterations > 1 ? (seconds - first) / (iterations - 1) : seconds
      rate = lookups > 0 ? sprintf("%.0f%%", 100 * hits / lookups) : "-"
      disk = disk_bytes > 0 ? sprintf("%.0f%% (%.1f GB read)", 100 * disk_hits / lookups, disk_bytes / 1e9) : "-"
      printf "%s,%d,%.2f,%.3f,%s,%s,%.0f,\"%s\"\n", label, iterations, seconds, per, rate, disk, rss / 1024, options
    }' "$work/log.csv" | tee -a "$csv"
  # What the run chose for the cache, and why (its header line).
  grep -o "kernel-column cache \(off\|in RAM\).*" "$work/err" | head -1 | sed 's/^/    /' || true
}

# in_memory_cgroup LIMIT_BYTES COMMAND...: runs COMMAND in a new memory cgroup
# (v2 at /sys/fs/cgroup, else v1 at /sys/fs/cgroup/memory; needs root) and
# prints the cgroup's peak usage in MiB to $work/cgroup_peak.
in_memory_cgroup() {
  local limit="$1" group status=0
  shift
  if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    group="/sys/fs/cgroup/gpstream-bench-$$"
    mkdir "$group"
    echo "$limit" >"$group/memory.max"
    echo 0 >"$group/memory.swap.max" 2>/dev/null || true
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$group" "$@" || status=$?
    awk '{ printf "%.0f\n", $1 / 1048576 }' "$group/memory.peak" >"$work/cgroup_peak" 2>/dev/null || echo "?" >"$work/cgroup_peak"
  elif [ -w /sys/fs/cgroup/memory ]; then
    group="/sys/fs/cgroup/memory/gpstream-bench-$$"
    mkdir "$group"
    echo "$limit" >"$group/memory.limit_in_bytes"
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$group" "$@" || status=$?
    awk '{ printf "%.0f\n", $1 / 1048576 }' "$group/memory.max_usage_in_bytes" >"$work/cgroup_peak"
  else
    echo "no writable memory cgroup (run as root on cgroup v1 or v2)" >&2
    return 1
  fi
  rmdir "$group"
  return "$status"
}

{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
} | tee -a "$log"
[ -f "$csv" ] && [ "$sections" != "streaming containers cache speed" ] || \
  echo "run,iterations,seconds,seconds_per_iteration,cache_hits,cache_disk_hits,peak_rss_mib,options" | tee "$csv"
{
  # 1. Streaming = resident: the same iterations with X in memory and streamed from the file.
  iterations=5
  [ "$quick" = 1 ] && iterations=3
  want streaming && generate_friedman 2000000 "$data/friedman1_2m.h5"
  if want streaming; then
    run friedman1_2m_resident "$data/friedman1_2m.h5" "$iterations" "${friedman_hyper[@]}" --memory 2G
    run friedman1_2m_streamed "$data/friedman1_2m.h5" "$iterations" "${friedman_hyper[@]}" --memory 256M
  fi
  if want streaming && [ "$quick" = 0 ]; then
    generate_friedman 10000000 "$data/friedman1_10m.h5"
    run friedman1_10m_resident "$data/friedman1_10m.h5" 3 "${friedman_hyper[@]}" --memory 6G
    run friedman1_10m_streamed "$data/friedman1_10m.h5" 3 "${friedman_hyper[@]}" --memory 640M  # the O(n) vectors alone take 458 MiB
  fi

  # 2. Within a container's memory: Friedman1 1M rows in a 1 GiB cgroup, with the default --memory (read
  #    from the cgroup), for 300 iterations (section 5 runs it to convergence; by the old measure |g|inf was 0.047
  #    after 2,089 iterations, 1,011 s); 10M rows in a 512 MiB cgroup: 30 iterations, SIGTERM, the printed
  #    resume command, 30 more, bitwise equal to 60 uninterrupted iterations.
  if { want containers || want containers-1m; } && [ "$quick" = 0 ]; then
    generate_friedman 1000000 "$data/friedman1_1m.h5"
    in_memory_cgroup $((1 << 30)) /usr/bin/time -f "%M" -o "$work/rss" "$gpstream" train "$data/friedman1_1m.h5" \
      -o "$work/model.h5" --force --tol 1e-3 --max-iter 300 --log "$work/log.csv" "${friedman_hyper[@]}" \
      2>"$work/err"
    grep "memory budget" "$work/err" | sed 's/^/    /'
    awk -F, -v rss="$(cat "$work/rss")" -v peak="$(cat "$work/cgroup_peak")" 'NR > 1 { i = $1; s = $2; g = $4; e = $5 }
      END { printf "friedman1_1m_in_1GiB_cgroup,%d,%.2f,%.3f,-,-,%.0f,\"|g|/|y| %.3g, %.3g kernel evals/s, cgroup peak %s MiB\"\n",
            i, s, s / i, rss / 1024, g, e / s, peak }' "$work/log.csv" | tee -a "$csv"

  fi
  if { want containers || want containers-10m; } && [ "$quick" = 0 ]; then
    generate_friedman 10000000 "$data/friedman1_10m.h5"
    # In a 512 MiB cgroup, with the default --memory (3/4 of the limit), as in a container: the printed
    # resume command carries no --memory, and the resumed run reads the same limit.
    ten=("$data/friedman1_10m.h5" "${friedman_hyper[@]}" -q)
    in_memory_cgroup $((512 << 20)) /usr/bin/time -f "%M" -o "$work/rss_whole" "$gpstream" train "${ten[@]}" \
      -o "$work/whole.h5" --force --max-iter 60
    peaks=$(cat "$work/cgroup_peak")
    rm -f "$work/c.h5"
    in_memory_cgroup $((512 << 20)) /usr/bin/time -f "%M" -o "$work/rss_part" "$gpstream" train "${ten[@]}" \
      -o "$work/resumed.h5" --force --max-iter 60 --checkpoint "$work/c.h5" --log "$work/ten.csv" \
      2>"$work/ten.err" &
    pid=$!
    until [ -f "$work/ten.csv" ] && [ "$(tail -n 1 "$work/ten.csv" | cut -d, -f1)" -ge 30 ] 2>/dev/null; do sleep 0.5; done
    pkill -TERM -f -- "^$gpstream train .*--checkpoint $work/c.h5"  # gpstream itself, not GNU time
    wait "$pid" || true
    peaks="$peaks $(cat "$work/cgroup_peak")"
    resume=$(grep -A1 "Resume with:" "$work/ten.err" | tail -n 1 | sed "s|^ *gpstream |$gpstream |")
    echo "    interrupted at iteration $(tail -n 1 "$work/ten.csv" | cut -d, -f1); resuming with: $resume"
    in_memory_cgroup $((512 << 20)) /usr/bin/time -f "%M" -o "$work/rss_resumed" $resume -q
    peaks="$peaks $(cat "$work/cgroup_peak")"
    h5dump -d /alpha -b LE -o "$work/whole.bin" "$work/whole.h5" >/dev/null
    h5dump -d /alpha -b LE -o "$work/resumed.bin" "$work/resumed.h5" >/dev/null
    equal=$(cmp -s "$work/whole.bin" "$work/resumed.bin" && echo "bitwise equal" || echo "DIFFERENT")
    echo "    peak RSS (KiB): whole $(tail -n 1 "$work/rss_whole"), part $(tail -n 1 "$work/rss_part"), resumed $(tail -n 1 "$work/rss_resumed"); cgroup peaks (MiB): $peaks"
    peak=$(sort -n "$work/rss_whole" "$work/rss_part" "$work/rss_resumed" | tail -n 1)
    echo "friedman1_10m_512MiB_cgroup_sigterm_resume,60,-,-,-,-,$((peak / 1024)),\"alpha $equal to 60 uninterrupted iterations\"" | tee -a "$csv"
  fi

  # 3. The kernel-column cache: off, in RAM, RAM + disk (the disk tier in out/bench/scale-data), and what
  #    auto chooses. The disk runs get a budget whose RAM tier holds a fraction of the columns.
  cache_dir=(--cache-dir "$data")
  if want cache && [ -f "$root/../shared/data/kin40k_train.csv" ] && [ "$quick" = 0 ]; then
    [ -f "$data/kin40k.h5" ] || "$gpstream" convert "$root/../shared/data/kin40k_train.csv" -o "$data/kin40k.h5" -q
    kin40k_hyper=(--hyper "$root/../shared/data/hyper/kin40k.json")
    for cache in off ram auto; do
      run "kin40k_cache_$cache" "$data/kin40k.h5" 0 "${kin40k_hyper[@]}" --cache "$cache"
    done
    # RAM for ~4,000 of the 30,000 columns: 300 iterations each way.
    for cache in off disk auto; do
      dir=()
      [ "$cache" = off ] || dir=("${cache_dir[@]}")
      run "kin40k_2G_cache_$cache" "$data/kin40k.h5" 300 "${kin40k_hyper[@]}" --memory 2G --cache "$cache" "${dir[@]}"
    done
  fi
  # A 256-input set (10,000 rows, y a smooth function of 8 inputs): costly kernel entries.
  if want cache && [ ! -f "$data/wide256.h5" ]; then
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
  wide=(--kernel se --lengthscales 8 --noise-var 0.01)
  want cache && for cache in off ram auto; do
    run "wide256_cache_$cache" "$data/wide256.h5" "$wide_iterations" "${wide[@]}" --cache "$cache"
  done
  # 400 MiB: RAM for ~2,000 of the 10,000 columns.
  want cache && for cache in off ram disk auto; do
    dir=()
    case "$cache" in disk | auto) dir=("${cache_dir[@]}") ;; esac
    run "wide256_400M_cache_$cache" "$data/wide256.h5" "$wide_iterations" "${wide[@]}" --memory 400M \
      --cache "$cache" "${dir[@]}"
  done
  # Greedy bases (sggp, run to the basis size): each basis column is used again in every later step. The
  # last wide256 run gets a budget whose RAM holds under half of the 300 basis columns (132).
  if want cache && [ -f "$root/../shared/data/kin40k_train.csv" ] && [ "$quick" = 0 ]; then
    for cache in off auto; do
      run "kin40k_sggp500_cache_$cache" "$data/kin40k.h5" 0 "${kin40k_hyper[@]}" --model sggp --basis 500 \
        --gap 1e-12 --cache "$cache"
    done
  fi
  want cache && for cache in off auto; do
    run "wide256_sggp300_cache_$cache" "$data/wide256.h5" 0 "${wide[@]}" --model sggp --basis 300 --gap 1e-12 \
      --cache "$cache"
  done
  want cache && run "wide256_sggp300_40M_cache_auto" "$data/wide256.h5" 0 "${wide[@]}" --model sggp --basis 300 \
    --gap 1e-12 --memory 40M --cache auto
  if want cache && [ "$quick" = 0 ]; then
    generate_friedman 1000000 "$data/friedman1_1m.h5"
    for cache in off ram disk; do
      dir=()
      [ "$cache" != disk ] || dir=("${cache_dir[@]}")
      run "friedman1_1m_cache_$cache" "$data/friedman1_1m.h5" 20 "${friedman_hyper[@]}" --cache "$cache" "${dir[@]}"
    done
  fi

  # 5. Friedman1 1M rows driven to |g|/|y| <= 1e-3 inside a 1 GiB cgroup, default --memory: long on two
  #    cores, so the job checkpoints into $data and running this section again resumes it with the command
  #    train prints (after SIGTERM, a crash or a reboot); the row is written once it has converged. Its
  #    kernel evaluations/s compare with the roofline of the hot loop (docs/benchmarks.md); peak RSS is the largest of
  #    its runs.
  if want converge-1m; then
    generate_friedman 1000000 "$data/friedman1_1m.h5"
    job="$data/friedman1_1m_to_1e-3"
    if [ -f "$job.model.h5" ]; then
      echo "    friedman1 1M to 1e-3: done before ($job.model.h5; remove $job.* to run it again)"
    elif [ -f "$job.checkpoint.h5" ]; then
      command=(train --resume "$job.checkpoint.h5")
    else
      command=(train "$data/friedman1_1m.h5" -o "$job.model.h5" --tol 1e-3 --checkpoint "$job.checkpoint.h5"
        --log "$job.log.csv" "${friedman_hyper[@]}")
    fi
    status=0
    if [ ! -f "$job.model.h5" ]; then
      in_memory_cgroup $((1 << 30)) /usr/bin/time -f "%M" -o "$work/rss" "$gpstream" "${command[@]}" -q \
        2>"$work/err" || status=$?
      tail -n 1 "$work/rss" >>"$job.rss"
      cat "$work/err"
    fi
    if [ "$status" = 0 ] && [ -f "$job.model.h5" ]; then
      awk -F, -v rss="$(sort -n "$job.rss" | tail -n 1)" -v peak="$(cat "$work/cgroup_peak")" -v runs="$(wc -l <"$job.rss")" \
        'NR > 1 { i = $1; s = $2; g = $4; e = $5 }
        END { printf "friedman1_1m_to_1e-3_in_1GiB_cgroup,%d,%.2f,%.3f,-,-,%.0f,\"|g|/|y| %.3g, %.3g kernel evals/s, %d run(s) (more than one: resumed), last cgroup peak %s MiB\"\n",
              i, s, s / i, rss / 1024, g, e / s, runs, peak }' "$job.log.csv" | tee -a "$csv"
    else
      echo "    friedman1 1M to 1e-3: stopped (status $status) at $(tail -n 1 "$job.log.csv" | cut -d, -f1,2,4 | tr , ' '); run this section again to resume"
    fi
  fi

  # 4. Speed: an exact GP on kin40k (30,000 rows, shared hyperparameters) to a test RMSE. GBCD's iterates
  #    are the same whatever the tolerance (it only decides where the run stops), so each row is a point on
  #    one trajectory: wall time of the whole command and the test RMSE of its model; then CG.
  if { want speed || want speed-cg; } && [ -f "$root/../shared/data/kin40k_train.csv" ]; then
    [ -f "$data/kin40k.h5" ] || "$gpstream" convert "$root/../shared/data/kin40k_train.csv" -o "$data/kin40k.h5" -q
    [ -f "$data/kin40k_test.h5" ] ||
      "$gpstream" convert "$root/../shared/data/kin40k_test.csv" -o "$data/kin40k_test.h5" -q
    speed_run() {  # LABEL [train options...]
      local label="$1"
      shift
      /usr/bin/time -f "%e %M" -o "$work/time" "$gpstream" train "$data/kin40k.h5" -o "$work/model.h5" --force \
        --hyper "$root/../shared/data/hyper/kin40k.json" --log "$work/log.csv" "$@" 2>"$work/err" ||
        { cat "$work/err"; return 1; }
      "$gpstream" predict "$work/model.h5" "$data/kin40k_test.h5" -o "$work/p.csv" --force 2>"$work/predict.err"
      local rmse
      rmse=$(grep -o "RMSE [0-9.e+-]*" "$work/predict.err" | head -1 | cut -d" " -f2)
      awk -F, -v label="$label" -v wall="$(cut -d" " -f1 "$work/time")" -v rss="$(cut -d" " -f2 "$work/time")" \
        -v rmse="$rmse" -v options="$*" 'NR > 1 { i = $1; s = $2; g = $4 }
        END { printf "%s,%d,%.2f,%.4f,-,-,%.0f,\"wall %.2f s, test RMSE %s, |g|/|y| %.3g; %s\"\n",
              label, i, s, s / i, rss / 1024, wall, rmse, g, options }' "$work/log.csv" | tee -a "$csv"
    }
    want speed && for tol in 1e-2 3e-3 1e-3 3e-4 1e-4; do speed_run "kin40k_gbcd_tol_$tol" --tol "$tol"; done
    want speed-cg && speed_run kin40k_cg_tol_1e-2 --solver cg --tol 1e-2
  fi
} 2>&1 | tee -a "$log"
