/*
 * Unit tests for the swiss table: basic operations, a long random run
 * against a bitmap model while the table grows to 2,000,000 keys, SCAN's
 * guarantee across growth and shrinking (with cursors as clients see them:
 * small, below 2^63), random sampling, tombstone churn,
 * heavy hash clustering (including wrap-around probing), the bound on
 * migration work per call, and the memory a big growth faults in ahead
 * (next) and gives back after (retired control bytes).
 *
 * Keys are "key:" plus a 12-digit id (16 bytes), so a key maps back to its
 * id and a bitmap over ids is the reference model.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ringkv/scan_cursor.h"
#include "ringkv/table.h"

#define STEP_BOUND 1   /* MIGRATE_GROUPS in table.c: groups moved per call */

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}

static void make_key(char out[16], uint64_t id) {
    memcpy(out, "key:", 4);
    for (int i = 15; i >= 4; i--, id /= 10) out[i] = (char)('0' + id % 10);
}

static uint64_t key_id(const struct kv_entry *e) {
    assert_int_equal(entry_key_len(e), 16);
    const char *k = entry_key(e);
    uint64_t id = 0;
    for (int i = 4; i < 16; i++) id = id * 10 + (uint64_t)(k[i] - '0');
    return id;
}

static struct kv_entry *new_entry(uint64_t id) {
    char k[16];
    make_key(k, id);
    return entry_new_string((struct slice){ k, 16 }, (struct slice){ (char *)&id, 8 }, NO_EXPIRE);
}

static uint64_t val_id(const struct kv_entry *e) {
    uint64_t v;
    assert_int_equal(entry_val_len(e), 8);
    memcpy(&v, entry_val_slice(e).ptr, 8);
    return v;
}

/* Operations that check the migration bound on every call. */
static size_t worst_step;

static void check_moved(const struct kv_table *t, uint64_t before) {
    size_t moved = (size_t)(t->moved_groups - before);
    if (moved > worst_step) worst_step = moved;
    assert_true(moved <= STEP_BOUND);
}

static void ins(struct kv_table *t, uint64_t id) {
    struct kv_entry *e = new_entry(id);
    uint64_t before = t->moved_groups;
    table_insert(t, e, table_hash(entry_key(e), 16));
    check_moved(t, before);
}

static struct kv_entry **find(struct kv_table *t, uint64_t id) {
    char k[16];
    make_key(k, id);
    uint64_t before = t->moved_groups;
    struct kv_entry **s = table_find(t, k, 16, table_hash(k, 16));
    assert_true(t->moved_groups == before);           /* lookups never migrate */
    return s;
}

static bool del(struct kv_table *t, uint64_t id) {
    char k[16];
    make_key(k, id);
    uint64_t before = t->moved_groups;
    struct kv_entry *e = table_remove(t, k, 16, table_hash(k, 16));
    check_moved(t, before);
    if (!e) return false;
    assert_memory_equal(entry_key(e), k, 16);
    entry_free(e);
    return true;
}

static bool step(struct kv_table *t) {
    uint64_t before = t->moved_groups;
    bool more = table_step(t);
    check_moved(t, before);
    return more;
}

static void finish_migration(struct kv_table *t) {
    while (step(t)) {}
}

/* ---------------------------------------------------------------- basic */

static void test_empty_table(void **state) {
    (void)state;
    struct kv_table t;
    table_init(&t);
    assert_null(find(&t, 1));
    assert_false(del(&t, 1));
    assert_null(table_random(&t, 12345));
    assert_int_equal(table_memory(&t), 0);
    assert_int_equal(table_size(&t), 0);
    assert_false(step(&t));
    assert_int_equal(table_scan(&t, 0, 100, NULL, NULL), 0);
    table_destroy(&t, entry_free);
}

