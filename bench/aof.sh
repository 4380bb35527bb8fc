#!/usr/bin/env bash
# bench/aof.sh -- the append-only file side by side with Debian's
# redis-server (issue 13). For each case, ROUNDS rounds, each server kind
# in turn, fresh, pinned to SERVER_CPU, in an empty directory of its own,
# `--save "" --appendonly yes --appendfsync POLICY`; the load on
# CLIENT_CPU:
#
#   everysec        redis-benchmark SET -P 16, CLIENTS clients, N_PIPE requests over R_KEYS keys
#   always          redis-benchmark SET -P 1, CLIENTS clients, N_SYNC requests (group commit)
#   always-setload  the same through bench/set_load.c, which costs less client CPU per
#                   request than redis-benchmark (whose ceiling is near the figures here)
#   off-setload     the same with the AOF off: what each server does without it
#
# Reported: requests/s, the server's CPU per request (every thread of the
# process, io_uring's io-wq workers included), their medians and the
# ratios ringkv / Redis.
#
#   bench/aof.sh [RINGKV_BINARY]
# Knobs: ROUNDS (3), CLIENTS (50), N_PIPE (2000000), N_SYNC (200000),
# R_KEYS (1000000), THREADS (1), SERVER_CPU (0), CLIENT_CPU (1),
# CASES ("everysec always always-setload off-setload"), OUT (bench/RESULTS_AOF.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=$(realpath "${1:-${RINGKV:-$ROOT/build/ringkv}}")
REDIS=${REDIS:-$(command -v redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark)}
CLI=${CLI:-$(command -v redis-cli)}
CASES=${CASES:-everysec always always-setload off-setload}
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

# start KIND POLICY: a fresh server with the AOF on (POLICY "off": off), in a directory of its own
start() {
    local dir=$WORK/$1 aof=(--appendonly yes --appendfsync "$2")
    [ "$2" = off ] && aof=(--appendonly no)
    rm -rf "$dir" && mkdir -p "$dir"
    PORT=$(free_port)
    case "$1" in
        redis) taskset -c "$SERVER_CPU" "$REDIS" --port "$PORT" --bind 127.0.0.1 --save "" --dir "$dir" \
                   "${aof[@]}" >"$dir.log" 2>&1 & ;;
        ringkv) taskset -c "$SERVER_CPU" "$RINGKV" --port "$PORT" --bind 127.0.0.1 --threads "$THREADS" \
                   --save "" --dir "$dir" "${aof[@]}" >"$dir.log" 2>&1 & ;;
    esac
    SERVER_PID=$!
    wait_ready "$1" "$dir.log"
}

# run KIND CASE: "rps cpu_us_per_request"
run() {
    local policy=${2%-setload} p=1 n=$N_SYNC t0 t1 out hz
    [ "$2" = everysec ] && { p=16; n=$N_PIPE; }
    start "$1" "$policy"
    hz=$(getconf CLK_TCK)
    t0=$(cpu_ticks "$SERVER_PID")
    if [ "$2" = "$policy" ]; then
        out=$(taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$CLIENTS" -P "$p" -n "$n" -r "$R_KEYS" -t set -q \
              2>/dev/null | tr '\r' '\n' | grep 'requests per second' | tail -1 | awk '{ print $2 }')
    else
        out=$(taskset -c "$CLIENT_CPU" "$WORK/set_load" "$PORT" "$CLIENTS" "$p" "$n" "$R_KEYS" | awk '{ print $3 }')
    fi
    t1=$(cpu_ticks "$SERVER_PID")
    [ "$policy" = off ] ||
        [ "$("$CLI" -p "$PORT" info persistence | tr -d '\r' | awk -F: '$1 == "aof_enabled" { print $2 }')" = 1 ] ||
        die "$1: the AOF is not on"
    stop_server
    echo "$out" | awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$n" '{ printf "%s %.2f\n", $1, t * 1e6 / hz / n }'
}

gcc -O2 -std=gnu17 -Wall -Wextra -Werror -o "$WORK/set_load" "$ROOT/bench/set_load.c"
results=$WORK/results
: >"$results"
for round in $(seq 1 "$ROUNDS"); do
    for c in $CASES; do
        for kind in redis ringkv; do
            log "round $round: $kind $c"
            echo "$c $kind $(run "$kind" "$c")" >>"$results"
        done
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
    echo "N $N_PIPE; always: P 1, N $N_SYNC), or \`taskset -c $CLIENT_CPU set_load PORT $CLIENTS 1 $N_SYNC $R_KEYS\`"
    echo "(bench/set_load.c; off: \`--appendonly no\`). CPU per request: every thread of the server process"
    echo "(io_uring's io-wq workers included). Medians of $ROUNDS rounds."
    echo
    echo "| case | load | Redis req/s | ringkv req/s | ratio | Redis CPU µs/req | ringkv CPU µs/req | ratio |"
    echo "|---|---|---|---|---|---|---|---|"
    for c in $CASES; do
        rr=$(med "$c" redis 3); kr=$(med "$c" ringkv 3); rc=$(med "$c" redis 4); kc=$(med "$c" ringkv 4)
        case $c in
            everysec) load="redis-benchmark -P 16" ;;
            always) load="redis-benchmark -P 1" ;;
            *) load="set_load -P 1" ;;
        esac
        echo "| ${c%-setload} | $load | $(fmt_rps "$rr") | $(fmt_rps "$kr") | $(ratio "$kr" "$rr") | $rc | $kc | $(ratio "$kc" "$rc") |"
    done
} >"$OUT"
cat "$OUT"
