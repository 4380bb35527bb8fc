/*
 * Blocking list commands: a waiter is served by a push from another
 * connection (keys on different shards too), oldest waiter first (on any
 * thread, also when the first in line has gone or was unblocked, or its
 * command fails, and whichever waiter's command had to reach the keys'
 * shard from another thread), exactly once; timeouts with sub-second
 * precision; disconnected and killed waiters lose nothing; a blocked
 * connection does not hold up others.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Wait (bounded by a count of polls, generous for a loaded machine and
 * the sanitizers) until n clients are blocked: a waiter's command has
 * been taken up before the test goes on, whatever the load. */
static void wait_blocked(redisContext *c, long long n) {
    for (int i = 0; i < 4000; i++) {
        if (info_ll(c, "clients", "blocked_clients") == n) return;
        h_sleep_ms(5);
    }
    fail_msg("blocked_clients did not reach %lld", n);
}

static void test_served_by_push(void **state) {
    struct fixture *f = FIX(state);
    char k1[32], k2[32];
    h_two_shard_keys("bk:", k1, k2);
    struct raw *w = raw_connect(&f->srv);
    raw_cmd(w, "BLPOP %s %s 0", k1, k2);
    wait_blocked(f->c, 1);
    STATUS(f->c, "PONG", "PING");          /* the blocked connection holds nobody up */
    INT(f->c, 1, "RPUSH %s v1", k2);
    char exp[128];
    snprintf(exp, sizeof exp, "*2\r\n$%zu\r\n%s\r\n$2\r\nv1\r\n", strlen(k2), k2);
    raw_expect(w, exp);
    INT(f->c, 0, "EXISTS %s", k2);           /* served exactly once: nothing left */
    RAW(w, "+PONG\r\n", "PING");             /* and the connection goes on */
    raw_close(w);
}

/* A timeout ends the wait with the null reply; a longer one is still
 * waiting after other connections' round trips, and a push serves it.
 * (No wall-clock assertions: the order of events is what is checked.) */
static void test_timeout(void **state) {
    struct fixture *f = FIX(state);
    struct raw *w = raw_connect(&f->srv);
    RAW(w, "*-1\r\n", "BLPOP bk:none 0.2");
    RAW(w, "*-1\r\n", "BRPOPLPUSH bk:none bk:dst 0.1");
    raw_cmd(w, "BLPOP bk:later 30");
    for (int i = 0; i < 20; i++) STATUS(f->c, "PONG", "PING");
    assert_int_equal(raw_fill(w, 1, 0), 0);     /* not answered yet */
    INT(f->c, 1, "RPUSH bk:later v");
    raw_expect(w, "*2\r\n$8\r\nbk:later\r\n$1\r\nv\r\n");
    raw_close(w);
}

/* Oldest waiter first, wherever the waiters' connections live, and
 * exactly once. */
static void test_fifo_and_exactly_once(void **state) {
    struct fixture *f = FIX(state);
    struct raw *a = raw_connect(&f->srv), *b = raw_connect(&f->srv);
    raw_cmd(a, "BLPOP bk:q 0");
    wait_blocked(f->c, 1);                 /* a waits first, whatever the load */
    raw_cmd(b, "BLPOP bk:q 0");
    wait_blocked(f->c, 2);
    INT(f->c, 1, "RPUSH bk:q first");
    wait_blocked(f->c, 1);                 /* one served, one still waiting */
    INT(f->c, 1, "RPUSH bk:q second");
    struct rv *ra = raw_reply(a), *rb = raw_reply(b);
    assert_int_equal(ra->n, 2);
    assert_int_equal(rb->n, 2);
    const char *ga = ra->elem[1]->str, *gb = rb->elem[1]->str;
    assert_string_equal(ga, "first");
    assert_string_equal(gb, "second");
    rv_free(ra);
    rv_free(rb);
    INT(f->c, 0, "LLEN bk:q");
    raw_close(a);
    raw_close(b);
}


/* Many waiters on connections spread over the threads, blocked one after
 * the other: one push of as many elements serves them in that order, also
 * when the first in line has disconnected or was CLIENT UNBLOCKed with an
 * error (the turn passes on), and with waiters of several keys. */
