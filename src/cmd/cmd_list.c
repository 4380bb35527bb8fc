/*
 * List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET
 * LREM LTRIM LINSERT LPOS LMOVE RPOPLPUSH LMPOP, as Redis 7's t_list.c.
 *
 * A list is a list_obj (list_obj.h): a quicklist plus the encoding name.
 * Every command that adds to a list calls list_grew() once it is done and
 * every command that removes calls list_shrank(), so OBJECT ENCODING follows
 * Redis's listTypeTryConversion. A list that becomes empty is deleted at once.
 *
 * Arguments are checked in the order Redis checks them, since that decides
 * which error a bad request gets (LINDEX looks the key up before parsing
 * the index, LRANGE parses first, ...). Values are replied straight from the
 * quicklist's nodes; a multi-element pop replies first and deletes the range
 * afterwards in one go. Only LMOVE copies an element, because it pushes it
 * into a list that may be the same one.
 *
 * Multi-key commands (LMOVE, RPOPLPUSH, LMPOP) just look up each key through
 * db.h: across shards the dispatcher runs them as transactions. LMPOP's keys
 * follow numkeys, so it has CMD_MOVABLEKEYS and a keys_fn here.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "ringkv/notify.h"
#include "ringkv/command.h"
#include "ringkv/command_def.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/list_obj.h"
#include "ringkv/util.h"

#define ERR_INDEX_RANGE      "ERR index out of range"
#define ERR_RANK_ZERO        "ERR RANK can't be zero: use 1 to start from the first match, " \
    "2 from the second ... or use negative to start from the end of the list"

/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */

/* The list at key (NULL when absent) in *out; false after WRONGTYPE. */
static bool get_list(struct cmd_ctx *c, struct slice key, unsigned flags, struct list_obj **out) {
    bool wrong;
    struct kv_entry **slot = lookup_typed_or_reply(c, key, OBJ_LIST, flags, &wrong);
    if (wrong) return false;
    *out = slot ? entry_obj(*slot) : NULL;
    return true;
}

/* The list at key for writing (NULL when absent); false after WRONGTYPE.
 * Finish with list_commit, also when nothing changed (obj_write). */
static bool list_write(struct cmd_ctx *c, struct slice key, struct kv_entry ***slot, struct list_obj **out) {
    return obj_write(c, key, OBJ_LIST, slot, (void **)out);
}

static void list_commit(struct cmd_ctx *c, struct slice key, struct kv_entry **slot, struct list_obj *l,
                        bool changed) {
    obj_commit(c, key, OBJ_LIST, slot, l, list_len(l), changed);
}

/* After elements were removed: convert if small enough, store or delete. */
static void commit_removal(struct cmd_ctx *c, struct slice key, struct kv_entry **slot, struct list_obj *l,
                           bool changed) {
    list_shrank(&l);
    list_commit(c, key, slot, l, changed);
}

/* Redis's listElementsRemoved: the pop's event, then "del" if the list went. */
static void notify_popped(struct cmd_ctx *c, struct slice key, bool tail, bool emptied) {
    notify(c, NOTIFY_LIST, tail ? "rpop" : "lpop", key);
    if (emptied) notify(c, NOTIFY_GENERIC, "del", key);
}

/* An empty string read from a listpack may have a NULL pointer, which must
 * not reach memcpy (reply.c, listpack.c). */
static inline struct slice nonnull(struct slice s) {
    if (!s.ptr) s.ptr = "";
    return s;
}

static void reply_value(struct reply *r, const struct lp_value *v) {
    if (v->is_int) reply_bulk_ll(r, v->ival);
    else reply_bulk_slice(r, nonnull(v->str));
}

/* LEFT / RIGHT (getListPositionFromObjectOrReply); *tail for RIGHT. */
static bool where_or_reply(struct cmd_ctx *c, struct slice s, bool *tail) {
    if (slice_eq_nocase(s, "left")) *tail = false;
    else if (slice_eq_nocase(s, "right")) *tail = true;
    else {
        reply_error(&c->r, ERR_SYNTAX);
        return false;
    }
    return true;
}

