/*
 * The keyspace as commands see it.
 *
 * Every thread owns one shard: for each logical database (SELECT n) a hash
 * table of the keys whose hash slot maps to that shard. Commands reach keys
 * only through the functions below, which pick the right table, apply lazy
 * expiry and keep the per-database counters (keys with a TTL) right.
 *
 * On the normal path all keys of a command live in the executing shard
 * (the dispatcher made sure of it). When a command spans shards it runs as a
 * cross-shard transaction (see xshard.h): the coordinator holds every shard
 * it needs, c->multi is set, and each key is routed to its own shard here.
 */
#ifndef RINGKV_DB_H
#define RINGKV_DB_H

#include <stdatomic.h>

#include "ringkv/common.h"
#include "ringkv/entry.h"
#include "ringkv/table.h"
#include "ringkv/arena.h"
#include "ringkv/slot.h"

struct cmd_ctx;

/* Which shard owns a hash slot: slot % nshards, set by slots_assign() before
 * the workers start and read-only afterwards. Every request of a threaded
 * server asks, so the modulo is Lemire's fastmod (a multiply, no divide and
 * no table to miss in the cache); exact for 16-bit slots and shard counts. */
extern uint32_t rk_shard_count, rk_shard_fastmod;
void slots_assign(unsigned nshards);
static inline unsigned shard_of_slot(unsigned slot) {
    uint32_t low = rk_shard_fastmod * slot;
    return (unsigned)(((uint64_t)low * rk_shard_count) >> 32);
}
static inline unsigned shard_of_key(const char *key, size_t len) { return shard_of_slot(key_hash_slot(key, len)); }

struct kv_db {
    struct kv_table table;
    size_t expires;            /* entries with ENTRY_EXPIRE */
};

struct shard_stats {
    uint64_t keyspace_hits, keyspace_misses;
    uint64_t expired_keys, evicted_keys;
    /* changes made by commands run on this shard's thread (Redis's
     * server.dirty, summed over shards): written by that thread alone,
     * read relaxed by others */
    long long dirty;
};

struct shard {
    unsigned id;
    unsigned ndb;
    struct kv_db *dbs;
    struct shard_stats stats;
    struct entry_arena arena;     /* where this shard's entries live */
    uint64_t expire_cursor[64];   /* active expiry position per db (first 64 dbs) */
    unsigned expire_db;           /* next db for the active cycle */
    struct hashmap *waiters;      /* "db:key" -> records of clients blocked on it, in line (db.c) */
    struct trk_table *tracking;   /* client-side caching: tracked keys, BCAST prefixes (tracking.h) */
    struct hashmap *watched;      /* "db:key" -> block_record[] of clients watching it (watch.h) */
    struct ps_dir *psdir;         /* pub/sub subscribers per thread (pubsub_dir.h), NULL until used */
    /* eviction (evict.h), by the owner's thread */
    struct evict_pool *evict_pool;   /* best candidates seen, NULL until needed */
    unsigned evict_db;               /* next database for the random policies */
    _Atomic size_t evictable;        /* keys the policy may evict, as of the owner's last iteration */
    long long evictable_ms;          /* when the owner published that */
    _Atomic uint64_t evict_best;     /* its best candidate's score + 1 (0: none), for the ranked policies */
    _Atomic int evict_best_policy;   /* under which policy */
    _Atomic long long evict_best_ms; /* when it published that */
    long long evict_share_until_ms;  /* freed its share while the others were not known: waits for them */
    struct dead_table *dead_tables;  /* emptied ASYNC, freed by the owner in steps (lazyfree.h) */
    /* snapshots (below) */
    bool snap_active;             /* a snapshot is saving this shard */
    uint8_t snap_side;            /* 0 or ENTRY_SNAP: the bit of entries saved or made since it began */
    struct snap_part *snap;       /* the snapshot's state for this shard (persist/snapshot.c) */
};

/*
 * Snapshots without fork (persist/snapshot.c). A snapshot begins while
 * every shard is held: each shard's snap_side flips, so every entry then
 * has the other side, "not saved yet". The shard's thread then saves its
 * entries in small steps, flipping each one's ENTRY_SNAP. Before a change
 * to an entry not saved yet (a write command's lookup, an overwrite, a
 * delete, a TTL change), the keyspace hands it to db_snapshot_hook, which
 * saves the value it had at the snapshot's moment and flips the bit; an
 * entry that joins a table takes the shard's snap_side, as it came after
 * that moment. Entries rebuilt for a change keep their bit (entry.h).
 * Costs one predictable branch per change while no snapshot runs.
 */
