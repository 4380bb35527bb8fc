/*
 * Client controls that reach across threads: CLIENT PAUSE / UNPAUSE
 * (pause.c) and MONITOR (monitor.c), shared by the connection layer's files.
 *
 * Everything a command's hot path needs to know about them is one word,
 * rk_controls.ctl: the pause type in force (bits 0-1), the number of
 * scripts past busy-reply-threshold (bits 8-31, set by the scripting host
 * through client_controls_busy) and the number of monitor clients on all
 * threads (bits 32-63). While it is zero, execute()
 * pays one relaxed load per command and nothing else; otherwise it takes
 * the slow path (client_controls_check), which holds paused commands and
 * marks the ones monitors must see.
 */
#ifndef RINGKV_IO_CONTROLS_H
#define RINGKV_IO_CONTROLS_H

#include "ringkv/server.h"
#include "ringkv/dispatch.h"
#include "ringkv/multi.h"

#define CTL_PAUSE_MASK  3ull
#define CTL_BUSY_ONE    (1ull << 8)          /* busy scripts (script_host.h), bits 8-31 */
#define CTL_BUSY_MASK   (0xffffffull << 8)
#define CTL_MONITOR_ONE (1ull << 32)

enum pause_type { PAUSE_OFF = 0, PAUSE_WRITE = 1, PAUSE_ALL = 2 };

/* Written only by CLIENT PAUSE/UNPAUSE, by whoever first sees a pause's end,
 * and by MONITOR starting or stopping: on a line of their own, so the
 * writes of the rest of the server never evict it from readers' caches. */
struct controls_shared {
    _Alignas(64) _Atomic uint64_t ctl;
    _Atomic long long pause_end_ms;      /* wall clock; paused while now <= end */
    _Atomic uint64_t monitor_threads;    /* bit t: thread t has monitor clients */
    char pad[64 - 3 * sizeof(uint64_t)];
};
extern struct controls_shared rk_controls;

static inline bool client_controls_on(void) {
    return atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed) != 0;
}

/* execute()'s slow path, after routing, before anything runs. */
enum ctl_verdict { CTL_RUN, CTL_WAIT, CTL_DONE };
enum ctl_verdict client_controls_check(struct client *c, const struct route *rt, int argc, const struct slice *argv);

/* pause.c */
void pause_clients(struct worker *w, long long end_ms, bool all);   /* CLIENT PAUSE */
void unpause_clients(struct worker *w);                              /* CLIENT UNPAUSE */
enum pause_type pause_type_now(long long now_ms);
bool client_expiry_paused(long long now_ms);       /* any pause in force: expiry waits */
bool client_pause_unlink(struct client *c);        /* a paused client goes away */
void client_controls_gone(struct client *c);       /* closing: off the paused list, not a monitor */
/* Each loop iteration, before the resume list runs: paused clients the
 * pause no longer holds go on it. */
void client_pause_tick(struct worker *w);

/* monitor.c */
const char *client_monitor_start(struct client *c);   /* MONITOR: NULL, or an error */
void client_monitor_stop(struct client *c);           /* RESET, disconnect */
void client_set_mode(struct client *c, int mode, bool on);   /* CLIENT NO-EVICT / NO-TOUCH */
void client_reset_controls(struct client *c);         /* RESET */
/* The command c just ran (CF_MON_FEED was set by the check): a line for
 * every monitor. Clears CF_MON_FEED. */
void client_monitor_feed(struct client *c, int argc, const struct slice *argv);
/* EXEC ran its queue (ran: false when a watched key was touched): the
 * queued commands' lines, then EXEC's own, as Redis shows them. */
void client_monitor_exec(struct client *c, const struct multi_queue *q, bool ran, int db, int argc,
                         const struct slice *argv);
/* A transaction of c finished: EXEC's lines, or a blocking command served. */
void client_monitor_tx_done(struct client *c, const struct tx_request *req, bool blocked);
/* XM_MONITOR: lines for this thread's monitor clients. */
void monitor_lines_in(struct worker *w, const char *p, size_t len);
/* Each loop iteration, after the commands ran: their lines to the monitors. */
void monitor_flush(struct worker *w);
bool monitor_pending(const struct worker *w);
void monitor_worker_free(struct worker *w);   /* at exit */
/* sds's catrepr: quoted, with C escapes and \xHH for the unprintable
 * (monitor lines, and log lines that show a client's input). */
void cat_repr(struct rbuf *b, const char *s, size_t len);
/* One line as Redis writes it for its monitors (unit-tested). */
void monitor_format(struct rbuf *b, long sec, long usec, int db, const char *addr, int argc,
                    const struct slice *argv);

#endif
