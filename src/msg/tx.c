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
 * order and holds them only while running its commands (never while
 * waiting for a client), there is no cycle of waits: no deadlock. The
 * message rings' release/acquire ordering hands the memory of a shard back
 * and forth with its lock. Single-shard commands pay one branch (is my
 * shard held?).
 *
 * Group commit: a transaction that starts while an earlier one of this
 * thread is still acquiring its shards, and needs no shard that one does
 * not, joins it instead of taking the locks again. Once every shard is
 * held the members run one after another, in the order they started, and
 * the shards are released once. That is the order they would have run in
 * one by one (each member waited behind the one before it on this thread's
 * own shard or its first remote one); only work of other threads that
 * queued for a shard in the meantime, which nobody has seen an answer to
 * yet, runs after them rather than between them. So a thread pays one lock
 * round trip per shard for all its clients' transactions of one loop
 * iteration or so, not one per transaction. A command with a per_shard
 * hook (CLIENT LIST/KILL) never joins and is never joined: its hook runs
 * as each shard is granted, for that command alone.
 *
 * EXEC answered in reply order (tx_start_exec, for io/multi.c): the reply
 * of an EXEC whose queue needs nothing of the connection goes back like a
 * forwarded command's, into the position the client reserved. Its client
 * may even go on parsing (more EXECs join the same transaction) once the
 * transaction has asked for every shard it needs, because whatever the
 * client sends next then runs after it on each of them: a command for
 * another shard travels behind our XM_LOCK on the same FIFO ring and finds
 * that shard held (deferred) or our request queued first; a local command
 * finds the shard held. The own shard counts as asked for while it is
 * "reserved" (soft hold): local commands and arriving batches wait as if
 * it were held, but other threads' transactions are still granted it (a
 * reservation that made them wait, while we wait for a lower shard, would
 * be a cycle), and it is back to reserved when they release it. A thread
 * reserves its shard only while no local client and no batch waits for
 * it, so a stream of transactions cannot starve them.
 */
#include "ringkv/aof.h"
#include "ringkv/clock.h"
#include "ringkv/latency.h"
#include "ringkv/ring.h"
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <string.h>

#include "ringkv/multi.h"

#include "msg_internal.h"

/* One client's command in a transaction. */
struct tx_item {
    struct tx_item *next;
    struct tx_request req;   /* argv: one allocation, the slices then their bytes */
    bool counted;            /* an EXEC whose client went on: in pipe_tables */
    bool waiting;            /* an EXEC whose client waits until every shard is asked for */
};

struct tx {
    struct worker *coord;
    uint64_t mask, held;     /* shards to hold (every member's within mask), and held */
    uint64_t requested;      /* held, queued for, or asked for (XM_LOCK sent) */
    uint64_t serial;         /* this thread's count of transactions, to recognise it */
    bool soft;               /* reserves the coordinator's own shard (soft hold) */
    bool in_order;           /* has EXECs answered in reply order: may reserve */
    unsigned nwaiting;       /* members whose client waits (item.waiting) */
    struct tx_item *items, **tail;   /* members, in the order they started */
    struct rbuf *parts;      /* per_shard: a transaction of that one command */
    uint64_t started;        /* clock ticks when it began asking, while the latency monitor is on */
};

/* The coordinating thread's transaction still acquiring its shards that
 * later ones may join (NULL: none). Only that thread starts, continues and
 * finishes its transactions. */
static _Thread_local struct tx *tx_open;
static _Thread_local uint64_t tx_serial;

/* lock_holder of a shard that nobody holds but this thread's transactions
 * reserve (soft_holds of them). */
static struct tx soft_marker;
static _Thread_local unsigned soft_holds;

/* Per client of a thread (by idx): how many of its EXECs it went on past,
 * all in the transaction numbered serial. Indexed by worker; only that
 * worker touches its table. */
struct pipe_ref {
    uint32_t gen, n;
    uint64_t serial;
};
static struct pipe_table {
    struct pipe_ref *refs;
    uint32_t cap;
} pipe_tables[RK_MAX_THREADS];

static void asked_all_release(struct tx *tx);

/* ---- the shard lock ---- */

static void tx_continue(struct tx *tx);
static void shard_released(struct worker *w);

/* The shard is now the transaction's. Per-shard work of the command (CLIENT
 * LIST gathering this thread's clients) runs here, on the owning thread. */
