/*
 * slot.c -- Redis Cluster hash slots.
 *
 * The slot of a key is CRC16 (the XMODEM variant: polynomial 0x1021, initial
 * value 0, no reflection, no final xor) of the key modulo 16384. When the key
 * holds a hash tag -- the bytes between the first '{' and the first '}' after
 * it, provided there is at least one byte between them -- only the tag is
 * hashed, so "{user1000}.following" and "{user1000}.followers" land together.
 *
 * The CRC is table driven, one byte per step; the table below is the
 * polynomial's remainder for every possible high byte.
 */
#include "ringkv/slot.h"

#include <stdbool.h>
#include <string.h>

static const uint16_t crc16_table[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
    0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef,
    0x1231, 0x0210, 0x3273, 0x2252, 0x52b5, 0x4294, 0x72f7, 0x62d6,
    0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c, 0xf3ff, 0xe3de,
    0x2462, 0x3443, 0x0420, 0x1401, 0x64e6, 0x74c7, 0x44a4, 0x5485,
    0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4,
    0xb75b, 0xa77a, 0x9719, 0x8738, 0xf7df, 0xe7fe, 0xd79d, 0xc7bc,
    0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b,
    0x5af5, 0x4ad4, 0x7ab7, 0x6a96, 0x1a71, 0x0a50, 0x3a33, 0x2a12,
    0xdbfd, 0xcbdc, 0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a,
    0x6ca6, 0x7c87, 0x4ce4, 0x5cc5, 0x2c22, 0x3c03, 0x0c60, 0x1c41,
    0xedae, 0xfd8f, 0xcdec, 0xddcd, 0xad2a, 0xbd0b, 0x8d68, 0x9d49,
    0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
    0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78,
    0x9188, 0x81a9, 0xb1ca, 0xa1eb, 0xd10c, 0xc12d, 0xf14e, 0xe16f,
    0x1080, 0x00a1, 0x30c2, 0x20e3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c, 0xe37f, 0xf35e,
    0x02b1, 0x1290, 0x22f3, 0x32d2, 0x4235, 0x5214, 0x6277, 0x7256,
    0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d,
    0x34e2, 0x24c3, 0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
    0xa7db, 0xb7fa, 0x8799, 0x97b8, 0xe75f, 0xf77e, 0xc71d, 0xd73c,
    0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab,
    0x5844, 0x4865, 0x7806, 0x6827, 0x18c0, 0x08e1, 0x3882, 0x28a3,
    0xcb7d, 0xdb5c, 0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a,
    0x4a75, 0x5a54, 0x6a37, 0x7a16, 0x0af1, 0x1ad0, 0x2ab3, 0x3a92,
    0xfd2e, 0xed0f, 0xdd6c, 0xcd4d, 0xbdaa, 0xad8b, 0x9de8, 0x8dc9,
    0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
    0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8,
    0x6e17, 0x7e36, 0x4e55, 0x5e74, 0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

/*
 * Slicing by 8. The CRC is linear, and with a 16-bit register the register
 * amounts to XORing it into the next two message bytes; so the CRC of 8
 * bytes is the XOR of 8 independent table lookups, slice[k][byte] being
 * the CRC of that byte followed by k zero bytes. The lookups have no chain
 * between them, which makes the 16-byte keys of a typical workload several
 * times faster than byte at a time. Every request on a multi-threaded
 * server hashes its key this way.
 */
static uint16_t crc16_slice[8][256];

__attribute__((constructor)) static void crc16_slice_init(void) {
    for (int x = 0; x < 256; x++) {
        crc16_slice[0][x] = crc16_table[x];
        for (int k = 1; k < 8; k++) {
            uint16_t prev = crc16_slice[k - 1][x];
            crc16_slice[k][x] = (uint16_t)((prev << 8) ^ crc16_table[prev >> 8]);
        }
    }
}

static inline uint16_t crc16_step8(uint16_t crc, const unsigned char *p) {
    return crc16_slice[7][(crc >> 8) ^ p[0]] ^ crc16_slice[6][(crc & 0xff) ^ p[1]] ^
           crc16_slice[5][p[2]] ^ crc16_slice[4][p[3]] ^ crc16_slice[3][p[4]] ^
           crc16_slice[2][p[5]] ^ crc16_slice[1][p[6]] ^ crc16_slice[0][p[7]];
}

static inline uint16_t crc16_step1(uint16_t crc, unsigned char b) {
    return (uint16_t)((crc << 8) ^ crc16_table[((crc >> 8) ^ b) & 0xff]);
}

uint16_t crc16_xmodem(const char *buf, size_t len) {
    const unsigned char *p = (const unsigned char *)buf;
    uint16_t crc = 0;
    for (; len >= 8; p += 8, len -= 8) crc = crc16_step8(crc, p);
    for (size_t i = 0; i < len; i++) crc = crc16_step1(crc, p[i]);
    return crc;
}

/* A key with a '{' somewhere: find its tag, if it has one. */
static unsigned tagged_key_slot(const char *key, size_t len) {
    const char *open = memchr(key, '{', len);
    if (open != NULL) {
        size_t after = (size_t)(open - key) + 1;
        const char *close = memchr(open + 1, '}', len - after);
        /* "{}" is not a tag: an empty tag would put every such key in one
         * slot, so the whole key is hashed instead. */
        if (close != NULL && close != open + 1)
            return crc16_xmodem(open + 1, (size_t)(close - open - 1)) & (RK_SLOTS - 1);
    }
    return crc16_xmodem(key, len) & (RK_SLOTS - 1);
}

/* Whether any of the 8 bytes of v is '{' (the classic zero-byte test on v
 * xor '{'s: exact about presence, which is all this needs). */
static inline bool has_open_brace(uint64_t v) {
    uint64_t x = v ^ 0x7b7b7b7b7b7b7b7bULL;
    return ((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL) != 0;
}

/* Most keys have no '{': hash them in one pass that also looks for one, and
 * hand the rare key that has one to tagged_key_slot(). */
unsigned key_hash_slot(const char *key, size_t len) {
    const unsigned char *p = (const unsigned char *)key;
    uint16_t crc = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        if (has_open_brace(v)) return tagged_key_slot(key, len);
        crc = crc16_step8(crc, p + i);
    }
    for (; i < len; i++) {
        if (p[i] == '{') return tagged_key_slot(key, len);
        crc = crc16_step1(crc, p[i]);
    }
    return crc & (RK_SLOTS - 1);
}
