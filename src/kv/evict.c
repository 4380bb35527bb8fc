/*
 * Eviction; see include/ringkv/evict.h for the idea.
 *
 * The pool. Each shard keeps up to POOL_SIZE candidates ordered by score
 * (higher: evicted sooner), with a copy of each key: a candidate may have
 * been deleted, changed or touched since it was sampled, so it is looked up
 * again before it goes, and one that vanished is dropped. Scores are the
 * idle time in milliseconds (LRU), 255 minus the decayed counter (LFU) or
 * UINT64_MAX minus the expiry time (TTL), so one order serves all three.
 */
#include "ringkv/evict.h"
#include "ringkv/clock.h"
#include "ringkv/db.h"
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/table.h"
#include "ringkv/mem.h"
#include "ringkv/util.h"

#include <math.h>
#include <stdlib.h>

#define POOL_SIZE        16
#define POOL_KEY_INLINE  48        /* longer keys get an allocation of their own */
#define SAMPLE_MAX       64        /* maxmemory-samples above this sample this many */
#define VOLATILE_SAMPLES 4096      /* entries a volatile policy reads per database and pick, at most */
#define CHECK_EVERY      16        /* evictions between looks at the clock, as Redis */
/* Samples taken per database and pick, at most: a sample may come back
 * empty (a sparse stretch of a growing table, or of the old part near the
 * end of a migration), which says nothing about the rest of the table. */
#define SAMPLE_TRIES     64

static bool policy_volatile(enum evict_policy p) { return p <= EVICT_VOLATILE_TTL; }

/* ---------------------------------------------------------------- the pool */

struct pool_entry {
    uint64_t score;
    unsigned dbi;
    size_t klen;
    char *long_key;                   /* keys longer than inline_key */
    char inline_key[POOL_KEY_INLINE];
};

static const char *pool_key(const struct pool_entry *pe) {
    return pe->klen <= POOL_KEY_INLINE ? pe->inline_key : pe->long_key;
}

struct evict_pool {
    enum evict_policy policy;         /* the scores' kind */
    unsigned n;                       /* entries [0, n), ascending by score */
    struct pool_entry e[POOL_SIZE];
};

static void pool_entry_clear(struct pool_entry *pe) {
    if (pe->klen > POOL_KEY_INLINE) free(pe->long_key);
    pe->long_key = NULL;
}

/* Remove entry i, keeping the order. */
static void pool_remove(struct evict_pool *p, unsigned i) {
    pool_entry_clear(&p->e[i]);
    memmove(&p->e[i], &p->e[i + 1], (p->n - i - 1) * sizeof p->e[0]);
    p->n--;
}

static bool pool_has(const struct evict_pool *p, unsigned dbi, struct slice key) {
    for (unsigned i = 0; i < p->n; i++)
        if (p->e[i].dbi == dbi && p->e[i].klen == key.len && memcmp(pool_key(&p->e[i]), key.ptr, key.len) == 0)
            return true;
    return false;
}

/* Offer a candidate: it takes its place by score; a full pool drops its
 * worst to make room, or refuses a candidate worse than all it holds. */
static void pool_offer(struct evict_pool *p, unsigned dbi, struct slice key, uint64_t score) {
    if (p->n == POOL_SIZE) {
        if (score <= p->e[0].score) return;
        pool_remove(p, 0);
    }
    if (pool_has(p, dbi, key)) return;
    unsigned at = p->n;
    while (at > 0 && p->e[at - 1].score > score) at--;
    memmove(&p->e[at + 1], &p->e[at], (p->n - at) * sizeof p->e[0]);
    p->n++;
    struct pool_entry *pe = &p->e[at];
    pe->score = score;
    pe->dbi = dbi;
    pe->klen = key.len;
    char *dst = pe->inline_key;
    if (key.len > POOL_KEY_INLINE) dst = pe->long_key = rk_malloc(key.len);
    memcpy(dst, key.ptr, key.len);
}

void evict_shard_free(struct shard *s) {
    struct evict_pool *p = s->evict_pool;
    if (!p) return;
    for (unsigned i = 0; i < p->n; i++) pool_entry_clear(&p->e[i]);
    free(p);
    s->evict_pool = NULL;
}

/* ---------------------------------------------------------------- choosing */

static uint64_t score_of(const struct kv_entry *e, enum evict_policy p, long long now_ms) {
    switch (p) {
    case EVICT_VOLATILE_TTL: return UINT64_MAX - (uint64_t)entry_expire(e);
    case EVICT_VOLATILE_LFU:
    case EVICT_ALLKEYS_LFU: return 255 - stamp_freq(e, now_ms);
    default: return (uint64_t)stamp_idle_ms(e, now_ms);
    }
}

