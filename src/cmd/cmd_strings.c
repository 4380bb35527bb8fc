/*
 * String commands: GET, SET and its variants, the multi-key MGET/MSET, the
 * in-place editors APPEND/SETRANGE and the counters INCR* / DECR*.
 *
 * Values are always kept as the bytes the client sent; there is no integer
 * encoding. A counter parses its value on every INCR (a dozen bytes) and
 * writes the new digits back, which entry_set_string does in place whenever
 * the length is unchanged. OBJECT ENCODING derives "int"/"embstr"/"raw" from
 * the bytes and the ENTRY_RAW flag (see cmd_keys.c).
 *
 * SET and GETEX share one option parser and one expiry conversion, as in
 * Redis's t_string.c, so their errors agree to the letter. Multi-key
 * commands just loop over their keys: when the keys live on several shards
 * the dispatcher runs them as a transaction with c->multi set and db.c
 * routes every key to its own shard.
 */
#include <limits.h>
#include <math.h>

#include "ringkv/watch.h"
#include "ringkv/notify.h"
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/util.h"

#define ERR_STRING_TOO_LONG "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
#define ERR_OFFSET_RANGE    "ERR offset is out of range"
#define ERR_NAN_OR_INF      "ERR increment would produce NaN or Infinity"

/* Room for any long double printed by ld_to_str_human (Redis's MAX_LONG_DOUBLE_CHARS). */
#define LD_STR_MAX (5 * 1024)

/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */


static void reply_invalid_expire(struct cmd_ctx *c) {
    reply_errorf(&c->r, "ERR invalid expire time in '%s' command", c->cmd->name);
}

/* Redis's checkStringLength(): would a string of size + append bytes be too
 * long? Entries also cannot describe more than 4 GB, whatever the config. */
static bool length_ok_or_reply(struct cmd_ctx *c, unsigned long long size, unsigned long long append) {
    unsigned long long total = size + append;
    unsigned long long max = (unsigned long long)__atomic_load_n(&rk_config_proto_max_bulk_len,
                                                                 __ATOMIC_RELAXED);
    if (total < size || total > max || total > UINT32_MAX) {
        reply_error(&c->r, ERR_STRING_TOO_LONG);
        return false;
    }
    return true;
}

/* Slot of key (NULL when absent), or false after WRONGTYPE if it is not a string. */
static bool string_slot(struct cmd_ctx *c, struct slice key, unsigned flags, struct kv_entry ***out) {
    struct kv_entry **slot = db_lookup_slot(c, key, flags);
    if (slot && entry_type(*slot) != OBJ_STRING) {
        reply_error(&c->r, ERR_WRONGTYPE);
        return false;
    }
    *out = slot;
    return true;
}

/* GET's reply for key; false after WRONGTYPE (Redis's getGenericCommand). */
static bool reply_get(struct cmd_ctx *c, struct slice key) {
    struct kv_entry **slot;
    if (!string_slot(c, key, LOOKUP_READ, &slot))
        return false;
    if (slot)
        reply_bulk_slice(&c->r, entry_val_slice(*slot));
    else
        reply_null(&c->r);
    return true;
}

/*
 * Store val at key, where slot is what a lookup of key returned. The TTL
 * becomes `when` (NO_EXPIRE clears it) unless keepttl. An existing string is
 * overwritten in its own block when the size allows.
 */
static void put_string(struct cmd_ctx *c, struct kv_entry **slot, struct slice key,
                       struct slice val, long long when, bool keepttl) {
    if (!slot) {
        db_insert(c, entry_new_string(key, val, keepttl ? NO_EXPIRE : when));
    } else if (entry_type(*slot) != OBJ_STRING) {
        db_replace(c, slot, entry_new_string(key, val, keepttl ? entry_expire(*slot) : when));
    } else {
        *slot = entry_set_string(*slot, val);
        if (!keepttl)
            db_set_expire(c, slot, when);
        db_changed(c, key, false);
    }
}

