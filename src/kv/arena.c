/*
 * Entry arenas; see include/ringkv/arena.h for the idea.
 *
 * Chunks are 2 MB, aligned to 2 MB, so the chunk (and its arena) of any block
 * is found by masking the block's address. A chunk starts with its header;
 * blocks are carved after it in order and never move. Freed blocks are kept
 * per size and reused first (the link to the next free block is stored in
 * the block itself, with memcpy: blocks are only 2-byte aligned); memory
 * goes back to the system when the arena is destroyed, or when it holds no
 * block at all (arena_release_if_empty).
 */
#include "ringkv/log.h"
#include "ringkv/arena.h"
#include "ringkv/common.h"
#include "ringkv/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

_Thread_local struct entry_arena *rk_arena;

struct arena_chunk {
    struct entry_arena *owner;
    struct arena_chunk *next;
};

#define CHUNK_HEADER 64   /* the header on its own cache line */

static size_t block_size(size_t size) {
    size = (size + ARENA_STEP - 1) & ~(size_t)(ARENA_STEP - 1);
    return size < ARENA_MIN_BLOCK ? ARENA_MIN_BLOCK : size;
}

static void *next_free(const void *block) {
    void *next;
    memcpy(&next, block, sizeof next);
    return next;
}

/* Put block (of class bs) on its free list. */
static void push_free(struct entry_arena *a, void *block, size_t bs) {
    memcpy(block, &a->free_list[bs / ARENA_STEP], sizeof(void *));
    a->free_list[bs / ARENA_STEP] = block;
}

void arena_init(struct entry_arena *a) { memset(a, 0, sizeof *a); }

static struct arena_chunk *chunk_new(struct entry_arena *a) {
    /* Map twice the size and trim, to get the alignment. */
    char *raw = mmap(NULL, 2 * ARENA_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        rk_log_fatal("Out Of Memory mapping a chunk of the entry arena!");
        abort();
    }
    uintptr_t start = ((uintptr_t)raw + ARENA_CHUNK - 1) & ~(uintptr_t)(ARENA_CHUNK - 1);
    if (start > (uintptr_t)raw) munmap(raw, start - (uintptr_t)raw);
    uintptr_t end = (uintptr_t)raw + 2 * ARENA_CHUNK;
    if (end > start + ARENA_CHUNK) munmap((void *)(start + ARENA_CHUNK), end - start - ARENA_CHUNK);
    struct arena_chunk *c = (struct arena_chunk *)start;
    c->owner = a;
    c->next = a->chunks;
    a->chunks = c;
    a->chunk_count++;
    return c;
}

void *arena_alloc(struct entry_arena *a, size_t size) {
    size_t bs = block_size(size);
    void **head = &a->free_list[bs / ARENA_STEP];
    a->used_bytes += bs;
    mem_count((long long)bs);
    if (*head) {
        void *p = *head;
        *head = next_free(p);
        return p;
    }
    if ((size_t)(a->bump_end - a->bump) < bs) {
        /* The tail of the old chunk is too small for this block: keep it
         * for smaller ones rather than lose it. */
        while (a->bump_end - a->bump >= ARENA_MIN_BLOCK) {
            size_t left = (size_t)(a->bump_end - a->bump);
            size_t piece = left > ARENA_MAX_BLOCK ? ARENA_MAX_BLOCK : left & ~(size_t)(ARENA_STEP - 1);
            push_free(a, a->bump, piece);
            a->bump += piece;
        }
        /* The chunk we leave is written through: only now ask for a huge
         * page, which khugepaged then makes in the background (unless
         * disable-thp, the default, turned THP off: main.c). Asked for
         * on a fresh chunk, the first touch would compact memory in the
         * fault (THP defrag "madvise") and stall the shard. */
        if (a->chunks) madvise(a->chunks, ARENA_CHUNK, MADV_HUGEPAGE);
        char *base = (char *)chunk_new(a);
        a->bump = base + CHUNK_HEADER;
        a->bump_end = base + ARENA_CHUNK;
    }
    void *p = a->bump;
    a->bump += bs;
    return p;
}

struct entry_arena *arena_of(const void *p) {
    const struct arena_chunk *c = (const struct arena_chunk *)((uintptr_t)p & ~(uintptr_t)(ARENA_CHUNK - 1));
    return c->owner;
}

void arena_free(void *p, size_t size) {
    struct entry_arena *a = arena_of(p);
    size_t bs = block_size(size);
    push_free(a, p, bs);
    a->used_bytes -= bs;
    mem_count(-(long long)bs);
}

bool arena_release_if_empty(struct entry_arena *a) {
    if (a->used_bytes || !a->chunks) return false;
    arena_destroy(a);
    return true;
}

void arena_destroy(struct entry_arena *a) {
    mem_count(-(long long)a->used_bytes);
    struct arena_chunk *c = a->chunks;
    while (c) {
        struct arena_chunk *next = c->next;
        munmap(c, ARENA_CHUNK);
        c = next;
    }
    memset(a, 0, sizeof *a);
}
