/*
 * Threads, connections and the messages between threads.
 *
 * A worker is one thread pinned to one CPU. It owns an io_uring ring, a
 * SO_REUSEPORT listener, the clients it accepted and one shard of the
 * keyspace. Workers share nothing but the message rings: rings[from][to] is a
 * single-producer single-consumer ring of struct xmsg pointers.
 */
#ifndef RINGKV_SERVER_H
#define RINGKV_SERVER_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>

#include "ringkv/common.h"
#include "ringkv/command.h"
#include "ringkv/db.h"
#include "ringkv/listen.h"
#include "ringkv/mem.h"
#include "ringkv/pubsub_dir.h"
#include "ringkv/resp.h"
#include "ringkv/spsc.h"
#include "ringkv/util.h"

#define RK_MAX_THREADS 64
#define RK_VERSION "7.0.15"          /* the Redis version we answer as */
#define RINGKV_VERSION "0.1.0"

struct worker;
struct tx;
struct tx_outcome;
struct multi_queue;
struct metrics_http;

/* Per-client ordering of replies while commands are out on other shards. */
struct pending_reply {
    uint32_t off, len;     /* bytes in reply_queue.bytes once ready */
    bool ready;
};

struct reply_queue {
    struct pending_reply *items;
    uint32_t head, count, cap;      /* ring of items in request order */
    uint32_t base_seq;              /* sequence number of items[head] */
    struct rbuf bytes;
};

/* Why a client's input is not being processed right now. */
enum client_wait {
    WAIT_NONE = 0,
    WAIT_FORWARDS,     /* needs its forwarded commands back before a transaction */
    WAIT_TX,           /* its cross-shard transaction is running */
    WAIT_SHARD,        /* the local shard is held by another transaction */
    WAIT_OUTPUT,       /* too many unsent replies */
    WAIT_BLOCKED,      /* a blocking command waits for its keys (the command stays unconsumed) */
    WAIT_PAUSED,       /* CLIENT PAUSE holds its command (unconsumed) until the pause ends (io/pause.c) */
    WAIT_RERUN,        /* a script stopped for a shard it could not take: runs again (unconsumed), routed anew */
};

#define CF_RECV_ARMED     (1u << 0)
#define CF_SEND_INFLIGHT  (1u << 1)
#define CF_CLOSE_AFTER    (1u << 2)   /* close once the replies are sent */
#define CF_CLOSING        (1u << 3)
#define CF_IN_FLUSH_LIST  (1u << 4)
#define CF_NEED_RECV      (1u << 5)   /* re-arm the multishot recv at the end of the iteration */
#define CF_RECV_STOPPED   (1u << 6)   /* recv deliberately not armed (backpressure) */
#define CF_AUTHED         (1u << 7)
#define CF_CANCEL_SENT    (1u << 8)
#define CF_RESUME_SCHEDULED (1u << 9) /* on w->resume_list */
#define CF_TRACKING       (1u << 10)  /* CLIENT TRACKING on (io/tracking.c) */
#define CF_CLOSE_ASAP     (1u << 11)  /* close at the end of the iteration, output dropped */
#define CF_AOF_GATED      (1u << 12)  /* output waits for the AOF to be durable (appendfsync always) */
#define CF_EVICTED        (1u << 13)  /* chosen by client eviction (maxmemory-clients): CF_CLOSE_ASAP too */
#define CF_PARSING        (1u << 14)  /* its input is being parsed and run: its buffers are in use */
#define CF_SEND_POLL      (1u << 15)  /* its send waits for the socket to take more (no buffer in the kernel) */
#define CF_FIXED_FILE     (1u << 16)  /* its socket is in the ring's file table at its index (ring.h) */
#define CF_MONITOR        (1u << 24)  /* MONITOR: gets a line per command (io/monitor.c) */
#define CF_NO_EVICT       (1u << 25)  /* CLIENT NO-EVICT ON */
#define CF_NO_TOUCH       (1u << 26)  /* CLIENT NO-TOUCH ON */
#define CF_MON_FEED       (1u << 27)  /* the command being run is shown to monitors once it is consumed */
#define CF_UNIX           (1u << 28)  /* connected through unixsocket */
#define CF_PUBSUB         (1u << 20)  /* subscribed to something (nsubs > 0) */

