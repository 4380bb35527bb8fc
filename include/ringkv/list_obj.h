/*
 * The list object (OBJ_LIST) in Redis 7.2's two encodings: a small list is
 * one bare listpack (OBJECT ENCODING "listpack"), a big one a quicklist
 * ("quicklist"). A list turns into a quicklist once it outgrows one node of
 * list-max-listpack-size, and back only when it has shrunk to half those
 * limits (t_list.c listTypeTryConversion): list_grew() and list_shrank(),
 * called once by each command that added to or removed from the list.
 *
 * The object pointer IS the object: a struct listpack * as is (which can
 * then live inside the key's entry, entry.h ENTRY_INLINE), or a struct
 * quicklist * with its low bit set. Functions that change the list take
 * struct list_obj ** because the pointer may change (the listpack moves or
 * the encoding converts); the caller stores it back into its entry
 * (entry_store_obj). A quicklist takes its node fill from
 * list-max-listpack-size when it is made, as in Redis.
 */
#ifndef RINGKV_LIST_OBJ_H
#define RINGKV_LIST_OBJ_H

#include "ringkv/common.h"
#include "ringkv/quicklist.h"

struct list_obj;   /* opaque: a listpack, or a tagged quicklist */

/* An empty list ("listpack"). */
struct list_obj *list_new(void);
void list_free(struct list_obj *l);
struct list_obj *list_dup(const struct list_obj *l);
/* "listpack" or "quicklist". */
const char *list_encoding(const struct list_obj *l);
size_t list_len(const struct list_obj *l);
/* Bytes the list allocates (MEMORY USAGE), a big one estimated from its
 * first `samples` nodes. */
size_t list_usage(const struct list_obj *l, size_t samples);
/* How the keyspace handles list objects (entry.h). */
struct obj_ops;
extern const struct obj_ops list_obj_ops;
/* The quicklist of a list in that encoding, else NULL (for tests). */
const struct quicklist *list_quicklist(const struct list_obj *l);
/* The listpack of a list in that encoding, else NULL (DEBUG LISTPACK). */
const struct listpack *list_listpack(const struct list_obj *l);

/* Reading. Values point into the list until it changes (quicklist.h). */
bool list_index(const struct list_obj *l, long long index, struct lp_value *out);
/* Iteration from index (negative from the tail) towards the tail, or the
 * head when reverse; the list must not change meanwhile. */
struct list_iter {
    struct ql_iter qi;
    struct quicklist view;     /* a listpack list seen as a one-node quicklist */
    struct ql_node node;
};
bool list_iter_init(struct list_iter *it, const struct list_obj *l, long long index, bool reverse);
bool list_iter_next(struct list_iter *it, struct lp_value *out);

/* Changing, as the quicklist functions of the same names (quicklist.h). */
void list_push(struct list_obj **lp, struct slice s, bool tail);
bool list_pop(struct list_obj **lp, bool tail, struct lp_value *out, struct rbuf *buf);
bool list_replace(struct list_obj **lp, long long index, struct slice s);
bool list_insert(struct list_obj **lp, struct slice pivot, struct slice s, bool after);
size_t list_del_range(struct list_obj **lp, long long start, size_t n);
size_t list_remove(struct list_obj **lp, struct slice s, long long count);

/* Encoding conversions, once per command that changed the list. */
void list_grew(struct list_obj **lp);
void list_shrank(struct list_obj **lp);

/* The element's text (integers printed into buf). */
static inline struct slice list_value_str(const struct lp_value *v, char buf[LP_INTBUF_SIZE]) {
    return lp_value_str(v, buf);
}

#endif
