/*
 * SCAN, HSCAN, SSCAN and ZSCAN cursors: every cursor a client gets is below
 * 2^63 (clients that read it into a signed 64-bit integer must not fail)
 * and small, about the size of the table, while the scan keeps its
 * guarantee: an element present for the whole scan is returned, however
 * the table grows or shrinks in between (through every 3/2 and 4/3 growth
 * step of the keyspace table). And the cursor argument is parsed as Redis
 * parses it: what is an invalid cursor there is one here.
 */
#include "harness.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reply's cursor, checked: a decimal below 2^63 and below `bound`. */
static unsigned long long reply_cursor(const redisReply *r, unsigned long long bound)
{
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    const char *s = r->element[0]->str;
    char *end;
    errno = 0;
    long long signed_cursor = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0' || signed_cursor < 0)
        h_fail("cursor '%s' does not fit a signed 64-bit integer", s);
    if ((unsigned long long)signed_cursor >= bound)
        h_fail("cursor %s, expected below %llu", s, bound);
    return (unsigned long long)signed_cursor;
}

struct seen {
    unsigned char *count;   /* by id */
    size_t n;
};

/* Mark the ids of elements "<prefix><id>" at positions 0, step, 2 * step ... */
static void mark(struct seen *sn, const redisReply *arr, size_t step, const char *prefix)
{
    size_t plen = strlen(prefix);
    for (size_t i = 0; i < arr->elements; i += step) {
        const char *e = arr->element[i]->str;
        assert_true(strncmp(e, prefix, plen) == 0);
        unsigned long id = strtoul(e + plen, NULL, 10);
        assert_true(id < sn->n);
        if (sn->count[id] < 255) sn->count[id]++;
    }
}

