#!/usr/bin/env bash
# The README's main command: install, build, and run gpstream on the built-in
# default dataset (Friedman1): generate it as CSV, convert it, describe it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

gpstream="$root/build/tools/gpstream"
work="$root/out/demo"
mkdir -p "$work"
rows="${DEMO_ROWS:-100000}"

echo "== generate $rows Friedman1 rows as CSV"
"$gpstream" generate friedman1 --rows "$rows" --seed 1 -o "$work/friedman1.csv" --force
echo "== convert CSV -> HDF5"
"$gpstream" convert "$work/friedman1.csv" -o "$work/friedman1.h5" --force
echo "== info"
"$gpstream" info "$work/friedman1.h5"
