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
    assert_true(ql_check(l->ql));
    struct ql_iter it;
    struct lp_value v;
    char buf[LP_INTBUF_SIZE];
    size_t i = 0;
    if (ql_iter_init(&it, l->ql, 0, false))
        while (ql_iter_next(&it, &v)) {
            struct slice s = list_value_str(&v, buf);
            assert_true(i < m->n);
            assert_true(m_eq(&m->v[i], s));
            i++;
        }
    assert_int_equal(i, m->n);
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
    struct list_obj *l = list_new_fill(fill);
    struct model m = { 0 };
    bool want_compact = true;
    int conversions = 0;
    char *buf = malloc(maxlen + 32);
    struct rbuf pop = { 0 };

    for (int step = 0; step < steps; step++) {
        /* phases of growth and of shrinking, so lists cross the limits */
        unsigned op = (unsigned)(rnd() % 100);
        bool growing = (step / 400) % 2 == 0;
        bool grew = false, shrank = false, was_compact = l->compact;
        if (op < (growing ? 70u : 30u) || m.n == 0) {    /* push */
            struct slice s = rand_elem(buf, maxlen + 32, maxlen);
            bool tail = rnd() & 1;
            ql_push(l->ql, s, tail);
            m_insert(&m, tail ? m.n : 0, s);
            grew = true;
        } else if (op < (growing ? 80u : 65u)) {          /* pop */
            bool tail = rnd() & 1;
            struct lp_value v;
            char nb[LP_INTBUF_SIZE];
            assert_true(ql_pop(l->ql, tail, &v, &pop));
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
            assert_true(ql_insert(l->ql, pivot, s, after));
            m_insert(&m, first + after, s);
            free(pcopy);
            grew = true;
        } else if (op < (growing ? 94u : 81u)) {          /* LSET */
            size_t i = rnd() % m.n;
            struct slice s = rand_elem(buf, maxlen + 32, maxlen);
            assert_true(ql_replace(l->ql, (rnd() & 1) ? (long long)i : (long long)i - (long long)m.n, s));
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
            size_t removed = ql_remove(l->ql, s, count), want = 0;
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
            assert_int_equal(ql_del_range(l->ql, (long long)start, k), k);
            m_delete(&m, start, k);
            shrank = true;
        }
        if (grew) {
            list_grew(l);
            if (want_compact && !m_fits(&m, fill, false)) want_compact = false;
        }
        if (shrank) {
            list_shrank(l);
            if (!want_compact && l->ql->nodes <= 1 && m_fits(&m, fill, true)) want_compact = true;
        }
        assert_string_equal(list_encoding(l), want_compact ? "listpack" : "quicklist");
        conversions += l->compact != was_compact;
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
    struct list_obj *l = list_new_fill(4);
    assert_string_equal(list_encoding(l), "listpack");
    for (int i = 0; i < 4; i++) ql_push(l->ql, SLICE_LIT("x"), true);
    list_grew(l);
    assert_string_equal(list_encoding(l), "listpack");
    ql_push(l->ql, SLICE_LIT("x"), true);
    list_grew(l);
    assert_string_equal(list_encoding(l), "quicklist");
    ql_del_range(l->ql, -2, 2);          /* 3 left in one node: over half */
    list_shrank(l);
    assert_string_equal(list_encoding(l), "quicklist");
    ql_del_range(l->ql, -1, 1);          /* 2 = half of 4, one node */
    list_shrank(l);
    assert_string_equal(list_encoding(l), "listpack");
    list_free(l);

    /* default fill: one element too big for a node */
    l = list_new_fill(-2);
    char big[9000];
    memset(big, 'b', sizeof big);
    ql_push(l->ql, (struct slice){ big, sizeof big }, true);
    list_grew(l);
    assert_string_equal(list_encoding(l), "quicklist");
    ql_pop(l->ql, true, NULL, NULL);
    ql_push(l->ql, SLICE_LIT("small"), true);
    list_shrank(l);
    assert_string_equal(list_encoding(l), "listpack");
    list_free(l);
}

static void test_ops_registered(void **state) {
    (void)state;
    const struct obj_ops *ops = obj_ops_by_type[OBJ_LIST];
    assert_non_null(ops);
    struct list_obj *l = list_new_fill(-2);
    ql_push(l->ql, SLICE_LIT("a"), true);
    ql_push(l->ql, SLICE_LIT("123"), true);
    assert_string_equal(ops->encoding(l), "listpack");
    struct list_obj *d = ops->dup(l);
    ql_push(l->ql, SLICE_LIT("only in l"), true);
    assert_int_equal(list_len(d), 2);
    assert_int_equal(list_len(l), 3);
    ops->free(d);
    /* an entry frees its list */
    struct kv_entry *e = entry_new_obj(SLICE_LIT("k"), OBJ_LIST, l, NO_EXPIRE);
    assert_ptr_equal(entry_obj(e), l);
    entry_free(e);
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
