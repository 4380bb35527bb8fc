/*
 * The ACL gate of the connection layer (acl.h): a command the client's
 * user may not run is answered with Redis's NOPERM error and recorded in
 * the ACL log with the client's CLIENT LIST line, before it is routed
 * (so forwarded commands and transactions are checked on the client's
 * thread), and again at EXEC for the commands MULTI queued, since the
 * rules may have changed meanwhile.
 */
#include "ringkv/acl.h"
#include "ringkv/command_stats.h"
#include "ringkv/server.h"

#include "io_internal.h"

/* Record a denial in the ACL log with c's CLIENT LIST line, as c's user
 * (username.ptr NULL) or as the user named (a failed AUTH). */
void client_acl_log(struct client *c, enum acl_verdict v, enum acl_context ctx, struct slice object,
                    struct slice username) {
    struct rbuf info = { 0 };
    rk_conn_ops.info_line(c, true, &info, c->w->now_ms);   /* client.c's, above this file */
    if (info.len) info.buf[--info.len] = '\0';   /* the newline */
    if (!username.ptr) username = (struct slice){ c->user->name, c->user->namelen };
    acl_log_add(v, ctx, object, username, info.buf ? info.buf : "",
                c->w->now_ms);
    rbuf_free(&info);
}

/* Whether c's user may not run this (acl.h): the denial is logged and
 * answered as Redis's processCommand does; inside MULTI, EXEC will then
 * answer EXECABORT. A connection whose user was deleted is closed. */
/* EXEC checks what MULTI queued again: the rules may have changed since. */
void client_acl_recheck_queue(struct client *c, struct multi_queue *q) {
    for (size_t i = 0; i < q->n; i++) {
        if (multi_queue_denied(q, i)) continue;   /* checked by an EXEC that then waited */
        const struct queued_cmd *qc = &q->cmds[i];
        int pos;
        enum acl_verdict v = acl_check(c->user, qc->cmd, qc->argc, qc->argv, &pos);
        if (v == ACL_OK) continue;
        client_acl_log(c, v, ACL_CTX_MULTI, acl_denied_object(v, qc->cmd, qc->argv, pos), (struct slice){ 0 });
        multi_queue_deny(q, i, acl_denial_reason_exec(v));
    }
}

bool client_acl_refuses(struct client *c, const struct command *cmd, int argc, struct slice *argv) {
    int pos;
    enum acl_verdict v = acl_check(c->user, cmd, argc, argv, &pos);
    if (RK_LIKELY(v == ACL_OK)) return false;
    if (acl_user_gone(c->user)) {
        client_close_asap(c);
        return true;
    }
    client_acl_log(c, v, c->multi ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, acl_denied_object(v, cmd, argv, pos),
                   (struct slice){ 0 });
    if (c->multi) c->multi->aborted = true;
    command_rejected(cmd);
    bool queued;
    struct rbuf *out = client_reply_target(c, &queued);
    size_t start = out->len;
    struct reply r = { out, c->resp };
    acl_reply_denied(&r, v, cmd);
    client_reply_written(c, out, start, queued, c->reply_off || c->reply_skip);
    c->reply_skip = 0;
    return true;
}

