/*
 * Set commands: SADD SREM SCARD SISMEMBER SMISMEMBER SMEMBERS SPOP
 * SRANDMEMBER SMOVE SINTER SUNION SDIFF SINTERCARD SINTERSTORE SUNIONSTORE
 * SDIFFSTORE SSCAN, with Redis 7's replies (sets in RESP3 where Redis
 * answers a set) and error texts.
 *
 * The value object and its encodings live in src/types/set_obj.c; this file
 * only parses arguments, reaches keys through db.h and replies. Multi-key
 * commands compute their whole result into a fresh set before touching the
 * destination, so a destination that is also a source is read intact.
 * Counts are bounded by the set's size wherever Redis bounds them: SPOP and
 * SRANDMEMBER with a count larger than the set never allocate by the count.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "ringkv/notify.h"
#include "ringkv/command_def.h"
#include "ringkv/db.h"
#include "ringkv/scan_cursor.h"
#include "ringkv/set_obj.h"
#include "ringkv/util.h"


/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */



/* The set at key (NULL when absent); false after WRONGTYPE. */
static bool get_set(struct cmd_ctx *c, struct slice key, unsigned flags, struct set_obj **out) {
    bool wrong;
    struct kv_entry **slot = lookup_typed_or_reply(c, key, OBJ_SET, flags, &wrong);
    if (wrong) return false;
    *out = slot ? entry_obj(*slot) : NULL;
    return true;
}

/* The set at key for writing: its slot (NULL when absent) and object. The
 * object pointer may change with every add or remove (set_obj.h): finish
 * with set_commit before anything else looks at the entry, also when
 * nothing changed. */
static bool get_set_slot(struct cmd_ctx *c, struct slice key, struct kv_entry ***slot, struct set_obj **out) {
    return obj_write(c, key, OBJ_SET, slot, (void **)out);
}

static void set_commit(struct cmd_ctx *c, struct slice key, struct kv_entry **slot, struct set_obj *s,
                       bool changed) {
    obj_commit(c, key, OBJ_SET, slot, s, set_obj_count(s), changed);
}

static void reply_members_body(struct cmd_ctx *c, const struct set_obj *s) {
    struct set_iter it;
    set_iter_init(&it, s);
    for (struct slice m; set_iter_next(&it, &m);) reply_bulk_slice(&c->r, m);
}

static void reply_members(struct cmd_ctx *c, const struct set_obj *s, bool as_set) {
    size_t n = set_obj_count(s);
    if (as_set) reply_set(&c->r, n);
    else reply_array(&c->r, n);
    reply_members_body(c, s);
}

static void reply_empty_set(struct cmd_ctx *c) { reply_set(&c->r, 0); }

/* ---------------------------------------------------------------------------
 * Single-key commands
 * ------------------------------------------------------------------------- */

static void cmd_sadd(struct cmd_ctx *c) {
    struct kv_entry **slot;
    struct set_obj *s;
    size_t n = (size_t)c->argc - 2;
    if (!get_set_slot(c, c->argv[1], &slot, &s)) return;
    if (!s) s = set_obj_new(c->argv[2], n);
    else set_obj_maybe_convert(&s, n);
    long long added = 0;
    for (int j = 2; j < c->argc; j++) added += set_obj_add(&s, c->argv[j]);
    set_commit(c, c->argv[1], slot, s, added > 0);
    if (added) notify(c, NOTIFY_SET, "sadd", c->argv[1]);
    reply_int(&c->r, added);
}

static void cmd_srem(struct cmd_ctx *c) {
    struct kv_entry **slot;
    struct set_obj *s;
    if (!get_set_slot(c, c->argv[1], &slot, &s)) return;
    long long removed = 0;
    if (s) {
        for (int j = 2; j < c->argc; j++) {
            removed += set_obj_remove(&s, c->argv[j]);
            if (set_obj_count(s) == 0) break;
        }
        bool emptied = set_obj_count(s) == 0;
        set_commit(c, c->argv[1], slot, s, removed > 0);
        if (removed) notify(c, NOTIFY_SET, "srem", c->argv[1]);
        if (emptied) notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
    }
    reply_int(&c->r, removed);
}

