/*
 * Keyspace commands: DEL UNLINK EXISTS TOUCH TYPE KEYS SCAN RANDOMKEY RENAME
 * RENAMENX COPY MOVE SWAPDB EXPIRE family TTL PTTL EXPIRETIME PEXPIRETIME
 * PERSIST OBJECT, and expiry itself.
 *
 * Pairs of keys used by multi-key commands are chosen on hash slots of
 * different parity, so that with --threads 2 they live on different shards.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void other_shard(const char *a, const char *b)
{
    /* the test's premise: with slot % 2, these keys live on different threads */
    if (h_key_slot(a, strlen(a)) % 2 == h_key_slot(b, strlen(b)) % 2)
        h_fail("keys %s and %s share a slot parity", a, b);
}

static void test_del_unlink_exists(void **state)
{
    redisContext *c = FIX(state)->c;
    other_shard("a", "b");
    INT(c, 0, "DEL a");
    OK(c, "SET a 1");
    OK(c, "SET b 2");
    OK(c, "SET x 3");
    INT(c, 2, "EXISTS a b");
    INT(c, 3, "EXISTS a a a");          /* duplicates are counted */
    INT(c, 2, "EXISTS a nosuch b");
    INT(c, 0, "EXISTS nosuch");
    INT(c, 2, "DEL a b nosuch");
    INT(c, 0, "EXISTS a b");
    INT(c, 1, "EXISTS x");
    OK(c, "SET a 1");
    INT(c, 1, "DEL a a");               /* a deleted key is counted once */
    OK(c, "SET a 1");
    OK(c, "SET b 1");
    INT(c, 3, "UNLINK a b x");
    INT(c, 0, "UNLINK a");
    INT(c, 0, "DBSIZE");
    ERR(c, "ERR wrong number of arguments for 'del' command", "DEL");
    ERR(c, "ERR wrong number of arguments for 'unlink' command", "UNLINK");
    ERR(c, "ERR wrong number of arguments for 'exists' command", "EXISTS");

    /* many keys spread over all shards in one command */
    char buf[64];
    for (int i = 0; i < 200; i++) {
        snprintf(buf, sizeof buf, "many:%d", i);
        OK(c, "SET %s v", buf);
    }
    const char *argv[402];
    char names[401][24];
    argv[0] = "EXISTS";
    for (int i = 0; i < 400; i++) {
        snprintf(names[i], sizeof names[i], "many:%d", i % 250);
        argv[i + 1] = names[i];
    }
    /* keys 0..249 then 0..149: 200 + 150 exist */
    expect_int(cmdv(c, 401, argv, NULL), 350);
    argv[0] = "DEL";
    expect_int(cmdv(c, 401, argv, NULL), 200);
    INT(c, 0, "DBSIZE");
}

static void test_touch_type(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "SET a 1");
    OK(c, "SET b 1");
    INT(c, 2, "TOUCH a b nosuch");
    INT(c, 0, "TOUCH nosuch");
    STATUS(c, "string", "TYPE a");
    STATUS(c, "none", "TYPE nosuch");
    ERR(c, "ERR wrong number of arguments for 'type' command", "TYPE");
    ERR(c, "ERR wrong number of arguments for 'type' command", "TYPE a b");
}

