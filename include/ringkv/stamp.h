/*
 * Access stamps: what eviction ranks keys by, and what OBJECT IDLETIME,
 * OBJECT FREQ and RESTORE IDLETIME/FREQ read and write.
 *
 * Every key carries a 24-bit stamp (entry.h), Redis's robj.lru. Its
 * meaning follows the maxmemory-policy in force, as Redis's does:
 *   LRU (every non-LFU policy): the clock in seconds, mod 2^24, at the
 *     last access;
 *   LFU: the minute of the last decrement (16 bits) and a counter (8 bits)
 *     that grows logarithmically with accesses (lfu-log-factor) and loses
 *     one per lfu-decay-time minutes without.
 * Switching policy at run time reinterprets old stamps, as in Redis.
 * Lookups refresh the stamp (entry_touch) unless told not to
 * (LOOKUP_NOTOUCH, db.h).
 */
#ifndef RINGKV_STAMP_H
#define RINGKV_STAMP_H

#include "ringkv/common.h"
#include "ringkv/entry.h"

/* Redis's policies, in maxmemory-policy's order of names (config_table.c). */
enum evict_policy {
    EVICT_VOLATILE_LRU, EVICT_VOLATILE_LFU, EVICT_VOLATILE_RANDOM, EVICT_VOLATILE_TTL,
    EVICT_ALLKEYS_LRU, EVICT_ALLKEYS_LFU, EVICT_ALLKEYS_RANDOM, EVICT_NOEVICTION,
};
enum evict_policy evict_policy_now(void);
static inline bool evict_policy_lfu(enum evict_policy p) { return p == EVICT_VOLATILE_LFU || p == EVICT_ALLKEYS_LFU; }
static inline bool evict_policy_lru(enum evict_policy p) { return p == EVICT_VOLATILE_LRU || p == EVICT_ALLKEYS_LRU; }

#define LFU_INIT_VAL 5   /* a new key's counter: not evicted before it had a chance */

/* This thread's stamps follow LFU (else LRU); set by stamp_clock. */
extern _Thread_local bool rk_lfu_stamps;

/* The clock moved to now_ms: new entries' stamp (rk_new_stamp) and the
 * meaning of stamps for this thread. Each loop iteration, and once before
 * a load fills the tables. */
void stamp_clock(long long now_ms);

/* An access. */
void stamp_lfu_touch(struct kv_entry *e);
static inline void entry_touch(struct kv_entry *e) {
    if (RK_UNLIKELY(rk_lfu_stamps)) stamp_lfu_touch(e);
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
long long stamp_idle_ms(const struct kv_entry *e, long long now_ms);
unsigned stamp_freq(const struct kv_entry *e, long long now_ms);
/* RESTORE ... IDLETIME s / FREQ f: the stamp to set under the policy in
 * force, or false when the policy keeps the other kind (ignored, as Redis). */
bool stamp_for_restore(long long idle_s, long long freq, long long now_ms, uint32_t *stamp);

#endif
