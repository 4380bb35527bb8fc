/*
 * The per-shard hash table: a swiss table ordered by hash, resized in pieces.
 *
 * Slots come in groups of 16 with one control byte each (ringkv/swiss.h):
 * empty, a tombstone or, for a full slot, the low 7 bits of the key's
 * hash, compared a whole group at a time with SSE2.
 *
 * A key's home group is its hash scaled to the number of groups (the top
 * 64 bits of hash * ngroups), and probing moves to the next group
 * (wrapping). The table is therefore sorted by hash,
 * give or take the groups an entry was displaced by probing. Most entries
 * sit in their home group, but linear probing at 7/8 load makes a few long
 * runs (tens of groups in a table of millions), so the largest displacement
 * is tracked per part as max_probe. Three things follow:
 *
 *  - Lookups stop at the first group that still has an empty slot (an
 *    insert never went past a group with room), and after max_probe + 1
 *    groups even in a region full of tombstones.
 *  - A scan cursor is a position in hash space: one call returns every entry
 *    whose hash lies in [cursor, next_cursor), looking past the range for
 *    displaced entries up to the first group with an empty slot. Hash ranges
 *    mean the same thing in a table of any size and in both parts during a
 *    migration, so the cursor survives resizing, and the ranges of
 *    successive calls tile the hash space: an entry present for the whole
 *    scan is returned exactly once.
 *    The ranges end on short binary fractions of the hash space (see
 *    table_scan), so a cursor has few significant bits.
 *  - Old group g maps onto the new groups of the same stretch of hash space,
 *    so migration writes the new array roughly in order.
 *
 * Resizing never stops the shard: when cur passes 7/8 load (tombstones
 * count), a new array (3/2 or 4/3 of the size, see grown(), or the same
 * size when tombstones are over 3/8 of the load) becomes cur and the old one
 * is drained MIGRATE_GROUPS groups at a time by each insert, remove and
 * table_step. Growing by less than double keeps the table fuller: 7/12 to
 * 7/8 rather than 7/16 to 7/8, fewer bytes a key on average. Why a
 * migration is always over before cur can fill again: growth leaves cur
 * with at most 14 * G live entries against a limit of at least 18.6 * G, a
 * same-size rehash starts below 5/8 of the limit, a shrink leaves it under
 * 1/8 full, and each of the G / MIGRATE_GROUPS calls the migration takes
 * adds at most one entry. The
 * drain-everything path in grow() is a safety net that this arithmetic keeps
 * cold; moved_groups lets tests check that. One group a call is the least
 * the arithmetic allows and keeps each insert's share small: moving an
 * entry rehashes its key, a cache miss in a big table, and a pipelined
 * batch of inserts pays for all of its shares in one loop iteration.
 *
 * A growth's new array is big and fresh, and inserts write it at random:
 * left to them, its pages would be first touched, each a page fault, in a
 * burst right after the growth (thousands per loop iteration in a table of
 * tens of millions of keys, where a fault of fresh memory costs
 * microseconds). So over the last PREFAULT_SHARE of cur's fill, the array
 * the growth will use is allocated early (next) and every insert faults in
 * its share of it, in proportion to the fill, so that next is wholly
 * resident when the growth takes it over. Only mapped arrays (MAP_MIN) are
 * prepared this way; smaller ones come from the allocator.
 *
 * Lookups (table_find) never migrate, so a slot pointer stays valid until
 * the next insert, remove or step. Hashes are not stored; migration and
 * scanning recompute them from the key (XXH3 is cheap next to the cache miss
 * of reading the entry, which they need anyway).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include "ringkv/log.h"
#include "ringkv/swiss.h"
#include "ringkv/table.h"
#include "ringkv/mem.h"

#define GROUP          SWISS_GROUP
#define GROUP_LIMIT    14          /* 7/8 of a group: the load limit */
#define MIGRATE_GROUPS 1           /* groups moved per insert/remove/step */
#define RELEASE_GROUPS 2048        /* drained groups of old handed back at once */
#define MAP_MIN        ((size_t)1 << 20)   /* arrays this big are mmap()ed */
#define PREFAULT_SHARE 8                   /* next is prepared over the last 1/8 of cur's fill */
#define PREFAULT_CHUNK ((size_t)64 << 10)  /* bytes of next faulted in at a time */
#define RETIRE_PIECE   ((size_t)256 << 10) /* bytes of a retired control array unmapped at a time */
#define RETIRE_EVERY   256                 /* ...once in this many inserts, removes and steps */
#define NOT_FOUND      SIZE_MAX