static void grant(struct worker *w, struct tx *tx) {
    aof_seal();   /* this shard's records so far go before the transaction's */
    w->lock_holder = tx;
    if (tx->parts) {
        const struct tx_request *req = &tx->items->req;
        struct cmd_ctx ctx;
        ctx_init(&ctx, w, req->cmd, req->argc, req->argv, req->db, req->resp, &tx->parts[w->id]);
        if (tx->coord == w) ctx.client = rk_msg_client.live(w, req->idx, req->gen);
        ctx.no_touch = req->no_touch;
        req->cmd->per_shard(&ctx);
    }
}

static void lock_enqueue(struct worker *w, struct xmsg *m) {
    m->next = NULL;
    *w->lock_queue_tail = m;
    w->lock_queue_tail = &m->next;
}

/* Nobody holds the shard (a reservation does not count) and nobody queues. */
static bool own_free(const struct worker *w) {
    return (!w->lock_holder || w->lock_holder == &soft_marker) && !w->lock_queue;
}

/* The coordinator's own shard is granted to its transaction tx. */
static void own_granted(struct worker *w, struct tx *tx) {
    tx->held |= 1ull << w->id;
    tx->requested |= 1ull << w->id;
    if (tx->soft) {
        tx->soft = false;
        soft_holds--;
    }
}

void tx_lock_request(struct worker *w, struct xmsg *m) {
    if (own_free(w)) {
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
        if (soft_holds) w->lock_holder = &soft_marker;   /* reserved again */
        else shard_released(w);
        return;
    }
    w->lock_queue = m->next;
    if (!w->lock_queue) w->lock_queue_tail = &w->lock_queue;
    struct tx *tx = m->tx;
    grant(w, tx);
    if (tx->coord == w) {
        free(m);
        own_granted(w, tx);
        tx_continue(tx);
    } else {
        m->type = XM_LOCKED;
        xshard_send(w, m->from, m);
    }
}

/* A batch waiting for its turn holds no reply buffer: a recycled batch
 * brings its last one along, and kept it would count in used_memory for
 * every batch that waits. */
static void drop_idle_replies(struct xmsg *m) {
    if (!m->rep.len) rbuf_free(&m->rep);
}

/* Nobody holds the shard: run what waited for it, in arrival order. A
 * batch cut short (forward.c) goes back to the head and on from the next
 * poll (tx_resume_deferred); local clients wait until all have run. */
static void shard_released(struct worker *w) {
    while (!w->lock_holder && w->deferred) {
        struct xmsg *m = w->deferred;
        w->deferred = m->next;
        if (!w->deferred) w->deferred_tail = &w->deferred;
        if (!execute_batch(w, m)) {
            drop_idle_replies(m);
            m->next = w->deferred;
            w->deferred = m;
            if (!m->next) w->deferred_tail = &m->next;
            return;
        }
    }
    if (!w->lock_holder) rk_msg_client.shard_free(w);
}

bool tx_resume_deferred(struct worker *w) {
    if (w->lock_holder || !w->deferred) return false;
    shard_released(w);
    return true;
}

/* ---- transactions ---- */

/* The transaction keeps its own copy of the arguments: the client's input
 * moves on (or goes away) while the shards are being acquired. */
static struct tx_item *item_new(struct worker *w, const struct tx_request *req) {
    struct tx_item *it = rk_malloc(sizeof *it);
    it->next = NULL;
    it->req = *req;
    it->counted = it->waiting = false;
    size_t bytes = 0;
    for (int i = 0; i < req->argc; i++) bytes += req->argv[i].len;
    /* one allocation: the argument slices, then their bytes */
    it->req.argv = rk_malloc((size_t)req->argc * sizeof *it->req.argv + (bytes ? bytes : 1));
    char *p = (char *)(it->req.argv + req->argc);
    for (int i = 0; i < req->argc; i++) {
        memcpy(p, req->argv[i].ptr, req->argv[i].len);
        it->req.argv[i] = (struct slice){ p, req->argv[i].len };
        p += req->argv[i].len;
    }
    w->stats.tx_started++;
    return it;
}

/* The open transaction tx can take it (NULL: start one). */
static struct tx *joinable(const struct tx_request *req) {
    struct tx *open = tx_open;
    return open && !req->cmd->per_shard && (req->mask & ~open->mask) == 0 ? open : NULL;
}

static void join(struct tx *tx, struct tx_item *it) {
    *tx->tail = it;   /* runs with the open transaction, after its members */
    tx->tail = &it->next;
}

