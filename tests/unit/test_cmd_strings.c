/*
 * String command handlers (src/cmd/cmd_strings.c), called directly with a
 * hand-built cmd_ctx; every reply is compared byte for byte with what Redis
 * 7.0 sends for the same command sequence.
 */
#include "cmd_fixture.h"

static void test_set_get(void **state) {
    (void)state;
    CHECK("+OK\r\n", cmd_set, "set", "foo", "bar");
    CHECK("$3\r\nbar\r\n", cmd_get, "get", "foo");
    CHECK("$-1\r\n", cmd_get, "get", "nokey");
    CHECK("+OK\r\n", cmd_set, "set", "foo", "a much longer value than before");
    CHECK("$31\r\na much longer value than before\r\n", cmd_get, "get", "foo");
    CHECK("+OK\r\n", cmd_set, "set", "empty", "");
    CHECK("$0\r\n\r\n", cmd_get, "get", "empty");
    assert_int_equal(fx_shards[0].stats.keyspace_hits, 3);
    assert_int_equal(fx_shards[0].stats.keyspace_misses, 1);
}

static void test_set_nx_xx_get(void **state) {
    (void)state;
    CHECK("$-1\r\n", cmd_set, "set", "foo", "x", "XX");
    CHECK("$-1\r\n", cmd_get, "get", "foo");
    CHECK("+OK\r\n", cmd_set, "set", "foo", "bar", "nx");
    CHECK("$-1\r\n", cmd_set, "set", "foo", "baz", "NX");
    CHECK("+OK\r\n", cmd_set, "set", "foo", "baz", "XX");
    CHECK("-ERR syntax error\r\n", cmd_set, "set", "foo", "x", "NX", "XX");
    CHECK("-ERR syntax error\r\n", cmd_set, "set", "foo", "x", "bogus");
    CHECK("$3\r\nbaz\r\n", cmd_set, "set", "foo", "qux", "GET");
    CHECK("$3\r\nqux\r\n", cmd_set, "set", "foo", "new", "NX", "GET");   /* not set */
    CHECK("$3\r\nqux\r\n", cmd_get, "get", "foo");
    CHECK("$-1\r\n", cmd_set, "set", "other", "v", "GET");
    CHECK("$1\r\nv\r\n", cmd_get, "get", "other");
}

static void test_set_expire_options(void **state) {
    (void)state;
    CHECK("+OK\r\n", cmd_set, "set", "k", "v", "EX", "100");
    CHECK(":100000\r\n", cmd_pttl, "pttl", "k");
    CHECK("+OK\r\n", cmd_set, "set", "k", "v", "px", "1500");
    CHECK(":2\r\n", cmd_ttl, "ttl", "k");   /* rounded */
    CHECK("+OK\r\n", cmd_set, "set", "k", "v", "EX", "10", "EX", "20");
    CHECK(":20\r\n", cmd_ttl, "ttl", "k");
    CHECK("+OK\r\n", cmd_set, "set", "k", "w", "KEEPTTL");
    CHECK(":20\r\n", cmd_ttl, "ttl", "k");
    CHECK("+OK\r\n", cmd_set, "set", "k", "w");
    CHECK(":-1\r\n", cmd_ttl, "ttl", "k");
    CHECK("+OK\r\n", cmd_set, "set", "k", "v", "PXAT", "1700000005000");
    CHECK(":5000\r\n", cmd_pttl, "pttl", "k");
    CHECK("+OK\r\n", cmd_set, "set", "k", "v", "EXAT", "1700000010");
    CHECK(":1700000010000\r\n", cmd_pexpiretime, "pexpiretime", "k");
    CHECK("+OK\r\n", cmd_set, "set", "k", "v", "EXAT", "1600000000");   /* in the past */
    CHECK("$-1\r\n", cmd_get, "get", "k");
    assert_int_equal(fx_shards[0].dbs[0].expires, 0);

    CHECK("-ERR invalid expire time in 'set' command\r\n", cmd_set, "set", "k", "v", "EX", "0");
    CHECK("-ERR invalid expire time in 'set' command\r\n", cmd_set, "set", "k", "v", "PX", "-5");
    CHECK("-ERR invalid expire time in 'set' command\r\n",
          cmd_set, "set", "k", "v", "EX", "10000000000000000");
    CHECK("-ERR invalid expire time in 'set' command\r\n",
          cmd_set, "set", "k", "v", "PX", "9223372036854775000");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_set, "set", "k", "v", "EX", "1x");
    CHECK("-ERR syntax error\r\n", cmd_set, "set", "k", "v", "EX");
    CHECK("-ERR syntax error\r\n", cmd_set, "set", "k", "v", "EX", "10", "PX", "10");
    CHECK("-ERR syntax error\r\n", cmd_set, "set", "k", "v", "KEEPTTL", "EX", "10");
    CHECK("-ERR syntax error\r\n", cmd_set, "set", "k", "v", "PERSIST");
    CHECK("$-1\r\n", cmd_get, "get", "k");
}

