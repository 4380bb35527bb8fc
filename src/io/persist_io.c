/*
 * The worker's side of persistence: a running snapshot's steps between the
 * loop's other work, its file operations through the worker's own ring,
 * and the save points (Redis's `save` parameter), checked by worker 0.
 *
 * A file_op's user_data is its address under UD_FILE: the completion hands
 * the result straight back to its owner (snapshot.c), on this thread.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkv/log.h"
#include "ringkv/aof.h"
#include "ringkv/clock.h"
#include "ringkv/config.h"
#include "ringkv/latency.h"
#include "ringkv/ring.h"
#include "ringkv/snapshot.h"

#include "io_internal.h"

#define UD_FILE_PTR_MASK ((1ULL << 56) - 1)

static void submit_file_op(struct worker *w, struct file_op *op) {
    struct io_uring_sqe *sqe = ring_sqe(w);
    op->started = RK_UNLIKELY(latency_monitor_on()) ? clock_ticks() : 0;
    switch (op->kind) {
    case FOP_WRITE:
    case FOP_WRITE_DSYNC:
        io_uring_prep_write(sqe, op->fd, op->buf, (unsigned)(op->len > (1u << 30) ? (1u << 30) : op->len), op->off);
        if (op->kind == FOP_WRITE_DSYNC) sqe->rw_flags = RWF_DSYNC;
        break;
    case FOP_FSYNC:
        io_uring_prep_fsync(sqe, op->fd, 0);
        break;
    case FOP_FDATASYNC:
        io_uring_prep_fsync(sqe, op->fd, IORING_FSYNC_DATASYNC);
        break;
    case FOP_RENAME:
        io_uring_prep_renameat(sqe, AT_FDCWD, op->from, AT_FDCWD, op->to, 0);
        break;
    }
    io_uring_sqe_set_data64(sqe, ((uint64_t)UD_FILE << 56) | ((uintptr_t)op & UD_FILE_PTR_MASK));
}

/* The latency monitor's name for a file operation's time, submission to
 * completion: for the AOF, what its clients' replies wait for under
 * appendfsync always (Redis's "aof-fsync-always"), or its writes and
 * background syncs; for a snapshot, its writes, syncs and final rename.
 * The shard's own part of a snapshot is "snapshot-step". */
static const char *file_op_event(const struct file_op *op) {
    static const char *const aof[] = { "aof-write", "aof-fsync-always", "aof-fsync", "aof-fsync", "aof-rename" };
    static const char *const snapshot[] = { "snapshot-write", "snapshot-write", "snapshot-fsync", "snapshot-fsync",
                                            "snapshot-rename" };
    return op->owner == FOP_AOF ? aof[op->kind] : snapshot[op->kind];
}

void persist_on_cqe(uint64_t ud, int res) {
    struct file_op *op = (struct file_op *)(uintptr_t)(ud & UD_FILE_PTR_MASK);
    if (RK_UNLIKELY(op->started))
        latency_add_sample_if_needed(file_op_event(op), ticks_to_ns(clock_ticks() - op->started) / 1000000);
    op->done(op, res);
}

static void submit_ops(struct worker *w, struct file_op *ops) {
    while (ops) {
        struct file_op *next = ops->next;
        submit_file_op(w, ops);
        ops = next;
    }
}

/* The AOF: this iteration's records sealed and written, the fsync that
 * is due; workers whose gated output may now leave get a doorbell (the
 * fence pairs with the one in submit_and_wait). */
static void aof_step(struct worker *w) {
    uint64_t wake;
    submit_ops(w, aof_iteration(w->aof, w->now_ms, &wake));
    wake &= ~(1ull << w->id);
    if (!wake) return;
    atomic_thread_fence(memory_order_seq_cst);
    while (wake) {
        unsigned t = (unsigned)__builtin_ctzll(wake);
        wake &= wake - 1;
        if (atomic_load_explicit(&srv.workers[t].sleeping, memory_order_relaxed)) ring_doorbell(w, &srv.workers[t]);
    }
}

