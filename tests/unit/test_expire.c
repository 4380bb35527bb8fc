/*
 * Keyspace layer (src/kv/db.c): lazy expiry, the per-database TTL counter
 * through every way an entry changes, keyspace hit/miss statistics, routing
 * by slot when c->multi is set, and the bounded active expiry cycle.
 *
 * Each test builds one or two shards and a cmd_ctx by hand and moves the
 * clock through c->now_ms, so nothing here depends on real time except the
 * budget test, which measures how long one active-expiry call takes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ringkv/command.h"
#include "ringkv/db.h"
#include "ringkv/util.h"

#define NOW 1700000000000LL

static struct shard shards[2];
static struct shard *shard_ptrs[2] = { &shards[0], &shards[1] };
static struct cmd_ctx c;

static int setup_n(unsigned n) {
    slots_assign(n);
    for (unsigned i = 0; i < n; i++)
        shard_init(&shards[i], i, 16);
    memset(&c, 0, sizeof c);
    c.shard = &shards[0];
    c.shards = shard_ptrs;
    c.nshards = n;
    c.db = 0;
    c.now_ms = NOW;
    return 0;
}

static int setup(void **state) { (void)state; return setup_n(1); }
static int setup2(void **state) { (void)state; return setup_n(2); }

static int teardown(void **state) {
    (void)state;
    for (unsigned i = 0; i < c.nshards; i++)
        shard_destroy(&shards[i]);
    slots_assign(1);
    return 0;
}

static struct slice S(const char *s) { return (struct slice){ s, strlen(s) }; }

static struct kv_entry *str_entry(const char *k, const char *v, long long exp) {
    return entry_new_string(S(k), S(v), exp);
}

static struct kv_db *db0(void) { return &shards[0].dbs[0]; }

/* ------------------------------------------------------------------------ */

static void test_lazy_expiry(void **state) {
    (void)state;
    db_insert(&c, str_entry("k", "v", NOW + 100));
    assert_int_equal(db0()->expires, 1);

    c.now_ms = NOW + 100;   /* expired only once now > expire_at */
    assert_non_null(db_lookup(&c, S("k"), LOOKUP_NONE));

    c.now_ms = NOW + 101;
    assert_null(db_lookup(&c, S("k"), LOOKUP_NOEXPIRE));
    assert_int_equal(table_size(&db0()->table), 1);   /* still there */

    assert_null(db_lookup(&c, S("k"), LOOKUP_NONE));
    assert_int_equal(table_size(&db0()->table), 0);
    assert_int_equal(db0()->expires, 0);
    assert_int_equal(shards[0].stats.expired_keys, 1);
}

static void test_read_stats(void **state) {
    (void)state;
    db_insert(&c, str_entry("a", "1", NO_EXPIRE));
    assert_non_null(db_lookup(&c, S("a"), LOOKUP_READ));
    assert_null(db_lookup(&c, S("b"), LOOKUP_READ));
    assert_null(db_lookup(&c, S("b"), LOOKUP_NONE));   /* not counted */
    assert_int_equal(shards[0].stats.keyspace_hits, 1);
    assert_int_equal(shards[0].stats.keyspace_misses, 1);
}

static void test_expires_counter(void **state) {
    (void)state;
    struct kv_entry **slot;

    db_insert(&c, str_entry("k", "v", NOW + 1000));
    assert_int_equal(db0()->expires, 1);

    db_set(&c, str_entry("k", "w", NO_EXPIRE));          /* overwrite drops the TTL */
    assert_int_equal(db0()->expires, 0);

    slot = db_lookup_slot(&c, S("k"), LOOKUP_NONE);
    db_set_expire(&c, slot, NOW + 5000);
    assert_int_equal(db0()->expires, 1);
    db_set_expire(&c, slot, NOW + 6000);                 /* changing it is not adding one */
    assert_int_equal(db0()->expires, 1);
    assert_int_equal(entry_expire(*slot), NOW + 6000);
    db_set_expire(&c, slot, NO_EXPIRE);                  /* PERSIST */
    assert_int_equal(db0()->expires, 0);

    slot = db_lookup_slot(&c, S("k"), LOOKUP_NONE);
    db_replace(&c, slot, str_entry("k", "x", NOW + 10));
    assert_int_equal(db0()->expires, 1);
    db_set(&c, str_entry("k", "y", NOW + 20));           /* TTL over TTL */
    assert_int_equal(db0()->expires, 1);

    assert_true(db_delete(&c, S("k")));
    assert_int_equal(db0()->expires, 0);
    assert_false(db_delete(&c, S("k")));

    db_insert(&c, str_entry("u", "1", NOW + 10));
    struct kv_entry *e = db_unlink(&c, S("u"));
    assert_non_null(e);
    assert_int_equal(db0()->expires, 0);
    db_insert(&c, e);                                    /* as MOVE does */
    assert_int_equal(db0()->expires, 1);

    for (int i = 0; i < 100; i++) {
        char k[16];
        snprintf(k, sizeof k, "key:%d", i);
        db_insert(&c, str_entry(k, "v", i % 2 ? NOW + 10 : NO_EXPIRE));
    }
    assert_int_equal(db0()->expires, 51);
    db_empty(db0());
    assert_int_equal(db0()->expires, 0);
    assert_int_equal(table_size(&db0()->table), 0);
}

