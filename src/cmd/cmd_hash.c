/*
 * Hash commands: HSET HMSET HSETNX HGET HMGET HDEL HLEN HSTRLEN HEXISTS
 * HGETALL HKEYS HVALS HINCRBY HINCRBYFLOAT HRANDFIELD HSCAN, with Redis
 * 7.0's replies and errors (t_hash.c).
 *
 * The value object is hash_obj.h's: its pointer may change on every write
 * (the listpack moves, the encoding converts), so a writer takes the object
 * out of its entry, changes it, and stores the new pointer back with
 * hash_commit(), which also creates the key on the first field and deletes
 * it when the last field goes, as Redis does.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "ringkv/notify.h"
#include "ringkv/command.h"
#include "ringkv/command_def.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/hash_obj.h"
#include "ringkv/util.h"

/* Room for any long double printed by ld_to_str_human (Redis's MAX_LONG_DOUBLE_CHARS). */
#define LD_STR_MAX (5 * 1024)

/* HRANDFIELD with a negative count repeats fields: the reply is the only
 * thing that grows with the count, and it is built whole in memory before
 * it is sent. Past this many elements ringkv answers "ERR value is out of
 * range" instead of growing the reply without bound (Redis would try). */

/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */



static inline struct hash_obj *entry_hash(const struct kv_entry *e) {
    return (struct hash_obj *)entry_obj(e);
}

/* The hash at key for reading: false after WRONGTYPE; *h NULL when absent. */
static bool hash_read(struct cmd_ctx *c, struct slice key, struct hash_obj **h) {
    bool wrong;
    struct kv_entry **slot = lookup_typed_or_reply(c, key, OBJ_HASH, LOOKUP_READ, &wrong);
    if (wrong) return false;
    *h = slot ? entry_hash(*slot) : NULL;
    return true;
}

/* The hash at key for writing, a new empty one (not yet stored) when the key
 * is absent; false after WRONGTYPE. Finish with hash_commit. */
static bool hash_write(struct cmd_ctx *c, struct slice key, struct kv_entry ***slot, struct hash_obj **h) {
    if (!obj_write(c, key, OBJ_HASH, slot, (void **)h)) return false;
    if (!*h) *h = hash_new();
    return true;
}

/* Store the possibly-moved object back (h is then the entry's: do not use
 * it); create or delete the key as needed. Also the way out of a write that
 * changed nothing, which folds a small hash back into its entry. */
static void hash_commit(struct cmd_ctx *c, struct slice key, struct kv_entry **slot, struct hash_obj *h,
                        bool changed) {
    obj_commit(c, key, OBJ_HASH, slot, h, hash_len(h), changed);
}


/* ---------------------------------------------------------------------------
 * Setting and getting fields
 * ------------------------------------------------------------------------- */

static void hset_generic(struct cmd_ctx *c, bool hmset) {
    struct kv_entry **slot;
    struct hash_obj *h;

    if (c->argc % 2 == 1) {
        reply_wrong_arity(&c->r, c->cmd->name);
        return;
    }
    if (!hash_write(c, c->argv[1], &slot, &h))
        return;
    hash_try_conversion(&h, &c->argv[2], (size_t)c->argc - 2);
    long long created = 0;
    for (int j = 2; j < c->argc; j += 2)
        created += hash_set(&h, c->argv[j], c->argv[j + 1]);
    hash_commit(c, c->argv[1], slot, h, true);
    notify(c, NOTIFY_HASH, "hset", c->argv[1]);
    if (hmset)
        reply_ok(&c->r);
    else
        reply_int(&c->r, created);
}

static void cmd_hset(struct cmd_ctx *c) { hset_generic(c, false); }
static void cmd_hmset(struct cmd_ctx *c) { hset_generic(c, true); }