/* What a client holds only once it uses a feature most connections never
 * touch (a blocking command, WATCH, a name, appendfsync always's gate, the
 * soft output limit, subscriptions' bytes): allocated at the first use
 * (client_rare), kept until the client goes. An idle connection then
 * costs little more than struct client itself, which is what a server with
 * many mostly idle connections pays per connection. Readers that may meet
 * a client without one treat a missing struct as all zeros. */
struct client_rare {
    /* blocking commands */
    uint64_t block_ticket;         /* place in line of the command being run (0: none yet) */
    long long block_deadline_ms;   /* 0: not blocked yet; LLONG_MAX: no timeout */
    size_t block_cmd_len;          /* bytes of the blocked command at the front of `in` */
    const struct command *block_cmd;   /* that command: its call is counted when CLIENT UNBLOCK ... ERROR ends it */
    struct rbuf block_memo;        /* what the blocked command keeps across its runs (cmd_ctx.block_memo) */
    struct client *next_blocked;   /* w->blocked */
    bool block_timed_out;
    /* WATCH */
    bool watch_dirty;              /* a watched key was touched: EXEC fails */
    uint64_t watch_mask;           /* shards of the watched keys */
    struct rbuf watched_keys;      /* [db:u16][len:u32][key]...: EXEC checks them for expiry */
    /* CLIENT SETNAME, CLIENT SETINFO */
    char *name, *lib_name, *lib_ver;
    /* appendfsync always (CF_AOF_GATED): out leaves once the AOF is durable this far */
    uint64_t aof_gate;
    struct client *next_gated;     /* on w->aof_gated */
    long long obuf_soft_since_ms;  /* over the soft output limit since (0: not) */
    size_t subs_mem;               /* bytes of its subscription sets (io/pubsub.c keeps it) */
};

struct client {
    /* The first cache line holds what every command and every reply coming
     * back from another shard touches (the size is a multiple of the line,
     * and mimalloc's blocks of such sizes start on one: client_new). */
    struct worker *w;
    uint32_t idx, gen;             /* position in w->clients, reuse generation */
    uint32_t flags;
    uint8_t resp;
    uint8_t wait;                  /* enum client_wait */
    uint8_t pending_ops;           /* io_uring ops not yet completed */
    bool reply_off;                /* CLIENT REPLY OFF */
    uint8_t reply_skip;            /* CLIENT REPLY SKIP: drop the next command's reply */
    uint8_t mem_bucket;            /* client eviction: bucket + 1; 0: in none (not evictable, or not counted) */
    uint32_t inflight;             /* forwarded commands not yet answered */
    struct rbuf out;               /* replies waiting for a send */
    struct reply_queue *rq;        /* non-NULL while replies wait on other shards */
    struct client *next_flush;     /* w->flush_list */
    int db;
    int fd;
    size_t cur_cmd_len;            /* bytes of the request being dispatched */
    struct rbuf in;                /* unparsed input (split frame or paused) */
    size_t in_off;
    size_t in_need;                /* don't parse again until in.len - in_off >= this */
    struct rbuf sending;           /* the send in flight */
    size_t sent;
    uint32_t out_keep;             /* an idle output buffer up to this size is kept (client_cron sizes it) */
    uint32_t out_peak;             /* the biggest send lately */
    uint64_t id;
    struct client *next_wait;      /* a wait list */
    struct client *next_resume;    /* w->resume_list */
    struct acl_user *user;         /* held: the default user until AUTH (acl.h) */
    long long ctime_ms, last_ms;
    const char *last_cmd;
    uint32_t block_seq;            /* blocking: attempt number, older waiter records are stale */
    uint32_t watch_seq;            /* watch epoch: records of older epochs are stale */
    struct multi_queue *multi;     /* non-NULL between MULTI and EXEC/DISCARD */
    /* pub/sub (io/pubsub.c): channels + patterns + shard channels this
     * client is subscribed to; > 0 is Redis's "pub/sub mode" */
    uint32_t nsubs;
    uint32_t trk_epoch;            /* tracking epoch: records of older epochs are stale */
    struct pubsub_client *subs;
    /* client-side caching (io/tracking.c) */
    struct client_tracking *trk;   /* NULL until CLIENT TRACKING */
    const struct block_record *trk_reader;   /* the command being run records its reads for this (NULL: not) */
    uint32_t pushes_leaving;       /* bytes of invalidations in `out` not counted for eviction (output.h) */
    /* client eviction (maxmemory-clients, io/output.c): while it is on,
     * what the client counts for in its thread's total, and its place
     * among the evictable clients of its size (mem_bucket above) */
    size_t mem;                    /* bytes counted (0 while not counted) */
    struct client *mem_prev, *mem_next;   /* its bucket's list, oldest first */
    /* "ip:port" of the peer, then after its NUL the local end's: NULL
     * until first asked for (client_addr, client_laddr), as Redis finds a
     * client's peer id when first needed, since most connections are
     * never listed, logged or monitored */
    char *addr;
    struct client_rare *rare;      /* NULL until a feature needs it */
};

