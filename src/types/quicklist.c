/*
 * quicklist: a linked list of listpacks, each filled up to the limit.
 *
 * The limit follows Redis's list-max-listpack-size (quicklist.h). Pushes go
 * into the end node while it has room, else into a new node. An element is
 * "large" when it alone would not fit a node (over 8 KB with a count limit,
 * over the byte limit otherwise); it always gets a node of its own, and
 * since such a node is over the byte limit nothing is ever added to it. So
 * every node either holds one element or is within the limits, and
 * ql_check() tests exactly that.
 *
 * Inserting in the middle of a full node splits it at that point (a
 * listpack splits and joins by copying bytes) and the element goes to the
 * end of the left half, the start of the right half, or a node between
 * them. Positions inside a node are listpack positions; finding the node of
 * an index walks the node list from the nearer end, adding node counts.
 *
 * Node count and bytes are read from the listpack header, so a node is only
 * its two links and the listpack pointer.
 */
#include <stdlib.h>

#include "ringkv/quicklist.h"

#define SIZE_SAFETY_LIMIT 8192     /* bytes of a node under a count limit */

static const size_t neg_fill_bytes[] = { 4096, 8192, 16384, 32768, 65536 };

/* ------------------------------------------------------------ limits */

static size_t neg_limit(int fill) {
    size_t i = (size_t)(-(long)fill) - 1;
    if (i >= RK_ARRAY_LEN(neg_fill_bytes)) i = RK_ARRAY_LEN(neg_fill_bytes) - 1;
    return neg_fill_bytes[i];
}

void ql_node_limit(int fill, size_t *bytes, size_t *count) {
    if (fill >= 0) {
        *bytes = SIZE_MAX;
        *count = fill ? (size_t)fill : 1;
    } else {
        *bytes = neg_limit(fill);
        *count = SIZE_MAX;
    }
}

bool ql_exceeds_limit(int fill, size_t bytes, size_t count) {
    if (fill < 0) return bytes > neg_limit(fill);
    if (bytes > SIZE_SAFETY_LIMIT) return true;
    return count > (fill ? (size_t)fill : 1);
}

static bool is_large(int fill, size_t len) {
    return len > (fill >= 0 ? SIZE_SAFETY_LIMIT : neg_limit(fill));
}

/* Can node take one more element s, encoded in enc bytes? */
static bool allow_insert(const struct quicklist *ql, const struct ql_node *node,
                         struct slice s, size_t enc) {
    if (!node || is_large(ql->fill, s.len)) return false;
    return !ql_exceeds_limit(ql->fill, lp_bytes(node->lp) + enc, lp_count(node->lp) + 1);
}

bool ql_fits_listpack(const struct quicklist *ql, bool shrinking) {
    if (ql->nodes > 1) return false;
    if (ql->nodes == 0) return true;
    return ql_listpack_fits(ql->fill, lp_bytes(ql->head->lp), lp_count(ql->head->lp), shrinking);
}

bool ql_listpack_fits(int fill, size_t bytes, size_t count, bool shrinking) {
    if (fill >= 0 && bytes > SIZE_SAFETY_LIMIT) return false;
    size_t bl, cl;
    ql_node_limit(fill, &bl, &cl);
    if (shrinking) {
        bl /= 2;
        cl /= 2;
    }
    return bytes <= bl && count <= cl;
}

/* ------------------------------------------------------------ nodes */

static struct ql_node *node_wrap(struct listpack *lp) {
    struct ql_node *n = rk_malloc(sizeof(*n));
    n->prev = n->next = NULL;
    n->lp = lp;
    return n;
}

static struct ql_node *node_new(struct slice s) {
    struct listpack *lp = lp_new();
    lp_push(&lp, s, true);
    return node_wrap(lp);
}

/* Link n next to at (after or before it); at NULL only for an empty list. */
static void link_node(struct quicklist *ql, struct ql_node *at, struct ql_node *n, bool after) {
    ql->nodes++;
    if (!at) {
        n->prev = n->next = NULL;
        ql->head = ql->tail = n;
    } else if (after) {
        n->prev = at;
        n->next = at->next;
        if (at->next) at->next->prev = n;
        else ql->tail = n;
        at->next = n;
    } else {
        n->next = at;
        n->prev = at->prev;
        if (at->prev) at->prev->next = n;
        else ql->head = n;
        at->prev = n;
    }
}

static void unlink_free(struct quicklist *ql, struct ql_node *n) {
    if (n->prev) n->prev->next = n->next;
    else ql->head = n->next;
    if (n->next) n->next->prev = n->prev;
    else ql->tail = n->prev;
    ql->nodes--;
    lp_free(n->lp);
    free(n);
}

/* The node holding index (already in range, non-negative) and the
 * element's index inside it. */
