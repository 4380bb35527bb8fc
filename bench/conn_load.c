/*
 * bench/conn_load.c -- GET or SET over many connections with every
 * request's latency, for the connection x pipeline matrix (issue 16), where
 * redis-benchmark stops being usable: it registers its sockets in an event
 * loop of 10240 slots, so past about 10,000 connections the rest never send,
 * and its latency is one figure per pipelined batch. One thread, epoll, raw
 * RESP, like set_load.c and zipf_load.c.
 *
 * Connecting: CONNS non-blocking connects, BATCH at a time; each batch must
 * be connected and must have answered a PING before the next starts, so the
 * server's accept queue never holds more than BATCH connections (a full
 * queue drops SYNs, and the client's retransmission waits a whole second).
 * A connect that fails with EAGAIN or EADDRNOTAVAIL (no local port free yet)
 * is retried after a millisecond.
 *
 * Load: every connection keeps PIPELINE requests in flight: each reply read
 * is replaced at once by a new request, all the replacements of one read
 * going out in one write (a sliding window, as memtier_benchmark's
 * --pipeline; redis-benchmark's -P instead sends a batch and waits for all
 * of it). Keys are `key:<12 digits>` drawn uniformly below KEYSPACE; SET
 * values are VALUE_SIZE bytes of 'x' (3, as redis-benchmark -d 3). The run
 * ends after REQUESTS requests, or SECONDS seconds, whichever comes first
 * (0 turns a limit off); what is in flight then is still waited for.
 *
 * Latency: each request's, from the write that sent it to the read that
 * brought its reply (one clock reading per system call), into a log-linear
 * histogram of nanoseconds: exact below 256 ns, then 128 buckets per power
 * of two, so a percentile is off by less than 1/128. The reported
 * percentile is its bucket's upper edge (never above the exact maximum).
 *
 * Every reply is checked (GET: nil or a bulk string; SET: +OK); an error
 * reply or anything else stops the run with exit code 1, so a run cannot
 * count errors. A run in which no reply arrives for STALL seconds stops
 * with exit code 1 too, saying how many connections were left waiting.
 *
 *   conn_load [-h HOST] [-p PORT] [-c CONNS 50] [-P PIPELINE 1]
 *             [-t get|set|fill] [-n REQUESTS 1000000] [-T SECONDS 0]
 *             [-r KEYSPACE 1000000] [-d VALUE_SIZE 3] [-b BATCH 128]
 *             [-W STALL 30] [-S SEED 1] [-x SERVER_PID]
 *
 * -t fill SETs key 0 .. KEYSPACE-1 once each, in order (REQUESTS is then
 * KEYSPACE): the keys a GET run should find.
 *
 * Prints one line of key=value figures:
 *   test conns pipeline requests elapsed_s rps p50_ms p99_ms p999_ms max_ms
 *   mean_ms served hits server_ticks client_cpu_pct connect_s
 *   server_rss_before_kb server_rss_after_kb
 * served is how many connections had at least one reply in the measured
 * run (all of them, unless REQUESTS < CONNS or the server starves some);
 * hits counts GET replies that were not nil; server_ticks is the server's
 * utime+stime (/proc/SERVER_PID/stat, the sum over all its threads, in clock
 * ticks) from the first request sent to the last reply, -1 without -x;
 * client_cpu_pct is this process's CPU time over that span: near 100 the
 * client, not the server, set the pace. server_rss_before_kb is the server's
 * VmRSS before the first connection, server_rss_after_kb after the last
 * reply with every connection still open (-1 without -x): what the
 * connections and their traffic cost the server, keys aside when a run
 * adds none.
 */
/* clock_gettime, getaddrinfo under plain -std=c17 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KEY_DIGITS 12
#define KEY_LEN (4 + KEY_DIGITS)

enum test { TEST_GET, TEST_SET, TEST_FILL };
enum state { CS_CONNECTING, CS_PINGING, CS_READY };

struct conn {
    int fd;
    enum state state;
    uint32_t inflight;   /* requests sent and not answered */
    uint32_t head;       /* slot of the oldest in-flight request in sent_at */
    uint64_t *sent_at;   /* ring of PIPELINE send times, ns */
    long replies;        /* replies in the measured run */
    char *unsent;        /* the tail of a write the socket did not take */
    size_t unsent_len;
    /* reply parser: a header line, then (bulk) a body to skip */
    int in_body;
    long body_left;      /* bytes of the bulk string and its CRLF still to come */
    size_t line_len;
    char line[128];      /* room for the start of an error reply, to show */
};

