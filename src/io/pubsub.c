/*
 * Pub/sub, the connection side: who on this thread is subscribed to what,
 * the (P|S)SUBSCRIBE and (P|S)UNSUBSCRIBE commands, and writing messages
 * to subscribers.
 *
 * Each thread keeps its own subscribers: name -> the clients subscribed
 * (w->pubsub), and each client the set of names it is subscribed to
 * (c->subs). Publishers elsewhere learn only counts, from the directories
 * (pubsub_dir.h): a subscription that is a client's first or last to a
 * name changes the directory of every shard (channels, patterns) or of the
 * channel's shard (shard channels). Changes to other shards travel as
 * forwarded pubsub-dir commands whose empty replies take their place in
 * the client's reply order, so the (un)subscribe confirmation leaves only
 * once every directory knows: a PUBLISH sent after the client saw it, from
 * any thread, counts and reaches it.
 *
 * Messages and confirmations are pushes: they are written even under
 * CLIENT REPLY OFF, and they wait behind replies still out on other shards.
 * A subscriber whose unsent output passes the pubsub class of
 * client-output-buffer-limit (hard, or soft for its seconds) is closed,
 * as Redis does; its publishers never wait for it.
 */
#include "ringkv/config.h"
#include "ringkv/hashmap.h"
#include "ringkv/pubsub.h"
#include "ringkv/reply.h"
#include "ringkv/slot.h"
#include "ringkv/util.h"

#include <stdio.h>
#include <stdlib.h>

#include "io_internal.h"

/* The clients of one name on this thread. */
struct sub_list {
    uint32_t n, cap;
    struct client *c[];
};

struct pubsub_local {
    struct hashmap *subs[PS_KINDS];    /* name -> struct sub_list * */
    struct rbuf pending;               /* own directory changes waiting for the shard */
};

struct pubsub_client {
    struct hashmap *names[PS_KINDS];   /* the client's subscriptions, as sets */
};

static struct pubsub_local *local_of(struct worker *w) {
    if (!w->pubsub) {
        w->pubsub = rk_calloc(1, sizeof *w->pubsub);
        for (int k = 0; k < PS_KINDS; k++) w->pubsub->subs[k] = hashmap_new(true);
    }
    return w->pubsub;
}

static struct sub_list *list_of(struct pubsub_local *l, enum ps_kind k, struct slice name) {
    struct slice v;
    struct sub_list *sl = NULL;
    if (hashmap_get(l->subs[k], name, &v)) memcpy(&sl, v.ptr, sizeof sl);
    return sl;
}

static void list_add(struct pubsub_local *l, enum ps_kind k, struct slice name, struct client *c) {
    struct sub_list *sl = list_of(l, k, name), *old = sl;
    if (!sl || sl->n == sl->cap) {
        uint32_t cap = sl ? sl->cap * 2 : 4;
        sl = rk_realloc(sl, sizeof *sl + cap * sizeof sl->c[0]);
        if (!old) sl->n = 0;
        sl->cap = cap;
    }
    sl->c[sl->n++] = c;
    if (sl != old) hashmap_set(l->subs[k], name, (struct slice){ (const char *)&sl, sizeof sl });
}

static void list_remove(struct pubsub_local *l, enum ps_kind k, struct slice name, struct client *c) {
    struct sub_list *sl = list_of(l, k, name);
    if (!sl) return;
    for (uint32_t i = 0; i < sl->n; i++) {
        if (sl->c[i] != c) continue;
        sl->c[i] = sl->c[--sl->n];
        break;
    }
    if (sl->n == 0) {
        hashmap_delete(l->subs[k], name);
        free(sl);
    }
}

static struct pubsub_client *subs_of(struct client *c) {
    if (!c->subs) {
        c->subs = rk_calloc(1, sizeof *c->subs);
        for (int k = 0; k < PS_KINDS; k++) c->subs->names[k] = hashmap_new(false);
    }
    return c->subs;
}

/* What a confirmation reports: shard channels count apart (Redis 7.0). */
static long long sub_count(const struct client *c, enum ps_kind k) {
    if (!c->subs) return 0;
    if (k == PS_SHARD) return (long long)hashmap_count(c->subs->names[PS_SHARD]);
    return (long long)(hashmap_count(c->subs->names[PS_CHANNEL]) + hashmap_count(c->subs->names[PS_PATTERN]));
}

/* After every change of c's subscriptions: their number, the pub/sub
 * mode, and the bytes they take (client_memory). */
