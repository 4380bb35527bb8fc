/*
 * What the messaging layer's files (transport.c, forward.c, tx.c) share
 * but nothing else should see.
 */
#ifndef RINGKV_MSG_INTERNAL_H
#define RINGKV_MSG_INTERNAL_H

#include "ringkv/server.h"

/* forward.c */
/* Run a batch (from where it stopped), send its replies back; false when
 * it was cut short: its rest runs later, before any batch that arrived
 * after it (deferred). */
bool execute_batch(struct worker *w, struct xmsg *m);
void collect_replies(struct worker *w, struct xmsg *m); /* a batch (or part) came back with replies */

/* tx.c */
void tx_lock_request(struct worker *w, struct xmsg *m); /* XM_LOCK for our shard */
void tx_locked(struct worker *w, struct xmsg *m);       /* XM_LOCKED: a shard we asked for */
void tx_unlock(struct worker *w);                       /* XM_UNLOCK: our shard is free */
void tx_defer_batch(struct worker *w, struct xmsg *m);
bool tx_resume_deferred(struct worker *w);              /* not held: deferred batches go on; true if any did */
void tx_take_request(struct worker *w, struct xmsg *m); /* XM_TAKE for our shard: granted or denied now */

/* publish.c */
void publish_receive(struct worker *w, struct xmsg *m);  /* deliver and free an XM_PUBLISH */
void publish_teardown(struct worker *w);

#endif
