/*
 * What the object types share beyond struct obj_ops (entry.h): measuring
 * the memory they allocate, for MEMORY USAGE. Figures are the allocator's
 * usable sizes (malloc_usable_size), so its rounding counts, as it counts
 * in the process's memory.
 */
#ifndef RINGKV_OBJ_TYPES_H
#define RINGKV_OBJ_TYPES_H

#include "ringkv/common.h"

struct hashmap;

/* Bytes the allocator holds for a block from malloc. */
size_t obj_alloc_size(const void *p);
/* Bytes of a hashmap (hashes' and sets' hashtable encoding): its struct and
 * arrays as the map counts them, plus the elements' allocator rounding as
 * measured on `samples` of them (SIZE_MAX: all). */
size_t hashmap_usage(const struct hashmap *m, size_t samples);

#endif