static void test_delete_expired_is_not_a_delete(void **state) {
    (void)state;
    db_insert(&c, str_entry("k", "v", NOW + 1));
    c.now_ms = NOW + 2;
    assert_false(db_delete(&c, S("k")));
    assert_int_equal(table_size(&db0()->table), 0);
    assert_int_equal(db0()->expires, 0);
    assert_int_equal(shards[0].stats.expired_keys, 1);
}

static void test_multi_routing(void **state) {
    (void)state;
    char k[16];

    c.multi = true;
    for (int i = 0; i < 200; i++) {
        snprintf(k, sizeof k, "k%d", i);
        db_set(&c, str_entry(k, "v", i % 3 ? NO_EXPIRE : NOW + 100));
    }
    size_t expires = 0;
    for (int i = 0; i < 200; i++) {
        snprintf(k, sizeof k, "k%d", i);
        unsigned owner = shard_of_slot(key_hash_slot(k, strlen(k)));
        struct kv_table *t = &shards[owner].dbs[0].table;
        assert_non_null(table_find(t, k, strlen(k), table_hash(k, strlen(k))));
        assert_non_null(db_lookup(&c, S(k), LOOKUP_READ));
    }
    for (int i = 0; i < 2; i++)
        expires += shards[i].dbs[0].expires;
    assert_int_equal(expires, 67);
    assert_int_equal(db_size_all(&c, 0), 200);
    assert_true(table_size(&shards[0].dbs[0].table) > 50);
    assert_true(table_size(&shards[1].dbs[0].table) > 50);
    assert_int_equal(shards[0].stats.keyspace_hits + shards[1].stats.keyspace_hits, 200);

    /* db_for_key names the owner's database of any index */
    unsigned owner = shard_of_slot(key_hash_slot("k7", 2));
    assert_ptr_equal(db_for_key(&c, 3, S("k7")), &shards[owner].dbs[3]);
    c.multi = false;
}

/* Fill db 0 with n keys expired at NOW and m keys without a TTL. */
static void fill(size_t n, size_t m, long long expire_at) {
    char k[32];
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(k, sizeof k, "ttl:%zu", i);
        db_insert(&c, entry_new_string((struct slice){ k, (size_t)len }, S("v"), expire_at));
    }
    for (size_t i = 0; i < m; i++) {
        int len = snprintf(k, sizeof k, "keep:%zu", i);
        db_insert(&c, entry_new_string((struct slice){ k, (size_t)len }, S("v"), NO_EXPIRE));
    }
}

static void test_active_expire_removes_all(void **state) {
    (void)state;
    fill(100000, 20000, NOW);
    db_insert(&c, str_entry("future", "v", NOW + 3600000));

    long long now = NOW + 1;
    int calls = 0;
    while (db0()->expires > 1 && calls < 100000) {
        shard_active_expire(&shards[0], now, 1000);
        calls++;
    }
    assert_true(calls > 1);   /* bounded: not all in one call */
    assert_int_equal(db0()->expires, 1);
    assert_int_equal(table_size(&db0()->table), 20001);
    assert_int_equal(shards[0].stats.expired_keys, 100000);

    char k[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(k, sizeof k, "keep:%d", i);
        assert_non_null(db_lookup(&c, S(k), LOOKUP_NONE));
    }
    assert_non_null(db_lookup(&c, S("future"), LOOKUP_NONE));

    /* Nothing left to expire: a call is cheap and changes nothing. */
    shard_active_expire(&shards[0], now, 1000);
    assert_int_equal(table_size(&db0()->table), 20001);
}

/* The time budget bounds the cycle's work: with none left, a call does one
 * batch (at most 256 dead entries found in one table_scan step) and stops,
 * so it never sweeps the whole table. Bounded by counts, not by a clock. */
static void test_active_expire_budget(void **state) {
    (void)state;
    const size_t keys = 1000000, batch_max = 256;
    fill(keys, 0, NOW);
    long long now = NOW + 1;

    shard_active_expire(&shards[0], now, 0);
    size_t gone = keys - db0()->expires;
    assert_true(gone > 0);
    assert_true(gone <= batch_max);

    size_t calls = 1;
    while (db0()->expires > 0 && calls < keys) {
        size_t before = db0()->expires;
        shard_active_expire(&shards[0], now, 0);
        assert_true(before - db0()->expires <= batch_max);
        calls++;
    }
    assert_int_equal(db0()->expires, 0);
    assert_int_equal(table_size(&db0()->table), 0);
}

static void test_active_expire_several_dbs(void **state) {
    (void)state;
    char k[16];
    for (int d = 0; d < 16; d += 3) {
        c.db = d;
        for (int i = 0; i < 1000; i++) {
            snprintf(k, sizeof k, "k%d", i);
            db_insert(&c, str_entry(k, "v", NOW));
        }
    }
    c.db = 0;
    size_t left = 6000;
    for (int calls = 0; left && calls < 10000; calls++) {
        shard_active_expire(&shards[0], NOW + 1, 500);
        left = 0;
        for (int d = 0; d < 16; d++)
            left += shards[0].dbs[d].expires;
    }
    for (int d = 0; d < 16; d++) {
        assert_int_equal(shards[0].dbs[d].expires, 0);
        assert_int_equal(table_size(&shards[0].dbs[d].table), 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lazy_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expires_counter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_expired_is_not_a_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi_routing, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_active_expire_removes_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_active_expire_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_active_expire_several_dbs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
