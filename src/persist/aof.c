/*
 * The append-only file: records, the shared log, its files (aof.h has the
 * design).
 *
 * Who touches what. A writer belongs to its worker's thread: its buffer,
 * its writes in flight and the completions of its file_ops. The log is
 * shared: `reserved`, `synced`, each worker's
 * `pending_low` and `waiting` are atomics. The current file changes only
 * while a rewrite's coordinator holds every shard, when no other thread
 * has records to seal; a file that is no longer current stays open until
 * the log is durable past its end, and worker 0 closes it. The manifest
 * and the rewrite's state are the coordinator's at a rewrite's start and
 * the snapshot finisher's at its end, never both at once (a rewrite runs
 * one at a time).
 */
#include "ringkv/log.h"
#include "ringkv/aof.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/entry.h"
#include "ringkv/rdb_codec.h"
#include "ringkv/rdb_value.h"
#include "ringkv/server.h"
#include "ringkv/snapshot.h"
#include "ringkv/util.h"

#include "aof_internal.h"

_Atomic bool rk_aof_on;

#define NONE UINT64_MAX

struct aof_file {
    int fd;
    uint64_t start;              /* logical offset of its first byte */
    _Atomic uint64_t end;        /* logical end; NONE while records go to it */
    struct aof_file *older;      /* the file before it, until durable past its end */
};

struct aof_write {
    struct file_op op;
    struct aof_writer *aw;
    struct aof_write *next;      /* the writer's writes in flight, oldest first */
    char *data;
    uint64_t lstart;
    size_t len;
    bool done;
    bool unsubmitted;            /* queued, not handed to the ring yet */
};
/* appendfsync always: a write leaves as FOP_WRITE_DSYNC and counts in the
 * writer's sync_inflight until it completes whole. */

struct aof_sync {                /* fdatasync of each file with bytes below upto not yet durable */
    struct aof_writer *aw;
    uint64_t upto;
    unsigned left;
    struct file_op ops[];
};

struct aof_writer {
    unsigned id;
    struct rbuf buf;             /* records not sealed yet */
    int buf_db;                  /* database of buf's last record; -1: none (SELECT first) */
    int block_depth;             /* EXEC / script nesting */
    unsigned block_records;
    size_t block_at;             /* where the block's first record starts in buf */
    struct aof_write *head, *tail;
    struct file_op *ops, **ops_tail;
    long long last_fsync_ms;     /* worker 0: everysec */
    long long last_ts;           /* unix seconds of our last #TS annotation */
    unsigned sync_inflight;      /* our fsyncs and durable writes in flight */
    bool synced_more;            /* an fsync or durable write of ours completed: wake who waits */
};

static struct {
    _Atomic(struct aof_file *) cur;
    _Atomic uint64_t reserved;
    _Atomic uint64_t synced;
    _Atomic uint64_t plain_end;      /* end of the last write that completed without RWF_DSYNC */
    _Atomic uint64_t fsynced;        /* what the last fdatasync covered */
    _Atomic uint64_t pending_low[RK_MAX_THREADS];
    _Atomic uint64_t waiting[RK_MAX_THREADS];
    _Atomic unsigned syncs_in_flight;
    _Atomic int write_error;         /* errno of the last failed write, 0: ok */
    _Atomic long long delayed_fsync;
    struct aof_file *closed;         /* files of a log turned off, until their writes are done (worker 0's) */
} L = { .pending_low = { [0 ... RK_MAX_THREADS - 1] = NONE } };

static _Thread_local struct aof_writer *self;

static enum aof_fsync policy(void) {
    const char *p = CONFIG_GET(appendfsync);
    return p[0] == 'a' ? AOF_FSYNC_ALWAYS : p[0] == 'n' ? AOF_FSYNC_NO : AOF_FSYNC_EVERYSEC;
}

struct aof_writer *aof_writer_new(unsigned worker_id) {
    struct aof_writer *aw = rk_calloc(1, sizeof *aw);
    aw->id = worker_id;
    aw->buf_db = -1;
    aw->ops_tail = &aw->ops;
    return aw;
}

void aof_writer_bind(struct aof_writer *aw) { self = aw; }

void aof_writer_free(struct aof_writer *aw) {
    if (self == aw) self = NULL;
    rbuf_free(&aw->buf);
    free(aw);
}

bool aof_writer_busy(const struct aof_writer *aw) { return aw->head != NULL || aw->ops != NULL; }

static void atomic_max(_Atomic uint64_t *a, uint64_t v) {
    uint64_t cur = atomic_load(a);
    while (cur < v && !atomic_compare_exchange_weak(a, &cur, v)) {}
}

/* ------------------------------------------------------------ records */

