/*
 * RDB persistence end to end: SAVE and BGSAVE files that a restarted server
 * loads back key for key; a BGSAVE under writes that holds exactly the data
 * of its moment; files exchanged with Debian's redis-server both ways;
 * DEBUG RELOAD; FLUSHALL's save and the dirty counter; MISCONF after a
 * failed BGSAVE; a corrupt file that stops the start.
 *
 * Datasets are compared as text: every key of databases 0..3 with its type,
 * whether it has a TTL, and its contents read back by ordinary commands,
 * so the same comparison works between ringkv and redis-server.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* A growing text. */
struct rbuf { char *buf; size_t len, cap; };

static void rbuf_append(struct rbuf *b, const void *p, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->buf = realloc(b->buf, b->cap);
        assert_non_null(b->buf);
    }
    memcpy(b->buf + b->len, p, n);
    b->len += n;
}

#define DBS 4

static char g_dir[128];

static void dir_clear(void) {
    char command[320];
    snprintf(command, sizeof command, "rm -rf %s/dump.rdb %s/appendonlydir", g_dir, g_dir);
    assert_int_equal(system(command), 0);
}

static void start_in_dir(struct server *s, const char *save) {
    const char *extra[] = { "--dir", g_dir, "--save", save, "--enable-protected-configs", "yes", NULL };
    memset(s, 0, sizeof *s);
    assert_int_equal(server_start(s, extra), 0);
}

/* ringkv (or redis-server) in g_dir with the AOF on and that fsync policy. */
static void start_aof(struct server *s, const char *fsync) {
    const char *extra[] = { "--dir", g_dir, "--save", "", "--appendonly", "yes", "--appendfsync", fsync, NULL };
    memset(s, 0, sizeof *s);
    assert_int_equal(server_start(s, extra), 0);
}

/* ---- the dataset as text */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The elements of an array reply, sorted when order means nothing, joined. */
static void append_elements(struct rbuf *out, redisReply *r, bool sort) {
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    char **v = malloc((r->elements + 1) * sizeof *v);
    for (size_t i = 0; i < r->elements; i++) v[i] = reply_repr(r->element[i]);
    if (sort) qsort(v, r->elements, sizeof *v, cmp_str);
    for (size_t i = 0; i < r->elements; i++) {
        rbuf_append(out, v[i], strlen(v[i]));
        rbuf_append(out, ",", 1);
        free(v[i]);
    }
    free(v);
}

