/*
 * Consumer group commands: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM and
 * XINFO (see cmd_stream.h for what they share with the other stream
 * commands), with Redis 7.0's replies, errors and keyspace events
 * (t_stream.c).
 *
 * Changes to the groups count as Redis counts them: the XGROUP
 * subcommands change the key (stream_commit with changed: WATCH sees them
 * and a blocked XREADGROUP wakes, to learn that its group went); XACK,
 * XCLAIM and XAUTOCLAIM only count in c->dirty, as Redis's server.dirty
 * without signalModifiedKey.
 */
#include "cmd_stream.h"

#include "ringkv/command_def.h"
#include "ringkv/notify.h"
#include "ringkv/reply.h"
#include "ringkv/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* IDs parsed on the stack up to this many (Redis's STREAMID_STATIC_VECTOR_LEN). */
#define IDS_STATIC 8
/* XAUTOCLAIM COUNTs whose IDs (16 bytes each) would take 128 TiB or more:
 * more than a 47-bit address space holds. */
#define XAUTOCLAIM_COUNT_UNMAPPABLE (1LL << 43)

/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */

static bool is_dollar(struct slice s) { return s.len == 1 && s.ptr[0] == '$'; }

static int clip(size_t len) { return len > 128 ? 128 : (int)len; }

/* Redis's addReplySubcommandSyntaxError, for container `name` (upper case). */
static void reply_sub_syntax(struct cmd_ctx *c, const char *name) {
    reply_errorf(&c->r, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
                 clip(c->argv[1].len), c->argv[1].ptr, name);
}

/* An integer argument or the error "ERR <msg>" (getLongLongFromObjectOrReply
 * with a message). */
static bool ll_or_msg(struct cmd_ctx *c, struct slice s, long long *v, const char *msg) {
    if (str_to_ll(s.ptr, s.len, v)) return true;
    reply_errorf(&c->r, "ERR %s", msg);
    return false;
}

/* "NOGROUP No such key '<key>' or consumer group '<group>'" */
static void reply_nogroup_key(struct cmd_ctx *c, struct slice key, struct slice group) {
    reply_errorf(&c->r, "NOGROUP No such key '%.*s' or consumer group '%.*s'", (int)key.len, key.ptr,
                 (int)group.len, group.ptr);
}

/* "NOGROUP No such consumer group '<group>' for key name '<key>'" */
static void reply_nogroup_name(struct cmd_ctx *c, struct slice key, struct slice group) {
    reply_errorf(&c->r, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)group.len, group.ptr,
                 (int)key.len, key.ptr);
}

/* An interval bound as Redis's streamParseIntervalIDOrReply: "(" makes it
 * exclusive (and the ID strict). */
static bool interval_id_or_reply(struct cmd_ctx *c, struct slice arg, uint64_t missing_seq, struct stream_id *id,
                                 bool *exclusive) {
    *exclusive = arg.len > 1 && arg.ptr[0] == '(';
    if (*exclusive)
        return stream_id_or_reply(c, (struct slice){ arg.ptr + 1, arg.len - 1 }, missing_seq, true, id, NULL);
    return stream_id_or_reply(c, arg, missing_seq, false, id, NULL);
}

/* Move the output's bytes from `from` on to position `at`, in front of
 * what was written between (a reply element known only after the elements
 * that follow it, such as XAUTOCLAIM's cursor). */
static void move_tail_to(struct rbuf *out, size_t at, size_t from) {
    size_t n = out->len - from;
    char small[128], *tmp = n <= sizeof small ? small : rk_malloc(n);
    memcpy(tmp, out->buf + from, n);
    memmove(out->buf + at + n, out->buf + at, from - at);
    memcpy(out->buf + at, tmp, n);
    if (tmp != small) free(tmp);
}

/* Take a pending entry away from whoever has it (NULL: a new one) and
 * give it to consumer. */
static void nack_move(struct stream_nack *n, struct stream_id id, struct stream_consumer *consumer) {
    if (n->consumer == consumer) return;
    if (n->consumer) idtree_remove(n->consumer->pel, id, NULL);
    idtree_insert(consumer->pel, id, n);
    n->consumer = consumer;
}

/* Drop a pending entry from both PELs. */
static void nack_drop(struct stream_cg *g, struct stream_id id, struct stream_nack *n) {
    idtree_remove(g->pel, id, NULL);
    if (n->consumer) idtree_remove(n->consumer->pel, id, NULL);
    free(n);
}

/* The consumer a claim goes to, looked up (its seen time refreshed) or
 * made on the first claim, as Redis does; *created tells the caller to
 * raise xgroup-createconsumer. */
static struct stream_consumer *claimer(struct cmd_ctx *c, struct stream_cg *g, struct stream_consumer *consumer,
                                       bool *created) {
    if (consumer) return consumer;
    bool made;
    consumer = stream_consumer_get(c, g, c->argv[3], &made);
    if (made) *created = true;
    return consumer;
}

/* ---------------------------------------------------------------------------
 * XGROUP
 * ------------------------------------------------------------------------- */

enum xgroup_sub { XG_CREATE, XG_SETID, XG_DESTROY, XG_CREATECONSUMER, XG_DELCONSUMER };

