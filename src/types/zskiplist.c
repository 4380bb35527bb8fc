/*
 * The full sorted set: a skiplist with spans plus a member -> node map.
 *
 * Skiplist. Nodes are ordered by (score, member); a node of height h has h
 * forward links, and span[i] counts how many level-0 steps the link fwd[i]
 * jumps over, so summing spans on the way down gives a node's rank. Heights
 * are random with P(h > k) = 4^-k, as in Redis, so an operation visits
 * O(log n) nodes. A node is a single allocation:
 *
 *     score | backward | len | height | fwd[height] | span[height] | member
 *
 * with 32-bit spans (a set cannot hold 4G elements in memory anyway) and
 * the member bytes inline, so a 10-byte member at height 1 takes 46 bytes.
 * The header node has ZSL_MAXLEVEL levels and no member. The span of a link
 * to NULL is, as in Redis, the number of nodes after the link's owner; only
 * the levels below zs->level are kept up to date, and a level coming into
 * use again starts from the header with span = length.
 *
 * Map. Open addressing with linear probing over 1 << map_bits slots of 8
 * bytes. A slot is 0 (empty) or a node pointer with the low 16 bits of the
 * member's hash in its top 16 bits (user-space pointers fit in 48 bits), so
 * a probe dereferences only nodes whose tag matches. The home slot is the
 * TOP map_bits bits of the hash, which keeps the array sorted by hash: that
 * is what lets a SCAN cursor be a position in hash space (see zsl_scan), as
 * in the keyspace table. Deletion shifts later entries of the run back
 * instead of leaving tombstones. The map grows past 3/4 load and shrinks
 * below 1/8, rehashing in one go (hashes are recomputed from the members).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "ringkv/log.h"
#include "ringkv/zskiplist.h"

#define MAP_MIN_BITS 4
#define PTR_BITS     48
#define PTR_MASK     ((UINT64_C(1) << PTR_BITS) - 1)

/* ---------------------------------------------------------------- order */

static int member_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0) return c;
    return alen < blen ? -1 : alen > blen;
}

/* Node n against the key (score, member): <0, 0 or >0. */
static int node_cmp(const struct zsl_node *n, double score, struct slice member) {
    if (n->score < score) return -1;
    if (n->score > score) return 1;
    struct slice m = zsl_node_member(n);
    return member_cmp(m.ptr, m.len, member.ptr, member.len);
}

/* ---------------------------------------------------------------- ranges */

static bool score_gte_min(double v, const struct zrange_spec *r) {
    return r->minex ? v > r->min : v >= r->min;
}

static bool score_lte_max(double v, const struct zrange_spec *r) {
    return r->maxex ? v < r->max : v <= r->max;
}

bool zrange_contains(const struct zrange_spec *r, double score) {
    return score_gte_min(score, r) && score_lte_max(score, r);
}

static bool range_empty(const struct zrange_spec *r) {
    return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
}

static bool lex_gte_min(struct slice m, const struct zlex_spec *r) {
    if (r->min_kind == ZLEX_NEG_INF) return true;
    if (r->min_kind == ZLEX_POS_INF) return false;
    int c = member_cmp(m.ptr, m.len, r->min.ptr, r->min.len);
    return r->minex ? c > 0 : c >= 0;
}

static bool lex_lte_max(struct slice m, const struct zlex_spec *r) {
    if (r->max_kind == ZLEX_POS_INF) return true;
    if (r->max_kind == ZLEX_NEG_INF) return false;
    int c = member_cmp(m.ptr, m.len, r->max.ptr, r->max.len);
    return r->maxex ? c < 0 : c <= 0;
}

bool zlex_contains(const struct zlex_spec *r, struct slice member) {
    return lex_gte_min(member, r) && lex_lte_max(member, r);
}

/* min against max, with -inf and +inf below and above every value. */
static bool lex_empty(const struct zlex_spec *r) {
    int c;
    if (r->min_kind == r->max_kind && r->min_kind != ZLEX_VALUE) c = 0;
    else if (r->min_kind == ZLEX_NEG_INF || r->max_kind == ZLEX_POS_INF) c = -1;
    else if (r->min_kind == ZLEX_POS_INF || r->max_kind == ZLEX_NEG_INF) c = 1;
    else c = member_cmp(r->min.ptr, r->min.len, r->max.ptr, r->max.len);
    return c > 0 || (c == 0 && (r->minex || r->maxex));
}