/* Keys the policy may take from database db. */
static size_t db_candidates(const struct kv_db *db, enum evict_policy p) {
    return policy_volatile(p) ? db->expires : table_size(&db->table);
}

/* Sample database dbi into the pool: maxmemory-samples keys (volatile:
 * with a TTL). Keys with a TTL are not kept apart, so a volatile policy
 * reads samples from more places while they are rare, up to
 * VOLATILE_SAMPLES entries. */
static void pool_populate(struct shard *s, unsigned dbi, enum evict_policy p, long long now_ms) {
    struct kv_db *db = &s->dbs[dbi];
    size_t want = (size_t)CONFIG_GET(maxmemory_samples), offered = 0;
    if (want > SAMPLE_MAX) want = SAMPLE_MAX;
    struct kv_entry *found[SAMPLE_MAX];
    size_t seen = 0;
    for (unsigned tries = 0; offered < want && seen < (policy_volatile(p) ? VOLATILE_SAMPLES : 1) && tries < SAMPLE_TRIES;
         tries++) {
        size_t n = table_sample(&db->table, rk_random(), found, policy_volatile(p) ? SAMPLE_MAX : want, 8 * SAMPLE_MAX);
        seen += n;
        for (size_t i = 0; i < n && offered < want; i++) {
            if (policy_volatile(p) && !entry_has_expire(found[i])) continue;
            pool_offer(s->evict_pool, dbi, entry_key_slice(found[i]), score_of(found[i], p, now_ms));
            offered++;
        }
    }
}

/* Leave the best candidate still in its table at the pool's top; its
 * score to *score. False: the policy finds nothing here. */
static bool pool_peek(struct shard *s, enum evict_policy p, long long now_ms, uint64_t *score) {
    if (!s->evict_pool) s->evict_pool = rk_calloc(1, sizeof *s->evict_pool);
    struct evict_pool *pool = s->evict_pool;
    if (pool->policy != p) {   /* scores of another kind do not compare */
        while (pool->n) pool_remove(pool, pool->n - 1);
        pool->policy = p;
    }
    for (int round = 0; round < 4; round++) {
        size_t any = 0;
        for (unsigned d = 0; d < s->ndb; d++) {
            if (!db_candidates(&s->dbs[d], p)) continue;
            any++;
            pool_populate(s, d, p, now_ms);
        }
        if (!any) return false;
        while (pool->n) {
            struct pool_entry *pe = &pool->e[pool->n - 1];
            struct kv_table *t = &s->dbs[pe->dbi].table;
            const char *k = pool_key(pe);
            struct kv_entry **slot = table_find(t, k, pe->klen, table_hash(k, pe->klen));
            if (slot && (!policy_volatile(p) || entry_has_expire(*slot))) {
                *score = pe->score;
                return true;
            }
            pool_remove(pool, pool->n - 1);
        }
    }
    return false;
}

/* Take the pool's top (pool_peek left it there): its key to out. */
static void pool_take(struct shard *s, unsigned *dbi, struct rbuf *out) {
    struct evict_pool *pool = s->evict_pool;
    struct pool_entry *pe = &pool->e[pool->n - 1];
    *dbi = pe->dbi;
    out->len = 0;
    rbuf_append(out, pool_key(pe), pe->klen);
    pool_remove(pool, pool->n - 1);
}

