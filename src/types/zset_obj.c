/*
 * The sorted set value object: a listpack of member,score pairs for small
 * sets, a zskiplist for big ones, with Redis 7.0's conversion rules
 * (t_zset.c's zsetAdd / zsetConvertToListpackIfNeeded). See zset_obj.h.
 *
 * The encoding lives in the low bit of the pointer, as for hashes.
 */
#include <math.h>
#include <stdlib.h>

#include "ringkv/zset_obj.h"
#include "ringkv/config.h"
#include "ringkv/obj_types.h"
#include "ringkv/util.h"

#define ZSL_TAG ((uintptr_t)1)

static inline bool is_zsl(const struct zset_obj *z) { return ((uintptr_t)z & ZSL_TAG) != 0; }
static inline struct listpack *as_lp(const struct zset_obj *z) { return (struct listpack *)(uintptr_t)z; }
static inline struct zskiplist *as_zsl(const struct zset_obj *z) {
    return (struct zskiplist *)((uintptr_t)z & ~ZSL_TAG);
}
static inline struct zset_obj *from_lp(struct listpack *lp) { return (struct zset_obj *)lp; }
static inline struct zset_obj *from_zsl(struct zskiplist *zs) {
    return (struct zset_obj *)((uintptr_t)zs | ZSL_TAG);
}

struct zset_obj *zset_new(void) { return from_lp(lp_new()); }
struct zset_obj *zset_new_skiplist(void) { return from_zsl(zsl_new()); }
struct zset_obj *zset_from_zsl(struct zskiplist *zs) { return from_zsl(zs); }

void zset_free(struct zset_obj *z) {
    if (!z) return;
    if (is_zsl(z)) zsl_free(as_zsl(z));
    else lp_free(as_lp(z));
}

struct zset_obj *zset_dup(const struct zset_obj *z) {
    if (!is_zsl(z)) {
        const struct listpack *lp = as_lp(z);
        struct listpack *n = rk_malloc(lp_bytes(lp));
        memcpy(n, lp, lp_bytes(lp));
        return from_lp(n);
    }
    struct zskiplist *n = zsl_new();
    for (const struct zsl_node *x = zsl_first(as_zsl(z)); x; x = zsl_next(x))
        zsl_insert(n, zsl_node_member(x), x->score);
    return from_zsl(n);
}

bool zset_is_listpack(const struct zset_obj *z) { return !is_zsl(z); }
const char *zset_encoding(const struct zset_obj *z) { return is_zsl(z) ? "skiplist" : "listpack"; }
size_t zset_len(const struct zset_obj *z) {
    return is_zsl(z) ? zsl_count(as_zsl(z)) : lp_count(as_lp(z)) / 2;
}
struct listpack *zset_lp(const struct zset_obj *z) { return is_zsl(z) ? NULL : as_lp(z); }
struct zskiplist *zset_zsl(const struct zset_obj *z) { return is_zsl(z) ? as_zsl(z) : NULL; }

/* ------------------------------------------------------------ listpack */

static struct slice lp_text(const struct listpack *lp, size_t pos, char buf[LP_INTBUF_SIZE]) {
    struct lp_value v;
    lp_get(lp, pos, &v);
    return lp_value_str(&v, buf);
}

static double lp_score(const struct listpack *lp, size_t pos) {
    struct lp_value v;
    lp_get(lp, pos, &v);
    if (v.is_int) return (double)v.ival;
    char buf[128];
    size_t n = v.str.len < sizeof buf - 1 ? v.str.len : sizeof buf - 1;
    memcpy(buf, v.str.ptr, n);
    buf[n] = '\0';
    return strtod(buf, NULL);
}

static int member_cmp(struct slice a, struct slice b) {
    size_t n = a.len < b.len ? a.len : b.len;
    int r = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (r) return r;
    return a.len < b.len ? -1 : a.len > b.len ? 1 : 0;
}

static size_t zzl_find(const struct listpack *lp, struct slice member) {
    size_t first = lp_first(lp);
    return first == LP_NONE ? LP_NONE : lp_find(lp, first, member, 1);
}

/* The text a listpack keeps for a score. As in Redis 7.0 a negative zero
 * is stored as 0 (only a skiplist keeps the sign). */
