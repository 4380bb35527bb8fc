/*
 * Shared by the test_script*.c units: a fake host for the scripting engine.
 *
 * It answers redis.call() with canned RESP replies chosen by the command
 * name, records every argv it is handed (joined with spaces), counts
 * ticks, and can kill or abort a run after a number of ticks or calls:
 *
 *   raw <resp>      replies <resp> as given (any RESP2/RESP3 bytes)
 *   ping            +PONG             echo <s>     $s
 *   get <k>         $value, or $-1 when k is "missing"
 *   incr            :1                record ...   +OK (argv recorded)
 *   hgetall         %1 field value (RESP3) / *2 field value (RESP2)
 *   nosuch          -ERR Unknown Redis command called from script
 *   wrongtype       -WRONGTYPE Operation against a key holding the wrong kind of value
 *   anything else   +OK
 */
#ifndef TEST_SCRIPT_FIXTURE_H
#define TEST_SCRIPT_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ringkv/script.h"
#include "ringkv/reply.h"

struct fake {
    int calls;
    int ticks;
    int kill_at_tick;     /* >0: tick number answered with kill_verdict */
    int kill_at_call;     /* >0: call number answered with kill_verdict */
    int kill_verdict;     /* SCRIPT_KILL or SCRIPT_ABORT */
    char last_argv[4096];
    int last_resp, last_repl;
    bool last_pcall;
    int log_level;
    char log_msg[1024];
    int acl_answer;       /* for acl_check */
};

static inline void fake_reply_str(struct rbuf *out, const char *s) {
    rbuf_append(out, s, strlen(s));
}

static inline bool arg_is(const struct slice *a, const char *s) {
    return a->len == strlen(s) && strncasecmp(a->ptr, s, a->len) == 0;
}

static inline int fake_call(void *ctx, const struct script_call *c, struct rbuf *out) {
    struct fake *f = ctx;
    f->calls++;
    size_t n = 0, room = sizeof(f->last_argv) - 1;
    for (int i = 0; i < c->argc && n < room; i++) {
        if (i) f->last_argv[n++] = ' ';
        size_t len = c->argv[i].len < room - n ? c->argv[i].len : room - n;
        memcpy(f->last_argv + n, c->argv[i].ptr, len);
        n += len;
    }
    f->last_argv[n] = '\0';
    f->last_resp = c->resp;
    f->last_repl = c->repl;
    f->last_pcall = c->pcall;
    if (f->kill_at_call && f->calls >= f->kill_at_call) return f->kill_verdict;
    const struct slice *a = c->argv;
    if (arg_is(&a[0], "raw") && c->argc > 1) {
        rbuf_append(out, a[1].ptr, a[1].len);
    } else if (arg_is(&a[0], "ping")) {
        fake_reply_str(out, "+PONG\r\n");
    } else if (arg_is(&a[0], "echo") && c->argc > 1) {
        char hdr[32];
        int h = snprintf(hdr, sizeof(hdr), "$%zu\r\n", a[1].len);
        rbuf_append(out, hdr, (size_t)h);
        rbuf_append(out, a[1].ptr, a[1].len);
        fake_reply_str(out, "\r\n");
    } else if (arg_is(&a[0], "get")) {
        if (c->argc > 1 && arg_is(&a[1], "missing"))
            fake_reply_str(out, c->resp == 3 ? "_\r\n" : "$-1\r\n");
        else
            fake_reply_str(out, "$5\r\nvalue\r\n");
    } else if (arg_is(&a[0], "incr")) {
        fake_reply_str(out, ":1\r\n");
    } else if (arg_is(&a[0], "hgetall")) {
        fake_reply_str(out, c->resp == 3 ? "%1\r\n$5\r\nfield\r\n$5\r\nvalue\r\n" : "*2\r\n$5\r\nfield\r\n$5\r\nvalue\r\n");
    } else if (arg_is(&a[0], "nosuch")) {
        fake_reply_str(out, "-ERR Unknown Redis command called from script\r\n");
    } else if (arg_is(&a[0], "wrongtype")) {
        fake_reply_str(out, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    } else {
        fake_reply_str(out, "+OK\r\n");
    }
    return SCRIPT_GO_ON;
}

static inline int fake_tick(void *ctx) {
    struct fake *f = ctx;
    f->ticks++;
    if (f->kill_at_tick && f->ticks >= f->kill_at_tick) return f->kill_verdict;
    return SCRIPT_GO_ON;
}

static inline void fake_log(void *ctx, int level, const char *msg, size_t len) {
    struct fake *f = ctx;
    f->log_level = level;
    snprintf(f->log_msg, sizeof(f->log_msg), "%.*s", (int)len, msg);
}

static inline int fake_acl(void *ctx, int argc, const struct slice *argv) {
    struct fake *f = ctx;
    (void)argc;
    if (arg_is(&argv[0], "nosuch")) return -1;
    return f->acl_answer;
}

static inline struct script_host fake_host(struct fake *f) {
    return (struct script_host){ f, fake_call, fake_tick, fake_log, fake_acl };
}

/* Per-thread buffers of the helpers below; fixture_free() before a thread ends. */
static __thread struct rbuf fx_out, fx_err;

static inline void fixture_free(void) {
    rbuf_free(&fx_out);
    rbuf_free(&fx_err);
}

/* The reply (or error) bytes of EVAL body with "k1 k2 | a1 a2" style
 * arguments: keys then args; caller protocol resp. Returns a static buffer. */
static inline const char *eval_full(struct script_engine *e, struct fake *f, const char *body, int resp, int nkeys,
                                    int nargs, const char **argv, int *result) {
    fx_out.len = 0;
    char sha[41];
    int flags;
    struct slice b = { body, strlen(body) };
    if (!script_load(e, b, sha, &flags, &fx_err)) {
        rbuf_append(&fx_out, "-", 1);
        rbuf_append(&fx_out, fx_err.buf, fx_err.len);
        rbuf_append(&fx_out, "\r\n\0", 3);
        fx_out.len--;
        if (result) *result = SCRIPT_RESULT_ERROR;
        return fx_out.buf;
    }
    struct slice args[16];
    for (int i = 0; i < nkeys + nargs && i < 16; i++) args[i] = (struct slice){ argv[i], strlen(argv[i]) };
    struct script_host h = fake_host(f);
    struct reply r = { &fx_out, (uint8_t)resp };
    int res = script_run(e, (struct slice){ sha, 40 }, args, nkeys + nargs, nkeys, &h, &r);
    if (result) *result = res;
    rbuf_append(&fx_out, "\0", 1);
    fx_out.len--;
    return fx_out.buf;
}

static inline const char *eval2(struct script_engine *e, const char *body) {
    struct fake f = { 0 };
    return eval_full(e, &f, body, 2, 0, 0, NULL, NULL);
}

static inline const char *eval3(struct script_engine *e, const char *body) {
    struct fake f = { 0 };
    return eval_full(e, &f, body, 3, 0, 0, NULL, NULL);
}

/* Whether s starts with prefix (for error texts that end with a sha). */
#define assert_prefix(s, prefix)                                                     \
    do {                                                                             \
        const char *s_ = (s), *p_ = (prefix);                                        \
        if (strncmp(s_, p_, strlen(p_)) != 0) fail_msg("\"%s\" does not start with \"%s\"", s_, p_); \
    } while (0)

#define assert_contains(s, needle)                                                  \
    do {                                                                            \
        const char *s_ = (s), *n_ = (needle);                                       \
        if (!strstr(s_, n_)) fail_msg("\"%s\" does not contain \"%s\"", s_, n_);    \
    } while (0)

#endif
