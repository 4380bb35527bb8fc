/*
 * Integration test harness, see harness.h.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define START_TIMEOUT_MS 20000   /* generous: ASan builds start slowly */
#define STOP_TIMEOUT_MS  30000   /* LeakSanitizer on a big heap takes a while */
#define CMD_TIMEOUT_S    10   /* per command; no test command needs more */

static int g_failures;

static void __attribute__((constructor)) harness_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    h_raise_nofile(4096);
}

int h_failures(void) { return g_failures; }

long long h_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *h_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *all = NULL;
    size_t n_all = 0;
    FILE *mem = open_memstream(&all, &n_all);
    char chunk[4096];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, fp)) > 0;) fwrite(chunk, 1, n, mem);
    fclose(mem);   /* NUL-terminates all */
    fclose(fp);
    if (len) *len = n_all;
    return all;
}

bool h_log_has(const struct server *s, const char *text)
{
    char *all = h_read_file(s->log, NULL);
    bool found = all && strstr(all, text) != NULL;
    free(all);
    return found;
}

void h_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
}

bool h_redis_mode(void)
{
    const char *e = getenv("RINGKV_TEST_REDIS");
    return e && *e && strcmp(e, "0") != 0;
}

int h_threads(void)
{
    const char *e = getenv("RINGKV_THREADS");
    int n = e ? atoi(e) : 1;
    return n > 0 ? n : 1;
}

long h_raise_nofile(long want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    if ((long)rl.rlim_cur < want) {
        rlim_t n = (rlim_t)want;
        if (rl.rlim_max != RLIM_INFINITY && n > rl.rlim_max)
            n = rl.rlim_max;
        rl.rlim_cur = n;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return (long)rl.rlim_cur;
}

void h_fail_(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    char msg[4096];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error("%s\n", msg);
    _fail(file, line);
    abort();   /* _fail longjmps out of the test */
}

/* ------------------------------------------------------------------ */
/* Server process                                                      */

/* Whether port is free to listen on now: bound with SO_REUSEADDR, as the
 * server's listener is, so its own earlier connections in TIME_WAIT do
 * not count. */
static bool port_bindable(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) return false;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
              bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* A port for a server, picked at random outside the kernel's ephemeral
 * range (ip_local_port_range). In it, bind(0) finds nothing once the
 * tests running side by side have left every client port in TIME_WAIT
 * (test_hostile alone drops ten thousand connections; seen with several
 * test binaries at once), and a client's connect could take the port
 * before the server binds it. The kernel's own pick is the last
 * resort. */
static int free_port(void)
{
    int lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2) lo = 32768, hi = 60999;
        fclose(f);
    }
    int from = 1024, to = lo - 1;   /* below the range, or else above it */
    if (to - from < 1000) from = hi + 1, to = 65535;
    static unsigned seed;
    if (!seed) seed = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
    for (int i = 0; to - from >= 1000 && i < 1000; i++) {
        int port = from + (int)(rand_r(&seed) % (unsigned)(to - from + 1));
        if (port_bindable(port)) return port;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t al = sizeof a;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

int h_free_port(void)
{
    return free_port();
}

static void dump_log(const struct server *s)
{
    FILE *f = fopen(s->log, "r");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    long from = sz > 16384 ? sz - 16384 : 0;
    fseek(f, from, SEEK_SET);
    fprintf(stderr, "---- server log %s (last %ld bytes) ----\n", s->log, sz - from);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, stderr);
    fprintf(stderr, "---- end of server log ----\n");
    fclose(f);
}

/* Connect to 127.0.0.1:port, non-blocking after connect. -1 on failure. */
static int tcp_connect(int port, int timeout_ms)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (errno != EINPROGRESS) { close(fd); return -1; }
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        int err = 0;
        socklen_t el = sizeof err;
        if (poll(&p, 1, timeout_ms) != 1 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
            close(fd);
            return -1;
        }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* 1: answered PING (or NOAUTH), 0: not yet. */
