/*
 * The ID tree: a B+tree from stream IDs to pointers.
 *
 * Leaves hold up to LEAF_MAX keys in order with their values, in two
 * arrays (keys, then values); inner nodes hold up to INNER_MAX children
 * and the separators between them. sep[i] (i >= 1) is a lower bound of child i and a strict
 * upper bound of child i - 1; sep[0] is unused so that the indexes of
 * separators and children line up. A separator need not be a key still in
 * the tree: removals leave separators alone unless the children around one
 * are merged or rebalanced. Every leaf is at depth height - 1, so a node's
 * kind follows from its depth and nodes carry no tag. The empty tree has no
 * node at all, which keeps empty pending lists at the size of the header.
 *
 * Fill. The usual B+tree keeps every node but the root at least half full.
 * Streams append at the high end, and an even split there would leave a
 * trail of half-full leaves, so a full node on the right spine (the last
 * child at every level, from the root down) that grows at its far right
 * keeps all its keys and starts a new node holding only the new one. The
 * spine is thus exempt from the lower bound: its nodes need only be
 * non-empty, while every other non-root node holds at least half. Only one
 * node per level is exempt and the root's first child is a subtree with no
 * exempt node, so the height stays logarithmic (a tree of height h holds at
 * least FILL_MIN^(h-1) keys, which keeps IDTREE_MAX_DEPTH out of reach).
 *
 * Removal. A node that falls below its bound is merged with a neighbour
 * (the right one when there is one, since removals mostly come from the low
 * end) when both fit in one node, which may make the parent fall below its
 * bound in turn, or else shares the keys of the pair evenly with it. A spine node falls
 * below only when empty, and is merged away into its left neighbour. A root
 * left with one child is replaced by it.
 *
 * Small trees. Every node is a block of 1520 bytes, which a stream of a
 * few entries or a short pending list would pay in full for a handful of
 * keys. So the leaf of a one-node tree (the root, while it is a leaf) is
 * allocated for as many keys as the next step of LEAF_CAPS (1, 2, 3, 5, 7,
 * ... 42, 63), and reallocated a step up when an insert finds it full; a
 * tree of one key costs 32 bytes of node. Only once it holds LEAF_MAX keys
 * does it split like any full leaf, and from then on every leaf has the
 * full capacity, so large trees keep their 24.5 or so bytes per key. When
 * removals leave the root leaf (or the root collapses onto a full-size
 * leaf) more than one step above the smallest capacity that holds its
 * keys, it is reallocated down to one step above that one; the step of
 * slack keeps a tree that goes up and down by a key at a boundary from
 * reallocating on every change. A resize copies at most 63 entries, as an
 * insert into a leaf may move anyway.
 *
 * Iteration has no leaf links to maintain: the iterator keeps the path
 * from the root and steps up to the nearest ancestor with a child left on
 * that side, then down its edge.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ringkv/idtree.h"

/* 63 keys and their values plus the 8-byte header make 1520 bytes, just
 * under the 1536-byte size class of mimalloc and jemalloc; inner nodes use
 * the same shape for the same reason. */
#define LEAF_MAX  63
#define INNER_MAX 63
#define FILL_MIN  31   /* the smaller half of a split */

/* A leaf holds cap keys and then cap values. cap is LEAF_MAX in every leaf
 * but the root of a one-node tree, whose capacity follows its count
 * through LEAF_CAPS (see "Small trees" above). */
struct leaf {
    uint32_t n;
    uint32_t cap;
    struct stream_id key[];   /* key[cap], then void *val[cap] */
};

static inline size_t leaf_size(uint32_t cap) {
    return offsetof(struct leaf, key) + cap * (sizeof(struct stream_id) + sizeof(void *));
}

static inline void **leaf_vals(const struct leaf *l) {
    return (void **)&l->key[l->cap];
}

/* Each capacity fills its allocation to within 16 bytes of a size class of
 * mimalloc (and most of jemalloc's): 32, 56, 80, 128, 176 (192), 248 (256),
 * 368 (384), 512, 752 (768), 1016 (1024) and 1520 (1536) bytes. */
static const uint8_t LEAF_CAPS[] = { 1, 2, 3, 5, 7, 10, 15, 21, 31, 42, LEAF_MAX };
#define NCAPS ((int)RK_ARRAY_LEN(LEAF_CAPS))

