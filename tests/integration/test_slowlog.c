/*
 * SLOWLOG and LATENCY against the real binary, on one thread and on
 * several: one log for the whole server (the commands of a client whose
 * keys live on other threads' shards are in it, with that client's
 * address and name), newest first, bounded by slowlog-max-len, arguments
 * cut and secrets redacted as Redis 7.0 does; the latency monitor's events,
 * history and reset; LATENCY HISTOGRAM's counts over every thread.
 *
 * Durations are never asserted against the clock: a command is made slow
 * with DEBUG SLEEP, which sleeps at least as long as asked, and otherwise
 * the threshold is 0 (every command is logged) or -1 (none is).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The slow log's entries, newest first (SLOWLOG GET -1). */
static redisReply *entries(redisContext *c)
{
    redisReply *r = cmd(c, "SLOWLOG GET -1");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    return r;
}

/* Entry e's arguments joined with spaces, in buf. */
static const char *args_of(const redisReply *e, char *buf, size_t cap)
{
    assert_int_equal(e->type, REDIS_REPLY_ARRAY);
    assert_int_equal(e->elements, 6);
    const redisReply *argv = e->element[3];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < argv->elements; i++)
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", i ? " " : "", argv->element[i]->str);
    return buf;
}

/* The newest entry whose arguments are `want`, or NULL. */
static const redisReply *find_entry(const redisReply *all, const char *want)
{
    char buf[1024];
    for (size_t i = 0; i < all->elements; i++)
        if (strcmp(args_of(all->element[i], buf, sizeof buf), want) == 0) return all->element[i];
    return NULL;
}

static void log_everything(redisContext *c)
{
    OK(c, "CONFIG SET slowlog-log-slower-than 0");
    OK(c, "CONFIG SET slowlog-max-len 128");
    OK(c, "SLOWLOG RESET");
}

static void test_len_max_and_get(void **state)
{
    redisContext *c = FIX(state)->c;
    log_everything(c);
    for (int i = 0; i < 5; i++) STATUS(c, "PONG", "PING");
    INT(c, 6, "SLOWLOG LEN");   /* the RESET and the pings; LEN is logged after its reply */
    OK(c, "CONFIG SET slowlog-max-len 10");
    for (int i = 0; i < 30; i++) STATUS(c, "PONG", "PING");
    INT(c, 10, "SLOWLOG LEN");
    redisReply *r = cmd(c, "SLOWLOG GET 5");
    assert_int_equal(r->elements, 5);
    for (size_t i = 1; i < r->elements; i++)   /* newest first, ids one apart */
        assert_int_equal(r->element[i - 1]->element[0]->integer, r->element[i]->element[0]->integer + 1);
    freeReplyObject(r);
    r = cmd(c, "SLOWLOG GET 0");
    assert_int_equal(r->elements, 0);
    freeReplyObject(r);
    r = cmd(c, "SLOWLOG GET -1");
    assert_int_equal(r->elements, 10);
    freeReplyObject(r);
    ERR(c, "ERR count should be greater than or equal to -1", "SLOWLOG GET -2");
    ERR(c, "ERR count should be greater than or equal to -1", "SLOWLOG GET many");
    OK(c, "CONFIG SET slowlog-log-slower-than -1");
    OK(c, "SLOWLOG RESET");
    STATUS(c, "PONG", "PING");
    INT(c, 0, "SLOWLOG LEN");
    OK(c, "CONFIG SET slowlog-max-len 128");
}

/* Only what is slower than the threshold: a sleep of 50 ms against 10 ms. */
static void test_threshold(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG SET slowlog-log-slower-than 10000");
    OK(c, "SLOWLOG RESET");
    STATUS(c, "PONG", "PING");
    INT(c, 0, "SLOWLOG LEN");
    OK(c, "DEBUG SLEEP 0.05");
    INT(c, 1, "SLOWLOG LEN");
    redisReply *r = entries(c);
    char buf[256];
    assert_string_equal(args_of(r->element[0], buf, sizeof buf), "DEBUG SLEEP 0.05");
    assert_true(r->element[0]->element[2]->integer >= 50000);
    freeReplyObject(r);
    OK(c, "CONFIG SET slowlog-log-slower-than -1");
}

/* An entry: id, unix time, duration, arguments, address, name. */
static void test_entry_fields(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "CLIENT SETNAME slow-client");
    log_everything(c);
    OK(c, "SET fields:key value");
    redisReply *t = cmd(c, "TIME");
    long long now = atoll(t->element[0]->str);
    freeReplyObject(t);
    redisReply *info = cmd(c, "CLIENT INFO");
    const char *at = strstr(info->str, "addr=");
    assert_non_null(at);
    char *addr = strndup(at + 5, strcspn(at + 5, " "));
    freeReplyObject(info);
    redisReply *r = entries(c);
    const redisReply *e = find_entry(r, "SET fields:key value");
    assert_non_null(e);
    assert_true(e->element[1]->integer <= now && e->element[1]->integer > now - 100);
    assert_true(e->element[2]->integer >= 0);
    assert_string_equal(e->element[4]->str, addr);
    assert_string_equal(e->element[5]->str, "slow-client");
    free(addr);
    freeReplyObject(r);
    OK(c, "CONFIG SET slowlog-log-slower-than -1");
    OK(c, "CLIENT SETNAME \"\"");
}

