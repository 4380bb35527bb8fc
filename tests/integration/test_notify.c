/*
 * Keyspace notifications (notify-keyspace-events): the exact events, in
 * order, that a command of each family publishes, with Redis 7.0's names
 * and classes, read by a PSUBSCRIBE '__key*__:*' subscriber. Also the
 * events the keyspace raises itself: "expired" (a key found expired by a
 * lookup, also inside a cross-shard transaction and in another database,
 * or deleted by active expiry) and "new" (a key added, before the
 * command's own event). Multi-key commands use keys on different shards.
 *
 * One command's events come from one thread, so they arrive in order.
 * Events of different threads have no order between them (ARCHITECTURE
 * §7), so each step reads its events before the next command is sent, and
 * a blocked client served by another thread's push is checked as any
 * interleaving of the two threads' ordered events. Each test ends with a
 * marker message: an unexpected event of the last step arrives before it.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATTERN "__key*__:*"

/* The key "<prefix><n>" for the first n whose slot lands on shard
 * `shard` (modulo the thread count): keys for different shards. */
static const char *key_on(char *buf, const char *prefix, int shard) {
    int threads = h_threads();
    for (int n = 0;; n++) {
        snprintf(buf, 32, "%s%d", prefix, n);
        if ((int)(h_key_slot(buf, strlen(buf)) % (unsigned)threads) == shard % threads) return buf;
    }
}

static struct raw *subscribe(struct fixture *f, const char *flags) {
    OK(f->c, "CONFIG SET notify-keyspace-events %s", flags);
    struct raw *s = raw_connect(&f->srv);
    raw_cmd(s, "PSUBSCRIBE " PATTERN);
    struct rv *v = raw_reply(s);
    assert_int_equal(v->n, 3);
    assert_string_equal(v->elem[0]->str, "psubscribe");
    rv_free(v);
    return s;
}

/* The next message as "channel message" (malloc'd). */
static char *next_message(struct raw *s) {
    struct rv *v = raw_reply(s);
    if (v->type != '*' || v->n != 4 || strcmp(v->elem[0]->str, "pmessage") != 0 ||
        strcmp(v->elem[1]->str, PATTERN) != 0)
        fail_msg("not a pmessage of " PATTERN ": %s", h_escape(v->raw, v->rawlen));
    size_t n = v->elem[2]->len + v->elem[3]->len + 2;
    char *out = malloc(n);
    snprintf(out, n, "%s %s", v->elem[2]->str, v->elem[3]->str);
    rv_free(v);
    return out;
}

/* "event key" (or "event key db") as the keyevent message it names. */
static void keyevent_text(char *buf, size_t size, const char *spec) {
    char ev[64], key[64];
    int db = 0;
    if (sscanf(spec, "%63s %63s %d", ev, key, &db) < 2) fail_msg("bad spec %s", spec);
    snprintf(buf, size, "__keyevent@%d__:%s %s", db, ev, key);
}

static void expect_message(struct raw *s, const char *text) {
    char *got = next_message(s);
    assert_string_equal(got, text);
    free(got);
}

/* The next n keyevent messages, in order: "event key [db]" each. */
static void expect_events(struct raw *s, int n, ...) {
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        char want[160];
        keyevent_text(want, sizeof want, va_arg(ap, const char *));
        expect_message(s, want);
    }
    va_end(ap);
}

/* The next na + nb keyevent messages: a[] and b[], each in its order,
 * interleaved in any way (the events of two threads). */
static void expect_interleaved(struct raw *s, const char *const *a, int na, const char *const *b, int nb) {
    int i = 0, j = 0;
    while (i < na || j < nb) {
        char *got = next_message(s);
        char wa[160] = "", wb[160] = "";
        if (i < na) keyevent_text(wa, sizeof wa, a[i]);
        if (j < nb) keyevent_text(wb, sizeof wb, b[j]);
        if (i < na && strcmp(got, wa) == 0) i++;
        else if (j < nb && strcmp(got, wb) == 0) j++;
        else fail_msg("unexpected event %s (expected %s or %s)", got, wa, wb);
        free(got);
    }
}

/* Nothing else arrived before this marker. (PUBLISH's count may still
 * include an earlier test's subscriber that another thread has not
 * forgotten yet: not checked.) */
static void expect_end(struct fixture *f, struct raw *s) {
    redisReply *r = cmd(f->c, "PUBLISH __keyevent@0__:end marker");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer >= 1);
    freeReplyObject(r);
    expect_message(s, "__keyevent@0__:end marker");
    raw_close(s);
    /* gone from the directories before the next test (or the server's exit) */
    long long n = -1;
    for (int tries = 0; tries < 1000 && n != 0; tries++) {
        if (tries) h_sleep_ms(2);
        r = cmd(f->c, "PUBLISH __keyevent@0__:end gone");
        n = r->integer;
        freeReplyObject(r);
    }
    assert_int_equal(n, 0);
}

/* Wait (bounded) until n clients are blocked. */
static void wait_blocked(redisContext *c, long long n) {
    for (int i = 0; i < 2000; i++) {
        if (info_ll(c, "clients", "blocked_clients") == n) return;
        h_sleep_ms(2);
    }
    fail_msg("blocked_clients did not reach %lld", n);
}

/* A key with a 1 ms TTL, then long enough for the clock to pass it (the
 * server reads its clock once per loop iteration, after the request came). */
