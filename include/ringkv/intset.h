/*
 * intset: the compact encoding of a set whose members are all integers
 * (OBJECT ENCODING "intset").
 *
 * A sorted array of unique signed integers, all stored in the smallest
 * width (2, 4 or 8 bytes) that holds every member, in one allocation sized
 * exactly to its contents. Adding a member that needs a wider type widens
 * every element; removing members never narrows it again (as in Redis).
 * Lookups are binary searches; adds and removes move the tail with
 * memmove, so the caller keeps sets small (Redis's set-max-intset-entries,
 * 512 by default, is the caller's business, not checked here).
 *
 * Functions that change the set may move it, hence the struct intset **.
 */
#ifndef RINGKV_INTSET_H
#define RINGKV_INTSET_H

#include "ringkv/common.h"

struct intset;

struct intset *intset_new(void);
void intset_free(struct intset *is);

/* Add v; false (and no change) if already present. */
bool intset_add(struct intset **is, int64_t v);
/* Remove v; false if it was not there. */
bool intset_remove(struct intset **is, int64_t v);
bool intset_contains(const struct intset *is, int64_t v);

size_t intset_count(const struct intset *is);
/* The element at position pos (0 = smallest); pos must be < count. */
int64_t intset_get(const struct intset *is, size_t pos);
/* A uniformly chosen element using the random number r; the set must not be empty. */
int64_t intset_random(const struct intset *is, uint64_t r);

/* Bytes per element currently used: 2, 4 or 8. */
unsigned intset_width(const struct intset *is);
/* Bytes allocated (header and array). */
size_t intset_memory(const struct intset *is);

#endif