/* Everything xgroupCommand does before its subcommand: the options of
 * CREATE and SETID, the key, and the group where the subcommand needs it.
 * false after an error reply (the stream then committed unchanged). */
struct xgroup_args {
    struct kv_entry **slot;
    struct stream *s;
    struct stream_cg *g;
    bool mkstream;
    long long entries_read;
};

static bool xgroup_prepare(struct cmd_ctx *c, enum xgroup_sub sub, struct xgroup_args *a) {
    memset(a, 0, sizeof *a);
    a->entries_read = STREAM_ENTRIES_READ_INVALID;
    for (int i = 5; i < c->argc;) {
        struct slice o = c->argv[i];
        if (sub == XG_CREATE && slice_eq_nocase(o, "mkstream")) {
            a->mkstream = true;
            i++;
        } else if ((sub == XG_CREATE || sub == XG_SETID) && slice_eq_nocase(o, "entriesread") && i + 1 < c->argc) {
            if (!arg_ll_or_reply(c, c->argv[i + 1], &a->entries_read)) return false;
            if (a->entries_read < 0 && a->entries_read != STREAM_ENTRIES_READ_INVALID) {
                reply_error(&c->r, "ERR value for ENTRIESREAD must be positive or -1");
                return false;
            }
            i += 2;
        } else {
            reply_sub_syntax(c, "XGROUP");
            return false;
        }
    }
    if (!stream_write(c, c->argv[2], &a->slot, &a->s)) return false;
    if (a->mkstream) return true;
    if (!a->s) {
        reply_error(&c->r, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
                           "to use the MKSTREAM option to create an empty stream automatically.");
        return false;
    }
    a->g = stream_cg_find(a->s, c->argv[3]);
    if (!a->g && (sub == XG_SETID || sub == XG_CREATECONSUMER || sub == XG_DELCONSUMER)) {
        reply_nogroup_name(c, c->argv[2], c->argv[3]);
        stream_commit(c, c->argv[2], a->slot, a->s, false);
        return false;
    }
    return true;
}

static void xgroup_done(struct cmd_ctx *c, struct xgroup_args *a, bool changed, const char *event) {
    if (a->s) stream_commit(c, c->argv[2], a->slot, a->s, changed);
    if (event) notify(c, NOTIFY_STREAM, event, c->argv[2]);
}

/* XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n] */
static void cmd_xgroup_create(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (!xgroup_prepare(c, XG_CREATE, &a)) return;
    if (c->argc > 8) {
        reply_sub_syntax(c, "XGROUP");
        xgroup_done(c, &a, false, NULL);
        return;
    }
    struct stream_id id;
    if (is_dollar(c->argv[4])) {
        id = a.s ? a.s->last_id : STREAM_ID_MIN;
    } else if (!stream_id_or_reply(c, c->argv[4], 0, true, &id, NULL)) {
        xgroup_done(c, &a, false, NULL);
        return;
    }
    if (!a.s) {
        a.s = stream_new();
        a.slot = NULL;   /* stream_commit creates the key */
    }
    if (stream_cg_create(a.s, c->argv[3], id, a.entries_read)) {
        reply_ok(&c->r);
        xgroup_done(c, &a, true, "xgroup-create");
    } else {
        reply_error(&c->r, "BUSYGROUP Consumer Group name already exists");
        xgroup_done(c, &a, false, NULL);
    }
}

/* XGROUP SETID key group id|$ [ENTRIESREAD n] */
static void cmd_xgroup_setid(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (!xgroup_prepare(c, XG_SETID, &a)) return;
    if (c->argc != 5 && c->argc != 7) {
        reply_sub_syntax(c, "XGROUP");
        xgroup_done(c, &a, false, NULL);
        return;
    }
    struct stream_id id;
    if (is_dollar(c->argv[4])) {
        id = a.s->last_id;
    } else if (!stream_id_or_reply(c, c->argv[4], 0, false, &id, NULL)) {
        xgroup_done(c, &a, false, NULL);
        return;
    }
    a.g->last_id = id;
    a.g->entries_read = a.entries_read;
    reply_ok(&c->r);
    xgroup_done(c, &a, true, "xgroup-setid");
}

/* XGROUP DESTROY key group */
static void cmd_xgroup_destroy(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (!xgroup_prepare(c, XG_DESTROY, &a)) return;
    bool gone = a.g && stream_cg_destroy(a.s, c->argv[3]);
    reply_int(&c->r, gone);
    /* a blocked XREADGROUP of the group wakes to NOGROUP */
    xgroup_done(c, &a, gone, gone ? "xgroup-destroy" : NULL);
}

/* XGROUP CREATECONSUMER key group consumer */
static void cmd_xgroup_createconsumer(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (!xgroup_prepare(c, XG_CREATECONSUMER, &a)) return;
    bool made = stream_consumer_create(a.g, c->argv[4], c->now_ms) != NULL;
    reply_int(&c->r, made);
    xgroup_done(c, &a, made, made ? "xgroup-createconsumer" : NULL);
}

