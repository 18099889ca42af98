#!/usr/bin/env bash
# Packs gpstream to be timed on another machine (a many-core one with none of
# Debian's packages): a build for a stated baseline, GPSTREAM_ARCH=x86-64-v3
# (AVX2 and FMA: Haswell, Zen and later; without MPI), every shared library
# `ldd` lists — glibc and its loader included, so the host's own do not
# matter — the thread-scaling benchmark and kin40k with its shared
# hyperparameters. About 15 MB as .tar.xz.
#
#   bench/pack_portable.sh                      # writes out/bench/gpstream-portable.tar.xz
#   (there) tar xf gpstream-portable.tar.xz && gpstream-portable/run.sh [THREADS="1 2 4 8 16"]
#   (the results in gpstream-portable/results/: thread_scaling.csv and thread_scaling_fit.csv)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-portable"
out="$root/out/bench"
pack="$out/gpstream-portable"
"$root/scripts/install-deps.sh"
GPSTREAM_ARCH=x86-64-v3 BUILD_TARGET=gpstream "$root/scripts/build.sh" "$build" -DGPSTREAM_MPI=OFF \
  -DGPSTREAM_BUILD_TESTS=OFF -DGPSTREAM_BUILD_BENCH=OFF -DGPSTREAM_PYTHON=OFF
rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/lib" "$pack/data/hyper" "$pack/bench"
cp "$build/tools/gpstream" "$pack/bin/gpstream.real"
# Every library the binary loads, from where this machine resolves it; the loader is run by name.
ldd "$build/tools/gpstream" | awk '/=> \// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' | sort -u |
  while read -r library; do cp -L "$library" "$pack/lib/"; done
loader="$(basename "$(ldd "$build/tools/gpstream" | awk '/ld-linux/ { print $1 }' | tail -1)")"
cat >"$pack/bin/gpstream" <<WRAPPER
#!/bin/sh
# gpstream with the libraries packed beside it (bench/pack_portable.sh).
here="\$(cd "\$(dirname "\$0")/.." && pwd)"
exec "\$here/lib/$loader" --library-path "\$here/lib" "\$here/bin/gpstream.real" "\$@"
WRAPPER
chmod +x "$pack/bin/gpstream"
cp "$root/bench/run_thread_scaling.sh" "$pack/bench/"
shared="${GPSTREAM_DATA:-$root/../shared/data}"
if [ -f "$shared/kin40k_train.csv" ]; then
  cp "$shared/kin40k_train.csv" "$pack/data/"
  cp "$shared/hyper/kin40k.json" "$pack/data/hyper/"
fi
cat >"$pack/run.sh" <<'RUN'
#!/bin/sh
# The thread-scaling benchmark with the packed gpstream; results in results/.
here="$(cd "$(dirname "$0")" && pwd)"
GPSTREAM="$here/bin/gpstream" GPSTREAM_DATA="$here/data" OUT_DIR="$here/results" \
  exec bash "$here/bench/run_thread_scaling.sh" "$@"
RUN
chmod +x "$pack/run.sh"
"$pack/bin/gpstream" --version
tar -C "$out" -cJf "$out/gpstream-portable.tar.xz" gpstream-portable
echo "wrote $out/gpstream-portable.tar.xz ($(du -h "$out/gpstream-portable.tar.xz" | cut -f1))"
