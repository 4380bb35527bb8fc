/*
 * The context a command handler runs in: its arguments, the reply writer,
 * the executing shard and clock, and for blocking commands the identity to
 * register if it has to wait. Built the same way by every caller: the
 * connection's thread, a forwarded batch, or a transaction's coordinator.
 */
#include "ringkv/server.h"

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
    ctx->waiter = NULL;
    ctx->block = false;
    ctx->timed_out = false;
    ctx->block_timeout_ms = 0;
}

/* Without a waiter identity (a command run for nobody) the command still
 * reports that it would block, and nothing is registered. */
void ctx_block_on(struct cmd_ctx *c, struct slice key) {
    if (c->waiter) db_block_on(c, key, c->waiter);
    c->block = true;
}
