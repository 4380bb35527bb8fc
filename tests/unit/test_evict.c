/* Eviction (evict.h) and access stamps (stamp.h): the LFU counter against Redis's documented behaviour
 * (logarithmic growth, decay per lfu-decay-time minutes), the stamps OBJECT
 * reads, and which keys a shard gives up under each kind of policy. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/evict.h"
#include "ringkv/stamp.h"
#include "ringkv/mem.h"
#include "ringkv/util.h"

#define NOW 1700000000000LL   /* a fixed clock: stamps are computed from it */

static int reset(void **state) {
    (void)state;
    config_set_defaults();
    return 0;
}

static void set_config(const char *name, const char *value) {
    struct slice argv[2] = { { name, strlen(name) }, { value, strlen(value) } };
    char *err = config_set(argv, 2, false);
    assert_null(err);
}

/* ---- the LFU counter ---- */

static void test_lfu_increment_probability(void **state) {
    (void)state;
    /* at or below LFU_INIT_VAL every access counts */
    assert_int_equal(lfu_log_incr(0, 10, 0.999), 1);
    assert_int_equal(lfu_log_incr(LFU_INIT_VAL, 10, 0.999), LFU_INIT_VAL + 1);
    /* one above: probability 1 / (1 * 10 + 1) */
    assert_int_equal(lfu_log_incr(LFU_INIT_VAL + 1, 10, 0.0908), LFU_INIT_VAL + 2);
    assert_int_equal(lfu_log_incr(LFU_INIT_VAL + 1, 10, 0.0910), LFU_INIT_VAL + 1);
    /* factor 0: always */
    assert_int_equal(lfu_log_incr(200, 0, 0.999), 201);
    /* saturates */
    assert_int_equal(lfu_log_incr(255, 0, 0.0), 255);
}

/* Redis's redis.conf table (counter after N hits from a new key): factor
 * 10 gives about 10 after 100 hits and 18 after 1000; factor 1 about 18
 * after 100 and 49 after 1000; factor 100 about 11 after 1000. */
static unsigned hits(unsigned n, long long factor, uint64_t *rng) {
    unsigned c = LFU_INIT_VAL;
    for (unsigned i = 0; i < n; i++) {
        *rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
        c = lfu_log_incr(c, factor, (double)(*rng >> 11) * 0x1.0p-53);
    }
    return c;
}

static void test_lfu_logarithmic(void **state) {
    (void)state;
    uint64_t rng = 42;
    unsigned c;
    c = hits(100, 10, &rng);
    assert_in_range(c, 8, 13);
    c = hits(1000, 10, &rng);
    assert_in_range(c, 15, 22);
    c = hits(100, 1, &rng);
    assert_in_range(c, 15, 22);
    c = hits(1000, 1, &rng);
    assert_in_range(c, 42, 56);
    c = hits(1000, 100, &rng);
    assert_in_range(c, 9, 14);
    c = hits(1000000, 0, &rng);
    assert_int_equal(c, 255);
}

static void test_lfu_decay(void **state) {
    (void)state;
    uint32_t stamp = 100u << 8 | 10;
    assert_int_equal(lfu_decayed(stamp, 100, 1), 10);        /* no time passed */
    assert_int_equal(lfu_decayed(stamp, 103, 1), 7);         /* one per minute */
    assert_int_equal(lfu_decayed(stamp, 106, 2), 7);         /* one per two minutes */
    assert_int_equal(lfu_decayed(stamp, 200, 1), 0);         /* never below 0 */
    assert_int_equal(lfu_decayed(stamp, 5000, 0), 10);       /* lfu-decay-time 0: no decay */
    /* the 16-bit minute clock wraps */
    assert_int_equal(lfu_decayed(0xFFFFu << 8 | 10, 2, 1), 8);
}

/* ---- stamps ---- */

static void test_stamps(void **state) {
    (void)state;
    set_config("maxmemory-policy", "allkeys-lru");
    stamp_clock(NOW);
    struct kv_entry *e = entry_new_string(SLICE_LIT("k"), SLICE_LIT("v"), NO_EXPIRE);
    assert_int_equal(stamp_idle_ms(e, NOW), 0);
    assert_int_equal(stamp_idle_ms(e, NOW + 5500), 5000);   /* whole seconds, as Redis */
    uint32_t stamp;
    assert_true(stamp_for_restore(1000, -1, NOW, &stamp));   /* RESTORE IDLETIME 1000 */
    entry_set_stamp(e, stamp);
    assert_int_equal(stamp_idle_ms(e, NOW), 1000 * 1000);
    assert_false(stamp_for_restore(-1, 7, NOW, &stamp));     /* FREQ is for LFU policies */
    entry_free(e);

    set_config("maxmemory-policy", "volatile-lfu");
    stamp_clock(NOW);
    e = entry_new_string(SLICE_LIT("k"), SLICE_LIT("v"), NO_EXPIRE);
    assert_int_equal(stamp_freq(e, NOW), LFU_INIT_VAL);
    entry_touch(e);
    assert_int_equal(stamp_freq(e, NOW), LFU_INIT_VAL + 1);   /* at LFU_INIT_VAL an access always counts */
    assert_int_equal(stamp_freq(e, NOW + 3 * 60000), LFU_INIT_VAL + 1 - 3);
    assert_true(stamp_for_restore(-1, 100, NOW, &stamp));
    entry_set_stamp(e, stamp);
    assert_int_equal(stamp_freq(e, NOW), 100);
    entry_free(e);
}

/* ---- which keys go ---- */

#define NKEYS 200

