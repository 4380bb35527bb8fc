#!/usr/bin/env bash
# bench/maxmemory.sh -- a memory limit and eviction side by side with
# Debian's redis-server (issue 14). For each case, ROUNDS rounds, each
# server kind in turn, fresh, pinned to SERVER_CPU, started with
# `--maxmemory MAXMEMORY --maxmemory-policy POLICY` (Redis also `--save ""
# --appendonly no`; ringkv `--threads THREADS --save ""`); the load on
# CLIENT_CPU:
#
#   lru-fill  allkeys-lru. redis-benchmark -t set -P P -c CLIENTS -r R_FILL
#             -d D -n N_FILL: with the defaults 3 GB of values written into a
#             1 GB limit, so most of the run evicts. Reported: requests/s,
#             server CPU per request, peak and final RSS (VmHWM, VmRSS), RSS
#             over the limit, INFO used_memory and evicted_keys and DBSIZE
#             at the end.
#   zipf      for each policy in POLICIES (allkeys-lru, allkeys-lfu): a
#             cache-aside load from bench/zipf_load.c (GET; on nil, SET the
#             value) over K keys of D-byte values, Zipf exponent S: a
#             warm-up of WARM ops (seed 1, -P WARM_P: deeper pipelines only
#             make it faster), then the measured run of MEASURE ops (seed 2,
#             so it does not replay the warm-up) at -c CLIENTS -P P.
#             Reported: hit rate of the measured run, ops/s, server CPU per
#             op (GET plus the SET after a miss), the same memory figures,
#             and the warm-up's hit rate.
#             WARM's default: 60M draws over 30M keys touch about 9.4M
#             distinct keys (the expectation under the Zipf law; 20M draws
#             only 4.4M), more than 1 GB holds of 100-byte values with either
#             server's per-key overhead, so both caches are full and have
#             been evicting for a while when the measured run starts. A note
#             in the report says when a server evicted nothing during the
#             warm-up.
#
# The server's CPU is its utime+stime from /proc/PID/stat (the sum over all
# its threads): around the redis-benchmark run, and from zipf_load's first
# send to its last reply (zipf_load -x PID). Medians over the rounds, ratios
# ringkv / Redis; hit rates differ in points (ringkv minus Redis).
#
#   bench/maxmemory.sh [RINGKV_BINARY]
#   MAXMEMORY=10mb K=300000 N_FILL=600000 WARM=400000 MEASURE=200000 ROUNDS=1 \
#       OUT=/tmp/maxmem.md bench/maxmemory.sh        # smoke test (seconds; figures meaningless)
# Knobs: ROUNDS (3), CASES ("lru-fill zipf"), POLICIES ("allkeys-lru
# allkeys-lfu"), MAXMEMORY (1gb), D (100), N_FILL (30000000), R_FILL (K),
# K (30000000), S (0.99), WARM (60000000), WARM_P (64), MEASURE (10000000),
# CLIENTS (50), P (16), THREADS (1), SETTLE (1: seconds between the end of
# the load and the memory readings), TIMEOUT (1800: seconds a single load
# may take), SERVER_CPU (0), CLIENT_CPU (1), OUT (bench/RESULTS_MAXMEM.md),
# KEEP_WORK (0).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=$(realpath "${1:-${RINGKV:-$ROOT/build/ringkv}}")
REDIS=${REDIS:-$(command -v redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark)}
CLI=${CLI:-$(command -v redis-cli)}
CASES=${CASES:-lru-fill zipf}
POLICIES=${POLICIES:-allkeys-lru allkeys-lfu}
ROUNDS=${ROUNDS:-3}; MAXMEMORY=${MAXMEMORY:-1gb}; D=${D:-100}
K=${K:-30000000}; N_FILL=${N_FILL:-30000000}; R_FILL=${R_FILL:-$K}
S=${S:-0.99}; WARM=${WARM:-60000000}; WARM_P=${WARM_P:-64}; MEASURE=${MEASURE:-10000000}
CLIENTS=${CLIENTS:-50}; P=${P:-16}; THREADS=${THREADS:-1}
SETTLE=${SETTLE:-1}; TIMEOUT=${TIMEOUT:-1800}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-$ROOT/bench/RESULTS_MAXMEM.md}
KEEP_WORK=${KEEP_WORK:-0}
SERVER_PID=
WORK=$(mktemp -d /tmp/ringkv-maxmem.XXXXXX)
source "$ROOT/bench/lib.sh"
trap bench_cleanup EXIT
require_tools redis
HZ=$(getconf CLK_TCK)
NOTES=$WORK/notes
: >"$NOTES"

