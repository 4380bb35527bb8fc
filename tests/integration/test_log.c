/*
 * The server log against the real binary: with logfile set and loglevel
 * notice, the file gets the start lines (the pid, "Ready to accept
 * connections" once), every line in Redis's format, redis.log() lines by
 * loglevel (changed by CONFIG SET), and at SIGTERM Redis's shutdown lines;
 * pidfile holds the pid while the server runs and is gone after. With
 * always-show-logo the banner on stdout names the port and " PID: <pid>",
 * which Redis's test framework waits for; SHUTDOWN logs its lines too; a
 * logfile that cannot be opened stops the start.
 *
 * A line that is written after the server answers (Ready to accept) is
 * waited for by a bounded number of polls, never by a duration.
 */
#include "harness.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define POLLS 500
#define POLL_MS 10

static char *file_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *all = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&all, &len);
    char chunk[4096];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;) fwrite(chunk, 1, n, mem);
    fclose(mem);
    fclose(f);
    return all;
}

static int count_in(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Poll (bounded) until the file holds needle. */
static bool wait_for_text(const char *path, const char *needle)
{
    for (int i = 0; i < POLLS; i++) {
        char *t = file_text(path);
        bool found = t && strstr(t, needle);
        free(t);
        if (found) return true;
        h_sleep_ms(POLL_MS);
    }
    return false;
}

static void must_have(const char *path, const char *needle)
{
    char *t = file_text(path);
    if (!t || !strstr(t, needle)) h_fail("no '%s' in %s:\n%s", needle, path, t ? t : "(no file)");
    free(t);
}

static void must_not_have(const char *path, const char *needle)
{
    char *t = file_text(path);
    if (t && strstr(t, needle)) h_fail("'%s' in %s:\n%s", needle, path, t);
    free(t);
}

/* Every line is Redis's "PID:M DD Mon YYYY HH:MM:SS.mmm C message", at
 * notice or warning. */
static void lines_well_formed(const char *path, int pid)
{
    char *t = file_text(path);
    assert_non_null(t);
    char pattern[160];
    snprintf(pattern, sizeof pattern,
             "^%d:M [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} [*#] [^ ]", pid);
    regex_t re;
    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    int lines = 0;
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        if (regexec(&re, line, 0, NULL, 0) != 0) h_fail("malformed log line: '%s'", line);
        lines++;
    }
    regfree(&re);
    free(t);
    assert_true(lines >= 4);
}

