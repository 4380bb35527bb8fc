/*
 * test_reply.c -- every reply type, byte for byte, in RESP2 and RESP3.
 * Expected bytes follow Redis 7.0's addReply*() (checked against
 * redis-server's raw output where a command produces the type).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <math.h>
#include <cmocka.h>

#include "ringkv/reply.h"

struct fixture {
    struct rbuf out;
    struct reply r;
};

static int setup(void **state) {
    struct fixture *f = calloc(1, sizeof(*f));
    f->r.out = &f->out;
    f->r.resp = 2;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    struct fixture *f = *state;
    rbuf_free(&f->out);
    free(f);
    return 0;
}

/* Compare what was written since the last check, then reset. */
static void expect_bytes(struct fixture *f, const char *bytes, size_t n) {
    if (f->out.len != n || memcmp(f->out.buf, bytes, n) != 0)
        fail_msg("got '%.*s' (%zu bytes), want '%.*s' (%zu bytes)",
                 (int)f->out.len, f->out.buf, f->out.len, (int)n, bytes, n);
    f->out.len = 0;
}
#define EXPECT(f, lit) expect_bytes(f, lit, sizeof(lit) - 1)

/* Run the same call in both protocols. */
#define BOTH(f, call, want2, want3) do {            \
        (f)->r.resp = 2; call; EXPECT(f, want2);    \
        (f)->r.resp = 3; call; EXPECT(f, want3);    \
    } while (0)