/* Any key of the shard (volatile: any with a TTL), databases in turn. */
static bool random_pick(struct shard *s, enum evict_policy p, unsigned *dbi, struct rbuf *out) {
    for (unsigned n = 0; n < s->ndb; n++) {
        unsigned d = s->evict_db++ % s->ndb;
        struct kv_db *db = &s->dbs[d];
        if (!db_candidates(db, p)) continue;
        struct kv_entry *e = NULL;
        if (!policy_volatile(p)) {
            e = table_random(&db->table, rk_random());
        } else {
            struct kv_entry *found[SAMPLE_MAX];
            size_t seen = 0;
            for (unsigned tries = 0; !e && seen < VOLATILE_SAMPLES && tries < SAMPLE_TRIES; tries++) {
                size_t got = table_sample(&db->table, rk_random(), found, SAMPLE_MAX, 8 * SAMPLE_MAX);
                seen += got;
                for (size_t i = 0; i < got && !e; i++)
                    if (entry_has_expire(found[i])) e = found[i];
            }
        }
        if (!e) continue;
        *dbi = d;
        out->len = 0;
        rbuf_append(out, entry_key(e), entry_key_len(e));
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------- the cycle */

/* How long one iteration may evict, as Redis's evictionTimeLimitUs: up to
 * 500 us for tenacity 10, growing 15% a step beyond, unbounded at 100. */
static uint64_t time_limit_us(void) {
    long long t = CONFIG_GET(maxmemory_eviction_tenacity);
    if (t <= 10) return 50 * (uint64_t)t;
    if (t < 100) return (uint64_t)(500.0 * pow(1.15, (double)(t - 10)));
    return UINT64_MAX;
}

static size_t shard_candidates(const struct shard *s, enum evict_policy p) {
    size_t n = 0;
    for (unsigned d = 0; d < s->ndb; d++) n += db_candidates(&s->dbs[d], p);
    return n;
}

static size_t candidates_everywhere(struct shard *const *all, unsigned nshards) {
    size_t n = 0;
    for (unsigned i = 0; i < nshards; i++) n += atomic_load_explicit(&all[i]->evictable, memory_order_relaxed);
    return n;
}

/* A peer's best counts while it is this fresh; an older one is not known. */
#define BEST_FRESH_MS 50
/* Without a limit, how often a shard publishes what it could evict. */
#define EVICTABLE_EVERY_MS 100

static void publish_best(struct shard *s, uint64_t best, enum evict_policy p, long long now_ms) {
    atomic_store_explicit(&s->evict_best, best, memory_order_relaxed);
    atomic_store_explicit(&s->evict_best_policy, (int)p, memory_order_relaxed);
    atomic_store_explicit(&s->evict_best_ms, now_ms, memory_order_relaxed);
}

/* The best score the other shards offer now under policy p (0: none);
 * *unknown: some shard has not published one lately. */
static uint64_t peers_best(const struct shard *s, struct shard *const *all, unsigned nshards, enum evict_policy p,
                           long long now_ms, bool *unknown) {
    uint64_t best = 0;
    *unknown = false;
    for (unsigned i = 0; i < nshards; i++) {
        if (all[i] == s) continue;
        if (now_ms - atomic_load_explicit(&all[i]->evict_best_ms, memory_order_relaxed) > BEST_FRESH_MS ||
            atomic_load_explicit(&all[i]->evict_best_policy, memory_order_relaxed) != (int)p) {
            *unknown = true;
            continue;
        }
        uint64_t b = atomic_load_explicit(&all[i]->evict_best, memory_order_relaxed);
        if (b > best) best = b;
    }
    return best;
}

/* This shard's part of the bytes to free while it cannot rank its keys
 * against the others': the overage in proportion to the keys it may evict
 * (as the others last published theirs), so that every shard gives up
 * keys, not only the first to run. */
static size_t share_of(const struct shard *s, struct shard *const *all, unsigned nshards, size_t over) {
    size_t mine = atomic_load_explicit(&s->evictable, memory_order_relaxed), total = mine;
    for (unsigned i = 0; i < nshards; i++)
        if (all[i] != s) total += atomic_load_explicit(&all[i]->evictable, memory_order_relaxed);
    if (total == mine) return over;
    size_t share = (size_t)((double)over * ((double)mine / (double)total));
    return share ? share : 1;
}

enum evict_outcome { EVICT_DONE, EVICT_DEFERRED, EVICT_NOTHING };

/* The bytes still to free, over every shard: set from the overage by a
 * shard that finds used_memory over the limit while nothing is owed,
 * lowered by every shard's evictions. Redis frees what was over at its
 * check and looks again at its next; shards that check at the same
 * moment would each free all of it. A debt left unpaid (its shards
 * stopped for time, or deferred to one that did not go on) is stale
 * after BEST_FRESH_MS, and a lone shard owes what it finds each time. */
static _Atomic long long evict_owed, evict_owed_ms;

bool (*rk_evict_hold)(const struct shard *s);

/* What is owed now: the debt in course, no more than the overage. */
static long long owed_now(long long over, unsigned nshards, long long now_ms) {
    long long owed = atomic_load_explicit(&evict_owed, memory_order_relaxed);
    bool stale = nshards == 1 || now_ms - atomic_load_explicit(&evict_owed_ms, memory_order_relaxed) > BEST_FRESH_MS;
    while (stale || owed <= 0 || owed > over)
        if (atomic_compare_exchange_weak_explicit(&evict_owed, &owed, over, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            atomic_store_explicit(&evict_owed_ms, now_ms, memory_order_relaxed);
            return over;
        }
    return owed;
}

static bool still_owed(void) { return atomic_load_explicit(&evict_owed, memory_order_relaxed) > 0; }
static void pay(long long freed) { atomic_fetch_sub_explicit(&evict_owed, freed, memory_order_relaxed); }

/* Evict from s until what is owed (evict_owed) is paid, or used_memory
 * is under limit, or the time is up. As Redis's performEvictions, the
 * bytes to free are fixed at the start and an eviction counts what its
 * deletion gave back: the invalidations it queues for tracking clients
 * are not charged to the next key, or a key's pushes to many clients
 * would evict the next key, and so on to an empty keyspace. The ranked
 * policies take this shard's best candidate only while no other shard
 * offers a better one: each publishes its best before comparing, so the
 * best over all shards goes first, as in one keyspace. While some shard
 * has not published lately (asleep, or it was held), this shard frees
 * its share of the overage, then waits a moment for the others to
 * publish (they are woken for it). The random policies free their shares
 * each iteration. */
static enum evict_outcome evict_until(struct shard *s, struct shard *const *all, unsigned nshards,
                                      enum evict_policy p, size_t limit, long long now_ms,
                                      struct evict_timing *timing) {
    struct cmd_ctx ctx = { .shard = s, .shards = &s, .nshards = 1, .now_ms = now_ms };
    struct rbuf key = {0};
    bool random = p == EVICT_ALLKEYS_RANDOM || p == EVICT_VOLATILE_RANDOM;
    size_t used = mem_used_for_evict();
    if (used <= limit) return EVICT_DONE;   /* the others freed it meanwhile */
    size_t share = share_of(s, all, nshards, (size_t)owed_now((long long)(used - limit), nshards, now_ms));
    uint64_t start = monotonic_us(), budget = time_limit_us();
    long long freed = 0;   /* by the evictions themselves, on this thread */
    unsigned dbi = 0, evicted = 0;
    enum evict_outcome out = EVICT_DONE;
    while (used > limit && still_owed()) {
        bool unknown = random;
        if (random) {
            if (!random_pick(s, p, &dbi, &key)) { out = EVICT_NOTHING; break; }
        } else {
            uint64_t score;
            if (!pool_peek(s, p, now_ms, &score)) { out = EVICT_NOTHING; break; }
            publish_best(s, score + 1, p, now_ms);
            uint64_t theirs = nshards > 1 ? peers_best(s, all, nshards, p, now_ms, &unknown) : 0;
            if ((!unknown && score + 1 < theirs) || (unknown && now_ms < s->evict_share_until_ms)) {
                out = EVICT_DEFERRED;
                break;
            }
        }
        if (unknown && freed >= (long long)share) {
            if (!random) s->evict_share_until_ms = now_ms + BEST_FRESH_MS;
            break;
        }
        if (rk_evict_hold && rk_evict_hold(s)) {   /* the clients go first */
            out = EVICT_DEFERRED;
            break;
        }
        if (!random) pool_take(s, &dbi, &key);
        uint64_t t0 = timing ? clock_ticks() : 0;
        long long f = db_evict_key(&ctx, dbi, (struct slice){ key.buf, key.len });
        if (timing) {
            uint64_t took = clock_ticks() - t0;
            if (took > timing->longest_del_ticks) timing->longest_del_ticks = took;
        }
        freed += f;
        pay(f);
        if (++evicted % CHECK_EVERY == 0 && monotonic_us() - start > budget) break;
        used = mem_used_for_evict();   /* others free too, and lazily freed values go */
    }
    if (out == EVICT_NOTHING) publish_best(s, 0, p, now_ms);
    rbuf_free(&key);
    return out;
}

bool evict_iteration(struct shard *s, struct shard *const *all, unsigned nshards, long long now_ms, bool may_evict,
                     bool *wake_peers, struct evict_timing *timing) {
    *wake_peers = false;
    long long maxmemory = CONFIG_GET(maxmemory);
    bool publish = may_evict && (maxmemory > 0 || now_ms - s->evictable_ms >= EVICTABLE_EVERY_MS);
    if (RK_UNLIKELY(publish)) {   /* the shares are known when a limit comes */
        atomic_store_explicit(&s->evictable, shard_candidates(s, evict_policy_now()), memory_order_relaxed);
        s->evictable_ms = now_ms;
    }
    if (RK_LIKELY(maxmemory <= 0)) return false;
    enum evict_policy p = evict_policy_now();
    if (!may_evict) publish_best(s, 0, p, 0);   /* not known: the others free their shares meanwhile */
    if (mem_used_for_evict() <= (size_t)maxmemory) return false;
    if (p == EVICT_NOEVICTION) return true;
    if (may_evict) {
        uint64_t t0 = timing ? clock_ticks() : 0;
        enum evict_outcome out = evict_until(s, all, nshards, p, (size_t)maxmemory, now_ms, timing);
        if (timing) {
            timing->evicted = true;
            timing->cycle_ticks = clock_ticks() - t0;
        }
        /* keys the sampling cannot find (a few TTL keys among many) do not
         * count as evictable: without them the limit must refuse writes */
        atomic_store_explicit(&s->evictable, out == EVICT_NOTHING ? 0 : shard_candidates(s, p), memory_order_relaxed);
        if (mem_used_for_evict() <= (size_t)maxmemory) return false;
    }
    *wake_peers = nshards > 1;   /* the others' turn: better candidates or their shares */
    return candidates_everywhere(all, nshards) == 0;
}
