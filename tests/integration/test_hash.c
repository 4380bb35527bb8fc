/*
 * Hash commands: HSET HMSET HSETNX HGET HMGET HDEL HLEN HEXISTS HSTRLEN
 * HGETALL HKEYS HVALS HINCRBY HINCRBYFLOAT HRANDFIELD (COUNT, negative,
 * WITHVALUES) HSCAN (MATCH COUNT), every error, WRONGTYPE, empty hashes
 * deleted, listpack/hashtable encodings and their thresholds (CONFIG SET),
 * RESP3 shapes, hashes under the key commands (TYPE RENAME COPY MOVE
 * EXPIRE SCAN TYPE), and redis-benchmark's HSET test.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static void set_limits(redisContext *c, int entries, int value)
{
    OK(c, "CONFIG SET hash-max-listpack-entries %d", entries);
    OK(c, "CONFIG SET hash-max-listpack-value %d", value);
}

static void test_hset_hget(void **state)
{
    redisContext *c = FIX(state)->c;
    set_limits(c, 128, 64);
    NIL(c, "HGET h a");
    INT(c, 0, "EXISTS h");
    INT(c, 3, "HSET h a 1 b 2 c 3");
    INT(c, 1, "HSET h a 10 d 4");             /* a updated, d new */
    INT(c, 0, "HSET h a 11");
    BULK(c, "11", "HGET h a");
    BULK(c, "4", "HGET h d");
    NIL(c, "HGET h nosuch");
    INT(c, 0, "HSET h a x a y");              /* repeated field: last wins */
    BULK(c, "y", "HGET h a");
    INT(c, 1, "HSET h g x g z");              /* counted once */
    BULK(c, "z", "HGET h g");
    INT(c, 1, "HDEL h g");
    STATUS(c, "hash", "TYPE h");
    OK(c, "HMSET h e 5 f 6");
    BULK(c, "6", "HGET h f");
    INT(c, 6, "HLEN h");
    /* integer-looking fields and values keep their exact text */
    INT(c, 4, "HSET n 10 -5 010 x -0 y 9223372036854775808 z");
    BULK(c, "-5", "HGET n 10");
    BULK(c, "x", "HGET n 010");
    BULK(c, "y", "HGET n -0");
    BULK(c, "z", "HGET n 9223372036854775808");
    NIL(c, "HGET n 0");
    /* binary safe, empty field and value */
    const char f[] = "f\0\r\n", v[] = "\0v\xff";
    expect_int(cmd(c, "HSET b %b %b", f, sizeof f - 1, v, sizeof v - 1), 1);
    expect_bulk_len(cmd(c, "HGET b %b", f, sizeof f - 1), v, sizeof v - 1);
    INT(c, 1, "HSET b %s %s", "", "");
    BULK(c, "", "HGET b %s", "");
    /* HSETNX */
    INT(c, 1, "HSETNX s a 1");
    INT(c, 0, "HSETNX s a 2");
    BULK(c, "1", "HGET s a");
    INT(c, 1, "HSETNX s b 2");
    INT(c, 2, "HLEN s");
    /* HMGET */
    expect_bulks(cmd(c, "HMGET h a nosuch d"), 3, "y", NULL, "4");
    expect_bulks(cmd(c, "HMGET nokey a b"), 2, NULL, NULL);
    /* arity */
    ERR(c, "ERR wrong number of arguments for 'hset' command", "HSET h a");
    ERR(c, "ERR wrong number of arguments for 'hset' command", "HSET h a 1 b");
    ERR(c, "ERR wrong number of arguments for 'hmset' command", "HMSET h a 1 b");
    ERR(c, "ERR wrong number of arguments for 'hget' command", "HGET h");
    ERR(c, "ERR wrong number of arguments for 'hsetnx' command", "HSETNX h a");
    ERR(c, "ERR wrong number of arguments for 'hmget' command", "HMGET h");
    INT(c, 0, "EXISTS nokey");
}

