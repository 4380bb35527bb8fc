/*
 * Keyspace entries: one allocation per key holding header, expiry, key and
 * value (see include/ringkv/entry.h for the byte layout).
 *
 * The point of the layout is to make the common case small: a key and value
 * both shorter than 256 bytes get a 6-byte header (3 of them the access
 * stamp) and no padding, so a 16-byte key with a 16-byte value is a
 * 38-byte block of the shard's arena (arena.h). A TTL adds 8 bytes only to keys that have one.
 *
 * An entry rebuilt for a change of its own (entry_set_string,
 * entry_resize_string, entry_store_obj, entry_set_expire) keeps its
 * ENTRY_SNAP bit: whether a running snapshot has saved it (db.h).
 *
 * Strings that are edited in place (APPEND, SETRANGE) switch to the wide
 * header, which carries a value capacity, so that growing them repeatedly
 * reallocates geometrically rather than once per edit. Everything else
 * builds a fresh, tight entry: an entry is never larger than it needs to be
 * unless it has been edited in place.
 *
 * Non-string types keep an 8-byte object pointer as their value; the module
 * that owns the type registers how to free and copy the object in
 * obj_ops_by_type. Small flat objects (obj_ops.inline_size) live inline
 * instead. A write works on a copy of such a body, which the entry points to
 * meanwhile (its block keeps the inline size, which always has room for the
 * pointer), and entry_store_obj copies the result back in: every exit of a
 * command leaves a valid entry, and a command that never stores only costs
 * the key its compactness until its next write.
 */
#include <stdlib.h>
#include <stdio.h>

#include "ringkv/log.h"
#include "ringkv/entry.h"
#include "ringkv/arena.h"

#define SHORT_HDR 6
#define WIDE_HDR  16
#define SHORT_MAX 255

_Thread_local uint32_t rk_new_stamp;

/* ---------------------------------------------------------------- layout */

static size_t entry_vcap(const struct kv_entry *e) {
    if (e->meta & ENTRY_WIDE) { uint32_t v; memcpy(&v, e->rest + 8, 4); return v; }
    return e->rest[1];
}

static void entry_set_lengths(struct kv_entry *e, size_t klen, size_t vlen, size_t vcap) {
    if (e->meta & ENTRY_WIDE) {
        uint32_t k = (uint32_t)klen, v = (uint32_t)vlen, c = (uint32_t)vcap;
        memcpy(e->rest, &k, 4);
        memcpy(e->rest + 4, &v, 4);
        memcpy(e->rest + 8, &c, 4);
    } else {
        e->rest[0] = (uint8_t)klen;
        e->rest[1] = (uint8_t)vlen;
    }
}

/* Offset of the key, that is the size of everything before it. */
static size_t entry_prefix(unsigned meta) {
    return ((meta & ENTRY_WIDE) ? WIDE_HDR : SHORT_HDR) + ((meta & ENTRY_EXPIRE) ? 8 : 0);
}

size_t entry_alloc_size(const struct kv_entry *e) {
    return entry_prefix(e->meta) + entry_key_len(e) + entry_vcap(e);
}

static void check_len(size_t n) {
    /* Requests are bounded far below this (proto-max-bulk-len); an entry
     * that cannot describe its own size is a bug upstream. */
    if (RK_UNLIKELY(n > UINT32_MAX)) {
        rk_log(LL_WARNING, "entry field of %zu bytes is too large", n);
        abort();
    }
}

/*
 * Blocks: from the current arena when there is one and the entry is small,
 * else from malloc. ENTRY_ARENA in the meta byte says which, so the block
 * goes back to the right place.
 */
static struct kv_entry *block_alloc(size_t size, unsigned *meta) {
    if (rk_arena && size <= ARENA_MAX_BLOCK) {
        *meta |= ENTRY_ARENA;
        return arena_alloc(rk_arena, size);
    }
    *meta &= ~(unsigned)ENTRY_ARENA;
    return rk_malloc(size);
}

static void block_free(struct kv_entry *e, size_t size) {
    if (e->meta & ENTRY_ARENA) arena_free(e, size);
    else free(e);
}

