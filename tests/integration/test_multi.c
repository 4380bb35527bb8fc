/*
 * MULTI/EXEC/DISCARD/WATCH/UNWATCH: queueing, EXECABORT, runtime errors that
 * do not stop the rest, blocking commands that do not block, WATCH made
 * dirty by writes from this and other connections (keys on several shards,
 * FLUSHALL, SWAPDB), and transactions whose keys span shards.
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>


static void test_basic(void **state) {
    redisContext *c = FIX(state)->c;
    char a[32], b[32];
    h_two_shard_keys("mk:", a, b);
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "SET %s 1", a);
    STATUS(c, "QUEUED", "SET %s 2", b);
    STATUS(c, "QUEUED", "INCR %s", a);
    STATUS(c, "QUEUED", "LPUSH %s x", a);          /* WRONGTYPE at run time: the rest goes on */
    STATUS(c, "QUEUED", "MGET %s %s nokey", a, b);
    redisReply *r = cmd(c, "EXEC");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 5);
    assert_string_equal(r->element[0]->str, "OK");
    assert_int_equal(r->element[2]->integer, 2);
    assert_int_equal(r->element[3]->type, REDIS_REPLY_ERROR);
    assert_int_equal(r->element[4]->elements, 3);
    assert_string_equal(r->element[4]->element[0]->str, "2");
    assert_string_equal(r->element[4]->element[1]->str, "2");
    assert_int_equal(r->element[4]->element[2]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    OK(c, "MULTI");
    redisReply *e = cmd(c, "EXEC");           /* an empty transaction */
    assert_int_equal(e->type, REDIS_REPLY_ARRAY);
    assert_int_equal(e->elements, 0);
    freeReplyObject(e);
}

static void test_errors(void **state) {
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR EXEC without MULTI", "EXEC");
    ERR(c, "ERR DISCARD without MULTI", "DISCARD");
    OK(c, "MULTI");
    ERR(c, "ERR MULTI calls can not be nested", "MULTI");
    expect_error_prefix(cmd(c, "NOSUCHCMD x"), "ERR unknown command 'NOSUCHCMD'");
    ERR(c, "ERR wrong number of arguments for 'get' command", "GET");
    STATUS(c, "QUEUED", "SET k v");
    ERR(c, "EXECABORT Transaction discarded because of previous errors.", "EXEC");
    NIL(c, "GET k");                          /* nothing ran */
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "SET k v");
    OK(c, "DISCARD");
    NIL(c, "GET k");
    OK(c, "MULTI");
    ERR(c, "ERR WATCH inside MULTI is not allowed", "WATCH k");
    OK(c, "DISCARD");
    OK(c, "MULTI");                            /* SHUTDOWN is refused, and aborts */
    STATUS(c, "QUEUED", "SET k v");
    ERR(c, "ERR Command not allowed inside a transaction", "SHUTDOWN");
    ERR(c, "EXECABORT Transaction discarded because of previous errors.", "EXEC");
    NIL(c, "GET k");
}

static void test_blocking_inside(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "BLPOP mk:empty 0");
    STATUS(c, "QUEUED", "BRPOPLPUSH mk:empty mk:dst 0");
    redisReply *r = cmd(c, "EXEC");
    assert_int_equal(r->elements, 2);
    assert_int_equal(r->element[0]->type, REDIS_REPLY_NIL);
    assert_int_equal(r->element[1]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
}

/* EXEC's null reply: a watched key was touched. */
static void exec_expect_nil(redisContext *c) {
    redisReply *r = cmd(c, "EXEC");
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
}

static void exec_expect_ok(redisContext *c) {
    redisReply *r = cmd(c, "EXEC");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 1);
    freeReplyObject(r);
}

static void test_watch(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c, *other = h_connect(&f->srv);
    char a[32], b[32];
    h_two_shard_keys("mk:", a, b);
    /* untouched: runs */
    OK(c, "WATCH %s %s", a, b);
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "SET mk:res 1");
    exec_expect_ok(c);
    /* touched by another connection, on either shard */
    for (int which = 0; which < 2; which++) {
        OK(c, "WATCH %s %s", a, b);
        OK(other, "SET %s x", which ? b : a);
        OK(c, "MULTI");
        STATUS(c, "QUEUED", "SET mk:res 2");
        exec_expect_nil(c);
    }
    BULK(c, "1", "GET mk:res");
    /* touched by this connection before MULTI */
    OK(c, "WATCH %s", a);
    OK(c, "SET %s y", a);
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    exec_expect_nil(c);
    /* UNWATCH forgets; EXEC and DISCARD unwatch too */
    OK(c, "WATCH %s", a);
    OK(c, "UNWATCH");
    OK(other, "SET %s z", a);
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    exec_expect_ok(c);
    OK(other, "SET %s w", a);                  /* after EXEC: not watched any more */
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    exec_expect_ok(c);
    /* FLUSHALL and SWAPDB touch the watched keys of their databases */
    OK(other, "SET %s v", b);
    OK(c, "WATCH %s", b);
    OK(other, "FLUSHALL");
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    exec_expect_nil(c);
    OK(other, "SET %s v", b);                  /* Redis touches only keys that exist */
    OK(c, "WATCH %s", b);
    OK(other, "SWAPDB 0 1");
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    exec_expect_nil(c);
    /* a write to another key does not */
    OK(c, "WATCH %s", a);
    OK(other, "SET mk:unrelated 1");
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    exec_expect_ok(c);
    redisFree(other);
}

/* A blocking pop served after WATCH touches the destination. */
static void test_watch_blocking_push(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    struct raw *w = raw_connect(&f->srv);
    raw_cmd(w, "BRPOPLPUSH {mk}src {mk}dst 0");
    for (int i = 0; i < 5; i++) STATUS(c, "PONG", "PING");
    OK(c, "WATCH {mk}dst");
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    redisContext *p = h_connect(&f->srv);
    INT(p, 1, "LPUSH {mk}src v");
    raw_expect(w, "$1\r\nv\r\n");
    exec_expect_nil(c);
    redisFree(p);
    raw_close(w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_errors, h_flushall),
        cmocka_unit_test_setup(test_blocking_inside, h_flushall),
        cmocka_unit_test_setup(test_watch, h_flushall),
        cmocka_unit_test_setup(test_watch_blocking_push, h_flushall),
        cmocka_unit_test_setup(test_basic, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("multi", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
