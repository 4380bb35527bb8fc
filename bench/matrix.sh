#!/usr/bin/env bash
# The connection x pipeline matrix (issue 16): GET and SET at connections
# {64, 256, 1024, 4096, 16384} x pipeline {1, 8, 32, 128}, ringkv --threads 1
# and Debian's redis-server side by side:
#   - every cell on a fresh server, the servers in turn (cell by cell), the
#     server pinned to CPU $SERVER_CPU, the client to CPU $CLIENT_CPU;
#   - the load is bench/conn_load.c for every cell (the same tool for both
#     servers); redis-benchmark, which cannot drive more than about 10,000
#     connections, runs the cells up to XCHECK_CONNS once as a cross-check;
#   - before each run the keyspace is filled (KEYSPACE keys, 3-byte values),
#     so GETs find their keys and SETs overwrite: the server holds the same
#     data in every cell;
#   - requests/s, p50/p99/p99.9/max latency of every request, the server's
#     CPU per request (utime+stime from /proc/PID/stat over the run), and
#     how many connections were served; medians over the rounds.
# Writes bench/MATRIX.md (OUT) and PNG plots (PLOT_DIR, gnuplot through
# bench/plot_matrix.gp). Usage and knobs: bench/README.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=${RINGKV:-$ROOT/build/ringkv}
REDIS=${REDIS:-$(command -v redis-server || echo /usr/bin/redis-server)}
BENCH=${BENCH:-$(command -v redis-benchmark || echo /usr/bin/redis-benchmark)}
CLI=${CLI:-$(command -v redis-cli || echo /usr/bin/redis-cli)}
CONNS=${CONNS:-"64 256 1024 4096 16384"}
PIPELINES=${PIPELINES:-"1 8 32 128"}
TESTS=${TESTS:-"get set"}
SERVERS=${SERVERS:-"ringkv-t1 redis"}
ROUNDS=${ROUNDS:-2}
KEYSPACE=${KEYSPACE:-1000000}
VALUE_SIZE=${VALUE_SIZE:-3}
PREFILL=${PREFILL:-1}
# requests per cell: N if set, else by depth (a few seconds each on the
# reference machine), raised to MIN_WINDOWS full windows (C x P) so every
# connection goes round several times; CELL_MAX_S caps a cell's run
N=${N:-}
N_P1=${N_P1:-300000}
N_P8=${N_P8:-1500000}
N_P32=${N_P32:-3000000}
N_P128=${N_P128:-5000000}
N_OTHER=${N_OTHER:-2000000}
MIN_WINDOWS=${MIN_WINDOWS:-5}
CELL_MAX_S=${CELL_MAX_S:-20}
XCHECK=${XCHECK:-1}
XCHECK_CONNS=${XCHECK_CONNS:-"64 256 1024 4096"}
XCHECK_TIMEOUT=${XCHECK_TIMEOUT:-180}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-$ROOT/bench/MATRIX.md}
PLOT_DIR=${PLOT_DIR:-$(dirname "$OUT")/matrix}
PLOTS=${PLOTS:-1}
TITLE=${TITLE:-"ringkv vs Redis: connections x pipeline"}
WORK=$(mktemp -d /tmp/ringkv-matrix.XXXXXX)
KEEP_WORK=${KEEP_WORK:-0}

CLK_TCK=$(getconf CLK_TCK)
RECORDS=$WORK/records.tsv   # kind test conns P round rps p50 p99 p999 max cpu_us requests served client_cpu connect_s hits rss_per_conn
XRECORDS=$WORK/xcheck.tsv   # kind test conns P rps p50 p99 max cpu_us n
NOTES=$WORK/notes.txt       # lines for the report's notes
CMDLOG=$WORK/commands.txt
: >"$RECORDS"; : >"$XRECORDS"; : >"$NOTES"; : >"$CMDLOG"

SERVER_PID=
PORT=
HELPER_PID=

. "$ROOT/bench/lib.sh"

trap bench_cleanup EXIT
trap 'exit 130' INT TERM
case " $SERVERS " in *" redis "*) require_tools redis ;; *) require_tools ;; esac
taskset -c "$SERVER_CPU" true 2>/dev/null || die "cannot run on CPU(s) $SERVER_CPU"
taskset -c "$CLIENT_CPU" true 2>/dev/null || die "cannot run on CPU(s) $CLIENT_CPU"
AFFINITY_NOTES=$WORK/affinity.txt
: >"$AFFINITY_NOTES"

