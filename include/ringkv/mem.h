/*
 * Memory accounting: used_memory, the bytes the server holds in allocations.
 *
 * Redis counts every allocation it makes (zmalloc); maxmemory, INFO memory
 * and MEMORY STATS all read that count. ringkv counts the same way, from
 * three sources that add to one figure:
 *
 *   - the heap: in the server binary every malloc, calloc, realloc and free
 *     of the process (the server's own, Lua's, liburing's, libc's) passes
 *     through malloc_count.c, which adds or takes the block's usable size;
 *   - entry arenas (arena.h): blocks handed out, not the chunks behind them
 *     (a chunk is to an arena what a page is to malloc);
 *   - mapped arrays (table.h's big tables): their whole size while mapped.
 *
 * Counting must not cost a lock or a shared cache line per allocation, so
 * each thread adds to a slot of its own (claimed at its first count; a
 * thread's slot outlives it, since what it allocated may still be live)
 * and readers sum the slots. A block freed by another thread than the one
 * that allocated it leaves one slot high and another low; the sum is exact.
 *
 * Builds without malloc_count.c (the sanitizers, which must see every
 * malloc themselves; unit tests) ask the allocator for its heap figure
 * instead: the sanitizer's count of allocated bytes, or glibc's mallinfo2.
 */
#ifndef RINGKV_MEM_H
#define RINGKV_MEM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define MEM_SLOTS 64   /* threads with a slot of their own; later ones share the last */

struct mem_slot {
    _Atomic long long bytes;
    _Atomic long long leaving;     /* bytes: see mem_count_leaving */
    char pad[64 - 2 * sizeof(long long)];
};

extern struct mem_slot rk_mem_slots[MEM_SLOTS];
extern _Thread_local struct mem_slot *rk_mem_mine;
struct mem_slot *mem_slot_claim(void);

static inline struct mem_slot *mem_slot_mine(void) {
    struct mem_slot *s = rk_mem_mine;
    return __builtin_expect(s != NULL, 1) ? s : mem_slot_claim();
}

/* Add delta to a counter of this thread's slot. Only the owner writes its
 * slot, so a plain load and store do; the shared last slot adds
 * atomically. */
static inline void mem_slot_add_to(struct mem_slot *s, _Atomic long long *field, long long delta) {
    if (__builtin_expect(s == &rk_mem_slots[MEM_SLOTS - 1], 0)) {
        atomic_fetch_add_explicit(field, delta, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(field, atomic_load_explicit(field, memory_order_relaxed) + delta, memory_order_relaxed);
}

/* delta bytes allocated (negative: freed) by this thread. */
static inline void mem_count(long long delta) {
    struct mem_slot *s = mem_slot_mine();
    mem_slot_add_to(s, &s->bytes, delta);
}

/* Output on its way out (negative: gone, or found stuck): handed to the
 * kernel in a send whose completion this thread has not reaped yet, or
 * invalidations written for a client whose send has not started. Redis
 * writes its replies and frees their buffers before its next maxmemory
 * check; a worker learns that its sends are done only at its next
 * iteration, after its check, and another thread checks at any moment.
 * Counted for eviction, that output would evict keys, and the evictions'
 * invalidations to every tracking client more keys, and so on. Output a
 * client does not read (its send waits for room) counts. */
static inline void mem_count_leaving(long long delta) {
    struct mem_slot *s = mem_slot_mine();
    mem_slot_add_to(s, &s->leaving, delta);
}

/* What this thread's slot counts: the bytes it allocated less those it freed. */
static inline long long mem_thread_bytes(void) {
    return atomic_load_explicit(&mem_slot_mine()->bytes, memory_order_relaxed);
}

/* malloc_count.c sets this when it is linked: the heap is in the slots. */
extern bool rk_mem_heap_counted;

/* used_memory: every slot, plus the allocator's heap figure when the heap
 * is not counted here. */
size_t mem_used(void);
/* INFO's mem_not_counted_for_evict: the output on its way out (above). */
size_t mem_not_counted_for_evict(void);
/* What maxmemory is held to: used_memory less the above. */
size_t mem_used_for_evict(void);
/* INFO's used_memory_peak: take mem_used() into the peak (every worker's
 * cron, and whoever reports it) and return the peak. */
size_t mem_used_peak_update(void);
/* Much is about to be freed by its owner (a FLUSHALL, a big DEL): every
 * worker's next cron asks the allocator to give free pages back to the
 * system, each for its own heap, so RSS follows; and for a while the
 * allocator decommits what is freed at once (rk_mem_decommit_eagerly). */
void mem_trim_soon(void);
/* Set by malloc_count.c when it is linked: whether freed spans are
 * decommitted at once or after the allocator's delay. Called by mem.c
 * only; NULL in the builds without it. */
extern void (*rk_mem_decommit_eagerly)(bool on);
/* A worker's side of the trim requests: the last one it served, and how
 * many more ticks it trims for it. The allocator gives back freed
 * segments only after a delay, so one collect right after the free is not
 * enough: a request is served over MEM_TRIM_TICKS ticks. */
struct mem_trim_state {
    unsigned served;
    unsigned ticks_left;
};
#define MEM_TRIM_TICKS 3
/* Whether this worker's cron should trim now: a trim was asked for in the
 * last MEM_TRIM_TICKS ticks. The cron then calls malloc_trim (mimalloc's
 * collect) for its own heap. Never due in builds without malloc_count.c
 * (the sanitizers, unit tests). now_ms, the worker's clock, also closes
 * the window of eager decommits once it is over. */
bool mem_trim_due(struct mem_trim_state *st, long long now_ms);

#endif
