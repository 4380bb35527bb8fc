/*
 * RDB values (rdb_value.h): writing the plain forms, reading every form.
 *
 * Reading a compact form (ziplist, zipmap, intset, listpack) goes through
 * one walker per blob format that hands each element to a builder; the
 * builders (list, set, hash, sorted set) are shared by all the forms of
 * their type. The walkers follow the formats as Redis's ziplist.c,
 * zipmap.c, intset.c and listpack.c define them, checking every byte
 * against the blob's end.
 */
#include "ringkv/rdb_value.h"

#include "ringkv/entry.h"
#include "ringkv/hash_obj.h"
#include "ringkv/list_obj.h"
#include "ringkv/rdb_codec.h"
#include "ringkv/set_obj.h"
#include "ringkv/stream.h"
#include "ringkv/util.h"
#include "ringkv/zset_obj.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of b as a slice. A buffer that never held a byte has no
 * memory (buf NULL), and an empty string read from the input is such a
 * buffer: its view points at "", since memcpy, memcmp and the hash
 * functions must not be handed NULL even for zero bytes. */
static inline struct slice view(const struct rbuf *b) {
    return (struct slice){ b->buf ? b->buf : "", b->len };
}

/* ---------------------------------------------------------------- writing */

static void put_byte(struct rbuf *b, unsigned char c) { rbuf_append(b, &c, 1); }

static void put_slice(struct rbuf *b, struct slice s, bool compress) { rdb_put_string(b, s.ptr, s.len, compress); }

static void put_list(struct rbuf *b, const struct list_obj *l, bool compress) {
    rdb_put_len(b, list_len(l));
    struct list_iter it;
    struct lp_value v;
    char buf[LP_INTBUF_SIZE];
    if (!list_iter_init(&it, l, 0, false)) return;
    while (list_iter_next(&it, &v)) put_slice(b, list_value_str(&v, buf), compress);
}

static void put_set(struct rbuf *b, const struct set_obj *s, bool compress) {
    rdb_put_len(b, set_obj_count(s));
    struct set_iter it;
    struct slice m;
    set_iter_init(&it, s);
    while (set_iter_next(&it, &m)) put_slice(b, m, compress);
}

static void put_hash(struct rbuf *b, const struct hash_obj *h, bool compress) {
    rdb_put_len(b, hash_len(h));
    struct hash_iter it;
    struct slice f, v;
    hash_iter_init(&it, h);
    while (hash_iter_next(&it, &f, &v)) {
        put_slice(b, f, compress);
        put_slice(b, v, compress);
    }
}

static void put_zset(struct rbuf *b, const struct zset_obj *z, bool compress) {
    rdb_put_len(b, zset_len(z));
    struct zset_it it;
    for (zset_it_rank(&it, z, 0); it.valid; zset_it_next(&it)) {
        put_slice(b, zset_it_member(&it), compress);
        rdb_put_double(b, zset_it_score_of(&it));
    }
}

/* Redis's listpack, built element by element: header (total bytes,
 * count), elements each followed by its back length, 0xFF. */
struct rlp {
    struct rbuf b;
    size_t count;
};

static void rlp_begin(struct rlp *w) {
    w->b.len = 0;
    w->count = 0;
    rbuf_append(&w->b, "\0\0\0\0\0\0", 6);
}

static void rlp_backlen(struct rlp *w, size_t l) {
    unsigned char bl[5];
    size_t n;
    if (l <= 127) n = 1;
    else if (l < 16383) n = 2;
    else if (l < 2097151) n = 3;
    else if (l < 268435455) n = 4;
    else n = 5;
    /* the first byte holds the top bits; every later byte has bit 7 set */
    for (size_t i = 0; i < n; i++) {
        unsigned char seven = (unsigned char)((l >> (7 * (n - 1 - i))) & 127);
        bl[i] = i ? (unsigned char)(seven | 128) : seven;
    }
    rbuf_append(&w->b, bl, n);
}

static void rlp_int(struct rlp *w, long long v) {
    unsigned char e[9];
    size_t n;
    if (v >= 0 && v <= 127) {
        e[0] = (unsigned char)v;
        n = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint64_t u = (uint64_t)v & 0x1FFF;
        e[0] = (unsigned char)(0xC0 | (u >> 8));
        e[1] = (unsigned char)u;
        n = 2;
    } else {
        int bytes = v >= -32768 && v <= 32767 ? 2 : v >= -8388608 && v <= 8388607 ? 3 : v >= INT32_MIN && v <= INT32_MAX ? 4 : 8;
        e[0] = (unsigned char)(bytes == 2 ? 0xF1 : bytes == 3 ? 0xF2 : bytes == 4 ? 0xF3 : 0xF4);
        for (int i = 0; i < bytes; i++) e[1 + i] = (unsigned char)((uint64_t)v >> (8 * i));
        n = 1 + (size_t)bytes;
    }
    rbuf_append(&w->b, e, n);
    rlp_backlen(w, n);
    w->count++;
}

