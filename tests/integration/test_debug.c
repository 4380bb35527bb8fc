/*
 * DEBUG's subcommands: DIGEST over the whole dataset (the same whatever
 * order keys were written in and whichever shard holds them, different
 * after any change; Redis 7.0.15's own values for a fixed dataset),
 * DIGEST-VALUE, OBJECT's line and its encoding field for every type,
 * SET-ACTIVE-EXPIRE (expired keys stay counted until read while it is 0,
 * and go once it is 1), LISTPACK, QUICKLIST, QUICKLIST-PACKED-THRESHOLD,
 * PROTOCOL, and the errors: a missing key, a wrong number of arguments,
 * an unknown subcommand.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZERO_DIGEST "0000000000000000000000000000000000000000"

/* A status reply's text, copied (the reply freed). */
static char *status_text(redisReply *r) {
    if (r->type != REDIS_REPLY_STATUS) {
        char *s = reply_repr(r);
        freeReplyObject(r);
        h_fail("expected a status reply, got %s", s);
    }
    char *s = strdup(r->str);
    freeReplyObject(r);
    return s;
}

static char *digest(redisContext *c) {
    char *d = status_text(cmd(c, "DEBUG DIGEST"));
    assert_int_equal(strlen(d), 40);
    return d;
}

/* Two keys of each type, one per slot parity, so that with two or more
 * threads each type has a key on two shards (checked with h_key_slot). */
static const char *const keys[] = { "str{a}", "str{b}", "list{a}", "list{b}", "set{a}", "set{b}",
                                    "zset{a}", "zset{b}", "hash{a}", "hash{b}", "st{a}", "st{b}" };
#define NKEYS (sizeof keys / sizeof keys[0])

static void write_key(redisContext *c, size_t k, bool reverse) {
    const char *key = keys[k];
    char val[32];
    snprintf(val, sizeof val, "value-%d", (int)k);
    switch (k / 2) {
    case 0: OK(c, "SET %s %s", key, val); break;
    case 1: INT(c, 4, "RPUSH %s a b 1 2", key); break;   /* order matters for lists: kept */
    case 2: INT(c, 4, reverse ? "SADD %s 3 c b a" : "SADD %s a b c 3", key); break;
    case 3: INT(c, 3, reverse ? "ZADD %s 3 c 2.5 b 1 a" : "ZADD %s 1 a 2.5 b 3 c", key); break;
    case 4: INT(c, 3, reverse ? "HSET %s h 3 g 1 f v" : "HSET %s f v g 1 h 3", key); break;
    default:
        BULK(c, "1-1", "XADD %s 1-1 a b", key);
        BULK(c, "2-1", "XADD %s 2-1 c d", key);
        break;
    }
}

static void write_dataset(redisContext *c, bool reverse) {
    for (size_t i = 0; i < NKEYS; i++) write_key(c, reverse ? NKEYS - 1 - i : i, reverse);
    INT(c, 1, "EXPIRE str{b} 100000");
}

static void test_key_slots_span_parities(void **state) {
    (void)state;
    for (size_t i = 0; i < NKEYS; i += 2)
        assert_int_not_equal(h_key_slot(keys[i], strlen(keys[i])) % 2, h_key_slot(keys[i + 1], strlen(keys[i + 1])) % 2);
}

static void test_digest_empty(void **state) {
    redisContext *c = FIX(state)->c;
    STATUS(c, ZERO_DIGEST, "DEBUG DIGEST");
    OK(c, "SET k v");
    char *d = digest(c);
    assert_string_not_equal(d, ZERO_DIGEST);
    free(d);
    INT(c, 1, "DEL k");
    STATUS(c, ZERO_DIGEST, "DEBUG DIGEST");
}

/* The same data written in another order, sets and hashes built in another
 * order too: the same digest; then every kind of change gives another. */
