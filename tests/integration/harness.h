/*
 * Integration test harness: start a server process on a free loopback port,
 * talk to it through hiredis (RESP2) or raw sockets (exact bytes, RESP3),
 * and stop it, failing the test when it did not exit cleanly.
 *
 * Environment:
 *   RINGKV_BIN         path of the ringkv binary (default: build/ringkv)
 *   RINGKV_THREADS     --threads for ringkv (default 1)
 *   RINGKV_TEST_REDIS  =1: run Debian's redis-server instead, to validate the
 *                      expected replies against real Redis; tests that cannot
 *                      pass on Redis by design call SKIP_ON_REDIS().
 *   RINGKV_TEST_KEEP_LOG =1: keep the server log even on success.
 *
 * Every test binary is a set of cmocka groups, one server per group.
 */
#ifndef RINGKV_TEST_HARNESS_H
#define RINGKV_TEST_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <cmocka.h>
#include <hiredis/hiredis.h>

/* ------------------------------------------------------------------ */
/* Server process                                                      */

struct server {
    pid_t pid;
    int port;
    bool redis;          /* this is Debian's redis-server */
    char log[256];       /* stdout+stderr of the server */
    char dir[256];       /* its --dir (ringkv): emptied and removed when it stops */
};

bool h_redis_mode(void);
int h_threads(void);
/* Raise RLIMIT_NOFILE (soft) to at least want, capped at the hard limit.
 * Returns the resulting soft limit. */
long h_raise_nofile(long want);

/* A loopback port nobody listens on now (for a server's second port). */
int h_free_port(void);
/* Start a server with extra arguments (NULL-terminated array, may be NULL).
 * Waits (bounded) until it answers PING. Returns 0 or -1 (already reported). */
int server_start(struct server *s, const char *const *extra);
/* SIGTERM, wait (bounded), SIGKILL after the timeout. Returns 0 when the
 * process exited with status 0, -1 otherwise (reported, and counted in
 * h_failures()). */
int server_stop(struct server *s);
bool server_alive(struct server *s);
/* VmRSS of the server process in KB, -1 when unknown. */
long server_rss_kb(const struct server *s);
/* Server-side failures seen by the harness (bad exit status, ...).
 * main() should return cmocka's result + h_failures(). */
int h_failures(void);

/* ------------------------------------------------------------------ */
/* Fixtures: one server per cmocka group, one hiredis connection.       */

struct fixture {
    struct server srv;
    redisContext *c;
    bool broken;         /* the server stopped answering: fail the rest fast */
};

/* Group setup: start a server (extra args may be NULL) and connect. */
int h_group_setup_args(void **state, const char *const *extra);
int h_group_setup(void **state);
int h_group_teardown(void **state);
/* Per-test setup: reconnect if needed, SELECT 0, FLUSHALL. */
int h_flushall(void **state);
/* Per-test setup: reconnect if needed only. */
int h_noop_setup(void **state);

#define FIX(state) ((struct fixture *)*(state))

#define SKIP_ON_REDIS() do { if (h_redis_mode()) { \
        print_message("[  SKIP    ] ringkv-specific, not checked against redis-server\n"); \
        skip(); } } while (0)

/* ------------------------------------------------------------------ */
/* hiredis helpers                                                      */

redisContext *h_connect_(const struct server *s, const char *file, int line);
#define h_connect(s) h_connect_((s), __FILE__, __LINE__)

/* Runs a command (hiredis format). Fails the test on a connection error. */
/* (no printf format attribute: hiredis adds %b for binary-safe arguments) */
redisReply *cmd_(const char *file, int line, redisContext *c, const char *fmt, ...);
#define cmd(c, ...) cmd_(__FILE__, __LINE__, (c), __VA_ARGS__)
redisReply *cmdv_(const char *file, int line, redisContext *c, int argc,
                  const char **argv, const size_t *lens);
#define cmdv(c, argc, argv, lens) cmdv_(__FILE__, __LINE__, (c), (argc), (argv), (lens))

