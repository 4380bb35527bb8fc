/*
 * Stream commands: XADD XLEN XRANGE XREVRANGE XDEL XTRIM XSETID, and the
 * reads XREAD and XREADGROUP, blocking or not, with Redis 7.0's replies
 * and errors (t_stream.c). The consumer group commands are in
 * cmd_stream_group.c; what both use is cmd_stream.h.
 *
 * A blocked XREAD or XREADGROUP is a non-consuming waiter (db.h): every
 * write to one of its streams wakes it and it runs again. XREAD remembers
 * what "$" meant when it first ran (cmd_ctx.block_memo), so it then serves
 * only what came after; XREADGROUP waits for entries after its group's
 * last delivered ID, and learns on waking that its stream or group went.
 */
#include "cmd_stream.h"

#include "ringkv/command_def.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/entry.h"
#include "ringkv/notify.h"
#include "ringkv/reply.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ERR_SYNTAX "ERR syntax error"
/* Entries a blocked read without COUNT gets at most when it is served
 * (Redis's XREAD_BLOCKED_DEFAULT_COUNT). */
#define XREAD_BLOCKED_DEFAULT_COUNT 1000
/* Elements summed over an entry's fields and values (STREAM_LISTPACK_MAX_SIZE). */
#define STREAM_ENTRY_MAX_BYTES (1ull << 30)

/* ---------------------------------------------------------------------------
 * Shared (cmd_stream.h)
 * ------------------------------------------------------------------------- */

static bool is_arg(struct slice s, const char *word) {
    return s.len == strlen(word) && strncasecmp(s.ptr, word, s.len) == 0;
}

bool stream_read(struct cmd_ctx *c, struct slice key, struct stream **s) {
    bool wrong;
    struct kv_entry **slot = lookup_typed_or_reply(c, key, OBJ_STREAM, LOOKUP_READ, &wrong);
    if (wrong) return false;
    *s = slot ? entry_obj(*slot) : NULL;
    return true;
}

bool stream_write(struct cmd_ctx *c, struct slice key, struct kv_entry ***slot, struct stream **s) {
    return obj_write(c, key, OBJ_STREAM, slot, (void **)s);
}

void stream_commit(struct cmd_ctx *c, struct slice key, struct kv_entry **slot, struct stream *s, bool changed) {
    obj_commit(c, key, OBJ_STREAM, slot, s, 1, changed);
}

struct stream_node_limits stream_limits_now(void) {
    return (struct stream_node_limits){ (size_t)CONFIG_GET(stream_node_max_bytes),
                                        CONFIG_GET(stream_node_max_entries) };
}

bool stream_id_or_reply(struct cmd_ctx *c, struct slice arg, uint64_t missing_seq, bool strict,
                        struct stream_id *id, bool *seq_given) {
    if (stream_id_parse(arg, missing_seq, strict, id, seq_given)) return true;
    reply_error(&c->r, ERR_STREAM_ID);
    return false;
}

void reply_stream_id(struct reply *r, struct stream_id id) {
    char buf[STREAM_ID_STR_MAX];
    reply_bulk(r, buf, stream_id_format(id, buf));
}

struct stream_consumer *stream_consumer_get(struct cmd_ctx *c, struct stream_cg *g, struct slice name,
                                            bool *created) {
    struct stream_consumer *sc = stream_consumer_find(g, name);
    *created = sc == NULL;
    if (sc) sc->seen_time = c->now_ms;
    else sc = stream_consumer_create(g, name, c->now_ms);
    return sc;
}

void reply_stream_entry(struct reply *r, struct stream_iter *it, struct stream_id id, long long nfields) {
    reply_array(r, 2);
    reply_stream_id(r, id);
    reply_array(r, (size_t)nfields * 2);
    char fb[LP_INTBUF_SIZE], vb[LP_INTBUF_SIZE];
    for (long long i = 0; i < nfields; i++) {
        struct lp_value f, v;
        stream_iter_field(it, &f, &v);
        reply_bulk_slice(r, lp_value_str(&f, fb));
        reply_bulk_slice(r, lp_value_str(&v, vb));
    }
}

