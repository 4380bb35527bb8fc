/*
 * Unit tests for the quicklist: node fill limits in both modes (counts and
 * bytes), large elements in nodes of their own, the listpack/quicklist
 * encoding test Redis applies when a list grows and shrinks, and random
 * runs of every list operation (push, pop, index, set, insert at a pivot,
 * range delete, LREM counts, iteration both ways) against a model (an
 * array of strings), with the list's invariants checked after each step.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <cmocka.h>

#include "ringkv/quicklist.h"
#include "ringkv/util.h"

#include "list_model.h"
}

static void assert_value(const struct lp_value *v, struct slice want) {
    char buf[LP_INTBUF_SIZE];
    struct slice got = lp_value_str(v, buf);
    assert_int_equal(got.len, want.len);
    if (want.len) assert_memory_equal(got.ptr, want.ptr, want.len);
}

static void check_same(const struct quicklist *ql, const struct model *m) {
    assert_true(ql_check(ql));
    assert_int_equal(ql_count(ql), m->n);
    struct ql_iter it;
    struct lp_value v;
    size_t i = 0;
    assert_int_equal(ql_iter_init(&it, ql, 0, false), m->n > 0);
    while (ql_iter_next(&it, &v)) {
        assert_true(i < m->n);
        assert_value(&v, m_at(m, i++));
    }
    assert_int_equal(i, m->n);
    assert_int_equal(ql_iter_init(&it, ql, -1, true), m->n > 0);
    while (ql_iter_next(&it, &v)) {
        assert_true(i > 0);
        assert_value(&v, m_at(m, --i));
    }
    assert_int_equal(i, 0);
}

/* ------------------------------------------------------------ values */

static char valbuf[4][70000];
static unsigned valslot;
static unsigned large_pct;   /* chance, in 1/1000, of a large value */

static struct slice rand_value(void) {
    char *b = valbuf[valslot++ % 4];
    unsigned r = (unsigned)(rnd() % 1000);
    if (r < large_pct) {
        static const size_t lens[] = { 3000, 4097, 5000, 8192, 8193, 20000, 65537, 69999 };
        size_t len = lens[rnd() % RK_ARRAY_LEN(lens)];
        memset(b, 'a' + (int)(rnd() % 3), len);
        return (struct slice){ b, len };
    }
    if (r < 400) {       /* integers, few distinct ones so LREM/LINSERT find them */
        static const long long vs[] = { 0, 1, -1, 100, 5000, -70000, 1LL << 40, LLONG_MIN };
        int n = ll_to_str(b, 70000, vs[rnd() % RK_ARRAY_LEN(vs)]);
        return (struct slice){ b, (size_t)n };
    }
    if (r < 500) {
        static const char *const sp[] = { "", "01", "-0", "+1", "1.0" };
        return S(sp[rnd() % RK_ARRAY_LEN(sp)]);
    }
    size_t len = 1 + rnd() % 3;
    if (r > 900) len = rnd() % 80;
    for (size_t i = 0; i < len; i++) b[i] = (char)('a' + rnd() % 3);
    return (struct slice){ b, len };
}

/* ------------------------------------------------------------ random run */