static void test_setnx_setex_psetex(void **state) {
    (void)state;
    CHECK(":1\r\n", cmd_setnx, "setnx", "k", "a");
    CHECK(":0\r\n", cmd_setnx, "setnx", "k", "b");
    CHECK("$1\r\na\r\n", cmd_get, "get", "k");
    CHECK("+OK\r\n", cmd_setex, "setex", "k", "10", "b");
    CHECK(":10\r\n", cmd_ttl, "ttl", "k");
    CHECK("$1\r\nb\r\n", cmd_get, "get", "k");
    CHECK("+OK\r\n", cmd_psetex, "psetex", "k", "2500", "c");
    CHECK(":2500\r\n", cmd_pttl, "pttl", "k");
    CHECK("-ERR invalid expire time in 'setex' command\r\n", cmd_setex, "setex", "z", "-10", "v");
    CHECK("-ERR invalid expire time in 'psetex' command\r\n", cmd_psetex, "psetex", "z", "0", "v");
    CHECK(":0\r\n", cmd_exists, "exists", "z");
}

static void test_getset_getdel_getex(void **state) {
    (void)state;
    CHECK("$-1\r\n", cmd_getset, "getset", "k", "one");
    CHECK("+OK\r\n", cmd_set, "set", "k", "two", "EX", "100");
    CHECK("$3\r\ntwo\r\n", cmd_getset, "getset", "k", "three");
    CHECK(":-1\r\n", cmd_ttl, "ttl", "k");   /* GETSET drops the TTL */

    CHECK("$5\r\nthree\r\n", cmd_getdel, "getdel", "k");
    CHECK("$-1\r\n", cmd_getdel, "getdel", "k");
    CHECK(":0\r\n", cmd_exists, "exists", "k");

    CHECK("+OK\r\n", cmd_set, "set", "k", "v");
    CHECK("$1\r\nv\r\n", cmd_getex, "getex", "k");
    CHECK("$1\r\nv\r\n", cmd_getex, "getex", "k", "EX", "100");
    CHECK(":100\r\n", cmd_ttl, "ttl", "k");
    CHECK("$1\r\nv\r\n", cmd_getex, "getex", "k", "PERSIST");
    CHECK(":-1\r\n", cmd_ttl, "ttl", "k");
    CHECK("$1\r\nv\r\n", cmd_getex, "getex", "k", "PX", "1234");
    CHECK(":1234\r\n", cmd_pttl, "pttl", "k");
    CHECK("$1\r\nv\r\n", cmd_getex, "getex", "k", "PXAT", "1000");   /* past: deleted */
    CHECK(":0\r\n", cmd_exists, "exists", "k");
    assert_int_equal(fx_shards[0].dbs[0].expires, 0);

    CHECK("$-1\r\n", cmd_getex, "getex", "nokey", "EX", "0");   /* key before value */
    CHECK("+OK\r\n", cmd_set, "set", "k", "v");
    CHECK("-ERR invalid expire time in 'getex' command\r\n", cmd_getex, "getex", "k", "EX", "0");
    CHECK("-ERR invalid expire time in 'getex' command\r\n",
          cmd_getex, "getex", "k", "EX", "10000000000000000");
    CHECK("-ERR syntax error\r\n", cmd_getex, "getex", "k", "non-existent-option");
    CHECK("-ERR syntax error\r\n", cmd_getex, "getex", "k", "PERSIST", "EX", "10");
    CHECK("-ERR syntax error\r\n", cmd_getex, "getex", "k", "NX");
    CHECK("-ERR syntax error\r\n", cmd_getex, "getex", "k", "KEEPTTL");
}

