/*
 * Streams: XADD (IDs given, partial and generated, NOMKSTREAM, MAXLEN and
 * MINID trims), XLEN, XRANGE/XREVRANGE (exclusive bounds, COUNT), XDEL,
 * XTRIM, XSETID, XREAD, TYPE and OBJECT ENCODING, key commands on streams,
 * and every error; blocking XREAD and XREADGROUP served by an XADD on
 * another connection (streams on different shards, waiters on every
 * thread: all readers of a stream are served, one group consumer gets each
 * entry), "$" meaning what it meant when the wait began, timeouts, CLIENT
 * UNBLOCK, and no blocking inside MULTI. Group commands themselves are in
 * test_stream_group.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_ID "ERR Invalid stream ID specified as stream command argument"
#define ERR_SMALL "ERR The ID specified in XADD is equal or smaller than the target stream top item"

/* The ID of entry i of an XRANGE-like reply. */
static const char *entry_id(const redisReply *r, size_t i) {
    assert_true(r->type == REDIS_REPLY_ARRAY && i < r->elements);
    return r->element[i]->element[0]->str;
}

static void test_xadd_ids(void **state) {
    redisContext *c = FIX(state)->c;
    BULK(c, "1-1", "XADD s 1-1 f v");
    BULK(c, "1-2", "XADD s 1-* f v");
    BULK(c, "2-0", "XADD s 2-* f v");
    BULK(c, "5-0", "XADD s 5 f v");
    ERR(c, ERR_SMALL, "XADD s 5-0 f v");
    ERR(c, ERR_SMALL, "XADD s 4-9 f v");
    ERR(c, "ERR The ID specified in XADD must be greater than 0-0", "XADD t 0-0 f v");
    INT(c, 0, "EXISTS t");
    ERR(c, ERR_ID, "XADD s abc f v");
    ERR(c, ERR_ID, "XADD s 1-x f v");
    ERR(c, ERR_ID, "XADD s - f v");
    ERR(c, "ERR wrong number of arguments for 'xadd' command", "XADD s * f");
    ERR(c, "ERR wrong number of arguments for 'xadd' command", "XADD s * f v g");
    INT(c, 4, "XLEN s");
    /* a generated ID follows the last one even when the clock is behind */
    BULK(c, "18446744073709551615-0", "XADD big 18446744073709551615-0 f v");
    BULK(c, "18446744073709551615-1", "XADD big * f v");
    BULK(c, "18446744073709551615-18446744073709551615", "XADD big 18446744073709551615-18446744073709551615 f v");
    ERR(c, "ERR The stream has exhausted the last possible ID, unable to add more items", "XADD big * f v");
    /* NOMKSTREAM */
    NIL(c, "XADD none NOMKSTREAM * f v");
    INT(c, 0, "EXISTS none");
    STATUS(c, "stream", "TYPE s");
    BULK(c, "stream", "OBJECT ENCODING s");
    OK(c, "SET str x");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "XADD str * f v");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "XRANGE str - +");
}

static void test_ranges(void **state) {
    redisContext *c = FIX(state)->c;
    for (int i = 1; i <= 20; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d-%d", i / 3 + 1, i % 3);
        redisReply *r = cmd(c, "XADD r %s n %d", id, i);
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        freeReplyObject(r);
    }
    redisReply *r = cmd(c, "XRANGE r - +");
    assert_int_equal(r->elements, 20);
    assert_string_equal(entry_id(r, 0), "1-1");
    assert_string_equal(r->element[0]->element[1]->element[0]->str, "n");
    assert_string_equal(r->element[0]->element[1]->element[1]->str, "1");
    freeReplyObject(r);
    r = cmd(c, "XRANGE r 2 3");   /* incomplete IDs: 2-0 .. 3-max */
    assert_int_equal(r->elements, 6);
    assert_string_equal(entry_id(r, 0), "2-0");
    assert_string_equal(entry_id(r, 5), "3-2");
    freeReplyObject(r);
    r = cmd(c, "XRANGE r (2-0 (3-2");
    assert_int_equal(r->elements, 4);
    assert_string_equal(entry_id(r, 0), "2-1");
    freeReplyObject(r);
    r = cmd(c, "XREVRANGE r + - COUNT 3");
    assert_int_equal(r->elements, 3);
    assert_string_equal(entry_id(r, 0), "7-2");
    assert_string_equal(entry_id(r, 2), "7-0");
    freeReplyObject(r);
    r = cmd(c, "XRANGE r - + COUNT 0");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    r = cmd(c, "XRANGE nokey - +");
    assert_int_equal(r->elements, 0);
    freeReplyObject(r);
    ERR(c, "ERR invalid start ID for the interval", "XRANGE r (18446744073709551615-18446744073709551615 +");
    ERR(c, "ERR invalid end ID for the interval", "XRANGE r - (0-0");
    ERR(c, ERR_ID, "XRANGE r (- +");
    ERR(c, "ERR syntax error", "XRANGE r - + LIMIT 1");
    /* XDEL: gone from ranges, counted once */
    INT(c, 2, "XDEL r 2-0 3-1 99-0");
    INT(c, 0, "XDEL r 2-0");
    ERR(c, ERR_ID, "XDEL r 2-0 bad");
    INT(c, 18, "XLEN r");
    r = cmd(c, "XRANGE r 2 3");
    assert_int_equal(r->elements, 4);
    freeReplyObject(r);
}