static void test_keys_patterns(void **state)
{
    redisContext *c = FIX(state)->c;
    const char *names[] = { "hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "other", "h\\llo" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        OK(c, "SET %s 1", names[i]);
    expect_bulks_unordered(cmd(c, "KEYS *"), 8, "hello", "hallo", "hxllo", "hllo", "heeeello",
                           "h*llo", "other", "h\\llo");
    expect_bulks_unordered(cmd(c, "KEYS h?llo"), 5, "hello", "hallo", "hxllo", "h*llo", "h\\llo");
    expect_bulks_unordered(cmd(c, "KEYS h*llo"), 7, "hello", "hallo", "hxllo", "hllo", "heeeello",
                           "h*llo", "h\\llo");
    expect_bulks_unordered(cmd(c, "KEYS h[ae]llo"), 2, "hello", "hallo");
    expect_bulks_unordered(cmd(c, "KEYS h[^e]llo"), 4, "hallo", "hxllo", "h*llo", "h\\llo");
    expect_bulks_unordered(cmd(c, "KEYS h[a-b]llo"), 1, "hallo");
    expect_bulks_unordered(cmd(c, "KEYS h\\*llo"), 1, "h*llo");
    expect_bulks_unordered(cmd(c, "KEYS hello"), 1, "hello");
    expect_bulks_unordered(cmd(c, "KEYS nomatch*"), 0);
    expect_bulks_unordered(cmd(c, "KEYS *th*"), 1, "other");
    /* only the selected db */
    OK(c, "SELECT 2");
    expect_bulks_unordered(cmd(c, "KEYS *"), 0);
    ERR(c, "ERR wrong number of arguments for 'keys' command", "KEYS");
}

/* a set of strings for SCAN: open addressing */
struct strset { char **v; size_t cap, n; };

static unsigned long hs(const char *s)
{
    unsigned long h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h;
}

static bool strset_add(struct strset *s, const char *k)
{
    if (!s->v) { s->cap = 65536; s->v = calloc(s->cap, sizeof *s->v); }
    size_t i = hs(k) & (s->cap - 1);
    while (s->v[i]) {
        if (strcmp(s->v[i], k) == 0) return false;
        i = (i + 1) & (s->cap - 1);
    }
    s->v[i] = strdup(k);
    s->n++;
    return true;
}

static void strset_free(struct strset *s)
{
    for (size_t i = 0; i < s->cap; i++) free(s->v[i]);
    free(s->v);
}

/* Full SCAN; returns the distinct keys seen. */
static size_t scan_all(redisContext *c, const char *extra, struct strset *seen)
{
    char cursor[32] = "0";
    int calls = 0;
    do {
        char fmt[128];
        snprintf(fmt, sizeof fmt, "SCAN %%s %s", extra ? extra : "");
        redisReply *r = cmd(c, fmt, cursor);
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_ARRAY) {
            char *s = reply_repr(r);
            h_fail("bad SCAN reply %s", s);
        }
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        for (size_t i = 0; i < r->element[1]->elements; i++)
            strset_add(seen, r->element[1]->element[i]->str);
        freeReplyObject(r);
        if (++calls > 200000) h_fail("SCAN does not terminate");
    } while (strcmp(cursor, "0") != 0);
    return seen->n;
}

static void test_scan(void **state)
{
    redisContext *c = FIX(state)->c;
    const int N = 10000;
    /* load with pipelined MSETs of 100 keys */
    for (int b = 0; b < N / 100; b++) {
        char *argv[201];
        size_t lens[201];
        char keys[100][24];
        argv[0] = "MSET"; lens[0] = 4;
        for (int i = 0; i < 100; i++) {
            int k = b * 100 + i;
            snprintf(keys[i], sizeof keys[i], "%s:%d", k % 10 == 0 ? "tens" : "key", k);
            argv[1 + 2 * i] = keys[i]; lens[1 + 2 * i] = strlen(keys[i]);
            argv[2 + 2 * i] = "v"; lens[2 + 2 * i] = 1;
        }
        redisAppendCommandArgv(c, 201, (const char **)argv, lens);
    }
    for (int b = 0; b < N / 100; b++) {
        redisReply *r;
        assert_int_equal(redisGetReply(c, (void **)&r), REDIS_OK);
        expect_ok(r);
    }
    INT(c, N, "DBSIZE");

    struct strset all = { 0 };
    assert_int_equal(scan_all(c, NULL, &all), N);
    char k[32];
    for (int i = 0; i < N; i++) {
        snprintf(k, sizeof k, "%s:%d", i % 10 == 0 ? "tens" : "key", i);
        if (strset_add(&all, k)) h_fail("SCAN missed %s", k);
    }
    strset_free(&all);

    struct strset tens = { 0 };
    assert_int_equal(scan_all(c, "MATCH tens:* COUNT 1000", &tens), N / 10);
    for (size_t i = 0; i < tens.cap; i++)
        if (tens.v[i] && strncmp(tens.v[i], "tens:", 5) != 0) h_fail("MATCH returned %s", tens.v[i]);
    strset_free(&tens);

    struct strset typed = { 0 };
    assert_int_equal(scan_all(c, "TYPE string COUNT 500", &typed), N);
    strset_free(&typed);
    struct strset lists = { 0 };
    assert_int_equal(scan_all(c, "TYPE list", &lists), 0);
    strset_free(&lists);

    /* COUNT is a hint: one call with a large count on a small db returns all */
    OK(c, "SELECT 3");
    OK(c, "MSET a 1 b 2 x 3");
    redisReply *r = cmd(c, "SCAN 0 COUNT 1000");
    assert_string_equal(r->element[0]->str, "0");
    freeReplyObject(r);
    struct strset small = { 0 };
    assert_int_equal(scan_all(c, NULL, &small), 3);
    strset_free(&small);
}

