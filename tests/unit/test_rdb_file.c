/*
 * Unit tests for RDB files (rdb_file.h) and CRC-64 combining (crc64.h).
 *
 * CRC: the check value of "123456789", and crc64_combine of random
 * buffers split at random points (empty, short, word-sized and 1 MiB
 * pieces) equals the CRC of the whole.
 * Round trips, model-based: random keys of every type (int, short and long
 * compressible strings, lists, intsets and other sets, hashes, sorted sets,
 * streams), in databases 0 and 5 with database 0 written in two SELECTDB
 * runs, some with an expiry to come, some already expired, after FUNCTION
 * records, with the checksum on or off. The loader must hand over every
 * live key exactly once with its database, expiry, type and value (the
 * value's bytes, rewritten, equal the original's), drop the expired ones
 * and pass the functions and RESIZEDB hints in order. Opcodes Redis writes
 * (FREQ, IDLE, EXPIRETIME in seconds, AUX between keys, version 9) load.
 * Rejections: wrong magic, versions 0 and 11, every single-byte change of
 * a checksummed file (none loads a key), every truncation, SELECTDB past
 * the databases, module aux data, LZF data that does not inflate. Fuzz:
 * garbage and mutated bodies after a valid header never crash (run under
 * ASan too, where nothing may leak). A key twice in one database reaches
 * the callback twice: the keyspace decides. A callback's false stops the
 * load with its message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/config.h"
#include "ringkv/crc64.h"
#include "ringkv/db.h"
#include "ringkv/entry.h"
#include "ringkv/hash_obj.h"
#include "ringkv/list_obj.h"
#include "ringkv/rdb_codec.h"
#include "ringkv/rdb_file.h"
#include "ringkv/rdb_load.h"
#include "ringkv/rdb_value.h"
#include "ringkv/set_obj.h"
#include "ringkv/stream.h"
#include "ringkv/zset_obj.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define NOW 1700000000000LL
#define DATABASES 16
#define S(lit) ((struct slice){ lit, sizeof lit - 1 })

/* ------------------------------------------------------------------ CRC */

static void test_crc64(void **state) {
    (void)state;
    assert_true(crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caULL);
    assert_true(crc64(0, "", 0) == 0);
    size_t max = (2u << 20) + 8;   /* two 1 MiB pieces from an unaligned start */
    unsigned char *buf = malloc(max);
    for (size_t i = 0; i < max; i++) buf[i] = (unsigned char)rnd();
    static const size_t fixed[] = { 0, 1, 7, 8, 9, 4096, 1u << 20 };
    for (int t = 0; t < 200; t++) {
        size_t a = t < 49 ? fixed[t / 7] : rnd() % (t % 10 ? 5000 : (1u << 20) + 1);
        size_t b = t < 49 ? fixed[t % 7] : rnd() % (t % 10 ? 5000 : (1u << 20) + 1);
        const unsigned char *p = buf + rnd() % 8;   /* unaligned starts too */
        uint64_t whole = crc64(0, p, a + b);
        assert_true(crc64(crc64(0, p, a), p + a, b) == whole);
        assert_true(crc64_combine(crc64(0, p, a), crc64(0, p + a, b), b) == whole);
    }
    free(buf);
}

/* --------------------------------------------------------------- values */

enum kind { K_INT, K_STR, K_LONG, K_LIST, K_INTSET, K_SET, K_HASH, K_ZSET, K_STREAM, NKINDS };

