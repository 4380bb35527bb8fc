/*
 * Stream consumer groups: XGROUP (CREATE with $, MKSTREAM and ENTRIESREAD,
 * SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP), XACK, XPENDING
 * (summary and extended form, IDLE, exclusive bounds, per consumer),
 * XCLAIM (IDLE TIME RETRYCOUNT FORCE JUSTID LASTID, deleted entries),
 * XAUTOCLAIM (cursor, COUNT, JUSTID, the deleted IDs), XINFO STREAM
 * [FULL [COUNT]], GROUPS, CONSUMERS and HELP: their replies' fields in
 * Redis's order (RESP2 and RESP3), PEL and delivery counts, entries-read
 * and lag after reads, deletes, trims and XSETID, every error, keyspace
 * events, WATCH, and a blocked XREADGROUP woken by XGROUP SETID.
 *
 * No assertion depends on the wall clock: idle thresholds are 0 or huge,
 * and delivery times are set with XCLAIM TIME.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_ID "ERR Invalid stream ID specified as stream command argument"
#define ERR_WT "WRONGTYPE Operation against a key holding the wrong kind of value"
/* an idle time no fresh delivery reaches, that any delivery at TIME 1000 exceeds */
#define OLD "1000000000"

/* ------------------------------------------------------------------ */
/* Reply helpers                                                        */

/* The value of field `name` in a RESP2 map (a flat array). */
static const redisReply *fget(const redisReply *m, const char *name) {
    if (m->type != REDIS_REPLY_ARRAY || m->elements % 2) h_fail("not a map: %s", reply_repr(m));
    for (size_t i = 0; i < m->elements; i += 2)
        if (m->element[i]->type == REDIS_REPLY_STRING && strcmp(m->element[i]->str, name) == 0)
            return m->element[i + 1];
    h_fail("no field %s in %s", name, reply_repr(m));
}

/* The map's field names are exactly these, in this order. */
static void expect_fields(const redisReply *m, int n, ...) {
    if (m->type != REDIS_REPLY_ARRAY || m->elements != (size_t)n * 2)
        h_fail("want %d fields: %s", n, reply_repr(m));
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *want = va_arg(ap, const char *);
        const redisReply *k = m->element[2 * i];
        if (k->type != REDIS_REPLY_STRING || strcmp(k->str, want) != 0)
            h_fail("field %d: want %s in %s", i, want, reply_repr(m));
    }
    va_end(ap);
}

static void fint(const redisReply *m, const char *name, long long v) {
    const redisReply *x = fget(m, name);
    if (x->type != REDIS_REPLY_INTEGER || x->integer != v)
        h_fail("%s: want %lld, got %s", name, v, reply_repr(x));
}

static void fstr(const redisReply *m, const char *name, const char *s) {
    const redisReply *x = fget(m, name);
    if (x->type != REDIS_REPLY_STRING || strcmp(x->str, s) != 0)
        h_fail("%s: want %s, got %s", name, s, reply_repr(x));
}

static void fnil(const redisReply *m, const char *name) {
    const redisReply *x = fget(m, name);
    if (x->type != REDIS_REPLY_NIL) h_fail("%s: want nil, got %s", name, reply_repr(x));
}

static void expect_str(const redisReply *r, const char *s) {
    if (r->type != REDIS_REPLY_STRING || strcmp(r->str, s) != 0) h_fail("want %s, got %s", s, reply_repr(r));
}

static void expect_integer(const redisReply *r, long long v) {
    if (r->type != REDIS_REPLY_INTEGER || r->integer != v) h_fail("want %lld, got %s", v, reply_repr(r));
}

static void expect_len(const redisReply *r, size_t n) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements != n) h_fail("want %zu elements, got %s", n, reply_repr(r));
}

/* Run a command whose reply is an array of n elements (freed). */
#define LEN(c, n, ...) do { \
        redisReply *len_r_ = cmd((c), __VA_ARGS__); \
        expect_len(len_r_, (n)); \
        freeReplyObject(len_r_); \
    } while (0)

/* XPENDING's count of pending entries. */
static long long pel_count(redisContext *c, const char *key, const char *group) {
    redisReply *r = cmd(c, "XPENDING %s %s", key, group);
    expect_len(r, 4);
    long long n = r->element[0]->integer;
    freeReplyObject(r);
    return n;
}

/* An entry [id, [field, value]] of one field. */
static void expect_entry(const redisReply *e, const char *id, const char *f, const char *v) {
    expect_len(e, 2);
    expect_str(e->element[0], id);
    expect_len(e->element[1], 2);
    expect_str(e->element[1]->element[0], f);
    expect_str(e->element[1]->element[1], v);
}

/* An XPENDING extended row: [id, consumer, idle, deliveries]. */
static void expect_pending_row(const redisReply *row, const char *id, const char *consumer, long long deliveries) {
    expect_len(row, 4);
    expect_str(row->element[0], id);
    expect_str(row->element[1], consumer);
    if (row->element[2]->type != REDIS_REPLY_INTEGER || row->element[2]->integer < 0)
        h_fail("idle: %s", reply_repr(row->element[2]));
    expect_integer(row->element[3], deliveries);
}

/* XINFO GROUPS' entry for group `name` (freed with the reply). */
static const redisReply *group_info(const redisReply *groups, const char *name) {
    for (size_t i = 0; i < groups->elements; i++)
        if (strcmp(fget(groups->element[i], "name")->str, name) == 0) return groups->element[i];
    h_fail("no group %s in %s", name, reply_repr(groups));
}

/* entries-read and lag of a group (-1: nil). */
static void expect_read_lag(redisContext *c, const char *key, const char *group, long long read, long long lag) {
    redisReply *r = cmd(c, "XINFO GROUPS %s", key);
    const redisReply *g = group_info(r, group);
    if (read < 0) fnil(g, "entries-read");
    else fint(g, "entries-read", read);
    if (lag < 0) fnil(g, "lag");
    else fint(g, "lag", lag);
    freeReplyObject(r);
}

static void add_entries(redisContext *c, const char *key, int n) {
    for (int i = 1; i <= n; i++) {
        char id[32];
        snprintf(id, sizeof id, "%d-0", i);
        BULK(c, id, "XADD %s %s f v%d", key, id, i);
    }
}

/* ------------------------------------------------------------------ */
/* XGROUP                                                               */

