/*
 * The /metrics endpoint (metrics-port): GET /metrics answers 200 with
 * INFO's figures in Prometheus text, the same ones INFO reports (keys per
 * database, commandstats, total_commands_processed, which the scrape
 * itself moves by one, a per-thread line for every thread); another path
 * or method 404, garbage and oversized requests 400, each answer followed
 * by the close; connections that send nothing are closed in the end and
 * meanwhile hold up nobody (Redis clients and other scrapes are served,
 * and past 16 of them a scrape is told 503); CONFIG GET shows the port,
 * CONFIG SET refuses to move it. A server without metrics-port has none.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDLE_CLOSE_WAIT_MS 30000   /* a bound only: the server closes them far sooner */

static int metrics_port;
static char metrics_port_arg[16];
static const char *metrics_args[] = { "--metrics-port", metrics_port_arg, NULL };

static int group_setup(void **state) {
    metrics_port = h_free_port();
    snprintf(metrics_port_arg, sizeof metrics_port_arg, "%d", metrics_port);
    return h_group_setup_args(state, metrics_args);
}

static struct raw *metrics_connect(void) {
    struct server s = { .port = metrics_port };
    return raw_connect(&s);
}

/* Send req, read the whole answer up to the close; fails if it does not
 * close. Returns the answer (malloc'd, NUL-terminated). */
static char *http(const char *req, size_t len) {
    struct raw *r = metrics_connect();
    raw_send(r, req, len);
    bool closed = raw_read_to_close(r, 10000);
    if (!closed) {
        raw_close(r);
        h_fail("the metrics connection did not close after its answer");
    }
    char *out = strndup(r->buf + r->pos, r->len - r->pos);
    raw_close(r);
    return out;
}

#define HTTP(s) http((s), strlen(s))

/* The status line, Content-Length against the body, and the body. */
static const char *http_body(const char *resp, const char *status) {
    size_t sl = strlen(status);
    if (strncmp(resp, status, sl) != 0 || strncmp(resp + sl, "\r\n", 2) != 0)
        h_fail("expected \"%s\", got \"%.80s\"", status, resp);
    const char *end = strstr(resp, "\r\n\r\n");
    if (!end) h_fail("no end of headers in \"%.200s\"", resp);
    const char *cl = strstr(resp, "\r\nContent-Length: ");
    if (!cl || cl > end) h_fail("no Content-Length in \"%.200s\"", resp);
    long long n = atoll(cl + strlen("\r\nContent-Length: "));
    assert_int_equal(n, strlen(end + 4));
    return end + 4;
}

static char *scrape(void) {
    char *resp = HTTP("GET /metrics HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n");
    const char *body = http_body(resp, "HTTP/1.1 200 OK");
    const char *end = strstr(resp, "\r\n\r\n");
    const char *ct = strstr(resp, "\r\nContent-Type: text/plain; version=0.0.4\r\n");
    assert_true(ct && ct < end);
    char *b = strdup(body);
    free(resp);
    return b;
}

/* The value of the sample whose name and labels are `sample` exactly. */
static bool metric(const char *body, const char *sample, long long *v) {
    size_t n = strlen(sample);
    for (const char *p = body; (p = strstr(p, sample)); p++) {
        if ((p == body || p[-1] == '\n') && p[n] == ' ') {
            *v = atoll(p + n + 1);
            return true;
        }
    }
    return false;
}

static long long metric_ll(const char *body, const char *sample) {
    long long v;
    if (!metric(body, sample, &v)) h_fail("no sample %s in the scrape", sample);
    return v;
}

/* key=N inside an INFO field's value. */
static long long info_sub(const char *info, const char *field, const char *key) {
    char *f = info_field(info, field);
    if (!f) h_fail("no %s in INFO", field);
    char k[64];
    snprintf(k, sizeof k, "%s=", key);
    const char *p = strstr(f, k);
    long long v = p ? atoll(p + strlen(k)) : -1;
    free(f);
    return v;
}

static long long info_num(const char *info, const char *field) {
    char *f = info_field(info, field);
    if (!f) h_fail("no %s in INFO", field);
    long long v = atoll(f);
    free(f);
    return v;
}