static struct slice text(char *buf, size_t cap, bool numeric) {
    if (numeric) snprintf(buf, cap, "%lld", (long long)(rnd() % 2000000) - 1000000);
    else snprintf(buf, cap, "m%llu-%.*s", (unsigned long long)(rnd() % 100000), (int)(rnd() % 40),
                  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    return (struct slice){ buf, strlen(buf) };
}

/* A value of kind k with n elements (past the listpack limits when big). */
static struct kv_entry *make_entry(struct slice key, enum kind k, size_t n, long long expire) {
    char a[64], b[64], big[3000];
    switch (k) {
    case K_INT: return entry_new_string(key, text(a, sizeof a, true), expire);
    case K_STR: return entry_new_string(key, text(a, sizeof a, false), expire);
    case K_LONG:
        memset(big, 'a' + (int)(rnd() % 26), sizeof big);
        return entry_new_string(key, (struct slice){ big, 100 + rnd() % 2900 }, expire);
    case K_LIST: {
        struct list_obj *l = list_new();
        for (size_t i = 0; i < n; i++) list_push(&l, text(a, sizeof a, rnd() % 2), true);
        list_grew(&l);
        return entry_new_obj(key, OBJ_LIST, l, expire);
    }
    case K_INTSET: case K_SET: {
        struct set_obj *s = NULL;
        for (size_t i = 0; i < n; i++) {
            struct slice m = text(a, sizeof a, k == K_INTSET || rnd() % 2);
            if (!s) s = set_obj_new(m, n);
            set_obj_add(&s, m);
        }
        return entry_new_obj(key, OBJ_SET, s, expire);
    }
    case K_HASH: {
        struct hash_obj *h = hash_new();
        for (size_t i = 0; i < n; i++) hash_set(&h, text(a, sizeof a, rnd() % 4 == 0), text(b, sizeof b, rnd() % 2));
        return entry_new_obj(key, OBJ_HASH, h, expire);
    }
    case K_ZSET: {
        struct zset_obj *z = zset_new();
        int out;
        for (size_t i = 0; i < n; i++)
            zset_add(&z, text(a, sizeof a, rnd() % 4 == 0), (double)(rnd() % 1000) / 7.0, 0, &out, NULL);
        return entry_new_obj(key, OBJ_ZSET, z, expire);
    }
    default: {
        struct stream *s = stream_new();
        struct stream_node_limits lim = { 4096, 100 };
        for (size_t i = 1; i <= n; i++) {
            struct slice fv[4] = { S("f"), text(a, sizeof a, true), S("g"), text(b, sizeof b, false) };
            stream_append(s, (struct stream_id){ i * 3, rnd() % 4 }, fv, rnd() % 3 ? 2 : 1, &lim);
        }
        struct stream_cg *cg = stream_cg_create(s, S("grp"), s->last_id, (long long)n);
        struct stream_consumer *c = stream_consumer_create(cg, S("alice"), 1000);
        struct stream_nack *nk = stream_nack_new(c, 5000);
        idtree_insert(cg->pel, s->last_id, nk);
        idtree_insert(c->pel, s->last_id, nk);
        return entry_new_obj(key, OBJ_STREAM, s, expire);
    }
    }
}

/* ---------------------------------------------------------------- model */

struct mkey {
    unsigned db;
    struct kv_entry *e;   /* the original */
    bool expired;
    int seen;             /* times the loader handed it over */
};

struct model {
    struct mkey *k;
    size_t n;
    const char *fn[3];
    size_t nfn, fn_seen;
    uint64_t sizes[3][2];   /* RESIZEDB: db, keys */
    size_t nsizes, resized;
    size_t calls;           /* key callbacks */
    bool cut;               /* loading a file cut short */
};

/* Sets and hashes in a hash table come back in another order: compared
 * by membership. The other types: their bytes, written again. */
static void check_value(struct slice key, struct rdb_value *v, const struct kv_entry *orig) {
    if (v->type == OBJ_SET) {
        assert_int_equal(set_obj_count(v->obj), set_obj_count(entry_obj(orig)));
        struct set_iter it;
        struct slice m;
        set_iter_init(&it, entry_obj(orig));
        while (set_iter_next(&it, &m)) assert_true(set_obj_contains(v->obj, m));
    } else if (v->type == OBJ_HASH) {
        assert_int_equal(hash_len(v->obj), hash_len(entry_obj(orig)));
        struct hash_iter it;
        struct slice f, val, got;
        char buf[HASH_BUF_SIZE];
        hash_iter_init(&it, entry_obj(orig));
        while (hash_iter_next(&it, &f, &val)) assert_true(hash_get(v->obj, f, &got, buf) && slice_eq(got, val));
    } else {
        struct rbuf want = { 0 }, got = { 0 };
        rdb_put_value(&want, orig, false);
        struct kv_entry *e = rdb_value_entry(key, v, NO_EXPIRE);
        rdb_put_value(&got, e, false);
        entry_free(e);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.buf, want.buf, got.len);
        rbuf_free(&want); rbuf_free(&got);
        return;
    }
    rdb_value_discard(v);
}

