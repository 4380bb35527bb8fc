/*
 * bench/multi_load.c -- pipelined MULTI / SET K1 v / INCR K2 / EXEC
 * transactions, which redis-benchmark cannot send. One thread, epoll, raw
 * RESP: each of CLIENTS connections sends PIPELINE transactions (4 commands
 * each) in one write, waits for all their replies, and sends the next
 * round, until TRANSACTIONS have been answered.
 *
 * Every reply is checked, so a run cannot count errors: each transaction
 * must answer exactly +OK +QUEUED +QUEUED *2 +OK :n, the INCR values seen on
 * one connection must increase, and after the run GET K2 must be its value
 * before the run plus the number of transactions (every EXEC ran its INCR)
 * and GET K1 the value SET. Anything else stops the run with exit code 1.
 *
 *   multi_load PORT K1 K2 [CLIENTS 50] [PIPELINE 16] [TRANSACTIONS 1000000] [SERVER_PID]
 *
 * Prints "transactions seconds tx/s ticks min max": ticks is the server's
 * utime+stime (/proc/SERVER_PID/stat, the sum over all its threads, in
 * clock ticks) from the first send to the last reply, or -1 without
 * SERVER_PID; min and max are the fewest and most transactions one
 * connection had answered in that time (how evenly the server served
 * them). Connecting, the GETs before and after and a first round per
 * connection (warm-up, not counted) lie outside that window.
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

#define VALUE "multi-bench-val"
/* the replies of one transaction up to the INCR's integer */
static const char TX_PREFIX[] = "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n:";
#define TX_PREFIX_LEN (sizeof TX_PREFIX - 1)

struct conn {
    int fd;
    long pending;        /* transactions of this round not yet answered */
    long done;           /* transactions answered in the measured run */
    long long last;      /* the last INCR value seen */
    size_t have;         /* unparsed bytes in buf */
    size_t cap;
    char *buf;           /* room for a whole round's replies */
};

static const char *k1, *k2;
static char *round_cmd;  /* PIPELINE transactions, encoded once */
static size_t round_len;

static void fail(const char *what) {
    fprintf(stderr, "multi_load: %s\n", what);
    exit(1);
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

static size_t bulk(char *out, const char *s) { return (size_t)sprintf(out, "$%zu\r\n%s\r\n", strlen(s), s); }

static size_t tx_cmd(char *out) {
    size_t n = (size_t)sprintf(out, "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n");
    n += bulk(out + n, k1);
    n += bulk(out + n, VALUE);
    n += (size_t)sprintf(out + n, "*2\r\n$4\r\nINCR\r\n");
    n += bulk(out + n, k2);
    n += (size_t)sprintf(out + n, "*1\r\n$4\r\nEXEC\r\n");
    return n;
}

/* GET KEY on a blocking connection: its value, NULL for a nil reply. */
static char *get_value(int fd, const char *key) {
    char cmd[512], buf[512];
    size_t n = (size_t)sprintf(cmd, "*2\r\n$3\r\nGET\r\n");
    n += bulk(cmd + n, key);
    send_all(fd, cmd, n);
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
        if (r <= 0) fail("GET: connection lost");
        len += (size_t)r;
        buf[len] = 0;
        if (strcmp(buf, "$-1\r\n") == 0) return NULL;
        if (buf[0] != '$') fail("GET: not a bulk reply");
        char *eol = strstr(buf, "\r\n");
        if (!eol) continue;
        long vl = atol(buf + 1);
        char *v = eol + 2;
        if (len < (size_t)(v - buf) + (size_t)vl + 2) continue;
        v[vl] = 0;
        return strdup(v);
    }
}

static long long get_counter(int fd) {
    char *v = get_value(fd, k2);
    long long n = v ? atoll(v) : 0;
    free(v);
    return n;
}

/* Consume whole transaction replies from c->buf; returns how many. */
static long parse_replies(struct conn *c) {
    long got = 0;
    size_t off = 0;
    for (;;) {
        size_t left = c->have - off;
        if (left < TX_PREFIX_LEN + 3) break;
        const char *p = c->buf + off;
        if (memcmp(p, TX_PREFIX, TX_PREFIX_LEN) != 0) {
            fprintf(stderr, "multi_load: unexpected reply: %.*s\n", (int)(left < 120 ? left : 120), p);
            exit(1);
        }
        size_t i = TX_PREFIX_LEN;
        long long v = 0;
        while (i < left && p[i] >= '0' && p[i] <= '9') v = v * 10 + (p[i++] - '0');
        if (i + 2 > left) break;   /* the integer continues in the next read */
        if (i == TX_PREFIX_LEN || p[i] != '\r' || p[i + 1] != '\n') fail("bad INCR reply in EXEC");
        if (v <= c->last) fail("INCR did not increase");
        c->last = v;
        off += i + 2;
        got++;
    }
    memmove(c->buf, c->buf + off, c->have - off);
    c->have -= off;
    return got;
}