static void test_insert_find_update_remove(void **state) {
    (void)state;
    struct kv_table t;
    table_init(&t);
    const uint64_t n = 5000;
    for (uint64_t i = 0; i < n; i++) {
        ins(&t, i);
        assert_int_equal(table_size(&t), i + 1);
    }
    assert_true(t.cur.ngroups >= n / 14);
    for (uint64_t i = 0; i < n; i++) {
        struct kv_entry **s = find(&t, i);
        assert_non_null(s);
        assert_int_equal(key_id(*s), i);
        assert_int_equal(val_id(*s), i);
    }
    assert_null(find(&t, n));
    assert_null(find(&t, n + 12345));

    /* Replace entries through their slots, including a move to a new block. */
    for (uint64_t i = 0; i < n; i += 3) {
        struct kv_entry **s = find(&t, i);
        uint64_t v = i * 7 + 1;
        *s = entry_set_string(*s, (struct slice){ (char *)&v, 8 });
        s = find(&t, i);
        *s = entry_set_expire(*s, (long long)i + 1000);
    }
    for (uint64_t i = 0; i < n; i++) {
        struct kv_entry **s = find(&t, i);
        assert_non_null(s);
        assert_int_equal(val_id(*s), i % 3 ? i : i * 7 + 1);
        assert_int_equal(entry_expire(*s), i % 3 ? NO_EXPIRE : (long long)i + 1000);
        assert_int_equal(key_id(*s), i);
    }

    for (uint64_t i = 0; i < n; i += 2) assert_true(del(&t, i));
    for (uint64_t i = 0; i < n; i += 2) assert_false(del(&t, i));
    assert_int_equal(table_size(&t), n / 2);
    for (uint64_t i = 0; i < n; i++) {
        if (i % 2) assert_non_null(find(&t, i));
        else assert_null(find(&t, i));
    }
    /* Re-insert into the tombstoned slots. */
    for (uint64_t i = 0; i < n; i += 2) ins(&t, i);
    for (uint64_t i = 0; i < n; i++) assert_int_equal(key_id(*find(&t, i)), i);
    assert_int_equal(table_size(&t), n);
    assert_int_equal(table_memory(&t), (t.cur.ngroups + t.old.ngroups) * 16 * 9);
    table_destroy(&t, entry_free);
    assert_int_equal(table_size(&t), 0);
    assert_int_equal(table_memory(&t), 0);
}

/* ---------------------------------------------------------------- model */

struct model {
    uint8_t *bits;
    uint64_t count;
};

static bool model_has(const struct model *m, uint64_t id) { return m->bits[id >> 3] >> (id & 7) & 1; }
static void model_set(struct model *m, uint64_t id, bool on) {
    if (on == model_has(m, id)) return;
    m->bits[id >> 3] ^= (uint8_t)(1u << (id & 7));
    m->count += on ? 1 : (uint64_t)-1;
}

static void check_find(struct kv_table *t, const struct model *m, uint64_t id) {
    struct kv_entry **s = find(t, id);
    if (model_has(m, id)) {
        assert_non_null(s);
        assert_int_equal(key_id(*s), id);
    } else {
        assert_null(s);
    }
}

/*
 * Grow to 2,000,000 keys while mixing in finds of present and absent keys
 * and removals, then churn with a random mix, checking every answer and the
 * per-call migration bound against the bitmap.
 */
static void test_model_2m(void **state) {
    (void)state;
    const uint64_t n = 2000000, space = n + n / 4;
    struct model m = { calloc(space / 8 + 1, 1), 0 };
    struct kv_table t;
    table_init(&t);
    size_t migrating_calls = 0, max_probe = 0;

    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = (i * 0x9E3779B1ULL) % n;          /* a permutation of 0..n-1 */
        ins(&t, id);
        model_set(&m, id, true);
        check_find(&t, &m, rnd() % space);
        if (i % 8 == 0) {
            uint64_t victim = rnd() % space;
            assert_int_equal(del(&t, victim), model_has(&m, victim));
            model_set(&m, victim, false);
        }
        if (t.old.ngroups) migrating_calls++;
        if (t.cur.max_probe > max_probe) max_probe = t.cur.max_probe;
    }
    assert_int_equal(table_size(&t), m.count);
    assert_true(t.cur.ngroups >= 131072);           /* it did grow to millions of slots */
    assert_true(migrating_calls > 0);

    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = rnd() % space, r = rnd() % 4;
        if (r == 0 && !model_has(&m, id)) {
            ins(&t, id);
            model_set(&m, id, true);
        } else if (r == 1) {
            assert_int_equal(del(&t, id), model_has(&m, id));
            model_set(&m, id, false);
        } else {
            check_find(&t, &m, id);
        }
    }
    assert_int_equal(table_size(&t), m.count);
    for (uint64_t id = 0; id < space; id++) check_find(&t, &m, id);

    /* Load stays within 7/8 counting tombstones. */
    assert_true(t.cur.used + t.cur.tombstones <= t.cur.ngroups * 14);
    printf("  model: %llu keys, %zu groups, max_probe %zu, worst groups moved per call %zu, "
           "%.1f table bytes/key\n", (unsigned long long)m.count, t.cur.ngroups, max_probe,
           worst_step, (double)table_memory(&t) / (double)table_size(&t));
    assert_true(max_probe < 200);
    table_destroy(&t, entry_free);
    free(m.bits);
}