static bool on_key(void *ud, unsigned db, struct slice key, struct rdb_value *v, long long expire,
                   struct rbuf *err) {
    (void)err;
    struct model *m = ud;
    struct mkey *k = NULL;
    for (size_t i = 0; i < m->n && !k; i++)
        if (m->k[i].db == db && slice_eq(key, entry_key_slice(m->k[i].e))) k = &m->k[i];
    m->calls++;
    if (!k) fail_msg("key \"%.*s\" of db %u is not in the model", (int)key.len, key.ptr, db);
    assert_false(k->expired);
    assert_int_equal(v->type, entry_type(k->e));
    assert_true(expire == entry_expire(k->e));
    check_value(key, v, k->e);
    k->seen++;
    return true;
}

static bool on_function(void *ud, struct slice code, struct rbuf *err) {
    (void)err;
    struct model *m = ud;
    assert_true(m->fn_seen < m->nfn);
    assert_true(slice_eq(code, (struct slice){ m->fn[m->fn_seen], strlen(m->fn[m->fn_seen]) }));
    m->fn_seen++;
    return true;
}

static void on_resize(void *ud, unsigned db, uint64_t keys) {
    struct model *m = ud;
    assert_true(m->resized < m->nsizes);
    assert_true(db == m->sizes[m->resized][0]);
    /* the hint as written, or less in a file cut short: the loader caps
     * it by what the rest of the file can hold */
    assert_true(keys == m->sizes[m->resized][1] || (m->cut && keys < m->sizes[m->resized][1]));
    m->resized++;
}

/* For corrupt input: whatever arrives must be a sane key and free cleanly. */
static bool on_any_key(void *ud, unsigned db, struct slice key, struct rdb_value *v, long long expire,
                       struct rbuf *err) {
    (void)ud, (void)err;
    assert_true(db < DATABASES);
    assert_true(expire == NO_EXPIRE || expire >= NOW);
    entry_free(rdb_value_entry(key, v, expire));
    return true;
}

/* Keys cycle through the kinds; big ones pass the listpack limits. */
static void model_init(struct model *m, size_t n, bool big) {
    static const char *fns[] = { "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)",
                                 "#!lua name=lib2\nreturn", "" };
    memset(m, 0, sizeof *m);
    m->k = calloc(n, sizeof *m->k);
    m->n = n;
    m->nfn = rnd() % 4;
    for (size_t i = 0; i < m->nfn; i++) m->fn[i] = fns[i];
    for (size_t i = 0; i < n; i++) {
        char name[32] = "";   /* and one empty key */
        if (i) snprintf(name, sizeof name, "key:%zu", i);
        int r = (int)(rnd() % 7);
        long long expire = r < 3 ? NO_EXPIRE : r < 5 ? NOW + 1 + (long long)(rnd() % 1000000)
                         : r < 6 ? NOW - 1 - (long long)(rnd() % 1000000) : NOW + 1 - (long long)(rnd() % 3);
        size_t elems = big && rnd() % 2 ? 129 + rnd() % 600 : 1 + rnd() % 20;
        m->k[i].db = rnd() % 2 ? 0 : 5;
        m->k[i].e = make_entry((struct slice){ name, strlen(name) }, (enum kind)(i % NKINDS), elems, expire);
        m->k[i].expired = expire != NO_EXPIRE && expire < NOW;   /* NOW itself is live */
    }
}

