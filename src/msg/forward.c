/*
 * Forwarded commands. A command whose keys all live on another shard is
 * appended to this iteration's batch for that shard: a header (which
 * client, its reply sequence number, db, protocol, command) and the
 * argument bytes, copied so that no receive buffer is ever shared. The
 * owner runs the commands in order, writes each reply into the same
 * message and sends it back; the sender hands each client's run of replies
 * to the connection layer (client_replies_ready), which puts them in
 * request order.
 *
 * Replies on their way back belong to no client yet, but they are what
 * clients are about to hold: Redis would already have them in its
 * clients' buffers, where client eviction (maxmemory-clients) sees them
 * before the next command runs. So while that limit is on, before each
 * forwarded command the owner asks whether every thread's clients, with
 * every reply buffer on its way (replies_sent - replies_taken over all
 * threads) and the replies this batch has made (past RUN_MIN_BYTES), are
 * at the limit (clients_full). If so the batch stops there: what it ran goes back at
 * once (XM_BATCH_PART), where its clients count it and the biggest can be
 * evicted, and the rest waits as a batch that arrived while the shard was
 * held (tx.c), going on from the next poll before any batch that arrived
 * after it. Replies in flight so stay within the limit, as Redis's client
 * buffers do, instead of a pipeline of big MGETs from clients that do not
 * read filling used_memory past maxmemory (and evicting keys) before any
 * client could be charged for them.
 */
#include "ringkv/clock.h"
#include "ringkv/command_stats.h"
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdlib.h>

#include "msg_internal.h"

struct fwd_hdr {
    uint32_t idx, gen, seq;
    uint16_t db;
    uint8_t resp;
    uint8_t drop;        /* CLIENT REPLY OFF/SKIP: run it, send nothing; FWD_TRACK: record its reads */
    const struct command *cmd;
    uint32_t argc;
    uint32_t trk_epoch;  /* the client's tracking epoch (with FWD_TRACK) */
};
#define FWD_DROP  1
#define FWD_TRACK 2
#define FWD_NOTOUCH 4

struct rep_hdr {
    uint32_t idx, gen, seq, len;
};

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
    m->req_done = 0;
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
    uint8_t drop8 = (uint8_t)(o->drop | (o->track << 1) | (o->no_touch << 2));
    uint32_t argc32 = (uint32_t)argc;
    memcpy(p + offsetof(struct fwd_hdr, idx), &o->idx, 4);
    memcpy(p + offsetof(struct fwd_hdr, gen), &o->gen, 4);
    memcpy(p + offsetof(struct fwd_hdr, seq), &o->seq, 4);
    memcpy(p + offsetof(struct fwd_hdr, db), &o->db, 2);
    memcpy(p + offsetof(struct fwd_hdr, resp), &o->resp, 1);
    memcpy(p + offsetof(struct fwd_hdr, drop), &drop8, 1);
    memcpy(p + offsetof(struct fwd_hdr, cmd), &cmd, sizeof cmd);
    memcpy(p + offsetof(struct fwd_hdr, argc), &argc32, 4);
    memcpy(p + offsetof(struct fwd_hdr, trk_epoch), &o->trk_epoch, 4);
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

#define KEEP_BATCH_BYTES (256u << 10)

/* The owner's own counter: only it writes, everyone reads. */
static void count_bytes(_Atomic uint64_t *counter, size_t n) {
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n, memory_order_release);
}

size_t xshard_replies_in_flight(void) {
    /* taken first: every byte taken was sent before, so the sums read
     * afterwards cover it */
    uint64_t taken = 0, sent = 0;
    for (unsigned i = 0; i < srv.nworkers; i++)
        taken += atomic_load_explicit(&srv.workers[i].replies_taken, memory_order_acquire);
    for (unsigned i = 0; i < srv.nworkers; i++)
        sent += atomic_load_explicit(&srv.workers[i].replies_sent, memory_order_acquire);
    return sent > taken ? (size_t)(sent - taken) : 0;
}

static struct slice *fwd_argv(struct worker *w, size_t argc) {
    if (argc > w->fwd_argv_cap) {
        w->fwd_argv_cap = argc < 16 ? 16 : argc;
        w->fwd_argv = rk_realloc(w->fwd_argv, w->fwd_argv_cap * sizeof *w->fwd_argv);
    }
    return w->fwd_argv;
}

/* Arguments of one huge command are not kept for the next: they count in
 * used_memory, as the batch buffers (collect_replies). */
static void fwd_argv_trim(struct worker *w) {
    if (w->fwd_argv_cap * sizeof *w->fwd_argv > KEEP_BATCH_BYTES) {
        free(w->fwd_argv);
        w->fwd_argv = NULL;
        w->fwd_argv_cap = 0;
    }
}

/* One forwarded command, decoded in place from a batch. */
struct fwd_cmd {
    struct fwd_hdr h;
    size_t argv_at;
    const char *at;     /* where it starts in the batch */
};

/* Decode up to KEY_PREFETCH_MAX commands from *p, starting their keys'
 * prefetch; their arguments go to w->fwd_argv from argv_used on. */
