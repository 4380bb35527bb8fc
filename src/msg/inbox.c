/*
 * Messaging between workers, the receiving side: drain the rings addressed
 * to this worker and hand each message to its layer: forwarded batches and
 * their replies (forward.c), the shard lock and transactions (tx.c),
 * wake-ups of blocked and watching clients (the connection layer, through
 * rk_msg_client). Also frees what the messaging layer still owns at exit.
 */
#include "ringkv/server.h"
#include "ringkv/slowlog.h"
#include "ringkv/tracking.h"
#include "ringkv/util.h"

#include <stdlib.h>

#include "msg_internal.h"

static void handle_msg(struct worker *w, struct xmsg *m) {
    switch (m->type) {
    case XM_BATCH:   /* run now, or later in arrival order: held, or cut short (forward.c) */
        if (w->lock_holder || w->deferred || !execute_batch(w, m)) tx_defer_batch(w, m);
        break;
    case XM_BATCH_DONE:
    case XM_BATCH_PART:
        collect_replies(w, m);
        break;
    case XM_LOCK:
        tx_lock_request(w, m);
        break;
    case XM_LOCKED:
        tx_locked(w, m);
        break;
    case XM_UNLOCK:
        free(m);
        tx_unlock(w);
        break;
    case XM_READY:
        rk_msg_client.ready(w, &m->ready);
        free(m);
        break;
    case XM_WATCH:
        rk_msg_client.watch_touched(w, &m->ready);
        free(m);
        break;
    case XM_MONITOR:
        rk_msg_client.monitor_lines(w, m->req.buf, m->req.len);
        rbuf_free(&m->req);
        free(m);
        break;
    case XM_WAKE:   /* only wakes us: the loop looks at its paused clients */
        free(m);
        break;
    case XM_TRACK:
        rk_msg_client.tracking(w, m->req.buf, m->req.len);
        trk_delivered(&m->req);
        free(m);
        break;
    case XM_PUBLISH:
        publish_receive(w, m);
        break;
    case XM_SLOWLOG:
        rk_msg_client.slow_entry(w, &m->ready, m->slow);
        free(m);
        break;
    case XM_TAKE:
        tx_take_request(w, m);
        break;
    case XM_TAKEN:
    case XM_TAKE_DENIED:   /* the asking thread spins for these: never here */
        free(m);
        break;
    }
}

bool xshard_poll(struct worker *w) {
    bool any = tx_resume_deferred(w);   /* batches waiting for the shard go first */
    /* then what a script's wait took off the rings (tx_take_now) */
    while (w->stash) {
        struct xmsg *m = w->stash;
        w->stash = m->next;
        if (!w->stash) w->stash_tail = &w->stash;
        handle_msg(w, m);
        any = true;
    }
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


static void free_msg_list(struct xmsg *m) {
    while (m) {
        struct xmsg *next = m->next;
        if (m->type == XM_SLOWLOG) slowlog_entry_free(m->slow);
        rbuf_free(&m->req);
        rbuf_free(&m->rep);
        free(m);
        m = next;
    }
}

/* At exit, after every thread stopped: free what this worker still owns,
 * and what was still on its way to it (a release sent as the server
 * stopped, ...). */
void xshard_teardown(struct worker *w) {
    for (unsigned s = 0; s < srv.nworkers; s++) {
        if (s == w->id) continue;
        struct xmsg *m;
        while ((m = spsc_pop(ring_between(s, w->id)))) {
            m->next = NULL;
            free_msg_list(m);
        }
    }
    for (unsigned t = 0; t < srv.nworkers; t++) {
        free_msg_list(w->free_batches[t]);
        if (w->out_batch[t]) free_msg_list(w->out_batch[t]);
        w->free_batches[t] = w->out_batch[t] = NULL;
    }
    publish_teardown(w);
    free_msg_list(w->overflow);
    free_msg_list(w->deferred);
    free_msg_list(w->stash);
    w->overflow = w->deferred = w->stash = NULL;
    free(w->fwd_argv);
}
