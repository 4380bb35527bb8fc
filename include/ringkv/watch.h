/*
 * WATCH, the keyspace side (watch.c): which clients watch which keys of a
 * shard. A client's WATCH leaves a record (its thread, idx/gen, watch
 * epoch) per key in the owning shard. Writes touch their keys, and
 * FLUSHDB/FLUSHALL/SWAPDB whole databases (db -1: all); every record of a
 * touched key goes to db_watch_hook (the I/O layer's), then is dropped.
 */
#ifndef RINGKV_WATCH_H
#define RINGKV_WATCH_H

#include "ringkv/db.h"

extern _Atomic long rk_watch_records;
extern void (*db_watch_hook)(struct cmd_ctx *c, const struct block_record *r);
void db_watch(struct cmd_ctx *c, struct slice key, const struct block_record *r);
void db_touch_watched_slow(struct cmd_ctx *c, int db, struct slice key);
static inline void db_touch_watched(struct cmd_ctx *c, int db, struct slice key) {
    if (RK_UNLIKELY(atomic_load_explicit(&rk_watch_records, memory_order_relaxed) != 0))
        db_touch_watched_slow(c, db, key);
}
void db_touch_watched_db(struct cmd_ctx *c, int db);
void shard_watch_destroy(struct shard *s);

#endif
