/*
 * A second server on a port that one already listens on must refuse to
 * start, as Redis does ("bind: Address already in use", exit status 1),
 * whatever its thread count, instead of joining the first one's SO_REUSEPORT
 * group and taking part of its connections. And the port must be free again
 * as soon as the first one has stopped, connections in TIME_WAIT or not.
 */
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_WAIT_MS 20000    /* a bound only: the refusal is immediate */

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Start a server on port with `threads` threads (redis-server in Redis
 * mode), its output going to log. */
static pid_t spawn_on(int port, int threads, const char *log)
{
    char p[16], t[16], dir[64];
    snprintf(p, sizeof p, "%d", port);
    snprintf(t, sizeof t, "%d", threads);
    /* a directory of its own: a dump.rdb another test left in the working
     * directory would be loaded (and PING answered -LOADING meanwhile) */
    snprintf(dir, sizeof dir, "/tmp/ringkv-listen-%d.d", (int)getpid());
    mkdir(dir, 0755);
    const char *bin = getenv("RINGKV_BIN") ? getenv("RINGKV_BIN") : "build/ringkv";
    const char *ringkv[] = { bin, "--port", p, "--bind", "127.0.0.1", "--threads", t, "--save", "", "--dir", dir, NULL };
    const char *redis[] = { "redis-server", "--port", p, "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no", "--dir", dir, NULL };
    const char *const *argv = h_redis_mode() ? redis : ringkv;

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); close(fd); }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Start a second server and wait for it to exit. Returns its wait status,
 * or -1 if it was still running at the bound (then it is killed). */
static int run_second(int port, int threads, const char *log)
{
    pid_t pid = spawn_on(port, threads, log);
    for (int waited = 0; waited < EXIT_WAIT_MS; waited += 10) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) return st;
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static bool log_has(const char *log, const char *needle)
{
    FILE *f = fopen(log, "r");
    if (!f) return false;
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

static void test_second_server_refused(void **state)
{
    struct fixture *fx = FIX(state);
    char log[128], want[128];
    snprintf(log, sizeof log, "/tmp/ringkv-listen-%d.log", (int)getpid());
    snprintf(want, sizeof want, "Could not create server TCP listening socket 127.0.0.1:%d: "
             "bind: Address already in use", fx->srv.port);

    static const int threads[] = { 1, 2, 4 };
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        int st = run_second(fx->srv.port, threads[i], log);
        if (st == -1) h_fail("a second server with %d threads started on a taken port", threads[i]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 1);
        if (!log_has(log, want)) h_fail("no '%s' in the second server's output", want);
    }
    unlink(log);

    /* The first one still has the port, every connection of it. */
    for (int i = 0; i < 20; i++) {
        redisContext *c = h_connect(&fx->srv);
        STATUS(c, "PONG", "PING");
        redisFree(c);
    }
}

/* Connections closed by the server leave its side in TIME_WAIT: a new
 * server on the port must still start. */
static void test_port_free_after_stop(void **state)
{
    (void)state;
    struct server a, b;
    assert_int_equal(server_start(&a, NULL), 0);
    redisContext *c = h_connect(&a);
    STATUS(c, "PONG", "PING");
    assert_int_equal(server_stop(&a), 0);
    redisFree(c);

    char log[128];
    snprintf(log, sizeof log, "/tmp/ringkv-listen-%d.log", (int)getpid());
    int port = a.port;
    pid_t pid = spawn_on(port, h_threads(), log);
    memset(&b, 0, sizeof b);
    b.pid = pid;
    b.port = port;
    b.redis = h_redis_mode();
    snprintf(b.log, sizeof b.log, "%s", log);
    redisContext *c2 = NULL;
    for (int waited = 0; waited < EXIT_WAIT_MS && !c2; waited += 20) {
        if (waitpid(pid, NULL, WNOHANG) == pid) h_fail("the new server exited: port still taken?");
        c2 = redisConnect("127.0.0.1", port);
        if (c2 && c2->err) { redisFree(c2); c2 = NULL; sleep_ms(20); }
    }
    if (!c2) h_fail("the new server never answered on port %d", port);
    STATUS(c2, "PONG", "PING");
    redisFree(c2);
    assert_int_equal(server_stop(&b), 0);
    unlink(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_second_server_refused, h_noop_setup),
    };
    const struct CMUnitTest restart_tests[] = {
        cmocka_unit_test(test_port_free_after_stop),
    };
    int rc = cmocka_run_group_tests_name("listen", tests, h_group_setup, h_group_teardown);
    rc += cmocka_run_group_tests_name("restart", restart_tests, NULL, NULL);
    return rc + h_failures();
}
