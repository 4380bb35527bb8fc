/*
 * ringkv entry point: read the configuration, start one worker per thread,
 * wait for SIGTERM/SIGINT (or SHUTDOWN), stop the workers and exit.
 *
 * Signals are blocked in every thread and taken synchronously here with
 * sigtimedwait, so no handler ever runs inside a worker's event loop.
 *
 * Every worker binds the port with SO_REUSEPORT, which is how the kernel
 * spreads connections over them; but it would let a second ringkv bind the
 * same port too and take part of the connections. So before the workers
 * start, port_in_use() binds one plain socket (no SO_REUSEPORT) to the
 * address: that fails while any other socket holds the port, with
 * SO_REUSEPORT or not, and the start stops as Redis's does.
 */
#include "ringkv/aof.h"
#include "ringkv/server.h"
#include "ringkv/stamp.h"
#include "ringkv/config.h"
#include "ringkv/command.h"
#include "ringkv/script.h"
#include "ringkv/snapshot.h"
#include "ringkv/util.h"

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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

/* True, after Redis's messages, when the workers' address is taken. Only
 * a failed bind counts: a bad address is left to the workers to report.
 * The first address of `bind` is the one the workers listen on
 * (listener_open in worker.c). SO_REUSEADDR keeps the connections of an
 * earlier run still in TIME_WAIT from counting, as for the workers. */
static bool port_in_use(void) {
    char host[256];
    const char *addr = rk_config.bind;
    size_t hl = strcspn(addr, " ");
    if (addr[0] == '-') { addr++; hl--; }
    if (hl >= sizeof host) hl = sizeof host - 1;
    memcpy(host, addr, hl);
    host[hl] = '\0';
    const char *numeric = host[0] == '\0' || strcmp(host, "*") == 0 ? "0.0.0.0" : host;

    char port[16];
    snprintf(port, sizeof port, "%lld", rk_config.port);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICHOST };
    struct addrinfo *res;
    if (rk_config.port == 0 || getaddrinfo(numeric, port, &hints, &res) != 0) return false;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    bool taken = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
                 bind(fd, res->ai_addr, res->ai_addrlen) != 0;
    if (taken) {
        fprintf(stderr, "Warning: Could not create server TCP listening socket %s:%lld: bind: %s\n",
                host, rk_config.port, strerror(errno));
        fprintf(stderr, "Failed listening on port %lld (TCP), aborting.\n", rk_config.port);
    }
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    return taken;
}

/* The AOF with appendonly yes, else (or when there is none) the RDB file,
 * into the shards; workers only answer -LOADING meanwhile. A file that
 * cannot be loaded stops the start. With appendonly yes the log then
 * opens, and data that came from the RDB file gets a base by a rewrite. */
static bool load_dataset(void) {
    stamp_clock((long long)mstime_now());   /* loaded keys count as accessed now */
    struct script_engine *e = script_engine_new();
    struct rbuf err = { 0 };
    int rc = 1;
    if (CONFIG_GET(appendonly)) rc = persist_load_aof(srv.shard_ptrs, srv.nworkers, e, &err);
    bool from_rdb = rc == 1;
    if (rc == 1) rc = persist_load(srv.shard_ptrs, srv.nworkers, e, false, (long long)mstime_now(), &err);
    if (rc >= 0 && CONFIG_GET(appendonly)) {
        err.len = 0;
        if (aof_open(&err) != 0) rc = -1;
        else if (from_rdb && rc == 0) aof_rewrite_schedule();
    }
    if (rc < 0) fprintf(stderr, "ringkv: Fatal error loading the DB: %.*s. Exiting.\n", (int)err.len, err.buf);
    rbuf_free(&err);
    script_engine_free(e);
    return rc >= 0;
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
    if (port_in_use()) return 1;
    raise_fd_limit();

    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);   /* inherited by the workers */

    /* Clients that connect while the dataset loads get -LOADING. */
    atomic_fetch_or(&rk_persist.gate, PERSIST_GATE_LOADING);
    atomic_store(&rk_persist.lastsave, (long long)time(NULL));   /* at startup the DB counts as saved */
    if (server_start() != 0) {
        atomic_store(&srv.shutdown, true);
        server_wait();
        return 1;
    }
    memory_note_startup();   /* MEMORY STATS' startup.allocated: the server up, no data yet */
    if (!load_dataset()) {
        atomic_store(&srv.shutdown, true);
        server_wait();
        return 1;
    }
    atomic_fetch_and(&rk_persist.gate, ~(unsigned)PERSIST_GATE_LOADING);
    printf("ringkv %s ready to accept connections on %s:%lld with %u thread%s\n", RINGKV_VERSION,
           rk_config.bind, rk_config.port, srv.nworkers, srv.nworkers == 1 ? "" : "s");

    struct timespec tick = { 0, 100 * 1000 * 1000 };
    bool by_signal = false;
    while (!atomic_load(&srv.shutdown)) {
        int sig = sigtimedwait(&sigs, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
            printf("ringkv: received %s, shutting down\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            by_signal = true;
            atomic_store(&srv.shutdown, true);
        }
    }
    server_stop();
    aof_flush_at_exit();
    /* As Redis's default shutdown-on-sigterm: save when save points are set
     * (SHUTDOWN has done what it was asked already). */
    if ((by_signal || !atomic_load(&rk_persist.shutdown_saved)) && *config_save_points())
        persist_save_at_exit(srv.shard_ptrs, srv.nworkers);
    server_wait();
    printf("ringkv: bye\n");
    return 0;
}