static void set_expiring(struct fixture *f, const char *key) {
    OK(f->c, "SET %s v PX 1", key);
}

static void let_expire(void) {
    h_sleep_ms(5);
}

static void test_strings(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EA");
    char a[32], b[32];
    key_on(a, "str:a", 0);
    key_on(b, "str:b", 1);

    OK(f->c, "SET foo bar");
    expect_events(s, 1, "set foo");
    OK(f->c, "SET foo bar EX 100");
    expect_events(s, 2, "set foo", "expire foo");
    INT(f->c, 0, "SETNX foo x");
    INT(f->c, 1, "SETNX nx x");
    expect_events(s, 1, "set nx");
    OK(f->c, "SETEX sx 100 v");
    expect_events(s, 2, "set sx", "expire sx");
    OK(f->c, "PSETEX px 100000 v");
    expect_events(s, 2, "set px", "expire px");
    BULK(f->c, "bar", "GETSET foo v2");
    expect_events(s, 1, "set foo");
    BULK(f->c, "v2", "SET foo v3 GET");
    expect_events(s, 1, "set foo");
    NIL(f->c, "SET nosuch v XX");
    OK(f->c, "SET foo v4 XX");
    expect_events(s, 1, "set foo");
    INT(f->c, 3, "APPEND foo x");
    expect_events(s, 1, "append foo");
    INT(f->c, 1, "APPEND ap x");
    expect_events(s, 1, "append ap");
    INT(f->c, 3, "SETRANGE foo 1 yy");
    expect_events(s, 1, "setrange foo");
    INT(f->c, 3, "SETRANGE foo 1 %s", "");
    INT(f->c, 0, "SETRANGE nosuch 1 %s", "");
    INT(f->c, 4, "SETRANGE sr 2 ab");
    expect_events(s, 1, "setrange sr");
    INT(f->c, 1, "INCR n");
    INT(f->c, 0, "DECR n");
    INT(f->c, 5, "INCRBY n 5");
    INT(f->c, 3, "DECRBY n 2");
    expect_events(s, 4, "incrby n", "incrby n", "incrby n", "incrby n");
    BULK(f->c, "1.5", "INCRBYFLOAT fl 1.5");
    expect_events(s, 1, "incrbyfloat fl");
    expect_error_prefix(cmd(f->c, "INCR foo"), "ERR value is not an integer");
    OK(f->c, "MSET %s 1 %s 2", a, b);
    char ea[64], eb[64];
    snprintf(ea, sizeof ea, "set %s", a);
    snprintf(eb, sizeof eb, "set %s", b);
    expect_events(s, 2, ea, eb);
    INT(f->c, 0, "MSETNX c 1 %s 2", a);
    INT(f->c, 1, "MSETNX %s:c 1 %s:d 2", a, b);
    snprintf(ea, sizeof ea, "set %s:c", a);
    snprintf(eb, sizeof eb, "set %s:d", b);
    expect_events(s, 2, ea, eb);
    BULK(f->c, "vyy", "GETEX foo EX 100");
    expect_events(s, 1, "expire foo");
    BULK(f->c, "vyy", "GETEX foo PERSIST");
    expect_events(s, 1, "persist foo");
    BULK(f->c, "vyy", "GETEX foo PERSIST");
    BULK(f->c, "vyy", "GETEX foo");
    NIL(f->c, "GETEX nosuch EX 10");
    BULK(f->c, "vyy", "GETEX foo PXAT 1");
    expect_events(s, 1, "del foo");
    BULK(f->c, "v", "GETDEL sx");
    expect_events(s, 1, "del sx");
    NIL(f->c, "GETDEL sx");
    expect_end(f, s);
}

