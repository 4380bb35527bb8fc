/*
 * INFO text to Prometheus text (prom_from_info, prometheus.h): each kind
 * of INFO line (plain figures, text, key=value lists of the keyspace,
 * commandstats, errorstats, latencystats, ringkv's per-thread lines, any
 * other list), names sanitized to [a-zA-Z0-9_:], label values and HELP
 * texts escaped, and the format's grouping rules (HELP and TYPE once per
 * metric, before all its samples) over a whole INFO text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/prometheus.h"

static char *convert(const char *info) {
    struct rbuf out = { 0 };
    prom_from_info(info, strlen(info), &out);
    char *s = rk_strndup(out.buf ? out.buf : "", out.len);
    rbuf_free(&out);
    return s;
}

static void expect_conversion(const char *info, const char *want) {
    char *got = convert(info);
    if (strcmp(got, want) != 0) {
        print_error("input:\n%s\ngot:\n%s\nwant:\n%s\n", info, got, want);
        free(got);
        fail();
    }
    free(got);
}

static bool has_line(const char *text, const char *line) {
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p++)
        if ((p == text || p[-1] == '\n') && p[n] == '\n') return true;
    return false;
}

static void expect_line(const char *text, const char *line) {
    if (!has_line(text, line)) {
        print_error("no line \"%s\" in:\n%s\n", line, text);
        fail();
    }
}

static void test_plain_figures(void **state) {
    (void)state;
    expect_conversion("# Stats\r\ntotal_commands_processed:42\r\nused_cpu_sys:0.012345\r\n\r\n"
                      "# Persistence\r\nrdb_last_bgsave_time_sec:-1\r\nmem_fragmentation_ratio:1.5e3\r\n",
                      "# HELP redis_total_commands_processed INFO Stats total_commands_processed\n"
                      "# TYPE redis_total_commands_processed counter\n"
                      "redis_total_commands_processed 42\n"
                      "# HELP redis_used_cpu_sys INFO Stats used_cpu_sys\n"
                      "# TYPE redis_used_cpu_sys counter\n"
                      "redis_used_cpu_sys 0.012345\n"
                      "# HELP redis_rdb_last_bgsave_time_sec INFO Persistence rdb_last_bgsave_time_sec\n"
                      "# TYPE redis_rdb_last_bgsave_time_sec gauge\n"
                      "redis_rdb_last_bgsave_time_sec -1\n"
                      "# HELP redis_mem_fragmentation_ratio INFO Persistence mem_fragmentation_ratio\n"
                      "# TYPE redis_mem_fragmentation_ratio gauge\n"
                      "redis_mem_fragmentation_ratio 1.5e3\n");
}

/* Text, percentages, empty values, lines without a colon, and a value
 * with '=' that is not a key=value list give nothing. */
static void test_text_left_out(void **state) {
    (void)state;
    expect_conversion("# Server\r\nredis_version:7.0.15\r\nos:Linux 6.1 x86_64\r\nrole:master\r\n"
                      "used_memory_peak_perc:100.00%\r\nconfig_file:\r\nconfig_file:/tmp/a=1\r\n"
                      "no colon here\r\n:5\r\nx:1.\r\ny:.\r\nz:1e\r\nw:--1\r\nv:0x10\r\nu:inf\r\nt:nan\r\n",
                      "# HELP redis_x INFO Server x\n# TYPE redis_x gauge\nredis_x 1.\n");
    expect_conversion("", "");
    expect_conversion("# Keyspace\r\n\r\n", "");
}

static void test_keyspace(void **state) {
    (void)state;
    /* LF line ends too; each metric's samples grouped although INFO interleaves them */
    expect_conversion("# Keyspace\ndb0:keys=3,expires=1,avg_ttl=0\ndb12:keys=7,expires=0,avg_ttl=250\n",
                      "# HELP redis_db_keys INFO Keyspace db0 keys\n# TYPE redis_db_keys gauge\n"
                      "redis_db_keys{db=\"db0\"} 3\nredis_db_keys{db=\"db12\"} 7\n"
                      "# HELP redis_db_expires INFO Keyspace db0 expires\n# TYPE redis_db_expires gauge\n"
                      "redis_db_expires{db=\"db0\"} 1\nredis_db_expires{db=\"db12\"} 0\n"
                      "# HELP redis_db_avg_ttl INFO Keyspace db0 avg_ttl\n# TYPE redis_db_avg_ttl gauge\n"
                      "redis_db_avg_ttl{db=\"db0\"} 0\nredis_db_avg_ttl{db=\"db12\"} 250\n");
}

