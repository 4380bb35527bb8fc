/*
 * A small, strict RESP2/RESP3 reply reader for the fuzz harnesses: it
 * checks that what the reply writer (reply.h) produced is well formed and
 * turns it into a flat list of tokens, one per element, in order.
 *
 * Strict means: every line ends in CRLF and holds no other CR or LF;
 * integers and lengths are canonical ("-0", "007", "+1" are refused);
 * doubles parse whole with strtod (or are inf/-inf/nan); a RESP2 reply uses
 * no RESP3 type and a RESP3 reply none of RESP2's nulls ($-1, *-1);
 * aggregates hold exactly their count of elements (a map twice its count).
 */
#ifndef RINGKV_FUZZ_RESP_READER_H
#define RINGKV_FUZZ_RESP_READER_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rr_tok {
    char type;          /* the type byte: + - : $ * _ , # = % ~ > */
    long long n;        /* ':' the value; '$' '=' the length (-1: null); aggregates their count (-1: null) */
    const char *p;      /* '+' '-' ',' the line; '$' '=' the payload; NULL otherwise */
    size_t len;
};

struct rr_toks {
    struct rr_tok *t;
    size_t n, cap;
};

static inline void rr_toks_push(struct rr_toks *v, struct rr_tok t) {
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->t = realloc(v->t, v->cap * sizeof *v->t);
        if (!v->t) abort();
    }
    v->t[v->n++] = t;
}

/* A canonical signed decimal, as the writer prints a long long. */
static inline bool rr_canonical_ll(const char *s, size_t len, long long *out) {
    if (len == 0 || len > 20) return false;
    size_t i = 0;
    bool neg = s[0] == '-';
    if (neg) i = 1;
    if (i == len) return false;
    if (s[i] == '0' && (len - i > 1 || neg)) return false;   /* "0" only; no "-0", "01" */
    unsigned long long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return false;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX) return false;
        *out = (long long)v;
    }
    return true;
}

/* A double as the writer prints one: whole by strtod, or inf/-inf/nan. */
static inline bool rr_double_text(const char *s, size_t len, double *out) {
    char tmp[128];
    if (len == 0 || len >= sizeof tmp) return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    if (strcmp(tmp, "inf") == 0) { *out = __builtin_inf(); return true; }
    if (strcmp(tmp, "-inf") == 0) { *out = -__builtin_inf(); return true; }
    if (strcmp(tmp, "nan") == 0 || strcmp(tmp, "-nan") == 0) { *out = __builtin_nan(""); return true; }
    for (size_t i = 0; i < len; i++)   /* no spaces, no hex floats, no words */
        if (!strchr("0123456789+-.eE", tmp[i])) return false;
    char *end;
    errno = 0;
    *out = strtod(tmp, &end);
    return end == tmp + len;
}

/* The line at b[*pos..len) up to CRLF: false if malformed or cut short. */
static inline bool rr_line(const char *b, size_t len, size_t *pos, const char **s, size_t *n) {
    const char *start = b + *pos;
    size_t avail = len - *pos;
    const char *cr = memchr(start, '\r', avail);
    if (!cr || (size_t)(cr - start) + 2 > avail || cr[1] != '\n') return false;
    if (memchr(start, '\n', (size_t)(cr - start))) return false;
    *s = start;
    *n = (size_t)(cr - start);
    *pos += *n + 2;
    return true;
}

/* One whole value at b[*pos..len), its tokens appended to out (may be
 * NULL). resp: 2 or 3. False if it is malformed, cut short or nested
 * deeper than depth. */
static bool rr_value(const char *b, size_t len, size_t *pos, int resp, int depth, struct rr_toks *out) {
    if (depth <= 0 || *pos >= len) return false;
    char type = b[(*pos)++];
    const char *s;
    size_t n;
    long long v;
    double d;
    struct rr_tok t = { type, 0, NULL, 0 };
    if (!rr_line(b, len, pos, &s, &n)) return false;
    switch (type) {
    case '+':
    case '-':
        t.p = s;
        t.len = n;
        if (out) rr_toks_push(out, t);
        return true;
    case ':':
        if (!rr_canonical_ll(s, n, &v)) return false;
        t.n = v;
        if (out) rr_toks_push(out, t);
        return true;
    case '$':
    case '=':
        if (type == '=' && resp < 3) return false;
        if (!rr_canonical_ll(s, n, &v) || v < -1) return false;
        if (v == -1) {
            if (resp >= 3 || type == '=') return false;   /* RESP3's null is '_' */
            t.n = -1;
            if (out) rr_toks_push(out, t);
            return true;
        }
        if ((unsigned long long)v > len - *pos || len - *pos - (size_t)v < 2) return false;
        if (b[*pos + (size_t)v] != '\r' || b[*pos + (size_t)v + 1] != '\n') return false;
        if (type == '=' && (v < 4 || b[*pos + 3] != ':')) return false;
        t.n = v;
        t.p = b + *pos;
        t.len = (size_t)v;
        *pos += (size_t)v + 2;
        if (out) rr_toks_push(out, t);
        return true;
    case '_':
        if (resp < 3 || n != 0) return false;
        if (out) rr_toks_push(out, t);
        return true;
    case ',':
        if (resp < 3 || !rr_double_text(s, n, &d)) return false;
        t.p = s;
        t.len = n;
        if (out) rr_toks_push(out, t);
        return true;
    case '#':
        if (resp < 3 || n != 1 || (s[0] != 't' && s[0] != 'f')) return false;
        t.n = s[0] == 't';
        if (out) rr_toks_push(out, t);
        return true;
    case '*':
    case '%':
    case '~':
    case '>': {
        if (type != '*' && resp < 3) return false;
        if (!rr_canonical_ll(s, n, &v) || v < -1) return false;
        if (v == -1 && (type != '*' || resp >= 3)) return false;
        t.n = v;
        if (out) rr_toks_push(out, t);
        long long elems = type == '%' ? 2 * v : v;
        for (long long i = 0; i < elems; i++)
            if (!rr_value(b, len, pos, resp, depth - 1, out)) return false;
        return true;
    }
    default:
        return false;
    }
}

/* Whether b[0..len) is exactly one whole value. */
static inline bool rr_one_value(const char *b, size_t len, int resp, struct rr_toks *out) {
    size_t pos = 0;
    return rr_value(b, len, &pos, resp, 64, out) && pos == len;
}

#endif
