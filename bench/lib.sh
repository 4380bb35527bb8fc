# Shell helpers shared by the bench/ scripts: logging, free ports, starting
# and stopping a server, its CPU ticks and memory, formatting figures.
# Sourced after the caller has set CLI, SERVER_CPU and SERVER_PID (and, for
# start_server, WORK, CMDLOG, REDIS and RINGKV; for check_affinity,
# AFFINITY_NOTES; for require_tools, BENCH; for bench_cleanup, WORK and
# KEEP_WORK).

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

die() { log "ERROR: $*"; exit 1; }

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

check_affinity() {
    local kind=$1 t lst
    for t in /proc/"$SERVER_PID"/task/*; do
        lst=$(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status" 2>/dev/null) || continue
        if [ -n "$lst" ] && [ "$lst" != "$SERVER_CPU" ]; then
            echo "$kind: thread $(basename "$t") ($(cat "$t/comm" 2>/dev/null)) may run on CPUs $lst, not $SERVER_CPU" |
                tee -a "$AFFINITY_NOTES" >&2
        fi
    done
}

# SERVER_EXTRA: arguments every server gets after the common ones (e.g.
# "--maxclients 16448"; split on spaces), empty by default.
SERVER_EXTRA=${SERVER_EXTRA:-}

# cmdline_for KIND: the server command as the results show it (KIND: redis |
# ringkv-tN | floor, bench/floor_server.c built as FLOOR_BIN)
cmdline_for() {
    case "$1" in
        redis) echo "taskset -c $SERVER_CPU $REDIS --port PORT --bind 127.0.0.1 --save \"\" --appendonly no${SERVER_EXTRA:+ $SERVER_EXTRA}" ;;
        ringkv-t*) echo "taskset -c $SERVER_CPU $RINGKV --port PORT --bind 127.0.0.1 --threads ${1#ringkv-t} --save \"\"${SERVER_EXTRA:+ $SERVER_EXTRA}" ;;
        floor) echo "taskset -c $SERVER_CPU floor_server PORT" ;;
        *) die "unknown server kind $1" ;;
    esac
}

# wait_ready NAME LOG: wait until the server SERVER_PID answers PING on PORT
wait_ready() {
    local i want=PONG
    case "$1" in *floor*) want=OK ;; esac   # floor_server answers +OK to everything
    for i in $(seq 1 200); do
        if "$CLI" -p "$PORT" ping 2>/dev/null | grep -q "$want"; then return 0; fi
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$2" >&2; die "$1 exited at startup"; }
        sleep 0.05
    done
    die "$1 did not answer PING"
}

# start_server KIND: a fresh server on a free PORT, pinned to SERVER_CPU
start_server() {
    local kind=$1 cl
    PORT=$(free_port)
    cl=$(cmdline_for "$kind")
    grep -qxF "$cl" "$CMDLOG" || echo "$cl" >>"$CMDLOG"
    case "$kind" in
        # shellcheck disable=SC2086
        redis) taskset -c "$SERVER_CPU" "$REDIS" --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
                   $SERVER_EXTRA >"$WORK/$kind.log" 2>&1 & ;;
        # shellcheck disable=SC2086
        ringkv-t*) taskset -c "$SERVER_CPU" "$RINGKV" --port "$PORT" --bind 127.0.0.1 --threads "${kind#ringkv-t}" --save "" \
                   $SERVER_EXTRA >"$WORK/$kind.log" 2>&1 & ;;
        floor) taskset -c "$SERVER_CPU" "$FLOOR_BIN" "$PORT" >"$WORK/$kind.log" 2>&1 & ;;
    esac
    SERVER_PID=$!
    wait_ready "$kind" "$WORK/$kind.log"
}

# CPU ticks (utime+stime) of every thread of the process: /proc/PID/stat
# carries the sum over all its threads, including threads that have exited,
# which a walk over /proc/PID/task/*/stat would miss.
cpu_ticks() {
    # fields after the ")" that ends comm: state is $1, utime $12, stime $13
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    local i
    for i in $(seq 1 300); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        log "server $SERVER_PID ignores SIGTERM, killing it"
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

used_memory() {
    "$CLI" -p "$PORT" info memory 2>/dev/null | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }'
}

# median: the middle (upper middle for an even count) of numbers separated
# by spaces or newlines on stdin
median() { tr ' ' '\n' | awk NF | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "–"; else printf "%.2f", a / b }'; }

fmt_rps() { awk -v v="$1" 'BEGIN { if (v == "NA") print "–"; else if (v >= 1e6) printf "%.2fM", v / 1e6; else printf "%.0fk", v / 1e3 }'; }

fmt() { [ "$1" = NA ] && echo "–" || echo "$1"; }

# require_tools [redis]: the client tools and ringkv (and redis-server) exist
require_tools() {
    [ -x "$BENCH" ] || die "redis-benchmark not found"
    [ -x "$CLI" ] || die "redis-cli not found"
    [ "${1:-}" != redis ] || [ -x "$REDIS" ] || die "redis-server not found"
    [ -x "$RINGKV" ] || die "$RINGKV not found: build it first (cmake -B build && cmake --build build)"
}

# bench_cleanup, as the EXIT trap: stop the server (and HELPER_PID, if any)
# and remove WORK unless KEEP_WORK=1.
bench_cleanup() {
    if [ -n "${HELPER_PID:-}" ]; then kill "$HELPER_PID" 2>/dev/null || true; fi
    stop_server
    if [ "$KEEP_WORK" = 1 ]; then log "work files kept in $WORK"; else rm -rf "$WORK"; fi
}
