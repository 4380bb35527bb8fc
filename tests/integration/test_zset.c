/*
 * Sorted set commands: ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK ZREVRANK
 * ZCOUNT ZLEXCOUNT, the ZRANGE family and ZRANGESTORE, ZPOPMIN ZPOPMAX
 * ZMPOP, the range deletes, ZRANDMEMBER, ZSCAN, ZUNION ZINTER ZDIFF (and
 * *STORE) ZINTERCARD: replies, errors, RESP3 shapes, encodings, keys on
 * different shards, and redis-benchmark's ZADD and ZPOPMIN tests.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

/* Fill key with members m<from>..m<to> scored by their number. */
static void fill(redisContext *c, const char *key, int from, int to)
{
    for (int i = from; i <= to; i += 100) {
        char buf[8192];
        int n = snprintf(buf, sizeof buf, "ZADD %s", key);
        for (int j = i; j < i + 100 && j <= to; j++) n += snprintf(buf + n, sizeof buf - (size_t)n, " %d m%d", j, j);
        freeReplyObject(cmd(c, buf));
    }
}

static void test_zadd(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "ZADD z 1 a 2 b 3 c");
    INT(c, 0, "ZADD z 1.5 a 2 b 3 c");
    INT(c, 3, "ZADD z CH 1 a 2 b 4 c 10 d");
    ERR(c, "ERR XX and NX options at the same time are not compatible", "ZADD z NX XX 1 a");
    ERR(c, "ERR GT, LT, and/or NX options at the same time are not compatible", "ZADD z GT NX 1 a");
    ERR(c, "ERR GT, LT, and/or NX options at the same time are not compatible", "ZADD z LT NX 1 a");
    ERR(c, "ERR GT, LT, and/or NX options at the same time are not compatible", "ZADD z gt lt 1 a");
    ERR(c, "ERR INCR option supports a single increment-element pair", "ZADD z INCR 1 a 2 b");
    ERR(c, "ERR value is not a valid float", "ZADD z x a");
    ERR(c, "ERR value is not a valid float", "ZADD z 1 a x b");
    ERR(c, "ERR value is not a valid float", "ZADD z nan a");
    ERR(c, "ERR syntax error", "ZADD z 1 a 2");
    ERR(c, "ERR syntax error", "ZADD z nx 1");
    ERR(c, "ERR wrong number of arguments for 'zadd' command", "ZADD z 1");
    BULK(c, "2", "ZADD z INCR 1 a");
    NIL(c, "ZADD z INCR GT -1 a");
    NIL(c, "ZADD z XX INCR 1 nosuch");
    NIL(c, "ZADD z NX INCR 1 a");
    INT(c, 0, "ZADD z XX 5 nosuch");
    INT(c, 0, "EXISTS nokey");
    INT(c, 0, "ZADD nokey XX 1 a");
    INT(c, 0, "EXISTS nokey");
    INT(c, 0, "ZADD z NX 100 a");
    BULK(c, "2", "ZSCORE z a");
    INT(c, 0, "ZADD z GT 1 a");
    INT(c, 1, "ZADD z GT CH 3 a");
    INT(c, 0, "ZADD z LT 4 a");
    INT(c, 1, "ZADD z LT CH 0 a");
    INT(c, 1, "ZADD z LT 7 newlt");          /* GT/LT never stop new members */
    INT(c, 2, "ZADD z inf inf -inf ninf");
    ERR(c, "ERR resulting score is not a number (NaN)", "ZADD z INCR -inf inf");
    BULK(c, "inf", "ZSCORE z inf");
    ERR(c, "ERR value is not a valid float", "ZINCRBY z x a");
    BULK(c, "2.5", "ZINCRBY z 2.5 a");
    BULK(c, "1.0000000000000001e+300", "ZINCRBY z 1.0000000000000001e300 big");
    BULK(c, "3.1400000000000001", "ZINCRBY z 3.14 pi");
    ERR(c, "ERR resulting score is not a number (NaN)", "ZINCRBY z -inf inf");
    ERR(c, "ERR wrong number of arguments for 'zincrby' command", "ZINCRBY z 1");
    OK(c, "SET str v");
    ERR(c, WRONGTYPE, "ZADD str 1 a");
    ERR(c, WRONGTYPE, "ZINCRBY str 1 a");
    STATUS(c, "zset", "TYPE z");
    /* binary and empty members */
    const char bin[] = "a\0b\r\n";
    expect_int(cmd(c, "ZADD bin 1 %b", bin, sizeof bin - 1), 1);
    expect_bulk(cmd(c, "ZSCORE bin %b", bin, sizeof bin - 1), "1");
    INT(c, 1, "ZADD bin 2 %s", "");
    BULK(c, "2", "ZSCORE bin %s", "");
}

static void test_members(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 4, "ZADD z 1 a 2 b 3 c 10 10");
    INT(c, 4, "ZCARD z");
    INT(c, 0, "ZCARD nosuch");
    BULK(c, "1", "ZSCORE z a");
    BULK(c, "10", "ZSCORE z 10");
    NIL(c, "ZSCORE z 010");
    NIL(c, "ZSCORE nosuch a");
    expect_bulks(cmd(c, "ZMSCORE z a nosuch b"), 3, "1", NULL, "2");
    expect_bulks(cmd(c, "ZMSCORE nosuch a b"), 2, NULL, NULL);
    INT(c, 0, "ZRANK z a");
    INT(c, 3, "ZRANK z 10");
    INT(c, 0, "ZREVRANK z 10");
    INT(c, 3, "ZREVRANK z a");
    NIL(c, "ZRANK z nosuch");
    NIL(c, "ZREVRANK nosuch a");
    INT(c, 2, "ZREM z a nosuch 10");
    INT(c, 0, "ZREM z a");
    INT(c, 0, "ZREM nosuch a");
    INT(c, 2, "ZREM z b c c");
    INT(c, 0, "EXISTS z");                  /* deleted when empty */
    OK(c, "SET str v");
    ERR(c, WRONGTYPE, "ZCARD str");
    ERR(c, WRONGTYPE, "ZSCORE str a");
    ERR(c, WRONGTYPE, "ZMSCORE str a");
    ERR(c, WRONGTYPE, "ZRANK str a");
    ERR(c, WRONGTYPE, "ZREVRANK str a");
    ERR(c, WRONGTYPE, "ZREM str a");
    ERR(c, "ERR wrong number of arguments for 'zrem' command", "ZREM z");
    ERR(c, "ERR wrong number of arguments for 'zmscore' command", "ZMSCORE z");
    ERR(c, "ERR wrong number of arguments for 'zscore' command", "ZSCORE z");
    /* both encodings answer alike */
    fill(c, "big", 1, 300);
    INT(c, 300, "ZCARD big");
    INT(c, 199, "ZRANK big m200");
    INT(c, 100, "ZREVRANK big m200");
    BULK(c, "200", "ZSCORE big m200");
    INT(c, 2, "ZREM big m1 m300 nosuch");
    INT(c, 0, "ZRANK big m2");
}

