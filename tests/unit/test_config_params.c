/*
 * Unit tests for the configuration (config.h): every name and default of
 * Redis 7.0.15 (its CONFIG GET * output, kept below), each value type's
 * parsing, bounds and exact error texts, the special parameters, CONFIG SET
 * of several pairs (all or nothing, the order of its errors, aliases),
 * CONFIG GET patterns and hidden parameters, config-file text (quoting,
 * include, save lines, errors with line numbers) and the command line as
 * redis-server turns it into config text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "ringkv/acl.h"
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/util.h"

/* redis-server 7.0.15's CONFIG GET * (Debian's build, TLS included), but:
 * port as its default, save as its default (the server was started with
 * --save ''), dir (the working directory, checked apart). */
static const struct { const char *name, *value; } redis_defaults[] = {
    {"acl-pubsub-default", "resetchannels"}, {"aclfile", ""}, {"acllog-max-len", "128"},
    {"active-defrag-cycle-max", "25"}, {"active-defrag-cycle-min", "1"},
    {"active-defrag-ignore-bytes", "104857600"}, {"active-defrag-max-scan-fields", "1000"},
    {"active-defrag-threshold-lower", "10"}, {"active-defrag-threshold-upper", "100"},
    {"active-expire-effort", "1"}, {"activedefrag", "no"}, {"activerehashing", "yes"},
    {"always-show-logo", "no"}, {"aof-disable-auto-gc", "no"}, {"aof-load-truncated", "yes"},
    {"aof-rewrite-incremental-fsync", "yes"}, {"aof-timestamp-enabled", "no"},
    {"aof-use-rdb-preamble", "yes"}, {"aof_rewrite_cpulist", ""}, {"appenddirname", "appendonlydir"},
    {"appendfilename", "appendonly.aof"}, {"appendfsync", "everysec"}, {"appendonly", "no"},
    {"auto-aof-rewrite-min-size", "67108864"}, {"auto-aof-rewrite-percentage", "100"},
    {"bgsave_cpulist", ""}, {"bind", "* -::*"}, {"bind-source-addr", ""}, {"bio_cpulist", ""},
    {"busy-reply-threshold", "5000"},
    {"client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"},
    {"client-query-buffer-limit", "1073741824"}, {"cluster-allow-pubsubshard-when-down", "yes"},
    {"cluster-allow-reads-when-down", "no"}, {"cluster-allow-replica-migration", "yes"},
    {"cluster-announce-bus-port", "0"}, {"cluster-announce-hostname", ""}, {"cluster-announce-ip", ""},
    {"cluster-announce-port", "0"}, {"cluster-announce-tls-port", "0"},
    {"cluster-config-file", "nodes.conf"}, {"cluster-enabled", "no"},
    {"cluster-link-sendbuf-limit", "0"}, {"cluster-migration-barrier", "1"},
    {"cluster-node-timeout", "15000"}, {"cluster-port", "0"}, {"cluster-preferred-endpoint-type", "ip"},
    {"cluster-replica-no-failover", "no"}, {"cluster-replica-validity-factor", "10"},
    {"cluster-require-full-coverage", "yes"}, {"cluster-slave-no-failover", "no"},
    {"cluster-slave-validity-factor", "10"}, {"crash-log-enabled", "yes"},
    {"crash-memcheck-enabled", "yes"}, {"daemonize", "no"}, {"databases", "16"},
    {"dbfilename", "dump.rdb"}, {"dir", NULL}, {"disable-thp", "yes"}, {"dynamic-hz", "yes"},
    {"enable-debug-command", "no"}, {"enable-module-command", "no"}, {"enable-protected-configs", "no"},
    {"hash-max-listpack-entries", "512"}, {"hash-max-listpack-value", "64"},
    {"hash-max-ziplist-entries", "512"}, {"hash-max-ziplist-value", "64"},
    {"hll-sparse-max-bytes", "3000"}, {"hz", "10"}, {"ignore-warnings", ""}, {"io-threads", "1"},
    {"io-threads-do-reads", "no"}, {"jemalloc-bg-thread", "yes"}, {"latency-monitor-threshold", "0"},
    {"latency-tracking", "yes"}, {"latency-tracking-info-percentiles", "50 99 99.9"},
    {"lazyfree-lazy-eviction", "no"}, {"lazyfree-lazy-expire", "no"},
    {"lazyfree-lazy-server-del", "no"}, {"lazyfree-lazy-user-del", "no"},
    {"lazyfree-lazy-user-flush", "no"}, {"lfu-decay-time", "1"}, {"lfu-log-factor", "10"},
    {"list-compress-depth", "0"}, {"list-max-listpack-size", "-2"}, {"list-max-ziplist-size", "-2"},
    {"logfile", ""}, {"loglevel", "notice"}, {"lua-time-limit", "5000"}, {"masterauth", ""},
    {"masteruser", ""}, {"maxclients", "10000"}, {"maxmemory", "0"}, {"maxmemory-clients", "0"},
    {"maxmemory-eviction-tenacity", "10"}, {"maxmemory-policy", "noeviction"},
    {"maxmemory-samples", "5"}, {"min-replicas-max-lag", "10"}, {"min-replicas-to-write", "0"},
    {"min-slaves-max-lag", "10"}, {"min-slaves-to-write", "0"}, {"no-appendfsync-on-rewrite", "no"},
    {"notify-keyspace-events", ""}, {"oom-score-adj", "no"}, {"oom-score-adj-values", "0 200 800"},
    {"pidfile", ""}, {"port", "6379"}, {"proc-title-template", "{title} {listen-addr} {server-mode}"},
    {"propagation-error-behavior", "ignore"}, {"protected-mode", "yes"},
    {"proto-max-bulk-len", "536870912"}, {"rdb-del-sync-files", "no"},
    {"rdb-save-incremental-fsync", "yes"}, {"rdbchecksum", "yes"}, {"rdbcompression", "yes"},
    {"repl-backlog-size", "1048576"}, {"repl-backlog-ttl", "3600"}, {"repl-disable-tcp-nodelay", "no"},
    {"repl-diskless-load", "disabled"}, {"repl-diskless-sync", "yes"},
    {"repl-diskless-sync-delay", "5"}, {"repl-diskless-sync-max-replicas", "0"},
    {"repl-ping-replica-period", "10"}, {"repl-ping-slave-period", "10"}, {"repl-timeout", "60"},
    {"replica-announce-ip", ""}, {"replica-announce-port", "0"}, {"replica-announced", "yes"},
    {"replica-ignore-disk-write-errors", "no"}, {"replica-ignore-maxmemory", "yes"},
    {"replica-lazy-flush", "no"}, {"replica-priority", "100"}, {"replica-read-only", "yes"},
    {"replica-serve-stale-data", "yes"}, {"replicaof", ""}, {"requirepass", ""},
    {"sanitize-dump-payload", "no"}, {"save", "3600 1 300 100 60 10000"}, {"server_cpulist", ""},
    {"set-max-intset-entries", "512"}, {"set-proc-title", "yes"}, {"shutdown-on-sigint", "default"},
    {"shutdown-on-sigterm", "default"}, {"shutdown-timeout", "10"}, {"slave-announce-ip", ""},
    {"slave-announce-port", "0"}, {"slave-ignore-maxmemory", "yes"}, {"slave-lazy-flush", "no"},
    {"slave-priority", "100"}, {"slave-read-only", "yes"}, {"slave-serve-stale-data", "yes"},
    {"slaveof", ""}, {"slowlog-log-slower-than", "10000"}, {"slowlog-max-len", "128"},
    {"socket-mark-id", "0"}, {"stop-writes-on-bgsave-error", "yes"}, {"stream-node-max-bytes", "4096"},
    {"stream-node-max-entries", "100"}, {"supervised", "no"}, {"syslog-enabled", "no"},
    {"syslog-facility", "local0"}, {"syslog-ident", "redis"}, {"tcp-backlog", "511"},
    {"tcp-keepalive", "300"}, {"timeout", "0"}, {"tls-auth-clients", "yes"}, {"tls-ca-cert-dir", ""},
    {"tls-ca-cert-file", ""}, {"tls-cert-file", ""}, {"tls-ciphers", ""}, {"tls-ciphersuites", ""},
    {"tls-client-cert-file", ""}, {"tls-client-key-file", ""}, {"tls-client-key-file-pass", ""},
    {"tls-cluster", "no"}, {"tls-dh-params-file", ""}, {"tls-key-file", ""}, {"tls-key-file-pass", ""},
    {"tls-port", "0"}, {"tls-prefer-server-ciphers", "no"}, {"tls-protocols", ""},
    {"tls-replication", "no"}, {"tls-session-cache-size", "20480"},
    {"tls-session-cache-timeout", "300"}, {"tls-session-caching", "yes"},
    {"tracking-table-max-keys", "1000000"}, {"unixsocket", ""}, {"unixsocketperm", "0"},
    {"zset-max-listpack-entries", "128"}, {"zset-max-listpack-value", "64"},
    {"zset-max-ziplist-entries", "128"}, {"zset-max-ziplist-value", "64"},
};

