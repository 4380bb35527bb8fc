/*
 * Unit tests for CRC-64 (crc64.h) and the RDB length/string/payload codec
 * (rdb_codec.h): Redis's CRC test vector and a bit-at-a-time reference at
 * every length and alignment; lengths round-trip at each encoding's edges;
 * strings that are canonical int8/16/32 take the integer encodings and
 * everything else (non-canonical numbers included) stays raw; long
 * repetitive strings are LZF-compressed when asked; every truncation and a
 * set of corruptions are refused with the cursor and output untouched; and
 * DUMP payloads taken from a real Redis 7.0.15 verify, decode, and (all but
 * the LZF one) are reproduced byte for byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/crc64.h"
#include "ringkv/rdb_codec.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

/* `redis-cli --no-raw dump k` against redis-server 7.0.15 (Debian). Each is
 * type byte 0 (string), the value, version 10, CRC. */
static const unsigned char redis_hello[] = {   /* SET k hello */
    0x00, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x0a, 0x00, 0x63, 0x72, 0xdf,
    0x76, 0x65, 0x34, 0x20, 0x0a,
};
static const unsigned char redis_12[] = {      /* SET n 12 */
    0x00, 0xc0, 0x0c, 0x0a, 0x00, 0x3c, 0x2a, 0xf8, 0x51, 0x5c, 0x04, 0xbc,
    0xd5,
};
static const unsigned char redis_empty[] = {   /* SET e "" */
    0x00, 0x00, 0x0a, 0x00, 0x5d, 0x9b, 0x5c, 0x40, 0x0f, 0x7f, 0xa2, 0xda,
};
static const unsigned char redis_int32_min[] = {   /* SET i -2147483648 */
    0x00, 0xc2, 0x00, 0x00, 0x00, 0x80, 0x0a, 0x00, 0xc7, 0x4f, 0x87, 0x3e,
    0x33, 0x55, 0x81, 0x87,
};
static const unsigned char redis_lzf[] = {     /* SET b <"abcdefghij" x 100> */
    0x00, 0xc3, 0x1b, 0x43, 0xe8, 0x0a, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
    0x67, 0x68, 0x69, 0x6a, 0x61, 0xe0, 0xff, 0x09, 0xe1, 0xff, 0x0d, 0xe2,
    0xff, 0x11, 0xe2, 0xba, 0x11, 0x01, 0x69, 0x6a, 0x0a, 0x00, 0x4b, 0x39,
    0xd2, 0x1a, 0x59, 0x1e, 0xd8, 0x41,
};

static char *abcdefghij_x100(void) {
    char *s = malloc(1000);
    for (int i = 0; i < 1000; i++) s[i] = (char)('a' + i % 10);
    return s;
}

/* ------------------------------------------------------------------------ */
/* CRC-64                                                                    */

/* The definition, one bit at a time, to hold the tables to. */
static uint64_t crc64_bitwise(uint64_t crc, const unsigned char *p, size_t len) {
    while (len--) {
        crc ^= *p++;
        for (int i = 0; i < 8; i++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ULL : crc >> 1;
    }
    return crc;
}

static void test_crc64(void **state) {
    (void)state;
    assert_true(crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caULL);
    assert_true(crc64(0, "", 0) == 0);
    /* chaining: the CRC of a whole is that of its parts in turn */
    assert_true(crc64(crc64(0, "1234", 4), "56789", 5) == 0xe9c6d914c4b8d9caULL);

    unsigned char buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rnd();
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len + off <= sizeof buf; len++)
            assert_true(crc64(0, buf + off, len) == crc64_bitwise(0, buf + off, len));
}

/* ------------------------------------------------------------------------ */
/* Lengths                                                                   */

