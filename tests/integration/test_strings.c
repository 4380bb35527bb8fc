/*
 * String commands: GET SET (EX PX EXAT PXAT NX XX KEEPTTL GET) SETNX SETEX
 * PSETEX GETSET GETDEL GETEX MGET MSET MSETNX APPEND STRLEN GETRANGE SUBSTR
 * SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void test_get_set(void **state)
{
    redisContext *c = FIX(state)->c;
    NIL(c, "GET a");
    OK(c, "SET a hello");
    BULK(c, "hello", "GET a");
    OK(c, "SET a world");
    BULK(c, "world", "GET a");
    OK(c, "SET empty %s", "");
    BULK(c, "", "GET empty");
    INT(c, 1, "EXISTS empty");
    /* binary safe keys and values */
    const char key[] = "k\0\r\n y";
    const char val[] = "\0\xff\r\n\x01 v";
    expect_ok(cmd(c, "SET %b %b", key, sizeof key - 1, val, sizeof val - 1));
    expect_bulk_len(cmd(c, "GET %b", key, sizeof key - 1), val, sizeof val - 1);
    /* a value larger than any receive buffer */
    size_t n = 3 * 1024 * 1024 + 7;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++) big[i] = (char)(i * 7);
    expect_ok(cmd(c, "SET big %b", big, n));
    expect_bulk_len(cmd(c, "GET big"), big, n);
    INT(c, (long long)n, "STRLEN big");
    free(big);
    ERR(c, "ERR wrong number of arguments for 'get' command", "GET");
    ERR(c, "ERR wrong number of arguments for 'set' command", "SET a");
}

static void test_set_options(void **state)
{
    redisContext *c = FIX(state)->c;
    long long now = (long long)time(NULL);
    OK(c, "SET a 1 EX 100");
    expect_int_range(cmd(c, "TTL a"), 99, 100);
    OK(c, "SET a 1 PX 100000");
    expect_int_range(cmd(c, "PTTL a"), 99000, 100000);
    OK(c, "SET a 1 EXAT %lld", now + 200);
    INT(c, now + 200, "EXPIRETIME a");
    OK(c, "SET a 1 PXAT %lld", now * 1000 + 300456);
    INT(c, now * 1000 + 300456, "PEXPIRETIME a");
    OK(c, "SET a 2 KEEPTTL");
    INT(c, now * 1000 + 300456, "PEXPIRETIME a");
    BULK(c, "2", "GET a");
    OK(c, "SET a 3");
    INT(c, -1, "TTL a");
    OK(c, "SET a 3 ex 100");            /* options are case-insensitive */
    expect_int_range(cmd(c, "TTL a"), 99, 100);

    /* NX / XX */
    NIL(c, "SET a 4 NX");
    BULK(c, "3", "GET a");
    expect_int_range(cmd(c, "TTL a"), 99, 100);
    OK(c, "SET a 4 XX");
    BULK(c, "4", "GET a");
    INT(c, -1, "TTL a");
    NIL(c, "SET b 1 XX");
    INT(c, 0, "EXISTS b");
    OK(c, "SET b 1 NX PX 100000");
    expect_int_range(cmd(c, "PTTL b"), 99000, 100000);

    /* GET */
    NIL(c, "SET c 1 GET");
    BULK(c, "1", "SET c 2 GET");
    BULK(c, "2", "GET c");
    BULK(c, "2", "SET c 3 NX GET");     /* not set, old value returned */
    BULK(c, "2", "GET c");
    NIL(c, "SET d 3 NX GET");
    BULK(c, "3", "GET d");
    BULK(c, "2", "SET c 4 XX GET EX 100");
    BULK(c, "4", "GET c");
    expect_int_range(cmd(c, "TTL c"), 99, 100);
    NIL(c, "SET e 1 XX GET");
    INT(c, 0, "EXISTS e");

    /* errors */
    ERR(c, "ERR syntax error", "SET a 1 EX 10 PX 10");
    ERR(c, "ERR syntax error", "SET a 1 EX 10 EXAT 10");
    ERR(c, "ERR syntax error", "SET a 1 NX XX");
    ERR(c, "ERR syntax error", "SET a 1 EX");
    ERR(c, "ERR syntax error", "SET a 1 KEEPTTL EX 10");
    ERR(c, "ERR syntax error", "SET a 1 EX 10 KEEPTTL");
    ERR(c, "ERR syntax error", "SET a 1 foo");
    ERR(c, "ERR syntax error", "SET a 1 EX 10 PERSIST");
    ERR(c, "ERR value is not an integer or out of range", "SET a 1 EX x");
    ERR(c, "ERR value is not an integer or out of range", "SET a 1 PX 1.5");
    ERR(c, "ERR invalid expire time in 'set' command", "SET a 1 EX 0");
    ERR(c, "ERR invalid expire time in 'set' command", "SET a 1 EX -1");
    ERR(c, "ERR invalid expire time in 'set' command", "SET a 1 PX 0");
    ERR(c, "ERR invalid expire time in 'set' command", "SET a 1 EXAT 0");
    ERR(c, "ERR invalid expire time in 'set' command", "SET a 1 PXAT -5");
    ERR(c, "ERR invalid expire time in 'set' command", "SET a 1 EX 9223372036854775807");
    ERR(c, "ERR invalid expire time in 'set' command", "SET a 1 EX 9223372036854775");
    /* nothing changed by the failed commands */
    BULK(c, "4", "GET a");
    INT(c, -1, "TTL a");
}

