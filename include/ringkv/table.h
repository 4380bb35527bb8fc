/*
 * Per-shard open-addressing hash table of kv_entry pointers.
 *
 * Swiss-table layout: slots are grouped 16 at a time with one control byte
 * per slot (empty, deleted, or the low 7 bits of the key's hash), and a
 * lookup compares a whole group's control bytes with one SSE2 instruction.
 * A key's home group comes from the top bits of its hash and probing moves
 * to the next group, so the table is ordered by hash: that is what lets a
 * scan cursor be a position in hash space that survives resizing.
 * Keys are hashed with XXH3. The table never stores hashes; they are
 * recomputed from the entry's key when needed.
 *
 * Growth happens in pieces: when the table passes its load limit a table of
 * 3/2 or 4/3 the size is allocated and every later insert/remove (and
 * table_step()) moves a few groups across, so no single call pays for a full
 * rehash. Lookups consult both tables while a migration is in progress.
 * Over the last stretch of fill before a growth, inserts also fault in the
 * array it will move into, a little each, so that the growth's random
 * first writes do not fault in thousands of fresh pages at once.
 */
#ifndef RINGKV_TABLE_H
#define RINGKV_TABLE_H

#include "ringkv/common.h"
#include "ringkv/entry.h"

struct kv_table_part {
    uint8_t *ctrl;             /* ngroups * 16 control bytes */
    struct kv_entry **slots;   /* ngroups * 16 slots */
    size_t ngroups;            /* 2^k or 3 * 2^k, or 0 when unallocated */
    size_t used;               /* live entries */
    size_t tombstones;         /* deleted markers */
    size_t max_probe;          /* largest distance, in groups, of an entry from its home */
    size_t huge_at;            /* used count at which the arrays ask for huge pages; SIZE_MAX: asked, or small */
};

struct kv_table {
    struct kv_table_part cur;   /* where inserts go */
    struct kv_table_part old;   /* being drained into cur; ngroups == 0 when idle */
    struct kv_table_part next;  /* what cur grows into, faulted in ahead of it; ngroups == 0 when none */
    size_t next_faulted;        /* bytes of next's mapped arrays faulted in so far */
    uint8_t *retired;           /* a drained old's mapped control bytes, unmapped a piece at a time */
    size_t retired_bytes;       /* ...of which this much is left */
    unsigned retire_calls;      /* calls since the last piece */
    size_t migrate_pos;         /* next group of old to move */
    uint64_t moved_groups;      /* groups of old moved so far, over the table's life */
};

uint64_t table_hash(const char *key, size_t len);

void table_init(struct kv_table *t);
/* Size an empty table for n entries at once (a load's RESIZEDB): keys that
 * arrive in hash order, as a saved table's do, then spread over the whole
 * array instead of crowding the start of a small one that keeps growing. */
void table_reserve(struct kv_table *t, size_t n);
/* Free the table's arrays; calls free_entry on every entry if not NULL. */
void table_destroy(struct kv_table *t, void (*free_entry)(struct kv_entry *));

/* For a table nobody looks up any more (lazy freeing): free the entries of
 * up to `groups` groups from *cursor on (0 at first), moving it; once past
 * the last group the arrays are freed too and true returned. */
bool table_drain(struct kv_table *t, size_t *cursor, size_t groups, void (*free_entry)(struct kv_entry *));

/* Pointer to the slot holding the key's entry, or NULL. The pointer stays
 * valid until the next insert, remove or step on this table, so a caller may
 * replace the entry in place (*slot = entry_set_expire(*slot, ...)). */
struct kv_entry **table_find(struct kv_table *t, const char *key, size_t len, uint64_t hash);

/* Insert an entry whose key is known not to be present. */
void table_insert(struct kv_table *t, struct kv_entry *e, uint64_t hash);

/* Unlink and return the entry for the key (not freed), or NULL. */
struct kv_entry *table_remove(struct kv_table *t, const char *key, size_t len, uint64_t hash);

static inline size_t table_size(const struct kv_table *t) { return t->cur.used + t->old.used; }

/* Do a bounded piece of pending migration; returns true if any remains. */
bool table_step(struct kv_table *t);

