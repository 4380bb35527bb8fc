/*
 * SHA-256 (FIPS 180-4): ACL passwords are kept only as their SHA-256 hash,
 * as Redis keeps them, so a user's hash is the same in both servers.
 */
#ifndef RINGKV_SHA256_H
#define RINGKV_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32

void sha256(const void *data, size_t len, uint8_t out[SHA256_DIGEST_LEN]);
/* The digest as 64 lowercase hex characters and a NUL. */
void sha256_hex(const void *data, size_t len, char out[2 * SHA256_DIGEST_LEN + 1]);

#endif
