/*
 * Worker threads and their io_uring event loops.
 *
 * Each worker runs the same loop:
 *
 *   1. reap every completion (accepts, received data, finished sends,
 *      doorbells) and act on it: received bytes are parsed and executed at
 *      once, replies are appended to the client's output buffer;
 *   2. drain the message rings from the other workers;
 *   3. push the batches built for other shards, ring the doorbell of any
 *      target that may be asleep (an IORING_OP_MSG_RING SQE in our own ring,
 *      so waking a peer costs no extra syscall);
 *   4. queue one send per client with new output and re-arm receives;
 *   5. submit everything and wait, in one io_uring_enter.
 *
 * Receives are multishot into a provided-buffer ring. A buffer is handed
 * back to the kernel as soon as its bytes are parsed (a partial frame is
 * copied into the client first), so no buffer outlives the completion that
 * delivered it.
 */
#include "ringkv/acl.h"
#include "ringkv/log.h"
#include "ringkv/aof.h"
#include "ringkv/script_host.h"
#include "ringkv/server.h"
#include "ringkv/pubsub.h"
#include "ringkv/clock.h"
#include "ringkv/config.h"
#include "ringkv/latency.h"
#include "ringkv/util.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ringkv/ring.h"
#include "ringkv/snapshot.h"
#include "ringkv/watch.h"
#include "ringkv/evict.h"
#include "ringkv/lazyfree.h"
#include "ringkv/mem.h"
#include "io_internal.h"
#include "controls.h"

struct server srv;


static void worker_log(struct worker *w, const char *what, int err) {
    rk_log(LL_WARNING, "Worker %u: %s: %s", w->id, what, strerror(err));
}





/* Accepts are armed per listener: user_data carries its slot and, for
 * TCP, the generation of the set it belongs to, so the last completion of
 * a closed listener is not taken for the current one's. The unix socket
 * never moves (unixsocket is set at start). */
#define UNIX_SLOT LISTEN_MAX

static void arm_tcp_listeners(struct worker *w) {
    for (unsigned i = 0; i < w->listeners.n; i++) ring_arm_accept(w, w->listeners.fd[i], w->listen_gen, i);
}

/* port or bind changed (CONFIG SET checked that the new addresses can be
 * bound): this worker's listeners move, closing ends their armed accepts,
 * and the others are woken to move too. Until none is behind, this
 * worker's replies wait (listeners_settled): CONFIG SET's OK must not
 * leave while another worker still accepts on the old addresses, or a
 * client that connects on the strength of it can land there (through
 * SO_REUSEPORT) and be reset instead of refused. Every mover rings the
 * others, so the wait ends by a wake-up. */
static void relisten(struct worker *w, unsigned gen) {
    listen_close(&w->listeners);
    __atomic_store_n(&w->listen_gen, gen, __ATOMIC_RELEASE);
    if (listen_open(&w->listeners, __atomic_load_n(&rk_config.bind, __ATOMIC_ACQUIRE), CONFIG_GET(port),
                    LISTEN_SHARED) != 0)
        rk_log(LL_WARNING, "Worker %u no longer listens on TCP", w->id);
    arm_tcp_listeners(w);
    w->listen_settling = true;
    for (unsigned i = 0; i < srv.nworkers; i++)
        if (i != w->id) ring_doorbell_now(w, &srv.workers[i]);
}

static bool listeners_settled(struct worker *w) {
    for (unsigned i = 0; i < srv.nworkers; i++)
        if ((int)(__atomic_load_n(&srv.workers[i].listen_gen, __ATOMIC_ACQUIRE) - w->listen_gen) < 0) return false;
    w->listen_settling = false;
    return true;
}

static void reject_client(int fd) {
    static const char msg[] = "-ERR max number of clients reached\r\n";
    ssize_t n = write(fd, msg, sizeof msg - 1);
    (void)n;
    close(fd);
}

/* Protected mode (Redis's clientAcceptHandler): while protected-mode is
 * on and the default user has no password, only clients from 127.0.0.1 or
 * ::1 are served; any other gets Redis's explanation and is closed, a
 * rejected connection. Bind addresses do not matter (Redis 7.0). */
static bool protected_mode_refuses(int fd) {
    if (!CONFIG_GET(protected_mode) || !acl_default_passwordless()) return false;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0) return false;   /* gone: its recv will say so */
    if (ss.ss_family == AF_INET)
        return ((struct sockaddr_in *)&ss)->sin_addr.s_addr != htonl(INADDR_LOOPBACK);
    if (ss.ss_family == AF_INET6)
        return !IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
    return ss.ss_family != AF_UNIX;
}