/* Hash fields and values in pairs, sorted by pair. */
static void append_pairs(struct rbuf *out, redisReply *r) {
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    size_t n = r->elements / 2;
    char **v = malloc((n + 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        char *a = reply_repr(r->element[2 * i]), *b = reply_repr(r->element[2 * i + 1]);
        v[i] = malloc(strlen(a) + strlen(b) + 2);
        sprintf(v[i], "%s=%s", a, b);
        free(a);
        free(b);
    }
    qsort(v, n, sizeof *v, cmp_str);
    for (size_t i = 0; i < n; i++) {
        rbuf_append(out, v[i], strlen(v[i]));
        rbuf_append(out, ",", 1);
        free(v[i]);
    }
    free(v);
}

static void append_key(redisContext *c, struct rbuf *out, const char *key) {
    redisReply *t = cmd(c, "TYPE %s", key);
    char line[512];
    redisReply *ttl = cmd(c, "PTTL %s", key);
    snprintf(line, sizeof line, "\n%s %s ttl=%s: ", key, t->str, ttl->integer > 0 ? "yes" : "no");
    rbuf_append(out, line, strlen(line));
    redisReply *r;
    if (!strcmp(t->str, "string")) r = cmd(c, "GET %s", key);
    else if (!strcmp(t->str, "list")) r = cmd(c, "LRANGE %s 0 -1", key);
    else if (!strcmp(t->str, "set")) r = cmd(c, "SMEMBERS %s", key);
    else if (!strcmp(t->str, "zset")) r = cmd(c, "ZRANGE %s 0 -1 WITHSCORES", key);
    else if (!strcmp(t->str, "hash")) r = cmd(c, "HGETALL %s", key);
    else r = cmd(c, "XRANGE %s - +", key);
    if (r->type == REDIS_REPLY_STRING) {
        rbuf_append(out, r->str, r->len);
    } else if (!strcmp(t->str, "hash")) {
        append_pairs(out, r);
    } else {
        append_elements(out, r, !strcmp(t->str, "set"));
    }
    if (!strcmp(t->str, "stream")) {   /* consumer groups and their pending entries */
        redisReply *g = cmd(c, "XINFO GROUPS %s", key);
        char *gs = reply_repr(g);
        rbuf_append(out, gs, strlen(gs));
        free(gs);
        freeReplyObject(g);
    }
    freeReplyObject(r);
    freeReplyObject(ttl);
    freeReplyObject(t);
}

/* Every key of databases 0..DBS-1, sorted, as text (malloc'd). */
static char *dataset_text(redisContext *c) {
    struct rbuf out = { 0 };
    for (int db = 0; db < DBS; db++) {
        freeReplyObject(cmd(c, "SELECT %d", db));
        redisReply *keys = cmd(c, "KEYS *");
        assert_int_equal(keys->type, REDIS_REPLY_ARRAY);
        char **v = malloc((keys->elements + 1) * sizeof *v);
        for (size_t i = 0; i < keys->elements; i++) v[i] = strdup(keys->element[i]->str);
        qsort(v, keys->elements, sizeof *v, cmp_str);
        char head[32];
        snprintf(head, sizeof head, "\n# db%d", db);
        rbuf_append(&out, head, strlen(head));
        for (size_t i = 0; i < keys->elements; i++) {
            append_key(c, &out, v[i]);
            free(v[i]);
        }
        free(v);
        freeReplyObject(keys);
    }
    freeReplyObject(cmd(c, "SELECT 0"));
    rbuf_append(&out, "", 1);
    return out.buf;
}

/* Server s holds the dataset before (freed), and stops. */
static void expect_dataset(struct server *s, char *before) {
    redisContext *c = h_connect(s);
    char *after = dataset_text(c);
    assert_string_equal(before, after);
    free(before);
    free(after);
    redisFree(c);
    assert_int_equal(server_stop(s), 0);
}

/* Keys of every type in several databases, some with a TTL, some big
 * enough for each type's big encoding, a stream with a group. */
static void populate(redisContext *c, int n) {
    for (int db = 0; db < DBS; db += 2) {
        freeReplyObject(cmd(c, "SELECT %d", db));
        for (int i = 0; i < n; i++) {
            OK(c, "SET str:%d value-%d", i, i * db);
            OK(c, "SET int:%d %d", i, i - 500);
            freeReplyObject(cmd(c, "RPUSH list:%d a %d b", i % 50, i));
            freeReplyObject(cmd(c, "SADD set:%d m%d", i % 40, i));
            freeReplyObject(cmd(c, "SADD iset:%d %d", i % 30, i));
            freeReplyObject(cmd(c, "HSET hash:%d f%d v%d", i % 45, i, i));
            freeReplyObject(cmd(c, "ZADD zset:%d %d.5 m%d", i % 35, i, i));
            if (i % 10 == 0) freeReplyObject(cmd(c, "PEXPIRE str:%d 100000000", i));
        }
        OK(c, "SET long %0500d", 7);
        freeReplyObject(cmd(c, "XADD stream * f 1 g 2"));
        freeReplyObject(cmd(c, "XADD stream * f 3"));
        OK(c, "XGROUP CREATE stream grp 0");
        freeReplyObject(cmd(c, "XREADGROUP GROUP grp alice COUNT 1 STREAMS stream >"));
    }
    freeReplyObject(cmd(c, "SELECT 0"));
}

static void expect_status_field(redisContext *c, const char *name, const char *want) {
    redisReply *r = cmd(c, "INFO persistence");
    char *v = info_field(r->str, name);
    assert_non_null(v);
    assert_string_equal(v, want);
    free(v);
    freeReplyObject(r);
}

static void wait_bgsave_done(redisContext *c) {
    for (int i = 0; i < 2000; i++) {
        if (info_ll(c, "persistence", "rdb_bgsave_in_progress") == 0) return;
        h_sleep_ms(10);
    }
    h_fail("BGSAVE did not finish");
}

/* Save with `how` (SAVE or BGSAVE), restart from the file, same dataset. */
static void save_and_restart(const char *how) {
    dir_clear();
    struct server a, b;
    start_in_dir(&a, "");
    redisContext *c = h_connect(&a);
    populate(c, 400);
    char *before = dataset_text(c);
    redisReply *r = cmd(c, how);
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    if (!strcmp(how, "BGSAVE")) wait_bgsave_done(c);
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);

    start_in_dir(&b, "");
    expect_dataset(&b, before);
}

