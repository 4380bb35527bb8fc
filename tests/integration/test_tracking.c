/*
 * Client-side caching (CLIENT TRACKING) over raw RESP3 connections, byte
 * for byte: invalidation pushes to a reader for a write from a connection
 * on every thread (with several threads, connections are opened until
 * there is one on each, and keys are taken on every shard), REDIRECT to a
 * RESP2 client subscribed to __redis__:invalidate and tracking-redir-broken
 * once it has gone, BCAST with prefixes, OPTIN/OPTOUT with CLIENT CACHING,
 * NOLOOP, the null of FLUSHALL, expiry, the INFO fields and Redis's errors;
 * and eviction of tracked keys not feeding on its own messages.
 *
 * "No invalidation" is checked by order, never by waiting: after the write
 * that must not be told, a write of a key on the same shard (so from the
 * same thread, in order) that must be told; the next push names it.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS H_MAX_THREADS

static int nthreads(void) { return h_redis_mode() ? 1 : h_threads(); }

static void *open_raw_pinged(const struct server *s) {
    struct raw *x = raw_connect(s);
    RAW(x, "+PONG\r\n", "PING");   /* accepted and counted */
    return x;
}

static void close_raw(void *x) { raw_close(x); }

/* Raw connections, slot t on thread t. */
static int raw_every_thread(struct fixture *f, struct raw **conns) {
    void *any[MAX_THREADS];
    int n = h_every_thread(f->c, &f->srv, any, open_raw_pinged, close_raw);
    for (int t = 0; t < n; t++) conns[t] = any[t];
    return n;
}

static void close_all(struct raw **conns, int n) {
    for (int i = 0; i < n; i++) raw_close(conns[i]);
}

/* A key "<prefix><i>" on shard s (keys spread by slot % threads). */
static void key_on_shard(const char *prefix, int s, char *out) {
    int shards = nthreads();
    for (int i = 0;; i++) {
        snprintf(out, 48, "%s%d", prefix, i);
        if ((int)(h_key_slot(out, strlen(out)) % (unsigned)shards) == s) return;
    }
}

static void hello3(struct raw *r) {
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
}

