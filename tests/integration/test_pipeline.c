/*
 * Pipelining, ordering and concurrency:
 *  - 100,000 mixed commands over 1000 keys (every shard), sent without
 *    waiting; the reply stream must equal, byte for byte, what a local
 *    model predicts;
 *  - MSET atomicity across shards: readers never see half of an MSET;
 *  - INCR from several connections at once loses no update;
 *  - 1,000 concurrent connections.
 */
#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

/* ------------------------------------------------------------------ */

struct buf { char *p; size_t len, cap; };

static void buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 4096;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void buf_printf(struct buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    buf_add(b, tmp, (size_t)n);
}

static void resp_cmd(struct buf *b, int argc, const char **argv)
{
    buf_printf(b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++)
        buf_printf(b, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
}

static void resp_bulk(struct buf *b, const char *s)
{
    if (s) buf_printf(b, "$%zu\r\n%s\r\n", strlen(s), s);
    else buf_add(b, "$-1\r\n", 5);
}

static unsigned long long rng_state = 88172645463325252ULL;
static unsigned long long rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static bool strict_ll(const char *s, long long *out)
{
    if (!*s || strlen(s) > 20) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno) return false;
    char back[32];
    snprintf(back, sizeof back, "%lld", v);
    if (strcmp(back, s) != 0) return false;
    *out = v;
    return true;
}