static struct ql_node *locate(const struct quicklist *ql, size_t index, size_t *in_node) {
    struct ql_node *n;
    if (index < ql->count / 2) {
        for (n = ql->head; index >= lp_count(n->lp); n = n->next) index -= lp_count(n->lp);
        *in_node = index;
    } else {
        size_t r = ql->count - 1 - index;          /* distance from the tail */
        for (n = ql->tail; r >= lp_count(n->lp); n = n->prev) r -= lp_count(n->lp);
        *in_node = lp_count(n->lp) - 1 - r;
    }
    return n;
}

static bool norm_index(const struct quicklist *ql, long long index, size_t *out) {
    long long n = (long long)ql->count;
    if (index < 0) index += n;
    if (index < 0 || index >= n) return false;
    *out = (size_t)index;
    return true;
}

/* ------------------------------------------------------------ lifetime */

struct quicklist *ql_new(int fill) {
    struct quicklist *ql = rk_calloc(1, sizeof(*ql));
    ql->fill = fill;
    return ql;
}

struct quicklist *ql_from_listpack(struct listpack *lp, int fill) {
    struct quicklist *ql = ql_new(fill);
    struct lp_value v;
    char buf[LP_INTBUF_SIZE];
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p)) {
        lp_get(lp, p, &v);
        struct slice s = lp_value_str(&v, buf);
        if (!s.ptr) s.ptr = "";
        ql_push(ql, s, true);
    }
    lp_free(lp);
    return ql;
}

struct listpack *ql_to_listpack(struct quicklist *ql) {
    struct listpack *lp = ql->head ? ql->head->lp : lp_new();
    free(ql->head);
    free(ql);
    return lp;
}

void ql_free(struct quicklist *ql) {
    if (!ql) return;
    struct ql_node *n = ql->head;
    while (n) {
        struct ql_node *next = n->next;
        lp_free(n->lp);
        free(n);
        n = next;
    }
    free(ql);
}

size_t ql_memory(const struct quicklist *ql) {
    size_t m = sizeof(*ql);
    for (const struct ql_node *n = ql->head; n; n = n->next) m += sizeof(*n) + lp_memory(n->lp);
    return m;
}

/* ------------------------------------------------------------ ends */

void ql_push(struct quicklist *ql, struct slice s, bool tail) {
    struct ql_node *end = tail ? ql->tail : ql->head;
    if (allow_insert(ql, end, s, lp_encoded_size(s)))
        lp_push(&end->lp, s, tail);
    else
        link_node(ql, end, node_new(s), tail);
    ql->count++;
}

bool ql_pop(struct quicklist *ql, bool tail, struct lp_value *out, struct rbuf *buf) {
    struct ql_node *end = tail ? ql->tail : ql->head;
    if (!end) return false;
    lp_pop(&end->lp, tail, out, buf);
    ql->count--;
    if (lp_count(end->lp) == 0) unlink_free(ql, end);
    return true;
}

/* ------------------------------------------------------------ by index */

bool ql_index(const struct quicklist *ql, long long index, struct lp_value *out) {
    size_t i, k;
    if (!norm_index(ql, index, &i)) return false;
    struct ql_node *n = locate(ql, i, &k);
    lp_get(n->lp, lp_seek(n->lp, (long long)k), out);
    return true;
}

/* Insert s next to the element at pos in node. */
static void insert_at(struct quicklist *ql, struct ql_node *node, size_t pos, struct slice s, bool after) {
    size_t enc = lp_encoded_size(s);
    ql->count++;
    if (allow_insert(ql, node, s, enc)) {
        if (after) lp_insert_after(&node->lp, pos, s);
        else lp_insert_before(&node->lp, pos, s);
        return;
    }
    if (after && lp_next(node->lp, pos) == LP_NONE) {
        if (allow_insert(ql, node->next, s, enc)) lp_push(&node->next->lp, s, false);
        else link_node(ql, node, node_new(s), true);
        return;
    }
    if (!after && pos == lp_first(node->lp)) {
        if (allow_insert(ql, node->prev, s, enc)) lp_push(&node->prev->lp, s, true);
        else link_node(ql, node, node_new(s), false);
        return;
    }
    /* In the middle of a node that cannot grow: split it where s goes. */
    size_t k = 0;
    for (size_t p = lp_first(node->lp); p != pos; p = lp_next(node->lp, p)) k++;
    struct ql_node *right = node_wrap(lp_split(&node->lp, after ? k + 1 : k));
    link_node(ql, node, right, true);
    if (allow_insert(ql, node, s, enc)) lp_push(&node->lp, s, true);
    else if (allow_insert(ql, right, s, enc)) lp_push(&right->lp, s, false);
    else link_node(ql, node, node_new(s), true);
}

