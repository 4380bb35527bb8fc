/*
 * hashmap: the full encoding of big hashes (field -> value) and big sets
 * (members only), OBJECT ENCODING "hashtable".
 *
 * An open-addressing swiss table of pointers, ordered by hash like
 * ringkv/table.h, where each element is ONE allocation holding the key's
 * length, the value's length (maps with values only), the key bytes and
 * the value bytes. Keys are binary-safe byte strings hashed with XXH3.
 *
 * Element pointers returned by find/random/scan/iteration stay valid until
 * the next set, delete or remove on the map. No function may be called to
 * change the map from inside a scan callback or between iterator steps.
 */
#ifndef RINGKV_HASHMAP_H
#define RINGKV_HASHMAP_H

#include "ringkv/common.h"

struct hashmap;
struct hm_elem;   /* opaque: read it with hm_elem_key / hm_elem_val */

struct hashmap *hashmap_new(bool has_values);
void hashmap_free(struct hashmap *m);

size_t hashmap_count(const struct hashmap *m);
bool hashmap_has_values(const struct hashmap *m);

struct slice hm_elem_key(const struct hm_elem *e);
/* The value; an empty slice for a map without values. */
struct slice hm_elem_val(const struct hm_elem *e);

/* The element with this key, or NULL. */
const struct hm_elem *hashmap_find(const struct hashmap *m, struct slice key);

/* Look the key up; on success *val (if not NULL) gets the value. */
bool hashmap_get(const struct hashmap *m, struct slice key, struct slice *val);

/* Insert the key, or replace its value if present; true if inserted. The
 * value is ignored by maps without values. key and val may point into the
 * map's own elements. */
bool hashmap_set(struct hashmap *m, struct slice key, struct slice val);

/* Delete the key; false if it was not present. */
bool hashmap_delete(struct hashmap *m, struct slice key);

/* Unlink the key's element and hand it to the caller (NULL if absent), who
 * reads it and frees it with hm_elem_free: SPOP and HDEL-like commands can
 * reply from the element without copying it first. */
struct hm_elem *hashmap_remove(struct hashmap *m, struct slice key);
void hm_elem_free(struct hm_elem *e);

/* A uniformly chosen element using the 64-bit random number r (which
 * should have all its bits random), or NULL if the map is empty. */
const struct hm_elem *hashmap_random(const struct hashmap *m, uint64_t r);

/*
 * Cursor iteration with HSCAN/SSCAN's guarantee: an element present for the
 * whole scan is returned at least once (in fact exactly once, even when the
 * map grows or shrinks between calls). Start with cursor 0; a returned
 * cursor of 0 means the scan is over. Each call looks at about `count`
 * slots. The cursor is a position in hash space; a returned one has at
 * most log2(groups) top bits set (scan_cursor.h makes it a small number).
 */
typedef void (*hashmap_visit_fn)(void *ud, const struct hm_elem *e);
uint64_t hashmap_scan(const struct hashmap *m, uint64_t cursor, size_t count,
                      hashmap_visit_fn fn, void *ud);

/* Plain iteration over every element (HGETALL, SMEMBERS):
 *   struct hashmap_iter it = hashmap_iter_start(m);
 *   for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) ...   */
struct hashmap_iter {
    const struct hashmap *m;
    size_t pos;
};

static inline struct hashmap_iter hashmap_iter_start(const struct hashmap *m) {
    return (struct hashmap_iter){ m, 0 };
}
const struct hm_elem *hashmap_iter_next(struct hashmap_iter *it);

/* Bytes allocated: the map, its arrays and its elements (as requested from
 * the allocator; allocator rounding is not included). */
size_t hashmap_memory(const struct hashmap *m);
/* Bytes of one element (counted in hashmap_memory). */
size_t hm_elem_memory(const struct hm_elem *e);

#endif