static void test_big_mixed_pipeline(void **state)
{
    enum { NCMD = 100000, NKEYS = 1000 };
    static char *model[NKEYS];
    for (int i = 0; i < NKEYS; i++) { free(model[i]); model[i] = NULL; }

    struct buf req = { 0 }, exp = { 0 };
    size_t *exp_off = malloc((NCMD + 1) * sizeof *exp_off);
    char keys[4][32], val[64];
    for (int n = 0; n < NCMD; n++) {
        exp_off[n] = exp.len;
        int op = (int)(rnd() % 100);
        int k[4];
        for (int j = 0; j < 4; j++) {
            k[j] = (int)(rnd() % NKEYS);
            snprintf(keys[j], sizeof keys[j], "pipe:%d", k[j]);
        }
        if (op < 30) {                                  /* SET */
            if (rnd() % 2) snprintf(val, sizeof val, "%lld", (long long)(rnd() % 2000000) - 1000000);
            else snprintf(val, sizeof val, "v%llu", rnd() % 1000000);
            const char *a[] = { "SET", keys[0], val };
            resp_cmd(&req, 3, a);
            free(model[k[0]]);
            model[k[0]] = strdup(val);
            buf_add(&exp, "+OK\r\n", 5);
        } else if (op < 55) {                           /* GET */
            const char *a[] = { "GET", keys[0] };
            resp_cmd(&req, 2, a);
            resp_bulk(&exp, model[k[0]]);
        } else if (op < 75) {                           /* INCR */
            const char *a[] = { "INCR", keys[0] };
            resp_cmd(&req, 2, a);
            long long v = 0;
            if (!model[k[0]] || strict_ll(model[k[0]], &v)) {
                v++;
                snprintf(val, sizeof val, "%lld", v);
                free(model[k[0]]);
                model[k[0]] = strdup(val);
                buf_printf(&exp, ":%lld\r\n", v);
            } else {
                buf_printf(&exp, "-ERR value is not an integer or out of range\r\n");
            }
        } else if (op < 83) {                           /* DEL */
            const char *a[] = { "DEL", keys[0] };
            resp_cmd(&req, 2, a);
            buf_printf(&exp, ":%d\r\n", model[k[0]] ? 1 : 0);
            free(model[k[0]]);
            model[k[0]] = NULL;
        } else if (op < 92) {                           /* MGET of 4 keys */
            const char *a[] = { "MGET", keys[0], keys[1], keys[2], keys[3] };
            resp_cmd(&req, 5, a);
            buf_add(&exp, "*4\r\n", 4);
            for (int j = 0; j < 4; j++) resp_bulk(&exp, model[k[j]]);
        } else {                                        /* EXISTS of 3 keys */
            const char *a[] = { "EXISTS", keys[0], keys[1], keys[2] };
            resp_cmd(&req, 4, a);
            int cnt = 0;
            for (int j = 0; j < 3; j++) cnt += model[k[j]] != NULL;
            buf_printf(&exp, ":%d\r\n", cnt);
        }
    }
    exp_off[NCMD] = exp.len;

    /* send everything without waiting for replies; read concurrently so
     * neither side can block the other */
    struct raw *r = raw_connect(&FIX(state)->srv);
    size_t sent = 0, got = 0;
    char *rx = malloc(exp.len + 65536);
    long long deadline = h_now_ms() + 120000;
    while (got < exp.len && h_now_ms() < deadline) {
        struct pollfd p = { .fd = r->fd, .events = POLLIN | (sent < req.len ? POLLOUT : 0) };
        if (poll(&p, 1, 1000) < 0) continue;
        if (sent < req.len && (p.revents & POLLOUT)) {
            ssize_t n = send(r->fd, req.p + sent, req.len - sent, MSG_NOSIGNAL);
            if (n > 0) sent += (size_t)n;
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = recv(r->fd, rx + got, exp.len + 65536 - got, 0);
            if (n == 0) h_fail("server closed the connection after %zu of %zu reply bytes", got, exp.len);
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                h_fail("recv: %s after %zu reply bytes", strerror(errno), got);
            if (n > 0) {
                size_t before = got;
                got += (size_t)n;
                size_t upto = got < exp.len ? got : exp.len;
                if (memcmp(rx + before, exp.p + before, upto - before) != 0) {
                    size_t at = before;
                    while (at < upto && rx[at] == exp.p[at]) at++;
                    size_t lo = 0, hi = NCMD;      /* which command */
                    while (hi - lo > 1) {
                        size_t mid = (lo + hi) / 2;
                        if (exp_off[mid] <= at) lo = mid; else hi = mid;
                    }
                    size_t elen = exp_off[lo + 1] - exp_off[lo];
                    char *e = h_escape(exp.p + exp_off[lo], elen);
                    char *g = h_escape(rx + exp_off[lo], (got - exp_off[lo]) > elen + 40 ? elen + 40 : got - exp_off[lo]);
                    h_fail("reply %zu of %d differs: expected \"%s\" got \"%s\"", lo, NCMD, e, g);
                }
            }
        }
    }
    if (got < exp.len)
        h_fail("timeout: %zu of %zu request bytes sent, %zu of %zu reply bytes received",
               sent, req.len, got, exp.len);
    /* and nothing more */
    raw_cmd(r, "PING");
    raw_expect(r, "+PONG\r\n");
    raw_close(r);

    /* the final state agrees with the model, seen from another connection */
    redisContext *c = FIX(state)->c;
    int live = 0;
    for (int i = 0; i < NKEYS; i++) {
        snprintf(keys[0], sizeof keys[0], "pipe:%d", i);
        redisReply *g = cmd(c, "GET %s", keys[0]);
        if (model[i]) { live++; expect_bulk(g, model[i]); }
        else expect_nil(g);
    }
    INT(c, live, "DBSIZE");
    free(rx);
    free(req.p);
    free(exp.p);
    free(exp_off);
}

/* Thread-side connect (no cmocka assertions off the main thread). */
static redisContext *tconnect(int port)
{
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, (struct timeval){ 5, 0 });
    if (c && !c->err) redisSetTimeout(c, (struct timeval){ 20, 0 });
    return c;
}

/* ------------------------------------------------------------------ */
/* MSET atomicity                                                       */

struct atom_shared {
    int port;
    atomic_bool stop;
    atomic_long reads, writes, torn;
    char first_torn[512];
    atomic_int errors;
    char first_error[256];
};

static const char *mkeys[] = { "k:1", "k:2", "k:3", "k:4", "k:5", "k:6", "k:7", "k:8" };

struct wargs { struct atom_shared *s; int id; };