static void test_logfile_notice(void **state)
{
    (void)state;
    char logfile[128], pidfile[128], needle[96];
    snprintf(logfile, sizeof logfile, "/tmp/ringkv-log-%d.log", (int)getpid());
    snprintf(pidfile, sizeof pidfile, "/tmp/ringkv-log-%d.pid", (int)getpid());
    unlink(logfile);
    unlink(pidfile);
    const char *extra[] = { "--logfile", logfile, "--loglevel", "notice", "--pidfile", pidfile, NULL };
    struct server s;
    assert_int_equal(server_start(&s, extra), 0);
    if (!wait_for_text(logfile, "Ready to accept connections")) must_have(logfile, "Ready to accept connections");

    /* the start */
    snprintf(needle, sizeof needle, h_redis_mode() ? "pid=%d," : " PID: %d", (int)s.pid);
    must_have(logfile, needle);
    snprintf(needle, sizeof needle, "Running mode=standalone, port=%d", s.port);
    must_have(logfile, needle);
    must_have(logfile, "Server initialized");
    char *t = file_text(logfile);
    assert_int_equal(count_in(t, "Ready to accept connections"), 1);
    free(t);
    must_not_have(s.log, "Ready to accept");   /* stdout has none of it */

    /* the pid file */
    char *pid_text = file_text(pidfile);
    assert_non_null(pid_text);
    snprintf(needle, sizeof needle, "%d\n", (int)s.pid);
    assert_string_equal(pid_text, needle);
    free(pid_text);

    /* logfile is read-only at run time; loglevel filters redis.log() */
    redisContext *c = h_connect(&s);
    redisReply *r = cmd(c, "CONFIG GET logfile");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[1]->str, logfile);
    freeReplyObject(r);
    expect_error_prefix(cmd(c, "CONFIG SET logfile /tmp/other.log"), "ERR CONFIG SET failed");
    expect_nil(cmd(c, "EVAL %s 0", "redis.log(redis.LOG_VERBOSE, 'verbose-line')"));
    expect_nil(cmd(c, "EVAL %s 0", "redis.log(redis.LOG_NOTICE, 'notice-line')"));
    OK(c, "CONFIG SET loglevel warning");
    expect_nil(cmd(c, "EVAL %s 0", "redis.log(redis.LOG_NOTICE, 'notice-hidden')"));
    expect_nil(cmd(c, "EVAL %s 0", "redis.log(redis.LOG_WARNING, 'warning-line')"));
    OK(c, "CONFIG SET loglevel notice");
    redisFree(c);
    must_not_have(logfile, "verbose-line");
    must_have(logfile, " * notice-line\n");
    must_not_have(logfile, "notice-hidden");
    must_have(logfile, " # warning-line\n");

    /* the end */
    int pid = (int)s.pid;
    assert_int_equal(server_stop(&s), 0);
    must_have(logfile, "Received SIGTERM scheduling shutdown...\n");   /* Redis: from its signal handler */
    must_have(logfile, " # User requested shutdown...\n");
    must_have(logfile, "ready to exit, bye bye...\n");
    assert_int_equal(access(pidfile, F_OK), -1);
    if (!h_redis_mode()) lines_well_formed(logfile, pid);   /* Redis: 'C' before its pid is known, and its signal handler's lines */
    unlink(logfile);
}

/* Redis's test framework: " PID: <pid>" and the port in the banner on stdout. */
static void test_banner_on_stdout(void **state)
{
    (void)state;
    const char *extra[] = { "--always-show-logo", "yes", NULL };
    struct server s;
    assert_int_equal(server_start(&s, extra), 0);
    if (!wait_for_text(s.log, "Ready to accept")) must_have(s.log, "Ready to accept");
    char needle[64];
    snprintf(needle, sizeof needle, " PID: %d", (int)s.pid);
    must_have(s.log, needle);
    snprintf(needle, sizeof needle, "Port: %d", s.port);
    must_have(s.log, needle);
    struct raw *r = raw_connect(&s);
    raw_cmd(r, "SHUTDOWN NOSAVE");
    assert_true(raw_read_to_close(r, 10000));   /* no reply: the connection closes */
    raw_close(r);
    int st = 0;
    pid_t got = 0;
    for (int i = 0; i < POLLS * 2 && (got = waitpid(s.pid, &st, WNOHANG)) == 0; i++) h_sleep_ms(POLL_MS);
    assert_int_equal(got, s.pid);
    s.pid = 0;   /* reaped here */
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    must_have(s.log, "User requested shutdown...");
    must_have(s.log, "ready to exit, bye bye...");
    must_not_have(s.log, "Received SIGTERM");
    unlink(s.log);
    rmdir(s.dir);
}

/* As Redis: a log file that cannot be opened is a configuration error. */
static void test_bad_logfile_refused(void **state)
{
    (void)state;
    const char *bin = h_redis_mode() ? "redis-server"
                                     : (getenv("RINGKV_BIN") ? getenv("RINGKV_BIN") : "build/ringkv");
    char out[128], command[512];
    snprintf(out, sizeof out, "/tmp/ringkv-log-refused-%d.txt", (int)getpid());
    snprintf(command, sizeof command, "timeout 10 %s --port 0 --logfile /nonexistent-dir/ringkv.log >%s 2>&1",
             bin, out);
    int st = system(command);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    must_have(out, "FATAL CONFIG FILE ERROR");
    must_have(out, "Can't open the log file: No such file or directory");
    unlink(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logfile_notice),
        cmocka_unit_test(test_banner_on_stdout),
        cmocka_unit_test(test_bad_logfile_refused),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL) + h_failures();
}