static struct shard shard;
static struct shard *shards[1] = { &shard };

/* NKEYS keys "key:<i>", each accessed i seconds after the first, those
 * with an odd i also with a TTL that grows with i. */
static void fill(void) {
    shard_init(&shard, 0, 2);
    rk_arena = &shard.arena;
    for (int i = 0; i < NKEYS; i++) {
        char k[32];
        int n = snprintf(k, sizeof k, "key:%d", i);
        stamp_clock(NOW + i * 1000LL);
        long long ttl = i % 2 ? NOW + 1000000 + i * 1000LL : NO_EXPIRE;
        struct kv_entry *e = entry_new_string((struct slice){ k, (size_t)n }, SLICE_LIT("0123456789abcdef"), ttl);
        assert_true(db_load_entry(&shard, 0, e, false));
    }
}

static bool present(int i) {
    char k[32];
    int n = snprintf(k, sizeof k, "key:%d", i);
    return table_find(&shard.dbs[0].table, k, (size_t)n, table_hash(k, (size_t)n)) != NULL;
}

/* Evict under policy until about `room` bytes are freed; returns how many
 * keys went. No time limit on the turn (tenacity 100): preempted under
 * load, a timed turn stopped before it had freed the room. */
static size_t evict_room(const char *policy, size_t room) {
    set_config("maxmemory-policy", policy);
    set_config("maxmemory-eviction-tenacity", "100");
    set_config("maxmemory-samples", "64");
    char limit[32];
    snprintf(limit, sizeof limit, "%zu", mem_used() - room);
    set_config("maxmemory", limit);
    size_t before = table_size(&shard.dbs[0].table);
    bool wake;
    struct evict_timing timing = {0};
    bool refuse = evict_iteration(&shard, shards, 1, NOW + NKEYS * 1000LL, true, &wake, &timing);
    assert_false(refuse);
    /* the turn is timed for the latency monitor: one cycle, of which the
     * slowest deletion is a part */
    assert_true(timing.evicted);
    assert_true(timing.cycle_ticks >= timing.longest_del_ticks);
    set_config("maxmemory", "0");
    return before - table_size(&shard.dbs[0].table);
}

static void done(void) {
    evict_shard_free(&shard);
    shard_destroy(&shard);
    rk_arena = NULL;
}

static void test_lru_takes_the_oldest(void **state) {
    (void)state;
    fill();
    size_t gone = evict_room("allkeys-lru", 40 * 30);
    assert_in_range(gone, 10, NKEYS / 2);
    /* the pool ranks 64 samples of 200 at a time: what goes is old */
    size_t old_gone = 0;
    for (int i = 0; i < NKEYS; i++)
        if (!present(i)) old_gone += i < NKEYS / 2;
    assert_true(old_gone * 10 >= gone * 9);
    for (int i = NKEYS - 20; i < NKEYS; i++) assert_true(present(i));   /* the newest stay */
    assert_int_equal(shard.stats.evicted_keys, gone);
    done();
}

static void test_volatile_spares_keys_without_ttl(void **state) {
    (void)state;
    static const char *const policies[] = { "volatile-lru", "volatile-random", "volatile-ttl", "volatile-lfu" };
    for (size_t p = 0; p < RK_ARRAY_LEN(policies); p++) {
        fill();
        size_t gone = evict_room(policies[p], 40 * 30);
        assert_true(gone > 0);
        for (int i = 0; i < NKEYS; i += 2) assert_true(present(i));
        done();
    }
}

static void test_ttl_takes_the_nearest_expiry(void **state) {
    (void)state;
    fill();
    size_t gone = evict_room("volatile-ttl", 40 * 20);
    assert_true(gone > 0);
    /* odd keys expire in the order of i: the `gone` first ones go */
    size_t early = 0;
    for (int i = 1; i < NKEYS && i < 1 + 2 * (int)gone; i += 2) early += !present(i);
    assert_true(early * 10 >= gone * 9);
    done();
}

static void test_noeviction_refuses(void **state) {
    (void)state;
    bool wake;
    fill();
    struct evict_timing timing = {0};
    assert_false(evict_iteration(&shard, shards, 1, NOW, true, &wake, &timing));
    assert_false(timing.evicted);   /* under the limit (none): no eviction turn to time */
    set_config("maxmemory-policy", "noeviction");
    set_config("maxmemory", "1");
    assert_true(evict_iteration(&shard, shards, 1, NOW, true, &wake, &timing));
    assert_false(timing.evicted);   /* noeviction refuses, it does not evict */
    assert_int_equal(table_size(&shard.dbs[0].table), NKEYS);
    /* nothing left to take under allkeys: refused too */
    set_config("maxmemory-policy", "allkeys-random");
    assert_true(evict_iteration(&shard, shards, 1, NOW, true, &wake, NULL));
    assert_int_equal(table_size(&shard.dbs[0].table), 0);
    set_config("maxmemory", "0");
    assert_false(evict_iteration(&shard, shards, 1, NOW, true, &wake, NULL));
    done();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_lfu_increment_probability, reset),
        cmocka_unit_test_setup(test_lfu_logarithmic, reset),
        cmocka_unit_test_setup(test_lfu_decay, reset),
        cmocka_unit_test_setup(test_stamps, reset),
        cmocka_unit_test_setup(test_lru_takes_the_oldest, reset),
        cmocka_unit_test_setup(test_volatile_spares_keys_without_ttl, reset),
        cmocka_unit_test_setup(test_ttl_takes_the_nearest_expiry, reset),
        cmocka_unit_test_setup(test_noeviction_refuses, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
