#!/usr/bin/env bash
# Build a Release ringkv into build/ and run it in the foreground.
# Arguments pass through: tools/run.sh --port 7000 --threads 2
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target ringkv -j"$(nproc)" >/dev/null
exec build/ringkv "$@"