static const char *host = "127.0.0.1";
static const char *port = "6379";
static long conns_n = 50, pipeline = 1, requests = 1000000, value_size = 3, batch = 128;
static double seconds_limit = 0, stall_limit = 30;
static uint64_t keyspace = 1000000;
static unsigned long long seed = 1;
static const char *server_pid;
static enum test test = TEST_GET;

static struct addrinfo *server_addr;
static int ep;
static struct conn *conns;
static char *tmpl, *outbuf; /* one command (key digits rewritten per use); a window's worth */
static size_t tmpl_len, key_at;

static long issued, answered, hits, connect_retries;
static int stop_issuing;  /* time limit reached */
static int measuring;     /* replies count as the run's (not the handshake's PONGs) */
static uint64_t t_start, t_last_reply;

static _Noreturn void die(const char *what)
{
    perror(what);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* The server's VmRSS in kB, -1 without -x. */
static long server_rss_kb(void)
{
    if (!server_pid)
        return -1;
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof path, "/proc/%s/status", server_pid);
    FILE *f = fopen(path, "r");
    if (!f)
        die("server status");
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static long server_ticks(void)
{
    if (!server_pid)
        return -1;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", server_pid);
    FILE *f = fopen(path, "r");
    if (!f)
        die("server stat");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    long utime = 0, stime = 0;
    /* fields after the name: state is 3rd; utime 14th, stime 15th */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime, &stime) != 2)
        die("server stat fields");
    return utime + stime;
}

/* ---- latency histogram ---- */

/* Values below 2^(SUB_BITS+1) get a bucket each; above, each power of two
 * [2^k, 2^(k+1)) is cut into 2^SUB_BITS equal buckets, so a bucket is never
 * wider than 1/2^SUB_BITS of the values in it. */
#define SUB_BITS 7
#define SUB (1u << SUB_BITS)
#define N_BUCKETS ((64 - SUB_BITS) * SUB)

static uint64_t hist[N_BUCKETS], hist_count, hist_max;
static double hist_sum;

static unsigned bucket_of(uint64_t v)
{
    if (v < 2 * SUB)
        return (unsigned)v;
    unsigned shift = 63u - (unsigned)__builtin_clzll(v) - SUB_BITS;
    return (shift + 1) * SUB + (unsigned)(v >> shift) - SUB;
}

static uint64_t bucket_top(unsigned b) /* the largest value in bucket b */
{
    if (b < 2 * SUB)
        return b;
    unsigned shift = b / SUB - 1;
    uint64_t low = (uint64_t)(b % SUB + SUB) << shift;
    return low + ((uint64_t)1 << shift) - 1;
}

static void record(uint64_t ns)
{
    hist[bucket_of(ns)]++;
    hist_count++;
    hist_sum += (double)ns;
    if (ns > hist_max)
        hist_max = ns;
}

static double percentile_ms(double q)
{
    if (hist_count == 0)
        return 0;
    uint64_t want = (uint64_t)(q / 100 * (double)hist_count + 0.999999), seen = 0;
    if (want < 1)
        want = 1;
    for (unsigned b = 0; b < N_BUCKETS; b++) {
        seen += hist[b];
        if (seen >= want) {
            uint64_t v = bucket_top(b);
            return (double)(v < hist_max ? v : hist_max) / 1e6;
        }
    }
    return (double)hist_max / 1e6;
}

/* ---- commands ---- */

static unsigned long long rng_state;