static void cmd_hsetnx(struct cmd_ctx *c) {
    struct kv_entry **slot;
    struct hash_obj *h;

    if (!hash_write(c, c->argv[1], &slot, &h))
        return;
    if (hash_exists(h, c->argv[2])) {
        hash_commit(c, c->argv[1], slot, h, false);   /* unchanged */
        reply_int(&c->r, 0);
        return;
    }
    hash_try_conversion(&h, &c->argv[2], 2);
    hash_set(&h, c->argv[2], c->argv[3]);
    hash_commit(c, c->argv[1], slot, h, true);
    notify(c, NOTIFY_HASH, "hset", c->argv[1]);
    reply_int(&c->r, 1);
}

static void cmd_hget(struct cmd_ctx *c) {
    struct hash_obj *h;
    struct slice v;
    char buf[HASH_BUF_SIZE];

    if (!hash_read(c, c->argv[1], &h))
        return;
    if (h && hash_get(h, c->argv[2], &v, buf))
        reply_bulk_slice(&c->r, v);
    else
        reply_null(&c->r);
}

static void cmd_hmget(struct cmd_ctx *c) {
    struct hash_obj *h;
    struct slice v;
    char buf[HASH_BUF_SIZE];

    if (!hash_read(c, c->argv[1], &h))
        return;
    reply_array(&c->r, (size_t)c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        if (h && hash_get(h, c->argv[j], &v, buf))
            reply_bulk_slice(&c->r, v);
        else
            reply_null(&c->r);
    }
}

static void cmd_hdel(struct cmd_ctx *c) {
    struct hash_obj *h;
    bool wrong;
    struct kv_entry **slot = lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, LOOKUP_NONE, &wrong);

    if (wrong)
        return;
    if (!slot) {
        reply_int(&c->r, 0);
        return;
    }
    h = entry_obj_for_write(*slot);
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) {
        deleted += hash_delete(&h, c->argv[j]);
        if (hash_len(h) == 0)
            break;
    }
    bool emptied = hash_len(h) == 0;
    hash_commit(c, c->argv[1], slot, h, deleted > 0);
    if (deleted) notify(c, NOTIFY_HASH, "hdel", c->argv[1]);
    if (emptied) notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
    reply_int(&c->r, deleted);
}

static void cmd_hlen(struct cmd_ctx *c) {
    struct hash_obj *h;
    if (hash_read(c, c->argv[1], &h))
        reply_int(&c->r, h ? (long long)hash_len(h) : 0);
}

static void cmd_hstrlen(struct cmd_ctx *c) {
    struct hash_obj *h;
    struct slice v;
    char buf[HASH_BUF_SIZE];

    if (hash_read(c, c->argv[1], &h))
        reply_int(&c->r, h && hash_get(h, c->argv[2], &v, buf) ? (long long)v.len : 0);
}

static void cmd_hexists(struct cmd_ctx *c) {
    struct hash_obj *h;
    if (hash_read(c, c->argv[1], &h))
        reply_int(&c->r, h && hash_exists(h, c->argv[2]));
}

#define WANT_FIELDS 1u
#define WANT_VALUES 2u

/* HGETALL (a map in RESP3), HKEYS, HVALS. */
static void getall_generic(struct cmd_ctx *c, unsigned want) {
    struct hash_obj *h;
    bool both = want == (WANT_FIELDS | WANT_VALUES);

    if (!hash_read(c, c->argv[1], &h))
        return;
    size_t n = h ? hash_len(h) : 0;
    if (both)
        reply_map(&c->r, n);
    else
        reply_array(&c->r, n);
    if (!h)
        return;
    struct hash_iter it;
    struct slice f, v;
    hash_iter_init(&it, h);
    while (hash_iter_next(&it, &f, &v)) {
        if (want & WANT_FIELDS) reply_bulk_slice(&c->r, f);
        if (want & WANT_VALUES) reply_bulk_slice(&c->r, v);
    }
}

static void cmd_hgetall(struct cmd_ctx *c) { getall_generic(c, WANT_FIELDS | WANT_VALUES); }
static void cmd_hkeys(struct cmd_ctx *c) { getall_generic(c, WANT_FIELDS); }
static void cmd_hvals(struct cmd_ctx *c) { getall_generic(c, WANT_VALUES); }