static void deny_client(int fd) {
    static const char msg[] =
        "-DENIED Redis is running in protected mode because protected "
        "mode is enabled and no password is set for the default user. "
        "In this mode connections are only accepted from the loopback interface. "
        "If you want to connect from external computers to Redis you "
        "may adopt one of the following solutions: "
        "1) Just disable protected mode sending the command "
        "'CONFIG SET protected-mode no' from the loopback interface "
        "by connecting to Redis from the same host the server is "
        "running, however MAKE SURE Redis is not publicly accessible "
        "from internet if you do so. Use CONFIG REWRITE to make this "
        "change permanent. "
        "2) Alternatively you can just disable the protected mode by "
        "editing the Redis configuration file, and setting the protected "
        "mode option to 'no', and then restarting the server. "
        "3) If you started the server manually just for testing, restart "
        "it with the '--protected-mode no' option. "
        "4) Setup a an authentication password for the default user. "
        "NOTE: You only need to do one of the above things in order for "
        "the server to start accepting connections from the outside.\r\n";
    ssize_t n = write(fd, msg, sizeof msg - 1);
    (void)n;
    /* what the client sent already is read away, so that closing does not
     * reset the connection before it has read the message */
    char sink[512];
    for (int i = 0; i < 8 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++) {}
    close(fd);
}

static void on_accept(struct worker *w, struct io_uring_cqe *cqe, uint32_t gen, uint32_t slot) {
    bool current = slot == UNIX_SLOT || gen == (w->listen_gen & 0xFFFFFF);
    if (current && !(cqe->flags & IORING_CQE_F_MORE))
        ring_arm_accept(w, slot == UNIX_SLOT ? w->unix_fd : w->listeners.fd[slot], gen, slot);
    if (cqe->res < 0) {
        if (current && cqe->res != -ECANCELED) worker_log(w, "accept", -cqe->res);
        return;
    }
    int fd = cqe->res;
    long now = atomic_fetch_add(&srv.connected, 1) + 1;
    if (now > CONFIG_GET(maxclients)) {
        atomic_fetch_sub(&srv.connected, 1);
        w->stats.rejected++;
        reject_client(fd);
        return;
    }
    if (protected_mode_refuses(fd)) {
        atomic_fetch_sub(&srv.connected, 1);
        w->stats.rejected++;
        deny_client(fd);
        return;
    }
    int one = 1;
    if (slot != UNIX_SLOT) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct client *c = client_new(w, fd);
    ring_install_file(c);
    ring_arm_recv(c);
}

static void on_recv(struct worker *w, struct io_uring_cqe *cqe, uint32_t idx, uint32_t gen) {
    struct client *c = client_by_ref(w, idx, gen);
    bool more = cqe->flags & IORING_CQE_F_MORE;
    if (!c) return;   /* cannot happen: a client lives until its ops complete */
    if (!more) {
        c->flags &= ~CF_RECV_ARMED;
        c->pending_ops--;
    }
    if (cqe->res > 0) {
        unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        w->batch_window_recvs++;
        if (c->last_ms < w->batch_window_ms) w->batch_window_clients++;   /* its first this window */
        const char *data = w->bufs + (size_t)bid * w->buf_size;
        w->bufs_touched = true;
        w->recv_window_bytes += (size_t)cqe->res;
        if (!(c->flags & (CF_CLOSING)))
            client_on_recv(c, data, (size_t)cqe->res);
        ring_recycle_buffer(w, bid);
        if (!more && !(c->flags & (CF_CLOSING | CF_RECV_STOPPED))) c->flags |= CF_NEED_RECV;
    } else if (cqe->res == -ENOBUFS) {
        w->stats.enobufs++;
        if (!(c->flags & (CF_CLOSING | CF_RECV_STOPPED))) c->flags |= CF_NEED_RECV;
    } else if (cqe->res == -ECANCELED) {
        /* stopped on purpose (backpressure, maybe_stop_receiving): re-armed
         * on resume. The client may have resumed already, the cancel still
         * on its way (the resume saw the recv armed and left it): then
         * re-arm now. A closing client's cancel ends here too. */
        if (!(c->flags & (CF_CLOSING | CF_RECV_STOPPED))) c->flags |= CF_NEED_RECV;
    } else {
        /* 0 = peer closed, or a socket error */
        if (!(c->flags & CF_CLOSING)) client_close(c);
    }
    if (c->flags & CF_NEED_RECV) client_mark_flush(c);
    client_maybe_free(c);
}

static void handle_cqe(struct worker *w, struct io_uring_cqe *cqe) {
    uint64_t ud = io_uring_cqe_get_data64(cqe);
    uint32_t idx = UD_IDX(ud), gen = UD_GEN(ud);
    switch (UD_TYPE(ud)) {
    case UD_ACCEPT: on_accept(w, cqe, gen, idx); break;
    case UD_RECV: on_recv(w, cqe, idx, gen); break;
    case UD_SEND: {
        struct client *c = client_by_ref(w, idx, gen);
        if (c) client_on_send(c, cqe->res);
        break;
    }
    case UD_WRITABLE: {
        struct client *c = client_by_ref(w, idx, gen);
        if (c) client_on_writable(c, cqe->res);
        break;
    }
    case UD_FILE: persist_on_cqe(ud, cqe->res); break;
    case UD_METRICS_ACCEPT:
    case UD_METRICS_RECV:
    case UD_METRICS_SEND: metrics_on_cqe(w, ud, cqe->res, cqe->flags); break;
    default: break;   /* doorbells and ignored completions only wake us */
    }
}


