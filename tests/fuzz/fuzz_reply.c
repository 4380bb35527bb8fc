/*
 * fuzz_reply: the reply writer (src/proto/reply.c, reply.h).
 *
 * Input: one byte choosing RESP2 or RESP3, then a program: each op byte
 * picks a reply call, and the bytes after it its arguments (strings,
 * integers, doubles, counts). Aggregates nest: an array, map, set or push
 * of n elements takes the next n elements written; the *_at forms (a
 * header put in front of elements already written) open a level that an
 * "end" op closes. Whatever is still open at the end is filled with nulls.
 *
 * Alongside, the harness keeps the tokens it expects (RESP2's lowering of
 * RESP3's types spelled out: map -> array of 2n, bool -> integer, double
 * -> bulk, ...). The output must then parse back, with the strict reader
 * of resp_reader.h, into exactly those tokens: types, counts, integers,
 * bytes, and doubles that read back as the same double.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkv/reply.h"
#include "resp_reader.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

/* ---- input ---- */

struct in {
    const uint8_t *p;
    size_t n;
};

static uint8_t u8(struct in *in) {
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

static uint64_t u64(struct in *in) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | u8(in);
    return v;
}

/* Up to max bytes, the length from the input. */
static size_t bytes(struct in *in, char *dst, size_t max) {
    size_t len = u8(in);
    if (len == 255) len = (size_t)u8(in) * 256 + u8(in);   /* a long one now and then */
    if (len > max) len = max;
    if (len > in->n) len = in->n;
    memcpy(dst, in->p, len);
    in->p += len;
    in->n -= len;
    return len;
}

/* A NUL-terminated string (bytes up to the first NUL). */
static size_t cstr(struct in *in, char *dst, size_t max) {
    size_t len = bytes(in, dst, max - 1);
    dst[len] = '\0';
    return strlen(dst);
}

/* ---- expected tokens ---- */

struct want {
    char type;
    long long n;
    char *text;          /* owned; NULL when the token has none */
    size_t len;
    bool is_double;
    double d;
};

static struct want *wants;
static size_t nwants, capwants;

static void want_insert(size_t at, struct want w) {
    if (nwants == capwants) {
        capwants = capwants ? capwants * 2 : 64;
        wants = realloc(wants, capwants * sizeof *wants);
        CHECK(wants != NULL);
    }
    memmove(wants + at + 1, wants + at, (nwants - at) * sizeof *wants);
    wants[at] = w;
    nwants++;
}

static void want(char type, long long n, const char *text, size_t len) {
    struct want w = { type, n, NULL, len, false, 0 };
    if (text) {
        w.text = malloc(len ? len : 1);
        CHECK(w.text != NULL);
        memcpy(w.text, text, len);
    }
    want_insert(nwants, w);
}

/* ---- the open aggregates ---- */

enum { COUNTED, DEFER_ARRAY, DEFER_MAP };

struct frame {
    int kind;
    long long left;      /* COUNTED: elements still to come */
    size_t count;        /* DEFER_*: elements written so far */
    size_t at;           /* DEFER_*: output offset of the first */
    size_t want_at;      /* DEFER_*: index of the first expected token */
};

#define MAX_DEPTH 24
static struct frame stack[MAX_DEPTH];
static int depth;

/* An element is complete at the current level: counted levels it fills
 * are complete in turn. */
static void element_done(void) {
    while (depth > 0) {
        struct frame *f = &stack[depth - 1];
        if (f->kind != COUNTED) {
            f->count++;
            return;
        }
        if (--f->left > 0) return;
        depth--;   /* that aggregate is whole: one element of its parent */
    }
}

static void open_counted(long long n) {
    if (n == 0) {
        element_done();
        return;
    }
    stack[depth++] = (struct frame){ COUNTED, n, 0, 0, 0 };
}

/* ---- the writer's side ---- */

static struct rbuf out;
static struct reply r;
static size_t errors_hooked, errors_written;

static void error_hook(const char *s, size_t len) {
    CHECK(memchr(s, '\r', len) == NULL && memchr(s, '\n', len) == NULL);
    errors_hooked++;
}

static void no_crlf(char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\r' || s[i] == '\n') s[i] = '_';
}

/* The error text reply.c writes for s: one leading dash dropped, CR and
 * LF turned into spaces. */
static void want_error(const char *s, size_t len) {
    if (len && s[0] == '-') {
        s++;
        len--;
    }
    char *t = malloc(len ? len : 1);
    CHECK(t != NULL);
    memcpy(t, s, len);
    for (size_t i = 0; i < len; i++)
        if (t[i] == '\r' || t[i] == '\n') t[i] = ' ';
    want('-', 0, t, len);
    free(t);
    errors_written++;
}

static void want_errorf(const char *s, size_t len) {
    while (len && (*s == '\r' || *s == '\n')) { s++; len--; }
    while (len && (s[len - 1] == '\r' || s[len - 1] == '\n')) len--;
    want_error(s, len);
}

