/*
 * Lock-free single-producer single-consumer ring of pointers.
 *
 * Every ordered pair of threads owns one of these. The producer owns `tail`,
 * the consumer owns `head`; each also keeps a cached copy of the other's
 * index so the shared cache line is only read when the cached value says the
 * ring looks full (producer) or empty (consumer). Capacity is a power of two.
 */
#ifndef RINGKV_SPSC_H
#define RINGKV_SPSC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SPSC_CACHELINE 64

struct spsc_ring {
    _Alignas(SPSC_CACHELINE) _Atomic uint32_t head;   /* consumer writes */
    uint32_t tail_cache;                              /* consumer's view of tail */
    _Alignas(SPSC_CACHELINE) _Atomic uint32_t tail;   /* producer writes */
    uint32_t head_cache;                              /* producer's view of head */
    _Alignas(SPSC_CACHELINE) uint32_t mask;
    void **slots;
};

static inline int spsc_init(struct spsc_ring *r, uint32_t capacity_pow2) {
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    r->tail_cache = r->head_cache = 0;
    r->mask = capacity_pow2 - 1;
    r->slots = calloc(capacity_pow2, sizeof(void *));
    return r->slots ? 0 : -1;
}

static inline void spsc_destroy(struct spsc_ring *r) { free(r->slots); r->slots = NULL; }

/* Producer side. Returns false when full. */
static inline bool spsc_push(struct spsc_ring *r, void *p) {
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (t - r->head_cache > r->mask) {
        r->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
        if (t - r->head_cache > r->mask)
            return false;
    }
    r->slots[t & r->mask] = p;
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return true;
}

/* Consumer side. Returns NULL when empty. */
static inline void *spsc_pop(struct spsc_ring *r) {
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h == r->tail_cache) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h == r->tail_cache)
            return NULL;
    }
    void *p = r->slots[h & r->mask];
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return p;
}

/* Consumer side, no side effects: is anything waiting? */
static inline bool spsc_empty(struct spsc_ring *r) {
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    return h == atomic_load_explicit(&r->tail, memory_order_acquire);
}

#endif