#define NWAIT 6
static void test_oldest_first_everywhere(void **state) {
    struct fixture *f = FIX(state);
    for (int round = 0; round < 3; round++) {
        struct raw *w[NWAIT + 1];
        long long id0 = 0;
        for (int i = 0; i <= NWAIT; i++) {
            w[i] = raw_connect(&f->srv);
            if (i == 0) {
                raw_cmd(w[i], "CLIENT ID");
                struct rv *r = raw_reply(w[i]);
                id0 = r->integer;
                rv_free(r);
            }
            raw_cmd(w[i], i % 2 || i == 0 ? "BLPOP bk:o 0" : "BLMPOP 0 2 bk:other bk:o LEFT COUNT 1");
            wait_blocked(f->c, i + 1);
        }
        int first = round == 0 ? 0 : 1;   /* rounds 1 and 2: the first in line leaves it */
        if (round == 1) {
            raw_abort(w[0]);               /* gone */
            wait_blocked(f->c, NWAIT);
        } else if (round == 2) {
            INT(f->c, 1, "CLIENT UNBLOCK %lld ERROR", id0);
            struct rv *e = raw_reply(w[0]);
            assert_int_equal(e->type, '-');
            rv_free(e);
            raw_close(w[0]);
        }
        char push[256] = "RPUSH bk:o";
        for (int i = first; i <= NWAIT; i++)
            snprintf(push + strlen(push), sizeof push - strlen(push), " e%d", i);
        INT(f->c, NWAIT + 1 - first, push);
        for (int i = first; i <= NWAIT; i++) {
            struct rv *r = raw_reply(w[i]);
            char want[16];
            snprintf(want, sizeof want, "e%d", i);
            assert_int_equal(r->n, 2);
            if (i % 2 || i == 0) {
                assert_string_equal(r->elem[1]->str, want);
            } else {
                assert_int_equal(r->elem[1]->n, 1);
                assert_string_equal(r->elem[1]->elem[0]->str, want);
            }
            rv_free(r);
            raw_close(w[i]);
        }
        INT(f->c, 0, "LLEN bk:o");
        wait_blocked(f->c, 0);
    }
}
#undef NWAIT

static void test_gone_waiters_lose_nothing(void **state) {
    struct fixture *f = FIX(state);
    struct raw *a = raw_connect(&f->srv);
    raw_cmd(a, "BLPOP bk:g 0");
    wait_blocked(f->c, 1);
    raw_abort(a);                              /* disconnects while blocked */
    wait_blocked(f->c, 0);                     /* and the server has seen it go */
    struct raw *k = raw_connect(&f->srv);
    raw_cmd(k, "CLIENT ID");
    struct rv *idr = raw_reply(k);
    long long id = idr->integer;
    rv_free(idr);
    raw_cmd(k, "BRPOP bk:g 0");
    wait_blocked(f->c, 1);
    INT(f->c, 1, "CLIENT KILL ID %lld", id);
    wait_blocked(f->c, 0);
    raw_close(k);
    INT(f->c, 2, "RPUSH bk:g x y");
    h_sleep_ms(50);
    INT(f->c, 2, "LLEN bk:g");               /* nobody took them */
}

static void test_blmove_and_blmpop(void **state) {
    struct fixture *f = FIX(state);
    char src[32], dst[32];
    h_two_shard_keys("bk:", src, dst);
    struct raw *w = raw_connect(&f->srv);
    raw_cmd(w, "BLMOVE %s %s LEFT RIGHT 0", src, dst);
    wait_blocked(f->c, 1);
    INT(f->c, 1, "LPUSH %s moved", src);
    raw_expect(w, "$5\r\nmoved\r\n");
    expect_bulks(cmd(f->c, "LRANGE %s 0 -1", dst), 1, "moved");
    raw_cmd(w, "BLMPOP 0 2 bk:m1 bk:m2 RIGHT COUNT 2");
    wait_blocked(f->c, 1);
    INT(f->c, 3, "RPUSH bk:m2 1 2 3");
    raw_expect(w, "*2\r\n$5\r\nbk:m2\r\n*2\r\n$1\r\n3\r\n$1\r\n2\r\n");
    raw_close(w);
}

