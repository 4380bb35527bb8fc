#!/usr/bin/env bash
# bench/del_stall.sh -- how long freeing one huge set stops its shard.
#
# For each server (Debian's redis-server, ringkv --threads 1): a fresh
# server, a set of MEMBERS members (SADDs of 1000 members, through
# redis-cli --pipe), then a probe client (bench/rtt_probe.py) pinging the
# same thread in a loop while the set is freed one way: DEL (synchronous,
# lazyfree-lazy-user-del no, Redis's default), DEL under
# lazyfree-lazy-user-del yes, UNLINK, FLUSHALL ASYNC. The probe's longest
# round trip is the stall; the command's own latency is printed too.
#
#   MEMBERS=10000000 bench/del_stall.sh            # writes bench/RESULTS_DEL_STALL.md
#
# Knobs: MEMBERS (10000000), AFTER (4: seconds the probe goes on after the command), WAYS ("del lazydel unlink flushasync"),
# SERVERS ("redis ringkv-t1"), OUT (bench/RESULTS_DEL_STALL.md).
set -euo pipefail

MEMBERS=${MEMBERS:-10000000}
AFTER=${AFTER:-4}
WAYS=${WAYS:-"del lazydel unlink flushasync"}
SERVERS=${SERVERS:-"redis ringkv-t1"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CLI=${CLI:-redis-cli}
REDIS=${REDIS:-/usr/bin/redis-server}
HERE=$(cd "$(dirname "$0")" && pwd)
RINGKV=${RINGKV:-$HERE/../build/ringkv}
OUT=${OUT:-$HERE/RESULTS_DEL_STALL.md}
WORK=$(mktemp -d)
CMDLOG=$WORK/commands
SERVER_PID=
: >"$CMDLOG"
source "$HERE/lib.sh"
trap 'stop_server; rm -rf "$WORK"' EXIT

# the SADDs, generated once
python3 - "$MEMBERS" >"$WORK/fill.resp" <<'EOF'
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
for base in range(0, n, 1000):
    m = min(1000, n - base)
    parts = [b"*%d\r\n$4\r\nSADD\r\n$3\r\nbig\r\n" % (m + 2)]
    for i in range(base, base + m):
        s = b"member:%d" % i
        parts.append(b"$%d\r\n%s\r\n" % (len(s), s))
    out.write(b"".join(parts))
EOF

free_way() {   # free_way WAY: the command that frees the set, after its setting
    case "$1" in
        del) echo "DEL big" ;;
        lazydel) "$CLI" -p "$PORT" CONFIG SET lazyfree-lazy-user-del yes >/dev/null; echo "DEL big" ;;
        unlink) echo "UNLINK big" ;;
        flushasync) echo "FLUSHALL ASYNC" ;;
    esac
}

rows=()
for way in $WAYS; do
    for kind in $SERVERS; do
        start_server "$kind"
        taskset -c "$CLIENT_CPU" "$CLI" -p "$PORT" --pipe <"$WORK/fill.resp" >/dev/null
        card=$("$CLI" -p "$PORT" SCARD big)
        [ "$card" = "$MEMBERS" ] || die "$kind: SCARD big is $card, not $MEMBERS"
        cmd=$(free_way "$way")
        taskset -c "$CLIENT_CPU" python3 "$HERE/rtt_probe.py" "$PORT" >"$WORK/probe" &
        probe=$!
        sleep 1
        t0=$(date +%s%N)
        # shellcheck disable=SC2086
        "$CLI" -p "$PORT" $cmd >/dev/null
        t1=$(date +%s%N)
        sleep "$AFTER"   # the lazyfree thread's work, and the trims after it
        kill -TERM "$probe"
        wait "$probe" || true
        stall=$(cat "$WORK/probe")
        cmd_ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
        log "$way $kind: command ${cmd_ms} ms, longest PING ${stall} ms"
        rows+=("| $way | $kind | $cmd | $cmd_ms | $stall |")
        stop_server
    done
done

{
    echo "# Freeing a huge set (bench/del_stall.sh)"
    echo
    echo "A set of $MEMBERS members (\`member:N\`), then freed while a probe"
    echo "client pings the same thread every millisecond; servers on CPU"
    echo "$SERVER_CPU, fresh for each row; clients on CPU $CLIENT_CPU. The command's time"
    echo "is redis-cli's whole run (connection included)."
    echo
    echo '```'
    cat "$CMDLOG"
    echo "MEMBERS=$MEMBERS bench/del_stall.sh"
    echo '```'
    echo
    echo "| way | server | command | command ms | longest PING round trip ms |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
} >"$OUT"
log "wrote $OUT"