static void test_digest_order_independent(void **state) {
    redisContext *c = FIX(state)->c;
    write_dataset(c, false);
    char *d1 = digest(c);
    OK(c, "FLUSHALL");
    write_dataset(c, true);
    char *d2 = digest(c);
    assert_string_equal(d1, d2);

    static const char *const changes[][2] = {
        { "SET str{a} other", "SET str{a} value-0" },
        { "LSET list{b} 0 z", "LSET list{b} 0 a" },
        { "SREM set{a} c", "SADD set{a} c" },
        { "ZADD zset{b} 9 a", "ZADD zset{b} 1 a" },
        { "HSET hash{a} f w", "HSET hash{a} f v" },
        { "PERSIST str{b}", "EXPIRE str{b} 100000" },
        { "XADD st{a} 3-1 e f", "XDEL st{a} 3-1" },
    };
    for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++) {
        freeReplyObject(cmd(c, changes[i][0]));
        char *d = digest(c);
        if (strcmp(d, d1) == 0) h_fail("'%s' left DEBUG DIGEST unchanged", changes[i][0]);
        free(d);
        freeReplyObject(cmd(c, changes[i][1]));
        /* a stream keeps its last ID after XDEL, which the digest does not cover */
        char *back = digest(c);
        if (strcmp(back, d1) != 0) h_fail("'%s' then '%s' changed DEBUG DIGEST", changes[i][0], changes[i][1]);
        free(back);
    }
    /* list order counts */
    OK(c, "LSET list{a} 0 b");
    OK(c, "LSET list{a} 1 a");
    char *d3 = digest(c);
    assert_string_not_equal(d3, d1);
    free(d3);
    OK(c, "LSET list{a} 0 a");
    OK(c, "LSET list{a} 1 b");
    /* the same key in another database is another dataset */
    INT(c, 1, "MOVE str{a} 1");
    char *d4 = digest(c);
    assert_string_not_equal(d4, d1);
    free(d4);
    OK(c, "SELECT 1");
    INT(c, 1, "MOVE str{a} 0");
    OK(c, "SELECT 0");
    char *d5 = digest(c);
    assert_string_equal(d5, d1);
    free(d5);
    free(d1);
    free(d2);
}

/* Digests are Redis's own: these are redis-server 7.0.15's for this data. */
static void test_digest_matches_redis(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SET foo bar");
    INT(c, 4, "RPUSH l a b 1 2");
    INT(c, 3, "SADD s a b 3");
    INT(c, 2, "ZADD z 1 a 2.5 b");
    INT(c, 2, "HSET h f v g 1");
    BULK(c, "1-1", "XADD st 1-1 a b");
    OK(c, "SET e 1 EX 100000");
    OK(c, "SELECT 3");
    OK(c, "SET foo bar");
    OK(c, "SELECT 0");
    STATUS(c, "f41be39d5518fd82e28cbf90b53fd0f006cced8c", "DEBUG DIGEST");
    redisReply *r = cmd(c, "DEBUG DIGEST-VALUE foo l s z h st e nokey");
    static const char *const want[] = {
        "68467c70ae30376e7ce005bcc8827f5ba7fd67dc", "6b15aa298e0e4d1f6244448df32b23e74a4147ce",
        "aa475a4a8f122ca5936aa41d911aacf8c93b827d", "c45c5b051acd64070e5ed1a949939d5145f806c5",
        "6679ee22f89ed8001eeb5309d0900265ea56c03a", "db20534e81d36b705394fcfc8a61996efb6e5a7c",
        "5279988c5d1911f474bcbbf2f0a87012d40f8459", ZERO_DIGEST,
    };
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 8);
    for (size_t i = 0; i < 8; i++) {
        assert_int_equal(r->element[i]->type, REDIS_REPLY_STATUS);
        assert_string_equal(r->element[i]->str, want[i]);
    }
    freeReplyObject(r);
    expect_empty_array(cmd(c, "DEBUG DIGEST-VALUE"));
}

