/*
 * CONFIG against the real binary: CONFIG GET * lists Redis 7.0's
 * parameters, setting every listed value back to itself works (Redis's
 * "CONFIG sanity"), CONFIG SET of several pairs is all or nothing with
 * Redis's error texts, and list-compress-depth keeps every list command
 * right on compressed lists while using less memory. Then servers started
 * with a config file plus options (include, save lines, aliases, values
 * beginning with "--"), and ones refused at start with Redis's message
 * and exit status 1.
 *
 * Every expected reply holds for redis-server 7.0.15 too
 * (RINGKV_TEST_REDIS=1), except the number of parameters, which counts
 * ringkv's own.
 */
#include "harness.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define START_BOUND_MS 20000   /* bounds only: nothing here is timed */

#include <netinet/in.h>
#include <sys/socket.h>

static const char *bin(void) { return getenv("RINGKV_BIN") ? getenv("RINGKV_BIN") : "build/ringkv"; }

/* ------------------------------------------------------------ CONFIG GET / SET */

static void test_config_get_all(void **state)
{
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "CONFIG GET *");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    /* Redis 7.0.15 lists 192 names; ringkv adds io-batch-wait-us,
     * io-iteration-budget-us and set-max-listpack-entries/value */
    assert_int_equal(r->elements / 2, h_redis_mode() ? 192 : 196);
    int found = 0;
    for (size_t i = 0; i < r->elements; i += 2) {
        const char *k = r->element[i]->str, *v = r->element[i + 1]->str;
        if (strcmp(k, "slaveof") == 0 || strcmp(k, "hash-max-ziplist-entries") == 0) found++;
        if (strcmp(k, "list-compress-depth") == 0) { assert_string_equal(v, "0"); found++; }
        if (strcmp(k, "client-output-buffer-limit") == 0) {
            assert_string_equal(v, "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
            found++;
        }
        assert_true(strcmp(k, "key-load-delay") != 0);   /* hidden */
    }
    assert_int_equal(found, 4);
    freeReplyObject(r);
    expect_bulks(cmd(c, "CONFIG GET key-load-delay"), 2, "key-load-delay", "0");
    expect_bulks(cmd(c, "CONFIG GET SlaveOf"), 2, "SlaveOf", "");
    expect_bulks_unordered(cmd(c, "CONFIG GET *ziplist-size lua*"), 4,
                           "list-max-ziplist-size", "-2", "lua-time-limit", "5000");
}

/* Redis's "CONFIG sanity": set every value CONFIG GET * gives back to
 * itself (but the ones it skips too), and nothing changes. */
static void test_config_set_everything_back(void **state)
{
    static const char *const skip[] = {
        "rdbchecksum", "daemonize", "io-threads-do-reads", "tcp-backlog", "always-show-logo",
        "syslog-enabled", "cluster-enabled", "disable-thp", "aclfile", "unixsocket", "pidfile",
        "syslog-ident", "appendfilename", "appenddirname", "supervised", "syslog-facility",
        "databases", "io-threads", "logfile", "unixsocketperm", "replicaof", "slaveof",
        "requirepass", "server_cpulist", "bio_cpulist", "aof_rewrite_cpulist", "bgsave_cpulist",
        "set-proc-title", "cluster-config-file", "cluster-port", "oom-score-adj",
        "oom-score-adj-values", "enable-protected-configs", "enable-debug-command",
        "enable-module-command", "dbfilename", "dir", "socket-mark-id",
        /* TLS ones Redis sets only with TLS on */
        "tls-prefer-server-ciphers", "tls-session-cache-timeout", "tls-session-cache-size",
        "tls-session-caching", "tls-cert-file", "tls-key-file", "tls-client-cert-file",
        "tls-client-key-file", "tls-dh-params-file", "tls-ca-cert-file", "tls-ca-cert-dir",
        "tls-protocols", "tls-ciphers", "tls-ciphersuites", "tls-port",
    };
    redisContext *c = FIX(state)->c;
    redisReply *before = cmd(c, "CONFIG GET *");
    for (size_t i = 0; i < before->elements; i += 2) {
        const char *k = before->element[i]->str;
        bool skipped = false;
        for (size_t j = 0; j < sizeof skip / sizeof skip[0]; j++) skipped |= strcmp(k, skip[j]) == 0;
        if (!skipped) OK(c, "CONFIG SET %s %s", k, before->element[i + 1]->str);
    }
    redisReply *after = cmd(c, "CONFIG GET *");
    assert_int_equal(after->elements, before->elements);
    for (size_t i = 0; i < before->elements; i += 2)
        for (size_t j = 0; j < after->elements; j += 2)
            if (strcmp(before->element[i]->str, after->element[j]->str) == 0)
                assert_string_equal(before->element[i + 1]->str, after->element[j + 1]->str);
    freeReplyObject(before);
    freeReplyObject(after);
}

