#!/usr/bin/env bash
# Installs the Debian 12 packages ibnetsim needs, only those that are missing (apt-get; sudo when not root).
# Sourced or run by scripts/build.sh; safe to run again.
set -euo pipefail
PKGS=(g++ cmake ninja-build pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev libeigen3-dev
      libcli11-dev doctest-dev libopenmpi-dev openmpi-bin libfmt-dev libspdlog-dev)
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