static void test_sorted_sets(void **state) {
    struct fixture *f = FIX(state);
    char k1[32], k2[32];
    h_two_shard_keys("bk:", k1, k2);
    struct raw *w = raw_connect(&f->srv);
    raw_cmd(w, "BZPOPMIN %s %s 0", k1, k2);
    wait_blocked(f->c, 1);
    INT(f->c, 2, "ZADD %s 5 five 1 one", k2);
    char exp[128];
    snprintf(exp, sizeof exp, "*3\r\n$%zu\r\n%s\r\n$3\r\none\r\n$1\r\n1\r\n", strlen(k2), k2);
    raw_expect(w, exp);
    INT(f->c, 1, "ZCARD %s", k2);
    RAW(w, "*-1\r\n", "BZPOPMAX bk:znone 0.1");
    raw_cmd(w, "BZMPOP 0 2 bk:za bk:zb MAX COUNT 2");
    wait_blocked(f->c, 1);
    INT(f->c, 3, "ZADD bk:zb 1 a 2 b 3 c");
    raw_expect(w, "*2\r\n$5\r\nbk:zb\r\n*2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
    ERR(f->c, "ERR timeout is negative", "BZPOPMIN bk:z -1");
    raw_close(w);
}

/* Redis's "bug 593" chain, with the keys on different shards: the blocking
 * move runs as a cross-shard transaction for a client that has already
 * gone. The server must stay up and the element must exist exactly once. */
static void test_chain_with_gone_client(void **state) {
    struct fixture *f = FIX(state);
    char a[32], b[32];
    h_two_shard_keys("bk:", a, b);
    for (int round = 0; round < 20; round++) {
        struct raw *ca = raw_connect(&f->srv), *cb = raw_connect(&f->srv);
        raw_cmd(ca, "BRPOPLPUSH %s %s 0", a, b);
        raw_cmd(ca, "BRPOPLPUSH %s %s 0", a, b);
        raw_cmd(cb, "BRPOPLPUSH %s bk:c 0", b);
        STATUS(f->c, "PONG", "PING");
        INT(f->c, 1, "LPUSH %s data", a);
        raw_abort(ca);
        for (int i = 0; i < 5; i++) STATUS(f->c, "PONG", "PING");
        raw_abort(cb);
        STATUS(f->c, "PONG", "PING");
        redisReply *la = cmd(f->c, "LLEN %s", a), *lb = cmd(f->c, "LLEN %s", b), *lc = cmd(f->c, "LLEN bk:c");
        assert_int_equal(la->integer + lb->integer + lc->integer, 1);
        freeReplyObject(la);
        freeReplyObject(lb);
        freeReplyObject(lc);
        OK(f->c, "FLUSHALL");
    }
}

/* INFO reports the clients that wait, over every thread. */
static void test_blocked_clients_info(void **state) {
    struct fixture *f = FIX(state);
    struct raw *w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = raw_connect(&f->srv);
        raw_cmd(w[i], i & 1 ? "BLPOP bk:i%d 0" : "BLPOP bk:i%d 100", i);
    }
    long long n = -1;
    for (int i = 0; i < 4000 && n != 4; i++) {
        n = info_ll(f->c, "clients", "blocked_clients");
        if (n != 4) h_sleep_ms(5);
    }
    assert_int_equal(n, 4);
    if (!h_redis_mode()) assert_int_equal(info_ll(f->c, "clients", "clients_in_timeout_table"), 2);
    INT(f->c, 1, "RPUSH bk:i0 x");
    raw_expect(w[0], "*2\r\n$5\r\nbk:i0\r\n$1\r\nx\r\n");
    raw_abort(w[1]);
    w[1] = NULL;
    for (int i = 0; i < 4000 && n != 2; i++) {
        n = info_ll(f->c, "clients", "blocked_clients");
        if (n != 2) h_sleep_ms(5);
    }
    assert_int_equal(n, 2);
    raw_close(w[0]);
    raw_close(w[2]);
    raw_close(w[3]);
}

/* A waiter woken by a push whose key then holds another type keeps
 * waiting (Redis serves waiters only from a key of the right type). */
static void test_woken_by_other_type(void **state) {
    struct fixture *f = FIX(state);
    struct raw *w = raw_connect(&f->srv);
    raw_cmd(w, "BLPOP bk:t 0");
    for (int i = 0; i < 5; i++) STATUS(f->c, "PONG", "PING");
    OK(f->c, "MULTI");
    STATUS(f->c, "QUEUED", "LPUSH bk:t a");
    STATUS(f->c, "QUEUED", "DEL bk:t");
    STATUS(f->c, "QUEUED", "SET bk:t foo");
    redisReply *r = cmd(f->c, "EXEC");
    assert_int_equal(r->elements, 3);
    freeReplyObject(r);
    for (int i = 0; i < 5; i++) STATUS(f->c, "PONG", "PING");
    INT(f->c, 1, "DEL bk:t");
    INT(f->c, 1, "LPUSH bk:t b");
    raw_expect(w, "*2\r\n$4\r\nbk:t\r\n$1\r\nb\r\n");
    raw_close(w);
}

