/*
 * SCAN-family cursors as clients see them.
 *
 * Inside, a scan's position is a point in hash space (table.h, hashmap.h,
 * zskiplist.h): a call returns what hashes into [position, next) and the
 * next position. Those positions are boundaries of power-of-two fractions
 * of the hash space, so only their top bits are set: in a table of 2^k
 * groups, k of them. As numbers they are huge (half of them at or above
 * 2^63, which clients that read the cursor into a signed 64-bit integer
 * cannot take), so on the wire the position's bits are reversed, as
 * Redis's own cursors are: a position with only its top k bits set becomes
 * a cursor below 2^k, about the table's size in groups.
 *
 * The reversal is its own inverse and maps every 64-bit number to one
 * position, so any cursor a client sends means something, and 0 is 0 (the
 * start, and the end).
 */
#ifndef RINGKV_SCAN_CURSOR_H
#define RINGKV_SCAN_CURSOR_H

#include <stdint.h>

static inline uint64_t scan_bit_reverse(uint64_t x) {
    x = __builtin_bswap64(x);
    x = (x >> 4 & 0x0F0F0F0F0F0F0F0FULL) | (x & 0x0F0F0F0F0F0F0F0FULL) << 4;
    x = (x >> 2 & 0x3333333333333333ULL) | (x & 0x3333333333333333ULL) << 2;
    x = (x >> 1 & 0x5555555555555555ULL) | (x & 0x5555555555555555ULL) << 1;
    return x;
}

/* The cursor to reply for a position, and the position a cursor names. */
static inline uint64_t scan_cursor_of(uint64_t pos) { return scan_bit_reverse(pos); }
static inline uint64_t scan_pos_of(uint64_t cursor) { return scan_bit_reverse(cursor); }

#endif
