/*
 * reply.c -- RESP2/RESP3 reply encoder.
 *
 * Every function appends one complete protocol element to r->out. Types that
 * only RESP3 has are lowered to their RESP2 form here, exactly as Redis's
 * addReply*() functions do, so command code never looks at the protocol:
 *
 *     type       RESP3               RESP2
 *     null       _\r\n               $-1\r\n   (null array: *-1\r\n)
 *     map of n   %n\r\n              *2n\r\n
 *     set of n   ~n\r\n              *n\r\n
 *     double     ,<%.17g>\r\n        $len\r\n<%.17g>\r\n
 *     boolean    #t\r\n / #f\r\n     :1\r\n / :0\r\n
 *     verbatim   =len\r\ntxt:...     $len\r\n...
 *
 * These run for every reply, so each element is written with one reserve
 * and direct stores; snprintf() is reserved for doubles that need it.
 *
 * Every error reply is also counted (INFO errorstats, total_error_replies),
 * on the thread that writes it: command_stats.c keeps the counts.
 */
#include "ringkv/reply.h"
#include "ringkv/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Room for a type byte, a 64-bit integer with sign, and CRLF. */
#define HDR_MAX 32

static inline bool is_resp3(const struct reply *r) { return r->resp >= 3; }

/* Small counts and lengths dominate, so they skip the general formatter. */
static inline size_t put_ll(char *dst, long long v) {
    if (v >= 0 && v < 10) {
        dst[0] = (char)('0' + v);
        return 1;
    }
    return (size_t)ll_to_str(dst, HDR_MAX - 3, v);
}

/* Write "<prefix><v>\r\n" into reserved space; returns bytes written. */
static inline size_t put_hdr(char *dst, char prefix, long long v) {
    size_t n;
    dst[0] = prefix;
    n = 1 + put_ll(dst + 1, v);
    dst[n++] = '\r';
    dst[n++] = '\n';
    return n;
}

static inline void add_hdr(struct reply *r, char prefix, long long v) {
    char *dst = rbuf_reserve(r->out, HDR_MAX);
    r->out->len += put_hdr(dst, prefix, v);
}

static inline void add_lit(struct reply *r, const char *s, size_t len) {
    rbuf_append(r->out, s, len);
}

void reply_raw(struct reply *r, const char *p, size_t len) {
    rbuf_append(r->out, p, len);
}

void reply_simple_len(struct reply *r, const char *s, size_t len) {
    char *dst = rbuf_reserve(r->out, len + 3);
    dst[0] = '+';
    memcpy(dst + 1, s, len);
    dst[len + 1] = '\r';
    dst[len + 2] = '\n';
    r->out->len += len + 3;
}

void reply_simple(struct reply *r, const char *s) {
    reply_simple_len(r, s, strlen(s));
}

void reply_ok(struct reply *r) {
    add_lit(r, "+OK\r\n", 5);
}

/* An error must stay on one line or the client loses sync, so CR and LF
 * inside the text become spaces, as Redis's addReplyErrorFormat() does. */
void (*reply_error_hook)(const char *s, size_t len);

static void add_error(struct reply *r, const char *s, size_t len) {
    if (len && s[0] == '-') {      /* tolerate a caller that added the dash */
        s++;
        len--;
    }
    char *dst = rbuf_reserve(r->out, len + 3);
    dst[0] = '-';
    memcpy(dst + 1, s, len);
    for (char *c = dst + 1; (c = memchr(c, '\r', (size_t)(dst + 1 + len - c))) != NULL; )
        *c = ' ';
    for (char *c = dst + 1; (c = memchr(c, '\n', (size_t)(dst + 1 + len - c))) != NULL; )
        *c = ' ';
    dst[len + 1] = '\r';
    dst[len + 2] = '\n';
    r->out->len += len + 3;
    if (reply_error_hook) reply_error_hook(dst + 1, len);
}

void reply_error(struct reply *r, const char *s) {
    add_error(r, s, strlen(s));
}

/* Like Redis, CR/LF at either end of the formatted text are dropped before
 * the ones inside are turned into spaces. */
