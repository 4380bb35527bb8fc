/*
 * Introspection: INFO commandstats, errorstats and latencystats and the
 * error counters of INFO stats (counted on every thread, reset by CONFIG
 * RESETSTAT, which also zeroes the save, rewrite and keyspace counters and
 * keeps the changes since the last save and the memory peak), INFO's
 * section selection; MEMORY USAGE (routed to the key's
 * shard), STATS, DOCTOR, PURGE, MALLOC-STATS and HELP; COMMAND LIST, COUNT,
 * GETKEYS and GETKEYSANDFLAGS. The expected replies pass against
 * redis-server 7.0 too (RINGKV_TEST_REDIS=1). No test looks at a duration.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text after "name:" on its line of INFO section (malloc'd), or NULL. */
static char *info_line(redisContext *c, const char *section, const char *name) {
    redisReply *r = cmd(c, "INFO %s", section);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    char *v = info_field(r->str, name);
    freeReplyObject(r);
    return v;
}

/* INFO section's line for name must start with want (or be absent: NULL). */
static void expect_info_(const char *file, int line, redisContext *c, const char *section, const char *name,
                         const char *want) {
    char *v = info_line(c, section, name);
    if (!want && v) h_fail_(file, line, "INFO %s: %s:%s, expected no such line", section, name, v);
    if (want && (!v || strncmp(v, want, strlen(want)) != 0))
        h_fail_(file, line, "INFO %s: %s:%s, expected %s...", section, name, v ? v : "(none)", want);
    free(v);
}
#define expect_info(c, section, name, want) expect_info_(__FILE__, __LINE__, (c), (section), (name), (want))

/* INFO with args ("" for none) includes text. */
static bool info_has(redisContext *c, const char *args, const char *text) {
    char line[128];
    snprintf(line, sizeof line, "INFO %s", args);   /* one argument per word */
    redisReply *r = cmd(c, line);
    bool has = r->type == REDIS_REPLY_STRING && strstr(r->str, text) != NULL;
    freeReplyObject(r);
    return has;
}

/* ---- INFO commandstats / errorstats / stats ---- */

static void test_command_and_error_stats(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG RESETSTAT");
    OK(c, "SET k v");
    ERR(c, "ERR wrong number of arguments for 'set' command", "SET k");
    BULK(c, "v", "GET k");
    expect_error_prefix(cmd(c, "LPUSH k x"), "WRONGTYPE");
    expect_error_prefix(cmd(c, "NOSUCHCOMMAND a"), "ERR unknown command");
    STATUS(c, "OK", "CONFIG SET maxmemory-policy noeviction");
    expect_info(c, "commandstats", "cmdstat_set", "calls=1,");
    expect_info(c, "commandstats", "cmdstat_get", "calls=1,");
    char *v = info_line(c, "commandstats", "cmdstat_set");
    assert_non_null(strstr(v, ",rejected_calls=1,failed_calls=0"));
    free(v);
    v = info_line(c, "commandstats", "cmdstat_lpush");
    assert_true(strncmp(v, "calls=1,", 8) == 0);
    assert_non_null(strstr(v, ",rejected_calls=0,failed_calls=1"));
    free(v);
    expect_info(c, "commandstats", "cmdstat_config|set", "calls=1,");   /* subcommands by their full name */
    expect_info(c, "commandstats", "cmdstat_nosuchcommand", NULL);
    expect_info(c, "errorstats", "errorstat_ERR", "count=2");
    expect_info(c, "errorstats", "errorstat_WRONGTYPE", "count=1");
    assert_int_equal(info_ll(c, "stats", "total_error_replies"), 3);
    assert_int_equal(info_ll(c, "stats", "unexpected_error_replies"), 0);

    OK(c, "CONFIG RESETSTAT");
    expect_info(c, "commandstats", "cmdstat_set", NULL);
    expect_info(c, "errorstats", "errorstat_ERR", NULL);
    assert_int_equal(info_ll(c, "stats", "total_error_replies"), 0);
    /* RESETSTAT itself is counted once it has run */
    expect_info(c, "commandstats", "cmdstat_config|resetstat", "calls=1,");
}

/* What CONFIG RESETSTAT zeroes besides the command and error counters
 * (Redis's resetServerStats), and what it keeps: the changes since the
 * last save, the memory peak, the gauges. */
