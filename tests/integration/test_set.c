/*
 * Set commands: SADD SREM SCARD SISMEMBER SMISMEMBER SMEMBERS SPOP
 * SRANDMEMBER SMOVE SINTER SUNION SDIFF SINTERCARD SINTERSTORE SUNIONSTORE
 * SDIFFSTORE SSCAN, their errors, RESP3 shapes, encodings, keys on
 * different shards, and redis-benchmark's SADD and SPOP tests.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two key names whose slots differ in parity (different shards with 2 threads). */
static const char *KA = "{a}set", *KB = "{b}set", *KC = "{c}set";

static void check_parity(void)
{
    unsigned a = h_key_slot(KA, strlen(KA)) % 2, b = h_key_slot(KB, strlen(KB)) % 2;
    if (a == b) h_fail("test keys %s and %s hash to the same parity", KA, KB);
}

static void expect_int_array_(const char *file, int line, redisReply *r, int n, const long long *v)
{
    if (r->type != REDIS_REPLY_ARRAY || (int)r->elements != n)
        h_fail_(file, line, "expected an array of %d integers, got %s", n, reply_repr(r));
    for (int i = 0; i < n; i++)
        if (r->element[i]->type != REDIS_REPLY_INTEGER || r->element[i]->integer != v[i])
            h_fail_(file, line, "element %d: expected %lld, got %s", i, v[i], reply_repr(r));
    freeReplyObject(r);
}
#define expect_ints(r, n, ...) expect_int_array_(__FILE__, __LINE__, (r), (n), (const long long[]){ __VA_ARGS__ })

/* Array reply of n distinct members all in the set `key`. */
static void expect_members_of(redisContext *c, redisReply *r, size_t n, const char *key, bool distinct)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != n)
        h_fail("expected %zu members, got %s", n, reply_repr(r));
    for (size_t i = 0; i < n; i++) {
        redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_STRING) h_fail("not a bulk: %s", reply_repr(r));
        expect_int(cmd(c, "SISMEMBER %s %b", key, e->str, e->len), 1);
        if (distinct)
            for (size_t j = 0; j < i; j++)
                if (strcmp(r->element[j]->str, e->str) == 0) h_fail("repeated member %s", e->str);
    }
    freeReplyObject(r);
}

static void fill_ints(redisContext *c, const char *key, int from, int to)
{
    for (int i = from; i <= to; i += 100) {
        char buf[4096];
        int n = snprintf(buf, sizeof buf, "SADD %s", key);
        for (int j = i; j < i + 100 && j <= to; j++) n += snprintf(buf + n, sizeof buf - (size_t)n, " %d", j);
        freeReplyObject(cmd(c, buf));
    }
}

static void test_sadd_srem_scard(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "SADD s a b c");
    INT(c, 1, "SADD s c d");
    INT(c, 0, "SADD s a a a");
    INT(c, 4, "SCARD s");
    INT(c, 0, "SCARD nosuch");
    INT(c, 2, "SREM s a b x");
    INT(c, 0, "SREM s a");
    INT(c, 0, "SREM nosuch a");
    INT(c, 2, "SREM s c d d");
    INT(c, 0, "EXISTS s");                 /* deleted when empty */
    STATUS(c, "none", "TYPE s");
    INT(c, 2, "SADD s 1 %s", "");          /* empty member */
    INT(c, 1, "SISMEMBER s %s", "");
    STATUS(c, "set", "TYPE s");
    const char bin[] = "a\0b\r\n";
    expect_int(cmd(c, "SADD s %b", bin, sizeof bin - 1), 1);
    expect_int(cmd(c, "SISMEMBER s %b", bin, sizeof bin - 1), 1);
    expect_int(cmd(c, "SISMEMBER s %b", bin, (size_t)1), 0);
    /* integers and their non-canonical spellings are different members */
    INT(c, 3, "SADD n 1 01 +1");
    INT(c, 1, "SADD n -0");
    INT(c, 4, "SCARD n");
    OK(c, "SET str x");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SADD str a");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SREM str a");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SCARD str");
    ERR(c, "ERR wrong number of arguments for 'sadd' command", "SADD s");
    ERR(c, "ERR wrong number of arguments for 'srem' command", "SREM s");
    ERR(c, "ERR wrong number of arguments for 'scard' command", "SCARD s x");
    /* TTL survives changes, and the key expires as any other */
    OK(c, "SET dummy 1");
    INT(c, 3, "SADD t 1 2 3");
    INT(c, 1, "EXPIRE t 100");
    INT(c, 1, "SADD t 4");
    expect_int_range(cmd(c, "TTL t"), 99, 100);
    INT(c, 1, "PEXPIRE t 1");
    h_sleep_ms(20);
    INT(c, 0, "SCARD t");
}

