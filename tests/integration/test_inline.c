/*
 * The inline protocol, byte for byte as Redis 7.0.15 answers it: NUL bytes,
 * lone LF, quotes and escapes, blank lines, long lines, bytes 0x80-0xff.
 * Every expected reply here was taken from redis-server (the file passes
 * with RINGKV_TEST_REDIS=1).
 *
 * Redis finds line ends with strchr() on its NUL-terminated query buffer,
 * so a NUL before the line end hides it: nothing is answered, not even the
 * part of the line before the NUL, until 64KB are buffered and the request
 * fails as too big. The tests show that without a clock: they send the
 * input, then enough bytes to pass 64KB, and expect the replies to the
 * lines before the NUL followed by that one error, and the close.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOO_BIG_INLINE "-ERR Protocol error: too big inline request\r\n"
/* Past the 64KB limit even after the lines before the NUL, but only just:
 * the server should have read all of it when it closes. */
#define PAD_BYTES      (64 * 1024 + 64)

struct inline_case {
    const char *in;
    size_t len;
    const char *reply;   /* everything the server sends back */
    size_t reply_len;
    bool closes;         /* a protocol error: the server closes after it */
};

#define IN(s)  s, sizeof(s) - 1
#define OUT(s) s, sizeof(s) - 1

/* Send the input; expect the reply and, unless the connection closes, a
 * PING that still gets its PONG (the stream is still in step). */
static void check_case(struct server *s, const struct inline_case *k)
{
    struct raw *r = raw_connect(s);
    raw_send(r, k->in, k->len);
    if (k->closes) {
        raw_expect_close_(__FILE__, __LINE__, r, k->reply, k->reply_len);
    } else {
        raw_sends(r, "PING\r\n");
        size_t n = k->reply_len;
        char *want = malloc(n + 8);
        memcpy(want, k->reply, n);
        memcpy(want + n, "+PONG\r\n", 7);
        raw_expect_(__FILE__, __LINE__, r, want, n + 7);
        free(want);
    }
    raw_close(r);
}

/* Send the input, then bytes without a line end up past 64KB: only the
 * lines before the hidden line end are answered, then `error`. */
static void check_hidden(struct server *s, const char *in, size_t len, const char *before,
                         const char *error)
{
    struct raw *r = raw_connect(s);
    raw_send(r, in, len);
    char *pad = malloc(PAD_BYTES);
    memset(pad, 'x', PAD_BYTES);
    raw_send(r, pad, PAD_BYTES);
    free(pad);
    size_t nb = strlen(before), ne = strlen(error);
    char *want = malloc(nb + ne + 1);
    memcpy(want, before, nb);
    memcpy(want + nb, error, ne);
    raw_expect_close_(__FILE__, __LINE__, r, want, nb + ne);
    free(want);
    raw_close(r);
}

#define HIDDEN(s, in, before, error) check_hidden((s), in, sizeof(in) - 1, (before), (error))

static void test_nul_hides_the_line_end(void **state)
{
    struct server *s = &FIX(state)->srv;
    HIDDEN(s, "ECHO a\0b c\r\n", "", TOO_BIG_INLINE);
    HIDDEN(s, "ECHO a\0b c\r\nPING\r\n", "", TOO_BIG_INLINE);
    HIDDEN(s, "\0PING\r\n", "", TOO_BIG_INLINE);
    HIDDEN(s, "\r\0\n", "", TOO_BIG_INLINE);
    HIDDEN(s, "ECHO \"a\0\"\r\n", "", TOO_BIG_INLINE);
    HIDDEN(s, " \0 PING\r\n", "", TOO_BIG_INLINE);
    /* the lines before it are answered */
    HIDDEN(s, "PING\r\nECHO a\0b\r\nPING\r\n", "+PONG\r\n", TOO_BIG_INLINE);
    HIDDEN(s, "PING\n\0PING\n", "+PONG\r\n", TOO_BIG_INLINE);
    HIDDEN(s, "PING\r\n\0\n\0\nPING\r\n", "+PONG\r\n", TOO_BIG_INLINE);
    HIDDEN(s, "*1\r\n$4\r\nPING\r\nPI\0NG\r\n", "+PONG\r\n", TOO_BIG_INLINE);
    /* the same rule hides a multibulk header's CR */
    HIDDEN(s, "*1\0\r\n$4\r\nPING\r\n", "", "-ERR Protocol error: too big mbulk count string\r\n");
    HIDDEN(s, "*1\r\n$4\0\r\nPING\r\n", "", "-ERR Protocol error: too big bulk count string\r\n");
}

