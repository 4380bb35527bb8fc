/*
 * Hostile clients (issue 15's catalogue), each followed by the same three
 * checks: the server is still up, its RSS (VmRSS) has grown by no more than
 * a fixed ceiling over a baseline taken in the test, and other clients are
 * served. Protocol errors one by one, split frames and disconnects are
 * test_badinput's; output limits and a client that never reads big
 * replies are test_limits'.
 *
 *   - huge claims: multibulk counts of 1048576 and INT_MAX, 512 MB bulks,
 *     then a trickle or nothing, then a disconnect: nothing of the claimed
 *     size is allocated up front;
 *   - garbage: nested arrays, RESP3 types and NUL bytes in requests, very
 *     long inline lines, random bytes: Redis's exact errors, closed after a
 *     protocol error;
 *   - slowloris under `timeout 1`: Redis counts any bytes received as
 *     interaction (lastinteraction in readQueryFromClient), so a client
 *     trickling a command is never idle; it is closed once it stops, and
 *     what a trickler can make the server hold is bounded by the inline and
 *     query-buffer limits, which close it. Subscribers and monitors do
 *     not time out;
 *   - 10,000 connections opened and dropped: connected_clients back to the
 *     baseline;
 *   - 1,000,000 pipelined commands sent while no reply is read: ringkv
 *     pauses the client (ARCHITECTURE §6, the output pause and recv
 *     cancel), so its memory stays bounded, and once the client reads, every
 *     reply is there, in order.
 *
 * Nothing here measures a duration: waits are bounded numbers of polls.
 */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RSS_CEILING_KB (64L * 1024)   /* growth allowed over the test's baseline */
#define POLL_MS 100
#define POLLS 100                     /* polls before a wait counts as failed */

static long rss_baseline(const struct fixture *f)
{
    long kb = server_rss_kb(&f->srv);
    assert_true(kb > 0);
    return kb;
}

static void expect_rss_bounded(const struct fixture *f, long base, const char *what)
{
    long kb = server_rss_kb(&f->srv);
    print_message("%s: server RSS %ld KB -> %ld KB\n", what, base, kb);
    assert_true(kb > 0);
    if (kb - base > RSS_CEILING_KB)
        h_fail("%s: server RSS grew by %ld KB (ceiling %ld KB)", what, kb - base, RSS_CEILING_KB);
}

/* Alive, and a new connection and the fixture's are both served. */
static void expect_served(struct fixture *f)
{
    assert_true(server_alive(&f->srv));
    redisContext *c = h_connect(&f->srv);
    STATUS(c, "PONG", "PING");
    OK(c, "SET health ok");
    BULK(c, "ok", "GET health");
    redisFree(c);
    STATUS(f->c, "PONG", "PING");
}

static void wait_connected_clients(redisContext *c, long long want)
{
    long long n = -1;
    for (int i = 0; i < POLLS; i++) {
        n = info_ll(c, "clients", "connected_clients");
        if (n == want) return;
        h_sleep_ms(POLL_MS);
    }
    h_fail("connected_clients is %lld, expected %lld", n, want);
}

/* Whether the server closed r, polled up to polls times (replies read
 * meanwhile stay in r->buf); others are served between polls when f is
 * given. */
static bool closed_within(struct fixture *f, struct raw *r, int polls)
{
    for (int i = 0; i < polls && !r->eof; i++) {
        raw_fill(r, SIZE_MAX, POLL_MS);
        if (f && !r->eof) expect_served(f);
    }
    return r->eof;
}

/* Exactly these bytes, then the connection closes. */
static void expect_error_close(struct server *s, const void *bytes, size_t len, const char *reply)
{
    struct raw *r = raw_connect(s);
    raw_send(r, bytes, len);
    raw_expect_close(r, reply);
    raw_close(r);
}
#define ERR_CLOSE(s, bytes, reply) expect_error_close((s), (bytes), sizeof(bytes) - 1, (reply))

/* These bytes get exactly this reply, and the connection stays usable. */
static void expect_reply_open(struct server *s, const void *bytes, size_t len,
                              const char *reply, size_t reply_len)
{
    struct raw *r = raw_connect(s);
    raw_send(r, bytes, len);
    raw_expect_(__FILE__, __LINE__, r, reply, reply_len);
    RAW(r, "+PONG\r\n", "PING");
    raw_close(r);
}
#define REPLY_OPEN_N(s, bytes, len, reply) \
    expect_reply_open((s), (bytes), (len), (reply), sizeof(reply) - 1)