static size_t decode_window(struct worker *w, const char **p, const char *end, struct fwd_cmd *cmds,
                            struct key_prefetch *kp) {
    size_t n = 0, argv_used = 0;
    key_prefetch_start(kp, NULL);
    while (n < KEY_PREFETCH_MAX && *p < end) {
        struct fwd_cmd *fc = &cmds[n++];
        fc->at = *p;
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

/* Run one forwarded command, its reply appended to m->rep. */
static void run_forwarded(struct worker *w, struct xmsg *m, const struct fwd_cmd *fc) {
    const struct fwd_hdr *h = &fc->h;
    size_t hdr_off = m->rep.len;
    rbuf_reserve(&m->rep, sizeof(struct rep_hdr));
    m->rep.len += sizeof(struct rep_hdr);
    struct cmd_ctx ctx;
    ctx_init(&ctx, w, h->cmd, (int)h->argc, w->fwd_argv + fc->argv_at, h->db, h->resp, &m->rep);
    /* whose command it is: NOLOOP, and the reader to record */
    ctx.origin_worker = m->from;
    ctx.origin_idx = h->idx;
    ctx.origin_gen = h->gen;
    const struct block_record reader = { m->from, h->idx, h->gen, h->trk_epoch };
    ctx.reader = (h->drop & FWD_TRACK) ? &reader : NULL;
    ctx.no_touch = h->drop & FWD_NOTOUCH;
    command_call(&ctx);
    if (h->drop & FWD_DROP) m->rep.len = hdr_off + sizeof(struct rep_hdr);
    uint32_t len = (uint32_t)(m->rep.len - hdr_off - sizeof(struct rep_hdr));
    char *rp = m->rep.buf + hdr_off;   /* field by field, as in forward_command */
    memcpy(rp + offsetof(struct rep_hdr, idx), &h->idx, 4);
    memcpy(rp + offsetof(struct rep_hdr, gen), &h->gen, 4);
    memcpy(rp + offsetof(struct rep_hdr, seq), &h->seq, 4);
    memcpy(rp + offsetof(struct rep_hdr, len), &len, 4);
    w->stats.forwarded_in++;
}

/* A run makes at least this much before it stops while the replies
 * already out leave room: near the limit, small replies still go in
 * chunks worth a round trip between threads, not one by one. */
#define RUN_MIN_BYTES (64u << 10)

/* The clients have no room for more replies now: see the top of the file.
 * What this run made counts by its buffer's capacity, as used_memory
 * does. */
static bool batch_cut_due(const struct worker *w, const struct xmsg *m) {
    return RK_UNLIKELY(w->cev_limit) && rk_msg_client.clients_full(w, m->rep.len < RUN_MIN_BYTES ? 0 : m->rep.cap);
}

/* Send what m ran (if anything) back now; the rest, from next on, runs later. */
static void batch_cut(struct worker *w, struct xmsg *m, const char *next) {
    m->req_done = (size_t)(next - m->req.buf);
    if (!m->rep.len) return;
    struct xmsg *part = rk_calloc(1, sizeof *part);
    part->type = XM_BATCH_PART;
    part->from = m->from;
    part->shard = m->shard;
    part->rep = m->rep;
    m->rep = (struct rbuf){0};
    count_bytes(&w->replies_sent, part->rep.cap);
    xshard_send(w, m->from, part);
}

bool execute_batch(struct worker *w, struct xmsg *m) {
    const char *p = m->req.buf + m->req_done, *end = m->req.buf + m->req.len;
    struct fwd_cmd cmds[KEY_PREFETCH_MAX];
    struct key_prefetch kp;
    while (p < end) {
        size_t n = decode_window(w, &p, end, cmds, &kp);
        key_prefetch_begin(&kp);
        rk_call_chain = clock_ticks();   /* timed as one chain (command_stats.h) */
        for (size_t i = 0; i < n; i++) {
            if (batch_cut_due(w, m)) {
                rk_call_chain = 0;
                batch_cut(w, m, cmds[i].at);
                fwd_argv_trim(w);
                return false;
            }
            key_prefetch_step(&kp, i);
            run_forwarded(w, m, &cmds[i]);
        }
        rk_call_chain = 0;
    }
    w->stats.batches_in++;
    m->type = XM_BATCH_DONE;
    count_bytes(&w->replies_sent, m->rep.cap);
    xshard_send(w, m->from, m);
    fwd_argv_trim(w);
    return true;
}

/* A client's commands travel together: hand each run of its replies over
 * at once (looked up once, merged in one pass). */
#define REPLY_RUN_MAX 64

static void take_replies(struct worker *w, const struct xmsg *m) {
    const char *p = m->rep.buf, *end = m->rep.buf + m->rep.len;
    struct shard_reply run[REPLY_RUN_MAX];
    size_t n = 0;
    uint32_t idx = 0, gen = 0;
    while (p < end) {
        struct rep_hdr rh;
        memcpy(&rh, p, sizeof rh);
        p += sizeof rh;
        if (n && (rh.idx != idx || rh.gen != gen || n == REPLY_RUN_MAX)) {
            rk_msg_client.replies_ready(w, idx, gen, run, n);
            n = 0;
        }
        idx = rh.idx;
        gen = rh.gen;
        run[n++] = (struct shard_reply){ rh.seq, rh.len, p };
        p += rh.len;
    }
    if (n) rk_msg_client.replies_ready(w, idx, gen, run, n);
    count_bytes(&w->replies_taken, m->rep.cap);
}

static void batch_free(struct xmsg *m) {
    rbuf_free(&m->req);
    rbuf_free(&m->rep);
    free(m);
}

/* One spare batch per target is kept for the next iteration's: more come
 * back only while batches wait on their shard (held, or cut short), and
 * kept they would stay counted in used_memory for good. */
void collect_replies(struct worker *w, struct xmsg *m) {
    take_replies(w, m);
    if (m->type == XM_BATCH_PART || w->free_batches[m->shard]) {   /* a part: its batch comes back later */
        batch_free(m);
        return;
    }
    if (m->req.cap > KEEP_BATCH_BYTES) rbuf_free(&m->req);
    if (m->rep.cap > KEEP_BATCH_BYTES) rbuf_free(&m->rep);
    m->next = NULL;
    w->free_batches[m->shard] = m;   /* m->to is us now: it came back */
}
