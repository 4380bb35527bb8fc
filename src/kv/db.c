/*
 * The keyspace as commands see it: routing a key to its table, lazy and
 * active expiry, and the per-database TTL counter.
 *
 * Routing. On the normal path the dispatcher has made sure every key of the
 * command lives in the executing shard, so the table is simply
 * c->shard->dbs[c->db] and no slot is computed. Only when c->multi is set (a
 * cross-shard transaction holding every shard it needs) is each key sent to
 * the shard that owns its hash slot (shard_of_slot).
 *
 * Expiry. A key with a TTL carries its absolute expiry time in the entry
 * (ENTRY_EXPIRE); there is no second dictionary of volatile keys as in Redis.
 * A key is expired once now > expire_at, exactly as Redis's keyIsExpired().
 * Expired keys are deleted lazily when a lookup meets them and actively by
 * shard_active_expire(), which walks each table with a saved cursor in small
 * batches (table_scan forbids changes during its callback, so a batch first
 * collects the dead entries and then deletes them) and stops when its time
 * budget is used, so it never becomes one long sweep.
 *
 * Every place an entry enters or leaves a table goes through insert_entry()
 * or drop_entry(), which keep kv_db.expires in step with ENTRY_EXPIRE.
 *
 * Keyspace events. Every deletion of an expired key counts in expired_keys
 * and raises "expired"; every key added by db_insert, or by db_set where
 * none was, raises "new" (db.h). Redis raises "new" in dbAdd, before the
 * command's own event, and so do these: commands notify after storing.
 *
 * Hashing once. A command that looks a key up and then inserts it (SET NX,
 * INCR of a new key, ...) would hash the key twice, because db_insert only
 * receives the new entry. A small per-thread memo remembers the last key
 * hashed (its bytes, when short) and its XXH3, so the second hash is a memcmp.
 */
#include <stdlib.h>

#include "ringkv/db.h"
#include "ringkv/mem.h"
#include "ringkv/arena.h"
#include "ringkv/hashmap.h"
#include "ringkv/pubsub_dir.h"
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/stamp.h"
#include "ringkv/lazyfree.h"
#include "ringkv/util.h"
#include "ringkv/tracking.h"
#include "ringkv/watch.h"

/* For one shard the multiplier 2^32 wraps to 0, which gives shard 0 as it should. */
uint32_t rk_shard_count = 1, rk_shard_fastmod = 0;

void slots_assign(unsigned nshards) {
    rk_shard_count = nshards;
    rk_shard_fastmod = 0xffffffffu / nshards + 1;
}

/* ---------------------------------------------------------------------------
 * Hash memo
 * ------------------------------------------------------------------------- */

#define MEMO_MAX_KEY 64   /* longer keys are rare; rehashing them is fine */

static _Thread_local struct {
    size_t len;           /* SIZE_MAX when empty */
    uint64_t hash;
    char key[MEMO_MAX_KEY];
} memo = { .len = SIZE_MAX };

static uint64_t key_hash(struct slice key) {
    if (key.len == memo.len && memcmp(key.ptr, memo.key, key.len) == 0)
        return memo.hash;
    uint64_t h = table_hash(key.ptr, key.len);
    if (key.len <= MEMO_MAX_KEY) {
        memcpy(memo.key, key.ptr, key.len);
        memo.len = key.len;
        memo.hash = h;
    }
    return h;
}

/* ---------------------------------------------------------------------------
 * Shards and databases
 * ------------------------------------------------------------------------- */

void shard_init(struct shard *s, unsigned id, unsigned ndb) {
    memset(s, 0, sizeof *s);
    s->id = id;
    s->ndb = ndb;
    s->dbs = rk_calloc(ndb, sizeof *s->dbs);
    for (unsigned i = 0; i < ndb; i++)
        table_init(&s->dbs[i].table);
    arena_init(&s->arena);
}

/* At exit the arena goes as a whole: only what lives elsewhere is freed. */
static void entry_free_at_exit(struct kv_entry *e) {
    if (!(e->meta & ENTRY_ARENA) || entry_type(e) != OBJ_STRING) entry_free(e);
}

