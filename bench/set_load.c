/*
 * bench/set_load.c -- SETs over many connections, for when redis-benchmark
 * is the ceiling. One thread, epoll, raw RESP: each of CLIENTS connections
 * sends PIPELINE `SET key:<12 digits> xxx` commands (random keys below
 * KEYSPACE) in one write, waits for all their replies, and sends the next
 * round, until REQUESTS have been answered. It costs less client CPU per
 * request than redis-benchmark, so a server that answers faster than
 * redis-benchmark can ask shows it.
 *
 * Every reply must be +OK (anything else stops the run with exit code 1),
 * so a run cannot count errors.
 *
 *   set_load PORT [CLIENTS 50] [PIPELINE 1] [REQUESTS 1000000] [KEYSPACE 1000000] [SERVER_PID]
 *
 * Prints "requests seconds req/s ticks": ticks is the server's utime+stime
 * (/proc/SERVER_PID/stat, the sum over all its threads, in clock ticks)
 * from the first send to the last reply, or -1 without SERVER_PID.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KEY_DIGITS 12
/* one command; the key's digits are rewritten before each send */
static const char SET_CMD[] = "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000000\r\n$3\r\nxxx\r\n";
#define SET_LEN (sizeof SET_CMD - 1)
#define KEY_AT 22 /* offset of the first digit in SET_CMD */
static const char OK[] = "+OK\r\n";
#define OK_LEN (sizeof OK - 1)

struct conn {
    int fd;
    long pending;   /* replies of this round not yet read */
    size_t have;    /* bytes of a partial reply kept in part */
    char part[OK_LEN];
};

static long clients = 50, pipeline = 1, requests = 1000000, keyspace = 1000000;
static char *sendbuf;
static unsigned long long rng = 88172645463325252ull;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static unsigned long long next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static long server_ticks(const char *pid)
{
    if (!pid)
        return -1;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
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

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void send_round(struct conn *c)
{
    for (long i = 0; i < pipeline; i++) {
        char *cmd = sendbuf + i * SET_LEN;
        unsigned long long k = next_rand() % (unsigned long long)keyspace;
        for (int d = KEY_DIGITS - 1; d >= 0; d--, k /= 10)
            cmd[KEY_AT + d] = (char)('0' + k % 10);
    }
    size_t len = (size_t)pipeline * SET_LEN, off = 0;
    while (off < len) {
        ssize_t n = send(c->fd, sendbuf + off, len - off, 0);
        if (n < 0 && errno != EINTR)
            die("send");
        if (n > 0)
            off += (size_t)n;
    }
    c->pending = pipeline;
}

/* reads what is there; returns the replies completed */
static long read_replies(struct conn *c)
{
    char buf[65536];
    ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) {
        fprintf(stderr, "server closed a connection\n");
        exit(1);
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return 0;
        die("recv");
    }
    long done = 0;
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] != OK[c->have]) {
            fprintf(stderr, "unexpected reply byte 0x%02x\n", (unsigned char)buf[i]);
            exit(1);
        }
        if (++c->have == OK_LEN) {
            c->have = 0;
            done++;
        }
    }
    c->pending -= done;
    return done;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: set_load PORT [CLIENTS] [PIPELINE] [REQUESTS] [KEYSPACE] [SERVER_PID]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    if (argc > 2) clients = atol(argv[2]);
    if (argc > 3) pipeline = atol(argv[3]);
    if (argc > 4) requests = atol(argv[4]);
    if (argc > 5) keyspace = atol(argv[5]);
    const char *pid = argc > 6 ? argv[6] : NULL;
    if (clients < 1 || pipeline < 1 || requests < 1 || keyspace < 1)
        return 2;
    sendbuf = malloc((size_t)pipeline * SET_LEN);
    for (long i = 0; i < pipeline; i++)
        memcpy(sendbuf + i * SET_LEN, SET_CMD, SET_LEN);

    int ep = epoll_create1(0);
    struct conn *conns = calloc((size_t)clients, sizeof *conns);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    for (long i = 0; i < clients; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
            die("connect");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conns[i].fd = fd;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
            die("epoll_ctl");
    }

    long t0 = server_ticks(pid);
    double s0 = now();
    long sent = 0, answered = 0;
    for (long i = 0; i < clients && sent < requests; i++, sent += pipeline)
        send_round(&conns[i]);
    struct epoll_event evs[256];
    while (answered < sent) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0 && errno != EINTR)
            die("epoll_wait");
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            answered += read_replies(c);
            if (c->pending == 0 && sent < requests) {
                send_round(c);
                sent += pipeline;
            }
        }
    }
    double secs = now() - s0;
    long t1 = server_ticks(pid);
    printf("%ld %.3f %.0f %ld\n", answered, secs, answered / secs, pid ? t1 - t0 : -1);
    return 0;
}