/* XGROUP DELCONSUMER key group consumer: the pending entries it had */
static void cmd_xgroup_delconsumer(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (!xgroup_prepare(c, XG_DELCONSUMER, &a)) return;
    struct stream_consumer *sc = stream_consumer_find(a.g, c->argv[4]);
    uint64_t pending = sc ? stream_consumer_delete(a.g, sc) : 0;
    reply_int(&c->r, (long long)pending);
    xgroup_done(c, &a, sc != NULL, sc ? "xgroup-delconsumer" : NULL);
}

static void cmd_xgroup_help(struct cmd_ctx *c) {
    static const char *lines[] = {
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
    };
    reply_help(&c->r, lines, RK_ARRAY_LEN(lines));
}

/* ---------------------------------------------------------------------------
 * XACK
 * ------------------------------------------------------------------------- */

/* XACK key group id [id ...] */
static void cmd_xack(struct cmd_ctx *c) {
    struct kv_entry **slot;
    struct stream *s;
    if (!stream_write(c, c->argv[1], &slot, &s)) return;
    struct stream_cg *g = s ? stream_cg_find(s, c->argv[2]) : NULL;
    if (!g) {
        /* nothing to acknowledge, whatever the IDs */
        reply_int(&c->r, 0);
        if (s) stream_commit(c, c->argv[1], slot, s, false);
        return;
    }
    /* every ID is checked first: the reply cannot be an error once
     * something was acknowledged */
    int n = c->argc - 3;
    struct stream_id small[IDS_STATIC], *ids = n <= IDS_STATIC ? small : rk_malloc((size_t)n * sizeof *ids);
    long long acked = 0;
    for (int i = 0; i < n; i++)
        if (!stream_id_or_reply(c, c->argv[3 + i], 0, true, &ids[i], NULL)) goto done;
    for (int i = 0; i < n; i++) {
        void *nack;
        if (!idtree_remove(g->pel, ids[i], &nack)) continue;
        struct stream_consumer *owner = ((struct stream_nack *)nack)->consumer;
        if (owner) idtree_remove(owner->pel, ids[i], NULL);
        free(nack);
        acked++;
    }
    reply_int(&c->r, acked);
done:
    stream_commit(c, c->argv[1], slot, s, false);
    c->dirty += acked;
    if (ids != small) free(ids);
}

/* ---------------------------------------------------------------------------
 * XPENDING
 * ------------------------------------------------------------------------- */

/* The summary: count, smallest and greatest ID, and each consumer that
 * has pending entries with how many (as a bulk string). */
static void xpending_summary(struct cmd_ctx *c, const struct stream_cg *g) {
    reply_array(&c->r, 4);
    reply_int(&c->r, (long long)idtree_count(g->pel));
    struct stream_id first, last;
    if (!idtree_first(g->pel, &first, NULL) || !idtree_last(g->pel, &last, NULL)) {
        reply_null(&c->r);
        reply_null(&c->r);
        reply_null_array(&c->r);
        return;
    }
    reply_stream_id(&c->r, first);
    reply_stream_id(&c->r, last);
    size_t with = 0;
    for (size_t i = 0; i < g->nconsumers; i++) with += idtree_count(g->consumers[i]->pel) > 0;
    reply_array(&c->r, with);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const struct stream_consumer *sc = g->consumers[i];
        size_t np = idtree_count(sc->pel);
        if (!np) continue;
        reply_array(&c->r, 2);
        reply_bulk_slice(&c->r, sc->name);
        reply_bulk_ll(&c->r, (long long)np);
    }
}

/* XPENDING key group [[IDLE min-idle] start end count [consumer]] */
static void cmd_xpending(struct cmd_ctx *c) {
    bool summary = c->argc == 3;
    struct stream_id start = STREAM_ID_MIN, end = STREAM_ID_MAX;
    long long count = 0, minidle = 0;
    const struct slice *consumer_name = NULL;
    if (!summary && (c->argc < 6 || c->argc > 9)) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    /* the range first: its errors come before any other */
    if (!summary) {
        int at = 3;
        if (slice_eq_nocase(c->argv[3], "idle")) {
            if (!arg_ll_or_reply(c, c->argv[4], &minidle)) return;
            if (c->argc < 8) {
                reply_error(&c->r, ERR_SYNTAX);
                return;
            }
            at += 2;
        }
        if (!arg_ll_or_reply(c, c->argv[at + 2], &count)) return;
        if (count < 0) count = 0;
        bool ex;
        if (!interval_id_or_reply(c, c->argv[at], 0, &start, &ex)) return;
        if (ex && !stream_id_incr(&start)) {
            reply_error(&c->r, "ERR invalid start ID for the interval");
            return;
        }
        if (!interval_id_or_reply(c, c->argv[at + 1], UINT64_MAX, &end, &ex)) return;
        if (ex && !stream_id_decr(&end)) {
            reply_error(&c->r, "ERR invalid end ID for the interval");
            return;
        }
        if (at + 3 < c->argc) consumer_name = &c->argv[at + 3];
    }
    struct stream *s;
    if (!stream_read(c, c->argv[1], &s)) return;
    const struct stream_cg *g = s ? stream_cg_find(s, c->argv[2]) : NULL;
    if (!g) {
        reply_nogroup_key(c, c->argv[1], c->argv[2]);
        return;
    }
    if (summary) {
        xpending_summary(c, g);
        return;
    }
    const struct idtree *pel = g->pel;
    if (consumer_name) {
        const struct stream_consumer *sc = stream_consumer_find(g, *consumer_name);
        if (!sc) {
            reply_array(&c->r, 0);
            return;
        }
        pel = sc->pel;
    }
    size_t at = c->r.out->len, n = 0;
    struct idtree_iter it;
    idtree_seek(&it, pel, start);
    struct stream_id id;
    void *v;
    while (count && idtree_next(&it, &id, &v) && stream_id_cmp(id, end) <= 0) {
        const struct stream_nack *nack = v;
        long long idle = c->now_ms - nack->delivery_time;
        if (minidle && idle < minidle) continue;
        reply_array(&c->r, 4);
        reply_stream_id(&c->r, id);
        reply_bulk_slice(&c->r, nack->consumer->name);
        reply_int(&c->r, idle < 0 ? 0 : idle);
        reply_int(&c->r, (long long)nack->delivery_count);
        n++;
        count--;
    }
    reply_array_at(&c->r, at, n);
}

