/*
 * listpack: a sequence of small values in one contiguous allocation, the
 * compact encoding of small lists, hashes and sorted sets (OBJECT ENCODING
 * "listpack"), and the node of a quicklist.
 *
 * Each element is a byte string or a 64-bit integer. A string that parses
 * strictly as a long long (str_to_ll: no spaces, no '+', no leading zeros)
 * is stored as that integer, so "10" and 10 are the same element and reading
 * it back as text gives the same bytes. Small values are small: an integer
 * 0..127 takes 2 bytes, a string of up to 63 bytes costs 2 bytes more than
 * its length. Every element ends with its own encoded length, so the
 * sequence can be walked from either end (unless it was made forward-only,
 * one byte smaller per element). The format is ringkv's own (see
 * listpack.c); it is not Redis's.
 *
 * Positions are byte offsets of elements inside the listpack (size_t). 0
 * (LP_NONE) is never an element and means "no element" (end of iteration,
 * not found). A position stays valid until the listpack is changed; the
 * functions that change it give back the positions a caller needs next.
 *
 * Functions that change the listpack may move it, hence struct listpack **.
 * A slice passed in must not point into the listpack it is added to.
 * The whole listpack is limited to 2 GB (lp_safe_to_add); one element may
 * be up to 512 MB (Redis's proto-max-bulk-len) and more.
 */
#ifndef RINGKV_LISTPACK_H
#define RINGKV_LISTPACK_H

#include "ringkv/common.h"

/* Packed: a small listpack may live inside an entry at any even address. */
struct __attribute__((packed)) listpack {
    uint32_t bytes;            /* whole allocation, this header included */
    uint32_t count : 31;       /* elements */
    uint32_t forward : 1;      /* no length trailers: walked from the front only */
    unsigned char data[];      /* the elements, back to back */
};

#define LP_NONE 0
#define LP_HDR_SIZE sizeof(struct listpack)
#define LP_INTBUF_SIZE 24      /* enough for any long long as text */

/* One element as read: an integer, or a string pointing into the listpack
 * (valid until the listpack changes). */
struct lp_value {
    bool is_int;
    long long ival;
    struct slice str;          /* set when !is_int */
};

struct listpack *lp_new(void);
/* A listpack whose elements carry no trailing length: one byte smaller each,
 * but lp_prev, lp_last and lp_seek from the tail walk from the first
 * element. For hashes and sets, which are never walked backwards. */
struct listpack *lp_new_forward(void);
void lp_free(struct listpack *lp);

static inline size_t lp_count(const struct listpack *lp) { return lp->count; }
static inline size_t lp_bytes(const struct listpack *lp) { return lp->bytes; }
/* Bytes allocated (the allocation is sized exactly to its contents). */
static inline size_t lp_memory(const struct listpack *lp) { return lp->bytes; }

/* Bytes the element s would take once encoded (header, payload, length). */
size_t lp_encoded_size(struct slice s);
/* Whether add more bytes keep the listpack under its 2 GB limit. */
bool lp_safe_to_add(const struct listpack *lp, size_t add);

/* ------------------------------------------------------------- walking */

size_t lp_first(const struct listpack *lp);                /* LP_NONE if empty */
size_t lp_last(const struct listpack *lp);
size_t lp_next(const struct listpack *lp, size_t pos);     /* LP_NONE after the last */
size_t lp_prev(const struct listpack *lp, size_t pos);     /* LP_NONE before the first */
/* n elements on (pos itself when n is 0); LP_NONE past the last. */
size_t lp_next_n(const struct listpack *lp, size_t pos, size_t n);
/* Two elements on: the next field,value or member,score pair (one call, for
 * the walks of hashes and sorted sets). LP_NONE after the last. */
size_t lp_next_pair(const struct listpack *lp, size_t pos);
/* The element at index (negative counts from the tail: -1 is the last);
 * LP_NONE when out of range. Walks from the nearer end. */
size_t lp_seek(const struct listpack *lp, long long index);

void lp_get(const struct listpack *lp, size_t pos, struct lp_value *out);
/* The element's text: its string, or its integer printed into buf. */
struct slice lp_value_str(const struct lp_value *v, char buf[LP_INTBUF_SIZE]);
/* Redis equality: an integer element equals the text that parses to it. */
bool lp_value_eq(const struct lp_value *v, struct slice s);
bool lp_eq(const struct listpack *lp, size_t pos, struct slice s);

/*
 * The first element equal to s, looking at pos and then every (skip + 1)th
 * element after it: skip 1 walks the fields of field,value pairs (hashes)
 * or the members of member,score pairs (sorted sets). LP_NONE if none.
 */
size_t lp_find(const struct listpack *lp, size_t pos, struct slice s, unsigned skip);

/* ------------------------------------------------------------- changing */

void lp_push(struct listpack **lpp, struct slice s, bool tail);
/* Append n elements at the tail with one reallocation (per 16). */
void lp_append_many(struct listpack **lpp, const struct slice *s, size_t n);
/* The same for values that may be integers already (no text round trip);
 * a string that parses as an integer is still stored as one. */
void lp_append_values(struct listpack **lpp, const struct lp_value *v, size_t n);
/*
 * Remove the first (tail false) or last element. Its value goes to *out: a
 * string is copied into buf (buf->len is reset first) and out->str points
 * there. out may be NULL (buf is then not used). False if empty.
 */
bool lp_pop(struct listpack **lpp, bool tail, struct lp_value *out, struct rbuf *buf);

/* Insert s before / after the element at pos; returns the new element's position. */
size_t lp_insert_before(struct listpack **lpp, size_t pos, struct slice s);
size_t lp_insert_after(struct listpack **lpp, size_t pos, struct slice s);
/* Replace the element at pos with s; the element keeps its position. */
void lp_replace(struct listpack **lpp, size_t pos, struct slice s);
void lp_replace_int(struct listpack **lpp, size_t pos, long long v);
/* Delete up to n elements starting at pos; returns the position of the
 * element that followed them (pos itself when n is 0), or LP_NONE. */
size_t lp_delete(struct listpack **lpp, size_t pos, size_t n);
/* Delete up to n elements starting at index (negative from the tail). */
void lp_delete_range(struct listpack **lpp, long long index, size_t n);

/* Append all of b's elements to *a (b is unchanged). */
void lp_append_all(struct listpack **a, const struct listpack *b);
/* Move the elements from index on (0 <= index <= count) into a new listpack. */
struct listpack *lp_split(struct listpack **lpp, size_t index);

/* Walk the whole listpack both ways checking every element (for tests). */
bool lp_check(const struct listpack *lp);

#endif
