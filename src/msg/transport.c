/*
 * Messaging between workers, the transport (sending side; inbox.c takes
 * messages off the rings and hands them to their layer): each ordered pair of workers
 * has one SPSC ring of struct xmsg pointers (spsc.h). A message that does
 * not fit goes on the sender's overflow list, and once that list is not
 * empty everything for that target queues behind it, so per-target order
 * holds. At the end of an iteration every target that may be asleep gets
 * one doorbell (ring_doorbell), never one per message.
 */
#include "ringkv/ring.h"
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdlib.h>

#include "msg_internal.h"

struct msg_client_ops rk_msg_client;

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
        if (m) {
            w->out_batch[t] = NULL;
            w->stats.batches_out++;
            xshard_send(w, t, m);
        }
        if (w->out_publish[t]) {   /* gathered by publish.c */
            xshard_send(w, t, w->out_publish[t]);
            w->out_publish[t] = NULL;
        }
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

bool xshard_inbox_empty(struct worker *w) {
    if (w->stash || (w->deferred && !w->lock_holder)) return false;   /* a batch cut short goes on */
    for (unsigned s = 0; s < srv.nworkers; s++)
        if (s != w->id && !spsc_empty(ring_between(s, w->id))) return false;
    return true;
}
