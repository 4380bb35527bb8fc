#!/usr/bin/env bash
# Run Redis 7.0.15's own TCL test suite, unit by unit, in external-server mode
# against a fresh `ringkv --threads 2` per unit, or in own-server mode, where
# the framework starts ringkv itself for each start_server block.
#
#   tools/redis-tests.sh                   the units listed in tests/redis-tests.expected
#   tools/redis-tests.sh type/list expire  just these units
#   tools/redis-tests.sh --all             every unit of Redis's default list (crash check)
#   tools/redis-tests.sh --check ...       also fail if a unit passes fewer tests than
#                                          tests/redis-tests.expected requires
#   tools/redis-tests.sh --own-server info limits
#                                          these units in own-server mode (also written
#                                          own:info, which is how the expected file names them)
#   RINGKV_SERVER="redis-server --save '' --appendonly no" tools/redis-tests.sh ...
#                                          the same run against another server (baseline)
#
# Own-server mode is the only way to run the units tagged external:skip
# (info, limits, networking, maxmemory, auth, ...). The framework writes a
# config file from tests/assets/default.conf plus its overrides and runs
# `src/redis-server CONFIG_FILE [args]` from the suite's root: this script
# puts there an executable that execs the first word of RINGKV_SERVER (by
# default build/ringkv) with those arguments, then the rest of RINGKV_SERVER
# (--threads 2); src/redis-cli and src/redis-benchmark are Debian's. The
# framework finds the server by " PID: <pid>" and "Ready to accept" in its
# log (ringkv's log, log.h) and stops it with SIGTERM. After the unit, every
# server's directory is kept under the unit's log directory; a server that
# did not log "ready to exit, bye bye" (a crash, or a hang the framework
# ended with SIGKILL) is reported and fails the run.
#
# The suite comes from Debian's source package of redis (a deb-src entry for
# bookworm is added when missing), so it needs nothing beyond the Debian
# archive. It prints `unit/NAME: N passed, M failed` per unit and a total, and
# checks that the server still answers PING after every unit: a crash or a
# hang fails the run whatever the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
EXPECTED=$ROOT/tests/redis-tests.expected
SUITE_DIR=${REDIS_SUITE_DIR:-$ROOT/build/redis-suite}
SUITE=$SUITE_DIR/redis-7.0.15/tests
LOGDIR=${REDIS_TESTS_LOGDIR:-$ROOT/build/redis-tests-logs}
UNIT_TIMEOUT=${REDIS_TESTS_UNIT_TIMEOUT:-900}

# Tags of features ringkv does not build yet; each later issue removes its own.
DENY_TAGS="-slow -needs:debug -needs:repl -needs:pfdebug \
-needs:latency -needs:local-process"

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

fetch_suite() {
    [ -f "$SUITE/test_helper.tcl" ] && return 0
    for p in tcl dpkg-dev redis-tools; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends tcl dpkg-dev redis-tools
        break
    done
    if ! apt-cache showsrc redis 2>/dev/null | grep -q '^Version: 5:7.0.15'; then
        $SUDO tee /etc/apt/sources.list.d/ringkv-deb-src.sources >/dev/null <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
        $SUDO apt-get update -qq
    fi
    mkdir -p "$SUITE_DIR"
    (cd "$SUITE_DIR" && apt-get source --download-only redis >/dev/null 2>&1 &&
        tar xzf redis_7.0.15.orig.tar.gz redis-7.0.15/tests)
    # runtest flushes functions before every test file; until FUNCTION exists
    # a missing command must not abort every unit.
    sed -i 's/^\(\s*\)r function flush$/\1catch {r function flush}/' "$SUITE/support/server.tcl"
}

# Units derived from Redis's: pubsubshard is tagged external:skip only because
# its last block needs a replica; the blocks before it run against any server.
derive_units() {
    mkdir -p "$SUITE/unit/ringkv"
    awk '/^start_server/ && ++n == 2 { exit } { sub(/ external:skip/, ""); print }' \
        "$SUITE/unit/pubsubshard.tcl" >"$SUITE/unit/ringkv/pubsubshard.tcl"
}

