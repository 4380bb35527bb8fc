/*
 * A client's output, in request order, and its place in the worker's lists.
 *
 * Replies are written into c->out. While any of a client's commands is out
 * on another shard, later replies are parked in c->rq in request order
 * instead, and the contiguous ready prefix moves to c->out as forwarded
 * replies come back. A writer asks client_reply_target where its reply
 * goes and reports it with client_reply_written.
 *
 * Nothing here runs a client's commands: a client whose wait ends is put on
 * the resume list (client_schedule_resume, or client_schedule_wake ahead of
 * the others) and the worker loop resumes it (client.c); a client that
 * must go is marked and closed at the end of the iteration. So the features
 * of the connection layer (blocking, pub/sub, tracking, pause, monitor,
 * MULTI) write replies and schedule resumes through this file and never
 * call back up into client.c.
 */
#include "ringkv/log.h"
#include "ringkv/server.h"
#include "ringkv/config.h"
#include "ringkv/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

struct client *client_by_ref(struct worker *w, uint32_t idx, uint32_t gen) {
    if (idx >= w->nclients_cap) return NULL;
    struct client *c = w->clients[idx];
    return (c && (c->gen & 0xFFFFFF) == (gen & 0xFFFFFF)) ? c : NULL;
}

size_t client_output_size(const struct client *c) {
    return c->out.len + (c->sending.len - c->sent) + (c->rq ? c->rq->bytes.len : 0);
}

/* Resume c from the worker loop rather than from the caller's stack. */
void client_schedule_resume(struct client *c) {
    if (c->flags & CF_RESUME_SCHEDULED) return;
    c->flags |= CF_RESUME_SCHEDULED;
    c->next_resume = NULL;
    *c->w->resume_tail = c;
    c->w->resume_tail = &c->next_resume;
}

/* Close c at the end of the iteration, its output dropped: Redis's
 * freeClientAsync, for a client over an output limit found while lists
 * that hold it are being walked. */
void client_close_asap(struct client *c) {
    c->flags |= CF_CLOSE_ASAP;
    client_mark_flush(c);
}

/* What an output limit counts. A client paused for its output counts as
 * still holding the pause's threshold: it reached it and has not read it
 * down since (the kernel's socket buffers may hold most of it), and Redis,
 * which has no such pause, would hold the replies of the commands not
 * being run meanwhile. */
static size_t obuf_used(const struct client *c) {
    size_t used = client_output_size(c);
    return c->wait == WAIT_OUTPUT && used < OUTPUT_PAUSE_BYTES ? OUTPUT_PAUSE_BYTES : used;
}

/* Over client-output-buffer-limit of class k: at or over the hard limit,
 * or at or over the soft one for longer than its seconds. The seconds are
 * whole seconds of the clock, as Redis counts them, so a soft limit of 0
 * seconds still holds until the clock's next second. Redis closes a client
 * its cron finds at once, and logs it so; here every one goes at the end
 * of the iteration, and the log line says which check found it. */
void client_check_obuf_limit(struct client *c, enum obuf_class k, bool cron) {
    if (c->flags & (CF_CLOSING | CF_CLOSE_ASAP)) return;
    size_t used = obuf_used(c);
    long long hard = CONFIG_GET(client_obuf_limit[k][0]), soft = CONFIG_GET(client_obuf_limit[k][1]);
    long long now = c->w->now_ms;
    bool over = hard && used >= (size_t)hard;
    if (soft && used >= (size_t)soft) {
        if (!c->obuf_soft_since_ms) c->obuf_soft_since_ms = now;
        else if (now / 1000 - c->obuf_soft_since_ms / 1000 > CONFIG_GET(client_obuf_limit[k][2])) over = true;
    } else {
        c->obuf_soft_since_ms = 0;
    }
    if (RK_LIKELY(!over)) return;
    c->w->stats.obuf_limit_closed++;
    rk_log(LL_WARNING, "Client id=%llu addr=%s %s for overcoming of output buffer limits.",
            (unsigned long long)c->id, c->addr, cron ? "closed" : "scheduled to be closed ASAP");
    client_close_asap(c);
}

void client_obuf_cron(struct worker *w) {
    for (uint32_t i = 0; i < w->nclients_cap; i++) {
        struct client *c = w->clients[i];
        if (!c) continue;
        enum obuf_class k = client_obuf_class(c);
        if (obuf_class_limited(k)) client_check_obuf_limit(c, k, true);
    }
}

/* Resume c ahead of the clients merely scheduled, behind those woken
 * before it: a blocked client whose key got data runs before anyone else
 * can take it, as Redis serves blocked clients right after the write. */
