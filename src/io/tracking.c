/*
 * Client-side caching, the connection side: each client's tracking state,
 * which reads of a command are tracked (OPTIN/OPTOUT and CLIENT CACHING),
 * and the delivery of invalidations.
 *
 * Invalidations are produced where keys change (kv/tracking.c) as entries
 * in the executing thread's outbox, per target thread. Once per loop
 * iteration, before the messages go out (tracking_iteration), this
 * thread's own entries are delivered here and every other thread's buffer
 * leaves as one XM_TRACK message, whatever its number of keys. A thread
 * receiving one delivers it at once (tracking_deliver).
 *
 * A push is written as a reply in order: behind every reply the client is
 * still owed, so an invalidation never overtakes the reply that carried
 * the value it invalidates (a forwarded GET's reply may still be on its
 * way when the invalidation from a third thread arrives). A client's own
 * write is told after the iteration's replies, never inside one.
 *
 * With REDIRECT the push goes to the redirect client, found by the
 * thread, idx and gen noted when CLIENT TRACKING checked its id: on this
 * thread directly, on another as a TRK_MSG_REDIR entry, which comes back as
 * TRK_MSG_BROKEN if that client has gone: the tracking client then gets
 * tracking-redir-broken instead, now and for every later invalidation.
 */
#include "ringkv/server.h"
#include "ringkv/config.h"
#include "ringkv/tracking.h"
#include "ringkv/util.h"

#include <stdlib.h>

#include "io_internal.h"

/* ---- state (CLIENT TRACKING ON/OFF, CLIENT CACHING) ---- */

static void add_prefix(struct client_tracking *t, struct slice p) {
    for (size_t off = 0; off < t->prefixes.len;) {
        uint32_t len;
        memcpy(&len, t->prefixes.buf + off, sizeof len);
        if (len == p.len && memcmp(t->prefixes.buf + off + sizeof len, p.ptr, len) == 0) return;
        off += sizeof len + len;
    }
    uint32_t len = (uint32_t)p.len;
    rbuf_append(&t->prefixes, &len, sizeof len);
    rbuf_append(&t->prefixes, p.ptr, p.len);
    t->nprefixes++;
}

void client_tracking_on(struct client *c, const struct tracking_opts *o) {
    if (!c->trk) c->trk = rk_calloc(1, sizeof *c->trk);
    struct client_tracking *t = c->trk;
    if (!(t->flags & TRK_ON)) {
        atomic_fetch_add_explicit(&rk_tracking_clients, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&rk_tracking_active, 1, memory_order_relaxed);
        c->flags |= CF_TRACKING;
    }
    /* as Redis: the mode is replaced, a pending CLIENT CACHING survives */
    t->flags = (t->flags & TRK_CACHING) | TRK_ON | (o->flags & (TRK_BCAST | TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP));
    t->redir_id = o->redir_id;
    t->redir = o->redir;
    for (size_t i = 0; i < o->nprefixes; i++) add_prefix(t, o->prefixes[i]);
}

void client_tracking_off(struct client *c) {
    struct client_tracking *t = c->trk;
    if (!t || !(t->flags & TRK_ON)) return;
    atomic_fetch_sub_explicit(&rk_tracking_clients, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&rk_tracking_active, 1, memory_order_relaxed);
    c->flags &= ~CF_TRACKING;
    c->trk_epoch++;   /* every record of the keys it read is stale now */
    t->flags = 0;
    t->redir_id = 0;
    rbuf_free(&t->prefixes);
    t->nprefixes = 0;
}

void client_tracking_caching(struct client *c) { c->trk->flags |= TRK_CACHING; }

/* The BCAST registrations of this epoch go from every shard: from this one
 * at the next safe point, from the others when their message comes (until
 * then they only produce entries that the receiving thread ignores). */
static void unregister_later(struct client *c) {
    if (!(c->trk->flags & TRK_BCAST)) return;
    for (unsigned i = 0; i < srv.nworkers; i++) {
        struct trk_entry e = { TRK_MSG_UNREG, 0, 0, c->trk_epoch, { c->w->id, c->idx, c->gen }, 0, 0 };
        trk_emit(i, &e, (struct slice){0}, (struct slice){0});
    }
}

/* RESET: tracking off. RESET does not hold every shard as CLIENT TRACKING
 * OFF does, so the BCAST registrations go as on a disconnect. */
void client_tracking_reset(struct client *c) {
    if (!c->trk) return;
    unregister_later(c);
    client_tracking_off(c);
}