/* Big encodings digest as their small forms, and a reload changes nothing. */
static void test_digest_encodings_and_reload(void **state) {
    redisContext *c = FIX(state)->c;
    for (int i = 1; i <= 300; i++) {
        INT(c, i, "RPUSH bl e%d", i);
        INT(c, 1, "SADD bs m%d", i);
        INT(c, 1, "SADD is %d", i);
        INT(c, 1, "ZADD bz %d.5 m%d", i, i);
        INT(c, 1, "HSET bh f%d v%d", i, i);
    }
    /* redis-server 7.0.15's digest of this dataset */
    STATUS(c, "6709c039b4738a34c9d5ad2e4a0e0711a1977ade", "DEBUG DIGEST");
    OK(c, "DEBUG RELOAD");
    STATUS(c, "6709c039b4738a34c9d5ad2e4a0e0711a1977ade", "DEBUG DIGEST");
}

/* The field after "name:" in a DEBUG OBJECT line. */
static void field(const char *line, const char *name, char *out, size_t n) {
    char pat[64];
    snprintf(pat, sizeof pat, " %s:", name);
    const char *p = strstr(line, pat);
    if (!p && strncmp(line, pat + 1, strlen(pat + 1)) == 0) p = line - 1;
    if (!p) h_fail("no %s in '%s'", name, line);
    p += strlen(pat);
    size_t len = strcspn(p, " ");
    if (len >= n) len = n - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

static void check_object(redisContext *c, const char *key) {
    redisReply *r = cmd(c, "OBJECT ENCODING %s", key);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    char enc[32];
    snprintf(enc, sizeof enc, "%s", r->str);
    freeReplyObject(r);
    char *line = status_text(cmd(c, "DEBUG OBJECT %s", key));
    assert_true(strncmp(line, "Value at:", 9) == 0);
    char got[64];
    field(line, "encoding", got, sizeof got);
    if (strcmp(got, enc) != 0) h_fail("%s: DEBUG OBJECT says %s, OBJECT ENCODING %s", key, got, enc);
    field(line, "refcount", got, sizeof got);
    assert_true(atoll(got) >= 1);
    field(line, "serializedlength", got, sizeof got);
    assert_true(atoll(got) >= 1);
    field(line, "lru", got, sizeof got);
    field(line, "lru_seconds_idle", got, sizeof got);
    /* the quicklist's own fields, only for a quicklist */
    bool ql = strcmp(enc, "quicklist") == 0;
    assert_int_equal(strstr(line, " ql_nodes:") != NULL, ql);
    if (ql) {
        field(line, "ql_nodes", got, sizeof got);
        assert_true(atoll(got) >= 1);
        field(line, "ql_avg_node", got, sizeof got);
        field(line, "ql_listpack_max", got, sizeof got);
        field(line, "ql_compressed", got, sizeof got);
        field(line, "ql_uncompressed_size", got, sizeof got);
        assert_true(atoll(got) >= 1);
    }
    free(line);
}

static void test_object_encodings(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SET int 12345");
    OK(c, "SET emb hello");
    OK(c, "SET raw %s", "a-string-longer-than-forty-four-bytes-is-raw-encoded");
    INT(c, 7, "APPEND app abcdefg");
    INT(c, 2, "RPUSH smalllist a b");
    for (int i = 0; i < 2000; i++) INT(c, i + 1, "RPUSH biglist element-%d", i);
    INT(c, 3, "SADD intset 1 2 3");
    INT(c, 2, "SADD strset a b");
    for (int i = 0; i < 600; i++) INT(c, 1, "SADD bigset %d", i);
    INT(c, 1, "HSET smallhash f v");
    for (int i = 0; i < 600; i++) INT(c, 1, "HSET bighash f%d v%d", i, i);
    INT(c, 1, "ZADD smallz 1 a");
    for (int i = 0; i < 200; i++) INT(c, 1, "ZADD bigz %d m%d", i, i);
    BULK(c, "1-1", "XADD stream 1-1 a b");
    static const char *const all[] = { "int", "emb", "raw", "app", "smalllist", "biglist", "intset", "strset",
                                       "bigset", "smallhash", "bighash", "smallz", "bigz", "stream" };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) check_object(c, all[i]);
    /* the encodings this checked include every big one */
    BULK(c, "quicklist", "OBJECT ENCODING biglist");
    BULK(c, "hashtable", "OBJECT ENCODING bigset");
    BULK(c, "hashtable", "OBJECT ENCODING bighash");
    BULK(c, "skiplist", "OBJECT ENCODING bigz");
    BULK(c, "intset", "OBJECT ENCODING intset");
}

