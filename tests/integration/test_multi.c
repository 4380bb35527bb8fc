/*
 * MULTI/EXEC/DISCARD/WATCH/UNWATCH: queueing, EXECABORT, runtime errors that
 * do not stop the rest, blocking commands that do not block, WATCH made
 * dirty by writes from this and other connections (keys on several shards,
 * FLUSHALL, SWAPDB), and transactions whose keys span shards. With several
 * threads, connections are opened until there is one on every thread, so
 * a watched key is touched by a write, an expiry and a FLUSHALL from each
 * thread, and on every shard. Writes that change nothing (Redis calls no
 * signalModifiedKey for them) leave the watch alone.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
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


/* ---- connections on every thread ---- */

#define MAX_THREADS H_MAX_THREADS

static void *open_pinged(const struct server *s) {
    redisContext *x = h_connect(s);
    STATUS(x, "PONG", "PING");   /* accepted and counted */
    return x;
}

static void close_ctx(void *x) { redisFree(x); }

static int connect_every_thread(struct fixture *f, redisContext **conns) {
    void *any[MAX_THREADS];
    int n = h_every_thread(f->c, &f->srv, any, open_pinged, close_ctx);
    for (int t = 0; t < n; t++) conns[t] = any[t];
    return n;
}

static void free_conns(redisContext **conns, int n) {
    for (int i = 0; i < n; i++) redisFree(conns[i]);
}

/* A key that lives on shard `shard` of `threads` (slot % threads). */
static void key_on_shard(const char *prefix, int shard, int threads, char *out) {
    for (int i = 0;; i++) {
        snprintf(out, 32, "%s%d", prefix, i);
        if ((int)(h_key_slot(out, strlen(out)) % (unsigned)threads) == shard) return;
    }
}

/* Wait (bounded) until the database holds no key: active expiry ran. */
static void wait_for_empty(redisContext *c) {
    for (int i = 0; i < 500; i++) {
        redisReply *r = cmd(c, "DBSIZE");
        long long n = r->integer;
        freeReplyObject(r);
        if (n == 0) return;
        h_sleep_ms(10);
    }
    fail_msg("keys did not expire");
}

/* WATCH on one connection, a change from a connection on each thread, to
 * a key on each shard: EXEC fails every time. */
static void test_watch_other_threads(void **state) {
    struct fixture *f = FIX(state);
    redisContext *conns[MAX_THREADS];
    int n = connect_every_thread(f, conns);
    int shards = h_redis_mode() ? 1 : h_threads();
    for (int w = 0; w < n; w++) {            /* the watching connection */
        for (int o = 0; o < n; o++) {        /* the writing one */
            for (int s = 0; s < shards; s++) {
                char k[32];
                key_on_shard("mt:w", s, shards, k);
                OK(conns[w], "WATCH %s", k);
                OK(conns[o], "SET %s %d", k, o);
                OK(conns[w], "MULTI");
                STATUS(conns[w], "QUEUED", "SET %s mine", k);
                exec_expect_nil(conns[w]);
                char v[16];
                snprintf(v, sizeof v, "%d", o);
                BULK(conns[w], v, "GET %s", k);
                /* and a FLUSHALL */
                OK(conns[w], "WATCH %s", k);
                OK(conns[o], "FLUSHALL");
                OK(conns[w], "MULTI");
                STATUS(conns[w], "QUEUED", "PING");
                exec_expect_nil(conns[w]);
            }
        }
    }
    free_conns(conns, n);
}

/* FLUSHALL and FLUSHDB touch only watched keys that exist. */
static void test_watch_flush_absent(void **state) {
    struct fixture *f = FIX(state);
    redisContext *conns[MAX_THREADS];
    int n = connect_every_thread(f, conns);
    for (int o = 0; o < n; o++) {
        OK(f->c, "SET mt:other 1");
        OK(f->c, "WATCH mt:absent");
        OK(conns[o], o % 2 ? "FLUSHDB" : "FLUSHALL");
        OK(f->c, "MULTI");
        STATUS(f->c, "QUEUED", "PING");
        exec_expect_ok(f->c);
    }
    free_conns(conns, n);
}

/* A watched key that expires after WATCH fails EXEC: deleted by active
 * expiry on its own thread, or still there but expired at EXEC. */
