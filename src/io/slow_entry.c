/*
 * A slow command's log entry gets its client (slowlog.h). The address and
 * name belong to the connection and are read on its thread. A command run
 * on its client's thread completes its entry at once. A forwarded
 * command's entry travels to the client's thread (XM_SLOWLOG) on the ring
 * its reply takes after it, so it is in the log before the reply reaches
 * the client.
 */
#include "ringkv/server.h"
#include "ringkv/slowlog.h"
#include "ringkv/util.h"

#include "io_internal.h"

void client_slow_entry(struct cmd_ctx *ctx, struct slowlog_entry *e) {
    if (ctx->client) {
        slowlog_entry_set_client(e, client_addr(ctx->client), client_name(ctx->client));
    } else if (ctx->worker && ctx->origin_worker < srv.nworkers && ctx->origin_worker != ctx->worker->id) {
        struct xmsg *m = rk_calloc(1, sizeof *m);
        m->type = XM_SLOWLOG;
        m->from = (uint8_t)ctx->worker->id;
        m->ready = (struct block_record){ ctx->origin_worker, ctx->origin_idx, ctx->origin_gen, 0 };
        m->slow = e;
        xshard_send(ctx->worker, ctx->origin_worker, m);
        return;
    }
    slowlog_push(e);
}

/* XM_SLOWLOG: the client may have gone meanwhile (then no address, as
 * for a command run on nobody's behalf). */
void client_slow_entry_in(struct worker *w, const struct block_record *r, struct slowlog_entry *e) {
    struct client *c = client_live(w, r->idx, r->gen);
    if (c) slowlog_entry_set_client(e, client_addr(c), client_name(c));
    slowlog_push(e);
}