static bool resp3(void) { return r.resp >= 3; }

static void op_double(double d) {
    reply_double(&r, d);
    struct want w = { resp3() ? ',' : '$', 0, NULL, 0, true, d };
    want_insert(nwants, w);
    element_done();
}

static void run_op(struct in *in) {
    static char buf[70000];
    static char ext[8];
    uint8_t op = u8(in);
    size_t len;
    long long v;
    switch (op % 24) {
    case 0:
        len = cstr(in, buf, 1024);
        no_crlf(buf, len);
        reply_simple(&r, buf);
        want('+', 0, buf, len);
        element_done();
        break;
    case 1:
        len = bytes(in, buf, sizeof buf);
        no_crlf(buf, len);
        reply_simple_len(&r, buf, len);
        want('+', 0, buf, len);
        element_done();
        break;
    case 2:
        reply_ok(&r);
        want('+', 0, "OK", 2);
        element_done();
        break;
    case 3:
        len = cstr(in, buf, 2048);
        reply_error(&r, buf);
        want_error(buf, len);
        element_done();
        break;
    case 4: {
        len = cstr(in, buf, 2048);
        int pad = u8(in);   /* past 256 bytes reply_errorf allocates */
        reply_errorf(&r, "%s%*s|", buf, pad, "");
        char *t = malloc(len + (size_t)pad + 2);
        CHECK(t != NULL);
        int n = snprintf(t, len + (size_t)pad + 2, "%s%*s|", buf, pad, "");
        want_errorf(t, (size_t)n);
        free(t);
        element_done();
        break;
    }
    case 5:
        v = (long long)u64(in);
        reply_int(&r, v);
        want(':', v, NULL, 0);
        element_done();
        break;
    case 6:
        len = bytes(in, buf, sizeof buf);
        reply_bulk(&r, len ? buf : NULL, len);   /* an empty value may come as NULL */
        want('$', (long long)len, buf, len);
        element_done();
        break;
    case 7:
        if (u8(in) & 1) {
            reply_bulk_cstr(&r, NULL);
            if (resp3()) want('_', 0, NULL, 0);
            else want('$', -1, NULL, 0);
        } else {
            len = cstr(in, buf, 1024);
            reply_bulk_cstr(&r, buf);
            want('$', (long long)len, buf, len);
        }
        element_done();
        break;
    case 8: {
        v = (long long)u64(in);
        char t[32];
        int n = snprintf(t, sizeof t, "%lld", v);
        reply_bulk_ll(&r, v);
        want('$', n, t, (size_t)n);
        element_done();
        break;
    }
    case 9:
        reply_null(&r);
        if (resp3()) want('_', 0, NULL, 0);
        else want('$', -1, NULL, 0);
        element_done();
        break;
    case 10:
        reply_null_array(&r);
        if (resp3()) want('_', 0, NULL, 0);
        else want('*', -1, NULL, 0);
        element_done();
        break;
    case 11:
    case 12:
    case 13:
    case 14: {
        if (depth == MAX_DEPTH) break;
        long long n = u8(in) % 6;
        if (op % 24 == 11) {
            reply_array(&r, (size_t)n);
            want('*', n, NULL, 0);
        } else if (op % 24 == 12) {
            reply_push(&r, (size_t)n);
            want(resp3() ? '>' : '*', n, NULL, 0);
        } else if (op % 24 == 13) {
            reply_map(&r, (size_t)n);
            want(resp3() ? '%' : '*', resp3() ? n : 2 * n, NULL, 0);
            n *= 2;
        } else {
            reply_set(&r, (size_t)n);
            want(resp3() ? '~' : '*', n, NULL, 0);
        }
        open_counted(n);
        break;
    }
    case 15: {
        uint64_t bits = u64(in);
        double d;
        memcpy(&d, &bits, sizeof d);
        op_double(d);
        break;
    }
    case 16: {
        static const double special[] = { 0.0, -0.0, 1.0, -1.0, 0.1, 1e17, -1e17, 1e16, 99999999999999999.0,
                                          9007199254740993.0, 1e-300, 5e-324, 1.7976931348623157e308 };
        uint8_t k = u8(in);
        op_double(k < 200 ? special[k % (sizeof special / sizeof *special)] : (k & 1 ? INFINITY : -INFINITY));
        break;
    }
    case 17: {
        bool b = u8(in) & 1;
        reply_bool(&r, b);
        want(resp3() ? '#' : ':', b, NULL, 0);
        element_done();
        break;
    }
    case 18: {
        size_t el = cstr(in, ext, sizeof ext);
        len = bytes(in, buf, sizeof buf - 8);
        reply_verbatim(&r, buf, len, ext);
        if (resp3()) {
            char *t = malloc(len + 4);
            CHECK(t != NULL);
            for (size_t i = 0; i < 3; i++) t[i] = i < el ? ext[i] : ' ';
            t[3] = ':';
            memcpy(t + 4, buf, len);
            want('=', (long long)len + 4, t, len + 4);
            free(t);
        } else {
            want('$', (long long)len, buf, len);
        }
        element_done();
        break;
    }
    case 19: {
        /* pre-encoded: a bulk string or an integer the harness wrote */
        len = bytes(in, buf, 1024);
        char enc[1100];
        int n;
        if (u8(in) & 1) {
            n = snprintf(enc, sizeof enc, "$%zu\r\n", len);
            memcpy(enc + n, buf, len);
            memcpy(enc + n + len, "\r\n", 2);
            n += (int)len + 2;
            want('$', (long long)len, buf, len);
        } else {
            n = snprintf(enc, sizeof enc, ":%zu\r\n", len);
            want(':', (long long)len, NULL, 0);
        }
        reply_raw(&r, enc, (size_t)n);
        element_done();
        break;
    }
    case 20: {
        if (depth == MAX_DEPTH) break;
        size_t n = u8(in) % 5;
        static char lines[5][64];
        const char *ptrs[5];
        want('*', (long long)n, NULL, 0);
        for (size_t i = 0; i < n; i++) {
            size_t l = cstr(in, lines[i], sizeof lines[i]);
            no_crlf(lines[i], l);
            ptrs[i] = lines[i];
            want('+', 0, lines[i], l);
        }
        reply_help(&r, ptrs, n);
        element_done();
        break;
    }
    case 21: {
        len = cstr(in, buf, 300);
        reply_wrong_arity(&r, buf);
        char t[400];
        int n = snprintf(t, sizeof t, "ERR wrong number of arguments for '%s' command", buf);
        want_errorf(t, (size_t)n);
        element_done();
        break;
    }
    case 22:
        if (depth == MAX_DEPTH) break;
        stack[depth++] = (struct frame){ u8(in) & 1 ? DEFER_MAP : DEFER_ARRAY, 0, 0, out.len, nwants };
        break;
    default: /* 23: close the innermost *_at level */
        if (depth == 0 || stack[depth - 1].kind == COUNTED) break;
        {
            struct frame f = stack[depth - 1];
            if (f.kind == DEFER_MAP && f.count % 2) {   /* a map needs pairs */
                reply_null(&r);
                if (resp3()) want('_', 0, NULL, 0);
                else want('$', -1, NULL, 0);
                f.count++;
            }
            depth--;
            if (f.kind == DEFER_ARRAY) {
                reply_array_at(&r, f.at, f.count);
                want_insert(f.want_at, (struct want){ '*', (long long)f.count, NULL, 0, false, 0 });
            } else {
                reply_map_at(&r, f.at, f.count / 2);
                want_insert(f.want_at, (struct want){ resp3() ? '%' : '*',
                                                      (long long)(resp3() ? f.count / 2 : f.count),
                                                      NULL, 0, false, 0 });
            }
            element_done();
        }
        break;
    }
}

