/*
 * WATCH, the keyspace side (watch.c): which clients watch which keys of a
 * shard. A client's WATCH leaves a record (its thread, idx/gen, watch
 * epoch) per key in the owning shard. A key that really changed is
 * touched (db_changed, from the keyspace's write paths and the handlers
 * that change a value in place), and FLUSHDB/FLUSHALL/SWAPDB touch the
 * watched keys of whole databases that they change; every record of a
 * touched key goes to db_watch_hook (the I/O layer's), then is dropped.
 *
 * As in Redis 7.0, a key already expired (but not yet deleted) when it was
 * watched is remembered as such: its deletion by expiry, a FLUSH or a
 * SWAPDB that leaves it absent is no change, and EXEC does not fail on it
 * (db_watched_expired); one that expires after the WATCH fails EXEC.
 */
#ifndef RINGKV_WATCH_H
#define RINGKV_WATCH_H

#include "ringkv/db.h"
#include "ringkv/command.h"

extern _Atomic long rk_watch_records;
/* ctx->worker is the thread running the change; NULL when it is the
 * owner of ctx->shard doing housekeeping (active expiry). */
extern void (*db_watch_hook)(struct cmd_ctx *c, const struct block_record *r);
/* Watch key (database c->db) for r's client: the command runs where the key
 * is held. */
void db_watch(struct cmd_ctx *c, struct slice key, const struct block_record *r);
/* key of database db changed; gone: it no longer exists (deleted, expired). */
void db_touch_watched_slow(struct cmd_ctx *c, int db, struct slice key, bool gone);
static inline void db_touch_watched(struct cmd_ctx *c, int db, struct slice key, bool gone) {
    if (RK_UNLIKELY(atomic_load_explicit(&rk_watch_records, memory_order_relaxed) != 0))
        db_touch_watched_slow(c, db, key, gone);
}
/* A command changed key (in c->db): counted in c->dirty (Redis's
 * server.dirty: the command changed something) and its watchers told.
 * The one way a write reports a change; costs an increment and a relaxed
 * load while nobody watches anything. */
static inline void db_changed(struct cmd_ctx *c, struct slice key, bool gone) {
    c->dirty++;
    db_touch_watched(c, c->db, key, gone);
}
/* FLUSHDB (db) or FLUSHALL (db -1), before the keys go: touches the
 * watched keys that exist. */
void db_touch_watched_flush(struct cmd_ctx *c, int db);
/* SWAPDB a b, before the swap: touches the watched keys of either database
 * that exist in either. */
void db_touch_watched_swap(struct cmd_ctx *c, int a, int b);
/* EXEC, with every shard of the watched keys held: whether one of them
 * (keys: [db:u16][len:u32][bytes]... as io/multi.c lists them) has expired
 * since it was watched by r's client. Such a key is not deleted yet
 * (its deletion would have touched it). */
bool db_watched_expired(struct cmd_ctx *c, const struct block_record *r, struct slice keys);
void shard_watch_destroy(struct shard *s);

#endif
