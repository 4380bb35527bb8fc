/*
 * Unit tests for the listpack: exact encoded sizes at every boundary of
 * the format, integer round trips, Redis's integer/string equality, pair
 * lookups with lp_find's skip, huge and empty strings, splitting and
 * joining, and long random runs against a model (an array of strings)
 * checked forwards, backwards and by index.
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

#include "ringkv/listpack.h"
#include "ringkv/util.h"

#include "list_model.h"
}

static bool is_canonical_int(struct slice s) {
    long long v;
    return s.len && s.len <= 20 && str_to_ll(s.ptr, s.len, &v);
}

static void assert_value(const struct lp_value *v, struct slice want) {
    char buf[LP_INTBUF_SIZE];
    struct slice got = lp_value_str(v, buf);
    assert_int_equal(got.len, want.len);
    if (want.len) assert_memory_equal(got.ptr, want.ptr, want.len);
    assert_int_equal(v->is_int, is_canonical_int(want));
    assert_true(lp_value_eq(v, want));
}

/* Full comparison: forwards, backwards, and a few seeks. */
static void check_same(const struct listpack *lp, const struct model *m) {
    assert_true(lp_check(lp));
    assert_int_equal(lp_count(lp), m->n);
    struct lp_value v;
    size_t i = 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p), i++) {
        assert_true(i < m->n);
        lp_get(lp, p, &v);
        assert_value(&v, m_at(m, i));
    }
    assert_int_equal(i, m->n);
    for (size_t p = lp_last(lp); p != LP_NONE; p = lp_prev(lp, p)) {
        assert_true(i > 0);
        lp_get(lp, p, &v);
        assert_value(&v, m_at(m, --i));
    }
    assert_int_equal(i, 0);
    for (int k = 0; k < 4 && m->n; k++) {
        size_t j = rnd() % m->n;
        long long idx = (rnd() & 1) ? (long long)j : (long long)j - (long long)m->n;
        size_t p = lp_seek(lp, idx);
        assert_true(p != LP_NONE);
        lp_get(lp, p, &v);
        assert_value(&v, m_at(m, j));
    }
    assert_true(lp_seek(lp, (long long)m->n) == LP_NONE);
    assert_true(lp_seek(lp, -(long long)m->n - 1) == LP_NONE);
}

/* ------------------------------------------------------------ values */

static char valbuf[8][70000];
static unsigned valslot;

/* A random value, biased to format boundaries and int-like strings. */
static struct slice rand_value(void) {
    char *b = valbuf[valslot++ % 8];
    static const char *const specials[] = {
        "", "0", "-0", "00", "01", "+1", " 1", "1 ", "-", "127", "128", "-1",
        "4095", "4096", "-4096", "-4097", "32767", "32768", "-32768", "-32769",
        "8388607", "8388608", "2147483647", "2147483648", "-2147483649",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "-9223372036854775809", "1.5", "1e3", "0x10", "abc", "field:1",
    };
    switch (rnd() % 8) {
    case 0: {
        const char *s = specials[rnd() % RK_ARRAY_LEN(specials)];
        return S(s);
    }
    case 1: case 2: {   /* an integer of a random width */
        int bits = (int)(rnd() % 64);
        long long v = (long long)(rnd() >> (63 - bits));
        if (rnd() & 1) v = -v;
        int n = ll_to_str(b, 70000, v);
        return (struct slice){ b, (size_t)n };
    }
    case 3: {           /* a small number */
        int n = ll_to_str(b, 70000, (long long)(rnd() % 300) - 150);
        return (struct slice){ b, (size_t)n };
    }
    default: {          /* a string, mostly short, sometimes at a boundary */
        static const size_t lens[] = { 63, 64, 237, 238, 239, 240, 4095, 4096, 65535, 65536, 69000 };
        size_t len = (rnd() % 16) ? rnd() % 20 : lens[rnd() % RK_ARRAY_LEN(lens)];
        for (size_t i = 0; i < len; i++) b[i] = (char)('a' + rnd() % 26);
        if (len > 0 && rnd() % 4 == 0) b[rnd() % len] = (char)(rnd() & 0xFF);
        return (struct slice){ b, len };
    }
    }
}

/* ------------------------------------------------------------ tests */