static long long ticks_of(long pid) {
    if (pid <= 0) return -1;
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) fail("cannot read the server's /proc stat");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');   /* comm may hold spaces */
    if (!p) fail("bad /proc stat");
    unsigned long long ut = 0, st = 0;
    /* after ") ": state(3) ... utime is field 14, stime 15 */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) fail("bad /proc stat");
    return (long long)(ut + st);
}

/* Run rounds until `target` transactions are answered; returns them. */
static long run(struct conn *cs, int clients, int ep, int pipeline, long target) {
    long sent = 0, done = 0;
    for (int i = 0; i < clients && sent < target; i++) {
        send_all(cs[i].fd, round_cmd, round_len);
        cs[i].pending = pipeline;
        sent += pipeline;
    }
    struct epoll_event evs[256];
    while (done < sent) {
        int n = epoll_wait(ep, evs, 256, 10000);
        if (n <= 0) { fprintf(stderr, "multi_load: stalled with %ld of %ld transactions\n", done, sent); exit(1); }
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            ssize_t r = read(c->fd, c->buf + c->have, c->cap - c->have);
            if (r <= 0) fail("connection lost");
            c->have += (size_t)r;
            long got = parse_replies(c);
            if (got > c->pending) fail("more replies than transactions");
            c->pending -= got;
            c->done += got;
            done += got;
            if (c->pending == 0) {
                if (c->have) fail("bytes after the last reply of a round");
                if (sent < target) {
                    send_all(c->fd, round_cmd, round_len);
                    c->pending = pipeline;
                    sent += pipeline;
                }
            }
        }
    }
    return done;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: multi_load PORT K1 K2 [CLIENTS 50] [PIPELINE 16] [TRANSACTIONS 1000000] [SERVER_PID]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    k1 = argv[2];
    k2 = argv[3];
    int clients = argc > 4 ? atoi(argv[4]) : 50;
    int pipeline = argc > 5 ? atoi(argv[5]) : 16;
    long target = argc > 6 ? atol(argv[6]) : 1000000;
    long pid = argc > 7 ? atol(argv[7]) : 0;
    if (clients < 1 || pipeline < 1 || target < 1 || strlen(k1) > 200 || strlen(k2) > 200) fail("bad arguments");

    char one[1024];
    size_t one_len = tx_cmd(one);
    round_len = one_len * (size_t)pipeline;
    round_cmd = malloc(round_len);
    for (int i = 0; i < pipeline; i++) memcpy(round_cmd + one_len * (size_t)i, one, one_len);

    int ctl = dial(port);
    long long before = get_counter(ctl);

    int ep = epoll_create1(0);
    struct conn *cs = calloc((size_t)clients, sizeof *cs);
    for (int i = 0; i < clients; i++) {
        cs[i].fd = dial(port);
        cs[i].last = before;
        cs[i].cap = (size_t)pipeline * 64 + 1024;   /* a transaction's replies: under 64 bytes */
        cs[i].buf = malloc(cs[i].cap);
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &cs[i] };
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    }
    long warm = run(cs, clients, ep, pipeline, (long)clients * pipeline);
    for (int i = 0; i < clients; i++) cs[i].done = 0;

    struct timespec t0, t1;
    long long tk0 = ticks_of(pid);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long done = run(cs, clients, ep, pipeline, target);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long tk1 = ticks_of(pid);

    long long after = get_counter(ctl);
    if (after != before + warm + done) {
        fprintf(stderr, "multi_load: %s is %lld, expected %lld\n", k2, after, before + warm + done);
        return 1;
    }
    char *v = get_value(ctl, k1);
    if (!v || strcmp(v, VALUE) != 0) fail("K1 does not hold the value SET");
    free(v);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    long lo = cs[0].done, hi = cs[0].done;
    for (int i = 1; i < clients; i++) {
        if (cs[i].done < lo) lo = cs[i].done;
        if (cs[i].done > hi) hi = cs[i].done;
    }
    printf("%ld %.3f %.0f %lld %ld %ld\n", done, secs, (double)done / secs, pid > 0 ? tk1 - tk0 : -1, lo, hi);
    return 0;
}