static int probe(int port)
{
    int fd = tcp_connect(port, 500);
    if (fd < 0) return 0;
    const char ping[] = "*1\r\n$4\r\nPING\r\n";
    int ok = 0;
    if (write(fd, ping, sizeof ping - 1) == (ssize_t)(sizeof ping - 1)) {
        char buf[256];
        size_t len = 0;
        long long deadline = h_now_ms() + 1000;
        while (len < sizeof buf - 1 && h_now_ms() < deadline) {
            struct pollfd p = { .fd = fd, .events = POLLIN };
            if (poll(&p, 1, 100) <= 0) continue;
            ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
            if (n <= 0) break;
            len += (size_t)n;
            if (memchr(buf, '\n', len)) break;
        }
        buf[len] = 0;
        if (strncmp(buf, "+PONG\r\n", 7) == 0 || strncmp(buf, "-NOAUTH", 7) == 0)
            ok = 1;
    }
    close(fd);
    return ok;
}

static const char *ringkv_bin(void)
{
    const char *b = getenv("RINGKV_BIN");
    return b && *b ? b : "build/ringkv";
}

int server_start(struct server *s, const char *const *extra)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        memset(s, 0, sizeof *s);
        s->redis = h_redis_mode();
        s->port = free_port();
        if (s->port <= 0) {
            fprintf(stderr, "harness: cannot find a free port\n");
            break;
        }
        snprintf(s->log, sizeof s->log, "/tmp/ringkv-test-%d-%d.log", (int)getpid(), s->port);

        char port[16], threads[16];
        snprintf(port, sizeof port, "%d", s->port);
        snprintf(threads, sizeof threads, "%d", h_threads());
        const char *argv[64];
        int n = 0;
        s->dir[0] = '\0';
        if (s->redis) {
            argv[n++] = "redis-server";
            argv[n++] = "--port"; argv[n++] = port;
            argv[n++] = "--bind"; argv[n++] = "127.0.0.1";
            argv[n++] = "--save"; argv[n++] = "";
            argv[n++] = "--appendonly"; argv[n++] = "no";
            argv[n++] = "--dir"; argv[n++] = "/tmp";
            argv[n++] = "--enable-debug-command"; argv[n++] = "yes";
        } else {
            argv[n++] = ringkv_bin();
            argv[n++] = "--port"; argv[n++] = port;
            argv[n++] = "--bind"; argv[n++] = "127.0.0.1";
            argv[n++] = "--threads"; argv[n++] = threads;
            /* its own directory, and no save unless a test asks (extra) */
            snprintf(s->dir, sizeof s->dir, "/tmp/ringkv-test-%d-%d.d", (int)getpid(), s->port);
            mkdir(s->dir, 0755);
            argv[n++] = "--dir"; argv[n++] = s->dir;
            argv[n++] = "--save"; argv[n++] = "";
            /* the tests use DEBUG (Redis's test framework enables it too) */
            argv[n++] = "--enable-debug-command"; argv[n++] = "yes";
        }
        for (int i = 0; extra && extra[i] && n < 62; i++)
            argv[n++] = extra[i];
        argv[n] = NULL;

        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            break;
        }
        if (pid == 0) {
            /* die with the test process, whatever kills it */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(127);
            int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                close(fd);
            }
            int devnull = open("/dev/null", O_RDONLY);
            if (devnull >= 0) { dup2(devnull, 0); close(devnull); }
            execvp(argv[0], (char *const *)argv);
            fprintf(stderr, "harness: exec %s: %s\n", argv[0], strerror(errno));
            _exit(127);
        }
        s->pid = pid;

        long long deadline = h_now_ms() + START_TIMEOUT_MS;
        bool died = false;
        while (h_now_ms() < deadline) {
            int st;
            if (waitpid(pid, &st, WNOHANG) == pid) {
                died = true;
                s->pid = 0;
                if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {   /* exec failed */
                    dump_log(s);
                    g_failures++;
                    return -1;
                }
                break;
            }
            if (probe(s->port))
                return 0;
            h_sleep_ms(20);
        }
        if (died) {
            fprintf(stderr, "harness: server exited during startup (attempt %d, port %d)\n",
                    attempt + 1, s->port);
            dump_log(s);
            continue;   /* maybe somebody took the port: try another one */
        }
        fprintf(stderr, "harness: server did not answer PING within %d ms\n", START_TIMEOUT_MS);
        dump_log(s);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        s->pid = 0;
        break;
    }
    g_failures++;
    return -1;
}