static void config_get_expect(redisContext *c, const char *name, const char *value)
{
    expect_bulks(cmd(c, "CONFIG GET %s", name), 2, name, value);
}

static void test_config_set_pairs(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG SET maxmemory 10000002");
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100",
        "CONFIG SET maxmemory 10000001 maxmemory-clients 200%% client-query-buffer-limit invalid");
    config_get_expect(c, "maxmemory", "10000002");
    config_get_expect(c, "maxmemory-clients", "0");
    OK(c, "CONFIG SET maxmemory 1gb hz 20 save %s", "3000 5");
    config_get_expect(c, "maxmemory", "1073741824");
    config_get_expect(c, "hz", "20");
    config_get_expect(c, "save", "3000 5");
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - duplicate parameter",
        "CONFIG SET maxmemory 1 maxmemory 2");
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config",
        "CONFIG SET daemonize yes");
    ERR(c, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", "CONFIG SET foo 1");
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value",
        "CONFIG SET maxmemory 1.5gb");
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config",
        "CONFIG SET dir /tmp");
    ERR(c, "ERR syntax error", "CONFIG SET maxmemory 1 hz");
    OK(c, "CONFIG SET hz 0");
    config_get_expect(c, "hz", "1");
    OK(c, "CONFIG SET maxmemory 0 hz 10 save %s", "3600 1 300 100 60 10000");
}

/* ------------------------------------------------------------ list-compress-depth */

