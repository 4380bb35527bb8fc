/*
 * Generic keyspace command handlers (src/cmd/cmd_keys.c), called directly
 * with a hand-built cmd_ctx; replies compared byte for byte with Redis 7.0's.
 * SCAN and KEYS also run over two shards, as CMD_ALLSHARDS commands do.
 */
#include "cmd_fixture.h"
#include "ringkv/arena.h"

static void test_del_exists_touch_type(void **state) {
    (void)state;
    RUN(cmd_mset, "mset", "a", "1", "b", "2");
    add_toy_list("l", 1);
    CHECK(":4\r\n", cmd_exists, "exists", "a", "b", "a", "l", "x");
    CHECK(":2\r\n", cmd_touch, "touch", "a", "b", "x");
    CHECK("+string\r\n", cmd_type, "type", "a");
    CHECK("+list\r\n", cmd_type, "type", "l");
    CHECK("+none\r\n", cmd_type, "type", "x");
    CHECK(":2\r\n", cmd_del, "del", "a", "x", "a", "l");
    CHECK(":1\r\n", cmd_unlink, "unlink", "b");
    CHECK(":0\r\n", cmd_dbsize, "dbsize");
}

static void test_expire_family(void **state) {
    (void)state;
    RUN(cmd_set, "set", "k", "v");
    CHECK(":1\r\n", cmd_expire, "expire", "k", "100");
    CHECK(":0\r\n", cmd_expire, "expire", "k", "100", "NX");
    CHECK(":1\r\n", cmd_expire, "expire", "k", "200", "XX");
    CHECK(":0\r\n", cmd_expire, "expire", "k", "50", "GT");
    CHECK(":1\r\n", cmd_expire, "expire", "k", "50", "LT");
    CHECK(":50\r\n", cmd_ttl, "ttl", "k");
    CHECK(":50000\r\n", cmd_pttl, "pttl", "k");
    CHECK(":1700000050\r\n", cmd_expiretime, "expiretime", "k");
    CHECK(":1700000050000\r\n", cmd_pexpiretime, "pexpiretime", "k");
    CHECK(":1\r\n", cmd_pexpire, "pexpire", "k", "1500");
    CHECK(":2\r\n", cmd_ttl, "ttl", "k");
    CHECK(":1\r\n", cmd_expireat, "expireat", "k", "1700000100");
    CHECK(":100000\r\n", cmd_pttl, "pttl", "k");
    CHECK(":1\r\n", cmd_pexpireat, "pexpireat", "k", "1700000000500");
    CHECK(":500\r\n", cmd_pttl, "pttl", "k");
    assert_int_equal(fx_shards[0].dbs[0].expires, 1);

    CHECK("-ERR Unsupported option AB\r\n", cmd_expire, "expire", "k", "100", "AB");
    CHECK("-ERR Unsupported option ab\r\n", cmd_expire, "expire", "k", "100", "xx", "ab");
    CHECK("-ERR NX and XX, GT or LT options at the same time are not compatible\r\n",
          cmd_expire, "expire", "k", "100", "nx", "xx");
    CHECK("-ERR NX and XX, GT or LT options at the same time are not compatible\r\n",
          cmd_expire, "expire", "k", "100", "NX", "GT");
    CHECK("-ERR GT and LT options at the same time are not compatible\r\n",
          cmd_expire, "expire", "k", "100", "gt", "lt");
    CHECK("-ERR invalid expire time in 'expire' command\r\n", cmd_expire, "expire", "k", "9223370399119966");
    CHECK("-ERR invalid expire time in 'expire' command\r\n", cmd_expire, "expire", "k", "9223372036854776");
    CHECK("-ERR invalid expire time in 'expire' command\r\n", cmd_expire, "expire", "k", "-9223372036854776");
    CHECK("-ERR invalid expire time in 'pexpire' command\r\n",
          cmd_pexpire, "pexpire", "k", "9223372036854770000");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_expire, "expire", "k", "");

    CHECK(":1\r\n", cmd_persist, "persist", "k");
    CHECK(":0\r\n", cmd_persist, "persist", "k");
    CHECK(":-1\r\n", cmd_ttl, "ttl", "k");
    CHECK(":-1\r\n", cmd_expiretime, "expiretime", "k");
    assert_int_equal(fx_shards[0].dbs[0].expires, 0);
    CHECK(":0\r\n", cmd_expire, "expire", "k", "10", "XX");
    CHECK(":0\r\n", cmd_expire, "expire", "k", "10", "GT");   /* no TTL is infinite */
    CHECK(":1\r\n", cmd_expire, "expire", "k", "10", "LT");
    CHECK(":1\r\n", cmd_pexpireat, "pexpireat", "k", "9223372036854770000");
    CHECK(":9223372036854770\r\n", cmd_expiretime, "expiretime", "k");

    CHECK(":-2\r\n", cmd_ttl, "ttl", "nokey");
    CHECK(":-2\r\n", cmd_pexpiretime, "pexpiretime", "nokey");
    CHECK(":0\r\n", cmd_expire, "expire", "nokey", "10");
    CHECK(":0\r\n", cmd_persist, "persist", "nokey");
    CHECK(":1\r\n", cmd_expire, "expire", "k", "-1");   /* the past deletes */
    CHECK(":0\r\n", cmd_exists, "exists", "k");
    assert_int_equal(fx_shards[0].dbs[0].expires, 0);

    /* Lazy expiry as the clock moves */
    RUN(cmd_set, "set", "k", "v", "PX", "10");
    c.now_ms += 10;
    CHECK(":0\r\n", cmd_pttl, "pttl", "k");
    c.now_ms += 1;
    CHECK(":-2\r\n", cmd_pttl, "pttl", "k");
    assert_int_equal(fx_shards[0].stats.expired_keys, 1);
}

