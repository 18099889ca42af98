#!/usr/bin/env bash
# Very wide datasets (issue 56, item 8): `convert` and `info` of a CSV of
# ROWS rows x COLUMNS inputs (generated, seeded), their seconds and the
# dataset's size on disk against the bytes of its values. Each build in
# GPSTREAM (space-separated binaries: a build before a change and one after)
# is measured on the same CSV; a run over LIMIT seconds is stopped and
# reported as such.
#
# Prints the table and writes out/bench/wide_dataset.csv.
#
# Usage: [ROWS=3] [COLUMNS=100000] [LIMIT=120] [GPSTREAM="old/gpstream new/gpstream"] [OUT_DIR=dir]
#        bench/run_wide_dataset.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binaries="${GPSTREAM:-}"
if [ -z "$binaries" ]; then
  "$root/scripts/install-deps.sh"
  BUILD_TARGET=gpstream "$root/scripts/build.sh"
  binaries="$root/build/tools/gpstream"
fi
rows="${ROWS:-3}"
columns="${COLUMNS:-100000}"
limit="${LIMIT:-120}"
out="${OUT_DIR:-$root/out/bench}"
mkdir -p "$out"
csv="$out/wide_dataset.csv"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The CSV: a header x1 … xD,y, then rows of uniform values with six decimals (awk's seeded generator).
awk -v rows="$rows" -v columns="$columns" 'BEGIN {
  srand(1);
  for (j = 1; j <= columns; ++j) printf "x%d,", j; print "y";
  for (i = 0; i < rows; ++i) { for (j = 0; j < columns; ++j) printf "%.6f,", rand(); printf "%.6f\n", rand() }
}' >"$work/wide.csv"
values=$(((rows * (columns + 1)) * 8))

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%F)"
echo "CSV: $rows rows x $columns inputs, $(stat -c %s "$work/wide.csv") bytes; values $values bytes as doubles"
echo "binary,version,rows,columns,convert_seconds,info_seconds,file_bytes,value_bytes" >"$csv"
printf '%-40s %12s %12s %14s %10s\n' "binary" "convert s" "info s" "file bytes" "x values"
for binary in $binaries; do
  rm -f "$work/wide.h5"
  start=$(date +%s.%N)
  if timeout "$limit" "$binary" convert "$work/wide.csv" -o "$work/wide.h5" -q; then
    convert=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  else
    convert="over $limit"
  fi
  info="-"
  bytes="-"
  ratio="-"
  if [ -f "$work/wide.h5" ]; then
    start=$(date +%s.%N)
    if timeout "$limit" "$binary" info "$work/wide.h5" >/dev/null; then
      info=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    else
      info="over $limit"
    fi
    bytes=$(stat -c %s "$work/wide.h5")
    ratio=$(awk -v a="$bytes" -v b="$values" 'BEGIN { printf "%.2f", a / b }')
  fi
  version="$("$binary" --version | head -1)"
  printf '%-40s %12s %12s %14s %10s\n' "$binary" "$convert" "$info" "$bytes" "$ratio"
  echo "$binary,$version,$rows,$columns,$convert,$info,$bytes,$values" >>"$csv"
done
echo "wrote $csv"