bool server_alive(struct server *s)
{
    if (s->pid <= 0) return false;
    int st;
    pid_t r = waitpid(s->pid, &st, WNOHANG);
    if (r == s->pid) {
        fprintf(stderr, "harness: server %d died: %s %d\n", (int)s->pid,
                WIFEXITED(st) ? "exit status" : "signal",
                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        dump_log(s);
        s->pid = -1;   /* reaped, reported */
        g_failures++;
        return false;
    }
    return true;
}

/* A server's directory holds only files (dump.rdb, temp files). */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    char path[512];
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

int server_stop(struct server *s)
{
    if (s->pid == 0) return 0;
    if (s->pid < 0) return -1;   /* already reaped and reported */
    kill(s->pid, SIGTERM);
    long long deadline = h_now_ms() + STOP_TIMEOUT_MS;
    int st = 0;
    bool reaped = false;
    while (h_now_ms() < deadline) {
        pid_t r = waitpid(s->pid, &st, WNOHANG);
        if (r == s->pid) { reaped = true; break; }
        if (r < 0 && errno != EINTR) break;
        h_sleep_ms(10);
    }
    int rc = 0;
    if (!reaped) {
        fprintf(stderr, "harness: server %d did not exit within %d ms of SIGTERM, killing it\n",
                (int)s->pid, STOP_TIMEOUT_MS);
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &st, 0);
        rc = -1;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (WIFEXITED(st))
            fprintf(stderr, "harness: server exited with status %d after SIGTERM\n", WEXITSTATUS(st));
        else
            fprintf(stderr, "harness: server killed by signal %d (%s)\n", WTERMSIG(st),
                    strsignal(WTERMSIG(st)));
        rc = -1;
    }
    if (rc != 0) {
        dump_log(s);
        g_failures++;
    } else {
        const char *keep = getenv("RINGKV_TEST_KEEP_LOG");
        if (!(keep && *keep && strcmp(keep, "0") != 0))
            unlink(s->log);
    }
    if (s->dir[0]) remove_dir(s->dir);
    s->pid = 0;
    return rc;
}

long server_rss_kb(const struct server *s)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)s->pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) { kb = atol(line + 6); break; }
    fclose(f);
    return kb;
}

/* ------------------------------------------------------------------ */
/* Fixtures                                                             */

int h_group_setup_args(void **state, const char *const *extra)
{
    struct fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (server_start(&f->srv, extra) != 0)
        return -1;
    f->c = redisConnectWithTimeout("127.0.0.1", f->srv.port, (struct timeval){ 5, 0 });
    if (!f->c || f->c->err) {
        fprintf(stderr, "harness: connect: %s\n", f->c ? f->c->errstr : "oom");
        g_failures++;
        return -1;
    }
    redisSetTimeout(f->c, (struct timeval){ CMD_TIMEOUT_S, 0 });
    return 0;
}

int h_group_setup(void **state) { return h_group_setup_args(state, NULL); }

int h_group_teardown(void **state)
{
    struct fixture *f = *state;
    if (!f) return 0;
    if (f->c) redisFree(f->c);
    int rc = server_stop(&f->srv);
    free(f);
    *state = NULL;
    return rc;
}

static int fresh_conn(struct fixture *f)
{
    if (f->c) redisFree(f->c);
    f->c = NULL;
    if (f->broken) {
        fprintf(stderr, "harness: server unresponsive earlier in this group, not running the test\n");
        return -1;
    }
    if (f->srv.pid <= 0 || !server_alive(&f->srv)) {
        fprintf(stderr, "harness: server is not running\n");
        f->broken = true;
        return -1;
    }
    f->c = redisConnectWithTimeout("127.0.0.1", f->srv.port, (struct timeval){ 5, 0 });
    if (!f->c || f->c->err) {
        fprintf(stderr, "harness: connect: %s\n", f->c ? f->c->errstr : "oom");
        f->broken = true;
        return -1;
    }
    redisSetTimeout(f->c, (struct timeval){ CMD_TIMEOUT_S, 0 });
    return 0;
}

int h_noop_setup(void **state)
{
    return fresh_conn(*state);
}

