/*
 * Unit tests for the stream object against a model (an array of entries
 * with their IDs and fields): random appends that repeat the node's fields
 * or not (so entries are both compressed against the master and not),
 * under small node limits of entries and of bytes so nodes close at both;
 * XDEL of random IDs; trims by MAXLEN and MINID, exact and approximate,
 * with and without LIMIT; every range forward and backward compared with
 * the model, and stream_check after each step. Also IDs (parse, format,
 * increment at the edges), consumer groups and PEL bookkeeping, dup, and
 * the entries-read counter as Redis 7.0 keeps it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/stream.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}

#define MAX_FIELDS 4
struct model_entry {
    struct stream_id id;
    int nfields;
    char fields[MAX_FIELDS][32], values[MAX_FIELDS][32];
    bool deleted;
};
struct model {
    struct model_entry *e;
    size_t n, cap;
};

static void model_add(struct model *m, const struct model_entry *x) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->e = realloc(m->e, m->cap * sizeof *m->e);
    }
    m->e[m->n++] = *x;
}

static size_t model_live(const struct model *m) {
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) n += !m->e[i].deleted;
    return n;
}

static bool lp_value_is(const struct lp_value *v, const char *s) {
    char buf[LP_INTBUF_SIZE];
    struct slice t = lp_value_str(v, buf);
    return t.len == strlen(s) && memcmp(t.ptr, s, t.len) == 0;
}

/* Every live model entry in [start, end], in the given order, and nothing else. */
static void check_range(const struct stream *s, const struct model *m, struct stream_id start, struct stream_id end,
                        bool rev) {
    struct stream_iter it;
    stream_iter_start(&it, s, start, end, rev);
    size_t i = rev ? m->n : 0;
    for (;;) {
        const struct model_entry *want = NULL;
        while (rev ? i > 0 : i < m->n) {
            const struct model_entry *x = &m->e[rev ? --i : i++];
            if (!x->deleted && stream_id_cmp(x->id, start) >= 0 && stream_id_cmp(x->id, end) <= 0) {
                want = x;
                break;
            }
        }
        struct stream_id id;
        long long nf;
        bool got = stream_iter_next(&it, &id, &nf);
        assert_int_equal(got, want != NULL);
        if (!got) return;
        assert_true(stream_id_cmp(id, want->id) == 0);
        assert_int_equal(nf, want->nfields);
        for (int f = 0; f < nf; f++) {
            struct lp_value fv, vv;
            stream_iter_field(&it, &fv, &vv);
            assert_true(lp_value_is(&fv, want->fields[f]));
            assert_true(lp_value_is(&vv, want->values[f]));
        }
    }
}

static struct stream_id random_id_near(const struct model *m) {
    if (m->n == 0 || rnd() % 8 == 0) return (struct stream_id){ rnd() % 1000, rnd() % 3 };
    return m->e[rnd() % m->n].id;
}

static void check_all(const struct stream *s, const struct model *m) {
    assert_true(stream_check(s));
    assert_int_equal(s->length, model_live(m));
    check_range(s, m, STREAM_ID_MIN, STREAM_ID_MAX, false);
    check_range(s, m, STREAM_ID_MIN, STREAM_ID_MAX, true);
    struct stream_id a = random_id_near(m), b = random_id_near(m);
    if (stream_id_cmp(a, b) > 0) {
        struct stream_id t = a;
        a = b;
        b = t;
    }
    check_range(s, m, a, b, false);
    check_range(s, m, a, b, true);
}

static void append_random(struct stream *s, struct model *m, const struct stream_node_limits *lim) {
    struct model_entry x = { 0 };
    struct stream_id last = s->last_id;
    x.id = rnd() % 3 ? (struct stream_id){ last.ms, last.seq + 1 } : (struct stream_id){ last.ms + 1 + rnd() % 5, rnd() % 3 };
    /* mostly the same fields (compressed against the master), sometimes not */
    bool same = rnd() % 4 != 0;
    x.nfields = same ? 2 : 1 + (int)(rnd() % MAX_FIELDS);
    struct slice fv[2 * MAX_FIELDS];
    for (int f = 0; f < x.nfields; f++) {
        if (same) snprintf(x.fields[f], sizeof x.fields[f], "field%d", f);
        else snprintf(x.fields[f], sizeof x.fields[f], "f%llu", (unsigned long long)(rnd() % 50));
        if (rnd() % 2) snprintf(x.values[f], sizeof x.values[f], "%lld", (long long)(rnd() % 100000) - 500);
        else snprintf(x.values[f], sizeof x.values[f], "v%llu", (unsigned long long)rnd());
        fv[2 * f] = (struct slice){ x.fields[f], strlen(x.fields[f]) };
        fv[2 * f + 1] = (struct slice){ x.values[f], strlen(x.values[f]) };
    }
    stream_append(s, x.id, fv, (size_t)x.nfields, lim);
    model_add(m, &x);
    assert_true(stream_id_cmp(s->last_id, x.id) == 0);
}

