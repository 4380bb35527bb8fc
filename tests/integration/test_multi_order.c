/*
 * Pipelined MULTI/EXEC: transactions sent many at a time, with the keys on
 * one shard or on two, from a connection on every thread, alone or while
 * other connections keep cross-shard transactions going. Whatever a
 * client sends after an EXEC must see what the EXEC did (a plain GET, an
 * INCR, an MGET, on the local shard or forwarded), a transaction over two
 * shards is atomic for every other client, a SELECT after a pipelined EXEC
 * does not change the database the EXEC ran in, CLIENT REPLY OFF silences
 * EXEC too, and a client that goes away with transactions in flight leaves
 * the server consistent.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS H_MAX_THREADS

static void *open_raw(const struct server *s) {
    struct raw *r = raw_connect(s);
    RAW(r, "+PONG\r\n", "PING");   /* accepted and counted */
    return r;
}

static void close_raw(void *r) { raw_close(r); }

static int raw_every_thread(struct fixture *f, struct raw **conns) {
    return h_every_thread(f->c, &f->srv, (void **)conns, open_raw, close_raw);
}

/* Append a command in RESP to buf (at most 4 arguments). */
static size_t resp(char *buf, int argc, const char *a0, const char *a1, const char *a2, const char *a3) {
    const char *argv[4] = { a0, a1, a2, a3 };
    size_t n = (size_t)sprintf(buf, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) n += (size_t)sprintf(buf + n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    return n;
}

#define ROUNDS 20

/* ROUNDS times MULTI, SET k1 i, INCR k2, EXEC, then GET k1, GET k2, INCR
 * k2, MGET k1 k2: the requests and the exact replies (k1, k2 new). */
static void check_pipeline(const char *k1, const char *k2, char **req, size_t *rl, char **exp, size_t *el) {
    *req = malloc(ROUNDS * 512);
    *exp = malloc(ROUNDS * 512);
    *rl = *el = 0;
    for (int i = 1; i <= ROUNDS; i++) {
        char v[16], c1[16], c2[16];
        snprintf(v, sizeof v, "%d", i);
        snprintf(c1, sizeof c1, "%d", 2 * i - 1);
        snprintf(c2, sizeof c2, "%d", 2 * i);
        *rl += resp(*req + *rl, 1, "MULTI", NULL, NULL, NULL);
        *rl += resp(*req + *rl, 3, "SET", k1, v, NULL);
        *rl += resp(*req + *rl, 2, "INCR", k2, NULL, NULL);
        *rl += resp(*req + *rl, 1, "EXEC", NULL, NULL, NULL);
        *rl += resp(*req + *rl, 2, "GET", k1, NULL, NULL);
        *rl += resp(*req + *rl, 2, "GET", k2, NULL, NULL);
        *rl += resp(*req + *rl, 2, "INCR", k2, NULL, NULL);
        *rl += resp(*req + *rl, 3, "MGET", k1, k2, NULL);
        *el += (size_t)sprintf(*exp + *el, "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n:%s\r\n", c1);
        *el += (size_t)sprintf(*exp + *el, "$%zu\r\n%s\r\n$%zu\r\n%s\r\n:%s\r\n", strlen(v), v, strlen(c1), c1, c2);
        *el += (size_t)sprintf(*exp + *el, "*2\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(v), v, strlen(c2), c2);
    }
}

/* From each thread in turn, the check pipeline in one write. */
static void pipeline_then_read(struct fixture *f, const char *k1, const char *k2) {
    struct raw *conns[MAX_THREADS];
    int n = raw_every_thread(f, conns);
    for (int t = 0; t < n; t++) {
        OK(f->c, "FLUSHALL");
        char *req, *exp;
        size_t rl, el;
        check_pipeline(k1, k2, &req, &rl, &exp, &el);
        raw_send(conns[t], req, rl);
        raw_expect_(__FILE__, __LINE__, conns[t], exp, el);
        free(req);
        free(exp);
    }
    for (int t = 0; t < n; t++) raw_close(conns[t]);
}

/* the keys on two shards (with two threads) */
static void test_order_two_shards(void **state) {
    char a[32], b[32];
    h_two_shard_keys("mo:", a, b);
    pipeline_then_read(FIX(state), a, b);
    pipeline_then_read(FIX(state), b, a);
}

/* both keys on one shard: the EXEC is local on one thread, elsewhere not */
static void test_order_one_shard(void **state) {
    char a[32], b[32], ta[40], tb[40];
    h_two_shard_keys("mo:", a, b);
    for (int k = 0; k < 2; k++) {
        snprintf(ta, sizeof ta, "{%s}1", k ? b : a);
        snprintf(tb, sizeof tb, "{%s}2", k ? b : a);
        pipeline_then_read(FIX(state), ta, tb);
    }
}

/* The check pipeline from a connection on every thread at once, each on
 * its own keys, while connections on every thread keep other two-shard
 * transactions going: transactions then queue behind each other's locks,
 * and still nothing a client sends after an EXEC overtakes it. */
static void test_order_contended(void **state) {
    struct fixture *f = FIX(state);
    struct raw *chk[MAX_THREADS], *bg[2 * MAX_THREADS];
    int n = raw_every_thread(f, chk);
    int nb = raw_every_thread(f, bg);
    nb += raw_every_thread(f, bg + nb);
    char x[32], y[32];
    h_two_shard_keys("mo:bg:", x, y);
    enum { BG_PIPE = 32 };
    char bgreq[BG_PIPE * 96];
    size_t bl = 0;
    for (int i = 0; i < BG_PIPE; i++) {
        bl += resp(bgreq + bl, 1, "MULTI", NULL, NULL, NULL);
        bl += resp(bgreq + bl, 2, "INCR", x, NULL, NULL);
        bl += resp(bgreq + bl, 2, "INCR", y, NULL, NULL);
        bl += resp(bgreq + bl, 1, "EXEC", NULL, NULL, NULL);
    }
    for (int round = 0; round < 10; round++) {
        char *req[MAX_THREADS], *exp[MAX_THREADS];
        size_t rl[MAX_THREADS], el[MAX_THREADS];
        for (int t = 0; t < n; t++) {
            char prefix[32], a[32], b[32];
            snprintf(prefix, sizeof prefix, "mo:r%d:t%d:", round, t);
            h_two_shard_keys(prefix, a, b);
            if (round % 2) check_pipeline(b, a, &req[t], &rl[t], &exp[t], &el[t]);
            else check_pipeline(a, b, &req[t], &rl[t], &exp[t], &el[t]);
        }
        for (int k = 0; k < nb; k++) raw_send(bg[k], bgreq, bl);
        for (int t = 0; t < n; t++) raw_send(chk[t], req[t], rl[t]);
        for (int k = 0; k < nb; k++) raw_send(bg[k], bgreq, bl);
        for (int t = 0; t < n; t++) {
            raw_expect_(__FILE__, __LINE__, chk[t], exp[t], el[t]);
            free(req[t]);
            free(exp[t]);
        }
        for (int k = 0; k < nb; k++)
            for (int i = 0; i < 2 * BG_PIPE * 4; i++) rv_free(raw_reply(bg[k]));
    }
    for (int t = 0; t < n; t++) raw_close(chk[t]);
    for (int k = 0; k < nb; k++) raw_close(bg[k]);
}

/* A SELECT right behind a pipelined EXEC: the EXEC still ran in db 0; a
 * SELECT inside the transaction applies to what follows it. */
static void test_select_around(void **state) {
    struct fixture *f = FIX(state);
    char a[32], b[32];
    h_two_shard_keys("mo:", a, b);
    struct raw *conns[MAX_THREADS];
    int n = raw_every_thread(f, conns);
    for (int t = 0; t < n; t++) {
        OK(f->c, "FLUSHALL");
        char req[2048], exp[512];
        size_t rl = 0;
        rl += resp(req + rl, 1, "MULTI", NULL, NULL, NULL);
        rl += resp(req + rl, 3, "SET", a, "0", NULL);
        rl += resp(req + rl, 3, "SET", b, "0", NULL);
        rl += resp(req + rl, 1, "EXEC", NULL, NULL, NULL);
        rl += resp(req + rl, 2, "SELECT", "1", NULL, NULL);
        rl += resp(req + rl, 3, "SET", a, "1", NULL);
        rl += resp(req + rl, 1, "MULTI", NULL, NULL, NULL);
        rl += resp(req + rl, 3, "SET", b, "1", NULL);
        rl += resp(req + rl, 2, "SELECT", "2", NULL, NULL);
        rl += resp(req + rl, 3, "SET", a, "2", NULL);
        rl += resp(req + rl, 1, "EXEC", NULL, NULL, NULL);
        rl += resp(req + rl, 3, "MGET", a, b, NULL);
        rl += resp(req + rl, 2, "SELECT", "0", NULL, NULL);
        rl += resp(req + rl, 3, "MGET", a, b, NULL);
        raw_send(conns[t], req, rl);
        snprintf(exp, sizeof exp, "%s%s%s%s%s",
                 "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+OK\r\n", "+OK\r\n+OK\r\n",
                 "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n+OK\r\n+OK\r\n",
                 "*2\r\n$1\r\n2\r\n$-1\r\n+OK\r\n", "*2\r\n$1\r\n0\r\n$1\r\n0\r\n");
        raw_expect(conns[t], exp);
        OK(f->c, "SELECT 1");
        BULK(f->c, "1", "GET %s", a);
        BULK(f->c, "1", "GET %s", b);
        OK(f->c, "SELECT 0");
    }
    for (int t = 0; t < n; t++) raw_close(conns[t]);
}

/* Two counters on two shards, only ever incremented together by
 * transactions from connections on every thread, pipelined: every EXEC
 * and every MGET sees them equal. */
static void test_atomic_concurrent(void **state) {
    struct fixture *f = FIX(state);
    char a[32], b[32];
    h_two_shard_keys("mo:", a, b);
    struct raw *conns[2 * MAX_THREADS];
    int n = raw_every_thread(f, conns);
    int m = raw_every_thread(f, conns + n) + n;
    enum { PIPE = 16, CROUNDS = 30 };
    char req[PIPE * 128 + 128];
    size_t rl = 0;
    for (int i = 0; i < PIPE; i++) {
        rl += resp(req + rl, 1, "MULTI", NULL, NULL, NULL);
        rl += resp(req + rl, 2, "INCR", a, NULL, NULL);
        rl += resp(req + rl, 2, "INCR", b, NULL, NULL);
        rl += resp(req + rl, 1, "EXEC", NULL, NULL, NULL);
        if (i % 4 == 3) rl += resp(req + rl, 3, "MGET", a, b, NULL);
    }
    for (int round = 0; round < CROUNDS; round++) {
        for (int k = 0; k < m; k++) raw_send(conns[k], req, rl);
        for (int k = 0; k < m; k++) {
            for (int i = 0; i < PIPE; i++) {
                for (int q = 0; q < 3; q++) rv_free(raw_reply(conns[k]));   /* +OK +QUEUED +QUEUED */
                struct rv *e = raw_reply(conns[k]);
                assert_int_equal(e->type, '*');
                assert_int_equal(e->n, 2);
                assert_int_equal(e->elem[0]->type, ':');
                if (e->elem[0]->integer != e->elem[1]->integer)
                    h_fail("EXEC saw %lld and %lld", e->elem[0]->integer, e->elem[1]->integer);
                rv_free(e);
                if (i % 4 == 3) {
                    struct rv *g = raw_reply(conns[k]);
                    assert_int_equal(g->n, 2);
                    if (strcmp(g->elem[0]->str, g->elem[1]->str) != 0)
                        h_fail("MGET saw %s and %s", g->elem[0]->str, g->elem[1]->str);
                    rv_free(g);
                }
            }
        }
    }
    char total[32];
    snprintf(total, sizeof total, "%d", m * PIPE * CROUNDS);
    BULK(f->c, total, "GET %s", a);
    BULK(f->c, total, "GET %s", b);
    for (int k = 0; k < m; k++) raw_close(conns[k]);
}

/* CLIENT REPLY OFF silences pipelined EXECs (over one and two shards). */
static void test_reply_off(void **state) {
    struct fixture *f = FIX(state);
    char a[32], b[32], ta[40];
    h_two_shard_keys("mo:", a, b);
    snprintf(ta, sizeof ta, "{%s}x", b);
    struct raw *conns[MAX_THREADS];
    int n = raw_every_thread(f, conns);
    for (int t = 0; t < n; t++) {
        OK(f->c, "FLUSHALL");
        char req[2048];
        size_t rl = 0;
        rl += resp(req + rl, 3, "CLIENT", "REPLY", "OFF", NULL);
        for (int i = 0; i < 3; i++) {
            rl += resp(req + rl, 1, "MULTI", NULL, NULL, NULL);
            rl += resp(req + rl, 2, "INCR", a, NULL, NULL);
            rl += resp(req + rl, 2, "INCR", i == 1 ? ta : b, NULL, NULL);
            rl += resp(req + rl, 1, "EXEC", NULL, NULL, NULL);
        }
        rl += resp(req + rl, 3, "CLIENT", "REPLY", "ON", NULL);
        rl += resp(req + rl, 3, "MGET", a, b, NULL);
        raw_send(conns[t], req, rl);
        raw_expect(conns[t], "+OK\r\n*2\r\n$1\r\n3\r\n$1\r\n2\r\n");
    }
    for (int t = 0; t < n; t++) raw_close(conns[t]);
}

/* Clients that go away with transactions in flight: the server goes on,
 * and every transaction ran whole or not at all. */
static void test_gone_midway(void **state) {
    struct fixture *f = FIX(state);
    char a[32], b[32];
    h_two_shard_keys("mo:", a, b);
    char req[64 * 128];
    size_t rl = 0;
    for (int i = 0; i < 64; i++) {
        rl += resp(req + rl, 1, "MULTI", NULL, NULL, NULL);
        rl += resp(req + rl, 2, "INCR", a, NULL, NULL);
        rl += resp(req + rl, 2, "INCR", b, NULL, NULL);
        rl += resp(req + rl, 1, "EXEC", NULL, NULL, NULL);
    }
    for (int round = 0; round < 10; round++) {
        struct raw *conns[MAX_THREADS];
        int n = raw_every_thread(f, conns);
        for (int t = 0; t < n; t++) raw_send(conns[t], req, rl);
        for (int t = 0; t < n; t++) raw_abort(conns[t]);
    }
    for (int i = 0; i < 50; i++) STATUS(f->c, "PONG", "PING");
    redisReply *r = cmd(f->c, "MGET %s %s", a, b);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    if (r->element[0]->type == REDIS_REPLY_NIL) {
        assert_int_equal(r->element[1]->type, REDIS_REPLY_NIL);
    } else {
        assert_string_equal(r->element[0]->str, r->element[1]->str);
    }
    freeReplyObject(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_order_two_shards, h_flushall),
        cmocka_unit_test_setup(test_order_one_shard, h_flushall),
        cmocka_unit_test_setup(test_order_contended, h_flushall),
        cmocka_unit_test_setup(test_select_around, h_flushall),
        cmocka_unit_test_setup(test_atomic_concurrent, h_flushall),
        cmocka_unit_test_setup(test_reply_off, h_flushall),
        cmocka_unit_test_setup(test_gone_midway, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("multi_order", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
