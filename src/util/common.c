/*
 * common.c -- the few helpers every module leans on.
 *
 * Allocation failure is not something a cache server can recover from in
 * the middle of a command: the rk_* allocators log Redis's message and abort,
 * so callers never carry NULL checks for memory.
 *
 * struct rbuf grows geometrically, so appending n bytes one reply at a time
 * costs amortised O(n) copies however small the pieces are.
 */
#include "ringkv/log.h"
#include "ringkv/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Redis's message, built on the stack and logged without formatting or
 * allocating (log.h). */
static void rk_oom(size_t n) {
    char msg[96];
    snprintf(msg, sizeof msg, "Out Of Memory allocating %zu bytes!", n);
    rk_log_fatal(msg);
    abort();
}

void *rk_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (RK_UNLIKELY(p == NULL)) rk_oom(n);
    return p;
}

char *rk_strndup(const char *p, size_t n) {
    char *s = rk_malloc(n + 1);
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

char *rk_asprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = rk_malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void *rk_realloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (RK_UNLIKELY(q == NULL)) rk_oom(n);
    return q;
}

void *rk_calloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (RK_UNLIKELY(p == NULL)) rk_oom(n * size);
    return p;
}

void *rk_calloc_aligned(size_t align, size_t size) {
    size = (size + align - 1) & ~(align - 1);
    void *p = aligned_alloc(align, size);
    if (RK_UNLIKELY(p == NULL)) rk_oom(size);
    return memset(p, 0, size);
}

/* ASCII only on purpose: command names and options are ASCII, and a
 * locale-dependent tolower() would make matching depend on the environment. */
bool slice_eq_nocase(struct slice s, const char *lower) {
    size_t i;
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (lower[i] == '\0') return false;
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + ('a' - 'A'));
        if (c != (unsigned char)lower[i]) return false;
    }
    return lower[i] == '\0';
}

/* Doubling keeps appends amortised O(1); the floor avoids a string of tiny
 * reallocations for a buffer that starts empty. */
void rbuf_grow(struct rbuf *b, size_t need) {
    size_t want = b->len + need;
    if (want < b->len) rk_oom(SIZE_MAX);          /* size_t overflow */
    if (want <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < want) {
        if (cap > SIZE_MAX / 2) { cap = want; break; }
        cap *= 2;
    }
    b->buf = rk_realloc(b->buf, cap);
    b->cap = cap;
}

void rbuf_free(struct rbuf *b) {
    free(b->buf);
    b->buf = NULL;
    b->len = b->cap = 0;
}

void rbuf_printf(struct rbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    char *dst = rbuf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(dst, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}