static void cmd_scard(struct cmd_ctx *c) {
    struct set_obj *s;
    if (!get_set(c, c->argv[1], LOOKUP_READ, &s)) return;
    reply_int(&c->r, s ? (long long)set_obj_count(s) : 0);
}

static void cmd_sismember(struct cmd_ctx *c) {
    struct set_obj *s;
    if (!get_set(c, c->argv[1], LOOKUP_READ, &s)) return;
    reply_int(&c->r, s && set_obj_contains(s, c->argv[2]));
}

static void cmd_smismember(struct cmd_ctx *c) {
    struct set_obj *s;
    if (!get_set(c, c->argv[1], LOOKUP_READ, &s)) return;
    reply_array(&c->r, (size_t)c->argc - 2);
    for (int j = 2; j < c->argc; j++) reply_int(&c->r, s && set_obj_contains(s, c->argv[j]));
}

static void cmd_smembers(struct cmd_ctx *c) {
    struct set_obj *s;
    if (!get_set(c, c->argv[1], LOOKUP_READ, &s)) return;
    if (!s) reply_empty_set(c);
    else reply_members(c, s, true);
}

/* SPOP key count (Redis's spopWithCountCommand). */
#define SPOP_MOVE_STRATEGY_MUL 5

static void spop_count(struct cmd_ctx *c) {
    long long count;
    struct kv_entry **slot;
    struct set_obj *s;
    if (!arg_min_or_reply(c, c->argv[2], 0, &count, ERR_POSITIVE)) return;
    if (!get_set_slot(c, c->argv[1], &slot, &s)) return;
    if (!s || count == 0) {
        if (s) set_commit(c, c->argv[1], slot, s, false);
        reply_empty_set(c);
        return;
    }
    size_t size = set_obj_count(s);
    notify(c, NOTIFY_SET, "spop", c->argv[1]);
    if ((unsigned long long)count >= size) {
        /* Everything: reply the whole set and delete the key. */
        reply_members(c, s, true);
        db_delete(c, c->argv[1]);
        notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
        return;
    }
    size_t remaining = size - (size_t)count;
    struct rbuf buf = { 0 };
    reply_set(&c->r, (size_t)count);
    if (remaining * SPOP_MOVE_STRATEGY_MUL > (size_t)count) {
        /* Few to pop: pop them one by one. */
        for (long long i = 0; i < count; i++)
            reply_bulk_slice(&c->r, set_obj_pop(&s, rk_random(), &buf));
        set_commit(c, c->argv[1], slot, s, true);
    } else {
        /* Most go: move the few that stay into a new set, reply what is
         * left in the old one, and keep the new one. */
        struct set_obj *keep = set_obj_enc(s) == SET_ENC_INTSET
            ? set_obj_new_intset() : set_obj_new(SLICE_LIT("-"), remaining);
        while (remaining--) {
            struct slice m = set_obj_pop(&s, rk_random(), &buf);
            set_obj_add(&keep, m);
        }
        reply_members_body(c, s);
        set_obj_free(s);
        set_commit(c, c->argv[1], slot, keep, true);
    }
    rbuf_free(&buf);
}