static void test_scan_errors(void **state)
{
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR invalid cursor", "SCAN x");
    ERR(c, "ERR syntax error", "SCAN 0 COUNT 0");
    ERR(c, "ERR value is not an integer or out of range", "SCAN 0 COUNT x");
    ERR(c, "ERR syntax error", "SCAN 0 foo");
    ERR(c, "ERR syntax error", "SCAN 0 MATCH");
    ERR(c, "ERR wrong number of arguments for 'scan' command", "SCAN");
}

static void test_scan_empty(void **state)
{
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "SCAN 0");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "0");
    assert_int_equal(r->element[1]->elements, 0);
    freeReplyObject(r);
}

static void test_randomkey(void **state)
{
    redisContext *c = FIX(state)->c;
    NIL(c, "RANDOMKEY");
    OK(c, "SET a 1");
    BULK(c, "a", "RANDOMKEY");
    OK(c, "SET b 1");
    OK(c, "SET x 1");
    bool seen[3] = { 0 };
    for (int i = 0; i < 200; i++) {
        redisReply *r = cmd(c, "RANDOMKEY");
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        if (strcmp(r->str, "a") == 0) seen[0] = true;
        else if (strcmp(r->str, "b") == 0) seen[1] = true;
        else if (strcmp(r->str, "x") == 0) seen[2] = true;
        else h_fail("RANDOMKEY returned %s", r->str);
        freeReplyObject(r);
    }
    /* the chance to miss one of three keys in 200 tries is ~1e-35 */
    assert_true(seen[0] && seen[1] && seen[2]);
    ERR(c, "ERR wrong number of arguments for 'randomkey' command", "RANDOMKEY x");
}

static void test_rename(void **state)
{
    redisContext *c = FIX(state)->c;
    other_shard("a", "b");
    OK(c, "SET a va");
    OK(c, "RENAME a b");
    NIL(c, "GET a");
    BULK(c, "va", "GET b");
    INT(c, -1, "TTL b");
    /* TTL moves with the value; the destination is overwritten */
    OK(c, "SET x vx EX 100");
    OK(c, "RENAME x b");
    BULK(c, "vx", "GET b");
    expect_int_range(cmd(c, "TTL b"), 95, 100);
    INT(c, 0, "EXISTS x");
    /* a TTL on the destination goes away when the source has none */
    OK(c, "SET y vy");
    OK(c, "RENAME y b");
    INT(c, -1, "TTL b");
    ERR(c, "ERR no such key", "RENAME nosuch b");
    ERR(c, "ERR no such key", "RENAME nosuch nosuch");
    OK(c, "RENAME b b");
    BULK(c, "vy", "GET b");
    ERR(c, "ERR wrong number of arguments for 'rename' command", "RENAME a");

    INT(c, 1, "RENAMENX b a");
    BULK(c, "vy", "GET a");
    OK(c, "SET b other");
    INT(c, 0, "RENAMENX a b");
    BULK(c, "vy", "GET a");
    BULK(c, "other", "GET b");
    INT(c, 0, "RENAMENX a a");
    ERR(c, "ERR no such key", "RENAMENX nosuch b");
    /* same hash tag: same shard */
    OK(c, "SET {t}1 v");
    OK(c, "RENAME {t}1 {t}2");
    BULK(c, "v", "GET {t}2");
}

