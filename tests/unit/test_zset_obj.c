/*
 * Unit tests for the sorted set value object (zset_obj.h): ZADD semantics
 * (NX XX GT LT INCR, NaN), order by score then member in both encodings,
 * integer-looking members (listpack integers), ranks, iteration both ways,
 * score/lex ranges and range deletes, the conversion rules
 * (zset-max-listpack-entries / -value, never back except
 * zset_convert_if_small), dup/free through obj_ops_by_type, and random
 * operations against a naive sorted-array model with the thresholds set low
 * and high.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "ringkv/config.h"
#include "ringkv/zset_obj.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}

static struct slice S(const char *s) { return (struct slice){ s, strlen(s) }; }

static void set_limits(long long entries, long long value) {
    rk_config.zset_max_listpack_entries = entries;
    rk_config.zset_max_listpack_value = value;
}

static int add(struct zset_obj **z, const char *m, double score, int flags, double *ns) {
    int out;
    zset_add(z, S(m), score, flags, &out, ns);
    return out;
}

/* ------------------------------------------------------------ model */

struct melem { char m[80]; double score; };
struct model { struct melem e[600]; size_t n; };

static int mcmp(const struct melem *a, const struct melem *b) {
    if (a->score < b->score) return -1;
    if (a->score > b->score) return 1;
    size_t la = strlen(a->m), lb = strlen(b->m), n = la < lb ? la : lb;
    int r = memcmp(a->m, b->m, n);
    if (r) return r;
    return la < lb ? -1 : la > lb ? 1 : 0;
}

static int mfind(const struct model *md, const char *m) {
    for (size_t i = 0; i < md->n; i++)
        if (strcmp(md->e[i].m, m) == 0) return (int)i;
    return -1;
}

static void mdel_at(struct model *md, size_t i) {
    memmove(&md->e[i], &md->e[i + 1], (md->n - i - 1) * sizeof md->e[0]);
    md->n--;
}

static void mset(struct model *md, const char *m, double score) {
    int i = mfind(md, m);
    if (i >= 0) mdel_at(md, (size_t)i);
    struct melem x;
    snprintf(x.m, sizeof x.m, "%s", m);
    x.score = score;
    size_t p = 0;
    while (p < md->n && mcmp(&md->e[p], &x) < 0) p++;
    memmove(&md->e[p + 1], &md->e[p], (md->n - p) * sizeof md->e[0]);
    md->e[p] = x;
    md->n++;
}

static void check_same(struct zset_obj *z, const struct model *md) {
    assert_int_equal(zset_len(z), md->n);
    if (zset_zsl(z)) assert_true(zsl_check(zset_zsl(z)));
    else assert_true(lp_check(zset_lp(z)));
    struct zset_it it;
    size_t i = 0;
    for (zset_it_rank(&it, z, 0); it.valid; zset_it_next(&it), i++) {
        struct slice m = zset_it_member(&it);
        assert_int_equal(m.len, strlen(md->e[i].m));
        assert_memory_equal(m.ptr, md->e[i].m, m.len);
        assert_true(zset_it_score_of(&it) == md->e[i].score);
    }
    assert_int_equal(i, md->n);
    if (md->n) {
        i = md->n;
        for (zset_it_rank(&it, z, md->n - 1); it.valid; zset_it_prev(&it)) {
            i--;
            struct slice m = zset_it_member(&it);
            assert_memory_equal(m.ptr, md->e[i].m, m.len);
        }
        assert_int_equal(i, 0);
        /* back and forth from a random rank (a listpack refills its back
         * positions after every forward step) */
        i = rnd() % md->n;
        zset_it_rank(&it, z, i);
        for (int k = 0; k < 40 && it.valid; k++) {
            struct slice m = zset_it_member(&it);
            assert_int_equal(m.len, strlen(md->e[i].m));
            assert_memory_equal(m.ptr, md->e[i].m, m.len);
            bool back = rnd() % 3 != 0;
            if (back && i == 0) { zset_it_prev(&it); assert_false(it.valid); break; }
            zset_it_move(&it, back);
            i = back ? i - 1 : i + 1;
            assert_int_equal(it.valid, i < md->n);
        }
        size_t r = rnd() % md->n;
        double s;
        assert_int_equal(zset_rank(z, S(md->e[r].m), false, &s), r);
        assert_true(s == md->e[r].score);
        assert_int_equal(zset_rank(z, S(md->e[r].m), true, NULL), md->n - 1 - r);
    }
}

/* ------------------------------------------------------------ tests */