/* Keys on every shard: the commands forwarded to other threads are in the
 * one log, each with this client's name (it travels to the client's
 * thread before the reply does). */
static void test_forwarded_commands_have_their_client(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "CLIENT SETNAME fwd-client");
    log_everything(c);
    enum { KEYS = 24 };
    for (int i = 0; i < KEYS; i++) OK(c, "SET fwd:%d v", i);
    redisReply *r = entries(c);
    char want[64];
    for (int i = 0; i < KEYS; i++) {
        snprintf(want, sizeof want, "SET fwd:%d v", i);
        const redisReply *e = find_entry(r, want);
        if (!e) h_fail("no entry for %s", want);
        assert_string_equal(e->element[5]->str, "fwd-client");
        assert_true(strncmp(e->element[4]->str, "127.0.0.1:", 10) == 0);
    }
    freeReplyObject(r);
    OK(c, "CONFIG SET slowlog-log-slower-than -1");
    OK(c, "CLIENT SETNAME \"\"");
}

/* At most 32 arguments (the last says how many more), each at most 128
 * bytes (saying how many more). */
static void test_trimmed(void **state)
{
    redisContext *c = FIX(state)->c;
    log_everything(c);
    const char *argv[40];
    char nums[38][16];
    argv[0] = "SADD";
    argv[1] = "trim:set";
    for (int i = 0; i < 38; i++) {
        snprintf(nums[i], sizeof nums[i], "%d", i);
        argv[i + 2] = nums[i];
    }
    expect_int(cmdv(c, 40, argv, NULL), 38);
    char big[201];
    memset(big, 'A', 200);
    big[200] = '\0';
    INT(c, 1, "SADD trim:set2 %s", big);
    redisReply *r = entries(c);
    const redisReply *many = NULL, *longarg = NULL;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *a = r->element[i]->element[3];
        if (!strcmp(a->element[1]->str, "trim:set")) many = a;
        if (!strcmp(a->element[1]->str, "trim:set2")) longarg = a;
    }
    assert_non_null(many);
    assert_int_equal(many->elements, 32);
    assert_string_equal(many->element[30]->str, "28");
    assert_string_equal(many->element[31]->str, "... (9 more arguments)");
    assert_non_null(longarg);
    assert_int_equal(longarg->element[2]->len, 128 + strlen("... (72 more bytes)"));
    assert_string_equal(longarg->element[2]->str + 128, "... (72 more bytes)");
    freeReplyObject(r);
    OK(c, "CONFIG SET slowlog-log-slower-than -1");
}

/* Secrets are kept as "(redacted)"; EXEC is not logged, its commands are. */
static void test_redacted_and_exec(void **state)
{
    redisContext *c = FIX(state)->c;
    log_everything(c);
    freeReplyObject(cmd(c, "AUTH not-the-password"));   /* an error: no password is set */
    OK(c, "CONFIG SET masterauth s3cret");
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "SET exec:a 1");
    STATUS(c, "QUEUED", "INCR exec:a");
    redisReply *x = cmd(c, "EXEC");
    assert_int_equal(x->type, REDIS_REPLY_ARRAY);
    freeReplyObject(x);
    redisReply *r = entries(c);
    assert_non_null(find_entry(r, "AUTH (redacted)"));
    assert_non_null(find_entry(r, "CONFIG SET masterauth (redacted)"));
    assert_non_null(find_entry(r, "SET exec:a 1"));
    assert_non_null(find_entry(r, "INCR exec:a"));
    assert_null(find_entry(r, "EXEC"));
    freeReplyObject(r);
    OK(c, "CONFIG SET masterauth \"\"");
    OK(c, "CONFIG SET slowlog-log-slower-than -1");
}

/* A reply that is a map in RESP3 and a flat list in RESP2: the value of key. */
static const redisReply *map_get(const redisReply *m, const char *key)
{
    for (size_t i = 0; i + 1 < m->elements; i += 2)
        if (!strcmp(m->element[i]->str, key)) return m->element[i + 1];
    return NULL;
}