static void rlp_str(struct rlp *w, struct slice s) {
    long long v;
    if (s.len && s.len <= 20 && str_to_ll(s.ptr, s.len, &v)) {
        rlp_int(w, v);
        return;
    }
    unsigned char h[5];
    size_t n;
    if (s.len < 64) {
        h[0] = (unsigned char)(0x80 | s.len);
        n = 1;
    } else if (s.len < 4096) {
        h[0] = (unsigned char)(0xE0 | (s.len >> 8));
        h[1] = (unsigned char)s.len;
        n = 2;
    } else {
        h[0] = 0xF0;
        for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)(s.len >> (8 * i));
        n = 5;
    }
    rbuf_append(&w->b, h, n);
    rbuf_append(&w->b, s.ptr, s.len);
    rlp_backlen(w, n + s.len);
    w->count++;
}

static void rlp_value(struct rlp *w, const struct lp_value *v) {
    if (v->is_int) rlp_int(w, v->ival);
    else rlp_str(w, v->str);
}

static void rlp_finish(struct rlp *w) {
    put_byte(&w->b, 0xFF);
    size_t total = w->b.len, count = w->count < 65535 ? w->count : 65535;
    for (int i = 0; i < 4; i++) w->b.buf[i] = (char)(total >> (8 * i));
    w->b.buf[4] = (char)count;
    w->b.buf[5] = (char)(count >> 8);
}

static void put_stream_id(struct rbuf *b, struct stream_id id) {
    unsigned char be[16];
    for (int i = 0; i < 8; i++) {
        be[i] = (unsigned char)(id.ms >> (56 - 8 * i));
        be[8 + i] = (unsigned char)(id.seq >> (56 - 8 * i));
    }
    rbuf_append(b, be, 16);
}

/* One node in Redis's layout: ours (stream.h) with each entry's lp-count
 * after it. */
static void put_stream_node(struct rbuf *b, const struct listpack *lp, struct rlp *w, bool compress) {
    rlp_begin(w);
    struct lp_value v;
    size_t p = lp_first(lp);
    long long head[3];
    for (int i = 0; i < 3; i++, p = lp_next(lp, p)) {   /* count, deleted, num-fields */
        lp_get(lp, p, &v);
        head[i] = v.ival;
        rlp_value(w, &v);
    }
    for (long long i = 0; i <= head[2]; i++, p = lp_next(lp, p)) {   /* the fields and the 0 */
        lp_get(lp, p, &v);
        rlp_value(w, &v);
    }
    while (p != LP_NONE) {
        long long elems = 0, flags = 0, nfields = head[2];
        for (int i = 0; i < 3; i++, p = lp_next(lp, p), elems++) {   /* flags ms-diff seq-diff */
            lp_get(lp, p, &v);
            if (i == 0) flags = v.ival;
            rlp_value(w, &v);
        }
        long long rest = nfields;
        if (!(flags & STREAM_FLAG_SAMEFIELDS)) {   /* num-fields, then field,value pairs */
            lp_get(lp, p, &v);
            rest = 1 + 2 * v.ival;
        }
        for (long long i = 0; i < rest; i++, p = lp_next(lp, p), elems++) {
            lp_get(lp, p, &v);
            rlp_value(w, &v);
        }
        rlp_int(w, elems);
    }
    rlp_finish(w);
    rdb_put_string(b, w->b.buf, w->b.len, compress);
}

static void put_pel(struct rbuf *b, const struct idtree *pel, bool nacks) {
    rdb_put_len(b, idtree_count(pel));
    struct idtree_iter it;
    struct stream_id id;
    void *v;
    idtree_seek(&it, pel, STREAM_ID_MIN);
    while (idtree_next(&it, &id, &v)) {
        put_stream_id(b, id);
        if (!nacks) continue;
        const struct stream_nack *n = v;
        rdb_put_u64(b, (uint64_t)n->delivery_time);
        rdb_put_len(b, n->delivery_count);
    }
}

static void put_stream(struct rbuf *b, const struct stream *s, bool compress) {
    rdb_put_len(b, idtree_count(s->nodes));
    struct idtree_iter it;
    struct stream_id master;
    void *v;
    struct rlp w = { 0 };
    idtree_seek(&it, s->nodes, STREAM_ID_MIN);
    while (idtree_next(&it, &master, &v)) {
        struct rbuf key = { 0 };
        put_stream_id(&key, master);
        rdb_put_string(b, key.buf, key.len, false);
        rbuf_free(&key);
        put_stream_node(b, v, &w, compress);
    }
    rbuf_free(&w.b);
    rdb_put_len(b, s->length);
    const struct stream_id *ids[] = { &s->last_id, &s->first_id, &s->max_deleted_id };
    for (int i = 0; i < 3; i++) {
        rdb_put_len(b, ids[i]->ms);
        rdb_put_len(b, ids[i]->seq);
    }
    rdb_put_len(b, s->entries_added);
    rdb_put_len(b, s->ngroups);
    for (size_t g = 0; g < s->ngroups; g++) {
        const struct stream_cg *cg = s->groups[g];
        put_slice(b, cg->name, false);
        rdb_put_len(b, cg->last_id.ms);
        rdb_put_len(b, cg->last_id.seq);
        rdb_put_len(b, (uint64_t)cg->entries_read);   /* -1 (unknown) as Redis writes it */
        put_pel(b, cg->pel, true);
        rdb_put_len(b, cg->nconsumers);
        for (size_t i = 0; i < cg->nconsumers; i++) {
            const struct stream_consumer *c = cg->consumers[i];
            put_slice(b, c->name, false);
            rdb_put_u64(b, (uint64_t)c->seen_time);
            put_pel(b, c->pel, false);
        }
    }
}

