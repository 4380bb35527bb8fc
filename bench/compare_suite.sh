#!/usr/bin/env bash
# ringkv vs Redis on redis-benchmark's default suite (issue 3), side by side,
# with bench/compare.sh's conventions:
#   - servers started fresh in turn (ringkv --threads 1, redis-server, then
#     again for the next round), server pinned to $SERVER_CPU, redis-benchmark
#     to $CLIENT_CPU;
#   - the default suite at -P 16, 50 clients, one redis-benchmark run per line
#     (so that the server's CPU time, utime+stime from /proc/PID/stat read
#     before and after each run, belongs to that line alone), in the suite's
#     order on one server, so every run finds the data the suite's earlier
#     tests leave (LPOP/RPOP pop real elements, LRANGE reads a long list);
#   - requests/s and CPU per request per line, medians over the rounds,
#     ratios ringkv/redis against the issue's targets (rps >= 1.5x on every
#     line; CPU/req <= 0.6x on LPUSH RPOP SADD HSET ZADD ZPOPMIN LRANGE_100);
#   - memory: 1M hashes of 10 small fields, 1M sets of 10 small integers, 1M
#     sorted sets of 10 members (awk -> RESP -> redis-cli --pipe), RSS per key
#     over the empty server, ratio to Redis (target <= 0.7x).
# Writes bench/RESULTS_SUITE.md (override with OUT=...). Knobs: bench/README.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=${RINGKV:-$ROOT/build/ringkv}
REDIS=${REDIS:-$(command -v redis-server || echo /usr/bin/redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark || echo /usr/bin/redis-benchmark)}
CLI=${CLI:-$(command -v redis-cli || echo /usr/bin/redis-cli)}
ROUNDS=${ROUNDS:-2}
CLIENTS=${CLIENTS:-50}
PIPELINE=${PIPELINE:-16}
# -n per line: a few seconds per run on the reference machine. Every line
# except LRANGE_* and MSET uses N (the list tests must share one -n, as in
# the suite, so that LPOP/RPOP find what LPUSH/RPUSH left).
N=${N:-2000000}
N_MSET=${N_MSET:-500000}
N_LRANGE_100=${N_LRANGE_100:-500000}
N_LRANGE=${N_LRANGE:-150000}        # LRANGE_300, _500, _600
# -r for redis-benchmark; empty = none, as in the default suite
KEYSPACE=${KEYSPACE:-}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
MEM_KEYS=${MEM_KEYS:-1000000}
MEM_TYPES=${MEM_TYPES:-"hash set zset"}
SKIP_THROUGHPUT=${SKIP_THROUGHPUT:-0}
SKIP_MEM=${SKIP_MEM:-0}
OUT=${OUT:-$ROOT/bench/RESULTS_SUITE.md}
WORK=$(mktemp -d /tmp/ringkv-bench-suite.XXXXXX)
KEEP_WORK=${KEEP_WORK:-0}
KINDS="ringkv-t1 redis"

# The default suite in redis-benchmark 7.0's order: label | -t name | -n knob.
# LPUSH_LR is the suite's "LPUSH (needed to benchmark LRANGE)": the same LPUSH
# as -t lpush, run again at that point of the suite. LRANGE_* run as the exact
# command redis-benchmark sends for them ("LRANGE mylist 0 99", ...) on the
# list that LPUSH_LR filled: -t lrange_100 would add its own LPUSH prefill of
# -n elements to the run and to its CPU time.
SUITE="PING_INLINE:ping_inline:N PING_MBULK:ping_mbulk:N SET:set:N GET:get:N INCR:incr:N
LPUSH:lpush:N RPUSH:rpush:N LPOP:lpop:N RPOP:rpop:N SADD:sadd:N HSET:hset:N SPOP:spop:N
ZADD:zadd:N ZPOPMIN:zpopmin:N LPUSH_LR:lpush:N LRANGE_100:lrange_100:N_LRANGE_100
LRANGE_300:lrange_300:N_LRANGE LRANGE_500:lrange_500:N_LRANGE LRANGE_600:lrange_600:N_LRANGE
MSET:mset:N_MSET"
CPU_TARGETS=" LPUSH RPOP SADD HSET ZADD ZPOPMIN LRANGE_100 "
SUITE_ONLY=${SUITE_ONLY:-}          # e.g. "SET LPUSH": run only these lines

