/*
 * Unit tests for the big-collection hash map: basic operations with and
 * without values, binary and long keys (multi-byte length varints), value
 * replacement (in place and resized, aliasing the map's own bytes), random
 * operations against a naive model, growth to 200,000 elements and back,
 * the scan guarantee while elements come and go and the map grows and
 * shrinks, random-element distribution, iteration, and memory accounting
 * (printing bytes per element for small and large maps).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "ringkv/hashmap.h"
#include "ringkv/scan_cursor.h"

static uint64_t rng_state = 0x13198A2E03707344ULL;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}

static struct slice S(const char *s) { return (struct slice){ s, strlen(s) }; }

static bool slice_is(struct slice a, const char *s) { return slice_eq(a, S(s)); }

/* Key "k<id>" in buf; returns its slice. */
static struct slice key_of(char *buf, uint64_t id) {
    int n = snprintf(buf, 32, "k%llu", (unsigned long long)id);
    return (struct slice){ buf, (size_t)n };
}

static uint64_t id_of(struct slice k) {
    assert_true(k.len >= 2 && k.ptr[0] == 'k');
    uint64_t id = 0;
    for (size_t i = 1; i < k.len; i++) id = id * 10 + (uint64_t)(k.ptr[i] - '0');
    return id;
}

/* hashmap_memory must equal the struct, the arrays and the elements it holds. */
static size_t elements_memory(const struct hashmap *m) {
    size_t sum = 0, n = 0;
    struct hashmap_iter it = hashmap_iter_start(m);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
        sum += hm_elem_memory(e);
        n++;
    }
    assert_int_equal(n, hashmap_count(m));
    return sum;
}

/* Beyond the elements, the map holds its struct (all an empty map holds)
 * and a table of 2^k groups of 16 slots of 9 bytes. */
static void check_accounting(const struct hashmap *m) {
    struct hashmap *empty = hashmap_new(hashmap_has_values(m));
    size_t base = hashmap_memory(empty);
    hashmap_free(empty);
    size_t table = hashmap_memory(m) - elements_memory(m) - base;
    if (hashmap_count(m) == 0) {
        assert_int_equal(table, 0);
        return;
    }
    assert_int_equal(table % (16 * 9), 0);
    size_t groups = table / (16 * 9);
    assert_true(groups > 0 && (groups & (groups - 1)) == 0);
    /* load at most 7/8 */
    assert_true(hashmap_count(m) <= groups * 14);
}

