/*
 * Configuration table, parsing and CONFIG GET/SET.
 *
 * Each parameter is a row: name, kind, where it lives, limits, and whether it
 * can change at run time. Parameters ringkv accepts for compatibility but does
 * not act on yet (save, appendonly, ...) are plain strings so that tools such
 * as redis-benchmark, which ask for them, get the answers they expect.
 */
#include "ringkv/config.h"
#include "ringkv/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct rk_config rk_config;
long long rk_config_proto_max_bulk_len;

enum param_kind { P_INT, P_MEM, P_STRING, P_BOOL };

#define P_IMMUTABLE 1

struct param {
    const char *name;
    enum param_kind kind;
    void *field;
    long long min, max;
    int flags;
};

static const struct param params[] = {
    {"port", P_INT, &rk_config.port, 0, 65535, P_IMMUTABLE},
    {"bind", P_STRING, &rk_config.bind, 0, 0, P_IMMUTABLE},
    {"threads", P_INT, &rk_config.threads, 1, 64, P_IMMUTABLE},
    {"maxclients", P_INT, &rk_config.maxclients, 1, 1000000, 0},
    {"databases", P_INT, &rk_config.databases, 1, 1000000, P_IMMUTABLE},
    {"timeout", P_INT, &rk_config.timeout, 0, 2147483647, 0},
    {"tcp-keepalive", P_INT, &rk_config.tcp_keepalive, 0, 2147483647, 0},
    {"requirepass", P_STRING, &rk_config.requirepass, 0, 0, 0},
    {"proto-max-bulk-len", P_MEM, &rk_config.proto_max_bulk_len, 1024 * 1024, 2147483647LL * 4, 0},
    {"client-query-buffer-limit", P_MEM, &rk_config.client_query_buffer_limit, 1024 * 1024, 2147483647LL * 4, 0},
    {"hz", P_INT, &rk_config.hz, 1, 500, 0},
    {"maxmemory", P_MEM, &rk_config.maxmemory, 0, 1LL << 60, 0},
    {"maxmemory-policy", P_STRING, &rk_config.maxmemory_policy, 0, 0, 0},
    {"save", P_STRING, &rk_config.save, 0, 0, 0},
    {"appendonly", P_BOOL, &rk_config.appendonly, 0, 0, 0},
    {"appendfsync", P_STRING, &rk_config.appendfsync, 0, 0, 0},
    {"dir", P_STRING, &rk_config.dir, 0, 0, 0},
    {"dbfilename", P_STRING, &rk_config.dbfilename, 0, 0, 0},
    {"protected-mode", P_BOOL, &rk_config.protected_mode, 0, 0, 0},
    {"loglevel", P_STRING, &rk_config.loglevel, 0, 0, 0},
    {"logfile", P_STRING, &rk_config.logfile, 0, 0, P_IMMUTABLE},
    {"daemonize", P_BOOL, &rk_config.daemonize, 0, 0, P_IMMUTABLE},
    {"client-output-buffer-limit", P_STRING, &rk_config.client_output_buffer_limit, 0, 0, 0},
    {"io-buffers", P_INT, &rk_config.io_buffers, 16, 32768, P_IMMUTABLE},
    {"io-buffer-size", P_MEM, &rk_config.io_buffer_size, 1024, 1 << 20, P_IMMUTABLE},
    {"io-batch-wait-us", P_INT, &rk_config.io_batch_wait_us, 0, 10000, 0},
    {"list-max-listpack-size", P_INT, &rk_config.list_max_listpack_size, -5, 2147483647, 0},
    {"list-max-ziplist-size", P_INT, &rk_config.list_max_listpack_size, -5, 2147483647, 0},
    {"hash-max-listpack-entries", P_INT, &rk_config.hash_max_listpack_entries, 0, 1LL << 40, 0},
    {"hash-max-ziplist-entries", P_INT, &rk_config.hash_max_listpack_entries, 0, 1LL << 40, 0},
    {"hash-max-listpack-value", P_INT, &rk_config.hash_max_listpack_value, 0, 1LL << 40, 0},
    {"hash-max-ziplist-value", P_INT, &rk_config.hash_max_listpack_value, 0, 1LL << 40, 0},
    {"set-max-intset-entries", P_INT, &rk_config.set_max_intset_entries, 0, 1LL << 40, 0},
    {"set-max-listpack-entries", P_INT, &rk_config.set_max_listpack_entries, 0, 1LL << 40, 0},
    {"set-max-listpack-value", P_INT, &rk_config.set_max_listpack_value, 0, 1LL << 40, 0},
    {"zset-max-listpack-entries", P_INT, &rk_config.zset_max_listpack_entries, 0, 1LL << 40, 0},
    {"zset-max-ziplist-entries", P_INT, &rk_config.zset_max_listpack_entries, 0, 1LL << 40, 0},
    {"zset-max-listpack-value", P_INT, &rk_config.zset_max_listpack_value, 0, 1LL << 40, 0},
    {"zset-max-ziplist-value", P_INT, &rk_config.zset_max_listpack_value, 0, 1LL << 40, 0},
};

