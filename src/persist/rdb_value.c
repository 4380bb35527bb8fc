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
#include "ringkv/util.h"
#include "ringkv/zset_obj.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- writing */

static void put_byte(struct rbuf *b, unsigned char c) { rbuf_append(b, &c, 1); }

static void put_slice(struct rbuf *b, struct slice s, bool compress) { rdb_put_string(b, s.ptr, s.len, compress); }

static void put_double(struct rbuf *b, double d) {
    unsigned char le[8];
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(u >> (8 * i));
    rbuf_append(b, le, 8);
}

static void put_list(struct rbuf *b, const struct list_obj *l, bool compress) {
    put_byte(b, RDB_TYPE_LIST);
    rdb_put_len(b, list_len(l));
    struct list_iter it;
    struct lp_value v;
    char buf[LP_INTBUF_SIZE];
    if (!list_iter_init(&it, l, 0, false)) return;
    while (list_iter_next(&it, &v)) put_slice(b, list_value_str(&v, buf), compress);
}

static void put_set(struct rbuf *b, const struct set_obj *s, bool compress) {
    put_byte(b, RDB_TYPE_SET);
    rdb_put_len(b, set_obj_count(s));
    struct set_iter it;
    struct slice m;
    set_iter_init(&it, s);
    while (set_iter_next(&it, &m)) put_slice(b, m, compress);
}

static void put_hash(struct rbuf *b, const struct hash_obj *h, bool compress) {
    put_byte(b, RDB_TYPE_HASH);
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
    put_byte(b, RDB_TYPE_ZSET_2);
    rdb_put_len(b, zset_len(z));
    struct zset_it it;
    for (zset_it_rank(&it, z, 0); it.valid; zset_it_next(&it)) {
        put_slice(b, zset_it_member(&it), compress);
        put_double(b, zset_it_score_of(&it));
    }
}

bool rdb_put_value(struct rbuf *b, const struct kv_entry *e, bool compress) {
    switch (entry_type(e)) {
    case OBJ_STRING:
        put_byte(b, RDB_TYPE_STRING);
        put_slice(b, entry_val_slice(e), compress);
        return true;
    case OBJ_LIST: put_list(b, entry_obj(e), compress); return true;
    case OBJ_SET: put_set(b, entry_obj(e), compress); return true;
    case OBJ_HASH: put_hash(b, entry_obj(e), compress); return true;
    case OBJ_ZSET: put_zset(b, entry_obj(e), compress); return true;
    default: return false;
    }
}

/* ---------------------------------------------------------------- builders */

/* Receives a value's elements one at a time; false refuses the value. */
struct builder {
    unsigned type;
    void *obj;
    struct rbuf pending;       /* hash field or sorted set member awaiting its partner */
    bool have_pending;
    bool pairs;                /* hash and sorted set: elements come in twos */
};

static void builder_init(struct builder *bd, unsigned type) {
    memset(bd, 0, sizeof *bd);
    bd->type = type;
    bd->pairs = type == OBJ_HASH || type == OBJ_ZSET;
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
    if (bd->pairs) {
        if (!bd->have_pending) {
            bd->pending.len = 0;
            rbuf_append(&bd->pending, s.ptr, s.len);
            bd->have_pending = true;
            return true;
        }
        bd->have_pending = false;
        return add_pair(bd, (struct slice){ bd->pending.buf, bd->pending.len }, s, NULL);
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

typedef bool (*elem_fn)(struct builder *bd, struct slice s);

static uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static long long sign_extend(uint64_t v, int bits) {
    uint64_t m = 1ULL << (bits - 1);
    return (long long)((v ^ m) - m);
}

/* Redis's listpack: total bytes (4), count (2), elements each followed by
 * its back length, 0xFF. */
static bool walk_listpack(const unsigned char *p, size_t len, struct builder *bd, size_t *count) {
    if (len < 7 || le(p, 4) != len || p[len - 1] != 0xFF) return false;
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
        else if (c == 0xF0) { hdr = 5; if (left < 5) return false; slen = le(q + 1, 4); is_str = true; }
        else if (c >= 0xF1 && c <= 0xF4) {
            static const int w[] = { 2, 3, 4, 8 };
            int nb = w[c - 0xF1];
            hdr = 1 + (size_t)nb;
            if (left < hdr) return false;
            v = sign_extend(le(q + 1, nb), nb * 8);
        } else return false;
        if (slen > left - hdr) return false;
        size_t l = hdr + slen;
        size_t backlen = l < 128 ? 1 : l < 16384 ? 2 : l < 2097152 ? 3 : l < 268435456 ? 4 : 5;
        if (left - l < backlen) return false;
        bool ok = is_str ? build_elem(bd, (struct slice){ (const char *)q + hdr, slen }) : build_int(bd, v);
        if (!ok) return false;
        q += l + backlen;
        n++;
    }
    uint64_t declared = le(p + 4, 2);
    if (declared != 65535 && declared != n) return false;
    *count = n;
    return true;
}

/* Redis's ziplist: bytes (4), tail offset (4), count (2), entries
 * (previous length, encoding, data), 0xFF. */
static bool walk_ziplist(const unsigned char *p, size_t len, struct builder *bd, size_t *count) {
    if (len < 11 || le(p, 4) != len || p[len - 1] != 0xFF) return false;
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
            if (c == 0xC0) { hdr = 3; if (left < 3) return false; v = sign_extend(le(e + 1, 2), 16); }
            else if (c == 0xD0) { hdr = 5; if (left < 5) return false; v = sign_extend(le(e + 1, 4), 32); }
            else if (c == 0xE0) { hdr = 9; if (left < 9) return false; v = (long long)le(e + 1, 8); }
            else if (c == 0xF0) { hdr = 4; if (left < 4) return false; v = sign_extend(le(e + 1, 3), 24); }
            else if (c == 0xFE) { hdr = 2; if (left < 2) return false; v = (signed char)e[1]; }
            else if (c >= 0xF1 && c <= 0xFD) { hdr = 1; v = (long long)(c & 0x0F) - 1; }
            else return false;
        }
        if (slen > left - hdr) return false;
        bool ok = is_str ? build_elem(bd, (struct slice){ (const char *)e + hdr, slen }) : build_int(bd, v);
        if (!ok) return false;
        q = e + hdr + slen;
        n++;
    }
    uint64_t declared = le(p + 8, 2);
    if (declared != 65535 && declared != n) return false;
    *count = n;
    return true;
}