static void test_encoded_sizes(void **state) {
    (void)state;
    static const struct { const char *s; size_t size; } cases[] = {
        { "0", 2 }, { "127", 2 }, { "128", 3 }, { "-1", 3 }, { "4095", 3 }, { "-4096", 3 },
        { "4096", 4 }, { "-4097", 4 }, { "32767", 4 }, { "-32768", 4 }, { "32768", 5 },
        { "8388607", 5 }, { "8388608", 6 }, { "2147483647", 6 }, { "2147483648", 7 },
        { "1700000000000", 8 }, { "9223372036854775807", 10 }, { "-9223372036854775808", 10 },
        { "", 2 }, { "a", 3 }, { "-0", 4 }, { "007", 5 }, { "9223372036854775808", 21 },
        { "hello", 7 },
    };
    for (size_t i = 0; i < RK_ARRAY_LEN(cases); i++) {
        if (lp_encoded_size(S(cases[i].s)) != cases[i].size)
            fail_msg("%s: %zu, want %zu", cases[i].s, lp_encoded_size(S(cases[i].s)), cases[i].size);
    }
    /* String header and trailer widths. */
    static char big[70000];
    memset(big, 'x', sizeof(big));
    static const struct { size_t len, size; } lens[] = {
        { 63, 65 }, { 64, 67 }, { 237, 240 }, { 238, 243 }, { 4095, 4100 },
        { 4096, 4104 }, { 65530, 65538 }, { 65531, 65541 }, { 69999, 70009 },
    };
    for (size_t i = 0; i < RK_ARRAY_LEN(lens); i++) {
        size_t got = lp_encoded_size((struct slice){ big, lens[i].len });
        if (got != lens[i].size) fail_msg("len %zu: %zu, want %zu", lens[i].len, got, lens[i].size);
        /* And the element really takes that much. */
        struct listpack *lp = lp_new();
        lp_push(&lp, (struct slice){ big, lens[i].len }, true);
        assert_int_equal(lp_bytes(lp), LP_HDR_SIZE + lens[i].size);
        assert_true(lp_check(lp));
        lp_free(lp);
    }
}

static void test_integers(void **state) {
    (void)state;
    struct listpack *lp = lp_new();
    struct model m = { 0 };
    char b[LP_INTBUF_SIZE];
    /* Every width boundary, both signs, and one step either side. */
    for (int bits = 0; bits < 64; bits++) {
        long long edge = bits == 63 ? LLONG_MAX : (1LL << bits) - 1;
        long long vs[] = { edge, edge - 1, -edge, -edge - 1, edge == LLONG_MAX ? edge : edge + 1 };
        for (size_t i = 0; i < RK_ARRAY_LEN(vs); i++) {
            int n = ll_to_str(b, sizeof(b), vs[i]);
            lp_push(&lp, (struct slice){ b, (size_t)n }, (i & 1) != 0);
            m_insert(&m, (i & 1) ? m.n : 0, (struct slice){ b, (size_t)n });
        }
    }
    check_same(lp, &m);
    struct lp_value v;
    lp_get(lp, lp_seek(lp, -1), &v);
    assert_true(v.is_int);
    lp_free(lp);
    m_free(&m);
}

static void test_int_string_equality(void **state) {
    (void)state;
    struct listpack *lp = lp_new();
    lp_push(&lp, S("10"), true);
    lp_push(&lp, S("010"), true);
    lp_push(&lp, S("-0"), true);
    lp_push(&lp, S("0"), true);
    lp_push(&lp, S("abc"), true);
    assert_int_equal(lp_count(lp), 5);
    size_t p10 = lp_first(lp);
    struct lp_value v;
    lp_get(lp, p10, &v);
    assert_true(v.is_int);
    assert_int_equal(v.ival, 10);
    assert_true(lp_eq(lp, p10, S("10")));
    assert_false(lp_eq(lp, p10, S("010")));
    assert_false(lp_eq(lp, p10, S("10.0")));
    assert_int_equal(lp_find(lp, lp_first(lp), S("10"), 0), p10);
    assert_int_equal(lp_find(lp, lp_first(lp), S("010"), 0), lp_seek(lp, 1));
    assert_int_equal(lp_find(lp, lp_first(lp), S("-0"), 0), lp_seek(lp, 2));
    assert_int_equal(lp_find(lp, lp_first(lp), S("0"), 0), lp_seek(lp, 3));
    assert_int_equal(lp_find(lp, lp_first(lp), S("abc"), 0), lp_seek(lp, 4));
    assert_int_equal(lp_find(lp, lp_first(lp), S("ab"), 0), LP_NONE);
    assert_int_equal(lp_find(lp, lp_first(lp), S("1"), 0), LP_NONE);
    assert_int_equal(lp_find(lp, lp_next(lp, p10), S("10"), 0), LP_NONE);
    lp_get(lp, lp_seek(lp, 1), &v);
    assert_false(v.is_int);
    assert_int_equal(v.str.len, 3);
    /* A value that parses as an integer also replaces as one. */
    lp_replace(&lp, lp_seek(lp, 4), S("-4097"));
    lp_get(lp, lp_seek(lp, 4), &v);
    assert_true(v.is_int);
    assert_int_equal(v.ival, -4097);
    assert_true(lp_check(lp));
    lp_free(lp);
}

