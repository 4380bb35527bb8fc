/*
 * MULTI/EXEC: the queue and its execution (see multi.h). Each queued
 * command runs as it would alone, with the same context (so with every
 * shard it needs held, a multi-shard EXEC routes keys by slot), except that
 * a blocking command that finds nothing replies its timeout reply at once,
 * as Redis's blocking commands do inside MULTI. SELECT inside the
 * transaction changes the database of the commands after it.
 */
#include "ringkv/aof.h"
#include "ringkv/multi.h"
#include "ringkv/server.h"
#include "ringkv/watch.h"

#include <stdlib.h>
#include <string.h>

void multi_queue_add(struct multi_queue *q, const struct command *cmd, int argc,
                     const struct slice *argv, uint64_t mask, bool keyspace) {
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 8;
        q->cmds = rk_realloc(q->cmds, q->cap * sizeof *q->cmds);
    }
    size_t bytes = (size_t)argc * sizeof(struct slice);
    for (int i = 0; i < argc; i++) bytes += argv[i].len;
    struct slice *copy = rk_malloc(bytes ? bytes : 1);
    char *p = (char *)(copy + argc);
    for (int i = 0; i < argc; i++) {
        memcpy(p, argv[i].ptr, argv[i].len);
        copy[i] = (struct slice){ p, argv[i].len };
        p += argv[i].len;
    }
    q->cmds[q->n++] = (struct queued_cmd){ cmd, argc, copy };
    q->mem += bytes;
    q->mask |= mask;
    q->keyspace |= keyspace;
    q->denyoom |= (cmd->flags & CMD_DENYOOM) != 0;
}

/* A queued command the user may no longer run: EXEC answers Redis's error
 * in its place (the reason is its one argument). It touches no key, so
 * it runs wherever the transaction runs. */
static void reply_acl_changed(struct cmd_ctx *c) {
    reply_errorf(&c->r, "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
                        "EXEC call. This command is no longer allowed for the following reason: %.*s",
                 (int)c->argv[0].len, c->argv[0].ptr);
}

static const struct command acl_changed = { .name = "exec|acl-changed", .arity = 1, .proc = reply_acl_changed };

bool multi_queue_denied(const struct multi_queue *q, size_t i) { return q->cmds[i].cmd == &acl_changed; }

void multi_queue_deny(struct multi_queue *q, size_t i, const char *reason) {
    struct queued_cmd *qc = &q->cmds[i];
    qc->cmd = &acl_changed;
    qc->argc = 1;
    qc->argv[0] = (struct slice){ reason, strlen(reason) };   /* static text: the copy is one allocation */
}

void multi_queue_free(struct multi_queue *q) {
    if (!q) return;
    for (size_t i = 0; i < q->n; i++) free(q->cmds[i].argv);
    free(q->cmds);
    rbuf_free(&q->watched);
    free(q);
}

/* One queued command, under the transaction's context; db is the database
 * of the commands after it (SELECT changes it). */
static void run_queued(struct cmd_ctx *ctx, const struct queued_cmd *qc, int *db) {
    struct cmd_ctx sub = *ctx;
    sub.cmd = qc->cmd;
    sub.argc = qc->argc;
    sub.argv = qc->argv;
    sub.db = *db;
    sub.waiter = NULL;
    sub.block = false;
    sub.timed_out = true;          /* blocking commands: no waiting in a transaction */
    command_call(&sub);
    if (ctx->client) *db = ctx->client->db;   /* SELECT applies to what follows */
}

void exec_queued(struct cmd_ctx *ctx, const struct multi_queue *q, bool dirty) {
    if (dirty || (q->watched.len &&
                  db_watched_expired(ctx, &q->watcher, (struct slice){ q->watched.buf, q->watched.len }))) {
        reply_null_array(&ctx->r);
        return;
    }
    reply_array(&ctx->r, q->n);
    int db = ctx->db;
    aof_block_begin();
    for (size_t i = 0; i < q->n; i++) run_queued(ctx, &q->cmds[i], &db);
    aof_block_end();
}

/* ---- EXEC forwarded to the shard that owns every key of the queue ----
 *
 * argv: every queued command's arguments, one after another (so argv[1],
 * which the receiving batch prefetches as the key, is the first command's
 * key), then one blob of n descriptors: the command and its argc. */

int exec_forward_argc(const struct multi_queue *q) {
    int argc = 1;
    for (size_t i = 0; i < q->n; i++) argc += q->cmds[i].argc;
    return argc;
}

void exec_forward_argv(const struct multi_queue *q, struct slice *argv, char *blob) {
    int at = 0;
    for (size_t i = 0; i < q->n; i++) {
        const struct queued_cmd *qc = &q->cmds[i];
        memcpy(argv + at, qc->argv, (size_t)qc->argc * sizeof *argv);
        at += qc->argc;
        uint32_t argc = (uint32_t)qc->argc;
        memcpy(blob + i * EXEC_FWD_DESC, &qc->cmd, sizeof qc->cmd);
        memcpy(blob + i * EXEC_FWD_DESC + sizeof qc->cmd, &argc, sizeof argc);
    }
    argv[at] = (struct slice){ blob, q->n * EXEC_FWD_DESC };
}

static void cmd_exec_forwarded(struct cmd_ctx *c) {
    struct slice blob = c->argv[c->argc - 1];
    size_t n = blob.len / EXEC_FWD_DESC;
    reply_array(&c->r, n);
    int db = c->db;
    struct slice *argv = c->argv;
    aof_block_begin();
    for (size_t i = 0; i < n; i++) {
        struct queued_cmd qc;
        uint32_t argc;
        memcpy(&qc.cmd, blob.ptr + i * EXEC_FWD_DESC, sizeof qc.cmd);
        memcpy(&argc, blob.ptr + i * EXEC_FWD_DESC + sizeof qc.cmd, sizeof argc);
        qc.argc = (int)argc;
        qc.argv = argv;
        argv += argc;
        run_queued(c, &qc, &db);
    }
    aof_block_end();
}

/* Not in the command table: only ever forwarded by EXEC (io/multi.c), its
 * calls counted there and its commands' each where they run. */
const struct command exec_forwarded_command = {
    .name = "exec", .arity = -1, .proc = cmd_exec_forwarded,
};
