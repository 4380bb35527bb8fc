/*
 * WATCH, the keyspace side: which clients watch which keys of this shard.
 *
 * A WATCH leaves one record (the client's thread, idx/gen and watch epoch,
 * and whether the key was already expired then) per key in the owning
 * shard's `watched` map, "db:key" -> records. A write that changed a key
 * touches it (db_touch_watched, through db_changed); FLUSHDB, FLUSHALL and
 * SWAPDB touch the watched keys of whole databases that they change. A
 * record of a touched key goes to the I/O layer's hook, which marks that
 * client's transaction dirty, and is dropped: a dirty transaction stays
 * dirty. A record whose client has since unwatched (its epoch moved on) or
 * gone is simply ignored by the hook.
 *
 * Expired keys follow Redis 7.0 (multi.c): a key that was logically
 * expired when watched ("stale") has not changed when it is then deleted
 * (by expiry, a FLUSH, a SWAPDB that leaves no key there): the record
 * forgets that it was stale and stays. Any other change of it touches as
 * usual. EXEC fails on a key that expired after it was watched even while
 * nothing has deleted it yet (db_watched_expired).
 *
 * Records of one client for one key are kept once (the newest epoch's);
 * records of clients that unwatched stay until the key is touched or
 * watched again. rk_watch_records counts records over all shards, so a
 * write pays one relaxed load when nobody watches anything.
 */
#include "ringkv/watch.h"
#include "ringkv/hashmap.h"

#include <stdlib.h>
#include <string.h>

_Atomic long rk_watch_records;
void (*db_watch_hook)(struct cmd_ctx *c, const struct block_record *r);

struct watch_rec {
    struct block_record r;
    uint32_t stale;              /* the key was expired, not yet deleted, when watched */
};

static struct shard *key_shard(struct cmd_ctx *c, struct slice key) {
    if (!c->multi) return c->shard;
    return c->shards[shard_of_key(key.ptr, key.len)];
}

enum key_state { KEY_ABSENT, KEY_LIVE, KEY_STALE };

/* What the table holds for key, without deleting anything. */
static enum key_state key_state(struct shard *s, int db, struct slice key, long long now_ms) {
    if (db < 0 || (unsigned)db >= s->ndb) return KEY_ABSENT;
    struct kv_entry **slot = table_find(&s->dbs[db].table, key.ptr, key.len, table_hash(key.ptr, key.len));
    if (!slot) return KEY_ABSENT;
    return key_is_expired(*slot, now_ms) ? KEY_STALE : KEY_LIVE;
}

void db_watch(struct cmd_ctx *c, struct slice key, const struct block_record *r) {
    struct shard *s = key_shard(c, key);
    if (!s->watched) s->watched = hashmap_new(true);
    struct rbuf k = {0}, v = {0};
    struct slice wk = db_registry_key(&k, c->db, key), old;
    struct watch_rec nr = { *r, key_state(s, c->db, key, c->now_ms) == KEY_STALE };
    long removed = 0;
    if (hashmap_get(s->watched, wk, &old)) {
        for (size_t off = 0; off + sizeof nr <= old.len; off += sizeof nr) {
            struct watch_rec o;
            memcpy(&o, old.ptr + off, sizeof o);
            if (o.r.worker == r->worker && o.r.idx == r->idx) {
                /* watched again in the same epoch: Redis keeps the first
                 * record, and with it whether the key was stale then */
                if (o.r.gen == r->gen && o.r.seq == r->seq) nr = o;
                removed++;
            } else {
                rbuf_append(&v, &o, sizeof o);
            }
        }
    }
    rbuf_append(&v, &nr, sizeof nr);
    hashmap_set(s->watched, wk, (struct slice){ v.buf, v.len });
    atomic_fetch_add_explicit(&rk_watch_records, 1 - removed, memory_order_relaxed);
    rbuf_free(&k);
    rbuf_free(&v);
}