static void test_find_pairs(void **state) {
    (void)state;
    /* field,value pairs where values collide with field names. */
    struct listpack *lp = lp_new();
    const char *pairs[][2] = {
        { "a", "b" }, { "b", "c" }, { "1", "2" }, { "2", "1" }, { "c", "a" }, { "", "" },
    };
    for (size_t i = 0; i < RK_ARRAY_LEN(pairs); i++) {
        lp_push(&lp, S(pairs[i][0]), true);
        lp_push(&lp, S(pairs[i][1]), true);
    }
    for (size_t i = 0; i < RK_ARRAY_LEN(pairs); i++) {
        size_t p = lp_find(lp, lp_first(lp), S(pairs[i][0]), 1);
        assert_int_equal(p, lp_seek(lp, (long long)(2 * i)));
        struct lp_value v;
        lp_get(lp, lp_next(lp, p), &v);
        assert_true(lp_value_eq(&v, S(pairs[i][1])));
    }
    assert_int_equal(lp_find(lp, lp_first(lp), S("zz"), 1), LP_NONE);
    /* Searching the values (start at the first value). */
    assert_int_equal(lp_find(lp, lp_next(lp, lp_first(lp)), S("a"), 1), lp_seek(lp, 9));
    /* skip 2 (triples) */
    assert_int_equal(lp_find(lp, lp_first(lp), S("2"), 2), lp_seek(lp, 6));
    assert_int_equal(lp_find(lp, lp_first(lp), S("b"), 2), LP_NONE);
    /* Deleting a pair keeps the others findable. */
    size_t p = lp_find(lp, lp_first(lp), S("1"), 1);
    size_t after = lp_delete(&lp, p, 2);
    assert_int_equal(after, lp_find(lp, lp_first(lp), S("2"), 1));
    assert_int_equal(lp_find(lp, lp_first(lp), S("1"), 1), LP_NONE);
    assert_int_equal(lp_count(lp), 10);
    /* Deleting the last pair returns LP_NONE. */
    assert_int_equal(lp_delete(&lp, lp_seek(lp, -2), 5), LP_NONE);
    assert_int_equal(lp_count(lp), 8);
    assert_true(lp_check(lp));
    lp_free(lp);
}

static void test_empty_and_pop(void **state) {
    (void)state;
    struct listpack *lp = lp_new();
    struct rbuf buf = { 0 };
    struct lp_value v;
    assert_int_equal(lp_count(lp), 0);
    assert_int_equal(lp_bytes(lp), LP_HDR_SIZE);
    assert_int_equal(lp_first(lp), LP_NONE);
    assert_int_equal(lp_last(lp), LP_NONE);
    assert_int_equal(lp_seek(lp, 0), LP_NONE);
    assert_int_equal(lp_seek(lp, -1), LP_NONE);
    assert_false(lp_pop(&lp, true, &v, &buf));
    assert_true(lp_check(lp));
    lp_push(&lp, S(""), false);
    lp_push(&lp, S("x"), true);
    lp_push(&lp, S("-7"), false);
    assert_true(lp_pop(&lp, false, &v, &buf));
    assert_true(v.is_int);
    assert_int_equal(v.ival, -7);
    assert_true(lp_pop(&lp, true, &v, &buf));
    assert_false(v.is_int);
    assert_int_equal(v.str.len, 1);
    assert_int_equal(v.str.ptr[0], 'x');
    assert_ptr_equal(v.str.ptr, buf.buf);
    assert_true(lp_pop(&lp, true, NULL, NULL));
    assert_int_equal(lp_count(lp), 0);
    assert_int_equal(lp_bytes(lp), LP_HDR_SIZE);
    assert_false(lp_pop(&lp, false, NULL, NULL));
    lp_delete_range(&lp, 0, 3);
    assert_true(lp_check(lp));
    rbuf_free(&buf);
    lp_free(lp);
}

