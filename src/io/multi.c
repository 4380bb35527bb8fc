/*
 * Transactions, the connection side: MULTI, EXEC, DISCARD, WATCH, UNWATCH,
 * and every command that arrives between MULTI and EXEC.
 *
 * Between MULTI and EXEC a command is checked by the router and queued
 * (+QUEUED); one the router refuses (unknown, arity) is answered with its
 * error and makes EXEC answer EXECABORT. EXEC runs the queue where every
 * shard it touches and every shard of a watched key is held:
 *
 *   - on this thread, when that is only our own shard;
 *   - forwarded whole, as one command, to the shard that owns every key
 *     when that is one other shard, every queued command could have been
 *     forwarded alone, nothing is watched and the client does not track:
 *     the owner runs it among the commands forwarded to it, in order, as it
 *     would run each of them, with no lock taken;
 *   - else as a cross-shard transaction. When every queued command could
 *     have been forwarded alone (keys, nothing of the connection), nothing
 *     is watched and the client does not track, that transaction answers
 *     into the client's reply order like a forwarded command
 *     (exec_in_order): the client need not wait for it once it has asked
 *     for all its shards, so a pipeline's EXECs join one transaction and
 *     their replies leave together (msg/tx.c). Otherwise the client waits
 *     for it (WAIT_TX).
 *
 * The watch check happens where the queue runs, under the shards' locks: a
 * touch of a watched key on another shard reaches us (XM_WATCH) before
 * that shard is granted to us, through the same FIFO ring.
 *
 * WATCH leaves a record with the client's watch epoch on each key (on its
 * shard, like a blocking command's waiter record). UNWATCH, EXEC, DISCARD
 * and RESET move the epoch on, which makes every earlier record stale.
 */
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <string.h>

#include "io_internal.h"
#include "controls.h"

#define ERR_EXECABORT "EXECABORT Transaction discarded because of previous errors."

static void reply_now(struct client *c, bool drop, void (*write)(struct reply *r, const char *s), const char *s) {
    bool queued;
    struct rbuf *out = client_reply_target(c, &queued);
    size_t start = out->len;
    struct reply r = { out, c->resp };
    write(&r, s);
    client_reply_written(c, out, start, queued, drop);
}

static void reply_ok_now(struct client *c, bool drop) { reply_now(c, drop, reply_simple, "OK"); }
static void reply_error_now(struct client *c, bool drop, const char *e) { reply_now(c, drop, reply_error, e); }

void client_unwatch(struct client *c) {
    c->watch_seq++;
    struct client_rare *x = c->rare;
    if (!x) return;
    x->watch_mask = 0;
    x->watch_dirty = false;
    rbuf_free(&x->watched_keys);
}

static size_t watched_len(const struct client *c) { return c->rare ? c->rare->watched_keys.len : 0; }

/* Add WATCH's keys (in the current database) to the client's list, once
 * each, as Redis's watchForKey. */
static void remember_watched(struct client *c, int argc, const struct slice *argv) {
    uint16_t db = (uint16_t)c->db;
    struct rbuf *keys = &client_rare(c)->watched_keys;
    for (int i = 1; i < argc; i++) {
        struct slice key = argv[i];
        bool known = false;
        for (size_t off = 0; !known && off < keys->len;) {
            uint16_t d;
            uint32_t len;
            memcpy(&d, keys->buf + off, sizeof d);
            memcpy(&len, keys->buf + off + sizeof d, sizeof len);
            const char *p = keys->buf + off + sizeof d + sizeof len;
            known = d == db && len == key.len && memcmp(p, key.ptr, len) == 0;
            off += sizeof d + sizeof len + len;
        }
        if (known) continue;
        uint32_t len = (uint32_t)key.len;
        rbuf_append(keys, &db, sizeof db);
        rbuf_append(keys, &len, sizeof len);
        rbuf_append(keys, key.ptr, key.len);
    }
}

/* EXEC hands the watched keys to the queue, to check them for expiry
 * where they are held. */
static void queue_watched(struct client *c, struct multi_queue *q) {
    q->watcher = (struct block_record){ c->w->id, c->idx, c->gen, c->watch_seq };
    if (c->rare) rbuf_append(&q->watched, c->rare->watched_keys.buf, c->rare->watched_keys.len);
}

static void discard(struct client *c) {
    multi_queue_free(c->multi);
    c->multi = NULL;
    client_unwatch(c);
}

void client_reset_transaction(struct client *c) { discard(c); }

void client_watch_touched(struct worker *w, const struct block_record *r) {
    struct client *c = client_live(w, r->idx, r->gen);
    if (c && c->watch_seq == r->seq) client_rare(c)->watch_dirty = true;
}

/* A shard's write touched a key a client watches: tell it where it lives.
 * Active expiry runs on the shard's own thread outside any command
 * (ctx->worker NULL). */
void watch_notify(struct cmd_ctx *ctx, const struct block_record *r) {
    struct worker *w = ctx->worker ? ctx->worker : &srv.workers[ctx->shard->id];
    if (r->worker == w->id) {
        client_watch_touched(w, r);
        return;
    }
    struct xmsg *m = rk_calloc(1, sizeof *m);
    m->type = XM_WATCH;
    m->from = (uint8_t)w->id;
    m->ready = *r;
    xshard_send(w, r->worker, m);
}