static void test_copy(void **state)
{
    redisContext *c = FIX(state)->c;
    other_shard("a", "b");
    OK(c, "SET a va EX 100");
    INT(c, 1, "COPY a b");
    BULK(c, "va", "GET b");
    BULK(c, "va", "GET a");
    expect_int_range(cmd(c, "TTL b"), 95, 100);
    OK(c, "SET a new");
    BULK(c, "va", "GET b");             /* a real copy */
    INT(c, 0, "COPY a b");
    BULK(c, "va", "GET b");
    INT(c, 1, "COPY a b REPLACE");
    BULK(c, "new", "GET b");
    INT(c, -1, "TTL b");
    INT(c, 0, "COPY nosuch b");
    INT(c, 0, "COPY nosuch b REPLACE");
    BULK(c, "new", "GET b");
    ERR(c, "ERR source and destination objects are the same", "COPY a a");
    /* to another database */
    INT(c, 1, "COPY a a DB 1");
    INT(c, 0, "COPY a a DB 1");
    INT(c, 1, "COPY a b DB 1 REPLACE");
    OK(c, "SELECT 1");
    BULK(c, "new", "GET a");
    BULK(c, "new", "GET b");
    OK(c, "SELECT 0");
    ERR(c, "ERR DB index is out of range", "COPY a b DB 16");
    ERR(c, "ERR value is not an integer or out of range", "COPY a b DB x");
    ERR(c, "ERR syntax error", "COPY a b foo");
    ERR(c, "ERR wrong number of arguments for 'copy' command", "COPY a");
}

static void test_move_swapdb(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "SET a va EX 100");
    INT(c, 1, "MOVE a 1");
    INT(c, 0, "EXISTS a");
    INT(c, 0, "MOVE a 1");
    INT(c, 0, "MOVE nosuch 1");
    OK(c, "SELECT 1");
    BULK(c, "va", "GET a");
    expect_int_range(cmd(c, "TTL a"), 95, 100);
    OK(c, "SET b in1");
    OK(c, "SELECT 0");
    OK(c, "SET b in0");
    INT(c, 0, "MOVE b 1");              /* exists in the target: not moved */
    BULK(c, "in0", "GET b");
    ERR(c, "ERR source and destination objects are the same", "MOVE b 0");
    ERR(c, "ERR DB index is out of range", "MOVE b 16");
    ERR(c, "ERR value is not an integer or out of range", "MOVE b x");

    /* SWAPDB, seen by another connection that selected db 1 */
    redisContext *c2 = h_connect(&FIX(state)->srv);
    OK(c2, "SELECT 1");
    BULK(c2, "va", "GET a");
    OK(c, "SWAPDB 0 1");
    BULK(c, "va", "GET a");
    BULK(c, "in1", "GET b");
    NIL(c2, "GET a");
    BULK(c2, "in0", "GET b");
    INT(c, 2, "DBSIZE");
    INT(c2, 1, "DBSIZE");
    OK(c, "SWAPDB 1 0");
    BULK(c2, "va", "GET a");
    OK(c, "SWAPDB 0 0");
    ERR(c, "ERR DB index is out of range", "SWAPDB 0 16");
    ERR(c, "ERR invalid first DB index", "SWAPDB x 1");
    ERR(c, "ERR invalid second DB index", "SWAPDB 1 x");
    ERR(c, "ERR wrong number of arguments for 'swapdb' command", "SWAPDB 1");
    redisFree(c2);
}

