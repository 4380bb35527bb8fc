/*
 * MONITOR, and the other per-client modes (CLIENT NO-EVICT, NO-TOUCH) that
 * RESET turns off.
 *
 * A monitor client may sit on any thread and sees the commands of every
 * thread. Each thread keeps its own monitor clients; rk_controls says how
 * many there are in all (in ctl, so the hot path's one load covers it) and
 * which threads have some (monitor_threads). The thread that consumes a
 * command writes its line once, in Redis's format
 *
 *     +1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
 *
 * appends it straight to its own monitors' output, and gathers it into one
 * XM_MONITOR message per other monitoring thread per loop iteration
 * (monitor_flush, before the batches go out). One client's commands are
 * all consumed on its thread, in request order, and one thread's lines to
 * another travel in order on one FIFO ring: every monitor sees each
 * client's commands in the order it sent them. Lines of different threads
 * interleave as they arrive.
 *
 * Which commands, and when, follow Redis 7.0's call(): a command is shown
 * once it has run (forwarded commands and transactions once dispatched:
 * the client's order is what is kept), not when refused (unknown, arity,
 * NOAUTH) nor while held by a pause, never an administrative one (MONITOR,
 * CONFIG, CLIENT KILL/PAUSE ...), never a command MULTI queues: EXEC shows
 * the queued commands it ran, then itself (only itself when a watched key
 * was touched or the queue was refused). AUTH's and HELLO's secrets show as
 * "(redacted)", exactly where Redis redacts them. A monitor client may not
 * touch the keyspace (Redis treats it as a replica: pause.c refuses it).
 *
 * Access times are not kept anywhere (OBJECT IDLETIME answers 0), so
 * CLIENT NO-TOUCH only records the mode, for CLIENT LIST and RESET.
 */
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "controls.h"
#include "io_internal.h"

/* A thread's monitor clients and the lines it gathers for other threads;
 * touched only by that thread, on cache lines of its own. */
struct monitor_local {
    _Alignas(64) struct client **mons;
    size_t n, cap;
    uint64_t pending;                     /* targets with lines in out[] */
    struct rbuf line;                     /* the line being built */
    struct xmsg *out[RK_MAX_THREADS];
};
static struct monitor_local mon[RK_MAX_THREADS];

#define ERR_DENY_BLOCKING "ERR MONITOR isn't allowed for DENY BLOCKING client"

const char *client_monitor_start(struct client *c) {
    /* Inside EXEC (run locally, the queue is still the client's; as a
     * transaction, the client waits for it): Redis refuses, since EXEC's
     * client may not block. */
    if (c->multi || c->wait == WAIT_TX) return ERR_DENY_BLOCKING;
    if (c->flags & CF_MONITOR) return "";   /* already: no reply at all, as Redis */
    struct monitor_local *ml = &mon[c->w->id];
    if (ml->n == ml->cap) {
        ml->cap = ml->cap ? ml->cap * 2 : 8;
        ml->mons = rk_realloc(ml->mons, ml->cap * sizeof *ml->mons);
    }
    ml->mons[ml->n++] = c;
    c->flags |= CF_MONITOR;
    if (ml->n == 1) atomic_fetch_or(&rk_controls.monitor_threads, 1ull << c->w->id);
    atomic_fetch_add(&rk_controls.ctl, CTL_MONITOR_ONE);
    return NULL;
}

void client_monitor_stop(struct client *c) {
    if (!(c->flags & CF_MONITOR)) return;
    struct monitor_local *ml = &mon[c->w->id];
    for (size_t i = 0; i < ml->n; i++) {
        if (ml->mons[i] != c) continue;
        memmove(&ml->mons[i], &ml->mons[i + 1], (ml->n - i - 1) * sizeof *ml->mons);
        ml->n--;
        break;
    }
    c->flags &= ~CF_MONITOR;
    if (ml->n == 0) atomic_fetch_and(&rk_controls.monitor_threads, ~(1ull << c->w->id));
    atomic_fetch_sub(&rk_controls.ctl, CTL_MONITOR_ONE);
}