#define ARGV_KEEP_BYTES (64 * 1024)

/* The shard's active expiry, timed for the latency monitor while it is on
 * (its "expire-cycle" event: a big value expiring is freed here). */
static void active_expire(struct worker *w) {
    uint64_t t0 = latency_monitor_on() ? clock_ticks() : 0;
    shard_active_expire(&w->shard, w->now_ms, 1000 * 1000 / CONFIG_GET(hz) / 40);   /* 2.5% of a tick, as Redis */
    if (t0) latency_add_sample_if_needed("expire-cycle", ticks_to_ns(clock_ticks() - t0) / 1000000);
}

/* The minimum wait of the next window and what it gathers (ring.h), from
 * this one's receives and the clients they came from. */
static void batch_wait_update(struct worker *w) {
    w->batch_wait_us = ring_batch_wait_us((w->now_ms - w->batch_window_ms) * 1000, w->batch_window_clients,
                                          w->batch_window_recvs);
    w->batch_wait_nr = ring_batch_wait_nr(w->batch_window_clients);
    w->batch_window_ms = w->now_ms;
    w->batch_window_clients = w->batch_window_recvs = 0;
}

static void worker_cron(struct worker *w) {
    long long period = 1000 / CONFIG_GET(hz);
    /* The shard's upkeep (active expiry, giving back an empty arena) is
     * due every period but must not touch a shard that a transaction holds;
     * it then runs at the first iteration after the release, not a whole
     * period later: a client polling INFO (which holds every shard) wakes
     * us, and the cron with it, just as its hold is granted. Nor does
     * expiry run while a client pause is in force: as in Redis, a paused
     * server deletes nothing. */
    if (w->now_ms - w->last_shard_cron_ms >= period && !shard_is_held(w)) {
        w->last_shard_cron_ms = w->now_ms;
        if (!client_expiry_paused(w->now_ms) &&
            !(atomic_load_explicit(&rk_persist.gate, memory_order_acquire) & PERSIST_GATE_LOADING))
            active_expire(w);
        arena_release_if_empty(&w->shard.arena);   /* after FLUSHALL */
    }
    if (w->now_ms - w->last_cron_ms >= period) {
        w->last_cron_ms = w->now_ms;
        /* what one huge command grew stays only until the next tick, as
         * Redis's clientsCron gives back a client's big query buffer */
        resp_parser_trim(&w->parser, ARGV_KEEP_BYTES);
        if (w->batch_argv.cap > ARGV_KEEP_BYTES) rbuf_free(&w->batch_argv);
        mem_used_peak_update();
        if (mem_trim_due(&w->mem_trim, w->now_ms)) malloc_trim(0);   /* after a FLUSHALL, a big DEL */
        batch_wait_update(w);
        client_cron(w);
        client_obuf_cron(w);
        persist_cron(w);
        if (RK_UNLIKELY(w->metrics != NULL)) metrics_cron(w);
        ring_trim_quiet_buffers(w);
    }
}


/*
 * Submitting and waiting.
 *
 * Kernels since 6.12 take a minimum wait (IORING_FEAT_MIN_TIMEOUT): sleep
 * until `wait_nr` completions are in or `min_wait_usec` has passed, and only
 * then return with whatever arrived (or keep waiting for one). Under load
 * from many connections this gathers the requests of many clients into one
 * wake-up and their replies into one submit, which is where the CPU per
 * request drops below one syscall and one context switch per request.
 */
#define MIN_WAIT_LOAD 4    /* completions per wake-up that count as load */
#define LIGHT_ITER_CMDS 64 /* average commands per iteration below which a worker is lightly loaded */

/* Wait for work, unless another worker has already queued some for us. The
 * sleeping flag and the inbox check form a Dekker pair with the producer's
 * push-then-check in xshard_flush(): one of the two always sees the other. */
