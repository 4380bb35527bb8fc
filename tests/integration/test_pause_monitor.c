/*
 * Client controls across threads: CLIENT PAUSE WRITE holds writes from
 * clients on every thread while reads go on; UNPAUSE releases them, in the
 * order they were paused on a thread, a paused client's later pipelined
 * commands behind its first; PAUSE ALL holds everything but monitors; a
 * pause ends by itself at its timeout; expired keys stay while paused.
 * MONITOR sees the commands of clients on every thread, each client's in
 * the order sent, in Redis's line format (escapes, database, redacted
 * secrets, MULTI/EXEC); RESET turns MONITOR, NO-EVICT and NO-TOUCH off.
 *
 * Which thread a connection landed on is read from INFO ringkv (the
 * thread whose connection count went up). Waits are bounded by counts of
 * polls, never asserted as durations.
 */
#include "harness.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 8

static void conns_per_thread(redisContext *c, long *out, int n) {
    redisReply *r = cmd(c, "INFO ringkv");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "thread%d", i);
        char *v = info_field(r->str, name);
        const char *p = v ? strstr(v, "connections=") : NULL;
        out[i] = p ? atol(p + strlen("connections=")) : -1;
        free(v);
    }
    freeReplyObject(r);
}

/* A new raw connection and the thread that accepted it (-1 on redis-server). */
static struct raw *connect_on(struct fixture *f, int *thread) {
    int n = h_threads();
    for (int attempt = 0; attempt < 20; attempt++) {
        long before[MAXT], after[MAXT];
        if (!h_redis_mode()) conns_per_thread(f->c, before, n);
        struct raw *r = raw_connect(&f->srv);
        RAW(r, "+PONG\r\n", "PING");
        if (h_redis_mode()) { *thread = 0; return r; }
        conns_per_thread(f->c, after, n);
        int found = -1, ups = 0;
        for (int i = 0; i < n; i++)
            if (after[i] > before[i]) { found = i; ups++; }
        if (ups == 1) { *thread = found; return r; }
        raw_close(r);   /* another connection closed meanwhile: try again */
    }
    h_fail("could not tell which thread accepted a connection");
}

/* One raw connection on each thread (on redis-server: just n of them). */
static void one_per_thread(struct fixture *f, struct raw **out, int n) {
    struct raw *spare[64];
    int nspare = 0, have = 0;
    for (int i = 0; i < n; i++) out[i] = NULL;
    while (have < n) {
        assert_true(nspare < 64);
        int t;
        struct raw *r = connect_on(f, &t);
        if (h_redis_mode()) t = have;
        if (!out[t]) { out[t] = r; have++; }
        else spare[nspare++] = r;
    }
    for (int i = 0; i < nspare; i++) raw_close(spare[i]);
}

static long long blocked_clients(struct fixture *f) { return info_ll(f->c, "clients", "blocked_clients"); }

/* Poll (a bounded number of times) until INFO counts `want` blocked clients. */
static void wait_blocked(struct fixture *f, long long want) {
    for (int i = 0; i < 500; i++) {
        if (blocked_clients(f) == want) return;
        h_sleep_ms(10);
    }
    h_fail("blocked_clients never reached %lld (is %lld)", want, blocked_clients(f));
}

static void test_pause_write_every_thread(void **state) {
    struct fixture *f = FIX(state);
    int n = h_threads();
    struct raw *w[MAXT], *r[MAXT];
    one_per_thread(f, w, n);
    one_per_thread(f, r, n);
    OK(f->c, "CLIENT PAUSE 100000 WRITE");
    for (int i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "pw:%d", i);
        raw_cmd(w[i], "SET %s v%d", key, i);
        raw_cmd(w[i], "GET %s", key);   /* a read, but behind the held write */
    }
    wait_blocked(f, n);
    /* PUBLISH is held too (Redis's may-replicate) */
    struct raw *p = raw_connect(&f->srv);
    raw_cmd(p, "PUBLISH pw:ch m");
    wait_blocked(f, n + 1);
    /* reads go on, on every thread, and see none of the held writes */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            char key[32];
            snprintf(key, sizeof key, "pw:%d", j);
            raw_cmd(r[i], "GET %s", key);
            raw_expect(r[i], "$-1\r\n");
        }
        RAW(r[i], "+PONG\r\n", "PING");
        raw_cmd(r[i], "MGET pw:0 pw:1 pw:2");
        raw_expect(r[i], "*3\r\n$-1\r\n$-1\r\n$-1\r\n");
    }
    for (int i = 0; i < n; i++) assert_int_equal(raw_fill(w[i], 1, 0), 0);   /* still held */
    OK(f->c, "CLIENT UNPAUSE");
    for (int i = 0; i < n; i++) {
        char exp[32];
        snprintf(exp, sizeof exp, "+OK\r\n$2\r\nv%d\r\n", i);
        raw_expect(w[i], exp);
    }
    raw_expect(p, ":0\r\n");
    assert_int_equal(blocked_clients(f), 0);
    raw_close(p);
    for (int i = 0; i < n; i++) { raw_close(w[i]); raw_close(r[i]); }
}