#define REPLY_OPEN(s, bytes, reply) \
    expect_reply_open((s), (bytes), sizeof(bytes) - 1, (reply), sizeof(reply) - 1)

/* ------------------------------------------------------------------ */
/* 1. Huge claims                                                        */

#define CLAIMERS 8   /* of each kind */

static void test_huge_claims(void **state)
{
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET proto-max-bulk-len 512mb");
    long long clients0 = info_ll(f->c, "clients", "connected_clients");
    long base = rss_baseline(f);

    static const char *const heads[] = {
        "*1048576\r\n",                                            /* then nothing */
        "*2147483647\r\n",
        "*1048576\r\n$3\r\nSET\r\n$1\r\nk\r\n",                    /* a few arguments */
        "*3\r\n$3\r\nSET\r\n$4\r\nhuge\r\n$536870912\r\n",         /* then a trickle */
        "*2\r\n$4\r\nECHO\r\n$536870912\r\n",
        "*2147483647\r\n$4\r\nECHO\r\n$536870912\r\n",
    };
    enum { KINDS = sizeof heads / sizeof heads[0] };
    struct raw *cl[KINDS * CLAIMERS];
    for (int i = 0; i < KINDS * CLAIMERS; i++) {
        cl[i] = raw_connect(&f->srv);
        raw_sends(cl[i], heads[i % KINDS]);
    }
    /* the multibulk claimers add arguments, the bulk claimers bytes, a
     * round at a time, while others are served */
    const size_t chunk = 16384;
    char *bytes = malloc(chunk);
    memset(bytes, 'z', chunk);
    const char arg[] = "$1\r\nx\r\n";
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < KINDS * CLAIMERS; i++) {
            int kind = i % KINDS;
            if (kind == 0) continue;
            if (kind == 1 || kind == 2) {
                for (int k = 0; k < 20; k++) raw_sends(cl[i], arg);
            } else {
                raw_send(cl[i], bytes, chunk);
            }
        }
        expect_served(f);
        h_sleep_ms(20);
    }
    free(bytes);
    /* every claimer is still there (all within the limits), none answered */
    assert_int_equal(info_ll(f->c, "clients", "connected_clients"), clients0 + KINDS * CLAIMERS);
    for (int i = 0; i < KINDS * CLAIMERS; i++) {
        raw_fill(cl[i], 1, 0);
        assert_false(cl[i]->eof);
        assert_int_equal(cl[i]->len - cl[i]->pos, 0);
    }
    /* 24 clients claimed 512 MB each: none of it was allocated */
    expect_rss_bounded(f, base, "huge claims");
    if (!h_redis_mode()) {
        /* CLIENT LIST's qbuf and qbuf-free: what each holds for its input */
        redisReply *r = cmd(f->c, "CLIENT LIST");
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        long long held = 0;
        for (const char *p = r->str; (p = strstr(p, " qbuf=")) != NULL; p++) {
            long long q = atoll(p + 6), fr = 0;
            const char *q2 = strstr(p, " qbuf-free=");
            if (q2) fr = atoll(q2 + 11);
            held += q + fr;
        }
        freeReplyObject(r);
        print_message("huge claims: qbuf + qbuf-free over all clients %lld bytes\n", held);
        if (held > 64LL << 20) h_fail("the claimers' query buffers hold %lld bytes", held);
    }
    /* then they all go, half with a reset */
    for (int i = 0; i < KINDS * CLAIMERS; i++) {
        if (i & 1) raw_abort(cl[i]); else raw_close(cl[i]);
    }
    wait_connected_clients(f->c, clients0);
    expect_served(f);
    NIL(f->c, "GET huge");
    NIL(f->c, "GET k");
    expect_rss_bounded(f, base, "huge claims, after the disconnects");
    OK(f->c, "CONFIG SET proto-max-bulk-len 1mb");
}

/* ------------------------------------------------------------------ */
/* 2. Garbage                                                            */