static void test_generic(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EA");
    char a[32], b[32], ev1[64], ev2[64], ev3[64];
    key_on(a, "gen:a", 0);
    key_on(b, "gen:b", 1);

    OK(f->c, "SET k v");
    expect_events(s, 1, "set k");
    INT(f->c, 1, "EXPIRE k 100");
    INT(f->c, 1, "PEXPIRE k 100000");
    INT(f->c, 1, "EXPIREAT k 4102444800");
    INT(f->c, 1, "PEXPIREAT k 4102444800000");
    expect_events(s, 4, "expire k", "expire k", "expire k", "expire k");
    INT(f->c, 0, "EXPIRE k 50 NX");
    INT(f->c, 0, "EXPIRE nosuch 50");
    INT(f->c, 1, "PERSIST k");
    expect_events(s, 1, "persist k");
    INT(f->c, 0, "PERSIST k");
    INT(f->c, 0, "PERSIST nosuch");
    INT(f->c, 1, "EXPIRE k -1");
    expect_events(s, 1, "del k");

    /* RENAME across shards, onto a new key and onto an existing one */
    OK(f->c, "SET %s 1", a);
    snprintf(ev1, sizeof ev1, "set %s", a);
    expect_events(s, 1, ev1);
    OK(f->c, "RENAME %s %s", a, b);
    snprintf(ev1, sizeof ev1, "rename_from %s", a);
    snprintf(ev2, sizeof ev2, "rename_to %s", b);
    expect_events(s, 2, ev1, ev2);
    OK(f->c, "SET %s 2", a);
    snprintf(ev3, sizeof ev3, "set %s", a);
    expect_events(s, 1, ev3);
    OK(f->c, "RENAME %s %s", a, b);   /* onto an existing key: no "del" */
    expect_events(s, 2, ev1, ev2);
    INT(f->c, 1, "RENAMENX %s %s", b, a);
    snprintf(ev1, sizeof ev1, "rename_from %s", b);
    snprintf(ev2, sizeof ev2, "rename_to %s", a);
    expect_events(s, 2, ev1, ev2);
    OK(f->c, "SET %s 3", b);
    snprintf(ev1, sizeof ev1, "set %s", b);
    expect_events(s, 1, ev1);
    INT(f->c, 0, "RENAMENX %s %s", a, b);
    OK(f->c, "RENAME %s %s", a, a);
    ERR(f->c, "ERR no such key", "RENAME nosuch %s", a);

    /* MOVE and COPY name the database they wrote to */
    OK(f->c, "SET x 1");
    INT(f->c, 1, "MOVE x 1");
    expect_events(s, 3, "set x", "move_from x", "move_to x 1");
    INT(f->c, 0, "MOVE nosuch 1");
    INT(f->c, 1, "COPY %s %s:c", a, b);
    snprintf(ev1, sizeof ev1, "copy_to %s:c", b);
    expect_events(s, 1, ev1);
    INT(f->c, 0, "COPY %s %s:c", a, b);
    INT(f->c, 1, "COPY %s %s:c REPLACE", a, b);
    INT(f->c, 1, "COPY %s %s:c DB 2", a, b);
    snprintf(ev2, sizeof ev2, "copy_to %s:c 2", b);
    expect_events(s, 2, ev1, ev2);

    /* DEL and UNLINK: one event per key deleted */
    INT(f->c, 2, "DEL %s %s:c nosuch", a, b);
    snprintf(ev1, sizeof ev1, "del %s", a);
    snprintf(ev2, sizeof ev2, "del %s:c", b);
    expect_events(s, 2, ev1, ev2);
    INT(f->c, 1, "UNLINK %s", b);
    snprintf(ev1, sizeof ev1, "del %s", b);
    expect_events(s, 1, ev1);
    OK(f->c, "SET k v");
    expect_events(s, 1, "set k");
    /* none for the whole-keyspace commands, as in Redis 7.0 */
    OK(f->c, "SWAPDB 0 1");
    OK(f->c, "FLUSHDB");
    OK(f->c, "FLUSHALL");
    expect_end(f, s);
}

static void test_lists(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EA");
    char src[32], dst[32], ev1[64], ev2[64], ev3[64], ev4[64];
    key_on(src, "lst:s", 0);
    key_on(dst, "lst:d", 1);

    INT(f->c, 3, "RPUSH l a b c");
    expect_events(s, 1, "rpush l");
    INT(f->c, 4, "LPUSH l z");
    expect_events(s, 1, "lpush l");
    INT(f->c, 0, "LPUSHX nosuch x");
    INT(f->c, 5, "RPUSHX l d");
    expect_events(s, 1, "rpush l");
    INT(f->c, 6, "LINSERT l BEFORE b x");
    expect_events(s, 1, "linsert l");
    INT(f->c, -1, "LINSERT l BEFORE nosuch y");
    INT(f->c, 0, "LINSERT nosuch BEFORE a y");
    OK(f->c, "LSET l 0 q");
    expect_events(s, 1, "lset l");
    ERR(f->c, "ERR index out of range", "LSET l 99 q");
    INT(f->c, 1, "LREM l 0 x");
    expect_events(s, 1, "lrem l");
    INT(f->c, 0, "LREM l 0 nosuch");
    OK(f->c, "LTRIM l 0 3");
    expect_events(s, 1, "ltrim l");
    BULK(f->c, "q", "LPOP l");
    expect_events(s, 1, "lpop l");
    expect_bulks(cmd(f->c, "RPOP l 1"), 1, "c");
    expect_events(s, 1, "rpop l");
    expect_empty_array(cmd(f->c, "LPOP l 0"));
    OK(f->c, "LTRIM l 5 10");
    expect_events(s, 2, "ltrim l", "del l");

    /* LMOVE across shards: the push first, then the pop (and "del") */
    INT(f->c, 2, "RPUSH %s 1 2", src);
    snprintf(ev1, sizeof ev1, "rpush %s", src);
    expect_events(s, 1, ev1);
    BULK(f->c, "1", "LMOVE %s %s LEFT RIGHT", src, dst);
    snprintf(ev1, sizeof ev1, "rpush %s", dst);
    snprintf(ev2, sizeof ev2, "lpop %s", src);
    expect_events(s, 2, ev1, ev2);
    BULK(f->c, "2", "LMOVE %s %s RIGHT LEFT", src, dst);
    snprintf(ev1, sizeof ev1, "lpush %s", dst);
    snprintf(ev2, sizeof ev2, "rpop %s", src);
    snprintf(ev3, sizeof ev3, "del %s", src);
    expect_events(s, 3, ev1, ev2, ev3);
    NIL(f->c, "LMOVE %s %s LEFT LEFT", src, dst);
    BULK(f->c, "1", "RPOPLPUSH %s %s", dst, dst);
    snprintf(ev1, sizeof ev1, "lpush %s", dst);
    snprintf(ev2, sizeof ev2, "rpop %s", dst);
    expect_events(s, 2, ev1, ev2);
    redisReply *r = cmd(f->c, "LMPOP 2 nosuch %s LEFT COUNT 5", dst);
    assert_int_equal(r->elements, 2);
    freeReplyObject(r);
    snprintf(ev1, sizeof ev1, "lpop %s", dst);
    snprintf(ev2, sizeof ev2, "del %s", dst);
    expect_events(s, 2, ev1, ev2);

    /* blocking forms that find data */
    /* (a blocking command runs where all its keys are held: maybe on
     * another thread than the push, so each step is read on its own) */
    INT(f->c, 2, "RPUSH b1 x y");
    expect_events(s, 1, "rpush b1");
    expect_bulks(cmd(f->c, "BLPOP nosuch b1 0"), 2, "b1", "x");
    expect_events(s, 1, "lpop b1");
    expect_bulks(cmd(f->c, "BRPOP b1 0"), 2, "b1", "y");
    expect_events(s, 2, "rpop b1", "del b1");
    INT(f->c, 1, "RPUSH %s v", src);
    snprintf(ev1, sizeof ev1, "rpush %s", src);
    expect_events(s, 1, ev1);
    BULK(f->c, "v", "BLMOVE %s %s RIGHT LEFT 0", src, dst);
    snprintf(ev1, sizeof ev1, "lpush %s", dst);
    snprintf(ev2, sizeof ev2, "rpop %s", src);
    snprintf(ev3, sizeof ev3, "del %s", src);
    expect_events(s, 3, ev1, ev2, ev3);
    BULK(f->c, "v", "BRPOPLPUSH %s %s 0", dst, src);
    snprintf(ev1, sizeof ev1, "lpush %s", src);
    snprintf(ev2, sizeof ev2, "rpop %s", dst);
    snprintf(ev4, sizeof ev4, "del %s", dst);
    expect_events(s, 3, ev1, ev2, ev4);
    r = cmd(f->c, "BLMPOP 0 1 %s RIGHT", src);
    assert_int_equal(r->elements, 2);
    freeReplyObject(r);
    snprintf(ev1, sizeof ev1, "rpop %s", src);
    expect_events(s, 2, ev1, ev3);
    expect_end(f, s);
}

