/*
 * test_resp.c -- the RESP request parser against Redis 7.0's rules.
 *
 * Every valid frame is fed at every possible split point: each strict prefix
 * must be RESP_INCOMPLETE (with a `need` that never overshoots the frame), the
 * whole frame must parse to the expected argv. Prefixes are copied into
 * exact-size heap blocks so AddressSanitizer catches any read past the end.
 * Malformed input must give Redis's error text to the letter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/resp.h"

#define MAX_BULK (512LL * 1024 * 1024)

struct expect {
    enum resp_status st;
    size_t argc;
    const char *argv[8];
    size_t argl[8];             /* 0 means strlen(argv[i]) unless argv[i] is "" */
};

static size_t arglen(const struct expect *e, size_t i) {
    return e->argl[i] ? e->argl[i] : strlen(e->argv[i]);
}

static void check_argv(struct resp_parser *p, const struct expect *e) {
    assert_int_equal(p->argc, e->argc);
    for (size_t i = 0; i < e->argc; i++) {
        assert_int_equal(p->argv[i].len, arglen(e, i));
        assert_memory_equal(p->argv[i].ptr, e->argv[i], arglen(e, i));
    }
}

/* Parse a copy of frame[0..len) that ends exactly at the heap block's end. */
static enum resp_status parse_copy(struct resp_parser *p, const char *frame, size_t len,
                                   size_t *consumed, char **keep) {
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, frame, len);
    enum resp_status st = resp_parse(p, copy, len, consumed);
    *keep = copy;
    return st;
}

/* The core property: every strict prefix is incomplete, the whole frame
 * parses, and a frame followed by more bytes consumes exactly itself. */
static void check_frame(const char *frame, size_t n, const struct expect *e) {
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    size_t consumed;
    char *copy;

    for (size_t k = 0; k < n; k++) {
        enum resp_status st = parse_copy(&p, frame, k, &consumed, &copy);
        if (st != RESP_INCOMPLETE)
            fail_msg("prefix %zu of %zu: status %d", k, n, st);
        assert_int_equal(consumed, 0);
        /* need is a lower bound of the frame: beyond what we have, within n */
        if (p.need != 0) {
            if (p.need <= k || p.need > n)
                fail_msg("prefix %zu of %zu: need %zu", k, n, p.need);
        }
        free(copy);
    }

    assert_int_equal(parse_copy(&p, frame, n, &consumed, &copy), e->st);
    assert_int_equal(consumed, n);
    if (e->st == RESP_OK) check_argv(&p, e);
    free(copy);

    /* Same frame with a following command in the buffer. */
    char *more = malloc(n + 14);
    memcpy(more, frame, n);
    memcpy(more + n, "*1\r\n$4\r\nPING\r\n", 14);
    assert_int_equal(resp_parse(&p, more, n + 14, &consumed), e->st);
    assert_int_equal(consumed, n);
    if (e->st == RESP_OK) check_argv(&p, e);
    free(more);

    resp_parser_free(&p);
}

#define FRAME(s) s, sizeof(s) - 1

static void test_multibulk_frames(void **state) {
    (void)state;
    check_frame(FRAME("*1\r\n$4\r\nPING\r\n"),
                &(struct expect){ RESP_OK, 1, { "PING" }, { 0 } });
    check_frame(FRAME("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"),
                &(struct expect){ RESP_OK, 3, { "SET", "key", "value" }, { 0 } });
    check_frame(FRAME("*2\r\n$3\r\nGET\r\n$0\r\n\r\n"),
                &(struct expect){ RESP_OK, 2, { "GET", "" }, { 0 } });
    check_frame(FRAME("*2\r\n$12\r\nabcdefghijkl\r\n$10\r\n0123456789\r\n"),
                &(struct expect){ RESP_OK, 2, { "abcdefghijkl", "0123456789" }, { 0 } });
}

static void test_binary_safe(void **state) {
    (void)state;
    /* CR, LF, '*', '$' and NUL inside bulk data are just bytes. */
    check_frame(FRAME("*3\r\n$3\r\nSET\r\n$4\r\na\r\nb\r\n$6\r\n\0*$\r\n\0\r\n"),
                &(struct expect){ RESP_OK, 3, { "SET", "a\r\nb", "\0*$\r\n\0" }, { 0, 0, 6 } });
}