/* Clients paused on one thread resume in the order they were paused, each
 * with its whole pipeline before the next. */
static void test_unpause_in_order(void **state) {
    struct fixture *f = FIX(state);
    int n = h_threads();
    struct raw *by_thread[MAXT] = {0}, *a = NULL, *b = NULL, *spare[MAXT + 1];
    int nspare = 0;
    while (!b) {   /* n + 1 connections: two share a thread */
        int t;
        struct raw *r = connect_on(f, &t);
        if (h_redis_mode()) t = 0;
        if (by_thread[t]) { a = by_thread[t]; b = r; by_thread[t] = NULL; }
        else { by_thread[t] = r; spare[nspare++] = r; }
        assert_true(nspare <= n);
    }
    OK(f->c, "CLIENT PAUSE 100000 WRITE");
    raw_cmd(a, "RPUSH po:l a1");
    raw_cmd(a, "RPUSH po:l a2");
    wait_blocked(f, 1);
    raw_cmd(b, "RPUSH po:l b1");
    wait_blocked(f, 2);
    OK(f->c, "CLIENT UNPAUSE");
    raw_expect(a, ":1\r\n:2\r\n");
    raw_expect(b, ":3\r\n");
    expect_bulks(cmd(f->c, "LRANGE po:l 0 -1"), 3, "a1", "a2", "b1");
    raw_close(a);
    raw_close(b);
    for (int i = 0; i < nspare; i++) if (spare[i] != a) raw_close(spare[i]);
}

static size_t count_sub(const char *s, const char *sub) {
    size_t k = 0;
    for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) k++;
    return k;
}

/* PAUSE ALL holds every command of every thread, reads too, but not a
 * monitor (a replica to Redis), which can list the held clients and end
 * the pause. */
static void test_pause_all(void **state) {
    struct fixture *f = FIX(state);
    int n = h_threads();
    struct raw *c[MAXT];
    one_per_thread(f, c, n);
    struct raw *m = raw_connect(&f->srv);
    RAW(m, "+OK\r\n", "MONITOR");
    OK(f->c, "SET pa:k v");
    struct rv *line = raw_reply(m);     /* the SET above */
    rv_free(line);
    OK(f->c, "CLIENT PAUSE 100000 ALL");
    for (int i = 0; i < n; i++) raw_cmd(c[i], "GET pa:k");
    size_t held = 0;
    for (int i = 0; i < 500 && held < (size_t)n; i++) {
        raw_cmd(m, "CLIENT LIST");
        struct rv *list = raw_reply(m);
        assert_int_equal(list->type, '$');
        held = count_sub(list->str, "flags=b");
        rv_free(list);
        if (held < (size_t)n) h_sleep_ms(10);
    }
    assert_int_equal(held, n);
    for (int i = 0; i < n; i++) assert_int_equal(raw_fill(c[i], 1, 0), 0);
    RAW(m, "+OK\r\n", "CLIENT UNPAUSE");
    for (int i = 0; i < n; i++) raw_expect(c[i], "$1\r\nv\r\n");
    /* the monitor sees them once they ran */
    for (int i = 0; i < n; i++) {
        struct rv *l = raw_reply(m);
        assert_int_equal(l->type, '+');
        assert_non_null(strstr(l->str, "\"GET\" \"pa:k\""));
        rv_free(l);
    }
    for (int i = 0; i < n; i++) raw_close(c[i]);
    raw_close(m);
}

/* A pause ends by itself: clients on every thread are released at its
 * timeout, with nobody sending anything (their threads wake on their own). */
static void test_pause_timeout(void **state) {
    struct fixture *f = FIX(state);
    int n = h_threads();
    struct raw *c[MAXT];
    one_per_thread(f, c, n);
    OK(f->c, "CLIENT PAUSE 300 WRITE");
    for (int i = 0; i < n; i++) raw_cmd(c[i], "INCR pt:n");
    for (int i = 0; i < n; i++) {
        struct rv *v = raw_reply(c[i]);
        assert_int_equal(v->type, ':');
        rv_free(v);
    }
    expect_bulk(cmd(f->c, "GET pt:n"), n == 1 ? "1" : n == 2 ? "2" : n == 3 ? "3" : "4");
    OK(f->c, "CLIENT PAUSE 200 ALL");
    for (int i = 0; i < n; i++) RAW(c[i], "+PONG\r\n", "PING");
    for (int i = 0; i < n; i++) raw_close(c[i]);
}