/* ---------------------------------------------------------------- scan */

struct visits {
    uint8_t *count;
    size_t nvisited;
};

static void visit(void *ud, struct kv_entry *e) {
    struct visits *v = ud;
    uint64_t id = key_id(e);
    if (v->count[id] < 255) v->count[id]++;
    v->nvisited++;
}

/*
 * Keys 0..stable-1 stay for the whole scan; between calls new keys are
 * inserted (forcing growth, so calls happen mid-migration) and some of them
 * removed. Every stable key must be seen, and since cursor ranges tile the
 * hash space, no key is seen twice.
 */
static void test_scan_during_growth(void **state) {
    (void)state;
    const uint64_t stable = 60000, extra = 400000;
    struct visits v = { calloc(stable + extra, 1), 0 };
    struct kv_table t;
    table_init(&t);
    for (uint64_t i = 0; i < stable; i++) ins(&t, i);
    size_t groups_at_start = t.cur.ngroups;

    uint64_t cursor = 0, next_id = stable;
    size_t calls = 0, calls_mid_migration = 0;
    do {
        if (t.old.ngroups) calls_mid_migration++;
        cursor = table_scan(&t, cursor, 1 + rnd() % 40, visit, &v);
        calls++;
        for (int k = 0; k < 32 && next_id < stable + extra; k++) ins(&t, next_id++);
        if (next_id > stable + 10 && rnd() % 3 == 0) del(&t, stable + rnd() % (next_id - stable));
    } while (cursor != 0);

    for (uint64_t i = 0; i < stable; i++) assert_int_equal(v.count[i], 1);
    for (uint64_t i = 0; i < stable + extra; i++) assert_true(v.count[i] <= 1);
    assert_true(t.cur.ngroups >= 2 * groups_at_start);
    assert_true(calls_mid_migration > 0);
    printf("  scan: %zu calls (%zu during migration), groups %zu -> %zu\n", calls,
           calls_mid_migration, groups_at_start, t.cur.ngroups);

    /* One call with a huge count covers everything. */
    memset(v.count, 0, stable + extra);
    v.nvisited = 0;
    assert_int_equal(table_scan(&t, 0, SIZE_MAX / 2, visit, &v), 0);
    assert_int_equal(v.nvisited, table_size(&t));
    table_destroy(&t, entry_free);
    free(v.count);
}

/* The larger part's group count: what bounds a scan cursor. */
static size_t big_groups(const struct kv_table *t) {
    return t->cur.ngroups > t->old.ngroups ? t->cur.ngroups : t->old.ngroups;
}

/* One call as SCAN makes it, through the client's cursor: that cursor is
 * below the table's group count, so far below 2^63. */
static uint64_t client_scan(struct kv_table *t, uint64_t cursor, size_t count, struct visits *v) {
    size_t groups = big_groups(t);
    uint64_t next = scan_cursor_of(table_scan(t, scan_pos_of(cursor), count, visit, v));
    if (next >= (groups ? groups : 1))
        fail_msg("cursor %llu from a table of %zu groups", (unsigned long long)next, groups);
    assert_int_equal(scan_pos_of(next) == 0, next == 0);
    return next;
}

/*
 * A table grown from one group through every size of the 3/2 and 4/3 steps
 * (2, 3, 4, 6, 8, 12, ...) and shrunk back, scanned all the while through
 * client cursors with random counts: each call's cursor stays below the
 * group count, keys present throughout are returned exactly once, none twice.
 */