/* Reply count elements from one end (in pop order) and delete them. */
static void pop_range_reply(struct cmd_ctx *c, struct list_obj **l, bool tail, long long count) {
    size_t n = list_len(*l);
    if ((unsigned long long)count < n) n = (size_t)count;
    reply_array(&c->r, n);
    struct list_iter it;
    struct lp_value v;
    list_iter_init(&it, *l, tail ? -1 : 0, tail);
    for (size_t i = 0; i < n && list_iter_next(&it, &v); i++) reply_value(&c->r, &v);
    list_del_range(l, tail ? -(long long)n : 0, n);
}

/* Reply the first (or last) element and delete it. */
static void pop_one_reply(struct cmd_ctx *c, struct list_obj **l, bool tail) {
    struct lp_value v;
    list_index(*l, tail ? -1 : 0, &v);
    reply_value(&c->r, &v);
    list_del_range(l, tail ? -1 : 0, 1);
}

/* ---------------------------------------------------------------------------
 * Push and pop
 * ------------------------------------------------------------------------- */

static void push_generic(struct cmd_ctx *c, bool tail, bool xx) {
    struct kv_entry **slot;
    struct list_obj *l;
    if (!list_write(c, c->argv[1], &slot, &l)) return;
    if (!l) {
        if (xx) {
            reply_int(&c->r, 0);
            return;
        }
        l = list_new();
    }
    for (int j = 2; j < c->argc; j++) list_push(&l, c->argv[j], tail);
    list_grew(&l);
    size_t len = list_len(l);
    list_commit(c, c->argv[1], slot, l, true);
    notify(c, NOTIFY_LIST, tail ? "rpush" : "lpush", c->argv[1]);
    reply_int(&c->r, (long long)len);
    db_signal_ready(c, c->argv[1]);
}

static void cmd_lpush(struct cmd_ctx *c) { push_generic(c, false, false); }
static void cmd_rpush(struct cmd_ctx *c) { push_generic(c, true, false); }
static void cmd_lpushx(struct cmd_ctx *c) { push_generic(c, false, true); }
static void cmd_rpushx(struct cmd_ctx *c) { push_generic(c, true, true); }

static void pop_generic(struct cmd_ctx *c, bool tail) {
    bool hascount = c->argc == 3;
    long long count = 0;
    struct list_obj *l;

    if (c->argc > 3) {
        reply_wrong_arity(&c->r, c->cmd->name);
        return;
    }
    /* getPositiveLongFromObjectOrReply: one message for both errors */
    if (hascount && !arg_min_or_reply(c, c->argv[2], 0, &count, ERR_POSITIVE)) return;
    struct kv_entry **slot;
    if (!list_write(c, c->argv[1], &slot, &l)) return;
    if (!l) {
        if (hascount) reply_null_array(&c->r);
        else reply_null(&c->r);
        return;
    }
    if (hascount && !count) reply_array(&c->r, 0);
    else if (hascount) pop_range_reply(c, &l, tail, count);
    else pop_one_reply(c, &l, tail);
    bool popped = !hascount || count, emptied = list_len(l) == 0;
    commit_removal(c, c->argv[1], slot, l, popped);
    if (popped) notify_popped(c, c->argv[1], tail, emptied);
}

static void cmd_lpop(struct cmd_ctx *c) { pop_generic(c, false); }
static void cmd_rpop(struct cmd_ctx *c) { pop_generic(c, true); }

/* ---------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------- */

static void cmd_llen(struct cmd_ctx *c) {
    struct list_obj *l;
    if (!get_list(c, c->argv[1], LOOKUP_READ, &l)) return;
    reply_int(&c->r, l ? (long long)list_len(l) : 0);
}

static void cmd_lrange(struct cmd_ctx *c) {
    long long start, end;
    struct list_obj *l;
    if (!arg_ll_or_reply(c, c->argv[2], &start) || !arg_ll_or_reply(c, c->argv[3], &end)) return;
    if (!get_list(c, c->argv[1], LOOKUP_READ, &l)) return;
    if (!l) {
        reply_array(&c->r, 0);
        return;
    }
    long long llen = (long long)list_len(l);
    if (start < 0) start = llen + start;
    if (end < 0) end = llen + end;
    if (start < 0) start = 0;
    if (start > end || start >= llen) {
        reply_array(&c->r, 0);
        return;
    }
    if (end >= llen) end = llen - 1;
    size_t n = (size_t)(end - start + 1);
    reply_array(&c->r, n);
    struct list_iter it;
    struct lp_value v;
    list_iter_init(&it, l, start, false);
    for (size_t i = 0; i < n && list_iter_next(&it, &v); i++) reply_value(&c->r, &v);
}

