/*
 * Unit tests for quicklist compression (list-compress-depth): random runs
 * of every list operation (push, pop, index, range reads both ways, insert
 * at a pivot, range delete, LREM, replace) on lists with depth 1 and 2,
 * compared with a model (an array of strings); after every step ql_check()
 * verifies that exactly the nodes but the depth at each end are compressed
 * (those that compress). Values are mostly compressible, some random, some
 * small, so every node state occurs. Directed tests: which nodes are
 * compressed in a built list, reads leaving nodes compressed, the memory
 * saved, and changing the depth of a list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/quicklist.h"
#include "ringkv/util.h"

#include "list_model.h"
}   /* m_at's closing brace: list_model.h leaves it to the includer, as in test_quicklist.c */

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
    while (ql_iter_next(&it, &v)) assert_value(&v, m_at(m, i++));
    assert_int_equal(i, m->n);
    assert_int_equal(ql_iter_init(&it, ql, -1, true), m->n > 0);
    while (ql_iter_next(&it, &v)) assert_value(&v, m_at(m, --i));
    assert_int_equal(i, 0);
}

static size_t compressed_nodes(const struct quicklist *ql) {
    size_t n = 0;
    for (const struct ql_node *node = ql->head; node; node = node->next) n += ql_node_compressed(node);
    return n;
}

/* ------------------------------------------------------------ values */

static char valbuf[4][20000];
static unsigned valslot;

/* Few distinct values, so pivots and LREM find matches: repeated letters
 * (compress well), random bytes (do not), small integers and short words
 * (nodes of them may stay under 48 bytes), and now and then a large one. */
static struct slice rand_value(void) {
    char *b = valbuf[valslot++ % 4];
    unsigned r = (unsigned)(rnd() % 100);
    size_t len;
    if (r < 45) {
        len = 20 + rnd() % 4 * 150;
        memset(b, 'a' + (int)(rnd() % 4), len);
    } else if (r < 60) {
        len = 30 + rnd() % 200;
        for (size_t i = 0; i < len; i++) b[i] = (char)rnd();
    } else if (r < 80) {
        len = (size_t)ll_to_str(b, sizeof valbuf[0], (long long)(rnd() % 5) - 2);
    } else if (r < 98) {
        len = 1 + rnd() % 3;
        for (size_t i = 0; i < len; i++) b[i] = (char)('p' + rnd() % 2);
    } else {
        len = 9000 + rnd() % 9000;               /* a node of its own */
        memset(b, 'L', len);
    }
    return (struct slice){ b, len };
}

/* A copy of a model string for use as an argument (the model may change). */
static struct slice arg_copy(struct slice s, char *buf, size_t cap) {
    if (s.len > cap) s = S("nope");
    memcpy(buf, s.ptr, s.len);
    return (struct slice){ buf, s.len };
}

static long long rand_index(const struct model *m) {
    return (long long)(rnd() % (2 * m->n + 2)) - (long long)m->n - 1;
}

/* ------------------------------------------------------------ random run */

static void op_push(struct quicklist *ql, struct model *m) {
    struct slice s = rand_value();
    bool tail = rnd() & 1;
    ql_push(ql, s, tail);
    m_insert(m, tail ? m->n : 0, s);
}

static void op_pop(struct quicklist *ql, struct model *m, struct rbuf *buf) {
    struct lp_value v;
    bool tail = rnd() & 1;
    assert_int_equal(ql_pop(ql, tail, &v, buf), m->n > 0);
    if (!m->n) return;
    size_t i = tail ? m->n - 1 : 0;
    assert_value(&v, m_at(m, i));
    m_delete(m, i, 1);
}

static void op_index(struct quicklist *ql, struct model *m) {
    struct lp_value v;
    long long i = rand_index(m), j = i < 0 ? i + (long long)m->n : i;
    bool in = j >= 0 && j < (long long)m->n;
    assert_int_equal(ql_index(ql, i, &v), in);
    if (in) assert_value(&v, m_at(m, (size_t)j));
}

static void op_range(struct quicklist *ql, struct model *m) {
    struct ql_iter it;
    struct lp_value v;
    long long i = rand_index(m), j = i < 0 ? i + (long long)m->n : i;
    bool in = j >= 0 && j < (long long)m->n, rev = rnd() & 1;
    assert_int_equal(ql_iter_init(&it, ql, i, rev), in);
    for (long long at = j; ql_iter_next(&it, &v); at += rev ? -1 : 1) {
        assert_true(in && at >= 0 && at < (long long)m->n);
        assert_value(&v, m_at(m, (size_t)at));
    }
}