static void test_resetstat(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SAVE");
    assert_true(info_ll(c, "persistence", "rdb_saves") >= 1);
    /* an AOF rewrite: the one appendonly yes starts */
    OK(c, "CONFIG SET appendonly yes");
    for (int i = 0; i < 500 && (info_ll(c, "persistence", "aof_rewrites") < 1 ||
                                info_ll(c, "persistence", "aof_rewrite_in_progress") != 0); i++)
        h_sleep_ms(10);
    assert_int_equal(info_ll(c, "persistence", "aof_rewrite_in_progress"), 0);
    assert_true(info_ll(c, "persistence", "aof_rewrites") >= 1);
    OK(c, "CONFIG SET appendonly no");
    for (int i = 0; i < 10; i++) OK(c, "SET key:%d %d", i, i);
    /* a peak well above what is used after */
    char *big = malloc(8 << 20);
    memset(big, 'x', 8 << 20);
    expect_ok(cmd(c, "SET big %b", big, (size_t)(8 << 20)));
    free(big);
    INT(c, 1, "DEL big");
    long long peak = info_ll(c, "memory", "used_memory_peak");
    long long changes = info_ll(c, "persistence", "rdb_changes_since_last_save");
    assert_true(changes >= 12);
    assert_true(info_ll(c, "stats", "total_commands_processed") > 10);
    assert_true(info_ll(c, "stats", "total_net_input_bytes") > 0);
    BULK(c, "1", "GET key:1");
    NIL(c, "GET nokey");

    OK(c, "CONFIG RESETSTAT");
    assert_int_equal(info_ll(c, "persistence", "rdb_saves"), 0);
    assert_int_equal(info_ll(c, "persistence", "aof_rewrites"), 0);
    assert_int_equal(info_ll(c, "persistence", "aof_rewrites_consecutive_failures"), 0);
    assert_int_equal(info_ll(c, "stats", "keyspace_hits"), 0);
    assert_int_equal(info_ll(c, "stats", "keyspace_misses"), 0);
    assert_int_equal(info_ll(c, "stats", "total_connections_received"), 0);
    assert_int_equal(info_ll(c, "stats", "rejected_connections"), 0);
    assert_int_equal(info_ll(c, "stats", "expired_keys"), 0);
    assert_int_equal(info_ll(c, "memory", "lazyfreed_objects"), 0);
    /* INFO itself has run once since (Redis counts a command after it ran) */
    assert_true(info_ll(c, "stats", "total_commands_processed") <= 12);
    /* kept */
    assert_true(info_ll(c, "memory", "used_memory_peak") >= peak);
    assert_int_equal(info_ll(c, "persistence", "rdb_changes_since_last_save"), changes);
    assert_true(info_ll(c, "clients", "connected_clients") >= 1);
}

/* Commands run for this connection on other threads (forwarded, or as
 * cross-shard transactions) count there, and INFO adds every thread up. */
static void test_stats_summed_over_threads(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG RESETSTAT");
    for (int i = 0; i < 40; i++) OK(c, "SET key:%d %d", i, i);
    for (int i = 0; i < 40; i++) expect_error_prefix(cmd(c, "HGET key:%d f", i), "WRONGTYPE");
    OK(c, "MSET key:1 a key:2 b key:3 c");
    expect_info(c, "commandstats", "cmdstat_set", "calls=40,");
    expect_info(c, "commandstats", "cmdstat_mset", "calls=1,");
    char *v = info_line(c, "commandstats", "cmdstat_hget");
    assert_non_null(strstr(v, "calls=40,"));
    assert_non_null(strstr(v, ",failed_calls=40"));
    free(v);
    expect_info(c, "errorstats", "errorstat_WRONGTYPE", "count=40");
    assert_int_equal(info_ll(c, "stats", "total_error_replies"), 40);
}

static void test_latencystats(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG RESETSTAT");
    OK(c, "SET a b");
    char *v = info_line(c, "latencystats", "latency_percentiles_usec_set");
    assert_non_null(v);
    assert_true(strncmp(v, "p50=", 4) == 0);
    assert_non_null(strstr(v, ",p99="));
    assert_non_null(strstr(v, ",p99.9="));
    free(v);
    OK(c, "CONFIG SET latency-tracking-info-percentiles %s", "0.0 50.0 100.0");
    v = info_line(c, "latencystats", "latency_percentiles_usec_set");
    assert_true(strncmp(v, "p0=", 3) == 0);
    assert_non_null(strstr(v, ",p50="));
    assert_non_null(strstr(v, ",p100="));
    free(v);
    OK(c, "CONFIG SET latency-tracking no");
    expect_info(c, "latencystats", "latency_percentiles_usec_set", NULL);
    OK(c, "CONFIG SET latency-tracking yes");
    OK(c, "CONFIG SET latency-tracking-info-percentiles %s", "50 99 99.9");
    OK(c, "CONFIG RESETSTAT");
    expect_info(c, "latencystats", "latency_percentiles_usec_set", NULL);
}