static void test_trims(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG SET stream-node-max-entries 10");
    for (int i = 1; i <= 100; i++) {
        redisReply *r = cmd(c, "XADD t %d-0 f v", i);
        freeReplyObject(r);
    }
    INT(c, 0, "XTRIM t MAXLEN ~ 95");     /* approximate: only whole nodes */
    INT(c, 5, "XTRIM t MAXLEN = 95");
    INT(c, 95, "XLEN t");
    INT(c, 10, "XTRIM t MINID 16");
    redisReply *r = cmd(c, "XRANGE t - + COUNT 1");
    assert_string_equal(entry_id(r, 0), "16-0");
    freeReplyObject(r);
    INT(c, 0, "XTRIM t MAXLEN ~ 80 LIMIT 1");   /* a node holds more than the limit */
    BULK(c, "101-0", "XADD t MAXLEN 50 101-0 f v");
    INT(c, 50, "XLEN t");
    BULK(c, "102-0", "XADD t MINID ~ 70 LIMIT 100 102-0 f v");
    ERR(c, "ERR syntax error", "XTRIM t FOO BAR");
    ERR(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy", "XTRIM t LIMIT 10");
    ERR(c, "ERR syntax error, LIMIT cannot be used without the special ~ option", "XTRIM t MAXLEN 5 LIMIT 10");
    ERR(c, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible", "XTRIM t MAXLEN 5 MINID 1");
    ERR(c, "ERR The MAXLEN argument must be >= 0.", "XTRIM t MAXLEN -1");
    ERR(c, "ERR value is not an integer or out of range", "XTRIM t MAXLEN x");
    ERR(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy", "XADD t LIMIT 5 * f v");
    INT(c, 0, "XTRIM nokey MAXLEN 0");
    redisReply *len = cmd(c, "XLEN t");
    assert_true(len->integer > 40 && len->integer <= 51);
    INT(c, len->integer, "XTRIM t MAXLEN 0");
    freeReplyObject(len);
    INT(c, 1, "EXISTS t");                /* an empty stream stays */
    INT(c, 0, "XLEN t");
    OK(c, "CONFIG SET stream-node-max-entries 100");
}

static void test_xsetid(void **state) {
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR no such key", "XSETID nokey 1-1");
    BULK(c, "5-0", "XADD s 5-0 f v");
    ERR(c, "ERR The ID specified in XSETID is smaller than the target stream top item", "XSETID s 4-0");
    OK(c, "XSETID s 10-0");
    BULK(c, "10-1", "XADD s 10-* f v");
    ERR(c, "ERR The entries_added specified in XSETID is smaller than the target stream length",
        "XSETID s 20-0 ENTRIESADDED 1");
    ERR(c, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
        "XSETID s 20-0 ENTRIESADDED 5 MAXDELETEDID 30-0");
    OK(c, "XSETID s 20-0 ENTRIESADDED 5 MAXDELETEDID 15-0");
    ERR(c, "ERR syntax error", "XSETID s 20-0 FOO");
}

static void test_xread(void **state) {
    redisContext *c = FIX(state)->c;
    char k1[32], k2[32];
    h_two_shard_keys("xr:", k1, k2);
    BULK(c, "1-0", "XADD %s 1-0 a 1", k1);
    BULK(c, "2-0", "XADD %s 2-0 b 2", k2);
    redisReply *r = cmd(c, "XREAD STREAMS %s %s 0 0", k1, k2);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->element[0]->str, k1);
    assert_string_equal(r->element[1]->element[0]->str, k2);
    freeReplyObject(r);
    r = cmd(c, "XREAD COUNT 1 STREAMS %s %s 0 $", k1, k2);
    assert_int_equal(r->elements, 1);
    freeReplyObject(r);
    NIL(c, "XREAD STREAMS %s $", k1);
    ERR(c, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
        "XREAD STREAMS %s %s 0", k1, k2);
    ERR(c, "ERR syntax error", "XREAD COUNT 1 %s", k1);
    ERR(c, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.",
        "XREAD STREAMS %s >", k1);
    ERR(c, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
        "XREAD GROUP g c STREAMS %s 0", k1);
    ERR(c, "ERR timeout is negative", "XREAD BLOCK -1 STREAMS %s 0", k1);
    ERR(c, "ERR timeout is not an integer or out of range", "XREAD BLOCK 1.5 STREAMS %s 0", k1);
    ERR(c, "NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option",
        "XREADGROUP GROUP g c STREAMS nokey >");
    ERR(c, "ERR Missing GROUP option for XREADGROUP", "XREADGROUP COUNT 1 COUNT 1 STREAMS %s >", k1);
    /* inside MULTI a blocking read does not block */
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "XREAD BLOCK 0 STREAMS %s $", k1);
    r = cmd(c, "EXEC");
    assert_int_equal(r->elements, 1);
    assert_int_equal(r->element[0]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    /* RESP3: a map of stream -> entries */
    struct raw *w = raw_connect(&FIX(state)->srv);
    raw_cmd(w, "HELLO 3");
    rv_free(raw_reply(w));
    raw_cmd(w, "XREAD STREAMS %s 0", k1);
    struct rv *m = raw_reply(w);
    assert_int_equal(m->type, '%');
    assert_non_null(rv_map_get(m, k1));
    rv_free(m);
    raw_close(w);
}

/* Wait (bounded) until n clients are blocked. */
static void wait_blocked(redisContext *c, long long n) {
    for (int i = 0; i < 2000; i++) {
        if (info_ll(c, "clients", "blocked_clients") == n) return;
        h_sleep_ms(5);
    }
    fail_msg("blocked_clients never reached %lld", n);
}

/* Readers on every thread wait on two streams on different shards; an
 * XADD to either serves all of them, with what came after "$". */
static void test_block_every_reader(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    char k1[32], k2[32];
    h_two_shard_keys("xb:", k1, k2);
    BULK(c, "1-0", "XADD %s 1-0 old 1", k2);   /* before the wait: "$" excludes it */
    enum { N = 6 };
    struct raw *w[N];
    for (int i = 0; i < N; i++) {
        w[i] = raw_connect(&f->srv);
        raw_cmd(w[i], "XREAD BLOCK 0 STREAMS %s %s $ $", k1, k2);
    }
    wait_blocked(c, N);
    BULK(c, "5-0", "XADD %s 5-0 new 1", k2);
    for (int i = 0; i < N; i++) {
        struct rv *r = raw_reply(w[i]);
        assert_int_equal(r->n, 1);
        assert_string_equal(r->elem[0]->elem[0]->str, k2);
        struct rv *entries = r->elem[0]->elem[1];
        assert_int_equal(entries->n, 1);
        assert_string_equal(entries->elem[0]->elem[0]->str, "5-0");
        rv_free(r);
    }
    /* a write to another key, or one that adds nothing new, serves nobody */
    for (int i = 0; i < N; i++) raw_cmd(w[i], "XREAD BLOCK 0 STREAMS %s $", k1);
    wait_blocked(c, N);
    OK(c, "SET other x");
    BULK(c, "6-0", "XADD %s 6-0 x 1", k2);
    for (int i = 0; i < 10; i++) STATUS(c, "PONG", "PING");
    for (int i = 0; i < N; i++) assert_int_equal(raw_fill(w[i], 1, 0), 0);
    BULK(c, "7-0", "XADD %s 7-0 x 1", k1);
    for (int i = 0; i < N; i++) {
        struct rv *r = raw_reply(w[i]);
        assert_string_equal(r->elem[0]->elem[1]->elem[0]->elem[0]->str, "7-0");
        rv_free(r);
        raw_close(w[i]);
    }
}

/* Blocked group consumers: each new entry goes to exactly one; a group
 * that goes answers NOGROUP, a stream that goes UNBLOCKED. */
static void test_block_group(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    BULK(c, "1-0", "XADD g:s 1-0 f v");
    OK(c, "XGROUP CREATE g:s grp $");
    enum { N = 4 };
    struct raw *w[N];
    for (int i = 0; i < N; i++) {
        w[i] = raw_connect(&f->srv);
        raw_cmd(w[i], "XREADGROUP GROUP grp c%d BLOCK 0 STREAMS g:s >", i);
    }
    wait_blocked(c, N);
    BULK(c, "2-0", "XADD g:s 2-0 f v");
    BULK(c, "3-0", "XADD g:s 3-0 f v");
    /* each entry goes to exactly one consumer: two got one each, in some
     * order, or one got both (a reader woken on another thread runs again
     * a round trip later, and may find the second XADD's entry too); the
     * others still wait */
    int got2 = 0, got3 = 0, nserved = 0, served[N] = { 0 };
    for (int round = 0; round < 100 && got2 + got3 < 2; round++)
        for (int i = 0; i < N; i++) {
            if (served[i] || raw_fill(w[i], 1, 20) == 0) continue;
            struct rv *r = raw_reply(w[i]);
            struct rv *entries = r->elem[0]->elem[1];
            for (size_t e = 0; e < entries->n; e++) {
                got2 += strcmp(entries->elem[e]->elem[0]->str, "2-0") == 0;
                got3 += strcmp(entries->elem[e]->elem[0]->str, "3-0") == 0;
            }
            served[i] = 1;
            nserved++;
            rv_free(r);
        }
    assert_int_equal(got2, 1);
    assert_int_equal(got3, 1);
    assert_true(nserved >= 1 && nserved <= 2);
    wait_blocked(c, N - nserved);
    /* the group goes: NOGROUP for the waiters */
    INT(c, 1, "XGROUP DESTROY g:s grp");
    for (int i = 0; i < N; i++) {
        if (served[i]) continue;
        struct rv *e = raw_reply(w[i]);
        assert_int_equal(e->type, '-');
        assert_string_equal(e->str, "NOGROUP the consumer group this client was blocked on no longer exists");
        rv_free(e);
    }
    /* the stream goes: UNBLOCKED */
    OK(c, "XGROUP CREATE g:s grp2 $");
    raw_cmd(w[0], "XREADGROUP GROUP grp2 c BLOCK 0 STREAMS g:s >");
    wait_blocked(c, 1);
    INT(c, 1, "DEL g:s");
    struct rv *e = raw_reply(w[0]);
    assert_string_equal(e->str, "UNBLOCKED the stream key no longer exists");
    rv_free(e);
    for (int i = 0; i < N; i++) raw_close(w[i]);
}

static void test_block_timeout_and_unblock(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    struct raw *w = raw_connect(&f->srv);
    RAW(w, "*-1\r\n", "XREAD BLOCK 50 STREAMS u:s $");
    raw_cmd(w, "CLIENT ID");
    struct rv *id = raw_reply(w);
    long long cid = id->integer;
    rv_free(id);
    raw_cmd(w, "XREAD BLOCK 0 STREAMS u:s $");
    wait_blocked(c, 1);
    INT(c, 1, "CLIENT UNBLOCK %lld", cid);
    raw_expect(w, "*-1\r\n");
    raw_cmd(w, "XREAD BLOCK 0 STREAMS u:s $");
    wait_blocked(c, 1);
    INT(c, 1, "CLIENT UNBLOCK %lld ERROR", cid);
    struct rv *e = raw_reply(w);
    assert_string_equal(e->str, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    rv_free(e);
    RAW(w, "+PONG\r\n", "PING");
    raw_close(w);
}

static void test_key_commands(void **state) {
    redisContext *c = FIX(state)->c;
    BULK(c, "1-0", "XADD k:s 1-0 f v");
    OK(c, "XGROUP CREATE k:s g 0");
    INT(c, 1, "COPY k:s k:copy");
    BULK(c, "2-0", "XADD k:s 2-0 f v");   /* the copy is its own */
    INT(c, 1, "XLEN k:copy");
    OK(c, "RENAME k:copy k:renamed");
    INT(c, 1, "XLEN k:renamed");
    INT(c, 1, "EXPIRE k:renamed 100");
    INT(c, 1, "DEL k:renamed");
    redisReply *r = cmd(c, "SCAN 0 TYPE stream COUNT 1000");
    assert_int_equal(r->element[1]->elements, 1);
    assert_string_equal(r->element[1]->element[0]->str, "k:s");
    freeReplyObject(r);
    r = cmd(c, "MEMORY USAGE k:s");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer > 0);
    freeReplyObject(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_xadd_ids, h_flushall),
        cmocka_unit_test_setup(test_ranges, h_flushall),
        cmocka_unit_test_setup(test_trims, h_flushall),
        cmocka_unit_test_setup(test_xsetid, h_flushall),
        cmocka_unit_test_setup(test_xread, h_flushall),
        cmocka_unit_test_setup(test_block_every_reader, h_flushall),
        cmocka_unit_test_setup(test_block_group, h_flushall),
        cmocka_unit_test_setup(test_block_timeout_and_unblock, h_flushall),
        cmocka_unit_test_setup(test_key_commands, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("stream", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
