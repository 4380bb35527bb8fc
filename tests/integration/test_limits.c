/*
 * Client buffer limits: client-output-buffer-limit's normal class (hard,
 * soft with its seconds), the pubsub class for a subscribed RESP3 client
 * running ordinary commands, a client that never reads under the default
 * limits (not closed, the server's memory bounded), and
 * client-query-buffer-limit. A pub/sub subscriber over the pubsub class
 * is test_pubsub's test_slow_subscriber.
 *
 * Clients over a limit are found by polling CLIENT LIST a bounded number of
 * times; nothing here measures how long a limit took. The disconnection
 * counters of INFO stats are Redis 7.4's and absent from 7.0: they are
 * checked on ringkv only.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_LEN (100 * 1024)
#define POLLS 1000         /* CLIENT LIST polls before a client counts as staying */
#define POLL_MS 20

static void server_healthy(redisContext *c)
{
    STATUS(c, "PONG", "PING");
    OK(c, "SET health ok");
    BULK(c, "ok", "GET health");
}

static bool client_listed(redisContext *c, const char *name)
{
    char needle[64];
    snprintf(needle, sizeof needle, " name=%s ", name);
    redisReply *r = cmd(c, "CLIENT LIST");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    bool found = strstr(r->str, needle) != NULL;
    freeReplyObject(r);
    return found;
}

/* Poll until the client called name is gone, serving f's client on each
 * round: the others carry on while the limit is dealt with. */
static bool client_gone(struct fixture *f, const char *name)
{
    for (int i = 0; i < POLLS; i++) {
        server_healthy(f->c);
        if (!client_listed(f->c, name)) return true;
        h_sleep_ms(POLL_MS);
    }
    return false;
}

/* INFO stats counter (ringkv only: Redis 7.0 has none). */
static void expect_stat(redisContext *c, const char *field, long long lo, long long hi)
{
    if (h_redis_mode()) return;
    long long v = info_ll(c, "stats", field);
    if (v < lo || v > hi) h_fail("%s is %lld, expected %lld..%lld", field, v, lo, hi);
}

/* Two 100 KB values on different shards (with two threads), so a client's
 * GETs run both on its own thread and forwarded. */
static void set_big_values(redisContext *c, char *a, char *b)
{
    h_two_shard_keys("big", a, b);
    char *v = malloc(VALUE_LEN);
    memset(v, 'v', VALUE_LEN);
    expect_ok(cmd(c, "SET %s %b", a, v, (size_t)VALUE_LEN));
    expect_ok(cmd(c, "SET %s %b", b, v, (size_t)VALUE_LEN));
    free(v);
}

/* Pipeline n GETs of the big values on r and never read the replies. */
static void pipeline_gets(struct raw *r, const char *a, const char *b, size_t n)
{
    struct { char *p; int len; } one[2];
    one[0].len = redisFormatCommand(&one[0].p, "GET %s", a);
    one[1].len = redisFormatCommand(&one[1].p, "GET %s", b);
    assert_true(one[0].len > 0 && one[0].len == one[1].len);
    size_t len = (size_t)one[0].len;
    char *buf = malloc(n * len);
    for (size_t i = 0; i < n; i++) memcpy(buf + i * len, one[i & 1].p, len);
    size_t sent = raw_send_some(r, buf, n * len, 2000);
    print_message("non-reading client: sent %zu of %zu request bytes\n", sent, n * len);
    free(buf);
    free(one[0].p);
    free(one[1].p);
}

/* A client named name that asks for n big replies and reads none. */
static struct raw *non_reader(struct fixture *f, const char *name, size_t n)
{
    char a[32], b[32];
    set_big_values(f->c, a, b);
    struct raw *r = raw_connect(&f->srv);
    RAW(r, "+OK\r\n", "CLIENT SETNAME %s", name);
    pipeline_gets(r, a, b, n);
    return r;
}

/* The server closed r: whatever it had sent can be read, then EOF. */
static void expect_closed(struct raw *r)
{
    assert_true(raw_read_to_close(r, 10000));
    raw_close(r);
}

static void test_normal_hard_limit(void **state)
{
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "normal 1mb 0 0");
    OK(f->c, "CONFIG RESETSTAT");
    struct raw *hog = non_reader(f, "hardhog", 300);   /* 30 MB: more than socket buffers take */
    assert_true(client_gone(f, "hardhog"));
    expect_closed(hog);
    expect_stat(f->c, "client_output_buffer_limit_disconnections", 1, 1);
    expect_stat(f->c, "client_query_buffer_limit_disconnections", 0, 0);
    assert_true(h_log_has(&f->srv, "scheduled to be closed ASAP for overcoming of output buffer limits."));
    OK(f->c, "CONFIG RESETSTAT");
    expect_stat(f->c, "client_output_buffer_limit_disconnections", 0, 0);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "normal 0 0 0");
    server_healthy(f->c);
}

