/*
 * Pub/sub: SUBSCRIBE/PSUBSCRIBE/SSUBSCRIBE and their UNSUBSCRIBEs, PUBLISH,
 * SPUBLISH and PUBSUB, in RESP2 (a subscribed connection accepts only a few
 * commands) and RESP3 (messages are pushes, any command works). With
 * several threads, subscribers sit on every thread: counts and delivery
 * span them, messages of one publisher keep their order at every
 * subscriber, and a subscriber that does not read is disconnected at the
 * pubsub output limit while the others keep receiving.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Many connections, so that with several threads every thread has some. */
#define NSUBS 12

/* The next reply must be the array [kind, name, count]. */
static void expect_frame(struct raw *r, char type, const char *kind, const char *name, long long count) {
    struct rv *v = raw_reply(r);
    assert_int_equal(v->type, type);
    assert_int_equal(v->n, 3);
    assert_string_equal(v->elem[0]->str, kind);
    if (name) assert_string_equal(v->elem[1]->str, name);
    else assert_true(v->elem[1]->null);
    assert_int_equal(v->elem[2]->integer, count);
    rv_free(v);
}

static void expect_message(struct raw *r, char type, const char *kind, const char *pattern,
                           const char *channel, const char *msg) {
    struct rv *v = raw_reply(r);
    assert_int_equal(v->type, type);
    size_t i = 0;
    assert_int_equal(v->n, pattern ? 4 : 3);
    assert_string_equal(v->elem[i++]->str, kind);
    if (pattern) assert_string_equal(v->elem[i++]->str, pattern);
    assert_string_equal(v->elem[i++]->str, channel);
    assert_string_equal(v->elem[i]->str, msg);
    rv_free(v);
}

