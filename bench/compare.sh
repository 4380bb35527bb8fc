#!/usr/bin/env bash
# ringkv vs Redis, side by side, as docs in /work/shared/brief/bench.md ask:
#   - servers started fresh in turn (ringkv-t1, redis, ringkv-t2, then again),
#     server pinned to CPU $SERVER_CPU, redis-benchmark pinned to $CLIENT_CPU;
#   - SET and GET, 50 clients, -r 1000000, pipelines 1, 16, 64: requests/s,
#     p50/p99/max latency (redis-benchmark --csv) and the server's CPU time per
#     request (utime+stime of all its threads, before and after each run);
#   - medians over the rounds and ratios ringkv/redis;
#   - memory: 5M keys key:%012d -> 16-byte values through redis-cli --pipe,
#     RSS per key over the empty server;
#   - idle connections: RSS per connection for 8000 connections, one PING each;
#   - ringkv --threads 2 against --threads 1, CPU per request.
# Writes bench/RESULTS.md (override with OUT=...). Usage and knobs: bench/README.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=${RINGKV:-$ROOT/build/ringkv}
REDIS=${REDIS:-$(command -v redis-server || echo /usr/bin/redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark || echo /usr/bin/redis-benchmark)}
CLI=${CLI:-$(command -v redis-cli || echo /usr/bin/redis-cli)}
ROUNDS=${ROUNDS:-2}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-1000000}
PIPELINES=${PIPELINES:-"1 16 64"}
TESTS=${TESTS:-"set get"}
# -n per pipeline depth: a few seconds per run on the reference machine
N_P1=${N_P1:-200000}
N_P16=${N_P16:-3000000}
N_P64=${N_P64:-6000000}
N_OTHER=${N_OTHER:-1000000}
# tail latency at many connections: -P 1, -n $N_P1, these client counts
MANY_CLIENTS=${MANY_CLIENTS-"1000 5000"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
# ringkv thread counts to run; 2 runs on the same CPU set as 1 (see README)
RINGKV_THREADS=${RINGKV_THREADS:-"1 2"}
MEM_KEYS=${MEM_KEYS:-5000000}
IDLE_CONNS=${IDLE_CONNS:-8000}
SKIP_THROUGHPUT=${SKIP_THROUGHPUT:-0}
SKIP_MEM=${SKIP_MEM:-0}
SKIP_IDLE=${SKIP_IDLE:-0}
IDLE_SETTLE=${IDLE_SETTLE:-3}
SKIP_REDIS=${SKIP_REDIS:-0}
# FLOOR=1: run bench/floor_server.c too (answers +OK, keeps nothing: the
# kernel's TCP and io_uring cost per request, under which no server goes)
FLOOR=${FLOOR:-0}
OUT=${OUT:-$ROOT/bench/RESULTS.md}
WORK=$(mktemp -d /tmp/ringkv-bench.XXXXXX)
KEEP_WORK=${KEEP_WORK:-0}

CLK_TCK=$(getconf CLK_TCK)
RECORDS=$WORK/records.tsv       # kind test P round rps p50 p99 max cpu_us_per_req n clients
MEMREC=$WORK/mem.tsv            # kind keys rss0_kb rss1_kb used0 used1 dbsize
IDLEREC=$WORK/idle.tsv          # kind conns rss0_kb rss1_kb
CMDLOG=$WORK/commands.txt
: >"$RECORDS"; : >"$MEMREC"; : >"$IDLEREC"; : >"$CMDLOG"

SERVER_PID=
PORT=
HELPER_PID=

. "$ROOT/bench/lib.sh"

trap bench_cleanup EXIT
trap 'exit 130' INT TERM
require_tools $( [ "$SKIP_REDIS" = 1 ] || echo redis )
taskset -c "$SERVER_CPU" true 2>/dev/null || die "cannot run on CPU(s) $SERVER_CPU"
taskset -c "$CLIENT_CPU" true 2>/dev/null || die "cannot run on CPU(s) $CLIENT_CPU"

# 8000 idle connections need descriptors on both sides; children inherit this
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# Warn when a server thread may run outside SERVER_CPU (it would take the
# client's CPU and the comparison would be unfair).
AFFINITY_NOTES=$WORK/affinity.txt
: >"$AFFINITY_NOTES"

n_for() {
    case "$1" in 1) echo "$N_P1" ;; 16) echo "$N_P16" ;; 64) echo "$N_P64" ;; *) echo "$N_OTHER" ;; esac
}