/* Redis's genInfoSectionDict: commandstats and latencystats only with all,
 * everything or by name; errorstats in the default set. */
static void test_info_sections(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "SET a b");
    const char *defaults[] = { "", "default" };
    for (int i = 0; i < 2; i++) {
        assert_true(info_has(c, defaults[i], "# Errorstats\r\n"));
        assert_true(info_has(c, defaults[i], "# Modules\r\n"));
        assert_false(info_has(c, defaults[i], "rejected_calls"));
        assert_false(info_has(c, defaults[i], "# Latencystats"));
    }
    const char *every[] = { "all", "everything", "ALL" };
    for (int i = 0; i < 3; i++) {
        assert_true(info_has(c, every[i], "# Commandstats\r\n"));
        assert_true(info_has(c, every[i], "rejected_calls"));
        assert_true(info_has(c, every[i], "# Latencystats\r\n"));
        assert_true(info_has(c, every[i], "used_memory"));
    }
    assert_true(info_has(c, "commandSTATS", "rejected_calls"));
    assert_false(info_has(c, "commandSTATS", "used_memory"));
    assert_true(info_has(c, "cpu default", "used_memory"));
    assert_false(info_has(c, "cpu default", "rejected_calls"));
    redisReply *r = cmd(c, "INFO cpu all");
    const char *first = strstr(r->str, "used_cpu_user_children");
    assert_non_null(first);
    assert_null(strstr(first + 1, "used_cpu_user_children"));   /* once, though asked twice */
    freeReplyObject(r);
}

/* ---- MEMORY ---- */

static void test_memory_usage(void **state) {
    redisContext *c = FIX(state)->c;
    NIL(c, "MEMORY USAGE nosuchkey");
    /* keys of every shard answer: the command runs where the key lives */
    for (int i = 0; i < 20; i++) {
        OK(c, "SET str:%d value", i);
        redisReply *r = cmd(c, "MEMORY USAGE str:%d", i);
        assert_int_equal(r->type, REDIS_REPLY_INTEGER);
        assert_true(r->integer > 0);
        freeReplyObject(r);
    }
    for (int i = 0; i < 1000; i++) INT(c, 1, "HSET big field:%d value:%d", i, i);
    redisReply *r = cmd(c, "MEMORY USAGE big");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer > 1000 * 16);   /* at least the fields and values themselves */
    long long sampled = r->integer;
    freeReplyObject(r);
    r = cmd(c, "MEMORY USAGE big SAMPLES 0");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer > sampled / 2 && r->integer < sampled * 2);
    freeReplyObject(r);
    ERR(c, "ERR wrong number of arguments for 'memory|usage' command", "MEMORY USAGE");
    ERR(c, "ERR syntax error", "MEMORY USAGE big SAMPLES");
    ERR(c, "ERR syntax error", "MEMORY USAGE big SAMPLES -1");
    ERR(c, "ERR syntax error", "MEMORY USAGE big FOO 1");
    ERR(c, "ERR value is not an integer or out of range", "MEMORY USAGE big SAMPLES x");
    ERR(c, "ERR unknown subcommand 'FOO'. Try MEMORY HELP.", "MEMORY FOO");
}

/* The value of field name in a flat RESP2 map, or NULL. */
static redisReply *map_get(redisReply *map, const char *name) {
    for (size_t i = 0; i + 1 < map->elements; i += 2)
        if (map->element[i]->type == REDIS_REPLY_STRING && strcmp(map->element[i]->str, name) == 0)
            return map->element[i + 1];
    return NULL;
}

