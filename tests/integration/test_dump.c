/*
 * DUMP and RESTORE: every type round-trips (small, listpack-encoded, and
 * past the listpack limits; streams with groups), a payload redis-server 7.0 wrote restores,
 * TTLs (relative, ABSTTL, already expired), REPLACE, and every error
 * (BUSYKEY, bad TTL, IDLETIME/FREQ bounds, syntax, checksum, bad data).
 * No assertion depends on the wall clock beyond TTL ranges of seconds.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DUMP key into a malloc'd buffer (*len bytes). */
static char *dump(redisContext *c, const char *key, size_t *len) {
    redisReply *r = cmd(c, "DUMP %s", key);
    if (r->type != REDIS_REPLY_STRING) h_fail("DUMP %s: %s", key, reply_repr(r));
    char *p = malloc(r->len);
    memcpy(p, r->str, r->len);
    *len = r->len;
    freeReplyObject(r);
    return p;
}

/* RESTORE dst from src's DUMP; dst's DUMP must then be the same bytes
 * (the value's elements in the same order). */
static void copy_by_dump(redisContext *c, const char *src, const char *dst) {
    size_t n, m;
    char *p = dump(c, src, &n);
    expect_ok(cmd(c, "RESTORE %s 0 %b", dst, p, n));
    char *q = dump(c, dst, &m);
    if (n != m || memcmp(p, q, n) != 0) h_fail("%s and %s dump differently", src, dst);
    free(p);
    free(q);
}

static void test_round_trips(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SET s hello");
    OK(c, "SET i 12345");
    INT(c, 4, "RPUSH l a b 1 -2");
    INT(c, 3, "SADD si 1 2 -3");
    INT(c, 2, "SADD ss a b");
    INT(c, 2, "HSET h f v g 12");
    INT(c, 2, "ZADD z 1 a 2.5 b");
    for (int i = 0; i < 600; i++) {   /* past every listpack limit (hashes: 512) */
        redisReply *r = cmd(c, "RPUSH bl item%d", i);
        freeReplyObject(r);
        r = cmd(c, "HSET bh field%d value%d", i, i);
        freeReplyObject(r);
        r = cmd(c, "ZADD bz %d m%d", i, i);
        freeReplyObject(r);
        r = cmd(c, "SADD bs m%d", i);
        freeReplyObject(r);
    }
    const char *keys[] = { "s", "i", "l", "si", "ss", "h", "z", "bl", "bh", "bz", "bs" };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        char dst[32];
        snprintf(dst, sizeof dst, "copy:%s", keys[k]);
        size_t n;
        char *p = dump(c, keys[k], &n);
        expect_ok(cmd(c, "RESTORE %s 0 %b", dst, p, n));
        free(p);
    }
    BULK(c, "hello", "GET copy:s");
    BULK(c, "12345", "GET copy:i");
    expect_bulks(cmd(c, "LRANGE copy:l 0 -1"), 4, "a", "b", "1", "-2");
    BULK(c, "intset", "OBJECT ENCODING copy:si");
    expect_bulks_unordered(cmd(c, "SMEMBERS copy:si"), 3, "-3", "1", "2");
    expect_bulks_unordered(cmd(c, "SMEMBERS copy:ss"), 2, "a", "b");
    BULK(c, "listpack", "OBJECT ENCODING copy:h");
    BULK(c, "12", "HGET copy:h g");
    expect_bulks(cmd(c, "ZRANGE copy:z 0 -1 WITHSCORES"), 4, "a", "1", "b", "2.5");
    INT(c, 600, "LLEN copy:bl");
    BULK(c, "item599", "LINDEX copy:bl -1");
    BULK(c, "hashtable", "OBJECT ENCODING copy:bh");
    BULK(c, "value123", "HGET copy:bh field123");
    BULK(c, "skiplist", "OBJECT ENCODING copy:bz");
    BULK(c, "150", "ZSCORE copy:bz m150");
    INT(c, 1, "SISMEMBER copy:bs m7");
    INT(c, 600, "SCARD copy:bs");
    /* order-preserving types dump the same bytes again */
    copy_by_dump(c, "l", "again:l");
    copy_by_dump(c, "h", "again:h");
    copy_by_dump(c, "z", "again:z");
    copy_by_dump(c, "bl", "again:bl");
    NIL(c, "DUMP nosuch");
}

/* A stream with deletions, a node past the entry limit, groups, consumers
 * and pending entries: its copy answers XINFO STREAM FULL the same. */
static void test_stream(void **state) {
    redisContext *c = FIX(state)->c;
    for (int i = 1; i <= 250; i++) freeReplyObject(cmd(c, "XADD s %d-1 f v%d g %d", i, i, i));
    freeReplyObject(cmd(c, "XADD s 300-1 other x"));
    INT(c, 1, "XDEL s 5-1");
    OK(c, "XGROUP CREATE s g1 0");
    freeReplyObject(cmd(c, "XREADGROUP GROUP g1 alice COUNT 3 STREAMS s >"));
    freeReplyObject(cmd(c, "XREADGROUP GROUP g1 bob COUNT 2 STREAMS s >"));
    INT(c, 1, "XACK s g1 2-1");
    OK(c, "XGROUP CREATE s g2 $");
    freeReplyObject(cmd(c, "XADD empty MAXLEN 0 * a b"));
    const char *keys[] = { "s", "empty" };
    for (int k = 0; k < 2; k++) {
        char dst[32];
        snprintf(dst, sizeof dst, "copy:%s", keys[k]);
        size_t n;
        char *p = dump(c, keys[k], &n);
        expect_ok(cmd(c, "RESTORE %s 0 %b", dst, p, n));
        free(p);
        redisReply *a = cmd(c, "XINFO STREAM %s FULL", keys[k]), *b = cmd(c, "XINFO STREAM %s FULL", dst);
        char *ra = reply_repr(a), *rb = reply_repr(b);
        if (strcmp(ra, rb) != 0) h_fail("%s: %s\nvs %s", keys[k], ra, rb);
        free(ra);
        free(rb);
        freeReplyObject(a);
        freeReplyObject(b);
    }
    INT(c, 250, "XLEN copy:s");
    INT(c, 0, "XLEN copy:empty");
}