static void test_nested_and_resp3_types(void **state)
{
    struct fixture *f = FIX(state);
    struct server *s = &f->srv;
    long base = rss_baseline(f);
    /* arrays inside arrays, at any depth */
    ERR_CLOSE(s, "*1\r\n*1\r\n*1\r\n$4\r\nPING\r\n", "-ERR Protocol error: expected '$', got '*'\r\n");
    ERR_CLOSE(s, "*2\r\n$4\r\nECHO\r\n*2\r\n*2\r\n$1\r\na\r\n", "-ERR Protocol error: expected '$', got '*'\r\n");
    ERR_CLOSE(s, "*2147483647\r\n$4\r\nPING\r\n*\r\n", "-ERR Protocol error: expected '$', got '*'\r\n");
    ERR_CLOSE(s, "*1048576\r\n$4\r\nPING\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    ERR_CLOSE(s, "*\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    ERR_CLOSE(s, "*1\r\n$\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    ERR_CLOSE(s, "*1\r\n$2147483648\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    /* RESP3 types where a bulk belongs */
    const char types[] = "%~>_#,(=|!:+-";
    for (const char *t = types; *t; t++) {
        char req[64], rep[64];
        int n = snprintf(req, sizeof req, "*2\r\n$4\r\nECHO\r\n%c1\r\n", *t);
        snprintf(rep, sizeof rep, "-ERR Protocol error: expected '$', got '%c'\r\n", *t);
        expect_error_close(s, req, (size_t)n, rep);
    }
    /* and as a request of their own they are inline commands */
    REPLY_OPEN(s, "%1\r\n$1\r\na\r\n",
               "-ERR unknown command '%1', with args beginning with: \r\n"
               "-ERR unknown command '$1', with args beginning with: \r\n"
               "-ERR unknown command 'a', with args beginning with: \r\n");
    REPLY_OPEN(s, "_\r\n", "-ERR unknown command '_', with args beginning with: \r\n");
    REPLY_OPEN(s, ">1\r\n", "-ERR unknown command '>1', with args beginning with: \r\n");
    REPLY_OPEN(s, "#t\r\n", "-ERR unknown command '#t', with args beginning with: \r\n");
    /* an empty name, and what trails a bulk's announced length */
    REPLY_OPEN(s, "*1\r\n$0\r\n\r\n", "-ERR unknown command '', with args beginning with: \r\n");
    REPLY_OPEN(s, "*2\r\n$4\r\nECHO\r\n$3\r\nabc\n\n", "$3\r\nabc\r\n");
    expect_rss_bounded(f, base, "nested and RESP3 requests");
    expect_served(f);
}

static void test_nul_bytes(void **state)
{
    struct fixture *f = FIX(state);
    struct server *s = &f->srv;
    long base = rss_baseline(f);
    /* inside a bulk a NUL is data */
    REPLY_OPEN(s, "*2\r\n$4\r\nECHO\r\n$3\r\na\0b\r\n", "$3\r\na\0b\r\n");
    REPLY_OPEN(s, "*3\r\n$3\r\nSET\r\n$3\r\nn\0l\r\n$3\r\n\0\0\0\r\n*2\r\n$3\r\nGET\r\n$3\r\nn\0l\r\n",
               "+OK\r\n$3\r\n\0\0\0\r\n");
    /* Redis looks for a line's end with strchr: a NUL hides it, and the
     * line then grows to the inline limit */
    size_t fill = 70000;
    static const char *const heads[] = {
        "PI\0NG\r\nPING\r\n", "*1\0\r\n$4\r\nPING\r\n", "*1\r\n$4\0\r\nPING\r\n", "SET k \0\0\0\r\n",
    };
    static const size_t head_len[] = { 13, 15, 15, 12 };
    static const char *const replies[] = {
        "-ERR Protocol error: too big inline request\r\n",
        "-ERR Protocol error: too big mbulk count string\r\n",
        "-ERR Protocol error: too big bulk count string\r\n",
        "-ERR Protocol error: too big inline request\r\n",
    };
    for (int i = 0; i < 4; i++) {
        /* nothing answered while the NUL hides the line end */
        struct raw *r = raw_connect(s);
        raw_send(r, heads[i], head_len[i]);
        raw_fill(r, 1, POLL_MS);
        assert_false(r->eof);
        assert_int_equal(r->len - r->pos, 0);
        char *more = malloc(fill);
        memset(more, 'x', fill);
        raw_send(r, more, fill);
        free(more);
        raw_expect_close(r, replies[i]);
        raw_close(r);
    }
    expect_rss_bounded(f, base, "NUL bytes");
    expect_served(f);
    NIL(f->c, "GET k");
}

/* "name a a a ... a\r\n" with nargs a's (malloc'd, length in *len) */
static char *inline_args(const char *name, size_t nargs, size_t *len)
{
    size_t nl = strlen(name), n = 0;
    char *line = malloc(nl + 2 * nargs + 2);
    memcpy(line, name, nl);
    n = nl;
    for (size_t i = 0; i < nargs; i++) { line[n++] = ' '; line[n++] = 'a'; }
    line[n++] = '\r';
    line[n++] = '\n';
    *len = n;
    return line;
}

static void test_long_inline_lines(void **state)
{
    struct fixture *f = FIX(state);
    struct server *s = &f->srv;
    /* 30,000 arguments on one inline line, under the 64 KB limit: RPUSH
     * stores every one (before the baseline: the list is data, and under
     * ASan its growth costs far more than the line) */
    size_t n;
    char *line = inline_args("RPUSH", 30000, &n);
    REPLY_OPEN_N(s, line, n, ":29999\r\n");
    free(line);
    INT(f->c, 29999, "LLEN a");
    long base = rss_baseline(f);
    line = inline_args("ECHO", 30000, &n);
    REPLY_OPEN_N(s, line, n, "-ERR wrong number of arguments for 'echo' command\r\n");
    free(line);
    /* a 200 KB line, its end at the end: past the limit before the end
     * arrives, so refused and closed (Redis may reset the connection after
     * its error, with the rest of the line unread) */
    size_t big = 200000;
    char *b = malloc(big + 2);
    memcpy(b, "ECHO ", 5);
    memset(b + 5, 'a', big - 5);
    memcpy(b + big, "\r\n", 2);
    struct raw *r = raw_connect(s);
    raw_send_some(r, b, big + 2, 2000);
    free(b);
    assert_true(closed_within(NULL, r, POLLS));
    const char err[] = "-ERR Protocol error: too big inline request\r\n";
    size_t got = r->len - r->pos;
    if (got != sizeof err - 1 && !(h_redis_mode() && got == 0))
        h_fail("a 200 KB inline line got %zu bytes back", got);
    if (got) assert_memory_equal(r->buf + r->pos, err, sizeof err - 1);
    raw_close(r);
    expect_rss_bounded(f, base, "long inline lines");
    expect_served(f);
}

/* xorshift64: the same bytes on every run */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

#define GARBAGE_CONNS 200
#define GARBAGE_BATCH 50

static void test_random_bytes(void **state)
{
    struct fixture *f = FIX(state);
    long base = rss_baseline(f);
    long long clients0 = info_ll(f->c, "clients", "connected_clients");
    /* random bytes, often led by a RESP type byte or broken by CR/LF, so
     * every parser state sees garbage */
    static const char leads[] = "*$%~>_#,(=|!:+-\r\n";
    char buf[4096];
    size_t replies = 0, closes = 0;
    for (int batch = 0; batch < GARBAGE_CONNS / GARBAGE_BATCH; batch++) {
        struct raw *r[GARBAGE_BATCH];
        for (int i = 0; i < GARBAGE_BATCH; i++) {
            size_t n = 1 + rnd() % sizeof buf;
            for (size_t k = 0; k < n; k++) {
                uint64_t x = rnd();
                buf[k] = (x & 7) == 0 ? leads[(x >> 8) % (sizeof leads - 1)] : (char)(x >> 16);
            }
            r[i] = raw_connect(&f->srv);
            raw_send_some(r[i], buf, n, 2000);
        }
        for (int i = 0; i < GARBAGE_BATCH; i++) {
            raw_fill(r[i], SIZE_MAX, 0);
            replies += r[i]->len;
            closes += r[i]->eof;
            if (i & 1) raw_abort(r[i]); else raw_close(r[i]);
        }
        expect_served(f);
    }
    print_message("random bytes: %zu reply bytes, %zu closed by the server before the end\n",
                  replies, closes);
    wait_connected_clients(f->c, clients0);
    expect_rss_bounded(f, base, "random bytes");
    expect_served(f);
}

/* ------------------------------------------------------------------ */
/* 3. Slowloris under `timeout 1`                                        */

/* Send the bytes one at a time, POLL_MS apart, while another client is
 * served between them. Returns false if the server closed r meanwhile. */
static bool trickle(struct fixture *f, struct raw *r, const char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (raw_send_some(r, bytes + i, 1, 2000) != 1) return false;
        h_sleep_ms(POLL_MS);
        expect_served(f);
    }
    raw_fill(r, SIZE_MAX, 0);
    return !r->eof;
}

static void test_slowloris(void **state)
{
    struct fixture *f = FIX(state);
    long base = rss_baseline(f);
    OK(f->c, "CONFIG SET proto-max-bulk-len 512mb");
    OK(f->c, "CONFIG SET timeout 1");   /* f->c, served between all steps, stays active */
    /* a subscriber and a monitor: never timed out (Redis's
     * clientsCronHandleTimeout) */
    struct raw *sub = raw_connect(&f->srv);
    RAW(sub, "*3\r\n$9\r\nsubscribe\r\n$4\r\nidle\r\n:1\r\n", "SUBSCRIBE idle");
    struct raw *mon = raw_connect(&f->srv);
    RAW(mon, "+OK\r\n", "MONITOR");
    /* the timeout is on: an idle client goes */
    struct raw *idle = raw_connect(&f->srv);
    RAW(idle, "+PONG\r\n", "PING");
    assert_true(closed_within(f, idle, POLLS));
    assert_int_equal(idle->len - idle->pos, 0);
    raw_close(idle);

    /* a command one byte at a time: every byte is an interaction, so the
     * client is not idle and its command runs */
    struct raw *slow = raw_connect(&f->srv);
    const char cmd1[] = "*2\r\n$4\r\nECHO\r\n$4\r\nslow\r\n";
    assert_true(trickle(f, slow, cmd1, sizeof cmd1 - 1));
    raw_expect(slow, "$4\r\nslow\r\n");
    /* half of another, then silence: idle, closed, nothing run */
    const char cmd2[] = "*3\r\n$3\r\nSET\r\n$4\r\nslow\r\n$1\r\n1\r\n";
    assert_true(trickle(f, slow, cmd2, 16));
    assert_true(closed_within(f, slow, POLLS));
    assert_int_equal(slow->len - slow->pos, 0);
    raw_close(slow);

    /* what a trickler that never ends a line or a bulk makes the server
     * hold is bounded: the inline limit (64 KB) and the query buffer limit
     * close it, and both are reached by a client that is never idle */
    redisContext *c = h_connect(&f->srv);
    OK(c, "CONFIG SET client-query-buffer-limit 1mb");
    redisFree(c);
    char chunk[16384];
    memset(chunk, 'w', sizeof chunk);
    struct raw *line = raw_connect(&f->srv);
    struct raw *bulk = raw_connect(&f->srv);
    raw_sends(bulk, "*3\r\n$3\r\nSET\r\n$4\r\nslow\r\n$104857600\r\n");
    int rounds = 0;
    for (; rounds < 200 && !(line->eof && bulk->eof); rounds++) {
        if (!line->eof) raw_send_some(line, chunk, 1024, 0);
        if (!bulk->eof) raw_send_some(bulk, chunk, sizeof chunk, 0);
        h_sleep_ms(POLL_MS / 4);
        raw_fill(line, SIZE_MAX, 0);
        raw_fill(bulk, SIZE_MAX, 0);
        if (rounds % 10 == 0) expect_served(f);
    }
    print_message("slowloris: line and bulk tricklers closed after %d rounds\n", rounds);
    assert_true(line->eof && bulk->eof);
    raw_expect(line, "-ERR Protocol error: too big inline request\r\n");
    assert_int_equal(bulk->len - bulk->pos, 0);
    raw_close(line);
    raw_close(bulk);

    /* the subscriber and the monitor, idle all along, are still there */
    RAW(sub, "*2\r\n$4\r\npong\r\n$0\r\n\r\n", "PING");
    raw_close(sub);
    raw_fill(mon, SIZE_MAX, 0);   /* the lines of the commands run meanwhile */
    assert_false(mon->eof);
    assert_true(mon->len > mon->pos);
    raw_close(mon);

    OK(f->c, "CONFIG SET timeout 0");
    OK(f->c, "CONFIG SET client-query-buffer-limit 1gb");
    OK(f->c, "CONFIG SET proto-max-bulk-len 1mb");
    NIL(f->c, "GET slow");
    expect_rss_bounded(f, base, "slowloris");
    expect_served(f);
}

/* Whatever happened, the next tests run without the timeout. */
static int slowloris_teardown(void **state)
{
    struct fixture *f = FIX(state);
    if (f->broken || !server_alive(&f->srv)) return 0;
    redisContext *c = h_connect(&f->srv);
    redisReply *r = redisCommand(c, "CONFIG SET timeout 0 client-query-buffer-limit 1gb proto-max-bulk-len 1mb");
    if (r) freeReplyObject(r);
    redisFree(c);
    return 0;
}

/* ------------------------------------------------------------------ */
/* 4. Connection churn                                                   */

#define CHURN_TOTAL 10000
#define CHURN_BATCH 500

static void test_connection_churn(void **state)
{
    struct fixture *f = FIX(state);
    assert_true(h_raise_nofile(CHURN_BATCH + 256) >= CHURN_BATCH + 64);
    long base = rss_baseline(f);
    long long clients0 = info_ll(f->c, "clients", "connected_clients");
    static const char *const sends[] = {
        NULL,                                   /* nothing */
        "*3\r\n$3\r\nSET\r\n$5\r\nchurn\r\n",   /* half a command */
        "*1\r\n$4\r\nPING\r\n",                 /* a whole one, reply unread */
        "*1048576\r\n",                         /* a huge claim */
        "INCR churned\r\n",                     /* a counted one */
        "SET churn",                            /* half an inline one */
    };
    enum { KINDS = sizeof sends / sizeof sends[0] };
    struct raw *r[CHURN_BATCH];
    long long incrs = 0;
    for (int done = 0; done < CHURN_TOTAL; done += CHURN_BATCH) {
        for (int i = 0; i < CHURN_BATCH; i++) {
            r[i] = raw_connect(&f->srv);
            const char *s = sends[(done + i) % KINDS];
            if (s) raw_sends(r[i], s);
            if (s == sends[4]) incrs++;
        }
        for (int i = 0; i < CHURN_BATCH; i++) {
            if ((done + i) % 3 == 0) raw_abort(r[i]); else raw_close(r[i]);
        }
        STATUS(f->c, "PONG", "PING");
    }
    wait_connected_clients(f->c, clients0);
    expect_rss_bounded(f, base, "10,000 connections");
    expect_served(f);
    NIL(f->c, "GET churn");
    /* an INCR sent before the close may or may not have run, never twice */
    redisReply *rep = cmd(f->c, "GET churned");
    long long v = rep->type == REDIS_REPLY_STRING ? atoll(rep->str) : 0;
    freeReplyObject(rep);
    print_message("10,000 connections: %lld of %lld INCRs ran\n", v, incrs);
    assert_true(v >= 0 && v <= incrs);
    long long accepted = info_ll(f->c, "stats", "total_connections_received");
    assert_true(accepted >= CHURN_TOTAL);
}

/* ------------------------------------------------------------------ */
/* 5. A million pipelined commands, replies unread                       */

#define PIPE_COMMANDS 1000000
#define PIPE_VALUE 200
#define PIPE_KEY_PAD 64

/* Parse the replies in r: INCR's :n and GET's bulk, alternating. Returns
 * how many complete replies were consumed; fails on anything else. */
static size_t consume_replies(struct raw *r, size_t done, const char *value)
{
    size_t n = 0;
    for (;;) {
        const char *p = r->buf + r->pos, *end = r->buf + r->len;
        if (p == end) break;
        size_t k = done + n;
        if (k % 2 == 0) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) break;
            char want[32];
            int wl = snprintf(want, sizeof want, ":%zu\r\n", k / 2 + 1);
            if (nl + 1 - p != wl || memcmp(p, want, (size_t)wl) != 0) {
                char *e = h_escape(p, (size_t)(nl + 1 - p));
                h_fail("reply %zu is \"%s\", expected \"%s\"", k, e, want);
            }
            r->pos += (size_t)wl;
        } else {
            char hdr[32];
            int hl = snprintf(hdr, sizeof hdr, "$%d\r\n", PIPE_VALUE);
            size_t need = (size_t)hl + PIPE_VALUE + 2;
            if ((size_t)(end - p) < need) break;
            if (memcmp(p, hdr, (size_t)hl) != 0 || memcmp(p + hl, value, PIPE_VALUE) != 0 ||
                memcmp(p + hl + PIPE_VALUE, "\r\n", 2) != 0) {
                char *e = h_escape(p, 40);
                h_fail("reply %zu is \"%s...\", expected the value", k, e);
            }
            r->pos += need;
        }
        n++;
    }
    return n;
}

