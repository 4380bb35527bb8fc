/*
 * MULTI/EXEC: the queue of a transaction and its execution (exec.c).
 *
 * Commands sent after MULTI are checked (lookup, arity) and queued with
 * their own copy of the arguments and the shards they touch. EXEC runs the
 * whole queue at once where every one of those shards (and the shards of
 * the WATCHed keys) is held: on the client's thread alone, or as one
 * cross-shard transaction. The client state (the queue, the watch epoch)
 * is the connection layer's (io/multi.c).
 */
#ifndef RINGKV_MULTI_H
#define RINGKV_MULTI_H

#include "ringkv/command.h"
#include "ringkv/db.h"

struct worker;
struct tx_request;

struct queued_cmd {
    const struct command *cmd;
    int argc;
    struct slice *argv;          /* one allocation with the argument bytes */
};

struct multi_queue {
    struct queued_cmd *cmds;
    size_t n, cap;
    size_t mem;                  /* bytes of the queued commands' argument copies */
    uint64_t mask;               /* shards the queued commands touch */
    bool keyspace;               /* some command touches the keyspace */
    bool aborted;                /* a command was refused while queueing: EXECABORT */
    bool denyoom;                /* a queued command is deny-oom: EXEC is refused over maxmemory */
    int fwd;                     /* every queued command was forwardable (ROUTE_FORWARD)
                                  * to one other shard: its id + 1; -1: not; 0: none queued */
    bool plain;                  /* every queued command could run forwarded alone: it has
                                  * keys, is not ALLSHARDS, blocking or identity, has no
                                  * per_shard hook (it needs nothing of the connection) */
    /* set by EXEC when it answers into reply position reply_seq
     * (tx_start_exec): go_on tells the connection layer that the client,
     * which waited, may go on */
    bool by_seq;
    uint32_t reply_seq;
    void (*go_on)(struct worker *w, uint32_t idx, uint32_t gen);
    /* set by EXEC: the client's watched keys (as client.watched_keys) and
     * its identity, to fail on a key that expired since it was watched */
    struct rbuf watched;
    struct block_record watcher;
};

void multi_queue_add(struct multi_queue *q, const struct command *cmd, int argc,
                     const struct slice *argv, uint64_t mask, bool keyspace);
void multi_queue_free(struct multi_queue *q);
/* Command i may no longer run (its user's rules changed since MULTI):
 * EXEC answers -NOPERM with reason (static text) in its place. */
void multi_queue_deny(struct multi_queue *q, size_t i, const char *reason);
bool multi_queue_denied(const struct multi_queue *q, size_t i);

/* EXEC's body, under ctx (its client, db and protocol; every shard the queue
 * touches held): a null array when a watched key was touched (dirty) or
 * has expired since it was watched, else each command's reply in one
 * array. Blocking commands do not block. */
void exec_queued(struct cmd_ctx *ctx, const struct multi_queue *q, bool dirty);

/* EXEC of a queue whose commands all live on one other shard, with nothing
 * watched: the queue travels as one forwarded command (exec_forward_argv
 * lays it out; the owner runs it like exec_queued, without the watch
 * check). argv must have room for exec_forward_argc(q) slices, blob for
 * q->n * EXEC_FWD_DESC bytes. */
#define EXEC_FWD_DESC (sizeof(const struct command *) + sizeof(uint32_t))
int exec_forward_argc(const struct multi_queue *q);
void exec_forward_argv(const struct multi_queue *q, struct slice *argv, char *blob);
extern const struct command exec_forwarded_command;

/* EXEC of a plain queue over shards of other threads, nothing watched, run
 * as a cross-shard transaction that answers into the client's reply order
 * (req->exec->by_seq, reply_seq and go_on set, the position reserved and
 * counted in the client's inflight). tx_start_exec starts it, or has it
 * join the transaction this thread is assembling. True: the client may go
 * on with its next commands at once (every shard the transaction needs is
 * asked for, so they run after it; see msg/tx.c). False: it must wait,
 * until tx.c calls go_on (every shard asked for by then) or the reply is
 * back. tx_exec_may_follow: with `inflight` replies still out, may the
 * client start such an EXEC over mask now (all of them are EXECs of the
 * transaction it would join), or must it wait for them first. */
bool tx_start_exec(struct worker *w, const struct tx_request *req);
bool tx_exec_may_follow(struct worker *w, uint32_t idx, uint32_t gen, uint32_t inflight, uint64_t mask);

#endif
