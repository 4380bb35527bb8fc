/*
 * ringkv entry point: read the configuration, start one worker per thread,
 * wait for SIGTERM/SIGINT (or SHUTDOWN), stop the workers and exit.
 *
 * Signals are blocked in every thread and taken synchronously here with
 * sigtimedwait, so no handler ever runs inside a worker's event loop.
 */
#include "ringkv/server.h"
#include "ringkv/config.h"

#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Like Redis: room for maxclients connections plus our own descriptors,
 * as far as the hard limit allows. */
static void raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    rlim_t want = (rlim_t)rk_config.maxclients + 32 + (rlim_t)rk_config.threads * 4;
    if (rl.rlim_cur >= want) return;
    rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < want)
        printf("ringkv: warning: open files limited to %llu, fewer than maxclients %lld needs\n",
               (unsigned long long)rl.rlim_cur, rk_config.maxclients);
}

static void usage(void) {
    fprintf(stderr,
            "Usage: ringkv [/path/to/ringkv.conf] [options]\n"
            "Options are Redis's configuration names: --port 6379 --bind 127.0.0.1 --threads N\n"
            "  --maxclients N --databases N --timeout S --requirepass P --proto-max-bulk-len B ...\n");
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    config_set_defaults();
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage();
        return 0;
    }
    if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
        printf("ringkv v=%s (redis_version %s)\n", RINGKV_VERSION, RK_VERSION);
        return 0;
    }
    if (config_load_args(argc, argv) != 0) return 1;
    raise_fd_limit();

    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);   /* inherited by the workers */

    if (server_start() != 0) {
        atomic_store(&srv.shutdown, true);
        server_wait();
        return 1;
    }
    printf("ringkv %s ready to accept connections on %s:%lld with %u thread%s\n", RINGKV_VERSION,
           rk_config.bind, rk_config.port, srv.nworkers, srv.nworkers == 1 ? "" : "s");

    struct timespec tick = { 0, 100 * 1000 * 1000 };
    while (!atomic_load(&srv.shutdown)) {
        int sig = sigtimedwait(&sigs, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
            printf("ringkv: received %s, shutting down\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            atomic_store(&srv.shutdown, true);
        }
    }
    server_wait();
    printf("ringkv: bye\n");
    return 0;
}
