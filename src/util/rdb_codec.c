/*
 * RDB lengths, strings and the DUMP payload trailer (rdb_codec.h), written
 * after Redis 7.0's rdb.c and cluster.c so the bytes are the same.
 *
 * Writers append to an rbuf and cannot fail. Readers work on a private copy
 * of the cursor and publish it only when the whole item has been read, so a
 * failure leaves the caller where it was; every length read from the input
 * is checked against what is left of it before anything is copied or
 * allocated.
 */
#include "ringkv/rdb_codec.h"

#include "ringkv/crc64.h"
#include "ringkv/lzf.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <string.h>

#define LEN_6BIT   0      /* top two bits of a length's first byte */
#define LEN_14BIT  1
#define LEN_ENCVAL 3
#define LEN_32BIT  0x80   /* whole first bytes */
#define LEN_64BIT  0x81

#define ENC_INT8   0      /* special encodings: 0xC0 | ENC_* */
#define ENC_INT16  1
#define ENC_INT32  2
#define ENC_LZF    3

/* As Redis: below this LZF cannot shrink even a run of one byte. */
#define LZF_MIN_LEN 21
/* As Redis: compression must save at least this much to be used. */
#define LZF_MIN_SAVING 4
/* LZF's densest item is a 3-byte back reference that yields 264 bytes, so
 * no stream inflates by more than this; a larger claim is corrupt. */
#define LZF_MAX_RATIO 88

static void put_be(unsigned char *dst, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--, v >>= 8) dst[i] = (unsigned char)v;
}

static void put_le(unsigned char *dst, uint64_t v, int n) {
    for (int i = 0; i < n; i++, v >>= 8) dst[i] = (unsigned char)v;
}

static uint64_t get_be(const unsigned char *src, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | src[i];
    return v;
}

uint64_t rdb_load_le(const unsigned char *src, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | src[i];
    return v;
}

