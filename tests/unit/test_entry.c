/*
 * Unit tests for kv_entry: the two header forms and their boundary, the
 * exact allocation size of the common small case, expiry round trips,
 * amortised string growth, value replacement, re-keying and the object hooks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ringkv/entry.h"
#include "ringkv/arena.h"

static char *filled(size_t n, char c) {
    char *p = malloc(n + 1);
    for (size_t i = 0; i < n; i++) p[i] = (char)(c + i % 23);
    p[n] = 0;
    return p;
}

static void assert_kv(const struct kv_entry *e, struct slice k, struct slice v) {
    assert_int_equal(entry_key_len(e), k.len);
    assert_memory_equal(entry_key(e), k.ptr, k.len);
    assert_int_equal(entry_val_len(e), v.len);
    if (v.len) assert_memory_equal(entry_val_slice(e).ptr, v.ptr, v.len);
}

static void test_small_entry_is_38_bytes(void **state) {
    (void)state;
    struct slice k = SLICE_LIT("0123456789abcdef"), v = SLICE_LIT("fedcba9876543210");
    struct kv_entry *e = entry_new_string(k, v, NO_EXPIRE);
    assert_int_equal(entry_alloc_size(e), 38);
    assert_false(e->meta & ENTRY_WIDE);
    assert_false(entry_has_expire(e));
    assert_int_equal(entry_type(e), OBJ_STRING);
    assert_int_equal(entry_expire(e), NO_EXPIRE);
    assert_kv(e, k, v);
    entry_free(e);
}

static void test_empty_key_and_value(void **state) {
    (void)state;
    struct kv_entry *e = entry_new_string((struct slice){ "", 0 }, (struct slice){ "", 0 },
                                          NO_EXPIRE);
    assert_int_equal(entry_alloc_size(e), 6);
    assert_int_equal(entry_key_len(e), 0);
    assert_int_equal(entry_val_len(e), 0);
    entry_free(e);
}

/* 255 still fits the short header; 256 in either length switches to wide. */
static void test_boundary_lengths(void **state) {
    (void)state;
    char *b255 = filled(255, 'a'), *b256 = filled(256, 'A');
    struct slice s255 = { b255, 255 }, s256 = { b256, 256 }, one = SLICE_LIT("x");

    struct kv_entry *e = entry_new_string(s255, s255, NO_EXPIRE);
    assert_false(e->meta & ENTRY_WIDE);
    assert_int_equal(entry_alloc_size(e), 6 + 255 + 255);
    assert_kv(e, s255, s255);
    entry_free(e);

    e = entry_new_string(s256, one, NO_EXPIRE);
    assert_true(e->meta & ENTRY_WIDE);
    assert_int_equal(entry_alloc_size(e), 16 + 256 + 1);
    assert_kv(e, s256, one);
    entry_free(e);

    e = entry_new_string(one, s256, 1234);
    assert_true(e->meta & ENTRY_WIDE);
    assert_int_equal(entry_alloc_size(e), 16 + 8 + 1 + 256);
    assert_int_equal(entry_expire(e), 1234);
    assert_kv(e, one, s256);
    entry_free(e);

    e = entry_new_string(s255, s256, NO_EXPIRE);
    assert_true(e->meta & ENTRY_WIDE);
    assert_kv(e, s255, s256);
    entry_free(e);
    free(b255);
    free(b256);
}

static void expiry_round_trip(struct slice k, struct slice v) {
    struct kv_entry *e = entry_new_string(k, v, NO_EXPIRE);
    size_t base = entry_alloc_size(e);
    unsigned form = e->meta & ENTRY_WIDE;

    e = entry_set_expire(e, NO_EXPIRE);            /* nothing to clear */
    assert_false(entry_has_expire(e));
    assert_int_equal(entry_alloc_size(e), base);

    e = entry_set_expire(e, 1700000000123LL);
    assert_true(entry_has_expire(e));
    assert_int_equal(entry_expire(e), 1700000000123LL);
    assert_int_equal(entry_alloc_size(e), base + 8);
    assert_int_equal(e->meta & ENTRY_WIDE, form);
    assert_kv(e, k, v);

    struct kv_entry *same = entry_set_expire(e, 42);   /* updating is in place */
    assert_ptr_equal(same, e);
    assert_int_equal(entry_expire(e), 42);
    assert_kv(e, k, v);

    e = entry_set_expire(e, NO_EXPIRE);
    assert_false(entry_has_expire(e));
    assert_int_equal(entry_expire(e), NO_EXPIRE);
    assert_int_equal(entry_alloc_size(e), base);
    assert_kv(e, k, v);
    entry_free(e);
}