static void test_scan_client_cursors(void **state) {
    (void)state;
    const uint64_t stable = 300, batch = 3000, batches = 40;
    struct visits v = { calloc(stable + batch * batches, 1), 0 };
    struct kv_table t;
    table_init(&t);
    for (uint64_t i = 0; i < stable; i++) ins(&t, i);

    uint64_t cursor = 0, next_id = stable, next_del = stable;
    size_t calls = 0, odd_sizes = 0, max_groups = 0;
    do {
        if (big_groups(&t) % 3 == 0) odd_sizes++;
        if (big_groups(&t) > max_groups) max_groups = big_groups(&t);
        cursor = client_scan(&t, cursor, 1 + rnd() % 40, &v);
        if (calls < batches) {                /* grow */
            for (uint64_t k = 0; k < batch; k++) ins(&t, next_id++);
        } else {                              /* shrink back */
            if (calls < 2 * batches)
                for (uint64_t k = 0; k < batch; k++) del(&t, next_del++);
            for (int k = 0; k < 256 && step(&t); k++) {}   /* a cron tick between calls (db.c) */
        }
        calls++;
    } while (cursor != 0);

    for (uint64_t i = 0; i < stable; i++) assert_int_equal(v.count[i], 1);
    for (uint64_t i = 0; i < next_id; i++) assert_true(v.count[i] <= 1);
    assert_true(calls > 2 * batches);
    assert_true(odd_sizes > 0);
    assert_true(max_groups >= 1024 && big_groups(&t) <= max_groups / 8);
    printf("  client cursors: %zu calls, %zu on 3 * 2^k groups, up to %zu groups, %zu at the end\n",
           calls, odd_sizes, max_groups, big_groups(&t));
    table_destroy(&t, entry_free);
    free(v.count);
}

/* At every size the whole table comes back through client cursors, with a
 * small count: one unit of groups a call, so the cursor visits every
 * boundary, and the largest cursor is close to the group count. */
static void test_scan_cursor_sizes(void **state) {
    (void)state;
    struct kv_table t;
    table_init(&t);
    uint64_t n = 0;
    struct visits v = { calloc(200000, 1), 0 };
    size_t last_groups = 0;
    while (n < 200000) {
        ins(&t, n++);
        if (t.old.ngroups) finish_migration(&t);
        if (t.cur.ngroups == last_groups) continue;
        last_groups = t.cur.ngroups;
        memset(v.count, 0, n);
        v.nvisited = 0;
        uint64_t cursor = 0, largest = 0;
        size_t calls = 0;
        do {
            cursor = client_scan(&t, cursor, 1, &v);
            if (cursor > largest) largest = cursor;
            calls++;
        } while (cursor);
        assert_int_equal(v.nvisited, n);
        for (uint64_t i = 0; i < n; i++) assert_int_equal(v.count[i], 1);
        /* m * 2^k groups: 2^k calls of m groups, cursors 1 .. 2^k - 1 */
        size_t units = t.cur.ngroups % 3 ? t.cur.ngroups : t.cur.ngroups / 3;
        assert_int_equal(calls, units);
        if (units > 1) assert_int_equal(largest, units - 1);
    }
    table_destroy(&t, entry_free);
    free(v.count);
}

/* Mass deletion during a scan shrinks the table; survivors are still seen once. */
static void test_scan_during_shrink(void **state) {
    (void)state;
    const uint64_t n = 100000, keep = 500;
    struct visits v = { calloc(n, 1), 0 };
    struct kv_table t;
    table_init(&t);
    for (uint64_t i = 0; i < n; i++) ins(&t, i);
    finish_migration(&t);
    size_t groups_at_start = t.cur.ngroups;

    uint64_t cursor = 0, next_del = keep;
    do {
        cursor = table_scan(&t, cursor, 64, visit, &v);
        for (int k = 0; k < 400 && next_del < n; k++) del(&t, next_del++);
        step(&t);
    } while (cursor != 0);
    for (uint64_t i = 0; i < keep; i++) assert_int_equal(v.count[i], 1);
    for (uint64_t i = 0; i < n; i++) assert_true(v.count[i] <= 1);
    assert_true(t.cur.ngroups < groups_at_start);
    table_destroy(&t, entry_free);
    free(v.count);
}

/* ---------------------------------------------------------------- random */