void shard_destroy(struct shard *s) {
    /* Tables emptied ASYNC and not yet freed first: their entries live in
     * the arena that goes below. */
    while (lazyfree_step(s)) {}
    for (unsigned i = 0; i < s->ndb; i++)
        table_destroy(&s->dbs[i].table, entry_free_at_exit);
    free(s->dbs);
    s->dbs = NULL;
    s->ndb = 0;
    arena_destroy(&s->arena);
    if (s->waiters) hashmap_free(s->waiters);
    s->waiters = NULL;
    ps_dir_free(s->psdir);
    s->psdir = NULL;
}

void db_empty(struct kv_db *db) {
    if (table_size(&db->table)) mem_trim_soon();
    table_destroy(&db->table, entry_free);
    table_init(&db->table);
    db->expires = 0;
}

void db_empty_async(struct shard *s, struct kv_db *db) {
    if (table_size(&db->table)) lazyfree_table(s, &db->table);
    db->expires = 0;
}

bool key_is_expired(const struct kv_entry *e, long long now_ms) {
    return entry_has_expire(e) && now_ms > entry_expire(e);
}

/* The shard owning key: the executing one unless keys may span shards. In
 * a transaction, entries made from here on go to the owner's arena. */
static inline struct shard *owner_shard(struct cmd_ctx *c, struct slice key) {
    if (RK_LIKELY(!c->multi))
        return c->shard;
    struct shard *s = c->shards[shard_of_slot(key_hash_slot(key.ptr, key.len))];
    if (rk_arena) rk_arena = &s->arena;
    return s;
}

/* An entry joins a table only in the arena of that table's shard (a
 * transaction may have built it while working on another shard). */
static inline struct kv_entry *home_entry(struct cmd_ctx *c, struct shard *s, struct kv_entry *e) {
    if (c->multi && (e->meta & ENTRY_ARENA) && arena_of(e) != &s->arena) {
        rk_arena = &s->arena;
        e = entry_rehome(e);
    }
    return e;
}

struct kv_db *db_for_key(struct cmd_ctx *c, int dbi, struct slice key) {
    return &owner_shard(c, key)->dbs[dbi];
}

size_t db_size_all(struct cmd_ctx *c, int dbi) {
    size_t n = 0;
    for (unsigned i = 0; i < c->nshards; i++)
        n += table_size(&c->shards[i]->dbs[dbi].table);
    return n;
}

void (*db_event_hook)(struct cmd_ctx *c, int type, const char *event, struct slice key);
void (*db_expired_hook)(struct cmd_ctx *c, struct slice key);

/* The configuration is read first: the hook is set whenever the server
 * runs, and "new" would otherwise cost a call per key added. */
static inline void key_event(struct cmd_ctx *c, int type, const char *event, struct slice key) {
    if (type == DB_EVENT_EXPIRED && db_expired_hook) db_expired_hook(c, key);
    if (RK_UNLIKELY(CONFIG_GET(notify_keyspace_events) & type) && db_event_hook)
        db_event_hook(c, type, event, key);
}

/* ---------------------------------------------------------------------------
 * Snapshots (db.h)
 * ------------------------------------------------------------------------- */

void (*db_snapshot_hook)(struct shard *s, unsigned dbi, struct kv_entry *e);

/* Before e changes or goes: a running snapshot saves it first. */
static inline void snap_guard(struct shard *s, int dbi, struct kv_entry *e) {
    if (RK_UNLIKELY(db_snapshot_pending(s, e))) db_snapshot_hook(s, (unsigned)dbi, e);
}

/* A write command's lookup is where its changes begin. Read-only commands
 * change nothing; anything else (a script's call, a key it only reads)
 * saves the entry early, which is always correct. */
static inline bool may_change(const struct cmd_ctx *c) {
    return !c->cmd || !(c->cmd->flags & CMD_READONLY);
}

static inline void snap_join(struct shard *s, struct kv_entry *e) {
    e->meta = (uint8_t)((e->meta & ~ENTRY_SNAP) | s->snap_side);
}

struct settle_ctx { struct shard *s; unsigned dbi; };

static void settle_visit(void *ud, struct kv_entry *e) {
    struct settle_ctx *sc = ud;
    snap_guard(sc->s, (int)sc->dbi, e);
}

void db_snapshot_settle(struct shard *s, unsigned dbi) {
    if (!s->snap_active) return;
    struct settle_ctx sc = { s, dbi };
    uint64_t cursor = 0;
    do cursor = table_scan(&s->dbs[dbi].table, cursor, 1024, settle_visit, &sc);
    while (cursor);
}