static void put_len(struct rbuf *b, char type, size_t n) {
    char tmp[24], *p = tmp + sizeof tmp;
    *--p = '\n';
    *--p = '\r';
    do *--p = (char)('0' + n % 10);
    while (n /= 10);
    *--p = type;
    rbuf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

static void put_arg(struct rbuf *b, const char *p, size_t len) {
    put_len(b, '$', len);
    rbuf_append(b, p, len);
    rbuf_append(b, "\r\n", 2);
}

static void put_ll(struct rbuf *b, long long v) {
    char tmp[24];
    int k = snprintf(tmp, sizeof tmp, "%lld", v);
    put_arg(b, tmp, (size_t)k);
}

static void put_cmd(struct rbuf *b, const char *name) {
    put_len(b, '*', 1);
    put_arg(b, name, strlen(name));
}

static void put_select(struct rbuf *b, int db) {
    put_len(b, '*', 2);
    put_arg(b, "SELECT", 6);
    put_ll(b, db);
}

/* A record for database db begins: SELECT first where the buffer's last
 * record was for another one (a sealed buffer always starts with one:
 * buffers of other threads may come between). With aof-timestamp-enabled,
 * a `#TS:<unix seconds>` annotation first when the second changed since
 * this writer's last one, as Redis writes them (redis-check-aof
 * --truncate-to-timestamp cuts at them; loading skips them). */
static struct rbuf *record_start(struct aof_writer *aw, int db) {
    struct rbuf *b = &aw->buf;
    if (RK_UNLIKELY(CONFIG_GET(aof_timestamp_enabled)) && time(NULL) > aw->last_ts) {
        aw->last_ts = (long long)time(NULL);
        aof_put_timestamp(b);
    }
    if (aw->block_depth && ++aw->block_records == 2) {
        /* a second record: the block becomes MULTI ... EXEC */
        static const char multi[] = "*1\r\n$5\r\nMULTI\r\n";
        rbuf_reserve(b, sizeof multi - 1);
        memmove(b->buf + aw->block_at + sizeof multi - 1, b->buf + aw->block_at, b->len - aw->block_at);
        memcpy(b->buf + aw->block_at, multi, sizeof multi - 1);
        b->len += sizeof multi - 1;
    }
    if (aw->buf_db != db) {
        put_select(b, db);
        aw->buf_db = db;
    }
    return b;
}

void aof_block_begin(void) {
    struct aof_writer *aw = self;
    if (!aw || !aof_on()) return;
    if (aw->block_depth++ == 0) {
        aw->block_records = 0;
        aw->block_at = aw->buf.len;
    }
}

void aof_block_end(void) {
    struct aof_writer *aw = self;
    if (!aw || !aw->block_depth) return;
    if (--aw->block_depth == 0 && aw->block_records >= 2) put_cmd(&aw->buf, "EXEC");
}

static void put_argv(struct rbuf *b, int argc, const struct slice *argv) {
    put_len(b, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) put_arg(b, argv[i].ptr, argv[i].len);
}

void aof_feed_expired(struct cmd_ctx *c, struct slice key) {
    struct aof_writer *aw = self;
    if (!aw || !aof_on()) return;
    struct rbuf *b = record_start(aw, c->db);
    put_len(b, '*', 2);
    put_arg(b, "DEL", 3);
    put_arg(b, key.ptr, key.len);
}

/* The key's absolute expiry in ms after the command, -1: none, -2: gone. */
static long long key_expiry(struct cmd_ctx *c, struct slice key) {
    struct kv_entry *e = db_lookup(c, key, LOOKUP_NOEXPIRE);
    if (!e) return -2;
    return entry_has_expire(e) ? entry_expire(e) : -1;
}

/* PEXPIREAT key when, or DEL key when the command removed it. */
static void put_expiry(struct rbuf *b, struct cmd_ctx *c, struct slice key) {
    long long when = key_expiry(c, key);
    if (when == -2) {
        put_len(b, '*', 2);
        put_arg(b, "DEL", 3);
        put_arg(b, key.ptr, key.len);
    } else if (when == -1) {
        put_len(b, '*', 2);
        put_arg(b, "PERSIST", 7);
        put_arg(b, key.ptr, key.len);
    } else {
        put_len(b, '*', 3);
        put_arg(b, "PEXPIREAT", 9);
        put_arg(b, key.ptr, key.len);
        put_ll(b, when);
    }
}

/* A bulk reply's payload ($n or RESP3 's' never occur for these). */
static bool bulk_payload(const char *r, size_t len, struct slice *out) {
    if (len < 4 || r[0] != '$') return false;
    char *end;
    long long n = strtoll(r + 1, &end, 10);
    if (n < 0 || end + 2 + n > r + len) return false;
    *out = (struct slice){ end + 2, (size_t)n };
    return true;
}

/* How a command's record is written: most are as they came. */
enum feed_kind { FEED_ASIS, FEED_EXPIRE, FEED_SETEX, FEED_SET, FEED_SPOP, FEED_INCRBYFLOAT, FEED_HINCRBYFLOAT,
                 FEED_XADD, FEED_RESTORE };

static enum feed_kind kind_of(const struct command *cmd) {
    static const struct { const char *name; enum feed_kind kind; } special[] = {
        { "expire", FEED_EXPIRE }, { "pexpire", FEED_EXPIRE }, { "expireat", FEED_EXPIRE },
        { "pexpireat", FEED_EXPIRE }, { "getex", FEED_EXPIRE }, { "setex", FEED_SETEX }, { "psetex", FEED_SETEX },
        { "set", FEED_SET }, { "spop", FEED_SPOP }, { "incrbyfloat", FEED_INCRBYFLOAT },
        { "hincrbyfloat", FEED_HINCRBYFLOAT }, { "xadd", FEED_XADD }, { "restore", FEED_RESTORE },
    };
    /* pipelines repeat a command: remember the last one's kind */
    static _Thread_local const struct command *last;
    static _Thread_local enum feed_kind last_kind;
    if (cmd == last) return last_kind;
    enum feed_kind k = FEED_ASIS;
    for (size_t i = 0; i < sizeof special / sizeof *special; i++)
        if (strcmp(cmd->name, special[i].name) == 0) k = special[i].kind;
    last = cmd;
    last_kind = k;
    return k;
}

/* SET with EX/PX/EXAT: SET key value PXAT when, as Redis 7 propagates it. */
static bool set_has_relative_ttl(const struct cmd_ctx *c) {
    for (int i = 3; i < c->argc; i++)
        if (slice_eq_nocase(c->argv[i], "ex") || slice_eq_nocase(c->argv[i], "px") ||
            slice_eq_nocase(c->argv[i], "exat"))
            return true;
    return false;
}

/* SPOP's members, from its reply: SREM key m1 m2 ... */
static void put_spop(struct rbuf *b, struct cmd_ctx *c, const char *r, size_t len) {
    struct slice one;
    if (bulk_payload(r, len, &one)) {
        put_len(b, '*', 3);
        put_arg(b, "SREM", 4);
        put_arg(b, c->argv[1].ptr, c->argv[1].len);
        put_arg(b, one.ptr, one.len);
        return;
    }
    if (len < 4 || (r[0] != '*' && r[0] != '~')) return;
    char *p;
    long long n = strtoll(r + 1, &p, 10);
    if (n <= 0) return;
    p += 2;
    put_len(b, '*', (size_t)n + 2);
    put_arg(b, "SREM", 4);
    put_arg(b, c->argv[1].ptr, c->argv[1].len);
    const char *end = r + len;
    for (long long i = 0; i < n; i++) {
        struct slice m = { "", 0 };
        if (!bulk_payload(p, (size_t)(end - p), &m)) m = (struct slice){ "", 0 };
        put_arg(b, m.ptr, m.len);
        p = (char *)m.ptr + m.len + 2;
        if (p > end) p = (char *)end;
    }
}

/* XADD's ID argument: the first after NOMKSTREAM, MAXLEN|MINID [=|~] n, LIMIT n. */
static int xadd_id_index(const struct cmd_ctx *c) {
    int i = 2;
    while (i < c->argc) {
        if (slice_eq_nocase(c->argv[i], "nomkstream")) i++;
        else if (slice_eq_nocase(c->argv[i], "maxlen") || slice_eq_nocase(c->argv[i], "minid")) {
            i++;
            if (i < c->argc && (c->argv[i].len == 1 && (c->argv[i].ptr[0] == '=' || c->argv[i].ptr[0] == '~'))) i++;
            i++;
        } else if (slice_eq_nocase(c->argv[i], "limit")) i += 2;
        else break;
    }
    return i;
}

static bool function_writes(const struct cmd_ctx *c, const char *r, size_t len) {
    if (c->argc < 2 || !slice_eq_nocase(c->argv[0], "function") || (len && r[0] == '-')) return false;
    return slice_eq_nocase(c->argv[1], "load") || slice_eq_nocase(c->argv[1], "delete") ||
           slice_eq_nocase(c->argv[1], "flush") || slice_eq_nocase(c->argv[1], "restore");
}

void aof_feed(struct cmd_ctx *c, const char *reply, size_t reply_len) {
    struct aof_writer *aw = self;
    if (!aw || (c->cmd->flags & CMD_SCRIPT)) return;   /* a script's commands are fed themselves */
    if (!c->dirty && !function_writes(c, reply, reply_len)) return;
    struct rbuf *b = record_start(aw, c->db);
    struct slice v;
    enum feed_kind kind = kind_of(c->cmd);
    switch (kind) {
    case FEED_EXPIRE:
        put_expiry(b, c, c->argv[1]);
        break;
    case FEED_SET:
        if (!set_has_relative_ttl(c)) {
            put_argv(b, c->argc, c->argv);
            break;
        }
        /* fall through */
    case FEED_SETEX: {
        /* SET key value ..., SETEX key seconds value */
        struct slice key = c->argv[1], value = c->argv[kind == FEED_SET ? 2 : 3];
        long long when = key_expiry(c, key);
        put_len(b, '*', when >= 0 ? 5 : 3);
        put_arg(b, "SET", 3);
        put_arg(b, key.ptr, key.len);
        put_arg(b, value.ptr, value.len);
        if (when >= 0) {
            put_arg(b, "PXAT", 4);
            put_ll(b, when);
        }
        break;
    }
    case FEED_SPOP:
        put_spop(b, c, reply, reply_len);
        break;
    case FEED_INCRBYFLOAT:
        if (!bulk_payload(reply, reply_len, &v)) break;
        put_len(b, '*', 4);
        put_arg(b, "SET", 3);
        put_arg(b, c->argv[1].ptr, c->argv[1].len);
        put_arg(b, v.ptr, v.len);
        put_arg(b, "KEEPTTL", 7);
        break;
    case FEED_HINCRBYFLOAT:
        if (!bulk_payload(reply, reply_len, &v)) break;
        put_len(b, '*', 4);
        put_arg(b, "HSET", 4);
        put_arg(b, c->argv[1].ptr, c->argv[1].len);
        put_arg(b, c->argv[2].ptr, c->argv[2].len);
        put_arg(b, v.ptr, v.len);
        break;
    case FEED_XADD: {
        int at = xadd_id_index(c);
        bool have_id = bulk_payload(reply, reply_len, &v);
        put_len(b, '*', (size_t)c->argc);
        for (int i = 0; i < c->argc; i++) {
            if (i == at && have_id) put_arg(b, v.ptr, v.len);
            else put_arg(b, c->argv[i].ptr, c->argv[i].len);
        }
        break;
    }
    case FEED_RESTORE: {
        bool absttl = false;
        for (int i = 4; i < c->argc; i++) absttl |= slice_eq_nocase(c->argv[i], "absttl");
        put_argv(b, c->argc, c->argv);
        if (!absttl && !(c->argv[2].len == 1 && c->argv[2].ptr[0] == '0')) put_expiry(b, c, c->argv[1]);
        break;
    }
    case FEED_ASIS:
        put_argv(b, c->argc, c->argv);
        break;
    }
}

/* ------------------------------------------------------------ the log */

static uint64_t aof_written(void) {
    uint64_t w = atomic_load(&L.reserved);
    for (unsigned i = 0; i < srv.nworkers; i++) {
        uint64_t p = atomic_load(&L.pending_low[i]);
        if (p < w) w = p;
    }
    return w;
}

/* Whether every write that completed without RWF_DSYNC is covered by an
 * fdatasync: then all that is written is durable (a write that completes
 * with RWF_DSYNC is). */
static bool plain_writes_synced(void) { return atomic_load(&L.plain_end) <= atomic_load(&L.fsynced); }

static void queue_op(struct aof_writer *aw, struct file_op *op) {
    op->next = NULL;
    *aw->ops_tail = op;
    aw->ops_tail = &op->next;
}

static void write_done(struct file_op *op, int res) {
    struct aof_write *wr = (struct aof_write *)op;
    struct aof_writer *aw = wr->aw;
    if (res < 0 || (res == 0 && op->len)) {
        if (policy() == AOF_FSYNC_ALWAYS) {
            rk_log(LL_WARNING, "Can't recover from AOF write error when the AOF fsync policy is 'always': %s. "
                               "Exiting...", strerror(res < 0 ? -res : ENOSPC));
            exit(1);
        }
        /* Redis retries a failed write; so do we, next iteration */
        atomic_store(&L.write_error, res < 0 ? -res : ENOSPC);
        queue_op(aw, op);
        return;
    }
    if ((size_t)res < op->len) {   /* the rest leaves as a new write */
        op->buf += res;
        op->len -= (size_t)res;
        op->off += (uint64_t)res;
        if (op->kind == FOP_WRITE_DSYNC) {
            op->kind = FOP_WRITE;
            aw->sync_inflight--;
        }
        queue_op(aw, op);
        return;
    }
    atomic_store(&L.write_error, 0);
    wr->done = true;
    uint64_t end = wr->lstart + wr->len;
    bool durable = op->kind == FOP_WRITE_DSYNC;
    /* before the written prefix can pass it: no one may take it for durable */
    if (!durable) atomic_max(&L.plain_end, end);
    while (aw->head && aw->head->done) {
        struct aof_write *h = aw->head;
        aw->head = h->next;
        free(h->data);
        free(h);
    }
    if (!aw->head) aw->tail = NULL;
    atomic_store(&L.pending_low[aw->id], aw->head ? aw->head->lstart : NONE);
    if (!durable) return;
    if (plain_writes_synced()) atomic_max(&L.synced, aof_written());
    aw->sync_inflight--;
    aw->synced_more = true;
}

static struct aof_write *seal(struct aof_writer *aw) {
    if (!aw->buf.len) return NULL;
    struct aof_file *f = atomic_load(&L.cur);
    if (!f) {   /* the log was turned off meanwhile */
        aw->buf.len = 0;
        aw->buf_db = -1;
        return NULL;
    }
    /* a lower bound before the add: aof_written never passes it unseen */
    if (!aw->head) atomic_store(&L.pending_low[aw->id], atomic_load(&L.reserved));
    uint64_t off = atomic_fetch_add(&L.reserved, aw->buf.len);
    struct aof_write *last = aw->tail;
    if (last && last->unsubmitted && last->lstart + last->len == off && last->op.fd == f->fd) {
        /* right behind a write held while our durable write is out: one write */
        last->data = rk_realloc(last->data, last->len + aw->buf.len);
        memcpy(last->data + last->len, aw->buf.buf, aw->buf.len);
        last->len += aw->buf.len;
        last->op.buf = last->data;
        last->op.len = last->len;
        aw->buf.len = 0;
        aw->buf_db = -1;
        return last;
    }
    struct aof_write *wr = rk_calloc(1, sizeof *wr);
    wr->aw = aw;
    wr->data = aw->buf.buf;
    wr->lstart = off;
    wr->len = aw->buf.len;
    wr->unsubmitted = true;
    wr->op = (struct file_op){ .kind = FOP_WRITE, .owner = FOP_AOF, .fd = f->fd, .buf = wr->data, .len = aw->buf.len,
                               .off = off - f->start, .done = write_done };
    aw->buf = (struct rbuf){ 0 };
    aw->buf_db = -1;
    if (aw->tail) aw->tail->next = wr;
    else aw->head = wr;
    aw->tail = wr;
    queue_op(aw, &wr->op);
    return wr;
}

void aof_seal(void) {
    if (self && self->buf.len) seal(self);
}

static void sync_done(struct file_op *op, int res) {
    struct aof_sync *s = (struct aof_sync *)((char *)(op - (op->off)) - offsetof(struct aof_sync, ops));
    if (res < 0) {
        if (policy() == AOF_FSYNC_ALWAYS) {
            rk_log(LL_WARNING, "Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. Exiting...",
                   strerror(-res));
            exit(1);
        }
        atomic_store(&L.write_error, -res);
    }
    if (res < 0) s->upto = 0;
    if (--s->left) return;
    atomic_max(&L.fsynced, s->upto);
    atomic_max(&L.synced, plain_writes_synced() ? aof_written() : s->upto);
    s->aw->synced_more = true;
    s->aw->sync_inflight--;
    atomic_fetch_sub(&L.syncs_in_flight, 1);
    free(s);
}

/* An fdatasync of every file holding bytes in [synced, upto), queued
 * after the writer's ops. */
static void start_sync(struct aof_writer *aw, uint64_t upto) {
    uint64_t from = atomic_load(&L.synced);
    unsigned n = 0;
    for (struct aof_file *f = atomic_load(&L.cur); f; f = f->older)
        if (atomic_load(&f->end) > from && f->start < upto) n++;
    if (!n) {   /* no open file holds such bytes */
        atomic_max(&L.fsynced, upto);
        return;
    }
    struct aof_sync *s = rk_calloc(1, sizeof *s + n * sizeof *s->ops);
    s->aw = aw;
    s->upto = upto;
    s->left = n;
    unsigned i = 0;
    for (struct aof_file *f = atomic_load(&L.cur); f; f = f->older)
        if (atomic_load(&f->end) > from && f->start < upto) {
            /* off carries the op's index: sync_done finds its aof_sync */
            s->ops[i] = (struct file_op){ .kind = FOP_FDATASYNC, .owner = FOP_AOF, .fd = f->fd, .off = i, .done = sync_done };
            queue_op(aw, &s->ops[i]);
            i++;
        }
    aw->sync_inflight++;
    atomic_fetch_add(&L.syncs_in_flight, 1);
}

/* appendfsync always, this worker's part of the group commit. Its writes
 * leave with RWF_DSYNC: each completes once its bytes are durable, in one
 * operation (a write linked to an fsync would wait for this thread's next
 * pass through the kernel between the two). One of them in flight at a
 * time: the records sealed meanwhile merge into one write that leaves when
 * it is back. Since every write completes durable, the written prefix is
 * the durable one (write_done). Writes that completed plain, before the
 * policy became always, get one fdatasync first. */
static void sync_always(struct aof_writer *aw) {
    if (aw->sync_inflight) return;
    uint64_t written = aof_written();
    if (atomic_load(&L.plain_end) > atomic_load(&L.fsynced)) {
        start_sync(aw, written);
        return;
    }
    for (struct file_op *op = aw->ops; op; op = op->next)
        if (op->kind == FOP_WRITE || op->kind == FOP_WRITE_DSYNC) {
            op->kind = FOP_WRITE_DSYNC;
            aw->sync_inflight++;
        }
}

/* everysec: worker 0, once a second, what is written. */
static void sync_written(struct aof_writer *aw) {
    uint64_t w = aof_written();
    if (w > atomic_load(&L.synced)) start_sync(aw, w);
}

/* Worker 0: a file no longer current whose bytes are all durable closes. */
static void close_old_files(void) {
    struct aof_file *cur = atomic_load(&L.cur);
    if (!cur) return;
    struct aof_file **at = &cur->older;
    while (*at) {
        struct aof_file *f = *at;
        if (atomic_load(&L.synced) >= atomic_load(&f->end) && aof_written() >= atomic_load(&f->end)) {
            *at = f->older;
            close(f->fd);
            free(f);
        } else {
            at = &f->older;
        }
    }
}

/* Worker 0: the files of a log turned off close once every write to them
 * is done and no fdatasync is in flight. */
static void close_closed_files(void) {
    if (atomic_load(&L.syncs_in_flight)) return;
    struct aof_file **at = &L.closed;
    while (*at) {
        struct aof_file *f = *at;
        if (aof_written() >= atomic_load(&f->end)) {
            *at = f->older;
            close(f->fd);
            free(f);
        } else {
            at = &f->older;
        }
    }
}

struct file_op *aof_iteration(struct aof_writer *aw, long long now_ms, uint64_t *wake) {
    *wake = 0;
    seal(aw);
    bool hold_ops = false;
    if (atomic_load(&L.cur)) {
        enum aof_fsync p = policy();
        /* no-appendfsync-on-rewrite: while a rewrite runs, as `no` (Redis
         * skips always's fsync then too) */
        bool hold = CONFIG_GET(no_appendfsync_on_rewrite) && aof_rewrite_in_progress();
        if (p == AOF_FSYNC_ALWAYS && !hold) {
            hold_ops = aw->sync_inflight;
            sync_always(aw);
        } else if (p == AOF_FSYNC_NO || hold) {
            /* nothing is fsynced: what is written counts (for closing files) */
            atomic_max(&L.synced, aof_written());
        } else if (aw->id == 0 && now_ms - aw->last_fsync_ms >= 1000) {
            if (aw->sync_inflight) {
                atomic_fetch_add(&L.delayed_fsync, 1);
            } else {
                aw->last_fsync_ms = now_ms;
                sync_written(aw);
            }
        }
        if (aw->id == 0) close_old_files();
    }
    if (aw->id == 0 && RK_UNLIKELY(L.closed != NULL)) close_closed_files();
    if (aw->synced_more) {
        aw->synced_more = false;
        uint64_t synced = atomic_load(&L.synced);
        for (unsigned i = 0; i < srv.nworkers; i++) {
            uint64_t g = atomic_load(&L.waiting[i]);
            if (g && g <= synced) *wake |= 1ull << i;
        }
    }
    if (hold_ops) return NULL;
    struct file_op *ops = aw->ops;
    aw->ops = NULL;
    aw->ops_tail = &aw->ops;
    for (struct aof_write *wr = aw->head; wr; wr = wr->next) wr->unsubmitted = false;
    return ops;
}

uint64_t aof_reply_gate(void) {
    if (!atomic_load_explicit(&L.cur, memory_order_relaxed) || policy() != AOF_FSYNC_ALWAYS) return 0;
    uint64_t r = atomic_load(&L.reserved);
    return r > atomic_load(&L.synced) ? r : 0;
}

bool aof_gate_passed(uint64_t gate) { return atomic_load(&L.synced) >= gate || !atomic_load(&L.cur); }

void aof_set_waiting(unsigned worker_id, uint64_t gate) { atomic_store(&L.waiting[worker_id], gate); }

bool aof_waiting_passed(unsigned worker_id) {
    uint64_t g = atomic_load(&L.waiting[worker_id]);
    return g && aof_gate_passed(g);
}

/* ------------------------------------------------------------ files */

/* Only the thread that holds every shard (or the finisher of the
 * rewrite's snapshot, or startup) changes the manifest. */
static struct {
    char dir[PATH_MAX];
    unsigned base_seq;           /* 0: no base */
    bool base_rdb;
    unsigned incr[16];           /* incremental files, oldest first */
    unsigned nincr;
    long long base_size;         /* bytes of the base at the last rewrite or start */
    long long fixed_size;        /* base and incremental files before the current one */
    /* rewrite */
    _Atomic bool rewriting, scheduled, last_rewrite_ok;
    _Atomic long long rewrite_start_ms, last_rewrite_secs, rewrites, failures;
    unsigned old_incr[16], nold;             /* the incremental files the rewrite replaces */
    unsigned new_base;
    bool new_base_rdb;
    uint64_t switch_at;
    struct snapshot_target target;
} M = { .last_rewrite_ok = true, .last_rewrite_secs = -1 };

static const char *base_kind(bool rdb) { return rdb ? "base.rdb" : "base.aof"; }

static void file_path(char *buf, size_t n, unsigned seq, const char *kind) {
    snprintf(buf, n, "%.2048s/%.255s.%u.%s", M.dir, rk_config.appendfilename, seq, kind);
}

static int manifest_write(struct rbuf *err) {
    char tmp[PATH_MAX + 32], path[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s/temp-%s.manifest", M.dir, rk_config.appendfilename);
    snprintf(path, sizeof path, "%s/%s.manifest", M.dir, rk_config.appendfilename);
    struct rbuf b = { 0 };
    char line[PATH_MAX];
    if (M.base_seq) {
        int k = snprintf(line, sizeof line, "file %s.%u.base.%s seq %u type b\n", rk_config.appendfilename,
                         M.base_seq, M.base_rdb ? "rdb" : "aof", M.base_seq);
        rbuf_append(&b, line, (size_t)k);
    }
    for (unsigned i = 0; i < M.nincr; i++) {
        int k = snprintf(line, sizeof line, "file %s.%u.incr.aof seq %u type i\n", rk_config.appendfilename,
                         M.incr[i], M.incr[i]);
        rbuf_append(&b, line, (size_t)k);
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int e = 0;
    if (fd < 0) e = errno;
    else {
        if (write(fd, b.buf, b.len) != (ssize_t)b.len) e = errno ? errno : EIO;
        if (!e && fsync(fd) != 0) e = errno;
        close(fd);
        if (!e && rename(tmp, path) != 0) e = errno;
    }
    rbuf_free(&b);
    if (e) {
        err->len = 0;
        char msg[PATH_MAX + 64];
        int k = snprintf(msg, sizeof msg, "Can't persist the AOF manifest %s: %s", path, strerror(e));
        rbuf_append(err, msg, (size_t)k);
        return -1;
    }
    return 0;
}

int aof_manifest_read(struct aof_manifest *m, struct rbuf *err) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s/%s.manifest", ".", rk_config.appenddirname, rk_config.appendfilename);
    FILE *fp = fopen(path, "r");
    memset(m, 0, sizeof *m);
    if (!fp) return errno == ENOENT ? 1 : (rbuf_append(err, "Can't open the AOF manifest", 27), -1);
    char line[PATH_MAX + 64];
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char name[PATH_MAX], type = 0;
        unsigned seq = 0;
        char k1[16], k2[16], k3[16];
        if (sscanf(line, "%15s %4095s %15s %u %15s %c", k1, name, k2, &seq, k3, &type) != 6 || strcmp(k1, "file") ||
            strcmp(k2, "seq") || strcmp(k3, "type")) {
            fclose(fp);
            rbuf_append(err, "Invalid AOF manifest file format", 32);
            return -1;
        }
        if (type == 'b') {
            m->base_seq = seq;
            m->base_rdb = strstr(name, ".rdb") != NULL;
            snprintf(m->base_name, sizeof m->base_name, "%.255s", name);
        } else if (type == 'i' && m->nincr < AOF_MAX_INCR) {
            m->incr_seq[m->nincr] = seq;
            snprintf(m->incr_name[m->nincr], sizeof m->incr_name[0], "%.255s", name);
            m->nincr++;
        }
    }
    fclose(fp);
    return 0;
}

static struct aof_file *file_open(unsigned seq, struct rbuf *err) {
    char path[PATH_MAX + 64];
    file_path(path, sizeof path, seq, "incr.aof");
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        err->len = 0;
        char msg[PATH_MAX + 96];
        int k = snprintf(msg, sizeof msg, "Can't open the append-only file %s: %s", path, strerror(errno));
        rbuf_append(err, msg, (size_t)k);
        if (fd >= 0) close(fd);
        return NULL;
    }
    struct aof_file *f = rk_calloc(1, sizeof *f);
    f->fd = fd;
    /* its bytes so far take the next logical range */
    f->start = atomic_fetch_add(&L.reserved, (uint64_t)st.st_size);
    atomic_store(&f->end, NONE);
    return f;
}