void reply_errorf(struct reply *r, const char *fmt, ...) {
    char stackbuf[256];
    char *buf = stackbuf;
    va_list ap;

    va_start(ap, fmt);
    int n = vsnprintf(stackbuf, sizeof(stackbuf), fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof(stackbuf)) {
        buf = rk_malloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(buf, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }

    const char *s = buf;
    size_t len = (size_t)n;
    while (len && (*s == '\r' || *s == '\n')) { s++; len--; }
    while (len && (s[len - 1] == '\r' || s[len - 1] == '\n')) len--;
    add_error(r, s, len);
    if (buf != stackbuf) free(buf);
}

void reply_int(struct reply *r, long long v) {
    add_hdr(r, ':', v);
}

void reply_bulk(struct reply *r, const char *p, size_t len) {
    char *dst = rbuf_reserve(r->out, HDR_MAX + len + 2);
    size_t n = put_hdr(dst, '$', (long long)len);
    if (len) memcpy(dst + n, p, len);   /* an empty value may come with p == NULL */
    n += len;
    dst[n++] = '\r';
    dst[n++] = '\n';
    r->out->len += n;
}

void reply_bulk_slice(struct reply *r, struct slice s) {
    reply_bulk(r, s.ptr, s.len);
}

/* NULL gives a null reply, as addReplyBulkCString() does. */
void reply_bulk_cstr(struct reply *r, const char *s) {
    if (s == NULL)
        reply_null(r);
    else
        reply_bulk(r, s, strlen(s));
}

void reply_bulk_ll(struct reply *r, long long v) {
    char digits[HDR_MAX];
    size_t len = put_ll(digits, v);
    reply_bulk(r, digits, len);
}

void reply_null(struct reply *r) {
    if (is_resp3(r))
        add_lit(r, "_\r\n", 3);
    else
        add_lit(r, "$-1\r\n", 5);
}

void reply_null_array(struct reply *r) {
    if (is_resp3(r))
        add_lit(r, "_\r\n", 3);
    else
        add_lit(r, "*-1\r\n", 5);
}

void reply_array(struct reply *r, size_t n) {
    add_hdr(r, '*', (long long)n);
}

/* The header goes in front of what was written since `at`: those bytes
 * move up by the header's length (a few bytes), which is cheaper than
 * walking the data twice to count it first. */
static void insert_hdr(struct reply *r, size_t at, char prefix, long long v) {
    char hdr[HDR_MAX];
    size_t n = put_hdr(hdr, prefix, v);
    rbuf_reserve(r->out, n);
    memmove(r->out->buf + at + n, r->out->buf + at, r->out->len - at);
    memcpy(r->out->buf + at, hdr, n);
    r->out->len += n;
}

void reply_array_at(struct reply *r, size_t at, size_t n) {
    insert_hdr(r, at, '*', (long long)n);
}

void reply_map_at(struct reply *r, size_t at, size_t n) {
    if (is_resp3(r)) insert_hdr(r, at, '%', (long long)n);
    else insert_hdr(r, at, '*', (long long)(n * 2));
}

void reply_push(struct reply *r, size_t n) {
    add_hdr(r, is_resp3(r) ? '>' : '*', (long long)n);
}

void reply_map(struct reply *r, size_t n) {
    if (is_resp3(r))
        add_hdr(r, '%', (long long)n);
    else
        add_hdr(r, '*', (long long)(n * 2));
}

void reply_set(struct reply *r, size_t n) {
    add_hdr(r, is_resp3(r) ? '~' : '*', (long long)n);
}

void reply_double(struct reply *r, double d) {
    char text[64];
    int len = d_to_str(text, sizeof(text), d);
    if (!is_resp3(r)) {
        reply_bulk(r, text, (size_t)len);
        return;
    }
    char *dst = rbuf_reserve(r->out, (size_t)len + 3);
    dst[0] = ',';
    memcpy(dst + 1, text, (size_t)len);
    dst[len + 1] = '\r';
    dst[len + 2] = '\n';
    r->out->len += (size_t)len + 3;
}

void reply_bool(struct reply *r, bool b) {
    if (is_resp3(r))
        add_lit(r, b ? "#t\r\n" : "#f\r\n", 4);
    else
        add_lit(r, b ? ":1\r\n" : ":0\r\n", 4);
}

/* The format tag is exactly three bytes: a shorter ext is padded with
 * spaces, a longer one cut, as in Redis's addReplyVerbatim(). */
void reply_verbatim(struct reply *r, const char *p, size_t len, const char *ext) {
    if (!is_resp3(r)) {
        reply_bulk(r, p, len);
        return;
    }
    char *dst = rbuf_reserve(r->out, HDR_MAX + 4 + len + 2);
    size_t n = put_hdr(dst, '=', (long long)(len + 4));
    for (int i = 0; i < 3; i++)
        dst[n++] = *ext ? *ext++ : ' ';
    dst[n++] = ':';
    memcpy(dst + n, p, len);
    n += len;
    dst[n++] = '\r';
    dst[n++] = '\n';
    r->out->len += n;
}

void reply_help(struct reply *r, const char **lines, size_t n) {
    reply_array(r, n);
    for (size_t i = 0; i < n; i++) reply_simple(r, lines[i]);
}

void reply_wrong_arity(struct reply *r, const char *name) {
    reply_errorf(r, "ERR wrong number of arguments for '%s' command", name);
}