/* ringkv's own, also listed by CONFIG GET * */
static const char *const ringkv_listed[] = { "io-batch-wait-us", "io-iteration-budget-us", "set-max-listpack-entries",
                                              "set-max-listpack-value" };

/* ------------------------------------------------------------ helpers */

static int reset(void **state) {
    (void)state;
    config_set_defaults();
    return 0;
}

static const char *get(const char *name) {
    static char buf[4][512];
    static int slot;
    char *b = buf[slot++ % 4];
    if (!config_get_value(name, b, sizeof buf[0])) return NULL;
    return b;
}

/* CONFIG SET with the given words (name value ...); NULL-terminated. */
static char *set_words(bool local, const char *first, va_list ap) {
    struct slice argv[16];
    int argc = 0;
    for (const char *w = first; w && argc < 16; w = va_arg(ap, const char *))
        argv[argc++] = (struct slice){ w, strlen(w) };
    return config_set(argv, argc, local);
}

static void set_ok(const char *first, ...) {
    va_list ap;
    va_start(ap, first);
    char *err = set_words(false, first, ap);
    va_end(ap);
    if (err) fail_msg("unexpected error: %s", err);
}

/* A loopback port: one that nothing holds, or one held (listening) by
 * this process until it exits. */
static unsigned loopback_port(bool hold) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    if (!hold) close(fd);
    return ntohs(sa.sin_port);
}

static const char *taken_port(void) {
    static char port[16];
    if (!port[0]) snprintf(port, sizeof port, "%u", loopback_port(true));
    return port;
}