static void check_len(uint64_t len, size_t size) {
    struct rbuf b = {0};
    rdb_put_len(&b, len);
    assert_int_equal(b.len, size);
    const char *p = b.buf;
    uint64_t got = ~len;
    bool enc = true;
    assert_true(rdb_get_len(&p, b.buf + b.len, &got, &enc));
    assert_true(got == len);
    assert_false(enc);
    assert_ptr_equal(p, b.buf + b.len);
    /* without the encoded flag, a plain length reads the same */
    p = b.buf;
    assert_true(rdb_get_len(&p, b.buf + b.len, &got, NULL));
    assert_true(got == len);
    /* every prefix is too short */
    for (size_t n = 0; n < b.len; n++) {
        p = b.buf;
        assert_false(rdb_get_len(&p, b.buf + n, &got, &enc));
        assert_ptr_equal(p, b.buf);
    }
    rbuf_free(&b);
}

static void check_len_bytes(uint64_t len, const char *bytes, size_t n) {
    struct rbuf b = {0};
    rdb_put_len(&b, len);
    assert_int_equal(b.len, n);
    assert_memory_equal(b.buf, bytes, n);
    rbuf_free(&b);
}

static void test_lengths(void **state) {
    (void)state;
    check_len(0, 1);
    check_len(1, 1);
    check_len(63, 1);
    check_len(64, 2);
    check_len(16383, 2);
    check_len(16384, 5);
    check_len(UINT32_MAX, 5);
    check_len((uint64_t)UINT32_MAX + 1, 9);
    check_len(UINT64_MAX, 9);
    check_len_bytes(63, "\x3f", 1);
    check_len_bytes(64, "\x40\x40", 2);
    check_len_bytes(16383, "\x7f\xff", 2);
    check_len_bytes(16384, "\x80\x00\x00\x40\x00", 5);
    check_len_bytes(UINT32_MAX, "\x80\xff\xff\xff\xff", 5);
    check_len_bytes((uint64_t)UINT32_MAX + 1, "\x81\x00\x00\x00\x01\x00\x00\x00\x00", 9);

    /* 11TTTTTT: an encoding, not a length */
    const char *enc_byte = "\xc3", *p = enc_byte;
    uint64_t len;
    bool enc = false;
    assert_true(rdb_get_len(&p, enc_byte + 1, &len, &enc));
    assert_true(enc);
    assert_int_equal(len, 3);
    p = enc_byte;
    assert_false(rdb_get_len(&p, enc_byte + 1, &len, NULL));
    assert_ptr_equal(p, enc_byte);
    /* 0x82..0xBF are no length at all */
    const char *bad = "\x82\x00\x00\x00\x00\x00\x00\x00\x00";
    p = bad;
    assert_false(rdb_get_len(&p, bad + 9, &len, &enc));
    bad = "\xbf\x00\x00\x00\x00\x00\x00\x00\x00";
    p = bad;
    assert_false(rdb_get_len(&p, bad + 9, &len, &enc));
}

/* ------------------------------------------------------------------------ */
/* Strings                                                                   */

/* Writes s, checks the bytes when expected is given, reads it back, and
 * checks that every truncation is refused with nothing changed. */
static void check_string(const char *s, size_t len, bool compress, const char *expected, size_t exp_len) {
    struct rbuf b = {0}, out = {0};
    rbuf_append(&b, "#", 1);           /* writing appends */
    rdb_put_string(&b, s, len, compress);
    const char *start = b.buf + 1, *end = b.buf + b.len;
    if (expected) {
        assert_int_equal(end - start, exp_len);
        assert_memory_equal(start, expected, exp_len);
    }

    rbuf_append(&out, "@", 1);         /* reading appends */
    const char *p = start;
    assert_true(rdb_get_string(&p, end, &out));
    assert_ptr_equal(p, end);
    assert_int_equal(out.len, 1 + len);
    assert_memory_equal(out.buf + 1, s, len);

    for (const char *cut = start; cut < end; cut++) {
        out.len = 1;
        p = start;
        assert_false(rdb_get_string(&p, cut, &out));
        assert_ptr_equal(p, start);
        assert_int_equal(out.len, 1);
    }
    rbuf_free(&b);
    rbuf_free(&out);
}

#define CHECK(s, bytes) check_string(s, sizeof(s) - 1, true, bytes, sizeof(bytes) - 1)