static void op_insert(struct quicklist *ql, struct model *m) {
    char pbuf[20000];
    struct slice pivot = arg_copy((m->n && rnd() % 4) ? m_at(m, rnd() % m->n) : rand_value(), pbuf, sizeof pbuf);
    struct slice s = rand_value();
    bool after = rnd() & 1;
    size_t at = SIZE_MAX;
    for (size_t i = 0; i < m->n && at == SIZE_MAX; i++)
        if (slice_eq(m_at(m, i), pivot)) at = i;
    assert_int_equal(ql_insert(ql, pivot, s, after), at != SIZE_MAX);
    if (at != SIZE_MAX) m_insert(m, after ? at + 1 : at, s);
}

static void op_replace(struct quicklist *ql, struct model *m) {
    long long i = rand_index(m), j = i < 0 ? i + (long long)m->n : i;
    bool in = j >= 0 && j < (long long)m->n;
    struct slice s = rand_value();
    assert_int_equal(ql_replace(ql, i, s), in);
    if (!in) return;
    free(m->v[j].p);
    m->v[j] = str_dup(s);
}

static void op_del_range(struct quicklist *ql, struct model *m) {
    long long i = rand_index(m), j = i < 0 ? i + (long long)m->n : i;
    size_t k = (rnd() & 1) ? rnd() % 4 : rnd() % (m->n + 2), want = 0;
    if (j >= 0 && j < (long long)m->n) want = k < m->n - (size_t)j ? k : m->n - (size_t)j;
    assert_int_equal(ql_del_range(ql, i, k), want);
    if (want) m_delete(m, (size_t)j, want);
}

static void op_remove(struct quicklist *ql, struct model *m) {
    char sbuf[20000];
    struct slice s = arg_copy((m->n && rnd() % 4) ? m_at(m, rnd() % m->n) : rand_value(), sbuf, sizeof sbuf);
    long long count = (long long)(rnd() % 7) - 3;
    size_t want = 0;
    if (count >= 0) {
        for (size_t i = 0; i < m->n && (count == 0 || want < (size_t)count);) {
            if (slice_eq(m_at(m, i), s)) { m_delete(m, i, 1); want++; }
            else i++;
        }
    } else {
        for (size_t i = m->n; i-- > 0 && want < (size_t)-count;)
            if (slice_eq(m_at(m, i), s)) { m_delete(m, i, 1); want++; }
    }
    assert_int_equal(ql_remove(ql, s, count), want);
}

static void random_run(int fill, int depth, uint64_t seed, int ops, size_t maxlen) {
    rng_state = seed;
    struct quicklist *ql = ql_new(fill);
    ql_set_compress(ql, depth);
    struct model m = { 0 };
    struct rbuf buf = { 0 };
    size_t max_compressed = 0;
    for (int op = 0; op < ops; op++) {
        unsigned r = (unsigned)(rnd() % 100);
        if (m.n >= maxlen && r < 35) r += 35;
        if (r < 35) op_push(ql, &m);
        else if (r < 45) op_insert(ql, &m);
        else if (r < 55) op_pop(ql, &m, &buf);
        else if (r < 63) op_index(ql, &m);
        else if (r < 70) op_replace(ql, &m);
        else if (r < 76) op_del_range(ql, &m);
        else if (r < 84) op_remove(ql, &m);
        else op_range(ql, &m);
        assert_int_equal(ql_count(ql), m.n);
        assert_true(ql_check(ql));
        if (compressed_nodes(ql) > max_compressed) max_compressed = compressed_nodes(ql);
        if (m.n < 40 || op % 50 == 0) check_same(ql, &m);
    }
    check_same(ql, &m);
    assert_true(max_compressed > 0);     /* the run did compress */
    rbuf_free(&buf);
    ql_free(ql);
    m_free(&m);
}

static void test_random_depth_1(void **state) {
    (void)state;
    static const int fills[] = { 1, 2, 4, -1, -2 };
    for (size_t f = 0; f < RK_ARRAY_LEN(fills); f++)
        random_run(fills[f], 1, 0xc0ffee + f, 4000, 120);
}

static void test_random_depth_2(void **state) {
    (void)state;
    static const int fills[] = { 1, 3, 8, -1, -2 };
    for (size_t f = 0; f < RK_ARRAY_LEN(fills); f++)
        random_run(fills[f], 2, 0xbeef00 + f, 4000, 120);
}

static void test_random_short_lists(void **state) {
    (void)state;
    /* around 2 * depth + 1 nodes, where nodes enter and leave the end zones */
    for (int depth = 1; depth <= 3; depth++)
        random_run(1, depth, 0x5150 + (uint64_t)depth, 5000, 9);
}

/* ------------------------------------------------------------ directed */

static void push_n(struct quicklist *ql, int n, char c, size_t len) {
    char b[200];
    memset(b, c, len);
    for (int i = 0; i < n; i++) ql_push(ql, (struct slice){ b, len }, true);
}