/* Plain SET semantics: whatever key held, it now holds val and no TTL. */
static void set_string(struct cmd_ctx *c, struct slice key, struct slice val) {
    put_string(c, db_lookup_slot(c, key, LOOKUP_NONE), key, val, NO_EXPIRE, false);
}

/* ---------------------------------------------------------------------------
 * SET / GETEX options
 * ------------------------------------------------------------------------- */

#define OPT_NX      (1u << 0)
#define OPT_XX      (1u << 1)
#define OPT_GET     (1u << 2)
#define OPT_KEEPTTL (1u << 3)
#define OPT_PERSIST (1u << 4)
#define OPT_EX      (1u << 5)
#define OPT_PX      (1u << 6)
#define OPT_EXAT    (1u << 7)
#define OPT_PXAT    (1u << 8)
#define OPT_EXPIRE  (OPT_EX | OPT_PX | OPT_EXAT | OPT_PXAT)

#define FOR_SET   1u
#define FOR_GETEX 2u

struct string_opts {
    unsigned flags;
    struct slice expire;   /* the EX/PX/EXAT/PXAT argument */
};

/* Each option, the options it cannot follow, and the commands that take it.
 * Repeating the same expiry option is allowed (the last one wins), as in Redis. */
static const struct {
    const char *name;
    unsigned flag, conflicts, cmds;
} string_options[] = {
    { "nx",      OPT_NX,      OPT_XX,                                     FOR_SET },
    { "xx",      OPT_XX,      OPT_NX,                                     FOR_SET },
    { "get",     OPT_GET,     0,                                          FOR_SET },
    { "keepttl", OPT_KEEPTTL, OPT_PERSIST | OPT_EXPIRE,                   FOR_SET },
    { "persist", OPT_PERSIST, OPT_KEEPTTL | OPT_EXPIRE,                   FOR_GETEX },
    { "ex",      OPT_EX,      OPT_KEEPTTL | OPT_PERSIST | (OPT_EXPIRE & ~OPT_EX),   FOR_SET | FOR_GETEX },
    { "px",      OPT_PX,      OPT_KEEPTTL | OPT_PERSIST | (OPT_EXPIRE & ~OPT_PX),   FOR_SET | FOR_GETEX },
    { "exat",    OPT_EXAT,    OPT_KEEPTTL | OPT_PERSIST | (OPT_EXPIRE & ~OPT_EXAT), FOR_SET | FOR_GETEX },
    { "pxat",    OPT_PXAT,    OPT_KEEPTTL | OPT_PERSIST | (OPT_EXPIRE & ~OPT_PXAT), FOR_SET | FOR_GETEX },
};

/* Redis's parseExtendedStringArgumentsOrReply(): any misfit is a syntax error. */
static bool parse_string_opts(struct cmd_ctx *c, int first, unsigned cmd, struct string_opts *o) {
    o->flags = 0;
    for (int j = first; j < c->argc; j++) {
        size_t i;
        for (i = 0; i < RK_ARRAY_LEN(string_options); i++)
            if (slice_eq_nocase(c->argv[j], string_options[i].name))
                break;
        if (i == RK_ARRAY_LEN(string_options) || !(string_options[i].cmds & cmd) ||
            (o->flags & string_options[i].conflicts)) {
            reply_error(&c->r, ERR_SYNTAX);
            return false;
        }
        unsigned flag = string_options[i].flag;
        if (flag & OPT_EXPIRE) {
            if (j == c->argc - 1) {
                reply_error(&c->r, ERR_SYNTAX);
                return false;
            }
            o->expire = c->argv[++j];
        }
        o->flags |= flag;
    }
    return true;
}

/* The absolute unix time in ms an expiry option asks for (Redis's
 * getExpireMillisecondsOrReply): positive, and no overflow on the way. */
static bool expire_at_or_reply(struct cmd_ctx *c, const struct string_opts *o, long long *when) {
    long long v;
    bool seconds = o->flags & (OPT_EX | OPT_EXAT);

    if (!arg_ll_or_reply(c, o->expire, &v))
        return false;
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000))
        goto invalid;
    if (seconds)
        v *= 1000;
    if (o->flags & (OPT_EX | OPT_PX)) {
        if (v > LLONG_MAX - c->now_ms)
            goto invalid;
        v += c->now_ms;
    }
    *when = v;
    return true;
