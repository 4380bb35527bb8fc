/*
 * Hostile and broken clients: protocol errors (exact reply, then the
 * connection closes), limits, frames split anywhere, clients vanishing
 * mid-frame or mid-pipeline, --maxclients, and the limits that apply
 * before AUTH. A client that never reads is test_limits'; issue 15's
 * hostile clients (huge claims, garbage, slowloris, connection churn, a
 * million pipelined commands unread) are test_hostile's.
 */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BULK_LIMIT 1048576   /* --proto-max-bulk-len of the main group (Redis' minimum) */

static void expect_protocol_error(struct server *s, const char *bytes, size_t len, const char *reply)
{
    struct raw *r = raw_connect(s);
    raw_send(r, bytes, len);
    raw_expect_close(r, reply);
    raw_close(r);
}
#define PROTO_ERR(s, bytes, reply) expect_protocol_error((s), (bytes), sizeof(bytes) - 1, (reply))

static void server_healthy(struct fixture *f)
{
    assert_true(server_alive(&f->srv));
    redisContext *c = h_connect(&f->srv);
    STATUS(c, "PONG", "PING");
    OK(c, "SET health ok");
    BULK(c, "ok", "GET health");
    redisFree(c);
}

static void test_protocol_errors(void **state)
{
    struct server *s = &FIX(state)->srv;
    PROTO_ERR(s, "*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    PROTO_ERR(s, "*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    PROTO_ERR(s, "*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    PROTO_ERR(s, "*1\r\n$ 4\r\nPING\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    PROTO_ERR(s, "*1\r\n$99999999999999999999\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    PROTO_ERR(s, "*1\r\n$1048577\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    PROTO_ERR(s, "*2\r\n$4\r\nECHO\r\n$536870913\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    PROTO_ERR(s, "*3000000000\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    PROTO_ERR(s, "*99999999999999999999\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    PROTO_ERR(s, "*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    PROTO_ERR(s, "*+1\r\n$4\r\nPING\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    PROTO_ERR(s, "*1\r\nx\r\n", "-ERR Protocol error: expected '$', got 'x'\r\n");
    PROTO_ERR(s, "*1\r\n:1\r\n", "-ERR Protocol error: expected '$', got ':'\r\n");
    PROTO_ERR(s, "*2\r\n$4\r\nECHO\r\n*1\r\n", "-ERR Protocol error: expected '$', got '*'\r\n");
    PROTO_ERR(s, "SET \"a b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n");
    PROTO_ERR(s, "SET 'a\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n");
    PROTO_ERR(s, "SET \"a\"b c\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n");
    /* replies to the commands before the bad one are sent first */
    PROTO_ERR(s, "PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$-2\r\n",
              "+PONG\r\n+PONG\r\n-ERR Protocol error: invalid bulk length\r\n");

    /* oversized lines without a newline */
    size_t n = 70000;
    char *big = malloc(n + 8);
    memset(big, 'a', n);
    expect_protocol_error(s, big, n, "-ERR Protocol error: too big inline request\r\n");
    big[0] = '*';
    memset(big + 1, '1', n - 1);
    expect_protocol_error(s, big, n, "-ERR Protocol error: too big mbulk count string\r\n");
    memcpy(big, "*1\r\n$", 5);
    expect_protocol_error(s, big, n, "-ERR Protocol error: too big bulk count string\r\n");
    free(big);
    server_healthy(FIX(state));
}

static void test_tolerated_input(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    /* empty and negative multibulk counts are skipped */
    raw_sends(r, "*-5\r\nPING\r\n");
    raw_expect(r, "+PONG\r\n");
    raw_sends(r, "*0\r\n*1\r\n$4\r\nPING\r\n");
    raw_expect(r, "+PONG\r\n");
    /* garbage on an inline line is just an unknown command */
    raw_sends(r, "\xff\xfe junk\r\n");
    raw_expect(r, "-ERR unknown command '\xff\xfe', with args beginning with: 'junk' \r\n");
    raw_sends(r, "$4\r\nPING\r\n");
    raw_expect(r, "-ERR unknown command '$4', with args beginning with: \r\n+PONG\r\n");
    /* inline quoting */
    raw_sends(r, "ECHO \"a\\x41\\n\\t\"\r\n");
    raw_expect(r, "$4\r\naA\n\t\r\n");
    raw_sends(r, "ECHO 'it''s'\r\n");
    raw_expect(r, "-ERR Protocol error: unbalanced quotes in request\r\n");
    raw_close(r);

    r = raw_connect(&FIX(state)->srv);
    raw_sends(r, "SET   spaced    \"x y\"  \r\nGET spaced\r\n");
    raw_expect(r, "+OK\r\n$3\r\nx y\r\n");
    /* an inline command just under the limit */
    size_t n = 60000;
    char *line = malloc(n + 16);
    memcpy(line, "ECHO ", 5);
    memset(line + 5, 'b', n);
    memcpy(line + 5 + n, "\r\n", 2);
    raw_send(r, line, n + 7);
    char hdr[32];
    snprintf(hdr, sizeof hdr, "$%zu\r\n", n);
    raw_expect(r, hdr);
    line[5 + n] = 0;
    raw_expect(r, line + 5);
    raw_expect(r, "\r\n");
    free(line);
    /* a bulk of exactly proto-max-bulk-len is accepted */
    size_t blen = BULK_LIMIT;
    char *cmdbuf = malloc(blen + 64);
    int h = sprintf(cmdbuf, "*2\r\n$4\r\nECHO\r\n$%zu\r\n", blen);
    memset(cmdbuf + h, 'c', blen);
    memcpy(cmdbuf + h + blen, "\r\n", 2);
    raw_send(r, cmdbuf, (size_t)h + blen + 2);
    snprintf(hdr, sizeof hdr, "$%zu\r\n", blen);
    raw_expect(r, hdr);
    size_t have = raw_fill(r, blen + 2, 20000);
    assert_true(have >= blen + 2);
    for (size_t i = 0; i < blen; i++)
        if (r->buf[r->pos + i] != 'c') h_fail("byte %zu of the echoed bulk differs", i);
    r->pos += blen;
    raw_expect(r, "\r\n");
    free(cmdbuf);
    raw_close(r);
}

static void test_split_frames(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    /* one byte at a time */
    const char *frame = "*3\r\n$3\r\nSET\r\n$5\r\nsplit\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$5\r\nsplit\r\n";
    for (const char *p = frame; *p; p++) {
        raw_send(r, p, 1);
        if ((p - frame) % 4 == 0) h_sleep_ms(1);
    }
    raw_expect(r, "+OK\r\n$5\r\nvalue\r\n");
    raw_sends(r, "PI");
    h_sleep_ms(20);
    raw_sends(r, "NG\r");
    h_sleep_ms(20);
    raw_sends(r, "\n");
    raw_expect(r, "+PONG\r\n");

    /* a large value in irregular chunks, and several commands per chunk */
    size_t n = 300000;
    char *val = malloc(n);
    for (size_t i = 0; i < n; i++) val[i] = (char)('A' + (i * 31) % 57);
    char *buf = malloc(n + 256);
    size_t len = (size_t)sprintf(buf, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%zu\r\n", n);
    memcpy(buf + len, val, n);
    len += n;
    len += (size_t)sprintf(buf + len, "\r\n*2\r\n$6\r\nSTRLEN\r\n$3\r\nbig\r\n*1\r\n$4\r\nPING\r\n");
    size_t off = 0, step = 1;
    while (off < len) {
        size_t k = step % 7001 + 1;
        if (k > len - off) k = len - off;
        raw_send(r, buf + off, k);
        off += k;
        step = step * 13 + 7;
        if (step % 5 == 0) h_sleep_ms(1);
    }
    char e[64];
    snprintf(e, sizeof e, "+OK\r\n:%zu\r\n+PONG\r\n", n);
    raw_expect(r, e);
    raw_close(r);
    expect_bulk_len(cmd(FIX(state)->c, "GET big"), val, n);
    free(val);
    free(buf);
}

static void test_disconnect_mid_frame(void **state)
{
    struct fixture *f = FIX(state);
    const char *partials[] = {
        "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$10\r\nabc",
        "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$10",
        "*3\r\n$3\r\nSET\r\n",
        "*3\r",
        "SET a inline-without-newline",
    };
    for (int abort = 0; abort < 2; abort++)
        for (size_t i = 0; i < sizeof partials / sizeof partials[0]; i++) {
            struct raw *r = raw_connect(&f->srv);
            raw_sends(r, partials[i]);
            h_sleep_ms(5);
            if (abort) raw_abort(r); else raw_close(r);
        }
    /* a big bulk announced, half sent */
    struct raw *r = raw_connect(&f->srv);
    char hdr[64];
    snprintf(hdr, sizeof hdr, "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$%d\r\n", BULK_LIMIT);
    raw_sends(r, hdr);
    char *half = calloc(1, BULK_LIMIT / 2);
    raw_send(r, half, BULK_LIMIT / 2);
    free(half);
    raw_abort(r);
    h_sleep_ms(50);
    server_healthy(f);
    NIL(f->c, "GET a");
}

static void test_disconnect_mid_pipeline(void **state)
{
    struct fixture *f = FIX(state);
    const char one[] = "*2\r\n$4\r\nINCR\r\n$7\r\ncounter\r\n";
    size_t n = 20000, len = sizeof one - 1;
    char *buf = malloc(n * len);
    for (size_t i = 0; i < n; i++) memcpy(buf + i * len, one, len);
    for (int abort = 0; abort < 2; abort++) {
        struct raw *r = raw_connect(&f->srv);
        size_t sent = raw_send_some(r, buf, n * len, 2000);
        assert_true(sent > 0);
        if (abort) raw_abort(r); else raw_close(r);
    }
    free(buf);
    h_sleep_ms(100);
    server_healthy(f);
    /* every command that was executed, was executed once */
    redisReply *rep = cmd(f->c, "GET counter");
    assert_int_equal(rep->type, REDIS_REPLY_STRING);
    long long v = atoll(rep->str);
    assert_true(v >= 1 && v <= 2 * (long long)n);
    freeReplyObject(rep);
}

/* ------------------------------------------------------------------ */
/* --maxclients                                                          */

static int setup_maxclients(void **state)
{
    static const char *const args[] = { "--maxclients", "10", NULL };
    return h_group_setup_args(state, args);
}

static void wait_clients(redisContext *c, long long want)
{
    long long deadline = h_now_ms() + 5000, n = -1;
    while (h_now_ms() < deadline) {
        n = info_ll(c, "clients", "connected_clients");
        if (n == want) return;
        h_sleep_ms(20);
    }
    h_fail("connected_clients is %lld, expected %lld", n, want);
}

static void test_maxclients(void **state)
{
    struct fixture *f = FIX(state);
    wait_clients(f->c, 1);   /* the fixture's connection */
    struct raw *conns[9];
    for (int i = 0; i < 9; i++) {
        conns[i] = raw_connect(&f->srv);
        RAW(conns[i], "+PONG\r\n", "PING");
    }
    struct raw *over = raw_connect(&f->srv);
    raw_expect_close(over, "-ERR max number of clients reached\r\n");
    raw_close(over);
    /* the ten are unaffected */
    for (int i = 0; i < 9; i++) RAW(conns[i], "+PONG\r\n", "PING");
    STATUS(f->c, "PONG", "PING");
    /* room again after one leaves */
    raw_close(conns[0]);
    wait_clients(f->c, 9);
    conns[0] = raw_connect(&f->srv);
    RAW(conns[0], "+PONG\r\n", "PING");
    over = raw_connect(&f->srv);
    raw_expect_close(over, "-ERR max number of clients reached\r\n");
    raw_close(over);
    for (int i = 0; i < 9; i++) raw_close(conns[i]);
    wait_clients(f->c, 1);
    /* CONFIG SET maxclients applies at once */
    OK(f->c, "CONFIG SET maxclients 2");
    struct raw *a = raw_connect(&f->srv);
    RAW(a, "+PONG\r\n", "PING");
    over = raw_connect(&f->srv);
    raw_expect_close(over, "-ERR max number of clients reached\r\n");
    raw_close(over);
    raw_close(a);
    OK(f->c, "CONFIG SET maxclients 10");
}

/* ------------------------------------------------------------------ */
/* --requirepass: limits before AUTH                                     */

static int setup_auth(void **state)
{
    static const char *const args[] = { "--requirepass", "pw", NULL };
    return h_group_setup_args(state, args);
}

static void test_unauthenticated_limits(void **state)
{
    struct server *s = &FIX(state)->srv;
    struct raw *r = raw_connect(s);
    RAW(r, "-NOAUTH Authentication required.\r\n", "GET a");
    RAW(r, "-NOAUTH Authentication required.\r\n", "SET a 1");
    raw_sends(r, "GET a\r\n");
    raw_expect(r, "-NOAUTH Authentication required.\r\n");
    /* up to 10 arguments are parsed, the command then refused */
    RAW(r, "-NOAUTH Authentication required.\r\n", "MSET a 1 b 2 c 3 d 4 e");
    raw_close(r);
    PROTO_ERR(s, "*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n");
    PROTO_ERR(s, "*2\r\n$4\r\nECHO\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n");
    /* 16384 is still fine */
    r = raw_connect(s);
    char *buf = malloc(16384 + 64);
    int h = sprintf(buf, "*2\r\n$4\r\nECHO\r\n$16384\r\n");
    memset(buf + h, 'q', 16384);
    memcpy(buf + h + 16384, "\r\n", 2);
    raw_send(r, buf, (size_t)h + 16386);
    raw_expect(r, "-NOAUTH Authentication required.\r\n");
    /* after AUTH the limits are the normal ones */
    RAW(r, "+OK\r\n", "AUTH pw");
    RAW(r, "+OK\r\n", "MSET a 1 b 2 c 3 d 4 e 5 f 6");
    raw_send(r, buf, (size_t)h + 16386);
    raw_expect(r, "$16384\r\n");
    raw_fill(r, 16386, 10000);
    assert_true(r->len - r->pos >= 16386);
    r->pos += 16386;
    RAW(r, "+PONG\r\n", "PING");
    free(buf);
    raw_close(r);
}

static int setup_main(void **state)
{
    static const char *const args[] = { "--proto-max-bulk-len", "1048576", NULL };
    return h_group_setup_args(state, args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_protocol_errors, h_flushall),
        cmocka_unit_test_setup(test_tolerated_input, h_flushall),
        cmocka_unit_test_setup(test_split_frames, h_flushall),
        cmocka_unit_test_setup(test_disconnect_mid_frame, h_flushall),
        cmocka_unit_test_setup(test_disconnect_mid_pipeline, h_flushall),
    };
    const struct CMUnitTest maxclients_tests[] = {
        cmocka_unit_test_setup(test_maxclients, h_noop_setup),
    };
    const struct CMUnitTest auth_tests[] = {
        cmocka_unit_test_setup(test_unauthenticated_limits, h_noop_setup),
    };
    int rc = cmocka_run_group_tests_name("badinput", tests, setup_main, h_group_teardown);
    rc += cmocka_run_group_tests_name("maxclients", maxclients_tests, setup_maxclients, h_group_teardown);
    rc += cmocka_run_group_tests_name("requirepass", auth_tests, setup_auth, h_group_teardown);
    return rc + h_failures();
}