static void test_latency_events(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG SET latency-monitor-threshold 10");
    freeReplyObject(cmd(c, "LATENCY RESET"));
    OK(c, "DEBUG SLEEP 0.05");
    redisReply *r = cmd(c, "LATENCY LATEST");
    assert_int_equal(r->elements, 1);
    const redisReply *ev = r->element[0];
    assert_string_equal(ev->element[0]->str, "command");
    assert_true(ev->element[2]->integer >= 50);
    assert_true(ev->element[3]->integer >= ev->element[2]->integer);
    freeReplyObject(r);
    r = cmd(c, "LATENCY HISTORY command");
    assert_int_equal(r->elements, 1);
    assert_true(r->element[0]->element[1]->integer >= 50);
    freeReplyObject(r);
    r = cmd(c, "LATENCY DOCTOR");
    assert_true(r->len > 0);
    freeReplyObject(r);
    r = cmd(c, "LATENCY GRAPH command");
    assert_true(r->len > 0 && strncmp(r->str, "command - high ", 15) == 0);
    freeReplyObject(r);
    ERR(c, "ERR No samples available for event 'nothing'", "LATENCY GRAPH nothing");
    expect_empty_array(cmd(c, "LATENCY HISTORY nothing"));
    INT(c, 0, "LATENCY RESET nothing");
    INT(c, 1, "LATENCY RESET");
    expect_empty_array(cmd(c, "LATENCY LATEST"));
    ERR(c, "ERR wrong number of arguments for 'latency|help' command", "LATENCY HELP extra");
    OK(c, "CONFIG SET latency-monitor-threshold 0");
}

static void *open_raw_pinged(const struct server *s)
{
    struct raw *x = raw_connect(s);
    RAW(x, "+PONG\r\n", "PING");   /* accepted and counted */
    return x;
}

static void close_raw(void *x) { raw_close(x); }

/* ringkv's own event: a cross-shard command on thread 1 that waits for
 * shard 0 while DEBUG SLEEP, run from thread 0, holds every shard. */
static void test_shard_lock_wait(void **state)
{
    struct fixture *f = FIX(state);
    if (h_redis_mode() || h_threads() < 2) skip();
    void *conns[H_MAX_THREADS] = { 0 };
    h_every_thread(f->c, &f->srv, conns, open_raw_pinged, close_raw);
    struct raw *sleeper = conns[0], *writer = conns[1];
    char k0[32], k1[32];
    h_two_shard_keys("lw", k0, k1);
    OK(f->c, "CONFIG SET latency-monitor-threshold 10");
    freeReplyObject(cmd(f->c, "LATENCY RESET"));
    raw_cmd(sleeper, "DEBUG SLEEP 0.3");
    h_sleep_ms(50);   /* the sleep holds the shards by now (else the write does not wait, and the test fails) */
    raw_cmd(writer, "MSET %s a %s b", k0, k1);
    raw_expect(sleeper, "+OK\r\n");
    raw_expect(writer, "+OK\r\n");
    redisReply *r = cmd(f->c, "LATENCY HISTORY shard-lock-wait");
    assert_int_equal(r->elements, 1);
    assert_true(r->element[0]->element[1]->integer >= 10);
    freeReplyObject(r);
    OK(f->c, "CONFIG SET latency-monitor-threshold 0");
    for (int t = 0; t < H_MAX_THREADS; t++)
        if (conns[t]) raw_close(conns[t]);
}

/* Calls counted on every thread, forwarded ones included. */
static void test_latency_histogram(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG RESETSTAT");
    for (int i = 0; i < 20; i++) OK(c, "SET hist:%d v", i);
    NIL(c, "GET hist:none");
    redisReply *r = cmd(c, "LATENCY HISTOGRAM set get nosuchcommand");
    assert_int_equal(r->elements, 4);
    const redisReply *set = map_get(r, "set"), *get = map_get(r, "get");
    assert_non_null(set);
    assert_non_null(get);
    assert_int_equal(map_get(set, "calls")->integer, 20);
    assert_int_equal(map_get(get, "calls")->integer, 1);
    /* the last cumulative count is every call */
    const redisReply *h = map_get(set, "histogram_usec");
    assert_true(h->elements >= 2);
    assert_int_equal(h->element[h->elements - 1]->integer, 20);
    freeReplyObject(r);
    r = cmd(c, "LATENCY HISTOGRAM config");
    assert_non_null(map_get(r, "config|resetstat"));
    freeReplyObject(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_len_max_and_get, h_flushall),
        cmocka_unit_test_setup(test_threshold, h_flushall),
        cmocka_unit_test_setup(test_entry_fields, h_flushall),
        cmocka_unit_test_setup(test_forwarded_commands_have_their_client, h_flushall),
        cmocka_unit_test_setup(test_trimmed, h_flushall),
        cmocka_unit_test_setup(test_redacted_and_exec, h_flushall),
        cmocka_unit_test_setup(test_latency_events, h_flushall),
        cmocka_unit_test_setup(test_shard_lock_wait, h_flushall),
        cmocka_unit_test_setup(test_latency_histogram, h_flushall),
    };
    return cmocka_run_group_tests_name("slowlog", tests, h_group_setup, h_group_teardown) + h_failures();
}
