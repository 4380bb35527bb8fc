/*
 * The server log (log.h): Redis's line format for each level, the cut at
 * RK_LOG_MAX_LEN, the level filter (set directly and through config
 * loglevel), raw text, the fatal path, a log file opened for appending,
 * and threads writing at once without interleaving their lines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <regex.h>
#include <unistd.h>
#include <cmocka.h>

#include "ringkv/config.h"
#include "ringkv/log.h"

static char g_path[128];

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count(const char *text, const char *needle) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* A fresh, empty log file as the destination. */
static int fresh_log(void **state) {
    (void)state;
    unlink(g_path);
    assert_int_equal(rk_log_open(g_path), 0);
    rk_log_set_level(LL_NOTICE);
    return 0;
}

static void test_line_format(void **state) {
    (void)state;
    struct timeval tv = { .tv_sec = 1700000000, .tv_usec = 123456 };   /* 14 Nov 2023 22:13:20 UTC */
    char buf[256];
    static const char *const want[] = {
        "4242:M 14 Nov 2023 22:13:20.123 . hello\n",
        "4242:M 14 Nov 2023 22:13:20.123 - hello\n",
        "4242:M 14 Nov 2023 22:13:20.123 * hello\n",
        "4242:M 14 Nov 2023 22:13:20.123 # hello\n",
    };
    for (int level = LL_DEBUG; level <= LL_WARNING; level++) {
        size_t n = rk_log_format(buf, sizeof buf, level, 4242, &tv, "hello", 5);
        assert_int_equal(n, strlen(want[level]));
        assert_memory_equal(buf, want[level], n);
    }
    /* milliseconds keep their leading zeros */
    tv.tv_usec = 7000;
    size_t n = rk_log_format(buf, sizeof buf, LL_NOTICE, 1, &tv, "x", 1);
    buf[n] = '\0';
    assert_string_equal(buf, "1:M 14 Nov 2023 22:13:20.007 * x\n");
}

static void test_long_message_cut(void **state) {
    (void)state;
    struct timeval tv = { .tv_sec = 0, .tv_usec = 0 };
    static char msg[RK_LOG_MAX_LEN * 2], buf[RK_LOG_MAX_LEN * 3];
    memset(msg, 'a', sizeof msg);
    size_t n = rk_log_format(buf, sizeof buf, LL_WARNING, 1, &tv, msg, sizeof msg);
    const char *start = memchr(buf, '#', n) + 2;
    assert_int_equal(buf + n - 1 - start, RK_LOG_MAX_LEN);
    assert_int_equal(buf[n - 1], '\n');
    /* a buffer too small still ends in a newline */
    char small[16];
    n = rk_log_format(small, sizeof small, LL_WARNING, 1, &tv, msg, 100);
    assert_int_equal(n, sizeof small);
    assert_int_equal(small[n - 1], '\n');

    /* through rk_log: one line, cut */
    rk_log(LL_WARNING, "%s", "start");
    char *big = malloc(RK_LOG_MAX_LEN * 2 + 1);
    memset(big, 'b', RK_LOG_MAX_LEN * 2);
    big[RK_LOG_MAX_LEN * 2] = '\0';
    rk_log(LL_WARNING, "%s", big);
    free(big);
    char *text = slurp(g_path);
    assert_int_equal(count(text, "\n"), 2);
    char *second = strchr(text, '\n') + 1;
    assert_int_equal(strchr(second, '\n') - (strchr(second, '#') + 2), RK_LOG_MAX_LEN);
    free(text);
}

static void test_level_filter(void **state) {
    (void)state;
    rk_log_set_level(LL_WARNING);
    assert_false(rk_log_enabled(LL_NOTICE));
    assert_true(rk_log_enabled(LL_WARNING));
    rk_log(LL_DEBUG, "dropped-debug");
    rk_log(LL_VERBOSE, "dropped-verbose");
    rk_log(LL_NOTICE, "dropped-notice");
    rk_log(LL_WARNING, "kept-warning %d", 1);
    rk_log_raw(LL_NOTICE, "dropped-raw\n", 12);
    rk_log_raw(LL_WARNING, "kept-raw\n", 9);
    rk_log_set_level(LL_DEBUG);
    rk_log(LL_DEBUG, "kept-debug");
    rk_log(LL_VERBOSE, "kept-verbose");
    rk_log_set_level(LL_VERBOSE);
    rk_log(LL_DEBUG, "dropped-debug2");
    rk_log(LL_VERBOSE, "kept-verbose2");
    char *text = slurp(g_path);
    assert_null(strstr(text, "dropped"));
    assert_non_null(strstr(text, " # kept-warning 1\n"));
    assert_non_null(strstr(text, "\nkept-raw\n"));   /* raw: no prefix */
    assert_non_null(strstr(text, " . kept-debug\n"));
    assert_non_null(strstr(text, " - kept-verbose\n"));
    assert_non_null(strstr(text, " - kept-verbose2\n"));
    free(text);
}