static void submit_and_wait(struct worker *w, bool busy) {
    struct __kernel_timespec ts = { 0, 0 };
    struct io_uring_cqe *cqe;
    if (!busy) {
        atomic_store(&w->sleeping, 1);
        atomic_thread_fence(memory_order_seq_cst);
        if (!xshard_inbox_empty(w) || (RK_UNLIKELY(w->aof_gated != NULL) && aof_waiting_passed(w->id))) busy = true;
    }
    w->stats.submits++;
    if (w->cqes_left) {
        /* no new completions while the last are not all taken: each may be
         * a receive holding a buffer, and taking more (the receives that
         * ran meanwhile) could run the buffer ring dry */
        io_uring_submit(&w->ring);
        return;
    }
    if (busy) {
        io_uring_submit_and_get_events(&w->ring);
        return;
    }
    long long ms = 1000 / CONFIG_GET(hz);
    if (w->next_deadline_ms != LLONG_MAX) {   /* a blocked client's timeout comes sooner */
        long long left = w->next_deadline_ms - w->now_ms;
        if (left < ms) ms = left < 1 ? 1 : left;
    }
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000;
    /* Gather only under load (the last wake-up found several completions),
     * so that a lone request is never held back. Workers that share a CPU
     * (more threads than the CPUs we may run on) each wait that many times
     * longer: the CPU then wakes, and each client gets a burst of replies,
     * as often as with one worker; otherwise every wake-up of the CPU would
     * serve only one worker's share of the clients. */
    long long min_wait = CONFIG_GET(io_batch_wait_us);   /* the floor; 0: never gather */
    if (min_wait > 0 && w->batch_wait_us > min_wait) min_wait = w->batch_wait_us;
    min_wait *= w->cpu_mates;
    bool loaded = w->last_cqes >= MIN_WAIT_LOAD;
    /* A minimum wait also holds back doorbells from other workers. While
     * they talk to us, gather only when lightly loaded (few commands per
     * iteration: every handoff would otherwise cost a wake-up, i.e. a
     * context switch, for a handful of commands), even with a batch of ours
     * out: its replies then come back with the next gathering instead of
     * waking us alone. A busy worker, whose peers keep it fed, wakes at once. */
    bool peers_active = w->now_ms - w->last_peer_ms < 100;
    bool light = w->iter_cmds_avg < LIGHT_ITER_CMDS;
    if (w->min_wait_ok && min_wait > 0 && loaded && (!peers_active || light))
        ring_enter_min_wait(w, &ts, (unsigned)min_wait, w->batch_wait_nr);
    else
        io_uring_submit_and_wait_timeout(&w->ring, &cqe, 1, &ts, NULL);
    atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
}

/* The completions of a script's caller taken while it was busy, in order. */
static void replay_busy_cqes(struct worker *w) {
    for (unsigned i = 0; i < w->nbusy_cqes; i++) handle_cqe(w, &w->busy_cqes[i]);
    w->nbusy_cqes = 0;
}

/*
 * Looking ahead in the completion ring. With many connections each
 * completion's client is a cache miss, and with one request per client
 * (-P 1) so is each request's key: the batch prefetch of parse_loop has
 * a single lookup to overlap, whose three misses (control bytes, slot,
 * entry) then come one after the other. So while completion i is
 * handled, the client of completion i + 16 is loading, and the lookups of
 * the requests received in completions i + 12, i + 8 and i + 4 take their
 * next step (table.h's distances), as the requests of one pipeline do.
 */
#define CQE_CLIENT_AHEAD 16

static void prefetch_cqe_client(const struct worker *w, unsigned pos) {
    const struct io_uring_cqe *cqe = &w->ring.cq.cqes[pos & w->ring.cq.ring_mask];
    uint64_t ud = io_uring_cqe_get_data64(cqe);
    unsigned type = UD_TYPE(ud);
    if ((type != UD_RECV && type != UD_SEND) || UD_IDX(ud) >= w->nclients_cap) return;
    const char *c = (const char *)w->clients[UD_IDX(ud)];
    if (!c) return;
    __builtin_prefetch(c);
    __builtin_prefetch(c + 64);   /* its input buffer, what a receive looks at first */
}

/* The first step for the completion at pos: its request's key, if any. */
static void hint_cqe_key(struct worker *w, unsigned pos) {
    const struct io_uring_cqe *cqe = &w->ring.cq.cqes[pos & w->ring.cq.ring_mask];
    struct key_hint *h = &w->cqe_hints[pos % CQE_HINTS];
    h->pos = pos;
    h->table = NULL;
    uint64_t ud = io_uring_cqe_get_data64(cqe);
    if (UD_TYPE(ud) != UD_RECV || cqe->res <= 0 || !(cqe->flags & IORING_CQE_F_BUFFER) ||
        UD_IDX(ud) >= w->nclients_cap)
        return;
    const struct client *c = w->clients[UD_IDX(ud)];
    if (!c || c->gen != UD_GEN(ud)) return;
    const char *data = w->bufs + (size_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT) * w->buf_size;
    if (client_key_hint(c, data, (size_t)cqe->res, h)) table_prefetch(h->table, h->hash);
}

/* The second and third steps for the completion at pos, if its first
 * found a key. */
static void hint_cqe_slot(const struct worker *w, unsigned pos) {
    const struct key_hint *h = &w->cqe_hints[pos % CQE_HINTS];
    if (h->pos == pos && h->table) table_prefetch_slot(h->table, h->hash);
}

static void hint_cqe_entry(const struct worker *w, unsigned pos) {
    const struct key_hint *h = &w->cqe_hints[pos % CQE_HINTS];
    if (h->pos == pos && h->table) table_prefetch_entry(h->table, h->hash);
}

