/*
 * Unit tests for the list object (src/types/list_obj.c): random pushes, pops,
 * inserts, replacements, removals and trims against a model (an array of
 * strings), with the encoding name checked after every step against Redis
 * 7's rule computed from the model alone: a "listpack" list turns
 * "quicklist" once its elements no longer fit one node of the fill, and
 * turns back only when it is in one node within half the limits. Runs with
 * fills small and large, count and byte limits. Also: dup gives an equal,
 * independent list, and the object ops are registered for OBJ_LIST.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/config.h"
#include "ringkv/entry.h"
#include "ringkv/list_obj.h"
#include "ringkv/util.h"

static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}

/* ------------------------------------------------------------ the model */

struct str { char *p; size_t len; };
struct model { struct str *v; size_t n, cap; };

static void m_insert(struct model *m, size_t i, struct slice s) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->v = realloc(m->v, m->cap * sizeof(*m->v));
    }
    memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof(*m->v));
    m->v[i].p = malloc(s.len ? s.len : 1);
    if (s.len) memcpy(m->v[i].p, s.ptr, s.len);
    m->v[i].len = s.len;
    m->n++;
}

static void m_delete(struct model *m, size_t i, size_t k) {
    for (size_t j = i; j < i + k; j++) free(m->v[j].p);
    memmove(m->v + i, m->v + i + k, (m->n - i - k) * sizeof(*m->v));
    m->n -= k;
}

static bool m_eq(const struct str *a, struct slice s) {
    /* Redis equality: "10" and the integer 10 are the same element, and
     * the model stores the text, so plain bytes compare right. */
    return a->len == s.len && (s.len == 0 || memcmp(a->p, s.ptr, s.len) == 0);
}

/* Whether the model's elements fit one node within the fill's limits
 * (halved when shrinking), computed from encoded sizes only. */
static bool m_fits(const struct model *m, int fill, bool shrinking) {
    size_t bytes = LP_HDR_SIZE, bl, cl;
    for (size_t i = 0; i < m->n; i++)
        bytes += lp_encoded_size((struct slice){ m->v[i].p, m->v[i].len });
    ql_node_limit(fill, &bl, &cl);
    if (fill >= 0 && bytes > 8192) return false;
    if (shrinking) { bl /= 2; cl /= 2; }
    return bytes <= bl && m->n <= cl;
}

static void check_same(const struct list_obj *l, const struct model *m) {
    assert_int_equal(list_len(l), m->n);
    if (list_quicklist(l)) assert_true(ql_check(list_quicklist(l)));
    struct list_iter it;
    struct lp_value v;
    char buf[LP_INTBUF_SIZE];
    size_t i = 0;
    if (list_iter_init(&it, l, 0, false))
        while (list_iter_next(&it, &v)) {
            struct slice s = list_value_str(&v, buf);
            assert_true(i < m->n);
            assert_true(m_eq(&m->v[i], s));
            i++;
        }
    assert_int_equal(i, m->n);
    /* backwards, and by index from both ends */
    if (list_iter_init(&it, l, -1, true))
        while (list_iter_next(&it, &v)) {
            assert_true(i > 0);
            assert_true(m_eq(&m->v[--i], list_value_str(&v, buf)));
        }
    assert_int_equal(i, 0);
    if (m->n) {
        size_t k = rnd() % m->n;
        assert_true(list_index(l, (long long)k, &v));
        assert_true(m_eq(&m->v[k], list_value_str(&v, buf)));
        assert_true(list_index(l, (long long)k - (long long)m->n, &v));
        assert_true(m_eq(&m->v[k], list_value_str(&v, buf)));
    }
    assert_false(list_index(l, (long long)m->n, &v));
}

/* A random element: small integers, long integers, short and long text. */
static struct slice rand_elem(char *buf, size_t cap, size_t maxlen) {
    switch (rnd() % 4) {
    case 0: return (struct slice){ buf, (size_t)snprintf(buf, cap, "%d", (int)(rnd() % 200) - 50) };
    case 1: return (struct slice){ buf, (size_t)snprintf(buf, cap, "%lld", (long long)(rnd() >> 2)) };
    default: {
        size_t len = rnd() % (maxlen + 1);
        for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + rnd() % 3);
        return (struct slice){ buf, len };
    }
    }
}