uint64_t table_hash(const char *key, size_t len) {
    return XXH3_64bits(key, len);
}

/* ---------------------------------------------------------------- parts */

/* The hash scaled to the number of groups (Lemire's fastrange: the top of
 * hash * ngroups). It grows with the hash for any ngroups, which keeps the
 * table sorted by hash whatever its size. */
static inline size_t part_home(const struct kv_table_part *p, uint64_t hash) {
    return (size_t)(((unsigned __int128)hash * p->ngroups) >> 64);
}

/* First hash value of group g (the least whose home is g); g < ngroups. */
static inline uint64_t part_group_start(const struct kv_table_part *p, size_t g) {
    return (uint64_t)((((unsigned __int128)g << 64) + p->ngroups - 1) / p->ngroups);
}

/* Group g of a probe that went past the end, wrapped to the start (g < 2 * ngroups). */
static inline size_t part_wrap(const struct kv_table_part *p, size_t g) {
    return g >= p->ngroups ? g - p->ngroups : g;
}

static inline size_t part_limit(const struct kv_table_part *p) {
    return p->ngroups * GROUP_LIMIT;
}

/*
 * Arrays of a megabyte or more are mapped directly: the kernel hands out
 * zero pages as they are first touched, while an allocator may recycle
 * memory it has to clear first (mimalloc's calloc of 8 MB took ~3 ms), and
 * a mapping can be returned page by page while a migration drains it.
 * Their bytes are not in the allocator's statistics: they count in
 * used_memory (mem.h) from here, whole, until unmapped.
 *
 * Lookups land anywhere in these arrays, so with 4 KB pages nearly every
 * one would also miss the TLB: they want huge pages, when the process may
 * have them at all (disable-thp no; by default THP is off, see main.c). But
 * a fresh mapping marked MADV_HUGEPAGE makes its first touches compact
 * memory in the fault (THP's defrag "madvise", the usual setting), which
 * stalls the shard for milliseconds. So the arrays are marked only once
 * half their load is in (part_place), when nearly every page has been
 * touched, and khugepaged turns them into huge pages in the background.
 */
static void *array_alloc(size_t bytes, bool zero) {
    if (bytes < MAP_MIN) return zero ? rk_calloc(1, bytes) : rk_malloc(bytes);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (RK_UNLIKELY(p == MAP_FAILED)) {
        rk_log(LL_WARNING, "Out Of Memory mapping %zu bytes for a table!", bytes);
        abort();
    }
    mem_count((long long)bytes);
    return p;
}

static void array_free(void *p, size_t bytes) {
    if (bytes < MAP_MIN) free(p);
    else if (p) {
        munmap(p, bytes);
        mem_count(-(long long)bytes);
    }
}

static size_t ctrl_bytes(size_t ngroups) { return ngroups * GROUP; }
static size_t slot_bytes(size_t ngroups) { return ngroups * GROUP * sizeof(struct kv_entry *); }

/* Make a mapped range resident without changing what it holds. */
static void array_prefault(void *p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
    size_t page = (size_t)sysconf(_SC_PAGESIZE);   /* kernels before 5.14: touch each page */
    for (size_t i = 0; i < bytes; i += page) {
        volatile char *c = (char *)p + i;
        *c = *c;
    }
}

