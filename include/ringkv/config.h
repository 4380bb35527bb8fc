/*
 * Server configuration with Redis 7.0's names, types, limits and defaults.
 *
 * One table (src/core/config_table.c) lists every parameter Redis 7.0 has, plus
 * ringkv's own (threads, io-*), each with its aliases (slaveof, the
 * *-ziplist-* names, slave-*), type checking, bounds and flags. The same
 * table serves the command line (--port 7000), a config file (one
 * "name value" per line, include, Redis's quoting) and CONFIG GET/SET, so
 * the three never disagree, and errors are Redis's word for word.
 *
 * Parameters ringkv does not act on yet (persistence, replication,
 * eviction, TLS, ...) are still type-checked, stored and reported, and
 * marked inert in the table: setting one logs that it has no effect, and
 * config_foreach_inert_changed() lists those that differ from their
 * defaults (for INFO or a startup notice).
 *
 * The fields below are the parameters ringkv acts on. Worker threads read
 * them directly; CONFIG SET writes them, numbers with relaxed stores, so a
 * change is seen at once everywhere (CONFIG_GET). Strings are swapped as a
 * whole and the old string is kept until exit, never freed under a reader.
 * Inert parameters live inside config.c and are read with
 * config_get_value().
 */
#ifndef RINGKV_CONFIG_H
#define RINGKV_CONFIG_H

#include "ringkv/common.h"

/* client-output-buffer-limit's classes, in its order. ringkv has no
 * replicas, so no client is of the replica class. */
enum obuf_class { OBUF_NORMAL, OBUF_REPLICA, OBUF_PUBSUB, OBUF_CLASSES };

struct rk_config {
    /* listening and threads */
    long long port;
    char *bind;                     /* space-separated addresses; the first is used */
    long long threads;              /* ringkv's own: worker threads */
    long long io_buffers;           /* ringkv's own: provided buffers per thread */
    long long io_buffer_size;
    long long io_batch_wait_us;     /* minimum wait to gather completions (0 = off) */
    long long io_iteration_budget_us; /* a loop iteration takes completions this long at most (worker.c) */
    long long metrics_port;         /* ringkv's own: HTTP /metrics on this port (0 = off), io/metrics_http.c */
    /* clients */
    long long maxclients;
    long long timeout;              /* seconds; 0 = never */
    char *requirepass;              /* NULL = no password (the default user's, acl.h) */
    /* users (acl.h) */
    char *aclfile;                  /* "" = none */
    long long acllog_max_len;
    const char *acl_pubsub_default; /* "allchannels" or "resetchannels": what new users start with */
    long long protected_mode;       /* refuse non-loopback clients while the default user has no password */
    /* enable-protected-configs, enable-debug-command, enable-module-command:
     * "no", "yes" or "local" (immutable: set at start only) */
    const char *enable_protected_configs, *enable_debug_command, *enable_module_command;
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    long long tracking_table_max_keys;   /* 0: no limit */
    /* client-output-buffer-limit: {hard bytes, soft bytes, soft seconds}
     * per enum obuf_class; 0 = no limit */
    long long client_obuf_limit[OBUF_CLASSES][3];
    long long notify_keyspace_events;   /* NOTIFY_* classes (notify.h) */
    /* keyspace */
    long long databases;
    long long hz;                   /* always 1..500 (Redis clamps what is set) */
    /* replication: ringkv has no replicas, so any minimum refuses writes (scripts' only, for now) */
    long long min_replicas_to_write, min_replicas_max_lag;
    /* the operator's tools (slowlog.h, latency.h) */
    long long slowlog_log_slower_than;   /* microseconds; -1 = off, 0 = every command */
    long long slowlog_max_len;
    long long latency_monitor_threshold; /* milliseconds; 0 = off */
    /* scripting */
    long long busy_reply_threshold; /* ms a script runs before others get -BUSY (lua-time-limit) */
    /* memory limits and eviction (evict.h) */
    long long maxmemory;            /* bytes of used_memory (mem.h); 0 = no limit */
    const char *maxmemory_policy;   /* one of the policy names */
    long long maxmemory_samples, maxmemory_eviction_tenacity;
    long long maxmemory_clients;    /* client eviction: bytes, or -percent of maxmemory; 0 = off (io/output.c) */
    long long lfu_log_factor, lfu_decay_time;
    long long lazyfree_lazy_eviction, lazyfree_lazy_expire;
    long long lazyfree_lazy_user_del, lazyfree_lazy_user_flush, lazyfree_lazy_server_del;
    /* compact encodings of collections (Redis's thresholds) */
    long long list_max_listpack_size;
    long long list_compress_depth;  /* quicklist nodes kept raw at each end; 0 = no compression */
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long stream_node_max_bytes, stream_node_max_entries;
    long long set_max_intset_entries, set_max_listpack_entries, set_max_listpack_value;
    long long zset_max_listpack_entries, zset_max_listpack_value;
    /* persistence */
    char *dbfilename;
    long long rdbcompression, rdbchecksum, stop_writes_on_bgsave_error;
    long long appendonly, no_appendfsync_on_rewrite, auto_aof_rewrite_percentage, auto_aof_rewrite_min_size;
    long long aof_load_truncated, aof_use_rdb_preamble, aof_timestamp_enabled, aof_disable_auto_gc;
    const char *appendfsync;        /* "always", "everysec" or "no" */
    char *appendfilename, *appenddirname;
    /* the log (log.h) and the process */
    const char *loglevel;           /* "debug", "verbose", "notice" or "warning" */
    char *logfile;                  /* "" = standard output */
    char *pidfile;                  /* NULL = none */
    char *unixsocket;               /* NULL = none */
    long long key_load_delay;       /* DEBUG: microseconds per key loaded (negative: 1 in -N keys waits 1) */
    long long unixsocketperm;
    long long always_show_logo;
    long long disable_thp;     /* prctl(PR_SET_THP_DISABLE) at start, as Redis */
    /* the config file given at start (absolute path), or NULL */
    char *config_file;
};