int aof_open(struct rbuf *err) {
    if (atomic_load(&L.cur)) return 0;
    char cwd[PATH_MAX / 2];
    if (!getcwd(cwd, sizeof cwd)) {
        rbuf_append(err, "getcwd failed", 13);
        return -1;
    }
    snprintf(M.dir, sizeof M.dir, "%s/%.*s", cwd, (int)(PATH_MAX / 2 - 2), rk_config.appenddirname);
    if (mkdir(M.dir, 0755) != 0 && errno != EEXIST) {
        char msg[PATH_MAX + 64];
        int k = snprintf(msg, sizeof msg, "Can't create the append-only directory %s: %s", M.dir, strerror(errno));
        rbuf_append(err, msg, (size_t)k);
        return -1;
    }
    struct aof_manifest m;
    int rc = aof_manifest_read(&m, err);
    if (rc < 0) return -1;
    M.base_seq = m.base_seq;
    M.base_rdb = m.base_rdb;
    M.nincr = m.nincr < 15 ? m.nincr : 15;
    for (unsigned i = 0; i < M.nincr; i++) M.incr[i] = m.incr_seq[i];
    M.fixed_size = 0;
    if (M.base_seq) {
        char path[PATH_MAX + 64];
        file_path(path, sizeof path, M.base_seq, base_kind(M.base_rdb));
        struct stat st;
        if (stat(path, &st) == 0) M.fixed_size = st.st_size;
    }
    M.base_size = M.fixed_size;
    bool fresh = M.nincr == 0;
    if (fresh) M.incr[M.nincr++] = (M.base_seq ? M.base_seq : 0) + 1;
    for (unsigned i = 0; i + 1 < M.nincr; i++) {
        char path[PATH_MAX + 64];
        file_path(path, sizeof path, M.incr[i], "incr.aof");
        struct stat st;
        if (stat(path, &st) == 0) M.fixed_size += st.st_size;
    }
    struct aof_file *f = file_open(M.incr[M.nincr - 1], err);
    if (!f) return -1;
    if (fresh && manifest_write(err) != 0) {
        close(f->fd);
        free(f);
        return -1;
    }
    uint64_t end = atomic_load(&L.reserved);
    M.switch_at = f->start;
    atomic_store(&L.synced, end);
    atomic_store(&L.cur, f);
    atomic_store(&rk_aof_on, true);
    return 0;
}