static struct slice score_text(char buf[64], double score) {
    if (score == 0) score = 0;
    return (struct slice){ buf, (size_t)d_to_str(buf, 64, score) };
}

static void zzl_insert(struct listpack **lpp, struct slice member, double score) {
    char sbuf[64];
    struct slice st = score_text(sbuf, score);
    struct listpack *lp = *lpp;
    char mbuf[LP_INTBUF_SIZE];
    for (size_t pos = lp_first(lp); pos != LP_NONE; pos = lp_next_pair(lp, pos)) {
        double s = lp_score(lp, lp_next(lp, pos));
        if (s > score || (s == score && member_cmp(lp_text(lp, pos, mbuf), member) > 0)) {
            size_t mp = lp_insert_before(lpp, pos, member);
            lp_insert_after(lpp, mp, st);
            return;
        }
    }
    lp_push(lpp, member, true);
    lp_push(lpp, st, true);
}

void zset_convert(struct zset_obj **zp) {
    if (is_zsl(*zp)) return;
    struct listpack *lp = as_lp(*zp);
    struct zskiplist *zs = zsl_new();
    char buf[LP_INTBUF_SIZE];
    for (size_t pos = lp_first(lp); pos != LP_NONE;) {
        size_t sp = lp_next(lp, pos);
        zsl_insert(zs, lp_text(lp, pos, buf), lp_score(lp, sp));
        pos = lp_next(lp, sp);
    }
    lp_free(lp);
    *zp = from_zsl(zs);
}

static inline size_t max_value(void) {
    long long v = CONFIG_GET(zset_max_listpack_value);
    return v < 0 ? 0 : (size_t)v;
}

void zset_convert_if_small(struct zset_obj **zp) {
    if (!is_zsl(*zp)) return;
    struct zskiplist *zs = as_zsl(*zp);
    long long maxe = CONFIG_GET(zset_max_listpack_entries);
    if ((long long)zsl_count(zs) > maxe) return;
    size_t maxv = max_value(), total = 0;
    for (const struct zsl_node *x = zsl_first(zs); x; x = zsl_next(x)) {
        if (x->len > maxv) return;
        total += x->len + 32;
    }
    struct listpack *lp = lp_new();
    if (!lp_safe_to_add(lp, total)) { lp_free(lp); return; }
    char sbuf[64];
    for (const struct zsl_node *x = zsl_first(zs); x; x = zsl_next(x)) {
        lp_push(&lp, zsl_node_member(x), true);
        lp_push(&lp, score_text(sbuf, x->score), true);
    }
    zsl_free(zs);
    *zp = from_lp(lp);
}

/* ------------------------------------------------------------ single members */

bool zset_score(const struct zset_obj *z, struct slice member, double *score) {
    if (is_zsl(z)) return zsl_score(as_zsl(z), member, score);
    const struct listpack *lp = as_lp(z);
    size_t pos = zzl_find(lp, member);
    if (pos == LP_NONE) return false;
    if (score) *score = lp_score(lp, lp_next(lp, pos));
    return true;
}

