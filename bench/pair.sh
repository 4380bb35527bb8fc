#!/usr/bin/env bash
# bench/pair.sh -- paired A/B of server configurations, for small differences.
#
# compare.sh runs each server for minutes before the next one, and on a shared
# VM the CPU cost of one and the same binary drifts by 10-15% over that time.
# This script alternates the configurations every few seconds instead (one
# redis-benchmark run each, a fresh server each time, the same pinning as
# compare.sh) and reports, per configuration, the median CPU per request and
# the median over rounds of its ratio to the first configuration: two runs
# that close in time share most of the drift.
#
#   bench/pair.sh "t1:build/ringkv:--threads 1" "t2:build/ringkv:--threads 2"
#   ROUNDS=8 P=16 N=3000000 bench/pair.sh "new:build/ringkv:--threads 2" "old:/tmp/old/ringkv:--threads 2"
#
# A configuration is LABEL:BINARY:ARGS (ARGS split on spaces).
# Knobs: ROUNDS (6), P (64), N (8000000), TEST (set), CMD (a command line
# to run instead of TEST, e.g. CMD="XADD s * f v"), CLIENTS (50),
# KEYSPACE (1000000; empty for no -r), SERVER_CPU (0), CLIENT_CPU (1).
set -euo pipefail

ROUNDS=${ROUNDS:-6}
P=${P:-64}
N=${N:-8000000}
TEST=${TEST:-set}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE-1000000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BENCH=${BENCH:-redis-benchmark}
CLI=${CLI:-redis-cli}
SERVER_PID=
LOG=$(mktemp)
source "$(dirname "$0")/lib.sh"
trap 'stop_server; rm -f "$LOG"' EXIT

[ $# -ge 1 ] || die "usage: bench/pair.sh LABEL:BINARY:ARGS ..."
# shellcheck disable=SC2206
if [ -n "${CMD:-}" ]; then set -f; WHAT=($CMD); set +f; TEST=$CMD; else WHAT=(-t "$TEST"); fi

# One run: a fresh server, one redis-benchmark, its CPU ticks; prints µs/request.
run_one() {
    local bin=$1 args=$2 t0 t1
    PORT=$(free_port)
    # shellcheck disable=SC2086
    taskset -c "$SERVER_CPU" "$bin" --port "$PORT" --bind 127.0.0.1 --save "" $args >"$LOG" 2>&1 &
    SERVER_PID=$!
    wait_ready "$bin $args" "$LOG"
    t0=$(cpu_ticks "$SERVER_PID")
    # a bounded run: redis-benchmark spins forever if its server goes away
    timeout 300 taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$CLIENTS" -P "$P" -n "$N" \
        ${KEYSPACE:+-r "$KEYSPACE"} --csv "${WHAT[@]}" >/dev/null 2>&1 || die "redis-benchmark failed"
    t1=$(cpu_ticks "$SERVER_PID")
    stop_server
    awk -v d="$((t1 - t0))" -v n="$N" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.4f", d / hz * 1e6 / n }'
}


declare -A runs
labels=()
for cfg in "$@"; do labels+=("${cfg%%:*}"); done
for round in $(seq 1 "$ROUNDS"); do
    for cfg in "$@"; do
        label=${cfg%%:*}; rest=${cfg#*:}; bin=${rest%%:*}; args=${rest#*:}
        [ "$args" = "$rest" ] && args=
        v=$(run_one "$bin" "$args")
        runs[$label]="${runs[$label]:-} $v"
        log "round $round $label: $v µs/req"
    done
done

first=${labels[0]}
echo "$TEST -P $P -n $N ${KEYSPACE:+-r $KEYSPACE}, $ROUNDS rounds, server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU"
echo "| config | median µs CPU/req | median of per-round ratios to $first | every round |"
echo "|---|---|---|---|"
for label in "${labels[@]}"; do
    ratios=$(paste <(echo "${runs[$first]}" | tr ' ' '\n' | grep -v '^$') \
                   <(echo "${runs[$label]}" | tr ' ' '\n' | grep -v '^$') | awk '{ printf "%s ", $2 / $1 }')
    printf '| %s | %s | %.3f | %s |\n' "$label" "$(echo "${runs[$label]}" | median)" \
        "$(echo "$ratios" | median)" "$(echo "${runs[$label]}" | xargs)"
done