/* The elements of a test list: compressible, varied, a few integers. */
static void element(char *buf, size_t cap, int i)
{
    if (i % 7 == 0) snprintf(buf, cap, "%d", i);
    else snprintf(buf, cap, "element-%d-%.*s", i, 40 + i % 30,
                  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

static void build_list(redisContext *c, const char *key, int n)
{
    char e[128];
    for (int i = 0; i < n; i++) {
        element(e, sizeof e, i);
        expect_int(cmd(c, "RPUSH %s %s", key, e), i + 1);
    }
}

static void expect_same_lists(redisContext *c, const char *a, const char *b)
{
    redisReply *ra = cmd(c, "LRANGE %s 0 -1", a), *rb = cmd(c, "LRANGE %s 0 -1", b);
    assert_int_equal(ra->elements, rb->elements);
    for (size_t i = 0; i < ra->elements; i++) assert_string_equal(ra->element[i]->str, rb->element[i]->str);
    freeReplyObject(ra);
    freeReplyObject(rb);
}

/* The same commands on a list made with compression and one made without
 * give the same replies and lists; the compressed one takes less memory. */
static void test_list_compress_depth(void **state)
{
    redisContext *c = FIX(state)->c;
    for (int depth = 1; depth <= 2; depth++) {
        freeReplyObject(cmd(c, "DEL {l}plain {l}packed"));
        OK(c, "CONFIG SET list-max-listpack-size 4 list-compress-depth 0");
        build_list(c, "{l}plain", 300);
        OK(c, "CONFIG SET list-compress-depth %d", depth);
        build_list(c, "{l}packed", 300);
        BULK(c, "quicklist", "OBJECT ENCODING {l}packed");
        long long plain, packed;
        redisReply *r = cmd(c, "MEMORY USAGE {l}plain SAMPLES 0");
        plain = r->integer;
        freeReplyObject(r);
        r = cmd(c, "MEMORY USAGE {l}packed SAMPLES 0");
        packed = r->integer;
        freeReplyObject(r);
        if (!(packed < plain * 3 / 4)) h_fail("depth %d: %lld bytes compressed, %lld plain", depth, packed, plain);
        expect_same_lists(c, "{l}plain", "{l}packed");

        const char *keys[2] = { "{l}plain", "{l}packed" };
        char e[128];
        for (int k = 0; k < 2; k++) {
            const char *key = keys[k];
            element(e, sizeof e, 150);
            BULK(c, e, "LINDEX %s 150", key);
            OK(c, "LSET %s 100 %s", key, "replaced-in-the-middle");
            element(e, sizeof e, 200);
            INT(c, 301, "LINSERT %s BEFORE %s %s", key, e, "inserted-before-200");
            INT(c, 302, "LINSERT %s AFTER 140 %s", key, "after-140");
            element(e, sizeof e, 120);
            INT(c, 1, "LREM %s 0 %s", key, e);
            INT(c, 200, "LPOS %s inserted-before-200", key);
            OK(c, "LTRIM %s 5 -6", key);
            element(e, sizeof e, 5);
            BULK(c, e, "LPOP %s", key);
            element(e, sizeof e, 294);
            BULK(c, e, "RPOP %s", key);
            INT(c, 289, "LLEN %s", key);
        }
        expect_same_lists(c, "{l}plain", "{l}packed");
        r = cmd(c, "LRANGE {l}packed 50 60");
        assert_int_equal(r->elements, 11);
        freeReplyObject(r);
    }
    OK(c, "CONFIG SET list-max-listpack-size -2 list-compress-depth 0");
}

/* ------------------------------------------------------------ starting with a config file */

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    assert_true(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* Start the server with argv (the binary first), output to log. Returns 0
 * once it answers, or -1 (reported) if it exited or did not answer in
 * the bound. */
static int spawn(struct server *s, const char *const *argv)
{
    snprintf(s->log, sizeof s->log, "/tmp/ringkv-config-%d-%d.log", (int)getpid(), s->port);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); close(fd); }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    for (long long end = h_now_ms() + START_BOUND_MS; h_now_ms() < end; h_sleep_ms(20)) {
        if (waitpid(pid, NULL, WNOHANG) == pid) break;
        redisContext *c = redisConnect("127.0.0.1", s->port);
        bool up = c && !c->err;
        if (c) redisFree(c);
        if (up) return 0;
    }
    fprintf(stderr, "test_config: server did not start (see %s)\n", s->log);
    return -1;
}

/* A server refused at start: exit status 1 and want in its output. */
static void expect_refused(const char *const *argv, const char *want)
{
    char log[128];
    snprintf(log, sizeof log, "/tmp/ringkv-config-refused-%d.log", (int)getpid());
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); close(fd); }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = -1;
    for (long long end = h_now_ms() + START_BOUND_MS; h_now_ms() < end; h_sleep_ms(10))
        if (waitpid(pid, &st, WNOHANG) == pid) break;
    if (st == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        h_fail("%s %s started, but should have been refused", argv[1], argv[2] ? argv[2] : "");
    }
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    char text[4096] = "";
    FILE *f = fopen(log, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
    if (!strstr(text, want)) h_fail("no '%s' in: %s", want, text);
    unlink(log);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_config_file_and_options(void **state)
{
    (void)state;
    char conf[128], inc[128], text[512], port[16];
    snprintf(conf, sizeof conf, "/tmp/ringkv-config-%d.conf", (int)getpid());
    snprintf(inc, sizeof inc, "/tmp/ringkv-config-%d-inc.conf", (int)getpid());
    write_file(inc, "maxmemory-policy allkeys-lru\nzset-max-ziplist-entries 64\n");
    snprintf(text, sizeof text,
             "# a config file as redis.conf writes them\n"
             "maxmemory 100mb\n"
             "save 900 1\n"
             "  hash-max-ziplist-entries 100   \n"
             "requirepass \"pass word\"\n"
             "include %s\n"
             "list-max-ziplist-entries 512\n", inc);
    write_file(conf, text);

    struct server s = { .port = free_port() };
    snprintf(port, sizeof port, "%d", s.port);
    const char *threads = getenv("RINGKV_THREADS") ? getenv("RINGKV_THREADS") : "1";
    char dir[128];   /* where the save at exit goes */
    snprintf(dir, sizeof dir, "/tmp/ringkv-config-%d.d", (int)getpid());
    mkdir(dir, 0755);
    const char *ringkv[] = { bin(), conf, "--port", port, "--threads", threads, "--save", "300 10", "--dir", dir,
                             "--proc-title-template", "--my--title", "--loglevel", "verbose", NULL };
    const char *redis[] = { "redis-server", conf, "--port", port, "--save", "300 10", "--dir", dir,
                            "--proc-title-template", "--my--title", "--loglevel", "verbose", NULL };
    s.redis = h_redis_mode();
    assert_int_equal(spawn(&s, s.redis ? redis : ringkv), 0);

    redisContext *c = h_connect(&s);
    OK(c, "AUTH %s", "pass word");
    config_get_expect(c, "maxmemory", "104857600");
    /* the first save line replaces the defaults and later ones add to it,
     * but after an include (as Redis 7.0 does) a save line replaces */
    config_get_expect(c, "save", "300 10");
    config_get_expect(c, "hash-max-listpack-entries", "100");
    config_get_expect(c, "zset-max-listpack-entries", "64");
    config_get_expect(c, "maxmemory-policy", "allkeys-lru");
    config_get_expect(c, "proc-title-template", "--my--title");
    config_get_expect(c, "loglevel", "verbose");
    redisReply *r = cmd(c, "INFO server");
    char *v = info_field(r->str, "config_file");
    assert_non_null(v);
    assert_string_equal(v, conf);
    free(v);
    freeReplyObject(r);
    redisFree(c);
    assert_int_equal(server_stop(&s), 0);
    /* with save points, SIGTERM saves before exiting, as Redis does */
    char rdb[160];
    snprintf(rdb, sizeof rdb, "%s/dump.rdb", dir);
    assert_int_equal(access(rdb, F_OK), 0);
    unlink(rdb);
    rmdir(dir);
    unlink(conf);
    unlink(inc);
}

static void test_refused_at_start(void **state)
{
    (void)state;
    const char *b = h_redis_mode() ? "redis-server" : bin();
    const char *a1[] = { b, "--port", "6379", "6380", NULL };
    expect_refused(a1, ">>> 'port \"6379\" \"6380\"'\nwrong number of arguments");
    const char *a2[] = { b, "--maxmemory", "lots", NULL };
    expect_refused(a2, "argument must be a memory value");
    const char *a3[] = { b, "--loglevel", "--bla", NULL };
    expect_refused(a3, "argument(s) must be one of the following: debug, verbose, notice, warning");
    const char *a4[] = { b, "--nosuch", "1", NULL };
    expect_refused(a4, "Bad directive or wrong number of arguments");
    const char *a5[] = { b, "/nonexistent/ringkv.conf", NULL };
    expect_refused(a5, "can't open config file '/nonexistent/ringkv.conf'");
}

/* THP_enabled of /proc/PID/status (0: PR_SET_THP_DISABLE), -1 if absent. */
static int thp_enabled(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    int v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "THP_enabled: %d", &v) == 1) break;
    if (f) fclose(f);
    return v;
}

