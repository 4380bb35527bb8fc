/*
 * test_command_docs.c -- the args_doc grammar of command_docs.c and the
 * "arguments" reply of COMMAND DOCS built from it.
 *
 * The parse tests check the flat depth-first tree; the reply tests compare
 * with the bytes redis-server 7.0.15 sends for COMMAND DOCS GET and SET
 * (everything after the "arguments" key), in RESP2 and RESP3. Every string
 * in the command table must parse: a bad one would silently lose a
 * command's arguments in the reply.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/command.h"

static void assert_slice(struct slice s, const char *want) {
    if (s.len != strlen(want) || memcmp(s.ptr, want, s.len) != 0)
        fail_msg("got '%.*s', want '%s'", (int)s.len, s.ptr, want);
}

static struct doc_args parse_ok(const char *doc) {
    struct doc_args a;
    char err[256];
    if (!doc_args_parse(doc, &a, err, sizeof err)) fail_msg("%s", err);
    return a;
}

static void test_empty(void **state) {
    (void)state;
    struct doc_args a = parse_ok(NULL);
    assert_int_equal(a.n, 0);
    assert_int_equal(a.ntop, 0);
    a = parse_ok("");
    assert_int_equal(a.ntop, 0);
    doc_args_free(&a);
}

static void test_simple(void **state) {
    (void)state;
    struct doc_args a = parse_ok("key:key value:string  seconds:integer");
    assert_int_equal(a.ntop, 3);
    assert_int_equal(a.n, 3);
    assert_slice(a.arg[0].name, "key");
    assert_string_equal(a.arg[0].type, "key");
    assert_slice(a.arg[1].name, "value");
    assert_string_equal(a.arg[1].type, "string");
    assert_slice(a.arg[2].name, "seconds");
    assert_string_equal(a.arg[2].type, "integer");
    for (size_t i = 0; i < a.n; i++) {
        assert_int_equal(a.arg[i].flags, 0);
        assert_int_equal(a.arg[i].nsub, 0);
        assert_int_equal(a.arg[i].token.len, 0);
    }
    doc_args_free(&a);
}

static void test_optional_and_multiple(void **state) {
    (void)state;
    struct doc_args a = parse_ok("[message:string] key:key ... [section:string ...] [get:pattern=GET +...]");
    assert_int_equal(a.ntop, 4);
    assert_int_equal(a.arg[0].flags, DOC_ARG_OPTIONAL);
    assert_int_equal(a.arg[1].flags, DOC_ARG_MULTIPLE);
    assert_int_equal(a.arg[2].flags, DOC_ARG_OPTIONAL | DOC_ARG_MULTIPLE);
    assert_int_equal(a.arg[3].flags, DOC_ARG_OPTIONAL | DOC_ARG_MULTIPLE | DOC_ARG_MULTIPLE_TOKEN);
    assert_slice(a.arg[3].token, "GET");
    doc_args_free(&a);
    /* a version ends where "..." starts, even without a space */
    a = parse_ok("a:integer@6.2.0...");
    assert_slice(a.arg[0].since, "6.2.0");
    assert_int_equal(a.arg[0].flags, DOC_ARG_MULTIPLE);
    doc_args_free(&a);
}

static void test_modifiers(void **state) {
    (void)state;
    /* any order; names may hold ':' and '/'; tokens may be punctuation */
    struct doc_args a = parse_ok("ip:port:string!2.8.12 yes/no:string=SKIPME@3.2.0'yes or no' eq:pure-token==");
    assert_int_equal(a.ntop, 3);
    assert_slice(a.arg[0].name, "ip:port");
    assert_string_equal(a.arg[0].type, "string");
    assert_slice(a.arg[0].deprecated_since, "2.8.12");
    assert_slice(a.arg[1].name, "yes/no");
    assert_slice(a.arg[1].token, "SKIPME");
    assert_slice(a.arg[1].since, "3.2.0");
    assert_slice(a.arg[1].display, "yes or no");
    assert_slice(a.arg[2].token, "=");
    doc_args_free(&a);
}

