/*
 * command_stats.c: the latency histogram's buckets and percentiles, the
 * counting of calls, failed and rejected calls and error replies, and the
 * INFO lines they become (commandstats, errorstats, latencystats), reset
 * by CONFIG RESETSTAT. Handlers are run through command_call() as the
 * server runs them; no test looks at a measured duration.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ringkv/command.h"
#include "ringkv/command_stats.h"
#include "ringkv/config.h"

/* ---- the histogram ---- */

static void test_buckets(void **state) {
    (void)state;
    unsigned prev = 0;
    for (uint64_t v = 0; v < (1ull << 41); v = v < 64 ? v + 1 : v + v / 7) {
        unsigned b = lat_bucket(v);
        assert_true(b < LAT_HIST_BUCKETS);
        assert_true(b >= prev);                       /* monotonic */
        prev = b;
        if (b == LAT_HIST_BUCKETS - 1) continue;      /* the last bucket takes everything above */
        assert_true(v <= lat_bucket_high(b));
        assert_true(lat_bucket_high(b) - v <= v / 8);   /* within 12.5% */
        if (b > 0) assert_true(lat_bucket_high(b - 1) < v);
    }
    for (uint64_t v = 0; v < 16; v++) assert_int_equal(lat_bucket_high(lat_bucket(v)), v);   /* exact below 16 */
}

static void test_percentiles(void **state) {
    (void)state;
    uint64_t counts[LAT_HIST_BUCKETS] = {0};
    /* 100 samples: 1..100 ns */
    for (uint64_t v = 1; v <= 100; v++) counts[lat_bucket(v)]++;
    assert_int_equal(lat_value_at_percentile(counts, 100, 0.0), 1);
    uint64_t p50 = lat_value_at_percentile(counts, 100, 50.0);
    assert_true(p50 >= 50 && p50 <= 50 + 50 / 8);
    uint64_t p100 = lat_value_at_percentile(counts, 100, 100.0);
    assert_true(p100 >= 100 && p100 <= 100 + 100 / 8);
    assert_int_equal(lat_value_at_percentile(counts, 100, 150.0), p100);   /* capped at 100 */
    /* one sample: every percentile is it */
    uint64_t one[LAT_HIST_BUCKETS] = {0};
    one[lat_bucket(5000)]++;
    assert_int_equal(lat_value_at_percentile(one, 1, 50.0), lat_bucket_high(lat_bucket(5000)));
    assert_int_equal(lat_value_at_percentile(one, 1, 99.9), lat_bucket_high(lat_bucket(5000)));
}

/* ---- counting ---- */

static struct rbuf out;

/* Run a table command (a container's subcommand when it is one) through
 * command_call, as the server does. */
static void call(const char *name, const char *arg) {
    const struct command *cmd = command_lookup(name, strlen(name));
    assert_non_null(cmd);
    struct slice argv[2] = { { name, strlen(name) }, { arg, arg ? strlen(arg) : 0 } };
    if (cmd->subcommands) cmd = command_lookup_sub(cmd, argv[1]);
    assert_non_null(cmd);
    struct cmd_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cmd = cmd;
    ctx.argc = arg ? 2 : 1;
    ctx.argv = argv;
    ctx.r = (struct reply){ &out, 2 };
    out.len = 0;
    command_call(&ctx);
}

/* The INFO lines one of the stats_info_* functions writes, NUL-terminated. */
static const char *info(void (*lines)(struct rbuf *)) {
    static struct rbuf text;
    text.len = 0;
    lines(&text);
    rbuf_append(&text, "", 1);
    return text.buf;
}

static int setup(void **state) {
    (void)state;
    config_set_defaults();
    command_table_init();
    command_stats_reset();
    return 0;
}

static void test_calls(void **state) {
    (void)state;
    call("ping", NULL);
    call("ping", NULL);
    call("echo", "hi");
    const char *s = info(stats_info_commandstats);
    assert_non_null(strstr(s, "cmdstat_ping:calls=2,usec="));
    assert_non_null(strstr(s, ",rejected_calls=0,failed_calls=0\r\n"));
    assert_non_null(strstr(s, "cmdstat_echo:calls=1,"));
    assert_null(strstr(s, "cmdstat_get"));         /* never called: absent */
    /* a subcommand has its own line */
    call("command", "count");
    assert_non_null(strstr(info(stats_info_commandstats), "cmdstat_command|count:calls=1,"));
}

