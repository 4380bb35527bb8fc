/*
 * test_spsc.c -- the single-producer single-consumer ring.
 *
 * Single-threaded: full and empty edges, FIFO order, index wrap-around at
 * 2^32. Two threads: 10M sequence numbers through a small ring, the consumer
 * checking that every one arrives exactly once and in order. A small ring
 * makes the full and empty paths (and the cached-index refreshes) hot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <cmocka.h>

#include "ringkv/spsc.h"

#define STRESS_COUNT 10000000u
#define STRESS_RING  64u

/* NULL means "empty" to spsc_pop(), so values are offset by one. */
static void *val(uintptr_t i) { return (void *)(i + 1); }

static void test_full_empty(void **state) {
    (void)state;
    struct spsc_ring r;
    assert_int_equal(spsc_init(&r, 8), 0);
    assert_true(spsc_empty(&r));
    assert_null(spsc_pop(&r));

    for (uintptr_t i = 0; i < 8; i++) assert_true(spsc_push(&r, val(i)));
    assert_false(spsc_push(&r, val(99)));          /* full at capacity */
    assert_false(spsc_empty(&r));

    assert_ptr_equal(spsc_pop(&r), val(0));
    assert_true(spsc_push(&r, val(8)));            /* one slot freed */
    assert_false(spsc_push(&r, val(99)));
    for (uintptr_t i = 1; i <= 8; i++) assert_ptr_equal(spsc_pop(&r), val(i));
    assert_null(spsc_pop(&r));
    assert_true(spsc_empty(&r));
    spsc_destroy(&r);
    assert_null(r.slots);
}

static void test_interleaved(void **state) {
    (void)state;
    struct spsc_ring r;
    assert_int_equal(spsc_init(&r, 4), 0);
    uintptr_t in = 0, out = 0;
    for (int round = 0; round < 1000; round++) {
        int n = round % 5;                         /* 0..4 pushes, some fail */
        for (int k = 0; k < n; k++)
            if (spsc_push(&r, val(in))) in++;
        int m = (round * 7) % 4;
        for (int k = 0; k < m; k++) {
            void *p = spsc_pop(&r);
            if (p == NULL) break;
            assert_ptr_equal(p, val(out));
            out++;
        }
        assert_true(in - out <= 4);
    }
    void *p;
    while ((p = spsc_pop(&r)) != NULL) assert_ptr_equal(p, val(out++));
    assert_int_equal(in, out);
    assert_true(in > 1000);
    spsc_destroy(&r);
}

/* Indices are free-running uint32_t: they must survive wrapping past 2^32. */
static void test_index_wrap(void **state) {
    (void)state;
    struct spsc_ring r;
    assert_int_equal(spsc_init(&r, 4), 0);
    uint32_t start = UINT32_MAX - 5;
    atomic_store(&r.head, start);
    atomic_store(&r.tail, start);
    r.head_cache = r.tail_cache = start;

    uintptr_t in = 0, out = 0;
    for (int i = 0; i < 20; i++) {
        while (spsc_push(&r, val(in))) in++;
        assert_int_equal(in - out, 4);
        assert_ptr_equal(spsc_pop(&r), val(out));
        out++;
        assert_ptr_equal(spsc_pop(&r), val(out));
        out++;
    }
    assert_true(atomic_load(&r.tail) < start);     /* really wrapped */
    spsc_destroy(&r);
}

static struct spsc_ring stress_ring;

static void *producer(void *arg) {
    (void)arg;
    for (uintptr_t i = 0; i < STRESS_COUNT; i++) {
        unsigned spins = 0;
        while (!spsc_push(&stress_ring, val(i)))
            if (++spins % 64 == 0) sched_yield();   /* 2 shared cores: let the consumer run */
    }
    return NULL;
}

static void test_two_threads(void **state) {
    (void)state;
    assert_int_equal(spsc_init(&stress_ring, STRESS_RING), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, producer, NULL), 0);

    uintptr_t expect = 0;
    unsigned long long empty_polls = 0;
    while (expect < STRESS_COUNT) {
        void *p = spsc_pop(&stress_ring);
        if (p == NULL) {
            if (++empty_polls % 64 == 0) sched_yield();
            continue;
        }
        if (p != val(expect))
            fail_msg("got %zu, expected %zu", (size_t)((uintptr_t)p - 1), (size_t)expect);
        expect++;
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(expect, STRESS_COUNT);
    assert_null(spsc_pop(&stress_ring));            /* nothing extra */
    assert_true(spsc_empty(&stress_ring));
    spsc_destroy(&stress_ring);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_empty),
        cmocka_unit_test(test_interleaved),
        cmocka_unit_test(test_index_wrap),
        cmocka_unit_test(test_two_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
