#!/usr/bin/env bash
# Installs the Debian 12 packages ibnetsim needs, only those that are missing (apt-get; sudo when not root).
# Sourced or run by scripts/build.sh; safe to run again. With IBNETSIM_TEST_DEPS=1 (scripts/test) it also installs
# what only the test suite needs: headless Chromium and a font for the report screenshot test.
set -euo pipefail
PKGS=(g++ cmake ninja-build pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev libeigen3-dev
      libcli11-dev doctest-dev libopenmpi-dev openmpi-bin libfmt-dev libspdlog-dev)
if [ "${IBNETSIM_TEST_DEPS:-0}" = "1" ]; then PKGS+=(chromium fonts-dejavu-core); fi
missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "ibnetsim: installing missing Debian packages: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