static uint64_t next_rand(void)
{
    /* xorshift64*: fast, and its low bits are fine after the multiply */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static void build_template(void)
{
    int is_get = test == TEST_GET;
    tmpl = malloc(96 + (size_t)value_size);
    if (!tmpl)
        die("malloc");
    tmpl_len = (size_t)sprintf(tmpl, "*%d\r\n$3\r\n%s\r\n$%d\r\nkey:", is_get ? 2 : 3, is_get ? "GET" : "SET", KEY_LEN);
    key_at = tmpl_len;
    tmpl_len += (size_t)sprintf(tmpl + tmpl_len, "%0*d\r\n", KEY_DIGITS, 0);
    if (!is_get) {
        tmpl_len += (size_t)sprintf(tmpl + tmpl_len, "$%ld\r\n", value_size);
        memset(tmpl + tmpl_len, 'x', (size_t)value_size);
        tmpl_len += (size_t)value_size;
        memcpy(tmpl + tmpl_len, "\r\n", 2);
        tmpl_len += 2;
    }
    outbuf = malloc((size_t)pipeline * tmpl_len);
    if (!outbuf)
        die("malloc");
}

static void put_key(char *at, uint64_t k)
{
    for (int d = KEY_DIGITS - 1; d >= 0; d--, k /= 10)
        at[d] = (char)('0' + k % 10);
}

static int may_issue(void)
{
    return !stop_issuing && (requests == 0 || issued < requests);
}

static void want_writable(struct conn *c, int on)
{
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        die("epoll_ctl");
}

/* Writes what it can; keeps the rest in c->unsent and asks for EPOLLOUT. */
static void send_some(struct conn *c, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = send(c->fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            break;
        if (w < 0)
            die("send");
        p += w;
        len -= (size_t)w;
    }
    if (len == 0)
        return;
    char *keep = malloc(len);
    if (!keep)
        die("malloc");
    memcpy(keep, p, len);
    c->unsent = keep;
    c->unsent_len = len;
    want_writable(c, 1);
}

static void flush_unsent(struct conn *c)
{
    char *p = c->unsent;
    size_t len = c->unsent_len;
    c->unsent = NULL;
    c->unsent_len = 0;
    want_writable(c, 0);
    send_some(c, p, len);
    free(p);
}

/* Tops the connection's window up to PIPELINE (at most `most` requests)
 * with one write. */
static void refill(struct conn *c, long most)
{
    if (c->unsent)
        return; /* the socket is full; the rest goes after the flush */
    long n = 0, room = pipeline - (long)c->inflight;
    if (room > most)
        room = most;
    size_t len = 0;
    for (; n < room && may_issue(); n++, issued++) {
        uint64_t k = test == TEST_FILL ? (uint64_t)issued : next_rand() % keyspace;
        memcpy(outbuf + len, tmpl, tmpl_len);
        put_key(outbuf + len + key_at, k);
        len += tmpl_len;
    }
    if (n == 0)
        return;
    uint64_t t = now_ns();
    for (long i = 0; i < n; i++)
        c->sent_at[(c->head + c->inflight + (uint32_t)i) % (uint32_t)pipeline] = t;
    c->inflight += (uint32_t)n;
    send_some(c, outbuf, len);
}

/* ---- replies ---- */

static _Noreturn void bad_reply(struct conn *c, const char *why)
{
    c->line[c->line_len < sizeof c->line ? c->line_len : sizeof c->line - 1] = 0;
    fprintf(stderr, "conn_load: %s: %s\n", why, c->line);
    exit(1);
}

static void reply_done(struct conn *c, uint64_t t, int hit)
{
    if (!measuring) {
        c->state = CS_READY;
        return;
    }
    if (c->inflight == 0)
        bad_reply(c, "a reply to no request");
    record(t - c->sent_at[c->head]);
    c->head = (c->head + 1) % (uint32_t)pipeline;
    c->inflight--;
    c->replies++;
    answered++;
    hits += hit;
}

/* one header line (CRLF stripped) */
static void header(struct conn *c, uint64_t t)
{
    if (c->line_len == 0)
        bad_reply(c, "empty reply line");
    if (c->line[0] == '-')
        bad_reply(c, "error reply");
    if (!measuring) {
        if (c->line_len != 5 || memcmp(c->line, "+PONG", 5) != 0)
            bad_reply(c, "unexpected reply to PING");
        reply_done(c, t, 0);
        return;
    }
    if (test != TEST_GET) {
        if (c->line_len != 3 || memcmp(c->line, "+OK", 3) != 0)
            bad_reply(c, "unexpected reply to SET");
        reply_done(c, t, 0);
        return;
    }
    if (c->line[0] != '$')
        bad_reply(c, "unexpected reply to GET");
    if (c->line_len == 3 && memcmp(c->line, "$-1", 3) == 0) {
        reply_done(c, t, 0);
        return;
    }
    c->line[c->line_len] = 0;
    char *end;
    long blen = strtol(c->line + 1, &end, 10);
    if (*end || blen < 0)
        bad_reply(c, "bad bulk length");
    c->in_body = 1;
    c->body_left = blen + 2;
}

static void read_replies(struct conn *c)
{
    char buf[65536];
    ssize_t n = recv(c->fd, buf, sizeof buf, 0);
    if (n == 0) {
        fprintf(stderr, "conn_load: the server closed a connection\n");
        exit(1);
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return;
        die("recv");
    }
    uint64_t t = now_ns();
    t_last_reply = t;
    for (ssize_t i = 0; i < n;) {
        if (c->in_body) {
            long take = (long)(n - i) < c->body_left ? (long)(n - i) : c->body_left;
            i += take;
            c->body_left -= take;
            if (c->body_left == 0) {
                c->in_body = 0;
                reply_done(c, t, 1);
            }
            continue;
        }
        char *nl = memchr(buf + i, '\n', (size_t)(n - i));
        size_t take = nl ? (size_t)(nl - (buf + i)) + 1 : (size_t)(n - i);
        if (c->line_len + take >= sizeof c->line) {
            size_t room = sizeof c->line - 1 - c->line_len;
            memcpy(c->line + c->line_len, buf + i, room);
            c->line_len += room;
            bad_reply(c, c->line[0] == '-' ? "error reply" : "reply line too long");
        }
        memcpy(c->line + c->line_len, buf + i, take);
        c->line_len += take;
        i += (ssize_t)take;
        if (nl) {
            if (c->line_len < 2 || c->line[c->line_len - 2] != '\r')
                bad_reply(c, "reply line without CRLF");
            c->line_len -= 2;
            header(c, t);
            c->line_len = 0;
        }
    }
}

/* ---- connecting ---- */

static void resolve(void)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    int rc = getaddrinfo(host, port, &hints, &server_addr);
    if (rc != 0) {
        fprintf(stderr, "conn_load: %s:%s: %s\n", host, port, gai_strerror(rc));
        exit(1);
    }
}

