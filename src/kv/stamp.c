/*
 * Access stamps; see include/ringkv/stamp.h for the idea.
 */
#include "ringkv/stamp.h"
#include "ringkv/config.h"
#include "ringkv/util.h"

#define CLOCK_MS 1000      /* LRU stamp resolution (Redis's LRU_CLOCK_RESOLUTION) */

_Thread_local bool rk_lfu_stamps;

/* ---------------------------------------------------------------- policy */

static const char *const policy_names[] = {
    "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
    "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction",
};

/* The configured name is one of the enum's own strings, swapped whole by
 * CONFIG SET: remember the last one seen and compare pointers first. */
enum evict_policy evict_policy_now(void) {
    static _Thread_local const char *last_name;
    static _Thread_local enum evict_policy last = EVICT_NOEVICTION;
    const char *name = __atomic_load_n(&rk_config.maxmemory_policy, __ATOMIC_RELAXED);
    if (name == last_name) return last;
    last = EVICT_NOEVICTION;
    for (unsigned i = 0; name && i < RK_ARRAY_LEN(policy_names); i++)
        if (strcmp(name, policy_names[i]) == 0) last = (enum evict_policy)i;
    last_name = name;
    return last;
}

/* ---------------------------------------------------------------- stamps */

static _Thread_local long long clock_now_ms;

static uint32_t lru_clock(long long now_ms) { return (uint32_t)(now_ms / CLOCK_MS) & ENTRY_STAMP_MAX; }
static unsigned lfu_minutes(long long now_ms) { return (unsigned)(now_ms / 60000) & 0xFFFF; }

void stamp_clock(long long now_ms) {
    clock_now_ms = now_ms;
    rk_lfu_stamps = evict_policy_lfu(evict_policy_now());
    rk_new_stamp = rk_lfu_stamps ? (uint32_t)lfu_minutes(now_ms) << 8 | LFU_INIT_VAL : lru_clock(now_ms);
}

unsigned lfu_log_incr(unsigned counter, long long log_factor, double r) {
    if (counter >= 255) return 255;
    double base = counter > LFU_INIT_VAL ? (double)(counter - LFU_INIT_VAL) : 0.0;
    return r < 1.0 / (base * (double)log_factor + 1.0) ? counter + 1 : counter;
}

unsigned lfu_decayed(uint32_t stamp, unsigned now_min, long long decay_time) {
    unsigned last = stamp >> 8, counter = stamp & 0xFF;
    if (decay_time <= 0) return counter;
    unsigned elapsed = now_min >= last ? now_min - last : 0xFFFF - last + now_min;
    unsigned long long periods = (unsigned long long)elapsed / (unsigned long long)decay_time;
    return periods >= counter ? 0 : counter - (unsigned)periods;
}

void stamp_lfu_touch(struct kv_entry *e) {
    unsigned now_min = lfu_minutes(clock_now_ms);
    unsigned counter = lfu_decayed(entry_stamp(e), now_min, CONFIG_GET(lfu_decay_time));
    double r = (double)(rk_random() >> 11) * 0x1.0p-53;
    counter = lfu_log_incr(counter, CONFIG_GET(lfu_log_factor), r);
    entry_set_stamp(e, now_min << 8 | counter);
}

long long stamp_idle_ms(const struct kv_entry *e, long long now_ms) {
    uint32_t now = lru_clock(now_ms), then = entry_stamp(e);
    uint32_t ticks = now >= then ? now - then : ENTRY_STAMP_MAX - then + now;
    return (long long)ticks * CLOCK_MS;
}

unsigned stamp_freq(const struct kv_entry *e, long long now_ms) {
    return lfu_decayed(entry_stamp(e), lfu_minutes(now_ms), CONFIG_GET(lfu_decay_time));
}

bool stamp_for_restore(long long idle_s, long long freq, long long now_ms, uint32_t *stamp) {
    enum evict_policy p = evict_policy_now();
    if (evict_policy_lfu(p) && freq >= 0) {
        *stamp = (uint32_t)lfu_minutes(now_ms) << 8 | (uint32_t)freq;
        return true;
    }
    if (evict_policy_lru(p) && idle_s >= 0) {
        long long ticks = idle_s * 1000 / CLOCK_MS, now = lru_clock(now_ms);
        ticks %= (long long)ENTRY_STAMP_MAX + 1;
        long long v = now - ticks;
        *stamp = (uint32_t)(v < 0 ? v + ENTRY_STAMP_MAX : v);
        return true;
    }
    return false;
}