static void test_expiry_round_trip(void **state) {
    (void)state;
    char *big = filled(1000, 'k');
    expiry_round_trip(SLICE_LIT("key"), SLICE_LIT("value"));
    expiry_round_trip(SLICE_LIT("0123456789abcdef"), SLICE_LIT("fedcba9876543210"));
    expiry_round_trip((struct slice){ big, 1000 }, SLICE_LIT("v"));
    expiry_round_trip(SLICE_LIT("k"), (struct slice){ big, 700 });
    expiry_round_trip((struct slice){ "", 0 }, (struct slice){ "", 0 });
    free(big);
}

static void test_resize_keeps_contents_and_expiry(void **state) {
    (void)state;
    struct slice k = SLICE_LIT("counter");
    struct kv_entry *e = entry_new_string(k, SLICE_LIT("hello"), 999);
    e = entry_resize_string(e, 11);
    assert_true(e->meta & ENTRY_WIDE);
    assert_true(e->meta & ENTRY_RAW);
    assert_int_equal(entry_val_len(e), 11);
    assert_memory_equal(entry_val(e), "hello", 5);
    memcpy(entry_val(e) + 5, " world", 6);
    assert_kv(e, k, SLICE_LIT("hello world"));
    assert_int_equal(entry_expire(e), 999);

    /* Spare capacity: growing a little more does not move the entry. */
    size_t cap_size = entry_alloc_size(e);
    assert_true(cap_size > 13 + 8 + 7 + 11);
    struct kv_entry *same = entry_resize_string(e, 12);
    assert_ptr_equal(same, e);
    assert_int_equal(entry_alloc_size(e), cap_size);

    /* Shrinking keeps the prefix. */
    e = entry_resize_string(e, 4);
    assert_kv(e, k, SLICE_LIT("hell"));

    /* Expiry changes on a wide entry with spare capacity keep it intact. */
    e = entry_set_expire(e, NO_EXPIRE);
    assert_kv(e, k, SLICE_LIT("hell"));
    e = entry_set_expire(e, 5);
    assert_kv(e, k, SLICE_LIT("hell"));
    assert_int_equal(entry_expire(e), 5);
    entry_free(e);
}

/* APPEND one byte at a time: capacity must grow geometrically, so the bytes
 * moved by all reallocations stay within a small multiple of the final size. */
static void test_append_loop_is_amortised(void **state) {
    (void)state;
    const size_t n = 200000;
    struct kv_entry *e = entry_new_string(SLICE_LIT("log"), SLICE_LIT(""), NO_EXPIRE);
    size_t grows = 0, moved = 0, size = entry_alloc_size(e);
    for (size_t len = 1; len <= n; len++) {
        e = entry_resize_string(e, len);
        entry_val(e)[len - 1] = (char)('a' + len % 26);
        if (entry_alloc_size(e) != size) {
            grows++;
            moved += size;
            size = entry_alloc_size(e);
        }
    }
    assert_int_equal(entry_val_len(e), n);
    for (size_t i = 0; i < n; i++) assert_int_equal(entry_val(e)[i], 'a' + (i + 1) % 26);
    assert_true(grows < 40);
    assert_true(moved < 4 * n);
    entry_free(e);
}