/* With one element per node, nodes d..N-1-d are compressed, none else. */
static void test_which_nodes(void **state) {
    (void)state;
    for (int depth = 1; depth <= 3; depth++) {
        for (int nodes = 1; nodes <= 10; nodes++) {
            struct quicklist *ql = ql_new(1);
            ql_set_compress(ql, depth);
            push_n(ql, nodes, 'x', 100);
            int i = 0;
            for (const struct ql_node *n = ql->head; n; n = n->next, i++) {
                bool inner = i >= depth && nodes - 1 - i >= depth;
                assert_int_equal(ql_node_compressed(n), inner);
            }
            assert_true(ql_check(ql));
            ql_free(ql);
        }
    }
    /* under 48 bytes, or data that does not shrink: raw even inside */
    struct quicklist *ql = ql_new(1);
    ql_set_compress(ql, 1);
    push_n(ql, 5, 's', 20);
    assert_int_equal(compressed_nodes(ql), 0);
    char rnd_bytes[100];
    rng_state = 0x1234567;
    for (size_t i = 0; i < sizeof rnd_bytes; i++) rnd_bytes[i] = (char)rnd();
    for (int i = 0; i < 3; i++) ql_push(ql, (struct slice){ rnd_bytes, sizeof rnd_bytes }, false);
    assert_int_equal(compressed_nodes(ql), 0);
    assert_true(ql_check(ql));
    ql_free(ql);
}

/* Reads decompress into the read buffer; the nodes stay compressed. */
static void test_reads_leave_nodes_compressed(void **state) {
    (void)state;
    struct quicklist *ql = ql_new(2);
    ql_set_compress(ql, 1);
    char b[100];
    for (int i = 0; i < 40; i++) {
        memset(b, 'a' + i % 26, sizeof b);
        b[0] = (char)('A' + i % 26);
        ql_push(ql, (struct slice){ b, sizeof b }, true);
    }
    size_t before = compressed_nodes(ql);
    assert_int_equal(before, 18);
    struct lp_value v;
    for (int i = 0; i < 40; i++) {
        assert_true(ql_index(ql, i, &v));
        assert_int_equal(v.str.len, 100);
        assert_int_equal(v.str.ptr[0], 'A' + i % 26);
        assert_int_equal(v.str.ptr[1], 'a' + i % 26);
    }
    assert_int_equal(compressed_nodes(ql), before);
    assert_non_null(ql->scratch);
    assert_true(ql_check(ql));
    /* a change drops the read buffer */
    ql_push(ql, S("tail"), true);
    assert_null(ql->scratch);
    ql_free(ql);
}

static void test_memory_saved(void **state) {
    (void)state;
    struct quicklist *raw = ql_new(-2), *packed = ql_new(-2);
    ql_set_compress(packed, 1);
    char b[64];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(b, sizeof b, "user:%08d:session:active", i % 100);
        ql_push(raw, (struct slice){ b, (size_t)n }, true);
        ql_push(packed, (struct slice){ b, (size_t)n }, true);
    }
    assert_int_equal(raw->nodes, packed->nodes);
    assert_int_equal(compressed_nodes(packed), packed->nodes - 2);
    assert_true(ql_memory(packed) < ql_memory(raw) / 2);
    ql_free(raw);
    ql_free(packed);
}

/* Changing the depth of a list compresses or opens its nodes at once. */
static void test_set_compress(void **state) {
    (void)state;
    struct quicklist *ql = ql_new(1);
    push_n(ql, 9, 'q', 80);
    assert_int_equal(compressed_nodes(ql), 0);
    ql_set_compress(ql, 1);
    assert_int_equal(compressed_nodes(ql), 7);
    assert_true(ql_check(ql));
    ql_set_compress(ql, 3);
    assert_int_equal(compressed_nodes(ql), 3);
    assert_true(ql_check(ql));
    ql_set_compress(ql, 5);
    assert_int_equal(compressed_nodes(ql), 0);
    ql_set_compress(ql, 0);
    assert_int_equal(compressed_nodes(ql), 0);
    assert_true(ql_check(ql));
    /* and back to one listpack */
    ql_set_compress(ql, 1);
    assert_int_equal(ql_del_range(ql, 1, 8), 8);
    assert_true(ql_check(ql));
    struct listpack *lp = ql_to_listpack(ql);
    assert_int_equal(lp_count(lp), 1);
    lp_free(lp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_which_nodes),
        cmocka_unit_test(test_reads_leave_nodes_compressed),
        cmocka_unit_test(test_memory_saved),
        cmocka_unit_test(test_set_compress),
        cmocka_unit_test(test_random_depth_1),
        cmocka_unit_test(test_random_depth_2),
        cmocka_unit_test(test_random_short_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
