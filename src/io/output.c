/*
 * A client's output, in request order, and its place in the worker's lists;
 * the limits on what clients hold: client-output-buffer-limit and client
 * eviction (maxmemory-clients), both of which mark a client to close.
 *
 * Replies are written into c->out. While any of a client's commands is out
 * on another shard, later replies are parked in c->rq in request order
 * instead, and the contiguous ready prefix moves to c->out as forwarded
 * replies come back. A writer asks client_reply_target where its reply
 * goes and reports it with client_reply_written.
 *
 * Nothing here runs a client's commands: a client whose wait ends is put on
 * the resume list (client_schedule_resume, or client_schedule_wake ahead of
 * the others) and the worker loop resumes it (client.c); a client that
 * must go is marked and closed at the end of the iteration. So the features
 * of the connection layer (blocking, pub/sub, tracking, pause, monitor,
 * MULTI) write replies and schedule resumes through this file and never
 * call back up into client.c.
 */
#include "ringkv/log.h"
#include "ringkv/server.h"
#include "ringkv/config.h"
#include "ringkv/multi.h"
#include "ringkv/ring.h"
#include "ringkv/tracking.h"
#include "ringkv/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

struct client *client_by_ref(struct worker *w, uint32_t idx, uint32_t gen) {
    if (idx >= w->nclients_cap) return NULL;
    struct client *c = w->clients[idx];
    return (c && (c->gen & 0xFFFFFF) == (gen & 0xFFFFFF)) ? c : NULL;
}

size_t client_output_size(const struct client *c) {
    return c->out.len + (c->sending.len - c->sent) + (c->rq ? c->rq->bytes.len : 0);
}

/* Resume c from the worker loop rather than from the caller's stack. */
void client_schedule_resume(struct client *c) {
    if (c->flags & CF_RESUME_SCHEDULED) return;
    c->flags |= CF_RESUME_SCHEDULED;
    c->next_resume = NULL;
    *c->w->resume_tail = c;
    c->w->resume_tail = &c->next_resume;
}

/* Close c at the end of the iteration, its output dropped: Redis's
 * freeClientAsync, for a client over an output limit found while lists
 * that hold it are being walked. It no longer counts for client eviction:
 * it is as good as gone. */
void client_close_asap(struct client *c) {
    c->flags |= CF_CLOSE_ASAP;
    client_mark_flush(c);
    if (c->w->cev_limit) client_mem_update(c);
}

void client_release_buffers(struct client *c) {
    if (c->flags & CF_PARSING) return;
    rbuf_free(&c->out);
    rbuf_free(&c->in);
    c->in_off = c->in_need = 0;
    if (c->rq) rbuf_free(&c->rq->bytes);   /* its replies are dropped (client_replies_ready) */
    if (!(c->flags & CF_SEND_INFLIGHT) || (c->flags & CF_SEND_POLL)) {   /* the kernel holds none of it */
        rbuf_free(&c->sending);
        c->sent = 0;
    }
}

/* What an output limit counts. A client paused for its output counts as
 * still holding the pause's threshold: it reached it and has not read it
 * down since (the kernel's socket buffers may hold most of it), and Redis,
 * which has no such pause, would hold the replies of the commands not
 * being run meanwhile. */
static size_t obuf_used(const struct client *c) {
    size_t used = client_output_size(c);
    return c->wait == WAIT_OUTPUT && used < OUTPUT_PAUSE_BYTES ? OUTPUT_PAUSE_BYTES : used;
}

/* Over client-output-buffer-limit of class k: at or over the hard limit,
 * or at or over the soft one for longer than its seconds. The seconds are
 * whole seconds of the clock, as Redis counts them, so a soft limit of 0
 * seconds still holds until the clock's next second. Redis closes a client
 * its cron finds at once, and logs it so; here every one goes at the end
 * of the iteration, and the log line says which check found it. */
void client_check_obuf_limit(struct client *c, enum obuf_class k, bool cron) {
    if (c->flags & (CF_CLOSING | CF_CLOSE_ASAP)) return;
    size_t used = obuf_used(c);
    long long hard = CONFIG_GET(client_obuf_limit[k][0]), soft = CONFIG_GET(client_obuf_limit[k][1]);
    long long now = c->w->now_ms;
    bool over = hard && used >= (size_t)hard;
    if (soft && used >= (size_t)soft) {
        struct client_rare *x = client_rare(c);
        if (!x->obuf_soft_since_ms) x->obuf_soft_since_ms = now;
        else if (now / 1000 - x->obuf_soft_since_ms / 1000 > CONFIG_GET(client_obuf_limit[k][2])) over = true;
    } else if (c->rare) {
        c->rare->obuf_soft_since_ms = 0;
    }
    if (RK_LIKELY(!over)) return;
    c->w->stats.obuf_limit_closed++;
    rk_log(LL_WARNING, "Client id=%llu addr=%s %s for overcoming of output buffer limits.",
            (unsigned long long)c->id, client_addr(c), cron ? "closed" : "scheduled to be closed ASAP");
    client_close_asap(c);
}