static void test_memory_stats(void **state) {
    redisContext *c = FIX(state)->c;
    for (int i = 0; i < 100; i++) OK(c, "SET k:%d v", i);
    redisReply *r = cmd(c, "MEMORY STATS");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2 * (27 + 1));   /* 27 fields and db.0 */
    assert_string_equal(r->element[0]->str, "peak.allocated");
    const char *ints[] = { "total.allocated", "startup.allocated", "replication.backlog", "clients.slaves",
                           "clients.normal", "cluster.links", "aof.buffer", "lua.caches", "functions.caches",
                           "overhead.total", "keys.bytes-per-key", "dataset.bytes", "allocator.allocated",
                           "allocator.active", "allocator.resident", "fragmentation.bytes" };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        redisReply *f = map_get(r, ints[i]);
        if (!f || f->type != REDIS_REPLY_INTEGER) h_fail("MEMORY STATS: no integer %s", ints[i]);
    }
    assert_int_equal(map_get(r, "keys.count")->integer, 100);
    redisReply *db = map_get(r, "db.0");
    assert_non_null(db);
    assert_int_equal(db->elements, 6);
    assert_string_equal(db->element[0]->str, "overhead.hashtable.main");
    assert_true(db->element[1]->integer > 0);
    assert_string_equal(r->element[r->elements - 2]->str, "fragmentation.bytes");
    freeReplyObject(r);
    ERR(c, "ERR wrong number of arguments for 'memory|stats' command", "MEMORY STATS x");

    r = cmd(c, "MEMORY DOCTOR");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_true(strncmp(r->str, "Hi Sam", 6) == 0 || strncmp(r->str, "Sam,", 4) == 0);
    freeReplyObject(r);
    OK(c, "MEMORY PURGE");
    r = cmd(c, "MEMORY MALLOC-STATS");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_true(r->len > 0);
    freeReplyObject(r);
    r = cmd(c, "MEMORY HELP");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_string_equal(r->element[0]->str, "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    assert_string_equal(r->element[r->elements - 2]->str, "HELP");
    freeReplyObject(r);
}

/* ---- COMMAND ---- */

static bool reply_has(const redisReply *r, const char *s) {
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING && strcmp(r->element[i]->str, s) == 0) return true;
    return false;
}

static void test_command_list(void **state) {
    redisContext *c = FIX(state)->c;
    redisReply *all = cmd(c, "COMMAND LIST");
    assert_int_equal(all->type, REDIS_REPLY_ARRAY);
    assert_true(reply_has(all, "set") && reply_has(all, "client|list") && reply_has(all, "memory|usage") &&
                reply_has(all, "memory") && reply_has(all, "command|getkeysandflags"));
    redisReply *count = cmd(c, "COMMAND COUNT");
    redisReply *info = cmd(c, "COMMAND");
    assert_int_equal((size_t)count->integer, info->elements);   /* containers count once */
    size_t subs = 0;
    for (size_t i = 0; i < info->elements; i++) subs += info->element[i]->element[9]->elements;
    assert_int_equal(all->elements, info->elements + subs);     /* LIST names every subcommand */
    freeReplyObject(all);
    freeReplyObject(count);
    freeReplyObject(info);

    expect_bulks(cmd(c, "COMMAND LIST FILTERBY PATTERN set"), 1, "set");
    redisReply *r = cmd(c, "COMMAND LIST FILTERBY PATTERN config|*re*");
    assert_true(reply_has(r, "config|resetstat") && reply_has(r, "config|rewrite") && !reply_has(r, "config|get"));
    freeReplyObject(r);
    r = cmd(c, "COMMAND LIST FILTERBY PATTERN cl*help");
    assert_true(reply_has(r, "client|help"));
    freeReplyObject(r);
    r = cmd(c, "COMMAND LIST FILTERBY ACLCAT hash");
    assert_true(reply_has(r, "hset") && reply_has(r, "hgetall") && !reply_has(r, "set"));
    freeReplyObject(r);
    r = cmd(c, "COMMAND LIST FILTERBY aclcat KEYSPACE");   /* categories in any case */
    assert_true(reply_has(r, "del") && reply_has(r, "object|encoding") && !reply_has(r, "get"));
    freeReplyObject(r);
    expect_empty_array(cmd(c, "COMMAND LIST FILTERBY ACLCAT non_existing_category"));
    expect_empty_array(cmd(c, "COMMAND LIST FILTERBY MODULE non_existing_module"));
    expect_empty_array(cmd(c, "COMMAND LIST FILTERBY PATTERN non_exists*"));
    ERR(c, "ERR syntax error", "COMMAND LIST bad_arg");
    ERR(c, "ERR syntax error", "COMMAND LIST FILTERBY bad_arg");
    ERR(c, "ERR syntax error", "COMMAND LIST FILTERBY bad_arg bad_arg2");
    ERR(c, "ERR syntax error", "COMMAND LIST FILTERBY PATTERN a b");
}

/* One [key, flags] pair of GETKEYSANDFLAGS. */
static void expect_key_flags(const redisReply *pair, const char *key, const char *flags) {
    assert_int_equal(pair->type, REDIS_REPLY_ARRAY);
    assert_string_equal(pair->element[0]->str, key);
    char got[128] = "";
    const redisReply *f = pair->element[1];
    for (size_t i = 0; i < f->elements; i++) {
        if (i) strcat(got, " ");
        strcat(got, f->element[i]->str);
    }
    assert_string_equal(got, flags);
}

