/*
 * The list object: a bare listpack for small lists, a quicklist for big
 * ones (see list_obj.h), whose ops (list_obj_ops) obj_types.c lists.
 *
 * A listpack list is read through the quicklist functions, seen as a
 * quicklist of one node built on the stack (reading never frees a node);
 * changes to it are made on the listpack directly.
 */
#include <stdlib.h>

#include "ringkv/list_obj.h"
#include "ringkv/config.h"
#include "ringkv/entry.h"
#include "ringkv/obj_types.h"

#define QL_TAG ((uintptr_t)1)

static inline bool is_ql(const struct list_obj *l) { return ((uintptr_t)l & QL_TAG) != 0; }
static inline struct listpack *as_lp(const struct list_obj *l) { return (struct listpack *)(uintptr_t)l; }
static inline struct quicklist *as_ql(const struct list_obj *l) {
    return (struct quicklist *)((uintptr_t)l & ~QL_TAG);
}
static inline struct list_obj *from_lp(struct listpack *lp) { return (struct list_obj *)lp; }
static inline struct list_obj *from_ql(struct quicklist *ql) { return (struct list_obj *)((uintptr_t)ql | QL_TAG); }

static int fill(void) { return (int)CONFIG_GET(list_max_listpack_size); }
static int compress_depth(void) { return (int)CONFIG_GET(list_compress_depth); }

struct list_obj *list_new(void) { return from_lp(lp_new()); }

void list_free(struct list_obj *l) {
    if (!l) return;
    if (is_ql(l)) ql_free(as_ql(l));
    else lp_free(as_lp(l));
}

const char *list_encoding(const struct list_obj *l) { return is_ql(l) ? "quicklist" : "listpack"; }

size_t list_len(const struct list_obj *l) { return is_ql(l) ? ql_count(as_ql(l)) : lp_count(as_lp(l)); }

const struct quicklist *list_quicklist(const struct list_obj *l) { return is_ql(l) ? as_ql(l) : NULL; }
const struct listpack *list_listpack(const struct list_obj *l) { return is_ql(l) ? NULL : as_lp(l); }

/* ------------------------------------------------------------ reading */

/* l as a quicklist: itself, or its listpack as the one node of view. */
static const struct quicklist *as_quicklist(const struct list_obj *l, struct quicklist *view,
                                            struct ql_node *node) {
    if (is_ql(l)) return as_ql(l);
    struct listpack *lp = as_lp(l);
    struct ql_node *only = lp_count(lp) ? node : NULL;
    *node = (struct ql_node){ .prev = NULL, .next = NULL, .lp = lp };
    *view = (struct quicklist){ .head = only, .tail = only, .count = lp_count(lp),
                                .nodes = only ? 1 : 0, .fill = fill() };
    return view;
}

bool list_index(const struct list_obj *l, long long index, struct lp_value *out) {
    struct quicklist view;
    struct ql_node node;
    return ql_index(as_quicklist(l, &view, &node), index, out);
}

bool list_iter_init(struct list_iter *it, const struct list_obj *l, long long index, bool reverse) {
    return ql_iter_init(&it->qi, as_quicklist(l, &it->view, &it->node), index, reverse);
}

bool list_iter_next(struct list_iter *it, struct lp_value *out) { return ql_iter_next(&it->qi, out); }

struct list_obj *list_dup(const struct list_obj *l) {
    if (!is_ql(l)) {
        const struct listpack *lp = as_lp(l);
        struct listpack *n = rk_malloc(lp_bytes(lp));
        memcpy(n, lp, lp_bytes(lp));
        return from_lp(n);
    }
    const struct quicklist *ql = as_ql(l);
    struct quicklist *n = ql_new(ql->fill);
    ql_set_compress(n, (int)ql->compress);
    struct ql_iter it;
    struct lp_value v;
    char buf[LP_INTBUF_SIZE];
    if (ql_iter_init(&it, ql, 0, false))
        while (ql_iter_next(&it, &v)) {
            struct slice s = lp_value_str(&v, buf);
            if (!s.ptr) s.ptr = "";   /* an empty string may come back as NULL */
            ql_push(n, s, true);
        }
    return from_ql(n);
}

/* ------------------------------------------------------------ changing */

void list_push(struct list_obj **l, struct slice s, bool tail) {
    if (is_ql(*l)) {
        ql_push(as_ql(*l), s, tail);
        return;
    }
    struct listpack *lp = as_lp(*l);
    lp_push(&lp, s, tail);
    *l = from_lp(lp);
}