static void test_basic(void **state) {
    (void)state;
    set_limits(128, 64);
    struct zset_obj *z = zset_new();
    double ns = 0;
    assert_string_equal(zset_encoding(z), "listpack");
    assert_int_equal(add(&z, "b", 2, 0, &ns), ZADD_OUT_ADDED);
    assert_int_equal(add(&z, "a", 2, 0, &ns), ZADD_OUT_ADDED);
    assert_int_equal(add(&z, "10", 1.5, 0, &ns), ZADD_OUT_ADDED);
    assert_int_equal(add(&z, "c", -INFINITY, 0, &ns), ZADD_OUT_ADDED);
    assert_int_equal(add(&z, "a", 2, 0, &ns), 0);                     /* same score: nothing */
    assert_int_equal(add(&z, "a", 5, ZADD_IN_NX, &ns), ZADD_OUT_NOP);
    assert_int_equal(add(&z, "q", 5, ZADD_IN_XX, &ns), ZADD_OUT_NOP);
    assert_int_equal(add(&z, "a", 1, ZADD_IN_GT, &ns), ZADD_OUT_NOP);
    assert_int_equal(add(&z, "a", 3, ZADD_IN_LT, &ns), ZADD_OUT_NOP);
    assert_int_equal(add(&z, "a", 3, ZADD_IN_GT, &ns), ZADD_OUT_UPDATED);
    assert_true(ns == 3);
    assert_int_equal(add(&z, "a", 0.5, ZADD_IN_INCR, &ns), ZADD_OUT_UPDATED);
    assert_true(ns == 3.5);
    assert_int_equal(add(&z, "c", INFINITY, ZADD_IN_INCR, &ns), ZADD_OUT_NAN);
    assert_int_equal(add(&z, "x", NAN, 0, &ns), ZADD_OUT_NAN);
    double s;
    assert_true(zset_score(z, S("10"), &s) && s == 1.5);
    assert_false(zset_score(z, S("010"), &s));
    assert_int_equal(zset_rank(z, S("c"), false, NULL), 0);
    assert_int_equal(zset_rank(z, S("10"), false, NULL), 1);
    assert_int_equal(zset_rank(z, S("b"), false, NULL), 2);
    assert_int_equal(zset_rank(z, S("a"), false, NULL), 3);
    assert_int_equal(zset_rank(z, S("zz"), false, NULL), ZSL_NONE);

    struct zrange_spec r;
    assert_true(zrange_parse(S("(1.5"), S("+inf"), &r));
    assert_int_equal(zset_count_score(z, &r), 2);
    struct zset_it it;
    zset_it_score(&it, z, &r, false);
    assert_true(it.valid);
    assert_int_equal(zset_it_member(&it).len, 1);
    assert_memory_equal(zset_it_member(&it).ptr, "b", 1);
    zset_it_score(&it, z, &r, true);
    assert_memory_equal(zset_it_member(&it).ptr, "a", 1);
    assert_true(zrange_parse(S("4"), S("5"), &r));
    zset_it_score(&it, z, &r, false);
    assert_false(it.valid);
    assert_int_equal(zset_delete_range_score(&z, &r), 0);

    /* dup / free / encoding through the registry */
    const struct obj_ops *ops = obj_ops_by_type[OBJ_ZSET];
    assert_non_null(ops);
    struct zset_obj *d = ops->dup(z);
    assert_string_equal(ops->encoding(d), "listpack");
    assert_int_equal(zset_len(d), 4);
    ops->free(d);

    assert_true(zset_delete(&z, S("10")));
    assert_false(zset_delete(&z, S("10")));
    assert_int_equal(zset_delete_range_rank(&z, 0, 10), 3);
    assert_int_equal(zset_len(z), 0);
    zset_free(z);
}

static void test_conversions(void **state) {
    (void)state;
    set_limits(4, 8);
    struct zset_obj *z = zset_new();
    char m[16];
    for (int i = 0; i < 4; i++) {
        snprintf(m, sizeof m, "m%d", i);
        add(&z, m, i, 0, NULL);
    }
    assert_string_equal(zset_encoding(z), "listpack");
    add(&z, "m4", 4, 0, NULL);
    assert_string_equal(zset_encoding(z), "skiplist");
    assert_true(zset_delete(&z, S("m4")));
    assert_string_equal(zset_encoding(z), "skiplist");   /* never back */
    zset_convert_if_small(&z);
    assert_string_equal(zset_encoding(z), "listpack");
    assert_int_equal(zset_len(z), 4);
    /* a long member converts */
    add(&z, "123456789", 1, 0, NULL);
    assert_string_equal(zset_encoding(z), "skiplist");
    zset_convert_if_small(&z);                            /* too long: stays */
    assert_string_equal(zset_encoding(z), "skiplist");
    struct zset_obj *d = zset_dup(z);
    assert_string_equal(zset_encoding(d), "skiplist");
    assert_int_equal(zset_len(d), 5);
    zset_free(d);
    zset_free(z);
    /* updating a member's score in a listpack keeps the order */
    set_limits(128, 64);
    z = zset_new();
    add(&z, "a", 1, 0, NULL);
    add(&z, "b", 2, 0, NULL);
    add(&z, "a", 3, 0, NULL);
    assert_int_equal(zset_rank(z, S("a"), false, NULL), 1);
    zset_free(z);
}