/* The addresses are a cache, filled on first use even through a const
 * pointer: a client is only ever read on its own thread. */
static inline const char *client_addr(const struct client *c) {
    if (RK_UNLIKELY(c->addr == NULL)) ((struct client *)c)->addr = sock_addr_pair(c->fd);
    return c->addr;
}
static inline const char *client_laddr(const struct client *c) {
    const char *a = client_addr(c);
    return a + strlen(a) + 1;
}

/* c's rare part, allocated now if it has none (freed by client.c). */
static inline struct client_rare *client_rare(struct client *c) {
    if (RK_UNLIKELY(c->rare == NULL)) c->rare = rk_calloc(1, sizeof *c->rare);
    return c->rare;
}
static inline const char *client_name(const struct client *c) { return c->rare ? c->rare->name : NULL; }
static inline bool client_watch_dirty(const struct client *c) { return c->rare && c->rare->watch_dirty; }
static inline uint64_t client_block_ticket(const struct client *c) { return c->rare ? c->rare->block_ticket : 0; }
static inline long long client_block_deadline(const struct client *c) { return c->rare ? c->rare->block_deadline_ms : 0; }

/* Client eviction sorts a thread's evictable clients by size as Redis 7.0
 * does: bucket b holds those of 2^(14+b) to 2^(15+b) bytes, the first
 * everything under 32 KB and the last everything from 4 GB up. */
#define CEV_MIN_LOG  15
#define CEV_MAX_LOG  33
#define CEV_BUCKETS  (CEV_MAX_LOG - CEV_MIN_LOG + 1)

/* One message between workers. The sender allocates it and gets it back. */
enum xmsg_type {
    XM_BATCH,        /* commands to run on the target shard */
    XM_BATCH_DONE,   /* the same batch carrying replies back */
    XM_BATCH_PART,   /* replies of a batch cut short; the batch comes back later (forward.c) */
    XM_LOCK,         /* a transaction asks for the target shard */
    XM_LOCKED,       /* granted (back to the coordinator) */
    XM_UNLOCK,       /* the transaction is done with the shard */
    XM_READY,        /* a key a client of the target waits on may serve it now */
    XM_WATCH,        /* a key a client of the target watches was touched */
    XM_MONITOR,      /* lines for the target's MONITOR clients (req) */
    XM_WAKE,         /* no content: a pause ended or eased, the target looks at its paused clients */
    XM_PUBLISH,      /* messages for the target's subscribers (req: records) */
    XM_TRACK,        /* invalidations for the target's tracking clients (req: trk_entry, tracking.h) */
    XM_TAKE,         /* a running script asks for the target shard now, without queueing (tx_take_now) */
    XM_TAKEN,        /* granted (back to the script's thread) */
    XM_TAKE_DENIED,  /* the shard is not free: the script stops or fails (tx_take_now) */
    XM_SLOWLOG,      /* a forwarded command's slow log entry, for its client's thread to complete (slow) */
};

