/*
 * CRC-64 as Redis computes it (crc64.c): the Jones polynomial
 * 0xad93d23594c935a9, input and output reflected, initial value 0, no final
 * xor. DUMP payloads and RDB files end with this checksum, so it has to be
 * Redis's exactly for payloads to travel between ringkv and Redis:
 * crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
 *
 * The crc argument chains calls: crc64(crc64(0, a, n), b, m) is the CRC of
 * a followed by b.
 */
#ifndef RINGKV_CRC64_H
#define RINGKV_CRC64_H

#include <stddef.h>
#include <stdint.h>

uint64_t crc64(uint64_t crc, const void *p, size_t len);
/* The CRC of A followed by B from crc64(0, A) and crc64(0, B) and B's
 * length, without reading either: pieces written apart combine in order. */
uint64_t crc64_combine(uint64_t crc_a, uint64_t crc_b, uint64_t len_b);

#endif
