/*
 * The sorted set value object (OBJ_ZSET), in one of two encodings as in
 * Redis 7.0's t_zset.c:
 *
 *   listpack   member,score,member,score,... (listpack.h) sorted by score
 *              then member, while the set has at most
 *              zset-max-listpack-entries members and none is longer than
 *              zset-max-listpack-value bytes; scores are stored as their
 *              "%.17g" text (integers become listpack integers);
 *   skiplist   a zskiplist (zskiplist.h) once either limit is passed.
 *
 * As in Redis a sorted set converts back to a listpack only where Redis does
 * (zset_convert_if_small, for the results of ZUNIONSTORE & co).
 *
 * The object pointer IS the object: a struct listpack * as is (kept inside
 * the key's entry when small, entry.h ENTRY_INLINE), or a struct zskiplist *
 * with its low bit set. Functions that change the set take struct
 * zset_obj ** because the pointer may change; the caller stores the result
 * back into its entry (entry_store_obj).
 */
#ifndef RINGKV_ZSET_OBJ_H
#define RINGKV_ZSET_OBJ_H

#include "ringkv/common.h"
#include "ringkv/entry.h"
#include "ringkv/listpack.h"
#include "ringkv/zskiplist.h"

struct zset_obj;

struct zset_obj *zset_new(void);              /* empty listpack */
struct zset_obj *zset_new_skiplist(void);
struct zset_obj *zset_from_zsl(struct zskiplist *zs);   /* takes ownership */
void zset_free(struct zset_obj *z);
struct zset_obj *zset_dup(const struct zset_obj *z);
bool zset_is_listpack(const struct zset_obj *z);
const char *zset_encoding(const struct zset_obj *z);   /* "listpack" / "skiplist" */
size_t zset_len(const struct zset_obj *z);
struct listpack *zset_lp(const struct zset_obj *z);
struct zskiplist *zset_zsl(const struct zset_obj *z);
/* Bytes the sorted set allocates (MEMORY USAGE), a skiplist's nodes
 * estimated from its first `samples`. */
size_t zset_usage(const struct zset_obj *z, size_t samples);
/* How the keyspace handles sorted set objects (entry.h). */
extern const struct obj_ops zset_obj_ops;

/* Redis's zsetAdd() flags. */
#define ZADD_IN_INCR 1
#define ZADD_IN_NX   2
#define ZADD_IN_XX   4
#define ZADD_IN_GT   8
#define ZADD_IN_LT   16
#define ZADD_OUT_NOP     1
#define ZADD_OUT_NAN     2
#define ZADD_OUT_ADDED   4
#define ZADD_OUT_UPDATED 8

/* As Redis's zsetAdd(): false (with ZADD_OUT_NAN) when the score is or
 * becomes NaN. *newscore (may be NULL) gets the final score when the
 * member was added or updated. Converts to a skiplist past the limits.
 * member must not point into the set. */
bool zset_add(struct zset_obj **zp, struct slice member, double score, int in_flags,
              int *out_flags, double *newscore);
bool zset_score(const struct zset_obj *z, struct slice member, double *score);
bool zset_delete(struct zset_obj **zp, struct slice member);
/* 0-based rank (ZSL_NONE if absent); *score (may be NULL) set when found. */
size_t zset_rank(const struct zset_obj *z, struct slice member, bool reverse, double *score);
void zset_convert(struct zset_obj **zp);      /* listpack -> skiplist */
/* Redis's zsetConvertToListpackIfNeeded(): a skiplist of at most
 * zset-max-listpack-entries members none longer than the value limit
 * becomes a listpack. */
void zset_convert_if_small(struct zset_obj **zp);

/* Range deletes; each returns how many members went. Ranks 0-based inclusive,
 * start <= end < len. */
size_t zset_delete_range_rank(struct zset_obj **zp, size_t start, size_t end);
size_t zset_delete_range_score(struct zset_obj **zp, const struct zrange_spec *r);
size_t zset_delete_range_lex(struct zset_obj **zp, const struct zlex_spec *r);
size_t zset_count_score(const struct zset_obj *z, const struct zrange_spec *r);
size_t zset_count_lex(const struct zset_obj *z, const struct zlex_spec *r);

/* One end of a lex range (Redis's zslLexValueGteMin / LteMax). */
bool zset_lex_gte_min(const struct zlex_spec *r, struct slice member);
bool zset_lex_lte_max(const struct zlex_spec *r, struct slice member);

/* A position in the set, walkable both ways (no change to the set meanwhile). */
struct zset_it {
    const struct zset_obj *z;
    size_t pos;                   /* listpack: position of the member */
    const struct zsl_node *node;  /* skiplist */
    bool valid;
    char buf[LP_INTBUF_SIZE];
};
/* At rank (0-based from the lowest); invalid when rank >= len. */
void zset_it_rank(struct zset_it *it, const struct zset_obj *z, size_t rank);
/* First (or with reverse the last) member in the range; invalid if none. */
void zset_it_score(struct zset_it *it, const struct zset_obj *z, const struct zrange_spec *r, bool reverse);
void zset_it_lex(struct zset_it *it, const struct zset_obj *z, const struct zlex_spec *r, bool reverse);
void zset_it_next(struct zset_it *it);
void zset_it_prev(struct zset_it *it);
static inline void zset_it_move(struct zset_it *it, bool reverse) {
    if (reverse) zset_it_prev(it); else zset_it_next(it);
}
/* Member text (valid until the next move or a change) and score. */
struct slice zset_it_member(struct zset_it *it);
double zset_it_score_of(const struct zset_it *it);

#endif