/* Tell every record in recs (struct watch_rec[]) that its key changed. */
static void notify_all(struct cmd_ctx *c, const struct rbuf *recs) {
    size_t n = recs->len / sizeof(struct watch_rec);
    for (size_t i = 0; i < n; i++) {
        struct watch_rec w;
        memcpy(&w, recs->buf + i * sizeof w, sizeof w);
        if (db_watch_hook) db_watch_hook(c, &w.r);
    }
    atomic_fetch_sub_explicit(&rk_watch_records, (long)n, memory_order_relaxed);
}

/* The records of one watched key (registry key wk): those `keep` says stay
 * are written back (or the key dropped when none stay), the others are
 * told. keep(rec, arg) may update rec. The map is updated before any hook
 * runs, so a hook never sees it half done; recs points into the map and
 * wk may, so both are read before it changes. */
static void settle_key(struct cmd_ctx *c, struct shard *s, struct slice wk, struct slice recs,
                       bool (*keep)(struct watch_rec *w, void *arg), void *arg) {
    struct rbuf kept = {0}, told = {0}, key = {0};
    for (size_t off = 0; off + sizeof(struct watch_rec) <= recs.len; off += sizeof(struct watch_rec)) {
        struct watch_rec w;
        memcpy(&w, recs.ptr + off, sizeof w);
        rbuf_append(keep(&w, arg) ? &kept : &told, &w, sizeof w);
    }
    rbuf_append(&key, wk.ptr, wk.len);
    struct slice kk = { key.buf, key.len };
    if (kept.len) hashmap_set(s->watched, kk, (struct slice){ kept.buf, kept.len });
    else hashmap_delete(s->watched, kk);
    if (told.len) notify_all(c, &told);
    rbuf_free(&kept);
    rbuf_free(&told);
    rbuf_free(&key);
}

/* A key was changed; gone: it no longer exists. A stale record of a key
 * that is now gone saw no change (it was logically absent all along). */
static bool keep_on_change(struct watch_rec *w, void *arg) {
    bool gone = *(bool *)arg;
    if (w->stale && gone) {
        w->stale = 0;
        return true;
    }
    return false;
}

void db_touch_watched_slow(struct cmd_ctx *c, int db, struct slice key, bool gone) {
    struct shard *s = key_shard(c, key);
    if (!s->watched || hashmap_count(s->watched) == 0) return;
    struct rbuf k = {0};
    struct slice wk = db_registry_key(&k, db, key), recs;
    if (hashmap_get(s->watched, wk, &recs)) settle_key(c, s, wk, recs, keep_on_change, &gone);
    rbuf_free(&k);
}

/* Every watched key of database db (-1: all) of shard s, in a list of
 * [len:u32][registry key] (the visit may change the map). */
static void watched_keys_of_db(struct shard *s, int db, struct rbuf *out) {
    struct hashmap_iter it = hashmap_iter_start(s->watched);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
        struct slice k = hm_elem_key(e);
        uint16_t d;
        memcpy(&d, k.ptr, sizeof d);
        if (db >= 0 && d != (uint16_t)db) continue;
        uint32_t len = (uint32_t)k.len;
        rbuf_append(out, &len, sizeof len);
        rbuf_append(out, k.ptr, k.len);
    }
}

/* Redis's touchAllWatchedKeysInDb(emptied, replaced_with): how the records
 * of one key of the emptied database fare; `with` is the state of the key
 * in the database that takes its place (KEY_ABSENT for a FLUSH). */
struct replace_arg { enum key_state emptied, with; };

static bool keep_on_replace(struct watch_rec *w, void *arg) {
    const struct replace_arg *a = arg;
    if (w->stale) {
        if (a->with == KEY_ABSENT) {   /* the stale key is deleted: no change */
            w->stale = 0;
            return true;
        }
        return a->with == KEY_STALE;   /* stale stays stale */
    }
    if (a->emptied == KEY_ABSENT && a->with == KEY_STALE) {
        w->stale = 1;                  /* no key becomes an expired one */
        return true;
    }
    return false;
}