static void test_empty_frames(void **state) {
    (void)state;
    check_frame(FRAME("*0\r\n"), &(struct expect){ RESP_EMPTY, 0, { 0 }, { 0 } });
    check_frame(FRAME("*-1\r\n"), &(struct expect){ RESP_EMPTY, 0, { 0 }, { 0 } });
    check_frame(FRAME("*-10\r\n"), &(struct expect){ RESP_EMPTY, 0, { 0 }, { 0 } });
    /* a fresh parser's scratch buffer is NULL: a blank line must not
     * offset it (NULL + 0, which clang's UBSan reports; found by fuzzing) */
    check_frame(FRAME("\r\n"), &(struct expect){ RESP_EMPTY, 0, { 0 }, { 0 } });
    check_frame(FRAME("\n"), &(struct expect){ RESP_EMPTY, 0, { 0 }, { 0 } });
    check_frame(FRAME("  \t \r\n"), &(struct expect){ RESP_EMPTY, 0, { 0 }, { 0 } });
}

static void test_inline_frames(void **state) {
    (void)state;
    check_frame(FRAME("PING\r\n"), &(struct expect){ RESP_OK, 1, { "PING" }, { 0 } });
    check_frame(FRAME("PING\n"), &(struct expect){ RESP_OK, 1, { "PING" }, { 0 } });
    check_frame(FRAME("  SET  k\tv \r\n"),
                &(struct expect){ RESP_OK, 3, { "SET", "k", "v" }, { 0 } });
    check_frame(FRAME("set \"a b\" 'c d'\r\n"),
                &(struct expect){ RESP_OK, 3, { "set", "a b", "c d" }, { 0 } });
    check_frame(FRAME("echo \"\\x41\\x4a\\x4\" \"\\n\\r\\t\\b\\a\\q\\\\\"\r\n"),
                &(struct expect){ RESP_OK, 3, { "echo", "AJx4", "\n\r\t\b\aq\\" }, { 0 } });
    check_frame(FRAME("echo 'it\\'s' 'a\\nb'\r\n"),
                &(struct expect){ RESP_OK, 3, { "echo", "it's", "a\\nb" }, { 0 } });
    /* An unquoted prefix joins the quoted part; the quote then ends the word. */
    check_frame(FRAME("echo ab\"cd ef\" x\r\n"),
                &(struct expect){ RESP_OK, 3, { "echo", "abcd ef", "x" }, { 0 } });
    check_frame(FRAME("echo \"\" ''\r\n"),
                &(struct expect){ RESP_OK, 3, { "echo", "", "" }, { 0 } });
    /* \v is a blank between words but not the end of an unquoted word. */
    check_frame(FRAME("\vecho a\vb \"q\"\v\r\n"),
                &(struct expect){ RESP_OK, 3, { "echo", "a\vb", "q" }, { 0 } });
    /* Only the CR right before LF is stripped; a lone CR separates words. */
    check_frame(FRAME("PING\r\r\n"), &(struct expect){ RESP_OK, 1, { "PING" }, { 0 } });
    check_frame(FRAME("a\rb\n"), &(struct expect){ RESP_OK, 2, { "a", "b" }, { 0 } });
    /* A NUL after the line end belongs to the next request. */
    check_frame(FRAME("PING\n"), &(struct expect){ RESP_OK, 1, { "PING" }, { 0 } });
}

/* What strchr() on Redis's query buffer does: a NUL before the line end
 * hides it, so Redis answers nothing (not the part of the line before the
 * NUL) and waits until 64KB are buffered. */
static void expect_hidden_line(const char *in, size_t len) {
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    size_t consumed;
    char *copy;
    if (parse_copy(&p, in, len, &consumed, &copy) != RESP_INCOMPLETE)
        fail_msg("input of %zu bytes with a NUL: not incomplete", len);
    assert_int_equal(consumed, 0);
    /* the caller may wait for the 64KB rule: nothing happens before it */
    assert_true(p.need == 0 || p.need <= len + RESP_INLINE_MAX + 1);
    free(copy);
    resp_parser_free(&p);
}

#define HIDDEN(s) expect_hidden_line(s, sizeof(s) - 1)

