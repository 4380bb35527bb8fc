/*
 * Unit tests for the hash value object (hash_obj.h): basic operations in
 * both encodings, integer-looking fields and values (stored as integers by
 * the listpack, read back as the same text), binary fields, the conversion
 * rules (entries past hash-max-listpack-entries, a field or value longer
 * than hash-max-listpack-value, hash_try_conversion, never back), dup/free
 * through obj_ops_by_type, and random operations against a naive model with
 * the thresholds set low and high.
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
#include "ringkv/hash_obj.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}

static struct slice S(const char *s) { return (struct slice){ s, strlen(s) }; }

static void set_limits(long long entries, long long value) {
    rk_config.hash_max_listpack_entries = entries;
    rk_config.hash_max_listpack_value = value;
}

static void assert_get(const struct hash_obj *h, const char *f, const char *v) {
    struct slice got;
    char buf[HASH_BUF_SIZE];
    if (!v) {
        assert_false(hash_get(h, S(f), &got, buf));
        assert_false(hash_exists(h, S(f)));
        return;
    }
    assert_true(hash_get(h, S(f), &got, buf));
    assert_true(hash_exists(h, S(f)));
    assert_int_equal(got.len, strlen(v));
    assert_memory_equal(got.ptr, v, got.len);
}

static void test_basic(void **state) {
    (void)state;
    set_limits(128, 64);
    struct hash_obj *h = hash_new();
    assert_true(hash_is_listpack(h));
    assert_string_equal(hash_encoding(h), "listpack");
    assert_int_equal(hash_len(h), 0);
    assert_get(h, "a", NULL);

    assert_true(hash_set(&h, S("a"), S("1")));
    assert_true(hash_set(&h, S("10"), S("-5")));        /* integers both sides */
    assert_true(hash_set(&h, S("010"), S("x")));        /* not an integer: distinct from "10" */
    assert_false(hash_set(&h, S("a"), S("hello")));     /* update */
    assert_int_equal(hash_len(h), 3);
    assert_get(h, "a", "hello");
    assert_get(h, "10", "-5");
    assert_get(h, "010", "x");
    assert_get(h, "b", NULL);
    assert_true(hash_set(&h, S(""), S("")));            /* empty field and value */
    assert_get(h, "", "");

    assert_true(hash_delete(&h, S("10")));
    assert_false(hash_delete(&h, S("10")));
    assert_int_equal(hash_len(h), 3);
    assert_get(h, "010", "x");

    /* iteration in insertion order for a listpack */
    struct hash_iter it;
    struct slice f, v;
    const char *order[] = { "a", "hello", "010", "x", "", "" };
    size_t i = 0;
    hash_iter_init(&it, h);
    while (hash_iter_next(&it, &f, &v)) {
        assert_true(i + 1 < 6);
        assert_true(slice_eq(f, S(order[i])));
        assert_true(slice_eq(v, S(order[i + 1])));
        i += 2;
    }
    assert_int_equal(i, 6);

    /* copy and free through the registered ops */
    const struct obj_ops *ops = obj_ops_by_type[OBJ_HASH];
    assert_non_null(ops);
    struct hash_obj *d = ops->dup(h);
    assert_string_equal(ops->encoding(d), "listpack");
    assert_true(hash_set(&d, S("new"), S("1")));
    assert_get(h, "new", NULL);
    assert_get(d, "a", "hello");
    ops->free(d);

    hash_convert(&h);
    assert_false(hash_is_listpack(h));
    assert_string_equal(ops->encoding(h), "hashtable");
    assert_int_equal(hash_len(h), 3);
    assert_get(h, "a", "hello");
    assert_get(h, "010", "x");
    assert_get(h, "", "");
    d = ops->dup(h);
    assert_true(hash_delete(&h, S("a")));
    assert_get(d, "a", "hello");
    assert_int_equal(hash_len(d), 3);
    ops->free(d);
    hash_free(h);
}