static void test_expire_basics(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, -2, "TTL a");
    INT(c, -2, "PTTL a");
    INT(c, -2, "EXPIRETIME a");
    INT(c, -2, "PEXPIRETIME a");
    INT(c, 0, "EXPIRE a 100");
    OK(c, "SET a 1");
    INT(c, -1, "TTL a");
    INT(c, -1, "PTTL a");
    INT(c, -1, "EXPIRETIME a");
    INT(c, -1, "PEXPIRETIME a");
    INT(c, 1, "EXPIRE a 100");
    expect_int_range(cmd(c, "TTL a"), 99, 100);
    expect_int_range(cmd(c, "PTTL a"), 99000, 100000);
    long long now = (long long)time(NULL);
    expect_int_range(cmd(c, "EXPIRETIME a"), now + 98, now + 102);
    INT(c, 1, "PEXPIRE a 50000");
    expect_int_range(cmd(c, "PTTL a"), 49000, 50000);
    INT(c, 1, "EXPIREAT a %lld", now + 200);
    INT(c, now + 200, "EXPIRETIME a");
    INT(c, (now + 200) * 1000, "PEXPIRETIME a");
    INT(c, 1, "PEXPIREAT a %lld", now * 1000 + 300123);
    INT(c, now * 1000 + 300123, "PEXPIRETIME a");
    INT(c, now + 300, "EXPIRETIME a");   /* rounded */
    INT(c, 1, "PERSIST a");
    INT(c, 0, "PERSIST a");
    INT(c, -1, "TTL a");
    INT(c, 0, "PERSIST nosuch");
    /* SET without KEEPTTL clears the TTL */
    INT(c, 1, "EXPIRE a 100");
    OK(c, "SET a 2");
    INT(c, -1, "TTL a");
    /* values that would overflow */
    ERR(c, "ERR invalid expire time in 'expire' command", "EXPIRE a 9223372036854775807");
    ERR(c, "ERR invalid expire time in 'expire' command", "EXPIRE a 9223372036854775");
    ERR(c, "ERR invalid expire time in 'pexpire' command", "PEXPIRE a 9223372036854775807");
    ERR(c, "ERR invalid expire time in 'expireat' command", "EXPIREAT a 9223372036854775807");
    ERR(c, "ERR invalid expire time in 'expire' command", "EXPIRE a -9223372036854775807");
    ERR(c, "ERR value is not an integer or out of range", "EXPIRE a x");
    ERR(c, "ERR value is not an integer or out of range", "EXPIRE a 1.5");
    ERR(c, "ERR value is not an integer or out of range", "EXPIRE a 99999999999999999999");
    INT(c, -1, "TTL a");
    ERR(c, "ERR wrong number of arguments for 'expire' command", "EXPIRE a");
    ERR(c, "ERR wrong number of arguments for 'ttl' command", "TTL");
    ERR(c, "ERR wrong number of arguments for 'persist' command", "PERSIST");
    /* the largest absolute time is accepted */
    INT(c, 1, "PEXPIREAT a 9223372036854775807");
    INT(c, 9223372036854775807LL, "PEXPIRETIME a");
    expect_int_range(cmd(c, "TTL a"), 9000000000000000LL, 9223372036854775LL);
}

