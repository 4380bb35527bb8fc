/*
 * Listening sockets; see include/ringkv/listen.h for the idea.
 */
#include "ringkv/listen.h"
#include "ringkv/log.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define LISTEN_BACKLOG 511

/* Errors that make an optional ("-") address skipped, as Redis's. */
static bool unavailable(int err) {
    return err == EADDRNOTAVAIL || err == EAFNOSUPPORT || err == EPROTONOSUPPORT || err == ENOPROTOOPT ||
           err == ESOCKTNOSUPPORT || err == EPFNOSUPPORT;
}

/* One address: a socket bound (and listening unless probing), or -1 with
 * *why saying what failed, as Redis's anet errors do. */
static int open_one(const char *host, long long port, unsigned flags, char *why, size_t whylen) {
    char service[16];
    snprintf(service, sizeof service, "%lld", port);
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICHOST };
    struct addrinfo *res;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        snprintf(why, whylen, "%s", gai_strerror(rc));
        errno = rc == EAI_FAMILY ? EAFNOSUPPORT : EINVAL;
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    const char *step = "socket";
    bool ok = fd >= 0 && (step = "setsockopt", setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0) &&
              (!(flags & LISTEN_SHARED) || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) == 0) &&
              (res->ai_family != AF_INET6 || setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) == 0) &&
              (step = "bind", bind(fd, res->ai_addr, res->ai_addrlen) == 0) &&
              (step = "listen", (flags & LISTEN_PROBE) || listen(fd, LISTEN_BACKLOG) == 0);
    int err = errno;
    freeaddrinfo(res);
    if (!ok) {
        snprintf(why, whylen, "%s: %s", step, strerror(err));
        if (fd >= 0) close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

int listen_open(struct listen_set *ls, const char *bind, long long port, unsigned flags) {
    ls->n = 0;
    if (port == 0 || !bind) return 0;
    for (const char *p = bind; *p; ) {
        size_t len = strcspn(p, " ");
        if (len == 0) { p++; continue; }
        char word[256];
        snprintf(word, sizeof word, "%.*s", (int)len, p);
        p += len;
        bool optional = word[0] == '-';
        const char *host = word + optional;
        if (strcmp(host, "*") == 0) host = "0.0.0.0";
        else if (strcmp(host, "::*") == 0) host = "::";
        char why[128] = "too many addresses";
        int fd = ls->n < LISTEN_MAX ? open_one(host, port, flags, why, sizeof why) : (errno = EINVAL, -1);
        if (fd >= 0) {
            ls->fd[ls->n++] = fd;
            continue;
        }
        if (optional && unavailable(errno)) continue;
        rk_log(LL_WARNING, "Warning: Could not create server TCP listening socket %s:%lld: %s", host, port, why);
        listen_close(ls);
        return -1;
    }
    if (flags & LISTEN_PROBE) listen_close(ls);
    return 0;
}

int listen_unix(const char *path, unsigned perm) {
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof sa.sun_path) {
        rk_log(LL_WARNING, "Failed opening Unix socket: unix socket path too long (%zu), must be under %zu",
               strlen(path), sizeof sa.sun_path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(path);   /* a socket file of an earlier run */
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, LISTEN_BACKLOG) != 0 ||
        (perm && chmod(path, perm) != 0)) {
        rk_log(LL_WARNING, "Failed opening Unix socket: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

void listen_close(struct listen_set *ls) {
    for (unsigned i = 0; i < ls->n; i++) {
        shutdown(ls->fd[i], SHUT_RDWR);
        close(ls->fd[i]);
    }
    ls->n = 0;
}
