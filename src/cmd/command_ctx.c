/*
 * The context a command handler runs in: its arguments, the reply writer,
 * the executing shard and clock, and for blocking commands the identity to
 * register if it has to wait. Built the same way by every caller: the
 * connection's thread, a forwarded batch, or a transaction's coordinator.
 */
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdlib.h>

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
    ctx->dirty = 0;
    ctx->parts = NULL;
    ctx->held = 0;
    ctx->may_rerun = false;
    ctx->rerun_mask = 0;
    ctx->waiter = NULL;
    ctx->reader = NULL;
    ctx->no_touch = false;
    ctx->origin_worker = UINT32_MAX;
    ctx->block = false;
    ctx->timed_out = false;
    ctx->rerun = false;
    ctx->block_timeout_ms = 0;
    ctx->block_memo = NULL;
    ctx->block_every = false;
    ctx->in_script = false;
}


/* A write command changed something: clients blocked on its keys are
 * woken (they run their command again and wait on if it finds nothing);
 * SWAPDB wakes the waiters of both databases, FLUSHDB and FLUSHALL those
 * of what they emptied. WATCH is not told here but
 * by each change as it happens (db_changed), so only keys that really
 * changed are touched. */
static void wrote_key(struct cmd_ctx *c, int db, struct slice key) {
    int saved = c->db;
    c->db = db;
    db_signal_ready(c, key);
    c->db = saved;
}

void ctx_count_dirty(struct cmd_ctx *c) {
    long long *d = &c->shard->stats.dirty;
    __atomic_store_n(d, *d + c->dirty, __ATOMIC_RELAXED);
}

void ctx_wrote_slow(struct cmd_ctx *c) {
    const struct command *cmd = c->cmd;
    if (cmd->proc == cmd_flushall || cmd->proc == cmd_flushdb) {
        /* nothing left to serve, but XREADGROUP learns its stream went */
        if (cmd->proc == cmd_flushdb) db_signal_ready_db(c, c->db);
        else
            for (unsigned d = 0; d < c->shard->ndb; d++) db_signal_ready_db(c, (int)d);
        return;
    }
    if (cmd->proc == cmd_swapdb) {
        long long a, b;
        if (c->argc == 3 && str_to_ll(c->argv[1].ptr, c->argv[1].len, &a) &&
            str_to_ll(c->argv[2].ptr, c->argv[2].len, &b) && a >= 0 && b >= 0 &&
            a < (long long)c->shard->ndb && b < (long long)c->shard->ndb) {
            db_signal_ready_db(c, (int)a);
            db_signal_ready_db(c, (int)b);
        }
        return;
    }
    int small[16];
    int *pos = c->argc <= 16 ? small : rk_malloc((size_t)c->argc * sizeof *pos);
    int n = command_key_positions(cmd, c->argc, c->argv, pos, c->argc);
    for (int i = 0; i < n; i++) wrote_key(c, c->db, c->argv[pos[i]]);
    if ((cmd->proc == cmd_move && c->argc == 3) || cmd->proc == cmd_copy) {
        /* the key also changed in the database MOVE or COPY ... DB wrote it to */
        long long to = -1;
        if (cmd->proc == cmd_move) str_to_ll(c->argv[2].ptr, c->argv[2].len, &to);
        for (int i = 3; cmd->proc == cmd_copy && i + 1 < c->argc; i++)
            if (slice_eq_nocase(c->argv[i], "db")) str_to_ll(c->argv[i + 1].ptr, c->argv[i + 1].len, &to);
        if (to >= 0 && to < (long long)c->shard->ndb)
            wrote_key(c, (int)to, c->argv[cmd->proc == cmd_move ? 1 : 2]);
    }
    if (pos != small) free(pos);
}

/* A blocking command ran to its end with the client's identity (served,
 * timed out, or an error): the client no longer waits on its keys, and
 * where it was first in line the next waiter gets its turn (db.h). */
void ctx_served(struct cmd_ctx *c) {
    int small[16];
    int *pos = c->argc <= 16 ? small : rk_malloc((size_t)c->argc * sizeof *pos);
    int n = command_key_positions(c->cmd, c->argc, c->argv, pos, c->argc);
    for (int i = 0; i < n; i++) db_waiter_served(c, c->argv[pos[i]], c->waiter);
    if (pos != small) free(pos);
}