static void expect_push(struct raw *r, const char *key) {
    char exp[256];
    snprintf(exp, sizeof exp, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$%zu\r\n%s\r\n", strlen(key), key);
    raw_expect(r, exp);
}

static void expect_message(struct raw *r, const char *key) {
    char exp[256];
    snprintf(exp, sizeof exp, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$%zu\r\n%s\r\n",
             strlen(key), key);
    raw_expect(r, exp);
}

static long long client_id(struct raw *r) {
    raw_cmd(r, "CLIENT ID");
    struct rv *v = raw_reply(r);
    long long id = v->integer;
    rv_free(v);
    return id;
}

/* A reader on every thread, a writer on every thread, a key on every
 * shard: the write is told to the reader, once, whoever runs it where. */
static void test_resp3_every_thread(void **state) {
    struct fixture *f = FIX(state);
    struct raw *rd[MAX_THREADS], *wr[MAX_THREADS];
    int n = raw_every_thread(f, rd);
    raw_every_thread(f, wr);
    for (int i = 0; i < n; i++) {
        hello3(rd[i]);
        RAW(rd[i], "+OK\r\n", "CLIENT TRACKING on");
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int s = 0; s < nthreads(); s++) {
                char k[48];
                key_on_shard("trk:e", s, k);
                RAW(wr[j], "+OK\r\n", "SET %s v1", k);
                RAW(rd[i], "$2\r\nv1\r\n", "GET %s", k);
                RAW(wr[j], "+OK\r\n", "SET %s v2", k);
                expect_push(rd[i], k);
                /* told once: the key is no longer tracked until read again */
                RAW(wr[j], "+OK\r\n", "SET %s v3", k);
                RAW(rd[i], "+PONG\r\n", "PING");
            }
    /* a multi-key read (a cross-shard transaction) tracks every key */
    char a[48], b[48];
    key_on_shard("trk:m", 0, a);
    key_on_shard(nthreads() > 1 ? "trk:m" : "trk:n", nthreads() - 1, b);
    RAW(wr[0], "+OK\r\n", "MSET %s 1 %s 2", a, b);
    raw_cmd(rd[0], "MGET %s %s", a, b);
    rv_free(raw_reply(rd[0]));
    RAW(wr[n - 1], "+OK\r\n", "SET %s x", a);
    expect_push(rd[0], a);
    RAW(wr[n - 1], ":1\r\n", "DEL %s", b);
    expect_push(rd[0], b);
    close_all(rd, n);
    close_all(wr, n);
}

/* REDIRECT to a RESP2 client in pub/sub mode, on every thread. */
static void test_redirect_resp2(void **state) {
    struct fixture *f = FIX(state);
    struct raw *tr[MAX_THREADS], *rc[MAX_THREADS];
    int n = raw_every_thread(f, tr);
    raw_every_thread(f, rc);
    for (int i = 0; i < n; i++) {
        long long id = client_id(rc[i]);
        RAW(rc[i], "*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n", "SUBSCRIBE __redis__:invalidate");
        for (int j = 0; j < n; j++) {
            RAW(tr[j], "+OK\r\n", "CLIENT TRACKING on REDIRECT %lld", id);
            raw_cmd(tr[j], "CLIENT GETREDIR");
            struct rv *v = raw_reply(tr[j]);
            assert_int_equal(v->integer, id);
            rv_free(v);
            for (int s = 0; s < nthreads(); s++) {
                char k[48];
                key_on_shard("trk:r", s, k);
                raw_cmd(tr[j], "GET %s", k);
                rv_free(raw_reply(tr[j]));
                RAW(tr[(j + 1) % n], "+OK\r\n", "SET %s 1", k);
                expect_message(rc[i], k);
            }
            RAW(tr[j], "+OK\r\n", "CLIENT TRACKING off");
        }
        RAW(rc[i], "*3\r\n$11\r\nunsubscribe\r\n$20\r\n__redis__:invalidate\r\n:0\r\n", "UNSUBSCRIBE");
    }
    /* a RESP3 tracking client whose redirect client has gone */
    long long id = client_id(rc[n - 1]);
    hello3(tr[0]);
    RAW(tr[0], "+OK\r\n", "CLIENT TRACKING on REDIRECT %lld", id);
    RAW(tr[0], "_\r\n", "GET trk:gone");
    RAW(rc[n - 1], "+OK\r\n", "QUIT");
    raw_read_to_close(rc[n - 1], 10000);
    RAW(tr[n - 1], "+OK\r\n", "SET trk:gone 1");
    char exp[128];
    snprintf(exp, sizeof exp, ">2\r\n$21\r\ntracking-redir-broken\r\n:%lld\r\n", id);
    raw_expect(tr[0], exp);
    raw_cmd(tr[0], "CLIENT TRACKINGINFO");
    struct rv *info = raw_reply(tr[0]);
    struct rv *flags = rv_map_get(info, "flags");
    assert_non_null(flags);
    assert_int_equal(flags->n, 2);
    assert_string_equal(flags->elem[1]->str, "broken_redirect");
    rv_free(info);
    /* CLIENT INFO: tracking (t), broken redirect (R), the redirect id */
    raw_cmd(tr[0], "CLIENT INFO");
    info = raw_reply(tr[0]);
    char redir[48];
    snprintf(redir, sizeof redir, " redir=%lld ", id);
    assert_non_null(strstr(info->str, " flags=tR "));
    assert_non_null(strstr(info->str, redir));
    rv_free(info);
    RAW(tr[0], "-ERR The client ID you want redirect to does not exist\r\n", "CLIENT TRACKING on REDIRECT %lld", id);
    long long self = client_id(tr[0]);
    RAW(tr[0], "-ERR A client can only redirect to a single other client\r\n",
        "CLIENT TRACKING on REDIRECT %lld REDIRECT %lld", self, self);
    RAW(tr[0], "+OK\r\n", "CLIENT TRACKING off");
    close_all(tr, n);
    for (int i = 0; i < n - 1; i++) raw_close(rc[i]);
    raw_close(rc[n - 1]);
}

/* Pushes of BCAST come one per prefix: collect n of them, in any order
 * (keys on several shards are told by several threads). */
static void expect_bcast_keys(struct raw *r, int n, const char *const *keys) {
    bool seen[8] = { false };
    for (int i = 0; i < n; i++) {
        struct rv *v = raw_reply(r);
        assert_int_equal(v->type, '>');
        assert_string_equal(v->elem[0]->str, "invalidate");
        for (size_t e = 0; e < v->elem[1]->n; e++) {
            bool found = false;
            for (int k = 0; k < n; k++)
                if (strcmp(v->elem[1]->elem[e]->str, keys[k]) == 0) found = seen[k] = true;
            assert_true(found);
        }
        rv_free(v);
    }
    for (int k = 0; k < n; k++) assert_true(seen[k]);
}

static void test_bcast_prefixes(void **state) {
    struct fixture *f = FIX(state);
    struct raw *c[MAX_THREADS], *w[MAX_THREADS];
    int n = raw_every_thread(f, c);
    raw_every_thread(f, w);
    for (int i = 0; i < n; i++) {
        hello3(c[i]);
        RAW(c[i], "-ERR PREFIX option requires BCAST mode to be enabled\r\n", "CLIENT TRACKING on PREFIX a:");
        RAW(c[i], "-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n", "CLIENT TRACKING on BCAST OPTIN");
        RAW(c[i], "-ERR Prefix 'a:x' overlaps with another provided prefix 'a:'. "
                  "Prefixes for a single client must not overlap.\r\n",
            "CLIENT TRACKING on BCAST PREFIX a:x PREFIX a:");
        RAW(c[i], "+OK\r\n", "CLIENT TRACKING on BCAST PREFIX a: PREFIX b:");
        RAW(c[i], "-ERR Prefix 'a' overlaps with an existing prefix 'a:'. "
                  "Prefixes for a single client must not overlap.\r\n", "CLIENT TRACKING on BCAST PREFIX a");
        RAW(c[i], "-ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
                  "and then re-enabling it with a different mode.\r\n", "CLIENT TRACKING on");
        for (int j = 0; j < n; j++) {
            /* one transaction: one push per prefix and shard */
            RAW(w[j], "+OK\r\n", "MSET a:1{x} 1 a:2{x} 2 b:1{x} 3 c:1{x} 4");
            raw_expect(c[i], ">2\r\n$10\r\ninvalidate\r\n*2\r\n$6\r\na:1{x}\r\n$6\r\na:2{x}\r\n");
            raw_expect(c[i], ">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\nb:1{x}\r\n");
            /* keys of every shard (not read before: BCAST tells every write) */
            for (int s = 0; s < nthreads(); s++) {
                char k[48];
                key_on_shard("a:s", s, k);
                RAW(w[j], "+OK\r\n", "SET c:other 1");
                RAW(w[j], "+OK\r\n", "SET %s 1", k);
                const char *keys[] = { k };
                expect_bcast_keys(c[i], 1, keys);
            }
        }
        raw_cmd(c[i], "CLIENT TRACKINGINFO");
        struct rv *info = raw_reply(c[i]);
        assert_int_equal(rv_map_get(info, "prefixes")->n, 2);
        rv_free(info);
        RAW(c[i], "+OK\r\n", "CLIENT TRACKING off");
    }
    if (!h_redis_mode()) {
        RAW(c[0], "+OK\r\n", "CLIENT TRACKING on BCAST PREFIX p1 PREFIX p2");
        assert_int_equal(info_ll(f->c, "stats", "tracking_total_prefixes"), 2);
        RAW(c[0], "+OK\r\n", "CLIENT TRACKING off");
        assert_int_equal(info_ll(f->c, "stats", "tracking_total_prefixes"), 0);
    }
    close_all(c, n);
    close_all(w, n);
}

/* OPTIN tracks after CLIENT CACHING yes, OPTOUT all but after CLIENT
 * CACHING no, each for the next command only. */
static void test_optin_optout(void **state) {
    struct fixture *f = FIX(state);
    struct raw *c = raw_connect(&f->srv), *w = raw_connect(&f->srv);
    hello3(c);
    RAW(c, "-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT "
           "mode enabled\r\n", "CLIENT CACHING yes");
    RAW(c, "-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n", "CLIENT TRACKING on OPTIN OPTOUT");
    RAW(c, "+OK\r\n", "CLIENT TRACKING on OPTIN");
    RAW(c, "-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n", "CLIENT CACHING no");
    RAW(c, "-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
           "re-enabling it with a different mode.\r\n", "CLIENT TRACKING on OPTOUT");
    RAW(c, "_\r\n", "GET o{t}1");                  /* not tracked */
    RAW(c, "+OK\r\n", "CLIENT CACHING yes");
    RAW(c, "_\r\n", "GET o{t}2");                  /* tracked */
    RAW(c, "_\r\n", "GET o{t}3");                  /* not: CACHING lasts one command */
    RAW(c, "+OK\r\n", "CLIENT CACHING yes");
    RAW(c, "+OK\r\n", "MULTI");
    RAW(c, "+QUEUED\r\n", "GET o{t}4");
    RAW(c, "*1\r\n_\r\n", "EXEC");                 /* the whole transaction is tracked */
    RAW(w, "+OK\r\n", "MSET o{t}1 1 o{t}2 2 o{t}3 3 o{t}4 4");
    expect_push(c, "o{t}2");
    expect_push(c, "o{t}4");
    RAW(c, "+PONG\r\n", "PING");
    RAW(c, "+OK\r\n", "CLIENT TRACKING off");
    RAW(c, "+OK\r\n", "CLIENT TRACKING on OPTOUT");
    RAW(c, "-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.\r\n", "CLIENT CACHING yes");
    RAW(c, "+OK\r\n", "CLIENT CACHING no");
    RAW(c, "$1\r\n1\r\n", "GET o{t}1");              /* not tracked */
    RAW(c, "$1\r\n2\r\n", "GET o{t}2");              /* tracked */
    raw_cmd(c, "CLIENT TRACKINGINFO");
    struct rv *info = raw_reply(c);
    assert_int_equal(rv_map_get(info, "flags")->n, 2);   /* on optout: CACHING no was used up */
    rv_free(info);
    RAW(w, "+OK\r\n", "MSET o{t}1 1 o{t}2 2");
    expect_push(c, "o{t}2");
    RAW(c, "+PONG\r\n", "PING");
    raw_close(c);
    raw_close(w);
}

/* NOLOOP: a client's own writes are not told to it, in both modes. */
static void test_noloop(void **state) {
    struct fixture *f = FIX(state);
    struct raw *c[MAX_THREADS], *w[MAX_THREADS];
    int n = raw_every_thread(f, c);
    raw_every_thread(f, w);
    for (int i = 0; i < n; i++) {
        hello3(c[i]);
        RAW(c[i], "+OK\r\n", "CLIENT TRACKING on NOLOOP");
        for (int s = 0; s < nthreads(); s++) {
            char tag[48], k1[64], k2[64];
            key_on_shard("nl:", s, tag);
            snprintf(k1, sizeof k1, "{%s}a", tag);
            snprintf(k2, sizeof k2, "{%s}b", tag);
            raw_cmd(c[i], "MGET %s %s", k1, k2);
            rv_free(raw_reply(c[i]));
            RAW(c[i], "+OK\r\n", "SET %s mine", k1);   /* our own: not told */
            RAW(w[(i + 1) % n], "+OK\r\n", "SET %s theirs", k2);
            expect_push(c[i], k2);
        }
        RAW(c[i], "+OK\r\n", "CLIENT TRACKING off");
        RAW(c[i], "+OK\r\n", "CLIENT TRACKING on BCAST NOLOOP");
        RAW(c[i], "+OK\r\n", "SET {nl}own1 1");
        RAW(w[(i + 1) % n], "+OK\r\n", "SET {nl}own2 2");
        const char *keys[] = { "{nl}own2" };
        expect_bcast_keys(c[i], 1, keys);
        RAW(c[i], "+OK\r\n", "CLIENT TRACKING off");
    }
    close_all(c, n);
    close_all(w, n);
}

/* FLUSHALL and FLUSHDB tell every tracking client a null; the table empties. */
static void test_flush_null(void **state) {
    struct fixture *f = FIX(state);
    struct raw *c[MAX_THREADS], *w[MAX_THREADS];
    int n = raw_every_thread(f, c);
    raw_every_thread(f, w);
    for (int i = 0; i < n; i++) {
        hello3(c[i]);
        RAW(c[i], "+OK\r\n", "CLIENT TRACKING on");
    }
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) {
            RAW(c[i], "_\r\n", "GET fl:a");
            RAW(c[i], "_\r\n", "GET fl:b");
        }
        if (!h_redis_mode()) assert_int_equal(info_ll(f->c, "stats", "tracking_total_keys"), 2);
        RAW(w[j], "+OK\r\n", j % 2 ? "FLUSHDB" : "FLUSHALL");
        for (int i = 0; i < n; i++) raw_expect(c[i], ">2\r\n$10\r\ninvalidate\r\n_\r\n");
        if (!h_redis_mode()) assert_int_equal(info_ll(f->c, "stats", "tracking_total_keys"), 0);
    }
    if (!h_redis_mode()) assert_int_equal(info_ll(f->c, "clients", "tracking_clients"), n);
    close_all(c, n);
    close_all(w, n);
}

