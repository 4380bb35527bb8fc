/*
 * The full sorted set: a skiplist ordered by (score, member) with spans, so
 * ranks cost O(log n), plus a member -> node hash map so lookups by member
 * (ZSCORE, ZADD's existence check, ZRANK's starting point) cost O(1).
 *
 * Order is Redis's: by score (a double, never NaN; -inf and +inf allowed),
 * ties broken by memcmp of the members with the shorter one first when one
 * is a prefix of the other.
 *
 * Each element is ONE allocation: a struct zsl_node holding the score, the
 * backward link, the forward links and spans of its levels, and the member
 * bytes inline. The map is an open-addressing array of node pointers.
 *
 * Node pointers stay valid until the element is deleted (updating a score
 * re-links the same node), so callers may hold them across calls that do
 * not delete. Ranks are 0-based everywhere.
 */
#ifndef RINGKV_ZSKIPLIST_H
#define RINGKV_ZSKIPLIST_H

#include "ringkv/common.h"

#define ZSL_MAXLEVEL 32
#define ZSL_NONE     SIZE_MAX   /* "no rank": the member is absent */

struct zsl_node {
    double score;
    struct zsl_node *backward;   /* previous node, NULL for the first */
    uint32_t len;                /* member length */
    uint8_t height;              /* number of levels, 1..ZSL_MAXLEVEL */
    /* Followed by: struct zsl_node *fwd[height]; uint32_t span[height];
     * char member[len]. */
    struct zsl_node *fwd[];
};

struct zskiplist {
    struct zsl_node *header;     /* ZSL_MAXLEVEL levels, no member */
    struct zsl_node *tail;       /* last node, NULL when empty */
    size_t length;
    int level;                   /* highest level in use, >= 1 */
    uint64_t *map;               /* 1 << map_bits slots: 0, or tag << 48 | node */
    unsigned map_bits;
    size_t node_bytes;           /* bytes requested for the nodes */
};

/* A score range; exclusive ends when minex / maxex. */
struct zrange_spec {
    double min, max;
    bool minex, maxex;
};

/* A lex range. Each end is -inf ("-"), +inf ("+") or a member value with
 * "[" (inclusive) or "(" (exclusive). The slices point into the argument. */
enum zlex_kind { ZLEX_VALUE = 0, ZLEX_NEG_INF, ZLEX_POS_INF };
struct zlex_spec {
    struct slice min, max;
    uint8_t min_kind, max_kind;  /* enum zlex_kind */
    bool minex, maxex;
};

/* Parse ZRANGEBYSCORE bounds as Redis does (strtod, "(" for exclusive, NaN
 * and trailing garbage rejected): false means "ERR min or max is not a float". */
bool zrange_parse(struct slice min, struct slice max, struct zrange_spec *out);
/* Parse ZRANGEBYLEX bounds: false means
 * "ERR min or max not valid string range item". */
bool zlex_parse(struct slice min, struct slice max, struct zlex_spec *out);

/* Whether a score / member lies within the range (both ends checked). */
bool zrange_contains(const struct zrange_spec *r, double score);
bool zlex_contains(const struct zlex_spec *r, struct slice member);

/* ------------------------------------------------------------- nodes */

static inline uint32_t *zsl_node_spans(const struct zsl_node *n) {
    return (uint32_t *)(void *)((char *)n + sizeof(*n) + n->height * sizeof(n->fwd[0]));
}
static inline struct slice zsl_node_member(const struct zsl_node *n) {
    return (struct slice){ (const char *)(zsl_node_spans(n) + n->height), n->len };
}
static inline double zsl_node_score(const struct zsl_node *n) { return n->score; }

/* ------------------------------------------------------------- the set */

struct zskiplist *zsl_new(void);
void zsl_free(struct zskiplist *zs);
static inline size_t zsl_count(const struct zskiplist *zs) { return zs->length; }
/* Bytes allocated: the struct, the header, the nodes and the map. */
size_t zsl_memory(const struct zskiplist *zs);