/* ---------------------------------------------------------------------------
 * Counters
 * ------------------------------------------------------------------------- */

static void cmd_hincrby(struct cmd_ctx *c) {
    struct kv_entry **slot;
    struct hash_obj *h;
    struct slice cur;
    char buf[HASH_BUF_SIZE], out[32];
    long long incr, value = 0;

    if (!arg_ll_or_reply(c, c->argv[3], &incr) || !hash_write(c, c->argv[1], &slot, &h))
        return;
    if (hash_get(h, c->argv[2], &cur, buf) && !str_to_ll(cur.ptr, cur.len, &value)) {
        hash_commit(c, c->argv[1], slot, h, false);   /* unchanged */
        reply_error(&c->r, "ERR hash value is not an integer");
        return;
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
        (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        hash_commit(c, c->argv[1], slot, h, false);   /* unchanged (or new and empty: freed) */
        reply_error(&c->r, ERR_OVERFLOW);
        return;
    }
    value += incr;
    int n = ll_to_str(out, sizeof out, value);
    hash_set(&h, c->argv[2], (struct slice){ out, (size_t)n });
    hash_commit(c, c->argv[1], slot, h, true);
    notify(c, NOTIFY_HASH, "hincrby", c->argv[1]);
    reply_int(&c->r, value);
}

static void cmd_hincrbyfloat(struct cmd_ctx *c) {
    struct kv_entry **slot;
    struct hash_obj *h;
    struct slice cur;
    char buf[HASH_BUF_SIZE];
    static _Thread_local char out[LD_STR_MAX];
    long double incr, value = 0;

    if (!str_to_ld(c->argv[3].ptr, c->argv[3].len, &incr)) {
        reply_error(&c->r, ERR_NOT_FLOAT);
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(&c->r, "ERR value is NaN or Infinity");
        return;
    }
    if (!hash_write(c, c->argv[1], &slot, &h))
        return;
    if (hash_get(h, c->argv[2], &cur, buf) && !str_to_ld(cur.ptr, cur.len, &value)) {
        hash_commit(c, c->argv[1], slot, h, false);   /* unchanged */
        reply_error(&c->r, "ERR hash value is not a float");
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        hash_commit(c, c->argv[1], slot, h, false);   /* unchanged (or new and empty: freed) */
        reply_error(&c->r, "ERR increment would produce NaN or Infinity");
        return;
    }
    struct slice s = { out, (size_t)ld_to_str_human(out, sizeof out, value) };
    hash_set(&h, c->argv[2], s);
    hash_commit(c, c->argv[1], slot, h, true);
    notify(c, NOTIFY_HASH, "hincrbyfloat", c->argv[1]);
    reply_bulk_slice(&c->r, s);
}

/* ---------------------------------------------------------------------------
 * HRANDFIELD
 * ------------------------------------------------------------------------- */

/* One field (and its value) of an HRANDFIELD reply with a count. */
static void reply_pair(struct cmd_ctx *c, struct slice f, struct slice v, bool withvalues) {
    if (withvalues && c->r.resp > 2)
        reply_array(&c->r, 2);
    reply_bulk_slice(&c->r, f);
    if (withvalues)
        reply_bulk_slice(&c->r, v);
}

static void reply_lp_pair(struct cmd_ctx *c, const struct listpack *lp, size_t pos, bool withvalues) {
    char fbuf[LP_INTBUF_SIZE], vbuf[LP_INTBUF_SIZE];
    struct lp_value fv, vv;
    lp_get(lp, pos, &fv);
    struct slice f = lp_value_str(&fv, fbuf), v = { NULL, 0 };
    if (withvalues) {
        lp_get(lp, lp_next(lp, pos), &vv);
        v = lp_value_str(&vv, vbuf);
    }
    reply_pair(c, f, v, withvalues);
}

/* Positions of the fields of a listpack hash (n of them). */
static size_t *lp_field_positions(const struct listpack *lp, size_t n) {
    size_t *pos = rk_malloc(n * sizeof *pos);
    size_t i = 0;
    for (size_t p = lp_first(lp); p != LP_NONE && i < n; p = lp_next_pair(lp, p))
        pos[i++] = p;
    return pos;
}

static void reply_array_of(struct cmd_ctx *c, size_t n, bool withvalues) {
    reply_array(&c->r, withvalues && c->r.resp == 2 ? n * 2 : n);
}

/* Redis's hrandfieldWithCountCommand(). */
static void hrandfield_count(struct cmd_ctx *c, long long count, bool withvalues) {
    struct hash_obj *h;
    bool wrong;
    struct kv_entry **slot = lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, LOOKUP_READ, &wrong);

    if (wrong)
        return;
    if (!slot || count == 0) {
        reply_array(&c->r, 0);
        return;
    }
    h = entry_hash(*slot);
    size_t size = hash_len(h);
    struct listpack *lp = hash_lp(h);
    struct hashmap *m = hash_map(h);

    /* Repeats allowed (negative count), or one field: sample every time. */
    if (count < 0 || count == 1) {
        long long n = count < 0 ? -count : count;
        if (n > RAND_MAX_REPEAT) {
            reply_error(&c->r, "ERR value is out of range");
            return;
        }
        reply_array_of(c, (size_t)n, withvalues);
        if (m) {
            while (n--) {
                const struct hm_elem *e = hashmap_random(m, rk_random());
                reply_pair(c, hm_elem_key(e), hm_elem_val(e), withvalues);
            }
        } else {
            size_t *pos = lp_field_positions(lp, size);
            while (n--)
                reply_lp_pair(c, lp, pos[rk_random() % size], withvalues);
            free(pos);
        }
        return;
    }

    /* Asking for the whole hash or more: reply the whole hash. */
    if ((unsigned long long)count >= size) {
        struct hash_iter it;
        struct slice f, v;
        reply_array_of(c, size, withvalues);
        hash_iter_init(&it, h);
        while (hash_iter_next(&it, &f, &v))
            reply_pair(c, f, v, withvalues);
        return;
    }

    /* Distinct fields, fewer than the hash has. */
    size_t want = (size_t)count;
    reply_array_of(c, want, withvalues);
    if (lp) {
        /* Partial Fisher-Yates over the field positions. */
        size_t *pos = lp_field_positions(lp, size);
        for (size_t i = 0; i < want; i++) {
            size_t j = i + (size_t)(rk_random() % (size - i));
            size_t t = pos[i]; pos[i] = pos[j]; pos[j] = t;
            reply_lp_pair(c, lp, pos[i], withvalues);
        }
        free(pos);
    } else if (want * 3 > size) {
        /* A large share of the hash: shuffle its elements (size < 3 * count). */
        const struct hm_elem **all = rk_malloc(size * sizeof *all);
        struct hashmap_iter it = hashmap_iter_start(m);
        size_t k = 0;
        for (const struct hm_elem *e; k < size && (e = hashmap_iter_next(&it));)
            all[k++] = e;
        for (size_t i = 0; i < want && i < k; i++) {
            size_t j = i + (size_t)(rk_random() % (k - i));
            const struct hm_elem *t = all[i]; all[i] = all[j]; all[j] = t;
            reply_pair(c, hm_elem_key(all[i]), hm_elem_val(all[i]), withvalues);
        }
        free(all);
    } else {
        /* A small share: random picks, skipping the ones already chosen
         * (remembered by address in a set of their own). */
        struct hashmap *seen = hashmap_new(false);
        size_t got = 0;
        while (got < want) {
            const struct hm_elem *e = hashmap_random(m, rk_random());
            if (!hashmap_set(seen, (struct slice){ (const char *)&e, sizeof e }, (struct slice){ NULL, 0 }))
                continue;
            reply_pair(c, hm_elem_key(e), hm_elem_val(e), withvalues);
            got++;
        }
        hashmap_free(seen);
    }
}

