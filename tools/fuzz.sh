#!/usr/bin/env bash
# Run the libFuzzer harnesses (tests/fuzz/) under ASan and UBSan.
#
#   tools/fuzz.sh TARGET|all SECONDS
#
# TARGET is resp_parse, reply, command or rdb_load (fuzz_ prefix optional).
# Configures and builds build-fuzz with clang when needed (tools/deps.sh
# installs clang and libclang-rt-dev), then runs each target for SECONDS on
# a copy of its seed corpus (tests/fuzz/corpus/TARGET) in a temporary
# directory, so the repository is not touched; the directory is removed
# after a clean run unless RINGKV_FUZZ_KEEP=1 (to keep the grown corpora,
# e.g. to seed a longer run: `build-fuzz/fuzz_command -dict=... DIR`). Exits
# non-zero if any target
# finds a crash, a leak, a timeout or runs out of memory, printing the
# reproducer's path: run `build-fuzz/fuzz_TARGET FILE` to replay it
# (FUZZ_VERBOSE=1 shows what fuzz_command and fuzz_rdb_load do with it).
#
# Environment: RINGKV_FUZZ_BUILD (default build-fuzz), RINGKV_FUZZ_JOBS
# (build parallelism, default 2), RINGKV_FUZZ_WORKDIR (where the temporary
# directories go, default $TMPDIR or /tmp).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    echo "usage: tools/fuzz.sh TARGET|all SECONDS   (TARGET: resp_parse reply command rdb_load)" >&2
    exit 2
}
[ $# -eq 2 ] || usage
what=$1
seconds=$2
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || usage

ALL=(resp_parse reply command rdb_load)
targets=()
if [ "$what" = all ]; then
    targets=("${ALL[@]}")
else
    t=${what#fuzz_}
    case " ${ALL[*]} " in *" $t "*) targets=("$t") ;; *) usage ;; esac
fi

# Longest input per target: the parser needs room for many frames, the
# others a program of a few hundred commands or a file of many keys.
max_len() {
    case $1 in
        resp_parse) echo 16384 ;;
        rdb_load) echo 16384 ;;
        *) echo 4096 ;;
    esac
}

build=${RINGKV_FUZZ_BUILD:-build-fuzz}
jobs=${RINGKV_FUZZ_JOBS:-2}
if ! command -v clang >/dev/null; then
    echo "tools/fuzz.sh: clang is missing (tools/deps.sh installs it)" >&2
    exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ] || ! grep -q '^RINGKV_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    CC=clang cmake -S . -B "$build" -DRINGKV_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
fi
cmake --build "$build" -j"$jobs" --target "${targets[@]/#/fuzz_}" >/dev/null

work=$(mktemp -d "${RINGKV_FUZZ_WORKDIR:-${TMPDIR:-/tmp}}/ringkv-fuzz.XXXXXX")
echo "tools/fuzz.sh: working in $work"
# Leaks are findings; a UBSan report stops the run (the build makes them
# abort); a report names the source lines. Set here, not inherited (the
# ASan suite of tools/test.sh exports its own).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

failed=0
for t in "${targets[@]}"; do
    bin="$PWD/$build/fuzz_$t"
    corpus="$work/$t/corpus"
    mkdir -p "$corpus" "$work/$t/findings"
    cp tests/fuzz/corpus/"fuzz_$t"/* "$corpus"/ 2>/dev/null || true
    args=(-max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=4096
          -print_final_stats=1 -artifact_prefix="$work/$t/findings/")
    [ "$t" = command ] && args+=(-dict="$PWD/tests/fuzz/command.dict")
    log="$work/$t/fuzz.log"
    echo "== fuzz_$t: ${seconds}s, corpus $(ls "$corpus" | wc -l) seeds"
    set +e
    (cd "$work/$t" && "$bin" "${args[@]}" "$corpus") >"$log" 2>&1
    rc=$?
    set -e
    findings=$(ls "$work/$t/findings" 2>/dev/null | sed "s|^|$work/$t/findings/|")
    # the last status line: coverage and corpus
    stats=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\) .*/\1/p' <<<"$stats")
    echo "   ${execs:-?} runs, ${speed:-?} exec/s, corpus ${corp:-?} (inputs/bytes)"
    if [ $rc -ne 0 ] || [ -n "$findings" ]; then
        failed=1
        echo "   FAILED (exit $rc); log: $log"
        grep -E 'ERROR:|runtime error|check failed|SUMMARY' "$log" | head -n 5 | sed 's/^/   /'
        for f in $findings; do echo "   reproducer: $f   (replay: $bin $f)"; done
    fi
done

if [ $failed -ne 0 ]; then
    echo "tools/fuzz.sh: findings above; the run's files are in $work"
    exit 1
fi
if [ "${RINGKV_FUZZ_KEEP:-0}" = 1 ]; then
    echo "tools/fuzz.sh: no findings (${targets[*]}, ${seconds}s each); corpora grown in $work"
else
    rm -rf "$work"
    echo "tools/fuzz.sh: no findings (${targets[*]}, ${seconds}s each)"
fi