/*
 * Cursor iteration with SCAN's guarantee: an entry present for the whole
 * iteration is visited at least once, even across growth. Start with cursor 0;
 * a returned cursor of 0 means done. Each call visits roughly `count` slots
 * (whole units of 3 groups when the table has 3 * 2^k groups). The cursor
 * is a position in hash space; a returned one has at most log2(groups) top
 * bits set, which scan_cursor.h turns into a small number for clients.
 * The callback must not modify the table.
 */
typedef void (*table_visit_fn)(void *ud, struct kv_entry *e);
uint64_t table_scan(struct kv_table *t, uint64_t cursor, size_t count, table_visit_fn fn, void *ud);

/* A uniformly-chosen-ish live entry using the random number r, or NULL if empty. */
struct kv_entry *table_random(struct kv_table *t, uint64_t r);
/* Up to n live entries found walking the slots from a random position (r),
 * visiting at most max_slots slots: what eviction ranks (Redis's
 * dictGetSomeKeys). Returns how many were written to out. */
size_t table_sample(const struct kv_table *t, uint64_t r, struct kv_entry **out, size_t n, size_t max_slots);

/* Start loading what a lookup of hash will touch, in three steps, each
 * issued once the previous one's line has arrived: the group's control
 * bytes, the matching slot, the entry it points to. Hints only. */
void table_prefetch(const struct kv_table *t, uint64_t hash);
void table_prefetch_slot(const struct kv_table *t, uint64_t hash);
void table_prefetch_entry(const struct kv_table *t, uint64_t hash);

/*
 * A window of up to KEY_PREFETCH_MAX keys about to be looked up in order.
 * Add them all (that only hashes), call key_prefetch_begin(), then
 * key_prefetch_step(kp, i) before running command i. Loads run as a
 * pipeline: while command i runs, the control bytes of key i + 12, the
 * slot of key i + 8 and the entry of key i + 4 are on their way, each
 * step using the line the previous one brought in. Every miss gets the
 * time of a few commands to complete, and only about a dozen lines are in
 * flight at once (many more and the CPU drops prefetches).
 */
#define KEY_PREFETCH_MAX          64
#define KEY_PREFETCH_GROUP_AHEAD  12
#define KEY_PREFETCH_SLOT_AHEAD   8
#define KEY_PREFETCH_ENTRY_AHEAD  4

struct key_prefetch {
    const struct kv_table *table;
    size_t n;
    bool has[KEY_PREFETCH_MAX];
    uint64_t hash[KEY_PREFETCH_MAX];
};

static inline void key_prefetch_start(struct key_prefetch *kp, const struct kv_table *t) {
    kp->table = t;
    kp->n = 0;
}

static inline void key_prefetch_add(struct key_prefetch *kp, const struct slice *key) {
    size_t i = kp->n++;
    kp->has[i] = key != NULL;
    if (key) kp->hash[i] = table_hash(key->ptr, key->len);
}

static inline void key_prefetch__group(const struct key_prefetch *kp, size_t i) {
    if (i < kp->n && kp->has[i]) table_prefetch(kp->table, kp->hash[i]);
}

static inline void key_prefetch__slot(const struct key_prefetch *kp, size_t i) {
    if (i < kp->n && kp->has[i]) table_prefetch_slot(kp->table, kp->hash[i]);
}

static inline void key_prefetch__entry(const struct key_prefetch *kp, size_t i) {
    if (i < kp->n && kp->has[i]) table_prefetch_entry(kp->table, kp->hash[i]);
}

static inline void key_prefetch_begin(const struct key_prefetch *kp) {
    for (size_t i = 0; i < KEY_PREFETCH_GROUP_AHEAD; i++) key_prefetch__group(kp, i);
    for (size_t i = 0; i < KEY_PREFETCH_SLOT_AHEAD; i++) key_prefetch__slot(kp, i);
    for (size_t i = 0; i < KEY_PREFETCH_ENTRY_AHEAD; i++) key_prefetch__entry(kp, i);
}

static inline void key_prefetch_step(const struct key_prefetch *kp, size_t i) {
    key_prefetch__group(kp, i + KEY_PREFETCH_GROUP_AHEAD);
    key_prefetch__slot(kp, i + KEY_PREFETCH_SLOT_AHEAD);
    key_prefetch__entry(kp, i + KEY_PREFETCH_ENTRY_AHEAD);
}

/* Bytes held by the table's own arrays (not the entries). */
size_t table_memory(const struct kv_table *t);

#endif