# the server command lines as the report shows them
server_cmd() {
    case "$1" in
        redis) echo "taskset -c $SERVER_CPU $REDIS --port PORT --bind 127.0.0.1 --save \"\" --appendonly no --maxmemory $MAXMEMORY --maxmemory-policy $2" ;;
        ringkv) echo "taskset -c $SERVER_CPU $RINGKV --port PORT --bind 127.0.0.1 --threads $THREADS --save \"\" --maxmemory $MAXMEMORY --maxmemory-policy $2" ;;
    esac
}

# start KIND POLICY: a fresh server with the limit; checks that it took it
start() {
    local lim=(--maxmemory "$MAXMEMORY" --maxmemory-policy "$2")
    PORT=$(free_port)
    case "$1" in
        redis) taskset -c "$SERVER_CPU" "$REDIS" --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
                   "${lim[@]}" >"$WORK/$1.log" 2>&1 & ;;
        ringkv) taskset -c "$SERVER_CPU" "$RINGKV" --port "$PORT" --bind 127.0.0.1 --threads "$THREADS" --save "" \
                   "${lim[@]}" >"$WORK/$1.log" 2>&1 & ;;
    esac
    SERVER_PID=$!
    wait_ready "$1" "$WORK/$1.log"
    [ "$(config_get maxmemory-policy)" = "$2" ] || die "$1: maxmemory-policy is not $2"
    LIMIT_BYTES=$(config_get maxmemory)
    [ "${LIMIT_BYTES:-0}" -gt 0 ] || die "$1: maxmemory is not set"
}

config_get() { "$CLI" -p "$PORT" config get "$1" | tr -d '\r' | sed -n 2p; }

info_field() { "$CLI" -p "$PORT" info "$1" | tr -d '\r' | awk -F: -v k="$2" '$1 == k { print $2 }'; }

status_kb() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$SERVER_PID/status"; }

# memory figures at the end of a run:
# "peak_rss_mb final_rss_mb peak/limit final/limit used_memory_mb evicted_keys dbsize"
memory_line() {
    sleep "$SETTLE"
    local hwm rss used ev keys
    hwm=$(status_kb VmHWM); rss=$(status_kb VmRSS)
    used=$(info_field memory used_memory); ev=$(info_field stats evicted_keys)
    keys=$("$CLI" -p "$PORT" dbsize | tr -d '\r')
    awk -v h="$hwm" -v r="$rss" -v u="$used" -v l="$LIMIT_BYTES" -v e="${ev:-NA}" -v k="$keys" 'BEGIN {
        printf "%.1f %.1f %.3f %.3f %.1f %s %s", h / 1024, r / 1024, h * 1024 / l, r * 1024 / l, u / 1048576, e, k }'
}

# errors answered during a load: a server out of memory answers -OOM, and
# redis-benchmark would count those as requests served
errors_since() {
    local now
    now=$(info_field stats total_error_replies)
    [ "${now:-0}" = "$1" ] || echo "$2: $(( ${now:-0} - $1 )) error replies during the load" | tee -a "$NOTES" >&2
}

# fill KIND ROUND: appends "lru-fill allkeys-lru KIND ROUND rps cpu_us_per_request <memory_line>"
# to the results (run in the main shell, so that a die stops the server)
fill() {
    start "$1" allkeys-lru
    local t0 t1 out e0
    e0=$(info_field stats total_error_replies)
    t0=$(cpu_ticks "$SERVER_PID")
    out=$(timeout "$TIMEOUT" taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$CLIENTS" -P "$P" -r "$R_FILL" -d "$D" \
              -n "$N_FILL" -t set -q 2>/dev/null | tr '\r' '\n' | grep 'requests per second' | tail -1 | awk '{ print $2 }') ||
        true
    t1=$(cpu_ticks "$SERVER_PID")
    [ -n "$out" ] || die "$1 lru-fill: redis-benchmark gave no rate (timeout $TIMEOUT s or a failure)"
    errors_since "${e0:-0}" "lru-fill $1 round $2"
    local mem
    mem=$(memory_line)
    stop_server
    awk -v r="$out" -v t="$((t1 - t0))" -v hz="$HZ" -v n="$N_FILL" -v m="$mem" -v pre="lru-fill allkeys-lru $1 $2" \
        'BEGIN { printf "%s %s %.3f %s\n", pre, r, t * 1e6 / hz / n, m }' >>"$results"
}

# zipf KIND POLICY ROUND: appends "zipf POLICY KIND ROUND hit_rate ops_per_s cpu_us_per_op <memory_line>
# warm_hit_rate evicted_after_warmup cpu_us_per_command" to the results
zipf() {
    start "$1" "$2"
    local zl=(timeout "$TIMEOUT" taskset -c "$CLIENT_CPU" "$WORK/zipf_load" -p "$PORT" -c "$CLIENTS"
              -r "$K" -s "$S" -d "$D" -m cache)
    local warm out ev_warm
    warm=$("${zl[@]}" -P "$WARM_P" -n "$WARM" -S 1) || die "$1 zipf $2: the warm-up failed"
    ev_warm=$(info_field stats evicted_keys)
    [ "${ev_warm:-0}" -gt 0 ] ||
        echo "zipf $2: $1 evicted nothing during the warm-up (round $3): WARM too small for the limit, or no eviction; the measured run did not start from a full cache" |
            tee -a "$NOTES" >&2
    out=$("${zl[@]}" -P "$P" -n "$MEASURE" -S 2 -x "$SERVER_PID") || die "$1 zipf $2: the measured run failed"
    echo "$1 $2 round $3 warm-up: $warm" >>"$WORK/zipf_raw"
    echo "$1 $2 round $3 measured: $out" >>"$WORK/zipf_raw"
    local mem
    mem=$(memory_line)
    stop_server
    echo "$out" | awk -v hz="$HZ" -v m="$mem" -v w="$warm" -v ew="${ev_warm:-NA}" -v pre="zipf $2 $1 $3" '{
        for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        split(w, wf, " "); wh = "NA"
        for (i in wf) if (wf[i] ~ /^hit_rate=/) wh = substr(wf[i], 10)
        printf "%s %s %s %.3f %s %s %s %.3f\n", pre, f["hit_rate"], f["ops_per_s"], f["server_ticks"] * 1e6 / hz / f["ops"], m,
               wh, ew, f["server_ticks"] * 1e6 / hz / (f["gets"] + f["sets"]) }' \
        >>"$results"
}

