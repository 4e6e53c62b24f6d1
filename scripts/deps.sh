#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages heaptap's build, tests, demo and benchmarks need, when they are missing.
# A no-op when everything is present. Needs root (apt-get) only when something is missing.
# Usage: scripts/deps.sh [build|check|bench]   (default: check)
set -eu

build_pkgs="build-essential pkg-config libdw-dev libelf-dev libiberty-dev zlib1g-dev
 elfutils binutils libdebuginfod-dev"
# The peer tools the tests compare against, and the tools the tests drive.
check_pkgs="$build_pkgs graphviz libjemalloc-dev libjemalloc2 golang-go google-perftools
 libgoogle-perftools-dev debuginfod curl clang libclang-rt-14-dev llvm python3 valgrind
 openjdk-17-jdk-headless chromium libcap2-bin librust-jemalloc-sys-dev prometheus"
bench_pkgs="$check_pkgs heaptrack hyperfine time"

case "${1:-check}" in
  build) want=$build_pkgs ;;
  check) want=$check_pkgs ;;
  bench) want=$bench_pkgs ;;
  *) echo "deps.sh: unknown set '$1' (build, check or bench)" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v node >/dev/null && command -v npm >/dev/null || echo "deps.sh: node and npm are not on PATH (the browser tests will skip)" >&2
[ -z "$missing" ] && exit 0

echo "deps.sh: installing:$missing" >&2
if [ "$(id -u)" != 0 ]; then
  echo "deps.sh: need root to install:$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists once if they are missing or older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -n 1)" ]; then
  apt-get update -q >&2
fi
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2