int h_flushall(void **state)
{
    struct fixture *f = *state;
    if (fresh_conn(f) != 0) return -1;
    redisReply *r = redisCommand(f->c, "FLUSHALL");
    int ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
    if (!ok) {
        char *s = reply_repr(r);
        fprintf(stderr, "harness: FLUSHALL -> %s\n", r ? s : f->c->errstr);
        free(s);
        if (!r) f->broken = true;   /* no answer within CMD_TIMEOUT_S */
    }
    if (r) freeReplyObject(r);
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* hiredis helpers                                                      */

redisContext *h_connect_(const struct server *s, const char *file, int line)
{
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, (struct timeval){ 5, 0 });
    if (!c || c->err)
        h_fail_(file, line, "connect to port %d: %s", s->port, c ? c->errstr : "oom");
    redisSetTimeout(c, (struct timeval){ CMD_TIMEOUT_S, 0 });
    return c;
}

redisReply *cmd_(const char *file, int line, redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!r)
        h_fail_(file, line, "command '%s': connection error: %s", fmt, c->errstr);
    return r;
}

redisReply *cmdv_(const char *file, int line, redisContext *c, int argc,
                  const char **argv, const size_t *lens)
{
    redisReply *r = redisCommandArgv(c, argc, argv, lens);
    if (!r)
        h_fail_(file, line, "command '%s': connection error: %s", argc ? argv[0] : "", c->errstr);
    return r;
}

char *h_escape(const char *p, size_t n)
{
    size_t cap = n * 4 + 3, len = 0;
    char *o = malloc(cap);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\r') { o[len++] = '\\'; o[len++] = 'r'; }
        else if (ch == '\n') { o[len++] = '\\'; o[len++] = 'n'; }
        else if (ch == '"' || ch == '\\') { o[len++] = '\\'; o[len++] = (char)ch; }
        else if (ch < 32 || ch >= 127) len += (size_t)sprintf(o + len, "\\x%02x", ch);
        else o[len++] = (char)ch;
    }
    o[len] = 0;
    return o;
}

struct sb { char *p; size_t len, cap; };

static void sb_add(struct sb *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void sb_adds(struct sb *b, const char *s) { sb_add(b, s, strlen(s)); }

static void repr(struct sb *b, const redisReply *r, int depth)
{
    char num[64];
    if (!r) { sb_adds(b, "(no reply)"); return; }
    if (b->len > 2000) { sb_adds(b, "..."); return; }
    switch (r->type) {
    case REDIS_REPLY_STATUS: sb_adds(b, "+"); sb_add(b, r->str, r->len); break;
    case REDIS_REPLY_ERROR: sb_adds(b, "-"); sb_add(b, r->str, r->len); break;
    case REDIS_REPLY_INTEGER: snprintf(num, sizeof num, "(integer) %lld", r->integer); sb_adds(b, num); break;
    case REDIS_REPLY_NIL: sb_adds(b, "(nil)"); break;
    case REDIS_REPLY_STRING: {
        char *e = h_escape(r->str, r->len > 300 ? 300 : r->len);
        sb_adds(b, "\""); sb_adds(b, e); sb_adds(b, r->len > 300 ? "...\"" : "\"");
        free(e);
        break;
    }
    case REDIS_REPLY_ARRAY:
        sb_adds(b, "[");
        for (size_t i = 0; i < r->elements; i++) {
            if (i) sb_adds(b, ", ");
            repr(b, r->element[i], depth + 1);
        }
        sb_adds(b, "]");
        break;
    default:
        snprintf(num, sizeof num, "(type %d)", r->type); sb_adds(b, num);
    }
}

char *reply_repr(const redisReply *r)
{
    struct sb b = { 0 };
    repr(&b, r, 0);
    return b.p;
}

#define FAIL_REPLY(file, line, r, ...) do { \
        char *rep_ = reply_repr(r); \
        char want_[4096]; \
        snprintf(want_, sizeof want_, __VA_ARGS__); \
        print_error("expected %s\n     got %s\n", want_, rep_); \
        free(rep_); \
        freeReplyObject(r); \
        _fail(file, line); \
        abort(); \
    } while (0)

void expect_status_(const char *file, int line, redisReply *r, const char *s)
{
    if (r->type != REDIS_REPLY_STATUS || strcmp(r->str, s) != 0)
        FAIL_REPLY(file, line, r, "+%s", s);
    freeReplyObject(r);
}

void expect_int_(const char *file, int line, redisReply *r, long long v)
{
    if (r->type != REDIS_REPLY_INTEGER || r->integer != v)
        FAIL_REPLY(file, line, r, "(integer) %lld", v);
    freeReplyObject(r);
}

