/*
 * quicklist: a linked list of listpacks, each filled up to the limit, the
 * inner ones optionally compressed.
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
 * Compression (list-compress-depth d): the rule is "the d nodes at each end
 * are raw, every other node is compressed if it compresses". A compressed
 * node keeps its element count and raw size beside the LZF bytes, so
 * locating an index or checking a node's room needs no decompressing. A
 * change opens (decompresses) the node it edits; afterwards the nodes it
 * touched are compressed again if they are inner (settle_near), and, when
 * nodes came or went, the ends are put right (settle_ends): an operation
 * adds at most two nodes, so only the two nodes just inside each end zone
 * can have become inner, while any number may have come into a zone. Reads
 * decompress into the list's read buffer (one node), so reading never
 * changes a node and needs no recompressing.
 *
 * Node count and bytes are read from the listpack header (or the
 * compressed node's), so a node is its two links and its data.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ringkv/log.h"
#include "ringkv/lzf.h"
#include "ringkv/quicklist.h"

#define SIZE_SAFETY_LIMIT 8192     /* bytes of a node under a count limit */
#define MIN_COMPRESS_BYTES 48      /* smaller nodes are never compressed (Redis) */
#define MIN_COMPRESS_IMPROVE 8     /* compressing must save more than this (Redis) */

static const size_t neg_fill_bytes[] = { 4096, 8192, 16384, 32768, 65536 };

/* A compressed node's listpack. */
struct ql_lzf {
    uint32_t raw;              /* bytes of the listpack */
    uint32_t count;            /* its elements */
    uint32_t len;              /* bytes of data */
    unsigned char data[];
};

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

static size_t node_count(const struct ql_node *n) { return n->lp ? lp_count(n->lp) : n->lzf->count; }
static size_t node_bytes(const struct ql_node *n) { return n->lp ? lp_bytes(n->lp) : n->lzf->raw; }

/* Can node take one more element s, encoded in enc bytes? */
static bool allow_insert(const struct quicklist *ql, const struct ql_node *node,
                         struct slice s, size_t enc) {
    if (!node || is_large(ql->fill, s.len)) return false;
    return !ql_exceeds_limit(ql->fill, node_bytes(node) + enc, node_count(node) + 1);
}