static void test_integer_strings(void **state) {
    (void)state;
    CHECK("12", "\xc0\x0c");
    CHECK("0", "\xc0\x00");
    CHECK("-1", "\xc0\xff");
    CHECK("-128", "\xc0\x80");
    CHECK("127", "\xc0\x7f");
    CHECK("128", "\xc1\x80\x00");
    CHECK("-129", "\xc1\x7f\xff");
    CHECK("-32768", "\xc1\x00\x80");
    CHECK("32767", "\xc1\xff\x7f");
    CHECK("32768", "\xc2\x00\x80\x00\x00");
    CHECK("2147483647", "\xc2\xff\xff\xff\x7f");
    CHECK("-2147483648", "\xc2\x00\x00\x00\x80");
    /* past int32: raw */
    CHECK("2147483648", "\x0a" "2147483648");
    CHECK("-2147483649", "\x0b" "-2147483649");
    CHECK("9223372036854775807", "\x13" "9223372036854775807");
}

static void test_raw_strings(void **state) {
    (void)state;
    CHECK("", "\x00");
    CHECK("hello", "\x05" "hello");
    /* numbers that would not read back as the same bytes stay raw */
    CHECK("007", "\x03" "007");
    CHECK("+1", "\x02" "+1");
    CHECK("-0", "\x02" "-0");
    CHECK(" 1", "\x02" " 1");
    CHECK("1 ", "\x02" "1 ");
    CHECK("-", "\x01" "-");
    CHECK("1.5", "\x03" "1.5");
    /* binary bytes, and a 14-bit length */
    check_string("a\0b", 3, true, "\x03" "a\0b", 4);
    char big[300];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)rnd();
    struct rbuf exp = {0};
    rbuf_append(&exp, "\x41\x2c", 2);
    rbuf_append(&exp, big, sizeof big);
    check_string(big, sizeof big, true, exp.buf, exp.len);
    rbuf_free(&exp);
}

static void test_compressed_strings(void **state) {
    (void)state;
    char *s = abcdefghij_x100();
    struct rbuf b = {0}, out = {0};

    rdb_put_string(&b, s, 1000, true);
    assert_int_equal((unsigned char)b.buf[0], 0xc3);
    assert_true(b.len < 100);
    check_string(s, 1000, true, NULL, 0);

    /* not asked to compress: 14-bit length and the bytes */
    b.len = 0;
    rdb_put_string(&b, s, 1000, false);
    assert_int_equal(b.len, 2 + 1000);
    assert_memory_equal(b.buf, "\x43\xe8", 2);

    /* 20 bytes is below Redis's threshold, even when all alike */
    b.len = 0;
    rdb_put_string(&b, "aaaaaaaaaaaaaaaaaaaa", 20, true);
    assert_int_equal(b.len, 21);
    /* 21 alike compresses */
    b.len = 0;
    rdb_put_string(&b, "aaaaaaaaaaaaaaaaaaaaa", 21, true);
    assert_int_equal((unsigned char)b.buf[0], 0xc3);
    check_string("aaaaaaaaaaaaaaaaaaaaa", 21, true, NULL, 0);

    /* random bytes do not compress: stored raw */
    char noise[1000];
    for (size_t i = 0; i < sizeof noise; i++) noise[i] = (char)rnd();
    b.len = 0;
    rdb_put_string(&b, noise, sizeof noise, true);
    assert_int_equal(b.len, 2 + sizeof noise);
    check_string(noise, sizeof noise, true, NULL, 0);

    rbuf_free(&b);
    rbuf_free(&out);
    free(s);
}

/* An LZF item of the 1000-byte string with its lengths replaced. */
static bool lzf_with_lengths(uint64_t clen_delta, uint64_t len) {
    char *s = abcdefghij_x100();
    struct rbuf b = {0}, fake = {0}, out = {0};
    rdb_put_string(&b, s, 1000, true);
    const char *p = b.buf + 1;
    uint64_t clen, orig;
    assert_true(rdb_get_len(&p, b.buf + b.len, &clen, NULL));
    assert_true(rdb_get_len(&p, b.buf + b.len, &orig, NULL));
    assert_int_equal(orig, 1000);
    rbuf_append(&fake, "\xc3", 1);
    rdb_put_len(&fake, clen + clen_delta);
    rdb_put_len(&fake, len);
    rbuf_append(&fake, p, clen);
    const char *q = fake.buf;
    bool ok = rdb_get_string(&q, fake.buf + fake.len, &out);
    if (ok) assert_true(out.len == len);
    else assert_int_equal(out.len, 0);
    rbuf_free(&b);
    rbuf_free(&fake);
    rbuf_free(&out);
    free(s);
    return ok;
}