gcc -O2 -std=c17 -Wall -Wextra -Werror -o "$WORK/conn_load" "$ROOT/bench/conn_load.c"
LOAD=$WORK/conn_load

# ---------------------------------------------------------------- descriptors
# Each connection is a descriptor in the client and one in the server;
# Redis wants maxclients + 32 and refuses (lowers maxclients) otherwise.
max_conns=$(echo "$CONNS" | tr ' ' '\n' | awk NF | sort -n | tail -1)
MAXCLIENTS=$((max_conns + 64))
need=$((MAXCLIENTS + 128))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
    ulimit -n "$hard"
    fit=$((hard - 192))
    msg="ulimit -n: the hard limit is $hard, $need needed for $max_conns connections: cells above $fit connections are skipped"
    log "$msg"; echo "$msg" >>"$NOTES"
    MAXCLIENTS=$((hard - 128))
else
    ulimit -n "$need"
    fit=$max_conns
fi
log "ulimit -n $(ulimit -n) (hard $hard), servers get --maxclients $MAXCLIENTS"

# ---------------------------------------------------------------- gnuplot
# Plots are optional: without gnuplot (and no way to install it) the
# tables are still written.
ensure_gnuplot() {
    command -v gnuplot >/dev/null && return 0
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing gnuplot-nox for the plots"
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends gnuplot-nox; } \
        >"$WORK/apt.log" 2>&1 || { log "could not install gnuplot-nox (see apt output below); no plots"; tail -5 "$WORK/apt.log" >&2; }
    command -v gnuplot >/dev/null
}
if [ "$PLOTS" = 1 ] && ! ensure_gnuplot; then
    PLOTS=0
    echo "no plots: gnuplot-nox is not installed and could not be" >>"$NOTES"
fi

# ---------------------------------------------------------------- servers
# lib.sh's start_server, with room for every connection
SERVER_EXTRA="--maxclients $MAXCLIENTS"

# ---------------------------------------------------------------- cells
n_for() { # P C
    local base
    if [ -n "$N" ]; then echo "$N"; return; fi
    case "$1" in 1) base=$N_P1 ;; 8) base=$N_P8 ;; 32) base=$N_P32 ;; 128) base=$N_P128 ;; *) base=$N_OTHER ;; esac
    awk -v b="$base" -v w="$MIN_WINDOWS" -v c="$2" -v p="$1" 'BEGIN { m = w * c * p; printf "%d\n", (m > b ? m : b) }'
}