static void set_nsubs(struct client *c) {
    c->nsubs = (uint32_t)(sub_count(c, PS_CHANNEL) + sub_count(c, PS_SHARD));
    if (c->nsubs) c->flags |= CF_PUBSUB;
    else c->flags &= ~CF_PUBSUB;
    if (!c->subs && !c->rare) return;   /* nothing to count, and nowhere it was counted */
    struct client_rare *x = client_rare(c);
    x->subs_mem = 0;
    if (c->subs) {
        x->subs_mem = sizeof *c->subs;
        for (int k = 0; k < PS_KINDS; k++) x->subs_mem += hashmap_memory(c->subs->names[k]);
    }
}

/* ---- directories ---- */

static uint64_t directory_shards(enum ps_kind k, struct slice name) {
    if (k == PS_SHARD) return 1ull << shard_of_key(name.ptr, name.len);
    return srv.nworkers == 64 ? ~0ull : (1ull << srv.nworkers) - 1;
}

static void apply_own(struct worker *w, enum ps_kind k, struct slice name, int delta) {
    if (!w->shard.psdir) w->shard.psdir = ps_dir_new();
    ps_dir_update(w->shard.psdir, k, w->id, name, delta);
}

/* The own shard's directory is shard state: while a transaction of
 * another thread holds the shard (and may read it), a change made on the
 * way out (disconnect, RESET) waits for the release. Subscribe commands
 * wait for the shard instead, so their confirmation follows the change. */
static void own_directory(struct worker *w, enum ps_kind k, struct slice name, int delta) {
    if (!shard_is_held(w)) {
        apply_own(w, k, name, delta);
        return;
    }
    struct rbuf *p = &local_of(w)->pending;
    uint32_t len = (uint32_t)name.len;
    char hdr[6] = { (char)k, (char)(delta > 0 ? 1 : -1) };   /* kind, delta, length */
    memcpy(hdr + 2, &len, 4);
    rbuf_append(p, hdr, sizeof hdr);
    rbuf_append(p, name.ptr, name.len);
}

void pubsub_shard_free(struct worker *w) {
    if (!w->pubsub || !w->pubsub->pending.len) return;
    struct rbuf *p = &w->pubsub->pending;
    for (size_t off = 0; off < p->len;) {
        uint32_t len;
        memcpy(&len, p->buf + off + 2, 4);
        apply_own(w, (enum ps_kind)p->buf[off], (struct slice){ p->buf + off + 6, len }, (signed char)p->buf[off + 1]);
        off += 6 + len;
    }
    p->len = 0;
}

/* Tell the directories that this thread has one subscriber more or less
 * of name. Other shards learn it through a forwarded pubsub-dir; unless
 * the client is going away, its replies take their place in its order. */
static void tell_directories(struct client *c, enum ps_kind k, struct slice name, int delta) {
    struct worker *w = c->w;
    bool gone = c->flags & CF_CLOSING;
    char kind[2] = { (char)('0' + k), 0 }, thread[8], d[4];
    snprintf(thread, sizeof thread, "%u", w->id);
    snprintf(d, sizeof d, "%d", delta);
    struct slice argv[5] = {
        { "pubsub-dir", 10 }, { kind, 1 }, { thread, strlen(thread) }, { d, strlen(d) }, name,
    };
    for (uint64_t m = directory_shards(k, name); m; m &= m - 1) {
        unsigned t = (unsigned)__builtin_ctzll(m);
        if (t == w->id) {
            own_directory(w, k, name, delta);
            continue;
        }
        const struct fwd_origin o = { c->idx, c->gen, gone ? 0 : client_reserve_reply(c),
                                      (uint16_t)c->db, c->resp, gone, false, 0, false };
        forward_command(w, t, &pubsub_dir_command, 5, argv, &o);
        if (!gone) c->inflight++;
    }
}

/* ---- pushes ---- */

/* Write a push to c: behind its replies still out elsewhere, never cut by
 * CLIENT REPLY OFF. */
#define PUSH_BEGIN(c)                                   \
    bool queued_;                                       \
    struct rbuf *out_ = client_reply_target(c, &queued_); \
    size_t start_ = out_->len;                          \
    struct reply r = { out_, (c)->resp }
#define PUSH_END(c) client_reply_written(c, out_, start_, queued_, false)