static void test_membership(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "SADD s a 1 b");
    INT(c, 1, "SISMEMBER s a");
    INT(c, 1, "SISMEMBER s 1");
    INT(c, 0, "SISMEMBER s 01");
    INT(c, 0, "SISMEMBER s z");
    INT(c, 0, "SISMEMBER nosuch a");
    expect_ints(cmd(c, "SMISMEMBER s a z 1 a"), 4, 1, 0, 1, 1);
    expect_ints(cmd(c, "SMISMEMBER nosuch a b"), 2, 0, 0);
    expect_bulks_unordered(cmd(c, "SMEMBERS s"), 3, "a", "1", "b");
    expect_empty_array(cmd(c, "SMEMBERS nosuch"));
    OK(c, "SET str x");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SISMEMBER str a");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SMISMEMBER str a");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SMEMBERS str");
    ERR(c, "ERR wrong number of arguments for 'sismember' command", "SISMEMBER s");
    ERR(c, "ERR wrong number of arguments for 'smismember' command", "SMISMEMBER s");
    ERR(c, "ERR wrong number of arguments for 'smembers' command", "SMEMBERS");
    /* the three encodings answer alike */
    fill_ints(c, "big", 1, 1000);
    INT(c, 1, "SISMEMBER big 1000");
    INT(c, 0, "SISMEMBER big 1001");
    INT(c, 1, "SADD big x");
    INT(c, 1001, "SCARD big");
    redisReply *r = cmd(c, "SMEMBERS big");
    assert_int_equal(r->elements, 1001);
    freeReplyObject(r);
}

static void test_spop(void **state)
{
    redisContext *c = FIX(state)->c;
    NIL(c, "SPOP nosuch");
    expect_empty_array(cmd(c, "SPOP nosuch 5"));
    INT(c, 1, "SADD s a");
    BULK(c, "a", "SPOP s");
    INT(c, 0, "EXISTS s");
    INT(c, 3, "SADD s a b c");
    expect_empty_array(cmd(c, "SPOP s 0"));
    ERR(c, "ERR value is out of range, must be positive", "SPOP s -1");
    ERR(c, "ERR value is out of range, must be positive", "SPOP s x");
    ERR(c, "ERR value is out of range, must be positive", "SPOP nosuch -1");
    ERR(c, "ERR syntax error", "SPOP s 1 2");
    redisReply *r = cmd(c, "SPOP s 1");
    assert_int_equal(r->elements, 1);
    freeReplyObject(r);
    INT(c, 2, "SCARD s");
    r = cmd(c, "SPOP s 9223372036854775807");     /* huge: just everything */
    assert_int_equal(r->elements, 2);
    freeReplyObject(r);
    INT(c, 0, "EXISTS s");
    /* each strategy, for each encoding: pops are distinct and gone */
    for (int f = 0; f < 3; f++) {
        for (int pop = 0; pop < 3; pop++) {
            int n = f == 2 ? 300 : 50;
            freeReplyObject(cmd(c, "DEL s"));
            if (f == 0) fill_ints(c, "s", 1, n);
            else for (int i = 0; i < n; i++) freeReplyObject(cmd(c, "SADD s %s%d", f == 1 ? "w" : "longer-member-", i));
            int count = pop == 0 ? 3 : pop == 1 ? n - 3 : n / 2;
            r = cmd(c, "SPOP s %d", count);
            assert_int_equal(r->type, REDIS_REPLY_ARRAY);
            assert_int_equal(r->elements, (size_t)count);
            for (size_t i = 0; i < r->elements; i++) {
                expect_int(cmd(c, "SISMEMBER s %s", r->element[i]->str), 0);
                for (size_t j = 0; j < i; j++) assert_string_not_equal(r->element[i]->str, r->element[j]->str);
            }
            freeReplyObject(r);
            INT(c, n - count, "SCARD s");
        }
    }
    OK(c, "SET str x");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SPOP str");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SPOP str 2");
    ERR(c, "ERR wrong number of arguments for 'spop' command", "SPOP");
}