void client_tracking_free(struct client *c) {
    struct client_tracking *t = c->trk;
    unregister_later(c);
    client_tracking_off(c);
    rbuf_free(&t->prefixes);
    free(t);
    c->trk = NULL;
}

/* A command of a tracking client: are its reads tracked? OPTIN tracks
 * only after CLIENT CACHING yes, OPTOUT all but after CLIENT CACHING no;
 * either lasts for the next command (or the next transaction, MULTI to
 * EXEC), as Redis's flag, which every other command clears once done. */
void client_tracking_begin(struct client *c, struct block_record *self) {
    uint32_t f = c->trk->flags;
    bool reads = !(f & TRK_BCAST);
    if (f & TRK_OPTIN) reads = reads && (f & TRK_CACHING);
    if (f & TRK_OPTOUT) reads = reads && !(f & TRK_CACHING);
    *self = (struct block_record){ c->w->id, c->idx, c->gen, c->trk_epoch };
    c->trk_reader = reads ? self : NULL;
}

void client_tracking_end(struct client *c, const struct route *rt, enum exec_result r) {
    c->trk_reader = NULL;
    bool client_cmd = strncmp(rt->cmd->name, "client|", 7) == 0;
    if (r == EXEC_DONE && !c->multi && !client_cmd && c->trk) c->trk->flags &= ~TRK_CACHING;
}

/* ---- delivery ---- */

/* Write an invalidation (arr: a RESP array of keys, or null when ptr is
 * NULL) to t: a push in RESP3, or a message of __redis__:invalidate to a
 * RESP2 redirect client in pub/sub mode; a RESP2 client otherwise cannot
 * be told (Redis's rule). CLIENT REPLY OFF does not hold pushes back. */
static void write_invalidation(struct client *t, struct slice arr, bool redirected) {
    if (t->resp < 3 && !(redirected && t->nsubs > 0)) return;
    bool queued;
    struct rbuf *out = client_reply_target(t, &queued);
    size_t start = out->len, cap = out->cap;
    struct reply r = { out, t->resp };
    if (t->resp >= 3) {
        reply_push(&r, 2);
        reply_bulk(&r, "invalidate", 10);
    } else {
        reply_push(&r, 3);
        reply_bulk(&r, "message", 7);
        reply_bulk(&r, "__redis__:invalidate", 20);
    }
    if (arr.ptr) rbuf_append(out, arr.ptr, arr.len);
    else reply_null(&r);
    if (!queued) client_push_leaving(t, out->cap - cap);
    client_reply_written(t, out, start, queued, false);
}

static void push_broken(struct client *c) {
    c->trk->flags |= TRK_BROKEN;
    if (c->resp < 3) return;
    bool queued;
    struct rbuf *out = client_reply_target(c, &queued);
    size_t start = out->len;
    struct reply r = { out, c->resp };
    reply_push(&r, 2);
    reply_bulk(&r, "tracking-redir-broken", 21);
    reply_int(&r, (long long)c->trk->redir_id);
    client_reply_written(c, out, start, queued, false);
}

/* A redirect client that said QUIT is gone already (Redis frees it right
 * after the reply, before it could read anything else). */
static struct client *redirect_live(struct worker *w, uint32_t idx, uint32_t gen) {
    struct client *c = client_live(w, idx, gen);
    return c && !(c->flags & CF_CLOSE_AFTER) ? c : NULL;
}

/* Tell tracking client c (of this thread) that the keys in arr changed. */
static void invalidate_client(struct worker *w, struct client *c, struct slice arr) {
    struct client_tracking *t = c->trk;
    if (!t->redir_id) {
        if (c->resp >= 3) write_invalidation(c, arr, false);
        return;
    }
    if (t->flags & TRK_BROKEN) {
        push_broken(c);
        return;
    }
    if (t->redir.worker == w->id) {
        struct client *to = redirect_live(w, t->redir.idx, t->redir.gen);
        if (to) write_invalidation(to, arr, true);
        else push_broken(c);
        return;
    }
    struct trk_entry e = { TRK_MSG_REDIR, t->redir.idx, t->redir.gen, 0, { w->id, c->idx, c->gen }, 0,
                           arr.ptr ? (uint32_t)arr.len : TRK_NULL_LEN };
    trk_emit(t->redir.worker, &e, (struct slice){0}, arr);
}

static struct client *tracking_client(struct worker *w, const struct trk_entry *e, bool bcast) {
    struct client *c = client_live(w, e->idx, e->gen);
    if (!c || !c->trk || c->trk_epoch != e->epoch) return NULL;
    uint32_t f = c->trk->flags;
    if (!(f & TRK_ON) || !!(f & TRK_BCAST) != bcast) return NULL;
    return c;
}

