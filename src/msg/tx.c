/*
 * Cross-shard transactions. A command whose keys span shards (MSET, RENAME,
 * ...) or that needs every shard (KEYS, FLUSHALL, ...) runs on the client's
 * thread, the coordinator, while it holds every shard it needs:
 *
 *   1. acquire the shards one at a time in ascending id order: the own shard
 *      directly, others with XM_LOCK / XM_LOCKED;
 *   2. run the handler with ctx.multi set: db.h routes each key to its
 *      shard's tables and the coordinator reads and writes them directly;
 *   3. release every shard (XM_UNLOCK) and report to the connection layer
 *      (client_tx_done), which resumes the client from the worker loop.
 *
 * A shard that is held runs nothing against its keyspace: batches that
 * arrive are deferred and local clients that need it wait, both in order,
 * until the release. Because every transaction takes shards in the same
 * order and holds them only while running one command (never while waiting
 * for a client), there is no cycle of waits: no deadlock. The message
 * rings' release/acquire ordering hands the memory of a shard back and forth
 * with its lock. Single-shard commands pay one branch (is my shard held?).
 */
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdlib.h>

#include "ringkv/multi.h"

#include "msg_internal.h"

struct tx {
    struct worker *coord;
    struct tx_request req;   /* argv points into argbuf */
    uint64_t held;
    char *argbuf;
    struct rbuf *parts;
};

/* ---- the shard lock ---- */

static void tx_continue(struct tx *tx);
static void shard_released(struct worker *w);

/* The shard is now the transaction's. Per-shard work of the command (CLIENT
 * LIST gathering this thread's clients) runs here, on the owning thread. */
static void grant(struct worker *w, struct tx *tx) {
    w->lock_holder = tx;
    if (tx->req.cmd->per_shard) {
        struct cmd_ctx ctx;
        ctx_init(&ctx, w, tx->req.cmd, tx->req.argc, tx->req.argv, tx->req.db, tx->req.resp, &tx->parts[w->id]);
        if (tx->coord == w) ctx.client = rk_msg_client.live(w, tx->req.idx, tx->req.gen);
        tx->req.cmd->per_shard(&ctx);
    }
}

static void lock_enqueue(struct worker *w, struct xmsg *m) {
    m->next = NULL;
    *w->lock_queue_tail = m;
    w->lock_queue_tail = &m->next;
}

void tx_lock_request(struct worker *w, struct xmsg *m) {
    if (!w->lock_holder && !w->lock_queue) {
        grant(w, m->tx);
        m->type = XM_LOCKED;
        xshard_send(w, m->from, m);
    } else {
        lock_enqueue(w, m);
    }
}

void tx_unlock(struct worker *w) {
    w->lock_holder = NULL;
    struct xmsg *m = w->lock_queue;
    if (!m) {
        shard_released(w);
        return;
    }
    w->lock_queue = m->next;
    if (!w->lock_queue) w->lock_queue_tail = &w->lock_queue;
    struct tx *tx = m->tx;
    grant(w, tx);
    if (tx->coord == w) {
        free(m);
        tx->held |= 1ull << w->id;
        tx_continue(tx);
    } else {
        m->type = XM_LOCKED;
        xshard_send(w, m->from, m);
    }
}

/* Nobody holds the shard: run what waited for it, in arrival order. */
static void shard_released(struct worker *w) {
    while (!w->lock_holder && w->deferred) {
        struct xmsg *m = w->deferred;
        w->deferred = m->next;
        if (!w->deferred) w->deferred_tail = &w->deferred;
        execute_batch(w, m);
    }
    if (!w->lock_holder) rk_msg_client.shard_free(w);
}

/* ---- transactions ---- */

/* The transaction keeps its own copy of the arguments: the client's input
 * moves on (or goes away) while the shards are being acquired. */