static void test_commandstats(void **state) {
    (void)state;
    char *s = convert("# Commandstats\r\n"
                      "cmdstat_get:calls=2,usec=15,usec_per_call=7.50,rejected_calls=1,failed_calls=0\r\n"
                      "cmdstat_client|list:calls=1,usec=2500000,usec_per_call=2500000.00,rejected_calls=0,failed_calls=3\r\n");
    expect_line(s, "# TYPE redis_commands_total counter");
    expect_line(s, "redis_commands_total{cmd=\"get\"} 2");
    expect_line(s, "redis_commands_total{cmd=\"client|list\"} 1");
    expect_line(s, "# TYPE redis_commands_duration_seconds_total counter");
    expect_line(s, "redis_commands_duration_seconds_total{cmd=\"get\"} 0.000015");
    expect_line(s, "redis_commands_duration_seconds_total{cmd=\"client|list\"} 2.500000");
    expect_line(s, "redis_commands_rejected_calls_total{cmd=\"get\"} 1");
    expect_line(s, "redis_commands_failed_calls_total{cmd=\"client|list\"} 3");
    expect_line(s, "# TYPE redis_commands_usec_per_call gauge");
    expect_line(s, "redis_commands_usec_per_call{cmd=\"get\"} 7.50");
    assert_null(strstr(s, "redis_cmdstat"));
    free(s);
}

static void test_errorstats_latencystats(void **state) {
    (void)state;
    char *s = convert("# Errorstats\r\nerrorstat_ERR:count=3\r\nerrorstat_WRONGTYPE:count=1\r\n\r\n"
                      "# Latencystats\r\nlatency_percentiles_usec_set:p50=1.003,p99=2.007,p99.9=40.191\r\n");
    expect_line(s, "# TYPE redis_errors_total counter");
    expect_line(s, "redis_errors_total{err=\"ERR\"} 3");
    expect_line(s, "redis_errors_total{err=\"WRONGTYPE\"} 1");
    expect_line(s, "# TYPE redis_latency_percentiles_usec gauge");
    expect_line(s, "redis_latency_percentiles_usec{cmd=\"set\",quantile=\"0.5\"} 1.003");
    expect_line(s, "redis_latency_percentiles_usec{cmd=\"set\",quantile=\"0.99\"} 2.007");
    expect_line(s, "redis_latency_percentiles_usec{cmd=\"set\",quantile=\"0.999\"} 40.191");
    free(s);
}

static void test_ringkv_threads(void **state) {
    (void)state;
    char *s = convert("# ringkv\r\nthreads:2\r\n"
                      "thread0:cpu=0,connections=3,commands=10,syscalls_per_command=0.5000,buffer_trims=0\r\n"
                      "thread1:cpu=-1,connections=0,commands=4,syscalls_per_command=1.2500,buffer_trims=2\r\n");
    expect_line(s, "redis_threads 2");
    expect_line(s, "# TYPE redis_thread_cpu gauge");
    expect_line(s, "redis_thread_cpu{thread=\"1\"} -1");
    expect_line(s, "# TYPE redis_thread_connections gauge");
    expect_line(s, "redis_thread_connections{thread=\"0\"} 3");
    expect_line(s, "# TYPE redis_thread_commands counter");
    expect_line(s, "redis_thread_commands{thread=\"0\"} 10");
    expect_line(s, "redis_thread_commands{thread=\"1\"} 4");
    expect_line(s, "# TYPE redis_thread_syscalls_per_command gauge");
    expect_line(s, "redis_thread_syscalls_per_command{thread=\"1\"} 1.2500");
    expect_line(s, "# TYPE redis_thread_buffer_trims counter");
    free(s);
}