static void part_alloc(struct kv_table_part *p, size_t ngroups) {
    p->ctrl = array_alloc(ctrl_bytes(ngroups), true);
    /* Slots are read only where ctrl says full, so they stay uninitialised
     * (and, for big tables, untouched pages until used). */
    p->slots = array_alloc(slot_bytes(ngroups), false);
    p->ngroups = ngroups;
    p->used = p->tombstones = p->max_probe = 0;
    p->huge_at = slot_bytes(ngroups) >= MAP_MIN ? part_limit(p) / 2 : SIZE_MAX;
}

/* The arrays are half full: ask for huge pages now (see array_alloc). */
static void part_want_huge(struct kv_table_part *p) {
    madvise(p->slots, slot_bytes(p->ngroups), MADV_HUGEPAGE);
    if (ctrl_bytes(p->ngroups) >= MAP_MIN) madvise(p->ctrl, ctrl_bytes(p->ngroups), MADV_HUGEPAGE);
    p->huge_at = SIZE_MAX;
}

/* Bytes of p's arrays that are mapped (array_alloc): the slots, then the
 * control bytes if they are big enough too (they are 1/8 of the slots). */
static size_t part_mapped_bytes(const struct kv_table_part *p) {
    size_t slots = slot_bytes(p->ngroups), ctrl = ctrl_bytes(p->ngroups);
    return (slots >= MAP_MIN ? slots : 0) + (ctrl >= MAP_MIN ? ctrl : 0);
}

/* Fault in bytes [from, to) of part_mapped_bytes(p)'s span. */
static void part_prefault(struct kv_table_part *p, size_t from, size_t to) {
    size_t slots = slot_bytes(p->ngroups);
    if (from < slots) array_prefault((char *)p->slots + from, (to < slots ? to : slots) - from);
    if (to > slots) {
        size_t at = from > slots ? from - slots : 0;
        array_prefault(p->ctrl + at, to - slots - at);
    }
}

static void part_free(struct kv_table_part *p) {
    array_free(p->ctrl, ctrl_bytes(p->ngroups));
    array_free(p->slots, slot_bytes(p->ngroups));
    memset(p, 0, sizeof *p);
}

static inline bool key_is(const struct kv_entry *e, const char *key, size_t len) {
    return entry_key_len(e) == len && memcmp(entry_key(e), key, len) == 0;
}

static inline uint64_t entry_hash(const struct kv_entry *e) {
    return table_hash(entry_key(e), entry_key_len(e));
}

/*
 * Probe from the key's home group, skipping the first `skip` groups (the
 * drained part of old during a migration, where nothing is left).
 */
static size_t part_find(const struct kv_table_part *p, const char *key, size_t len,
                        uint64_t hash, size_t skip) {
    if (!p->used) return NOT_FOUND;
    size_t g = part_wrap(p, part_home(p, hash) + skip);
    uint8_t h2 = swiss_h2(hash);
    for (size_t d = skip; d <= p->max_probe; d++, g = part_wrap(p, g + 1)) {
        __m128i ctrl = swiss_load(p->ctrl + g * GROUP);
        for (unsigned m = swiss_match(ctrl, h2); m; m &= m - 1) {
            size_t i = g * GROUP + swiss_first(m);
            if (key_is(p->slots[i], key, len)) return i;
        }
        if (swiss_match(ctrl, SWISS_EMPTY)) return NOT_FOUND;
    }
    return NOT_FOUND;
}

/* Put e in the first free slot of its probe sequence; the caller ensured room. */
static void part_place(struct kv_table_part *p, struct kv_entry *e, uint64_t hash) {
    size_t g = part_home(p, hash);
    for (size_t d = 0;; d++, g = part_wrap(p, g + 1)) {
        unsigned m = swiss_free(p->ctrl + g * GROUP);
        if (!m) continue;
        size_t i = g * GROUP + swiss_first(m);
        if (swiss_set_full(p->ctrl, i, hash)) p->tombstones--;
        p->slots[i] = e;
        p->used++;
        if (d > p->max_probe) p->max_probe = d;
        if (RK_UNLIKELY(p->used == p->huge_at)) part_want_huge(p);
        return;
    }
}