struct xmsg {
    uint8_t type;
    uint8_t from;        /* worker that created the message */
    uint8_t to;
    uint8_t shard;       /* the shard asked for (XM_LOCK) or that runs the batch */
    struct xmsg *next;   /* queues while deferred */
    struct tx *tx;       /* XM_LOCK/LOCKED/UNLOCK */
    struct rbuf req;     /* XM_BATCH: encoded commands */
    struct rbuf rep;     /* XM_BATCH_DONE: encoded replies */
    size_t req_done;     /* XM_BATCH cut short: bytes of req already run (forward.c) */
    uint32_t ncmds;
    struct block_record ready;   /* XM_READY, XM_WATCH; the client of XM_SLOWLOG */
    struct slowlog_entry *slow;  /* XM_SLOWLOG */
};

/* The steps of INFO's iterations_over_* figures, in microseconds. */
#define ITERATION_SLOW_STEPS 4
extern const unsigned iteration_slow_us[ITERATION_SLOW_STEPS];

struct worker_stats {
    uint64_t commands, forwarded_out, forwarded_in, batches_out, batches_in;
    uint64_t submits, completions, enobufs, connections_total, rejected;
    uint64_t net_in, net_out, tx_started, doorbells;
    uint64_t buffer_trims;          /* receive buffers given back (ring_trim_quiet_buffers) */
    uint64_t qbuf_limit_closed, obuf_limit_closed;   /* clients closed at client-query/output-buffer-limit */
    uint64_t connected;             /* current clients */
    uint64_t blocked_clients;       /* clients in WAIT_BLOCKED (INFO blocked_clients) */
    uint64_t blocked_timeout;       /* ...of which with a timeout (clients_in_timeout_table) */
    uint64_t clients_mem;           /* bytes of this thread's clients, as of its last cron (mem_clients_normal) */
    uint64_t evicted_clients;       /* clients closed by client eviction (maxmemory-clients) */
    /* the event loop's iterations, from wake-up to the next submit: how
     * long the thread kept every one of its clients waiting */
    uint64_t iterations, iteration_max_ticks;
    uint64_t iterations_over[ITERATION_SLOW_STEPS];   /* longer than iteration_slow_us[i] */
};

/* ...and how much of that the thread itself ran (its CPU clock, which
 * leaves out time the CPU was given to another task or, in a virtual
 * machine, stolen by the host), for the long iterations measured: while
 * the latency monitor is on, those soon after another long one (worker.c).
 * Apart from worker_stats, at the end of the worker: they are seldom
 * written, and the hot fields keep their places. */
struct iteration_cpu_stats {
    uint64_t measured, max_ns;
    uint64_t over[ITERATION_SLOW_STEPS];
};

/* A receive ahead in the completion ring, at ring position pos, whose
 * request's key lookup is being prefetched (client_key_hint, drain_cqes). */
struct key_hint { unsigned pos; const struct kv_table *table; uint64_t hash; };
#define CQE_HINTS 16   /* a power of two above KEY_PREFETCH_GROUP_AHEAD */