static void test_counts(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 5, "ZADD z 1 a 2 b 3 c -inf ninf +inf pinf");
    INT(c, 5, "ZCOUNT z -inf +inf");
    INT(c, 1, "ZCOUNT z (1 (3");
    INT(c, 2, "ZCOUNT z (1 3");
    INT(c, 0, "ZCOUNT z 3 1");
    INT(c, 0, "ZCOUNT nosuch 0 1");
    ERR(c, "ERR min or max is not a float", "ZCOUNT z a b");
    ERR(c, "ERR min or max is not a float", "ZCOUNT z 1 (x");
    INT(c, 5, "ZADD l 0 a 0 b 0 c 0 d 0 e");
    INT(c, 5, "ZLEXCOUNT l - +");
    INT(c, 4, "ZLEXCOUNT l [b +");
    INT(c, 2, "ZLEXCOUNT l (b [d");
    INT(c, 0, "ZLEXCOUNT l + -");
    INT(c, 0, "ZLEXCOUNT nosuch - +");
    ERR(c, "ERR min or max not valid string range item", "ZLEXCOUNT l a b");
    OK(c, "SET str v");
    ERR(c, WRONGTYPE, "ZCOUNT str 0 1");
    ERR(c, WRONGTYPE, "ZLEXCOUNT str - +");
    fill(c, "big", 1, 300);
    INT(c, 101, "ZCOUNT big 100 200");
    INT(c, 99, "ZCOUNT big (100 (200");
}