/* Lex ranges over members with different scores: the listpack follows
 * Redis's zzl* walk; the skiplist must not crash (its answer, as Redis's,
 * depends on the node levels). */
static void test_lex_mixed(void **state) {
    (void)state;
    set_limits(128, 64);
    struct zset_obj *z = zset_new();
    add(&z, "-1", -3, 0, NULL);
    add(&z, "g", 0.5, 0, NULL);
    add(&z, "7", 1, 0, NULL);
    add(&z, "a", 1, 0, NULL);
    add(&z, "b", 1, 0, NULL);
    add(&z, "i", 3, 0, NULL);
    struct zlex_spec r;
    assert_true(zlex_parse(S("(c"), S("(i"), &r));
    assert_int_equal(zset_count_lex(z, &r), 4);
    struct zset_it it;
    zset_it_lex(&it, z, &r, false);
    assert_true(it.valid);
    assert_memory_equal(zset_it_member(&it).ptr, "g", 1);
    zset_it_lex(&it, z, &r, true);
    assert_false(it.valid);
    assert_true(zlex_parse(S("[a"), S("[b"), &r));
    assert_int_equal(zset_count_lex(z, &r), 0);
    assert_true(zlex_parse(S("(c"), S("(i"), &r));
    assert_int_equal(zset_delete_range_lex(&z, &r), 4);
    assert_int_equal(zset_len(z), 2);
    zset_free(z);

    set_limits(0, 64);
    z = zset_new();
    add(&z, "a", 2, 0, NULL);
    add(&z, "b", 1, 0, NULL);
    add(&z, "c", 3, 0, NULL);
    assert_string_equal(zset_encoding(z), "skiplist");
    const char *ends[][2] = { { "[a", "[a" }, { "[b", "[b" }, { "[c", "[c" }, { "[a", "[c" }, { "-", "+" } };
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        assert_true(zlex_parse(S(ends[i][0]), S(ends[i][1]), &r));
        (void)zset_count_lex(z, &r);
    }
    assert_true(zlex_parse(S("-"), S("+"), &r));
    assert_int_equal(zset_count_lex(z, &r), 3);
    zset_free(z);
}

static const char *rand_member(char *buf, size_t len) {
    unsigned k = (unsigned)(rnd() % 8);
    if (k == 0) snprintf(buf, len, "%u", (unsigned)(rnd() % 60));               /* listpack integer */
    else if (k == 1) snprintf(buf, len, "long-member-%040u", (unsigned)(rnd() % 20));
    else snprintf(buf, len, "m%u", (unsigned)(rnd() % 150));
    return buf;
}

static double rand_score(void) {
    switch (rnd() % 10) {
    case 0: return INFINITY;
    case 1: return -INFINITY;
    case 2: return (double)(rnd() % 1000) / 8.0 - 50;
    default: return (double)(long long)(rnd() % 20) - 5;
    }
}

