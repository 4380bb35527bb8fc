/*
 * Cross-shard messaging: forwarded commands and cross-shard transactions.
 *
 * Forwarding. A command whose keys all live on another shard is appended to
 * this iteration's batch for that shard: a header (which client, its reply
 * sequence number, db, protocol, command) and the argument bytes, copied so
 * that no receive buffer is ever shared. At the end of the iteration each
 * batch is pushed onto the SPSC ring to its shard; the owner runs the
 * commands in order, writes each reply into the same message, and pushes it
 * back. The sender drops each reply into its client's reply queue.
 *
 * Transactions. A command whose keys span shards (MSET, RENAME, ...) or that
 * needs every shard (KEYS, FLUSHALL, ...) runs on the client's thread, the
 * coordinator, while it holds every shard it needs:
 *
 *   1. acquire the shards one at a time in ascending id order: the own shard
 *      directly, others with XM_LOCK / XM_LOCKED;
 *   2. run the handler with c->multi set: db.h routes each key to its shard's
 *      tables and the coordinator reads and writes them directly;
 *   3. release every shard (XM_UNLOCK), resume the client.
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

#include <stdio.h>
#include <stdlib.h>

#include "../io/io_internal.h"

struct fwd_hdr {
    uint32_t idx, gen, seq;
    uint16_t db;
    uint8_t resp;
    uint8_t drop;        /* CLIENT REPLY OFF/SKIP: run it, send nothing */
    const struct command *cmd;
    uint32_t argc;
};

struct rep_hdr {
    uint32_t idx, gen, seq, len;
};

struct tx {
    struct worker *coord;
    struct tx_request req;   /* argv points into argbuf */
    uint64_t held;
    char *argbuf;
    struct rbuf *parts;
};

/* ---- sending ---- */

void xshard_send(struct worker *w, unsigned target, struct xmsg *m) {
    m->to = (uint8_t)target;
    m->next = NULL;
    /* Anything already waiting in overflow goes first, to keep ring order. */
    if (w->overflow || !spsc_push(ring_between(w->id, target), m)) {
        *w->overflow_tail = m;
        w->overflow_tail = &m->next;
    }
    w->wake_mask |= 1ull << target;
}

static void retry_overflow(struct worker *w) {
    struct xmsg *m = w->overflow, *keep = NULL, **keep_tail = &keep;
    uint64_t blocked = 0;
    w->overflow = NULL;
    w->overflow_tail = &w->overflow;
    while (m) {
        struct xmsg *next = m->next;
        uint64_t bit = 1ull << m->to;
        if ((blocked & bit) || !spsc_push(ring_between(w->id, m->to), m)) {
            blocked |= bit;
            m->next = NULL;
            *keep_tail = m;
            keep_tail = &m->next;
        }
        w->wake_mask |= bit;
        m = next;
    }
    w->overflow = keep;
    w->overflow_tail = keep ? keep_tail : &w->overflow;
}

/* End of iteration: push the batches, then ring the doorbell of every target
 * that may be asleep. The fence pairs with the one in submit_and_wait(). */
void xshard_flush(struct worker *w) {
    for (unsigned t = 0; t < srv.nworkers; t++) {
        struct xmsg *m = w->out_batch[t];
        if (!m) continue;
        w->out_batch[t] = NULL;
        w->stats.batches_out++;
        xshard_send(w, t, m);
    }
    if (w->overflow) retry_overflow(w);
    if (!w->wake_mask) return;
    w->last_peer_ms = w->now_ms;
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t mask = w->wake_mask;
    w->wake_mask = 0;
    while (mask) {
        unsigned t = (unsigned)__builtin_ctzll(mask);
        mask &= mask - 1;
        struct worker *target = &srv.workers[t];
        if (!atomic_load_explicit(&target->sleeping, memory_order_relaxed)) continue;
        struct io_uring_sqe *sqe = worker_sqe(w);
        io_uring_prep_msg_ring(sqe, target->ring_fd, 0, UD_MAKE(UD_DOORBELL, 0, 0), 0);
        io_uring_sqe_set_data64(sqe, UD_MAKE(UD_IGNORE, 0, 0));
        sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
        w->stats.doorbells++;
    }
}