static void test_set_string(void **state) {
    (void)state;
    struct slice k = SLICE_LIT("name");
    struct kv_entry *e = entry_new_string(k, SLICE_LIT("alice"), 77);
    struct kv_entry *same = entry_set_string(e, SLICE_LIT("carol"));
    assert_ptr_equal(same, e);                      /* same size: in place */
    assert_kv(e, k, SLICE_LIT("carol"));

    e = entry_set_string(e, SLICE_LIT("bob"));
    assert_kv(e, k, SLICE_LIT("bob"));
    assert_int_equal(entry_expire(e), 77);
    assert_int_equal(entry_alloc_size(e), 6 + 8 + 4 + 3);

    char *big = filled(5000, 'q');
    e = entry_set_string(e, (struct slice){ big, 5000 });
    assert_true(e->meta & ENTRY_WIDE);
    assert_kv(e, k, (struct slice){ big, 5000 });
    same = entry_set_string(e, (struct slice){ big + 1, 4000 });
    assert_ptr_equal(same, e);                      /* fits the capacity well enough */
    assert_kv(e, k, (struct slice){ big + 1, 4000 });

    /* A raw string set back to a small value becomes a tight short entry. */
    e = entry_resize_string(e, 4500);
    e = entry_set_string(e, SLICE_LIT("tiny"));
    assert_false(e->meta & (ENTRY_WIDE | ENTRY_RAW));
    assert_int_equal(entry_alloc_size(e), 6 + 8 + 4 + 4);
    assert_kv(e, k, SLICE_LIT("tiny"));
    assert_int_equal(entry_expire(e), 77);
    entry_free(e);
    free(big);
}

/* A fake object type to observe the hooks. */
struct fake { int id; int *frees; };
static int dups;
static void fake_free(void *o) { struct fake *f = o; (*f->frees)++; free(f); }
static void *fake_dup(const void *o) {
    struct fake *f = malloc(sizeof *f);
    *f = *(const struct fake *)o;
    f->id += 1000;
    dups++;
    return f;
}
static const struct obj_ops fake_ops = { fake_free, fake_dup, NULL, NULL, NULL };

static void test_objects_and_hooks(void **state) {
    (void)state;
    int frees = 0;
    struct fake *f = malloc(sizeof *f);
    *f = (struct fake){ 7, &frees };

    /* the list type registers its own hooks: borrow its slot */
    const struct obj_ops *saved = obj_ops_by_type[OBJ_LIST];
    obj_ops_by_type[OBJ_LIST] = &fake_ops;

    struct kv_entry *e = entry_new_obj(SLICE_LIT("mylist"), OBJ_LIST, f, NO_EXPIRE);
    assert_int_equal(entry_type(e), OBJ_LIST);
    assert_int_equal(entry_val_len(e), sizeof(void *));
    assert_int_equal(entry_alloc_size(e), 6 + 6 + 8);
    assert_ptr_equal(entry_obj(e), f);

    e = entry_set_expire(e, 100);
    assert_ptr_equal(entry_obj(e), f);
    assert_int_equal(entry_type(e), OBJ_LIST);

    /* keep_obj=false duplicates through the hook. */
    struct kv_entry *copy = entry_with_key(e, SLICE_LIT("copy"), false);
    assert_int_equal(dups, 1);
    assert_ptr_not_equal(entry_obj(copy), f);
    assert_int_equal(((struct fake *)entry_obj(copy))->id, 1007);
    assert_int_equal(entry_expire(copy), 100);
    assert_memory_equal(entry_key(copy), "copy", 4);

    /* keep_obj=true moves the pointer; the old shell is released with free(). */
    struct kv_entry *moved = entry_with_key(e, SLICE_LIT("renamed"), true);
    assert_int_equal(dups, 1);
    assert_ptr_equal(entry_obj(moved), f);
    assert_int_equal(entry_type(moved), OBJ_LIST);
    free(e);
    assert_int_equal(frees, 0);

    entry_free(moved);
    assert_int_equal(frees, 1);
    entry_free(copy);
    assert_int_equal(frees, 2);

    /* A long key makes an object entry wide. */
    char *k = filled(300, 'z');
    struct fake *g = malloc(sizeof *g);
    *g = (struct fake){ 1, &frees };
    e = entry_new_obj((struct slice){ k, 300 }, OBJ_LIST, g, NO_EXPIRE);
    assert_true(e->meta & ENTRY_WIDE);
    assert_ptr_equal(entry_obj(e), g);
    assert_int_equal(entry_alloc_size(e), 16 + 300 + 8);
    entry_free(e);
    assert_int_equal(frees, 3);
    free(k);

    /* Types without hooks are left alone (no crash, nothing freed). */
    obj_ops_by_type[OBJ_LIST] = saved;
    enum { UNUSED_TYPE = 6 };   /* no type uses it: no hooks */
    assert_null(obj_ops_by_type[UNUSED_TYPE]);
    int dummy;
    e = entry_new_obj(SLICE_LIT("s"), UNUSED_TYPE, &dummy, NO_EXPIRE);
    copy = entry_with_key(e, SLICE_LIT("t"), false);
    assert_ptr_equal(entry_obj(copy), &dummy);
    entry_free(e);
    entry_free(copy);
}