/* ---------------------------------------------------------------------------
 * XCLAIM and XAUTOCLAIM
 * ------------------------------------------------------------------------- */

/* XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms]
 *        [TIME unix-ms] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id] */
static void cmd_xclaim(struct cmd_ctx *c) {
    struct kv_entry **slot;
    struct stream *s;
    if (!stream_write(c, c->argv[1], &slot, &s)) return;
    struct stream_cg *g = s ? stream_cg_find(s, c->argv[2]) : NULL;
    struct stream_id small[IDS_STATIC], *ids = small;
    long long changes = 0;
    bool created = false;
    if (!g) {
        reply_nogroup_key(c, c->argv[1], c->argv[2]);
        goto done;
    }
    long long minidle;
    if (!ll_or_msg(c, c->argv[4], &minidle, "Invalid min-idle-time argument for XCLAIM")) goto done;
    if (minidle < 0) minidle = 0;

    /* the IDs run up to the first argument that is not one: the options */
    int nids_max = c->argc - 5;
    if (nids_max > IDS_STATIC) ids = rk_malloc((size_t)nids_max * sizeof *ids);
    int nids = 0, j = 5;
    for (; j < c->argc && stream_id_parse(c->argv[j], 0, true, &ids[nids], NULL); j++) nids++;

    long long now = c->now_ms, retrycount = -1, deliverytime = -1;
    bool force = false, justid = false;
    struct stream_id lastid = STREAM_ID_MIN;
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        struct slice o = c->argv[j];
        if (slice_eq_nocase(o, "force")) {
            force = true;
        } else if (slice_eq_nocase(o, "justid")) {
            justid = true;
        } else if (slice_eq_nocase(o, "idle") && more) {
            long long idle;
            if (!ll_or_msg(c, c->argv[++j], &idle, "Invalid IDLE option argument for XCLAIM")) goto done;
            /* now - idle, without overflowing: a negative result is
             * replaced by now below, as is a time in the future */
            deliverytime = idle < 0 ? now + 1 : idle > now ? -2 : now - idle;
        } else if (slice_eq_nocase(o, "time") && more) {
            if (!ll_or_msg(c, c->argv[++j], &deliverytime, "Invalid TIME option argument for XCLAIM")) goto done;
        } else if (slice_eq_nocase(o, "retrycount") && more) {
            if (!ll_or_msg(c, c->argv[++j], &retrycount, "Invalid RETRYCOUNT option argument for XCLAIM")) goto done;
        } else if (slice_eq_nocase(o, "lastid") && more) {
            if (!stream_id_or_reply(c, c->argv[++j], 0, true, &lastid, NULL)) goto done;
        } else {
            reply_errorf(&c->r, "ERR Unrecognized XCLAIM option '%.*s'", (int)o.len, o.ptr);
            goto done;
        }
    }
    if (stream_id_cmp(lastid, g->last_id) > 0) {
        g->last_id = lastid;
        changes++;
    }
    /* a bogus delivery time (a client's clock ahead of ours) is now */
    if (deliverytime < 0 || deliverytime > now) deliverytime = now;

    struct stream_consumer *consumer = NULL;
    size_t at = c->r.out->len, n = 0;
    for (int i = 0; i < nids; i++) {
        struct stream_id id = ids[i];
        struct stream_nack *nack = idtree_find(g->pel, id);
        if (!stream_has_entry(s, id)) {
            /* gone from the stream: gone from the PEL too */
            if (nack) {
                nack_drop(g, id, nack);
                changes++;
            }
            continue;
        }
        if (force && !nack) {
            /* a PEL entry made from scratch (AOF and replicas' way) */
            nack = stream_nack_new(NULL, now);
            idtree_insert(g->pel, id, nack);
        }
        if (!nack) continue;
        if (nack->consumer && minidle && now - nack->delivery_time < minidle) continue;
        consumer = claimer(c, g, consumer, &created);
        nack_move(nack, id, consumer);
        nack->delivery_time = deliverytime;
        if (retrycount >= 0) nack->delivery_count = (uint64_t)retrycount;
        else if (!justid) nack->delivery_count++;
        if (justid) reply_stream_id(&c->r, id);
        else reply_stream_range(c, s, id, id, 1, false, NULL, NULL, STREAM_RANGE_RAW);
        n++;
        changes++;
    }
    reply_array_at(&c->r, at, n);