static void test_basic_values(void **state) {
    (void)state;
    struct hashmap *m = hashmap_new(true);
    struct slice v;
    assert_true(hashmap_has_values(m));
    assert_int_equal(hashmap_count(m), 0);
    assert_null(hashmap_find(m, S("a")));
    assert_null(hashmap_random(m, 12345));
    assert_false(hashmap_delete(m, S("a")));
    assert_int_equal(hashmap_scan(m, 0, 10, NULL, NULL), 0);

    assert_true(hashmap_set(m, S("f1"), S("v1")));
    assert_true(hashmap_set(m, S("f2"), S("v2")));
    assert_false(hashmap_set(m, S("f1"), S("v1bis")));
    assert_int_equal(hashmap_count(m), 2);
    assert_true(hashmap_get(m, S("f1"), &v));
    assert_true(slice_is(v, "v1bis"));
    assert_true(hashmap_get(m, S("f2"), &v));
    assert_true(slice_is(v, "v2"));
    assert_true(hashmap_get(m, S("f2"), NULL));
    assert_false(hashmap_get(m, S("f3"), &v));
    const struct hm_elem *e = hashmap_find(m, S("f2"));
    assert_non_null(e);
    assert_true(slice_is(hm_elem_key(e), "f2"));
    assert_true(slice_is(hm_elem_val(e), "v2"));
    assert_int_equal(hm_elem_memory(e), 6);   /* 2 length bytes + "f2" + "v2" */

    /* Empty key and empty value; keys that differ only after a NUL. */
    assert_true(hashmap_set(m, S(""), S("")));
    assert_true(hashmap_get(m, S(""), &v));
    assert_int_equal(v.len, 0);
    assert_true(hashmap_set(m, (struct slice){ "x\0a", 3 }, S("one")));
    assert_true(hashmap_set(m, (struct slice){ "x\0b", 3 }, S("two")));
    assert_true(hashmap_get(m, (struct slice){ "x\0b", 3 }, &v));
    assert_true(slice_is(v, "two"));
    assert_false(hashmap_get(m, S("x"), &v));

    /* Replacement with the same length happens in place; with the value
     * slice pointing at the map's own bytes in both cases. */
    assert_false(hashmap_set(m, S("f2"), S("w2")));
    assert_true(hashmap_get(m, S("f2"), &v));
    assert_true(slice_is(v, "w2"));
    assert_true(hashmap_get(m, S("f1"), &v));
    assert_false(hashmap_set(m, S("f1"), (struct slice){ v.ptr + 1, 4 }));   /* "1bis" */
    assert_true(hashmap_get(m, S("f1"), &v));
    assert_true(slice_is(v, "1bis"));
    assert_false(hashmap_set(m, S("f1"), (struct slice){ v.ptr, 2 }));       /* "1b" */
    assert_true(hashmap_get(m, S("f1"), &v));
    assert_true(slice_is(v, "1b"));
    /* A key taken from the map itself, inserted as a new element. */
    e = hashmap_find(m, S("f1"));
    assert_true(hashmap_set(m, hm_elem_val(e), hm_elem_key(e)));
    assert_true(hashmap_get(m, S("1b"), &v));
    assert_true(slice_is(v, "f1"));
    check_accounting(m);

    /* Remove hands the element over. */
    struct hm_elem *r = hashmap_remove(m, S("f2"));
    assert_non_null(r);
    assert_true(slice_is(hm_elem_key(r), "f2"));
    assert_true(slice_is(hm_elem_val(r), "w2"));
    hm_elem_free(r);
    assert_null(hashmap_remove(m, S("f2")));
    assert_true(hashmap_delete(m, S("f1")));
    assert_false(hashmap_delete(m, S("f1")));
    assert_int_equal(hashmap_count(m), 4);
    hashmap_free(m);
}

static void test_basic_members(void **state) {
    (void)state;
    struct hashmap *m = hashmap_new(false);
    struct slice v = S("junk");
    assert_false(hashmap_has_values(m));
    assert_true(hashmap_set(m, S("m1"), S("ignored")));
    assert_false(hashmap_set(m, S("m1"), S("ignored too")));
    assert_true(hashmap_get(m, S("m1"), &v));
    assert_int_equal(v.len, 0);
    const struct hm_elem *e = hashmap_find(m, S("m1"));
    assert_true(slice_is(hm_elem_key(e), "m1"));
    assert_int_equal(hm_elem_val(e).len, 0);
    assert_int_equal(hm_elem_memory(e), 3);   /* 1 length byte + "m1" */
    assert_true(hashmap_delete(m, S("m1")));
    assert_int_equal(hashmap_count(m), 0);
    check_accounting(m);
    hashmap_free(m);
}

/* Lengths at the varint boundaries (63/64 for keys with the flag bit,
 * 127/128 and 16383/16384 for values) and a large value. */
