/*
 * quicklist: a Redis list, as a doubly linked list of listpack nodes.
 *
 * Nodes are filled up to the limit set by `fill`, which has the meaning of
 * Redis's list-max-listpack-size: a positive N allows at most N elements per
 * node (and at most 8 KB), -1..-5 allow at most 4/8/16/32/64 KB per node
 * (Redis's default is -2). An element too big for any node (over 8 KB, or
 * over the byte limit) gets a node of its own. Empty nodes are freed at
 * once, so every node holds at least one element.
 *
 * A list object (list_obj.h) is a bare listpack until it outgrows a node,
 * and a quicklist until it shrinks to half the limits again, as Redis 7.2:
 * ql_listpack_fits() and ql_fits_listpack() answer the question Redis asks
 * at those two moments, ql_from_listpack() and ql_to_listpack() convert.
 *
 * Compression (Redis's list-compress-depth): with a depth d > 0, every node
 * but the d nodes at each end is kept LZF-compressed (lzf.h), if it is at
 * least 48 bytes and compressing saves more than 8 bytes, as in Redis. The d nodes at each end, where pushes and pops happen, stay raw. A
 * change decompresses the node it touches and compresses it again after;
 * a read decompresses into the list's read buffer and leaves the node
 * compressed.
 *
 * Values read from the list (struct lp_value) point into a node or into the
 * read buffer. They stay valid until the list changes or another compressed
 * node of it is read (the next ql_iter_next may read one); callers use each
 * value before the next read. Strings that parse as integers come back as
 * integers (listpack.h); lp_value_str() prints them back, byte for byte.
 */
#ifndef RINGKV_QUICKLIST_H
#define RINGKV_QUICKLIST_H

#include "ringkv/common.h"
#include "ringkv/listpack.h"

#define QL_FILL_DEFAULT (-2)

struct ql_lzf;                 /* a compressed listpack (quicklist.c) */

struct ql_node {
    struct ql_node *prev, *next;
    struct listpack *lp;       /* never empty; NULL while the node is compressed */
    struct ql_lzf *lzf;        /* the compressed listpack, or NULL */
};

struct quicklist {
    struct ql_node *head, *tail;
    size_t count;              /* elements */
    uint32_t nodes;
    int32_t fill;
    uint32_t compress;         /* list-compress-depth: raw nodes at each end, 0 = none */
    /* read buffer: the listpack of one compressed node, decompressed */
    const struct ql_node *scratch_of;
    struct listpack *scratch;
};

struct quicklist *ql_new(int fill);
void ql_free(struct quicklist *ql);
/* Applies to nodes filled from now on. */
static inline void ql_set_fill(struct quicklist *ql, int fill) { ql->fill = fill; }
/* Compress every node but the depth nodes at each end (0: none), now and
 * from now on. */
void ql_set_compress(struct quicklist *ql, int depth);
static inline bool ql_node_compressed(const struct ql_node *n) { return n->lp == NULL; }
/* The node's data allocation (its listpack, or the compressed form), for
 * memory accounting. */
static inline const void *ql_node_data(const struct ql_node *n) {
    return n->lp ? (const void *)n->lp : (const void *)n->lzf;
}

static inline size_t ql_count(const struct quicklist *ql) { return ql->count; }
/* Bytes allocated: the list, its nodes, their listpacks (compressed or
 * not) and the read buffer. */
size_t ql_memory(const struct quicklist *ql);
/* Bytes of the nodes' listpacks as if none were compressed (DEBUG OBJECT's
 * ql_uncompressed_size). */
size_t ql_raw_bytes(const struct quicklist *ql);

void ql_push(struct quicklist *ql, struct slice s, bool tail);
/* As lp_pop: a string is copied into buf, out may be NULL. False if empty. */
bool ql_pop(struct quicklist *ql, bool tail, struct lp_value *out, struct rbuf *buf);

/* Element at index (negative from the tail); false if out of range. */
bool ql_index(const struct quicklist *ql, long long index, struct lp_value *out);
/* LSET: replace the element at index; false if out of range. */
bool ql_replace(struct quicklist *ql, long long index, struct slice s);
/* LINSERT: insert s before/after the first element equal to pivot (from
 * the head); false if there is none. */
bool ql_insert(struct quicklist *ql, struct slice pivot, struct slice s, bool after);
/* Delete up to n elements from index start (negative from the tail), as
 * LTRIM needs; returns how many went. */
size_t ql_del_range(struct quicklist *ql, long long start, size_t n);
/* LREM: remove elements equal to s, at most count of them from the head
 * (count > 0), at most -count from the tail (count < 0), or all (0).
 * Returns how many went. */
size_t ql_remove(struct quicklist *ql, struct slice s, long long count);

/* Iteration from index (negative from the tail) towards the tail, or
 * towards the head when reverse. The list must not change meanwhile. */
struct ql_iter {
    const struct quicklist *ql;
    struct ql_node *node;      /* NULL when done */
    size_t pos;                /* LP_NONE: the first (last) element of node */
    bool reverse;
};
/* False (and an iterator that yields nothing) if index is out of range. */
bool ql_iter_init(struct ql_iter *it, const struct quicklist *ql, long long index, bool reverse);
bool ql_iter_next(struct ql_iter *it, struct lp_value *out);

/* The node limits for fill: at most *bytes bytes and *count elements
 * (SIZE_MAX when that dimension is not limited). */
void ql_node_limit(int fill, size_t *bytes, size_t *count);
/* Whether a node of this many bytes and elements is over the limits. */
bool ql_exceeds_limit(int fill, size_t bytes, size_t count);
/* Whether the whole list is in at most one node within the limits of its
 * fill (half the limits when shrinking): Redis's listpack encoding test. */
bool ql_fits_listpack(const struct quicklist *ql, bool shrinking);
/* The same test for a listpack of this many bytes and elements. */
bool ql_listpack_fits(int fill, size_t bytes, size_t count, bool shrinking);
/* A quicklist of lp's elements (lp is freed). */
struct quicklist *ql_from_listpack(struct listpack *lp, int fill);
/* The listpack of a quicklist of at most one node (the quicklist is freed). */
struct listpack *ql_to_listpack(struct quicklist *ql);

/* Check links, counts, node limits, every listpack, and that exactly the
 * nodes away from the ends that compress are compressed (for tests). */
bool ql_check(const struct quicklist *ql);

#endif
