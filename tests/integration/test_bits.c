/*
 * Bitmap commands against the real binary: SETBIT GETBIT BITCOUNT BITPOS
 * BITOP BITFIELD BITFIELD_RO, their errors, WRONGTYPE, integer strings, a
 * string grown by SETBIT at rising offsets, BITOP over keys of both shards
 * (directly and inside MULTI/EXEC, and a WATCHed destination), BITFIELD's
 * null in RESP3, and COMMAND INFO/GETKEYSANDFLAGS. Every expected reply
 * also holds against redis-server 7.0.15 (RINGKV_TEST_REDIS=1).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Key names whose slots differ in parity: different shards with 2 threads. */
static const char *KA = "{a}bits", *KB = "{b}bits", *KC = "{c}bits";

static void check_parity(void) {
    unsigned a = h_key_slot(KA, strlen(KA)) % 2, b = h_key_slot(KB, strlen(KB)) % 2;
    if (a == b) h_fail("test keys %s and %s hash to the same parity", KA, KB);
}

#define WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

static void expect_ints_(const char *file, int line, redisReply *r, int n, const long long *v) {
    if (r->type != REDIS_REPLY_ARRAY || (int)r->elements != n)
        h_fail_(file, line, "expected an array of %d integers, got %s", n, reply_repr(r));
    for (int i = 0; i < n; i++)
        if (r->element[i]->type != REDIS_REPLY_INTEGER || r->element[i]->integer != v[i])
            h_fail_(file, line, "element %d: expected %lld, got %s", i, v[i], reply_repr(r));
    freeReplyObject(r);
}
#define expect_ints(r, n, ...) expect_ints_(__FILE__, __LINE__, (r), (n), (const long long[]){ __VA_ARGS__ })

static void test_setbit_getbit(void **state) {
    redisContext *c = FIX(state)->c;
    INT(c, 0, "SETBIT k 1 1");
    BULK(c, "@", "GET k");
    INT(c, 0, "SETBIT k 2 1");
    INT(c, 1, "SETBIT k 1 0");
    BULK(c, " ", "GET k");
    INT(c, 1, "GETBIT k 2");
    INT(c, 0, "GETBIT k 3");
    INT(c, 0, "GETBIT k 10000");
    INT(c, 0, "GETBIT nokey 0");
    /* an integer string: ASCII "1" is 00110001 */
    OK(c, "SET n 1");
    BULK(c, "int", "OBJECT ENCODING n");
    INT(c, 1, "GETBIT n 2");
    INT(c, 0, "SETBIT n 6 1");
    BULK(c, "3", "GET n");
    BULK(c, "raw", "OBJECT ENCODING n");
    /* errors */
    ERR(c, "ERR bit offset is not an integer or out of range", "SETBIT k -1 1");
    ERR(c, "ERR bit offset is not an integer or out of range", "SETBIT k 4294967296 1");
    ERR(c, "ERR bit offset is not an integer or out of range", "SETBIT k abc 1");
    ERR(c, "ERR bit offset is not an integer or out of range", "GETBIT k -1");
    ERR(c, "ERR bit is not an integer or out of range", "SETBIT k 0 2");
    ERR(c, "ERR bit is not an integer or out of range", "SETBIT k 0 -1");
    ERR(c, "ERR bit is not an integer or out of range", "SETBIT k 0 x");
    ERR(c, "ERR wrong number of arguments for 'setbit' command", "SETBIT k 0");
    ERR(c, "ERR wrong number of arguments for 'getbit' command", "GETBIT k");
    INT(c, 1, "LPUSH l a");
    ERR(c, WRONGTYPE, "SETBIT l 0 1");
    ERR(c, WRONGTYPE, "GETBIT l 0");
}

