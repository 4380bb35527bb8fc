#!/usr/bin/env bash
# bench/pubsub.sh -- pub/sub side by side with Debian's redis-server:
#   fanout-10: one publisher (redis-benchmark -c 1 -P 16) to 10 channels,
#              100 subscribers (bench/sub_sink.c), 10 per channel
#   fanout-1:  the same with all 100 subscribers on one channel
#   nosub:     PUBLISH to channels nobody subscribes, 50 clients, -P 16
# For each: delivered messages per second (publishes x receivers, over the
# publishing time plus the server's drain), server CPU per delivered
# message (per request for nosub), and the server's socket sends per
# delivered message (perf's sock:sock_send_length tracepoint, when perf
# can read it: each send is a trip through the kernel's TCP stack, where a
# fan-out spends nearly all of its CPU). Fresh server per cell, pinned to
# SERVER_CPU; benchmark and subscribers on CLIENT_CPU. The pubsub output
# limit is lifted on both servers so that a subscriber falling behind is
# not disconnected mid-run.
#
#   bench/pubsub.sh            # writes bench/RESULTS_PUBSUB.md
#   N=200000 ROUNDS=1 bench/pubsub.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-500000}
ROUNDS=${ROUNDS:-3}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CLI=${CLI:-redis-cli}
BENCH=${BENCH:-redis-benchmark}
REDIS=${REDIS:-$(command -v redis-server)}
RINGKV=${RINGKV:-$ROOT/build/ringkv}
OUT=${OUT:-$ROOT/bench/RESULTS_PUBSUB.md}
SERVER_PID=
SINK_PID=
WORK=$(mktemp -d)
source "$ROOT/bench/lib.sh"
trap 'stop_server; [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
gcc -O2 -std=gnu17 -Wall -Wextra -Werror -o "$WORK/sub_sink" "$ROOT/bench/sub_sink.c"
HZ=$(getconf CLK_TCK)

start() {   # start KIND
    PORT=$(free_port)
    case "$1" in
        redis) taskset -c "$SERVER_CPU" "$REDIS" --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
                   >"$WORK/server.log" 2>&1 & ;;
        ringkv-t*) taskset -c "$SERVER_CPU" "$RINGKV" --port "$PORT" --bind 127.0.0.1 --threads "${1#ringkv-t}" --save "" \
                   >"$WORK/server.log" 2>&1 & ;;
    esac
    SERVER_PID=$!
    wait_ready "$1" "$WORK/server.log"
    "$CLI" -p "$PORT" config set client-output-buffer-limit "pubsub 0 0 0" >/dev/null
}

# CPU ticks once the server has gone quiet (subscribers drained)
settled_ticks() {
    local a b
    a=$(cpu_ticks "$SERVER_PID")
    while sleep 0.3; b=$(cpu_ticks "$SERVER_PID"); [ "$a" != "$b" ]; do a=$b; done
    echo "$b"
}

# one cell: KIND CASE -> "msgs_per_sec us_per_msg sends_per_msg"
cell() {
    local kind=$1 case=$2 subs=0 nch=1 receivers t0 t1 s0 s1 args
    case "$case" in
        fanout-10) subs=100; nch=10; receivers=10; args=(-c 1 -r 10 publish "ch:__rand_int__" hello) ;;
        fanout-1) subs=100; nch=1; receivers=100; args=(-c 1 publish "ch:000000000000" hello) ;;
        nosub) receivers=1; args=(-c 50 -r 1000000 publish "nosub:__rand_int__" hello) ;;
    esac
    start "$kind"
    if [ "$subs" -gt 0 ]; then
        taskset -c "$CLIENT_CPU" "$WORK/sub_sink" "$PORT" "$subs" "$nch" "ch:" >"$WORK/sink.out" 2>&1 &
        SINK_PID=$!
        for _ in $(seq 1 100); do grep -q ready "$WORK/sink.out" && break; sleep 0.05; done
        grep -q ready "$WORK/sink.out" || die "subscribers did not start"
    fi
    local perf_pid=
    if perf stat -e sock:sock_send_length -p "$SERVER_PID" -x, -o "$WORK/sends" -- true 2>/dev/null; then
        perf stat -e sock:sock_send_length -p "$SERVER_PID" -x, -o "$WORK/sends" &
        perf_pid=$!
    fi
    t0=$(cpu_ticks "$SERVER_PID"); s0=$(date +%s.%N)
    timeout 300 taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -P 16 -n "$N" "${args[@]}" >/dev/null 2>&1 ||
        die "redis-benchmark failed"
    t1=$(settled_ticks); s1=$(date +%s.%N)
    local sends=
    if [ -n "$perf_pid" ]; then
        kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
        sends=$(awk -F, '/sock_send_length/ { print $1 }' "$WORK/sends")
    fi
    if [ -n "$SINK_PID" ]; then kill "$SINK_PID"; wait "$SINK_PID" 2>/dev/null || true; SINK_PID=; fi
    stop_server
    awk -v n="$N" -v r="$receivers" -v t="$((t1 - t0))" -v hz="$HZ" -v a="$s0" -v b="$s1" -v s="${sends:--}" \
        'BEGIN { m = n * r; printf "%.0f %.3f %s\n", m / (b - a), t / hz * 1e6 / m, s == "-" ? "-" : sprintf("%.3f", s / m) }'
}


{
    echo "# Pub/sub, side by side"
    echo
    echo "\`bench/pubsub.sh\` (N=$N publishes per cell, medians of $ROUNDS rounds), $(date -u +%F)."
    echo "Server on CPU $SERVER_CPU; redis-benchmark and the subscribers (bench/sub_sink.c) on CPU $CLIENT_CPU."
    echo "Servers: \`$REDIS --save \"\" --appendonly no\`, \`$RINGKV --threads 1|2\`; pubsub output limit lifted."
    echo
    echo "| case | server | delivered msg/s | server CPU µs per delivered msg | ratio to redis | server sends per delivered msg |"
    echo "|---|---|---:|---:|---:|---:|"
} >"$WORK/table"
for case in fanout-10 fanout-1 nosub; do
    base=
    for kind in redis ringkv-t1 ringkv-t2; do
        : >"$WORK/rate"; : >"$WORK/cpu"; : >"$WORK/spm"
        for _ in $(seq 1 "$ROUNDS"); do
            read -r rate us spm < <(cell "$kind" "$case")
            echo "$rate" >>"$WORK/rate"; echo "$us" >>"$WORK/cpu"; echo "$spm" >>"$WORK/spm"
            log "$case $kind: $rate msg/s, $us us/msg, $spm sends/msg"
        done
        rate=$(median <"$WORK/rate"); us=$(median <"$WORK/cpu"); spm=$(median <"$WORK/spm")
        [ -n "$base" ] || base=$us
        echo "| $case | $kind | $rate | $us | $(awk -v a="$us" -v b="$base" 'BEGIN { printf "%.2f", a / b }') | $spm |" >>"$WORK/table"
    done
done
cp "$WORK/table" "$OUT"
cat "$OUT"
