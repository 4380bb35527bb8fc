/*
 * rename-command (command_rename, command_table.c): a renamed command
 * answers to its new name only, in any case, and COMMAND's walk lists it
 * under its own name; one renamed to "" is gone; the errors are Redis's
 * (an unknown or already renamed source, a taken target, checked after
 * the source's name is freed, so renaming to itself works); the server's
 * own lookups (command_original) still find every command. The tests run
 * in order on one table, as the renames of a config file would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/command.h"

static const struct command *lookup(const char *name) { return command_lookup(name, strlen(name)); }

static bool listed(const struct command *cmd) {
    for (size_t i = 0; i < command_count(); i++)
        if (command_at(i) == cmd) return true;
    return false;
}

/* A name with a NUL where a table name ends ("DECR\0\x0f", as a client may
 * send it) is no command, and the compare stops at the table name's end
 * (fuzz_command found it reading past "decr", which ASan shows;
 * tests/fuzz/corpus/fuzz_command/regression_nul_in_name replays it). */
static void test_lookup_nul_in_name(void **state) {
    (void)state;
    command_table_init();
    static const char name[] = "DECR\0\x0f";   /* the fuzzer's: its hash probes "decr" */
    assert_null(command_lookup(name, sizeof name - 1));
    assert_null(command_lookup("decr\0", 5));
    assert_non_null(command_lookup("decr", 4));
}

static void test_rename(void **state) {
    (void)state;
    command_table_init();
    size_t count = command_count();
    const struct command *flushdb = lookup("flushdb"), *get = lookup("GET"), *set = lookup("set");
    assert_non_null(flushdb);
    assert_non_null(get);
    assert_non_null(set);
    assert_ptr_equal(lookup("FlushDB"), flushdb);   /* fills this thread's memo too */

    assert_null(command_rename("flushdb", "badger"));
    assert_null(lookup("flushdb"));
    assert_null(lookup("FlushDB"));
    assert_ptr_equal(lookup("badger"), flushdb);
    assert_ptr_equal(lookup("BADGER"), flushdb);
    assert_string_equal(flushdb->name, "flushdb");   /* COMMAND INFO badger shows flushdb */
    assert_true(listed(flushdb));
    assert_int_equal(command_count(), count);

    /* renamed again, by the name it answers to now; a new name in any case */
    assert_null(command_rename("BADGER", "Weasel-Name-Longer-Than-Thirty-Two-Bytes"));
    assert_null(lookup("badger"));
    assert_ptr_equal(lookup("weasel-name-longer-than-thirty-two-bytes"), flushdb);

    /* removed */
    assert_null(command_rename("get", ""));
    assert_null(lookup("get"));
    assert_false(listed(get));
    assert_int_equal(command_count(), count - 1);

    /* to itself: the old name goes first */
    assert_null(command_rename("set", "SET"));
    assert_ptr_equal(lookup("set"), set);

    /* Redis's errors */
    assert_string_equal(command_rename("get", "x"), "No such command in rename-command");
    assert_string_equal(command_rename("flushdb", "x"), "No such command in rename-command");
    assert_string_equal(command_rename("nosuchcommand", "x"), "No such command in rename-command");
    assert_string_equal(command_rename("config|get", "x"), "No such command in rename-command");
    assert_string_equal(command_rename("del", "set"), "Target command name already exists");

    /* the server's own uses find them all */
    assert_ptr_equal(command_original("get"), get);
    assert_ptr_equal(command_original("flushdb"), flushdb);
    assert_null(command_original("badger"));
    /* subcommands are found through their parent's new name */
    assert_null(command_rename("config", "cfg"));
    const struct command *cfg = lookup("cfg");
    assert_non_null(cfg);
    assert_non_null(command_lookup_sub(cfg, (struct slice){ "get", 3 }));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_nul_in_name),
        cmocka_unit_test(test_rename),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