/* loglevel, however it is set, is the log's level. */
static void test_config_loglevel(void **state) {
    (void)state;
    config_set_defaults();
    assert_int_equal(rk_log_level(), LL_NOTICE);
    struct slice argv[2] = { SLICE_LIT("loglevel"), SLICE_LIT("warning") };
    char *err = config_set(argv, 2, true);
    assert_null(err);
    assert_int_equal(rk_log_level(), LL_WARNING);
    argv[1] = SLICE_LIT("debug");
    assert_null(config_set(argv, 2, true));
    assert_int_equal(rk_log_level(), LL_DEBUG);
    assert_int_equal(config_load_text("loglevel verbose\n", NULL), 0);
    assert_int_equal(rk_log_level(), LL_VERBOSE);
    argv[1] = SLICE_LIT("loud");
    err = config_set(argv, 2, true);
    assert_non_null(err);
    free(err);
    assert_int_equal(rk_log_level(), LL_VERBOSE);
    config_set_defaults();
    assert_int_equal(rk_log_level(), LL_NOTICE);
}

static void test_fatal_and_reopen(void **state) {
    (void)state;
    rk_log_set_level(LL_WARNING);
    rk_log_fatal("Out Of Memory allocating 99 bytes!");
    char *text = slurp(g_path);
    assert_non_null(strstr(text, ":M "));
    assert_non_null(strstr(text, " # Out Of Memory allocating 99 bytes!\n"));
    free(text);
    /* a file that cannot be opened leaves the log where it was */
    assert_int_equal(rk_log_open("/nonexistent-dir/ringkv.log"), -1);
    rk_log(LL_WARNING, "still here");
    text = slurp(g_path);
    assert_non_null(strstr(text, " # still here\n"));
    free(text);
    /* appending: an earlier line stays when the file is opened again */
    assert_int_equal(rk_log_open(g_path), 0);
    rk_log(LL_WARNING, "after reopen");
    text = slurp(g_path);
    assert_non_null(strstr(text, "still here"));
    assert_non_null(strstr(text, "after reopen"));
    free(text);
}

#define THREADS 4
#define LINES 2000

static void *writer(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < LINES; i++)
        rk_log(LL_NOTICE, "thread %ld line %d %s", id, i, "with some padding to make the line longer than a word");
    return NULL;
}

/* Every line whole: one write per line, no lock. */
static void test_threads_do_not_interleave(void **state) {
    (void)state;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, writer, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    char *text = slurp(g_path);
    regex_t re;
    assert_int_equal(regcomp(&re,
                             "^[0-9]+:M [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} \\* "
                             "thread [0-9] line [0-9]+ with some padding to make the line longer than a word$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    int lines = 0, seen[THREADS] = { 0 };
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (regexec(&re, line, 0, NULL, 0) != 0) fail_msg("malformed line: %s", line);
        int id = strstr(line, "thread ")[7] - '0';
        assert_true(id >= 0 && id < THREADS);
        seen[id]++;
        lines++;
    }
    regfree(&re);
    free(text);
    assert_int_equal(lines, THREADS * LINES);
    for (int i = 0; i < THREADS; i++) assert_int_equal(seen[i], LINES);
}

int main(void) {
    setenv("TZ", "UTC", 1);   /* the format test's expected dates */
    snprintf(g_path, sizeof g_path, "/tmp/ringkv-unit-log-%d.log", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_format),
        cmocka_unit_test_setup(test_long_message_cut, fresh_log),
        cmocka_unit_test_setup(test_level_filter, fresh_log),
        cmocka_unit_test_setup(test_config_loglevel, fresh_log),
        cmocka_unit_test_setup(test_fatal_and_reopen, fresh_log),
        cmocka_unit_test_setup(test_threads_do_not_interleave, fresh_log),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rk_log_open(NULL);
    unlink(g_path);
    return rc;
}