static void test_wrongtype(void **state) {
    (void)state;
    add_toy_list("list", 7);
    const char *wt = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    size_t n = strlen(wt);
#define WT(fn, ...) do { RUN(fn, __VA_ARGS__); check_reply(wt, n, __FILE__, __LINE__); } while (0)
    WT(cmd_get, "get", "list");
    WT(cmd_set, "set", "list", "v", "GET");
    WT(cmd_getset, "getset", "list", "v");
    WT(cmd_getdel, "getdel", "list");
    WT(cmd_getex, "getex", "list", "EX", "10");
    WT(cmd_append, "append", "list", "x");
    WT(cmd_strlen, "strlen", "list");
    WT(cmd_getrange, "getrange", "list", "0", "1");
    WT(cmd_setrange, "setrange", "list", "0", "x");
    WT(cmd_incr, "incr", "list");
    WT(cmd_decrby, "decrby", "list", "2");
    WT(cmd_incrbyfloat, "incrbyfloat", "list", "1.0");
#undef WT
    assert_int_equal(entry_type(db_lookup(&c, SLICE_LIT("list"), LOOKUP_NONE)), OBJ_LIST);
    CHECK("*2\r\n$-1\r\n$-1\r\n", cmd_mget, "mget", "list", "nokey");
    CHECK("+OK\r\n", cmd_set, "set", "list", "now a string");   /* SET overwrites any type */
    CHECK("$12\r\nnow a string\r\n", cmd_get, "get", "list");
}

static void test_mget_mset_msetnx(void **state) {
    (void)state;
    CHECK("+OK\r\n", cmd_mset, "mset", "a", "1", "b", "2");
    CHECK("*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n", cmd_mget, "mget", "a", "x", "b");
    CHECK("-ERR wrong number of arguments for 'mset' command\r\n", cmd_mset, "mset", "a", "1", "b");
    CHECK("-ERR wrong number of arguments for 'msetnx' command\r\n", cmd_msetnx, "msetnx", "a", "1", "b");
    CHECK(":0\r\n", cmd_msetnx, "msetnx", "c", "3", "a", "9");
    CHECK(":0\r\n", cmd_exists, "exists", "c");
    CHECK(":1\r\n", cmd_msetnx, "msetnx", "c", "3", "d", "4", "c", "5");
    CHECK("*2\r\n$1\r\n5\r\n$1\r\n4\r\n", cmd_mget, "mget", "c", "d");
    CHECK("+OK\r\n", cmd_set, "set", "a", "x", "EX", "10");
    CHECK("+OK\r\n", cmd_mset, "mset", "a", "y");
    CHECK(":-1\r\n", cmd_ttl, "ttl", "a");
}

static void test_append_strlen(void **state) {
    (void)state;
    CHECK(":3\r\n", cmd_append, "append", "k", "foo");
    CHECK(":6\r\n", cmd_append, "append", "k", "bar");
    CHECK("$6\r\nfoobar\r\n", cmd_get, "get", "k");
    CHECK(":6\r\n", cmd_strlen, "strlen", "k");
    CHECK(":0\r\n", cmd_strlen, "strlen", "nokey");
    CHECK("+OK\r\n", cmd_set, "set", "t", "x", "EX", "50");
    for (int i = 0; i < 300; i++)   /* past the short header, and reallocating */
        RUN(cmd_append, "append", "t", "0123456789");
    CHECK(":3001\r\n", cmd_strlen, "strlen", "t");
    CHECK(":50\r\n", cmd_ttl, "ttl", "t");   /* TTL survives growth */
    CHECK("$5\r\n56789\r\n", cmd_getrange, "getrange", "t", "-5", "-1");
    CHECK(":3001\r\n", cmd_append, "append", "t", "");
}