/* Move the entry to a block of new_size bytes, keeping the first `keep`. */
static struct kv_entry *block_resize(struct kv_entry *e, size_t old_size, size_t new_size, size_t keep) {
    if (!(e->meta & ENTRY_ARENA) && (!rk_arena || new_size > ARENA_MAX_BLOCK))
        return rk_realloc(e, new_size);
    unsigned meta = e->meta;
    struct kv_entry *n = block_alloc(new_size, &meta);
    memcpy(n, e, keep);
    n->meta = (uint8_t)meta;
    block_free(e, old_size);
    return n;
}

/*
 * Allocate an entry with key and expiry written and room for vcap value
 * bytes, of which vlen count. The short form is used unless a length does
 * not fit a byte or the caller asks for ENTRY_WIDE (it wants a capacity).
 */
static struct kv_entry *entry_alloc(unsigned flags, struct slice key, size_t vlen,
                                    size_t vcap, long long expire_at_ms) {
    check_len(key.len);
    check_len(vcap);
    bool wide = (flags & ENTRY_WIDE) || key.len > SHORT_MAX || vcap > SHORT_MAX;
    unsigned meta = flags & (ENTRY_TYPE_MASK | ENTRY_RAW | ENTRY_INLINE);
    if (wide) meta |= ENTRY_WIDE;
    else vcap = vlen;
    if (expire_at_ms != NO_EXPIRE) meta |= ENTRY_EXPIRE;

    size_t prefix = entry_prefix(meta);
    struct kv_entry *e = block_alloc(prefix + key.len + vcap, &meta);
    e->meta = (uint8_t)meta;
    entry_set_lengths(e, key.len, vlen, vcap);
    entry_set_stamp(e, rk_new_stamp);
    if (meta & ENTRY_EXPIRE)
        memcpy((char *)e + prefix - 8, &expire_at_ms, 8);
    if (key.len) memcpy((char *)e + prefix, key.ptr, key.len);
    return e;
}

/* ---------------------------------------------------------------- create */

struct kv_entry *entry_new_string(struct slice key, struct slice val, long long expire_at_ms) {
    struct kv_entry *e = entry_alloc(OBJ_STRING, key, val.len, val.len, expire_at_ms);
    if (val.len) memcpy(entry_val(e), val.ptr, val.len);
    return e;
}

struct kv_entry *entry_new_string_len(struct slice key, size_t len) {
    return entry_alloc(OBJ_STRING | ENTRY_RAW, key, len, len, NO_EXPIRE);
}

/* Bytes of obj to keep inline in an entry of type, 0 if it stays apart. */
static size_t inline_size(unsigned type, const void *obj) {
    const struct obj_ops *ops = obj_ops_by_type[type];
    size_t n = ops && ops->inline_size ? ops->inline_size(obj) : 0;
    /* at least a pointer's worth, for entry_obj_for_write */
    return n >= sizeof(void *) && n <= ENTRY_INLINE_MAX ? n : 0;
}

/* Padding before an inline body that starts `off` bytes into the block. */
static size_t inline_pad(size_t off) { return off & 1; }

/* New entry holding a copy of the n-byte body inline. */
static struct kv_entry *entry_new_inline(struct slice key, unsigned type, const void *body, size_t n,
                                         long long expire_at_ms) {
    unsigned flags = (type & ENTRY_TYPE_MASK) | ENTRY_INLINE;
    if (expire_at_ms != NO_EXPIRE) flags |= ENTRY_EXPIRE;
    size_t pad = inline_pad(entry_prefix(flags) + key.len);
    if (key.len > SHORT_MAX || pad + n > SHORT_MAX) {
        flags |= ENTRY_WIDE;
        pad = inline_pad(entry_prefix(flags) + key.len);
    }
    struct kv_entry *e = entry_alloc(flags, key, pad + n, pad + n, expire_at_ms);
    memcpy(entry_obj(e), body, n);
    return e;
}

/* New entry pointing to obj. */
static struct kv_entry *entry_new_ptr(struct slice key, unsigned type, void *obj, long long expire_at_ms) {
    struct kv_entry *e = entry_alloc(type & ENTRY_TYPE_MASK, key, sizeof obj, sizeof obj,
                                     expire_at_ms);
    memcpy(entry_val(e), &obj, sizeof obj);
    return e;
}

