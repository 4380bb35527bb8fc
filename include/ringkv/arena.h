/*
 * Entry arenas: where key-value entries live.
 *
 * Entries are small and numerous, so the allocator's rounding decides the
 * memory per key: a 35-byte entry (16-byte key, 16-byte value) costs 48
 * bytes in mimalloc's, jemalloc's or glibc's size classes. An arena hands out
 * blocks in 2-byte steps up to ARENA_MAX_BLOCK (so 36 bytes here; at least
 * ARENA_MIN_BLOCK, room for a free-list link) by bumping a pointer through
 * 2 MB chunks, and keeps freed blocks on one free list per size. Larger
 * entries go to malloc. Blocks are only 2-byte aligned: entries read their
 * fields with memcpy, and an object kept inline in one needs no more (see
 * entry.h).
 *
 * Chunks are 2 MB and ask for transparent huge pages: lookups touch entries
 * at random, and with 4 KB pages each would also cost a TLB miss (only with
 * disable-thp no: by default the process has THP off).
 *
 * Each shard owns one arena, and an entry lives in the arena of the shard
 * whose table holds it. Only a thread that may touch that shard's keyspace
 * (its owner, or a transaction holding it) allocates or frees there, so the
 * arena needs no locks. rk_arena names the arena new entries come from: a
 * worker's own, switched by db.c to the owning shard's while a transaction
 * works on several shards. A chunk's header records its arena, so a block is
 * always freed to the arena it came from.
 */
#ifndef RINGKV_ARENA_H
#define RINGKV_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARENA_MAX_BLOCK 512
#define ARENA_MIN_BLOCK 8
#define ARENA_STEP      2
#define ARENA_CHUNK     ((size_t)2 << 20)   /* one huge page */

struct arena_chunk;

struct entry_arena {
    void *free_list[ARENA_MAX_BLOCK / ARENA_STEP + 1];   /* by size / ARENA_STEP */
    char *bump, *bump_end;
    struct arena_chunk *chunks;
    size_t chunk_count;
    size_t used_bytes;                           /* blocks handed out, not freed */
};

extern _Thread_local struct entry_arena *rk_arena;

void arena_init(struct entry_arena *a);
void arena_destroy(struct entry_arena *a);   /* frees every chunk at once */
/* An arena with no block handed out gives all its chunks back to the
 * system (after FLUSHALL, or once every key of the shard went): its free
 * lists only point into those chunks. Returns whether it did. */
bool arena_release_if_empty(struct entry_arena *a);

/* A block of size bytes (size <= ARENA_MAX_BLOCK) from arena a. */
void *arena_alloc(struct entry_arena *a, size_t size);
/* Give back a block of that size to the arena it came from. */
void arena_free(void *p, size_t size);
struct entry_arena *arena_of(const void *p);

#endif