struct worker {
    unsigned id;
    int cpu;
    unsigned cpu_mates;             /* workers pinned to this CPU, this one included */
    pthread_t thread;
    struct io_uring ring;
    int ring_fd;
    unsigned nfixed_files;          /* slots of the ring's registered-file table (0: none) */
    struct listen_set listeners;    /* bind x port (listen.h), as of listen_gen */
    unsigned listen_gen;            /* rk_config_listen_gen the listeners were opened for (others read it) */
    bool listen_settling;           /* moved listeners: replies wait until no worker is behind (relisten) */
    int unix_fd;                    /* unixsocket, on worker 0; -1 */
    struct io_uring_buf_ring *br;
    char *bufs;
    unsigned nbufs, buf_size;
    struct shard shard;
    struct resp_parser parser;
    struct rbuf batch_argv;                    /* argument slices of the batch being run */
    /* clients */
    struct client **clients;
    uint32_t nclients_cap;
    uint32_t *free_idx;
    uint32_t nfree;
    struct client *flush_list;
    struct client *shard_waiters, **shard_waiters_tail;   /* WAIT_SHARD, FIFO */
    struct client *resume_list, **resume_tail;           /* clients to resume from the loop */
    struct client **resume_wake_tail;                    /* end of the woken ones at its head */
    struct aof_writer *aof;                              /* this thread's AOF records (aof.h) */
    struct client *aof_gated;                            /* CF_AOF_GATED clients */
    struct script_thread *scripting;                     /* Lua engine and learned masks (script_host.c), NULL until used */
    struct metrics_http *metrics;                        /* the /metrics listener (io/metrics_http.c): thread 0's, NULL while metrics-port is 0 */
    /* messaging */
    struct xmsg *out_batch[RK_MAX_THREADS];   /* batch being filled per target */
    struct xmsg *free_batches[RK_MAX_THREADS];
    struct xmsg *overflow, **overflow_tail;   /* rings were full; retry */
    struct xmsg *out_publish[RK_MAX_THREADS]; /* pub/sub messages being gathered per target */
    struct pubsub_local *pubsub;               /* this thread's subscribers (io/pubsub.c) */
    struct slice *fwd_argv;                    /* arguments of the forwarded command being run */
    struct client *blocked;                    /* clients in WAIT_BLOCKED */
    struct rbuf ready;                         /* block_records of our clients to wake (safe point) */
    size_t fwd_argv_cap;
    _Atomic int sleeping;
    /* client eviction: this thread's cev_mem in the low 56 bits, its
     * highest non-empty bucket + 1 above (0: none), for the others to read
     * (next to `sleeping`, which they read anyway) */
    _Atomic uint64_t cev_published;
    bool min_wait_ok;                          /* kernel takes min_wait_usec */
    bool defer_taskrun;                        /* the ring has IORING_SETUP_DEFER_TASKRUN */
    bool bufs_touched;                         /* a receive buffer was written since the last trim */
    long long recv_window_start_ms;            /* this second of receives began (ring_trim_quiet_buffers) */
    size_t recv_window_bytes;                  /* bytes received since then */
    unsigned last_cqes;                        /* completions reaped by the last iteration */
    bool cqes_left;                            /* the last iteration's budget ran out before the ring was empty */
    unsigned cq_head;                          /* next completion to take (worker.c) */
    struct key_hint cqe_hints[CQE_HINTS];      /* receives ahead in the ring: their keys, by position (worker.c) */
    bool serving_busy;                         /* serving clients from inside a busy script (worker_serve_while_busy) */
    struct client *busy_caller;                /* ...whose caller that is (NULL: none) */
    struct io_uring_cqe *busy_cqes;            /* the caller's completions taken meanwhile, replayed after */
    unsigned nbusy_cqes, busy_cqes_cap;
    uint64_t iter_cmds_avg;                    /* commands per iteration, moving average (1/8) */
    /* the batch wait (worker.c): clients heard from and receives since
     * batch_window_ms, and the minimum wait and completions they set for
     * the next window (ring.h) */
    long long batch_window_ms;
    uint32_t batch_window_clients, batch_window_recvs;
    unsigned batch_wait_us, batch_wait_nr;
    uint64_t wake_mask;                        /* targets to ring at end of iteration */
    /* the shard lock (cross-shard transactions) */
    struct tx *lock_holder;
    struct xmsg *lock_queue, **lock_queue_tail;   /* LOCK requests in arrival order */
    struct xmsg *deferred, **deferred_tail;       /* batches that arrived while held, or behind one cut short */
    struct xmsg *stash, **stash_tail;             /* taken off the rings while a script waited (tx_take_now) */
    /* bytes of reply buffers (capacity) this thread sent back with
     * forwarded commands' replies, and took in; every thread's sums differ
     * by what is on its way (forward.c) */
    _Atomic uint64_t replies_sent, replies_taken;
    /* time */
    long long now_ms;
    bool mem_refuse;                /* this iteration refuses deny-oom commands (evict.h) */
    struct mem_trim_state mem_trim; /* trim requests its cron serves (mem_trim_due) */
    long long last_cron_ms;
    long long last_output_resize_ms, last_peak_reset_ms;   /* client_cron's idle output sizing */
    long long last_shard_cron_ms;
    long long last_peer_ms;        /* last iteration that exchanged messages with another worker */
    long long next_deadline_ms;    /* earliest timeout of a blocked client, LLONG_MAX if none */
    struct worker_stats stats;
    bool stop;
    /* client eviction (maxmemory-clients, io/output.c) */
    size_t cev_limit;               /* the limit in bytes as of this iteration (0: off) */
    uint64_t cev_mem;               /* bytes of this thread's clients, as counted (client.mem) */
    uint64_t cev_others;            /* the other threads' published figures, as last read */
    struct client *cev_head[CEV_BUCKETS], *cev_tail[CEV_BUCKETS];   /* evictable clients by size */
    uint32_t cev_nonempty;          /* bit b: cev_head[b] is not empty */
    bool cev_stuck;                 /* over the limit with nobody evictable anywhere (logged once) */
    unsigned cpu_watch;             /* iterations left whose CPU time is read (iteration_account) */
    struct iteration_cpu_stats iteration_cpu;
};