static void model_free(struct model *m) {
    for (size_t i = 0; i < m->n; i++) entry_free(m->k[i].e);
    free(m->k);
}

static void put_db(struct rbuf *b, struct model *m, unsigned db, size_t from, size_t to, bool compress) {
    uint64_t keys = 0;
    for (size_t i = from; i < to; i++) keys += m->k[i].db == db;
    m->sizes[m->nsizes][0] = db;
    m->sizes[m->nsizes++][1] = keys;
    rdb_put_selectdb(b, db);
    rdb_put_resizedb(b, keys, 0);
    for (size_t i = from; i < to; i++)
        if (m->k[i].db == db) rdb_put_key(b, m->k[i].e, compress);
}

/* Header, functions, db 0 (first half), db 5, db 0 again (second half). */
static void build_file(struct rbuf *b, struct model *m, bool checksum, bool compress) {
    rdb_put_header(b, NOW, 12345);
    for (size_t i = 0; i < m->nfn; i++) rdb_put_function(b, (struct slice){ m->fn[i], strlen(m->fn[i]) });
    m->nsizes = 0;
    put_db(b, m, 0, 0, m->n / 2, compress);
    put_db(b, m, 5, 0, m->n, compress);
    put_db(b, m, 0, m->n / 2, m->n, compress);
    rdb_put_trailer(b, crc64(0, b->buf, b->len), checksum);
}

/* Load from a copy of exactly len bytes, so that ASan sees any overread. */
static bool load_with(const char *p, size_t len, const struct rdb_load_ops *ops, struct rbuf *err) {
    char *copy = malloc(len ? len : 1);
    if (len) memcpy(copy, p, len);
    err->len = 0;
    bool ok = rdb_load(copy, len, DATABASES, NOW, ops, err);
    free(copy);
    if (!ok) assert_true(err->len > 0);
    return ok;
}

static bool load(const char *p, size_t len, struct model *m, struct rbuf *err) {
    struct rdb_load_ops ops = { .ud = m, .key = on_key, .function = on_function, .resize = on_resize };
    m->calls = m->fn_seen = m->resized = 0;
    return load_with(p, len, &ops, err);
}

static void test_round_trip_model(void **state) {
    (void)state;
    for (int iter = 0; iter < 60; iter++) {
        struct model m;
        model_init(&m, NKINDS * (1 + rnd() % 4), iter % 10 == 0);
        struct rbuf b = { 0 }, err = { 0 };
        bool checksum = iter % 3 != 0;
        build_file(&b, &m, checksum, rnd() % 2);
        if (!checksum) assert_true(rdb_load_le((unsigned char *)b.buf + b.len - 8, 8) == 0);
        assert_true(load(b.buf, b.len, &m, &err));
        size_t live = 0;
        for (size_t i = 0; i < m.n; i++) {
            assert_int_equal(m.k[i].seen, m.k[i].expired ? 0 : 1);
            live += !m.k[i].expired;
        }
        assert_int_equal(m.calls, live);
        assert_int_equal(m.fn_seen, m.nfn);
        assert_int_equal(m.resized, 3);
        rbuf_free(&b); rbuf_free(&err);
        model_free(&m);
    }
}

static bool stop_at_first(void *ud, unsigned db, struct slice key, struct rdb_value *v, long long expire,
                          struct rbuf *err) {
    (void)db, (void)key, (void)expire;
    rdb_value_discard(v);
    ((struct model *)ud)->calls++;
    rbuf_append(err, "stop", 4);
    return false;
}

/* What Redis writes and ours does not: FREQ, IDLE, EXPIRETIME in seconds,
 * AUX between keys, an older version. A callback's false stops the load. */