static void part_erase(struct kv_table_part *p, size_t i) {
    if (swiss_erase(p->ctrl, i)) p->tombstones++;
    p->used--;
}

/* ---------------------------------------------------------------- migration */

/*
 * Entries left in old sit at or after migrate_pos, so a key whose home is in
 * the drained region is looked for from migrate_pos on: the groups between
 * its home and its slot were full when it went in, so none is empty now and
 * starting late cannot stop the probe early.
 */
static size_t old_find(const struct kv_table *t, const char *key, size_t len, uint64_t hash) {
    if (!t->old.used) return NOT_FOUND;
    size_t home = part_home(&t->old, hash);
    size_t skip = home < t->migrate_pos ? t->migrate_pos - home : 0;
    return part_find(&t->old, key, len, hash, skip);
}

static void migrate_group(struct kv_table *t, size_t g) {
    struct kv_table_part *o = &t->old;
    uint8_t *ctrl = o->ctrl + g * GROUP;
    struct kv_entry **slots = o->slots + g * GROUP;
    unsigned full = swiss_full(ctrl);
    /* Start all the entry cache misses before hashing the first key. */
    for (unsigned m = full; m; m &= m - 1)
        __builtin_prefetch(slots[swiss_first(m)]);
    for (unsigned m = full; m; m &= m - 1) {
        unsigned i = swiss_first(m);
        part_place(&t->cur, slots[i], entry_hash(slots[i]));
        swiss_set_deleted(ctrl, i);
    }
    size_t n = (size_t)__builtin_popcount(full);
    o->used -= n;
    o->tombstones += n;
}

/* Unmap the first n bytes left of the retired control bytes (from the
 * front, so that the rest stays page-aligned). */
static void retired_unmap(struct kv_table *t, size_t n) {
    munmap(t->retired, n);
    mem_count(-(long long)n);
    t->retired_bytes -= n;
    t->retired = t->retired_bytes ? t->retired + n : NULL;
}

static void retired_unmap_piece(struct kv_table *t) {
    retired_unmap(t, t->retired_bytes < RETIRE_PIECE ? t->retired_bytes : RETIRE_PIECE);
}

/*
 * A drained old is freed whole, but for its control bytes when they are
 * mapped: unmapping tens of megabytes of them at once would stall the
 * shard for milliseconds, and unlike the slots (release_drained) they
 * cannot go during the migration, when drained groups must still read as
 * deleted. Nothing reads them once old is empty, so retire_step unmaps them
 * a piece at a time from then on.
 */
static void migrate_finish_if_drained(struct kv_table *t) {
    struct kv_table_part *o = &t->old;
    if (!o->ngroups || o->used) return;
    if (ctrl_bytes(o->ngroups) >= MAP_MIN) {
        if (t->retired) retired_unmap(t, t->retired_bytes);   /* the one before: never still there in practice */
        t->retired = o->ctrl;
        t->retired_bytes = ctrl_bytes(o->ngroups);
        t->retire_calls = 0;
        o->ctrl = NULL;   /* part_free leaves it alone */
    }
    part_free(o);
    t->migrate_pos = 0;
}

/* An insert or remove: a piece of the retired control bytes every RETIRE_EVERY. */
static void retire_step(struct kv_table *t) {
    if (++t->retire_calls < RETIRE_EVERY) return;
    t->retire_calls = 0;
    retired_unmap_piece(t);
}

/*
 * Give the slot pages of drained groups back to the kernel as the migration
 * goes, so that unmapping a big old array at the end has little left to do
 * (tens of megabytes would otherwise be a stall of milliseconds). Only slots:
 * drained control bytes must keep reading as deleted, and nothing reads a
 * slot whose control byte is not full.
 */