/* The type byte each type is written with. */
static unsigned char rdb_type_of(const struct kv_entry *e) {
    static const unsigned char by_obj[] = {
        [OBJ_STRING] = RDB_TYPE_STRING, [OBJ_LIST] = RDB_TYPE_LIST, [OBJ_SET] = RDB_TYPE_SET,
        [OBJ_ZSET] = RDB_TYPE_ZSET_2, [OBJ_HASH] = RDB_TYPE_HASH, [OBJ_STREAM] = RDB_TYPE_STREAM_LISTPACKS_2,
    };
    return by_obj[entry_type(e)];
}

static void put_object(struct rbuf *b, const struct kv_entry *e, bool compress) {
    switch (entry_type(e)) {
    case OBJ_STRING: put_slice(b, entry_val_slice(e), compress); break;
    case OBJ_LIST: put_list(b, entry_obj(e), compress); break;
    case OBJ_SET: put_set(b, entry_obj(e), compress); break;
    case OBJ_HASH: put_hash(b, entry_obj(e), compress); break;
    case OBJ_ZSET: put_zset(b, entry_obj(e), compress); break;
    default: put_stream(b, entry_obj(e), compress); break;
    }
}

void rdb_put_value(struct rbuf *b, const struct kv_entry *e, bool compress) {
    put_byte(b, rdb_type_of(e));
    put_object(b, e, compress);
}

void rdb_put_key_value(struct rbuf *b, const struct kv_entry *e, bool compress) {
    put_byte(b, rdb_type_of(e));
    put_slice(b, entry_key_slice(e), false);
    put_object(b, e, compress);
}

/* ---------------------------------------------------------------- builders */

/* Receives a value's elements one at a time; false refuses the value. */
struct builder {
    unsigned type;
    void *obj;
    struct rbuf pending;       /* hash field or sorted set member awaiting its partner */
    bool have_pending;
};

/* Hashes and sorted sets take their elements in twos. */
static bool in_pairs(const struct builder *bd) { return bd->type == OBJ_HASH || bd->type == OBJ_ZSET; }

static void builder_init(struct builder *bd, unsigned type) {
    memset(bd, 0, sizeof *bd);
    bd->type = type;
}

static void builder_discard(struct builder *bd) {
    if (bd->obj) obj_ops_by_type[bd->type]->free(bd->obj);
    bd->obj = NULL;
    rbuf_free(&bd->pending);
}

static bool parse_score(struct slice s, double *d) {
    char buf[128];
    if (s.len == 0 || s.len >= sizeof buf) return false;
    memcpy(buf, s.ptr, s.len);
    buf[s.len] = '\0';
    char *endp;
    *d = strtod(buf, &endp);
    return *endp == '\0' && !isnan(*d);
}

static bool add_pair(struct builder *bd, struct slice first, struct slice second, const double *score) {
    if (bd->type == OBJ_HASH) {
        if (!bd->obj) bd->obj = hash_new();
        return hash_set((struct hash_obj **)&bd->obj, first, second);
    }
    double d;
    if (score) d = *score;
    else if (!parse_score(second, &d)) return false;
    if (isnan(d)) return false;
    if (!bd->obj) bd->obj = zset_new();
    int out = 0;
    if (!zset_add((struct zset_obj **)&bd->obj, first, d, ZADD_IN_NX, &out, NULL)) return false;
    return out & ZADD_OUT_ADDED;   /* a member twice is corrupt */
}

/* One element (a string) for the value being built. */
static bool build_elem(struct builder *bd, struct slice s) {
    if (in_pairs(bd)) {
        if (!bd->have_pending) {
            bd->pending.len = 0;
            rbuf_append(&bd->pending, s.ptr, s.len);
            bd->have_pending = true;
            return true;
        }
        bd->have_pending = false;
        return add_pair(bd, view(&bd->pending), s, NULL);
    }
    if (bd->type == OBJ_LIST) {
        if (!bd->obj) bd->obj = list_new();
        list_push((struct list_obj **)&bd->obj, s, true);
        /* conversions run once per command elsewhere; a long list must
         * not grow as one listpack meanwhile */
        if (list_len(bd->obj) % 128 == 0) list_grew((struct list_obj **)&bd->obj);
        return true;
    }
    if (!bd->obj) bd->obj = set_obj_new(s, 0);
    return set_obj_add((struct set_obj **)&bd->obj, s);
}