static void test_nested(void **state) {
    (void)state;
    /* HELLO: a block holding a block; then a oneof after it */
    struct doc_args a = parse_ok(
        "[arguments:block(protover:integer [username_password:block=AUTH(username:string password:string)] "
        "[clientname:string=SETNAME])] [mode:oneof@7.0.0(nx:pure-token=NX xx:pure-token=XX)]");
    assert_int_equal(a.ntop, 2);
    assert_int_equal(a.n, 9);
    const struct { const char *name; size_t nsub; } want[] = {
        {"arguments", 3}, {"protover", 0}, {"username_password", 2}, {"username", 0}, {"password", 0},
        {"clientname", 0}, {"mode", 2}, {"nx", 0}, {"xx", 0},
    };
    for (size_t i = 0; i < RK_ARRAY_LEN(want); i++) {
        assert_slice(a.arg[i].name, want[i].name);
        assert_int_equal(a.arg[i].nsub, want[i].nsub);
    }
    assert_string_equal(a.arg[0].type, "block");
    assert_int_equal(a.arg[0].flags, DOC_ARG_OPTIONAL);
    assert_slice(a.arg[2].token, "AUTH");
    assert_int_equal(a.arg[2].flags, DOC_ARG_OPTIONAL);
    assert_slice(a.arg[5].token, "SETNAME");
    assert_string_equal(a.arg[6].type, "oneof");
    assert_slice(a.arg[6].since, "7.0.0");
    doc_args_free(&a);
    /* a repeated oneof inside a oneof (CLIENT KILL's shape) */
    a = parse_ok("filter:oneof(old:string new:oneof([id:integer=ID] [user:string=USER]) ...)");
    assert_int_equal(a.ntop, 1);
    assert_int_equal(a.arg[0].nsub, 2);
    assert_int_equal(a.arg[2].nsub, 2);
    assert_int_equal(a.arg[2].flags, DOC_ARG_MULTIPLE);
    assert_int_equal(a.arg[3].flags, DOC_ARG_OPTIONAL);
    doc_args_free(&a);
}

static void test_malformed(void **state) {
    (void)state;
    const char *bad[] = {
        "key",                      /* no type */
        ":key",                     /* no name */
        "a:keys",                   /* unknown type */
        "[a:key",                   /* unclosed [ */
        "a:key]",
        "a:oneof",                  /* oneof without alternatives */
        "a:block()",
        "a:oneof(b:key",            /* unclosed ( */
        "a:string(b:key)",          /* children on a plain argument */
        "a:pure-token",             /* pure-token without a token */
        "a:string=",
        "a:string@",
        "a:string@x",
        "a:string'oops",
        "a:string+...",             /* multiple_token without a token */
        "a:key(b:key)c:key",
    };
    for (size_t i = 0; i < RK_ARRAY_LEN(bad); i++) {
        struct doc_args a;
        char err[256] = "";
        if (doc_args_parse(bad[i], &a, err, sizeof err)) fail_msg("parsed: %s", bad[i]);
        assert_true(err[0] != '\0');
        assert_null(a.arg);
        assert_int_equal(a.ntop, 0);
    }
}

static void parse_table_entry(const struct command *cmd) {
    struct doc_args a;
    char err[512];
    if (!doc_args_parse(cmd->args_doc, &a, err, sizeof err)) fail_msg("%s: %s", cmd->name, err);
    doc_args_free(&a);
}

static void test_table_parses(void **state) {
    (void)state;
    for (size_t i = 0; i < command_count(); i++) {
        const struct command *cmd = command_at(i);
        parse_table_entry(cmd);
        for (const struct command *s = cmd->subcommands; s && s->name; s++) parse_table_entry(s);
    }
}

/* The "arguments" array for a table command, in the given protocol. */
static void expect_reply(const char *name, uint8_t resp, const char *want, size_t wantlen) {
    const struct command *cmd = command_lookup(name, strlen(name));
    assert_non_null(cmd);
    struct rbuf out = {0};
    struct reply r = { &out, resp };
    struct doc_args a = parse_ok(cmd->args_doc);
    doc_args_reply(&r, &a);
    doc_args_free(&a);
    if (out.len != wantlen || memcmp(out.buf, want, wantlen) != 0)
        fail_msg("%s RESP%d: got\n%.*s\nwant\n%s", name, resp, (int)out.len, out.buf, want);
    rbuf_free(&out);
}
#define EXPECT_REPLY(name, resp, lit) expect_reply(name, resp, lit, sizeof(lit) - 1)