static void test_setnx_setex(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 1, "SETNX a 1");
    INT(c, 0, "SETNX a 2");
    BULK(c, "1", "GET a");
    OK(c, "SETEX a 100 v");
    BULK(c, "v", "GET a");
    expect_int_range(cmd(c, "TTL a"), 99, 100);
    OK(c, "PSETEX a 5000 w");
    BULK(c, "w", "GET a");
    expect_int_range(cmd(c, "PTTL a"), 4000, 5000);
    ERR(c, "ERR invalid expire time in 'setex' command", "SETEX a 0 v");
    ERR(c, "ERR invalid expire time in 'setex' command", "SETEX a -1 v");
    ERR(c, "ERR invalid expire time in 'psetex' command", "PSETEX a 0 v");
    ERR(c, "ERR value is not an integer or out of range", "SETEX a x v");
    ERR(c, "ERR wrong number of arguments for 'setex' command", "SETEX a 10");
    ERR(c, "ERR wrong number of arguments for 'setnx' command", "SETNX a");
    BULK(c, "w", "GET a");
}

static void test_getset_getdel_getex(void **state)
{
    redisContext *c = FIX(state)->c;
    NIL(c, "GETSET a 1");
    BULK(c, "1", "GETSET a 2");
    BULK(c, "2", "GET a");
    OK(c, "SET t 1 EX 100");
    BULK(c, "1", "GETSET t 2");
    INT(c, -1, "TTL t");                /* GETSET clears the TTL */
    ERR(c, "ERR wrong number of arguments for 'getset' command", "GETSET a x y");

    BULK(c, "2", "GETDEL a");
    INT(c, 0, "EXISTS a");
    NIL(c, "GETDEL a");
    ERR(c, "ERR wrong number of arguments for 'getdel' command", "GETDEL");

    long long now = (long long)time(NULL);
    OK(c, "SET g v");
    BULK(c, "v", "GETEX g");
    INT(c, -1, "TTL g");
    BULK(c, "v", "GETEX g EX 100");
    expect_int_range(cmd(c, "TTL g"), 99, 100);
    BULK(c, "v", "GETEX g PX 50000");
    expect_int_range(cmd(c, "PTTL g"), 49000, 50000);
    BULK(c, "v", "GETEX g EXAT %lld", now + 300);
    INT(c, now + 300, "EXPIRETIME g");
    BULK(c, "v", "GETEX g PXAT %lld", now * 1000 + 400789);
    INT(c, now * 1000 + 400789, "PEXPIRETIME g");
    BULK(c, "v", "GETEX g PERSIST");
    INT(c, -1, "TTL g");
    NIL(c, "GETEX nosuch EX 10");
    NIL(c, "GETEX nosuch");
    ERR(c, "ERR syntax error", "GETEX g PERSIST EX 1");
    ERR(c, "ERR syntax error", "GETEX g EX 1 PX 1");
    ERR(c, "ERR syntax error", "GETEX g foo");
    ERR(c, "ERR syntax error", "GETEX g EX");
    ERR(c, "ERR invalid expire time in 'getex' command", "GETEX g EX 0");
    ERR(c, "ERR invalid expire time in 'getex' command", "GETEX g PX -1");
    ERR(c, "ERR value is not an integer or out of range", "GETEX g EX x");
    INT(c, -1, "TTL g");
    /* an expire time in the past deletes the key */
    BULK(c, "v", "GETEX g PXAT 1");
    INT(c, 0, "EXISTS g");
}