static bool build_int(struct builder *bd, long long v) {
    char buf[LP_INTBUF_SIZE];
    return build_elem(bd, (struct slice){ buf, (size_t)ll_to_str(buf, sizeof buf, v) });
}

/* The value is complete: not empty, no half pair, final encoding. */
static bool build_finish(struct builder *bd, struct rdb_value *out) {
    if (!bd->obj || bd->have_pending) return false;
    if (bd->type == OBJ_LIST) list_grew((struct list_obj **)&bd->obj);
    if (bd->type == OBJ_ZSET) zset_convert_if_small((struct zset_obj **)&bd->obj);
    out->type = bd->type;
    out->obj = bd->obj;
    bd->obj = NULL;
    rbuf_free(&bd->pending);
    return true;
}

/* ---------------------------------------------------------------- blob walkers */

/* Where a walker puts each element it reads. */
typedef bool (*elem_fn)(void *ctx, const struct lp_value *v);

static bool put_int(elem_fn fn, void *ctx, long long v) {
    struct lp_value x = { .is_int = true, .ival = v };
    return fn(ctx, &x);
}

static bool put_str(elem_fn fn, void *ctx, const unsigned char *p, size_t len) {
    struct lp_value x = { .str = { (const char *)p, len } };
    return fn(ctx, &x);
}

/* The builders' sink. */
static bool to_builder(void *ctx, const struct lp_value *v) {
    return v->is_int ? build_int(ctx, v->ival) : build_elem(ctx, v->str);
}

static long long sign_extend(uint64_t v, int bits) {
    uint64_t m = 1ULL << (bits - 1);
    return (long long)((v ^ m) - m);
}

/* Redis's listpack: total bytes (4), count (2), elements each followed by
 * its back length, 0xFF. */
static bool walk_listpack(const unsigned char *p, size_t len, elem_fn fn, void *ctx, size_t *count) {
    if (len < 7 || rdb_load_le(p, 4) != len || p[len - 1] != 0xFF) return false;
    const unsigned char *q = p + 6, *end = p + len - 1;
    size_t n = 0;
    while (q < end) {
        unsigned c = q[0];
        size_t hdr, slen = 0;
        long long v = 0;
        bool is_str = false;
        size_t left = (size_t)(end - q);
        if (c < 0x80) { hdr = 1; v = c; }
        else if ((c & 0xC0) == 0x80) { hdr = 1; slen = c & 0x3F; is_str = true; }
        else if ((c & 0xE0) == 0xC0) { hdr = 2; if (left < 2) return false; v = sign_extend(((c & 0x1F) << 8) | q[1], 13); }
        else if ((c & 0xF0) == 0xE0) { hdr = 2; if (left < 2) return false; slen = ((c & 0x0F) << 8) | q[1]; is_str = true; }
        else if (c == 0xF0) { hdr = 5; if (left < 5) return false; slen = rdb_load_le(q + 1, 4); is_str = true; }
        else if (c >= 0xF1 && c <= 0xF4) {
            static const int w[] = { 2, 3, 4, 8 };
            int nb = w[c - 0xF1];
            hdr = 1 + (size_t)nb;
            if (left < hdr) return false;
            v = sign_extend(rdb_load_le(q + 1, nb), nb * 8);
        } else return false;
        if (slen > left - hdr) return false;
        size_t l = hdr + slen;
        size_t backlen = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
        if (left - l < backlen) return false;
        bool ok = is_str ? put_str(fn, ctx, q + hdr, slen) : put_int(fn, ctx, v);
        if (!ok) return false;
        q += l + backlen;
        n++;
    }
    uint64_t declared = rdb_load_le(p + 4, 2);
    if (declared != 65535 && declared != n) return false;
    *count = n;
    return true;
}

/* Redis's ziplist: bytes (4), tail offset (4), count (2), entries
 * (previous length, encoding, data), 0xFF. */