static void test_getrange(void **state) {
    (void)state;
    CHECK("+OK\r\n", cmd_set, "set", "k", "Hello World");
    CHECK("$4\r\nHell\r\n", cmd_getrange, "getrange", "k", "0", "3");
    CHECK("$11\r\nHello World\r\n", cmd_getrange, "getrange", "k", "0", "-1");
    CHECK("$3\r\nrld\r\n", cmd_getrange, "getrange", "k", "-3", "-1");
    CHECK("$1\r\nd\r\n", cmd_getrange, "getrange", "k", "10", "100");
    CHECK("$0\r\n\r\n", cmd_getrange, "getrange", "k", "5", "3");
    CHECK("$0\r\n\r\n", cmd_getrange, "getrange", "k", "-1", "-5");
    CHECK("$11\r\nHello World\r\n", cmd_getrange, "getrange", "k", "-100", "100");
    CHECK("$0\r\n\r\n", cmd_getrange, "getrange", "k", "20", "30");
    CHECK("$0\r\n\r\n", cmd_getrange, "getrange", "nokey", "0", "-1");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_getrange, "getrange", "k", "a", "1");
    CHECK("+OK\r\n", cmd_set, "set", "e", "");
    CHECK("$0\r\n\r\n", cmd_getrange, "getrange", "e", "0", "-1");
}

static void test_setrange(void **state) {
    (void)state;
    CHECK(":4\r\n", cmd_setrange, "setrange", "k", "1", "foo");
    CHECK("$4\r\n\0foo\r\n", cmd_get, "get", "k");
    CHECK(":4\r\n", cmd_setrange, "setrange", "k", "0", "b");
    CHECK("$4\r\nbfoo\r\n", cmd_get, "get", "k");
    CHECK(":7\r\n", cmd_setrange, "setrange", "k", "6", "X");
    CHECK("$7\r\nbfoo\0\0X\r\n", cmd_get, "get", "k");
    CHECK(":7\r\n", cmd_setrange, "setrange", "k", "100", "");
    CHECK(":0\r\n", cmd_setrange, "setrange", "nokey", "5", "");
    CHECK(":0\r\n", cmd_exists, "exists", "nokey");
    CHECK("-ERR offset is out of range\r\n", cmd_setrange, "setrange", "k", "-1", "x");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_setrange, "setrange", "k", "x", "y");
    CHECK("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n",
          cmd_setrange, "setrange", "k", "536870911", "xx");
    CHECK("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n",
          cmd_setrange, "setrange", "k2", "9223372036854775807", "xx");
    CHECK("+OK\r\n", cmd_set, "set", "n", "1234", "PX", "900");
    CHECK(":4\r\n", cmd_setrange, "setrange", "n", "0", "2");
    CHECK("$4\r\n2234\r\n", cmd_get, "get", "n");
    CHECK(":900\r\n", cmd_pttl, "pttl", "n");
}

static void test_incr_decr(void **state) {
    (void)state;
    CHECK(":1\r\n", cmd_incr, "incr", "n");
    CHECK(":11\r\n", cmd_incrby, "incrby", "n", "10");
    CHECK(":10\r\n", cmd_decr, "decr", "n");
    CHECK(":5\r\n", cmd_decrby, "decrby", "n", "5");
    CHECK(":-5\r\n", cmd_decrby, "decrby", "n", "10");
    CHECK("$2\r\n-5\r\n", cmd_get, "get", "n");
    CHECK(":-1\r\n", cmd_decr, "decr", "fresh");

    CHECK("+OK\r\n", cmd_set, "set", "n", "17179869184");
    CHECK(":17179869185\r\n", cmd_incr, "incr", "n");
    CHECK("+OK\r\n", cmd_set, "set", "n", "9223372036854775807");
    CHECK("-ERR increment or decrement would overflow\r\n", cmd_incr, "incr", "n");
    CHECK("+OK\r\n", cmd_set, "set", "n", "-9223372036854775808");
    CHECK("-ERR increment or decrement would overflow\r\n", cmd_decr, "decr", "n");
    CHECK("-ERR decrement would overflow\r\n", cmd_decrby, "decrby", "n", "-9223372036854775808");
    CHECK("-ERR value is not an integer or out of range\r\n", cmd_incrby, "incrby", "n", "1.5");

    const char *bad[] = { "abc", " 11", "11 ", "011", "+1", "", "99999999999999999999" };
    for (size_t i = 0; i < RK_ARRAY_LEN(bad); i++) {
        RUN(cmd_set, "set", "s", bad[i]);
        CHECK("-ERR value is not an integer or out of range\r\n", cmd_incr, "incr", "s");
    }

    CHECK("+OK\r\n", cmd_set, "set", "t", "41", "EX", "60");
    CHECK(":42\r\n", cmd_incr, "incr", "t");
    CHECK(":60\r\n", cmd_ttl, "ttl", "t");   /* counters keep the TTL */
}