static void test_nul_hides_line_end(void **state) {
    (void)state;
    HIDDEN("ECHO a\0b c\r\n");
    HIDDEN("ECHO a\0b c\r\nPING\r\n");
    HIDDEN("\0PING\r\n");
    HIDDEN("\r\0\n");
    HIDDEN("ECHO \"a\0\"\r\n");
    HIDDEN("*1\0\r\n$4\r\nPING\r\n");
    HIDDEN("*1\r\n$4\0\r\nPING\r\n");
    HIDDEN("*2\r\n$4\r\nECHO\r\n$1\0\r\nx\r\n");

    /* An inline line waits for exactly the 64KB rule. */
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    size_t consumed;
    assert_int_equal(resp_parse(&p, "a\0b\n", 4, &consumed), RESP_INCOMPLETE);
    assert_int_equal(p.need, RESP_INLINE_MAX + 1);

    /* A NUL after the header's CR, or inside bulk data, is just a byte. */
    check_frame(FRAME("*1\r\0$4\r\nPING\r\n"), &(struct expect){ RESP_OK, 1, { "PING" }, { 0 } });
    check_frame(FRAME("*2\r\n$4\r\nECHO\r\n$3\r\na\0b\r\n"),
                &(struct expect){ RESP_OK, 2, { "ECHO", "a\0b" }, { 0, 3 } });
    resp_parser_free(&p);
}