/* A dropped entry goes now, or its big object in the background (lazyfree.h). */
static void free_dropped(struct kv_entry *e, bool lazy) {
    if (RK_UNLIKELY(lazy)) lazyfree_entry(e);
    else lazyfree_entry_now(e);
}

/* The only ways an entry enters, leaves or is swapped in a table. */
static void insert_entry(struct shard *s, struct kv_db *db, struct kv_entry *e, uint64_t h) {
    snap_join(s, e);
    table_insert(&db->table, e, h);
    if (entry_has_expire(e))
        db->expires++;
}

static struct kv_entry *drop_entry(struct kv_db *db, struct slice key, uint64_t h) {
    struct kv_entry *e = table_remove(&db->table, key.ptr, key.len, h);
    if (e && entry_has_expire(e))
        db->expires--;
    return e;
}

static void swap_entry(struct shard *s, struct kv_db *db, struct kv_entry **slot, struct kv_entry *e) {
    struct kv_entry *old = *slot;
    snap_guard(s, (int)(db - s->dbs), old);
    snap_join(s, e);
    db->expires += (size_t)entry_has_expire(e) - (size_t)entry_has_expire(old);
    *slot = e;
    free_dropped(old, CONFIG_GET(lazyfree_lazy_server_del));   /* an overwrite is the server's delete */
}

/* Deleting an expired key is a change for WATCH (not for c->dirty, as in
 * Redis): key must outlive the entry, the caller's copy. */
static void expire_entry(struct cmd_ctx *c, struct shard *s, struct kv_db *db, struct slice key, uint64_t h) {
    trk_key_gone(s, key);   /* client-side caching: before the entry (and key) may go */
    free_dropped(drop_entry(db, key, h), CONFIG_GET(lazyfree_lazy_expire));
    s->stats.expired_keys++;
    key_event(c, DB_EVENT_EXPIRED, "expired", key);
    db_touch_watched(c, c->db, key, true);
}

long long db_evict_key(struct cmd_ctx *c, unsigned dbi, struct slice key) {
    struct shard *s = c->shard;
    struct kv_db *db = &s->dbs[dbi];
    uint64_t h = table_hash(key.ptr, key.len);
    struct kv_entry **slot = table_find(&db->table, key.ptr, key.len, h);
    if (!slot) return 0;
    snap_guard(s, (int)dbi, *slot);   /* a running snapshot keeps what it had */
    c->db = (int)dbi;
    trk_key_evicted(s, key);
    long long before = mem_thread_bytes();
    free_dropped(drop_entry(db, key, h), CONFIG_GET(lazyfree_lazy_eviction));
    long long freed = before - mem_thread_bytes();
    s->stats.evicted_keys++;
    if (db_expired_hook) db_expired_hook(c, key);
    if (RK_UNLIKELY(CONFIG_GET(notify_keyspace_events) & DB_EVENT_EVICTED) && db_event_hook)
        db_event_hook(c, DB_EVENT_EVICTED, "evicted", key);
    db_touch_watched(c, c->db, key, true);
    return freed;
}

void db_expire_found(struct cmd_ctx *c, struct shard *s, struct kv_db *db, struct kv_entry *e) {
    struct slice key = entry_key_slice(e);
    uint64_t h = table_hash(key.ptr, key.len);
    if (RK_LIKELY(atomic_load_explicit(&rk_watch_records, memory_order_relaxed) == 0)) {
        trk_key_gone(s, key);
        drop_entry(db, key, h);
        s->stats.expired_keys++;
        key_event(c, DB_EVENT_EXPIRED, "expired", key);   /* while e still holds the key */
        free_dropped(e, CONFIG_GET(lazyfree_lazy_expire));
        return;
    }
    struct rbuf copy = {0};   /* the key is told after the entry is freed */
    rbuf_append(&copy, key.ptr, key.len);
    expire_entry(c, s, db, (struct slice){ copy.buf, copy.len }, h);
    rbuf_free(&copy);
}

/* ---------------------------------------------------------------------------
 * Lookups and changes
 * ------------------------------------------------------------------------- */

struct kv_entry **db_lookup_slot(struct cmd_ctx *c, struct slice key, unsigned flags) {
    struct shard *s = owner_shard(c, key);
    struct kv_db *db = &s->dbs[c->db];
    uint64_t h = key_hash(key);
    struct kv_entry **slot = table_find(&db->table, key.ptr, key.len, h);