static void test_xgroup_create(void **state) {
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the "
           "MKSTREAM option to create an empty stream automatically.",
        "XGROUP CREATE s g $");
    INT(c, 0, "EXISTS s");
    /* MKSTREAM makes an empty stream, which stays */
    OK(c, "XGROUP CREATE s g $ MKSTREAM");
    STATUS(c, "stream", "TYPE s");
    INT(c, 0, "XLEN s");
    ERR(c, "BUSYGROUP Consumer Group name already exists", "XGROUP CREATE s g $");
    ERR(c, "BUSYGROUP Consumer Group name already exists", "XGROUP CREATE s g 0 MKSTREAM");
    /* $ is the last ID then: only what comes after is new */
    BULK(c, "5-0", "XADD s 5-0 f v");
    OK(c, "XGROUP CREATE s dollar $");
    OK(c, "XGROUP CREATE s zero 0");
    OK(c, "XGROUP CREATE s part 3");            /* 3-0 */
    OK(c, "XGROUP CREATE s er 0 ENTRIESREAD 7");
    OK(c, "XGROUP CREATE s er2 0 ENTRIESREAD -1");
    redisReply *r = cmd(c, "XINFO GROUPS s");
    expect_len(r, 6);
    /* by name */
    const char *names[] = { "dollar", "er", "er2", "g", "part", "zero" };
    for (int i = 0; i < 6; i++) fstr(r->element[i], "name", names[i]);
    fstr(group_info(r, "dollar"), "last-delivered-id", "5-0");
    fstr(group_info(r, "zero"), "last-delivered-id", "0-0");
    fstr(group_info(r, "part"), "last-delivered-id", "3-0");
    fint(group_info(r, "er"), "entries-read", 7);
    fnil(group_info(r, "er2"), "entries-read");
    freeReplyObject(r);
    NIL(c, "XREADGROUP GROUP dollar a STREAMS s >");
    r = cmd(c, "XREADGROUP GROUP part a STREAMS s >");
    expect_entry(r->element[0]->element[1]->element[0], "5-0", "f", "v");
    freeReplyObject(r);
    /* IDs: strict, no - or + */
    ERR(c, ERR_ID, "XGROUP CREATE s x bad");
    ERR(c, ERR_ID, "XGROUP CREATE s x -");
    ERR(c, ERR_ID, "XGROUP CREATE s x +");
    ERR(c, ERR_ID, "XGROUP CREATE nokey x bad MKSTREAM");
    INT(c, 0, "EXISTS nokey");                  /* nothing made on an error */
    /* options */
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.",
        "XGROUP CREATE s x 0 BADOPT");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP.",
        "XGROUP create s x 0 ENTRIESREAD");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.",
        "XGROUP CREATE s x 0 MKSTREAM MKSTREAM MKSTREAM MKSTREAM");
    ERR(c, "ERR value is not an integer or out of range", "XGROUP CREATE s x 0 ENTRIESREAD abc");
    ERR(c, "ERR value for ENTRIESREAD must be positive or -1", "XGROUP CREATE s x 0 ENTRIESREAD -2");
    /* options are checked before the key */
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.",
        "XGROUP CREATE nokey x 0 BADOPT");
    OK(c, "XGROUP CREATE s x 0 mkstream entriesread 0");
    /* arity, unknown subcommands, the container alone */
    ERR(c, "ERR wrong number of arguments for 'xgroup|create' command", "XGROUP CREATE s x");
    ERR(c, "ERR wrong number of arguments for 'xgroup|destroy' command", "XGROUP DESTROY s x y");
    ERR(c, "ERR wrong number of arguments for 'xgroup|createconsumer' command", "XGROUP CREATECONSUMER s x");
    ERR(c, "ERR wrong number of arguments for 'xgroup|delconsumer' command", "XGROUP DELCONSUMER s x a b");
    ERR(c, "ERR wrong number of arguments for 'xgroup|setid' command", "XGROUP SETID s x");
    ERR(c, "ERR wrong number of arguments for 'xgroup|help' command", "XGROUP HELP x");
    ERR(c, "ERR unknown subcommand 'FOO'. Try XGROUP HELP.", "XGROUP FOO s g");
    ERR(c, "ERR wrong number of arguments for 'xgroup' command", "XGROUP");
    /* another type */
    OK(c, "SET str v");
    ERR(c, ERR_WT, "XGROUP CREATE str g $");
    ERR(c, ERR_WT, "XGROUP CREATE str g $ MKSTREAM");
    ERR(c, ERR_WT, "XGROUP DESTROY str g");
    /* HELP */
    r = cmd(c, "XGROUP HELP");
    expect_len(r, 17);
    assert_int_equal(r->element[0]->type, REDIS_REPLY_STATUS);
    assert_string_equal(r->element[0]->str, "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    assert_string_equal(r->element[1]->str, "CREATE <key> <groupname> <id|$> [option]");
    assert_string_equal(r->element[16]->str, "    Prints this help.");
    freeReplyObject(r);
}

static void test_xgroup_setid_destroy_consumers(void **state) {
    redisContext *c = FIX(state)->c;
    add_entries(c, "s", 3);
    OK(c, "XGROUP CREATE s g 0");
    /* SETID */
    OK(c, "XGROUP SETID s g 2-0");
    expect_read_lag(c, "s", "g", -1, -1);       /* within the stream: unknown */
    OK(c, "XGROUP SETID s g 2-0 ENTRIESREAD 2");
    expect_read_lag(c, "s", "g", 2, 1);
    OK(c, "XGROUP SETID s g $ ENTRIESREAD 3");
    expect_read_lag(c, "s", "g", 3, 0);
    OK(c, "XGROUP SETID s g -");                /* not strict: - and + */
    redisReply *r = cmd(c, "XINFO GROUPS s");
    fstr(r->element[0], "last-delivered-id", "0-0");
    fnil(r->element[0], "entries-read");        /* SETID without ENTRIESREAD forgets it */
    freeReplyObject(r);
    OK(c, "XGROUP SETID s g 1");
    r = cmd(c, "XINFO GROUPS s");
    fstr(r->element[0], "last-delivered-id", "1-0");
    freeReplyObject(r);
    ERR(c, ERR_ID, "XGROUP SETID s g bad");
    ERR(c, "NOGROUP No such consumer group 'nog' for key name 's'", "XGROUP SETID s nog 0");
    ERR(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the "
           "MKSTREAM option to create an empty stream automatically.",
        "XGROUP SETID nokey g 0");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.",
        "XGROUP SETID s g 0 MKSTREAM");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.",
        "XGROUP SETID s g 0 ENTRIESREAD 1 ENTRIESREAD 2");
    ERR(c, "ERR value for ENTRIESREAD must be positive or -1", "XGROUP SETID s g 0 ENTRIESREAD -5");

    /* CREATECONSUMER */
    INT(c, 1, "XGROUP CREATECONSUMER s g alice");
    INT(c, 0, "XGROUP CREATECONSUMER s g alice");
    INT(c, 1, "XGROUP CREATECONSUMER s g bob");
    ERR(c, "NOGROUP No such consumer group 'nog' for key name 's'", "XGROUP CREATECONSUMER s nog x");
    r = cmd(c, "XINFO CONSUMERS s g");
    expect_len(r, 2);
    fstr(r->element[0], "name", "alice");
    fint(r->element[0], "pending", 0);
    fstr(r->element[1], "name", "bob");
    freeReplyObject(r);

    /* DELCONSUMER: how many it had pending, gone from the group's PEL too */
    OK(c, "XGROUP SETID s g 0");
    freeReplyObject(cmd(c, "XREADGROUP GROUP g alice COUNT 2 STREAMS s >"));
    freeReplyObject(cmd(c, "XREADGROUP GROUP g bob COUNT 1 STREAMS s >"));
    INT(c, 2, "XGROUP DELCONSUMER s g alice");
    INT(c, 0, "XGROUP DELCONSUMER s g alice");
    INT(c, 0, "XGROUP DELCONSUMER s g nobody");
    r = cmd(c, "XPENDING s g");
    expect_integer(r->element[0], 1);
    expect_str(r->element[1], "3-0");
    freeReplyObject(r);
    ERR(c, "NOGROUP No such consumer group 'nog' for key name 's'", "XGROUP DELCONSUMER s nog x");

    /* DESTROY */
    INT(c, 0, "XGROUP DESTROY s nog");
    INT(c, 1, "XGROUP DESTROY s g");
    INT(c, 0, "XGROUP DESTROY s g");
    expect_empty_array(cmd(c, "XINFO GROUPS s"));
    ERR(c, "NOGROUP No such key 's' or consumer group 'g'", "XPENDING s g");
    ERR(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the "
           "MKSTREAM option to create an empty stream automatically.",
        "XGROUP DESTROY nokey g");
    INT(c, 3, "XLEN s");                        /* the entries stay */
}