done:
    if (s) stream_commit(c, c->argv[1], slot, s, false);
    c->dirty += changes + created;
    if (created) notify(c, NOTIFY_STREAM, "xgroup-createconsumer", c->argv[1]);
    if (ids != small) free(ids);
}

/* XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]:
 * [next cursor, claimed entries (or IDs), IDs gone from the stream that
 * were dropped from the PEL] */
static void cmd_xautoclaim(struct cmd_ctx *c) {
    long long minidle, count = 100;
    if (!ll_or_msg(c, c->argv[4], &minidle, "Invalid min-idle-time argument for XAUTOCLAIM")) return;
    if (minidle < 0) minidle = 0;
    struct stream_id start;
    bool ex;
    if (!interval_id_or_reply(c, c->argv[5], 0, &start, &ex)) return;
    if (ex && !stream_id_incr(&start)) {
        reply_error(&c->r, "ERR invalid start ID for the interval");
        return;
    }
    bool justid = false;
    const long long attempts_factor = 10;
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (slice_eq_nocase(c->argv[j], "count") && more) {
            /* at most what Redis can size its transient array of IDs for */
            const long long max_count = LONG_MAX / 16;
            j++;
            if (!str_to_ll(c->argv[j].ptr, c->argv[j].len, &count) || count < 1 || count > max_count) {
                reply_error(&c->r, "ERR COUNT must be > 0");
                return;
            }
        } else if (slice_eq_nocase(c->argv[j], "justid")) {
            justid = true;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
    }
    struct kv_entry **slot;
    struct stream *s;
    if (!stream_write(c, c->argv[1], &slot, &s)) return;
    struct stream_cg *g = s ? stream_cg_find(s, c->argv[2]) : NULL;
    if (!g) {
        reply_nogroup_key(c, c->argv[1], c->argv[2]);
        if (s) stream_commit(c, c->argv[1], slot, s, false);
        return;
    }
    /* Redis allocates COUNT IDs up front: past what an address space can
     * map, that fails (ringkv allocates as it goes; the error is kept) */
    if (count >= XAUTOCLAIM_COUNT_UNMAPPABLE) {
        reply_error(&c->r, "ERR Insufficient memory, failed allocating transient memory, COUNT too high.");
        stream_commit(c, c->argv[1], slot, s, false);
        return;
    }

    long long attempts = count * attempts_factor, changes = 0, now = c->now_ms;
    bool created = false;
    struct stream_consumer *consumer = NULL;
    struct stream_id dsmall[16], *deleted = dsmall;
    size_t ndeleted = 0, dcap = RK_ARRAY_LEN(dsmall);

    reply_array(&c->r, 3);
    size_t at = c->r.out->len, n = 0;
    struct idtree_iter it;
    idtree_seek(&it, g->pel, start);
    struct stream_id id;
    void *v;
    bool eof = false;
    while (attempts-- && count) {
        if (!idtree_next(&it, &id, &v)) {
            eof = true;
            break;
        }
        struct stream_nack *nack = v;
        if (!stream_has_entry(s, id)) {
            /* gone from the stream: dropped from the PEL, and reported */
            nack_drop(g, id, nack);
            changes++;
            if (ndeleted == dcap) {
                dcap *= 2;
                if (deleted == dsmall) {
                    deleted = rk_malloc(dcap * sizeof *deleted);
                    memcpy(deleted, dsmall, sizeof dsmall);
                } else {
                    deleted = rk_realloc(deleted, dcap * sizeof *deleted);
                }
            }
            deleted[ndeleted++] = id;
            idtree_seek(&it, g->pel, id);   /* the PEL changed */
            count--;
            continue;
        }
        if (minidle && now - nack->delivery_time < minidle) continue;
        consumer = claimer(c, g, consumer, &created);
        nack_move(nack, id, consumer);   /* another tree: the iterator stays valid */
        nack->delivery_time = now;
        if (!justid) nack->delivery_count++;
        if (justid) reply_stream_id(&c->r, id);
        else reply_stream_range(c, s, id, id, 1, false, NULL, NULL, STREAM_RANGE_RAW);
        n++;
        count--;
        changes++;
    }
    /* the cursor: the entry after the last one looked at, 0-0 at the end */
    struct stream_id cursor = STREAM_ID_MIN;
    if (!eof && idtree_next(&it, &id, &v)) cursor = id;
    reply_array_at(&c->r, at, n);
    size_t cur = c->r.out->len;
    reply_stream_id(&c->r, cursor);
    move_tail_to(c->r.out, at, cur);
    reply_array(&c->r, ndeleted);
    for (size_t i = 0; i < ndeleted; i++) reply_stream_id(&c->r, deleted[i]);
    if (deleted != dsmall) free(deleted);

    stream_commit(c, c->argv[1], slot, s, false);
    c->dirty += changes + created;
    if (created) notify(c, NOTIFY_STREAM, "xgroup-createconsumer", c->argv[1]);
}

/* ---------------------------------------------------------------------------
 * XINFO
 * ------------------------------------------------------------------------- */

