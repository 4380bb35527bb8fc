/*
 * set_obj: random operations against a simple model (an array of distinct
 * strings) with thresholds set low and high, checking membership, counts,
 * iteration and the encoding each step must have by Redis's rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ringkv/config.h"
#include "ringkv/entry.h"
#include "ringkv/set_obj.h"
#include "ringkv/util.h"

#define MAXM 2000

struct model {
    char *m[MAXM];
    size_t n;
};

static long model_find(const struct model *md, struct slice s) {
    for (size_t i = 0; i < md->n; i++)
        if (strlen(md->m[i]) == s.len && memcmp(md->m[i], s.ptr, s.len) == 0) return (long)i;
    return -1;
}

static uint64_t rs = 88172645463325252ULL;
static uint64_t rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* A member: a small integer, a non-canonical number, or a word of varied length. */
static void gen(char *buf, size_t cap, bool ints_only) {
    unsigned k = ints_only ? 0 : (unsigned)(rnd() % 4);
    if (k <= 1) snprintf(buf, cap, "%lld", (long long)(rnd() % 400) - 200);
    else if (k == 2) snprintf(buf, cap, "0%u", (unsigned)(rnd() % 50));
    else {
        size_t len = 1 + rnd() % 20;
        for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + rnd() % 3);
        buf[len] = '\0';
    }
}

static void check_same(const struct set_obj *s, const struct model *md) {
    assert_int_equal(set_obj_count(s), md->n);
    size_t seen = 0;
    struct set_iter it;
    set_iter_init(&it, s);
    for (struct slice m; set_iter_next(&it, &m);) {
        assert_true(model_find(md, m) >= 0);
        seen++;
    }
    assert_int_equal(seen, md->n);
    for (size_t i = 0; i < md->n; i++)
        assert_true(set_obj_contains(s, (struct slice){ md->m[i], strlen(md->m[i]) }));
}

/* The encoding Redis would have, for a set grown by adds only. */
static enum set_enc expected_enc(size_t peak_int, size_t maxlen_seen, bool all_int_seen,
                                 size_t peak) {
    if (peak_int > (size_t)rk_config.set_max_intset_entries) return SET_ENC_HT;
    if (all_int_seen) return SET_ENC_INTSET;
    if (peak <= (size_t)rk_config.set_max_listpack_entries &&
        maxlen_seen <= (size_t)rk_config.set_max_listpack_value) return SET_ENC_LISTPACK;
    return SET_ENC_HT;
}

static void run_random(unsigned seed, long long intset_max, long long lp_max, long long lp_val,
                       bool ints_only) {
    rs = seed * 2654435761ULL + 1;
    rk_config.set_max_intset_entries = intset_max;
    rk_config.set_max_listpack_entries = lp_max;
    rk_config.set_max_listpack_value = lp_val;
    struct model md = { .n = 0 };
    struct set_obj *s = set_obj_new_intset();
    bool all_int = true, grew_only = true;
    size_t peak = 0, maxlen = 0, peak_int = 0;
    char buf[64];
    struct rbuf pb = { 0 };

    for (int step = 0; step < 3000; step++) {
        unsigned op = (unsigned)(rnd() % 10);
        gen(buf, sizeof buf, ints_only);
        struct slice m = { buf, strlen(buf) };
        if (op < 6) {
            bool had = model_find(&md, m) >= 0;
            assert_int_equal(set_obj_add(&s, m), !had);
            if (!had) {
                md.m[md.n++] = strdup(buf);
                long long v;
                if (!str_to_ll(m.ptr, m.len, &v)) all_int = false;
                if (m.len > maxlen) maxlen = m.len;
                if (md.n > peak) peak = md.n;
                if (all_int) peak_int = peak;
            }
        } else if (op < 8) {
            long i = model_find(&md, m);
            assert_int_equal(set_obj_remove(&s, m), i >= 0);
            if (i >= 0) {
                free(md.m[i]);
                md.m[i] = md.m[--md.n];
                grew_only = false;
            }
        } else if (op == 8 && md.n) {
            struct slice p = set_obj_pop(&s, rnd(), &pb);
            long i = model_find(&md, p);
            assert_true(i >= 0);
            grew_only = false;
            free(md.m[i]);
            md.m[i] = md.m[--md.n];
        } else if (md.n) {
            char rb[SET_BUF_SIZE];
            assert_true(model_find(&md, set_obj_random(s, rnd(), rb)) >= 0);
        }
        if (grew_only && md.n)
            assert_int_equal(set_obj_enc(s), expected_enc(peak_int, maxlen, all_int, peak));
        if (step % 97 == 0) check_same(s, &md);
    }
    check_same(s, &md);
    /* dup keeps the contents; forced conversions keep them too */
    struct set_obj *d = set_obj_dup(s);
    check_same(d, &md);
    assert_int_equal(set_obj_enc(d), set_obj_enc(s));
    assert_true(set_obj_memory(d) > 0);
    struct set_obj *e = set_obj_dup(s);
    set_obj_convert(&e, SET_ENC_LISTPACK);
    check_same(e, &md);
    assert_int_equal(set_obj_enc(e), set_obj_enc(s) == SET_ENC_INTSET ? SET_ENC_LISTPACK : set_obj_enc(s));
    set_obj_convert(&d, SET_ENC_HT);
    assert_int_equal(set_obj_enc(d), SET_ENC_HT);
    check_same(d, &md);
    set_obj_free(d);
    set_obj_free(e);
    set_obj_free(s);
    rbuf_free(&pb);
    for (size_t i = 0; i < md.n; i++) free(md.m[i]);
}