/* Each expect_* consumes (frees) the reply. */
void expect_status_(const char *file, int line, redisReply *r, const char *s);
void expect_int_(const char *file, int line, redisReply *r, long long v);
void expect_bulk_(const char *file, int line, redisReply *r, const char *s, size_t len);
void expect_nil_(const char *file, int line, redisReply *r);
void expect_error_(const char *file, int line, redisReply *r, const char *s);
void expect_error_prefix_(const char *file, int line, redisReply *r, const char *prefix);
/* Array of bulks; NULL elements mean nil. n elements follow. */
void expect_bulks_(const char *file, int line, redisReply *r, int n, ...);
/* Array whose elements, sorted, equal the given strings (order-free). */
void expect_bulks_unordered_(const char *file, int line, redisReply *r, int n, ...);
/* Integer in [lo, hi] */
void expect_int_range_(const char *file, int line, redisReply *r, long long lo, long long hi);

#define expect_status(r, s)        expect_status_(__FILE__, __LINE__, (r), (s))
#define expect_ok(r)               expect_status_(__FILE__, __LINE__, (r), "OK")
#define expect_int(r, v)           expect_int_(__FILE__, __LINE__, (r), (v))
#define expect_int_range(r, lo, hi) expect_int_range_(__FILE__, __LINE__, (r), (lo), (hi))
#define expect_bulk(r, s)          expect_bulk_(__FILE__, __LINE__, (r), (s), strlen(s))
#define expect_bulk_len(r, s, n)   expect_bulk_(__FILE__, __LINE__, (r), (s), (n))
#define expect_nil(r)              expect_nil_(__FILE__, __LINE__, (r))
#define expect_error(r, s)         expect_error_(__FILE__, __LINE__, (r), (s))
#define expect_error_prefix(r, s)  expect_error_prefix_(__FILE__, __LINE__, (r), (s))
#define expect_bulks(r, n, ...)    expect_bulks_(__FILE__, __LINE__, (r), (n), ##__VA_ARGS__)
#define expect_empty_array(r)      expect_bulks_(__FILE__, __LINE__, (r), 0)
#define expect_bulks_unordered(r, n, ...) expect_bulks_unordered_(__FILE__, __LINE__, (r), (n), ##__VA_ARGS__)

/* Shorthands: run a command and check its reply. */
#define OK(c, ...)          expect_ok(cmd((c), __VA_ARGS__))
#define INT(c, v, ...)      expect_int(cmd((c), __VA_ARGS__), (v))
#define BULK(c, s, ...)     expect_bulk(cmd((c), __VA_ARGS__), (s))
#define NIL(c, ...)         expect_nil(cmd((c), __VA_ARGS__))
#define ERR(c, s, ...)      expect_error(cmd((c), __VA_ARGS__), (s))
#define STATUS(c, s, ...)   expect_status(cmd((c), __VA_ARGS__), (s))

/* A human-readable rendering of a reply (malloc'd). */
char *reply_repr(const redisReply *r);
void h_fail_(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));
#define h_fail(...) h_fail_(__FILE__, __LINE__, __VA_ARGS__)

/* INFO helpers: value of field "name" in an INFO text (malloc'd), or NULL. */
char *info_field(const char *info, const char *name);
/* Run INFO [section] and return the field as a long long (or -1). */
long long info_ll(redisContext *c, const char *section, const char *name);

/* ------------------------------------------------------------------ */
/* Raw sockets, exact bytes, RESP3                                     */

struct raw {
    int fd;
    char *buf;          /* received, not yet consumed */
    size_t len, pos, cap;
    bool eof;
};

