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

#include "ringkv/config.h"
#include "ringkv/ring.h"
#include "ringkv/snapshot.h"

#include "io_internal.h"

#define UD_FILE_PTR_MASK ((1ULL << 56) - 1)

static void submit_file_op(struct worker *w, struct file_op *op) {
    struct io_uring_sqe *sqe = ring_sqe(w);
    switch (op->kind) {
    case FOP_WRITE:
        io_uring_prep_write(sqe, op->fd, op->buf, (unsigned)(op->len > (1u << 30) ? (1u << 30) : op->len), op->off);
        break;
    case FOP_FSYNC:
        io_uring_prep_fsync(sqe, op->fd, 0);
        break;
    case FOP_RENAME:
        io_uring_prep_renameat(sqe, AT_FDCWD, op->from, AT_FDCWD, op->to, 0);
        break;
    }
    io_uring_sqe_set_data64(sqe, ((uint64_t)UD_FILE << 56) | ((uintptr_t)op & UD_FILE_PTR_MASK));
}

void persist_on_cqe(uint64_t ud, int res) {
    struct file_op *op = (struct file_op *)(uintptr_t)(ud & UD_FILE_PTR_MASK);
    op->done(op, res);
}

bool persist_iteration(struct worker *w) {
    if (RK_LIKELY(!w->shard.snap) || shard_is_held(w)) return false;
    struct file_op *ops;
    bool more = snapshot_step(&w->shard, &ops);
    while (ops) {
        struct file_op *next = ops->next;
        submit_file_op(w, ops);
        ops = next;
    }
    return more;
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
            printf("ringkv: %lld changes in %lld seconds. Saving...\n", changes, secs);
            fflush(stdout);
            return true;
        }
    }
    return false;
}

void persist_cron(struct worker *w) {
    if (w->id != 0 || atomic_load(&rk_persist.bgsave_in_progress) || (atomic_load(&rk_persist.gate) & PERSIST_GATE_LOADING))
        return;
    bool due = atomic_load(&rk_persist.bgsave_scheduled);
    if (!due) {
        long long changes = persist_total_dirty(srv.shard_ptrs, srv.nworkers) - atomic_load(&rk_persist.dirty_at_save);
        due = changes > 0 && save_point_due(w->now_ms, changes);
    }
    if (!due) return;
    atomic_store(&rk_persist.bgsave_scheduled, false);
    /* BGSAVE as a transaction over every shard for nobody's connection */
    static const char name[] = "bgsave";
    struct slice argv[1] = { { name, sizeof name - 1 } };
    struct tx_request req = { .idx = UINT32_MAX, .resp = 2, .cmd = command_lookup(name, sizeof name - 1),
                              .mask = srv.nworkers >= 64 ? ~0ULL : (1ULL << srv.nworkers) - 1,
                              .argc = 1, .argv = argv };
    tx_start(w, &req);
}