static void test_srandmember(void **state)
{
    redisContext *c = FIX(state)->c;
    NIL(c, "SRANDMEMBER nosuch");
    expect_empty_array(cmd(c, "SRANDMEMBER nosuch 5"));
    expect_empty_array(cmd(c, "SRANDMEMBER nosuch -5"));
    INT(c, 3, "SADD s a b c");
    expect_empty_array(cmd(c, "SRANDMEMBER s 0"));
    ERR(c, "ERR value is not an integer or out of range", "SRANDMEMBER s x");
    ERR(c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
        "SRANDMEMBER s -9223372036854775808");
    ERR(c, "ERR syntax error", "SRANDMEMBER s 1 2");
    expect_members_of(c, cmd(c, "SRANDMEMBER s 2"), 2, "s", true);
    expect_members_of(c, cmd(c, "SRANDMEMBER s 3"), 3, "s", true);
    expect_members_of(c, cmd(c, "SRANDMEMBER s 9223372036854775807"), 3, "s", true);
    expect_members_of(c, cmd(c, "SRANDMEMBER s -10"), 10, "s", false);
    INT(c, 3, "SCARD s");
    redisReply *r = cmd(c, "SRANDMEMBER s");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    freeReplyObject(r);
    /* both strategies on a hashtable and an intset */
    fill_ints(c, "big", 1, 1000);
    expect_members_of(c, cmd(c, "SRANDMEMBER big 10"), 10, "big", true);
    expect_members_of(c, cmd(c, "SRANDMEMBER big 900"), 900, "big", true);
    fill_ints(c, "is", 1, 100);
    expect_members_of(c, cmd(c, "SRANDMEMBER is 10"), 10, "is", true);
    expect_members_of(c, cmd(c, "SRANDMEMBER is 90"), 90, "is", true);
    INT(c, 100, "SCARD is");
    OK(c, "SET str x");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SRANDMEMBER str");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SRANDMEMBER str 2");
}

static void test_smove(void **state)
{
    redisContext *c = FIX(state)->c;
    check_parity();
    INT(c, 2, "SADD %s a b", KA);
    INT(c, 1, "SMOVE %s %s a", KA, KB);
    expect_bulks(cmd(c, "SMEMBERS %s", KB), 1, "a");
    INT(c, 0, "SMOVE %s %s a", KA, KB);    /* no longer there */
    INT(c, 1, "SMOVE %s %s b", KA, KB);
    INT(c, 0, "EXISTS %s", KA);            /* emptied source deleted */
    INT(c, 2, "SCARD %s", KB);
    INT(c, 0, "SMOVE nosuch %s a", KB);
    INT(c, 1, "SMOVE %s %s a", KB, KB);    /* same key: membership */
    INT(c, 0, "SMOVE %s %s z", KB, KB);
    INT(c, 2, "SCARD %s", KB);
    INT(c, 1, "SADD %s b", KA);
    INT(c, 1, "SMOVE %s %s b", KA, KB);    /* already in destination */
    INT(c, 2, "SCARD %s", KB);
    INT(c, 0, "EXISTS %s", KA);
    OK(c, "SET str x");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SMOVE %s str a", KB);
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SMOVE str %s a", KB);
    INT(c, 0, "SMOVE nosuch str a");       /* a missing source wins */
    INT(c, 2, "SCARD %s", KB);
    ERR(c, "ERR wrong number of arguments for 'smove' command", "SMOVE a b");
}