static void test_inline_zero_copy(void **state) {
    (void)state;
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    const char buf[] = "SET key \"quoted\" plain\r\n";
    size_t consumed;
    assert_int_equal(resp_parse(&p, buf, sizeof(buf) - 1, &consumed), RESP_OK);
    assert_int_equal(p.argc, 4);
    assert_ptr_equal(p.argv[0].ptr, buf);
    assert_ptr_equal(p.argv[1].ptr, buf + 4);
    assert_true(p.argv[2].ptr < buf || p.argv[2].ptr >= buf + sizeof(buf));
    assert_memory_equal(p.argv[2].ptr, "quoted", 6);
    assert_ptr_equal(p.argv[3].ptr, buf + 17);

    const char mb[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    assert_int_equal(resp_parse(&p, mb, sizeof(mb) - 1, &consumed), RESP_OK);
    assert_ptr_equal(p.argv[0].ptr, mb + 8);
    assert_ptr_equal(p.argv[1].ptr, mb + 17);
    resp_parser_free(&p);
}

/* Redis ends a header at the first CR and skips the next byte unchecked,
 * and skips the two bytes after bulk data unchecked too. */
static void test_redis_quirks(void **state) {
    (void)state;
    check_frame(FRAME("*1\rX$3\rYfooZZ"), &(struct expect){ RESP_OK, 1, { "foo" }, { 0 } });
}

static void test_pipeline(void **state) {
    (void)state;
    const char buf[] =
        "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n"
        "PING\r\n"
        "\r\n"
        "*0\r\n"
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
        "*1\r\n$4\r\nPI";
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    size_t off = 0, consumed;
    const char *b = buf;
    size_t len = sizeof(buf) - 1;

    assert_int_equal(resp_parse(&p, b + off, len - off, &consumed), RESP_OK);
    assert_int_equal(p.argc, 2);
    assert_memory_equal(p.argv[1].ptr, "hi", 2);
    off += consumed;
    assert_int_equal(resp_parse(&p, b + off, len - off, &consumed), RESP_OK);
    assert_int_equal(p.argc, 1);
    assert_memory_equal(p.argv[0].ptr, "PING", 4);
    off += consumed;
    assert_int_equal(resp_parse(&p, b + off, len - off, &consumed), RESP_EMPTY);
    assert_int_equal(consumed, 2);
    off += consumed;
    assert_int_equal(resp_parse(&p, b + off, len - off, &consumed), RESP_EMPTY);
    assert_int_equal(consumed, 4);
    off += consumed;
    assert_int_equal(resp_parse(&p, b + off, len - off, &consumed), RESP_OK);
    assert_int_equal(p.argc, 3);
    assert_memory_equal(p.argv[2].ptr, "v", 1);
    off += consumed;
    assert_int_equal(resp_parse(&p, b + off, len - off, &consumed), RESP_INCOMPLETE);
    assert_int_equal(consumed, 0);
    /* All headers seen: need is the exact frame size. */
    assert_int_equal(p.need, 14);
    resp_parser_free(&p);
}

static void test_many_args(void **state) {
    (void)state;
    const int n = 3000;
    size_t cap = 16 + (size_t)n * 16;
    char *buf = malloc(cap);
    size_t len = (size_t)sprintf(buf, "*%d\r\n", n);
    for (int i = 0; i < n; i++)
        len += (size_t)sprintf(buf + len, "$%d\r\n%d\r\n", i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : 4, i);
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    size_t consumed;
    assert_int_equal(resp_parse(&p, buf, len, &consumed), RESP_OK);
    assert_int_equal(consumed, len);
    assert_int_equal(p.argc, n);
    char tmp[16];
    for (int i = 0; i < n; i++) {
        int l = sprintf(tmp, "%d", i);
        assert_int_equal(p.argv[i].len, l);
        assert_memory_equal(p.argv[i].ptr, tmp, (size_t)l);
    }
    /* A cut in the middle: need stays a lower bound of the real size. */
    for (size_t cut = 5; cut < len; cut += 997) {
        assert_int_equal(resp_parse(&p, buf, cut, &consumed), RESP_INCOMPLETE);
        assert_true(p.need == 0 || (p.need > cut && p.need <= len));
    }
    resp_parser_free(&p);
    free(buf);
}

static void test_large_bulk(void **state) {
    (void)state;
    const size_t big = 1u << 20;
    char hdr[64];
    size_t hl = (size_t)sprintf(hdr, "*2\r\n$3\r\nSET\r\n$%zu\r\n", big);
    size_t len = hl + big + 2;
    char *buf = malloc(len);
    memcpy(buf, hdr, hl);
    memset(buf + hl, 'x', big);
    memcpy(buf + hl + big, "\r\n", 2);

    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    size_t consumed;
    size_t cuts[] = { 0, 1, 13, hl - 1, hl, hl + 1, hl + 65536, len - 2, len - 1 };
    for (size_t i = 0; i < RK_ARRAY_LEN(cuts); i++) {
        assert_int_equal(resp_parse(&p, buf, cuts[i], &consumed), RESP_INCOMPLETE);
        if (cuts[i] >= hl) assert_int_equal(p.need, len);
    }
    assert_int_equal(resp_parse(&p, buf, len, &consumed), RESP_OK);
    assert_int_equal(consumed, len);
    assert_int_equal(p.argv[1].len, big);
    assert_ptr_equal(p.argv[1].ptr, buf + hl);
    resp_parser_free(&p);
    free(buf);
}

/* ---------------------------------------------------------------- errors */

static void expect_error_p(struct resp_parser *p, const char *in, size_t len, const char *msg) {
    size_t consumed = 12345;
    char *copy;
    enum resp_status st = parse_copy(p, in, len, &consumed, &copy);
    if (st != RESP_ERROR)
        fail_msg("input '%.*s': status %d, expected error '%s'", (int)len, in, st, msg);
    assert_string_equal(p->error, msg);
    free(copy);
}

static void expect_error(const char *in, size_t len, const char *msg) {
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    expect_error_p(&p, in, len, msg);
    resp_parser_free(&p);
}

#define ERR(s, msg) expect_error(s, sizeof(s) - 1, msg)

static void test_errors_multibulk(void **state) {
    (void)state;
    const char *mb = "Protocol error: invalid multibulk length";
    ERR("*3000000000\r\n", mb);
    ERR("*2147483648\r\n", mb);
    ERR("*99999999999999999999\r\n", mb);
    ERR("*abc\r\n", mb);
    ERR("*\r\n", mb);
    ERR("*+1\r\n", mb);
    ERR("* 1\r\n", mb);
    ERR("*1 \r\n", mb);
    ERR("*01\r\n", mb);
    ERR("*-0\r\n", mb);

    ERR("*1\r\nfoo\r\n", "Protocol error: expected '$', got 'f'");
    ERR("*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", "Protocol error: expected '$', got 'f'");
    ERR("*2\r\n$1\r\na\r\n:1\r\n", "Protocol error: expected '$', got ':'");
    /* Redis maps CR/LF in this message to spaces. */
    ERR("*1\r\n\r\n", "Protocol error: expected '$', got ' '");
    ERR("*1\r\n\n\r\n", "Protocol error: expected '$', got ' '");

    const char *bl = "Protocol error: invalid bulk length";
    ERR("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$-10\r\n", bl);
    ERR("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$2000000000\r\n", bl);
    ERR("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$blabla\r\n", bl);
    ERR("*1\r\n$\r\n", bl);
    ERR("*1\r\n$-1\r\n", bl);
    ERR("*1\r\n$-0\r\n", bl);
    ERR("*1\r\n$01\r\n", bl);
    ERR("*1\r\n$+1\r\n", bl);
    ERR("*1\r\n$1 \r\n", bl);
    ERR("*1\r\n$99999999999999999999\r\n", bl);
}

static void test_errors_limits(void **state) {
    (void)state;
    struct resp_parser p;
    resp_parser_init(&p, 100);
    size_t consumed;
    char *copy;

    /* proto-max-bulk-len is inclusive. */
    assert_int_equal(parse_copy(&p, FRAME("*1\r\n$100\r\n"), &consumed, &copy), RESP_INCOMPLETE);
    assert_int_equal(p.need, 10 + 102);
    free(copy);
    expect_error_p(&p, FRAME("*1\r\n$101\r\n"), "Protocol error: invalid bulk length");

    /* Up to 64KB without a CR is still a header in progress. */
    size_t n = RESP_INLINE_MAX + 1;
    char *junk = malloc(n + 8);
    junk[0] = '*';
    memset(junk + 1, '1', n);
    assert_int_equal(resp_parse(&p, junk, RESP_INLINE_MAX, &consumed), RESP_INCOMPLETE);
    assert_int_equal(resp_parse(&p, junk, RESP_INLINE_MAX + 1, &consumed), RESP_ERROR);
    assert_string_equal(p.error, "Protocol error: too big mbulk count string");

    memcpy(junk, "*1\r\n$", 5);
    memset(junk + 5, '1', n);
    assert_int_equal(resp_parse(&p, junk, 4 + RESP_INLINE_MAX, &consumed), RESP_INCOMPLETE);
    /* need must not ask for more than the 64KB rule would wait for */
    assert_true(p.need == 0 || p.need <= 4 + RESP_INLINE_MAX + 1);
    assert_int_equal(resp_parse(&p, junk, 4 + RESP_INLINE_MAX + 1, &consumed), RESP_ERROR);
    assert_string_equal(p.error, "Protocol error: too big bulk count string");

    /* A count far beyond what is buffered must not make the caller wait
     * past the point where a runaway header becomes an error. */
    memcpy(junk, "*2000000\r\n$", 11);
    memset(junk + 11, '1', n - 11);
    assert_int_equal(resp_parse(&p, junk, 11, &consumed), RESP_INCOMPLETE);
    assert_true(p.need <= 10 + RESP_INLINE_MAX + 1);

    /* Inline: no newline within 64KB. A long line that does end is fine. */
    memset(junk, 'a', n);
    assert_int_equal(resp_parse(&p, junk, RESP_INLINE_MAX, &consumed), RESP_INCOMPLETE);
    assert_int_equal(resp_parse(&p, junk, RESP_INLINE_MAX + 1, &consumed), RESP_ERROR);
    assert_string_equal(p.error, "Protocol error: too big inline request");
    junk[n] = '\n';
    assert_int_equal(resp_parse(&p, junk, n + 1, &consumed), RESP_OK);
    assert_int_equal(p.argc, 1);
    assert_int_equal(p.argv[0].len, n);
    assert_int_equal(consumed, n + 1);

    /* Redis's desync regression inputs: a NUL then junk without newline. */
    junk[0] = '\0';
    memset(junk + 1, 'A', n - 1);
    assert_int_equal(resp_parse(&p, junk, n, &consumed), RESP_ERROR);
    assert_string_equal(p.error, "Protocol error: too big inline request");
    junk[0] = '*';
    junk[1] = '\0';
    assert_int_equal(resp_parse(&p, junk, n, &consumed), RESP_ERROR);
    assert_string_equal(p.error, "Protocol error: too big mbulk count string");
    free(junk);
    resp_parser_free(&p);
}

static void test_errors_unbalanced(void **state) {
    (void)state;
    const char *m = "Protocol error: unbalanced quotes in request";
    ERR("set \"\"\"test-key\"\"\" test-value\r\n", m);
    ERR("echo \"abc\r\n", m);
    ERR("echo 'abc\r\n", m);
    ERR("echo \"a\"b\r\n", m);
    ERR("echo 'a'b\r\n", m);
    ERR("echo \"abc\\\"\r\n", m);
    ERR("echo 'abc\\'\r\n", m);
    ERR("echo \"abc\\\r\n", m);
    ERR("\"\n", m);
}

static void test_unauthenticated(void **state) {
    (void)state;
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    p.unauthenticated = true;
    size_t consumed;
    char *copy;

    expect_error_p(&p, FRAME("*11\r\n"), "Protocol error: unauthenticated multibulk length");
    /* The number is validated first. */
    expect_error_p(&p, FRAME("*3000000000\r\n"), "Protocol error: invalid multibulk length");
    assert_int_equal(parse_copy(&p, FRAME("*10\r\n"), &consumed, &copy), RESP_INCOMPLETE);
    free(copy);

    expect_error_p(&p, FRAME("*2\r\n$4\r\nAUTH\r\n$16385\r\n"),
                   "Protocol error: unauthenticated bulk length");
    expect_error_p(&p, FRAME("*2\r\n$4\r\nAUTH\r\n$-1\r\n"), "Protocol error: invalid bulk length");
    assert_int_equal(parse_copy(&p, FRAME("*2\r\n$4\r\nAUTH\r\n$16384\r\n"), &consumed, &copy),
                     RESP_INCOMPLETE);
    free(copy);

    p.unauthenticated = false;
    assert_int_equal(parse_copy(&p, FRAME("*11\r\n"), &consumed, &copy), RESP_INCOMPLETE);
    free(copy);
    assert_int_equal(parse_copy(&p, FRAME("*2\r\n$4\r\nAUTH\r\n$16385\r\n"), &consumed, &copy),
                     RESP_INCOMPLETE);
    free(copy);
    resp_parser_free(&p);
}

/* Errors must also be found when the bad header arrives in pieces: every
 * prefix is incomplete (never an error, never a wrong OK). */
static void test_error_prefixes(void **state) {
    (void)state;
    const char in[] = "*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n";
    size_t n = sizeof(in) - 1;
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    size_t consumed;
    char *copy;
    for (size_t k = 0; k < n; k++) {
        enum resp_status st = parse_copy(&p, in, k, &consumed, &copy);
        free(copy);
        if (st == RESP_ERROR) {
            assert_true(k >= n - 4);   /* only once "fooz\r" + one byte are in */
            assert_string_equal(p.error, "Protocol error: expected '$', got 'f'");
        } else {
            assert_int_equal(st, RESP_INCOMPLETE);
        }
    }
    resp_parser_free(&p);
}

/* resp_peek_arg1: the key guessed from a request's first bytes agrees with
 * what resp_parse finds, at every split point of the frame; it never reads
 * past the bytes given (exact-size copies for ASan) and says no where a
 * guess would be wrong. */
static void test_peek_arg1(void **state) {
    (void)state;
    static const char *const frames[] = {
        "*2\r\n$3\r\nGET\r\n$7\r\nkey:123\r\n",
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nval\r\n",
        "*2\r\n$3\r\nGET\r\n$0\r\n\r\n",
    };
    struct resp_parser p;
    resp_parser_init(&p, MAX_BULK);
    for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++) {
        size_t len = strlen(frames[f]), used = 0;
        assert_int_equal(resp_parse(&p, frames[f], len, &used), RESP_OK);
        for (size_t cut = 0; cut <= len; cut++) {
            char *copy = malloc(cut ? cut : 1);
            memcpy(copy, frames[f], cut);
            struct slice key = { NULL, 0 };
            bool got = resp_peek_arg1(copy, cut, &key);
            /* a guess only once the whole key is in */
            size_t key_end = (size_t)(p.argv[1].ptr - frames[f]) + p.argv[1].len;
            assert_int_equal(got, cut >= key_end);
            if (got) {
                assert_int_equal(key.len, p.argv[1].len);
                assert_ptr_equal(key.ptr, copy + (p.argv[1].ptr - frames[f]));
            }
            free(copy);
        }
    }
    static const char *const no_key[] = {
        "*1\r\n$4\r\nPING\r\n", "PING\r\n", "GET key\r\n", "*2\r\n+3\r\nGET\r\n$1\r\nk\r\n",
        "*2\r\n$-1\r\n$1\r\nk\r\n", "*2\r\n$3\r\nGET\r\n$99999999999999999\r\nk\r\n", "*x\r\n", "",
    };
    for (size_t i = 0; i < sizeof no_key / sizeof no_key[0]; i++) {
        struct slice key;
        assert_false(resp_peek_arg1(no_key[i], strlen(no_key[i]), &key));
    }
    resp_parser_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multibulk_frames),
        cmocka_unit_test(test_binary_safe),
        cmocka_unit_test(test_empty_frames),
        cmocka_unit_test(test_inline_frames),
        cmocka_unit_test(test_inline_zero_copy),
        cmocka_unit_test(test_nul_hides_line_end),
        cmocka_unit_test(test_redis_quirks),
        cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_many_args),
        cmocka_unit_test(test_large_bulk),
        cmocka_unit_test(test_errors_multibulk),
        cmocka_unit_test(test_errors_limits),
        cmocka_unit_test(test_errors_unbalanced),
        cmocka_unit_test(test_unauthenticated),
        cmocka_unit_test(test_error_prefixes),
        cmocka_unit_test(test_peek_arg1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