/* SETBITs at rising offsets grow one string; a TTL survives. */
static void test_setbit_growth(void **state) {
    redisContext *c = FIX(state)->c;
    long long set = 0;
    INT(c, 0, "SETBIT g 0 1");
    INT(c, 1, "EXPIRE g 1000");
    for (long long off = 8; off < 8 * 1024 * 1024; off = off * 3 + 5, set++)
        INT(c, 0, "SETBIT g %lld 1", off);
    INT(c, 0, "SETBIT g 67108863 1");   /* the last bit of 8 MB */
    INT(c, 8 * 1024 * 1024, "STRLEN g");
    INT(c, set + 2, "BITCOUNT g");
    INT(c, 1, "GETBIT g 67108863");
    INT(c, 67108863, "BITPOS g 1 1048576");
    INT(c, 67108863, "BITPOS g 1 -1");
    INT(c, 1, "BITCOUNT g -1 -1");
    INT(c, 1000, "TTL g");
    OK(c, "CONFIG SET proto-max-bulk-len 1048576");
    ERR(c, "ERR bit offset is not an integer or out of range", "SETBIT g 8388608 1");
    INT(c, 0, "SETBIT g 8388607 1");
    OK(c, "CONFIG SET proto-max-bulk-len 536870912");
}

static void test_bitcount(void **state) {
    redisContext *c = FIX(state)->c;
    INT(c, 0, "BITCOUNT nokey");
    INT(c, 0, "BITCOUNT nokey 0");         /* the key is looked up before the arguments */
    OK(c, "SET s foobar");
    INT(c, 26, "BITCOUNT s");
    INT(c, 4, "BITCOUNT s 0 0");
    INT(c, 6, "BITCOUNT s 1 1");
    INT(c, 6, "BITCOUNT s 1 1 BYTE");
    INT(c, 17, "BITCOUNT s 5 30 BIT");
    INT(c, 26, "BITCOUNT s -100 100");
    INT(c, 0, "BITCOUNT s -1 -2");
    INT(c, 0, "BITCOUNT s -1 -2 nonsense");
    INT(c, 4, "BITCOUNT s -8 -1 bit");
    ERR(c, "ERR syntax error", "BITCOUNT s 0");
    ERR(c, "ERR syntax error", "BITCOUNT s 0 1 bits");
    ERR(c, "ERR syntax error", "BITCOUNT s 0 1 bit x");
    ERR(c, "ERR value is not an integer or out of range", "BITCOUNT s a 1");
    OK(c, "SET n 1234");
    INT(c, 13, "BITCOUNT n");
    INT(c, 1, "LPUSH l a");
    ERR(c, WRONGTYPE, "BITCOUNT l");
}

static void test_bitpos(void **state) {
    redisContext *c = FIX(state)->c;
    INT(c, 0, "BITPOS nokey 0");
    INT(c, -1, "BITPOS nokey 1");
    ERR(c, "ERR The bit argument must be 1 or 0.", "BITPOS nokey 2");
    ERR(c, "ERR value is not an integer or out of range", "BITPOS nokey x");
    expect_status(cmd(c, "SET %s %b", "p", "\xff\xf0\x00", (size_t)3), "OK");
    INT(c, 12, "BITPOS p 0");
    INT(c, 0, "BITPOS p 1");
    INT(c, -1, "BITPOS p 1 2");
    INT(c, 16, "BITPOS p 0 2 -1");
    INT(c, 12, "BITPOS p 0 0 -1 bit");
    INT(c, 7, "BITPOS p 1 7 15 BIT");
    INT(c, -1, "BITPOS p 0 0 11 bit");
    INT(c, -1, "BITPOS p 1 2 1");
    ERR(c, "ERR syntax error", "BITPOS p 1 0 1 bot");
    ERR(c, "ERR syntax error", "BITPOS p 1 0 x bot");
    ERR(c, "ERR syntax error", "BITPOS p 1 0 1 bit 2");
    ERR(c, "ERR value is not an integer or out of range", "BITPOS p 1 x");
    /* clear bits past a string of ones: only without an end */
    expect_status(cmd(c, "SET %s %b", "ones", "\xff\xff", (size_t)2), "OK");
    INT(c, 16, "BITPOS ones 0");
    INT(c, 16, "BITPOS ones 0 1");
    INT(c, -1, "BITPOS ones 0 0 -1");
    OK(c, "SET e %s", "");
    INT(c, -1, "BITPOS e 0");
    INT(c, 1, "LPUSH l a");
    ERR(c, WRONGTYPE, "BITPOS l 0");
}