static void test_normal_soft_limit(void **state)
{
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "normal 0 256kb 1");
    OK(f->c, "CONFIG RESETSTAT");
    struct raw *hog = non_reader(f, "softhog", 300);   /* 30 MB: more than socket buffers take */
    assert_true(client_gone(f, "softhog"));
    expect_closed(hog);
    expect_stat(f->c, "client_output_buffer_limit_disconnections", 1, 1);
    assert_true(h_log_has(&f->srv, "for overcoming of output buffer limits."));
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "normal 0 0 0");
    server_healthy(f->c);
}

/* A subscribed client is of the pubsub class whatever it runs (Redis's
 * getClientType): in RESP3 it may run GET, whose replies count there. */
static void test_subscribed_client_class(void **state)
{
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "normal 0 0 0 pubsub 1mb 0 0");
    OK(f->c, "CONFIG RESETSTAT");
    char a[32], b[32];
    set_big_values(f->c, a, b);
    struct raw *r = raw_connect(&f->srv);
    RAW(r, "+OK\r\n", "CLIENT SETNAME subhog");
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    raw_cmd(r, "SUBSCRIBE limits");
    rv_free(raw_reply(r));
    pipeline_gets(r, a, b, 300);
    assert_true(client_gone(f, "subhog"));
    expect_closed(r);
    expect_stat(f->c, "client_output_buffer_limit_disconnections", 1, 1);
    OK(f->c, "CONFIG SET client-output-buffer-limit %s", "pubsub 32mb 8mb 60");
    server_healthy(f->c);
}

/* Under the default limits a client that never reads stays connected, and
 * ringkv stops running its commands (the output pause) rather than hold
 * its replies. */
static void test_default_limits_never_reads(void **state)
{
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG RESETSTAT");
    long rss0 = server_rss_kb(&f->srv);
    assert_true(rss0 > 0);
    /* on Redis, replies pile up without limit: keep that run small */
    size_t n = h_redis_mode() ? 250 : 2500;   /* 2500 x 100 KB = 250 MB of replies */
    struct raw *hog = non_reader(f, "reader", n);
    h_sleep_ms(500);

    /* the others are still served */
    redisContext *c2 = h_connect(&f->srv);
    server_healthy(c2);
    redisFree(c2);
    assert_true(client_listed(f->c, "reader"));
    expect_stat(f->c, "client_output_buffer_limit_disconnections", 0, 0);

    long rss1 = server_rss_kb(&f->srv);
    print_message("non-reading client: server RSS %ld KB -> %ld KB\n", rss0, rss1);
    if (!h_redis_mode()) {
        /* 250 MB of replies were asked for; a bounded server holds a few MB */
        if (rss1 - rss0 > 64 * 1024)
            h_fail("server RSS grew by %ld KB for a client that does not read", rss1 - rss0);
    }
    raw_abort(hog);
    assert_true(server_alive(&f->srv));
    server_healthy(f->c);
}

/* A bulk argument bigger than client-query-buffer-limit, still arriving:
 * closed without a reply. */
static void test_query_buffer_limit(void **state)
{
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET client-query-buffer-limit 1mb");
    OK(f->c, "CONFIG RESETSTAT");
    size_t vlen = 2u << 20;
    const char head[] = "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$2097152\r\n";
    size_t hlen = sizeof head - 1;
    char *buf = malloc(hlen + vlen);
    memcpy(buf, head, hlen);
    memset(buf + hlen, 'q', vlen);
    struct raw *r = raw_connect(&f->srv);
    raw_send_some(r, buf, hlen + vlen - 1, 2000);   /* one byte short, and no CRLF */
    free(buf);
    assert_true(raw_read_to_close(r, 10000));
    assert_int_equal(r->len - r->pos, 0);
    raw_close(r);
    expect_stat(f->c, "client_query_buffer_limit_disconnections", 1, 1);
    expect_stat(f->c, "client_output_buffer_limit_disconnections", 0, 0);
    assert_true(h_log_has(&f->srv, "Closing client that reached max query buffer length"));
    NIL(f->c, "GET big");
    OK(f->c, "CONFIG SET client-query-buffer-limit 1gb");
    server_healthy(f->c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_normal_hard_limit, h_flushall),
        cmocka_unit_test_setup(test_normal_soft_limit, h_flushall),
        cmocka_unit_test_setup(test_subscribed_client_class, h_flushall),
        cmocka_unit_test_setup(test_default_limits_never_reads, h_flushall),
        cmocka_unit_test_setup(test_query_buffer_limit, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("limits", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