static void test_expire_options(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "SET a 1");
    /* NX: only when no TTL */
    INT(c, 0, "EXPIRE a 100 XX");
    INT(c, -1, "TTL a");
    INT(c, 0, "EXPIRE a 100 GT");       /* no TTL counts as infinite */
    INT(c, -1, "TTL a");
    INT(c, 1, "EXPIRE a 100 NX");
    INT(c, 0, "EXPIRE a 200 NX");
    expect_int_range(cmd(c, "TTL a"), 99, 100);
    INT(c, 1, "EXPIRE a 200 XX");
    expect_int_range(cmd(c, "TTL a"), 199, 200);
    INT(c, 0, "EXPIRE a 100 GT");
    INT(c, 1, "EXPIRE a 300 GT");
    expect_int_range(cmd(c, "TTL a"), 299, 300);
    INT(c, 0, "EXPIRE a 400 LT");
    INT(c, 1, "EXPIRE a 50 LT");
    expect_int_range(cmd(c, "TTL a"), 49, 50);
    INT(c, 1, "EXPIRE a 60 xx gt");    /* combinable, case-insensitive */
    INT(c, 0, "EXPIRE a 10 XX GT");
    OK(c, "SET b 1");
    INT(c, 1, "PEXPIRE b 100000 LT");   /* no TTL: LT always applies */
    expect_int_range(cmd(c, "PTTL b"), 99000, 100000);
    long long now = (long long)time(NULL);
    INT(c, 0, "EXPIREAT b %lld NX", now + 1000);
    INT(c, 1, "EXPIREAT b %lld GT", now + 1000);
    INT(c, 1, "PEXPIREAT b %lld LT", (now + 500) * 1000);
    INT(c, 0, "EXPIRE nosuch 10 NX");
    ERR(c, "ERR NX and XX, GT or LT options at the same time are not compatible", "EXPIRE a 10 NX XX");
    ERR(c, "ERR NX and XX, GT or LT options at the same time are not compatible", "EXPIRE a 10 NX GT");
    ERR(c, "ERR NX and XX, GT or LT options at the same time are not compatible", "PEXPIRE a 10 LT NX");
    ERR(c, "ERR GT and LT options at the same time are not compatible", "EXPIRE a 10 GT LT");
    ERR(c, "ERR GT and LT options at the same time are not compatible", "EXPIREAT a 10 LT GT");
    ERR(c, "ERR Unsupported option foo", "EXPIRE a 10 foo");
    ERR(c, "ERR Unsupported option foo", "PEXPIREAT a 10 NX foo");
    expect_int_range(cmd(c, "TTL a"), 50, 60);
}

static void test_expire_deletes(void **state)
{
    redisContext *c = FIX(state)->c;
    /* a negative TTL or a time in the past deletes the key */
    OK(c, "SET a 1");
    INT(c, 1, "EXPIRE a -1");
    INT(c, 0, "EXISTS a");
    OK(c, "SET a 1");
    INT(c, 1, "PEXPIRE a 0");
    INT(c, 0, "EXISTS a");
    OK(c, "SET a 1");
    INT(c, 1, "EXPIREAT a 1");
    NIL(c, "GET a");
    OK(c, "SET a 1");
    INT(c, 1, "PEXPIREAT a %lld", (long long)time(NULL) * 1000 - 1000);
    INT(c, -2, "TTL a");
    INT(c, 0, "DBSIZE");

    /* sub-second expiry on access */
    OK(c, "SET b 1 PX 100");
    OK(c, "SET x 1");
    INT(c, 1, "PEXPIRE x 150");
    expect_int_range(cmd(c, "PTTL b"), 1, 100);
    h_sleep_ms(250);
    NIL(c, "GET b");
    INT(c, 0, "EXISTS x");
    INT(c, -2, "PTTL b");
    INT(c, 0, "DBSIZE");

    /* active expiry: keys that are never accessed again go away */
    for (int i = 0; i < 100; i++)
        OK(c, "SET active:%d v PX %d", i, 50 + i);
    OK(c, "SET keep v");
    long long deadline = h_now_ms() + 5000;
    long long n = -1;
    while (h_now_ms() < deadline) {
        redisReply *r = cmd(c, "DBSIZE");
        n = r->integer;
        freeReplyObject(r);
        if (n == 1) break;
        h_sleep_ms(50);
    }
    assert_int_equal(n, 1);
    assert_true(info_ll(c, "stats", "expired_keys") >= 100 + 2);
    BULK(c, "v", "GET keep");
}