static void set_err(const char *want, const char *first, ...) {
    va_list ap;
    va_start(ap, first);
    char *err = set_words(false, first, ap);
    va_end(ap);
    if (!err) fail_msg("no error, wanted: %s", want);
    assert_string_equal(err, want);
    free(err);
}

#define SET_FAILED(name, why) "ERR CONFIG SET failed (possibly related to argument '" name "') - " why

/* Collects CONFIG GET matches. */
struct matches { int n; char names[256][64]; char values[256][128]; };

static void collect(void *ud, struct slice name, const char *value) {
    struct matches *m = ud;
    assert_true(m->n < 256);
    snprintf(m->names[m->n], sizeof m->names[0], "%.*s", (int)name.len, name.ptr);
    snprintf(m->values[m->n], sizeof m->values[0], "%s", value);
    m->n++;
}

static struct matches *config_get_all(const char *pattern) {
    static struct matches m;
    m.n = 0;
    config_get((struct slice){ pattern, strlen(pattern) }, collect, &m);
    return &m;
}

static const char *match_value(const struct matches *m, const char *name) {
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0) return m->values[i];
    return NULL;
}

static char *load(const char *text) {
    char *err = NULL;
    if (config_load_text(text, &err) == 0) return NULL;
    assert_non_null(err);
    return err;
}

/* ------------------------------------------------------------ names and defaults */

static void test_redis_names_and_defaults(void **state) {
    (void)state;
    struct matches *m = config_get_all("*");
    size_t nredis = sizeof redis_defaults / sizeof redis_defaults[0];
    assert_int_equal(nredis, 192);
    assert_int_equal((size_t)m->n, nredis + sizeof ringkv_listed / sizeof ringkv_listed[0]);
    for (size_t i = 0; i < nredis; i++) {
        const char *v = match_value(m, redis_defaults[i].name);
        if (!v) fail_msg("CONFIG GET * lacks %s", redis_defaults[i].name);
        if (redis_defaults[i].value && strcmp(v, redis_defaults[i].value) != 0)
            fail_msg("%s is '%s', Redis says '%s'", redis_defaults[i].name, v, redis_defaults[i].value);
    }
    for (size_t i = 0; i < 3; i++) assert_non_null(match_value(m, ringkv_listed[i]));
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_string_equal(match_value(m, "dir"), cwd);
    /* ringkv's start-time settings and Redis's hidden ones: by exact name only */
    static const char *const hidden[] = { "threads", "io-buffers", "io-buffer-size", "key-load-delay",
                                          "rdb-key-save-delay", "use-exit-on-panic", "watchdog-period",
                                          "loading-process-events-interval-bytes" };
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++) {
        assert_null(match_value(m, hidden[i]));
        assert_non_null(get(hidden[i]));
    }
    assert_string_equal(get("io-buffers"), "512");
    assert_string_equal(get("key-load-delay"), "0");
    assert_string_equal(get("loading-process-events-interval-bytes"), "2097152");
    assert_int_equal(rk_config.port, 6379);
    assert_int_equal(rk_config.hz, 10);
    assert_int_equal(rk_config.list_compress_depth, 0);
    assert_string_equal(rk_config.maxmemory_policy, "noeviction");
    assert_null(rk_config.requirepass);
}

static void test_config_get_patterns(void **state) {
    (void)state;
    /* Redis's "CONFIG GET multiple args" case: name and alias both match */
    struct matches *m = config_get_all("*of");
    assert_int_equal(m->n, 2);
    assert_non_null(match_value(m, "replicaof"));
    assert_non_null(match_value(m, "slaveof"));
    m = config_get_all("hash-max-*-entries");
    assert_int_equal(m->n, 2);
    assert_string_equal(match_value(m, "hash-max-ziplist-entries"), "512");
    m = config_get_all("MAXMEMORY*");      /* patterns ignore case */
    assert_int_equal(m->n, 5);
    m = config_get_all("[lb]ind");
    assert_int_equal(m->n, 1);
    /* an exact name answers as it was spelled, hidden or not */
    m = config_get_all("MaxClients");
    assert_int_equal(m->n, 1);
    assert_string_equal(m->names[0], "MaxClients");
    assert_string_equal(m->values[0], "10000");
    m = config_get_all("SLAVEOF");
    assert_int_equal(m->n, 1);
    assert_string_equal(m->names[0], "SLAVEOF");
    assert_int_equal(config_get_all("nosuch")->n, 0);
    assert_int_equal(config_get_all("*load-delay*")->n, 0);
    assert_int_equal(config_get_all("key-load-delay")->n, 1);
    char buf[8];
    assert_false(config_get_value("nosuch", buf, sizeof buf));
}

/* ------------------------------------------------------------ types */