static void test_wrongtype(void **state)
{
    redisContext *c = FIX(state)->c;
    const char *wt = "WRONGTYPE Operation against a key holding the wrong kind of value";
    OK(c, "SET s v");
    ERR(c, wt, "HSET s a 1");
    ERR(c, wt, "HMSET s a 1");
    ERR(c, wt, "HSETNX s a 1");
    ERR(c, wt, "HGET s a");
    ERR(c, wt, "HMGET s a");
    ERR(c, wt, "HDEL s a");
    ERR(c, wt, "HLEN s");
    ERR(c, wt, "HEXISTS s a");
    ERR(c, wt, "HSTRLEN s a");
    ERR(c, wt, "HGETALL s");
    ERR(c, wt, "HKEYS s");
    ERR(c, wt, "HVALS s");
    ERR(c, wt, "HINCRBY s a 1");
    ERR(c, wt, "HINCRBYFLOAT s a 1");
    ERR(c, wt, "HRANDFIELD s");
    ERR(c, wt, "HRANDFIELD s 2");
    ERR(c, wt, "HRANDFIELD s -2 WITHVALUES");
    ERR(c, wt, "HSCAN s 0");
    BULK(c, "v", "GET s");
    INT(c, 1, "HSET h a 1");
    ERR(c, wt, "GET h");
    ERR(c, wt, "INCR h");
}

static void test_hdel_hlen_hexists_hstrlen(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 0, "HDEL h a");
    INT(c, 0, "HLEN h");
    INT(c, 0, "HEXISTS h a");
    INT(c, 0, "HSTRLEN h a");
    INT(c, 4, "HSET h a 1 b hello c 3 d -123");
    INT(c, 1, "HEXISTS h a");
    INT(c, 0, "HEXISTS h z");
    INT(c, 5, "HSTRLEN h b");
    INT(c, 4, "HSTRLEN h d");
    INT(c, 0, "HSTRLEN h z");
    INT(c, 2, "HDEL h a b z a");
    INT(c, 2, "HLEN h");
    INT(c, 0, "HEXISTS h a");
    INT(c, 2, "HDEL h c d");
    INT(c, 0, "EXISTS h");                    /* the empty hash is deleted */
    INT(c, 0, "HLEN h");
    /* deleting the last field of a hashtable deletes the key too */
    set_limits(c, 1, 64);
    INT(c, 2, "HSET t a 1 b 2");
    BULK(c, "hashtable", "OBJECT ENCODING t");
    INT(c, 2, "HDEL t a b c");
    INT(c, 0, "EXISTS t");
    set_limits(c, 128, 64);
    ERR(c, "ERR wrong number of arguments for 'hdel' command", "HDEL h");
    ERR(c, "ERR wrong number of arguments for 'hlen' command", "HLEN");
    ERR(c, "ERR wrong number of arguments for 'hexists' command", "HEXISTS h");
    ERR(c, "ERR wrong number of arguments for 'hstrlen' command", "HSTRLEN h a b");
}

static void test_getall_keys_vals(void **state)
{
    redisContext *c = FIX(state)->c;
    set_limits(c, 128, 64);
    expect_empty_array(cmd(c, "HGETALL h"));
    expect_empty_array(cmd(c, "HKEYS h"));
    expect_empty_array(cmd(c, "HVALS h"));
    INT(c, 3, "HSET h a 1 b 2 c 3");
    /* a listpack keeps insertion order, in Redis as here */
    expect_bulks(cmd(c, "HGETALL h"), 6, "a", "1", "b", "2", "c", "3");
    expect_bulks(cmd(c, "HKEYS h"), 3, "a", "b", "c");
    expect_bulks(cmd(c, "HVALS h"), 3, "1", "2", "3");
    /* a hashtable in any order, pairs kept together */
    set_limits(c, 2, 64);
    INT(c, 3, "HSET t x 10 y 20 z 30");
    BULK(c, "hashtable", "OBJECT ENCODING t");
    expect_bulks_unordered(cmd(c, "HKEYS t"), 3, "x", "y", "z");
    expect_bulks_unordered(cmd(c, "HVALS t"), 3, "10", "20", "30");
    redisReply *r = cmd(c, "HGETALL t");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 6);
    for (size_t i = 0; i < 6; i += 2) {
        const char *k = r->element[i]->str, *v = r->element[i + 1]->str;
        assert_true((!strcmp(k, "x") && !strcmp(v, "10")) || (!strcmp(k, "y") && !strcmp(v, "20")) ||
                    (!strcmp(k, "z") && !strcmp(v, "30")));
    }
    freeReplyObject(r);
    set_limits(c, 128, 64);
    ERR(c, "ERR wrong number of arguments for 'hgetall' command", "HGETALL h x");
    ERR(c, "ERR wrong number of arguments for 'hkeys' command", "HKEYS");
    ERR(c, "ERR wrong number of arguments for 'hvals' command", "HVALS h x");
}

