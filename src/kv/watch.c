/*
 * WATCH, the keyspace side: which clients watch which keys of this shard.
 *
 * A WATCH leaves one record (the client's thread, idx/gen and watch epoch)
 * per key in the owning shard's `watched` map, "db:key" -> records. A write
 * command that ran tells its keys (db_touch_watched); FLUSHDB, FLUSHALL and
 * SWAPDB tell whole databases (db_touch_watched_db). Every record of a
 * touched key goes to the I/O layer's hook, which marks that client's
 * transaction dirty, and the key's records are dropped: a dirty transaction
 * stays dirty. A record whose client has since unwatched (its epoch moved
 * on) or gone is simply ignored by the hook.
 *
 * Records of one client for one key are kept once (the newest); records of
 * clients that unwatched stay until the key is touched or watched again.
 * rk_watch_records counts records over all shards, so a write pays one
 * relaxed load when nobody watches anything.
 */
#include "ringkv/watch.h"
#include "ringkv/command.h"
#include "ringkv/hashmap.h"

#include <stdlib.h>
#include <string.h>

_Atomic long rk_watch_records;
void (*db_watch_hook)(struct cmd_ctx *c, const struct block_record *r);

static struct shard *key_shard(struct cmd_ctx *c, struct slice key) {
    if (!c->multi) return c->shard;
    return c->shards[shard_of_key(key.ptr, key.len)];
}


void db_watch(struct cmd_ctx *c, struct slice key, const struct block_record *r) {
    struct shard *s = key_shard(c, key);
    if (!s->watched) s->watched = hashmap_new(true);
    struct rbuf k = {0}, v = {0};
    struct slice wk = db_registry_key(&k, c->db, key), old;
    long removed = 0;
    if (hashmap_get(s->watched, wk, &old)) {
        for (size_t off = 0; off + sizeof *r <= old.len; off += sizeof *r) {
            struct block_record o;
            memcpy(&o, old.ptr + off, sizeof o);
            if (o.worker == r->worker && o.idx == r->idx) removed++;
            else rbuf_append(&v, &o, sizeof o);
        }
    }
    rbuf_append(&v, r, sizeof *r);
    hashmap_set(s->watched, wk, (struct slice){ v.buf, v.len });
    atomic_fetch_add_explicit(&rk_watch_records, 1 - removed, memory_order_relaxed);
    rbuf_free(&k);
    rbuf_free(&v);
}

static void notify_all(struct cmd_ctx *c, struct slice recs) {
    size_t n = recs.len / sizeof(struct block_record);
    struct block_record *copy = malloc(recs.len ? recs.len : 1);
    memcpy(copy, recs.ptr, recs.len);
    for (size_t i = 0; i < n; i++)
        if (db_watch_hook) db_watch_hook(c, &copy[i]);
    free(copy);
    atomic_fetch_sub_explicit(&rk_watch_records, (long)n, memory_order_relaxed);
}

void db_touch_watched_slow(struct cmd_ctx *c, int db, struct slice key) {
    struct shard *s = key_shard(c, key);
    if (!s->watched || hashmap_count(s->watched) == 0) return;
    struct rbuf k = {0};
    struct slice wk = db_registry_key(&k, db, key), recs;
    if (hashmap_get(s->watched, wk, &recs)) {
        /* take the records first: the hook may not see a half-updated map */
        struct rbuf copy = {0};
        rbuf_append(&copy, recs.ptr, recs.len);
        hashmap_delete(s->watched, wk);
        notify_all(c, (struct slice){ copy.buf, copy.len });
        rbuf_free(&copy);
    }
    rbuf_free(&k);
}

static void touch_db_of_shard(struct cmd_ctx *c, struct shard *s, int db) {
    if (!s->watched || hashmap_count(s->watched) == 0) return;
    struct rbuf keys = {0}, recs = {0};
    struct hashmap_iter it = hashmap_iter_start(s->watched);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
        struct slice k = hm_elem_key(e);
        uint16_t d;
        memcpy(&d, k.ptr, sizeof d);
        if (db >= 0 && d != (uint16_t)db) continue;
        uint32_t len = (uint32_t)k.len;
        rbuf_append(&keys, &len, sizeof len);
        rbuf_append(&keys, k.ptr, k.len);
        struct slice v = hm_elem_val(e);
        rbuf_append(&recs, v.ptr, v.len);
    }
    for (size_t off = 0; off < keys.len;) {
        uint32_t len;
        memcpy(&len, keys.buf + off, sizeof len);
        hashmap_delete(s->watched, (struct slice){ keys.buf + off + sizeof len, len });
        off += sizeof len + len;
    }
    notify_all(c, (struct slice){ recs.buf, recs.len });
    rbuf_free(&keys);
    rbuf_free(&recs);
}

void db_touch_watched_db(struct cmd_ctx *c, int db) {
    if (atomic_load_explicit(&rk_watch_records, memory_order_relaxed) == 0) return;
    if (!c->multi) {
        touch_db_of_shard(c, c->shard, db);
        return;
    }
    for (unsigned i = 0; i < c->nshards; i++) touch_db_of_shard(c, c->shards[i], db);
}

void shard_watch_destroy(struct shard *s) {
    if (s->watched) hashmap_free(s->watched);
    s->watched = NULL;
}
