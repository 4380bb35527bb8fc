/*
 * Dispatch: decide where a parsed command runs, and run it.
 *
 * For each request the dispatcher looks the command up, checks arity and
 * authentication, then looks at the hash slots of its keys:
 *
 *   - no keys, or every key on this thread's shard: run now;
 *   - every key on one other shard: append it to this iteration's batch for
 *     that shard (xshard.c); its reply comes back in the batch and takes its
 *     place in the client's reply order;
 *   - keys on several shards, or a command that needs every shard
 *     (CMD_ALLSHARDS): run it as a cross-shard transaction (xshard.c).
 *
 * With one thread none of the routing runs: every command is local.
 */
#include "ringkv/server.h"
#include "ringkv/slot.h"
#include "ringkv/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

static void reply_unknown_command(struct reply *r, int argc, struct slice *argv) {
    char args[300];
    size_t n = 0;
    args[0] = '\0';
    for (int i = 1; i < argc && n < 128; i++) {
        int room = 128 - (int)n;
        int w = snprintf(args + n, sizeof args - n, "'%.*s' ",
                         (int)(argv[i].len < (size_t)room ? argv[i].len : (size_t)room), argv[i].ptr);
        if (w < 0) break;
        n += (size_t)w;
        if (n >= sizeof args) { n = sizeof args - 1; break; }
    }
    reply_errorf(r, "ERR unknown command '%.*s', with args beginning with: %s",
                 (int)(argv[0].len > 128 ? 128 : argv[0].len), argv[0].ptr, args);
}

void reply_wrong_arity(struct reply *r, const char *name) {
    reply_errorf(r, "ERR wrong number of arguments for '%s' command", name);
}

/* Forwarded commands a client may have out before it waits for replies:
 * bounds the replies that can pile up for a client that does not read. */
#define MAX_INFLIGHT 128

static bool arity_ok(const struct command *cmd, int argc) {
    return cmd->arity > 0 ? argc == cmd->arity : argc >= -cmd->arity;
}

/* Shards of movable keys: the command's keys_fn says where they are. */
static uint64_t movable_key_shards(const struct command *cmd, int argc, const struct slice *argv) {
    int small[64];
    int *pos = argc <= 64 ? small : rk_malloc((size_t)argc * sizeof *pos);
    int n = cmd->keys_fn(argc, argv, pos, argc);
    uint64_t mask = 0;
    for (int i = 0; i < n; i++)
        mask |= 1ull << shard_of_key(argv[pos[i]].ptr, argv[pos[i]].len);
    if (pos != small) free(pos);
    return mask;
}

/* Bit mask of the shards owning the command's keys (0 when keyless). */
/* argv1_shard: the shard of argv[1] when the caller already knows it, or -1. */
static uint64_t key_shards(const struct command *cmd, int argc, const struct slice *argv, int argv1_shard) {
    if (RK_UNLIKELY(cmd->keys_fn)) return movable_key_shards(cmd, argc, argv);
    if (cmd->first_key == 0 || argc <= cmd->first_key) return 0;
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    if (last >= argc) last = argc - 1;
    uint64_t mask = 0;
    for (int i = cmd->first_key; i <= last; i += cmd->key_step) {
        unsigned shard = i == 1 && argv1_shard >= 0 ? (unsigned)argv1_shard
                                                    : shard_of_key(argv[i].ptr, argv[i].len);
        mask |= 1ull << shard;
    }
    return mask;
}

void ctx_init(struct cmd_ctx *ctx, struct worker *w, const struct command *cmd,
              int argc, struct slice *argv, int db, uint8_t resp, struct rbuf *out) {
    ctx->argc = argc;
    ctx->argv = argv;
    ctx->cmd = cmd;
    ctx->r.out = out;
    ctx->r.resp = resp;
    ctx->db = db;
    ctx->multi = false;
    ctx->shard = &w->shard;
    ctx->shards = srv.shard_ptrs;
    ctx->nshards = srv.nworkers;
    ctx->client = NULL;
    ctx->worker = w;
    ctx->now_ms = w->now_ms;
    ctx->parts = NULL;
    ctx->block = false;
    ctx->timed_out = false;
    ctx->block_timeout_ms = 0;
}

void ctx_block_on(struct cmd_ctx *c, struct slice key) {
    struct client *cl = c->client;
    struct block_record r = { cl->w->id, cl->idx, cl->gen, cl->block_seq };
    db_block_on(c, key, &r);
    c->block = true;
}

/* Run on this thread, the reply taking its place in request order (or
 * dropped, under CLIENT REPLY OFF/SKIP). A blocking command that found
 * nothing to serve leaves no reply and makes the client wait: false. */
static bool run_local(struct client *c, const struct command *cmd, int argc, struct slice *argv, bool drop) {
    bool queued = client_replies_queued(c);
    struct rbuf *out = queued ? &c->rq->bytes : &c->out;
    size_t start = out->len;
    struct cmd_ctx ctx;
    ctx_init(&ctx, c->w, cmd, argc, argv, c->db, c->resp, out);
    ctx.client = c;
    ctx.timed_out = c->block_timed_out;
    cmd->proc(&ctx);
    if (RK_UNLIKELY(ctx.block)) {
        out->len = start;
        client_block(c, ctx.block_timeout_ms);
        return false;
    }
    if (drop) out->len = start;
    else if (queued) client_queue_local_reply(c, start);
    client_mark_flush(c);
    return true;
}

