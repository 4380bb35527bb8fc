/*
 * Client-side caching (CLIENT TRACKING), the keyspace side (kv/tracking.c).
 *
 * Each shard keeps, for the keys that live on it:
 *   - which clients read them while tracking (key -> records of thread,
 *     idx/gen and tracking epoch, like WATCH's records), and
 *   - a replica of the BCAST prefix registrations (prefix -> records):
 *     CLIENT TRACKING writes every shard's replica while it holds them all.
 * A write (or an expiry, an eviction, a tracking-table eviction) of a key
 * takes the key's records and matches the key against the prefixes; what
 * each client must be told goes, as a trk_entry, into the executing
 * thread's outbox, one buffer per target thread. The connection layer
 * (io/tracking.c) empties the outbox once per loop iteration: one message
 * per target thread, however many keys, and its own entries delivered in
 * place. Stale records (a client that turned tracking off, whose epoch
 * moved on, or went away) are ignored by the receiving thread.
 *
 * Tracking, like Redis's, names keys without their database: a write to
 * "k" in db 1 invalidates readers of "k" in db 0.
 */
#ifndef RINGKV_TRACKING_H
#define RINGKV_TRACKING_H

#include <stdatomic.h>

#include "ringkv/db.h"
#include "ringkv/mem.h"

#define TRK_MAX_THREADS 64

/* Clients with tracking on (all threads), tracked keys and records (all
 * shards). A write looks at tracking only while rk_tracking_active, their
 * sum, is not zero. */
extern _Atomic long rk_tracking_clients, rk_tracking_keys, rk_tracking_items, rk_tracking_active;

/* Who wrote a key (NOLOOP); worker TRK_NOBODY: the server itself (expiry,
 * eviction). */
#define TRK_NOBODY UINT32_MAX
struct trk_writer {
    uint32_t worker, idx, gen;
};
extern const struct trk_writer trk_nobody;

enum trk_kind {
    TRK_MSG_KEY = 1,   /* key was invalidated, for its readers of the receiving thread:
                        * block_records in the prefix's place (idx: how many) */
    TRK_MSG_BCAST,     /* key matched prefix, for client idx/gen/epoch (registered) */
    TRK_MSG_FLUSH,     /* every key: every tracking client of the thread gets a null */
    TRK_MSG_REDIR,     /* to redirect target idx/gen: the payload (a RESP array, or null), for w's client */
    TRK_MSG_BROKEN,    /* back to client idx/gen: its redirect target has gone */
    TRK_MSG_UNREG,     /* drop every BCAST registration of client w (worker, idx, gen) and epoch from this shard */
};

/* One entry of an outbox buffer, followed by plen prefix bytes and klen
 * key bytes (TRK_MSG_REDIR: klen bytes of RESP array, TRK_NULL_LEN: null). */
struct trk_entry {
    uint32_t kind;
    uint32_t idx, gen, epoch;    /* the client on the receiving thread */
    struct trk_writer w;         /* the writer; TRK_MSG_REDIR/UNREG: the tracking client */
    uint32_t plen;
    uint32_t klen;
};
#define TRK_NULL_LEN UINT32_MAX

/* This thread's outbox: entries per target thread, mask of non-empty ones;
 * evicted: its shard evicted keys whose clients are not told yet. */
struct trk_outbox {
    struct rbuf to[TRK_MAX_THREADS];
    uint64_t mask;
    bool evicted;
};
extern _Thread_local struct trk_outbox trk_outbox;
/* Entries are output on their way out: an outbox buffer is not counted
 * for eviction (mem_count_leaving) until it is delivered and freed, by
 * trk_delivered (a message's on the receiving thread). */
void trk_emit(unsigned worker, const struct trk_entry *e, struct slice prefix, struct slice key);

static inline void trk_delivered(struct rbuf *b) {
    mem_count_leaving(-(long long)b->cap);
    rbuf_free(b);
}

/* The per-shard tables (struct shard.tracking). */
struct trk_table;

/* A tracking client read key (on s). One record per client and key: the
 * newest epoch wins. */
void trk_record(struct shard *s, struct slice key, const struct block_record *r);
/* key (on s) changed: its readers are told and forgotten; with bcast, the
 * clients of every matching prefix are told too. */
void trk_invalidate(struct shard *s, struct slice key, const struct trk_writer *w, bool bcast);
/* A key went away without a client writing it: expiry, and eviction
 * (issue 14) calls it too. */
static inline void trk_key_gone(struct shard *s, struct slice key) {
    if (RK_UNLIKELY(atomic_load_explicit(&rk_tracking_active, memory_order_relaxed) != 0))
        trk_invalidate(s, key, &trk_nobody, true);
}
/* An eviction: the key's readers (and BCAST prefixes) are told later, by
 * trk_tell_evicted, so that the messages do not count against what the
 * eviction freed. */
void trk_key_evicted_slow(struct shard *s, struct slice key);
static inline void trk_key_evicted(struct shard *s, struct slice key) {
    if (RK_UNLIKELY(atomic_load_explicit(&rk_tracking_active, memory_order_relaxed) != 0))
        trk_key_evicted_slow(s, key);
}
/* Tell the clients of the keys s evicted since the last call (the worker
 * loop, once its evictions are over, while nobody else holds s). */
void trk_tell_evicted(struct shard *s);
/* FLUSHDB/FLUSHALL: forget every tracked key of s (the clients get a null
 * from the caller). */
void trk_forget_all(struct shard *s);
/* Evict tracked keys of s (telling their readers) while the total is above
 * max_keys; each eviction first takes one off the global count, so shards
 * evicting at once never go below the limit. At most budget keys. */
size_t trk_evict(struct shard *s, long long max_keys, size_t budget);

/* BCAST registrations of shard s. */
void trk_bcast_register(struct shard *s, struct slice prefix, const struct block_record *r);
/* every registration of client r (thread, idx/gen) made with epoch r->seq */
void trk_bcast_unregister(struct shard *s, const struct block_record *r);
size_t trk_prefix_count(const struct shard *s);
size_t trk_key_count(const struct shard *s);
void trk_shard_destroy(struct shard *s);

/* The tracking state of a client: written only by the connection layer
 * (io/tracking.c), read by CLIENT TRACKINGINFO and friends. */
#define TRK_ON       (1u << 0)
#define TRK_BCAST    (1u << 1)
#define TRK_OPTIN    (1u << 2)
#define TRK_OPTOUT   (1u << 3)
#define TRK_NOLOOP   (1u << 4)
#define TRK_CACHING  (1u << 5)   /* CLIENT CACHING yes (OPTIN) or no (OPTOUT), for the next command */
#define TRK_BROKEN   (1u << 6)   /* the redirect client has gone */

struct client_tracking {
    uint32_t flags;
    uint64_t redir_id;           /* 0: no redirect */
    struct block_record redir;   /* where it lives: worker, idx, gen */
    struct rbuf prefixes;        /* BCAST prefixes: [u32 len][bytes]... */
    size_t nprefixes;
};

/* What CLIENT TRACKING ON asks of the connection layer. */
struct tracking_opts {
    uint32_t flags;              /* TRK_BCAST | TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP */
    uint64_t redir_id;
    struct block_record redir;
    const struct slice *prefixes;
    size_t nprefixes;
};

#endif
