/*
 * A key-value entry: one allocation holding a small header, the optional
 * expiry, the key bytes and the value.
 *
 * The header is one meta byte followed by the lengths and the access
 * stamp, in one of two forms:
 *
 *   short: [meta][klen:u8][vlen:u8][stamp:u24]                   both lengths < 256
 *   wide:  [meta][klen:u32][vlen:u32][vcap:u32][stamp:u24]       anything larger
 *   then:  [expire_at_ms:i64 if ENTRY_EXPIRE] [key] [value]
 *
 * A 16-byte key with a 16-byte value therefore costs 38 bytes, and a TTL
 * costs nothing for keys without one. The stamp is what eviction ranks
 * keys by, Redis's 24-bit robj.lru: under an LRU policy the clock in
 * seconds at the last access, under an LFU policy the minute of the last
 * decrement (16 bits) and a logarithmic access counter (8 bits); stamp.h
 * keeps it. Strings keep their bytes inline; the
 * other types store one pointer to their object as an 8-byte value, except
 * small compact objects (ENTRY_INLINE: the listpack or intset of a small
 * list, set, hash or sorted set, up to ENTRY_INLINE_MAX bytes), whose bytes
 * are the value itself, after 0 or 1 byte of padding that makes their
 * address even (the types tag their big encodings in bit 0 of the object
 * pointer). That saves the pointer and a second allocation per key: a
 * fifth of a 10-field hash, two fifths of a 10-item list.
 * Fields after the meta byte are unaligned and read with memcpy.
 * An entry is immutable in size: operations that change its size build a new
 * one (entry_* functions below return the possibly-moved entry) and the
 * caller stores it back into its table slot.
 */
#ifndef RINGKV_ENTRY_H
#define RINGKV_ENTRY_H

#include "ringkv/common.h"

enum obj_type { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_STREAM = 5 };

#define ENTRY_TYPE_MASK 0x07
#define ENTRY_EXPIRE    0x08   /* an expire_at_ms field is present */
#define ENTRY_WIDE      0x10   /* u32 lengths and a value capacity */
#define ENTRY_SNAP      0x20   /* the snapshot side of the entry (db.h: shard.snap_side) */
#define ENTRY_ARENA     0x40   /* the block came from an entry arena (arena.h), not malloc */
#define ENTRY_INLINE    0x80   /* the value is the object's own bytes, not a pointer to it */
/* A string is never inline and only a string is raw, so they share a bit:
 * string edited in place (OBJECT ENCODING says raw). */
#define ENTRY_RAW       ENTRY_INLINE

/* Largest object body kept inline. Writes copy the body out and back
 * (entry_obj_for_write, entry_store_obj), so this bounds their extra cost. */
#define ENTRY_INLINE_MAX 256

#define NO_EXPIRE (-1LL)

struct kv_entry { uint8_t meta; unsigned char rest[]; };

static inline unsigned entry_type(const struct kv_entry *e) { return e->meta & ENTRY_TYPE_MASK; }
static inline bool entry_has_expire(const struct kv_entry *e) { return e->meta & ENTRY_EXPIRE; }

static inline size_t entry__hdr(const struct kv_entry *e) { return (e->meta & ENTRY_WIDE) ? 16 : 6; }

/* The access stamp (see the top); 24 bits. */
#define ENTRY_STAMP_MAX 0xFFFFFFu
static inline unsigned char *entry__stamp(const struct kv_entry *e) {
    return (unsigned char *)e->rest + ((e->meta & ENTRY_WIDE) ? 12 : 2);
}
static inline uint32_t entry_stamp(const struct kv_entry *e) {
    const unsigned char *p = entry__stamp(e);
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}
static inline void entry_set_stamp(struct kv_entry *e, uint32_t v) {
    unsigned char *p = entry__stamp(e);
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
}
/* The stamp new entries get on this thread: an access now (stamp.h sets it
 * as the clock moves; 0 where nothing does, as in unit tests). */
extern _Thread_local uint32_t rk_new_stamp;