/* ---- forwarding ---- */

static struct xmsg *batch_for(struct worker *w, unsigned target) {
    struct xmsg *m = w->out_batch[target];
    if (m) return m;
    m = w->free_batches[target];
    if (m) w->free_batches[target] = m->next;
    else m = rk_calloc(1, sizeof *m);
    m->type = XM_BATCH;
    m->from = (uint8_t)w->id;
    m->shard = (uint8_t)target;
    m->ncmds = 0;
    m->req.len = m->rep.len = 0;
    w->out_batch[target] = m;
    return m;
}

void forward_command(struct worker *w, unsigned target, const struct command *cmd, int argc,
                     struct slice *argv, const struct fwd_origin *o) {
    struct xmsg *m = batch_for(w, target);
    size_t bytes = sizeof(struct fwd_hdr);
    for (int i = 0; i < argc; i++) bytes += 4 + argv[i].len;
    char *p = rbuf_reserve(&m->req, bytes);
    /* Field by field into the batch: building the header on the stack and
     * copying it whole makes the CPU reload narrow stores as one wide load,
     * which stalls store forwarding on every forwarded command. */
    uint8_t drop8 = o->drop;
    uint32_t argc32 = (uint32_t)argc;
    memcpy(p + offsetof(struct fwd_hdr, idx), &o->idx, 4);
    memcpy(p + offsetof(struct fwd_hdr, gen), &o->gen, 4);
    memcpy(p + offsetof(struct fwd_hdr, seq), &o->seq, 4);
    memcpy(p + offsetof(struct fwd_hdr, db), &o->db, 2);
    memcpy(p + offsetof(struct fwd_hdr, resp), &o->resp, 1);
    memcpy(p + offsetof(struct fwd_hdr, drop), &drop8, 1);
    memcpy(p + offsetof(struct fwd_hdr, cmd), &cmd, sizeof cmd);
    memcpy(p + offsetof(struct fwd_hdr, argc), &argc32, 4);
    p += sizeof(struct fwd_hdr);
    for (int i = 0; i < argc; i++) {
        uint32_t len = (uint32_t)argv[i].len;
        memcpy(p, &len, 4);
        memcpy(p + 4, argv[i].ptr, len);
        p += 4 + len;
    }
    m->req.len += bytes;
    m->ncmds++;
    w->stats.forwarded_out++;
}

static struct slice *fwd_argv(struct worker *w, size_t argc) {
    if (argc > w->fwd_argv_cap) {
        w->fwd_argv_cap = argc < 16 ? 16 : argc;
        w->fwd_argv = rk_realloc(w->fwd_argv, w->fwd_argv_cap * sizeof *w->fwd_argv);
    }
    return w->fwd_argv;
}

/* One forwarded command, decoded in place from a batch. */
struct fwd_cmd {
    struct fwd_hdr h;
    size_t argv_at;
};

/* Decode up to KEY_PREFETCH_MAX commands from *p, starting their keys'
 * prefetch; their arguments go to w->fwd_argv from argv_used on. */
