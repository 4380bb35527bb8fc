/*
 * The parts of Redis's RDB encoding that a DUMP-style payload is built
 * from: lengths, strings, and the version + CRC trailer. FUNCTION DUMP /
 * FUNCTION RESTORE use it now; DUMP / RESTORE and RDB files will later. The
 * bytes are Redis's (rdb.c, cluster.c's createDumpPayload), so payloads
 * move between ringkv and Redis in both directions.
 *
 * Length (rdb_put_len), by the top two bits of the first byte:
 *   00LLLLLL                   0..63
 *   01LLLLLL LLLLLLLL          0..16383, big-endian
 *   10000000 + 4 bytes         up to 2^32-1, big-endian
 *   10000001 + 8 bytes         anything larger, big-endian
 *   11TTTTTT                   not a length: a string in special encoding T
 *
 * String (rdb_put_string): a length then the raw bytes, or one of
 *   C0 b / C1 b b / C2 b b b b  an integer as int8/16/32, little-endian,
 *                               for strings that are exactly that integer
 *                               written canonically ("12", not "012")
 *   C3 clen len data           LZF-compressed (lzf.h), both lengths as above
 *
 * Payload: body, then the RDB version as 2 bytes and the CRC-64 (crc64.h)
 * of everything before the CRC as 8 bytes, both little-endian.
 *
 * Readers take a cursor (*p) and the input's end, check every byte against
 * end, and on failure return false with *p (and the output) as they were:
 * a truncated or corrupt payload is refused, never read out of bounds.
 */
#ifndef RINGKV_RDB_CODEC_H
#define RINGKV_RDB_CODEC_H

#include "ringkv/common.h"

/* The RDB format version written, and the newest one accepted: Redis 7.0's. */
#define RDB_VERSION 10

/* Bytes after a payload's body: 2 of version, 8 of CRC. */
#define RDB_PAYLOAD_TRAILER 10

/* The longest string rdb_put_string compresses and rdb_get_string inflates
 * (Redis's default proto-max-bulk-len). A compressed string states its own
 * length, so without a bound a few corrupt bytes could demand any amount of
 * memory; longer strings are written raw instead. */
#define RDB_LZF_MAX_LEN (512ULL * 1024 * 1024)

void rdb_put_len(struct rbuf *b, uint64_t len);

/* As Redis's rdbSaveRawString: integer encoding when the string is a
 * canonical int32, else (if compress, and it is longer than 20 bytes) LZF
 * when that saves at least 4 bytes, else length + bytes. */
void rdb_put_string(struct rbuf *b, const char *s, size_t len, bool compress);

/* Reads a length. A special-encoding byte (11TTTTTT) sets *encoded and puts
 * T in *len when encoded is non-NULL; with encoded NULL it is refused, as
 * only a plain length may stand there. */
bool rdb_get_len(const char **p, const char *end, uint64_t *len, bool *encoded);

/* Reads a string in any of its encodings and appends its bytes to out
 * (integers as their decimal text, as Redis returns them). */
bool rdb_get_string(const char **p, const char *end, struct rbuf *out);

/* The fixed-width fields: 8 bytes little-endian, as rdbSaveMillisecondTime
 * and rdbSaveBinaryDoubleValue write them. The readers refuse fewer than 8
 * bytes left. */
void rdb_put_u64(struct rbuf *b, uint64_t v);
bool rdb_get_u64(const char **p, const char *end, uint64_t *v);
void rdb_put_double(struct rbuf *b, double d);
bool rdb_get_double(const char **p, const char *end, double *d);

/* An n-byte (1..8) little-endian integer at p (the caller checked n bytes
 * are there): the fields of Redis's ziplists, listpacks and intsets. */
uint64_t rdb_load_le(const unsigned char *p, int n);

/* Appends the trailer: exactly Redis 7.0's createDumpPayload. */
void rdb_payload_finish(struct rbuf *b);

/* As Redis 7.0's verifyDumpPayload: at least the trailer's 10 bytes, an RDB
 * version no newer than ours, and a matching CRC. Sets *body_len (when not
 * NULL) to the length before the trailer. */
bool rdb_payload_verify(const char *p, size_t len, size_t *body_len);

#endif
