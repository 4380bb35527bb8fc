/*
 * Keyspace notifications (notify-keyspace-events): a write publishes
 * "__keyspace@<db>__:<key>" <event> and "__keyevent@<db>__:<event>" <key>
 * on the ordinary pub/sub channels, for the classes the configuration
 * enables. Event names are Redis's. Costs one relaxed load when the
 * configuration enables nothing (the default).
 *
 * "expired" and "new" are raised by the keyspace itself (db.h), which
 * cannot call up into this layer: notify_init() gives it the hook.
 */
#ifndef RINGKV_NOTIFY_H
#define RINGKV_NOTIFY_H

#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"

/* Redis's classes, in its bit order. */
enum {
    NOTIFY_KEYSPACE = 1 << 0,   /* K */
    NOTIFY_KEYEVENT = 1 << 1,   /* E */
    NOTIFY_GENERIC = 1 << 2,    /* g */
    NOTIFY_STRING = 1 << 3,     /* $ */
    NOTIFY_LIST = 1 << 4,       /* l */
    NOTIFY_SET = 1 << 5,        /* s */
    NOTIFY_HASH = 1 << 6,       /* h */
    NOTIFY_ZSET = 1 << 7,       /* z */
    NOTIFY_EXPIRED = DB_EVENT_EXPIRED,   /* x (1 << 8) */
    NOTIFY_EVICTED = DB_EVENT_EVICTED,   /* e (1 << 9) */
    NOTIFY_STREAM = 1 << 10,    /* t */
    NOTIFY_KEY_MISS = 1 << 11,  /* m (not part of A) */
    NOTIFY_MODULE = 1 << 13,    /* d */
    NOTIFY_NEW = DB_EVENT_NEW,  /* n (1 << 14, not part of A) */
    NOTIFY_ALL = NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET |
                 NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE,
};

struct shard;
struct worker;

/* Publish event for key of the command's database, if its class is on. */
void notify_slow(struct cmd_ctx *c, int type, const char *event, struct slice key);
static inline void notify(struct cmd_ctx *c, int type, const char *event, struct slice key) {
    if (RK_UNLIKELY(CONFIG_GET(notify_keyspace_events) & type)) notify_slow(c, type, event, key);
}
/* The same without a command: active expiry on shard s's own thread. */
void notify_on_shard(struct shard *s, int dbi, int type, const char *event, struct slice key);
/* At start: the keyspace's "expired" and "new" go through here (db_event_hook). */
void notify_init(void);

#endif