static void test_redis_opcodes(void **state) {
    (void)state;
    struct mkey keys[3] = {
        { 2, entry_new_string(S("a"), S("x"), (NOW / 1000 + 100) * 1000), false, 0 },
        { 2, entry_new_string(S("b"), S("y"), (NOW / 1000 - 100) * 1000), true, 0 },
        { 2, entry_new_string(S("c"), S("12"), NO_EXPIRE), false, 0 },
    };
    struct model m = { .k = keys, .n = 3 };
    struct rbuf b = { 0 }, err = { 0 };
    rdb_put_header(&b, NOW, 0);
    memcpy(b.buf, "REDIS0009", 9);
    rdb_put_selectdb(&b, 2);
    for (int i = 0; i < 3; i++) {
        static const unsigned char lfu_lru[] = { RDB_OPCODE_FREQ, 7, RDB_OPCODE_IDLE, 0x41, 0x2c };
        rbuf_append(&b, lfu_lru, sizeof lfu_lru);
        long long s = entry_expire(keys[i].e) / 1000;
        unsigned char exp[5] = { RDB_OPCODE_EXPIRETIME, (unsigned char)s, (unsigned char)(s >> 8),
                                 (unsigned char)(s >> 16), (unsigned char)(s >> 24) };
        if (entry_has_expire(keys[i].e)) rbuf_append(&b, exp, sizeof exp);
        rdb_put_key_value(&b, keys[i].e, false);
        rbuf_append(&b, "\xfa\x03lua\x02ok", 8);   /* AUX lua=ok */
    }
    rdb_put_trailer(&b, crc64(0, b.buf, b.len), true);
    assert_true(load(b.buf, b.len, &m, &err));
    assert_int_equal(m.calls, 2);
    assert_int_equal(keys[0].seen + keys[2].seen, 2);

    struct rdb_load_ops stop = { .ud = &m, .key = stop_at_first };
    m.calls = 0;
    assert_false(load_with(b.buf, b.len, &stop, &err));
    assert_int_equal(m.calls, 1);
    assert_int_equal(err.len, 4);
    assert_memory_equal(err.buf, "stop", 4);
    for (int i = 0; i < 3; i++) entry_free(keys[i].e);
    rbuf_free(&b); rbuf_free(&err);
}

/* ----------------------------------------------------------- rejections */

static void expect_refused(const char *p, size_t len, const char *msg) {
    struct model m = { 0 };
    struct rbuf err = { 0 };
    assert_false(load(p, len, &m, &err));
    rbuf_append(&err, "", 1);
    if (!strstr(err.buf, msg)) fail_msg("error \"%s\", wanted \"%s\"", err.buf, msg);
    rbuf_free(&err);
}

static void test_header_refused(void **state) {
    (void)state;
    static const char *const bad[][2] = {
        { "REDIX", "Wrong signature" }, { "redis", "Wrong signature" }, { "REDIS001a", "Wrong signature" },
        { "REDIS0011", "Can't handle RDB format version 11" }, { "REDIS0000", "Can't handle RDB format version 0" },
        { "REDIS9999", "Can't handle RDB format version 9999" },
    };
    struct model m = { 0 };
    struct rbuf b = { 0 }, err = { 0 };
    rdb_put_header(&b, NOW, 0);
    rdb_put_trailer(&b, 0, false);
    assert_true(load(b.buf, b.len, &m, &err));   /* an empty file loads */
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memcpy(b.buf, bad[i][0], strlen(bad[i][0]));
        expect_refused(b.buf, b.len, bad[i][1]);
        memcpy(b.buf, "REDIS0010", 9);
    }
    expect_refused(b.buf, 5, "Wrong signature");
    rbuf_free(&b); rbuf_free(&err);
}

/* Every single-byte change of a checksummed file is refused, and before
 * any key or function loads: by the CRC, or by the magic or version check.
 * A changed EOF opcode leaves no trailer to check first: that file is
 * parsed, then refused at its end (as Redis does). */
