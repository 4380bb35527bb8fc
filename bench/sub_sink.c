/*
 * bench/sub_sink.c -- subscribers for the pub/sub benchmark: NCONN
 * connections to 127.0.0.1:PORT, connection i subscribed to channel
 * PREFIX + (i % NCHANNELS) as a 12-digit number (the form redis-benchmark's
 * __rand_int__ takes), reading and discarding everything until SIGTERM.
 * Prints "ready" once every subscription is confirmed, and on exit the
 * bytes received. No parsing: the client side costs as little as it can.
 *
 *   sub_sink PORT NCONN NCHANNELS PREFIX
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: sub_sink PORT NCONN NCHANNELS PREFIX\n"); return 2; }
    int port = atoi(argv[1]), n = atoi(argv[2]), nch = atoi(argv[3]);
    const char *prefix = argv[4];
    struct pollfd *pfd = calloc((size_t)n, sizeof *pfd);
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); return 1; }
        char ch[128], cmd[256];
        int chl = snprintf(ch, sizeof ch, "%s%012d", prefix, i % nch);
        int len = snprintf(cmd, sizeof cmd, "*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n", chl, ch);
        if (write(fd, cmd, (size_t)len) != len) { perror("write"); return 1; }
        /* the confirmation: "*3\r\n$9\r\nsubscribe\r\n..." ends with ":1\r\n" */
        char buf[512];
        size_t got = 0;
        while (got < 4 || memcmp(buf + got - 4, ":1\r\n", 4) != 0) {
            ssize_t r = read(fd, buf + got, sizeof buf - got);
            if (r <= 0) { perror("read"); return 1; }
            got += (size_t)r;
        }
        pfd[i] = (struct pollfd){ .fd = fd, .events = POLLIN };
    }
    printf("ready\n");
    fflush(stdout);
    unsigned long long bytes = 0;
    static char buf[1 << 16];
    while (!stop) {
        if (poll(pfd, (nfds_t)n, 200) <= 0) continue;
        for (int i = 0; i < n; i++) {
            if (!(pfd[i].revents & POLLIN)) continue;
            ssize_t r = read(pfd[i].fd, buf, sizeof buf);
            if (r > 0) bytes += (unsigned long long)r;
            else if (r == 0) { fprintf(stderr, "connection %d closed\n", i); return 1; }
        }
    }
    printf("bytes %llu\n", bytes);
    return 0;
}
