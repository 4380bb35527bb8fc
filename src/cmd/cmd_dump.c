/*
 * DUMP and RESTORE: a key's value as Redis's serialized payload (an RDB
 * value, rdb_value.h, then rdb_codec.h's version and CRC-64 trailer), so
 * payloads move between ringkv and Redis both ways.
 */
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/entry.h"
#include "ringkv/stamp.h"
#include "ringkv/notify.h"
#include "ringkv/rdb_codec.h"
#include "ringkv/rdb_value.h"
#include "ringkv/reply.h"

#include <stdlib.h>

/* DUMP key */
void cmd_dump(struct cmd_ctx *c) {
    struct kv_entry *e = db_lookup(c, c->argv[1], LOOKUP_READ);
    if (!e) {
        reply_null(&c->r);
        return;
    }
    struct rbuf b = { 0 };
    rdb_put_value(&b, e, CONFIG_GET(rdbcompression));
    rdb_payload_finish(&b);
    reply_bulk(&c->r, b.buf, b.len);
    rbuf_free(&b);
}

struct restore_args {
    bool replace, absttl;
    long long idle, freq;      /* -1: not given */
};

/* Redis's option loop: IDLETIME and FREQ exclude each other. */
static bool restore_args_or_reply(struct cmd_ctx *c, struct restore_args *a) {
    *a = (struct restore_args){ .idle = -1, .freq = -1 };
    for (int j = 4; j < c->argc; j++) {
        bool more = j + 1 < c->argc;
        if (slice_eq_nocase(c->argv[j], "replace")) {
            a->replace = true;
        } else if (slice_eq_nocase(c->argv[j], "absttl")) {
            a->absttl = true;
        } else if (slice_eq_nocase(c->argv[j], "idletime") && more && a->freq == -1) {
            if (!arg_ll_or_reply(c, c->argv[++j], &a->idle)) return false;
            if (a->idle < 0) return reply_error(&c->r, "ERR Invalid IDLETIME value, must be >= 0"), false;
        } else if (slice_eq_nocase(c->argv[j], "freq") && more && a->idle == -1) {
            if (!arg_ll_or_reply(c, c->argv[++j], &a->freq)) return false;
            if (a->freq < 0 || a->freq > 255)
                return reply_error(&c->r, "ERR Invalid FREQ value, must be >= 0 and <= 255"), false;
        } else {
            return reply_error(&c->r, ERR_SYNTAX), false;
        }
    }
    return true;
}

/* RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f] */
void cmd_restore(struct cmd_ctx *c) {
    struct restore_args a;
    if (!restore_args_or_reply(c, &a)) return;
    struct slice key = c->argv[1];
    if (!a.replace && db_lookup(c, key, LOOKUP_NONE)) {
        reply_error(&c->r, "BUSYKEY Target key name already exists.");
        return;
    }
    long long ttl;
    if (!arg_ll_or_reply(c, c->argv[2], &ttl)) return;
    if (ttl < 0) {
        reply_error(&c->r, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    struct slice payload = c->argv[3];
    size_t body;
    if (!rdb_payload_verify(payload.ptr, payload.len, &body)) {
        reply_error(&c->r, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    const char *p = payload.ptr;
    struct rdb_value v;
    if (!rdb_get_value(&p, payload.ptr + body, &v)) {
        reply_error(&c->r, "ERR Bad data format");
        return;
    }
    bool deleted = a.replace && db_delete(c, key);
    if (ttl && !a.absttl) ttl += c->now_ms;
    if (ttl && ttl <= c->now_ms) {
        /* already expired: as Redis, the old key goes and nothing is made */
        if (deleted) notify(c, NOTIFY_GENERIC, "del", key);
        rdb_value_discard(&v);
        reply_ok(&c->r);
        return;
    }
    struct kv_entry *e = rdb_value_entry(key, &v, ttl ? ttl : NO_EXPIRE);
    uint32_t stamp;
    if (stamp_for_restore(a.idle, a.freq, c->now_ms, &stamp)) entry_set_stamp(e, stamp);
    db_insert(c, e);
    notify(c, NOTIFY_GENERIC, "restore", key);
    reply_ok(&c->r);
}