static void test_huge_element(void **state) {
    (void)state;
    size_t len = (size_t)512 << 20;   /* proto-max-bulk-len */
    char *big = malloc(len);
    assert_non_null(big);
    memset(big, 'z', len);
    big[0] = 'A';
    big[len - 1] = 'Z';
    struct listpack *lp = lp_new();
    lp_push(&lp, S("before"), true);
    lp_push(&lp, (struct slice){ big, len }, true);
    lp_push(&lp, S("12"), true);
    assert_int_equal(lp_bytes(lp), LP_HDR_SIZE + 8 + (len + 5 + 5) + 2);
    assert_true(lp_check(lp));
    struct lp_value v;
    size_t p = lp_prev(lp, lp_last(lp));
    assert_int_equal(p, lp_seek(lp, 1));
    lp_get(lp, p, &v);
    assert_false(v.is_int);
    assert_int_equal(v.str.len, len);
    assert_int_equal(v.str.ptr[0], 'A');
    assert_int_equal(v.str.ptr[len - 1], 'Z');
    assert_int_equal(lp_find(lp, lp_first(lp), S("12"), 0), lp_last(lp));
    assert_true(lp_safe_to_add(lp, len));
    assert_false(lp_safe_to_add(lp, (size_t)8 << 30));
    lp_replace(&lp, p, S("small"));
    assert_int_equal(lp_bytes(lp), LP_HDR_SIZE + 8 + 7 + 2);
    assert_true(lp_eq(lp, lp_seek(lp, 1), S("small")));
    free(big);
    lp_free(lp);
}

static void test_split_join(void **state) {
    (void)state;
    rng_state = 0xABCDEF12345ULL;
    for (int round = 0; round < 50; round++) {
        struct listpack *lp = lp_new();
        struct model m = { 0 };
        size_t n = rnd() % 40;
        for (size_t i = 0; i < n; i++) {
            struct slice s = rand_value();
            lp_push(&lp, s, true);
            m_insert(&m, m.n, s);
        }
        size_t at = rnd() % (n + 1);
        struct listpack *r = lp_split(&lp, at);
        assert_true(lp_check(lp));
        assert_true(lp_check(r));
        assert_int_equal(lp_count(lp), at);
        assert_int_equal(lp_count(r), n - at);
        lp_append_all(&lp, r);
        check_same(lp, &m);
        lp_free(r);
        lp_free(lp);
        m_free(&m);
    }
}

/* Random operations against the model. */
static void random_run(uint64_t seed, int ops, size_t maxlen, bool forward) {
    rng_state = seed;
    struct listpack *lp = forward ? lp_new_forward() : lp_new();
    struct model m = { 0 };
    struct rbuf buf = { 0 };
    struct lp_value v;
    for (int op = 0; op < ops; op++) {
        unsigned r = (unsigned)(rnd() % 100);
        if (m.n >= maxlen && r < 50) r += 50;      /* keep the size bounded */
        if (r < 20) {
            struct slice s = rand_value();
            bool tail = rnd() & 1;
            lp_push(&lp, s, tail);
            m_insert(&m, tail ? m.n : 0, s);
        } else if (r < 40 && m.n) {
            size_t i = rnd() % m.n;
            struct slice s = rand_value();
            bool after = rnd() & 1;
            size_t p = lp_seek(lp, (long long)i);
            size_t np = after ? lp_insert_after(&lp, p, s) : lp_insert_before(&lp, p, s);
            m_insert(&m, after ? i + 1 : i, s);
            lp_get(lp, np, &v);
            assert_value(&v, s);
        } else if (r < 50 && m.n) {
            size_t i = rnd() % m.n;
            struct slice s = rand_value();
            size_t p = lp_seek(lp, (long long)i - (long long)m.n);
            lp_replace(&lp, p, s);
            free(m.v[i].p);
            m.v[i] = str_dup(s);
            lp_get(lp, p, &v);
            assert_value(&v, s);
        } else if (r < 65) {
            bool tail = rnd() & 1;
            bool got = lp_pop(&lp, tail, &v, &buf);
            assert_int_equal(got, m.n > 0);
            if (got) {
                size_t i = tail ? m.n - 1 : 0;
                assert_value(&v, m_at(&m, i));
                m_delete(&m, i, 1);
            }
        } else if (r < 75 && m.n) {
            size_t i = rnd() % m.n, k = rnd() % 4;
            size_t next = lp_delete(&lp, lp_seek(lp, (long long)i), k);
            if (k > m.n - i) k = m.n - i;
            m_delete(&m, i, k);
            if (i == m.n) assert_int_equal(next, LP_NONE);
            else assert_int_equal(next, lp_seek(lp, (long long)i));
        } else if (r < 80) {
            long long i = (long long)(rnd() % (m.n + 3)) - (long long)(rnd() % (2 * m.n + 3));
            size_t k = rnd() % 5;
            lp_delete_range(&lp, i, k);
            long long j = i < 0 ? i + (long long)m.n : i;
            if (j >= 0 && j < (long long)m.n) m_delete(&m, (size_t)j, k < m.n - (size_t)j ? k : m.n - (size_t)j);
        } else {
            /* lookups: find from the start of a random value or a present one */
            struct slice s = (rnd() & 1) && m.n ? m_at(&m, rnd() % m.n) : rand_value();
            size_t want = SIZE_MAX;
            for (size_t i = 0; i < m.n; i++) {
                if (slice_eq(m_at(&m, i), s)) { want = i; break; }
            }
            size_t p = lp_find(lp, lp_first(lp), s, 0);
            if (want == SIZE_MAX) assert_int_equal(p, LP_NONE);
            else assert_int_equal(p, lp_seek(lp, (long long)want));
        }
        assert_int_equal(lp_count(lp), m.n);
        if (m.n < 64 || op % 16 == 0) check_same(lp, &m);
    }
    check_same(lp, &m);
    rbuf_free(&buf);
    lp_free(lp);
    m_free(&m);
}

