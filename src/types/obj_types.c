/*
 * The object types, by entry type: how the keyspace frees, copies,
 * describes and measures the objects of each (entry.h, struct obj_ops).
 * Each data-type module exports its ops; this list is the one place that
 * names them all. Strings have none: their bytes are the entry's own.
 *
 * Also what the types share for MEMORY USAGE (obj_types.h).
 */
#include <malloc.h>

#include "ringkv/obj_types.h"
#include "ringkv/entry.h"
#include "ringkv/hash_obj.h"
#include "ringkv/hashmap.h"
#include "ringkv/list_obj.h"
#include "ringkv/set_obj.h"
#include "ringkv/stream.h"
#include "ringkv/zset_obj.h"

const struct obj_ops *obj_ops_by_type[8] = {
    [OBJ_LIST] = &list_obj_ops,
    [OBJ_SET] = &set_obj_ops,
    [OBJ_ZSET] = &zset_obj_ops,
    [OBJ_HASH] = &hash_obj_ops,
    [OBJ_STREAM] = &stream_obj_ops,
};

size_t obj_alloc_size(const void *p) {
    return malloc_usable_size((void *)p);
}

/* hashmap_memory() is exact but counts the bytes asked of the allocator;
 * the rounding of the elements, one allocation each, is what it leaves
 * out, so a sample of them measures it, as Redis samples dict entries. */
size_t hashmap_usage(const struct hashmap *m, size_t samples) {
    size_t n = 0, extra = 0;
    struct hashmap_iter it = hashmap_iter_start(m);
    for (const struct hm_elem *e; n < samples && (e = hashmap_iter_next(&it)); n++)
        extra += obj_alloc_size(e) - hm_elem_memory(e);
    size_t count = hashmap_count(m);
    return hashmap_memory(m) + (n ? (size_t)((double)extra / (double)n * (double)count) : 0);
}
