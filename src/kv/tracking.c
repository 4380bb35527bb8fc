/*
 * Client-side caching, the keyspace side: per shard, the tracked keys
 * (key -> the records of the clients that read it) and the replica of the
 * BCAST prefix registrations. See tracking.h for the whole picture.
 *
 * Records are block_records: thread, client idx/gen and the client's
 * tracking epoch in seq. A client's records for one key are kept once: a
 * read with a newer epoch rewrites the record in place. Records of clients
 * that went away stay until the key is invalidated, as Redis keeps client
 * ids in its table; the receiving thread ignores them.
 *
 * What a change produces goes into the executing thread's outbox (the
 * coordinator's, when a cross-shard transaction writes another shard's
 * keys), per target thread, and leaves once per loop iteration.
 */
#include "ringkv/tracking.h"
#include "ringkv/hashmap.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <string.h>

_Atomic long rk_tracking_clients, rk_tracking_keys, rk_tracking_items, rk_tracking_active;
const struct trk_writer trk_nobody = { TRK_NOBODY, 0, 0 };
_Thread_local struct trk_outbox trk_outbox;

struct trk_prefix {
    char *p;
    size_t len;
    struct block_record *regs;
    size_t n, cap;
};

struct trk_table {
    struct hashmap *keys;          /* key -> block_record[] */
    struct trk_prefix *prefixes;
    size_t nprefixes, cap;
    struct rbuf evicted;           /* keys evicted, not told yet (trk_key_evicted) */
};

static inline void counts_add(long keys, long items) {
    if (keys) {
        atomic_fetch_add_explicit(&rk_tracking_keys, keys, memory_order_relaxed);
        atomic_fetch_add_explicit(&rk_tracking_active, keys, memory_order_relaxed);
    }
    if (items) atomic_fetch_add_explicit(&rk_tracking_items, items, memory_order_relaxed);
}

static struct trk_table *table_of(struct shard *s) {
    if (!s->tracking) {
        s->tracking = rk_calloc(1, sizeof *s->tracking);
        s->tracking->keys = hashmap_new(true);
    }
    return s->tracking;
}

void trk_emit(unsigned worker, const struct trk_entry *e, struct slice prefix, struct slice key) {
    struct rbuf *b = &trk_outbox.to[worker];
    size_t klen = e->klen == TRK_NULL_LEN ? 0 : e->klen, cap = b->cap;
    char *p = rbuf_reserve(b, sizeof *e + e->plen + klen);
    mem_count_leaving((long long)(b->cap - cap));
    memcpy(p, e, sizeof *e);
    if (e->plen) memcpy(p + sizeof *e, prefix.ptr, e->plen);
    if (klen) memcpy(p + sizeof *e + e->plen, key.ptr, klen);
    b->len += sizeof *e + e->plen + klen;
    trk_outbox.mask |= 1ull << worker;
}

void trk_record(struct shard *s, struct slice key, const struct block_record *r) {
    struct trk_table *t = table_of(s);
    struct slice v;
    if (hashmap_get(t->keys, key, &v)) {
        /* the value lives in the map's element: an epoch is updated in place */
        char *recs = (char *)v.ptr;
        for (size_t off = 0; off + sizeof *r <= v.len; off += sizeof *r) {
            struct block_record o;
            memcpy(&o, recs + off, sizeof o);
            if (o.worker == r->worker && o.idx == r->idx && o.gen == r->gen) {
                if (o.seq != r->seq) memcpy(recs + off, r, sizeof *r);
                return;
            }
        }
        struct rbuf nv = {0};
        rbuf_append(&nv, v.ptr, v.len);
        rbuf_append(&nv, r, sizeof *r);
        hashmap_set(t->keys, key, (struct slice){ nv.buf, nv.len });
        rbuf_free(&nv);
        counts_add(0, 1);
        return;
    }
    hashmap_set(t->keys, key, (struct slice){ (const char *)r, sizeof *r });
    counts_add(1, 1);
}

static void match_prefixes(struct trk_table *t, struct slice key, const struct trk_writer *w) {
    for (size_t i = 0; i < t->nprefixes; i++) {
        struct trk_prefix *p = &t->prefixes[i];
        if (p->len > key.len || memcmp(p->p, key.ptr, p->len) != 0) continue;
        for (size_t j = 0; j < p->n; j++) {
            const struct block_record *r = &p->regs[j];
            struct trk_entry e = { TRK_MSG_BCAST, r->idx, r->gen, r->seq, *w, (uint32_t)p->len, (uint32_t)key.len };
            trk_emit(r->worker, &e, (struct slice){ p->p, p->len }, key);
        }
    }
}