static void test_mget_mset(void **state)
{
    redisContext *c = FIX(state)->c;
    /* k:1..k:8 hash to slots of both parities: MSET/MGET span shards */
    OK(c, "MSET k:1 a k:2 b k:3 c k:4 d k:5 e k:6 f k:7 g k:8 h");
    expect_bulks(cmd(c, "MGET k:1 k:2 nosuch k:3 k:4 k:5 k:6 k:7 k:8 k:1"), 10,
                 "a", "b", NULL, "c", "d", "e", "f", "g", "h", "a");
    expect_bulks(cmd(c, "MGET nosuch"), 1, NULL);
    OK(c, "MSET k:1 x k:1 y");          /* the last one wins */
    BULK(c, "y", "GET k:1");
    OK(c, "SET t 1 EX 100");
    OK(c, "MSET t 2");
    INT(c, -1, "TTL t");
    ERR(c, "ERR wrong number of arguments for 'mset' command", "MSET");
    ERR(c, "ERR wrong number of arguments for 'mset' command", "MSET a");
    ERR(c, "ERR wrong number of arguments for 'mset' command", "MSET a 1 b");
    ERR(c, "ERR wrong number of arguments for 'mget' command", "MGET");
    NIL(c, "GET b");

    INT(c, 1, "MSETNX n:1 a n:2 b n:3 c");
    expect_bulks(cmd(c, "MGET n:1 n:2 n:3"), 3, "a", "b", "c");
    INT(c, 0, "MSETNX n:4 d n:5 e n:1 z");      /* one exists: nothing is set */
    expect_bulks(cmd(c, "MGET n:1 n:4 n:5"), 3, "a", NULL, NULL);
    INT(c, 1, "MSETNX n:4 d n:5 e");
    expect_bulks(cmd(c, "MGET n:4 n:5"), 2, "d", "e");
    INT(c, 1, "MSETNX n:6 x n:6 y");            /* duplicate key in one call: last wins */
    BULK(c, "y", "GET n:6");
    ERR(c, "ERR wrong number of arguments for 'msetnx' command", "MSETNX n:7");
    ERR(c, "ERR wrong number of arguments for 'msetnx' command", "MSETNX n:7 a n:8");
}

static void test_mget_many(void **state)
{
    redisContext *c = FIX(state)->c;
    enum { N = 1000 };
    static char names[N][16], vals[N][16];
    const char *argv[2 * N + 1];
    argv[0] = "MSET";
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "m:%d", i);
        snprintf(vals[i], sizeof vals[i], "v%d", i * 3);
        argv[1 + 2 * i] = names[i];
        argv[2 + 2 * i] = vals[i];
    }
    expect_ok(cmdv(c, 2 * N + 1, argv, NULL));
    argv[0] = "MGET";
    for (int i = 0; i < N; i++) argv[1 + i] = names[(i * 7) % N];
    argv[N + 1] = "nosuch";
    redisReply *r = cmdv(c, N + 2, argv, NULL);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, N + 1);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r->element[i]->type, REDIS_REPLY_STRING);
        assert_string_equal(r->element[i]->str, vals[(i * 7) % N]);
    }
    assert_int_equal(r->element[N]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    INT(c, N, "DBSIZE");
}

static void test_append_strlen_getrange(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 0, "STRLEN a");
    INT(c, 5, "APPEND a hello");
    INT(c, 11, "APPEND a %s", " world");
    INT(c, 11, "APPEND a %s", "");
    BULK(c, "hello world", "GET a");
    INT(c, 11, "STRLEN a");
    OK(c, "SET i 123");
    INT(c, 3, "STRLEN i");
    INT(c, 4, "APPEND i 4");
    BULK(c, "1234", "GET i");
    OK(c, "SET t x EX 100");
    INT(c, 2, "APPEND t y");
    expect_int_range(cmd(c, "TTL t"), 99, 100);   /* APPEND keeps the TTL */

    BULK(c, "hello", "GETRANGE a 0 4");
    BULK(c, "world", "GETRANGE a -5 -1");
    BULK(c, "hello world", "GETRANGE a 0 -1");
    BULK(c, "hello world", "GETRANGE a 0 100");
    BULK(c, "h", "GETRANGE a 0 0");
    BULK(c, "", "GETRANGE a 5 1");
    BULK(c, "h", "GETRANGE a 0 -100");
    BULK(c, "h", "GETRANGE a -100 -100");
    BULK(c, "", "GETRANGE a 11 20");
    BULK(c, "d", "GETRANGE a 10 20");
    BULK(c, "", "GETRANGE nosuch 0 10");
    BULK(c, "23", "GETRANGE i 1 2");
    BULK(c, "ello", "SUBSTR a 1 4");
    ERR(c, "ERR value is not an integer or out of range", "GETRANGE a x 1");
    ERR(c, "ERR wrong number of arguments for 'getrange' command", "GETRANGE a 0");
    ERR(c, "ERR wrong number of arguments for 'append' command", "APPEND a");
    ERR(c, "ERR wrong number of arguments for 'strlen' command", "STRLEN");
}