static void test_random(void **state) {
    (void)state;
    const uint64_t n = 1000;
    struct kv_table t;
    table_init(&t);
    for (uint64_t i = 0; i < n; i++) ins(&t, i);
    finish_migration(&t);

    uint8_t *seen = calloc(n, 1);
    for (int i = 0; i < 200000; i++) {
        struct kv_entry *e = table_random(&t, rnd());
        assert_non_null(e);
        uint64_t id = key_id(e);
        assert_true(id < n);
        assert_ptr_equal(*find(&t, id), e);
        seen[id] = 1;
    }
    for (uint64_t i = 0; i < n; i++) assert_true(seen[i]);

    /* During a migration both parts are sampled, and only live entries. */
    uint64_t id = n;
    while (!t.old.ngroups) ins(&t, id++);
    step(&t);
    assert_true(t.old.ngroups > 0 && t.migrate_pos > 0);
    bool from_old = false, from_cur = false;
    for (int i = 0; i < 20000; i++) {
        struct kv_entry *e = table_random(&t, rnd());
        struct kv_entry **s = find(&t, key_id(e));
        assert_ptr_equal(*s, e);
        if (s >= t.old.slots && s < t.old.slots + t.old.ngroups * 16) from_old = true;
        else from_cur = true;
    }
    assert_true(from_old && from_cur);

    /* A single key is always the answer. */
    table_destroy(&t, entry_free);
    ins(&t, 77);
    for (int i = 0; i < 100; i++) assert_int_equal(key_id(table_random(&t, rnd())), 77);
    table_destroy(&t, entry_free);
    free(seen);
}

/* ---------------------------------------------------------------- churn */

/*
 * A steady number of live keys with millions of deletes and inserts of new
 * keys. Tombstones pile up in groups that were once full; they must be
 * recycled (reused by inserts, cleared by same-size rehashes), not make the
 * table grow. Returns the groups moved by rehashing during the churn.
 */
static uint64_t churn(uint64_t live, uint64_t ops, size_t *groups, size_t *max_groups) {
    uint64_t *ids = malloc(live * sizeof *ids);
    struct kv_table t;
    table_init(&t);
    for (uint64_t i = 0; i < live; i++) { ids[i] = i; ins(&t, i); }
    finish_migration(&t);
    *groups = *max_groups = t.cur.ngroups;
    uint64_t moved_at_start = t.moved_groups, next = live;

    for (uint64_t i = 0; i < ops; i++) {
        uint64_t slot = rnd() % live;
        assert_true(del(&t, ids[slot]));
        ids[slot] = next++;
        ins(&t, ids[slot]);
        if (t.cur.ngroups > *max_groups) *max_groups = t.cur.ngroups;
        assert_true(t.cur.used + t.cur.tombstones <= t.cur.ngroups * 14);
    }
    assert_int_equal(table_size(&t), live);
    assert_true(table_memory(&t) <= 2 * 2 * *groups * 16 * 9);
    for (uint64_t i = 0; i < live; i += 7) assert_int_equal(key_id(*find(&t, ids[i])), ids[i]);
    uint64_t moved = t.moved_groups - moved_at_start;
    printf("  churn %llu live: groups %zu -> max %zu, %llu groups moved, %zu tombstones\n",
           (unsigned long long)live, *groups, *max_groups, (unsigned long long)moved,
           t.cur.tombstones);
    table_destroy(&t, entry_free);
    free(ids);
    return moved;
}

static void test_tombstone_churn(void **state) {
    (void)state;
    size_t groups, max_groups;
    /* 61% full: one growth at most (a table just grown is over 5/8 of its
     * limit, where a full one grows rather than rehashes), then same-size
     * rehashes clear the tombstones. */
    uint64_t moved = churn(7500, 2500000, &groups, &max_groups);
    assert_true(2 * max_groups <= 3 * groups);
    assert_true(moved >= 2 * groups);
    /* 76% full: at most one doubling, then a steady state. */
    churn(100000, 1000000, &groups, &max_groups);
    assert_true(max_groups <= 2 * groups);
}

/* ---------------------------------------------------------------- migration */

