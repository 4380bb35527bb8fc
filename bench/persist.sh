#!/usr/bin/env bash
# bench/persist.sh -- RDB snapshots side by side with Debian's redis-server
# (issue 13). For each server kind in turn (fresh, pinned to SERVER_CPU,
# `save ""`, its own directory):
#
#   dataset   KEYS string keys key:<12 digits> = xxx, redis-benchmark's own
#             (through redis-cli --pipe), so its SETs below overwrite them
#             and the dataset keeps its size; PSS of the server (its
#             children too: Redis's fork) with the dataset
#   bgsave    redis-benchmark SET -r KEYS -P P -c CLIENTS from CLIENT_CPU,
#             BGSAVE once it runs, until the save is done: the peak PSS
#             above the dataset (sampled every 20 ms: Redis's child's
#             copy-on-write pages count, shared ones once), the save's
#             duration, and the longest round trip of a probe client that
#             sends one PING at a time meanwhile (bench/rtt_probe.py), next
#             to the same probe's longest under the same load without a save
#   load      SAVE, restart from the file: the load time each server logs
#
#   bench/persist.sh [RINGKV_BINARY]
# Knobs: KEYS (5000000), ROUNDS (1), CLIENTS (50), P (16), THREADS (1),
# SERVER_CPU (0), CLIENT_CPU (1), OUT (bench/RESULTS_PERSIST.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=$(realpath "${1:-${RINGKV:-$ROOT/build/ringkv}}")
REDIS=${REDIS:-$(command -v redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark)}
CLI=${CLI:-$(command -v redis-cli)}
KEYS=${KEYS:-5000000}; ROUNDS=${ROUNDS:-1}; CLIENTS=${CLIENTS:-50}; P=${P:-16}; THREADS=${THREADS:-1}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-$ROOT/bench/RESULTS_PERSIST.md}
KEEP_WORK=${KEEP_WORK:-0}
SERVER_PID=
HELPER_PID=
WORK=$(mktemp -d /tmp/ringkv-persist.XXXXXX)
source "$ROOT/bench/lib.sh"
trap bench_cleanup EXIT
require_tools redis

# start KIND DIR: a fresh server in DIR (which may hold a dump.rdb to load)
start() {
    PORT=$(free_port)
    case "$1" in
        redis) (cd "$2" && exec taskset -c "$SERVER_CPU" "$REDIS" --port "$PORT" --bind 127.0.0.1 --save "" \
                   --appendonly no --dir "$2") >"$2/server.log" 2>&1 & ;;
        ringkv) taskset -c "$SERVER_CPU" "$RINGKV" --port "$PORT" --bind 127.0.0.1 --threads "$THREADS" \
                   --save "" --dir "$2" >"$2/server.log" 2>&1 & ;;
    esac
    SERVER_PID=$!
    local i
    for i in $(seq 1 3000); do   # a load answers -LOADING, not PONG
        "$CLI" -p "$PORT" ping 2>/dev/null | grep -q PONG && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$2/server.log" >&2; die "$1 exited at startup"; }
        sleep 0.02
    done
    die "$1 did not answer PING"
}

# PSS in KB of the server and its children
pss_kb() {
    local total=0 p v
    for p in "$SERVER_PID" $(pgrep -P "$SERVER_PID" || true); do
        v=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
        total=$((total + ${v:-0}))
    done
    echo "$total"
}