void client_obuf_cron(struct worker *w) {
    for (uint32_t i = 0; i < w->nclients_cap; i++) {
        struct client *c = w->clients[i];
        if (!c) continue;
        enum obuf_class k = client_obuf_class(c);
        if (obuf_class_limited(k)) client_check_obuf_limit(c, k, true);
    }
}

/* ---- client eviction (maxmemory-clients) ----
 *
 * Redis 7.0's: when the clients together take more than the limit, the
 * biggest are closed until they take less. Every client counts (Redis's
 * normal and pubsub clients; ringkv has no others), but only those not in
 * CLIENT NO-EVICT mode are evictable: they sit in buckets by the log2 of
 * their size, each bucket a list in the order its clients entered it, and
 * go from the highest bucket down, as Redis takes them.
 *
 * A client's figure (client_memory: a few loads and adds) is taken again
 * whenever it may have changed: every reply written to it
 * (client_output_grew), input received and run, a send completed, its
 * NO-EVICT mode changed, and each cron for good measure; only a figure
 * that differs costs more (the bucket lists, a relaxed store).
 *
 * The limit is global, the clients are not: each thread counts its own
 * (cev_mem) and publishes that with its highest non-empty bucket
 * (cev_published). A thread that finds the sum of every thread's figure
 * at or over the limit evicts from its own clients, one at a time and
 * reading the others' figures again after each, for as long as the
 * highest non-empty bucket anywhere is one of its own; when it is
 * another's, it rings that thread's doorbell if it sleeps, and that
 * thread does the same at its next iteration (clients_evict_iteration).
 * So victims leave in Redis's order across threads, up to a bucket's
 * order within it, without a lock; two threads that evict from the same
 * bucket at the same instant may each take one client more than needed.
 *
 * A victim is marked (CF_EVICTED, and CF_CLOSE_ASAP: this may run while
 * lists that hold it are walked), counted in evicted_clients, stops
 * counting and gives its buffers back at once (client_release_buffers),
 * runs nothing more, and is closed, and logged as Redis logs it, at the
 * end of the iteration. */

static inline unsigned mem_bucket_of(size_t mem) {
    unsigned bits = mem ? 64u - (unsigned)__builtin_clzll((unsigned long long)mem) : 0;
    if (bits < CEV_MIN_LOG) bits = CEV_MIN_LOG;
    if (bits > CEV_MAX_LOG) bits = CEV_MAX_LOG;
    return bits - CEV_MIN_LOG;
}

size_t client_memory(const struct client *c) {
    size_t n = sizeof *c + c->in.cap + c->out.cap + c->sending.cap;
    if (c->rare) n += sizeof *c->rare + c->rare->watched_keys.cap + c->rare->block_memo.cap + c->rare->subs_mem;
    if (c->rq) n += sizeof *c->rq + c->rq->cap * sizeof *c->rq->items + c->rq->bytes.cap;
    if (RK_UNLIKELY(c->multi))
        n += sizeof *c->multi + c->multi->cap * sizeof *c->multi->cmds + c->multi->mem + c->multi->watched.cap;
    if (RK_UNLIKELY(c->trk)) n += sizeof *c->trk + c->trk->prefixes.cap;
    return n;
}

static void bucket_unlink(struct worker *w, struct client *c) {
    unsigned b = c->mem_bucket - 1u;
    if (c->mem_prev) c->mem_prev->mem_next = c->mem_next;
    else w->cev_head[b] = c->mem_next;
    if (c->mem_next) c->mem_next->mem_prev = c->mem_prev;
    else w->cev_tail[b] = c->mem_prev;
    if (!w->cev_head[b]) w->cev_nonempty &= ~(1u << b);
    c->mem_prev = c->mem_next = NULL;
    c->mem_bucket = 0;
}