if [[ " $CASES " == *" zipf "* ]]; then
    gcc -O2 -std=c17 -Wall -Wextra -Werror -o "$WORK/zipf_load" "$ROOT/bench/zipf_load.c" -lm
fi
results=$WORK/results
: >"$results"
for round in $(seq 1 "$ROUNDS"); do
    for c in $CASES; do
        case $c in
            lru-fill)
                for kind in redis ringkv; do
                    log "round $round: $kind lru-fill"
                    fill "$kind" "$round"
                done ;;
            zipf)
                for pol in $POLICIES; do
                    for kind in redis ringkv; do
                        log "round $round: $kind zipf $pol"
                        zipf "$kind" "$pol" "$round"
                    done
                done ;;
            *) die "unknown case $c" ;;
        esac
    done
done
cat "$results" >&2

# results columns: 1 case, 2 policy, 3 kind, 4 round, then
#   lru-fill: 5 rps, 6 cpu, 7 peak MB, 8 final MB, 9 peak/limit, 10 final/limit, 11 used MB, 12 evicted, 13 keys
#   zipf:     5 hit%, 6 ops/s, 7 cpu, 8 peak MB, 9 final MB, 10 peak/limit, 11 final/limit, 12 used MB,
#             13 evicted, 14 keys, 15 warm-up hit%, 16 evicted after the warm-up, 17 cpu per command
med() { awk -v c="$1" -v p="$2" -v k="$3" -v f="$4" '$1 == c && $2 == p && $3 == k { print $f }' "$results" | median; }
points() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "–"; else printf "%+.2f", a - b }'; }
mb() { awk -v v="$1" 'BEGIN { printf "%.0f", v }'; }

for kind in redis ringkv; do
    for c in $CASES; do
        pols=allkeys-lru; [ "$c" = zipf ] && pols=$POLICIES
        for pol in $pols; do
            evf=13; [ "$c" = lru-fill ] && evf=12
            ev=$(med "$c" "$pol" "$kind" "$evf")
            [ "$ev" != 0 ] ||
                echo "$c $pol: $kind evicted no keys (the limit was not reached, or the server does not evict): its hit rate and memory are not comparable" >>"$NOTES"
        done
    done
done

