/*
 * The set value (OBJ_SET) with Redis's three encodings:
 *
 *   intset     every member is an integer and count <= set-max-intset-entries
 *   listpack   count <= set-max-listpack-entries and every member is at most
 *              set-max-listpack-value bytes long
 *   hashtable  anything else (a hashmap without values)
 *
 * Conversions follow Redis's t_set.c (the 7.2 rules, which introduced the
 * listpack encoding): an intset becomes a listpack when a small non-integer
 * arrives, or a hashtable; a listpack becomes a hashtable; a set never goes
 * back to a more compact encoding, except that SPOP with a large count
 * rebuilds the remainder as a new set (as Redis does).
 *
 * The object pointer IS the object: the struct intset * or struct
 * listpack * (either may live inside the key's entry, entry.h
 * ENTRY_INLINE), or the struct hashmap * with its low bit set. Functions
 * that may move the structure or convert the encoding take struct
 * set_obj ** and update the pointer; the caller stores it back into its
 * entry (entry_store_obj), as with hash_obj.h. set_obj_ops tells the
 * keyspace how to handle set objects (entry.h; listed in obj_types.c).
 */
#ifndef RINGKV_SET_OBJ_H
#define RINGKV_SET_OBJ_H

#include "ringkv/common.h"
#include "ringkv/entry.h"
#include "ringkv/hashmap.h"

enum set_enc { SET_ENC_INTSET = 0, SET_ENC_LISTPACK = 1, SET_ENC_HT = 2 };

struct set_obj;   /* opaque: a tagged struct intset *, listpack * or hashmap * */

/* Longest text of a member read back from an intset or listpack integer. */
#define SET_BUF_SIZE 24

/* An empty set in the encoding Redis's setTypeCreate() picks for a first
 * member `first` and about size_hint members. */
struct set_obj *set_obj_new(struct slice first, size_t size_hint);
/* An empty intset-encoded set (Redis's createIntsetObject, for *STORE results). */
struct set_obj *set_obj_new_intset(void);
void set_obj_free(struct set_obj *s);
struct set_obj *set_obj_dup(const struct set_obj *s);

enum set_enc set_obj_enc(const struct set_obj *s);
const char *set_obj_encoding(const struct set_obj *s);   /* OBJECT ENCODING */
size_t set_obj_count(const struct set_obj *s);
size_t set_obj_memory(const struct set_obj *s);
/* Bytes the set allocates (MEMORY USAGE), a hashtable's members estimated
 * from `samples` of them. */
size_t set_obj_usage(const struct set_obj *s, size_t samples);
extern const struct obj_ops set_obj_ops;

/* Redis's setTypeMaybeConvert(): go to a hashtable at once when about
 * size_hint members are coming and the compact encoding cannot hold them. */
void set_obj_maybe_convert(struct set_obj **sp, size_t size_hint);
/* Force an encoding change (tests; only towards hashtable or intset->listpack). */
void set_obj_convert(struct set_obj **sp, enum set_enc enc);

/* Add or remove m; *sp may change (store it back). m must not point into
 * the set. */
bool set_obj_add(struct set_obj **sp, struct slice m);      /* true if added */
bool set_obj_remove(struct set_obj **sp, struct slice m);   /* true if removed */
bool set_obj_contains(const struct set_obj *s, struct slice m);

/* A uniformly chosen member using r (all bits random); the set must not be
 * empty. The slice points into the set or into buf, valid until the set changes. */
struct slice set_obj_random(const struct set_obj *s, uint64_t r, char buf[SET_BUF_SIZE]);
/* Remove a random member; its bytes are copied into *buf (len reset first). */
struct slice set_obj_pop(struct set_obj **sp, uint64_t r, struct rbuf *buf);

/* Iteration over every member; the set must not change meanwhile.
 *   struct set_iter it; set_iter_init(&it, s);
 *   for (struct slice m; set_iter_next(&it, &m);) ...                     */
struct set_iter {
    const struct set_obj *s;
    size_t pos;
    struct hashmap_iter hi;
    char buf[SET_BUF_SIZE];
};
void set_iter_init(struct set_iter *it, const struct set_obj *s);
bool set_iter_next(struct set_iter *it, struct slice *out);

/* SSCAN over a hashtable-encoded set (see hashmap_scan); compact encodings
 * return everything in one call with cursor 0 (callers iterate instead). */
uint64_t set_obj_scan(const struct set_obj *s, uint64_t cursor, size_t count,
                      void (*fn)(void *ud, struct slice m), void *ud);

#endif