static void test_bools_and_enums(void **state) {
    (void)state;
    set_ok("appendonly", "YES", NULL);
    assert_string_equal(get("appendonly"), "yes");
    set_err(SET_FAILED("appendonly", "argument must be 'yes' or 'no'"), "appendonly", "1", NULL);
    set_ok("loglevel", "WARNING", NULL);
    assert_string_equal(get("loglevel"), "warning");
    set_err(SET_FAILED("loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning"),
            "loglevel", "loud", NULL);
    set_ok("maxmemory-policy", "allkeys-lfu", NULL);
    assert_string_equal(rk_config.maxmemory_policy, "allkeys-lfu");
    /* two names of one value: CONFIG GET says the first */
    set_ok("oom-score-adj", "relative", NULL);
    assert_string_equal(get("oom-score-adj"), "yes");
    /* flag sets print in the list's order, whatever the order given */
    set_ok("shutdown-on-sigint", "force now nosave", NULL);
    assert_string_equal(get("shutdown-on-sigint"), "nosave now force");
    set_err(SET_FAILED("shutdown-on-sigint", "shutdown options SAVE and NOSAVE can't be used simultaneously"),
            "shutdown-on-sigint", "save nosave", NULL);
    set_err(SET_FAILED("shutdown-on-sigint", "argument(s) must be one of the following: default, save, nosave, now, force"),
            "shutdown-on-sigint", "", NULL);
    set_ok("shutdown-on-sigint", "default", NULL);
    assert_string_equal(get("shutdown-on-sigint"), "default");
    set_err(SET_FAILED("activedefrag", "Active defragmentation cannot be enabled: it requires a Redis server "
                       "compiled with a modified Jemalloc like the one shipped by default with the Redis "
                       "source distribution"), "activedefrag", "yes", NULL);
    set_ok("activedefrag", "no", NULL);
}

static void test_numbers(void **state) {
    (void)state;
    set_ok("maxmemory", "1gb", NULL);
    assert_string_equal(get("maxmemory"), "1073741824");
    assert_int_equal(CONFIG_GET(maxmemory), 1073741824LL);
    set_ok("maxmemory", "10K", NULL);
    assert_string_equal(get("maxmemory"), "10000");
    set_ok("maxmemory", "512mb", NULL);
    assert_string_equal(get("maxmemory"), "536870912");
    set_ok("maxmemory", "", NULL);                     /* Redis reads no digits as 0 */
    assert_string_equal(get("maxmemory"), "0");
    set_err(SET_FAILED("maxmemory", "argument must be a memory value"), "maxmemory", "1.5gb", NULL);
    set_err(SET_FAILED("maxmemory", "argument must be a memory value"), "maxmemory", "-1", NULL);
    set_err(SET_FAILED("maxmemory", "argument must be a memory value"), "maxmemory", "1tb", NULL);
    /* plain integers: Redis's strict form */
    set_err(SET_FAILED("timeout", "argument couldn't be parsed into an integer"), "timeout", "+5", NULL);
    set_err(SET_FAILED("timeout", "argument couldn't be parsed into an integer"), "timeout", "05", NULL);
    set_err(SET_FAILED("timeout", "argument couldn't be parsed into an integer"), "timeout", "1k", NULL);
    set_err(SET_FAILED("timeout", "argument must be between 0 and 2147483647 inclusive"), "timeout", "-1", NULL);
    /* unsigned in Redis: -1 is far above the top */
    set_err(SET_FAILED("maxclients", "argument must be between 1 and 4294967295 inclusive"), "maxclients", "-1", NULL);
    set_err(SET_FAILED("hash-max-listpack-entries", "argument must be between 0 and 9223372036854775807 inclusive"),
            "hash-max-listpack-entries", "-1", NULL);
    set_err(SET_FAILED("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive"),
            "proto-max-bulk-len", "1000", NULL);
    set_ok("proto-max-bulk-len", "2mb", NULL);
    assert_int_equal(rk_config_proto_max_bulk_len, 2 * 1024 * 1024);
    set_ok("slowlog-log-slower-than", "-1", NULL);
    set_err(SET_FAILED("slowlog-log-slower-than", "argument must be between -1 and 9223372036854775807 inclusive"),
            "slowlog-log-slower-than", "-2", NULL);
    /* percentages */
    set_ok("maxmemory-clients", "50%", NULL);
    assert_string_equal(get("maxmemory-clients"), "50%");
    set_ok("maxmemory-clients", "1mb", NULL);
    assert_string_equal(get("maxmemory-clients"), "1048576");
    set_err(SET_FAILED("maxmemory-clients", "percentage argument must be less or equal to 100"),
            "maxmemory-clients", "200%", NULL);
    set_err(SET_FAILED("maxmemory-clients", "argument must be a memory or percent value"),
            "maxmemory-clients", "-5%", NULL);
    /* hz is clamped, as Redis does */
    set_ok("hz", "0", NULL);
    assert_int_equal(CONFIG_GET(hz), 1);
    set_ok("hz", "100000", NULL);
    assert_string_equal(get("hz"), "500");
    /* the replication backlog is never below 16 KB once set */
    set_ok("repl-backlog-size", "1", NULL);
    assert_string_equal(get("repl-backlog-size"), "16384");
    set_ok("list-compress-depth", "3", NULL);
    assert_int_equal(CONFIG_GET(list_compress_depth), 3);
    set_ok("list-max-ziplist-size", "-10", NULL);
    assert_int_equal(CONFIG_GET(list_max_listpack_size), -10);
}