static void test_zrange(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 4, "ZADD z 1 a 2 b 3 c 4 d");
    expect_bulks(cmd(c, "ZRANGE z 0 -1"), 4, "a", "b", "c", "d");
    expect_bulks(cmd(c, "ZRANGE z -2 -1 WITHSCORES"), 4, "c", "3", "d", "4");
    expect_bulks(cmd(c, "ZRANGE z -100 1"), 2, "a", "b");
    expect_bulks(cmd(c, "ZRANGE z 2 100"), 2, "c", "d");
    expect_empty_array(cmd(c, "ZRANGE z 1 0"));
    expect_empty_array(cmd(c, "ZRANGE z 4 10"));
    expect_empty_array(cmd(c, "ZRANGE nosuch 0 -1"));
    expect_bulks(cmd(c, "ZRANGE z 0 1 REV WITHSCORES"), 4, "d", "4", "c", "3");
    expect_bulks(cmd(c, "ZREVRANGE z 0 1 WITHSCORES"), 4, "d", "4", "c", "3");
    expect_bulks(cmd(c, "ZRANGE z -inf +inf BYSCORE LIMIT 1 2 WITHSCORES"), 4, "b", "2", "c", "3");
    expect_bulks(cmd(c, "ZRANGE z +inf -inf BYSCORE REV LIMIT 1 2"), 2, "c", "b");
    expect_bulks(cmd(c, "ZRANGE z (1 3 BYSCORE"), 2, "b", "c");
    expect_bulks(cmd(c, "ZRANGE z 0 -1 LIMIT 1 -1"), 4, "a", "b", "c", "d");
    ERR(c, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX", "ZRANGE z 0 -1 LIMIT 0 1");
    ERR(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX", "ZRANGE z [a [c BYLEX WITHSCORES");
    ERR(c, "ERR syntax error", "ZRANGE z 0 1 BYSCORE BYSCORE");
    ERR(c, "ERR syntax error", "ZRANGE z 0 1 BYSCORE BYLEX");
    ERR(c, "ERR syntax error", "ZRANGE z 0 1 foo");
    ERR(c, "ERR syntax error", "ZRANGE z 0 1 LIMIT 1");
    ERR(c, "ERR value is not an integer or out of range", "ZRANGE z 0 1 BYSCORE LIMIT x 1");
    ERR(c, "ERR value is not an integer or out of range", "ZRANGE z a 1");
    ERR(c, "ERR min or max is not a float", "ZRANGE z a 1 BYSCORE");
    ERR(c, "ERR min or max not valid string range item", "ZRANGE z a b BYLEX");
    expect_bulks(cmd(c, "ZRANGEBYSCORE z (1 3 WITHSCORES"), 4, "b", "2", "c", "3");
    expect_bulks(cmd(c, "ZRANGEBYSCORE z -inf inf LIMIT 1 -5"), 3, "b", "c", "d");
    expect_empty_array(cmd(c, "ZRANGEBYSCORE z -inf inf LIMIT -1 2"));
    expect_bulks(cmd(c, "ZRANGEBYSCORE z -inf inf WITHSCORES LIMIT 3 10"), 2, "d", "4");
    expect_bulks(cmd(c, "ZREVRANGEBYSCORE z 3 (1 WITHSCORES"), 4, "c", "3", "b", "2");
    expect_bulks(cmd(c, "ZREVRANGEBYSCORE z +inf -inf LIMIT 0 1"), 1, "d");
    ERR(c, "ERR syntax error", "ZRANGEBYSCORE z 0 1 REV");
    ERR(c, "ERR syntax error", "ZRANGEBYSCORE z 0 1 BYLEX");
    ERR(c, "ERR syntax error", "ZREVRANGE z 0 1 REV");
    ERR(c, "ERR syntax error", "ZREVRANGE z 0 1 LIMIT 0 1 x");
    ERR(c, "ERR min or max is not a float", "ZRANGEBYSCORE z a b");
    INT(c, 5, "ZADD l 0 a 0 b 0 c 0 d 0 e");
    expect_bulks(cmd(c, "ZRANGEBYLEX l - +"), 5, "a", "b", "c", "d", "e");
    expect_bulks(cmd(c, "ZRANGEBYLEX l [b (d"), 2, "b", "c");
    expect_bulks(cmd(c, "ZREVRANGEBYLEX l (d [b"), 2, "c", "b");
    expect_bulks(cmd(c, "ZRANGEBYLEX l - + LIMIT 1 2"), 2, "b", "c");
    expect_bulks(cmd(c, "ZRANGE l [e [c BYLEX REV"), 3, "e", "d", "c");
    expect_bulks(cmd(c, "ZRANGE l [c + BYLEX LIMIT 1 1"), 1, "d");
    ERR(c, "ERR min or max not valid string range item", "ZRANGEBYLEX l a b");
    ERR(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX", "ZRANGEBYLEX l - + WITHSCORES");
    OK(c, "SET str v");
    ERR(c, WRONGTYPE, "ZRANGE str 0 -1");
    ERR(c, WRONGTYPE, "ZRANGEBYSCORE str 0 1");
    ERR(c, WRONGTYPE, "ZRANGEBYLEX str - +");
    ERR(c, "ERR wrong number of arguments for 'zrange' command", "ZRANGE z 0");
    /* skiplist */
    fill(c, "big", 1, 300);
    expect_bulks(cmd(c, "ZRANGE big 100 101 WITHSCORES"), 4, "m101", "101", "m102", "102");
    expect_bulks(cmd(c, "ZRANGE big 0 1 REV"), 2, "m300", "m299");
    expect_bulks(cmd(c, "ZRANGEBYSCORE big (250 +inf LIMIT 10 2"), 2, "m261", "m262");
    expect_bulks(cmd(c, "ZREVRANGEBYSCORE big (250 -inf LIMIT 10 2"), 2, "m239", "m238");
    redisReply *r = cmd(c, "ZRANGE big 0 -1");
    assert_int_equal(r->elements, 300);
    freeReplyObject(r);
}

/* Lex ranges over members with different scores follow Redis's listpack
 * walk exactly (the skiplist's answer depends on its random levels, as in
 * Redis, so it is not checked); negative zero keeps its sign only in a
 * skiplist. */
static void test_lex_mixed_and_zero(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 6, "ZADD m -3 -1 0.5 g 1 7 1 a 1 b 3 i");
    BULK(c, "listpack", "OBJECT ENCODING m");
    expect_bulks(cmd(c, "ZRANGEBYLEX m (c (i"), 4, "g", "7", "a", "b");
    expect_empty_array(cmd(c, "ZREVRANGEBYLEX m (i (c"));
    expect_empty_array(cmd(c, "ZRANGEBYLEX m [a [b"));
    INT(c, 4, "ZLEXCOUNT m (c (i");
    INT(c, 1, "ZLEXCOUNT m [h +");
    INT(c, 4, "ZREMRANGEBYLEX m (c (i");
    expect_bulks(cmd(c, "ZRANGE m 0 -1"), 2, "-1", "i");
    INT(c, 1, "ZADD lp -0.0 n");
    BULK(c, "0", "ZSCORE lp n");
    OK(c, "CONFIG SET zset-max-listpack-entries 0");
    INT(c, 3, "ZADD sk 2 a 1 b 3 c");
    BULK(c, "skiplist", "OBJECT ENCODING sk");
    INT(c, 1, "ZADD sk -0.0 n");
    BULK(c, "-0", "ZSCORE sk n");
    expect_bulks(cmd(c, "ZUNION 1 sk WEIGHTS 0 WITHSCORES"), 8, "a", "0", "b", "0", "c", "0", "n", "-0");
    INT(c, 4, "ZLEXCOUNT sk - +");
    redisReply *r = cmd(c, "ZLEXCOUNT sk [a [a");    /* mixed scores: any count, no crash */
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    r = cmd(c, "ZLEXCOUNT sk [b [b");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    OK(c, "CONFIG SET zset-max-listpack-entries 128");
}

static void test_zrangestore(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 4, "ZADD {z}src 1 a 2 b 3 c 4 d");
    INT(c, 4, "ZRANGESTORE {z}dst {z}src 0 -1");
    expect_bulks(cmd(c, "ZRANGE {z}dst 0 -1 WITHSCORES"), 8, "a", "1", "b", "2", "c", "3", "d", "4");
    INT(c, 2, "ZRANGESTORE {z}dst {z}src 2 3 BYSCORE");
    expect_bulks(cmd(c, "ZRANGE {z}dst 0 -1"), 2, "b", "c");
    INT(c, 1, "ZRANGESTORE {z}dst {z}src +inf -inf BYSCORE REV LIMIT 0 1");
    expect_bulks(cmd(c, "ZRANGE {z}dst 0 -1"), 1, "d");
    INT(c, 0, "ZRANGESTORE {z}dst {z}nosuch 0 -1");
    INT(c, 0, "EXISTS {z}dst");
    INT(c, 0, "ZRANGESTORE {z}dst {z}src 5 10");
    ERR(c, "ERR syntax error", "ZRANGESTORE {z}dst {z}src 0 -1 WITHSCORES");
    OK(c, "SET {z}str v");
    ERR(c, WRONGTYPE, "ZRANGESTORE {z}dst {z}str 0 -1");
    INT(c, 4, "ZRANGESTORE {z}str {z}src 0 -1");    /* overwrites any type */
    STATUS(c, "zset", "TYPE {z}str");
    INT(c, 2, "ZRANGESTORE {z}src {z}src 0 1");     /* onto itself */
    expect_bulks(cmd(c, "ZRANGE {z}src 0 -1"), 2, "a", "b");
    /* keys on different shards */
    INT(c, 2, "ZRANGESTORE {a}dst {z}src 0 -1");
    expect_bulks(cmd(c, "ZRANGE {a}dst 0 -1"), 2, "a", "b");
}

static void test_remrange(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 5, "ZADD l 0 a 0 b 0 c 0 d 0 e");
    INT(c, 2, "ZREMRANGEBYLEX l [b [c");
    expect_bulks(cmd(c, "ZRANGE l 0 -1"), 3, "a", "d", "e");
    INT(c, 0, "ZREMRANGEBYLEX l + -");
    ERR(c, "ERR min or max not valid string range item", "ZREMRANGEBYLEX l a b");
    INT(c, 1, "ZREMRANGEBYRANK l 0 0");
    INT(c, 0, "ZREMRANGEBYRANK l 5 10");
    INT(c, 0, "ZREMRANGEBYRANK l 1 0");
    ERR(c, "ERR value is not an integer or out of range", "ZREMRANGEBYRANK l x 1");
    INT(c, 0, "ZREMRANGEBYSCORE l (0 1");
    ERR(c, "ERR min or max is not a float", "ZREMRANGEBYSCORE l x 1");
    INT(c, 2, "ZREMRANGEBYSCORE l 0 1");
    INT(c, 0, "EXISTS l");
    INT(c, 0, "ZREMRANGEBYRANK nosuch 0 -1");
    INT(c, 0, "ZREMRANGEBYSCORE nosuch 0 1");
    INT(c, 0, "ZREMRANGEBYLEX nosuch - +");
    OK(c, "SET str v");
    ERR(c, WRONGTYPE, "ZREMRANGEBYRANK str 0 1");
    ERR(c, WRONGTYPE, "ZREMRANGEBYSCORE str 0 1");
    ERR(c, WRONGTYPE, "ZREMRANGEBYLEX str - +");
    fill(c, "big", 1, 300);
    INT(c, 10, "ZREMRANGEBYRANK big -10 -1");
    INT(c, 100, "ZREMRANGEBYSCORE big 1 100");
    INT(c, 190, "ZCARD big");
    INT(c, 190, "ZREMRANGEBYRANK big 0 -1");
    INT(c, 0, "EXISTS big");
}

static void test_pop(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 4, "ZADD p 1 a 2 b 3 c 4 d");
    expect_bulks(cmd(c, "ZPOPMIN p"), 2, "a", "1");
    expect_bulks(cmd(c, "ZPOPMAX p 2"), 4, "d", "4", "c", "3");
    expect_empty_array(cmd(c, "ZPOPMIN p 0"));
    ERR(c, "ERR value is out of range, must be positive", "ZPOPMIN p -1");
    ERR(c, "ERR value is out of range, must be positive", "ZPOPMIN p x");
    ERR(c, "ERR syntax error", "ZPOPMIN p 1 2");
    expect_empty_array(cmd(c, "ZPOPMIN nosuch"));
    expect_empty_array(cmd(c, "ZPOPMAX nosuch 3"));
    expect_bulks(cmd(c, "ZPOPMIN p 10"), 2, "b", "2");
    INT(c, 0, "EXISTS p");
    OK(c, "SET str v");
    ERR(c, WRONGTYPE, "ZPOPMIN str");
    ERR(c, WRONGTYPE, "ZPOPMAX str 0");
    fill(c, "big", 1, 300);
    expect_bulks(cmd(c, "ZPOPMAX big 2"), 4, "m300", "300", "m299", "299");
    expect_bulks(cmd(c, "ZPOPMIN big"), 2, "m1", "1");
    INT(c, 297, "ZCARD big");

    /* ZMPOP: RESP2 nests the pairs as well */
    INT(c, 2, "ZADD {m}1 1 a 2 b");
    redisReply *r = cmd(c, "ZMPOP 2 {m}nosuch {m}1 MAX COUNT 5");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "{m}1");
    assert_int_equal(r->element[1]->elements, 2);
    assert_string_equal(r->element[1]->element[0]->element[0]->str, "b");
    assert_string_equal(r->element[1]->element[0]->element[1]->str, "2");
    assert_string_equal(r->element[1]->element[1]->element[0]->str, "a");
    freeReplyObject(r);
    INT(c, 0, "EXISTS {m}1");
    r = cmd(c, "ZMPOP 1 {m}1 MIN");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    INT(c, 2, "ZADD {m}2 5 a 7 x");
    r = cmd(c, "ZMPOP 1 {m}2 min");
    assert_int_equal(r->elements, 2);
    assert_int_equal(r->element[1]->elements, 1);
    assert_string_equal(r->element[1]->element[0]->element[0]->str, "a");
    freeReplyObject(r);
    ERR(c, "ERR numkeys should be greater than 0", "ZMPOP 0 z MIN");
    ERR(c, "ERR numkeys should be greater than 0", "ZMPOP x z MIN");
    ERR(c, "ERR syntax error", "ZMPOP 1 z foo");
    ERR(c, "ERR syntax error", "ZMPOP 2 z MIN");
    ERR(c, "ERR syntax error", "ZMPOP 9223372036854775807 z MIN");
    ERR(c, "ERR count should be greater than 0", "ZMPOP 1 z MIN COUNT 0");
    ERR(c, "ERR count should be greater than 0", "ZMPOP 1 z MIN COUNT x");
    ERR(c, "ERR syntax error", "ZMPOP 1 z MIN COUNT");
    ERR(c, "ERR syntax error", "ZMPOP 1 z MIN COUNT 1 COUNT 1");
    ERR(c, "ERR wrong number of arguments for 'zmpop' command", "ZMPOP 1 z");
    ERR(c, WRONGTYPE, "ZMPOP 1 str MIN");
    /* keys on different shards */
    INT(c, 1, "ZADD {b}k 1 q");
    r = cmd(c, "ZMPOP 3 {a}k {m}2 {b}k MAX");
    assert_string_equal(r->element[0]->str, "{m}2");
    freeReplyObject(r);
    r = cmd(c, "ZMPOP 3 {a}k {m}2 {b}k MAX");
    assert_string_equal(r->element[0]->str, "{b}k");
    freeReplyObject(r);
}