/* Redis parses score bounds with strtod on the NUL-terminated argument, so
 * leading spaces, hex, "inf" and "" (as 0) are accepted, and an embedded
 * NUL ends the number. We copy the slice to get the same terminator. */
static bool parse_score_bound(struct slice s, double *v, bool *ex) {
    *ex = s.len > 0 && s.ptr[0] == '(';
    if (*ex) { s.ptr++; s.len--; }
    char small[64];
    char *buf = s.len < sizeof(small) ? small : rk_malloc(s.len + 1);
    if (s.len) memcpy(buf, s.ptr, s.len);
    buf[s.len] = '\0';
    char *end;
    *v = strtod(buf, &end);
    bool ok = end[0] == '\0' && !isnan(*v);
    if (buf != small) free(buf);
    return ok;
}

bool zrange_parse(struct slice min, struct slice max, struct zrange_spec *out) {
    return parse_score_bound(min, &out->min, &out->minex) &&
           parse_score_bound(max, &out->max, &out->maxex);
}

/* As Redis: "+" / "-" alone (up to a NUL), or "[" / "(" then the value. */
static bool parse_lex_bound(struct slice s, struct slice *v, uint8_t *kind, bool *ex) {
    if (s.len == 0) return false;
    switch (s.ptr[0]) {
    case '+':
    case '-':
        if (s.len > 1 && s.ptr[1] != '\0') return false;
        *kind = s.ptr[0] == '+' ? ZLEX_POS_INF : ZLEX_NEG_INF;
        *ex = true;
        *v = (struct slice){ "", 0 };
        return true;
    case '(':
    case '[':
        *kind = ZLEX_VALUE;
        *ex = s.ptr[0] == '(';
        *v = (struct slice){ s.ptr + 1, s.len - 1 };
        return true;
    default:
        return false;
    }
}

bool zlex_parse(struct slice min, struct slice max, struct zlex_spec *out) {
    return parse_lex_bound(min, &out->min, &out->min_kind, &out->minex) &&
           parse_lex_bound(max, &out->max, &out->max_kind, &out->maxex);
}

/* ---------------------------------------------------------------- map */

uint64_t zsl_member_hash(struct slice member) {
    return XXH3_64bits(member.ptr, member.len);
}

static inline struct zsl_node *slot_node(uint64_t slot) {
    return (struct zsl_node *)(uintptr_t)(slot & PTR_MASK);
}

static inline uint64_t slot_make(const struct zsl_node *n, uint64_t hash) {
    uint64_t p = (uint64_t)(uintptr_t)n;
    if (RK_UNLIKELY(p >> PTR_BITS)) {
        rk_log(LL_WARNING, "zskiplist node address above 2^48");
        abort();
    }
    return (hash << PTR_BITS) | p;
}

static inline size_t map_home(const struct zskiplist *zs, uint64_t hash) {
    return (size_t)(hash >> (64 - zs->map_bits));
}

static inline size_t map_mask(const struct zskiplist *zs) {
    return ((size_t)1 << zs->map_bits) - 1;
}

static void map_put(struct zskiplist *zs, struct zsl_node *n, uint64_t hash) {
    size_t mask = map_mask(zs);
    size_t i = map_home(zs, hash);
    while (zs->map[i]) i = (i + 1) & mask;
    zs->map[i] = slot_make(n, hash);
}

static void map_resize(struct zskiplist *zs, unsigned bits) {
    uint64_t *old = zs->map;
    size_t oldcap = (size_t)1 << zs->map_bits;
    zs->map = rk_calloc((size_t)1 << bits, sizeof(uint64_t));
    zs->map_bits = bits;
    for (size_t i = 0; i < oldcap; i++) {
        if (!old[i]) continue;
        struct zsl_node *n = slot_node(old[i]);
        map_put(zs, n, zsl_member_hash(zsl_node_member(n)));
    }
    free(old);
}