/* Redis's intset: encoding (4: 2, 4 or 8), length (4), sorted integers. */
static bool walk_intset(const unsigned char *p, size_t len, struct builder *bd) {
    if (len < 8) return false;
    uint64_t w = le(p, 4), n = le(p + 4, 4);
    if ((w != 2 && w != 4 && w != 8) || n == 0 || len != 8 + n * w) return false;
    long long last = 0;
    for (uint64_t i = 0; i < n; i++) {
        long long v = sign_extend(le(p + 8 + i * w, (int)w), (int)w * 8);
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
                l = le(q + 1, 4);
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
    return build_elem(bd, (struct slice){ tmp->buf, tmp->len });
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
    if (end - *p < 8) return false;
    uint64_t u = le((const unsigned char *)*p, 8);
    memcpy(d, &u, 8);
    *p += 8;
    return !isnan(*d);
}

/* A blob (a string holding a compact encoding) walked into bd. */
static bool get_blob(const char **p, const char *end, struct builder *bd, struct rbuf *tmp,
                     int kind /* 0 listpack, 1 ziplist, 2 intset, 3 zipmap */) {
    tmp->len = 0;
    if (!rdb_get_string(p, end, tmp)) return false;
    const unsigned char *b = (const unsigned char *)tmp->buf;
    size_t n;
    switch (kind) {
    case 0: return walk_listpack(b, tmp->len, bd, &n) && n > 0;
    case 1: return walk_ziplist(b, tmp->len, bd, &n) && n > 0;
    case 2: return walk_intset(b, tmp->len, bd);
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
            if (!ok || !add_pair(bd, (struct slice){ tmp->buf, tmp->len }, (struct slice){ NULL, 0 }, &d)) return false;
        }
        return true;
    case RDB_TYPE_HASH_ZIPMAP: return get_blob(p, end, bd, tmp, 3);
    case RDB_TYPE_SET_INTSET: return get_blob(p, end, bd, tmp, 2);
    case RDB_TYPE_LIST_ZIPLIST: case RDB_TYPE_ZSET_ZIPLIST: case RDB_TYPE_HASH_ZIPLIST:
        return get_blob(p, end, bd, tmp, 1);
    case RDB_TYPE_HASH_LISTPACK: case RDB_TYPE_ZSET_LISTPACK: return get_blob(p, end, bd, tmp, 0);
    case RDB_TYPE_LIST_QUICKLIST: case RDB_TYPE_LIST_QUICKLIST_2:
        if (!rdb_get_len(p, end, &n, NULL) || n == 0) return false;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t container = 2;   /* QUICKLIST_NODE_CONTAINER_PACKED */
            if (t == RDB_TYPE_LIST_QUICKLIST_2 && !rdb_get_len(p, end, &container, NULL)) return false;
            if (container == 1) {   /* PLAIN: one element */
                if (!get_elem(p, end, bd, tmp)) return false;
            } else if (container != 2 || !get_blob(p, end, bd, tmp, t == RDB_TYPE_LIST_QUICKLIST ? 1 : 0)) {
                return false;
            }
        }
        return true;
    default:
        return false;
    }
}

bool rdb_get_value(const char **p, const char *end, struct rdb_value *out) {
    const char *at = *p;
    unsigned char t;
    memset(out, 0, sizeof *out);
    if (!get_byte(&at, end, &t)) return false;
    if (t == RDB_TYPE_STRING) {
        if (!rdb_get_string(&at, end, &out->str)) return false;
        out->type = OBJ_STRING;
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