    if (slot && RK_UNLIKELY(key_is_expired(*slot, c->now_ms))) {
        if (!(flags & LOOKUP_NOEXPIRE) && !(db_expire_paused_hook && db_expire_paused_hook(c->now_ms)))
            expire_entry(c, s, db, key, h);
        slot = NULL;
    }
    if (flags & LOOKUP_READ) {
        if (slot) s->stats.keyspace_hits++;
        else s->stats.keyspace_misses++;
    }
    if (slot && !(flags & LOOKUP_NOTOUCH) && (!c->no_touch || (flags & LOOKUP_TOUCH))) entry_touch(*slot);
    if (slot && RK_UNLIKELY(s->snap_active) && may_change(c)) snap_guard(s, c->db, *slot);
    return slot;
}

struct kv_entry *db_lookup(struct cmd_ctx *c, struct slice key, unsigned flags) {
    struct kv_entry **slot = db_lookup_slot(c, key, flags);
    return slot ? *slot : NULL;
}

void db_insert(struct cmd_ctx *c, struct kv_entry *e) {
    struct shard *s = owner_shard(c, entry_key_slice(e));
    e = home_entry(c, s, e);
    struct slice key = entry_key_slice(e);
    insert_entry(s, &s->dbs[c->db], e, key_hash(key));
    key_event(c, DB_EVENT_NEW, "new", key);
    db_changed(c, key, false);
}

bool db_load_entry(struct shard *s, unsigned dbi, struct kv_entry *e, bool merge) {
    struct kv_db *db = &s->dbs[dbi];
    struct slice key = entry_key_slice(e);
    uint64_t h = key_hash(key);
    struct kv_entry **slot = table_find(&db->table, key.ptr, key.len, h);
    if (!slot) {
        insert_entry(s, db, e, h);
        return true;
    }
    if (!merge) {
        entry_free(e);
        return false;
    }
    swap_entry(s, db, slot, e);
    return true;
}

void db_replace(struct cmd_ctx *c, struct kv_entry **slot, struct kv_entry *e) {
    if (*slot == e) return;
    struct shard *s = owner_shard(c, entry_key_slice(e));
    swap_entry(s, &s->dbs[c->db], slot, home_entry(c, s, e));
    db_changed(c, entry_key_slice(*slot), false);
}

void db_set(struct cmd_ctx *c, struct kv_entry *e) {
    struct shard *s = owner_shard(c, entry_key_slice(e));
    e = home_entry(c, s, e);
    struct slice key = entry_key_slice(e);
    struct kv_db *db = &s->dbs[c->db];
    uint64_t h = key_hash(key);
    struct kv_entry **slot = table_find(&db->table, key.ptr, key.len, h);

    if (!slot) {
        insert_entry(s, db, e, h);
        key_event(c, DB_EVENT_NEW, "new", key);
    } else if (key_is_expired(*slot, c->now_ms)) {
        /* Redis expires it in the lookup before adding the new one */
        s->stats.expired_keys++;
        key_event(c, DB_EVENT_EXPIRED, "expired", key);
        swap_entry(s, db, slot, e);
        key_event(c, DB_EVENT_NEW, "new", key);
    } else {
        swap_entry(s, db, slot, e);
    }
    db_changed(c, key, false);
}

bool db_delete(struct cmd_ctx *c, struct slice key) {
    return db_delete_lazy(c, key, CONFIG_GET(lazyfree_lazy_server_del));
}

bool db_delete_lazy(struct cmd_ctx *c, struct slice key, bool lazy) {
    struct shard *s = owner_shard(c, key);
    struct kv_db *db = &s->dbs[c->db];
    uint64_t h = key_hash(key);
    struct kv_entry *e = drop_entry(db, key, h);

    if (!e)
        return false;
    bool live = !key_is_expired(e, c->now_ms);
    snap_guard(s, c->db, e);
    if (!live) {
        s->stats.expired_keys++;
        key_event(c, DB_EVENT_EXPIRED, "expired", key);
    }
    free_dropped(e, lazy);
    if (live) db_changed(c, key, true);
    else db_touch_watched(c, c->db, key, true);
    return live;
}

