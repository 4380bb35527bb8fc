/*
 * The append-only file (persist/aof.c writes it, persist/aof_load.c
 * replays it).
 *
 * Files: Redis 7.0's layout. `appenddirname` holds a manifest
 * (`<appendfilename>.manifest`) that names one base file, an RDB image
 * (`<appendfilename>.N.base.rdb`), and the incremental files after it
 * (`<appendfilename>.M.incr.aof`), RESP commands as clients send them.
 * Loading replays the base and then each incremental file in order, so
 * redis-check-aof and redis-server read ringkv's directory and the reverse.
 *
 * One log, many writers. Each worker gathers the records of the writes it
 * runs into its own buffer (aof_feed, after the command). It seals the
 * buffer at the end of its loop iteration, and also before another thread
 * may touch its shard (a transaction is granted it) and before it lets go
 * of shards it held: one atomic add on the log's `reserved` offset gives
 * the buffer its place, and the worker writes it there through its own
 * ring. Sealing at those points puts a cross-shard transaction's record
 * after every record of the shards it held that came before it and before
 * every record that came after it, so the file's order is an order in
 * which the writes could have run one by one. Each record of a command
 * that spans shards is one RESP command (MSET) or one MULTI ... EXEC
 * block (EXEC, scripts), so after a crash it is there whole or not at all.
 *
 * Durability. A worker publishes the offset of its oldest write still in
 * flight; the written prefix is the least of those and of `reserved`
 * (aof_written). An fsync submitted once a prefix is written makes that
 * prefix durable (`synced`). With `appendfsync always`, output leaves a
 * client only once `synced` has reached where `reserved` stood when the
 * output was flushed (aof_reply_gate): every write the reply could depend
 * on, on any thread, is on disk. There each write leaves with RWF_DSYNC
 * (durable when it completes, so the written prefix is the durable one),
 * one per worker in flight; the records sealed meanwhile go together in
 * the next one (group commit). A crash leaves at worst a hole past the synced
 * prefix: the loader stops at the first byte that does not start a
 * command, so it keeps a prefix, and every acknowledged write is in it.
 */
#ifndef RINGKV_AOF_H
#define RINGKV_AOF_H

#include <stdatomic.h>

#include "ringkv/common.h"

struct cmd_ctx;
struct shard;
struct file_op;

enum aof_fsync { AOF_FSYNC_EVERYSEC = 0, AOF_FSYNC_ALWAYS = 1, AOF_FSYNC_NO = 2 };

/* Whether records are being taken (aof_feed does anything). */
extern _Atomic bool rk_aof_on;
static inline bool aof_on(void) { return atomic_load_explicit(&rk_aof_on, memory_order_relaxed); }

/* ---- writers: one per worker, bound to its thread */
struct aof_writer;
struct aof_writer *aof_writer_new(unsigned worker_id);
void aof_writer_bind(struct aof_writer *aw);   /* this thread feeds and seals aw */
void aof_writer_free(struct aof_writer *aw);   /* nothing in flight (aof_writer_busy) */

/* After a write command ran (command_call): its record, in the form that
 * replays to the same result (relative TTLs made absolute, SPOP as SREM,
 * XADD's ID, ...). reply: what the command replied. */
void aof_feed(struct cmd_ctx *c, const char *reply, size_t reply_len);
/* A key deleted because it expired: DEL, as Redis logs it. */
void aof_feed_expired(struct cmd_ctx *c, struct slice key);
/* Around the commands of one EXEC or script: two records or more are
 * wrapped in MULTI/EXEC. */
void aof_block_begin(void);
void aof_block_end(void);
/* This thread's records take their place in the file now. */
void aof_seal(void);

/* The worker's loop, each iteration: seal, start the write or fsync that is due,
 * and hand back the file_ops to submit (in order). *wake: workers whose
 * gated output may leave now (bits by id). */
struct file_op *aof_iteration(struct aof_writer *aw, long long now_ms, uint64_t *wake);
/* Whether aw has writes in flight (shutdown waits for them). */
bool aof_writer_busy(const struct aof_writer *aw);

/* appendfsync always: the offset output flushed now must wait for (0:
 * none), and whether the log is durable up to gate. */
uint64_t aof_reply_gate(void);
bool aof_gate_passed(uint64_t gate);
/* Worker id's output waits for gate (0: nothing waits): its doorbell
 * rings when the log is durable that far. */
void aof_set_waiting(unsigned worker_id, uint64_t gate);
bool aof_waiting_passed(unsigned worker_id);   /* its output may leave now */

/* ---- files and rewrites (every shard held by the caller unless said) */

/* Startup, before the workers take commands: load the files the manifest
 * names. The base's keys go straight into shards (*keys counts them);
 * each command recorded goes to exec, which runs it (the command layer).
 * 0, 1 when there is no AOF, -1 with the reason in err. */
struct rdb_function_sink;
struct aof_replay {
    void *ud;
    int (*exec)(void *ud, int argc, struct slice *argv, struct rbuf *err);
    const struct rdb_function_sink *functions;   /* the base's FUNCTION libraries */
};
int aof_load(struct shard **shards, unsigned n, const struct aof_replay *r, size_t *keys, struct rbuf *err);
/* Open the log for appending, creating the directory, the manifest and
 * a first incremental file where there are none. 0, or -1 with err. */
int aof_open(struct rbuf *err);
/* Turn the log off (CONFIG SET appendonly no): what is sealed is
 * written, the files stay. */
void aof_close(void);
/* BGREWRITEAOF's start: a new incremental file takes the records from
 * now on, and a snapshot of this moment becomes the new base (through
 * snapshot.h); when it is written the manifest names it and the files it
 * replaces go. rdb (aof-use-rdb-preamble): the base is an RDB file and
 * header its RDB header; else a file of commands (a RESTORE ... ABSTTL
 * per key) and header the commands before them (aof_put_timestamp,
 * FUNCTION LOAD of each library). 0, or -1 with err. */
int aof_rewrite_begin(struct shard **shards, unsigned n, const struct rbuf *header, bool rdb, long long now_ms,
                      struct rbuf *err);
/* A command as a record (RESP), and with aof-timestamp-enabled the
 * `#TS:<unix seconds>` annotation Redis writes, for a base's header. */
void aof_put_command(struct rbuf *b, int argc, const struct slice *argv);
void aof_put_timestamp(struct rbuf *b);
/* At exit, workers stopped: write what is sealed and fsync. */
void aof_flush_at_exit(void);

/* INFO persistence's aof_* lines: Redis's first group, and the sizes it
 * adds after module_fork_* while the AOF is on. */
void aof_info(struct rbuf *out, long long now_ms);
void aof_info_sizes(struct rbuf *out);
/* CONFIG RESETSTAT: aof_rewrites, aof_rewrites_consecutive_failures and
 * aof_delayed_fsync back to 0, as Redis's resetServerStats. */
void aof_reset_stats(void);
bool aof_rewrite_in_progress(void);
/* Whether a rewrite waits for a BGSAVE to end, or is due by
 * auto-aof-rewrite-*: the cron starts it. */
bool aof_rewrite_due(void);
void aof_rewrite_schedule(void);

#endif