static bool walk_ziplist(const unsigned char *p, size_t len, elem_fn fn, void *ctx, size_t *count) {
    if (len < 11 || rdb_load_le(p, 4) != len || p[len - 1] != 0xFF) return false;
    const unsigned char *q = p + 10, *end = p + len - 1;
    size_t n = 0;
    while (q < end) {
        size_t left = (size_t)(end - q);
        size_t prev = q[0] < 254 ? 1 : 5;
        if (left < prev + 1) return false;
        const unsigned char *e = q + prev;
        left -= prev;
        unsigned c = e[0];
        size_t hdr, slen = 0;
        long long v = 0;
        bool is_str = false;
        switch (c >> 6) {
        case 0: hdr = 1; slen = c & 0x3F; is_str = true; break;
        case 1: hdr = 2; if (left < 2) return false; slen = ((c & 0x3F) << 8) | e[1]; is_str = true; break;
        case 2:
            if (c != 0x80) return false;
            hdr = 5;
            if (left < 5) return false;
            slen = (size_t)e[1] << 24 | (size_t)e[2] << 16 | (size_t)e[3] << 8 | e[4];
            is_str = true;
            break;
        default:
            if (c == 0xC0) { hdr = 3; if (left < 3) return false; v = sign_extend(rdb_load_le(e + 1, 2), 16); }
            else if (c == 0xD0) { hdr = 5; if (left < 5) return false; v = sign_extend(rdb_load_le(e + 1, 4), 32); }
            else if (c == 0xE0) { hdr = 9; if (left < 9) return false; v = (long long)rdb_load_le(e + 1, 8); }
            else if (c == 0xF0) { hdr = 4; if (left < 4) return false; v = sign_extend(rdb_load_le(e + 1, 3), 24); }
            else if (c == 0xFE) { hdr = 2; if (left < 2) return false; v = (signed char)e[1]; }
            else if (c >= 0xF1 && c <= 0xFD) { hdr = 1; v = (long long)(c & 0x0F) - 1; }
            else return false;
        }
        if (slen > left - hdr) return false;
        bool ok = is_str ? put_str(fn, ctx, e + hdr, slen) : put_int(fn, ctx, v);
        if (!ok) return false;
        q = e + hdr + slen;
        n++;
    }
    uint64_t declared = rdb_load_le(p + 8, 2);
    if (declared != 65535 && declared != n) return false;
    *count = n;
    return true;
}

/* Redis's intset: encoding (4: 2, 4 or 8), length (4), sorted integers. */
static bool walk_intset(const unsigned char *p, size_t len, struct builder *bd) {
    if (len < 8) return false;
    uint64_t w = rdb_load_le(p, 4), n = rdb_load_le(p + 4, 4);
    if ((w != 2 && w != 4 && w != 8) || n == 0 || len != 8 + n * w) return false;
    long long last = 0;
    for (uint64_t i = 0; i < n; i++) {
        long long v = sign_extend(rdb_load_le(p + 8 + i * w, (int)w), (int)w * 8);
        if (i && v <= last) return false;   /* an intset is strictly increasing */
        last = v;
        if (!build_int(bd, v)) return false;
    }
    return true;
}

/* Redis's zipmap: count (1), then length-prefixed key, length-prefixed
 * value with a free byte count after its length, 0xFF. */
static bool walk_zipmap(const unsigned char *p, size_t len, struct builder *bd) {
    if (len < 2 || p[len - 1] != 0xFF) return false;
    const unsigned char *q = p + 1, *end = p + len - 1;
    while (q < end) {
        struct slice kv[2];
        for (int i = 0; i < 2; i++) {
            if (q >= end) return false;
            size_t l = q[0], hdr = 1;
            if (l == 254) {
                if (end - q < 5) return false;
                l = rdb_load_le(q + 1, 4);
                hdr = 5;
            } else if (l == 255) {
                return false;
            }
            q += hdr;
            size_t free_bytes = 0;
            if (i == 1) {
                if (q >= end) return false;
                free_bytes = *q++;
            }
            if ((size_t)(end - q) < l + free_bytes) return false;
            kv[i] = (struct slice){ (const char *)q, l };
            q += l + free_bytes;
        }
        if (!build_elem(bd, kv[0]) || !build_elem(bd, kv[1])) return false;
    }
    return true;
}

/* ---------------------------------------------------------------- reading */

static bool get_byte(const char **p, const char *end, unsigned char *c) {
    if (*p >= end) return false;
    *c = (unsigned char)**p;
    (*p)++;
    return true;
}

/* A string into bd (as one element). */
static bool get_elem(const char **p, const char *end, struct builder *bd, struct rbuf *tmp) {
    tmp->len = 0;
    if (!rdb_get_string(p, end, tmp)) return false;
    return build_elem(bd, view(tmp));
}

/* RDB_TYPE_ZSET's score: a length byte and text, or 253/254/255 for
 * NaN/+inf/-inf. */
static bool get_text_score(const char **p, const char *end, double *d) {
    unsigned char l;
    if (!get_byte(p, end, &l)) return false;
    if (l == 253) return false;   /* NaN */
    if (l == 254) { *d = INFINITY; return true; }
    if (l == 255) { *d = -INFINITY; return true; }
    if ((size_t)(end - *p) < l) return false;
    bool ok = parse_score((struct slice){ *p, l }, d);
    *p += l;
    return ok;
}

static bool get_binary_score(const char **p, const char *end, double *d) {
    return rdb_get_double(p, end, d) && !isnan(*d);
}

enum blob { BLOB_LISTPACK, BLOB_ZIPLIST, BLOB_INTSET, BLOB_ZIPMAP };

