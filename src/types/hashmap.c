/*
 * The big-collection hash map: a swiss table of pointers to packed elements.
 *
 * Elements. Each field/value pair (or set member) is one allocation:
 *
 *     varint(key_len << 1 | has_value)  [varint(val_len)]  key bytes  [value bytes]
 *
 * with 7-bit little-endian varints, so a key and a value under 64 and 128
 * bytes cost two bytes of lengths in all: "f1" -> "v1" is a 6-byte block
 * and the set member "m1" a 3-byte one. The flag bit lets an element be
 * read without its map. Hashes are not stored; whoever needs one (growth,
 * scan) recomputes it from the key with XXH3.
 *
 * Table. Slots come in groups of 16 with one control byte each (the swiss
 * table of ringkv/swiss.h, shared with src/kv/table.c): empty, a tombstone
 * or, for a full slot, the low 7 bits of the key's hash; a lookup compares
 * a group's 16 control bytes at once with SSE2 and only dereferences slots
 * whose 7 bits match. Slot pointers and
 * control bytes share one allocation (pointers first, for alignment): 9
 * bytes a slot, and with the load kept between 7/16 and 7/8 after growth,
 * 10 to 21 bytes of table per element.
 *
 * Order. An element's home group is the TOP bits of its hash and probing
 * moves to the next group (wrapping), as in src/kv/table.c, so the table is
 * sorted by hash give or take displacement, and the largest displacement
 * (max_probe, in groups) is tracked. That gives:
 *  - lookups that stop at the first group with an empty slot (an insert
 *    never probed past a group with room), or after max_probe + 1 groups;
 *  - a scan cursor that is a position in hash space: a call returns the
 *    elements whose hash lies in [cursor, next), which means the same thing
 *    at any table size, so successive calls tile the hash space and an
 *    element present throughout is returned exactly once, across resizes.
 *
 * Resizing is done in one go (unlike the keyspace table there is no
 * incremental migration): past 7/8 load, counting tombstones, the table
 * doubles, or is rebuilt at the same size when tombstones are over 3/8 of
 * the load; below 1/16 load after a delete it halves. A rebuild rehashes
 * every key, prefetching elements a couple of groups ahead: about 17 ns an
 * element, so growing past 900k elements is a stall of ~15 ms.
 */
#include <stdlib.h>
#include <xxhash.h>

#include "ringkv/hashmap.h"
#include "ringkv/swiss.h"

#define GROUP        SWISS_GROUP
#define GROUP_LIMIT  14            /* 7/8 of a group: the load limit */
#define NOT_FOUND    SIZE_MAX
#define RANDOM_TRIES 64
#define REHASH_AHEAD 2             /* groups whose elements are prefetched ahead */

/* struct hm_elem is never defined: an element is the bytes above. */
static inline const unsigned char *elem_raw(const struct hm_elem *e) {
    return (const unsigned char *)e;
}

struct hashmap {
    struct hm_elem **slots;   /* ngroups * 16 slots, then ngroups * 16 control bytes */
    uint8_t *ctrl;
    size_t ngroups;           /* power of two, or 0 when nothing is allocated */
    size_t used;              /* live elements */
    size_t tombstones;
    size_t max_probe;         /* largest distance, in groups, of an element from its home */
    size_t elem_bytes;        /* sum of the elements' allocation sizes */
    bool has_values;
};

/* ---------------------------------------------------------------- elements */

