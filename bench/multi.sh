#!/usr/bin/env bash
# bench/multi.sh -- MULTI / SET / INCR / EXEC, pipelined, side by side with
# Debian's redis-server (issue 10). Four configurations, each round a fresh
# server of each in turn:
#
#   redis       redis-server --save "" --appendonly no, keys {t}a {t}b
#   t1          ringkv --threads 1, keys {t}a {t}b (one shard)
#   t2-one      ringkv --threads 2, keys {t}a {t}b (both on one shard: the
#               clients the kernel gives the other thread run their EXEC
#               against a shard they do not own)
#   t2-split    ringkv --threads 2, keys {t}a {u}b (one on each shard: every
#               EXEC is a cross-shard transaction)
#
# The server is pinned to SERVER_CPU, the load generator (bench/multi_load.c,
# built here) to CLIENT_CPU: CLIENTS connections each pipelining P
# transactions of MULTI, SET K1 v, INCR K2, EXEC, N transactions per run,
# every reply checked (see multi_load.c). Server CPU is utime+stime of all
# its threads (/proc/PID/stat) from the first send to the last reply, per
# transaction. Writes OUT: the commands, the medians over the rounds, the
# ratios (the targets: t1/redis <= 0.6, t2-split/t1 <= 1.5) and every run.
#
#   bench/multi.sh [RINGKV_BINARY]
# Knobs: ROUNDS (5), CLIENTS (50), P (16), N (1000000), CONFIGS
# ("redis t1 t2-one t2-split"), SERVER_CPU (0), CLIENT_CPU (1),
# OUT (bench/RESULTS_MULTI.md), KEEP_WORK (0). BEFORE=OLD_RINGKV_BINARY
# adds t1-before, t2-one-before and t2-split-before, the same runs of
# another build in the same rounds (the t2 ones with N_BEFORE transactions,
# default N), and their ratios. RINGKV_DESC, BEFORE_DESC: how the binaries
# were built, for the report. With BEFORE and PAIR=1, the report also gets
# bench/pair.sh's plain SET and GET -P 64 (threads 1 and 2, this build
# against BEFORE, PAIR_ROUNDS rounds, default 6): what the change costs off
# the MULTI path.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RINGKV=$(realpath "${1:-${RINGKV:-$ROOT/build/ringkv}}")
REDIS=${REDIS:-$(command -v redis-server)}
CLI=${CLI:-redis-cli}
ROUNDS=${ROUNDS:-5}; CLIENTS=${CLIENTS:-50}; P=${P:-16}; N=${N:-1000000}
CONFIGS=${CONFIGS:-redis t1 t2-one t2-split}
BEFORE=${BEFORE:+$(realpath "$BEFORE")}
N_BEFORE=${N_BEFORE:-$N}
[ -z "$BEFORE" ] || CONFIGS="$CONFIGS t1-before t2-one-before t2-split-before"
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-$ROOT/bench/RESULTS_MULTI.md}
KEEP_WORK=${KEEP_WORK:-0}
SERVER_PID=
WORK=$(mktemp -d /tmp/ringkv-multi.XXXXXX)
CMDLOG=$WORK/commands
: >"$CMDLOG"
source "$ROOT/bench/lib.sh"
trap bench_cleanup EXIT
[ -x "$RINGKV" ] || die "$RINGKV not found: build it first"
[ -x "$REDIS" ] || die "redis-server not found"
gcc -O2 -std=gnu17 -Wall -Wextra -Werror -o "$WORK/multi_load" "$ROOT/bench/multi_load.c"
HZ=$(getconf CLK_TCK)

# The shard of a key with 2 threads: its hash slot (CRC16-XMODEM of the
# {tag}, mod 16384) mod 2, as shard_of_slot.
shard2() {
    python3 - "$1" <<'EOF'
import sys
k = sys.argv[1].encode()
s, e = k.find(b"{"), -1
if s >= 0:
    e = k.find(b"}", s + 1)
if s >= 0 and e > s + 1:
    k = k[s + 1:e]
crc = 0
for x in k:
    crc ^= x << 8
    for _ in range(8):
        crc = ((crc << 1) ^ 0x1021) & 0xffff if crc & 0x8000 else (crc << 1) & 0xffff
print(crc % 16384 % 2)
EOF
}
[ "$(shard2 '{t}a')" = "$(shard2 '{t}b')" ] || die "{t}a and {t}b should share a shard"
[ "$(shard2 '{t}a')" != "$(shard2 '{u}b')" ] || die "{t}a and {u}b should be on different shards"

