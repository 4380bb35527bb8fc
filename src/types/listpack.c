/*
 * listpack: values back to back in one allocation, walkable both ways.
 *
 * Layout: an 8-byte header (total bytes, element count) and then the
 * elements. There is no end marker: the header's byte count says where the
 * last element ends. Each element is
 *
 *     [tag][payload][length]
 *
 * where tag and payload encode the value and [length] is L, the size of
 * tag + payload, written so that it can be read from its last byte: that is
 * what lets a walk go backwards (the element before position p ends at p).
 *
 * Tags (first byte of an element):
 *   0x00..0x7F  the integer 0..127 itself, no payload
 *   0x80..0xBF  a string of (tag & 0x3F) = 0..63 bytes follows
 *   0xC0..0xDF  a 13-bit two's complement integer (-4096..4095): the tag's
 *               low 5 bits are the high bits, one payload byte the low 8
 *   0xE0..0xEF  a string of up to 4095 bytes: 12-bit length, the tag's low
 *               4 bits then one byte, then the bytes
 *   0xF2..0xF8  an integer in (tag & 0x0F) = 2..8 bytes, little endian,
 *               two's complement (so a millisecond timestamp takes 6)
 *   0xF9        a string with a 4-byte little-endian length
 *   others      never written
 *
 * Length trailer (absent in a forward-only listpack, see below): L <= 239
 * is one byte holding L. Otherwise L is written little endian in 2 bytes
 * followed by the byte 0xF2, or in 4 bytes followed by 0xF4; a last byte
 * >= 0xF0 therefore announces the wider form.
 *
 * So a 1..63 byte string costs 2 bytes over its length, an integer 0..127
 * costs 2 bytes, -4096..4095 costs 3, and anything up to +-2^31 at most 6.
 *
 * Forward-only listpacks (lp_new_forward, the header's `forward` bit) leave
 * the trailer out: one byte less per element, which is a tenth of a small
 * hash. Hashes and sets use them: they are never walked backwards (lp_prev
 * still works, by walking forwards from the first element, in O(n)). Lists
 * pop from the tail and sorted sets answer ZREVRANGE from it, so they keep
 * the trailer: walking 200 elements forwards to reach the last ten costs a
 * ZREVRANGE top-10 twice its CPU (each step waits on the previous load).
 *
 * Elements never refer to their neighbours, which keeps every change local:
 * inserting or deleting is one memmove of what follows plus a realloc, and
 * two listpacks concatenate by copying bytes (quicklist merges and splits
 * nodes that way). The allocation is always exactly `bytes` long; with
 * mimalloc a realloc that stays in the same size class does not move.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ringkv/log.h"
#include "ringkv/listpack.h"
#include "ringkv/util.h"

#define TAG_STR6     0x80
#define TAG_INT13    0xC0
#define TAG_STR12    0xE0
#define TAG_INTN     0xF0     /* | nbytes (2..8) */
#define TAG_STR32    0xF9

#define BACK_1_MAX   239       /* largest L stored in a one-byte trailer */
#define BACK_2       0xF2
#define BACK_4       0xF4

/* ------------------------------------------------------------ raw bytes */

static inline unsigned char *lp_base(const struct listpack *lp) {
    return (unsigned char *)lp;
}

