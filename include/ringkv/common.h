/*
 * Small shared vocabulary: byte slices that point into someone else's memory,
 * and a growable byte buffer that owns its memory.
 */
#ifndef RINGKV_COMMON_H
#define RINGKV_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#define RK_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RK_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A view of bytes owned elsewhere (a receive buffer, an entry, a literal). */
struct slice {
    const char *ptr;
    size_t len;
};

#define SLICE_LIT(s) ((struct slice){ (s), sizeof(s) - 1 })

static inline bool slice_eq(struct slice a, struct slice b) {
    return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

/* Case-insensitive compare against a lowercase C string literal. */
bool slice_eq_nocase(struct slice s, const char *lower);

/* A growable byte buffer. len bytes are used; cap is what is allocated. */
struct rbuf {
    char *buf;
    size_t len;
    size_t cap;
};

void rbuf_grow(struct rbuf *b, size_t need);   /* ensure len + need <= cap */
void rbuf_free(struct rbuf *b);
/* printf at the end of b (kept NUL-terminated past len). */
__attribute__((format(printf, 2, 3))) void rbuf_printf(struct rbuf *b, const char *fmt, ...);

static inline char *rbuf_reserve(struct rbuf *b, size_t need) {
    if (RK_UNLIKELY(b->len + need > b->cap))
        rbuf_grow(b, need);
    return b->buf + b->len;
}

static inline void rbuf_append(struct rbuf *b, const void *p, size_t n) {
    if (RK_UNLIKELY(n == 0)) return;   /* p may be NULL then */
    memcpy(rbuf_reserve(b, n), p, n);
    b->len += n;
}

/* Abort with a message on allocation failure: the server cannot go on. */
void *rk_malloc(size_t n);
void *rk_realloc(void *p, size_t n);
void *rk_calloc(size_t n, size_t size);
/* n bytes of p and a NUL, in memory of their own (p may be NULL when n is 0). */
char *rk_strndup(const char *p, size_t n);
/* printf into memory of its own. */
__attribute__((format(printf, 1, 2))) char *rk_asprintf(const char *fmt, ...);
/* Zeroed, at an address that is a multiple of align (a power of two); free() it. */
void *rk_calloc_aligned(size_t align, size_t size);

#endif