static void test_conversions(void **state) {
    (void)state;
    char fb[32];
    set_limits(4, 8);

    /* entries: the 5th field converts */
    struct hash_obj *h = hash_new();
    for (int i = 0; i < 4; i++) {
        snprintf(fb, sizeof fb, "f%d", i);
        hash_set(&h, S(fb), S("v"));
    }
    assert_true(hash_is_listpack(h));
    hash_set(&h, S("f1"), S("w"));                       /* update: no growth */
    assert_true(hash_is_listpack(h));
    hash_set(&h, S("f4"), S("v"));
    assert_false(hash_is_listpack(h));
    for (int i = 0; i < 5; i++) {                        /* never back */
        snprintf(fb, sizeof fb, "f%d", i);
        hash_delete(&h, S(fb));
    }
    assert_int_equal(hash_len(h), 0);
    assert_false(hash_is_listpack(h));
    hash_free(h);

    /* value length: 8 bytes fit, 9 do not (field or value) */
    h = hash_new();
    hash_set(&h, S("12345678"), S("abcdefgh"));
    assert_true(hash_is_listpack(h));
    hash_set(&h, S("a"), S("abcdefghi"));
    assert_false(hash_is_listpack(h));
    assert_get(h, "a", "abcdefghi");
    assert_get(h, "12345678", "abcdefgh");
    hash_free(h);
    h = hash_new();
    hash_set(&h, S("123456789"), S("a"));
    assert_false(hash_is_listpack(h));
    hash_free(h);

    /* an update of an existing field with a long value converts too */
    h = hash_new();
    hash_set(&h, S("a"), S("1"));
    hash_set(&h, S("a"), S("123456789"));
    assert_false(hash_is_listpack(h));
    assert_get(h, "a", "123456789");
    hash_free(h);

    /* try_conversion looks at every argument */
    h = hash_new();
    struct slice args[] = { S("a"), S("1"), S("b"), S("too long value") };
    hash_try_conversion(&h, args, 2);
    assert_true(hash_is_listpack(h));
    hash_try_conversion(&h, args, 4);
    assert_false(hash_is_listpack(h));
    hash_free(h);

    /* entries 0: the first field converts */
    set_limits(0, 64);
    h = hash_new();
    hash_set(&h, S("a"), S("1"));
    assert_false(hash_is_listpack(h));
    hash_free(h);
}

/* ---- random operations against a model ---- */

#define NFIELDS 300

struct model {
    char *val[NFIELDS];          /* NULL: absent */
    size_t len[NFIELDS];
    size_t n;
    bool converted;              /* a conversion happened: hashtable from now on */
};

static void field_name(char *buf, int id) {
    switch (id % 3) {
    case 0: snprintf(buf, 32, "%d", id); break;             /* integer */
    case 1: snprintf(buf, 32, "field:%d", id); break;
    default: snprintf(buf, 32, "0%d", id); break;          /* integer-looking, not an integer */
    }
}

/* A random value in buf (binary: may hold NUL bytes); returns its length. */
static size_t random_value(char *buf, size_t cap, long long maxv) {
    switch (rnd() % 6) {
    case 0: return (size_t)snprintf(buf, cap, "%lld", (long long)(rnd() % 1000) - 500);
    case 1: return (size_t)snprintf(buf, cap, "%lld", (long long)rnd());
    case 2: return (size_t)snprintf(buf, cap, "-9223372036854775808");
    case 3: return 0;
    default: {
        size_t len = (size_t)(rnd() % (size_t)(maxv + 3 > 200 ? 200 : maxv + 3));
        if (len >= cap) len = cap - 1;
        for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + rnd() % 26);
        if (rnd() % 10 == 0 && len) buf[rnd() % len] = '\0';
        return len;
    }
    }
}