static void test_strings(void **state) {
    (void)state;
    set_ok("requirepass", "s3cret", NULL);
    assert_string_equal(rk_config.requirepass, "s3cret");
    set_ok("requirepass", "", NULL);
    assert_null(rk_config.requirepass);
    assert_string_equal(get("requirepass"), "");
    set_ok("cluster-announce-hostname", "node-1.example", NULL);
    set_err(SET_FAILED("cluster-announce-hostname", "Hostnames may only contain alphanumeric characters, hyphens or dots"),
            "cluster-announce-hostname", "no_underscores", NULL);
    set_ok("proc-title-template", "{title} {{port}} {port}", NULL);
    set_err(SET_FAILED("proc-title-template", "template format is invalid or contains unknown variables"),
            "proc-title-template", "{title} {nosuch}", NULL);
    set_err(SET_FAILED("proc-title-template", "template format is invalid or contains unknown variables"),
            "proc-title-template", "{title} {server-mode}", NULL);
    set_err(SET_FAILED("proc-title-template", "template format is invalid or contains unknown variables"),
            "proc-title-template", "{port", NULL);
    /* dbfilename is protected; where allowed, a file name only */
    set_err(SET_FAILED("dbfilename", "can't set protected config"), "dbfilename", "x.rdb", NULL);
    assert_null(load("enable-protected-configs yes"));
    set_ok("dbfilename", "x.rdb", NULL);
    set_err(SET_FAILED("dbfilename", "dbfilename can't be a path, just a filename"), "dbfilename", "a/x.rdb", NULL);
}