struct kv_entry *db_unlink(struct cmd_ctx *c, struct slice key) {
    struct shard *s = owner_shard(c, key);
    struct kv_entry *e = drop_entry(&s->dbs[c->db], key, key_hash(key));
    if (e) snap_guard(s, c->db, e);
    if (e) db_changed(c, key, true);
    return e;
}

void db_set_expire(struct cmd_ctx *c, struct kv_entry **slot, long long when_ms) {
    struct kv_entry *e = *slot;
    bool had = entry_has_expire(e);
    if (!had && when_ms == NO_EXPIRE)
        return;
    struct shard *s = owner_shard(c, entry_key_slice(e));
    struct kv_db *db = &s->dbs[c->db];
    snap_guard(s, c->db, e);
    *slot = entry_set_expire(e, when_ms);
    db->expires += (size_t)entry_has_expire(*slot) - (size_t)had;
    db_changed(c, entry_key_slice(*slot), false);
}

/* ---------------------------------------------------------------------------
 * Active expiry
 *
 * Modelled on Redis's activeExpireCycle(): for each database with keys that
 * have a TTL, look at about EXPIRE_KEYS_PER_LOOP of them, delete the expired
 * ones, and go again while more than EXPIRE_ACCEPTABLE_STALE percent of what
 * was looked at was dead. Redis samples its dictionary of volatile keys; we
 * walk the main table, so a loop also stops after EXPIRE_MAX_BATCHES batches
 * when keys with a TTL are sparse. The clock is read after every batch.
 * ------------------------------------------------------------------------- */

#define EXPIRE_SCAN_COUNT        64   /* table slots visited per table_scan call */
#define EXPIRE_DEAD_MAX          256  /* dead entries a batch can hold */
#define EXPIRE_KEYS_PER_LOOP     20
#define EXPIRE_MAX_BATCHES       16
#define EXPIRE_ACCEPTABLE_STALE  10   /* percent */
#define EXPIRE_CURSOR_DBS        RK_ARRAY_LEN(((struct shard *)0)->expire_cursor)

struct expire_batch {
    long long now_ms;
    size_t with_ttl;   /* entries with a TTL seen */
    size_t ndead;
    struct kv_entry *dead[EXPIRE_DEAD_MAX];
};

static void expire_visit(void *ud, struct kv_entry *e) {
    struct expire_batch *b = ud;
    if (!entry_has_expire(e))
        return;
    b->with_ttl++;
    /* A full batch leaves the rest for the next pass rather than growing. */
    if (key_is_expired(e, b->now_ms) && b->ndead < EXPIRE_DEAD_MAX)
        b->dead[b->ndead++] = e;
}

static void expire_batch_delete(struct cmd_ctx *c, struct kv_db *db, struct expire_batch *b) {
    for (size_t i = 0; i < b->ndead; i++)
        db_expire_found(c, c->shard, db, b->dead[i]);
}

/* One database's share of the cycle; false when the time budget ran out. */
static bool expire_db_cycle(struct cmd_ctx *c, struct shard *s, unsigned dbi, long long now_ms,
                            uint64_t deadline_us) {
    struct kv_db *db = &s->dbs[dbi];
    uint64_t *cursor = &s->expire_cursor[dbi];
    struct expire_batch b;
    size_t sampled, expired;

    b.now_ms = now_ms;
    do {
        sampled = expired = 0;
        for (int batch = 0; batch < EXPIRE_MAX_BATCHES && sampled < EXPIRE_KEYS_PER_LOOP; batch++) {
            if (db->expires == 0)
                return true;
            b.with_ttl = b.ndead = 0;
            *cursor = table_scan(&db->table, *cursor, EXPIRE_SCAN_COUNT, expire_visit, &b);
            c->db = (int)dbi;
            expire_batch_delete(c, db, &b);
            sampled += b.with_ttl;
            expired += b.ndead;
            if (monotonic_us() >= deadline_us)
                return false;
            if (*cursor == 0)
                return true;   /* a whole pass is enough for one call */
        }
    } while (expired * 100 > sampled * EXPIRE_ACCEPTABLE_STALE);
    return true;
}

_Atomic bool db_active_expire = true;

#define CRON_TABLE_STEPS 256   /* table_step calls per db and cron tick */