void expect_int_range_(const char *file, int line, redisReply *r, long long lo, long long hi)
{
    if (r->type != REDIS_REPLY_INTEGER || r->integer < lo || r->integer > hi)
        FAIL_REPLY(file, line, r, "(integer) in [%lld, %lld]", lo, hi);
    freeReplyObject(r);
}

void expect_bulk_(const char *file, int line, redisReply *r, const char *s, size_t len)
{
    if (r->type != REDIS_REPLY_STRING || r->len != len || memcmp(r->str, s, len) != 0) {
        char *e = h_escape(s, len > 300 ? 300 : len);
        char want[400];
        snprintf(want, sizeof want, "\"%s\"%s (%zu bytes)", e, len > 300 ? "..." : "", len);
        free(e);
        FAIL_REPLY(file, line, r, "%s", want);
    }
    freeReplyObject(r);
}

void expect_nil_(const char *file, int line, redisReply *r)
{
    if (r->type != REDIS_REPLY_NIL)
        FAIL_REPLY(file, line, r, "(nil)");
    freeReplyObject(r);
}

void expect_error_(const char *file, int line, redisReply *r, const char *s)
{
    if (r->type != REDIS_REPLY_ERROR || strcmp(r->str, s) != 0)
        FAIL_REPLY(file, line, r, "-%s", s);
    freeReplyObject(r);
}

void expect_error_prefix_(const char *file, int line, redisReply *r, const char *prefix)
{
    if (r->type != REDIS_REPLY_ERROR || strncmp(r->str, prefix, strlen(prefix)) != 0)
        FAIL_REPLY(file, line, r, "-%s...", prefix);
    freeReplyObject(r);
}

static bool bulk_is(const redisReply *e, const char *s)
{
    if (!s) return e->type == REDIS_REPLY_NIL;
    return e->type == REDIS_REPLY_STRING && e->len == strlen(s) && memcmp(e->str, s, e->len) == 0;
}

static void want_list(char *out, size_t cap, int n, const char **v)
{
    size_t len = 0;
    len += (size_t)snprintf(out + len, cap - len, "[");
    for (int i = 0; i < n && len < cap - 8; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s%s%s", i ? ", " : "",
                                v[i] ? "\"" : "", v[i] ? v[i] : "(nil)", v[i] ? "\"" : "");
    snprintf(out + len, cap - len, "]");
}

void expect_bulks_(const char *file, int line, redisReply *r, int n, ...)
{
    const char *v[1024];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && i < 1024; i++) v[i] = va_arg(ap, const char *);
    va_end(ap);
    bool ok = r->type == REDIS_REPLY_ARRAY && r->elements == (size_t)n;
    for (int i = 0; ok && i < n; i++)
        ok = bulk_is(r->element[i], v[i]);
    if (!ok) {
        char want[2048];
        want_list(want, sizeof want, n, v);
        FAIL_REPLY(file, line, r, "%s", want);
    }
    freeReplyObject(r);
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void expect_bulks_unordered_(const char *file, int line, redisReply *r, int n, ...)
{
    const char *v[1024];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && i < 1024; i++) v[i] = va_arg(ap, const char *);
    va_end(ap);
    bool ok = r->type == REDIS_REPLY_ARRAY && r->elements == (size_t)n;
    for (size_t i = 0; ok && i < r->elements; i++)
        ok = r->element[i]->type == REDIS_REPLY_STRING;
    if (ok) {
        const char *got[1024];
        for (int i = 0; i < n; i++) got[i] = r->element[i]->str;
        qsort(got, (size_t)n, sizeof got[0], cmpstr);
        qsort(v, (size_t)n, sizeof v[0], cmpstr);
        for (int i = 0; ok && i < n; i++) ok = strcmp(got[i], v[i]) == 0;
    }
    if (!ok) {
        char want[2048];
        want_list(want, sizeof want, n, v);
        FAIL_REPLY(file, line, r, "%s in any order", want);
    }
    freeReplyObject(r);
}

