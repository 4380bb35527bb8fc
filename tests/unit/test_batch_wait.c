/*
 * ring_batch_wait_us (ring.h): the minimum wait that gathers many clients'
 * requests into one wake-up is a sixteenth of a client's observed cycle
 * (window span x clients / receives), at most BATCH_WAIT_MAX_US; it gathers
 * up to half the clients' completions, at most BATCH_WAIT_NR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ringkv/ring.h"

static void test_no_receives_no_wait(void **state) {
    (void)state;
    assert_int_equal(ring_batch_wait_us(100000, 0, 0), 0);
    assert_int_equal(ring_batch_wait_us(0, 5, 10), 0);    /* an empty window */
    assert_int_equal(ring_batch_wait_us(-5, 5, 10), 0);   /* a clock that went back */
}

/* One client answered at once: its cycle is the round trip, and the wait
 * a sixteenth of it. */
static void test_one_busy_client_waits_little(void **state) {
    (void)state;
    /* 100 ms, 4000 requests: a 25 us cycle */
    assert_int_equal(ring_batch_wait_us(100000, 1, 4000), 1);
    /* 50 clients, 8000 requests in 100 ms: a 625 us cycle */
    assert_int_equal(ring_batch_wait_us(100000, 50, 8000), 39);
}

/* Many connections, each waiting its turn: the wait grows with the cycle
 * up to the cap. */
static void test_many_connections_reach_the_cap(void **state) {
    (void)state;
    /* 1,000 clients, 5,500 requests in 100 ms: an 18 ms cycle */
    assert_int_equal(ring_batch_wait_us(100000, 1000, 5500), BATCH_WAIT_MAX_US);
    /* 200 clients, 10,000 requests: a 2 ms cycle, 125 us */
    assert_int_equal(ring_batch_wait_us(100000, 200, 10000), 125);
    /* twice the clients at the same rate: twice the wait */
    assert_int_equal(ring_batch_wait_us(100000, 400, 10000), 250);
}

/* A window that lasted far too long (a stalled loop) with every client
 * idle but one request each: capped, not overflowed into a small or
 * negative figure. */
static void test_huge_window_capped(void **state) {
    (void)state;
    assert_int_equal(ring_batch_wait_us(1LL << 40, UINT32_MAX, UINT32_MAX), BATCH_WAIT_MAX_US);
    assert_int_equal(ring_batch_wait_us(1LL << 40, 1, 1), BATCH_WAIT_MAX_US);
}

/* What a wait gathers before it returns early: half the clients heard
 * from, within [BATCH_WAIT_NR_MIN, BATCH_WAIT_NR]. */
static void test_wait_nr_follows_clients(void **state) {
    (void)state;
    assert_int_equal(ring_batch_wait_nr(0), BATCH_WAIT_NR_MIN);
    assert_int_equal(ring_batch_wait_nr(3), BATCH_WAIT_NR_MIN);
    assert_int_equal(ring_batch_wait_nr(25), 12);
    assert_int_equal(ring_batch_wait_nr(64), BATCH_WAIT_NR);
    assert_int_equal(ring_batch_wait_nr(16384), BATCH_WAIT_NR);
    assert_int_equal(ring_batch_wait_nr(UINT32_MAX), BATCH_WAIT_NR);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_receives_no_wait),
        cmocka_unit_test(test_one_busy_client_waits_little),
        cmocka_unit_test(test_many_connections_reach_the_cap),
        cmocka_unit_test(test_huge_window_capped),
        cmocka_unit_test(test_wait_nr_follows_clients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
