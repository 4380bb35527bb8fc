/*
 * RDB files as Redis 7.0 writes and reads them (rdb.c's rdbSaveRio and
 * rdbLoadRio):
 *
 *   "REDIS0010"                      magic and version
 *   AUX name value ...               redis-ver, redis-bits, ctime, used-mem, aof-base
 *   FUNCTION2 code ...               FUNCTION libraries
 *   SELECTDB n  RESIZEDB keys ttls   then the keys of database n:
 *     [EXPIRETIME_MS ms] type key value      (rdb_value.h)
 *   ...                              more databases
 *   EOF crc64                        CRC-64 (crc64.h) of everything before it,
 *                                    0 when rdbchecksum is off
 *
 * A database may appear more than once: ringkv's shards each write their
 * own run of SELECTDB and keys, and Redis's loader, like ours, just
 * switches database at each SELECTDB.
 *
 * The writers append to an rbuf; the loader reads a whole file image with
 * the bounds checks of rdb_value.h, accepting versions 1 to 10 and every
 * opcode Redis 7.0 loads (IDLE and FREQ are skipped, module data is
 * refused), and hands each key to a callback.
 */
#ifndef RINGKV_RDB_FILE_H
#define RINGKV_RDB_FILE_H

#include "ringkv/common.h"
#include "ringkv/rdb_value.h"

struct kv_entry;

enum rdb_opcode {
    RDB_OPCODE_FUNCTION = 246,        /* Redis 7.0 RC's form: refused, as 7.0 does */
    RDB_OPCODE_FUNCTION2 = 245,
    RDB_OPCODE_MODULE_AUX = 247,
    RDB_OPCODE_IDLE = 248,
    RDB_OPCODE_FREQ = 249,
    RDB_OPCODE_AUX = 250,
    RDB_OPCODE_RESIZEDB = 251,
    RDB_OPCODE_EXPIRETIME_MS = 252,
    RDB_OPCODE_EXPIRETIME = 253,
    RDB_OPCODE_SELECTDB = 254,
    RDB_OPCODE_EOF = 255,
};

/* The magic, version and aux fields; used_mem as INFO reports it. */
void rdb_put_header(struct rbuf *b, long long now_ms, size_t used_mem);
void rdb_put_function(struct rbuf *b, struct slice code);
void rdb_put_selectdb(struct rbuf *b, unsigned db);
/* The sizes that follow (a hint for the loader's tables). */
void rdb_put_resizedb(struct rbuf *b, uint64_t keys, uint64_t expires);
/* A key: its expiry (if any), type, name and value. */
void rdb_put_key(struct rbuf *b, const struct kv_entry *e, bool compress);
/* EOF and the CRC; crc is the CRC-64 of the file up to here (ignored
 * without checksum: the field is then 0, which loaders take as "none"). */
void rdb_put_trailer(struct rbuf *b, uint64_t crc, bool checksum);
/* Bytes of rdb_put_trailer's output. */
#define RDB_TRAILER_LEN 9

/* What a loaded file hands over, in file order. Callbacks return false to
 * stop the load (with their own message in err). */
struct rdb_load_ops {
    void *ud;
    /* A key of database db that has not expired by now_ms; v is the
     * callback's to keep or discard. */
    bool (*key)(void *ud, unsigned db, struct slice key, struct rdb_value *v, long long expire_at_ms,
                struct rbuf *err);
    bool (*function)(void *ud, struct slice code, struct rbuf *err);   /* NULL: skipped */
    /* RESIZEDB: database db will hold about keys keys (NULL: ignored). */
    void (*resize)(void *ud, unsigned db, uint64_t keys);
};

/* Load the image of a whole RDB file. false with Redis's kind of message
 * in err ("Wrong RDB checksum", "Unexpected EOF reading RDB file", ...).
 * databases: keys of a higher SELECTDB are refused. */
bool rdb_load(const char *p, size_t len, unsigned databases, long long now_ms, const struct rdb_load_ops *ops,
              struct rbuf *err);

#endif
