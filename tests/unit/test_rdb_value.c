/*
 * Unit tests for RDB values (rdb_value.h).
 *
 * Round trips: random lists, sets (integers only, and mixed), hashes and
 * sorted sets, small and past the listpack limits, are written, read back
 * and compared element by element with the model they were built from.
 * Redis's bytes: payloads that redis-server 7.0 wrote with DUMP (quicklist
 * 2 of a listpack, intset, listpack hash and sorted set, int-encoded
 * string) read into the values they hold. A hand-built ziplist and zipmap
 * read as Redis 6 and 2.x wrote them. Corruption: every prefix of every
 * payload is refused, and single-byte changes never crash (under ASan) and
 * either refuse or yield a value that frees cleanly. Duplicates and empty
 * collections are refused.
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
#include "ringkv/entry.h"
#include "ringkv/hash_obj.h"
#include "ringkv/list_obj.h"
#include "ringkv/rdb_codec.h"
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

#define KEY ((struct slice){ "k", 1 })

/* Serialize e and read it back. */
static struct rdb_value round_trip(struct kv_entry *e) {
    struct rbuf b = { 0 };
    rdb_put_value(&b, e, rnd() % 2);
    const char *p = b.buf;
    struct rdb_value v;
    assert_true(rdb_get_value(&p, b.buf + b.len, &v));
    assert_ptr_equal(p, b.buf + b.len);
    rbuf_free(&b);
    return v;
}

