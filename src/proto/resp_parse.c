/*
 * resp_parse.c -- RESP request parser, in place and stateless.
 *
 * A request is either a multibulk array of bulk strings,
 *
 *     *<count>\r\n  then <count> times  $<len>\r\n<len bytes>\r\n
 *
 * or, when its first byte is not '*', one inline line ("PING\r\n", what a
 * telnet user types) split into words with the quoting rules of Redis's
 * sdssplitargs().
 *
 * Nothing is copied: argv slices point into the caller's buffer. The only
 * exception is an inline word that contains quotes, whose unescaped bytes go
 * to p->scratch. Between calls the parser remembers nothing, so a frame that
 * arrives in pieces is rescanned from its start on each call; to keep that
 * cheap, RESP_INCOMPLETE reports in p->need a lower bound of the frame's total
 * size (exact once the last header has been seen) and the caller can wait for
 * that many bytes before calling again.
 *
 * The accept/reject rules and error texts are those of Redis 7.0's
 * processMultibulkBuffer() and processInlineBuffer(), including quirks a
 * client could observe:
 *   - a header line ends at the first '\r' and the byte after it is skipped
 *     whatever it is; the two bytes after bulk data are skipped unchecked;
 *   - the multibulk count may be anything up to INT_MAX (Redis 6 used 1M);
 *     a count <= 0 is an empty request, as are blank inline lines;
 *   - "too big ... count string" / "too big inline request" fire only when
 *     no line end is found and more than 64KB are buffered.
 *   - Redis looks for line ends with strchr() on its NUL-terminated query
 *     buffer, so a NUL byte before the '\r' of a header, or before the '\n'
 *     of an inline line, hides the line end: it waits for more input until
 *     64KB are buffered, then fails with "too big ...". Here a line end
 *     counts only when no NUL comes before it (line_end()).
 */
#include "ringkv/resp.h"
#include "ringkv/util.h"

#include <stdio.h>
#include <stdlib.h>

#define ARGV_INITIAL 16

/* A complete argument takes at least "$0\r?" plus the two bytes after its
 * (empty) data; used to bound how much a partial frame still needs. */
#define MIN_ARG_BYTES 6

void resp_parser_init(struct resp_parser *p, long long max_bulk_len) {
    memset(p, 0, sizeof(*p));
    p->max_bulk_len = max_bulk_len;
    p->argv_cap = ARGV_INITIAL;
    p->argv = rk_malloc(sizeof(struct slice) * p->argv_cap);
}

void resp_parser_free(struct resp_parser *p) {
    free(p->argv);
    p->argv = NULL;
    p->argc = p->argv_cap = 0;
    rbuf_free(&p->scratch);
}

void resp_parser_trim(struct resp_parser *p, size_t keep_bytes) {
    if (p->argv_cap * sizeof(struct slice) > keep_bytes) {
        p->argv_cap = ARGV_INITIAL;
        p->argv = rk_realloc(p->argv, sizeof(struct slice) * p->argv_cap);
    }
    if (p->scratch.cap > keep_bytes) rbuf_free(&p->scratch);
}

static void grow_argv(struct resp_parser *p) {
    p->argv_cap *= 2;
    p->argv = rk_realloc(p->argv, sizeof(struct slice) * p->argv_cap);
}

static inline void push_arg(struct resp_parser *p, const char *ptr, size_t len) {
    if (RK_UNLIKELY(p->argc == p->argv_cap))
        grow_argv(p);
    p->argv[p->argc].ptr = ptr;
    p->argv[p->argc].len = len;
    p->argc++;
}

static enum resp_status fail(struct resp_parser *p, const char *msg) {
    p->error = msg;
    p->argc = 0;
    return RESP_ERROR;
}

static enum resp_status incomplete(struct resp_parser *p, size_t need) {
    p->need = need;
    p->argc = 0;
    return RESP_INCOMPLETE;
}