bool persist_iteration(struct worker *w) {
    if (RK_UNLIKELY(aof_on()) || RK_UNLIKELY(aof_writer_busy(w->aof))) aof_step(w);
    if (RK_LIKELY(!w->shard.snap) || shard_is_held(w)) return false;
    struct file_op *ops;
    uint64_t t0 = RK_UNLIKELY(latency_monitor_on()) ? clock_ticks() : 0;
    bool more = snapshot_step(&w->shard, &ops);
    if (t0) latency_add_sample_if_needed("snapshot-step", ticks_to_ns(clock_ticks() - t0) / 1000000);
    submit_ops(w, ops);
    return more;
}

void persist_thread_start(struct worker *w) {
    w->aof = aof_writer_new(w->id);
    aof_writer_bind(w->aof);
}

/* Leaving the loop: the AOF writes in flight complete first (a write
 * the ring dropped at exit would leave a hole before later records). */
void persist_thread_stop(struct worker *w) {
    aof_seal();
    while (aof_writer_busy(w->aof)) {
        aof_step(w);
        struct io_uring_cqe *cqe;
        if (io_uring_submit_and_wait(&w->ring, 1) < 0) break;
        unsigned head, n = 0;
        io_uring_for_each_cqe(&w->ring, head, cqe) {
            uint64_t ud = io_uring_cqe_get_data64(cqe);
            if ((ud >> 56) == UD_FILE) persist_on_cqe(ud, cqe->res);
            n++;
        }
        io_uring_cq_advance(&w->ring, n);
    }
    aof_writer_free(w->aof);
    w->aof = NULL;
}

/* A save point is due: `changes` changes and `secs` seconds since the last
 * save, and, after a failed one, 5 s since that try (Redis's
 * CONFIG_BGSAVE_RETRY_DELAY). */
#define BGSAVE_RETRY_DELAY_MS 5000

static bool save_point_due(long long now_ms, long long changes_made) {
    const char *p = config_save_points();
    long long since = now_ms / 1000 - atomic_load(&rk_persist.lastsave);
    bool may_retry = atomic_load(&rk_persist.last_bgsave_ok) ||
                     now_ms - atomic_load(&rk_persist.last_bgsave_try_ms) > BGSAVE_RETRY_DELAY_MS;
    while (*p) {
        char *end;
        long long secs = strtoll(p, &end, 10);
        long long changes = strtoll(end, &end, 10);
        if (end == p) break;
        p = end;
        if (changes_made >= changes && since > secs && may_retry) {
            rk_log(LL_NOTICE, "%lld changes in %lld seconds. Saving...", changes, secs);
            return true;
        }
    }
    return false;
}

/* A whole-keyspace transaction for nobody's connection. */
static void start_tx(struct worker *w, const struct command *cmd) {
    struct slice argv[1] = { { cmd->name, strlen(cmd->name) } };
    struct tx_request req = { .idx = UINT32_MAX, .resp = 2, .cmd = cmd,
                              .mask = srv.nworkers >= 64 ? ~0ULL : (1ULL << srv.nworkers) - 1,
                              .argc = 1, .argv = argv };
    tx_start(w, &req);
}

void persist_cron(struct worker *w) {
    if (w->id != 0 || (atomic_load(&rk_persist.gate) & PERSIST_GATE_LOADING)) return;
    if (!atomic_load(&rk_persist.bgsave_in_progress) && !aof_rewrite_in_progress() &&
        (CONFIG_GET(appendonly) != aof_on() || aof_rewrite_due())) {
        start_tx(w, &aof_switch_command);
        return;
    }
    if (atomic_load(&rk_persist.bgsave_in_progress) || aof_rewrite_in_progress()) return;
    bool due = atomic_load(&rk_persist.bgsave_scheduled);
    if (!due) {
        long long changes = persist_total_dirty(srv.shard_ptrs, srv.nworkers) - atomic_load(&rk_persist.dirty_at_save);
        due = changes > 0 && save_point_due(w->now_ms, changes);
    }
    if (!due) return;
    atomic_store(&rk_persist.bgsave_scheduled, false);
    start_tx(w, command_original("bgsave"));   /* a save point's BGSAVE, renamed or not */
}