static void test_pause_errors(void **state) {
    struct fixture *f = FIX(state);
    ERR(f->c, "ERR timeout is not an integer or out of range", "CLIENT PAUSE abc");
    ERR(f->c, "ERR timeout is negative", "CLIENT PAUSE -1");
    ERR(f->c, "ERR CLIENT PAUSE mode must be WRITE or ALL", "CLIENT PAUSE 100 READ");
    ERR(f->c, "ERR wrong number of arguments for 'client|pause' command", "CLIENT PAUSE");
    ERR(f->c, "ERR wrong number of arguments for 'client|unpause' command", "CLIENT UNPAUSE now");
    OK(f->c, "CLIENT PAUSE 100000 WRITE");
    /* refused commands are answered at once, reads run */
    ERR(f->c, "ERR wrong number of arguments for 'set' command", "SET k");
    NIL(f->c, "GET k");
    OK(f->c, "CLIENT UNPAUSE");
    OK(f->c, "CLIENT UNPAUSE");   /* nothing to end: still OK */
    OK(f->c, "CLIENT PAUSE 0 ALL");   /* ends at once */
    OK(f->c, "SET k v");
}

/* Expired keys are not deleted while paused (reads see them absent). */
static void test_expiry_paused(void **state) {
    struct fixture *f = FIX(state);
    /* the key must still be there once the pause holds (a busy machine may
     * take longer than its TTL from SET to PAUSE: then try again) */
    long long expired = 0;
    for (int tries = 0;; tries++) {
        assert_true(tries < 50);
        OK(f->c, "SET ex:k v PX 100");
        OK(f->c, "CLIENT PAUSE 100000 WRITE");
        expired = info_ll(f->c, "stats", "expired_keys");
        redisReply *r = cmd(f->c, "PTTL ex:k");
        bool there = r->integer > 0;
        freeReplyObject(r);
        if (there) break;
        OK(f->c, "CLIENT UNPAUSE");
    }
    int i = 0;
    for (; i < 500; i++) {
        redisReply *r = cmd(f->c, "GET ex:k");
        bool gone = r->type == REDIS_REPLY_NIL;
        freeReplyObject(r);
        if (gone) break;
        h_sleep_ms(10);
    }
    assert_true(i < 500);
    for (int k = 0; k < 20; k++) NIL(f->c, "GET ex:k");
    if (!h_redis_mode()) assert_int_equal(info_ll(f->c, "stats", "expired_keys"), expired);
    OK(f->c, "CLIENT UNPAUSE");
    NIL(f->c, "GET ex:k");
    assert_int_equal(info_ll(f->c, "stats", "expired_keys"), expired + 1);
}

/* "+<sec>.<usec> [<db> 127.0.0.1:<port>] <args>": the args part, or fail. */
static const char *line_args(const struct rv *l, int db) {
    assert_int_equal(l->type, '+');
    const char *p = l->str;
    assert_true(isdigit((unsigned char)*p));
    while (isdigit((unsigned char)*p)) p++;
    assert_int_equal(*p++, '.');
    for (int i = 0; i < 6; i++) assert_true(isdigit((unsigned char)*p++));
    char head[32];
    snprintf(head, sizeof head, " [%d 127.0.0.1:", db);
    assert_memory_equal(p, head, strlen(head));
    p = strchr(p, ']');
    assert_non_null(p);
    assert_int_equal(p[1], ' ');
    return p + 2;
}

static void expect_line(struct raw *m, int db, const char *args) {
    struct rv *l = raw_reply(m);
    const char *got = line_args(l, db);
    if (strcmp(got, args) != 0) h_fail("monitor line args: got [%s], want [%s]", got, args);
    rv_free(l);
}

/* Monitors on every thread see the commands of clients on every thread. */
static void test_monitor_every_thread(void **state) {
    struct fixture *f = FIX(state);
    int n = h_threads();
    struct raw *m[MAXT], *c[MAXT];
    one_per_thread(f, c, n);
    one_per_thread(f, m, n);   /* (their INFO and PING run before any MONITOR) */
    for (int i = 0; i < n; i++) RAW(m[i], "+OK\r\n", "MONITOR");
    for (int i = 0; i < n; i++) {
        char exp[64];
        RAW(c[i], "+OK\r\n", "SET mon:%d v", i);
        for (int j = 0; j < n; j++) {
            snprintf(exp, sizeof exp, "\"SET\" \"mon:%d\" \"v\"", i);
            expect_line(m[j], 0, exp);
        }
    }
    for (int i = 0; i < n; i++) { raw_close(m[i]); raw_close(c[i]); }
}