static void bucket_append(struct worker *w, struct client *c, unsigned b) {
    c->mem_bucket = (uint8_t)(b + 1);
    c->mem_next = NULL;
    c->mem_prev = w->cev_tail[b];
    if (c->mem_prev) c->mem_prev->mem_next = c;
    else w->cev_head[b] = c;
    w->cev_tail[b] = c;
    w->cev_nonempty |= 1u << b;
}

/* cev_published: bytes in the low 56 bits, the highest non-empty bucket
 * + 1 (0: none) in the next 7, and whether the thread counts its clients
 * at all (it has seen the limit on) in the top bit. */
#define CEV_MEM_MASK ((1ull << 56) - 1)
#define CEV_COUNTING (1ull << 63)
static inline int published_top(uint64_t v) { return (int)((v >> 56) & 0x7f) - 1; }

static inline int top_bucket(uint32_t nonempty) { return nonempty ? 31 - __builtin_clz(nonempty) : -1; }

static void cev_publish(struct worker *w) {
    uint64_t v = 0;
    if (w->cev_limit) {
        uint64_t mem = w->cev_mem > CEV_MEM_MASK ? CEV_MEM_MASK : w->cev_mem;
        v = CEV_COUNTING | (uint64_t)(top_bucket(w->cev_nonempty) + 1) << 56 | mem;
    }
    atomic_store_explicit(&w->cev_published, v, memory_order_relaxed);
}

static void wake_if_sleeping(struct worker *w, struct worker *o) {
    if (atomic_load_explicit(&o->sleeping, memory_order_relaxed)) ring_doorbell(w, o);
}

/* Redis frees a victim at once: its buffers go now, or, while its input
 * is being run, once that stops (client_process_input). Else the other
 * clients would grow, within the limit, into memory the victim still
 * holds until the end of the iteration, and used_memory pass maxmemory.
 * The buffers go before the victim leaves the count: the other way round,
 * another thread could read the clients under their limit while
 * used_memory still held the victim's buffers, and evict a key for them
 * (rk_evict_hold). */
static void evict_client(struct worker *w, struct client *c) {
    c->flags |= CF_EVICTED;
    w->stats.evicted_clients++;
    client_release_buffers(c);
    client_close_asap(c);   /* leaves its bucket and the count */
}

/* Evict from this thread's clients while every thread's clients together
 * are at or over the limit and the biggest evictable ones are here. Not
 * before every thread counts its clients: a limit just turned on counts
 * each thread's from its next iteration, and none is evicted meanwhile
 * for want of the others' figures. */
static void clients_evict(struct worker *w) {
    for (;;) {
        uint64_t others = 0;
        int top = -1;
        bool all_counting = true;
        for (unsigned i = 0; i < srv.nworkers; i++) {
            if (i == w->id) continue;
            uint64_t v = atomic_load_explicit(&srv.workers[i].cev_published, memory_order_relaxed);
            others += v & CEV_MEM_MASK;
            if (published_top(v) > top) top = published_top(v);
            if (!(v & CEV_COUNTING)) {
                all_counting = false;
                wake_if_sleeping(w, &srv.workers[i]);
            }
        }
        w->cev_others = others;
        if (w->cev_mem + others < w->cev_limit) {
            w->cev_stuck = false;
            return;
        }
        if (!all_counting) return;   /* they take their turn once they count */
        int mine = top_bucket(w->cev_nonempty);
        if (mine < 0 && top < 0) {
            if (!w->cev_stuck)
                rk_log(LL_WARNING, "Over client maxmemory after evicting all evictable clients");
            w->cev_stuck = true;
            return;
        }
        w->cev_stuck = false;
        if (mine < top) {   /* the biggest are another thread's: its turn */
            for (unsigned i = 0; i < srv.nworkers; i++)
                if (i != w->id &&
                    published_top(atomic_load_explicit(&srv.workers[i].cev_published, memory_order_relaxed)) == top)
                    wake_if_sleeping(w, &srv.workers[i]);
            return;
        }
        evict_client(w, w->cev_head[mine]);
    }
}

/* What every thread's clients cost, this one's as counted now. */
static uint64_t clients_everywhere(const struct worker *w) {
    uint64_t total = w->cev_mem;
    for (unsigned i = 0; i < srv.nworkers; i++)
        if (i != w->id)
            total += atomic_load_explicit(&srv.workers[i].cev_published, memory_order_relaxed) & CEV_MEM_MASK;
    return total;
}

/* Replies on their way, and those about to be, count twice: the thread
 * they go to copies them from their message into the clients' buffers,
 * and holds both until the message is done. Over the limit with nobody
 * evictable, holding replies back frees nothing: they flow as without a
 * limit. */