bool zset_add(struct zset_obj **zp, struct slice member, double score, int in_flags,
              int *out_flags, double *newscore) {
    bool incr = in_flags & ZADD_IN_INCR, nx = in_flags & ZADD_IN_NX, xx = in_flags & ZADD_IN_XX;
    bool gt = in_flags & ZADD_IN_GT, lt = in_flags & ZADD_IN_LT;
    *out_flags = 0;
    if (isnan(score)) {
        *out_flags = ZADD_OUT_NAN;
        return false;
    }
    if (!is_zsl(*zp)) {
        struct listpack *lp = as_lp(*zp);
        size_t pos = zzl_find(lp, member);
        if (pos != LP_NONE) {
            double cur = lp_score(lp, lp_next(lp, pos));
            if (nx) { *out_flags |= ZADD_OUT_NOP; return true; }
            if (incr) {
                score += cur;
                if (isnan(score)) { *out_flags |= ZADD_OUT_NAN; return false; }
            }
            if ((lt && score >= cur) || (gt && score <= cur)) { *out_flags |= ZADD_OUT_NOP; return true; }
            if (newscore) *newscore = score;
            if (score != cur) {
                lp_delete(&lp, pos, 2);
                zzl_insert(&lp, member, score);
                *zp = from_lp(lp);
                *out_flags |= ZADD_OUT_UPDATED;
            }
            return true;
        }
        if (xx) { *out_flags |= ZADD_OUT_NOP; return true; }
        if ((long long)lp_count(lp) / 2 + 1 > CONFIG_GET(zset_max_listpack_entries) ||
            member.len > max_value() ||
            !lp_safe_to_add(lp, lp_encoded_size(member) + 32)) {
            zset_convert(zp);
        } else {
            zzl_insert(&lp, member, score);
            *zp = from_lp(lp);
            if (newscore) *newscore = score;
            *out_flags |= ZADD_OUT_ADDED;
            return true;
        }
    }
    struct zskiplist *zs = as_zsl(*zp);
    struct zsl_node *n = zsl_find(zs, member);
    if (n) {
        double cur = n->score;
        if (nx) { *out_flags |= ZADD_OUT_NOP; return true; }
        if (incr) {
            score += cur;
            if (isnan(score)) { *out_flags |= ZADD_OUT_NAN; return false; }
        }
        if ((lt && score >= cur) || (gt && score <= cur)) { *out_flags |= ZADD_OUT_NOP; return true; }
        if (newscore) *newscore = score;
        if (score != cur) {
            zsl_update_score(zs, n, score);
            *out_flags |= ZADD_OUT_UPDATED;
        }
        return true;
    }
    if (xx) { *out_flags |= ZADD_OUT_NOP; return true; }
    zsl_insert(zs, member, score);
    *out_flags |= ZADD_OUT_ADDED;
    if (newscore) *newscore = score;
    return true;
}

bool zset_delete(struct zset_obj **zp, struct slice member) {
    if (is_zsl(*zp)) return zsl_delete(as_zsl(*zp), member);
    struct listpack *lp = as_lp(*zp);
    size_t pos = zzl_find(lp, member);
    if (pos == LP_NONE) return false;
    lp_delete(&lp, pos, 2);
    *zp = from_lp(lp);
    return true;
}

size_t zset_rank(const struct zset_obj *z, struct slice member, bool reverse, double *score) {
    size_t len = zset_len(z);
    if (is_zsl(z)) {
        const struct zsl_node *n = zsl_find(as_zsl(z), member);
        if (!n) return ZSL_NONE;
        if (score) *score = n->score;
        return zsl_rank_node(as_zsl(z), n, reverse);
    }
    const struct listpack *lp = as_lp(z);
    size_t rank = 0;
    for (size_t pos = lp_first(lp); pos != LP_NONE; pos = lp_next_pair(lp, pos), rank++) {
        if (lp_eq(lp, pos, member)) {
            if (score) *score = lp_score(lp, lp_next(lp, pos));
            return reverse ? len - 1 - rank : rank;
        }
    }
    return ZSL_NONE;
}

/* ------------------------------------------------------------ iteration */

void zset_it_rank(struct zset_it *it, const struct zset_obj *z, size_t rank) {
    it->z = z;
    it->valid = rank < zset_len(z);
    if (!it->valid) return;
    if (is_zsl(z)) it->node = zsl_at_rank(as_zsl(z), rank);
    else it->pos = lp_seek(as_lp(z), (long long)rank * 2);
}

void zset_it_next(struct zset_it *it) {
    if (!it->valid) return;
    if (is_zsl(it->z)) {
        it->node = zsl_next(it->node);
        it->valid = it->node != NULL;
    } else {
        it->pos = lp_next_pair(as_lp(it->z), it->pos);
        it->valid = it->pos != LP_NONE;
    }
}

void zset_it_prev(struct zset_it *it) {
    if (!it->valid) return;
    if (is_zsl(it->z)) {
        it->node = zsl_prev(it->node);
        it->valid = it->node != NULL;
    } else {
        const struct listpack *lp = as_lp(it->z);
        size_t p = lp_prev(lp, it->pos);
        it->pos = p == LP_NONE ? LP_NONE : lp_prev(lp, p);
        it->valid = it->pos != LP_NONE;
    }
}

struct slice zset_it_member(struct zset_it *it) {
    if (is_zsl(it->z)) return zsl_node_member(it->node);
    return lp_text(as_lp(it->z), it->pos, it->buf);
}

double zset_it_score_of(const struct zset_it *it) {
    if (is_zsl(it->z)) return it->node->score;
    const struct listpack *lp = as_lp(it->z);
    return lp_score(lp, lp_next(lp, it->pos));
}