/* table_step alone drains a migration in at most ngroups/STEP_BOUND calls. */
static void test_step_drains_migration(void **state) {
    (void)state;
    struct kv_table t;
    table_init(&t);
    uint64_t id = 0;
    while (t.cur.ngroups < 1024 || !t.old.ngroups) ins(&t, id++);
    size_t old_groups = t.old.ngroups, calls = 0;
    assert_true(t.cur.ngroups > old_groups && 2 * t.cur.ngroups <= 3 * old_groups);   /* 3/2 or 4/3 */
    while (step(&t)) calls++;
    assert_true(calls + 1 <= old_groups / STEP_BOUND + 1);
    assert_int_equal(t.old.ngroups, 0);
    assert_int_equal(t.cur.used, id);
    for (uint64_t i = 0; i < id; i++) assert_non_null(find(&t, i));

    /* Deleting nearly everything shrinks the table step by step; deleting
     * the rest frees the arrays. */
    for (uint64_t i = 10; i < id; i++) assert_true(del(&t, i));
    finish_migration(&t);
    for (int k = 0; k < 64; k++) finish_migration(&t), step(&t);
    assert_true(t.cur.ngroups <= 16);
    for (uint64_t i = 0; i < 10; i++) assert_non_null(find(&t, i));
    for (uint64_t i = 0; i < 10; i++) assert_true(del(&t, i));
    finish_migration(&t);
    assert_int_equal(table_memory(&t), 0);
    ins(&t, 5);
    assert_non_null(find(&t, 5));
    table_destroy(&t, entry_free);
}

/*
 * Step a growth from a table at its load limit (so many entries sit outside
 * their home group) one call at a time, and after every call check that
 * each key is found and that a one-call scan returns each key exactly once,
 * whichever part holds it and however far it was displaced.
 */
static void test_consistent_mid_migration(void **state) {
    (void)state;
    struct kv_table t;
    table_init(&t);
    uint64_t n = 0;
    while (t.cur.ngroups < 256 || !t.old.ngroups) ins(&t, n++);
    while (!t.old.ngroups || t.migrate_pos) {            /* the next growth, from its start */
        ins(&t, n++);
        if (t.old.ngroups && t.migrate_pos) finish_migration(&t);
    }
    struct visits v = { calloc(n, 1), 0 };
    size_t steps = 0;
    for (bool more = true; more; steps++) {
        for (uint64_t i = 0; i < n; i++) assert_int_equal(key_id(*find(&t, i)), i);
        memset(v.count, 0, n);
        v.nvisited = 0;
        assert_int_equal(table_scan(&t, 0, SIZE_MAX / 2, visit, &v), 0);
        assert_int_equal(v.nvisited, n);
        for (uint64_t i = 0; i < n; i++) assert_int_equal(v.count[i], 1);
        more = step(&t);
    }
    assert_true(steps >= 256 / 2 / STEP_BOUND);
    table_destroy(&t, entry_free);
    free(v.count);
}

/* ---------------------------------------------------------------- clustering */

/*
 * Keys whose hashes share their top 12 bits (all ones) land in the last
 * group of any table of up to 4096 groups, so their probe chains are long
 * and wrap around to group 0. Lookups, removals and scans must still work.
 */
static void test_clustered_hashes(void **state) {
    (void)state;
    const uint64_t nclus = 1200, nplain = 3000;
    uint64_t *clus = malloc(nclus * sizeof *clus);
    uint64_t cand = 10000000;
    for (uint64_t i = 0; i < nclus; i++) {
        char k[16];
        for (;; cand++) {
            make_key(k, cand);
            if (table_hash(k, 16) >> 52 == 0xFFF) break;
        }
        clus[i] = cand++;
    }
    struct kv_table t;
    table_init(&t);
    for (uint64_t i = 0; i < nclus; i++) {
        ins(&t, clus[i]);
        if (i < nplain) ins(&t, i);
    }
    for (uint64_t i = nclus; i < nplain; i++) ins(&t, i);
    finish_migration(&t);
    assert_true(t.cur.max_probe >= nclus / 16 - 1);

    for (uint64_t i = 0; i < nclus; i++) assert_int_equal(key_id(*find(&t, clus[i])), clus[i]);
    for (uint64_t i = 0; i < nplain; i++) assert_int_equal(key_id(*find(&t, i)), i);

    struct visits v = { calloc(cand, 1), 0 };
    uint64_t cursor = 0;
    do cursor = table_scan(&t, cursor, 16, visit, &v); while (cursor);
    for (uint64_t i = 0; i < nclus; i++) assert_int_equal(v.count[clus[i]], 1);
    for (uint64_t i = 0; i < nplain; i++) assert_int_equal(v.count[i], 1);
    assert_int_equal(v.nvisited, nclus + nplain);

    for (uint64_t i = 0; i < nclus; i += 2) assert_true(del(&t, clus[i]));
    for (uint64_t i = 0; i < nclus; i++) {
        if (i % 2) assert_int_equal(key_id(*find(&t, clus[i])), clus[i]);
        else assert_null(find(&t, clus[i]));
    }
    for (uint64_t i = 0; i < nplain; i++) assert_non_null(find(&t, i));
    table_destroy(&t, entry_free);
    free(v.count);
    free(clus);
}