static void test_random_default(void **st) {
    (void)st;
    for (unsigned seed = 1; seed <= 3; seed++) run_random(seed, 512, 128, 64, false);
}
static void test_random_low(void **st) {
    (void)st;
    for (unsigned seed = 1; seed <= 3; seed++) run_random(seed, 4, 8, 5, false);
    run_random(7, 16, 0, 64, false);
    run_random(8, 0, 8, 64, true);
}
static void test_random_ints(void **st) {
    (void)st;
    run_random(9, 64, 128, 64, true);
    run_random(10, 512, 128, 64, true);
}
static void test_random_high(void **st) {
    (void)st;
    run_random(11, 100000, 100000, 1000, false);
}

static void test_create_rules(void **st) {
    (void)st;
    rk_config.set_max_intset_entries = 4;
    rk_config.set_max_listpack_entries = 8;
    rk_config.set_max_listpack_value = 5;
    struct set_obj *s;
    s = set_obj_new(SLICE_LIT("12"), 4);
    assert_string_equal(set_obj_encoding(s), "intset");
    set_obj_maybe_convert(&s, 5);
    assert_string_equal(set_obj_encoding(s), "hashtable");
    set_obj_free(s);
    s = set_obj_new(SLICE_LIT("12"), 5);
    assert_string_equal(set_obj_encoding(s), "listpack");
    set_obj_maybe_convert(&s, 8);
    assert_string_equal(set_obj_encoding(s), "listpack");
    set_obj_maybe_convert(&s, 9);
    assert_string_equal(set_obj_encoding(s), "hashtable");
    set_obj_free(s);
    s = set_obj_new(SLICE_LIT("x"), 9);
    assert_string_equal(set_obj_encoding(s), "hashtable");
    set_obj_free(s);
    /* intset whose integers are longer than the listpack value limit -> hashtable */
    s = set_obj_new_intset();
    set_obj_add(&s, SLICE_LIT("123456"));
    set_obj_add(&s, SLICE_LIT("a"));
    assert_string_equal(set_obj_encoding(s), "hashtable");
    set_obj_free(s);
    s = set_obj_new_intset();
    set_obj_add(&s, SLICE_LIT("12345"));
    set_obj_add(&s, SLICE_LIT("-1"));
    set_obj_add(&s, SLICE_LIT("a"));
    assert_string_equal(set_obj_encoding(s), "listpack");
    assert_true(set_obj_contains(s, SLICE_LIT("-1")));
    assert_false(set_obj_contains(s, SLICE_LIT("-01")));
    assert_false(set_obj_add(&s, SLICE_LIT("12345")));
    set_obj_add(&s, SLICE_LIT("abcdef"));   /* too long */
    assert_string_equal(set_obj_encoding(s), "hashtable");
    assert_true(set_obj_contains(s, SLICE_LIT("12345")));
    set_obj_free(s);
    /* obj_ops registered by the constructor */
    assert_non_null(obj_ops_by_type[OBJ_SET]);
    s = set_obj_new_intset();
    assert_string_equal(obj_ops_by_type[OBJ_SET]->encoding(s), "intset");
    obj_ops_by_type[OBJ_SET]->free(s);
}

/* A small set lives inside its entry, a big one apart; every write goes
 * through entry_obj_for_write and entry_store_obj, across the encodings. */
