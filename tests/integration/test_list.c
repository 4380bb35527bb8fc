/*
 * List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP (with count) LLEN LRANGE
 * LINDEX LSET LREM LTRIM LINSERT LPOS (RANK COUNT MAXLEN) LMOVE RPOPLPUSH
 * LMPOP, their errors, RESP3 shapes, keys spread over shards, and OBJECT
 * ENCODING across list-max-listpack-size.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define NOT_INT "ERR value is not an integer or out of range"
#define POSITIVE "ERR value is out of range, must be positive"
#define SYNTAX "ERR syntax error"

static void test_push_pop(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 1, "LPUSH l a");
    INT(c, 3, "LPUSH l b c");
    INT(c, 5, "RPUSH l d e");
    expect_bulks(cmd(c, "LRANGE l 0 -1"), 5, "c", "b", "a", "d", "e");
    INT(c, 5, "LLEN l");
    INT(c, 0, "LLEN nokey");
    STATUS(c, "list", "TYPE l");
    INT(c, 0, "LPUSHX nokey a");
    INT(c, 0, "RPUSHX nokey a b");
    INT(c, 0, "EXISTS nokey");
    INT(c, 6, "LPUSHX l x");
    INT(c, 8, "RPUSHX l y z");
    expect_bulks(cmd(c, "LRANGE l 0 -1"), 8, "x", "c", "b", "a", "d", "e", "y", "z");
    BULK(c, "x", "LPOP l");
    BULK(c, "z", "RPOP l");
    expect_bulks(cmd(c, "LPOP l 2"), 2, "c", "b");
    expect_bulks(cmd(c, "RPOP l 2"), 2, "y", "e");
    expect_empty_array(cmd(c, "LPOP l 0"));
    expect_bulks(cmd(c, "RPOP l 100"), 2, "d", "a");
    INT(c, 0, "EXISTS l");
    NIL(c, "LPOP l");
    NIL(c, "RPOP l");
    redisReply *r = cmd(c, "LPOP l 1");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    r = cmd(c, "RPOP l 0");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);

    /* integers and binary-safe values round-trip byte for byte */
    const char bin[] = "a\0b\r\n";
    INT(c, 8, "RPUSH n 0 -1 12345678901234 9223372036854775807 -9223372036854775808 007 1.5 %s", "");
    INT(c, 9, "RPUSH n %b", bin, sizeof bin - 1);
    expect_bulks(cmd(c, "LRANGE n 0 7"), 8, "0", "-1", "12345678901234", "9223372036854775807",
                 "-9223372036854775808", "007", "1.5", "");
    expect_bulk_len(cmd(c, "RPOP n"), bin, sizeof bin - 1);
    BULK(c, "", "RPOP n");
    BULK(c, "0", "LPOP n");

    /* errors */
    OK(c, "SET s v");
    ERR(c, WRONGTYPE, "LPUSH s a");
    ERR(c, WRONGTYPE, "RPUSHX s a");
    ERR(c, WRONGTYPE, "LPOP s");
    ERR(c, WRONGTYPE, "RPOP s 2");
    ERR(c, WRONGTYPE, "LLEN s");
    ERR(c, POSITIVE, "LPOP n -1");
    ERR(c, POSITIVE, "RPOP n x");
    ERR(c, POSITIVE, "LPOP s -1");   /* count checked before the type */
    ERR(c, "ERR wrong number of arguments for 'lpop' command", "LPOP n 1 2");
    ERR(c, "ERR wrong number of arguments for 'lpush' command", "LPUSH n");
    ERR(c, "ERR wrong number of arguments for 'rpushx' command", "RPUSHX n");
    ERR(c, "ERR wrong number of arguments for 'llen' command", "LLEN");
}

