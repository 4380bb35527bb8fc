/*
 * A client's output in request order and its place in the worker's lists
 * (output.c). What every reply passes through is inline here.
 */
#ifndef RINGKV_IO_OUTPUT_H
#define RINGKV_IO_OUTPUT_H

#include "ringkv/config.h"
#include "ringkv/server.h"

static inline void client_mark_flush(struct client *c) {
    if (c->flags & CF_IN_FLUSH_LIST) return;
    c->flags |= CF_IN_FLUSH_LIST;
    c->next_flush = c->w->flush_list;
    c->w->flush_list = c;
}
static inline bool client_replies_queued(const struct client *c) { return c->rq && c->rq->count > 0; }
void client_schedule_resume(struct client *c);   /* resume from the worker loop */
void client_schedule_wake(struct client *c);     /* ...ahead of the merely scheduled */
struct client *client_next_resume(struct worker *w);
void client_close_asap(struct client *c);        /* close at the end of the iteration */
/* A client closing or marked to close: give back the buffers nothing will
 * read again (unless its input is being run: CF_PARSING), all but a send
 * the kernel still holds. */
void client_release_buffers(struct client *c);

/* Redis's getClientType: subscribed, in either protocol, is pubsub; a
 * monitor is normal. */
static inline enum obuf_class client_obuf_class(const struct client *c) {
    return (c->flags & CF_PUBSUB) ? OBUF_PUBSUB : OBUF_NORMAL;
}
static inline bool obuf_class_limited(enum obuf_class k) {
    return (CONFIG_GET(client_obuf_limit[k][0]) | CONFIG_GET(client_obuf_limit[k][1])) != 0;
}
/* Over the limit, c is closed at the end of the iteration (callers may be
 * walking lists that hold it). cron: the periodic check is calling. */
void client_check_obuf_limit(struct client *c, enum obuf_class k, bool cron);
/* Client eviction (maxmemory-clients; output.c), while on (w->cev_limit):
 * c's figure may have changed (grown: the biggest clients are evicted if
 * every thread's together are now at the limit). client_mem_forget: c no
 * longer counts (freed, or eviction turned off). */
void client_mem_update(struct client *c);
void client_mem_forget(struct client *c);
/* c's output grew. Every reply passes here, so while its class has no
 * limit (the normal class's default) and client eviction is off this
 * costs two branches. */
static inline void client_output_grew(struct client *c) {
    enum obuf_class k = client_obuf_class(c);
    if (RK_UNLIKELY(obuf_class_limited(k))) client_check_obuf_limit(c, k, false);
    if (RK_UNLIKELY(c->w->cev_limit)) client_mem_update(c);
}
/* Every cron period: soft limits whose seconds ran out while nothing more
 * was written, and limits lowered by CONFIG SET (Redis's clientsCron). */
void client_obuf_cron(struct worker *w);

/* Writing invalidations to c->out grew it by n bytes: on their way out,
 * not counted for eviction (mem_count_leaving) until c's send starts, or
 * c is found slow (its send waits for room), or c goes. */
static inline void client_push_leaving(struct client *c, size_t n) {
    if (c->flags & CF_SEND_POLL || n > UINT32_MAX - c->pushes_leaving) return;
    c->pushes_leaving += (uint32_t)n;
    mem_count_leaving((long long)n);
}
static inline void client_pushes_settled(struct client *c) {
    if (RK_LIKELY(!c->pushes_leaving)) return;
    mem_count_leaving(-(long long)c->pushes_leaving);
    c->pushes_leaving = 0;
}

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
    client_output_grew(c);
}

#endif
