/*
 * Generic keyspace commands: deleting, testing, renaming, moving and copying
 * keys, TTLs, OBJECT, and the commands that look at the whole keyspace.
 *
 * Most of these touch one or two keys and go through db.h like any other
 * command; db.c routes each key to its shard when c->multi is set, so a
 * RENAME whose two keys live on different shards is the same code.
 *
 * KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHDB, FLUSHALL and SWAPDB are flagged
 * CMD_ALLSHARDS: they run while every shard is held, and read the shards'
 * tables directly through c->shards. SCAN's cursor carries the shard it is
 * in: cursor = table cursor * shards + shard index, where the table cursor
 * is the table's position in hash space as scan_cursor.h shows it to
 * clients (a small number), so with one thread it is just that. A shard is
 * finished before the next one starts, and 0 means all are done.
 *
 * MOVE and COPY ... DB n reach the other database by switching c->db for the
 * duration of the lookups, so routing, lazy expiry and the TTL counters are
 * handled by db.c exactly as for the current database.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "ringkv/notify.h"
#include "ringkv/command.h"
#include "ringkv/watch.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/stamp.h"
#include "ringkv/scan_cursor.h"
#include "ringkv/util.h"

#define ERR_SAME_OBJECT "ERR source and destination objects are the same"
#define ERR_NO_LFU "ERR An LFU maxmemory policy is not selected, access frequency not tracked. " \
    "Please note that when switching between policies at runtime LRU and LFU data will take " \
    "some time to adjust."
#define ERR_LFU "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note " \
    "that when switching between policies at runtime LRU and LFU data will take some time to adjust."

/* Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT. */
#define EMBSTR_MAX 44

static const char *const type_names[] = { "string", "list", "set", "zset", "hash", "stream" };

static const char *type_name(const struct kv_entry *e) {
    if (!e) return "none";
    unsigned t = entry_type(e);
    return t < RK_ARRAY_LEN(type_names) ? type_names[t] : "unknown";
}

/* ---------------------------------------------------------------------------
 * Argument helpers
 * ------------------------------------------------------------------------- */


/* Redis's getIntFromObjectOrReply(): msg, if given, replaces both errors. */
static bool int_or_reply(struct cmd_ctx *c, struct slice s, const char *msg, int *out) {
    long long v;
    if (!str_to_ll(s.ptr, s.len, &v)) {
        reply_error(&c->r, msg ? msg : ERR_NOT_INT);
        return false;
    }
    if (v < INT_MIN || v > INT_MAX) {
        if (msg) reply_error(&c->r, msg);
        else reply_errorf(&c->r, "ERR value is out of range, value must between %d and %d",
                          INT_MIN, INT_MAX);
        return false;
    }
    *out = (int)v;
    return true;
}