# run_one KIND TEST P ROUND [CLIENTS]
run_one() {
    local kind=$1 t=$2 p=$3 round=$4 clients=${5:-$CLIENTS} n csv c0 c1 line
    n=$(n_for "$p")
    c0=$(cpu_ticks "$SERVER_PID")
    csv=$(taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$clients" -r "$KEYSPACE" -n "$n" -P "$p" -t "$t" --csv 2>"$WORK/bench.err")
    c1=$(cpu_ticks "$SERVER_PID")
    if grep -q . "$WORK/bench.err"; then log "redis-benchmark stderr: $(head -c 300 "$WORK/bench.err")"; fi
    # "SET","123.45","avg","min","p50","p95","p99","max"
    line=$(echo "$csv" | tr -d '"' | awk -F, -v T="$(echo "$t" | tr a-z A-Z)" '$1 == T { print $2, $5, $7, $8 }')
    [ -n "$line" ] || die "no result from redis-benchmark for $t (output: $csv)"
    set -- $line
    local cpu_us
    cpu_us=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v hz="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) * 1e6 / hz / n }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$t" "$p" "$round" "$1" "$2" "$3" "$4" "$cpu_us" "$n" "$clients" >>"$RECORDS"
    log "$kind $t P$p c$clients round $round: $1 rps, p50 $2 p99 $3 max $4 ms, $cpu_us us CPU/req"
}

KINDS=""
for t in $RINGKV_THREADS; do
    KINDS="$KINDS ringkv-t$t"
    [ "$t" = 1 ] && [ "$SKIP_REDIS" != 1 ] && KINDS="$KINDS redis"
done
case " $KINDS " in *" redis "*) ;; *) [ "$SKIP_REDIS" = 1 ] || KINDS="$KINDS redis" ;; esac
if [ "$FLOOR" = 1 ]; then
    FLOOR_BIN=$WORK/floor_server
    gcc -O2 -std=c17 -Wall -Wextra -Werror -o "$FLOOR_BIN" "$ROOT/bench/floor_server.c" -luring
    KINDS="$KINDS floor"
fi

started=$(date +%s)
if [ "$SKIP_THROUGHPUT" != 1 ]; then
    for round in $(seq 1 "$ROUNDS"); do
        for kind in $KINDS; do
            start_server "$kind"
            for p in $PIPELINES; do
                for t in $TESTS; do run_one "$kind" "$t" "$p" "$round"; done
            done
            for nc in $MANY_CLIENTS; do
                for t in $TESTS; do run_one "$kind" "$t" 1 "$round" "$nc"; done
            done
            [ "$round" != 1 ] || check_affinity "$kind"
            stop_server
        done
    done
fi

# ------------------------------------------------------------------ memory
gen_keys() {
    # key:%012d -> 16-byte value, as RESP
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
        printf "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$16\r\nvalue:%010d\r\n", i, i }'
}

if [ "$SKIP_MEM" != 1 ]; then
    for kind in ringkv-t1 $( [ "$SKIP_REDIS" = 1 ] || echo redis ); do
        start_server "$kind"
        sleep 0.5
        rss0=$(rss_kb "$SERVER_PID"); used0=$(used_memory); used0=${used0:-NA}
        log "$kind: loading $MEM_KEYS keys through redis-cli --pipe"
        gen_keys "$MEM_KEYS" | taskset -c "$CLIENT_CPU" "$CLI" -p "$PORT" --pipe >"$WORK/pipe.out" 2>&1 ||
            { cat "$WORK/pipe.out" >&2; die "redis-cli --pipe failed"; }
        grep -q "errors: 0, replies: $MEM_KEYS" "$WORK/pipe.out" || { cat "$WORK/pipe.out" >&2; die "load incomplete"; }
        sleep 2
        rss1=$(rss_kb "$SERVER_PID"); used1=$(used_memory); used1=${used1:-NA}
        dbsize=$("$CLI" -p "$PORT" dbsize)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$MEM_KEYS" "$rss0" "$rss1" "$used0" "$used1" "$dbsize" >>"$MEMREC"
        log "$kind: RSS $rss0 KB -> $rss1 KB, dbsize $dbsize"
        stop_server
    done
fi

# ------------------------------------------------------------------ idle connections
if [ "$SKIP_IDLE" != 1 ]; then
    gcc -O2 -std=gnu17 -Wall -Wextra -Werror -o "$WORK/idle_conns" "$ROOT/bench/idle_conns.c"
    for kind in ringkv-t1 $( [ "$SKIP_REDIS" = 1 ] || echo redis ); do
        start_server "$kind"
        sleep 0.5
        rss0=$(rss_kb "$SERVER_PID")
        taskset -c "$CLIENT_CPU" "$WORK/idle_conns" "$PORT" "$IDLE_CONNS" >"$WORK/idle.out" 2>&1 &
        HELPER_PID=$!
        for i in $(seq 1 600); do
            grep -q '^ready' "$WORK/idle.out" && break
            kill -0 "$HELPER_PID" 2>/dev/null || { cat "$WORK/idle.out" >&2; die "idle_conns failed"; }
            sleep 0.1
        done
        grep -q '^ready' "$WORK/idle.out" || die "idle_conns did not get ready"
        # idle for IDLE_SETTLE s: both servers give an idle client's buffers
        # back after a while (Redis's clientsCron after 2 s, ringkv's after 1)
        sleep "$IDLE_SETTLE"
        rss1=$(rss_kb "$SERVER_PID")
        printf '%s\t%s\t%s\t%s\n' "$kind" "$IDLE_CONNS" "$rss0" "$rss1" >>"$IDLEREC"
        log "$kind: $IDLE_CONNS idle connections: RSS $rss0 KB -> $rss1 KB"
        kill "$HELPER_PID"; wait "$HELPER_PID" 2>/dev/null || true; HELPER_PID=
        stop_server
    done