static void cmd_spop(struct cmd_ctx *c) {
    if (c->argc == 3) {
        spop_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    struct kv_entry **slot;
    struct set_obj *s;
    if (!get_set_slot(c, c->argv[1], &slot, &s)) return;
    if (!s) {
        reply_null(&c->r);
        return;
    }
    struct rbuf buf = { 0 };
    reply_bulk_slice(&c->r, set_obj_pop(&s, rk_random(), &buf));
    rbuf_free(&buf);
    bool emptied = set_obj_count(s) == 0;
    set_commit(c, c->argv[1], slot, s, true);
    notify(c, NOTIFY_SET, "spop", c->argv[1]);
    if (emptied) notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
}

#define SRANDMEMBER_SUB_STRATEGY_MUL 3

static void srandmember_count(struct cmd_ctx *c) {
    long long l;
    if (!str_to_ll(c->argv[2].ptr, c->argv[2].len, &l)) {
        reply_error(&c->r, ERR_NOT_INT);
        return;
    }
    if (l < -LLONG_MAX) {
        reply_errorf(&c->r, "ERR value is out of range, value must between %lld and %lld",
                     -LLONG_MAX, LLONG_MAX);
        return;
    }
    struct set_obj *s;
    if (!get_set(c, c->argv[1], LOOKUP_READ, &s)) return;
    if (!s || l == 0) {
        reply_array(&c->r, 0);
        return;
    }
    char buf[SET_BUF_SIZE];
    if (l < 0) {
        /* Repetitions allowed: -count random picks. */
        unsigned long long n = (unsigned long long)-l;
        reply_array(&c->r, (size_t)n);
        while (n--) reply_bulk_slice(&c->r, set_obj_random(s, rk_random(), buf));
        return;
    }
    size_t size = set_obj_count(s);
    if ((unsigned long long)l >= size) {
        reply_members(c, s, false);
        return;
    }
    size_t count = (size_t)l;
    struct set_obj *pick;
    if (count * SRANDMEMBER_SUB_STRATEGY_MUL > size) {
        /* Close to the whole set: copy it and remove random members. */
        pick = set_obj_dup(s);
        struct rbuf tmp = { 0 };
        while (set_obj_count(pick) > count) set_obj_pop(&pick, rk_random(), &tmp);
        rbuf_free(&tmp);
    } else {
        /* Few: add random members until there are enough distinct ones. */
        pick = set_obj_new_intset();
        while (set_obj_count(pick) < count) set_obj_add(&pick, set_obj_random(s, rk_random(), buf));
    }
    reply_members(c, pick, false);
    set_obj_free(pick);
}

static void cmd_srandmember(struct cmd_ctx *c) {
    if (c->argc == 3) {
        srandmember_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    struct set_obj *s;
    if (!get_set(c, c->argv[1], LOOKUP_READ, &s)) return;
    if (!s) {
        reply_null(&c->r);
        return;
    }
    char buf[SET_BUF_SIZE];
    reply_bulk_slice(&c->r, set_obj_random(s, rk_random(), buf));
}

static void cmd_smove(struct cmd_ctx *c) {
    struct slice src = c->argv[1], dst = c->argv[2], m = c->argv[3];
    /* Entries, not slots: the second lookup may delete an expired key. */
    struct kv_entry *se = db_lookup(c, src, LOOKUP_NONE);
    struct kv_entry *de = db_lookup(c, dst, LOOKUP_NONE);
    if (!se) {
        reply_int(&c->r, 0);
        return;
    }
    if (entry_type(se) != OBJ_SET || (de && entry_type(de) != OBJ_SET)) {
        reply_error(&c->r, ERR_WRONGTYPE);
        return;
    }
    if (de == se) {
        reply_int(&c->r, set_obj_contains(entry_obj(se), m));
        return;
    }
    /* Both looked up: the slots now stay put until a change. */
    struct kv_entry **slot;
    struct set_obj *s;
    get_set_slot(c, src, &slot, &s);
    bool moved = set_obj_remove(&s, m), emptied = set_obj_count(s) == 0;
    set_commit(c, src, slot, s, moved);
    if (!moved) {
        reply_int(&c->r, 0);
        return;
    }
    /* Redis's order: the source's events before the destination is created */
    notify(c, NOTIFY_SET, "srem", src);
    if (emptied) notify(c, NOTIFY_GENERIC, "del", src);
    /* The table may have changed: look the destination up again. */
    get_set_slot(c, dst, &slot, &s);
    if (!s) s = set_obj_new(m, 1);
    /* the destination changed only if it did not hold the member yet */
    bool added = set_obj_add(&s, m);
    set_commit(c, dst, slot, s, added);
    if (added) notify(c, NOTIFY_SET, "sadd", dst);
    reply_int(&c->r, 1);
}

/* ---------------------------------------------------------------------------
 * Set algebra
 * ------------------------------------------------------------------------- */

/* The sets at keys[0..n) into sets[] (NULL when absent); false after WRONGTYPE. */
static bool gather(struct cmd_ctx *c, const struct slice *keys, int n, struct set_obj **sets) {
    for (int j = 0; j < n; j++)
        if (!get_set(c, keys[j], LOOKUP_READ, &sets[j])) return false;
    return true;
}

static int by_count(const void *a, const void *b) {
    size_t x = set_obj_count(*(struct set_obj *const *)a), y = set_obj_count(*(struct set_obj *const *)b);
    return x < y ? -1 : x > y;
}

/* Members of the intersection, calling fn on each until it returns false.
 * sets[] is reordered (smallest first). Every set must be present. */
static void intersect(struct set_obj **sets, int n, bool (*fn)(void *ud, struct slice m), void *ud) {
    qsort(sets, (size_t)n, sizeof *sets, by_count);
    struct set_iter it;
    set_iter_init(&it, sets[0]);
    for (struct slice m; set_iter_next(&it, &m);) {
        int j = 1;
        while (j < n && (sets[j] == sets[0] || set_obj_contains(sets[j], m))) j++;
        if (j == n && !fn(ud, m)) return;
    }
}

static bool add_to_set(void *ud, struct slice m) {
    set_obj_add((struct set_obj **)ud, m);
    return true;
}

enum set_op { OP_INTER, OP_UNION, OP_DIFF };
static const char *const store_events[] = {
    [OP_INTER] = "sinterstore", [OP_UNION] = "sunionstore", [OP_DIFF] = "sdiffstore",
};

/* The result of op over sets[0..n) as a new set (never NULL). */
static struct set_obj *compute(enum set_op op, struct set_obj **sets, int n) {
    struct set_obj *res = set_obj_new_intset();
    if (op == OP_INTER) {
        for (int j = 0; j < n; j++)
            if (!sets[j]) return res;
        intersect(sets, n, add_to_set, &res);
    } else if (op == OP_UNION) {
        for (int j = 0; j < n; j++) {
            if (!sets[j]) continue;
            struct set_iter it;
            set_iter_init(&it, sets[j]);
            for (struct slice m; set_iter_next(&it, &m);) set_obj_add(&res, m);
        }
    } else if (sets[0]) {
        struct set_iter it;
        set_iter_init(&it, sets[0]);
        for (struct slice m; set_iter_next(&it, &m);) {
            int j = 1;
            while (j < n && !(sets[j] && (sets[j] == sets[0] || set_obj_contains(sets[j], m)))) j++;
            if (j == n) set_obj_add(&res, m);
        }
    }
    return res;
}

static void set_op_generic(struct cmd_ctx *c, enum set_op op, bool store) {
    int first = store ? 2 : 1, n = c->argc - first;
    struct set_obj *small[16];
    struct set_obj **sets = n <= 16 ? small : rk_malloc((size_t)n * sizeof *sets);
    if (!gather(c, c->argv + first, n, sets)) goto out;
    struct set_obj *res = compute(op, sets, n);
    if (!store) {
        reply_members(c, res, true);
        set_obj_free(res);
    } else if (set_obj_count(res) == 0) {
        set_obj_free(res);
        if (db_delete(c, c->argv[1])) notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
        reply_int(&c->r, 0);
    } else {
        size_t count = set_obj_count(res);
        db_set(c, entry_new_obj(c->argv[1], OBJ_SET, res, NO_EXPIRE));
        notify(c, NOTIFY_SET, store_events[op], c->argv[1]);
        reply_int(&c->r, (long long)count);
    }
out:
    if (sets != small) free(sets);
}

static void cmd_sinter(struct cmd_ctx *c) { set_op_generic(c, OP_INTER, false); }
static void cmd_sunion(struct cmd_ctx *c) { set_op_generic(c, OP_UNION, false); }
static void cmd_sdiff(struct cmd_ctx *c) { set_op_generic(c, OP_DIFF, false); }
static void cmd_sinterstore(struct cmd_ctx *c) { set_op_generic(c, OP_INTER, true); }
static void cmd_sunionstore(struct cmd_ctx *c) { set_op_generic(c, OP_UNION, true); }
static void cmd_sdiffstore(struct cmd_ctx *c) { set_op_generic(c, OP_DIFF, true); }

struct card_state { long long n, limit; };

static bool count_member(void *ud, struct slice m) {
    (void)m;
    struct card_state *st = ud;
    st->n++;
    return st->limit == 0 || st->n < st->limit;
}

#define ERR_NUMKEYS "ERR numkeys should be greater than 0"

static void cmd_sintercard(struct cmd_ctx *c) {
    long long numkeys, limit = 0;
    if (!str_to_ll(c->argv[1].ptr, c->argv[1].len, &numkeys) || numkeys < 1) {
        reply_error(&c->r, ERR_NUMKEYS);
        return;
    }
    if (numkeys > c->argc - 2) {
        reply_error(&c->r, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int i = 2 + (int)numkeys; i < c->argc; i++) {
        if (slice_eq_nocase(c->argv[i], "limit") && i + 1 < c->argc) {
            i++;
            if (!arg_min_or_reply(c, c->argv[i], 0, &limit, "ERR LIMIT can't be negative")) return;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
    }
    int n = (int)numkeys;
    struct set_obj *small[16];
    struct set_obj **sets = n <= 16 ? small : rk_malloc((size_t)n * sizeof *sets);
    if (gather(c, c->argv + 2, n, sets)) {
        struct card_state st = { 0, limit };
        bool empty = false;
        for (int j = 0; j < n; j++) empty |= sets[j] == NULL;
        if (!empty) intersect(sets, n, count_member, &st);
        reply_int(&c->r, st.n);
    }
    if (sets != small) free(sets);
}

/* ---------------------------------------------------------------------------
 * SSCAN
 * ------------------------------------------------------------------------- */


struct scan_state {
    const struct scan_args *args;
    struct rbuf found;        /* members as [len:size_t][bytes] */
    size_t n;
};

static void scan_collect(void *ud, struct slice m) {
    struct scan_state *st = ud;
    if (!scan_matches(st->args, m)) return;
    rbuf_append(&st->found, &m.len, sizeof m.len);
    rbuf_append(&st->found, m.ptr, m.len);
    st->n++;
}

static void cmd_sscan(struct cmd_ctx *c) {
    uint64_t cursor;
    struct set_obj *s;
    struct scan_args sa;
    if (!arg_cursor_or_reply(c, c->argv[2], &cursor)) return;
    if (!get_set(c, c->argv[1], LOOKUP_READ, &s)) return;
    if (!s) {
        reply_scan_head(c, 0, 0);
        return;
    }
    if (!scan_args_or_reply(c, 3, false, &sa)) return;
    struct scan_state st = { .args = &sa };
    uint64_t pos = set_obj_scan(s, scan_pos_of(cursor), (size_t)sa.count, scan_collect, &st);
    reply_scan_head(c, scan_cursor_of(pos), st.n);
    for (size_t off = 0; off < st.found.len;) {
        size_t len;
        memcpy(&len, st.found.buf + off, sizeof len);
        off += sizeof len;
        reply_bulk(&c->r, st.found.buf + off, len);
        off += len;
    }
    rbuf_free(&st.found);
}

/* ---------------------------------------------------------------------------
 * Table
 * ------------------------------------------------------------------------- */

const struct command set_commands[] = {
    CMD("sadd", -3, W | D | F, 1, 1, 1, cmd_sadd, "@write @set @fast", "Add one or more members to a set", "1.0.0", "set", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
        "key:key member:string ..."),
    CMD("srem", -3, W | F, 1, 1, 1, cmd_srem, "@write @set @fast", "Remove one or more members from a set", "1.0.0", "set", "O(N) where N is the number of members to be removed.",
        "key:key member:string ..."),
    CMD("scard", 2, R | F, 1, 1, 1, cmd_scard, "@read @set @fast", "Get the number of members in a set", "1.0.0", "set", "O(1)",
        "key:key"),
    CMD("sismember", 3, R | F, 1, 1, 1, cmd_sismember, "@read @set @fast", "Determine if a given value is a member of a set", "1.0.0", "set", "O(1)",
        "key:key member:string"),
    CMD("smismember", -3, R | F, 1, 1, 1, cmd_smismember, "@read @set @fast", "Returns the membership associated with the given elements for a set", "6.2.0", "set", "O(N) where N is the number of elements being checked for membership",
        "key:key member:string ..."),
    CMD("smembers", 2, R, 1, 1, 1, cmd_smembers, "@read @set @slow", "Get all the members in a set", "1.0.0", "set", "O(N) where N is the set cardinality.",
        "key:key"),
    CMD("spop", -2, W | F, 1, 1, 1, cmd_spop, "@write @set @fast", "Remove and return one or multiple random members from a set", "1.0.0", "set", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.",
        "key:key [count:integer@3.2.0]"),
    CMD("srandmember", -2, R, 1, 1, 1, cmd_srandmember, "@read @set @slow", "Get one or multiple random members from a set", "1.0.0", "set", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.",
        "key:key [count:integer@2.6.0]"),
    CMD("smove", 4, W | F, 1, 2, 1, cmd_smove, "@write @set @fast", "Move a member from one set to another", "1.0.0", "set", "O(1)",
        "source:key destination:key member:string"),
    CMD("sinter", -2, R, 1, -1, 1, cmd_sinter, "@read @set @slow", "Intersect multiple sets", "1.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
        "key:key ..."),
    CMD("sunion", -2, R, 1, -1, 1, cmd_sunion, "@read @set @slow", "Add multiple sets", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets.",
        "key:key ..."),
    CMD("sdiff", -2, R, 1, -1, 1, cmd_sdiff, "@read @set @slow", "Subtract multiple sets", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets.",
        "key:key ..."),
    { "sintercard", -3, R | CMD_MOVABLEKEYS, 0, 0, 0, cmd_sintercard, keys_numkeys_first, "@read @set @slow", "Intersect multiple sets and return the cardinality of the result", "7.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
        "numkeys:integer key:key ... [limit:integer=LIMIT]", NULL, NULL },
    CMD("sinterstore", -3, W | D, 1, -1, 1, cmd_sinterstore, "@write @set @slow", "Intersect multiple sets and store the resulting set in a key", "1.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
        "destination:key key:key ..."),
    CMD("sunionstore", -3, W | D, 1, -1, 1, cmd_sunionstore, "@write @set @slow", "Add multiple sets and store the resulting set in a key", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets.",
        "destination:key key:key ..."),
    CMD("sdiffstore", -3, W | D, 1, -1, 1, cmd_sdiffstore, "@write @set @slow", "Subtract multiple sets and store the resulting set in a key", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets.",
        "destination:key key:key ..."),
    CMD("sscan", -3, R, 1, 1, 1, cmd_sscan, "@read @set @slow", "Incrementally iterate Set elements", "2.8.0", "set", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
        "key:key cursor:integer [pattern:pattern=MATCH] [count:integer=COUNT]"),
    CMD_END
};
