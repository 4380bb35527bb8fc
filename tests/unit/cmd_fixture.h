/*
 * Running command handlers without a server, for the unit tests of
 * src/cmd/: one or two shards, a cmd_ctx built by hand with a controlled
 * clock, and a reply buffer that the tests compare byte for byte.
 *
 *     CHECK(":1\r\n", cmd_incr, "incr", "counter");
 *
 * runs INCR counter and fails the test with both replies shown, escaped, if
 * the bytes differ. A toy list type (a heap-allocated int) stands in for the
 * other data types, to exercise WRONGTYPE and object copying.
 */
#ifndef RINGKV_TEST_CMD_FIXTURE_H
#define RINGKV_TEST_CMD_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/stamp.h"
#include "ringkv/util.h"

#define NOW 1700000000000LL
#define MAX_ARGS 32

static struct shard fx_shards[2];
static struct shard *fx_shard_ptrs[2] = { &fx_shards[0], &fx_shards[1] };
static struct cmd_ctx c;
static struct rbuf out;

/* ---- a stand-in for the list type ---- */

static void toy_free(void *obj) { free(obj); }
static void *toy_dup(const void *obj) {
    int *n = malloc(sizeof *n);
    *n = *(const int *)obj;
    return n;
}
static const char *toy_encoding(const void *obj) { (void)obj; return "listpack"; }
static const struct obj_ops toy_ops = { toy_free, toy_dup, toy_encoding, NULL, NULL };

static inline void add_toy_list(const char *key, int value) {
    int *obj = malloc(sizeof *obj);
    *obj = value;
    db_insert(&c, entry_new_obj((struct slice){ key, strlen(key) }, OBJ_LIST, obj, NO_EXPIRE));
}

/* ---- setup ---- */

static int fx_setup_n(unsigned n) {
    slots_assign(n);
    for (unsigned i = 0; i < n; i++)
        shard_init(&fx_shards[i], i, 16);
    memset(&c, 0, sizeof c);
    c.shard = &fx_shards[0];
    c.shards = fx_shard_ptrs;
    c.nshards = n;
    c.now_ms = NOW;
    stamp_clock(NOW);   /* new keys are accessed at NOW */
    c.r.out = &out;
    c.r.resp = 2;
    obj_ops_by_type[OBJ_LIST] = &toy_ops;
    rk_config_proto_max_bulk_len = 512LL * 1024 * 1024;
    return 0;
}

static inline int fx_setup(void **state) { (void)state; return fx_setup_n(1); }
static inline int fx_setup2(void **state) { (void)state; return fx_setup_n(2); }

static int fx_teardown(void **state) {
    (void)state;
    for (unsigned i = 0; i < c.nshards; i++)
        shard_destroy(&fx_shards[i]);
    rbuf_free(&out);
    memset(&out, 0, sizeof out);
    slots_assign(1);
    return 0;
}

/* ---- running commands ---- */

/* Run fn with args (args[0] is the lowercase command name, NULL-terminated);
 * the reply is in out.buf[0..out.len). */
static void run(command_proc fn, const char *const *args) {
    struct slice argv[MAX_ARGS];
    struct command cmd = { .name = args[0], .proc = fn };
    int argc = 0;

    while (args[argc]) {
        argv[argc] = (struct slice){ args[argc], strlen(args[argc]) };
        argc++;
    }
    out.len = 0;
    c.argc = argc;
    c.argv = argv;
    c.cmd = &cmd;
    fn(&c);
    c.argv = NULL;
    c.cmd = NULL;
}

#define RUN(fn, ...) run(fn, (const char *const[]){ __VA_ARGS__, NULL })

static void escape(char *dst, size_t cap, const char *p, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len && n + 5 < cap; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\r') n += (size_t)snprintf(dst + n, cap - n, "\\r");
        else if (ch == '\n') n += (size_t)snprintf(dst + n, cap - n, "\\n");
        else if (ch < 32 || ch > 126) n += (size_t)snprintf(dst + n, cap - n, "\\x%02x", ch);
        else dst[n++] = (char)ch;
    }
    dst[n] = '\0';
}

static void check_reply(const char *want, size_t wlen, const char *file, int line) {
    if (out.len == wlen && memcmp(out.buf, want, wlen) == 0)
        return;
    char w[512], g[512];
    escape(w, sizeof w, want, wlen);
    escape(g, sizeof g, out.buf, out.len);
    fail_msg("%s:%d: expected \"%s\", got \"%s\"", file, line, w, g);
}

/* Run a command and compare its reply with a string literal (may hold NULs). */
#define CHECK(want, fn, ...) do { \
        RUN(fn, __VA_ARGS__); \
        check_reply(want, sizeof(want) - 1, __FILE__, __LINE__); \
    } while (0)

/* Integer reply of the last command. */
static inline long long reply_ll(void) {
    assert_true(out.len > 3 && out.buf[0] == ':');
    return strtoll(out.buf + 1, NULL, 10);
}

#endif
