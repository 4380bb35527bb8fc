/*
 * idtree: an ordered map from stream IDs (two 64-bit integers, compared as
 * the pair (ms, seq)) to non-NULL pointers, as a B+tree.
 *
 * Streams keep three of them: the nodes of entries (keyed by each node's
 * first ID), and per consumer group the pending entries list and each
 * consumer's share of it. All three are mostly appended to at the high end
 * and removed from at the low end, but XDEL, XACK and XCLAIM touch any
 * key, so every operation is O(log n): finding, inserting, removing, and
 * seeking an iterator to the first key >= or the last key <= a given ID.
 * Keys live packed in the nodes (16 bytes each, plus the 8-byte value), so
 * a tree of n keys costs close to 24 n bytes once full. Small trees stay
 * small: while the tree is a single node, that node is sized for its count
 * (a tree of one key is 64 bytes with its header, of five 160), and only
 * past 63 keys do nodes take their full 1520 bytes.
 *
 * An iterator is invalidated by any change to its tree; seek it again
 * after a change (idtree_seek with the last key seen).
 */
#ifndef RINGKV_IDTREE_H
#define RINGKV_IDTREE_H

#include "ringkv/common.h"

struct stream_id {
    uint64_t ms, seq;
};

static inline int stream_id_cmp(struct stream_id a, struct stream_id b) {
    if (a.ms != b.ms) return a.ms < b.ms ? -1 : 1;
    if (a.seq != b.seq) return a.seq < b.seq ? -1 : 1;
    return 0;
}

#define STREAM_ID_MIN ((struct stream_id){ 0, 0 })
#define STREAM_ID_MAX ((struct stream_id){ UINT64_MAX, UINT64_MAX })

struct idtree;

struct idtree *idtree_new(void);
/* Frees the tree; free_val (may be NULL) is called on every value first. */
void idtree_free(struct idtree *t, void (*free_val)(void *val));
size_t idtree_count(const struct idtree *t);
/* Bytes the tree allocates (its header and nodes, as requested from the
 * allocator), for MEMORY USAGE; 32 when empty. */
size_t idtree_memory(const struct idtree *t);

/* The value at id, or NULL. */
void *idtree_find(const struct idtree *t, struct stream_id id);
/* Insert id -> val (val not NULL). false (and nothing changes) when id is
 * already there. */
bool idtree_insert(struct idtree *t, struct stream_id id, void *val);
/* Set the value of an id already there; false when it is not. */
bool idtree_replace(struct idtree *t, struct stream_id id, void *val);
/* Remove id; its value goes to *old (old may be NULL). false if absent. */
bool idtree_remove(struct idtree *t, struct stream_id id, void **old);

/* The first and last keys; false when the tree is empty. */
bool idtree_first(const struct idtree *t, struct stream_id *id, void **val);
bool idtree_last(const struct idtree *t, struct stream_id *id, void **val);

/* Iteration in either direction. Seek places the iterator so that the
 * following idtree_next returns the first key >= id, and the following
 * idtree_prev the last key <= id. The state is a path from the root to a
 * position in a leaf, sized for a tree of any height the 64-bit count
 * allows; seeking allocates nothing. */
#define IDTREE_MAX_DEPTH 24
struct idtree_iter {
    void *path[IDTREE_MAX_DEPTH];     /* nodes from the root down to a leaf */
    int pos[IDTREE_MAX_DEPTH];        /* child taken in each; in the leaf, a key */
    int depth;                        /* nodes on the path; 0: empty tree */
    bool started;                     /* the leaf position is the last key returned */
    bool exact;                       /* before that: the key there is the id sought */
};
void idtree_seek(struct idtree_iter *it, const struct idtree *t, struct stream_id id);
/* The next key in ascending (next) or descending (prev) order; false at
 * the end. Mixing directions after a seek is allowed: each call moves one
 * key from the last one returned, and after running off one end the other
 * direction starts again from that end's key. */
bool idtree_next(struct idtree_iter *it, struct stream_id *id, void **val);
bool idtree_prev(struct idtree_iter *it, struct stream_id *id, void **val);

/* Walk the whole tree checking its invariants (for tests). */
bool idtree_check(const struct idtree *t);

#endif