/* Local ports. Left to the kernel, connect() looks for a free port by
 * walking the ephemeral range, even ports first: once half the range holds
 * connections to this server, every connect walks past all of them, and
 * each further connection costs more system time than the last. So each
 * socket binds a port itself, walking the range once from a cursor; with
 * SO_REUSEADDR a port whose last connection is in TIME_WAIT (a previous
 * run's) can be taken again. */
static unsigned port_lo, port_hi, port_next;

static void port_range(void)
{
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (!f || fscanf(f, "%u %u", &port_lo, &port_hi) != 2 || port_lo < 1 || port_hi > 65535 || port_lo > port_hi) {
        port_lo = 32768;
        port_hi = 60999;
    }
    if (f)
        fclose(f);
    port_next = port_lo + (unsigned)getpid() % (port_hi - port_lo + 1);
}

static int bind_next_port(int fd)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    unsigned span = port_hi - port_lo + 1;
    for (unsigned tries = 0; tries < span; tries++) {
        uint16_t p = htons((uint16_t)port_next);
        port_next = port_next == port_hi ? port_lo : port_next + 1;
        if (server_addr->ai_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            a->sin6_family = AF_INET6;
            a->sin6_addr = in6addr_any;
            a->sin6_port = p;
            len = sizeof *a;
        } else {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            a->sin_family = AF_INET;
            a->sin_addr.s_addr = htonl(INADDR_ANY);
            a->sin_port = p;
            len = sizeof *a;
        }
        if (bind(fd, (struct sockaddr *)&ss, len) == 0)
            return 0;
        if (errno != EADDRINUSE)
            die("bind");
    }
    return -1;
}