static void test_random_small(void **state) {
    (void)state;
    random_run(0x1234567ULL, 20000, 24, false);
}

static void test_random_large(void **state) {
    (void)state;
    random_run(0x9E3779B97F4A7C15ULL, 20000, 400, false);
    random_run(42, 5000, 2000, false);
}

/* Forward-only listpacks: the same operations (backward walks included, by
 * walking from the front) and the same contents, one byte less per element. */
static void test_random_forward(void **state) {
    (void)state;
    random_run(0x1234567ULL, 20000, 24, true);
    random_run(0x9E3779B97F4A7C15ULL, 10000, 400, true);
}

static void test_forward_size_and_split(void **state) {
    (void)state;
    struct listpack *both = lp_new(), *fwd = lp_new_forward();
    static const char *const vals[] = { "field0", "v0000001", "7", "-4000", "123456789", "" };
    for (size_t i = 0; i < RK_ARRAY_LEN(vals); i++) {
        lp_push(&both, S(vals[i]), true);
        lp_push(&fwd, S(vals[i]), true);
    }
    assert_int_equal(lp_bytes(fwd), lp_bytes(both) - RK_ARRAY_LEN(vals));
    assert_true(lp_check(fwd));
    /* a forward-only listpack splits and joins with its own kind */
    struct listpack *tail = lp_split(&fwd, 2);
    assert_true(tail->forward);
    assert_int_equal(lp_count(fwd), 2);
    assert_int_equal(lp_count(tail), RK_ARRAY_LEN(vals) - 2);
    assert_true(lp_check(fwd) && lp_check(tail));
    lp_append_all(&fwd, tail);
    assert_true(lp_check(fwd));
    assert_int_equal(lp_count(fwd), RK_ARRAY_LEN(vals));
    assert_true(lp_eq(fwd, lp_last(fwd), S("")));
    assert_true(lp_eq(fwd, lp_prev(fwd, lp_last(fwd)), S("123456789")));
    lp_free(tail);
    lp_free(both);
    lp_free(fwd);
}

static void test_memory_per_element(void **state) {
    (void)state;
    struct listpack *lp = lp_new();
    char b[32];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(b, sizeof(b), "item:%d", i);   /* 6..8 bytes */
        lp_push(&lp, (struct slice){ b, (size_t)n }, true);
    }
    size_t strings = lp_memory(lp);
    lp_free(lp);
    lp = lp_new();
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(b, sizeof(b), "%d", i * 7);     /* integers 0..6993 */
        lp_push(&lp, (struct slice){ b, (size_t)n }, true);
    }
    size_t ints = lp_memory(lp);
    lp_free(lp);
    print_message("listpack: 1000 strings \"item:N\" (avg 7.9 bytes): %.2f bytes/element; "
                  "1000 integers 0..6993: %.2f bytes/element\n", strings / 1000.0, ints / 1000.0);
    /* 2 bytes of overhead per short string, 3..4 per integer here. */
    assert_true(strings <= LP_HDR_SIZE + 1000 * 2 + 7890);
    assert_true(ints <= LP_HDR_SIZE + 4 * 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoded_sizes),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_int_string_equality),
        cmocka_unit_test(test_find_pairs),
        cmocka_unit_test(test_empty_and_pop),
        cmocka_unit_test(test_huge_element),
        cmocka_unit_test(test_split_join),
        cmocka_unit_test(test_random_small),
        cmocka_unit_test(test_random_large),
        cmocka_unit_test(test_random_forward),
        cmocka_unit_test(test_forward_size_and_split),
        cmocka_unit_test(test_memory_per_element),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
