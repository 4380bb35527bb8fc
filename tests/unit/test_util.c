/*
 * test_util.c -- number parsing/formatting and glob matching with Redis's
 * exact rules. Float expectations marked "redis" were taken from
 * redis-server 7.0 (INCRBYFLOAT, ZSCORE replies).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <math.h>
#include <time.h>
#include <cmocka.h>

#include "ringkv/util.h"

static bool ll_ok(const char *s, long long *v) { return str_to_ll(s, strlen(s), v); }

static void test_str_to_ll(void **state) {
    (void)state;
    long long v;
    assert_true(ll_ok("0", &v));
    assert_int_equal(v, 0);
    assert_true(ll_ok("1", &v));
    assert_int_equal(v, 1);
    assert_true(ll_ok("-1", &v));
    assert_int_equal(v, -1);
    assert_true(ll_ok("9223372036854775807", &v));
    assert_true(v == LLONG_MAX);
    assert_true(ll_ok("-9223372036854775808", &v));
    assert_true(v == LLONG_MIN);
    assert_true(ll_ok("1234567890", &v));
    assert_int_equal(v, 1234567890);

    const char *bad[] = {
        "", "+1", " 1", "1 ", "01", "00", "-0", "-", "-01", "1a", "a1", "0x10",
        "9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "99999999999999999999", "123456789012345678901", "1.0", "1e3",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (ll_ok(bad[i], &v)) fail_msg("accepted '%s'", bad[i]);
    }
    /* Length-delimited: the bytes after len do not count, a NUL inside does. */
    assert_true(str_to_ll("123", 2, &v));
    assert_int_equal(v, 12);
    assert_false(str_to_ll("1\0", 2, &v));
    assert_true(str_to_ll("5", 1, NULL));
}

static void test_str_to_ull(void **state) {
    (void)state;
    unsigned long long v;
    assert_true(str_to_ull("18446744073709551615", 20, &v));
    assert_true(v == ULLONG_MAX);
    assert_true(str_to_ull("0", 1, &v));
    assert_true(v == 0);
    assert_true(str_to_ull("42", 2, &v));
    assert_true(v == 42);
    /* Redis's string2ull() falls back to strtoull() rules. */
    assert_true(str_to_ull("01", 2, &v));
    assert_true(v == 1);
    assert_true(str_to_ull(" 7", 2, &v));
    assert_true(v == 7);
    assert_true(str_to_ull("+7", 2, &v));
    assert_true(v == 7);
    assert_false(str_to_ull("18446744073709551616", 20, &v));
    assert_false(str_to_ull("-1", 2, &v));
    assert_false(str_to_ull("", 0, &v));
    assert_false(str_to_ull("1 ", 2, &v));
    assert_false(str_to_ull("x", 1, &v));
    assert_false(str_to_ull(" ", 1, &v));
}

static void test_str_to_ld(void **state) {
    (void)state;
    long double v;
    assert_true(str_to_ld("10.5", 4, &v));
    assert_true(v == 10.5L);
    assert_true(str_to_ld("-3", 2, &v));
    assert_true(v == -3.0L);
    assert_true(str_to_ld("5.0e3", 5, &v));
    assert_true(v == 5000.0L);
    assert_true(str_to_ld("0x10", 4, &v));       /* redis: INCRBYFLOAT by 0x10 works */
    assert_true(v == 16.0L);
    assert_true(str_to_ld("inf", 3, &v));        /* parses; INCRBYFLOAT rejects it later */
    assert_true(isinf(v));
    assert_true(str_to_ld("1.5", 2, &v));        /* only "1." is looked at */
    assert_true(v == 1.0L);

    assert_false(str_to_ld("", 0, &v));
    assert_false(str_to_ld(" 1", 2, &v));
    assert_false(str_to_ld("1 ", 2, &v));
    assert_false(str_to_ld("nan", 3, &v));
    assert_false(str_to_ld("-nan", 4, &v));
    assert_false(str_to_ld("1e99999", 7, &v));
    assert_false(str_to_ld("1e-99999", 8, &v));
    assert_false(str_to_ld("abc", 3, &v));
    assert_false(str_to_ld("1\0", 2, &v));

    /* Length limit of Redis's MAX_LONG_DOUBLE_CHARS buffer. */
    char *big = malloc(6000);
    memset(big, '0', 6000);
    big[5118] = '1';
    assert_true(str_to_ld(big, 5119, &v));
    assert_true(v == 1.0L);
    assert_false(str_to_ld(big, 5120, &v));
    free(big);
}