extern void (*db_snapshot_hook)(struct shard *s, unsigned dbi, struct kv_entry *e);
static inline bool db_snapshot_pending(const struct shard *s, const struct kv_entry *e) {
    return s->snap_active && (e->meta & ENTRY_SNAP) != s->snap_side;
}
/* Save every entry of database dbi not saved yet, before it is emptied or
 * swapped whole (FLUSHDB, FLUSHALL, SWAPDB). */
void db_snapshot_settle(struct shard *s, unsigned dbi);

/*
 * Blocking commands. A client whose BLPOP (etc.) found nothing leaves one
 * record per key in the owning shard's waiters, in line by its ticket: the
 * order in which the blocking commands were taken up on their threads (a
 * process-wide count), not the order in which their records reach the
 * shard, which a command run as a transaction from another thread reaches
 * a lock round trip late. A write that may serve them calls
 * db_signal_ready(): if the key holds a value, the first waiter is told
 * (db_ready_hook) to run its command again; the next one is told once the
 * first was served (db_waiter_served) or has gone (db_waiter_declined), so
 * waiters on any thread are served oldest first. The hook is the I/O
 * layer's; unit tests leave it NULL.
 */
struct block_record {
    uint32_t worker, idx, gen, seq;
};
extern void (*db_ready_hook)(struct cmd_ctx *c, const struct block_record *r);
/* Whether a record (with its ticket) may still matter; false only when
 * known dead (the I/O layer can tell for clients of the calling thread).
 * Keeps a key's list of records from growing with waiters that went away. */
extern bool (*db_waiter_alive_hook)(struct cmd_ctx *c, const struct block_record *r, uint64_t ticket);
/* While CLIENT PAUSE is in force (true), an expired key met by a lookup is
 * reported absent but not deleted, as Redis's expireIfNeeded during a
 * pause. The I/O layer's; NULL in unit tests. */
extern bool (*db_expire_paused_hook)(long long now_ms);
/* Register r on key, in line by ticket (0: none, at the end); a rerun
 * (c->rerun) keeps the place of its client's record. */
void db_block_on(struct cmd_ctx *c, struct slice key, const struct block_record *r, uint64_t ticket);
void db_signal_ready(struct cmd_ctx *c, struct slice key);
/* Whether a client other than r's waits on key with an earlier ticket (0:
 * none, false; records known dead do not count): a blocking command that
 * finds the key ready leaves it to them and waits behind them. A key that
 * holds a value and has waiters always has its turn out (its first waiter
 * was woken, or is running its command), so the turn reaches this one. */
bool db_waiters_before(struct cmd_ctx *c, struct slice key, const struct block_record *r, uint64_t ticket);
/* r's client ran its blocking command to the end (served, timed out, an
 * error): its records on key go; if it was first, the next one is woken. */
void db_waiter_served(struct cmd_ctx *c, struct slice key, const struct block_record *r);
/* Record r (exactly) of this shard (c->shard) belongs to a client that
 * will not run again (gone, CLIENT UNBLOCK ERROR): it goes, and where it
 * was first the next waiter is woken. */
void db_waiter_declined(struct cmd_ctx *c, const struct block_record *r);
/* The key of a per-shard registry (waiters, watched keys): the database
 * number, then the key bytes, in buf. */
static inline struct slice db_registry_key(struct rbuf *buf, int db, struct slice key) {
    uint16_t d = (uint16_t)db;
    buf->len = 0;
    rbuf_append(buf, &d, sizeof d);
    rbuf_append(buf, key.ptr, key.len);
    return (struct slice){ buf->buf, buf->len };
}
/* Every key of database db that clients wait on (SWAPDB). */
void db_signal_ready_db(struct cmd_ctx *c, int db);
/* Keys with waiter records, over all shards: a write looks for waiters of
 * its keys only while there are any. */
extern _Atomic long rk_waiter_keys;

/*
 * Keyspace events the keyspace raises itself (notify-keyspace-events):
 * "expired" when it deletes a key because it expired (a lookup, active
 * expiry, RANDOMKEY, a write over it) and "new" when a key joins a
 * database (Redis's dbAdd). The classes are Redis's bits, notify.h's
 * NOTIFY_EXPIRED and NOTIFY_NEW. The command layer publishes them through
 * db_event_hook (set at start, NULL in unit tests), called as
 * hook(c, class, event, key) for database c->db; from active expiry c has
 * no worker. The configuration is tested first, so while it leaves a class
 * out (the default) raising it costs one predictable branch.
 */
#define DB_EVENT_EXPIRED (1 << 8)
#define DB_EVENT_NEW     (1 << 14)
extern void (*db_event_hook)(struct cmd_ctx *c, int type, const char *event, struct slice key);
/* Every deletion the keyspace makes itself (an expired key, an evicted
 * one), for the AOF (its DEL record); NULL in unit tests. */