static enum exec_result watch(struct client *c, const struct route *rt, int argc, struct slice *argv, bool drop) {
    if (c->multi) {
        reply_error_now(c, drop, "ERR WATCH inside MULTI is not allowed");
        return EXEC_DONE;
    }
    if (rt->kind == ROUTE_LOCAL) {
        if (shard_busy(c->w)) {
            client_wait_on_shard(c);
            return EXEC_WAIT;
        }
        client_rare(c)->watch_mask |= 1ull << c->w->id;
        remember_watched(c, argc, argv);
        client_run_local(c, rt->cmd, argc, argv, drop);
        return EXEC_DONE;
    }
    if (c->inflight) {   /* the transaction must not overtake forwarded commands */
        c->wait = WAIT_FORWARDS;
        return EXEC_WAIT;
    }
    client_rare(c)->watch_mask |= rt->mask;
    remember_watched(c, argc, argv);
    client_start_tx(c, rt->cmd, rt->mask, argc, argv, drop, NULL);
    return EXEC_DONE;
}

#define EXEC_FWD_STACK 64

/* The queue as one forwarded command: its reply takes its place in the
 * client's reply order like any forwarded command's. */
static void exec_forward(struct client *c, const struct route *rt, const struct multi_queue *q, int argc,
                         struct slice *argv, bool drop) {
    struct worker *w = c->w;
    int fargc = exec_forward_argc(q);
    struct slice small[EXEC_FWD_STACK];
    char small_blob[EXEC_FWD_STACK * EXEC_FWD_DESC];
    bool big = fargc > EXEC_FWD_STACK;   /* q->n < fargc */
    struct slice *fargv = big ? rk_malloc((size_t)fargc * sizeof *fargv) : small;
    char *blob = big ? rk_malloc(q->n * EXEC_FWD_DESC) : small_blob;
    exec_forward_argv(q, fargv, blob);
    if (RK_UNLIKELY(client_controls_on())) client_monitor_exec(c, q, true, c->db, argc, argv);
    command_count_call(rt->cmd, false);
    const struct fwd_origin o = { c->idx, c->gen, client_reserve_reply(c), (uint16_t)c->db, c->resp, drop, false, 0, (c->flags & CF_NO_TOUCH) != 0 };
    forward_command(w, (unsigned)(q->fwd - 1), &exec_forwarded_command, fargc, fargv, &o);
    if (big) {
        free(fargv);
        free(blob);
    }
    if (++c->inflight >= CLIENT_MAX_INFLIGHT) c->wait = WAIT_FORWARDS;
}

/* EXEC waits (unconsumed) for the client's replies still out; a CLIENT
 * REPLY SKIP before it must still apply when it runs again. */
static void wait_forwards(struct client *c, bool drop) {
    c->wait = WAIT_FORWARDS;
    if (drop && !c->reply_off) c->reply_skip = 1;
}

/* tx.c: a client that waited for its in-order EXEC may go on. */
static void exec_go_on(struct worker *w, uint32_t idx, uint32_t gen) {
    struct client *c = client_live(w, idx, gen);
    if (c && c->wait == WAIT_FORWARDS && c->inflight < CLIENT_MAX_INFLIGHT) client_schedule_resume(c);
}

/* A cross-shard EXEC that needs nothing of the connection: a transaction
 * that answers into the client's reply order, so its reply waits for the
 * pipeline's other replies and leaves with them; the client goes on with
 * its next commands at once when the transaction has asked for all its
 * shards (tx_start_exec), else waits until it has (exec_go_on) or its
 * reply is back. */
static enum exec_result exec_in_order(struct client *c, const struct route *rt, struct multi_queue *q,
                                      uint64_t mask, int argc, struct slice *argv, bool drop) {
    struct worker *w = c->w;
    if (!tx_exec_may_follow(w, c->idx, c->gen, c->inflight, mask)) {
        wait_forwards(c, drop);   /* it must not overtake them */
        return EXEC_WAIT;
    }
    if (RK_UNLIKELY(client_controls_on())) client_monitor_exec(c, q, true, c->db, argc, argv);
    command_count_call(rt->cmd, false);
    q->by_seq = true;
    q->reply_seq = client_reserve_reply(c);
    q->go_on = exec_go_on;
    c->inflight++;
    c->multi = NULL;   /* the transaction owns the queue now */
    client_unwatch(c);
    const struct tx_request req = { .idx = c->idx, .gen = c->gen, .db = c->db, .resp = c->resp, .drop = drop, .no_touch = (c->flags & CF_NO_TOUCH) != 0,
                                    .cmd = rt->cmd, .mask = mask, .argc = argc, .argv = argv, .exec = q };
    bool go_on = tx_start_exec(w, &req);
    if ((!go_on && c->inflight) || c->inflight >= CLIENT_MAX_INFLIGHT) c->wait = WAIT_FORWARDS;
    return EXEC_DONE;
}

