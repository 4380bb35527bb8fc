/*
 * Unit tests for the full sorted set (skiplist + member map).
 *
 * The reference model is a plain array of (score, member id) re-sorted with
 * qsort after every operation; every answer of the skiplist (scores, ranks,
 * nodes at ranks, first/last/count in score and lex ranges, range deletes)
 * is compared with a linear scan of that array, and zsl_check verifies the
 * structure (spans, links, map) as the run goes.
 *
 * Members come from a pool of all strings of length 0..4 over the bytes
 * {0x00, 'a', 'b', 0xff}, so ties on score are broken between members that
 * are prefixes of each other and that differ in bytes above 0x7f. Scores
 * are mostly drawn from a small set (many ties, -0.0, -inf and +inf).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "ringkv/zskiplist.h"

static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}
static size_t rnd_below(size_t n) { return (size_t)(rnd() % n); }

/* ---------------------------------------------------------------- pool */

#define POOL 341   /* 1 + 4 + 16 + 64 + 256: every string of length 0..4 */
static struct { char s[4]; size_t len; } pool[POOL];

static void pool_init(void) {
    static const char alpha[4] = { '\0', 'a', 'b', (char)0xff };
    for (size_t id = 0; id < POOL; id++) {
        /* bijective base 4: distinct ids give distinct strings */
        size_t v = id, len = 0;
        char tmp[4];
        while (v > 0) {
            v--;
            tmp[len++] = alpha[v % 4];
            v /= 4;
        }
        for (size_t i = 0; i < len; i++) pool[id].s[i] = tmp[len - 1 - i];
        pool[id].len = len;
    }
}

static struct slice pm(size_t id) { return (struct slice){ pool[id].s, pool[id].len }; }

static int ref_mcmp(struct slice a, struct slice b) {
    size_t n = a.len < b.len ? a.len : b.len;
    for (size_t i = 0; i < n; i++)
        if (a.ptr[i] != b.ptr[i]) return (unsigned char)a.ptr[i] < (unsigned char)b.ptr[i] ? -1 : 1;
    return a.len < b.len ? -1 : a.len > b.len;
}

/* ---------------------------------------------------------------- model */

struct ref { double score; size_t id; };
static struct ref model[POOL];
static size_t nmodel;

static int ref_cmp(const void *pa, const void *pb) {
    const struct ref *a = pa, *b = pb;
    if (a->score < b->score) return -1;
    if (a->score > b->score) return 1;
    return ref_mcmp(pm(a->id), pm(b->id));
}

static void model_sort(void) { qsort(model, nmodel, sizeof(model[0]), ref_cmp); }

static size_t model_find(size_t id) {
    for (size_t i = 0; i < nmodel; i++)
        if (model[i].id == id) return i;
    return SIZE_MAX;
}

static void model_remove_at(size_t i) {
    model[i] = model[--nmodel];
    model_sort();
}

static const double score_set[] = { -INFINITY, -2, -1, -0.5, -0.0, 0, 0.5, 1, 2, 3, INFINITY };

static double rnd_score(void) {
    if (rnd_below(10) < 8) return score_set[rnd_below(RK_ARRAY_LEN(score_set))];
    return (double)((int64_t)rnd_below(81) - 40) / 8.0;
}

static bool same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void assert_node_is(const struct zsl_node *n, size_t model_idx) {
    assert_non_null(n);
    assert_true(same_double(zsl_node_score(n), model[model_idx].score));
    assert_true(slice_eq(zsl_node_member(n), pm(model[model_idx].id)));
}

/* Everything the set answers about its whole content. */
static void verify_all(const struct zskiplist *zs) {
    assert_true(zsl_check(zs));
    assert_int_equal(zsl_count(zs), nmodel);
    const struct zsl_node *n = zsl_first(zs);
    for (size_t i = 0; i < nmodel; i++, n = zsl_next(n)) {
        assert_node_is(n, i);
        assert_int_equal(zsl_rank_node(zs, n, false), i);
        assert_int_equal(zsl_rank(zs, pm(model[i].id), true), nmodel - 1 - i);
    }
    assert_null(n);
    n = zsl_last(zs);
    for (size_t i = nmodel; i-- > 0; n = zsl_prev(n)) assert_node_is(n, i);
    assert_null(n);
}

/* ---------------------------------------------------------------- ranges */