static void cmd_hrandfield(struct cmd_ctx *c) {
    if (c->argc >= 3) {
        long long count;
        bool withvalues;
        if (!arg_rand_count_or_reply(c, "withvalues", &count, &withvalues)) return;
        hrandfield_count(c, count, withvalues);
        return;
    }

    struct hash_obj *h;
    if (!hash_read(c, c->argv[1], &h))
        return;
    if (!h) {
        reply_null(&c->r);
        return;
    }
    struct hashmap *m = hash_map(h);
    if (m) {
        reply_bulk_slice(&c->r, hm_elem_key(hashmap_random(m, rk_random())));
    } else {
        struct listpack *lp = hash_lp(h);
        size_t pos = lp_seek(lp, (long long)(rk_random() % hash_len(h)) * 2);
        reply_lp_pair(c, lp, pos, false);
    }
}

/* ---------------------------------------------------------------------------
 * HSCAN
 * ------------------------------------------------------------------------- */

/* Entries a hashmap scan step visits, collected as pointers in an rbuf. */
static void scan_visit(void *ud, const struct hm_elem *e) {
    rbuf_append(ud, &e, sizeof e);
}

static uint64_t scan_step(const void *m, uint64_t cursor, size_t slots, struct rbuf *found) {
    return hashmap_scan(m, cursor, slots, scan_visit, found);
}