/* The readers of a key taken off the table (el: its key and records) are
 * told: one entry per thread they are on, the key once with their records,
 * not a copy of the key per reader. Many readers of a long key name would
 * otherwise make messages far bigger than what evicting the key frees, and
 * the eviction would run on after the memory they hold. */
static size_t readers_of(const struct hm_elem *el) { return hm_elem_val(el).len / sizeof(struct block_record); }

static void tell_readers(struct hm_elem *el, const struct trk_writer *w) {
    struct slice v = hm_elem_val(el), k = hm_elem_key(el);
    size_t n = readers_of(el);
    struct rbuf recs = {0};
    uint64_t told = 0;
    for (size_t i = 0; i < n; i++) {
        struct block_record r;
        memcpy(&r, v.ptr + i * sizeof r, sizeof r);
        if (told & (1ull << r.worker)) continue;
        told |= 1ull << r.worker;
        recs.len = 0;
        for (size_t j = i; j < n; j++) {
            struct block_record o;
            memcpy(&o, v.ptr + j * sizeof o, sizeof o);
            if (o.worker == r.worker) rbuf_append(&recs, &o, sizeof o);
        }
        struct trk_entry e = { TRK_MSG_KEY, (uint32_t)(recs.len / sizeof r), 0, 0, *w, (uint32_t)recs.len,
                               (uint32_t)k.len };
        trk_emit(r.worker, &e, (struct slice){ recs.buf, recs.len }, k);
    }
    rbuf_free(&recs);
}

/* The key's readers are told, and the key forgotten. reserved: the caller
 * already took it off rk_tracking_keys. */
static void take_key(struct trk_table *t, struct slice key, const struct trk_writer *w, bool reserved) {
    struct hm_elem *el = hashmap_remove(t->keys, key);
    if (!el) {
        if (reserved) atomic_fetch_add_explicit(&rk_tracking_keys, 1, memory_order_relaxed);
        return;
    }
    size_t n = readers_of(el);
    tell_readers(el, w);
    hm_elem_free(el);
    if (reserved) atomic_fetch_sub_explicit(&rk_tracking_active, 1, memory_order_relaxed);
    counts_add(reserved ? 0 : -1, -(long)n);
}

void trk_invalidate(struct shard *s, struct slice key, const struct trk_writer *w, bool bcast) {
    struct trk_table *t = s->tracking;
    if (!t) return;
    if (bcast && t->nprefixes) match_prefixes(t, key, w);
    if (hashmap_count(t->keys) != 0) take_key(t, key, w, false);
}

/*
 * An evicted key's clients are told after the eviction, as Redis tells
 * them after measuring what the delete freed: an eviction stops once it
 * has freed what was over maxmemory, and the messages (the key for every
 * thread its readers are on, then a push per reader) would count as if
 * the eviction had freed less, or nothing, and keep it going until the
 * keyspace is empty.
 * So the key leaves the table at once, with its records, allocating
 * nothing; the entries are made by trk_tell_evicted. A record is
 * [struct hm_elem *: the key and its readers, or NULL][u32 len][the key,
 * when only BCAST prefixes want it].
 */
void trk_key_evicted_slow(struct shard *s, struct slice key) {
    struct trk_table *t = s->tracking;
    if (!t) return;
    struct hm_elem *el = hashmap_count(t->keys) ? hashmap_remove(t->keys, key) : NULL;
    if (!el && !t->nprefixes) return;
    if (el) counts_add(-1, -(long)readers_of(el));
    uint32_t len = el ? 0 : (uint32_t)key.len;
    rbuf_append(&t->evicted, &el, sizeof el);
    rbuf_append(&t->evicted, &len, sizeof len);
    if (len) rbuf_append(&t->evicted, key.ptr, len);
    trk_outbox.evicted = true;   /* evictions run on the shard's own thread */
}

static const char *evicted_at(const char *p, struct hm_elem **el, struct slice *key) {
    uint32_t len;
    memcpy(el, p, sizeof *el);
    memcpy(&len, p + sizeof *el, sizeof len);
    p += sizeof *el + sizeof len;
    *key = *el ? hm_elem_key(*el) : (struct slice){ p, len };
    return p + len;
}

void trk_tell_evicted(struct shard *s) {
    struct trk_table *t = s->tracking;
    trk_outbox.evicted = false;
    if (!t || !t->evicted.len) return;
    for (const char *p = t->evicted.buf, *end = p + t->evicted.len; p < end;) {
        struct hm_elem *el;
        struct slice key;
        p = evicted_at(p, &el, &key);
        if (t->nprefixes) match_prefixes(t, key, &trk_nobody);
        if (el) {
            tell_readers(el, &trk_nobody);
            hm_elem_free(el);
        }
    }
    rbuf_free(&t->evicted);
}