static void test_object(void **state) {
    (void)state;
    RUN(cmd_set, "set", "i", "12345");
    RUN(cmd_set, "set", "neg", "-9223372036854775808");
    RUN(cmd_set, "set", "lz", "0123");
    RUN(cmd_set, "set", "e", "hello");
    RUN(cmd_set, "set", "e44", "12345678901234567890123456789012345678901234");
    RUN(cmd_set, "set", "r45", "123456789012345678901234567890123456789012345");
    add_toy_list("l", 3);
    CHECK("$3\r\nint\r\n", cmd_object, "object", "encoding", "i");
    CHECK("$3\r\nint\r\n", cmd_object, "object", "ENCODING", "neg");
    CHECK("$6\r\nembstr\r\n", cmd_object, "object", "encoding", "lz");
    CHECK("$6\r\nembstr\r\n", cmd_object, "object", "encoding", "e");
    CHECK("$6\r\nembstr\r\n", cmd_object, "object", "encoding", "e44");
    CHECK("$3\r\nraw\r\n", cmd_object, "object", "encoding", "r45");
    CHECK("$8\r\nlistpack\r\n", cmd_object, "object", "encoding", "l");
    CHECK("$-1\r\n", cmd_object, "object", "encoding", "nokey");
    CHECK(":1\r\n", cmd_object, "object", "refcount", "e");
    CHECK("$-1\r\n", cmd_object, "object", "refcount", "nokey");
    CHECK(":0\r\n", cmd_object, "object", "idletime", "e");
    CHECK("-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
          "that when switching between policies at runtime LRU and LFU data will take some time "
          "to adjust.\r\n", cmd_object, "object", "freq", "e");
    CHECK("-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n", cmd_object, "object", "foo");
    CHECK("-ERR wrong number of arguments for 'object|encoding' command\r\n",
          cmd_object, "object", "encoding");
    CHECK("-ERR wrong number of arguments for 'object|help' command\r\n",
          cmd_object, "object", "help", "x");
    CHECK("*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
          "+ENCODING <key>\r\n"
          "+    Return the kind of internal representation used in order to store the value\r\n"
          "+    associated with a <key>.\r\n"
          "+FREQ <key>\r\n"
          "+    Return the access frequency index of the <key>. The returned integer is\r\n"
          "+    proportional to the logarithm of the recent access frequency of the key.\r\n"
          "+IDLETIME <key>\r\n"
          "+    Return the idle time of the <key>, that is the approximated number of\r\n"
          "+    seconds elapsed since the last access to the key.\r\n"
          "+REFCOUNT <key>\r\n"
          "+    Return the number of references of the value associated with the specified\r\n"
          "+    <key>.\r\n"
          "+HELP\r\n"
          "+    Prints this help.\r\n", cmd_object, "object", "HELP");
}