/* A blob (a string holding a compact encoding) walked into bd. */
static bool get_blob(const char **p, const char *end, struct builder *bd, struct rbuf *tmp, enum blob kind) {
    tmp->len = 0;
    if (!rdb_get_string(p, end, tmp)) return false;
    const unsigned char *b = (const unsigned char *)tmp->buf;
    size_t n;
    switch (kind) {
    case BLOB_LISTPACK: return walk_listpack(b, tmp->len, to_builder, bd, &n) && n > 0;
    case BLOB_ZIPLIST: return walk_ziplist(b, tmp->len, to_builder, bd, &n) && n > 0;
    case BLOB_INTSET: return walk_intset(b, tmp->len, bd);
    default: return walk_zipmap(b, tmp->len, bd);
    }
}

static unsigned obj_type_of(unsigned char t) {
    switch (t) {
    case RDB_TYPE_LIST: case RDB_TYPE_LIST_ZIPLIST: case RDB_TYPE_LIST_QUICKLIST: case RDB_TYPE_LIST_QUICKLIST_2:
        return OBJ_LIST;
    case RDB_TYPE_SET: case RDB_TYPE_SET_INTSET: return OBJ_SET;
    case RDB_TYPE_ZSET: case RDB_TYPE_ZSET_2: case RDB_TYPE_ZSET_ZIPLIST: case RDB_TYPE_ZSET_LISTPACK: return OBJ_ZSET;
    case RDB_TYPE_HASH: case RDB_TYPE_HASH_ZIPMAP: case RDB_TYPE_HASH_ZIPLIST: case RDB_TYPE_HASH_LISTPACK:
        return OBJ_HASH;
    default: return (unsigned)-1;
    }
}

static bool get_collection(const char **p, const char *end, unsigned char t, struct builder *bd, struct rbuf *tmp) {
    uint64_t n;
    switch (t) {
    case RDB_TYPE_LIST: case RDB_TYPE_SET: case RDB_TYPE_HASH:
        if (!rdb_get_len(p, end, &n, NULL) || n == 0) return false;
        if (t == RDB_TYPE_HASH) n *= 2;
        for (uint64_t i = 0; i < n; i++)
            if (!get_elem(p, end, bd, tmp)) return false;
        return true;
    case RDB_TYPE_ZSET: case RDB_TYPE_ZSET_2:
        if (!rdb_get_len(p, end, &n, NULL) || n == 0) return false;
        for (uint64_t i = 0; i < n; i++) {
            double d;
            tmp->len = 0;
            if (!rdb_get_string(p, end, tmp)) return false;
            bool ok = t == RDB_TYPE_ZSET ? get_text_score(p, end, &d) : get_binary_score(p, end, &d);
            if (!ok || !add_pair(bd, view(tmp), (struct slice){ "", 0 }, &d)) return false;
        }
        return true;
    case RDB_TYPE_HASH_ZIPMAP: return get_blob(p, end, bd, tmp, BLOB_ZIPMAP);
    case RDB_TYPE_SET_INTSET: return get_blob(p, end, bd, tmp, BLOB_INTSET);
    case RDB_TYPE_LIST_ZIPLIST: case RDB_TYPE_ZSET_ZIPLIST: case RDB_TYPE_HASH_ZIPLIST:
        return get_blob(p, end, bd, tmp, BLOB_ZIPLIST);
    case RDB_TYPE_HASH_LISTPACK: case RDB_TYPE_ZSET_LISTPACK: return get_blob(p, end, bd, tmp, BLOB_LISTPACK);
    case RDB_TYPE_LIST_QUICKLIST: case RDB_TYPE_LIST_QUICKLIST_2:
        if (!rdb_get_len(p, end, &n, NULL) || n == 0) return false;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t container = 2;   /* QUICKLIST_NODE_CONTAINER_PACKED */
            if (t == RDB_TYPE_LIST_QUICKLIST_2 && !rdb_get_len(p, end, &container, NULL)) return false;
            if (container == 1) {   /* PLAIN: one element */
                if (!get_elem(p, end, bd, tmp)) return false;
            } else if (container != 2 ||
                       !get_blob(p, end, bd, tmp, t == RDB_TYPE_LIST_QUICKLIST ? BLOB_ZIPLIST : BLOB_LISTPACK)) {
                return false;
            }
        }
        return true;
    default:
        return false;
    }
}

/* ---------------------------------------------------------------- streams */

/* A node's elements as read from Redis's listpack. */
struct elems {
    struct lp_value *v;
    size_t n, cap;
};

static bool to_elems(void *ctx, const struct lp_value *v) {
    struct elems *e = ctx;
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 64;
        e->v = rk_realloc(e->v, e->cap * sizeof *e->v);
    }
    e->v[e->n++] = *v;
    return true;
}

