/*
 * The hash value object: a listpack of field,value pairs for small hashes,
 * a hashmap for big ones, with Redis 7.0's conversion rules (t_hash.c's
 * hashTypeTryConversion / hashTypeSet). See hash_obj.h.
 *
 * The encoding lives in the low bit of the pointer: both structures come
 * from malloc and are at least 8-byte aligned, so bit 0 is free. A listpack
 * pointer is stored untouched (the common case costs nothing to decode).
 */
#include "ringkv/hash_obj.h"
#include "ringkv/obj_types.h"
#include "ringkv/config.h"

#define HM_TAG ((uintptr_t)1)

static inline bool is_map(const struct hash_obj *h) { return ((uintptr_t)h & HM_TAG) != 0; }

static inline struct listpack *as_lp(const struct hash_obj *h) { return (struct listpack *)(uintptr_t)h; }
static inline struct hashmap *as_map(const struct hash_obj *h) {
    return (struct hashmap *)((uintptr_t)h & ~HM_TAG);
}
static inline struct hash_obj *from_lp(struct listpack *lp) { return (struct hash_obj *)lp; }
static inline struct hash_obj *from_map(struct hashmap *m) {
    return (struct hash_obj *)((uintptr_t)m | HM_TAG);
}

struct hash_obj *hash_new(void) { return from_lp(lp_new_forward()); }

void hash_free(struct hash_obj *h) {
    if (!h) return;
    if (is_map(h)) hashmap_free(as_map(h));
    else lp_free(as_lp(h));
}

struct hash_obj *hash_dup(const struct hash_obj *h) {
    if (!is_map(h)) {
        const struct listpack *lp = as_lp(h);
        struct listpack *n = rk_malloc(lp_bytes(lp));
        memcpy(n, lp, lp_bytes(lp));
        return from_lp(n);
    }
    const struct hashmap *m = as_map(h);
    struct hashmap *n = hashmap_new(true);
    struct hashmap_iter it = hashmap_iter_start(m);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));)
        hashmap_set(n, hm_elem_key(e), hm_elem_val(e));
    return from_map(n);
}

bool hash_is_listpack(const struct hash_obj *h) { return !is_map(h); }
const char *hash_encoding(const struct hash_obj *h) { return is_map(h) ? "hashtable" : "listpack"; }

size_t hash_len(const struct hash_obj *h) {
    return is_map(h) ? hashmap_count(as_map(h)) : lp_count(as_lp(h)) / 2;
}

struct listpack *hash_lp(const struct hash_obj *h) { return is_map(h) ? NULL : as_lp(h); }
struct hashmap *hash_map(const struct hash_obj *h) { return is_map(h) ? as_map(h) : NULL; }

/* Position of field's element in a listpack hash, LP_NONE if absent. */
static size_t lp_field(const struct listpack *lp, struct slice field) {
    size_t first = lp_first(lp);
    return first == LP_NONE ? LP_NONE : lp_find(lp, first, field, 1);
}

static struct slice lp_text(const struct listpack *lp, size_t pos, char buf[HASH_BUF_SIZE]) {
    struct lp_value v;
    lp_get(lp, pos, &v);
    return lp_value_str(&v, buf);
}

bool hash_get(const struct hash_obj *h, struct slice field, struct slice *val, char buf[HASH_BUF_SIZE]) {
    if (is_map(h))
        return hashmap_get(as_map(h), field, val);
    const struct listpack *lp = as_lp(h);
    size_t pos = lp_field(lp, field);
    if (pos == LP_NONE) return false;
    *val = lp_text(lp, lp_next(lp, pos), buf);
    return true;
}

bool hash_exists(const struct hash_obj *h, struct slice field) {
    if (is_map(h))
        return hashmap_find(as_map(h), field) != NULL;
    return lp_field(as_lp(h), field) != LP_NONE;
}