/* ------------------------------------------------------------------------ */
/* Multibulk                                                                 */
/* ------------------------------------------------------------------------ */

/* The common header, "<type><digits>\r?" with a short canonical number,
 * decoded without a separate memchr() pass. Whenever it answers, the slow
 * path would have produced the same value and end; anything unusual (a
 * sign, a leading zero, a missing '\r', a long number) is left to it.
 * On success *next is the offset just past the line. */
static inline bool fast_header(const char *buf, size_t len, size_t pos,
                               long long *v, size_t *next) {
    const char *q = buf + pos + 1, *end = buf + len;
    unsigned long long n;

    if (q >= end) return false;
    if (*q == '0') {
        n = 0;
        q++;
    } else if (*q >= '1' && *q <= '9') {
        size_t room = (size_t)(end - q);
        const char *lim = q + (room < 18 ? room : 18);    /* 18 digits cannot overflow */
        n = (unsigned long long)(*q++ - '0');
        while (q < lim && (unsigned)(*q - '0') <= 9)
            n = n * 10 + (unsigned long long)(*q++ - '0');
    } else {
        return false;
    }
    if (q + 1 >= end || *q != '\r') return false;
    *v = (long long)n;
    *next = (size_t)(q + 2 - buf);
    return true;
}

/* What strchr(s, c) finds in Redis's query buffer: the first c, unless a
 * NUL comes first (NULL then, as when there is no c at all). */
static const char *line_end(const char *s, size_t n, char c) {
    const char *e = memchr(s, c, n);
    return e && memchr(s, '\0', (size_t)(e - s)) ? NULL : e;
}

/* Redis's line rule for headers: the first '\r' from the start of the
 * header, and at least one byte after it. Returns 1 with *nl set, 0 if more
 * bytes are needed, -1 if over 64KB are buffered without a '\r'. */
static int find_line(const char *buf, size_t len, size_t pos, const char **nl) {
    size_t avail = len - pos;
    const char *r = line_end(buf + pos, avail, '\r');
    if (r == NULL)
        return avail > RESP_INLINE_MAX ? -1 : 0;
    if ((size_t)(r - (buf + pos)) + 2 > avail)
        return 0;
    *nl = r;
    return 1;
}

static enum resp_status expected_dollar(struct resp_parser *p, char got) {
    /* Redis formats this one with addReplyErrorFormat(), which turns CR
     * and LF into spaces so the reply stays one line. */
    if (got == '\r' || got == '\n') got = ' ';
    snprintf(p->errbuf, sizeof(p->errbuf), "Protocol error: expected '$', got '%c'", got);
    return fail(p, p->errbuf);
}

/* Lower bound of the frame size while a header is incomplete: this header
 * and every argument after it need MIN_ARG_BYTES each. Capped at the point
 * where the 64KB rule would turn the missing '\r' into an error, so the
 * caller never waits past it. */
static size_t header_need(size_t hdr, size_t len, unsigned long long left) {
    size_t need = hdr + (size_t)left * MIN_ARG_BYTES;
    size_t cap = hdr + RESP_INLINE_MAX + 1;
    if (need > cap) need = cap;
    if (need <= len) need = len + 1;
    return need;
}