/* Element i as an integer in [lo, hi]. */
static bool elem_int(const struct elems *e, size_t i, long long lo, long long hi, long long *out) {
    if (i >= e->n || !e->v[i].is_int) return false;
    *out = e->v[i].ival;
    return *out >= lo && *out <= hi;
}

/* Redis's node (master entry, entries each ending in its lp-count) into
 * ours (stream.h: the same without lp-counts), checking its shape; the
 * stream's checks (stream_check) do the counts and the order. */
static struct listpack *node_from_redis(const struct elems *e) {
    long long count, deleted, nf, zero, flags, n, lpcount, x;
    if (!elem_int(e, 0, 0, INT32_MAX, &count) || !elem_int(e, 1, 0, INT32_MAX, &deleted) ||
        !elem_int(e, 2, 0, INT32_MAX, &nf) || (size_t)nf > e->n || !elem_int(e, 3 + (size_t)nf, 0, 0, &zero))
        return NULL;
    struct listpack *lp = lp_new_forward();
    lp_append_values(&lp, e->v, 4 + (size_t)nf);
    size_t i = 4 + (size_t)nf;
    while (i < e->n) {
        size_t start = i;
        if (!elem_int(e, i, 0, STREAM_FLAG_DELETED | STREAM_FLAG_SAMEFIELDS, &flags) || !elem_int(e, i + 1, LLONG_MIN, LLONG_MAX, &x) ||
            !elem_int(e, i + 2, LLONG_MIN, LLONG_MAX, &x))
            goto bad;
        i += 3;
        if (flags & STREAM_FLAG_SAMEFIELDS) {
            n = nf;
        } else {
            if (!elem_int(e, i, 1, INT32_MAX, &n)) goto bad;
            n = 1 + 2 * n;
        }
        if ((size_t)n > e->n - i) goto bad;
        i += (size_t)n;
        if (!elem_int(e, i, 0, LLONG_MAX, &lpcount) || (size_t)lpcount != i - start) goto bad;
        lp_append_values(&lp, e->v + start, i - start);
        i++;
    }
    return lp;
bad:
    lp_free(lp);
    return NULL;
}

static bool get_stream_id(const char **p, const char *end, struct stream_id *id) {
    if (end - *p < 16) return false;
    const unsigned char *b = (const unsigned char *)*p;
    id->ms = id->seq = 0;
    for (int i = 0; i < 8; i++) {
        id->ms = id->ms << 8 | b[i];
        id->seq = id->seq << 8 | b[8 + i];
    }
    *p += 16;
    return true;
}

static bool get_ms_time(const char **p, const char *end, long long *t) {
    uint64_t u;
    if (!rdb_get_u64(p, end, &u)) return false;
    *t = (long long)u;
    return true;
}

static bool get_len2(const char **p, const char *end, uint64_t *a, uint64_t *b) {
    return rdb_get_len(p, end, a, NULL) && rdb_get_len(p, end, b, NULL);
}

static bool get_stream_nodes(const char **p, const char *end, struct stream *s, struct rbuf *tmp) {
    uint64_t nodes;
    if (!rdb_get_len(p, end, &nodes, NULL)) return false;
    struct elems e = { 0 };
    bool ok = true;
    for (uint64_t k = 0; ok && k < nodes; k++) {
        struct stream_id master;
        const char *q;
        tmp->len = 0;
        ok = rdb_get_string(p, end, tmp) && tmp->len == 16;
        q = tmp->buf;
        ok = ok && get_stream_id(&q, tmp->buf + 16, &master);
        tmp->len = 0;
        ok = ok && rdb_get_string(p, end, tmp);
        size_t n = 0;
        e.n = 0;
        ok = ok && walk_listpack((const unsigned char *)tmp->buf, tmp->len, to_elems, &e, &n) && n > 0;
        struct listpack *lp = ok ? node_from_redis(&e) : NULL;
        if (!lp || !stream_import_node(s, master, lp)) {
            if (lp) lp_free(lp);
            ok = false;
        }
    }
    free(e.v);
    return ok;
}