static void test_rename(void **state) {
    (void)state;
    RUN(cmd_set, "set", "a", "hello", "EX", "100");
    CHECK("+OK\r\n", cmd_rename, "rename", "a", "b");
    CHECK("$5\r\nhello\r\n", cmd_get, "get", "b");
    CHECK(":100\r\n", cmd_ttl, "ttl", "b");
    CHECK(":0\r\n", cmd_exists, "exists", "a");
    assert_int_equal(fx_shards[0].dbs[0].expires, 1);
    CHECK("-ERR no such key\r\n", cmd_rename, "rename", "nokey", "x");
    CHECK("-ERR no such key\r\n", cmd_renamenx, "renamenx", "nokey", "x");
    CHECK("+OK\r\n", cmd_rename, "rename", "b", "b");
    CHECK(":0\r\n", cmd_renamenx, "renamenx", "b", "b");
    RUN(cmd_set, "set", "c", "1");
    CHECK(":0\r\n", cmd_renamenx, "renamenx", "b", "c");
    CHECK(":1\r\n", cmd_renamenx, "renamenx", "b", "d");
    CHECK("+OK\r\n", cmd_rename, "rename", "d", "c");   /* overwrites */
    CHECK("$5\r\nhello\r\n", cmd_get, "get", "c");
    CHECK(":1\r\n", cmd_dbsize, "dbsize");

    add_toy_list("l", 42);
    void *obj = entry_obj(db_lookup(&c, SLICE_LIT("l"), LOOKUP_NONE));
    CHECK("+OK\r\n", cmd_rename, "rename", "l", "m");   /* the object moves */
    assert_ptr_equal(entry_obj(db_lookup(&c, SLICE_LIT("m"), LOOKUP_NONE)), obj);
    CHECK("+OK\r\n", cmd_rename, "rename", "c", "m");   /* and is freed when overwritten */
    CHECK("+string\r\n", cmd_type, "type", "m");
}

static void test_move(void **state) {
    (void)state;
    RUN(cmd_set, "set", "k", "v", "EX", "10");
    CHECK("-ERR source and destination objects are the same\r\n", cmd_move, "move", "k", "0");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_move, "move", "k", "abc");
    CHECK("-ERR value is out of range, value must between -2147483648 and 2147483647\r\n",
          cmd_move, "move", "k", "99999999999");
    CHECK("-ERR DB index is out of range\r\n", cmd_move, "move", "k", "16");
    CHECK("-ERR DB index is out of range\r\n", cmd_move, "move", "k", "-1");
    CHECK(":0\r\n", cmd_move, "move", "nokey", "1");
    CHECK(":1\r\n", cmd_move, "move", "k", "1");
    CHECK(":0\r\n", cmd_exists, "exists", "k");
    assert_int_equal(fx_shards[0].dbs[0].expires, 0);
    assert_int_equal(fx_shards[0].dbs[1].expires, 1);
    c.db = 1;
    CHECK("$1\r\nv\r\n", cmd_get, "get", "k");
    CHECK(":10\r\n", cmd_ttl, "ttl", "k");
    c.db = 0;
    RUN(cmd_set, "set", "k", "w");
    CHECK(":0\r\n", cmd_move, "move", "k", "1");   /* taken there */
}

static void test_copy(void **state) {
    (void)state;
    RUN(cmd_set, "set", "a", "value", "PX", "5000");
    CHECK(":1\r\n", cmd_copy, "copy", "a", "b");
    CHECK("$5\r\nvalue\r\n", cmd_get, "get", "b");
    CHECK(":5000\r\n", cmd_pttl, "pttl", "b");
    CHECK(":0\r\n", cmd_copy, "copy", "a", "b");
    RUN(cmd_set, "set", "a", "other");
    CHECK(":1\r\n", cmd_copy, "copy", "a", "b", "REPLACE");
    CHECK("$5\r\nother\r\n", cmd_get, "get", "b");
    CHECK(":-1\r\n", cmd_pttl, "pttl", "b");
    assert_int_equal(fx_shards[0].dbs[0].expires, 0);
    CHECK("-ERR source and destination objects are the same\r\n", cmd_copy, "copy", "a", "a");
    CHECK("-ERR syntax error\r\n", cmd_copy, "copy", "a", "x", "foo");
    CHECK("-ERR syntax error\r\n", cmd_copy, "copy", "a", "x", "db");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_copy, "copy", "a", "x", "db", "abc");
    CHECK("-ERR DB index is out of range\r\n", cmd_copy, "copy", "a", "x", "DB", "16");
    CHECK("-ERR syntax error\r\n", cmd_copy, "copy", "a", "x", "DB", "10", "x", "db", "16");
    CHECK(":0\r\n", cmd_copy, "copy", "nokey", "x");
    CHECK(":1\r\n", cmd_copy, "copy", "a", "a", "DB", "3");
    c.db = 3;
    CHECK("$5\r\nother\r\n", cmd_get, "get", "a");
    c.db = 0;

    add_toy_list("l", 9);
    CHECK(":1\r\n", cmd_copy, "copy", "l", "l2");
    const int *o1 = entry_obj(db_lookup(&c, SLICE_LIT("l"), LOOKUP_NONE));
    const int *o2 = entry_obj(db_lookup(&c, SLICE_LIT("l2"), LOOKUP_NONE));
    assert_ptr_not_equal(o1, o2);   /* duplicated, not shared */
    assert_int_equal(*o2, 9);
}

