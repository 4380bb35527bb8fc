#!/usr/bin/env bash
# Build and run every test: unit (cmocka) and integration (the real server
# driven over loopback with hiredis) in a Release build, then Redis's own
# test suite against that build, then the unit and integration tests again
# with AddressSanitizer and UndefinedBehaviorSanitizer, then each libFuzzer
# harness for 60 s (tools/fuzz.sh all 60).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
jobs=$(nproc)

run_suite() {
    local dir=$1; shift
    cmake -S . -B "$dir" "$@" >/dev/null
    cmake --build "$dir" -j"$jobs" >/dev/null
    (cd "$dir" && ctest --output-on-failure --timeout 600)
}

echo "== Release build"
run_suite build -DCMAKE_BUILD_TYPE=Release

# Redis's own test suite, the units of every command family built so far,
# each against a fresh `build/ringkv --threads 2`; fails on a crash, a hang
# or fewer passing tests than tests/redis-tests.expected holds.
if [ "${RINGKV_SKIP_REDIS_TESTS:-0}" != 1 ]; then
    echo "== Redis 7.0.15 test suite (tools/redis-tests.sh --check)"
    tools/redis-tests.sh --check
fi

if [ "${RINGKV_SKIP_SANITIZERS:-0}" != 1 ]; then
    echo "== AddressSanitizer + UndefinedBehaviorSanitizer build"
    # a small quarantine keeps RSS meaningful for the bounded-memory tests
    export ASAN_OPTIONS=abort_on_error=0:detect_leaks=1:exitcode=23:quarantine_size_mb=16
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DRINGKV_SANITIZE=ON
fi

# The fuzz harnesses (tests/fuzz/), clang with ASan and UBSan: each for a
# minute from its seed corpus; a crash, leak or hang fails the run.
if [ "${RINGKV_SKIP_FUZZ:-0}" != 1 ]; then
    echo "== libFuzzer harnesses (tools/fuzz.sh all 60)"
    tools/fuzz.sh all 60
fi
echo "all tests passed"