# A loopback port nobody listens on (bash only: nothing to install), below
# the kernel's ephemeral range so no client socket holds it either.
free_port() {
    local p
    while :; do
        p=$((10000 + RANDOM % 10000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}

# units named in the expected file, in its order
expected_units() { awk '$1 == "unit" {print $2}' "$EXPECTED"; }
# tests/redis-tests.expected:
#   unit NAME N                   the unit must pass at least N tests (the number only goes up)
#   known NAME | TEST | REASON    a test that fails for a known reason (which issue brings it)
#   skip NAME | TEST | REASON     a test not run: its outcome depends on a race ringkv does not
#                                 settle yet, and a hang would stop the rest of the unit
#   allow NAME TAG ...            the unit runs the tests of these tags, which DENY_TAGS
#                                 keeps from the other units
# NAME is a unit of tests/unit without "unit/" (type/list), run in external mode,
# or own:NAME for the same unit in own-server mode (own:info).
expected_pass() { awk -v u="$1" '$1 == "unit" && $2 == u {print $3}' "$EXPECTED"; }

# The tags a unit runs without: DENY_TAGS less those its `allow` line names
# (a unit whose needs ringkv meets while other units' tests of the same tag
# would still fail: slowlog's needs:debug is DEBUG SLEEP)
unit_tags() {
    local tags=" $DENY_TAGS " t
    for t in $(awk -v u="$1" '$1 == "allow" && $2 == u {for (i = 3; i <= NF; i++) print $i}' "$EXPECTED"); do
        tags=${tags/ -$t / }
    done
    echo $tags
}

# --skiptest arguments for a unit
skip_args() {
    awk -F' [|] ' -v u="skip $1" '$1 == u {print $2}' "$EXPECTED" |
        while IFS= read -r t; do printf '%s\0%s\0' --skiptest "$t"; done
}

default_units() {
    sed -n '/^set ::all_tests {/,/^}/p' "$SUITE/test_helper.tcl" | grep -o 'unit/[^ ]*' | sed 's#^unit/##'
}

check=0
own=0
units=()
for a in "$@"; do
    case $a in
        --check) check=1 ;;
        --own-server) own=1 ;;
        --all) fetch_suite; mapfile -t -O "${#units[@]}" units < <(default_units) ;;
        own:*) a=${a#own:}; units+=("own:${a#unit/}") ;;
        *) units+=("${a#unit/}") ;;
    esac