/* The 128-bit key of a node as Redis's rax holds it: big-endian ms, seq. */
static int id_byte(struct stream_id id, int i) {
    uint64_t half = i < 8 ? id.ms : id.seq;
    return (int)((half >> (56 - 8 * (i & 7))) & 0xff);
}

static int id_lcp(struct stream_id a, struct stream_id b) {
    int i = 0;
    while (i < 16 && id_byte(a, i) == id_byte(b, i)) i++;
    return i;
}

/* Nodes of the rax (radix tree) Redis would hold the node IDs in: one per
 * branching point, leaf and compressed run, from the longest common
 * prefixes of adjacent keys (what "radix-tree-nodes" reports; ringkv keeps
 * its nodes in an idtree). One walk over the nodes, rare (XINFO). */
static long long rax_nodes(const struct idtree *t) {
    size_t n = idtree_count(t);
    if (n == 0) return 1;   /* the empty root */
    /* the open branching points of the rightmost path, by depth (< 16) */
    int stack[17], top = 0;
    long long nodes = 0;
    struct idtree_iter it;
    idtree_seek(&it, t, STREAM_ID_MIN);
    struct stream_id cur, next;
    void *v;
    if (!idtree_next(&it, &cur, &v)) return 1;
    int left = -1;
    for (;;) {
        bool more = idtree_next(&it, &next, &v);
        int right = more ? id_lcp(cur, next) : -1;
        /* the leaf: under the deeper of the branches around it */
        int parent = left > right ? left : right;
        nodes += 1 + (parent < 0 ? 1 : 16 > parent + 1);
        /* branching points deeper than the next one are complete */
        while (top && stack[top - 1] > right) {
            int d = stack[--top];
            int up = top ? stack[top - 1] : -1;
            if (right > up) up = right;
            nodes += 1 + (up < 0 ? d > 0 : d > up + 1);
        }
        if (right >= 0 && (!top || stack[top - 1] < right)) stack[top++] = right;
        if (!more) break;
        cur = next;
        left = right;
    }
    return nodes;
}

static void reply_lag(struct cmd_ctx *c, const struct stream *s, const struct stream_cg *g) {
    long long lag;
    if (stream_cg_lag(s, g, &lag)) reply_int(&c->r, lag);
    else reply_null(&c->r);
}

static void reply_entries_read(struct cmd_ctx *c, const struct stream_cg *g) {
    if (g->entries_read != STREAM_ENTRIES_READ_INVALID) reply_int(&c->r, g->entries_read);
    else reply_null(&c->r);
}

static size_t limited(size_t n, long long count) {
    return count && (size_t)count < n ? (size_t)count : n;
}

/* XINFO STREAM key FULL [COUNT n]: the groups with their PELs and
 * consumers, at most count pending entries each (0: all) */
static void xinfo_full_groups(struct cmd_ctx *c, const struct stream *s, long long count) {
    reply_array(&c->r, s->ngroups);
    for (size_t gi = 0; gi < s->ngroups; gi++) {
        const struct stream_cg *g = s->groups[gi];
        reply_map(&c->r, 7);
        reply_bulk_cstr(&c->r, "name");
        reply_bulk_slice(&c->r, g->name);
        reply_bulk_cstr(&c->r, "last-delivered-id");
        reply_stream_id(&c->r, g->last_id);
        reply_bulk_cstr(&c->r, "entries-read");
        reply_entries_read(c, g);
        reply_bulk_cstr(&c->r, "lag");
        reply_lag(c, s, g);
        reply_bulk_cstr(&c->r, "pel-count");
        reply_int(&c->r, (long long)idtree_count(g->pel));
        reply_bulk_cstr(&c->r, "pending");
        size_t np = limited(idtree_count(g->pel), count);
        reply_array(&c->r, np);
        struct idtree_iter it;
        struct stream_id id;
        void *v;
        idtree_seek(&it, g->pel, STREAM_ID_MIN);
        for (size_t i = 0; i < np && idtree_next(&it, &id, &v); i++) {
            const struct stream_nack *nack = v;
            reply_array(&c->r, 4);
            reply_stream_id(&c->r, id);
            reply_bulk_slice(&c->r, nack->consumer->name);
            reply_int(&c->r, nack->delivery_time);
            reply_int(&c->r, (long long)nack->delivery_count);
        }
        reply_bulk_cstr(&c->r, "consumers");
        reply_array(&c->r, g->nconsumers);
        for (size_t ci = 0; ci < g->nconsumers; ci++) {
            const struct stream_consumer *sc = g->consumers[ci];
            reply_map(&c->r, 4);
            reply_bulk_cstr(&c->r, "name");
            reply_bulk_slice(&c->r, sc->name);
            reply_bulk_cstr(&c->r, "seen-time");
            reply_int(&c->r, sc->seen_time);
            reply_bulk_cstr(&c->r, "pel-count");
            reply_int(&c->r, (long long)idtree_count(sc->pel));
            reply_bulk_cstr(&c->r, "pending");
            size_t cp = limited(idtree_count(sc->pel), count);
            reply_array(&c->r, cp);
            idtree_seek(&it, sc->pel, STREAM_ID_MIN);
            for (size_t i = 0; i < cp && idtree_next(&it, &id, &v); i++) {
                const struct stream_nack *nack = v;
                reply_array(&c->r, 3);
                reply_stream_id(&c->r, id);
                reply_int(&c->r, nack->delivery_time);
                reply_int(&c->r, (long long)nack->delivery_count);
            }
        }
    }
}