struct server {
    unsigned nworkers;
    struct worker *workers;
    struct spsc_ring *rings;        /* rings[from * nworkers + to] */
    struct shard **shard_ptrs;      /* shard of each worker, by id */
    _Atomic bool shutdown;
    _Atomic uint64_t next_client_id;
    _Atomic long connected;
    long long start_ms;
    uint64_t start_us;
    int exit_code;
};

extern struct server srv;

static inline struct spsc_ring *ring_between(unsigned from, unsigned to) {
    return &srv.rings[from * srv.nworkers + to];
}

/* worker.c */
int server_start(void);
/* After srv.shutdown: server_stop() waits for every worker to leave its
 * loop (the shards are then the caller's); server_wait() also frees them. */
void server_stop(void);
void server_wait(void);

/* client.c: the connection layer, the one writer of client state */
struct client *client_new(struct worker *w, int fd);
void client_close(struct client *c);
void client_on_recv(struct client *c, const char *data, size_t len);
/* The lookup that the request starting data (received, not handled yet)
 * will make, when it is a key of this shard's: h's table and hash are set
 * for prefetching it (table.h's three steps) while the completions before
 * it are handled. A guess from the request's first argument, never acted
 * on otherwise. */
bool client_key_hint(const struct client *c, const char *data, size_t len, struct key_hint *h);
void client_process_input(struct client *c);
void client_resume(struct client *c);
void clients_resume_scheduled(struct worker *w);
void client_flush_sends(struct worker *w);
void client_on_send(struct client *c, int res);
void client_on_writable(struct client *c, int res);   /* the poll of a send that waits for room */
struct client *client_by_ref(struct worker *w, uint32_t idx, uint32_t gen);
/* The client idx/gen if it is still there and not closing, else NULL. */
struct client *client_live(struct worker *w, uint32_t idx, uint32_t gen);
void client_wait_on_shard(struct client *c);
size_t client_output_size(const struct client *c);
void client_info_line(struct client *c, bool current, struct rbuf *out, long long now_ms);
void client_cron(struct worker *w);
/* Once per loop iteration, before the sends: client eviction's limit
 * (maxmemory-clients) as now configured, and this thread's share of
 * evictions when all threads' clients together are over it. */
void clients_evict_iteration(struct worker *w);
/* Every thread's clients, with the replies on their way to them and more
 * bytes of replies about to be, are at client eviction's limit (never while
 * it is off): a forwarded batch stops making more (rk_msg_client.clients_full). */
bool clients_mem_full(const struct worker *w, size_t more);
/* Every thread's clients are at client eviction's limit and some can be
 * evicted: keys wait for that (Redis evicts clients before keys). */
bool clients_evictions_due(const struct worker *w);
/* evict.h's rk_evict_hold: s (a worker's shard) keeps its keys while its
 * clients are at client eviction's limit as clients_mem_full counts them. */
bool clients_hold_key_eviction(const struct shard *s);
/* output.c: what a client costs (its struct, buffers, argument and
 * transaction queues, subscriptions, tracking prefixes): INFO's
 * mem_clients_normal, CLIENT LIST's tot-mem, and client eviction's figure */
size_t client_memory(const struct client *c);
/* A script past busy-reply-threshold (script_host.c): commands of other
 * clients are refused with BUSY from now on (on: true) or again served. */
