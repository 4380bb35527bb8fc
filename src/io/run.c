/*
 * Running one command for a client, once the router has chosen where: on
 * this thread (client_run_local), or as a cross-shard transaction
 * (client_start_tx). client.c acts on the router's verdict with these, and
 * MULTI (multi.c) runs EXEC with them. A blocking command that found
 * nothing to serve makes the client wait (blocking.c).
 */
#include "ringkv/server.h"
#include "ringkv/multi.h"

#include "io_internal.h"

/* The identity a blocking command (or WATCH) registers on its keys: the
 * attempt (or watch epoch) tells a stale record from a live one. */
static struct block_record identity_of(const struct client *c, const struct command *cmd) {
    uint32_t seq = (cmd->flags & CMD_BLOCKING) ? c->block_seq : c->watch_seq;
    return (struct block_record){ c->w->id, c->idx, c->gen, seq };
}

/* Run on this thread. A blocking command that found nothing to serve
 * leaves no reply and makes the client wait, and a script that stopped for
 * a shard it could not take runs again from the client's input, routed
 * anew with the shards it now knows it needs (WAIT_RERUN): false. */
bool client_run_local(struct client *c, const struct command *cmd, int argc, struct slice *argv, bool drop) {
    bool queued;
    struct rbuf *out = client_reply_target(c, &queued);
    size_t start = out->len;
    struct cmd_ctx ctx;
    ctx_init(&ctx, c->w, cmd, argc, argv, c->db, c->resp, out);
    ctx.client = c;
    ctx.reader = c->trk_reader;
    ctx.no_touch = c->flags & CF_NO_TOUCH;
    struct block_record self;
    if (RK_UNLIKELY(cmd->flags & (CMD_BLOCKING | CMD_IDENTITY))) {
        self = identity_of(c, cmd);
        ctx.waiter = &self;
        struct client_rare *x = client_rare(c);
        ctx.timed_out = x->block_timed_out;
        ctx.rerun = x->block_deadline_ms != 0;
        ctx.block_memo = &x->block_memo;
    }
    ctx.may_rerun = cmd->flags & CMD_SCRIPT;
    command_call(&ctx);
    if (RK_UNLIKELY(ctx.block)) {
        out->len = start;
        client_block(c, cmd, ctx.block_timeout_ms, c->cur_cmd_len);
        return false;
    }
    if (RK_UNLIKELY(ctx.rerun_mask)) {
        out->len = start;
        c->wait = WAIT_RERUN;
        client_schedule_resume(c);
        return false;
    }
    client_reply_written(c, out, start, queued, drop);
    return true;
}

void client_start_tx(struct client *c, const struct command *cmd, uint64_t mask, int argc,
                     struct slice *argv, bool drop, struct multi_queue *exec) {
    struct tx_request req = {
        .idx = c->idx, .gen = c->gen, .db = c->db, .resp = c->resp, .drop = drop, .no_touch = (c->flags & CF_NO_TOUCH) != 0,
        .cmd = cmd, .mask = mask, .argc = argc, .argv = argv, .exec = exec,
        .track = c->trk_reader != NULL, .reader = { c->w->id, c->idx, c->gen, c->trk_epoch },
    };
    if (cmd->flags & (CMD_BLOCKING | CMD_IDENTITY)) req.waiter = identity_of(c, cmd);
    if (cmd->flags & CMD_BLOCKING) {
        req.blocking = true;
        struct client_rare *x = client_rare(c);
        req.timed_out = x->block_timed_out;
        req.rerun = x->block_deadline_ms != 0;
        req.cmd_len = c->cur_cmd_len;
        req.block_memo = &x->block_memo;
    }
    c->wait = WAIT_TX;
    tx_start(c->w, &req);
}