struct raw *raw_connect_(const char *file, int line, const struct server *s);
#define raw_connect(s) raw_connect_(__FILE__, __LINE__, (s))
void raw_close(struct raw *r);
/* Close with SO_LINGER 0 (RST). */
void raw_abort(struct raw *r);
/* Send all bytes; fails the test on error or timeout. */
void raw_send_(const char *file, int line, struct raw *r, const void *buf, size_t len);
#define raw_send(r, buf, len) raw_send_(__FILE__, __LINE__, (r), (buf), (len))
#define raw_sends(r, str) raw_send_(__FILE__, __LINE__, (r), (str), strlen(str))
/* Send a command formatted like hiredis' redisCommand (RESP array). */
void raw_cmd_(const char *file, int line, struct raw *r, const char *fmt, ...);
#define raw_cmd(r, ...) raw_cmd_(__FILE__, __LINE__, (r), __VA_ARGS__)
/* Try to send without blocking more than timeout_ms; returns bytes sent. */
size_t raw_send_some(struct raw *r, const void *buf, size_t len, int timeout_ms);
/* Fill the buffer until at least n unconsumed bytes, EOF or timeout.
 * Returns the number of unconsumed bytes. */
size_t raw_fill(struct raw *r, size_t n, int timeout_ms);
/* Read until the peer closes or timeout. Returns true when closed. */
bool raw_read_to_close(struct raw *r, int timeout_ms);
/* Expect exactly these bytes next (consumed). */
void raw_expect_(const char *file, int line, struct raw *r, const void *exp, size_t len);
#define raw_expect(r, s) raw_expect_(__FILE__, __LINE__, (r), (s), strlen(s))
/* Expect exactly these bytes and then the connection closing (nothing more). */
void raw_expect_close_(const char *file, int line, struct raw *r, const void *exp, size_t len);
#define raw_expect_close(r, s) raw_expect_close_(__FILE__, __LINE__, (r), (s), strlen(s))
/* Escape bytes for messages (malloc'd). */
char *h_escape(const char *p, size_t n);

/* A parsed RESP2/RESP3 value. */
struct rv {
    char type;             /* + - : $ * % ~ > _ , # ( = ! | */
    long long integer;     /* ':' and '#' (1/0) */
    char *str;             /* + - $ , ( = ! text, NUL-terminated; NULL for null bulk */
    size_t len;
    size_t n;              /* elements (map: 2*pairs) */
    struct rv **elem;
    bool null;             /* $-1, *-1, _ */
    char *raw;             /* the exact bytes of this value */
    size_t rawlen;
};
/* Read one complete reply (bounded by timeout). Fails the test on timeout,
 * EOF or malformed RESP. */
struct rv *raw_reply_(const char *file, int line, struct raw *r, int timeout_ms);
#define raw_reply(r) raw_reply_(__FILE__, __LINE__, (r), 10000)
void rv_free(struct rv *v);
/* Map lookup by string key: the value or NULL. */
struct rv *rv_map_get(const struct rv *map, const char *key);
/* Command then exact reply bytes. */
#define RAW(r, exp, ...) do { raw_cmd((r), __VA_ARGS__); raw_expect((r), (exp)); } while (0)

/* ------------------------------------------------------------------ */
/* Misc                                                                 */

/* Redis Cluster hash slot of a key (CRC16/XMODEM, {hash tag}). */
unsigned h_key_slot(const char *key, size_t len);
/* Two keys "<prefix>a" and "<prefix><n>" whose slots differ in parity, so
 * they live on different shards with two threads (a and b: 32 bytes). */
void h_two_shard_keys(const char *prefix, char *a, char *b);
long long h_now_ms(void);
void h_sleep_ms(long ms);
/* A file's whole contents, NUL-terminated (malloc'd; *len its length
 * when len is not NULL); NULL if it cannot be opened. */
char *h_read_file(const char *path, size_t *len);
/* Whether the server's log (its stdout and stderr, s->log) holds text. */
bool h_log_has(const struct server *s, const char *text);

/* Connections, one on each thread of the server (on redis-server, one):
 * conns[t] is on thread t. open() connects and has the connection answer
 * a command, so the server has counted it; ctl reads INFO ringkv to see
 * whose count rose. The kernel spreads connections over the threads, so
 * opening a few more finds every one; close() closes those not kept.
 * Returns the number of threads (at most H_MAX_THREADS). */
#define H_MAX_THREADS 8
int h_every_thread(redisContext *ctl, const struct server *s, void **conns,
                   void *(*open)(const struct server *s), void (*close)(void *conn));

#endif
