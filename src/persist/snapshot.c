/*
 * SAVE and BGSAVE (snapshot.h has the design).
 *
 * Who touches what. A snapshot part belongs to its shard: its thread works
 * on it in snapshot_step and in the completions of its file_ops, and
 * whoever holds the shard (a transaction's coordinator) may add to its
 * chunk through db.h's hook. The two never overlap except for the count
 * of chunks not yet written (`pending`, atomic) and the list of ops only
 * the owner thread uses (`own_ops`). The snapshot itself is shared: the
 * next file offset, the parts still writing, the first error, and the
 * `complete` flag are atomics; the header, CRCs and file names are set
 * before any part runs or read only by the part that finishes last, after
 * every other part has counted itself out (acquire/release on
 * parts_left). A part leaves its shard (s->snap = NULL) on its own thread
 * once the snapshot is complete; the last part to leave frees it.
 */
#include "ringkv/log.h"
#include "ringkv/snapshot.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringkv/config.h"
#include "ringkv/crc64.h"
#include "ringkv/db.h"
#include "ringkv/rdb_file.h"
#include "ringkv/util.h"

struct persist_status rk_persist = { .last_bgsave_ok = true, .last_bgsave_secs = -1 };

long long persist_total_dirty(struct shard **shards, unsigned n) {
    long long d = 0;
    for (unsigned i = 0; i < n; i++) d += __atomic_load_n(&shards[i]->stats.dirty, __ATOMIC_RELAXED);
    return d;
}

static void fail_errno(struct rbuf *err, const char *what, const char *path, int e) {
    err->len = 0;
    char msg[PATH_MAX + 128];
    int n = snprintf(msg, sizeof msg, "%s %s: %s", what, path, strerror(e));
    rbuf_append(err, msg, (size_t)n);
}

static void temp_name(char *buf, size_t n, const char *kind) {
    snprintf(buf, n, "temp-%s%d.rdb", kind, (int)getpid());
}

/* ---------------------------------------------------------------- SAVE */

struct sync_writer {
    int fd;
    int error;
    uint64_t crc;
    bool compress;
    struct rbuf buf;
    unsigned dbi;
};

static void sync_flush(struct sync_writer *w) {
    const char *p = w->buf.buf;
    size_t left = w->buf.len;
    w->crc = crc64(w->crc, p, left);
    while (left && !w->error) {
        ssize_t n = write(w->fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) w->error = n < 0 ? errno : EIO;
        else p += n, left -= (size_t)n;
    }
    w->buf.len = 0;
}

static void sync_visit(void *ud, struct kv_entry *e) {
    struct sync_writer *w = ud;
    rdb_put_key(&w->buf, e, w->compress);
    if (w->buf.len >= SNAPSHOT_CHUNK) sync_flush(w);
}

static int save_finish_file(int fd, const char *tmp, int error, struct rbuf *err) {
    if (!error && fsync(fd) != 0) error = errno;
    if (close(fd) != 0 && !error) error = errno;
    const char *path = rk_config.dbfilename;
    if (!error && rename(tmp, path) != 0) {
        error = errno;
        fail_errno(err, "Error moving temp DB file on the final destination", path, error);
    } else if (error) {
        fail_errno(err, "Write error saving DB on disk", tmp, error);
    }
    if (error) unlink(tmp);
    return error ? -1 : 0;
}

static void saved(long long now_ms, long long dirty) {
    atomic_store(&rk_persist.lastsave, now_ms / 1000);
    atomic_store(&rk_persist.dirty_at_save, dirty);
    atomic_fetch_add(&rk_persist.saves, 1);
}

int rdb_save_now(struct shard **shards, unsigned n, const struct rbuf *header, long long now_ms, struct rbuf *err) {
    char tmp[64];
    temp_name(tmp, sizeof tmp, "");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fail_errno(err, "Failed opening the temp RDB file", tmp, errno);
        return -1;
    }
    struct sync_writer w = { .fd = fd, .compress = CONFIG_GET(rdbcompression) };
    rbuf_append(&w.buf, header->buf, header->len);
    for (unsigned d = 0; d < shards[0]->ndb && !w.error; d++) {
        size_t keys = 0, expires = 0;
        for (unsigned i = 0; i < n; i++) {
            keys += table_size(&shards[i]->dbs[d].table);
            expires += shards[i]->dbs[d].expires;
        }
        if (!keys) continue;
        rdb_put_selectdb(&w.buf, d);
        rdb_put_resizedb(&w.buf, keys, expires);
        for (unsigned i = 0; i < n && !w.error; i++) {
            uint64_t cursor = 0;
            do cursor = table_scan(&shards[i]->dbs[d].table, cursor, 4096, sync_visit, &w);
            while (cursor && !w.error);
        }
    }
    sync_flush(&w);   /* w.crc is now the CRC of everything before the trailer */
    rdb_put_trailer(&w.buf, w.crc, CONFIG_GET(rdbchecksum));
    sync_flush(&w);
    rbuf_free(&w.buf);
    int rc = save_finish_file(fd, tmp, w.error, err);
    if (rc == 0) saved(now_ms, persist_total_dirty(shards, n));
    return rc;
}