/* ------------------------------------------------------------------ */
/* XACK and XPENDING                                                    */

static void test_xack(void **state) {
    redisContext *c = FIX(state)->c;
    add_entries(c, "s", 4);
    OK(c, "XGROUP CREATE s g 0");
    freeReplyObject(cmd(c, "XREADGROUP GROUP g a STREAMS s >"));
    /* nothing to acknowledge without the key or group, whatever the IDs */
    INT(c, 0, "XACK nokey g bad");
    INT(c, 0, "XACK s nog bad");
    /* one bad ID: nothing acknowledged */
    ERR(c, ERR_ID, "XACK s g 1-0 bad");
    ERR(c, ERR_ID, "XACK s g 1-0 -");
    INT(c, 4, "XLEN s");
    assert_int_equal(pel_count(c, "s", "g"), 4);
    INT(c, 1, "XACK s g 1-0");
    INT(c, 0, "XACK s g 1-0");
    INT(c, 2, "XACK s g 1-0 2 3-0 3-0 9-0");    /* a repeated ID counts once */
    redisReply *r = cmd(c, "XPENDING s g");
    expect_integer(r->element[0], 1);
    expect_str(r->element[1], "4-0");
    freeReplyObject(r);
    r = cmd(c, "XINFO CONSUMERS s g");
    fint(r->element[0], "pending", 1);
    freeReplyObject(r);
    /* many IDs */
    INT(c, 1, "XACK s g 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20");
    assert_int_equal(pel_count(c, "s", "g"), 0);
    INT(c, 4, "XLEN s");                        /* acknowledging deletes nothing */
    ERR(c, "ERR wrong number of arguments for 'xack' command", "XACK s g");
    OK(c, "SET str v");
    ERR(c, ERR_WT, "XACK str g 1-0");
}