/* The steps due while the completion at head is handled, with `avail`
 * completions known to be in the ring from head on. */
static void look_ahead(struct worker *w, unsigned head, unsigned avail) {
    if (avail > CQE_CLIENT_AHEAD) prefetch_cqe_client(w, head + CQE_CLIENT_AHEAD);
    if (avail > KEY_PREFETCH_GROUP_AHEAD) hint_cqe_key(w, head + KEY_PREFETCH_GROUP_AHEAD);
    if (avail > KEY_PREFETCH_SLOT_AHEAD) hint_cqe_slot(w, head + KEY_PREFETCH_SLOT_AHEAD);
    if (avail > KEY_PREFETCH_ENTRY_AHEAD) hint_cqe_entry(w, head + KEY_PREFETCH_ENTRY_AHEAD);
}

/* A drain's first completions were never that far ahead: their steps,
 * issued at once in order (as key_prefetch_begin does for a pipeline). */
static void look_ahead_begin(struct worker *w, unsigned head, unsigned n) {
    for (unsigned i = 0; i < n && i < CQE_CLIENT_AHEAD; i++) prefetch_cqe_client(w, head + i);
    for (unsigned i = 0; i < n && i < KEY_PREFETCH_GROUP_AHEAD; i++) hint_cqe_key(w, head + i);
    for (unsigned i = 0; i < n && i < KEY_PREFETCH_SLOT_AHEAD; i++) hint_cqe_slot(w, head + i);
    for (unsigned i = 0; i < n && i < KEY_PREFETCH_ENTRY_AHEAD; i++) hint_cqe_entry(w, head + i);
}

/*
 * Take the completions in the ring, until it is empty or the clock passes
 * `until` (clock ticks). One at a time through w->cq_head, and each copied
 * before it is handled: a script that turns busy inside a handler takes
 * more from the same ring (worker_serve_while_busy), and the loop goes on
 * after those.
 *
 * The loop gives each iteration io-iteration-budget-us (at least one
 * completion is taken): the rest stay in the ring for the next iteration,
 * which follows at once. So a burst of work (many clients' pipelines at a
 * time, or their inserts during a table's migration, several times dearer
 * than usual) is served in slices, and the replies, cross-shard handoffs
 * and cron of one slice go out before the next begins instead of waiting
 * for the whole burst. Nothing may assume the ring empty after a drain:
 * w->cqes_left says when it is not (the receive buffers' trim, ring.c,
 * waits for that).
 */
static unsigned drain_cqes(struct worker *w, uint64_t until) {
    struct io_uring_cq *cq = &w->ring.cq;
    unsigned n = 0, tail = 0;
    w->cqes_left = false;
    for (;;) {
        if (RK_UNLIKELY(w->nbusy_cqes) && !w->serving_busy) replay_busy_cqes(w);
        unsigned head = w->cq_head;
        /* the tail is read again once reached, or passed: a busy script's
         * nested drain may have taken completions past it */
        if ((int)(tail - head) <= 0) {
            tail = io_uring_smp_load_acquire(cq->ktail);
            if (head == tail) break;
            look_ahead_begin(w, head, tail - head);
        }
        look_ahead(w, head, tail - head);
        struct io_uring_cqe cqe = cq->cqes[head & cq->ring_mask];
        w->cq_head = head + 1;
        n++;
        if (RK_UNLIKELY(w->busy_caller != NULL)) {
            uint64_t ud = io_uring_cqe_get_data64(&cqe);
            struct client *c = w->busy_caller;
            if ((UD_TYPE(ud) == UD_RECV || UD_TYPE(ud) == UD_SEND) && UD_IDX(ud) == c->idx && UD_GEN(ud) == c->gen) {
                if (w->nbusy_cqes == w->busy_cqes_cap) {
                    w->busy_cqes_cap = w->busy_cqes_cap ? w->busy_cqes_cap * 2 : 16;
                    w->busy_cqes = rk_realloc(w->busy_cqes, w->busy_cqes_cap * sizeof *w->busy_cqes);
                }
                w->busy_cqes[w->nbusy_cqes++] = cqe;
                continue;
            }
        }
        handle_cqe(w, &cqe);
        if (RK_UNLIKELY(clock_ticks() > until)) {
            w->cqes_left = w->cq_head != io_uring_smp_load_acquire(cq->ktail);
            break;
        }
    }
    io_uring_smp_store_release(cq->khead, w->cq_head);
    return n;
}

void worker_serve_while_busy(struct worker *w, struct client *running) {
    if (w->serving_busy) return;
    w->serving_busy = true;
    w->busy_caller = running;
    w->now_ms = (long long)mstime_now();
    io_uring_submit_and_get_events(&w->ring);
    w->stats.completions += drain_cqes(w, UINT64_MAX);
    client_flush_sends(w);
    io_uring_submit(&w->ring);
    w->serving_busy = false;
    w->busy_caller = NULL;
}