/* A delivery of id to consumer: a new pending entry, or one taken over
 * from whoever had it (XGROUP SETID may make a group deliver again). */
static void deliver(struct cmd_ctx *c, struct stream_cg *g, struct stream_consumer *consumer, struct stream_id id) {
    struct stream_nack *n = idtree_find(g->pel, id);
    if (!n) {
        n = stream_nack_new(consumer, c->now_ms);
        idtree_insert(g->pel, id, n);
        idtree_insert(consumer->pel, id, n);
        return;
    }
    idtree_remove(n->consumer->pel, id, NULL);
    n->consumer = consumer;
    n->delivery_time = c->now_ms;
    n->delivery_count = 1;
    idtree_insert(consumer->pel, id, n);
}

/* The consumer's own history (XREADGROUP with an ID): its pending entries
 * from start on, each with its fields, or a null for one deleted since. */
static size_t reply_consumer_pel(struct cmd_ctx *c, struct stream *s, struct stream_id start, size_t count,
                                 struct stream_consumer *consumer) {
    size_t at = c->r.out->len, n = 0;
    struct idtree_iter it;
    idtree_seek(&it, consumer->pel, start);
    struct stream_id id;
    void *v;
    while ((!count || n < count) && idtree_next(&it, &id, &v)) {
        struct stream_nack *nack = v;
        if (reply_stream_range(c, s, id, id, 1, false, NULL, NULL, STREAM_RANGE_RAW) == 0) {
            reply_array(&c->r, 2);
            reply_stream_id(&c->r, id);
            reply_null_array(&c->r);
        } else {
            nack->delivery_time = c->now_ms;
            nack->delivery_count++;
        }
        n++;
    }
    reply_array_at(&c->r, at, n);
    return n;
}

size_t reply_stream_range(struct cmd_ctx *c, struct stream *s, struct stream_id start, struct stream_id end,
                          size_t count, bool rev, struct stream_cg *g, struct stream_consumer *consumer,
                          int flags) {
    if (g && (flags & STREAM_RANGE_HISTORY)) return reply_consumer_pel(c, s, start, count, consumer);
    size_t at = c->r.out->len, n = 0;
    struct stream_iter it;
    stream_iter_start(&it, s, start, end, rev);
    struct stream_id id;
    long long nfields;
    while (stream_iter_next(&it, &id, &nfields)) {
        if (g && stream_id_cmp(id, g->last_id) > 0) stream_cg_advance(s, g, id);
        reply_stream_entry(&c->r, &it, id, nfields);
        if (g && !(flags & STREAM_RANGE_NOACK)) deliver(c, g, consumer, id);
        if (++n == count) break;
    }
    if (!(flags & STREAM_RANGE_RAW)) reply_array_at(&c->r, at, n);
    return n;
}

/* Whether a live entry's ID is greater than id (the last live one, found
 * from the end, only when the last ID ever added is). */
static bool has_live_after(const struct stream *s, struct stream_id id) {
    if (!s->length || stream_id_cmp(s->last_id, id) <= 0) return false;
    struct stream_iter it;
    struct stream_id maxid;
    long long nf;
    stream_iter_start(&it, s, STREAM_ID_MIN, STREAM_ID_MAX, true);
    return stream_iter_next(&it, &maxid, &nf) && stream_id_cmp(maxid, id) > 0;
}

/* ---------------------------------------------------------------------------
 * XADD and XTRIM
 * ------------------------------------------------------------------------- */

struct add_trim_args {
    struct stream_trim trim;
    struct stream_id id;
    bool id_given, seq_given, no_mkstream;
};

/* Options of XADD (xadd) or XTRIM from argv[2] on, as Redis's
 * streamParseAddOrTrimArgsOrReply; returns the ID's position (XADD), or
 * -1 after replying an error. */