static struct zrange_spec rnd_range(void) {
    struct zrange_spec r;
    r.min = rnd_score();
    r.max = rnd_below(4) == 0 ? rnd_score() : r.min + (double)rnd_below(5) * 0.5;
    if (rnd_below(8) == 0) { double t = r.min; r.min = r.max; r.max = t; }
    r.minex = rnd_below(3) == 0;
    r.maxex = rnd_below(3) == 0;
    return r;
}

static bool ref_in_range(const struct zrange_spec *r, double v) {
    return (r->minex ? v > r->min : v >= r->min) && (r->maxex ? v < r->max : v <= r->max);
}

/* Bounds are built as argument strings and parsed, as the commands will. */
struct lexarg { char buf[8]; size_t len; };

static struct lexarg rnd_lex_arg(void) {
    struct lexarg a;
    size_t k = rnd_below(12);
    if (k == 0) { a.buf[0] = '-'; a.len = 1; return a; }
    if (k == 1) { a.buf[0] = '+'; a.len = 1; return a; }
    a.buf[0] = k < 7 ? '[' : '(';
    size_t id = rnd_below(POOL);
    memcpy(a.buf + 1, pool[id].s, pool[id].len);
    a.len = 1 + pool[id].len;
    return a;
}

static bool ref_in_lex(const struct lexarg *min, const struct lexarg *max, struct slice m) {
    bool ge, le;
    struct slice mv = { min->buf + 1, min->len - 1 }, xv = { max->buf + 1, max->len - 1 };
    if (min->buf[0] == '-') ge = true;
    else if (min->buf[0] == '+') ge = false;
    else ge = min->buf[0] == '(' ? ref_mcmp(m, mv) > 0 : ref_mcmp(m, mv) >= 0;
    if (max->buf[0] == '+') le = true;
    else if (max->buf[0] == '-') le = false;
    else le = max->buf[0] == '(' ? ref_mcmp(m, xv) < 0 : ref_mcmp(m, xv) <= 0;
    return ge && le;
}

/* First index, last index and count of model entries matching. */
struct span_ref { size_t first, last, count; };

static struct span_ref ref_score_span(const struct zrange_spec *r) {
    struct span_ref s = { SIZE_MAX, SIZE_MAX, 0 };
    for (size_t i = 0; i < nmodel; i++) {
        if (!ref_in_range(r, model[i].score)) continue;
        if (s.count == 0) s.first = i;
        else assert_int_equal(s.last, i - 1);   /* the model itself is contiguous */
        s.last = i;
        s.count++;
    }
    return s;
}

static struct span_ref ref_lex_span(const struct lexarg *min, const struct lexarg *max) {
    struct span_ref s = { SIZE_MAX, SIZE_MAX, 0 };
    for (size_t i = 0; i < nmodel; i++) {
        if (!ref_in_lex(min, max, pm(model[i].id))) continue;
        if (s.count == 0) s.first = i;
        s.last = i;
        s.count++;
    }
    return s;
}

static size_t nonempty_ranges;   /* range queries with an answer, per run */

static void check_span(const struct zsl_node *first, const struct zsl_node *last,
                       size_t count, struct span_ref want) {
    assert_int_equal(count, want.count);
    nonempty_ranges += want.count > 1;
    if (want.count == 0) {
        assert_null(first);
        assert_null(last);
    } else {
        assert_node_is(first, want.first);
        assert_node_is(last, want.last);
    }
}

/* ---------------------------------------------------------------- random runs */

static void op_set(struct zskiplist *zs) {
    size_t id = rnd_below(POOL);
    double sc = rnd_score();
    size_t i = model_find(id);
    struct zsl_node *n = zsl_find(zs, pm(id));
    if (i == SIZE_MAX) {
        assert_null(n);
        n = zsl_insert(zs, pm(id), sc);
        model[nmodel++] = (struct ref){ sc, id };
    } else {
        assert_non_null(n);
        zsl_update_score(zs, n, sc);
        model[i].score = sc;
    }
    assert_true(slice_eq(zsl_node_member(n), pm(id)));
    assert_true(same_double(zsl_node_score(n), sc));
    model_sort();
}

