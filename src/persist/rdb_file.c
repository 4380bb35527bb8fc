/*
 * RDB files (rdb_file.h): the framing around rdb_value.h's keys.
 *
 * The loader takes the whole file image, so every read is a bounds-checked
 * step of a cursor, never a short read to retry. The checksum is checked
 * before any key is handed over when the file ends at its trailer (as
 * every file Redis or ringkv writes does), so a corrupt file loads nothing;
 * otherwise at the EOF opcode, as Redis does.
 */
#include "ringkv/rdb_file.h"

#include <stdio.h>
#include <string.h>

#include "ringkv/crc64.h"
#include "ringkv/entry.h"
#include "ringkv/rdb_codec.h"

/* The version Redis 7.0.15 reports in its aux fields: loaders compare
 * against it, and tools show it. */
#define RDB_AUX_REDIS_VER "7.0.15"

/* ---------------------------------------------------------------- writing */

static void put_byte(struct rbuf *b, unsigned char c) { rbuf_append(b, &c, 1); }

static void put_aux(struct rbuf *b, const char *name, const char *value) {
    put_byte(b, RDB_OPCODE_AUX);
    rdb_put_string(b, name, strlen(name), false);
    rdb_put_string(b, value, strlen(value), false);
}

void rdb_put_header(struct rbuf *b, long long now_ms, size_t used_mem) {
    char magic[16], num[32];
    snprintf(magic, sizeof magic, "REDIS%04d", RDB_VERSION);
    rbuf_append(b, magic, 9);
    put_aux(b, "redis-ver", RDB_AUX_REDIS_VER);
    snprintf(num, sizeof num, "%d", (int)(sizeof(void *) * 8));
    put_aux(b, "redis-bits", num);
    snprintf(num, sizeof num, "%lld", now_ms / 1000);
    put_aux(b, "ctime", num);
    snprintf(num, sizeof num, "%zu", used_mem);
    put_aux(b, "used-mem", num);
    put_aux(b, "aof-base", "0");
}

void rdb_put_function(struct rbuf *b, struct slice code) {
    put_byte(b, RDB_OPCODE_FUNCTION2);
    rdb_put_string(b, code.ptr, code.len, false);
}

void rdb_put_selectdb(struct rbuf *b, unsigned db) {
    put_byte(b, RDB_OPCODE_SELECTDB);
    rdb_put_len(b, db);
}

void rdb_put_resizedb(struct rbuf *b, uint64_t keys, uint64_t expires) {
    put_byte(b, RDB_OPCODE_RESIZEDB);
    rdb_put_len(b, keys);
    rdb_put_len(b, expires);
}

void rdb_put_key(struct rbuf *b, const struct kv_entry *e, bool compress) {
    if (entry_has_expire(e)) {
        put_byte(b, RDB_OPCODE_EXPIRETIME_MS);
        rdb_put_u64(b, (uint64_t)entry_expire(e));
    }
    rdb_put_key_value(b, e, compress);
}

void rdb_put_trailer(struct rbuf *b, uint64_t crc, bool checksum) {
    unsigned char eof = RDB_OPCODE_EOF;
    put_byte(b, eof);
    rdb_put_u64(b, checksum ? crc64(crc, &eof, 1) : 0);
}

/* ---------------------------------------------------------------- loading */

static bool fail(struct rbuf *err, const char *msg) {
    err->len = 0;
    rbuf_append(err, msg, strlen(msg));
    return false;
}

/* Redis's two messages: a checksum of 0 means the writer had it off. */
static bool checksum_ok(const char *p, size_t eof_at, uint64_t stored, struct rbuf *err) {
    if (stored == 0) return true;
    uint64_t crc = crc64(0, p, eof_at + 1);
    if (crc == stored) return true;
    char msg[128];
    snprintf(msg, sizeof msg, "Wrong RDB checksum expected: (%llx) got (%llx). Aborting now.",
             (unsigned long long)stored, (unsigned long long)crc);
    return fail(err, msg);
}

struct load_state {
    const char *start, *p, *end;
    unsigned databases, db;
    int version;
    long long now_ms;
    long long expire_at;       /* NO_EXPIRE, or the next key's */
    bool crc_checked;
    struct rbuf key;
};

#define TRUNCATED "Unexpected EOF reading RDB file"

static bool load_key(struct load_state *st, unsigned char type, const struct rdb_load_ops *ops, struct rbuf *err) {
    st->key.len = 0;
    struct rdb_value v;
    if (!rdb_get_string(&st->p, st->end, &st->key) || !rdb_get_object(&st->p, st->end, type, &v))
        return fail(err, st->p >= st->end ? TRUNCATED : "Bad data format reading a key of the RDB file");
    long long expire_at = st->expire_at;
    st->expire_at = NO_EXPIRE;
    if (expire_at != NO_EXPIRE && expire_at < st->now_ms) {   /* as a master loading: expired keys go */
        rdb_value_discard(&v);
        return true;
    }
    struct slice key = { st->key.buf ? st->key.buf : "", st->key.len };
    return ops->key(ops->ud, st->db, key, &v, expire_at, err);
}