struct kv_entry *entry_new_obj(struct slice key, unsigned type, void *obj, long long expire_at_ms) {
    size_t n = inline_size(type, obj);
    if (!n) return entry_new_ptr(key, type, obj, expire_at_ms);
    struct kv_entry *e = entry_new_inline(key, type, obj, n, expire_at_ms);
    obj_ops_by_type[type]->free(obj);
    return e;
}

void *entry_obj_for_write(struct kv_entry *e) {
    void *obj = entry_obj(e);
    if (!(e->meta & ENTRY_INLINE)) return obj;
    obj = obj_ops_by_type[entry_type(e)]->dup(obj);
    e->meta &= (uint8_t)~ENTRY_INLINE;
    memcpy(entry_val(e), &obj, sizeof obj);
    return obj;
}

struct kv_entry *entry_store_obj(struct kv_entry *e, void *obj) {
    unsigned type = entry_type(e);
    bool was_inline = e->meta & ENTRY_INLINE;
    if (was_inline && obj == entry_obj(e)) return e;      /* unchanged in place */
    size_t n = inline_size(type, obj);
    size_t off = entry_prefix(e->meta) + entry_key_len(e);
    if (n && !was_inline && entry_vcap(e) == inline_pad(off) + n) {
        /* The body fits the block exactly as it was (same size as before
         * entry_obj_for_write): copy it back in place. */
        e->meta |= ENTRY_INLINE;
        memcpy(entry_obj(e), obj, n);
        obj_ops_by_type[type]->free(obj);
        return e;
    }
    if (!n && !was_inline && entry_vcap(e) == sizeof obj) {
        memcpy(entry_val(e), &obj, sizeof obj);
        return e;
    }
    /* A new block, from e's own arena: a command that works on keys of
     * several shards may have pointed rk_arena at another shard's. e's own
     * object, if any, is obj itself or was replaced by it (moved or
     * converted), so only e's block is released. */
    struct entry_arena *saved = rk_arena;
    if (e->meta & ENTRY_ARENA) rk_arena = arena_of(e);
    struct kv_entry *ne = n ? entry_new_inline(entry_key_slice(e), type, obj, n, entry_expire(e))
                            : entry_new_ptr(entry_key_slice(e), type, obj, entry_expire(e));
    rk_arena = saved;
    ne->meta |= e->meta & ENTRY_SNAP;
    if (n) obj_ops_by_type[type]->free(obj);
    entry_release(e);
    return ne;
}

static void entry_free_obj(struct kv_entry *e) {
    unsigned type = entry_type(e);
    if (type == OBJ_STRING || (e->meta & ENTRY_INLINE)) return;
    const struct obj_ops *ops = obj_ops_by_type[type];
    if (ops && ops->free) ops->free(entry_obj(e));
}

void entry_free(struct kv_entry *e) {
    if (!e) return;
    entry_free_obj(e);
    block_free(e, entry_alloc_size(e));
}

void entry_release(struct kv_entry *e) {
    if (e) block_free(e, entry_alloc_size(e));
}

struct kv_entry *entry_rehome(struct kv_entry *e) {
    size_t size = entry_alloc_size(e);
    return block_resize(e, size, size, size);
}

/* ---------------------------------------------------------------- change */

/*
 * Overwriting the value reuses the block only when the result is exactly
 * what a fresh entry would look like (or a wide string whose capacity is not
 * wastefully large), so SET over SET of equal sizes costs no allocation and
 * entries never keep slack they no longer need.
 */
static bool can_overwrite(const struct kv_entry *e, size_t len) {
    if (entry_type(e) != OBJ_STRING) return false;
    if (!(e->meta & ENTRY_WIDE)) return len == entry_val_len(e);
    bool needs_wide = entry_key_len(e) > SHORT_MAX || len > SHORT_MAX;
    size_t cap = entry_vcap(e);
    return needs_wide && len <= cap && cap - len <= len / 2;
}

