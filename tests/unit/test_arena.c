/* Entry arenas: blocks come back to the arena they came from, are reused by
 * size, never overlap, and entries built with an arena free into it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>

#include "ringkv/arena.h"
#include "ringkv/entry.h"

static void test_alloc_free_reuse(void **state) {
    (void)state;
    struct entry_arena a;
    arena_init(&a);
    void *p = arena_alloc(&a, 35);
    assert_non_null(p);
    assert_ptr_equal(arena_of(p), &a);
    assert_int_equal(a.used_bytes, 36);        /* 2-byte steps: 35 -> 36 */
    arena_free(p, 35);
    assert_int_equal(a.used_bytes, 0);
    void *q = arena_alloc(&a, 36);             /* same class: the same block again */
    assert_ptr_equal(p, q);
    void *r = arena_alloc(&a, 38);             /* other class: a new block */
    assert_ptr_not_equal(r, q);
    assert_int_equal((char *)r - (char *)q, 36);   /* right after it */
    void *s = arena_alloc(&a, 3);              /* the smallest block holds a link */
    assert_int_equal(a.used_bytes, 36 + 38 + ARENA_MIN_BLOCK);
    arena_free(s, 3);
    assert_ptr_equal(arena_alloc(&a, 1), s);
    arena_destroy(&a);
}

static void test_many_blocks_no_overlap(void **state) {
    (void)state;
    struct entry_arena a;
    arena_init(&a);
    enum { N = 100000 };
    unsigned char **blocks = malloc(N * sizeof *blocks);
    size_t *sizes = malloc(N * sizeof *sizes);
    for (size_t i = 0; i < N; i++) {
        sizes[i] = 8 + (i * 7919) % (ARENA_MAX_BLOCK - 8);
        blocks[i] = arena_alloc(&a, sizes[i]);
        memset(blocks[i], (int)(i & 0xFF), sizes[i]);
    }
    assert_true(a.chunk_count > 1);
    for (size_t i = 0; i < N; i++) {
        assert_ptr_equal(arena_of(blocks[i]), &a);
        for (size_t j = 0; j < sizes[i]; j++) assert_int_equal(blocks[i][j], (int)(i & 0xFF));
    }
    for (size_t i = 0; i < N; i += 2) arena_free(blocks[i], sizes[i]);
    size_t chunks = a.chunk_count;
    for (size_t i = 0; i < N; i += 2) blocks[i] = arena_alloc(&a, sizes[i]);
    assert_int_equal(a.chunk_count, chunks);   /* freed blocks were reused */
    free(blocks);
    free(sizes);
    arena_destroy(&a);
}

static void test_entries_use_current_arena(void **state) {
    (void)state;
    struct entry_arena a, b;
    arena_init(&a);
    arena_init(&b);
    rk_arena = &a;
    struct kv_entry *e = entry_new_string(SLICE_LIT("key:000000000001"), SLICE_LIT("value:0000000001"), NO_EXPIRE);
    assert_true(e->meta & ENTRY_ARENA);
    assert_int_equal(a.used_bytes, 38);
    e = entry_set_expire(e, 12345);              /* grows by 8: still in a */
    assert_int_equal(a.used_bytes, 46);
    rk_arena = &b;
    e = entry_rehome(e);                         /* moves to b, a is empty again */
    assert_ptr_equal(arena_of(e), &b);
    assert_int_equal(a.used_bytes, 0);
    assert_int_equal(entry_expire(e), 12345);
    assert_memory_equal(entry_key(e), "key:000000000001", 16);
    struct kv_entry *big = entry_resize_string(e, 4000);   /* beyond arena blocks: malloc */
    assert_false(big->meta & ENTRY_ARENA);
    assert_int_equal(b.used_bytes, 0);
    entry_free(big);
    rk_arena = NULL;
    struct kv_entry *m = entry_new_string(SLICE_LIT("k"), SLICE_LIT("v"), NO_EXPIRE);
    assert_false(m->meta & ENTRY_ARENA);       /* no arena: malloc */
    entry_free(m);
    arena_destroy(&a);
    arena_destroy(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_free_reuse),
        cmocka_unit_test(test_many_blocks_no_overlap),
        cmocka_unit_test(test_entries_use_current_arena),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
