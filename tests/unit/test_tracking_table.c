/*
 * The tracking table of a shard (kv/tracking.c) against a model: random
 * reads by clients of several threads with several epochs, writes with and
 * without BCAST prefixes, flushes, evictions of the table's keys and
 * evictions of keys from the keyspace. Every change must emit, to each
 * thread's outbox, one entry for the key carrying exactly the reader
 * records of that thread (the newest epoch of each client), and one per
 * registration of each matching prefix, and the global counts must equal
 * the model's. A key evicted from the keyspace emits nothing until its
 * clients are told (trk_tell_evicted), and then the same.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/tracking.h"

#define NKEYS 40
#define NCLIENTS 12
#define NTHREADS 4
#define NPREFIX 5

static const char *prefixes[NPREFIX] = { "", "k1", "k2", "k3", "x" };

struct model {
    int epoch[NKEYS][NCLIENTS];    /* -1: no record */
    bool reg[NPREFIX][NCLIENTS];
    int reg_epoch[NPREFIX][NCLIENTS];
};

static void key_name(int k, char *out) { sprintf(out, "k%d", k); }

static struct block_record client_rec(int c, int epoch) {
    return (struct block_record){ (uint32_t)(c % NTHREADS), (uint32_t)c, (uint32_t)(100 + c), (uint32_t)epoch };
}

static void outbox_clear(void) {
    for (int t = 0; t < TRK_MAX_THREADS; t++) trk_outbox.to[t].len = 0;
    trk_outbox.mask = 0;
}

/* How many of an entry's reader records (in its prefix's place) are
 * (client, epoch)'s. */
static int reader_records(const struct trk_entry *e, const char *recs, int c, int epoch) {
    int n = 0;
    assert_int_equal(e->plen, e->idx * sizeof(struct block_record));
    for (uint32_t i = 0; i < e->idx; i++) {
        struct block_record r;
        memcpy(&r, recs + i * sizeof r, sizeof r);
        n += r.worker == (uint32_t)(c % NTHREADS) && r.idx == (uint32_t)c && r.gen == (uint32_t)(100 + c) &&
             r.seq == (uint32_t)epoch;
    }
    return n;
}

/* Count what tells (client, epoch) about key: KEY entries' records, or
 * BCAST entries of that prefix. */
static int count_entries(unsigned kind, int c, int epoch, const char *key, const char *prefix) {
    int n = 0;
    struct rbuf *b = &trk_outbox.to[c % NTHREADS];
    for (size_t off = 0; off < b->len;) {
        struct trk_entry e;
        memcpy(&e, b->buf + off, sizeof e);
        const char *p = b->buf + off + sizeof e;
        size_t klen = e.klen == TRK_NULL_LEN ? 0 : e.klen;
        bool match = e.kind == kind && klen == strlen(key) && memcmp(p + e.plen, key, klen) == 0;
        if (match && kind == TRK_MSG_KEY) {
            n += reader_records(&e, p, c, epoch);
        } else if (match) {
            match = e.idx == (uint32_t)c && e.gen == (uint32_t)(100 + c) && e.epoch == (uint32_t)epoch &&
                    e.plen == strlen(prefix) && memcmp(p, prefix, e.plen) == 0;
            n += match;
        }
        off += sizeof e + e.plen + klen;
    }
    return n;
}

static size_t total_entries(void) {
    size_t n = 0;
    for (int t = 0; t < NTHREADS; t++) {
        struct rbuf *b = &trk_outbox.to[t];
        for (size_t off = 0; off < b->len;) {
            struct trk_entry e;
            memcpy(&e, b->buf + off, sizeof e);
            off += sizeof e + e.plen + (e.klen == TRK_NULL_LEN ? 0 : e.klen);
            n++;
        }
    }
    return n;
}

static void check_counts(const struct model *m, struct shard *s) {
    long keys = 0, items = 0;
    for (int k = 0; k < NKEYS; k++) {
        int n = 0;
        for (int c = 0; c < NCLIENTS; c++) n += m->epoch[k][c] >= 0;
        keys += n > 0;
        items += n;
    }
    assert_int_equal(atomic_load(&rk_tracking_keys), keys);
    assert_int_equal(atomic_load(&rk_tracking_items), items);
    assert_int_equal(trk_key_count(s), (size_t)keys);
    size_t np = 0;
    for (int p = 0; p < NPREFIX; p++) {
        bool any = false;
        for (int c = 0; c < NCLIENTS; c++) any |= m->reg[p][c];
        np += any;
    }
    assert_int_equal(trk_prefix_count(s), np);
}

/* A write of key k: what the model says must be told, and nothing more
 * (one KEY entry per thread with readers). */