static void op_queries(struct zskiplist *zs) {
    size_t id = rnd_below(POOL), i = model_find(id);
    double sc = 12345;
    assert_int_equal(zsl_score(zs, pm(id), &sc), i != SIZE_MAX);
    if (i != SIZE_MAX) {
        assert_true(same_double(sc, model[i].score));
        assert_int_equal(zsl_rank(zs, pm(id), false), i);
        assert_int_equal(zsl_rank(zs, pm(id), true), nmodel - 1 - i);
    } else {
        assert_null(zsl_find(zs, pm(id)));
        assert_int_equal(zsl_rank(zs, pm(id), false), ZSL_NONE);
    }
    size_t r = rnd_below(nmodel + 3);
    struct zsl_node *n = zsl_at_rank(zs, r);
    if (r < nmodel) assert_node_is(n, r);
    else assert_null(n);
}

static void op_score_range(struct zskiplist *zs) {
    struct zrange_spec r = rnd_range();
    struct span_ref want = ref_score_span(&r);
    check_span(zsl_first_in_range(zs, &r), zsl_last_in_range(zs, &r),
               zsl_count_in_range(zs, &r), want);
}

static void op_lex_range(struct zskiplist *zs) {
    struct lexarg a = rnd_lex_arg(), b = rnd_lex_arg();
    struct zlex_spec r;
    assert_true(zlex_parse((struct slice){ a.buf, a.len }, (struct slice){ b.buf, b.len }, &r));
    struct span_ref want = ref_lex_span(&a, &b);
    check_span(zsl_first_in_lex(zs, &r), zsl_last_in_lex(zs, &r), zsl_count_in_lex(zs, &r), want);
    for (size_t i = 0; i < nmodel; i++)
        assert_int_equal(zlex_contains(&r, pm(model[i].id)), ref_in_lex(&a, &b, pm(model[i].id)));
}

static void op_delete(struct zskiplist *zs) {
    size_t id = rnd_below(POOL), i = model_find(id);
    assert_int_equal(zsl_delete(zs, pm(id)), i != SIZE_MAX);
    if (i != SIZE_MAX) model_remove_at(i);
}

static void op_delete_rank(struct zskiplist *zs) {
    size_t start = rnd_below(nmodel + 2), end = start + rnd_below(6);
    if (rnd_below(10) == 0) end = start - 1;   /* start > end: nothing */
    size_t want = 0;
    if (start < nmodel && start <= end) {
        size_t e = end < nmodel ? end : nmodel - 1;
        want = e - start + 1;
        memmove(model + start, model + e + 1, (nmodel - e - 1) * sizeof(model[0]));
        nmodel -= want;
    }
    assert_int_equal(zsl_delete_range_by_rank(zs, start, end), want);
}

static void op_delete_score(struct zskiplist *zs) {
    struct zrange_spec r = rnd_range();
    size_t want = 0;
    for (size_t i = 0; i < nmodel;) {
        if (ref_in_range(&r, model[i].score)) { model_remove_at(i); want++; }
        else i++;
    }
    assert_int_equal(zsl_delete_range_by_score(zs, &r), want);
}

static void op_delete_lex(struct zskiplist *zs) {
    struct lexarg a = rnd_lex_arg(), b = rnd_lex_arg();
    struct zlex_spec r;
    assert_true(zlex_parse((struct slice){ a.buf, a.len }, (struct slice){ b.buf, b.len }, &r));
    size_t want = 0;
    for (size_t i = 0; i < nmodel;) {
        if (ref_in_lex(&a, &b, pm(model[i].id))) { model_remove_at(i); want++; }
        else i++;
    }
    assert_int_equal(zsl_delete_range_by_lex(zs, &r), want);
}

/* Mixed scores: everything but lex ranges, whose answer Redis leaves to
 * the skiplist's order when scores differ. */