void aof_close(void) {
    atomic_store(&rk_aof_on, false);
    struct aof_file *f = atomic_load(&L.cur);
    if (!f) return;
    /* writes in flight keep their descriptors: the files wait on
     * L.closed until worker 0's AOF step sees them written, while a log
     * is on again (close_closed_files), or the process exits; the switch
     * runs on worker 0 too (cmd_aof_switch) */
    atomic_store(&f->end, atomic_load(&L.reserved));
    atomic_store(&L.cur, NULL);
    struct aof_file *last = f;
    while (last->older) last = last->older;
    last->older = L.closed;
    L.closed = f;
}

bool aof_rewrite_in_progress(void) { return atomic_load(&M.rewriting); }
void aof_rewrite_schedule(void) { atomic_store(&M.scheduled, true); }

bool aof_rewrite_due(void) {
    if (!atomic_load(&L.cur) || atomic_load(&M.rewriting)) return false;
    if (atomic_load(&M.scheduled)) return true;
    long long perc = CONFIG_GET(auto_aof_rewrite_percentage);
    long long size = M.fixed_size + (long long)(atomic_load(&L.reserved) - M.switch_at);
    if (!perc || size < CONFIG_GET(auto_aof_rewrite_min_size)) return false;
    long long base = M.base_size ? M.base_size : 1;
    return (size * 100 / base) - 100 >= perc;
}