void client_schedule_wake(struct client *c) {
    struct worker *w = c->w;
    if (c->flags & CF_RESUME_SCHEDULED) return;
    c->flags |= CF_RESUME_SCHEDULED;
    c->next_resume = *w->resume_wake_tail;
    *w->resume_wake_tail = c;
    if (w->resume_tail == w->resume_wake_tail) w->resume_tail = &c->next_resume;
    w->resume_wake_tail = &c->next_resume;
}

/* The next client to resume, or NULL. */
struct client *client_next_resume(struct worker *w) {
    struct client *c = w->resume_list;
    if (!c) return NULL;
    w->resume_list = c->next_resume;
    if (w->resume_wake_tail == &c->next_resume) w->resume_wake_tail = &w->resume_list;
    if (!w->resume_list) w->resume_tail = w->resume_wake_tail = &w->resume_list;
    c->flags &= ~CF_RESUME_SCHEDULED;
    return c;
}

struct client *client_live(struct worker *w, uint32_t idx, uint32_t gen) {
    struct client *c = client_by_ref(w, idx, gen);
    return c && !(c->flags & CF_CLOSING) ? c : NULL;
}

void client_wait_on_shard(struct client *c) {
    struct worker *w = c->w;
    c->wait = WAIT_SHARD;
    c->next_wait = NULL;
    *w->shard_waiters_tail = c;
    w->shard_waiters_tail = &c->next_wait;
}

/* The queue's capacity is a power of two: positions wrap with a mask. */
static inline uint32_t rq_pos(const struct reply_queue *q, uint32_t seq) {
    return (q->head + (seq - q->base_seq)) & (q->cap - 1);
}

static inline void rq_pop_head(struct reply_queue *q) {
    q->head = (q->head + 1) & (q->cap - 1);
    q->count--;
    q->base_seq++;
}

/* Replies to forwarded commands of c came back from a shard, in request
 * order. Merge them with what is queued: from the queue's head, take a
 * queued reply that is ready or the next one returning, until an item that
 * is still out elsewhere (only with three or more shards); returning
 * replies behind it wait in the queue's bytes. */
void client_replies_ready(struct worker *w, uint32_t idx, uint32_t gen, const struct shard_reply *r, size_t n) {
    struct client *c = client_live(w, idx, gen);
    if (!c) return;
    struct reply_queue *q = c->rq;
    size_t k = 0;
    while (q->count) {
        const struct pending_reply *it = &q->items[q->head];
        if (it->ready) {
            rbuf_append(&c->out, q->bytes.buf + it->off, it->len);
        } else if (k < n && r[k].seq == q->base_seq) {
            rbuf_append(&c->out, r[k].p, r[k].len);
            k++;
        } else {
            break;
        }
        rq_pop_head(q);
    }
    for (; k < n; k++) {
        struct pending_reply *it = &q->items[rq_pos(q, r[k].seq)];
        it->off = (uint32_t)q->bytes.len;
        it->len = r[k].len;
        it->ready = true;
        rbuf_append(&q->bytes, r[k].p, r[k].len);
    }
    if (q->count == 0) q->bytes.len = 0;
    c->inflight -= (uint32_t)n;
    client_mark_flush(c);
    client_output_grew(c);
    if (c->inflight == 0 && c->wait == WAIT_FORWARDS) client_schedule_resume(c);
}

/* Reserve the next position in request order; returns its sequence number. */
uint32_t client_reserve_reply(struct client *c) {
    if (!c->rq) c->rq = rk_calloc(1, sizeof *c->rq);
    struct reply_queue *q = c->rq;
    if (q->count == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 16;
        struct pending_reply *items = rk_malloc(cap * sizeof *items);
        for (uint32_t i = 0; i < q->count; i++) items[i] = q->items[(q->head + i) & (q->cap - 1)];
        free(q->items);
        q->items = items;
        q->head = 0;
        q->cap = cap;
    }
    uint32_t pos = (q->head + q->count) & (q->cap - 1);
    q->items[pos].ready = false;
    q->count++;
    return q->base_seq + q->count - 1;
}

/* Local replies behind a forwarded one: the reply was written to rq->bytes
 * from start_off; record it as a ready item. */
void client_queue_local_reply(struct client *c, size_t start_off) {
    struct reply_queue *q = c->rq;
    uint32_t seq = client_reserve_reply(c);
    uint32_t pos = rq_pos(q, seq);
    q->items[pos].off = (uint32_t)start_off;
    q->items[pos].len = (uint32_t)(q->bytes.len - start_off);
    q->items[pos].ready = true;
}