static void random_run(uint64_t seed, int ops, bool lex) {
    rng_state = seed;
    nmodel = 0;
    nonempty_ranges = 0;
    size_t max_model = 0;
    struct zskiplist *zs = zsl_new();
    for (int k = 0; k < ops; k++) {
        if (nmodel > max_model) max_model = nmodel;
        size_t op = rnd_below(100);
        /* alternate phases that fill the set up and that let it drain */
        bool grow = (k / 4000) % 2 == 0;
        bool deleting = lex ? (op >= 40 && op < 55) || (op >= 90 && op < 94)
                            : (op >= 45 && op < 60) || op >= 93;
        if (grow && deleting && rnd_below(5) != 0) op = 0;
        if (lex) {
            /* every score equal: members alone order the set */
            if (op < 40) {
                size_t id = rnd_below(POOL);
                if (model_find(id) == SIZE_MAX) {
                    zsl_insert(zs, pm(id), 7);
                    model[nmodel++] = (struct ref){ 7, id };
                    model_sort();
                }
            } else if (op < 55) op_delete(zs);
            else if (op < 65) op_queries(zs);
            else if (op < 90) op_lex_range(zs);
            else if (op < 92) op_delete_lex(zs);
            else if (op < 94) op_delete_rank(zs);
            else op_score_range(zs);
        } else {
            if (op < 45) op_set(zs);
            else if (op < 60) op_delete(zs);
            else if (op < 75) op_queries(zs);
            else if (op < 93) op_score_range(zs);
            else if (op < 96) op_delete_rank(zs);
            else op_delete_score(zs);
        }
        if (k % 16 == 0 || nmodel < 4) verify_all(zs);
    }
    verify_all(zs);
    zsl_free(zs);
    /* the run exercised sets large enough for several levels, and ranges
     * with more than one element in them */
    assert_true(max_model >= 250);
    assert_true(nonempty_ranges >= (size_t)ops / 20);
}

static void test_random_scores(void **state) {
    (void)state;
    random_run(0x9E3779B97F4A7C15ULL, 30000, false);
    random_run(12345, 30000, false);
}

static void test_random_lex(void **state) {
    (void)state;
    random_run(0xDEADBEEFCAFEULL, 30000, true);
}

/* ---------------------------------------------------------------- edge cases */

static void test_empty(void **state) {
    (void)state;
    struct zskiplist *zs = zsl_new();
    assert_int_equal(zsl_count(zs), 0);
    assert_null(zsl_first(zs));
    assert_null(zsl_last(zs));
    assert_null(zsl_at_rank(zs, 0));
    assert_null(zsl_find(zs, SLICE_LIT("a")));
    assert_int_equal(zsl_rank(zs, SLICE_LIT("a"), false), ZSL_NONE);
    assert_false(zsl_delete(zs, SLICE_LIT("a")));
    struct zrange_spec all = { -INFINITY, INFINITY, false, false };
    assert_null(zsl_first_in_range(zs, &all));
    assert_null(zsl_last_in_range(zs, &all));
    assert_int_equal(zsl_count_in_range(zs, &all), 0);
    assert_int_equal(zsl_delete_range_by_score(zs, &all), 0);
    assert_int_equal(zsl_delete_range_by_rank(zs, 0, 10), 0);
    struct zlex_spec lex;
    assert_true(zlex_parse(SLICE_LIT("-"), SLICE_LIT("+"), &lex));
    assert_null(zsl_first_in_lex(zs, &lex));
    assert_int_equal(zsl_count_in_lex(zs, &lex), 0);
    assert_int_equal(zsl_delete_range_by_lex(zs, &lex), 0);
    assert_true(zsl_check(zs));
    assert_true(zsl_memory(zs) > sizeof(*zs));
    zsl_free(zs);
    zsl_free(NULL);
}

