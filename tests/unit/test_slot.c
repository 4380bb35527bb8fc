/*
 * test_slot.c -- CRC16 and hash slots against the Redis Cluster spec, and
 * the slot-to-shard mapping against plain modulo.
 *
 * Expected slots were checked with CLUSTER KEYSLOT on redis-server 7.0 in
 * cluster mode.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/slot.h"
#include "ringkv/db.h"

static unsigned slot_of(const char *k) { return key_hash_slot(k, strlen(k)); }

static void test_crc16(void **state) {
    (void)state;
    /* The check value given in the cluster specification. */
    assert_int_equal(crc16_xmodem("123456789", 9), 0x31C3);
    assert_int_equal(crc16_xmodem("", 0), 0);
    assert_int_equal(crc16_xmodem("foo", 3), 44950);
    assert_int_equal(crc16_xmodem("a", 1), 31879);
    /* Bytes >= 0x80 must not be sign-extended. */
    assert_int_equal(crc16_xmodem("\xff", 1), 0x1ef0);
}

static void test_plain_keys(void **state) {
    (void)state;
    assert_int_equal(slot_of("foo"), 12182);
    assert_int_equal(slot_of("bar"), 5061);
    assert_int_equal(slot_of("hello"), 866);
    assert_int_equal(slot_of(""), 0);
    assert_int_equal(key_hash_slot(NULL, 0), 0);
}

static void test_hash_tags(void **state) {
    (void)state;
    assert_int_equal(slot_of("{user1000}.following"), 3443);
    assert_int_equal(slot_of("{user1000}.followers"), 3443);
    assert_int_equal(slot_of("{user1000}.following"), slot_of("user1000"));
    /* Empty tag: the whole key is hashed. */
    assert_int_equal(slot_of("foo{}{bar}"), 8363);
    assert_int_equal(slot_of("{}"), 15257);
    /* The tag runs from the first '{' to the first '}' after it. */
    assert_int_equal(slot_of("foo{{bar}}zap"), 4015);
    assert_int_equal(slot_of("foo{{bar}}zap"), slot_of("{bar"));
    assert_int_equal(slot_of("foo{bar}{zap}"), 5061);
    assert_int_equal(slot_of("foo{bar}{zap}"), slot_of("bar"));
    /* No closing brace, or only one before the '{': no tag. */
    assert_int_equal(slot_of("{"), 4092);
    assert_int_equal(slot_of("}{"), 12793);
    assert_int_equal(slot_of("a{b"), 13340);
    assert_int_equal(slot_of("{a}"), slot_of("a"));
    assert_int_equal(slot_of("{a}"), 15495);
    /* Binary keys: a NUL is part of the key, not its end. */
    assert_int_equal(key_hash_slot("x\0{foo}", 7), 12182);
}

static void test_range(void **state) {
    (void)state;
    char k[16];
    unsigned seen_high = 0;
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(k, sizeof(k), "key:%d", i);
        unsigned s = key_hash_slot(k, (size_t)n);
        assert_true(s < RK_SLOTS);
        if (s >= RK_SLOTS / 2) seen_high++;
    }
    /* CRC16 spreads keys over the whole slot space. */
    assert_true(seen_high > 45000 && seen_high < 55000);
}

/* The sliced CRC against the definition, bit by bit, at every length. */
static uint16_t crc16_bitwise(const unsigned char *p, size_t n) {
    uint16_t c = 0;
    for (size_t i = 0; i < n; i++) {
        c ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++) c = (c & 0x8000) ? (uint16_t)((c << 1) ^ 0x1021) : (uint16_t)(c << 1);
    }
    return c;
}

static void test_crc16_matches_bitwise(void **state) {
    (void)state;
    unsigned char buf[80];
    uint32_t x = 12345;
    for (int t = 0; t < 20000; t++) {
        size_t n = (size_t)t % sizeof buf;
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
        assert_int_equal(crc16_xmodem((const char *)buf, n), crc16_bitwise(buf, n));
    }
}

/* The spec's algorithm, written plainly, for random keys full of braces. */
static unsigned slot_reference(const unsigned char *k, size_t n) {
    size_t s = 0;
    while (s < n && k[s] != '{') s++;
    if (s < n) {
        size_t e = s + 1;
        while (e < n && k[e] != '}') e++;
        if (e < n && e != s + 1) return crc16_bitwise(k + s + 1, e - s - 1) & 16383;
    }
    return crc16_bitwise(k, n) & 16383;
}

static void test_slot_matches_reference(void **state) {
    (void)state;
    static const unsigned char alphabet[] = "ab{}{}x7";
    unsigned char buf[40];
    uint32_t x = 777;
    for (int t = 0; t < 50000; t++) {
        size_t n = (size_t)t % sizeof buf;
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            /* mostly arbitrary bytes, sometimes braces */
            buf[i] = (x >> 28) < 3 ? alphabet[(x >> 16) & 7] : (unsigned char)(x >> 16);
        }
        assert_int_equal(key_hash_slot((const char *)buf, n), slot_reference(buf, n));
    }
}

/* shard_of_slot's fastmod must equal slot % n for every slot and shard count. */
static void test_shard_of_slot(void **state) {
    (void)state;
    for (unsigned n = 1; n <= 64; n++) {
        slots_assign(n);
        for (unsigned slot = 0; slot < RK_SLOTS; slot++) assert_int_equal(shard_of_slot(slot), slot % n);
    }
    slots_assign(1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc16),
        cmocka_unit_test(test_crc16_matches_bitwise),
        cmocka_unit_test(test_plain_keys),
        cmocka_unit_test(test_hash_tags),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_slot_matches_reference),
        cmocka_unit_test(test_shard_of_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