static void test_pipeline_never_reads(void **state)
{
    struct fixture *f = FIX(state);
    char value[PIPE_VALUE];
    for (int i = 0; i < PIPE_VALUE; i++) value[i] = (char)('a' + i % 26);
    /* the counter and the value on different shards with two threads;
     * long names (the hash tag keeps the slot) make a request as big as a
     * reply, so input held without bound would pass the RSS ceiling */
    char a[32], b[32], kn[128], kv[128];
    h_two_shard_keys("pipe", a, b);
    snprintf(kn, sizeof kn, "{%s}%0*d", a, PIPE_KEY_PAD, 0);
    snprintf(kv, sizeof kv, "{%s}%0*d", b, PIPE_KEY_PAD, 0);
    expect_ok(cmd(f->c, "SET %s %b", kv, value, (size_t)PIPE_VALUE));
    long base = rss_baseline(f);

    char *one[2];
    int len[2];
    len[0] = redisFormatCommand(&one[0], "INCR %s", kn);
    len[1] = redisFormatCommand(&one[1], "GET %s", kv);
    assert_true(len[0] > 0 && len[1] > 0);
    size_t total = 0;
    for (int i = 0; i < 2; i++) total += (size_t)len[i] * (PIPE_COMMANDS / 2);
    char *req = malloc(total);
    for (size_t i = 0, off = 0; i < PIPE_COMMANDS; i++) {
        memcpy(req + off, one[i & 1], (size_t)len[i & 1]);
        off += (size_t)len[i & 1];
    }
    free(one[0]);
    free(one[1]);

    /* send, reading nothing, until the socket stays full (the server has
     * stopped reading) or everything is sent */
    struct raw *r = raw_connect(&f->srv);
    size_t sent = 0;
    for (int stuck = 0, i = 0; i < 10000 && sent < total && stuck < 5; i++) {
        size_t k = raw_send_some(r, req + sent, total - sent, POLL_MS * 2);
        sent += k;
        stuck = k ? 0 : stuck + 1;
    }
    print_message("pipeline, replies unread: sent %zu of %zu request bytes\n", sent, total);
    /* the others are served, the server's memory is bounded (on ringkv:
     * Redis keeps running the commands and holds their replies) */
    expect_served(f);
    long rss = server_rss_kb(&f->srv);
    print_message("pipeline, replies unread: server RSS %ld KB -> %ld KB\n", base, rss);
    if (!h_redis_mode()) expect_rss_bounded(f, base, "pipeline, replies unread");

    /* now read: every reply, in order, while the rest is sent */
    size_t got = 0;
    int idle = 0;
    while (got < PIPE_COMMANDS && idle < POLLS) {
        if (sent < total) sent += raw_send_some(r, req + sent, total - sent, 0);
        if (r->pos > 0 && r->pos == r->len) r->pos = r->len = 0;
        size_t before = r->len - r->pos;
        raw_fill(r, before + 1, POLL_MS);
        size_t n = consume_replies(r, got, value);
        got += n;
        idle = (n || r->len - r->pos > before) ? 0 : idle + 1;
        if (r->eof) break;
    }
    print_message("pipeline, replies unread: %zu replies read in order%s\n", got,
                  r->eof ? ", then the server closed the connection" : "");
    assert_int_equal(got, PIPE_COMMANDS);
    assert_int_equal(r->len - r->pos, 0);
    free(req);
    raw_close(r);
    if (!h_redis_mode()) expect_rss_bounded(f, base, "pipeline, after the replies");
    expect_served(f);
    BULK(f->c, "500000", "GET %s", kn);
}

static int setup_hostile(void **state)
{
    static const char *const args[] = { "--proto-max-bulk-len", "1048576", NULL };
    return h_group_setup_args(state, args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_huge_claims, h_flushall),
        cmocka_unit_test_setup(test_nested_and_resp3_types, h_flushall),
        cmocka_unit_test_setup(test_nul_bytes, h_flushall),
        cmocka_unit_test_setup(test_long_inline_lines, h_flushall),
        cmocka_unit_test_setup(test_random_bytes, h_flushall),
        cmocka_unit_test_setup_teardown(test_slowloris, h_flushall, slowloris_teardown),
        cmocka_unit_test_setup(test_connection_churn, h_flushall),
        cmocka_unit_test_setup(test_pipeline_never_reads, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("hostile", tests, setup_hostile, h_group_teardown);
    return rc + h_failures();
}