void tx_start(struct worker *w, const struct tx_request *req) {
    struct tx *tx = rk_calloc(1, sizeof *tx);
    tx->req = *req;
    size_t bytes = 0;
    for (int i = 0; i < req->argc; i++) bytes += req->argv[i].len;
    tx->argbuf = rk_malloc(bytes ? bytes : 1);
    tx->req.argv = rk_malloc((size_t)req->argc * sizeof *tx->req.argv);
    char *p = tx->argbuf;
    for (int i = 0; i < req->argc; i++) {
        memcpy(p, req->argv[i].ptr, req->argv[i].len);
        tx->req.argv[i] = (struct slice){ p, req->argv[i].len };
        p += req->argv[i].len;
    }
    tx->coord = w;
    if (req->cmd->per_shard) tx->parts = rk_calloc(srv.nworkers, sizeof *tx->parts);
    w->stats.tx_started++;
    tx_continue(tx);   /* may finish at once when every shard was free */
}

static void tx_free(struct tx *tx) {
    if (tx->parts) {
        for (unsigned i = 0; i < srv.nworkers; i++) rbuf_free(&tx->parts[i]);
        free(tx->parts);
    }
    multi_queue_free(tx->req.exec);
    free(tx->req.argv);
    free(tx->argbuf);
    free(tx);
}

/* Every shard is held: run the command once over all of them, release
 * them, and report to the client. A blocking command of a client that has
 * gone does not run: it would take data for nobody. */
static void tx_finish(struct tx *tx) {
    struct worker *w = tx->coord;
    struct tx_request *req = &tx->req;
    struct client *c = rk_msg_client.live(w, req->idx, req->gen);
    struct tx_outcome out = { {0}, false, 0 };
    struct cmd_ctx ctx;
    ctx_init(&ctx, w, req->cmd, req->argc, req->argv, req->db, req->resp, &out.reply);
    ctx.multi = true;
    ctx.client = c;
    ctx.parts = tx->parts;
    if (req->cmd->flags & (CMD_BLOCKING | CMD_IDENTITY)) {
        ctx.waiter = &req->waiter;
        ctx.timed_out = req->timed_out;
        ctx.rerun = req->rerun;
    }
    if (req->track) ctx.reader = &req->reader;
    if (req->exec) {
        /* EXEC: the watch check is only sure now, with every shard held */
        if (c) exec_queued(&ctx, req->exec, c->watch_dirty);
    } else if (c || !req->blocking) {
        command_call(&ctx);
    }
    rk_arena = &w->shard.arena;   /* db.c pointed it at the shards the command touched */
    out.blocked = ctx.block;
    out.block_timeout_ms = ctx.block_timeout_ms;
    if (ctx.block) out.reply.len = 0;

    uint64_t others = tx->held & ~(1ull << w->id);
    while (others) {
        unsigned s = (unsigned)__builtin_ctzll(others);
        others &= others - 1;
        struct xmsg *m = rk_calloc(1, sizeof *m);
        m->type = XM_UNLOCK;
        m->from = (uint8_t)w->id;
        m->tx = tx;
        xshard_send(w, s, m);
    }
    bool own = tx->held & (1ull << w->id);
    if (c) rk_msg_client.tx_done(w, req, &out);
    rbuf_free(&out.reply);
    tx_free(tx);
    if (own) tx_unlock(w);
}

/* Take the next shard in ascending order; run once all are held. */
static void tx_continue(struct tx *tx) {
    struct worker *w = tx->coord;
    while (tx->held != tx->req.mask) {
        unsigned s = (unsigned)__builtin_ctzll(tx->req.mask & ~tx->held);
        struct xmsg *m = rk_calloc(1, sizeof *m);
        m->type = XM_LOCK;
        m->from = (uint8_t)w->id;
        m->shard = (uint8_t)s;
        m->tx = tx;
        if (s != w->id) {
            xshard_send(w, s, m);
            return;
        }
        if (w->lock_holder || w->lock_queue) {
            lock_enqueue(w, m);
            return;
        }
        free(m);
        grant(w, tx);
        tx->held |= 1ull << s;
    }
    tx_finish(tx);
}

/* A shard we asked for is ours. */
void tx_locked(struct worker *w, struct xmsg *m) {
    (void)w;
    struct tx *tx = m->tx;
    tx->held |= 1ull << m->shard;
    free(m);
    tx_continue(tx);
}

/* A batch that arrived while the shard is held (or behind deferred ones). */
void tx_defer_batch(struct worker *w, struct xmsg *m) {
    m->next = NULL;
    *w->deferred_tail = m;
    w->deferred_tail = &m->next;
}