invalid:
    reply_invalid_expire(c);
    return false;
}

/* ---------------------------------------------------------------------------
 * GET / SET family
 * ------------------------------------------------------------------------- */

/* Redis's setGenericCommand(). int_reply: SETNX answers :1/:0 instead of +OK/nil. */
static void set_generic(struct cmd_ctx *c, const struct string_opts *o, struct slice val,
                        bool int_reply) {
    struct slice key = c->argv[1];
    long long when = NO_EXPIRE;

    if ((o->flags & OPT_EXPIRE) && !expire_at_or_reply(c, o, &when))
        return;
    if ((o->flags & OPT_GET) && !reply_get(c, key))
        return;

    struct kv_entry **slot = db_lookup_slot(c, key, LOOKUP_NONE);
    if (((o->flags & OPT_NX) && slot) || ((o->flags & OPT_XX) && !slot)) {
        if (!(o->flags & OPT_GET)) {
            if (int_reply) reply_int(&c->r, 0);
            else reply_null(&c->r);
        }
        return;
    }
    put_string(c, slot, key, val, when, o->flags & OPT_KEEPTTL);
    notify(c, NOTIFY_STRING, "set", key);
    if (when != NO_EXPIRE) notify(c, NOTIFY_GENERIC, "expire", key);
    if (!(o->flags & OPT_GET)) {
        if (int_reply) reply_int(&c->r, 1);
        else reply_ok(&c->r);
    }
}

void cmd_get(struct cmd_ctx *c) {
    reply_get(c, c->argv[1]);
}

/* The hottest path in the server. A plain SET hashes its key once (the
 * lookup; db_insert finds the hash in db.c's memo) and overwrites an
 * existing string of the same size in place. */
void cmd_set(struct cmd_ctx *c) {
    struct string_opts o;
    if (parse_string_opts(c, 3, FOR_SET, &o))
        set_generic(c, &o, c->argv[2], false);
}

void cmd_setnx(struct cmd_ctx *c) {
    struct string_opts o = { .flags = OPT_NX };
    set_generic(c, &o, c->argv[2], true);
}

void cmd_setex(struct cmd_ctx *c) {
    struct string_opts o = { .flags = OPT_EX, .expire = c->argv[2] };
    set_generic(c, &o, c->argv[3], false);
}

void cmd_psetex(struct cmd_ctx *c) {
    struct string_opts o = { .flags = OPT_PX, .expire = c->argv[2] };
    set_generic(c, &o, c->argv[3], false);
}

void cmd_getset(struct cmd_ctx *c) {
    if (!reply_get(c, c->argv[1]))
        return;
    set_string(c, c->argv[1], c->argv[2]);
    notify(c, NOTIFY_STRING, "set", c->argv[1]);
}

void cmd_getdel(struct cmd_ctx *c) {
    if (reply_get(c, c->argv[1]) && db_delete(c, c->argv[1]))
        notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
}

void cmd_getex(struct cmd_ctx *c) {
    struct string_opts o;
    struct kv_entry **slot;
    long long when = NO_EXPIRE;

    if (!parse_string_opts(c, 2, FOR_GETEX, &o) || !string_slot(c, c->argv[1], LOOKUP_READ, &slot))
        return;
    if (!slot) {
        reply_null(&c->r);
        return;
    }
    /* The key is checked before the expiry value, as Redis does. */
    if ((o.flags & OPT_EXPIRE) && !expire_at_or_reply(c, &o, &when))
        return;
    reply_bulk_slice(&c->r, entry_val_slice(*slot));

    if ((o.flags & (OPT_EXAT | OPT_PXAT)) && when <= c->now_ms) {
        db_delete(c, c->argv[1]);
        notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
    } else if (o.flags & OPT_EXPIRE) {
        db_set_expire(c, slot, when);
        notify(c, NOTIFY_GENERIC, "expire", c->argv[1]);
    } else if ((o.flags & OPT_PERSIST) && entry_has_expire(*slot)) {
        db_set_expire(c, slot, NO_EXPIRE);
        notify(c, NOTIFY_GENERIC, "persist", c->argv[1]);
    }
}

