/*
 * The integer set: a header and a sorted array in one exact-size block.
 *
 * The header is 8 bytes (count, width) and the array follows it; elements
 * are native-endian int16_t, int32_t or int64_t. The array is kept sorted and free of duplicates,
 * which makes membership a binary search and position i the i-th smallest
 * member (SMEMBERS order, as Redis's intset).
 *
 * Widening: a value that does not fit the current width is smaller than
 * every member or larger than every member, so after the array is widened
 * it simply goes first or last. Widening runs from the last element down,
 * since each wider element lands at or after the narrower one it comes
 * from, and a forward pass would overwrite elements not yet read.
 *
 * Every add and remove reallocates to the exact size. That costs a realloc
 * per change, but the arrays are small (hundreds of members) and memory is
 * what this encoding exists for.
 */
#include <stdlib.h>

#include "ringkv/intset.h"

/* Packed: a small set's intset may live inside an entry at any even
 * address (entry.h); elements are read with memcpy anyway. The width, in the
 * second word, never has its top bit set: set_obj.c tells an intset from a
 * listpack by that bit. */
struct __attribute__((packed)) intset {
    uint32_t count;
    uint32_t width;      /* 2, 4 or 8 */
    unsigned char a[];   /* count elements of width bytes */
};

#define HEADER offsetof(struct intset, a)
_Static_assert(HEADER == 8, "set_obj.c reads the width as the second 4-byte word");

static unsigned width_for(int64_t v) {
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
}

static size_t bytes_for(size_t count, unsigned width) {
    return HEADER + count * width;
}

/* memcpy of a constant size compiles to one load or store, and keeps the
 * byte array free of aliasing questions. */
static inline int64_t get_w(const struct intset *is, unsigned width, size_t i) {
    const unsigned char *p = is->a + i * width;
    switch (width) {
    case 2: { int16_t x; memcpy(&x, p, 2); return x; }
    case 4: { int32_t x; memcpy(&x, p, 4); return x; }
    default: { int64_t x; memcpy(&x, p, 8); return x; }
    }
}

static inline void set_w(struct intset *is, unsigned width, size_t i, int64_t v) {
    unsigned char *p = is->a + i * width;
    switch (width) {
    case 2: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    case 4: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

/* Position of v if present (returns true), else where it would go. */
static bool search(const struct intset *is, int64_t v, size_t *pos) {
    size_t lo = 0, hi = is->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t m = get_w(is, is->width, mid);
        if (m == v) { *pos = mid; return true; }
        if (m < v) lo = mid + 1;
        else hi = mid;
    }
    *pos = lo;
    return false;
}

static struct intset *resize(struct intset *is, size_t count, unsigned width) {
    return rk_realloc(is, bytes_for(count, width));
}

struct intset *intset_new(void) {
    struct intset *is = rk_malloc(HEADER);
    is->count = 0;
    is->width = 2;
    return is;
}

void intset_free(struct intset *is) {
    free(is);
}

/* Widen to fit v, then put v first (negative) or last (positive). */
static struct intset *add_widening(struct intset *is, int64_t v) {
    unsigned from = is->width, to = width_for(v);
    size_t n = is->count;
    is = resize(is, n + 1, to);
    size_t shift = v < 0 ? 1 : 0;
    for (size_t i = n; i-- > 0;)
        set_w(is, to, i + shift, get_w(is, from, i));
    set_w(is, to, v < 0 ? 0 : n, v);
    is->width = to;
    is->count = (uint32_t)(n + 1);
    return is;
}

bool intset_add(struct intset **isp, int64_t v) {
    struct intset *is = *isp;
    if (width_for(v) > is->width) {
        *isp = add_widening(is, v);
        return true;
    }
    size_t pos;
    if (search(is, v, &pos)) return false;
    size_t n = is->count, w = is->width;
    is = resize(is, n + 1, is->width);
    unsigned char *base = is->a;
    memmove(base + (pos + 1) * w, base + pos * w, (n - pos) * w);
    set_w(is, is->width, pos, v);
    is->count = (uint32_t)(n + 1);
    *isp = is;
    return true;
}

bool intset_remove(struct intset **isp, int64_t v) {
    struct intset *is = *isp;
    size_t pos;
    if (width_for(v) > is->width || !search(is, v, &pos)) return false;
    size_t n = is->count, w = is->width;
    unsigned char *base = is->a;
    memmove(base + pos * w, base + (pos + 1) * w, (n - pos - 1) * w);
    is->count = (uint32_t)(n - 1);
    *isp = resize(is, n - 1, is->width);
    return true;
}

bool intset_contains(const struct intset *is, int64_t v) {
    size_t pos;
    return width_for(v) <= is->width && search(is, v, &pos);
}

size_t intset_count(const struct intset *is) {
    return is->count;
}

int64_t intset_get(const struct intset *is, size_t pos) {
    return get_w(is, is->width, pos);
}

int64_t intset_random(const struct intset *is, uint64_t r) {
    return get_w(is, is->width, (size_t)(r % is->count));
}

unsigned intset_width(const struct intset *is) {
    return is->width;
}

size_t intset_memory(const struct intset *is) {
    return bytes_for(is->count, is->width);
}
