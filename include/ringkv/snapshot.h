/*
 * RDB snapshots without fork (persist/snapshot.c).
 *
 * SAVE (rdb_save_now) runs while its caller holds every shard and writes
 * the file with plain write() calls: it blocks, as Redis's SAVE does.
 *
 * BGSAVE is a snapshot of one moment across every shard. It begins while
 * every shard is held (snapshot_begin, run as a whole-keyspace
 * transaction): each shard's snap_side flips (db.h), so all its entries
 * are "not saved yet". From then on each shard's own thread saves its
 * entries in small steps between its other work (snapshot_step), and a
 * change to an entry not saved yet saves its old value first (db.h's
 * hook), so the file holds every key as it was at that moment.
 *
 * Serialised keys collect in chunks. A full chunk takes the next free
 * offset of the file (one atomic add on the snapshot) and its CRC-64, and
 * becomes a file_op for its shard's thread to write through its own
 * io_uring ring; chunks of different shards interleave in the file, each
 * opening with SELECTDB. The shard whose part finishes last writes the
 * header and the trailer, whose CRC combines the chunks' in file order
 * (crc64_combine), then fsyncs and renames the file into place, all as
 * file_ops too: no loop ever blocks on the disk. Memory held is bounded
 * by the chunks in flight per shard plus what writes save ahead of the
 * scan, never a copy of the dataset.
 */
#ifndef RINGKV_SNAPSHOT_H
#define RINGKV_SNAPSHOT_H

#include <limits.h>
#include <stdatomic.h>

#include "ringkv/common.h"

struct kv_entry;
struct shard;

/* A file operation for a worker to submit through its ring. done runs on
 * that worker with the result (bytes written, 0, or -errno). */
/* FOP_WRITE_DSYNC: a write that completes once its bytes are durable (RWF_DSYNC) */
enum file_op_kind { FOP_WRITE, FOP_WRITE_DSYNC, FOP_FSYNC, FOP_FDATASYNC, FOP_RENAME };
/* Whose operation it is: names its latency events ("snapshot-write", "aof-fsync-always", ...). */
enum file_op_owner { FOP_SNAPSHOT, FOP_AOF };
struct file_op {
    struct file_op *next;
    enum file_op_kind kind;
    enum file_op_owner owner;
    uint64_t started;          /* clock ticks at submission, while the latency monitor is on */
    int fd;
    const char *buf;           /* FOP_WRITE, FOP_WRITE_DSYNC */
    size_t len;
    uint64_t off;
    const char *from, *to;     /* FOP_RENAME */
    void (*done)(struct file_op *op, int res);
};

/* Saving state the whole server shares (INFO persistence, LASTSAVE,
 * save points, MISCONF). */
#define PERSIST_GATE_LOADING 1        /* the dataset is loading: commands get -LOADING */
#define PERSIST_GATE_BGSAVE_FAILED 2  /* the last BGSAVE failed: writes may get -MISCONF */
struct persist_status {
    _Atomic unsigned gate;                   /* PERSIST_GATE_*: 0 while all is well (dispatch reads it) */
    _Atomic long long lastsave;              /* unix seconds of the last successful save (start: boot) */
    _Atomic long long dirty_at_save;         /* the total of shard dirty counters that save covered */
    _Atomic bool bgsave_in_progress;
    _Atomic bool last_bgsave_ok;
    _Atomic bool bgsave_scheduled;           /* BGSAVE SCHEDULE while one ran */
    _Atomic long long bgsave_start_ms;
    _Atomic long long last_bgsave_secs;      /* -1: none yet */
    _Atomic long long last_bgsave_try_ms;    /* of the last one started (save points retry after 5 s) */
    _Atomic long long saves;                 /* successful saves (rdb_saves) */
    _Atomic long long last_cow_bytes;        /* bytes saved ahead of the scan by writes (rdb_last_cow_size) */
    _Atomic bool shutdown_saved;             /* SHUTDOWN did what it was asked: no save at exit */
    /* While the dataset loads at start: true once a shutdown signal is
     * waiting, which stops the load (as Redis exits while loading). Set
     * and called by the loading thread only; NULL otherwise. */
    bool (*load_stop)(void);
};
extern struct persist_status rk_persist;

/* Changes since boot over every shard (shard_stats.dirty). */
long long persist_total_dirty(struct shard **shards, unsigned n);

/* SAVE: every shard is held by the caller. header: rdb_put_header's and
 * the functions. 0, or -1 with the reason in err. */
int rdb_save_now(struct shard **shards, unsigned n, const struct rbuf *header, long long now_ms, struct rbuf *err);

/* Where a snapshot goes other than BGSAVE's dbfilename (the AOF's new
 * base): absolute paths, and who is told once it is in place or failed
 * (on the finisher's thread; BGSAVE's status is not touched). */
struct snapshot_target {
    char tmp[PATH_MAX], path[PATH_MAX];
    void (*done)(bool ok, long long now_ms);
    /* NULL: an RDB file. Else the file is the header and then what this
     * appends for each key (*last_db: the database of the chunk's last
     * key, -1 at a chunk's start), without RDB sizes or trailer. */
    void (*put_key)(struct rbuf *b, long *last_db, unsigned db, const struct kv_entry *e, bool compress);
};

/* BGSAVE's start (to NULL: dbfilename), every shard held by the caller:
 * 0, or -1 with err. */
int snapshot_begin(struct shard **shards, unsigned n, const struct rbuf *header, long long now_ms,
                   const struct snapshot_target *to, struct rbuf *err);
/* A BGSAVE that could not begin (its file) counts as one that failed, as
 * Redis's child would have: rdb_last_bgsave_status err, MISCONF. */
void snapshot_failed_to_start(long long now_ms);
/* FLUSHALL during a BGSAVE (every shard held): the snapshot stops and its
 * file is dropped, as Redis kills its child. */
void snapshot_abort(struct shard **shards, unsigned n);

/* The shard's thread, each loop iteration while s->snap is set and no
 * transaction holds s: save some entries and take the file_ops to submit
 * (*ops, in order). Returns true while it has more to save now (the loop
 * should not sleep). */
bool snapshot_step(struct shard *s, struct file_op **ops);

/* Bytes of a chunk: big enough that writes are few, small enough that a
 * step stays short and chunks in flight stay a small bound on memory. */
#define SNAPSHOT_CHUNK (256 * 1024)

#endif