static bool load_aux(struct load_state *st, struct rbuf *err) {
    struct rbuf skip = { 0 };
    bool ok = rdb_get_string(&st->p, st->end, &skip) && rdb_get_string(&st->p, st->end, &skip);
    rbuf_free(&skip);
    return ok || fail(err, TRUNCATED);
}

static bool load_function(struct load_state *st, const struct rdb_load_ops *ops, struct rbuf *err) {
    struct rbuf code = { 0 };
    bool ok = rdb_get_string(&st->p, st->end, &code);
    if (ok && ops->function) ok = ops->function(ops->ud, (struct slice){ code.buf ? code.buf : "", code.len }, err);
    else if (!ok) fail(err, TRUNCATED);
    rbuf_free(&code);
    return ok;
}

/* One opcode or key; *done at EOF (after the checksum). */
static bool load_one(struct load_state *st, const struct rdb_load_ops *ops, bool *done, struct rbuf *err) {
    if (st->p >= st->end) return fail(err, TRUNCATED);
    unsigned char type = (unsigned char)*st->p++;
    uint64_t a, b;
    switch (type) {
    case RDB_OPCODE_EXPIRETIME:
        if (st->end - st->p < 4) return fail(err, TRUNCATED);
        st->expire_at = (long long)(int32_t)rdb_load_le((const unsigned char *)st->p, 4) * 1000;   /* signed, as Redis */
        st->p += 4;
        return true;
    case RDB_OPCODE_EXPIRETIME_MS:
        if (!rdb_get_u64(&st->p, st->end, &a)) return fail(err, TRUNCATED);
        st->expire_at = (long long)a;
        return true;
    case RDB_OPCODE_FREQ:
        if (st->p >= st->end) return fail(err, TRUNCATED);
        st->p++;
        return true;
    case RDB_OPCODE_IDLE:
        return rdb_get_len(&st->p, st->end, &a, NULL) || fail(err, TRUNCATED);
    case RDB_OPCODE_SELECTDB:
        if (!rdb_get_len(&st->p, st->end, &a, NULL)) return fail(err, TRUNCATED);
        if (a >= st->databases) {
            char msg[160];
            snprintf(msg, sizeof msg, "Data file was created with a Redis server configured to handle "
                                      "more than %u databases", st->databases);
            return fail(err, msg);
        }
        st->db = (unsigned)a;
        return true;
    case RDB_OPCODE_RESIZEDB:
        if (!rdb_get_len(&st->p, st->end, &a, NULL) || !rdb_get_len(&st->p, st->end, &b, NULL))
            return fail(err, TRUNCATED);
        /* Only a hint, and the input's: no more keys than the rest of the
         * file can hold (each takes a type byte, a name and a value, three
         * bytes at least), or a corrupt hint would size the tables for
         * billions of keys and abort the load on an allocation. */
        if (a > (uint64_t)(st->end - st->p) / 3) a = (uint64_t)(st->end - st->p) / 3;
        if (ops->resize) ops->resize(ops->ud, st->db, a);
        return true;
    case RDB_OPCODE_AUX:
        return load_aux(st, err);
    case RDB_OPCODE_MODULE_AUX:
        return fail(err, "The RDB file contains AUX module data I can't load: no matching module");
    case RDB_OPCODE_FUNCTION:
        return fail(err, "Pre-release function format not supported.");
    case RDB_OPCODE_FUNCTION2:
        return load_function(st, ops, err);
    case RDB_OPCODE_EOF:
        *done = true;
        if (st->version < 5 || st->crc_checked) return true;
        if (!rdb_get_u64(&st->p, st->end, &a)) return fail(err, TRUNCATED);
        return checksum_ok(st->start, (size_t)(st->p - 8 - 1 - st->start), a, err);
    default:
        return load_key(st, type, ops, err);
    }
}

bool rdb_load(const char *p, size_t len, unsigned databases, long long now_ms, const struct rdb_load_ops *ops,
              struct rbuf *err) {
    if (len < 9 || memcmp(p, "REDIS", 5) != 0) return fail(err, "Wrong signature trying to load DB from file");
    int version = 0;
    for (int i = 5; i < 9; i++) {
        if (p[i] < '0' || p[i] > '9') return fail(err, "Wrong signature trying to load DB from file");
        version = version * 10 + (p[i] - '0');
    }
    if (version < 1 || version > RDB_VERSION) {
        char msg[64];
        snprintf(msg, sizeof msg, "Can't handle RDB format version %d", version);
        return fail(err, msg);
    }
    struct load_state st = { .start = p, .p = p + 9, .end = p + len, .databases = databases,
                             .version = version, .now_ms = now_ms, .expire_at = NO_EXPIRE };
    /* A file that ends with its trailer is checked before anything loads. */
    if (version >= 5 && len >= 9 + RDB_TRAILER_LEN && (unsigned char)p[len - RDB_TRAILER_LEN] == RDB_OPCODE_EOF) {
        uint64_t stored = rdb_load_le((const unsigned char *)p + len - 8, 8);
        if (!checksum_ok(p, len - RDB_TRAILER_LEN, stored, err)) return false;
        st.crc_checked = true;
    }
    bool done = false, ok = true;
    while (ok && !done) ok = load_one(&st, ops, &done, err);
    rbuf_free(&st.key);
    return ok;
}