/* Called with length already counting the new node. */
static void map_grow_if_needed(struct zskiplist *zs) {
    size_t cap = (size_t)1 << zs->map_bits;
    if (zs->length * 4 > cap * 3) map_resize(zs, zs->map_bits + 1);
}

/* After deletes: below 1/8 load, shrink to at most 1/2 load. */
static void map_fit(struct zskiplist *zs) {
    size_t cap = (size_t)1 << zs->map_bits;
    if (zs->map_bits <= MAP_MIN_BITS || zs->length * 8 >= cap) return;
    unsigned bits = MAP_MIN_BITS;
    while (((size_t)1 << bits) < zs->length * 2) bits++;
    if (bits < zs->map_bits) map_resize(zs, bits);
}

static uint64_t *map_lookup(const struct zskiplist *zs, struct slice member, uint64_t hash) {
    size_t mask = map_mask(zs);
    uint64_t tag = hash & 0xFFFF;
    for (size_t i = map_home(zs, hash);; i = (i + 1) & mask) {
        uint64_t s = zs->map[i];
        if (!s) return NULL;
        if ((s >> PTR_BITS) != tag) continue;
        struct zsl_node *n = slot_node(s);
        if (n->len == member.len &&
            (member.len == 0 || memcmp(zsl_node_member(n).ptr, member.ptr, member.len) == 0))
            return &zs->map[i];
    }
}

/* Remove the slot at i and shift the rest of its run back over the hole. */
static void map_remove_at(struct zskiplist *zs, size_t hole) {
    size_t mask = map_mask(zs);
    size_t j = hole;
    for (;;) {
        j = (j + 1) & mask;
        uint64_t s = zs->map[j];
        if (!s) break;
        size_t home = map_home(zs, zsl_member_hash(zsl_node_member(slot_node(s))));
        /* The entry at j may move to the hole unless its home lies
         * cyclically within (hole, j]. */
        bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (stays) continue;
        zs->map[hole] = s;
        hole = j;
    }
    zs->map[hole] = 0;
}

static void map_remove_node(struct zskiplist *zs, const struct zsl_node *n) {
    size_t mask = map_mask(zs);
    size_t i = map_home(zs, zsl_member_hash(zsl_node_member(n)));
    while (slot_node(zs->map[i]) != n) i = (i + 1) & mask;
    map_remove_at(zs, i);
}

/* ---------------------------------------------------------------- nodes */

static size_t node_size(unsigned height, size_t len) {
    return sizeof(struct zsl_node) + height * (sizeof(struct zsl_node *) + sizeof(uint32_t)) + len;
}

static _Thread_local uint64_t level_rng = 0x2545F4914F6CDD1DULL;

/* 1 + the number of trailing zero bit pairs: P(height > k) = 4^-k. */
static unsigned random_height(void) {
    uint64_t x = level_rng;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    level_rng = x;
    unsigned h = x ? 1 + (unsigned)__builtin_ctzll(x) / 2 : ZSL_MAXLEVEL;
    return h < ZSL_MAXLEVEL ? h : ZSL_MAXLEVEL;
}

static struct zsl_node *node_new(unsigned height, struct slice member, double score) {
    struct zsl_node *n = rk_malloc(node_size(height, member.len));
    n->score = score;
    n->backward = NULL;
    n->len = (uint32_t)member.len;
    n->height = (uint8_t)height;
    if (member.len) memcpy((char *)zsl_node_member(n).ptr, member.ptr, member.len);
    return n;
}

/* ---------------------------------------------------------------- skiplist */

struct zskiplist *zsl_new(void) {
    struct zskiplist *zs = rk_malloc(sizeof(*zs));
    zs->header = node_new(ZSL_MAXLEVEL, (struct slice){ "", 0 }, 0);
    uint32_t *span = zsl_node_spans(zs->header);
    for (int i = 0; i < ZSL_MAXLEVEL; i++) {
        zs->header->fwd[i] = NULL;
        span[i] = 0;
    }
    zs->tail = NULL;
    zs->length = 0;
    zs->level = 1;
    zs->map_bits = MAP_MIN_BITS;
    zs->map = rk_calloc((size_t)1 << MAP_MIN_BITS, sizeof(uint64_t));
    zs->node_bytes = 0;
    return zs;
}

