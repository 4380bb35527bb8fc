/*
 * CLIENT PAUSE and CLIENT UNPAUSE across every thread.
 *
 * The pause is global state, not any thread's: its type lives in the low
 * bits of rk_controls.ctl, the word every command loads once (relaxed), and
 * its end in rk_controls.pause_end_ms. Commands that read zero there take
 * the fast path; while a pause (or a monitor) is on, execute() asks
 * client_controls_check, which holds a command the pause covers: the
 * client waits (WAIT_PAUSED) on its thread's FIFO list with the command
 * unconsumed, so its later pipelined commands wait behind it, and INFO
 * counts it as blocked, as Redis counts its postponed clients.
 *
 * As in Redis 7.0, PAUSE ALL holds every command and PAUSE WRITE those
 * flagged write or may-replicate, and EXEC when its queue holds one; a
 * new pause keeps the stricter type and the later end of the two. A
 * monitor client is never paused (Redis's replicas are not), nor a
 * blocking command run again after its wait (Redis does not pass those
 * through processCommand again), and a command refused by the router gets
 * its error at once.
 *
 * Writers (PAUSE, UNPAUSE, and whoever first finds that the end has passed)
 * take a mutex so that type and end change together; readers never do.
 * PAUSE stores the end before the type, UNPAUSE clears the type first, so a
 * reader that sees a type also sees an end at least as late as that
 * pause's.
 *
 * Ending: a thread with paused clients sleeps no longer than the pause's
 * end and looks at its list once per loop iteration (client_pause_tick);
 * UNPAUSE, or a pause made less strict, sends every other thread an
 * XM_WAKE, which wakes it through the usual doorbell. Released clients are
 * resumed in the order they were paused (per thread; across threads, as
 * for everything else, there is no order).
 *
 * While a pause is in force, expired keys are not deleted (lazily through
 * db_expire_paused_hook, actively by the worker's cron): as in Redis, a
 * paused server changes nothing.
 */
#include "ringkv/script_host.h"
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include "controls.h"
#include "io_internal.h"

struct controls_shared rk_controls;

static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;

/* A thread's paused clients, in the order they were paused. Each is
 * touched only by its own thread, on its own cache lines. */
struct pause_local {
    _Alignas(64) struct client *head, **tail;
    enum pause_type under;        /* strictest pause the listed clients wait for */
};
static struct pause_local paused[RK_MAX_THREADS];

static struct pause_local *local_of(struct worker *w) {
    struct pause_local *pl = &paused[w->id];
    if (!pl->tail) pl->tail = &pl->head;
    return pl;
}

static void store_type(enum pause_type t) {   /* under pause_lock */
    uint64_t old = atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed), nw;
    do {
        nw = (old & ~CTL_PAUSE_MASK) | (uint64_t)t;
    } while (!atomic_compare_exchange_weak_explicit(&rk_controls.ctl, &old, nw, memory_order_release,
                                                    memory_order_relaxed));
}

static enum pause_type type_of(uint64_t ctl) { return (enum pause_type)(ctl & CTL_PAUSE_MASK); }

/* Ask every other thread to look at its paused clients. */
static void wake_others(struct worker *w) {
    for (unsigned t = 0; t < srv.nworkers; t++) {
        if (t == w->id) continue;
        struct xmsg *m = rk_calloc(1, sizeof *m);
        m->type = XM_WAKE;
        m->from = (uint8_t)w->id;
        xshard_send(w, t, m);
    }
}

enum pause_type pause_type_now(long long now_ms) {
    enum pause_type t = type_of(atomic_load_explicit(&rk_controls.ctl, memory_order_acquire));
    if (t == PAUSE_OFF) return PAUSE_OFF;
    if (atomic_load_explicit(&rk_controls.pause_end_ms, memory_order_relaxed) >= now_ms) return t;
    /* Over: clear it, so commands go back to the fast path. */
    pthread_mutex_lock(&pause_lock);
    if (type_of(atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed)) != PAUSE_OFF &&
        atomic_load_explicit(&rk_controls.pause_end_ms, memory_order_relaxed) < now_ms) {
        store_type(PAUSE_OFF);
        atomic_store_explicit(&rk_controls.pause_end_ms, 0, memory_order_relaxed);
    }
    pthread_mutex_unlock(&pause_lock);
    return PAUSE_OFF;
}