void zset_it_score(struct zset_it *it, const struct zset_obj *z, const struct zrange_spec *r, bool reverse) {
    it->z = z;
    if (is_zsl(z)) {
        it->node = reverse ? zsl_last_in_range(as_zsl(z), r) : zsl_first_in_range(as_zsl(z), r);
        it->valid = it->node != NULL;
        return;
    }
    size_t len = zset_len(z);
    it->valid = false;
    if (!len) return;
    zset_it_rank(it, z, reverse ? len - 1 : 0);
    while (it->valid) {
        double s = zset_it_score_of(it);
        if (zrange_contains(r, s)) return;
        /* past the range in walking order: nothing in it */
        if (!reverse && (s > r->max || (s == r->max && r->maxex))) break;
        if (reverse && (s < r->min || (s == r->min && r->minex))) break;
        zset_it_move(it, reverse);
    }
    it->valid = false;
}

bool zset_lex_gte_min(const struct zlex_spec *r, struct slice m) {
    if (r->min_kind == ZLEX_NEG_INF) return true;
    if (r->min_kind == ZLEX_POS_INF) return false;
    int c = member_cmp(m, r->min);
    return r->minex ? c > 0 : c >= 0;
}

bool zset_lex_lte_max(const struct zlex_spec *r, struct slice m) {
    if (r->max_kind == ZLEX_POS_INF) return true;
    if (r->max_kind == ZLEX_NEG_INF) return false;
    int c = member_cmp(m, r->max);
    return r->maxex ? c < 0 : c <= 0;
}

/* min against max, with -inf and +inf below and above every value. */
static bool lex_empty(const struct zlex_spec *r) {
    int c;
    if (r->min_kind == r->max_kind && r->min_kind != ZLEX_VALUE) c = 0;
    else if (r->min_kind == ZLEX_NEG_INF || r->max_kind == ZLEX_POS_INF) c = -1;
    else if (r->min_kind == ZLEX_POS_INF || r->max_kind == ZLEX_NEG_INF) c = 1;
    else c = member_cmp(r->min, r->max);
    return c > 0 || (c == 0 && (r->minex || r->maxex));
}

/*
 * As Redis's zzlFirstInLexRange / zzlLastInLexRange, which matter when the
 * scores differ (the members are then not in lex order): after checking the
 * range against both ends, the first member >= min is the answer if it is
 * also <= max, else there is none (and the mirror image from the tail).
 */
void zset_it_lex(struct zset_it *it, const struct zset_obj *z, const struct zlex_spec *r, bool reverse) {
    it->z = z;
    if (is_zsl(z)) {
        it->node = reverse ? zsl_last_in_lex(as_zsl(z), r) : zsl_first_in_lex(as_zsl(z), r);
        it->valid = it->node != NULL;
        return;
    }
    size_t len = zset_len(z);
    it->valid = false;
    if (!len || lex_empty(r)) return;
    zset_it_rank(it, z, len - 1);
    if (!zset_lex_gte_min(r, zset_it_member(it))) { it->valid = false; return; }
    zset_it_rank(it, z, 0);
    if (!zset_lex_lte_max(r, zset_it_member(it))) { it->valid = false; return; }
    zset_it_rank(it, z, reverse ? len - 1 : 0);
    for (; it->valid; zset_it_move(it, reverse)) {
        struct slice m = zset_it_member(it);
        if (!reverse && zset_lex_gte_min(r, m)) {
            it->valid = zset_lex_lte_max(r, m);
            return;
        }
        if (reverse && zset_lex_lte_max(r, m)) {
            it->valid = zset_lex_gte_min(r, m);
            return;
        }
    }
}

/* ------------------------------------------------------------ ranges */

size_t zset_delete_range_rank(struct zset_obj **zp, size_t start, size_t end) {
    size_t len = zset_len(*zp);
    if (start >= len || start > end) return 0;
    if (end >= len) end = len - 1;
    if (is_zsl(*zp)) return zsl_delete_range_by_rank(as_zsl(*zp), start, end);
    struct listpack *lp = as_lp(*zp);
    size_t n = end - start + 1;
    lp_delete_range(&lp, (long long)start * 2, n * 2);
    *zp = from_lp(lp);
    return n;
}