static inline uint32_t load16(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t load32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void store_le(unsigned char *p, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline bool tag_is_str(unsigned t) {
    return (t >= 0x80 && t < 0xC0) || (t >= 0xE0 && t < 0xF0) || t == TAG_STR32;
}

/* L: the size of tag + payload of the element starting at p. */
static inline size_t elem_len(const unsigned char *p) {
    unsigned t = p[0];
    if (t < 0x80) return 1;
    if (t < 0xC0) return 1 + (t & 0x3F);
    if (t < 0xE0) return 2;
    if (t < 0xF0) return 2 + (((size_t)(t & 0x0F) << 8) | p[1]);
    if (t != TAG_STR32) return 1 + (t & 0x0F);
    return 5 + (size_t)load32(p + 1);
}

static inline size_t back_size(size_t L) {
    return L <= BACK_1_MAX ? 1 : L <= 0xFFFF ? 3 : 5;
}

static inline void back_write(unsigned char *p, size_t L) {
    if (L <= BACK_1_MAX) {
        p[0] = (unsigned char)L;
    } else if (L <= 0xFFFF) {
        store_le(p, L, 2);
        p[2] = BACK_2;
    } else {
        store_le(p, L, 4);
        p[4] = BACK_4;
    }
}

/* Read the trailer that ends just before `end`: L, and its own size. */
static inline size_t back_read(const unsigned char *end, size_t *bsize) {
    unsigned b = end[-1];
    if (b <= BACK_1_MAX) { *bsize = 1; return b; }
    if (b == BACK_2) { *bsize = 3; return load16(end - 3); }
    *bsize = 5;
    return load32(end - 5);
}

/* Bytes of the trailer after an element of size L in lp. */
static inline size_t trailer_size(const struct listpack *lp, size_t L) {
    return lp->forward ? 0 : back_size(L);
}

/* The whole element at p of lp: tag, payload and trailer. */
static inline size_t elem_total(const struct listpack *lp, const unsigned char *p) {
    size_t L = elem_len(p);
    return L + trailer_size(lp, L);
}

static void decode(const unsigned char *p, struct lp_value *out) {
    unsigned t = p[0];
    out->str = (struct slice){ NULL, 0 };
    out->is_int = true;
    if (t < 0x80) {
        out->ival = t;
    } else if (t < 0xC0) {
        out->is_int = false;
        out->str = (struct slice){ (const char *)p + 1, t & 0x3F };
    } else if (t < 0xE0) {
        int u = (int)((t & 0x1F) << 8 | p[1]);
        out->ival = u >= 0x1000 ? u - 0x2000 : u;
    } else if (t < 0xF0) {
        out->is_int = false;
        out->str = (struct slice){ (const char *)p + 2, ((size_t)(t & 0x0F) << 8) | p[1] };
    } else if (t != TAG_STR32) {
        unsigned n = t & 0x0F;
        uint64_t u = 0;
        for (unsigned i = 0; i < n; i++) u |= (uint64_t)p[1 + i] << (8 * i);
        unsigned shift = 64 - 8 * n;
        out->ival = (long long)((int64_t)(u << shift) >> shift);
    } else {
        out->is_int = false;
        out->str = (struct slice){ (const char *)p + 5, load32(p + 1) };
    }
}

/* ------------------------------------------------------------ encoding */

/* An element about to be written: header bytes, then (for a string) the
 * bytes of str, then the trailer. */
struct enc {
    unsigned char hdr[9];
    unsigned hdrlen;
    struct slice str;
    size_t L;
    size_t total;
};

static inline bool parse_int(struct slice s, long long *v) {
    return s.len > 0 && s.len <= 20 && str_to_ll(s.ptr, s.len, v);
}

static void encode_int(struct enc *e, long long v) {
    e->str = (struct slice){ NULL, 0 };
    if (v >= 0 && v <= 127) {
        e->hdr[0] = (unsigned char)v;
        e->hdrlen = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint32_t u = (uint32_t)v & 0x1FFF;
        e->hdr[0] = (unsigned char)(TAG_INT13 | (u >> 8));
        e->hdr[1] = (unsigned char)u;
        e->hdrlen = 2;
    } else {
        unsigned n = 2;
        while (n < 8) {
            long long lim = 1LL << (8 * n - 1);
            if (v >= -lim && v < lim) break;
            n++;
        }
        e->hdr[0] = (unsigned char)(TAG_INTN | n);
        store_le(e->hdr + 1, (uint64_t)v, n);
        e->hdrlen = 1 + n;
    }
}

static void encode(struct slice s, struct enc *e) {
    long long v;
    if (parse_int(s, &v)) {
        encode_int(e, v);
    } else {
        e->str = s;
        if (s.len <= 63) {
            e->hdr[0] = (unsigned char)(TAG_STR6 | s.len);
            e->hdrlen = 1;
        } else if (s.len <= 4095) {
            e->hdr[0] = (unsigned char)(TAG_STR12 | (s.len >> 8));
            e->hdr[1] = (unsigned char)s.len;
            e->hdrlen = 2;
        } else {
            if (s.len > UINT32_MAX - 16) {
                rk_log(LL_WARNING, "listpack element of %zu bytes", s.len);
                abort();
            }
            e->hdr[0] = TAG_STR32;
            store_le(e->hdr + 1, s.len, 4);
            e->hdrlen = 5;
        }
    }
    e->L = e->hdrlen + e->str.len;
    e->total = e->L + back_size(e->L);
}

/* s encoded for lp (without the trailer when lp is forward-only). */
static void encode_for(const struct listpack *lp, struct slice s, struct enc *e) {
    encode(s, e);
    if (lp->forward) e->total = e->L;
}

static void encode_int_for(const struct listpack *lp, long long v, struct enc *e) {
    encode_int(e, v);
    e->L = e->hdrlen;
    e->total = lp->forward ? e->L : e->L + back_size(e->L);
}

static void write_elem(unsigned char *p, const struct enc *e) {
    memcpy(p, e->hdr, e->hdrlen);
    if (e->str.len) memcpy(p + e->hdrlen, e->str.ptr, e->str.len);
    if (e->total > e->L) back_write(p + e->L, e->L);
}

size_t lp_encoded_size(struct slice s) {
    struct enc e;
    encode(s, &e);
    return e.total;
}

#define LP_MAX_BYTES ((size_t)INT32_MAX)   /* count has 31 bits, and an element takes at least one byte */

bool lp_safe_to_add(const struct listpack *lp, size_t add) {
    return add <= LP_MAX_BYTES - lp->bytes;
}

/* Reallocate to exactly newbytes. The caller moves bytes before a shrink
 * and after a growth. */
static void resize(struct listpack **lpp, size_t newbytes) {
    if (newbytes > LP_MAX_BYTES) {
        rk_log(LL_WARNING, "listpack would exceed 2 GB (%zu bytes)", newbytes);
        abort();
    }
    *lpp = rk_realloc(*lpp, newbytes);
    (*lpp)->bytes = (uint32_t)newbytes;
}

/* ------------------------------------------------------------ lifetime */

static struct listpack *lp_alloc(bool forward) {
    struct listpack *lp = rk_malloc(LP_HDR_SIZE);
    lp->bytes = LP_HDR_SIZE;
    lp->count = 0;
    lp->forward = forward;
    return lp;
}

struct listpack *lp_new(void) { return lp_alloc(false); }
struct listpack *lp_new_forward(void) { return lp_alloc(true); }

void lp_free(struct listpack *lp) {
    free(lp);
}

/* ------------------------------------------------------------ walking */

size_t lp_first(const struct listpack *lp) {
    return lp->count ? LP_HDR_SIZE : LP_NONE;
}

/* Forward-only: the element that ends at byte end, found from the first. */
static size_t prev_by_walking(const struct listpack *lp, size_t end) {
    size_t pos = LP_HDR_SIZE, next;
    while ((next = pos + elem_total(lp, lp_base(lp) + pos)) < end) pos = next;
    return pos;
}

size_t lp_last(const struct listpack *lp) {
    if (!lp->count) return LP_NONE;
    if (lp->forward) return prev_by_walking(lp, lp->bytes);
    size_t bsize, L = back_read(lp_base(lp) + lp->bytes, &bsize);
    return lp->bytes - bsize - L;
}

size_t lp_next(const struct listpack *lp, size_t pos) {
    pos += elem_total(lp, lp_base(lp) + pos);
    return pos < lp->bytes ? pos : LP_NONE;
}

size_t lp_next_n(const struct listpack *lp, size_t pos, size_t n) {
    const unsigned char *b = lp_base(lp);
    size_t end = lp->bytes;
    while (n--) {
        pos += elem_total(lp, b + pos);
        if (pos >= end) return LP_NONE;
    }
    return pos;
}

size_t lp_next_pair(const struct listpack *lp, size_t pos) {
    const unsigned char *b = lp_base(lp);
    size_t end = lp->bytes;
    pos += elem_total(lp, b + pos);
    if (pos >= end) return LP_NONE;
    pos += elem_total(lp, b + pos);
    return pos < end ? pos : LP_NONE;
}

size_t lp_prev(const struct listpack *lp, size_t pos) {
    if (pos <= LP_HDR_SIZE) return LP_NONE;
    if (lp->forward) return prev_by_walking(lp, pos);
    size_t bsize, L = back_read(lp_base(lp) + pos, &bsize);
    return pos - bsize - L;
}

size_t lp_seek(const struct listpack *lp, long long index) {
    long long n = lp->count;
    if (index < 0) index += n;
    if (index < 0 || index >= n) return LP_NONE;
    size_t pos;
    if (index <= n / 2 || lp->forward) {
        pos = LP_HDR_SIZE;
        while (index--) pos += elem_total(lp, lp_base(lp) + pos);
    } else {
        pos = lp_last(lp);
        for (long long i = n - 1; i > index; i--) pos = lp_prev(lp, pos);
    }
    return pos;
}

void lp_get(const struct listpack *lp, size_t pos, struct lp_value *out) {
    decode(lp_base(lp) + pos, out);
}

struct slice lp_value_str(const struct lp_value *v, char buf[LP_INTBUF_SIZE]) {
    if (!v->is_int) return v->str;
    int n = ll_to_str(buf, LP_INTBUF_SIZE, v->ival);
    return (struct slice){ buf, (size_t)n };
}

/* Strings that parse as integers are never stored as strings, so a string
 * element can only equal text that does not parse, and an integer element
 * only text that parses to it. */
bool lp_value_eq(const struct lp_value *v, struct slice s) {
    if (!v->is_int) return slice_eq(v->str, s);
    long long x;
    return parse_int(s, &x) && x == v->ival;
}

bool lp_eq(const struct listpack *lp, size_t pos, struct slice s) {
    struct lp_value v;
    decode(lp_base(lp) + pos, &v);
    return lp_value_eq(&v, s);
}

size_t lp_find(const struct listpack *lp, size_t pos, struct slice s, unsigned skip) {
    long long want;
    bool want_int = parse_int(s, &want);
    const unsigned char *b = lp_base(lp);
    size_t end = lp->bytes;
    while (pos != LP_NONE && pos < end) {
        const unsigned char *p = b + pos;
        if (tag_is_str(p[0])) {
            if (!want_int) {
                struct lp_value v;
                decode(p, &v);
                if (v.str.len == s.len && (s.len == 0 || memcmp(v.str.ptr, s.ptr, s.len) == 0)) return pos;
            }
        } else if (want_int) {
            struct lp_value v;
            decode(p, &v);
            if (v.ival == want) return pos;
        }
        for (unsigned i = 0; i <= skip && pos < end; i++) pos += elem_total(lp, b + pos);
    }
    return LP_NONE;
}

/* ------------------------------------------------------------ changing */

/* Insert s at byte offset off (an element's position, or bytes to append). */
static size_t insert_at(struct listpack **lpp, size_t off, struct slice s) {
    struct enc e;
    encode_for(*lpp, s, &e);
    size_t old = (*lpp)->bytes;
    if (e.total > LP_MAX_BYTES - old) resize(lpp, (size_t)-1);   /* aborts */
    resize(lpp, old + e.total);
    unsigned char *b = lp_base(*lpp);
    memmove(b + off + e.total, b + off, old - off);
    write_elem(b + off, &e);
    (*lpp)->count++;
    return off;
}

void lp_push(struct listpack **lpp, struct slice s, bool tail) {
    insert_at(lpp, tail ? (*lpp)->bytes : LP_HDR_SIZE, s);
}

/* Append k (<= 16) encoded elements with one reallocation. */
static void append_encoded(struct listpack **lpp, const struct enc *e, size_t k) {
    size_t add = 0;
    for (size_t i = 0; i < k; i++) add += e[i].total;
    size_t old = (*lpp)->bytes;
    if (add > LP_MAX_BYTES - old) resize(lpp, (size_t)-1);   /* aborts */
    resize(lpp, old + add);
    unsigned char *p = lp_base(*lpp) + old;
    for (size_t i = 0; i < k; i++) {
        write_elem(p, &e[i]);
        p += e[i].total;
    }
    (*lpp)->count += (uint32_t)k;
}

void lp_append_many(struct listpack **lpp, const struct slice *s, size_t n) {
    while (n) {
        struct enc e[16];
        size_t k = n < 16 ? n : 16;
        for (size_t i = 0; i < k; i++) encode_for(*lpp, s[i], &e[i]);
        append_encoded(lpp, e, k);
        s += k;
        n -= k;
    }
}

void lp_append_values(struct listpack **lpp, const struct lp_value *v, size_t n) {
    while (n) {
        struct enc e[16];
        size_t k = n < 16 ? n : 16;
        for (size_t i = 0; i < k; i++) {
            if (v[i].is_int) encode_int_for(*lpp, v[i].ival, &e[i]);
            else encode_for(*lpp, v[i].str, &e[i]);
        }
        append_encoded(lpp, e, k);
        v += k;
        n -= k;
    }
}

size_t lp_insert_before(struct listpack **lpp, size_t pos, struct slice s) {
    return insert_at(lpp, pos, s);
}

size_t lp_insert_after(struct listpack **lpp, size_t pos, struct slice s) {
    return insert_at(lpp, pos + elem_total(*lpp, lp_base(*lpp) + pos), s);
}

static void replace_encoded(struct listpack **lpp, size_t pos, const struct enc *e) {
    size_t old_total = elem_total(*lpp, lp_base(*lpp) + pos);
    size_t bytes = (*lpp)->bytes;
    size_t tail = pos + old_total;            /* what follows the element */
    if (e->total == old_total) {
        write_elem(lp_base(*lpp) + pos, e);
    } else if (e->total > old_total) {
        resize(lpp, bytes + (e->total - old_total));
        unsigned char *b = lp_base(*lpp);
        memmove(b + pos + e->total, b + tail, bytes - tail);
        write_elem(b + pos, e);
    } else {
        unsigned char *b = lp_base(*lpp);
        memmove(b + pos + e->total, b + tail, bytes - tail);
        write_elem(b + pos, e);
        resize(lpp, bytes - (old_total - e->total));
    }
}

void lp_replace(struct listpack **lpp, size_t pos, struct slice s) {
    struct enc e;
    encode_for(*lpp, s, &e);
    replace_encoded(lpp, pos, &e);
}

void lp_replace_int(struct listpack **lpp, size_t pos, long long v) {
    struct enc e;
    encode_int_for(*lpp, v, &e);
    replace_encoded(lpp, pos, &e);
}

size_t lp_delete(struct listpack **lpp, size_t pos, size_t n) {
    unsigned char *b = lp_base(*lpp);
    size_t bytes = (*lpp)->bytes, end = pos, k = 0;
    while (k < n && end < bytes) {
        end += elem_total(*lpp, b + end);
        k++;
    }
    if (k == 0) return pos < bytes ? pos : LP_NONE;
    memmove(b + pos, b + end, bytes - end);
    (*lpp)->count -= (uint32_t)k;
    resize(lpp, bytes - (end - pos));
    return pos < (*lpp)->bytes ? pos : LP_NONE;
}

void lp_delete_range(struct listpack **lpp, long long index, size_t n) {
    size_t pos = lp_seek(*lpp, index);
    if (pos != LP_NONE && n) lp_delete(lpp, pos, n);
}

bool lp_pop(struct listpack **lpp, bool tail, struct lp_value *out, struct rbuf *buf) {
    size_t pos = tail ? lp_last(*lpp) : lp_first(*lpp);
    if (pos == LP_NONE) return false;
    if (out) {
        lp_get(*lpp, pos, out);
        if (!out->is_int) {
            buf->len = 0;
            rbuf_append(buf, out->str.ptr, out->str.len);
            out->str.ptr = buf->buf;
        }
    }
    lp_delete(lpp, pos, 1);
    return true;
}

void lp_append_all(struct listpack **a, const struct listpack *b) {
    if ((*a)->forward != b->forward) abort();   /* the elements would not fit the format */
    size_t add = b->bytes - LP_HDR_SIZE, old = (*a)->bytes;
    if (!add) return;
    if (add > LP_MAX_BYTES - old) resize(a, (size_t)-1);      /* aborts */
    resize(a, old + add);
    memcpy(lp_base(*a) + old, b->data, add);
    (*a)->count += b->count;
}

struct listpack *lp_split(struct listpack **lpp, size_t index) {
    struct listpack *lp = *lpp;
    size_t pos = index >= lp->count ? lp->bytes : (size_t)lp_seek(lp, (long long)index);
    size_t moved = lp->bytes - pos;
    struct listpack *r = rk_malloc(LP_HDR_SIZE + moved);
    r->bytes = (uint32_t)(LP_HDR_SIZE + moved);
    r->count = index >= lp->count ? 0 : lp->count - (uint32_t)index;
    r->forward = lp->forward;
    if (moved) memcpy(r->data, lp_base(lp) + pos, moved);
    lp->count -= r->count;
    resize(lpp, pos);
    return r;
}

/* ------------------------------------------------------------ checking */

bool lp_check(const struct listpack *lp) {
    const unsigned char *b = lp_base(lp);
    if (lp->bytes < LP_HDR_SIZE) return false;
    size_t pos = LP_HDR_SIZE, n = 0;
    while (pos < lp->bytes) {
        unsigned t = b[pos];
        if (t == 0xF0 || t == 0xF1 || t > TAG_STR32) return false;
        size_t hdr = t < 0xC0 ? 1 : t < 0xF0 ? 2 : t == TAG_STR32 ? 5 : 1 + (t & 0x0F);
        if (hdr > lp->bytes - pos) return false;
        size_t L = elem_len(b + pos), bs = trailer_size(lp, L);
        if (L + bs > lp->bytes - pos) return false;
        if (bs) {
            size_t rbs, rL = back_read(b + pos + L + bs, &rbs);
            if (rL != L || rbs != bs) return false;
        }
        struct lp_value v;
        decode(b + pos, &v);
        long long x;
        if (!v.is_int && parse_int(v.str, &x)) return false;   /* must have been an integer */
        pos += L + bs;
        n++;
    }
    if (pos != lp->bytes || n != lp->count) return false;
    /* Backwards from the last element must reach the first in count steps. */
    size_t p = lp_last(lp), k = 0;
    while (p != LP_NONE) {
        if (p < LP_HDR_SIZE || p >= lp->bytes) return false;
        p = lp_prev(lp, p);
        if (++k > n) return false;
    }
    return k == n;
}
