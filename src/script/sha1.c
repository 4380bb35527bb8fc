/*
 * sha1.c -- SHA-1 (FIPS 180-4) for script ids and redis.sha1hex().
 *
 * Written from the standard: 64-byte blocks, 80 rounds over a 16-word
 * message schedule kept in a ring, big-endian length in the last block.
 */
#include "script_internal.h"

#include <stdint.h>
#include <string.h>

static inline uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1_block(uint32_t h[5], const unsigned char *p) {
    uint32_t w[16];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
               (uint32_t)p[4 * i + 3];
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i >= 16) {
            uint32_t x = w[(i + 13) & 15] ^ w[(i + 8) & 15] ^ w[(i + 2) & 15] ^ w[i & 15];
            w[i & 15] = rol(x, 1);
        }
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDC;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i & 15];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void script_sha1(const void *data, size_t len, unsigned char out[20]) {
    uint32_t h[5] = { 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0 };
    const unsigned char *p = data;
    size_t left = len;
    while (left >= 64) {
        sha1_block(h, p);
        p += 64;
        left -= 64;
    }
    unsigned char last[128];
    memset(last, 0, sizeof(last));
    if (left) memcpy(last, p, left);
    last[left] = 0x80;
    size_t tail = left + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) last[tail - 1 - i] = (unsigned char)(bits >> (8 * i));
    sha1_block(h, last);
    if (tail == 128) sha1_block(h, last + 64);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char)(h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(h[i] >> 8);
        out[4 * i + 3] = (unsigned char)h[i];
    }
}

void script_sha_to_hex(const unsigned char sha[20], char out[41]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 20; i++) {
        out[2 * i] = digits[sha[i] >> 4];
        out[2 * i + 1] = digits[sha[i] & 15];
    }
    out[40] = '\0';
}

/* digit values, 16 for anything else (EVALSHA parses one sha per call) */
static const unsigned char hexval[256] = {
    ['0'] = 0 + 1, ['1'] = 1 + 1, ['2'] = 2 + 1, ['3'] = 3 + 1, ['4'] = 4 + 1, ['5'] = 5 + 1, ['6'] = 6 + 1,
    ['7'] = 7 + 1, ['8'] = 8 + 1, ['9'] = 9 + 1, ['a'] = 10 + 1, ['b'] = 11 + 1, ['c'] = 12 + 1, ['d'] = 13 + 1,
    ['e'] = 14 + 1, ['f'] = 15 + 1, ['A'] = 10 + 1, ['B'] = 11 + 1, ['C'] = 12 + 1, ['D'] = 13 + 1,
    ['E'] = 14 + 1, ['F'] = 15 + 1,
};

bool script_sha_from_hex(struct slice hex, unsigned char out[20]) {
    if (hex.len != 40) return false;
    /* EVALSHA repeats one sha, and parses it twice (exists, then run) */
    static _Thread_local char last_hex[40];
    static _Thread_local unsigned char last_sha[20];
    static _Thread_local bool have_last;
    if (have_last && memcmp(hex.ptr, last_hex, 40) == 0) {
        memcpy(out, last_sha, 20);
        return true;
    }
    const unsigned char *p = (const unsigned char *)hex.ptr;
    unsigned bad = 0;
    for (int i = 0; i < 20; i++) {
        unsigned hi = hexval[p[2 * i]], lo = hexval[p[2 * i + 1]];
        bad |= (hi == 0) | (lo == 0);
        out[i] = (unsigned char)((hi - 1) << 4 | ((lo - 1) & 15));
    }
    if (bad) return false;
    memcpy(last_hex, hex.ptr, 40);
    memcpy(last_sha, out, 20);
    have_last = true;
    return true;
}

void script_sha1hex(const void *p, size_t len, char out[41]) {
    unsigned char sha[20];
    script_sha1(p, len, sha);
    script_sha_to_hex(sha, out);
}