/* A database index for MOVE/COPY: an int, then in range. */
static bool dbindex_or_reply(struct cmd_ctx *c, struct slice s, int *out) {
    if (!int_or_reply(c, s, NULL, out))
        return false;
    if (*out < 0 || (unsigned)*out >= c->shard->ndb) {
        reply_error(&c->r, ERR_DB_INDEX);
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------------------
 * Existence and deletion
 * ------------------------------------------------------------------------- */

static void delete_keys(struct cmd_ctx *c, bool lazy) {
    long long n = 0;
    for (int j = 1; j < c->argc; j++) {
        if (!db_delete_lazy(c, c->argv[j], lazy)) continue;
        n++;
        notify(c, NOTIFY_GENERIC, "del", c->argv[j]);
    }
    reply_int(&c->r, n);
}

/* UNLINK frees big values in the background, DEL too under
 * lazyfree-lazy-user-del (lazyfree.h). */
void cmd_del(struct cmd_ctx *c) { delete_keys(c, CONFIG_GET(lazyfree_lazy_user_del)); }
void cmd_unlink(struct cmd_ctx *c) { delete_keys(c, true); }

/* EXISTS and TOUCH: how many of the keys (repeats counted) exist. Only
 * TOUCH is an access (the key's stamp, stamp.h). */
static void count_existing(struct cmd_ctx *c, unsigned flags) {
    long long n = 0;
    for (int j = 1; j < c->argc; j++)
        n += db_lookup(c, c->argv[j], LOOKUP_READ | flags) != NULL;
    reply_int(&c->r, n);
}

void cmd_exists(struct cmd_ctx *c) { count_existing(c, LOOKUP_NOTOUCH); }
void cmd_touch(struct cmd_ctx *c) { count_existing(c, LOOKUP_TOUCH); }

void cmd_type(struct cmd_ctx *c) {
    reply_simple(&c->r, type_name(db_lookup(c, c->argv[1], LOOKUP_READ | LOOKUP_NOTOUCH)));
}

/* ---------------------------------------------------------------------------
 * KEYS and SCAN: collect matching entries shard by shard, then reply
 * ------------------------------------------------------------------------- */

struct key_filter {
    struct slice pattern;     /* ptr NULL: every key */
    struct slice type;        /* ptr NULL: every type */
    long long now_ms;
    struct kv_entry **found;
    size_t n, cap;
};

static void filter_visit(void *ud, struct kv_entry *e) {
    struct key_filter *f = ud;
    struct slice key = entry_key_slice(e);

    if (key_is_expired(e, f->now_ms))
        return;
    if (f->pattern.ptr && !string_match(f->pattern.ptr, f->pattern.len, key.ptr, key.len, false))
        return;
    if (f->type.ptr && !slice_eq_nocase(f->type, type_name(e)))
        return;
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 64;
        f->found = rk_realloc(f->found, f->cap * sizeof *f->found);
    }
    f->found[f->n++] = e;
}

static void filter_init(struct key_filter *f, struct cmd_ctx *c, struct slice pattern) {
    memset(f, 0, sizeof *f);
    f->now_ms = c->now_ms;
    /* "*" matches everything: skip the matcher, as Redis does. */
    if (!(pattern.len == 1 && pattern.ptr[0] == '*'))
        f->pattern = pattern;
}

/* The keys found, as elements of an array the caller has opened. */
static void reply_found_keys(struct cmd_ctx *c, struct key_filter *f) {
    for (size_t i = 0; i < f->n; i++)
        reply_bulk_slice(&c->r, entry_key_slice(f->found[i]));
    free(f->found);
}

static struct kv_table *shard_table(struct cmd_ctx *c, unsigned shard) {
    return &c->shards[shard]->dbs[c->db].table;
}

void cmd_keys(struct cmd_ctx *c) {
    struct key_filter f;

    filter_init(&f, c, c->argv[1]);
    for (unsigned i = 0; i < c->nshards; i++) {
        uint64_t cursor = 0;
        do {
            cursor = table_scan(shard_table(c, i), cursor, 1024, filter_visit, &f);
        } while (cursor);
    }
    reply_array(&c->r, f.n);
    reply_found_keys(c, &f);
}


void cmd_scan(struct cmd_ctx *c) {
    struct key_filter f;
    struct scan_args sa;
    uint64_t cursor;

    if (!arg_cursor_or_reply(c, c->argv[1], &cursor) || !scan_args_or_reply(c, 2, true, &sa))
        return;
    filter_init(&f, c, sa.pattern);
    f.type = sa.type;
    long long count = sa.count;

    /* As Redis: stop at COUNT matches, or after 10 * COUNT table calls when
     * the table is sparse, so that one call stays short. */
    unsigned shard = (unsigned)(cursor % c->nshards);
    uint64_t pos = scan_pos_of(cursor / c->nshards);
    long long budget = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    uint64_t next = 0;
    while (shard < c->nshards) {
        pos = table_scan(shard_table(c, shard), pos, (size_t)count, filter_visit, &f);
        if (pos == 0)
            shard++;
        if (shard < c->nshards && ((long long)f.n >= count || --budget <= 0)) {
            next = scan_cursor_of(pos) * c->nshards + shard;
            break;
        }
    }

    reply_scan_head(c, next, f.n);
    reply_found_keys(c, &f);
}

/* ---------------------------------------------------------------------------
 * RANDOMKEY, DBSIZE, FLUSHDB, FLUSHALL, SWAPDB
 * ------------------------------------------------------------------------- */


void cmd_randomkey(struct cmd_ctx *c) {
    size_t total;

    /* Expired keys met on the way are deleted and another is drawn, as Redis does. */
    while ((total = db_size_all(c, c->db)) != 0) {
        uint64_t r = rk_random();
        size_t pick = (size_t)(r % total);
        unsigned shard = 0;
        while (pick >= table_size(shard_table(c, shard)))
            pick -= table_size(shard_table(c, shard++));
        struct kv_entry *e = table_random(shard_table(c, shard), rk_random());
        if (!key_is_expired(e, c->now_ms)) {
            reply_bulk_slice(&c->r, entry_key_slice(e));
            return;
        }
        db_expire_found(c, c->shards[shard], &c->shards[shard]->dbs[c->db], e);
    }
    reply_null(&c->r);
}

void cmd_dbsize(struct cmd_ctx *c) {
    reply_int(&c->r, (long long)db_size_all(c, c->db));
}

/* FLUSHDB/FLUSHALL [ASYNC|SYNC]: both free at once (see cmd_del). */
/* [SYNC|ASYNC]; without either, lazyfree-lazy-user-flush decides. */
static bool flush_args_ok(struct cmd_ctx *c, bool *async) {
    *async = CONFIG_GET(lazyfree_lazy_user_flush);
    if (c->argc == 1) return true;
    if (c->argc == 2 && (slice_eq_nocase(c->argv[1], "sync") || slice_eq_nocase(c->argv[1], "async"))) {
        *async = slice_eq_nocase(c->argv[1], "async");
        return true;
    }
    reply_error(&c->r, ERR_SYNTAX);
    return false;
}

static void flush_db(struct shard *s, unsigned dbi, bool async) {
    if (async) db_empty_async(s, &s->dbs[dbi]);
    else db_empty(&s->dbs[dbi]);
}

void cmd_flushdb(struct cmd_ctx *c) {
    bool async;
    if (!flush_args_ok(c, &async))
        return;
    db_touch_watched_flush(c, c->db);   /* while the keys are still there */
    for (unsigned i = 0; i < c->nshards; i++) {
        c->dirty += (long long)table_size(&c->shards[i]->dbs[c->db].table);
        db_snapshot_settle(c->shards[i], (unsigned)c->db);   /* a BGSAVE keeps what it began with */
        flush_db(c->shards[i], (unsigned)c->db, async);
    }
    reply_ok(&c->r);
}

void cmd_flushall(struct cmd_ctx *c) {
    bool async;
    if (!flush_args_ok(c, &async))
        return;
    db_touch_watched_flush(c, -1);   /* while the keys are still there */
    c->dirty++;   /* a change even when empty, as Redis counts FLUSHALL */
    for (unsigned i = 0; i < c->nshards; i++)
        for (unsigned d = 0; d < c->shards[i]->ndb; d++) {
            c->dirty += (long long)table_size(&c->shards[i]->dbs[d].table);
            flush_db(c->shards[i], d, async);
        }
    persist_after_flushall(c);
    reply_ok(&c->r);
}

void cmd_swapdb(struct cmd_ctx *c) {
    int a, b;

    if (!int_or_reply(c, c->argv[1], "ERR invalid first DB index", &a) ||
        !int_or_reply(c, c->argv[2], "ERR invalid second DB index", &b))
        return;
    if (a < 0 || b < 0 || (unsigned)a >= c->shard->ndb || (unsigned)b >= c->shard->ndb) {
        reply_error(&c->r, ERR_DB_INDEX);
        return;
    }
    db_touch_watched_swap(c, a, b);   /* against the databases as they were */
    c->dirty++;
    for (unsigned i = 0; i < c->nshards; i++) {
        struct shard *s = c->shards[i];
        db_snapshot_settle(s, (unsigned)a);   /* a BGSAVE saves each database as it began */
        db_snapshot_settle(s, (unsigned)b);
        struct kv_db tmp = s->dbs[a];
        s->dbs[a] = s->dbs[b];
        s->dbs[b] = tmp;
        /* The active-expiry cursors follow their tables. */
        if ((size_t)a < RK_ARRAY_LEN(s->expire_cursor) && (size_t)b < RK_ARRAY_LEN(s->expire_cursor)) {
            uint64_t t = s->expire_cursor[a];
            s->expire_cursor[a] = s->expire_cursor[b];
            s->expire_cursor[b] = t;
        }
    }
    reply_ok(&c->r);
}

/* ---------------------------------------------------------------------------
 * RENAME, MOVE, COPY
 * ------------------------------------------------------------------------- */

static void reply_ok_or_int(struct cmd_ctx *c, bool nx, long long v) {
    if (nx) reply_int(&c->r, v);
    else reply_ok(&c->r);
}

/* A generic event of database dbi, which MOVE names besides the client's. */
static void notify_db(struct cmd_ctx *c, int dbi, const char *event, struct slice key) {
    int saved = c->db;
    c->db = dbi;
    notify(c, NOTIFY_GENERIC, event, key);
    c->db = saved;
}

/* The entry leaves the source unchanged in size; for strings entry_with_key
 * copies the bytes once, for other types it moves the object. */
static void rename_generic(struct cmd_ctx *c, bool nx) {
    struct slice src = c->argv[1], dst = c->argv[2];

    if (!db_lookup(c, src, LOOKUP_NONE)) {
        reply_error(&c->r, ERR_NO_SUCH_KEY);
        return;
    }
    if (slice_eq(src, dst)) {
        reply_ok_or_int(c, nx, 0);
        return;
    }
    if (db_lookup(c, dst, LOOKUP_NONE)) {
        if (nx) {
            reply_int(&c->r, 0);
            return;
        }
        db_delete(c, dst);
    }
    struct kv_entry *old = db_unlink(c, src);
    struct kv_entry *e = entry_with_key(old, dst, true);
    entry_release(old);   /* the object, if any, now belongs to e */
    db_insert(c, e);
    notify(c, NOTIFY_GENERIC, "rename_from", src);
    notify(c, NOTIFY_GENERIC, "rename_to", dst);
    reply_ok_or_int(c, nx, 1);
}

void cmd_rename(struct cmd_ctx *c) { rename_generic(c, false); }
void cmd_renamenx(struct cmd_ctx *c) { rename_generic(c, true); }

void cmd_move(struct cmd_ctx *c) {
    struct slice key = c->argv[1];
    int src = c->db, dst;

    if (!dbindex_or_reply(c, c->argv[2], &dst))
        return;
    if (dst == src) {
        reply_error(&c->r, ERR_SAME_OBJECT);
        return;
    }
    if (!db_lookup(c, key, LOOKUP_NONE)) {
        reply_int(&c->r, 0);
        return;
    }
    c->db = dst;
    bool taken = db_lookup(c, key, LOOKUP_NONE) != NULL;
    c->db = src;
    if (taken) {
        reply_int(&c->r, 0);
        return;
    }
    /* Same key, same shard: the entry itself moves, nothing is copied. */
    struct kv_entry *e = db_unlink(c, key);
    c->db = dst;
    db_insert(c, e);
    c->db = src;
    notify(c, NOTIFY_GENERIC, "move_from", key);
    notify_db(c, dst, "move_to", key);
    reply_int(&c->r, 1);
}

void cmd_copy(struct cmd_ctx *c) {
    struct slice src = c->argv[1], dst = c->argv[2];
    int srcdb = c->db, dstdb = c->db;
    bool replace = false;

    for (int j = 3; j < c->argc; j++) {
        if (slice_eq_nocase(c->argv[j], "replace")) {
            replace = true;
        } else if (slice_eq_nocase(c->argv[j], "db") && j + 1 < c->argc) {
            if (!dbindex_or_reply(c, c->argv[++j], &dstdb))
                return;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
    }
    if (srcdb == dstdb && slice_eq(src, dst)) {
        reply_error(&c->r, ERR_SAME_OBJECT);
        return;
    }
    struct kv_entry *e = db_lookup(c, src, LOOKUP_READ);
    if (!e) {
        reply_int(&c->r, 0);
        return;
    }
    c->db = dstdb;
    if (db_lookup(c, dst, LOOKUP_NONE)) {
        if (!replace) {
            c->db = srcdb;
            reply_int(&c->r, 0);
            return;
        }
        db_delete(c, dst);   /* a different entry from e: src != dst or the dbs differ */
    }
    db_insert(c, entry_with_key(e, dst, false));
    notify(c, NOTIFY_GENERIC, "copy_to", dst);
    c->db = srcdb;
    reply_int(&c->r, 1);
}

/* ---------------------------------------------------------------------------
 * EXPIRE family, TTL family, PERSIST
 * ------------------------------------------------------------------------- */

#define EXP_NX (1u << 0)
#define EXP_XX (1u << 1)
#define EXP_GT (1u << 2)
#define EXP_LT (1u << 3)

/* Redis's parseExtendedExpireArgumentsOrReply(). */
static bool expire_flags_or_reply(struct cmd_ctx *c, unsigned *flags) {
    static const struct { const char *name; unsigned flag; } opts[] = {
        { "nx", EXP_NX }, { "xx", EXP_XX }, { "gt", EXP_GT }, { "lt", EXP_LT },
    };

    *flags = 0;
    for (int j = 3; j < c->argc; j++) {
        size_t i = 0;
        while (i < RK_ARRAY_LEN(opts) && !slice_eq_nocase(c->argv[j], opts[i].name))
            i++;
        if (i == RK_ARRAY_LEN(opts)) {
            reply_errorf(&c->r, "ERR Unsupported option %.*s", (int)c->argv[j].len, c->argv[j].ptr);
            return false;
        }
        *flags |= opts[i].flag;
    }
    if ((*flags & EXP_NX) && (*flags & (EXP_XX | EXP_GT | EXP_LT))) {
        reply_error(&c->r, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return false;
    }
    if ((*flags & EXP_GT) && (*flags & EXP_LT)) {
        reply_error(&c->r, "ERR GT and LT options at the same time are not compatible");
        return false;
    }
    return true;
}

/* Does the NX/XX/GT/LT condition let `when` replace the current expiry? */
static bool expire_condition_holds(unsigned flags, long long cur, long long when) {
    if ((flags & EXP_NX) && cur != NO_EXPIRE) return false;
    if ((flags & EXP_XX) && cur == NO_EXPIRE) return false;
    /* No TTL counts as infinite: GT never beats it, LT always does. */
    if ((flags & EXP_GT) && (cur == NO_EXPIRE || when <= cur)) return false;
    if ((flags & EXP_LT) && cur != NO_EXPIRE && when >= cur) return false;
    return true;
}

/* Redis's expireGenericCommand(): basetime is now for relative forms, 0 for *AT. */
static void expire_generic(struct cmd_ctx *c, long long basetime, bool seconds) {
    struct slice key = c->argv[1];
    unsigned flags;
    long long when;

    if (!expire_flags_or_reply(c, &flags) || !arg_ll_or_reply(c, c->argv[2], &when))
        return;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000)
            goto invalid;
        when *= 1000;
    }
    if (when > LLONG_MAX - basetime)
        goto invalid;
    when += basetime;

    struct kv_entry **slot = db_lookup_slot(c, key, LOOKUP_NONE);
    if (!slot || !expire_condition_holds(flags, entry_expire(*slot), when)) {
        reply_int(&c->r, 0);
        return;
    }
    if (when <= c->now_ms) {   /* a time in the past deletes the key */
        db_delete(c, key);
        notify(c, NOTIFY_GENERIC, "del", key);
    } else {
        db_set_expire(c, slot, when);
        notify(c, NOTIFY_GENERIC, "expire", key);
    }
    reply_int(&c->r, 1);
    return;
invalid:
    reply_errorf(&c->r, "ERR invalid expire time in '%s' command", c->cmd->name);
}

void cmd_expire(struct cmd_ctx *c) { expire_generic(c, c->now_ms, true); }
void cmd_pexpire(struct cmd_ctx *c) { expire_generic(c, c->now_ms, false); }
void cmd_expireat(struct cmd_ctx *c) { expire_generic(c, 0, true); }
void cmd_pexpireat(struct cmd_ctx *c) { expire_generic(c, 0, false); }

/* TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 without the key, -1 without a TTL. */
static void ttl_generic(struct cmd_ctx *c, bool ms, bool absolute) {
    struct kv_entry *e = db_lookup(c, c->argv[1], LOOKUP_READ | LOOKUP_NOTOUCH);
    if (!e) {
        reply_int(&c->r, -2);
        return;
    }
    long long expire = entry_expire(e);
    if (expire == NO_EXPIRE) {
        reply_int(&c->r, -1);
        return;
    }
    long long ttl = absolute ? expire : expire - c->now_ms;
    if (ttl < 0) ttl = 0;
    reply_int(&c->r, ms ? ttl : (ttl + 500) / 1000);
}

void cmd_ttl(struct cmd_ctx *c) { ttl_generic(c, false, false); }
void cmd_pttl(struct cmd_ctx *c) { ttl_generic(c, true, false); }
void cmd_expiretime(struct cmd_ctx *c) { ttl_generic(c, false, true); }
void cmd_pexpiretime(struct cmd_ctx *c) { ttl_generic(c, true, true); }

void cmd_persist(struct cmd_ctx *c) {
    struct kv_entry **slot = db_lookup_slot(c, c->argv[1], LOOKUP_NONE);
    if (slot && entry_has_expire(*slot)) {
        db_set_expire(c, slot, NO_EXPIRE);
        notify(c, NOTIFY_GENERIC, "persist", c->argv[1]);
        reply_int(&c->r, 1);
    } else {
        reply_int(&c->r, 0);
    }
}

/* ---------------------------------------------------------------------------
 * OBJECT
 * ------------------------------------------------------------------------- */

/* Strings are stored as bytes; report what Redis would have chosen. */
static const char *string_encoding(const struct kv_entry *e) {
    struct slice v = entry_val_slice(e);
    long long ll;
    if (e->meta & ENTRY_RAW)
        return "raw";   /* edited in place: Redis's APPEND/SETRANGE leave raw strings */
    if (v.len <= 20 && str_to_ll(v.ptr, v.len, &ll))
        return "int";
    return v.len <= EMBSTR_MAX ? "embstr" : "raw";
}

/* Redis shares the objects of the integers 0..9999 (refcount INT_MAX)
 * unless maxmemory is set with an LRU or LFU policy, where every key needs
 * its own access time. ringkv keeps every value in its entry; OBJECT
 * REFCOUNT reports what Redis would under the settings of the moment. */
#define OBJ_SHARED_REFCOUNT 2147483647
#define OBJ_SHARED_INTEGERS 10000

static bool shared_integer(const struct kv_entry *e) {
    enum evict_policy p = evict_policy_now();
    if (CONFIG_GET(maxmemory) > 0 && (evict_policy_lru(p) || evict_policy_lfu(p))) return false;
    if (entry_type(e) != OBJ_STRING || (e->meta & ENTRY_RAW)) return false;
    struct slice v = entry_val_slice(e);
    long long ll;
    return v.len <= 20 && str_to_ll(v.ptr, v.len, &ll) && ll >= 0 && ll < OBJ_SHARED_INTEGERS;
}

int object_refcount(const struct kv_entry *e) { return shared_integer(e) ? OBJ_SHARED_REFCOUNT : 1; }

const char *object_encoding(const struct kv_entry *e) {
    unsigned t = entry_type(e);
    if (t == OBJ_STRING)
        return string_encoding(e);
    const struct obj_ops *ops = obj_ops_by_type[t];
    return ops && ops->encoding ? ops->encoding(entry_obj(e)) : "unknown";
}

static bool lfu_policy(void) { return evict_policy_lfu(evict_policy_now()); }

static void object_help(struct cmd_ctx *c) {
    static const char *const help[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    };
    reply_array(&c->r, RK_ARRAY_LEN(help));
    for (size_t i = 0; i < RK_ARRAY_LEN(help); i++)
        reply_simple(&c->r, help[i]);
}

void cmd_object(struct cmd_ctx *c) {
    static const char *const subs[] = { "help", "encoding", "freq", "idletime", "refcount" };
    struct slice sub = c->argv[1];
    size_t i = 0;

    while (i < RK_ARRAY_LEN(subs) && !slice_eq_nocase(sub, subs[i]))
        i++;
    /* The dispatcher's errors for a container command, in case it routes
     * every OBJECT call here. */
    if (i == RK_ARRAY_LEN(subs)) {
        reply_errorf(&c->r, "ERR unknown subcommand '%.*s'. Try OBJECT HELP.",
                     (int)(sub.len > 128 ? 128 : sub.len), sub.ptr);
        return;
    }
    if (c->argc != (i == 0 ? 2 : 3)) {
        reply_errorf(&c->r, "ERR wrong number of arguments for 'object|%s' command", subs[i]);
        return;
    }
    if (i == 0) {
        object_help(c);
        return;
    }

    struct kv_entry *e = db_lookup(c, c->argv[2], LOOKUP_READ | LOOKUP_NOTOUCH);
    if (!e) {
        reply_null(&c->r);
        return;
    }
    switch (i) {
    case 1:
        reply_bulk_cstr(&c->r, object_encoding(e));
        break;
    case 2:
        if (!lfu_policy()) reply_error(&c->r, ERR_NO_LFU);
        else reply_int(&c->r, stamp_freq(e, c->now_ms));
        break;
    case 3:
        if (lfu_policy()) reply_error(&c->r, ERR_LFU);
        else reply_int(&c->r, stamp_idle_ms(e, c->now_ms) / 1000);
        break;
    default:
        reply_int(&c->r, object_refcount(e));
        break;
    }
}
