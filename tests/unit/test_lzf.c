/*
 * Unit tests for LZF (lzf.h): hand-assembled streams of each item kind
 * decode to what the format says; round trips of random, repetitive and
 * far-apart data at every size that matters (literal runs of 32, matches
 * of 264, offsets of 8192, node-sized and large inputs) give back the
 * input; a too-small output buffer is refused on both sides; and malformed
 * or random input never decodes out of bounds (the sanitizer build checks
 * the "never").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/lzf.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

/* Compress, check the bound, decompress, compare. */
static size_t round_trip(const unsigned char *in, size_t n) {
    size_t room = n + n / 32 + 16;               /* worst case: a control byte per 32 */
    unsigned char *c = malloc(room), *d = malloc(n + 1);
    size_t cl = lzf_compress(in, n, c, room);
    assert_true(cl > 0 && cl <= room);
    assert_int_equal(lzf_decompress(c, cl, d, n), n);
    assert_memory_equal(d, in, n);
    /* one byte short of the output is refused */
    assert_int_equal(lzf_decompress(c, cl, d, n - 1), 0);
    free(c);
    free(d);
    return cl;
}

static void test_hand_assembled(void **state) {
    (void)state;
    unsigned char out[64];
    /* a literal run */
    assert_int_equal(lzf_decompress("\x02" "abc", 4, out, sizeof out), 3);
    assert_memory_equal(out, "abc", 3);
    /* "ab", then 4 bytes from 2 back (overlapping): ababab */
    assert_int_equal(lzf_decompress("\x01" "ab" "\x40\x01", 5, out, sizeof out), 6);
    assert_memory_equal(out, "ababab", 6);
    /* "a", then a long reference: 7 + extra 3 + 2 = 12 bytes from 1 back */
    assert_int_equal(lzf_decompress("\x00" "a" "\xe0\x03\x00", 5, out, sizeof out), 13);
    assert_memory_equal(out, "aaaaaaaaaaaaa", 13);
    /* the high offset bits live in the control byte: 3 bytes from 260 back */
    unsigned char far[300 + 8];
    far[0] = 31;
    for (int i = 0; i < 32; i++) far[1 + i] = (unsigned char)i;
    size_t at = 33, lit = 32;
    while (lit < 260) {                           /* more literals up to 260 bytes */
        size_t run = 260 - lit < 32 ? 260 - lit : 32;
        far[at++] = (unsigned char)(run - 1);
        for (size_t i = 0; i < run; i++) far[at++] = (unsigned char)(lit + i);
        lit += run;
    }
    far[at++] = 0x20 | (259 >> 8);                /* length 3, offset 259 */
    far[at++] = 259 & 0xff;
    unsigned char big[300];
    assert_int_equal(lzf_decompress(far, at, big, sizeof big), 263);
    assert_memory_equal(big + 260, big, 3);
}

static void test_sizes_and_limits(void **state) {
    (void)state;
    static unsigned char in[70000];
    /* literal-run and match-length edges */
    static const size_t sizes[] = { 1, 2, 3, 4, 31, 32, 33, 64, 65, 263, 264, 265, 266, 529, 8191, 8192, 8193, 16385 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        memset(in, 'z', n);
        size_t cl = round_trip(in, n);
        if (n >= 100) assert_true(cl < n / 20);  /* one byte repeated */
        for (size_t i = 0; i < n; i++) in[i] = (unsigned char)rnd();
        round_trip(in, n);
    }
    /* a block repeated exactly 8192 and 8193 bytes later */
    for (size_t gap = 8190; gap <= 8194; gap++) {
        for (size_t i = 0; i < gap; i++) in[i] = (unsigned char)rnd();
        memcpy(in + gap, in, 500);
        size_t cl = round_trip(in, gap + 500);
        if (gap <= 8192) assert_true(cl < gap + gap / 32 + 100);
    }
    /* nothing to compress, or no room to put it */
    unsigned char out[64];
    assert_int_equal(lzf_compress(in, 0, out, sizeof out), 0);
    for (size_t i = 0; i < 64; i++) in[i] = (unsigned char)rnd();
    assert_int_equal(lzf_compress(in, 64, out, 60), 0);
    assert_int_equal(lzf_compress(in, 64, out, 32), 0);
}

/* Data like list nodes: repeated words, numbers, some noise. */
static void fill_like_nodes(unsigned char *b, size_t n, int kind) {
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: b[i] = (unsigned char)rnd(); break;
        case 1: b[i] = (unsigned char)('a' + rnd() % 3); break;
        case 2: b[i] = (i > 40 && rnd() % 5) ? b[i - 1 - rnd() % 40] : (unsigned char)rnd(); break;
        default: b[i] = (i > 9000 && rnd() % 8) ? b[i - 8000 - rnd() % 300] : (unsigned char)('0' + rnd() % 10); break;
        }
    }
}

static void test_random_round_trips(void **state) {
    (void)state;
    static unsigned char in[70000];
    for (int t = 0; t < 3000; t++) {
        size_t n = 1 + rnd() % (t % 50 == 0 ? sizeof in : 4000);
        int kind = (int)(rnd() % 4);
        fill_like_nodes(in, n, kind);
        size_t cl = round_trip(in, n);
        if (kind == 1 && n > 1000) assert_true(cl < n * 3 / 4);
    }
}

static void test_malformed_input(void **state) {
    (void)state;
    unsigned char out[256];
    /* a reference before the start */
    assert_int_equal(lzf_decompress("\x20\x00", 2, out, sizeof out), 0);
    assert_int_equal(lzf_decompress("\x00" "a" "\x20\x01", 4, out, sizeof out), 0);
    /* truncated: a literal run, a reference, a long reference */
    assert_int_equal(lzf_decompress("\x05" "ab", 3, out, sizeof out), 0);
    assert_int_equal(lzf_decompress("\x00" "a" "\x20", 3, out, sizeof out), 0);
    assert_int_equal(lzf_decompress("\x00" "a" "\xe0", 3, out, sizeof out), 0);
    assert_int_equal(lzf_decompress("\x00" "a" "\xe0\x05", 4, out, sizeof out), 0);
    /* no room */
    assert_int_equal(lzf_decompress("\x02" "abc", 4, out, 2), 0);
    assert_int_equal(lzf_decompress("\x00" "a" "\xe0\x03\x00", 5, out, 12), 0);
    /* random input decodes within bounds or fails */
    unsigned char in[512], small[600];
    for (int t = 0; t < 20000; t++) {
        size_t n = rnd() % sizeof in, room = rnd() % sizeof small;
        for (size_t i = 0; i < n; i++) in[i] = (unsigned char)rnd();
        unsigned char *dst = malloc(room ? room : 1);
        assert_true(lzf_decompress(in, n, dst, room) <= room);
        free(dst);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_assembled),
        cmocka_unit_test(test_sizes_and_limits),
        cmocka_unit_test(test_random_round_trips),
        cmocka_unit_test(test_malformed_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