static struct tx *tx_new(struct worker *w, struct tx_item *it) {
    struct tx *tx = rk_calloc(1, sizeof *tx);
    tx->coord = w;
    tx->mask = it->req.mask;
    tx->serial = ++tx_serial;
    tx->items = it;
    tx->tail = &it->next;
    if (RK_UNLIKELY(latency_monitor_on())) tx->started = clock_ticks();
    if (it->req.cmd->per_shard) tx->parts = rk_calloc(srv.nworkers, sizeof *tx->parts);
    else tx_open = tx;
    return tx;
}

void tx_start(struct worker *w, const struct tx_request *req) {
    struct tx_item *it = item_new(w, req);
    struct tx *open = joinable(req);
    if (open) join(open, it);
    else tx_continue(tx_new(w, it));   /* may finish at once when every shard was free */
}

bool tx_exec_may_follow(struct worker *w, uint32_t idx, uint32_t gen, uint32_t inflight, uint64_t mask) {
    if (!inflight) return true;
    const struct tx *open = tx_open;
    const struct pipe_table *t = &pipe_tables[w->id];
    if (!open || (mask & ~open->mask) || idx >= t->cap) return false;
    const struct pipe_ref *r = &t->refs[idx];
    return r->gen == gen && r->serial == open->serial && r->n == inflight;
}

/* Every shard tx needs is held, queued for or asked for, its own shard
 * possibly reserved now: its clients' next commands run after it. */
static bool asked_all(struct tx *tx) {
    struct worker *w = tx->coord;
    uint64_t own = 1ull << w->id;
    uint64_t missing = tx->mask & ~tx->requested;
    if (missing == own && !tx->soft && tx->in_order && !w->shard_waiters && !w->deferred) {
        tx->soft = true;   /* reserve our shard: see the top of the file */
        soft_holds++;
        if (!w->lock_holder) w->lock_holder = &soft_marker;
    }
    if (tx->soft) missing &= ~own;
    return missing == 0;
}

/* The EXEC's client goes on past it: count it for tx_exec_may_follow. */
static void count_item(struct tx *tx, struct tx_item *it) {
    struct pipe_table *t = &pipe_tables[tx->coord->id];
    uint32_t idx = it->req.idx;
    if (idx >= t->cap) {
        uint32_t cap = t->cap ? t->cap : 64;
        while (cap <= idx) cap *= 2;
        t->refs = rk_realloc(t->refs, cap * sizeof *t->refs);
        memset(t->refs + t->cap, 0, (cap - t->cap) * sizeof *t->refs);
        t->cap = cap;
    }
    struct pipe_ref *r = &t->refs[idx];
    if (r->gen != it->req.gen || r->serial != tx->serial) *r = (struct pipe_ref){ it->req.gen, 0, tx->serial };
    r->n++;
    it->counted = true;
}

/* After another request: once every shard is asked for, the clients that
 * waited may go on. */
static void asked_all_release(struct tx *tx) {
    if (!tx->nwaiting || !asked_all(tx)) return;
    tx->nwaiting = 0;
    for (struct tx_item *it = tx->items; it; it = it->next) {
        if (!it->waiting) continue;
        it->waiting = false;
        count_item(tx, it);
        it->req.exec->go_on(tx->coord, it->req.idx, it->req.gen);
    }
}

bool tx_start_exec(struct worker *w, const struct tx_request *req) {
    struct tx_item *it = item_new(w, req);
    struct tx *tx = joinable(req);
    if (tx) {
        join(tx, it);
        tx->in_order = true;
    } else {
        tx = tx_new(w, it);
        tx->in_order = true;
        uint64_t serial = tx->serial;
        tx_continue(tx);
        if (tx_open == NULL || tx_open->serial != serial) return true;   /* it ran: answered */
    }
    if (!asked_all(tx)) {
        it->waiting = true;
        tx->nwaiting++;
        return false;
    }
    count_item(tx, it);
    return true;
}

static void tx_free(struct tx *tx) {
    if (tx->parts) {
        for (unsigned i = 0; i < srv.nworkers; i++) rbuf_free(&tx->parts[i]);
        free(tx->parts);
    }
    for (struct tx_item *it = tx->items, *next; it; it = next) {
        next = it->next;
        multi_queue_free(it->req.exec);
        free(it->req.argv);   /* and the argument bytes */
        free(it);
    }
    free(tx);
}

/* Every shard is held: run one member, report to its client. A blocking
 * command or an EXEC of a client that has gone does not run: it would take
 * data for nobody (the EXEC's watch check needs the client). */