/* CLIENT UNBLOCK from another connection (and thread): as a timeout, or
 * with Redis's UNBLOCKED error; 0 for a client that does not wait. */
static void test_client_unblock(void **state) {
    struct fixture *f = FIX(state);
    struct raw *w = raw_connect(&f->srv);
    raw_cmd(w, "CLIENT ID");
    struct rv *idr = raw_reply(w);
    long long id = idr->integer;
    rv_free(idr);
    OK(f->c, "CONFIG RESETSTAT");
    INT(f->c, 0, "CLIENT UNBLOCK %lld", id);
    raw_cmd(w, "BLPOP bk:u 0");
    long long n = 0;
    for (int i = 0; i < 4000 && n != 1; i++) {
        redisReply *r = cmd(f->c, "CLIENT UNBLOCK %lld", id);
        n = r->integer;
        freeReplyObject(r);
        if (n != 1) h_sleep_ms(5);
    }
    assert_int_equal(n, 1);
    raw_expect(w, "*-1\r\n");
    raw_cmd(w, "BRPOPLPUSH bk:u bk:v 0");
    n = 0;
    for (int i = 0; i < 4000 && n != 1; i++) {
        redisReply *r = cmd(f->c, "CLIENT UNBLOCK %lld ERROR", id);
        n = r->integer;
        freeReplyObject(r);
        if (n != 1) h_sleep_ms(5);
    }
    assert_int_equal(n, 1);
    raw_expect(w, "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
    /* each ended call counts once, and as failed (Redis 7.0 counts any
     * call CLIENT UNBLOCK ends as failed) */
    redisReply *stats = cmd(f->c, "INFO commandstats");
    if (!strstr(stats->str, "cmdstat_blpop:calls=1,") || !strstr(stats->str, "cmdstat_brpoplpush:calls=1,"))
        h_fail("unblocked calls not counted: %s", stats->str);
    char *line = info_field(stats->str, "cmdstat_brpoplpush");
    assert_non_null(strstr(line, ",rejected_calls=0,failed_calls=1"));
    free(line);
    line = info_field(stats->str, "cmdstat_blpop");
    assert_non_null(strstr(line, ",rejected_calls=0,failed_calls=1"));
    free(line);
    freeReplyObject(stats);
    RAW(w, "+PONG\r\n", "PING");                /* the connection goes on */
    INT(f->c, 1, "RPUSH bk:u x");                /* and nobody took it */
    INT(f->c, 1, "LLEN bk:u");
    ERR(f->c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR", "CLIENT UNBLOCK %lld FOO", id);
    ERR(f->c, "ERR value is not an integer or out of range", "CLIENT UNBLOCK abc");
    raw_close(w);
}

/* Redis's "BRPOPLPUSH with multiple blocked clients": the first waiter's
 * move fails (its destination holds a string) and it gets WRONGTYPE; the
 * element goes to the second. Waiters are served in the order their
 * commands were taken up, wherever their connections are, in two cases:
 *
 *   1. the first waiter is on another thread than the keys' shard: its
 *      command runs as a transaction and registers a lock round trip
 *      later; the second, on the keys' thread, registers at once. The
 *      first must still be first.
 *   2. the first waiter, on the keys' thread, waits; the second's command
 *      runs as a transaction from another thread and gets the shard only
 *      after the push that woke the first: it must leave the element to
 *      the first (which does not take it) and wait behind it.
 *
 * To let the second overtake, the keys' thread is kept busy meanwhile
 * where its loop resumes clients (X: a transaction, then set intersections,
 * which run once it is done), so that the second waiter's command (case 1)
 * or the push (case 2) and the other thread's lock request are waiting
 * together when it is free, and the connections' input is taken in first.
 * Each step waits for the one before it (a PING ahead of a waiter's
 * command is answered once the command was taken up), so the expected
 * order holds on any server and any number of threads: timing only decides
 * whether the keys' thread is still busy, that is whether a server that
 * gets the order wrong is caught, never whether one that gets it right
 * passes. */
#define WT_ROUNDS   100
#define WT_SET_SIZE 100000
#define WT_BUSY     5          /* SINTERCARDs that keep the keys' thread busy */
static const char WT_WRONGTYPE[] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

/* A hash tag "{wt<i>}" whose keys live on shard s. */
static void tag_on_shard(int s, int shards, char *out) {
    for (int i = 0;; i++) {
        snprintf(out, 16, "{wt%d}", i);
        if ((int)(h_key_slot(out, strlen(out)) % (unsigned)shards) == s) return;
    }
}

static void *open_raw_pinged(const struct server *s) {
    struct raw *x = raw_connect(s);
    RAW(x, "+PONG\r\n", "PING");   /* accepted and counted */
    return x;
}

static void close_raw(void *x) { raw_close(x); }

/* A big set of WT_SET_SIZE members, for the busy intersections. */
static void fill_big_set(redisContext *c, const char *key) {
    enum { CHUNK = 10000 };
    static char members[CHUNK][16];
    const char *argv[CHUNK + 2];
    size_t lens[CHUNK + 2];
    for (int base = 0; base < WT_SET_SIZE; base += CHUNK) {
        argv[0] = "SADD";
        lens[0] = 4;
        argv[1] = key;
        lens[1] = strlen(key);
        for (int i = 0; i < CHUNK; i++) {
            lens[i + 2] = (size_t)snprintf(members[i], sizeof members[i], "m%d", base + i);
            argv[i + 2] = members[i];
        }
        expect_int(cmdv(c, CHUNK + 2, argv, lens), CHUNK);
    }
}

/* X: a transaction over both shards, then the intersections (all sent at
 * once); its replies are read with x_done. */
static void x_busy(struct raw *x, const char *kn, const char *ko, const char *s1, const char *s2) {
    raw_cmd(x, "EXISTS %s %s", kn, ko);
    for (int i = 0; i < WT_BUSY; i++) raw_cmd(x, "SINTERCARD 2 %s %s", s1, s2);
}

static void x_done(struct raw *x) {
    char card[32];
    snprintf(card, sizeof card, ":%d\r\n", WT_SET_SIZE);
    raw_expect(x, ":0\r\n");
    for (int i = 0; i < WT_BUSY; i++) raw_expect(x, card);
}

/* A PING and a BRPOPLPUSH in one write: the PONG comes once the server
 * has taken the BRPOPLPUSH up (same read, same batch). */
static void ping_then_brpoplpush(struct raw *r, const char *list, const char *dst) {
    char buf[256];
    int n = snprintf(buf, sizeof buf, "*1\r\n$4\r\nPING\r\n*4\r\n$10\r\nBRPOPLPUSH\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n$1\r\n0\r\n",
                     strlen(list), list, strlen(dst), dst);
    raw_send(r, buf, (size_t)n);
    raw_expect(r, "+PONG\r\n");
}

static void test_first_waiter_wrongtype(void **state) {
    struct fixture *f = FIX(state);
    int n = h_redis_mode() ? 1 : h_threads();
    int o = n - 1, other = 0;   /* the keys' shard, and another (the same with one) */
    char tag[16], tag_n[16];
    tag_on_shard(o, n, tag);
    tag_on_shard(other, n, tag_n);
    char list[48], t1[48], t2[48], s1[48], s2[48], kn[48], ko[48];
    snprintf(list, sizeof list, "bk:wl%s", tag);
    snprintf(t1, sizeof t1, "bk:wt1%s", tag);
    snprintf(t2, sizeof t2, "bk:wt2%s", tag);
    snprintf(s1, sizeof s1, "bk:ws1%s", tag);
    snprintf(s2, sizeof s2, "bk:ws2%s", tag);
    snprintf(kn, sizeof kn, "bk:wx%s", tag_n);
    snprintf(ko, sizeof ko, "bk:wx%s", tag);
    fill_big_set(f->c, s1);
    fill_big_set(f->c, s2);
    /* three connections on the keys' thread, one on another */
    void *a[H_MAX_THREADS], *b[H_MAX_THREADS], *p[H_MAX_THREADS];
    h_every_thread(f->c, &f->srv, a, open_raw_pinged, close_raw);
    h_every_thread(f->c, &f->srv, b, open_raw_pinged, close_raw);
    h_every_thread(f->c, &f->srv, p, open_raw_pinged, close_raw);
    struct raw *x = a[o], *on_o = b[o], *pusher = p[o];
    struct raw *on_n = o == other ? raw_connect(&f->srv) : a[other];   /* one thread: any connection */
    char foo[] = "$3\r\nfoo\r\n";
    for (int round = 0; round < 2 * WT_ROUNDS; round++) {
        bool case1 = round % 2 == 0;
        struct raw *first = case1 ? on_n : on_o, *second = case1 ? on_o : on_n;
        freeReplyObject(cmd(f->c, "DEL %s %s %s", list, t1, t2));
        OK(f->c, "SET %s nolist", t1);
        if (case1) {
            x_busy(x, kn, ko, s1, s2);
            h_sleep_ms(2);                      /* X's transaction is done by now */
            ping_then_brpoplpush(first, list, t1);
            raw_cmd(second, "BRPOPLPUSH %s %s 0", list, t2);
            x_done(x);
            wait_blocked(f->c, 2);
            INT(f->c, 1, "LPUSH %s foo", list);
        } else {
            raw_cmd(first, "BRPOPLPUSH %s %s 0", list, t1);
            wait_blocked(f->c, 1);
            x_busy(x, kn, ko, s1, s2);
            h_sleep_ms(2);
            ping_then_brpoplpush(second, list, t2);
            raw_cmd(pusher, "LPUSH %s foo", list);
            x_done(x);
            raw_expect(pusher, ":1\r\n");
        }
        raw_expect(first, WT_WRONGTYPE);
        raw_expect(second, foo);
        expect_bulks(cmd(f->c, "LRANGE %s 0 -1", t2), 1, "foo");
        INT(f->c, 0, "LLEN %s", list);
        wait_blocked(f->c, 0);
    }
    if (o == other) raw_close(on_n);
    for (int t = 0; t < n; t++) {
        raw_close(a[t]);
        raw_close(b[t]);
        raw_close(p[t]);
    }
}
#undef WT_ROUNDS
#undef WT_SET_SIZE
#undef WT_BUSY

/* The same with every loop iteration cut after one completion
 * (io-iteration-budget-us 0): the rest wait in the ring for the next
 * iteration. The quiet-buffer trim once took their receive buffers away
 * with them (a BRPOPLPUSH then parsed as garbage and never ran). */
static void test_first_waiter_wrongtype_sliced(void **state) {
    struct fixture *f = FIX(state);
    if (h_redis_mode()) skip();
    OK(f->c, "CONFIG SET io-iteration-budget-us 0");
    test_first_waiter_wrongtype(state);
    OK(f->c, "CONFIG SET io-iteration-budget-us 500");
}

static void test_errors(void **state) {
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR timeout is negative", "BLPOP bk:x -1");
    ERR(c, "ERR timeout is not a float or out of range", "BLPOP bk:x abc");
    OK(c, "SET bk:s str");
    ERR(c, "WRONGTYPE Operation against a key holding the wrong kind of value", "BLPOP bk:s 0");
    ERR(c, "ERR numkeys should be greater than 0", "BLMPOP 0 0 bk:x LEFT");
    /* data already there: no blocking at all */
    INT(c, 2, "RPUSH bk:l a b");
    expect_bulks(cmd(c, "BRPOP bk:l 0"), 2, "bk:l", "b");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_served_by_push, h_flushall),
        cmocka_unit_test_setup(test_timeout, h_flushall),
        cmocka_unit_test_setup(test_fifo_and_exactly_once, h_flushall),
        cmocka_unit_test_setup(test_oldest_first_everywhere, h_flushall),
        cmocka_unit_test_setup(test_gone_waiters_lose_nothing, h_flushall),
        cmocka_unit_test_setup(test_blmove_and_blmpop, h_flushall),
        cmocka_unit_test_setup(test_sorted_sets, h_flushall),
        cmocka_unit_test_setup(test_chain_with_gone_client, h_flushall),
        cmocka_unit_test_setup(test_blocked_clients_info, h_flushall),
        cmocka_unit_test_setup(test_woken_by_other_type, h_flushall),
        cmocka_unit_test_setup(test_client_unblock, h_flushall),
        cmocka_unit_test_setup(test_first_waiter_wrongtype, h_flushall),
        cmocka_unit_test_setup(test_first_waiter_wrongtype_sliced, h_flushall),
        cmocka_unit_test_setup(test_errors, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("blocking", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