static void test_specials(void **state) {
    (void)state;
    set_ok("save", "100 10 200 20", NULL);
    assert_string_equal(get("save"), "100 10 200 20");
    set_ok("save", "", NULL);
    assert_string_equal(get("save"), "");
    set_err(SET_FAILED("save", "Invalid save parameters"), "save", "100", NULL);
    set_err(SET_FAILED("save", "Invalid save parameters"), "save", "0 1", NULL);
    set_err(SET_FAILED("save", "Invalid save parameters"), "save", "100  10", NULL);   /* an empty word */
    set_ok("client-output-buffer-limit", "replica 1mb 2k 30 normal 1 2 3", NULL);
    assert_string_equal(get("client-output-buffer-limit"),
                        "normal 1 2 3 slave 1048576 2000 30 pubsub 33554432 8388608 60");
    set_err(SET_FAILED("client-output-buffer-limit", "Invalid client class specified in buffer limit configuration."),
            "client-output-buffer-limit", "master 1 2 3", NULL);
    set_err(SET_FAILED("client-output-buffer-limit", "Wrong number of arguments in buffer limit configuration."),
            "client-output-buffer-limit", "normal 1 2", NULL);
    set_err(SET_FAILED("client-output-buffer-limit", "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
            "client-output-buffer-limit", "normal 1 2 -3", NULL);
    set_ok("oom-score-adj-values", "-100 0 2000", NULL);
    assert_string_equal(get("oom-score-adj-values"), "-100 0 2000");
    set_err(SET_FAILED("oom-score-adj-values", "Invalid oom-score-adj-values, elements must be between -2000 and 2000."),
            "oom-score-adj-values", "0 0 2001", NULL);
    set_err(SET_FAILED("oom-score-adj-values", "wrong number of arguments"), "oom-score-adj-values", "1 2", NULL);
    /* keyspace events: A hides its classes (and n), K E m follow */
    set_ok("notify-keyspace-events", "KEA", NULL);
    assert_string_equal(get("notify-keyspace-events"), "AKE");
    set_ok("notify-keyspace-events", "xgEn", NULL);
    assert_string_equal(get("notify-keyspace-events"), "gxnE");
    set_ok("notify-keyspace-events", "An", NULL);
    assert_string_equal(get("notify-keyspace-events"), "A");
    set_err(SET_FAILED("notify-keyspace-events", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."),
            "notify-keyspace-events", "w", NULL);
    set_ok("latency-tracking-info-percentiles", "50.0 99.99 100", NULL);
    assert_string_equal(get("latency-tracking-info-percentiles"), "50 99.99 100");
    set_err(SET_FAILED("latency-tracking-info-percentiles",
                       "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
            "latency-tracking-info-percentiles", "101", NULL);
    set_err(SET_FAILED("latency-tracking-info-percentiles", "Invalid latency-tracking-info-percentiles parameters"),
            "latency-tracking-info-percentiles", "x", NULL);
    /* bind and port: taken only where the workers could listen (probed
     * with sockets bound and closed; port 0 listens nowhere) */
    char free_port[16];
    snprintf(free_port, sizeof free_port, "%u", loopback_port(false));
    set_ok("bind", "127.0.0.1", NULL);
    set_ok("port", free_port, NULL);
    set_err(SET_FAILED("bind", "Failed to bind to specified addresses."), "bind", "999.999.999.999", NULL);
    set_err(SET_FAILED("bind", "Too many bind addresses specified."), "bind",
            "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", NULL);
    assert_string_equal(rk_config.bind, "127.0.0.1");
    /* an optional address the machine does not have is skipped */
    set_ok("bind", "127.0.0.1 -192.0.2.1", NULL);
    set_err(SET_FAILED("bind", "Failed to bind to specified addresses."), "bind", "127.0.0.1 192.0.2.1", NULL);
    set_err(SET_FAILED("port", "Unable to listen on this port. Check server logs."), "port", taken_port(), NULL);
    assert_string_equal(get("port"), free_port);
    set_ok("port", "0", NULL);
    set_ok("bind", "999.999.999.999", NULL);   /* as Redis: with no TCP port, no address is bound */
    set_ok("bind", "* -::*", NULL);
}

static char *set_dir(const char *path, bool local) {
    struct slice argv[2] = { SLICE_LIT("dir"), { path, strlen(path) } };
    return config_set(argv, 2, local);
}

/* dir is the working directory, and protected (enable-protected-configs). */
static void test_dir(void **state) {
    (void)state;
    char cwd[PATH_MAX], tmp[] = "/tmp/ringkv-config-dir-XXXXXX";
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_non_null(mkdtemp(tmp));
    const char *protected = SET_FAILED("dir", "can't set protected config");
    char *err = set_dir(tmp, true);
    assert_string_equal(err, protected);
    free(err);
    assert_null(load("enable-protected-configs local"));
    err = set_dir(tmp, false);
    assert_string_equal(err, protected);
    free(err);
    assert_null(set_dir(tmp, true));
    assert_string_equal(get("dir"), tmp);
    assert_null(load("enable-protected-configs yes"));
    err = set_dir("/nonexistent/ringkv", false);
    assert_string_equal(err, SET_FAILED("dir", "No such file or directory"));
    free(err);
    assert_string_equal(get("dir"), tmp);
    assert_null(set_dir(cwd, false));
    assert_string_equal(get("dir"), cwd);
    /* while loading, dir (and the others Redis holds back) wait, and a
     * CONFIG SET that names one changes nothing; the others may change */
    struct slice args[4] = { SLICE_LIT("loglevel"), SLICE_LIT("debug"), SLICE_LIT("dir"), { tmp, strlen(tmp) } };
    err = config_set(args, 4, CONFIG_SET_LOADING);
    assert_string_equal(err, "LOADING Redis is loading the dataset in memory");
    free(err);
    assert_string_equal(get("dir"), cwd);
    assert_string_equal(get("loglevel"), "notice");
    assert_null(config_set(args, 2, CONFIG_SET_LOADING));
    assert_string_equal(get("loglevel"), "debug");
    set_ok("loglevel", "notice", NULL);
    rmdir(tmp);
}

/* ------------------------------------------------------------ CONFIG SET as a whole */

static void test_set_all_or_nothing(void **state) {
    (void)state;
    set_ok("maxmemory", "10000002", NULL);
    /* the first bad value is reported, the good ones before it are not applied */
    set_err(SET_FAILED("maxmemory-clients", "percentage argument must be less or equal to 100"),
            "maxmemory", "10000001", "maxmemory-clients", "200%", "client-query-buffer-limit", "invalid", NULL);
    assert_string_equal(get("maxmemory"), "10000002");
    assert_string_equal(get("maxmemory-clients"), "0");
    assert_string_equal(get("client-query-buffer-limit"), "1073741824");
    /* a change ringkv cannot make undoes the others too */
    set_err(SET_FAILED("port", "Unable to listen on this port. Check server logs."),
            "maxmemory", "10000001", "port", taken_port(), "timeout", "5", NULL);
    assert_string_equal(get("maxmemory"), "10000002");
    assert_string_equal(get("timeout"), "0");
    /* all good: all applied */
    set_ok("maxmemory", "10000001", "save", "3000 5", "timeout", "7", NULL);
    assert_string_equal(get("maxmemory"), "10000001");
    assert_string_equal(get("save"), "3000 5");
    assert_int_equal(CONFIG_GET(timeout), 7);
}

static void test_set_name_errors(void **state) {
    (void)state;
    set_err("ERR Unknown option or number of arguments for CONFIG SET - 'foo'", "foo", "1", NULL);
    set_err(SET_FAILED("daemonize", "can't set immutable config"), "daemonize", "yes", NULL);
    set_err(SET_FAILED("DAEMONIZE", "can't set immutable config"), "DAEMONIZE", "yes", NULL);
    set_err(SET_FAILED("threads", "can't set immutable config"), "threads", "4", NULL);
    set_err(SET_FAILED("slaveof", "can't set immutable config"), "slaveof", "localhost 6379", NULL);
    /* the first problem in argument order wins, whatever it is */
    set_err("ERR Unknown option or number of arguments for CONFIG SET - 'foo'",
            "foo", "1", "daemonize", "yes", NULL);
    set_err(SET_FAILED("daemonize", "can't set immutable config"), "daemonize", "yes", "foo", "1", NULL);
    set_err("ERR Unknown option or number of arguments for CONFIG SET - 'foo'", "maxmemory", "x", "foo", "1", NULL);
    set_err(SET_FAILED("maxmemory", "duplicate parameter"), "maxmemory", "1", "maxmemory", "2", NULL);
    set_err(SET_FAILED("MAXMEMORY", "duplicate parameter"), "maxmemory", "1", "MAXMEMORY", "2", NULL);
    /* a name and its alias are two entries for Redis: the later wins */
    set_ok("hash-max-ziplist-entries", "100", "hash-max-listpack-entries", "200", NULL);
    assert_int_equal(CONFIG_GET(hash_max_listpack_entries), 200);
    /* a value error names the parameter as the table spells it */
    set_err(SET_FAILED("zset-max-ziplist-value", "argument must be a memory value"),
            "ZSET-MAX-ZIPLIST-VALUE", "x", NULL);
    set_err("ERR syntax error", "maxmemory", "1", "timeout", NULL);
    set_err("ERR Unknown option or number of arguments for CONFIG SET - 'list-max-ziplist-entries'",
            "list-max-ziplist-entries", "10", NULL);
}

/* ------------------------------------------------------------ config text */

static void test_config_text(void **state) {
    (void)state;
    assert_null(load("# comment\n\n   maxmemory 100mb   \r\n"
                     "loglevel \"verbose\"\n"
                     "requirepass 'it\\'s'\n"));
    assert_string_equal(get("maxmemory"), "104857600");
    assert_string_equal(get("loglevel"), "verbose");
    assert_string_equal(rk_config.requirepass, "it's");
    char *bad = load("requirepass 'it''s'\n");          /* a closing quote needs a space after it */
    assert_non_null(strstr(bad, "Unbalanced quotes"));
    free(bad);
    assert_null(load("requirepass \"a\\x41\\n b\"\nnotify-keyspace-events \"\"\n"));
    assert_string_equal(rk_config.requirepass, "aA\n b");
    /* several words, or one holding several; immutable ones load fine */
    assert_null(load("bind 127.0.0.1 -::1\nshutdown-on-sigterm \"nosave now\"\ndaemonize no\ndatabases 32\n"));
    assert_string_equal(rk_config.bind, "127.0.0.1 -::1");
    assert_string_equal(get("shutdown-on-sigterm"), "nosave now");
    assert_int_equal(rk_config.databases, 32);
    /* deprecated names are skipped, as Redis */
    assert_null(load("list-max-ziplist-entries 512\nlua-replicate-commands yes\n"));
    /* errors name the line */
    char *err = load("maxmemory 1\nport 6379 6380\n");
    assert_non_null(strstr(err, "at line 2\n>>> 'port 6379 6380'\nwrong number of arguments\n"));
    free(err);
    err = load("nosuch 1\n");
    assert_non_null(strstr(err, ">>> 'nosuch 1'\nBad directive or wrong number of arguments"));
    free(err);
    err = load("loglevel \"verbose\n");
    assert_non_null(strstr(err, "Unbalanced quotes in configuration line"));
    free(err);
    err = load("loglevel \"verbose\"x\n");
    assert_non_null(strstr(err, "Unbalanced quotes in configuration line"));
    free(err);
    err = load("hz abc\n");
    assert_non_null(strstr(err, "argument couldn't be parsed into an integer"));
    free(err);
    err = load("loadmodule /lib/mod.so\n");
    assert_non_null(strstr(err, "not supported by ringkv"));
    free(err);
    /* accepted, inert: Redis's test framework starts servers with them */
    assert_null(load("rename-command FLUSHDB \"\"\n"));
    assert_null(load("user default on nopass ~* +@all\n"));
    err = load("rename-command FLUSHDB\n");
    assert_non_null(strstr(err, "Bad directive or wrong number of arguments"));
    free(err);
}

/* The first save line replaces the defaults, later ones add, save "" clears. */
static void test_config_save_lines(void **state) {
    (void)state;
    assert_null(load("port 6379\n"));
    assert_string_equal(get("save"), "3600 1 300 100 60 10000");
    assert_null(load("save 900 1\nsave 300 10\n"));
    assert_string_equal(get("save"), "900 1 300 10");
    assert_null(load("save 900 1\nsave \"\"\nsave 60 5\n"));
    assert_string_equal(get("save"), "60 5");
    char *err = load("save 900\n");
    assert_non_null(strstr(err, "Invalid save parameters"));
    free(err);
}

static void test_include(void **state) {
    (void)state;
    char dir[] = "/tmp/ringkv-config-inc-XXXXXX", a[PATH_MAX + 32], b[PATH_MAX + 32], text[3 * PATH_MAX];
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/a.conf", dir);
    snprintf(b, sizeof b, "%s/b.conf", dir);
    FILE *f = fopen(a, "w");
    fprintf(f, "maxmemory 1mb\ntimeout 9\n");
    fclose(f);
    f = fopen(b, "w");
    fprintf(f, "timeout 11\n");
    fclose(f);
    snprintf(text, sizeof text, "include %s/*.conf\nhz 20\n", dir);
    assert_null(load(text));
    assert_string_equal(get("maxmemory"), "1048576");
    assert_int_equal(CONFIG_GET(timeout), 11);        /* b.conf after a.conf */
    assert_int_equal(CONFIG_GET(hz), 20);
    /* after an include, save lines replace instead of adding (Redis 7.0) */
    snprintf(text, sizeof text, "save 900 1\nsave 300 10\ninclude %s\nsave 60 5\n", b);
    assert_null(load(text));
    assert_string_equal(get("save"), "60 5");
    snprintf(text, sizeof text, "include %s/none-*.conf\n", dir);   /* no match: nothing */
    assert_null(load(text));
    snprintf(text, sizeof text, "include %s/missing.conf\n", dir);
    char *err = load(text);
    assert_non_null(strstr(err, "can't open config file"));
    free(err);
    /* a file that includes itself stops */
    f = fopen(a, "w");
    fprintf(f, "include %s\n", a);
    fclose(f);
    snprintf(text, sizeof text, "include %s\n", a);
    err = load(text);
    assert_non_null(strstr(err, "include each other"));
    free(err);
    unlink(a);
    unlink(b);
    rmdir(dir);
}

static int args(int n, ...) {
    char *argv[16];
    va_list ap;
    va_start(ap, n);
    argv[0] = "ringkv";
    for (int i = 0; i < n; i++) argv[i + 1] = va_arg(ap, char *);
    va_end(ap);
    return config_load_args(n + 1, argv);
}

/* The command line as redis-server reads it (introspection.tcl's cases). */
static void test_command_line(void **state) {
    (void)state;
    assert_int_equal(args(4, "--maxmemory 700mb", "--maxmemory-policy", "volatile-lru", "--timeout"), -1);
    assert_int_equal(args(3, "--maxmemory 700mb", "--maxmemory-policy", "volatile-lru"), 0);
    assert_string_equal(get("maxmemory"), "734003200");
    assert_string_equal(get("maxmemory-policy"), "volatile-lru");
    /* a value may start with --; after --save it is the next option */
    assert_int_equal(args(4, "--proc-title-template", "--my--title", "--loglevel", "verbose"), 0);
    assert_string_equal(get("proc-title-template"), "--my--title");
    assert_string_equal(get("loglevel"), "verbose");
    assert_int_equal(args(5, "--proc-title-template", "--save", "--save", "--loglevel", "debug"), 0);
    assert_string_equal(get("proc-title-template"), "--save");
    assert_string_equal(get("save"), "");
    assert_string_equal(get("loglevel"), "debug");
    assert_int_equal(args(5, "--shutdown-on-sigint", "nosave", "force", "now", "--port"), -1);
    assert_int_equal(args(4, "--shutdown-on-sigint", "nosave", "force", "now"), 0);
    assert_string_equal(get("shutdown-on-sigint"), "nosave now force");
    assert_int_equal(args(3, "--replicaof", "127.0.0.1", "abc"), -1);
    assert_int_equal(args(3, "--port", "6379", "6380"), -1);
    assert_int_equal(args(2, "--nosuch", "1"), -1);
}

struct inert { int n; char items[8][96]; };

static void note_inert(void *ud, const char *name, const char *value) {
    struct inert *in = ud;
    if (in->n < 8) snprintf(in->items[in->n++], sizeof in->items[0], "%s=%s", name, value);
}

/* Parameters ringkv stores without acting on, when they are not at their
 * defaults; timeout and appendonly are acted on, so they are not listed. */
static void test_inert_listed(void **state) {
    (void)state;
    struct inert in = { 0 };
    config_foreach_inert_changed(note_inert, &in);
    assert_int_equal(in.n, 0);
    set_ok("appendonly", "yes", "tcp-keepalive", "60", "timeout", "5", "aof-rewrite-incremental-fsync", "no", NULL);
    config_foreach_inert_changed(note_inert, &in);
    assert_int_equal(in.n, 2);
    assert_string_equal(in.items[0], "tcp-keepalive=60");
    assert_string_equal(in.items[1], "aof-rewrite-incremental-fsync=no");
}

/* The predicates protected mode and the protected commands rest on. */
static void test_protected_predicates(void **state) {
    (void)state;
    /* the default user has no password until requirepass is set */
    command_table_init();
    acl_init();
    assert_true(acl_default_passwordless());
    assert_int_equal(CONFIG_GET(protected_mode), 1);
    set_ok("requirepass", "secret", NULL);
    assert_false(acl_default_passwordless());
    set_ok("requirepass", "", NULL);
    assert_true(acl_default_passwordless());
    acl_shutdown();
    set_ok("protected-mode", "no", NULL);
    assert_int_equal(CONFIG_GET(protected_mode), 0);
    /* Redis's allowProtectedAction */
    assert_string_equal(rk_config.enable_debug_command, "no");
    assert_string_equal(rk_config.enable_module_command, "no");
    assert_false(config_allows_protected("no", true));
    assert_true(config_allows_protected("yes", false));
    assert_true(config_allows_protected("local", true));
    assert_false(config_allows_protected("local", false));
    set_err(SET_FAILED("enable-debug-command", "can't set immutable config"), "enable-debug-command", "yes", NULL);
    assert_null(load("enable-debug-command local\nenable-module-command yes\n"));
    assert_string_equal(rk_config.enable_debug_command, "local");
    assert_string_equal(rk_config.enable_module_command, "yes");
    /* Redis's islocalClient: exactly 127.0.0.1 or ::1 */
    assert_true(addr_is_loopback("127.0.0.1:6379"));
    assert_true(addr_is_loopback("::1:40000"));
    assert_false(addr_is_loopback("127.0.0.2:6379"));
    assert_false(addr_is_loopback("::ffff:127.0.0.1:6379"));
    assert_false(addr_is_loopback("192.0.2.1:6379"));
    assert_false(addr_is_loopback("127.0.0.10:1"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_redis_names_and_defaults, reset),
        cmocka_unit_test_setup(test_config_get_patterns, reset),
        cmocka_unit_test_setup(test_bools_and_enums, reset),
        cmocka_unit_test_setup(test_numbers, reset),
        cmocka_unit_test_setup(test_strings, reset),
        cmocka_unit_test_setup(test_specials, reset),
        cmocka_unit_test_setup(test_dir, reset),
        cmocka_unit_test_setup(test_set_all_or_nothing, reset),
        cmocka_unit_test_setup(test_set_name_errors, reset),
        cmocka_unit_test_setup(test_config_text, reset),
        cmocka_unit_test_setup(test_config_save_lines, reset),
        cmocka_unit_test_setup(test_include, reset),
        cmocka_unit_test_setup(test_command_line, reset),
        cmocka_unit_test_setup(test_inert_listed, reset),
        cmocka_unit_test_setup(test_protected_predicates, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