static void run_item(struct tx *tx, struct tx_item *it, struct tx_outcome *out) {
    struct worker *w = tx->coord;
    struct tx_request *req = &it->req;
    struct client *c = rk_msg_client.live(w, req->idx, req->gen);
    out->reply.len = 0;
    struct cmd_ctx ctx;
    ctx_init(&ctx, w, req->cmd, req->argc, req->argv, req->db, req->resp, &out->reply);
    ctx.multi = true;
    ctx.held = tx->held;
    ctx.client = c;
    ctx.no_touch = req->no_touch;
    ctx.parts = tx->parts;
    if (req->cmd->flags & (CMD_BLOCKING | CMD_IDENTITY)) {
        ctx.waiter = &req->waiter;
        ctx.timed_out = req->timed_out;
        ctx.rerun = req->rerun;
        ctx.block_memo = req->block_memo;
    }
    if (req->track) ctx.reader = &req->reader;
    if (req->exec && req->exec->by_seq) {
        /* its client may have gone on (another SELECT, ...): run as for
         * nobody's connection, answer into the reserved position */
        ctx.client = NULL;
        ctx.origin_worker = w->id;
        ctx.origin_idx = req->idx;
        ctx.origin_gen = req->gen;
        if (c) exec_queued(&ctx, req->exec, false);
        rk_arena = &w->shard.arena;
        if (it->counted) {
            struct pipe_ref *r = &pipe_tables[w->id].refs[req->idx];
            if (r->gen == req->gen && r->serial == tx->serial) r->n--;
        }
        if (c) {
            const struct shard_reply rep = { req->exec->reply_seq, req->drop ? 0 : (uint32_t)out->reply.len,
                                             out->reply.buf };
            rk_msg_client.replies_ready(w, req->idx, req->gen, &rep, 1);
        }
        return;
    }
    if (req->exec) {
        /* EXEC: the watch check is only sure now, with every shard held */
        if (c) exec_queued(&ctx, req->exec, client_watch_dirty(c));
    } else if (c || !req->blocking) {
        ctx.may_rerun = req->cmd->flags & CMD_SCRIPT;
        command_call(&ctx);
    }
    rk_arena = &w->shard.arena;   /* db.c pointed it at the shards the command touched */
    if (RK_UNLIKELY(ctx.rerun_mask)) {   /* a script stopped: it runs again (tx_finish) */
        req->mask = ctx.rerun_mask;
        out->rerun = true;
        return;
    }
    out->blocked = ctx.block;
    out->block_timeout_ms = ctx.block_timeout_ms;
    if (ctx.block) out->reply.len = 0;
    if (c) rk_msg_client.tx_done(w, req, out);
    else if (req->done) req->done(w, req->done_arg, out);
}

/* Every shard is held: run the members in order, release the shards once,
 * report to each client. */
static void tx_finish(struct tx *tx) {
    struct worker *w = tx->coord;
    if (tx_open == tx) tx_open = NULL;
    /* ringkv's own event: how long the transaction waited for its shards */
    if (RK_UNLIKELY(tx->started))
        latency_add_sample_if_needed("shard-lock-wait", ticks_to_ns(clock_ticks() - tx->started) / 1000000);
    struct tx_outcome out = { .reply = {0} };
    struct tx_item *again = NULL, **again_tail = &again;
    for (struct tx_item **at = &tx->items; *at;) {
        struct tx_item *it = *at;
        out.rerun = false;
        run_item(tx, it, &out);
        if (RK_LIKELY(!out.rerun)) {
            at = &it->next;
            continue;
        }
        *at = it->next;   /* out of this transaction, into its own */
        it->next = NULL;
        *again_tail = it;
        again_tail = &it->next;
    }
    rbuf_free(&out.reply);

    aof_seal();   /* the transaction's records go before what the shards do next */
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
    tx_free(tx);
    if (own) tx_unlock(w);
    /* A script that stopped for a shard it could not take (it wrote
     * nothing) runs again holding every shard it now knows it needs, taken
     * in order like any transaction's. */
    while (again) {
        struct tx_item *it = again;
        again = it->next;
        it->next = NULL;
        struct tx *open = tx_open;
        struct tx *tx1 = tx_new(w, it);
        tx_open = open;   /* not one others join: it may be behind them already */
        tx_continue(tx1);
    }
}