static void release_drained(struct kv_table *t) {
    size_t pos = t->migrate_pos;
    if (pos % RELEASE_GROUPS || pos == t->old.ngroups) return;   /* free() takes the last */
    if (slot_bytes(t->old.ngroups) < MAP_MIN) return;             /* not ours to madvise */
    uintptr_t base = (uintptr_t)t->old.slots, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = base + (pos - RELEASE_GROUPS) * GROUP * sizeof *t->old.slots;
    uintptr_t to = base + pos * GROUP * sizeof *t->old.slots;
    from = (from + page - 1) & ~(page - 1);
    to &= ~(page - 1);
    if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
}

/* Move up to n groups of old into cur. Groups before migrate_pos are empty
 * of entries, so while old has any, migrate_pos is inside it. */
static void migrate(struct kv_table *t, size_t n) {
    while (n-- && t->old.used) {
        migrate_group(t, t->migrate_pos++);
        t->moved_groups++;
        release_drained(t);
    }
    migrate_finish_if_drained(t);
}

/* cur moves into an array of ngroups: next if it was prepared at that size. */
static void resize_start(struct kv_table *t, size_t ngroups) {
    t->old = t->cur;
    if (t->next.ngroups == ngroups) {
        t->cur = t->next;
        memset(&t->next, 0, sizeof t->next);
    } else {
        part_free(&t->next);
        part_alloc(&t->cur, ngroups);
    }
    t->migrate_pos = 0;
    migrate_finish_if_drained(t);
}

/* The next size up: 1, 2, 3, 4, 6, 8, 12, 16, ... groups, alternately 3/2
 * and 4/3 of the last, so that a table sits between 7/12 and 7/8 full
 * after growing rather than between 7/16 and 7/8 (doubling). */
static size_t grown(size_t n) {
    if (n < 2) return 2;
    return (n & (n - 1)) ? n / 3 * 4 : n + n / 2;
}

/* The size cur moves to at its load limit: the next one up, or the same
 * when tombstones are over 3/8 of the load (delete-heavy churn must not grow
 * the table, and the rehash still leaves room for 3/8 of the limit in
 * inserts). */
static size_t grow_target(const struct kv_table_part *c) {
    return c->used >= part_limit(c) / 8 * 5 ? grown(c->ngroups) : c->ngroups;
}

/* cur is at its load limit. A prepared next is taken whatever the fill
 * (deletes since it was sized at most make this growth a step early). */
static void grow(struct kv_table *t) {
    if (t->old.ngroups) migrate(t, SIZE_MAX);
    resize_start(t, t->next.ngroups ? t->next.ngroups : grow_target(&t->cur));
}

/* cur's fill (load) is in the last PREFAULT_SHARE before its limit: fault
 * in next up to the same fraction of its bytes, allocating it first. */
static void prepare_next(struct kv_table *t, size_t load) {
    struct kv_table_part *n = &t->next;
    size_t limit = part_limit(&t->cur), start = limit - limit / PREFAULT_SHARE;
    if (t->old.ngroups) return;   /* never so late in practice (see the top) */
    if (!n->ngroups) {
        size_t groups = grow_target(&t->cur);
        if (slot_bytes(groups) < MAP_MIN) return;
        part_alloc(n, groups);
        t->next_faulted = 0;
    }
    size_t total = part_mapped_bytes(n);
    size_t due = (size_t)((unsigned __int128)total * (load - start + 1) / (limit - start));
    if (due > total) due = total;
    while (t->next_faulted < due) {
        size_t to = t->next_faulted + PREFAULT_CHUNK < total ? t->next_faulted + PREFAULT_CHUNK : total;
        part_prefault(n, t->next_faulted, to);
        t->next_faulted = to;
    }
}

/* Halve a table that is less than 1/16 full; drop the arrays when empty. */
static void maybe_shrink(struct kv_table *t) {
    struct kv_table_part *c = &t->cur;
    if (t->old.ngroups || !c->ngroups) return;
    if (!c->used) {
        part_free(c);
        part_free(&t->next);
    }
    else if (c->ngroups > 1 && c->used < c->ngroups) resize_start(t, c->ngroups / 2);
}

/* ---------------------------------------------------------------- API */