/* An expired key is told to its readers (active expiry: nobody reads it). */
static void test_expiry(void **state) {
    struct fixture *f = FIX(state);
    struct raw *c[MAX_THREADS];
    int n = raw_every_thread(f, c);
    for (int i = 0; i < n; i++) {
        hello3(c[i]);
        RAW(c[i], "+OK\r\n", "CLIENT TRACKING on");
        for (int s = 0; s < nthreads(); s++) {
            char k[48];
            key_on_shard("ex:", s, k);
            OK(f->c, "SET %s v PX 100", k);
            raw_cmd(c[i], "GET %s", k);
            struct rv *v = raw_reply(c[i]);
            bool read = !v->null;      /* else it expired first: nothing was tracked */
            rv_free(v);
            if (read) expect_push(c[i], k);      /* raw_reply waits (bounded) for it */
        }
    }
    close_all(c, n);
}

/* Redis's maxmemory.tcl, "client tracking don't cause eviction feedback
 * loop": under a maxmemory 40 KB below what ten tracking clients' 300 keys
 * of 1000-byte names take, eviction frees about that and stops, as in
 * Redis (10 to 50 keys go, 200 to 300 stay); else the invalidations of
 * the evicted keys, each repeating a long name to every reader, count
 * against the limit and evict more keys, and so on until the keyspace is
 * empty (at three threads and more, somewhat more keys may go: see
 * fb_check). With RESP2 readers, which are told nothing, only the entries
 * between threads are at stake; with RESP3 ones the pushes too, waiting in
 * their output buffers or in sends not yet reaped. Evictions are polled
 * until they have stopped for a while. Once the readers have read every
 * push, nothing is left "on its way out" (mem_not_counted_for_evict). */