static void test_randmember(void **state)
{
    redisContext *c = FIX(state)->c;
    NIL(c, "ZRANDMEMBER nosuch");
    expect_empty_array(cmd(c, "ZRANDMEMBER nosuch 5"));
    INT(c, 3, "ZADD z 1 x 2 y 3 z");
    expect_empty_array(cmd(c, "ZRANDMEMBER z 0"));
    expect_bulks(cmd(c, "ZRANDMEMBER z 10 WITHSCORES"), 6, "z", "3", "y", "2", "x", "1");
    expect_bulks(cmd(c, "ZRANDMEMBER z 3"), 3, "z", "y", "x");
    redisReply *r = cmd(c, "ZRANDMEMBER z");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    freeReplyObject(r);
    r = cmd(c, "ZRANDMEMBER z 2");
    assert_int_equal(r->elements, 2);
    assert_string_not_equal(r->element[0]->str, r->element[1]->str);
    freeReplyObject(r);
    r = cmd(c, "ZRANDMEMBER z -7 WITHSCORES");
    assert_int_equal(r->elements, 14);
    freeReplyObject(r);
    ERR(c, "ERR value is not an integer or out of range", "ZRANDMEMBER z x");
    ERR(c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807", "ZRANDMEMBER z -9223372036854775808");
    ERR(c, "ERR value is out of range", "ZRANDMEMBER z 9223372036854775807 WITHSCORES");
    ERR(c, "ERR syntax error", "ZRANDMEMBER z 1 foo");
    ERR(c, "ERR syntax error", "ZRANDMEMBER z 1 WITHSCORES x");
    OK(c, "SET str v");
    ERR(c, WRONGTYPE, "ZRANDMEMBER str");
    fill(c, "big", 1, 300);
    r = cmd(c, "ZRANDMEMBER big 250");
    assert_int_equal(r->elements, 250);
    for (size_t i = 0; i < r->elements; i++)
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(r->element[i]->str, r->element[j]->str);
    freeReplyObject(r);
    r = cmd(c, "ZRANDMEMBER big 5 WITHSCORES");
    assert_int_equal(r->elements, 10);
    assert_string_equal(r->element[0]->str + 1, r->element[1]->str);   /* m<n> scores n */
    freeReplyObject(r);
}

static void test_zscan(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "ZADD z 1 a 2.5 b inf c");
    redisReply *r = cmd(c, "ZSCAN z 0");
    assert_string_equal(r->element[0]->str, "0");
    expect_bulks(r->element[1], 6, "a", "1", "b", "2.5", "c", "inf");
    r->element[1] = NULL;
    freeReplyObject(r);
    r = cmd(c, "ZSCAN z 0 MATCH b*");
    expect_bulks(r->element[1], 2, "b", "2.5");
    r->element[1] = NULL;
    freeReplyObject(r);
    r = cmd(c, "ZSCAN nosuch 0");
    assert_string_equal(r->element[0]->str, "0");
    assert_int_equal(r->element[1]->elements, 0);
    freeReplyObject(r);
    ERR(c, "ERR syntax error", "ZSCAN z 0 COUNT 0");
    ERR(c, "ERR syntax error", "ZSCAN z 0 foo");
    ERR(c, "ERR syntax error", "ZSCAN z 0 COUNT");
    ERR(c, "ERR value is not an integer or out of range", "ZSCAN z 0 COUNT x");
    ERR(c, "ERR invalid cursor", "ZSCAN z x");
    OK(c, "SET str v");
    ERR(c, WRONGTYPE, "ZSCAN str 0");
    /* a skiplist: every member exactly once over the whole scan */
    fill(c, "big", 1, 500);
    int seen[501] = { 0 };
    unsigned long long cursor = 0;
    int calls = 0;
    do {
        r = cmd(c, "ZSCAN big %llu COUNT 20", cursor);
        cursor = strtoull(r->element[0]->str, NULL, 10);
        redisReply *a = r->element[1];
        assert_int_equal(a->elements % 2, 0);
        for (size_t i = 0; i < a->elements; i += 2) {
            int n = atoi(a->element[i]->str + 1);
            assert_int_equal(n, atoi(a->element[i + 1]->str));
            seen[n]++;
        }
        freeReplyObject(r);
        calls++;
    } while (cursor && calls < 10000);
    for (int i = 1; i <= 500; i++) assert_int_equal(seen[i], 1);
    r = cmd(c, "ZSCAN big 0 MATCH m49* COUNT 1000");
    size_t n = r->element[1]->elements;
    freeReplyObject(r);
    assert_true(n <= 2 * 11);
}