void zsl_free(struct zskiplist *zs) {
    if (!zs) return;
    struct zsl_node *n = zs->header->fwd[0];
    while (n) {
        struct zsl_node *next = n->fwd[0];
        free(n);
        n = next;
    }
    free(zs->header);
    free(zs->map);
    free(zs);
}

size_t zsl_memory(const struct zskiplist *zs) {
    return sizeof(*zs) + node_size(ZSL_MAXLEVEL, 0) + zs->node_bytes +
           ((size_t)1 << zs->map_bits) * sizeof(uint64_t);
}

/* Link a detached node at its place for (n->score, member), with its height. */
static void link_node(struct zskiplist *zs, struct zsl_node *n) {
    struct zsl_node *update[ZSL_MAXLEVEL];
    uint32_t rank[ZSL_MAXLEVEL];
    struct slice m = zsl_node_member(n);
    struct zsl_node *x = zs->header;
    for (int i = zs->level - 1; i >= 0; i--) {
        rank[i] = i == zs->level - 1 ? 0 : rank[i + 1];
        while (x->fwd[i] && node_cmp(x->fwd[i], n->score, m) < 0) {
            rank[i] += zsl_node_spans(x)[i];
            x = x->fwd[i];
        }
        update[i] = x;
    }
    int h = n->height;
    if (h > zs->level) {
        for (int i = zs->level; i < h; i++) {
            rank[i] = 0;
            update[i] = zs->header;
            zsl_node_spans(zs->header)[i] = (uint32_t)zs->length;
        }
        zs->level = h;
    }
    uint32_t *nspan = zsl_node_spans(n);
    for (int i = 0; i < h; i++) {
        uint32_t *uspan = zsl_node_spans(update[i]);
        n->fwd[i] = update[i]->fwd[i];
        update[i]->fwd[i] = n;
        nspan[i] = uspan[i] - (rank[0] - rank[i]);
        uspan[i] = rank[0] - rank[i] + 1;
    }
    for (int i = h; i < zs->level; i++) zsl_node_spans(update[i])[i]++;
    n->backward = update[0] == zs->header ? NULL : update[0];
    if (n->fwd[0]) n->fwd[0]->backward = n;
    else zs->tail = n;
    zs->length++;
}

/* Unlink x given, for each level, the last node before it. */
static void unlink_with(struct zskiplist *zs, struct zsl_node *x, struct zsl_node **update) {
    uint32_t *xspan = zsl_node_spans(x);
    for (int i = 0; i < zs->level; i++) {
        uint32_t *uspan = zsl_node_spans(update[i]);
        if (update[i]->fwd[i] == x) {
            uspan[i] += xspan[i] - 1;
            update[i]->fwd[i] = x->fwd[i];
        } else {
            uspan[i] -= 1;
        }
    }
    if (x->fwd[0]) x->fwd[0]->backward = x->backward;
    else zs->tail = x->backward;
    while (zs->level > 1 && zs->header->fwd[zs->level - 1] == NULL) zs->level--;
    zs->length--;
}

static void unlink_node(struct zskiplist *zs, struct zsl_node *n) {
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct slice m = zsl_node_member(n);
    struct zsl_node *x = zs->header;
    for (int i = zs->level - 1; i >= 0; i--) {
        while (x->fwd[i] && node_cmp(x->fwd[i], n->score, m) < 0) x = x->fwd[i];
        update[i] = x;
    }
    unlink_with(zs, n, update);
}

/* Unlinked already: drop from the map and free. */
static void free_node(struct zskiplist *zs, struct zsl_node *n) {
    map_remove_node(zs, n);
    zs->node_bytes -= node_size(n->height, n->len);
    free(n);
}

struct zsl_node *zsl_insert(struct zskiplist *zs, struct slice member, double score) {
    unsigned h = random_height();
    struct zsl_node *n = node_new(h, member, score);
    zs->node_bytes += node_size(h, member.len);
    link_node(zs, n);
    map_grow_if_needed(zs);
    map_put(zs, n, zsl_member_hash(member));
    return n;
}

struct zsl_node *zsl_find(const struct zskiplist *zs, struct slice member) {
    uint64_t *slot = map_lookup(zs, member, zsl_member_hash(member));
    return slot ? slot_node(*slot) : NULL;
}

