# Sourced by the bench scripts: what each needs before it measures.
#   bench_gpstream           the gpstream to measure: $GPSTREAM, else this tree's, installed and built first
#   bench_data FILE NAME     the shared datasets' folder ($GPSTREAM_DATA, else ../shared/data) when it
#                            holds FILE; else says NAME is missing and exits 1
bench_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bench_gpstream() {
  if [ -n "${GPSTREAM:-}" ]; then
    echo "$GPSTREAM"
    return
  fi
  "$bench_root/scripts/install-deps.sh" >&2
  BUILD_TARGET=gpstream "$bench_root/scripts/build.sh" >&2
  echo "$bench_root/build/tools/gpstream"
}

bench_data() {
  local shared="${GPSTREAM_DATA:-$bench_root/../shared/data}"
  if [ ! -f "$shared/$1" ]; then
    echo "$2 is not in $shared (GPSTREAM_DATA): nothing to measure" >&2
    exit 1
  fi
  echo "$shared"
}
