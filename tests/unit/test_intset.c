/*
 * Unit tests for the integer set: basic operations, widening at every
 * boundary (INT16_MAX + 1, INT16_MIN - 1, INT32 and INT64 extremes) with the
 * new value going first or last, width never narrowing, random operations
 * against a sorted-array model in several value ranges, random-element
 * distribution, and the exact memory size.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ringkv/intset.h"

static uint64_t rng_state = 0x243F6A8885A308D3ULL;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}

/* Elements in order, no duplicates, and memory exactly header + array. */
static void check_sorted(const struct intset *is) {
    size_t n = intset_count(is);
    for (size_t i = 1; i < n; i++) assert_true(intset_get(is, i - 1) < intset_get(is, i));
    assert_int_equal(intset_memory(is), 8 + n * intset_width(is));
}

static void test_basic(void **state) {
    (void)state;
    struct intset *is = intset_new();
    assert_int_equal(intset_count(is), 0);
    assert_int_equal(intset_width(is), 2);
    assert_int_equal(intset_memory(is), 8);
    assert_false(intset_contains(is, 0));
    assert_false(intset_remove(&is, 0));

    assert_true(intset_add(&is, 5));
    assert_true(intset_add(&is, -3));
    assert_true(intset_add(&is, 10));
    assert_true(intset_add(&is, 0));
    assert_false(intset_add(&is, 5));
    assert_int_equal(intset_count(is), 4);
    assert_int_equal(intset_get(is, 0), -3);
    assert_int_equal(intset_get(is, 1), 0);
    assert_int_equal(intset_get(is, 2), 5);
    assert_int_equal(intset_get(is, 3), 10);
    assert_true(intset_contains(is, 0));
    assert_true(intset_contains(is, -3));
    assert_false(intset_contains(is, 4));
    assert_false(intset_contains(is, 11));
    assert_false(intset_contains(is, INT64_MAX));   /* wider than the set: absent */
    assert_false(intset_remove(&is, INT64_MIN));
    check_sorted(is);

    assert_true(intset_remove(&is, 0));
    assert_false(intset_remove(&is, 0));
    assert_true(intset_remove(&is, -3));
    assert_true(intset_remove(&is, 10));
    assert_int_equal(intset_count(is), 1);
    assert_int_equal(intset_get(is, 0), 5);
    assert_true(intset_remove(&is, 5));
    assert_int_equal(intset_count(is), 0);
    assert_int_equal(intset_memory(is), 8);
    intset_free(is);
}

/* Each widening: the new value goes first or last and the rest survive. */
static void test_widening(void **state) {
    (void)state;
    struct intset *is = intset_new();
    for (int v = -50; v <= 50; v += 10) assert_true(intset_add(&is, v));
    assert_true(intset_add(&is, INT16_MAX));
    assert_true(intset_add(&is, INT16_MIN));
    assert_int_equal(intset_width(is), 2);
    check_sorted(is);

    assert_true(intset_add(&is, (int64_t)INT16_MAX + 1));
    assert_int_equal(intset_width(is), 4);
    assert_int_equal(intset_get(is, intset_count(is) - 1), (int64_t)INT16_MAX + 1);
    assert_int_equal(intset_get(is, 0), INT16_MIN);
    assert_false(intset_add(&is, (int64_t)INT16_MAX + 1));
    check_sorted(is);

    assert_true(intset_add(&is, (int64_t)INT16_MIN - 1));
    assert_int_equal(intset_width(is), 4);
    assert_int_equal(intset_get(is, 0), (int64_t)INT16_MIN - 1);
    assert_true(intset_add(&is, INT32_MAX));
    assert_true(intset_add(&is, INT32_MIN));
    assert_int_equal(intset_width(is), 4);
    check_sorted(is);

    assert_true(intset_add(&is, (int64_t)INT32_MIN - 1));
    assert_int_equal(intset_width(is), 8);
    assert_int_equal(intset_get(is, 0), (int64_t)INT32_MIN - 1);
    assert_int_equal(intset_get(is, 1), INT32_MIN);
    assert_true(intset_add(&is, (int64_t)INT32_MAX + 1));
    assert_true(intset_add(&is, INT64_MAX));
    assert_true(intset_add(&is, INT64_MIN));
    assert_false(intset_add(&is, INT64_MIN));
    assert_int_equal(intset_get(is, 0), INT64_MIN);
    assert_int_equal(intset_get(is, intset_count(is) - 1), INT64_MAX);
    check_sorted(is);

    /* Every value put in is still there, in order. */
    int64_t want[] = { INT64_MIN, (int64_t)INT32_MIN - 1, INT32_MIN, (int64_t)INT16_MIN - 1,
                       INT16_MIN, -50, -40, -30, -20, -10, 0, 10, 20, 30, 40, 50, INT16_MAX,
                       (int64_t)INT16_MAX + 1, INT32_MAX, (int64_t)INT32_MAX + 1, INT64_MAX };
    assert_int_equal(intset_count(is), RK_ARRAY_LEN(want));
    for (size_t i = 0; i < RK_ARRAY_LEN(want); i++) {
        assert_int_equal(intset_get(is, i), want[i]);
        assert_true(intset_contains(is, want[i]));
    }

    /* Removing the wide values does not narrow. */
    assert_true(intset_remove(&is, INT64_MIN));
    assert_true(intset_remove(&is, INT64_MAX));
    assert_true(intset_remove(&is, (int64_t)INT32_MIN - 1));
    assert_true(intset_remove(&is, (int64_t)INT32_MAX + 1));
    assert_int_equal(intset_width(is), 8);
    check_sorted(is);
    intset_free(is);

    /* Straight from 2 to 8 bytes, negative first, on an empty set and not. */
    is = intset_new();
    assert_true(intset_add(&is, INT64_MIN));
    assert_int_equal(intset_width(is), 8);
    assert_int_equal(intset_get(is, 0), INT64_MIN);
    intset_free(is);
    is = intset_new();
    for (int v = 1; v <= 300; v++) assert_true(intset_add(&is, v * 7));
    assert_true(intset_add(&is, INT64_MIN + 1));
    assert_int_equal(intset_width(is), 8);
    assert_int_equal(intset_get(is, 0), INT64_MIN + 1);
    for (size_t i = 1; i <= 300; i++) assert_int_equal(intset_get(is, i), (int64_t)i * 7);
    check_sorted(is);
    intset_free(is);
}