static void test_algebra(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "ZADD {k}a 1 x 2 y 3 z");
    INT(c, 3, "ZADD {k}b 10 y 20 z 30 w");
    INT(c, 3, "SADD {k}s x w q");
    OK(c, "SET {k}str v");
    expect_bulks(cmd(c, "ZUNION 2 {k}a {k}b"), 4, "x", "y", "z", "w");
    expect_bulks(cmd(c, "ZUNION 2 {k}a {k}b WITHSCORES"), 8, "x", "1", "y", "12", "z", "23", "w", "30");
    expect_bulks(cmd(c, "ZUNION 3 {k}a {k}b {k}s WITHSCORES"), 10, "q", "1", "x", "2", "y", "12", "z", "23", "w", "31");
    expect_bulks(cmd(c, "ZUNION 2 {k}a {k}b WEIGHTS 2 3 WITHSCORES"), 8, "x", "2", "y", "34", "z", "66", "w", "90");
    expect_bulks(cmd(c, "ZUNION 2 {k}a {k}b AGGREGATE MIN WITHSCORES"), 8, "x", "1", "y", "2", "z", "3", "w", "30");
    expect_bulks(cmd(c, "ZUNION 2 {k}a {k}b AGGREGATE max WITHSCORES"), 8, "x", "1", "y", "10", "z", "20", "w", "30");
    ERR(c, "ERR weight value is not a float", "ZUNION 2 {k}a {k}b WEIGHTS 1 WITHSCORES");
    ERR(c, "ERR syntax error", "ZUNION 2 {k}a {k}b WEIGHTS 1");
    ERR(c, "ERR weight value is not a float", "ZUNION 2 {k}a {k}b WEIGHTS x 1");
    ERR(c, "ERR syntax error", "ZUNION 2 {k}a {k}b AGGREGATE foo");
    ERR(c, WRONGTYPE, "ZUNION 2 {k}a {k}str");
    ERR(c, WRONGTYPE, "ZUNION 2 {k}str {k}a foo");   /* keys are checked before options */
    ERR(c, "ERR at least 1 input key is needed for 'zunion' command", "ZUNION 0 {k}a");
    ERR(c, "ERR syntax error", "ZUNION 3 {k}a {k}b");
    ERR(c, "ERR value is not an integer or out of range", "ZUNION x {k}a");
    expect_bulks(cmd(c, "ZINTER 2 {k}a {k}b WITHSCORES"), 4, "y", "12", "z", "23");
    expect_bulks(cmd(c, "ZINTER 2 {k}a {k}a WITHSCORES"), 6, "x", "2", "y", "4", "z", "6");
    expect_bulks(cmd(c, "ZINTER 2 {k}a {k}s WITHSCORES"), 2, "x", "2");
    expect_empty_array(cmd(c, "ZINTER 2 {k}a {k}nosuch"));
    expect_bulks(cmd(c, "ZINTER 2 {k}a {k}b AGGREGATE MAX WEIGHTS 2 0.5 WITHSCORES"), 4, "y", "5", "z", "10");
    ERR(c, "ERR at least 1 input key is needed for 'zinter' command", "ZINTER 0 {k}a");
    expect_bulks(cmd(c, "ZDIFF 2 {k}a {k}b WITHSCORES"), 2, "x", "1");
    expect_bulks(cmd(c, "ZDIFF 2 {k}b {k}s WITHSCORES"), 4, "y", "10", "z", "20");
    expect_empty_array(cmd(c, "ZDIFF 2 {k}nosuch {k}a"));
    ERR(c, "ERR syntax error", "ZDIFF 1 {k}a WEIGHTS 1");
    ERR(c, "ERR syntax error", "ZDIFF 1 {k}a AGGREGATE SUM");
    INT(c, 2, "ZINTERCARD 2 {k}a {k}b");
    INT(c, 1, "ZINTERCARD 2 {k}a {k}b LIMIT 1");
    INT(c, 3, "ZINTERCARD 1 {k}a LIMIT 0");
    INT(c, 0, "ZINTERCARD 2 {k}a {k}nosuch");
    ERR(c, "ERR LIMIT can't be negative", "ZINTERCARD 2 {k}a {k}b LIMIT -1");
    ERR(c, "ERR at least 1 input key is needed for 'zintercard' command", "ZINTERCARD 0 {k}a");
    ERR(c, "ERR syntax error", "ZINTERCARD 2 {k}a");
    ERR(c, "ERR syntax error", "ZINTERCARD 1 {k}a WITHSCORES");
    ERR(c, "ERR syntax error", "ZINTERCARD 1 {k}a WEIGHTS 1");
    ERR(c, WRONGTYPE, "ZINTERCARD 1 {k}str");

    INT(c, 4, "ZUNIONSTORE {k}d 2 {k}a {k}b");
    expect_bulks(cmd(c, "ZRANGE {k}d 0 -1 WITHSCORES"), 8, "x", "1", "y", "12", "z", "23", "w", "30");
    BULK(c, "listpack", "OBJECT ENCODING {k}d");
    INT(c, 2, "ZINTERSTORE {k}d 2 {k}a {k}b WEIGHTS 1 2");
    expect_bulks(cmd(c, "ZRANGE {k}d 0 -1 WITHSCORES"), 4, "y", "22", "z", "43");
    INT(c, 0, "ZDIFFSTORE {k}d 2 {k}a {k}a");
    INT(c, 0, "EXISTS {k}d");
    INT(c, 1, "ZDIFFSTORE {k}d 2 {k}a {k}b");
    expect_bulks(cmd(c, "ZRANGE {k}d 0 -1 WITHSCORES"), 2, "x", "1");
    ERR(c, "ERR syntax error", "ZUNIONSTORE {k}d 2 {k}a {k}b WITHSCORES");
    ERR(c, "ERR at least 1 input key is needed for 'zunionstore' command", "ZUNIONSTORE {k}d 0 {k}a");
    ERR(c, "ERR at least 1 input key is needed for 'zdiffstore' command", "ZDIFFSTORE {k}d 0 {k}a");
    ERR(c, WRONGTYPE, "ZINTERSTORE {k}d 1 {k}str");
    INT(c, 3, "ZUNIONSTORE {k}str 1 {k}a");          /* overwrites any type */
    STATUS(c, "zset", "TYPE {k}str");
    INT(c, 4, "ZUNIONSTORE {k}a 2 {k}a {k}b");       /* destination among the sources */
    expect_bulks(cmd(c, "ZRANGE {k}a 0 -1"), 4, "x", "y", "z", "w");
    /* NaN from inf * 0 counts as 0; inf + -inf sums to 0 */
    INT(c, 1, "ZADD {k}i inf m");
    INT(c, 1, "ZADD {k}j -inf m");
    expect_bulks(cmd(c, "ZUNION 2 {k}i {k}j WITHSCORES"), 2, "m", "0");
    expect_bulks(cmd(c, "ZUNION 1 {k}i WEIGHTS 0 WITHSCORES"), 2, "m", "0");
    expect_bulks(cmd(c, "ZINTER 2 {k}i {k}j AGGREGATE MIN WITHSCORES"), 2, "m", "-inf");
    /* big inputs, and keys on different shards */
    fill(c, "{x}big", 1, 300);
    fill(c, "{y}big", 201, 400);
    INT(c, 400, "ZUNIONSTORE {z}u 2 {x}big {y}big");
    BULK(c, "skiplist", "OBJECT ENCODING {z}u");
    INT(c, 100, "ZINTERSTORE {z}i 2 {x}big {y}big");
    INT(c, 200, "ZDIFFSTORE {z}d 2 {x}big {y}big");
    expect_bulks(cmd(c, "ZRANGE {z}i 0 1 WITHSCORES"), 4, "m201", "402", "m202", "404");
    expect_bulks(cmd(c, "ZRANGE {z}d -1 -1"), 1, "m200");
    INT(c, 100, "ZINTERCARD 2 {x}big {y}big");
    INT(c, 7, "ZINTERCARD 2 {x}big {y}big LIMIT 7");
    redisReply *r = cmd(c, "ZUNION 2 {x}big {y}big");
    assert_int_equal(r->elements, 400);
    freeReplyObject(r);
}

