#!/usr/bin/env bash
# bench/stream.sh -- streams, pipelined, side by side with Debian's
# redis-server (issue 12). Each round starts a fresh server of each kind in
# turn, pinned to SERVER_CPU; redis-benchmark runs on CLIENT_CPU with
# CLIENTS connections and -P P. The figure is the server's CPU time
# (utime+stime of all its threads, /proc/PID/stat) per command; the
# targets are ringkv / redis <= 0.6:
#
#   xadd-one      XADD s * f v, one stream
#   xadd-random   XADD s:__rand_int__ * f v, streams at random (-r 100000)
#   xrange10      XRANGE s - + COUNT 10 on a stream of PREFILL entries
#   xreadgroup10  XREADGROUP GROUP g c COUNT 10 STREAMS s > on a stream of
#                 10*N entries with explicit IDs 1-0, 2-0, ...: each call
#                 delivers 10 new entries (PEL and consumer PEL inserts)
#   xack10        then XACK s g with 10 random IDs of those (-r 10*N):
#                 the same mix of acknowledged and already gone for both
#   read+ack      xreadgroup10 + xack10: CPU per read of 10 and ack of 10
#
#   bench/stream.sh [RINGKV_BINARY]
# Knobs: GROUPS_TOO (1: also the group cases), ROUNDS (3), CLIENTS (50), P (16), N (1000000; the group cases use
# N/10 calls), PREFILL (1000), SERVER_CPU (0), CLIENT_CPU (1),
# OUT (bench/RESULTS_STREAM.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=$(realpath "${1:-${RINGKV:-$ROOT/build/ringkv}}")
REDIS=${REDIS:-$(command -v redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark)}
CLI=${CLI:-redis-cli}
ROUNDS=${ROUNDS:-3}; CLIENTS=${CLIENTS:-50}; P=${P:-16}; N=${N:-1000000}; PREFILL=${PREFILL:-1000}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-$ROOT/bench/RESULTS_STREAM.md}
KEEP_WORK=${KEEP_WORK:-0}
SERVER_PID=
WORK=$(mktemp -d /tmp/ringkv-stream.XXXXXX)
CMDLOG=$WORK/commands
: >"$CMDLOG"
source "$ROOT/bench/lib.sh"
trap bench_cleanup EXIT
[ -x "$RINGKV" ] || die "$RINGKV not found: build it first"
HZ=$(getconf CLK_TCK)
GN=$((N / 10))            # calls of the group cases
ENTRIES=$((GN * 10))      # entries they read

# fill KEY COUNT: XADD KEY i-0 f v for i in 1..COUNT, through redis-cli --pipe
fill() {
    awk -v k="$1" -v n="$2" 'BEGIN { for (i = 1; i <= n; i++) printf "XADD %s %d-0 f v%d\r\n", k, i, i }' |
        "$CLI" -p "$PORT" --pipe >/dev/null
}

# bench_cpu N ARGS...: server CPU microseconds per command of one redis-benchmark run
bench_cpu() {
    local n=$1 t0 t1
    shift
    echo "taskset -c $CLIENT_CPU $BENCH -p PORT -c $CLIENTS -P $P -n $n $*" >>"$CMDLOG"
    t0=$(cpu_ticks "$SERVER_PID")
    taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$CLIENTS" -P "$P" -n "$n" -q "$@" >"$WORK/bench.out" 2>&1
    t1=$(cpu_ticks "$SERVER_PID")
    if grep -qi "error" "$WORK/bench.out"; then cat "$WORK/bench.out" >&2; die "$*: errors"; fi
    awk -v t="$((t1 - t0))" -v hz="$HZ" -v n="$n" 'BEGIN { printf "%.3f", t / hz * 1e6 / n }'
}

# run KIND: one line "case value" per case
run() {
    local kind=$1 ids
    start_server "$kind"
    echo "xadd-one $(bench_cpu "$N" XADD s '*' f v)"
    echo "xadd-random $(bench_cpu "$N" -r 100000 XADD 's:__rand_int__' '*' f v)"
    "$CLI" -p "$PORT" del s >/dev/null
    fill s "$PREFILL"
    echo "xrange10 $(bench_cpu "$N" XRANGE s - + COUNT 10)"
    if [ "${GROUPS_TOO:-1}" = 1 ]; then
    "$CLI" -p "$PORT" del g:s >/dev/null
    fill g:s "$ENTRIES"
    "$CLI" -p "$PORT" xgroup create g:s g 0 >/dev/null
    local rg ack
    rg=$(bench_cpu "$GN" XREADGROUP GROUP g c COUNT 10 STREAMS g:s '>')
    ids=$(for i in $(seq 10); do printf '__rand_int__-0 '; done)
    # shellcheck disable=SC2086
    ack=$(bench_cpu "$GN" -r "$ENTRIES" XACK g:s g $ids)
    echo "xreadgroup10 $rg"
    echo "xack10 $ack"
    echo "read+ack $(awk -v a="$rg" -v b="$ack" 'BEGIN { printf "%.3f", a + b }')"
    fi
    stop_server
}

median() { tr ' ' '\n' | awk NF | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

CASES="xadd-one xadd-random xrange10 xreadgroup10 xack10 read+ack"
KINDS="redis ringkv-t1"
declare -A RES
for round in $(seq 1 "$ROUNDS"); do
    for kind in $KINDS; do
        while read -r case v; do
            log "round $round $case $kind: $v us/cmd"
            RES[$case,$kind]="${RES[$case,$kind]:-} $v"
        done < <(run "$kind")
    done
done

m() { echo "${RES[$1,$2]:-}" | median; }
{
    echo "# Streams: server CPU per command (bench/stream.sh)"
    echo
    echo "$(date -u +%Y-%m-%d), $(nproc) CPUs; server on CPU $SERVER_CPU, redis-benchmark on CPU $CLIENT_CPU;"
    echo "$ROUNDS rounds, medians; CLIENTS=$CLIENTS P=$P N=$N PREFILL=$PREFILL. Commands:"
    echo
    echo '```'
    cat "$CMDLOG" | sort -u
    echo '```'
    echo
    echo "| case | redis us/cmd | ringkv-t1 us/cmd | ringkv/redis |"
    echo "|---|---:|---:|---:|"
    for case in $CASES; do
        r=$(m "$case" redis); a=$(m "$case" ringkv-t1)
        echo "| $case | $r | $a | $(ratio "$a" "$r") |"
    done
    echo
    echo "Every run (us/cmd):"
    echo
    for k in "${!RES[@]}"; do echo "- $k:${RES[$k]}"; done | sort
} >"$OUT"
cat "$OUT"
