/*
 * Reply writer: appends RESP2 or RESP3 replies to a byte buffer.
 *
 * Commands only ever talk to a struct reply; they never see sockets or know
 * whether their reply goes straight to a connection or travels back from
 * another shard. Types that differ between protocols (null, maps, sets,
 * doubles, booleans) are written in the connection's protocol here, so
 * command code writes each reply once.
 */
#ifndef RINGKV_REPLY_H
#define RINGKV_REPLY_H

#include "ringkv/common.h"

struct reply {
    struct rbuf *out;
    uint8_t resp;        /* 2 or 3 */
};

void reply_simple(struct reply *r, const char *s);                /* +s */
void reply_simple_len(struct reply *r, const char *s, size_t len);
void reply_ok(struct reply *r);                                   /* +OK */
/* "-" + s, s must carry its prefix ("ERR ..."); counted for INFO errorstats */
void reply_error(struct reply *r, const char *s);
void reply_errorf(struct reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_int(struct reply *r, long long v);                     /* :v */
void reply_bulk(struct reply *r, const char *p, size_t len);      /* $len p */
void reply_bulk_slice(struct reply *r, struct slice s);
void reply_bulk_cstr(struct reply *r, const char *s);
void reply_bulk_ll(struct reply *r, long long v);                 /* integer as bulk string */
void reply_null(struct reply *r);                                 /* $-1 / _ */
void reply_null_array(struct reply *r);                           /* *-1 / _ */
void reply_array(struct reply *r, size_t n);                      /* *n */
void reply_push(struct reply *r, size_t n);                       /* >n / *n: out-of-band data */
void reply_map(struct reply *r, size_t n);                        /* %n / *2n */
/* A header for elements already written from byte `at` of the output on
 * (their count known only once written): *n, or %n / *2n. */
void reply_array_at(struct reply *r, size_t at, size_t n);
void reply_map_at(struct reply *r, size_t at, size_t n);
void reply_set(struct reply *r, size_t n);                        /* ~n / *n */
void reply_double(struct reply *r, double d);                     /* ,d / bulk */
void reply_bool(struct reply *r, bool b);                         /* #t / :1 */
void reply_verbatim(struct reply *r, const char *p, size_t len, const char *ext); /* =len txt: / bulk */
void reply_raw(struct reply *r, const char *p, size_t len);       /* pre-encoded bytes */
void reply_help(struct reply *r, const char **lines, size_t n);   /* HELP subcommands */
void reply_wrong_arity(struct reply *r, const char *name);        /* ERR wrong number of arguments ... */
/* Every error reply's text (without '-') is handed here when set: the
 * command layer counts them for INFO errorstats. */
extern void (*reply_error_hook)(const char *s, size_t len);

/* Common errors, texts exactly as Redis's. */
#define ERR_SYNTAX      "ERR syntax error"
#define ERR_NOT_INT     "ERR value is not an integer or out of range"
#define ERR_NOT_FLOAT   "ERR value is not a valid float"
#define ERR_WRONGTYPE   "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_OVERFLOW    "ERR increment or decrement would overflow"
#define ERR_NOAUTH      "NOAUTH Authentication required."
#define ERR_NO_SUCH_KEY "ERR no such key"
#define ERR_DB_INDEX    "ERR DB index is out of range"
#define ERR_POSITIVE    "ERR value is out of range, must be positive"

#endif