/* A small sorted set lives inside its key's entry, a bigger listpack apart
 * from it (entry.h, ENTRY_INLINE_MAX = 256 bytes): order, scores and TTL
 * survive each crossing; writes that change nothing leave the set whole. */
static void test_small_and_big_bodies(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 2, "ZADD z 1 first 2 second");
    INT(c, 1, "EXPIRE z 1000");
    for (int i = 0; i < 30; i++) INT(c, 1, "ZADD z %d member-number-%02d", 10 + i, i);   /* ~600 B */
    BULK(c, "listpack", "OBJECT ENCODING z");
    expect_bulks(cmd(c, "ZRANGE z 0 2"), 3, "first", "second", "member-number-00");
    expect_bulks(cmd(c, "ZREVRANGE z 0 1 WITHSCORES"), 4, "member-number-29", "39", "member-number-28", "38");
    INT(c, 30, "ZREMRANGEBYRANK z 2 -1");                      /* small again */
    expect_bulks(cmd(c, "ZRANGE z 0 -1 WITHSCORES"), 4, "first", "1", "second", "2");
    expect_int_range(cmd(c, "TTL z"), 999, 1000);
    INT(c, 0, "ZADD z NX 5 first");
    INT(c, 0, "ZREMRANGEBYRANK z 5 9");
    INT(c, 0, "ZADD z 1 first");
    BULK(c, "1", "ZSCORE z first");
    expect_int_range(cmd(c, "TTL z"), 999, 1000);
    OK(c, "RENAME z z2");
    INT(c, 1, "COPY z2 z3");
    INT(c, 1, "DEL z2");
    expect_bulks(cmd(c, "ZREVRANGE z3 0 -1"), 2, "second", "first");
    expect_int_range(cmd(c, "TTL z3"), 999, 1000);
    expect_bulks(cmd(c, "ZPOPMAX z3"), 2, "second", "2");
    expect_bulks(cmd(c, "ZPOPMIN z3"), 2, "first", "1");
    INT(c, 0, "EXISTS z3");
}