bool client_expiry_paused(long long now_ms) {
    return RK_UNLIKELY(atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed) & CTL_PAUSE_MASK) &&
           pause_type_now(now_ms) != PAUSE_OFF;
}

void pause_clients(struct worker *w, long long end_ms, bool all) {
    enum pause_type type = all ? PAUSE_ALL : PAUSE_WRITE;
    pthread_mutex_lock(&pause_lock);
    enum pause_type cur = type_of(atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed));
    long long cur_end = atomic_load_explicit(&rk_controls.pause_end_ms, memory_order_relaxed);
    /* An ended pause nobody has cleared yet counts as none. A new pause
     * that replaces an ended stricter one (ALL, then WRITE) eases nothing
     * that needs a wake-up: the threads holding clients for the old one
     * woke at its end, and release them at their next iteration. */
    if (cur != PAUSE_OFF && cur_end >= w->now_ms) {
        if (cur > type) type = cur;
        if (cur_end > end_ms) end_ms = cur_end;
    }
    atomic_store_explicit(&rk_controls.pause_end_ms, end_ms, memory_order_release);
    store_type(type);
    pthread_mutex_unlock(&pause_lock);
}

void unpause_clients(struct worker *w) {
    pthread_mutex_lock(&pause_lock);
    bool was = type_of(atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed)) != PAUSE_OFF;
    store_type(PAUSE_OFF);
    atomic_store_explicit(&rk_controls.pause_end_ms, 0, memory_order_relaxed);
    pthread_mutex_unlock(&pause_lock);
    if (was) wake_others(w);
}

/* A command's flags as PAUSE WRITE sees them: a script's are those its
 * shebang declares (script_host.h). */
static uint32_t flags_of(const struct client *c, const struct command *cmd, int argc, const struct slice *argv) {
    if (RK_UNLIKELY(cmd->flags & CMD_SCRIPT)) return script_command_flags(c->w, cmd, argc, argv);
    return cmd->flags;
}

/* Is cmd one that PAUSE WRITE holds? EXEC is, when its queue holds one. */
static bool pausable_write(const struct client *c, const struct command *cmd, int argc, const struct slice *argv) {
    if (flags_of(c, cmd, argc, argv) & (CMD_WRITE | CMD_MAY_REPLICATE)) return true;
    if (cmd->proc == cmd_exec && c->multi)
        for (size_t i = 0; i < c->multi->n; i++) {
            const struct queued_cmd *q = &c->multi->cmds[i];
            if (flags_of(c, q->cmd, q->argc, q->argv) & (CMD_WRITE | CMD_MAY_REPLICATE)) return true;
        }
    return false;
}

static void pause_client(struct client *c, enum pause_type t) {
    struct worker *w = c->w;
    struct pause_local *pl = local_of(w);
    c->wait = WAIT_PAUSED;
    c->next_wait = NULL;
    *pl->tail = c;
    pl->tail = &c->next_wait;
    if (t > pl->under) pl->under = t;
    w->stats.blocked_clients++;
}

void client_controls_gone(struct client *c) {
    if (c->wait == WAIT_PAUSED) client_pause_unlink(c);
    client_monitor_stop(c);
}

bool client_pause_unlink(struct client *c) {
    struct worker *w = c->w;
    struct pause_local *pl = local_of(w);
    struct client **pp = &pl->head;
    while (*pp && *pp != c) pp = &(*pp)->next_wait;
    if (!*pp) return false;
    *pp = c->next_wait;
    if (pl->tail == &c->next_wait) pl->tail = pp;
    c->next_wait = NULL;
    if (!pl->head) pl->under = PAUSE_OFF;
    w->stats.blocked_clients--;
    return true;
}

/* Every paused client of this thread runs its command again, in order:
 * those the pause still covers go back on the list. */
static void release_all(struct worker *w, struct pause_local *pl) {
    struct client *c = pl->head;
    pl->head = NULL;
    pl->tail = &pl->head;
    pl->under = PAUSE_OFF;
    while (c) {
        struct client *next = c->next_wait;
        c->next_wait = NULL;
        w->stats.blocked_clients--;
        client_schedule_resume(c);
        c = next;
    }
}