bool clients_mem_full(const struct worker *w, size_t more) {
    if (!w->cev_limit || w->cev_stuck) return false;
    return clients_everywhere(w) + 2 * (more + xshard_replies_in_flight()) >= w->cev_limit;
}

/* rk_evict_hold (evict.h): a shard's keys wait while its thread sees the
 * clients, with the replies on their way to them, at the limit. Checked
 * only at the thread's iteration start (clients_evictions_due), a key
 * went whenever the clients reached the limit during the shard's turn, or
 * replies still in messages (counted in used_memory, not yet in any
 * client's buffers: in Redis they would be) took used_memory over
 * maxmemory with the clients' own figure under their limit. */
bool clients_hold_key_eviction(const struct shard *s) {
    const struct worker *w = (const struct worker *)((const char *)s - offsetof(struct worker, shard));
    return clients_mem_full(w, 0);
}

bool clients_evictions_due(const struct worker *w) {
    return w->cev_limit && !w->cev_stuck && clients_everywhere(w) >= w->cev_limit;
}

/* Count c's figure again; true when it grew. */
static bool mem_recount(struct client *c) {
    struct worker *w = c->w;
    bool gone = c->flags & (CF_CLOSING | CF_CLOSE_ASAP);
    size_t now = gone ? 0 : client_memory(c);
    unsigned b = gone || (c->flags & CF_NO_EVICT) ? 0 : mem_bucket_of(now) + 1;
    size_t before = c->mem;
    if (now == before && b == c->mem_bucket) return false;
    w->cev_mem = w->cev_mem - before + now;
    c->mem = now;
    if (b != c->mem_bucket) {
        if (c->mem_bucket) bucket_unlink(w, c);
        if (b) bucket_append(w, c, b - 1);
    }
    cev_publish(w);
    return now > before;
}

void client_mem_update(struct client *c) {
    struct worker *w = c->w;
    /* grown to the limit: evict now, unless nobody could go (the
     * iteration's check then looks again) */
    if (mem_recount(c) && (c->mem_bucket || !w->cev_stuck) && w->cev_mem + w->cev_others >= w->cev_limit)
        clients_evict(w);
}

void client_mem_forget(struct client *c) {
    struct worker *w = c->w;
    if (!c->mem && !c->mem_bucket) return;
    w->cev_mem -= c->mem;
    c->mem = 0;
    if (c->mem_bucket) bucket_unlink(w, c);
    cev_publish(w);
}

/* maxmemory-clients in bytes now (0: off), as Redis's
 * getClientEvictionLimit: a percentage is of maxmemory (off without one),
 * and no limit is under 128 KB, so that a bad setting cannot cut every
 * client off. */
static size_t client_eviction_limit(void) {
    long long v = CONFIG_GET(maxmemory_clients);
    size_t limit;
    if (v > 0) {
        limit = (size_t)v;
    } else if (v < 0) {
        long long maxmemory = CONFIG_GET(maxmemory);
        if (maxmemory <= 0) return 0;
        limit = (size_t)((double)maxmemory * (double)-v / 100);
    } else {
        return 0;
    }
    return limit < 128 * 1024 ? 128 * 1024 : limit;
}

void clients_evict_iteration(struct worker *w) {
    size_t limit = client_eviction_limit();
    if (RK_LIKELY(!limit && !w->cev_limit)) return;
    if (!limit || !w->cev_limit) {
        /* turned off or on: every client leaves, or takes its place, and
         * the others see this thread counting once all of them have */
        w->cev_limit = 0;
        for (uint32_t i = 0; i < w->nclients_cap; i++) {
            struct client *c = w->clients[i];
            if (!c) continue;
            if (limit) mem_recount(c);
            else client_mem_forget(c);
        }
        if (!limit) w->cev_mem = 0;
        w->cev_stuck = false;
        w->cev_others = 0;
        w->cev_limit = limit;
        cev_publish(w);
        if (!limit) return;
    }
    w->cev_limit = limit;
    clients_evict(w);
}

/* Resume c ahead of the clients merely scheduled, behind those woken
 * before it: a blocked client whose key got data runs before anyone else
 * can take it, as Redis serves blocked clients right after the write. */
void client_schedule_wake(struct client *c) {
    struct worker *w = c->w;
    if (c->flags & CF_RESUME_SCHEDULED) return;
    c->flags |= CF_RESUME_SCHEDULED;
    c->next_resume = *w->resume_wake_tail;
    *w->resume_wake_tail = c;
    if (w->resume_tail == w->resume_wake_tail) w->resume_tail = &c->next_resume;
    w->resume_wake_tail = &c->next_resume;
}

