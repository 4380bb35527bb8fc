/*
 * Keyspace notifications (see notify.h): the two channel names, published
 * through the ordinary pub/sub path from the thread running the write (or
 * the expiry), with that thread's replica of the channel directory.
 */
#include "ringkv/notify.h"
#include "ringkv/pubsub.h"
#include "ringkv/server.h"

#include <stdio.h>
#include <stdlib.h>

static void append_db(struct rbuf *ch, const char *prefix, int dbi) {
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%s%d__:", prefix, dbi);
    rbuf_append(ch, buf, (size_t)n);
}

static void publish_both(struct worker *w, struct ps_dir *dir, int flags, const char *event, struct slice key,
                         int dbi) {
    struct rbuf ch = { 0 };
    struct slice ev = { event, strlen(event) };
    if (flags & NOTIFY_KEYSPACE) {
        append_db(&ch, "__keyspace@", dbi);
        rbuf_append(&ch, key.ptr, key.len);
        pubsub_publish_dir(w, dir, PS_CHANNEL, (struct slice){ ch.buf, ch.len }, ev);
    }
    if (flags & NOTIFY_KEYEVENT) {
        ch.len = 0;
        append_db(&ch, "__keyevent@", dbi);
        rbuf_append(&ch, ev.ptr, ev.len);
        pubsub_publish_dir(w, dir, PS_CHANNEL, (struct slice){ ch.buf, ch.len }, key);
    }
    rbuf_free(&ch);
}

void notify_slow(struct cmd_ctx *c, int type, const char *event, struct slice key) {
    (void)type;
    publish_both(c->worker, c->shard->psdir, (int)CONFIG_GET(notify_keyspace_events), event, key, c->db);
}

void notify_on_shard(struct shard *s, int dbi, int type, const char *event, struct slice key) {
    int flags = (int)CONFIG_GET(notify_keyspace_events);
    if (!(flags & type)) return;
    publish_both(&srv.workers[s->id], s->psdir, flags, event, key, dbi);
}

/* Active expiry runs outside any command, on the shard's own thread: its
 * context has the shard but no worker. */
static void keyspace_event(struct cmd_ctx *c, int type, const char *event, struct slice key) {
    if (c->worker) notify_slow(c, type, event, key);
    else notify_on_shard(c->shard, c->db, type, event, key);
}

void notify_init(void) {
    db_event_hook = keyspace_event;
}