static void test_algebra(void **state)
{
    redisContext *c = FIX(state)->c;
    check_parity();
    INT(c, 4, "SADD %s a b c 1", KA);
    INT(c, 4, "SADD %s b c d 1", KB);
    INT(c, 2, "SADD %s c 1", KC);
    expect_bulks_unordered(cmd(c, "SINTER %s %s", KA, KB), 3, "b", "c", "1");
    expect_bulks_unordered(cmd(c, "SINTER %s %s %s", KA, KB, KC), 2, "c", "1");
    expect_bulks_unordered(cmd(c, "SINTER %s", KA), 4, "a", "b", "c", "1");
    expect_bulks_unordered(cmd(c, "SINTER %s %s", KA, KA), 4, "a", "b", "c", "1");
    expect_empty_array(cmd(c, "SINTER %s nosuch", KA));
    expect_bulks_unordered(cmd(c, "SUNION %s %s nosuch", KA, KB), 5, "a", "b", "c", "d", "1");
    expect_empty_array(cmd(c, "SUNION nosuch"));
    expect_bulks_unordered(cmd(c, "SDIFF %s %s", KA, KB), 1, "a");
    expect_bulks_unordered(cmd(c, "SDIFF %s nosuch %s", KB, KC), 2, "b", "d");
    expect_empty_array(cmd(c, "SDIFF nosuch %s", KA));
    expect_empty_array(cmd(c, "SDIFF %s %s", KA, KA));
    INT(c, 3, "SINTERCARD 2 %s %s", KA, KB);
    INT(c, 2, "SINTERCARD 2 %s %s LIMIT 2", KA, KB);
    INT(c, 3, "SINTERCARD 2 %s %s limit 0", KA, KB);
    INT(c, 3, "SINTERCARD 2 %s %s LIMIT 10", KA, KB);
    INT(c, 0, "SINTERCARD 2 %s nosuch", KA);
    INT(c, 4, "SINTERCARD 1 %s", KA);
    ERR(c, "ERR numkeys should be greater than 0", "SINTERCARD 0 %s", KA);
    ERR(c, "ERR numkeys should be greater than 0", "SINTERCARD x %s", KA);
    ERR(c, "ERR Number of keys can't be greater than number of args", "SINTERCARD 3 %s %s", KA, KB);
    ERR(c, "ERR LIMIT can't be negative", "SINTERCARD 1 %s LIMIT -1", KA);
    ERR(c, "ERR LIMIT can't be negative", "SINTERCARD 1 %s LIMIT x", KA);
    ERR(c, "ERR syntax error", "SINTERCARD 1 %s LIMIT", KA);
    ERR(c, "ERR syntax error", "SINTERCARD 1 %s foo 1", KA);
    /* stores: the destination is replaced whatever it held, TTL dropped */
    OK(c, "SET dst x EX 100");
    INT(c, 3, "SINTERSTORE dst %s %s", KA, KB);
    expect_bulks_unordered(cmd(c, "SMEMBERS dst"), 3, "b", "c", "1");
    INT(c, -1, "TTL dst");
    INT(c, 5, "SUNIONSTORE dst %s %s", KA, KB);
    INT(c, 5, "SCARD dst");
    INT(c, 1, "SDIFFSTORE dst %s %s", KA, KB);
    expect_bulks(cmd(c, "SMEMBERS dst"), 1, "a");
    INT(c, 0, "SINTERSTORE dst %s nosuch", KA);   /* empty result deletes */
    INT(c, 0, "EXISTS dst");
    INT(c, 0, "SUNIONSTORE dst nosuch");
    INT(c, 0, "SDIFFSTORE dst %s %s", KA, KA);
    INT(c, 0, "EXISTS dst");
    /* a destination that is also a source */
    INT(c, 3, "SINTERSTORE %s %s %s", KA, KA, KB);
    expect_bulks_unordered(cmd(c, "SMEMBERS %s", KA), 3, "b", "c", "1");
    INT(c, 4, "SUNIONSTORE %s %s %s", KC, KC, KB);
    /* store across shards into the other shard's key */
    INT(c, 1, "SDIFFSTORE %s %s %s", KB, KB, KA);
    expect_bulks(cmd(c, "SMEMBERS %s", KB), 1, "d");
    OK(c, "SET str x");
    const char *wt = "WRONGTYPE Operation against a key holding the wrong kind of value";
    ERR(c, wt, "SINTER %s str", KA);
    ERR(c, wt, "SINTER nosuch str");
    ERR(c, wt, "SUNION %s str", KA);
    ERR(c, wt, "SDIFF %s str", KA);
    ERR(c, wt, "SDIFF nosuch str");
    ERR(c, wt, "SINTERCARD 2 %s str", KA);
    ERR(c, wt, "SINTERSTORE dst %s str", KA);
    ERR(c, wt, "SUNIONSTORE dst str");
    ERR(c, wt, "SDIFFSTORE dst str");
    INT(c, 1, "SINTERSTORE str %s", KB);        /* a string destination is fine */
    STATUS(c, "set", "TYPE str");
    ERR(c, "ERR wrong number of arguments for 'sinter' command", "SINTER");
    ERR(c, "ERR wrong number of arguments for 'sinterstore' command", "SINTERSTORE dst");
    ERR(c, "ERR wrong number of arguments for 'sintercard' command", "SINTERCARD 1");
    /* bigger sets of mixed encodings */
    fill_ints(c, "i1", 1, 1000);
    fill_ints(c, "i2", 501, 1500);
    INT(c, 500, "SINTERSTORE x i1 i2");
    INT(c, 1500, "SUNIONSTORE x i1 i2");
    INT(c, 500, "SDIFFSTORE x i1 i2");
    INT(c, 500, "SINTERCARD 2 i1 i2");
    INT(c, 100, "SINTERCARD 2 i1 i2 LIMIT 100");
}

