/*
 * A client's output in request order and its place in the worker's lists
 * (output.c). What every reply passes through is inline here.
 */
#ifndef RINGKV_IO_OUTPUT_H
#define RINGKV_IO_OUTPUT_H

#include "ringkv/server.h"

static inline void client_mark_flush(struct client *c) {
    if (c->flags & CF_IN_FLUSH_LIST) return;
    c->flags |= CF_IN_FLUSH_LIST;
    c->next_flush = c->w->flush_list;
    c->w->flush_list = c;
}
static inline bool client_replies_queued(const struct client *c) { return c->rq && c->rq->count > 0; }
/* A reply written now goes out, or behind replies still out elsewhere:
 * write into client_reply_target's buffer from `start`, then call
 * client_reply_written (drop: CLIENT REPLY OFF/SKIP cuts it). */
static inline struct rbuf *client_reply_target(struct client *c, bool *queued) {
    *queued = client_replies_queued(c);
    return *queued ? &c->rq->bytes : &c->out;
}
static inline void client_reply_written(struct client *c, struct rbuf *out, size_t start, bool queued, bool drop) {
    if (drop) out->len = start;
    else if (queued) client_queue_local_reply(c, start);
    client_mark_flush(c);
}
void client_schedule_resume(struct client *c);   /* resume from the worker loop */
void client_schedule_wake(struct client *c);     /* ...ahead of the merely scheduled */
struct client *client_next_resume(struct worker *w);
void client_close_asap(struct client *c);        /* close at the end of the iteration */
/* client-output-buffer-limit's classes, in its order */
enum obuf_class { OBUF_NORMAL, OBUF_REPLICA, OBUF_PUBSUB };
void client_check_obuf_limit(struct client *c, enum obuf_class k);

#endif