/* Listpack: the rank of the first member in range and the length of the run
 * from there while members stay <= max, as Redis's zzl* range functions. */
static size_t lp_run(const struct zset_obj *z, const struct zrange_spec *sr, const struct zlex_spec *lr,
                     size_t *first) {
    struct zset_it it;
    size_t rank = 0, n = 0;
    if (lr) {
        struct zset_it f;
        zset_it_lex(&f, z, lr, false);
        if (!f.valid) return 0;
        for (zset_it_rank(&it, z, 0); it.valid && it.pos != f.pos; zset_it_next(&it)) rank++;
        *first = rank;
        for (; it.valid && zset_lex_lte_max(lr, zset_it_member(&it)); zset_it_next(&it)) n++;
        return n;
    }
    for (zset_it_rank(&it, z, 0); it.valid; zset_it_next(&it), rank++) {
        if (zrange_contains(sr, zset_it_score_of(&it))) {
            if (!n) *first = rank;
            n++;
        } else if (n) {
            break;
        }
    }
    return n;
}

size_t zset_delete_range_score(struct zset_obj **zp, const struct zrange_spec *r) {
    if (is_zsl(*zp)) return zsl_delete_range_by_score(as_zsl(*zp), r);
    size_t first = 0, n = lp_run(*zp, r, NULL, &first);
    return n ? zset_delete_range_rank(zp, first, first + n - 1) : 0;
}

size_t zset_delete_range_lex(struct zset_obj **zp, const struct zlex_spec *r) {
    if (is_zsl(*zp)) return zsl_delete_range_by_lex(as_zsl(*zp), r);
    size_t first = 0, n = lp_run(*zp, NULL, r, &first);
    return n ? zset_delete_range_rank(zp, first, first + n - 1) : 0;
}

size_t zset_count_score(const struct zset_obj *z, const struct zrange_spec *r) {
    if (is_zsl(z)) return zsl_count_in_range(as_zsl(z), r);
    size_t first = 0;
    return lp_run(z, r, NULL, &first);
}

size_t zset_count_lex(const struct zset_obj *z, const struct zlex_spec *r) {
    if (is_zsl(z)) {
        /* Redis's zlexcountCommand arithmetic, wrap-around included (members
         * with different scores are not in lex order). Not zsl_count_in_lex:
         * the last node in range may be missing when the first is not. */
        const struct zskiplist *zs = as_zsl(z);
        const struct zsl_node *first = zsl_first_in_lex(zs, r), *last;
        if (!first) return 0;
        size_t len = zsl_count(zs), count = len - zsl_rank_node(zs, first, false);
        if ((last = zsl_last_in_lex(zs, r)) != NULL)
            count -= len - (zsl_rank_node(zs, last, false) + 1);
        return count;
    }
    size_t first = 0;
    return lp_run(z, NULL, r, &first);
}

/* ------------------------------------------------------------ memory */

/* As Redis's objectComputeSize: the skiplist's struct, header node and
 * member map, then its nodes (one allocation each, member included), the
 * first `samples` measured and the others taken to be like them. */
size_t zset_usage(const struct zset_obj *z, size_t samples) {
    if (!is_zsl(z)) return obj_alloc_size(as_lp(z));
    const struct zskiplist *zs = as_zsl(z);
    size_t sampled = 0, n = 0;
    for (const struct zsl_node *x = zsl_first(zs); x && n < samples; x = zsl_next(x), n++)
        sampled += obj_alloc_size(x);
    size_t fixed = obj_alloc_size(zs) + obj_alloc_size(zs->header) + obj_alloc_size(zs->map);
    return fixed + (n ? (size_t)((double)sampled / (double)n * (double)zsl_count(zs)) : 0);
}

/* ------------------------------------------------------------ ops */

static void ops_free(void *obj) { zset_free(obj); }
static void *ops_dup(const void *obj) { return zset_dup(obj); }
static const char *ops_encoding(const void *obj) { return zset_encoding(obj); }
static size_t ops_inline_size(const void *obj) { return is_zsl(obj) ? 0 : lp_bytes(as_lp(obj)); }
static size_t ops_usage(const void *obj, size_t samples) { return zset_usage(obj, samples); }

const struct obj_ops zset_obj_ops = { ops_free, ops_dup, ops_encoding, ops_inline_size, ops_usage };