static inline size_t entry_key_len(const struct kv_entry *e) {
    if (e->meta & ENTRY_WIDE) { uint32_t v; memcpy(&v, e->rest, 4); return v; }
    return e->rest[0];
}
static inline size_t entry_val_len(const struct kv_entry *e) {
    if (e->meta & ENTRY_WIDE) { uint32_t v; memcpy(&v, e->rest + 4, 4); return v; }
    return e->rest[1];
}
static inline const char *entry_key(const struct kv_entry *e) {
    return (const char *)e + entry__hdr(e) + (entry_has_expire(e) ? 8 : 0);
}
static inline struct slice entry_key_slice(const struct kv_entry *e) {
    return (struct slice){ entry_key(e), entry_key_len(e) };
}
static inline char *entry_val(struct kv_entry *e) {
    return (char *)entry_key(e) + entry_key_len(e);
}
static inline struct slice entry_val_slice(const struct kv_entry *e) {
    return (struct slice){ entry_key(e) + entry_key_len(e), entry_val_len(e) };
}
static inline long long entry_expire(const struct kv_entry *e) {
    if (!entry_has_expire(e)) return NO_EXPIRE;
    long long v; memcpy(&v, (const char *)e + entry__hdr(e), 8); return v;
}
/* The object of a non-string entry, for reading: the pointer in the value,
 * or the inline body (at an even address; inline objects must not need more
 * alignment than that, so their headers are packed structs). */
static inline void *entry_obj(const struct kv_entry *e) {
    const char *v = entry_key(e) + entry_key_len(e);
    if (e->meta & ENTRY_INLINE) return (void *)(v + ((uintptr_t)v & 1));
    void *p; memcpy(&p, v, sizeof p); return p;
}
/* The object, for changing it. An inline body is first copied out to an
 * object of its own, which the entry then points to (in its old block), so
 * the entry stays valid whether or not the write ends in entry_store_obj. */
void *entry_obj_for_write(struct kv_entry *e);
/* Store obj, the entry's object after a change (it may have moved or
 * converted), and return the entry, which may have moved: an object small
 * enough to be inline is copied in and freed, others are kept by pointer. */
struct kv_entry *entry_store_obj(struct kv_entry *e, void *obj);

/* New string entry; expire_at_ms is NO_EXPIRE or an absolute unix time in ms. */
struct kv_entry *entry_new_string(struct slice key, struct slice val, long long expire_at_ms);
/* New raw-encoded string entry of exactly len value bytes, left for the
 * caller to fill: a string Redis creates at its final size (SETRANGE,
 * SETBIT, BITOP on a missing key) has no spare room, and used_memory would
 * count any (entry_resize_string keeps some for repeated growth). */
struct kv_entry *entry_new_string_len(struct slice key, size_t len);
/* New entry of another type holding obj (which it may copy inline and free). */
struct kv_entry *entry_new_obj(struct slice key, unsigned type, void *obj, long long expire_at_ms);
/* Replace the string value; may return a different pointer (old one freed). */
struct kv_entry *entry_set_string(struct kv_entry *e, struct slice val);
/* Make room for a string value of new_len bytes (contents up to the old length
 * kept, the rest uninitialised); reserves spare capacity for repeated growth
 * (APPEND/SETRANGE) and marks the entry ENTRY_RAW. */
struct kv_entry *entry_resize_string(struct kv_entry *e, size_t new_len);
/* Set or clear (NO_EXPIRE) the expiry; may return a different pointer. */
struct kv_entry *entry_set_expire(struct kv_entry *e, long long expire_at_ms);
/* Same value under another key (RENAME, COPY, MOVE of strings). */
struct kv_entry *entry_with_key(const struct kv_entry *e, struct slice key, bool keep_obj);
size_t entry_alloc_size(const struct kv_entry *e);
/* Free the entry; objects of other types are freed by the hook below. */
void entry_free(struct kv_entry *e);
/* Free the entry's memory only (its object was moved: entry_with_key keep_obj). */
void entry_release(struct kv_entry *e);
/* The same entry in a block of the current arena (rk_arena); frees e. */
struct kv_entry *entry_rehome(struct kv_entry *e);

/* Data-type modules say how to free, copy and describe their objects; each
 * exports its ops and src/types/obj_types.c lists them by type.
 * inline_size (optional) gives the size of an object that is one flat block
 * of bytes which may live inside an entry (copied with memcpy, its address
 * then serving as the object pointer), or 0 for an object that may not.
 * usage (optional) gives the bytes the object allocates apart from its
 * entry (MEMORY USAGE), big collections estimated from `samples` elements
 * (SIZE_MAX: all of them). */
struct obj_ops {
    void (*free)(void *obj);
    void *(*dup)(const void *obj);
    const char *(*encoding)(const void *obj);
    size_t (*inline_size)(const void *obj);
    size_t (*usage)(const void *obj, size_t samples);
};
extern const struct obj_ops *obj_ops_by_type[8];

#endif