static void push_confirm(struct client *c, const char *what, const struct slice *name, long long count) {
    PUSH_BEGIN(c);
    reply_push(&r, 3);
    reply_bulk_cstr(&r, what);
    if (name) reply_bulk_slice(&r, *name);
    else reply_null(&r);
    reply_int(&r, count);
    PUSH_END(c);
}

/* ---- the commands ---- */

static const struct ps_op {
    const char *name;
    enum ps_kind kind;
    bool subscribe;
} ps_ops[] = {
    { "subscribe", PS_CHANNEL, true }, { "unsubscribe", PS_CHANNEL, false },
    { "psubscribe", PS_PATTERN, true }, { "punsubscribe", PS_PATTERN, false },
    { "ssubscribe", PS_SHARD, true }, { "sunsubscribe", PS_SHARD, false },
};

static bool subscribe_one(struct client *c, enum ps_kind k, struct slice name) {
    struct pubsub_client *s = subs_of(c);
    if (!hashmap_set(s->names[k], name, (struct slice){ 0 })) return false;
    list_add(local_of(c->w), k, name, c);
    tell_directories(c, k, name, +1);
    set_nsubs(c);
    return true;
}

static bool unsubscribe_one(struct client *c, enum ps_kind k, struct slice name) {
    if (!c->subs || !hashmap_delete(c->subs->names[k], name)) return false;
    list_remove(local_of(c->w), k, name, c);
    tell_directories(c, k, name, -1);
    set_nsubs(c);
    return true;
}

/* Unsubscribe from every name of kind k; with confirm, one confirmation
 * each (or one with a null name when there were none). */
static void unsubscribe_all(struct client *c, enum ps_kind k, const char *what, bool confirm) {
    size_t n = 0;
    if (c->subs && hashmap_count(c->subs->names[k])) {
        /* copy the names out: unsubscribing changes the set */
        struct rbuf names = { 0 };
        struct hashmap_iter it = hashmap_iter_start(c->subs->names[k]);
        for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
            struct slice key = hm_elem_key(e);
            uint32_t len = (uint32_t)key.len;
            rbuf_append(&names, (const char *)&len, 4);
            rbuf_append(&names, key.ptr, key.len);
        }
        for (size_t off = 0; off < names.len; n++) {
            uint32_t len;
            memcpy(&len, names.buf + off, 4);
            struct slice name = { names.buf + off + 4, len };
            unsubscribe_one(c, k, name);
            if (confirm) push_confirm(c, what, &name, sub_count(c, k));
            off += 4 + len;
        }
        rbuf_free(&names);
    }
    if (confirm && n == 0) push_confirm(c, what, NULL, sub_count(c, k));
}

enum exec_result client_pubsub_command(struct client *c, const struct route *rt, int argc,
                                       struct slice *argv, bool drop) {
    (void)drop;   /* confirmations are pushes: CLIENT REPLY OFF does not cut them */
    const struct ps_op *op = NULL;
    for (size_t i = 0; i < sizeof ps_ops / sizeof *ps_ops; i++)
        if (strcmp(rt->cmd->name, ps_ops[i].name) == 0) op = &ps_ops[i];
    if (!op) return EXEC_DONE;
    /* this thread's own directory is shard state */
    if (shard_is_held(c->w)) {
        client_wait_on_shard(c);
        return EXEC_WAIT;
    }
    command_count_call(rt->cmd, false);
    if (op->subscribe) {
        for (int i = 1; i < argc; i++) {
            subscribe_one(c, op->kind, argv[i]);
            push_confirm(c, op->name, &argv[i], sub_count(c, op->kind));
        }
    } else if (argc == 1) {
        unsubscribe_all(c, op->kind, op->name, true);
    } else {
        for (int i = 1; i < argc; i++) {
            unsubscribe_one(c, op->kind, argv[i]);
            push_confirm(c, op->name, &argv[i], sub_count(c, op->kind));
        }
    }
    return EXEC_DONE;
}

/* In RESP2 a subscribed client may only (un)subscribe, PING, QUIT, RESET. */
bool client_pubsub_refuses(const struct client *c, const struct command *cmd) {
    if (c->resp != 2 || (cmd->flags & CMD_SUBSCRIBE)) return false;
    return cmd->proc != cmd_ping && cmd->proc != cmd_quit && cmd->proc != cmd_reset;
}