/* The model after a trim: MAXLEN/MINID exact trims exactly; approximate
 * ones remove only as the stream says, so the model follows what is
 * there (checked: only the oldest entries went, and never too many). */
static void trim_random(struct stream *s, struct model *m) {
    struct stream_trim t = { 0 };
    t.by = rnd() % 2 ? STREAM_TRIM_MAXLEN : STREAM_TRIM_MINID;
    t.approx = rnd() % 2;
    if (t.approx && rnd() % 2) t.limit = 1 + (long long)(rnd() % 20);
    size_t live = model_live(m);
    if (t.by == STREAM_TRIM_MAXLEN) t.maxlen = live ? rnd() % (live + 1) : 0;
    else t.minid = random_id_near(m);
    long long removed = stream_trim(s, &t);
    size_t gone = 0;
    for (size_t i = 0; i < m->n && gone < (size_t)removed; i++) {
        if (m->e[i].deleted) continue;
        if (t.by == STREAM_TRIM_MINID) assert_true(stream_id_cmp(m->e[i].id, t.minid) < 0);
        m->e[i].deleted = true;
        gone++;
    }
    if (t.by == STREAM_TRIM_MAXLEN) assert_true(live - gone >= t.maxlen);
    if (!t.approx && t.by == STREAM_TRIM_MAXLEN) assert_int_equal(s->length, t.maxlen < live ? t.maxlen : live);
    if (!t.approx && t.by == STREAM_TRIM_MINID)
        for (size_t i = 0; i < m->n; i++)
            if (!m->e[i].deleted) assert_true(stream_id_cmp(m->e[i].id, t.minid) >= 0);
    if (t.limit) assert_true(removed <= t.limit);
}

static void run_model(struct stream_node_limits lim, int steps) {
    struct stream *s = stream_new();
    struct model m = { 0 };
    for (int step = 0; step < steps; step++) {
        unsigned op = (unsigned)(rnd() % 10);
        if (op < 6) {
            append_random(s, &m, &lim);
        } else if (op < 9) {
            struct stream_id id = random_id_near(&m);
            bool live = false;
            for (size_t i = 0; i < m.n; i++)
                if (stream_id_cmp(m.e[i].id, id) == 0 && !m.e[i].deleted) live = true;
            assert_int_equal(stream_has_entry(s, id), live);
            assert_int_equal(stream_delete(s, id), live);
            if (live)
                for (size_t i = 0; i < m.n; i++)
                if (stream_id_cmp(m.e[i].id, id) == 0) m.e[i].deleted = true;
            if (live) assert_true(stream_id_cmp(s->max_deleted_id, id) >= 0);
        } else {
            trim_random(s, &m);
        }
        if (step % 7 == 0) check_all(s, &m);
    }
    check_all(s, &m);
    struct stream *d = stream_dup(s);
    check_all(d, &m);
    stream_free(d);
    stream_free(s);
    free(m.e);
}

static void test_model_small_nodes_by_entries(void **state) {
    (void)state;
    run_model((struct stream_node_limits){ 0, 5 }, 3000);
}

static void test_model_small_nodes_by_bytes(void **state) {
    (void)state;
    run_model((struct stream_node_limits){ 120, 0 }, 3000);
}

static void test_model_default_nodes(void **state) {
    (void)state;
    run_model((struct stream_node_limits){ 4096, 100 }, 5000);
}

/* Nodes of hundreds of entries: a backward walk rescans a node several
 * times (STREAM_ITER_BACK entries at a time). */
static void test_model_large_nodes(void **state) {
    (void)state;
    run_model((struct stream_node_limits){ 0, 500 }, 4000);
}

static void test_ids(void **state) {
    (void)state;
    struct stream_id id;
    bool seq_given;
    assert_true(stream_id_parse((struct slice){ "5-3", 3 }, 0, true, &id, NULL));
    assert_true(id.ms == 5 && id.seq == 3);
    assert_true(stream_id_parse((struct slice){ "7", 1 }, 9, true, &id, NULL));
    assert_true(id.ms == 7 && id.seq == 9);
    assert_false(stream_id_parse((struct slice){ "-", 1 }, 0, true, &id, NULL));
    assert_true(stream_id_parse((struct slice){ "+", 1 }, 0, false, &id, NULL));
    assert_true(stream_id_cmp(id, STREAM_ID_MAX) == 0);
    assert_true(stream_id_parse((struct slice){ "3-*", 3 }, 0, true, &id, &seq_given));
    assert_false(seq_given);
    assert_false(stream_id_parse((struct slice){ "3-*", 3 }, 0, true, &id, NULL));
    assert_false(stream_id_parse((struct slice){ "a-1", 3 }, 0, true, &id, NULL));
    assert_false(stream_id_parse((struct slice){ "1-", 2 }, 0, true, &id, NULL));
    assert_false(stream_id_parse((struct slice){ "18446744073709551616", 20 }, 0, true, &id, NULL));
    char buf[STREAM_ID_STR_MAX];
    assert_int_equal(stream_id_format(STREAM_ID_MAX, buf), 41);
    assert_string_equal(buf, "18446744073709551615-18446744073709551615");
    id = (struct stream_id){ 1, UINT64_MAX };
    assert_true(stream_id_incr(&id) && id.ms == 2 && id.seq == 0);
    assert_true(stream_id_decr(&id) && id.ms == 1 && id.seq == UINT64_MAX);
    id = STREAM_ID_MAX;
    assert_false(stream_id_incr(&id));
    id = STREAM_ID_MIN;
    assert_false(stream_id_decr(&id));
}