static void test_swapdb_flush(void **state) {
    (void)state;
    RUN(cmd_mset, "mset", "a", "1", "b", "2");
    RUN(cmd_set, "set", "t", "x", "EX", "5");
    CHECK("-ERR invalid first DB index\r\n", cmd_swapdb, "swapdb", "abc", "0");
    CHECK("-ERR invalid second DB index\r\n", cmd_swapdb, "swapdb", "0", "99999999999");
    CHECK("-ERR DB index is out of range\r\n", cmd_swapdb, "swapdb", "0", "16");
    CHECK("+OK\r\n", cmd_swapdb, "swapdb", "0", "2");
    CHECK(":0\r\n", cmd_dbsize, "dbsize");
    assert_int_equal(fx_shards[0].dbs[2].expires, 1);
    c.db = 2;
    CHECK(":3\r\n", cmd_dbsize, "dbsize");
    CHECK("-ERR syntax error\r\n", cmd_flushdb, "flushdb", "foo");
    CHECK("+OK\r\n", cmd_flushdb, "flushdb", "ASYNC");
    CHECK(":0\r\n", cmd_dbsize, "dbsize");
    assert_int_equal(fx_shards[0].dbs[2].expires, 0);
    RUN(cmd_set, "set", "x", "1");
    c.db = 5;
    RUN(cmd_set, "set", "y", "1");
    CHECK("-ERR syntax error\r\n", cmd_flushall, "flushall", "sync", "x");
    CHECK("+OK\r\n", cmd_flushall, "flushall");
    for (int d = 0; d < 16; d++)
        assert_int_equal(table_size(&fx_shards[0].dbs[d].table), 0);
}

/* A shard destroyed while a FLUSHDB/FLUSHALL ASYNC table still waits for
 * the loop to free it: the table goes before the arena its entries live
 * in (they were read after the arena was unmapped; found by fuzz_command).
 * The teardown (shard_destroy) is the test. */
static void test_destroy_with_async_flush_pending(void **state) {
    (void)state;
    rk_arena = &fx_shards[0].arena;   /* entries in the arena, as on a worker */
    char key[16];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "key:%d", i);
        RUN(cmd_set, "set", key, "value");
    }
    add_toy_list("l", 1);
    CHECK("+OK\r\n", cmd_flushdb, "flushdb", "async");
    assert_non_null(fx_shards[0].dead_tables);
    RUN(cmd_set, "set", "after", "1");
    c.db = 1;
    RUN(cmd_set, "set", "x", "1");
    CHECK("+OK\r\n", cmd_flushall, "flushall", "async");
    assert_non_null(fx_shards[0].dead_tables);
    rk_arena = NULL;   /* freeing finds each entry's arena itself */
}

