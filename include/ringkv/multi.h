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

struct queued_cmd {
    const struct command *cmd;
    int argc;
    struct slice *argv;          /* one allocation with the argument bytes */
};

struct multi_queue {
    struct queued_cmd *cmds;
    size_t n, cap;
    uint64_t mask;               /* shards the queued commands touch */
    bool keyspace;               /* some command touches the keyspace */
    bool aborted;                /* a command was refused while queueing: EXECABORT */
    /* set by EXEC: the client's watched keys (as client.watched_keys) and
     * its identity, to fail on a key that expired since it was watched */
    struct rbuf watched;
    struct block_record watcher;
};

void multi_queue_add(struct multi_queue *q, const struct command *cmd, int argc,
                     const struct slice *argv, uint64_t mask, bool keyspace);
void multi_queue_free(struct multi_queue *q);

/* EXEC's body, under ctx (its client, db and protocol; every shard the queue
 * touches held): a null array when a watched key was touched (dirty) or
 * has expired since it was watched, else each command's reply in one
 * array. Blocking commands do not block. */
void exec_queued(struct cmd_ctx *ctx, const struct multi_queue *q, bool dirty);

#endif
