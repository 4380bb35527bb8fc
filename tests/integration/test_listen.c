/*
 * A second server on a port that one already listens on must refuse to
 * start, as Redis does ("bind: Address already in use", exit status 1),
 * whatever its thread count, instead of joining the first one's SO_REUSEPORT
 * group and taking part of its connections. And the port must be free again
 * as soon as the first one has stopped, connections in TIME_WAIT or not.
 * CONFIG SET port and bind move every thread's listeners (a taken port or a
 * bad address is refused and changes nothing), bind "" stops TCP, and a
 * unixsocket client is served all along.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
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
    /* it listens before its (empty) load is over: -LOADING until then */
    for (int tries = 0;; tries++) {
        redisReply *r = redisCommand(c2, "PING");
        assert_non_null(r);
        bool loading = r->type == REDIS_REPLY_ERROR && strncmp(r->str, "LOADING", 7) == 0;
        if (!loading) {
            assert_int_equal(r->type, REDIS_REPLY_STATUS);
            assert_string_equal(r->str, "PONG");
        }
        freeReplyObject(r);
        if (!loading) break;
        assert_true(tries < 1000);
        sleep_ms(10);
    }
    redisFree(c2);
    assert_int_equal(server_stop(&b), 0);
    unlink(log);
}

/* A server stopped with more clients connected than its submission queue
 * holds exits cleanly: their teardown submits nothing to the ring, which
 * the main thread may not use (it once did, and crashed there). */
static void test_stop_with_many_clients(void **state)
{
    (void)state;
    int NC = 4200 * h_threads();   /* past each worker's 4096 SQ entries */
    if (h_raise_nofile(NC + 200) < NC + 100) {
        print_message("RLIMIT_NOFILE too low for %d connections: skipped\n", NC);
        skip();
    }
    struct server s;
    assert_int_equal(server_start(&s, NULL), 0);
    struct raw **conns = calloc(NC, sizeof *conns);
    for (int i = 0; i < NC; i++) conns[i] = raw_connect(&s);
    for (int i = 0; i < NC; i++) raw_cmd(conns[i], "PING");
    for (int i = 0; i < NC; i++) raw_expect(conns[i], "+PONG\r\n");
    assert_int_equal(server_stop(&s), 0);
    for (int i = 0; i < NC; i++) raw_close(conns[i]);
    free(conns);
}

/* A loopback port nothing listens on, or (hold) one this process holds,
 * listening, until *held is closed. */
static int loopback_port(int *held)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    if (held) *held = fd;
    else close(fd);
    return ntohs(sa.sin_port);
}

/* Whether a TCP client on port gets PONG. */
static bool answers(int port)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    bool ok = false;
    if (c && !c->err) {
        redisReply *r = redisCommand(c, "PING");
        ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
        if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    return ok;
}

/* Connections to port are refused (polled, bounded, though CONFIG SET's
 * reply now waits for every thread: test_move_refuses_at_once checks that). */
static void expect_refused(int port)
{
    for (int i = 0; i < 500; i++) {
        redisContext *c = redisConnect("127.0.0.1", port);
        bool refused = c && c->err;
        if (c) redisFree(c);
        if (refused) return;
        sleep_ms(10);
    }
    h_fail("port %d still takes connections", port);
}

static void test_listeners_move(void **state)
{
    (void)state;
    char sock[64], want[160];
    snprintf(sock, sizeof sock, "/tmp/ringkv-listen-%d.sock", (int)getpid());
    const char *extra[] = { "--unixsocket", sock, NULL };
    struct server s;
    assert_int_equal(server_start(&s, extra), 0);
    redisContext *u = redisConnectUnix(sock);
    assert_true(u && !u->err);
    STATUS(u, "PONG", "PING");
    redisReply *r = cmd(u, "CLIENT LIST");
    snprintf(want, sizeof want, "addr=%s:0 laddr=%s:0 ", sock, sock);
    if (!strstr(r->str, want) || !strstr(r->str, " flags=U ")) h_fail("unix client not shown as such: %s", r->str);
    freeReplyObject(r);

    /* the port moves for every thread */
    int old_port = s.port, new_port = loopback_port(NULL);
    OK(u, "CONFIG SET port %d", new_port);
    for (int i = 0; i < 8; i++) assert_true(answers(new_port));
    expect_refused(old_port);

    /* a port that another socket holds is refused, and nothing moves */
    int held, taken = loopback_port(&held);
    ERR(u, "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. "
           "Check server logs.", "CONFIG SET port %d", taken);
    close(held);
    assert_true(answers(new_port));
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", new_port);
    expect_bulks(cmd(u, "CONFIG GET port"), 2, "port", port_text);

    /* no address: no TCP, the unix socket still serves; and back */
    ERR(u, "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.",
        "CONFIG SET bind 999.999.999.999");
    OK(u, "CONFIG SET bind %s", "");
    expect_refused(new_port);
    STATUS(u, "PONG", "PING");
    OK(u, "CONFIG SET bind %s", "127.0.0.1 -::1");
    for (int i = 0; i < 8; i++) assert_true(answers(new_port));
    redisFree(u);
    assert_int_equal(server_stop(&s), 0);
    assert_int_equal(access(sock, F_OK), -1);   /* the socket file goes with the server */
}

/* CONFIG SET's reply leaves only once every thread has moved: a client
 * that connects right after it is refused on the old port at the first
 * try, never accepted by a thread still listening there (and then reset).
 * Each round moves the port and tries at once, many times over. */
static void test_move_refuses_at_once(void **state)
{
    (void)state;
    struct server s;
    assert_int_equal(server_start(&s, NULL), 0);
    int port = s.port;
    redisContext *c = redisConnect("127.0.0.1", port);
    assert_true(c && !c->err);
    for (int round = 0; round < 100; round++) {
        int next = loopback_port(NULL);
        OK(c, "CONFIG SET port %d", next);
        redisContext *old = redisConnect("127.0.0.1", port);
        bool refused = old && old->err;
        if (old) redisFree(old);
        if (!refused) h_fail("round %d: port %d took a connection after CONFIG SET port %d", round, port, next);
        assert_true(answers(next));
        port = next;
    }
    redisFree(c);
    assert_int_equal(server_stop(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_second_server_refused, h_noop_setup),
    };
    const struct CMUnitTest restart_tests[] = {
        cmocka_unit_test(test_port_free_after_stop),
        cmocka_unit_test(test_stop_with_many_clients),
        cmocka_unit_test(test_listeners_move),
        cmocka_unit_test(test_move_refuses_at_once),
    };
    int rc = cmocka_run_group_tests_name("listen", tests, h_group_setup, h_group_teardown);
    rc += cmocka_run_group_tests_name("restart", restart_tests, NULL, NULL);
    return rc + h_failures();
}