static void test_order(void **state) {
    (void)state;
    struct zskiplist *zs = zsl_new();
    /* inserted out of order; expected order below */
    zsl_insert(zs, SLICE_LIT("b"), 1);
    zsl_insert(zs, SLICE_LIT("\xff"), 1);
    zsl_insert(zs, SLICE_LIT("ab"), 1);
    zsl_insert(zs, SLICE_LIT("a"), 1);
    zsl_insert(zs, SLICE_LIT(""), 1);
    zsl_insert(zs, SLICE_LIT("top"), INFINITY);
    zsl_insert(zs, SLICE_LIT("bottom"), -INFINITY);
    zsl_insert(zs, SLICE_LIT("z"), -0.0);
    zsl_insert(zs, SLICE_LIT("y"), 0.0);
    zsl_insert(zs, SLICE_LIT("a\0b"), 1);
    static const struct { const char *m; size_t len; } want[] = {
        { "bottom", 6 }, { "y", 1 }, { "z", 1 }, { "", 0 }, { "a", 1 }, { "a\0b", 3 },
        { "ab", 2 }, { "b", 1 }, { "\xff", 1 }, { "top", 3 },
    };
    assert_int_equal(zsl_count(zs), RK_ARRAY_LEN(want));
    const struct zsl_node *n = zsl_first(zs);
    for (size_t i = 0; i < RK_ARRAY_LEN(want); i++, n = zsl_next(n)) {
        assert_true(slice_eq(zsl_node_member(n), (struct slice){ want[i].m, want[i].len }));
        assert_int_equal(zsl_rank(zs, (struct slice){ want[i].m, want[i].len }, false), i);
    }
    assert_true(zsl_check(zs));

    /* -inf / +inf bounds, inclusive and exclusive */
    struct zrange_spec r = { INFINITY, INFINITY, false, false };
    assert_int_equal(zsl_count_in_range(zs, &r), 1);
    r.minex = true;
    assert_int_equal(zsl_count_in_range(zs, &r), 0);
    assert_null(zsl_first_in_range(zs, &r));
    r = (struct zrange_spec){ -INFINITY, 1, true, true };
    assert_int_equal(zsl_count_in_range(zs, &r), 2);   /* y, z */
    r = (struct zrange_spec){ 0, 1, false, false };
    assert_int_equal(zsl_count_in_range(zs, &r), 8);
    assert_true(slice_eq(zsl_node_member(zsl_first_in_range(zs, &r)), SLICE_LIT("y")));
    assert_true(slice_eq(zsl_node_member(zsl_last_in_range(zs, &r)), SLICE_LIT("\xff")));
    r = (struct zrange_spec){ 2, 1, false, false };   /* inverted */
    assert_int_equal(zsl_count_in_range(zs, &r), 0);
    r = (struct zrange_spec){ 1, 1, false, true };    /* min == max, one end open */
    assert_int_equal(zsl_count_in_range(zs, &r), 0);
    assert_int_equal(zsl_delete_range_by_score(zs, &r), 0);
    r = (struct zrange_spec){ 0.5, 0.75, false, false };   /* gap between scores */
    assert_null(zsl_first_in_range(zs, &r));
    assert_null(zsl_last_in_range(zs, &r));

    /* delete the +inf and -inf ends by score */
    r = (struct zrange_spec){ INFINITY, INFINITY, false, false };
    assert_int_equal(zsl_delete_range_by_score(zs, &r), 1);
    r = (struct zrange_spec){ -INFINITY, -INFINITY, false, false };
    assert_int_equal(zsl_delete_range_by_score(zs, &r), 1);
    assert_true(slice_eq(zsl_node_member(zsl_first(zs)), SLICE_LIT("y")));
    assert_true(slice_eq(zsl_node_member(zsl_last(zs)), SLICE_LIT("\xff")));
    assert_null(zsl_find(zs, SLICE_LIT("top")));
    assert_true(zsl_check(zs));
    zsl_free(zs);
}

static void test_update(void **state) {
    (void)state;
    struct zskiplist *zs = zsl_new();
    char m[8];
    for (int i = 0; i < 200; i++) {
        int len = snprintf(m, sizeof m, "m%03d", i);
        zsl_insert(zs, (struct slice){ m, (size_t)len }, i);
    }
    struct zsl_node *n = zsl_find(zs, SLICE_LIT("m100"));
    /* stays between m099 (99) and m101 (101): no move */
    zsl_update_score(zs, n, 100.5);
    assert_ptr_equal(zsl_at_rank(zs, 100), n);
    assert_true(zsl_node_score(n) == 100.5);
    /* a tie with the neighbour, ordered after it by member: still no move */
    zsl_update_score(zs, n, 99);
    assert_ptr_equal(zsl_at_rank(zs, 100), n);
    /* moves past m051 and ties with m052, before it by member */
    n = zsl_find(zs, SLICE_LIT("m050"));
    zsl_update_score(zs, n, 52);
    assert_int_equal(zsl_rank_node(zs, n, false), 51);
    assert_int_equal(zsl_rank(zs, SLICE_LIT("m051"), false), 50);
    assert_int_equal(zsl_rank(zs, SLICE_LIT("m052"), false), 52);
    assert_ptr_equal(zsl_find(zs, SLICE_LIT("m050")), n);   /* same node */
    /* far moves both ways, to the ends */
    zsl_update_score(zs, n, INFINITY);
    assert_ptr_equal(zsl_last(zs), n);
    assert_int_equal(zsl_rank_node(zs, n, true), 0);
    zsl_update_score(zs, n, -INFINITY);
    assert_ptr_equal(zsl_first(zs), n);
    assert_null(zsl_prev(n));
    assert_true(zsl_check(zs));
    /* delete_node on the first and last */
    zsl_delete_node(zs, zsl_first(zs));
    zsl_delete_node(zs, zsl_last(zs));
    assert_int_equal(zsl_count(zs), 198);
    assert_null(zsl_find(zs, SLICE_LIT("m050")));
    assert_null(zsl_find(zs, SLICE_LIT("m199")));
    assert_true(zsl_check(zs));
    zsl_free(zs);
}