static void test_lrange_lindex(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 6, "RPUSH l a b c d e f");
    expect_bulks(cmd(c, "LRANGE l 0 2"), 3, "a", "b", "c");
    expect_bulks(cmd(c, "LRANGE l -2 -1"), 2, "e", "f");
    expect_bulks(cmd(c, "LRANGE l -100 1"), 2, "a", "b");
    expect_bulks(cmd(c, "LRANGE l 4 100"), 2, "e", "f");
    expect_empty_array(cmd(c, "LRANGE l 3 2"));
    expect_empty_array(cmd(c, "LRANGE l 6 10"));
    expect_empty_array(cmd(c, "LRANGE l -100 -50"));
    expect_bulks(cmd(c, "LRANGE l -9223372036854775808 9223372036854775807"), 6, "a", "b", "c", "d", "e", "f");
    expect_empty_array(cmd(c, "LRANGE nokey 0 -1"));
    BULK(c, "a", "LINDEX l 0");
    BULK(c, "f", "LINDEX l -1");
    BULK(c, "c", "LINDEX l 2");
    NIL(c, "LINDEX l 6");
    NIL(c, "LINDEX l -7");
    NIL(c, "LINDEX nokey 0");
    NIL(c, "LINDEX nokey x");        /* the key is looked up first */
    ERR(c, NOT_INT, "LINDEX l x");
    ERR(c, NOT_INT, "LRANGE l x 1");
    ERR(c, NOT_INT, "LRANGE nokey 0 1.5");
    OK(c, "SET s v");
    ERR(c, WRONGTYPE, "LRANGE s 0 -1");
    ERR(c, WRONGTYPE, "LINDEX s 0");
    ERR(c, "ERR wrong number of arguments for 'lrange' command", "LRANGE l 0");
    ERR(c, "ERR wrong number of arguments for 'lindex' command", "LINDEX l");

    /* a long list over many nodes */
    for (int i = 0; i < 2000; i += 100) {
        const char *argv[102];
        size_t lens[102];
        char buf[100][16];
        argv[0] = "RPUSH"; lens[0] = 5;
        argv[1] = "big"; lens[1] = 3;
        for (int j = 0; j < 100; j++) {
            lens[j + 2] = (size_t)snprintf(buf[j], sizeof buf[j], "v%d", i + j);
            argv[j + 2] = buf[j];
        }
        expect_int(cmdv(c, 102, argv, lens), i + 100);
    }
    BULK(c, "v1234", "LINDEX big 1234");
    BULK(c, "v1000", "LINDEX big -1000");
    redisReply *r = cmd(c, "LRANGE big 500 1499");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 1000);
    for (size_t i = 0; i < r->elements; i++) {
        char want[16];
        snprintf(want, sizeof want, "v%zu", i + 500);
        assert_string_equal(r->element[i]->str, want);
    }
    freeReplyObject(r);
}