static void test_hincrby(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 5, "HINCRBY h a 5");
    INT(c, 2, "HINCRBY h a -3");
    BULK(c, "2", "HGET h a");
    INT(c, -9223372036854775807LL, "HINCRBY h b -9223372036854775807");
    INT(c, (-9223372036854775807LL - 1), "HINCRBY h b -1");
    ERR(c, "ERR increment or decrement would overflow", "HINCRBY h b -1");
    INT(c, 9223372036854775807LL, "HINCRBY h c 9223372036854775807");
    ERR(c, "ERR increment or decrement would overflow", "HINCRBY h c 1");
    BULK(c, "9223372036854775807", "HGET h c");
    INT(c, 3, "HSET h s abc f 1.5 sp %s", " 1");
    ERR(c, "ERR hash value is not an integer", "HINCRBY h s 1");
    ERR(c, "ERR hash value is not an integer", "HINCRBY h f 1");
    ERR(c, "ERR hash value is not an integer", "HINCRBY h sp 1");
    ERR(c, "ERR value is not an integer or out of range", "HINCRBY h a x");
    ERR(c, "ERR value is not an integer or out of range", "HINCRBY h a 1.0");
    ERR(c, "ERR value is not an integer or out of range", "HINCRBY nokey a x");
    ERR(c, "ERR value is not an integer or out of range", "HINCRBY h a 9223372036854775808");
    INT(c, 0, "EXISTS nokey");
    BULK(c, "2", "HGET h a");
    ERR(c, "ERR wrong number of arguments for 'hincrby' command", "HINCRBY h a");
}

static void test_hincrbyfloat(void **state)
{
    redisContext *c = FIX(state)->c;
    BULK(c, "10.5", "HINCRBYFLOAT h a 10.5");
    BULK(c, "10.6", "HINCRBYFLOAT h a 0.1");
    BULK(c, "10.6", "HGET h a");
    BULK(c, "15", "HINCRBYFLOAT h a 4.4");
    BULK(c, "5000", "HINCRBYFLOAT h b 5.0e3");
    BULK(c, "-1", "HINCRBYFLOAT h c -1");
    INT(c, 1, "HSET h i 7");
    BULK(c, "7.25", "HINCRBYFLOAT h i 0.25");
    INT(c, 1, "HSET h s abc");
    ERR(c, "ERR hash value is not a float", "HINCRBYFLOAT h s 1");
    ERR(c, "ERR value is not a valid float", "HINCRBYFLOAT h a x");
    ERR(c, "ERR value is not a valid float", "HINCRBYFLOAT h a nan");
    ERR(c, "ERR value is not a valid float", "HINCRBYFLOAT h a %s", "");
    ERR(c, "ERR value is NaN or Infinity", "HINCRBYFLOAT h a inf");
    ERR(c, "ERR value is NaN or Infinity", "HINCRBYFLOAT h a -inf");
    ERR(c, "ERR value is NaN or Infinity", "HINCRBYFLOAT nokey a inf");
    INT(c, 0, "EXISTS nokey");
    INT(c, 1, "HSET h big 1e4932");
    ERR(c, "ERR increment would produce NaN or Infinity", "HINCRBYFLOAT h big 1e4932");
    BULK(c, "15", "HGET h a");
    ERR(c, "ERR wrong number of arguments for 'hincrbyfloat' command", "HINCRBYFLOAT h a");
}

