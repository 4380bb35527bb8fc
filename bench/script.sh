#!/usr/bin/env bash
# bench/script.sh -- Lua scripts, pipelined, side by side with Debian's
# redis-server (issue 11). Each round starts a fresh server of each kind in
# turn, pinned to SERVER_CPU; redis-benchmark runs on CLIENT_CPU with
# CLIENTS connections and -P P. The figure is the server's CPU time
# (utime+stime of all its threads, /proc/PID/stat) per script call; the
# tables give medians over the rounds and the ratios the issue sets:
#
#   evalsha-incr   EVALSHA of "return redis.call('incr',KEYS[1])", one random
#                  key: ringkv-t1 / redis <= 0.6
#   broker         a broker-style script of ten calls on one key's shard
#                  (LPUSH, LTRIM, LLEN, HSET, HINCRBY, HGET, EXPIRE, INCR, GET,
#                  PUBLISH), keys {qN}...: ringkv-t1 / redis <= 0.7
#   one-shard      --threads 2, INCR of two declared keys on one shard
#   two-shards     --threads 2, the same keys on the two shards: <= 2x one-shard
#   undeclared     --threads 2, the two-shard keys named in ARGV, numkeys 0
#                  (learned from the first run on): <= 2x one-shard
#
#   bench/script.sh [RINGKV_BINARY]
# Knobs: ROUNDS (3), CLIENTS (50), P (16), N (1000000), CASES (all),
# SERVER_CPU (0), CLIENT_CPU (1), OUT (bench/RESULTS_SCRIPT.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=$(realpath "${1:-${RINGKV:-$ROOT/build/ringkv}}")
REDIS=${REDIS:-$(command -v redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark)}
CLI=${CLI:-redis-cli}
ROUNDS=${ROUNDS:-3}; CLIENTS=${CLIENTS:-50}; P=${P:-16}; N=${N:-1000000}
CASES=${CASES:-"evalsha-incr broker one-shard two-shards undeclared"}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-$ROOT/bench/RESULTS_SCRIPT.md}
KEEP_WORK=${KEEP_WORK:-0}
SERVER_PID=
WORK=$(mktemp -d /tmp/ringkv-script.XXXXXX)
CMDLOG=$WORK/commands
: >"$CMDLOG"
source "$ROOT/bench/lib.sh"
trap bench_cleanup EXIT
[ -x "$RINGKV" ] || die "$RINGKV not found: build it first"
HZ=$(getconf CLK_TCK)

INCR='return redis.call("incr",KEYS[1])'
BROKER='redis.call("lpush",KEYS[1],ARGV[1]) redis.call("ltrim",KEYS[1],0,99) redis.call("llen",KEYS[1])
redis.call("hset",KEYS[2],"last",ARGV[1]) redis.call("hincrby",KEYS[2],"n",1) redis.call("hget",KEYS[2],"n")
redis.call("expire",KEYS[2],3600) redis.call("incr",KEYS[3]) redis.call("publish","events",ARGV[1])
return redis.call("get",KEYS[3])'
PAIR='redis.call("incr",KEYS[1]) return redis.call("incr",KEYS[2])'
PAIR_ARGV='redis.call("incr",ARGV[1]) return redis.call("incr",ARGV[2])'
# {t}a and {t}b share a shard with two threads; {t}a and {u}b do not
# (bench/multi.sh checks the same pairs)

servers_of() {
    case "$1" in
        evalsha-incr|broker) echo "redis ringkv-t1 ringkv-t2" ;;
        *) echo "ringkv-t2" ;;
    esac
}

# args_of CASE SHA: the redis-benchmark command
args_of() {
    case "$1" in
        evalsha-incr) echo "EVALSHA $2 1 key:__rand_int__" ;;
        broker) echo "EVALSHA $2 3 {q__rand_int__}list {q__rand_int__}hash {q__rand_int__}count msg" ;;
        one-shard) echo "EVALSHA $2 2 {t}a {t}b" ;;
        two-shards) echo "EVALSHA $2 2 {t}a {u}b" ;;
        undeclared) echo "EVALSHA $2 0 {t}a {u}b" ;;
    esac
}

body_of() {
    case "$1" in
        evalsha-incr) echo "$INCR" ;;
        broker) echo "$BROKER" ;;
        one-shard|two-shards) echo "$PAIR" ;;
        undeclared) echo "$PAIR_ARGV" ;;
    esac
}

# run CASE KIND: prints server CPU microseconds per call
run() {
    local case=$1 kind=$2 sha t0 t1 args first
    start_server "$kind"
    sha=$("$CLI" -p "$PORT" script load "$(body_of "$case")")
    args=$(args_of "$case" "$sha")
    # shellcheck disable=SC2086
    first=$("$CLI" -p "$PORT" $args 2>&1)   # the first run learns (undeclared)
    case "$first" in ERR*|NOSCRIPT*|WRONGTYPE*) die "$case on $kind: $first" ;; esac
    echo "taskset -c $CLIENT_CPU $BENCH -p PORT -c $CLIENTS -P $P -n $N -r 100000 $args" >>"$CMDLOG"
    t0=$(cpu_ticks "$SERVER_PID")
    # shellcheck disable=SC2086
    taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$CLIENTS" -P "$P" -n "$N" -r 100000 -q $args >"$WORK/bench.out" 2>&1
    t1=$(cpu_ticks "$SERVER_PID")
    if grep -qi "error" "$WORK/bench.out"; then cat "$WORK/bench.out" >&2; die "$case on $kind: errors"; fi
    stop_server
    awk -v t="$((t1 - t0))" -v hz="$HZ" -v n="$N" 'BEGIN { printf "%.3f", t / hz * 1e6 / n }'
}


declare -A RES
for round in $(seq 1 "$ROUNDS"); do
    for case in $CASES; do
        for kind in $(servers_of "$case"); do
            v=$(run "$case" "$kind")
            log "round $round $case $kind: $v us/call"
            RES[$case,$kind]="${RES[$case,$kind]:-} $v"
        done
    done
done

m() { echo "${RES[$1,$2]:-}" | median; }
{
    echo "# Scripts: server CPU per call (bench/script.sh)"
    echo
    echo "$(date -u +%Y-%m-%d), $(nproc) CPUs; server on CPU $SERVER_CPU, redis-benchmark on CPU $CLIENT_CPU;"
    echo "$ROUNDS rounds, medians; CLIENTS=$CLIENTS P=$P N=$N. Commands:"
    echo
    echo '```'
    cat "$CMDLOG"
    echo '```'
    echo
    echo "| case | redis us/call | ringkv-t1 us/call | ringkv-t2 us/call | t1/redis | t2/redis |"
    echo "|---|---:|---:|---:|---:|---:|"
    for case in evalsha-incr broker; do
        [[ " $CASES " == *" $case "* ]] || continue
        r=$(m "$case" redis); a=$(m "$case" ringkv-t1); b=$(m "$case" ringkv-t2)
        echo "| $case | $r | $a | $b | $(ratio "$a" "$r") | $(ratio "$b" "$r") |"
    done
    echo
    echo "| case (ringkv --threads 2) | us/call | ratio to one-shard |"
    echo "|---|---:|---:|"
    one=$(m one-shard ringkv-t2)
    for case in one-shard two-shards undeclared; do
        [[ " $CASES " == *" $case "* ]] || continue
        v=$(m "$case" ringkv-t2)
        echo "| $case | $v | $(ratio "$v" "$one") |"
    done
    echo
    echo "Every run (us/call):"
    echo
    for k in "${!RES[@]}"; do echo "- $k:${RES[$k]}"; done | sort
} >"$OUT"
cat "$OUT"