static void test_corrupt_strings(void **state) {
    (void)state;
    assert_true(lzf_with_lengths(0, 1000));
    /* a declared length that is not what the data decompresses to */
    assert_false(lzf_with_lengths(0, 999));
    assert_false(lzf_with_lengths(0, 1001));
    assert_false(lzf_with_lengths(0, 0));
    /* claims no stream could back */
    assert_false(lzf_with_lengths(0, 1ULL << 40));
    assert_false(lzf_with_lengths(0, UINT64_MAX));
    /* compressed length past the end */
    assert_false(lzf_with_lengths(1, 1000));
    assert_false(lzf_with_lengths(UINT64_MAX / 2, 1000));

    struct rbuf out = {0};
    static const struct { const char *bytes; size_t n; } cases[] = {
        { "\xc4\x00\x00\x00\x00", 5 },                        /* unknown encoding */
        { "\xff\x00\x00\x00\x00", 5 },
        { "\xc3\x00\x00", 3 },                                  /* empty LZF */
        { "\xc3\xc0\x05\x01\x61", 5 },                        /* an encoding as LZF length */
        { "\x82\x00\x00\x00\x00", 5 },                        /* not a length */
        { "\x81\xff\xff\xff\xff\xff\xff\xff\xff", 9 },    /* longer than the input */
    };
    for (size_t i = 0; i < RK_ARRAY_LEN(cases); i++) {
        const char *p = cases[i].bytes;
        assert_false(rdb_get_string(&p, cases[i].bytes + cases[i].n, &out));
        assert_ptr_equal(p, cases[i].bytes);
        assert_int_equal(out.len, 0);
    }

    /* random bytes: refused or read within bounds */
    char in[64];
    for (int t = 0; t < 200000; t++) {
        size_t n = rnd() % sizeof in;
        for (size_t i = 0; i < n; i++) in[i] = (char)rnd();
        if (t & 1) in[0] = (char)(0xc0 | (rnd() & 3));   /* mostly the encodings */
        const char *p = in;
        out.len = 0;
        if (rdb_get_string(&p, in + n, &out)) assert_true(p > in && p <= in + n);
        else assert_ptr_equal(p, in);
    }
    rbuf_free(&out);
}

/* ------------------------------------------------------------------------ */
/* Payloads                                                                  */

static void test_payload_round_trip(void **state) {
    (void)state;
    struct rbuf b = {0};
    rbuf_append(&b, "\x00", 1);
    rdb_put_string(&b, "value", 5, true);
    size_t body = b.len, body_len = 0;
    rdb_payload_finish(&b);
    assert_int_equal(b.len, body + RDB_PAYLOAD_TRAILER);
    assert_memory_equal(b.buf + body, "\x0a\x00", 2);
    assert_true(rdb_payload_verify(b.buf, b.len, &body_len));
    assert_int_equal(body_len, body);
    assert_true(rdb_payload_verify(b.buf, b.len, NULL));

    /* any flipped bit anywhere is caught */
    for (size_t i = 0; i < b.len; i++)
        for (int bit = 0; bit < 8; bit++) {
            b.buf[i] ^= (char)(1 << bit);
            assert_false(rdb_payload_verify(b.buf, b.len, &body_len));
            b.buf[i] ^= (char)(1 << bit);
        }
    /* shorter than a trailer, or cut anywhere */
    for (size_t n = 0; n < b.len; n++)
        assert_false(rdb_payload_verify(b.buf, n, &body_len));

    /* an empty body is a valid payload */
    struct rbuf e = {0};
    rdb_payload_finish(&e);
    assert_int_equal(e.len, RDB_PAYLOAD_TRAILER);
    assert_true(rdb_payload_verify(e.buf, e.len, &body_len));
    assert_int_equal(body_len, 0);
    rbuf_free(&e);
    rbuf_free(&b);
}

