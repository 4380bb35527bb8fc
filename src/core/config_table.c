/*
 * The configuration table, CONFIG GET and CONFIG SET.
 *
 * Every parameter of Redis 7.0 is a row (with TLS's, which Debian builds
 * in), plus ringkv's own (threads, io-buffers, io-buffer-size,
 * io-batch-wait-us, io-iteration-budget-us, metrics-port, and Redis 7.2's set-max-listpack-* that ringkv's sets
 * follow): its name and alias, type, bounds, default, flags and where the
 * value lives. Rows marked INERT are parameters of features ringkv does not
 * build yet: their values are checked, stored and reported as Redis does,
 * and setting one says in the log that it has no effect.
 *
 * CONFIG SET of several pairs is all or nothing: names are checked first
 * (unknown, immutable, protected, duplicate: the first problem wins), then
 * every value is parsed and checked, then the changes ringkv must act on
 * are checked against what it can do now (port, bind), and only then is
 * anything stored. So there is never a partial change to roll back, and no
 * other thread ever sees one.
 */
#include "config_types.h"
#include "ringkv/acl.h"
#include "ringkv/listen.h"
#include "ringkv/log.h"
#include "ringkv/util.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

/* ------------------------------------------------------------ enums */

static const struct penum maxmemory_policy_enum[] = {
    {"volatile-lru", 0}, {"volatile-lfu", 1}, {"volatile-random", 2}, {"volatile-ttl", 3},
    {"allkeys-lru", 4}, {"allkeys-lfu", 5}, {"allkeys-random", 6}, {"noeviction", 7}, {NULL, 0},
};
static const struct penum syslog_facility_enum[] = {
    {"user", 0}, {"local0", 1}, {"local1", 2}, {"local2", 3}, {"local3", 4}, {"local4", 5},
    {"local5", 6}, {"local6", 7}, {"local7", 8}, {NULL, 0},
};
static const struct penum loglevel_enum[] = {
    {"debug", 0}, {"verbose", 1}, {"notice", 2}, {"warning", 3}, {NULL, 0},
};
static const struct penum supervised_enum[] = {
    {"upstart", 1}, {"systemd", 2}, {"auto", 3}, {"no", 0}, {NULL, 0},
};
static const struct penum appendfsync_enum[] = {
    {"everysec", 0}, {"always", 1}, {"no", 2}, {NULL, 0},
};
/* bit flags: several may be given, printed in this order */
static const struct penum shutdown_enum[] = {
    {"default", 0}, {"save", 1}, {"nosave", 2}, {"now", 4}, {"force", 8}, {NULL, 0},
};
static const struct penum diskless_load_enum[] = {
    {"disabled", 0}, {"on-empty-db", 1}, {"swapdb", 2}, {NULL, 0},
};
static const struct penum tls_auth_enum[] = {
    {"no", 0}, {"yes", 1}, {"optional", 2}, {NULL, 0},
};
/* "relative" is another name of "yes", which CONFIG GET prints */
static const struct penum oom_score_adj_enum[] = {
    {"no", 0}, {"yes", 1}, {"relative", 1}, {"absolute", 2}, {NULL, 0},
};
static const struct penum acl_pubsub_enum[] = {
    {"allchannels", 1}, {"resetchannels", 0}, {NULL, 0},
};
static const struct penum sanitize_enum[] = {
    {"no", 0}, {"yes", 1}, {"clients", 2}, {NULL, 0},
};
static const struct penum protected_enum[] = {
    {"no", 0}, {"yes", 1}, {"local", 2}, {NULL, 0},
};
static const struct penum endpoint_enum[] = {
    {"ip", 0}, {"hostname", 1}, {"unknown-endpoint", 2}, {NULL, 0},
};
static const struct penum propagation_enum[] = {
    {"ignore", 0}, {"panic", 1}, {"panic-on-replicas", 2}, {NULL, 0},
};

/* ------------------------------------------------------------ changes ringkv cannot take now */

/* CONFIG SET port and bind: the workers can listen there (listen.h);
 * they move once the value is stored (stored_listen). */
static bool apply_port(struct pvalue *v, const char **err) {
    struct listen_set probe;
    if (listen_open(&probe, __atomic_load_n(&rk_config.bind, __ATOMIC_ACQUIRE), v->n,
                    LISTEN_SHARED | LISTEN_PROBE) == 0)
        return true;
    *err = "Unable to listen on this port. Check server logs.";
    return false;
}

static bool apply_bind(struct pvalue *v, const char **err) {
    struct listen_set probe;
    if (listen_open(&probe, v->s, CONFIG_GET(port), LISTEN_SHARED | LISTEN_PROBE) == 0) return true;
    *err = "Failed to bind to specified addresses.";
    return false;
}

/* The /metrics listener opens at start on thread 0 (io/metrics_http.c)
 * and, unlike the clients' listeners, does not move at run time. */