static void test_simple_and_errors(void **state) {
    struct fixture *f = *state;
    struct reply *r = &f->r;
    BOTH(f, reply_ok(r), "+OK\r\n", "+OK\r\n");
    BOTH(f, reply_simple(r, "PONG"), "+PONG\r\n", "+PONG\r\n");
    BOTH(f, reply_simple_len(r, "QUEUEDxx", 6), "+QUEUED\r\n", "+QUEUED\r\n");
    BOTH(f, reply_simple(r, ""), "+\r\n", "+\r\n");
    BOTH(f, reply_error(r, ERR_SYNTAX), "-ERR syntax error\r\n", "-ERR syntax error\r\n");
    reply_error(r, ERR_WRONGTYPE);
    EXPECT(f, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    /* CR/LF inside an error would break the stream: they become spaces. */
    reply_error(r, "ERR bad\r\nthing\n");
    EXPECT(f, "-ERR bad  thing \r\n");
    reply_errorf(r, "ERR unknown command '%s', with args beginning with: %s", "foo", "'a' 'b' ");
    EXPECT(f, "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
    reply_errorf(r, "ERR wrong number of arguments for '%s' command", "get");
    EXPECT(f, "-ERR wrong number of arguments for 'get' command\r\n");
    /* errorf trims CR/LF at the ends first, as addReplyErrorFormat() does. */
    reply_errorf(r, "ERR a%sb\r\n", "\r\n");
    EXPECT(f, "-ERR a  b\r\n");
    reply_errorf(r, "ERR %d", 42);
    EXPECT(f, "-ERR 42\r\n");
    /* Long formatted errors are not truncated. */
    char big[600];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    reply_errorf(r, "ERR %s!", big);
    assert_int_equal(f->out.len, 1 + 4 + 599 + 1 + 2);
    assert_memory_equal(f->out.buf + f->out.len - 4, "x!\r\n", 4);
    f->out.len = 0;
}

static void test_integers(void **state) {
    struct fixture *f = *state;
    struct reply *r = &f->r;
    BOTH(f, reply_int(r, 0), ":0\r\n", ":0\r\n");
    BOTH(f, reply_int(r, 7), ":7\r\n", ":7\r\n");
    BOTH(f, reply_int(r, -1), ":-1\r\n", ":-1\r\n");
    BOTH(f, reply_int(r, 1234567890123LL), ":1234567890123\r\n", ":1234567890123\r\n");
    reply_int(r, LLONG_MAX);
    EXPECT(f, ":9223372036854775807\r\n");
    reply_int(r, LLONG_MIN);
    EXPECT(f, ":-9223372036854775808\r\n");
    BOTH(f, reply_bulk_ll(r, -42), "$3\r\n-42\r\n", "$3\r\n-42\r\n");
    reply_bulk_ll(r, LLONG_MIN);
    EXPECT(f, "$20\r\n-9223372036854775808\r\n");
}

static void test_bulk(void **state) {
    struct fixture *f = *state;
    struct reply *r = &f->r;
    BOTH(f, reply_bulk(r, "bar", 3), "$3\r\nbar\r\n", "$3\r\nbar\r\n");
    BOTH(f, reply_bulk(r, "", 0), "$0\r\n\r\n", "$0\r\n\r\n");
    BOTH(f, reply_bulk(r, "a\r\n\0b", 5), "$5\r\na\r\n\0b\r\n", "$5\r\na\r\n\0b\r\n");
    BOTH(f, reply_bulk_slice(r, SLICE_LIT("hello")), "$5\r\nhello\r\n", "$5\r\nhello\r\n");
    BOTH(f, reply_bulk_cstr(r, "x"), "$1\r\nx\r\n", "$1\r\nx\r\n");
    BOTH(f, reply_bulk_cstr(r, NULL), "$-1\r\n", "_\r\n");

    /* A large bulk: header length and payload intact. */
    size_t n = 100000;
    char *big = malloc(n);
    memset(big, 'z', n);
    reply_bulk(r, big, n);
    assert_int_equal(f->out.len, 9 + n + 2);
    assert_memory_equal(f->out.buf, "$100000\r\n", 9);
    assert_memory_equal(f->out.buf + 9, big, n);
    assert_memory_equal(f->out.buf + 9 + n, "\r\n", 2);
    f->out.len = 0;
    free(big);
}

static void test_nulls_and_aggregates(void **state) {
    struct fixture *f = *state;
    struct reply *r = &f->r;
    BOTH(f, reply_null(r), "$-1\r\n", "_\r\n");
    BOTH(f, reply_null_array(r), "*-1\r\n", "_\r\n");
    BOTH(f, reply_array(r, 0), "*0\r\n", "*0\r\n");
    BOTH(f, reply_array(r, 3), "*3\r\n", "*3\r\n");
    BOTH(f, reply_array(r, 12345), "*12345\r\n", "*12345\r\n");
    BOTH(f, reply_map(r, 0), "*0\r\n", "%0\r\n");
    BOTH(f, reply_map(r, 2), "*4\r\n", "%2\r\n");
    BOTH(f, reply_map(r, 7), "*14\r\n", "%7\r\n");
    BOTH(f, reply_set(r, 0), "*0\r\n", "~0\r\n");
    BOTH(f, reply_set(r, 5), "*5\r\n", "~5\r\n");
    BOTH(f, reply_bool(r, true), ":1\r\n", "#t\r\n");
    BOTH(f, reply_bool(r, false), ":0\r\n", "#f\r\n");
}

static void test_doubles(void **state) {
    struct fixture *f = *state;
    struct reply *r = &f->r;
    /* redis 7.0: ZSCORE in RESP2 and RESP3 */
    BOTH(f, reply_double(r, 0.1), "$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n");
    BOTH(f, reply_double(r, 5), "$1\r\n5\r\n", ",5\r\n");
    BOTH(f, reply_double(r, 0), "$1\r\n0\r\n", ",0\r\n");
    BOTH(f, reply_double(r, -2.5), "$4\r\n-2.5\r\n", ",-2.5\r\n");
    BOTH(f, reply_double(r, 1e17), "$5\r\n1e+17\r\n", ",1e+17\r\n");
    BOTH(f, reply_double(r, 1e-7), "$22\r\n9.9999999999999995e-08\r\n", ",9.9999999999999995e-08\r\n");
    BOTH(f, reply_double(r, 123456789012345678.0),
         "$22\r\n1.2345678901234568e+17\r\n", ",1.2345678901234568e+17\r\n");
    BOTH(f, reply_double(r, HUGE_VAL), "$3\r\ninf\r\n", ",inf\r\n");
    BOTH(f, reply_double(r, -HUGE_VAL), "$4\r\n-inf\r\n", ",-inf\r\n");
}

static void test_verbatim_and_raw(void **state) {
    struct fixture *f = *state;
    struct reply *r = &f->r;
    BOTH(f, reply_verbatim(r, "hello", 5, "txt"), "$5\r\nhello\r\n", "=9\r\ntxt:hello\r\n");
    BOTH(f, reply_verbatim(r, "", 0, "txt"), "$0\r\n\r\n", "=4\r\ntxt:\r\n");
    /* ext is padded with spaces, or cut, to exactly three bytes. */
    f->r.resp = 3;
    reply_verbatim(r, "# x", 3, "md");
    EXPECT(f, "=7\r\nmd :# x\r\n");
    reply_verbatim(r, "ab", 2, "markdown");
    EXPECT(f, "=6\r\nmar:ab\r\n");
    BOTH(f, reply_raw(r, "+RAW\r\n", 6), "+RAW\r\n", "+RAW\r\n");
}

static void test_appends(void **state) {
    struct fixture *f = *state;
    struct reply *r = &f->r;
    /* A full nested reply, appended piece by piece, in each protocol. */
    f->r.resp = 2;
    reply_map(r, 2);
    reply_bulk_cstr(r, "server");
    reply_bulk_cstr(r, "ringkv");
    reply_bulk_cstr(r, "proto");
    reply_int(r, 2);
    EXPECT(f, "*4\r\n$6\r\nserver\r\n$6\r\nringkv\r\n$5\r\nproto\r\n:2\r\n");
    f->r.resp = 3;
    reply_map(r, 1);
    reply_bulk_cstr(r, "k");
    reply_set(r, 2);
    reply_double(r, 1.5);
    reply_null(r);
    EXPECT(f, "%1\r\n$1\r\nk\r\n~2\r\n,1.5\r\n_\r\n");

    /* Many small replies grow the buffer without losing bytes. */
    for (int i = 0; i < 10000; i++) reply_int(r, i);
    size_t expect = 0;
    char tmp[32];
    for (int i = 0; i < 10000; i++) expect += (size_t)snprintf(tmp, sizeof(tmp), ":%d\r\n", i);
    assert_int_equal(f->out.len, expect);
    assert_memory_equal(f->out.buf + f->out.len - 7, ":9999\r\n", 7);
    f->out.len = 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_simple_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bulk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nulls_and_aggregates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_doubles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verbatim_and_raw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_appends, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