void table_init(struct kv_table *t) {
    memset(t, 0, sizeof *t);
}

void table_reserve(struct kv_table *t, size_t n) {
    if (t->cur.used || t->old.ngroups) return;
    size_t g = t->cur.ngroups ? t->cur.ngroups : 1;
    while (g * GROUP / 4 * 3 < n) g = grown(g);
    part_free(&t->next);
    if (g > t->cur.ngroups) {
        part_free(&t->cur);
        part_alloc(&t->cur, g);
    }
}

static void part_destroy(struct kv_table_part *p, void (*free_entry)(struct kv_entry *)) {
    if (free_entry && p->used) {
        for (size_t g = 0; g < p->ngroups; g++)
            for (unsigned m = swiss_full(p->ctrl + g * GROUP); m; m &= m - 1)
                free_entry(p->slots[g * GROUP + swiss_first(m)]);
    }
    part_free(p);
}

void table_destroy(struct kv_table *t, void (*free_entry)(struct kv_entry *)) {
    part_destroy(&t->cur, free_entry);
    part_destroy(&t->old, free_entry);
    part_free(&t->next);
    if (t->retired) retired_unmap(t, t->retired_bytes);
    uint64_t moved = t->moved_groups;
    table_init(t);
    t->moved_groups = moved;
}

bool table_drain(struct kv_table *t, size_t *cursor, size_t groups, void (*free_entry)(struct kv_entry *)) {
    size_t total = t->cur.ngroups + t->old.ngroups;
    for (size_t end = *cursor + groups; *cursor < total && *cursor < end; (*cursor)++) {
        bool in_cur = *cursor < t->cur.ngroups;
        const struct kv_table_part *p = in_cur ? &t->cur : &t->old;
        size_t g = in_cur ? *cursor : *cursor - t->cur.ngroups;
        for (unsigned m = swiss_full(p->ctrl + g * GROUP); m; m &= m - 1)
            free_entry(p->slots[g * GROUP + swiss_first(m)]);
    }
    if (*cursor < total) return false;
    table_destroy(t, NULL);
    return true;
}

struct kv_entry **table_find(struct kv_table *t, const char *key, size_t len, uint64_t hash) {
    size_t i = part_find(&t->cur, key, len, hash, 0);
    if (i != NOT_FOUND) return &t->cur.slots[i];
    i = old_find(t, key, len, hash);
    return i != NOT_FOUND ? &t->old.slots[i] : NULL;
}

void table_insert(struct kv_table *t, struct kv_entry *e, uint64_t hash) {
    if (t->old.ngroups) migrate(t, MIGRATE_GROUPS);
    else if (RK_UNLIKELY(t->retired != NULL)) retire_step(t);
    struct kv_table_part *c = &t->cur;
    if (!c->ngroups) part_alloc(c, 1);
    else {
        size_t load = c->used + c->tombstones, limit = part_limit(c);
        if (load >= limit) grow(t);
        else if (RK_UNLIKELY(load >= limit - limit / PREFAULT_SHARE)) prepare_next(t, load);
    }
    part_place(&t->cur, e, hash);
}

struct kv_entry *table_remove(struct kv_table *t, const char *key, size_t len, uint64_t hash) {
    if (t->old.ngroups) migrate(t, MIGRATE_GROUPS);
    else if (RK_UNLIKELY(t->retired != NULL)) retire_step(t);
    struct kv_table_part *p = &t->cur;
    size_t i = part_find(p, key, len, hash, 0);
    if (i == NOT_FOUND) {
        p = &t->old;
        i = old_find(t, key, len, hash);
        if (i == NOT_FOUND) return NULL;
    }
    struct kv_entry *e = p->slots[i];
    part_erase(p, i);
    migrate_finish_if_drained(t);
    maybe_shrink(t);
    return e;
}

bool table_step(struct kv_table *t) {
    if (t->old.ngroups) migrate(t, MIGRATE_GROUPS);
    else {
        if (t->retired) retired_unmap_piece(t);   /* the cron's: a piece a call */
        maybe_shrink(t);
    }
    return t->old.ngroups != 0;
}