static void test_lset_lrem_ltrim(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 5, "RPUSH l a b c d e");
    OK(c, "LSET l 0 A");
    OK(c, "LSET l -1 E");
    OK(c, "LSET l 2 %s", "a much longer element than the others, to change its size");
    expect_bulks(cmd(c, "LRANGE l 0 -1"), 5, "A", "b", "a much longer element than the others, to change its size", "d", "E");
    OK(c, "LSET l 2 7");
    BULK(c, "7", "LINDEX l 2");
    ERR(c, "ERR index out of range", "LSET l 5 x");
    ERR(c, "ERR index out of range", "LSET l -6 x");
    ERR(c, "ERR no such key", "LSET nokey 0 x");
    ERR(c, "ERR no such key", "LSET nokey x x");
    ERR(c, NOT_INT, "LSET l x x");

    INT(c, 9, "RPUSH r a b a c a d a e a");
    INT(c, 2, "LREM r 2 a");
    expect_bulks(cmd(c, "LRANGE r 0 -1"), 7, "b", "c", "a", "d", "a", "e", "a");
    INT(c, 2, "LREM r -2 a");
    expect_bulks(cmd(c, "LRANGE r 0 -1"), 5, "b", "c", "a", "d", "e");
    INT(c, 0, "LREM r 0 zz");
    INT(c, 1, "LREM r 0 a");
    INT(c, 0, "LREM nokey 0 a");
    INT(c, 3, "RPUSH one x x x");
    INT(c, 3, "LREM one 0 x");
    INT(c, 0, "EXISTS one");
    INT(c, 4, "RPUSH nums 1 01 1 10");
    INT(c, 2, "LREM nums 0 1");
    expect_bulks(cmd(c, "LRANGE nums 0 -1"), 2, "01", "10");
    ERR(c, NOT_INT, "LREM r x a");
    ERR(c, NOT_INT, "LREM nokey x a");

    INT(c, 6, "RPUSH t a b c d e f");
    OK(c, "LTRIM t 1 -2");
    expect_bulks(cmd(c, "LRANGE t 0 -1"), 4, "b", "c", "d", "e");
    OK(c, "LTRIM t -100 100");
    INT(c, 4, "LLEN t");
    OK(c, "LTRIM t 1 1");
    expect_bulks(cmd(c, "LRANGE t 0 -1"), 1, "c");
    OK(c, "LTRIM t 2 1");
    INT(c, 0, "EXISTS t");
    OK(c, "LTRIM nokey 0 1");
    INT(c, 3, "RPUSH t a b c");
    OK(c, "LTRIM t 5 10");
    INT(c, 0, "EXISTS t");
    ERR(c, NOT_INT, "LTRIM nokey x 1");
    ERR(c, NOT_INT, "LTRIM t 0 y");

    OK(c, "SET s v");
    ERR(c, WRONGTYPE, "LSET s 0 x");
    ERR(c, WRONGTYPE, "LREM s 0 x");
    ERR(c, WRONGTYPE, "LTRIM s 0 1");
}

static void test_linsert(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "RPUSH l a b c");
    INT(c, 4, "LINSERT l BEFORE b x");
    INT(c, 5, "LINSERT l after c y");
    INT(c, 6, "LINSERT l BeFoRe a 5");
    expect_bulks(cmd(c, "LRANGE l 0 -1"), 6, "5", "a", "x", "b", "c", "y");
    INT(c, -1, "LINSERT l BEFORE zz q");
    INT(c, 7, "LINSERT l AFTER 5 z");
    BULK(c, "z", "LINDEX l 1");
    INT(c, 0, "LINSERT nokey BEFORE a b");
    INT(c, 0, "EXISTS nokey");
    ERR(c, SYNTAX, "LINSERT l MIDDLE a b");
    ERR(c, SYNTAX, "LINSERT nokey MIDDLE a b");
    OK(c, "SET s v");
    ERR(c, WRONGTYPE, "LINSERT s BEFORE a b");
    ERR(c, SYNTAX, "LINSERT s MIDDLE a b");
    ERR(c, "ERR wrong number of arguments for 'linsert' command", "LINSERT l BEFORE a");
}

