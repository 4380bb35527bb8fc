# Shell helpers shared by bench/compare.sh and bench/compare_suite.sh:
# logging, free ports, stopping a server, reading its memory and formatting
# figures. Sourced after the caller has set WORK, CLI, SERVER_CPU,
# SERVER_PID and AFFINITY_NOTES.

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

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "–"; else printf "%.2f", a / b }'; }

fmt_rps() { awk -v v="$1" 'BEGIN { if (v == "NA") print "–"; else if (v >= 1e6) printf "%.2fM", v / 1e6; else printf "%.0fk", v / 1e3 }'; }

fmt() { [ "$1" = NA ] && echo "–" || echo "$1"; }
