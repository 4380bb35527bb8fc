/*
 * Sorted set commands with Redis 7.0's replies and errors (t_zset.c): ZADD
 * ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK ZREVRANK ZCOUNT ZLEXCOUNT, the
 * ZRANGE family and ZRANGESTORE, ZPOPMIN ZPOPMAX ZMPOP, the range deletes,
 * ZRANDMEMBER, ZSCAN, and the algebra ZUNION ZINTER ZDIFF (and *STORE)
 * ZINTERCARD.
 *
 * The value object is zset_obj.h's: its pointer may change on every write,
 * so a writer takes it out of its entry, changes it, and stores it back
 * with zset_commit(), which also creates the key on the first member and
 * deletes it when the last one goes.
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
#include "ringkv/hashmap.h"
#include "ringkv/set_obj.h"
#include "ringkv/util.h"
#include "ringkv/zset_obj.h"

/* ZRANDMEMBER with a negative count builds its whole reply in memory:
 * past this many elements answer "ERR value is out of range". */

#define ERR_MINMAX_FLOAT "ERR min or max is not a float"
#define ERR_MINMAX_LEX   "ERR min or max not valid string range item"
#define ERR_NAN_SCORE    "ERR resulting score is not a number (NaN)"

/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */



static inline struct zset_obj *entry_zset(const struct kv_entry *e) {
    return (struct zset_obj *)entry_obj(e);
}

/* The zset at key for reading: false after WRONGTYPE; *z NULL when absent. */
static bool zset_read(struct cmd_ctx *c, struct slice key, struct zset_obj **z) {
    bool wrong;
    struct kv_entry **slot = lookup_typed_or_reply(c, key, OBJ_ZSET, LOOKUP_READ, &wrong);
    if (wrong) return false;
    *z = slot ? entry_zset(*slot) : NULL;
    return true;
}

/* The zset at key for writing; *slot NULL when absent. False after WRONGTYPE. */
static bool zset_write(struct cmd_ctx *c, struct slice key, struct kv_entry ***slot, struct zset_obj **z) {
    return obj_write(c, key, OBJ_ZSET, slot, (void **)z);
}

/* Store the possibly-moved object back (z is then the entry's: do not use
 * it); create or delete the key as needed. A zset left with members may
 * serve clients blocked on the key. Also the way out of a write that changed
 * nothing, which folds a small set back into its entry. */
static void zset_commit(struct cmd_ctx *c, struct slice key, struct kv_entry **slot, struct zset_obj *z,
                        bool changed) {
    size_t len = zset_len(z);
    obj_commit(c, key, OBJ_ZSET, slot, z, len, changed);
    if (len && changed) db_signal_ready(c, key);
}

static bool double_or_reply(struct cmd_ctx *c, struct slice s, double *d, const char *msg) {
    if (str_to_d(s.ptr, s.len, d)) return true;
    reply_error(&c->r, msg ? msg : ERR_NOT_FLOAT);
    return false;
}

/* An array of n members, with scores: flat in RESP2, [member, score] pairs in RESP3. */
static void reply_elems_len(struct cmd_ctx *c, size_t n, bool withscores) {
    reply_array(&c->r, withscores && c->r.resp == 2 ? n * 2 : n);
}

static void reply_elem(struct cmd_ctx *c, struct slice m, double score, bool withscores) {
    if (withscores && c->r.resp > 2)
        reply_array(&c->r, 2);
    reply_bulk_slice(&c->r, m);
    if (withscores)
        reply_double(&c->r, score);
}

/* ---------------------------------------------------------------------------
 * ZADD ZINCRBY
 * ------------------------------------------------------------------------- */