static void test_save_restart(void **state) {
    (void)state;
    save_and_restart("SAVE");
}

static void test_bgsave_restart(void **state) {
    (void)state;
    save_and_restart("BGSAVE");
}

/* BGSAVE, then overwrite, delete and add keys at once, on this connection
 * (its replies are in order: every write below comes after the moment)
 * and with MSETs across shards: the file holds the keys as they were. */
static void test_bgsave_moment(void **state) {
    (void)state;
    dir_clear();
    struct server a, b;
    start_in_dir(&a, "");
    redisContext *c = h_connect(&a);
    enum { N = 60000 };
    for (int i = 0; i < N; i += 1000) {
        for (int j = i; j < i + 1000; j++) redisAppendCommand(c, "SET k:%d old-%d", j, j);
        for (int j = i; j < i + 1000; j++) {
            redisReply *r;
            assert_int_equal(redisGetReply(c, (void **)&r), REDIS_OK);
            freeReplyObject(r);
        }
    }
    freeReplyObject(cmd(c, "RPUSH biglist %s", "first"));
    redisAppendCommand(c, "BGSAVE");
    for (int j = 0; j < N; j++) {
        if (j % 7 == 0) redisAppendCommand(c, "DEL k:%d", j);
        else if (j % 5 == 0) redisAppendCommand(c, "MSET k:%d new k:%d new new:%d x", j, (j + 1) % N, j);
        else redisAppendCommand(c, "SET k:%d new-%d", j, j);
        if (j % 1000 == 0) redisAppendCommand(c, "RPUSH biglist %d", j);
    }
    redisReply *r;
    assert_int_equal(redisGetReply(c, (void **)&r), REDIS_OK);
    expect_status(r, "Background saving started");
    for (int j = 0; j < N + N / 1000; j++) {
        assert_int_equal(redisGetReply(c, (void **)&r), REDIS_OK);
        assert_int_not_equal(r->type, REDIS_REPLY_ERROR);
        freeReplyObject(r);
    }
    wait_bgsave_done(c);
    expect_status_field(c, "rdb_last_bgsave_status", "ok");
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);

    start_in_dir(&b, "");
    c = h_connect(&b);
    INT(c, N + 1, "DBSIZE");
    for (int j = 0; j < N; j += 1) redisAppendCommand(c, "GET k:%d", j);
    for (int j = 0; j < N; j++) {
        assert_int_equal(redisGetReply(c, (void **)&r), REDIS_OK);
        char want[32];
        snprintf(want, sizeof want, "old-%d", j);
        expect_bulk(r, want);
    }
    expect_bulks(cmd(c, "LRANGE biglist 0 -1"), 1, "first");
    INT(c, 0, "EXISTS new:5");
    redisFree(c);
    assert_int_equal(server_stop(&b), 0);
}

/* A server in g_dir: redis-server (Debian's) or ringkv. */
static void start_kind(struct server *s, bool redis) {
    if (!redis) {
        start_in_dir(s, "");
        return;
    }
    setenv("RINGKV_TEST_REDIS", "1", 1);   /* the harness's switch to redis-server */
    const char *extra[] = { "--dir", g_dir, NULL };
    int rc = server_start(s, extra);
    unsetenv("RINGKV_TEST_REDIS");
    assert_int_equal(rc, 0);
}

/* A file saved by one server loads into the other. */
static void exchange(bool from_redis) {
    dir_clear();
    struct server a, b;
    start_kind(&a, from_redis);
    redisContext *c = h_connect(&a);
    populate(c, 300);
    char *before = dataset_text(c);
    OK(c, "SAVE");
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);

    start_kind(&b, !from_redis);
    expect_dataset(&b, before);
}

static bool have_redis_server(void) {
    return system("command -v redis-server >/dev/null 2>&1") == 0;
}

static void test_from_redis(void **state) {
    (void)state;
    if (h_redis_mode() || !have_redis_server()) skip();
    exchange(true);
}

static void test_to_redis(void **state) {
    (void)state;
    if (h_redis_mode() || !have_redis_server()) skip();
    exchange(false);
}