static void test_encoding(void **state)
{
    redisContext *c = FIX(state)->c;
    char field[80], cmdbuf[64];
    set_limits(c, 128, 64);
    /* 128 fields stay a listpack, the 129th converts */
    for (int i = 0; i < 128; i++) {
        snprintf(field, sizeof field, "f%d", i);
        expect_int(cmd(c, "HSET h %s %d", field, i), 1);
    }
    BULK(c, "listpack", "OBJECT ENCODING h");
    INT(c, 1, "HSET h f128 x");
    BULK(c, "hashtable", "OBJECT ENCODING h");
    INT(c, 129, "HLEN h");
    BULK(c, "77", "HGET h f77");
    /* never back, even when small again */
    for (int i = 0; i < 128; i++) {
        snprintf(field, sizeof field, "f%d", i);
        expect_int(cmd(c, "HDEL h %s", field), 1);
    }
    INT(c, 1, "HLEN h");
    BULK(c, "hashtable", "OBJECT ENCODING h");

    /* a 64-byte value fits, 65 does not; fields the same */
    memset(field, 'v', 65);
    field[65] = '\0';
    expect_int(cmd(c, "HSET v a %b", field, (size_t)64), 1);
    BULK(c, "listpack", "OBJECT ENCODING v");
    expect_int(cmd(c, "HSET v a %b", field, (size_t)65), 0);
    BULK(c, "hashtable", "OBJECT ENCODING v");
    expect_int(cmd(c, "HSET w %b 1", field, (size_t)65), 1);
    BULK(c, "hashtable", "OBJECT ENCODING w");
    /* any long argument converts, even of a pair that changes nothing new */
    expect_int(cmd(c, "HSETNX x %b 1", field, (size_t)65), 1);
    BULK(c, "hashtable", "OBJECT ENCODING x");
    /* HINCRBYFLOAT with a long field */
    BULK(c, "1", "HINCRBYFLOAT y %b 1", field, (size_t)65);
    BULK(c, "hashtable", "OBJECT ENCODING y");
    BULK(c, "1", "HINCRBYFLOAT y2 a 1");
    BULK(c, "listpack", "OBJECT ENCODING y2");
    INT(c, 1, "HINCRBY z a 1");
    BULK(c, "listpack", "OBJECT ENCODING z");

    /* thresholds changed at run time apply to the next write */
    set_limits(c, 2, 64);
    INT(c, 2, "HSET s a 1 b 2");
    BULK(c, "listpack", "OBJECT ENCODING s");
    INT(c, 1, "HSET s c 3");
    BULK(c, "hashtable", "OBJECT ENCODING s");
    set_limits(c, 0, 64);
    INT(c, 1, "HSET zero a 1");
    BULK(c, "hashtable", "OBJECT ENCODING zero");
    set_limits(c, 128, 0);
    INT(c, 1, "HSET vzero a 1");
    BULK(c, "hashtable", "OBJECT ENCODING vzero");
    set_limits(c, 128, 64);
    snprintf(cmdbuf, sizeof cmdbuf, "CONFIG GET hash-max-listpack-entries");
    expect_bulks(cmd(c, cmdbuf), 2, "hash-max-listpack-entries", "128");
}

/* Every element of an array reply, as fields (pairs when withvalues) of h. */
static void check_rand_reply(redisContext *c, redisReply *r, size_t n, bool withvalues, bool distinct)
{
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    size_t step = withvalues ? 2 : 1;
    assert_int_equal(r->elements, n * step);
    for (size_t i = 0; i < r->elements; i += step) {
        assert_int_equal(r->element[i]->type, REDIS_REPLY_STRING);
        redisReply *v = cmd(c, "HGET h %s", r->element[i]->str);
        assert_int_equal(v->type, REDIS_REPLY_STRING);
        if (withvalues) assert_string_equal(v->str, r->element[i + 1]->str);
        freeReplyObject(v);
        if (distinct)
            for (size_t j = 0; j < i; j += step)
                assert_string_not_equal(r->element[j]->str, r->element[i]->str);
    }
    freeReplyObject(r);
}

static void hrandfield_checks(redisContext *c, int size)
{
    /* whole hash */
    check_rand_reply(c, cmd(c, "HRANDFIELD h %d", size), (size_t)size, false, true);
    check_rand_reply(c, cmd(c, "HRANDFIELD h %d", size + 5), (size_t)size, false, true);
    check_rand_reply(c, cmd(c, "HRANDFIELD h 9223372036854775807"), (size_t)size, false, true);
    check_rand_reply(c, cmd(c, "HRANDFIELD h %d WITHVALUES", size * 2), (size_t)size, true, true);
    /* distinct, large and small shares */
    check_rand_reply(c, cmd(c, "HRANDFIELD h %d", size - 1), (size_t)size - 1, false, true);
    check_rand_reply(c, cmd(c, "HRANDFIELD h %d withvalues", size / 2), (size_t)size / 2, true, true);
    check_rand_reply(c, cmd(c, "HRANDFIELD h %d", size / 5), (size_t)size / 5, false, true);
    check_rand_reply(c, cmd(c, "HRANDFIELD h 2 WITHVALUES"), 2, true, true);
    check_rand_reply(c, cmd(c, "HRANDFIELD h 1"), 1, false, true);
    check_rand_reply(c, cmd(c, "HRANDFIELD h 1 WITHVALUES"), 1, true, true);
    /* repeats */
    check_rand_reply(c, cmd(c, "HRANDFIELD h -1"), 1, false, false);
    check_rand_reply(c, cmd(c, "HRANDFIELD h -%d", size * 3), (size_t)size * 3, false, false);
    check_rand_reply(c, cmd(c, "HRANDFIELD h -%d WITHVALUES", size * 3), (size_t)size * 3, true, false);
    expect_empty_array(cmd(c, "HRANDFIELD h 0"));
    expect_empty_array(cmd(c, "HRANDFIELD h 0 WITHVALUES"));
    /* one field, no count */
    for (int i = 0; i < 20; i++) {
        redisReply *r = cmd(c, "HRANDFIELD h");
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        redisReply *v = cmd(c, "HEXISTS h %s", r->str);
        expect_int(v, 1);
        freeReplyObject(r);
    }
    /* a negative count samples every field sooner or later */
    redisReply *r = cmd(c, "HRANDFIELD h -%d", size * 50);
    size_t seen = 0;
    for (int i = 0; i < size; i++) {
        char f[32];
        snprintf(f, sizeof f, "f%d", i);
        for (size_t j = 0; j < r->elements; j++)
            if (!strcmp(r->element[j]->str, f)) { seen++; break; }
    }
    assert_int_equal(seen, (size_t)size);
    freeReplyObject(r);
}