/* ---------------------------------------------------------------- BGSAVE */

struct crc_rec { uint64_t off, len, crc; };

struct chunk {
    struct file_op op;
    struct snap_part *part;
    char *data;
    size_t len;
};

struct snap_part {
    struct snapshot *snap;
    struct shard *s;
    unsigned db;                  /* the scan's database and cursor */
    uint64_t cursor;
    bool scanned, counted;
    struct rbuf buf;              /* the chunk being filled */
    long buf_db;                  /* its current SELECTDB, -1: none yet */
    struct crc_rec *recs;         /* every chunk sealed: its place and CRC */
    size_t nrecs, recs_cap;
    struct file_op *ops, **ops_tail;           /* sealed chunks, by whoever holds the shard */
    struct file_op *own_ops, **own_tail;       /* the owner thread's: rewrites, the finish */
    _Atomic unsigned pending;     /* chunks sealed and not yet written */
    size_t cow_bytes;             /* saved ahead of the scan by writes */
};

enum finish_stage { FIN_HEADER, FIN_TRAILER, FIN_FSYNC, FIN_RENAME };

struct snapshot {
    int fd;
    char tmp[PATH_MAX], path[PATH_MAX];   /* absolute: CONFIG SET dir may move the cwd meanwhile */
    bool checksum, compress;
    void (*done)(bool ok, long long now_ms);   /* not BGSAVE's: the AOF's base */
    void (*put_key)(struct rbuf *b, long *last_db, unsigned db, const struct kv_entry *e, bool compress);
    struct rbuf header;
    long long start_ms, dirty;
    _Atomic uint64_t end;         /* the next free offset */
    _Atomic unsigned parts_left;  /* parts still writing */
    _Atomic unsigned refs;        /* parts still attached to their shards */
    _Atomic int error;            /* the first errno */
    _Atomic bool aborted, complete;
    /* the finish, by the part that counted itself out last */
    struct file_op fin;
    enum finish_stage stage;
    struct snap_part *finisher;
    char trailer[RDB_TRAILER_LEN];
    unsigned nparts;
    struct snap_part parts[];
};

/* Most chunks sealed but not written per shard before its scan waits. */
#define MAX_PENDING 8

static void queue_op(struct file_op ***tail, struct file_op *op) {
    op->next = NULL;
    **tail = op;
    *tail = &op->next;
}

static void set_error(struct snapshot *snap, int e) {
    int none = 0;
    atomic_compare_exchange_strong(&snap->error, &none, e);
}

static void chunk_written(struct file_op *op, int res) {
    struct chunk *ch = (struct chunk *)op;
    struct snap_part *part = ch->part;
    if (res < 0) set_error(part->snap, -res);
    else if ((size_t)res < op->len) {    /* short: the rest again, by this thread */
        op->buf += res;
        op->len -= (size_t)res;
        op->off += (uint64_t)res;
        queue_op(&part->own_tail, op);
        return;
    }
    free(ch->data);
    free(ch);
    atomic_fetch_sub(&part->pending, 1);
}

/* The chunk becomes a write at the file's next offset. */
static void seal(struct snap_part *part) {
    if (!part->buf.len) return;
    struct snapshot *snap = part->snap;
    struct chunk *ch = rk_calloc(1, sizeof *ch);
    ch->part = part;
    ch->len = part->buf.len;
    ch->data = part->buf.buf;
    part->buf = (struct rbuf){ 0 };
    part->buf_db = -1;
    uint64_t off = atomic_fetch_add(&snap->end, ch->len);
    if (part->nrecs == part->recs_cap) {
        part->recs_cap = part->recs_cap ? part->recs_cap * 2 : 64;
        part->recs = rk_realloc(part->recs, part->recs_cap * sizeof *part->recs);
    }
    part->recs[part->nrecs++] = (struct crc_rec){ off, ch->len, snap->checksum ? crc64(0, ch->data, ch->len) : 0 };
    ch->op = (struct file_op){ .kind = FOP_WRITE, .fd = snap->fd, .buf = ch->data, .len = ch->len, .off = off,
                               .done = chunk_written };
    atomic_fetch_add(&part->pending, 1);
    queue_op(&part->ops_tail, &ch->op);
}