static void test_watch_expiry(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    int shards = h_redis_mode() ? 1 : h_threads();
    for (int s = 0; s < shards; s++) {
        char k[32];
        key_on_shard("mt:e", s, shards, k);
        OK(c, "SET %s v PX 30", k);
        OK(c, "WATCH %s", k);
        wait_for_empty(c);
        OK(c, "MULTI");
        STATUS(c, "QUEUED", "PING");
        exec_expect_nil(c);
    }
    OK(c, "DEBUG SET-ACTIVE-EXPIRE 0");
    for (int s = 0; s < shards; s++) {
        char k[32];
        key_on_shard("mt:l", s, shards, k);
        OK(c, "SET %s v PX 30", k);
        OK(c, "WATCH %s", k);
        h_sleep_ms(60);                     /* expired, and nothing deleted it */
        OK(c, "MULTI");
        STATUS(c, "QUEUED", "PING");
        exec_expect_nil(c);
        /* already expired when watched: its deletion is no change */
        OK(c, "SET %s v PX 1", k);
        h_sleep_ms(10);
        OK(c, "WATCH %s", k);
        INT(c, 0, "EXISTS %s", k);          /* deletes it */
        OK(c, "MULTI");
        STATUS(c, "QUEUED", "PING");
        exec_expect_ok(c);
    }
    OK(c, "DEBUG SET-ACTIVE-EXPIRE 1");
}

/* Writes that change nothing do not touch the watched keys, from any
 * thread; those that do, do. */
static void test_watch_noop_writes(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c, *conns[MAX_THREADS];
    int n = connect_every_thread(f, conns);
    static const char *const noops[] = {
        "SET {mt}s x NX", "SETNX {mt}s y", "DEL {mt}absent", "UNLINK {mt}absent",
        "SADD {mt}set a", "SREM {mt}set nosuch", "SMOVE {mt}set2 {mt}set a",
        "HSETNX {mt}hash f v", "HDEL {mt}hash nosuch", "LREM {mt}list 0 nosuch",
        "LINSERT {mt}list BEFORE nosuch x", "ZADD {mt}zset NX 5 m", "ZREM {mt}zset nosuch",
        "ZREMRANGEBYSCORE {mt}zset 100 200", "PERSIST {mt}s", "EXPIRE {mt}absent 10",
        "RENAMENX {mt}s {mt}set", "SETBIT {mt}bits 0 1",
        "BITFIELD {mt}bits SET u1 0 1", "LPUSHX {mt}absent x", "SPOP {mt}absent",
        "SINTERSTORE {mt}absent {mt}nosuch", "FLUSHDB", NULL,
    };
    /* not {mt}set2: the SMOVE takes the member out of it */
#define WATCHED "{mt}s {mt}set {mt}hash {mt}list {mt}zset {mt}bits {mt}absent"
    for (int i = 0; noops[i]; i++) {
        redisContext *o = conns[i % n];
        OK(c, "SELECT 1");                  /* FLUSHDB runs in database 1 */
        OK(c, "SET mt:db1 v");
        OK(c, "SELECT 0");
        bool flush = strcmp(noops[i], "FLUSHDB") == 0;
        if (flush) OK(o, "SELECT 1");
        OK(c, "FLUSHDB");
        OK(c, "SET {mt}s x");
        INT(c, 1, "SADD {mt}set a");
        INT(c, 1, "SADD {mt}set2 a");
        INT(c, 1, "HSET {mt}hash f v");
        INT(c, 1, "RPUSH {mt}list v");
        INT(c, 1, "ZADD {mt}zset 5 m");
        INT(c, 0, "SETBIT {mt}bits 0 1");
        OK(c, "WATCH " WATCHED);
        freeReplyObject(cmd(o, noops[i]));
        if (flush) OK(o, "SELECT 0");
        OK(c, "MULTI");
        STATUS(c, "QUEUED", "PING");
        redisReply *r = cmd(c, "EXEC");
        if (r->type != REDIS_REPLY_ARRAY) fail_msg("EXEC failed after a no-op %s", noops[i]);
        freeReplyObject(r);
    }
    /* their counterparts that change something */
    static const char *const writes[] = {
        "SET {mt}s z", "SADD {mt}set b", "SREM {mt}set a", "SMOVE {mt}set {mt}set2 a",
        "HSET {mt}hash f v", "LREM {mt}list 0 v", "ZADD {mt}zset 6 m", "PERSIST {mt}s",
        "SETBIT {mt}bits 0 0", "APPEND {mt}s more", "LTRIM {mt}list 0 -1", "EXPIRE {mt}s 100", NULL,
    };
    for (int i = 0; writes[i]; i++) {
        redisContext *o = conns[i % n];
        OK(c, "FLUSHDB");
        OK(c, "SET {mt}s x EX 1000");
        INT(c, 1, "SADD {mt}set a");
        INT(c, 1, "HSET {mt}hash f w");
        INT(c, 1, "RPUSH {mt}list v");
        INT(c, 1, "ZADD {mt}zset 5 m");
        INT(c, 0, "SETBIT {mt}bits 0 1");
        OK(c, "WATCH " WATCHED);
        freeReplyObject(cmd(o, writes[i]));
        OK(c, "MULTI");
        STATUS(c, "QUEUED", "PING");
        redisReply *r = cmd(c, "EXEC");
        if (r->type != REDIS_REPLY_NIL) fail_msg("EXEC ran after %s", writes[i]);
        freeReplyObject(r);
    }
    free_conns(conns, n);
#undef WATCHED
}