static void cmd_lindex(struct cmd_ctx *c) {
    long long index;
    struct list_obj *l;
    if (!get_list(c, c->argv[1], LOOKUP_READ, &l)) return;
    if (!l) {
        reply_null(&c->r);
        return;
    }
    if (!arg_ll_or_reply(c, c->argv[2], &index)) return;
    struct lp_value v;
    if (list_index(l, index, &v)) reply_value(&c->r, &v);
    else reply_null(&c->r);
}

static void cmd_lpos(struct cmd_ctx *c) {
    struct slice ele = c->argv[2];
    long long rank = 1, count = -1, maxlen = 0;   /* count -1: no COUNT option */
    struct list_obj *l;

    for (int j = 3; j < c->argc; j++) {
        struct slice opt = c->argv[j];
        bool moreargs = j < c->argc - 1;
        if (slice_eq_nocase(opt, "rank") && moreargs) {
            if (!arg_ll_or_reply(c, c->argv[++j], &rank)) return;
            if (rank == 0) {
                reply_error(&c->r, ERR_RANK_ZERO);
                return;
            }
        } else if (slice_eq_nocase(opt, "count") && moreargs) {
            if (!arg_min_or_reply(c, c->argv[++j], 0, &count, "ERR COUNT can't be negative")) return;
        } else if (slice_eq_nocase(opt, "maxlen") && moreargs) {
            if (!arg_min_or_reply(c, c->argv[++j], 0, &maxlen, "ERR MAXLEN can't be negative")) return;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
    }
    bool reverse = rank < 0;
    if (rank == LLONG_MIN) {
        /* Redis 7.0 negates it into itself: every match counts from the
         * first one on, and COUNT never stops the search */
        rank = 1;
        if (count > 0) count = 0;
    } else if (reverse) {
        rank = -rank;
    }

    if (!get_list(c, c->argv[1], LOOKUP_READ, &l)) return;
    if (!l) {
        if (count != -1) reply_array(&c->r, 0);
        else reply_null(&c->r);
        return;
    }

    long long llen = (long long)list_len(l);
    long long index = 0, matches = 0, found = -1;
    long long *idx = NULL;
    size_t nidx = 0, cap = 0;
    struct list_iter it;
    struct lp_value v;
    list_iter_init(&it, l, reverse ? -1 : 0, reverse);
    while ((maxlen == 0 || index < maxlen) && list_iter_next(&it, &v)) {
        if (lp_value_eq(&v, ele)) {
            matches++;
            long long at = reverse ? llen - index - 1 : index;
            if (matches >= rank) {
                if (count == -1) {
                    found = at;
                    break;
                }
                if (nidx == cap) {
                    cap = cap ? cap * 2 : 16;
                    idx = rk_realloc(idx, cap * sizeof *idx);
                }
                idx[nidx++] = at;
                if (count && matches - rank + 1 >= count) break;
            }
        }
        index++;
    }
    if (count != -1) {
        reply_array(&c->r, nidx);
        for (size_t i = 0; i < nidx; i++) reply_int(&c->r, idx[i]);
        free(idx);
    } else if (found != -1) {
        reply_int(&c->r, found);
    } else {
        reply_null(&c->r);
    }
}

/* ---------------------------------------------------------------------------
 * Changing in place
 * ------------------------------------------------------------------------- */

static void cmd_lset(struct cmd_ctx *c) {
    long long index;
    struct kv_entry **slot;
    struct list_obj *l;
    bool changed = false;
    if (!list_write(c, c->argv[1], &slot, &l)) return;
    if (!l) {
        reply_error(&c->r, ERR_NO_SUCH_KEY);
        return;
    }
    if (arg_ll_or_reply(c, c->argv[2], &index)) {
        if (list_replace(&l, index, c->argv[3])) {
            changed = true;
            list_grew(&l);
            list_shrank(&l);
            reply_ok(&c->r);
        } else {
            reply_error(&c->r, ERR_INDEX_RANGE);
        }
    }
    list_commit(c, c->argv[1], slot, l, changed);
    if (changed) notify(c, NOTIFY_LIST, "lset", c->argv[1]);
}

static void cmd_lrem(struct cmd_ctx *c) {
    long long count;
    struct list_obj *l;
    struct kv_entry **slot;
    if (!arg_ll_or_reply(c, c->argv[2], &count)) return;
    if (!list_write(c, c->argv[1], &slot, &l)) return;
    if (!l) {
        reply_int(&c->r, 0);
        return;
    }
    size_t removed = list_remove(&l, c->argv[3], count);
    bool emptied = list_len(l) == 0;
    commit_removal(c, c->argv[1], slot, l, removed > 0);
    if (removed) notify(c, NOTIFY_LIST, "lrem", c->argv[1]);
    if (emptied) notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
    reply_int(&c->r, (long long)removed);
}

static void cmd_ltrim(struct cmd_ctx *c) {
    long long start, end;
    struct list_obj *l;
    struct kv_entry **slot;
    if (!arg_ll_or_reply(c, c->argv[2], &start) || !arg_ll_or_reply(c, c->argv[3], &end)) return;
    if (!list_write(c, c->argv[1], &slot, &l)) return;
    if (!l) {
        reply_ok(&c->r);
        return;
    }
    long long llen = (long long)list_len(l), ltrim, rtrim;
    if (start < 0) start = llen + start;
    if (end < 0) end = llen + end;
    if (start < 0) start = 0;
    if (start > end || start >= llen) {
        ltrim = llen;
        rtrim = 0;
    } else {
        if (end >= llen) end = llen - 1;
        ltrim = start;
        rtrim = llen - end - 1;
    }
    list_del_range(&l, 0, (size_t)ltrim);
    list_del_range(&l, -rtrim, (size_t)rtrim);
    bool emptied = list_len(l) == 0;
    commit_removal(c, c->argv[1], slot, l, true);   /* Redis signals every LTRIM of a list */
    notify(c, NOTIFY_LIST, "ltrim", c->argv[1]);
    if (emptied) notify(c, NOTIFY_GENERIC, "del", c->argv[1]);
    reply_ok(&c->r);
}

static void cmd_linsert(struct cmd_ctx *c) {
    bool after;
    struct list_obj *l;
    if (slice_eq_nocase(c->argv[2], "after")) after = true;
    else if (slice_eq_nocase(c->argv[2], "before")) after = false;
    else {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    struct kv_entry **slot;
    if (!list_write(c, c->argv[1], &slot, &l)) return;
    if (!l) {
        reply_int(&c->r, 0);
        return;
    }
    long long reply = -1;
    if (list_insert(&l, c->argv[3], c->argv[4], after)) {
        list_grew(&l);
        reply = (long long)list_len(l);
    }
    list_commit(c, c->argv[1], slot, l, reply != -1);
    if (reply != -1) notify(c, NOTIFY_LIST, "linsert", c->argv[1]);
    reply_int(&c->r, reply);
}

/* ---------------------------------------------------------------------------
 * Moving between lists
 * ------------------------------------------------------------------------- */

/* LMOVE from a list to itself. Redis pops and pushes on one object, so the
 * list is never empty in between and the key, with its TTL, stays: rotate
 * in place rather than pop (which would delete a one-element list) and push
 * into a new key. */
static void list_rotate(struct cmd_ctx *c, struct slice key, bool from_tail, bool to_tail) {
    struct kv_entry **slot;
    struct list_obj *l;
    struct rbuf buf = { 0 };
    struct lp_value v;
    char num[LP_INTBUF_SIZE];

    list_write(c, key, &slot, &l);
    list_pop(&l, from_tail, &v, &buf);
    struct slice val = nonnull(lp_value_str(&v, num));   /* in buf or num, not in l */
    list_push(&l, val, to_tail);
    list_grew(&l);      /* Redis 7.2's order: the push's conversion, */
    list_shrank(&l);    /* then the pop's */
    list_commit(c, key, slot, l, true);
    notify(c, NOTIFY_LIST, to_tail ? "rpush" : "lpush", key);   /* Redis's order: the push first */
    notify(c, NOTIFY_LIST, from_tail ? "rpop" : "lpop", key);
    reply_bulk_slice(&c->r, val);
    rbuf_free(&buf);
}

static void lmove_generic(struct cmd_ctx *c, bool from_tail, bool to_tail) {
    struct slice skey = c->argv[1], dkey = c->argv[2];
    struct kv_entry **slot;
    struct list_obj *src, *dst;

    /* Types first (Redis's order of errors), before anything changes;
     * lists are never stored empty. */
    if (!get_list(c, skey, LOOKUP_NONE, &src)) return;
    if (!src) {
        reply_null(&c->r);
        return;
    }
    if (slice_eq(skey, dkey)) {
        list_rotate(c, skey, from_tail, to_tail);
        return;
    }
    if (!get_list(c, dkey, LOOKUP_NONE, &dst)) return;

    /* The element is copied out, and src stored, before dst is looked up
     * for writing. */
    struct rbuf buf = { 0 };
    struct lp_value v;
    char num[LP_INTBUF_SIZE];
    list_write(c, skey, &slot, &src);
    list_pop(&src, from_tail, &v, &buf);
    struct slice val = nonnull(lp_value_str(&v, num));
    bool emptied = list_len(src) == 0;
    commit_removal(c, skey, slot, src, true);
    list_write(c, dkey, &slot, &dst);
    if (!dst) dst = list_new();
    list_push(&dst, val, to_tail);
    list_grew(&dst);
    list_commit(c, dkey, slot, dst, true);
    /* Redis's order: the push (after "new"), then the pop and "del" */
    notify(c, NOTIFY_LIST, to_tail ? "rpush" : "lpush", dkey);
    notify_popped(c, skey, from_tail, emptied);
    reply_bulk_slice(&c->r, val);
    rbuf_free(&buf);
    db_signal_ready(c, dkey);
}

static void cmd_lmove(struct cmd_ctx *c) {
    bool from_tail, to_tail;
    if (!where_or_reply(c, c->argv[3], &from_tail) || !where_or_reply(c, c->argv[4], &to_tail)) return;
    lmove_generic(c, from_tail, to_tail);
}

static void cmd_rpoplpush(struct cmd_ctx *c) { lmove_generic(c, true, false); }

/* [B]LMPOP from the numkeys argument at `at`: numkeys key [key ...]
 * LEFT|RIGHT [COUNT count]. True if it replied (served, or an error); false
 * when every list was empty, with *nkeys set. */
static bool lmpop_at(struct cmd_ctx *c, int at, int *nkeys) {
    long long numkeys, count = -1;
    bool tail;

    if (!arg_min_or_reply(c, c->argv[at], 1, &numkeys, "ERR numkeys should be greater than 0")) return true;
    if (numkeys > c->argc - at - 2) {   /* no room for the direction after the keys */
        reply_error(&c->r, ERR_SYNTAX);
        return true;
    }
    int where_idx = at + 1 + (int)numkeys;
    if (!where_or_reply(c, c->argv[where_idx], &tail)) return true;
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (count == -1 && slice_eq_nocase(c->argv[j], "count") && j < c->argc - 1) {
            if (!arg_min_or_reply(c, c->argv[++j], 1, &count, "ERR count should be greater than 0"))
                return true;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return true;
        }
    }
    if (count == -1) count = 1;

    for (int j = at + 1; j < where_idx; j++) {
        struct kv_entry **slot;
        struct list_obj *l;
        if (waiter_skips_key(c, c->argv[j], OBJ_LIST)) continue;
        if (!list_write(c, c->argv[j], &slot, &l)) return true;
        if (!l) continue;
        reply_array(&c->r, 2);
        reply_bulk_slice(&c->r, c->argv[j]);
        pop_range_reply(c, &l, tail, count);
        bool emptied = list_len(l) == 0;
        commit_removal(c, c->argv[j], slot, l, true);
        notify_popped(c, c->argv[j], tail, emptied);
        return true;
    }
    *nkeys = (int)numkeys;
    return false;
}

static void cmd_lmpop(struct cmd_ctx *c) {
    int nkeys;
    if (!lmpop_at(c, 1, &nkeys)) reply_null_array(&c->r);
}

/* ---------------------------------------------------------------------------
 * Blocking pops: the non-blocking form, or else wait on the keys
 * (dispatch.c runs these with all keys held and runs them again when a key
 * is pushed to or the timeout passes).
 * ------------------------------------------------------------------------- */

static void bpop_generic(struct cmd_ctx *c, bool tail) {
    long long timeout;
    if (!arg_timeout_or_reply(c, c->argv[c->argc - 1], &timeout)) return;
    for (int j = 1; j < c->argc - 1; j++) {
        struct kv_entry **slot;
        struct list_obj *l;
        if (waiter_skips_key(c, c->argv[j], OBJ_LIST)) continue;
        if (!list_write(c, c->argv[j], &slot, &l)) return;
        if (!l) continue;
        reply_array(&c->r, 2);
        reply_bulk_slice(&c->r, c->argv[j]);
        pop_one_reply(c, &l, tail);
        bool emptied = list_len(l) == 0;
        commit_removal(c, c->argv[j], slot, l, true);
        notify_popped(c, c->argv[j], tail, emptied);
        return;
    }
    ctx_block_or_timeout(c, 1, c->argc - 1, timeout);
}

static void cmd_blpop(struct cmd_ctx *c) { bpop_generic(c, false); }
static void cmd_brpop(struct cmd_ctx *c) { bpop_generic(c, true); }

static void blmove_generic(struct cmd_ctx *c, bool from_tail, bool to_tail, struct slice timeout_arg) {
    long long timeout;
    if (!arg_timeout_or_reply(c, timeout_arg, &timeout)) return;
    struct list_obj *src = NULL;
    if (!waiter_skips_key(c, c->argv[1], OBJ_LIST) && !get_list(c, c->argv[1], LOOKUP_NONE, &src)) return;
    if (src && list_len(src) > 0) lmove_generic(c, from_tail, to_tail);
    else ctx_block_or_timeout(c, 1, 2, timeout);
}

static void cmd_blmove(struct cmd_ctx *c) {
    bool from_tail, to_tail;
    if (!where_or_reply(c, c->argv[3], &from_tail) || !where_or_reply(c, c->argv[4], &to_tail)) return;
    blmove_generic(c, from_tail, to_tail, c->argv[5]);
}

static void cmd_brpoplpush(struct cmd_ctx *c) { blmove_generic(c, true, false, c->argv[3]); }

/* BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count] */
static void cmd_blmpop(struct cmd_ctx *c) {
    long long timeout;
    int nkeys;
    if (!arg_timeout_or_reply(c, c->argv[1], &timeout)) return;
    if (lmpop_at(c, 2, &nkeys)) return;
    ctx_block_or_timeout(c, 3, 3 + nkeys, timeout);
}


/* ---------------------------------------------------------------------------
 * Command table
 * ------------------------------------------------------------------------- */

#define PUSH_CX "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."

const struct command list_commands[] = {
    CMD("lpush", -3, W | D | F, 1, 1, 1, cmd_lpush, "@write @list @fast", "Prepend one or multiple elements to a list", "1.0.0", "list", PUSH_CX,
        "key:key element:string ..."),
    CMD("rpush", -3, W | D | F, 1, 1, 1, cmd_rpush, "@write @list @fast", "Append one or multiple elements to a list", "1.0.0", "list", PUSH_CX,
        "key:key element:string ..."),
    CMD("lpushx", -3, W | D | F, 1, 1, 1, cmd_lpushx, "@write @list @fast", "Prepend an element to a list, only if the list exists", "2.2.0", "list", PUSH_CX,
        "key:key element:string ..."),
    CMD("rpushx", -3, W | D | F, 1, 1, 1, cmd_rpushx, "@write @list @fast", "Append an element to a list, only if the list exists", "2.2.0", "list", PUSH_CX,
        "key:key element:string ..."),
    CMD("lpop", -2, W | F, 1, 1, 1, cmd_lpop, "@write @list @fast", "Remove and get the first elements in a list", "1.0.0", "list", "O(N) where N is the number of elements returned",
        "key:key [count:integer@6.2.0]"),
    CMD("rpop", -2, W | F, 1, 1, 1, cmd_rpop, "@write @list @fast", "Remove and get the last elements in a list", "1.0.0", "list", "O(N) where N is the number of elements returned",
        "key:key [count:integer@6.2.0]"),
    CMD("llen", 2, R | F, 1, 1, 1, cmd_llen, "@read @list @fast", "Get the length of a list", "1.0.0", "list", "O(1)",
        "key:key"),
    CMD("lrange", 4, R, 1, 1, 1, cmd_lrange, "@read @list @slow", "Get a range of elements from a list", "1.0.0", "list",
        "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.",
        "key:key start:integer stop:integer"),
    CMD("lindex", 3, R, 1, 1, 1, cmd_lindex, "@read @list @slow", "Get an element from a list by its index", "1.0.0", "list",
        "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).",
        "key:key index:integer"),
    CMD("lset", 4, W | D, 1, 1, 1, cmd_lset, "@write @list @slow", "Set the value of an element in a list by its index", "1.0.0", "list",
        "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).",
        "key:key index:integer element:string"),
    CMD("lrem", 4, W, 1, 1, 1, cmd_lrem, "@write @list @slow", "Remove elements from a list", "1.0.0", "list",
        "O(N+M) where N is the length of the list and M is the number of elements removed.",
        "key:key count:integer element:string"),
    CMD("ltrim", 4, W, 1, 1, 1, cmd_ltrim, "@write @list @slow", "Trim a list to the specified range", "1.0.0", "list",
        "O(N) where N is the number of elements to be removed by the operation.",
        "key:key start:integer stop:integer"),
    CMD("linsert", 5, W | D, 1, 1, 1, cmd_linsert, "@write @list @slow", "Insert an element before or after another element in a list", "2.2.0", "list",
        "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).",
        "key:key where:oneof(before:pure-token=BEFORE after:pure-token=AFTER) pivot:string element:string"),
    CMD("lpos", -3, R, 1, 1, 1, cmd_lpos, "@read @list @slow", "Return the index of matching elements on a list", "6.0.6", "list",
        "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.",
        "key:key element:string [rank:integer=RANK] [num-matches:integer=COUNT] [len:integer=MAXLEN]"),
    CMD("lmove", 5, W | D, 1, 2, 1, cmd_lmove, "@write @list @slow", "Pop an element from a list, push it to another list and return it", "6.2.0", "list", "O(1)",
        "source:key destination:key wherefrom:oneof(left:pure-token=LEFT right:pure-token=RIGHT) "
        "whereto:oneof(left:pure-token=LEFT right:pure-token=RIGHT)"),
    CMD("rpoplpush", 3, W | D, 1, 2, 1, cmd_rpoplpush, "@write @list @slow", "Remove the last element in a list, prepend it to another list and return it", "1.2.0", "list", "O(1)",
        "source:key destination:key"),
    { "lmpop", -4, W | CMD_MOVABLEKEYS, 0, 0, 0, cmd_lmpop, keys_numkeys_first, "@write @list @slow",
      "Pop elements from a list", "7.0.0", "list",
      "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
      "numkeys:integer key:key ... where:oneof(left:pure-token=LEFT right:pure-token=RIGHT) [count:integer=COUNT]",
      NULL, NULL },
    CMD("blpop", -3, W | CMD_NOSCRIPT | CMD_BLOCKING, 1, -2, 1, cmd_blpop, "@write @list @slow @blocking",
        "Remove and get the first element in a list, or block until one is available", "2.0.0", "list",
        "O(N) where N is the number of provided keys.", "key:key ... timeout:double"),
    CMD("brpop", -3, W | CMD_NOSCRIPT | CMD_BLOCKING, 1, -2, 1, cmd_brpop, "@write @list @slow @blocking",
        "Remove and get the last element in a list, or block until one is available", "2.0.0", "list",
        "O(N) where N is the number of provided keys.", "key:key ... timeout:double"),
    CMD("blmove", 6, W | D | CMD_NOSCRIPT | CMD_BLOCKING, 1, 2, 1, cmd_blmove, "@write @list @slow @blocking",
        "Pop an element from a list, push it to another list and return it; or block until one is available",
        "6.2.0", "list", "O(1)",
        "source:key destination:key wherefrom:oneof(left:pure-token=LEFT right:pure-token=RIGHT) "
        "whereto:oneof(left:pure-token=LEFT right:pure-token=RIGHT) timeout:double"),
    CMD("brpoplpush", 4, W | D | CMD_NOSCRIPT | CMD_BLOCKING, 1, 2, 1, cmd_brpoplpush, "@write @list @slow @blocking",
        "Pop an element from a list, push it to another list and return it; or block until one is available",
        "2.2.0", "list", "O(1)", "source:key destination:key timeout:double"),
    { "blmpop", -5, W | CMD_BLOCKING | CMD_MOVABLEKEYS, 0, 0, 0, cmd_blmpop, keys_numkeys_second, "@write @list @slow @blocking",
      "Pop elements from a list, or block until one is available", "7.0.0", "list",
      "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
      "timeout:double numkeys:integer key:key ... where:oneof(left:pure-token=LEFT right:pure-token=RIGHT) [count:integer=COUNT]",
      NULL, NULL },
    CMD_END
};