static void test_failed_and_rejected(void **state) {
    (void)state;
    call("select", "notanumber");                  /* replies an error: a failed call */
    command_rejected(command_lookup("get", 3));    /* e.g. wrong arity */
    const char *s = info(stats_info_commandstats);
    assert_non_null(strstr(s, "cmdstat_select:calls=1,"));
    assert_non_null(strstr(s, "rejected_calls=0,failed_calls=1\r\n"));
    assert_non_null(strstr(s, "cmdstat_get:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0\r\n"));
    command_rejected(NULL);                        /* an unknown command has no line */
    /* a call counted by its runner (EXEC, answered by the connection layer) */
    command_count_call(command_lookup("echo", 4), true);
    assert_non_null(strstr(info(stats_info_commandstats),
                           "cmdstat_echo:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=1\r\n"));
}

static void test_errors(void **state) {
    (void)state;
    struct reply r = { &out, 2 };
    reply_error(&r, "ERR syntax error");
    reply_error(&r, ERR_WRONGTYPE);
    reply_errorf(&r, "ERR unknown command '%s'", "x");
    reply_error(&r, "NOCODEATALL");                         /* no space: filed as ERR */
    reply_error(&r, "-NOAUTH Authentication required.");    /* a leading dash is tolerated */
    reply_error(&r, "A:B c");                               /* INFO-unsafe characters */
    assert_int_equal(stats_total_error_replies(), 6);
    const char *s = info(stats_info_errorstats);
    /* sorted by name, as Redis lists them */
    assert_string_equal(s, "errorstat_A_B:count=1\r\nerrorstat_ERR:count=3\r\nerrorstat_NOAUTH:count=1\r\n"
                           "errorstat_WRONGTYPE:count=1\r\n");
    command_stats_reset();
    assert_int_equal(stats_total_error_replies(), 0);
    assert_string_equal(info(stats_info_errorstats), "");
}

static void test_latency_lines(void **state) {
    (void)state;
    call("ping", NULL);                 /* the first call of a command is always timed */
    const char *s = info(stats_info_latencystats);
    const char *line = strstr(s, "latency_percentiles_usec_ping:p50=");
    assert_non_null(line);
    assert_non_null(strstr(line, ",p99="));
    assert_non_null(strstr(line, ",p99.9="));
    char *err = NULL;
    struct slice set[2] = { SLICE_LIT("latency-tracking-info-percentiles"), SLICE_LIT("0 50.5 100") };
    err = config_set(set, 2, true);
    assert_null(err);
    s = info(stats_info_latencystats);
    assert_non_null(strstr(s, "latency_percentiles_usec_ping:p0="));
    assert_non_null(strstr(s, ",p50.5="));
    assert_non_null(strstr(s, ",p100="));
    struct slice off[2] = { SLICE_LIT("latency-tracking"), SLICE_LIT("no") };
    assert_null(config_set(off, 2, true));
    assert_string_equal(info(stats_info_latencystats), "");   /* tracking off: not shown */
    struct slice on[2] = { SLICE_LIT("latency-tracking"), SLICE_LIT("yes") };
    assert_null(config_set(on, 2, true));
    command_stats_reset();
    assert_string_equal(info(stats_info_latencystats), "");   /* reset: gone */
    assert_string_equal(info(stats_info_commandstats), "");
}

/* Counters of another thread show in the sums. */
static void *other_thread(void *arg) {
    (void)arg;
    struct rbuf mine = {0};
    struct reply r = { &mine, 2 };
    reply_error(&r, "ERR from another thread");
    rbuf_free(&mine);
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    pthread_t t;
    struct reply r = { &out, 2 };
    reply_error(&r, "ERR here");
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    pthread_join(t, NULL);
    assert_int_equal(stats_total_error_replies(), 2);
    assert_string_equal(info(stats_info_errorstats), "errorstat_ERR:count=2\r\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_percentiles),
        cmocka_unit_test_setup(test_calls, setup),
        cmocka_unit_test_setup(test_failed_and_rejected, setup),
        cmocka_unit_test_setup(test_errors, setup),
        cmocka_unit_test_setup(test_latency_lines, setup),
        cmocka_unit_test_setup(test_threads, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rbuf_free(&out);
    return rc;
}