/* The next client to resume, or NULL. */
struct client *client_next_resume(struct worker *w) {
    struct client *c = w->resume_list;
    if (!c) return NULL;
    w->resume_list = c->next_resume;
    if (w->resume_wake_tail == &c->next_resume) w->resume_wake_tail = &w->resume_list;
    if (!w->resume_list) w->resume_tail = w->resume_wake_tail = &w->resume_list;
    c->flags &= ~CF_RESUME_SCHEDULED;
    return c;
}

struct client *client_live(struct worker *w, uint32_t idx, uint32_t gen) {
    struct client *c = client_by_ref(w, idx, gen);
    return c && !(c->flags & CF_CLOSING) ? c : NULL;
}

void client_wait_on_shard(struct client *c) {
    struct worker *w = c->w;
    c->wait = WAIT_SHARD;
    c->next_wait = NULL;
    *w->shard_waiters_tail = c;
    w->shard_waiters_tail = &c->next_wait;
}

/* The queue's capacity is a power of two: positions wrap with a mask. */
static inline uint32_t rq_pos(const struct reply_queue *q, uint32_t seq) {
    return (q->head + (seq - q->base_seq)) & (q->cap - 1);
}

static inline void rq_pop_head(struct reply_queue *q) {
    q->head = (q->head + 1) & (q->cap - 1);
    q->count--;
    q->base_seq++;
}

/* Replies to forwarded commands of c came back from a shard, in request
 * order. Merge them with what is queued: from the queue's head, take a
 * queued reply that is ready or the next one returning, until an item that
 * is still out elsewhere (only with three or more shards); returning
 * replies behind it wait in the queue's bytes. */
void client_replies_ready(struct worker *w, uint32_t idx, uint32_t gen, const struct shard_reply *r, size_t n) {
    struct client *c = client_live(w, idx, gen);
    if (!c) return;
    if (RK_UNLIKELY(c->flags & CF_CLOSE_ASAP)) {   /* its output is dropped: hold no more of it */
        c->inflight -= (uint32_t)n;
        return;
    }
    struct reply_queue *q = c->rq;
    size_t k = 0;
    while (q->count) {
        const struct pending_reply *it = &q->items[q->head];
        if (it->ready) {
            rbuf_append(&c->out, q->bytes.buf + it->off, it->len);
        } else if (k < n && r[k].seq == q->base_seq) {
            rbuf_append(&c->out, r[k].p, r[k].len);
            k++;
        } else {
            break;
        }
        rq_pop_head(q);
    }
    for (; k < n; k++) {
        struct pending_reply *it = &q->items[rq_pos(q, r[k].seq)];
        it->off = (uint32_t)q->bytes.len;
        it->len = r[k].len;
        it->ready = true;
        rbuf_append(&q->bytes, r[k].p, r[k].len);
    }
    if (q->count == 0) q->bytes.len = 0;
    c->inflight -= (uint32_t)n;
    client_mark_flush(c);
    client_output_grew(c);
    if (c->inflight == 0 && c->wait == WAIT_FORWARDS) client_schedule_resume(c);
}

/* Reserve the next position in request order; returns its sequence number. */
uint32_t client_reserve_reply(struct client *c) {
    if (!c->rq) c->rq = rk_calloc(1, sizeof *c->rq);
    struct reply_queue *q = c->rq;
    if (q->count == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 16;
        struct pending_reply *items = rk_malloc(cap * sizeof *items);
        for (uint32_t i = 0; i < q->count; i++) items[i] = q->items[(q->head + i) & (q->cap - 1)];
        free(q->items);
        q->items = items;
        q->head = 0;
        q->cap = cap;
    }
    uint32_t pos = (q->head + q->count) & (q->cap - 1);
    q->items[pos].ready = false;
    q->count++;
    return q->base_seq + q->count - 1;
}

/* Local replies behind a forwarded one: the reply was written to rq->bytes
 * from start_off; record it as a ready item. */
void client_queue_local_reply(struct client *c, size_t start_off) {
    struct reply_queue *q = c->rq;
    uint32_t seq = client_reserve_reply(c);
    uint32_t pos = rq_pos(q, seq);
    q->items[pos].off = (uint32_t)start_off;
    q->items[pos].len = (uint32_t)(q->bytes.len - start_off);
    q->items[pos].ready = true;
}

