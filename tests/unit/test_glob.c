/*
 * Glob matching (string_match, used by KEYS, SCAN MATCH, PSUBSCRIBE,
 * PUBSUB CHANNELS) against a reference: Redis's rules written the plain
 * recursive way, without the early give-up that bounds string_match's
 * work. Random patterns over a small alphabet that is mostly special
 * characters (*, ?, [, ], ^, -, \) against random strings, both cases
 * of nocase; and the nesting bound on patterns of many stars.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ctype.h>
#include <cmocka.h>

#include "ringkv/util.h"

/* The reference: NUL-terminated pattern and string, Redis's order of tests. */
static int ref_match(const char *p, int plen, const char *s, int slen, int nocase) {
    while (plen && slen) {
        switch (p[0]) {
        case '*':
            while (plen > 1 && p[1] == '*') { p++; plen--; }
            if (plen == 1) return 1;
            while (slen) {
                if (ref_match(p + 1, plen - 1, s, slen, nocase)) return 1;
                s++;
                slen--;
            }
            return 0;
        case '?':
            s++;
            slen--;
            break;
        case '[': {
            int neg, match = 0;
            p++;
            plen--;
            neg = p[0] == '^';
            if (neg) { p++; plen--; }
            for (;;) {
                if (p[0] == '\\' && plen >= 2) {
                    p++;
                    plen--;
                    if (p[0] == s[0]) match = 1;
                } else if (p[0] == ']') {
                    break;
                } else if (plen == 0) {
                    p--;
                    plen++;
                    break;
                } else if (plen >= 3 && p[1] == '-') {
                    int start = p[0], end = p[2], c = s[0];
                    if (start > end) { int t = start; start = end; end = t; }
                    if (nocase) { start = tolower(start); end = tolower(end); c = tolower(c); }
                    p += 2;
                    plen -= 2;
                    if (c >= start && c <= end) match = 1;
                } else if (nocase ? tolower(p[0]) == tolower(s[0]) : p[0] == s[0]) {
                    match = 1;
                }
                p++;
                plen--;
            }
            if (neg) match = !match;
            if (!match) return 0;
            s++;
            slen--;
            break;
        }
        case '\\':
            if (plen >= 2) { p++; plen--; }
            /* fall through */
        default:
            if (nocase ? tolower(p[0]) != tolower(s[0]) : p[0] != s[0]) return 0;
            s++;
            slen--;
            break;
        }
        p++;
        plen--;
        if (slen == 0) {
            while (plen && *p == '*') { p++; plen--; }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

static uint64_t rng = 88172645463325252ull;
static unsigned next(unsigned n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void random_text(char *buf, int len, const char *alphabet) {
    size_t n = strlen(alphabet);
    for (int i = 0; i < len; i++) buf[i] = alphabet[next((unsigned)n)];
    buf[len] = '\0';
}

static void test_against_reference(void **state) {
    (void)state;
    char pat[16], str[16];
    long matches = 0;
    for (int i = 0; i < 400000; i++) {
        random_text(pat, (int)next(10), "ab*?[]^-\\A");
        random_text(str, (int)next(9), "abAB-^]\\");
        int nocase = (int)next(2);
        bool want = ref_match(pat, (int)strlen(pat), str, (int)strlen(str), nocase);
        bool got = string_match(pat, strlen(pat), str, strlen(str), nocase);
        if (want != got) fail_msg("pattern \"%s\" string \"%s\" nocase %d: reference %d, string_match %d", pat, str,
                                  nocase, want, got);
        matches += want;
    }
    /* the generator must produce both outcomes in quantity */
    assert_true(matches > 10000);
    assert_true(matches < 390000);
}

static void test_nesting_bound(void **state) {
    (void)state;
    static char pat[4001], str[3001];
    for (int i = 0; i < 2000; i++) { pat[2 * i] = 'a'; pat[2 * i + 1] = '*'; }
    pat[4000] = '\0';
    memset(str, 'a', 3000);
    /* 2000 nested stars: over the bound, matches nothing instead of
     * recursing that deep */
    assert_false(string_match(pat, 4000, str, 3000, false));
    /* under the bound it matches */
    assert_true(string_match(pat, 1000, str, 3000, false));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_nesting_bound),
    };
    return cmocka_run_group_tests_name("glob", tests, NULL, NULL);
}