static void test_flipped_bytes(void **state) {
    (void)state;
    struct model m;
    model_init(&m, 2 * NKINDS, false);
    struct rbuf b = { 0 }, err = { 0 };
    build_file(&b, &m, true, true);
    for (size_t pos = 0; pos < b.len; pos++) {
        char saved = b.buf[pos];
        b.buf[pos] = (char)(saved ^ (1 + rnd() % 255));
        assert_false(load(b.buf, b.len, &m, &err));
        b.buf[pos] = saved;
        rbuf_append(&err, "", 1);
        if (pos == b.len - RDB_TRAILER_LEN) continue;
        assert_int_equal(m.calls + m.fn_seen + m.resized, 0);
        if (pos >= 9 && !strstr(err.buf, "Wrong RDB checksum"))
            fail_msg("byte %zu of %zu: \"%s\"", pos, b.len, err.buf);
    }
    model_free(&m);
    rbuf_free(&b); rbuf_free(&err);
}

/* Every prefix of a file written without checksum (so that the loader has
 * to parse it) is refused. */
static void test_truncated(void **state) {
    (void)state;
    struct model m;
    model_init(&m, NKINDS, false);
    m.nfn = 2;
    m.fn[0] = m.fn[1] = "#!lua name=x\n";
    struct rbuf b = { 0 }, err = { 0 };
    build_file(&b, &m, false, true);
    m.cut = true;
    for (size_t n = 0; n < b.len; n++) assert_false(load(b.buf, n, &m, &err));
    m.cut = false;
    assert_true(load(b.buf, b.len, &m, &err));
    model_free(&m);
    rbuf_free(&b); rbuf_free(&err);
}

static void test_opcodes_refused(void **state) {
    (void)state;
    struct rbuf b = { 0 };
    rdb_put_header(&b, NOW, 0);
    rdb_put_selectdb(&b, DATABASES - 1);
    size_t at = b.len;
    rdb_put_selectdb(&b, DATABASES);
    rdb_put_trailer(&b, crc64(0, b.buf, b.len), true);
    expect_refused(b.buf, b.len, "more than 16 databases");

    b.len = at;
    static const unsigned char module_aux[] = { RDB_OPCODE_MODULE_AUX, 0x81, 0, 0, 0, 0, 0, 0, 0, 1, 2 };
    rbuf_append(&b, module_aux, sizeof module_aux);
    rdb_put_trailer(&b, crc64(0, b.buf, b.len), true);
    expect_refused(b.buf, b.len, "AUX module data");

    b.len = at;
    static const unsigned char function_rc[] = { RDB_OPCODE_FUNCTION, 0 };
    rbuf_append(&b, function_rc, sizeof function_rc);
    rdb_put_trailer(&b, 0, false);
    expect_refused(b.buf, b.len, "Pre-release function format");
    rbuf_free(&b);
}

/* A string value whose LZF data does not inflate: refused, and (under
 * ASan) nothing the failed read allocated may be left behind. */
static void test_corrupt_lzf(void **state) {
    (void)state;
    struct rbuf b = { 0 };
    rdb_put_header(&b, NOW, 0);
    rdb_put_selectdb(&b, 0);
    /* string "k": LZF, 2 bytes of data for 60, a back-reference before the start */
    rbuf_append(&b, "\x00\x01k\xc3\x02\x3c\xff\xff", 8);
    rdb_put_trailer(&b, crc64(0, b.buf, b.len), true);
    expect_refused(b.buf, b.len, "Bad data format");
    rbuf_free(&b);
}

/* A key twice in one database: the loader hands over both (the keyspace
 * decides what a duplicate means). */
static void test_duplicate_key(void **state) {
    (void)state;
    struct mkey key = { 3, entry_new_string(S("dup"), S("one"), NO_EXPIRE), false, 0 };
    struct model m = { .k = &key, .n = 1 };
    struct rbuf b = { 0 }, err = { 0 };
    rdb_put_header(&b, NOW, 0);
    rdb_put_selectdb(&b, 3);
    rdb_put_key(&b, key.e, false);
    rdb_put_key(&b, key.e, true);
    rdb_put_trailer(&b, crc64(0, b.buf, b.len), true);
    assert_true(load(b.buf, b.len, &m, &err));
    assert_int_equal(m.calls, 2);
    assert_int_equal(key.seen, 2);
    entry_free(key.e);
    rbuf_free(&b); rbuf_free(&err);
}