static size_t decode_window(struct worker *w, const char **p, const char *end, struct fwd_cmd *cmds,
                            struct key_prefetch *kp) {
    size_t n = 0, argv_used = 0;
    key_prefetch_start(kp, NULL);
    while (n < KEY_PREFETCH_MAX && *p < end) {
        struct fwd_cmd *fc = &cmds[n++];
        memcpy(&fc->h, *p, sizeof fc->h);
        *p += sizeof fc->h;
        struct slice *argv = fwd_argv(w, argv_used + fc->h.argc);
        fc->argv_at = argv_used;
        for (uint32_t i = 0; i < fc->h.argc; i++) {
            uint32_t len;
            memcpy(&len, *p, 4);
            argv[argv_used + i] = (struct slice){ *p + 4, len };
            *p += 4 + len;
        }
        argv_used += fc->h.argc;
    }
    /* argv may have moved while growing: take the key pointers now */
    for (size_t i = 0; i < n; i++) {
        kp->table = &w->shard.dbs[cmds[i].h.db].table;
        key_prefetch_add(kp, cmds[i].h.argc >= 2 ? &w->fwd_argv[cmds[i].argv_at + 1] : NULL);
    }
    return n;
}

static void execute_batch(struct worker *w, struct xmsg *m) {
    const char *p = m->req.buf, *end = m->req.buf + m->req.len;
    struct fwd_cmd cmds[KEY_PREFETCH_MAX];
    struct key_prefetch kp;
    m->rep.len = 0;
    while (p < end) {
        size_t n = decode_window(w, &p, end, cmds, &kp);
        key_prefetch_begin(&kp);
        for (size_t i = 0; i < n; i++) {
            key_prefetch_step(&kp, i);
            const struct fwd_hdr *h = &cmds[i].h;
            size_t hdr_off = m->rep.len;
            rbuf_reserve(&m->rep, sizeof(struct rep_hdr));
            m->rep.len += sizeof(struct rep_hdr);
            struct cmd_ctx ctx;
            ctx_init(&ctx, w, h->cmd, (int)h->argc, w->fwd_argv + cmds[i].argv_at, h->db, h->resp, &m->rep);
            h->cmd->proc(&ctx);
            if (h->drop) m->rep.len = hdr_off + sizeof(struct rep_hdr);
            uint32_t len = (uint32_t)(m->rep.len - hdr_off - sizeof(struct rep_hdr));
            char *rp = m->rep.buf + hdr_off;   /* field by field, as in forward_command */
            memcpy(rp + offsetof(struct rep_hdr, idx), &h->idx, 4);
            memcpy(rp + offsetof(struct rep_hdr, gen), &h->gen, 4);
            memcpy(rp + offsetof(struct rep_hdr, seq), &h->seq, 4);
            memcpy(rp + offsetof(struct rep_hdr, len), &len, 4);
            w->stats.forwarded_in++;
        }
    }
    w->stats.batches_in++;
    m->type = XM_BATCH_DONE;
    xshard_send(w, m->from, m);
}

#define KEEP_BATCH_BYTES (1u << 20)

/* A client's commands travel together: hand each run of its replies over
 * at once (looked up once, merged in one pass). */
#define REPLY_RUN_MAX 64

static void collect_replies(struct worker *w, struct xmsg *m) {
    const char *p = m->rep.buf, *end = m->rep.buf + m->rep.len;
    struct shard_reply run[REPLY_RUN_MAX];
    size_t n = 0;
    uint32_t idx = 0, gen = 0;
    while (p < end) {
        struct rep_hdr rh;
        memcpy(&rh, p, sizeof rh);
        p += sizeof rh;
        if (n && (rh.idx != idx || rh.gen != gen || n == REPLY_RUN_MAX)) {
            client_replies_ready(w, idx, gen, run, n);
            n = 0;
        }
        idx = rh.idx;
        gen = rh.gen;
        run[n++] = (struct shard_reply){ rh.seq, rh.len, p };
        p += rh.len;
    }
    if (n) client_replies_ready(w, idx, gen, run, n);
    if (m->req.cap > KEEP_BATCH_BYTES) rbuf_free(&m->req);
    if (m->rep.cap > KEEP_BATCH_BYTES) rbuf_free(&m->rep);
    m->next = w->free_batches[m->shard];   /* m->to is us now: it came back */
    w->free_batches[m->shard] = m;
}

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
        if (tx->coord == w) ctx.client = client_live(w, tx->req.idx, tx->req.gen);
        tx->req.cmd->per_shard(&ctx);
    }
}

