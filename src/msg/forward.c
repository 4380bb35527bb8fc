/*
 * Forwarded commands. A command whose keys all live on another shard is
 * appended to this iteration's batch for that shard: a header (which
 * client, its reply sequence number, db, protocol, command) and the
 * argument bytes, copied so that no receive buffer is ever shared. The
 * owner runs the commands in order, writes each reply into the same
 * message and sends it back; the sender hands each client's run of replies
 * to the connection layer (client_replies_ready), which puts them in
 * request order.
 */
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

void execute_batch(struct worker *w, struct xmsg *m) {
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
    }
    w->stats.batches_in++;
    m->type = XM_BATCH_DONE;
    xshard_send(w, m->from, m);
    /* arguments of one huge command are not kept for the next: they count
     * in used_memory, as the batch buffers below */
    if (w->fwd_argv_cap * sizeof *w->fwd_argv > KEEP_BATCH_BYTES) {
        free(w->fwd_argv);
        w->fwd_argv = NULL;
        w->fwd_argv_cap = 0;
    }
}

/* A client's commands travel together: hand each run of its replies over
 * at once (looked up once, merged in one pass). */
#define REPLY_RUN_MAX 64

void collect_replies(struct worker *w, struct xmsg *m) {
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
    if (m->req.cap > KEEP_BATCH_BYTES) rbuf_free(&m->req);
    if (m->rep.cap > KEEP_BATCH_BYTES) rbuf_free(&m->rep);
    m->next = w->free_batches[m->shard];   /* m->to is us now: it came back */
    w->free_batches[m->shard] = m;
}