/* A small hash lives inside its key's entry and a bigger one apart from it
 * (entry.h, ENTRY_INLINE_MAX = 256 bytes): contents and TTL survive each
 * crossing, and writes that change nothing or fail leave the hash whole. */
static void test_small_and_big_bodies(void **state)
{
    redisContext *c = FIX(state)->c;
    const char *v = "a-value-of-23-bytes-xyz";
    set_limits(c, 512, 64);
    INT(c, 1, "HSET h f0 v0");
    INT(c, 1, "EXPIRE h 1000");
    for (int i = 1; i < 40; i++) INT(c, 1, "HSET h f%d %s", i, v);   /* ~1 KB */
    INT(c, 40, "HLEN h");
    BULK(c, "listpack", "OBJECT ENCODING h");
    BULK(c, "v0", "HGET h f0");
    BULK(c, v, "HGET h f39");
    expect_int_range(cmd(c, "TTL h"), 999, 1000);
    for (int i = 39; i >= 2; i--) INT(c, 1, "HDEL h f%d", i);        /* small again */
    INT(c, 2, "HLEN h");
    BULK(c, v, "HGET h f1");
    expect_int_range(cmd(c, "TTL h"), 999, 1000);
    INT(c, 0, "HSETNX h f0 other");
    ERR(c, "ERR hash value is not an integer", "HINCRBY h f1 1");
    ERR(c, "ERR hash value is not a float", "HINCRBYFLOAT h f1 1");
    INT(c, 0, "HSET h f0 v0");
    expect_int_range(cmd(c, "TTL h"), 999, 1000);
    BULK(c, "v0", "HGET h f0");
    BULK(c, v, "HGET h f1");
    /* under the key commands (with two threads, h2 and h3 may live on
     * another shard than h) */
    OK(c, "RENAME h h2");
    INT(c, 1, "COPY h2 h3");
    INT(c, 1, "DEL h2");
    INT(c, 2, "HLEN h3");
    BULK(c, v, "HGET h3 f1");
    expect_int_range(cmd(c, "TTL h3"), 999, 1000);
    INT(c, 1, "HDEL h3 f0");
    INT(c, 1, "HDEL h3 f1");
    INT(c, 0, "EXISTS h3");
}