static enum resp_status parse_multibulk(struct resp_parser *p, const char *buf,
                                        size_t len, size_t *consumed) {
    long long count, bl;
    size_t pos;
    const char *nl;

    if (!fast_header(buf, len, 0, &count, &pos)) {
        int r = find_line(buf, len, 0, &nl);
        if (r == 0) return incomplete(p, 0);
        if (r < 0) return fail(p, "Protocol error: too big mbulk count string");
        if (!str_to_ll(buf + 1, (size_t)(nl - buf - 1), &count))
            return fail(p, "Protocol error: invalid multibulk length");
        pos = (size_t)(nl - buf) + 2;
    }
    if (count > RESP_MBULK_MAX)
        return fail(p, "Protocol error: invalid multibulk length");
    if (count > RESP_UNAUTH_MBULK_MAX && p->unauthenticated)
        return fail(p, "Protocol error: unauthenticated multibulk length");
    if (count <= 0) {
        *consumed = pos;
        return RESP_EMPTY;
    }

    p->argc = 0;
    for (unsigned long long left = (unsigned long long)count; left > 0; left--) {
        size_t hdr = pos;

        if (pos >= len) return incomplete(p, header_need(hdr, len, left));
        if (buf[pos] != '$' || !fast_header(buf, len, pos, &bl, &pos)) {
            int r = find_line(buf, len, pos, &nl);
            if (r == 0) return incomplete(p, header_need(hdr, len, left));
            if (r < 0) return fail(p, "Protocol error: too big bulk count string");
            if (buf[pos] != '$') return expected_dollar(p, buf[pos]);
            if (!str_to_ll(buf + pos + 1, (size_t)(nl - (buf + pos + 1)), &bl) || bl < 0)
                return fail(p, "Protocol error: invalid bulk length");
            pos = (size_t)(nl - buf) + 2;
        }
        if (bl > p->max_bulk_len)
            return fail(p, "Protocol error: invalid bulk length");
        if (bl > RESP_UNAUTH_BULK_MAX && p->unauthenticated)
            return fail(p, "Protocol error: unauthenticated bulk length");

        /* The two bytes after the data are skipped unchecked, as Redis does. */
        if ((unsigned long long)bl + 2 > len - pos)
            return incomplete(p, pos + (size_t)bl + 2 + (size_t)(left - 1) * MIN_ARG_BYTES);
        push_arg(p, buf + pos, (size_t)bl);
        pos += (size_t)bl + 2;
    }
    *consumed = pos;
    return RESP_OK;
}

/* ------------------------------------------------------------------------ */
/* Inline                                                                    */
/* ------------------------------------------------------------------------ */

/* Character classes of sdssplitargs(): blanks between words are isspace()
 * in the C locale, but an unquoted word ends only at space, \t, \r, \n. */
#define C_SPACE 1
#define C_WORDEND 2
#define C_QUOTE 4

static const unsigned char cclass[256] = {
    [' '] = C_SPACE | C_WORDEND, ['\t'] = C_SPACE | C_WORDEND,
    ['\n'] = C_SPACE | C_WORDEND, ['\r'] = C_SPACE | C_WORDEND,
    ['\v'] = C_SPACE, ['\f'] = C_SPACE,
    ['"'] = C_QUOTE, ['\''] = C_QUOTE,
};

static inline bool is_space(char c) { return cclass[(unsigned char)c] & C_SPACE; }

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Unescape a double-quoted section starting after the opening quote into o.
 * Returns the new end of o, or NULL when the quotes are unbalanced. *sp is
 * left just past the closing quote. */
static char *unquote_double(const char **sp, const char *end, char *o) {
    const char *s = *sp;
    for (;;) {
        if (s == end) return NULL;
        if (*s == '\\' && end - s >= 4 && s[1] == 'x' &&
            hex_value(s[2]) >= 0 && hex_value(s[3]) >= 0) {
            *o++ = (char)(hex_value(s[2]) * 16 + hex_value(s[3]));
            s += 4;
        } else if (*s == '\\' && end - s >= 2) {
            char c = s[1];
            switch (c) {
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'b': c = '\b'; break;
            case 'a': c = '\a'; break;
            default: break;
            }
            *o++ = c;
            s += 2;
        } else if (*s == '"') {
            /* The closing quote must end the word. */
            if (s + 1 < end && !is_space(s[1])) return NULL;
            *sp = s + 1;
            return o;
        } else {
            *o++ = *s++;
        }
    }
}

