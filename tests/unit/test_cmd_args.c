/* Key positions of movable-key commands (cmd_args.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "ringkv/command.h"

static int argv_of(struct slice *argv, const char **words) {
    int n = 0;
    for (; words[n]; n++) argv[n] = (struct slice){ words[n], strlen(words[n]) };
    return n;
}

static void test_numkeys_first(void **state) {
    (void)state;
    struct slice argv[8];
    int pos[8];
    const char *ok[] = { "sintercard", "2", "a", "b", "LIMIT", "3", NULL };
    int n = keys_numkeys_first(argv_of(argv, ok), argv, pos, 8);
    assert_int_equal(n, 2);
    assert_int_equal(pos[0], 2);
    assert_int_equal(pos[1], 3);
    const char *too_many[] = { "lmpop", "3", "a", "b", NULL };
    assert_int_equal(keys_numkeys_first(argv_of(argv, too_many), argv, pos, 8), 0);
    const char *not_int[] = { "lmpop", "x", "a", NULL };
    assert_int_equal(keys_numkeys_first(argv_of(argv, not_int), argv, pos, 8), 0);
    const char *zero[] = { "lmpop", "0", "a", NULL };
    assert_int_equal(keys_numkeys_first(argv_of(argv, zero), argv, pos, 8), 0);
}

static void test_dest_numkeys(void **state) {
    (void)state;
    struct slice argv[8];
    int pos[8];
    const char *ok[] = { "zunionstore", "dst", "2", "a", "b", "WEIGHTS", "1", NULL };
    int n = keys_dest_numkeys(argv_of(argv, ok), argv, pos, 8);
    assert_int_equal(n, 3);
    assert_int_equal(pos[0], 1);
    assert_int_equal(pos[1], 3);
    assert_int_equal(pos[2], 4);
    const char *bad[] = { "zunionstore", "dst", "-1", "a", NULL };
    assert_int_equal(keys_dest_numkeys(argv_of(argv, bad), argv, pos, 8), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numkeys_first),
        cmocka_unit_test(test_dest_numkeys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