/* RPUSH l a b 1 -2 300 70000 as redis-server 7.0.15 dumps it. */
static const char redis_list[] =
    "\x12\x01\x02\x1a\x1a\x00\x00\x00\x06\x00\x81\x61\x02\x81\x62\x02\x01\x01\xdf\xfe\x02\xc1\x2c\x02"
    "\xf2\x70\x11\x01\x04\xff\x0a\x00\xba\xf1\x90\xb8\x48\x0f\xd2\x92";

static void test_redis_payload(void **state) {
    redisContext *c = FIX(state)->c;
    expect_ok(cmd(c, "RESTORE l 0 %b", redis_list, sizeof redis_list - 1));
    expect_bulks(cmd(c, "LRANGE l 0 -1"), 6, "a", "b", "1", "-2", "300", "70000");
}

/* The count of blocked clients, from INFO clients. */
static long long blocked_clients(redisContext *c) {
    redisReply *r = cmd(c, "INFO clients");
    const char *at = r->type == REDIS_REPLY_STRING ? strstr(r->str, "blocked_clients:") : NULL;
    long long n = at ? atoll(at + strlen("blocked_clients:")) : -1;
    freeReplyObject(r);
    return n;
}

/* A RESTOREd list serves a client blocked on its key, as a push would. */
static void test_restore_wakes_blocked(void **state) {
    struct fixture *f = FIX(state);
    struct raw *w = raw_connect(&f->srv);
    raw_cmd(w, "BLPOP l 0");
    for (int i = 0; i < 1000 && blocked_clients(f->c) != 1; i++) h_sleep_ms(5);
    assert_int_equal(blocked_clients(f->c), 1);
    expect_ok(cmd(f->c, "RESTORE l 0 %b", redis_list, sizeof redis_list - 1));
    raw_expect(w, "*2\r\n$1\r\nl\r\n$1\r\na\r\n");
    INT(f->c, 5, "LLEN l");
    raw_close(w);
}

static void test_ttl_and_replace(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SET a va");
    size_t n;
    char *p = dump(c, "a", &n);
    expect_ok(cmd(c, "RESTORE b 100000 %b", p, n));
    expect_int_range(cmd(c, "PTTL b"), 1, 100000);
    expect_error(cmd(c, "RESTORE b 0 %b", p, n), "BUSYKEY Target key name already exists.");
    expect_ok(cmd(c, "RESTORE b 0 %b REPLACE", p, n));
    INT(c, -1, "TTL b");
    expect_ok(cmd(c, "RESTORE c 4102444800000 %b ABSTTL", p, n));   /* 2100-01-01 */
    expect_int_range(cmd(c, "TTL c"), 1, 4102444800LL);
    /* an absolute TTL in the past: OK, and the key is gone (REPLACE drops the old one) */
    expect_ok(cmd(c, "RESTORE b 1 %b ABSTTL REPLACE", p, n));
    INT(c, 0, "EXISTS b");
    expect_ok(cmd(c, "RESTORE d 0 %b IDLETIME 10", p, n));
    expect_ok(cmd(c, "RESTORE e 0 %b FREQ 100", p, n));
    INT(c, 1, "EXISTS e");
    free(p);
}

static void test_errors(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SET a va");
    size_t n;
    char *p = dump(c, "a", &n);
    expect_error(cmd(c, "RESTORE x -1 %b", p, n), "ERR Invalid TTL value, must be >= 0");
    expect_error(cmd(c, "RESTORE x abc %b", p, n), "ERR value is not an integer or out of range");
    expect_error(cmd(c, "RESTORE x 0 %b IDLETIME -1", p, n), "ERR Invalid IDLETIME value, must be >= 0");
    expect_error(cmd(c, "RESTORE x 0 %b FREQ 256", p, n), "ERR Invalid FREQ value, must be >= 0 and <= 255");
    expect_error(cmd(c, "RESTORE x 0 %b IDLETIME 1 FREQ 1", p, n), "ERR syntax error");
    expect_error(cmd(c, "RESTORE x 0 %b FOO", p, n), "ERR syntax error");
    p[1] ^= 1;
    expect_error(cmd(c, "RESTORE x 0 %b", p, n), "ERR DUMP payload version or checksum are wrong");
    expect_error(cmd(c, "RESTORE x 0 %b", "", (size_t)0), "ERR DUMP payload version or checksum are wrong");
    /* a valid trailer around an unknown type byte */
    expect_error(cmd(c, "RESTORE x 0 %b", "\x07\x00\x0a\x00\xf2\x07\x8a\x0c\xd0\x0c\xef\x01", (size_t)12),
                 "ERR Bad data format");
    INT(c, 0, "EXISTS x");
    ERR(c, "ERR wrong number of arguments for 'restore' command", "RESTORE x 0");
    ERR(c, "ERR wrong number of arguments for 'dump' command", "DUMP");
    free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_round_trips, h_flushall),
        cmocka_unit_test_setup(test_stream, h_flushall),
        cmocka_unit_test_setup(test_redis_payload, h_flushall),
        cmocka_unit_test_setup(test_restore_wakes_blocked, h_flushall),
        cmocka_unit_test_setup(test_ttl_and_replace, h_flushall),
        cmocka_unit_test_setup(test_errors, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("dump", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
