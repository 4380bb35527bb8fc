/*
 * What the connection layer's files (worker.c, client.c, blocking.c) share
 * but nothing else should see.
 */
#ifndef RINGKV_IO_INTERNAL_H
#define RINGKV_IO_INTERNAL_H

#include "ringkv/server.h"

#include "ringkv/dispatch.h"
#include "ringkv/multi.h"

void client_maybe_free(struct client *c);
void client_schedule_resume(struct client *c);   /* resume from the worker loop */
void client_free_now(struct client *c);

/* Acting on a verdict (client.c), for multi.c. */
enum exec_result { EXEC_DONE, EXEC_WAIT };
/* A reply written now goes out, or behind replies still out elsewhere:
 * write into client_reply_target's buffer from `start`, then call
 * client_reply_written (drop: CLIENT REPLY OFF/SKIP cuts it). */
struct rbuf *client_reply_target(struct client *c, bool *queued);
void client_reply_written(struct client *c, struct rbuf *out, size_t start, bool queued, bool drop);
/* Run on this thread; false when a blocking command made the client wait. */
bool client_run_local(struct client *c, const struct command *cmd, int argc, struct slice *argv, bool drop);
/* Run as a cross-shard transaction over mask (exec: EXEC's queue, or NULL). */
void client_start_tx(struct client *c, const struct command *cmd, uint64_t mask, int argc,
                     struct slice *argv, bool drop, struct multi_queue *exec);

/* multi.c: MULTI EXEC DISCARD WATCH UNWATCH, and every command while in MULTI */
enum exec_result client_multi_command(struct client *c, const struct route *rt, int argc,
                                      struct slice *argv, bool drop);

#endif