struct inner {
    uint32_t n;                        /* children */
    struct stream_id sep[INNER_MAX];
    void *child[INNER_MAX];            /* struct inner or struct leaf */
};

struct idtree {
    void *root;       /* NULL when empty */
    int height;       /* levels of nodes; leaves at height - 1 */
    size_t count;
    size_t bytes;     /* nodes allocated */
};

_Static_assert(offsetof(struct leaf, key) == 8 && sizeof(struct stream_id) == 16 &&
               sizeof(struct inner) == 1520,
               "a full leaf is as large as an inner node: 8 + 63 * 24 bytes");
_Static_assert(FILL_MIN <= LEAF_MAX - (LEAF_MAX + 1) / 2 &&
               FILL_MIN <= INNER_MAX - (INNER_MAX + 1) / 2,
               "the smaller half of a split must keep FILL_MIN");

/* ---------------------------------------------------------------- nodes */

static struct leaf *leaf_new(struct idtree *t, uint32_t cap) {
    struct leaf *l = rk_malloc(leaf_size(cap));
    l->n = 0;
    l->cap = cap;
    t->bytes += leaf_size(cap);
    return l;
}

/* The index in LEAF_CAPS of a capacity, and of the smallest one that holds
 * n keys. */
static int cap_index(uint32_t cap) {
    int i = 0;
    while (i < NCAPS - 1 && LEAF_CAPS[i] < cap) i++;
    return i;
}

static int fit_index(uint32_t n) {
    return cap_index(n);
}

/* Move the root leaf l to a block of capacity cap (>= l->n); returns it.
 * The values sit after the keys, so they move with the capacity. */
static struct leaf *leaf_resize(struct idtree *t, struct leaf *l, uint32_t cap) {
    size_t old = leaf_size(l->cap);
    if (cap < l->cap) {
        memmove(&l->key[cap], leaf_vals(l), l->n * sizeof(void *));
        l->cap = cap;
        l = rk_realloc(l, leaf_size(cap));
    } else {
        l = rk_realloc(l, leaf_size(cap));
        memmove(&l->key[cap], leaf_vals(l), l->n * sizeof(void *));
        l->cap = cap;
    }
    t->bytes = t->bytes - old + leaf_size(cap);
    return l;
}

/* The root leaf keeps at most one capacity step above the smallest that
 * holds its keys: shrink it when it has fallen further. */
static void root_leaf_fit(struct idtree *t) {
    struct leaf *l = t->root;
    int want = fit_index(l->n) + 1;
    if (want < cap_index(l->cap)) t->root = leaf_resize(t, l, LEAF_CAPS[want]);
}

static struct inner *inner_new(struct idtree *t) {
    struct inner *in = rk_malloc(sizeof *in);
    in->n = 0;
    t->bytes += sizeof *in;
    return in;
}

static void node_free(struct idtree *t, void *node, bool is_leaf) {
    t->bytes -= is_leaf ? leaf_size(((struct leaf *)node)->cap) : sizeof(struct inner);
    free(node);
}