static void test_setrange(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "SET a hello");
    INT(c, 5, "SETRANGE a 1 EL");
    BULK(c, "hELlo", "GET a");
    INT(c, 9, "SETRANGE a 7 xy");        /* zero padding */
    expect_bulk_len(cmd(c, "GET a"), "hELlo\0\0xy", 9);
    INT(c, 9, "SETRANGE a 0 %s", "");
    INT(c, 0, "SETRANGE nosuch 5 %s", "");  /* nothing is created */
    INT(c, 0, "EXISTS nosuch");
    INT(c, 4, "SETRANGE n 1 abc");
    expect_bulk_len(cmd(c, "GET n"), "\0abc", 4);
    OK(c, "SET i 1234");
    INT(c, 4, "SETRANGE i 1 x");
    BULK(c, "1x34", "GET i");
    OK(c, "SET t x EX 100");
    INT(c, 2, "SETRANGE t 1 y");
    expect_int_range(cmd(c, "TTL t"), 99, 100);
    ERR(c, "ERR offset is out of range", "SETRANGE a -1 x");
    ERR(c, "ERR value is not an integer or out of range", "SETRANGE a x x");
    ERR(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)", "SETRANGE a 536870912 x");
    ERR(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)", "SETRANGE nosuch 536870912 x");
    ERR(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)", "SETRANGE a 1000000000000 x");
    INT(c, 0, "EXISTS nosuch");
    ERR(c, "ERR wrong number of arguments for 'setrange' command", "SETRANGE a 1");
}

static long long usage(redisContext *c, const char *key)
{
    redisReply *r = cmd(c, "MEMORY USAGE %s", key);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* A string that SETRANGE or SETBIT creates is built at its size, as Redis
 * builds it: it costs what SET's string of that length costs, with no
 * room to grow, which used_memory would count against maxmemory. Growing
 * an existing one may keep room, as Redis's sdsgrowzero does. */
static void test_new_string_sized_exactly(void **state)
{
    redisContext *c = FIX(state)->c;
    enum { LEN = 100001 };
    char *v = malloc(LEN);
    memset(v, 'x', LEN);
    expect_ok(cmd(c, "SET byset %b", v, (size_t)LEN));
    free(v);
    long long set = usage(c, "byset");
    INT(c, LEN, "SETRANGE byrange %d x", LEN - 1);
    INT(c, 0, "SETBIT bybit %d 1", (LEN - 1) * 8);
    INT(c, LEN, "STRLEN bybit");
    long long range = usage(c, "byrange"), bit = usage(c, "bybit");
    print_message("MEMORY USAGE: SET %lld, SETRANGE %lld, SETBIT %lld\n", set, range, bit);
    assert_true(range <= set + set / 16);
    assert_true(bit <= set + set / 16);
}

static void test_incr_decr(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 1, "INCR a");
    INT(c, 2, "INCR a");
    INT(c, 12, "INCRBY a 10");
    INT(c, 11, "DECR a");
    INT(c, 1, "DECRBY a 10");
    INT(c, -4, "INCRBY a -5");
    INT(c, 1, "DECRBY a -5");
    INT(c, -1, "DECR nosuch");
    OK(c, "SET t 5 EX 100");
    INT(c, 6, "INCR t");
    expect_int_range(cmd(c, "TTL t"), 99, 100);  /* INCR keeps the TTL */
    OK(c, "SET m 9223372036854775806");
    INT(c, 9223372036854775807LL, "INCR m");
    ERR(c, "ERR increment or decrement would overflow", "INCR m");
    ERR(c, "ERR increment or decrement would overflow", "INCRBY m 1");
    OK(c, "SET m -9223372036854775807");
    INT(c, (-9223372036854775807LL - 1), "DECR m");
    ERR(c, "ERR increment or decrement would overflow", "DECR m");
    ERR(c, "ERR increment or decrement would overflow", "DECRBY m 1");
    ERR(c, "ERR decrement would overflow", "DECRBY a -9223372036854775808");
    BULK(c, "1", "GET a");
    OK(c, "SET s abc");
    ERR(c, "ERR value is not an integer or out of range", "INCR s");
    OK(c, "SET s %s", " 1");
    ERR(c, "ERR value is not an integer or out of range", "INCR s");
    OK(c, "SET s 1.5");
    ERR(c, "ERR value is not an integer or out of range", "INCR s");
    OK(c, "SET s 9223372036854775808");
    ERR(c, "ERR value is not an integer or out of range", "INCR s");
    OK(c, "SET s %s", "");
    ERR(c, "ERR value is not an integer or out of range", "INCR s");
    ERR(c, "ERR value is not an integer or out of range", "INCRBY a x");
    ERR(c, "ERR value is not an integer or out of range", "INCRBY a 1.0");
    ERR(c, "ERR value is not an integer or out of range", "DECRBY a 99999999999999999999");
    ERR(c, "ERR wrong number of arguments for 'incr' command", "INCR");
    ERR(c, "ERR wrong number of arguments for 'incrby' command", "INCRBY a");
    BULK(c, "1", "GET a");
}