void shard_active_expire(struct shard *s, long long now_ms, uint64_t budget_us) {
    uint64_t deadline = monotonic_us() + budget_us;
    unsigned ndb = s->ndb < EXPIRE_CURSOR_DBS ? s->ndb : (unsigned)EXPIRE_CURSOR_DBS;

    if (ndb == 0)
        return;
    /* The cron is also where a table nobody writes to finishes resizing,
     * or shrinks after mass deletion: a few hundred groups a tick, so that
     * a big table's migration is over in seconds without its writes. */
    for (unsigned i = 0; i < ndb; i++)
        for (int k = 0; k < CRON_TABLE_STEPS && table_step(&s->dbs[i].table); k++) {}
    if (!atomic_load_explicit(&db_active_expire, memory_order_relaxed))
        return;

    /* Deleting a watched key tells its watchers: the owner's own thread,
     * outside any command (worker NULL, see watch.h). */
    struct cmd_ctx ctx = { .shard = s, .shards = &s, .nshards = 1, .now_ms = now_ms };
    for (unsigned n = 0; n < ndb; n++) {
        unsigned dbi = s->expire_db % ndb;
        if (s->dbs[dbi].expires && !expire_db_cycle(&ctx, s, dbi, now_ms, deadline))
            return;   /* resume this database next time */
        s->expire_db = (dbi + 1) % ndb;
    }
}

/* ---------------------------------------------------------------------------
 * Blocking: waiter records per key (see db.h)
 * ------------------------------------------------------------------------- */

void (*db_ready_hook)(struct cmd_ctx *c, const struct block_record *r);
_Atomic long rk_waiter_keys;
bool (*db_waiter_alive_hook)(struct cmd_ctx *c, const struct block_record *r, uint64_t ticket);
bool (*db_expire_paused_hook)(long long now_ms);


/* A key's waiters are kept in line by ticket: the order in which their
 * commands were taken up, on whichever thread (db.h). */
struct waiter {
    struct block_record r;
    uint64_t ticket;
    bool every;                 /* reads without consuming (streams): woken by every signal */
};

static bool same_client(const struct block_record *a, const struct block_record *b) {
    return a->worker == b->worker && a->idx == b->idx && a->gen == b->gen;
}

/* Whether key (database c->db of s) holds a value: only then may its
 * first waiter be served. Nothing is deleted. */
static bool key_present(struct cmd_ctx *c, struct shard *s, struct slice key) {
    struct kv_entry **slot = table_find(&s->dbs[c->db].table, key.ptr, key.len, key_hash(key));
    return slot && !key_is_expired(*slot, c->now_ms);
}

/* Wake the first consuming waiter of a key (records recs) if key has a
 * value, and with `every` (a write to the key, not a turn passed on) each
 * non-consuming one, whether the key has a value or not: a stream's
 * readers all see what was added, and XREADGROUP learns that its stream
 * or group went. */
static void wake(struct cmd_ctx *c, struct shard *s, struct slice key, struct slice recs, bool every) {
    bool present = key_present(c, s, key), first_done = false;
    for (size_t off = 0; off + sizeof(struct waiter) <= recs.len; off += sizeof(struct waiter)) {
        struct waiter w;
        memcpy(&w, recs.ptr + off, sizeof w);
        bool go = w.every ? every : present && !first_done;
        if (!w.every) first_done = true;
        if (go && db_ready_hook) db_ready_hook(c, &w.r);
        if (first_done && !every) break;
    }
}

static void wake_first(struct cmd_ctx *c, struct shard *s, struct slice key, struct slice recs) {
    wake(c, s, key, recs, false);
}

