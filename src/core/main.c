/*
 * ringkv entry point: read the configuration, start one worker per thread,
 * wait for SIGTERM/SIGINT (or SHUTDOWN), stop the workers and exit.
 *
 * It logs (log.h) the lines Redis logs at the same moments, which tools
 * wait for: the start and version lines, the banner with " PID: <pid>" and
 * "Port: <port>" (always-show-logo, or a terminal on stdout; else Redis's
 * "Running mode=" line, which carries " PID: " too), "Server initialized",
 * "Ready to accept connections" once listening and loaded, and on the way
 * out "Received SIGTERM scheduling shutdown...", "User requested
 * shutdown..." and "... ready to exit, bye bye...". With pidfile set the pid
 * is written there after the listeners are up and removed at exit, as
 * Redis does when it does not daemonize.
 *
 * Signals are blocked in every thread and taken synchronously here with
 * sigtimedwait, so no handler ever runs inside a worker's event loop.
 *
 * Every worker binds the port with SO_REUSEPORT, which is how the kernel
 * spreads connections over them; but it would let a second ringkv bind the
 * same port too and take part of the connections. So before the workers
 * start, each address is bound once without SO_REUSEPORT (listen.h's
 * probe): that fails while any other socket holds the port, with
 * SO_REUSEPORT or not, and the start stops as Redis's does.
 */
#include "ringkv/acl.h"
#include "ringkv/aof.h"
#include "ringkv/listen.h"
#include "ringkv/log.h"
#include "ringkv/server.h"
#include "ringkv/stamp.h"
#include "ringkv/clock.h"
#include "ringkv/config.h"
#include "ringkv/command.h"
#include "ringkv/script.h"
#include "ringkv/snapshot.h"
#include "ringkv/util.h"

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <sys/prctl.h>
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
    rlim_t cur = rl.rlim_cur;
    rlim_t want = (rlim_t)rk_config.maxclients + 32 + (rlim_t)rk_config.threads * 4;
    if (rl.rlim_cur >= want) return;
    rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < want)
        rk_log(LL_WARNING, "Open files limited to %llu, fewer than maxclients %lld needs",
               (unsigned long long)rl.rlim_cur, rk_config.maxclients);
    else
        rk_log(LL_NOTICE, "Increased maximum number of open files to %llu (it was originally set to %llu).",
               (unsigned long long)want, (unsigned long long)cur);
}


/* SIGTERM and SIGINT: blocked in every thread, taken by sigtimedwait. */
static void shutdown_sigset(sigset_t *sigs) {
    sigemptyset(sigs);
    sigaddset(sigs, SIGTERM);
    sigaddset(sigs, SIGINT);
}

/* A shutdown signal is waiting. */
static bool shutdown_signal_waiting(void) {
    sigset_t pending;
    return sigpending(&pending) == 0 && (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT));
}