void client_pubsub_refusal(struct client *c, const struct command *cmd) {
    command_rejected(cmd);
    bool queued;
    struct rbuf *out = client_reply_target(c, &queued);
    size_t start = out->len;
    struct reply r = { out, c->resp };
    reply_errorf(&r, "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                 cmd->name);
    client_reply_written(c, out, start, queued, c->reply_off || c->reply_skip);
}

void client_pubsub_counts(const struct client *c, unsigned long long counts[PS_KINDS]) {
    for (int k = 0; k < PS_KINDS; k++) counts[k] = c->subs ? hashmap_count(c->subs->names[k]) : 0;
}

/* Whether c's user may still have every subscription c has (an ACL
 * change may have taken channels away: Redis then closes the client). */
bool client_subs_allowed(struct client *c) {
    if (!c->subs) return true;
    for (int k = 0; k < PS_KINDS; k++) {
        struct hashmap_iter it = hashmap_iter_start(c->subs->names[k]);
        for (const struct hm_elem *e; (e = hashmap_iter_next(&it));)
            if (!acl_channel_allowed(c->user, hm_elem_key(e), k == PS_PATTERN)) return false;
    }
    return true;
}

/* RESET, or the client is going away: leave everything, confirming nothing. */
void client_pubsub_reset(struct client *c) {
    if (!c->subs) return;
    unsubscribe_all(c, PS_CHANNEL, NULL, false);
    unsubscribe_all(c, PS_PATTERN, NULL, false);
    unsubscribe_all(c, PS_SHARD, NULL, false);
    for (int k = 0; k < PS_KINDS; k++) hashmap_free(c->subs->names[k]);
    free(c->subs);
    c->subs = NULL;
    set_nsubs(c);
}

/* At teardown, a client still connected: its own record of what it is
 * subscribed to goes, without unsubscribing (that would tell other
 * threads' directories, which are going too); the thread's lists go with
 * pubsub_worker_free. A client that closed unsubscribed in client_close. */
void client_pubsub_free(struct client *c) {
    if (!c->subs) return;
    for (int k = 0; k < PS_KINDS; k++) hashmap_free(c->subs->names[k]);
    free(c->subs);
    c->subs = NULL;
}

/* ---- delivery ---- */

static void deliver_to(struct client *c, const char *what, const struct slice *pattern,
                       struct slice channel, struct slice msg) {
    if (c->flags & (CF_CLOSING | CF_CLOSE_ASAP)) return;
    PUSH_BEGIN(c);
    reply_push(&r, pattern ? 4 : 3);
    reply_bulk_cstr(&r, what);
    if (pattern) reply_bulk_slice(&r, *pattern);
    reply_bulk_slice(&r, channel);
    reply_bulk_slice(&r, msg);
    PUSH_END(c);
}

static void deliver_list(struct sub_list *sl, const char *what, const struct slice *pattern,
                         struct slice channel, struct slice msg) {
    if (!sl) return;
    for (uint32_t i = 0; i < sl->n; i++) deliver_to(sl->c[i], what, pattern, channel, msg);
}

void pubsub_deliver(struct worker *w, enum ps_kind k, struct slice channel, struct slice msg) {
    if (!w->pubsub) return;
    struct pubsub_local *l = w->pubsub;
    if (k == PS_SHARD) {
        deliver_list(list_of(l, PS_SHARD, channel), "smessage", NULL, channel, msg);
    } else {
        deliver_list(list_of(l, PS_CHANNEL, channel), "message", NULL, channel, msg);
        if (hashmap_count(l->subs[PS_PATTERN])) {
            struct hashmap_iter it = hashmap_iter_start(l->subs[PS_PATTERN]);
            for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
                struct slice pat = hm_elem_key(e);
                if (!string_match(pat.ptr, pat.len, channel.ptr, channel.len, false)) continue;
                struct sub_list *sl;
                memcpy(&sl, hm_elem_val(e).ptr, sizeof sl);
                deliver_list(sl, "pmessage", &pat, channel, msg);
            }
        }
    }
}

void pubsub_worker_free(struct worker *w) {
    struct pubsub_local *l = w->pubsub;
    if (!l) return;
    for (int k = 0; k < PS_KINDS; k++) {
        struct hashmap_iter it = hashmap_iter_start(l->subs[k]);
        for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
            struct sub_list *sl;
            memcpy(&sl, hm_elem_val(e).ptr, sizeof sl);
            free(sl);
        }
        hashmap_free(l->subs[k]);
    }
    rbuf_free(&l->pending);
    free(l);
    w->pubsub = NULL;
}