fi
elapsed=$(( $(date +%s) - started ))

# ------------------------------------------------------------------ report
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# med KIND TEST P FIELD(5=rps 6=p50 7=p99 8=max 9=cpu) [CLIENTS]
med() { awk -F'\t' -v k="$1" -v t="$2" -v p="$3" -v f="$4" -v c="${5:-$CLIENTS}" \
            '$1 == k && $2 == t && $3 == p && $11 == c { print $f }' "$RECORDS" | median; }

{
    echo "# ringkv vs Redis: results"
    echo
    echo "Generated by \`bench/compare.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') in ${elapsed}s."
    echo
    echo "- machine: $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)"
    echo "- ringkv: \`$RINGKV\` ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown commit))"
    echo "- reference: $("$REDIS" --version 2>/dev/null | head -1)"
    echo "- client: $("$BENCH" --version 2>/dev/null | head -1), pinned to CPU $CLIENT_CPU; servers pinned to CPU $SERVER_CPU"
    echo "- rounds: $ROUNDS (servers started fresh in turn:$KINDS); figures are medians over the rounds"
    echo "- $CLIENTS clients, -r $KEYSPACE; -n $N_P1 at -P 1, $N_P16 at -P 16, $N_P64 at -P 64"
    echo "- CPU/req: utime+stime of all server threads (/proc/PID/stat) over the run, divided by -n"
    if [ -s "$AFFINITY_NOTES" ]; then
        echo "- **warning: some server threads were allowed outside CPU $SERVER_CPU; figures may be unfair:**"
        sort -u "$AFFINITY_NOTES" | sed 's/^/  - /'
    fi
    echo
    if [ -s "$RECORDS" ]; then
        echo "## Throughput, latency and CPU per request (ringkv --threads 1 vs Redis)"
        echo
        echo "| test | -P | ringkv rps | redis rps | rps ratio | ringkv µs CPU/req | redis µs CPU/req | CPU ratio | ringkv p50 / p99 / max ms | redis p50 / p99 / max ms |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
        for t in $TESTS; do for p in $PIPELINES; do
            kr=$(med ringkv-t1 "$t" "$p" 5); rr=$(med redis "$t" "$p" 5)
            kc=$(med ringkv-t1 "$t" "$p" 9); rc=$(med redis "$t" "$p" 9)
            echo "| $(echo "$t" | tr a-z A-Z) | $p | $(fmt_rps "$kr") | $(fmt_rps "$rr") | $(ratio "$kr" "$rr") | $(fmt "$kc") | $(fmt "$rc") | $(ratio "$kc" "$rc") | $(fmt "$(med ringkv-t1 "$t" "$p" 6)") / $(fmt "$(med ringkv-t1 "$t" "$p" 7)") / $(fmt "$(med ringkv-t1 "$t" "$p" 8)") | $(fmt "$(med redis "$t" "$p" 6)") / $(fmt "$(med redis "$t" "$p" 7)") / $(fmt "$(med redis "$t" "$p" 8)") |"
        done; done
        echo
        echo "Ratios are ringkv / redis: above 1 is better for rps, below 1 is better for CPU."
        echo
        others=$(echo "$RINGKV_THREADS" | tr ' ' '\n' | grep -vx 1 || true)
        if [ -n "$others" ]; then
            echo "## ringkv threads: CPU per request"
            echo
            echo "All thread counts run with the same pinning (server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU), so the"
            echo "server's threads share one CPU. On a 2-CPU machine whose other CPU drives the load, this does not"
            echo "measure scaling; it measures what sharding costs: cross-thread forwarding, batching, wake-ups."
            echo "The goal is CPU per request that stays flat as threads are added."
            echo
            echo "| test | -P | threads | rps | µs CPU/req | CPU vs 1 thread | p99 ms |"
            echo "|---|---|---|---|---|---|---|"
            for t in $TESTS; do for p in $PIPELINES; do for n in $RINGKV_THREADS; do
                c=$(med "ringkv-t$n" "$t" "$p" 9); c1=$(med ringkv-t1 "$t" "$p" 9)
                echo "| $(echo "$t" | tr a-z A-Z) | $p | $n | $(fmt_rps "$(med "ringkv-t$n" "$t" "$p" 5)") | $(fmt "$c") | $(ratio "$c" "$c1") | $(fmt "$(med "ringkv-t$n" "$t" "$p" 7)") |"
            done; done; done
            echo
        fi
        if [ -n "$MANY_CLIENTS" ]; then
            echo "## Many connections: tail latency at -P 1"
            echo
            echo "| test | clients | server | rps | µs CPU/req | p50 / p99 / max ms |"
            echo "|---|---|---|---|---|---|"
            for t in $TESTS; do for nc in $MANY_CLIENTS; do for k in $KINDS; do
                echo "| $(echo "$t" | tr a-z A-Z) | $nc | $k | $(fmt_rps "$(med "$k" "$t" 1 5 "$nc")") | $(fmt "$(med "$k" "$t" 1 9 "$nc")") | $(fmt "$(med "$k" "$t" 1 6 "$nc")") / $(fmt "$(med "$k" "$t" 1 7 "$nc")") / $(fmt "$(med "$k" "$t" 1 8 "$nc")") |"
            done; done; done
            echo
        fi
        echo "<details><summary>every run</summary>"
        echo
        echo "| server | test | -P | clients | round | rps | p50 | p99 | max | µs CPU/req | -n |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|"
        awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $11, $4, $5, $6, $7, $8, $9, $10 }' "$RECORDS"
        echo
        echo "</details>"
        echo
    fi
    if [ -s "$MEMREC" ]; then
        echo "## Memory: $MEM_KEYS string keys (16-byte key, 16-byte value)"
        echo
        echo "| server | keys loaded | RSS empty | RSS loaded | RSS bytes/key | used_memory bytes/key |"
        echo "|---|---|---|---|---|---|"
        awk -F'\t' '{ per = ($4 - $3) * 1024 / $2;
                      um = ($5 == "NA" || $6 == "NA") ? "–" : sprintf("%.1f", ($6 - $5) / $2);
                      printf "| %s | %s | %.1f MB | %.1f MB | %.1f | %s |\n", $1, $7, $3 / 1024, $4 / 1024, per, um }' "$MEMREC"
        echo
    fi
    if [ -s "$IDLEREC" ]; then
        echo "## Idle connections"
        echo
        echo "| server | connections | RSS before | RSS after | bytes/connection |"
        echo "|---|---|---|---|---|"
        awk -F'\t' '{ printf "| %s | %s | %.1f MB | %.1f MB | %.0f |\n", $1, $2, $3 / 1024, $4 / 1024, ($4 - $3) * 1024 / $2 }' "$IDLEREC"
        echo
    fi
    echo "## Commands"
    echo
    echo "Servers (PORT is a free port picked per start):"
    echo
    echo '```'
    cat "$CMDLOG"
    echo '```'
    echo
    echo "Load, per server, test and pipeline depth (CPU ticks of the server read before and after):"
    echo
    echo '```'
    echo "taskset -c $CLIENT_CPU redis-benchmark -p PORT -c $CLIENTS -r $KEYSPACE -n N -P P -t TEST --csv"
    [ -z "$MANY_CLIENTS" ] || echo "taskset -c $CLIENT_CPU redis-benchmark -p PORT -c C -r $KEYSPACE -n $N_P1 -P 1 -t TEST --csv   # C in $MANY_CLIENTS"
    echo '```'
    if [ -s "$MEMREC" ]; then
        echo
        echo "Memory (RSS = VmRSS of /proc/PID/status, 2 s after the load):"
        echo
        echo '```'
        echo "awk 'BEGIN { for (i = 0; i < $MEM_KEYS; i++) printf \"*3\\r\\n\$3\\r\\nSET\\r\\n\$16\\r\\nkey:%012d\\r\\n\$16\\r\\nvalue:%010d\\r\\n\", i, i }' | taskset -c $CLIENT_CPU redis-cli -p PORT --pipe"
        echo '```'
    fi
    if [ -s "$IDLEREC" ]; then
        echo
        echo "Idle connections (bench/idle_conns.c: connect, PING, wait for +PONG, hold; RSS read ${IDLE_SETTLE} s after the last +PONG):"
        echo
        echo '```'
        echo "taskset -c $CLIENT_CPU idle_conns PORT $IDLE_CONNS"
        echo '```'
    fi
    echo
    echo "Reproduce: \`ROUNDS=$ROUNDS bench/compare.sh\` (knobs in bench/README.md)."
    # The profile and what it shows is written by hand: kept across runs.
    if [ -f "$ROOT/bench/PROFILE.md" ]; then
        echo
        cat "$ROOT/bench/PROFILE.md"
    fi
} >"$OUT"
log "wrote $OUT (${elapsed}s)"