static void test_hrandfield(void **state)
{
    redisContext *c = FIX(state)->c;
    set_limits(c, 128, 64);
    NIL(c, "HRANDFIELD h");
    expect_empty_array(cmd(c, "HRANDFIELD h 5"));
    expect_empty_array(cmd(c, "HRANDFIELD h -5 WITHVALUES"));
    expect_empty_array(cmd(c, "HRANDFIELD h -9223372036854775807"));
    INT(c, 0, "EXISTS h");
    for (int i = 0; i < 50; i++)
        expect_int(cmd(c, "HSET h f%d v%d", i, i), 1);
    BULK(c, "listpack", "OBJECT ENCODING h");
    hrandfield_checks(c, 50);
    for (int i = 50; i < 300; i++)
        expect_int(cmd(c, "HSET h f%d v%d", i, i), 1);
    BULK(c, "hashtable", "OBJECT ENCODING h");
    hrandfield_checks(c, 300);

    /* errors */
    ERR(c, "ERR value is not an integer or out of range", "HRANDFIELD h x");
    ERR(c, "ERR value is not an integer or out of range", "HRANDFIELD h 1.5");
    ERR(c, "ERR value is not an integer or out of range", "HRANDFIELD nokey x");
    ERR(c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
        "HRANDFIELD h -9223372036854775808");
    ERR(c, "ERR syntax error", "HRANDFIELD h 1 WITHVALUE");
    ERR(c, "ERR syntax error", "HRANDFIELD h 1 WITHVALUES x");
    ERR(c, "ERR syntax error", "HRANDFIELD nokey 1 x");
    ERR(c, "ERR value is out of range", "HRANDFIELD h 4611686018427387904 WITHVALUES");
    ERR(c, "ERR value is out of range", "HRANDFIELD h -4611686018427387904 WITHVALUES");
    ERR(c, "ERR value is out of range", "HRANDFIELD nokey -4611686018427387904 WITHVALUES");
    check_rand_reply(c, cmd(c, "HRANDFIELD h 4611686018427387903 WITHVALUES"), 300, true, true);
    expect_empty_array(cmd(c, "HRANDFIELD nokey -4611686018427387903 WITHVALUES"));
    ERR(c, "ERR wrong number of arguments for 'hrandfield' command", "HRANDFIELD");
}

static void test_hrandfield_huge_negative(void **state)
{
    SKIP_ON_REDIS();   /* Redis would try to build the whole reply */
    redisContext *c = FIX(state)->c;
    INT(c, 1, "HSET h a 1");
    ERR(c, "ERR value is out of range", "HRANDFIELD h -9223372036854775807");
    ERR(c, "ERR value is out of range", "HRANDFIELD h -4611686018427387903 WITHVALUES");
    ERR(c, "ERR value is out of range", "HRANDFIELD h -100000000");
    INT(c, 1, "HLEN h");
}

static void test_hscan(void **state)
{
    redisContext *c = FIX(state)->c;
    set_limits(c, 128, 64);
    redisReply *r = cmd(c, "HSCAN h 0");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "0");
    assert_int_equal(r->element[1]->elements, 0);
    freeReplyObject(r);
    /* a missing key answers before the options are looked at */
    r = cmd(c, "HSCAN h 0 COUNT 0");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    freeReplyObject(r);

    /* a listpack: everything at once, cursor 0 */
    INT(c, 4, "HSET h a 1 b 2 foo 3 bar 4");
    r = cmd(c, "HSCAN h 0 COUNT 1");
    assert_string_equal(r->element[0]->str, "0");
    assert_int_equal(r->element[1]->elements, 8);
    assert_string_equal(r->element[1]->element[0]->str, "a");
    assert_string_equal(r->element[1]->element[1]->str, "1");
    freeReplyObject(r);
    r = cmd(c, "HSCAN h 123 MATCH f*");
    assert_string_equal(r->element[0]->str, "0");
    assert_int_equal(r->element[1]->elements, 2);
    assert_string_equal(r->element[1]->element[0]->str, "foo");
    assert_string_equal(r->element[1]->element[1]->str, "3");
    freeReplyObject(r);

    /* errors */
    ERR(c, "ERR invalid cursor", "HSCAN h x");
    ERR(c, "ERR invalid cursor", "HSCAN h -");
    ERR(c, "ERR invalid cursor", "HSCAN nokey x");
    ERR(c, "ERR syntax error", "HSCAN h 0 COUNT 0");
    ERR(c, "ERR syntax error", "HSCAN h 0 COUNT -1");
    ERR(c, "ERR value is not an integer or out of range", "HSCAN h 0 COUNT x");
    ERR(c, "ERR syntax error", "HSCAN h 0 MATCH");
    ERR(c, "ERR syntax error", "HSCAN h 0 foo bar");
    ERR(c, "ERR wrong number of arguments for 'hscan' command", "HSCAN h");

    /* a hashtable: a full iteration returns every field (with its value) */
    enum { N = 2000 };
    for (int i = 0; i < N; i += 100) {
        const char *argv[2 + 200];
        size_t lens[2 + 200];
        static char fields[100][16], vals[100][16];
        argv[0] = "HSET"; lens[0] = 4;
        argv[1] = "big"; lens[1] = 3;
        for (int j = 0; j < 100; j++) {
            lens[2 + 2 * j] = (size_t)snprintf(fields[j], 16, "f%d", i + j);
            lens[3 + 2 * j] = (size_t)snprintf(vals[j], 16, "v%d", i + j);
            argv[2 + 2 * j] = fields[j];
            argv[3 + 2 * j] = vals[j];
        }
        expect_int(cmdv(c, 202, argv, lens), 100);
    }
    BULK(c, "hashtable", "OBJECT ENCODING big");
    for (int pass = 0; pass < 3; pass++) {
        static unsigned char seen[N];
        memset(seen, 0, sizeof seen);
        char cursor[32] = "0";
        int calls = 0;
        do {
            r = pass == 2 ? cmd(c, "HSCAN big %s MATCH f1*", cursor)
                          : cmd(c, "HSCAN big %s COUNT %d", cursor, pass == 0 ? 10 : 500);
            assert_int_equal(r->type, REDIS_REPLY_ARRAY);
            snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
            redisReply *e = r->element[1];
            assert_int_equal(e->elements % 2, 0);
            for (size_t j = 0; j < e->elements; j += 2) {
                int id = atoi(e->element[j]->str + 1);
                assert_true(id >= 0 && id < N);
                char want[16];
                snprintf(want, sizeof want, "v%d", id);
                assert_string_equal(e->element[j + 1]->str, want);
                if (pass == 2) assert_int_equal(e->element[j]->str[1], '1');
                seen[id] = 1;
            }
            freeReplyObject(r);
            calls++;
            assert_true(calls < 10 * N);
        } while (strcmp(cursor, "0") != 0);
        for (int i = 0; i < N; i++) {
            char f[16];
            snprintf(f, sizeof f, "%d", i);
            if (pass < 2 || f[0] == '1') assert_true(seen[i]);
        }
        if (pass == 0) assert_true(calls > 10);
    }
}