/* ---------------------------------------------------------------------------
 * Multi-key
 * ------------------------------------------------------------------------- */

void cmd_mget(struct cmd_ctx *c) {
    reply_array(&c->r, (size_t)c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        struct kv_entry *e = db_lookup(c, c->argv[j], LOOKUP_READ);
        if (e && entry_type(e) == OBJ_STRING)
            reply_bulk_slice(&c->r, entry_val_slice(e));
        else
            reply_null(&c->r);
    }
}

static void mset_generic(struct cmd_ctx *c, bool nx) {
    if (c->argc % 2 == 0) {
        reply_wrong_arity(&c->r, c->cmd->name);
        return;
    }
    if (nx) {
        for (int j = 1; j < c->argc; j += 2) {
            if (db_lookup(c, c->argv[j], LOOKUP_NONE)) {
                reply_int(&c->r, 0);
                return;
            }
        }
    }
    for (int j = 1; j < c->argc; j += 2) {
        set_string(c, c->argv[j], c->argv[j + 1]);
        notify(c, NOTIFY_STRING, "set", c->argv[j]);
    }
    if (nx)
        reply_int(&c->r, 1);
    else
        reply_ok(&c->r);
}

void cmd_mset(struct cmd_ctx *c) {
    mset_generic(c, false);
}

void cmd_msetnx(struct cmd_ctx *c) {
    mset_generic(c, true);
}

/* ---------------------------------------------------------------------------
 * Editing in place
 * ------------------------------------------------------------------------- */

void cmd_append(struct cmd_ctx *c) {
    struct slice key = c->argv[1], add = c->argv[2];
    struct kv_entry **slot;

    if (!string_slot(c, key, LOOKUP_NONE, &slot))
        return;
    if (!slot) {
        db_insert(c, entry_new_string(key, add, NO_EXPIRE));
        notify(c, NOTIFY_STRING, "append", key);
        reply_int(&c->r, (long long)add.len);
        return;
    }
    size_t len = entry_val_len(*slot);
    if (!length_ok_or_reply(c, len, add.len))
        return;
    /* Resizing marks the entry raw and keeps spare room for the next APPEND. */
    *slot = entry_resize_string(*slot, len + add.len);
    if (add.len)
        memcpy(entry_val(*slot) + len, add.ptr, add.len);
    db_changed(c, key, false);   /* also an empty APPEND, as Redis signals it */
    notify(c, NOTIFY_STRING, "append", key);
    reply_int(&c->r, (long long)(len + add.len));
}

void cmd_setrange(struct cmd_ctx *c) {
    struct slice key = c->argv[1], val = c->argv[3];
    struct kv_entry **slot;
    long long offset;

    if (!arg_ll_or_reply(c, c->argv[2], &offset))
        return;
    if (offset < 0) {
        reply_error(&c->r, ERR_OFFSET_RANGE);
        return;
    }
    if (!string_slot(c, key, LOOKUP_NONE, &slot))
        return;

    size_t olen = slot ? entry_val_len(*slot) : 0;
    if (val.len == 0) {   /* nothing to write: report the length, create nothing */
        reply_int(&c->r, (long long)olen);
        return;
    }
    if (!length_ok_or_reply(c, (unsigned long long)offset, val.len))
        return;

    size_t end = (size_t)offset + val.len, nlen = end > olen ? end : olen;
    struct kv_entry *e;
    if (slot) {
        e = *slot = entry_resize_string(*slot, nlen);
    } else {
        e = entry_new_string_len(key, nlen);   /* exactly its size, as Redis creates it */
        db_insert(c, e);
    }
    if ((size_t)offset > olen)
        memset(entry_val(e) + olen, 0, (size_t)offset - olen);
    memcpy(entry_val(e) + offset, val.ptr, val.len);
    if (slot) db_changed(c, key, false);
    notify(c, NOTIFY_STRING, "setrange", key);
    reply_int(&c->r, (long long)nlen);
}