static void remove_file(unsigned seq, const char *kind) {
    char path[PATH_MAX + 64];
    file_path(path, sizeof path, seq, kind);
    unlink(path);
}

/* The snapshot's file is in place as the new base (the finisher's thread). */
static void rewrite_done(bool ok, long long now_ms) {
    struct rbuf err = { 0 };
    if (ok) {
        unsigned keep[16], nkeep = 0;
        for (unsigned i = 0; i < M.nincr; i++) {
            bool old = false;
            for (unsigned j = 0; j < M.nold; j++) old |= M.incr[i] == M.old_incr[j];
            if (!old) keep[nkeep++] = M.incr[i];
        }
        unsigned old_base = M.base_seq;
        bool old_rdb = M.base_rdb;
        M.base_seq = M.new_base;
        M.base_rdb = M.new_base_rdb;
        memcpy(M.incr, keep, nkeep * sizeof *keep);
        M.nincr = nkeep;
        if (manifest_write(&err) != 0) {
            ok = false;
            rk_log(LL_WARNING, "%.*s", (int)err.len, err.buf);
        } else {
            if (old_base && !CONFIG_GET(aof_disable_auto_gc)) remove_file(old_base, base_kind(old_rdb));
            for (unsigned j = 0; j < M.nold && !CONFIG_GET(aof_disable_auto_gc); j++) remove_file(M.old_incr[j], "incr.aof");
            struct stat st;
            char path[PATH_MAX + 64];
            file_path(path, sizeof path, M.base_seq, base_kind(M.base_rdb));
            M.base_size = M.fixed_size = stat(path, &st) == 0 ? st.st_size : 0;
        }
    }
    if (!ok) remove_file(M.new_base, base_kind(M.new_base_rdb));
    rbuf_free(&err);
    atomic_store(&M.last_rewrite_ok, ok);
    atomic_store(&M.last_rewrite_secs, (now_ms - atomic_load(&M.rewrite_start_ms) + 500) / 1000);
    if (ok) atomic_store(&M.failures, 0), atomic_fetch_add(&M.rewrites, 1);
    else atomic_fetch_add(&M.failures, 1);
    if (ok) rk_log(LL_NOTICE, "Background AOF rewrite finished successfully");
    else rk_log(LL_WARNING, "Background AOF rewrite terminated with error");
    atomic_store(&M.rewriting, false);
}