static void test_incrbyfloat(void **state) {
    (void)state;
    CHECK("$3\r\n1.5\r\n", cmd_incrbyfloat, "incrbyfloat", "f", "1.5");
    CHECK("+OK\r\n", cmd_set, "set", "f", "10.50");
    CHECK("$4\r\n10.6\r\n", cmd_incrbyfloat, "incrbyfloat", "f", "0.1");
    CHECK("+OK\r\n", cmd_set, "set", "f", "5.0e3");
    CHECK("$4\r\n5200\r\n", cmd_incrbyfloat, "incrbyfloat", "f", "2.0e2");
    CHECK("+OK\r\n", cmd_set, "set", "f", "17179869184");
    CHECK("$13\r\n17179869185.5\r\n", cmd_incrbyfloat, "incrbyfloat", "f", "1.5");
    CHECK("+OK\r\n", cmd_set, "set", "f", "1");
    CHECK("$4\r\n-0.1\r\n", cmd_incrbyfloat, "incrbyfloat", "f", "-1.1");
    CHECK("-ERR value is not a valid float\r\n", cmd_incrbyfloat, "incrbyfloat", "f", "abc");
    CHECK("+OK\r\n", cmd_set, "set", "f", " 11");
    CHECK("-ERR value is not a valid float\r\n", cmd_incrbyfloat, "incrbyfloat", "f", "1.0");
    CHECK("+OK\r\n", cmd_set, "set", "f", "0");
    CHECK("-ERR increment would produce NaN or Infinity\r\n",
          cmd_incrbyfloat, "incrbyfloat", "f", "+inf");
    CHECK("$1\r\n0\r\n", cmd_get, "get", "f");
}

static void test_encoding_after_edits(void **state) {
    (void)state;
    CHECK("+OK\r\n", cmd_set, "set", "k", "1234");
    CHECK("$3\r\nint\r\n", cmd_object, "object", "encoding", "k");
    CHECK(":5\r\n", cmd_append, "append", "k", "5");
    CHECK("$3\r\nraw\r\n", cmd_object, "object", "encoding", "k");   /* edited in place */
    CHECK(":12346\r\n", cmd_incr, "incr", "k");
    CHECK("$3\r\nint\r\n", cmd_object, "object", "encoding", "k");
    CHECK("$3\r\n1.5\r\n", cmd_incrbyfloat, "incrbyfloat", "f", "1.5");
    CHECK("$6\r\nembstr\r\n", cmd_object, "object", "encoding", "f");
}

/* MSET over keys of both shards, as the dispatcher runs it: c->multi set. */
static void test_multi_shard_mset(void **state) {
    (void)state;
    c.multi = true;
    RUN(cmd_mset, "mset", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6");
    CHECK("*3\r\n$1\r\n1\r\n$1\r\n4\r\n$1\r\n6\r\n", cmd_mget, "mget", "a", "d", "f");
    CHECK(":7\r\n", cmd_incrby, "incrby", "f", "1");
    size_t n0 = table_size(&fx_shards[0].dbs[0].table), n1 = table_size(&fx_shards[1].dbs[0].table);
    assert_int_equal(n0 + n1, 6);
    assert_true(n0 > 0 && n1 > 0);
    c.multi = false;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_set_get, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_set_nx_xx_get, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_set_expire_options, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_setnx_setex_psetex, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_getset_getdel_getex, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_wrongtype, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_mget_mset_msetnx, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_append_strlen, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_getrange, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_setrange, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_incr_decr, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_incrbyfloat, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_encoding_after_edits, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_multi_shard_mset, fx_setup2, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