# field NAME LINE: the value of NAME= in conn_load's output line
field() { echo "$2" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'; }

prefill() {
    local out
    [ "$PREFILL" = 1 ] || return 0
    out=$(taskset -c "$CLIENT_CPU" "$LOAD" -p "$PORT" -t fill -c 16 -P 128 -r "$KEYSPACE" -d "$VALUE_SIZE" 2>"$WORK/load.err") ||
        { cat "$WORK/load.err" >&2; die "filling $KEYSPACE keys failed"; }
    [ "$(field requests "$out")" = "$KEYSPACE" ] || die "fill answered $(field requests "$out") of $KEYSPACE"
}

# run_cell KIND TEST C P ROUND: conn_load on the fresh server; prints the record
run_cell() {
    local kind=$1 t=$2 c=$3 p=$4 round=$5 n out cpu_us rss
    n=$(n_for "$p" "$c")
    if ! out=$(taskset -c "$CLIENT_CPU" "$LOAD" -p "$PORT" -c "$c" -P "$p" -t "$t" -n "$n" -T "$CELL_MAX_S" \
                   -r "$KEYSPACE" -d "$VALUE_SIZE" -S "$round" -x "$SERVER_PID" 2>"$WORK/load.err"); then
        log "conn_load failed on $kind $t c=$c P=$p: $(head -c 400 "$WORK/load.err")"
        echo "$kind $t c=$c P=$p round $round: conn_load failed: $(head -1 "$WORK/load.err")" >>"$NOTES"
        return 1
    fi
    cpu_us=$(awk -v t="$(field server_ticks "$out")" -v n="$(field requests "$out")" -v hz="$CLK_TCK" \
                 'BEGIN { printf "%.3f", (n > 0 ? t * 1e6 / hz / n : 0) }')
    # what the connections added to the server's RSS, in bytes per connection
    rss=$(awk -v a="$(field server_rss_before_kb "$out")" -v b="$(field server_rss_after_kb "$out")" -v c="$c" \
              'BEGIN { printf "%.0f", (b - a) * 1024 / c }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$t" "$c" "$p" "$round" \
        "$(field rps "$out")" "$(field p50_ms "$out")" "$(field p99_ms "$out")" "$(field p999_ms "$out")" \
        "$(field max_ms "$out")" "$cpu_us" "$(field requests "$out")" "$(field served "$out")" \
        "$(field client_cpu_pct "$out")" "$(field connect_s "$out")" "$(field hits "$out")" "$rss" >>"$RECORDS"
    if [ "$(field served "$out")" != "$c" ]; then
        echo "$kind $t c=$c P=$p round $round: only $(field served "$out") of $c connections got a reply" \
             "$( [ "$(field requests "$out")" -ge "$c" ] || echo "(fewer requests than connections: raise N)" )" >>"$NOTES"
    fi
    if [ "$t" = get ] && [ "$PREFILL" = 1 ] && [ "$(field hits "$out")" != "$(field requests "$out")" ]; then
        echo "$kind GET c=$c P=$p round $round: $(field hits "$out") hits of $(field requests "$out") after the fill" >>"$NOTES"
    fi
    log "  $kind $(echo "$t" | tr a-z A-Z) c=$c P=$p: $(fmt_rps "$(field rps "$out")") rps, p99 $(field p99_ms "$out")" \
        "p99.9 $(field p999_ms "$out") max $(field max_ms "$out") ms, $cpu_us us CPU/req," \
        "served $(field served "$out")/$c, client CPU $(field client_cpu_pct "$out")%, $(field requests "$out") req," \
        "RSS $rss B/conn"
}

# xcheck_cell KIND TEST C P: redis-benchmark on the same server, CPU around the whole run
xcheck_cell() {
    local kind=$1 t=$2 c=$3 p=$4 n csv c0 c1 line cpu_us
    n=$(n_for "$p" "$c")
    c0=$(cpu_ticks "$SERVER_PID")
    csv=$(timeout "$XCHECK_TIMEOUT" taskset -c "$CLIENT_CPU" "$BENCH" -p "$PORT" -c "$c" -P "$p" -n "$n" -r "$KEYSPACE" \
              -d "$VALUE_SIZE" -t "$t" --csv 2>"$WORK/bench.err") || true
    c1=$(cpu_ticks "$SERVER_PID")
    # "GET","123.45","avg","min","p50","p95","p99","max"
    line=$(echo "$csv" | tr -d '"' | awk -F, -v T="$(echo "$t" | tr a-z A-Z)" '$1 == T { print $2, $5, $7, $8 }')
    if [ -z "$line" ]; then
        log "  redis-benchmark gave no result for $kind $t c=$c P=$p: $(head -c 300 "$WORK/bench.err")"
        echo "redis-benchmark on $kind $t c=$c P=$p: no result ($(head -1 "$WORK/bench.err"))" >>"$NOTES"
        return 0
    fi
    set -- $line
    cpu_us=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v hz="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) * 1e6 / hz / n }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$t" "$c" "$p" "$1" "$2" "$3" "$4" "$cpu_us" "$n" >>"$XRECORDS"
    log "  redis-benchmark $kind $(echo "$t" | tr a-z A-Z) c=$c P=$p: $(fmt_rps "$1") rps, p99 $3 max $4 ms, $cpu_us us CPU/req"
}

in_list() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }

cells=0
for c in $CONNS; do [ "$c" -le "$fit" ] && cells=$((cells + 1)); done
total=$((ROUNDS * cells * $(echo "$TESTS" | wc -w) * $(echo "$PIPELINES" | wc -w) * $(echo "$SERVERS" | wc -w)))
log "$total runs: rounds $ROUNDS, connections $CONNS, pipelines $PIPELINES, tests $TESTS, servers $SERVERS"
started=$(date +%s)
done_runs=0
checked=""
for round in $(seq 1 "$ROUNDS"); do
    for t in $TESTS; do
        for p in $PIPELINES; do
            for c in $CONNS; do
                if [ "$c" -gt "$fit" ]; then
                    [ "$round" != 1 ] || log "skipping c=$c (ulimit -n)"
                    continue
                fi
                for kind in $SERVERS; do
                    done_runs=$((done_runs + 1))
                    el=$(( $(date +%s) - started ))
                    eta=$(( done_runs > 1 ? el * (total - done_runs + 1) / (done_runs - 1) : 0 ))
                    log "[$done_runs/$total] round $round $kind $(echo "$t" | tr a-z A-Z) c=$c P=$p (elapsed ${el}s, ETA ${eta}s)"
                    start_server "$kind"
                    prefill
                    run_cell "$kind" "$t" "$c" "$p" "$round" || true
                    if [ "$XCHECK" = 1 ] && [ "$round" = 1 ] && in_list "$c" "$XCHECK_CONNS"; then
                        xcheck_cell "$kind" "$t" "$c" "$p"
                    fi
                    in_list "$kind" "$checked" || { check_affinity "$kind"; checked="$checked $kind"; }
                    stop_server
                done
            done
        done
    done
done
elapsed=$(( $(date +%s) - started ))

# ---------------------------------------------------------------- report
median() { awk NF | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# med KIND TEST C P FIELD (6 rps 7 p50 8 p99 9 p999 10 max 11 cpu 12 requests 13 served 14 client_cpu 17 rss_per_conn)
med() { awk -F'\t' -v k="$1" -v t="$2" -v c="$3" -v p="$4" -v f="$5" \
            '$1 == k && $2 == t && $3 == c && $4 == p { print $f }' "$RECORDS" | median; }
least() { awk -F'\t' -v k="$1" -v t="$2" -v c="$3" -v p="$4" -v f="$5" \
            '$1 == k && $2 == t && $3 == c && $4 == p { print $f }' "$RECORDS" | sort -g | head -1; }
served() { local s; s=$(least "$1" "$2" "$3" "$4" 13); [ -z "$s" ] && echo "–" || { [ "$s" = "$3" ] && echo "all" || echo "**$s**"; }; }
xval() { awk -F'\t' -v k="$1" -v t="$2" -v c="$3" -v p="$4" -v f="$5" \
            '$1 == k && $2 == t && $3 == c && $4 == p { print $f }' "$XRECORDS" | head -1; }
lat() { echo "$(fmt "$(med "$1" "$2" "$3" "$4" 8)") / $(fmt "$(med "$1" "$2" "$3" "$4" 9)") / $(fmt "$(med "$1" "$2" "$3" "$4" 10)")"; }

A=$(echo "$SERVERS" | awk '{ print $1 }')
B=$(echo "$SERVERS" | awk '{ print $2 }')

# plot data: one file per test, server and depth
if [ "$PLOTS" = 1 ] && [ -s "$RECORDS" ]; then
    mkdir -p "$WORK/plot" "$PLOT_DIR"
    for t in $TESTS; do for kind in $SERVERS; do for p in $PIPELINES; do
        for c in $CONNS; do
            r=$(med "$kind" "$t" "$c" "$p" 6)
            [ "$r" = NA ] && continue
            echo "$c $r $(med "$kind" "$t" "$c" "$p" 11) $(med "$kind" "$t" "$c" "$p" 8) $(med "$kind" "$t" "$c" "$p" 9) $(med "$kind" "$t" "$c" "$p" 10)"
        done >"$WORK/plot/$t-$kind-$p.dat"
    done; done; done
    if gnuplot -e "dir='$WORK/plot'; out='$PLOT_DIR'; tests='$TESTS'; pipes='$PIPELINES'; kinds='$SERVERS'; conns='$CONNS'" \
           "$ROOT/bench/plot_matrix.gp" 2>"$WORK/gnuplot.err"; then
        log "plots in $PLOT_DIR"
    else
        log "gnuplot failed: $(head -c 400 "$WORK/gnuplot.err")"
        echo "gnuplot failed: $(head -1 "$WORK/gnuplot.err")" >>"$NOTES"
        PLOTS=0
    fi
fi
plot_ref=$(realpath --relative-to="$(dirname "$OUT")" "$PLOT_DIR" 2>/dev/null || echo "$PLOT_DIR")

{
    echo "# $TITLE"
    echo
    echo "Generated by \`bench/matrix.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') in ${elapsed}s."
    echo
    echo "- machine: $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)"
    echo "- ringkv: \`$RINGKV\` ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown commit))"
    echo "- reference: $("$REDIS" --version 2>/dev/null | head -1)"
    echo "- load: bench/conn_load.c (one thread, epoll) pinned to CPU $CLIENT_CPU; servers pinned to CPU $SERVER_CPU;" \
         "a fresh server per cell, the servers in turn ($SERVERS)"
    echo "- $ROUNDS round(s); figures are medians over the rounds; served is the least over the rounds"
    if [ -n "$N" ]; then
        echo "- $N requests per cell"
    else
        echo "- requests per cell: $N_P1 at -P 1, $N_P8 at -P 8, $N_P32 at -P 32, $N_P128 at -P 128, at least" \
             "$MIN_WINDOWS x connections x depth; at most ${CELL_MAX_S}s"
    fi
    echo "- keys: \`key:%012d\` below $KEYSPACE, uniform; values $VALUE_SIZE bytes;" \
         "$( [ "$PREFILL" = 1 ] && echo "every key set before each run (GETs hit, SETs overwrite)" || echo "no fill" )"
    echo "- latency: every request, from the write that sent it to the read that brought its reply; p99 / p99.9 / max in ms"
    echo "- CPU/req: the server's utime+stime (/proc/PID/stat, all its threads) from the first request to the last reply, over the requests"
    echo "- client CPU: conn_load's own CPU over the run; near 100% the client set the pace, not the server"
    echo "- RSS/conn: the server's VmRSS after the last reply (every connection open) minus before the first connection, over the connections;" \
         "below a few thousand connections it is mostly noise (an allocator that gives memory back during the run makes it negative)"
    if [ -s "$AFFINITY_NOTES" ]; then
        echo "- **warning: some server threads were allowed outside CPU $SERVER_CPU; figures may be unfair:**"
        sort -u "$AFFINITY_NOTES" | sed 's/^/  - /'
    fi
    if [ -s "$NOTES" ]; then
        echo "- **notes:**"
        sed 's/^/  - /' "$NOTES"
    fi
    echo
    for t in $TESTS; do
        T=$(echo "$t" | tr a-z A-Z)
        echo "## $T"
        echo
        if [ -n "$B" ]; then
            echo "| conns | -P | $A rps | $B rps | rps ratio | $A µs CPU/req | $B µs CPU/req | CPU ratio | $A p99 / p99.9 / max ms | $B p99 / p99.9 / max ms | served $A / $B | client CPU % $A / $B | RSS B/conn $A / $B | RSS ratio |"
            echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        else
            echo "| conns | -P | $A rps | $A µs CPU/req | $A p99 / p99.9 / max ms | served | client CPU % | RSS B/conn |"
            echo "|---|---|---|---|---|---|---|---|"
        fi
        for p in $PIPELINES; do for c in $CONNS; do
            [ "$c" -le "$fit" ] || continue
            ar=$(med "$A" "$t" "$c" "$p" 6); ac=$(med "$A" "$t" "$c" "$p" 11)
            if [ -n "$B" ]; then
                br=$(med "$B" "$t" "$c" "$p" 6); bc=$(med "$B" "$t" "$c" "$p" 11)
                echo "| $c | $p | $(fmt_rps "$ar") | $(fmt_rps "$br") | $(ratio "$ar" "$br") | $(fmt "$ac") | $(fmt "$bc") | $(ratio "$ac" "$bc") | $(lat "$A" "$t" "$c" "$p") | $(lat "$B" "$t" "$c" "$p") | $(served "$A" "$t" "$c" "$p") / $(served "$B" "$t" "$c" "$p") | $(fmt "$(med "$A" "$t" "$c" "$p" 14)") / $(fmt "$(med "$B" "$t" "$c" "$p" 14)") | $(med "$A" "$t" "$c" "$p" 17) / $(med "$B" "$t" "$c" "$p" 17) | $(ratio "$(med "$A" "$t" "$c" "$p" 17)" "$(med "$B" "$t" "$c" "$p" 17)") |"
            else
                echo "| $c | $p | $(fmt_rps "$ar") | $(fmt "$ac") | $(lat "$A" "$t" "$c" "$p") | $(served "$A" "$t" "$c" "$p") | $(fmt "$(med "$A" "$t" "$c" "$p" 14)") | $(med "$A" "$t" "$c" "$p" 17) |"
            fi
        done; done
        echo
        if [ "$PLOTS" = 1 ]; then
            echo "![$T requests/s]($plot_ref/$t-rps.png)"
            echo "![$T CPU per request]($plot_ref/$t-cpu.png)"
            echo "![$T latency]($plot_ref/$t-latency.png)"
            echo
        fi
    done
    [ -z "$B" ] || echo "Ratios are $A / $B: above 1 is better for rps, below 1 is better for CPU."
    echo
    if [ -s "$XRECORDS" ]; then
        echo "## Cross-check: redis-benchmark (round 1, same server after the conn_load run)"
        echo
        echo "redis-benchmark's -P sends a batch and waits for all of it (conn_load keeps the window full), gives every"
        echo "request of a batch the latency of the batch's first reply, and reports no p99.9; its CPU/req includes"
        echo "connecting (it sleeps 50 ms every 64 connections). Above about 10,000 connections it drives only"
        echo "the first ~10,200 (its event loop has 10,240 slots): not run there."
        echo
        echo "| test | conns | -P | server | conn_load rps | redis-benchmark rps | conn_load p50 / p99 ms | redis-benchmark p50 / p99 / max ms | redis-benchmark µs CPU/req |"
        echo "|---|---|---|---|---|---|---|---|---|"
        for t in $TESTS; do for p in $PIPELINES; do for c in $CONNS; do for kind in $SERVERS; do
            xr=$(xval "$kind" "$t" "$c" "$p" 5)
            [ -n "$xr" ] || continue
            echo "| $(echo "$t" | tr a-z A-Z) | $c | $p | $kind | $(fmt_rps "$(med "$kind" "$t" "$c" "$p" 6)") | $(fmt_rps "$xr") | $(fmt "$(med "$kind" "$t" "$c" "$p" 7)") / $(fmt "$(med "$kind" "$t" "$c" "$p" 8)") | $(xval "$kind" "$t" "$c" "$p" 6) / $(xval "$kind" "$t" "$c" "$p" 7) / $(xval "$kind" "$t" "$c" "$p" 8) | $(xval "$kind" "$t" "$c" "$p" 9) |"
        done; done; done; done
        echo
    fi
    echo "<details><summary>every run</summary>"
    echo
    echo "| server | test | conns | -P | round | rps | p50 | p99 | p99.9 | max | µs CPU/req | requests | served | client CPU % | connect s | RSS B/conn |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $17 }' "$RECORDS"
    echo
    echo "</details>"
    echo
    echo "## Commands"
    echo
    echo "Servers (PORT is a free port picked per start; ulimit -n $(ulimit -n)):"
    echo
    echo '```'
    cat "$CMDLOG"
    echo '```'
    echo
    echo "Per cell, on the fresh server (conn_load is bench/conn_load.c, built with gcc -O2):"
    echo
    echo '```'
    [ "$PREFILL" = 1 ] && echo "taskset -c $CLIENT_CPU conn_load -p PORT -t fill -c 16 -P 128 -r $KEYSPACE -d $VALUE_SIZE"
    echo "taskset -c $CLIENT_CPU conn_load -p PORT -c C -P P -t TEST -n N -T $CELL_MAX_S -r $KEYSPACE -d $VALUE_SIZE -S ROUND -x SERVER_PID"
    [ "$XCHECK" = 1 ] && echo "taskset -c $CLIENT_CPU redis-benchmark -p PORT -c C -P P -n N -r $KEYSPACE -d $VALUE_SIZE -t TEST --csv   # C in $XCHECK_CONNS, round 1"
    echo '```'
    echo
    echo "Reproduce: \`$( [ "$CONNS" = "64 256 1024 4096 16384" ] || echo "CONNS=\"$CONNS\" ")$( [ "$PIPELINES" = "1 8 32 128" ] || echo "PIPELINES=\"$PIPELINES\" ")$( [ -z "$N" ] || echo "N=$N ")ROUNDS=$ROUNDS bench/matrix.sh\` (knobs in bench/README.md)."
} >"$OUT"
log "wrote $OUT (${elapsed}s)"
