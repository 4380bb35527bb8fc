#!/usr/bin/env bash
# Install the Debian packages ringkv needs to build, test and benchmark,
# when any is missing. Safe to run repeatedly; needs root (or sudo).
set -euo pipefail

# liblua5.1-0-dev, lua-cjson-dev, lua-bitop-dev: scripting (Lua 5.1 and the
# static cjson and bit libraries it links)
# clang, libclang-rt-dev: the libFuzzer harnesses (tools/fuzz.sh); Debian 12's
# libclang-rt-dev brings libclang-rt-14-dev, which holds libclang_rt.fuzzer
PACKAGES=(build-essential cmake pkg-config liburing-dev libxxhash-dev libcmocka-dev
          libhiredis-dev libmimalloc-dev redis-tools
          liblua5.1-0-dev lua-cjson-dev lua-bitop-dev
          clang libclang-rt-dev)
[ "${1:-}" = "--bench" ] && PACKAGES+=(redis-server linux-perf)

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "tools/deps.sh: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
