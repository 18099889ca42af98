#!/usr/bin/env bash
# Packs gpstream to be timed on another machine (a many-core one with none of
# Debian's packages): a build for a stated baseline, GPSTREAM_ARCH=x86-64-v3
# (AVX2 and FMA: Haswell, Zen and later; without MPI), every shared library
# `ldd` lists — glibc and its loader too, for a host whose glibc is older
# than the build's — the thread-scaling benchmark and kin40k with its shared
# hyperparameters. About 18 MB as .tar.xz.
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
# Every library the binary loads, from where this machine resolves it.
# glibc's own (the loader, libc, libm, …) go to lib/glibc: a host with this
# glibc or a newer one runs gpstream with its own loader and libc (on an
# Ubuntu 24.04 VM with a 6.18 kernel, glibc 2.36's loader run by name took
# none of the program's arguments: `ld.so --library-path … gpstream --version`
# printed the loader's version); an older host gets the packed loader.
mkdir -p "$pack/lib/glibc"
ldd "$build/tools/gpstream" | awk '/=> \// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' | sort -u |
  while read -r library; do
    case "$(basename "$library")" in
      ld-linux* | libc.so* | libm.so* | libmvec.so* | libpthread.so* | libdl.so* | librt.so* | libresolv.so*)
        cp -L "$library" "$pack/lib/glibc/" ;;
      *) cp -L "$library" "$pack/lib/" ;;
    esac
  done
loader="$(basename "$(ldd "$build/tools/gpstream" | awk '/ld-linux/ { print $1 }' | tail -1)")"
glibc="$(getconf GNU_LIBC_VERSION | awk '{ print $2 }')"
cat >"$pack/bin/gpstream" <<WRAPPER
#!/bin/sh
# gpstream with the libraries packed beside it (bench/pack_portable.sh).
here="\$(cd "\$(dirname "\$0")/.." && pwd)"
host="\$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print \$2 }')"
if [ -n "\$host" ] && [ "\$(printf '%s\\n' $glibc "\$host" | sort -V | head -1)" = $glibc ]; then
  LD_LIBRARY_PATH="\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$here/bin/gpstream.real" "\$@"
fi
exec "\$here/lib/glibc/$loader" --library-path "\$here/lib/glibc:\$here/lib" "\$here/bin/gpstream.real" "\$@"
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