static void test_long_keys_and_values(void **state) {
    (void)state;
    static char big[100000 + 64];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(rnd() & 0xFF);
    struct hashmap *m = hashmap_new(true);
    size_t lens[] = { 0, 1, 63, 64, 127, 128, 129, 16383, 16384, 16385, 100000 };
    for (size_t i = 0; i < RK_ARRAY_LEN(lens); i++)
        for (size_t j = 0; j < RK_ARRAY_LEN(lens); j++) {
            struct slice k = { big + i, lens[i] }, val = { big + 7 + j, lens[j] };
            /* one key per i (lengths differ); each j replaces its value */
            bool inserted = hashmap_set(m, k, val);
            assert_int_equal(inserted, j == 0);
            struct slice got;
            assert_true(hashmap_get(m, k, &got));
            assert_int_equal(got.len, val.len);
            assert_memory_equal(got.ptr, val.ptr, val.len);
            const struct hm_elem *e = hashmap_find(m, k);
            assert_int_equal(hm_elem_key(e).len, k.len);
            assert_memory_equal(hm_elem_key(e).ptr, k.ptr, k.len);
        }
    assert_int_equal(hashmap_count(m), RK_ARRAY_LEN(lens));
    size_t table = hashmap_memory(m) - elements_memory(m);
    /* every element's memory is its bytes plus 2 to 6 bytes of lengths */
    struct hashmap_iter it = hashmap_iter_start(m);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
        size_t payload = hm_elem_key(e).len + hm_elem_val(e).len;
        assert_true(hm_elem_memory(e) >= payload + 2 && hm_elem_memory(e) <= payload + 6);
    }
    assert_true(table < 1000);
    hashmap_free(m);
}

/*
 * Random operations against a naive model: an array indexed by key id
 * holding the value (or -1 for absent). Values are "val" plus a random
 * decimal of random length, so replacements change size or not.
 */
#define MODEL_KEYS 3000

struct model {
    int64_t val[MODEL_KEYS];
    size_t n;
};

static struct slice val_of(char *buf, int64_t v) {
    int n = snprintf(buf, 40, "val%lld", (long long)v);
    return (struct slice){ buf, (size_t)n };
}

static void check_model(const struct hashmap *m, const struct model *md, bool values) {
    assert_int_equal(hashmap_count(m), md->n);
    static unsigned char seen[MODEL_KEYS];
    memset(seen, 0, sizeof seen);
    struct hashmap_iter it = hashmap_iter_start(m);
    size_t n = 0;
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
        uint64_t id = id_of(hm_elem_key(e));
        assert_true(id < MODEL_KEYS);
        assert_true(md->val[id] >= 0);
        assert_int_equal(seen[id], 0);
        seen[id] = 1;
        if (values) {
            char vb[40];
            assert_true(slice_eq(hm_elem_val(e), val_of(vb, md->val[id])));
        }
        n++;
    }
    assert_int_equal(n, md->n);
}

static void run_model(bool values, int ops) {
    static struct model md;
    for (size_t i = 0; i < MODEL_KEYS; i++) md.val[i] = -1;
    md.n = 0;
    struct hashmap *m = hashmap_new(values);
    char kb[32], vb[40];
    for (int op = 0; op < ops; op++) {
        /* Phases: grow (mostly sets), shrink (mostly deletes), mixed. */
        int phase = (op / 5000) % 3;
        uint64_t range = phase == 2 ? 300 : MODEL_KEYS;
        uint64_t id = rnd() % range, kind = rnd() % 100;
        unsigned set_pct = phase == 0 ? 70 : phase == 1 ? 20 : 45;
        struct slice k = key_of(kb, id);
        if (kind < set_pct) {
            int64_t v = (int64_t)(rnd() % ((rnd() & 1) ? 10 : 100000000));
            bool was = md.val[id] >= 0;
            assert_int_equal(hashmap_set(m, k, val_of(vb, v)), !was);
            if (!was) md.n++;
            md.val[id] = values ? v : 0;
        } else if (kind < set_pct + 25) {
            bool was = md.val[id] >= 0;
            if (kind % 2) {
                assert_int_equal(hashmap_delete(m, k), was);
            } else {
                struct hm_elem *e = hashmap_remove(m, k);
                assert_int_equal(e != NULL, was);
                if (e) {
                    assert_int_equal(id_of(hm_elem_key(e)), id);
                    hm_elem_free(e);
                }
            }
            if (was) md.n--;
            md.val[id] = -1;
        } else {
            struct slice got;
            bool found = hashmap_get(m, k, &got);
            assert_int_equal(found, md.val[id] >= 0);
            if (found && values) assert_true(slice_eq(got, val_of(vb, md.val[id])));
            if (found && !values) assert_int_equal(got.len, 0);
        }
        assert_int_equal(hashmap_count(m), md.n);
        if (op % 1000 == 999) {
            check_model(m, &md, values);
            check_accounting(m);
            const struct hm_elem *e = hashmap_random(m, rnd());
            if (md.n) assert_true(md.val[id_of(hm_elem_key(e))] >= 0);
            else assert_null(e);
        }
    }
    check_model(m, &md, values);
    hashmap_free(m);
}

