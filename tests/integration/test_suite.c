/*
 * redis-benchmark's default suite (no -t) against the server, at -P 1 and
 * -P 16 (issue 3): every test line of the suite appears and reports a rate,
 * and nothing reports an error. While the server lacks sorted sets (COMMAND
 * INFO zadd / zpopmin answers a nil entry) the test is skipped, not failed.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

/* The labels redis-benchmark 7.0 prints with -q, in its order. */
static const char *const suite[] = {
    "PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH",
    "LPOP", "RPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN",
    "LPUSH (needed to benchmark LRANGE)",
    "LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)",
    "LRANGE_500 (first 500 elements)", "LRANGE_600 (first 600 elements)",
    "MSET (10 keys)",
};
#define NSUITE (sizeof suite / sizeof suite[0])

struct run { int status; char *out; char *err; };

/* The file's contents ("" when it cannot be read). */
static char *slurp(const char *path)
{
    char *p = h_read_file(path, NULL);
    return p ? p : strdup("");
}

/* Run a shell command line with a time limit, stdin from /dev/null. */
static struct run run_sh(const char *cmdline, int timeout_s)
{
    char out[96], err[96], sh[1024];
    snprintf(out, sizeof out, "/tmp/ringkv-suite-%d.out", (int)getpid());
    snprintf(err, sizeof err, "/tmp/ringkv-suite-%d.err", (int)getpid());
    snprintf(sh, sizeof sh, "timeout -k 5 %d %s </dev/null >%s 2>%s", timeout_s, cmdline, out, err);
    struct run r = { 0 };
    int st = system(sh);
    r.status = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(out);
    r.err = slurp(err);
    unlink(out);
    unlink(err);
    return r;
}

/* COMMAND INFO name answers [nil] when the server does not know the command. */
static bool has_command(redisContext *c, const char *name)
{
    redisReply *r = cmd(c, "COMMAND INFO %s", name);
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 1) {
        char *s = reply_repr(r);
        freeReplyObject(r);
        h_fail("COMMAND INFO %s: unexpected reply %s", name, s);
    }
    bool known = r->element[0]->type != REDIS_REPLY_NIL;
    freeReplyObject(r);
    return known;
}

/* One run of the default suite; every line must be there with a rate. */
static void run_suite(int port, int pipeline, int requests, int clients)
{
    char line[256];
    snprintf(line, sizeof line, "redis-benchmark -p %d -q -n %d -c %d -P %d",
             port, requests, clients, pipeline);
    struct run r = run_sh(line, 120);
    if (r.status != 0)
        h_fail("%s: exit status %d\nstdout: %s\nstderr: %s", line, r.status, r.out, r.err);
    /* "Error from server: ..." (redis-benchmark then exits), warnings */
    if (strstr(r.err, "rror") || strstr(r.out, "rror") ||
        strstr(r.err, "WARNING") || strstr(r.out, "WARNING"))
        h_fail("%s reported a problem:\nstdout: %s\nstderr: %s", line, r.out, r.err);

    bool seen[NSUITE] = { 0 };
    /* progress lines end in \r, results in \n */
    char *save = NULL;
    for (char *tok = strtok_r(r.out, "\r\n", &save); tok; tok = strtok_r(NULL, "\r\n", &save)) {
        while (*tok == ' ') tok++;
        if (!*tok || strstr(tok, "rps=")) continue;   /* blank or progress */
        char *colon = strstr(tok, ": ");
        if (!colon) h_fail("-P %d: unexpected output line '%s'", pipeline, tok);
        *colon = 0;
        const char *rest = colon + 2;
        size_t i = 0;
        while (i < NSUITE && strcmp(tok, suite[i]) != 0) i++;
        if (i == NSUITE) h_fail("-P %d: unexpected redis-benchmark test '%s: %s'", pipeline, tok, rest);
        if (seen[i]) h_fail("-P %d: '%s' reported twice", pipeline, tok);
        if (!strstr(rest, " requests per second"))
            h_fail("-P %d: %s reported no rate: '%s'", pipeline, tok, rest);
        double rps = atof(rest);
        if (!(rps > 0)) h_fail("-P %d: %s: '%s'", pipeline, tok, rest);
        seen[i] = true;
    }
    for (size_t i = 0; i < NSUITE; i++)
        if (!seen[i])
            h_fail("-P %d: redis-benchmark printed no rate for %s\nstdout: %s\nstderr: %s",
                   pipeline, suite[i], r.out, r.err);
    free(r.out);
    free(r.err);
}

static void test_redis_benchmark_default_suite(void **state)
{
    struct fixture *f = FIX(state);
    if (!has_command(f->c, "zadd") || !has_command(f->c, "zpopmin")) {
        print_message("[  SKIP    ] the server has no ZADD/ZPOPMIN yet (COMMAND INFO answers nil): "
                      "redis-benchmark's default suite cannot run in full\n");
        skip();
    }
    run_suite(f->srv.port, 1, 2000, 20);
    run_suite(f->srv.port, 16, 20000, 50);

    /* what the suite leaves behind has the right types; the LRANGE tests
     * ran on a list of at least 600 elements (LPUSH of -n elements) */
    STATUS(f->c, "list", "TYPE mylist");
    STATUS(f->c, "hash", "TYPE myhash");
    STATUS(f->c, "string", "TYPE key:__rand_int__");
    expect_int_range(cmd(f->c, "LLEN mylist"), 600, 1000000);
    /* 20000 + 2000 INCRs, plus at most one pipeline of 16 per client in flight */
    redisReply *rep = cmd(f->c, "GET counter:__rand_int__");
    assert_int_equal(rep->type, REDIS_REPLY_STRING);
    long long incrs = atoll(rep->str);
    freeReplyObject(rep);
    if (incrs < 22000 || incrs > 22000 + 20 + 50 * 16) h_fail("counter:__rand_int__ is %lld", incrs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_redis_benchmark_default_suite, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("suite", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
