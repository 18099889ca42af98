#!/bin/sh
# Installs the build in BUILD (cmake --install) under a prefix of its own, then builds and runs the consumer
# program against it with find_package(gpstream), as someone else's project would.
# Usage: tests/install/run.sh BUILD_DIR
set -eu
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
prefix="$build/install-test/prefix"
rm -rf "$build/install-test"
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/gpstream"
test -f "$prefix/include/gpstream/api/training.h"
cmake -S "$here" -B "$build/install-test/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/install-test/consumer" >/dev/null
"$build/install-test/consumer/consumer"
"$prefix/bin/gpstream" --version
# The Python package, where the build has it: importable from the installed tree alone.
package="$prefix/lib/python3/dist-packages"
if [ -d "$package/gpstream" ]; then
  (cd / && PYTHONPATH="$package" /usr/bin/python3 -c "import gpstream; print('python', gpstream.__file__)")
fi