static void test_str_to_d(void **state) {
    (void)state;
    double v;
    assert_true(str_to_d("3.0", 3, &v));
    assert_true(v == 3.0);
    assert_true(str_to_d("-inf", 4, &v));
    assert_true(isinf(v) && v < 0);
    assert_true(str_to_d("4.9e-324", 8, &v));    /* denormal: ERANGE but not zero */
    assert_true(v > 0);
    assert_false(str_to_d("1e400", 5, &v));
    assert_false(str_to_d("1e-400", 6, &v));
    assert_false(str_to_d(" 1", 2, &v));
    assert_false(str_to_d("1x", 2, &v));
    assert_false(str_to_d("nan", 3, &v));
    assert_false(str_to_d("", 0, &v));
    /* No length limit: long inputs take the heap path. */
    char big[400];
    memset(big, '0', sizeof(big));
    big[0] = '1';
    big[1] = '.';
    big[sizeof(big) - 1] = '5';
    assert_true(str_to_d(big, sizeof(big), &v));
    assert_true(v == 1.0);
    big[sizeof(big) - 1] = 'x';
    assert_false(str_to_d(big, sizeof(big), &v));
}

static void test_ll_to_str(void **state) {
    (void)state;
    char buf[32], ref[32];
    long long vals[] = { 0, 1, -1, 9, 10, 99, 100, 101, 999, 1000, 12345, -12345,
                         4294967296LL, LLONG_MAX, LLONG_MIN, LLONG_MIN + 1 };
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        int n = ll_to_str(buf, sizeof(buf), vals[i]);
        int m = snprintf(ref, sizeof(ref), "%lld", vals[i]);
        assert_int_equal(n, m);
        assert_string_equal(buf, ref);
    }
    srand(42);
    for (int i = 0; i < 100000; i++) {
        long long v = (long long)(((unsigned long long)rand() << 33) ^ ((unsigned long long)rand() << 11) ^ (unsigned long long)rand());
        v >>= rand() % 63;
        if (rand() & 1) v = -v;
        int n = ll_to_str(buf, sizeof(buf), v);
        int m = snprintf(ref, sizeof(ref), "%lld", v);
        assert_int_equal(n, m);
        assert_string_equal(buf, ref);
    }
    assert_int_equal(ull_to_str(buf, sizeof(buf), ULLONG_MAX), 20);
    assert_string_equal(buf, "18446744073709551615");
    /* Too small a buffer (room for the NUL is required) gives 0. */
    assert_int_equal(ll_to_str(buf, 3, 123), 0);
    assert_int_equal(ll_to_str(buf, 4, 123), 3);
    assert_int_equal(ll_to_str(buf, 4, -123), 0);
    assert_int_equal(ll_to_str(buf, 5, -123), 4);
    assert_string_equal(buf, "-123");
}

static void check_human(long double v, const char *expect) {
    char buf[5200];
    int n = ld_to_str_human(buf, sizeof(buf), v);
    assert_int_equal(n, (int)strlen(expect));
    assert_string_equal(buf, expect);
}

static long double ld(const char *s) {
    long double v;
    assert_true(str_to_ld(s, strlen(s), &v));
    return v;
}

static void test_ld_to_str_human(void **state) {
    (void)state;
    /* redis: SET a 10.5; INCRBYFLOAT a 0.1 */
    check_human(ld("10.5") + ld("0.1"), "10.6");
    check_human(ld("5.0e3") + ld("0"), "5000");
    check_human(ld("0.1") + ld("0.2"), "0.3");
    check_human(ld("1") + ld("1e-17"), "1.00000000000000001");
    check_human(ld("0") + ld("1e-20"), "0");
    check_human(-0.0L, "0");
    check_human(ld("0x10"), "16");
    check_human(-1.5L, "-1.5");
    check_human(100.0L, "100");
    check_human(HUGE_VALL, "inf");
    check_human(-HUGE_VALL, "-inf");
    /* redis: SET c 3e300; INCRBYFLOAT c 0 -- fixed notation, long double noise */
    check_human(ld("3e300") + ld("0"),
        "3000000000000000000099600219722944332724758478237347857102439436497947059859625417585708"
        "6211516618613730612891321004588138532934786220352139685165767548682878752055563934213224"
        "6931188839154167702653769365230041083726599109454374965414587246118984002648238072798894"
        "3772161134673231823389018093229441024");
    /* redis: INCRBYFLOAT h 1.7976931348623157e308 twice (long double range) */
    check_human(ld("1.7976931348623157e308") + ld("1.7976931348623157e308"),
        "3595386269724631399918420935482088680967728938886583569706288415303532570462487927094037"
        "3721677417112885758683885104137861741672690227211071579455605295523414699795537257678967"
        "1236326588091188869859074894581254961338834769297758245552436667197907705664206565009503"
        "223382416235440319971852753604933726679072768");
    char small[4];
    assert_int_equal(ld_to_str_human(small, sizeof(small), 12345.0L), 0);
}

static void check_d(double v, const char *expect) {
    char buf[64];
    int n = d_to_str(buf, sizeof(buf), v);
    assert_int_equal(n, (int)strlen(expect));
    assert_memory_equal(buf, expect, (size_t)n);
}