info() { "$CLI" -p "$PORT" info persistence | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'; }

run_kind() {
    local kind=$1 dir=$WORK/$kind.$2
    mkdir -p "$dir"
    start "$kind" "$dir"
    awk -v n="$KEYS" 'BEGIN { for (i = 0; i < n; i++) printf "SET key:%012d xxx\r\n", i }' |
        "$CLI" -p "$PORT" --pipe >/dev/null
    sleep 1
    local base peak t0 t1 now
    base=$(pss_kb)
    taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$CLIENTS" -P "$P" -n 400000000 -r "$KEYS" -t set -q \
        >/dev/null 2>&1 &
    HELPER_PID=$!
    sleep 1
    # the probe without a save first, for as long as the save took last time
    taskset -c "$CLIENT_CPU" python3 "$ROOT/bench/rtt_probe.py" "$PORT" >"$dir/probe0" &
    local probe=$!
    sleep "${LAST_SAVE_S:-3}"
    kill "$probe" 2>/dev/null || true
    wait "$probe" 2>/dev/null || true
    taskset -c "$CLIENT_CPU" python3 "$ROOT/bench/rtt_probe.py" "$PORT" >"$dir/probe" &
    probe=$!
    sleep 0.5
    t0=$(date +%s%N)
    "$CLI" -p "$PORT" bgsave >/dev/null
    peak=$base
    while :; do
        now=$(pss_kb)
        [ "$now" -gt "$peak" ] && peak=$now
        [ "$(info rdb_bgsave_in_progress)" = 0 ] && break
        sleep 0.02
    done
    t1=$(date +%s%N)
    kill "$probe" 2>/dev/null || true
    wait "$probe" 2>/dev/null || true
    kill "$HELPER_PID" 2>/dev/null || true
    wait "$HELPER_PID" 2>/dev/null || true
    HELPER_PID=
    [ "$(info rdb_last_bgsave_status)" = ok ] || die "$kind: BGSAVE failed"
    local max_rtt base_rtt
    max_rtt=$(cat "$dir/probe")
    base_rtt=$(cat "$dir/probe0")
    local saved
    saved=$("$CLI" -p "$PORT" dbsize)
    "$CLI" -p "$PORT" save >/dev/null
    stop_server
    start "$kind" "$dir"
    local load
    load=$(grep -o 'loaded from disk: [0-9]* keys in [0-9.]* seconds\|DB loaded from disk: [0-9.]* seconds' \
               "$dir/server.log" | grep -o '[0-9.]* seconds' | awk '{ print $1 }')
    [ "$("$CLI" -p "$PORT" dbsize)" = "$saved" ] || die "$kind: the reload lost keys"
    stop_server
    echo "$kind $((base / 1024)) $(( (peak - base) / 1024 )) $(( (t1 - t0) / 1000000 )) $max_rtt $load $base_rtt"
    rm -rf "$dir"
}

results=$WORK/results
: >"$results"
for round in $(seq 1 "$ROUNDS"); do
    for kind in redis ringkv; do
        log "round $round: $kind"
        run_kind "$kind" "$round" >>"$results"
    done
done
cat "$results" >&2

{
    echo "# Persistence: BGSAVE under writes, and loading (bench/persist.sh)"
    echo
    echo "$(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r). $KEYS string keys key:<12 digits> = xxx (loaded through redis-cli --pipe);"
    echo "during BGSAVE: \`taskset -c $CLIENT_CPU redis-benchmark -c $CLIENTS -P $P -r $KEYS -t set\` and a"
    echo "probe sending one PING at a time (bench/rtt_probe.py). Servers on CPU $SERVER_CPU:"
    echo "\`$REDIS --save \"\" --appendonly no\`, \`$RINGKV --threads $THREADS --save \"\"\`."
    echo "PSS counts Redis's fork child, its shared pages once. Medians of $ROUNDS round(s)."
    echo
    echo "| server | dataset PSS MB | peak PSS above it during BGSAVE, MB | BGSAVE s | longest PING round trip during it, ms | same load, no save, ms | load of the file, s |"
    echo "|---|---|---|---|---|---|---|"
    for kind in redis ringkv; do
        awk -v k="$kind" '$1 == k' "$results" | sort -k3 -n | awk -v n="$ROUNDS" '
            { row[NR] = $0 } END { split(row[int((n + 1) / 2)], f, " ");
              printf "| %s | %d | %d (%.1f%%) | %.2f | %.1f | %.1f | %.2f |\n", f[1], f[2], f[3], 100 * f[3] / f[2], f[4] / 1000, f[5], f[7], f[6] }'
    done
} >"$OUT"
cat "$OUT"