char *info_field(const char *info, const char *name)
{
    size_t nl = strlen(name);
    const char *p = info;
    while (p && *p) {
        if (strncmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            size_t l = strcspn(v, "\r\n");
            char *o = malloc(l + 1);
            memcpy(o, v, l);
            o[l] = 0;
            return o;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return NULL;
}

long long info_ll(redisContext *c, const char *section, const char *name)
{
    redisReply *r = section ? redisCommand(c, "INFO %s", section) : redisCommand(c, "INFO");
    long long v = -1;
    if (r && r->type == REDIS_REPLY_STRING) {
        char *f = info_field(r->str, name);
        if (f) { v = atoll(f); free(f); }
    }
    if (r) freeReplyObject(r);
    return v;
}

/* ------------------------------------------------------------------ */
/* Raw sockets                                                          */

struct raw *raw_connect_(const char *file, int line, const struct server *s)
{
    int fd = -1;
    for (int i = 0; i < 50 && fd < 0; i++) {
        fd = tcp_connect(s->port, 5000);
        if (fd < 0) h_sleep_ms(20);
    }
    if (fd < 0)
        h_fail_(file, line, "raw connect to port %d: %s", s->port, strerror(errno));
    struct raw *r = calloc(1, sizeof *r);
    r->fd = fd;
    r->cap = 65536;
    r->buf = malloc(r->cap);
    return r;
}

void raw_close(struct raw *r)
{
    if (!r) return;
    if (r->fd >= 0) close(r->fd);
    free(r->buf);
    free(r);
}

void raw_abort(struct raw *r)
{
    struct linger l = { 1, 0 };
    setsockopt(r->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    raw_close(r);
}

size_t raw_send_some(struct raw *r, const void *buf, size_t len, int timeout_ms)
{
    size_t off = 0;
    long long deadline = h_now_ms() + timeout_ms;
    while (off < len) {
        ssize_t n = send(r->fd, (const char *)buf + off, len - off, MSG_NOSIGNAL);
        if (n > 0) { off += (size_t)n; deadline = h_now_ms() + timeout_ms; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            long long left = deadline - h_now_ms();
            if (left <= 0) break;
            struct pollfd p = { .fd = r->fd, .events = POLLOUT };
            poll(&p, 1, (int)(left > 100 ? 100 : left));
            continue;
        }
        break;   /* error */
    }
    return off;
}

void raw_send_(const char *file, int line, struct raw *r, const void *buf, size_t len)
{
    size_t n = raw_send_some(r, buf, len, 10000);
    if (n != len)
        h_fail_(file, line, "raw send: sent %zu of %zu bytes (%s)", n, len, strerror(errno));
}

void raw_cmd_(const char *file, int line, struct raw *r, const char *fmt, ...)
{
    char *out = NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = redisvFormatCommand(&out, fmt, ap);
    va_end(ap);
    if (len < 0) h_fail_(file, line, "bad command format '%s'", fmt);
    raw_send_(file, line, r, out, (size_t)len);
    free(out);
}

size_t raw_fill(struct raw *r, size_t n, int timeout_ms)
{
    long long deadline = h_now_ms() + timeout_ms;
    if (r->pos > 0 && r->pos == r->len) r->pos = r->len = 0;
    while (r->len - r->pos < n && !r->eof) {
        if (r->pos > 0 && r->cap - r->len < 65536) {
            memmove(r->buf, r->buf + r->pos, r->len - r->pos);
            r->len -= r->pos;
            r->pos = 0;
        }
        if (r->cap - r->len < 65536) {
            r->cap *= 2;
            r->buf = realloc(r->buf, r->cap);
        }
        ssize_t k = recv(r->fd, r->buf + r->len, r->cap - r->len - 1, 0);
        if (k > 0) { r->len += (size_t)k; continue; }
        if (k == 0) { r->eof = true; break; }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            long long left = deadline - h_now_ms();
            if (left <= 0) break;
            struct pollfd p = { .fd = r->fd, .events = POLLIN };
            poll(&p, 1, (int)(left > 200 ? 200 : left));
            continue;
        }
        r->eof = true;   /* ECONNRESET and friends: the peer is gone */
        break;
    }
    return r->len - r->pos;
}

bool raw_read_to_close(struct raw *r, int timeout_ms)
{
    raw_fill(r, SIZE_MAX, timeout_ms);
    return r->eof;
}

void raw_expect_(const char *file, int line, struct raw *r, const void *exp, size_t len)
{
    size_t have = raw_fill(r, len, 10000);
    if (have < len || memcmp(r->buf + r->pos, exp, len) != 0) {
        char *e = h_escape(exp, len);
        char *g = h_escape(r->buf + r->pos, have > len + 200 ? len + 200 : have);
        print_error("expected bytes \"%s\"\n     got \"%s\"%s\n", e, g,
                    have < len ? (r->eof ? " (then EOF)" : " (then timeout)") : "");
        free(e);
        free(g);
        _fail(file, line);
        abort();
    }
    r->pos += len;
}

void raw_expect_close_(const char *file, int line, struct raw *r, const void *exp, size_t len)
{
    bool closed = raw_read_to_close(r, 10000);
    size_t have = r->len - r->pos;
    if (!closed || have != len || memcmp(r->buf + r->pos, exp, len) != 0) {
        char *e = h_escape(exp, len);
        char *g = h_escape(r->buf + r->pos, have > len + 200 ? len + 200 : have);
        print_error("expected bytes \"%s\" then close\n     got \"%s\"%s\n", e, g,
                    closed ? " then close" : " and the connection is still open after 10 s");
        free(e);
        free(g);
        _fail(file, line);
        abort();
    }
    r->pos = r->len;
}

/* ------------------------------------------------------------------ */
/* RESP2/RESP3 parser                                                   */

/* Returns 1 parsed, 0 incomplete, -1 malformed. */
static int parse_value(const char *b, size_t len, size_t *pos, struct rv **out, int depth)
{
    size_t start = *pos;
    if (start >= len) return 0;
    if (depth > 64) return -1;
    const char *nl = memchr(b + start, '\n', len - start);
    if (!nl) return 0;
    if (nl == b + start || nl[-1] != '\r') return -1;
    size_t line_len = (size_t)(nl - (b + start)) - 2;   /* without type byte and \r */
    const char *line = b + start + 1;
    size_t after = (size_t)(nl - b) + 1;
    struct rv *v = calloc(1, sizeof *v);
    v->type = b[start];
    char tmp[64];
    long long num = 0;
    switch (v->type) {
    case '+': case '-': case ',': case '(':
        v->str = malloc(line_len + 1);
        memcpy(v->str, line, line_len);
        v->str[line_len] = 0;
        v->len = line_len;
        if (v->type == ',' || v->type == '(') { /* keep text: exact format matters */ }
        *pos = after;
        break;
    case ':':
        if (line_len == 0 || line_len >= sizeof tmp) goto bad;
        memcpy(tmp, line, line_len); tmp[line_len] = 0;
        v->integer = strtoll(tmp, NULL, 10);
        *pos = after;
        break;
    case '_':
        if (line_len != 0) goto bad;
        v->null = true;
        *pos = after;
        break;
    case '#':
        if (line_len != 1 || (line[0] != 't' && line[0] != 'f')) goto bad;
        v->integer = line[0] == 't';
        *pos = after;
        break;
    case '$': case '=': case '!':
        if (line_len == 0 || line_len >= sizeof tmp) goto bad;
        memcpy(tmp, line, line_len); tmp[line_len] = 0;
        num = strtoll(tmp, NULL, 10);
        if (num == -1 && v->type == '$') { v->null = true; *pos = after; break; }
        if (num < 0) goto bad;
        if (len - after < (size_t)num + 2) { free(v); return 0; }
        if (b[after + (size_t)num] != '\r' || b[after + (size_t)num + 1] != '\n') goto bad;
        v->str = malloc((size_t)num + 1);
        memcpy(v->str, b + after, (size_t)num);
        v->str[num] = 0;
        v->len = (size_t)num;
        *pos = after + (size_t)num + 2;
        break;
    case '*': case '%': case '~': case '>': case '|': {
        if (line_len == 0 || line_len >= sizeof tmp) goto bad;
        memcpy(tmp, line, line_len); tmp[line_len] = 0;
        num = strtoll(tmp, NULL, 10);
        if (num == -1 && v->type == '*') { v->null = true; *pos = after; break; }
        if (num < 0) goto bad;
        size_t n = (size_t)num * ((v->type == '%' || v->type == '|') ? 2 : 1);
        v->elem = calloc(n ? n : 1, sizeof *v->elem);
        size_t p = after;
        for (size_t i = 0; i < n; i++) {
            int rc = parse_value(b, len, &p, &v->elem[i], depth + 1);
            if (rc <= 0) { v->n = i; rv_free(v); return rc; }
        }
        v->n = n;
        *pos = p;
        break;
    }
    default:
        goto bad;
    }
    v->rawlen = *pos - start;
    v->raw = malloc(v->rawlen + 1);
    memcpy(v->raw, b + start, v->rawlen);
    v->raw[v->rawlen] = 0;
    *out = v;
    return 1;
bad:
    free(v->str);
    free(v);
    return -1;
}

struct rv *raw_reply_(const char *file, int line, struct raw *r, int timeout_ms)
{
    long long deadline = h_now_ms() + timeout_ms;
    size_t want = 1;
    for (;;) {
        size_t have = raw_fill(r, want, (int)(deadline - h_now_ms() > 0 ? deadline - h_now_ms() : 0));
        size_t pos = r->pos;
        struct rv *v = NULL;
        int rc = have ? parse_value(r->buf, r->len, &pos, &v, 0) : 0;
        if (rc == 1) { r->pos = pos; return v; }
        if (rc < 0) {
            char *g = h_escape(r->buf + r->pos, have > 300 ? 300 : have);
            h_fail_(file, line, "malformed RESP: \"%s\"", g);
        }
        if (r->eof || h_now_ms() >= deadline) {
            char *g = h_escape(r->buf + r->pos, have > 300 ? 300 : have);
            h_fail_(file, line, "no complete reply (%s); have \"%s\"", r->eof ? "EOF" : "timeout", g);
        }
        want = have + 1;
    }
}

void rv_free(struct rv *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) rv_free(v->elem[i]);
    free(v->elem);
    free(v->str);
    free(v->raw);
    free(v);
}

struct rv *rv_map_get(const struct rv *map, const char *key)
{
    if (!map) return NULL;
    for (size_t i = 0; i + 1 < map->n; i += 2) {
        const struct rv *k = map->elem[i];
        if (k->str && strcmp(k->str, key) == 0)
            return map->elem[i + 1];
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Misc                                                                 */

static uint16_t crc16_xmodem(const unsigned char *p, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

unsigned h_key_slot(const char *key, size_t len)
{
    size_t s, e;
    for (s = 0; s < len; s++)
        if (key[s] == '{') break;
    if (s < len) {
        for (e = s + 1; e < len; e++)
            if (key[e] == '}') break;
        if (e < len && e != s + 1)
            return crc16_xmodem((const unsigned char *)key + s + 1, e - s - 1) & 16383;
    }
    return crc16_xmodem((const unsigned char *)key, len) & 16383;
}

void h_two_shard_keys(const char *prefix, char *a, char *b)
{
    snprintf(a, 32, "%sa", prefix);
    for (int i = 0;; i++) {
        snprintf(b, 32, "%s%d", prefix, i);
        if ((h_key_slot(a, strlen(a)) & 1) != (h_key_slot(b, strlen(b)) & 1)) return;
    }
}

/* The per-thread connection counts of INFO ringkv (0 past the last). */
static void thread_connections(redisContext *c, long long *n) {
    redisReply *r = cmd(c, "INFO ringkv");
    for (int t = 0; t < H_MAX_THREADS; t++) {
        char name[32];
        snprintf(name, sizeof name, "thread%d", t);
        char *line = info_field(r->str, name);
        const char *p = line ? strstr(line, "connections=") : NULL;
        n[t] = p ? atoll(p + strlen("connections=")) : 0;
        free(line);
    }
    freeReplyObject(r);
}

int h_every_thread(redisContext *ctl, const struct server *s, void **conns,
                   void *(*open)(const struct server *s), void (*close)(void *conn)) {
    int threads = h_redis_mode() ? 1 : h_threads();
    assert_true(threads <= H_MAX_THREADS);
    for (int t = 0; t < threads; t++) conns[t] = NULL;
    if (threads == 1) {
        conns[0] = open(s);
        return 1;
    }
    void *spare[256];
    int nspare = 0, found = 0;
    while (found < threads && nspare < 256) {
        long long before[H_MAX_THREADS], after[H_MAX_THREADS];
        thread_connections(ctl, before);
        void *x = open(s);
        thread_connections(ctl, after);
        int on = -1;
        for (int t = 0; t < threads; t++)
            if (after[t] == before[t] + 1) on = t;
        if (on >= 0 && !conns[on]) {
            conns[on] = x;
            found++;
        } else {
            spare[nspare++] = x;
        }
    }
    for (int i = 0; i < nspare; i++) close(spare[i]);
    assert_int_equal(found, threads);
    return threads;
}