static void test_sscan(void **state)
{
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "SSCAN nosuch 0");
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "0");
    assert_int_equal(r->element[1]->elements, 0);
    freeReplyObject(r);
    INT(c, 3, "SADD s 1 2 30");
    r = cmd(c, "SSCAN s 0 COUNT 1");     /* compact: everything at once */
    assert_string_equal(r->element[0]->str, "0");
    assert_int_equal(r->element[1]->elements, 3);
    freeReplyObject(r);
    r = cmd(c, "SSCAN s 0 MATCH 3*");
    assert_int_equal(r->element[1]->elements, 1);
    assert_string_equal(r->element[1]->element[0]->str, "30");
    freeReplyObject(r);
    ERR(c, "ERR invalid cursor", "SSCAN s x");
    ERR(c, "ERR invalid cursor", "SSCAN s -1x");
    ERR(c, "ERR syntax error", "SSCAN s 0 COUNT 0");
    ERR(c, "ERR value is not an integer or out of range", "SSCAN s 0 COUNT x");
    ERR(c, "ERR syntax error", "SSCAN s 0 FOO 1");
    ERR(c, "ERR syntax error", "SSCAN s 0 MATCH");
    OK(c, "SET str x");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "SSCAN str 0");
    ERR(c, "ERR wrong number of arguments for 'sscan' command", "SSCAN s");
    /* a big set: a full scan returns every member, in several calls */
    fill_ints(c, "big", 1, 2000);
    INT(c, 1, "SADD big word");
    char *seen = calloc(2001, 1);
    unsigned long long cursor = 0;
    int calls = 0, matched = 0;
    do {
        r = cmd(c, "SSCAN big %llu COUNT 50", cursor);
        cursor = strtoull(r->element[0]->str, NULL, 10);
        for (size_t i = 0; i < r->element[1]->elements; i++) {
            long v = strtol(r->element[1]->element[i]->str, NULL, 10);
            if (v >= 1 && v <= 2000) seen[v] = 1;
        }
        freeReplyObject(r);
        calls++;
    } while (cursor != 0 && calls < 10000);
    for (int i = 1; i <= 2000; i++) assert_int_equal(seen[i], 1);
    assert_true(calls > 2);
    free(seen);
    cursor = 0;
    do {
        r = cmd(c, "SSCAN big %llu MATCH 19?? COUNT 100", cursor);
        cursor = strtoull(r->element[0]->str, NULL, 10);
        matched += (int)r->element[1]->elements;
        freeReplyObject(r);
    } while (cursor != 0);
    assert_int_equal(matched, 100);
}