enum { FB_READERS = 10, FB_KEYS = 300, FB_NAME = 1000 };

static void fb_key(char *key, int j) {
    int n = snprintf(key, FB_NAME + 16, "%d", j);
    memset(key + n, 'x', FB_NAME);
    key[n + FB_NAME] = '\0';
}

/* The keys evicted_keys has stopped at (bounded poll). */
static long long fb_evicted_settled(redisContext *c) {
    long long evicted = -1;
    for (int polls = 0, same = 0; polls < 500 && same < 10; polls++) {
        long long now = info_ll(c, "stats", "evicted_keys");
        same = now == evicted ? same + 1 : 0;
        evicted = now;
        h_sleep_ms(10);
    }
    return evicted;
}

static void fb_check(struct fixture *f, long long evicted) {
    redisReply *r = cmd(f->c, "DBSIZE");
    long long left = r->integer;
    freeReplyObject(r);
    print_message("%lld keys evicted, %lld left\n", evicted, left);
    /* With two shards or more, a shard that has not published its best
     * candidate lately frees a share blind, and entries between threads
     * cost more; and the sanitizers' allocator counts other sizes: up to
     * some 60 keys were seen to go (53 at two threads in one CI run). A
     * feedback loop goes on until the keyspace is empty, which `left`
     * catches. */
    long long most = 50;
#if defined(__SANITIZE_ADDRESS__)
    most = 80;
#endif
    if (nthreads() > 1) most = 80;
    assert_in_range(evicted, 10, most);
    assert_in_range(left, 200, FB_KEYS);
}