static void save_entry(struct snap_part *part, unsigned dbi, struct kv_entry *e) {
    if (part->snap->put_key) {
        part->snap->put_key(&part->buf, &part->buf_db, dbi, e, part->snap->compress);
    } else {
        if (part->buf_db != (long)dbi) {
            rdb_put_selectdb(&part->buf, dbi);
            part->buf_db = dbi;
        }
        rdb_put_key(&part->buf, e, part->snap->compress);
    }
    e->meta ^= ENTRY_SNAP;   /* now on the shard's side: saved */
    if (part->buf.len >= SNAPSHOT_CHUNK) seal(part);
}

/* db.h's hook: a change is about to reach e, which the scan has not saved. */
static void save_before_change(struct shard *s, unsigned dbi, struct kv_entry *e) {
    struct snap_part *part = s->snap;
    size_t before = part->buf.len;
    save_entry(part, dbi, e);
    part->cow_bytes += part->buf.len > before ? part->buf.len - before : 0;
}

struct scan_visit { struct snap_part *part; struct shard *s; unsigned dbi; };

static void scan_visit(void *ud, struct kv_entry *e) {
    struct scan_visit *v = ud;
    if ((e->meta & ENTRY_SNAP) != v->s->snap_side) save_entry(v->part, v->dbi, e);
}

/* Table slots a step visits: a step is a few hundred microseconds. */
#define STEP_SLOTS 2048

static void scan_some(struct snap_part *part) {
    struct shard *s = part->s;
    struct scan_visit v = { part, s, part->db };
    size_t slots = 0;
    while (slots < STEP_SLOTS && atomic_load(&part->pending) < MAX_PENDING) {
        if (part->db >= s->ndb) {
            part->scanned = true;
            return;
        }
        v.dbi = part->db;
        part->cursor = table_scan(&s->dbs[part->db].table, part->cursor, 256, scan_visit, &v);
        slots += 256;
        if (part->cursor == 0) part->db++;
    }
}

/* ---- the finish, on the thread of the part that was last */

static void snapshot_complete(struct snapshot *snap, bool ok, long long now_ms) {
    if (snap->done) {
        snap->done(ok, now_ms);
    } else if (!atomic_load(&snap->aborted)) {
        atomic_store(&rk_persist.last_bgsave_ok, ok);
        if (ok) atomic_fetch_and(&rk_persist.gate, ~(unsigned)PERSIST_GATE_BGSAVE_FAILED);
        else atomic_fetch_or(&rk_persist.gate, PERSIST_GATE_BGSAVE_FAILED);
        if (ok) saved(now_ms, snap->dirty);
        atomic_store(&rk_persist.last_bgsave_secs, (now_ms - snap->start_ms + 500) / 1000);
        size_t cow = 0;
        for (unsigned i = 0; i < snap->nparts; i++) cow += snap->parts[i].cow_bytes;
        atomic_store(&rk_persist.last_cow_bytes, (long long)cow);
        atomic_store(&rk_persist.bgsave_in_progress, false);
    }
    if (!snap->done) {
        if (!ok) rk_log(LL_WARNING, "Background saving error: %s", strerror(atomic_load(&snap->error) ?: EIO));
        else rk_log(LL_NOTICE, "Background saving terminated with success");
    }
    atomic_store_explicit(&snap->complete, true, memory_order_release);
}

static void finish_failed(struct snapshot *snap) {
    close(snap->fd);
    snap->fd = -1;
    unlink(snap->tmp);
    snapshot_complete(snap, false, (long long)mstime_now());
}

