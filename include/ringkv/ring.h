/*
 * io_uring primitives of a worker (ring.c): setup, SQEs, the provided
 * buffer ring, accept and receive, doorbells between workers, and the
 * minimum-wait enter. Used by the worker loop, the connection layer and the
 * messaging layer's doorbells.
 *
 * user_data = [type:8][generation:24][client index:32]; the generation makes a
 * late completion for a closed and reused client slot recognisable. A file
 * operation's is [UD_FILE:8][its address:56] (io/persist_io.c).
 */
#ifndef RINGKV_RING_H
#define RINGKV_RING_H

#include <liburing.h>
#include <stdint.h>

struct worker;
struct client;

enum ud_type { UD_IGNORE = 0, UD_ACCEPT, UD_RECV, UD_SEND, UD_DOORBELL, UD_FILE, UD_WRITABLE,
               UD_METRICS_ACCEPT, UD_METRICS_RECV, UD_METRICS_SEND };   /* the last three: io/metrics_http.c */

#define UD_MAKE(type, gen, idx) (((uint64_t)(type) << 56) | ((uint64_t)((gen) & 0xFFFFFF) << 32) | (uint32_t)(idx))
#define UD_TYPE(ud) ((unsigned)((ud) >> 56))
#define UD_GEN(ud)  ((uint32_t)(((ud) >> 32) & 0xFFFFFF))
#define UD_IDX(ud)  ((uint32_t)(ud))

/* Both return 0 or a negative errno. */
int ring_setup(struct worker *w);
int ring_buffers_setup(struct worker *w);
void ring_teardown(struct worker *w);

/* An SQE, submitting first if the submission queue is full. */
struct io_uring_sqe *ring_sqe(struct worker *w);
void ring_recycle_buffer(struct worker *w, unsigned bid);
/* Called every tick: after a quiet second, give the receive buffers' pages back. */
void ring_trim_quiet_buffers(struct worker *w);

/* A multishot accept on listening socket fd; gen and slot come back in
 * the user_data of its completions (UD_GEN, UD_IDX). */
void ring_arm_accept(struct worker *w, int fd, unsigned gen, unsigned slot);
void ring_arm_recv(struct client *c);
void ring_cancel_recv(struct client *c);

/* A client's socket in the ring's table of registered files, at the
 * client's index, so that its operations skip the kernel's file lookup.
 * ring_install_file puts it there (a client past the table keeps using its
 * fd); ring_uninstall_file takes it out, which the close needs: the table
 * holds the socket open. Both are SQEs, so they cost no syscall and keep
 * their order with the client's operations. */
void ring_install_file(struct client *c);
void ring_uninstall_file(struct client *c);
/* Point sqe, prepared with c->fd, at c's socket. */
void ring_sqe_client_file(struct io_uring_sqe *sqe, const struct client *c);

void ring_doorbell(struct worker *w, struct worker *target);
/* The same, submitted at once: for a worker that spins on the answer. */
void ring_doorbell_now(struct worker *w, struct worker *target);
/*
 * How long a wait may gather completions.
 *
 * Holding a wake-up back saves CPU (one wake-up, one submit and one context
 * switch for many requests) and costs latency. What latency a client can
 * spare depends on how often it talks to us: over a window of span_us, the
 * receives per client heard from (recvs / clients) give the average time
 * between two requests of one client; for a client waiting on each reply,
 * that is its round trip, queueing in itself included. A wait of a
 * sixteenth of that delays a request by a small share of its client's own
 * cycle: with a few busy clients, microseconds; with thousands of
 * connections, each waiting its turn in its pool, up to BATCH_WAIT_MAX_US,
 * so that their requests share wake-ups instead of paying one each.
 * Returns that wait in microseconds (0 without receives).
 */
#define BATCH_WAIT_MAX_US 1000
unsigned ring_batch_wait_us(long long span_us, uint32_t clients, uint32_t recvs);
/* How many completions such a wait gathers before it returns early: up to
 * BATCH_WAIT_NR, but no more than half the clients heard from, since a
 * wait for more completions than clients can send lasts its whole time. */
#define BATCH_WAIT_NR 32
#define BATCH_WAIT_NR_MIN 4
unsigned ring_batch_wait_nr(uint32_t clients);

/* Submit and wait for wait_nr completions besides those of the SQEs
 * submitted now, which complete inside the same call (at least
 * BATCH_WAIT_NR in all), or min_wait_us, then for one, or until ts. */
void ring_enter_min_wait(struct worker *w, struct __kernel_timespec *ts, unsigned min_wait_us, unsigned wait_nr);

#endif