static void random_text(char *buf, size_t cap, bool numeric) {
    if (numeric) snprintf(buf, cap, "%lld", (long long)(rnd() % 2000000) - 1000000);
    else snprintf(buf, cap, "m%llu-%.*s", (unsigned long long)(rnd() % 100000), (int)(rnd() % 40),
                  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

static void test_string_round_trip(void **state) {
    (void)state;
    const char *vals[] = { "", "12345", "-7", "0123", "hello", "a much longer value aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        struct slice s = { vals[i], strlen(vals[i]) };
        struct kv_entry *e = entry_new_string(KEY, s, NO_EXPIRE);
        struct rdb_value v = round_trip(e);
        assert_int_equal(v.type, OBJ_STRING);
        assert_int_equal(v.str.len, s.len);
        assert_memory_equal(v.str.buf, s.ptr, s.len);
        rdb_value_discard(&v);
        entry_free(e);
    }
}

static void test_list_round_trip(void **state) {
    (void)state;
    size_t sizes[] = { 1, 5, 129, 3000 };
    for (size_t t = 0; t < 4; t++) {
        struct list_obj *l = list_new();
        char (*model)[64] = calloc(sizes[t], 64);
        for (size_t i = 0; i < sizes[t]; i++) {
            random_text(model[i], 64, rnd() % 2);
            list_push(&l, (struct slice){ model[i], strlen(model[i]) }, true);
        }
        list_grew(&l);
        struct kv_entry *e = entry_new_obj(KEY, OBJ_LIST, l, NO_EXPIRE);
        struct rdb_value v = round_trip(e);
        assert_int_equal(v.type, OBJ_LIST);
        assert_int_equal(list_len(v.obj), sizes[t]);
        struct list_iter it;
        struct lp_value x;
        char buf[LP_INTBUF_SIZE];
        assert_true(list_iter_init(&it, v.obj, 0, false));
        for (size_t i = 0; list_iter_next(&it, &x); i++) {
            struct slice s = list_value_str(&x, buf);
            assert_int_equal(s.len, strlen(model[i]));
            assert_memory_equal(s.ptr, model[i], s.len);
        }
        rdb_value_discard(&v);
        entry_free(e);
        free(model);
    }
}

static void test_set_round_trip(void **state) {
    (void)state;
    size_t sizes[] = { 1, 10, 600 };
    for (size_t t = 0; t < 3; t++) {
        for (int numeric = 0; numeric < 2; numeric++) {
            struct set_obj *s = NULL;
            for (size_t i = 0; i < sizes[t]; i++) {
                char m[64];
                random_text(m, sizeof m, numeric);
                struct slice ms = { m, strlen(m) };
                if (!s) s = set_obj_new(ms, sizes[t]);
                set_obj_add(&s, ms);
            }
            struct kv_entry *e = entry_new_obj(KEY, OBJ_SET, s, NO_EXPIRE);
            struct rdb_value v = round_trip(e);
            assert_int_equal(v.type, OBJ_SET);
            const struct set_obj *orig = entry_obj(e);
            assert_int_equal(set_obj_count(v.obj), set_obj_count(orig));
            assert_int_equal(set_obj_enc(v.obj), set_obj_enc(orig));
            struct set_iter it;
            struct slice m;
            set_iter_init(&it, orig);
            while (set_iter_next(&it, &m)) assert_true(set_obj_contains(v.obj, m));
            rdb_value_discard(&v);
            entry_free(e);
        }
    }
}

static void test_hash_round_trip(void **state) {
    (void)state;
    size_t sizes[] = { 1, 20, 700 };
    for (size_t t = 0; t < 3; t++) {
        struct hash_obj *h = hash_new();
        for (size_t i = 0; i < sizes[t]; i++) {
            char f[64], val[64];
            random_text(f, sizeof f, rnd() % 4 == 0);
            random_text(val, sizeof val, rnd() % 2);
            hash_set(&h, (struct slice){ f, strlen(f) }, (struct slice){ val, strlen(val) });
        }
        struct kv_entry *e = entry_new_obj(KEY, OBJ_HASH, h, NO_EXPIRE);
        struct rdb_value v = round_trip(e);
        assert_int_equal(v.type, OBJ_HASH);
        const struct hash_obj *orig = entry_obj(e);
        assert_int_equal(hash_len(v.obj), hash_len(orig));
        assert_int_equal(hash_is_listpack(v.obj), hash_is_listpack(orig));
        struct hash_iter it;
        struct slice f, val, got;
        char buf[HASH_BUF_SIZE];
        hash_iter_init(&it, orig);
        while (hash_iter_next(&it, &f, &val)) {
            assert_true(hash_get(v.obj, f, &got, buf));
            assert_int_equal(got.len, val.len);
            assert_memory_equal(got.ptr, val.ptr, val.len);
        }
        rdb_value_discard(&v);
        entry_free(e);
    }
}

static void test_zset_round_trip(void **state) {
    (void)state;
    size_t sizes[] = { 1, 20, 300 };
    for (size_t t = 0; t < 3; t++) {
        struct zset_obj *z = zset_new();
        for (size_t i = 0; i < sizes[t]; i++) {
            char m[64];
            random_text(m, sizeof m, rnd() % 4 == 0);
            double score = rnd() % 3 ? (double)(rnd() % 1000) / 7.0 : (double)(int)(rnd() % 100);
            if (rnd() % 50 == 0) score = (rnd() % 2) ? 1.0 / 0.0 : -1.0 / 0.0;
            int out;
            zset_add(&z, (struct slice){ m, strlen(m) }, score, 0, &out, NULL);
        }
        struct kv_entry *e = entry_new_obj(KEY, OBJ_ZSET, z, NO_EXPIRE);
        struct rdb_value v = round_trip(e);
        assert_int_equal(v.type, OBJ_ZSET);
        const struct zset_obj *orig = entry_obj(e);
        assert_int_equal(zset_len(v.obj), zset_len(orig));
        assert_int_equal(zset_is_listpack(v.obj), zset_is_listpack(orig));
        struct zset_it a, b;
        zset_it_rank(&a, orig, 0);
        zset_it_rank(&b, v.obj, 0);
        for (; a.valid; zset_it_next(&a), zset_it_next(&b)) {
            assert_true(b.valid);
            struct slice ma = zset_it_member(&a), mb = zset_it_member(&b);
            assert_int_equal(ma.len, mb.len);
            assert_memory_equal(ma.ptr, mb.ptr, ma.len);
            assert_true(zset_it_score_of(&a) == zset_it_score_of(&b));
        }
        rdb_value_discard(&v);
        entry_free(e);
    }
}

static void expect_same_stream(const struct stream *a, const struct stream *b) {
    assert_true(stream_check(b));
    assert_int_equal(a->length, b->length);
    assert_int_equal(a->entries_added, b->entries_added);
    assert_true(stream_id_cmp(a->last_id, b->last_id) == 0);
    assert_true(stream_id_cmp(a->first_id, b->first_id) == 0);
    assert_true(stream_id_cmp(a->max_deleted_id, b->max_deleted_id) == 0);
    struct stream_iter ia, ib;
    struct stream_id x, y;
    long long nx, ny;
    stream_iter_start(&ia, a, STREAM_ID_MIN, STREAM_ID_MAX, false);
    stream_iter_start(&ib, b, STREAM_ID_MIN, STREAM_ID_MAX, false);
    while (stream_iter_next(&ia, &x, &nx)) {
        assert_true(stream_iter_next(&ib, &y, &ny));
        assert_true(stream_id_cmp(x, y) == 0);
        assert_int_equal(nx, ny);
        for (long long f = 0; f < nx; f++) {
            struct lp_value fa, va, fb, vb;
            char b1[LP_INTBUF_SIZE], b2[LP_INTBUF_SIZE], b3[LP_INTBUF_SIZE], b4[LP_INTBUF_SIZE];
            stream_iter_field(&ia, &fa, &va);
            stream_iter_field(&ib, &fb, &vb);
            struct slice s1 = lp_value_str(&fa, b1), s2 = lp_value_str(&fb, b2);
            struct slice s3 = lp_value_str(&va, b3), s4 = lp_value_str(&vb, b4);
            assert_int_equal(s1.len, s2.len);
            assert_memory_equal(s1.ptr, s2.ptr, s1.len);
            assert_int_equal(s3.len, s4.len);
            assert_memory_equal(s3.ptr, s4.ptr, s3.len);
        }
    }
    assert_false(stream_iter_next(&ib, &y, &ny));
    assert_int_equal(a->ngroups, b->ngroups);
    for (size_t g = 0; g < a->ngroups; g++) {
        const struct stream_cg *ga = a->groups[g], *gb = b->groups[g];
        assert_int_equal(ga->name.len, gb->name.len);
        assert_memory_equal(ga->name.ptr, gb->name.ptr, ga->name.len);
        assert_true(stream_id_cmp(ga->last_id, gb->last_id) == 0);
        assert_int_equal(ga->entries_read, gb->entries_read);
        assert_int_equal(idtree_count(ga->pel), idtree_count(gb->pel));
        assert_int_equal(ga->nconsumers, gb->nconsumers);
        struct idtree_iter it;
        void *v;
        idtree_seek(&it, ga->pel, STREAM_ID_MIN);
        while (idtree_next(&it, &x, &v)) {
            const struct stream_nack *na = v, *nb = idtree_find(gb->pel, x);
            assert_non_null(nb);
            assert_int_equal(na->delivery_time, nb->delivery_time);
            assert_int_equal(na->delivery_count, nb->delivery_count);
            assert_int_equal(na->consumer->name.len, nb->consumer->name.len);
            assert_memory_equal(na->consumer->name.ptr, nb->consumer->name.ptr, na->consumer->name.len);
        }
        for (size_t c = 0; c < ga->nconsumers; c++)
            assert_int_equal(ga->consumers[c]->seen_time, gb->consumers[c]->seen_time);
    }
}

/* Streams with entries that share the master's fields and entries that do
 * not, deletions, several nodes, and groups with pending entries. */
static void test_stream_round_trip(void **state) {
    (void)state;
    struct stream_node_limits lim = { 4096, 100 };
    for (int round = 0; round < 4; round++) {
        struct stream *s = stream_new();
        int n = round == 0 ? 0 : round * 150;
        for (int i = 1; i <= n; i++) {
            char v1[32], v2[32];
            snprintf(v1, sizeof v1, "%d", (int)(rnd() % 100000) - 50000);
            snprintf(v2, sizeof v2, "value-%llu", (unsigned long long)rnd());
            const char *g = rnd() % 5 ? "g" : "other";
            struct slice fv[4] = { { "f", 1 }, { v1, strlen(v1) }, { g, strlen(g) }, { v2, strlen(v2) } };
            stream_append(s, (struct stream_id){ (uint64_t)i * 3, rnd() % 4 }, fv, rnd() % 3 ? 2 : 1, &lim);
        }
        for (int i = 0; i < n / 10; i++) {
            struct stream_iter it;
            struct stream_id id;
            long long nf;
            stream_iter_start(&it, s, (struct stream_id){ rnd() % (3 * (uint64_t)n + 1), 0 }, STREAM_ID_MAX, false);
            if (stream_iter_next(&it, &id, &nf)) stream_delete(s, id);
        }
        if (round >= 2) {
            struct stream_cg *cg = stream_cg_create(s, (struct slice){ "grp", 3 }, s->last_id, 7);
            stream_cg_create(s, (struct slice){ "empty", 5 }, STREAM_ID_MIN, STREAM_ENTRIES_READ_INVALID);
            struct stream_consumer *c1 = stream_consumer_create(cg, (struct slice){ "alice", 5 }, 1000);
            struct stream_consumer *c2 = stream_consumer_create(cg, (struct slice){ "bob", 3 }, 2000);
            stream_consumer_create(cg, (struct slice){ "idle", 4 }, 3000);
            for (int i = 0; i < 30; i++) {
                struct stream_id id = { rnd() % (3 * (uint64_t)n), rnd() % 4 };
                struct stream_consumer *c = i % 2 ? c1 : c2;
                struct stream_nack *nk = stream_nack_new(c, 5000 + i);
                nk->delivery_count = 1 + rnd() % 5;
                if (!idtree_insert(cg->pel, id, nk)) {
                    free(nk);
                    continue;
                }
                idtree_insert(c->pel, id, nk);
            }
        }
        struct kv_entry *e = entry_new_obj(KEY, OBJ_STREAM, s, NO_EXPIRE);
        struct rdb_value v = round_trip(e);
        assert_int_equal(v.type, OBJ_STREAM);
        expect_same_stream(entry_obj(e), v.obj);
        rdb_value_discard(&v);
        entry_free(e);
    }
}

/* Payloads redis-server 7.0.15 gave for DUMP. */
struct vector {
    const char *name;
    const char *bytes;
    size_t len;
};
#define V(n, s) { n, s, sizeof s - 1 }
static const struct vector redis_dumps[] = {
    /* RPUSH l a b 1 -2 300 70000: quicklist 2, one listpack node */
    V("list", "\x12\x01\x02\x1a\x1a\x00\x00\x00\x06\x00\x81\x61\x02\x81\x62\x02\x01\x01\xdf\xfe\x02\xc1\x2c\x02"
              "\xf2\x70\x11\x01\x04\xff\x0a\x00\xba\xf1\x90\xb8\x48\x0f\xd2\x92"),
    /* SADD si 1 2 -3: intset */
    V("intset", "\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\xfd\xff\x01\x00\x02\x00\x0a\x00\xd1\xb7\x8e\xd9\xbc\x07"
                "\xc2\x7f"),
    /* SADD ss a b: plain set */
    V("set", "\x02\x02\x01\x62\x01\x61\x0a\x00\x75\xd9\x9d\x83\x5e\xf8\x5f\x65"),
    /* HSET h f v g 12: listpack */
    V("hash", "\x10\x12\x12\x00\x00\x00\x04\x00\x81\x66\x02\x81\x76\x02\x81\x67\x02\x0c\x01\xff\x0a\x00\xde\x13"
              "\x39\x93\xf7\x83\x81\x7e"),
    /* ZADD z 1 a 2.5 b: listpack */
    V("zset", "\x11\x14\x14\x00\x00\x00\x04\x00\x81\x61\x02\x01\x01\x81\x62\x02\x83\x32\x2e\x35\x04\xff\x0a\x00"
              "\xd4\x4c\x6e\xa4\xf6\x44\xd9\xd7"),
    /* XADD s 1-1 f v1 g 1, 2-1 f v2 g 2, 3-1 h x; XDEL s 2-1; XGROUP CREATE s g 0;
     * XREADGROUP GROUP g c COUNT 1 STREAMS s > (rdbcompression no) */
    V("stream", "\x13\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x40\x41\x41\x00"
                "\x00\x00\x19\x00\x02\x01\x01\x01\x02\x01\x81\x66\x02\x81\x67\x02\x00\x01\x02\x01\x00\x01\x00"
                "\x01\x82\x76\x31\x03\x01\x01\x05\x01\x03\x01\x01\x01\x00\x01\x82\x76\x32\x03\x02\x01\x05\x01"
                "\x00\x01\x02\x01\x00\x01\x01\x01\x81\x68\x02\x81\x78\x02\x06\x01\xff\x02\x03\x01\x01\x01\x02"
                "\x01\x03\x01\x01\x67\x01\x01\x81\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00\x00\x00\x00\x00\x00"
                "\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x93\x51\xc7\x0b\xa2\x01\x00\x00\x01\x01\x01\x63\x93"
                "\x51\xc7\x0b\xa2\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
                "\x01\x0a\x00\x45\x51\x03\xef\xf7\x72\x00\x10"),
    /* SET n 12345: int-encoded string */
    V("string", "\x00\xc1\x39\x30\x0a\x00\x9d\x94\xea\x27\x93\xfc\x08\xb9"),
};

static struct rdb_value read_payload(const struct vector *x) {
    size_t body;
    assert_true(rdb_payload_verify(x->bytes, x->len, &body));
    const char *p = x->bytes;
    struct rdb_value v;
    assert_true(rdb_get_value(&p, x->bytes + body, &v));
    assert_ptr_equal(p, x->bytes + body);
    return v;
}

static void expect_list(const struct rdb_value *v, const char *const *want, size_t n) {
    assert_int_equal(v->type, OBJ_LIST);
    assert_int_equal(list_len(v->obj), n);
    struct list_iter it;
    struct lp_value x;
    char buf[LP_INTBUF_SIZE];
    assert_true(list_iter_init(&it, v->obj, 0, false));
    for (size_t i = 0; i < n; i++) {
        assert_true(list_iter_next(&it, &x));
        struct slice s = list_value_str(&x, buf);
        assert_int_equal(s.len, strlen(want[i]));
        assert_memory_equal(s.ptr, want[i], s.len);
    }
}

static void test_redis_payloads(void **state) {
    (void)state;
    struct rdb_value v = read_payload(&redis_dumps[0]);
    const char *list[] = { "a", "b", "1", "-2", "300", "70000" };
    expect_list(&v, list, 6);
    rdb_value_discard(&v);

    v = read_payload(&redis_dumps[1]);
    assert_int_equal(v.type, OBJ_SET);
    assert_int_equal(set_obj_enc(v.obj), SET_ENC_INTSET);
    assert_int_equal(set_obj_count(v.obj), 3);
    assert_true(set_obj_contains(v.obj, (struct slice){ "-3", 2 }));
    rdb_value_discard(&v);

    v = read_payload(&redis_dumps[2]);
    assert_int_equal(set_obj_count(v.obj), 2);
    assert_true(set_obj_contains(v.obj, (struct slice){ "a", 1 }));
    rdb_value_discard(&v);

    v = read_payload(&redis_dumps[3]);
    assert_int_equal(v.type, OBJ_HASH);
    struct slice got;
    char buf[HASH_BUF_SIZE];
    assert_true(hash_get(v.obj, (struct slice){ "g", 1 }, &got, buf));
    assert_int_equal(got.len, 2);
    assert_memory_equal(got.ptr, "12", 2);
    rdb_value_discard(&v);

    v = read_payload(&redis_dumps[4]);
    assert_int_equal(v.type, OBJ_ZSET);
    double score;
    assert_true(zset_score(v.obj, (struct slice){ "b", 1 }, &score));
    assert_true(score == 2.5);
    rdb_value_discard(&v);

    v = read_payload(&redis_dumps[5]);
    assert_int_equal(v.type, OBJ_STREAM);
    const struct stream *st = v.obj;
    assert_int_equal(st->length, 2);
    assert_int_equal(st->entries_added, 3);
    assert_true(stream_id_cmp(st->max_deleted_id, (struct stream_id){ 2, 1 }) == 0);
    assert_true(stream_has_entry(st, (struct stream_id){ 3, 1 }));
    assert_false(stream_has_entry(st, (struct stream_id){ 2, 1 }));
    assert_int_equal(st->ngroups, 1);
    assert_int_equal(st->groups[0]->entries_read, STREAM_ENTRIES_READ_INVALID);
    assert_int_equal(idtree_count(st->groups[0]->pel), 1);
    assert_int_equal(st->groups[0]->nconsumers, 1);
    assert_memory_equal(st->groups[0]->consumers[0]->name.ptr, "c", 1);
    rdb_value_discard(&v);

    v = read_payload(&redis_dumps[6]);
    assert_int_equal(v.type, OBJ_STRING);
    assert_int_equal(v.str.len, 5);
    assert_memory_equal(v.str.buf, "12345", 5);
    rdb_value_discard(&v);
}

/* A ziplist list (RDB_TYPE_LIST_ZIPLIST) of "ab", 7 and -300, and a
 * zipmap hash (RDB_TYPE_HASH_ZIPMAP) {f: "vv"}, as older Redis wrote them. */
static void test_old_encodings(void **state) {
    (void)state;
    static const unsigned char zl[] = {
        0x15, 0, 0, 0,  0x0f, 0, 0, 0,  3, 0,     /* bytes 21, tail 15, count 3 */
        0x00, 0x02, 'a', 'b',                     /* prevlen 0, 6-bit string */
        0x04, 0xf8,                               /* imm 7 */
        0x02, 0xc0, 0xd4, 0xfe,                   /* int16 -300 */
        0xff,
    };
    unsigned char buf[64] = { 0 };
    buf[0] = RDB_TYPE_LIST_ZIPLIST;
    buf[1] = sizeof zl;
    memcpy(buf + 2, zl, sizeof zl);
    const char *p = (const char *)buf;
    struct rdb_value v;
    assert_true(rdb_get_value(&p, (const char *)buf + 2 + sizeof zl, &v));
    const char *want[] = { "ab", "7", "-300" };
    expect_list(&v, want, 3);
    rdb_value_discard(&v);

    static const unsigned char zm[] = { 1, 1, 'f', 2, 0, 'v', 'v', 0xff };
    buf[0] = RDB_TYPE_HASH_ZIPMAP;
    buf[1] = sizeof zm;
    memcpy(buf + 2, zm, sizeof zm);
    p = (const char *)buf;
    assert_true(rdb_get_value(&p, (const char *)buf + 2 + sizeof zm, &v));
    assert_int_equal(v.type, OBJ_HASH);
    struct slice got;
    char hb[HASH_BUF_SIZE];
    assert_true(hash_get(v.obj, (struct slice){ "f", 1 }, &got, hb));
    assert_int_equal(got.len, 2);
    rdb_value_discard(&v);
}

static void test_refused(void **state) {
    (void)state;
    /* duplicates and empty collections */
    static const char dup_set[] = "\x02\x02\x01\x61\x01\x61";
    static const char dup_hash[] = "\x04\x02\x01\x66\x01\x31\x01\x66\x01\x32";
    static const char dup_zset[] = "\x05\x02\x01\x61\x00\x00\x00\x00\x00\x00\xf0\x3f\x01\x61\x00\x00\x00\x00\x00\x00\xf0\x3f";
    static const char empty_list[] = "\x01\x00";
    static const char unknown[] = "\x07\x00";
    const struct vector bad[] = { V("dup set", dup_set), V("dup hash", dup_hash), V("dup zset", dup_zset),
                                  V("empty", empty_list), V("type 7", unknown) };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *p = bad[i].bytes;
        struct rdb_value v;
        assert_false(rdb_get_value(&p, bad[i].bytes + bad[i].len, &v));
        assert_ptr_equal(p, bad[i].bytes);
    }
}

/* Empty strings as values, members, fields and scores' members: the
 * reader's buffer for them never held a byte (its buf is NULL), which must
 * not reach memcpy or the hash functions as a NULL pointer (found by
 * fuzz_rdb_load). Each loads, becomes an entry and writes back the same. */
static void test_empty_strings(void **state) {
    (void)state;
    static const char str[] = "\x00\x00";
    static const char list[] = "\x01\x02\x00\x00";
    static const char set[] = "\x02\x02\x00\x01\x61";
    static const char set_int[] = "\x02\x02\x00\x01\x37";   /* "" is no integer: a listpack set */
    static const char hash[] = "\x04\x02\x00\x00\x01\x66\x00";
    static const char zset[] = "\x05\x01\x00\x00\x00\x00\x00\x00\x00\xf0\x3f";
    static const char zset_text[] = "\x03\x01\x00\x01\x31";
    const struct vector ok[] = { V("string", str), V("list", list), V("set", set), V("set of ints", set_int),
                                 V("hash", hash), V("zset", zset), V("zset, text score", zset_text) };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        const char *p = ok[i].bytes;
        struct rdb_value v;
        assert_true(rdb_get_value(&p, ok[i].bytes + ok[i].len, &v));
        assert_ptr_equal(p, ok[i].bytes + ok[i].len);
        struct kv_entry *e = rdb_value_entry(KEY, &v, NO_EXPIRE);
        struct rdb_value back = round_trip(e);
        rdb_value_discard(&back);
        entry_free(e);
    }
}