/* SMOVE touches the source, and the destination only when it gained the
 * member (Redis's unit/type/set test, on keys of one slot). */
static void test_watch_smove(void **state) {
    redisContext *c = FIX(state)->c;
    INT(c, 2, "SADD {mt}src a b");
    INT(c, 1, "SADD {mt}dst a");
    OK(c, "WATCH {mt}dst");
    INT(c, 1, "SMOVE {mt}src {mt}dst a");
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    exec_expect_ok(c);
    OK(c, "WATCH {mt}src");
    INT(c, 1, "SMOVE {mt}src {mt}dst b");
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "PING");
    exec_expect_nil(c);
}

/* EXEC over keys on every shard, watched from a connection on each thread:
 * untouched it applies everything; a write on any one shard fails it. */
static void test_exec_across_shards(void **state) {
    struct fixture *f = FIX(state);
    redisContext *conns[MAX_THREADS];
    int n = connect_every_thread(f, conns);
    int shards = h_redis_mode() ? 1 : h_threads();
    char keys[MAX_THREADS][32];
    for (int s = 0; s < shards; s++) key_on_shard("mt:x", s, shards, keys[s]);
    for (int w = 0; w < n; w++) {
        for (int touched = -1; touched < shards; touched++) {
            OK(f->c, "FLUSHALL");
            for (int s = 0; s < shards; s++) OK(conns[w], "WATCH %s", keys[s]);
            if (touched >= 0) OK(conns[(w + 1) % n], "SET %s other", keys[touched]);
            OK(conns[w], "MULTI");
            for (int s = 0; s < shards; s++) STATUS(conns[w], "QUEUED", "SET %s %d", keys[s], s);
            redisReply *r = cmd(conns[w], "EXEC");
            if (touched >= 0) {
                assert_int_equal(r->type, REDIS_REPLY_NIL);
                freeReplyObject(r);
                continue;
            }
            assert_int_equal(r->type, REDIS_REPLY_ARRAY);
            assert_int_equal(r->elements, (size_t)shards);
            freeReplyObject(r);
            for (int s = 0; s < shards; s++) {
                char v[16];
                snprintf(v, sizeof v, "%d", s);
                BULK(f->c, v, "GET %s", keys[s]);
            }
        }
    }
    free_conns(conns, n);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_errors, h_flushall),
        cmocka_unit_test_setup(test_blocking_inside, h_flushall),
        cmocka_unit_test_setup(test_watch, h_flushall),
        cmocka_unit_test_setup(test_watch_blocking_push, h_flushall),
        cmocka_unit_test_setup(test_basic, h_flushall),
        cmocka_unit_test_setup(test_watch_other_threads, h_flushall),
        cmocka_unit_test_setup(test_watch_flush_absent, h_flushall),
        cmocka_unit_test_setup(test_watch_expiry, h_flushall),
        cmocka_unit_test_setup(test_watch_noop_writes, h_flushall),
        cmocka_unit_test_setup(test_watch_smove, h_flushall),
        cmocka_unit_test_setup(test_exec_across_shards, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("multi", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