static void test_lpos(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 8, "RPUSH l a b c 1 2 3 c c");
    INT(c, 2, "LPOS l c");
    INT(c, 3, "LPOS l 1");
    INT(c, 6, "LPOS l c RANK 2");
    INT(c, 7, "LPOS l c RANK -1");
    INT(c, 6, "LPOS l c RANK -2");
    NIL(c, "LPOS l c RANK 4");
    NIL(c, "LPOS l zz");
    expect_bulks(cmd(c, "LPOS l zz COUNT 0"), 0);
    redisReply *r = cmd(c, "LPOS l c COUNT 0");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 3);
    assert_int_equal(r->element[0]->integer, 2);
    assert_int_equal(r->element[1]->integer, 6);
    assert_int_equal(r->element[2]->integer, 7);
    freeReplyObject(r);
    r = cmd(c, "LPOS l c COUNT 2 RANK -1");
    assert_int_equal(r->elements, 2);
    assert_int_equal(r->element[0]->integer, 7);
    assert_int_equal(r->element[1]->integer, 6);
    freeReplyObject(r);
    r = cmd(c, "LPOS l c RANK 2 COUNT 5");
    assert_int_equal(r->elements, 2);
    assert_int_equal(r->element[0]->integer, 6);
    assert_int_equal(r->element[1]->integer, 7);
    freeReplyObject(r);
    NIL(c, "LPOS l c MAXLEN 2");
    INT(c, 2, "LPOS l c MAXLEN 3");
    r = cmd(c, "LPOS l c COUNT 0 MAXLEN 7");
    assert_int_equal(r->elements, 2);
    freeReplyObject(r);
    r = cmd(c, "LPOS l c RANK -1 COUNT 0 MAXLEN 2");
    assert_int_equal(r->elements, 2);
    assert_int_equal(r->element[0]->integer, 7);
    assert_int_equal(r->element[1]->integer, 6);
    freeReplyObject(r);
    /* RANK LLONG_MIN: Redis 7.0 takes it as "from the tail, every match" */
    INT(c, 7, "LPOS l c RANK -9223372036854775808");
    r = cmd(c, "LPOS l c RANK -9223372036854775808 COUNT 1");
    assert_int_equal(r->elements, 3);
    freeReplyObject(r);
    INT(c, 4, "LPOS l 2 rank 1 maxlen 0");
    NIL(c, "LPOS nokey a");
    expect_empty_array(cmd(c, "LPOS nokey a COUNT 1"));

    ERR(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
           "or use negative to start from the end of the list", "LPOS l a RANK 0");
    ERR(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
           "or use negative to start from the end of the list", "LPOS nokey a RANK 0");
    ERR(c, NOT_INT, "LPOS l a RANK x");
    ERR(c, "ERR COUNT can't be negative", "LPOS l a COUNT -1");
    ERR(c, "ERR COUNT can't be negative", "LPOS l a COUNT x");
    ERR(c, "ERR MAXLEN can't be negative", "LPOS l a MAXLEN -1");
    ERR(c, SYNTAX, "LPOS l a RANK");
    ERR(c, SYNTAX, "LPOS l a FOO 1");
    OK(c, "SET s v");
    ERR(c, WRONGTYPE, "LPOS s a");
    ERR(c, SYNTAX, "LPOS s a FOO");
    ERR(c, "ERR wrong number of arguments for 'lpos' command", "LPOS l");
}

static void test_lmove(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "RPUSH src a b c");
    BULK(c, "c", "RPOPLPUSH src dst");
    BULK(c, "a", "LMOVE src dst LEFT RIGHT");
    expect_bulks(cmd(c, "LRANGE dst 0 -1"), 2, "c", "a");
    BULK(c, "c", "LMOVE dst src left left");
    BULK(c, "a", "LMOVE dst src RIGHT right");
    INT(c, 0, "EXISTS dst");
    expect_bulks(cmd(c, "LRANGE src 0 -1"), 3, "c", "b", "a");
    /* rotation on the same list */
    BULK(c, "a", "RPOPLPUSH src src");
    expect_bulks(cmd(c, "LRANGE src 0 -1"), 3, "a", "c", "b");
    BULK(c, "a", "LMOVE src src LEFT RIGHT");
    expect_bulks(cmd(c, "LRANGE src 0 -1"), 3, "c", "b", "a");
    BULK(c, "c", "LMOVE src src LEFT LEFT");
    INT(c, 1, "RPUSH single x");
    BULK(c, "x", "LMOVE single single RIGHT LEFT");
    expect_bulks(cmd(c, "LRANGE single 0 -1"), 1, "x");
    INT(c, 1, "RPUSH num 42");
    BULK(c, "42", "LMOVE num other LEFT LEFT");
    expect_bulks(cmd(c, "LRANGE other 0 -1"), 1, "42");
    INT(c, 0, "EXISTS num");
    INT(c, 2, "RPUSH empty %s %s", "", "");
    BULK(c, "", "LMOVE empty other2 LEFT LEFT");
    BULK(c, "", "RPOPLPUSH empty other2");
    expect_bulks(cmd(c, "LRANGE other2 0 -1"), 2, "", "");
    INT(c, 3, "LINSERT other2 AFTER %s x", "");
    INT(c, 2, "LREM other2 0 %s", "");
    NIL(c, "RPOPLPUSH nokey dst");
    NIL(c, "LMOVE nokey dst LEFT LEFT");
    INT(c, 0, "EXISTS dst");

    OK(c, "SET s v");
    ERR(c, WRONGTYPE, "RPOPLPUSH s dst");
    ERR(c, WRONGTYPE, "RPOPLPUSH src s");
    expect_bulks(cmd(c, "LRANGE src 0 -1"), 3, "c", "b", "a");   /* untouched */
    NIL(c, "RPOPLPUSH nokey s");
    ERR(c, WRONGTYPE, "LMOVE src s LEFT LEFT");
    ERR(c, SYNTAX, "LMOVE src dst UP LEFT");
    ERR(c, SYNTAX, "LMOVE src dst LEFT DOWN");
    ERR(c, SYNTAX, "LMOVE nokey dst UP LEFT");
    ERR(c, "ERR wrong number of arguments for 'lmove' command", "LMOVE src dst LEFT");
    ERR(c, "ERR wrong number of arguments for 'rpoplpush' command", "RPOPLPUSH src");
}

