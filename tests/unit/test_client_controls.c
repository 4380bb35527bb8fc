/*
 * Client controls without a server: the pause state (the stricter type and
 * the later end win, an ended pause counts as none and is cleared by the
 * first reader, UNPAUSE, expiry held while paused, the hot-path word back
 * to zero) and the monitor line format (Redis's catrepr escapes, where
 * AUTH's and HELLO's secrets are redacted and where they are not).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "ringkv/server.h"
#include "../../src/io/controls.h"

static struct worker fake;

static int setup(void **state) {
    (void)state;
    srv.nworkers = 1;    /* UNPAUSE wakes no other thread */
    memset(&fake, 0, sizeof fake);
    fake.now_ms = 1000000;
    unpause_clients(&fake);
    return 0;
}

static uint64_t ctl(void) { return atomic_load(&rk_controls.ctl); }

static void test_pause_types_and_ends(void **state) {
    (void)state;
    assert_int_equal(pause_type_now(fake.now_ms), PAUSE_OFF);
    assert_false(client_expiry_paused(fake.now_ms));
    pause_clients(&fake, fake.now_ms + 100, false);
    assert_int_equal(pause_type_now(fake.now_ms), PAUSE_WRITE);
    assert_true(client_expiry_paused(fake.now_ms));
    /* ALL with an earlier end: ALL, the later end */
    pause_clients(&fake, fake.now_ms + 50, true);
    assert_int_equal(pause_type_now(fake.now_ms), PAUSE_ALL);
    assert_int_equal(atomic_load(&rk_controls.pause_end_ms), fake.now_ms + 100);
    /* WRITE after ALL: still ALL */
    pause_clients(&fake, fake.now_ms + 200, false);
    assert_int_equal(pause_type_now(fake.now_ms), PAUSE_ALL);
    assert_int_equal(atomic_load(&rk_controls.pause_end_ms), fake.now_ms + 200);
    /* in force while now <= end */
    assert_int_equal(pause_type_now(fake.now_ms + 200), PAUSE_ALL);
    assert_int_equal(pause_type_now(fake.now_ms + 201), PAUSE_OFF);
    assert_int_equal(ctl() & CTL_PAUSE_MASK, 0);   /* the reader cleared it */
    assert_int_equal(ctl(), 0);
}

static void test_ended_pause_counts_as_none(void **state) {
    (void)state;
    pause_clients(&fake, fake.now_ms + 10, true);
    fake.now_ms += 20;                 /* ended, nobody looked */
    pause_clients(&fake, fake.now_ms + 10, false);
    assert_int_equal(pause_type_now(fake.now_ms), PAUSE_WRITE);
    assert_int_equal(atomic_load(&rk_controls.pause_end_ms), fake.now_ms + 10);
    unpause_clients(&fake);
    assert_int_equal(pause_type_now(fake.now_ms), PAUSE_OFF);
    assert_int_equal(ctl(), 0);
    /* timeout 0: an end of 0, over at once */
    pause_clients(&fake, 0, true);
    assert_int_equal(pause_type_now(fake.now_ms), PAUSE_OFF);
    assert_int_equal(ctl(), 0);
}

static void expect_line(int db, int argc, const char **args, const size_t *lens, const char *want) {
    struct slice argv[16];
    for (int i = 0; i < argc; i++) argv[i] = (struct slice){ args[i], lens ? lens[i] : strlen(args[i]) };
    struct rbuf b = {0};
    monitor_format(&b, 1339518083, 107412, db, "127.0.0.1:60866", argc, argv);
    rbuf_append(&b, "", 1);
    assert_string_equal(b.buf, want);
    rbuf_free(&b);
}

static void test_monitor_lines(void **state) {
    (void)state;
    expect_line(0, 2, (const char *[]){ "keys", "*" }, NULL,
                "+1339518083.107412 [0 127.0.0.1:60866] \"keys\" \"*\"\r\n");
    expect_line(7, 1, (const char *[]){ "ping" }, NULL, "+1339518083.107412 [7 127.0.0.1:60866] \"ping\"\r\n");
    /* catrepr: quotes, backslashes, C escapes, \xHH for the rest */
    expect_line(0, 2, (const char *[]){ "set", "a\"b\\\n\r\t\a\b\x01\x7f\xff c" },
                (const size_t[]){ 3, 14 },
                "+1339518083.107412 [0 127.0.0.1:60866] \"set\" \"a\\\"b\\\\\\n\\r\\t\\a\\b\\x01\\x7f\\xff c\"\r\n");
    expect_line(0, 2, (const char *[]){ "get", "" }, NULL, "+1339518083.107412 [0 127.0.0.1:60866] \"get\" \"\"\r\n");
}

static void test_monitor_redaction(void **state) {
    (void)state;
    const char *head = "+1339518083.107412 [0 127.0.0.1:60866] ";
    char want[256];
    snprintf(want, sizeof want, "%s\"AUTH\" \"(redacted)\"\r\n", head);
    expect_line(0, 2, (const char *[]){ "AUTH", "pw" }, NULL, want);
    snprintf(want, sizeof want, "%s\"auth\" \"(redacted)\" \"(redacted)\"\r\n", head);
    expect_line(0, 3, (const char *[]){ "auth", "user", "pw" }, NULL, want);
    /* four arguments fail before Redis redacts anything */
    snprintf(want, sizeof want, "%s\"auth\" \"a\" \"b\" \"c\"\r\n", head);
    expect_line(0, 4, (const char *[]){ "auth", "a", "b", "c" }, NULL, want);
    snprintf(want, sizeof want, "%s\"hello\" \"3\" \"SETNAME\" \"n\" \"auth\" \"(redacted)\" \"(redacted)\"\r\n", head);
    expect_line(0, 7, (const char *[]){ "hello", "3", "SETNAME", "n", "auth", "u", "p" }, NULL, want);
    /* a bad protocol version stops HELLO before the options */
    snprintf(want, sizeof want, "%s\"hello\" \"4\" \"AUTH\" \"u\" \"p\"\r\n", head);
    expect_line(0, 5, (const char *[]){ "hello", "4", "AUTH", "u", "p" }, NULL, want);
    /* a bad option stops it there: the pair before it stays redacted */
    snprintf(want, sizeof want, "%s\"hello\" \"2\" \"AUTH\" \"(redacted)\" \"(redacted)\" \"bad\" \"AUTH\" \"x\" \"y\"\r\n", head);
    expect_line(0, 9, (const char *[]){ "hello", "2", "AUTH", "u", "p", "bad", "AUTH", "x", "y" }, NULL, want);
    /* AUTH as an argument of another command is just an argument */
    snprintf(want, sizeof want, "%s\"echo\" \"auth\"\r\n", head);
    expect_line(0, 2, (const char *[]){ "echo", "auth" }, NULL, want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_pause_types_and_ends, setup),
        cmocka_unit_test_setup(test_ended_pause_counts_as_none, setup),
        cmocka_unit_test(test_monitor_lines),
        cmocka_unit_test(test_monitor_redaction),
    };
    return cmocka_run_group_tests_name("client_controls", tests, NULL, NULL);
}