/* RESIZEDB's hint comes from the file: a huge one (corrupt, or hostile)
 * is capped by what the rest of the file can hold, so loading it into real
 * tables neither allocates for it nor aborts (found by fuzz_rdb_load). */
static uint64_t hinted;
static void on_resize_any(void *ud, unsigned db, uint64_t keys) {
    (void)ud, (void)db;
    hinted = keys;
}

static void test_resize_hint_capped(void **state) {
    (void)state;
    struct rbuf b = { 0 }, err = { 0 };
    rdb_put_header(&b, NOW, 0);
    rdb_put_selectdb(&b, 0);
    rdb_put_resizedb(&b, 1ULL << 62, 1ULL << 62);
    size_t rest_at = b.len;
    struct kv_entry *e = entry_new_string(S("k"), S("v"), NO_EXPIRE);
    rdb_put_key(&b, e, false);
    entry_free(e);
    rdb_put_trailer(&b, crc64(0, b.buf, b.len), true);

    struct rdb_load_ops ops = { .key = on_any_key, .resize = on_resize_any };
    hinted = UINT64_MAX;
    assert_true(load_with(b.buf, b.len, &ops, &err));
    assert_true(hinted <= (b.len - rest_at) / 3);

    /* into a shard's tables, as at startup */
    struct shard s;
    struct shard *ptrs[1] = { &s };
    slots_assign(1);
    shard_init(&s, 0, DATABASES);
    size_t keys = 0;
    assert_int_equal(rdb_load_image(ptrs, 1, b.buf, b.len, false, NULL, NOW, &keys, &err), 0);
    assert_int_equal(keys, 1);
    assert_true(table_memory(&s.dbs[0].table) < 4096);
    shard_destroy(&s);
    rbuf_free(&b); rbuf_free(&err);
}

/* Garbage (biased to opcodes), or a valid body with bytes changed, after a
 * valid header and without checksum: refused or loaded, never a crash or
 * a leak. */
static void test_fuzz(void **state) {
    (void)state;
    struct model m;
    model_init(&m, NKINDS, false);
    struct rbuf valid = { 0 }, hdr = { 0 }, f = { 0 }, err = { 0 };
    build_file(&valid, &m, false, rnd() % 2);
    rdb_put_header(&hdr, NOW, 0);
    struct rdb_load_ops ops = { .ud = &m, .key = on_any_key };
    size_t refused = 0;
    for (int iter = 0; iter < 2000; iter++) {
        f.len = 0;
        if (iter % 2) {
            rbuf_append(&f, valid.buf, valid.len);
            for (int j = 1 + (int)(rnd() % 4); j > 0; j--) {
                size_t pos = hdr.len + rnd() % (valid.len - hdr.len);
                f.buf[pos] = (char)(rnd() % 3 ? (int)(rnd() & 0xff) : f.buf[pos] ^ (1 << rnd() % 8));
            }
        } else {
            rbuf_append(&f, hdr.buf, hdr.len);
            for (size_t n = rnd() % 300; n > 0; n--) {
                unsigned char c = (unsigned char)(rnd() % 4 ? rnd() : 245 + rnd() % 11);
                rbuf_append(&f, &c, 1);
            }
        }
        refused += !load_with(f.buf, f.len, &ops, &err);
    }
    assert_true(refused > 1000);   /* the pure garbage, half the inputs, is refused */
    model_free(&m);
    rbuf_free(&valid); rbuf_free(&hdr); rbuf_free(&f); rbuf_free(&err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc64),
        cmocka_unit_test(test_round_trip_model),
        cmocka_unit_test(test_redis_opcodes),
        cmocka_unit_test(test_header_refused),
        cmocka_unit_test(test_flipped_bytes),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_opcodes_refused),
        cmocka_unit_test(test_corrupt_lzf),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_resize_hint_capped),
        cmocka_unit_test(test_fuzz),
    };
    config_set_defaults();   /* Redis's encoding limits */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