/* Each client's commands reach a monitor in the order sent, forwarded to
 * other shards or not, while two clients interleave. */
static void test_monitor_order(void **state) {
    struct fixture *f = FIX(state);
    struct raw *m = raw_connect(&f->srv);
    RAW(m, "+OK\r\n", "MONITOR");
    struct raw *a = raw_connect(&f->srv), *b = raw_connect(&f->srv);
    enum { N = 200 };
    for (int i = 0; i < N; i++) {
        raw_cmd(a, "SET ord:a:%d %d", i, i);
        raw_cmd(b, "INCR ord:b:%d", i % 7);
    }
    for (int i = 0; i < N; i++) { raw_expect(a, "+OK\r\n"); struct rv *v = raw_reply(b); rv_free(v); }
    int next_a = 0, next_b = 0;
    for (int k = 0; k < 2 * N; k++) {
        struct rv *l = raw_reply(m);
        const char *args = line_args(l, 0);
        int i, v;
        char want[64];
        if (sscanf(args, "\"SET\" \"ord:a:%d\" \"%d\"", &i, &v) == 2) {
            assert_int_equal(i, next_a);
            assert_int_equal(v, next_a);
            next_a++;
        } else if (sscanf(args, "\"INCR\" \"ord:b:%d\"", &i) == 1) {
            snprintf(want, sizeof want, "\"INCR\" \"ord:b:%d\"", next_b % 7);
            assert_string_equal(args, want);
            next_b++;
        } else {
            h_fail("unexpected monitor line %s", l->str);
        }
        rv_free(l);
    }
    assert_int_equal(next_a, N);
    assert_int_equal(next_b, N);
    raw_close(a);
    raw_close(b);
    raw_close(m);
}

static void test_monitor_format(void **state) {
    struct fixture *f = FIX(state);
    struct raw *m = raw_connect(&f->srv);
    RAW(m, "+OK\r\n", "MONITOR");
    /* escapes as sds's catrepr */
    const char *argv[] = { "SET", "esc", "a\"b\\c\n\r\t\x01\xff" };
    size_t lens[] = { 3, 3, 10 };
    expect_ok(cmdv(f->c, 3, argv, lens));
    expect_line(m, 0, "\"SET\" \"esc\" \"a\\\"b\\\\c\\n\\r\\t\\x01\\xff\"");
    /* the database after the command, as Redis's call() */
    OK(f->c, "SELECT 3");
    expect_line(m, 3, "\"SELECT\" \"3\"");
    NIL(f->c, "GET x");
    expect_line(m, 3, "\"GET\" \"x\"");
    OK(f->c, "SELECT 0");
    expect_line(m, 0, "\"SELECT\" \"0\"");
    /* refused commands and administrative ones are not shown */
    expect_error_prefix(cmd(f->c, "NOSUCH a"), "ERR unknown command");
    expect_error_prefix(cmd(f->c, "GET"), "ERR wrong number");
    redisReply *r = cmd(f->c, "CONFIG GET maxclients");
    freeReplyObject(r);
    /* secrets redacted where Redis redacts them */
    expect_error_prefix(cmd(f->c, "AUTH not-real"), "ERR AUTH");
    expect_line(m, 0, "\"AUTH\" \"(redacted)\"");
    expect_error_prefix(cmd(f->c, "AUTH not-real not-a-password"), "WRONGPASS");
    expect_line(m, 0, "\"AUTH\" \"(redacted)\" \"(redacted)\"");
    expect_error_prefix(cmd(f->c, "HELLO 2 AUTH not-real not-a-password"), "WRONGPASS");
    expect_line(m, 0, "\"HELLO\" \"2\" \"AUTH\" \"(redacted)\" \"(redacted)\"");
    /* MULTI/EXEC: the queued commands shown when EXEC runs them */
    OK(f->c, "MULTI");
    STATUS(f->c, "QUEUED", "SET mx 1");
    STATUS(f->c, "QUEUED", "INCR mx");
    r = cmd(f->c, "EXEC");
    freeReplyObject(r);
    expect_line(m, 0, "\"MULTI\"");
    expect_line(m, 0, "\"SET\" \"mx\" \"1\"");
    expect_line(m, 0, "\"INCR\" \"mx\"");
    expect_line(m, 0, "\"EXEC\"");
    OK(f->c, "MULTI");
    expect_error_prefix(cmd(f->c, "NOSUCH"), "ERR unknown command");
    expect_error_prefix(cmd(f->c, "EXEC"), "EXECABORT");
    expect_line(m, 0, "\"MULTI\"");
    expect_line(m, 0, "\"EXEC\"");
    /* a monitor may not touch the keyspace; MONITOR again answers nothing */
    RAW(m, "-ERR Replica can't interact with the keyspace\r\n", "GET x");
    raw_cmd(m, "MONITOR");
    RAW(m, "+PONG\r\n", "PING");
    expect_line(m, 0, "\"PING\"");
    raw_close(m);
    /* RESP3 monitors get the same simple strings */
    m = raw_connect(&f->srv);
    raw_cmd(m, "HELLO 3");
    rv_free(raw_reply(m));
    RAW(m, "+OK\r\n", "MONITOR");
    OK(f->c, "SET r3 v");
    expect_line(m, 0, "\"SET\" \"r3\" \"v\"");
    raw_close(m);
    /* MONITOR inside MULTI */
    OK(f->c, "MULTI");
    STATUS(f->c, "QUEUED", "MONITOR");
    r = cmd(f->c, "EXEC");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->element[0]->type, REDIS_REPLY_ERROR);
    assert_string_equal(r->element[0]->str, "ERR MONITOR isn't allowed for DENY BLOCKING client");
    freeReplyObject(r);
}