/* A small set lives inside its key's entry, a bigger intset apart from it
 * (entry.h, ENTRY_INLINE_MAX = 256 bytes): members and TTL survive each
 * crossing, both ways, and SMOVE between sizes. */
static void test_small_and_big_bodies(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 2, "SADD s 1 2");
    INT(c, 1, "EXPIRE s 1000");
    for (int i = 0; i < 100; i++) INT(c, 1, "SADD s %d", 1000000 + i);   /* 4-byte ints: ~410 B */
    INT(c, 102, "SCARD s");
    INT(c, 1, "SISMEMBER s 1000050");
    for (int i = 0; i < 100; i++) INT(c, 1, "SREM s %d", 1000000 + i);
    expect_bulks(cmd(c, "SMEMBERS s"), 2, "1", "2");
    expect_int_range(cmd(c, "TTL s"), 999, 1000);
    INT(c, 0, "SADD s 1");                                               /* no change */
    INT(c, 0, "SREM s 3");
    expect_empty_array(cmd(c, "SPOP s 0"));
    expect_int_range(cmd(c, "TTL s"), 999, 1000);
    for (int i = 0; i < 100; i++) INT(c, 1, "SADD big %d", 1000000 + i);
    INT(c, 1, "SMOVE s big 1");
    INT(c, 1, "SMOVE big s 1000007");
    expect_bulks_unordered(cmd(c, "SMEMBERS s"), 2, "2", "1000007");
    INT(c, 100, "SCARD big");
    INT(c, 1, "SISMEMBER big 1");
    expect_int_range(cmd(c, "TTL s"), 999, 1000);
    OK(c, "RENAME s s2");
    INT(c, 1, "COPY s2 s3");
    INT(c, 2, "SCARD s3");
    INT(c, 3, "DEL s2 s3 big");
}

static void test_encodings(void **state)
{
    redisContext *c = FIX(state)->c;
    SKIP_ON_REDIS();   /* redis-server 7.0 has no listpack sets (7.2 does) */
    INT(c, 3, "SADD s 1 2 3");
    BULK(c, "intset", "OBJECT ENCODING s");
    INT(c, 1, "SADD s a");
    BULK(c, "listpack", "OBJECT ENCODING s");
    INT(c, 1, "SADD w hello");
    BULK(c, "listpack", "OBJECT ENCODING w");
    char longm[100];
    memset(longm, 'x', 65);
    longm[65] = '\0';
    INT(c, 1, "SADD w %s", longm);
    BULK(c, "hashtable", "OBJECT ENCODING w");
    INT(c, 1, "SREM w %s", longm);
    BULK(c, "hashtable", "OBJECT ENCODING w");   /* never back */
    fill_ints(c, "is", 1, 512);
    BULK(c, "intset", "OBJECT ENCODING is");
    INT(c, 1, "SADD is 513");
    BULK(c, "hashtable", "OBJECT ENCODING is");
    fill_ints(c, "lp", 1, 128);
    INT(c, 1, "SADD lp x");       /* 129 members: no listpack */
    BULK(c, "hashtable", "OBJECT ENCODING lp");
    OK(c, "CONFIG SET set-max-intset-entries 4");
    OK(c, "CONFIG SET set-max-listpack-entries 6");
    OK(c, "CONFIG SET set-max-listpack-value 3");
    INT(c, 5, "SADD many 1 2 3 4 5");  /* more than 4 in one SADD: straight to listpack */
    BULK(c, "listpack", "OBJECT ENCODING many");
    INT(c, 7, "SADD seven 1 2 3 4 5 6 7");
    BULK(c, "hashtable", "OBJECT ENCODING seven");
    INT(c, 1, "SADD l abc");
    INT(c, 1, "SADD l abcd");
    BULK(c, "hashtable", "OBJECT ENCODING l");
    /* results of SINTERSTORE/SUNIONSTORE are built from an intset */
    INT(c, 7, "SUNIONSTORE u seven");
    BULK(c, "hashtable", "OBJECT ENCODING u");
    INT(c, 2, "SADD small 1 2");
    INT(c, 2, "SINTERSTORE u seven small");
    BULK(c, "intset", "OBJECT ENCODING u");
    /* DUMP-less copies keep contents and encoding */
    INT(c, 1, "COPY seven seven2");
    INT(c, 7, "SCARD seven2");
    BULK(c, "hashtable", "OBJECT ENCODING seven2");
    INT(c, 1, "COPY many many2");
    BULK(c, "listpack", "OBJECT ENCODING many2");
    OK(c, "CONFIG SET set-max-intset-entries 512");
    OK(c, "CONFIG SET set-max-listpack-entries 128");
    OK(c, "CONFIG SET set-max-listpack-value 64");
    /* SCAN TYPE sees sets */
    unsigned long long cursor = 0;
    size_t found = 0;
    do {
        redisReply *r = cmd(c, "SCAN %llu TYPE set COUNT 1000", cursor);
        cursor = strtoull(r->element[0]->str, NULL, 10);
        found += r->element[1]->elements;
        freeReplyObject(r);
    } while (cursor);
    assert_int_equal(found, 11);
}

