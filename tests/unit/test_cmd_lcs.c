/*
 * LCS (src/cmd/cmd_lcs.c), called directly with a hand-built cmd_ctx:
 * replies byte for byte as redis-server 7.0.15 sends them (RESP2 and
 * RESP3), the errors and their order, the proto-max-bulk-len bound on the
 * table, keys on two shards; and on random strings, that the answer is a
 * common subsequence of the right length and that IDX's runs match.
 */
#include "cmd_fixture.h"

void cmd_lcs(struct cmd_ctx *c);

#define L(want, ...) CHECK(want, cmd_lcs, "lcs", __VA_ARGS__)

static void test_lcs_replies(void **state) {
    (void)state;
    CHECK("+OK\r\n", cmd_set, "set", "x1", "ohmytext");
    CHECK("+OK\r\n", cmd_set, "set", "x2", "mynewtext");
    L("$6\r\nmytext\r\n", "x1", "x2");
    L(":6\r\n", "x1", "x2", "LEN");
    L("*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n"
      "$3\r\nlen\r\n:6\r\n", "x1", "x2", "idx");
    L("*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n",
      "x1", "x2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN");
    L("*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n"
      "$3\r\nlen\r\n:6\r\n", "x1", "x2", "idx", "withmatchlen", "minmatchlen", "-5");
    L(":6\r\n", "x1", "x2", "len", "minmatchlen", "100", "withmatchlen");
    L("$0\r\n\r\n", "nokey", "nokey2");
    L("$0\r\n\r\n", "x1", "nokey");
    L("*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n", "x1", "nokey", "idx");
    L("$8\r\nohmytext\r\n", "x1", "x1");
    c.r.resp = 3;
    L("%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n$3\r\nlen\r\n:6\r\n",
      "x1", "x2", "idx", "minmatchlen", "3");
    c.r.resp = 2;
    assert_int_equal(fx_shards[0].stats.keyspace_hits + fx_shards[0].stats.keyspace_misses, 2 * 11);
}

static void test_lcs_errors(void **state) {
    (void)state;
    CHECK("+OK\r\n", cmd_set, "set", "a", "abc");
    add_toy_list("list", 1);
    L("-ERR The specified keys must contain string values\r\n", "a", "list");
    L("-ERR The specified keys must contain string values\r\n", "list", "a", "bogus");   /* before the options */
    L("-ERR If you want both the length and indexes, please just use IDX.\r\n", "a", "a", "len", "idx");
    L("-ERR syntax error\r\n", "a", "a", "bogus");
    L("-ERR syntax error\r\n", "a", "a", "minmatchlen");
    L("-ERR syntax error\r\n", "a", "a", "bogus", "len", "idx");
    L("-ERR value is not an integer or out of range\r\n", "a", "a", "minmatchlen", "x");
    /* the table of (alen+1) * (blen+1) 32-bit lengths may not exceed proto-max-bulk-len */
    static char big[600];
    memset(big, 'x', sizeof big - 1);
    CHECK("+OK\r\n", cmd_set, "set", "big", big);
    rk_config_proto_max_bulk_len = 1024 * 1024;
    L("-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n", "big", "big");
    CHECK("+OK\r\n", cmd_set, "set", "two", "axxa");
    L(":2\r\n", "big", "two", "len");
}

/* The LCS length by the textbook recurrence. */
static size_t model_len(const char *a, size_t n, const char *b, size_t m) {
    static unsigned t[41][41];
    for (size_t i = 0; i <= n; i++)
        for (size_t j = 0; j <= m; j++)
            t[i][j] = !i || !j ? 0 : a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1
                                   : t[i - 1][j] > t[i][j - 1] ? t[i - 1][j] : t[i][j - 1];
    return t[n][m];
}

static bool is_subsequence(const char *s, size_t n, const char *of, size_t m) {
    size_t i = 0;
    for (size_t j = 0; j < m && i < n; j++)
        if (s[i] == of[j]) i++;
    return i == n;
}

/* Reads an integer reply element at *p ("*2\r\n:4\r\n..."), advancing. */
static long long next_int(const char **p) {
    while (**p != ':') (*p)++;
    long long v = strtoll(*p + 1, (char **)p, 10);
    return v;
}

static void test_lcs_random(void **state) {
    (void)state;
    uint64_t x = 88172645463325252ULL;
    for (int round = 0; round < 500; round++) {
        char a[41], b[41];
        size_t n, m;
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        n = x % 41;
        m = (x >> 8) % 41;
        for (size_t i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; a[i] = (char)('a' + x % 3); }
        for (size_t i = 0; i < m; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; b[i] = (char)('a' + x % 3); }
        a[n] = b[m] = '\0';
        CHECK("+OK\r\n", cmd_set, "set", "a", a);
        CHECK("+OK\r\n", cmd_set, "set", "b", b);
        size_t want = model_len(a, n, b, m);

        RUN(cmd_lcs, "lcs", "a", "b");
        char *nl = memchr(out.buf, '\n', out.len);
        assert_int_equal(strtoul(out.buf + 1, NULL, 10), want);
        assert_true(is_subsequence(nl + 1, want, a, n) && is_subsequence(nl + 1, want, b, m));

        /* IDX: runs from the end backwards, each a real match; they cover
         * the whole subsequence when no run is dropped by MINMATCHLEN */
        RUN(cmd_lcs, "lcs", "a", "b", "idx", "withmatchlen");
        const char *p = strstr(out.buf, "matches\r\n*") + 10;
        long long runs = strtoll(p, NULL, 10), covered = 0, prev_a = (long long)n, prev_b = (long long)m;
        for (long long r = 0; r < runs; r++) {
            long long a0 = next_int(&p), a1 = next_int(&p), b0 = next_int(&p), b1 = next_int(&p), len = next_int(&p);
            assert_true(a0 <= a1 && a1 < prev_a && b1 < prev_b && len == a1 - a0 + 1 && b1 - b0 == a1 - a0);
            assert_memory_equal(a + a0, b + b0, (size_t)len);
            covered += len;
            prev_a = a0;
            prev_b = b0;
        }
        assert_int_equal(covered, want);
        assert_int_equal(next_int(&p), want);
    }
}

/* Keys on both shards: the dispatcher runs LCS as a transaction. */
static void test_lcs_multi_shard(void **state) {
    (void)state;
    const char *k[2] = { NULL, NULL };
    static char names[64][16];
    for (int i = 0; i < 64 && (!k[0] || !k[1]); i++) {
        snprintf(names[i], sizeof names[i], "k%d", i);
        unsigned s = shard_of_key(names[i], strlen(names[i]));
        if (!k[s]) k[s] = names[i];
    }
    c.multi = true;
    CHECK("+OK\r\n", cmd_set, "set", k[0], "ohmytext");
    CHECK("+OK\r\n", cmd_set, "set", k[1], "mynewtext");
    L("$6\r\nmytext\r\n", k[0], k[1]);
    L(":6\r\n", k[1], k[0], "len");
    assert_int_equal(table_size(&fx_shards[0].dbs[0].table), 1);
    assert_int_equal(table_size(&fx_shards[1].dbs[0].table), 1);
    c.multi = false;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lcs_replies, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lcs_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lcs_random, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lcs_multi_shard, fx_setup2, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