extern struct rk_config rk_config;
extern long long rk_config_proto_max_bulk_len;
/* Bumped whenever port or bind is stored: each worker reopens its
 * listeners when it sees a value it has not opened (listen.h). */
extern unsigned rk_config_listen_gen;

/* Relaxed read of a numeric parameter that CONFIG SET can change. */
#define CONFIG_GET(field) __atomic_load_n(&rk_config.field, __ATOMIC_RELAXED)

/* Every parameter to its default (Redis 7.0's; dir is the working directory). */
void config_set_defaults(void);

/* Parse argv as redis-server does: an optional config file first, then
 * "--name value ..." options appended to it (and "-" for stdin). Prints
 * Redis's FATAL CONFIG FILE ERROR message and returns -1 on failure. */
int config_load_args(int argc, char **argv);
/* Load config-file text (lines of "name value ..."). On failure returns -1
 * and, if err is not NULL, a malloc'd message in *err (the caller frees). */
int config_load_text(const char *text, char **err);

/* CONFIG GET for one argument: a glob pattern matches every name and alias
 * (hidden parameters excepted); a plain name is looked up exactly, and then
 * reported as it was spelled. fn is called for each match, with the value
 * valid during the call. */
typedef void config_get_fn(void *ud, struct slice name, const char *value);
void config_get(struct slice pattern, config_get_fn *fn, void *ud);
/* The value of one parameter (name or alias, any case) into buf: false if
 * there is no such parameter. */
bool config_get_value(const char *name, char *buf, size_t buflen);

/* CONFIG SET name value [name value ...] (argv holds the pairs): all are
 * checked first and then all applied, or none. Returns NULL, or Redis's
 * error text ("ERR ...", malloc'd: the caller frees). */
#define CONFIG_SET_LOCAL    1u   /* the caller is on a loopback address (enable-protected-configs local) */
#define CONFIG_SET_LOADING  2u   /* the dataset is loading: some parameters wait (-LOADING) */
char *config_set(const struct slice *argv, int argc, unsigned how);

/* Redis's allowProtectedAction: whether a setting of enable-protected-configs,
 * enable-debug-command or enable-module-command ("no", "yes", "local")
 * allows the action to a client, local_client meaning from a loopback
 * address (127.0.0.1 or ::1). */
bool config_allows_protected(const char *setting, bool local_client);

/* CONFIG REWRITE (config_rewrite.c): the configuration written back into
 * rk_config.config_file as Redis 7.0 rewrites it, keeping its comments,
 * order and the directives that are not parameters. force_all (DEBUG
 * CONFIG-REWRITE-FORCE-ALL) writes every parameter, defaults included.
 * Returns 0, or -1 with errno set (ENOENT when there is no config file);
 * the file is then as it was. */
int config_rewrite(bool force_all);
/* Redis's memtoull(): digits and an optional unit (b k kb m mb g gb); also
 * for DEBUG QUICKLIST-PACKED-THRESHOLD. */
bool parse_memory(const char *s, unsigned long long *out);

/* The save points, as CONFIG GET save shows them ("3600 1 300 100"; ""
 * for none). Valid until exit. */
const char *config_save_points(void);

/* Parameters that ringkv accepts but does not act on yet and whose values
 * differ from their defaults. */
void config_foreach_inert_changed(void (*fn)(void *ud, const char *name, const char *value), void *ud);

#endif