CLK_TCK=$(getconf CLK_TCK)
RECORDS=$WORK/records.tsv       # kind line round rps cpu_us_per_req n
MEMREC=$WORK/mem.tsv            # kind type keys rss0_kb rss1_kb used0 used1 dbsize
CMDLOG=$WORK/commands.txt
ERRLOG=$WORK/errors.txt
: >"$RECORDS"; : >"$MEMREC"; : >"$CMDLOG"; : >"$ERRLOG"

SERVER_PID=
PORT=

. "$ROOT/bench/lib.sh"

trap bench_cleanup EXIT
trap 'exit 130' INT TERM
require_tools redis
taskset -c "$SERVER_CPU" true 2>/dev/null || die "cannot run on CPU(s) $SERVER_CPU"
taskset -c "$CLIENT_CPU" true 2>/dev/null || die "cannot run on CPU(s) $CLIENT_CPU"
[ "$N" -ge 600 ] || die "N must be at least 600 (LRANGE_600 reads the list LPUSH fills with N elements)"

AFFINITY_NOTES=$WORK/affinity.txt
: >"$AFFINITY_NOTES"

# bench_args TNAME: what follows the common options for this line
bench_args() {
    case "$1" in
        lrange_100) echo "LRANGE mylist 0 99" ;;
        lrange_300) echo "LRANGE mylist 0 299" ;;
        lrange_500) echo "LRANGE mylist 0 499" ;;
        lrange_600) echo "LRANGE mylist 0 599" ;;
        *) echo "-t $1" ;;
    esac
}

# run_line KIND LABEL TNAME N ROUND
run_line() {
    local kind=$1 label=$2 t=$3 n=$4 round=$5 csv c0 c1 rps cpu_us
    local -a rflag=()
    [ -z "$KEYSPACE" ] || rflag=(-r "$KEYSPACE")
    c0=$(cpu_ticks "$SERVER_PID")
    # shellcheck disable=SC2046 # bench_args is split on purpose
    if ! csv=$(taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$CLIENTS" -P "$PIPELINE" -n "$n" "${rflag[@]}" \
                   --csv $(bench_args "$t") 2>"$WORK/bench.err"); then
        echo "$kind $label: redis-benchmark failed: $(tr '\n' ' ' <"$WORK/bench.err" | head -c 300)" | tee -a "$ERRLOG" >&2
        printf '%s\t%s\t%s\tNA\tNA\t%s\n' "$kind" "$label" "$round" "$n" >>"$RECORDS"
        return 0
    fi
    c1=$(cpu_ticks "$SERVER_PID")
    if grep -q . "$WORK/bench.err"; then
        echo "$kind $label: redis-benchmark stderr: $(tr '\n' ' ' <"$WORK/bench.err" | head -c 300)" | tee -a "$ERRLOG" >&2
    fi
    # header, then one row: "NAME","rps",... (the only row: one test per run)
    rps=$(echo "$csv" | tr -d '"\r' | awk -F, 'NR > 1 && NF >= 2 && $2 + 0 > 0 { print $2; exit }')
    [ -n "$rps" ] || { echo "$kind $label: no rate in: $csv" | tee -a "$ERRLOG" >&2; rps=NA; }
    cpu_us=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v hz="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) * 1e6 / hz / n }')
    [ "$rps" != NA ] || cpu_us=NA
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$label" "$round" "$rps" "$cpu_us" "$n" >>"$RECORDS"
    log "$kind $label (-n $n) round $round: $rps rps, $cpu_us us CPU/req"
}

# selected LABEL: on the SUITE_ONLY list (or no list); the LRANGE lines bring
# their list prefill (LPUSH_LR) along
selected() {
    [ -z "$SUITE_ONLY" ] && return 0
    case " $SUITE_ONLY " in *" $1 "*) return 0 ;; esac
    [ "$1" = LPUSH_LR ] && case " $SUITE_ONLY " in *" LRANGE_"*) return 0 ;; esac
    return 1
}