static void test_errors(void **state) {
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR no such key", "DEBUG OBJECT nokey");
    ERR(c, "ERR no such key", "DEBUG LISTPACK nokey");
    ERR(c, "ERR no such key", "DEBUG QUICKLIST nokey");
    ERR(c, "ERR wrong number of arguments for 'debug' command", "DEBUG");
    /* the subcommand named as sent */
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'OBJECT'. Try DEBUG HELP.", "DEBUG OBJECT");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'object'. Try DEBUG HELP.", "DEBUG object a b");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'digest'. Try DEBUG HELP.", "DEBUG digest x");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'listpack'. Try DEBUG HELP.", "DEBUG listpack");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'set-active-expire'. Try DEBUG HELP.",
        "DEBUG set-active-expire");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'quicklist-packed-threshold'. Try DEBUG HELP.",
        "DEBUG quicklist-packed-threshold");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'nosuch'. Try DEBUG HELP.", "DEBUG nosuch");
    /* an expired key is gone for LISTPACK (a lookup), not for OBJECT (the table) */
    OK(c, "DEBUG SET-ACTIVE-EXPIRE 0");
    INT(c, 1, "HSET gone f v");
    INT(c, 1, "PEXPIRE gone 1");
    usleep(20 * 1000);
    char *line = status_text(cmd(c, "DEBUG OBJECT gone"));
    free(line);
    ERR(c, "ERR no such key", "DEBUG LISTPACK gone");
    OK(c, "DEBUG SET-ACTIVE-EXPIRE 1");
}

static void test_listpack_quicklist(void **state) {
    redisContext *c = FIX(state)->c;
    INT(c, 2, "HSET h f v g w");
    OK(c, "SET s v");
    for (int i = 0; i < 2000; i++) INT(c, i + 1, "RPUSH big element-%d", i);
    STATUS(c, "Listpack structure printed on stdout", "DEBUG LISTPACK h");
    ERR(c, "ERR Not a listpack encoded object.", "DEBUG LISTPACK s");
    ERR(c, "ERR Not a listpack encoded object.", "DEBUG LISTPACK big");
    STATUS(c, "Quicklist structure printed on stdout", "DEBUG QUICKLIST big");
    STATUS(c, "Quicklist structure printed on stdout", "DEBUG QUICKLIST big 1");
    ERR(c, "ERR Not a quicklist encoded object.", "DEBUG QUICKLIST h");
    ERR(c, "ERR Not a quicklist encoded object.", "DEBUG QUICKLIST s");

    OK(c, "DEBUG QUICKLIST-PACKED-THRESHOLD 1b");
    OK(c, "DEBUG QUICKLIST-PACKED-THRESHOLD 100mb");
    OK(c, "DEBUG QUICKLIST-PACKED-THRESHOLD 0");
    static const char *const bad[] = { "5gb", "4gb", "abc", "-1", "1xb" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ERR(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb",
            "DEBUG QUICKLIST-PACKED-THRESHOLD %s", bad[i]);
    /* the list is unchanged by all this */
    INT(c, 2000, "LLEN big");
}

/* With active expiry off, expired keys on every shard stay in the tables
 * (DBSIZE counts them) until read; on again, the cycle removes them. */
static void test_set_active_expire(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "DEBUG SET-ACTIVE-EXPIRE 0");
    enum { N = 20 };
    for (int i = 0; i < N; i++) OK(c, "SET k%d{%s} v PX 50", i, i % 2 ? "b" : "a");
    /* set last, so once it is gone every other key has expired too */
    OK(c, "SET probe v PX 50");
    int polls = 0;
    for (;;) {
        redisReply *r = cmd(c, "EXISTS probe");
        long long n = r->integer;
        freeReplyObject(r);
        if (!n) break;
        if (++polls > 5000) h_fail("probe never expired");
        usleep(2000);
    }
    /* several cron periods (hz 10: 100 ms): nothing goes by itself */
    for (int i = 0; i < 30; i++) {
        INT(c, N, "DBSIZE");
        usleep(20 * 1000);
    }
    char *line = status_text(cmd(c, "DEBUG OBJECT k0{a}"));   /* sees it, leaves it */
    free(line);
    INT(c, N, "DBSIZE");
    INT(c, 0, "EXISTS k0{a}");   /* a read deletes it */
    INT(c, N - 1, "DBSIZE");
    OK(c, "DEBUG SET-ACTIVE-EXPIRE 1");
    polls = 0;
    for (;;) {
        redisReply *r = cmd(c, "DBSIZE");
        long long n = r->integer;
        freeReplyObject(r);
        if (n == 0) break;
        if (++polls > 1000) h_fail("active expiry left %lld expired keys", n);
        usleep(10 * 1000);
    }
    redisReply *r = cmd(c, "INFO stats");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    char *v = info_field(r->str, "expired_keys");
    assert_non_null(v);
    assert_true(atoll(v) >= N + 1);
    free(v);
    freeReplyObject(r);
}