/* The waiting shutdown signal, taken; 0 if none. */
static int take_shutdown_signal(void) {
    if (!shutdown_signal_waiting()) return 0;
    sigset_t sigs;
    shutdown_sigset(&sigs);
    struct timespec now = { 0, 0 };
    int sig = sigtimedwait(&sigs, NULL, &now);
    return sig > 0 ? sig : 0;
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
    if (rc < 0 && !shutdown_signal_waiting())
        rk_log(LL_WARNING, "Fatal error loading the DB: %.*s. Exiting.", (int)err.len, err.buf);
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

/*
 * disable-thp yes (the default, as in Redis) turns transparent huge pages
 * off for the process. Besides fork's copy-on-write that Redis cites,
 * khugepaged collapses pages under the process's mmap lock, for write: a
 * page fault anywhere in the server (a table array, an arena chunk) then
 * waits for the collapse, which stalled a shard for tens of milliseconds
 * while a keyspace of tens of millions of keys grew. With disable-thp no,
 * the big table arrays and the arena's chunks ask for huge pages once
 * written through (table.c, arena.c).
 */
static void thp_setup(void) {
    if (rk_config.disable_thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0)
        rk_log(LL_WARNING, "Failed to disable transparent huge pages: %s", strerror(errno));
}

static void note_inert(void *ud, const char *name, const char *value) {
    (void)ud;
    rk_log(LL_WARNING, "%s '%s' is accepted but has no effect in ringkv yet", name, value);
}

/* Redis's first lines: who starts, which version, with what pid. */
static void log_starting(int argc) {
    rk_log(LL_WARNING, "oO0OoO0OoO0Oo ringkv is starting oO0OoO0OoO0Oo");
    rk_log(LL_WARNING, "ringkv version=%s, redis_version=%s, bits=%d, threads=%lld, pid=%d, just started",
           RINGKV_VERSION, RK_VERSION, (int)(sizeof(long) * 8), rk_config.threads, (int)getpid());
    if (argc == 1)
        rk_log(LL_WARNING, "Warning: no config file specified, using the default config. In order to specify a "
                           "config file use ringkv /path/to/redis.conf");
    else
        rk_log(LL_WARNING, "Configuration loaded");
    config_foreach_inert_changed(note_inert, NULL);
}

/* Where Redis shows its logo: a plain block with what the logo says
 * (Redis's test framework waits for " PID: <pid>" in it), or one line. */
static void log_banner(void) {
    bool logo = rk_config.always_show_logo || (!*rk_config.logfile && isatty(STDOUT_FILENO));
    if (!logo) {
        rk_log(LL_NOTICE, "Running mode=standalone, port=%lld, threads=%u, PID: %d.", rk_config.port,
               srv.nworkers, (int)getpid());
        return;
    }
    char text[512];
    int n = snprintf(text, sizeof text,
                     "\n"
                     "    ringkv %s, Redis %s compatible, %d bit\n"
                     "    Running in standalone mode with %u thread%s\n"
                     "    Port: %lld\n"
                     "    PID: %d\n"
                     "\n",
                     RINGKV_VERSION, RK_VERSION, (int)(sizeof(long) * 8), srv.nworkers, srv.nworkers == 1 ? "" : "s",
                     rk_config.port, (int)getpid());
    if (n > 0) rk_log_raw(LL_NOTICE, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

/* Best effort, as Redis's createPidFile(). */
static void pidfile_create(void) {
    const char *path = rk_config.pidfile;
    if (!path) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
}

static void pidfile_remove(void) {
    if (!rk_config.pidfile) return;
    rk_log(LL_NOTICE, "Removing the pid file.");
    unlink(rk_config.pidfile);
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
    rk_log_open(NULL);   /* standard output until the configuration says otherwise */
    command_table_init();
    acl_init();          /* the default user, before config's requirepass and user lines */
    if (config_load_args(argc, argv) != 0) return 1;
    if (rk_log_open(rk_config.logfile) != 0) {
        fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Redis %s) ***\nCan't open the log file: %s\n", RK_VERSION,
                strerror(errno));
        return 1;
    }
    log_starting(argc);
    char *acl_err;
    if (!acl_load_startup(&acl_err)) {
        rk_log(LL_WARNING, "Aborting Redis startup because of ACL errors: %s", acl_err);
        free(acl_err);
        return 1;
    }
    struct listen_set probe;
    if (listen_open(&probe, rk_config.bind, rk_config.port, LISTEN_PROBE) != 0) {
        rk_log(LL_WARNING, "Failed listening on port %lld (TCP), aborting.", rk_config.port);
        return 1;
    }
    raise_fd_limit();
    thp_setup();
    clock_ticks_init();   /* before the workers read it */

    sigset_t sigs;
    shutdown_sigset(&sigs);
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
    pidfile_create();
    log_banner();
    rk_log(LL_WARNING, "Server initialized");
    memory_note_startup();   /* MEMORY STATS' startup.allocated: the server up, no data yet */
    rk_persist.load_stop = shutdown_signal_waiting;
    bool loaded = load_dataset();
    rk_persist.load_stop = NULL;
    if (!loaded) {
        /* A shutdown signal while loading ends the load and the server,
         * without saving the half-loaded data, as Redis does */
        int sig = take_shutdown_signal();
        if (sig) {
            rk_log(LL_WARNING, "Received %s scheduling shutdown...", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            rk_log(LL_WARNING, "User requested shutdown...");
        }
        pidfile_remove();
        atomic_store(&srv.shutdown, true);
        server_wait();
        if (sig) rk_log(LL_WARNING, "ringkv is now ready to exit, bye bye...");
        return sig ? 0 : 1;
    }
    atomic_fetch_and(&rk_persist.gate, ~(unsigned)PERSIST_GATE_LOADING);
    rk_log(LL_NOTICE, "Ready to accept connections");

    struct timespec tick = { 0, 100 * 1000 * 1000 };
    bool by_signal = false;
    while (!atomic_load(&srv.shutdown)) {
        int sig = sigtimedwait(&sigs, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
            rk_log(LL_WARNING, "Received %s scheduling shutdown...", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            rk_log(LL_WARNING, "User requested shutdown...");
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
    pidfile_remove();
    rk_log(LL_WARNING, "ringkv is now ready to exit, bye bye...");
    return 0;
}
