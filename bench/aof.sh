#!/usr/bin/env bash
# bench/aof.sh -- the append-only file side by side with Debian's
# redis-server (issue 13). For each case, ROUNDS rounds, each server kind
# in turn, fresh, pinned to SERVER_CPU, in an empty directory of its own,
# `--save "" --appendonly yes --appendfsync POLICY`; redis-benchmark on
# CLIENT_CPU:
#
#   everysec  SET -P 16, CLIENTS clients, N_PIPE requests over R_KEYS keys
#   always    SET -P 1, CLIENTS clients, N_SYNC requests (group commit)
#
# Reported: requests/s, the server's CPU per request (every thread of the
# process, io_uring's io-wq workers included), their medians and the
# ratios ringkv / Redis.
#
#   bench/aof.sh [RINGKV_BINARY]
# Knobs: ROUNDS (3), CLIENTS (50), N_PIPE (2000000), N_SYNC (200000),
# R_KEYS (1000000), THREADS (1), SERVER_CPU (0), CLIENT_CPU (1),
# OUT (bench/RESULTS_AOF.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=$(realpath "${1:-${RINGKV:-$ROOT/build/ringkv}}")
REDIS=${REDIS:-$(command -v redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark)}
CLI=${CLI:-$(command -v redis-cli)}
ROUNDS=${ROUNDS:-3}; CLIENTS=${CLIENTS:-50}; N_PIPE=${N_PIPE:-2000000}; N_SYNC=${N_SYNC:-200000}
R_KEYS=${R_KEYS:-1000000}; THREADS=${THREADS:-1}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-$ROOT/bench/RESULTS_AOF.md}
KEEP_WORK=${KEEP_WORK:-0}
SERVER_PID=
WORK=$(mktemp -d /tmp/ringkv-aof.XXXXXX)
source "$ROOT/bench/lib.sh"
trap bench_cleanup EXIT
require_tools redis

# start KIND POLICY: a fresh server with the AOF on, in a directory of its own
start() {
    local dir=$WORK/$1
    rm -rf "$dir" && mkdir -p "$dir"
    PORT=$(free_port)
    case "$1" in
        redis) taskset -c "$SERVER_CPU" "$REDIS" --port "$PORT" --bind 127.0.0.1 --save "" --dir "$dir" \
                   --appendonly yes --appendfsync "$2" >"$dir.log" 2>&1 & ;;
        ringkv) taskset -c "$SERVER_CPU" "$RINGKV" --port "$PORT" --bind 127.0.0.1 --threads "$THREADS" \
                   --save "" --dir "$dir" --appendonly yes --appendfsync "$2" >"$dir.log" 2>&1 & ;;
    esac
    SERVER_PID=$!
    wait_ready "$1" "$dir.log"
}

# run KIND POLICY P N: "rps cpu_us_per_request"
run() {
    start "$1" "$2"
    local t0 t1 out hz
    hz=$(getconf CLK_TCK)
    t0=$(cpu_ticks "$SERVER_PID")
    out=$(taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$CLIENTS" -P "$3" -n "$4" -r "$R_KEYS" -t set -q 2>/dev/null |
          tr '\r' '\n' | grep 'requests per second' | tail -1)
    t1=$(cpu_ticks "$SERVER_PID")
    [ "$("$CLI" -p "$PORT" info persistence | tr -d '\r' | awk -F: '$1 == "aof_enabled" { print $2 }')" = 1 ] ||
        die "$1: the AOF is not on"
    stop_server
    echo "$out" | awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$4" '{ printf "%s %.2f\n", $2, t * 1e6 / hz / n }'
}

results=$WORK/results
: >"$results"
for round in $(seq 1 "$ROUNDS"); do
    for kind in redis ringkv; do
        log "round $round: $kind everysec -P 16"
        echo "everysec $kind $(run "$kind" everysec 16 "$N_PIPE")" >>"$results"
        log "round $round: $kind always -P 1"
        echo "always $kind $(run "$kind" always 1 "$N_SYNC")" >>"$results"
    done
done
cat "$results" >&2

med() { awk -v c="$1" -v k="$2" -v f="$3" '$1 == c && $2 == k { print $f }' "$results" | median; }
{
    echo "# The append-only file: SET with appendfsync everysec and always (bench/aof.sh)"
    echo
    echo "$(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r). Servers on CPU $SERVER_CPU, fresh for each run:"
    echo "\`$REDIS --save \"\" --appendonly yes --appendfsync POLICY\`,"
    echo "\`$RINGKV --threads $THREADS --save \"\" --appendonly yes --appendfsync POLICY\`;"
    echo "\`taskset -c $CLIENT_CPU redis-benchmark -c $CLIENTS -P P -n N -r $R_KEYS -t set\` (everysec: P 16,"
    echo "N $N_PIPE; always: P 1, N $N_SYNC). CPU per request: every thread of the server process"
    echo "(io_uring's io-wq workers included). Medians of $ROUNDS rounds."
    echo
    echo "| case | Redis req/s | ringkv req/s | ratio | Redis CPU µs/req | ringkv CPU µs/req | ratio |"
    echo "|---|---|---|---|---|---|---|"
    for c in everysec always; do
        rr=$(med "$c" redis 3); kr=$(med "$c" ringkv 3); rc=$(med "$c" redis 4); kc=$(med "$c" ringkv 4)
        echo "| $c, SET -P $([ "$c" = always ] && echo 1 || echo 16) | $(fmt_rps "$rr") | $(fmt_rps "$kr") | $(ratio "$kr" "$rr") | $rc | $kc | $(ratio "$kc" "$rc") |"
    done
} >"$OUT"
cat "$OUT"