static void zadd_generic(struct cmd_ctx *c, int flags) {
    int scoreidx = 2;
    bool ch = false;

    for (; scoreidx < c->argc; scoreidx++) {
        struct slice o = c->argv[scoreidx];
        if (slice_eq_nocase(o, "nx")) flags |= ZADD_IN_NX;
        else if (slice_eq_nocase(o, "xx")) flags |= ZADD_IN_XX;
        else if (slice_eq_nocase(o, "ch")) ch = true;
        else if (slice_eq_nocase(o, "incr")) flags |= ZADD_IN_INCR;
        else if (slice_eq_nocase(o, "gt")) flags |= ZADD_IN_GT;
        else if (slice_eq_nocase(o, "lt")) flags |= ZADD_IN_LT;
        else break;
    }
    bool incr = flags & ZADD_IN_INCR, nx = flags & ZADD_IN_NX, xx = flags & ZADD_IN_XX;
    bool gt = flags & ZADD_IN_GT, lt = flags & ZADD_IN_LT;
    int elements = c->argc - scoreidx;
    if (elements % 2 || !elements) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    elements /= 2;
    if (nx && xx) {
        reply_error(&c->r, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        reply_error(&c->r, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && elements > 1) {
        reply_error(&c->r, "ERR INCR option supports a single increment-element pair");
        return;
    }
    double small[16];
    double *scores = elements <= 16 ? small : rk_malloc((size_t)elements * sizeof *scores);
    for (int j = 0; j < elements; j++) {
        if (!double_or_reply(c, c->argv[scoreidx + j * 2], &scores[j], NULL))
            goto out;
    }

    struct kv_entry **slot;
    struct zset_obj *z;
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    if (!zset_write(c, c->argv[1], &slot, &z))
        goto out;
    if (!z) {
        if (xx) goto reply;
        long long maxe = CONFIG_GET(zset_max_listpack_entries), maxv = CONFIG_GET(zset_max_listpack_value);
        if (maxe == 0 || maxv < (long long)c->argv[scoreidx + 1].len)
            z = zset_new_skiplist();
        else
            z = zset_new();
    }
    for (int j = 0; j < elements; j++) {
        int out;
        double newscore;
        score = scores[j];
        if (!zset_add(&z, c->argv[scoreidx + j * 2 + 1], score, flags, &out, &newscore)) {
            zset_commit(c, c->argv[1], slot, z, added || updated);
            reply_error(&c->r, ERR_NAN_SCORE);
            goto out;
        }
        if (out & ZADD_OUT_ADDED) added++;
        if (out & ZADD_OUT_UPDATED) updated++;
        if (!(out & ZADD_OUT_NOP)) processed++;
        score = newscore;
    }
    zset_commit(c, c->argv[1], slot, z, added || updated);
    if (added || updated) notify(c, NOTIFY_ZSET, incr ? "zincr" : "zadd", c->argv[1]);
reply:
    if (incr) {
        if (processed) reply_double(&c->r, score);
        else reply_null(&c->r);
    } else {
        reply_int(&c->r, ch ? added + updated : added);
    }
out:
    if (scores != small) free(scores);
}

static void cmd_zadd(struct cmd_ctx *c) { zadd_generic(c, 0); }
static void cmd_zincrby(struct cmd_ctx *c) { zadd_generic(c, ZADD_IN_INCR); }

/* ---------------------------------------------------------------------------
 * Single members
 * ------------------------------------------------------------------------- */

static void cmd_zrem(struct cmd_ctx *c) {
    struct kv_entry **slot;
    struct zset_obj *z;
    if (!zset_write(c, c->argv[1], &slot, &z))
        return;
    if (!z) {
        reply_int(&c->r, 0);
        return;
    }
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) {
        deleted += zset_delete(&z, c->argv[j]);
        if (zset_len(z) == 0)
            break;
    }
    bool emptied = zset_len(z) == 0;
    zset_commit(c, c->argv[1], slot, z, deleted > 0);
    if (deleted) notify(c, NOTIFY_ZSET, "zrem", c->argv[1]);
    if (emptied) notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
    reply_int(&c->r, deleted);
}

static void cmd_zcard(struct cmd_ctx *c) {
    struct zset_obj *z;
    if (zset_read(c, c->argv[1], &z))
        reply_int(&c->r, z ? (long long)zset_len(z) : 0);
}

static void cmd_zscore(struct cmd_ctx *c) {
    struct zset_obj *z;
    double s;
    if (!zset_read(c, c->argv[1], &z))
        return;
    if (z && zset_score(z, c->argv[2], &s))
        reply_double(&c->r, s);
    else
        reply_null(&c->r);
}

static void cmd_zmscore(struct cmd_ctx *c) {
    struct zset_obj *z;
    double s;
    if (!zset_read(c, c->argv[1], &z))
        return;
    reply_array(&c->r, (size_t)c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        if (z && zset_score(z, c->argv[j], &s))
            reply_double(&c->r, s);
        else
            reply_null(&c->r);
    }
}

static void rank_generic(struct cmd_ctx *c, bool reverse) {
    struct zset_obj *z;
    if (!zset_read(c, c->argv[1], &z))
        return;
    size_t r = z ? zset_rank(z, c->argv[2], reverse, NULL) : ZSL_NONE;
    if (r == ZSL_NONE)
        reply_null(&c->r);
    else
        reply_int(&c->r, (long long)r);
}

static void cmd_zrank(struct cmd_ctx *c) { rank_generic(c, false); }
static void cmd_zrevrank(struct cmd_ctx *c) { rank_generic(c, true); }

static void cmd_zcount(struct cmd_ctx *c) {
    struct zrange_spec r;
    struct zset_obj *z;
    if (!zrange_parse(c->argv[2], c->argv[3], &r)) {
        reply_error(&c->r, ERR_MINMAX_FLOAT);
        return;
    }
    if (zset_read(c, c->argv[1], &z))
        reply_int(&c->r, z ? (long long)zset_count_score(z, &r) : 0);
}

static void cmd_zlexcount(struct cmd_ctx *c) {
    struct zlex_spec r;
    struct zset_obj *z;
    if (!zlex_parse(c->argv[2], c->argv[3], &r)) {
        reply_error(&c->r, ERR_MINMAX_LEX);
        return;
    }
    if (zset_read(c, c->argv[1], &z))
        reply_int(&c->r, z ? (long long)zset_count_lex(z, &r) : 0);
}

/* ---------------------------------------------------------------------------
 * The ZRANGE family (Redis's zrangeGenericCommand)
 * ------------------------------------------------------------------------- */

enum { RANGE_AUTO, RANGE_RANK, RANGE_SCORE, RANGE_LEX };
enum { DIR_AUTO, DIR_FORWARD, DIR_REVERSE };

struct zrange_req {
    int type;
    bool rev;
    long long start, end;        /* RANGE_RANK */
    struct zrange_spec sr;       /* RANGE_SCORE */
    struct zlex_spec lr;         /* RANGE_LEX */
    long long offset, limit;     /* limit -1: no limit */
};

typedef void (*zrange_fn)(void *ud, struct slice member, double score);

/* Call fn for each member of the range, in reply order; returns how many. */
static size_t zrange_walk(const struct zset_obj *z, const struct zrange_req *q, zrange_fn fn, void *ud) {
    struct zset_it it;
    size_t n = 0;
    if (q->type == RANGE_RANK) {
        long long llen = (long long)zset_len(z), start = q->start, end = q->end;
        if (start < 0) start = llen + start;
        if (end < 0) end = llen + end;
        if (start < 0) start = 0;
        if (start > end || start >= llen) return 0;
        if (end >= llen) end = llen - 1;
        long long rangelen = end - start + 1;
        zset_it_rank(&it, z, (size_t)(q->rev ? llen - 1 - start : start));
        for (; rangelen-- > 0 && it.valid; zset_it_move(&it, q->rev), n++)
            if (fn) fn(ud, zset_it_member(&it), zset_it_score_of(&it));
        return n;
    }
    if (q->offset < 0) return 0;
    if (q->type == RANGE_SCORE)
        zset_it_score(&it, z, &q->sr, q->rev);
    else
        zset_it_lex(&it, z, &q->lr, q->rev);
    for (long long off = q->offset; it.valid && off > 0; off--)
        zset_it_move(&it, q->rev);
    /* As Redis, only the far end is checked from here on (it matters for
     * lex ranges over members with different scores). */
    for (long long limit = q->limit; it.valid && limit != 0; limit--, n++) {
        if (q->type == RANGE_SCORE) {
            double s = zset_it_score_of(&it);
            if (q->rev ? !(q->sr.minex ? s > q->sr.min : s >= q->sr.min)
                       : !(q->sr.maxex ? s < q->sr.max : s <= q->sr.max))
                break;
        } else if (q->rev ? !zset_lex_gte_min(&q->lr, zset_it_member(&it))
                          : !zset_lex_lte_max(&q->lr, zset_it_member(&it))) {
            break;
        }
        if (fn) fn(ud, zset_it_member(&it), zset_it_score_of(&it));
        zset_it_move(&it, q->rev);
    }
    return n;
}

struct emit_ctx {
    struct cmd_ctx *c;
    bool withscores;
    struct zset_obj *dst;
};

static void emit_reply(void *ud, struct slice m, double score) {
    struct emit_ctx *e = ud;
    reply_elem(e->c, m, score, e->withscores);
}

static void emit_store(void *ud, struct slice m, double score) {
    struct emit_ctx *e = ud;
    int out;
    zset_add(&e->dst, m, score, 0, &out, NULL);
}

/* Store the result zset at dst (or delete dst when empty); reply its size.
 * event: the command's keyspace event for a stored result. */
static void store_result(struct cmd_ctx *c, struct slice dst, struct zset_obj *res, const char *event) {
    size_t n = res ? zset_len(res) : 0;
    if (n) {
        db_set(c, entry_new_obj(dst, OBJ_ZSET, res, NO_EXPIRE));
        notify(c, NOTIFY_ZSET, event, dst);
    } else {
        zset_free(res);
        if (db_delete(c, dst)) notify(c, NOTIFY_GENERIC, "del", dst);
    }
    reply_int(&c->r, (long long)n);
}

static void zrange_generic(struct cmd_ctx *c, int key_idx, bool store, int type, int dir) {
    struct slice key = c->argv[key_idx];
    int minidx = key_idx + 1, maxidx = key_idx + 2;
    struct zrange_req q = { .offset = 0, .limit = -1 };
    bool withscores = false;

    for (int j = key_idx + 3; j < c->argc; j++) {
        int leftargs = c->argc - j - 1;
        if (!store && slice_eq_nocase(c->argv[j], "withscores")) {
            withscores = true;
        } else if (slice_eq_nocase(c->argv[j], "limit") && leftargs >= 2) {
            if (!arg_ll_or_reply(c, c->argv[j + 1], &q.offset) ||
                !arg_ll_or_reply(c, c->argv[j + 2], &q.limit))
                return;
            j += 2;
        } else if (dir == DIR_AUTO && slice_eq_nocase(c->argv[j], "rev")) {
            dir = DIR_REVERSE;
        } else if (type == RANGE_AUTO && slice_eq_nocase(c->argv[j], "bylex")) {
            type = RANGE_LEX;
        } else if (type == RANGE_AUTO && slice_eq_nocase(c->argv[j], "byscore")) {
            type = RANGE_SCORE;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
    }
    if (dir == DIR_AUTO) dir = DIR_FORWARD;
    if (type == RANGE_AUTO) type = RANGE_RANK;
    if (q.limit != -1 && type == RANGE_RANK) {
        reply_error(&c->r, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && type == RANGE_LEX) {
        reply_error(&c->r, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    if (dir == DIR_REVERSE && type != RANGE_RANK) {
        int t = minidx; minidx = maxidx; maxidx = t;
    }
    q.type = type;
    q.rev = dir == DIR_REVERSE;
    if (type == RANGE_RANK) {
        if (!arg_ll_or_reply(c, c->argv[minidx], &q.start) || !arg_ll_or_reply(c, c->argv[maxidx], &q.end))
            return;
    } else if (type == RANGE_SCORE) {
        if (!zrange_parse(c->argv[minidx], c->argv[maxidx], &q.sr)) {
            reply_error(&c->r, ERR_MINMAX_FLOAT);
            return;
        }
    } else if (!zlex_parse(c->argv[minidx], c->argv[maxidx], &q.lr)) {
        reply_error(&c->r, ERR_MINMAX_LEX);
        return;
    }

    struct zset_obj *z;
    if (!zset_read(c, key, &z))
        return;
    struct emit_ctx e = { c, withscores, NULL };
    if (store) {
        if (z) {
            e.dst = zset_new();
            zrange_walk(z, &q, emit_store, &e);
        }
        store_result(c, c->argv[1], e.dst, "zrangestore");
        return;
    }
    if (!z) {
        reply_array(&c->r, 0);
        return;
    }
    reply_elems_len(c, zrange_walk(z, &q, NULL, NULL), withscores);
    zrange_walk(z, &q, emit_reply, &e);
}

static void cmd_zrange(struct cmd_ctx *c) { zrange_generic(c, 1, false, RANGE_AUTO, DIR_AUTO); }
static void cmd_zrangestore(struct cmd_ctx *c) { zrange_generic(c, 2, true, RANGE_AUTO, DIR_AUTO); }
static void cmd_zrevrange(struct cmd_ctx *c) { zrange_generic(c, 1, false, RANGE_RANK, DIR_REVERSE); }
static void cmd_zrangebyscore(struct cmd_ctx *c) { zrange_generic(c, 1, false, RANGE_SCORE, DIR_FORWARD); }
static void cmd_zrevrangebyscore(struct cmd_ctx *c) { zrange_generic(c, 1, false, RANGE_SCORE, DIR_REVERSE); }
static void cmd_zrangebylex(struct cmd_ctx *c) { zrange_generic(c, 1, false, RANGE_LEX, DIR_FORWARD); }
static void cmd_zrevrangebylex(struct cmd_ctx *c) { zrange_generic(c, 1, false, RANGE_LEX, DIR_REVERSE); }

/* ---------------------------------------------------------------------------
 * Range deletes
 * ------------------------------------------------------------------------- */

static void zremrange_generic(struct cmd_ctx *c, int type) {
    long long start = 0, end = 0;
    struct zrange_spec sr;
    struct zlex_spec lr;

    if (type == RANGE_RANK) {
        if (!arg_ll_or_reply(c, c->argv[2], &start) || !arg_ll_or_reply(c, c->argv[3], &end))
            return;
    } else if (type == RANGE_SCORE) {
        if (!zrange_parse(c->argv[2], c->argv[3], &sr)) {
            reply_error(&c->r, ERR_MINMAX_FLOAT);
            return;
        }
    } else if (!zlex_parse(c->argv[2], c->argv[3], &lr)) {
        reply_error(&c->r, ERR_MINMAX_LEX);
        return;
    }
    struct kv_entry **slot;
    struct zset_obj *z;
    if (!zset_write(c, c->argv[1], &slot, &z))
        return;
    if (!z) {
        reply_int(&c->r, 0);
        return;
    }
    size_t deleted;
    if (type == RANGE_RANK) {
        long long llen = (long long)zset_len(z);
        if (start < 0) start = llen + start;
        if (end < 0) end = llen + end;
        if (start < 0) start = 0;
        if (start > end || start >= llen) {
            zset_commit(c, c->argv[1], slot, z, false);
            reply_int(&c->r, 0);
            return;
        }
        if (end >= llen) end = llen - 1;
        deleted = zset_delete_range_rank(&z, (size_t)start, (size_t)end);
    } else if (type == RANGE_SCORE) {
        deleted = zset_delete_range_score(&z, &sr);
    } else {
        deleted = zset_delete_range_lex(&z, &lr);
    }
    bool emptied = zset_len(z) == 0;
    zset_commit(c, c->argv[1], slot, z, deleted > 0);
    if (deleted) {
        static const char *const events[] = {
            [RANGE_RANK] = "zremrangebyrank", [RANGE_SCORE] = "zremrangebyscore", [RANGE_LEX] = "zremrangebylex",
        };
        notify(c, NOTIFY_ZSET, events[type], c->argv[1]);
        if (emptied) notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
    }
    reply_int(&c->r, (long long)deleted);
}

static void cmd_zremrangebyrank(struct cmd_ctx *c) { zremrange_generic(c, RANGE_RANK); }
static void cmd_zremrangebyscore(struct cmd_ctx *c) { zremrange_generic(c, RANGE_SCORE); }
static void cmd_zremrangebylex(struct cmd_ctx *c) { zremrange_generic(c, RANGE_LEX); }

/* ---------------------------------------------------------------------------
 * ZPOPMIN ZPOPMAX ZMPOP (Redis's genericZpopCommand)
 * ------------------------------------------------------------------------- */

/* After a pop was stored: its event, then "del" if the sorted set went. */
static void notify_zpopped(struct cmd_ctx *c, struct slice key, bool max, bool emptied) {
    notify(c, NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", key);
    if (emptied) notify(c, NOTIFY_GENERIC, "del", key);
}

static void zpop_generic(struct cmd_ctx *c, const struct slice *keys, int nkeys, bool max, bool emitkey,
                         long long count, bool nested, bool nil_when_empty) {
    struct kv_entry **slot = NULL;
    struct zset_obj *z = NULL;
    struct slice key = { NULL, 0 };

    for (int i = 0; i < nkeys; i++) {
        if (waiter_skips_key(c, keys[i], OBJ_ZSET)) continue;
        if (!zset_write(c, keys[i], &slot, &z))
            return;
        if (z) {
            key = keys[i];
            break;
        }
    }
    if (!z) {
        if (nil_when_empty) reply_null_array(&c->r);
        else reply_array(&c->r, 0);
        return;
    }
    if (count == 0) {
        reply_array(&c->r, 0);
        return;
    }
    if (count == -1) count = 1;
    size_t llen = zset_len(z);
    size_t n = (unsigned long long)count > llen ? llen : (size_t)count;
    if (!emitkey) {
        reply_array(&c->r, nested ? n : n * 2);
    } else {
        reply_array(&c->r, 2);
        reply_bulk_slice(&c->r, key);
        reply_array(&c->r, n);
    }
    for (size_t i = 0; i < n; i++) {
        struct zset_it it;
        size_t rank = max ? zset_len(z) - 1 : 0;
        zset_it_rank(&it, z, rank);
        if (nested) reply_array(&c->r, 2);
        reply_bulk_slice(&c->r, zset_it_member(&it));
        reply_double(&c->r, zset_it_score_of(&it));
        zset_delete_range_rank(&z, rank, rank);
    }
    bool emptied = zset_len(z) == 0;
    zset_commit(c, key, slot, z, true);
    notify_zpopped(c, key, max, emptied);
}

static void zpopminmax(struct cmd_ctx *c, bool max) {
    long long count = -1;
    if (c->argc > 3) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3 && !arg_min_or_reply(c, c->argv[2], 0, &count, ERR_POSITIVE))
        return;
    zpop_generic(c, &c->argv[1], 1, max, false, count, c->r.resp > 2 && count != -1, false);
}

static void cmd_zpopmin(struct cmd_ctx *c) { zpopminmax(c, false); }
static void cmd_zpopmax(struct cmd_ctx *c) { zpopminmax(c, true); }

/* [B]ZMPOP from the numkeys argument at `at`. False, with nothing replied,
 * only when nonblock is false and every sorted set was empty. */
static bool zmpop_at(struct cmd_ctx *c, int at, bool nonblock) {
    long long numkeys, count = -1;
    bool max;
    if (!arg_min_or_reply(c, c->argv[at], 1, &numkeys, "ERR numkeys should be greater than 0"))
        return true;
    if (numkeys >= c->argc - at) {     /* also keeps where_idx from overflowing */
        reply_error(&c->r, ERR_SYNTAX);
        return true;
    }
    long long where_idx = at + numkeys + 1;
    if (where_idx >= c->argc) {
        reply_error(&c->r, ERR_SYNTAX);
        return true;
    }
    if (slice_eq_nocase(c->argv[where_idx], "min")) {
        max = false;
    } else if (slice_eq_nocase(c->argv[where_idx], "max")) {
        max = true;
    } else {
        reply_error(&c->r, ERR_SYNTAX);
        return true;
    }
    for (int j = (int)where_idx + 1; j < c->argc; j++) {
        int moreargs = c->argc - 1 - j;
        if (count == -1 && slice_eq_nocase(c->argv[j], "count") && moreargs) {
            j++;
            if (!arg_min_or_reply(c, c->argv[j], 1, &count, "ERR count should be greater than 0"))
                return true;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return true;
        }
    }
    if (count == -1) count = 1;
    if (!nonblock) {
        bool any = false;
        for (int j = at + 1; j < where_idx && !any; j++) {
            struct zset_obj *z;
            if (!zset_read(c, c->argv[j], &z)) return true;
            any = z != NULL;
        }
        if (!any) return false;
    }
    zpop_generic(c, &c->argv[at + 1], (int)numkeys, max, true, count, true, true);
    return true;
}

static void cmd_zmpop(struct cmd_ctx *c) { zmpop_at(c, 1, true); }

/* ---------------------------------------------------------------------------
 * BZPOPMIN BZPOPMAX BZMPOP: the non-blocking form, or wait on the keys
 * (dispatch.c runs them with all keys held, again on a write or timeout).
 * ------------------------------------------------------------------------- */

static void bzpopminmax(struct cmd_ctx *c, bool max) {
    long long timeout;
    if (!arg_timeout_or_reply(c, c->argv[c->argc - 1], &timeout)) return;
    for (int j = 1; j < c->argc - 1; j++) {
        struct kv_entry **slot;
        struct zset_obj *z;
        if (waiter_skips_key(c, c->argv[j], OBJ_ZSET)) continue;
        if (!zset_write(c, c->argv[j], &slot, &z)) return;
        if (!z) continue;
        /* [key, member, score], flat, as Redis 7.0 */
        struct zset_it it;
        size_t rank = max ? zset_len(z) - 1 : 0;
        zset_it_rank(&it, z, rank);
        reply_array(&c->r, 3);
        reply_bulk_slice(&c->r, c->argv[j]);
        reply_bulk_slice(&c->r, zset_it_member(&it));
        reply_double(&c->r, zset_it_score_of(&it));
        zset_delete_range_rank(&z, rank, rank);
        bool emptied = zset_len(z) == 0;
        zset_commit(c, c->argv[j], slot, z, true);
        notify_zpopped(c, c->argv[j], max, emptied);
        return;
    }
    ctx_block_or_timeout(c, 1, c->argc - 1, timeout);
}

static void cmd_bzpopmin(struct cmd_ctx *c) { bzpopminmax(c, false); }
static void cmd_bzpopmax(struct cmd_ctx *c) { bzpopminmax(c, true); }

/* BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count] */
static void cmd_bzmpop(struct cmd_ctx *c) {
    long long timeout, numkeys;
    if (!arg_timeout_or_reply(c, c->argv[1], &timeout)) return;
    if (zmpop_at(c, 2, false)) return;
    str_to_ll(c->argv[2].ptr, c->argv[2].len, &numkeys);   /* checked by zmpop_at */
    ctx_block_or_timeout(c, 3, 3 + (int)numkeys, timeout);
}

/* ---------------------------------------------------------------------------
 * ZRANDMEMBER
 * ------------------------------------------------------------------------- */

/* Positions of every member of a listpack zset, so picks cost O(1). */
static struct zset_it *lp_positions(const struct zset_obj *z, size_t size) {
    struct zset_it *all = rk_malloc(size * sizeof *all);
    struct zset_it it;
    size_t i = 0;
    for (zset_it_rank(&it, z, 0); it.valid && i < size; zset_it_next(&it))
        all[i++] = it;
    return all;
}

/* Redis's zrandmemberWithCountCommand(). */
static void zrandmember_count(struct cmd_ctx *c, long long count, bool withscores) {
    struct zset_obj *z;
    if (!zset_read(c, c->argv[1], &z))
        return;
    if (!z || count == 0) {
        reply_array(&c->r, 0);
        return;
    }
    size_t size = zset_len(z);
    bool lp = zset_is_listpack(z);
    struct zset_it it, *all = NULL;

    /* Repeats allowed (negative count), or one member: sample every time. */
    if (count < 0 || count == 1) {
        long long n = count < 0 ? -count : count;
        if (n > RAND_MAX_REPEAT) {
            reply_error(&c->r, "ERR value is out of range");
            return;
        }
        reply_elems_len(c, (size_t)n, withscores);
        if (lp) all = lp_positions(z, size);
        while (n--) {
            size_t r = (size_t)(rk_random() % size);
            if (lp) it = all[r];
            else zset_it_rank(&it, z, r);
            reply_elem(c, zset_it_member(&it), zset_it_score_of(&it), withscores);
        }
        free(all);
        return;
    }
    /* The whole set, from the highest as Redis's zuiNext() walks. */
    if ((unsigned long long)count >= size) {
        reply_elems_len(c, size, withscores);
        for (zset_it_rank(&it, z, size - 1); it.valid; zset_it_prev(&it))
            reply_elem(c, zset_it_member(&it), zset_it_score_of(&it), withscores);
        return;
    }
    size_t want = (size_t)count;
    reply_elems_len(c, want, withscores);
    if (lp || want * 3 > size) {
        /* A large share (or a small set): partial Fisher-Yates over all of
         * them; size < 3 * count bounds the memory by the reply. */
        size_t *ranks = rk_malloc(size * sizeof *ranks);
        if (lp) all = lp_positions(z, size);
        for (size_t i = 0; i < size; i++) ranks[i] = i;
        for (size_t i = 0; i < want; i++) {
            size_t j = i + (size_t)(rk_random() % (size - i));
            size_t t = ranks[i]; ranks[i] = ranks[j]; ranks[j] = t;
            if (lp) it = all[ranks[i]];
            else zset_it_rank(&it, z, ranks[i]);
            reply_elem(c, zset_it_member(&it), zset_it_score_of(&it), withscores);
        }
        free(ranks);
        free(all);
        return;
    }
    /* A small share of a big set: random ranks, skipping repeats. */
    struct hashmap *seen = hashmap_new(false);
    for (size_t got = 0; got < want;) {
        size_t r = (size_t)(rk_random() % size);
        if (!hashmap_set(seen, (struct slice){ (const char *)&r, sizeof r }, (struct slice){ NULL, 0 }))
            continue;
        zset_it_rank(&it, z, r);
        reply_elem(c, zset_it_member(&it), zset_it_score_of(&it), withscores);
        got++;
    }
    hashmap_free(seen);
}

static void cmd_zrandmember(struct cmd_ctx *c) {
    if (c->argc >= 3) {
        long long count;
        bool withscores;
        if (!arg_rand_count_or_reply(c, "withscores", &count, &withscores)) return;
        zrandmember_count(c, count, withscores);
        return;
    }
    struct zset_obj *z;
    if (!zset_read(c, c->argv[1], &z))
        return;
    if (!z) {
        reply_null(&c->r);
        return;
    }
    struct zset_it it;
    zset_it_rank(&it, z, (size_t)(rk_random() % zset_len(z)));
    reply_bulk_slice(&c->r, zset_it_member(&it));
}

/* ---------------------------------------------------------------------------
 * ZSCAN
 * ------------------------------------------------------------------------- */

/* Nodes a skiplist scan step visits, collected as pointers in an rbuf. */
static void scan_visit(void *ud, const struct zsl_node *n) {
    rbuf_append(ud, &n, sizeof n);
}

static uint64_t scan_step(const void *zs, uint64_t cursor, size_t slots, struct rbuf *found) {
    return zsl_scan(zs, cursor, slots, scan_visit, found);
}

static void reply_score_text(struct cmd_ctx *c, double s) {
    char buf[64];
    reply_bulk(&c->r, buf, (size_t)d_to_str(buf, sizeof buf, s));
}

static void cmd_zscan(struct cmd_ctx *c) {
    uint64_t cursor;
    struct scan_args sa;
    struct zset_obj *z;

    if (!arg_cursor_or_reply(c, c->argv[2], &cursor) || !zset_read(c, c->argv[1], &z))
        return;
    if (!z) {
        reply_scan_head(c, 0, 0);
        return;
    }
    if (!scan_args_or_reply(c, 3, false, &sa))
        return;

    struct zskiplist *zs = zset_zsl(z);
    if (!zs) {
        /* A listpack is returned whole, with cursor 0, as Redis does. The
         * matches keep their positions: seeking each rank again would walk
         * the listpack once per match. */
        size_t n = zset_len(z), matched = 0;
        struct zset_it *all = lp_positions(z, n);
        for (size_t i = 0; i < n; i++)
            if (scan_matches(&sa, zset_it_member(&all[i]))) all[matched++] = all[i];
        reply_scan_head(c, 0, matched * 2);
        for (size_t i = 0; i < matched; i++) {
            reply_bulk_slice(&c->r, zset_it_member(&all[i]));
            reply_score_text(c, zset_it_score_of(&all[i]));
        }
        free(all);
        return;
    }

    struct rbuf found = { 0 };
    cursor = scan_gather(&sa, zs, scan_step, cursor, &found);

    const struct zsl_node **nodes = (const struct zsl_node **)found.buf;
    size_t n = found.len / sizeof *nodes, matched = 0;
    for (size_t i = 0; i < n; i++)
        if (scan_matches(&sa, zsl_node_member(nodes[i]))) nodes[matched++] = nodes[i];
    reply_scan_head(c, cursor, matched * 2);
    for (size_t i = 0; i < matched; i++) {
        reply_bulk_slice(&c->r, zsl_node_member(nodes[i]));
        reply_score_text(c, nodes[i]->score);
    }
    rbuf_free(&found);
}

/* ---------------------------------------------------------------------------
 * ZUNION ZINTER ZDIFF (and *STORE) ZINTERCARD
 * (Redis's zunionInterDiffGenericCommand; sets count as scores of 1)
 * ------------------------------------------------------------------------- */

enum { OP_UNION, OP_INTER, OP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

struct zsrc {
    const struct zset_obj *z;    /* one of z and s, or neither (absent key) */
    const struct set_obj *s;
    double weight;
};

static size_t src_len(const struct zsrc *s) {
    return s->z ? zset_len(s->z) : s->s ? set_obj_count(s->s) : 0;
}

static bool src_find(const struct zsrc *s, struct slice m, double *score) {
    if (s->z) return zset_score(s->z, m, score);
    if (s->s && set_obj_contains(s->s, m)) {
        *score = 1.0;
        return true;
    }
    return false;
}

/* Walk every member of a source. */
struct src_iter {
    const struct zsrc *src;
    struct zset_it zi;
    struct set_iter si;
};

static void src_iter_init(struct src_iter *it, const struct zsrc *s) {
    it->src = s;
    if (s->z) zset_it_rank(&it->zi, s->z, 0);
    else if (s->s) set_iter_init(&it->si, s->s);
}

static bool src_iter_next(struct src_iter *it, struct slice *m, double *score) {
    if (it->src->z) {
        if (!it->zi.valid) return false;
        *m = zset_it_member(&it->zi);
        *score = zset_it_score_of(&it->zi);
        zset_it_next(&it->zi);   /* the slice stays valid: a node, the listpack, or zi.buf */
        return true;
    }
    if (!it->src->s) return false;
    *score = 1.0;
    return set_iter_next(&it->si, m);
}

static void aggregate(double *target, double val, int agg) {
    if (agg == AGG_SUM) {
        *target = *target + val;
        if (isnan(*target)) *target = 0.0;
    } else if (agg == AGG_MIN) {
        *target = val < *target ? val : *target;
    } else {
        *target = val > *target ? val : *target;
    }
}

static int cmp_src_len(const void *a, const void *b) {
    size_t x = src_len(a), y = src_len(b);
    return x < y ? -1 : x > y ? 1 : 0;
}

static void add_or_aggregate(struct zskiplist *acc, struct slice m, double score, int agg) {
    struct zsl_node *n = zsl_find(acc, m);
    if (!n) {
        zsl_insert(acc, m, score);
        return;
    }
    double t = n->score;
    aggregate(&t, score, agg);
    zsl_update_score(acc, n, t);   /* even when equal: 0 and -0 differ */
}

/* numkeys at argv[numkeys_idx]; store: *STORE (destination argv[1]); card: ZINTERCARD. */
static void zsetop_generic(struct cmd_ctx *c, int numkeys_idx, int op, bool store, bool card) {
    long long setnum;
    if (!arg_ll_or_reply(c, c->argv[numkeys_idx], &setnum))
        return;
    if (setnum < 1) {
        reply_errorf(&c->r, "ERR at least 1 input key is needed for '%s' command", c->cmd->name);
        return;
    }
    if (setnum > c->argc - numkeys_idx - 1) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    int n = (int)setnum;
    struct zsrc small[16];
    struct zsrc *src = n <= 16 ? small : rk_malloc((size_t)n * sizeof *src);
    struct zskiplist *acc = NULL;

    for (int i = 0; i < n; i++) {
        struct kv_entry *e = db_lookup(c, c->argv[numkeys_idx + 1 + i], store ? LOOKUP_NONE : LOOKUP_READ);
        src[i] = (struct zsrc){ NULL, NULL, 1.0 };
        if (!e) continue;
        if (entry_type(e) == OBJ_ZSET) src[i].z = entry_zset(e);
        else if (entry_type(e) == OBJ_SET) src[i].s = (const struct set_obj *)entry_obj(e);
        else {
            reply_error(&c->r, ERR_WRONGTYPE);
            goto out;
        }
    }

    int agg = AGG_SUM;
    bool withscores = false;
    long long limit = 0;
    int j = numkeys_idx + 1 + n, remaining = c->argc - j;
    while (remaining) {
        if (op != OP_DIFF && !card && remaining >= n + 1 && slice_eq_nocase(c->argv[j], "weights")) {
            j++; remaining--;
            for (int i = 0; i < n; i++, j++, remaining--)
                if (!double_or_reply(c, c->argv[j], &src[i].weight, "ERR weight value is not a float"))
                    goto out;
        } else if (op != OP_DIFF && !card && remaining >= 2 && slice_eq_nocase(c->argv[j], "aggregate")) {
            j++; remaining--;
            if (slice_eq_nocase(c->argv[j], "sum")) agg = AGG_SUM;
            else if (slice_eq_nocase(c->argv[j], "min")) agg = AGG_MIN;
            else if (slice_eq_nocase(c->argv[j], "max")) agg = AGG_MAX;
            else {
                reply_error(&c->r, ERR_SYNTAX);
                goto out;
            }
            j++; remaining--;
        } else if (remaining >= 1 && !store && !card && slice_eq_nocase(c->argv[j], "withscores")) {
            j++; remaining--;
            withscores = true;
        } else if (card && remaining >= 2 && slice_eq_nocase(c->argv[j], "limit")) {
            j++; remaining--;
            if (!arg_min_or_reply(c, c->argv[j], 0, &limit, "ERR LIMIT can't be negative"))
                goto out;
            j++; remaining--;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            goto out;
        }
    }

    if (op != OP_DIFF) {
        /* smallest first, as Redis (stable, so equal sizes keep their order) */
        for (int a = 1; a < n; a++) {
            struct zsrc t = src[a];
            int b = a;
            while (b > 0 && cmp_src_len(&src[b - 1], &t) > 0) { src[b] = src[b - 1]; b--; }
            src[b] = t;
        }
    }

    long long cardinality = 0;
    acc = zsl_new();
    struct src_iter it;
    struct slice m;
    double score, value;
    if (op == OP_INTER) {
        if (src_len(&src[0]) > 0) {
            double raw;
            for (src_iter_init(&it, &src[0]); src_iter_next(&it, &m, &raw);) {
                score = src[0].weight * raw;
                if (isnan(score)) score = 0;
                int k;
                for (k = 1; k < n; k++) {
                    if ((src[k].z && src[k].z == src[0].z) || (src[k].s && src[k].s == src[0].s)) {
                        value = raw * src[k].weight;
                        aggregate(&score, value, agg);
                    } else if (src_find(&src[k], m, &value)) {
                        value *= src[k].weight;
                        aggregate(&score, value, agg);
                    } else {
                        break;
                    }
                }
                if (k == n) {
                    if (card) {
                        cardinality++;
                        if (limit && cardinality >= limit) break;
                    } else {
                        zsl_insert(acc, m, score);
                    }
                }
            }
        }
    } else if (op == OP_UNION) {
        for (int i = 0; i < n; i++) {
            for (src_iter_init(&it, &src[i]); src_iter_next(&it, &m, &score);) {
                score = src[i].weight * score;
                if (isnan(score)) score = 0;
                add_or_aggregate(acc, m, score, agg);
            }
        }
    } else {
        for (src_iter_init(&it, &src[0]); src_iter_next(&it, &m, &score);) {
            int k;
            for (k = 1; k < n; k++)
                if (src_find(&src[k], m, &value)) break;
            if (k == n) zsl_insert(acc, m, score);
        }
    }

    if (card) {
        reply_int(&c->r, cardinality);
    } else if (store) {
        struct zset_obj *res = NULL;
        if (zsl_count(acc)) {
            res = zset_from_zsl(acc);
            acc = NULL;
            zset_convert_if_small(&res);
        }
        static const char *const events[] = {
            [OP_UNION] = "zunionstore", [OP_INTER] = "zinterstore", [OP_DIFF] = "zdiffstore",
        };
        store_result(c, c->argv[1], res, events[op]);
    } else {
        reply_elems_len(c, zsl_count(acc), withscores);
        for (const struct zsl_node *x = zsl_first(acc); x; x = zsl_next(x))
            reply_elem(c, zsl_node_member(x), x->score, withscores);
    }
out:
    if (acc) zsl_free(acc);
    if (src != small) free(src);
}

static void cmd_zunionstore(struct cmd_ctx *c) { zsetop_generic(c, 2, OP_UNION, true, false); }
static void cmd_zinterstore(struct cmd_ctx *c) { zsetop_generic(c, 2, OP_INTER, true, false); }
static void cmd_zdiffstore(struct cmd_ctx *c) { zsetop_generic(c, 2, OP_DIFF, true, false); }
static void cmd_zunion(struct cmd_ctx *c) { zsetop_generic(c, 1, OP_UNION, false, false); }
static void cmd_zinter(struct cmd_ctx *c) { zsetop_generic(c, 1, OP_INTER, false, false); }
static void cmd_zdiff(struct cmd_ctx *c) { zsetop_generic(c, 1, OP_DIFF, false, false); }
static void cmd_zintercard(struct cmd_ctx *c) { zsetop_generic(c, 1, OP_INTER, false, true); }

/* ---------------------------------------------------------------------------
 * Command table (Redis 7.0's COMMAND INFO / COMMAND DOCS)
 * ------------------------------------------------------------------------- */

const struct command zset_commands[] = {
    CMD("zadd", -4, W | D | F, 1, 1, 1, cmd_zadd, "@write @sortedset @fast", "Add one or more members to a sorted set, or update its score if it already exists", "1.2.0", "sorted-set", "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
        "key:key [condition:oneof@3.0.2(nx:pure-token=NX xx:pure-token=XX)] [comparison:oneof@6.2.0(gt:pure-token=GT lt:pure-token=LT)] [change:pure-token=CH@3.0.2] [increment:pure-token=INCR@3.0.2] score_member:block(score:double member:string) ..."),
    CMD("zcard", 2, R | F, 1, 1, 1, cmd_zcard, "@read @sortedset @fast", "Get the number of members in a sorted set", "1.2.0", "sorted-set", "O(1)",
        "key:key"),
    CMD("zscore", 3, R | F, 1, 1, 1, cmd_zscore, "@read @sortedset @fast", "Get the score associated with the given member in a sorted set", "1.2.0", "sorted-set", "O(1)",
        "key:key member:string"),
    CMD("zmscore", -3, R | F, 1, 1, 1, cmd_zmscore, "@read @sortedset @fast", "Get the score associated with the given members in a sorted set", "6.2.0", "sorted-set", "O(N) where N is the number of members being requested.",
        "key:key member:string ..."),
    CMD("zincrby", 4, W | D | F, 1, 1, 1, cmd_zincrby, "@write @sortedset @fast", "Increment the score of a member in a sorted set", "1.2.0", "sorted-set", "O(log(N)) where N is the number of elements in the sorted set.",
        "key:key increment:integer member:string"),
    CMD("zrem", -3, W | F, 1, 1, 1, cmd_zrem, "@write @sortedset @fast", "Remove one or more members from a sorted set", "1.2.0", "sorted-set", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.",
        "key:key member:string ..."),
    CMD("zrank", 3, R | F, 1, 1, 1, cmd_zrank, "@read @sortedset @fast", "Determine the index of a member in a sorted set", "2.0.0", "sorted-set", "O(log(N))",
        "key:key member:string"),
    CMD("zrevrank", 3, R | F, 1, 1, 1, cmd_zrevrank, "@read @sortedset @fast", "Determine the index of a member in a sorted set, with scores ordered from high to low", "2.0.0", "sorted-set", "O(log(N))",
        "key:key member:string"),
    CMD("zcount", 4, R | F, 1, 1, 1, cmd_zcount, "@read @sortedset @fast", "Count the members in a sorted set with scores within the given values", "2.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set.",
        "key:key min:double max:double"),
    CMD("zrange", -4, R, 1, 1, 1, cmd_zrange, "@read @sortedset @slow", "Return a range of members in a sorted set", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
        "key:key start:string stop:string [sortby:oneof@6.2.0(byscore:pure-token=BYSCORE bylex:pure-token=BYLEX)] [rev:pure-token=REV@6.2.0] [offset_count:block=LIMIT@6.2.0(offset:integer count:integer)] [withscores:pure-token=WITHSCORES]"),
    CMD("zrangebyscore", -4, R, 1, 1, 1, cmd_zrangebyscore, "@read @sortedset @slow", "Return a range of members in a sorted set, by score", "1.0.5", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
        "key:key min:double max:double [withscores:pure-token=WITHSCORES@2.0.0] [offset_count:block=LIMIT(offset:integer count:integer)]"),
    CMD("zrevrangebyscore", -4, R, 1, 1, 1, cmd_zrevrangebyscore, "@read @sortedset @slow", "Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
        "key:key max:double min:double [withscores:pure-token=WITHSCORES] [offset_count:block=LIMIT(offset:integer count:integer)]"),
    CMD("zrevrange", -4, R, 1, 1, 1, cmd_zrevrange, "@read @sortedset @slow", "Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
        "key:key start:integer stop:integer [withscores:pure-token=WITHSCORES]"),
    CMD("zrangebylex", -4, R, 1, 1, 1, cmd_zrangebylex, "@read @sortedset @slow", "Return a range of members in a sorted set, by lexicographical range", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
        "key:key min:string max:string [offset_count:block=LIMIT(offset:integer count:integer)]"),
    CMD("zrevrangebylex", -4, R, 1, 1, 1, cmd_zrevrangebylex, "@read @sortedset @slow", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
        "key:key max:string min:string [offset_count:block=LIMIT(offset:integer count:integer)]"),
    CMD("zlexcount", 4, R | F, 1, 1, 1, cmd_zlexcount, "@read @sortedset @fast", "Count the number of members in a sorted set between a given lexicographical range", "2.8.9", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set.",
        "key:key min:string max:string"),
    CMD("zpopmin", -2, W | F, 1, 1, 1, cmd_zpopmin, "@write @sortedset @fast", "Remove and return members with the lowest scores in a sorted set", "5.0.0", "sorted-set", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
        "key:key [count:integer]"),
    CMD("zpopmax", -2, W | F, 1, 1, 1, cmd_zpopmax, "@write @sortedset @fast", "Remove and return members with the highest scores in a sorted set", "5.0.0", "sorted-set", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
        "key:key [count:integer]"),
    CMD("zremrangebyrank", 4, W, 1, 1, 1, cmd_zremrangebyrank, "@write @sortedset @slow", "Remove all members in a sorted set within the given indexes", "2.0.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
        "key:key start:integer stop:integer"),
    CMD("zremrangebyscore", 4, W, 1, 1, 1, cmd_zremrangebyscore, "@write @sortedset @slow", "Remove all members in a sorted set within the given scores", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
        "key:key min:double max:double"),
    CMD("zremrangebylex", 4, W, 1, 1, 1, cmd_zremrangebylex, "@write @sortedset @slow", "Remove all members in a sorted set between the given lexicographical range", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
        "key:key min:string max:string"),
    CMD("zrandmember", -2, R, 1, 1, 1, cmd_zrandmember, "@read @sortedset @slow", "Get one or multiple random elements from a sorted set", "6.2.0", "sorted-set", "O(N) where N is the number of elements returned",
        "key:key [options:block(count:integer [withscores:pure-token=WITHSCORES])]"),
    CMD("zscan", -3, R, 1, 1, 1, cmd_zscan, "@read @sortedset @slow", "Incrementally iterate sorted sets elements and associated scores", "2.8.0", "sorted-set", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
        "key:key cursor:integer [pattern:pattern=MATCH] [count:integer=COUNT]"),
    CMD("zrangestore", -5, W | D, 1, 2, 1, cmd_zrangestore, "@write @sortedset @slow", "Store a range of members from sorted set into another key", "6.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.",
        "dst:key src:key min:string max:string [sortby:oneof(byscore:pure-token=BYSCORE bylex:pure-token=BYLEX)] [rev:pure-token=REV] [offset_count:block=LIMIT(offset:integer count:integer)]"),
    CMD_KEYS("zunionstore", -4, W | D, 1, 1, 1, cmd_zunionstore, keys_dest_numkeys, "@write @sortedset @slow", "Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", "sorted-set", "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
        "destination:key numkeys:integer key:key ... [weight:integer=WEIGHTS ...] [aggregate:oneof=AGGREGATE(sum:pure-token=SUM min:pure-token=MIN max:pure-token=MAX)]"),
    CMD_KEYS("zinterstore", -4, W | D, 1, 1, 1, cmd_zinterstore, keys_dest_numkeys, "@write @sortedset @slow", "Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", "sorted-set", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
        "destination:key numkeys:integer key:key ... [weight:integer=WEIGHTS ...] [aggregate:oneof=AGGREGATE(sum:pure-token=SUM min:pure-token=MIN max:pure-token=MAX)]"),
    CMD_KEYS("zdiffstore", -4, W | D, 1, 1, 1, cmd_zdiffstore, keys_dest_numkeys, "@write @sortedset @slow", "Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0", "sorted-set", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
        "destination:key numkeys:integer key:key ..."),
    CMD_KEYS("zunion", -3, R, 0, 0, 0, cmd_zunion, keys_numkeys_first, "@read @sortedset @slow", "Add multiple sorted sets", "6.2.0", "sorted-set", "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
        "numkeys:integer key:key ... [weight:integer=WEIGHTS ...] [aggregate:oneof=AGGREGATE(sum:pure-token=SUM min:pure-token=MIN max:pure-token=MAX)] [withscores:pure-token=WITHSCORES]"),
    CMD_KEYS("zinter", -3, R, 0, 0, 0, cmd_zinter, keys_numkeys_first, "@read @sortedset @slow", "Intersect multiple sorted sets", "6.2.0", "sorted-set", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
        "numkeys:integer key:key ... [weight:integer=WEIGHTS ...] [aggregate:oneof=AGGREGATE(sum:pure-token=SUM min:pure-token=MIN max:pure-token=MAX)] [withscores:pure-token=WITHSCORES]"),
    CMD_KEYS("zdiff", -3, R, 0, 0, 0, cmd_zdiff, keys_numkeys_first, "@read @sortedset @slow", "Subtract multiple sorted sets", "6.2.0", "sorted-set", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
        "numkeys:integer key:key ... [withscores:pure-token=WITHSCORES]"),
    CMD_KEYS("zintercard", -3, R, 0, 0, 0, cmd_zintercard, keys_numkeys_first, "@read @sortedset @slow", "Intersect multiple sorted sets and return the cardinality of the result", "7.0.0", "sorted-set", "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.",
        "numkeys:integer key:key ... [limit:integer=LIMIT]"),
    CMD_KEYS("zmpop", -4, W, 0, 0, 0, cmd_zmpop, keys_numkeys_first, "@write @sortedset @slow", "Remove and return members with scores in a sorted set", "7.0.0", "sorted-set", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
        "numkeys:integer key:key ... where:oneof(min:pure-token=MIN max:pure-token=MAX) [count:integer=COUNT]"),
    CMD("bzpopmin", -3, W | F | CMD_NOSCRIPT | CMD_BLOCKING, 1, -2, 1, cmd_bzpopmin, "@write @sortedset @fast @blocking",
        "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available",
        "5.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set.", "key:key ... timeout:double"),
    CMD("bzpopmax", -3, W | F | CMD_NOSCRIPT | CMD_BLOCKING, 1, -2, 1, cmd_bzpopmax, "@write @sortedset @fast @blocking",
        "Remove and return the member with the highest score from one or more sorted sets, or block until one is available",
        "5.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set.", "key:key ... timeout:double"),
    CMD_KEYS("bzmpop", -5, W | CMD_BLOCKING, 0, 0, 0, cmd_bzmpop, keys_numkeys_second, "@write @sortedset @slow @blocking",
        "Remove and return members with scores in a sorted set or block until one is available", "7.0.0", "sorted-set",
        "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
        "timeout:double numkeys:integer key:key ... where:oneof(min:pure-token=MIN max:pure-token=MAX) [count:integer=COUNT]"),
    CMD_END
};