static void random_run(int fill, uint64_t seed, int ops, size_t maxlen) {
    rng_state = seed;
    struct quicklist *ql = ql_new(fill);
    struct model m = { 0 };
    struct rbuf buf = { 0 };
    struct lp_value v;
    for (int op = 0; op < ops; op++) {
        unsigned r = (unsigned)(rnd() % 100);
        if (m.n >= maxlen && r < 40) r += 40;
        if (r < 30) {                                   /* LPUSH / RPUSH */
            struct slice s = rand_value();
            bool tail = rnd() & 1;
            ql_push(ql, s, tail);
            m_insert(&m, tail ? m.n : 0, s);
        } else if (r < 40) {                            /* LINSERT */
            struct slice pivot = (m.n && rnd() % 4) ? m_at(&m, rnd() % m.n) : rand_value();
            char pcopy[80];
            if (pivot.len > sizeof(pcopy)) pivot = S("nope");   /* keep a copy: pivot is a model string */
            memcpy(pcopy, pivot.ptr, pivot.len);
            pivot.ptr = pcopy;
            struct slice s = rand_value();
            bool after = rnd() & 1;
            size_t at = SIZE_MAX;
            for (size_t i = 0; i < m.n; i++) {
                if (slice_eq(m_at(&m, i), pivot)) { at = i; break; }
            }
            assert_int_equal(ql_insert(ql, pivot, s, after), at != SIZE_MAX);
            if (at != SIZE_MAX) m_insert(&m, after ? at + 1 : at, s);
        } else if (r < 55) {                            /* LPOP / RPOP */
            bool tail = rnd() & 1;
            bool got = ql_pop(ql, tail, &v, &buf);
            assert_int_equal(got, m.n > 0);
            if (got) {
                size_t i = tail ? m.n - 1 : 0;
                assert_value(&v, m_at(&m, i));
                m_delete(&m, i, 1);
            }
        } else if (r < 65) {                            /* LINDEX */
            long long i = (long long)(rnd() % (2 * m.n + 2)) - (long long)m.n - 1;
            long long j = i < 0 ? i + (long long)m.n : i;
            bool in = j >= 0 && j < (long long)m.n;
            assert_int_equal(ql_index(ql, i, &v), in);
            if (in) assert_value(&v, m_at(&m, (size_t)j));
        } else if (r < 73) {                            /* LSET */
            long long i = (long long)(rnd() % (2 * m.n + 2)) - (long long)m.n - 1;
            long long j = i < 0 ? i + (long long)m.n : i;
            bool in = j >= 0 && j < (long long)m.n;
            struct slice s = rand_value();
            assert_int_equal(ql_replace(ql, i, s), in);
            if (in) {
                free(m.v[j].p);
                m.v[j] = str_dup(s);
            }
        } else if (r < 80) {                            /* LTRIM-like range delete */
            long long i = (long long)(rnd() % (2 * m.n + 2)) - (long long)m.n - 1;
            long long j = i < 0 ? i + (long long)m.n : i;
            size_t k = (rnd() & 1) ? rnd() % 4 : rnd() % (m.n + 2);
            size_t want = 0;
            if (j >= 0 && j < (long long)m.n) want = k < m.n - (size_t)j ? k : m.n - (size_t)j;
            assert_int_equal(ql_del_range(ql, i, k), want);
            if (want) m_delete(&m, (size_t)j, want);
        } else if (r < 90) {                            /* LREM */
            struct slice s = (m.n && rnd() % 4) ? m_at(&m, rnd() % m.n) : rand_value();
            char scopy[80];
            if (s.len > sizeof(scopy)) s = S("nope");
            memcpy(scopy, s.ptr, s.len);
            s.ptr = scopy;
            long long count = (long long)(rnd() % 7) - 3;
            size_t want = 0;
            if (count >= 0) {
                for (size_t i = 0; i < m.n && (count == 0 || want < (size_t)count);) {
                    if (slice_eq(m_at(&m, i), s)) { m_delete(&m, i, 1); want++; }
                    else i++;
                }
            } else {
                for (size_t i = m.n; i-- > 0 && want < (size_t)-count;) {
                    if (slice_eq(m_at(&m, i), s)) { m_delete(&m, i, 1); want++; }
                }
            }
            assert_int_equal(ql_remove(ql, s, count), want);
        } else {                                        /* LRANGE from a random index */
            long long i = (long long)(rnd() % (2 * m.n + 2)) - (long long)m.n - 1;
            long long j = i < 0 ? i + (long long)m.n : i;
            bool in = j >= 0 && j < (long long)m.n;
            bool rev = rnd() & 1;
            struct ql_iter it;
            assert_int_equal(ql_iter_init(&it, ql, i, rev), in);
            size_t steps = 0;
            while (steps < 20 && ql_iter_next(&it, &v)) {
                assert_true(in);
                long long at = rev ? j - (long long)steps : j + (long long)steps;
                assert_true(at >= 0 && at < (long long)m.n);
                assert_value(&v, m_at(&m, (size_t)at));
                steps++;
            }
            if (!in) assert_int_equal(steps, 0);
            else if (steps < 20) assert_int_equal(steps, rev ? (size_t)j + 1 : m.n - (size_t)j);
        }
        assert_int_equal(ql_count(ql), m.n);
        assert_true(ql_check(ql));
        if (m.n < 32 || op % 64 == 0) check_same(ql, &m);
    }
    check_same(ql, &m);
    rbuf_free(&buf);
    ql_free(ql);
    m_free(&m);
}

static const int fills[] = { 1, 2, 3, 16, 128, 0, -1, -2, -5 };

static void test_random_small_lists(void **state) {
    (void)state;
    large_pct = 5;
    for (size_t f = 0; f < RK_ARRAY_LEN(fills); f++)
        random_run(fills[f], 0x1000 + f, 6000, 40);
}

static void test_random_long_lists(void **state) {
    (void)state;
    large_pct = 2;
    for (size_t f = 0; f < RK_ARRAY_LEN(fills); f++)
        random_run(fills[f], 0x77770 + f, 8000, 600);
}

static void test_random_many_large(void **state) {
    (void)state;
    large_pct = 150;
    random_run(-1, 99, 1500, 60);
    random_run(4, 98, 1500, 60);
}

/* ------------------------------------------------------------ limits */