/* A key of a base of commands (aof-use-rdb-preamble no): RESTORE of its
 * DUMP payload, its expiry absolute, after SELECT where needed. Any
 * server that loads AOF files replays it, and it is exact for every type
 * without a writer of commands per type. */
static void put_base_key(struct rbuf *b, long *last_db, unsigned db, const struct kv_entry *e, bool compress) {
    if (*last_db != (long)db) {
        put_select(b, (int)db);
        *last_db = db;
    }
    struct rbuf payload = { 0 };
    rdb_put_value(&payload, e, compress);
    rdb_payload_finish(&payload);
    bool ttl = entry_has_expire(e);
    put_len(b, '*', ttl ? 6 : 5);
    put_arg(b, "RESTORE", 7);
    put_arg(b, entry_key(e), entry_key_len(e));
    put_ll(b, ttl ? entry_expire(e) : 0);
    put_arg(b, payload.buf, payload.len);
    put_arg(b, "REPLACE", 7);
    if (ttl) put_arg(b, "ABSTTL", 6);
    rbuf_free(&payload);
}

void aof_put_command(struct rbuf *b, int argc, const struct slice *argv) { put_argv(b, argc, argv); }

void aof_put_timestamp(struct rbuf *b) {
    if (!CONFIG_GET(aof_timestamp_enabled)) return;
    char ts[32];
    int n = snprintf(ts, sizeof ts, "#TS:%lld\r\n", (long long)time(NULL));
    rbuf_append(b, ts, (size_t)n);
}

