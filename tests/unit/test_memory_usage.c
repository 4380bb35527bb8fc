/*
 * What keys cost: each object type's usage op (obj_ops.usage) in its
 * compact and full encodings, sampled and counted in full, and MEMORY
 * USAGE's replies and errors (src/cmd/cmd_memory.c) over a fixture shard.
 */
#include "cmd_fixture.h"

#include <malloc.h>

#include "ringkv/hash_obj.h"
#include "ringkv/list_obj.h"
#include "ringkv/set_obj.h"
#include "ringkv/zset_obj.h"

#define ITEMS 2000

static struct slice num(char *buf, const char *prefix, int i) {
    return (struct slice){ buf, (size_t)sprintf(buf, "%s%d", prefix, i) };
}

/* Sampling a few uniform elements estimates the total within 10%. */
static void assert_close(size_t sampled, size_t all) {
    assert_true(sampled * 10 >= all * 9 && sampled * 10 <= all * 11);
}

static void test_list(void **state) {
    (void)state;
    char b[32];
    struct list_obj *l = list_new();
    list_push(&l, num(b, "v", 0), true);
    assert_int_equal(list_usage(l, 5), malloc_usable_size((void *)l));   /* a bare listpack */
    for (int i = 1; i < 10 * ITEMS; i++) list_push(&l, num(b, "value-", i), true);   /* dozens of nodes */
    list_grew(&l);
    assert_string_equal(list_encoding(l), "quicklist");
    size_t all = list_usage(l, SIZE_MAX);
    assert_true(all >= ql_memory(list_quicklist(l)));
    assert_close(list_usage(l, 5), all);
    list_free(l);
}

static void test_hash(void **state) {
    (void)state;
    char f[32], v[32];
    struct hash_obj *h = hash_new();
    hash_set(&h, num(f, "f", 0), num(v, "v", 0));
    assert_int_equal(hash_usage(h, 5), malloc_usable_size(hash_lp(h)));
    for (int i = 1; i < ITEMS; i++) hash_set(&h, num(f, "field-", i), num(v, "value-", i));
    assert_string_equal(hash_encoding(h), "hashtable");
    size_t all = hash_usage(h, SIZE_MAX);
    assert_true(all >= hashmap_memory(hash_map(h)));
    assert_close(hash_usage(h, 5), all);
    hash_free(h);
}

static void test_set(void **state) {
    (void)state;
    char m[32];
    struct set_obj *s = set_obj_new(SLICE_LIT("1"), 1);
    set_obj_add(&s, SLICE_LIT("1"));
    assert_string_equal(set_obj_encoding(s), "intset");
    assert_true(set_obj_usage(s, 5) >= set_obj_memory(s));
    for (int i = 0; i < ITEMS; i++) set_obj_add(&s, num(m, "member-", i));
    assert_string_equal(set_obj_encoding(s), "hashtable");
    size_t all = set_obj_usage(s, SIZE_MAX);
    assert_true(all >= set_obj_memory(s));
    assert_close(set_obj_usage(s, 5), all);
    set_obj_free(s);
}

static void test_zset(void **state) {
    (void)state;
    char m[32];
    struct zset_obj *z = zset_new();
    int out_flags;
    zset_add(&z, SLICE_LIT("a"), 1, 0, &out_flags, NULL);
    assert_int_equal(zset_usage(z, 5), malloc_usable_size(zset_lp(z)));
    for (int i = 0; i < ITEMS; i++) zset_add(&z, num(m, "member-", i), i, 0, &out_flags, NULL);
    assert_string_equal(zset_encoding(z), "skiplist");
    size_t all = zset_usage(z, SIZE_MAX);
    assert_true(all >= zsl_memory(zset_zsl(z)));
    /* node heights vary, so a sample of 5 may be off: only the order of magnitude */
    size_t few = zset_usage(z, 5);
    assert_true(few > all / 2 && few < all * 2);
    zset_free(z);
}

/* ---- MEMORY USAGE ---- */

static long long usage_of(const char *key, const char *samples) {
    if (samples) RUN(cmd_memory, "memory", "usage", key, "SAMPLES", samples);
    else RUN(cmd_memory, "memory", "usage", key);
    return reply_ll();
}

static void test_memory_usage(void **state) {
    (void)state;
    CHECK("$-1\r\n", cmd_memory, "memory", "usage", "nosuchkey");
    RUN(cmd_set, "set", "s", "value");
    struct kv_entry *e = db_lookup(&c, SLICE_LIT("s"), LOOKUP_NONE);
    long long s = usage_of("s", NULL);
    assert_true(s >= (long long)entry_alloc_size(e));
    /* a small hash lives in its entry: the entry is the whole cost */
    struct hash_obj *h = hash_new();
    hash_set(&h, SLICE_LIT("f"), SLICE_LIT("v"));
    db_insert(&c, entry_new_obj(SLICE_LIT("small"), OBJ_HASH, h, NO_EXPIRE));
    e = db_lookup(&c, SLICE_LIT("small"), LOOKUP_NONE);
    assert_true(e->meta & ENTRY_INLINE);
    long long small = usage_of("small", NULL);
    assert_true(small >= (long long)entry_alloc_size(e) && small < 64);
    /* a big one costs its entry and its hashtable */
    h = hash_new();
    char f[32], v[32];
    for (int i = 0; i < ITEMS; i++) hash_set(&h, num(f, "field-", i), num(v, "value-", i));
    size_t map_bytes = hashmap_memory(hash_map(h));
    db_insert(&c, entry_new_obj(SLICE_LIT("big"), OBJ_HASH, h, NO_EXPIRE));
    long long big = usage_of("big", NULL);
    assert_true(big > (long long)map_bytes);
    long long big_all = usage_of("big", "0");
    assert_true(big_all > (long long)map_bytes);
    assert_close((size_t)big, (size_t)big_all);
    assert_int_equal(usage_of("big", "1000000"), big_all);
}

static void test_memory_usage_errors(void **state) {
    (void)state;
    RUN(cmd_set, "set", "s", "value");
    CHECK("-ERR syntax error\r\n", cmd_memory, "memory", "usage", "s", "SAMPLES");
    CHECK("-ERR syntax error\r\n", cmd_memory, "memory", "usage", "s", "SAMPLES", "-1");
    CHECK("-ERR syntax error\r\n", cmd_memory, "memory", "usage", "s", "FOO", "1");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_memory, "memory", "usage", "s", "SAMPLES", "x");
    /* options are checked before the key, as Redis does */
    CHECK("-ERR syntax error\r\n", cmd_memory, "memory", "usage", "nosuchkey", "SAMPLES");
    CHECK("$-1\r\n", cmd_memory, "memory", "usage", "nosuchkey", "samples", "3");
}

static int setup(void **state) {
    config_set_defaults();
    return fx_setup(state);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list, setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hash, setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_set, setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_zset, setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_memory_usage, setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_memory_usage_errors, setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
