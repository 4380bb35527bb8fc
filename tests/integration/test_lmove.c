/*
 * LMOVE, RPOPLPUSH, BLMOVE and BRPOPLPUSH from a list to itself: Redis pops
 * and pushes on the same object, so the key is never deleted in between and
 * keeps its TTL, whatever the list's length or encoding. Moves between two
 * lists are checked alongside: the source goes when emptied, the
 * destination keeps its TTL.
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>

/* The TTL set by EXPIRE 1000 just before: at most a second has passed. */
#define TTL_KEPT(c, key) expect_int_range(cmd((c), "TTL %s", (key)), 999, 1000)

static void test_one_element_keeps_ttl(void **state)
{
    redisContext *c = FIX(state)->c;
    static const char *const moves[] = {
        "LMOVE L L LEFT LEFT", "LMOVE L L LEFT RIGHT", "LMOVE L L RIGHT LEFT",
        "LMOVE L L RIGHT RIGHT", "RPOPLPUSH L L", "BLMOVE L L LEFT RIGHT 0",
        "BLMOVE L L RIGHT LEFT 1", "BRPOPLPUSH L L 0",
    };
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
        OK(c, "FLUSHALL");
        INT(c, 1, "RPUSH L 3");
        INT(c, 1, "EXPIRE L 1000");
        BULK(c, "3", moves[i]);
        TTL_KEPT(c, "L");
        expect_bulks(cmd(c, "LRANGE L 0 -1"), 1, "3");
    }
}

static void test_rotation_keeps_ttl(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 3, "RPUSH L a b c");
    INT(c, 1, "PEXPIRE L 1000000");
    BULK(c, "a", "LMOVE L L LEFT RIGHT");
    expect_bulks(cmd(c, "LRANGE L 0 -1"), 3, "b", "c", "a");
    BULK(c, "a", "RPOPLPUSH L L");
    expect_bulks(cmd(c, "LRANGE L 0 -1"), 3, "a", "b", "c");
    BULK(c, "c", "BLMOVE L L RIGHT LEFT 0");
    expect_bulks(cmd(c, "LRANGE L 0 -1"), 3, "c", "a", "b");
    BULK(c, "c", "LMOVE L L LEFT LEFT");
    expect_bulks(cmd(c, "LRANGE L 0 -1"), 3, "c", "a", "b");
    expect_int_range(cmd(c, "PTTL L"), 999000, 1000000);
}

/* A list of several quicklist nodes, rotated all the way round: same
 * elements, same encoding, TTL kept. */
static void test_big_list_rotation(void **state)
{
    redisContext *c = FIX(state)->c;
    char val[64];
    for (int i = 0; i < 1000; i++) {
        snprintf(val, sizeof val, "element-%04d-%040d", i, i);
        INT(c, i + 1, "RPUSH B %s", val);
    }
    INT(c, 1, "EXPIRE B 1000");
    redisReply *enc = cmd(c, "OBJECT ENCODING B");
    assert_int_equal(enc->type, REDIS_REPLY_STRING);
    char encoding[32];
    snprintf(encoding, sizeof encoding, "%s", enc->str);
    freeReplyObject(enc);
    assert_string_equal(encoding, "quicklist");
    for (int i = 0; i < 1000; i++) {
        snprintf(val, sizeof val, "element-%04d-%040d", i, i);
        BULK(c, val, i % 2 ? "LMOVE B B LEFT RIGHT" : "BLMOVE B B LEFT RIGHT 0");
    }
    INT(c, 1000, "LLEN B");
    BULK(c, "element-0000-0000000000000000000000000000000000000000", "LINDEX B 0");
    BULK(c, "element-0999-0000000000000000000000000000000000000999", "LINDEX B -1");
    BULK(c, encoding, "OBJECT ENCODING B");
    TTL_KEPT(c, "B");
}

/* Between two keys: the emptied source goes, the destination keeps its TTL
 * and a new destination has none. */
static void test_between_lists(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 1, "RPUSH {k}src x");
    INT(c, 1, "EXPIRE {k}src 1000");
    INT(c, 1, "RPUSH {k}dst y");
    INT(c, 1, "EXPIRE {k}dst 1000");
    BULK(c, "x", "LMOVE {k}src {k}dst LEFT LEFT");
    INT(c, 0, "EXISTS {k}src");
    TTL_KEPT(c, "{k}dst");
    expect_bulks(cmd(c, "LRANGE {k}dst 0 -1"), 2, "x", "y");
    BULK(c, "y", "RPOPLPUSH {k}dst {k}new");
    INT(c, -1, "TTL {k}new");
    TTL_KEPT(c, "{k}dst");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_one_element_keeps_ttl, h_flushall),
        cmocka_unit_test_setup(test_rotation_keeps_ttl, h_flushall),
        cmocka_unit_test_setup(test_big_list_rotation, h_flushall),
        cmocka_unit_test_setup(test_between_lists, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("lmove", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