void trk_forget_all(struct shard *s) {
    struct trk_table *t = s->tracking;
    if (!t || hashmap_count(t->keys) == 0) return;
    long keys = (long)hashmap_count(t->keys), items = 0;
    struct hashmap_iter it = hashmap_iter_start(t->keys);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));)
        items += (long)(hm_elem_val(e).len / sizeof(struct block_record));
    hashmap_free(t->keys);
    t->keys = hashmap_new(true);
    counts_add(-keys, -items);
}

size_t trk_evict(struct shard *s, long long max_keys, size_t budget) {
    struct trk_table *t = s->tracking;
    size_t done = 0;
    while (t && done < budget && hashmap_count(t->keys) > 0) {
        long cur = atomic_load_explicit(&rk_tracking_keys, memory_order_relaxed);
        if (cur <= max_keys) break;
        /* reserve this eviction first: shards evicting at the same time
         * must not take the table below the limit between them */
        if (!atomic_compare_exchange_weak_explicit(&rk_tracking_keys, &cur, cur - 1, memory_order_relaxed,
                                                   memory_order_relaxed))
            continue;
        const struct hm_elem *el = hashmap_random(t->keys, rk_random());
        struct rbuf k = {0};
        struct slice key = hm_elem_key(el);
        rbuf_append(&k, key.ptr, key.len);
        take_key(t, (struct slice){ k.buf, k.len }, &trk_nobody, true);
        rbuf_free(&k);
        done++;
    }
    return done;
}

void trk_bcast_register(struct shard *s, struct slice prefix, const struct block_record *r) {
    struct trk_table *t = table_of(s);
    struct trk_prefix *p = NULL;
    for (size_t i = 0; i < t->nprefixes && !p; i++)
        if (t->prefixes[i].len == prefix.len && memcmp(t->prefixes[i].p, prefix.ptr, prefix.len) == 0)
            p = &t->prefixes[i];
    if (!p) {
        if (t->nprefixes == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 4;
            t->prefixes = rk_realloc(t->prefixes, t->cap * sizeof *t->prefixes);
        }
        p = &t->prefixes[t->nprefixes++];
        memset(p, 0, sizeof *p);
        p->p = rk_malloc(prefix.len ? prefix.len : 1);
        memcpy(p->p, prefix.ptr, prefix.len);
        p->len = prefix.len;
        atomic_fetch_add_explicit(&rk_tracking_active, 1, memory_order_relaxed);
    }
    for (size_t j = 0; j < p->n; j++) {
        struct block_record *o = &p->regs[j];
        if (o->worker == r->worker && o->idx == r->idx && o->gen == r->gen) {
            *o = *r;
            return;
        }
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 4;
        p->regs = rk_realloc(p->regs, p->cap * sizeof *p->regs);
    }
    p->regs[p->n++] = *r;
}

void trk_bcast_unregister(struct shard *s, const struct block_record *r) {
    struct trk_table *t = s->tracking;
    if (!t) return;
    for (size_t i = 0; i < t->nprefixes;) {
        struct trk_prefix *p = &t->prefixes[i];
        for (size_t j = 0; j < p->n;) {
            struct block_record *o = &p->regs[j];
            if (o->worker == r->worker && o->idx == r->idx && o->gen == r->gen && o->seq == r->seq)
                p->regs[j] = p->regs[--p->n];
            else j++;
        }
        if (p->n == 0) {
            /* the last client of the prefix: the prefix goes (Redis's PrefixTable) */
            free(p->p);
            free(p->regs);
            t->prefixes[i] = t->prefixes[--t->nprefixes];
            atomic_fetch_sub_explicit(&rk_tracking_active, 1, memory_order_relaxed);
        } else {
            i++;
        }
    }
}

size_t trk_prefix_count(const struct shard *s) { return s->tracking ? s->tracking->nprefixes : 0; }
size_t trk_key_count(const struct shard *s) { return s->tracking ? hashmap_count(s->tracking->keys) : 0; }

void trk_shard_destroy(struct shard *s) {
    struct trk_table *t = s->tracking;
    if (!t) return;
    for (size_t i = 0; i < t->nprefixes; i++) {
        free(t->prefixes[i].p);
        free(t->prefixes[i].regs);
    }
    free(t->prefixes);
    hashmap_free(t->keys);
    for (const char *p = t->evicted.buf, *end = p + t->evicted.len; p < end;) {
        struct hm_elem *el;
        struct slice key;
        p = evicted_at(p, &el, &key);
        hm_elem_free(el);
    }
    rbuf_free(&t->evicted);
    free(t);
    s->tracking = NULL;
}