/* Strings replaced at run time are parked here instead of freed: a worker may
 * still be reading the old value. They are few and small. */
static char **retired;
static size_t nretired;

static char *xstrdup_len(const char *s, size_t len) {
    char *p = rk_malloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

static void set_string(char **field, const char *s, size_t len) {
    char *old = __atomic_exchange_n(field, xstrdup_len(s, len), __ATOMIC_ACQ_REL);
    if (old) {
        retired = rk_realloc(retired, (nretired + 1) * sizeof *retired);
        retired[nretired++] = old;
    }
}

void config_set_defaults(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    rk_config.port = 6379;
    rk_config.threads = cpus > 0 ? (cpus > 64 ? 64 : cpus) : 1;
    rk_config.maxclients = 10000;
    rk_config.databases = 16;
    rk_config.timeout = 0;
    rk_config.tcp_keepalive = 300;
    rk_config.proto_max_bulk_len = 512LL * 1024 * 1024;
    rk_config.client_query_buffer_limit = 1024LL * 1024 * 1024;
    rk_config.hz = 10;
    rk_config.maxmemory = 0;
    rk_config.io_buffers = 512;
    rk_config.io_buffer_size = 16384;
    rk_config.io_batch_wait_us = 50;
    rk_config.list_max_listpack_size = -2;
    rk_config.hash_max_listpack_entries = 512;   /* redis-server 7.0's default */
    rk_config.hash_max_listpack_value = 64;
    rk_config.set_max_intset_entries = 512;
    rk_config.set_max_listpack_entries = 128;
    rk_config.set_max_listpack_value = 64;
    rk_config.zset_max_listpack_entries = 128;
    rk_config.zset_max_listpack_value = 64;
    rk_config.output_hard_limit = 0;
    set_string(&rk_config.bind, "127.0.0.1", 9);
    set_string(&rk_config.maxmemory_policy, "noeviction", 10);
    set_string(&rk_config.save, "", 0);
    set_string(&rk_config.appendonly, "no", 2);
    set_string(&rk_config.appendfsync, "everysec", 8);
    set_string(&rk_config.dir, "/tmp", 4);
    set_string(&rk_config.dbfilename, "dump.rdb", 8);
    set_string(&rk_config.protected_mode, "yes", 3);
    set_string(&rk_config.loglevel, "notice", 6);
    set_string(&rk_config.logfile, "", 0);
    set_string(&rk_config.daemonize, "no", 2);
    set_string(&rk_config.client_output_buffer_limit,
               "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", 67);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd)) set_string(&rk_config.dir, cwd, strlen(cwd));
    rk_config_proto_max_bulk_len = rk_config.proto_max_bulk_len;
}

static const struct param *param_find(const char *name, size_t len) {
    for (size_t i = 0; i < RK_ARRAY_LEN(params); i++)
        if (strlen(params[i].name) == len && strncasecmp(params[i].name, name, len) == 0)
            return &params[i];
    return NULL;
}

bool config_exists(struct slice name) { return param_find(name.ptr, name.len) != NULL; }

/* Memory values take Redis's units: 1k = 1000, 1kb = 1024, ... */
static bool parse_memory(const char *s, size_t len, long long *out) {
    static const struct { const char *suffix; long long mul; } units[] = {
        {"kb", 1024}, {"mb", 1024 * 1024}, {"gb", 1024LL * 1024 * 1024},
        {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000LL * 1000 * 1000}, {"b", 1},
    };
    for (size_t i = 0; i < RK_ARRAY_LEN(units); i++) {
        size_t sl = strlen(units[i].suffix);
        if (len > sl && strncasecmp(s + len - sl, units[i].suffix, sl) == 0) {
            long long v;
            if (!str_to_ll(s, len - sl, &v) || v < 0) return false;
            *out = v * units[i].mul;
            return true;
        }
    }
    return str_to_ll(s, len, out);
}

static int apply(const struct param *p, const char *v, size_t vlen, char *err, size_t errlen) {
    long long n;
    switch (p->kind) {
    case P_INT:
    case P_MEM:
        if (!(p->kind == P_MEM ? parse_memory(v, vlen, &n) : str_to_ll(v, vlen, &n))) {
            snprintf(err, errlen, "argument couldn't be parsed into an integer");
            return -1;
        }
        if (n < p->min || n > p->max) {
            snprintf(err, errlen, "argument must be between %lld and %lld inclusive", p->min, p->max);
            return -1;
        }
        __atomic_store_n((long long *)p->field, n, __ATOMIC_RELAXED);
        if (p->field == &rk_config.proto_max_bulk_len)
            __atomic_store_n(&rk_config_proto_max_bulk_len, n, __ATOMIC_RELAXED);
        return 0;
    case P_BOOL:
        if (vlen == 3 && strncasecmp(v, "yes", 3) == 0) set_string(p->field, "yes", 3);
        else if (vlen == 2 && strncasecmp(v, "no", 2) == 0) set_string(p->field, "no", 2);
        else { snprintf(err, errlen, "argument must be 'yes' or 'no'"); return -1; }
        return 0;
    case P_STRING:
        set_string(p->field, v, vlen);
        return 0;
    }
    return -1;
}

