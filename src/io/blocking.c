/*
 * Blocking commands, the connection side (the keyspace side, the waiter
 * records per key, is in db.h: db_block_on, db_signal_ready).
 *
 * A blocking command that finds nothing to serve registers its client on
 * each key (ctx_block_on) and writes no reply; its bytes stay unconsumed in
 * the client's input and the client waits on w->blocked, with its deadline.
 * A write that may serve it signals the key: the owning shard takes the
 * key's records, oldest first, and tells each waiter's thread (its own
 * ready queue, or an XM_READY message). The waiter runs its command again
 * at the top of the loop, never inside another command: the pop is then an
 * ordinary atomic command, so an element goes to exactly one client, and a
 * client that finds nothing blocks again. When the deadline passes it runs
 * once more with block_timed_out set, and replies its timeout reply.
 *
 * Every attempt has its own block_seq; a record of an older attempt, or of
 * a client that has gone, is stale and ignored.
 */
#include "ringkv/server.h"

#include "io_internal.h"

#include <limits.h>
#include <stdlib.h>

void client_unlink_blocked(struct client *c) {
    struct client **pp = &c->w->blocked;
    while (*pp && *pp != c) pp = &(*pp)->next_blocked;
    if (*pp) {
        *pp = c->next_blocked;
        c->w->stats.blocked_clients--;
        if (c->block_deadline_ms != LLONG_MAX) c->w->stats.blocked_timeout--;
    }
    c->next_blocked = NULL;
}

void client_block(struct client *c, long long timeout_ms, size_t cmd_len) {
    c->block_cmd_len = cmd_len;
    if (c->block_deadline_ms == 0)
        c->block_deadline_ms = timeout_ms > 0 ? c->w->now_ms + timeout_ms : LLONG_MAX;
    c->wait = WAIT_BLOCKED;
    c->next_blocked = c->w->blocked;
    c->w->blocked = c;
    c->w->stats.blocked_clients++;
    if (c->block_deadline_ms != LLONG_MAX) c->w->stats.blocked_timeout++;
}

void client_unblocked(struct client *c) {
    c->block_deadline_ms = 0;
    c->block_timed_out = false;
}

/* The command at the front of the pending input was served: drop its bytes. */
void client_consume_pending(struct client *c, size_t len) {
    c->in_off += len;
    if (c->in_off >= c->in.len) c->in.len = c->in_off = 0;
}

void client_ready(struct worker *w, const struct block_record *r) {
    struct client *c = client_by_ref(w, r->idx, r->gen);
    if (!c || (c->flags & CF_CLOSING) || c->wait != WAIT_BLOCKED || c->block_seq != r->seq) return;
    client_unlink_blocked(c);
    client_resume(c);
}

/* A shard's command found waiters of a key: wake them where they live. */
void block_notify(struct cmd_ctx *c, const struct block_record *r) {
    struct worker *w = c->worker;
    if (r->worker == w->id) {
        rbuf_append(&w->ready, r, sizeof *r);
        return;
    }
    struct xmsg *m = rk_calloc(1, sizeof *m);
    m->type = XM_READY;
    m->from = (uint8_t)w->id;
    m->ready = *r;
    xshard_send(w, r->worker, m);
}

void clients_wake_ready(struct worker *w) {
    while (w->ready.len) {
        /* waking may queue more: take the batch first */
        struct rbuf batch = w->ready;
        w->ready = (struct rbuf){0};
        for (size_t off = 0; off + sizeof(struct block_record) <= batch.len; off += sizeof(struct block_record)) {
            struct block_record r;
            memcpy(&r, batch.buf + off, sizeof r);
            client_ready(w, &r);
        }
        rbuf_free(&batch);
    }
}

long long clients_block_cron(struct worker *w) {
    long long next = LLONG_MAX;
    for (;;) {
        struct client *expired = NULL;
        for (struct client *c = w->blocked; c; c = c->next_blocked) {
            if (c->block_deadline_ms <= w->now_ms) { expired = c; break; }
            if (c->block_deadline_ms < next) next = c->block_deadline_ms;
        }
        if (!expired) return next;
        client_unlink_blocked(expired);
        expired->block_timed_out = true;
        client_resume(expired);
        next = LLONG_MAX;   /* the list changed: look again */
    }
}

/* A waiter record of one of our clients is dead once that client no longer
 * waits in that attempt; records of other threads' clients are left alone. */
bool block_record_alive(struct cmd_ctx *ctx, const struct block_record *r) {
    struct worker *w = ctx->worker;
    if (r->worker != w->id) return true;
    struct client *c = client_by_ref(w, r->idx, r->gen);
    return c && !(c->flags & CF_CLOSING) && c->block_seq == r->seq &&
           (c->wait == WAIT_BLOCKED || c->wait == WAIT_TX);
}

/* CLIENT UNBLOCK: a blocked client stops waiting, as if its timeout had
 * passed, or with an error instead of its command's reply. */
bool client_unblock(struct client *c, bool error) {
    if (c->wait != WAIT_BLOCKED || (c->flags & CF_CLOSING)) return false;
    client_unlink_blocked(c);
    if (error) {
        struct reply r = { &c->out, c->resp };
        reply_error(&r, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
        client_consume_pending(c, c->block_cmd_len);
        client_unblocked(c);
        client_mark_flush(c);
    } else {
        c->block_timed_out = true;
    }
    client_schedule_resume(c);
    return true;
}