struct kv_entry *entry_set_string(struct kv_entry *e, struct slice val) {
    if (can_overwrite(e, val.len)) {
        entry_set_lengths(e, entry_key_len(e), val.len, entry_vcap(e));
        if (val.len) memmove(entry_val(e), val.ptr, val.len);
        e->meta &= (uint8_t)~ENTRY_RAW;
        return e;
    }
    struct kv_entry *n = entry_new_string(entry_key_slice(e), val, entry_expire(e));
    n->meta |= e->meta & ENTRY_SNAP;
    entry_free(e);
    return n;
}

/* Geometric growth keeps a loop of APPENDs linear in the total length. */
static size_t grow_cap(size_t len) {
    size_t cap = len < 1024 ? len * 2 : len + len / 2;
    if (cap < 16) cap = 16;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    return cap < len ? len : cap;
}

struct kv_entry *entry_resize_string(struct kv_entry *e, size_t new_len) {
    check_len(new_len);
    if ((e->meta & ENTRY_WIDE) && new_len <= entry_vcap(e)) {
        entry_set_lengths(e, entry_key_len(e), new_len, entry_vcap(e));
        e->meta |= ENTRY_RAW;
        return e;
    }
    size_t cap = grow_cap(new_len);
    size_t klen = entry_key_len(e);
    if (e->meta & ENTRY_WIDE) {
        size_t old_size = entry_alloc_size(e);
        size_t new_size = entry_prefix(e->meta) + klen + cap;
        e = block_resize(e, old_size, new_size, old_size < new_size ? old_size : new_size);
        entry_set_lengths(e, klen, new_len, cap);
        e->meta |= ENTRY_RAW;
        return e;
    }
    /* Short to wide: the header grows, so everything after it moves. */
    struct kv_entry *n = entry_alloc(OBJ_STRING | ENTRY_WIDE | ENTRY_RAW, entry_key_slice(e),
                                     new_len, cap, entry_expire(e));
    size_t keep = entry_val_len(e) < new_len ? entry_val_len(e) : new_len;
    if (keep) memcpy(entry_val(n), entry_val(e), keep);
    n->meta |= e->meta & ENTRY_SNAP;
    entry_release(e);
    return n;
}

struct kv_entry *entry_set_expire(struct kv_entry *e, long long expire_at_ms) {
    size_t hdr = entry__hdr(e);
    size_t size = entry_alloc_size(e);
    if (entry_has_expire(e)) {
        if (expire_at_ms != NO_EXPIRE) {
            memcpy((char *)e + hdr, &expire_at_ms, 8);
            return e;
        }
        memmove((char *)e + hdr, (char *)e + hdr + 8, size - hdr - 8);
        e->meta &= (uint8_t)~ENTRY_EXPIRE;
        return block_resize(e, size, size - 8, size - 8);
    }
    if (expire_at_ms == NO_EXPIRE) return e;
    e = block_resize(e, size, size + 8, size);
    memmove((char *)e + hdr + 8, (char *)e + hdr, size - hdr);
    memcpy((char *)e + hdr, &expire_at_ms, 8);
    e->meta |= ENTRY_EXPIRE;
    return e;
}

/*
 * keep_obj moves the object to the new entry: the caller then releases the
 * old entry with plain free(), not entry_free(), which would free the object.
 * Otherwise the object is duplicated through its type's dup hook.
 */
struct kv_entry *entry_with_key(const struct kv_entry *e, struct slice key, bool keep_obj) {
    unsigned type = entry_type(e);
    if (type == OBJ_STRING) {
        struct slice v = entry_val_slice(e);
        struct kv_entry *n = entry_alloc(e->meta & (ENTRY_TYPE_MASK | ENTRY_RAW), key, v.len,
                                         v.len, entry_expire(e));
        if (v.len) memcpy(entry_val(n), v.ptr, v.len);
        return n;
    }
    void *obj = entry_obj(e);
    if (e->meta & ENTRY_INLINE)     /* the body is copied either way */
        return entry_new_inline(key, type, obj, inline_size(type, obj), entry_expire(e));
    if (!keep_obj) {
        const struct obj_ops *ops = obj_ops_by_type[type];
        if (ops && ops->dup) obj = ops->dup(obj);
    }
    return entry_new_obj(key, type, obj, entry_expire(e));
}