started=$(date +%s)
if [ "$SKIP_THROUGHPUT" != 1 ]; then
    for round in $(seq 1 "$ROUNDS"); do
        for kind in $KINDS; do
            start_server "$kind"
            for e in $SUITE; do
                IFS=: read -r label t nvar <<<"$e"
                selected "$label" || continue
                run_line "$kind" "$label" "$t" "${!nvar}" "$round"
            done
            [ "$round" != 1 ] || check_affinity "$kind"
            stop_server
        done
    done
fi

# ------------------------------------------------------------------ memory
# gen TYPE KEYS: RESP for KEYS keys of TYPE, 10 small elements each
gen() {
    case "$1" in
        hash) awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) {
                  printf "*22\r\n$4\r\nHSET\r\n$14\r\nhash:%09d\r\n", i
                  for (j = 0; j < 10; j++) printf "$6\r\nfield%d\r\n$8\r\nv%07d\r\n", j, (i + j) % 10000000 } }' ;;
        set) awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) {
                  printf "*12\r\n$4\r\nSADD\r\n$13\r\nset:%09d\r\n", i
                  for (j = 0; j < 10; j++) { v = j * 100 + i % 100; printf "$%d\r\n%d\r\n", length(v ""), v } } }' ;;
        zset) awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) {
                  printf "*22\r\n$4\r\nZADD\r\n$14\r\nzset:%09d\r\n", i
                  for (j = 0; j < 10; j++) { s = (i % 1000) + j; printf "$%d\r\n%d\r\n$8\r\nmember:%d\r\n", length(s ""), s, j } } }' ;;
        *) die "unknown memory type $1" ;;
    esac
}

if [ "$SKIP_MEM" != 1 ]; then
    for mt in $MEM_TYPES; do
        for kind in $KINDS; do
            start_server "$kind"
            sleep 0.5
            rss0=$(rss_kb "$SERVER_PID"); used0=$(used_memory); used0=${used0:-NA}
            log "$kind: loading $MEM_KEYS keys of type $mt, 10 elements each, through redis-cli --pipe"
            if ! gen "$mt" "$MEM_KEYS" | taskset -c "$CLIENT_CPU" "$CLI" -p "$PORT" --pipe >"$WORK/pipe.out" 2>&1 ||
               ! grep -q "errors: 0, replies: $MEM_KEYS" "$WORK/pipe.out"; then
                echo "$kind $mt: load failed: $(tr '\n' ' ' <"$WORK/pipe.out" | tail -c 300)" | tee -a "$ERRLOG" >&2
                printf '%s\t%s\t%s\tNA\tNA\tNA\tNA\tNA\n' "$kind" "$mt" "$MEM_KEYS" >>"$MEMREC"
                stop_server
                continue
            fi
            sleep 2
            rss1=$(rss_kb "$SERVER_PID"); used1=$(used_memory); used1=${used1:-NA}
            dbsize=$("$CLI" -p "$PORT" dbsize)
            [ "$dbsize" = "$MEM_KEYS" ] || echo "$kind $mt: dbsize $dbsize after loading $MEM_KEYS keys" | tee -a "$ERRLOG" >&2
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$mt" "$MEM_KEYS" "$rss0" "$rss1" "$used0" "$used1" "$dbsize" >>"$MEMREC"
            log "$kind $mt: RSS $rss0 KB -> $rss1 KB, dbsize $dbsize"
            stop_server
        done
    done
fi
elapsed=$(( $(date +%s) - started ))

