#!/usr/bin/env bash
# The README's test command in a fresh Debian 12 (bookworm) root, for machines
# without a Docker engine: debootstrap a minimal system into DIR, clone this
# checkout into it, and run .ci/run there as docker/Dockerfile would — for the
# x86-64-v3 baseline, with the Release tests under OPENBLAS_CORETYPE (default
# SkylakeX; scripts/test.sh runs the sanitizer tests under Prescott), so two
# OpenBLAS kernel sets other than the build machine's are exercised.
# Needs root, debootstrap and Debian's package mirror.
# Usage: scripts/test-fresh-debian.sh DIR [CORETYPE]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${1:?usage: scripts/test-fresh-debian.sh DIR [CORETYPE]}"
coretype="${2:-SkylakeX}"
[ "$(id -u)" -eq 0 ] || { echo "test-fresh-debian: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
case "$(cd "$target" 2>/dev/null && pwd)/" in
  "$root"/*) echo "test-fresh-debian: DIR must be outside the checkout" >&2; exit 2 ;;
esac

if [ ! -x "$target/usr/bin/apt-get" ]; then
  echo "== debootstrap bookworm into $target"
  debootstrap --variant=minbase bookworm "$target" http://deb.debian.org/debian >"$target.debootstrap.log" 2>&1 ||
    { tail -5 "$target.debootstrap.log" >&2; exit 1; }
fi
cp /etc/resolv.conf "$target/etc/resolv.conf"
rm -rf "$target/src"
git clone -q "$root" "$target/src"
echo "== testing $(git -C "$target/src" log --oneline -1 | cut -c1-80)"

mounted=()
cleanup() { for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done; }
trap cleanup EXIT
mount -t proc proc "$target/proc" && mounted+=("$target/proc")
mount --rbind /sys "$target/sys" && mounted+=("$target/sys")
mount --rbind /dev "$target/dev" && mounted+=("$target/dev")

chroot "$target" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root CI=true \
  GPSTREAM_ARCH=x86-64-v3 OPENBLAS_CORETYPE="$coretype" bash -c 'cd /src && apt-get update -qq && bash .ci/run'