static void test_lmpop(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "RPUSH b 1 2 3");
    INT(c, 2, "RPUSH c x y");
    redisReply *r = cmd(c, "LMPOP 3 a b c LEFT");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "b");
    assert_int_equal(r->element[1]->elements, 1);
    assert_string_equal(r->element[1]->element[0]->str, "1");
    freeReplyObject(r);
    r = cmd(c, "LMPOP 2 b c RIGHT COUNT 5");
    assert_string_equal(r->element[0]->str, "b");
    assert_int_equal(r->element[1]->elements, 2);
    assert_string_equal(r->element[1]->element[0]->str, "3");
    assert_string_equal(r->element[1]->element[1]->str, "2");
    freeReplyObject(r);
    INT(c, 0, "EXISTS b");
    r = cmd(c, "lmpop 2 b c left count 1");
    assert_string_equal(r->element[0]->str, "c");
    assert_string_equal(r->element[1]->element[0]->str, "x");
    freeReplyObject(r);
    r = cmd(c, "LMPOP 2 a b LEFT");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);

    OK(c, "SET s v");
    ERR(c, WRONGTYPE, "LMPOP 2 s c LEFT");
    r = cmd(c, "LMPOP 2 c s LEFT");           /* stops at the first list */
    assert_string_equal(r->element[0]->str, "c");
    freeReplyObject(r);
    ERR(c, WRONGTYPE, "LMPOP 2 a s LEFT");
    ERR(c, "ERR numkeys should be greater than 0", "LMPOP 0 a LEFT");
    ERR(c, "ERR numkeys should be greater than 0", "LMPOP -1 a LEFT");
    ERR(c, "ERR numkeys should be greater than 0", "LMPOP x a LEFT");
    ERR(c, SYNTAX, "LMPOP 9223372036854775807 a LEFT");
    ERR(c, SYNTAX, "LMPOP 2 a LEFT");
    ERR(c, SYNTAX, "LMPOP 1 a UP");
    ERR(c, SYNTAX, "LMPOP 1 a LEFT FOO");
    ERR(c, SYNTAX, "LMPOP 1 a LEFT COUNT");
    ERR(c, SYNTAX, "LMPOP 1 a LEFT COUNT 1 COUNT 1");
    ERR(c, "ERR count should be greater than 0", "LMPOP 1 a LEFT COUNT 0");
    ERR(c, "ERR count should be greater than 0", "LMPOP 1 a LEFT COUNT x");
    ERR(c, "ERR wrong number of arguments for 'lmpop' command", "LMPOP 1 a");

    r = cmd(c, "COMMAND GETKEYS LMPOP 2 k1 k2 LEFT COUNT 3");
    expect_bulks(r, 2, "k1", "k2");
}

/* Keys on different shards (with --threads 2): LMOVE and LMPOP go through
 * the cross-shard path. */