static enum exec_result exec(struct client *c, const struct route *rt, int argc, struct slice *argv, bool drop) {
    struct multi_queue *q = c->multi;
    if (!q) {
        command_count_call(rt->cmd, true);
        reply_error_now(c, drop, "ERR EXEC without MULTI");
        return EXEC_DONE;
    }
    if (q->aborted) {
        discard(c);
        command_count_call(rt->cmd, true);
        reply_error_now(c, drop, ERR_EXECABORT);
        return EXEC_DONE;
    }
    if (RK_UNLIKELY(!acl_user_open(c->user))) client_acl_recheck_queue(c, q);
    struct worker *w = c->w;
    uint64_t self = 1ull << w->id;
    uint64_t mask = q->mask | (c->rare ? c->rare->watch_mask : 0);
    if ((mask & ~self) == 0) {
        if (mask && shard_busy(w)) {
            client_wait_on_shard(c);
            return EXEC_WAIT;
        }
        bool queued;
        struct rbuf *out = client_reply_target(c, &queued);
        size_t start = out->len;
        struct cmd_ctx ctx;
        ctx_init(&ctx, w, rt->cmd, argc, argv, c->db, c->resp, out);
        ctx.client = c;
        ctx.reader = c->trk_reader;
        ctx.no_touch = c->flags & CF_NO_TOUCH;
        queue_watched(c, q);
        exec_queued(&ctx, q, client_watch_dirty(c));
        if (RK_UNLIKELY(client_controls_on())) client_monitor_exec(c, q, !client_watch_dirty(c), ctx.db, argc, argv);
        command_count_call(rt->cmd, false);
        client_reply_written(c, out, start, queued, drop);
        discard(c);
        return EXEC_DONE;
    }
    if (q->fwd > 0 && mask == 1ull << (q->fwd - 1) && !watched_len(c) && !(c->flags & CF_TRACKING)) {
        exec_forward(c, rt, q, argc, argv, drop);
        discard(c);
        return EXEC_DONE;
    }
    if (q->plain && !watched_len(c) && !(c->flags & CF_TRACKING)) return exec_in_order(c, rt, q, mask, argc, argv, drop);
    if (c->inflight) {
        wait_forwards(c, drop);
        return EXEC_WAIT;
    }
    queue_watched(c, q);
    c->multi = NULL;   /* the transaction owns the queue now; unwatched when it is done */
    command_count_call(rt->cmd, false);
    client_start_tx(c, rt->cmd, mask, argc, argv, drop, q);
    return EXEC_DONE;
}

enum exec_result client_multi_command(struct client *c, const struct route *rt, int argc,
                                      struct slice *argv, bool drop) {
    const struct command *cmd = rt->cmd;
    if (c->multi && (cmd->flags & CMD_NO_MULTI) && !(cmd->flags & CMD_TXCTL)) {
        c->multi->aborted = true;   /* as a refused command: EXECABORT */
        reply_error_now(c, drop, "ERR Command not allowed inside a transaction");
        return EXEC_DONE;
    }
    if (c->multi && (!(cmd->flags & CMD_TXCTL) || cmd->proc == cmd_unwatch)) {
        struct multi_queue *q = c->multi;
        multi_queue_add(q, cmd, argc, argv, rt->mask, rt->keyspace);
        int fwd = rt->kind == ROUTE_FORWARD ? (int)rt->target + 1 : -1;
        bool plain = rt->mask && !(cmd->flags & (CMD_ALLSHARDS | CMD_BLOCKING | CMD_IDENTITY)) && !cmd->per_shard;
        if (q->n == 1) {
            q->fwd = fwd;
            q->plain = plain;
        } else {
            if (q->fwd != fwd) q->fwd = -1;
            q->plain &= plain;
        }
        reply_now(c, drop, reply_simple, "QUEUED");
        return EXEC_DONE;
    }
    if (cmd->proc != cmd_watch && cmd->proc != cmd_exec)   /* those count where they run */
        command_count_call(cmd, (cmd->proc == cmd_multi && c->multi) || (cmd->proc == cmd_discard && !c->multi));
    if (cmd->proc == cmd_multi) {
        if (c->multi) {
            reply_error_now(c, drop, "ERR MULTI calls can not be nested");
        } else {
            c->multi = rk_calloc(1, sizeof *c->multi);
            reply_ok_now(c, drop);
        }
        return EXEC_DONE;
    }
    if (cmd->proc == cmd_discard) {
        if (!c->multi) {
            reply_error_now(c, drop, "ERR DISCARD without MULTI");
        } else {
            discard(c);
            reply_ok_now(c, drop);
        }
        return EXEC_DONE;
    }
    if (cmd->proc == cmd_unwatch) {
        client_unwatch(c);
        reply_ok_now(c, drop);
        return EXEC_DONE;
    }
    if (cmd->proc == cmd_watch) return watch(c, rt, argc, argv, drop);
    if (cmd->proc == cmd_exec) return exec(c, rt, argc, argv, drop);
    /* not a transaction command and not in MULTI: cannot happen */
    client_run_local(c, cmd, argc, argv, drop);
    return EXEC_DONE;
}