/* First position whose key is >= id (l->n if none). */
static uint32_t leaf_lower(const struct leaf *l, struct stream_id id) {
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (stream_id_cmp(l->key[mid], id) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The child whose range holds id: the last one whose separator is <= id. */
static uint32_t inner_child(const struct inner *in, struct stream_id id) {
    uint32_t lo = 1, hi = in->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (stream_id_cmp(in->sep[mid], id) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

static void leaf_insert_at(struct leaf *l, uint32_t pos, struct stream_id id, void *val) {
    memmove(&l->key[pos + 1], &l->key[pos], (l->n - pos) * sizeof l->key[0]);
    memmove(&leaf_vals(l)[pos + 1], &leaf_vals(l)[pos], (l->n - pos) * sizeof(void *));
    l->key[pos] = id;
    leaf_vals(l)[pos] = val;
    l->n++;
}

static void leaf_remove_at(struct leaf *l, uint32_t pos) {
    memmove(&l->key[pos], &l->key[pos + 1], (l->n - pos - 1) * sizeof l->key[0]);
    memmove(&leaf_vals(l)[pos], &leaf_vals(l)[pos + 1], (l->n - pos - 1) * sizeof(void *));
    l->n--;
}

/* Child at pos (pos >= 1) with sep as its lower bound. */
static void inner_insert_at(struct inner *in, uint32_t pos, struct stream_id sep, void *child) {
    memmove(&in->sep[pos + 1], &in->sep[pos], (in->n - pos) * sizeof in->sep[0]);
    memmove(&in->child[pos + 1], &in->child[pos], (in->n - pos) * sizeof in->child[0]);
    in->sep[pos] = sep;
    in->child[pos] = child;
    in->n++;
}

/* Dropping child pos also drops sep[pos]; for pos 0 the next separator
 * moves into the unused slot, where it is ignored, and the parent's bound
 * covers the widened first child. */
static void inner_remove_at(struct inner *in, uint32_t pos) {
    memmove(&in->sep[pos], &in->sep[pos + 1], (in->n - pos - 1) * sizeof in->sep[0]);
    memmove(&in->child[pos], &in->child[pos + 1], (in->n - pos - 1) * sizeof in->child[0]);
    in->n--;
}

/* ---------------------------------------------------------------- tree */

struct idtree *idtree_new(void) {
    struct idtree *t = rk_malloc(sizeof *t);
    *t = (struct idtree){ .root = NULL, .height = 0, .count = 0, .bytes = 0 };
    return t;
}

static void free_subtree(void *node, int levels, void (*free_val)(void *val)) {
    if (levels == 1) {
        struct leaf *l = node;
        if (free_val)
            for (uint32_t i = 0; i < l->n; i++) free_val(leaf_vals(l)[i]);
    } else {
        struct inner *in = node;
        for (uint32_t i = 0; i < in->n; i++) free_subtree(in->child[i], levels - 1, free_val);
    }
    free(node);
}

void idtree_free(struct idtree *t, void (*free_val)(void *val)) {
    if (!t) return;
    if (t->root) free_subtree(t->root, t->height, free_val);
    free(t);
}

size_t idtree_count(const struct idtree *t) {
    return t->count;
}

size_t idtree_memory(const struct idtree *t) {
    return sizeof *t + t->bytes;
}

static struct leaf *find_leaf(const struct idtree *t, struct stream_id id) {
    void *node = t->root;
    for (int d = 0; d < t->height - 1; d++) {
        const struct inner *in = node;
        node = in->child[inner_child(in, id)];
    }
    return node;
}

void *idtree_find(const struct idtree *t, struct stream_id id) {
    if (!t->root) return NULL;
    struct leaf *l = find_leaf(t, id);
    uint32_t pos = leaf_lower(l, id);
    return pos < l->n && stream_id_cmp(l->key[pos], id) == 0 ? leaf_vals(l)[pos] : NULL;
}

bool idtree_replace(struct idtree *t, struct stream_id id, void *val) {
    if (!t->root) return false;
    struct leaf *l = find_leaf(t, id);
    uint32_t pos = leaf_lower(l, id);
    if (pos == l->n || stream_id_cmp(l->key[pos], id) != 0) return false;
    leaf_vals(l)[pos] = val;
    return true;
}

/* The path a change goes down: nodes, the child taken in each inner node,
 * and whether each node is on the right spine. */
struct path {
    void *node[IDTREE_MAX_DEPTH];
    uint32_t idx[IDTREE_MAX_DEPTH];
    bool spine[IDTREE_MAX_DEPTH];
};

static void descend(const struct idtree *t, struct stream_id id, struct path *p) {
    void *node = t->root;
    bool spine = true;
    for (int d = 0; d < t->height - 1; d++) {
        struct inner *in = node;
        uint32_t i = inner_child(in, id);
        p->node[d] = in;
        p->idx[d] = i;
        p->spine[d] = spine;
        spine = spine && i == in->n - 1;
        node = in->child[i];
    }
    p->node[t->height - 1] = node;
    p->spine[t->height - 1] = spine;
}

/* ---------------------------------------------------------------- insert */

/* Split the full leaf l for a key going to pos. Returns the new right
 * leaf, with the key in whichever half it belongs to. */
static struct leaf *leaf_split(struct idtree *t, struct leaf *l, bool spine, uint32_t pos,
                               struct stream_id id, void *val) {
    struct leaf *r = leaf_new(t, LEAF_MAX);
    if (spine && pos == l->n) {
        r->key[0] = id;
        leaf_vals(r)[0] = val;
        r->n = 1;
        return r;
    }
    /* The key goes to the left half when pos <= m, so the right half never
     * gains a new first key and both halves keep FILL_MIN. */
    uint32_t m = (LEAF_MAX + 1) / 2;
    r->n = l->n - m;
    memcpy(r->key, &l->key[m], r->n * sizeof r->key[0]);
    memcpy(leaf_vals(r), &leaf_vals(l)[m], r->n * sizeof(void *));
    l->n = m;
    if (pos <= m) leaf_insert_at(l, pos, id, val);
    else leaf_insert_at(r, pos - m, id, val);
    return r;
}

/* Split the full inner node in for a child going to pos; *sep comes in as
 * that child's separator and goes out as the new right node's. */
static struct inner *inner_split(struct idtree *t, struct inner *in, bool spine, uint32_t pos,
                                 struct stream_id *sep, void *child) {
    struct inner *r = inner_new(t);
    if (spine && pos == in->n) {
        r->child[0] = child;
        r->n = 1;
        return r;
    }
    uint32_t m = (INNER_MAX + 1) / 2;
    r->n = in->n - m;
    memcpy(r->sep, &in->sep[m], r->n * sizeof r->sep[0]);
    memcpy(r->child, &in->child[m], r->n * sizeof r->child[0]);
    in->n = m;
    struct stream_id up = in->sep[m];
    if (pos <= m) inner_insert_at(in, pos, *sep, child);
    else inner_insert_at(r, pos - m, *sep, child);
    *sep = up;
    return r;
}

bool idtree_insert(struct idtree *t, struct stream_id id, void *val) {
    if (!t->root) {
        struct leaf *l = leaf_new(t, LEAF_CAPS[0]);
        leaf_insert_at(l, 0, id, val);
        t->root = l;
        t->height = 1;
        t->count = 1;
        return true;
    }
    struct path p;
    descend(t, id, &p);
    int d = t->height - 1;
    struct leaf *l = p.node[d];
    uint32_t pos = leaf_lower(l, id);
    if (pos < l->n && stream_id_cmp(l->key[pos], id) == 0) return false;
    t->count++;
    if (l->n == l->cap && l->cap < LEAF_MAX) {
        /* the root leaf of a one-node tree grows a step */
        l = leaf_resize(t, l, LEAF_CAPS[cap_index(l->cap) + 1]);
        t->root = l;
    }
    if (l->n < l->cap) {
        leaf_insert_at(l, pos, id, val);
        return true;
    }
    struct leaf *r = leaf_split(t, l, p.spine[d], pos, id, val);
    struct stream_id sep = r->key[0];
    void *child = r;
    while (d-- > 0) {
        struct inner *in = p.node[d];
        uint32_t at = p.idx[d] + 1;
        if (in->n < INNER_MAX) {
            inner_insert_at(in, at, sep, child);
            return true;
        }
        child = inner_split(t, in, p.spine[d], at, &sep, child);
    }
    /* The root split: a new root over the two halves. */
    struct inner *root = inner_new(t);
    root->child[0] = t->root;
    root->sep[1] = sep;
    root->child[1] = child;
    root->n = 2;
    t->root = root;
    t->height++;
    return true;
}

/* ---------------------------------------------------------------- remove */

/* Child a + 1 of parent into child a. */
static void leaf_merge(struct idtree *t, struct inner *parent, uint32_t a) {
    struct leaf *l = parent->child[a], *r = parent->child[a + 1];
    memcpy(&l->key[l->n], r->key, r->n * sizeof r->key[0]);
    memcpy(&leaf_vals(l)[l->n], leaf_vals(r), r->n * sizeof(void *));
    l->n += r->n;
    node_free(t, r, true);
    inner_remove_at(parent, a + 1);
}

static void inner_merge(struct idtree *t, struct inner *parent, uint32_t a) {
    struct inner *l = parent->child[a], *r = parent->child[a + 1];
    if (r->n > 0) {
        r->sep[0] = parent->sep[a + 1];   /* the bound of r's first child */
        memcpy(&l->sep[l->n], r->sep, r->n * sizeof r->sep[0]);
        memcpy(&l->child[l->n], r->child, r->n * sizeof r->child[0]);
        l->n += r->n;
    }
    node_free(t, r, false);
    inner_remove_at(parent, a + 1);
}

/* Even out two neighbours whose keys do not fit in one leaf. */
static void leaf_balance(struct inner *parent, uint32_t a) {
    struct leaf *l = parent->child[a], *r = parent->child[a + 1];
    uint32_t total = l->n + r->n, want = total / 2;
    if (l->n < want) {
        uint32_t k = want - l->n;
        memcpy(&l->key[l->n], r->key, k * sizeof r->key[0]);
        memcpy(&leaf_vals(l)[l->n], leaf_vals(r), k * sizeof(void *));
        memmove(r->key, &r->key[k], (r->n - k) * sizeof r->key[0]);
        memmove(leaf_vals(r), &leaf_vals(r)[k], (r->n - k) * sizeof(void *));
    } else {
        uint32_t k = l->n - want;
        memmove(&r->key[k], r->key, r->n * sizeof r->key[0]);
        memmove(&leaf_vals(r)[k], leaf_vals(r), r->n * sizeof(void *));
        memcpy(r->key, &l->key[want], k * sizeof r->key[0]);
        memcpy(leaf_vals(r), &leaf_vals(l)[want], k * sizeof(void *));
    }
    l->n = want;
    r->n = total - want;
    parent->sep[a + 1] = r->key[0];
}

/* Children move through the parent: the separator between the two nodes
 * comes down as the bound of the first moved child, and the bound of the
 * new first child of r goes up in its place. */
static void inner_balance(struct inner *parent, uint32_t a) {
    struct inner *l = parent->child[a], *r = parent->child[a + 1];
    uint32_t total = l->n + r->n, want = total / 2;
    r->sep[0] = parent->sep[a + 1];
    if (l->n < want) {
        uint32_t k = want - l->n;
        memcpy(&l->sep[l->n], r->sep, k * sizeof r->sep[0]);
        memcpy(&l->child[l->n], r->child, k * sizeof r->child[0]);
        memmove(r->sep, &r->sep[k], (r->n - k) * sizeof r->sep[0]);
        memmove(r->child, &r->child[k], (r->n - k) * sizeof r->child[0]);
    } else {
        uint32_t k = l->n - want;
        memmove(&r->sep[k], r->sep, r->n * sizeof r->sep[0]);
        memmove(&r->child[k], r->child, r->n * sizeof r->child[0]);
        memcpy(r->sep, &l->sep[want], k * sizeof r->sep[0]);
        memcpy(r->child, &l->child[want], k * sizeof r->child[0]);
    }
    l->n = want;
    r->n = total - want;
    parent->sep[a + 1] = r->sep[0];
}

static uint32_t node_n(const void *node, bool is_leaf) {
    return is_leaf ? ((const struct leaf *)node)->n : ((const struct inner *)node)->n;
}

/* Node d of the path may have fallen below its bound: mend it, and its
 * ancestors while a merge takes a child from them. */
static void rebalance(struct idtree *t, struct path *p, int d) {
    for (; d > 0; d--) {
        bool is_leaf = d == t->height - 1;
        void *node = p->node[d];
        uint32_t n = node_n(node, is_leaf);
        if (n >= (p->spine[d] ? 1u : FILL_MIN)) return;
        struct inner *parent = p->node[d - 1];
        uint32_t i = p->idx[d - 1];
        if (parent->n == 1) {
            /* an emptied spine node, the only child of a spine node */
            node_free(t, node, is_leaf);
            parent->n = 0;
            continue;
        }
        uint32_t a = i + 1 < parent->n ? i : i - 1;
        uint32_t max = is_leaf ? LEAF_MAX : INNER_MAX;
        if (node_n(parent->child[a], is_leaf) + node_n(parent->child[a + 1], is_leaf) <= max) {
            if (is_leaf) leaf_merge(t, parent, a);
            else inner_merge(t, parent, a);
            continue;
        }
        if (is_leaf) leaf_balance(parent, a);
        else inner_balance(parent, a);
        return;
    }
    /* The root: gone when empty, replaced by its only child. */
    while (t->height > 1 && ((struct inner *)t->root)->n == 1) {
        struct inner *old = t->root;
        t->root = old->child[0];
        t->height--;
        node_free(t, old, false);
    }
    if (t->height == 1) {
        if (((struct leaf *)t->root)->n == 0) {
            node_free(t, t->root, true);
            t->root = NULL;
            t->height = 0;
        } else {
            root_leaf_fit(t);
        }
    }
}

bool idtree_remove(struct idtree *t, struct stream_id id, void **old) {
    if (!t->root) return false;
    struct path p;
    descend(t, id, &p);
    int d = t->height - 1;
    struct leaf *l = p.node[d];
    uint32_t pos = leaf_lower(l, id);
    if (pos == l->n || stream_id_cmp(l->key[pos], id) != 0) return false;
    if (old) *old = leaf_vals(l)[pos];
    leaf_remove_at(l, pos);
    t->count--;
    rebalance(t, &p, d);
    return true;
}

/* ---------------------------------------------------------------- ends */

static struct leaf *edge_leaf(const struct idtree *t, bool last) {
    void *node = t->root;
    for (int d = 0; d < t->height - 1; d++) {
        const struct inner *in = node;
        node = in->child[last ? in->n - 1 : 0];
    }
    return node;
}

static void put(const struct leaf *l, uint32_t pos, struct stream_id *id, void **val) {
    if (id) *id = l->key[pos];
    if (val) *val = leaf_vals(l)[pos];
}

bool idtree_first(const struct idtree *t, struct stream_id *id, void **val) {
    if (!t->root) return false;
    put(edge_leaf(t, false), 0, id, val);
    return true;
}

bool idtree_last(const struct idtree *t, struct stream_id *id, void **val) {
    if (!t->root) return false;
    const struct leaf *l = edge_leaf(t, true);
    put(l, l->n - 1, id, val);
    return true;
}

/* ---------------------------------------------------------------- iterator */

/* Before the first step the leaf position is where id would go (the first
 * key >= id, or one past the leaf's keys); after it, the key last returned,
 * or -1 / n once a step ran off the start / end, so that a step back the
 * other way finds the end key again. */
void idtree_seek(struct idtree_iter *it, const struct idtree *t, struct stream_id id) {
    it->depth = t->height;
    it->started = false;
    it->exact = false;
    if (!t->root) return;
    void *node = t->root;
    for (int d = 0; d < t->height - 1; d++) {
        struct inner *in = node;
        uint32_t i = inner_child(in, id);
        it->path[d] = in;
        it->pos[d] = (int)i;
        node = in->child[i];
    }
    struct leaf *l = node;
    uint32_t pos = leaf_lower(l, id);
    it->path[t->height - 1] = l;
    it->pos[t->height - 1] = (int)pos;
    it->exact = pos < l->n && stream_id_cmp(l->key[pos], id) == 0;
}

/* Fill the path below level d along its first (or last) children. */
static void iter_down(struct idtree_iter *it, int d, bool last) {
    for (; d < it->depth - 1; d++) {
        struct inner *in = it->path[d];
        void *child = in->child[it->pos[d]];
        it->path[d + 1] = child;
        if (d + 1 < it->depth - 1) it->pos[d + 1] = last ? (int)((struct inner *)child)->n - 1 : 0;
        else it->pos[d + 1] = last ? (int)((struct leaf *)child)->n - 1 : 0;
    }
}

static bool step_next(struct idtree_iter *it) {
    int d = it->depth - 1;
    struct leaf *l = it->path[d];
    if (it->pos[d] + 1 < (int)l->n) {
        it->pos[d]++;
        return true;
    }
    for (int up = d - 1; up >= 0; up--) {
        struct inner *in = it->path[up];
        if (it->pos[up] + 1 < (int)in->n) {
            it->pos[up]++;
            iter_down(it, up, false);
            return true;
        }
    }
    it->pos[d] = (int)l->n;   /* the last leaf: every ancestor is at its end */
    return false;
}

static bool step_prev(struct idtree_iter *it) {
    int d = it->depth - 1;
    if (it->pos[d] > 0) {
        it->pos[d]--;
        return true;
    }
    for (int up = d - 1; up >= 0; up--) {
        if (it->pos[up] > 0) {
            it->pos[up]--;
            iter_down(it, up, true);
            return true;
        }
    }
    it->pos[d] = -1;
    return false;
}

static bool iter_step(struct idtree_iter *it, bool forward, struct stream_id *id, void **val) {
    if (it->depth == 0) return false;
    int d = it->depth - 1;
    if (!it->started) {
        /* Place the position one before the key the step should return. */
        it->started = true;
        if (forward) it->pos[d]--;
        else if (it->exact) it->pos[d]++;
    }
    if (!(forward ? step_next(it) : step_prev(it))) return false;
    put(it->path[d], (uint32_t)it->pos[d], id, val);
    return true;
}

bool idtree_next(struct idtree_iter *it, struct stream_id *id, void **val) {
    return iter_step(it, true, id, val);
}

bool idtree_prev(struct idtree_iter *it, struct stream_id *id, void **val) {
    return iter_step(it, false, id, val);
}

/* ---------------------------------------------------------------- check */

#define CHECK(cond, ...)                                     \
    do {                                                     \
        if (!(cond)) {                                       \
            fprintf(stderr, "idtree_check: " __VA_ARGS__);   \
            fputc('\n', stderr);                             \
            return false;                                    \
        }                                                    \
    } while (0)

/* Keys of a subtree lie in [lo, hi); a missing bound is NULL. */
struct bounds {
    const struct stream_id *lo, *hi;
};

static bool in_bounds(struct stream_id id, struct bounds b) {
    return (!b.lo || stream_id_cmp(*b.lo, id) <= 0) && (!b.hi || stream_id_cmp(id, *b.hi) < 0);
}

static bool check_node(const void *node, int d, int height, bool spine, struct bounds b,
                       size_t *keys, size_t *bytes) {
    bool is_leaf = d == height - 1;
    uint32_t n = node_n(node, is_leaf);
    uint32_t max = is_leaf ? LEAF_MAX : INNER_MAX;
    uint32_t min = d == 0 ? (is_leaf ? 1 : 2) : spine ? 1 : FILL_MIN;
    CHECK(n >= min && n <= max, "depth %d: %u entries, bounds [%u, %u]", d, n, min, max);
    if (is_leaf) {
        const struct leaf *l = node;
        for (uint32_t i = 0; i < n; i++) {
            CHECK(leaf_vals(l)[i] != NULL, "depth %d: NULL value at %u", d, i);
            CHECK(in_bounds(l->key[i], b), "depth %d: key %u outside its separators", d, i);
            CHECK(i == 0 || stream_id_cmp(l->key[i - 1], l->key[i]) < 0, "depth %d: keys out of order at %u", d, i);
        }
        if (d == 0) {
            int c = cap_index(l->cap);
            CHECK(c < NCAPS && LEAF_CAPS[c] == l->cap && n <= l->cap && c <= fit_index(n) + 1,
                  "root leaf of %u keys with capacity %u", n, l->cap);
        } else {
            CHECK(l->cap == LEAF_MAX, "depth %d: leaf capacity %u", d, l->cap);
        }
        *keys += n;
        *bytes += leaf_size(l->cap);
        return true;
    }
    const struct inner *in = node;
    for (uint32_t i = 1; i < n; i++) {
        CHECK(in_bounds(in->sep[i], b), "depth %d: separator %u outside the parent's", d, i);
        CHECK(i == 1 || stream_id_cmp(in->sep[i - 1], in->sep[i]) < 0, "depth %d: separators out of order at %u", d, i);
    }
    *bytes += sizeof *in;
    for (uint32_t i = 0; i < n; i++) {
        struct bounds cb = { i == 0 ? b.lo : &in->sep[i], i + 1 < n ? &in->sep[i + 1] : b.hi };
        if (!check_node(in->child[i], d + 1, height, spine && i == n - 1, cb, keys, bytes))
            return false;
    }
    return true;
}

bool idtree_check(const struct idtree *t) {
    if (!t->root) {
        CHECK(t->height == 0 && t->count == 0 && t->bytes == 0,
              "empty tree with height %d, count %zu, bytes %zu", t->height, t->count, t->bytes);
        return true;
    }
    CHECK(t->height >= 1 && t->height <= IDTREE_MAX_DEPTH, "height %d", t->height);
    size_t keys = 0, bytes = 0;
    if (!check_node(t->root, 0, t->height, true, (struct bounds){ NULL, NULL }, &keys, &bytes))
        return false;
    CHECK(keys == t->count, "count %zu, counted %zu", t->count, keys);
    CHECK(bytes == t->bytes, "bytes %zu, counted %zu", t->bytes, bytes);
    return true;
}