static void test_parse(void **state) {
    (void)state;
    struct zrange_spec r;
    assert_true(zrange_parse(SLICE_LIT("1"), SLICE_LIT("(2.5"), &r));
    assert_true(r.min == 1 && !r.minex && r.max == 2.5 && r.maxex);
    assert_true(zrange_parse(SLICE_LIT("-inf"), SLICE_LIT("+inf"), &r));
    assert_true(isinf(r.min) && r.min < 0 && isinf(r.max) && r.max > 0);
    assert_true(zrange_parse(SLICE_LIT("(-inf"), SLICE_LIT("(inf"), &r));
    assert_true(r.minex && r.maxex);
    assert_true(zrange_parse(SLICE_LIT(""), SLICE_LIT("("), &r));   /* strtod("") is 0 */
    assert_true(r.min == 0 && !r.minex && r.max == 0 && r.maxex);
    assert_true(zrange_parse(SLICE_LIT(" 1"), SLICE_LIT("0x10"), &r));
    assert_true(r.min == 1 && r.max == 16);
    assert_true(zrange_parse(SLICE_LIT("1\0junk"), SLICE_LIT("2"), &r));   /* NUL ends it */
    assert_true(r.min == 1);
    assert_false(zrange_parse(SLICE_LIT("nan"), SLICE_LIT("1"), &r));
    assert_false(zrange_parse(SLICE_LIT("1"), SLICE_LIT("(nan"), &r));
    assert_false(zrange_parse(SLICE_LIT("1x"), SLICE_LIT("2"), &r));
    assert_false(zrange_parse(SLICE_LIT("1"), SLICE_LIT("2 "), &r));
    assert_false(zrange_parse(SLICE_LIT("[1"), SLICE_LIT("2"), &r));
    char big[200];
    memset(big, '0', sizeof big);
    big[sizeof big - 1] = '7';
    assert_true(zrange_parse((struct slice){ big, sizeof big }, SLICE_LIT("8"), &r));
    assert_true(r.min == 7);

    struct zlex_spec l;
    assert_true(zlex_parse(SLICE_LIT("-"), SLICE_LIT("+"), &l));
    assert_true(l.min_kind == ZLEX_NEG_INF && l.max_kind == ZLEX_POS_INF);
    assert_true(zlex_parse(SLICE_LIT("[a"), SLICE_LIT("(bc"), &l));
    assert_true(l.min_kind == ZLEX_VALUE && !l.minex && slice_eq(l.min, SLICE_LIT("a")));
    assert_true(l.max_kind == ZLEX_VALUE && l.maxex && slice_eq(l.max, SLICE_LIT("bc")));
    assert_true(zlex_parse(SLICE_LIT("["), SLICE_LIT("+"), &l));
    assert_true(l.min.len == 0 && !l.minex);
    assert_false(zlex_parse(SLICE_LIT("a"), SLICE_LIT("+"), &l));
    assert_false(zlex_parse(SLICE_LIT("-"), SLICE_LIT(""), &l));
    assert_false(zlex_parse(SLICE_LIT("+a"), SLICE_LIT("+"), &l));
    assert_false(zlex_parse(SLICE_LIT("-"), SLICE_LIT("--"), &l));
    /* Redis looks at the byte after "+" / "-" as a C string would */
    assert_true(zlex_parse(SLICE_LIT("-\0x"), SLICE_LIT("+\0"), &l));
    assert_true(l.min_kind == ZLEX_NEG_INF && l.max_kind == ZLEX_POS_INF);

    /* lex ranges that are empty by their bounds */
    struct zskiplist *zs = zsl_new();
    zsl_insert(zs, SLICE_LIT("a"), 0);
    zsl_insert(zs, SLICE_LIT("b"), 0);
    static const char *empty[][2] = {
        { "-", "-" }, { "+", "+" }, { "+", "-" }, { "[b", "[a" }, { "(a", "[a" }, { "[a", "(a" },
        { "[c", "+" }, { "-", "(a" },
    };
    for (size_t i = 0; i < RK_ARRAY_LEN(empty); i++) {
        assert_true(zlex_parse((struct slice){ empty[i][0], strlen(empty[i][0]) },
                               (struct slice){ empty[i][1], strlen(empty[i][1]) }, &l));
        assert_int_equal(zsl_count_in_lex(zs, &l), 0);
        assert_null(zsl_first_in_lex(zs, &l));
        assert_null(zsl_last_in_lex(zs, &l));
    }
    assert_true(zlex_parse(SLICE_LIT("[a"), SLICE_LIT("[a"), &l));
    assert_int_equal(zsl_count_in_lex(zs, &l), 1);
    assert_true(zlex_parse(SLICE_LIT("(a"), SLICE_LIT("+"), &l));
    assert_int_equal(zsl_count_in_lex(zs, &l), 1);
    assert_true(slice_eq(zsl_node_member(zsl_first_in_lex(zs, &l)), SLICE_LIT("b")));
    zsl_free(zs);
}

