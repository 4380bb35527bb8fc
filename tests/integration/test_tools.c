/*
 * The stock Redis tools against the server: redis-benchmark (pipelined,
 * every test reports a rate, no warnings, and the data it leaves behind is
 * exactly right) and redis-cli (one-shot, --no-raw, --pipe, --scan, and the
 * interactive mode, which loads COMMAND DOCS for its hints).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

struct run { int status; char *out; size_t outlen; char *err; };

/* The file's contents and length ("" when it cannot be read). */
static char *slurp(const char *path, size_t *len)
{
    char *p = h_read_file(path, len);
    if (!p) { *len = 0; p = strdup(""); }
    return p;
}

/* Run a shell command line with a time limit; stdin from `input` (or /dev/null). */
static struct run run_sh(const char *cmdline, const char *input, int timeout_s)
{
    char out[96], err[96], in[96], sh[8192];
    snprintf(out, sizeof out, "/tmp/ringkv-tools-%d.out", (int)getpid());
    snprintf(err, sizeof err, "/tmp/ringkv-tools-%d.err", (int)getpid());
    snprintf(in, sizeof in, "/tmp/ringkv-tools-%d.in", (int)getpid());
    FILE *f = fopen(in, "w");
    if (input) fputs(input, f);
    fclose(f);
    snprintf(sh, sizeof sh, "timeout -k 5 %d %s <%s >%s 2>%s", timeout_s, cmdline, in, out, err);
    struct run r = { 0 };
    int st = system(sh);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    size_t n;
    r.out = slurp(out, &r.outlen);
    r.err = slurp(err, &n);
    unlink(out);
    unlink(err);
    unlink(in);
    return r;
}

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

static void test_redis_benchmark(void **state)
{
    struct fixture *f = FIX(state);
    char line[512];
    snprintf(line, sizeof line,
             "redis-benchmark -p %d -t ping,set,get,incr,mset -P 64 -n 20000 -q", f->srv.port);
    struct run r = run_sh(line, NULL, 120);
    if (r.status != 0) h_fail("redis-benchmark exited with %d\nstdout: %s\nstderr: %s", r.status, r.out, r.err);
    if (strstr(r.err, "WARNING") || strstr(r.out, "WARNING"))
        h_fail("redis-benchmark warned: %s%s", r.err, r.out);
    if (strstr(r.err, "rror") || strstr(r.out, "rror"))
        h_fail("redis-benchmark reported an error: %s%s", r.err, r.out);

    const char *names[] = { "PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "MSET (10 keys)" };
    bool seen[6] = { 0 };
    /* progress lines end in \r; results in \n */
    char *save = NULL;
    for (char *tok = strtok_r(r.out, "\r\n", &save); tok; tok = strtok_r(NULL, "\r\n", &save)) {
        while (*tok == ' ') tok++;
        char *rate = strstr(tok, " requests per second");
        if (!rate) continue;
        char *colon = strstr(tok, ": ");
        assert_non_null(colon);
        *colon = 0;
        double rps = atof(colon + 2);
        bool known = false;
        for (int i = 0; i < 6; i++)
            if (strcmp(tok, names[i]) == 0) { seen[i] = true; known = true; }
        if (!known) h_fail("unexpected redis-benchmark test '%s'", tok);
        if (!(rps > 100)) h_fail("%s: %s requests per second", tok, colon + 2);
    }
    for (int i = 0; i < 6; i++)
        if (!seen[i]) h_fail("redis-benchmark printed no result for %s", names[i]);
    run_free(&r);

    /* the benchmark's own keys: 20000 INCRs on one counter, plus what the
     * 50 clients had in flight (at most one pipeline of 64 each) when the
     * count was reached */
    redisContext *c = f->c;
    redisReply *rep = cmd(c, "GET counter:__rand_int__");
    assert_int_equal(rep->type, REDIS_REPLY_STRING);
    long long incrs = atoll(rep->str);
    freeReplyObject(rep);
    if (incrs < 20000 || incrs > 20000 + 50 * 64) h_fail("counter:__rand_int__ is %lld", incrs);
    INT(c, 3, "STRLEN key:__rand_int__");   /* -d 3: three random bytes */
}

static void test_redis_benchmark_csv_resp3(void **state)
{
    struct fixture *f = FIX(state);
    char line[512];
    snprintf(line, sizeof line,
             "redis-benchmark -p %d -3 -t set,get -r 100000 -P 16 -n 20000 --csv", f->srv.port);
    struct run r = run_sh(line, NULL, 120);
    if (r.status != 0) h_fail("redis-benchmark exited with %d: %s", r.status, r.err);
    if (strstr(r.err, "WARNING")) h_fail("redis-benchmark warned: %s", r.err);
    if (strncmp(r.out, "\"test\",\"rps\",", 13) != 0) h_fail("no CSV header: %s", r.out);
    assert_non_null(strstr(r.out, "\n\"SET\",\""));
    assert_non_null(strstr(r.out, "\n\"GET\",\""));
    run_free(&r);
    /* -r spreads the keys: many were written */
    redisReply *rep = cmd(f->c, "DBSIZE");
    assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
    assert_true(rep->integer > 1000);
    freeReplyObject(rep);
}

static void test_redis_cli_oneshot(void **state)
{
    struct fixture *f = FIX(state);
    char line[512];
    struct { const char *args, *out; } cases[] = {
        { "set a b", "OK\n" },
        { "get a", "b\n" },
        { "--no-raw get a", "\"b\"\n" },
        { "--no-raw get nosuch", "(nil)\n" },
        { "incr n", "1\n" },
        { "--no-raw incr n", "(integer) 2\n" },
        { "--no-raw mget a nosuch", "1) \"b\"\n2) (nil)\n" },
        { "--no-raw incr a", "(error) ERR value is not an integer or out of range\n" },
        { "-n 3 set a db3", "OK\n" },
        { "-n 3 get a", "db3\n" },
        { "get a", "b\n" },
        { "-3 --no-raw get nosuch", "(nil)\n" },
        { "ping", "PONG\n" },
        { "--no-raw nosuchcommand x", "(error) ERR unknown command 'nosuchcommand', with args beginning with: 'x' \n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(line, sizeof line, "redis-cli -p %d %s", f->srv.port, cases[i].args);
        struct run r = run_sh(line, NULL, 30);
        if (r.status != 0 || strcmp(r.out, cases[i].out) != 0) {
            char *e = h_escape(cases[i].out, strlen(cases[i].out)), *g = h_escape(r.out, r.outlen);
            h_fail("%s: status %d, expected \"%s\" got \"%s\" (stderr: %s)", line, r.status, e, g, r.err);
        }
        run_free(&r);
    }
    /* INFO and COMMAND DOCS go through */
    snprintf(line, sizeof line, "redis-cli -p %d info server", f->srv.port);
    struct run r = run_sh(line, NULL, 30);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "redis_version:"));
    run_free(&r);
    snprintf(line, sizeof line, "redis-cli -p %d --no-raw command docs get", f->srv.port);
    r = run_sh(line, NULL, 30);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"summary\""));
    run_free(&r);
}