static void test_figures_match_info(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "MSET a 1 b 2 c 3");
    OK(c, "SELECT 3");
    OK(c, "MSET x 1 y 2");
    OK(c, "SET z 1 EX 100");
    OK(c, "SELECT 0");
    char *m = scrape();
    redisReply *r = cmd(c, "INFO everything");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    const char *info = r->str;

    assert_int_equal(metric_ll(m, "redis_db_keys{db=\"db0\"}"), 3);
    assert_int_equal(metric_ll(m, "redis_db_keys{db=\"db3\"}"), 3);
    assert_int_equal(metric_ll(m, "redis_db_expires{db=\"db3\"}"), 1);
    assert_int_equal(info_sub(info, "db0", "keys"), 3);
    assert_int_equal(info_sub(info, "db3", "keys"), 3);
    long long v;
    assert_false(metric(m, "redis_db_keys{db=\"db1\"}", &v));
    /* INFO counts itself, as the scrape did */
    assert_int_equal(info_num(info, "total_commands_processed"), metric_ll(m, "redis_total_commands_processed") + 1);
    assert_int_equal(info_sub(info, "cmdstat_mset", "calls"), metric_ll(m, "redis_commands_total{cmd=\"mset\"}"));
    assert_int_equal(info_sub(info, "cmdstat_select", "calls"), metric_ll(m, "redis_commands_total{cmd=\"select\"}"));
    assert_int_equal(info_num(info, "maxclients"), metric_ll(m, "redis_maxclients"));
    assert_int_equal(info_num(info, "connected_clients"), metric_ll(m, "redis_connected_clients"));
    assert_int_equal(info_num(info, "rdb_changes_since_last_save"), metric_ll(m, "redis_rdb_changes_since_last_save"));
    assert_int_equal(info_num(info, "total_error_replies"), metric_ll(m, "redis_total_error_replies"));

    /* a line per thread, and their commands add up to the total */
    int threads = h_threads();
    assert_int_equal(metric_ll(m, "redis_threads"), threads);
    long long sum = 0;
    for (int t = 0; t <= threads; t++) {
        char s[64];
        snprintf(s, sizeof s, "redis_thread_commands{thread=\"%d\"}", t);
        if (t == threads) {
            assert_false(metric(m, s, &v));
            break;
        }
        sum += metric_ll(m, s);
        snprintf(s, sizeof s, "redis_thread_connections{thread=\"%d\"}", t);
        assert_true(metric(m, s, &v));
        char field[32];
        snprintf(field, sizeof field, "thread%d", t);
        assert_true(info_sub(info, field, "commands") >= 0);
    }
    assert_int_equal(sum, metric_ll(m, "redis_total_commands_processed"));
    assert_non_null(strstr(m, "# TYPE redis_commands_total counter\n"));
    assert_non_null(strstr(m, "# TYPE redis_db_keys gauge\n"));
    freeReplyObject(r);
    free(m);
}

static void test_counters_move(void **state) {
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR unknown command 'NOSUCHCMD', with args beginning with: ", "NOSUCHCMD");
    char *m1 = scrape();
    for (int i = 0; i < 10; i++) STATUS(c, "PONG", "PING");
    ERR(c, "ERR unknown command 'NOSUCHCMD', with args beginning with: ", "NOSUCHCMD");
    char *m2 = scrape();
    /* the ten PINGs and the second scrape's own INFO */
    assert_int_equal(metric_ll(m2, "redis_total_commands_processed") - metric_ll(m1, "redis_total_commands_processed"), 11);
    long long p1;
    if (!metric(m1, "redis_commands_total{cmd=\"ping\"}", &p1)) p1 = 0;
    assert_int_equal(metric_ll(m2, "redis_commands_total{cmd=\"ping\"}") - p1, 10);
    assert_int_equal(metric_ll(m2, "redis_errors_total{err=\"ERR\"}") - metric_ll(m1, "redis_errors_total{err=\"ERR\"}"), 1);
    assert_int_equal(metric_ll(m2, "redis_commands_total{cmd=\"info\"}") - metric_ll(m1, "redis_commands_total{cmd=\"info\"}"), 1);
    free(m1);
    free(m2);
}

static void expect_status_then_close(const char *req, size_t len, const char *status) {
    char *resp = http(req, len);
    http_body(resp, status);
    free(resp);
}

#define EXPECT_STATUS(req, status) expect_status_then_close((req), strlen(req), (status))

static void test_not_found(void **state) {
    (void)state;
    EXPECT_STATUS("GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found");
    EXPECT_STATUS("GET /metricsx HTTP/1.0\r\n\r\n", "HTTP/1.1 404 Not Found");
    EXPECT_STATUS("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 404 Not Found");
    EXPECT_STATUS("DELETE /x HTTP/1.1\n\n", "HTTP/1.1 404 Not Found");
    /* HTTP/1.0 and bare LF line ends are requests too */
    char *resp = HTTP("GET /metrics HTTP/1.0\n\n");
    http_body(resp, "HTTP/1.1 200 OK");
    free(resp);
}

