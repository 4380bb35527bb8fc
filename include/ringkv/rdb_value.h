/*
 * A key's value in Redis's RDB object encoding: the type byte and the
 * object, as rdbSaveObjectType + rdbSaveObject write them and
 * rdbLoadObjectType + rdbLoadObject read them. DUMP/RESTORE payloads are
 * one such value (plus rdb_codec.h's trailer); RDB files are keys and
 * values in a row.
 *
 * Written: the plain forms every Redis since 2.x loads (string, list as a
 * sequence of strings, set, sorted set with binary doubles, hash); the
 * loading server picks its own encodings. Read: those and every compact
 * form Redis 7.0 writes or still loads (ziplist, zipmap, intset, listpack,
 * quicklist with ziplist or listpack nodes).
 *
 * Reading never trusts the input: every length is checked against what is
 * left, every embedded blob is walked with bounds checks, duplicates in
 * sets, hashes and sorted sets and empty collections are refused. A value
 * that fails gives false and nothing is allocated that outlives the call.
 */
#ifndef RINGKV_RDB_VALUE_H
#define RINGKV_RDB_VALUE_H

#include "ringkv/common.h"

struct kv_entry;

/* Redis's RDB type bytes. */
enum rdb_type {
    RDB_TYPE_STRING = 0,
    RDB_TYPE_LIST = 1,
    RDB_TYPE_SET = 2,
    RDB_TYPE_ZSET = 3,
    RDB_TYPE_HASH = 4,
    RDB_TYPE_ZSET_2 = 5,
    RDB_TYPE_HASH_ZIPMAP = 9,
    RDB_TYPE_LIST_ZIPLIST = 10,
    RDB_TYPE_SET_INTSET = 11,
    RDB_TYPE_ZSET_ZIPLIST = 12,
    RDB_TYPE_HASH_ZIPLIST = 13,
    RDB_TYPE_LIST_QUICKLIST = 14,
    RDB_TYPE_STREAM_LISTPACKS = 15,
    RDB_TYPE_HASH_LISTPACK = 16,
    RDB_TYPE_ZSET_LISTPACK = 17,
    RDB_TYPE_LIST_QUICKLIST_2 = 18,
    RDB_TYPE_STREAM_LISTPACKS_2 = 19,
};

/* Append e's value: the type byte and the object (a DUMP payload's body).
 * compress: rdbcompression. */
void rdb_put_value(struct rbuf *b, const struct kv_entry *e, bool compress);
/* The same with the key between them, as keys stand in an RDB file. */
void rdb_put_key_value(struct rbuf *b, const struct kv_entry *e, bool compress);

/* A value read back: a string's bytes, or an object of type (OBJ_*). */
struct rdb_value {
    unsigned type;            /* enum obj_type */
    struct rbuf str;          /* OBJ_STRING: the bytes (the caller frees buf) */
    void *obj;                /* other types: the object (the caller owns it) */
};

/* Read one value (type byte and object) at *p. On success *p moves past
 * it; on failure nothing in out needs freeing. */
bool rdb_get_value(const char **p, const char *end, struct rdb_value *out);

/* The object alone, of type byte t (already read): an RDB file has the
 * key between the two. */
bool rdb_get_object(const char **p, const char *end, unsigned char t, struct rdb_value *out);
/* The entry holding v under key (v is consumed). */
struct kv_entry *rdb_value_entry(struct slice key, struct rdb_value *v, long long expire_at_ms);
/* Free what a successful rdb_get_value gave when it is not used. */
void rdb_value_discard(struct rdb_value *v);

#endif