static void test_model_values(void **state) {
    (void)state;
    run_model(true, 60000);
}

static void test_model_members(void **state) {
    (void)state;
    run_model(false, 60000);
}

/* The table part of hashmap_memory: total minus the elements. */
static size_t table_part(const struct hashmap *m) {
    return hashmap_memory(m) - elements_memory(m);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_growth_200k(void **state) {
    (void)state;
    const uint64_t N = 200000;
    struct hashmap *m = hashmap_new(true);
    char kb[32], vb[40];
    size_t empty = hashmap_memory(m);
    double worst = 0;
    for (uint64_t i = 0; i < N; i++) {
        double t0 = now_ms();
        assert_true(hashmap_set(m, key_of(kb, i), val_of(vb, (int64_t)i)));
        double dt = now_ms() - t0;
        if (dt > worst) worst = dt;
    }
    printf("hashmap: slowest insert while growing to 200k (a full resize): %.2f ms\n", worst);
    assert_int_equal(hashmap_count(m), N);
    /* load between 7/16 and 7/8: 9-byte slots make 10.3 to 20.6 bytes per element */
    double per = (double)table_part(m) / (double)N;
    assert_true(per > 10.0 && per < 21.0);
    for (uint64_t i = 0; i < N; i++) {
        struct slice v;
        assert_true(hashmap_get(m, key_of(kb, i), &v));
        assert_true(slice_eq(v, val_of(vb, (int64_t)i)));
    }
    assert_false(hashmap_get(m, key_of(kb, N), NULL));
    for (uint64_t i = 0; i < N; i += 2) assert_true(hashmap_delete(m, key_of(kb, i)));
    assert_int_equal(hashmap_count(m), N / 2);
    for (uint64_t i = 0; i < N; i++) assert_int_equal(hashmap_get(m, key_of(kb, i), NULL), i % 2 == 1);
    for (uint64_t i = 1; i < N; i += 2) assert_true(hashmap_delete(m, key_of(kb, i)));
    assert_int_equal(hashmap_count(m), 0);
    /* all arrays and elements are gone */
    assert_int_equal(hashmap_memory(m), empty);
    hashmap_free(m);
}

/* Tombstone churn at a fixed size does not grow the table without bound. */
static void test_churn(void **state) {
    (void)state;
    struct hashmap *m = hashmap_new(false);
    char kb[32];
    for (uint64_t i = 0; i < 1000; i++) assert_true(hashmap_set(m, key_of(kb, i), S("")));
    size_t table = table_part(m);
    for (uint64_t i = 1000; i < 200000; i++) {
        assert_true(hashmap_set(m, key_of(kb, i), S("")));
        assert_true(hashmap_delete(m, key_of(kb, i - 1000)));
    }
    assert_int_equal(hashmap_count(m), 1000);
    assert_int_equal(table_part(m), table);   /* same-size rehashes only */
    for (uint64_t i = 199000; i < 200000; i++) assert_true(hashmap_get(m, key_of(kb, i), NULL));
    hashmap_free(m);
}

/* ---------------------------------------------------------------- scan */

struct visits {
    unsigned *count;   /* by id */
    size_t nvisited;
};

static void count_visit(void *ud, const struct hm_elem *e) {
    struct visits *v = ud;
    v->count[id_of(hm_elem_key(e))]++;
    v->nvisited++;
}

/* One call as HSCAN/SSCAN make it, through the client's cursor: that cursor
 * is below the map's group count, which is at most about twice the number
 * of elements (a map halves below one element per group), so it stays
 * small and far below 2^63. */
static uint64_t client_scan(struct hashmap *m, uint64_t cursor, size_t count, struct visits *v) {
    size_t n = hashmap_count(m);
    uint64_t next = scan_cursor_of(hashmap_scan(m, scan_pos_of(cursor), count, count_visit, v));
    if (next >= 2 * n + 2)
        fail_msg("cursor %llu from a map of %zu elements", (unsigned long long)next, n);
    return next;
}

/*
 * Ids below `stable` are present for the whole scan; ids from stable on
 * come and go. The churn is strong enough to grow the map several times
 * (grow) or to shrink it several times (!grow) during the scan.
 */
static void scan_with_churn(bool grow) {
    const uint64_t stable = 3000, span = 60000;
    struct hashmap *m = hashmap_new(true);
    char kb[32];
    struct visits v = { calloc(stable + span, sizeof(unsigned)), 0 };
    for (uint64_t i = 0; i < stable; i++) assert_true(hashmap_set(m, key_of(kb, i), S("s")));
    uint64_t next_id = stable;
    if (!grow) {
        for (; next_id < stable + 40000; next_id++)
            assert_true(hashmap_set(m, key_of(kb, next_id), S("t")));
    }
    uint64_t cursor = 0, gone = stable;
    int calls = 0;
    do {
        cursor = client_scan(m, cursor, 20, &v);
        calls++;
        if (grow) {
            /* insert 100 new, delete 20 old volatile ones */
            for (int j = 0; j < 100 && next_id < stable + span; j++, next_id++)
                assert_true(hashmap_set(m, key_of(kb, next_id), S("t")));
            for (int j = 0; j < 20 && gone < next_id; j++, gone++)
                assert_true(hashmap_delete(m, key_of(kb, gone)));
        } else {
            for (int j = 0; j < 400 && gone < next_id; j++, gone++)
                assert_true(hashmap_delete(m, key_of(kb, gone)));
            if (calls % 7 == 0 && next_id < stable + span)
                assert_true(hashmap_set(m, key_of(kb, next_id++), S("t")));
        }
    } while (cursor != 0);
    for (uint64_t i = 0; i < stable; i++) assert_int_equal(v.count[i], 1);
    for (uint64_t i = stable; i < stable + span; i++) assert_true(v.count[i] <= 1);
    assert_true(calls > 10);
    free(v.count);
    hashmap_free(m);
}

static void test_scan_during_growth(void **state) {
    (void)state;
    scan_with_churn(true);
}

static void test_scan_during_shrink(void **state) {
    (void)state;
    scan_with_churn(false);
}

/* Scan cursors of every size, on maps of every size, cover the map once. */
static void test_scan_full(void **state) {
    (void)state;
    char kb[32];
    size_t sizes[] = { 1, 5, 14, 15, 16, 100, 1000, 5000 };
    size_t counts[] = { 0, 1, 10, 16, 17, 100, 100000 };
    for (size_t s = 0; s < RK_ARRAY_LEN(sizes); s++) {
        struct hashmap *m = hashmap_new(false);
        for (uint64_t i = 0; i < sizes[s]; i++) assert_true(hashmap_set(m, key_of(kb, i), S("")));
        for (size_t c = 0; c < RK_ARRAY_LEN(counts); c++) {
            struct visits v = { calloc(sizes[s], sizeof(unsigned)), 0 };
            uint64_t cursor = 0;
            int calls = 0;
            do {
                cursor = client_scan(m, cursor, counts[c], &v);
                assert_true(++calls < 100000);
            } while (cursor);
            assert_int_equal(v.nvisited, sizes[s]);
            for (size_t i = 0; i < sizes[s]; i++) assert_int_equal(v.count[i], 1);
            free(v.count);
        }
        hashmap_free(m);
    }
}

/* ---------------------------------------------------------------- random */

static void draw_check(struct hashmap *m, uint64_t first, uint64_t n, int draws) {
    unsigned *seen = calloc(n, sizeof(unsigned));
    for (int d = 0; d < draws; d++) {
        const struct hm_elem *e = hashmap_random(m, rnd());
        assert_non_null(e);
        uint64_t id = id_of(hm_elem_key(e));
        assert_true(id >= first && id < first + n);
        seen[id - first]++;
    }
    /* expected draws/n each; allow a factor of 0.5..1.5 (many sigmas) */
    double expect = (double)draws / (double)n;
    for (uint64_t i = 0; i < n; i++) {
        assert_true(seen[i] > expect * 0.5);
        assert_true(seen[i] < expect * 1.5);
    }
    free(seen);
}

static void test_random_distribution(void **state) {
    (void)state;
    struct hashmap *m = hashmap_new(true);
    char kb[32];
    for (uint64_t i = 0; i < 100; i++) assert_true(hashmap_set(m, key_of(kb, i), S("v")));
    draw_check(m, 0, 100, 100000);
    /* A sparse map: ids 0..99 deleted after 100..4099 were added and most of
     * those removed again, leaving long empty runs and tombstones. */
    for (uint64_t i = 100; i < 4100; i++) assert_true(hashmap_set(m, key_of(kb, i), S("v")));
    for (uint64_t i = 0; i < 3900; i++) assert_true(hashmap_delete(m, key_of(kb, i)));
    assert_int_equal(hashmap_count(m), 200);
    draw_check(m, 3900, 200, 100000);
    /* one element */
    for (uint64_t i = 3900; i < 4099; i++) assert_true(hashmap_delete(m, key_of(kb, i)));
    for (int d = 0; d < 100; d++)
        assert_int_equal(id_of(hm_elem_key(hashmap_random(m, rnd()))), 4099);
    hashmap_free(m);
}

/* ---------------------------------------------------------------- memory */

static void print_memory(const char *what, const struct hashmap *m) {
    size_t n = hashmap_count(m);
    printf("hashmap: %s: %zu bytes, %.1f per element (elements %.1f, table %.1f)\n", what,
           hashmap_memory(m), (double)hashmap_memory(m) / n, (double)elements_memory(m) / n,
           (double)table_part(m) / n);
}

static void test_memory(void **state) {
    (void)state;
    char kb[32], vb[32];
    struct hashmap *h = hashmap_new(true), *s = hashmap_new(false);
    for (int i = 1; i <= 10; i++) {
        snprintf(kb, sizeof kb, "f%d", i);
        snprintf(vb, sizeof vb, "v%d", i);
        assert_true(hashmap_set(h, S(kb), S(vb)));
        snprintf(kb, sizeof kb, "%d", i);
        assert_true(hashmap_set(s, S(kb), S("")));
    }
    /* elements are lengths + bytes: f1..f9/v1..v9 6 bytes, f10/v10 8 */
    assert_int_equal(elements_memory(h), 9 * 6 + 8);
    assert_int_equal(elements_memory(s), 9 * 2 + 3);
    print_memory("10 fields f1..f10 = v1..v10", h);
    print_memory("10 members 1..10", s);
    hashmap_free(h);
    hashmap_free(s);

    h = hashmap_new(true);
    s = hashmap_new(false);
    for (int i = 0; i < 100000; i++) {
        snprintf(kb, sizeof kb, "f%d", i);
        snprintf(vb, sizeof vb, "v%d", i);
        assert_true(hashmap_set(h, S(kb), S(vb)));
        snprintf(kb, sizeof kb, "%d", i);
        assert_true(hashmap_set(s, S(kb), S("")));
    }
    print_memory("100k fields f<i> = v<i>", h);
    print_memory("100k members <i>", s);
    hashmap_free(h);
    hashmap_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_values),
        cmocka_unit_test(test_basic_members),
        cmocka_unit_test(test_long_keys_and_values),
        cmocka_unit_test(test_model_values),
        cmocka_unit_test(test_model_members),
        cmocka_unit_test(test_growth_200k),
        cmocka_unit_test(test_churn),
        cmocka_unit_test(test_scan_full),
        cmocka_unit_test(test_scan_during_growth),
        cmocka_unit_test(test_scan_during_shrink),
        cmocka_unit_test(test_random_distribution),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
