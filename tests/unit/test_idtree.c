/*
 * Unit tests for the ID tree (B+tree of stream IDs).
 *
 * The reference model is a sorted array of (id, value). Random runs mix
 * inserts (a key already there must be refused and keep its value),
 * removals, finds, replaces, first/last, and seeks followed by a run of
 * next/prev steps in random directions, comparing every answer with the
 * model; idtree_check verifies the structure after each batch and a full
 * walk both ways after every few. The ids come from several patterns:
 * a small dense space (many hits and duplicates), one ms with varying seq,
 * values around 0, 2^63 and UINT64_MAX in both halves, and full 64-bit
 * random ids. Runs grow the tree past three levels and shrink it back, so
 * splits, merges and rebalancing happen at every level.
 *
 * Dedicated tests cover the empty tree, small trees (a one-node tree's
 * leaf grows with its count: the bytes of 1, 2 and 5 keys, every capacity
 * step up to the split at 64 keys and back down to 1 and 0 from either end
 * or in random order, inserts and removals that go back and forth at each
 * step, and a big tree whose root collapses onto a leaf), the stream
 * pattern (appends, then removals from the front, and a sliding window),
 * memory per key, and a tree of 100000 random ids grown and emptied. All
 * seeds are fixed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ringkv/idtree.h"

static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}
static size_t rnd_below(size_t n) { return (size_t)(rnd() % n); }

static struct stream_id sid(uint64_t ms, uint64_t seq) {
    return (struct stream_id){ ms, seq };
}

/* Values are never dereferenced: distinct non-NULL tags. */
static uint64_t serial;
static void *new_val(void) {
    return (void *)(uintptr_t)(++serial * 8);
}

static void assert_id_eq(struct stream_id a, struct stream_id b) {
    assert_int_equal(a.ms, b.ms);
    assert_int_equal(a.seq, b.seq);
}

/* ---------------------------------------------------------------- model */

struct mentry {
    struct stream_id id;
    void *val;
};

/* A sorted run of model entries. */
struct view {
    const struct mentry *e;
    size_t n;
};