/* DEBUG RELOAD saves and loads back, FUNCTION libraries included. */
static void test_debug_reload(void **state) {
    (void)state;
    dir_clear();
    struct server a;
    start_in_dir(&a, "");
    redisContext *c = h_connect(&a);
    populate(c, 100);
    BULK(c, "lib", "FUNCTION LOAD %s", "#!lua name=lib\nredis.register_function('f', function() return 1 end)");
    char *before = dataset_text(c);
    OK(c, "DEBUG RELOAD");
    char *after = dataset_text(c);
    assert_string_equal(before, after);
    INT(c, 1, "FCALL f 0");
    free(before);
    free(after);
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
}

/* rdb_changes_since_last_save as Redis counts it: a save sets it to 0,
 * and so does FLUSHALL when save points make it save. */
static void test_dirty_and_flushall(void **state) {
    (void)state;
    dir_clear();
    struct server a;
    start_in_dir(&a, "");
    redisContext *c = h_connect(&a);
    OK(c, "SET a 1");
    OK(c, "SET b 2");
    INT(c, 2, "DEL a b");
    assert_int_equal(info_ll(c, "persistence", "rdb_changes_since_last_save"), 4);
    OK(c, "SAVE");
    assert_int_equal(info_ll(c, "persistence", "rdb_changes_since_last_save"), 0);
    OK(c, "SET a 1");
    OK(c, "FLUSHALL");
    assert_true(info_ll(c, "persistence", "rdb_changes_since_last_save") > 0);
    OK(c, "CONFIG SET save %s", "3600 1");
    OK(c, "SET a 1");
    OK(c, "FLUSHALL");
    assert_int_equal(info_ll(c, "persistence", "rdb_changes_since_last_save"), 0);
    redisReply *r = cmd(c, "LASTSAVE");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer > 1700000000);
    freeReplyObject(r);
    ERR(c, "ERR syntax error", "BGSAVE now");
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
}

/* With save points and stop-writes-on-bgsave-error, a failed BGSAVE turns
 * writes away until one succeeds. */
static void test_misconf(void **state) {
    (void)state;
    if (h_redis_mode()) skip();   /* Redis's child fails later: its reply is "started" */
    dir_clear();
    struct server a;
    start_in_dir(&a, "3600 1");
    redisContext *c = h_connect(&a);
    char gone[160];
    snprintf(gone, sizeof gone, "%s/gone", g_dir);
    mkdir(gone, 0755);
    OK(c, "CONFIG SET dir %s", gone);
    rmdir(gone);
    expect_error_prefix(cmd(c, "BGSAVE"), "ERR Failed opening the temp RDB file");
    expect_status_field(c, "rdb_last_bgsave_status", "err");
    expect_error_prefix(cmd(c, "SET k v"), "MISCONF ");
    expect_error_prefix(cmd(c, "PING"), "MISCONF ");
    NIL(c, "GET k");   /* reads still run */
    OK(c, "CONFIG SET dir %s", g_dir);
    STATUS(c, "Background saving started", "BGSAVE");
    wait_bgsave_done(c);
    OK(c, "SET k v");
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
}

