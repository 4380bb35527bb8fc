/*
 * Redis Cluster hash slots: CRC16 (XMODEM) of the key, or of the first
 * non-empty {hash tag} in it, modulo 16384. Keys that share a tag share a
 * slot and therefore a shard.
 */
#ifndef RINGKV_SLOT_H
#define RINGKV_SLOT_H

#include <stddef.h>
#include <stdint.h>

#define RK_SLOTS 16384

uint16_t crc16_xmodem(const char *buf, size_t len);
unsigned key_hash_slot(const char *key, size_t len);

#endif
