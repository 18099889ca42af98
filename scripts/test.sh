#!/usr/bin/env bash
# The README's test command: install, build, and run every test — first a
# Release build, then (unless --no-sanitize) an ASan+UBSan build of the same.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitize=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) sanitize=0 ;;
    *) echo "usage: scripts/test.sh [--no-sanitize]" >&2; exit 2 ;;
  esac
done

"$root/scripts/install-deps.sh"

echo "== Release build and tests"
"$root/scripts/build.sh" "$root/build" -DGPSTREAM_BUILD_TESTS=ON -DGPSTREAM_WERROR=ON
ctest --test-dir "$root/build" -j "$(nproc)" --output-on-failure

echo "== Python package: pip install ./python (the module of the build above), then its tests"
# Debian's Python, whose NumPy and scikit-learn come from apt (not a pyenv or venv first in PATH).
python=/usr/bin/python3
package="$(mktemp -d)"
trap 'rm -rf "$package"' EXIT
GPSTREAM_BUILD_DIR="$root/build" "$python" -m pip install -q --no-build-isolation --no-deps --target "$package" \
  "$root/python" 2>&1 | grep -v "Running pip as the 'root' user" || true
test -f "$package"/gpstream/_gpstream*.so
(cd "$package" && PYTHONPATH="$package" GPSTREAM_BINARY="$root/build/tools/gpstream" \
  "$python" -m pytest -q -p no:cacheprovider "$root/python/tests")
rm -rf "$root/python/build" "$root/python/gpstream.egg-info"

if [ "$sanitize" -eq 1 ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
  # Without MPI: the distributed suite runs in the Release build (mpirun -np 1, 2, 3), and Open MPI's
  # own allocations at exit are not ours for LeakSanitizer to judge.
  BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" "$root/build-sanitize" -DGPSTREAM_SANITIZE=ON \
    -DGPSTREAM_BUILD_TESTS=ON -DGPSTREAM_BUILD_BENCH=OFF -DGPSTREAM_MPI=OFF -DGPSTREAM_PYTHON=OFF
  # Under another OpenBLAS kernel set than the Release run (Prescott: SSE3, runs on
  # every x86-64), so that no test depends on one CPU's rounding.
  OPENBLAS_CORETYPE=Prescott ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$root/build-sanitize" -j "$(nproc)" --output-on-failure
fi