/* The stream every XINFO subcommand reads (argv[2]), or NULL after the
 * error reply (WRONGTYPE, or no such key). */
static struct stream *xinfo_stream(struct cmd_ctx *c) {
    struct stream *s;
    if (!stream_read(c, c->argv[2], &s)) return NULL;
    if (!s) reply_error(&c->r, ERR_NO_SUCH_KEY);
    return s;
}

/* XINFO STREAM key [FULL [COUNT n]] */
static void cmd_xinfo_stream(struct cmd_ctx *c) {
    struct stream *s = xinfo_stream(c);
    if (!s) return;
    int optc = c->argc - 3;
    bool full = optc > 0;
    long long count = 10;   /* FULL's default, so it cannot block the server */
    if (full) {
        if ((optc != 1 && optc != 3) || !slice_eq_nocase(c->argv[3], "full") ||
            (optc == 3 && !slice_eq_nocase(c->argv[4], "count"))) {
            reply_sub_syntax(c, "XINFO");
            return;
        }
        if (optc == 3) {
            if (!arg_ll_or_reply(c, c->argv[5], &count)) return;
            if (count < 0) count = 10;
        }
    }
    struct reply *r = &c->r;
    reply_map(r, full ? 9 : 10);
    reply_bulk_cstr(r, "length");
    reply_int(r, (long long)s->length);
    reply_bulk_cstr(r, "radix-tree-keys");
    reply_int(r, (long long)idtree_count(s->nodes));
    reply_bulk_cstr(r, "radix-tree-nodes");
    reply_int(r, rax_nodes(s->nodes));
    reply_bulk_cstr(r, "last-generated-id");
    reply_stream_id(r, s->last_id);
    reply_bulk_cstr(r, "max-deleted-entry-id");
    reply_stream_id(r, s->max_deleted_id);
    reply_bulk_cstr(r, "entries-added");
    reply_int(r, (long long)s->entries_added);
    reply_bulk_cstr(r, "recorded-first-entry-id");
    reply_stream_id(r, s->first_id);
    if (!full) {
        reply_bulk_cstr(r, "groups");
        reply_int(r, (long long)s->ngroups);
        reply_bulk_cstr(r, "first-entry");
        if (!reply_stream_range(c, s, STREAM_ID_MIN, STREAM_ID_MAX, 1, false, NULL, NULL, STREAM_RANGE_RAW))
            reply_null(r);
        reply_bulk_cstr(r, "last-entry");
        if (!reply_stream_range(c, s, STREAM_ID_MIN, STREAM_ID_MAX, 1, true, NULL, NULL, STREAM_RANGE_RAW))
            reply_null(r);
        return;
    }
    reply_bulk_cstr(r, "entries");
    reply_stream_range(c, s, STREAM_ID_MIN, STREAM_ID_MAX, (size_t)count, false, NULL, NULL, 0);
    reply_bulk_cstr(r, "groups");
    xinfo_full_groups(c, s, count);
}

/* XINFO GROUPS key */
static void cmd_xinfo_groups(struct cmd_ctx *c) {
    struct stream *s = xinfo_stream(c);
    if (!s) return;
    reply_array(&c->r, s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct stream_cg *g = s->groups[i];
        reply_map(&c->r, 6);
        reply_bulk_cstr(&c->r, "name");
        reply_bulk_slice(&c->r, g->name);
        reply_bulk_cstr(&c->r, "consumers");
        reply_int(&c->r, (long long)g->nconsumers);
        reply_bulk_cstr(&c->r, "pending");
        reply_int(&c->r, (long long)idtree_count(g->pel));
        reply_bulk_cstr(&c->r, "last-delivered-id");
        reply_stream_id(&c->r, g->last_id);
        reply_bulk_cstr(&c->r, "entries-read");
        reply_entries_read(c, g);
        reply_bulk_cstr(&c->r, "lag");
        reply_lag(c, s, g);
    }
}

/* XINFO CONSUMERS key group */
static void cmd_xinfo_consumers(struct cmd_ctx *c) {
    struct stream *s = xinfo_stream(c);
    if (!s) return;
    const struct stream_cg *g = stream_cg_find(s, c->argv[3]);
    if (!g) {
        reply_nogroup_name(c, c->argv[2], c->argv[3]);
        return;
    }
    reply_array(&c->r, g->nconsumers);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const struct stream_consumer *sc = g->consumers[i];
        long long idle = c->now_ms - sc->seen_time;
        reply_map(&c->r, 3);
        reply_bulk_cstr(&c->r, "name");
        reply_bulk_slice(&c->r, sc->name);
        reply_bulk_cstr(&c->r, "pending");
        reply_int(&c->r, (long long)idtree_count(sc->pel));
        reply_bulk_cstr(&c->r, "idle");
        reply_int(&c->r, idle < 0 ? 0 : idle);
    }
}

static void cmd_xinfo_help(struct cmd_ctx *c) {
    static const char *lines[] = {
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
    };
    reply_help(&c->r, lines, RK_ARRAY_LEN(lines));
}