/* Returns evicted_keys before the limit. */
static long long fb_limit(struct fixture *f) {
    long long before = info_ll(f->c, "stats", "evicted_keys");
    OK(f->c, "CONFIG SET maxmemory-policy allkeys-lru");
    OK(f->c, "CONFIG SET maxmemory-eviction-tenacity 100");
    long long used = info_ll(f->c, "memory", "used_memory");
    OK(f->c, "CONFIG SET maxmemory %lld", used - 40000);
    return before;
}

static void fb_unlimit(struct fixture *f) {
    OK(f->c, "CONFIG SET maxmemory 0");
    OK(f->c, "CONFIG SET maxmemory-policy noeviction");
    OK(f->c, "CONFIG SET maxmemory-eviction-tenacity 10");
}

/* The keys written, each read by every reader (read_key). */
static void fb_fill(struct fixture *f, void *const *readers, void (*read_key)(void *reader, const char *key)) {
    char key[FB_NAME + 16];
    for (int j = 0; j < FB_KEYS; j++) {
        fb_key(key, j);
        OK(f->c, "SET %s x", key);
        for (int i = 0; i < FB_READERS; i++) read_key(readers[i], key);
    }
}

static void fb_get_resp2(void *reader, const char *key) { BULK((redisContext *)reader, "x", "GET %s", key); }
static void fb_get_resp3(void *reader, const char *key) { RAW((struct raw *)reader, "$1\r\nx\r\n", "GET %s", key); }