bool zsl_score(const struct zskiplist *zs, struct slice member, double *score) {
    struct zsl_node *n = zsl_find(zs, member);
    if (n) *score = n->score;
    return n != NULL;
}

void zsl_update_score(struct zskiplist *zs, struct zsl_node *n, double score) {
    struct slice m = zsl_node_member(n);
    struct zsl_node *prev = n->backward, *next = n->fwd[0];
    if ((!prev || node_cmp(prev, score, m) < 0) && (!next || node_cmp(next, score, m) > 0)) {
        n->score = score;
        return;
    }
    unlink_node(zs, n);
    n->score = score;
    link_node(zs, n);
}

void zsl_delete_node(struct zskiplist *zs, struct zsl_node *n) {
    unlink_node(zs, n);
    free_node(zs, n);
    map_fit(zs);
}

bool zsl_delete(struct zskiplist *zs, struct slice member) {
    struct zsl_node *n = zsl_find(zs, member);
    if (n) zsl_delete_node(zs, n);
    return n != NULL;
}

size_t zsl_rank_node(const struct zskiplist *zs, const struct zsl_node *n, bool reverse) {
    struct slice m = zsl_node_member(n);
    const struct zsl_node *x = zs->header;
    size_t rank = 0;
    for (int i = zs->level - 1; i >= 0; i--) {
        while (x->fwd[i] && node_cmp(x->fwd[i], n->score, m) <= 0) {
            rank += zsl_node_spans(x)[i];
            x = x->fwd[i];
        }
        if (x == n) return reverse ? zs->length - rank : rank - 1;
    }
    return ZSL_NONE;   /* not reached for a node of this set */
}

size_t zsl_rank(const struct zskiplist *zs, struct slice member, bool reverse) {
    struct zsl_node *n = zsl_find(zs, member);
    return n ? zsl_rank_node(zs, n, reverse) : ZSL_NONE;
}

struct zsl_node *zsl_at_rank(const struct zskiplist *zs, size_t rank) {
    if (rank >= zs->length) return NULL;
    size_t want = rank + 1, traversed = 0;
    struct zsl_node *x = zs->header;
    for (int i = zs->level - 1; i >= 0; i--) {
        while (x->fwd[i] && traversed + zsl_node_spans(x)[i] <= want) {
            traversed += zsl_node_spans(x)[i];
            x = x->fwd[i];
        }
        if (traversed == want) return x;
    }
    return NULL;
}

/* ---------------------------------------------------------------- ranges */

struct zsl_node *zsl_first_in_range(const struct zskiplist *zs, const struct zrange_spec *r) {
    if (range_empty(r) || !zs->tail || !score_gte_min(zs->tail->score, r)) return NULL;
    struct zsl_node *x = zs->header;
    for (int i = zs->level - 1; i >= 0; i--)
        while (x->fwd[i] && !score_gte_min(x->fwd[i]->score, r)) x = x->fwd[i];
    x = x->fwd[0];
    return x && score_lte_max(x->score, r) ? x : NULL;
}

struct zsl_node *zsl_last_in_range(const struct zskiplist *zs, const struct zrange_spec *r) {
    struct zsl_node *first = zsl_first(zs);
    if (range_empty(r) || !first || !score_lte_max(first->score, r)) return NULL;
    struct zsl_node *x = zs->header;
    for (int i = zs->level - 1; i >= 0; i--)
        while (x->fwd[i] && score_lte_max(x->fwd[i]->score, r)) x = x->fwd[i];
    return x != zs->header && score_gte_min(x->score, r) ? x : NULL;
}

struct zsl_node *zsl_first_in_lex(const struct zskiplist *zs, const struct zlex_spec *r) {
    if (lex_empty(r) || !zs->tail || !lex_gte_min(zsl_node_member(zs->tail), r)) return NULL;
    struct zsl_node *x = zs->header;
    for (int i = zs->level - 1; i >= 0; i--)
        while (x->fwd[i] && !lex_gte_min(zsl_node_member(x->fwd[i]), r)) x = x->fwd[i];
    x = x->fwd[0];
    return x && lex_lte_max(zsl_node_member(x), r) ? x : NULL;
}