static void test_xpending(void **state) {
    redisContext *c = FIX(state)->c;
    add_entries(c, "s", 5);
    OK(c, "XGROUP CREATE s g 0");
    /* empty PEL: count, nil, nil, nil */
    redisReply *r = cmd(c, "XPENDING s g");
    expect_len(r, 4);
    expect_integer(r->element[0], 0);
    assert_int_equal(r->element[1]->type, REDIS_REPLY_NIL);
    assert_int_equal(r->element[2]->type, REDIS_REPLY_NIL);
    assert_int_equal(r->element[3]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    expect_empty_array(cmd(c, "XPENDING s g - + 10"));
    freeReplyObject(cmd(c, "XREADGROUP GROUP g bob COUNT 2 STREAMS s >"));
    freeReplyObject(cmd(c, "XREADGROUP GROUP g alice COUNT 3 STREAMS s >"));
    INT(c, 1, "XGROUP CREATECONSUMER s g carol");   /* nothing pending: not listed */
    /* summary: consumers by name, their counts as bulk strings */
    r = cmd(c, "XPENDING s g");
    expect_len(r, 4);
    expect_integer(r->element[0], 5);
    expect_str(r->element[1], "1-0");
    expect_str(r->element[2], "5-0");
    expect_len(r->element[3], 2);
    expect_str(r->element[3]->element[0]->element[0], "alice");
    expect_str(r->element[3]->element[0]->element[1], "3");
    expect_str(r->element[3]->element[1]->element[0], "bob");
    expect_str(r->element[3]->element[1]->element[1], "2");
    freeReplyObject(r);
    /* extended */
    r = cmd(c, "XPENDING s g - + 10");
    expect_len(r, 5);
    expect_pending_row(r->element[0], "1-0", "bob", 1);
    expect_pending_row(r->element[1], "2-0", "bob", 1);
    expect_pending_row(r->element[2], "3-0", "alice", 1);
    expect_pending_row(r->element[4], "5-0", "alice", 1);
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g - + 2");
    expect_len(r, 2);
    expect_str(r->element[1]->element[0], "2-0");
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g 2 4 10");
    expect_len(r, 3);
    expect_str(r->element[0]->element[0], "2-0");
    expect_str(r->element[2]->element[0], "4-0");
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g (1-0 (5-0 10");
    expect_len(r, 3);
    expect_str(r->element[0]->element[0], "2-0");
    expect_str(r->element[2]->element[0], "4-0");
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g - + 10 alice");
    expect_len(r, 3);
    expect_pending_row(r->element[0], "3-0", "alice", 1);
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g (3 + 10 alice");
    expect_len(r, 2);
    expect_str(r->element[0]->element[0], "4-0");
    freeReplyObject(r);
    expect_empty_array(cmd(c, "XPENDING s g - + 10 carol"));
    expect_empty_array(cmd(c, "XPENDING s g - + 10 nobody"));
    expect_empty_array(cmd(c, "XPENDING s g - + 0"));
    expect_empty_array(cmd(c, "XPENDING s g - + -3"));
    expect_empty_array(cmd(c, "XPENDING s g 9 + 10"));
    /* IDLE: a huge minimum leaves nothing, 0 everything */
    expect_empty_array(cmd(c, "XPENDING s g IDLE " OLD " - + 10"));
    expect_empty_array(cmd(c, "XPENDING s g IDLE " OLD " - + 10 alice"));
    LEN(c, 5, "XPENDING s g IDLE 0 - + 10");
    LEN(c, 2, "XPENDING s g idle 0 - + 10 bob");
    /* an entry delivered long ago passes the IDLE filter */
    LEN(c, 1, "XCLAIM s g dave 0 4-0 TIME 1000 JUSTID");
    r = cmd(c, "XPENDING s g IDLE " OLD " - + 10");
    expect_len(r, 1);
    expect_pending_row(r->element[0], "4-0", "dave", 1);
    assert_true(r->element[0]->element[2]->integer > 1000000000LL);
    freeReplyObject(r);
    /* errors: syntax, then the range, then the key */
    ERR(c, "ERR syntax error", "XPENDING s g - +");
    ERR(c, "ERR syntax error", "XPENDING s g -");
    ERR(c, "ERR syntax error", "XPENDING s g IDLE 0 - +");
    ERR(c, "ERR syntax error", "XPENDING s g IDLE 0 - + 10 a b");
    ERR(c, "ERR value is not an integer or out of range", "XPENDING s g IDLE x - + 10");
    ERR(c, "ERR value is not an integer or out of range", "XPENDING s g - + x");
    ERR(c, ERR_ID, "XPENDING s g bad + 10");
    ERR(c, ERR_ID, "XPENDING s g - bad 10");
    ERR(c, ERR_ID, "XPENDING s g ( + 10");
    ERR(c, ERR_ID, "XPENDING s g (- + 10");
    ERR(c, "ERR invalid start ID for the interval", "XPENDING s g (18446744073709551615-18446744073709551615 + 10");
    ERR(c, "ERR invalid end ID for the interval", "XPENDING s g - (0-0 10");
    ERR(c, ERR_ID, "XPENDING nokey g bad + 10");
    ERR(c, "NOGROUP No such key 's' or consumer group 'nog'", "XPENDING s nog");
    ERR(c, "NOGROUP No such key 'nokey' or consumer group 'g'", "XPENDING nokey g - + 10");
    ERR(c, "ERR wrong number of arguments for 'xpending' command", "XPENDING s");
    OK(c, "SET str v");
    ERR(c, ERR_WT, "XPENDING str g");
}

/* ------------------------------------------------------------------ */
/* XCLAIM                                                               */

static void test_xclaim(void **state) {
    redisContext *c = FIX(state)->c;
    add_entries(c, "s", 6);
    OK(c, "XGROUP CREATE s g 0");
    freeReplyObject(cmd(c, "XREADGROUP GROUP g alice COUNT 4 STREAMS s >"));
    /* min-idle-time not reached: nothing claimed, no consumer made */
    expect_empty_array(cmd(c, "XCLAIM s g bob " OLD " 1-0 2-0"));
    LEN(c, 1, "XINFO CONSUMERS s g");
    /* claimed: the entries, one more delivery each, now bob's */
    redisReply *r = cmd(c, "XCLAIM s g bob 0 1-0 2-0");
    expect_len(r, 2);
    expect_entry(r->element[0], "1-0", "f", "v1");
    expect_entry(r->element[1], "2-0", "f", "v2");
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g - + 10");
    expect_len(r, 4);
    expect_pending_row(r->element[0], "1-0", "bob", 2);
    expect_pending_row(r->element[1], "2-0", "bob", 2);
    expect_pending_row(r->element[2], "3-0", "alice", 1);
    freeReplyObject(r);
    r = cmd(c, "XINFO CONSUMERS s g");
    expect_len(r, 2);
    fstr(r->element[0], "name", "alice");
    fint(r->element[0], "pending", 2);
    fstr(r->element[1], "name", "bob");
    fint(r->element[1], "pending", 2);
    freeReplyObject(r);
    /* JUSTID: IDs only, the count unchanged */
    r = cmd(c, "XCLAIM s g carol 0 1-0 3-0 JUSTID");
    expect_len(r, 2);
    expect_str(r->element[0], "1-0");
    expect_str(r->element[1], "3-0");
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g - + 10 carol");
    expect_pending_row(r->element[0], "1-0", "carol", 2);
    expect_pending_row(r->element[1], "3-0", "carol", 1);
    freeReplyObject(r);
    /* RETRYCOUNT sets it; TIME sets the delivery time (XINFO FULL shows it) */
    LEN(c, 1, "XCLAIM s g carol 0 1-0 TIME 12345 RETRYCOUNT 9 JUSTID");
    LEN(c, 1, "XCLAIM s g carol 0 3-0 time 5000 retrycount 0");
    r = cmd(c, "XINFO STREAM s FULL");
    const redisReply *g = fget(r, "groups")->element[0];
    const redisReply *pel = fget(g, "pending");
    expect_len(pel, 4);
    expect_str(pel->element[0]->element[0], "1-0");
    expect_str(pel->element[0]->element[1], "carol");
    expect_integer(pel->element[0]->element[2], 12345);
    expect_integer(pel->element[0]->element[3], 9);
    expect_str(pel->element[2]->element[0], "3-0");
    expect_integer(pel->element[2]->element[2], 5000);
    expect_integer(pel->element[2]->element[3], 0);
    freeReplyObject(r);
    /* min-idle-time against those times: old enough now */
    r = cmd(c, "XCLAIM s g dave " OLD " 1-0 2-0 3-0 JUSTID");
    expect_len(r, 2);
    expect_str(r->element[0], "1-0");
    expect_str(r->element[1], "3-0");
    freeReplyObject(r);
    /* the same consumer, an ID twice: claimed (and counted) each time */
    r = cmd(c, "XCLAIM s g dave 0 1-0 1-0");
    expect_len(r, 2);
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g - 1-0 1");
    expect_pending_row(r->element[0], "1-0", "dave", 11);
    freeReplyObject(r);
    /* IDs not pending: ignored; FORCE makes them pending if they exist */
    expect_empty_array(cmd(c, "XCLAIM s g erin 0 5-0"));
    expect_empty_array(cmd(c, "XCLAIM s g erin 0 99-0 FORCE"));
    r = cmd(c, "XCLAIM s g erin 0 5-0 FORCE");
    expect_len(r, 1);
    expect_entry(r->element[0], "5-0", "f", "v5");
    freeReplyObject(r);
    LEN(c, 1, "XCLAIM s g erin 0 6-0 FORCE JUSTID");
    r = cmd(c, "XPENDING s g 5 6 10");
    expect_len(r, 2);
    expect_pending_row(r->element[0], "5-0", "erin", 2);   /* made with 1, then delivered */
    expect_pending_row(r->element[1], "6-0", "erin", 1);
    freeReplyObject(r);
    /* a deleted entry is dropped from the PEL, not claimed */
    INT(c, 1, "XDEL s 2-0");
    assert_int_equal(pel_count(c, "s", "g"), 6);
    r = cmd(c, "XCLAIM s g frank 0 2-0 4-0");
    expect_len(r, 1);
    expect_entry(r->element[0], "4-0", "f", "v4");
    freeReplyObject(r);
    assert_int_equal(pel_count(c, "s", "g"), 5);
    expect_empty_array(cmd(c, "XPENDING s g - + 10 bob"));
    /* LASTID moves the group's last ID forward only */
    expect_empty_array(cmd(c, "XCLAIM s g frank 0 99-0 LASTID 3-0"));
    r = cmd(c, "XINFO GROUPS s");
    fstr(r->element[0], "last-delivered-id", "4-0");
    freeReplyObject(r);
    expect_empty_array(cmd(c, "XCLAIM s g frank 0 99-0 LASTID 20-5"));
    r = cmd(c, "XINFO GROUPS s");
    fstr(r->element[0], "last-delivered-id", "20-5");
    freeReplyObject(r);
    /* errors */
    ERR(c, "NOGROUP No such key 's' or consumer group 'nog'", "XCLAIM s nog a 0 1-0");
    ERR(c, "NOGROUP No such key 'nokey' or consumer group 'g'", "XCLAIM nokey g a x 1-0");
    ERR(c, "ERR Invalid min-idle-time argument for XCLAIM", "XCLAIM s g a x 1-0");
    ERR(c, "ERR Unrecognized XCLAIM option 'BADOPT'", "XCLAIM s g a 0 1-0 BADOPT");
    ERR(c, "ERR Unrecognized XCLAIM option 'bad'", "XCLAIM s g a 0 bad 1-0");
    ERR(c, "ERR Unrecognized XCLAIM option 'IDLE'", "XCLAIM s g a 0 1-0 IDLE");
    ERR(c, "ERR Invalid IDLE option argument for XCLAIM", "XCLAIM s g a 0 1-0 IDLE x");
    ERR(c, "ERR Invalid TIME option argument for XCLAIM", "XCLAIM s g a 0 1-0 TIME x");
    ERR(c, "ERR Invalid RETRYCOUNT option argument for XCLAIM", "XCLAIM s g a 0 1-0 RETRYCOUNT x");
    ERR(c, ERR_ID, "XCLAIM s g a 0 1-0 LASTID bad");
    ERR(c, ERR_ID, "XCLAIM s g a 0 1-0 LASTID +");
    ERR(c, "ERR wrong number of arguments for 'xclaim' command", "XCLAIM s g a 0");
    OK(c, "SET str v");
    ERR(c, ERR_WT, "XCLAIM str g a 0 1-0");
    /* none of the failed calls made consumer "a" */
    r = cmd(c, "XINFO CONSUMERS s g");
    for (size_t i = 0; i < r->elements; i++) assert_string_not_equal(fget(r->element[i], "name")->str, "a");
    freeReplyObject(r);
}

/* ------------------------------------------------------------------ */
/* XAUTOCLAIM                                                           */

static void test_xautoclaim(void **state) {
    redisContext *c = FIX(state)->c;
    add_entries(c, "s", 6);
    OK(c, "XGROUP CREATE s g 0");
    freeReplyObject(cmd(c, "XREADGROUP GROUP g alice STREAMS s >"));
    /* nothing idle long enough: no claims, cursor 0-0 at the end */
    redisReply *r = cmd(c, "XAUTOCLAIM s g bob " OLD " 0");
    expect_len(r, 3);
    expect_str(r->element[0], "0-0");
    expect_len(r->element[1], 0);
    expect_len(r->element[2], 0);
    freeReplyObject(r);
    LEN(c, 1, "XINFO CONSUMERS s g");           /* no consumer made */
    /* as an iterator */
    r = cmd(c, "XAUTOCLAIM s g bob 0 - COUNT 2");
    expect_str(r->element[0], "3-0");
    expect_len(r->element[1], 2);
    expect_entry(r->element[1]->element[0], "1-0", "f", "v1");
    expect_entry(r->element[1]->element[1], "2-0", "f", "v2");
    expect_len(r->element[2], 0);
    freeReplyObject(r);
    r = cmd(c, "XAUTOCLAIM s g bob 0 3-0 COUNT 3 JUSTID");
    expect_str(r->element[0], "6-0");
    expect_len(r->element[1], 3);
    expect_str(r->element[1]->element[0], "3-0");
    expect_str(r->element[1]->element[2], "5-0");
    freeReplyObject(r);
    r = cmd(c, "XAUTOCLAIM s g bob 0 (5-0");
    expect_str(r->element[0], "0-0");
    expect_len(r->element[1], 1);
    expect_entry(r->element[1]->element[0], "6-0", "f", "v6");
    freeReplyObject(r);
    /* deliveries: +1, not with JUSTID */
    r = cmd(c, "XPENDING s g - + 10");
    expect_len(r, 6);
    expect_pending_row(r->element[0], "1-0", "bob", 2);
    expect_pending_row(r->element[2], "3-0", "bob", 1);
    expect_pending_row(r->element[5], "6-0", "bob", 2);
    freeReplyObject(r);
    /* deleted entries: dropped from the PEL and listed; they use up COUNT */
    INT(c, 2, "XDEL s 2-0 3-0");
    r = cmd(c, "XAUTOCLAIM s g carol 0 0 COUNT 2");
    expect_str(r->element[0], "3-0");
    expect_len(r->element[1], 1);
    expect_entry(r->element[1]->element[0], "1-0", "f", "v1");
    expect_len(r->element[2], 1);
    expect_str(r->element[2]->element[0], "2-0");
    freeReplyObject(r);
    r = cmd(c, "XAUTOCLAIM s g carol 0 3-0 COUNT 1");
    expect_str(r->element[0], "4-0");
    expect_len(r->element[1], 0);
    expect_len(r->element[2], 1);
    expect_str(r->element[2]->element[0], "3-0");
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g");
    expect_integer(r->element[0], 4);
    expect_str(r->element[1], "1-0");
    freeReplyObject(r);
    /* entries gone by a trim, with JUSTID */
    INT(c, 3, "XTRIM s MAXLEN 1");
    r = cmd(c, "XAUTOCLAIM s g dave 0 0 JUSTID");
    expect_str(r->element[0], "0-0");
    expect_len(r->element[1], 1);
    expect_str(r->element[1]->element[0], "6-0");
    expect_len(r->element[2], 3);
    expect_str(r->element[2]->element[0], "1-0");
    expect_str(r->element[2]->element[1], "4-0");
    expect_str(r->element[2]->element[2], "5-0");
    freeReplyObject(r);
    r = cmd(c, "XPENDING s g - + 10");
    expect_len(r, 1);
    expect_pending_row(r->element[0], "6-0", "dave", 2);
    freeReplyObject(r);
    /* min-idle-time against an old delivery */
    LEN(c, 1, "XCLAIM s g erin 0 6-0 TIME 1000 JUSTID");
    r = cmd(c, "XAUTOCLAIM s g frank " OLD " 0");
    expect_len(r->element[1], 1);
    freeReplyObject(r);
    r = cmd(c, "XAUTOCLAIM s g erin " OLD " 0");
    expect_len(r->element[1], 0);
    freeReplyObject(r);
    /* errors: arguments first, then the key */
    ERR(c, "ERR Invalid min-idle-time argument for XAUTOCLAIM", "XAUTOCLAIM nokey g a x 0");
    ERR(c, ERR_ID, "XAUTOCLAIM nokey g a 0 bad");
    ERR(c, "ERR invalid start ID for the interval", "XAUTOCLAIM s g a 0 (18446744073709551615-18446744073709551615");
    ERR(c, "ERR COUNT must be > 0", "XAUTOCLAIM s g a 0 0 COUNT 0");
    ERR(c, "ERR COUNT must be > 0", "XAUTOCLAIM s g a 0 0 COUNT -1");
    ERR(c, "ERR COUNT must be > 0", "XAUTOCLAIM s g a 0 0 COUNT x");
    ERR(c, "ERR COUNT must be > 0", "XAUTOCLAIM s g a 0 0 COUNT 8070450532247928833");
    ERR(c, "ERR syntax error", "XAUTOCLAIM s g a 0 0 COUNT");
    ERR(c, "ERR syntax error", "XAUTOCLAIM s g a 0 0 BAD");
    ERR(c, "NOGROUP No such key 'nokey' or consumer group 'g'", "XAUTOCLAIM nokey g a 0 0");
    ERR(c, "NOGROUP No such key 's' or consumer group 'nog'", "XAUTOCLAIM s nog a 0 0");
    ERR(c, "ERR wrong number of arguments for 'xautoclaim' command", "XAUTOCLAIM s g a 0");
    OK(c, "SET str v");
    ERR(c, ERR_WT, "XAUTOCLAIM str g a 0 0");
    /* a COUNT too large to allocate its IDs for fails as in Redis; a large one does not */
    ERR(c, "ERR Insufficient memory, failed allocating transient memory, COUNT too high.",
        "XAUTOCLAIM s g a 0 0 COUNT 576460752303423487");
    ERR(c, "NOGROUP No such key 's' or consumer group 'nog'", "XAUTOCLAIM s nog a 0 0 COUNT 576460752303423487");
    LEN(c, 3, "XAUTOCLAIM s g a " OLD " 0 COUNT 1000000000");
}

/* ------------------------------------------------------------------ */
/* XINFO                                                                */

static void test_xinfo_stream(void **state) {
    redisContext *c = FIX(state)->c;
    /* an empty stream */
    OK(c, "XGROUP CREATE e g 0 MKSTREAM");
    redisReply *r = cmd(c, "XINFO STREAM e");
    expect_fields(r, 10, "length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                  "max-deleted-entry-id", "entries-added", "recorded-first-entry-id", "groups", "first-entry",
                  "last-entry");
    fint(r, "length", 0);
    fint(r, "radix-tree-keys", 0);
    fint(r, "radix-tree-nodes", 1);
    fstr(r, "last-generated-id", "0-0");
    fstr(r, "max-deleted-entry-id", "0-0");
    fint(r, "entries-added", 0);
    fstr(r, "recorded-first-entry-id", "0-0");
    fint(r, "groups", 1);
    fnil(r, "first-entry");
    fnil(r, "last-entry");
    freeReplyObject(r);

    OK(c, "CONFIG SET stream-node-max-entries 2");
    add_entries(c, "s", 5);
    INT(c, 1, "XDEL s 1-0");
    INT(c, 1, "XDEL s 3-0");
    r = cmd(c, "XINFO STREAM s");
    fint(r, "length", 3);
    fint(r, "radix-tree-keys", 3);              /* nodes of 2 entries: [1 2] [3 4] [5] */
    /* as Redis's rax holds those 3 IDs: a run of 7 bytes, a node branching
     * on the 8th, and under each a run of 8 bytes and the leaf */
    fint(r, "radix-tree-nodes", 8);
    fstr(r, "last-generated-id", "5-0");
    fstr(r, "max-deleted-entry-id", "3-0");
    fint(r, "entries-added", 5);
    fstr(r, "recorded-first-entry-id", "2-0");
    fint(r, "groups", 0);
    expect_entry(fget(r, "first-entry"), "2-0", "f", "v2");
    expect_entry(fget(r, "last-entry"), "5-0", "f", "v5");
    freeReplyObject(r);
    OK(c, "CONFIG SET stream-node-max-entries 100");

    /* FULL */
    OK(c, "XGROUP CREATE s g2 0");
    OK(c, "XGROUP CREATE s g1 0");
    freeReplyObject(cmd(c, "XREADGROUP GROUP g1 bob COUNT 1 STREAMS s >"));
    freeReplyObject(cmd(c, "XREADGROUP GROUP g1 alice COUNT 2 STREAMS s >"));
    LEN(c, 1, "XCLAIM s g1 alice 0 4-0 TIME 7000 RETRYCOUNT 3 JUSTID");
    r = cmd(c, "XINFO STREAM s FULL");
    expect_fields(r, 9, "length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                  "max-deleted-entry-id", "entries-added", "recorded-first-entry-id", "entries", "groups");
    const redisReply *entries = fget(r, "entries");
    expect_len(entries, 3);
    expect_entry(entries->element[0], "2-0", "f", "v2");
    expect_entry(entries->element[2], "5-0", "f", "v5");
    const redisReply *groups = fget(r, "groups");
    expect_len(groups, 2);
    const redisReply *g1 = groups->element[0];
    expect_fields(g1, 7, "name", "last-delivered-id", "entries-read", "lag", "pel-count", "pending", "consumers");
    fstr(g1, "name", "g1");
    fstr(g1, "last-delivered-id", "5-0");
    fint(g1, "entries-read", 5);
    fint(g1, "lag", 0);
    fint(g1, "pel-count", 3);
    const redisReply *pel = fget(g1, "pending");
    expect_len(pel, 3);
    expect_len(pel->element[1], 4);
    expect_str(pel->element[1]->element[0], "4-0");
    expect_str(pel->element[1]->element[1], "alice");
    expect_integer(pel->element[1]->element[2], 7000);
    expect_integer(pel->element[1]->element[3], 3);
    const redisReply *consumers = fget(g1, "consumers");
    expect_len(consumers, 2);
    const redisReply *alice = consumers->element[0];
    expect_fields(alice, 4, "name", "seen-time", "pel-count", "pending");
    fstr(alice, "name", "alice");
    fint(alice, "pel-count", 2);
    const redisReply *apel = fget(alice, "pending");
    expect_len(apel, 2);
    expect_len(apel->element[0], 3);
    expect_str(apel->element[0]->element[0], "4-0");
    expect_integer(apel->element[0]->element[1], 7000);
    expect_integer(apel->element[0]->element[2], 3);
    expect_str(apel->element[1]->element[0], "5-0");
    fstr(consumers->element[1], "name", "bob");
    if (fget(alice, "seen-time")->integer < 1000000000000LL) h_fail("seen-time is not a unix time in ms");
    const redisReply *g2 = groups->element[1];
    fstr(g2, "name", "g2");
    fstr(g2, "last-delivered-id", "0-0");
    fnil(g2, "entries-read");
    fnil(g2, "lag");                            /* deleted entries ahead of it */
    fint(g2, "pel-count", 0);
    expect_len(fget(g2, "pending"), 0);
    expect_len(fget(g2, "consumers"), 0);
    freeReplyObject(r);
    /* COUNT bounds the entries and every PEL shown; 0 is everything */
    r = cmd(c, "XINFO STREAM s FULL COUNT 1");
    expect_len(fget(r, "entries"), 1);
    g1 = fget(r, "groups")->element[0];
    fint(g1, "pel-count", 3);
    expect_len(fget(g1, "pending"), 1);
    expect_len(fget(fget(g1, "consumers")->element[0], "pending"), 1);
    freeReplyObject(r);
    r = cmd(c, "XINFO STREAM s full count 0");
    expect_len(fget(r, "entries"), 3);
    expect_len(fget(fget(r, "groups")->element[0], "pending"), 3);
    freeReplyObject(r);
    /* a negative COUNT is the default, 10 */
    for (int i = 6; i <= 20; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d-0", i);
        BULK(c, id, "XADD s %s f v", id);
    }
    r = cmd(c, "XINFO STREAM s FULL COUNT -1");
    expect_len(fget(r, "entries"), 10);
    freeReplyObject(r);
    r = cmd(c, "XINFO STREAM s FULL");
    expect_len(fget(r, "entries"), 10);
    freeReplyObject(r);
    /* errors: the key first */
    ERR(c, "ERR no such key", "XINFO STREAM nokey");
    ERR(c, "ERR no such key", "XINFO STREAM nokey BAD");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.", "XINFO STREAM s BAD");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.",
        "XINFO stream s FULL COUNT");
    ERR(c, "ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.",
        "XINFO STREAM s FULL x 1");
    ERR(c, "ERR value is not an integer or out of range", "XINFO STREAM s FULL COUNT x");
    ERR(c, "ERR wrong number of arguments for 'xinfo|stream' command", "XINFO STREAM");
    OK(c, "SET str v");
    ERR(c, ERR_WT, "XINFO STREAM str");
}

static void test_xinfo_groups_consumers(void **state) {
    redisContext *c = FIX(state)->c;
    add_entries(c, "s", 3);
    expect_empty_array(cmd(c, "XINFO GROUPS s"));
    OK(c, "XGROUP CREATE s g 0");
    freeReplyObject(cmd(c, "XREADGROUP GROUP g alice COUNT 2 STREAMS s >"));
    INT(c, 1, "XGROUP CREATECONSUMER s g bob");
    redisReply *r = cmd(c, "XINFO GROUPS s");
    expect_len(r, 1);
    expect_fields(r->element[0], 6, "name", "consumers", "pending", "last-delivered-id", "entries-read", "lag");
    fstr(r->element[0], "name", "g");
    fint(r->element[0], "consumers", 2);
    fint(r->element[0], "pending", 2);
    fstr(r->element[0], "last-delivered-id", "2-0");
    fint(r->element[0], "entries-read", 2);
    fint(r->element[0], "lag", 1);
    freeReplyObject(r);
    r = cmd(c, "XINFO CONSUMERS s g");
    expect_len(r, 2);
    expect_fields(r->element[0], 3, "name", "pending", "idle");
    fstr(r->element[0], "name", "alice");
    fint(r->element[0], "pending", 2);
    assert_true(fget(r->element[0], "idle")->integer >= 0);
    fstr(r->element[1], "name", "bob");
    fint(r->element[1], "pending", 0);
    freeReplyObject(r);
    ERR(c, "NOGROUP No such consumer group 'nog' for key name 's'", "XINFO CONSUMERS s nog");
    ERR(c, "ERR no such key", "XINFO CONSUMERS nokey g");
    ERR(c, "ERR no such key", "XINFO GROUPS nokey");
    ERR(c, "ERR wrong number of arguments for 'xinfo|groups' command", "XINFO GROUPS s x");
    ERR(c, "ERR wrong number of arguments for 'xinfo|consumers' command", "XINFO CONSUMERS s");
    ERR(c, "ERR wrong number of arguments for 'xinfo|help' command", "XINFO HELP x");
    ERR(c, "ERR unknown subcommand 'FOO'. Try XINFO HELP.", "XINFO FOO s");
    ERR(c, "ERR wrong number of arguments for 'xinfo' command", "XINFO");
    OK(c, "SET str v");
    ERR(c, ERR_WT, "XINFO GROUPS str");
    ERR(c, ERR_WT, "XINFO CONSUMERS str g");
    r = cmd(c, "XINFO HELP");
    expect_len(r, 9);
    assert_string_equal(r->element[0]->str, "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    assert_string_equal(r->element[5]->str, "STREAM <key> [FULL [COUNT <count>]");
    assert_string_equal(r->element[7]->str, "HELP");
    freeReplyObject(r);
}

/* entries-read and lag as Redis 7.0 counts them */
static void test_lag(void **state) {
    redisContext *c = FIX(state)->c;
    /* an empty stream: lag 0, entries-read unknown */
    OK(c, "XGROUP CREATE x g1 0 MKSTREAM");
    expect_read_lag(c, "x", "g1", -1, 0);
    BULK(c, "1-0", "XADD x 1-0 data a");
    INT(c, 1, "XDEL x 1-0");
    expect_read_lag(c, "x", "g1", -1, 0);
    INT(c, 1, "DEL x");

    add_entries(c, "x", 5);
    OK(c, "XGROUP CREATE x g1 0");
    expect_read_lag(c, "x", "g1", -1, 5);
    freeReplyObject(cmd(c, "XREADGROUP GROUP g1 c COUNT 1 STREAMS x >"));
    expect_read_lag(c, "x", "g1", 1, 4);
    freeReplyObject(cmd(c, "XREADGROUP GROUP g1 c COUNT 10 STREAMS x >"));
    expect_read_lag(c, "x", "g1", 5, 0);
    BULK(c, "6-0", "XADD x 6-0 f v6");
    expect_read_lag(c, "x", "g1", 5, 1);
    /* a group made at $ knows it has read everything */
    OK(c, "XGROUP CREATE x dollar $");
    expect_read_lag(c, "x", "dollar", -1, 0);
    /* SETID with and without ENTRIESREAD */
    OK(c, "XGROUP SETID x g1 3-0 ENTRIESREAD 3");
    expect_read_lag(c, "x", "g1", 3, 3);
    OK(c, "XGROUP SETID x g1 3-0");
    expect_read_lag(c, "x", "g1", -1, -1);      /* between the first and the last entry: unknown */
    OK(c, "XGROUP SETID x g1 0");
    expect_read_lag(c, "x", "g1", -1, 6);       /* before the first entry */
    INT(c, 1, "DEL x");

    /* deletes ahead of a group make its lag unknown until it reads past them */
    add_entries(c, "x", 5);
    INT(c, 1, "XDEL x 3-0");
    OK(c, "XGROUP CREATE x g1 0");
    OK(c, "XGROUP CREATE x g2 0");
    expect_read_lag(c, "x", "g1", -1, -1);
    for (int i = 0; i < 3; i++) {
        freeReplyObject(cmd(c, "XREADGROUP GROUP g1 c COUNT 1 STREAMS x >"));
        expect_read_lag(c, "x", "g1", -1, -1);
    }
    freeReplyObject(cmd(c, "XREADGROUP GROUP g1 c COUNT 1 STREAMS x >"));
    expect_read_lag(c, "x", "g1", 5, 0);
    BULK(c, "6-0", "XADD x 6-0 f v6");
    expect_read_lag(c, "x", "g1", 5, 1);
    /* trimming past the tombstone makes g2's estimate possible */
    INT(c, 2, "XTRIM x MINID = 3-0");
    expect_read_lag(c, "x", "g1", 5, 1);
    expect_read_lag(c, "x", "g2", -1, 3);
    INT(c, 1, "XTRIM x MINID = 5-0");
    expect_read_lag(c, "x", "g2", -1, 2);
    /* XSETID moves the stream's counters */
    OK(c, "XSETID x 10-0 ENTRIESADDED 20 MAXDELETEDID 9-0");
    expect_read_lag(c, "x", "g1", 5, -1);       /* a deletion ahead of the group again */
    redisReply *r = cmd(c, "XINFO STREAM x");
    fstr(r, "last-generated-id", "10-0");
    fstr(r, "max-deleted-entry-id", "9-0");
    fint(r, "entries-added", 20);
    freeReplyObject(r);
}

/* ------------------------------------------------------------------ */
/* RESP3                                                                */

static void test_resp3(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    OK(c, "XGROUP CREATE e g 0 MKSTREAM");
    struct raw *r = raw_connect(&f->srv);
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    RAW(r,
        "*1\r\n%6\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n"
        "$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n_\r\n$3\r\nlag\r\n:0\r\n",
        "XINFO GROUPS e");
    RAW(r, "*4\r\n:0\r\n_\r\n_\r\n_\r\n", "XPENDING e g");
    RAW(r, "*0\r\n", "XPENDING e g - + 10");
    RAW(r, "*3\r\n$3\r\n0-0\r\n*0\r\n*0\r\n", "XAUTOCLAIM e g a 0 0");
    RAW(r, "*0\r\n", "XCLAIM e g a 0 1-0");
    RAW(r, "*0\r\n", "XINFO CONSUMERS e g");
    /* XINFO STREAM: a map; no entries: null first and last */
    raw_cmd(r, "XINFO STREAM e");
    struct rv *v = raw_reply(r);
    assert_int_equal(v->type, '%');
    assert_int_equal(v->n, 20);
    assert_int_equal(rv_map_get(v, "first-entry")->type, '_');
    assert_int_equal(rv_map_get(v, "last-entry")->type, '_');
    assert_int_equal(rv_map_get(v, "groups")->integer, 1);
    rv_free(v);
    BULK(c, "1-0", "XADD e 1-0 f v");
    /* the read was made on the hiredis connection: alice has it */
    freeReplyObject(cmd(c, "XREADGROUP GROUP g alice STREAMS e >"));
    RAW(r, "*3\r\n$3\r\n0-0\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*0\r\n",
        "XAUTOCLAIM e g bob 0 0");
    RAW(r, "*4\r\n:1\r\n$3\r\n1-0\r\n$3\r\n1-0\r\n*1\r\n*2\r\n$3\r\nbob\r\n$1\r\n1\r\n", "XPENDING e g");
    raw_cmd(r, "XINFO STREAM e FULL");
    v = raw_reply(r);
    assert_int_equal(v->type, '%');
    assert_int_equal(v->n, 18);
    struct rv *groups = rv_map_get(v, "groups");
    assert_int_equal(groups->type, '*');
    struct rv *g = groups->elem[0];
    assert_int_equal(g->type, '%');
    assert_int_equal(rv_map_get(g, "entries-read")->integer, 1);
    struct rv *consumer = rv_map_get(g, "consumers")->elem[1];
    assert_int_equal(consumer->type, '%');
    assert_string_equal(rv_map_get(consumer, "name")->str, "bob");
    assert_int_equal(rv_map_get(consumer, "pel-count")->integer, 1);
    rv_free(v);
    raw_cmd(r, "XINFO CONSUMERS e g");
    v = raw_reply(r);
    assert_int_equal(v->n, 2);
    assert_int_equal(v->elem[0]->type, '%');
    assert_int_equal(rv_map_get(v->elem[0], "pending")->integer, 0);
    rv_free(v);
    raw_close(r);
}

/* ------------------------------------------------------------------ */
/* Keyspace events, WATCH, a waiter woken                               */

static char *next_event(struct raw *s) {
    struct rv *v = raw_reply(s);
    if (v->type != '*' || v->n != 4 || strcmp(v->elem[0]->str, "pmessage") != 0)
        h_fail("not a pmessage: %s", h_escape(v->raw, v->rawlen));
    size_t n = v->elem[2]->len + v->elem[3]->len + 2;
    char *out = malloc(n);
    snprintf(out, n, "%s %s", v->elem[2]->str, v->elem[3]->str);
    rv_free(v);
    return out;
}

static void expect_event(struct raw *s, const char *event) {
    char want[128];
    snprintf(want, sizeof want, "__keyevent@0__:%s s", event);
    char *got = next_event(s);
    assert_string_equal(got, want);
    free(got);
}

static void test_notify(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    OK(c, "CONFIG SET notify-keyspace-events Et");
    struct raw *s = raw_connect(&f->srv);
    raw_cmd(s, "PSUBSCRIBE __keyevent*__:*");
    rv_free(raw_reply(s));
    OK(c, "XGROUP CREATE s g $ MKSTREAM");
    ERR(c, "BUSYGROUP Consumer Group name already exists", "XGROUP CREATE s g $");   /* no event */
    INT(c, 1, "XGROUP CREATECONSUMER s g bob");
    INT(c, 0, "XGROUP CREATECONSUMER s g bob");                                       /* no event */
    BULK(c, "1-0", "XADD s 1-0 f v");
    OK(c, "XGROUP SETID s g 0");
    LEN(c, 1, "XCLAIM s g mike 0 1-0 FORCE JUSTID");                     /* makes mike */
    LEN(c, 1, "XCLAIM s g mike 0 1-0 JUSTID");                            /* mike exists */
    INT(c, 1, "XACK s g 1-0");                                                        /* no event */
    INT(c, 0, "XGROUP DELCONSUMER s g lee");                                          /* no event */
    redisReply *r = cmd(c, "XAUTOCLAIM s g zed 0 0");                                 /* nothing: no consumer */
    expect_len(r, 3);
    freeReplyObject(r);
    INT(c, 0, "XGROUP DELCONSUMER s g bob");
    INT(c, 0, "XGROUP DESTROY s nog");                                                /* no event */
    INT(c, 1, "XGROUP DESTROY s g");
    expect_event(s, "xgroup-create");
    expect_event(s, "xgroup-createconsumer");
    expect_event(s, "xadd");
    expect_event(s, "xgroup-setid");
    expect_event(s, "xgroup-createconsumer");
    expect_event(s, "xgroup-delconsumer");
    expect_event(s, "xgroup-destroy");
    OK(c, "CONFIG SET notify-keyspace-events %s", "");
    raw_close(s);
}

/* ringkv's XGROUP changes the key as far as WATCH knows (Redis touches
 * only a key MKSTREAM made). */
static void test_watch(void **state) {
    SKIP_ON_REDIS();
    redisContext *c = FIX(state)->c;
    add_entries(c, "s", 2);
    OK(c, "XGROUP CREATE s g 0");
    /* each XGROUP change touches the key */
    const char *changes[] = { "XGROUP CREATE s g2 0", "XGROUP SETID s g 1-0", "XGROUP CREATECONSUMER s g a",
                              "XGROUP DELCONSUMER s g a", "XGROUP DESTROY s g2" };
    for (size_t i = 0; i < sizeof changes / sizeof *changes; i++) {
        OK(c, "WATCH s");
        redisReply *r = cmd(c, changes[i]);
        assert_int_not_equal(r->type, REDIS_REPLY_ERROR);
        freeReplyObject(r);
        OK(c, "MULTI");
        STATUS(c, "QUEUED", "PING");
        r = cmd(c, "EXEC");
        if (r->type != REDIS_REPLY_NIL) h_fail("%s did not touch the watched key: %s", changes[i], reply_repr(r));
        freeReplyObject(r);
    }
    /* what changes nothing does not */
    const char *nochanges[] = { "XGROUP CREATECONSUMER s g b", "XGROUP DESTROY s nog", "XGROUP DELCONSUMER s g nob",
                                "XINFO STREAM s", "XPENDING s g" };
    INT(c, 1, "XGROUP CREATECONSUMER s g b");
    for (size_t i = 0; i < sizeof nochanges / sizeof *nochanges; i++) {
        OK(c, "WATCH s");
        freeReplyObject(cmd(c, nochanges[i]));
        OK(c, "MULTI");
        STATUS(c, "QUEUED", "PING");
        redisReply *r = cmd(c, "EXEC");
        if (r->type != REDIS_REPLY_ARRAY) h_fail("%s touched the watched key: %s", nochanges[i], reply_repr(r));
        freeReplyObject(r);
    }
}

/* A blocked XREADGROUP wakes when XGROUP SETID moves its group back, and
 * gets what is now new to the group (Redis leaves it waiting for the next
 * XADD: only XGROUP DESTROY signals the key there). */
static void test_setid_wakes_reader(void **state) {
    SKIP_ON_REDIS();
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    add_entries(c, "s", 2);
    OK(c, "XGROUP CREATE s g $");
    struct raw *w = raw_connect(&f->srv);
    raw_cmd(w, "XREADGROUP GROUP g alice BLOCK 0 STREAMS s >");
    for (int i = 0;; i++) {
        if (info_ll(c, "clients", "blocked_clients") == 1) break;
        if (i == 2000) fail_msg("the reader never blocked");
        h_sleep_ms(5);
    }
    OK(c, "XGROUP SETID s g 1-0");
    struct rv *v = raw_reply(w);
    assert_int_equal(v->type, '*');
    assert_int_equal(v->n, 1);
    struct rv *entries = v->elem[0]->elem[1];
    assert_int_equal(entries->n, 1);
    assert_string_equal(entries->elem[0]->elem[0]->str, "2-0");
    rv_free(v);
    raw_close(w);
    redisReply *r = cmd(c, "XPENDING s g - + 10");
    expect_len(r, 1);
    expect_pending_row(r->element[0], "2-0", "alice", 1);
    freeReplyObject(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_xgroup_create, h_flushall),
        cmocka_unit_test_setup(test_xgroup_setid_destroy_consumers, h_flushall),
        cmocka_unit_test_setup(test_xack, h_flushall),
        cmocka_unit_test_setup(test_xpending, h_flushall),
        cmocka_unit_test_setup(test_xclaim, h_flushall),
        cmocka_unit_test_setup(test_xautoclaim, h_flushall),
        cmocka_unit_test_setup(test_xinfo_stream, h_flushall),
        cmocka_unit_test_setup(test_xinfo_groups_consumers, h_flushall),
        cmocka_unit_test_setup(test_lag, h_flushall),
        cmocka_unit_test_setup(test_resp3, h_flushall),
        cmocka_unit_test_setup(test_notify, h_flushall),
        cmocka_unit_test_setup(test_watch, h_flushall),
        cmocka_unit_test_setup(test_setid_wakes_reader, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("stream_group", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