static void lock_enqueue(struct worker *w, struct xmsg *m) {
    m->next = NULL;
    *w->lock_queue_tail = m;
    w->lock_queue_tail = &m->next;
}

static void lock_request(struct worker *w, struct xmsg *m) {
    if (!w->lock_holder && !w->lock_queue) {
        grant(w, m->tx);
        m->type = XM_LOCKED;
        xshard_send(w, m->from, m);
    } else {
        lock_enqueue(w, m);
    }
}

static void unlock(struct worker *w) {
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
    struct client *c = w->shard_waiters;
    w->shard_waiters = NULL;
    w->shard_waiters_tail = &w->shard_waiters;
    while (c) {
        struct client *next = c->next_wait;
        c->next_wait = NULL;
        if (w->lock_holder) client_wait_on_shard(c);   /* taken again meanwhile */
        else client_shard_free(c);
        c = next;
    }
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
    struct client *c = client_live(w, req->idx, req->gen);
    struct tx_outcome out = { {0}, false, 0 };
    struct cmd_ctx ctx;
    ctx_init(&ctx, w, req->cmd, req->argc, req->argv, req->db, req->resp, &out.reply);
    ctx.multi = true;
    ctx.client = c;
    ctx.parts = tx->parts;
    if (req->blocking) {
        ctx.waiter = &req->waiter;
        ctx.timed_out = req->timed_out;
    }
    if (c || !req->blocking) req->cmd->proc(&ctx);
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
    if (c) client_tx_done(w, req, &out);
    rbuf_free(&out.reply);
    tx_free(tx);
    if (own) unlock(w);
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

/* ---- receiving ---- */

static void handle_msg(struct worker *w, struct xmsg *m) {
    switch (m->type) {
    case XM_BATCH:
        if (w->lock_holder || w->deferred) {
            m->next = NULL;
            *w->deferred_tail = m;
            w->deferred_tail = &m->next;
        } else {
            execute_batch(w, m);
        }
        break;
    case XM_BATCH_DONE:
        collect_replies(w, m);
        break;
    case XM_LOCK:
        lock_request(w, m);
        break;
    case XM_LOCKED: {
        struct tx *tx = m->tx;
        tx->held |= 1ull << m->shard;
        free(m);
        tx_continue(tx);
        break;
    }
    case XM_UNLOCK:
        free(m);
        unlock(w);
        break;
    case XM_READY:
        client_ready(w, &m->ready);
        free(m);
        break;
    }
}

bool xshard_poll(struct worker *w) {
    bool any = false;
    for (unsigned s = 0; s < srv.nworkers; s++) {
        if (s == w->id) continue;
        struct spsc_ring *r = ring_between(s, w->id);
        struct xmsg *m;
        while ((m = spsc_pop(r))) {
            handle_msg(w, m);
            any = true;
        }
    }
    return any;
}

bool xshard_inbox_empty(struct worker *w) {
    for (unsigned s = 0; s < srv.nworkers; s++)
        if (s != w->id && !spsc_empty(ring_between(s, w->id))) return false;
    return true;
}

static void free_msg_list(struct xmsg *m) {
    while (m) {
        struct xmsg *next = m->next;
        rbuf_free(&m->req);
        rbuf_free(&m->rep);
        free(m);
        m = next;
    }
}

/* At exit, after every thread stopped: free what this worker still owns. */
void xshard_teardown(struct worker *w) {
    for (unsigned t = 0; t < srv.nworkers; t++) {
        free_msg_list(w->free_batches[t]);
        if (w->out_batch[t]) free_msg_list(w->out_batch[t]);
        w->free_batches[t] = w->out_batch[t] = NULL;
    }
    free_msg_list(w->overflow);
    free_msg_list(w->deferred);
    w->overflow = w->deferred = NULL;
    free(w->fwd_argv);
}