static void test_entry_store(void **st) {
    (void)st;
    rk_config.set_max_intset_entries = 512;
    rk_config.set_max_listpack_entries = 128;
    rk_config.set_max_listpack_value = 64;
    struct set_obj *s = set_obj_new(SLICE_LIT("1"), 1);
    set_obj_add(&s, SLICE_LIT("1"));
    struct kv_entry *e = entry_new_obj(SLICE_LIT("k"), OBJ_SET, s, NO_EXPIRE);
    assert_true(e->meta & ENTRY_INLINE);
    assert_string_equal(set_obj_encoding(entry_obj(e)), "intset");
    char buf[32];
    for (int i = 0; i < 300; i++) {
        s = entry_obj_for_write(e);
        set_obj_add(&s, (struct slice){ buf, (size_t)snprintf(buf, sizeof buf, i < 100 ? "%d" : "x%d", i) });
        e = entry_store_obj(e, s);
        const struct set_obj *now = entry_obj(e);
        assert_int_equal(set_obj_count(now), i == 0 ? 2 : i + 1);
        assert_true(set_obj_contains(now, SLICE_LIT("1")));
        assert_true(set_obj_contains(now, (struct slice){ buf, strlen(buf) }));
        /* inline exactly while the body is small enough */
        size_t body = obj_ops_by_type[OBJ_SET]->inline_size(now);
        assert_int_equal((e->meta & ENTRY_INLINE) != 0, body >= 8 && body <= ENTRY_INLINE_MAX);
        if (i == 50) assert_string_equal(set_obj_encoding(now), "intset");
        if (i == 110) assert_string_equal(set_obj_encoding(now), "listpack");
    }
    assert_string_equal(obj_ops_by_type[OBJ_SET]->encoding(entry_obj(e)), "hashtable");
    assert_false(e->meta & ENTRY_INLINE);
    entry_free(e);   /* frees the set through obj_ops */
}

struct scan_acc { size_t n; };
static void scan_cb(void *ud, struct slice m) { (void)m; ((struct scan_acc *)ud)->n++; }

static void test_scan(void **st) {
    (void)st;
    rk_config.set_max_intset_entries = 512;
    rk_config.set_max_listpack_entries = 128;
    rk_config.set_max_listpack_value = 64;
    struct set_obj *s = set_obj_new_intset();
    char buf[32];
    for (int i = 0; i < 100; i++) set_obj_add(&s, (struct slice){ buf, (size_t)snprintf(buf, sizeof buf, "%d", i) });
    struct scan_acc a = { 0 };
    assert_int_equal(set_obj_scan(s, 0, 5, scan_cb, &a), 0);
    assert_int_equal(a.n, 100);
    for (int i = 0; i < 1000; i++) set_obj_add(&s, (struct slice){ buf, (size_t)snprintf(buf, sizeof buf, "m%d", i) });
    assert_string_equal(set_obj_encoding(s), "hashtable");
    a.n = 0;
    uint64_t cur = 0;
    int calls = 0;
    do {
        cur = set_obj_scan(s, cur, 10, scan_cb, &a);
        calls++;
    } while (cur);
    assert_int_equal(a.n, 1100);
    assert_true(calls > 1);
    set_obj_free(s);
}

/* Popping the empty member, in each encoding that can hold it, with a
 * fresh buffer each time: what SPOP does. The copy it returns must be a
 * real (empty) string, not the buffer's NULL, for the remove that follows
 * and for whoever adds it elsewhere (found by fuzz_command). */
static void test_pop_empty_member(void **st) {
    (void)st;
    rk_config.set_max_intset_entries = 512;
    rk_config.set_max_listpack_entries = 128;
    rk_config.set_max_listpack_value = 64;
    char big[80];
    memset(big, 'x', sizeof big);
    for (int enc = 0; enc < 2; enc++) {
        for (uint64_t r = 0; r < 8; r++) {
            struct set_obj *s = set_obj_new(SLICE_LIT(""), 2);
            set_obj_add(&s, SLICE_LIT(""));
            /* a member past set-max-listpack-value: a hashtable */
            set_obj_add(&s, enc ? (struct slice){ big, sizeof big } : SLICE_LIT("a"));
            assert_string_equal(set_obj_encoding(s), enc ? "hashtable" : "listpack");
            struct set_obj *into = set_obj_new(SLICE_LIT("-"), 2);
            while (set_obj_count(s)) {
                struct rbuf buf = { 0 };
                struct slice m = set_obj_pop(&s, r * 0x9e3779b97f4a7c15ULL, &buf);
                assert_non_null(m.ptr);
                assert_true(set_obj_add(&into, m));
                rbuf_free(&buf);
            }
            assert_true(set_obj_contains(into, SLICE_LIT("")));
            assert_int_equal(set_obj_count(into), 2);
            set_obj_free(s);
            set_obj_free(into);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_rules),
        cmocka_unit_test(test_random_default),
        cmocka_unit_test(test_random_low),
        cmocka_unit_test(test_random_ints),
        cmocka_unit_test(test_random_high),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_pop_empty_member),
        cmocka_unit_test(test_entry_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