static void test_keys_commands(void **state)
{
    redisContext *c = FIX(state)->c;
    set_limits(c, 128, 64);
    INT(c, 2, "HSET h a 1 b 2");
    STATUS(c, "hash", "TYPE h");
    INT(c, 1, "EXPIRE h 100");
    expect_int_range(cmd(c, "TTL h"), 99, 100);
    INT(c, 1, "HSET h c 3");                  /* writes keep the TTL */
    expect_int_range(cmd(c, "TTL h"), 99, 100);
    INT(c, 3, "HDEL h a b c");
    INT(c, 0, "EXISTS h");
    INT(c, -2, "TTL h");
    /* COPY gives an independent hash, in both encodings */
    INT(c, 2, "HSET h a 1 b 2");
    INT(c, 1, "COPY h h2");
    INT(c, 1, "HSET h2 c 3");
    INT(c, 2, "HLEN h");
    INT(c, 3, "HLEN h2");
    set_limits(c, 1, 64);
    INT(c, 1, "HSET t x 1");
    INT(c, 1, "HSET t y 2");
    BULK(c, "hashtable", "OBJECT ENCODING t");
    INT(c, 1, "COPY t t2");
    BULK(c, "hashtable", "OBJECT ENCODING t2");
    INT(c, 1, "HDEL t2 x");
    BULK(c, "1", "HGET t x");
    NIL(c, "HGET t2 x");
    set_limits(c, 128, 64);
    /* RENAME, MOVE, DEL */
    OK(c, "RENAME h h3");
    BULK(c, "1", "HGET h3 a");
    INT(c, 0, "EXISTS h");
    INT(c, 1, "MOVE h3 1");
    OK(c, "SELECT 1");
    BULK(c, "2", "HGET h3 b");
    INT(c, 1, "DEL h3");
    OK(c, "SELECT 0");
    /* SCAN TYPE hash */
    OK(c, "SET s v");
    redisReply *r = cmd(c, "SCAN 0 TYPE hash COUNT 1000");
    assert_int_equal(r->element[1]->elements, 3);    /* h2, t, t2 */
    freeReplyObject(r);
    INT(c, 3, "DEL h2 t t2");
    INT(c, 1, "DBSIZE");
    /* FLUSHALL frees both encodings */
    INT(c, 1, "HSET h a 1");
    set_limits(c, 0, 64);
    INT(c, 1, "HSET t a 1");
    set_limits(c, 128, 64);
    OK(c, "FLUSHALL");
    INT(c, 0, "DBSIZE");
}