/* Starts a non-blocking connect; a port whose pairing with the server is
 * still taken (EADDRNOTAVAIL), or a full range, is retried. */
static void start_connect(struct conn *c)
{
    for (;;) {
        int fd = socket(server_addr->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
        if (fd < 0)
            die("socket (raise ulimit -n?)");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        int bound = bind_next_port(fd) == 0;
        if (bound && (connect(fd, server_addr->ai_addr, server_addr->ai_addrlen) == 0 || errno == EINPROGRESS)) {
            c->fd = fd;
            c->state = CS_CONNECTING;
            struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
            if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
                die("epoll_ctl");
            return;
        }
        int err = errno;
        if (err != EAGAIN && err != EADDRNOTAVAIL && err != EADDRINUSE)
            die("connect");
        close(fd);
        if (++connect_retries > 100000) {
            fprintf(stderr, "conn_load: no local port for a connection after %ld tries\n", connect_retries);
            exit(1);
        }
        /* the next port may do; a full range or EAGAIN needs time */
        if (!bound || err == EAGAIN)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

/* The connection is up: it sends PING and waits for +PONG. */
static void connected(struct conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        die("getsockopt");
    if (err) {
        errno = err;
        die("connect");
    }
    c->state = CS_PINGING;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        die("epoll_ctl");
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    send_some(c, ping, sizeof ping - 1);
}

static void connect_all(void)
{
    struct epoll_event evs[256];
    for (long first = 0; first < conns_n; first += batch) {
        long end = first + batch < conns_n ? first + batch : conns_n, ready = 0;
        for (long i = first; i < end; i++)
            start_connect(&conns[i]);
        uint64_t since = now_ns();
        while (ready < end - first) {
            int n = epoll_wait(ep, evs, 256, 1000);
            if (n < 0 && errno != EINTR)
                die("epoll_wait");
            for (int i = 0; i < n; i++) {
                struct conn *c = evs[i].data.ptr;
                if (c->state == CS_CONNECTING) {
                    connected(c);
                } else if (c->unsent && (evs[i].events & EPOLLOUT)) {
                    flush_unsent(c);
                } else {
                    read_replies(c);
                    ready += c->state == CS_READY;
                }
            }
            if (n > 0)
                since = now_ns();
            else if ((double)(now_ns() - since) / 1e9 > stall_limit) {
                fprintf(stderr, "conn_load: connecting stalled: %ld connections ready, %ld of a batch waiting\n",
                        first + ready, end - first - ready);
                exit(1);
            }
        }
    }
}

/* ---- the run ---- */

static _Noreturn void stalled(void)
{
    long waiting = 0;
    for (long i = 0; i < conns_n; i++)
        waiting += conns[i].inflight > 0;
    fprintf(stderr, "conn_load: no reply for %.0f s: %ld of %ld replies, %ld connections waiting\n", stall_limit,
            answered, issued, waiting);
    exit(1);
}

static void run(void)
{
    measuring = 1;
    t_start = t_last_reply = now_ns();
    /* Starting with a full window everywhere would spend a small REQUESTS on
     * the first connections; an even share gives every connection some. */
    long first_window = pipeline;
    if (requests > 0 && (requests + conns_n - 1) / conns_n < first_window)
        first_window = (requests + conns_n - 1) / conns_n;
    for (long i = 0; i < conns_n; i++)
        refill(&conns[i], first_window);
    struct epoll_event evs[256];
    while (answered < issued) {
        int n = epoll_wait(ep, evs, 256, 1000);
        if (n < 0 && errno != EINTR)
            die("epoll_wait");
        if (seconds_limit > 0 && !stop_issuing && (double)(now_ns() - t_start) / 1e9 >= seconds_limit)
            stop_issuing = 1;
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if ((evs[i].events & EPOLLOUT) && c->unsent)
                flush_unsent(c);
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                read_replies(c);
            refill(c, pipeline);
        }
        if (n <= 0 && (double)(now_ns() - t_last_reply) / 1e9 > stall_limit)
            stalled();
    }
}

static _Noreturn void usage(void)
{
    fprintf(stderr, "usage: conn_load [-h HOST] [-p PORT] [-c CONNS] [-P PIPELINE] [-t get|set|fill]\n"
                    "                 [-n REQUESTS] [-T SECONDS] [-r KEYSPACE] [-d VALUE_SIZE]\n"
                    "                 [-b BATCH] [-W STALL_SECONDS] [-S SEED] [-x SERVER_PID]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "h:p:c:P:t:n:T:r:d:b:W:S:x:")) != -1) {
        switch (opt) {
        case 'h': host = optarg; break;
        case 'p': port = optarg; break;
        case 'c': conns_n = atol(optarg); break;
        case 'P': pipeline = atol(optarg); break;
        case 't':
            if (strcmp(optarg, "get") == 0)
                test = TEST_GET;
            else if (strcmp(optarg, "set") == 0)
                test = TEST_SET;
            else if (strcmp(optarg, "fill") == 0)
                test = TEST_FILL;
            else
                usage();
            break;
        case 'n': requests = atol(optarg); break;
        case 'T': seconds_limit = atof(optarg); break;
        case 'r': keyspace = strtoull(optarg, NULL, 10); break;
        case 'd': value_size = atol(optarg); break;
        case 'b': batch = atol(optarg); break;
        case 'W': stall_limit = atof(optarg); break;
        case 'S': seed = strtoull(optarg, NULL, 10); break;
        case 'x': server_pid = optarg; break;
        default: usage();
        }
    }
    if (test == TEST_FILL)
        requests = (long)keyspace;
    if (optind != argc || conns_n < 1 || pipeline < 1 || pipeline > 1000000 || requests < 0 || value_size < 0 ||
        keyspace < 1 || batch < 1 || stall_limit <= 0 || seconds_limit < 0 || (requests == 0 && seconds_limit == 0))
        usage();
    /* xorshift must not start at 0; mixing spreads small seeds apart */
    rng_state = (seed + 1) * 0x9E3779B97F4A7C15ull;
    if (!rng_state)
        rng_state = 1;
    build_template();
    resolve();
    port_range();
    ep = epoll_create1(0);
    if (ep < 0)
        die("epoll_create1");
    conns = calloc((size_t)conns_n, sizeof *conns);
    uint64_t *slots = malloc((size_t)conns_n * (size_t)pipeline * sizeof *slots);
    if (!conns || !slots)
        die("malloc");
    for (long i = 0; i < conns_n; i++)
        conns[i].sent_at = slots + (size_t)i * (size_t)pipeline;

    long rss0 = server_rss_kb();
    uint64_t c0 = now_ns();
    connect_all();
    double connect_s = (double)(now_ns() - c0) / 1e9;

    long t0 = server_ticks();
    double cpu0 = cpu_seconds();
    run();
    uint64_t t_end = now_ns();
    long t1 = server_ticks();
    long rss1 = server_rss_kb();
    double cpu = cpu_seconds() - cpu0, secs = (double)(t_end - t_start) / 1e9;

    long served = 0;
    for (long i = 0; i < conns_n; i++)
        served += conns[i].replies > 0;
    static const char *names[] = {"get", "set", "fill"};
    printf("test=%s conns=%ld pipeline=%ld requests=%ld elapsed_s=%.3f rps=%.0f p50_ms=%.3f p99_ms=%.3f "
           "p999_ms=%.3f max_ms=%.3f mean_ms=%.3f served=%ld hits=%ld server_ticks=%ld client_cpu_pct=%.0f "
           "connect_s=%.3f connect_retries=%ld server_rss_before_kb=%ld server_rss_after_kb=%ld\n",
           names[test], conns_n, pipeline, answered, secs, secs > 0 ? (double)answered / secs : 0.0,
           percentile_ms(50), percentile_ms(99), percentile_ms(99.9), (double)hist_max / 1e6,
           hist_count ? hist_sum / (double)hist_count / 1e6 : 0.0, served, hits, server_pid ? t1 - t0 : -1,
           secs > 0 ? 100 * cpu / secs : 0.0, connect_s, connect_retries, rss0, rss1);
    return 0;
}