static void test_protocol(void **state) {
    redisContext *c = FIX(state)->c;
    BULK(c, "Hello World", "DEBUG PROTOCOL string");
    INT(c, 12345, "DEBUG PROTOCOL integer");
    BULK(c, "3.141", "DEBUG PROTOCOL double");
    BULK(c, "1234567999999999999999999999999999999", "DEBUG PROTOCOL bignum");
    NIL(c, "DEBUG PROTOCOL null");
    INT(c, 1, "DEBUG PROTOCOL true");
    INT(c, 0, "DEBUG PROTOCOL false");
    BULK(c, "This is a verbatim\nstring", "DEBUG PROTOCOL verbatim");
    BULK(c, "Some real reply following the attribute", "DEBUG PROTOCOL attrib");
    redisReply *r = cmd(c, "DEBUG PROTOCOL map");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 6);
    assert_int_equal(r->element[3]->integer, 1);   /* 1 => true */
    freeReplyObject(r);
    ERR(c, "ERR RESP2 is not supported by this command", "DEBUG PROTOCOL push");
    ERR(c, "ERR Wrong protocol type name. Please use one of the following: "
           "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false",
        "DEBUG PROTOCOL nosuch");
}

static void test_misc(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "DEBUG CHANGE-REPL-ID");
    OK(c, "DEBUG SLEEP 0");
    OK(c, "DEBUG LOG hello");
    STATUS(c, "Apparently Redis did not crash: test passed", "DEBUG STRINGMATCH-TEST");
    ERR(c, "MYERR some text", "DEBUG ERROR %s", "MYERR some\ntext");
    redisReply *r = cmd(c, "DEBUG HELP");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    static const char *const want[] = { "DIGEST", "DIGEST-VALUE <key> [<key> ...]", "OBJECT <key>",
                                        "SET-ACTIVE-EXPIRE <0|1>", "QUICKLIST-PACKED-THRESHOLD <size>",
                                        "LISTPACK <key>", "QUICKLIST <key> [<0|1>]", "PROTOCOL <type>" };
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        bool found = false;
        for (size_t i = 0; i < r->elements; i++) found |= strcmp(r->element[i]->str, want[w]) == 0;
        if (!found) h_fail("DEBUG HELP has no '%s' line", want[w]);
    }
    freeReplyObject(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_slots_span_parities),
        cmocka_unit_test_setup(test_digest_empty, h_flushall),
        cmocka_unit_test_setup(test_digest_order_independent, h_flushall),
        cmocka_unit_test_setup(test_digest_matches_redis, h_flushall),
        cmocka_unit_test_setup(test_digest_encodings_and_reload, h_flushall),
        cmocka_unit_test_setup(test_object_encodings, h_flushall),
        cmocka_unit_test_setup(test_errors, h_flushall),
        cmocka_unit_test_setup(test_listpack_quicklist, h_flushall),
        cmocka_unit_test_setup(test_set_active_expire, h_flushall),
        cmocka_unit_test_setup(test_protocol, h_flushall),
        cmocka_unit_test_setup(test_misc, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("debug", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