static unsigned long long max_ull(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

/*
 * Keys k:0..stable-1 stay; between calls batches of other keys come (the
 * keyspace tables grow from nothing through every size) and then go (they
 * shrink back). Every cursor is checked against four times the largest key
 * count so far: ringkv's cursors are below its tables' group counts (times
 * the shards), well under the keys; Redis's below its bucket count, at most
 * about twice the keys.
 */
static void test_scan_growth_and_shrink(void **state)
{
    redisContext *c = FIX(state)->c;
    const unsigned long stable = 200, batch = 500, batches = 60;
    struct seen sn = { calloc(stable + batch * batches, 1), stable + batch * batches };
    for (unsigned long i = 0; i < stable; i++) OK(c, "SET k:%lu v", i);

    unsigned long long cursor = 0, largest = 0, most_keys = stable;
    unsigned long next_id = stable, next_del = stable, calls = 0;
    do {
        redisReply *r = cmd(c, "SCAN %llu COUNT %d", cursor, 1 + (int)(calls % 23));
        cursor = reply_cursor(r, 4 * max_ull(most_keys, 64));
        largest = max_ull(largest, cursor);
        mark(&sn, r->element[1], 1, "k:");
        freeReplyObject(r);
        if (calls < batches) {
            for (unsigned long k = 0; k < batch; k++) {
                redisAppendCommand(c, "SET k:%lu v", next_id++);
            }
            for (unsigned long k = 0; k < batch; k++) {
                redisReply *ok;
                assert_int_equal(redisGetReply(c, (void **)&ok), REDIS_OK);
                freeReplyObject(ok);
            }
            most_keys = stable + (next_id - stable);
        } else if (next_del < next_id) {
            for (unsigned long k = 0; k < batch && next_del < next_id; k++)
                redisAppendCommand(c, "DEL k:%lu", next_del++);
            for (unsigned long k = 0; k < batch; k++) {
                redisReply *ok;
                assert_int_equal(redisGetReply(c, (void **)&ok), REDIS_OK);
                freeReplyObject(ok);
            }
        }
        calls++;
    } while (cursor != 0);

    for (unsigned long i = 0; i < stable; i++)
        if (sn.count[i] == 0) h_fail("k:%lu, present throughout, was never returned", i);
    print_message("  SCAN: %lu calls, largest cursor %llu, up to %llu keys\n", calls, largest,
                  most_keys);
    free(sn.count);
}

/* A collection in its big encoding, scanned while it grows and then
 * shrinks: `add` and `del` are the commands (with %lu for the id). */
static void scan_collection(redisContext *c, const char *scan, const char *add, const char *del,
                            const char *prefix, size_t step)
{
    const unsigned long stable = 600, batch = 400, batches = 30;   /* 600: past every listpack limit */
    struct seen sn = { calloc(stable + batch * batches, 1), stable + batch * batches };
    for (unsigned long i = 0; i < stable; i++) freeReplyObject(cmd(c, add, i));

    unsigned long long cursor = 0, largest = 0;
    unsigned long next_id = stable, next_del = stable, calls = 0, most = stable;
    do {
        char buf[64];
        snprintf(buf, sizeof buf, "%s %llu COUNT %d", scan, cursor, 1 + (int)(calls % 17));
        redisReply *r = cmd(c, buf);
        cursor = reply_cursor(r, 4 * max_ull(most, 64));
        largest = max_ull(largest, cursor);
        mark(&sn, r->element[1], step, prefix);
        freeReplyObject(r);
        const char *op = calls < batches ? add : del;
        unsigned long *id = calls < batches ? &next_id : &next_del;
        unsigned long n = 0;
        for (; n < batch && (calls < batches || next_del < next_id); n++)
            redisAppendCommand(c, op, (*id)++);
        for (unsigned long k = 0; k < n; k++) {
            redisReply *ok;
            assert_int_equal(redisGetReply(c, (void **)&ok), REDIS_OK);
            freeReplyObject(ok);
        }
        if (next_id - stable > most - stable) most = next_id;
        calls++;
    } while (cursor != 0);

    for (unsigned long i = 0; i < stable; i++)
        if (sn.count[i] == 0) h_fail("%s: %s%lu, present throughout, was never returned", scan, prefix, i);
    print_message("  %s: %lu calls, largest cursor %llu\n", scan, calls, largest);
    free(sn.count);
}

static void test_hscan_sscan_zscan(void **state)
{
    redisContext *c = FIX(state)->c;
    scan_collection(c, "HSCAN h", "HSET h f:%lu v", "HDEL h f:%lu", "f:", 2);
    scan_collection(c, "SSCAN s", "SADD s m:%lu", "SREM s m:%lu", "m:", 1);
    scan_collection(c, "ZSCAN z", "ZADD z 1 m:%lu", "ZREM z m:%lu", "m:", 2);
}

/* Redis parses the cursor with strtoul() on the C string. */
static void test_cursor_parsing(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "SET k v");
    INT(c, 1, "HSET h f v");
    INT(c, 1, "SADD s m");
    INT(c, 1, "ZADD z 1 m");
    static const char *const scans[] = { "SCAN", "HSCAN h", "SSCAN s", "ZSCAN z", "HSCAN nokey" };
    static const char *const invalid[] = {
        "abc", " 1", "\t1", "1 ", "0x10", "-", "+", "18446744073709551616",
        "-18446744073709551616", "99999999999999999999999",
    };
    char zeros[80];
    memset(zeros, '0', sizeof zeros - 2);
    zeros[sizeof zeros - 2] = '1';
    zeros[sizeof zeros - 1] = '\0';
    const char *const valid[] = {
        "", "0", "+0", "-1", zeros, "18446744073709551615", "-18446744073709551615",
        "9223372036854775808", "12345",
    };
    for (size_t s = 0; s < sizeof scans / sizeof scans[0]; s++) {
        char line[160];
        for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
            const char *argv[8];
            size_t lens[8];
            int argc = 0;
            char *copy = strdup(scans[s]);
            for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
                argv[argc] = tok;
                lens[argc++] = strlen(tok);
            }
            argv[argc] = invalid[i];
            lens[argc++] = strlen(invalid[i]);
            expect_error(cmdv(c, argc, argv, lens), "ERR invalid cursor");
            free(copy);
        }
        for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
            const char *argv[8];
            size_t lens[8];
            int argc = 0;
            char *copy = strdup(scans[s]);
            for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
                argv[argc] = tok;
                lens[argc++] = strlen(tok);
            }
            argv[argc] = valid[i];
            lens[argc++] = strlen(valid[i]);
            redisReply *r = cmdv(c, argc, argv, lens);
            snprintf(line, sizeof line, "%s '%s'", scans[s], valid[i]);
            if (r->type != REDIS_REPLY_ARRAY) h_fail("%s: %s", line, reply_repr(r));
            reply_cursor(r, ULLONG_MAX);
            freeReplyObject(r);
            free(copy);
        }
        /* a NUL ends the number, as it ends Redis's C string */
        const char *argv[4] = { "SCAN", "7\0junk" };
        size_t lens[4] = { 4, 6 };
        redisReply *r = cmdv(c, 2, argv, lens);
        assert_int_equal(r->type, REDIS_REPLY_ARRAY);
        freeReplyObject(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_scan_growth_and_shrink, h_flushall),
        cmocka_unit_test_setup(test_hscan_sscan_zscan, h_flushall),
        cmocka_unit_test_setup(test_cursor_parsing, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("scan", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