/* Blocked clients served by a push from another connection (and maybe
 * another thread): the push's events and the served pop's. */
static void test_blocked_served(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EA");
    struct raw *w = raw_connect(&f->srv);
    char src[32], dst[32], e1[64], e2[64], e3[64], e4[64];
    key_on(src, "blk:s", 0);
    key_on(dst, "blk:d", 1);

    raw_cmd(w, "BLPOP bl 0");
    wait_blocked(f->c, 1);
    INT(f->c, 1, "LPUSH bl v");
    {
        const char *push[] = { "lpush bl" }, *pop[] = { "lpop bl", "del bl" };
        expect_interleaved(s, push, 1, pop, 2);
    }
    rv_free(raw_reply(w));

    raw_cmd(w, "BLMOVE %s %s LEFT RIGHT 0", src, dst);
    wait_blocked(f->c, 1);
    INT(f->c, 1, "RPUSH %s a", src);
    snprintf(e1, sizeof e1, "rpush %s", src);
    snprintf(e2, sizeof e2, "rpush %s", dst);
    snprintf(e3, sizeof e3, "lpop %s", src);
    snprintf(e4, sizeof e4, "del %s", src);
    {
        const char *push[] = { e1 }, *move[] = { e2, e3, e4 };
        expect_interleaved(s, push, 1, move, 3);
    }
    rv_free(raw_reply(w));

    raw_cmd(w, "BLMPOP 0 2 nosuch %s LEFT COUNT 2", src);
    wait_blocked(f->c, 1);
    INT(f->c, 3, "RPUSH %s a b c", src);
    snprintf(e2, sizeof e2, "lpop %s", src);
    {
        const char *push[] = { e1 }, *pop[] = { e2 };
        expect_interleaved(s, push, 1, pop, 1);
    }
    rv_free(raw_reply(w));

    raw_cmd(w, "BZPOPMIN bz 0");
    wait_blocked(f->c, 1);
    INT(f->c, 1, "ZADD bz 1 a");
    {
        const char *push[] = { "zadd bz" }, *pop[] = { "zpopmin bz", "del bz" };
        expect_interleaved(s, push, 1, pop, 2);
    }
    rv_free(raw_reply(w));

    raw_cmd(w, "BZMPOP 0 1 bz MAX COUNT 5");
    wait_blocked(f->c, 1);
    INT(f->c, 2, "ZADD bz 1 a 2 b");
    {
        const char *push[] = { "zadd bz" }, *pop[] = { "zpopmax bz", "del bz" };
        expect_interleaved(s, push, 1, pop, 2);
    }
    rv_free(raw_reply(w));
    raw_close(w);
    expect_end(f, s);
}