static void check_model(const struct hash_obj *h, const struct model *m) {
    assert_int_equal(hash_len(h), m->n);
    assert_int_equal(hash_is_listpack(h), !m->converted);
    /* iteration returns each present field once, with its value */
    bool seen[NFIELDS] = { 0 };
    struct hash_iter it;
    struct slice f, v;
    size_t count = 0;
    char fb[32];
    hash_iter_init(&it, h);
    while (hash_iter_next(&it, &f, &v)) {
        int id = -1;
        for (int i = 0; i < NFIELDS; i++) {
            field_name(fb, i);
            if (slice_eq(f, S(fb))) { id = i; break; }
        }
        assert_true(id >= 0);
        assert_false(seen[id]);
        seen[id] = true;
        assert_non_null(m->val[id]);
        assert_int_equal(v.len, m->len[id]);
        if (v.len) assert_memory_equal(v.ptr, m->val[id], v.len);
        count++;
    }
    assert_int_equal(count, m->n);
}

static void run_model(long long entries, long long maxv, int ops) {
    set_limits(entries, maxv);
    struct model m = { 0 };
    struct hash_obj *h = hash_new();
    char fb[32], vb[256];
    int universe = (int)(rnd() % NFIELDS) + 1;

    for (int op = 0; op < ops; op++) {
        int id = (int)(rnd() % (uint64_t)universe);
        field_name(fb, id);
        unsigned what = (unsigned)(rnd() % 10);
        if (what < 5) {
            size_t vlen = random_value(vb, sizeof vb, maxv);
            struct slice fs = S(fb), vs = { vb, vlen };
            if (!m.converted && (fs.len > (size_t)maxv || vs.len > (size_t)maxv))
                m.converted = true;
            bool isnew = m.val[id] == NULL;
            assert_int_equal(hash_set(&h, fs, vs), isnew);
            free(m.val[id]);
            m.val[id] = malloc(vlen + 1);
            memcpy(m.val[id], vb, vlen);
            m.len[id] = vlen;
            if (isnew) m.n++;
            if (!m.converted && (long long)m.n > entries) m.converted = true;
        } else if (what < 8) {
            bool had = m.val[id] != NULL;
            assert_int_equal(hash_delete(&h, S(fb)), had);
            if (had) { free(m.val[id]); m.val[id] = NULL; m.n--; }
        } else if (what == 8) {
            struct slice got;
            char buf[HASH_BUF_SIZE];
            bool has = hash_get(h, S(fb), &got, buf);
            assert_int_equal(has, m.val[id] != NULL);
            if (has) {
                assert_int_equal(got.len, m.len[id]);
                if (got.len) assert_memory_equal(got.ptr, m.val[id], got.len);
            }
        } else {
            check_model(h, &m);
            if (rnd() % 8 == 0) {       /* a copy is equal and independent */
                struct hash_obj *d = hash_dup(h);
                check_model(d, &m);
                hash_set(&d, S("not-in-model"), S("x"));
                hash_free(d);
            }
        }
        assert_int_equal(hash_is_listpack(h), !m.converted);
        if (rnd() % 500 == 0) {         /* start over: a new key */
            hash_free(h);
            h = hash_new();
            for (int i = 0; i < NFIELDS; i++) { free(m.val[i]); m.val[i] = NULL; }
            m.n = 0;
            m.converted = false;
        }
    }
    check_model(h, &m);
    hash_free(h);
    for (int i = 0; i < NFIELDS; i++) free(m.val[i]);
}

static void test_model_default(void **state) { (void)state; run_model(128, 64, 60000); }
static void test_model_low(void **state) {
    (void)state;
    run_model(4, 6, 30000);
    run_model(16, 12, 30000);
    run_model(0, 0, 5000);
}
static void test_model_high(void **state) { (void)state; run_model(1000, 1000, 60000); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_model_default),
        cmocka_unit_test(test_model_low),
        cmocka_unit_test(test_model_high),
    };
    return cmocka_run_group_tests_name("hash_obj", tests, NULL, NULL);
}
