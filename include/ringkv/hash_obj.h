/*
 * The hash value object (OBJ_HASH): field -> value, in one of two encodings
 * as in Redis 7.0's t_hash.c:
 *
 *   listpack   field,value,field,value,... (listpack.h) while the hash has at
 *              most hash-max-listpack-entries fields and no field or value
 *              longer than hash-max-listpack-value bytes;
 *   hashtable  a hashmap with values (hashmap.h) once either is exceeded.
 *
 * A hash never converts back to a listpack, as in Redis.
 *
 * The object pointer IS the object: a struct listpack * as is, or a struct
 * hashmap * with its low bit set. A small listpack lives inside the key's
 * entry (entry.h, ENTRY_INLINE), so a small hash costs one allocation.
 * Functions that change the hash take struct hash_obj ** because the pointer
 * may change (the listpack moves or the encoding converts); the caller
 * stores the result back into its entry (entry_store_obj).
 */
#ifndef RINGKV_HASH_OBJ_H
#define RINGKV_HASH_OBJ_H

#include "ringkv/common.h"
#include "ringkv/entry.h"
#include "ringkv/hashmap.h"
#include "ringkv/listpack.h"

struct hash_obj;   /* opaque: a tagged struct listpack * or struct hashmap * */

/* Text of an integer held by a listpack: the slices returned may point here. */
#define HASH_BUF_SIZE LP_INTBUF_SIZE

struct hash_obj *hash_new(void);                       /* an empty listpack hash */
void hash_free(struct hash_obj *h);
struct hash_obj *hash_dup(const struct hash_obj *h);

bool hash_is_listpack(const struct hash_obj *h);
const char *hash_encoding(const struct hash_obj *h);   /* "listpack" / "hashtable" */
size_t hash_len(const struct hash_obj *h);
/* The underlying structures (NULL when the hash has the other encoding). */
struct listpack *hash_lp(const struct hash_obj *h);
struct hashmap *hash_map(const struct hash_obj *h);

/* The value of field; false if absent. val may point into the hash (valid
 * until it changes) or into buf. */
bool hash_get(const struct hash_obj *h, struct slice field, struct slice *val, char buf[HASH_BUF_SIZE]);
bool hash_exists(const struct hash_obj *h, struct slice field);

/* Set field to val; true if the field is new. Converts to a hashtable first
 * when field or val is longer than hash-max-listpack-value (or the listpack
 * would pass 2 GB), and after the insertion when the hash has more than
 * hash-max-listpack-entries fields. field and val must not point into h. */
bool hash_set(struct hash_obj **hp, struct slice field, struct slice val);
/* Redis's hashTypeTryConversion(): convert to a hashtable if any of the n
 * arguments (fields and values about to be set) is too long for a listpack. */
void hash_try_conversion(struct hash_obj **hp, const struct slice *args, size_t n);
/* Delete field; false if it was absent. The hash may become empty: the
 * caller deletes the key then. */
bool hash_delete(struct hash_obj **hp, struct slice field);
/* Convert a listpack hash to a hashtable (no-op for a hashtable). */
void hash_convert(struct hash_obj **hp);

/* Bytes the hash allocates (MEMORY USAGE), a hashtable's fields estimated
 * from `samples` of them. */
size_t hash_usage(const struct hash_obj *h, size_t samples);
/* How the keyspace handles hash objects (entry.h). */
extern const struct obj_ops hash_obj_ops;
/* Walk every field,value pair (no change to the hash meanwhile). */
struct hash_iter {
    const struct hash_obj *h;
    size_t pos;                   /* listpack position */
    struct hashmap_iter hi;
    char fbuf[HASH_BUF_SIZE], vbuf[HASH_BUF_SIZE];
};
void hash_iter_init(struct hash_iter *it, const struct hash_obj *h);
/* The next pair (slices valid until the next call or a change); false at the end. */
bool hash_iter_next(struct hash_iter *it, struct slice *field, struct slice *val);

#endif