static void test_resp3(void **state)
{
    redisContext *c = FIX(state)->c;
    set_limits(c, 128, 64);
    INT(c, 2, "HSET h a 1 b 2");
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    RAW(r, "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n", "HGETALL h");
    RAW(r, "%0\r\n", "HGETALL nokey");
    RAW(r, "*0\r\n", "HKEYS nokey");
    RAW(r, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "HKEYS h");
    RAW(r, "_\r\n", "HGET h nosuch");
    RAW(r, "*2\r\n$1\r\n1\r\n_\r\n", "HMGET h a nosuch");
    RAW(r, "_\r\n", "HRANDFIELD nokey");
    RAW(r, "*0\r\n", "HRANDFIELD nokey 3 WITHVALUES");
    RAW(r, ":1\r\n", "HEXISTS h a");
    RAW(r, "$3\r\n2.5\r\n", "HINCRBYFLOAT h f 2.5");
    RAW(r, "*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nf\r\n$3\r\n2.5\r\n",
        "HSCAN h 0");
    /* WITHVALUES is an array of [field, value] pairs in RESP3 */
    const char *forms[] = { "HRANDFIELD h 3 WITHVALUES", "HRANDFIELD h 2 WITHVALUES",
                            "HRANDFIELD h -4 WITHVALUES", "HRANDFIELD h 1 WITHVALUES" };
    size_t want[] = { 3, 2, 4, 1 };
    for (size_t k = 0; k < 4; k++) {
        raw_cmd(r, forms[k]);
        struct rv *v = raw_reply(r);
        assert_int_equal(v->type, '*');
        assert_int_equal(v->n, want[k]);
        for (size_t i = 0; i < v->n; i++) {
            assert_int_equal(v->elem[i]->type, '*');
            assert_int_equal(v->elem[i]->n, 2);
            assert_int_equal(v->elem[i]->elem[0]->type, '$');
        }
        rv_free(v);
    }
    raw_cmd(r, "HRANDFIELD h -3");
    struct rv *v = raw_reply(r);
    assert_int_equal(v->type, '*');
    assert_int_equal(v->n, 3);
    assert_int_equal(v->elem[0]->type, '$');
    rv_free(v);
    raw_close(r);
}

static void test_redis_benchmark_hset(void **state)
{
    struct fixture *f = FIX(state);
    if (system("command -v redis-benchmark >/dev/null 2>&1") != 0) {
        print_message("[  SKIP    ] redis-benchmark not installed\n");
        skip();
    }
    char sh[512], line[4096], out[8192] = "";
    for (int p = 0; p < 2; p++) {
        snprintf(sh, sizeof sh,
                 "timeout -k 5 60 redis-benchmark -p %d -t hset -n 20000 -r 1000 %s -q 2>&1",
                 f->srv.port, p ? "-P 16" : "");
        FILE *pf = popen(sh, "r");
        assert_non_null(pf);
        out[0] = '\0';
        while (fgets(line, sizeof line, pf))
            if (strlen(out) + strlen(line) < sizeof out) strcat(out, line);
        int st = pclose(pf);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) h_fail("redis-benchmark failed: %s", out);
        if (strstr(out, "ERR") || !strstr(out, "HSET: ") || !strstr(out, "requests per second"))
            h_fail("redis-benchmark -t hset: %s", out);
    }
    redisReply *r = cmd(f->c, "HLEN myhash");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer > 0 && r->integer <= 1000);
    freeReplyObject(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_hset_hget, h_flushall),
        cmocka_unit_test_setup(test_wrongtype, h_flushall),
        cmocka_unit_test_setup(test_hdel_hlen_hexists_hstrlen, h_flushall),
        cmocka_unit_test_setup(test_getall_keys_vals, h_flushall),
        cmocka_unit_test_setup(test_hincrby, h_flushall),
        cmocka_unit_test_setup(test_hincrbyfloat, h_flushall),
        cmocka_unit_test_setup(test_encoding, h_flushall),
        cmocka_unit_test_setup(test_small_and_big_bodies, h_flushall),
        cmocka_unit_test_setup(test_hrandfield, h_flushall),
        cmocka_unit_test_setup(test_hrandfield_huge_negative, h_flushall),
        cmocka_unit_test_setup(test_hscan, h_flushall),
        cmocka_unit_test_setup(test_keys_commands, h_flushall),
        cmocka_unit_test_setup(test_resp3, h_flushall),
        cmocka_unit_test_setup(test_redis_benchmark_hset, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("hash", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