int aof_rewrite_begin(struct shard **shards, unsigned n, const struct rbuf *header, bool rdb, long long now_ms,
                      struct rbuf *err) {
    struct aof_file *cur = atomic_load(&L.cur);
    if (!cur || M.nincr >= 15) {
        rbuf_append(err, "the AOF is off", 14);
        return -1;
    }
    aof_seal();   /* the other shards' holders sealed theirs when they granted */
    unsigned seq = M.incr[M.nincr - 1] + 1;
    if (M.base_seq >= seq) seq = M.base_seq + 1;
    struct aof_file *f = file_open(seq, err);
    if (!f) return -1;
    M.nold = M.nincr;
    memcpy(M.old_incr, M.incr, M.nincr * sizeof *M.incr);
    M.incr[M.nincr++] = seq;
    if (manifest_write(err) != 0) {
        M.nincr--;
        close(f->fd);
        free(f);
        remove_file(seq, "incr.aof");
        return -1;
    }
    M.new_base = seq;
    M.new_base_rdb = rdb;
    snprintf(M.target.tmp, sizeof M.target.tmp, "%.2048s/temp-rewriteaof-bg-%d.aof", M.dir, (int)getpid());
    file_path(M.target.path, sizeof M.target.path, seq, base_kind(rdb));
    M.target.done = rewrite_done;
    M.target.put_key = rdb ? NULL : put_base_key;
    atomic_store(&M.rewriting, true);
    atomic_store(&M.scheduled, false);
    atomic_store(&M.rewrite_start_ms, now_ms);
    if (snapshot_begin(shards, n, header, now_ms, &M.target, err) != 0) {
        atomic_store(&M.rewriting, false);
        atomic_fetch_add(&M.failures, 1);
        atomic_store(&M.last_rewrite_ok, false);
        /* the new incremental file stays: records go there from now on */
    }
    M.switch_at = f->start;
    M.fixed_size = 0;
    for (unsigned i = 0; i + 1 < M.nincr; i++) {
        char path[PATH_MAX + 64];
        file_path(path, sizeof path, M.incr[i], "incr.aof");
        struct stat st;
        if (stat(path, &st) == 0) M.fixed_size += st.st_size;
    }
    M.fixed_size += M.base_size;
    f->older = cur;
    atomic_store(&cur->end, f->start);
    atomic_store(&L.cur, f);
    rk_log(LL_NOTICE, "Background append only file rewriting started");
    return atomic_load(&M.rewriting) ? 0 : -1;
}