static bool apply_metrics_port(struct pvalue *v, const char **err) {
    rk_log(LL_WARNING, "CONFIG SET metrics-port %lld refused: the metrics listener does not move at run time "
           "(restart with --metrics-port)", v->n);
    *err = "The metrics listener does not move at run time (restart with --metrics-port).";
    return false;
}

/* Room for maxclients connections, as at start (main.c): raised when the
 * hard limit allows, a warning when it does not. */
static bool apply_maxclients(struct pvalue *v, const char **err) {
    (void)err;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return true;
    rlim_t want = (rlim_t)v->n + 32 + (rlim_t)CONFIG_GET(threads) * 4;
    if (rl.rlim_cur >= want) return true;
    rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < want)
        rk_log(LL_WARNING, "Open files limited to %llu, fewer than maxclients %lld needs",
               (unsigned long long)rl.rlim_cur, v->n);
    return true;
}

/* Redis's replication backlog is never smaller than 16 KB once resized. */
static bool apply_repl_backlog(struct pvalue *v, const char **err) {
    (void)err;
    if (v->n < 16 * 1024) v->n = 16 * 1024;
    return true;
}

/* ------------------------------------------------------------ values ringkv acts on once stored */

/* the default user's password (acl.h), NUL bytes and all */
static void stored_requirepass(const struct param *p, const struct pvalue *v) {
    (void)p;
    acl_set_requirepass(v->s, v->s ? v->slen : 0);
}

static void stored_listen(const struct param *p, const struct pvalue *v) {
    (void)p;
    (void)v;
    __atomic_add_fetch(&rk_config_listen_gen, 1, __ATOMIC_RELEASE);
}

/* The log's level follows loglevel however it is set (default, file,
 * command line, CONFIG SET). */
static void stored_loglevel(const struct param *p, const struct pvalue *v) {
    (void)p;
    (void)v;
    const char *name = __atomic_load_n(&rk_config.loglevel, __ATOMIC_ACQUIRE);
    for (const struct penum *e = loglevel_enum; e->name; e++)
        if (name && strcmp(e->name, name) == 0) rk_log_set_level((int)e->value);
}

/* ------------------------------------------------------------ the table */

#define IMM    PF_IMMUTABLE
#define PROT   PF_PROTECTED
#define HID    PF_HIDDEN
#define MULTI  PF_MULTI_ARG
#define INERT  PF_INERT
#define NUL    PF_EMPTY_NULL
#define BIN    PF_BINARY
#define NOLOAD PF_DENY_LOADING

#define BOOL_(nm, al, fl, dflt, ...) \
    { .name = nm, .alias = al, .type = PT_BOOL, .flags = fl, .min = 0, .max = 1, .def = dflt, __VA_ARGS__ }
#define NUM_(nm, al, fl, nf, lo, hi, dflt, ...) \
    { .name = nm, .alias = al, .type = PT_NUM, .num = nf, .flags = fl, .min = lo, .max = hi, .def = dflt, __VA_ARGS__ }
#define ENUM_(nm, al, fl, en, dflt, ...) \
    { .name = nm, .alias = al, .type = PT_ENUM, .flags = fl, .enums = en, .def_str = dflt, __VA_ARGS__ }
#define FLAGS_(nm, al, fl, en, dflt, ...) \
    { .name = nm, .alias = al, .type = PT_FLAGS, .flags = (fl) | MULTI, .enums = en, .def = dflt, __VA_ARGS__ }
#define STR_(nm, al, fl, dflt, ...) \
    { .name = nm, .alias = al, .type = PT_STRING, .flags = fl, .def_str = dflt, __VA_ARGS__ }
#define SPECIAL_(nm, al, fl, ops, dflt, ...) \
    { .name = nm, .alias = al, .type = PT_SPECIAL, .flags = fl, .special = &(ops), .def_str = dflt, __VA_ARGS__ }

/* Redis's C types, for the bounds: */
#define U       NF_UNSIGNED
#define MEM     NF_MEMORY
#define I_MAX   INT_MAX
#define L_MAX   LONG_MAX
#define LL_MAX  LLONG_MAX
#define ULL_MAX ((long long)ULLONG_MAX)   /* compared as unsigned */
#define MB      (1024LL * 1024)
#define FIELD(f) .field = &rk_config.f