static void test_groups(void **state) {
    (void)state;
    struct stream *s = stream_new();
    struct slice g1 = { "g1", 2 }, g0 = { "g0", 2 }, c1 = { "alice", 5 }, c2 = { "bob", 3 };
    struct stream_cg *a = stream_cg_create(s, g1, STREAM_ID_MIN, 0);
    struct stream_cg *b = stream_cg_create(s, g0, STREAM_ID_MIN, 0);
    assert_non_null(a);
    assert_null(stream_cg_create(s, g1, STREAM_ID_MIN, 0));
    assert_ptr_equal(s->groups[0], b);   /* name order */
    assert_ptr_equal(stream_cg_find(s, g1), a);
    struct stream_consumer *x = stream_consumer_create(a, c2, 1), *y = stream_consumer_create(a, c1, 2);
    assert_null(stream_consumer_create(a, c1, 3));
    assert_ptr_equal(a->consumers[0], y);
    for (uint64_t i = 1; i <= 10; i++) {
        struct stream_consumer *who = i % 2 ? x : y;
        struct stream_nack *n = stream_nack_new(who, (long long)i);
        assert_true(idtree_insert(a->pel, (struct stream_id){ i, 0 }, n));
        assert_true(idtree_insert(who->pel, (struct stream_id){ i, 0 }, n));
    }
    struct stream *d = stream_dup(s);
    assert_true(stream_check(d));
    assert_int_equal(idtree_count(stream_cg_find(d, g1)->pel), 10);
    assert_int_equal(stream_consumer_delete(a, x), 5);
    assert_int_equal(idtree_count(a->pel), 5);
    assert_int_equal(a->nconsumers, 1);
    assert_true(stream_check(s));
    assert_true(stream_cg_destroy(s, g1));
    assert_false(stream_cg_destroy(s, g1));
    assert_int_equal(s->ngroups, 1);
    stream_free(s);
    stream_free(d);
}

/* Redis 7.0's entries-read rules: reading new entries counts them; a
 * deleted entry ahead of the group makes the counter unknown until the
 * group passes it. */
static void test_entries_read_and_lag(void **state) {
    (void)state;
    struct stream *s = stream_new();
    struct stream_node_limits lim = { 4096, 100 };
    struct slice fv[2] = { { "f", 1 }, { "v", 1 } };
    for (uint64_t i = 1; i <= 5; i++) stream_append(s, (struct stream_id){ i, 0 }, fv, 1, &lim);
    struct stream_cg *g = stream_cg_create(s, (struct slice){ "g", 1 }, STREAM_ID_MIN, 0);
    long long lag;
    assert_true(stream_cg_lag(s, g, &lag));
    assert_int_equal(lag, 5);
    stream_cg_advance(s, g, (struct stream_id){ 1, 0 });
    stream_cg_advance(s, g, (struct stream_id){ 2, 0 });
    assert_int_equal(g->entries_read, 2);
    assert_true(stream_cg_lag(s, g, &lag));
    assert_int_equal(lag, 3);
    assert_true(stream_delete(s, (struct stream_id){ 4, 0 }));
    assert_false(stream_cg_lag(s, g, &lag));   /* a tombstone ahead: unknown */
    stream_cg_advance(s, g, (struct stream_id){ 3, 0 });
    assert_int_equal(g->entries_read, STREAM_ENTRIES_READ_INVALID);
    stream_cg_advance(s, g, (struct stream_id){ 5, 0 });   /* 4 was deleted: read past it */
    assert_int_equal(g->entries_read, 5);      /* the last ID: entries_added */
    assert_true(stream_cg_lag(s, g, &lag));
    assert_int_equal(lag, 0);
    assert_int_equal(stream_estimate_distance(s, (struct stream_id){ 9, 0 }), STREAM_ENTRIES_READ_INVALID);
    stream_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_model_small_nodes_by_entries),
        cmocka_unit_test(test_model_small_nodes_by_bytes),
        cmocka_unit_test(test_model_default_nodes),
        cmocka_unit_test(test_model_large_nodes),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_entries_read_and_lag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