/* Every write may move the set's structure or change its encoding (the
 * entry holds the structure's own pointer): grow and shrink sets one member
 * at a time with each writing command and read them back after each step. */
static void test_moves(void **state)
{
    redisContext *c = FIX(state)->c;
    /* SADD one by one: intset grows and widens, then listpack, then hashtable */
    for (int i = 0; i < 200; i++) {
        INT(c, 1, "SADD g %d", i * 1000);
        INT(c, i + 1, "SCARD g");
        INT(c, 1, "SISMEMBER g %d", i * 1000);
    }
    INT(c, 1, "SADD g 5000000000");
    INT(c, 1, "SADD g m");
    INT(c, 202, "SCARD g");
    for (int i = 0; i < 200; i++) INT(c, 1, "SREM g %d", i * 1000);
    INT(c, 2, "SCARD g");
    INT(c, 1, "SISMEMBER g m");
    /* listpack: SADD, SREM, SPOP one by one, SMOVE in and out */
    for (int i = 0; i < 50; i++) INT(c, 1, "SADD lp m%d", i);
    for (int i = 0; i < 50; i += 2) INT(c, 1, "SREM lp m%d", i);
    INT(c, 25, "SCARD lp");
    for (int i = 1; i < 50; i += 2) INT(c, 1, "SMOVE lp lp2 m%d", i);
    INT(c, 0, "EXISTS lp");
    INT(c, 25, "SCARD lp2");
    for (int i = 0; i < 10; i++) INT(c, 0, "SMOVE i1 i2 %d", i);   /* absent source */
    for (int i = 0; i < 10; i++) INT(c, 1, "SADD i1 %d", i);
    for (int i = 0; i < 10; i++) INT(c, 1, "SMOVE i1 i2 %d", i);
    INT(c, 0, "EXISTS i1");
    INT(c, 10, "SCARD i2");
    for (int i = 24; i >= 0; i--) {
        freeReplyObject(cmd(c, "SPOP lp2"));
        INT(c, i, "SCARD lp2");
    }
    /* SPOP with a count: few popped, then most popped (rest rebuilt) */
    for (int k = 0; k < 2; k++) {
        const char *key = k ? "sp1" : "sp0";
        for (int i = 0; i < 40; i++) INT(c, 1, k ? "SADD %s x%d" : "SADD %s %d", key, i);
        freeReplyObject(cmd(c, "SPOP %s 3", key));
        INT(c, 37, "SCARD %s", key);
        freeReplyObject(cmd(c, "SPOP %s 35", key));
        INT(c, 2, "SCARD %s", key);
        redisReply *r = cmd(c, "SMEMBERS %s", key);
        expect_members_of(c, r, 2, key, true);
        INT(c, 1, k ? "SADD %s y" : "SADD %s 1000", key);
        INT(c, 3, "SCARD %s", key);
    }
}