/* A flat object that may live inline: its size in its first 4 bytes, then
 * a fill byte repeated. The set type's slot is borrowed for it. */
struct __attribute__((packed)) blob { uint32_t bytes; unsigned char fill[]; };
static int blob_frees, blob_dups;
static struct blob *blob_new(size_t bytes, unsigned char c) {
    struct blob *b = malloc(bytes);
    b->bytes = (uint32_t)bytes;
    memset(b->fill, c, bytes - sizeof *b);
    return b;
}
static void blob_free(void *o) { blob_frees++; free(o); }
static void *blob_dup(const void *o) {
    const struct blob *b = o;
    blob_dups++;
    struct blob *n = malloc(b->bytes);
    memcpy(n, b, b->bytes);
    return n;
}
static size_t blob_size(const void *o) { return ((const struct blob *)o)->bytes; }
static const struct obj_ops blob_ops = { blob_free, blob_dup, NULL, blob_size, NULL };

static void assert_blob(const struct kv_entry *e, size_t bytes, unsigned char c) {
    const struct blob *b = entry_obj(e);
    assert_int_equal((uintptr_t)b % 2, 0);
    assert_int_equal(b->bytes, bytes);
    for (size_t i = 0; i < bytes - sizeof *b; i++) assert_int_equal(b->fill[i], c);
}

static void test_inline_objects(void **state) {
    (void)state;
    const struct obj_ops *saved = obj_ops_by_type[OBJ_SET];
    obj_ops_by_type[OBJ_SET] = &blob_ops;
    blob_frees = blob_dups = 0;

    /* A small body goes inline: one block, padded to an even address. */
    struct kv_entry *e = entry_new_obj(SLICE_LIT("key:1"), OBJ_SET, blob_new(40, 'a'), NO_EXPIRE);
    assert_true(e->meta & ENTRY_INLINE);
    assert_int_equal(blob_frees, 1);                 /* the original, copied in */
    assert_int_equal(entry_alloc_size(e), 6 + 5 + 1 + 40);
    assert_blob(e, 40, 'a');

    /* A write works on a copy the entry points to until it is stored. */
    struct blob *w = entry_obj_for_write(e);
    assert_int_equal(blob_dups, 1);
    assert_false(e->meta & ENTRY_INLINE);
    assert_ptr_equal(entry_obj(e), w);
    memset(w->fill, 'b', w->bytes - sizeof *w);
    struct kv_entry *same = entry_store_obj(e, w);   /* same size: back in place */
    assert_ptr_equal(same, e);
    assert_true(e->meta & ENTRY_INLINE);
    assert_int_equal(blob_frees, 2);
    assert_blob(e, 40, 'b');

    /* Growing moves the entry and keeps key and expiry. */
    e = entry_set_expire(e, 4242);
    assert_blob(e, 40, 'b');
    w = entry_obj_for_write(e);
    w = realloc(w, 200);
    w->bytes = 200;
    memset(w->fill, 'c', 200 - sizeof *w);
    e = entry_store_obj(e, w);
    assert_true(e->meta & ENTRY_INLINE);
    assert_int_equal(entry_expire(e), 4242);
    assert_memory_equal(entry_key(e), "key:1", 5);
    assert_blob(e, 200, 'c');

    /* Past ENTRY_INLINE_MAX the object is kept by pointer, and back. */
    w = entry_obj_for_write(e);
    w = realloc(w, ENTRY_INLINE_MAX + 1);
    w->bytes = ENTRY_INLINE_MAX + 1;
    memset(w->fill, 'd', ENTRY_INLINE_MAX + 1 - sizeof *w);
    e = entry_store_obj(e, w);
    assert_false(e->meta & ENTRY_INLINE);
    assert_ptr_equal(entry_obj(e), w);
    assert_int_equal(entry_alloc_size(e), 6 + 8 + 5 + 8);
    w = entry_obj_for_write(e);                      /* not inline: no copy */
    assert_ptr_equal(entry_obj(e), w);
    w = realloc(w, 16);
    w->bytes = 16;
    e = entry_store_obj(e, w);
    assert_true(e->meta & ENTRY_INLINE);
    assert_blob(e, 16, 'd');
    e = entry_set_expire(e, NO_EXPIRE);
    assert_blob(e, 16, 'd');

    /* Re-keying copies the body, at the new key's alignment. */
    int frees_before = blob_frees;
    struct kv_entry *copy = entry_with_key(e, SLICE_LIT("k2"), false);
    struct kv_entry *moved = entry_with_key(e, SLICE_LIT("longer-key"), true);
    entry_release(e);
    assert_true(copy->meta & ENTRY_INLINE);
    assert_blob(copy, 16, 'd');
    assert_blob(moved, 16, 'd');
    assert_memory_equal(entry_key(moved), "longer-key", 10);

    /* A long key makes the entry wide; the body stays aligned. */
    char *k = filled(300, 'z');
    struct kv_entry *wide = entry_new_obj((struct slice){ k, 300 }, OBJ_SET, blob_new(24, 'w'), 77);
    assert_true(wide->meta & ENTRY_WIDE);
    assert_true(wide->meta & ENTRY_INLINE);
    assert_blob(wide, 24, 'w');
    free(k);

    /* A replacement stays in its entry's arena, wherever rk_arena points
     * (a command on keys of two shards). */
    struct entry_arena home, other;
    arena_init(&home);
    arena_init(&other);
    rk_arena = &home;
    struct kv_entry *ae = entry_new_obj(SLICE_LIT("a"), OBJ_SET, blob_new(16, 'h'), NO_EXPIRE);
    assert_ptr_equal(arena_of(ae), &home);
    rk_arena = &other;
    w = entry_obj_for_write(ae);
    w = realloc(w, 100);
    w->bytes = 100;
    memset(w->fill, 'i', 100 - sizeof *w);
    ae = entry_store_obj(ae, w);
    assert_ptr_equal(arena_of(ae), &home);
    assert_ptr_equal(rk_arena, &other);
    assert_blob(ae, 100, 'i');
    entry_free(ae);
    assert_int_equal(home.used_bytes, 0);
    assert_int_equal(other.used_bytes, 0);
    rk_arena = NULL;
    arena_destroy(&home);
    arena_destroy(&other);

    /* Freeing an inline entry frees no object. */
    frees_before = blob_frees;
    entry_free(copy);
    entry_free(moved);
    entry_free(wide);
    assert_int_equal(blob_frees, frees_before);
    obj_ops_by_type[OBJ_SET] = saved;
}

