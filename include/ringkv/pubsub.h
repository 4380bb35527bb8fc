/*
 * Publishing, for the command layer: PUBLISH, SPUBLISH and, through
 * them, keyspace notifications.
 *
 * pubsub_publish() counts the receivers in the directory (pubsub_dir.h)
 * and hands the message to every thread that has one, through
 * pubsub_send_hook: the messaging layer fills it in at start (the calling
 * thread's own subscribers are written to at once; other threads get it in
 * this iteration's batch for them). Unit tests leave it NULL.
 */
#ifndef RINGKV_PUBSUB_H
#define RINGKV_PUBSUB_H

#include "ringkv/command.h"
#include "ringkv/pubsub_dir.h"

struct worker;
extern void (*pubsub_send_hook)(struct worker *w, unsigned thread, enum ps_kind k, struct slice channel,
                                struct slice msg);

/* Publish msg on channel (PS_CHANNEL, or PS_SHARD run on the channel's
 * shard); returns the number of clients it reaches. */
uint64_t pubsub_publish(struct cmd_ctx *c, enum ps_kind k, struct slice channel, struct slice msg);
/* The same from thread w with the directory dir (w's own shard's for channels). */
uint64_t pubsub_publish_dir(struct worker *w, const struct ps_dir *dir, enum ps_kind k, struct slice channel,
                            struct slice msg);

/* The hidden command that applies a directory change on another shard:
 * "pubsub-dir <kind> <thread> <delta> <name>". The connection layer
 * forwards it, so its reply (empty) keeps a subscribe reply behind the
 * change reaching every thread. */
extern const struct command pubsub_dir_command;

#endif
