/*
 * The router: where a parsed command runs (dispatch.c). It reads the
 * command table and the keys' hash slots and returns a verdict; it never
 * touches a connection. The connection layer acts on the verdict.
 */
#ifndef RINGKV_DISPATCH_H
#define RINGKV_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "ringkv/command.h"
#include "ringkv/reply.h"

enum route_kind {
    ROUTE_LOCAL,         /* keyless, or every key on this shard: run here */
    ROUTE_FORWARD,       /* every key on shard `target` */
    ROUTE_TX,            /* the shards in `mask`, as a cross-shard transaction */
    /* errors found before the command runs (dispatch_reply_error) */
    ROUTE_UNKNOWN,       /* no such command */
    ROUTE_UNKNOWN_SUB,   /* a container without that subcommand */
    ROUTE_NOAUTH,        /* not authenticated */
    ROUTE_ARITY,         /* wrong number of arguments */
    ROUTE_LOADING,       /* the dataset is still loading */
    ROUTE_MISCONF,       /* a write while the last BGSAVE failed (stop-writes-on-bgsave-error) */
};

struct route {
    enum route_kind kind;
    const struct command *cmd;   /* the subcommand for containers; NULL when unknown */
    uint64_t mask;               /* shards owning the keys (every shard for CMD_ALLSHARDS) */
    unsigned target;             /* ROUTE_FORWARD */
    bool keyspace;               /* touches the keyspace: waits while the local shard is held */
};

/* Where the router stands: this thread's shard, how many there are, and
 * what its caller knows of scripts: script_mask (NULL: nothing) gives the
 * shards a script (CMD_SCRIPT) is known to use beyond its declared keys,
 * from scripts (the scripting host's learned masks, script_host.h). */
struct route_env {
    unsigned self, nshards;
    uint64_t (*script_mask)(const void *scripts, const struct command *cmd, int argc, const struct slice *argv);
    const void *scripts;
};

static inline bool route_is_error(const struct route *rt) { return rt->kind >= ROUTE_UNKNOWN; }

/* Route argv[0..argc). authed: the connection may run commands without
 * CMD_NOAUTH. argv1_shard: the shard owning argv[1] when the caller has
 * computed it already (the parse loop does, to prefetch only local keys),
 * or -1. */
void dispatch_route(struct route *rt, int argc, const struct slice *argv, bool authed,
                    const struct route_env *env, int argv1_shard);
/* The error reply of a route whose kind is an error. */
void dispatch_reply_error(struct reply *r, const struct route *rt, int argc, const struct slice *argv);

#endif