static void record_error(struct atom_shared *s, const char *what, redisContext *c)
{
    if (atomic_fetch_add(&s->errors, 1) == 0)
        snprintf(s->first_error, sizeof s->first_error, "%s: %s", what, c ? c->errstr : "");
}

static void *writer(void *arg)
{
    struct wargs *w = arg;
    struct atom_shared *s = w->s;
    redisContext *c = tconnect(s->port);
    if (!c || c->err) { record_error(s, "writer connect", c); return NULL; }
    char v[32];
    const char *argv[17];
    argv[0] = "MSET";
    for (long i = 0; !atomic_load(&s->stop); i++) {
        snprintf(v, sizeof v, "w%d-%ld", w->id, i);
        for (int j = 0; j < 8; j++) { argv[1 + 2 * j] = mkeys[j]; argv[2 + 2 * j] = v; }
        redisReply *r = redisCommandArgv(c, 17, argv, NULL);
        if (!r || r->type != REDIS_REPLY_STATUS) { record_error(s, "MSET", c); if (r) freeReplyObject(r); break; }
        freeReplyObject(r);
        atomic_fetch_add(&s->writes, 1);
    }
    redisFree(c);
    return NULL;
}

static void *reader(void *arg)
{
    struct wargs *w = arg;
    struct atom_shared *s = w->s;
    redisContext *c = tconnect(s->port);
    if (!c || c->err) { record_error(s, "reader connect", c); return NULL; }
    const char *argv[9];
    argv[0] = "MGET";
    for (int j = 0; j < 8; j++) argv[1 + j] = mkeys[j];
    while (!atomic_load(&s->stop)) {
        redisReply *r = redisCommandArgv(c, 9, argv, NULL);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 8) {
            record_error(s, "MGET", c);
            if (r) freeReplyObject(r);
            break;
        }
        bool torn = false;
        for (int j = 1; j < 8; j++)
            if (r->element[j]->type != REDIS_REPLY_STRING ||
                strcmp(r->element[j]->str, r->element[0]->str) != 0)
                torn = true;
        if (torn && atomic_fetch_add(&s->torn, 1) == 0) {
            char *rep = reply_repr(r);
            snprintf(s->first_torn, sizeof s->first_torn, "%s", rep);
            free(rep);
        }
        freeReplyObject(r);
        atomic_fetch_add(&s->reads, 1);
    }
    redisFree(c);
    return NULL;
}

static void test_mset_atomicity(void **state)
{
    redisContext *c = FIX(state)->c;
    /* the keys must really be spread over shards */
    int parity[2] = { 0, 0 };
    for (int j = 0; j < 8; j++) parity[h_key_slot(mkeys[j], strlen(mkeys[j])) % 2]++;
    assert_true(parity[0] > 0 && parity[1] > 0);

    OK(c, "MSET k:1 init k:2 init k:3 init k:4 init k:5 init k:6 init k:7 init k:8 init");
    struct atom_shared *s = calloc(1, sizeof *s);
    s->port = FIX(state)->srv.port;
    enum { NW = 2, NR = 2 };
    pthread_t th[NW + NR];
    struct wargs wa[NW + NR];
    for (int i = 0; i < NW + NR; i++) {
        wa[i] = (struct wargs){ s, i };
        pthread_create(&th[i], NULL, i < NW ? writer : reader, &wa[i]);
    }
    h_sleep_ms(2000);
    atomic_store(&s->stop, true);
    for (int i = 0; i < NW + NR; i++) pthread_join(th[i], NULL);

    print_message("MSET atomicity: %ld MSETs, %ld MGETs\n", atomic_load(&s->writes), atomic_load(&s->reads));
    if (atomic_load(&s->errors)) h_fail("%d errors, first: %s", atomic_load(&s->errors), s->first_error);
    if (atomic_load(&s->torn))
        h_fail("%ld of %ld MGETs saw a partial MSET, first: %s", atomic_load(&s->torn),
               atomic_load(&s->reads), s->first_torn);
    assert_true(atomic_load(&s->writes) >= 100);
    assert_true(atomic_load(&s->reads) >= 100);
    free(s);
}