static void test_encodings(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "ZADD z 1 a 2 b 3 c");
    BULK(c, "listpack", "OBJECT ENCODING z");
    fill(c, "big", 1, 128);
    BULK(c, "listpack", "OBJECT ENCODING big");
    INT(c, 1, "ZADD big 0 x");
    BULK(c, "skiplist", "OBJECT ENCODING big");
    INT(c, 1, "ZREM big x");
    BULK(c, "skiplist", "OBJECT ENCODING big");       /* never back */
    char longm[100];
    memset(longm, 'x', 65);
    longm[65] = '\0';
    INT(c, 1, "ZADD l 1 %s", longm);
    BULK(c, "skiplist", "OBJECT ENCODING l");
    INT(c, 1, "ZADD l2 1 a");
    INT(c, 1, "ZADD l2 1 %s", longm);
    BULK(c, "skiplist", "OBJECT ENCODING l2");
    OK(c, "CONFIG SET zset-max-listpack-entries 2");
    OK(c, "CONFIG SET zset-max-listpack-value 3");
    INT(c, 2, "ZADD t 1 a 2 b");
    BULK(c, "listpack", "OBJECT ENCODING t");
    INT(c, 1, "ZADD t 3 c");
    BULK(c, "skiplist", "OBJECT ENCODING t");
    INT(c, 1, "ZADD v 1 abcd");
    BULK(c, "skiplist", "OBJECT ENCODING v");
    INT(c, 1, "ZADD v2 1 abc");
    BULK(c, "listpack", "OBJECT ENCODING v2");
    INT(c, 1, "ZRANGESTORE r t 0 0");
    BULK(c, "listpack", "OBJECT ENCODING r");
    INT(c, 3, "ZRANGESTORE r t 0 -1");
    BULK(c, "skiplist", "OBJECT ENCODING r");
    INT(c, 3, "ZUNIONSTORE u 1 t WEIGHTS 1 AGGREGATE SUM");
    INT(c, 1, "ZREM t c");
    INT(c, 2, "ZUNIONSTORE u 1 t");                  /* small results become listpacks */
    BULK(c, "listpack", "OBJECT ENCODING u");
    OK(c, "CONFIG SET zset-max-listpack-entries 0");
    INT(c, 1, "ZADD zero 1 a");
    BULK(c, "skiplist", "OBJECT ENCODING zero");
    OK(c, "CONFIG SET zset-max-listpack-entries 128");
    OK(c, "CONFIG SET zset-max-listpack-value 64");
    INT(c, 1, "COPY big big2");
    INT(c, 128, "ZCARD big2");
    BULK(c, "skiplist", "OBJECT ENCODING big2");
    INT(c, 1, "COPY z z2");
    BULK(c, "listpack", "OBJECT ENCODING z2");
    expect_bulks(cmd(c, "ZRANGE z2 0 -1"), 3, "a", "b", "c");
    /* SCAN TYPE sees sorted sets */
    unsigned long long cursor = 0;
    size_t found = 0;
    do {
        redisReply *r = cmd(c, "SCAN %llu TYPE zset COUNT 1000", cursor);
        cursor = strtoull(r->element[0]->str, NULL, 10);
        found += r->element[1]->elements;
        freeReplyObject(r);
    } while (cursor);
    assert_int_equal(found, 12);
}