static void test_cross_shard(void **state)
{
    redisContext *c = FIX(state)->c;
    for (int i = 0; i < 20; i++) {
        char src[16], dst[16];
        snprintf(src, sizeof src, "src%d", i);
        snprintf(dst, sizeof dst, "dst%d", i);
        INT(c, 2, "RPUSH %s a%d b%d", src, i, i);
        char want[16];
        snprintf(want, sizeof want, "b%d", i);
        BULK(c, want, "RPOPLPUSH %s %s", src, dst);
        snprintf(want, sizeof want, "a%d", i);
        BULK(c, want, "LMOVE %s %s LEFT RIGHT", src, dst);
        INT(c, 0, "EXISTS %s", src);
        INT(c, 2, "LLEN %s", dst);
        redisReply *r = cmd(c, "LMPOP 2 %s %s RIGHT COUNT 10", src, dst);
        assert_int_equal(r->type, REDIS_REPLY_ARRAY);
        assert_string_equal(r->element[0]->str, dst);
        assert_int_equal(r->element[1]->elements, 2);
        freeReplyObject(r);
        INT(c, 0, "EXISTS %s", dst);
    }
}

static void test_keys_commands(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "RPUSH l a b c");
    OK(c, "RENAME l m");
    expect_bulks(cmd(c, "LRANGE m 0 -1"), 3, "a", "b", "c");
    INT(c, 1, "COPY m n");
    INT(c, 4, "RPUSH n d");
    INT(c, 3, "LLEN m");
    INT(c, 1, "EXPIRE m 100");
    INT(c, 4, "RPUSH m x");
    expect_int_range(cmd(c, "TTL m"), 99, 100);
    OK(c, "SET m v");                          /* SET replaces the list */
    BULK(c, "v", "GET m");
    INT(c, 1, "DEL n");
    INT(c, 1, "RPUSH e x");
    OK(c, "PSETEX x 1 v");
    h_sleep_ms(5);
    INT(c, 1, "RPUSH x a");                    /* an expired key is a new list */
    INT(c, -1, "TTL x");
}

/* A small list lives inside its key's entry, a bigger listpack apart from
 * it (entry.h, ENTRY_INLINE_MAX = 256 bytes), a quicklist past 8 KB: order
 * and TTL survive each crossing, both ways, and LMOVE between sizes. */
static void test_small_and_big_bodies(void **state)
{
    redisContext *c = FIX(state)->c;
    const char *item = "an-item-of-twenty-four-b";
    INT(c, 2, "RPUSH q first second");
    INT(c, 1, "EXPIRE q 1000");
    for (int i = 0; i < 400; i++) INT(c, 3 + i, "RPUSH q %s", item);   /* ~10 KB */
    BULK(c, "first", "LINDEX q 0");
    BULK(c, item, "LINDEX q -1");
    INT(c, 399, "LREM q 399 %s", item);                                 /* ~60 bytes */
    expect_bulks(cmd(c, "LRANGE q 0 -1"), 3, "first", "second", item);
    expect_int_range(cmd(c, "TTL q"), 999, 1000);
    INT(c, -1, "LINSERT q BEFORE nosuch x");                            /* no change */
    ERR(c, "ERR index out of range", "LSET q 7 x");
    OK(c, "LSET q 1 middle");
    expect_int_range(cmd(c, "TTL q"), 999, 1000);
    /* between a small list and a big one, and a list onto itself */
    for (int i = 0; i < 20; i++) INT(c, 1 + i, "RPUSH big %s-%02d", item, i);
    BULK(c, "first", "LMOVE q big LEFT RIGHT");
    expect_bulk_len(cmd(c, "LMOVE big q LEFT LEFT"), "an-item-of-twenty-four-b-00", 27);
    BULK(c, "an-item-of-twenty-four-b-00", "LMOVE q q LEFT RIGHT");
    expect_bulks(cmd(c, "LRANGE q 0 -1"), 3, "middle", item, "an-item-of-twenty-four-b-00");
    INT(c, 20, "LLEN big");
    BULK(c, "first", "LINDEX big -1");
    expect_int_range(cmd(c, "TTL q"), 999, 1000);
    OK(c, "RENAME q q2");
    INT(c, 1, "COPY q2 q3");
    INT(c, 3, "LLEN q3");
    INT(c, 3, "DEL q2 q3 big");
}