/* CLIENT NO-EVICT and NO-TOUCH. A client in NO-EVICT mode still counts
 * for client eviction but is never evicted (output.c): it leaves or takes
 * its place among the evictable at once, as in Redis. */
void client_set_mode(struct client *c, int mode, bool on) {
    uint32_t f = mode == CLIENT_MODE_NO_EVICT ? CF_NO_EVICT : CF_NO_TOUCH;
    if (on) c->flags |= f;
    else c->flags &= ~f;
    if (c->w->cev_limit) client_mem_update(c);
}

/* RESET, as Redis's clearClientConnectionState (7.2's, which also turns
 * NO-EVICT and NO-TOUCH off). */
void client_reset_controls(struct client *c) {
    client_monitor_stop(c);
    c->flags &= ~(CF_NO_EVICT | CF_NO_TOUCH);
    if (c->w->cev_limit) client_mem_update(c);
    c->reply_off = false;
    c->reply_skip = 0;
}

/* ---- lines ---- */

void cat_repr(struct rbuf *b, const char *s, size_t len) {
    char *p = rbuf_reserve(b, len * 4 + 2);
    *p++ = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '\\': *p++ = '\\'; *p++ = '\\'; break;
        case '"': *p++ = '\\'; *p++ = '"'; break;
        case '\n': *p++ = '\\'; *p++ = 'n'; break;
        case '\r': *p++ = '\\'; *p++ = 'r'; break;
        case '\t': *p++ = '\\'; *p++ = 't'; break;
        case '\a': *p++ = '\\'; *p++ = 'a'; break;
        case '\b': *p++ = '\\'; *p++ = 'b'; break;
        default:
            if (isprint(ch)) {
                *p++ = (char)ch;
            } else {
                static const char hex[] = "0123456789abcdef";
                *p++ = '\\'; *p++ = 'x'; *p++ = hex[ch >> 4]; *p++ = hex[ch & 15];
            }
        }
    }
    *p++ = '"';
    b->len = (size_t)(p - b->buf);
}

/* Which arguments Redis replaces by "(redacted)" before its monitors see
 * them: AUTH's password (and username, in the three-argument form; not at
 * all with more arguments, which fail before), HELLO's AUTH pair, once the
 * protocol version parsed (up to the first bad option). */
static void redactions(int argc, const struct slice *argv, bool *red) {
    if (slice_eq_nocase(argv[0], "auth")) {
        if (argc > 3) return;
        if (argc >= 2) red[1] = true;
        if (argc == 3) red[2] = true;
    } else if (slice_eq_nocase(argv[0], "hello") && argc >= 2) {
        long long ver;
        if (!str_to_ll(argv[1].ptr, argv[1].len, &ver) || ver < 2 || ver > 3) return;
        for (int j = 2; j < argc; j++) {
            int more = argc - 1 - j;
            if (slice_eq_nocase(argv[j], "auth") && more >= 2) {
                red[j + 1] = red[j + 2] = true;
                j += 2;
            } else if (slice_eq_nocase(argv[j], "setname") && more >= 1) {
                j++;
            } else {
                return;
            }
        }
    }
}

static void deliver_local(struct monitor_local *ml, const char *p, size_t len) {
    for (size_t i = 0; i < ml->n; i++) {
        struct client *m = ml->mons[i];
        if (m->flags & (CF_CLOSING | CF_CLOSE_ASAP)) continue;
        rbuf_append(&m->out, p, len);
        client_mark_flush(m);
        client_output_grew(m);
    }
}

void monitor_format(struct rbuf *b, long sec, long usec, int db, const char *addr, int argc,
                    const struct slice *argv) {
    char head[160];
    int n = snprintf(head, sizeof head, "+%ld.%06ld [%d %s] ", sec, usec, db, addr);
    rbuf_append(b, head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1);
    bool small[16] = {0};
    bool *red = argc <= 16 ? small : rk_calloc((size_t)argc, sizeof *red);
    redactions(argc, argv, red);
    for (int j = 0; j < argc; j++) {
        if (red[j]) rbuf_append(b, "\"(redacted)\"", 12);
        else cat_repr(b, argv[j].ptr, argv[j].len);
        if (j != argc - 1) rbuf_append(b, " ", 1);
    }
    if (red != small) free(red);
    rbuf_append(b, "\r\n", 2);
}

