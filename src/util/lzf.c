/*
 * LZF compression and decompression (the format is in lzf.h).
 *
 * Compression is greedy: a hash table maps every 3-byte sequence seen to
 * its last position; at each input position, if the sequence was seen less
 * than 8192 bytes back, the match is extended as far as it goes (up to 264
 * bytes) and emitted as a back reference, else the byte joins the current
 * literal run. Positions inside a match are hashed too, so later data can
 * refer to them. The table is sized to the input (small inputs, such as a
 * 48-byte quicklist node, clear a small table) and holds offsets + 1, so 0
 * is "never seen" and the table needs no other initialisation.
 *
 * Decompression checks every length and offset against both buffers, so
 * malformed input fails instead of reading or writing out of bounds.
 */
#include "ringkv/lzf.h"

#include <stdint.h>
#include <string.h>

#define MAX_LIT      32          /* bytes in one literal run */
#define MAX_OFF      8192        /* how far back a reference reaches */
#define MAX_REF      264         /* bytes one reference copies: 7 + 255 + 2 */
#define MIN_MATCH    3
#define MAX_HBITS    14

static inline uint32_t hash3(const unsigned char *p, unsigned bits) {
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - bits);
}

static unsigned hash_bits(size_t len) {
    unsigned bits = 8;
    while (bits < MAX_HBITS && ((size_t)1 << bits) < len) bits++;
    return bits;
}

/* The output being written: room is checked before every item. */
struct sink {
    unsigned char *p, *end;
};

static int put_literals(struct sink *o, const unsigned char *lit, size_t n) {
    while (n) {
        size_t run = n < MAX_LIT ? n : MAX_LIT;
        if ((size_t)(o->end - o->p) < run + 1) return -1;
        *o->p++ = (unsigned char)(run - 1);
        memcpy(o->p, lit, run);
        o->p += run;
        lit += run;
        n -= run;
    }
    return 0;
}

static int put_reference(struct sink *o, size_t len, size_t dist) {
    size_t l = len - 2, off = dist - 1;
    if ((size_t)(o->end - o->p) < (l >= 7 ? 3u : 2u)) return -1;
    if (l < 7) {
        *o->p++ = (unsigned char)(l << 5 | off >> 8);
    } else {
        *o->p++ = (unsigned char)(7 << 5 | off >> 8);
        *o->p++ = (unsigned char)(l - 7);
    }
    *o->p++ = (unsigned char)(off & 0xff);
    return 0;
}

size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_len) {
    const unsigned char *src = in, *end = src + in_len;
    struct sink o = { out, (unsigned char *)out + out_len };
    if (in_len == 0 || in_len >= UINT32_MAX) return 0;
    unsigned bits = hash_bits(in_len);
    uint32_t table[1 << MAX_HBITS];
    memset(table, 0, sizeof(uint32_t) << bits);

    const unsigned char *ip = src, *lit = src;
    while (ip + MIN_MATCH <= end) {
        uint32_t h = hash3(ip, bits);
        const unsigned char *ref = table[h] ? src + table[h] - 1 : NULL;
        table[h] = (uint32_t)(ip - src) + 1;
        if (!ref || (size_t)(ip - ref) > MAX_OFF || memcmp(ref, ip, MIN_MATCH) != 0) {
            ip++;
            continue;
        }
        size_t len = MIN_MATCH, max = (size_t)(end - ip) < MAX_REF ? (size_t)(end - ip) : MAX_REF;
        while (len < max && ref[len] == ip[len]) len++;
        if (put_literals(&o, lit, (size_t)(ip - lit)) || put_reference(&o, len, (size_t)(ip - ref))) return 0;
        for (const unsigned char *q = ip + 1; q < ip + len && q + MIN_MATCH <= end; q++)
            table[hash3(q, bits)] = (uint32_t)(q - src) + 1;
        ip += len;
        lit = ip;
    }
    if (put_literals(&o, lit, (size_t)(end - lit))) return 0;
    return (size_t)(o.p - (unsigned char *)out);
}

size_t lzf_decompress(const void *in, size_t in_len, void *out, size_t out_len) {
    const unsigned char *ip = in, *in_end = ip + in_len;
    unsigned char *op = out, *out_end = op + out_len;
    while (ip < in_end) {
        size_t ctrl = *ip++;
        if (ctrl < 32) {                       /* literal run */
            size_t n = ctrl + 1;
            if ((size_t)(in_end - ip) < n || (size_t)(out_end - op) < n) return 0;
            memcpy(op, ip, n);
            ip += n;
            op += n;
            continue;
        }
        size_t len = ctrl >> 5;                /* back reference */
        if (len == 7) {
            if (ip >= in_end) return 0;
            len += *ip++;
        }
        if (ip >= in_end) return 0;
        size_t dist = ((ctrl & 0x1f) << 8 | *ip++) + 1;
        len += 2;
        if (dist > (size_t)(op - (unsigned char *)out) || (size_t)(out_end - op) < len) return 0;
        const unsigned char *ref = op - dist;
        while (len--) *op++ = *ref++;          /* byte by byte: the copy may overlap */
    }
    return (size_t)(op - (unsigned char *)out);
}