/*
 * Blocking commands run with all their keys held and are never forwarded:
 * locally, or as a transaction that leaves the command in the client's
 * input until it is served. Each attempt has its own sequence number, so
 * waiter records of an earlier attempt are recognised as stale.
 */
static enum dispatch_result dispatch_blocking(struct client *c, const struct command *cmd, int argc,
                                              struct slice *argv, uint64_t mask, bool drop) {
    struct worker *w = c->w;
    if (c->inflight) {
        c->wait = WAIT_FORWARDS;
        return DISPATCH_WAIT;
    }
    c->block_seq++;
    if (mask == 0 || mask == 1ull << w->id) {
        if (shard_is_held(w)) {
            client_wait_on_shard(c);
            return DISPATCH_WAIT;
        }
        if (!run_local(c, cmd, argc, argv, drop)) return DISPATCH_WAIT;
        client_unblocked(c);
        return DISPATCH_DONE;
    }
    tx_start_blocking(c, cmd, mask, argc, argv, drop);
    return DISPATCH_WAIT;
}

/* Errors found before a command runs still take their turn in reply order. */
static struct reply early_reply(struct client *c, size_t *start, bool *queued) {
    *queued = client_replies_queued(c);
    struct rbuf *out = *queued ? &c->rq->bytes : &c->out;
    *start = out->len;
    return (struct reply){ out, c->resp };
}

static void early_done(struct client *c, size_t start, bool queued) {
    if (c->reply_off || c->reply_skip) {
        (queued ? &c->rq->bytes : &c->out)->len = start;
        c->reply_skip = 0;
    } else if (queued) client_queue_local_reply(c, start);
    client_mark_flush(c);
}

enum dispatch_result dispatch_command(struct client *c, int argc, struct slice *argv, int argv1_shard) {
    struct worker *w = c->w;
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    if (cmd && cmd->subcommands && argc >= 2) {
        const struct command *sub = command_lookup_sub(cmd, argv[1]);
        if (!sub && (c->flags & CF_AUTHED)) {
            size_t start;
            bool queued;
            struct reply r = early_reply(c, &start, &queued);
            char parent[32];
            size_t i = 0;
            for (; cmd->name[i] && i < sizeof parent - 1; i++) parent[i] = (char)toupper((unsigned char)cmd->name[i]);
            parent[i] = '\0';
            reply_errorf(&r, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                         (int)(argv[1].len > 128 ? 128 : argv[1].len), argv[1].ptr, parent);
            early_done(c, start, queued);
            return DISPATCH_DONE;
        }
        if (sub) cmd = sub;
    }
    if (RK_UNLIKELY(!cmd || !arity_ok(cmd, argc) || (!(c->flags & CF_AUTHED) && !(cmd->flags & CMD_NOAUTH)))) {
        size_t start;
        bool queued;
        struct reply r = early_reply(c, &start, &queued);
        if (!cmd) reply_unknown_command(&r, argc, argv);
        else if (!(c->flags & CF_AUTHED) && !(cmd->flags & CMD_NOAUTH)) reply_error(&r, ERR_NOAUTH);
        else reply_wrong_arity(&r, cmd->name);
        early_done(c, start, queued);
        return DISPATCH_DONE;
    }
    w->stats.commands++;
    c->last_cmd = cmd->name;
    c->last_ms = w->now_ms;
    /* CLIENT REPLY itself decides whether it answers */
    bool drop = (c->reply_off || c->reply_skip) && strcmp(cmd->name, "client|reply") != 0;
    c->reply_skip = 0;

    uint64_t self = 1ull << w->id;
    uint64_t mask;
    if (cmd->flags & CMD_ALLSHARDS) {
        mask = srv.nworkers == 64 ? ~0ull : (1ull << srv.nworkers) - 1;
        /* One thread and nothing to gather per thread: just run it. */
        if (mask == self && !cmd->per_shard) mask = 0;
    } else {
        mask = srv.nworkers == 1 ? 0 : key_shards(cmd, argc, argv, argv1_shard);
    }
    bool keyspace = mask != 0 || (cmd->flags & CMD_ALLSHARDS);
    if (RK_UNLIKELY(cmd->flags & CMD_BLOCKING)) return dispatch_blocking(c, cmd, argc, argv, mask, drop);

    if (mask == 0 || (mask == self && !cmd->per_shard)) {
        if (keyspace && shard_is_held(w)) {
            /* a transaction holds the local shard: wait for it */
            if (drop && !c->reply_off) c->reply_skip = 1;   /* not run yet: skip it when it does */
            client_wait_on_shard(c);
            return DISPATCH_WAIT;
        }
        run_local(c, cmd, argc, argv, drop);
        return DISPATCH_DONE;
    }
    if ((mask & (mask - 1)) == 0 && !(cmd->flags & CMD_ALLSHARDS)) {
        forward_command(c, (unsigned)__builtin_ctzll(mask), cmd, argc, argv, drop);
        /* bound the replies a client can have coming back at once */
        if (c->inflight >= MAX_INFLIGHT) c->wait = WAIT_FORWARDS;
        return DISPATCH_DONE;
    }
    /* A transaction must not overtake this client's commands still out on
     * other shards: wait for their replies first. */
    if (c->inflight) {
        c->wait = WAIT_FORWARDS;
        if (drop && !c->reply_off) c->reply_skip = 1;   /* not run yet: skip it when it does */
        return DISPATCH_WAIT;
    }
    tx_start(c, cmd, mask, argc, argv, drop);
    return DISPATCH_DONE;
}