static void test_bitop(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SET a abc");
    OK(c, "SET b 12345");
    INT(c, 5, "BITOP AND d a b");
    expect_bulk_len(cmd(c, "GET d"), "!\"#\0\0", 5);
    INT(c, 5, "BITOP OR d a b");
    BULK(c, "qrs45", "GET d");
    INT(c, 5, "BITOP XOR d a b nokey");
    BULK(c, "PPP45", "GET d");
    INT(c, 3, "BITOP NOT d a");
    BULK(c, "\x9e\x9d\x9c", "GET d");
    INT(c, 1, "EXPIRE d 100");
    INT(c, 3, "BITOP or d a");
    INT(c, -1, "TTL d");
    INT(c, 0, "BITOP AND d nokey nokey2");
    INT(c, 0, "EXISTS d");
    ERR(c, "ERR BITOP NOT must be called with a single source key.", "BITOP NOT d a b");
    ERR(c, "ERR syntax error", "BITOP NAND d a b");
    ERR(c, "ERR wrong number of arguments for 'bitop' command", "BITOP AND d");
    INT(c, 1, "LPUSH l a");
    ERR(c, WRONGTYPE, "BITOP AND d a l");
    INT(c, 3, "BITOP AND l a");                    /* any type of destination is overwritten */
    BULK(c, "abc", "GET l");
}

/* Sources and destination on different shards (with 2 threads): a
 * cross-shard transaction, alone and inside MULTI/EXEC. */
static void test_bitop_shards(void **state) {
    redisContext *c = FIX(state)->c, *other = h_connect(&FIX(state)->srv);
    check_parity();
    OK(c, "SET %s abc", KA);
    OK(c, "SET %s 12345", KB);
    INT(c, 5, "BITOP OR %s %s %s", KC, KA, KB);
    BULK(c, "qrs45", "GET %s", KC);
    INT(c, 5, "BITOP XOR %s %s %s", KA, KA, KB);   /* a source is the destination */
    BULK(c, "PPP45", "GET %s", KA);
    INT(c, 1, "LPUSH {l}list x");
    ERR(c, WRONGTYPE, "BITOP AND %s %s {l}list", KC, KB);
    INT(c, 0, "BITOP AND %s nokey{a} nokey{b}", KB);
    INT(c, 0, "EXISTS %s", KB);

    OK(c, "MULTI");
    STATUS(c, "QUEUED", "SET %s foobar", KB);
    STATUS(c, "QUEUED", "BITOP NOT %s %s", KA, KB);
    STATUS(c, "QUEUED", "BITCOUNT %s", KA);
    redisReply *r = cmd(c, "EXEC");
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 || r->element[1]->integer != 6 ||
        r->element[2]->integer != 48 - 26)
        h_fail("EXEC: %s", reply_repr(r));
    freeReplyObject(r);

    /* BITOP touches its WATCHed destination */
    OK(c, "WATCH %s", KC);
    INT(other, 6, "BITOP AND %s %s %s", KC, KA, KB);
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "GET %s", KC);
    expect_nil(cmd(c, "EXEC"));
    redisFree(other);
}