/* Room under maxmemory before this iteration's commands run (evict.h). A
 * shard held by a transaction, a load, or a client pause (which holds
 * evictions, as in Redis) leave the shard alone this time, and so do
 * clients over maxmemory-clients, whose thread evicts them first. */
static void worker_evict(struct worker *w) {
    bool may = !shard_is_held(w) && !client_expiry_paused(w->now_ms) && !clients_evictions_due(w) &&
               !(atomic_load_explicit(&rk_persist.gate, memory_order_acquire) & PERSIST_GATE_LOADING);
    stamp_clock(w->now_ms);
    bool wake_peers;
    struct evict_timing timing = {0};
    bool timed = RK_UNLIKELY(latency_monitor_on());
    w->mem_refuse = evict_iteration(&w->shard, srv.shard_ptrs, srv.nworkers, w->now_ms, may, &wake_peers,
                                    timed ? &timing : NULL);
    if (RK_UNLIKELY(timing.evicted)) {
        latency_add_sample_if_needed("eviction-del", ticks_to_ns(timing.longest_del_ticks) / 1000000);
        latency_add_sample_if_needed("eviction-cycle", ticks_to_ns(timing.cycle_ticks) / 1000000);
    }
    if (RK_UNLIKELY(wake_peers))
        for (unsigned i = 0; i < srv.nworkers; i++)
            if (i != w->id && atomic_load_explicit(&srv.workers[i].sleeping, memory_order_relaxed))
                ring_doorbell(w, &srv.workers[i]);
}

const unsigned iteration_slow_us[ITERATION_SLOW_STEPS] = { 250, 1000, 2000, 8000 };
static uint64_t iteration_slow_ticks;   /* the first step, in clock ticks (server_start) */

/* The thread's own CPU clock, in nanoseconds. Unlike clock_ticks() it is a
 * system call, so it is read only while the latency monitor is on, and then
 * only in the few iterations after a long one (ITERATION_CPU_WATCH): under
 * sustained load every iteration is measured, under light load none. */
#define ITERATION_CPU_WATCH 8
static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void count_slow_steps(uint64_t us, uint64_t *over) {
    for (int i = 0; i < ITERATION_SLOW_STEPS && us > iteration_slow_us[i]; i++) over[i]++;
}

/* One iteration's work took `ticks`; cpu0 is the thread's CPU clock at its
 * start, or 0 if not read. Only the long ones are converted, and only
 * their CPU time read: a long iteration that ran for much less is one the
 * machine held up (the host or another task had the CPU), not the server. */
static void iteration_account(struct worker *w, uint64_t ticks, uint64_t cpu0) {
    w->stats.iterations++;
    if (w->cpu_watch) w->cpu_watch--;
    if (ticks > w->stats.iteration_max_ticks) w->stats.iteration_max_ticks = ticks;
    if (RK_LIKELY(ticks <= iteration_slow_ticks)) return;
    w->cpu_watch = latency_monitor_on() ? ITERATION_CPU_WATCH : 0;
    uint64_t us = ticks_to_ns(ticks) / 1000;
    if (us <= iteration_slow_us[0]) return;   /* under the first step once rounded */
    count_slow_steps(us, w->stats.iterations_over);
    if (!cpu0) return;
    uint64_t cpu = thread_cpu_ns() - cpu0;
    struct iteration_cpu_stats *st = &w->iteration_cpu;
    st->measured++;
    if (cpu > st->max_ns) st->max_ns = cpu;
    count_slow_steps(cpu / 1000, st->over);
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    rk_arena = &w->shard.arena;
    while (!atomic_load_explicit(&srv.shutdown, memory_order_relaxed)) {
        uint64_t woke = clock_ticks();
        uint64_t cpu0 = w->cpu_watch ? thread_cpu_ns() : 0;
        w->now_ms = (long long)mstime_now();
        worker_evict(w);
        uint64_t work0 = w->stats.commands + w->stats.forwarded_in;
        unsigned n = drain_cqes(w, woke + ns_to_ticks((uint64_t)CONFIG_GET(io_iteration_budget_us) * 1000));
        w->stats.completions += n;
        w->last_cqes = n;
        bool got = xshard_poll(w);
        if (got) w->last_peer_ms = w->now_ms;
        clients_wake_ready(w);
        w->next_deadline_ms = w->blocked ? clients_block_cron(w) : LLONG_MAX;
        worker_cron(w);
        client_pause_tick(w);      /* paused clients whose pause is over go on the resume list */
        clients_resume_scheduled(w);
        if (RK_UNLIKELY(monitor_pending(w))) monitor_flush(w);
        /* Redis evicts before the command after the one that went over:
         * evicting now, before this iteration's replies leave (rather than
         * only when something next wakes us), gets the evicted keys'
         * invalidations, and peers rung for their part, ahead of the
         * client's next command. Clients over maxmemory-clients go first,
         * as in Redis: what their buffers took is not the keys' to give */
        if (w->stats.commands + w->stats.forwarded_in != work0) {
            clients_evict_iteration(w);
            worker_evict(w);
        }
        tracking_iteration(w);     /* invalidations: ours delivered, the others' into messages */
        bool saving = persist_iteration(w);   /* a snapshot's next entries, its file writes */
        if (RK_UNLIKELY(w->shard.dead_tables != NULL) && !shard_is_held(w))
            saving |= lazyfree_step(&w->shard);   /* FLUSH... ASYNC: a slice more */
        xshard_flush(w);
        clients_evict_iteration(w);   /* maxmemory-clients: victims close in the sends' pass */
        /* after every place a CONFIG SET may have run, before its reply leaves */
        unsigned listen_gen = __atomic_load_n(&rk_config_listen_gen, __ATOMIC_ACQUIRE);
        if (RK_UNLIKELY(listen_gen != w->listen_gen)) relisten(w, listen_gen);
        if (RK_LIKELY(!w->listen_settling) || listeners_settled(w)) client_flush_sends(w);
        uint64_t work = w->stats.commands + w->stats.forwarded_in - work0;
        w->iter_cmds_avg = (w->iter_cmds_avg * 7 + work) / 8;
        iteration_account(w, clock_ticks() - woke, cpu0);
        submit_and_wait(w, saving || w->cqes_left || (got && !xshard_inbox_empty(w)));
    }
    return NULL;
}