void cmd_strlen(struct cmd_ctx *c) {
    struct kv_entry **slot;
    if (string_slot(c, c->argv[1], LOOKUP_READ, &slot))
        reply_int(&c->r, slot ? (long long)entry_val_len(*slot) : 0);
}

/* GETRANGE (and SUBSTR): inclusive, negative indexes count from the end. */
void cmd_getrange(struct cmd_ctx *c) {
    struct kv_entry **slot;
    long long start, end;

    if (!arg_ll_or_reply(c, c->argv[2], &start) || !arg_ll_or_reply(c, c->argv[3], &end))
        return;
    if (!string_slot(c, c->argv[1], LOOKUP_READ, &slot))
        return;
    if (!slot) {
        reply_bulk(&c->r, "", 0);
        return;
    }
    struct slice v = entry_val_slice(*slot);
    long long len = (long long)v.len;

    if (start < 0 && end < 0 && start > end) {
        reply_bulk(&c->r, "", 0);
        return;
    }
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= len) end = len - 1;
    if (start > end || len == 0)
        reply_bulk(&c->r, "", 0);
    else
        reply_bulk(&c->r, v.ptr + start, (size_t)(end - start + 1));
}

/* ---------------------------------------------------------------------------
 * Counters
 * ------------------------------------------------------------------------- */

/* Counters keep the key's TTL, like Redis's dbOverwrite(). */
static void incr_generic(struct cmd_ctx *c, long long by) {
    struct kv_entry **slot;
    long long v = 0;
    char buf[32];

    if (!string_slot(c, c->argv[1], LOOKUP_NONE, &slot))
        return;
    if (slot) {
        struct slice cur = entry_val_slice(*slot);
        if (!arg_ll_or_reply(c, cur, &v))
            return;
    }
    if ((by < 0 && v < 0 && by < LLONG_MIN - v) || (by > 0 && v > 0 && by > LLONG_MAX - v)) {
        reply_error(&c->r, ERR_OVERFLOW);
        return;
    }
    v += by;
    int n = ll_to_str(buf, sizeof buf, v);
    put_string(c, slot, c->argv[1], (struct slice){ buf, (size_t)n }, NO_EXPIRE, true);
    notify(c, NOTIFY_STRING, "incrby", c->argv[1]);
    reply_int(&c->r, v);
}

void cmd_incr(struct cmd_ctx *c) {
    incr_generic(c, 1);
}

void cmd_decr(struct cmd_ctx *c) {
    incr_generic(c, -1);
}

void cmd_incrby(struct cmd_ctx *c) {
    long long by;
    if (arg_ll_or_reply(c, c->argv[2], &by))
        incr_generic(c, by);
}

void cmd_decrby(struct cmd_ctx *c) {
    long long by;
    if (!arg_ll_or_reply(c, c->argv[2], &by))
        return;
    if (by == LLONG_MIN) {   /* -by would overflow */
        reply_error(&c->r, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, -by);
}

void cmd_incrbyfloat(struct cmd_ctx *c) {
    struct kv_entry **slot;
    long double v = 0, by;
    static _Thread_local char buf[LD_STR_MAX];

    if (!string_slot(c, c->argv[1], LOOKUP_NONE, &slot))
        return;
    if (slot) {
        struct slice cur = entry_val_slice(*slot);
        if (!str_to_ld(cur.ptr, cur.len, &v)) {
            reply_error(&c->r, ERR_NOT_FLOAT);
            return;
        }
    }
    if (!str_to_ld(c->argv[2].ptr, c->argv[2].len, &by)) {
        reply_error(&c->r, ERR_NOT_FLOAT);
        return;
    }
    v += by;
    if (isnan(v) || isinf(v)) {
        reply_error(&c->r, ERR_NAN_OR_INF);
        return;
    }
    struct slice s = { buf, (size_t)ld_to_str_human(buf, sizeof buf, v) };
    put_string(c, slot, c->argv[1], s, NO_EXPIRE, true);
    notify(c, NOTIFY_STRING, "incrbyfloat", c->argv[1]);
    reply_bulk_slice(&c->r, s);
}