void aof_flush_at_exit(void) {
    struct aof_file *f = atomic_load(&L.cur);
    if (!f) return;
    for (struct aof_file *g = f; g; g = g->older) fdatasync(g->fd);
}

void aof_info(struct rbuf *out, long long now_ms) {
    bool on = atomic_load(&L.cur) != NULL, rw = atomic_load(&M.rewriting);
    char buf[1024];
    int n = snprintf(buf, sizeof buf,
                     "aof_enabled:%d\r\naof_rewrite_in_progress:%d\r\naof_rewrite_scheduled:%d\r\n"
                     "aof_last_rewrite_time_sec:%lld\r\naof_current_rewrite_time_sec:%lld\r\n"
                     "aof_last_bgrewrite_status:%s\r\naof_rewrites:%lld\r\naof_rewrites_consecutive_failures:%lld\r\n"
                     "aof_last_write_status:%s\r\naof_last_cow_size:0\r\n",
                     on ? 1 : 0, rw ? 1 : 0, atomic_load(&M.scheduled) ? 1 : 0, atomic_load(&M.last_rewrite_secs),
                     rw ? (now_ms - atomic_load(&M.rewrite_start_ms)) / 1000 : -1LL,
                     atomic_load(&M.last_rewrite_ok) ? "ok" : "err", atomic_load(&M.rewrites),
                     atomic_load(&M.failures), atomic_load(&L.write_error) ? "err" : "ok");
    rbuf_append(out, buf, (size_t)n);
}

void aof_reset_stats(void) {
    atomic_store(&M.rewrites, 0);
    atomic_store(&M.failures, 0);
    atomic_store(&L.delayed_fsync, 0);
}

void aof_info_sizes(struct rbuf *out) {
    if (!atomic_load(&L.cur)) return;
    uint64_t reserved = atomic_load(&L.reserved);
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "aof_current_size:%lld\r\naof_base_size:%lld\r\naof_pending_rewrite:%d\r\n"
                     "aof_buffer_length:0\r\naof_pending_bio_fsync:%u\r\naof_delayed_fsync:%lld\r\n",
                     M.fixed_size + (long long)(reserved - M.switch_at), M.base_size,
                     atomic_load(&M.scheduled) ? 1 : 0, atomic_load(&L.syncs_in_flight),
                     atomic_load(&L.delayed_fsync));
    rbuf_append(out, buf, (size_t)n);
}
