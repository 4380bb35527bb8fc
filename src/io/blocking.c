/*
 * Blocking commands, the connection side (the keyspace side, the waiter
 * records per key, is in db.h: db_block_on, db_signal_ready).
 *
 * A blocking command that finds nothing to serve registers its client on
 * each key (ctx_block_on) and writes no reply; its bytes stay unconsumed in
 * the client's input and the client waits on w->blocked, with its deadline.
 * A write that may serve it signals the key: the owning shard tells the
 * key's first waiter's thread (its own ready queue, or an XM_READY
 * message). The waiter runs its command again at the top of the loop,
 * never inside another command: the pop is then an ordinary atomic
 * command, so an element goes to exactly one client, and a client that
 * finds nothing blocks again in its place. When it is served, the next
 * waiter is told (db_waiter_served). When the deadline passes it runs once
 * more with block_timed_out set, and replies its timeout reply.
 *
 * Waiters are served in the order their commands were taken up, on any
 * thread: the command takes a ticket (a process-wide count) the first time
 * it runs, keeps it while it waits and runs again, and its records go in
 * line by it. A command run where its keys live registers at once; one
 * run from another thread, as a transaction, only once it holds the
 * keys' shard, a lock round trip later: by then a command that came in
 * after it on the keys' thread may have registered, and the ticket puts
 * it back in front of that one.
 *
 * Every attempt has its own block_seq; a record of an older attempt is
 * stale and ignored. A wake-up for a client that has gone, or that CLIENT
 * UNBLOCK ERROR took out of its wait, is declined: the record goes back to
 * the shards, which drop it and wake the next waiter. The thread does not
 * know which shard holds the record, so it tells every one; a declined
 * record travels as an XM_READY whose worker is not the receiver's.
 */
#include "ringkv/server.h"

#include "io_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A client on w->blocked has its rare part (client_block made it). */
void client_unlink_blocked(struct client *c) {
    struct client **pp = &c->w->blocked;
    while (*pp && *pp != c) pp = &(*pp)->rare->next_blocked;
    if (*pp) {
        *pp = c->rare->next_blocked;
        c->w->stats.blocked_clients--;
        if (c->rare->block_deadline_ms != LLONG_MAX) c->w->stats.blocked_timeout--;
        c->rare->next_blocked = NULL;
    }
}

static _Atomic uint64_t tickets;

void client_take_ticket(struct client *c) {
    struct client_rare *x = client_rare(c);
    if (!x->block_ticket) x->block_ticket = atomic_fetch_add_explicit(&tickets, 1, memory_order_relaxed) + 1;
}

void client_block(struct client *c, const struct command *cmd, long long timeout_ms, size_t cmd_len) {
    struct client_rare *x = client_rare(c);
    x->block_cmd = cmd;
    x->block_cmd_len = cmd_len;
    if (x->block_deadline_ms == 0)
        x->block_deadline_ms = timeout_ms > 0 ? c->w->now_ms + timeout_ms : LLONG_MAX;
    c->wait = WAIT_BLOCKED;
    x->next_blocked = c->w->blocked;
    c->w->blocked = c;
    c->w->stats.blocked_clients++;
    if (x->block_deadline_ms != LLONG_MAX) c->w->stats.blocked_timeout++;
}

void client_unblocked(struct client *c) {
    struct client_rare *x = c->rare;
    if (!x) return;
    x->block_memo.len = 0;
    x->block_deadline_ms = 0;
    x->block_ticket = 0;
    x->block_timed_out = false;
}

/* The command at the front of the pending input was served: drop its bytes. */
void client_consume_pending(struct client *c, size_t len) {
    c->in_off += len;
    if (c->in_off >= c->in.len) c->in.len = c->in_off = 0;
}

/* Declined records for this thread's shard, dropped at the top of the
 * loop when the shard is not held by a transaction. */
static _Thread_local struct rbuf declined;

static void decline(struct worker *w, const struct block_record *r) {
    for (unsigned s = 0; s < srv.nworkers; s++) {
        if (s == w->id) {
            rbuf_append(&declined, r, sizeof *r);
            continue;
        }
        struct xmsg *m = rk_calloc(1, sizeof *m);
        m->type = XM_READY;
        m->from = (uint8_t)w->id;
        m->ready = *r;
        xshard_send(w, s, m);
    }
}

void client_ready(struct worker *w, const struct block_record *r) {
    if (r->worker != w->id) {   /* another thread declined it (see decline) */
        rbuf_append(&declined, r, sizeof *r);
        return;
    }
    struct client *c = client_by_ref(w, r->idx, r->gen);
    if (!c || (c->flags & CF_CLOSING)) {
        decline(w, r);
        return;
    }
    if (c->wait != WAIT_BLOCKED || c->block_seq != r->seq) return;
    client_unlink_blocked(c);
    client_schedule_wake(c);
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
    if (declined.len && !shard_is_held(w)) {
        struct rbuf batch = declined;
        declined = (struct rbuf){0};
        struct cmd_ctx ctx;
        ctx_init(&ctx, w, NULL, 0, NULL, 0, 2, NULL);
        for (size_t off = 0; off + sizeof(struct block_record) <= batch.len; off += sizeof(struct block_record)) {
            struct block_record r;
            memcpy(&r, batch.buf + off, sizeof r);
            db_waiter_declined(&ctx, &r);
        }
        rbuf_free(&batch);
    }
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
        for (struct client *c = w->blocked; c; c = c->rare->next_blocked) {
            if (c->rare->block_deadline_ms <= w->now_ms) { expired = c; break; }
            if (c->rare->block_deadline_ms < next) next = c->rare->block_deadline_ms;
        }
        if (!expired) return next;
        client_unlink_blocked(expired);
        expired->rare->block_timed_out = true;
        client_schedule_wake(expired);
        next = LLONG_MAX;   /* the list changed: look again */
    }
}

/* A waiter record of one of our clients is dead once that client is gone
 * or has finished the command that left it (its ticket is no longer the
 * client's). A client woken and running its command again keeps its
 * record, and its place: it may find nothing and wait on. Records of other
 * threads' clients are left alone. */
bool block_record_alive(struct cmd_ctx *ctx, const struct block_record *r, uint64_t ticket) {
    struct worker *w = ctx->worker;
    if (r->worker != w->id) return true;
    struct client *c = client_by_ref(w, r->idx, r->gen);
    return c && !(c->flags & CF_CLOSING) && ticket && client_block_ticket(c) == ticket;
}

/* CLIENT UNBLOCK: a blocked client stops waiting, as if its timeout had
 * passed, or with an error instead of its command's reply. */
bool client_unblock(struct client *c, bool error) {
    if (c->wait != WAIT_BLOCKED || (c->flags & CF_CLOSING)) return false;
    client_unlink_blocked(c);
    if (error) {
        struct reply r = { &c->out, c->resp };
        reply_error(&r, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
        command_count_call(c->rare->block_cmd, true);   /* its call, failed, as Redis's updateStatsOnUnblock */
        /* its command will not run again: its place in line goes */
        decline(c->w, &(struct block_record){ c->w->id, c->idx, c->gen, c->block_seq });
        client_consume_pending(c, c->rare->block_cmd_len);
        client_unblocked(c);
        client_mark_flush(c);
        client_output_grew(c);
    } else {
        c->rare->block_timed_out = true;
        command_count_failure(c->rare->block_cmd);   /* Redis counts it failed too; the run that answers counts the call */
    }
    client_schedule_resume(c);
    return true;
}
