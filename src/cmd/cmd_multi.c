/*
 * Transactions: MULTI EXEC DISCARD WATCH UNWATCH.
 *
 * The state of a transaction belongs to the connection, so the connection
 * layer (io/multi.c) runs MULTI, EXEC and DISCARD itself (CMD_TXCTL); their
 * handlers here only answer if ever called out of place. WATCH runs where
 * its keys are held, with the client's identity (CMD_IDENTITY), and leaves
 * a record on each key; UNWATCH queued inside a transaction has nothing
 * left to do by the time it runs (EXEC unwatches everything).
 */
#include "ringkv/command.h"
#include "ringkv/command_def.h"
#include "ringkv/watch.h"

void cmd_multi(struct cmd_ctx *c) { reply_error(&c->r, "ERR MULTI calls can not be nested"); }
void cmd_exec(struct cmd_ctx *c) { reply_error(&c->r, "ERR EXEC without MULTI"); }
void cmd_discard(struct cmd_ctx *c) { reply_error(&c->r, "ERR DISCARD without MULTI"); }
void cmd_unwatch(struct cmd_ctx *c) { reply_ok(&c->r); }

void cmd_watch(struct cmd_ctx *c) {
    if (c->waiter)
        for (int i = 1; i < c->argc; i++) db_watch(c, c->argv[i], c->waiter);
    reply_ok(&c->r);
}

#define TX (CMD_NOSCRIPT | L)

const struct command multi_commands[] = {
    CMD("multi", 1, CMD_TXCTL | CMD_ALLOW_BUSY | TX | F, 0, 0, 0, cmd_multi, "@fast @transaction", "Starts a transaction.", "1.2.0", "transactions", "O(1)", NULL),
    CMD("exec", 1, CMD_TXCTL | TX, 0, 0, 0, cmd_exec, "@slow @transaction", "Executes all commands in a transaction.", "1.2.0", "transactions", "Depends on commands in the transaction", NULL),
    CMD("discard", 1, CMD_TXCTL | CMD_ALLOW_BUSY | TX | F, 0, 0, 0, cmd_discard, "@fast @transaction", "Discards a transaction.", "2.0.0", "transactions", "O(N), when N is the number of queued commands", NULL),
    CMD("watch", -2, CMD_TXCTL | CMD_IDENTITY | CMD_ALLOW_BUSY | TX | F, 1, -1, 1, cmd_watch, "@fast @transaction", "Monitors changes to keys to determine the execution of a transaction.", "2.2.0", "transactions", "O(1) for every key.",
        "key:key ..."),
    CMD("unwatch", 1, CMD_TXCTL | CMD_ALLOW_BUSY | TX | F, 0, 0, 0, cmd_unwatch, "@fast @transaction", "Forgets about watched keys of a transaction.", "2.2.0", "transactions", "O(1)", NULL),
    CMD_END
};