static struct param params[] = {
    /* ---- what ringkv acts on */
    NUM_("port", NULL, 0, 0, 0, 65535, 6379, FIELD(port), .apply = apply_port, .stored = stored_listen),
    SPECIAL_("bind", NULL, MULTI, special_bind, "* -::*", .apply = apply_bind, .stored = stored_listen),
    /* ringkv's own start-time settings: CONFIG GET by exact name, so that a
     * tool which sets back everything CONFIG GET * lists meets Redis's set */
    NUM_("threads", NULL, IMM | HID, 0, 1, 64, 1, FIELD(threads)),
    NUM_("io-buffers", NULL, IMM | HID, 0, 16, 32768, 512, FIELD(io_buffers)),
    NUM_("io-buffer-size", NULL, IMM | HID, MEM, 1024, MB, 16384, FIELD(io_buffer_size)),
    NUM_("io-batch-wait-us", NULL, 0, 0, 0, 10000, 50, FIELD(io_batch_wait_us)),
    NUM_("io-iteration-budget-us", NULL, 0, 0, 0, 1000000, 500, FIELD(io_iteration_budget_us)),
    NUM_("metrics-port", NULL, HID, 0, 0, 65535, 0, FIELD(metrics_port), .apply = apply_metrics_port),
    NUM_("maxclients", NULL, 0, U, 1, UINT_MAX, 10000, FIELD(maxclients), .apply = apply_maxclients),
    NUM_("timeout", NULL, 0, 0, 0, I_MAX, 0, FIELD(timeout)),
    STR_("requirepass", NULL, NUL | BIN, NULL, FIELD(requirepass), .stored = stored_requirepass),
    BOOL_("protected-mode", NULL, 0, 1, FIELD(protected_mode)),
    NUM_("proto-max-bulk-len", NULL, 0, MEM, MB, L_MAX, 512 * MB, FIELD(proto_max_bulk_len)),
    NUM_("client-query-buffer-limit", NULL, 0, MEM | U, MB, L_MAX, 1024 * MB, FIELD(client_query_buffer_limit)),
    /* its replica class is stored and shown only: ringkv has no replicas */
    SPECIAL_("client-output-buffer-limit", NULL, MULTI, special_obuf,
             "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    NUM_("tracking-table-max-keys", NULL, 0, U, 0, L_MAX, 1000000, FIELD(tracking_table_max_keys)),
    NUM_("databases", NULL, IMM, 0, 1, I_MAX, 16, FIELD(databases)),
    NUM_("hz", NULL, 0, 0, 0, I_MAX, 10, FIELD(hz), .check = check_hz),
    NUM_("list-max-listpack-size", "list-max-ziplist-size", 0, 0, INT_MIN, I_MAX, -2, FIELD(list_max_listpack_size)),
    NUM_("list-compress-depth", NULL, 0, 0, 0, I_MAX, 0, FIELD(list_compress_depth)),
    NUM_("hash-max-listpack-entries", "hash-max-ziplist-entries", 0, U, 0, L_MAX, 512, FIELD(hash_max_listpack_entries)),
    NUM_("hash-max-listpack-value", "hash-max-ziplist-value", 0, MEM | U, 0, L_MAX, 64, FIELD(hash_max_listpack_value)),
    NUM_("set-max-intset-entries", NULL, 0, U, 0, L_MAX, 512, FIELD(set_max_intset_entries)),
    NUM_("set-max-listpack-entries", NULL, 0, U, 0, L_MAX, 128, FIELD(set_max_listpack_entries)),
    NUM_("set-max-listpack-value", NULL, 0, MEM | U, 0, L_MAX, 64, FIELD(set_max_listpack_value)),
    NUM_("zset-max-listpack-entries", "zset-max-ziplist-entries", 0, U, 0, L_MAX, 128, FIELD(zset_max_listpack_entries)),
    NUM_("zset-max-listpack-value", "zset-max-ziplist-value", 0, MEM | U, 0, L_MAX, 64, FIELD(zset_max_listpack_value)),
    SPECIAL_("dir", NULL, PROT | NOLOAD, special_dir, NULL),
    ENUM_("enable-protected-configs", NULL, IMM, protected_enum, "no", FIELD(enable_protected_configs)),
    ENUM_("enable-debug-command", NULL, IMM, protected_enum, "no", FIELD(enable_debug_command)),
    ENUM_("enable-module-command", NULL, IMM, protected_enum, "no", FIELD(enable_module_command)),

    /* ---- stored and reported; the features are not built yet */
    NUM_("maxmemory", NULL, 0, MEM | U, 0, ULL_MAX, 0, FIELD(maxmemory)),
    ENUM_("maxmemory-policy", NULL, 0, maxmemory_policy_enum, "noeviction", FIELD(maxmemory_policy)),
    NUM_("maxmemory-samples", NULL, 0, 0, 1, I_MAX, 5, FIELD(maxmemory_samples)),
    NUM_("maxmemory-eviction-tenacity", NULL, 0, 0, 0, 100, 10, FIELD(maxmemory_eviction_tenacity)),
    NUM_("maxmemory-clients", NULL, 0, MEM | NF_PERCENT, -100, LL_MAX, 0, FIELD(maxmemory_clients)),
    NUM_("tcp-keepalive", NULL, INERT, 0, 0, I_MAX, 300),
    NUM_("tcp-backlog", NULL, IMM | INERT, 0, 0, I_MAX, 511),

    NUM_("io-threads", NULL, IMM | INERT, 0, 1, 128, 1),
    BOOL_("io-threads-do-reads", NULL, IMM | INERT, 0),
    NUM_("active-expire-effort", NULL, INERT, 0, 1, 10, 1),
    BOOL_("dynamic-hz", NULL, INERT, 1),
    BOOL_("activerehashing", NULL, INERT, 1),
    BOOL_("lazyfree-lazy-eviction", NULL, 0, 0, FIELD(lazyfree_lazy_eviction)),
    BOOL_("lazyfree-lazy-expire", NULL, 0, 0, FIELD(lazyfree_lazy_expire)),
    BOOL_("lazyfree-lazy-server-del", NULL, 0, 0, FIELD(lazyfree_lazy_server_del)),
    BOOL_("lazyfree-lazy-user-del", NULL, 0, 0, FIELD(lazyfree_lazy_user_del)),
    BOOL_("lazyfree-lazy-user-flush", NULL, 0, 0, FIELD(lazyfree_lazy_user_flush)),
    NUM_("lfu-log-factor", NULL, 0, 0, 0, I_MAX, 10, FIELD(lfu_log_factor)),
    NUM_("lfu-decay-time", NULL, 0, 0, 0, I_MAX, 1, FIELD(lfu_decay_time)),
    BOOL_("activedefrag", NULL, INERT, 0, .check = check_activedefrag),
    NUM_("active-defrag-cycle-min", NULL, INERT, 0, 1, 99, 1),
    NUM_("active-defrag-cycle-max", NULL, INERT, 0, 1, 99, 25),
    NUM_("active-defrag-threshold-lower", NULL, INERT, 0, 0, 1000, 10),
    NUM_("active-defrag-threshold-upper", NULL, INERT, 0, 0, 1000, 100),
    NUM_("active-defrag-ignore-bytes", NULL, INERT, MEM | U, 1, LL_MAX, 100 * MB),
    NUM_("active-defrag-max-scan-fields", NULL, INERT, U, 1, L_MAX, 1000),
    BOOL_("jemalloc-bg-thread", NULL, INERT, 1),
    NUM_("stream-node-max-bytes", NULL, 0, MEM | U, 0, L_MAX, 4096, FIELD(stream_node_max_bytes)),
    NUM_("stream-node-max-entries", NULL, 0, 0, 0, LL_MAX, 100, FIELD(stream_node_max_entries)),
    NUM_("hll-sparse-max-bytes", NULL, INERT, MEM | U, 0, L_MAX, 3000),
    SPECIAL_("notify-keyspace-events", NULL, 0, special_notify, "\"\""),
    NUM_("busy-reply-threshold", "lua-time-limit", 0, 0, 0, L_MAX, 5000, FIELD(busy_reply_threshold)),
    NUM_("slowlog-log-slower-than", NULL, 0, 0, -1, LL_MAX, 10000, FIELD(slowlog_log_slower_than)),
    NUM_("slowlog-max-len", NULL, 0, U, 0, L_MAX, 128, FIELD(slowlog_max_len)),
    NUM_("latency-monitor-threshold", NULL, 0, 0, 0, LL_MAX, 0, FIELD(latency_monitor_threshold)),
    BOOL_("latency-tracking", NULL, INERT, 1),
    SPECIAL_("latency-tracking-info-percentiles", NULL, MULTI | INERT, special_percentiles, "50 99 99.9"),
    NUM_("acllog-max-len", NULL, 0, U, 0, L_MAX, 128, FIELD(acllog_max_len)),
    STR_("aclfile", NULL, IMM, "", FIELD(aclfile)),
    ENUM_("acl-pubsub-default", NULL, 0, acl_pubsub_enum, "resetchannels", FIELD(acl_pubsub_default)),
    STR_("masteruser", NULL, NUL | INERT, NULL),
    STR_("masterauth", NULL, NUL | INERT, NULL),
    ENUM_("sanitize-dump-payload", NULL, INERT, sanitize_enum, "no"),
    ENUM_("propagation-error-behavior", NULL, INERT, propagation_enum, "ignore"),

    /* process, logging, signals */
    BOOL_("daemonize", NULL, IMM | INERT, 0),
    ENUM_("supervised", NULL, IMM | INERT, supervised_enum, "no"),
    STR_("pidfile", NULL, IMM | NUL, NULL, FIELD(pidfile)),
    ENUM_("loglevel", NULL, 0, loglevel_enum, "notice", FIELD(loglevel), .stored = stored_loglevel),
    STR_("logfile", NULL, IMM, "", FIELD(logfile)),
    BOOL_("syslog-enabled", NULL, IMM | INERT, 0),
    STR_("syslog-ident", NULL, IMM | INERT, "redis"),
    ENUM_("syslog-facility", NULL, IMM | INERT, syslog_facility_enum, "local0"),
    BOOL_("always-show-logo", NULL, IMM, 0, FIELD(always_show_logo)),
    BOOL_("set-proc-title", NULL, IMM | INERT, 1),
    STR_("proc-title-template", NULL, INERT, "{title} {listen-addr} {server-mode}", .check = check_proc_title),
    BOOL_("crash-log-enabled", NULL, INERT, 1),
    BOOL_("crash-memcheck-enabled", NULL, INERT, 1),
    BOOL_("use-exit-on-panic", NULL, HID | INERT, 0),
    NUM_("watchdog-period", NULL, HID | INERT, 0, 0, I_MAX, 0),
    BOOL_("disable-thp", NULL, IMM, 1, FIELD(disable_thp)),
    ENUM_("oom-score-adj", NULL, INERT, oom_score_adj_enum, "no"),
    SPECIAL_("oom-score-adj-values", NULL, MULTI | INERT, special_oom, "0 200 800"),
    FLAGS_("shutdown-on-sigint", NULL, INERT, shutdown_enum, 0, .check = check_shutdown_flags),
    FLAGS_("shutdown-on-sigterm", NULL, INERT, shutdown_enum, 0, .check = check_shutdown_flags),
    NUM_("shutdown-timeout", NULL, INERT, 0, 0, I_MAX, 10),
    STR_("ignore-warnings", NULL, INERT, ""),
    STR_("server_cpulist", NULL, IMM | NUL | INERT, NULL),
    STR_("bio_cpulist", NULL, IMM | NUL | INERT, NULL),
    STR_("aof_rewrite_cpulist", NULL, IMM | NUL | INERT, NULL),
    STR_("bgsave_cpulist", NULL, IMM | NUL | INERT, NULL),
    STR_("unixsocket", NULL, IMM | NUL, NULL, FIELD(unixsocket)),
    NUM_("unixsocketperm", NULL, IMM, NF_OCTAL | U, 0, 0777, 0, FIELD(unixsocketperm)),
    NUM_("socket-mark-id", NULL, IMM | INERT, U, 0, UINT_MAX, 0),
    STR_("bind-source-addr", NULL, NUL | INERT, NULL),

    /* persistence */
    SPECIAL_("save", NULL, MULTI, special_save, "3600 1 300 100 60 10000"),
    STR_("dbfilename", NULL, PROT, "dump.rdb", .check = check_dbfilename, FIELD(dbfilename)),
    BOOL_("rdbcompression", NULL, 0, 1, FIELD(rdbcompression)),
    BOOL_("rdbchecksum", NULL, IMM, 1, FIELD(rdbchecksum)),
    BOOL_("rdb-del-sync-files", NULL, INERT, 0),
    BOOL_("rdb-save-incremental-fsync", NULL, INERT, 1),
    BOOL_("stop-writes-on-bgsave-error", NULL, 0, 1, FIELD(stop_writes_on_bgsave_error)),
    NUM_("rdb-key-save-delay", NULL, HID | INERT, 0, INT_MIN, I_MAX, 0),
    NUM_("key-load-delay", NULL, HID, 0, INT_MIN, I_MAX, 0, FIELD(key_load_delay)),
    NUM_("loading-process-events-interval-bytes", NULL, HID | INERT, 0, 1024, I_MAX, 2 * MB),
    BOOL_("appendonly", NULL, NOLOAD, 0, FIELD(appendonly)),
    STR_("appendfilename", NULL, IMM, "appendonly.aof", .check = check_appendfilename, FIELD(appendfilename)),
    STR_("appenddirname", NULL, IMM, "appendonlydir", .check = check_appenddirname, FIELD(appenddirname)),
    ENUM_("appendfsync", NULL, 0, appendfsync_enum, "everysec", FIELD(appendfsync)),
    BOOL_("no-appendfsync-on-rewrite", NULL, 0, 0, FIELD(no_appendfsync_on_rewrite)),
    NUM_("auto-aof-rewrite-percentage", NULL, 0, 0, 0, I_MAX, 100, FIELD(auto_aof_rewrite_percentage)),
    NUM_("auto-aof-rewrite-min-size", NULL, 0, MEM, 0, LL_MAX, 64 * MB, FIELD(auto_aof_rewrite_min_size)),
    BOOL_("aof-load-truncated", NULL, 0, 1, FIELD(aof_load_truncated)),
    BOOL_("aof-use-rdb-preamble", NULL, 0, 1, FIELD(aof_use_rdb_preamble)),
    BOOL_("aof-rewrite-incremental-fsync", NULL, INERT, 1),
    BOOL_("aof-timestamp-enabled", NULL, 0, 0, FIELD(aof_timestamp_enabled)),
    BOOL_("aof-disable-auto-gc", NULL, 0, 0, FIELD(aof_disable_auto_gc)),

    /* replication */
    SPECIAL_("replicaof", "slaveof", IMM | MULTI | INERT, special_replicaof, "no one"),
    BOOL_("replica-serve-stale-data", "slave-serve-stale-data", INERT, 1),
    BOOL_("replica-read-only", "slave-read-only", INERT, 1),
    BOOL_("replica-lazy-flush", "slave-lazy-flush", INERT, 0),
    BOOL_("replica-ignore-maxmemory", "slave-ignore-maxmemory", INERT, 1),
    BOOL_("replica-announced", NULL, INERT, 1),
    BOOL_("replica-ignore-disk-write-errors", NULL, INERT, 0),
    STR_("replica-announce-ip", "slave-announce-ip", NUL | INERT, NULL),
    NUM_("replica-announce-port", "slave-announce-port", INERT, 0, 0, 65535, 0),
    NUM_("replica-priority", "slave-priority", INERT, 0, 0, I_MAX, 100),
    NUM_("min-replicas-to-write", "min-slaves-to-write", 0, 0, 0, I_MAX, 0, FIELD(min_replicas_to_write)),
    NUM_("min-replicas-max-lag", "min-slaves-max-lag", 0, 0, 0, I_MAX, 10, FIELD(min_replicas_max_lag)),
    NUM_("repl-ping-replica-period", "repl-ping-slave-period", INERT, 0, 1, I_MAX, 10),
    NUM_("repl-timeout", NULL, INERT, 0, 1, I_MAX, 60),
    BOOL_("repl-disable-tcp-nodelay", NULL, INERT, 0),
    BOOL_("repl-diskless-sync", NULL, INERT, 1),
    NUM_("repl-diskless-sync-delay", NULL, INERT, 0, 0, I_MAX, 5),
    NUM_("repl-diskless-sync-max-replicas", NULL, INERT, 0, 0, I_MAX, 0),
    ENUM_("repl-diskless-load", NULL, INERT | NOLOAD, diskless_load_enum, "disabled"),
    NUM_("repl-backlog-size", NULL, INERT, MEM, 1, LL_MAX, MB, .apply = apply_repl_backlog),
    NUM_("repl-backlog-ttl", NULL, INERT, 0, 0, L_MAX, 3600),

    /* cluster */
    BOOL_("cluster-enabled", NULL, IMM | INERT, 0),
    STR_("cluster-config-file", NULL, IMM | INERT, "nodes.conf"),
    NUM_("cluster-node-timeout", NULL, INERT, 0, 0, LL_MAX, 15000),
    NUM_("cluster-port", NULL, IMM | INERT, 0, 0, 65535, 0),
    NUM_("cluster-migration-barrier", NULL, INERT, 0, 0, I_MAX, 1),
    NUM_("cluster-replica-validity-factor", "cluster-slave-validity-factor", INERT, 0, 0, I_MAX, 10),
    BOOL_("cluster-replica-no-failover", "cluster-slave-no-failover", INERT, 0),
    BOOL_("cluster-require-full-coverage", NULL, INERT, 1),
    BOOL_("cluster-allow-reads-when-down", NULL, INERT, 0),
    BOOL_("cluster-allow-pubsubshard-when-down", NULL, INERT, 1),
    BOOL_("cluster-allow-replica-migration", NULL, INERT, 1),
    STR_("cluster-announce-ip", NULL, NUL | INERT, NULL),
    STR_("cluster-announce-hostname", NULL, NUL | INERT, NULL, .check = check_hostname),
    NUM_("cluster-announce-port", NULL, INERT, 0, 0, 65535, 0),
    NUM_("cluster-announce-bus-port", NULL, INERT, 0, 0, 65535, 0),
    NUM_("cluster-announce-tls-port", NULL, INERT, 0, 0, 65535, 0),
    ENUM_("cluster-preferred-endpoint-type", NULL, INERT, endpoint_enum, "ip"),
    NUM_("cluster-link-sendbuf-limit", NULL, INERT, MEM | U, 0, ULL_MAX, 0),

    /* TLS */
    NUM_("tls-port", NULL, INERT, 0, 0, 65535, 0),
    STR_("tls-cert-file", NULL, NUL | INERT, NULL),
    STR_("tls-key-file", NULL, NUL | INERT, NULL),
    STR_("tls-key-file-pass", NULL, NUL | INERT, NULL),
    STR_("tls-client-cert-file", NULL, NUL | INERT, NULL),
    STR_("tls-client-key-file", NULL, NUL | INERT, NULL),
    STR_("tls-client-key-file-pass", NULL, NUL | INERT, NULL),
    STR_("tls-dh-params-file", NULL, NUL | INERT, NULL),
    STR_("tls-ca-cert-file", NULL, NUL | INERT, NULL),
    STR_("tls-ca-cert-dir", NULL, NUL | INERT, NULL),
    STR_("tls-protocols", NULL, NUL | INERT, NULL),
    STR_("tls-ciphers", NULL, NUL | INERT, NULL),
    STR_("tls-ciphersuites", NULL, NUL | INERT, NULL),
    ENUM_("tls-auth-clients", NULL, INERT, tls_auth_enum, "yes"),
    BOOL_("tls-replication", NULL, INERT, 0),
    BOOL_("tls-cluster", NULL, INERT, 0),
    BOOL_("tls-prefer-server-ciphers", NULL, INERT, 0),
    BOOL_("tls-session-caching", NULL, INERT, 1),
    NUM_("tls-session-cache-size", NULL, INERT, 0, 0, I_MAX, 20480),
    NUM_("tls-session-cache-timeout", NULL, INERT, 0, 0, I_MAX, 300),
};

#define NPARAMS RK_ARRAY_LEN(params)

/* ------------------------------------------------------------ lookup */

struct param *param_lookup(const char *name, size_t len, bool *is_alias) {
    for (size_t i = 0; i < NPARAMS; i++) {
        struct param *p = &params[i];
        if (strlen(p->name) == len && strncasecmp(p->name, name, len) == 0) {
            if (is_alias) *is_alias = false;
            return p;
        }
        if (p->alias && strlen(p->alias) == len && strncasecmp(p->alias, name, len) == 0) {
            if (is_alias) *is_alias = true;
            return p;
        }
    }
    return NULL;
}

void config_note_inert(const struct param *p) {
    rk_log(LL_WARNING, "%s is accepted but has no effect in ringkv yet", p->name);
}


/* ------------------------------------------------------------ defaults */

/* Each parameter's default as CONFIG GET prints it, to tell which inert
 * parameters were changed. */
static char *default_text[NPARAMS];

void config_set_defaults(void) {
    config_note_umask();
    config_lock();
    struct rbuf out = { 0 };
    for (size_t i = 0; i < NPARAMS; i++) {
        param_set_default(&params[i]);
        param_format(&params[i], &out);
        free(default_text[i]);
        default_text[i] = strdup(out.buf);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    rk_config.threads = cpus > 0 ? (cpus > 64 ? 64 : cpus) : 1;
    /* that is the default CONFIG REWRITE leaves out */
    struct param *threads = param_lookup("threads", 7, NULL);
    param_format(threads, &out);
    free(default_text[threads - params]);
    default_text[threads - params] = strdup(out.buf);
    rbuf_free(&out);
    config_unlock();
}

size_t config_param_count(void) { return NPARAMS; }
struct param *config_param_at(size_t i) { return i < NPARAMS ? &params[i] : NULL; }
const char *config_param_default(size_t i) { return i < NPARAMS && default_text[i] ? default_text[i] : ""; }

void config_foreach_inert_changed(void (*fn)(void *ud, const char *name, const char *value), void *ud) {
    config_lock();
    struct rbuf out = { 0 };
    for (size_t i = 0; i < NPARAMS; i++) {
        if (!(params[i].flags & PF_INERT)) continue;
        param_format(&params[i], &out);
        if (!default_text[i] || strcmp(out.buf, default_text[i]) != 0) fn(ud, params[i].name, out.buf);
    }
    rbuf_free(&out);
    config_unlock();
}

/* ------------------------------------------------------------ CONFIG GET */

static bool is_glob(struct slice s) {
    for (size_t i = 0; i < s.len; i++)
        if (s.ptr[i] == '*' || s.ptr[i] == '?' || s.ptr[i] == '[') return true;
    return false;
}

void config_get(struct slice pattern, config_get_fn *fn, void *ud) {
    struct rbuf out = { 0 };
    config_lock();
    if (!is_glob(pattern)) {
        const struct param *p = param_lookup(pattern.ptr, pattern.len, NULL);
        if (p) {
            param_format(p, &out);
            fn(ud, pattern, out.buf);
        }
    } else {
        for (size_t i = 0; i < NPARAMS; i++) {
            const struct param *p = &params[i];
            if (p->flags & PF_HIDDEN) continue;
            const char *names[2] = { p->name, p->alias };
            for (int k = 0; k < 2 && names[k]; k++) {
                struct slice n = { names[k], strlen(names[k]) };
                if (!string_match(pattern.ptr, pattern.len, n.ptr, n.len, true)) continue;
                param_format(p, &out);
                fn(ud, n, out.buf);
            }
        }
    }
    config_unlock();
    rbuf_free(&out);
}

bool config_get_value(const char *name, char *buf, size_t buflen) {
    const struct param *p = param_lookup(name, strlen(name), NULL);
    if (!p) return false;
    struct rbuf out = { 0 };
    config_lock();
    param_format(p, &out);
    config_unlock();
    snprintf(buf, buflen, "%s", out.buf);
    rbuf_free(&out);
    return true;
}

/* ------------------------------------------------------------ CONFIG SET */

struct set_item {
    struct param *p;
    bool alias;
    struct pvalue v;
    bool changed;
};

static const char *item_name(const struct set_item *it) { return it->alias ? it->p->alias : it->p->name; }

static char *set_failed(const char *name, size_t len, const char *why) {
    return rk_asprintf("ERR CONFIG SET failed (possibly related to argument '%.*s') - %s", (int)len, name, why);
}

/* Names first: unknown, immutable, protected, duplicate; then, as Redis,
 * one that may not change while loading. */
static char *check_names(const struct slice *argv, int n, unsigned how, struct set_item *items) {
    bool protected_ok = config_allows_protected(rk_config.enable_protected_configs, how & CONFIG_SET_LOCAL);
    bool deny_loading = false;
    for (int i = 0; i < n; i++) {
        struct slice name = argv[2 * i];
        struct set_item *it = &items[i];
        it->p = param_lookup(name.ptr, name.len, &it->alias);
        if (!it->p)
            return rk_asprintf("ERR Unknown option or number of arguments for CONFIG SET - '%.*s'",
                             (int)name.len, name.ptr);
        if (it->p->flags & PF_IMMUTABLE) return set_failed(name.ptr, name.len, "can't set immutable config");
        if ((it->p->flags & PF_PROTECTED) && !protected_ok)
            return set_failed(name.ptr, name.len, "can't set protected config");
        for (int j = 0; j < i; j++)
            if (items[j].p == it->p && items[j].alias == it->alias)
                return set_failed(name.ptr, name.len, "duplicate parameter");
        deny_loading |= (how & CONFIG_SET_LOADING) && (it->p->flags & PF_DENY_LOADING);
    }
    return deny_loading ? rk_asprintf("LOADING Redis is loading the dataset in memory") : NULL;
}

/* One value as CONFIG SET gives it: several words split at single spaces
 * for the multi-word parameters (so "" is no word at all), else one. */
static bool parse_set_value(struct set_item *it, struct slice value, const char **err) {
    char *s = rk_malloc(value.len + 1);
    memcpy(s, value.ptr, value.len);
    s[value.len] = '\0';
    char **words = NULL;
    int n = 0;
    if (!(it->p->flags & PF_MULTI_ARG)) {
        words = rk_malloc(sizeof *words);
        words[n++] = s;
    } else if (value.len) {
        for (char *w = s;; ) {
            char *sp = strchr(w, ' ');
            words = rk_realloc(words, (size_t)(n + 1) * sizeof *words);
            words[n++] = w;
            if (!sp) break;
            *sp = '\0';
            w = sp + 1;
        }
    }
    bool ok = pvalue_parse(it->p, words, n, &it->v, err);
    if (ok && (it->p->flags & PF_BINARY) && memchr(value.ptr, '\0', value.len)) {
        free(it->v.s);
        it->v.s = rk_strndup(value.ptr, value.len);
        it->v.slen = value.len;
    }
    free(words);
    free(s);
    return ok;
}

static void store_logged(struct set_item *it, struct rbuf *before, struct rbuf *after) {
    if (!(it->p->flags & PF_INERT)) {
        param_store(it->p, &it->v);
        return;
    }
    param_format(it->p, before);
    param_store(it->p, &it->v);
    param_format(it->p, after);
    if (strcmp(before->buf, after->buf) != 0) config_note_inert(it->p);
}

char *config_set(const struct slice *argv, int argc, unsigned how) {
    if (argc < 2 || argc % 2) return rk_asprintf("ERR syntax error");
    int n = argc / 2;
    struct set_item *items = rk_calloc((size_t)n, sizeof *items);
    config_lock();
    char *err = check_names(argv, n, how, items);
    int parsed = 0;
    for (; !err && parsed < n; parsed++) {
        const char *why;
        if (!parse_set_value(&items[parsed], argv[2 * parsed + 1], &why))
            err = set_failed(item_name(&items[parsed]), strlen(item_name(&items[parsed])), why);
    }
    for (int i = 0; !err && i < n; i++) {
        const char *why;
        items[i].changed = !pvalue_same(items[i].p, &items[i].v);
        if (items[i].changed && items[i].p->apply && !items[i].p->apply(&items[i].v, &why))
            err = set_failed(item_name(&items[i]), strlen(item_name(&items[i])), why);
    }
    struct rbuf before = { 0 }, after = { 0 };
    for (int i = 0; !err && i < n; i++) store_logged(&items[i], &before, &after);
    rbuf_free(&before);
    rbuf_free(&after);
    config_unlock();
    for (int i = 0; i < parsed; i++) pvalue_free(&items[i].v);
    free(items);
    return err;
}