static void check_invalidation(struct model *m, int k, bool bcast) {
    char key[16];
    key_name(k, key);
    size_t expected = 0;
    unsigned threads = 0;
    for (int c = 0; c < NCLIENTS; c++) {
        int want = m->epoch[k][c] >= 0;
        if (want) assert_int_equal(count_entries(TRK_MSG_KEY, c, m->epoch[k][c], key, NULL), 1);
        if (want) threads |= 1u << (c % NTHREADS);
        m->epoch[k][c] = -1;
        for (int p = 0; p < NPREFIX && bcast; p++) {
            bool match = strncmp(key, prefixes[p], strlen(prefixes[p])) == 0 && m->reg[p][c];
            if (match) assert_int_equal(count_entries(TRK_MSG_BCAST, c, m->reg_epoch[p][c], key, prefixes[p]), 1);
            expected += match;
        }
    }
    expected += (size_t)__builtin_popcount(threads);
    assert_int_equal(total_entries(), expected);
}

static void test_model(void **state) {
    (void)state;
    struct shard s;
    memset(&s, 0, sizeof s);
    struct model m;
    memset(&m, 0, sizeof m);
    for (int k = 0; k < NKEYS; k++)
        for (int c = 0; c < NCLIENTS; c++) m.epoch[k][c] = -1;
    srand(12345);
    for (int step = 0; step < 20000; step++) {
        int op = rand() % 100, k = rand() % NKEYS, c = rand() % NCLIENTS, epoch = rand() % 3;
        char key[16];
        key_name(k, key);
        struct slice ks = { key, strlen(key) };
        outbox_clear();
        if (op < 50) {
            struct block_record r = client_rec(c, epoch);
            trk_record(&s, ks, &r);
            m.epoch[k][c] = epoch;     /* the newest epoch replaces the record */
            assert_int_equal(total_entries(), 0);
        } else if (op < 70) {
            bool bcast = rand() % 2;
            struct trk_writer w = { 0, 0, 0 };
            trk_invalidate(&s, ks, &w, bcast);
            check_invalidation(&m, k, bcast);
        } else if (op < 75) {
            /* evicted from the keyspace: off the table at once, told later */
            trk_key_evicted(&s, ks);
            assert_int_equal(total_entries(), 0);
            struct model gone = m;
            for (int j = 0; j < NCLIENTS; j++) gone.epoch[k][j] = -1;
            check_counts(&gone, &s);
            trk_tell_evicted(&s);
            check_invalidation(&m, k, true);
        } else if (op < 85) {
            int p = rand() % NPREFIX;
            struct block_record r = client_rec(c, epoch);
            trk_bcast_register(&s, (struct slice){ prefixes[p], strlen(prefixes[p]) }, &r);
            m.reg[p][c] = true;
            m.reg_epoch[p][c] = epoch;
        } else if (op < 93) {
            struct block_record r = client_rec(c, epoch);
            trk_bcast_unregister(&s, &r);
            for (int p = 0; p < NPREFIX; p++)
                if (m.reg[p][c] && m.reg_epoch[p][c] == epoch) m.reg[p][c] = false;
        } else if (op < 95) {
            trk_forget_all(&s);
            for (int i = 0; i < NKEYS; i++)
                for (int j = 0; j < NCLIENTS; j++) m.epoch[i][j] = -1;
            assert_int_equal(total_entries(), 0);
        } else {
            /* evict down to a limit: exactly the keys above it go, each told
             * to all its readers */
            long before = atomic_load(&rk_tracking_keys), limit = rand() % (before + 1);
            size_t n = trk_evict(&s, limit, 1000);
            assert_int_equal((long)n, before - limit);
            assert_int_equal(atomic_load(&rk_tracking_keys), limit);
            /* the model learns which keys went from the entries */
            for (int i = 0; i < NKEYS; i++) {
                char kn[16];
                key_name(i, kn);
                bool told = false;
                for (int j = 0; j < NCLIENTS; j++)
                    if (m.epoch[i][j] >= 0 && count_entries(TRK_MSG_KEY, j, m.epoch[i][j], kn, NULL)) told = true;
                if (told)
                    for (int j = 0; j < NCLIENTS; j++) m.epoch[i][j] = -1;
            }
        }
        check_counts(&m, &s);
    }
    trk_forget_all(&s);
    trk_shard_destroy(&s);
    for (int t = 0; t < TRK_MAX_THREADS; t++) rbuf_free(&trk_outbox.to[t]);
    assert_int_equal(atomic_load(&rk_tracking_keys), 0);
    assert_int_equal(atomic_load(&rk_tracking_items), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
