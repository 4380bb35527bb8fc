/*
 * Dispatch: the router. For one parsed request it decides what happens,
 * without touching any connection state:
 *
 *   - the command does not exist, its arity is wrong, or the connection is
 *     not authenticated: an error, whose text dispatch_reply_error writes;
 *   - no keys, or every key on this thread's shard: run here (ROUTE_LOCAL);
 *   - every key on one other shard: forward it there (ROUTE_FORWARD);
 *   - keys on several shards, or a command that needs every shard
 *     (CMD_ALLSHARDS, or a per_shard hook): a cross-shard transaction
 *     (ROUTE_TX).
 *
 * Blocking commands and WATCH are never forwarded: they run where all their
 * keys are held, locally or as a transaction, with the client's identity.
 * Nor are scripts (CMD_SCRIPT): they hold the shards of their declared keys
 * and those their caller says they use (route_env.script_mask), and one
 * without keys holds this thread's shard. The connection layer (client.c) acts
 * on the verdict. With one thread every command routes locally, except those
 * with a per_shard hook (CLIENT LIST/KILL), which take the transaction path
 * to run it.
 */
#include "ringkv/dispatch.h"
#include "ringkv/config.h"
#include "ringkv/snapshot.h"
#include "ringkv/db.h"
#include "ringkv/slot.h"
#include "ringkv/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Bit mask of the shards owning the command's keys (0 when keyless).
 * argv1_shard: the shard of argv[1] when the caller already knows it, or -1. */
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

static uint64_t all_shards(unsigned n) {
    return n == 64 ? ~0ull : (1ull << n) - 1;
}

/* While loading, only commands flagged for it run (Redis's CMD_LOADING);
 * after a failed BGSAVE with save points and stop-writes-on-bgsave-error,
 * writes and PING are refused, as Redis's writeCommandsDeniedByDiskError. */
static bool gate_refuses(struct route *rt, const struct command *cmd) {
    unsigned gate = atomic_load_explicit(&rk_persist.gate, memory_order_acquire);
    /* a load writes the tables: of what reads them, only INFO's counters may run */
    if ((gate & PERSIST_GATE_LOADING) &&
        (!(cmd->flags & CMD_LOADING) || ((cmd->flags & CMD_ALLSHARDS) && cmd->proc != cmd_info))) {
        rt->kind = ROUTE_LOADING;
        return true;
    }
    if ((gate & PERSIST_GATE_BGSAVE_FAILED) && ((cmd->flags & CMD_WRITE) || cmd->proc == cmd_ping) &&
        CONFIG_GET(stop_writes_on_bgsave_error) && *config_save_points()) {
        rt->kind = ROUTE_MISCONF;
        return true;
    }
    return false;
}

void dispatch_route(struct route *rt, int argc, const struct slice *argv, bool authed,
                    const struct route_env *env, int argv1_shard) {
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    rt->cmd = cmd;
    rt->mask = 0;
    rt->keyspace = false;
    if (RK_UNLIKELY(!cmd)) { rt->kind = ROUTE_UNKNOWN; return; }
    if (cmd->subcommands && argc >= 2) {
        const struct command *sub = command_lookup_sub(cmd, argv[1]);
        if (!sub && authed) { rt->kind = ROUTE_UNKNOWN_SUB; return; }
        if (sub) rt->cmd = cmd = sub;
    }
    if (RK_UNLIKELY(!authed && !(cmd->flags & CMD_NOAUTH))) { rt->kind = ROUTE_NOAUTH; return; }
    if (RK_UNLIKELY(!arity_ok(cmd, argc))) { rt->kind = ROUTE_ARITY; return; }
    if (RK_UNLIKELY(atomic_load_explicit(&rk_persist.gate, memory_order_acquire)) && gate_refuses(rt, cmd)) return;

    uint64_t self = 1ull << env->self;
    uint64_t mask;
    bool allshards = cmd->flags & CMD_ALLSHARDS;
    /* SHUTDOWN saves holding every shard, but NOSAVE (or ABORT) must not
     * wait for shards a busy script holds: it is what stops it. */
    if (RK_UNLIKELY(allshards && (cmd->flags & CMD_ALLOW_BUSY)) && argc >= 2 &&
        (slice_eq_nocase(argv[1], "nosave") || slice_eq_nocase(argv[1], "abort") ||
         (argc >= 3 && slice_eq_nocase(argv[2], "nosave"))))
        allshards = false;
    if (allshards) {
        mask = all_shards(env->nshards);
        /* One thread and nothing to gather per thread: just run it. */
        if (mask == self && !cmd->per_shard) mask = 0;
    } else {
        mask = env->nshards == 1 ? 0 : key_shards(cmd, argc, argv, argv1_shard);
        if (RK_UNLIKELY(cmd->flags & CMD_SCRIPT) && env->nshards > 1) {
            if (env->script_mask) mask |= env->script_mask(env->scripts, cmd, argc, argv);
            if (mask == 0) mask = self;   /* no keys: its own shard, held */
        }
    }
    rt->mask = mask;
    rt->keyspace = mask != 0 || allshards;
    if (mask == 0 || (mask == self && !cmd->per_shard)) {
        rt->kind = ROUTE_LOCAL;
    } else if ((mask & (mask - 1)) == 0 && !(cmd->flags & (CMD_ALLSHARDS | CMD_BLOCKING | CMD_IDENTITY | CMD_SCRIPT))) {
        rt->kind = ROUTE_FORWARD;
        rt->target = (unsigned)__builtin_ctzll(mask);
    } else {
        rt->kind = ROUTE_TX;
    }
}

static void reply_unknown_command(struct reply *r, int argc, const struct slice *argv) {
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

static void reply_unknown_subcommand(struct reply *r, const struct command *parent, const struct slice *argv) {
    char name[32];
    size_t i = 0;
    for (; parent->name[i] && i < sizeof name - 1; i++) name[i] = (char)toupper((unsigned char)parent->name[i]);
    name[i] = '\0';
    reply_errorf(r, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                 (int)(argv[1].len > 128 ? 128 : argv[1].len), argv[1].ptr, name);
}

void dispatch_reply_error(struct reply *r, const struct route *rt, int argc, const struct slice *argv) {
    if (rt->kind == ROUTE_NOAUTH || rt->kind == ROUTE_ARITY) command_rejected(rt->cmd);   /* INFO rejected_calls */
    switch (rt->kind) {
    case ROUTE_UNKNOWN: reply_unknown_command(r, argc, argv); break;
    case ROUTE_UNKNOWN_SUB: reply_unknown_subcommand(r, rt->cmd, argv); break;
    case ROUTE_NOAUTH: reply_error(r, ERR_NOAUTH); break;
    case ROUTE_ARITY: reply_wrong_arity(r, rt->cmd->name); break;
    case ROUTE_LOADING: reply_error(r, "LOADING Redis is loading the dataset in memory"); break;
    case ROUTE_MISCONF:
        reply_error(r, "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
                       "disk. Commands that may modify the data set are disabled, because this instance is "
                       "configured to report errors during writes if RDB snapshotting fails "
                       "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
                       "RDB error.");
        break;
    default: break;
    }
}