static bool get_stream_groups(const char **p, const char *end, struct stream *s, bool v2, struct rbuf *tmp) {
    uint64_t ngroups;
    if (!rdb_get_len(p, end, &ngroups, NULL)) return false;
    while (ngroups--) {
        struct stream_id last;
        uint64_t read = 0, npel, nconsumers;
        tmp->len = 0;
        if (!rdb_get_string(p, end, tmp) || !get_len2(p, end, &last.ms, &last.seq)) return false;
        if (v2 && !rdb_get_len(p, end, &read, NULL)) return false;
        long long entries_read = v2 ? (long long)read : stream_estimate_distance(s, last);
        struct stream_cg *cg = stream_cg_create(s, view(tmp), last, entries_read);
        if (!cg || !rdb_get_len(p, end, &npel, NULL)) return false;
        while (npel--) {
            struct stream_id id;
            long long when;
            uint64_t count;
            if (!get_stream_id(p, end, &id) || !get_ms_time(p, end, &when) || !rdb_get_len(p, end, &count, NULL))
                return false;
            struct stream_nack *n = stream_nack_new(NULL, when);
            n->delivery_count = count;
            if (!idtree_insert(cg->pel, id, n)) {
                free(n);
                return false;
            }
        }
        if (!rdb_get_len(p, end, &nconsumers, NULL)) return false;
        while (nconsumers--) {
            long long seen;
            tmp->len = 0;
            if (!rdb_get_string(p, end, tmp) || !get_ms_time(p, end, &seen)) return false;
            struct stream_consumer *c = stream_consumer_create(cg, view(tmp), seen);
            if (!c || !rdb_get_len(p, end, &npel, NULL)) return false;
            while (npel--) {
                struct stream_id id;
                if (!get_stream_id(p, end, &id)) return false;
                struct stream_nack *n = idtree_find(cg->pel, id);
                /* in the group's PEL, and nobody else's */
                if (!n || n->consumer || !idtree_insert(c->pel, id, n)) return false;
                n->consumer = c;
            }
        }
        /* every pending entry has its consumer */
        struct idtree_iter it;
        struct stream_id id;
        void *v;
        idtree_seek(&it, cg->pel, STREAM_ID_MIN);
        while (idtree_next(&it, &id, &v))
            if (!((struct stream_nack *)v)->consumer) return false;
    }
    return true;
}

static bool get_stream(const char **p, const char *end, bool v2, struct stream *s, struct rbuf *tmp) {
    if (!get_stream_nodes(p, end, s, tmp)) return false;
    if (!rdb_get_len(p, end, &s->length, NULL) || !get_len2(p, end, &s->last_id.ms, &s->last_id.seq)) return false;
    if (v2) {
        if (!get_len2(p, end, &s->first_id.ms, &s->first_id.seq) ||
            !get_len2(p, end, &s->max_deleted_id.ms, &s->max_deleted_id.seq) ||
            !rdb_get_len(p, end, &s->entries_added, NULL))
            return false;
    } else {
        s->entries_added = s->length;
        struct stream_iter it;
        long long nf;
        stream_iter_start(&it, s, STREAM_ID_MIN, STREAM_ID_MAX, false);
        if (!stream_iter_next(&it, &s->first_id, &nf)) s->first_id = STREAM_ID_MIN;
    }
    /* the nodes must agree with the counters before the groups use them */
    return stream_check(s) && get_stream_groups(p, end, s, v2, tmp) && stream_check(s);
}

bool rdb_get_value(const char **p, const char *end, struct rdb_value *out) {
    const char *at = *p;
    unsigned char t;
    memset(out, 0, sizeof *out);
    if (!get_byte(&at, end, &t) || !rdb_get_object(&at, end, t, out)) return false;
    *p = at;
    return true;
}

bool rdb_get_object(const char **p, const char *end, unsigned char t, struct rdb_value *out) {
    const char *at = *p;
    memset(out, 0, sizeof *out);
    if (t == RDB_TYPE_STRING) {
        if (!rdb_get_string(&at, end, &out->str)) {
            rbuf_free(&out->str);   /* a string that failed to inflate may have grown it */
            return false;
        }
        out->type = OBJ_STRING;
        *p = at;
        return true;
    }
    if (t == RDB_TYPE_STREAM_LISTPACKS || t == RDB_TYPE_STREAM_LISTPACKS_2) {
        struct stream *s = stream_new();
        struct rbuf tmp = { 0 };
        bool ok = get_stream(&at, end, t == RDB_TYPE_STREAM_LISTPACKS_2, s, &tmp);
        rbuf_free(&tmp);
        if (!ok) {
            stream_free(s);
            return false;
        }
        out->type = OBJ_STREAM;
        out->obj = s;
        *p = at;
        return true;
    }
    unsigned type = obj_type_of(t);
    if (type == (unsigned)-1) return false;
    struct builder bd;
    builder_init(&bd, type);
    struct rbuf tmp = { 0 };
    bool ok = get_collection(&at, end, t, &bd, &tmp) && build_finish(&bd, out);
    rbuf_free(&tmp);
    if (!ok) {
        builder_discard(&bd);
        memset(out, 0, sizeof *out);
        return false;
    }
    *p = at;
    return true;
}

void rdb_value_discard(struct rdb_value *v) {
    if (v->type == OBJ_STRING) rbuf_free(&v->str);
    else if (v->obj) obj_ops_by_type[v->type]->free(v->obj);
    memset(v, 0, sizeof *v);
}

struct kv_entry *rdb_value_entry(struct slice key, struct rdb_value *v, long long expire_at_ms) {
    struct kv_entry *e;
    if (v->type == OBJ_STRING) {
        e = entry_new_string(key, view(&v->str), expire_at_ms);
        rbuf_free(&v->str);
    } else {
        e = entry_new_obj(key, v->type, v->obj, expire_at_ms);
    }
    memset(v, 0, sizeof *v);
    return e;
}