done
fetch_suite
derive_units
if [ ${#units[@]} -eq 0 ]; then
    mapfile -t units < <(expected_units)
    # --own-server alone: the own-server units of the expected file
    [ "$own" = 1 ] && mapfile -t units < <(printf '%s\n' "${units[@]}" | grep '^own:')
fi
# --own-server: every unit named runs in own-server mode
if [ "$own" = 1 ]; then
    for i in "${!units[@]}"; do [[ ${units[$i]} == own:* ]] || units[$i]="own:${units[$i]}"; done
fi

if [ -z "${RINGKV_SERVER:-}" ]; then
    [ -x build/ringkv ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null &&
                             cmake --build build --target ringkv -j"$(nproc)" >/dev/null; }
    RINGKV_SERVER="$ROOT/build/ringkv --threads 2"
fi
mkdir -p "$LOGDIR"

# The executable the framework runs as src/redis-server in own-server mode:
# the server of RINGKV_SERVER with the framework's config file (when the
# first argument is one), then RINGKV_SERVER's own arguments, then the rest
# of the framework's, so a test's arguments come last, as they do for
# redis-server (its command-line error tests read them back). Only when
# those begin with a bare word ("loglevel verbose", which Redis takes as
# the first option) do RINGKV_SERVER's go at the end instead. exec keeps
# the pid the framework spawned, which is the one it looks for in
# " PID: <pid>".
install_server_wrapper() {
    local bin rest
    read -r bin rest <<<"$RINGKV_SERVER"
    mkdir -p "$SUITE/../src"
    printf '#!/usr/bin/env bash\n# written by tools/redis-tests.sh --own-server\nconf=()\nif [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then conf=("$1"); shift; fi\nif [ $# -eq 0 ] || [ "${1#--}" != "$1" ]; then exec %s "${conf[@]}" %s "$@"; fi\nexec %s "${conf[@]}" "$@" %s\n' \
        "$bin" "$rest" "$bin" "$rest" >"$SUITE/../src/redis-server"
    chmod +x "$SUITE/../src/redis-server"
    # tests that run the tools (rediscli_exec) find Debian's
    local t
    for t in redis-cli redis-benchmark; do
        command -v "$t" >/dev/null && ln -sf "$(command -v "$t")" "$SUITE/../src/$t"
    done
    return 0
}

# External mode: one server for the unit, started here, checked after it.
# Sets pass, fail and note.
run_external() {
    local unit=$1 log=$2 port spid
    for _ in 1 2 3; do   # another process may take the port first: try another
        port=$(free_port)
        rm -rf "$log.dir" && mkdir -p "$log.dir"   # dump.rdb and temp files of this unit only
        # DEBUG on, as tests/assets/default.conf has it in own-server mode
        eval "exec $RINGKV_SERVER --port $port --bind 127.0.0.1 --dir '$log.dir' --enable-debug-command yes" \
            >"$log.server" 2>&1 &
        spid=$!
        for _ in $(seq 100); do
            redis-cli -p "$port" ping >/dev/null 2>&1 && break 2
            kill -0 "$spid" 2>/dev/null || break
            sleep 0.1
        done
    done
    mapfile -d '' -t skips < <(skip_args "$unit")
    (cd "$SUITE/.." && timeout "$UNIT_TIMEOUT" tclsh tests/test_helper.tcl \
        --host 127.0.0.1 --port "$port" --baseport $((21000 + RANDOM % 10000)) --single "unit/$unit" --tags "$(unit_tags "$unit")" \
        --ignore-encoding --durable --clients 1 --timeout 60 "${skips[@]}") \
        2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$log.out" || true
    count_results "$log"
    note=""
    if ! timeout 10 redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
        note="  SERVER DOWN OR HUNG (see $log.server)"; status=1
    fi
    kill "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
}

# Own-server mode: the framework starts and stops the servers; their
# directories (config, stdout with the log, stderr) are kept in $log.dir.
# A server whose log does not end with "ready to exit, bye bye" crashed or
# hung. Sets pass, fail and note.
run_own() {
    local unit=$1 log=$2 tmp=$SUITE/tmp
    mapfile -d '' -t skips < <(skip_args "own:$unit")
    rm -rf "$log.dir" && mkdir -p "$log.dir"
    rm -rf "$tmp"/server.* "$tmp"/redis.conf.*
    (cd "$SUITE/.." && timeout "$UNIT_TIMEOUT" tclsh tests/test_helper.tcl \
        --baseport $((21000 + RANDOM % 10000)) --single "unit/$unit" --tags "$(unit_tags "own:$unit")" \
        --ignore-encoding --durable --clients 1 --timeout 60 --dont-clean "${skips[@]}") \
        2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$log.out" || true
    count_results "$log"
    note=""
    local d started=0 unclean=0
    for d in "$tmp"/server.*; do
        [ -d "$d" ] || continue
        mv "$d" "$log.dir/"
        d=$log.dir/${d##*/}
        local f
        for f in "$d"/stdout*; do
            [ -f "$f" ] || continue
            local s b
            s=$(grep -c ' PID: ' "$f") || true
            b=$(grep -c 'ready to exit, bye bye' "$f") || true
            started=$((started + s))
            [ "$b" -lt "$s" ] && unclean=$((unclean + s - b))
        done
    done
    rm -rf "$tmp"/redis.conf.*
    if [ "$started" -eq 0 ]; then
        note="  NO SERVER STARTED (see $log.out)"; status=1
    elif [ "$unclean" -gt 0 ]; then
        note="  $unclean OF $started SERVERS DID NOT EXIT CLEANLY (see $log.dir)"; status=1
    fi
}

count_results() {
    pass=$(grep -c '^\[ok\]:' "$1.out") || true
    fail=$(grep -cE '^\[(err|exception|TIMEOUT)\]:' "$1.out") || true
}

total_pass=0 total_fail=0 status=0
for name in "${units[@]}"; do
    unit=${name#own:}
    log=$LOGDIR/${name//[\/:]/_}
    if [[ $name == own:* ]]; then
        install_server_wrapper
        run_own "$unit" "$log"
    else
        run_external "$unit" "$log"
    fi
    line="unit/$unit: $pass passed, $fail failed$note"
    [[ $name == own:* ]] && line="own:$line"
    grep -q '^\[TIMEOUT\]:' "$log.out" && { line+="  A TEST HUNG, THE UNIT STOPPED THERE"; [ "$check" = 1 ] && status=1; }
    if [ "$check" = 1 ]; then
        want=$(expected_pass "$name")
        if [ -n "$want" ] && [ "$pass" -lt "$want" ]; then
            line+="  BELOW EXPECTED ($want)"; status=1
        fi
    fi
    echo "$line"
    # failures that tests/redis-tests.expected does not name (an error raised
    # in a start_server block outside any test is named by its message, with
    # numbers of 3 digits or more, such as ports, written N)
    grep -E '^\[(err|exception)\]:' "$log.out" |
        sed -E 's/^\[(err|exception)\]: //; / in tests\/unit\/[^ ]*$/!s/[0-9]{3,}/N/g; s/ in tests\/unit\/.*$//' |
        while IFS= read -r t; do
            grep -qF "known $name | $t |" "$EXPECTED" || echo "    unexpected failure: $t"
        done || true
    total_pass=$((total_pass + pass)); total_fail=$((total_fail + fail))
done
echo "total: $total_pass passed, $total_fail failed in ${#units[@]} units (logs in $LOGDIR)"
exit $status
