/*
 * ACL rules (src/acl/): SHA-256 against the FIPS 180-4 examples, then the
 * property ACL LIST and ACL SAVE rely on: describing a user gives rules
 * that rebuild exactly the same permissions. Random rule sets from a pool
 * of Redis's rule words are applied to one user, its description to a
 * second, and both must describe alike and decide alike for every command
 * of the table on keys and channels of each kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkv/acl.h"
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/sha256.h"
#include "ringkv/util.h"

static void test_sha256_vectors(void **state)
{
    (void)state;
    char hex[65];
    sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";   /* 56 bytes: two blocks */
    sha256_hex(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* The rules ACL LIST gives user `name` (after "user NAME "), malloc'd. */
static char *described(const char *name)
{
    struct rbuf all = { 0 };
    acl_describe_all(&all);
    rbuf_append(&all, "", 1);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "user %s ", name);
    char *line = strstr(all.buf, prefix);
    assert_non_null(line);
    line += strlen(prefix);
    size_t n = strcspn(line, "\n");
    char *out = strndup(line, n);
    rbuf_free(&all);
    return out;
}

static void set_user(const char *name, int argc, char **words)
{
    struct slice *rules = calloc((size_t)argc + 1, sizeof *rules);
    for (int i = 0; i < argc; i++) rules[i] = (struct slice){ words[i], strlen(words[i]) };
    char *err = acl_setuser((struct slice){ name, strlen(name) }, argc, rules);
    if (err) fail_msg("%s: %s", name, err);
    free(rules);
}

static const char *const pool[] = {
    "+@all", "-@all", "+@read", "-@read", "+@write", "-@write", "+@string", "-@string", "+@hash", "-@dangerous",
    "+@admin", "-@slow", "+@fast", "+@pubsub", "-@keyspace", "+get", "-get", "+set", "-set", "+client",
    "-client", "+client|list", "-client|kill", "+config|get", "+select|0", "+debug|sleep", "-debug",
    "~app:*", "%R~ro:*", "%W~wo:*", "%RW~rw:*", "allkeys", "resetkeys", "&news*", "allchannels",
    "resetchannels", "(~sel:* +get)", "(%R~x* +@read &ch)", "clearselectors", "on", "off", "nopass", ">pw",
};

/* One decision per command of the table on a sample of arguments. */
static void expect_same_decisions(const char *a, const char *b)
{
    struct acl_user *ua = acl_find_user((struct slice){ a, strlen(a) });
    struct acl_user *ub = acl_find_user((struct slice){ b, strlen(b) });
    static const char *const keys[] = { "app:1", "ro:1", "wo:1", "rw:1", "sel:1", "x1", "news1", "ch", "0", "zzz" };
    for (size_t i = 0; i < command_index_count(); i++) {
        const struct command *cmd = command_by_index(i);
        for (size_t k = 0; k < RK_ARRAY_LEN(keys); k++) {
            struct slice argv[6];
            const char *bar = strchr(cmd->name, '|');
            int argc = 0;
            if (bar) {
                argv[argc++] = (struct slice){ cmd->name, (size_t)(bar - cmd->name) };
                argv[argc++] = (struct slice){ bar + 1, strlen(bar + 1) };
            } else {
                argv[argc++] = (struct slice){ cmd->name, strlen(cmd->name) };
            }
            while (argc < 5) argv[argc++] = (struct slice){ keys[k], strlen(keys[k]) };
            int pa, pb;
            enum acl_verdict va = acl_check(ua, cmd, argc, argv, &pa), vb = acl_check(ub, cmd, argc, argv, &pb);
            if (va != vb) fail_msg("%s on %s: %d for %s, %d for %s", cmd->name, keys[k], va, a, vb, b);
        }
    }
    acl_user_release(ua);
    acl_user_release(ub);
}

static void test_described_rules_rebuild_the_user(void **state)
{
    (void)state;
    srand(1234);
    for (int round = 0; round < 60; round++) {
        char *words[12];
        int n = 1 + rand() % 10;
        for (int i = 0; i < n; i++) words[i] = (char *)pool[rand() % (int)RK_ARRAY_LEN(pool)];
        char *reset = "reset";
        set_user("orig", 1, &reset);
        /* rules that do not apply (a key pattern after allkeys) are errors:
         * apply one at a time and keep going, as a user would */
        for (int i = 0; i < n; i++) {
            struct slice r = { words[i], strlen(words[i]) };
            free(acl_setuser(SLICE_LIT("orig"), 1, &r));
        }
        char *rules = described("orig");
        char **split;
        int m = split_args(rules, &split);
        assert_true(m > 0);
        set_user("copy", 1, &reset);
        set_user("copy", m, split);
        char *again = described("copy");
        assert_string_equal(rules, again);
        expect_same_decisions("orig", "copy");
        free_words(split, m);
        free(rules);
        free(again);
    }
}

static void test_errors_change_nothing(void **state)
{
    (void)state;
    char *w[] = { "reset", "on", "+get", "~a*" };
    set_user("e", 4, w);
    char *before = described("e");
    struct slice bad[] = { SLICE_LIT("-get"), SLICE_LIT("+nosuchcommand") };
    char *err = acl_setuser(SLICE_LIT("e"), 2, bad);
    assert_non_null(err);
    assert_string_equal(err, "ERR Error in ACL SETUSER modifier '+nosuchcommand': Unknown command or category name in ACL");
    free(err);
    char *after = described("e");
    assert_string_equal(before, after);
    free(before);
    free(after);
}

static int setup(void **state)
{
    (void)state;
    config_set_defaults();
    command_table_init();
    acl_init();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    acl_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_described_rules_rebuild_the_user),
        cmocka_unit_test(test_errors_change_nothing),
    };
    return cmocka_run_group_tests_name("acl_rules", tests, setup, teardown);
}