/* ---------------------------------------------------------------------------
 * Table
 * ------------------------------------------------------------------------- */

#define XG_ID_ARG "id:oneof(id:string new_id:pure-token=$)"

static const struct command xgroup_subs[] = {
    CMD("xgroup|create", -5, W | D, 2, 2, 1, cmd_xgroup_create, "@write @stream @slow", "Create a consumer group.",
        "5.0.0", "stream", "O(1)",
        "key:key groupname:string " XG_ID_ARG " [mkstream:pure-token=MKSTREAM] [entries_read:integer=ENTRIESREAD]"),
    CMD("xgroup|createconsumer", 5, W | D, 2, 2, 1, cmd_xgroup_createconsumer, "@write @stream @slow",
        "Create a consumer in a consumer group.", "6.2.0", "stream", "O(1)",
        "key:key groupname:string consumername:string"),
    CMD("xgroup|delconsumer", 5, W, 2, 2, 1, cmd_xgroup_delconsumer, "@write @stream @slow",
        "Delete a consumer from a consumer group.", "5.0.0", "stream", "O(1)",
        "key:key groupname:string consumername:string"),
    CMD("xgroup|destroy", 4, W, 2, 2, 1, cmd_xgroup_destroy, "@write @stream @slow", "Destroy a consumer group.",
        "5.0.0", "stream", "O(N) where N is the number of entries in the group's pending entries list (PEL).",
        "key:key groupname:string"),
    CMD("xgroup|help", 2, L, 0, 0, 0, cmd_xgroup_help, "@stream @slow",
        "Show helpful text about the different subcommands", "5.0.0", "stream", "O(1)", NULL),
    CMD("xgroup|setid", -5, W, 2, 2, 1, cmd_xgroup_setid, "@write @stream @slow",
        "Set a consumer group to an arbitrary last delivered ID value.", "5.0.0", "stream", "O(1)",
        "key:key groupname:string " XG_ID_ARG " [entries_read:integer=ENTRIESREAD]"),
    CMD_END
};

static const struct command xinfo_subs[] = {
    CMD("xinfo|consumers", 4, R, 2, 2, 1, cmd_xinfo_consumers, "@read @stream @slow",
        "List the consumers in a consumer group", "5.0.0", "stream", "O(1)", "key:key groupname:string"),
    CMD("xinfo|groups", 3, R, 2, 2, 1, cmd_xinfo_groups, "@read @stream @slow", "List the consumer groups of a stream",
        "5.0.0", "stream", "O(1)", "key:key"),
    CMD("xinfo|help", 2, L, 0, 0, 0, cmd_xinfo_help, "@stream @slow",
        "Show helpful text about the different subcommands", "5.0.0", "stream", "O(1)", NULL),
    CMD("xinfo|stream", -3, R, 2, 2, 1, cmd_xinfo_stream, "@read @stream @slow", "Get information about a stream",
        "5.0.0", "stream", "O(1)", "key:key [full:block=FULL([count:integer=COUNT])]"),
    CMD_END
};

const struct command stream_group_commands[] = {
    CMD("xack", -4, W | F, 1, 1, 1, cmd_xack, "@write @stream @fast",
        "Marks a pending message as correctly processed, effectively removing it from the pending entries list of "
        "the consumer group. Return value of the command is the number of messages successfully acknowledged, that "
        "is, the IDs we were actually able to resolve in the PEL.",
        "5.0.0", "stream", "O(1) for each message ID processed.", "key:key group:string id:string ..."),
    CMD("xautoclaim", -6, W | F, 1, 1, 1, cmd_xautoclaim, "@write @stream @fast",
        "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the "
        "specified consumer.",
        "6.2.0", "stream", "O(1) if COUNT is small.",
        "key:key group:string consumer:string min-idle-time:string start:string [count:integer=COUNT] "
        "[justid:pure-token=JUSTID]"),
    CMD("xclaim", -6, W | F, 1, 1, 1, cmd_xclaim, "@write @stream @fast",
        "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the "
        "specified consumer.",
        "5.0.0", "stream", "O(log N) with N being the number of messages in the PEL of the consumer group.",
        "key:key group:string consumer:string min-idle-time:string id:string ... [ms:integer=IDLE] "
        "[unix-time-milliseconds:unix-time=TIME] [count:integer=RETRYCOUNT] [force:pure-token=FORCE] "
        "[justid:pure-token=JUSTID] [id:string=LASTID]"),
    CONTAINER("xgroup", xgroup_subs, "@slow", "A container for consumer groups commands", "5.0.0", "stream"),
    CONTAINER("xinfo", xinfo_subs, "@slow", "A container for stream introspection commands", "5.0.0", "stream"),
    CMD("xpending", -3, R, 1, 1, 1, cmd_xpending, "@read @stream @slow",
        "Return information and entries from a stream consumer group pending entries list, that are messages "
        "fetched but never acknowledged.",
        "5.0.0", "stream",
        "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call "
        "is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the "
        "command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an "
        "additional O(N) time for iterating every consumer.",
        "key:key group:string [filters:block([min-idle-time:integer=IDLE@6.2.0] start:string end:string "
        "count:integer [consumer:string])]"),
    CMD_END
};