/* Take the next shard in ascending order; run once all are held. */
static void tx_continue(struct tx *tx) {
    struct worker *w = tx->coord;
    while (tx->held != tx->mask) {
        unsigned s = (unsigned)__builtin_ctzll(tx->mask & ~tx->held);
        struct xmsg *m = rk_calloc(1, sizeof *m);
        m->type = XM_LOCK;
        m->from = (uint8_t)w->id;
        m->shard = (uint8_t)s;
        m->tx = tx;
        tx->requested |= 1ull << s;
        if (s != w->id) {
            xshard_send(w, s, m);
            asked_all_release(tx);
            return;
        }
        if (!own_free(w)) {
            lock_enqueue(w, m);
            asked_all_release(tx);
            return;
        }
        free(m);
        grant(w, tx);
        own_granted(w, tx);
    }
    tx_finish(tx);
}

/* A shard we asked for is ours. */
void tx_locked(struct worker *w, struct xmsg *m) {
    (void)w;
    struct tx *tx = m->tx;
    tx->held |= 1ull << m->shard;
    free(m);
    tx_continue(tx);   /* requested already has the shard */
}

/* A batch that arrived while the shard is held (or behind deferred ones),
 * or one cut short (forward.c). */
void tx_defer_batch(struct worker *w, struct xmsg *m) {
    drop_idle_replies(m);
    m->next = NULL;
    *w->deferred_tail = m;
    w->deferred_tail = &m->next;
}

/* ---- a running script takes a shard now (tx_take_now) ----
 *
 * A script may use a key of a shard it did not declare. It already holds
 * shards, possibly above that one, so waiting in line for it could close a
 * cycle. It asks instead for the shard as it is now: granted if nobody
 * holds or queues for it, else denied, and it spins for the answer. A
 * thread that spins answers every such request denied (its own shard is
 * in use) and keeps all other messages, in order, for its loop (stash): so
 * two scripts asking each other's shards both hear "no" and neither waits
 * forever. What holds a shard taken this way is one marker per taking
 * thread. */

static struct tx taken_by[RK_MAX_THREADS];

static void stash(struct worker *w, struct xmsg *m) {
    m->next = NULL;
    *w->stash_tail = m;
    w->stash_tail = &m->next;
}

static void answer_take(struct worker *w, struct xmsg *m, bool spinning) {
    bool ok = !spinning && own_free(w);
    if (ok) grant(w, &taken_by[m->from]);
    m->type = ok ? XM_TAKEN : XM_TAKE_DENIED;
    xshard_send(w, m->from, m);
}

void tx_take_request(struct worker *w, struct xmsg *m) { answer_take(w, m, false); }

/* Take what the rings hold: requests to take are denied, an answer about
 * shard `want` is returned (NULL: none yet), the rest is stashed. */
static struct xmsg *spin_poll(struct worker *w, int want) {
    struct xmsg *answer = NULL;
    for (unsigned s = 0; s < srv.nworkers; s++) {
        if (s == w->id) continue;
        struct spsc_ring *r = ring_between(s, w->id);
        struct xmsg *m;
        while ((m = spsc_pop(r))) {
            if (m->type == XM_TAKE) answer_take(w, m, true);
            else if ((m->type == XM_TAKEN || m->type == XM_TAKE_DENIED) && m->shard == want) answer = m;
            else stash(w, m);
        }
    }
    if (w->overflow) xshard_flush(w);
    return answer;
}

void tx_service_takes(struct worker *w) {
    spin_poll(w, -1);
}

bool tx_take_now(struct worker *w, unsigned s) {
    if (s == w->id) {
        if (!own_free(w)) return false;
        grant(w, &taken_by[w->id]);
        return true;
    }
    struct xmsg *m = rk_calloc(1, sizeof *m);
    m->type = XM_TAKE;
    m->from = (uint8_t)w->id;
    m->shard = (uint8_t)s;
    xshard_send(w, s, m);
    xshard_flush(w);   /* out of overflow, and the doorbell if it sleeps */
    struct worker *target = &srv.workers[s];
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&target->sleeping, memory_order_relaxed)) ring_doorbell_now(w, target);
    struct xmsg *answer;
    while (!(answer = spin_poll(w, (int)s))) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    bool ok = answer->type == XM_TAKEN;
    free(answer);
    return ok;
}

void tx_release_taken(struct worker *w, uint64_t mask) {
    aof_seal();
    bool own = mask & (1ull << w->id);
    mask &= ~(1ull << w->id);
    while (mask) {
        unsigned s = (unsigned)__builtin_ctzll(mask);
        mask &= mask - 1;
        struct xmsg *m = rk_calloc(1, sizeof *m);
        m->type = XM_UNLOCK;
        m->from = (uint8_t)w->id;
        xshard_send(w, s, m);
    }
    if (own) tx_unlock(w);
}
