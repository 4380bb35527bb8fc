/*
 * CRC-64/Jones, reflected (crc64.h), by slicing-by-8.
 *
 * A reflected CRC shifts right, so the polynomial is used bit-reversed and
 * each input byte is xored into the low end of the register. table[0] is
 * the classic byte-at-a-time table: the register's low byte, pushed through
 * eight shifts. table[k] advances that same byte k further bytes of zeros,
 * which lets eight input bytes be folded in with eight independent lookups
 * instead of eight dependent ones. The tables are built once, on first use.
 */
#include "ringkv/crc64.h"

#include <pthread.h>
#include <string.h>

#define POLY_REFLECTED 0x95ac9329ac4bc9b5ULL   /* 0xad93d23594c935a9 bit-reversed */

static uint64_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
    for (unsigned n = 0; n < 256; n++) {
        uint64_t c = n;
        for (int bit = 0; bit < 8; bit++)
            c = (c & 1) ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
        table[0][n] = c;
    }
    for (unsigned n = 0; n < 256; n++)
        for (int k = 1; k < 8; k++)
            table[k][n] = (table[k - 1][n] >> 8) ^ table[0][table[k - 1][n] & 0xff];
}

static inline uint64_t step_byte(uint64_t crc, unsigned char byte) {
    return table[0][(crc ^ byte) & 0xff] ^ (crc >> 8);
}

uint64_t crc64(uint64_t crc, const void *data, size_t len) {
    const unsigned char *p = data;
    pthread_once(&table_once, build_tables);

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The eight-byte fold needs the first input byte in the register's low
     * byte, which a plain load gives only on a little-endian host. */
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
              table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
              table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
              table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        len -= 8;
    }
#endif
    while (len--)
        crc = step_byte(crc, *p++);
    return crc;
}

/*
 * Combining, as zlib's crc32_combine does it: with no initial value and no
 * final xor the CRC is linear, so crc(A||B) = crc(A) * x^(8|B|) + crc(B)
 * mod P. Polynomials are reflected: bit 63 is x^0. x^(2^k) mod P comes
 * from a table made once by squaring, so a combine costs about
 * log2(len) products.
 */
static uint64_t x2n_table[64];
static pthread_once_t x2n_once = PTHREAD_ONCE_INIT;

/* a * b mod P */
static uint64_t multmodp(uint64_t a, uint64_t b) {
    uint64_t m = 1ULL << 63, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ POLY_REFLECTED : b >> 1;
    }
    return p;
}

static void build_x2n(void) {
    uint64_t p = 1ULL << 62;   /* x^1 */
    x2n_table[0] = p;
    for (int n = 1; n < 64; n++) x2n_table[n] = p = multmodp(p, p);
}

/* x^(n * 2^k) mod P */
static uint64_t x2nmodp(uint64_t n, unsigned k) {
    uint64_t p = 1ULL << 63;   /* x^0 */
    while (n) {
        if (n & 1) p = multmodp(x2n_table[k & 63], p);
        n >>= 1;
        k++;
    }
    return p;
}

uint64_t crc64_combine(uint64_t crc1, uint64_t crc2, uint64_t len2) {
    pthread_once(&x2n_once, build_x2n);
    return multmodp(x2nmodp(len2, 3), crc1) ^ crc2;
}
