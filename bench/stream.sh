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
# and memory (MEM_TOO=1, a fresh server of each kind), RSS bytes per entry
# (target <= 0.8): the server first takes MEM_N appends to a capped
# scratch stream (so its I/O buffers are touched before the baseline),
# then
#   mem-one       MEM_N entries XADD s * f1 <n> f2 v<n> in one stream
#   mem-many      MEM_N/10 streams of 10 such entries
#
#   bench/stream.sh [RINGKV_BINARY]
# Knobs: GROUPS_TOO (1: also the group cases), MEM_TOO (1), MEM_N (1000000), ROUNDS (3), CLIENTS (50), P (16), N (1000000; the group cases use
# N/10 calls), PREFILL (1000), SERVER_CPU (0), CLIENT_CPU (1),
# OUT (bench/RESULTS_STREAM.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=$(realpath "${1:-${RINGKV:-$ROOT/build/ringkv}}")
REDIS=${REDIS:-$(command -v redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark)}
CLI=${CLI:-redis-cli}
MEM_N=${MEM_N:-1000000}
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

# fill_mem KEYFMT STREAMS PER [OPTS]: XADD <key> [OPTS] * f1 <n> f2 v<n>, PER
# entries to each of STREAMS streams (KEYFMT: printf format of the key
# from the stream's number), in pipes of 10000 commands
fill_mem() {
    local fmt=$1 streams=$2 per=$3 opts=${4:-} total chunk
    total=$((streams * per))
    for ((chunk = 0; chunk < total; chunk += 10000)); do
        awk -v f="$fmt" -v per="$per" -v o="$opts" -v a="$chunk" -v b="$((chunk + 10000))" -v t="$total" \
            'BEGIN { for (i = a; i < b && i < t; i++) {
                         k = index(f, "%") ? sprintf(f, int(i / per)) : f
                         printf "XADD %s %s * f1 %d f2 v%d\r\n", k, o, i % 1000, i } }' |
            "$CLI" -p "$PORT" --pipe >/dev/null
    done
}

# mem_run KIND: "mem-one B" and "mem-many B", RSS bytes per entry
mem_run() {
    local r0 r1
    start_server "$1"
    echo "fill: redis-cli --pipe, 10000 commands a pipe: XADD w MAXLEN 10 * f1 <n> f2 v<n> x $MEM_N, DEL w; then the case" >>"$CMDLOG"
    fill_mem w 1 "$MEM_N" "MAXLEN 10"
    "$CLI" -p "$PORT" del w >/dev/null
    sleep 0.5; r0=$(rss_kb "$SERVER_PID")
    fill_mem s 1 "$MEM_N"
    sleep 0.5; r1=$(rss_kb "$SERVER_PID")
    echo "mem-one $(awk -v a="$r0" -v b="$r1" -v n="$MEM_N" 'BEGIN { printf "%.1f", (b - a) * 1024 / n }')"
    fill_mem 's:%d' "$((MEM_N / 10))" 10
    sleep 0.5; r0=$r1; r1=$(rss_kb "$SERVER_PID")
    echo "mem-many $(awk -v a="$r0" -v b="$r1" -v n="$MEM_N" 'BEGIN { printf "%.1f", (b - a) * 1024 / n }')"
    stop_server
}


CASES="xadd-one xadd-random xrange10 xreadgroup10 xack10 read+ack mem-one mem-many"
KINDS="redis ringkv-t1"
declare -A RES
for round in $(seq 1 "$ROUNDS"); do
    for kind in $KINDS; do
        while read -r case v; do
            log "round $round $case $kind: $v us/cmd"
            RES[$case,$kind]="${RES[$case,$kind]:-} $v"
        done < <(run "$kind")
        if [ "${MEM_TOO:-1}" = 1 ]; then
            while read -r case v; do
                log "round $round $case $kind: $v bytes/entry"
                RES[$case,$kind]="${RES[$case,$kind]:-} $v"
            done < <(mem_run "$kind")
        fi
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
    echo "CPU cases in server CPU us per command; mem cases in RSS bytes per entry."
    echo
    echo "| case | redis | ringkv-t1 | ringkv/redis |"
    echo "|---|---:|---:|---:|"
    for case in $CASES; do
        r=$(m "$case" redis); a=$(m "$case" ringkv-t1)
        echo "| $case | $r | $a | $(ratio "$a" "$r") |"
    done
    echo
    echo "Every run (us/cmd; mem cases bytes/entry):"
    echo
    for k in "${!RES[@]}"; do echo "- $k:${RES[$k]}"; done | sort
} >"$OUT"
cat "$OUT"