/* Iterate SCAN to the end, counting how often each "key:N" is seen. */
static void scan_all(int nkeys, const char *count, int *seen) {
    char cursor[32] = "0";
    int calls = 0;
    memset(seen, 0, sizeof(int) * (size_t)nkeys);
    do {
        RUN(cmd_scan, "scan", cursor, "COUNT", count, "MATCH", "key:*");
        const char *p = out.buf;
        assert_memory_equal(p, "*2\r\n$", 5);
        size_t clen = strtoul(p + 5, (char **)&p, 10);
        p += 2;
        memcpy(cursor, p, clen);
        cursor[clen] = '\0';
        p += clen + 2;
        assert_true(*p == '*');
        long n = strtol(p + 1, (char **)&p, 10);
        p += 2;
        for (long i = 0; i < n; i++) {
            size_t len = strtoul(p + 1, (char **)&p, 10);
            p += 2;
            assert_memory_equal(p, "key:", 4);
            seen[atoi(p + 4)]++;
            p += len + 2;
        }
        assert_ptr_equal(p, out.buf + out.len);
        assert_true(++calls < 100000);
    } while (strcmp(cursor, "0") != 0);
}

static void scan_test(int nkeys) {
    char k[32];
    int *seen = calloc((size_t)nkeys, sizeof *seen);
    c.multi = true;   /* to place keys on their shards; SCAN itself ignores it */
    for (int i = 0; i < nkeys; i++) {
        snprintf(k, sizeof k, "key:%d", i);
        RUN(cmd_set, "set", k, "v");
    }
    RUN(cmd_set, "set", "other", "v");
    RUN(cmd_set, "set", "key:expired", "v", "PXAT", "1");
    c.multi = false;

    scan_all(nkeys, "10", seen);
    for (int i = 0; i < nkeys; i++)
        assert_true(seen[i] >= 1);
    scan_all(nkeys, "1000000", seen);
    for (int i = 0; i < nkeys; i++)
        assert_int_equal(seen[i], 1);
    free(seen);

    CHECK("*2\r\n$1\r\n0\r\n*0\r\n", cmd_scan, "scan", "0", "COUNT", "1000000", "TYPE", "list");
    RUN(cmd_keys, "keys", "*");
    char hdr[16];
    snprintf(hdr, sizeof hdr, "*%d\r\n", nkeys + 1);
    assert_memory_equal(out.buf, hdr, strlen(hdr));
    CHECK("*1\r\n$5\r\nkey:7\r\n", cmd_keys, "keys", "key:7");
    CHECK("*1\r\n$5\r\nother\r\n", cmd_keys, "keys", "o*");
}

static void test_scan_keys(void **state) { (void)state; scan_test(5000); }
static void test_scan_keys_two_shards(void **state) { (void)state; scan_test(5000); }

static void test_scan_errors(void **state) {
    (void)state;
    CHECK("*2\r\n$1\r\n0\r\n*0\r\n", cmd_scan, "scan", "0");
    CHECK("-ERR syntax error\r\n", cmd_scan, "scan", "0", "count", "0");
    CHECK("-ERR syntax error\r\n", cmd_scan, "scan", "0", "match");
    CHECK("-ERR syntax error\r\n", cmd_scan, "scan", "0", "bogus", "1");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_scan, "scan", "0", "count", "abc");
    CHECK("-ERR invalid cursor\r\n", cmd_scan, "scan", "abc");
    CHECK("-ERR invalid cursor\r\n", cmd_scan, "scan", " 1");
    CHECK("-ERR invalid cursor\r\n", cmd_scan, "scan", "18446744073709551616");
    CHECK("*2\r\n$1\r\n0\r\n*0\r\n", cmd_scan, "scan", "18446744073709551615");
}

static void test_randomkey(void **state) {
    (void)state;
    c.multi = true;   /* keys on their own shards */
    CHECK("$-1\r\n", cmd_randomkey, "randomkey");
    RUN(cmd_set, "set", "only", "v");
    CHECK("$4\r\nonly\r\n", cmd_randomkey, "randomkey");
    RUN(cmd_set, "set", "only", "v", "PXAT", "1");
    RUN(cmd_set, "set", "gone", "v", "PXAT", "1");
    CHECK("$-1\r\n", cmd_randomkey, "randomkey");   /* expired keys are deleted on the way */
    assert_int_equal(db_size_all(&c, 0), 0);
    assert_int_equal(fx_shards[0].stats.expired_keys + fx_shards[1].stats.expired_keys, 2);
    c.multi = false;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_del_exists_touch_type, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_expire_family, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_object, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_rename, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_move, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_destroy_with_async_flush_pending, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_copy, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_swapdb_flush, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_scan_keys, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_scan_keys_two_shards, fx_setup2, fx_teardown),
        cmocka_unit_test_setup_teardown(test_scan_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_randomkey, fx_setup2, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