/* disable-thp yes, the default as in Redis, turns THP off for the process;
 * no leaves it as the system has it. */
static void test_disable_thp(void **state)
{
    (void)state;
    const char *no[] = { "--disable-thp", "no", NULL };
    for (int i = 0; i < 2; i++) {
        struct server s = { 0 };
        assert_int_equal(server_start(&s, i ? no : NULL), 0);
        int v = thp_enabled(s.pid);
        if (v >= 0 && !s.redis) assert_int_equal(v, i);   /* Redis only turns it off under THP "always" */
        redisContext *c = h_connect(&s);
        config_get_expect(c, "disable-thp", i ? "no" : "yes");
        redisFree(c);
        assert_int_equal(server_stop(&s), 0);
    }
}

int main(void)
{
    const struct CMUnitTest running[] = {
        cmocka_unit_test_setup(test_config_get_all, h_noop_setup),
        cmocka_unit_test_setup(test_config_set_pairs, h_noop_setup),
        cmocka_unit_test_setup(test_config_set_everything_back, h_noop_setup),
        cmocka_unit_test_setup(test_list_compress_depth, h_flushall),
    };
    const struct CMUnitTest starting[] = {
        cmocka_unit_test(test_config_file_and_options),
        cmocka_unit_test(test_refused_at_start),
        cmocka_unit_test(test_disable_thp),
    };
    int failed = cmocka_run_group_tests_name("running", running, h_group_setup, h_group_teardown);
    failed += cmocka_run_group_tests_name("starting", starting, NULL, NULL);
    return failed + h_failures();
}