# ------------------------------------------------------------------ report
median() { grep -v '^NA$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# med KIND LABEL FIELD(4=rps 5=cpu)
med() { awk -F'\t' -v k="$1" -v l="$2" -v f="$3" '$1 == k && $2 == l { print $f }' "$RECORDS" | median; }
# verdict RATIO OP LIMIT: yes / **no** / –
verdict() { awk -v r="$1" -v op="$2" -v lim="$3" 'BEGIN { if (r == "–") print "–";
            else if ((op == ">=" && r + 0 >= lim) || (op == "<=" && r + 0 <= lim)) print "yes"; else print "**no**" }'; }
label_of() { [ "$1" = LPUSH_LR ] && echo "LPUSH (needed to benchmark LRANGE)" || echo "$1"; }

{
    echo "# ringkv vs Redis: redis-benchmark's default suite and collection memory"
    echo
    echo "Generated by \`bench/compare_suite.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') in ${elapsed}s."
    echo
    echo "- machine: $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)"
    echo "- ringkv: \`$RINGKV\` --threads 1 ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown commit))"
    echo "- reference: $("$REDIS" --version 2>/dev/null | head -1)"
    echo "- client: $("$BENCH" --version 2>/dev/null | head -1), pinned to CPU $CLIENT_CPU; servers pinned to CPU $SERVER_CPU"
    echo "- rounds: $ROUNDS (servers started fresh in turn: $KINDS); figures are medians over the rounds"
    echo "- $CLIENTS clients, -P $PIPELINE, ${KEYSPACE:+-r $KEYSPACE, }-n $N per line (MSET $N_MSET, LRANGE_100 $N_LRANGE_100, LRANGE_300/500/600 $N_LRANGE)"
    echo "- CPU/req: utime+stime of all server threads (/proc/PID/stat) over the line's run, divided by -n"
    if [ -s "$AFFINITY_NOTES" ]; then
        echo "- **warning: some server threads were allowed outside CPU $SERVER_CPU; figures may be unfair:**"
        sort -u "$AFFINITY_NOTES" | sed 's/^/  - /'
    fi
    if [ -s "$ERRLOG" ]; then
        echo "- **errors (lines or loads without a figure):**"
        sed 's/^/  - /' "$ERRLOG"
    fi
    echo
    if [ -s "$RECORDS" ]; then
        echo "## Default suite at -P $PIPELINE, $CLIENTS clients (ringkv --threads 1 vs Redis)"
        echo
        echo "Targets (issue 3): rps ratio ≥ 1.5 on every line; CPU ratio ≤ 0.6 on$CPU_TARGETS(others: –)."
        echo
        echo "| line | ringkv rps | redis rps | rps ratio | ≥ 1.5× | ringkv µs CPU/req | redis µs CPU/req | CPU ratio | ≤ 0.6× |"
        echo "|---|---|---|---|---|---|---|---|---|"
        for e in $SUITE; do
            IFS=: read -r label _ _ <<<"$e"
            selected "$label" || continue
            kr=$(med ringkv-t1 "$label" 4); rr=$(med redis "$label" 4)
            kc=$(med ringkv-t1 "$label" 5); rc=$(med redis "$label" 5)
            rrat=$(ratio "$kr" "$rr"); crat=$(ratio "$kc" "$rc")
            case "$CPU_TARGETS" in *" $label "*) cv=$(verdict "$crat" "<=" 0.6) ;; *) cv="–" ;; esac
            echo "| $(label_of "$label") | $(fmt_rps "$kr") | $(fmt_rps "$rr") | $rrat | $(verdict "$rrat" ">=" 1.5) | $(fmt "$kc") | $(fmt "$rc") | $crat | $cv |"
        done
        echo
        echo "Ratios are ringkv / redis: above 1 is better for rps, below 1 is better for CPU."
        echo
        echo "<details><summary>every run</summary>"
        echo
        echo "| server | line | round | rps | µs CPU/req | -n |"
        echo "|---|---|---|---|---|---|"
        awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$RECORDS"
        echo
        echo "</details>"
        echo
    fi
    if [ -s "$MEMREC" ]; then
        echo "## Memory: $MEM_KEYS keys per type, 10 small elements each"
        echo
        echo "- hash: \`hash:%09d\` → 10 fields \`field0\`..\`field9\` → 8-byte values"
        echo "- set: \`set:%09d\` → 10 integers in 0..999"
        echo "- zset: \`zset:%09d\` → 10 members \`member:0\`..\`member:9\`, integer scores"
        echo
        echo "Target (issue 3): RSS per key ≤ 0.7× Redis's for each type."
        echo
        echo "| type | ringkv RSS bytes/key | redis RSS bytes/key | ratio | ≤ 0.7× | ringkv used_memory bytes/key | redis used_memory bytes/key |"
        echo "|---|---|---|---|---|---|---|"
        for mt in $MEM_TYPES; do
            per() { awk -F'\t' -v k="$1" -v t="$mt" '$1 == k && $2 == t { if ($4 == "NA") print "NA"; else printf "%.1f\n", ($5 - $4) * 1024 / $3 }' "$MEMREC" | head -1; }
            um() { awk -F'\t' -v k="$1" -v t="$mt" '$1 == k && $2 == t { if ($6 == "NA" || $7 == "NA") print "NA"; else printf "%.1f\n", ($7 - $6) / $3 }' "$MEMREC" | head -1; }
            kp=$(per ringkv-t1); rp=$(per redis); kp=${kp:-NA}; rp=${rp:-NA}
            ku=$(um ringkv-t1); ru=$(um redis)
            r=$(ratio "$kp" "$rp")
            echo "| $mt | $(fmt "$kp") | $(fmt "$rp") | $r | $(verdict "$r" "<=" 0.7) | $(fmt "${ku:-NA}") | $(fmt "${ru:-NA}") |"
        done
        echo
        echo "<details><summary>raw</summary>"
        echo
        echo "| server | type | keys | RSS empty KB | RSS loaded KB | used_memory empty | used_memory loaded | dbsize |"
        echo "|---|---|---|---|---|---|---|---|"
        awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$MEMREC"
        echo
        echo "</details>"
        echo
    fi
    echo "## Commands"
    echo
    echo "Servers (PORT is a free port picked per start; each round starts every server fresh, and each"
    echo "memory load gets a fresh server):"
    echo
    echo '```'
    cat "$CMDLOG"
    echo '```'
    echo
    echo "Load: one run per line, in the suite's order on the same server (CPU ticks of the server read"
    echo "before and after each run):"
    echo
    echo '```'
    for e in $SUITE; do
        IFS=: read -r label t nvar <<<"$e"
        selected "$label" || continue
        echo "taskset -c $CLIENT_CPU redis-benchmark -p PORT -c $CLIENTS -P $PIPELINE -n ${!nvar}${KEYSPACE:+ -r $KEYSPACE} --csv $(bench_args "$t")   # $(label_of "$label")"
    done
    echo '```'
    if [ -s "$MEMREC" ]; then
        echo
        echo "Memory (RSS = VmRSS of /proc/PID/status, 2 s after the load, minus the empty server's):"
        echo
        echo '```'
        echo "awk 'BEGIN { for (i = 0; i < $MEM_KEYS; i++) { printf \"*22\\r\\n\$4\\r\\nHSET\\r\\n\$14\\r\\nhash:%09d\\r\\n\", i; for (j = 0; j < 10; j++) printf \"\$6\\r\\nfield%d\\r\\n\$8\\r\\nv%07d\\r\\n\", j, (i + j) % 10000000 } }' | taskset -c $CLIENT_CPU redis-cli -p PORT --pipe"
        echo "awk 'BEGIN { for (i = 0; i < $MEM_KEYS; i++) { printf \"*12\\r\\n\$4\\r\\nSADD\\r\\n\$13\\r\\nset:%09d\\r\\n\", i; for (j = 0; j < 10; j++) { v = j * 100 + i % 100; printf \"\$%d\\r\\n%d\\r\\n\", length(v \"\"), v } } }' | taskset -c $CLIENT_CPU redis-cli -p PORT --pipe"
        echo "awk 'BEGIN { for (i = 0; i < $MEM_KEYS; i++) { printf \"*22\\r\\n\$4\\r\\nZADD\\r\\n\$14\\r\\nzset:%09d\\r\\n\", i; for (j = 0; j < 10; j++) { s = (i % 1000) + j; printf \"\$%d\\r\\n%d\\r\\n\$8\\r\\nmember:%d\\r\\n\", length(s \"\"), s, j } } }' | taskset -c $CLIENT_CPU redis-cli -p PORT --pipe"
        echo '```'
    fi
    echo
    echo "Reproduce: \`ROUNDS=$ROUNDS N=$N N_MSET=$N_MSET N_LRANGE_100=$N_LRANGE_100 N_LRANGE=$N_LRANGE${KEYSPACE:+ KEYSPACE=$KEYSPACE} MEM_KEYS=$MEM_KEYS bench/compare_suite.sh\` (knobs in bench/README.md)."
} >"$OUT"
log "wrote $OUT (${elapsed}s)"