static void test_with_key_string(void **state) {
    (void)state;
    char *big = filled(600, 'v');
    struct kv_entry *e = entry_new_string(SLICE_LIT("old"), (struct slice){ big, 600 }, 31337);
    struct kv_entry *n = entry_with_key(e, SLICE_LIT("brand-new-key"), true);
    assert_kv(n, SLICE_LIT("brand-new-key"), (struct slice){ big, 600 });
    assert_int_equal(entry_expire(n), 31337);
    assert_kv(e, SLICE_LIT("old"), (struct slice){ big, 600 });   /* source untouched */
    entry_free(e);
    entry_free(n);

    /* A raw string with slack is copied tightly and stays raw. */
    e = entry_new_string(SLICE_LIT("a"), SLICE_LIT("xy"), NO_EXPIRE);
    e = entry_resize_string(e, 3);
    entry_val(e)[2] = 'z';
    n = entry_with_key(e, SLICE_LIT("0123456789abcdef"), false);
    assert_kv(n, SLICE_LIT("0123456789abcdef"), SLICE_LIT("xyz"));
    assert_true(n->meta & ENTRY_RAW);
    assert_int_equal(entry_alloc_size(n), 6 + 16 + 3);
    entry_free(e);
    entry_free(n);
    free(big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_entry_is_38_bytes),
        cmocka_unit_test(test_empty_key_and_value),
        cmocka_unit_test(test_boundary_lengths),
        cmocka_unit_test(test_expiry_round_trip),
        cmocka_unit_test(test_resize_keeps_contents_and_expiry),
        cmocka_unit_test(test_append_loop_is_amortised),
        cmocka_unit_test(test_set_string),
        cmocka_unit_test(test_objects_and_hooks),
        cmocka_unit_test(test_inline_objects),
        cmocka_unit_test(test_with_key_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
