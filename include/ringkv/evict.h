/*
 * Eviction: keeping used_memory (mem.h) under maxmemory, with Redis 7.0's
 * policies and its approximations.
 *
 * The limit is global, the keyspace is not: each worker evicts from its own
 * shard only, once per loop iteration (evict_iteration), while the sum of
 * every thread's allocations is over the limit. So no thread ever touches
 * another's keys to make room, a shard that takes all the writes evicts
 * what it holds, and an idle shard that holds old keys gives them up at its
 * next iteration (its timeout tick at the latest). Within a shard, keys are
 * picked as Redis picks them: a pool of the best candidates seen, refilled
 * by sampling maxmemory-samples keys per database (allkeys-* from every
 * key, volatile-* from keys with a TTL), best first by idle time (LRU),
 * by a low access frequency (LFU) or by the nearest expiry (TTL); the
 * random policies take any (volatile: any with a TTL). An iteration evicts
 * for at most the time maxmemory-eviction-tenacity allows, as Redis's
 * performEvictions, and goes on at the next.
 *
 * The iteration's verdict holds for the commands of that iteration: while
 * over the limit, commands flagged deny-oom are refused with -OOM when the
 * policy is noeviction or when no shard has anything left it may evict.
 *
 * Every key carries a 24-bit stamp (entry.h): what lookups refresh and the
 * ranking reads. Its meaning follows the policy in force, as Redis's:
 *   LRU (every non-LFU policy): the clock in seconds, mod 2^24, at the
 *     last access;
 *   LFU: the minute of the last decrement (16 bits) and a counter (8 bits)
 *     that grows logarithmically with accesses (lfu-log-factor) and loses
 *     one per lfu-decay-time minutes without.
 * Switching policy at run time reinterprets old stamps, as in Redis.
 */
#ifndef RINGKV_EVICT_H
#define RINGKV_EVICT_H

#include "ringkv/common.h"
#include "ringkv/entry.h"

struct shard;

/* Redis's policies, in maxmemory-policy's order of names (config_table.c). */
enum evict_policy {
    EVICT_VOLATILE_LRU, EVICT_VOLATILE_LFU, EVICT_VOLATILE_RANDOM, EVICT_VOLATILE_TTL,
    EVICT_ALLKEYS_LRU, EVICT_ALLKEYS_LFU, EVICT_ALLKEYS_RANDOM, EVICT_NOEVICTION,
};
enum evict_policy evict_policy_now(void);
static inline bool evict_policy_lfu(enum evict_policy p) { return p == EVICT_VOLATILE_LFU || p == EVICT_ALLKEYS_LFU; }
static inline bool evict_policy_lru(enum evict_policy p) { return p == EVICT_VOLATILE_LRU || p == EVICT_ALLKEYS_LRU; }

#define LFU_INIT_VAL 5   /* a new key's counter: not evicted before it had a chance */

/* This thread's stamps follow LFU (else LRU); set by evict_clock. */
extern _Thread_local bool rk_lfu_stamps;

/* The clock moved to now_ms: new entries' stamp (rk_new_stamp) and the
 * meaning of stamps for this thread. Each loop iteration, and once before
 * a load fills the tables. */
void evict_clock(long long now_ms);

/* An access: lookups call it unless told not to (LOOKUP_NOTOUCH). */
void evict_lfu_touch(struct kv_entry *e);
static inline void entry_touch(struct kv_entry *e) {
    if (RK_UNLIKELY(rk_lfu_stamps)) evict_lfu_touch(e);
    else entry_set_stamp(e, rk_new_stamp);
}

/* LFU arithmetic, exposed for its unit test. The counter after one access:
 * it grows with probability 1 / ((counter - LFU_INIT_VAL) * log_factor + 1),
 * decided by r, a uniform draw in [0, 1). */
unsigned lfu_log_incr(unsigned counter, long long log_factor, double r);
/* The counter of stamp at minute now_min (16 bits, wrapping), less one
 * per decay_time minutes elapsed (0: no decay). */
unsigned lfu_decayed(uint32_t stamp, unsigned now_min, long long decay_time);

/* OBJECT IDLETIME (milliseconds) and OBJECT FREQ, which do not touch. */
long long evict_idle_ms(const struct kv_entry *e, long long now_ms);
unsigned evict_freq(const struct kv_entry *e, long long now_ms);
/* RESTORE ... IDLETIME s / FREQ f: the stamp to set under the policy in
 * force, or false when the policy keeps the other kind (ignored, as Redis). */
bool evict_stamp_for_restore(long long idle_s, long long freq, long long now_ms, uint32_t *stamp);

/* The worker's turn, once per loop iteration (may_evict: the shard is not
 * held by a transaction): evict from s while used_memory is over
 * maxmemory, within the tenacity's time, and publish what s could still
 * evict. all: every shard, whose published counts say whether anything is
 * left to evict anywhere. Returns whether deny-oom commands must be
 * refused until the next iteration. */
bool evict_iteration(struct shard *s, struct shard *const *all, unsigned nshards, long long now_ms, bool may_evict);
/* The shard's eviction state is freed (shard_destroy). */
void evict_shard_free(struct shard *s);

#endif