static int parse_add_trim(struct cmd_ctx *c, struct add_trim_args *a, bool xadd) {
    memset(a, 0, sizeof *a);
    bool limit_given = false;
    int i = 2;
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        struct slice o = c->argv[i];
        if (xadd && o.len == 1 && o.ptr[0] == '*') break;
        bool maxlen = is_arg(o, "maxlen"), minid = is_arg(o, "minid");
        if ((maxlen || minid) && more) {
            if (a->trim.by != STREAM_TRIM_NONE) {
                reply_error(&c->r, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->trim.approx = false;
            struct slice next = c->argv[i + 1];
            if (more >= 2 && next.len == 1 && (next.ptr[0] == '~' || next.ptr[0] == '=')) {
                a->trim.approx = next.ptr[0] == '~';
                i++;
            }
            if (maxlen) {
                long long n;
                if (!arg_ll_or_reply(c, c->argv[i + 1], &n)) return -1;
                if (n < 0) {
                    reply_error(&c->r, "ERR The MAXLEN argument must be >= 0.");
                    return -1;
                }
                a->trim.maxlen = (uint64_t)n;
                a->trim.by = STREAM_TRIM_MAXLEN;
            } else {
                if (!stream_id_or_reply(c, c->argv[i + 1], 0, true, &a->trim.minid, NULL)) return -1;
                a->trim.by = STREAM_TRIM_MINID;
            }
            i++;
        } else if (is_arg(o, "limit") && more) {
            if (!arg_ll_or_reply(c, c->argv[i + 1], &a->trim.limit)) return -1;
            if (a->trim.limit < 0) {
                reply_error(&c->r, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = true;
            i++;
        } else if (xadd && is_arg(o, "nomkstream")) {
            a->no_mkstream = true;
        } else if (xadd) {
            if (!stream_id_or_reply(c, o, 0, true, &a->id, &a->seq_given)) return -1;
            a->id_given = true;
            break;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return -1;
        }
    }
    if (a->trim.limit && a->trim.by == STREAM_TRIM_NONE) {
        reply_error(&c->r, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && a->trim.by == STREAM_TRIM_NONE) {
        reply_error(&c->r, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (limit_given) {
        if (!a->trim.approx) {
            reply_error(&c->r, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (a->trim.approx) {
        /* bound the work of a trim nobody limited: 100 nodes */
        long long entries = CONFIG_GET(stream_node_max_entries);
        a->trim.limit = entries > 0 && entries <= 10000 ? 100 * entries : entries > 10000 ? 1000000 : 10000;
    } else {
        a->trim.limit = 0;
    }
    return i;
}

/* The ID an XADD adds: generated from the clock after the last ID, or the
 * given one (with its sequence generated for "<ms>-*"); false after an
 * error reply. */
static bool next_add_id(struct cmd_ctx *c, const struct stream *s, const struct add_trim_args *a, struct stream_id *id) {
    struct stream_id last = s ? s->last_id : STREAM_ID_MIN;
    if (!a->id_given) {
        uint64_t ms = (uint64_t)c->now_ms;
        if (ms > last.ms) {
            *id = (struct stream_id){ ms, 0 };
        } else {
            *id = last;
            stream_id_incr(id);
        }
        return true;
    }
    *id = a->id;
    if (!a->seq_given && last.ms == id->ms) {
        if (last.seq == UINT64_MAX) goto not_greater;
        id->seq = last.seq + 1;
    }
    if (stream_id_cmp(*id, last) > 0) return true;
not_greater:
    reply_error(&c->r, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
    return false;
}

static void cmd_xadd(struct cmd_ctx *c) {
    struct add_trim_args a;
    int idpos = parse_add_trim(c, &a, true);
    if (idpos < 0) return;
    int fpos = idpos + 1;
    if (c->argc - fpos < 2 || (c->argc - fpos) % 2 == 1) {
        reply_wrong_arity(&c->r, c->cmd->name);
        return;
    }
    if (a.id_given && a.seq_given && a.id.ms == 0 && a.id.seq == 0) {
        reply_error(&c->r, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    struct kv_entry **slot;
    struct stream *s;
    if (!stream_write(c, c->argv[1], &slot, &s)) return;
    if (!s && a.no_mkstream) {
        reply_null(&c->r);
        return;
    }
    if (s && s->last_id.ms == UINT64_MAX && s->last_id.seq == UINT64_MAX) {
        reply_error(&c->r, "ERR The stream has exhausted the last possible ID, unable to add more items");
        stream_commit(c, c->argv[1], slot, s, false);
        return;
    }
    struct stream_id id;
    uint64_t bytes = 0;
    for (int i = fpos; i < c->argc; i++) bytes += c->argv[i].len;
    if (bytes > STREAM_ENTRY_MAX_BYTES) {
        reply_error(&c->r, "ERR Elements are too large to be stored");
        if (s) stream_commit(c, c->argv[1], slot, s, false);
        return;
    }
    if (!next_add_id(c, s, &a, &id)) {
        if (s) stream_commit(c, c->argv[1], slot, s, false);
        return;
    }
    bool created = !s;
    if (created) s = stream_new();
    struct stream_node_limits lim = stream_limits_now();
    stream_append(s, id, &c->argv[fpos], (size_t)(c->argc - fpos) / 2, &lim);
    reply_stream_id(&c->r, id);
    long long trimmed = stream_trim(s, &a.trim);
    stream_commit(c, c->argv[1], slot, s, true);
    notify(c, NOTIFY_STREAM, "xadd", c->argv[1]);
    if (trimmed) notify(c, NOTIFY_STREAM, "xtrim", c->argv[1]);
}

static void cmd_xtrim(struct cmd_ctx *c) {
    struct add_trim_args a;
    int i = parse_add_trim(c, &a, false);
    if (i < 0) return;
    if (i < c->argc) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    struct kv_entry **slot;
    struct stream *s;
    if (!stream_write(c, c->argv[1], &slot, &s)) return;
    if (!s) {
        reply_int(&c->r, 0);
        return;
    }
    long long n = stream_trim(s, &a.trim);
    stream_commit(c, c->argv[1], slot, s, n > 0);
    if (n) notify(c, NOTIFY_STREAM, "xtrim", c->argv[1]);
    reply_int(&c->r, n);
}

/* ---------------------------------------------------------------------------
 * XLEN XRANGE XREVRANGE XDEL XSETID
 * ------------------------------------------------------------------------- */

static void cmd_xlen(struct cmd_ctx *c) {
    struct stream *s;
    if (!stream_read(c, c->argv[1], &s)) return;
    reply_int(&c->r, s ? (long long)s->length : 0);
}

/* A range bound: "(" makes it exclusive. */
static bool range_bound_or_reply(struct cmd_ctx *c, struct slice arg, uint64_t missing_seq, struct stream_id *id,
                                 bool *exclusive) {
    *exclusive = arg.len > 1 && arg.ptr[0] == '(';
    if (*exclusive) return stream_id_or_reply(c, (struct slice){ arg.ptr + 1, arg.len - 1 }, missing_seq, true, id, NULL);
    return stream_id_or_reply(c, arg, missing_seq, false, id, NULL);
}

static void xrange_generic(struct cmd_ctx *c, bool rev) {
    struct stream_id start, end;
    bool ex;
    if (!range_bound_or_reply(c, c->argv[rev ? 3 : 2], 0, &start, &ex)) return;
    if (ex && !stream_id_incr(&start)) {
        reply_error(&c->r, "ERR invalid start ID for the interval");
        return;
    }
    if (!range_bound_or_reply(c, c->argv[rev ? 2 : 3], UINT64_MAX, &end, &ex)) return;
    if (ex && !stream_id_decr(&end)) {
        reply_error(&c->r, "ERR invalid end ID for the interval");
        return;
    }
    long long count = -1;
    for (int j = 4; j < c->argc; j++) {
        if (is_arg(c->argv[j], "count") && j + 1 < c->argc) {
            if (!arg_ll_or_reply(c, c->argv[++j], &count)) return;
            if (count < 0) count = 0;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
    }
    struct stream *s;
    if (!stream_read(c, c->argv[1], &s)) return;
    if (!s) reply_array(&c->r, 0);
    else if (count == 0) reply_null_array(&c->r);
    else reply_stream_range(c, s, start, end, count < 0 ? 0 : (size_t)count, rev, NULL, NULL, 0);
}

static void cmd_xrange(struct cmd_ctx *c) { xrange_generic(c, false); }
static void cmd_xrevrange(struct cmd_ctx *c) { xrange_generic(c, true); }

static void cmd_xdel(struct cmd_ctx *c) {
    /* every ID is checked before anything is deleted */
    for (int i = 2; i < c->argc; i++) {
        struct stream_id id;
        if (!stream_id_or_reply(c, c->argv[i], 0, true, &id, NULL)) return;
    }
    struct kv_entry **slot;
    struct stream *s;
    if (!stream_write(c, c->argv[1], &slot, &s)) return;
    if (!s) {
        reply_int(&c->r, 0);
        return;
    }
    long long deleted = 0;
    for (int i = 2; i < c->argc; i++) {
        struct stream_id id;
        stream_id_parse(c->argv[i], 0, true, &id, NULL);
        deleted += stream_delete(s, id);
    }
    stream_commit(c, c->argv[1], slot, s, deleted > 0);
    if (deleted) notify(c, NOTIFY_STREAM, "xdel", c->argv[1]);
    reply_int(&c->r, deleted);
}

/* XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id] */
static void cmd_xsetid(struct cmd_ctx *c) {
    struct stream_id id, max_xdel = STREAM_ID_MIN;
    long long entries_added = -1;
    if (!stream_id_or_reply(c, c->argv[2], 0, true, &id, NULL)) return;
    for (int i = 3; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (is_arg(c->argv[i], "entriesadded") && more) {
            if (!arg_ll_or_reply(c, c->argv[i + 1], &entries_added)) return;
            if (entries_added < 0) {
                reply_error(&c->r, "ERR entries_added must be positive");
                return;
            }
            i++;
        } else if (is_arg(c->argv[i], "maxdeletedid") && more) {
            if (!stream_id_or_reply(c, c->argv[i + 1], 0, true, &max_xdel, NULL)) return;
            if (stream_id_cmp(id, max_xdel) < 0) {
                reply_error(&c->r, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
            i++;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
    }
    struct kv_entry **slot;
    struct stream *s;
    if (!stream_write(c, c->argv[1], &slot, &s)) return;
    if (!s) {
        reply_error(&c->r, ERR_NO_SUCH_KEY);
        return;
    }
    bool bad = false;
    if (stream_id_cmp(id, s->max_deleted_id) < 0) {
        reply_error(&c->r, "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id");
        bad = true;
    } else if (entries_added != -1 && s->length > (uint64_t)entries_added) {
        reply_error(&c->r, "ERR The entries_added specified in XSETID is smaller than the target stream length");
        bad = true;
    } else if (has_live_after(s, id)) {   /* the new ID may not be smaller than the greatest entry there */
        reply_error(&c->r, "ERR The ID specified in XSETID is smaller than the target stream top item");
        bad = true;
    }
    if (bad) {
        stream_commit(c, c->argv[1], slot, s, false);
        return;
    }
    s->last_id = id;
    if (entries_added != -1) s->entries_added = (uint64_t)entries_added;
    if (stream_id_cmp(max_xdel, STREAM_ID_MIN) != 0) s->max_deleted_id = max_xdel;
    stream_commit(c, c->argv[1], slot, s, true);
    notify(c, NOTIFY_STREAM, "xsetid", c->argv[1]);
    reply_ok(&c->r);
}

/* ---------------------------------------------------------------------------
 * XREAD and XREADGROUP
 * ------------------------------------------------------------------------- */

/* ">" for XREADGROUP: the entries never delivered to the group. */
#define ID_NEW STREAM_ID_MAX

struct read_args {
    long long timeout;          /* ms; -1: no BLOCK */
    long long count;            /* 0: all */
    int streams_arg, nstreams;
    struct slice group, consumer;
    bool has_group, noack;
};

static bool parse_read(struct cmd_ctx *c, struct read_args *a, bool group) {
    memset(a, 0, sizeof *a);
    a->timeout = -1;
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        struct slice o = c->argv[i];
        if (is_arg(o, "block") && more) {
            if (c->in_script) {
                reply_errorf(&c->r, "ERR %.*s command is not allowed with BLOCK option from scripts",
                             (int)c->argv[0].len, c->argv[0].ptr);
                return false;
            }
            if (!str_to_ll(c->argv[i + 1].ptr, c->argv[i + 1].len, &a->timeout)) {
                reply_error(&c->r, "ERR timeout is not an integer or out of range");
                return false;
            }
            if (a->timeout < 0) {
                reply_error(&c->r, "ERR timeout is negative");
                return false;
            }
            i++;
        } else if (is_arg(o, "count") && more) {
            if (!arg_ll_or_reply(c, c->argv[i + 1], &a->count)) return false;
            if (a->count < 0) a->count = 0;
            i++;
        } else if (is_arg(o, "streams") && more) {
            a->streams_arg = i + 1;
            int n = c->argc - a->streams_arg;
            if (n % 2) {
                reply_error(&c->r, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.");
                return false;
            }
            a->nstreams = n / 2;
            break;
        } else if (is_arg(o, "group") && more >= 2) {
            if (!group) {
                reply_error(&c->r, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return false;
            }
            a->has_group = true;
            a->group = c->argv[i + 1];
            a->consumer = c->argv[i + 2];
            i += 2;
        } else if (is_arg(o, "noack")) {
            if (!group) {
                reply_error(&c->r, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return false;
            }
            a->noack = true;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return false;
        }
    }
    if (!a->streams_arg) {
        reply_error(&c->r, ERR_SYNTAX);
        return false;
    }
    if (group && !a->has_group) {
        reply_error(&c->r, "ERR Missing GROUP option for XREADGROUP");
        return false;
    }
    return true;
}

/* The keys of XREAD/XREADGROUP (keys_fn): after STREAMS, the first half. */
static int xread_keys(int argc, const struct slice *argv, int *pos, int maxpos) {
    for (int i = 1; i < argc; i++) {
        if (!is_arg(argv[i], "streams")) continue;
        int n = argc - i - 1;
        if (n <= 0 || n % 2) return 0;
        int k = 0;
        for (int j = 0; j < n / 2 && k < maxpos; j++) pos[k++] = i + 1 + j;
        return k;
    }
    return 0;
}

static void xread_generic(struct cmd_ctx *c, bool xreadgroup) {
    struct read_args a;
    if (!parse_read(c, &a, xreadgroup)) return;
    int n = a.nstreams;
    struct stream_id small[8], *ids = n <= 8 ? small : rk_malloc((size_t)n * sizeof *ids);
    struct stream_cg *gsmall[8], **groups = n <= 8 ? gsmall : rk_calloc((size_t)n, sizeof *groups);
    struct stream *ssmall[8], **streams = n <= 8 ? ssmall : rk_calloc((size_t)n, sizeof *streams);
    /* what "$" meant at the first run, kept while the client waits */
    const struct stream_id *memo = c->rerun && c->block_memo && c->block_memo->len == (size_t)n * sizeof *ids
                                       ? (const struct stream_id *)c->block_memo->buf : NULL;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        struct slice key = c->argv[a.streams_arg + i], arg = c->argv[a.streams_arg + n + i];
        struct stream *s = NULL;
        groups[i] = NULL;
        bool other_type = false;
        if (c->rerun) {
            /* woken: a key that now holds another type is not ready for
             * XREAD, and gone for XREADGROUP */
            struct kv_entry *e = db_lookup(c, key, LOOKUP_NONE);
            other_type = e && entry_type(e) != OBJ_STREAM;
            s = e && !other_type ? entry_obj(e) : NULL;
        } else if (!stream_read(c, key, &s)) {
            ok = false;
            break;
        }
        streams[i] = s;
        if (a.has_group) {
            groups[i] = s ? stream_cg_find(s, a.group) : NULL;
            if (!groups[i]) {
                if (c->rerun && !c->timed_out && (!s || other_type))
                    reply_error(&c->r, "UNBLOCKED the stream key no longer exists");
                else if (c->rerun && !c->timed_out)
                    reply_error(&c->r, "NOGROUP the consumer group this client was blocked on no longer exists");
                else
                    reply_errorf(&c->r, "NOGROUP No such key '%.*s' or consumer group '%.*s' in XREADGROUP with GROUP option",
                                 (int)key.len, key.ptr, (int)a.group.len, a.group.ptr);
                ok = false;
                break;
            }
        }
        if (arg.len == 1 && arg.ptr[0] == '$') {
            if (xreadgroup) {
                reply_error(&c->r, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
                                   "history of this consumer by specifying a proper ID, or use the > ID to get new "
                                   "messages. The $ ID would just return an empty result set.");
                ok = false;
            } else {
                ids[i] = memo ? memo[i] : s ? s->last_id : STREAM_ID_MIN;
            }
        } else if (arg.len == 1 && arg.ptr[0] == '>') {
            if (!xreadgroup) {
                reply_error(&c->r, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                                   "<group> <consumer> option.");
                ok = false;
            } else {
                ids[i] = ID_NEW;
            }
        } else if (!stream_id_or_reply(c, arg, 0, true, &ids[i], NULL)) {
            ok = false;
        }
    }
    if (!ok) goto done;

    /* serve what can be served now */
    size_t at = c->r.out->len, served = 0;
    for (int i = 0; i < n; i++) {
        struct slice key = c->argv[a.streams_arg + i];
        struct stream *s = streams[i];
        if (!s) continue;
        struct stream_id gt = ids[i];
        bool now = false, history = false;
        if (groups[i]) {
            if (stream_id_cmp(gt, ID_NEW) != 0) {
                now = history = true;
            } else if (has_live_after(s, groups[i]->last_id)) {
                now = true;
                gt = groups[i]->last_id;
            }
        } else {
            now = has_live_after(s, gt);
        }
        if (!now) continue;
        served++;
        struct stream_id start = gt;
        stream_id_incr(&start);
        if (c->r.resp == 2) reply_array(&c->r, 2);
        reply_bulk_slice(&c->r, key);
        struct stream_consumer *consumer = NULL;
        if (groups[i]) {
            bool created;
            consumer = stream_consumer_get(c, groups[i], a.consumer, &created);
            if (created) notify(c, NOTIFY_STREAM, "xgroup-createconsumer", key);
        }
        long long count = a.count;
        if (c->rerun && !count) count = XREAD_BLOCKED_DEFAULT_COUNT;
        int flags = (a.noack ? STREAM_RANGE_NOACK : 0) | (history ? STREAM_RANGE_HISTORY : 0);
        reply_stream_range(c, s, start, STREAM_ID_MAX, (size_t)count, false, groups[i], consumer, flags);
        if (groups[i]) c->dirty++;
    }
    if (served) {
        if (c->r.resp == 2) reply_array_at(&c->r, at, served);
        else reply_map_at(&c->r, at, served);
        goto done;
    }
    if (a.timeout == -1 || c->timed_out) {
        reply_null_array(&c->r);
        goto done;
    }
    /* wait: remember what "$" meant, for the runs after a wake-up */
    if (c->block_memo && !memo) {
        c->block_memo->len = 0;
        rbuf_append(c->block_memo, ids, (size_t)n * sizeof *ids);
    }
    c->block_every = true;
    for (int i = 0; i < n; i++) ctx_block_on(c, c->argv[a.streams_arg + i]);
    c->block_timeout_ms = a.timeout;
done:
    if (ids != small) free(ids);
    if (groups != gsmall) free(groups);
    if (streams != ssmall) free(streams);
}

static void cmd_xread(struct cmd_ctx *c) { xread_generic(c, false); }
static void cmd_xreadgroup(struct cmd_ctx *c) { xread_generic(c, true); }

/* ---------------------------------------------------------------------------
 * Table
 * ------------------------------------------------------------------------- */

const struct command stream_commands[] = {
    CMD("xadd", -5, W | D | F, 1, 1, 1, cmd_xadd, "@write @stream @fast", "Appends a new entry to a stream", "5.0.0", "stream",
        "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
        "key:key [nomkstream:pure-token=NOMKSTREAM@6.2.0] [trim:block(strategy:oneof(maxlen:pure-token=MAXLEN minid:pure-token=MINID@6.2.0) "
        "[operator:oneof(equal:pure-token== approximately:pure-token=~)] threshold:string [count:integer=LIMIT@6.2.0])] "
        "id_or_auto:oneof(auto_id:pure-token=* id:string) data:block(field:string value:string)..."),
    CMD("xtrim", -4, W, 1, 1, 1, cmd_xtrim, "@write @stream @slow", "Trims the stream to (approximately if '~' is passed) a certain size", "5.0.0", "stream",
        "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
        "key:key trim:block(strategy:oneof(maxlen:pure-token=MAXLEN minid:pure-token=MINID@6.2.0) "
        "[operator:oneof(equal:pure-token== approximately:pure-token=~)] threshold:string [count:integer=LIMIT@6.2.0])"),
    CMD("xlen", 2, R | F, 1, 1, 1, cmd_xlen, "@read @stream @fast", "Return the number of entries in a stream", "5.0.0", "stream", "O(1)",
        "key:key"),
    CMD("xrange", -4, R, 1, 1, 1, cmd_xrange, "@read @stream @slow", "Return a range of elements in a stream, with IDs matching the specified IDs interval", "5.0.0", "stream",
        "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
        "key:key start:string end:string [count:integer=COUNT]"),
    CMD("xrevrange", -4, R, 1, 1, 1, cmd_xrevrange, "@read @stream @slow", "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "5.0.0", "stream",
        "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
        "key:key end:string start:string [count:integer=COUNT]"),
    CMD("xdel", -3, W | F, 1, 1, 1, cmd_xdel, "@write @stream @fast", "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "5.0.0", "stream",
        "O(1) for each single item to delete in the stream, regardless of the stream size.",
        "key:key id:string..."),
    CMD("xsetid", -3, W | D | F, 1, 1, 1, cmd_xsetid, "@write @stream @fast", "An internal command for replicating stream values", "5.0.0", "stream", "O(1)",
        "key:key last-id:string [entries_added:integer=ENTRIESADDED@7.0.0] [max_deleted_entry_id:string=MAXDELETEDID@7.0.0]"),
    CMD_KEYS("xread", -4, R | CMD_BLOCKING, 0, 0, 0, cmd_xread, xread_keys, "@read @stream @slow @blocking",
             "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", "5.0.0", "stream",
             "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
             "[count:integer=COUNT] [milliseconds:integer=BLOCK] streams:block(streams:pure-token=STREAMS key:key... id:string...)"),
    CMD_KEYS("xreadgroup", -7, W | CMD_BLOCKING, 0, 0, 0, cmd_xreadgroup, xread_keys, "@write @stream @slow @blocking",
             "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", "5.0.0", "stream",
             "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
             "group_block:block(group:pure-token=GROUP group:string consumer:string) [count:integer=COUNT] "
             "[milliseconds:integer=BLOCK] [noack:pure-token=NOACK] streams:block(streams:pure-token=STREAMS key:key... id:string...)"),
    CMD_END
};
