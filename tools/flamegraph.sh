#!/usr/bin/env bash
# Flamegraph of a running process (ringkv, or anything else):
#
#   tools/flamegraph.sh PID [SECONDS] [OUT.svg]
#
# Samples every thread of PID for SECONDS (default 10) with
# `perf record -g -F 999 -e cpu-clock` (cycle counters are not exposed on
# these VMs), then folds the stacks with inferno-collapse-perf and draws
# them with inferno-flamegraph. Installs inferno with `cargo install inferno`
# when it is missing. Writes OUT.svg (default flamegraph-PID-TIME.svg) and
# keeps the folded stacks next to it (.folded) for diffing two runs with
# inferno-diff-folded.
#
# Env: FREQ (default 999), CALLGRAPH (default fp; "dwarf" for binaries built
# without frame pointers, bigger and slower), PERF (default perf).
set -euo pipefail

usage() { echo "usage: $0 PID [SECONDS] [OUT.svg]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 3 ] || usage
PID=$1
SECS=${2:-10}
OUT=${3:-flamegraph-$PID-$(date +%Y%m%d-%H%M%S).svg}
FREQ=${FREQ:-999}
CALLGRAPH=${CALLGRAPH:-fp}
PERF=${PERF:-perf}

[[ "$PID" =~ ^[0-9]+$ ]] || usage
[[ "$SECS" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage
kill -0 "$PID" 2>/dev/null || { echo "no process $PID" >&2; exit 1; }
command -v "$PERF" >/dev/null || { echo "perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }

export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v inferno-collapse-perf >/dev/null || ! command -v inferno-flamegraph >/dev/null; then
    command -v cargo >/dev/null || { echo "inferno is missing and cargo is not installed" >&2; exit 1; }
    echo "installing inferno (cargo install inferno; takes a few minutes)..." >&2
    cargo install inferno >&2
fi

TMP=$(mktemp -d /tmp/flamegraph.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

COMM=$(cat "/proc/$PID/comm" 2>/dev/null || echo "pid $PID")
echo "sampling $COMM ($PID) for ${SECS}s at ${FREQ} Hz..." >&2
"$PERF" record -q -g --call-graph "$CALLGRAPH" -F "$FREQ" -e cpu-clock -p "$PID" \
    -o "$TMP/perf.data" -- sleep "$SECS" >&2
"$PERF" script -i "$TMP/perf.data" 2>/dev/null >"$TMP/perf.script"
[ -s "$TMP/perf.script" ] || { echo "perf recorded no samples (is $PID busy? perf_event_paranoid?)" >&2; exit 1; }

FOLDED=${OUT%.svg}.folded
inferno-collapse-perf --all <"$TMP/perf.script" >"$FOLDED"
# cpu-clock samples carry their period: the folded counts are nanoseconds of CPU
cpu_ms=$(awk '{ s += $NF } END { printf "%.0f", s / 1e6 }' "$FOLDED")
inferno-flamegraph --title "$COMM ($PID): ${SECS}s, cpu-clock ${FREQ} Hz, ${cpu_ms} ms of CPU" \
    --countname ns <"$FOLDED" >"$OUT"
echo "wrote $OUT (${cpu_ms} ms of CPU sampled; folded stacks in $FOLDED)" >&2
echo "$OUT"