static void close_all(void) {
    while (depth > 0) {
        if (stack[depth - 1].kind == COUNTED) {
            reply_null(&r);
            if (resp3()) want('_', 0, NULL, 0);
            else want('$', -1, NULL, 0);
            element_done();
        } else {
            struct in none = { (const uint8_t *)"\x17", 1 };   /* op 23 */
            run_op(&none);
        }
    }
}

static void compare(void) {
    struct rr_toks got = { 0 };
    size_t pos = 0;
    while (pos < out.len) CHECK(rr_value(out.buf, out.len, &pos, r.resp, 64, &got));
    CHECK(pos == out.len);
    CHECK(got.n == nwants);
    for (size_t i = 0; i < got.n; i++) {
        const struct rr_tok *g = &got.t[i];
        const struct want *w = &wants[i];
        CHECK(g->type == w->type);
        if (w->is_double) {
            double d;
            CHECK(rr_double_text(g->p, g->len, &d));
            CHECK((isnan(d) && isnan(w->d)) || (d == w->d && signbit(d) == signbit(w->d)));
            if (g->type == '$') CHECK(g->n == (long long)g->len);
            continue;
        }
        if (g->type == '+' || g->type == '-' || g->type == '$' || g->type == '=') {
            CHECK(g->len == w->len);
            CHECK(w->len == 0 || memcmp(g->p, w->text, w->len) == 0);
        }
        if (g->type != '+' && g->type != '-') CHECK(g->n == w->n);
    }
    free(got.t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    struct in in = { data + 1, size - 1 };
    r = (struct reply){ &out, (uint8_t)(data[0] & 1 ? 3 : 2) };
    out.len = 0;
    depth = 0;
    errors_hooked = errors_written = 0;
    reply_error_hook = error_hook;

    for (int ops = 0; in.n && ops < 4096; ops++) run_op(&in);
    close_all();
    compare();
    CHECK(errors_hooked == errors_written);

    for (size_t i = 0; i < nwants; i++) free(wants[i].text);
    nwants = 0;
    if (out.cap > (1u << 20)) rbuf_free(&out);
    return 0;
}