/* ---------------------------------------------------------------- scan */

/*
 * Visit the entries of p whose hash is in [lo, hi) (hi == 0: to the end of
 * the hash space). Their homes are groups g_lo..g_hi and they sit at most
 * max_probe groups further, but usually much less: a group that has an empty
 * slot has never been full, so no probe ever ran past it. That gives both an
 * early stop (the first group from g_hi on with an empty slot is the last
 * that can hold an entry of the range) and a way to skip hashing: once the
 * walk has passed a group with an empty slot (or the one before g_lo has
 * one), the entries of the following home groups cannot come from before
 * the range, so when the range starts and ends on group boundaries they are
 * in it without looking at their hash.
 */
static void part_scan(const struct kv_table_part *p, uint64_t lo, uint64_t hi,
                      table_visit_fn fn, void *ud) {
    if (!p->used) return;
    size_t last = p->ngroups - 1;
    size_t g_lo = part_home(p, lo);
    size_t g_hi = hi ? part_home(p, hi - 1) : last;
    size_t homes = g_hi - g_lo + 1;
    size_t span = homes + p->max_probe;
    if (span > p->ngroups) span = p->ngroups;
    bool aligned = part_group_start(p, g_lo) == lo &&
                   (hi ? g_hi < last && part_group_start(p, g_hi + 1) == hi : g_hi == last);
    bool clean = homes == p->ngroups || swiss_empty(p->ctrl + (g_lo ? g_lo - 1 : last) * GROUP);

    for (size_t k = 0; k < span; k++) {
        size_t g = part_wrap(p, g_lo + k);
        const uint8_t *ctrl = p->ctrl + g * GROUP;
        bool inside = aligned && clean && k < homes;
        for (unsigned m = swiss_full(ctrl); m; m &= m - 1) {
            struct kv_entry *e = p->slots[g * GROUP + swiss_first(m)];
            if (!inside) {
                uint64_t h = entry_hash(e);
                if (h < lo || (hi && h >= hi)) continue;
            }
            fn(ud, e);
        }
        if (swiss_empty(ctrl)) {
            if (k + 1 >= homes) break;
            clean = true;
        }
    }
}

/*
 * The range of a call is about `count` slots' worth of groups of the larger
 * part, and it ends on a boundary that is a short binary fraction of the
 * hash space, so that the position has few significant bits and the cursor
 * a client sees stays small (scan_cursor.h). A part of m * 2^k groups (m is
 * 1 or 3, see grown()) has such a boundary every m groups: group m * j
 * starts at exactly j << (64 - k). So the range is a whole number of those
 * m-group units, at least one: `count` slots' worth when m is 1, rounded to
 * whole units of 3 groups when m is 3. Its ends are group boundaries of
 * the larger part, which keeps part_scan's fast path there.
 */
uint64_t table_scan(struct kv_table *t, uint64_t cursor, size_t count, table_visit_fn fn,
                    void *ud) {
    if (!table_size(t)) return 0;
    const struct kv_table_part *big = t->cur.ngroups >= t->old.ngroups ? &t->cur : &t->old;
    unsigned k = (unsigned)__builtin_ctzll(big->ngroups);
    uint64_t unit = big->ngroups >> k;   /* groups between short boundaries */
    uint64_t groups = count / GROUP + (count % GROUP != 0);
    uint64_t units = (groups + unit / 2) / unit;
    if (!units) units = 1;
    uint64_t next = 0;   /* one unit (k == 0) is the whole hash space */
    if (k) {
        uint64_t end = (cursor >> (64 - k)) + units;
        next = end >= (uint64_t)1 << k ? 0 : end << (64 - k);
    }
    part_scan(&t->cur, cursor, next, fn, ud);
    part_scan(&t->old, cursor, next, fn, ud);
    return next;
}

/* ---------------------------------------------------------------- misc */