/* A file, whole (NUL-terminated; *len its size when len is given). */
static char *file_whole(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

/* A corrupt dump.rdb stops the start with a message, exit status 1. */
static void test_corrupt_file_refused(void **state) {
    (void)state;
    if (h_redis_mode()) skip();
    dir_clear();
    char path[256];
    snprintf(path, sizeof path, "%s/dump.rdb", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("REDIS0010\xfe\x00garbage", f);
    fclose(f);
    char log[160], command[640];
    snprintf(log, sizeof log, "%s/start.log", g_dir);
    snprintf(command, sizeof command, "timeout 10 %s --port 0 --dir %s --save '' >%s 2>&1",
             getenv("RINGKV_BIN") ? getenv("RINGKV_BIN") : "./ringkv", g_dir, log);
    int st = system(command);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    char *text = file_whole(log, NULL);
    assert_non_null(strstr(text, "Fatal error loading the DB"));
    free(text);
    unlink(log);
}

/* ---- the append-only file */

static void wait_rewrite_done(redisContext *c) {
    for (int i = 0; i < 2000; i++) {
        if (info_ll(c, "persistence", "aof_rewrite_in_progress") == 0 &&
            info_ll(c, "persistence", "aof_rewrite_scheduled") == 0)
            return;
        h_sleep_ms(10);
    }
    h_fail("the AOF rewrite did not finish");
}

/* Writes whose records must be rewritten to replay the same: relative
 * TTLs, SPOP, INCRBYFLOAT, XADD *, transactions, scripts, functions. */
static void aof_writes(redisContext *c) {
    populate(c, 200);
    OK(c, "SET ex1 v EX 1000");
    OK(c, "SETEX ex2 1000 v");
    OK(c, "SET ex3 v");
    INT(c, 1, "EXPIRE ex3 1000");
    OK(c, "SET gone v");
    INT(c, 1, "PEXPIRE gone -1");
    freeReplyObject(cmd(c, "SADD popme a b c d e f"));
    freeReplyObject(cmd(c, "SPOP popme 2"));
    freeReplyObject(cmd(c, "SPOP popme"));
    freeReplyObject(cmd(c, "INCRBYFLOAT fl 1.25"));
    freeReplyObject(cmd(c, "HINCRBYFLOAT hfl f 2.5"));
    freeReplyObject(cmd(c, "XADD xs * a 1"));
    freeReplyObject(cmd(c, "XADD xs MAXLEN ~ 100 * b 2"));
    OK(c, "MULTI");
    STATUS(c, "QUEUED", "SET {t}a 1");
    STATUS(c, "QUEUED", "INCR {t}a");
    STATUS(c, "QUEUED", "SET other 2");
    freeReplyObject(cmd(c, "EXEC"));
    freeReplyObject(cmd(c, "EVAL %s 2 s1 s2", "redis.call('set', KEYS[1], 'x'); redis.call('set', KEYS[2], 'y')"));
    freeReplyObject(cmd(c, "EVAL %s 0", "redis.call('set', 'undeclared', 'z')"));
    BULK(c, "lib", "FUNCTION LOAD %s", "#!lua name=lib\nredis.register_function('f', function() return 1 end)");
    OK(c, "MSET m1 1 m2 2 m3 3 m4 4");
    INT(c, 2, "DEL m1 m2");
    OK(c, "RENAME m3 m5");
}

/* Restart from the AOF: the same dataset, functions included. */
static void restart_same(struct server *a, redisContext **c, const char *fsync) {
    char *before = dataset_text(*c);
    redisFree(*c);
    assert_int_equal(server_stop(a), 0);
    start_aof(a, fsync);
    *c = h_connect(a);
    char *after = dataset_text(*c);
    assert_string_equal(before, after);
    INT(*c, 1, "FCALL f 0");
    free(before);
    free(after);
}

static void test_aof_restart(void **state) {
    (void)state;
    dir_clear();
    struct server a;
    start_aof(&a, "everysec");
    redisContext *c = h_connect(&a);
    expect_status_field(c, "aof_enabled", "1");
    aof_writes(c);
    INT(c, 1, "EXISTS undeclared");
    INT(c, 0, "EXISTS gone");
    restart_same(&a, &c, "everysec");
    /* a rewrite: base from a snapshot, then more records after it */
    STATUS(c, "Background append only file rewriting started", "BGREWRITEAOF");
    OK(c, "SET after-rewrite 1");
    wait_rewrite_done(c);
    expect_status_field(c, "aof_last_bgrewrite_status", "ok");
    OK(c, "SET after-rewrite 2");
    restart_same(&a, &c, "always");
    BULK(c, "2", "GET after-rewrite");
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
    if (have_redis_server() && !h_redis_mode()) {
        char check[512];
        snprintf(check, sizeof check, "redis-check-aof %s/appendonlydir/appendonly.aof.manifest >/dev/null 2>&1",
                 g_dir);
        assert_int_equal(system(check), 0);
    }
}

/* An AOF directory written by one server loads into the other as into
 * the server that wrote it (Redis's own records do not restore all of a
 * stream group's state: entries-read). */
static void start_aof_kind(struct server *s, bool redis) {
    if (redis) setenv("RINGKV_TEST_REDIS", "1", 1);
    start_aof(s, "always");
    unsetenv("RINGKV_TEST_REDIS");
}

static void aof_exchange(bool from_redis) {
    dir_clear();
    struct server a, b;
    start_aof_kind(&a, from_redis);
    redisContext *c = h_connect(&a);
    aof_writes(c);
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
    start_aof_kind(&a, from_redis);
    c = h_connect(&a);
    char *before = dataset_text(c);
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
    start_aof_kind(&b, !from_redis);
    expect_dataset(&b, before);
}

static void test_aof_from_redis(void **state) {
    (void)state;
    if (h_redis_mode() || !have_redis_server()) skip();
    aof_exchange(true);
}

static void test_aof_to_redis(void **state) {
    (void)state;
    if (h_redis_mode() || !have_redis_server()) skip();
    aof_exchange(false);
}

/* A file of the AOF directory, whole (NUL-terminated; *len its size). */
static char *aof_dir_file(const char *name, size_t *len) {
    char path[512];
    snprintf(path, sizeof path, "%s/appendonlydir/%s", g_dir, name);
    return file_whole(path, len);
}

/* aof-use-rdb-preamble no: the rewrite's base is a file of commands
 * (RESTORE per key, FUNCTION LOAD), with aof-timestamp-enabled's #TS
 * annotations in it and in the records; ringkv, redis-check-aof and
 * redis-server load the directory to the same dataset. */
static void test_aof_commands_base(void **state) {
    (void)state;
    if (h_redis_mode()) skip();
    dir_clear();
    struct server a;
    start_aof(&a, "always");   /* a reply: its records are in the file */
    redisContext *c = h_connect(&a);
    OK(c, "CONFIG SET aof-use-rdb-preamble no");
    OK(c, "CONFIG SET aof-timestamp-enabled yes");
    aof_writes(c);
    char *incr = aof_dir_file("appendonly.aof.1.incr.aof", NULL);
    assert_memory_equal(incr, "#TS:", 4);
    free(incr);
    STATUS(c, "Background append only file rewriting started", "BGREWRITEAOF");
    wait_rewrite_done(c);
    expect_status_field(c, "aof_last_bgrewrite_status", "ok");
    OK(c, "SET after-rewrite 1");
    char *manifest = aof_dir_file("appendonly.aof.manifest", NULL);
    char *base_name = strstr(manifest, "appendonly.aof.2.base.aof");
    assert_non_null(base_name);
    assert_non_null(strstr(manifest, "type b"));
    size_t blen;
    char *base = aof_dir_file("appendonly.aof.2.base.aof", &blen);
    assert_memory_equal(base, "#TS:", 4);
    assert_non_null(memmem(base, blen, "$7\r\nRESTORE\r\n", 13));
    assert_non_null(memmem(base, blen, "$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n", 24));
    assert_non_null(memmem(base, blen, "$6\r\nABSTTL\r\n", 12));   /* ex1, ex2, ex3 */
    free(base);
    free(manifest);
    restart_same(&a, &c, "everysec");
    BULK(c, "1", "GET after-rewrite");
    char *before = dataset_text(c);
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
    if (have_redis_server()) {
        char check[512];
        snprintf(check, sizeof check, "redis-check-aof %s/appendonlydir/appendonly.aof.manifest >/dev/null 2>&1",
                 g_dir);
        assert_int_equal(system(check), 0);
        struct server b;
        start_aof_kind(&b, true);
        expect_dataset(&b, before);
    } else {
        free(before);
    }
}

/* kill -9 at a moment the test does not control: connections on every
 * thread write with pipelines in flight. With appendfsync always every
 * write whose reply arrived is there after the restart; with any policy
 * each connection's writes that survive are a prefix of what it sent
 * (its keys share a hash tag: commands of one client for one shard run
 * in the order sent; across shards a pipeline has no such order), and an
 * MSET across shards is there whole or not at all. */
enum { KILL_CONNS = 8, KILL_ROUNDS = 40, KILL_BURST = 64 };

static void kill_and_check(const char *fsync, unsigned seed) {
    dir_clear();
    struct server a;
    start_aof(&a, fsync);
    redisContext *cs[KILL_CONNS];
    int acked[KILL_CONNS], sent[KILL_CONNS];
    for (int i = 0; i < KILL_CONNS; i++) {
        cs[i] = h_connect(&a);
        acked[i] = sent[i] = 0;
    }
    srand(seed);
    int rounds = 1 + rand() % KILL_ROUNDS, kill_after = rand() % (KILL_CONNS * KILL_BURST);
    /* write n of connection i: SET {c<i>}:<n> n, and every 4th an MSET
     * of it and a key on (likely) another shard */
    for (int r = 0; r <= rounds; r++) {
        int burst = r < rounds ? 4 : KILL_BURST;
        for (int i = 0; i < KILL_CONNS; i++)
            for (int k = 0; k < burst; k++, sent[i]++) {
                int n = sent[i];
                if (n % 4 == 3) redisAppendCommand(cs[i], "MSET {c%d}:%d %d pair%d:%d %d", i, n, n, i, n, n);
                else redisAppendCommand(cs[i], "SET {c%d}:%d %d", i, n, n);
            }
        int got = 0;
        for (int i = 0; i < KILL_CONNS; i++) {
            redisBufferWrite(cs[i], &(int){ 0 });
            if (r == rounds) continue;
            for (; acked[i] < sent[i]; acked[i]++) {
                redisReply *rep;
                assert_int_equal(redisGetReply(cs[i], (void **)&rep), REDIS_OK);
                freeReplyObject(rep);
            }
        }
        if (r < rounds) continue;
        /* the last burst: replies as they come, then kill -9 mid-stream */
        for (int i = 0; i < KILL_CONNS && got < kill_after; i++)
            for (; acked[i] < sent[i] && got < kill_after; acked[i]++, got++) {
                redisReply *rep;
                if (redisGetReply(cs[i], (void **)&rep) != REDIS_OK) break;
                freeReplyObject(rep);
            }
        kill(a.pid, SIGKILL);
        waitpid(a.pid, NULL, 0);
        a.pid = 0;
        /* replies that left before the kill are acknowledged too */
        for (int i = 0; i < KILL_CONNS; i++) {
            for (; acked[i] < sent[i]; acked[i]++) {
                void *rep;
                if (redisGetReply(cs[i], &rep) != REDIS_OK || !rep) break;
                freeReplyObject(rep);
            }
        }
    }
    for (int i = 0; i < KILL_CONNS; i++) redisFree(cs[i]);
    rmdir(a.dir);

    struct server b;
    start_aof(&b, fsync);
    redisContext *c = h_connect(&b);
    bool strict = !strcmp(fsync, "always");
    for (int i = 0; i < KILL_CONNS; i++) {
        bool gone = false;
        for (int n = 0; n < sent[i]; n++) {
            redisReply *r = cmd(c, "GET {c%d}:%d", i, n);
            bool there = r->type == REDIS_REPLY_STRING;
            if (there) assert_int_equal(atoi(r->str), n);
            freeReplyObject(r);
            if (strict && n < acked[i] && !there)
                h_fail("acknowledged write c%d:%d lost (seed %u, %d rounds, kill after %d replies)", i, n, seed, rounds,
                       kill_after);
            if (there && gone)
                h_fail("c%d:%d is there after a write of the same connection that is not (seed %u)", i, n, seed);
            gone |= !there;
            if (n % 4 == 3) {
                r = cmd(c, "EXISTS pair%d:%d", i, n);
                assert_int_equal(r->integer, there ? 1 : 0);
                freeReplyObject(r);
            }
        }
    }
    redisFree(c);
    assert_int_equal(server_stop(&b), 0);
}

static void test_aof_kill9_always(void **state) {
    (void)state;
    for (unsigned seed = 1; seed <= 3; seed++) kill_and_check("always", seed * 7919 + (unsigned)getpid());
}

static void test_aof_kill9_everysec(void **state) {
    (void)state;
    kill_and_check("everysec", (unsigned)getpid());
}

/* A cut last record: loaded up to it and the file cut back there, or,
 * with aof-load-truncated no, the start refused. */
static void test_aof_truncated(void **state) {
    (void)state;
    if (h_redis_mode()) skip();
    dir_clear();
    struct server a;
    start_aof(&a, "always");
    redisContext *c = h_connect(&a);
    OK(c, "SET a 1");
    OK(c, "SET b 2");
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/appendonlydir/appendonly.aof.1.incr.aof", g_dir);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$5\r\nsho", f);
    fclose(f);
    char log[160], command[700];
    snprintf(log, sizeof log, "%s/start.log", g_dir);
    snprintf(command, sizeof command,
             "timeout 10 %s --port 0 --dir %s --save '' --appendonly yes --aof-load-truncated no >%s 2>&1",
             getenv("RINGKV_BIN") ? getenv("RINGKV_BIN") : "./ringkv", g_dir, log);
    int st = system(command);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    unlink(log);
    start_aof(&a, "always");
    c = h_connect(&a);
    BULK(c, "1", "GET a");
    BULK(c, "2", "GET b");
    NIL(c, "GET c");
    OK(c, "SET c 3");
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
    start_aof(&a, "always");
    c = h_connect(&a);
    BULK(c, "3", "GET c");
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);
}

