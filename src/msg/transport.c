/*
 * Messaging between workers, the transport: each ordered pair of workers
 * has one SPSC ring of struct xmsg pointers (spsc.h). A message that does
 * not fit goes on the sender's overflow list, and once that list is not
 * empty everything for that target queues behind it, so per-target order
 * holds. At the end of an iteration every target that may be asleep gets
 * one doorbell (ring_doorbell), never one per message. Receiving hands each
 * message to its layer: forwarded batches (forward.c), the shard lock and
 * transactions (tx.c), wake-ups of blocked clients (blocking.c).
 */
#include "ringkv/ring.h"
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdlib.h>

#include "msg_internal.h"

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
        ring_doorbell(w, target);
        w->stats.doorbells++;
    }
}

/* ---- receiving ---- */

static void handle_msg(struct worker *w, struct xmsg *m) {
    switch (m->type) {
    case XM_BATCH:
        if (w->lock_holder || w->deferred) tx_defer_batch(w, m);
        else execute_batch(w, m);
        break;
    case XM_BATCH_DONE:
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
        client_ready(w, &m->ready);
        free(m);
        break;
    case XM_WATCH:
        client_watch_touched(w, &m->ready);
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
