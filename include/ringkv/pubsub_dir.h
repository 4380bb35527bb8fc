/*
 * The pub/sub directory: which threads have subscribers of a channel or a
 * pattern, and how many each.
 *
 * Subscribers live with their connections on any thread (the connection
 * layer keeps who they are). A publisher needs only to know how many
 * clients will receive a message and which threads to hand it to, so every
 * shard keeps a directory of counts per thread:
 *   - channels and patterns: replicated on every shard, so PUBLISH answers
 *     on the publisher's own thread and a thread without subscribers of a
 *     channel never hears of its messages;
 *   - shard channels (SSUBSCRIBE): only on the shard owning the channel's
 *     hash slot, where SPUBLISH is routed.
 * A directory is written only by its shard's own thread (the connection
 * layer's subscribe commands send their changes there), and read by that
 * thread or by a transaction holding the shard.
 */
#ifndef RINGKV_PUBSUB_DIR_H
#define RINGKV_PUBSUB_DIR_H

#include "ringkv/common.h"

enum ps_kind { PS_CHANNEL, PS_PATTERN, PS_SHARD, PS_KINDS };

struct ps_dir;

struct ps_dir *ps_dir_new(void);
void ps_dir_free(struct ps_dir *d);

/* Thread `thread` gained (delta > 0) or lost subscribers of name. */
void ps_dir_update(struct ps_dir *d, enum ps_kind k, unsigned thread, struct slice name, int delta);

/* Clients subscribed to name (PUBSUB NUMSUB: patterns not counted). */
uint64_t ps_dir_subscribers(const struct ps_dir *d, enum ps_kind k, struct slice name);

/* Clients a message on channel reaches (PS_CHANNEL: its subscribers and
 * those of every matching pattern; PS_SHARD: its subscribers), and in
 * *threads the bit of every thread that has one of them. */
uint64_t ps_dir_receivers(const struct ps_dir *d, enum ps_kind k, struct slice channel, uint64_t *threads);

/* Names with subscribers (PUBSUB NUMPAT for patterns). */
size_t ps_dir_count(const struct ps_dir *d, enum ps_kind k);

/* fn for every name with subscribers (PUBSUB CHANNELS). */
void ps_dir_each(const struct ps_dir *d, enum ps_kind k, void (*fn)(void *arg, struct slice name), void *arg);

#endif