/* Single quotes only know the \' escape. */
static char *unquote_single(const char **sp, const char *end, char *o) {
    const char *s = *sp;
    for (;;) {
        if (s == end) return NULL;
        if (*s == '\\' && end - s >= 2 && s[1] == '\'') {
            *o++ = '\'';
            s += 2;
        } else if (*s == '\'') {
            if (s + 1 < end && !is_space(s[1])) return NULL;
            *sp = s + 1;
            return o;
        } else {
            *o++ = *s++;
        }
    }
}

/* Split one line the way sdssplitargs() does. A word without quotes is
 * pointed at in place; a word with quotes is its unquoted prefix plus the
 * quoted section, unescaped into scratch. The scratch space is reserved up
 * front (unescaping never grows the text) so earlier argv entries stay valid. */
static bool split_line(struct resp_parser *p, const char *s, const char *end) {
    /* A blank line has no words; reserving nothing in a scratch buffer never
     * used would compute NULL + 0, undefined behaviour (clang's UBSan). */
    if (s == end) return true;
    rbuf_reserve(&p->scratch, (size_t)(end - s));
    char *o = p->scratch.buf;

    for (;;) {
        while (s < end && is_space(*s)) s++;
        if (s == end) return true;

        const char *word = s;
        while (s < end && !(cclass[(unsigned char)*s] & (C_WORDEND | C_QUOTE))) s++;
        if (s == end || !(cclass[(unsigned char)*s] & C_QUOTE)) {
            push_arg(p, word, (size_t)(s - word));
            continue;
        }

        char *ostart = o;
        memcpy(o, word, (size_t)(s - word));
        o += s - word;
        char q = *s++;
        o = q == '"' ? unquote_double(&s, end, o) : unquote_single(&s, end, o);
        if (o == NULL) return false;
        push_arg(p, ostart, (size_t)(o - ostart));
    }
}

/* A NUL before the first '\n' hides it for good (line_end): nothing can
 * happen until the 64KB rule fires, so the caller may wait for that. */
static enum resp_status parse_inline(struct resp_parser *p, const char *buf,
                                     size_t len, size_t *consumed) {
    const char *nl = line_end(buf, len, '\n');
    if (nl == NULL) {
        if (len > RESP_INLINE_MAX)
            return fail(p, "Protocol error: too big inline request");
        return incomplete(p, memchr(buf, '\0', len) ? RESP_INLINE_MAX + 1 : 0);
    }

    size_t linelen = (size_t)(nl - buf);
    if (linelen && buf[linelen - 1] == '\r') linelen--;

    p->argc = 0;
    if (!split_line(p, buf, buf + linelen))
        return fail(p, "Protocol error: unbalanced quotes in request");
    *consumed = (size_t)(nl - buf) + 1;
    return p->argc ? RESP_OK : RESP_EMPTY;
}

enum resp_status resp_parse(struct resp_parser *p, const char *buf, size_t len, size_t *consumed) {
    *consumed = 0;
    p->need = 0;
    if (len == 0) return incomplete(p, 0);
    if (buf[0] == '*') return parse_multibulk(p, buf, len, consumed);
    return parse_inline(p, buf, len, consumed);
}

/* The bulk string header at *pos, if whole in buf: its length in *l,
 * *pos moved past it. */
static bool peek_bulk_header(const char *buf, size_t len, size_t *pos, long long *l) {
    return *pos < len && buf[*pos] == '$' && fast_header(buf, len, *pos, l, pos);
}

bool resp_peek_arg1(const char *buf, size_t len, struct slice *arg) {
    long long n, l;
    size_t pos = 0;
    if (len == 0 || buf[0] != '*' || !fast_header(buf, len, 0, &n, &pos) || n < 2) return false;
    if (!peek_bulk_header(buf, len, &pos, &l) || (unsigned long long)l + 2 > len - pos) return false;
    pos += (size_t)l + 2;   /* the command's name, skipped */
    if (!peek_bulk_header(buf, len, &pos, &l) || (unsigned long long)l > len - pos) return false;
    *arg = (struct slice){ buf + pos, (size_t)l };
    return true;
}