static void test_incrbyfloat(void **state)
{
    redisContext *c = FIX(state)->c;
    /* the examples of the Redis documentation */
    OK(c, "SET mykey 10.50");
    BULK(c, "10.6", "INCRBYFLOAT mykey 0.1");
    BULK(c, "5.6", "INCRBYFLOAT mykey -5");
    OK(c, "SET mykey 5.0e3");
    BULK(c, "5200", "INCRBYFLOAT mykey 2.0e2");
    BULK(c, "0.1", "INCRBYFLOAT f 0.1");
    BULK(c, "3.1", "INCRBYFLOAT f 3.0");
    /* long double arithmetic, printed with 17 significant digits as Redis does */
    BULK(c, "1503.09999999999999998", "INCRBYFLOAT f 1.5e3");
    OK(c, "SET i 10");
    BULK(c, "10", "INCRBYFLOAT i 0");
    BULK(c, "7.5", "INCRBYFLOAT i -2.5");
    BULK(c, "-1", "INCRBYFLOAT i -8.5");
    OK(c, "SET t 1 EX 100");
    BULK(c, "2.5", "INCRBYFLOAT t 1.5");
    expect_int_range(cmd(c, "TTL t"), 99, 100);
    ERR(c, "ERR value is not a valid float", "INCRBYFLOAT i x");
    ERR(c, "ERR value is not a valid float", "INCRBYFLOAT i nan");
    ERR(c, "ERR value is not a valid float", "INCRBYFLOAT i %s", "");
    ERR(c, "ERR increment would produce NaN or Infinity", "INCRBYFLOAT i inf");
    ERR(c, "ERR increment would produce NaN or Infinity", "INCRBYFLOAT i -inf");
    OK(c, "SET s abc");
    ERR(c, "ERR value is not a valid float", "INCRBYFLOAT s 1");
    BULK(c, "-1", "GET i");
    ERR(c, "ERR wrong number of arguments for 'incrbyfloat' command", "INCRBYFLOAT i");
}

static void test_strings_resp3(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    RAW(r, "_\r\n", "GET nosuch");
    RAW(r, "_\r\n", "SET a 1 GET");
    RAW(r, "$1\r\n1\r\n", "SET a 2 GET");
    RAW(r, "_\r\n", "SET a 3 NX");
    RAW(r, "*3\r\n$1\r\n2\r\n_\r\n$1\r\n2\r\n", "MGET a nosuch a");
    RAW(r, "$3\r\n2.5\r\n", "INCRBYFLOAT f 2.5");   /* still a bulk string */
    RAW(r, ":3\r\n", "INCR a");
    RAW(r, "_\r\n", "GETDEL nosuch");
    RAW(r, "_\r\n", "GETEX nosuch");
    RAW(r, "-ERR syntax error\r\n", "SET a 1 NX XX");
    raw_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_get_set, h_flushall),
        cmocka_unit_test_setup(test_set_options, h_flushall),
        cmocka_unit_test_setup(test_setnx_setex, h_flushall),
        cmocka_unit_test_setup(test_getset_getdel_getex, h_flushall),
        cmocka_unit_test_setup(test_mget_mset, h_flushall),
        cmocka_unit_test_setup(test_mget_many, h_flushall),
        cmocka_unit_test_setup(test_append_strlen_getrange, h_flushall),
        cmocka_unit_test_setup(test_setrange, h_flushall),
        cmocka_unit_test_setup(test_new_string_sized_exactly, h_flushall),
        cmocka_unit_test_setup(test_incr_decr, h_flushall),
        cmocka_unit_test_setup(test_incrbyfloat, h_flushall),
        cmocka_unit_test_setup(test_strings_resp3, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("strings", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
