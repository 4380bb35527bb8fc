/*
 * bench/track_get.c -- pipelined GETs from clients with CLIENT TRACKING on
 * (RESP3), which redis-benchmark cannot switch on. One thread, epoll, raw
 * RESP: each connection sends HELLO 3 and CLIENT TRACKING ON (unless
 * TRACKING=0), then keeps PIPELINE GETs of random keys in flight. Keys
 * "key:%08d" below KEYSPACE are set first to a 3-byte value, so every reply
 * is the same 9 bytes ("$3\r\nval\r\n") and is counted by length; nothing
 * writes, so no invalidation comes (the table just fills and stays).
 *
 *   track_get PORT [CLIENTS 50] [PIPELINE 16] [REQUESTS 2000000] [KEYSPACE 100000]
 *   (env TRACKING=0: plain GETs; LOAD=0: the keys are there already)
 *
 * Prints "requests seconds req/s". Server CPU is measured by the caller
 * (bench/track.sh) from /proc around the run.
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

#define REPLY_LEN 9

struct conn {
    int fd;
    long pending;      /* replies still owed */
    long rbytes;       /* bytes of the current round read */
};

static long keyspace;
static unsigned long long rng = 88172645463325252ull;
static unsigned long long next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void send_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; perror("write"); exit(1); }
        p += w;
        n -= (size_t)w;
    }
}

/* Blocking read until `until` appears at the end of what was read. */
static void read_until(int fd, const char *until) {
    char buf[4096];
    size_t len = 0, ul = strlen(until);
    for (;;) {
        ssize_t r = read(fd, buf + len, sizeof buf - len);
        if (r <= 0) { fprintf(stderr, "setup read failed\n"); exit(1); }
        len += (size_t)r;
        if (len >= ul && memcmp(buf + len - ul, until, ul) == 0) return;
        if (len == sizeof buf) len = 0;
    }
}

static size_t get_cmd(char *out) {
    char key[16];
    snprintf(key, sizeof key, "key:%08ld", (long)(next_rand() % (unsigned long long)keyspace));
    return (size_t)sprintf(out, "*2\r\n$3\r\nGET\r\n$12\r\n%s\r\n", key);
}

static void send_round(struct conn *c, int pipeline) {
    char buf[64 * 1024];
    size_t n = 0;
    for (int i = 0; i < pipeline; i++) n += get_cmd(buf + n);
    send_all(c->fd, buf, n);
    c->pending = pipeline;
    c->rbytes = 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: track_get PORT [CLIENTS] [PIPELINE] [REQUESTS] [KEYSPACE]\n"); return 2; }
    int port = atoi(argv[1]);
    int clients = argc > 2 ? atoi(argv[2]) : 50;
    int pipeline = argc > 3 ? atoi(argv[3]) : 16;
    long requests = argc > 4 ? atol(argv[4]) : 2000000;
    keyspace = argc > 5 ? atol(argv[5]) : 100000;
    const char *t = getenv("TRACKING");
    int tracking = !(t && strcmp(t, "0") == 0);

    /* load the keys (LOAD=0: already there) */
    const char *l = getenv("LOAD");
    int lf = dial(port);
    for (long k = (l && strcmp(l, "0") == 0) ? keyspace : 0; k < keyspace;) {
        char buf[64 * 1024];
        size_t n = 0;
        long batch = 0;
        for (; k < keyspace && batch < 1000; k++, batch++)
            n += (size_t)sprintf(buf + n, "*3\r\n$3\r\nSET\r\n$12\r\nkey:%08ld\r\n$3\r\nval\r\n", k);
        send_all(lf, buf, n);
        long got = 0;
        while (got < batch * 5) {   /* "+OK\r\n" each */
            ssize_t r = read(lf, buf, sizeof buf);
            if (r <= 0) { fprintf(stderr, "load failed\n"); return 1; }
            got += r;
        }
    }
    close(lf);

    int ep = epoll_create1(0);
    struct conn *cs = calloc((size_t)clients, sizeof *cs);
    for (int i = 0; i < clients; i++) {
        cs[i].fd = dial(port);
        if (tracking) {
            const char *hello = "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";
            send_all(cs[i].fd, hello, strlen(hello));
            read_until(cs[i].fd, "*0\r\n");   /* the map ends with modules: [] */
            const char *trk = "*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\nON\r\n";
            send_all(cs[i].fd, trk, strlen(trk));
            read_until(cs[i].fd, "+OK\r\n");
        }
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &cs[i] };
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long sent = 0, done = 0;
    for (int i = 0; i < clients && sent < requests; i++) {
        send_round(&cs[i], pipeline);
        sent += pipeline;
    }
    struct epoll_event evs[256];
    char buf[256 * 1024];
    while (done < sent) {
        int n = epoll_wait(ep, evs, 256, 10000);
        if (n <= 0) { fprintf(stderr, "stalled with %ld of %ld replies\n", done, sent); return 1; }
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            ssize_t r = read(c->fd, buf, sizeof buf);
            if (r <= 0) { fprintf(stderr, "connection lost\n"); return 1; }
            c->rbytes += r;
            long whole = c->rbytes / REPLY_LEN;
            if (whole >= c->pending) {
                if (c->rbytes != c->pending * REPLY_LEN) { fprintf(stderr, "unexpected reply bytes\n"); return 1; }
                done += c->pending;
                if (sent < requests) {
                    send_round(c, pipeline);
                    sent += pipeline;
                } else {
                    c->pending = 0;
                    c->rbytes = 0;
                }
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%ld %.3f %.0f\n", done, secs, (double)done / secs);
    return 0;
}
