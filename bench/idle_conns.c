/*
 * idle_conns PORT N: open N connections to 127.0.0.1:PORT, send one PING on
 * each and wait for its +PONG, print "ready N" and then hold the connections
 * open until killed (SIGTERM). Used by compare.sh to measure RSS per idle
 * connection.
 *
 *   gcc -O2 -std=gnu17 -Wall -Wextra -Werror -o idle_conns bench/idle_conns.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s PORT N\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    long n = atol(argv[2]);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if ((long)rl.rlim_cur < n + 64) {
        rl.rlim_cur = (rlim_t)(n + 64) < rl.rlim_max ? (rlim_t)(n + 64) : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    for (long i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) {
            fprintf(stderr, "socket %ld: %s\n", i, strerror(errno));
            return 1;
        }
        struct timeval tv = { 10, 0 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
            fprintf(stderr, "connect %ld: %s\n", i, strerror(errno));
            return 1;
        }
        if (write(fd, ping, sizeof ping - 1) != (ssize_t)(sizeof ping - 1)) {
            fprintf(stderr, "write %ld: %s\n", i, strerror(errno));
            return 1;
        }
        char buf[16];
        size_t got = 0;
        while (got < 7) {
            ssize_t k = read(fd, buf + got, 7 - got);
            if (k <= 0) {
                fprintf(stderr, "read %ld: %s\n", i, k == 0 ? "closed" : strerror(errno));
                return 1;
            }
            got += (size_t)k;
        }
        if (memcmp(buf, "+PONG\r\n", 7) != 0) {
            fprintf(stderr, "connection %ld: unexpected reply %.7s\n", i, buf);
            return 1;
        }
    }
    printf("ready %ld\n", n);
    fflush(stdout);
    for (;;) pause();
}
