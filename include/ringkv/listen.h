/*
 * Listening sockets for `bind`, `port` and `unixsocket` (Redis's
 * listenToPort and anetUnixServer).
 *
 * `bind` is a list of addresses: "*" is every IPv4 address, "::*" every
 * IPv6 one, and a leading "-" makes an address optional, skipped when the
 * machine cannot have it (no such address, no IPv6) rather than failing
 * the whole list, as in Redis. Port 0 means no TCP listener at all.
 *
 * Every worker opens its own set with SO_REUSEPORT, which is how the kernel
 * spreads connections over the workers. Shared binding would also let a
 * second server of the same user take the port silently, so a start first
 * binds each address once without it (LISTEN_PROBE without LISTEN_SHARED).
 * A change at run time (CONFIG SET port or bind) is probed with
 * LISTEN_SHARED, since the workers still hold the old addresses, which may
 * overlap the new ones.
 */
#ifndef RINGKV_LISTEN_H
#define RINGKV_LISTEN_H

#include <stdbool.h>

#define LISTEN_MAX 16          /* bind addresses, as Redis's CONFIG_BINDADDR_MAX */

#define LISTEN_SHARED  (1u << 0)   /* SO_REUSEPORT: one socket per worker */
#define LISTEN_PROBE   (1u << 1)   /* bind only, to learn whether the addresses are free; closed after */

struct listen_set {
    int fd[LISTEN_MAX];
    unsigned n;
};

/* Open a TCP socket for each address of bind (a space-separated list) on
 * port. Returns 0, or -1 with nothing left open and Redis's warnings in
 * the log. */
int listen_open(struct listen_set *ls, const char *bind, long long port, unsigned flags);

/* A socket listening on the unix path (mode perm unless 0, an old socket
 * file removed first); -1 with a warning in the log. */
int listen_unix(const char *path, unsigned perm);

/* Stop listening at once (shutdown also ends an accept armed on the socket)
 * and close every socket of the set. */
void listen_close(struct listen_set *ls);

#endif