/* A payload with the given version and a correct CRC. */
static bool verify_with_version(unsigned version) {
    struct rbuf b = {0};
    unsigned char v[2] = { (unsigned char)version, (unsigned char)(version >> 8) };
    rbuf_append(&b, "\x00\x02hi", 4);
    rbuf_append(&b, v, 2);
    uint64_t crc = crc64(0, b.buf, b.len);
    for (int i = 0; i < 8; i++) {
        unsigned char c = (unsigned char)(crc >> (8 * i));
        rbuf_append(&b, &c, 1);
    }
    size_t body_len;
    bool ok = rdb_payload_verify(b.buf, b.len, &body_len);
    rbuf_free(&b);
    return ok;
}

static void test_payload_versions(void **state) {
    (void)state;
    assert_true(verify_with_version(10));
    assert_true(verify_with_version(9));
    assert_true(verify_with_version(1));
    assert_false(verify_with_version(11));
    assert_false(verify_with_version(0x100 + 10));   /* the high byte counts */

    /* a stored CRC of 0 is checked like any other (no "unchecked" value) */
    struct rbuf b = {0};
    rbuf_append(&b, "\x00\x02hi\x0a\x00", 6);
    rbuf_append(&b, "\0\0\0\0\0\0\0\0", 8);
    assert_false(rdb_payload_verify(b.buf, b.len, NULL));
    rbuf_free(&b);
}

/* Verifies Redis's payload, decodes its one string, and writes that string
 * again: the result must be Redis's payload byte for byte, when exact.
 * (lzf.c chooses its matches differently from Redis's liblzf: the same
 * format, which either side decodes, but not the same compressed bytes.) */
static void check_redis_payload(const unsigned char *payload, size_t len, const char *value, size_t vlen,
                                bool exact) {
    size_t body_len;
    assert_true(rdb_payload_verify((const char *)payload, len, &body_len));
    assert_int_equal(body_len, len - RDB_PAYLOAD_TRAILER);
    assert_int_equal(payload[0], 0);                  /* RDB_TYPE_STRING */

    struct rbuf out = {0};
    const char *p = (const char *)payload + 1, *end = (const char *)payload + body_len;
    assert_true(rdb_get_string(&p, end, &out));
    assert_ptr_equal(p, end);
    assert_int_equal(out.len, vlen);
    assert_memory_equal(out.buf, value, vlen);

    struct rbuf b = {0};
    rbuf_append(&b, "\x00", 1);
    rdb_put_string(&b, value, vlen, true);
    rdb_payload_finish(&b);
    if (exact) {
        assert_int_equal(b.len, len);
        assert_memory_equal(b.buf, payload, len);
    } else {
        assert_memory_equal(b.buf, payload, 2);     /* same type, same encoding */
        assert_true(rdb_payload_verify(b.buf, b.len, &body_len));
        p = b.buf + 1;
        out.len = 0;
        assert_true(rdb_get_string(&p, b.buf + body_len, &out));
        assert_int_equal(out.len, vlen);
        assert_memory_equal(out.buf, value, vlen);
    }
    rbuf_free(&b);
    rbuf_free(&out);
}

static void test_redis_payloads(void **state) {
    (void)state;
    check_redis_payload(redis_hello, sizeof redis_hello, "hello", 5, true);
    check_redis_payload(redis_12, sizeof redis_12, "12", 2, true);
    check_redis_payload(redis_empty, sizeof redis_empty, "", 0, true);
    check_redis_payload(redis_int32_min, sizeof redis_int32_min, "-2147483648", 11, true);
    char *s = abcdefghij_x100();
    check_redis_payload(redis_lzf, sizeof redis_lzf, s, 1000, false);
    free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc64),
        cmocka_unit_test(test_lengths),
        cmocka_unit_test(test_integer_strings),
        cmocka_unit_test(test_raw_strings),
        cmocka_unit_test(test_compressed_strings),
        cmocka_unit_test(test_corrupt_strings),
        cmocka_unit_test(test_payload_round_trip),
        cmocka_unit_test(test_payload_versions),
        cmocka_unit_test(test_redis_payloads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