static inline size_t varint_len(size_t v) {
    size_t n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

static inline unsigned char *varint_put(unsigned char *p, size_t v) {
    while (v >= 0x80) { *p++ = (unsigned char)(v | 0x80); v >>= 7; }
    *p++ = (unsigned char)v;
    return p;
}

static inline const unsigned char *varint_get(const unsigned char *p, size_t *v) {
    size_t x = 0;
    unsigned shift = 0;
    for (;; shift += 7) {
        unsigned char c = *p++;
        x |= (size_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) break;
    }
    *v = x;
    return p;
}

/* The element's lengths and where its key starts. */
struct elem_view {
    const char *key;
    size_t klen;
    size_t vlen;
    bool has_value;
};

static inline struct elem_view elem_view(const struct hm_elem *e) {
    struct elem_view v;
    size_t first;
    const unsigned char *p = varint_get(elem_raw(e), &first);
    v.klen = first >> 1;
    v.has_value = first & 1;
    v.vlen = 0;
    if (v.has_value) p = varint_get(p, &v.vlen);
    v.key = (const char *)p;
    return v;
}

static size_t elem_size(size_t klen, size_t vlen, bool has_value) {
    size_t n = varint_len(klen << 1) + klen;
    if (has_value) n += varint_len(vlen) + vlen;
    return n;
}

static struct hm_elem *elem_new(struct slice key, struct slice val, bool has_value) {
    size_t size = elem_size(key.len, val.len, has_value);
    struct hm_elem *e = rk_malloc(size);
    unsigned char *p = varint_put((unsigned char *)e, key.len << 1 | (has_value ? 1 : 0));
    if (has_value) p = varint_put(p, val.len);
    if (key.len) memcpy(p, key.ptr, key.len);
    if (has_value && val.len) memcpy(p + key.len, val.ptr, val.len);
    return e;
}

struct slice hm_elem_key(const struct hm_elem *e) {
    struct elem_view v = elem_view(e);
    return (struct slice){ v.key, v.klen };
}

struct slice hm_elem_val(const struct hm_elem *e) {
    struct elem_view v = elem_view(e);
    return (struct slice){ v.key + v.klen, v.vlen };
}

size_t hm_elem_memory(const struct hm_elem *e) {
    struct elem_view v = elem_view(e);
    return elem_size(v.klen, v.vlen, v.has_value);
}

void hm_elem_free(struct hm_elem *e) {
    free(e);
}

static inline uint64_t key_hash(const char *key, size_t len) {
    return XXH3_64bits(key, len);
}

static inline uint64_t elem_hash(const struct hm_elem *e) {
    struct elem_view v = elem_view(e);
    return key_hash(v.key, v.klen);
}

static inline bool elem_key_is(const struct hm_elem *e, struct slice key) {
    struct elem_view v = elem_view(e);
    return v.klen == key.len && memcmp(v.key, key.ptr, key.len) == 0;
}

/* ---------------------------------------------------------------- table */

static inline unsigned map_bits(const struct hashmap *m) {
    return (unsigned)__builtin_ctzll(m->ngroups);
}

/* The top bits of the hash; the double shift is defined for one group too. */
static inline size_t home_group(const struct hashmap *m, uint64_t hash) {
    return (size_t)((hash >> 1) >> (63 - map_bits(m)));
}

static inline size_t limit_of(size_t ngroups) { return ngroups * GROUP_LIMIT; }

static size_t table_bytes(size_t ngroups) {
    return ngroups * GROUP * (sizeof(struct hm_elem *) + 1);
}

static size_t find_slot(const struct hashmap *m, struct slice key, uint64_t hash) {
    if (!m->used) return NOT_FOUND;
    size_t mask = m->ngroups - 1, g = home_group(m, hash);
    uint8_t h2 = swiss_h2(hash);
    for (size_t d = 0; d <= m->max_probe; d++, g = (g + 1) & mask) {
        __m128i ctrl = swiss_load(m->ctrl + g * GROUP);
        for (unsigned bits = swiss_match(ctrl, h2); bits; bits &= bits - 1) {
            size_t i = g * GROUP + swiss_first(bits);
            if (elem_key_is(m->slots[i], key)) return i;
        }
        if (swiss_match(ctrl, SWISS_EMPTY)) return NOT_FOUND;
    }
    return NOT_FOUND;
}

/* Put e in the first free slot of its probe sequence; the caller ensured room. */
static void place(struct hashmap *m, struct hm_elem *e, uint64_t hash) {
    size_t mask = m->ngroups - 1, g = home_group(m, hash);
    for (size_t d = 0;; d++, g = (g + 1) & mask) {
        unsigned free_slots = swiss_free(m->ctrl + g * GROUP);
        if (!free_slots) continue;
        size_t i = g * GROUP + swiss_first(free_slots);
        if (swiss_set_full(m->ctrl, i, hash)) m->tombstones--;
        m->slots[i] = e;
        m->used++;
        if (d > m->max_probe) m->max_probe = d;
        return;
    }
}

static void erase_slot(struct hashmap *m, size_t i) {
    if (swiss_erase(m->ctrl, i)) m->tombstones++;
    m->used--;
}

static void alloc_table(struct hashmap *m, size_t ngroups) {
    char *block = rk_malloc(table_bytes(ngroups));
    m->slots = (struct hm_elem **)block;
    m->ctrl = (uint8_t *)(block + ngroups * GROUP * sizeof(struct hm_elem *));
    memset(m->ctrl, 0, ngroups * GROUP);   /* all empty */
    m->ngroups = ngroups;
    m->used = m->tombstones = m->max_probe = 0;
}

/* Rebuild at ngroups (0: drop the arrays; the map must be empty then). */
static void rebuild(struct hashmap *m, size_t ngroups) {
    struct hm_elem **old_slots = m->slots;
    uint8_t *old_ctrl = m->ctrl;
    size_t old_groups = m->ngroups;
    if (ngroups) {
        alloc_table(m, ngroups);
    } else {
        m->slots = NULL;
        m->ctrl = NULL;
        m->ngroups = m->used = m->tombstones = m->max_probe = 0;
    }
    /* The elements of the next groups are being fetched while this one's
     * are hashed: each element is a cache miss, and hashing without them
     * in flight would pay those misses one after another. */
    for (size_t g = 0; g < old_groups + REHASH_AHEAD; g++) {
        if (g + REHASH_AHEAD < old_groups) {
            size_t ahead = g + REHASH_AHEAD;
            struct hm_elem **slots = old_slots + ahead * GROUP;
            for (unsigned bits = swiss_full(old_ctrl + ahead * GROUP); bits; bits &= bits - 1)
                __builtin_prefetch(slots[swiss_first(bits)]);
        }
        if (g >= old_groups) break;
        struct hm_elem **slots = old_slots + g * GROUP;
        for (unsigned bits = swiss_full(old_ctrl + g * GROUP); bits; bits &= bits - 1) {
            struct hm_elem *e = slots[swiss_first(bits)];
            place(m, e, elem_hash(e));
        }
    }
    free(old_slots);
}

/* Make room for one more element. */
static void reserve_one(struct hashmap *m) {
    if (!m->ngroups) { alloc_table(m, 1); return; }
    if (m->used + m->tombstones < limit_of(m->ngroups)) return;
    size_t n = m->ngroups;
    if (m->used >= limit_of(n) / 8 * 5) n *= 2;
    rebuild(m, n);
}

/* Halve a map under 1/16 load; free the arrays of an empty one. */
static void maybe_shrink(struct hashmap *m) {
    if (!m->used) rebuild(m, 0);
    else if (m->ngroups > 1 && m->used < m->ngroups) rebuild(m, m->ngroups / 2);
}

/* ---------------------------------------------------------------- API */

struct hashmap *hashmap_new(bool has_values) {
    struct hashmap *m = rk_calloc(1, sizeof *m);
    m->has_values = has_values;
    return m;
}

void hashmap_free(struct hashmap *m) {
    if (!m) return;
    for (size_t g = 0; g < m->ngroups; g++)
        for (unsigned bits = swiss_full(m->ctrl + g * GROUP); bits; bits &= bits - 1)
            free(m->slots[g * GROUP + swiss_first(bits)]);
    free(m->slots);
    free(m);
}

size_t hashmap_count(const struct hashmap *m) { return m->used; }
bool hashmap_has_values(const struct hashmap *m) { return m->has_values; }

const struct hm_elem *hashmap_find(const struct hashmap *m, struct slice key) {
    size_t i = find_slot(m, key, key_hash(key.ptr, key.len));
    return i == NOT_FOUND ? NULL : m->slots[i];
}

bool hashmap_get(const struct hashmap *m, struct slice key, struct slice *val) {
    const struct hm_elem *e = hashmap_find(m, key);
    if (e && val) *val = hm_elem_val(e);
    return e != NULL;
}

/* Replace the value of the element in slot i. A value of the same length
 * is written in place (HINCRBY's usual case); memmove since val may point
 * at the old value itself. */
static void replace_value(struct hashmap *m, size_t i, struct slice val) {
    struct hm_elem *old = m->slots[i];
    struct elem_view v = elem_view(old);
    char *old_val = (char *)v.key + v.klen;
    if (v.vlen == val.len) {
        if (val.len) memmove(old_val, val.ptr, val.len);
        return;
    }
    struct hm_elem *e = elem_new((struct slice){ v.key, v.klen }, val, true);
    m->elem_bytes += elem_size(v.klen, val.len, true);
    m->elem_bytes -= elem_size(v.klen, v.vlen, true);
    m->slots[i] = e;
    free(old);
}

bool hashmap_set(struct hashmap *m, struct slice key, struct slice val) {
    uint64_t hash = key_hash(key.ptr, key.len);
    size_t i = find_slot(m, key, hash);
    if (i != NOT_FOUND) {
        if (m->has_values) replace_value(m, i, val);
        return false;
    }
    if (!m->has_values) val = (struct slice){ NULL, 0 };
    /* Build the element first: growth moves no element, but being safe
     * about key and val pointing into the map costs nothing here. */
    struct hm_elem *e = elem_new(key, val, m->has_values);
    m->elem_bytes += elem_size(key.len, val.len, m->has_values);
    reserve_one(m);
    place(m, e, hash);
    return true;
}

struct hm_elem *hashmap_remove(struct hashmap *m, struct slice key) {
    size_t i = find_slot(m, key, key_hash(key.ptr, key.len));
    if (i == NOT_FOUND) return NULL;
    struct hm_elem *e = m->slots[i];
    m->elem_bytes -= hm_elem_memory(e);
    erase_slot(m, i);
    maybe_shrink(m);
    return e;
}

bool hashmap_delete(struct hashmap *m, struct slice key) {
    struct hm_elem *e = hashmap_remove(m, key);
    free(e);
    return e != NULL;
}

static inline uint64_t mix64(uint64_t x) {   /* splitmix64's finaliser */
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/*
 * Uniform: draw slots until one is full (the load is at least 1/16, so 64
 * draws all miss with probability under 2%). Taking the first full slot
 * after one random slot would favour elements that follow empty runs.
 * The fallback for that rare case is the first full slot after the last
 * draw, slightly biased but bounded in time.
 */
const struct hm_elem *hashmap_random(const struct hashmap *m, uint64_t r) {
    if (!m->used) return NULL;
    size_t nslots = m->ngroups * GROUP, i = 0;
    for (int t = 0; t < RANDOM_TRIES; t++) {
        i = (size_t)(r % nslots);
        if (swiss_is_full(m->ctrl[i])) return m->slots[i];
        r = mix64(r);
    }
    while (!swiss_is_full(m->ctrl[i])) i = (i + 1) % nslots;
    return m->slots[i];
}

/*
 * Visit the elements whose hash is in [lo, hi) (hi == 0: to the end of the
 * hash space). Their homes are groups g_lo..g_hi and each sits at most
 * max_probe groups past its home; past g_hi, the first group with an empty
 * slot is the last that can hold one (no probe ran through it).
 */
static void scan_range(const struct hashmap *m, uint64_t lo, uint64_t hi,
                       hashmap_visit_fn fn, void *ud) {
    size_t mask = m->ngroups - 1;
    size_t g_lo = home_group(m, lo);
    size_t g_hi = hi ? home_group(m, hi - 1) : mask;
    size_t homes = g_hi - g_lo + 1;
    size_t span = homes + m->max_probe;
    if (span > m->ngroups) span = m->ngroups;
    for (size_t k = 0; k < span; k++) {
        size_t g = (g_lo + k) & mask;
        const uint8_t *ctrl = m->ctrl + g * GROUP;
        for (unsigned bits = swiss_full(ctrl); bits; bits &= bits - 1) {
            const struct hm_elem *e = m->slots[g * GROUP + swiss_first(bits)];
            uint64_t h = elem_hash(e);
            if (h >= lo && (!hi || h < hi)) fn(ud, e);
        }
        if (k + 1 >= homes && swiss_empty(ctrl)) break;
    }
}

uint64_t hashmap_scan(const struct hashmap *m, uint64_t cursor, size_t count,
                      hashmap_visit_fn fn, void *ud) {
    if (!m->used) return 0;
    unsigned bits = map_bits(m);
    uint64_t groups = count / GROUP + (count % GROUP != 0);
    if (!groups) groups = 1;
    uint64_t first = bits ? cursor >> (64 - bits) : 0;
    uint64_t end = first + groups;
    uint64_t next = (!bits || end >= m->ngroups) ? 0 : end << (64 - bits);
    scan_range(m, cursor, next, fn, ud);
    return next;
}

const struct hm_elem *hashmap_iter_next(struct hashmap_iter *it) {
    const struct hashmap *m = it->m;
    size_t nslots = m->ngroups * GROUP;
    while (it->pos < nslots) {
        size_t i = it->pos++;
        if (swiss_is_full(m->ctrl[i])) return m->slots[i];
    }
    return NULL;
}

size_t hashmap_memory(const struct hashmap *m) {
    return sizeof *m + table_bytes(m->ngroups) + m->elem_bytes;
}