static size_t remaining(const char *p, const char *end) {
    return (size_t)(end - p);
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

void rdb_put_u64(struct rbuf *b, uint64_t v) {
    unsigned char buf[8];
    put_le(buf, v, 8);
    rbuf_append(b, buf, 8);
}

bool rdb_get_u64(const char **p, const char *end, uint64_t *v) {
    if (remaining(*p, end) < 8) return false;
    *v = rdb_load_le((const unsigned char *)*p, 8);
    *p += 8;
    return true;
}

void rdb_put_double(struct rbuf *b, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    rdb_put_u64(b, u);
}

bool rdb_get_double(const char **p, const char *end, double *d) {
    uint64_t u;
    if (!rdb_get_u64(p, end, &u)) return false;
    memcpy(d, &u, 8);
    return true;
}

void rdb_put_len(struct rbuf *b, uint64_t len) {
    unsigned char buf[9];
    size_t n;
    if (len < (1u << 6)) {
        buf[0] = (unsigned char)(LEN_6BIT << 6 | len);
        n = 1;
    } else if (len < (1u << 14)) {
        put_be(buf, len, 2);
        buf[0] |= LEN_14BIT << 6;
        n = 2;
    } else if (len <= UINT32_MAX) {
        buf[0] = LEN_32BIT;
        put_be(buf + 1, len, 4);
        n = 5;
    } else {
        buf[0] = LEN_64BIT;
        put_be(buf + 1, len, 8);
        n = 9;
    }
    rbuf_append(b, buf, n);
}

/* Redis's rule: only a string that is exactly the canonical text of an
 * int32 may be stored as a number, so decoding gives back the same bytes. */
static bool put_int_encoded(struct rbuf *b, const char *s, size_t len) {
    long long v;
    unsigned char buf[5];
    int n;
    if (!str_to_ll(s, len, &v)) return false;
    if (v >= INT8_MIN && v <= INT8_MAX) {
        buf[0] = 0xC0 | ENC_INT8;
        n = 1;
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
        buf[0] = 0xC0 | ENC_INT16;
        n = 2;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        buf[0] = 0xC0 | ENC_INT32;
        n = 4;
    } else {
        return false;
    }
    put_le(buf + 1, (uint64_t)v, n);
    rbuf_append(b, buf, 1 + (size_t)n);
    return true;
}

/* Redis gives LZF only len - 4 bytes of room: a result that does not fit
 * saves too little to be worth it, and the string is stored raw. */
static bool put_lzf(struct rbuf *b, const char *s, size_t len) {
    size_t room = len - LZF_MIN_SAVING;
    char *out = rk_malloc(room);
    size_t clen = lzf_compress(s, len, out, room);
    if (clen > 0) {
        unsigned char tag = 0xC0 | ENC_LZF;
        rbuf_append(b, &tag, 1);
        rdb_put_len(b, clen);
        rdb_put_len(b, len);
        rbuf_append(b, out, clen);
    }
    free(out);
    return clen > 0;
}

void rdb_put_string(struct rbuf *b, const char *s, size_t len, bool compress) {
    /* 11 bytes: "-2147483648", the longest int32 */
    if (len <= 11 && put_int_encoded(b, s, len)) return;
    if (compress && len >= LZF_MIN_LEN && len <= RDB_LZF_MAX_LEN && put_lzf(b, s, len)) return;
    rdb_put_len(b, len);
    rbuf_append(b, s, len);
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

bool rdb_get_len(const char **p, const char *end, uint64_t *len, bool *encoded) {
    const char *q = *p;
    if (q >= end) return false;
    unsigned char first = (unsigned char)*q++;
    bool enc = false;
    uint64_t v;

    switch (first >> 6) {
    case LEN_6BIT:
        v = first & 0x3F;
        break;
    case LEN_14BIT:
        if (remaining(q, end) < 1) return false;
        v = (uint64_t)(first & 0x3F) << 8 | (unsigned char)*q++;
        break;
    case LEN_ENCVAL:
        if (!encoded) return false;
        enc = true;
        v = first & 0x3F;
        break;
    default: {
        int n = first == LEN_32BIT ? 4 : first == LEN_64BIT ? 8 : 0;
        if (n == 0 || remaining(q, end) < (size_t)n) return false;
        v = get_be((const unsigned char *)q, n);
        q += n;
        break;
    }
    }
    if (encoded) *encoded = enc;
    *len = v;
    *p = q;
    return true;
}

static bool get_raw(const char **p, const char *end, uint64_t len, struct rbuf *out) {
    if (len > remaining(*p, end)) return false;
    rbuf_append(out, *p, (size_t)len);
    *p += len;
    return true;
}

static bool get_int(const char **p, const char *end, unsigned enc, struct rbuf *out) {
    static const int width[] = { [ENC_INT8] = 1, [ENC_INT16] = 2, [ENC_INT32] = 4 };
    int n = width[enc];
    if (remaining(*p, end) < (size_t)n) return false;
    uint64_t u = rdb_load_le((const unsigned char *)*p, n);
    long long v = n == 1 ? (int8_t)u : n == 2 ? (int16_t)u : (long long)(int32_t)u;
    char text[24];
    rbuf_append(out, text, (size_t)ll_to_str(text, sizeof text, v));
    *p += n;
    return true;
}

static bool get_lzf(const char **p, const char *end, struct rbuf *out) {
    const char *q = *p;
    uint64_t clen, len;
    if (!rdb_get_len(&q, end, &clen, NULL) || !rdb_get_len(&q, end, &len, NULL)) return false;
    if (clen == 0 || clen > remaining(q, end)) return false;
    /* len == 0 is refused too: lzf_decompress's 0 means failure, and no
     * writer compresses an empty string. */
    if (len == 0 || len > RDB_LZF_MAX_LEN || len > clen * LZF_MAX_RATIO) return false;
    char *dst = rbuf_reserve(out, (size_t)len);
    if (lzf_decompress(q, (size_t)clen, dst, (size_t)len) != len) return false;
    out->len += len;
    *p = q + clen;
    return true;
}

bool rdb_get_string(const char **p, const char *end, struct rbuf *out) {
    const char *q = *p;
    uint64_t len;
    bool encoded, ok;
    if (!rdb_get_len(&q, end, &len, &encoded)) return false;
    if (!encoded)
        ok = get_raw(&q, end, len, out);
    else if (len <= ENC_INT32)
        ok = get_int(&q, end, (unsigned)len, out);
    else if (len == ENC_LZF)
        ok = get_lzf(&q, end, out);
    else
        ok = false;
    if (ok) *p = q;
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Payload trailer                                                           */

void rdb_payload_finish(struct rbuf *b) {
    unsigned char buf[8];
    put_le(buf, RDB_VERSION, 2);
    rbuf_append(b, buf, 2);
    /* the CRC covers the version bytes too */
    put_le(buf, crc64(0, b->buf, b->len), 8);
    rbuf_append(b, buf, 8);
}

/* Redis 7.0 checks the CRC of every payload, a stored 0 included; only its
 * skip-checksum-validation debug switch turns that off. (The RDB file
 * loader's "0 means no checksum" rule is for files, not payloads.) */
bool rdb_payload_verify(const char *p, size_t len, size_t *body_len) {
    if (len < RDB_PAYLOAD_TRAILER) return false;
    const unsigned char *trailer = (const unsigned char *)p + len - RDB_PAYLOAD_TRAILER;
    if (rdb_load_le(trailer, 2) > RDB_VERSION) return false;
    if (crc64(0, p, len - 8) != rdb_load_le(trailer + 2, 8)) return false;
    if (body_len) *body_len = len - RDB_PAYLOAD_TRAILER;
    return true;
}