static void test_eviction_no_feedback_loop(void **state) {
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET maxmemory 0");
    redisContext *rd[FB_READERS];
    for (int i = 0; i < FB_READERS; i++) {
        rd[i] = h_connect(&f->srv);
        OK(rd[i], "CLIENT TRACKING on");
    }
    fb_fill(f, (void *const *)rd, fb_get_resp2);
    long long before = fb_limit(f);
    fb_check(f, fb_evicted_settled(f->c) - before);
    fb_unlimit(f);
    for (int i = 0; i < FB_READERS; i++) redisFree(rd[i]);
}

static void test_eviction_no_feedback_loop_resp3(void **state) {
    struct fixture *f = FIX(state);
    OK(f->c, "CONFIG SET maxmemory 0");
    struct raw *rd[FB_READERS];
    for (int i = 0; i < FB_READERS; i++) {
        rd[i] = raw_connect(&f->srv);
        hello3(rd[i]);
        RAW(rd[i], "+OK\r\n", "CLIENT TRACKING on");
    }
    fb_fill(f, (void *const *)rd, fb_get_resp3);
    long long before = fb_limit(f);
    long long evicted = fb_evicted_settled(f->c) - before;
    fb_check(f, evicted);
    /* every reader is told every evicted key, one push each */
    for (int i = 0; i < FB_READERS; i++)
        for (long long k = 0; k < evicted; k++) {
            struct rv *v = raw_reply(rd[i]);
            assert_int_equal(v->n, 2);
            assert_int_equal(v->elem[1]->n, 1);
            rv_free(v);
        }
    long long leaving = -1;
    for (int polls = 0; polls < 200 && leaving != 0; polls++) {
        if (polls) h_sleep_ms(10);
        leaving = info_ll(f->c, "memory", "mem_not_counted_for_evict");
    }
    assert_int_equal(leaving, 0);
    fb_unlimit(f);
    for (int i = 0; i < FB_READERS; i++) raw_close(rd[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_resp3_every_thread, h_flushall),
        cmocka_unit_test_setup(test_redirect_resp2, h_flushall),
        cmocka_unit_test_setup(test_bcast_prefixes, h_flushall),
        cmocka_unit_test_setup(test_optin_optout, h_flushall),
        cmocka_unit_test_setup(test_noloop, h_flushall),
        cmocka_unit_test_setup(test_flush_null, h_flushall),
        cmocka_unit_test_setup(test_expiry, h_flushall),
        cmocka_unit_test_setup(test_eviction_no_feedback_loop, h_flushall),
        cmocka_unit_test_setup(test_eviction_no_feedback_loop_resp3, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("tracking", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
