/*
 * command_keyspecs.c against the command table: every command with keys
 * has key specs and every keyless one has none; walking the specs as Redis
 * does (getKeysUsingKeySpecs) finds exactly the keys the dispatcher routes
 * by (command_key_positions) on a request of each command; and the flags
 * of COMMAND GETKEYSANDFLAGS, SET's variable ones included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ringkv/command.h"

#define MAX_ARGS 16

/* Redis's walk of a command's key specs; returns the number of keys. */
static int spec_positions(const struct command_key_specs *ks, int argc, const struct slice *argv, int *pos) {
    int n = 0;
    for (unsigned i = 0; i < ks->n; i++) {
        const struct key_spec *s = &ks->spec[i];
        int first = s->begin, last, step;
        if (first >= argc) continue;
        if (s->keyword) {
            /* the keys follow the keyword; limit 2: half of what is left */
            while (first < argc && strcasecmp(argv[first].ptr, s->keyword) != 0) first++;
            first++;
            int count = argc - first;
            if (s->c > 1) count /= s->c;
            for (int p = first; p < first + count; p += s->b) pos[n++] = p;
            continue;
        }
        if (!s->keynum) {
            last = s->a >= 0 ? first + s->a : argc + s->a;
            step = s->b;
        } else {
            long long numkeys = atoll(argv[first + s->a].ptr);
            first += s->b;
            last = first + (int)numkeys - 1;
            step = s->c;
        }
        for (int p = first; p <= last && p < argc; p += step) pos[n++] = p;
    }
    return n;
}

/* A request of cmd: its arity's worth of arguments (and room for two keys
 * counted by a numkeys argument, set to 2). */
static int make_request(const struct command *cmd, const struct command_key_specs *ks, struct slice *argv,
                        char names[][16]) {
    int argc = cmd->arity > 0 ? cmd->arity : -cmd->arity;
    const char *bar = strchr(cmd->name, '|');
    for (unsigned i = 0; i < ks->n; i++)
        if (ks->spec[i].keynum) {
            int need = ks->spec[i].begin + ks->spec[i].a + ks->spec[i].b + 2;
            if (need > argc) argc = need;
        }
    for (int i = 0; i < argc; i++) {
        snprintf(names[i], 16, "a%d", i);
        argv[i] = (struct slice){ names[i], strlen(names[i]) };
    }
    if (bar) argv[1] = (struct slice){ bar + 1, strlen(bar + 1) };   /* the subcommand's name */
    for (unsigned i = 0; i < ks->n; i++)
        if (ks->spec[i].keynum) argv[ks->spec[i].begin + ks->spec[i].a] = SLICE_LIT("2");
    for (unsigned i = 0; i < ks->n; i++)   /* the keyword where the search starts, then a key and its pair */
        if (ks->spec[i].keyword) argv[argc - 3] = (struct slice){ ks->spec[i].keyword, strlen(ks->spec[i].keyword) };
    return argc;
}

static void check_command(const struct command *cmd) {
    const struct command_key_specs *ks = command_key_specs(cmd);
    bool has_keys = cmd->first_key != 0 || cmd->keys_fn != NULL;
    if (has_keys != (ks != NULL)) fail_msg("%s: keys %d, key specs %d", cmd->name, has_keys, ks != NULL);
    if (!ks) return;
    assert_string_equal(ks->name, cmd->name);
    assert_true(ks->n >= 1 && ks->n <= 2);
    struct slice argv[MAX_ARGS];
    char names[MAX_ARGS][16];
    int argc = make_request(cmd, ks, argv, names);
    int want[MAX_ARGS], got[MAX_ARGS];
    int nwant = spec_positions(ks, argc, argv, want);
    int ngot = command_key_positions(cmd, argc, argv, got, MAX_ARGS);
    if (nwant != ngot) fail_msg("%s: key specs find %d keys, the dispatcher %d", cmd->name, nwant, ngot);
    for (int i = 0; i < ngot; i++)
        if (want[i] != got[i]) fail_msg("%s: key %d at %d by the specs, %d by the dispatcher", cmd->name, i, want[i], got[i]);
}

static void test_table_consistent(void **state) {
    (void)state;
    command_table_init();
    size_t checked = 0;
    for (size_t i = 0; i < command_index_count(); i++) {
        const struct command *cmd = command_by_index(i);
        assert_int_equal(command_index(cmd), (int)i);
        check_command(cmd);
        checked += command_key_specs(cmd) != NULL;
    }
    assert_true(checked > 100);
}

/* The flags of the nth key of a request (args NULL-terminated). */
static unsigned flags_of(int nth, const char *const *args) {
    struct slice argv[MAX_ARGS];
    int argc = 0;
    for (; args[argc]; argc++) argv[argc] = (struct slice){ args[argc], strlen(args[argc]) };
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    if (cmd->subcommands) cmd = command_lookup_sub(cmd, argv[1]);
    return command_key_flags(cmd, argc, argv, nth);
}

#define FLAGS(nth, ...) flags_of(nth, (const char *const[]){ __VA_ARGS__, NULL })

static void test_flags(void **state) {
    (void)state;
    command_table_init();
    assert_int_equal(FLAGS(0, "set", "k", "v"), KS_OW | KS_UPDATE);
    assert_int_equal(FLAGS(0, "set", "k", "v", "EX", "10", "get"), KS_RW | KS_ACCESS | KS_UPDATE);
    assert_int_equal(FLAGS(0, "get", "k"), KS_RO | KS_ACCESS);
    assert_int_equal(FLAGS(1, "mset", "k1", "v1", "k2", "v2"), KS_OW | KS_UPDATE);
    assert_int_equal(FLAGS(0, "lmove", "a", "b", "left", "right"), KS_RW | KS_ACCESS | KS_DELETE);
    assert_int_equal(FLAGS(1, "lmove", "a", "b", "left", "right"), KS_RW | KS_INSERT);
    assert_int_equal(FLAGS(0, "zunionstore", "d", "2", "a", "b"), KS_OW | KS_UPDATE);
    assert_int_equal(FLAGS(2, "zunionstore", "d", "2", "a", "b"), KS_RO | KS_ACCESS);
    assert_int_equal(FLAGS(0, "del", "k"), KS_RM | KS_DELETE);
    assert_int_equal(FLAGS(0, "memory", "usage", "k"), KS_RO);
    assert_int_equal(FLAGS(0, "ping"), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_consistent),
        cmocka_unit_test(test_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