void client_pause_tick(struct worker *w) {
    struct pause_local *pl = &paused[w->id];
    if (RK_UNLIKELY(pl->head != NULL)) {
        enum pause_type t = pause_type_now(w->now_ms);
        if (t < pl->under) {
            release_all(w, pl);
        } else {
            /* sleep no longer than the pause lasts (it ends once now > end) */
            long long end = atomic_load_explicit(&rk_controls.pause_end_ms, memory_order_relaxed);
            if (end < LLONG_MAX && end + 1 < w->next_deadline_ms) w->next_deadline_ms = end + 1;
        }
    }
}

/* A command refused before it runs: EXEC will answer EXECABORT; EXEC
 * itself ends the transaction with its reason, as Redis's execCommandAbort. */
void client_refuse(struct client *c, const struct command *cmd, const char *err) {
    bool queued;
    struct rbuf *out = client_reply_target(c, &queued);
    size_t start = out->len;
    struct reply r = { out, c->resp };
    if (cmd->proc == cmd_exec && c->multi) {
        reply_errorf(&r, "EXECABORT Transaction discarded because of: %s", err);
        client_reset_transaction(c);
    } else {
        if (c->multi) c->multi->aborted = true;
        reply_error(&r, err);
    }
    client_reply_written(c, out, start, queued, c->reply_off || c->reply_skip);
    c->reply_skip = 0;
}

void client_controls_busy(bool on) {
    if (on) atomic_fetch_add(&rk_controls.ctl, CTL_BUSY_ONE);
    else atomic_fetch_sub(&rk_controls.ctl, CTL_BUSY_ONE);
}

/* While a script is busy (script_host.h): on its own thread, served from
 * inside the script, only what needs no shard and is allowed while busy
 * runs; elsewhere, what touches its shards or none at all is refused, as
 * Redis refuses everything but the allow-busy commands. */
static const char *busy_refusal(struct client *c, const struct route *rt) {
    const struct command *cmd = rt->cmd;
    if (c->w->serving_busy) {
        if ((cmd->flags & CMD_ALLOW_BUSY) && !rt->keyspace) return NULL;
        const char *err = script_busy_refusal(0);
        return err ? err : SCRIPT_ERR_BUSY_EVAL;
    }
    if (cmd->flags & CMD_ALLOW_BUSY) return NULL;
    return script_busy_refusal(rt->keyspace ? rt->mask : 0);
}

enum ctl_verdict client_controls_check(struct client *c, const struct route *rt, int argc, const struct slice *argv) {
    const struct command *cmd = rt->cmd;
    uint64_t ctl = atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed);
    if (RK_UNLIKELY(ctl & CTL_BUSY_MASK) || c->w->serving_busy) {
        const char *err = busy_refusal(c, rt);
        if (err) {
            client_refuse(c, cmd, err);
            return CTL_DONE;
        }
    }
    if (c->flags & CF_MONITOR) {
        /* A monitor is a replica to Redis: it may not touch the keyspace. */
        if (cmd->flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE)) {
            client_refuse(c, cmd, "ERR Replica can't interact with the keyspace");
            return CTL_DONE;
        }
    } else if (type_of(ctl) != PAUSE_OFF && client_block_deadline(c) == 0) {
        enum pause_type t = pause_type_now(c->w->now_ms);
        if (t == PAUSE_ALL || (t == PAUSE_WRITE && pausable_write(c, cmd, argc, argv))) {
            pause_client(c, t);
            return CTL_WAIT;
        }
    }
    /* Monitors see what runs, after it ran, as Redis's call() feeds them:
     * not administrative commands, not scripts (the scripting host shows
     * them before they run, then each command they call), not commands queued by MULTI (EXEC
     * shows them when it runs them: monitor.c), not EXEC with a queue. */
    bool feed = (ctl >> 32) != 0 && !(cmd->flags & (CMD_ADMIN | CMD_SKIP_MONITOR));
    if (feed && c->multi) feed = (cmd->flags & CMD_TXCTL) && cmd->proc != cmd_unwatch &&
                                 !(cmd->proc == cmd_exec && !c->multi->aborted);
    if (feed) c->flags |= CF_MON_FEED;
    else c->flags &= ~CF_MON_FEED;
    return CTL_RUN;
}