void db_block_on(struct cmd_ctx *c, struct slice key, const struct block_record *r, uint64_t ticket) {
    struct shard *s = owner_shard(c, key);
    if (!s->waiters) s->waiters = hashmap_new(true);
    struct rbuf k = {0}, v = {0};
    struct slice wk = db_registry_key(&k, c->db, key), old;
    struct waiter self = { *r, ticket ? ticket : UINT64_MAX, c->block_every };
    /* Keep the other records in line, but not this client's earlier ones
     * (a client polling with a timeout would pile them up) nor dead ones,
     * and go in before the first that was taken up later: a command that
     * had to take its keys' shard from another thread registers after
     * commands that came in after it and ran where the keys are. A client
     * that was woken and found nothing keeps its place. */
    bool known = hashmap_get(s->waiters, wk, &old), placed = false;
    if (!known) atomic_fetch_add_explicit(&rk_waiter_keys, 1, memory_order_relaxed);
    if (known) {
        for (size_t off = 0; off + sizeof self <= old.len; off += sizeof self) {
            struct waiter o;
            memcpy(&o, old.ptr + off, sizeof o);
            bool mine = o.r.worker == r->worker && o.r.idx == r->idx;
            if (mine && c->rerun && !placed && o.r.gen == r->gen) {
                self.ticket = o.ticket;
                rbuf_append(&v, &self, sizeof self);
                placed = true;
            } else if (!mine && (!db_waiter_alive_hook || db_waiter_alive_hook(c, &o.r, o.ticket))) {
                if (!placed && self.ticket < o.ticket) {
                    rbuf_append(&v, &self, sizeof self);
                    placed = true;
                }
                rbuf_append(&v, &o, sizeof o);
            }
        }
    }
    if (!placed) rbuf_append(&v, &self, sizeof self);
    /* A dead record dropped from the head had the key's turn, if the key
     * holds a value (a command that leaves it to older waiters registers
     * while it does): the new first, if not this one, gets it. */
    bool new_first = false;
    if (known && old.len >= sizeof self) {
        struct waiter was, now;
        memcpy(&was, old.ptr, sizeof was);
        memcpy(&now, v.buf, sizeof now);
        new_first = !same_client(&was.r, &now.r) && !same_client(&now.r, r);
    }
    hashmap_set(s->waiters, wk, (struct slice){ v.buf, v.len });
    if (new_first) wake_first(c, s, key, (struct slice){ v.buf, v.len });
    rbuf_free(&k);
    rbuf_free(&v);
}

bool db_waiters_before(struct cmd_ctx *c, struct slice key, const struct block_record *r, uint64_t ticket) {
    if (!ticket) return false;
    struct shard *s = owner_shard(c, key);
    if (!s->waiters || hashmap_count(s->waiters) == 0) return false;
    struct rbuf k = {0};
    struct slice wk = db_registry_key(&k, c->db, key), recs;
    bool before = false;
    if (hashmap_get(s->waiters, wk, &recs)) {
        for (size_t off = 0; off + sizeof(struct waiter) <= recs.len; off += sizeof(struct waiter)) {
            struct waiter o;
            memcpy(&o, recs.ptr + off, sizeof o);
            if (o.ticket >= ticket) break;   /* in line by ticket: the rest came later */
            /* one that registering drops (db_block_on) does not count */
            if (!same_client(&o.r, r) && (!db_waiter_alive_hook || db_waiter_alive_hook(c, &o.r, o.ticket))) {
                before = true;
                break;
            }
        }
    }
    rbuf_free(&k);
    return before;
}

/* Serving in order: only the first waiter is woken. The others
 * are woken in turn as the one before them is served (db_waiter_served) or
 * turns out to have gone (db_waiter_declined); a woken waiter that finds
 * nothing blocks again in its place. So waiters on any thread are served
 * oldest first, as in Redis. */
void db_signal_ready(struct cmd_ctx *c, struct slice key) {
    struct shard *s = owner_shard(c, key);
    if (RK_LIKELY(!s->waiters || hashmap_count(s->waiters) == 0)) return;
    struct rbuf k = {0};
    struct slice wk = db_registry_key(&k, c->db, key), recs;
    if (hashmap_get(s->waiters, wk, &recs)) wake(c, s, key, recs, true);
    rbuf_free(&k);
}

/* Drop the records matching r from the registry key wk (of database
 * c->db, key `key`): every record of r's client when `exact` is false, else
 * only r itself. If the first waiter went, the next one is woken. */
