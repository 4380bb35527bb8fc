/*
 * Memory accounting: the per-thread slots and their sum (see mem.h).
 */
#include "ringkv/mem.h"

#include <malloc.h>


struct mem_slot rk_mem_slots[MEM_SLOTS];
_Thread_local struct mem_slot *rk_mem_mine;
bool rk_mem_heap_counted;

static _Atomic unsigned slots_claimed;
static _Atomic size_t peak;

struct mem_slot *mem_slot_claim(void) {
    unsigned i = atomic_fetch_add_explicit(&slots_claimed, 1, memory_order_relaxed);
    rk_mem_mine = &rk_mem_slots[i < MEM_SLOTS ? i : MEM_SLOTS - 1];
    return rk_mem_mine;
}

/* Under AddressSanitizer its allocator keeps the count; weak, so that other
 * builds link without it. */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static size_t heap_bytes(void) {
    if (__sanitizer_get_current_allocated_bytes) return __sanitizer_get_current_allocated_bytes();
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

size_t mem_used(void) {
    unsigned n = atomic_load_explicit(&slots_claimed, memory_order_relaxed);
    if (n > MEM_SLOTS) n = MEM_SLOTS;
    long long sum = 0;
    for (unsigned i = 0; i < n; i++) sum += atomic_load_explicit(&rk_mem_slots[i].bytes, memory_order_relaxed);
    if (!rk_mem_heap_counted) sum += (long long)heap_bytes();
    return sum > 0 ? (size_t)sum : 0;
}

size_t mem_not_counted_for_evict(void) {
    unsigned n = atomic_load_explicit(&slots_claimed, memory_order_relaxed);
    if (n > MEM_SLOTS) n = MEM_SLOTS;
    long long sum = 0;
    for (unsigned i = 0; i < n; i++) sum += atomic_load_explicit(&rk_mem_slots[i].leaving, memory_order_relaxed);
    return sum > 0 ? (size_t)sum : 0;
}

size_t mem_used_for_evict(void) {
    size_t used = mem_used(), out = mem_not_counted_for_evict();
    return used > out ? used - out : 0;
}

size_t mem_used_peak_update(void) {
    size_t used = mem_used(), p = atomic_load_explicit(&peak, memory_order_relaxed);
    while (used > p && !atomic_compare_exchange_weak_explicit(&peak, &p, used, memory_order_relaxed,
                                                             memory_order_relaxed)) {}
    return used > p ? used : p;
}

static _Atomic unsigned trim_epoch;   /* bumped by mem_trim_soon */
/* Until when (the workers' clock, ms) freed spans are decommitted at
 * once: 0 when not, EAGER_OPEN from a request until the first worker's
 * cron dates the window. Long enough for every worker to serve its
 * MEM_TRIM_TICKS. */
static _Atomic long long eager_until_ms;
#define EAGER_OPEN (-1)
#define EAGER_DECOMMIT_MS 2000

void (*rk_mem_decommit_eagerly)(bool on);

void mem_trim_soon(void) {
    atomic_fetch_add_explicit(&trim_epoch, 1, memory_order_relaxed);
    if (!rk_mem_decommit_eagerly) return;
    atomic_store(&eager_until_ms, EAGER_OPEN);
    rk_mem_decommit_eagerly(true);   /* before the caller's frees */
}

/* Date an open window; once it is over, back to the allocator's delay,
 * unless a new request opened another meanwhile (checked again after the
 * switch, as the two switches may land in either order). */
static void eager_window_check(long long now_ms) {
    long long until = atomic_load(&eager_until_ms);
    if (__builtin_expect(until == 0, 1)) return;
    if (until == EAGER_OPEN) {
        atomic_compare_exchange_strong(&eager_until_ms, &until, now_ms + EAGER_DECOMMIT_MS);
        return;
    }
    if (now_ms < until || !atomic_compare_exchange_strong(&eager_until_ms, &until, 0)) return;
    rk_mem_decommit_eagerly(false);
    if (atomic_load(&eager_until_ms)) rk_mem_decommit_eagerly(true);
}

bool mem_trim_due(struct mem_trim_state *st, long long now_ms) {
    /* only over mimalloc (malloc_count.c): glibc's malloc_trim in a
     * sanitizer build sets up glibc arenas that the sanitizer's malloc
     * never attached, and the thread's exit then aborts */
    if (!rk_mem_heap_counted) return false;
    eager_window_check(now_ms);
    unsigned epoch = atomic_load_explicit(&trim_epoch, memory_order_relaxed);
    if (__builtin_expect(epoch != st->served, 0)) {
        st->served = epoch;
        st->ticks_left = MEM_TRIM_TICKS;
    }
    if (__builtin_expect(st->ticks_left == 0, 1)) return false;
    st->ticks_left--;
    return true;
}