struct zsl_node *zsl_last_in_lex(const struct zskiplist *zs, const struct zlex_spec *r) {
    struct zsl_node *first = zsl_first(zs);
    if (lex_empty(r) || !first || !lex_lte_max(zsl_node_member(first), r)) return NULL;
    struct zsl_node *x = zs->header;
    for (int i = zs->level - 1; i >= 0; i--)
        while (x->fwd[i] && lex_lte_max(zsl_node_member(x->fwd[i]), r)) x = x->fwd[i];
    return x != zs->header && lex_gte_min(zsl_node_member(x), r) ? x : NULL;
}

size_t zsl_count_in_range(const struct zskiplist *zs, const struct zrange_spec *r) {
    struct zsl_node *first = zsl_first_in_range(zs, r);
    if (!first) return 0;
    struct zsl_node *last = zsl_last_in_range(zs, r);
    return zsl_rank_node(zs, last, false) - zsl_rank_node(zs, first, false) + 1;
}

size_t zsl_count_in_lex(const struct zskiplist *zs, const struct zlex_spec *r) {
    struct zsl_node *first = zsl_first_in_lex(zs, r);
    if (!first) return 0;
    struct zsl_node *last = zsl_last_in_lex(zs, r);
    /* Lex ranges only make sense when all scores are equal; with mixed
     * scores the two ends can miss each other or cross. */
    if (!last) return 0;
    size_t lo = zsl_rank_node(zs, first, false), hi = zsl_rank_node(zs, last, false);
    return hi >= lo ? hi - lo + 1 : 0;
}

/* Delete the run of nodes starting at x while cond holds; update[] holds
 * the last node before x on each level and stays right as the run goes. */
#define DELETE_RUN(zs, x, update, cond, removed)          \
    while ((x) && (cond)) {                                \
        struct zsl_node *next_ = (x)->fwd[0];              \
        unlink_with((zs), (x), (update));                  \
        free_node((zs), (x));                              \
        (removed)++;                                       \
        (x) = next_;                                       \
    }

size_t zsl_delete_range_by_score(struct zskiplist *zs, const struct zrange_spec *r) {
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *x = zs->header;
    size_t removed = 0;
    for (int i = zs->level - 1; i >= 0; i--) {
        while (x->fwd[i] && !score_gte_min(x->fwd[i]->score, r)) x = x->fwd[i];
        update[i] = x;
    }
    x = x->fwd[0];
    DELETE_RUN(zs, x, update, score_lte_max(x->score, r), removed);
    map_fit(zs);
    return removed;
}

size_t zsl_delete_range_by_lex(struct zskiplist *zs, const struct zlex_spec *r) {
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *x = zs->header;
    size_t removed = 0;
    for (int i = zs->level - 1; i >= 0; i--) {
        while (x->fwd[i] && !lex_gte_min(zsl_node_member(x->fwd[i]), r)) x = x->fwd[i];
        update[i] = x;
    }
    x = x->fwd[0];
    DELETE_RUN(zs, x, update, lex_lte_max(zsl_node_member(x), r), removed);
    map_fit(zs);
    return removed;
}

size_t zsl_delete_range_by_rank(struct zskiplist *zs, size_t start, size_t end) {
    if (start >= zs->length || start > end) return 0;
    if (end >= zs->length) end = zs->length - 1;
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *x = zs->header;
    size_t traversed = 0, removed = 0;
    for (int i = zs->level - 1; i >= 0; i--) {
        while (x->fwd[i] && traversed + zsl_node_spans(x)[i] <= start) {
            traversed += zsl_node_spans(x)[i];
            x = x->fwd[i];
        }
        update[i] = x;
    }
    x = x->fwd[0];
    size_t todo = end - start + 1;
    DELETE_RUN(zs, x, update, removed < todo, removed);
    map_fit(zs);
    return removed;
}

/* ---------------------------------------------------------------- scan */