static void random_run(int fill, size_t maxlen, int steps, uint64_t seed) {
    rng_state = seed;
    rk_config.list_max_listpack_size = fill;
    struct list_obj *l = list_new();
    struct model m = { 0 };
    bool want_compact = true;
    int conversions = 0;
    char *buf = malloc(maxlen + 32);
    struct rbuf pop = { 0 };

    for (int step = 0; step < steps; step++) {
        /* phases of growth and of shrinking, so lists cross the limits */
        unsigned op = (unsigned)(rnd() % 100);
        bool growing = (step / 400) % 2 == 0;
        bool grew = false, shrank = false;
        const char *was = list_encoding(l);
        if (op < (growing ? 70u : 30u) || m.n == 0) {    /* push */
            struct slice s = rand_elem(buf, maxlen + 32, maxlen);
            bool tail = rnd() & 1;
            list_push(&l, s, tail);
            m_insert(&m, tail ? m.n : 0, s);
            grew = true;
        } else if (op < (growing ? 80u : 65u)) {          /* pop */
            bool tail = rnd() & 1;
            struct lp_value v;
            char nb[LP_INTBUF_SIZE];
            assert_true(list_pop(&l, tail, &v, &pop));
            size_t at = tail ? m.n - 1 : 0;
            assert_true(m_eq(&m.v[at], list_value_str(&v, nb)));
            m_delete(&m, at, 1);
            shrank = true;
        } else if (op < (growing ? 88u : 73u)) {          /* LINSERT */
            size_t pi = rnd() % m.n;
            struct slice pivot = { m.v[pi].p, m.v[pi].len };
            char *pcopy = malloc(pivot.len + 1);
            memcpy(pcopy, pivot.ptr, pivot.len);
            pivot.ptr = pcopy;
            size_t first = 0;
            while (!m_eq(&m.v[first], pivot)) first++;
            struct slice s = rand_elem(buf, maxlen + 32, maxlen);
            bool after = rnd() & 1;
            assert_true(list_insert(&l, pivot, s, after));
            m_insert(&m, first + after, s);
            free(pcopy);
            grew = true;
        } else if (op < (growing ? 94u : 81u)) {          /* LSET */
            size_t i = rnd() % m.n;
            struct slice s = rand_elem(buf, maxlen + 32, maxlen);
            assert_true(list_replace(&l, (rnd() & 1) ? (long long)i : (long long)i - (long long)m.n, s));
            m_delete(&m, i, 1);
            m_insert(&m, i, s);
            grew = shrank = true;
        } else if (op < (growing ? 97u : 90u)) {          /* LREM */
            size_t pi = rnd() % m.n;
            struct slice s = { m.v[pi].p, m.v[pi].len };
            char *copy = malloc(s.len + 1);
            memcpy(copy, s.ptr, s.len);
            s.ptr = copy;
            long long count = (long long)(rnd() % 5) - 2;
            size_t removed = list_remove(&l, s, count), want = 0;
            if (count >= 0) {
                for (size_t i = 0; i < m.n && (count == 0 || (long long)want < count);)
                    if (m_eq(&m.v[i], s)) { m_delete(&m, i, 1); want++; } else i++;
            } else {
                for (size_t i = m.n; i-- > 0 && (long long)want < -count;)
                    if (m_eq(&m.v[i], s)) { m_delete(&m, i, 1); want++; }
            }
            free(copy);
            assert_int_equal(removed, want);
            shrank = true;
        } else {                                         /* LTRIM-like range delete */
            size_t start = rnd() % m.n, k = rnd() % (m.n - start + 1);
            if (growing && k > 4) k = 4;
            assert_int_equal(list_del_range(&l, (long long)start, k), k);
            m_delete(&m, start, k);
            shrank = true;
        }
        if (grew) {
            list_grew(&l);
            if (want_compact && !m_fits(&m, fill, false)) want_compact = false;
        }
        if (shrank) {
            bool one_node = !list_quicklist(l) || list_quicklist(l)->nodes <= 1;
            list_shrank(&l);
            if (!want_compact && one_node && m_fits(&m, fill, true)) want_compact = true;
        }
        assert_string_equal(list_encoding(l), want_compact ? "listpack" : "quicklist");
        conversions += strcmp(list_encoding(l), was) != 0;
        check_same(l, &m);

        if (step % 97 == 0) {
            struct list_obj *d = list_dup(l);
            check_same(d, &m);
            assert_string_equal(list_encoding(d), list_encoding(l));
            list_free(d);
        }
    }
    assert_true(conversions >= 2);     /* both ways at least once */
    list_free(l);
    m_delete(&m, 0, m.n);
    free(m.v);
    free(buf);
    rbuf_free(&pop);
}