/*
 * The first full slot at or after a random slot. The part is chosen in
 * proportion to its entries, and in old only the undrained groups (from
 * migrate_pos on) are candidates, since the rest hold nothing.
 */
/* The part a random pick looks in, in proportion to the entries each holds,
 * and its first group that may hold any (old's drained groups are empty). */
static const struct kv_table_part *random_part(const struct kv_table *t, uint64_t r, size_t *first) {
    uint64_t r2 = (r ^ (r >> 29)) * 0x9E3779B97F4A7C15ULL;
    *first = 0;
    if (t->old.used && (r2 >> 11) % table_size(t) < t->old.used) {
        *first = t->migrate_pos;
        return &t->old;
    }
    return &t->cur;
}

struct kv_entry *table_random(struct kv_table *t, uint64_t r) {
    if (!table_size(t)) return NULL;
    size_t first;
    const struct kv_table_part *p = random_part(t, r, &first);
    size_t start = first * GROUP + (size_t)(r % ((p->ngroups - first) * GROUP));
    size_t g = start / GROUP;
    unsigned m = swiss_full(p->ctrl + g * GROUP) & (SWISS_ALL << (start % GROUP));
    while (!m) {
        g = part_wrap(p, g + 1);
        m = swiss_full(p->ctrl + g * GROUP);
    }
    return p->slots[g * GROUP + swiss_first(m)];
}

size_t table_sample(const struct kv_table *t, uint64_t r, struct kv_entry **out, size_t n, size_t max_slots) {
    size_t got = 0, first;
    if (!table_size(t) || !n) return 0;
    const struct kv_table_part *p = random_part(t, r, &first);
    size_t span = p->ngroups - first, g = first + (size_t)(r % span);
    for (size_t visited = 0; visited < span && visited * GROUP < max_slots && got < n; visited++) {
        for (unsigned m = swiss_full(p->ctrl + g * GROUP); m && got < n; m &= m - 1)
            out[got++] = p->slots[g * GROUP + swiss_first(m)];
        g = g + 1 == p->ngroups ? first : g + 1;
    }
    return got;
}

size_t table_memory(const struct kv_table *t) {
    size_t per_group = GROUP * (1 + sizeof(struct kv_entry *));
    return (t->cur.ngroups + t->old.ngroups + t->next.ngroups) * per_group + t->retired_bytes;
}

/*
 * Prefetching for pipelined requests. A lookup in a big table costs a few
 * cache misses in a row (control bytes, slot, entry). When the I/O layer has
 * a batch of parsed commands it calls table_prefetch() for each key, then
 * table_prefetch_entry(), then runs the commands: the misses of the whole
 * batch overlap instead of following one another.
 */
void table_prefetch(const struct kv_table *t, uint64_t hash) {
    const struct kv_table_part *p = &t->cur;
    if (p->ngroups) __builtin_prefetch(p->ctrl + part_home(p, hash) * GROUP);
}

/* The first slot of the home group whose control byte matches, if any. */
static inline const struct kv_entry *const *prefetch_match(const struct kv_table_part *p, uint64_t hash) {
    if (!p->used) return NULL;
    size_t g = part_home(p, hash);
    unsigned m = swiss_match(swiss_load(p->ctrl + g * GROUP), swiss_h2(hash));
    return m ? (const struct kv_entry *const *)&p->slots[g * GROUP + swiss_first(m)] : NULL;
}

void table_prefetch_slot(const struct kv_table *t, uint64_t hash) {
    const struct kv_entry *const *slot = prefetch_match(&t->cur, hash);
    if (slot) __builtin_prefetch(slot);
}

void table_prefetch_entry(const struct kv_table *t, uint64_t hash) {
    const struct kv_entry *const *slot = prefetch_match(&t->cur, hash);
    if (!slot) return;
    /* an entry may straddle two cache lines: its key and value often do */
    const char *e = (const char *)*slot;
    __builtin_prefetch(e);
    __builtin_prefetch(e + 40);
}