static void test_sets(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EA");
    char k1[32], k2[32], k3[32], e1[64], e2[64], e3[64];
    key_on(k1, "set:1", 0);
    key_on(k2, "set:2", 1);
    key_on(k3, "set:3", 2);

    INT(f->c, 3, "SADD s a b c");
    expect_events(s, 1, "sadd s");
    INT(f->c, 0, "SADD s a");
    INT(f->c, 1, "SREM s a nosuch");
    expect_events(s, 1, "srem s");
    INT(f->c, 0, "SREM s nosuch");
    freeReplyObject(cmd(f->c, "SPOP s"));
    expect_events(s, 1, "spop s");
    expect_empty_array(cmd(f->c, "SPOP s 0"));
    freeReplyObject(cmd(f->c, "SPOP s 5"));
    expect_events(s, 2, "spop s", "del s");
    expect_empty_array(cmd(f->c, "SPOP s 5"));
    NIL(f->c, "SPOP s");
    INT(f->c, 2, "SADD s x y");
    freeReplyObject(cmd(f->c, "SPOP s 1"));
    freeReplyObject(cmd(f->c, "SPOP s"));
    expect_events(s, 4, "sadd s", "spop s", "spop s", "del s");

    /* SMOVE across shards: the source's events, then the destination's */
    INT(f->c, 2, "SADD %s x y", k1);
    snprintf(e1, sizeof e1, "sadd %s", k1);
    expect_events(s, 1, e1);
    INT(f->c, 1, "SADD %s z", k2);
    snprintf(e2, sizeof e2, "sadd %s", k2);
    expect_events(s, 1, e2);
    INT(f->c, 1, "SMOVE %s %s x", k1, k2);
    snprintf(e1, sizeof e1, "srem %s", k1);
    expect_events(s, 2, e1, e2);
    INT(f->c, 0, "SMOVE %s %s nosuch", k1, k2);
    INT(f->c, 0, "SMOVE nosuch %s y", k2);
    INT(f->c, 1, "SADD %s y", k2);
    expect_events(s, 1, e2);
    INT(f->c, 1, "SMOVE %s %s y", k1, k2);   /* the destination has it already */
    snprintf(e3, sizeof e3, "del %s", k1);
    expect_events(s, 2, e1, e3);

    /* *STORE: the result's event, or "del" of a destination left empty */
    INT(f->c, 4, "SADD %s a b c x", k1);
    snprintf(e1, sizeof e1, "sadd %s", k1);
    expect_events(s, 1, e1);
    INT(f->c, 1, "SINTERSTORE %s %s %s", k3, k1, k2);
    snprintf(e1, sizeof e1, "sinterstore %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 6, "SUNIONSTORE %s %s %s", k3, k1, k2);
    snprintf(e1, sizeof e1, "sunionstore %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 3, "SDIFFSTORE %s %s %s", k3, k1, k2);
    snprintf(e1, sizeof e1, "sdiffstore %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 0, "SDIFFSTORE %s %s %s", k3, k1, k1);
    snprintf(e1, sizeof e1, "del %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 0, "SINTERSTORE %s %s nosuch", k3, k1);
    INT(f->c, 0, "SUNIONSTORE %s nosuch", k3);
    expect_end(f, s);
}

static void test_hashes(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EA");

    INT(f->c, 1, "HSET h f v");
    INT(f->c, 0, "HSET h f v");
    expect_events(s, 2, "hset h", "hset h");
    OK(f->c, "HMSET h a 1 b 2");
    expect_events(s, 1, "hset h");
    INT(f->c, 0, "HSETNX h f x");
    INT(f->c, 1, "HSETNX h g x");
    expect_events(s, 1, "hset h");
    INT(f->c, 1, "HINCRBY h n 1");
    expect_events(s, 1, "hincrby h");
    BULK(f->c, "1.5", "HINCRBYFLOAT h fl 1.5");
    expect_events(s, 1, "hincrbyfloat h");
    ERR(f->c, "ERR hash value is not an integer", "HINCRBY h f 1");
    INT(f->c, 1, "HDEL h f nosuch");
    expect_events(s, 1, "hdel h");
    INT(f->c, 0, "HDEL h nosuch");
    INT(f->c, 5, "HDEL h a b g n fl");
    expect_events(s, 2, "hdel h", "del h");
    INT(f->c, 0, "HDEL h a");
    expect_end(f, s);
}

static void test_zsets(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EA");
    char k1[32], k2[32], k3[32], e1[64];
    key_on(k1, "zs:1", 0);
    key_on(k2, "zs:2", 1);
    key_on(k3, "zs:3", 2);

    INT(f->c, 3, "ZADD z 1 a 2 b 3 c");
    expect_events(s, 1, "zadd z");
    INT(f->c, 0, "ZADD z 1 a");
    INT(f->c, 0, "ZADD z XX 5 nosuch");
    INT(f->c, 0, "ZADD nosuch XX 5 a");
    BULK(f->c, "2", "ZINCRBY z 1 a");
    BULK(f->c, "3", "ZADD z INCR 1 a");
    expect_events(s, 2, "zincr z", "zincr z");
    NIL(f->c, "ZADD z NX INCR 1 a");
    INT(f->c, 1, "ZADD z CH 10 a");
    expect_events(s, 1, "zadd z");
    INT(f->c, 1, "ZREM z a nosuch");
    expect_events(s, 1, "zrem z");
    INT(f->c, 1, "ZREMRANGEBYSCORE z 2 2");
    expect_events(s, 1, "zremrangebyscore z");
    INT(f->c, 0, "ZREMRANGEBYSCORE z 100 200");
    INT(f->c, 1, "ZADD z 4 d");
    INT(f->c, 1, "ZREMRANGEBYRANK z 0 0");
    expect_events(s, 2, "zadd z", "zremrangebyrank z");
    INT(f->c, 0, "ZREMRANGEBYRANK z 5 9");
    INT(f->c, 1, "ZREMRANGEBYRANK z 0 -1");
    expect_events(s, 2, "zremrangebyrank z", "del z");
    INT(f->c, 3, "ZADD lz 0 a 0 b 0 c");
    INT(f->c, 1, "ZREMRANGEBYLEX lz [a [a");
    expect_events(s, 2, "zadd lz", "zremrangebylex lz");
    freeReplyObject(cmd(f->c, "ZPOPMIN lz"));
    expect_events(s, 1, "zpopmin lz");
    expect_empty_array(cmd(f->c, "ZPOPMIN lz 0"));
    freeReplyObject(cmd(f->c, "ZPOPMAX lz 5"));
    expect_events(s, 2, "zpopmax lz", "del lz");
    INT(f->c, 2, "ZADD m 1 a 2 b");
    freeReplyObject(cmd(f->c, "ZMPOP 1 m MAX"));
    expect_events(s, 2, "zadd m", "zpopmax m");
    /* (a blocking command may run on another thread than the ZADD) */
    freeReplyObject(cmd(f->c, "BZPOPMIN m 0"));
    expect_events(s, 2, "zpopmin m", "del m");
    expect_nil(cmd(f->c, "ZMPOP 1 m MIN"));
    INT(f->c, 1, "ZADD m 1 a");
    expect_events(s, 1, "zadd m");
    freeReplyObject(cmd(f->c, "BZMPOP 0 1 m MIN COUNT 3"));
    expect_events(s, 2, "zpopmin m", "del m");
    INT(f->c, 1, "ZADD m2 1 x");
    expect_events(s, 1, "zadd m2");
    freeReplyObject(cmd(f->c, "BZPOPMAX m2 0"));
    expect_events(s, 2, "zpopmax m2", "del m2");

    /* stores across shards */
    INT(f->c, 2, "ZADD %s 1 a 2 b", k1);
    snprintf(e1, sizeof e1, "zadd %s", k1);
    expect_events(s, 1, e1);
    INT(f->c, 2, "ZADD %s 1 b 3 c", k2);
    snprintf(e1, sizeof e1, "zadd %s", k2);
    expect_events(s, 1, e1);
    INT(f->c, 3, "ZUNIONSTORE %s 2 %s %s", k3, k1, k2);
    snprintf(e1, sizeof e1, "zunionstore %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 1, "ZINTERSTORE %s 2 %s %s", k3, k1, k2);
    snprintf(e1, sizeof e1, "zinterstore %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 1, "ZDIFFSTORE %s 2 %s %s", k3, k1, k2);
    snprintf(e1, sizeof e1, "zdiffstore %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 2, "ZRANGESTORE %s %s 0 -1", k3, k1);
    snprintf(e1, sizeof e1, "zrangestore %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 0, "ZINTERSTORE %s 2 %s nosuch", k3, k1);
    snprintf(e1, sizeof e1, "del %s", k3);
    expect_events(s, 1, e1);
    INT(f->c, 0, "ZRANGESTORE %s nosuch 0 -1", k3);
    INT(f->c, 0, "ZRANGESTORE %s %s 5 9", k3, k1);
    INT(f->c, 0, "ZUNIONSTORE %s 1 nosuch", k3);
    expect_end(f, s);
}

static void test_bits(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EA");
    char src[32], dst[32], e1[64];
    key_on(src, "bit:s", 0);
    key_on(dst, "bit:d", 1);

    INT(f->c, 0, "SETBIT %s 7 1", src);
    INT(f->c, 1, "SETBIT %s 7 1", src);   /* no change */
    INT(f->c, 1, "SETBIT %s 7 0", src);
    INT(f->c, 0, "SETBIT %s 100 0", src);  /* grew */
    snprintf(e1, sizeof e1, "setbit %s", src);
    expect_events(s, 3, e1, e1, e1);
    redisReply *r = cmd(f->c, "BITFIELD %s SET u8 0 255", src);
    freeReplyObject(r);
    expect_events(s, 1, e1);
    freeReplyObject(cmd(f->c, "BITFIELD %s GET u8 0", src));
    freeReplyObject(cmd(f->c, "BITFIELD %s SET u8 0 255", src));            /* same bits */
    freeReplyObject(cmd(f->c, "BITFIELD %s OVERFLOW FAIL INCRBY u8 0 1", src));
    freeReplyObject(cmd(f->c, "BITFIELD nb OVERFLOW FAIL INCRBY u2 0 10"));  /* created, unchanged */
    freeReplyObject(cmd(f->c, "BITFIELD_RO %s GET u8 0", src));
    INT(f->c, 13, "BITOP AND %s %s %s", dst, src, src);
    snprintf(e1, sizeof e1, "set %s", dst);
    expect_events(s, 1, e1);
    INT(f->c, 0, "BITOP OR %s nosuch", dst);
    snprintf(e1, sizeof e1, "del %s", dst);
    expect_events(s, 1, e1);
    INT(f->c, 0, "BITOP OR %s nosuch", dst);
    expect_end(f, s);
}

/* Both channels, classes one by one, another database. */
static void test_channels_and_classes(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "KEA");
    OK(f->c, "SET foo bar");
    expect_message(s, "__keyspace@0__:foo set");
    expect_message(s, "__keyevent@0__:set foo");
    OK(f->c, "CONFIG SET notify-keyspace-events K$");
    OK(f->c, "SET foo x");
    INT(f->c, 1, "DEL foo");
    INT(f->c, 1, "LPUSH l a");
    OK(f->c, "SET foo y");
    expect_message(s, "__keyspace@0__:foo set");
    expect_message(s, "__keyspace@0__:foo set");
    OK(f->c, "CONFIG SET notify-keyspace-events El");
    INT(f->c, 2, "LPUSH l b");
    OK(f->c, "SET foo z");
    expect_message(s, "__keyevent@0__:lpush l");
    OK(f->c, "CONFIG SET notify-keyspace-events Eg");
    INT(f->c, 2, "DEL l foo");
    expect_events(s, 2, "del l", "del foo");
    OK(f->c, "CONFIG SET notify-keyspace-events KE$");
    OK(f->c, "SELECT 3");
    OK(f->c, "SET k v");
    OK(f->c, "SELECT 0");
    expect_message(s, "__keyspace@3__:k set");
    expect_message(s, "__keyevent@3__:set k");
    OK(f->c, "CONFIG SET notify-keyspace-events %s", "");
    OK(f->c, "SET k v");
    expect_end(f, s);
}

/* "new" (class n, outside A): a key added, before the command's event. */
static void test_new(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "En");
    char a[32], b[32], c3[32], e1[64], e2[64], e3[64], e4[64];
    key_on(a, "new:a", 0);
    key_on(b, "new:b", 1);
    key_on(c3, "new:c", 2);

    /* Redis's own "new key test" */
    OK(f->c, "SET foo bar");
    expect_events(s, 1, "new foo");
    OK(f->c, "SET foo baz");
    OK(f->c, "SET bar bar");
    expect_events(s, 1, "new bar");
    INT(f->c, 1, "LPUSH l a");
    INT(f->c, 2, "LPUSH l b");
    expect_events(s, 1, "new l");
    OK(f->c, "RENAME l l2");
    expect_events(s, 1, "new l2");

    OK(f->c, "CONFIG SET notify-keyspace-events EAn");
    OK(f->c, "SET %s 1", a);
    snprintf(e1, sizeof e1, "new %s", a);
    snprintf(e2, sizeof e2, "set %s", a);
    expect_events(s, 2, e1, e2);
    INT(f->c, 1, "HSET h f v");
    expect_events(s, 2, "new h", "hset h");
    INT(f->c, 1, "SADD st m");
    expect_events(s, 2, "new st", "sadd st");
    INT(f->c, 1, "ZADD z 1 m");
    expect_events(s, 2, "new z", "zadd z");
    INT(f->c, 1, "INCR n");
    expect_events(s, 2, "new n", "incrby n");
    BULK(f->c, "1", "INCRBYFLOAT fl 1");
    expect_events(s, 2, "new fl", "incrbyfloat fl");
    INT(f->c, 1, "APPEND ap v");
    expect_events(s, 2, "new ap", "append ap");
    INT(f->c, 1, "SETRANGE sr 0 v");
    expect_events(s, 2, "new sr", "setrange sr");
    INT(f->c, 0, "SETBIT sb 1 1");
    expect_events(s, 2, "new sb", "setbit sb");
    INT(f->c, 1, "HINCRBY hi f 1");
    expect_events(s, 2, "new hi", "hincrby hi");

    /* RENAME onto an existing key adds it anew, as Redis's dbAdd */
    OK(f->c, "SET %s 1", b);
    snprintf(e1, sizeof e1, "new %s", b);
    snprintf(e2, sizeof e2, "set %s", b);
    expect_events(s, 2, e1, e2);
    OK(f->c, "RENAME %s %s", a, b);
    snprintf(e2, sizeof e2, "rename_from %s", a);
    snprintf(e3, sizeof e3, "rename_to %s", b);
    expect_events(s, 3, e1, e2, e3);
    INT(f->c, 1, "MOVE %s 1", b);
    snprintf(e1, sizeof e1, "new %s 1", b);
    snprintf(e2, sizeof e2, "move_from %s", b);
    snprintf(e3, sizeof e3, "move_to %s 1", b);
    expect_events(s, 3, e1, e2, e3);
    INT(f->c, 1, "COPY h h2");
    expect_events(s, 2, "new h2", "copy_to h2");

    /* SMOVE and LMOVE across shards into a new key */
    INT(f->c, 1, "SADD %s m", a);
    snprintf(e1, sizeof e1, "new %s", a);
    snprintf(e2, sizeof e2, "sadd %s", a);
    expect_events(s, 2, e1, e2);
    INT(f->c, 1, "SMOVE %s %s m", a, b);
    snprintf(e1, sizeof e1, "srem %s", a);
    snprintf(e2, sizeof e2, "del %s", a);
    snprintf(e3, sizeof e3, "new %s", b);
    snprintf(e4, sizeof e4, "sadd %s", b);
    expect_events(s, 4, e1, e2, e3, e4);
    INT(f->c, 1, "RPUSH %s x", a);
    snprintf(e1, sizeof e1, "new %s", a);
    snprintf(e2, sizeof e2, "rpush %s", a);
    expect_events(s, 2, e1, e2);
    BULK(f->c, "x", "LMOVE %s %s LEFT LEFT", a, c3);
    snprintf(e1, sizeof e1, "new %s", c3);
    snprintf(e2, sizeof e2, "lpush %s", c3);
    snprintf(e3, sizeof e3, "lpop %s", a);
    snprintf(e4, sizeof e4, "del %s", a);
    expect_events(s, 4, e1, e2, e3, e4);

    /* stores: "new" only where the destination was absent */
    INT(f->c, 1, "SINTERSTORE %s %s %s", a, b, b);
    snprintf(e1, sizeof e1, "new %s", a);
    snprintf(e2, sizeof e2, "sinterstore %s", a);
    expect_events(s, 2, e1, e2);
    INT(f->c, 1, "SINTERSTORE %s %s %s", a, b, b);
    expect_events(s, 1, e2);
    INT(f->c, 1, "ZUNIONSTORE zo 1 z");
    expect_events(s, 2, "new zo", "zunionstore zo");
    INT(f->c, 1, "BITOP OR bo sb");
    expect_events(s, 2, "new bo", "set bo");
    expect_end(f, s);
}

/* A key expired when a write meets it: "expired", then "new". */
static void test_expired_then_new(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "EAn");

    set_expiring(f, "{e}k");
    expect_events(s, 3, "new {e}k", "set {e}k", "expire {e}k");
    INT(f->c, 1, "SADD {e}src m");
    expect_events(s, 2, "new {e}src", "sadd {e}src");
    let_expire();
    /* whether active expiry or the store's own lookup deleted it, the
     * owner's thread says so before the store */
    INT(f->c, 1, "SUNIONSTORE {e}k {e}src");
    expect_events(s, 3, "expired {e}k", "new {e}k", "sunionstore {e}k");

    set_expiring(f, "{g}k");
    expect_events(s, 3, "new {g}k", "set {g}k", "expire {g}k");
    let_expire();
    OK(f->c, "SET {g}k v");
    expect_events(s, 3, "expired {g}k", "new {g}k", "set {g}k");
    expect_end(f, s);
}

/* Redis's "expired events (triggered expire)", and the same met inside a
 * cross-shard command, by DEL, and in another database. */
static void test_expired_lazy(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "Ex");
    char a[32], b[32], e1[64];
    key_on(a, "exp:a", 0);
    key_on(b, "exp:b", 1);

    set_expiring(f, "k");
    redisReply *r = NULL;
    for (int i = 0; i < 1000; i++) {
        r = cmd(f->c, "GET k");
        if (r->type == REDIS_REPLY_NIL) break;
        freeReplyObject(r);
        r = NULL;
        h_sleep_ms(1);
    }
    assert_non_null(r);
    freeReplyObject(r);
    expect_events(s, 1, "expired k");
    NIL(f->c, "GET k");

    set_expiring(f, a);
    OK(f->c, "SET %s v", b);
    let_expire();
    expect_bulks(cmd(f->c, "MGET %s %s", a, b), 2, NULL, "v");
    snprintf(e1, sizeof e1, "expired %s", a);
    expect_events(s, 1, e1);

    set_expiring(f, "d");
    let_expire();
    INT(f->c, 0, "DEL d");
    expect_events(s, 1, "expired d");

    OK(f->c, "SELECT 5");
    set_expiring(f, "k5");
    let_expire();
    NIL(f->c, "GET k5");
    OK(f->c, "SELECT 0");
    expect_events(s, 1, "expired k5 5");
    expect_end(f, s);
}

/* Redis's "expired events (background expire)": keys nobody reads, on
 * every shard and in two databases, deleted by active expiry. */
static void test_expired_active(void **state) {
    struct fixture *f = FIX(state);
    struct raw *s = subscribe(f, "Ex");
    enum { N = 8 };
    char keys[N][32];
    for (int i = 0; i < N; i++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "act%d:", i);
        key_on(keys[i], prefix, i);
        OK(f->c, "SET %s v PX 1", keys[i]);
    }
    OK(f->c, "SELECT 9");
    OK(f->c, "SET other v PX 1");
    OK(f->c, "SELECT 0");
    /* one message per key, in whatever order the shards get to them */
    bool seen[N + 1] = { false };
    for (int i = 0; i <= N; i++) {
        char *got = next_message(s);
        int k = -1;
        if (strcmp(got, "__keyevent@9__:expired other") == 0) k = N;
        for (int j = 0; j < N && k < 0; j++) {
            char want[96];
            snprintf(want, sizeof want, "__keyevent@0__:expired %s", keys[j]);
            if (strcmp(got, want) == 0) k = j;
        }
        if (k < 0 || seen[k]) fail_msg("unexpected %s", got);
        seen[k] = true;
        free(got);
    }
    INT(f->c, 0, "DBSIZE");
    expect_end(f, s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_strings, h_flushall),
        cmocka_unit_test_setup(test_generic, h_flushall),
        cmocka_unit_test_setup(test_lists, h_flushall),
        cmocka_unit_test_setup(test_blocked_served, h_flushall),
        cmocka_unit_test_setup(test_sets, h_flushall),
        cmocka_unit_test_setup(test_hashes, h_flushall),
        cmocka_unit_test_setup(test_zsets, h_flushall),
        cmocka_unit_test_setup(test_bits, h_flushall),
        cmocka_unit_test_setup(test_channels_and_classes, h_flushall),
        cmocka_unit_test_setup(test_new, h_flushall),
        cmocka_unit_test_setup(test_expired_then_new, h_flushall),
        cmocka_unit_test_setup(test_expired_lazy, h_flushall),
        cmocka_unit_test_setup(test_expired_active, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("notify", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