static bool wrote_it(struct worker *w, const struct client *c, const struct trk_writer *wr) {
    return (c->trk->flags & TRK_NOLOOP) && wr->worker == w->id && wr->idx == c->idx && wr->gen == c->gen;
}

static const char *entry_at(const char *p, struct trk_entry *e, struct slice *prefix, struct slice *key) {
    memcpy(e, p, sizeof *e);
    *prefix = (struct slice){ p + sizeof *e, e->plen };
    size_t klen = e->klen == TRK_NULL_LEN ? 0 : e->klen;
    *key = (struct slice){ e->klen == TRK_NULL_LEN ? NULL : p + sizeof *e + e->plen, klen };
    return p + sizeof *e + e->plen + klen;
}

static int bytes_cmp(struct slice a, struct slice b) {
    size_t n = a.len < b.len ? a.len : b.len;
    int r = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (r) return r;
    return a.len < b.len ? -1 : a.len > b.len;
}

/* BCAST entries are grouped per client and prefix (one push per prefix,
 * as Redis), keys sorted (Redis's radix order), a key written twice told
 * once; arrival order breaks ties, so that the last writer of a key is
 * the one NOLOOP looks at. */
static _Thread_local const char *sort_base;

static int cmp_bcast(const void *a, const void *b) {
    size_t oa = *(const size_t *)a, ob = *(const size_t *)b;
    struct trk_entry ea, eb;
    struct slice pa, ka, pb, kb;
    entry_at(sort_base + oa, &ea, &pa, &ka);
    entry_at(sort_base + ob, &eb, &pb, &kb);
    if (ea.idx != eb.idx) return ea.idx < eb.idx ? -1 : 1;
    if (ea.gen != eb.gen) return ea.gen < eb.gen ? -1 : 1;
    if (ea.epoch != eb.epoch) return ea.epoch < eb.epoch ? -1 : 1;
    int r = bytes_cmp(pa, pb);
    if (r) return r;
    r = bytes_cmp(ka, kb);
    if (r) return r;
    return oa < ob ? -1 : oa > ob;
}

static bool same_group(const struct trk_entry *a, struct slice pa, const struct trk_entry *b, struct slice pb) {
    return a->idx == b->idx && a->gen == b->gen && a->epoch == b->epoch && bytes_cmp(pa, pb) == 0;
}

static void deliver_bcast(struct worker *w, const char *buf, size_t *offs, size_t n) {
    sort_base = buf;
    qsort(offs, n, sizeof *offs, cmp_bcast);
    struct rbuf keys = {0}, arr = {0};
    for (size_t i = 0; i < n;) {
        struct trk_entry e, f;
        struct slice p, k, pf, kf;
        entry_at(buf + offs[i], &e, &p, &k);
        struct client *c = tracking_client(w, &e, true);
        size_t count = 0, j = i;
        keys.len = 0;
        struct reply r = { &keys, 2 };
        while (j < n) {
            entry_at(buf + offs[j], &f, &pf, &kf);
            if (!same_group(&e, p, &f, pf)) break;
            size_t last = j;   /* the last entry of a run of one key: its last writer */
            while (last + 1 < n) {
                struct trk_entry g;
                struct slice pg, kg;
                entry_at(buf + offs[last + 1], &g, &pg, &kg);
                if (!same_group(&e, p, &g, pg) || bytes_cmp(kg, kf) != 0) break;
                last++;
            }
            entry_at(buf + offs[last], &f, &pf, &kf);
            if (c && !wrote_it(w, c, &f.w)) {
                reply_bulk_slice(&r, kf);
                count++;
            }
            j = last + 1;
        }
        if (c && count) {
            arr.len = 0;
            struct reply ra = { &arr, 2 };
            reply_array(&ra, count);
            rbuf_append(&arr, keys.buf, keys.len);
            invalidate_client(w, c, (struct slice){ arr.buf, arr.len });
        }
        i = j;
    }
    rbuf_free(&keys);
    rbuf_free(&arr);
}

/* A key's readers of this thread (records, in the prefix's place) are told. */
static void invalidate_readers(struct worker *w, const struct trk_entry *e, struct slice recs, struct slice key,
                               struct rbuf *arr) {
    for (uint32_t i = 0; i < e->idx; i++) {
        struct block_record r;
        memcpy(&r, recs.ptr + i * sizeof r, sizeof r);
        struct trk_entry one = *e;
        one.idx = r.idx;
        one.gen = r.gen;
        one.epoch = r.seq;
        struct client *c = tracking_client(w, &one, false);
        if (!c || wrote_it(w, c, &e->w)) continue;
        struct reply rp = { arr, 2 };
        arr->len = 0;
        reply_array(&rp, 1);
        reply_bulk_slice(&rp, key);
        invalidate_client(w, c, (struct slice){ arr->buf, arr->len });
    }
}