/* The watched keys of database `emptied` of shard s, whose keys are
 * replaced by those of database `with` (-1: by nothing). */
static void touch_replaced(struct cmd_ctx *c, struct shard *s, int emptied, int with) {
    if (!s->watched || hashmap_count(s->watched) == 0) return;
    struct rbuf keys = {0};
    watched_keys_of_db(s, emptied, &keys);
    for (size_t off = 0; off < keys.len;) {
        uint32_t len;
        memcpy(&len, keys.buf + off, sizeof len);
        struct slice wk = { keys.buf + off + sizeof len, len }, recs;
        off += sizeof len + len;
        uint16_t d;
        memcpy(&d, wk.ptr, sizeof d);
        struct slice key = { wk.ptr + sizeof d, wk.len - sizeof d };
        struct replace_arg a = {
            key_state(s, d, key, c->now_ms),
            with < 0 ? KEY_ABSENT : key_state(s, with, key, c->now_ms),
        };
        if (a.emptied == KEY_ABSENT && a.with == KEY_ABSENT) continue;   /* untouched */
        if (hashmap_get(s->watched, wk, &recs)) settle_key(c, s, wk, recs, keep_on_replace, &a);
    }
    rbuf_free(&keys);
}

void db_touch_watched_flush(struct cmd_ctx *c, int db) {
    if (atomic_load_explicit(&rk_watch_records, memory_order_relaxed) == 0) return;
    for (unsigned i = 0; i < (c->multi ? c->nshards : 1); i++) {
        struct shard *s = c->multi ? c->shards[i] : c->shard;
        if (db >= 0) {
            touch_replaced(c, s, db, -1);
            continue;
        }
        for (unsigned d = 0; d < s->ndb; d++) touch_replaced(c, s, (int)d, -1);
    }
}

void db_touch_watched_swap(struct cmd_ctx *c, int a, int b) {
    if (a == b || atomic_load_explicit(&rk_watch_records, memory_order_relaxed) == 0) return;
    for (unsigned i = 0; i < (c->multi ? c->nshards : 1); i++) {
        struct shard *s = c->multi ? c->shards[i] : c->shard;
        touch_replaced(c, s, a, b);
        touch_replaced(c, s, b, a);
    }
}

bool db_watched_expired(struct cmd_ctx *c, const struct block_record *r, struct slice keys) {
    struct rbuf k = {0};
    bool expired = false;
    for (size_t off = 0; !expired && off + sizeof(uint16_t) + sizeof(uint32_t) <= keys.len;) {
        uint16_t d;
        uint32_t len;
        memcpy(&d, keys.ptr + off, sizeof d);
        memcpy(&len, keys.ptr + off + sizeof d, sizeof len);
        struct slice key = { keys.ptr + off + sizeof d + sizeof len, len };
        off += sizeof d + sizeof len + len;
        struct shard *s = key_shard(c, key);
        if (key_state(s, d, key, c->now_ms) != KEY_STALE) continue;
        /* expired now: fails EXEC unless it already was when watched */
        bool was_stale = false;
        struct slice recs;
        if (s->watched && hashmap_get(s->watched, db_registry_key(&k, d, key), &recs)) {
            for (size_t o = 0; o + sizeof(struct watch_rec) <= recs.len; o += sizeof(struct watch_rec)) {
                struct watch_rec w;
                memcpy(&w, recs.ptr + o, sizeof w);
                if (w.r.worker == r->worker && w.r.idx == r->idx && w.r.gen == r->gen && w.r.seq == r->seq)
                    was_stale = w.stale;
            }
        }
        expired = !was_stale;
    }
    rbuf_free(&k);
    return expired;
}

void shard_watch_destroy(struct shard *s) {
    if (s->watched) hashmap_free(s->watched);
    s->watched = NULL;
}