static void run_model(long long entries, long long value, int ops) {
    set_limits(entries, value);
    struct zset_obj *z = zset_new();
    struct model *md = calloc(1, sizeof *md);
    char buf[80];
    bool was_zsl = false;
    for (int op = 0; op < ops; op++) {
        unsigned k = (unsigned)(rnd() % 20);
        const char *m = rand_member(buf, sizeof buf);
        if (k < 9) {
            int flags = 0;
            unsigned f = (unsigned)(rnd() % 6);
            if (f == 1) flags = ZADD_IN_NX;
            else if (f == 2) flags = ZADD_IN_XX;
            else if (f == 3) flags = ZADD_IN_GT;
            else if (f == 4) flags = ZADD_IN_LT;
            else if (f == 5) flags = ZADD_IN_INCR;
            double sc = rand_score(), ns = 0;
            int i = mfind(md, m), out;
            bool ok = zset_add(&z, S(m), sc, flags, &out, &ns);
            if (i < 0) {
                if (flags == ZADD_IN_XX) {
                    assert_int_equal(out, ZADD_OUT_NOP);
                } else {
                    assert_true(ok);
                    assert_int_equal(out, ZADD_OUT_ADDED);
                    mset(md, m, sc);
                }
            } else {
                double cur = md->e[i].score, want = flags == ZADD_IN_INCR ? cur + sc : sc;
                if (flags == ZADD_IN_INCR && isnan(want)) {
                    assert_false(ok);
                } else if (flags == ZADD_IN_NX || (flags == ZADD_IN_GT && want <= cur) ||
                           (flags == ZADD_IN_LT && want >= cur)) {
                    assert_int_equal(out, ZADD_OUT_NOP);
                } else {
                    assert_int_equal(out, want != cur ? ZADD_OUT_UPDATED : 0);
                    assert_true(ns == want);
                    mset(md, m, want);
                }
            }
        } else if (k < 13) {
            int i = mfind(md, m);
            assert_int_equal(zset_delete(&z, S(m)), i >= 0);
            if (i >= 0) mdel_at(md, (size_t)i);
        } else if (k == 13 && md->n) {
            size_t a = rnd() % md->n, b = a + rnd() % 3;
            size_t want = (b >= md->n ? md->n - 1 : b) - a + 1;
            assert_int_equal(zset_delete_range_rank(&z, a, b), want);
            for (size_t j = 0; j < want; j++) mdel_at(md, a);
        } else if (k == 14) {
            double lo = rand_score(), hi = rand_score();
            struct zrange_spec r = { lo, hi, rnd() % 2 == 0, rnd() % 2 == 0 };
            size_t cnt = 0;
            for (size_t j = 0; j < md->n; j++) cnt += zrange_contains(&r, md->e[j].score);
            assert_int_equal(zset_count_score(z, &r), cnt);
            struct zset_it it;
            zset_it_score(&it, z, &r, rnd() % 2);
            assert_int_equal(it.valid, cnt > 0);
            if (rnd() % 4 == 0) {
                assert_int_equal(zset_delete_range_score(&z, &r), cnt);
                for (size_t j = md->n; j-- > 0;)
                    if (zrange_contains(&r, md->e[j].score)) mdel_at(md, j);
            }
        } else if (k == 15) {
            /* lex ranges over a set whose scores are all equal */
            char a[80], b[80], la[90], lb[90];
            rand_member(a, sizeof a);
            rand_member(b, sizeof b);
            snprintf(la, sizeof la, "%c%s", rnd() % 2 ? '[' : '(', a);
            snprintf(lb, sizeof lb, "%c%s", rnd() % 2 ? '[' : '(', b);
            struct zlex_spec lr;
            assert_true(zlex_parse(S(la), S(lb), &lr));
            bool same = true;
            for (size_t j = 1; j < md->n; j++) same &= md->e[j].score == md->e[0].score;
            if (same) {
                size_t cnt = 0;
                for (size_t j = 0; j < md->n; j++) cnt += zlex_contains(&lr, S(md->e[j].m));
                assert_int_equal(zset_count_lex(z, &lr), cnt);
                assert_int_equal(zset_delete_range_lex(&z, &lr), cnt);
                for (size_t j = md->n; j-- > 0;)
                    if (zlex_contains(&lr, S(md->e[j].m))) mdel_at(md, j);
            }
        } else if (k == 16 && rnd() % 8 == 0) {
            /* flatten the scores so that lex ranges get exercised */
            for (size_t j = 0; j < md->n; j++) {
                int out;
                snprintf(buf, sizeof buf, "%s", md->e[j].m);
                zset_add(&z, S(buf), 0, 0, &out, NULL);
            }
            struct model *n2 = calloc(1, sizeof *n2);
            for (size_t j = 0; j < md->n; j++) mset(n2, md->e[j].m, 0);
            memcpy(md, n2, sizeof *md);
            free(n2);
        } else if (k == 17 && rnd() % 4 == 0) {
            zset_convert_if_small(&z);
        }
        if (zset_zsl(z)) was_zsl = true;
        check_same(z, md);
        if (zset_lp(z)) {
            assert_true((long long)zset_len(z) <= entries);
            for (size_t j = 0; j < md->n; j++) assert_true((long long)strlen(md->e[j].m) <= value);
        }
        if (md->n > 500) {   /* keep the model bounded */
            zset_delete_range_rank(&z, 0, 99);
            for (int j = 0; j < 100; j++) mdel_at(md, 0);
        }
    }
    (void)was_zsl;
    struct zset_obj *d = zset_dup(z);
    check_same(d, md);
    zset_free(d);
    zset_free(z);
    free(md);
}

static void test_model_default(void **state) { (void)state; run_model(128, 64, 20000); }
static void test_model_low(void **state) { (void)state; run_model(3, 5, 20000); }
static void test_model_high(void **state) { (void)state; run_model(1000, 1000, 8000); }
static void test_model_zero(void **state) { (void)state; run_model(0, 64, 5000); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_lex_mixed),
        cmocka_unit_test(test_model_default),
        cmocka_unit_test(test_model_low),
        cmocka_unit_test(test_model_high),
        cmocka_unit_test(test_model_zero),
    };
    return cmocka_run_group_tests_name("zset_obj", tests, NULL, NULL);
}