static void test_object(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "SET i 12345");
    BULK(c, "int", "OBJECT ENCODING i");
    OK(c, "SET n -9223372036854775808");
    BULK(c, "int", "OBJECT ENCODING n");
    OK(c, "SET big 9223372036854775808");      /* past long long */
    BULK(c, "embstr", "OBJECT ENCODING big");
    OK(c, "SET lz 012");                       /* not canonical */
    BULK(c, "embstr", "OBJECT ENCODING lz");
    OK(c, "SET s hello");
    BULK(c, "embstr", "OBJECT ENCODING s");
    char v44[45], v45[46];
    memset(v44, 'x', 44); v44[44] = 0;
    memset(v45, 'x', 45); v45[45] = 0;
    OK(c, "SET e44 %s", v44);
    BULK(c, "embstr", "OBJECT ENCODING e44");
    OK(c, "SET r45 %s", v45);
    BULK(c, "raw", "OBJECT ENCODING r45");
    NIL(c, "OBJECT ENCODING nosuch");
    INT(c, 1, "OBJECT REFCOUNT s");
    /* Redis's shared integers 0..9999: not with maxmemory and an LRU/LFU policy */
    OK(c, "SET small 9999");
    OK(c, "SET big 10000");
    INT(c, 2147483647, "OBJECT REFCOUNT small");
    INT(c, 1, "OBJECT REFCOUNT big");
    OK(c, "CONFIG SET maxmemory 1073741824");
    OK(c, "CONFIG SET maxmemory-policy allkeys-random");
    INT(c, 2147483647, "OBJECT REFCOUNT small");
    OK(c, "CONFIG SET maxmemory-policy allkeys-lru");
    OK(c, "SET small 9999");
    INT(c, 1, "OBJECT REFCOUNT small");
    OK(c, "CONFIG SET maxmemory 0");
    OK(c, "CONFIG SET maxmemory-policy noeviction");
    redisReply *idle = cmd(c, "OBJECT IDLETIME s");   /* whole seconds: 1 if one began since the SET */
    assert_int_equal(idle->type, REDIS_REPLY_INTEGER);
    assert_in_range(idle->integer, 0, 1);
    freeReplyObject(idle);
    NIL(c, "OBJECT IDLETIME nosuch");
    ERR(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
           "that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
        "OBJECT FREQ s");
    ERR(c, "ERR unknown subcommand 'foo'. Try OBJECT HELP.", "OBJECT foo s");
    ERR(c, "ERR wrong number of arguments for 'object|encoding' command", "OBJECT ENCODING");
}

static void test_object_append_raw(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "SET s hello");
    INT(c, 10, "APPEND s world");
    BULK(c, "raw", "OBJECT ENCODING s");
    OK(c, "SET i 1");
    INT(c, 2, "INCR i");
    BULK(c, "int", "OBJECT ENCODING i");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_del_unlink_exists, h_flushall),
        cmocka_unit_test_setup(test_touch_type, h_flushall),
        cmocka_unit_test_setup(test_keys_patterns, h_flushall),
        cmocka_unit_test_setup(test_scan_empty, h_flushall),
        cmocka_unit_test_setup(test_scan, h_flushall),
        cmocka_unit_test_setup(test_scan_errors, h_flushall),
        cmocka_unit_test_setup(test_randomkey, h_flushall),
        cmocka_unit_test_setup(test_rename, h_flushall),
        cmocka_unit_test_setup(test_copy, h_flushall),
        cmocka_unit_test_setup(test_move_swapdb, h_flushall),
        cmocka_unit_test_setup(test_expire_basics, h_flushall),
        cmocka_unit_test_setup(test_expire_options, h_flushall),
        cmocka_unit_test_setup(test_expire_deletes, h_flushall),
        cmocka_unit_test_setup(test_object, h_flushall),
        cmocka_unit_test_setup(test_object_append_raw, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("keys", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