static int worker_setup(struct worker *w) {
    w->batch_wait_nr = BATCH_WAIT_NR;   /* until the first window is over (batch_wait_update) */
    int rc = ring_setup(w);
    if (rc) { worker_log(w, "io_uring_queue_init", -rc); return -1; }
    rc = ring_buffers_setup(w);
    if (rc) { worker_log(w, "provided buffers", -rc); return -1; }
    __atomic_store_n(&w->listen_gen, __atomic_load_n(&rk_config_listen_gen, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    if (listen_open(&w->listeners, rk_config.bind, rk_config.port, LISTEN_SHARED) != 0) return -1;
    if (w->id == 0 && rk_config.unixsocket &&
        (w->unix_fd = listen_unix(rk_config.unixsocket, (unsigned)rk_config.unixsocketperm)) < 0)
        return -1;
    arm_tcp_listeners(w);
    if (w->unix_fd >= 0) ring_arm_accept(w, w->unix_fd, 0, UNIX_SLOT);
    if (w->id == 0 && rk_config.metrics_port != 0 && metrics_open(w) != 0) return -1;
    return 0;
}

/* Threads are created, pinned and set up one by one so that a failure (port in
 * use, no io_uring) stops the start with a clear message. */
static pthread_barrier_t start_barrier;
static _Atomic int setup_failed;

static void *worker_thread(void *arg) {
    struct worker *w = arg;
    if (worker_setup(w) != 0) atomic_store(&setup_failed, 1);
    pthread_barrier_wait(&start_barrier);
    pthread_barrier_wait(&start_barrier);   /* main checked setup_failed */
    if (atomic_load(&setup_failed)) return NULL;
    persist_thread_start(w);
    worker_main(w);
    persist_thread_stop(w);
    return NULL;
}

int server_start(void) {
    unsigned n = (unsigned)rk_config.threads;
    srv.nworkers = n;
    srv.workers = rk_calloc(n, sizeof *srv.workers);
    srv.rings = rk_calloc((size_t)n * n, sizeof *srv.rings);
    srv.shard_ptrs = rk_calloc(n, sizeof *srv.shard_ptrs);
    for (unsigned i = 0; i < n; i++) srv.shard_ptrs[i] = &srv.workers[i].shard;
    srv.start_ms = (long long)mstime_now();
    srv.start_us = monotonic_us();
    iteration_slow_ticks = ns_to_ticks(iteration_slow_us[0] * 1000ull);
    atomic_store(&srv.next_client_id, 1);
    for (unsigned i = 0; i < n * n; i++)
        if (spsc_init(&srv.rings[i], 4096) != 0) return -1;
    slots_assign(n);
    command_table_init();
    db_ready_hook = block_notify;
    db_expired_hook = aof_feed_expired;
    db_waiter_alive_hook = block_record_alive;
    db_watch_hook = watch_notify;
    db_expire_paused_hook = client_expiry_paused;
    rk_msg_client = (struct msg_client_ops){ .live = client_live, .replies_ready = client_replies_ready,
                                             .tx_done = client_tx_done, .shard_free = clients_shard_free,
                                             .ready = client_ready, .watch_touched = client_watch_touched,
                                             .deliver = pubsub_deliver, .tracking = tracking_deliver,
                                             .monitor_lines = monitor_lines_in, .clients_full = clients_mem_full,
                                             .slow_entry = client_slow_entry_in };
    pubsub_send_hook = publish_send;
    rk_conn_ops = (struct conn_ops){ .close = client_close, .info_line = client_info_line, .slow_entry = client_slow_entry,
                                     .unblock = client_unblock, .reset_transaction = client_reset_transaction,
                                     .reset_pubsub = client_pubsub_reset, .subs_allowed = client_subs_allowed,
                                     .acl_log = client_acl_log,
                                     .tracking_on = client_tracking_on, .tracking_off = client_tracking_off,
                                     .tracking_caching = client_tracking_caching,
                                     .tracking_reset = client_tracking_reset,
                                     .pause = pause_clients, .unpause = unpause_clients,
                                     .monitor = client_monitor_start, .set_mode = client_set_mode,
                                     .reset_controls = client_reset_controls,
                                     .take_shard_now = tx_take_now, .release_taken = tx_release_taken,
                                     .service_takes = tx_service_takes, .busy = client_controls_busy,
                                     .serve_while_busy = worker_serve_while_busy,
                                     .monitor_script = monitor_feed_script };

    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    sched_getaffinity(0, sizeof allowed, &allowed);
    int cpus[CPU_SETSIZE], ncpus = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) cpus[ncpus++] = c;

    rk_evict_hold = clients_hold_key_eviction;   /* clients over maxmemory-clients go before keys */
    pthread_barrier_init(&start_barrier, NULL, n + 1);
    for (unsigned i = 0; i < n; i++) {
        struct worker *w = &srv.workers[i];
        w->id = i;
        w->cpu = ncpus ? cpus[i % ncpus] : -1;
        /* workers i, i + ncpus, i + 2 * ncpus, ... share this CPU */
        w->cpu_mates = ncpus && n > (unsigned)ncpus ? (n - i % ncpus + ncpus - 1) / ncpus : 1;
        shard_init(&w->shard, i, (unsigned)rk_config.databases);
        resp_parser_init(&w->parser, rk_config.proto_max_bulk_len);
        w->shard_waiters_tail = &w->shard_waiters;
        w->resume_tail = w->resume_wake_tail = &w->resume_list;
        w->lock_queue_tail = &w->lock_queue;
        w->deferred_tail = &w->deferred;
        w->stash_tail = &w->stash;
        w->overflow_tail = &w->overflow;
        w->unix_fd = -1;
        w->next_deadline_ms = LLONG_MAX;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (w->cpu >= 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(w->cpu, &one);
            pthread_attr_setaffinity_np(&attr, sizeof one, &one);
        }
        if (pthread_create(&w->thread, &attr, worker_thread, w) != 0) {
            rk_log(LL_WARNING, "Cannot create thread %u", i);
            exit(1);
        }
        pthread_attr_destroy(&attr);
    }
    pthread_barrier_wait(&start_barrier);
    int failed = atomic_load(&setup_failed);
    pthread_barrier_wait(&start_barrier);
    return failed ? -1 : 0;
}

static void worker_teardown(struct worker *w) {
    /* The main thread runs this, and may not submit to the worker's ring
     * (SINGLE_ISSUER): the registered files go with the ring, not one by one. */
    w->nfixed_files = 0;
    for (uint32_t i = 0; i < w->nclients_cap; i++)
        if (w->clients[i]) client_free_now(w->clients[i]);
    free(w->clients);
    free(w->free_idx);
    xshard_teardown(w);
    pubsub_worker_free(w);
    monitor_worker_free(w);
    script_thread_free(w);
    free(w->busy_cqes);
    metrics_free(w);
    /* shutdown() stops listening at once; after close() alone the armed
     * accept keeps the socket listening until the kernel has finished
     * tearing the ring down, after this process has gone, and a server
     * started right after it would find the port taken (main.c). */
    listen_close(&w->listeners);
    if (w->unix_fd >= 0) {
        listen_close(&(struct listen_set){ .fd = { w->unix_fd }, .n = 1 });
        if (rk_config.unixsocket) unlink(rk_config.unixsocket);
    }
    ring_teardown(w);
    resp_parser_free(&w->parser);
    rbuf_free(&w->batch_argv);
    rbuf_free(&w->ready);
    shard_watch_destroy(&w->shard);
    trk_shard_destroy(&w->shard);
    evict_shard_free(&w->shard);
    shard_destroy(&w->shard);
}

static bool workers_joined;

void server_stop(void) {
    if (workers_joined) return;
    for (unsigned i = 0; i < srv.nworkers; i++) pthread_join(srv.workers[i].thread, NULL);
    workers_joined = true;
}

void server_wait(void) {
    server_stop();
    for (unsigned i = 0; i < srv.nworkers; i++) worker_teardown(&srv.workers[i]);
    for (unsigned i = 0; i < srv.nworkers * srv.nworkers; i++) spsc_destroy(&srv.rings[i]);
    free(srv.rings);
    free(srv.shard_ptrs);
    free(srv.workers);
}