static int cmp_rec(const void *a, const void *b) {
    const struct crc_rec *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The file's CRC: the header's, then every chunk's in file order. */
static uint64_t file_crc(struct snapshot *snap) {
    size_t n = 0;
    for (unsigned i = 0; i < snap->nparts; i++) n += snap->parts[i].nrecs;
    struct crc_rec *all = rk_malloc((n ? n : 1) * sizeof *all);
    n = 0;
    for (unsigned i = 0; i < snap->nparts; i++) {
        if (snap->parts[i].nrecs) memcpy(all + n, snap->parts[i].recs, snap->parts[i].nrecs * sizeof *all);
        n += snap->parts[i].nrecs;
    }
    qsort(all, n, sizeof *all, cmp_rec);
    uint64_t crc = crc64(0, snap->header.buf, snap->header.len);
    for (size_t i = 0; i < n; i++) crc = crc64_combine(crc, all[i].crc, all[i].len);
    free(all);
    return crc;
}

static void finish_step(struct file_op *op, int res);

static void finish_next(struct snapshot *snap, struct file_op op) {
    snap->fin = op;
    snap->fin.done = finish_step;
    queue_op(&snap->finisher->own_tail, &snap->fin);
}

static void finish_step(struct file_op *op, int res) {
    struct snapshot *snap = (struct snapshot *)((char *)op - offsetof(struct snapshot, fin));
    if (res < 0 || (op->kind == FOP_WRITE && (size_t)res != op->len)) {
        set_error(snap, res < 0 ? -res : EIO);
        finish_failed(snap);
        return;
    }
    switch (snap->stage) {
    case FIN_HEADER:
        if (snap->put_key) {   /* no trailer */
            snap->stage = FIN_FSYNC;
            finish_next(snap, (struct file_op){ .kind = FOP_FSYNC, .fd = snap->fd });
            break;
        }
        snap->stage = FIN_TRAILER;
        finish_next(snap, (struct file_op){ .kind = FOP_WRITE, .fd = snap->fd, .buf = snap->trailer,
                                            .len = RDB_TRAILER_LEN, .off = atomic_load(&snap->end) });
        break;
    case FIN_TRAILER:
        snap->stage = FIN_FSYNC;
        finish_next(snap, (struct file_op){ .kind = FOP_FSYNC, .fd = snap->fd });
        break;
    case FIN_FSYNC:
        snap->stage = FIN_RENAME;
        close(snap->fd);
        snap->fd = -1;
        finish_next(snap, (struct file_op){ .kind = FOP_RENAME, .from = snap->tmp, .to = snap->path });
        break;
    case FIN_RENAME:
        snapshot_complete(snap, true, (long long)mstime_now());
        break;
    }
}

static void finish_start(struct snap_part *part) {
    struct snapshot *snap = part->snap;
    snap->finisher = part;
    if (atomic_load(&snap->error) || atomic_load(&snap->aborted)) {
        finish_failed(snap);
        return;
    }
    if (!snap->put_key) {
        struct rbuf t = { 0 };
        rdb_put_trailer(&t, snap->checksum ? file_crc(snap) : 0, snap->checksum);
        memcpy(snap->trailer, t.buf, RDB_TRAILER_LEN);
        rbuf_free(&t);
    }
    snap->stage = FIN_HEADER;
    finish_next(snap, (struct file_op){ .kind = FOP_WRITE, .fd = snap->fd, .buf = snap->header.buf,
                                        .len = snap->header.len, .off = 0 });
}

static void snapshot_free(struct snapshot *snap) {
    for (unsigned i = 0; i < snap->nparts; i++) {
        rbuf_free(&snap->parts[i].buf);
        free(snap->parts[i].recs);
    }
    rbuf_free(&snap->header);
    free(snap);
}

static struct file_op *take_ops(struct snap_part *part) {
    struct file_op *ops = part->own_ops;
    struct file_op **tail = part->own_ops ? part->own_tail : &ops;
    *tail = part->ops;
    part->own_ops = part->ops = NULL;
    part->own_tail = &part->own_ops;
    part->ops_tail = &part->ops;
    return ops;
}

bool snapshot_step(struct shard *s, struct file_op **ops) {
    struct snap_part *part = s->snap;
    struct snapshot *snap = part->snap;
    *ops = NULL;
    if (atomic_load_explicit(&snap->complete, memory_order_acquire)) {
        s->snap = NULL;
        s->snap_active = false;
        if (atomic_fetch_sub(&snap->refs, 1) == 1) snapshot_free(snap);
        return false;
    }
    if (!part->scanned) {
        if (atomic_load(&snap->error) || atomic_load(&snap->aborted)) part->scanned = true;
        else scan_some(part);
        if (part->scanned) {
            s->snap_active = false;   /* every entry is on the shard's side now */
            if (atomic_load(&snap->error) || atomic_load(&snap->aborted)) part->buf.len = 0;
            seal(part);
        }
    }
    if (part->scanned && !part->counted && atomic_load(&part->pending) == 0) {
        part->counted = true;
        if (atomic_fetch_sub_explicit(&snap->parts_left, 1, memory_order_acq_rel) == 1) finish_start(part);
    }
    *ops = take_ops(part);
    return !part->scanned && atomic_load(&part->pending) < MAX_PENDING;
}

int snapshot_begin(struct shard **shards, unsigned n, const struct rbuf *header, long long now_ms,
                   const struct snapshot_target *to, struct rbuf *err) {
    for (unsigned i = 0; i < n; i++) {
        struct snap_part *old = shards[i]->snap;
        if (!old) continue;
        if (!atomic_load_explicit(&old->snap->complete, memory_order_acquire)) {
            err->len = 0;
            rbuf_append(err, "Background save already in progress", 35);
            return -1;
        }
        struct file_op *none;   /* the previous one is over: let go of it here */
        snapshot_step(shards[i], &none);
    }
    char cwd[PATH_MAX / 2], name[64];
    temp_name(name, sizeof name, "bg-");
    if (!getcwd(cwd, sizeof cwd)) {
        fail_errno(err, "Failed opening the temp RDB file", name, errno);
        return -1;
    }
    struct snapshot *snap = rk_calloc(1, sizeof *snap + n * sizeof *snap->parts);
    if (to) {
        memcpy(snap->tmp, to->tmp, sizeof snap->tmp);
        memcpy(snap->path, to->path, sizeof snap->path);
        snap->done = to->done;
        snap->put_key = to->put_key;
    } else {
        snprintf(snap->tmp, sizeof snap->tmp, "%s/%s", cwd, name);
        snprintf(snap->path, sizeof snap->path, "%s/%.*s", cwd, (int)(PATH_MAX / 2 - 2), rk_config.dbfilename);
    }
    snap->fd = open(snap->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (snap->fd < 0) {
        fail_errno(err, "Failed opening the temp RDB file", snap->tmp, errno);
        free(snap);
        return -1;
    }
    snap->checksum = CONFIG_GET(rdbchecksum) && !snap->put_key;
    snap->compress = CONFIG_GET(rdbcompression);
    rbuf_append(&snap->header, header->buf, header->len);
    /* The sizes of the moment, for the loader's tables: the chunks that
     * follow name their databases again. */
    for (unsigned d = 0; d < shards[0]->ndb && !snap->put_key; d++) {
        size_t keys = 0, expires = 0;
        for (unsigned i = 0; i < n; i++) {
            keys += table_size(&shards[i]->dbs[d].table);
            expires += shards[i]->dbs[d].expires;
        }
        if (!keys) continue;
        rdb_put_selectdb(&snap->header, d);
        rdb_put_resizedb(&snap->header, keys, expires);
    }
    snap->start_ms = now_ms;
    snap->dirty = persist_total_dirty(shards, n);
    atomic_store(&snap->end, snap->header.len);
    atomic_store(&snap->parts_left, n);
    atomic_store(&snap->refs, n);
    snap->nparts = n;
    db_snapshot_hook = save_before_change;
    for (unsigned i = 0; i < n; i++) {
        struct snap_part *part = &snap->parts[i];
        part->snap = snap;
        part->s = shards[i];
        part->buf_db = -1;
        part->ops_tail = &part->ops;
        part->own_tail = &part->own_ops;
        shards[i]->snap = part;
        shards[i]->snap_side ^= ENTRY_SNAP;   /* every entry is now "not saved yet" */
        shards[i]->snap_active = true;
    }
    if (to) return 0;
    atomic_store(&rk_persist.bgsave_in_progress, true);
    atomic_store(&rk_persist.bgsave_start_ms, now_ms);
    atomic_store(&rk_persist.last_bgsave_try_ms, now_ms);
    rk_log(LL_NOTICE, "Background saving started");
    return 0;
}

void snapshot_failed_to_start(long long now_ms) {
    atomic_store(&rk_persist.last_bgsave_ok, false);
    atomic_store(&rk_persist.last_bgsave_try_ms, now_ms);
    atomic_fetch_or(&rk_persist.gate, PERSIST_GATE_BGSAVE_FAILED);
}

void snapshot_abort(struct shard **shards, unsigned n) {
    bool any = false;
    for (unsigned i = 0; i < n; i++) {
        struct snap_part *part = shards[i]->snap;
        /* an AOF rewrite goes on: its base is followed by the FLUSHALL */
        if (!part || atomic_load(&part->snap->complete) || part->snap->done) continue;
        atomic_store(&part->snap->aborted, true);
        shards[i]->snap_active = false;
        any = true;
    }
    if (any) atomic_store(&rk_persist.bgsave_in_progress, false);
}