extern void (*db_expired_hook)(struct cmd_ctx *c, struct slice key);
/* Evict key from database dbi of c->shard (evict.h): deleted as Redis's
 * evictions are, with "evicted", WATCH and tracking told, the AOF's DEL.
 * Returns the bytes the deletion itself gave back on this thread, as
 * Redis measures an eviction: not what telling the others cost or freed
 * (an invalidation queued for every tracking client). */
long long db_evict_key(struct cmd_ctx *c, unsigned dbi, struct slice key);
#define DB_EVENT_EVICTED (1 << 9)

void shard_init(struct shard *s, unsigned id, unsigned ndb);
void shard_destroy(struct shard *s);
void db_empty(struct kv_db *db);                 /* drop every key */
/* Drop every key now, free them later: the table is detached and s's
 * worker frees it in steps (lazyfree.h). */
void db_empty_async(struct shard *s, struct kv_db *db);

/* Loading (rdb_load.h): e, built in s's arena, joins database dbi of s
 * without events. A key already there is replaced when merge, else e is
 * freed and false returned. */
bool db_load_entry(struct shard *s, unsigned dbi, struct kv_entry *e, bool merge);

/* Lookup flags */
#define LOOKUP_NONE    0
#define LOOKUP_READ    1   /* count a keyspace hit/miss (GET-like reads) */
#define LOOKUP_NOEXPIRE 2  /* do not delete an expired key (it is still reported absent) */
#define LOOKUP_NOTOUCH 4   /* not an access: the key's stamp (stamp.h) stays (TYPE, TTL, OBJECT, ...) */
#define LOOKUP_TOUCH   8   /* an access even for a CLIENT NO-TOUCH client (TOUCH) */

/* The entry for key, or NULL if absent or expired (an expired key is deleted). */
struct kv_entry *db_lookup(struct cmd_ctx *c, struct slice key, unsigned flags);
/* Same, but returns the table slot so the caller can replace the entry. */
struct kv_entry **db_lookup_slot(struct cmd_ctx *c, struct slice key, unsigned flags);
/* Insert an entry whose key is absent (just looked up). */
void db_insert(struct cmd_ctx *c, struct kv_entry *e);
/* Put a different entry e for the same key in place of the live entry in slot,
 * freeing the old one (and its object) and keeping the TTL counter right.
 * Results of entry_set_string/entry_resize_string on *slot are stored with a
 * plain `*slot = ...` instead: they keep key and expiry and have already
 * freed the old entry. Expiry changes go through db_set_expire. */
void db_replace(struct cmd_ctx *c, struct kv_entry **slot, struct kv_entry *e);
/* Insert or overwrite key with e (frees what was there: in the background
 * when big and lazyfree-lazy-server-del is on). */
void db_set(struct cmd_ctx *c, struct kv_entry *e);
/* The server deletes key (lazyfree-lazy-server-del decides how); true if
 * it existed (and was not expired). */
bool db_delete(struct cmd_ctx *c, struct slice key);
/* The same, a big value freed in the background when lazy (UNLINK). */
bool db_delete_lazy(struct cmd_ctx *c, struct slice key, bool lazy);
/* Set or clear the expiry of the entry in slot (NO_EXPIRE clears). */
void db_set_expire(struct cmd_ctx *c, struct kv_entry **slot, long long when_ms);
/* Unlink the entry from its table without freeing it (RENAME, MOVE). */
struct kv_entry *db_unlink(struct cmd_ctx *c, struct slice key);

/* The database of index dbi of the shard that owns key (for MOVE/COPY DB). */
struct kv_db *db_for_key(struct cmd_ctx *c, int dbi, struct slice key);

/* Keyspace-wide helpers for commands that run over all shards. */
size_t db_size_all(struct cmd_ctx *c, int dbi);
/* Delete an expired entry met while walking a shard's database directly
 * (RANDOMKEY; db is database c->db of s): counts it in the shard's
 * expired_keys and tells its watchers, like lazy expiry. */
void db_expire_found(struct cmd_ctx *c, struct shard *s, struct kv_db *db, struct kv_entry *e);

/* Active expiry: sample keys with a TTL in the shard for at most budget_us. */
void shard_active_expire(struct shard *s, long long now_ms, uint64_t budget_us);
/* Whether active expiry runs at all (DEBUG SET-ACTIVE-EXPIRE, Redis's
 * active_expire_enabled): while false, an expired key stays in its table,
 * counted by DBSIZE, until a lookup meets it. Written by DEBUG holding
 * every shard, read by every shard's cron. */
extern _Atomic bool db_active_expire;

bool key_is_expired(const struct kv_entry *e, long long now_ms);

#endif