static void test_count_fill(void **state) {
    (void)state;
    for (int fill = 0; fill <= 5; fill++) {
        struct quicklist *ql = ql_new(fill);
        int per = fill ? fill : 1;
        for (int i = 0; i < 23; i++) ql_push(ql, S("x"), true);
        assert_int_equal(ql->nodes, (23 + per - 1) / per);
        /* From both ends: the two end nodes fill separately. */
        for (int i = 0; i < 23; i++) ql_push(ql, S("y"), false);
        assert_true((int)ql->nodes <= 2 * ((23 + per - 1) / per) + 1);
        for (struct ql_node *n = ql->head; n; n = n->next) assert_true(lp_count(n->lp) <= (size_t)per);
        assert_true(ql_check(ql));
        ql_free(ql);
    }
    /* A count limit still caps a node at 8 KB. */
    struct quicklist *ql = ql_new(1000);
    char b[100];
    memset(b, 'q', sizeof(b));
    for (int i = 0; i < 500; i++) ql_push(ql, (struct slice){ b, sizeof(b) }, true);
    assert_true(ql->nodes >= 7);
    for (struct ql_node *n = ql->head; n; n = n->next) assert_true(lp_bytes(n->lp) <= 8192);
    ql_free(ql);
}

static void test_size_fill(void **state) {
    (void)state;
    static const size_t limits[] = { 4096, 8192, 16384, 32768, 65536, 65536 };
    char b[16];
    for (int fill = -1; fill >= -6; fill--) {
        struct quicklist *ql = ql_new(fill);
        for (int i = 0; i < 20000; i++) {
            int n = snprintf(b, sizeof(b), "v%d", i);
            ql_push(ql, (struct slice){ b, (size_t)n }, true);
        }
        size_t lim = limits[-fill - 1];
        for (struct ql_node *n = ql->head; n; n = n->next) {
            assert_true(lp_bytes(n->lp) <= lim);
            if (n->next) assert_true(lp_bytes(n->lp) > lim - 16);   /* filled up */
        }
        assert_true(ql_check(ql));
        ql_free(ql);
    }
}

static void test_large_elements(void **state) {
    (void)state;
    static char big[9000];
    memset(big, 'L', sizeof(big));
    struct quicklist *ql = ql_new(128);
    for (int i = 0; i < 10; i++) ql_push(ql, S("s"), true);
    assert_int_equal(ql->nodes, 1);
    ql_push(ql, (struct slice){ big, sizeof(big) }, true);     /* over 8 KB: its own node */
    assert_int_equal(ql->nodes, 2);
    ql_push(ql, S("t"), true);                                /* not into the big node */
    assert_int_equal(ql->nodes, 3);
    assert_true(ql_insert(ql, S("s"), (struct slice){ big, 5000 }, true));  /* fits the first node */
    assert_int_equal(ql->nodes, 3);
    /* Into the middle of a node: it splits. */
    struct quicklist *q2 = ql_new(-1);
    char b[16];
    for (int i = 0; i < 400; i++) {
        int n = snprintf(b, sizeof(b), "e%d", i);
        ql_push(q2, (struct slice){ b, (size_t)n }, true);
    }
    size_t nodes = q2->nodes;
    assert_true(ql_insert(q2, S("e150"), (struct slice){ big, 8000 }, false));
    assert_int_equal(q2->nodes, nodes + 2);
    assert_true(ql_check(q2));
    struct lp_value v;
    assert_true(ql_index(q2, 150, &v));
    assert_int_equal(v.str.len, 8000);
    assert_true(ql_index(q2, 151, &v));
    assert_true(lp_value_eq(&v, S("e150")));
    /* LSET of a large value in a full node, then back to small. */
    assert_true(ql_replace(q2, 10, (struct slice){ big, 9000 }));
    assert_true(ql_check(q2));
    assert_true(ql_index(q2, 10, &v));
    assert_int_equal(v.str.len, 9000);
    assert_true(ql_index(q2, 11, &v));
    assert_true(lp_value_eq(&v, S("e11")));
    assert_true(ql_replace(q2, 10, S("back")));
    assert_true(ql_index(q2, 10, &v));
    assert_true(lp_value_eq(&v, S("back")));
    assert_true(ql_check(q2));
    ql_free(q2);
    ql_free(ql);
}