/* A value in one of several ranges, so every width is exercised. */
static int64_t draw_value(int phase) {
    uint64_t r = rnd();
    switch (phase) {
    case 0: return (int64_t)(r % 200) - 100;
    case 1: return (int64_t)(r % 70000) - 35000;            /* crosses int16 */
    case 2: return (r & 1) ? (int64_t)(r % 400) - 200
                           : (int64_t)((r >> 1) % 5000000000ULL) - 2500000000LL;
    default: return (r % 4 == 0) ? (int64_t)r : (int64_t)(r % 1000) - 500;
    }
}

/* The model: a sorted array of distinct values. */
struct model {
    int64_t v[2048];
    size_t n;
};

static size_t model_pos(const struct model *md, int64_t v, bool *found) {
    size_t i = 0;
    while (i < md->n && md->v[i] < v) i++;
    *found = i < md->n && md->v[i] == v;
    return i;
}

static void test_random_vs_model(void **state) {
    (void)state;
    static struct model md;
    md.n = 0;
    struct intset *is = intset_new();
    unsigned max_width = 2;
    for (int phase = 0; phase < 4; phase++) {
        for (int op = 0; op < 20000; op++) {
            int64_t v = draw_value(phase);
            bool found;
            size_t p = model_pos(&md, v, &found);
            uint64_t kind = rnd() % 10;
            if (kind < 5 && md.n < RK_ARRAY_LEN(md.v)) {
                assert_int_equal(intset_add(&is, v), !found);
                if (!found) {
                    memmove(md.v + p + 1, md.v + p, (md.n - p) * sizeof md.v[0]);
                    md.v[p] = v;
                    md.n++;
                }
            } else if (kind < 8) {
                assert_int_equal(intset_remove(&is, v), found);
                if (found) {
                    memmove(md.v + p, md.v + p + 1, (md.n - p - 1) * sizeof md.v[0]);
                    md.n--;
                }
            } else {
                assert_int_equal(intset_contains(is, v), found);
            }
            assert_int_equal(intset_count(is), md.n);
            unsigned w = intset_width(is);
            assert_true(w >= max_width);   /* never narrows */
            max_width = w;
            if (op % 500 == 0) {
                for (size_t i = 0; i < md.n; i++) assert_int_equal(intset_get(is, i), md.v[i]);
                check_sorted(is);
            }
        }
        /* The width is the smallest that was ever needed. */
        unsigned need = 2;
        for (size_t i = 0; i < md.n; i++) {
            int64_t v = md.v[i];
            if (v < INT32_MIN || v > INT32_MAX) need = 8;
            else if ((v < INT16_MIN || v > INT16_MAX) && need < 4) need = 4;
        }
        assert_true(intset_width(is) >= need);
        /* Drain half of it between phases. */
        for (size_t i = 0; i < md.n; i += 2) assert_true(intset_remove(&is, md.v[i]));
        size_t k = 0;
        for (size_t i = 1; i < md.n; i += 2) md.v[k++] = md.v[i];
        md.n = k;
        assert_int_equal(intset_count(is), md.n);
    }
    assert_int_equal(max_width, 8);
    intset_free(is);
}

static void test_random_element(void **state) {
    (void)state;
    struct intset *is = intset_new();
    for (int i = 0; i < 100; i++) assert_true(intset_add(&is, (int64_t)i * 1000003 - 50000000));
    static unsigned seen[100];
    memset(seen, 0, sizeof seen);
    for (int d = 0; d < 100000; d++) {
        int64_t v = intset_random(is, rnd());
        assert_true(intset_contains(is, v));
        int64_t i = (v + 50000000) / 1000003;
        assert_true(i >= 0 && i < 100);
        seen[i]++;
    }
    /* Expected 1000 each; 700..1300 is over 9 standard deviations. */
    for (int i = 0; i < 100; i++) {
        assert_true(seen[i] > 700);
        assert_true(seen[i] < 1300);
    }
    intset_free(is);
}

static void test_memory(void **state) {
    (void)state;
    struct intset *is = intset_new();
    for (int i = 1; i <= 10; i++) assert_true(intset_add(&is, i));
    assert_int_equal(intset_memory(is), 8 + 10 * 2);
    printf("intset: 10 small integers: %zu bytes, %.1f bytes per element\n",
           intset_memory(is), intset_memory(is) / 10.0);
    assert_true(intset_add(&is, 100000));
    assert_int_equal(intset_memory(is), 8 + 11 * 4);
    assert_true(intset_add(&is, 10000000000LL));
    assert_int_equal(intset_memory(is), 8 + 12 * 8);
    intset_free(is);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_widening),
        cmocka_unit_test(test_random_vs_model),
        cmocka_unit_test(test_random_element),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