static void test_redis_cli_pipe_and_scan(void **state)
{
    struct fixture *f = FIX(state);
    /* a RESP stream through --pipe, as the memory benchmark loads data */
    size_t cap = 10000 * 64, len = 0;
    char *in = malloc(cap);
    for (int i = 0; i < 10000; i++)
        len += (size_t)snprintf(in + len, cap - len,
                                "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$16\r\nvalue-%010d\r\n", i, i);
    char line[256];
    snprintf(line, sizeof line, "redis-cli -p %d --pipe", f->srv.port);
    struct run r = run_sh(line, in, 60);
    free(in);
    if (r.status != 0 || !strstr(r.out, "errors: 0, replies: 10000"))
        h_fail("redis-cli --pipe: status %d: %s %s", r.status, r.out, r.err);
    run_free(&r);
    INT(f->c, 10000, "DBSIZE");
    BULK(f->c, "value-0000004321", "GET key:000000004321");

    OK(f->c, "SET other 1");
    snprintf(line, sizeof line, "redis-cli -p %d --scan --pattern 'key:00000000999*'", f->srv.port);
    r = run_sh(line, NULL, 60);
    assert_int_equal(r.status, 0);
    /* key:000000009990 .. key:000000009999 */
    int lines = 0;
    for (char *p = r.out; (p = strchr(p, '\n')); p++) lines++;
    if (lines != 10) h_fail("--scan found %d keys: %s", lines, r.out);
    run_free(&r);
}

static void test_redis_cli_interactive(void **state)
{
    struct fixture *f = FIX(state);
    /* a pty, TERM=dumb (no escape sequences): the REPL loads COMMAND DOCS for
     * its hints at startup, then runs what we type */
    char line[256];
    snprintf(line, sizeof line, "env TERM=dumb script -qec 'redis-cli -p %d' /dev/null", f->srv.port);
    struct run r = run_sh(line, "set ia ib\nget ia\nquit\n", 30);
    if (r.status != 0 || !strstr(r.out, "OK") || !strstr(r.out, "\"ib\""))
        h_fail("interactive redis-cli: status %d: %s %s", r.status, r.out, r.err);
    run_free(&r);
    BULK(f->c, "ib", "GET ia");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_redis_benchmark, h_flushall),
        cmocka_unit_test_setup(test_redis_benchmark_csv_resp3, h_flushall),
        cmocka_unit_test_setup(test_redis_cli_oneshot, h_flushall),
        cmocka_unit_test_setup(test_redis_cli_pipe_and_scan, h_flushall),
        cmocka_unit_test_setup(test_redis_cli_interactive, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("tools", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