static void cmd_hscan(struct cmd_ctx *c) {
    uint64_t cursor;
    struct scan_args sa;
    struct hash_obj *h;

    if (!arg_cursor_or_reply(c, c->argv[2], &cursor) || !hash_read(c, c->argv[1], &h))
        return;
    if (!h) {
        reply_scan_head(c, 0, 0);
        return;
    }
    if (!scan_args_or_reply(c, 3, false, &sa))
        return;

    struct hashmap *m = hash_map(h);
    if (!m) {
        /* A listpack is returned whole, with cursor 0, as Redis does. */
        struct listpack *lp = hash_lp(h);
        size_t n = hash_len(h), matched = 0;
        size_t *keep = rk_malloc((n ? n : 1) * sizeof *keep);
        char fbuf[LP_INTBUF_SIZE];
        for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next_pair(lp, p)) {
            struct lp_value fv;
            lp_get(lp, p, &fv);
            if (scan_matches(&sa, lp_value_str(&fv, fbuf)))
                keep[matched++] = p;
        }
        reply_scan_head(c, 0, matched * 2);
        for (size_t i = 0; i < matched; i++) {   /* flat field,value even in RESP3 */
            struct lp_value fv, vv;
            char vbuf[LP_INTBUF_SIZE];
            lp_get(lp, keep[i], &fv);
            lp_get(lp, lp_next(lp, keep[i]), &vv);
            reply_bulk_slice(&c->r, lp_value_str(&fv, fbuf));
            reply_bulk_slice(&c->r, lp_value_str(&vv, vbuf));
        }
        free(keep);
        return;
    }

    struct rbuf found = { 0 };
    cursor = scan_gather(&sa, m, scan_step, cursor, &found);

    const struct hm_elem **e = (const struct hm_elem **)found.buf;
    size_t n = found.len / sizeof *e, matched = 0;
    for (size_t i = 0; i < n; i++)
        if (scan_matches(&sa, hm_elem_key(e[i]))) e[matched++] = e[i];
    reply_scan_head(c, cursor, matched * 2);
    for (size_t i = 0; i < matched; i++) {
        reply_bulk_slice(&c->r, hm_elem_key(e[i]));
        reply_bulk_slice(&c->r, hm_elem_val(e[i]));
    }
    rbuf_free(&found);
}

/* ---------------------------------------------------------------------------
 * Command table (Redis 7.0.15's COMMAND INFO / COMMAND DOCS)
 * ------------------------------------------------------------------------- */