/* Every prefix of every payload body is refused; every single-byte change
 * is refused or gives a value that frees cleanly. */
static void test_corruption(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof redis_dumps / sizeof *redis_dumps; i++) {
        const struct vector *x = &redis_dumps[i];
        size_t body = x->len - RDB_PAYLOAD_TRAILER;
        char *copy = malloc(body);
        for (size_t n = 0; n < body; n++) {
            memcpy(copy, x->bytes, n);
            const char *p = copy;
            struct rdb_value v;
            assert_false(rdb_get_value(&p, copy + n, &v));
        }
        for (size_t pos = 0; pos < body; pos++) {
            for (int k = 0; k < 16; k++) {
                memcpy(copy, x->bytes, body);
                copy[pos] = (char)(k < 8 ? copy[pos] ^ (1 << k) : (int)(rnd() & 0xff));
                const char *p = copy;
                struct rdb_value v;
                if (rdb_get_value(&p, copy + body, &v)) rdb_value_discard(&v);
            }
        }
        free(copy);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_round_trip),
        cmocka_unit_test(test_list_round_trip),
        cmocka_unit_test(test_set_round_trip),
        cmocka_unit_test(test_hash_round_trip),
        cmocka_unit_test(test_zset_round_trip),
        cmocka_unit_test(test_stream_round_trip),
        cmocka_unit_test(test_redis_payloads),
        cmocka_unit_test(test_old_encodings),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_empty_strings),
        cmocka_unit_test(test_corruption),
    };
    config_set_defaults();   /* Redis's encoding limits */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