static void param_value(const struct param *p, char *buf, size_t buflen, const char **out) {
    switch (p->kind) {
    case P_INT:
    case P_MEM:
        ll_to_str(buf, buflen, __atomic_load_n((long long *)p->field, __ATOMIC_RELAXED));
        *out = buf;
        return;
    default: {
        const char *s = __atomic_load_n((char **)p->field, __ATOMIC_ACQUIRE);
        *out = s ? s : "";
        return;
    }
    }
}

void config_get_matching(const char *pattern, size_t plen,
                         void (*fn)(void *ud, const char *name, const char *value), void *ud) {
    char buf[32];
    for (size_t i = 0; i < RK_ARRAY_LEN(params); i++) {
        const struct param *p = &params[i];
        if (!string_match(pattern, plen, p->name, strlen(p->name), true)) continue;
        const char *v;
        param_value(p, buf, sizeof buf, &v);
        fn(ud, p->name, v);
    }
}

int config_set(struct slice name, struct slice value, char *err, size_t errlen) {
    const struct param *p = param_find(name.ptr, name.len);
    if (!p) {
        snprintf(err, errlen, "ERR Unknown option or number of arguments for CONFIG SET - '%.*s'",
                 (int)(name.len > 128 ? 128 : name.len), name.ptr);
        return -1;
    }
    if (p->flags & P_IMMUTABLE) {
        snprintf(err, errlen, "ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config", p->name);
        return -1;
    }
    char why[128];
    if (apply(p, value.ptr, value.len, why, sizeof why) != 0) {
        snprintf(err, errlen, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", p->name, why);
        return -1;
    }
    return 0;
}

/* Split one config line into words with the quoting rules of redis.conf. */
static int split_words(const char *line, char words[][1024], int maxw) {
    int n = 0;
    const char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) return n;
        if (n == maxw) return -1;
        size_t len = 0;
        char quote = 0;
        if (*p == '"' || *p == '\'') quote = *p++;
        while (*p && (quote ? *p != quote : !isspace((unsigned char)*p))) {
            if (len < 1023) words[n][len++] = *p;
            p++;
        }
        if (quote) { if (*p != quote) return -1; p++; }
        words[n++][len] = '\0';
    }
}

static int fatal(int lineno, const char *line, const char *why) {
    fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (ringkv) ***\n");
    if (lineno > 0) fprintf(stderr, "Reading the configuration file, at line %d\n", lineno);
    fprintf(stderr, ">>> '%s'\n%s\n", line, why);
    return -1;
}

static int load_text_line(const char *line, int lineno) {
    char words[8][1024];
    int n = split_words(line, words, 8);
    if (n < 0) return fatal(lineno, line, "Unbalanced quotes in configuration line");
    if (n == 0 || words[0][0] == '#') return 0;
    const struct param *p = param_find(words[0], strlen(words[0]));
    if (!p) return fatal(lineno, line, "Bad directive or wrong number of arguments");
    /* save "900 1 300 10" may come as several words; join the rest. */
    char value[4096] = "";
    for (int i = 1; i < n; i++) {
        if (i > 1) strncat(value, " ", sizeof value - strlen(value) - 1);
        strncat(value, words[i], sizeof value - strlen(value) - 1);
    }
    if (n < 2 && p->kind != P_STRING) return fatal(lineno, line, "Bad directive or wrong number of arguments");
    char why[128];
    if (apply(p, value, strlen(value), why, sizeof why) != 0) return fatal(lineno, line, why);
    return 0;
}

static int load_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "Fatal error, can't open config file '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char line[8192];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        rc = load_text_line(line, lineno);
    }
    fclose(f);
    return rc;
}

int config_load_args(int argc, char **argv) {
    int i = 1;
    if (i < argc && strncmp(argv[i], "--", 2) != 0) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return -1;
        set_string(&rk_config.config_file, argv[i], strlen(argv[i]));
        if (load_file(argv[i]) != 0) return -1;
        i++;
    }
    /* "--name v1 v2 --other v" becomes the lines "name v1 v2" and "other v". */
    while (i < argc) {
        if (strncmp(argv[i], "--", 2) != 0) return fatal(0, argv[i], "Invalid argument: options start with '--'");
        char line[8192];
        snprintf(line, sizeof line, "%s", argv[i] + 2);
        i++;
        while (i < argc && strncmp(argv[i], "--", 2) != 0) {
            size_t l = strlen(line);
            snprintf(line + l, sizeof line - l, " \"%s\"", argv[i]);
            i++;
        }
        if (load_text_line(line, 0) != 0) return -1;
    }
    return 0;
}