static size_t view_lower(struct view v, struct stream_id id) {   /* first >= id */
    size_t lo = 0, hi = v.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (stream_id_cmp(v.e[mid].id, id) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static size_t view_upper(struct view v, struct stream_id id) {   /* first > id */
    size_t lo = 0, hi = v.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (stream_id_cmp(v.e[mid].id, id) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static struct mentry *model;
static size_t nmodel, cap_model;

static struct view mview(void) { return (struct view){ model, nmodel }; }

static bool model_has(struct stream_id id, size_t *pos) {
    *pos = view_lower(mview(), id);
    return *pos < nmodel && stream_id_cmp(model[*pos].id, id) == 0;
}

static void model_insert_at(size_t pos, struct stream_id id, void *val) {
    if (nmodel == cap_model) {
        cap_model = cap_model ? cap_model * 2 : 1024;
        model = realloc(model, cap_model * sizeof(*model));
        assert_non_null(model);
    }
    memmove(&model[pos + 1], &model[pos], (nmodel - pos) * sizeof(*model));
    model[pos] = (struct mentry){ id, val };
    nmodel++;
}

static void model_remove_at(size_t pos) {
    memmove(&model[pos], &model[pos + 1], (nmodel - pos - 1) * sizeof(*model));
    nmodel--;
}

static void model_reset(void) {
    free(model);
    model = NULL;
    nmodel = cap_model = 0;
}

/* ---------------------------------------------------------------- compare */

/* A seek at id, then steps in random directions. The model's cursor is an
 * index in [-1, n]: the first step goes to the first key >= id (next) or
 * the last key <= id (prev), each later one moves by one from there, and a
 * step past either end stays just outside it. */
static void check_seek(const struct idtree *t, struct view v, struct stream_id id, int steps) {
    struct idtree_iter it;
    idtree_seek(&it, t, id);
    ptrdiff_t n = (ptrdiff_t)v.n, c = 0;
    bool fwd = rnd() & 1;
    for (int s = 0; s < steps; s++) {
        if (rnd_below(4) == 0) fwd = !fwd;
        if (s == 0) c = fwd ? (ptrdiff_t)view_lower(v, id) : (ptrdiff_t)view_upper(v, id) - 1;
        else c += fwd ? 1 : -1;
        if (c < -1) c = -1;
        if (c > n) c = n;
        struct stream_id got = { 7, 7 };
        void *val = NULL;
        bool ok = fwd ? idtree_next(&it, &got, &val) : idtree_prev(&it, &got, &val);
        if (c >= 0 && c < n) {
            assert_true(ok);
            assert_id_eq(got, v.e[c].id);
            assert_ptr_equal(val, v.e[c].val);
        } else {
            assert_false(ok);
        }
    }
}

/* Count, ends, and every key in both directions; a step back after the
 * end returns the end key again. */
static void check_all(const struct idtree *t, struct view v) {
    assert_int_equal(idtree_count(t), v.n);
    struct stream_id id;
    void *val;
    if (v.n == 0) {
        assert_false(idtree_first(t, &id, &val));
        assert_false(idtree_last(t, &id, &val));
    } else {
        assert_true(idtree_first(t, &id, &val));
        assert_id_eq(id, v.e[0].id);
        assert_ptr_equal(val, v.e[0].val);
        assert_true(idtree_last(t, &id, &val));
        assert_id_eq(id, v.e[v.n - 1].id);
        assert_ptr_equal(val, v.e[v.n - 1].val);
    }
    struct idtree_iter it;
    idtree_seek(&it, t, STREAM_ID_MIN);
    for (size_t i = 0; i < v.n; i++) {
        assert_true(idtree_next(&it, &id, &val));
        assert_id_eq(id, v.e[i].id);
        assert_ptr_equal(val, v.e[i].val);
    }
    assert_false(idtree_next(&it, &id, &val));
    assert_false(idtree_next(&it, &id, &val));
    if (v.n) {
        assert_true(idtree_prev(&it, &id, &val));
        assert_id_eq(id, v.e[v.n - 1].id);
    }
    idtree_seek(&it, t, STREAM_ID_MAX);
    for (size_t i = v.n; i-- > 0;) {
        assert_true(idtree_prev(&it, &id, &val));
        assert_id_eq(id, v.e[i].id);
        assert_ptr_equal(val, v.e[i].val);
    }
    assert_false(idtree_prev(&it, &id, &val));
    if (v.n) {
        assert_true(idtree_next(&it, &id, &val));
        assert_id_eq(id, v.e[0].id);
    }
}

/* ---------------------------------------------------------------- ids */

enum pattern { P_DENSE, P_SAME_MS, P_EXTREME, P_WIDE };

static uint64_t near_extreme(void) {
    static const uint64_t base[] = { 0, UINT64_C(1) << 63, UINT64_MAX };
    uint64_t b = base[rnd_below(3)];
    uint64_t off = rnd_below(40);
    return rnd() & 1 ? b + off : b - off;   /* wraps around 0 and UINT64_MAX */
}

static struct stream_id gen_id(enum pattern p) {
    switch (p) {
    case P_DENSE: return sid(rnd_below(80), rnd_below(80));
    case P_SAME_MS: {
        uint64_t seq = rnd_below(8) == 0 ? near_extreme() : rnd_below(20000);
        return sid(rnd_below(16) == 0 ? 7 : 1700000000000ULL, seq);
    }
    case P_EXTREME: return sid(near_extreme(), near_extreme());
    default: return sid(rnd(), rnd());
    }
}

/* An id in the model (a hit), a neighbour of one, or a fresh one. */
static struct stream_id pick_id(enum pattern p) {
    size_t r = rnd_below(10);
    if (nmodel && r < 4) return model[rnd_below(nmodel)].id;
    if (nmodel && r < 6) {
        struct stream_id id = model[rnd_below(nmodel)].id;
        if (rnd() & 1) { if (++id.seq == 0) id.ms++; }
        else { if (id.seq-- == 0) id.ms--; }
        return id;
    }
    if (r == 6) return rnd() & 1 ? STREAM_ID_MIN : STREAM_ID_MAX;
    return gen_id(p);
}

/* A tree of at most 31 keys is a single leaf (two leaves hold at least 32),
 * whose capacity stays within twice its count: its bytes over the empty
 * tree's are the 8-byte leaf header and at most 48 per key (24 for one). */
static void check_small_memory(const struct idtree *t, size_t empty) {
    size_t n = idtree_count(t), bytes = idtree_memory(t) - empty;
    if (n == 0) assert_int_equal(bytes, 0);
    else if (n == 1) assert_true(bytes <= 8 + 2 * 24);
    else if (n <= 31) assert_true(bytes <= 8 + 48 * n);
    if (n > 0) assert_true(bytes >= 8 + 24 * n);
}

/* ---------------------------------------------------------------- random */

static void random_op(struct idtree *t, enum pattern p, bool growing) {
    size_t r = rnd_below(100), pos;
    size_t insert_pct = growing ? 55 : 20, remove_pct = growing ? 15 : 55;
    if (r < insert_pct) {
        struct stream_id id = rnd_below(3) ? gen_id(p) : pick_id(p);
        void *val = new_val();
        bool had = model_has(id, &pos);
        void *before = had ? model[pos].val : NULL;
        assert_int_equal(idtree_insert(t, id, val), !had);
        if (had) assert_ptr_equal(idtree_find(t, id), before);
        else model_insert_at(pos, id, val);
        return;
    }
    r -= insert_pct;
    if (r < remove_pct) {
        struct stream_id id = pick_id(p);
        void *old = NULL;
        bool had = model_has(id, &pos);
        assert_int_equal(idtree_remove(t, id, &old), had);
        if (had) {
            assert_ptr_equal(old, model[pos].val);
            model_remove_at(pos);
        }
        assert_null(idtree_find(t, id));
        return;
    }
    r -= remove_pct;
    struct stream_id id = pick_id(p);
    bool had = model_has(id, &pos);
    if (r < 10) {
        assert_ptr_equal(idtree_find(t, id), had ? model[pos].val : NULL);
    } else if (r < 17) {
        void *val = new_val();
        assert_int_equal(idtree_replace(t, id, val), had);
        if (had) model[pos].val = val;
        assert_ptr_equal(idtree_find(t, id), had ? val : NULL);
    } else if (r < 20) {
        struct stream_id got;
        void *val;
        bool ok = rnd() & 1 ? idtree_first(t, &got, &val) : idtree_last(t, &got, &val);
        assert_int_equal(ok, nmodel > 0);
    } else {
        /* mostly short runs; some cross several leaves */
        int steps = rnd_below(8) == 0 ? 1 + (int)rnd_below(300) : 1 + (int)rnd_below(12);
        check_seek(t, mview(), id, steps);
    }
}

/* Grow to about target keys and shrink to a few, twice; then remove the
 * rest and expect the empty tree's memory back. */
static void random_run(uint64_t seed, enum pattern p, size_t target) {
    rng_state = seed;
    model_reset();
    struct idtree *t = idtree_new();
    size_t empty = idtree_memory(t);
    size_t ops = 0;
    for (int cycle = 0; cycle < 2; cycle++) {
        for (int growing = 1; growing >= 0; growing--) {
            size_t guard = 0;
            while (growing ? nmodel < target : nmodel > target / 50) {
                random_op(t, p, growing);
                if (++ops % 256 == 0) assert_true(idtree_check(t));
                if (ops % 2048 == 0) check_all(t, mview());
                assert_true(++guard < 40 * target);   /* the pattern can reach the target */
            }
            assert_true(idtree_check(t));
            check_all(t, mview());
        }
    }
    while (nmodel) {
        size_t pos = rnd_below(nmodel);
        void *old = NULL;
        assert_true(idtree_remove(t, model[pos].id, &old));
        assert_ptr_equal(old, model[pos].val);
        model_remove_at(pos);
        if (nmodel % 512 == 0 || nmodel < 64) assert_true(idtree_check(t));
        if (nmodel <= 31) check_small_memory(t, empty);
    }
    assert_true(idtree_check(t));
    check_all(t, mview());
    assert_int_equal(idtree_memory(t), empty);
    idtree_free(t, NULL);
    model_reset();
}

static void test_random_dense(void **state) {
    (void)state;
    random_run(0x9E3779B97F4A7C15ULL, P_DENSE, 3000);
    random_run(12345, P_DENSE, 4000);
}

static void test_random_same_ms(void **state) {
    (void)state;
    random_run(0xC0FFEE, P_SAME_MS, 5000);
}

static void test_random_extremes(void **state) {
    (void)state;
    random_run(0xBADC0DE, P_EXTREME, 6000);
}

static void test_random_wide(void **state) {
    (void)state;
    random_run(424242, P_WIDE, 10000);
    random_run(7, P_WIDE, 300);
}

/* Around the split of the one-node tree: grow to 64-130 keys and back to
 * one, several times. */
static void test_random_small(void **state) {
    (void)state;
    random_run(0x51A11, P_DENSE, 64);
    random_run(0x51A12, P_WIDE, 70);
    random_run(0x51A13, P_SAME_MS, 130);
    random_run(0x51A14, P_EXTREME, 100);
}

/* ---------------------------------------------------------------- empty */

static size_t freed;
static void count_free(void *val) {
    assert_non_null(val);
    freed++;
}

static void test_empty(void **state) {
    (void)state;
    rng_state = 99;
    struct idtree *t = idtree_new();
    size_t empty = idtree_memory(t);
    assert_true(empty > 0);
    assert_int_equal(idtree_count(t), 0);
    assert_true(idtree_check(t));
    struct stream_id id = { 5, 5 };
    void *val = (void *)&id;
    assert_false(idtree_first(t, &id, &val));
    assert_false(idtree_last(t, &id, &val));
    assert_null(idtree_find(t, STREAM_ID_MIN));
    assert_null(idtree_find(t, STREAM_ID_MAX));
    assert_false(idtree_remove(t, sid(1, 1), &val));
    assert_false(idtree_replace(t, sid(1, 1), &id));
    const struct stream_id seeks[] = { STREAM_ID_MIN, STREAM_ID_MAX, { 1, 2 } };
    for (size_t i = 0; i < RK_ARRAY_LEN(seeks); i++) {
        struct idtree_iter it;
        idtree_seek(&it, t, seeks[i]);
        assert_false(idtree_next(&it, &id, &val));
        assert_false(idtree_prev(&it, &id, &val));
        assert_false(idtree_next(&it, &id, &val));
        idtree_seek(&it, t, seeks[i]);
        assert_false(idtree_prev(&it, &id, &val));
        assert_false(idtree_next(&it, &id, &val));
    }

    /* one key, at each extreme, and back to empty */
    const struct stream_id one[] = { STREAM_ID_MIN, STREAM_ID_MAX, { UINT64_MAX, 0 }, { 0, UINT64_MAX } };
    for (size_t i = 0; i < RK_ARRAY_LEN(one); i++) {
        void *v = new_val();
        assert_true(idtree_insert(t, one[i], v));
        assert_false(idtree_insert(t, one[i], new_val()));
        assert_true(idtree_check(t));
        assert_true(idtree_memory(t) > empty);
        struct mentry e = { one[i], v };
        check_all(t, (struct view){ &e, 1 });
        for (size_t k = 0; k < RK_ARRAY_LEN(seeks); k++) check_seek(t, (struct view){ &e, 1 }, seeks[k], 6);
        check_seek(t, (struct view){ &e, 1 }, one[i], 6);
        void *old = NULL;
        assert_true(idtree_remove(t, one[i], &old));
        assert_ptr_equal(old, v);
        assert_false(idtree_remove(t, one[i], NULL));
        assert_int_equal(idtree_count(t), 0);
        assert_int_equal(idtree_memory(t), empty);
        assert_true(idtree_check(t));
    }

    /* the extremes together, in both orders of insertion */
    for (int order = 0; order < 2; order++) {
        struct mentry e[RK_ARRAY_LEN(one)] = {
            { STREAM_ID_MIN, new_val() }, { { 0, UINT64_MAX }, new_val() },
            { { UINT64_MAX, 0 }, new_val() }, { STREAM_ID_MAX, new_val() },
        };
        for (size_t i = 0; i < RK_ARRAY_LEN(e); i++) {
            size_t k = order ? RK_ARRAY_LEN(e) - 1 - i : i;
            assert_true(idtree_insert(t, e[k].id, e[k].val));
        }
        assert_true(idtree_check(t));
        struct view v = { e, RK_ARRAY_LEN(e) };
        check_all(t, v);
        for (int s = 0; s < 50; s++) check_seek(t, v, e[rnd_below(4)].id, 1 + (int)rnd_below(10));
        check_seek(t, v, sid(1, 0), 10);
        check_seek(t, v, sid(UINT64_MAX - 1, UINT64_MAX), 10);
        for (size_t i = 0; i < RK_ARRAY_LEN(e); i++) assert_true(idtree_remove(t, e[i].id, NULL));
        assert_int_equal(idtree_memory(t), empty);
    }

    /* free_val sees every value once */
    for (uint64_t i = 0; i < 5000; i++) assert_true(idtree_insert(t, sid(i / 3, i % 3), new_val()));
    freed = 0;
    idtree_free(t, count_free);
    assert_int_equal(freed, 5000);
    idtree_free(idtree_new(), count_free);
    assert_int_equal(freed, 5000);
}

/* ---------------------------------------------------------------- small */

static struct mentry *append_ids(size_t n);

static int tree_depth(const struct idtree *t) {
    struct idtree_iter it;
    idtree_seek(&it, t, STREAM_ID_MIN);
    return it.depth;
}

/* One step of the small-tree tests: structure, every key both ways, and
 * the memory bounds. */
static void check_small(const struct idtree *t, size_t empty, const struct mentry *e, size_t n) {
    assert_true(idtree_check(t));
    check_all(t, (struct view){ e, n });
    check_small_memory(t, empty);
}

static void test_small_memory(void **state) {
    (void)state;
    rng_state = 0x5A11;
    struct idtree *t = idtree_new();
    size_t empty = idtree_memory(t);
    struct mentry e[5];
    size_t mem[6];
    for (size_t i = 0; i < 5; i++) {
        e[i] = (struct mentry){ sid(1700000000000ULL + i, 0), new_val() };
        assert_true(idtree_insert(t, e[i].id, e[i].val));
        mem[i + 1] = idtree_memory(t);
        check_small(t, empty, e, i + 1);
    }
    print_message("idtree: empty %zu bytes; 1 key %zu, 2 keys %zu, 5 keys %zu\n",
                  empty, mem[1], mem[2], mem[5]);
    assert_true(mem[1] <= 96);             /* counting the tree itself */
    assert_true(mem[2] <= 96 + 24);
    assert_true(mem[5] <= 96 + 4 * 48);
    /* a one-key tree with free_val */
    struct idtree *one = idtree_new();
    assert_true(idtree_insert(one, sid(1, 1), new_val()));
    freed = 0;
    idtree_free(one, count_free);
    assert_int_equal(freed, 1);
    freed = 0;
    idtree_free(t, count_free);
    assert_int_equal(freed, 5);

    /* many small trees, as many small streams or pending lists */
    enum { TREES = 1000 };
    struct idtree **ts = malloc(TREES * sizeof(*ts));
    assert_non_null(ts);
    size_t total = 0, keys = 0;
    for (size_t i = 0; i < TREES; i++) {
        ts[i] = idtree_new();
        size_t n = 1 + i % 3;
        for (size_t k = 0; k < n; k++) assert_true(idtree_insert(ts[i], sid(i, k), new_val()));
        keys += n;
        total += idtree_memory(ts[i]);
    }
    print_message("idtree: %d trees of 1-3 keys: %.1f bytes/tree\n", TREES, (double)total / TREES);
    assert_true(total <= TREES * empty + keys * 48);
    for (size_t i = 0; i < TREES; i++) idtree_free(ts[i], NULL);
    free(ts);
}

/* Removal orders back down from the split tree of 64 keys. */
enum { DRAIN_HIGH, DRAIN_LOW, DRAIN_RANDOM };

static void test_small_steps(void **state) {
    (void)state;
    rng_state = 0x57E9;
    enum { N = 64 };   /* one past a full leaf */
    for (int order = DRAIN_HIGH; order <= DRAIN_RANDOM; order++) {
        struct mentry e[N + 1];
        struct idtree *t = idtree_new();
        size_t empty = idtree_memory(t), mem[N + 1], steps = 0;
        mem[0] = empty;
        /* every capacity step on the way up, then the split */
        for (size_t n = 1; n <= N; n++) {
            e[n - 1] = (struct mentry){ sid(100, 2 * n), new_val() };
            assert_true(idtree_insert(t, e[n - 1].id, e[n - 1].val));
            mem[n] = idtree_memory(t);
            assert_true(mem[n] >= mem[n - 1]);
            if (mem[n] > mem[n - 1]) steps++;
            check_small(t, empty, e, n);
            assert_int_equal(tree_depth(t), n < N ? 1 : 2);
            if (order == DRAIN_HIGH && n < N) {
                /* a key in and out at every count, across each step: the
                 * tree settles on one size with the key and one without */
                struct stream_id x = sid(100, 2 * n - 1);   /* before the last key */
                size_t with = 0, without = 0;
                for (int k = 0; k < 4; k++) {
                    assert_true(idtree_insert(t, x, new_val()));
                    assert_true(idtree_check(t));
                    assert_true(k == 0 || idtree_memory(t) == with);
                    with = idtree_memory(t);
                    assert_true(idtree_remove(t, x, NULL));
                    assert_true(idtree_check(t));
                    assert_true(k == 0 || idtree_memory(t) == without);
                    without = idtree_memory(t);
                    assert_true(without >= mem[n] && without <= with);
                }
                check_small(t, empty, e, n);
            }
        }
        print_message("idtree: 63 keys %zu bytes, 64 keys %zu bytes, %zu capacity steps\n",
                      mem[N - 1], mem[N], steps);
        assert_true(steps >= 7);                 /* 1 ... 63 and the split */
        assert_true(mem[N - 1] - empty <= 1536);
        assert_true(mem[N] - empty >= 3 * (mem[N - 1] - empty) - 64);   /* three full-size nodes */

        /* and back down to one key, then none */
        size_t n = N, prev = idtree_memory(t);
        while (n > 0) {
            size_t k = order == DRAIN_HIGH ? n - 1 : order == DRAIN_LOW ? 0 : rnd_below(n);
            void *old = NULL;
            assert_true(idtree_remove(t, e[k].id, &old));
            assert_ptr_equal(old, e[k].val);
            memmove(&e[k], &e[k + 1], (n - k - 1) * sizeof(e[0]));
            n--;
            check_small(t, empty, e, n);
            size_t now = idtree_memory(t);
            assert_true(now <= prev);
            prev = now;
            if (n == 1) {
                print_message("idtree: back to 1 key: %zu bytes\n", now);
                assert_true(now <= 96);
                /* and up again from one key: the leaf grows back */
                for (size_t i = 0; i < 5; i++) {
                    struct stream_id x = sid(200, i);
                    assert_true(idtree_insert(t, x, new_val()));
                    assert_true(idtree_check(t));
                }
                assert_true(idtree_memory(t) <= mem[6] + 48);
                for (size_t i = 0; i < 5; i++) assert_true(idtree_remove(t, sid(200, i), NULL));
                check_small(t, empty, e, n);
                prev = idtree_memory(t);
            }
        }
        assert_int_equal(idtree_memory(t), empty);
        assert_int_equal(tree_depth(t), 0);
        idtree_free(t, NULL);
    }
}

/* A deep tree drained to a few keys: the root collapses onto a full-size
 * leaf, which then shrinks to its count. */
static void test_small_after_big(void **state) {
    (void)state;
    rng_state = 0xC011;
    const size_t n0 = 5000;
    for (int order = DRAIN_HIGH; order <= DRAIN_RANDOM; order++) {
        struct mentry *e = append_ids(n0);
        struct idtree *t = idtree_new();
        size_t empty = idtree_memory(t), n = n0;
        for (size_t i = 0; i < n; i++) assert_true(idtree_insert(t, e[i].id, e[i].val));
        assert_true(tree_depth(t) >= 3);
        while (n > 0) {
            size_t k = order == DRAIN_HIGH ? n - 1 : order == DRAIN_LOW ? 0 : rnd_below(n);
            assert_true(idtree_remove(t, e[k].id, NULL));
            memmove(&e[k], &e[k + 1], (n - k - 1) * sizeof(e[0]));
            n--;
            if (n <= 70) check_small(t, empty, e, n);
            else if (n % 499 == 0) assert_true(idtree_check(t));
        }
        assert_int_equal(idtree_memory(t), empty);
        idtree_free(t, NULL);
        free(e);
    }
}

/* ---------------------------------------------------------------- streams */

#define BIG 100000

/* Increasing ids as XADD makes them: the ms often repeats. */
static struct mentry *append_ids(size_t n) {
    struct mentry *e = malloc(n * sizeof(*e));
    assert_non_null(e);
    struct stream_id id = { 1700000000000ULL, 0 };
    for (size_t i = 0; i < n; i++) {
        if (rnd_below(3) == 0) id = sid(id.ms + 1 + rnd_below(5), 0);
        else id.seq++;
        e[i] = (struct mentry){ id, new_val() };
    }
    return e;
}

static void test_stream_pattern(void **state) {
    (void)state;
    rng_state = 2024;
    struct mentry *e = append_ids(BIG);
    struct idtree *t = idtree_new();
    size_t empty = idtree_memory(t);
    for (size_t i = 0; i < BIG; i++) {
        assert_true(idtree_insert(t, e[i].id, e[i].val));
        if (i % 10007 == 0) assert_true(idtree_check(t));
    }
    assert_true(idtree_check(t));
    check_all(t, (struct view){ e, BIG });
    size_t bytes = idtree_memory(t) - empty;
    print_message("idtree: %d appended keys: %zu bytes, %.2f bytes/key\n",
                  BIG, bytes, (double)bytes / BIG);
    assert_true(bytes <= (size_t)32 * BIG);
    for (int s = 0; s < 200; s++) {
        struct stream_id id = e[rnd_below(BIG)].id;
        if (rnd() & 1) id.seq++;
        check_seek(t, (struct view){ e, BIG }, id, 1 + (int)rnd_below(200));
    }

    /* XTRIM / XACK order: the lowest key goes first */
    for (size_t head = 0; head < BIG; head++) {
        void *old = NULL;
        assert_true(idtree_remove(t, e[head].id, &old));
        assert_ptr_equal(old, e[head].val);
        struct view v = { e + head + 1, BIG - head - 1 };
        if (head % 997 == 0) {
            assert_true(idtree_check(t));
            assert_int_equal(idtree_count(t), v.n);
            struct stream_id first;
            assert_true(idtree_first(t, &first, NULL));
            assert_id_eq(first, v.e[0].id);
            check_seek(t, v, e[head].id, 100);
            check_seek(t, v, v.e[rnd_below(v.n)].id, 100);
            /* the tree stays within bounds per key as it drains */
            assert_true(idtree_memory(t) - empty <= 64 * v.n + 4 * 1536);
        }
    }
    assert_true(idtree_check(t));
    assert_int_equal(idtree_count(t), 0);
    assert_int_equal(idtree_memory(t), empty);
    idtree_free(t, NULL);
    free(e);
}

/* XADD with MAXLEN: append one, trim the oldest, with now and then a
 * key acknowledged out of order. */
static void test_sliding_window(void **state) {
    (void)state;
    rng_state = 31337;
    const size_t window = 20000, total = 4 * BIG;
    struct mentry *e = append_ids(total);
    bool *gone = calloc(total, 1);
    assert_non_null(gone);
    struct idtree *t = idtree_new();
    size_t empty = idtree_memory(t), head = 0, live = 0;
    for (size_t i = 0; i < total; i++) {
        assert_true(idtree_insert(t, e[i].id, e[i].val));
        live++;
        if (rnd_below(50) == 0) {   /* out of order, within the window */
            size_t k = head + rnd_below(i + 1 - head);
            if (!gone[k]) {
                assert_true(idtree_remove(t, e[k].id, NULL));
                gone[k] = true;
                live--;
            }
        }
        while (live > window) {
            if (!gone[head]) {
                assert_true(idtree_remove(t, e[head].id, NULL));
                gone[head] = true;
                live--;
            }
            head++;
        }
        if (i % 20011 == 0) {
            assert_true(idtree_check(t));
            assert_int_equal(idtree_count(t), live);
        }
    }
    assert_true(idtree_check(t));
    size_t bytes = idtree_memory(t) - empty;
    print_message("idtree: sliding window of %zu keys: %zu bytes, %.2f bytes/key\n",
                  live, bytes, (double)bytes / (double)live);
    assert_true(bytes <= 32 * live);

    /* the live keys, in order */
    struct mentry *v = malloc(live * sizeof(*v));
    assert_non_null(v);
    size_t n = 0;
    for (size_t i = head; i < total; i++)
        if (!gone[i]) v[n++] = e[i];
    assert_int_equal(n, live);
    check_all(t, (struct view){ v, n });
    idtree_free(t, NULL);
    free(v);
    free(gone);
    free(e);
}

/* ---------------------------------------------------------------- large */

static int mentry_cmp(const void *pa, const void *pb) {
    return stream_id_cmp(((const struct mentry *)pa)->id, ((const struct mentry *)pb)->id);
}

static void test_large_random(void **state) {
    (void)state;
    rng_state = 0x5EED;
    struct idtree *t = idtree_new();
    size_t empty = idtree_memory(t);
    struct mentry *e = malloc(BIG * sizeof(*e));
    assert_non_null(e);
    for (size_t i = 0; i < BIG; i++) {
        /* few distinct ms, so the seq decides many comparisons */
        e[i] = (struct mentry){ sid(rnd_below(1000), rnd()), new_val() };
        assert_true(idtree_insert(t, e[i].id, e[i].val));
        if (i % 9973 == 0) assert_true(idtree_check(t));
    }
    assert_true(idtree_check(t));
    assert_int_equal(idtree_count(t), BIG);
    size_t bytes = idtree_memory(t) - empty;
    print_message("idtree: %d random keys: %zu bytes, %.2f bytes/key\n", BIG, bytes, (double)bytes / BIG);
    assert_true(bytes <= (size_t)64 * BIG);   /* nodes at least half full */

    struct idtree_iter it;
    idtree_seek(&it, t, STREAM_ID_MIN);
    assert_true(it.depth >= 3);

    /* removal order: the insertion order shuffled; the model sorted */
    struct mentry *sorted = malloc(BIG * sizeof(*sorted));
    assert_non_null(sorted);
    memcpy(sorted, e, BIG * sizeof(*e));
    qsort(sorted, BIG, sizeof(*sorted), mentry_cmp);
    check_all(t, (struct view){ sorted, BIG });
    for (int s = 0; s < 300; s++)
        check_seek(t, (struct view){ sorted, BIG }, sid(rnd_below(1001), rnd()), 1 + (int)rnd_below(100));
    for (size_t i = BIG; i > 1; i--) {
        size_t k = rnd_below(i);
        struct mentry x = e[k]; e[k] = e[i - 1]; e[i - 1] = x;
    }

    for (size_t i = 0; i < BIG; i++) {
        void *old = NULL;
        assert_true(idtree_remove(t, e[i].id, &old));
        assert_ptr_equal(old, e[i].val);
        assert_false(idtree_remove(t, e[i].id, NULL));
        if (i % 9973 == 0) {
            assert_true(idtree_check(t));
            assert_int_equal(idtree_count(t), BIG - i - 1);
        }
        if (i == BIG / 2) {
            /* the rest, sorted, against a full walk */
            size_t n = BIG - i - 1;
            memcpy(sorted, e + i + 1, n * sizeof(*e));
            qsort(sorted, n, sizeof(*sorted), mentry_cmp);
            check_all(t, (struct view){ sorted, n });
            for (int s = 0; s < 100; s++)
                check_seek(t, (struct view){ sorted, n }, sorted[rnd_below(n)].id, 1 + (int)rnd_below(100));
            assert_true(idtree_memory(t) - empty <= 64 * n + 4 * 1536);
        }
    }
    assert_true(idtree_check(t));
    assert_int_equal(idtree_count(t), 0);
    assert_int_equal(idtree_memory(t), empty);
    idtree_seek(&it, t, STREAM_ID_MIN);
    assert_false(idtree_next(&it, NULL, NULL));
    idtree_free(t, NULL);
    free(sorted);
    free(e);
}

/* Four levels. A region is removed from its high end, which drains nodes
 * at every level from their last child while their left neighbours are
 * still full; then runs of keys go in shuffled order, so that nodes below
 * the root underflow next to neighbours in every state; then everything
 * from the high end, which empties spine nodes level by level. */
#define DEEP 300000   /* more than three levels of 63-way nodes hold */
#define RUN 1000

static void remove_deep(struct idtree *t, const struct mentry *e, bool *gone, size_t i) {
    void *old = NULL;
    assert_true(idtree_remove(t, e[i].id, &old));
    assert_ptr_equal(old, e[i].val);
    gone[i] = true;
}

static void test_deep(void **state) {
    (void)state;
    rng_state = 0xDEE9;
    struct mentry *e = append_ids(DEEP);
    bool *gone = calloc(DEEP, 1);
    assert_non_null(gone);
    struct idtree *t = idtree_new();
    size_t empty = idtree_memory(t), live = DEEP;
    for (size_t i = 0; i < DEEP; i++) assert_true(idtree_insert(t, e[i].id, e[i].val));
    assert_true(idtree_check(t));
    struct idtree_iter it;
    idtree_seek(&it, t, STREAM_ID_MIN);
    assert_true(it.depth >= 4);

    for (size_t i = 265000; i-- > 190000;) {
        remove_deep(t, e, gone, i);
        live--;
        if (i % 4999 == 0) assert_true(idtree_check(t));
    }
    assert_true(idtree_check(t));

    /* three runs of every four, in shuffled order */
    size_t runs = DEEP / RUN, *order = malloc(runs * sizeof(*order));
    assert_non_null(order);
    for (size_t r = 0; r < runs; r++) order[r] = r;
    for (size_t r = runs; r > 1; r--) {
        size_t k = rnd_below(r), x = order[k];
        order[k] = order[r - 1];
        order[r - 1] = x;
    }
    for (size_t r = 0; r < runs; r++) {
        if (order[r] % 4 == 0) continue;
        for (size_t i = order[r] * RUN; i < (order[r] + 1) * RUN; i++) {
            if (gone[i]) continue;
            remove_deep(t, e, gone, i);
            live--;
        }
        if (r % 16 == 0) {
            assert_true(idtree_check(t));
            assert_int_equal(idtree_count(t), live);
        }
    }
    assert_true(idtree_check(t));
    size_t n = 0;
    for (size_t i = 0; i < DEEP; i++)
        if (!gone[i]) e[n++] = e[i];
    assert_int_equal(n, live);
    struct view v = { e, n };
    check_all(t, v);
    for (int s = 0; s < 300; s++) {
        struct stream_id id = e[rnd_below(n)].id;
        id.seq += rnd_below(3);
        check_seek(t, v, id, 1 + (int)rnd_below(200));
    }

    /* from the high end down to nothing */
    while (n > 0) {
        void *old = NULL;
        assert_true(idtree_remove(t, e[n - 1].id, &old));
        assert_ptr_equal(old, e[n - 1].val);
        n--;
        if (n % 1009 == 0) {
            assert_true(idtree_check(t));
            struct stream_id last;
            if (n) {
                assert_true(idtree_last(t, &last, NULL));
                assert_id_eq(last, e[n - 1].id);
                check_seek(t, (struct view){ e, n }, STREAM_ID_MAX, 100);
            }
        }
    }
    assert_true(idtree_check(t));
    assert_int_equal(idtree_memory(t), empty);
    idtree_free(t, NULL);
    free(order);
    free(gone);
    free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_random_dense),
        cmocka_unit_test(test_random_same_ms),
        cmocka_unit_test(test_random_extremes),
        cmocka_unit_test(test_random_wide),
        cmocka_unit_test(test_random_small),
        cmocka_unit_test(test_small_memory),
        cmocka_unit_test(test_small_steps),
        cmocka_unit_test(test_small_after_big),
        cmocka_unit_test(test_stream_pattern),
        cmocka_unit_test(test_sliding_window),
        cmocka_unit_test(test_large_random),
        cmocka_unit_test(test_deep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