bool list_pop(struct list_obj **l, bool tail, struct lp_value *out, struct rbuf *buf) {
    if (is_ql(*l)) return ql_pop(as_ql(*l), tail, out, buf);
    struct listpack *lp = as_lp(*l);
    bool popped = lp_pop(&lp, tail, out, buf);
    *l = from_lp(lp);
    return popped;
}

bool list_replace(struct list_obj **l, long long index, struct slice s) {
    if (is_ql(*l)) return ql_replace(as_ql(*l), index, s);
    struct listpack *lp = as_lp(*l);
    size_t pos = lp_seek(lp, index);
    if (pos == LP_NONE) return false;
    lp_replace(&lp, pos, s);
    *l = from_lp(lp);
    return true;
}

bool list_insert(struct list_obj **l, struct slice pivot, struct slice s, bool after) {
    if (is_ql(*l)) return ql_insert(as_ql(*l), pivot, s, after);
    struct listpack *lp = as_lp(*l);
    size_t pos = lp_find(lp, lp_first(lp), pivot, 0);
    if (pos == LP_NONE) return false;
    if (after) lp_insert_after(&lp, pos, s);
    else lp_insert_before(&lp, pos, s);
    *l = from_lp(lp);
    return true;
}

size_t list_del_range(struct list_obj **l, long long start, size_t n) {
    if (is_ql(*l)) return ql_del_range(as_ql(*l), start, n);
    struct listpack *lp = as_lp(*l);
    long long count = (long long)lp_count(lp);
    if (start < 0) start += count;
    if (!n || start < 0 || start >= count) return 0;
    if (n > (size_t)(count - start)) n = (size_t)(count - start);
    lp_delete_range(&lp, start, n);
    *l = from_lp(lp);
    return n;
}

size_t list_remove(struct list_obj **l, struct slice s, long long count) {
    if (is_ql(*l)) return ql_remove(as_ql(*l), s, count);
    struct listpack *lp = as_lp(*l);
    size_t removed = 0;
    if (count >= 0) {
        size_t pos = lp_find(lp, lp_first(lp), s, 0);
        while (pos != LP_NONE && (count == 0 || removed < (unsigned long long)count)) {
            pos = lp_delete(&lp, pos, 1);
            removed++;
            if (pos != LP_NONE) pos = lp_find(lp, pos, s, 0);
        }
    } else {
        unsigned long long limit = 0ULL - (unsigned long long)count;
        for (size_t pos = lp_last(lp); pos != LP_NONE && removed < limit;) {
            size_t prev = lp_prev(lp, pos);   /* stays valid: only what follows moves */
            if (lp_eq(lp, pos, s)) {
                lp_delete(&lp, pos, 1);
                removed++;
            }
            pos = prev;
        }
    }
    *l = from_lp(lp);
    return removed;
}

/* ------------------------------------------------------------ encodings */

void list_grew(struct list_obj **l) {
    if (is_ql(*l)) return;
    struct listpack *lp = as_lp(*l);
    if (!ql_listpack_fits(fill(), lp_bytes(lp), lp_count(lp), false)) {
        struct quicklist *ql = ql_from_listpack(lp, fill());
        ql_set_compress(ql, compress_depth());
        *l = from_ql(ql);
    }
}

void list_shrank(struct list_obj **l) {
    if (is_ql(*l) && ql_fits_listpack(as_ql(*l), true))
        *l = from_lp(ql_to_listpack(as_ql(*l)));
}

/* ------------------------------------------------------------ memory */

/* As Redis's objectComputeSize: the quicklist, then its nodes with their
 * listpacks, the first `samples` measured and the others taken to be like
 * them. */
size_t list_usage(const struct list_obj *l, size_t samples) {
    if (!is_ql(l)) return obj_alloc_size(as_lp(l));
    const struct quicklist *ql = as_ql(l);
    size_t sampled = 0, n = 0;
    for (const struct ql_node *node = ql->head; node && n < samples; node = node->next, n++)
        sampled += obj_alloc_size(node) + obj_alloc_size(ql_node_data(node));   /* compressed or not */
    return obj_alloc_size(ql) + (n ? (size_t)((double)sampled / (double)n * ql->nodes) : 0);
}

/* ------------------------------------------------------------ ops */

static void ops_free(void *obj) { list_free(obj); }
static void *ops_dup(const void *obj) { return list_dup(obj); }
static const char *ops_encoding(const void *obj) { return list_encoding(obj); }
static size_t ops_inline_size(const void *obj) { return is_ql(obj) ? 0 : lp_bytes(as_lp(obj)); }
static size_t ops_usage(const void *obj, size_t samples) { return list_usage(obj, samples); }

const struct obj_ops list_obj_ops = { ops_free, ops_dup, ops_encoding, ops_inline_size, ops_usage };