void client_controls_busy(bool on);
/* From inside that script: serve this thread's other clients (they get
 * BUSY, allow-busy commands run) and send their replies. running: the
 * script's caller, whose completions wait until the script is over. */
void worker_serve_while_busy(struct worker *w, struct client *running);
/* MONITOR lines of scripts (monitor.c): the script's own command before it
 * runs (caller: its connection), then each command it calls (caller NULL:
 * shown as from "lua"). */
void monitor_feed_script(struct worker *w, const struct client *caller, int db, int argc, const struct slice *argv);

/* src/msg/: transport.c (rings, doorbells), forward.c (forwarded batches), tx.c (cross-shard transactions) */

/* Whom a forwarded command runs for: its reply goes back to client idx/gen
 * of the sending thread, at position seq of its reply order. */
struct fwd_origin {
    uint32_t idx, gen, seq;
    uint16_t db;
    uint8_t resp;
    bool drop;           /* CLIENT REPLY OFF/SKIP: run it, send nothing */
    bool track;          /* client-side caching: record what it reads for the client */
    uint32_t trk_epoch;  /* ...with this tracking epoch */
    bool no_touch;       /* CLIENT NO-TOUCH */
};

/* A command to run as a cross-shard transaction on behalf of a client. */
struct tx_request {
    uint32_t idx, gen;               /* the client, on the coordinating thread */
    int db;
    uint8_t resp;
    bool drop;
    bool no_touch;                   /* CLIENT NO-TOUCH */
    const struct command *cmd;
    uint64_t mask;                   /* shards to hold */
    int argc;
    struct slice *argv;              /* copied by tx_start */
    /* CMD_BLOCKING: the command stays in the client's input until served */
    bool blocking;
    bool timed_out;                  /* the wait is over: reply the timeout reply */
    bool rerun;                      /* woken after waiting (cmd_ctx.rerun) */
    struct block_record waiter;      /* who waits if it blocks (or watches: CMD_IDENTITY) */
    size_t cmd_len;                  /* its bytes in the client's input */
    struct rbuf *block_memo;         /* the client's (cmd_ctx.block_memo) */
    struct multi_queue *exec;        /* EXEC: the queue to run (the transaction owns it) */
    bool track;                      /* client-side caching: record its reads for `reader` */
    struct block_record reader;
    /* A request of the server's own (idx UINT32_MAX: no connection): its
     * outcome goes to done(w, done_arg, ...) on the coordinating thread,
     * possibly before tx_start returns (NULL: dropped, as a save point's
     * BGSAVE). io/metrics_http.c reads INFO so. */
    void (*done)(struct worker *w, uint64_t done_arg, const struct tx_outcome *out);
    uint64_t done_arg;
};

/* What the transaction's command did. */
struct tx_outcome {
    struct rbuf reply;
    bool blocked;                    /* blocking: nothing served, wait */
    long long block_timeout_ms;
    bool rerun;                      /* a script stopped: its item runs again in a new transaction (tx.c) */
};

void xshard_send(struct worker *w, unsigned target, struct xmsg *m);
void xshard_flush(struct worker *w);
bool xshard_poll(struct worker *w);                  /* returns true if anything was processed */
bool xshard_inbox_empty(struct worker *w);
/* Bytes of reply buffers on their way back to their clients' threads (forward.c). */
size_t xshard_replies_in_flight(void);
/* publish.c: hand a message to thread `thread`'s subscribers (pubsub_send_hook) */
void publish_send(struct worker *w, unsigned thread, enum ps_kind k, struct slice channel, struct slice msg);
void xshard_teardown(struct worker *w);   /* at exit, after every thread stopped */
void tx_start(struct worker *w, const struct tx_request *req);
void forward_command(struct worker *w, unsigned target, const struct command *cmd, int argc,
                     struct slice *argv, const struct fwd_origin *o);
static inline bool shard_is_held(struct worker *w) { return w->lock_holder != NULL; }
/* Local commands on the keyspace also wait while forwarded batches wait to
 * run (held, or behind a batch cut short: forward.c), as they wait while
 * the shard is held: nothing that a later message of the batches' thread
 * prompted (a published message, a wake-up) runs before them. */