static void test_basics(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = raw_connect(&f->srv);
    raw_cmd(s, "SUBSCRIBE chan1 chan2");
    expect_frame(s, '*', "subscribe", "chan1", 1);
    expect_frame(s, '*', "subscribe", "chan2", 2);
    INT(f->c, 1, "PUBLISH chan1 hello");
    INT(f->c, 1, "PUBLISH chan2 world");
    INT(f->c, 0, "PUBLISH chan3 nobody");
    expect_message(s, '*', "message", NULL, "chan1", "hello");
    expect_message(s, '*', "message", NULL, "chan2", "world");
    /* RESP2: only the pub/sub commands, PING, QUIT and RESET */
    raw_cmd(s, "GET x");
    struct rv *e = raw_reply(s);
    assert_int_equal(e->type, '-');
    assert_string_equal(e->str, "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
    rv_free(e);
    RAW(s, "*2\r\n$4\r\npong\r\n$0\r\n\r\n", "PING");
    RAW(s, "*2\r\n$4\r\npong\r\n$3\r\nfoo\r\n", "PING foo");
    raw_cmd(s, "SUBSCRIBE chan1");            /* again: nothing changes */
    expect_frame(s, '*', "subscribe", "chan1", 2);
    raw_cmd(s, "UNSUBSCRIBE chan1 nosuch");
    expect_frame(s, '*', "unsubscribe", "chan1", 1);
    expect_frame(s, '*', "unsubscribe", "nosuch", 1);
    INT(f->c, 0, "PUBLISH chan1 hello");
    raw_cmd(s, "UNSUBSCRIBE");
    expect_frame(s, '*', "unsubscribe", "chan2", 0);
    INT(f->c, 0, "PUBLISH chan2 world");
    RAW(s, "+PONG\r\n", "PING");                /* out of pub/sub mode */
    raw_cmd(s, "UNSUBSCRIBE");
    expect_frame(s, '*', "unsubscribe", NULL, 0);
    raw_cmd(s, "PUNSUBSCRIBE");
    expect_frame(s, '*', "punsubscribe", NULL, 0);
    raw_close(s);
}

static void test_patterns(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = raw_connect(&f->srv);
    raw_cmd(s, "PSUBSCRIBE foo.* b[ae]r.?");
    expect_frame(s, '*', "psubscribe", "foo.*", 1);
    expect_frame(s, '*', "psubscribe", "b[ae]r.?", 2);
    raw_cmd(s, "SUBSCRIBE foo.bar");
    expect_frame(s, '*', "subscribe", "foo.bar", 3);
    INT(f->c, 2, "PUBLISH foo.bar hello");
    expect_message(s, '*', "message", NULL, "foo.bar", "hello");
    expect_message(s, '*', "pmessage", "foo.*", "foo.bar", "hello");
    INT(f->c, 1, "PUBLISH bar.x hi");
    expect_message(s, '*', "pmessage", "b[ae]r.?", "bar.x", "hi");
    INT(f->c, 0, "PUBLISH bar.xy hi");
    INT(f->c, 2, "PUBSUB NUMPAT");
    expect_bulks(cmd(f->c, "PUBSUB CHANNELS"), 1, "foo.bar");
    expect_empty_array(cmd(f->c, "PUBSUB CHANNELS x*"));
    redisReply *r = cmd(f->c, "PUBSUB NUMSUB foo.bar nosuch");
    assert_int_equal(r->elements, 4);
    assert_int_equal(r->element[1]->integer, 1);
    assert_int_equal(r->element[3]->integer, 0);
    freeReplyObject(r);
    raw_cmd(s, "PUNSUBSCRIBE");
    struct rv *a = raw_reply(s), *b = raw_reply(s);   /* in either order */
    assert_string_equal(a->elem[0]->str, "punsubscribe");
    assert_string_equal(b->elem[0]->str, "punsubscribe");
    assert_int_equal(b->elem[2]->integer, 1);
    rv_free(a);
    rv_free(b);
    INT(f->c, 0, "PUBSUB NUMPAT");
    raw_close(s);
}

static void test_resp3(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = raw_connect(&f->srv);
    raw_cmd(s, "HELLO 3");
    rv_free(raw_reply(s));
    raw_cmd(s, "SUBSCRIBE news");
    expect_frame(s, '>', "subscribe", "news", 1);
    RAW(s, "+PONG\r\n", "PING");               /* any command works */
    RAW(s, "_\r\n", "GET nosuch");
    INT(f->c, 1, "PUBLISH news flash");
    expect_message(s, '>', "message", NULL, "news", "flash");
    /* publishing to itself: the push, then the reply */
    raw_cmd(s, "PUBLISH news self");
    expect_message(s, '>', "message", NULL, "news", "self");
    raw_expect(s, ":1\r\n");
    raw_close(s);
}

static void test_shard_channels(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = raw_connect(&f->srv);
    raw_cmd(s, "SSUBSCRIBE sch1 sch2");
    expect_frame(s, '*', "ssubscribe", "sch1", 1);
    expect_frame(s, '*', "ssubscribe", "sch2", 2);
    raw_cmd(s, "SUBSCRIBE plain");              /* counted apart */
    expect_frame(s, '*', "subscribe", "plain", 1);
    INT(f->c, 1, "SPUBLISH sch1 hello");
    INT(f->c, 1, "SPUBLISH sch2 world");
    INT(f->c, 0, "PUBLISH sch1 notshard");
    expect_message(s, '*', "smessage", NULL, "sch1", "hello");
    expect_message(s, '*', "smessage", NULL, "sch2", "world");
    expect_bulks_unordered(cmd(f->c, "PUBSUB SHARDCHANNELS"), 2, "sch1", "sch2");
    expect_bulks(cmd(f->c, "PUBSUB SHARDCHANNELS *1"), 1, "sch1");
    redisReply *r = cmd(f->c, "PUBSUB SHARDNUMSUB sch1 nosuch");
    assert_int_equal(r->elements, 4);
    assert_int_equal(r->element[1]->integer, 1);
    assert_int_equal(r->element[3]->integer, 0);
    freeReplyObject(r);
    raw_cmd(s, "SUNSUBSCRIBE");
    struct rv *a = raw_reply(s), *b = raw_reply(s);
    assert_string_equal(a->elem[0]->str, "sunsubscribe");
    assert_int_equal(b->elem[2]->integer, 0);
    rv_free(a);
    rv_free(b);
    INT(f->c, 0, "SPUBLISH sch1 hello");
    expect_empty_array(cmd(f->c, "PUBSUB SHARDCHANNELS"));
    raw_close(s);
}

/* Subscribers on every thread; a publisher's messages arrive in order. */
static void test_fanout_order(void **state) {
    struct fixture *f = FIX(state);
    struct raw *subs[NSUBS];
    for (int i = 0; i < NSUBS; i++) {
        subs[i] = raw_connect(&f->srv);
        raw_cmd(subs[i], i % 2 ? "SUBSCRIBE seq" : "PSUBSCRIBE se?");
        expect_frame(subs[i], '*', i % 2 ? "subscribe" : "psubscribe", i % 2 ? "seq" : "se?", 1);
    }
    INT(f->c, NSUBS, "PUBLISH seq first");
    enum { N = 2000 };
    for (int i = 0; i < N; i++) redisAppendCommand(f->c, "PUBLISH seq %d", i);
    for (int i = 0; i < N; i++) {
        redisReply *r = NULL;
        assert_int_equal(redisGetReply(f->c, (void **)&r), REDIS_OK);
        assert_int_equal(r->integer, NSUBS);
        freeReplyObject(r);
    }
    for (int s = 0; s < NSUBS; s++) {
        char buf[16];
        expect_message(subs[s], '*', s % 2 ? "message" : "pmessage", s % 2 ? NULL : "se?", "seq", "first");
        for (int i = 0; i < N; i++) {
            snprintf(buf, sizeof buf, "%d", i);
            expect_message(subs[s], '*', s % 2 ? "message" : "pmessage", s % 2 ? NULL : "se?", "seq", buf);
        }
    }
    redisReply *r = cmd(f->c, "PUBSUB NUMSUB seq");
    assert_int_equal(r->element[1]->integer, NSUBS / 2);
    freeReplyObject(r);
    for (int i = 0; i < NSUBS; i++) raw_close(subs[i]);
    /* disconnected subscribers leave the directories */
    long long n = -1;
    for (int tries = 0; tries < 500 && n != 0; tries++) {
        redisReply *q = cmd(f->c, "PUBLISH seq gone");
        n = q->integer;
        freeReplyObject(q);
        if (n) h_sleep_ms(10);
    }
    assert_int_equal(n, 0);
}

/* A subscriber that never reads is closed at the pubsub hard limit; the
 * others keep receiving. */
static void test_slow_subscriber(void **state) {
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "pubsub 1mb 512kb 60");
    OK(f->c, "CONFIG RESETSTAT");
    struct raw *slow = raw_connect(&f->srv), *fast = raw_connect(&f->srv);
    raw_cmd(slow, "SUBSCRIBE big");
    expect_frame(slow, '*', "subscribe", "big", 1);
    raw_cmd(fast, "SUBSCRIBE big");
    expect_frame(fast, '*', "subscribe", "big", 1);
    static char payload[64 * 1024];
    memset(payload, 'x', sizeof payload);
    long long receivers = 2;
    int sent = 0;
    /* the slow one's socket buffers fill, then its output: bounded count */
    for (; sent < 2000 && receivers == 2; sent++) {
        redisReply *r = cmd(f->c, "PUBLISH big %b", payload, sizeof payload);
        receivers = r->integer;
        freeReplyObject(r);
        struct rv *m = raw_reply(fast);
        assert_int_equal(m->elem[2]->len, sizeof payload);
        rv_free(m);
    }
    assert_int_equal(receivers, 1);
    INT(f->c, 1, "PUBLISH big after");
    expect_message(fast, '*', "message", NULL, "big", "after");
    assert_true(raw_read_to_close(slow, 10000));
    if (!h_redis_mode())   /* Redis 7.4's counter */
        assert_int_equal(info_ll(f->c, "stats", "client_output_buffer_limit_disconnections"), 1);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "pubsub 32mb 8mb 60");
    raw_close(slow);
    raw_close(fast);
}