/* ---------------------------------------------------------------- scan */

#define SCAN_N 3000
static uint8_t seen[2 * SCAN_N];

static size_t member_id(const struct zsl_node *n) {
    struct slice m = zsl_node_member(n);
    size_t id = 0;
    for (size_t i = 1; i < m.len; i++) id = id * 10 + (size_t)(m.ptr[i] - '0');
    return id;
}

static void scan_cb(void *ctx, const struct zsl_node *n) {
    (void)ctx;
    size_t id = member_id(n);
    assert_true(id < 2 * SCAN_N);
    seen[id]++;
}

static struct slice id_member(char *buf, size_t id) {
    return (struct slice){ buf, (size_t)snprintf(buf, 16, "s%zu", id) };
}

static void test_scan(void **state) {
    (void)state;
    rng_state = 777;
    char buf[16];
    /* plain scan: every member exactly once */
    struct zskiplist *zs = zsl_new();
    for (size_t i = 0; i < SCAN_N; i++) zsl_insert(zs, id_member(buf, i), (double)(i % 7));
    memset(seen, 0, sizeof seen);
    uint64_t cur = 0;
    size_t calls = 0;
    do { cur = zsl_scan(zs, cur, 10, scan_cb, NULL); calls++; } while (cur != 0);
    for (size_t i = 0; i < SCAN_N; i++) assert_int_equal(seen[i], 1);
    assert_true(calls > 10);

    /* Members 0..SCAN_N/2 stay; the others are deleted while ids from
     * SCAN_N up are inserted, growing the map, then most are deleted,
     * shrinking it. Stayers are reported exactly once, the rest at most
     * once. */
    memset(seen, 0, sizeof seen);
    cur = 0;
    size_t next_new = SCAN_N, step = 0;
    do {
        cur = zsl_scan(zs, cur, 1 + rnd_below(20), scan_cb, NULL);
        step++;
        if (step < 200) {
            for (int k = 0; k < 15 && next_new < 2 * SCAN_N; k++)
                zsl_insert(zs, id_member(buf, next_new++), 1);
        } else {
            for (int k = 0; k < 40; k++) {
                size_t id = SCAN_N / 2 + rnd_below(SCAN_N * 3 / 2);
                zsl_delete(zs, id_member(buf, id));
            }
        }
    } while (cur != 0);
    for (size_t i = 0; i < SCAN_N / 2; i++) assert_int_equal(seen[i], 1);
    for (size_t i = SCAN_N / 2; i < 2 * SCAN_N; i++) assert_true(seen[i] <= 1);
    assert_true(zsl_check(zs));
    zsl_free(zs);
}

/* ---------------------------------------------------------------- large */

#define BIG 100000

struct bigref { double score; uint32_t id; };

static void big_member(char *buf, uint32_t id) {   /* 10 bytes */
    snprintf(buf, 11, "mem:%06u", id);
}

static int bigref_cmp(const void *pa, const void *pb) {
    const struct bigref *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;   /* same order as the members */
}

static void assert_big_node(const struct zsl_node *n, const struct bigref *r) {
    char m[11];
    big_member(m, r->id);
    assert_non_null(n);
    assert_true(zsl_node_score(n) == r->score);
    assert_true(slice_eq(zsl_node_member(n), (struct slice){ m, 10 }));
}

