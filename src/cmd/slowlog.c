/*
 * The slow log and the SLOWLOG command (see slowlog.h).
 */
#include "ringkv/slowlog.h"
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/reply.h"
#include "ringkv/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ENTRY_MAX_ARGC   32    /* Redis's: the last kept one says how many more there were */
#define ENTRY_MAX_STRING 128   /* Redis's: longer arguments are cut, saying by how much */

struct slowlog_entry {
    struct slowlog_entry *newer, *older;
    long long id;
    long long time;            /* unix seconds the command was logged */
    uint64_t duration_us;
    int argc;
    char *client_addr, *client_name;
    struct slice argv[];       /* each points into its own allocation */
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slowlog_entry *newest, *oldest;
static size_t log_len;
static long long next_id;

/* ---- what an entry keeps of the arguments ---- */

/* Arguments that carry secrets are kept as "(redacted)", as Redis 7.0
 * redacts them: AUTH's, HELLO's AUTH pair, ACL SETUSER's rules, CONFIG
 * SET of a password, MIGRATE's AUTH/AUTH2 credentials. */
static bool arg_redacted(const struct command *cmd, int argc, const struct slice *argv, int i) {
    const char *name = cmd->name;
    if (!strcmp(name, "auth")) return i >= 1;
    if (!strcmp(name, "acl|setuser")) return i >= 2;
    if (!strcmp(name, "hello")) {
        for (int j = 2; j + 2 < argc; j++)
            if (slice_eq_nocase(argv[j], "auth")) return i == j + 1 || i == j + 2;
        return false;
    }
    if (!strcmp(name, "config|set")) {
        return i >= 3 && (i - 3) % 2 == 0 &&
               (slice_eq_nocase(argv[i - 1], "requirepass") || slice_eq_nocase(argv[i - 1], "masterauth"));
    }
    if (!strcmp(name, "migrate")) {
        for (int j = 6; j < i; j++) {
            if (slice_eq_nocase(argv[j], "auth")) return i == j + 1;
            if (slice_eq_nocase(argv[j], "auth2")) return i == j + 1 || i == j + 2;
        }
    }
    return false;
}

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

static struct slice copy_text(const char *p, size_t len) {
    return (struct slice){ rk_strndup(p, len), len };
}

static char *dup_cstr(const char *s) {
    s = s ? s : "";
    return (char *)copy_text(s, strlen(s)).ptr;
}

static struct slice copy_printf(const char *fmt, unsigned long long n, const char *prefix, size_t plen) {
    char tail[64];
    int tl = snprintf(tail, sizeof tail, fmt, n);
    char *s = rk_malloc(plen + (size_t)tl + 1);
    memcpy(s, prefix, plen);
    memcpy(s + plen, tail, (size_t)tl + 1);
    return (struct slice){ s, plen + (size_t)tl };
}

static struct slowlog_entry *entry_new(const struct command *cmd, int argc, const struct slice *argv,
                                       uint64_t duration_us) {
    int kept = argc > ENTRY_MAX_ARGC ? ENTRY_MAX_ARGC : argc;
    struct slowlog_entry *e = rk_calloc(1, sizeof *e + (size_t)kept * sizeof e->argv[0]);
    e->argc = kept;
    e->duration_us = duration_us;
    e->time = (long long)time(NULL);
    for (int j = 0; j < kept; j++) {
        if (kept != argc && j == kept - 1)
            e->argv[j] = copy_printf("... (%llu more arguments)", (unsigned long long)(argc - kept + 1), "", 0);
        else if (arg_redacted(cmd, argc, argv, j))
            e->argv[j] = copy_text("(redacted)", 10);
        else if (argv[j].len > ENTRY_MAX_STRING)
            e->argv[j] = copy_printf("... (%llu more bytes)", (unsigned long long)(argv[j].len - ENTRY_MAX_STRING),
                                     argv[j].ptr, ENTRY_MAX_STRING);
        else
            e->argv[j] = copy_text(argv[j].ptr, argv[j].len);
    }
    return e;
}

void slowlog_entry_free(struct slowlog_entry *e) {
    for (int j = 0; j < e->argc; j++) free((void *)e->argv[j].ptr);
    free(e->client_addr);
    free(e->client_name);
    free(e);
}

/* ---- the log ---- */

void slowlog_consider(struct cmd_ctx *c, uint64_t duration_us) {
    long long threshold = CONFIG_GET(slowlog_log_slower_than);
    if (threshold < 0 || duration_us < (uint64_t)threshold || c->in_script) return;
    if (!strcmp(c->cmd->name, "exec")) return;
    struct slowlog_entry *e = entry_new(c->cmd, c->argc, c->argv, duration_us);
    if (rk_conn_ops.slow_entry) rk_conn_ops.slow_entry(c, e);
    else slowlog_push(e);
}

void slowlog_entry_set_client(struct slowlog_entry *e, const char *addr, const char *name) {
    e->client_addr = dup_cstr(addr);
    e->client_name = dup_cstr(name);
}

void slowlog_push(struct slowlog_entry *e) {
    if (!e->client_addr) slowlog_entry_set_client(e, NULL, NULL);
    size_t max = (size_t)CONFIG_GET(slowlog_max_len);
    struct slowlog_entry *dropped = NULL;
    pthread_mutex_lock(&log_lock);
    e->id = next_id++;
    e->older = newest;
    if (newest) newest->newer = e;
    newest = e;
    if (!oldest) oldest = e;
    log_len++;
    while (log_len > max) {   /* Redis trims on push: a smaller max shows at the next entry */
        struct slowlog_entry *o = oldest;
        oldest = o->newer;
        if (oldest) oldest->older = NULL;
        else newest = NULL;
        log_len--;
        o->older = dropped;
        dropped = o;
    }
    pthread_mutex_unlock(&log_lock);
    while (dropped) {
        struct slowlog_entry *next = dropped->older;
        slowlog_entry_free(dropped);
        dropped = next;
    }
}

size_t slowlog_len(void) {
    pthread_mutex_lock(&log_lock);
    size_t n = log_len;
    pthread_mutex_unlock(&log_lock);
    return n;
}

void slowlog_reset(void) {
    pthread_mutex_lock(&log_lock);
    struct slowlog_entry *e = newest;
    newest = oldest = NULL;
    log_len = 0;
    pthread_mutex_unlock(&log_lock);
    while (e) {
        struct slowlog_entry *next = e->older;
        slowlog_entry_free(e);
        e = next;
    }
}

/* ---- SLOWLOG ---- */

static void reply_entry(struct reply *r, const struct slowlog_entry *e) {
    reply_array(r, 6);
    reply_int(r, e->id);
    reply_int(r, e->time);
    reply_int(r, (long long)e->duration_us);
    reply_array(r, (size_t)e->argc);
    for (int j = 0; j < e->argc; j++) reply_bulk(r, e->argv[j].ptr, e->argv[j].len);
    reply_bulk_cstr(r, e->client_addr);
    reply_bulk_cstr(r, e->client_name);
}

static void slowlog_get(struct cmd_ctx *c) {
    long long count = 10;
    if (c->argc == 3) {
        /* Redis gives the range's message for a non-number too */
        if (!str_to_ll(ARG(2).ptr, ARG(2).len, &count) || count < -1) {
            reply_error(&c->r, "ERR count should be greater than or equal to -1");
            return;
        }
    }
    pthread_mutex_lock(&log_lock);
    size_t n = count == -1 || (size_t)count > log_len ? log_len : (size_t)count;
    reply_array(&c->r, n);
    const struct slowlog_entry *e = newest;
    for (size_t i = 0; i < n; i++, e = e->older) reply_entry(&c->r, e);
    pthread_mutex_unlock(&log_lock);
}

void cmd_slowlog(struct cmd_ctx *c) {
    if (ARG_IS(1, "get") && c->argc <= 3) {
        slowlog_get(c);
    } else if (ARG_IS(1, "len") && c->argc == 2) {
        reply_int(&c->r, (long long)slowlog_len());
    } else if (ARG_IS(1, "reset") && c->argc == 2) {
        slowlog_reset();
        reply_ok(&c->r);
    } else if (ARG_IS(1, "help") && c->argc == 2) {
        static const char *help[] = {
            "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
            "HELP",
            "    Prints this help.",
        };
        reply_help(&c->r, help, RK_ARRAY_LEN(help));
    } else {
        reply_errorf(&c->r, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try SLOWLOG HELP.",
                     (int)ARG(1).len, ARG(1).ptr);
    }
}
