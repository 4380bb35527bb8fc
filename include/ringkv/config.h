/*
 * Server configuration with Redis's names.
 *
 * One table (src/core/config.c) lists every parameter with its type, limits
 * and whether CONFIG SET may change it at run time. The same table serves
 * the command line (--port 7000), a config file (one "name value" per line)
 * and CONFIG GET/SET, so the three can never disagree.
 *
 * Worker threads read numeric parameters directly; they are written only by
 * CONFIG SET and read with relaxed loads, so a change is seen at once
 * everywhere. String parameters that workers read (requirepass) are swapped
 * as a whole and the old string is kept until exit, never freed under a
 * reader.
 */
#ifndef RINGKV_CONFIG_H
#define RINGKV_CONFIG_H

#include "ringkv/common.h"

struct rk_config {
    long long port;
    char *bind;
    long long threads;
    long long maxclients;
    long long databases;
    long long timeout;              /* seconds; 0 = never */
    long long tcp_keepalive;
    char *requirepass;          /* NULL or "" = no password */
    long long proto_max_bulk_len;
    long long hz;
    long long maxmemory;
    char *maxmemory_policy;
    char *save;
    char *appendonly;
    char *appendfsync;
    char *dir;
    char *dbfilename;
    char *protected_mode;
    char *loglevel;
    char *logfile;
    char *daemonize;
    char *client_output_buffer_limit;
    long long client_query_buffer_limit;
    long long output_hard_limit;    /* normal class hard limit in bytes (0 = none) */
    long long io_buffers;           /* provided buffers per thread */
    long long io_buffer_size;
    long long io_batch_wait_us;     /* minimum wait to gather completions (0 = off) */
    char *config_file;
    /* compact encodings of collections (Redis's thresholds) */
    long long list_max_listpack_size;
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long set_max_intset_entries, set_max_listpack_entries, set_max_listpack_value;
    long long zset_max_listpack_entries, zset_max_listpack_value;
};

extern struct rk_config rk_config;
extern long long rk_config_proto_max_bulk_len;

void config_set_defaults(void);
/* Parse argv as redis-server does; prints the error and returns -1 on failure. */
int config_load_args(int argc, char **argv);
/* CONFIG GET pattern: calls fn(name, value) for each match. */
void config_get_matching(const char *pattern, size_t plen,
                         void (*fn)(void *ud, const char *name, const char *value), void *ud);
/* CONFIG SET name value; on error returns -1 and writes Redis's message into err. */
int config_set(struct slice name, struct slice value, char *err, size_t errlen);
bool config_exists(struct slice name);

/* Relaxed read of a numeric parameter that CONFIG SET can change. */
#define CONFIG_GET(field) __atomic_load_n(&rk_config.field, __ATOMIC_RELAXED)

#endif