void hash_convert(struct hash_obj **hp) {
    if (is_map(*hp)) return;
    struct listpack *lp = as_lp(*hp);
    struct hashmap *m = hashmap_new(true);
    char fbuf[HASH_BUF_SIZE], vbuf[HASH_BUF_SIZE];
    for (size_t pos = lp_first(lp); pos != LP_NONE;) {
        size_t vpos = lp_next(lp, pos);
        struct slice f = lp_text(lp, pos, fbuf), v = lp_text(lp, vpos, vbuf);
        hashmap_set(m, f, v);
        pos = lp_next(lp, vpos);
    }
    lp_free(lp);
    *hp = from_map(m);
}

static inline size_t max_value(void) {
    long long v = CONFIG_GET(hash_max_listpack_value);
    return v < 0 ? 0 : (size_t)v;
}

void hash_try_conversion(struct hash_obj **hp, const struct slice *args, size_t n) {
    if (is_map(*hp)) return;
    size_t maxv = max_value(), sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (args[i].len > maxv) {
            hash_convert(hp);
            return;
        }
        sum += args[i].len;
    }
    if (!lp_safe_to_add(as_lp(*hp), sum))
        hash_convert(hp);
}

bool hash_set(struct hash_obj **hp, struct slice field, struct slice val) {
    if (!is_map(*hp)) {
        size_t maxv = max_value();
        if (field.len > maxv || val.len > maxv ||
            !lp_safe_to_add(as_lp(*hp), lp_encoded_size(field) + lp_encoded_size(val)))
            hash_convert(hp);
    }
    if (is_map(*hp))
        return hashmap_set(as_map(*hp), field, val);

    struct listpack *lp = as_lp(*hp);
    size_t pos = lp_field(lp, field);
    bool inserted = pos == LP_NONE;
    if (inserted) {
        lp_push(&lp, field, true);
        lp_push(&lp, val, true);
    } else {
        lp_replace(&lp, lp_next(lp, pos), val);
    }
    *hp = from_lp(lp);
    long long maxe = CONFIG_GET(hash_max_listpack_entries);
    if (inserted && (long long)(lp_count(lp) / 2) > maxe)
        hash_convert(hp);
    return inserted;
}

bool hash_delete(struct hash_obj **hp, struct slice field) {
    if (is_map(*hp))
        return hashmap_delete(as_map(*hp), field);
    struct listpack *lp = as_lp(*hp);
    size_t pos = lp_field(lp, field);
    if (pos == LP_NONE) return false;
    lp_delete(&lp, pos, 2);
    *hp = from_lp(lp);
    return true;
}

void hash_iter_init(struct hash_iter *it, const struct hash_obj *h) {
    it->h = h;
    if (is_map(h)) {
        it->hi = hashmap_iter_start(as_map(h));
        it->pos = LP_NONE;
    } else {
        it->pos = lp_first(as_lp(h));
    }
}

bool hash_iter_next(struct hash_iter *it, struct slice *field, struct slice *val) {
    if (is_map(it->h)) {
        const struct hm_elem *e = hashmap_iter_next(&it->hi);
        if (!e) return false;
        *field = hm_elem_key(e);
        *val = hm_elem_val(e);
        return true;
    }
    const struct listpack *lp = as_lp(it->h);
    if (it->pos == LP_NONE) return false;
    size_t vpos = lp_next(lp, it->pos);
    *field = lp_text(lp, it->pos, it->fbuf);
    *val = lp_text(lp, vpos, it->vbuf);
    it->pos = lp_next(lp, vpos);
    return true;
}

/* ------------------------------------------------------------ memory */

size_t hash_usage(const struct hash_obj *h, size_t samples) {
    if (!is_map(h)) return obj_alloc_size(as_lp(h));
    return hashmap_usage(as_map(h), samples);
}

/* ------------------------------------------------------------ ops */

static void ops_free(void *obj) { hash_free(obj); }
static void *ops_dup(const void *obj) { return hash_dup(obj); }
static const char *ops_encoding(const void *obj) { return hash_encoding(obj); }
static size_t ops_inline_size(const void *obj) { return is_map(obj) ? 0 : lp_bytes(as_lp(obj)); }
static size_t ops_usage(const void *obj, size_t samples) { return hash_usage(obj, samples); }

const struct obj_ops hash_obj_ops = { ops_free, ops_dup, ops_encoding, ops_inline_size, ops_usage };