const struct command hash_commands[] = {
    CMD("hset", -4, W | D | F, 1, 1, 1, cmd_hset, "@write @hash @fast", "Set the string value of a hash field", "2.0.0", "hash", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.",
        "key:key field_value:block(field:string value:string) ..."),
    CMD("hget", 3, R | F, 1, 1, 1, cmd_hget, "@read @hash @fast", "Get the value of a hash field", "2.0.0", "hash", "O(1)",
        "key:key field:string"),
    CMD("hdel", -3, W | F, 1, 1, 1, cmd_hdel, "@write @hash @fast", "Delete one or more hash fields", "2.0.0", "hash", "O(N) where N is the number of fields to be removed.",
        "key:key field:string ..."),
    CMD("hlen", 2, R | F, 1, 1, 1, cmd_hlen, "@read @hash @fast", "Get the number of fields in a hash", "2.0.0", "hash", "O(1)",
        "key:key"),
    CMD("hexists", 3, R | F, 1, 1, 1, cmd_hexists, "@read @hash @fast", "Determine if a hash field exists", "2.0.0", "hash", "O(1)",
        "key:key field:string"),
    CMD("hgetall", 2, R, 1, 1, 1, cmd_hgetall, "@read @hash @slow", "Get all the fields and values in a hash", "2.0.0", "hash", "O(N) where N is the size of the hash.",
        "key:key"),
    CMD("hmget", -3, R | F, 1, 1, 1, cmd_hmget, "@read @hash @fast", "Get the values of all the given hash fields", "2.0.0", "hash", "O(N) where N is the number of fields being requested.",
        "key:key field:string ..."),
    CMD("hmset", -4, W | D | F, 1, 1, 1, cmd_hmset, "@write @hash @fast", "Set multiple hash fields to multiple values", "2.0.0", "hash", "O(N) where N is the number of fields being set.",
        "key:key field_value:block(field:string value:string) ..."),
    CMD("hsetnx", 4, W | D | F, 1, 1, 1, cmd_hsetnx, "@write @hash @fast", "Set the value of a hash field, only if the field does not exist", "2.0.0", "hash", "O(1)",
        "key:key field:string value:string"),
    CMD("hstrlen", 3, R | F, 1, 1, 1, cmd_hstrlen, "@read @hash @fast", "Get the length of the value of a hash field", "3.2.0", "hash", "O(1)",
        "key:key field:string"),
    CMD("hkeys", 2, R, 1, 1, 1, cmd_hkeys, "@read @hash @slow", "Get all the fields in a hash", "2.0.0", "hash", "O(N) where N is the size of the hash.",
        "key:key"),
    CMD("hvals", 2, R, 1, 1, 1, cmd_hvals, "@read @hash @slow", "Get all the values in a hash", "2.0.0", "hash", "O(N) where N is the size of the hash.",
        "key:key"),
    CMD("hincrby", 4, W | D | F, 1, 1, 1, cmd_hincrby, "@write @hash @fast", "Increment the integer value of a hash field by the given number", "2.0.0", "hash", "O(1)",
        "key:key field:string increment:integer"),
    CMD("hincrbyfloat", 4, W | D | F, 1, 1, 1, cmd_hincrbyfloat, "@write @hash @fast", "Increment the float value of a hash field by the given amount", "2.6.0", "hash", "O(1)",
        "key:key field:string increment:double"),
    CMD("hrandfield", -2, R, 1, 1, 1, cmd_hrandfield, "@read @hash @slow", "Get one or multiple random fields from a hash", "6.2.0", "hash", "O(N) where N is the number of fields returned",
        "key:key [options:block(count:integer [withvalues:pure-token=WITHVALUES])]"),
    CMD("hscan", -3, R, 1, 1, 1, cmd_hscan, "@read @hash @slow", "Incrementally iterate hash fields and associated values", "2.8.0", "hash", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
        "key:key cursor:integer [pattern:pattern=MATCH] [count:integer=COUNT]"),
    CMD_END
};
