#!/usr/bin/env bash
# Configures and builds ibnetsim into build/ (Release). IBNETSIM_SANITIZE=1 builds build-asan/ with ASan+UBSan.
# Usage: scripts/build.sh [extra cmake --build args]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/deps.sh"
dir="$root/build"; extra=()
if [ "${IBNETSIM_SANITIZE:-0}" = "1" ]; then dir="$root/build-asan"; extra=(-DIBNETSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo); fi
# ccache, when installed, makes rebuilds in fresh build folders cheap (paths made relative to the repo).
if command -v ccache >/dev/null 2>&1; then
  extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
if [ -n "${IBNETSIM_BUILD_DIR:-}" ]; then dir="$IBNETSIM_BUILD_DIR"; fi
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S "$root" -B "$dir" -G Ninja "${extra[@]}" >/dev/null
fi
jobs="${IBNETSIM_JOBS:-$(nproc)}"
cmake --build "$dir" -j "$jobs" "$@" >&2
echo "$dir"