bool ql_replace(struct quicklist *ql, long long index, struct slice s) {
    size_t i, k;
    if (!norm_index(ql, index, &i)) return false;
    struct ql_node *n = locate(ql, i, &k);
    size_t pos = lp_seek(n->lp, (long long)k);
    size_t next = lp_next(n->lp, pos);
    size_t old = (next == LP_NONE ? lp_bytes(n->lp) : next) - pos;
    size_t newbytes = lp_bytes(n->lp) - old + lp_encoded_size(s);
    if (lp_count(n->lp) == 1 ||
        (!is_large(ql->fill, s.len) && !ql_exceeds_limit(ql->fill, newbytes, lp_count(n->lp)))) {
        lp_replace(&n->lp, pos, s);
        return true;
    }
    /* Does not fit here: delete it, then insert where it was. */
    size_t prev = lp_prev(n->lp, pos);
    next = lp_delete(&n->lp, pos, 1);
    ql->count--;
    if (prev != LP_NONE) insert_at(ql, n, prev, s, true);
    else insert_at(ql, n, next, s, false);
    return true;
}

size_t ql_del_range(struct quicklist *ql, long long start, size_t n) {
    size_t i, k;
    if (!n || !norm_index(ql, start, &i)) return 0;
    if (n > ql->count - i) n = ql->count - i;
    size_t left = n;
    struct ql_node *node = locate(ql, i, &k);
    while (left) {
        struct ql_node *next = node->next;
        size_t here = lp_count(node->lp) - k;
        if (here > left) here = left;
        if (here == lp_count(node->lp)) unlink_free(ql, node);
        else lp_delete_range(&node->lp, (long long)k, here);
        left -= here;
        k = 0;
        node = next;
    }
    ql->count -= n;
    return n;
}

size_t ql_remove(struct quicklist *ql, struct slice s, long long count) {
    bool rev = count < 0;
    unsigned long long limit = rev ? 0ULL - (unsigned long long)count : (unsigned long long)count;
    size_t removed = 0;
    struct ql_node *node = rev ? ql->tail : ql->head;
    while (node && (limit == 0 || removed < limit)) {
        struct ql_node *after = rev ? node->prev : node->next;
        if (!rev) {
            size_t pos = lp_find(node->lp, lp_first(node->lp), s, 0);
            while (pos != LP_NONE) {
                pos = lp_delete(&node->lp, pos, 1);
                removed++;
                if (limit && removed == limit) break;
                if (pos != LP_NONE) pos = lp_find(node->lp, pos, s, 0);
            }
        } else {
            size_t pos = lp_last(node->lp);
            while (pos != LP_NONE) {
                size_t prev = lp_prev(node->lp, pos);
                if (lp_eq(node->lp, pos, s)) {
                    lp_delete(&node->lp, pos, 1);
                    removed++;
                    if (limit && removed == limit) break;
                }
                pos = prev;
            }
        }
        if (lp_count(node->lp) == 0) unlink_free(ql, node);
        node = after;
    }
    ql->count -= removed;
    return removed;
}

bool ql_insert(struct quicklist *ql, struct slice pivot, struct slice s, bool after) {
    for (struct ql_node *n = ql->head; n; n = n->next) {
        size_t pos = lp_find(n->lp, lp_first(n->lp), pivot, 0);
        if (pos != LP_NONE) {
            insert_at(ql, n, pos, s, after);
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------ iteration */

bool ql_iter_init(struct ql_iter *it, const struct quicklist *ql, long long index, bool reverse) {
    size_t i, k;
    it->reverse = reverse;
    it->node = NULL;
    it->pos = LP_NONE;
    if (!norm_index(ql, index, &i)) return false;
    it->node = locate(ql, i, &k);
    it->pos = lp_seek(it->node->lp, (long long)k);
    return true;
}

bool ql_iter_next(struct ql_iter *it, struct lp_value *out) {
    struct ql_node *n = it->node;
    if (!n) return false;
    lp_get(n->lp, it->pos, out);
    it->pos = it->reverse ? lp_prev(n->lp, it->pos) : lp_next(n->lp, it->pos);
    if (it->pos == LP_NONE) {
        it->node = it->reverse ? n->prev : n->next;
        if (it->node) it->pos = it->reverse ? lp_last(it->node->lp) : lp_first(it->node->lp);
    }
    return true;
}

/* ------------------------------------------------------------ checking */

bool ql_check(const struct quicklist *ql) {
    size_t count = 0, nodes = 0;
    const struct ql_node *prev = NULL;
    for (const struct ql_node *n = ql->head; n; prev = n, n = n->next) {
        if (n->prev != prev || !lp_check(n->lp) || lp_count(n->lp) == 0) return false;
        if (lp_count(n->lp) > 1 && ql_exceeds_limit(ql->fill, lp_bytes(n->lp), lp_count(n->lp)))
            return false;
        count += lp_count(n->lp);
        nodes++;
    }
    return prev == ql->tail && count == ql->count && nodes == ql->nodes;
}
