/*
 * What the stream commands share (cmd_stream.c: entries, XREAD and
 * XREADGROUP; cmd_stream_group.c: consumer groups): finding the stream,
 * parsing IDs with Redis's errors, and replying ranges of entries, which
 * for a group read also delivers them (the PEL, the group's last ID and
 * read counter), as Redis's streamReplyWithRange.
 */
#ifndef RINGKV_CMD_STREAM_H
#define RINGKV_CMD_STREAM_H

#include "ringkv/command.h"
#include "ringkv/stream.h"

#define ERR_STREAM_ID "ERR Invalid stream ID specified as stream command argument"

/* The stream at key for reading: false after WRONGTYPE; *s NULL when absent. */
bool stream_read(struct cmd_ctx *c, struct slice key, struct stream **s);
/* The stream at key for changing: false after WRONGTYPE; *s NULL when
 * absent (then *slot is NULL too). Finish with stream_commit. */
bool stream_write(struct cmd_ctx *c, struct slice key, struct kv_entry ***slot, struct stream **s);
/* Store a changed stream, or create the key for a new one (slot NULL).
 * A stream stays when it is empty, as in Redis. */
void stream_commit(struct cmd_ctx *c, struct slice key, struct kv_entry **slot, struct stream *s, bool changed);
/* The node limits the configuration sets now. */
struct stream_node_limits stream_limits_now(void);

/* Parse an ID (stream_id_parse) or reply ERR_STREAM_ID. */
bool stream_id_or_reply(struct cmd_ctx *c, struct slice arg, uint64_t missing_seq, bool strict,
                        struct stream_id *id, bool *seq_given);
void reply_stream_id(struct reply *r, struct stream_id id);

/* A consumer of the group, made if missing (*created then true); an
 * existing one's seen time refreshed, as Redis 7.0's lookups do. */
struct stream_consumer *stream_consumer_get(struct cmd_ctx *c, struct stream_cg *g, struct slice name,
                                            bool *created);

#define STREAM_RANGE_NOACK   1   /* a group read that creates no pending entries */
#define STREAM_RANGE_RAW     2   /* only the entries, no array header */
#define STREAM_RANGE_HISTORY 4   /* a group read of the consumer's own PEL */
/* Reply the entries in [start, end] (at most count, 0: all), newest first
 * with rev, each as [id, [field, value, ...]]; with a group and consumer,
 * deliver them as Redis does. Returns how many. */
size_t reply_stream_range(struct cmd_ctx *c, struct stream *s, struct stream_id start, struct stream_id end,
                          size_t count, bool rev, struct stream_cg *g, struct stream_consumer *consumer,
                          int flags);
/* One entry as [id, [field, value, ...]] (the iterator just returned it). */
void reply_stream_entry(struct reply *r, struct stream_iter *it, struct stream_id id, long long nfields);

#endif