static void test_inline_replies(void **state)
{
    struct server *s = &FIX(state)->srv;
    static const struct inline_case cases[] = {
        { IN("PING\nPING\n"), OUT("+PONG\r\n+PONG\r\n"), false },
        { IN("\r\n\n\r\n   \t \r\nPING\r\n"), OUT("+PONG\r\n"), false },
        { IN("\f\vECHO x\r\n"), OUT("$1\r\nx\r\n"), false },
        { IN("ECHO a\vb\r\n"), OUT("$3\r\na\vb\r\n"), false },
        { IN("ECHO\ta\r\n"), OUT("$1\r\na\r\n"), false },
        { IN("PING\rfoo\n"), OUT("$3\r\nfoo\r\n"), false },
        { IN("ECHO \"a b\"\r\n"), OUT("$3\r\na b\r\n"), false },
        { IN("ECHO \"\\x41\\x4g\"\r\n"), OUT("$4\r\nAx4g\r\n"), false },
        { IN("ECHO \"\\x00z\"\r\n"), OUT("$2\r\n\0z\r\n"), false },
        { IN("ECHO \"a\\\"b\"\r\n"), OUT("$3\r\na\"b\r\n"), false },
        { IN("ECHO 'it\\'s'\r\n"), OUT("$4\r\nit's\r\n"), false },
        { IN("ECHO \"\xff\xfe\\x\"\r\n"), OUT("$3\r\n\xff\xfex\r\n"), false },
        { IN("ECHO \xff\xfe\r\n"), OUT("$2\r\n\xff\xfe\r\n"), false },
        { IN("*1\r\x00$4\r\nPING\r\n"), OUT("+PONG\r\n"), false },
        { IN("*2\r\n$4\r\nECHO\r\n$3\r\na\0b\r\n"), OUT("$3\r\na\0b\r\n"), false },
        { IN("*-1\r\nPING\r\n"), OUT("+PONG\r\n"), false },
        { IN("ECHO \"a\"\vb\r\n"), OUT("-ERR wrong number of arguments for 'echo' command\r\n"), false },
        { IN("FOO bar baz\r\n"), OUT("-ERR unknown command 'FOO', with args beginning with: 'bar' 'baz' \r\n"), false },
        { IN("FOO \"a\\r\\nb\" c\r\n"), OUT("-ERR unknown command 'FOO', with args beginning with: 'a  b' 'c' \r\n"), false },
        { IN("FOO \"a\\x00b\" c\r\n"), OUT("-ERR unknown command 'FOO', with args beginning with: 'a' 'c' \r\n"), false },
        { IN("\"F\\x00OO\" c\r\n"), OUT("-ERR unknown command 'F', with args beginning with: 'c' \r\n"), false },
        { IN("\"\" a\r\n"), OUT("-ERR unknown command '', with args beginning with: 'a' \r\n"), false },
        { IN("\"a\\rb\"\r\n"), OUT("-ERR unknown command 'a b', with args beginning with: \r\n"), false },
        { IN("$3\r\nfoo\r\n"), OUT("-ERR unknown command '$3', with args beginning with: \r\n"
                               "-ERR unknown command 'foo', with args beginning with: \r\n"), false },
        { IN("\x80\xff\r\n"), OUT("-ERR unknown command '\x80\xff', with args beginning with: \r\n"), false },
        { IN("ECHO \"abc\r\n"), OUT("-ERR Protocol error: unbalanced quotes in request\r\n"), true },
        { IN("ECHO 'a'b\r\n"), OUT("-ERR Protocol error: unbalanced quotes in request\r\n"), true },
        { IN("ECHO \"abc\\\r\n"), OUT("-ERR Protocol error: unbalanced quotes in request\r\n"), true },
        { IN("\x80\r\n\xff\"\n"), OUT("-ERR unknown command '\x80', with args beginning with: \r\n"
                                  "-ERR Protocol error: unbalanced quotes in request\r\n"), true },
        { IN("*\r\n"), OUT("-ERR Protocol error: invalid multibulk length\r\n"), true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(s, &cases[i]);
}

/* Every byte 0x80-0xff in one unknown command name, and lines longer than
 * the 64KB limit that do end within it or not. */
static void test_long_and_binary_lines(void **state)
{
    struct server *s = &FIX(state)->srv;
    char line[130 + 64], want[256];
    size_t n = 0;
    for (int b = 0x80; b <= 0xff; b++) line[n++] = (char)b;
    memcpy(line + n, "\r\n", 2);
    int w = snprintf(want, sizeof want, "-ERR unknown command '%.*s', with args beginning with: \r\n",
                     (int)n, line);
    struct inline_case k = { line, n + 2, want, (size_t)w, false };
    assert_true(w > 0);
    check_case(s, &k);

    /* A 70,000-byte argument on one line: the line is whole, so it runs. */
    size_t big = 70000;
    char *in = malloc(big + 16), *reply = malloc(big + 32);
    memcpy(in, "ECHO ", 5);
    memset(in + 5, 'y', big);
    memcpy(in + 5 + big, "\r\n", 2);
    int h = snprintf(reply, 32, "$%zu\r\n", big);
    memset(reply + h, 'y', big);
    memcpy(reply + h + big, "\r\n", 3);
    k = (struct inline_case){ in, big + 7, reply, (size_t)h + big + 2, false };
    check_case(s, &k);
    /* without its line end, past 64KB it is an error */
    HIDDEN(s, "ECHO ", "", TOO_BIG_INLINE);
    free(in);
    free(reply);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_nul_hides_the_line_end, h_noop_setup),
        cmocka_unit_test_setup(test_inline_replies, h_noop_setup),
        cmocka_unit_test_setup(test_long_and_binary_lines, h_noop_setup),
    };
    int rc = cmocka_run_group_tests_name("inline", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