static void test_d_to_str(void **state) {
    (void)state;
    /* redis: ZSCORE replies */
    check_d(0.1, "0.10000000000000001");
    check_d(5, "5");
    check_d(1e17, "1e+17");
    check_d(1e-7, "9.9999999999999995e-08");
    check_d(123456789012345678.0, "1.2345678901234568e+17");
    check_d(HUGE_VAL, "inf");
    check_d(-HUGE_VAL, "-inf");
    check_d(-0.0, "-0");
    check_d(0.0, "0");
    check_d(-3, "-3");
    check_d(1.5, "1.5");
    check_d(99999999999999984.0, "99999999999999984");

    /* The integer shortcut must agree with %.17g everywhere. */
    char buf[64], ref[64];
    srand(7);
    for (int i = 0; i < 200000; i++) {
        double v;
        switch (i % 4) {
        case 0: v = (double)(rand() % 2000000) - 1000000; break;
        case 1: v = ldexp((double)rand(), rand() % 80 - 20); break;
        case 2: v = -ldexp((double)rand(), rand() % 60); break;
        default: v = (double)rand() / (rand() + 1.0); break;
        }
        int n = d_to_str(buf, sizeof(buf), v);
        int m = snprintf(ref, sizeof(ref), "%.17g", v);
        assert_int_equal(n, m);
        assert_memory_equal(buf, ref, (size_t)n);
    }
}

static bool m(const char *pat, const char *str) {
    return string_match(pat, strlen(pat), str, strlen(str), false);
}
static bool mi(const char *pat, const char *str) {
    return string_match(pat, strlen(pat), str, strlen(str), true);
}

static void test_string_match(void **state) {
    (void)state;
    assert_true(m("*", "anything"));
    assert_false(m("*", ""));              /* as Redis: the loop never starts */
    assert_true(m("", ""));
    assert_false(m("", "a"));
    assert_true(m("a*", "a"));
    assert_true(m("a**", "abc"));
    assert_true(m("*c", "abc"));
    assert_false(m("*c", "abd"));
    assert_true(m("h?llo", "hello"));
    assert_true(m("h?llo", "hallo"));
    assert_false(m("h?llo", "hllo"));
    assert_true(m("h*llo", "hllo"));
    assert_true(m("h*llo", "heeeello"));
    assert_true(m("h[ae]llo", "hello"));
    assert_true(m("h[ae]llo", "hallo"));
    assert_false(m("h[ae]llo", "hillo"));
    assert_true(m("h[^e]llo", "hallo"));
    assert_false(m("h[^e]llo", "hello"));
    assert_true(m("h[a-b]llo", "hbllo"));
    assert_false(m("h[a-b]llo", "hcllo"));
    assert_true(m("h[b-a]llo", "hallo"));  /* reversed range */
    assert_true(m("h\\*llo", "h*llo"));
    assert_false(m("h\\*llo", "hello"));
    assert_true(m("[\\]]", "]"));
    assert_true(m("[\\^]", "^"));
    assert_true(m("[abc", "a"));           /* unterminated class */
    assert_false(m("[abc", "ab"));
    assert_true(m("a\\", "a\\"));          /* trailing backslash is literal */
    assert_true(m("user:*:name", "user:1000:name"));
    assert_false(m("user:*:name", "user:1000:mail"));
    assert_true(m("*[0-9]", "abc7"));
    assert_true(m("[*]", "*"));
    assert_false(m("[*]", "a"));
    assert_true(m("?", "\xff"));
    assert_true(m("[\x80-\xff]", "\x90"));  /* signed char ranges, as on x86 Redis */

    assert_false(m("HELLO", "hello"));
    assert_true(mi("HELLO", "hello"));
    assert_true(mi("h[A-Z]llo", "hEllo"));
    assert_true(mi("h[E]llo", "hello"));
    assert_false(mi("h[^E]llo", "hello"));
    assert_true(mi("H\\ELLO", "hello"));

    /* Binary: a NUL in the subject is just a byte. */
    assert_true(string_match("a?b", 3, "a\0b", 3, false));

    /* Pathological pattern must not explode (Redis's skipLongerMatches). */
    char s[200];
    memset(s, 'a', sizeof(s) - 1);
    s[sizeof(s) - 1] = '\0';
    clock_t t0 = clock();
    assert_false(m("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", s));
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
}

static void test_clocks(void **state) {
    (void)state;
    uint64_t ms = mstime_now(), us = ustime_now();
    uint64_t now = (uint64_t)time(NULL);
    assert_true(ms / 1000 >= now - 1 && ms / 1000 <= now + 1);
    assert_true(us / 1000000 >= now - 1 && us / 1000000 <= now + 1);
    uint64_t a = monotonic_us();
    struct timespec ts = { 0, 2000000 };
    nanosleep(&ts, NULL);
    uint64_t b = monotonic_us();
    assert_true(b >= a + 1500);
    assert_true(b - a < 1000000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_str_to_ll),
        cmocka_unit_test(test_str_to_ull),
        cmocka_unit_test(test_str_to_ld),
        cmocka_unit_test(test_str_to_d),
        cmocka_unit_test(test_ll_to_str),
        cmocka_unit_test(test_ld_to_str_human),
        cmocka_unit_test(test_d_to_str),
        cmocka_unit_test(test_string_match),
        cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
