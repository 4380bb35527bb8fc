#!/usr/bin/env bash
# bench/track.sh -- GET with CLIENT TRACKING on (RESP3), side by side with
# redis-server: server CPU per request, the server pinned to SERVER_CPU and
# the client (bench/track_get.c, built here) to CLIENT_CPU. Rounds alternate
# the servers, each a fresh process with the keys loaded before the
# measured run; the medians are printed.
#
#   bench/track.sh [RINGKV_BINARY]
# Knobs: ROUNDS (5), CLIENTS (50), P (16), N (2000000), KEYSPACE (100000),
# TRACKING (1), THREADS (1), SERVER_CPU (0), CLIENT_CPU (1).
set -euo pipefail
cd "$(dirname "$0")/.."
RINGKV=${1:-build/ringkv}
REDIS=${REDIS:-redis-server}
ROUNDS=${ROUNDS:-5}; CLIENTS=${CLIENTS:-50}; P=${P:-16}; N=${N:-2000000}; KEYSPACE=${KEYSPACE:-100000}
TRACKING=${TRACKING:-1}; THREADS=${THREADS:-1}; SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
BIN=$(mktemp -d)
trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "$BIN"' EXIT
cc -O2 -o "$BIN/track_get" bench/track_get.c
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
run() {   # KIND -> "us_per_req req_per_s"
    local kind=$1 p; p=$(port)
    if [ "$kind" = redis ]; then
        taskset -c "$SERVER_CPU" "$REDIS" --port "$p" --bind 127.0.0.1 --save "" --appendonly no >/dev/null 2>&1 &
    else
        taskset -c "$SERVER_CPU" "$RINGKV" --port "$p" --bind 127.0.0.1 --threads "$THREADS" --save "" >/dev/null 2>&1 &
    fi
    PID=$!
    for _ in $(seq 100); do redis-cli -p "$p" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
    taskset -c "$CLIENT_CPU" "$BIN/track_get" "$p" 1 1 0 "$KEYSPACE" >/dev/null
    local t0 t1 out hz; hz=$(getconf CLK_TCK); t0=$(ticks "$PID")
    out=$(LOAD=0 TRACKING=$TRACKING taskset -c "$CLIENT_CPU" "$BIN/track_get" "$p" "$CLIENTS" "$P" "$N" "$KEYSPACE")
    t1=$(ticks "$PID")
    kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
    local reqs; reqs=$(echo "$out" | awk '{ print $1 }')
    echo "$(( (t1 - t0) * 1000000 / hz * 1000 / reqs ))" "$(echo "$out" | awk '{ print $3 }')"
}
declare -a R K
for i in $(seq "$ROUNDS"); do
    R+=("$(run redis)"); K+=("$(run ringkv)")
    echo "round $i: redis ${R[-1]}  ringkv ${K[-1]}  (ns/req req/s)" >&2
done
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
r=$(printf '%s\n' "${R[@]}" | awk '{ print $1 }' | med); k=$(printf '%s\n' "${K[@]}" | awk '{ print $1 }' | med)
rq=$(printf '%s\n' "${R[@]}" | awk '{ print $2 }' | med); kq=$(printf '%s\n' "${K[@]}" | awk '{ print $2 }' | med)
echo "GET, tracking=$TRACKING, $CLIENTS clients, -P $P, keyspace $KEYSPACE: server CPU ns/request redis $r, ringkv $k (ratio $(awk -v a="$k" -v b="$r" 'BEGIN { printf "%.2f", a / b }')); req/s redis $rq, ringkv $kq"