static void test_encoding(void **state)
{
    SKIP_ON_REDIS();   /* Redis 7.0 answers quicklist for every list; 7.2 as below */
    redisContext *c = FIX(state)->c;
    INT(c, 3, "RPUSH l a b c");
    BULK(c, "listpack", "OBJECT ENCODING l");
    OK(c, "CONFIG SET list-max-listpack-size 4");
    INT(c, 4, "RPUSH m 1 2 3 4");
    BULK(c, "listpack", "OBJECT ENCODING m");
    INT(c, 5, "RPUSH m 5");
    BULK(c, "quicklist", "OBJECT ENCODING m");
    BULK(c, "5", "RPOP m");
    BULK(c, "quicklist", "OBJECT ENCODING m");
    OK(c, "LTRIM m 0 1");
    BULK(c, "listpack", "OBJECT ENCODING m");
    expect_bulks(cmd(c, "LRANGE m 0 -1"), 2, "1", "2");
    OK(c, "CONFIG SET list-max-listpack-size -2");
    /* big elements: one of 9000 bytes is over the 8 KB node limit */
    char *big = malloc(9000);
    memset(big, 'x', 9000);
    INT(c, 1, "RPUSH big %b", big, (size_t)9000);
    BULK(c, "quicklist", "OBJECT ENCODING big");
    INT(c, 2, "LPUSH big a");
    BULK(c, "a", "LPOP big");
    expect_bulk_len(cmd(c, "LPOP big"), big, 9000);
    free(big);
    INT(c, 0, "EXISTS big");
}

static void test_list_resp3(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    RAW(r, "_\r\n", "LPOP nokey");
    RAW(r, "_\r\n", "LPOP nokey 2");
    RAW(r, "_\r\n", "RPOP nokey 0");
    RAW(r, "_\r\n", "LINDEX nokey 0");
    RAW(r, "_\r\n", "LPOS nokey a");
    RAW(r, "*0\r\n", "LPOS nokey a COUNT 0");
    RAW(r, "_\r\n", "LMPOP 1 nokey LEFT");
    RAW(r, "_\r\n", "LMOVE nokey x LEFT LEFT");
    RAW(r, ":2\r\n", "RPUSH l a 5");
    RAW(r, "*2\r\n$1\r\nl\r\n*1\r\n$1\r\n5\r\n", "LMPOP 1 l RIGHT");
    RAW(r, "*0\r\n", "LPOP l 0");
    RAW(r, "*1\r\n$1\r\na\r\n", "LPOP l 5");
    raw_close(r);
    /* RESP2 null array */
    r = raw_connect(&FIX(state)->srv);
    RAW(r, "*-1\r\n", "LPOP nokey 1");
    RAW(r, "*-1\r\n", "LMPOP 1 nokey LEFT");
    RAW(r, "$-1\r\n", "LPOP nokey");
    raw_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_push_pop, h_flushall),
        cmocka_unit_test_setup(test_lrange_lindex, h_flushall),
        cmocka_unit_test_setup(test_lset_lrem_ltrim, h_flushall),
        cmocka_unit_test_setup(test_linsert, h_flushall),
        cmocka_unit_test_setup(test_lpos, h_flushall),
        cmocka_unit_test_setup(test_lmove, h_flushall),
        cmocka_unit_test_setup(test_lmpop, h_flushall),
        cmocka_unit_test_setup(test_cross_shard, h_flushall),
        cmocka_unit_test_setup(test_keys_commands, h_flushall),
        cmocka_unit_test_setup(test_small_and_big_bodies, h_flushall),
        cmocka_unit_test_setup(test_encoding, h_flushall),
        cmocka_unit_test_setup(test_list_resp3, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("list", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