uint64_t zsl_scan(const struct zskiplist *zs, uint64_t cursor, size_t slots,
                  zsl_scan_fn fn, void *ctx) {
    size_t cap = (size_t)1 << zs->map_bits, mask = cap - 1;
    unsigned shift = 64 - zs->map_bits;
    size_t start = (size_t)(cursor >> shift);
    if (slots == 0) slots = 1;
    size_t end = slots >= cap - start ? cap : start + slots;
    uint64_t next = end == cap ? 0 : (uint64_t)end << shift;
    /* Every member hashing into [cursor, next) has its home in
     * [start, end) and sits at or after it with no empty slot between:
     * read the homes, then on until an empty slot. */
    for (size_t k = 0; k < cap; k++) {
        uint64_t s = zs->map[(start + k) & mask];
        if (k >= end - start && !s) break;
        if (!s) continue;
        const struct zsl_node *n = slot_node(s);
        uint64_t h = zsl_member_hash(zsl_node_member(n));
        if (h >= cursor && (next == 0 || h < next)) fn(ctx, n);
    }
    return next;
}

/* ---------------------------------------------------------------- check */

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            fprintf(stderr, "zsl_check: " __VA_ARGS__);   \
            fputc('\n', stderr);                          \
            return false;                                 \
        }                                                 \
    } while (0)

bool zsl_check(const struct zskiplist *zs) {
    CHECK(zs->level >= 1 && zs->level <= ZSL_MAXLEVEL, "level %d", zs->level);
    CHECK(zs->level == 1 || zs->header->fwd[zs->level - 1], "top level %d empty", zs->level);
    for (int i = zs->level; i < ZSL_MAXLEVEL; i++)
        CHECK(zs->header->fwd[i] == NULL, "header link above level at %d", i);

    /* Level 0: order, backward links, tail, length, node bytes, map. */
    size_t count = 0, bytes = 0;
    const struct zsl_node *prev = NULL;
    for (const struct zsl_node *n = zs->header->fwd[0]; n; prev = n, n = n->fwd[0]) {
        struct slice m = zsl_node_member(n);
        CHECK(!isnan(n->score), "NaN score");
        CHECK(n->height >= 1 && n->height <= zs->level, "height %u", n->height);
        CHECK(n->backward == prev, "backward link at position %zu", count);
        if (prev) CHECK(node_cmp(prev, n->score, m) < 0, "order at position %zu", count);
        CHECK(zsl_find(zs, m) == n, "map lookup at position %zu", count);
        bytes += node_size(n->height, n->len);
        count++;
    }
    CHECK(zs->tail == prev, "tail");
    CHECK(count == zs->length, "length %zu counted %zu", zs->length, count);
    CHECK(bytes == zs->node_bytes, "node bytes %zu counted %zu", zs->node_bytes, bytes);

    /* Every level: each link's span is the number of level-0 steps it
     * covers; a NULL link spans the nodes after its owner. */
    for (int i = 0; i < zs->level; i++) {
        const struct zsl_node *x = zs->header, *walk = zs->header;
        size_t pos = 0;   /* level-0 position of x, header = 0 */
        for (;;) {
            uint32_t span = zsl_node_spans(x)[i];
            const struct zsl_node *target = x->fwd[i];
            if (!target) {
                CHECK(span == count - pos, "level %d: null span %u at %zu, want %zu",
                      i, span, pos, count - pos);
                break;
            }
            CHECK(target->height > i, "level %d: link to a lower node", i);
            for (uint32_t s = 0; s < span; s++) {
                walk = walk->fwd[0];
                CHECK(walk, "level %d: span %u overruns at %zu", i, span, pos);
            }
            CHECK(walk == target, "level %d: span %u at %zu misses its target", i, span, pos);
            pos += span;
            x = target;
        }
    }

    /* Map: exactly one slot per node, tags matching, load within limits. */
    size_t cap = (size_t)1 << zs->map_bits, used = 0;
    for (size_t i = 0; i < cap; i++) {
        if (!zs->map[i]) continue;
        const struct zsl_node *n = slot_node(zs->map[i]);
        uint64_t h = zsl_member_hash(zsl_node_member(n));
        CHECK((zs->map[i] >> PTR_BITS) == (h & 0xFFFF), "map tag at slot %zu", i);
        used++;
    }
    CHECK(used == count, "map holds %zu slots for %zu nodes", used, count);
    CHECK(used * 4 <= cap * 3, "map over 3/4 load");
    return true;
}