/* From redis-server 7.0.15: COMMAND DOCS get / set, after "arguments". */
static void test_reply_get_set(void **state) {
    (void)state;
    command_table_init();
    EXPECT_REPLY("get", 2,
        "*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n"
        ":0\r\n");
    EXPECT_REPLY("get", 3,
        "*1\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n"
        ":0\r\n");
    EXPECT_REPLY("set", 2,
        "*5\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n"
        ":0\r\n*4\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n*10\r\n$4\r\nname\r\n"
        "$9\r\ncondition\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n$5\r\nflags\r\n"
        "*1\r\n+optional\r\n$9\r\narguments\r\n*2\r\n*6\r\n$4\r\nname\r\n$2\r\nnx\r\n$4\r\ntype\r\n"
        "$10\r\npure-token\r\n$5\r\ntoken\r\n$2\r\nNX\r\n*6\r\n$4\r\nname\r\n$2\r\nxx\r\n$4\r\ntype\r\n"
        "$10\r\npure-token\r\n$5\r\ntoken\r\n$2\r\nXX\r\n*10\r\n$4\r\nname\r\n$3\r\nget\r\n$4\r\ntype\r\n"
        "$10\r\npure-token\r\n$5\r\ntoken\r\n$3\r\nGET\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n$5\r\nflags\r\n"
        "*1\r\n+optional\r\n*8\r\n$4\r\nname\r\n$10\r\nexpiration\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\n"
        "flags\r\n*1\r\n+optional\r\n$9\r\narguments\r\n*5\r\n*8\r\n$4\r\nname\r\n$7\r\nseconds\r\n$4\r\n"
        "type\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nEX\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n*8\r\n$4\r\n"
        "name\r\n$12\r\nmilliseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nPX\r\n$5\r\n"
        "since\r\n$6\r\n2.6.12\r\n*8\r\n$4\r\nname\r\n$17\r\nunix-time-seconds\r\n$4\r\ntype\r\n$9\r\n"
        "unix-time\r\n$5\r\ntoken\r\n$4\r\nEXAT\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n*8\r\n$4\r\nname\r\n"
        "$22\r\nunix-time-milliseconds\r\n$4\r\ntype\r\n$9\r\nunix-time\r\n$5\r\ntoken\r\n$4\r\nPXAT\r\n"
        "$5\r\nsince\r\n$5\r\n6.2.0\r\n*8\r\n$4\r\nname\r\n$7\r\nkeepttl\r\n$4\r\ntype\r\n$10\r\n"
        "pure-token\r\n$5\r\ntoken\r\n$7\r\nKEEPTTL\r\n$5\r\nsince\r\n$5\r\n6.0.0\r\n");
    EXPECT_REPLY("set", 3,
        "*5\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n"
        ":0\r\n%2\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n%5\r\n$4\r\nname\r\n"
        "$9\r\ncondition\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n$5\r\nflags\r\n"
        "~1\r\n+optional\r\n$9\r\narguments\r\n*2\r\n%3\r\n$4\r\nname\r\n$2\r\nnx\r\n$4\r\ntype\r\n"
        "$10\r\npure-token\r\n$5\r\ntoken\r\n$2\r\nNX\r\n%3\r\n$4\r\nname\r\n$2\r\nxx\r\n$4\r\ntype\r\n"
        "$10\r\npure-token\r\n$5\r\ntoken\r\n$2\r\nXX\r\n%5\r\n$4\r\nname\r\n$3\r\nget\r\n$4\r\ntype\r\n"
        "$10\r\npure-token\r\n$5\r\ntoken\r\n$3\r\nGET\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n$5\r\nflags\r\n"
        "~1\r\n+optional\r\n%4\r\n$4\r\nname\r\n$10\r\nexpiration\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\n"
        "flags\r\n~1\r\n+optional\r\n$9\r\narguments\r\n*5\r\n%4\r\n$4\r\nname\r\n$7\r\nseconds\r\n$4\r\n"
        "type\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nEX\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n%4\r\n$4\r\n"
        "name\r\n$12\r\nmilliseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nPX\r\n$5\r\n"
        "since\r\n$6\r\n2.6.12\r\n%4\r\n$4\r\nname\r\n$17\r\nunix-time-seconds\r\n$4\r\ntype\r\n$9\r\n"
        "unix-time\r\n$5\r\ntoken\r\n$4\r\nEXAT\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n%4\r\n$4\r\nname\r\n"
        "$22\r\nunix-time-milliseconds\r\n$4\r\ntype\r\n$9\r\nunix-time\r\n$5\r\ntoken\r\n$4\r\nPXAT\r\n"
        "$5\r\nsince\r\n$5\r\n6.2.0\r\n%4\r\n$4\r\nname\r\n$7\r\nkeepttl\r\n$4\r\ntype\r\n$10\r\n"
        "pure-token\r\n$5\r\ntoken\r\n$7\r\nKEEPTTL\r\n$5\r\nsince\r\n$5\r\n6.0.0\r\n");
}

/* Fields Redis 7.0's GET and SET do not use: display_text (where 7.2 puts
 * it), deprecated_since, and every flag, in addReplyFlagsForArg()'s order. */
static void test_reply_rare_fields(void **state) {
    (void)state;
    struct rbuf out = {0};
    struct reply r = { &out, 2 };
    struct doc_args a = parse_ok("[k:key'the key'!2.8.12=BY +...]");
    doc_args_reply(&r, &a);
    doc_args_free(&a);
    static const char want[] =
        "*1\r\n*14\r\n$4\r\nname\r\n$1\r\nk\r\n$4\r\ntype\r\n$3\r\nkey\r\n$12\r\ndisplay_text\r\n$7\r\nthe key\r\n"
        "$14\r\nkey_spec_index\r\n:0\r\n$5\r\ntoken\r\n$2\r\nBY\r\n$16\r\ndeprecated_since\r\n$6\r\n2.8.12\r\n"
        "$5\r\nflags\r\n*3\r\n+optional\r\n+multiple\r\n+multiple_token\r\n";
    if (out.len != sizeof want - 1 || memcmp(out.buf, want, out.len) != 0)
        fail_msg("got\n%.*s", (int)out.len, out.buf);
    rbuf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_simple),
        cmocka_unit_test(test_optional_and_multiple),
        cmocka_unit_test(test_modifiers),
        cmocka_unit_test(test_nested),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_table_parses),
        cmocka_unit_test(test_reply_get_set),
        cmocka_unit_test(test_reply_rare_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