/* Insert a member that is known to be absent; score must not be NaN. */
struct zsl_node *zsl_insert(struct zskiplist *zs, struct slice member, double score);
/* The node holding member, or NULL. */
struct zsl_node *zsl_find(const struct zskiplist *zs, struct slice member);
bool zsl_score(const struct zskiplist *zs, struct slice member, double *score);
/* Set a node's score (not NaN), moving it only if its position changes. */
void zsl_update_score(struct zskiplist *zs, struct zsl_node *n, double score);
/* Delete and free; zsl_delete returns false if member was absent. */
bool zsl_delete(struct zskiplist *zs, struct slice member);
void zsl_delete_node(struct zskiplist *zs, struct zsl_node *n);

/* 0-based rank, from the lowest (or with reverse from the highest). */
size_t zsl_rank_node(const struct zskiplist *zs, const struct zsl_node *n, bool reverse);
size_t zsl_rank(const struct zskiplist *zs, struct slice member, bool reverse);   /* ZSL_NONE if absent */
/* Node at 0-based rank from the lowest, or NULL if rank >= count. */
struct zsl_node *zsl_at_rank(const struct zskiplist *zs, size_t rank);

/* Iteration: first/last are NULL when empty, next/prev NULL at the ends. */
static inline struct zsl_node *zsl_first(const struct zskiplist *zs) { return zs->header->fwd[0]; }
static inline struct zsl_node *zsl_last(const struct zskiplist *zs) { return zs->tail; }
static inline struct zsl_node *zsl_next(const struct zsl_node *n) { return n->fwd[0]; }
static inline struct zsl_node *zsl_prev(const struct zsl_node *n) { return n->backward; }

/* First / last node inside the range, or NULL if none is. */
struct zsl_node *zsl_first_in_range(const struct zskiplist *zs, const struct zrange_spec *r);
struct zsl_node *zsl_last_in_range(const struct zskiplist *zs, const struct zrange_spec *r);
struct zsl_node *zsl_first_in_lex(const struct zskiplist *zs, const struct zlex_spec *r);
struct zsl_node *zsl_last_in_lex(const struct zskiplist *zs, const struct zlex_spec *r);
/* Number of elements in the range, in O(log n) (ZCOUNT, ZLEXCOUNT). */
size_t zsl_count_in_range(const struct zskiplist *zs, const struct zrange_spec *r);
size_t zsl_count_in_lex(const struct zskiplist *zs, const struct zlex_spec *r);

/* Range deletes; each returns the number of elements removed. Ranks are
 * 0-based and inclusive: start <= end < count (end is clamped to count-1). */
size_t zsl_delete_range_by_score(struct zskiplist *zs, const struct zrange_spec *r);
size_t zsl_delete_range_by_lex(struct zskiplist *zs, const struct zlex_spec *r);
size_t zsl_delete_range_by_rank(struct zskiplist *zs, size_t start, size_t end);

/*
 * SCAN over the member map. Returns every node whose member hash lies in
 * [cursor, next), where next is the return value (0 when the whole hash
 * space has been covered). Each call looks at about `slots` home slots.
 * Because the cursor is a position in hash space, an element present for a
 * whole scan is reported exactly once even if the map resizes in between.
 * fn must not modify the set.
 */
typedef void (*zsl_scan_fn)(void *ctx, const struct zsl_node *n);
uint64_t zsl_scan(const struct zskiplist *zs, uint64_t cursor, size_t slots,
                  zsl_scan_fn fn, void *ctx);
/* The hash zsl_scan orders members by. */
uint64_t zsl_member_hash(struct slice member);

/* Check every invariant (order, spans, backward links, tail, length, map);
 * for tests. Returns false and prints the first violation. */
bool zsl_check(const struct zskiplist *zs);

#endif