{
    echo "# A memory limit and eviction (bench/maxmemory.sh)"
    echo
    echo "$(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $("$REDIS" --version | awk '{ print $3 }' | tr -d 'v=')"
    echo "for Redis. Servers on CPU $SERVER_CPU, fresh for each run, limit \`--maxmemory $MAXMEMORY\`"
    echo "($LIMIT_BYTES bytes); loads on CPU $CLIENT_CPU. Medians of $ROUNDS round(s), each column on its own."
    echo "Server CPU: utime+stime of the whole process (/proc/PID/stat). RSS: VmHWM (peak) and VmRSS"
    echo "(final, $SETTLE s after the load) from /proc/PID/status; used_memory, evicted_keys, DBSIZE"
    echo "at the end. ringkv's used_memory is its own accounting, not an allocator's: compare RSS."
    echo
    echo "Commands (PORT, PID: the fresh server's):"
    echo
    echo '```'
    for c in $CASES; do   # a server line shared by two cases once
        case $c in
            lru-fill)
                server_cmd redis allkeys-lru; server_cmd ringkv allkeys-lru
                echo "taskset -c $CLIENT_CPU $BENCH -p PORT -c $CLIENTS -P $P -r $R_FILL -d $D -n $N_FILL -t set -q" ;;
            zipf)
                for pol in $POLICIES; do server_cmd redis "$pol"; server_cmd ringkv "$pol"; done
                echo "gcc -O2 -std=c17 -Wall -Wextra -Werror -o zipf_load bench/zipf_load.c -lm"
                echo "taskset -c $CLIENT_CPU zipf_load -p PORT -c $CLIENTS -P $WARM_P -r $K -s $S -d $D -m cache -n $WARM -S 1           # warm-up"
                echo "taskset -c $CLIENT_CPU zipf_load -p PORT -c $CLIENTS -P $P -r $K -s $S -d $D -m cache -n $MEASURE -S 2 -x PID  # measured" ;;
        esac
    done | awk '!seen[$0]++'
    echo '```'
    for c in $CASES; do   # a server line shared by two cases once
        case $c in
            lru-fill)
                echo
                echo "## lru-fill: SETs of $D-byte values over $R_FILL random keys, $N_FILL requests, allkeys-lru"
                echo
                echo "| server | req/s | CPU µs/req | peak RSS MB | final RSS MB | peak RSS / limit | final RSS / limit | used_memory MB | evicted_keys | keys at the end |"
                echo "|---|---|---|---|---|---|---|---|---|---|"
                for kind in redis ringkv; do
                    echo "| $kind | $(fmt_rps "$(med lru-fill allkeys-lru "$kind" 5)") | $(med lru-fill allkeys-lru "$kind" 6)" \
                         "| $(mb "$(med lru-fill allkeys-lru "$kind" 7)") | $(mb "$(med lru-fill allkeys-lru "$kind" 8)")" \
                         "| $(med lru-fill allkeys-lru "$kind" 9) | $(med lru-fill allkeys-lru "$kind" 10)" \
                         "| $(mb "$(med lru-fill allkeys-lru "$kind" 11)") | $(med lru-fill allkeys-lru "$kind" 12)" \
                         "| $(med lru-fill allkeys-lru "$kind" 13) |"
                done
                r() { ratio "$(med lru-fill allkeys-lru ringkv "$1")" "$(med lru-fill allkeys-lru redis "$1")"; }
                echo "| ringkv / Redis | $(r 5) | $(r 6) | $(r 7) | $(r 8) | | | | | $(r 13) |" ;;
            zipf)
                echo
                echo "## zipf: cache-aside over $K keys of $D-byte values, Zipf s = $S; $WARM ops warm-up, $MEASURE measured"
                echo
                echo "Hit rate: GETs answered with the value, of the measured run (the warm-up's in the last column)."
                echo "One op: a GET, and the SET after it when it missed; so CPU per op grows with the misses"
                echo "even at equal cost per command, which the column after it shows (GETs and SETs)."
                echo
                echo "| policy | server | hit rate % | ops/s | CPU µs/op | CPU µs/command | peak RSS MB | final RSS MB | peak RSS / limit | used_memory MB | evicted_keys | keys at the end | warm-up hit rate % |"
                echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
                for pol in $POLICIES; do
                    for kind in redis ringkv; do
                        m() { med zipf "$pol" "$kind" "$1"; }
                        echo "| $pol | $kind | $(m 5) | $(fmt_rps "$(m 6)") | $(m 7) | $(m 17) | $(mb "$(m 8)") | $(mb "$(m 9)") | $(m 10)" \
                             "| $(mb "$(m 12)") | $(m 13) | $(m 14) | $(m 15) |"
                    done
                    r() { ratio "$(med zipf "$pol" ringkv "$1")" "$(med zipf "$pol" redis "$1")"; }
                    echo "| $pol | ringkv / Redis | $(points "$(med zipf "$pol" ringkv 5)" "$(med zipf "$pol" redis 5)") points" \
                         "| $(r 6) | $(r 7) | $(r 17) | $(r 8) | $(r 9) | | | | $(r 14) | |"
                done ;;
        esac
    done
    if [ -s "$NOTES" ]; then
        echo
        echo "Notes from the run:"
        echo
        sort -u "$NOTES" | sed 's/^/- /'
    fi
    echo
    echo "<details><summary>every run</summary>"
    echo
    echo "Columns as in the script's comment above \`med()\`."
    echo
    echo '```'
    cat "$results"
    [ ! -s "$WORK/zipf_raw" ] || cat "$WORK/zipf_raw"
    echo '```'
    echo
    echo "</details>"
    echo
    echo "## Reading it"
    echo
    echo "TODO: to be written by whoever runs this at full size (the defaults, \`bench/maxmemory.sh\`):"
    echo "hit rates of the two policies against Redis's, the CPU price of eviction, and how far each"
    echo "server's RSS stays above the limit."
} >"$OUT"
cat "$OUT"