static void test_bad_requests(void **state) {
    redisContext *c = FIX(state)->c;
    static const char *bad[] = {
        "garbage\r\n\r\n",
        "GET /metrics\r\n\r\n",                  /* no version */
        "GET /metrics HTTP/2.0\r\n\r\n",
        "GET metrics HTTP/1.1\r\n\r\n",
        "GET  /metrics HTTP/1.1\r\n\r\n",
        "G(T /metrics HTTP/1.1\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nno colon\r\n\r\n",
        "GET /metrics HTTP/1.1\r\n: empty name\r\n\r\n",
        "\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_status_then_close(bad[i], strlen(bad[i]), "HTTP/1.1 400 Bad Request");
    /* a NUL and other control bytes */
    expect_status_then_close("GET /met\0rics HTTP/1.1\r\n\r\n", 26, "HTTP/1.1 400 Bad Request");
    EXPECT_STATUS("GET /metrics HTTP/1.1\r\nX: a\x01\r\n\r\n", "HTTP/1.1 400 Bad Request");
    /* a request that never ends its headers: 400 once it is too long */
    size_t n = 9000;   /* past the 8 KB a request may take */
    char *big = malloc(n);
    memcpy(big, "GET /metrics HTTP/1.1\r\nX-Long: ", 31);
    memset(big + 31, 'a', n - 31);
    struct raw *r = metrics_connect();
    raw_send_some(r, big, n, 5000);
    assert_true(raw_read_to_close(r, 10000));
    r->buf[r->len] = '\0';
    assert_memory_equal(r->buf, "HTTP/1.1 400 Bad Request\r\n", 26);
    raw_close(r);
    free(big);
    /* a request line that never ends, likewise */
    big = malloc(n);
    memset(big, 'G', n);
    r = metrics_connect();
    raw_send_some(r, big, n, 5000);
    assert_true(raw_read_to_close(r, 10000));
    assert_memory_equal(r->buf, "HTTP/1.1 400 Bad Request\r\n", 26);
    raw_close(r);
    free(big);
    STATUS(c, "PONG", "PING");
    char *m = scrape();
    free(m);
}

/* Idle metrics connections: Redis clients and scrapes go on; past 16 a
 * scrape gets 503; the server closes the idle ones in the end. */
static void test_idle_clients(void **state) {
    redisContext *c = FIX(state)->c;
    struct raw *idle[16];
    for (int i = 0; i < 16; i++) idle[i] = metrics_connect();
    /* the server has taken them all: the one more is refused at accept */
    for (int i = 0; i < 100; i++) {
        char *resp = HTTP("GET /metrics HTTP/1.1\r\n\r\n");
        bool refused = strncmp(resp, "HTTP/1.1 503 Service Unavailable\r\n", 34) == 0;
        free(resp);
        if (refused) break;
        assert_true(i < 99);
        h_sleep_ms(20);
    }
    for (int i = 0; i < 200; i++) {
        char k[32];
        snprintf(k, sizeof k, "k%d", i);
        OK(c, "SET %s %d", k, i);
        expect_int(cmd(c, "INCR %s", k), i + 1);
    }
    assert_int_equal(info_ll(c, "keyspace", "db0") >= 0, 1);
    /* closed by the server, without a word */
    for (int i = 0; i < 16; i++) {
        assert_true(raw_read_to_close(idle[i], IDLE_CLOSE_WAIT_MS));
        assert_int_equal(idle[i]->len, 0);
        raw_close(idle[i]);
    }
    /* ...and one that sent half a request */
    struct raw *half = metrics_connect();
    raw_sends(half, "GET /metrics HTTP/1.1\r\nHost: x\r\n");
    STATUS(c, "PONG", "PING");
    assert_true(raw_read_to_close(half, IDLE_CLOSE_WAIT_MS));
    assert_int_equal(half->len, 0);
    raw_close(half);
    char *m = scrape();
    assert_int_equal(metric_ll(m, "redis_db_keys{db=\"db0\"}"), 200);
    free(m);
}

static void test_config(void **state) {
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "CONFIG GET metrics-port");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "metrics-port");
    assert_int_equal(atoi(r->element[1]->str), metrics_port);
    freeReplyObject(r);
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'metrics-port') - The metrics listener does not "
           "move at run time (restart with --metrics-port).", "CONFIG SET metrics-port %d", metrics_port + 1);
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'metrics-port') - argument must be between 0 and 65535 "
           "inclusive", "CONFIG SET metrics-port 70000");
    OK(c, "CONFIG SET metrics-port %d", metrics_port);   /* no change */
    /* like threads, out of CONFIG GET * (Redis's list) */
    r = cmd(c, "CONFIG GET *");
    for (size_t i = 0; i < r->elements; i += 2) assert_string_not_equal(r->element[i]->str, "metrics-port");
    freeReplyObject(r);
    char *m = scrape();
    free(m);
}

static void test_off_by_default(void **state) {
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "CONFIG GET metrics-port");
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[1]->str, "0");
    freeReplyObject(r);
}

int main(void) {
    if (h_redis_mode()) {
        print_message("[  SKIP    ] metrics-port is ringkv's own\n");
        return 0;
    }
    const struct CMUnitTest metrics[] = {
        cmocka_unit_test_setup(test_figures_match_info, h_flushall),
        cmocka_unit_test_setup(test_counters_move, h_flushall),
        cmocka_unit_test_setup(test_not_found, h_flushall),
        cmocka_unit_test_setup(test_bad_requests, h_flushall),
        cmocka_unit_test_setup(test_idle_clients, h_flushall),
        cmocka_unit_test_setup(test_config, h_flushall),
    };
    const struct CMUnitTest off[] = {
        cmocka_unit_test_setup(test_off_by_default, h_noop_setup),
    };
    int rc = cmocka_run_group_tests_name("metrics", metrics, group_setup, h_group_teardown);
    rc += cmocka_run_group_tests_name("metrics_off", off, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