static void test_resp3(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    RAW(r, ":1\r\n", "SADD s a");
    RAW(r, "~1\r\n$1\r\na\r\n", "SMEMBERS s");
    RAW(r, "~0\r\n", "SMEMBERS nosuch");
    RAW(r, "~1\r\n$1\r\na\r\n", "SINTER s");
    RAW(r, "~1\r\n$1\r\na\r\n", "SUNION s nosuch");
    RAW(r, "~0\r\n", "SDIFF s s");
    RAW(r, "*1\r\n$1\r\na\r\n", "SRANDMEMBER s 5");
    RAW(r, "*2\r\n$1\r\na\r\n$1\r\na\r\n", "SRANDMEMBER s -2");
    RAW(r, "*0\r\n", "SRANDMEMBER nosuch 2");
    RAW(r, "_\r\n", "SRANDMEMBER nosuch");
    RAW(r, "*2\r\n:1\r\n:0\r\n", "SMISMEMBER s a b");
    RAW(r, ":1\r\n", "SISMEMBER s a");
    RAW(r, "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n", "SSCAN s 0");
    RAW(r, "~0\r\n", "SPOP s 0");
    RAW(r, "~0\r\n", "SPOP nosuch 3");
    RAW(r, "_\r\n", "SPOP nosuch");
    RAW(r, "~1\r\n$1\r\na\r\n", "SPOP s 3");
    RAW(r, ":0\r\n", "EXISTS s");
    RAW(r, ":2\r\n", "SADD s b c");
    RAW(r, ":1\r\n", "SADD {x}b b");
    RAW(r, "~1\r\n$1\r\nc\r\n", "SDIFF s nosuch2 {x}b");
    RAW(r, "_\r\n", "SPOP nosuch");
    raw_close(r);
}

static void test_benchmark(void **state)
{
    char cmdline[256];
    snprintf(cmdline, sizeof cmdline, "redis-benchmark -p %d -t sadd,spop -n 20000 -P 16 -q 2>&1",
             FIX(state)->srv.port);
    FILE *p = popen(cmdline, "r");
    assert_non_null(p);
    char line[4096];
    int sadd = 0, spop = 0;
    while (fgets(line, sizeof line, p)) {
        /* -q rewrites progress with \r; look at what each line ends with */
        if (strstr(line, "SADD: ") && strstr(line, "requests per second")) sadd++;
        if (strstr(line, "SPOP: ") && strstr(line, "requests per second")) spop++;
        assert_null(strstr(line, "Error"));
    }
    assert_int_equal(pclose(p), 0);
    assert_int_equal(sadd, 1);
    assert_int_equal(spop, 1);
    redisContext *c = FIX(state)->c;
    INT(c, 0, "EXISTS myset");    /* SPOP emptied what SADD filled */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_sadd_srem_scard, h_flushall),
        cmocka_unit_test_setup(test_membership, h_flushall),
        cmocka_unit_test_setup(test_spop, h_flushall),
        cmocka_unit_test_setup(test_srandmember, h_flushall),
        cmocka_unit_test_setup(test_smove, h_flushall),
        cmocka_unit_test_setup(test_algebra, h_flushall),
        cmocka_unit_test_setup(test_sscan, h_flushall),
        cmocka_unit_test_setup(test_small_and_big_bodies, h_flushall),
        cmocka_unit_test_setup(test_encodings, h_flushall),
        cmocka_unit_test_setup(test_moves, h_flushall),
        cmocka_unit_test_setup(test_resp3, h_flushall),
        cmocka_unit_test_setup(test_benchmark, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("set", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