static void test_empty_list(void **state) {
    (void)state;
    struct quicklist *ql = ql_new(QL_FILL_DEFAULT);
    struct lp_value v;
    struct ql_iter it;
    assert_int_equal(ql_count(ql), 0);
    assert_false(ql_pop(ql, true, NULL, NULL));
    assert_false(ql_index(ql, 0, &v));
    assert_false(ql_index(ql, -1, &v));
    assert_false(ql_replace(ql, 0, S("x")));
    assert_false(ql_insert(ql, S("x"), S("y"), true));
    assert_int_equal(ql_del_range(ql, 0, 10), 0);
    assert_int_equal(ql_remove(ql, S("x"), 0), 0);
    assert_false(ql_iter_init(&it, ql, 0, false));
    assert_false(ql_iter_next(&it, &v));
    assert_true(ql_fits_listpack(ql, true));
    ql_push(ql, S("only"), false);
    assert_int_equal(ql_del_range(ql, -1, 1), 1);
    assert_null(ql->head);
    assert_null(ql->tail);
    assert_int_equal(ql->nodes, 0);
    assert_int_equal(ql_memory(ql), sizeof(struct quicklist));
    /* LREM with the most negative count is "all from the tail". */
    for (int i = 0; i < 5; i++) ql_push(ql, S("7"), true);
    assert_int_equal(ql_remove(ql, S("7"), LLONG_MIN), 5);
    assert_int_equal(ql->nodes, 0);
    ql_free(ql);
}

/* Redis's list encoding test: listpack while one node within limits, back
 * from quicklist only at half the limits. */
static void test_encoding_test(void **state) {
    (void)state;
    struct quicklist *ql = ql_new(3);
    ql_push(ql, S("a"), true);
    ql_push(ql, S("b"), true);
    ql_push(ql, S("c"), true);
    assert_true(ql_fits_listpack(ql, false));
    ql_push(ql, S("d"), true);
    assert_false(ql_fits_listpack(ql, false));
    ql_pop(ql, true, NULL, NULL);
    assert_true(ql_fits_listpack(ql, false));
    assert_false(ql_fits_listpack(ql, true));     /* 3 > 3/2 */
    ql_pop(ql, true, NULL, NULL);
    assert_false(ql_fits_listpack(ql, true));
    ql_pop(ql, true, NULL, NULL);
    assert_true(ql_fits_listpack(ql, true));
    ql_free(ql);

    /* Byte limits (-2: 8 KB). */
    ql = ql_new(-2);
    char b[100];
    memset(b, 'x', sizeof(b));
    while (ql_fits_listpack(ql, false)) ql_push(ql, (struct slice){ b, sizeof(b) }, true);
    assert_int_equal(ql->nodes, 2);
    assert_true(ql_count(ql) > 75 && ql_count(ql) < 82);
    while (!ql_fits_listpack(ql, true)) ql_pop(ql, true, NULL, NULL);
    assert_int_equal(ql->nodes, 1);
    assert_true(lp_bytes(ql->head->lp) <= 4096);
    assert_true(lp_bytes(ql->head->lp) > 4096 - 110);
    ql_free(ql);

    /* One large element is never a listpack. */
    static char big[9000];
    ql = ql_new(128);
    ql_push(ql, (struct slice){ big, sizeof(big) }, true);
    assert_int_equal(ql->nodes, 1);
    assert_false(ql_fits_listpack(ql, false));
    assert_false(ql_exceeds_limit(128, 100, 128));
    assert_true(ql_exceeds_limit(128, 100, 129));
    assert_true(ql_exceeds_limit(128, 8193, 1));
    assert_true(ql_exceeds_limit(-1, 4097, 1));
    assert_false(ql_exceeds_limit(-1, 4096, 100000));
    assert_true(ql_exceeds_limit(0, 10, 2));
    ql_free(ql);
}

static void test_memory_per_element(void **state) {
    (void)state;
    char b[32];
    for (size_t f = 0; f < RK_ARRAY_LEN(fills); f++) {
        struct quicklist *ql = ql_new(fills[f]);
        for (int i = 0; i < 1000; i++) {
            int n = snprintf(b, sizeof(b), "item:%d", i);
            ql_push(ql, (struct slice){ b, (size_t)n }, true);
        }
        size_t mem = ql_memory(ql);
        if (fills[f] == -2 || fills[f] == 128)
            print_message("quicklist fill %d: 1000 strings \"item:N\": %.2f bytes/element, %u nodes\n",
                          fills[f], mem / 1000.0, ql->nodes);
        size_t lps = 0;
        for (struct ql_node *n = ql->head; n; n = n->next) lps += lp_memory(n->lp);
        assert_int_equal(mem, sizeof(struct quicklist) + ql->nodes * sizeof(struct ql_node) + lps);
        if (fills[f] < 0 || fills[f] >= 128) assert_true(mem < 1000 * 11);
        ql_free(ql);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_fill),
        cmocka_unit_test(test_size_fill),
        cmocka_unit_test(test_large_elements),
        cmocka_unit_test(test_empty_list),
        cmocka_unit_test(test_encoding_test),
        cmocka_unit_test(test_memory_per_element),
        cmocka_unit_test(test_random_small_lists),
        cmocka_unit_test(test_random_long_lists),
        cmocka_unit_test(test_random_many_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
