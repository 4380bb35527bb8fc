/*
 * LCS against the real binary: the subsequence, LEN, IDX with MINMATCHLEN
 * and WITHMATCHLEN (RESP2 and the RESP3 map), missing keys, errors, the
 * proto-max-bulk-len bound on its table, and keys on two shards. Every
 * expected reply also holds against redis-server 7.0.15 (RINGKV_TEST_REDIS=1).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Key names whose slots differ in parity: different shards with 2 threads. */
static const char *KA = "{a}lcs", *KB = "{b}lcs";

static void test_lcs(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SET x1 ohmytext");
    OK(c, "SET x2 mynewtext");
    BULK(c, "mytext", "LCS x1 x2");
    INT(c, 6, "LCS x1 x2 LEN");
    INT(c, 6, "LCS x1 x2 len minmatchlen 3");
    BULK(c, "", "LCS nokey x2");
    BULK(c, "", "LCS nokey nokey2");
    BULK(c, "ohmytext", "LCS x1 x1");
    INT(c, 1, "LPUSH l a");
    ERR(c, "ERR The specified keys must contain string values", "LCS x1 l");
    ERR(c, "ERR The specified keys must contain string values", "LCS l x1 bogus");
    ERR(c, "ERR If you want both the length and indexes, please just use IDX.", "LCS x1 x2 LEN IDX");
    ERR(c, "ERR syntax error", "LCS x1 x2 bogus");
    ERR(c, "ERR syntax error", "LCS x1 x2 MINMATCHLEN");
    ERR(c, "ERR value is not an integer or out of range", "LCS x1 x2 MINMATCHLEN x");
    ERR(c, "ERR wrong number of arguments for 'lcs' command", "LCS x1");
}

/* IDX in RESP2 (a flat map) and RESP3 (a map), byte for byte. */
static void test_lcs_idx(void **state) {
    struct raw *r = raw_connect(&FIX(state)->srv);
    RAW(r, "+OK\r\n", "SET x1 ohmytext");
    RAW(r, "+OK\r\n", "SET x2 mynewtext");
    RAW(r, "*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n"
           "$3\r\nlen\r\n:6\r\n", "LCS x1 x2 IDX");
    RAW(r, "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n",
        "LCS x1 x2 IDX MINMATCHLEN 4 WITHMATCHLEN");
    RAW(r, "*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n", "LCS x1 nokey IDX");
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));
    RAW(r, "%2\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n"
           "$3\r\nlen\r\n:6\r\n", "LCS x1 x2 IDX WITHMATCHLEN");
    raw_close(r);
}

/* The table of (len1+1) * (len2+1) lengths may not exceed proto-max-bulk-len. */
static void test_lcs_limit(void **state) {
    redisContext *c = FIX(state)->c;
    char big[601];
    memset(big, 'x', 600);
    big[600] = '\0';
    OK(c, "SET big %s", big);
    OK(c, "CONFIG SET proto-max-bulk-len 1048576");
    ERR(c, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len", "LCS big big");
    OK(c, "CONFIG SET proto-max-bulk-len 536870912");
    INT(c, 600, "LCS big big LEN");
}

static void test_lcs_shards(void **state) {
    redisContext *c = FIX(state)->c;
    if (h_key_slot(KA, strlen(KA)) % 2 == h_key_slot(KB, strlen(KB)) % 2)
        h_fail("test keys %s and %s hash to the same parity", KA, KB);
    OK(c, "SET %s ohmytext", KA);
    OK(c, "SET %s mynewtext", KB);
    BULK(c, "mytext", "LCS %s %s", KA, KB);
    INT(c, 6, "LCS %s %s LEN", KB, KA);
    expect_bulks(cmd(c, "COMMAND GETKEYS LCS %s %s IDX", KA, KB), 2, KA, KB);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_lcs, h_flushall),
        cmocka_unit_test_setup(test_lcs_idx, h_flushall),
        cmocka_unit_test_setup(test_lcs_limit, h_flushall),
        cmocka_unit_test_setup(test_lcs_shards, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("lcs", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