/* ------------------------------------------------------------------ */
/* Concurrent INCR: no update is lost                                   */

struct incr_args { int port; int n; int err; };

static void *incr_worker(void *arg)
{
    struct incr_args *a = arg;
    redisContext *c = tconnect(a->port);
    if (!c || c->err) { a->err = 1; return NULL; }
    for (int done = 0; done < a->n; ) {
        int batch = a->n - done > 100 ? 100 : a->n - done;
        for (int i = 0; i < batch; i++) {
            redisAppendCommand(c, "INCR counter:a");
            redisAppendCommand(c, "INCRBY counter:b 2");
        }
        for (int i = 0; i < 2 * batch; i++) {
            redisReply *r;
            if (redisGetReply(c, (void **)&r) != REDIS_OK || r->type != REDIS_REPLY_INTEGER) a->err = 1;
            if (r) freeReplyObject(r);
        }
        done += batch;
    }
    redisFree(c);
    return NULL;
}

static void test_concurrent_incr(void **state)
{
    enum { NT = 4, N = 5000 };
    pthread_t th[NT];
    struct incr_args a[NT];
    for (int i = 0; i < NT; i++) {
        a[i] = (struct incr_args){ FIX(state)->srv.port, N, 0 };
        pthread_create(&th[i], NULL, incr_worker, &a[i]);
    }
    for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NT; i++) assert_int_equal(a[i].err, 0);
    BULK(FIX(state)->c, "20000", "GET counter:a");
    BULK(FIX(state)->c, "40000", "GET counter:b");
}

/* ------------------------------------------------------------------ */
/* 1,000 concurrent connections                                         */

static void test_many_connections(void **state)
{
    enum { NC = 1000 };
    struct server *srv = &FIX(state)->srv;
    redisContext *c = FIX(state)->c;
    if (h_raise_nofile(NC + 200) < NC + 100) h_fail("RLIMIT_NOFILE too low for %d connections", NC);
    long long base = info_ll(c, "clients", "connected_clients");
    struct raw **conns = calloc(NC, sizeof *conns);
    for (int i = 0; i < NC; i++) conns[i] = raw_connect(srv);
    /* every connection sends before anybody reads */
    for (int i = 0; i < NC; i++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "conn:%d", i);
        snprintf(v, sizeof v, "value-%d", i);
        raw_cmd(conns[i], "SET %s %s", k, v);
        raw_cmd(conns[i], "GET %s", k);
    }
    for (int i = 0; i < NC; i++) {
        char e[64];
        snprintf(e, sizeof e, "+OK\r\n$%zu\r\nvalue-%d\r\n", strlen("value-") + (size_t)snprintf(NULL, 0, "%d", i), i);
        raw_expect(conns[i], e);
    }
    INT(c, NC, "DBSIZE");
    long long now = info_ll(c, "clients", "connected_clients");
    assert_true(now >= base + NC);
    /* a second round in reverse order, with a cross-connection read */
    for (int i = NC - 1; i >= 0; i--) {
        char k[32];
        snprintf(k, sizeof k, "conn:%d", (i + 1) % NC);
        raw_cmd(conns[i], "INCR %s", k);
    }
    for (int i = NC - 1; i >= 0; i--)
        raw_expect(conns[i], "-ERR value is not an integer or out of range\r\n");
    for (int i = 0; i < NC; i++) raw_close(conns[i]);
    free(conns);

    /* the server notices every close */
    long long deadline = h_now_ms() + 10000;
    while (h_now_ms() < deadline && info_ll(c, "clients", "connected_clients") > base)
        h_sleep_ms(50);
    assert_int_equal(info_ll(c, "clients", "connected_clients"), base);
}

int main(void)
{
    h_raise_nofile(4096);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_big_mixed_pipeline, h_flushall),
        cmocka_unit_test_setup(test_mset_atomicity, h_flushall),
        cmocka_unit_test_setup(test_concurrent_incr, h_flushall),
        cmocka_unit_test_setup(test_many_connections, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("pipeline", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