/* Entries for this thread: from another thread's XM_TRACK, or our own. */
void tracking_deliver(struct worker *w, const char *buf, size_t len) {
    struct rbuf arr = {0}, bcast = {0};
    for (const char *p = buf, *end = buf + len; p < end;) {
        struct trk_entry e;
        struct slice prefix, key;
        size_t at = (size_t)(p - buf);
        p = entry_at(p, &e, &prefix, &key);
        switch (e.kind) {
        case TRK_MSG_KEY:
            invalidate_readers(w, &e, prefix, key, &arr);
            break;
        case TRK_MSG_BCAST:
            rbuf_append(&bcast, &at, sizeof at);
            break;
        case TRK_MSG_FLUSH:
            for (uint32_t i = 0; i < w->nclients_cap; i++) {
                struct client *c = w->clients[i];
                if (c && !(c->flags & CF_CLOSING) && c->trk && (c->trk->flags & TRK_ON))
                    invalidate_client(w, c, (struct slice){0});
            }
            break;
        case TRK_MSG_REDIR: {
            struct client *to = redirect_live(w, e.idx, e.gen);
            if (to) {
                write_invalidation(to, key, true);
            } else {
                struct trk_entry b = { TRK_MSG_BROKEN, e.w.idx, e.w.gen, 0, { w->id, e.idx, e.gen }, 0, 0 };
                trk_emit(e.w.worker, &b, (struct slice){0}, (struct slice){0});
            }
            break;
        }
        case TRK_MSG_BROKEN: {
            struct client *c = client_live(w, e.idx, e.gen);
            struct client_tracking *t = c ? c->trk : NULL;
            /* only if it still redirects to the client that was found gone */
            if (t && (t->flags & TRK_ON) && t->redir_id && t->redir.worker == e.w.worker &&
                t->redir.idx == e.w.idx && t->redir.gen == e.w.gen)
                push_broken(c);
            break;
        }
        case TRK_MSG_UNREG:
            /* a transaction of another thread may be reading our shard */
            if (shard_is_held(w)) trk_emit(w->id, &e, prefix, key);
            else trk_bcast_unregister(&w->shard, &(struct block_record){ e.w.worker, e.w.idx, e.w.gen, e.epoch });
            break;
        }
    }
    if (bcast.len) deliver_bcast(w, buf, (size_t *)bcast.buf, bcast.len / sizeof(size_t));
    rbuf_free(&arr);
    rbuf_free(&bcast);
}

/* Once per loop iteration, before the messages go out: keep the tracking
 * table within tracking-table-max-keys (evicting keys, whose readers are
 * told, as Redis does), deliver this thread's own entries, and send every
 * other thread its entries in one message. */
void tracking_iteration(struct worker *w) {
    long keys = atomic_load_explicit(&rk_tracking_keys, memory_order_relaxed);
    if (RK_LIKELY(!(trk_outbox.mask | (uint64_t)keys) && !trk_outbox.evicted)) return;
    if (trk_outbox.evicted && !shard_is_held(w)) trk_tell_evicted(&w->shard);   /* the prefixes are shard state */
    long long max = CONFIG_GET(tracking_table_max_keys);
    if (max > 0 && keys > max && !shard_is_held(w)) trk_evict(&w->shard, max, 1024);
    uint64_t self = 1ull << w->id;
    /* delivering may produce entries for us again (an unregistration
     * waiting for the shard): at most one more round per iteration */
    for (int round = 0; round < 2 && (trk_outbox.mask & self); round++) {
        struct rbuf b = trk_outbox.to[w->id];
        trk_outbox.to[w->id] = (struct rbuf){0};
        trk_outbox.mask &= ~self;
        tracking_deliver(w, b.buf, b.len);
        trk_delivered(&b);
    }
    uint64_t others = trk_outbox.mask & ~self;
    trk_outbox.mask &= self;
    while (others) {
        unsigned t = (unsigned)__builtin_ctzll(others);
        others &= others - 1;
        struct xmsg *m = rk_calloc(1, sizeof *m);
        m->type = XM_TRACK;
        m->from = (uint8_t)w->id;
        m->req = trk_outbox.to[t];
        trk_outbox.to[t] = (struct rbuf){0};
        xshard_send(w, t, m);
    }
}