keys_of() { case "$1" in t2-split*) echo "{t}a {u}b" ;; *) echo "{t}a {t}b" ;; esac; }
kind_of() { case "$1" in redis) echo redis ;; t1*) echo ringkv-t1 ;; *) echo ringkv-t2 ;; esac; }
n_of() { case "$1" in t2-*-before) echo "$N_BEFORE" ;; *) echo "$N" ;; esac; }

# one run: CONFIG -> "us_per_tx tx_per_s fewest/most notes"
run_one() {
    local cfg=$1 kind keys out txs ticks notes=- RINGKV=$RINGKV
    kind=$(kind_of "$cfg"); keys=$(keys_of "$cfg")
    [[ "$cfg" != *-before ]] || RINGKV=$BEFORE
    start_server "$kind"
    # shellcheck disable=SC2086
    out=$(timeout 600 taskset -c "$CLIENT_CPU" "$WORK/multi_load" "$PORT" $keys "$CLIENTS" "$P" "$(n_of "$cfg")" "$SERVER_PID") ||
        die "multi_load failed against $cfg"
    if [ "$kind" = ringkv-t2 ]; then
        # commands parsed per thread (where the kernel put the connections)
        # and cross-shard transactions started (INFO ringkv)
        notes=$("$CLI" -p "$PORT" info ringkv | tr -d '\r' | awk -F'[:,=]' '
            /^thread[0-9]+:/ { for (i = 2; i < NF; i += 2) { if ($i == "commands") c = c (c ? "/" : "") $(i + 1);
                                                           if ($i == "transactions") t += $(i + 1) } }
            END { printf "commands=%s,cross-shard-tx=%d", c, t }')
    fi
    stop_server
    read -r txs _ rate ticks lo hi <<<"$out"
    awk -v t="$ticks" -v n="$txs" -v hz="$HZ" -v r="$rate" -v x="$notes" -v lo="$lo" -v hi="$hi" \
        'BEGIN { printf "%.3f %.0f %s/%s %s\n", t / hz * 1e6 / n, r, lo, hi, x }'
}


declare -A CPU RATE
: >"$WORK/runs"
for round in $(seq 1 "$ROUNDS"); do
    for cfg in $CONFIGS; do
        read -r us rate spread notes < <(run_one "$cfg")
        CPU[$cfg]="${CPU[$cfg]:-} $us"; RATE[$cfg]="${RATE[$cfg]:-} $rate"
        echo "| $cfg | $round | $us | $rate | $spread | $notes |" >>"$WORK/runs"
        log "round $round $cfg: $us µs CPU/tx, $rate tx/s, per connection $spread ($notes)"
    done
done

med() { tr ' ' '\n' | grep -v '^$' | median; }
# median over the rounds of the per-round ratio A/B
paired() {
    paste <(echo "${CPU[$1]}" | tr ' ' '\n' | grep -v '^$') <(echo "${CPU[$2]}" | tr ' ' '\n' | grep -v '^$') |
        awk '{ printf "%.4f\n", $1 / $2 }' | median
}
has() { [[ " $CONFIGS " == *" $1 "* ]]; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "not met" }'; }

{
    echo "# MULTI/EXEC: ringkv vs Redis"
    echo
    echo "Generated by \`bench/multi.sh\` on $(date -u '+%F %H:%M') UTC."
    echo
    echo "- machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)"
    echo "- ringkv: \`$RINGKV\` (${RINGKV_DESC:-built from the working tree at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')})"
    [ -z "$BEFORE" ] || echo "- before: \`$BEFORE\` (${BEFORE_DESC:-another build}; configurations *-before, t2-*-before with $N_BEFORE transactions per run)"
    echo "- reference: $("$REDIS" --version)"
    echo "- load: \`bench/multi_load.c\`, pinned to CPU $CLIENT_CPU; servers pinned to CPU $SERVER_CPU, started fresh for every run"
    echo "- $CLIENTS clients, each pipelining $P transactions \`MULTI\`, \`SET K1 multi-bench-val\`, \`INCR K2\`, \`EXEC\` per round trip; $N transactions per run"
    echo "- every reply checked (+OK +QUEUED +QUEUED, EXEC a 2-element array [+OK, :n], n increasing per connection, K2 = all transactions after the run)"
    echo "- CPU/tx: utime+stime of all server threads (/proc/PID/stat) from the first send to the last reply, divided by the transactions"
    echo "- rounds: $ROUNDS (configurations in turn: $CONFIGS); figures are medians over the rounds"
    echo
    echo "Commands (PORT a free port):"
    echo
    echo '```'
    cat "$CMDLOG"
    echo "taskset -c $CLIENT_CPU multi_load PORT '{t}a' '{t}b' $CLIENTS $P $N SERVER_PID    # redis, t1, t2-one"
    echo "taskset -c $CLIENT_CPU multi_load PORT '{t}a' '{u}b' $CLIENTS $P $N SERVER_PID    # t2-split"
    [ -z "$BEFORE" ] || echo "(the *-before configurations: the same with $BEFORE; t2-one-before and t2-split-before with $N_BEFORE transactions)"
    echo '```'
    echo
    echo "Key placement with 2 threads (shard = hash slot mod 2): \`{t}a\`, \`{t}b\` on shard $(shard2 '{t}a'), \`{u}b\` on shard $(shard2 '{u}b')."
    echo
    echo "| config | server | keys | µs CPU/tx | tx/s |"
    echo "|---|---|---|---|---|"
    for cfg in $CONFIGS; do
        case "$cfg" in redis) s="redis-server" ;; t1*) s="ringkv --threads 1" ;; *) s="ringkv --threads 2" ;; esac
        [[ "$cfg" != *-before ]] || s="$s (before)"
        echo "| $cfg | $s | \`$(keys_of "$cfg")\` | $(echo "${CPU[$cfg]}" | med) | $(fmt_rps "$(echo "${RATE[$cfg]}" | med)") |"
    done
    echo
    echo "| ratio (CPU/tx) | of medians | median of per-round ratios | target |"
    echo "|---|---|---|---|"
    line() {   # A B TARGET
        has "$1" && has "$2" || return 0
        local a b r p
        a=$(echo "${CPU[$1]}" | med); b=$(echo "${CPU[$2]}" | med)
        r=$(ratio "$a" "$b"); p=$(printf '%.2f' "$(paired "$1" "$2")")
        if [ -n "$3" ]; then echo "| $1 / $2 | $r | $p | ≤ $3: $(verdict "$p" "$3") |"; else echo "| $1 / $2 | $r | $p | |"; fi
    }
    line t1 redis 0.6
    line t2-split t1 1.5
    line t2-one t1 ""
    line t2-split t2-one ""
    line t2-split-before t1-before ""
    line t1 t1-before ""
    line t2-one t2-one-before ""
    line t2-split t2-split-before ""
    echo
    echo "<details><summary>every run</summary>"
    echo
    echo "| config | round | µs CPU/tx | tx/s | fewest/most tx of one connection | ringkv threads 2: commands run per thread, cross-shard transactions started |"
    echo "|---|---|---|---|---|---|"
    cat "$WORK/runs"
    echo
    echo "</details>"
    if [ -n "$BEFORE" ] && [ "${PAIR:-0}" = 1 ]; then
        echo
        echo "## Plain SET and GET -P 64, this build against the one before (\`bench/pair.sh\`)"
        echo
        for t in set get; do
            echo '```'
            echo "TEST=$t ROUNDS=${PAIR_ROUNDS:-6} bench/pair.sh \"new1:$RINGKV:--threads 1\" \"before1:$BEFORE:--threads 1\" \"new2:$RINGKV:--threads 2\" \"before2:$BEFORE:--threads 2\""
            echo '```'
            echo
            TEST=$t ROUNDS=${PAIR_ROUNDS:-6} P=64 N=8000000 CLIENTS=50 KEYSPACE=1000000 \
                SERVER_CPU=$SERVER_CPU CLIENT_CPU=$CLIENT_CPU "$ROOT/bench/pair.sh" \
                "new1:$RINGKV:--threads 1" "before1:$BEFORE:--threads 1" \
                "new2:$RINGKV:--threads 2" "before2:$BEFORE:--threads 2" 2>/dev/null || die "pair.sh failed"
            echo
        done
    fi
} >"$OUT"
cat "$OUT"