static void test_resp3(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    RAW(r, ":2\r\n", "ZADD z 1 a 2.5 b");
    RAW(r, ",2.5\r\n", "ZSCORE z b");
    RAW(r, "_\r\n", "ZSCORE z nosuch");
    RAW(r, "*2\r\n,1\r\n_\r\n", "ZMSCORE z a nosuch");
    RAW(r, ",3\r\n", "ZINCRBY z 2 a");
    RAW(r, ",4\r\n", "ZADD z INCR 1 a");
    RAW(r, "_\r\n", "ZADD z NX INCR 1 a");
    RAW(r, "*2\r\n*2\r\n$1\r\nb\r\n,2.5\r\n*2\r\n$1\r\na\r\n,4\r\n", "ZRANGE z 0 -1 WITHSCORES");
    RAW(r, "*2\r\n$1\r\nb\r\n$1\r\na\r\n", "ZRANGE z 0 -1");
    RAW(r, "*1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n", "ZRANGEBYSCORE z -inf inf WITHSCORES LIMIT 0 1");
    RAW(r, "*2\r\n*2\r\n$1\r\na\r\n,4\r\n*2\r\n$1\r\nb\r\n,2.5\r\n", "ZRANDMEMBER z 2 WITHSCORES");
    RAW(r, "_\r\n", "ZRANDMEMBER nosuch");
    RAW(r, "*0\r\n", "ZRANDMEMBER nosuch 1");
    RAW(r, "*2\r\n*2\r\n$1\r\nb\r\n,2.5\r\n*2\r\n$1\r\na\r\n,4\r\n", "ZUNION 1 z WITHSCORES");
    RAW(r, "*2\r\n$1\r\n0\r\n*4\r\n$1\r\nb\r\n$3\r\n2.5\r\n$1\r\na\r\n$1\r\n4\r\n", "ZSCAN z 0");
    RAW(r, ":0\r\n", "ZRANK z b");
    RAW(r, "_\r\n", "ZRANK z nosuch");
    RAW(r, "*2\r\n$1\r\nb\r\n,2.5\r\n", "ZPOPMIN z");
    RAW(r, "*1\r\n*2\r\n$1\r\na\r\n,4\r\n", "ZPOPMAX z 1");
    RAW(r, "*0\r\n", "ZPOPMIN nosuch");
    RAW(r, "*0\r\n", "ZPOPMIN nosuch 2");
    RAW(r, ":2\r\n", "ZADD z 1 a 2 b");
    RAW(r, "*0\r\n", "ZPOPMAX z 0");
    RAW(r, "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\na\r\n,1\r\n", "ZMPOP 1 z MIN");
    RAW(r, "_\r\n", "ZMPOP 1 nosuch MIN");
    RAW(r, ",inf\r\n", "ZINCRBY z inf b");
    RAW(r, ",-inf\r\n", "ZINCRBY z -inf neg");
    raw_close(r);
    /* RESP2 doubles are bulk strings */
    r = raw_connect(&FIX(state)->srv);
    RAW(r, "$3\r\ninf\r\n", "ZSCORE z b");
    RAW(r, "*2\r\n$3\r\nneg\r\n$4\r\n-inf\r\n", "ZPOPMIN z");
    RAW(r, "*-1\r\n", "ZMPOP 1 nosuch MIN");
    raw_close(r);
}

static void test_benchmark(void **state)
{
    char cmdline[256];
    snprintf(cmdline, sizeof cmdline, "redis-benchmark -p %d -t zadd,zpopmin -n 20000 -P 16 -q 2>&1",
             FIX(state)->srv.port);
    FILE *p = popen(cmdline, "r");
    assert_non_null(p);
    char line[4096];
    int zadd = 0, zpopmin = 0;
    while (fgets(line, sizeof line, p)) {
        if (strstr(line, "ZADD: ") && strstr(line, "requests per second")) zadd++;
        if (strstr(line, "ZPOPMIN: ") && strstr(line, "requests per second")) zpopmin++;
        assert_null(strstr(line, "Error"));
    }
    assert_int_equal(pclose(p), 0);
    assert_int_equal(zadd, 1);
    assert_int_equal(zpopmin, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_zadd, h_flushall),
        cmocka_unit_test_setup(test_members, h_flushall),
        cmocka_unit_test_setup(test_counts, h_flushall),
        cmocka_unit_test_setup(test_zrange, h_flushall),
        cmocka_unit_test_setup(test_lex_mixed_and_zero, h_flushall),
        cmocka_unit_test_setup(test_zrangestore, h_flushall),
        cmocka_unit_test_setup(test_remrange, h_flushall),
        cmocka_unit_test_setup(test_pop, h_flushall),
        cmocka_unit_test_setup(test_randmember, h_flushall),
        cmocka_unit_test_setup(test_zscan, h_flushall),
        cmocka_unit_test_setup(test_algebra, h_flushall),
        cmocka_unit_test_setup(test_small_and_big_bodies, h_flushall),
        cmocka_unit_test_setup(test_encodings, h_flushall),
        cmocka_unit_test_setup(test_resp3, h_flushall),
        cmocka_unit_test_setup(test_benchmark, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("zset", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