static inline bool shard_busy(struct worker *w) { return w->lock_holder != NULL || w->deferred != NULL; }
/* A running script takes shard s now, if nobody holds or queues for it,
 * without waiting in line (which could close a cycle: the script already
 * holds shards, maybe above s). Spins for the answer; whatever else arrives
 * meanwhile is kept for the loop, in order, and other scripts' requests are
 * denied. false: not free, the script must stop (or fail). */
bool tx_take_now(struct worker *w, unsigned s);
/* Give back the shards tx_take_now took (mask). */
void tx_release_taken(struct worker *w, uint64_t mask);
/* While a long script runs: answer other scripts' tx_take_now (denied) and
 * keep every other message for the loop. */
void tx_service_takes(struct worker *w);

/* What the messaging layer reports to the connection layer, through
 * functions the connection layer fills in at start (so messaging never
 * calls up into it). */
struct shard_reply { uint32_t seq, len; const char *p; };
struct msg_client_ops {
    /* the client idx/gen if still there and not closing, else NULL */
    struct client *(*live)(struct worker *w, uint32_t idx, uint32_t gen);
    /* replies to forwarded commands of client idx/gen, in request order */
    void (*replies_ready)(struct worker *w, uint32_t idx, uint32_t gen, const struct shard_reply *r, size_t n);
    /* its transaction ran (the reply is copied) */
    void (*tx_done)(struct worker *w, const struct tx_request *req, const struct tx_outcome *out);
    /* nobody holds the local shard any more: its waiting clients go on */
    void (*shard_free)(struct worker *w);
    /* XM_READY, XM_WATCH */
    void (*ready)(struct worker *w, const struct block_record *r);
    void (*watch_touched)(struct worker *w, const struct block_record *r);
    /* XM_MONITOR: lines for this thread's monitor clients */
    void (*monitor_lines)(struct worker *w, const char *p, size_t len);
    /* XM_TRACK: invalidations for this thread's tracking clients */
    void (*tracking)(struct worker *w, const char *p, size_t len);
    /* a published message for this thread's subscribers (XM_PUBLISH) */
    void (*deliver)(struct worker *w, enum ps_kind k, struct slice channel, struct slice msg);
    /* XM_SLOWLOG: a forwarded command's slow log entry for client r */
    void (*slow_entry)(struct worker *w, const struct block_record *r, struct slowlog_entry *e);
    /* every thread's clients, with the replies on their way to them and
     * `more` bytes of replies about to be, are at maxmemory-clients */
    bool (*clients_full)(const struct worker *w, size_t more);
};
extern struct msg_client_ops rk_msg_client;

/* client.c: the connection layer's side of those reports */
void client_replies_ready(struct worker *w, uint32_t idx, uint32_t gen, const struct shard_reply *r, size_t n);
void client_tx_done(struct worker *w, const struct tx_request *req, const struct tx_outcome *out);
void clients_shard_free(struct worker *w);

/* blocking.c: blocking commands, the connection side */
void client_take_ticket(struct client *c);   /* its blocking command's place in line */
void client_block(struct client *c, const struct command *cmd, long long timeout_ms, size_t cmd_len);
bool client_unblock(struct client *c, bool error);   /* CLIENT UNBLOCK; false if not blocked */
void client_unblocked(struct client *c);
void client_unlink_blocked(struct client *c);
void client_consume_pending(struct client *c, size_t len);
void client_ready(struct worker *w, const struct block_record *r);
void clients_wake_ready(struct worker *w);
long long clients_block_cron(struct worker *w);   /* returns the next deadline, or LLONG_MAX */
void block_notify(struct cmd_ctx *c, const struct block_record *r);
bool block_record_alive(struct cmd_ctx *c, const struct block_record *r, uint64_t ticket);

/* multi.c: transactions, the connection side */
void client_unwatch(struct client *c);
void client_reset_transaction(struct client *c);   /* RESET */
void watch_notify(struct cmd_ctx *c, const struct block_record *r);
void client_watch_touched(struct worker *w, const struct block_record *r);

/* client.c: reply ordering */
uint32_t client_reserve_reply(struct client *c);
void client_queue_local_reply(struct client *c, size_t start_off);
#endif
