/*
 * Swiss-table groups: the control-byte primitives shared by the keyspace
 * table (src/kv/table.c) and the collections' hash map
 * (src/types/hashmap.c). Each keeps its own slots, sizing and probing; what
 * is here is only the part of a swiss table that looks at control bytes.
 *
 * Slots come in groups of SWISS_GROUP with one control byte each: empty,
 * deleted (a tombstone) or, for a full slot, the low 7 bits of the key's
 * hash (h2). A lookup loads a group's 16 control bytes into an SSE2
 * register and compares them all at once, so only the slots whose h2
 * matches are dereferenced.
 *
 * The values are the usual ones (empty 0x80, deleted 0xFE, full 0..0x7F)
 * but are stored XOR 0x80, so that zeroed memory is all empty: a table of
 * millions of slots can come from fresh zero pages and be written to only
 * where used. In memory, a full slot is a byte with the top bit set, and
 * empty and deleted are the bytes without it.
 *
 * Groups are read with unaligned loads: a group's control bytes are at
 * ctrl + g * SWISS_GROUP, wherever the array starts.
 */
#ifndef RINGKV_SWISS_H
#define RINGKV_SWISS_H

#include <emmintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SWISS_GROUP      16
#define SWISS_ALL        0xFFFFu   /* a mask of every slot of a group */
#define SWISS_EMPTY      0x80
#define SWISS_DELETED    0xFE
#define SWISS_STORED(c)  ((uint8_t)((c) ^ 0x80))

/* The control byte of a full slot: the hash's low 7 bits. */
static inline uint8_t swiss_h2(uint64_t hash) { return hash & 0x7F; }

static inline __m128i swiss_load(const uint8_t *group) {
    return _mm_loadu_si128((const __m128i *)group);
}

/* Slots of a loaded group whose control byte is c (an h2, SWISS_EMPTY or
 * SWISS_DELETED), one bit each. */
static inline unsigned swiss_match(__m128i group, uint8_t c) {
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(group, _mm_set1_epi8((char)SWISS_STORED(c))));
}

static inline unsigned swiss_empty(const uint8_t *group) {
    return swiss_match(swiss_load(group), SWISS_EMPTY);
}

static inline unsigned swiss_full(const uint8_t *group) {
    return (unsigned)_mm_movemask_epi8(swiss_load(group));
}

/* Empty or deleted: where an insert may go. */
static inline unsigned swiss_free(const uint8_t *group) {
    return swiss_full(group) ^ SWISS_ALL;
}

static inline bool swiss_is_full(uint8_t stored) { return stored & 0x80; }

/* The group holding slot i. */
static inline const uint8_t *swiss_group_of(const uint8_t *ctrl, size_t i) {
    return ctrl + (i & ~(size_t)(SWISS_GROUP - 1));
}

/* Mark slot i full with the hash's h2; returns true if it was a tombstone
 * (the caller counts them). */
static inline bool swiss_set_full(uint8_t *ctrl, size_t i, uint64_t hash) {
    bool was_deleted = ctrl[i] == SWISS_STORED(SWISS_DELETED);
    ctrl[i] = SWISS_STORED(swiss_h2(hash));
    return was_deleted;
}

/*
 * Free slot i. A group that still has an empty slot has never been full, so
 * no probe sequence runs through it and the slot can be empty again;
 * otherwise it must become a tombstone to keep later entries reachable.
 * Returns true if it left a tombstone.
 */
static inline bool swiss_erase(uint8_t *ctrl, size_t i) {
    bool tombstone = !swiss_empty(swiss_group_of(ctrl, i));
    ctrl[i] = SWISS_STORED(tombstone ? SWISS_DELETED : SWISS_EMPTY);
    return tombstone;
}

/* Mark full slot i deleted whatever its group: for moving entries out in
 * bulk, where entries further on may have probed past this group. */
static inline void swiss_set_deleted(uint8_t *ctrl, size_t i) {
    ctrl[i] = SWISS_STORED(SWISS_DELETED);
}

/* Index of the lowest set bit of a non-empty slot mask. */
static inline unsigned swiss_first(unsigned mask) { return (unsigned)__builtin_ctz(mask); }

#endif