static void test_bitfield(void **state) {
    redisContext *c = FIX(state)->c;
    expect_ints(cmd(c, "BITFIELD bf SET i8 0 100 GET i8 0 INCRBY i8 0 100"), 3, 0, 100, -56);
    redisReply *r = cmd(c, "BITFIELD bf OVERFLOW SAT INCRBY i8 0 100 OVERFLOW FAIL INCRBY i8 0 100 "
                           "OVERFLOW WRAP INCRBY u8 0 300");
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 || r->element[0]->integer != 44 ||
        r->element[1]->type != REDIS_REPLY_NIL || r->element[2]->integer != 88)
        h_fail("BITFIELD overflow: %s", reply_repr(r));
    freeReplyObject(r);
    expect_ints(cmd(c, "BITFIELD bf SET u8 #2 255 GET u4 #0 GET i5 #3"), 3, 0, 5, 15);
    expect_bulk_len(cmd(c, "GET bf"), "X\0\xff", 3);
    expect_ints(cmd(c, "BITFIELD bf SET i64 0 -9223372036854775808 INCRBY i64 0 -1"), 2,
                6341348650802741248LL, 9223372036854775807LL);
    expect_ints(cmd(c, "BITFIELD bf GET u63 1"), 1, 9223372036854775807LL);
    expect_ints(cmd(c, "BITFIELD_RO bf GET i8 8 GET u2 0"), 2, -1, 1);
    expect_ints(cmd(c, "BITFIELD nokey GET i64 0"), 1, 0);
    INT(c, 0, "EXISTS nokey");
    expect_ints(cmd(c, "BITFIELD g SET u8 100 7"), 1, 0);
    INT(c, 14, "STRLEN g");
    expect_empty_array(cmd(c, "BITFIELD g"));
    expect_empty_array(cmd(c, "BITFIELD_RO g"));
    /* errors */
    const char *type_err = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
                           "supported but i64 is.";
    ERR(c, type_err, "BITFIELD bf GET u64 0");
    ERR(c, type_err, "BITFIELD bf GET i65 0");
    ERR(c, type_err, "BITFIELD bf GET x8 0");
    ERR(c, "ERR Invalid OVERFLOW type specified", "BITFIELD bf OVERFLOW BAD");
    ERR(c, "ERR syntax error", "BITFIELD bf BAD");
    ERR(c, "ERR syntax error", "BITFIELD bf GET i8");
    ERR(c, "ERR value is not an integer or out of range", "BITFIELD bf SET i8 0 x");
    ERR(c, "ERR bit offset is not an integer or out of range", "BITFIELD bf GET i8 -1");
    ERR(c, "ERR bit offset is not an integer or out of range", "BITFIELD bf GET i8 #-1");
    ERR(c, "ERR BITFIELD_RO only supports the GET subcommand", "BITFIELD_RO bf SET i8 0 1");
    ERR(c, "ERR wrong number of arguments for 'bitfield' command", "BITFIELD");
    INT(c, 1, "LPUSH l a");
    ERR(c, WRONGTYPE, "BITFIELD l GET i8 0");
    ERR(c, WRONGTYPE, "BITFIELD l SET i8 0 1");
    ERR(c, WRONGTYPE, "BITFIELD_RO l GET i8 0");
}

/* RESP3: FAIL's null, and the integers as they are. */
static void test_resp3(void **state) {
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    RAW(r, "*2\r\n:0\r\n_\r\n", "BITFIELD k SET u2 0 3 OVERFLOW FAIL INCRBY u2 0 1");
    RAW(r, ":1\r\n", "SETBIT k 1 0");
    RAW(r, ":1\r\n", "BITCOUNT k");
    RAW(r, ":0\r\n", "BITPOS k 1");
    raw_close(r);
}

static void test_command_info(void **state) {
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "COMMAND INFO bitop bitfield_ro lcs");
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3)
        h_fail("COMMAND INFO: %s", reply_repr(r));
    static const long long keys[3][4] = { { -4, 2, -1, 1 }, { -2, 1, 1, 1 }, { -3, 1, 2, 1 } };
    for (int i = 0; i < 3; i++) {
        redisReply *e = r->element[i];
        for (int k = 0; k < 4; k++)
            if (e->element[k == 0 ? 1 : k + 2]->integer != keys[i][k])
                h_fail("COMMAND INFO %d: %s", i, reply_repr(e));
    }
    freeReplyObject(r);
    r = cmd(c, "COMMAND GETKEYSANDFLAGS bitfield k GET u8 0 INCRBY u8 0 1");
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 || r->element[0]->element[1]->elements != 3)
        h_fail("GETKEYSANDFLAGS: %s", reply_repr(r));
    freeReplyObject(r);
    r = cmd(c, "COMMAND GETKEYSANDFLAGS bitfield k GET u8 0");
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 || r->element[0]->element[1]->elements != 2)
        h_fail("GETKEYSANDFLAGS: %s", reply_repr(r));
    freeReplyObject(r);
    expect_bulks(cmd(c, "COMMAND GETKEYS bitop and d a b"), 3, "d", "a", "b");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_setbit_getbit, h_flushall),
        cmocka_unit_test_setup(test_setbit_growth, h_flushall),
        cmocka_unit_test_setup(test_bitcount, h_flushall),
        cmocka_unit_test_setup(test_bitpos, h_flushall),
        cmocka_unit_test_setup(test_bitop, h_flushall),
        cmocka_unit_test_setup(test_bitop_shards, h_flushall),
        cmocka_unit_test_setup(test_bitfield, h_flushall),
        cmocka_unit_test_setup(test_resp3, h_flushall),
        cmocka_unit_test_setup(test_command_info, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("bits", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