static void feed_line(struct worker *w, int db, const char *addr, int argc, const struct slice *argv) {
    struct monitor_local *ml = &mon[w->id];
    uint64_t mask = atomic_load_explicit(&rk_controls.monitor_threads, memory_order_relaxed);
    if (!mask) return;
    struct rbuf *b = &ml->line;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    b->len = 0;
    monitor_format(b, (long)ts.tv_sec, ts.tv_nsec / 1000, db, addr, argc, argv);
    while (mask) {
        unsigned t = (unsigned)__builtin_ctzll(mask);
        mask &= mask - 1;
        if (t == w->id) {
            deliver_local(ml, b->buf, b->len);
            continue;
        }
        if (t >= srv.nworkers) continue;
        if (!ml->out[t]) {
            ml->out[t] = rk_calloc(1, sizeof *ml->out[t]);
            ml->out[t]->type = XM_MONITOR;
            ml->out[t]->from = (uint8_t)w->id;
        }
        rbuf_append(&ml->out[t]->req, b->buf, b->len);
        ml->pending |= 1ull << t;
    }
}

static void feed(struct client *c, int db, int argc, const struct slice *argv) {
    feed_line(c->w, db, client_addr(c), argc, argv);
}

void monitor_feed_script(struct worker *w, const struct client *caller, int db, int argc, const struct slice *argv) {
    if (atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed) >> 32)
        feed_line(w, db, caller ? client_addr(caller) : "lua", argc, argv);
}

void client_monitor_feed(struct client *c, int argc, const struct slice *argv) {
    c->flags &= ~CF_MON_FEED;
    if (atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed) >> 32) feed(c, c->db, argc, argv);
}

void client_monitor_exec(struct client *c, const struct multi_queue *q, bool ran, int db, int argc,
                         const struct slice *argv) {
    if (!(atomic_load_explicit(&rk_controls.ctl, memory_order_relaxed) >> 32)) return;
    if (ran && q && !q->aborted) {
        for (size_t i = 0; i < q->n; i++) {
            const struct queued_cmd *qc = &q->cmds[i];
            if (!(qc->cmd->flags & CMD_ADMIN)) feed(c, db, qc->argc, qc->argv);
            long long to;
            if (qc->cmd->proc == cmd_select && qc->argc == 2 &&
                str_to_ll(qc->argv[1].ptr, qc->argv[1].len, &to) && to >= 0 && to < (long long)c->w->shard.ndb)
                db = (int)to;
        }
    }
    feed(c, db, argc, argv);
}

void client_monitor_tx_done(struct client *c, const struct tx_request *req, bool blocked) {
    if (req->exec) client_monitor_exec(c, req->exec, !client_watch_dirty(c), req->db, req->argc, req->argv);
    else if (req->blocking && !blocked && (c->flags & CF_MON_FEED)) client_monitor_feed(c, req->argc, req->argv);
}

bool monitor_pending(const struct worker *w) { return mon[w->id].pending != 0; }

void monitor_flush(struct worker *w) {
    struct monitor_local *ml = &mon[w->id];
    uint64_t mask = ml->pending;
    ml->pending = 0;
    while (mask) {
        unsigned t = (unsigned)__builtin_ctzll(mask);
        mask &= mask - 1;
        struct xmsg *m = ml->out[t];
        ml->out[t] = NULL;
        xshard_send(w, t, m);
    }
}

void monitor_lines_in(struct worker *w, const char *p, size_t len) {
    deliver_local(&mon[w->id], p, len);
}

/* At exit, after every thread stopped. */
void monitor_worker_free(struct worker *w) {
    struct monitor_local *ml = &mon[w->id];
    for (unsigned t = 0; t < RK_MAX_THREADS; t++) {
        if (!ml->out[t]) continue;
        rbuf_free(&ml->out[t]->req);
        free(ml->out[t]);
        ml->out[t] = NULL;
    }
    free(ml->mons);
    rbuf_free(&ml->line);
    memset(ml, 0, sizeof *ml);
}