bool ql_fits_listpack(const struct quicklist *ql, bool shrinking) {
    if (ql->nodes > 1) return false;
    if (ql->nodes == 0) return true;
    return ql_listpack_fits(ql->fill, node_bytes(ql->head), node_count(ql->head), shrinking);
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

/* ------------------------------------------------------------ compression */

/* The LZF form of lp, or NULL when it is too small or does not shrink
 * enough to be worth it. */
static struct ql_lzf *lzf_pack(const struct listpack *lp) {
    size_t sz = lp_bytes(lp);
    if (sz < MIN_COMPRESS_BYTES) return NULL;
    struct ql_lzf *z = rk_malloc(sizeof *z + sz);
    size_t len = lzf_compress(lp, sz, z->data, sz);
    if (len == 0 || len + MIN_COMPRESS_IMPROVE >= sz) {
        free(z);
        return NULL;
    }
    z = rk_realloc(z, sizeof *z + len);
    z->raw = (uint32_t)sz;
    z->count = (uint32_t)lp_count(lp);
    z->len = (uint32_t)len;
    return z;
}

static struct listpack *lzf_unpack(const struct ql_lzf *z) {
    struct listpack *lp = rk_malloc(z->raw);
    if (lzf_decompress(z->data, z->len, lp, z->raw) != z->raw) {
        rk_log(LL_WARNING, "a compressed list node does not decompress");
        abort();
    }
    return lp;
}

/* Compress n if it is raw and compresses (else it stays raw). */
static void node_compress(struct ql_node *n) {
    if (!n || !n->lp) return;
    struct ql_lzf *z = lzf_pack(n->lp);
    if (!z) return;
    lp_free(n->lp);
    n->lp = NULL;
    n->lzf = z;
}

static void drop_scratch(struct quicklist *ql) {
    free(ql->scratch);
    ql->scratch = NULL;
    ql->scratch_of = NULL;
}

/* Make n raw, to change it (its read-buffer copy is taken when there is one). */
static void node_open(struct quicklist *ql, struct ql_node *n) {
    if (!n || n->lp) return;
    if (ql->scratch_of == n) {
        n->lp = ql->scratch;
        ql->scratch = NULL;
        ql->scratch_of = NULL;
    } else {
        n->lp = lzf_unpack(n->lzf);
    }
    free(n->lzf);
    n->lzf = NULL;
}

/* n's listpack to read: its own, or a decompressed copy in the read
 * buffer. The read buffer is a cache of the list, not part of its value,
 * hence the cast on a list given as const. */
static const struct listpack *node_read(const struct quicklist *ql, const struct ql_node *n) {
    if (n->lp) return n->lp;
    struct quicklist *cache = (struct quicklist *)ql;
    if (cache->scratch_of != n) {
        free(cache->scratch);
        cache->scratch = lzf_unpack(n->lzf);
        cache->scratch_of = n;
    }
    return cache->scratch;
}

/* Is n one of the nodes at either end that stay raw? */
static bool in_end_zone(const struct quicklist *ql, const struct ql_node *n) {
    const struct ql_node *f = ql->head, *b = ql->tail;
    for (uint32_t i = 0; i < ql->compress && f; i++, f = f->next, b = b->prev)
        if (f == n || b == n) return true;
    return false;
}

static void compress_if_inner(struct quicklist *ql, struct ql_node *n) {
    if (ql->compress && n && n->lp && !in_end_zone(ql, n)) node_compress(n);
}

/* After a change around n: n and the neighbours a split or an insert may
 * have created or filled (one before, two after). */
static void settle_near(struct quicklist *ql, struct ql_node *n) {
    if (!ql->compress) return;
    compress_if_inner(ql, n->prev);
    compress_if_inner(ql, n);
    compress_if_inner(ql, n->next);
    if (n->next) compress_if_inner(ql, n->next->next);
}

/* After nodes came or went: the d nodes at each end raw, and the two next
 * ones inward compressed (at most two nodes are added at once, so no other
 * node can have left an end zone). */
static void settle_ends(struct quicklist *ql) {
    uint64_t d = ql->compress, n = ql->nodes;
    if (!d) return;
    struct ql_node *f = ql->head, *b = ql->tail;
    for (uint64_t i = 0; i < d && f; i++, f = f->next, b = b->prev) {
        node_open(ql, f);
        node_open(ql, b);
    }
    if (n > 2 * d) {             /* f and b are the nodes at index d from each end */
        node_compress(f);
        node_compress(b);
    }
    if (n > 2 * d + 1) {
        node_compress(f->next);
        node_compress(b->prev);
    }
}

/* ------------------------------------------------------------ nodes */

static struct ql_node *node_wrap(struct listpack *lp) {
    struct ql_node *n = rk_malloc(sizeof(*n));
    n->prev = n->next = NULL;
    n->lp = lp;
    n->lzf = NULL;
    return n;
}

static struct ql_node *node_new(struct slice s) {
    struct listpack *lp = lp_new();
    lp_push(&lp, s, true);
    return node_wrap(lp);
}

static void node_free(struct ql_node *n) {
    if (n->lp) lp_free(n->lp);
    free(n->lzf);
    free(n);
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
    if (ql->scratch_of == n) drop_scratch(ql);
    node_free(n);
}

/* The node holding index (already in range, non-negative) and the
 * element's index inside it. */
static struct ql_node *locate(const struct quicklist *ql, size_t index, size_t *in_node) {
    struct ql_node *n;
    if (index < ql->count / 2) {
        for (n = ql->head; index >= node_count(n); n = n->next) index -= node_count(n);
        *in_node = index;
    } else {
        size_t r = ql->count - 1 - index;          /* distance from the tail */
        for (n = ql->tail; r >= node_count(n); n = n->prev) r -= node_count(n);
        *in_node = node_count(n) - 1 - r;
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

void ql_set_compress(struct quicklist *ql, int depth) {
    drop_scratch(ql);
    ql->compress = depth > 0 ? (uint32_t)depth : 0;
    uint64_t d = ql->compress, i = 0, n = ql->nodes;
    for (struct ql_node *node = ql->head; node; node = node->next, i++) {
        if (d && i >= d && n - 1 - i >= d) node_compress(node);
        else node_open(ql, node);
    }
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
    drop_scratch(ql);
    node_open(ql, ql->head);
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
        node_free(n);
        n = next;
    }
    free(ql->scratch);
    free(ql);
}

size_t ql_memory(const struct quicklist *ql) {
    size_t m = sizeof(*ql) + (ql->scratch ? lp_memory(ql->scratch) : 0);
    for (const struct ql_node *n = ql->head; n; n = n->next)
        m += sizeof(*n) + (n->lp ? lp_memory(n->lp) : sizeof(*n->lzf) + n->lzf->len);
    return m;
}

size_t ql_raw_bytes(const struct quicklist *ql) {
    size_t m = 0;
    for (const struct ql_node *n = ql->head; n; n = n->next)
        m += n->lp ? lp_bytes(n->lp) : n->lzf->raw;
    return m;
}

/* ------------------------------------------------------------ ends */

void ql_push(struct quicklist *ql, struct slice s, bool tail) {
    drop_scratch(ql);
    struct ql_node *end = tail ? ql->tail : ql->head;
    if (allow_insert(ql, end, s, lp_encoded_size(s))) {
        node_open(ql, end);
        lp_push(&end->lp, s, tail);
    } else {
        link_node(ql, end, node_new(s), tail);
        settle_ends(ql);
    }
    ql->count++;
}

bool ql_pop(struct quicklist *ql, bool tail, struct lp_value *out, struct rbuf *buf) {
    drop_scratch(ql);
    struct ql_node *end = tail ? ql->tail : ql->head;
    if (!end) return false;
    node_open(ql, end);
    lp_pop(&end->lp, tail, out, buf);
    ql->count--;
    if (lp_count(end->lp) == 0) {
        unlink_free(ql, end);
        settle_ends(ql);
    }
    return true;
}

/* ------------------------------------------------------------ by index */

bool ql_index(const struct quicklist *ql, long long index, struct lp_value *out) {
    size_t i, k;
    if (!norm_index(ql, index, &i)) return false;
    const struct listpack *lp = node_read(ql, locate(ql, i, &k));
    lp_get(lp, lp_seek(lp, (long long)k), out);
    return true;
}

/* Insert s next to the element at pos in node (raw). */
static void insert_at(struct quicklist *ql, struct ql_node *node, size_t pos, struct slice s, bool after) {
    size_t enc = lp_encoded_size(s);
    ql->count++;
    if (allow_insert(ql, node, s, enc)) {
        if (after) lp_insert_after(&node->lp, pos, s);
        else lp_insert_before(&node->lp, pos, s);
        return;
    }
    if (after && lp_next(node->lp, pos) == LP_NONE) {
        if (allow_insert(ql, node->next, s, enc)) {
            node_open(ql, node->next);
            lp_push(&node->next->lp, s, false);
        } else {
            link_node(ql, node, node_new(s), true);
        }
        return;
    }
    if (!after && pos == lp_first(node->lp)) {
        if (allow_insert(ql, node->prev, s, enc)) {
            node_open(ql, node->prev);
            lp_push(&node->prev->lp, s, true);
        } else {
            link_node(ql, node, node_new(s), false);
        }
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
    drop_scratch(ql);
    if (!norm_index(ql, index, &i)) return false;
    struct ql_node *n = locate(ql, i, &k);
    node_open(ql, n);
    size_t pos = lp_seek(n->lp, (long long)k);
    size_t next = lp_next(n->lp, pos);
    size_t old = (next == LP_NONE ? lp_bytes(n->lp) : next) - pos;
    size_t newbytes = lp_bytes(n->lp) - old + lp_encoded_size(s);
    if (lp_count(n->lp) == 1 ||
        (!is_large(ql->fill, s.len) && !ql_exceeds_limit(ql->fill, newbytes, lp_count(n->lp)))) {
        lp_replace(&n->lp, pos, s);
        compress_if_inner(ql, n);
        return true;
    }
    /* Does not fit here: delete it, then insert where it was. */
    size_t prev = lp_prev(n->lp, pos);
    next = lp_delete(&n->lp, pos, 1);
    ql->count--;
    if (prev != LP_NONE) insert_at(ql, n, prev, s, true);
    else insert_at(ql, n, next, s, false);
    settle_ends(ql);
    settle_near(ql, n);
    return true;
}

size_t ql_del_range(struct quicklist *ql, long long start, size_t n) {
    size_t i, k;
    drop_scratch(ql);
    if (!n || !norm_index(ql, start, &i)) return 0;
    if (n > ql->count - i) n = ql->count - i;
    size_t left = n;
    struct ql_node *node = locate(ql, i, &k);
    struct ql_node *cut[2] = { NULL, NULL };   /* the first and last nodes, when they stay */
    while (left) {
        struct ql_node *next = node->next;
        size_t here = node_count(node) - k;
        if (here > left) here = left;
        if (here == node_count(node)) {
            unlink_free(ql, node);
        } else {
            node_open(ql, node);
            lp_delete_range(&node->lp, (long long)k, here);
            cut[cut[0] != NULL] = node;
        }
        left -= here;
        k = 0;
        node = next;
    }
    ql->count -= n;
    settle_ends(ql);
    compress_if_inner(ql, cut[0]);
    compress_if_inner(ql, cut[1]);
    return n;
}

/* LREM's deletions in one node (raw) that holds s; stops at limit. */
static void remove_in_node(struct ql_node *node, struct slice s, bool rev, unsigned long long limit,
                           size_t *removed) {
    if (!rev) {
        size_t pos = lp_find(node->lp, lp_first(node->lp), s, 0);
        while (pos != LP_NONE) {
            pos = lp_delete(&node->lp, pos, 1);
            ++*removed;
            if (limit && *removed == limit) break;
            if (pos != LP_NONE) pos = lp_find(node->lp, pos, s, 0);
        }
        return;
    }
    size_t pos = lp_last(node->lp);
    while (pos != LP_NONE) {
        size_t prev = lp_prev(node->lp, pos);
        if (lp_eq(node->lp, pos, s)) {
            lp_delete(&node->lp, pos, 1);
            ++*removed;
            if (limit && *removed == limit) break;
        }
        pos = prev;
    }
}

size_t ql_remove(struct quicklist *ql, struct slice s, long long count) {
    drop_scratch(ql);
    bool rev = count < 0, nodes_went = false;
    unsigned long long limit = rev ? 0ULL - (unsigned long long)count : (unsigned long long)count;
    size_t removed = 0;
    struct ql_node *node = rev ? ql->tail : ql->head;
    while (node && (limit == 0 || removed < limit)) {
        struct ql_node *after = rev ? node->prev : node->next;
        const struct listpack *view = node_read(ql, node);
        if (lp_find(view, lp_first(view), s, 0) != LP_NONE) {   /* only then open the node */
            node_open(ql, node);
            remove_in_node(node, s, rev, limit, &removed);
            if (lp_count(node->lp) == 0) {
                unlink_free(ql, node);
                nodes_went = true;
            } else {
                compress_if_inner(ql, node);
            }
        }
        node = after;
    }
    ql->count -= removed;
    if (nodes_went) settle_ends(ql);
    drop_scratch(ql);
    return removed;
}

bool ql_insert(struct quicklist *ql, struct slice pivot, struct slice s, bool after) {
    drop_scratch(ql);
    for (struct ql_node *n = ql->head; n; n = n->next) {
        const struct listpack *view = node_read(ql, n);
        size_t pos = lp_find(view, lp_first(view), pivot, 0);
        if (pos != LP_NONE) {
            node_open(ql, n);          /* same bytes: pos holds */
            insert_at(ql, n, pos, s, after);
            settle_ends(ql);
            settle_near(ql, n);
            return true;
        }
    }
    drop_scratch(ql);
    return false;
}

/* ------------------------------------------------------------ iteration */

bool ql_iter_init(struct ql_iter *it, const struct quicklist *ql, long long index, bool reverse) {
    size_t i, k;
    it->ql = ql;
    it->reverse = reverse;
    it->node = NULL;
    it->pos = LP_NONE;
    if (!norm_index(ql, index, &i)) return false;
    it->node = locate(ql, i, &k);
    it->pos = lp_seek(node_read(ql, it->node), (long long)k);
    return true;
}

/* The value read comes from the node's listpack or the read buffer; the
 * next node is only read on the next call, so the value stays valid until
 * then. */
bool ql_iter_next(struct ql_iter *it, struct lp_value *out) {
    struct ql_node *n = it->node;
    if (!n) return false;
    const struct listpack *lp = node_read(it->ql, n);
    if (it->pos == LP_NONE) it->pos = it->reverse ? lp_last(lp) : lp_first(lp);
    lp_get(lp, it->pos, out);
    it->pos = it->reverse ? lp_prev(lp, it->pos) : lp_next(lp, it->pos);
    if (it->pos == LP_NONE) it->node = it->reverse ? n->prev : n->next;
    return true;
}

/* ------------------------------------------------------------ checking */

static bool check_node(const struct quicklist *ql, const struct ql_node *n, bool inner) {
    if (!n->lp == !n->lzf) return false;                 /* exactly one form */
    if (n->lzf && !inner) return false;                  /* the end zones are raw */
    struct listpack *lp = n->lp ? n->lp : lzf_unpack(n->lzf);
    bool ok = lp_check(lp) && lp_count(lp) > 0;
    if (ok && n->lzf) ok = n->lzf->count == lp_count(lp) && n->lzf->raw == lp_bytes(lp);
    if (ok && lp_count(lp) > 1) ok = !ql_exceeds_limit(ql->fill, lp_bytes(lp), lp_count(lp));
    if (ok && n->lp && inner) {                          /* raw inside: it must not compress */
        struct ql_lzf *z = lzf_pack(lp);
        ok = z == NULL;
        free(z);
    }
    if (!n->lp) free(lp);
    return ok;
}

bool ql_check(const struct quicklist *ql) {
    size_t count = 0, nodes = 0;
    uint64_t d = ql->compress;
    const struct ql_node *prev = NULL;
    for (const struct ql_node *n = ql->head; n; prev = n, n = n->next) {
        if (n->prev != prev) return false;
        nodes++;
        count += node_count(n);
    }
    if (prev != ql->tail || count != ql->count || nodes != ql->nodes) return false;
    uint64_t i = 0;
    for (const struct ql_node *n = ql->head; n; n = n->next, i++)
        if (!check_node(ql, n, d && i >= d && nodes - 1 - i >= d)) return false;
    return true;
}