static void test_command_getkeys(void **state) {
    redisContext *c = FIX(state)->c;
    expect_bulks(cmd(c, "COMMAND GETKEYS GET key"), 1, "key");
    expect_bulks(cmd(c, "COMMAND GETKEYS MEMORY USAGE key"), 1, "key");
    expect_bulks(cmd(c, "COMMAND GETKEYS MSET a 1 b 2"), 2, "a", "b");
    expect_bulks(cmd(c, "COMMAND GETKEYS ZUNIONSTORE target 3 a b c WEIGHTS 1 2 3"), 4, "target", "a", "b", "c");
    expect_bulks(cmd(c, "COMMAND GETKEYS BLPOP l1 l2 0"), 2, "l1", "l2");
    expect_bulks(cmd(c, "COMMAND GETKEYS lmpop 2 l1 l2 LEFT"), 2, "l1", "l2");
    ERR(c, "ERR Invalid command specified", "COMMAND GETKEYS NOSUCHCMD a b");
    ERR(c, "ERR Invalid command specified", "COMMAND GETKEYS MEMORY FOO key");
    ERR(c, "ERR The command has no key arguments", "COMMAND GETKEYS PING a");
    ERR(c, "ERR The command has no key arguments", "COMMAND GETKEYS MEMORY STATS");
    ERR(c, "ERR Invalid number of arguments specified for command", "COMMAND GETKEYS GET a b");
    ERR(c, "ERR Invalid number of arguments specified for command", "COMMAND GETKEYS ZUNIONSTORE d 0");
    ERR(c, "ERR Invalid arguments specified for command", "COMMAND GETKEYS ZUNIONSTORE d 5 a");
    /* no_mandatory_keys: naming no key is an answer, not an error */
    expect_empty_array(cmd(c, "COMMAND GETKEYS EVAL %s 0", "return 1"));
    expect_empty_array(cmd(c, "COMMAND GETKEYS FCALL f 0"));
    expect_bulks(cmd(c, "COMMAND GETKEYS EVAL %s 1 key", "return 1"), 1, "key");
    ERR(c, "ERR wrong number of arguments for 'command|getkeys' command", "COMMAND GETKEYS GET");
    ERR(c, "ERR wrong number of arguments for 'command|getkeysandflags' command", "COMMAND GETKEYSANDFLAGS");

    redisReply *r = cmd(c, "COMMAND GETKEYSANDFLAGS SET k1 v1");
    assert_int_equal(r->elements, 1);
    expect_key_flags(r->element[0], "k1", "OW update");
    freeReplyObject(r);
    r = cmd(c, "COMMAND GETKEYSANDFLAGS SET k1 v1 GET");
    expect_key_flags(r->element[0], "k1", "RW access update");
    freeReplyObject(r);
    r = cmd(c, "COMMAND GETKEYSANDFLAGS MSET k1 v1 k2 v2");
    expect_key_flags(r->element[0], "k1", "OW update");
    expect_key_flags(r->element[1], "k2", "OW update");
    freeReplyObject(r);
    r = cmd(c, "COMMAND GETKEYSANDFLAGS LMOVE k1 k2 left right");
    expect_key_flags(r->element[0], "k1", "RW access delete");
    expect_key_flags(r->element[1], "k2", "RW insert");
    freeReplyObject(r);
    r = cmd(c, "COMMAND GETKEYSANDFLAGS ZINTERSTORE d 2 a b");
    expect_key_flags(r->element[0], "d", "OW update");
    expect_key_flags(r->element[2], "b", "RO access");
    freeReplyObject(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_command_and_error_stats, h_flushall),
        cmocka_unit_test_setup(test_resetstat, h_flushall),
        cmocka_unit_test_setup(test_stats_summed_over_threads, h_flushall),
        cmocka_unit_test_setup(test_latencystats, h_flushall),
        cmocka_unit_test_setup(test_info_sections, h_flushall),
        cmocka_unit_test_setup(test_memory_usage, h_flushall),
        cmocka_unit_test_setup(test_memory_stats, h_flushall),
        cmocka_unit_test_setup(test_command_list, h_noop_setup),
        cmocka_unit_test_setup(test_command_getkeys, h_noop_setup),
    };
    int rc = cmocka_run_group_tests_name("introspection", tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