static void drop_waiter(struct cmd_ctx *c, struct shard *s, struct slice wk, struct slice key,
                        const struct block_record *r, bool exact) {
    struct slice recs;
    if (!hashmap_get(s->waiters, wk, &recs)) return;
    struct rbuf v = {0}, kk = {0};
    bool first_went = false;
    size_t i = 0;
    for (size_t off = 0; off + sizeof(struct waiter) <= recs.len; off += sizeof(struct waiter), i++) {
        struct waiter o;
        memcpy(&o, recs.ptr + off, sizeof o);
        bool match = same_client(&o.r, r) && (!exact || o.r.seq == r->seq);
        if (match) first_went |= i == 0;
        else rbuf_append(&v, &o, sizeof o);
    }
    if (v.len == recs.len) {   /* nothing matched */
        rbuf_free(&v);
        return;
    }
    rbuf_append(&kk, wk.ptr, wk.len);   /* wk may point into the map */
    struct slice key_copy = { kk.buf, kk.len };
    if (v.len) {
        hashmap_set(s->waiters, key_copy, (struct slice){ v.buf, v.len });
        if (first_went) {
            struct slice k2 = { kk.buf + (key.ptr - wk.ptr), key.len };
            wake_first(c, s, k2, (struct slice){ v.buf, v.len });
        }
    } else {
        hashmap_delete(s->waiters, key_copy);
        atomic_fetch_sub_explicit(&rk_waiter_keys, 1, memory_order_relaxed);
    }
    rbuf_free(&v);
    rbuf_free(&kk);
}

void db_waiter_served(struct cmd_ctx *c, struct slice key, const struct block_record *r) {
    struct shard *s = owner_shard(c, key);
    if (!s->waiters || hashmap_count(s->waiters) == 0) return;
    struct rbuf k = {0};
    struct slice wk = db_registry_key(&k, c->db, key);
    drop_waiter(c, s, wk, (struct slice){ wk.ptr + sizeof(uint16_t), key.len }, r, false);
    rbuf_free(&k);
}

void db_waiter_declined(struct cmd_ctx *c, const struct block_record *r) {
    struct shard *s = c->shard;
    if (!s->waiters || hashmap_count(s->waiters) == 0) return;
    /* which keys hold it is not known: look at every one (rare: only a
     * waiter that went away while first in line is declined) */
    struct rbuf keys = {0};
    struct hashmap_iter it = hashmap_iter_start(s->waiters);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
        struct slice recs = hm_elem_val(e);
        for (size_t off = 0; off + sizeof(struct waiter) <= recs.len; off += sizeof(struct waiter)) {
            struct waiter o;
            memcpy(&o, recs.ptr + off, sizeof o);
            if (same_client(&o.r, r) && o.r.seq == r->seq) {
                struct slice k = hm_elem_key(e);
                uint32_t len = (uint32_t)k.len;
                rbuf_append(&keys, &len, sizeof len);
                rbuf_append(&keys, k.ptr, k.len);
                break;
            }
        }
    }
    int saved = c->db;
    for (size_t off = 0; off < keys.len;) {
        uint32_t len;
        memcpy(&len, keys.buf + off, sizeof len);
        struct slice wk = { keys.buf + off + sizeof len, len };
        off += sizeof len + len;
        uint16_t d;
        memcpy(&d, wk.ptr, sizeof d);
        if (d >= s->ndb) continue;
        c->db = d;
        drop_waiter(c, s, wk, (struct slice){ wk.ptr + sizeof d, wk.len - sizeof d }, r, true);
    }
    c->db = saved;
    rbuf_free(&keys);
}

/* SWAPDB: every key of the database may have changed. */
static void signal_db_of_shard(struct cmd_ctx *c, struct shard *s, int db) {
    if (!s->waiters || hashmap_count(s->waiters) == 0) return;
    struct rbuf keys = {0};
    struct hashmap_iter it = hashmap_iter_start(s->waiters);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
        struct slice k = hm_elem_key(e);
        uint16_t d;
        memcpy(&d, k.ptr, sizeof d);
        if (d != (uint16_t)db) continue;
        uint32_t len = (uint32_t)(k.len - sizeof d);
        rbuf_append(&keys, &len, sizeof len);
        rbuf_append(&keys, k.ptr + sizeof d, len);
    }
    struct cmd_ctx local = *c;
    local.multi = false;
    local.shard = s;
    local.db = db;
    for (size_t off = 0; off < keys.len;) {
        uint32_t len;
        memcpy(&len, keys.buf + off, sizeof len);
        db_signal_ready(&local, (struct slice){ keys.buf + off + sizeof len, len });
        off += sizeof len + len;
    }
    rbuf_free(&keys);
}

void db_signal_ready_db(struct cmd_ctx *c, int db) {
    if (atomic_load_explicit(&rk_waiter_keys, memory_order_relaxed) == 0) return;
    if (!c->multi) {
        signal_db_of_shard(c, c->shard, db);
        return;
    }
    for (unsigned i = 0; i < c->nshards; i++) signal_db_of_shard(c, c->shards[i], db);
}