/* PING answers -LOADING: the server is up and its load is not over. */
static bool answers_loading(int port) {
    redisContext *p = redisConnect("127.0.0.1", port);
    bool loading = false;
    if (p && !p->err) {
        redisReply *r = redisCommand(p, "PING");
        loading = r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "LOADING", 7) == 0;
        freeReplyObject(r);
    }
    redisFree(p);
    return loading;
}

/* A shutdown signal while the AOF loads at start ends the load and the
 * server, cleanly and without saving, as Redis does (and ringkv for an
 * RDB file). Every command read from the AOF waits key-load-delay, as in
 * Redis, so this load would last far longer than the bounded wait for the
 * exit; the log tells whether it was cut short: "Ready to accept
 * connections" comes only once a load is over. */
static void test_aof_load_stopped_by_sigterm(void **state) {
    (void)state;
    if (h_redis_mode()) skip();
    enum { KEYS = 4000, POLLS = 3000, POLL_MS = 10 };
    dir_clear();
    struct server a;
    start_aof(&a, "everysec");
    redisContext *c = h_connect(&a);
    for (int i = 0; i < KEYS; i++) redisAppendCommand(c, "SET k:%d v", i);
    for (int i = 0; i < KEYS; i++) {
        redisReply *r = NULL;
        assert_int_equal(redisGetReply(c, (void **)&r), REDIS_OK);
        freeReplyObject(r);
    }
    redisFree(c);
    assert_int_equal(server_stop(&a), 0);

    char log[160], port[16];
    snprintf(log, sizeof log, "%s/start.log", g_dir);
    int port_nr = h_free_port();
    snprintf(port, sizeof port, "%d", port_nr);
    const char *ringkv = getenv("RINGKV_BIN") ? getenv("RINGKV_BIN") : "./ringkv";
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(log, "w", stdout) || dup2(STDOUT_FILENO, STDERR_FILENO) < 0) _exit(126);
        execl(ringkv, ringkv, "--port", port, "--bind", "127.0.0.1", "--dir", g_dir, "--save", "",
              "--appendonly", "yes", "--key-load-delay", "10000", (char *)NULL);
        _exit(127);
    }
    bool loading = false;
    for (int i = 0; i < POLLS && !loading; i++) {
        loading = answers_loading(port_nr);
        if (!loading) h_sleep_ms(POLL_MS);
    }
    kill(pid, SIGTERM);
    int st = 0;
    bool exited = false;
    for (int i = 0; i < POLLS && !exited; i++) {
        exited = waitpid(pid, &st, WNOHANG) == pid;
        if (!exited) h_sleep_ms(POLL_MS);
    }
    if (!exited) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    char *text = h_read_file(log, NULL);
    if (!loading || !exited || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !text ||
        !strstr(text, "Received SIGTERM scheduling shutdown...") || strstr(text, "Ready to accept connections"))
        h_fail("loading %d, exited %d, status %d; log:\n%s", loading, exited, st, text ? text : "(none)");
    free(text);
    unlink(log);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/ringkv-persist-%d", (int)getpid());
    mkdir(g_dir, 0755);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_save_restart),
        cmocka_unit_test(test_bgsave_restart),
        cmocka_unit_test(test_bgsave_moment),
        cmocka_unit_test(test_from_redis),
        cmocka_unit_test(test_to_redis),
        cmocka_unit_test(test_debug_reload),
        cmocka_unit_test(test_dirty_and_flushall),
        cmocka_unit_test(test_misconf),
        cmocka_unit_test(test_corrupt_file_refused),
        cmocka_unit_test(test_aof_restart),
        cmocka_unit_test(test_aof_from_redis),
        cmocka_unit_test(test_aof_to_redis),
        cmocka_unit_test(test_aof_kill9_always),
        cmocka_unit_test(test_aof_kill9_everysec),
        cmocka_unit_test(test_aof_commands_base),
        cmocka_unit_test(test_aof_truncated),
        cmocka_unit_test(test_aof_load_stopped_by_sigterm),
    };
    int rc = cmocka_run_group_tests_name("persist", tests, NULL, NULL);
    dir_clear();
    rmdir(g_dir);
    return rc + h_failures();
}