/* A monitor that does not read is closed at the normal class of
 * client-output-buffer-limit, as Redis counts it (no limit by default). */
static void test_monitor_output_limit(void **state) {
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "normal 65536 0 0");
    struct raw *m = raw_connect(&f->srv);
    RAW(m, "+OK\r\n", "MONITOR");
    char value[1024];
    memset(value, 'v', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    /* past what the kernel's socket buffers take, until the monitor goes */
    long long before = info_ll(f->c, "clients", "connected_clients");
    for (int i = 0; i < 400 && info_ll(f->c, "clients", "connected_clients") == before; i++)
        for (int j = 0; j < 100; j++) OK(f->c, "SET mon:big %s", value);
    assert_true(raw_read_to_close(m, 10000));
    raw_close(m);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "normal 0 0 0");
}

/* RESET ends MONITOR and the NO-EVICT and NO-TOUCH modes (NO-TOUCH is
 * Redis 7.2's, whose RESET also ends NO-EVICT: not checked on 7.0). */
static void test_reset(void **state) {
    struct fixture *f = FIX(state);
    struct raw *m = raw_connect(&f->srv);
    struct rv *info;
    if (!h_redis_mode()) {
        RAW(m, "+OK\r\n", "CLIENT NO-EVICT on");
        RAW(m, "+OK\r\n", "CLIENT NO-TOUCH on");
        raw_cmd(m, "CLIENT INFO");
        info = raw_reply(m);
        assert_non_null(strstr(info->str, " flags=eT "));
        rv_free(info);
        RAW(m, "-ERR syntax error\r\n", "CLIENT NO-TOUCH maybe");
    }
    RAW(m, "-ERR syntax error\r\n", "CLIENT NO-EVICT maybe");
    RAW(m, "+OK\r\n", "MONITOR");
    OK(f->c, "SET rs v");
    expect_line(m, 0, "\"SET\" \"rs\" \"v\"");
    RAW(m, "+RESET\r\n", "RESET");
    OK(f->c, "SET rs w");
    RAW(m, "+PONG\r\n", "PING");    /* no line for the SET, none for the PING */
    RAW(m, "$1\r\nw\r\n", "GET rs");   /* not a monitor: the keyspace again */
    raw_cmd(m, "CLIENT INFO");
    info = raw_reply(m);
    assert_non_null(strstr(info->str, " flags=N "));
    rv_free(info);
    raw_close(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_pause_write_every_thread, h_flushall),
        cmocka_unit_test_setup(test_unpause_in_order, h_flushall),
        cmocka_unit_test_setup(test_pause_all, h_flushall),
        cmocka_unit_test_setup(test_pause_timeout, h_flushall),
        cmocka_unit_test_setup(test_pause_errors, h_flushall),
        cmocka_unit_test_setup(test_expiry_paused, h_flushall),
        cmocka_unit_test_setup(test_monitor_every_thread, h_flushall),
        cmocka_unit_test_setup(test_monitor_order, h_flushall),
        cmocka_unit_test_setup(test_monitor_format, h_flushall),
        cmocka_unit_test_setup(test_monitor_output_limit, h_flushall),
        cmocka_unit_test_setup(test_reset, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("pause_monitor", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