static void test_random_small_counts(void **state) {
    (void)state;
    random_run(4, 8, 4000, 0x1234567);
    random_run(16, 20, 4000, 0x7654321);
    random_run(1, 5, 2000, 99);
}

static void test_random_byte_limits(void **state) {
    (void)state;
    random_run(-1, 300, 4000, 42);        /* 4 KB nodes */
    random_run(-2, 2000, 3000, 4242);     /* 8 KB, elements near the limit */
    random_run(-5, 1500, 3000, 77);      /* 64 KB */
}

static void test_random_large(void **state) {
    (void)state;
    random_run(128, 40, 6000, 31337);
    random_run(-2, 300, 6000, 271828);
}

static void test_conversions(void **state) {
    (void)state;
    rk_config.list_max_listpack_size = 4;
    struct list_obj *l = list_new();
    assert_string_equal(list_encoding(l), "listpack");
    assert_null(list_quicklist(l));
    for (int i = 0; i < 4; i++) list_push(&l, SLICE_LIT("x"), true);
    list_grew(&l);
    assert_string_equal(list_encoding(l), "listpack");
    list_push(&l, SLICE_LIT("x"), true);
    list_grew(&l);
    assert_string_equal(list_encoding(l), "quicklist");
    assert_int_equal(list_quicklist(l)->nodes, 2);
    list_del_range(&l, -2, 2);          /* 3 left in one node: over half */
    list_shrank(&l);
    assert_string_equal(list_encoding(l), "quicklist");
    list_del_range(&l, -1, 1);          /* 2 = half of 4, one node */
    list_shrank(&l);
    assert_string_equal(list_encoding(l), "listpack");
    assert_int_equal(list_len(l), 2);
    list_free(l);

    /* default fill: one element too big for a node */
    rk_config.list_max_listpack_size = -2;
    l = list_new();
    char big[9000];
    memset(big, 'b', sizeof big);
    list_push(&l, (struct slice){ big, sizeof big }, true);
    list_grew(&l);
    assert_string_equal(list_encoding(l), "quicklist");
    list_pop(&l, true, NULL, NULL);
    list_push(&l, SLICE_LIT("small"), true);
    list_shrank(&l);
    assert_string_equal(list_encoding(l), "listpack");
    struct lp_value v;
    assert_true(list_index(l, 0, &v));
    assert_int_equal(v.str.len, 5);
    list_free(l);
}

static void test_ops_registered(void **state) {
    (void)state;
    const struct obj_ops *ops = obj_ops_by_type[OBJ_LIST];
    assert_non_null(ops);
    rk_config.list_max_listpack_size = -2;
    struct list_obj *l = list_new();
    list_push(&l, SLICE_LIT("a"), true);
    list_push(&l, SLICE_LIT("123"), true);
    assert_string_equal(ops->encoding(l), "listpack");
    struct list_obj *d = ops->dup(l);
    list_push(&l, SLICE_LIT("only in l"), true);
    assert_int_equal(list_len(d), 2);
    assert_int_equal(list_len(l), 3);
    ops->free(d);
    /* a small list lives inside its entry, a quicklist by pointer */
    assert_int_equal(ops->inline_size(l), lp_bytes((const struct listpack *)l));
    struct kv_entry *e = entry_new_obj(SLICE_LIT("k"), OBJ_LIST, l, NO_EXPIRE);
    assert_true(e->meta & ENTRY_INLINE);
    assert_int_equal(list_len(entry_obj(e)), 3);
    entry_free(e);
    rk_config.list_max_listpack_size = 1;
    l = list_new();
    list_push(&l, SLICE_LIT("a"), true);
    list_push(&l, SLICE_LIT("b"), true);
    list_grew(&l);
    assert_non_null(list_quicklist(l));
    assert_int_equal(ops->inline_size(l), 0);
    e = entry_new_obj(SLICE_LIT("k"), OBJ_LIST, l, NO_EXPIRE);
    assert_ptr_equal(entry_obj(e), l);
    entry_free(e);
    rk_config.list_max_listpack_size = -2;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_small_counts),
        cmocka_unit_test(test_random_byte_limits),
        cmocka_unit_test(test_random_large),
        cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_ops_registered),
    };
    return cmocka_run_group_tests_name("list_obj", tests, NULL, NULL);
}