static void test_reset_and_arity(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = raw_connect(&f->srv);
    raw_cmd(s, "SUBSCRIBE a");
    expect_frame(s, '*', "subscribe", "a", 1);
    RAW(s, "+RESET\r\n", "RESET");
    RAW(s, "$-1\r\n", "GET nosuch");
    INT(f->c, 0, "PUBLISH a x");
    ERR(f->c, "ERR wrong number of arguments for 'subscribe' command", "SUBSCRIBE");
    ERR(f->c, "ERR wrong number of arguments for 'publish' command", "PUBLISH a");
    expect_error_prefix(cmd(f->c, "PUBSUB NOSUCH"), "ERR unknown subcommand 'NOSUCH'");
    raw_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_basics, h_noop_setup),
        cmocka_unit_test_setup(test_patterns, h_noop_setup),
        cmocka_unit_test_setup(test_resp3, h_noop_setup),
        cmocka_unit_test_setup(test_shard_channels, h_noop_setup),
        cmocka_unit_test_setup(test_fanout_order, h_noop_setup),
        cmocka_unit_test_setup(test_slow_subscriber, h_noop_setup),
        cmocka_unit_test_setup(test_reset_and_arity, h_noop_setup),
    };
    int rc = cmocka_run_group_tests_name("pubsub", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