static void test_large(void **state) {
    (void)state;
    rng_state = 4242;
    struct bigref *ref = malloc(BIG * sizeof(*ref));
    uint32_t *score_of = malloc(BIG * sizeof(*score_of));
    struct zskiplist *zs = zsl_new();
    char m[11];
    for (uint32_t i = 0; i < BIG; i++) {
        uint32_t id = (uint32_t)(((uint64_t)i * 7919) % BIG);   /* shuffled order */
        score_of[id] = (uint32_t)rnd_below(5000);               /* ~20 ties per score */
        big_member(m, id);
        zsl_insert(zs, (struct slice){ m, 10 }, score_of[id]);
    }
    size_t bytes = zsl_memory(zs);
    print_message("zskiplist: %d members of 10 bytes: %zu bytes, %.1f bytes/member\n",
                  BIG, bytes, (double)bytes / BIG);

    /* update a tenth of the scores, delete a block of ranks */
    for (int k = 0; k < BIG / 10; k++) {
        uint32_t id = (uint32_t)rnd_below(BIG);
        big_member(m, id);
        score_of[id] = (uint32_t)rnd_below(5000);
        zsl_update_score(zs, zsl_find(zs, (struct slice){ m, 10 }), score_of[id]);
    }
    for (uint32_t id = 0; id < BIG; id++) ref[id] = (struct bigref){ score_of[id], id };
    qsort(ref, BIG, sizeof(*ref), bigref_cmp);
    assert_int_equal(zsl_delete_range_by_rank(zs, 40000, 49999), 10000);
    memmove(ref + 40000, ref + 50000, 50000 * sizeof(*ref));
    size_t n = BIG - 10000;
    assert_true(zsl_check(zs));

    const struct zsl_node *x = zsl_first(zs);
    for (size_t i = 0; i < n; i++, x = zsl_next(x)) assert_big_node(x, &ref[i]);
    assert_null(x);

    for (int k = 0; k < 2000; k++) {
        size_t r = rnd_below(n);
        assert_big_node(zsl_at_rank(zs, r), &ref[r]);
        big_member(m, ref[r].id);
        assert_int_equal(zsl_rank(zs, (struct slice){ m, 10 }, false), r);
        assert_int_equal(zsl_rank(zs, (struct slice){ m, 10 }, true), n - 1 - r);
        /* a score range [lo, hi) against binary searches of ref */
        double lo = (double)rnd_below(5000), hi = lo + (double)rnd_below(50);
        struct zrange_spec sr = { lo, hi, false, true };
        size_t a = 0, b = n;
        while (a < b) { size_t mid = (a + b) / 2; if (ref[mid].score < lo) a = mid + 1; else b = mid; }
        size_t first = a;
        b = n;
        while (a < b) { size_t mid = (a + b) / 2; if (ref[mid].score < hi) a = mid + 1; else b = mid; }
        size_t count = a - first;
        assert_int_equal(zsl_count_in_range(zs, &sr), count);
        if (count) {
            assert_big_node(zsl_first_in_range(zs, &sr), &ref[first]);
            assert_big_node(zsl_last_in_range(zs, &sr), &ref[a - 1]);
        } else {
            assert_null(zsl_first_in_range(zs, &sr));
        }
    }

    /* delete most by score, then everything by rank */
    struct zrange_spec sr = { 100, 4900, false, false };
    size_t want = 0;
    for (size_t i = 0; i < n; i++) want += ref[i].score >= 100 && ref[i].score <= 4900;
    assert_int_equal(zsl_delete_range_by_score(zs, &sr), want);
    assert_int_equal(zsl_count(zs), n - want);
    assert_true(zsl_check(zs));
    assert_true(zsl_memory(zs) < bytes / 4);   /* nodes freed, map shrunk */
    assert_int_equal(zsl_delete_range_by_rank(zs, 0, SIZE_MAX - 1), n - want);
    assert_int_equal(zsl_count(zs), 0);
    assert_true(zsl_check(zs));
    zsl_free(zs);

    /* a small set, as right after conversion from the compact encoding */
    zs = zsl_new();
    for (uint32_t i = 0; i < 10; i++) {
        big_member(m, i);
        zsl_insert(zs, (struct slice){ m, 10 }, i);
    }
    print_message("zskiplist: 10 members of 10 bytes: %zu bytes, %.1f bytes/member\n",
                  zsl_memory(zs), (double)zsl_memory(zs) / 10);
    zsl_free(zs);
    free(ref);
    free(score_of);
}

int main(void) {
    pool_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_update),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_random_scores),
        cmocka_unit_test(test_random_lex),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