/* ---------------------------------------------------------------- big arrays */

/* Pages of [p, p + bytes) that are resident. */
static size_t resident_pages(const void *p, size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + page - 1) / page, got = 0;
    unsigned char *vec = malloc(n);
    assert_int_equal(mincore((void *)p, bytes, vec), 0);
    for (size_t i = 0; i < n; i++) got += vec[i] & 1;
    free(vec);
    return got;
}

static void fill_to(struct kv_table *t, uint64_t *next_id, size_t load) {
    while (t->cur.used + t->cur.tombstones < load) ins(t, (*next_id)++);
}

/* The growth from 6,144 groups is the first into a mapped slot array
 * (8,192 groups, 1 MB): by the last insert before it, that array is
 * allocated and wholly resident, and the growth moves into it. */
static void test_next_faulted_in_before_growth(void **state) {
    (void)state;
    struct kv_table t;
    table_init(&t);
    uint64_t id = 0;
    while (t.cur.ngroups < 6144) ins(&t, id++);
    finish_migration(&t);
    size_t limit = t.cur.ngroups * 14;
    fill_to(&t, &id, limit - limit / 8 - 1);
    assert_int_equal(t.next.ngroups, 0);              /* not before the last eighth */
    fill_to(&t, &id, limit);                          /* full: the next insert grows */
    assert_int_equal(t.next.ngroups, 8192);
    size_t bytes = t.next.ngroups * 16 * sizeof(struct kv_entry *);
    assert_int_equal(t.next_faulted, bytes);
    assert_int_equal(resident_pages(t.next.slots, bytes), bytes / (size_t)sysconf(_SC_PAGESIZE));
    struct kv_entry **prepared = t.next.slots;
    ins(&t, id++);                                    /* the growth */
    assert_ptr_equal(t.cur.slots, prepared);
    assert_int_equal(t.next.ngroups, 0);
    finish_migration(&t);
    for (uint64_t k = 0; k < id; k += 97) assert_non_null(find(&t, k));
    table_destroy(&t, entry_free);
}

/* A drained old whose control bytes are mapped (65,536 groups: 1 MB) hands
 * them to retired, which steps unmap a piece at a time. */
static void test_retired_ctrl_unmapped_in_pieces(void **state) {
    (void)state;
    struct kv_table t;
    table_init(&t);
    uint64_t id = 0;
    while (t.cur.ngroups < 65536) ins(&t, id++);
    finish_migration(&t);
    fill_to(&t, &id, t.cur.ngroups * 14);
    ins(&t, id++);                                    /* grows: old has 65,536 groups */
    assert_int_equal(t.old.ngroups, 65536);
    finish_migration(&t);
    assert_non_null(t.retired);
    assert_int_equal(t.retired_bytes, (size_t)65536 * 16);
    size_t before = table_memory(&t), pieces = 0;
    while (t.retired) {
        size_t left = t.retired_bytes;
        assert_false(step(&t));
        assert_true(t.retired_bytes < left);
        pieces++;
    }
    assert_int_equal(pieces, 4);                      /* 256 KB each */
    assert_int_equal(before - table_memory(&t), (size_t)65536 * 16);
    for (uint64_t k = 0; k < id; k += 101) assert_non_null(find(&t, k));
    table_destroy(&t, entry_free);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_table),
        cmocka_unit_test(test_insert_find_update_remove),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_step_drains_migration),
        cmocka_unit_test(test_consistent_mid_migration),
        cmocka_unit_test(test_clustered_hashes),
        cmocka_unit_test(test_scan_during_growth),
        cmocka_unit_test(test_scan_during_shrink),
        cmocka_unit_test(test_scan_client_cursors),
        cmocka_unit_test(test_scan_cursor_sizes),
        cmocka_unit_test(test_tombstone_churn),
        cmocka_unit_test(test_model_2m),
        cmocka_unit_test(test_next_faulted_in_before_growth),
        cmocka_unit_test(test_retired_ctrl_unmapped_in_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