/* Names keep [a-zA-Z0-9_:]; other lists become redis_<field>_<key>. */
static void test_names_sanitized(void **state) {
    (void)state;
    char *s = convert("# Odd\r\nweird-name.x:5\r\nwith space:6\r\nns:sub:7\r\nfoo-bar:a.b=1,c=x,d=2\r\n"
                      "caf\xc3\xa9:8\r\n");
    expect_line(s, "redis_weird_name_x 5");
    expect_line(s, "redis_with_space 6");
    expect_line(s, "redis_foo_bar_a_b 1");
    expect_line(s, "redis_foo_bar_d 2");
    expect_line(s, "redis_caf__ 8");
    assert_null(strstr(s, "redis_foo_bar_c "));
    assert_null(strstr(s, "redis_ns"));   /* the first colon ends the field: "sub:7" is no number */
    for (const char *p = s; *p; p++) {   /* every sample's name is clean */
        const char *eol = strchr(p, '\n');
        if (*p != '#') {
            for (const char *q = p; *q != ' ' && *q != '{'; q++)
                assert_true((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
                            *q == '_' || *q == ':');
        }
        p = eol;
    }
    free(s);
}

static void test_escaping(void **state) {
    (void)state;
    char *s = convert("# Commandstats\r\ncmdstat_a\"b\\c:calls=1\r\n\r\n# Errorstats\r\nerrorstat_E\\\"X:count=2\r\n"
                      "# Se\\ction\r\nback\\slash:3\r\n");
    expect_line(s, "redis_commands_total{cmd=\"a\\\"b\\\\c\"} 1");
    expect_line(s, "redis_errors_total{err=\"E\\\\\\\"X\"} 2");
    expect_line(s, "# HELP redis_back_slash INFO Se\\\\ction back\\\\slash");
    expect_line(s, "redis_back_slash 3");
    free(s);
}

/* The format's rules over a whole INFO text: every metric has one HELP
 * and one TYPE, before its samples, and its samples in one group. */
static void test_grouping_whole_info(void **state) {
    (void)state;
    const char *info =
        "# Server\r\nredis_version:7.0.15\r\nprocess_id:12\r\ntcp_port:6379\r\n\r\n"
        "# Clients\r\nconnected_clients:3\r\nmaxclients:10000\r\n\r\n"
        "# Memory\r\nused_memory:229512\r\nused_memory_human:224.13K\r\nmem_fragmentation_ratio:31.86\r\n\r\n"
        "# Stats\r\ntotal_connections_received:5\r\ntotal_commands_processed:4\r\nkeyspace_hits:0\r\n\r\n"
        "# Commandstats\r\ncmdstat_select:calls=1,usec=5,usec_per_call=5.27,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_get:calls=1,usec=3,usec_per_call=3.30,rejected_calls=0,failed_calls=0\r\n\r\n"
        "# Errorstats\r\nerrorstat_ERR:count=1\r\n\r\n"
        "# Latencystats\r\nlatency_percentiles_usec_select:p50=5.631,p99=5.631,p99.9=5.631\r\n"
        "latency_percentiles_usec_get:p50=3.327,p99=3.327,p99.9=3.327\r\n\r\n"
        "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\ndb3:keys=2,expires=2,avg_ttl=0\r\n\r\n"
        "# ringkv\r\nthreads:2\r\nthread0:cpu=0,connections=1,commands=3\r\nthread1:cpu=1,connections=0,commands=1";
    char *s = convert(info);
    char seen[64][128];
    int nseen = 0;
    char current[128] = "";
    for (char *line = s; *line;) {
        char *eol = strchr(line, '\n');
        assert_non_null(eol);
        *eol = '\0';
        char name[128];
        if (strncmp(line, "# HELP ", 7) == 0) {
            sscanf(line + 7, "%127s", name);
            for (int i = 0; i < nseen; i++) assert_string_not_equal(seen[i], name);
            assert_true(nseen < 64);
            strcpy(seen[nseen++], name);
            strcpy(current, name);
            char *next = eol + 1;   /* TYPE follows at once */
            char want[160];
            snprintf(want, sizeof want, "# TYPE %s ", name);
            assert_memory_equal(next, want, strlen(want));
        } else if (line[0] != '#') {
            size_t n = strcspn(line, "{ ");
            assert_int_equal(n, strlen(current));
            assert_memory_equal(line, current, n);
            const char *value = strrchr(line, ' ') + 1;
            char *end;
            strtod(value, &end);
            assert_true(*value && *end == '\0');
        }
        line = eol + 1;
    }
    assert_true(nseen > 20);
    free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_figures),
        cmocka_unit_test(test_text_left_out),
        cmocka_unit_test(test_keyspace),
        cmocka_unit_test(test_commandstats),
        cmocka_unit_test(test_errorstats_latencystats),
        cmocka_unit_test(test_ringkv_threads),
        cmocka_unit_test(test_names_sanitized),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_grouping_whole_info),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
